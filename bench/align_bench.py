"""Benchmark of the operator alignment (compare/align.py).

Two 100 000-element op-name sequences that differ in 1% of places (random
substitutions by an existing name, insertions and deletions) must align in
under 5 s. Two shapes are measured: names drawn at random from a 300-name
vocabulary, and a model-like sequence (one 400-op "layer" repeated 250 times),
which is the hard case for diff algorithms because every shifted copy of a
layer matches too.

Run: .venv/bin/python bench/align_bench.py [n] [edit_fraction]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from msprof_compare.compare.align import align, matched_count  # noqa: E402


def mutate(seq: list[str], frac: float, vocab: list[str], rng: np.random.Generator) -> list[str]:
    out = list(seq)
    n_edit = int(len(seq) * frac)
    positions = sorted(rng.choice(len(seq), n_edit, replace=False).tolist(), reverse=True)
    for p in positions:
        kind = rng.integers(3)
        if kind == 0:
            out[p] = vocab[rng.integers(len(vocab))]
        elif kind == 1:
            out.insert(p, vocab[rng.integers(len(vocab))])
        else:
            del out[p]
    return out


def run(name: str, a: list[str], b: list[str]) -> float:
    t0 = time.perf_counter()
    ia, ib = align(a, b)
    dt = time.perf_counter() - t0
    print(f"{name:<12} n={len(a):>7} m={len(b):>7} matched={matched_count(ia, ib):>7} time={dt:.2f} s")
    return dt


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    frac = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    rng = np.random.default_rng(0)
    vocab = [f"aten::op_{i}" for i in range(300)]
    random_a = [vocab[i] for i in rng.integers(0, len(vocab), n)]
    layer = [vocab[i] for i in rng.integers(0, 60, 400)]
    periodic_a = (layer * (n // len(layer) + 1))[:n]
    worst = 0.0
    for name, a in (("random", random_a), ("model-like", periodic_a)):
        worst = max(worst, run(name, a, mutate(a, frac, vocab, rng)))
    print(f"worst {worst:.2f} s (limit 5 s)")
    return 0 if worst < 5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
