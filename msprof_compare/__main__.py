"""``python -m msprof_compare compare -d COMPARISON -bp BASE [options]``: the ``msprof-analyze`` command, for an
environment whose scripts directory is not on PATH."""

from .entry import analyze_main

analyze_main("python -m msprof_compare")
