"""Console entry points. They stay light: Ctrl-C while the CLI and its libraries are imported ends the
run with the usual ``error: interrupted`` line and status 130, not a traceback."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any


def _interrupted(_signum: int, _frame: Any) -> None:
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(130)  # nothing is written yet, and half-imported modules need no cleanup


def _run(name: str, **kwargs: Any) -> Any:
    """Import the CLI with the quiet Ctrl-C handler in place, then hand Ctrl-C back to it."""
    previous: Callable | int | None = None
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # an ignored Ctrl-C stays ignored
            previous = signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread: leave signals alone
        pass
    from . import cli

    if previous is not None:
        signal.signal(signal.SIGINT, previous)
    return getattr(cli, name)(**kwargs)


def analyze_main(prog: str = "msprof-analyze") -> None:
    """``msprof-analyze compare ...``"""
    _run("analyze_main", prog=prog)


def compare_main() -> None:
    """``msprof-compare ...``"""
    _run("compare_main")


def script_main() -> int:
    """``python performance_compare.py BASE COMPARISON ...``"""
    return _run("script_main")


if __name__ == "__main__":  # python -m msprof_compare.entry compare ...
    analyze_main("python -m msprof_compare.entry")
