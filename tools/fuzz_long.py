#!/usr/bin/env python3
"""Run the loader fuzz properties of tests/test_fuzz.py with a long budget.

Why: CI runs ~2000 reproducible examples; before a release, run many more with
random seeds to look for inputs that make a loader raise something other than
ProfileError/UsageError. Hypothesis prints the shrunk failing input.

    python tools/fuzz_long.py                    # 50000 examples per property
    python tools/fuzz_long.py --examples 500000  # a long night
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
    a = ap.parse_args(argv)
    env = dict(os.environ, MSPROF_FUZZ_EXAMPLES=str(a.examples))
    cmd = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "test_fuzz.py"), "-q", "-p", "no:cacheprovider",
           "--hypothesis-show-statistics"]
    if a.k:
        cmd += ["-k", a.k]
    return subprocess.call(cmd, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
