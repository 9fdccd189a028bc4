"""Helpers shared by the tests of the one-pass time decode."""

from __future__ import annotations

from pathlib import Path

import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile, traceio
from msprof_compare.options import build_options


def kernels_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """The kernels (ts, dur) and warnings, or the error, of a load with times kept as text, then of the float
    decode with its exact re-read (the guess patched to pick it)."""
    opts = build_options(enable_profiling_compare=True)[0]
    out = []
    for raw in (True, False):
        if not raw:
            monkeypatch.setattr(traceio, "_beyond_float_ns", lambda data: False)
        try:
            prof = load_profile(str(path), opts)
            out.append((prof.kernels["ts"].tolist(), prof.kernels["dur"].tolist(), prof.warnings))
        except ProfileError as exc:
            out.append(str(exc))
    monkeypatch.undo()
    return out
