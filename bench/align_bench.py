"""Benchmark of the operator alignment (compare/align.py).

Two op-name sequences, the second a mutated copy of the first (random
substitutions by an existing name, insertions and deletions in ``frac`` of the
places). Two shapes are measured: names drawn at random from a 300-name
vocabulary, and a model-like sequence (one 400-op "layer" repeated), which is
the hard case for diff algorithms because every shifted copy of a layer
matches too.

The default suite covers the near-identical case (100k ops, 1 % edits, must
stay under 5 s) and the very different sides of GPU-vs-NPU pairs (5 % / 100k,
50 % / 20k, 50 % / 100k), where Myers' O((n+m)*D) search hands over to the
bit-parallel LCS.

Run: .venv/bin/python bench/align_bench.py                 # the suite
     .venv/bin/python bench/align_bench.py N FRAC [PATH]    # one case; PATH in auto|myers|bitpar|sparse
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from msprof_compare.compare import align as align_mod
from msprof_compare.compare.align import align

SUITE = ((100_000, 0.01), (100_000, 0.05), (20_000, 0.50), (100_000, 0.50))


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
    matched = int(np.count_nonzero((ia >= 0) & (ib >= 0)))
    print(f"{name:<12} n={len(a):>7} m={len(b):>7} matched={matched:>7} time={dt:.2f} s", flush=True)
    return dt


def case(n: int, frac: float) -> float:
    rng = np.random.default_rng(0)
    vocab = [f"aten::op_{i}" for i in range(300)]
    random_a = [vocab[i] for i in rng.integers(0, len(vocab), n)]
    layer = [vocab[i] for i in rng.integers(0, 60, 400)]
    periodic_a = (layer * (n // len(layer) + 1))[:n]
    print(f"-- {n} ops, {frac:.0%} edits", flush=True)
    worst = 0.0
    for name, a in (("random", random_a), ("model-like", periodic_a)):
        worst = max(worst, run(name, a, mutate(a, frac, vocab, rng)))
    return worst


PATHS = ("auto", "myers", "bitpar", "sparse")
USAGE = "usage: align_bench.py [N [FRAC [PATH]]]   (the suite without arguments; PATH in " + "|".join(PATHS) + ")"


def main() -> int:
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    try:
        n = int(args[0]) if args else 0
        frac = float(args[1]) if len(args) > 1 else 0.01
    except ValueError:
        print(USAGE, file=sys.stderr)
        return 2
    if len(args) > 3 or (len(args) > 2 and args[2] not in PATHS) or (args and not (n > 0 and 0 <= frac <= 1)):
        print(USAGE, file=sys.stderr)
        return 2
    if len(args) > 2:
        align_mod.FORCE_PATH = None if args[2] == "auto" else args[2]
    if args:
        case(n, frac)
        return 0
    worst_near = 0.0
    for n, frac in SUITE:
        worst = case(n, frac)
        if frac <= 0.01:
            worst_near = max(worst_near, worst)
    print(f"worst near-identical (1 %) {worst_near:.2f} s (limit 5 s)")
    return 0 if worst_near < 5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
