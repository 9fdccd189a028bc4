"""Every sheet column holds one kind of number: durations, sizes and memory as floats, counts as ints.

An absent side used to be written as int 0 in several comparators (CommunicationCompare, MemoryCompare*,
ModuleCompare's TOTAL rows, OperatorCompare*, KernelTypeCompare), so a column mixed 0 with floats, or was
all int64 where one side had nothing (0 in the JSON report against 0.0 for the other side). The pairs below
are the excerpts' one-sided cases: a GPU trace without communication against an NPU export with it, a
MindSpore layout without torch operators, DB against text.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from msprof_compare.api import compare

DATA = Path(__file__).resolve().parent / "data"
GPU = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU = DATA / "npu" / "rank0_ascend_pt"
MS = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
PAIRS = [(GPU, NPU), (NPU, GPU), (GPU, MS), (MS, GPU), (NPU, MS), (DB, NPU), (MS, DB),
         (DATA / "kineto" / "legacy_resnet50_excerpt.pt.trace.json", GPU)]
MEASURES = ("Duration", "Time(", "Memory", "Size", "Bandwidth")


def _kinds(values: list) -> set[str]:
    return {type(v).__name__ for v in values
            if v is not None and v is not pd.NA and not (isinstance(v, float) and math.isnan(v))
            and not isinstance(v, str)}


@pytest.mark.parametrize(("base", "comparison"), PAIRS, ids=lambda p: p.name[:12])
def test_no_column_mixes_int_and_float(base, comparison):
    result = compare(str(base), str(comparison))
    for sheet in result.sheets:
        df = sheet.frame()
        for col in df.columns:
            kinds = _kinds(df[col].tolist())
            assert kinds <= {"int"} or kinds <= {"float"}, (sheet.name, col, kinds)
            if any(m in str(col) for m in MEASURES) and "Number" not in str(col) and "Calls" not in str(col):
                assert kinds <= {"float"}, (sheet.name, col, kinds)


def test_an_all_blank_number_column_without_a_twin_is_float():
    """The NPU text excerpt against the MindSpore layout: both sides' E2E time is the same, so every Summary row's
    Share of E2E Diff is blank (no share of a zero change). That column has no same-named column to take its type
    from; its style (a ratio) makes it float64 of NaN, not text, so shares read as numbers whatever the pair."""
    frame = compare(str(NPU), str(MS)).sheet("Summary")
    e2e = frame.set_index("Step")
    assert e2e.loc["Base E2E", "Base(ms)"] == e2e.loc["Comparison E2E", "Comparison(ms)"]
    assert frame["Share of E2E Diff"].isna().all() and frame["Share of E2E Diff"].dtype == "float64"
