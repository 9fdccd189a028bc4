"""Helpers shared by the command-line tests."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from msprof_compare import cli


def run_entry(capsys: pytest.CaptureFixture, main: Callable[[list[str]], None],
              args: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of an entry point (``cli.analyze_main``, ``cli.script_main``) run in this
    process on ``args``."""
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return info.value.code, out, err


def run_inproc(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    """``msprof-analyze compare ARGS`` in this process (fast path for the many error cases)."""
    return run_entry(capsys, cli.analyze_main, ["compare", *args])


def finish(proc: subprocess.Popen, timeout: float = 300) -> subprocess.CompletedProcess:
    """Wait for a child started with ``subprocess.Popen`` (``timeout`` s at most, killed then, as
    ``subprocess.run`` does) and give what ``subprocess.run`` would have: a test starts its independent runs
    together, then finishes them in turn (the interpreter starts overlap on a second core)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def slow_writer_child(entry: str) -> str:
    """A child script that runs the entry point ``entry`` ("module:function") with a sheet writer that
    announces (in the file named by its first argument) when writing has started, then stalls for 60 s.
    The stall is many short sleeps: a signal that lands after the interpreter's last check for signals but
    before one long ``time.sleep`` enters its system call does not interrupt it and is handled only when it
    ends, so a test on a loaded machine once waited out the whole minute (and timed out)."""
    module, function = entry.split(":")
    return rf"""
import sys, time
from pathlib import Path
from msprof_compare.report import excel
marker = Path(sys.argv[1])
real = excel._write_sheet
def slow(*a, **k):
    marker.write_text("writing")
    for _ in range(600):
        time.sleep(0.1)
    return real(*a, **k)
excel._write_sheet = slow
from {module} import {function}
sys.argv = ["msprof-compare"] + sys.argv[2:]
{function}()
"""


def _default_signals() -> None:
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def signal_mid_write(script: str, marker: Path, args: list[str], env: dict, sig: int) -> tuple[int, str]:
    """Run a ``slow_writer_child`` script with ``args``, send ``sig`` once its writer has started, and return
    (exit status, stderr). Ctrl-C and hang-up are at their defaults in the child even when the test run ignores
    them (``cmd &`` ignores SIGINT, nohup SIGHUP), as the run only handles signals left at their defaults."""
    # the with block closes the pipes of a child killed here too (left open, they failed the next test)
    with subprocess.Popen([sys.executable, "-c", script, str(marker), *args], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals) as proc:
        try:
            deadline = time.monotonic() + 120
            while not marker.exists():
                assert proc.poll() is None, proc.communicate()[1][-2000:]
                assert time.monotonic() < deadline, "the writer never started"
                time.sleep(0.05)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    return proc.returncode, err


def unraisable(exc: BaseException) -> None:
    """Raise ``exc`` where Python cannot pass it on (a weakref callback, as importlib's module-lock one): it goes
    to ``sys.unraisablehook``, which prints "Exception ignored ..." with a traceback and lets the caller go on."""
    class Referent:
        pass

    def callback(_ref: object) -> None:
        raise exc

    referent = Referent()
    ref = weakref.ref(referent, callback)
    del referent  # the callback runs here (reference counting), its exception unraisable
    assert ref() is None
