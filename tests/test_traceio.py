"""traceio helpers: the shared GC pause of the decoders."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from msprof_compare.loaders.traceio import gc_paused


@pytest.fixture(autouse=True)
def _gc_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def _wait(event: threading.Event) -> None:
    assert event.wait(10), "a test thread did not get there"


def _threads(*targets) -> None:
    errors: list[BaseException] = []

    def guard(fn):
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
                errors.append(exc)
        return run

    ts = [threading.Thread(target=guard(t)) for t in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    if errors:
        raise errors[0]


def test_overlapping_pauses_end_with_the_last() -> None:
    """Thread A pauses, B pauses, A leaves while B still decodes: GC stays off for B, and is on again
    once B leaves (A used to re-enable it under B, since B had found it off)."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def a() -> None:
        with gc_paused():
            a_in.set()
            _wait(b_in)
        a_out.set()

    def b() -> None:
        _wait(a_in)
        with gc_paused():
            b_in.set()
            _wait(a_out)
            seen["b after a left"] = gc.isenabled()

    _threads(a, b)
    assert seen == {"b after a left": False}
    assert gc.isenabled()


def test_many_threads_inside_at_once() -> None:
    """N threads inside the pause together; all but one leave; the last one still decodes with GC off."""
    n = 6
    inside = threading.Barrier(n)
    others_out = threading.Barrier(n)  # the n-1 leavers and the last one
    seen: list[bool] = []

    def leaver() -> None:
        with gc_paused():
            inside.wait(10)
        others_out.wait(10)

    def last() -> None:
        with gc_paused():
            inside.wait(10)
            others_out.wait(10)
            seen.append(gc.isenabled())

    _threads(*[leaver] * (n - 1), last)
    assert seen == [False] and gc.isenabled()


def test_host_choice_is_kept() -> None:
    """GC disabled by the host before the decodes stays disabled, also when decodes overlap;
    ``gc.enable()`` during a decode stays enabled; an exception still ends the pause."""
    gc.disable()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert not gc.isenabled()
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
        gc.enable()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), gc_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()

