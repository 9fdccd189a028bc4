#!/usr/bin/env python3
"""Run the fuzz properties of tests/test_fuzz.py and tests/test_fuzz_pipeline.py with a long budget.

Why: CI runs ~2000 reproducible examples; before a release, run many more with
random seeds to look for inputs that make a loader raise something other than
ProfileError/UsageError, or a whole run on a mutated real excerpt break its contract (a traceback, a
half-written output, a workbook openpyxl cannot open, a JSON report off the schema). Hypothesis prints
the shrunk failing input. The pipeline properties take ~0.5 s an example: give them their own -k and a
smaller --examples.

    python tools/fuzz_long.py                    # 50000 examples per property
    python tools/fuzz_long.py --examples 500000  # a long night
    python tools/fuzz_long.py --seed 1234        # repeat a run (the seed each run prints)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=50_000, help="examples per property (default 50000)")
    ap.add_argument("-k", default="", help="only the properties matching this pytest -k expression")
    ap.add_argument("--seed", type=int, default=None,
                    help="Hypothesis seed, printed so a run can be repeated (default: a fresh random one)")
    a = ap.parse_args(argv)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "big")
    print(f"fuzz_long: --seed {seed}", flush=True)
    env = dict(os.environ, MSPROF_FUZZ_EXAMPLES=str(a.examples))
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "test_fuzz.py"),
           str(ROOT / "tests" / "test_fuzz_pipeline.py"), "-q", "-p", "no:cacheprovider",
           "--hypothesis-show-statistics", f"--hypothesis-seed={seed}"]
    if a.k:
        cmd += ["-k", a.k]
    return subprocess.call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
