"""Helpers shared by the tests of the one-pass time decode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile, traceio
from msprof_compare.model import Profile
from msprof_compare.options import Options, build_options


def load_both_ways(path: Path, opts: Options, monkeypatch: pytest.MonkeyPatch, take: Callable[[Profile], Any]) -> list:
    """``take`` of the profile, or the error, of a load with times kept as text, then of the float decode with
    its exact re-read (the guess patched to pick it)."""
    out = []
    for raw in (True, False):
        if not raw:
            monkeypatch.setattr(traceio, "_beyond_float_ns", lambda data: False)
        try:
            out.append(take(load_profile(str(path), opts)))
        except ProfileError as exc:
            out.append(str(exc))
    monkeypatch.undo()
    return out


def kernels_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """The kernels (ts, dur) and warnings, or the error, of both loads (``load_both_ways``)."""
    return load_both_ways(path, build_options(enable_profiling_compare=True)[0], monkeypatch,
                          lambda prof: (prof.kernels["ts"].tolist(), prof.kernels["dur"].tolist(), prof.warnings))
