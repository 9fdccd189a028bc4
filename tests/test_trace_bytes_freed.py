"""The NPU text loader lets go of trace_view.json's bytes once its events are selected: the args the tables read are
decoded then, so no ``msgspec.Raw`` view into the bytes outlives the selection, and no frame of the load holds them
while the tables are built (a 1 GB trace: 1.1 GB freed before the tables instead of at the load's end).

Inputs: the real torch_npu excerpt of tests/data/npu (a directory and its trace_view.json given as a file) and a
pair of NPU samples' traces (figures equal to those of a load whose bytes the caller keeps)."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd
import pytest

from msprof_compare.loaders import ascend_text, detect, load_profile, traceio
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data"
NPU_DIR = DATA / "npu" / "rank0_ascend_pt"
NPU_TRACE = NPU_DIR / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
_ALL = build_options(**{f"enable_{n}_compare": True for n in (
    "profiling", "operator", "memory", "communication", "api", "kernel")})[0]


def _holds(value: object, size: int) -> bool:
    """Whether ``value`` is, or directly holds, the trace's bytes or a Raw view (``size``: the bytes' length)."""
    if isinstance(value, bytes | bytearray):
        return len(value) == size
    if isinstance(value, msgspec.Raw):
        return True
    if isinstance(value, list | tuple):
        return any(_holds(v, size) for v in value[:1])
    if isinstance(value, dict):
        return any(_holds(v, size) for v in value.values())
    if isinstance(value, np.ndarray) and value.dtype == object and value.size:
        return isinstance(value.flat[0], msgspec.Raw)
    return False


@pytest.mark.parametrize("given", [NPU_DIR, NPU_TRACE], ids=["directory", "file"])
def test_no_frame_holds_the_bytes_while_the_tables_are_built(given, monkeypatch):
    size = NPU_TRACE.stat().st_size
    seen: list[list[str]] = []
    flows = ascend_text._flows

    def probe(c):  # the flows table comes after the args decode: every frame above it is looked at
        frame, holders = sys._getframe(1), []
        while frame is not None:
            holders += [f"{frame.f_code.co_name}.{k}" for k, v in frame.f_locals.items() if _holds(v, size)]
            frame = frame.f_back
        seen.append(holders)
        return flows(c)

    monkeypatch.setattr(ascend_text, "_flows", probe)
    prof = load_profile(str(given), _ALL)
    assert seen == [[]]
    assert len(prof.ops) and len(prof.kernels) and len(prof.comm)  # the tables that read args were built


def test_figures_equal_those_of_a_load_whose_bytes_the_caller_keeps():
    """The args decoded before the tables give the same tables as a caller keeping the bytes to the end."""
    data = traceio.read_bytes(str(NPU_TRACE), False)
    kept = ascend_text.load(detect(str(NPU_DIR), False), _ALL, data=data)
    handed = [traceio.read_bytes(str(NPU_TRACE), False)]
    freed = ascend_text.load(detect(str(NPU_DIR), False), _ALL, data=handed)
    assert handed == []
    for name, frame in vars(kept).items():
        if isinstance(frame, pd.DataFrame):
            pd.testing.assert_frame_equal(frame, getattr(freed, name), obj=name)
    assert kept.warnings == freed.warnings
    assert (freed.rank_span, freed.extra) == (kept.rank_span, kept.extra)
