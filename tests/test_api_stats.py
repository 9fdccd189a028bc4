"""ApiCompare: self time, rounding, grouping order, steps, and parity with the original's workbook."""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
from xlsxutil import read_xlsx

from msprof_compare.api import RunContext
from msprof_compare.compare import api_stats
from msprof_compare.compare.optree import build_tree
from msprof_compare.errors import StepError
from msprof_compare.model import Profile, frame
from msprof_compare.options import Options

L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def prof(ops, kind="NPU", path="p", cats=None) -> Profile:
    """ops: (name, ts_us, dur_us)."""
    p = Profile(path=path, kind=kind, source="ascend_text" if kind == "NPU" else "kineto")
    p.ops = frame("ops", {"name": [o[0] for o in ops], "cat": cats or ["cpu_op"] * len(ops),
                          "ts": [int(o[1] * 1000) for o in ops], "dur": [int(o[2] * 1000) for o in ops]})
    return p


def calls_of(p: Profile, step: int = -1) -> pd.DataFrame:
    return api_stats.api_calls(build_tree(p), step)


def test_self_time_excludes_direct_children_only():
    # UT: dur 50 with children 10 and 20 -> self 20; a grandchild does not count
    p = prof([("parent", 0, 50), ("c1", 1, 10), ("g", 2, 3), ("c2", 20, 20)])
    calls = calls_of(p)
    assert calls["name"].tolist() == ["parent", "c1", "g", "c2"]
    assert (calls["self"] // 1000).tolist() == [20, 7, 3, 20]


def test_rounding_and_ratios():
    # UT: base two calls (5000, 7000 us) vs comparison one call (6000 us) -> avg 6.0 both sides
    b = api_stats.aggregate(calls_of(prof([("op", 0, 5000), ("op", 10000, 7000)])))
    c = api_stats.aggregate(calls_of(prof([("op", 0, 6000)])))
    rows = api_stats.api_rows(b, c)
    assert rows == [[1, "op", 12.0, 12.0, 6.0, 2, 6.0, 6.0, 6.0, 1, 0.5, 0.5, 1.0, 0.5]]
    # example verified by run: [3,'cudaLaunchKernel',0.01,0.01,0,3,0.02,0.02,0.01,4,2,2,'INF',1.3333]
    b = api_stats.aggregate(calls_of(prof([("cudaLaunchKernel", i * 100, 3.4) for i in range(3)])))
    c = api_stats.aggregate(calls_of(prof([("cudaLaunchKernel", i * 100, 5) for i in range(4)])))
    assert api_stats.api_rows(b, c)[0][1:] == ["cudaLaunchKernel", 0.01, 0.01, 0.0, 3, 0.02, 0.02, 0.01, 4,
                                               2.0, 2.0, math.inf, 1.3333]


def test_grouping_order_and_absent_sides():
    b = api_stats.aggregate(calls_of(prof([("op1", 0, 1), ("op1", 2, 1), ("op2", 4, 1)])))
    c = api_stats.aggregate(calls_of(prof([("op1", 0, 1), ("op2", 2, 1), ("op3", 4, 1000)])))
    rows = api_stats.api_rows(b, c)
    assert [r[1] for r in rows] == ["op1", "op2", "op3"]
    assert rows[2][2:6] == [0.0, 0.0, 0.0, 0] and rows[2][-4:] == [math.inf] * 4


def test_profiler_steps_are_not_apis_and_step_is_bfs():
    ops = [("ProfilerStep#1", 0, 100), ("a", 1, 50), ("a_child", 2, 10), ("b", 60, 10),
           ("ProfilerStep#2", 200, 100), ("x", 201, 50), ("x_child", 202, 10), ("y", 260, 10)]
    p = prof(ops)
    assert calls_of(p)["name"].tolist() == ["a", "a_child", "b", "x", "x_child", "y"]
    # breadth-first: top-layer ops of step 2 first, then their children
    assert calls_of(p, 2)["name"].tolist() == ["x", "y", "x_child"]
    ctx = RunContext(p, p, Options(enable_api_compare=True, base_step=1, comparison_step=2))
    f = api_stats.build(ctx)[0].frame()
    assert f["api name"].tolist() == ["a", "b", "a_child", "x", "y", "x_child"]


def test_step_without_ops_raises():
    p = prof([("ProfilerStep#1", 0, 100)])
    with pytest.raises(StepError, match="There is no operator event data for step 1"):
        api_stats.build(RunContext(p, p, Options(enable_api_compare=True, base_step=1, comparison_step=1)))


def test_gpu_runtime_calls_count_but_driver_calls_do_not():
    p = prof([("aten::mm", 0, 10), ("cudaLaunchKernel", 1, 4), ("cuLaunchKernel", 2, 1)], kind="GPU",
             cats=["cpu_op", "cuda_runtime", "cuda_driver"])
    calls = calls_of(p)
    assert calls["name"].tolist() == ["aten::mm", "cudaLaunchKernel"]
    assert (calls["self"] // 1000).tolist() == [6, 4]


def test_empty_side_no_sheet(caplog):
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert api_stats.build(RunContext(prof([("a", 0, 1)]), prof([], path="/e"), Options())) == []
    assert "Can't find any torch op in the file: /e" in caplog.text


def test_api_compare_matches_reference_pair1(samples, reference_outputs):
    from msprof_compare.api import compare

    res = compare(str(samples / L1), str(samples / L2), enable_api_compare=True)
    ours = res.sheet("ApiCompare")
    ref = read_xlsx(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                        sheet_name="ApiCompare", header=2)
    assert list(ours.columns) == list(ref.columns)
    assert len(ours) == len(ref) == 133
    assert ours["api name"].tolist() == ref["api name"].tolist()
    for col in ref.columns[2:]:  # every figure equals the original's cell exactly (0.01 ms rounding included)
        assert np.array_equal(ours[col].astype(float), ref[col].astype(float), equal_nan=True), col


def test_step_zero_is_a_step():
    """ProfilerStep#0 is a step like any other: its calls in breadth-first order, and a step 0 without ops
    is refused (not read as "no step")."""
    ops = [("ProfilerStep#0", 0, 100), ("a", 1, 50), ("a_child", 2, 10), ("b", 60, 10),
           ("ProfilerStep#1", 200, 100), ("x", 201, 50)]
    p = prof(ops)
    assert calls_of(p, 0)["name"].tolist() == ["a", "b", "a_child"]
    empty = prof([("ProfilerStep#0", 0, 100), ("ProfilerStep#1", 200, 100), ("x", 201, 50)])
    with pytest.raises(StepError, match="There is no operator event data for step 0"):
        api_stats.build(RunContext(empty, empty, Options(enable_api_compare=True, base_step=0, comparison_step=0)))
