"""Console entry points. They stay light: Ctrl-C while the CLI and its libraries are imported ends the
run with the usual ``error: interrupted`` line and status 130, not a traceback.

Only ``os``, ``signal`` and ``sys`` are imported before the quiet handler is in place (``typing`` alone
took longer to import than the rest of this module): the window left is Python's own start and the
package's two small modules."""

from __future__ import annotations

import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any


def quit_interrupted(_signum: int, _frame: Any) -> None:
    """A Ctrl-C handler for stretches where nothing is written yet: the usual line, status 130, at once."""
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(130)  # nothing is written yet, and half-imported modules need no cleanup


def _interrupt_again(unraisable: Any) -> None:
    """``sys.unraisablehook`` for a run: a Ctrl-C that lands inside a callback Python cannot raise from (a weakref
    callback of importlib's module locks, during a lazy import) was printed as "Exception ignored ... Traceback ...
    KeyboardInterrupt" and then lost, the run going on to the end. It is sent again from another thread a few ms
    later, when the callback is over (sent from here, or marked arrived, its handler runs at once, inside this
    hook), so the run stops as on any Ctrl-C; any other unraisable exception goes to Python's own hook. The thread
    is started without waiting for it to run (``threading.Thread.start`` waits): on a loaded machine the signal
    sent again arrived while this hook still waited, and was lost in it in turn."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        import _thread

        _thread.start_new_thread(_send_interrupt, (0.005,))
        return
    sys.__unraisablehook__(unraisable)


def _send_interrupt(delay: float) -> None:
    """SIGINT to the process after ``delay`` seconds, from a thread of its own (``_interrupt_again``)."""
    import time

    time.sleep(delay)
    signal.raise_signal(signal.SIGINT)


def _run(name: str, **kwargs: Any) -> Any:
    """Import the CLI with the quiet Ctrl-C handler in place, then hand Ctrl-C back to it (its runs clean up
    a half-written report on ``KeyboardInterrupt``), and take it back once the CLI is done (the exit)."""
    previous = None
    try:
        current = signal.getsignal(signal.SIGINT)
        # performance_compare.py puts a quiet handler of its own in place before it imports the package
        if current is signal.default_int_handler or getattr(current, "msprof_quiet", False):
            signal.signal(signal.SIGINT, quit_interrupted)
            previous = signal.default_int_handler
        # an ignored Ctrl-C (a background job) stays ignored
    except ValueError:  # not the main thread: leave signals alone
        pass
    hook = sys.unraisablehook
    try:
        from . import cli

        sys.unraisablehook = _interrupt_again
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        return getattr(cli, name)(**kwargs)
    except KeyboardInterrupt:
        # between the hand-back and the CLI's own handling (its logging set-up, the script's argument parsing):
        # nothing is written there either
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    finally:
        sys.unraisablehook = hook
        if previous is not None:  # the run is over (a status chosen, its reports published or cleaned up):
            signal.signal(signal.SIGINT, quit_interrupted)  # Ctrl-C while Python shuts down is no traceback either


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
