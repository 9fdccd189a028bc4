"""Review findings of the memory line (report/summary_console.py ``memory_line``), on the real rows of the
bundled pair's MemoryCompareStatistic (sample_data/bert-small_h100 vs _mi300, memory-only run).

The sheet rounds each ``Diff Memory(MB)`` to 2 decimals while its Allocated Memory(MB) columns keep every digit,
so "no operator changed" (all diffs 0.00) can meet totals that differ below or above what 2 decimals show."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare.api import compare
from msprof_compare.compare import memory_summary
from msprof_compare.compare.table import Sheet
from msprof_compare.report.summary_console import memory_line, render_memory_contributors

REPO = Path(__file__).resolve().parents[1]
H100, MI300 = REPO / "sample_data" / "bert-small_h100.json.gz", REPO / "sample_data" / "bert-small_mi300.json.gz"


@pytest.fixture(scope="module")
def sheet() -> Sheet:
    res = compare(str(H100), str(MI300), enable_memory_compare=True)
    return next(s for s in res.sheets if s.name == "MemoryCompareStatistic")


def rows(sheet: Sheet, keep) -> Sheet:
    d = sheet.data[keep(sheet.data)].reset_index(drop=True)
    return Sheet(sheet.name, sheet.columns, d, sheet.base_span, sheet.comparison_span)


def test_a_change_under_the_sheets_rounding_reads_as_none(sheet):
    """Without aten::linear the sheet's one other change is aten::scaled_dot_product_attention, 0.568359 ->
    0.572266 MB, Diff Memory 0.00: the totals 5.958984 / 5.962891 MB both read 5.96 MB. The line said
    "5.96 MB -> 5.96 MB (+0.00 MB, +0.07%)" right after "No operator's allocated memory changed"."""
    s = rows(sheet, lambda d: d.iloc[:, 1] != "aten::linear")
    sdpa = s.data[s.data.iloc[:, 1] == "aten::scaled_dot_product_attention"].iloc[0]
    assert (sdpa.iloc[3], sdpa.iloc[6], sdpa.iloc[8]) == pytest.approx((0.568359, 0.572266, 0.0), abs=1e-6)
    t = memory_summary.totals(s, (True, True), (0.0, 0.0))
    # the exact totals stay in the frame (JSON summary.memory): 1 allocation of 4 KB more
    assert (t["changed"][0], t["diff_mb"][0]) == (0, pytest.approx(4096 / 2**20))
    assert memory_line(t) == ("No operator's allocated memory changed (17 operators); memory allocated inside "
                              "operators (a sum of allocations, not memory held at once) 5.96 MB on both sides.")


def test_small_changes_that_add_up_are_not_denied(sheet):
    """Five real rows each 0.004 MB larger (each Diff Memory 0.00, as the sheet rounds it): no operator
    changed by 0.01 MB, but together they add 0.02 MB, which the line shows without contradicting itself."""
    s = rows(sheet, lambda d: d.index < 5)
    base = s.data.iloc[:, 3].to_numpy(dtype=float)
    s.data.iloc[:, 6] = base + 0.004
    s.data.iloc[:, 8] = np.round(np.full(5, 0.004), 2)
    b, c = float(base.sum()), float(base.sum()) + 0.02
    t = memory_summary.totals(s, (True, True), (0.0, 0.0))
    assert t["changed"][0] == 0
    assert memory_line(t) == (f"No operator's allocated memory changed by 0.01 MB or more (5 operators); memory "
                              f"allocated inside operators (a sum of allocations, not memory held at once) "
                              f"{b:.2f} MB -> {c:.2f} MB (+0.02 MB).")


def test_a_fall_that_rounds_to_zero_keeps_its_sign(sheet):
    """Five real rows, the first edited so that the totals are 10.006 MB (base) and 10.003 MB (comparison), each
    row's Diff Memory 0.00: the line showed "10.01 MB -> 10.00 MB (+0.00 MB, -0.03%)", a growth sign on a fall.
    The change stays the exact one rounded, as every Diff cell is (-0.003 MB: 0.00), with its own sign."""
    s = rows(sheet, lambda d: d.index < 5)
    base = s.data.iloc[:, 3].to_numpy(dtype=float, copy=True)
    base[0] += 10.006 - base.sum()
    comp = base.copy()
    comp[0] -= 0.003
    s.data.iloc[:, 3], s.data.iloc[:, 6], s.data.iloc[:, 8] = base, comp, np.zeros(5)
    t = memory_summary.totals(s, (True, True), (0.0, 0.0))
    assert (t["changed"][0], t["diff_mb"][0]) == (0, pytest.approx(-0.003))
    assert memory_line(t) == ("No operator's allocated memory changed by 0.01 MB or more (5 operators); memory "
                              "allocated inside operators (a sum of allocations, not memory held at once) "
                              "10.01 MB -> 10.00 MB (-0.00 MB).")
    # a growth keeps its "+"
    t2 = memory_summary.totals(s, (True, True), (0.0, 0.0))
    t2.loc[0, ["base_mb", "comparison_mb"]] = [10.003, 10.006]
    assert "10.00 MB -> 10.01 MB (+0.00 MB)" in memory_line(t2)


def test_peaks_that_mem_usage_shows_alike_give_their_change_in_mb(sheet):
    """Peaks of 2.0612 and 2.0641 GB: OverallMetrics' Mem Usage shows 2.06G twice (``{:.2f}G``). The line said
    "2.06 GB on both sides", which hid the change (session 73: +4.13 MB between two text exports' ranks), and
    before that "2.06 GB -> 2.06 GB (+0.00 GB, +0.14%)"; it gives the change in MB: 0.0029 GB x 1024 = 2.9696 MB,
    0.0029 / 2.0612 = +0.1407 %."""
    t = memory_summary.totals(sheet, (True, True), (2.0612, 2.0641))
    assert [f"{g:.2f}G" for g in (2.0612, 2.0641)] == ["2.06G", "2.06G"]
    assert memory_line(t).startswith("Peak reserved memory (Mem Usage) 2.06 GB -> 2.06 GB (+2.97 MB, +0.14%).\n")


def test_peaks_read_alike_a_hundredth_of_a_gb_apart_give_their_change_in_mb(sheet):
    """Peaks of 2.0551 and 2.0649 GB both read 2.06 GB, 0.0098 GB apart: a change that rounds to 0.01 GB, not to
    0.00, so the MB rule passed it by and the line said "2.06 GB on both sides" where one of 2.97 MB was given.
    0.0098 GB x 1024 = 10.0352 MB; 0.0098 / 2.0551 = +0.4769 %, 0.0098 / 2.0649 = -0.4746 % swapped."""
    assert [f"{g:.2f}G" for g in (2.0551, 2.0649)] == ["2.06G", "2.06G"]
    for peaks, said in (((2.0551, 2.0649), "2.06 GB -> 2.06 GB (+10.04 MB, +0.48%)"),
                        ((2.0649, 2.0551), "2.06 GB -> 2.06 GB (-10.04 MB, -0.47%)")):
        t = memory_summary.totals(sheet, (True, True), peaks)
        assert memory_line(t).startswith(f"Peak reserved memory (Mem Usage) {said}.\n")


def test_a_side_not_recorded_has_no_mb_figure(samples):
    """The NPU fixture (no operator_memory.csv) against L1: the sheet reads the fixture's operators at 0 MB, which
    the console calls "not recorded". JSON and the API gave base_mb 0.0 beside comparison_mb 1426.02, so that
    comparison_mb - base_mb read as 1426 MB of growth; base_mb is null now, as an unrecorded peak is."""
    from test_json_report import SCHEMA, validate

    from msprof_compare.report import json_report

    fixture = REPO / "tests" / "data" / "npu" / "rank0_ascend_pt"
    l1 = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    res = compare(str(fixture), str(l1), enable_memory_compare=True)
    assert float(res.sheet("MemoryCompareStatistic")["Base Allocated Memory(MB)"].abs().sum()) == 0.0
    doc = json_report.to_document(res)
    assert validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8"))) == []
    t = doc["summary"]["memory"]
    assert t == res.memory_totals
    assert (t["base_recorded"], t["base_mb"], t["diff_mb"]) == (False, None, None)
    assert t["comparison_recorded"] and t["comparison_mb"] == pytest.approx(1426.019043, abs=1e-6)
    assert ("base not recorded (its 0 MB in MemoryCompareStatistic is no reading), comparison 1426.02 MB"
            in memory_line(res.frames["memory"]))


def test_wide_names_are_cut_by_terminal_columns(sheet):
    """Names are cut to 70 terminal columns, not 70 characters: an 80-character CJK name (each two columns)
    took 137 columns ("深" x 67 + "..."); accented letters written with combining marks were cut at half length."""
    from wcwidth import wcswidth  # prettytable's own width measure, to check the cut independently

    s = rows(sheet, lambda d: d.index < 3)
    s.data.iloc[:, 6] = s.data.iloc[:, 3].to_numpy(dtype=float) + np.array([3.0, 2.0, 1.0])
    s.data.iloc[:, 8] = [3.0, 2.0, 1.0]
    cjk, accented = "深度学习算子" * 14, "e\u0301" * 80  # 84 wide characters; 80 letters, 160 code points
    s.data.iloc[0, 1], s.data.iloc[1, 1] = cjk, accented
    text = render_memory_contributors(memory_summary.contributors(s)).splitlines()
    shown = [line.split(" | ")[1].rstrip() for line in text[5:7]]
    assert shown == [cjk[:33] + "...", accented[:134] + "..."]
    assert [wcswidth(n) for n in shown] == [69, 70]


def test_an_operator_count_of_thousands_has_separators(sheet):
    """The line counts the operators as every other count of the console is written ("... (1,200 in all)",
    "Operators matched: 1,500/2,056"): 240 copies of five real rows, none changed, read "(1200 operators)"."""
    five = rows(sheet, lambda d: d.index < 5)
    data = pd.concat([five.data] * 240, ignore_index=True)
    data.iloc[:, 6], data.iloc[:, 8] = data.iloc[:, 3].to_numpy(dtype=float), np.zeros(len(data))
    t = memory_summary.totals(Sheet(five.name, five.columns, data, five.base_span, five.comparison_span),
                              (True, True), (0.0, 0.0))
    assert "operator's allocated memory changed (1,200 operators)" in memory_line(t)
