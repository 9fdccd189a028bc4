"""One process-wide pause of the cyclic garbage collector, shared by every thread (loaders and reporters)."""

from __future__ import annotations

import gc
import os
import threading


class _GcPause:
    """Reference-counted pause of the process-wide cyclic GC, shared by every thread.

    Overlapping decodes (``compare()`` in several threads) pause it together: the first to enter
    records whether GC was on and turns it off; the last to leave turns it back on only if it was on
    then. So a host that disabled GC before a decode started keeps it off, one that calls
    ``gc.enable()`` during a decode keeps it on, and one thread's decode never ends another's pause
    (each enter/exit is a lock and a counter: cheap next to a decode). Residual case: a
    ``gc.disable()`` made while a pause is running cannot be seen (GC is already off, and the call
    leaves no trace), so the last decode to finish re-enables GC under that host; hosts that manage
    the GC themselves should disable it before calling in, or re-disable it afterwards. A child forked
    while other threads pause ends their pause at once (``_end_in_child``).
    """

    __slots__ = ()
    _lock = threading.Lock()
    _depth = 0  # pausers inside, all threads together
    _restore = False  # GC was enabled when the first of them entered

    def __call__(self) -> _GcPause:
        return self

    def __enter__(self) -> None:
        cls = _GcPause
        with cls._lock:
            if cls._depth == 0:
                cls._restore = gc.isenabled()
                gc.disable()
            cls._depth += 1

    def __exit__(self, *_exc: object) -> None:
        cls = _GcPause
        with cls._lock:
            cls._depth = max(cls._depth - 1, 0)  # 0: a pause begun before a fork, ended in the child
            if cls._depth == 0 and cls._restore:
                gc.enable()


def _end_in_child() -> None:
    """After ``os.fork()``: the parent's pausing threads do not exist in the child, so they would never
    leave and GC would stay off for the child's whole life (a host forking worker processes while a
    compare runs in a thread). Their pause ends here, and the lock, which one of them may have held at
    the fork, is new."""
    cls = _GcPause
    cls._lock = threading.Lock()
    if cls._depth:
        cls._depth = 0
        if cls._restore:
            gc.enable()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_end_in_child)


#: ``with gc_paused(): ...`` runs with the cyclic GC off: decoding a trace or writing a workbook
#: allocates millions of objects, none of them cyclic, and each GC pass would walk them all.
gc_paused = _GcPause()
