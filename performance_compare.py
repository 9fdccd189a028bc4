#!/usr/bin/env python3
"""Script face of msprof-compare: ``python performance_compare.py BASE COMPARISON [options]``.

Same options as ``msprof-analyze compare`` (base profile first, comparison
second, as in the original script). Needs the package installed
(``pip install .``) or this file run from the repository root.
"""

import sys

from msprof_compare.entry import script_main  # light: Ctrl-C while the rest loads is handled

if __name__ == "__main__":
    sys.exit(script_main())
