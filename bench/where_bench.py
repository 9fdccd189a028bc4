#!/usr/bin/env python3
"""Where does a small pair's compare spend its CPU time? A sampling profile of warm compares.

    python bench/where_bench.py BASE COMP [--rounds N] [--all] [--top K] [--interval-us U] [--json F]

After a warm-up, ``--rounds`` compares run in this process (profiling only, or ``--all`` comparisons, as
``compare_bench.py`` runs them) while a CPU-time interval timer (``SIGPROF``) samples the stack every
``--interval-us`` microseconds of this process's CPU time. Each sample is charged to every function of
``msprof_compare`` on the stack (inclusive share) and to the innermost line of ``msprof_compare`` (self share,
numpy / pandas / msgspec calls included). Shares are of all samples; ms per compare is the share of the median
CPU seconds of a compare.

Why not cProfile: it charges a fixed cost to every Python call, so code that makes many small pandas calls reads
up to three times its plain cost (NPU pair 1's comparators: ~30 ms plain, ~100 ms under cProfile) and the
rankings of its pieces move with how many calls each makes, not with its time. A sampler adds the same small
cost everywhere.

How to read a line's self share: a signal is handled between two bytecodes, so CPU time inside one long C call
is charged to the next line Python runs after it: the time of ``del events`` (freeing a decoded trace's
events) reads as the first line of the function called next, and a ``np.fromiter(map(d.__getitem__, ...))``
charges its whole C loop to ``d.__missing__``, the only Python code the loop runs. Functions' inclusive shares
do not move this way (the line charged is inside the same caller). Unix only (``setitimer``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: The part of a code object's file name that marks the project's code, and what is kept of its path after it.
PACKAGE = os.sep + "msprof_compare" + os.sep


def _where(code_file: str) -> str | None:
    """A file of the package as its path inside it (``loaders/ascend_text.py``); None for any other file."""
    at = code_file.rfind(PACKAGE)
    return code_file[at + len(PACKAGE):].replace(os.sep, "/") if at >= 0 else None


def sample(base: str, comp: str, rounds: int, everything: bool, interval_us: int = 300) -> dict:
    """Run ``rounds`` warm compares under the sampler; the shares of functions and lines, and the CPU seconds."""
    import logging

    from msprof_compare.api import compare

    if not hasattr(signal, "setitimer"):
        raise SystemExit("where_bench: this platform has no setitimer (SIGPROF): run it on Linux or macOS")
    logging.getLogger("msprof-analyze").setLevel(logging.ERROR)
    flags = {} if everything else {"enable_profiling_compare": True}
    for _ in range(2):  # imports, caches and the page cache warm, as compare_bench's warm-up
        compare(base, comp, **flags)
    functions: Counter[tuple[str, str]] = Counter()
    lines: Counter[tuple[str, int, str]] = Counter()
    taken = [0]

    def on_sample(_sig: int, frame) -> None:  # noqa: ANN001 - a frame object
        taken[0] += 1
        seen: set[tuple[str, str]] = set()
        innermost = True
        while frame is not None:
            code = frame.f_code
            where = _where(code.co_filename)
            if where is not None:
                if innermost:
                    lines[(where, frame.f_lineno, code.co_name)] += 1
                    innermost = False
                key = (where, code.co_name)
                if key not in seen:
                    seen.add(key)
                    functions[key] += 1
            frame = frame.f_back

    cpu: list[float] = []
    previous = signal.signal(signal.SIGPROF, on_sample)
    try:
        signal.setitimer(signal.ITIMER_PROF, interval_us / 1e6, interval_us / 1e6)
        for _ in range(rounds):
            t = time.process_time()
            compare(base, comp, **flags)
            cpu.append(time.process_time() - t)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, previous)
    n = max(taken[0], 1)
    per = statistics.median(cpu) if cpu else 0.0
    return {
        "rounds": rounds, "samples": taken[0], "interval_us": interval_us, "cpu_per_compare_s": per,
        "functions": [{"file": f, "function": fn, "share": c / n, "ms": 1000 * per * c / n}
                      for (f, fn), c in functions.most_common()],
        "lines": [{"file": f, "line": ln, "function": fn, "share": c / n, "ms": 1000 * per * c / n}
                  for (f, ln, fn), c in lines.most_common()],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("comparison")
    ap.add_argument("--rounds", type=int, default=100, help="compares sampled (default 100)")
    ap.add_argument("--all", action="store_true", help="every comparison (the default compare), not profiling only")
    ap.add_argument("--top", type=int, default=40, help="functions and lines listed (default 40)")
    ap.add_argument("--interval-us", type=int, default=300, help="CPU microseconds between samples (default 300)")
    ap.add_argument("--json", help="also write the whole result to this file")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.interval_us < 50:
        ap.error("--rounds must be at least 1 and --interval-us at least 50")
    got = sample(args.base, args.comparison, args.rounds, args.all, args.interval_us)
    print(f"mode: {'all comparisons' if args.all else 'profiling compare only'}; load average "
          f"{os.getloadavg()[0]:.2f}; {got['rounds']} compares, median {got['cpu_per_compare_s'] * 1000:.1f} ms CPU "
          f"each; {got['samples']:,} samples every {got['interval_us']} us of CPU")
    print("inclusive (every msprof_compare function on the stack): share, ms per compare")
    for r in got["functions"][:args.top]:
        print(f"  {100 * r['share']:5.1f} %  {r['ms']:7.2f} ms  {r['file']} {r['function']}")
    print("self (innermost msprof_compare line, the calls it makes included): share, ms per compare")
    for r in got["lines"][:args.top]:
        print(f"  {100 * r['share']:5.1f} %  {r['ms']:7.2f} ms  {r['file']}:{r['line']} {r['function']}")
    if args.json:
        Path(args.json).write_text(json.dumps(got, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
