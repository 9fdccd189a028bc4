"""OverallMetrics row rules on hand-made breakdowns (reference-1 §9.3-§9.4): sheet omission and the
group / overlap blocks where only one side has them."""

from __future__ import annotations

import logging
import math

import pandas as pd
import pytest

from msprof_compare.api import RunContext
from msprof_compare.compare import overall
from msprof_compare.compare.breakdown import Breakdown
from msprof_compare.model import Profile
from msprof_compare.options import Options


def _npu(e2e_ns: int = 10_000_000) -> Breakdown:
    bd = Breakdown("NPU")
    bd.e2e_ns, bd.computing_ns = e2e_ns, 4_000_000
    return bd


def test_sheet_left_out_when_either_e2e_is_zero(caplog):
    """reference-1 §9: no OverallMetrics when either side's E2E is 0; the console summary is still made, and
    the log names the side(s) without E2E time (the original says nothing)."""
    sides = (Profile(path="b", kind="NPU", source="ascend_text"), Profile(path="c", kind="NPU", source="ascend_text"))
    for (b, c), none in (((_npu(0), _npu()), "b"), ((_npu(), _npu(0)), "c"), ((_npu(0), _npu(0)), "b and c")):
        ctx = RunContext(*sides, Options(enable_profiling_compare=True))
        ctx.cache["breakdowns"] = (b, c)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            assert overall.build(ctx) == [] and ctx.summary is not None
        assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
            (logging.WARNING, f"No E2E time in {none}: OverallMetrics and the Summary sheet are left out")]
    ctx = RunContext(*sides, Options())
    ctx.cache["breakdowns"] = (_npu(), _npu())
    caplog.clear()
    assert [s.name for s in overall.build(ctx)] == ["OverallMetrics"] and not caplog.records


def test_overlap_block_of_the_comparison_only():
    """reference-1 §9.4 item 27: pairs of the comparison alone still give the block (base side 0)."""
    b, c = _npu(), _npu()
    c.groups = {"Group 1 Communication": {"wait": 0, "transmit": 100_000},
                "Group 2 Communication": {"wait": 0, "transmit": 200_000}}
    c.group_pairs = {("Group 1 Communication", "Group 2 Communication"): 50_000}
    rows, _ = overall.overall_rows(b, c)
    by_label = {r[0]: r for r in rows}
    total = by_label["\tUncovered Communication Overlapped"]
    assert total[1:] == [0.0, 0.0, "/", 0.05, 0.005, "/", 0.05, math.inf]
    assert by_label["\t\tGroup 1 Communication & Group 2 Communication"][4] == 0.05


def test_a_group_paired_by_pg_name_is_not_paired_again_by_key():
    """reference-1 §9.4 item 26: base "Group 1" (tp) pairs with comparison "Group 2" (tp) by pg name; base
    "Group 2" (no pg name) then finds no comparison group left under its key and shows the base side only."""
    b, c = _npu(), _npu()
    b.groups = {"Group 1 Communication": {"wait": 0, "transmit": 100_000},
                "Group 2 Communication": {"wait": 0, "transmit": 300_000}}
    b.pg_names = {"Group 1 Communication": "tp"}
    c.groups = {"Group 2 Communication": {"wait": 0, "transmit": 120_000}}
    c.pg_names = {"Group 2 Communication": "tp"}
    rows, _ = overall.overall_rows(b, c)
    by_label = {r[0]: r for r in rows}
    assert by_label["\ttp: Communication"][1] == 0.1 and by_label["\ttp: Communication"][4] == 0.12
    assert by_label["\tGroup 2 Communication"][1:7] == [0.3, 0.03, "/", 0.0, 0.0, "/"]


@pytest.mark.parametrize("rows", [
    [["Computing Time", 8.87, 0.06, 185, 8.86, 0.07, 185, -0.01, 0.9994],
     ["\tOther", 0.5, 0.01, "/", 0.0, 0.0, "/", -0.5, 0.0],
     ["\tMC2", 0.0, 0.0, "/", 1.5, 0.5, 3, 1.5, math.inf]],
    [["E2E Time", 1, 1.0, "/", 2, 1.0, "/", 1.0, 2.0]],  # an int duration beside floats
    [["Free Time", math.nan, 0.1, 4, 0.2, None, 5, 0.0, 1.0]],
    [],
])
def test_overall_frame_is_the_row_constructors_frame(rows: list) -> None:
    """The OverallMetrics data built by columns is ``pd.DataFrame(rows, columns=...)``: dtypes, values and the
    cells' own types (counts beside "/" stay Python ints in an object column)."""
    labels = [f"c{i}" for i in range(len(overall.COLUMNS))]
    want = pd.DataFrame(rows, columns=labels)
    got = overall.overall_frame(rows)
    assert list(got.dtypes) == list(want.dtypes)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for c in labels:
        assert [type(v) for v in got[c].tolist()] == [type(v) for v in want[c].tolist()]
