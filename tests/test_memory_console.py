"""Where memory grew (compare/memory_summary.py): the console's "Top Memory Contributors" and memory line, the
API's ``memory_contributors`` / ``memory_totals`` and JSON ``summary.memory*``, against figures computed here
from the inputs themselves (the traces' [memory] events, memory_record.csv, the DB's MEMORY_RECORD) and by hand
from MemoryCompareStatistic rows."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from dbutil import sql
from test_memory_record_reads import LOST
from test_mindspore_user_leftovers import MS_NONE

from msprof_compare.api import compare
from msprof_compare.compare import memory_summary
from msprof_compare.compare.table import Sheet
from msprof_compare.report import json_report
from msprof_compare.report.summary_console import memory_line, render_memory, render_memory_contributors

REPO = Path(__file__).resolve().parents[1]
H100, MI300 = REPO / "sample_data" / "bert-small_h100.json.gz", REPO / "sample_data" / "bert-small_mi300.json.gz"
TEXT = "msinsight/test/data/pytorch/text"
DB = "msinsight/test/data/pytorch/db"
NPU_FIXTURE = REPO / "tests" / "data" / "npu" / "rank0_ascend_pt"  # a 3 ms window of L1, no operator_memory.csv
MS_FIXTURE = REPO / "tests" / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"


def kineto_peak_gb(path: Path) -> float:
    """The largest Total Reserved of the trace's device [memory] events, in GB, read from the JSON itself."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        events = json.load(fh)["traceEvents"]
    return max(e["args"]["Total Reserved"] for e in events
               if e.get("name") == "[memory]" and e["args"].get("Device Id", -1) >= 0) / 1024**3


@pytest.fixture(scope="module")
def bert():
    """The bundled pair, default run (the peak from the time breakdown)."""
    return compare(str(H100), str(MI300))


def test_bundled_pair_one_operator_grew(bert):
    """MemoryCompareStatistic of the pair: aten::linear 39.303223 -> 1989.303223 MB, Diff Memory +1950.0, the only
    row whose (2-decimal) diff is not 0; aten::scaled_dot_product_attention differs by 0.0039 MB, which the sheet
    rounds to 0.00, so it is no contributor."""
    stat = bert.sheet("MemoryCompareStatistic")
    linear = stat[stat["Operator Name"] == "aten::linear"].iloc[0]
    assert (linear["Base Allocated Memory(MB)"], linear["Comparison Allocated Memory(MB)"]) == pytest.approx(
        (39.303223, 1989.303223), abs=1e-6)
    m = bert.memory_contributors
    assert m["Name"].tolist() == ["aten::linear"]
    assert m[["Base(MB)", "Comparison(MB)", "Diff(MB)", "Share", "Cumulative Share"]].iloc[0].tolist() == \
        pytest.approx([39.303223, 1989.303223, 1950.0, 1.0, 1.0], abs=1e-6)
    t = bert.memory_totals
    # the sheet's columns summed by hand: 18 rows, 45.262207 / 1995.266113 MB
    assert (t["operators"], t["changed"], t["base_recorded"], t["comparison_recorded"]) == (18, 1, True, True)
    assert t["base_mb"] == pytest.approx(float(stat["Base Allocated Memory(MB)"].sum()))
    assert (t["base_mb"], t["comparison_mb"], t["diff_mb"]) == pytest.approx((45.262207, 1995.266113, 1950.003906),
                                                                             abs=1e-6)
    assert t["diff_pct"] == pytest.approx(1950.00390625 / 45.26220703125 * 100)
    # the peak is the console's Mem Usage (0.11G / 0.21G): the traces' largest Total Reserved
    assert (t["base_peak_gb"], t["comparison_peak_gb"]) == (kineto_peak_gb(H100), kineto_peak_gb(MI300))
    assert [r[5] for r in bert.summary["rows"]] == [f"{t['base_peak_gb']:.2f}G", f"{t['comparison_peak_gb']:.2f}G"]
    assert t["peak_diff_pct"] == pytest.approx((t["comparison_peak_gb"] / t["base_peak_gb"] - 1) * 100)
    assert memory_line(bert.frames["memory"]) == (
        "Peak reserved memory (Mem Usage) 0.11 GB -> 0.21 GB (+0.10 GB, +84.48%).\nMemory allocated inside "
        "operators (a sum of allocations, not memory held at once) 45.26 MB -> 1995.27 MB (+1950.00 MB).")
    # the sum's change has no percentage: 1950.00 / 45.26 MB is +4308%, a volume's, beside a peak of +84%
    assert "4308" not in memory_line(bert.frames["memory"])
    table = render_memory_contributors(bert.frames["memory_contributors"]).splitlines()
    assert table[1] == "| Top Memory Contributors (1 row covers 100.0% of the operators' allocated-memory change) |"
    # the title is wider than the columns: the name column takes the room, the figures stay tight
    assert table[5] == "| 1 | aten::linear     |    39.30 |        1989.30 | +1950.00 | 100.0% |           100.0% |"


def test_memory_only_run_has_the_same_figures_and_the_time_outputs_none(bert):
    """--enable_memory_compare alone: no time breakdown, so the peak is read alone, to the same figure."""
    alone = compare(str(H100), str(MI300), enable_memory_compare=True)
    assert alone.memory_totals == bert.memory_totals
    assert alone.memory_contributors.equals(bert.memory_contributors)
    assert not len(alone.waterfall) and not len(alone.contributors)
    assert render_memory(alone.frames) == render_memory(bert.frames)


def test_only_savings_read_as_negative_changes():
    """The pair swapped: the one change is -1950.00 MB, still 100% of the absolute change."""
    res = compare(str(MI300), str(H100), enable_memory_compare=True)
    m = res.memory_contributors
    assert m[["Diff(MB)", "Share"]].iloc[0].tolist() == [-1950.0, 1.0]
    assert memory_line(res.frames["memory"]) == (
        "Peak reserved memory (Mem Usage) 0.21 GB -> 0.11 GB (-0.10 GB, -45.79%).\nMemory allocated inside "
        "operators (a sum of allocations, not memory held at once) 1995.27 MB -> 45.26 MB (-1950.00 MB).")


def test_npu_text_pair_without_change(samples):
    """NPU pair 1: no operator's memory changed (35 rows, 1426.019043 MB each side): one line, no table; the peak
    is memory_record.csv's largest Total Reserved(MB), read without OverallMetrics."""
    base, comp = samples / TEXT / "level1" / "rank0_ascend_pt", samples / TEXT / "level2" / "rank0_ascend_pt"
    res = compare(str(base), str(comp), enable_memory_compare=True)
    peaks = []
    for side in (base, comp):
        with open(side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", encoding="utf-8", newline="") as fh:
            peaks.append(max(float(r["Total Reserved(MB)"]) for r in csv.DictReader(fh)) / 1024)
    t = res.memory_totals
    assert (t["operators"], t["changed"], t["diff_mb"]) == (35, 0, 0.0)
    assert t["base_mb"] == t["comparison_mb"] == pytest.approx(1426.019043, abs=1e-6)
    assert [t["base_peak_gb"], t["comparison_peak_gb"]] == peaks
    assert not len(res.memory_contributors) and render_memory_contributors(res.memory_contributors) == ""
    assert render_memory(res.frames) == (
        "Peak reserved memory (Mem Usage) 2.06 GB on both sides.\nNo operator's allocated memory changed "
        "(35 operators); memory allocated inside operators (a sum of allocations, not memory held at once) "
        "1426.02 MB on both sides.")


def test_a_peak_change_below_a_hundredth_of_a_gb_is_said_in_mb(samples, sheet):
    """Text Level0 rank 0 against Level1 rank 0: memory_record.csv's largest Total Reserved(MB) is 2109.6015625
    and 2113.73046875 (by the csv module, below), 4.12890625 MB more (+0.196 % of 2109.60), both 2.06 GB: the line
    read "2.06 GB on both sides". A change that rounds to 0.00 GB is given in MB, which the GB column cannot show;
    one of 0.01 GB or more, or below 0.005 MB, reads as before. OverallMetrics' Mem Usage cells are the
    original's and unchanged."""
    peaks = []
    for level in ("level0", "level1"):
        with open(samples / TEXT / level / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv",
                  encoding="utf-8", newline="") as fh:
            peaks.append(max(float(r["Total Reserved(MB)"]) for r in csv.DictReader(fh)))
    assert peaks == [2109.6015625, 2113.73046875]
    base, comp = (samples / TEXT / level / "rank0_ascend_pt" for level in ("level0", "level1"))
    res = compare(str(base), str(comp), enable_memory_compare=True)
    assert memory_line(res.frames["memory"]).splitlines()[0] == \
        "Peak reserved memory (Mem Usage) 2.06 GB -> 2.06 GB (+4.13 MB, +0.20%)."
    swapped = compare(str(comp), str(base), enable_memory_compare=True)
    assert memory_line(swapped.frames["memory"]).splitlines()[0] == \
        "Peak reserved memory (Mem Usage) 2.06 GB -> 2.06 GB (-4.13 MB, -0.20%)."
    # across a rounding edge: 2.064 -> 2.066 GB is 2.048 MB (+0.097 %), which read "+0.00 GB"
    for peak, said in (((2.064, 2.066), "2.06 GB -> 2.07 GB (+2.05 MB, +0.10%)"),
                       ((2.0, 2.01), "2.00 GB -> 2.01 GB (+0.01 GB, +0.50%)"),
                       ((2.0, 2.0 + 1e-6), "2.00 GB on both sides")):  # 0.001 MB
        line = memory_line(memory_summary.totals(edited(sheet, [0.0, 0.0]), (True, True), peak))
        assert line.splitlines()[0] == f"Peak reserved memory (Mem Usage) {said}."


def test_npu_db_pair_peak_is_memory_record(samples):
    """The DB pair: the peak is MEMORY_RECORD's largest totalReserved (1600913408 bytes, 1.49 GB)."""
    base, comp = samples / DB / "level1" / "rank0_ascend_pt", samples / DB / "level2" / "rank0_ascend_pt"
    res = compare(str(base), str(comp), enable_memory_compare=True)
    t = res.memory_totals
    for side, key in ((base, "base_peak_gb"), (comp, "comparison_peak_gb")):
        db = side / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
        assert t[key] == sql(db, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0][0] / 1024**3
    assert (t["changed"], t["base_mb"]) == (0, pytest.approx(1426.019043, abs=1e-6))
    assert json_report.to_document(res)["summary"]["memory"] == t


def test_side_without_memory_is_not_recorded_not_a_growth(samples):
    """The NPU fixture has no operator_memory.csv: its operators read 0 MB beside L1's 1426.02 MB. That is no
    growth: no contributor, null diffs, "not recorded" in the line (its memory_record.csv still gives a peak)."""
    res = compare(str(NPU_FIXTURE), str(samples / TEXT / "level1" / "rank0_ascend_pt"), enable_memory_compare=True)
    stat = res.sheet("MemoryCompareStatistic")
    assert float(stat["Base Allocated Memory(MB)"].abs().sum()) == 0.0 and (stat["Diff Memory(MB)"] > 0).any()
    t = res.memory_totals
    assert (t["base_recorded"], t["comparison_recorded"], t["diff_mb"], t["diff_pct"], t["changed"]) == (
        False, True, None, None, 0)
    assert not len(res.memory_contributors)
    assert render_memory(res.frames) == (
        "Peak reserved memory (Mem Usage) 2.06 GB on both sides.\nMemory allocated inside operators (a sum of "
        "allocations, not memory held at once): base not recorded (its 0 MB in MemoryCompareStatistic is no "
        "reading), comparison 1426.02 MB, so no memory contributor.")


# --------------------------------------------------------------------------- the cut, from edited real rows


@pytest.fixture(scope="module")
def sheet(bert) -> Sheet:
    return next(s for s in bert.sheets if s.name == "MemoryCompareStatistic")


def edited(sheet: Sheet, diffs: list[float]) -> Sheet:
    """The real sheet's first rows with Comparison MB = Base MB + diff (as the sheet's Diff Memory(MB))."""
    d = sheet.data.iloc[:len(diffs)].copy()
    base = d.iloc[:, 3].to_numpy(dtype=float)
    d.iloc[:, 6] = base + np.array(diffs)
    d.iloc[:, 8] = np.array(diffs, dtype=float)
    return Sheet(sheet.name, sheet.columns, d.reset_index(drop=True), sheet.base_span, sheet.comparison_span)


def test_cut_at_80_percent_of_the_absolute_change(sheet):
    # |6| + |-3| + |1| = 10: 60%, then 90% reaches 80%; the -3 MB saving counts by its size
    m = memory_summary.contributors(edited(sheet, [1.0, 6.0, -3.0]))
    names = sheet.data.iloc[:3, 1].tolist()
    assert m["Name"].tolist() == [names[1], names[2]]
    assert m["Diff(MB)"].tolist() == [6.0, -3.0]
    assert m["Share"].tolist() == pytest.approx([0.6, 0.3]) and m["Cumulative Share"].tolist() == pytest.approx(
        [0.6, 0.9])
    # exactly 80% is reached by two rows of 4 (of 10): the third row is left out
    assert len(memory_summary.contributors(edited(sheet, [4.0, 4.0, 2.0]))) == 2


def test_ties_keep_the_sheet_order(sheet):
    # five rows of |2| MB (10 in all): four reach 80%, in the sheet's order, a saving of 2 as large as a growth
    m = memory_summary.contributors(edited(sheet, [2.0, -2.0, 2.0, 2.0, 2.0]))
    assert m["Name"].tolist() == sheet.data.iloc[:4, 1].tolist()
    assert m["Rank"].tolist() == [1, 2, 3, 4] and m["Diff(MB)"].tolist() == [2.0, -2.0, 2.0, 2.0]


def test_zero_change_and_unrecorded_side_list_nobody(sheet):
    assert not len(memory_summary.contributors(edited(sheet, [0.0, 0.0])))
    assert not len(memory_summary.contributors(edited(sheet, [5.0, 1.0]), recorded=(True, False)))
    totals = memory_summary.totals(edited(sheet, [0.0, 0.0]), (True, True), (0.0, 0.0))
    assert memory_line(totals).startswith("No operator's allocated memory changed (2 operators); ")
    assert "peak" not in memory_line(totals)  # neither side recorded a peak
    one = memory_summary.totals(edited(sheet, [1.0]), (True, True), (0.5, 0.0))
    assert memory_line(one).startswith("Peak reserved memory (Mem Usage): base 0.50 GB, comparison not recorded.\n"
                                       "Memory allocated inside operators ")


def test_memory_line_cases_each_clause_where_it_stands(sheet):
    """Each of the operators' three sentences, alone (no peak on either side) and on a line after the peak's
    sentence, worded alike. The bundled pair's first row, aten::linear, 39.30 MB on the base side (its sheet's Base MB
    39.303223)."""
    inside = "memory allocated inside operators (a sum of allocations, not memory held at once)"
    unrecorded = (f"{inside}: base 39.30 MB, comparison not recorded (its 0 MB in MemoryCompareStatistic is no "
                  "reading), so no memory contributor.")
    for diffs, rec, clause in (
            ([0.0, 0.0], (True, True), f"no operator's allocated memory changed (2 operators); {inside} 39.30 MB on "
                                       "both sides."),
            ([1.0], (True, True), f"{inside} 39.30 MB -> 40.30 MB (+1.00 MB)."),
            ([1.0], (True, False), unrecorded)):
        alone = memory_line(memory_summary.totals(edited(sheet, diffs), rec, (0.0, 0.0)))
        after = memory_line(memory_summary.totals(edited(sheet, diffs), rec, (0.5, 0.0)))
        assert alone == clause[0].upper() + clause[1:]
        assert after == "Peak reserved memory (Mem Usage): base 0.50 GB, comparison not recorded.\n" + alone


def test_console_shows_ten_rows_and_cuts_long_names(sheet):
    rows = edited(sheet, [1.0] * 14)
    rows.data.iloc[0, 1] = "x" * 80
    m = memory_summary.contributors(rows)
    assert len(m) == 12  # 12 of 14 equal rows reach 80% (85.7%)
    text = render_memory_contributors(m).splitlines()
    assert "12 rows cover 85.7% of the operators' allocated-memory change; the first 10 shown" in text[1]
    assert sum(line.startswith("| ") and line[2:4].strip().isdigit() for line in text) == 10
    assert text[5].startswith("|  1 | " + "x" * 67 + "... |")


def test_json_document_holds_the_same_figures(bert):
    from test_json_report import SCHEMA, validate

    doc = json.loads(json_report.dumps(bert))
    assert validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8"))) == []
    assert doc["summary"]["memory_contributors"] == json_report.records(bert.memory_contributors)
    assert doc["summary"]["memory_contributors"][0]["Name"] == "aten::linear"
    assert doc["summary"]["memory"] == bert.memory_totals
    assert not {"memory", "memory_contributors"} & set(doc["frames"])


def test_memory_only_cli_prints_the_memory_table_alone(bert, capsys, tmp_path):
    """--enable_memory_compare alone printed nothing on stdout; now the memory table and line, nothing else."""
    from cliutil import run_inproc

    code, out, _ = run_inproc(capsys, "-d", str(MI300), "-bp", str(H100), "--enable_memory_compare",
                              "-o", str(tmp_path))
    assert code == 0
    assert out == render_memory(bert.frames) + "\n"
    assert out.startswith("+--") and out.splitlines()[-1].startswith(
        "Memory allocated inside operators (a sum of allocations, not memory held at once) 45.26 MB -> 1995.27 MB")


def _fixture_copy(tmp_path: Path) -> Path:
    """A writable copy of the L1 excerpt (tests/data/npu/rank0_ascend_pt)."""
    import shutil

    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU_FIXTURE, side)
    for p in side.rglob("*"):
        p.chmod(0o700 if p.is_dir() else 0o600)
    side.chmod(0o700)
    return side


@pytest.mark.parametrize("damage, why", [
    (lambda text: "Component,Timestamp(us)\nPTA,1\n", "missing required column(s): Total Reserved(MB)"),
    # a copy cut inside its 11th row's fourth field (Total Reserved(MB)): four of its seven fields are left
    (lambda text: "\n".join(text.split("\n")[:11]) + "\n" + ",".join(text.split("\n")[11].split(",")[:4])[:-3],
     "truncated: the last row has 4 of 7 fields and no line end"),
    (lambda text: text.split("\n")[0] + "\n", "no data rows"),
])
def test_memory_only_run_says_why_a_damaged_memory_record_gives_no_peak(samples, tmp_path, caplog, damage, why):
    """A memory-only run reads memory_record.csv only for the peak: one it cannot read (a header without the
    Total Reserved(MB) column, a copy cut mid-row, a header alone) leaves that side's peak out and fails nothing,
    as before, but now says why in one warning naming the file (the line said "comparison not recorded" of a
    file that is there, and nothing said it was damaged; found by fuzzing the side files); the file read is
    recorded where it was read. A side without the file is warned of as in a profiling run (next test)."""
    import logging

    side = _fixture_copy(tmp_path)
    mr = side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    mr.write_text(damage(mr.read_text(encoding="utf-8")), encoding="utf-8")
    l1 = samples / TEXT / "level1" / "rank0_ascend_pt"
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(l1), str(side), enable_memory_compare=True)
    said = [r.getMessage() for r in caplog.records if "memory_record" in r.getMessage()]
    assert said == [f"{mr}: {why}; the memory line's peak reserved memory (Mem Usage) leaves this side out "
                    "(comparison side)"]
    t = res.memory_totals
    assert t["comparison_peak_gb"] is None and t["peak_diff_gb"] is None and t["base_peak_gb"] > 0
    assert "memory_record.csv" not in res.comparison.files
    assert res.base.files["memory_record.csv"] == str(l1 / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv")


def test_memory_only_run_without_memory_record_says_it_as_a_profiling_run_does(samples, tmp_path, caplog):
    """A side without memory_record.csv has no peak, and the memory line says "comparison not recorded": a
    memory-only run said nothing of the file, where a profiling run warns "The file memory_record.csv does not
    exist." and names one written in another case (MEMORY_RECORD.CSV, the rename to do); fuzz65, session 65. The
    peak is a figure of the run, so both runs warn alike now. The L1 excerpt without the file, then with it
    renamed; the base side (the level1 sample) keeps its peak."""
    import logging

    side = _fixture_copy(tmp_path)
    out = side / "ASCEND_PROFILER_OUTPUT"
    l1 = samples / TEXT / "level1" / "rank0_ascend_pt"
    for renamed in (None, "MEMORY_RECORD.CSV"):
        if renamed:
            (tmp_path / "kept.csv").rename(out / renamed)
        else:
            (out / "memory_record.csv").rename(tmp_path / "kept.csv")
        hint = f": {renamed} is there: the name is case-sensitive; rename it to memory_record.csv" if renamed else ""
        said = {}
        for run in ("enable_memory_compare", "enable_profiling_compare"):
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="msprof-analyze"):
                res = compare(str(l1), str(side), **{run: True})
            said[run] = [r.getMessage() for r in caplog.records if "memory_record" in r.getMessage()]
        assert said["enable_memory_compare"] == said["enable_profiling_compare"] == [
            f"{out}: The file memory_record.csv does not exist. (comparison side{hint or f': {LOST}'})"]
        res = compare(str(l1), str(side), enable_memory_compare=True)
        assert res.memory_totals["comparison_peak_gb"] is None and res.memory_totals["base_peak_gb"] > 0
        assert "memory_record.csv" not in res.comparison.files


def test_memory_only_run_says_the_readings_it_leaves_out_of_the_peak(samples, tmp_path, caplog):
    """A memory-only run's peak leaves out a negative Total Reserved(MB) as OverallMetrics' Mem Usage does, and now
    says so as that run does: the excerpt's rows holding its largest reading (2113.73046875 MB) made negative, the
    peak is the largest of the rest, computed here by csv; the peak moved without a word before."""
    import logging

    side = _fixture_copy(tmp_path)
    mr = side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    with open(mr, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    mb = [float(r["Total Reserved(MB)"]) for r in rows]
    top = [i for i, v in enumerate(mb) if v == max(mb)]
    assert max(mb) == 2113.73046875
    text = mr.read_text(encoding="utf-8").split("\n")
    for i in top:
        cells = text[i + 1].split(",")
        assert float(cells[3]) == mb[i]
        cells[3] = "-" + cells[3]
        text[i + 1] = ",".join(cells)
    mr.write_text("\n".join(text), encoding="utf-8")
    rest = max(v for i, v in enumerate(mb) if i not in top)
    assert rest < max(mb)  # the edit moves the peak
    l1 = samples / TEXT / "level1" / "rank0_ascend_pt"
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(l1), str(side), enable_memory_compare=True)
    said = [r.getMessage() for r in caplog.records if "memory_record" in r.getMessage()]
    assert said == [f"{mr}: {len(top)} Total Reserved(MB) value(s) negative or over 1 PB; Mem Usage leaves them out "
                    "(comparison side)"]
    assert res.memory_totals["comparison_peak_gb"] == pytest.approx(rest / 1024, abs=1e-9)


#: tests/data/kineto: the project's H200 AlexNet training step (484 cpu_op events, 200 device [memory] events)
H200_ALEXNET = REPO / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def test_peak_memory_is_said_beside_a_side_without_framework_ops(tmp_path, capsys):
    """The H200 AlexNet step without its cpu_op events (a copy: a capture of runtime calls, annotations and
    kernels) has no framework op against the unedited trace, so the memory sheets are left out; the memory line
    went with them, although each side's peak reserved memory (Mem Usage) is its own reading. It now gives the
    peaks, 1.658203125 GB each (the largest device Total Reserved of the trace's [memory] events, which the cut
    keeps), and says why the operators' memory is not compared, in either order, in a memory-only run too; a
    profiling-only run still has no memory line."""
    import pandas as pd
    from test_json_report import SCHEMA, validate

    with gzip.open(H200_ALEXNET, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("cat") != "cpu_op"]
    cut = tmp_path / "h200_no_cpu_op.pt.trace.json"
    cut.write_text(json.dumps(data), encoding="utf-8")
    peak = kineto_peak_gb(H200_ALEXNET)
    assert peak == 1.658203125  # 1698 MB: both sides, the cut kept every [memory] event
    why = "a GPU trace without cpu_op events has none"
    for pair, bare in (((H200_ALEXNET, cut), "comparison"), ((cut, H200_ALEXNET), "base")):
        res = compare(*map(str, pair))
        assert "MemoryCompareStatistic" not in res.sheet_names and res.memory_contributors.empty
        t = res.memory_totals
        assert (t["base_peak_gb"], t["comparison_peak_gb"], t["peak_diff_gb"], t["peak_diff_pct"]) == (
            peak, peak, 0.0, 0.0)
        assert (t["operators"], t["changed"], t["base_recorded"], t["comparison_recorded"]) == (0, 0, False, False)
        assert t["base_mb"] is t["comparison_mb"] is t["diff_mb"] is t["diff_pct"] is None
        assert t["operators_left_out"] == f"the {bare} side has no torch op ({why})"
        line = (f"Peak reserved memory (Mem Usage) 1.66 GB on both sides.\nMemory inside operators not compared: "
                f"the {bare} side has no torch op ({why}).")
        assert memory_line(res.frames["memory"]) == line
        assert render_memory(res.frames) == line  # no contributor table, no note: the line alone
        doc = json.loads(json_report.dumps(res))
        assert validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8"))) == []
        assert doc["summary"]["memory"] == t
        # the workbook's Summary says it too
        xlsx = res.to_excel(str(tmp_path / bare))
        cells = pd.read_excel(xlsx, sheet_name="Summary", header=None)[0].tolist()
        assert all(sentence in cells for sentence in line.split("\n"))  # a row per sentence, as the console's lines
    alone = compare(str(H200_ALEXNET), str(cut), enable_memory_compare=True)  # the peaks read without a breakdown
    assert alone.memory_totals == res.memory_totals | {"operators_left_out": t["operators_left_out"].replace(
        "base", "comparison")}
    assert compare(str(H200_ALEXNET), str(cut), enable_profiling_compare=True).memory_totals is None
    from cliutil import run_inproc

    code, out, _ = run_inproc(capsys, "-d", str(cut), "-bp", str(H200_ALEXNET), "-o", str(tmp_path / "cli"))
    assert code == 0 and "\n".join(out.splitlines()[-2:]) == (
        "Peak reserved memory (Mem Usage) 1.66 GB on both sides.\nMemory inside operators not compared: the "
        f"comparison side has no torch op ({why}).")


def _without_cpu_ops(src: Path, dest: Path, scale: float = 1.0) -> tuple[Path, float]:
    """A copy of the NPU text fixture without its cpu_op events (a torch_npu capture without the CPU activity) and
    with its memory_record.csv Total Reserved(MB) cells times ``scale``; its peak in GB, read by csv."""
    import shutil

    out = shutil.copytree(src, dest / src.name)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.write_text(json.dumps([e for e in json.loads(trace.read_text()) if e.get("cat") != "cpu_op"]))
    record = out / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    with open(record, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["Total Reserved(MB)"] = repr(float(r["Total Reserved(MB)"]) * scale)
    with open(record, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out, max(float(r["Total Reserved(MB)"]) for r in rows) / 1024


def test_peak_memory_is_said_where_neither_side_has_a_framework_op(tmp_path):
    """Neither side has a framework op: the memory sheets are left out, and the Summary said nothing of memory,
    while OverallMetrics showed each side's Mem Usage change; the memory line now gives the peaks and why the
    operators' memory is not compared, each side's reason where they differ. The NPU text fixture without its
    cpu_op events against such a copy at half its memory (peaks read by csv), and against the MindSpore fixture
    (no memory_record.csv: no peak)."""
    from test_json_report import SCHEMA, validate

    base, b = _without_cpu_ops(NPU_FIXTURE, tmp_path / "b")
    comp, c = _without_cpu_ops(NPU_FIXTURE, tmp_path / "c", 0.5)
    npu = "a torch_npu export without cpu_op events has none"
    res = compare(str(base), str(comp))
    t = res.memory_totals
    why = f"neither side has a torch op ({npu})"
    assert (t["base_peak_gb"], t["comparison_peak_gb"], t["operators"], t["operators_left_out"]) == (b, c, 0, why)
    assert memory_line(res.frames["memory"]) == (
        f"Peak reserved memory (Mem Usage) {b:.2f} GB -> {c:.2f} GB ({c - b:+.2f} GB, {(c - b) / b * 100:+.2f}%)."
        f"\nMemory inside operators not compared: {why}.")
    doc = json.loads(json_report.dumps(res))
    assert validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8"))) == []
    mixed = compare(str(base), str(MS_FIXTURE), enable_memory_compare=True)
    assert mixed.memory_totals["operators_left_out"] == (
        f"neither side has a torch op (base: {npu}; comparison: {MS_NONE})")
    assert memory_line(mixed.frames["memory"]) == (
        f"Peak reserved memory (Mem Usage): base {b:.2f} GB, comparison not recorded.\nMemory inside operators not "
        f"compared: neither side has a torch op (base: {npu}; comparison: {MS_NONE}).")


def test_peaks_of_zero_readings_are_said_where_neither_side_has_a_framework_op(tmp_path):
    """A peak of 0.00 GB read from readings all 0 is a reading: where neither side has a framework op the memory
    line still gives it, with the readings named once for both sides (no line at all had said nothing, while
    OverallMetrics' note called it a reading). The NPU text fixture without its cpu_op events and every Total
    Reserved(MB) cell made 0, on both sides; its readings counted by csv."""
    base, b = _without_cpu_ops(NPU_FIXTURE, tmp_path / "b", 0.0)
    comp, c = _without_cpu_ops(NPU_FIXTURE, tmp_path / "c", 0.0)
    with open(base / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", encoding="utf-8", newline="") as fh:
        n = sum(1 for r in csv.DictReader(fh) if r["Total Reserved(MB)"].strip())
    assert (b, c, n) == (0.0, 0.0, 30)
    res = compare(str(base), str(comp))
    t = res.memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"], t["peak_diff_gb"], t["peak_diff_pct"]) == (0.0, 0.0, 0.0, None)
    assert memory_line(res.frames["memory"]) == (
        f"Peak reserved memory (Mem Usage; each side: its {n} memory_record.csv Total Reserved(MB) readings are all "
        "0) 0.00 GB on both sides.\nMemory inside operators not compared: neither side has a torch op (a "
        "torch_npu export without cpu_op events has none).")


def _memory_moved(tmp_path: Path, name: str, where: str) -> Path:
    """A copy of the H200 AlexNet step whose [memory] events lie before its first event or after its last one
    (``where``): every allocation is recorded, none inside an op."""
    with gzip.open(H200_ALEXNET, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    events = data["traceEvents"]
    timed = [float(e["ts"]) + float(e.get("dur", 0)) for e in events if "ts" in e and e.get("name") != "[memory]"]
    at = min(float(e["ts"]) for e in events if "ts" in e) - 10_000 if where == "before" else max(timed) + 10_000
    moved = device = 0
    for e in events:
        if e.get("name") == "[memory]":
            e["ts"] = at + moved  # the allocation order kept, 1 us apart
            moved += 1
            device += e["args"].get("Device Id", -1) >= 0
    assert (moved, device) == (236, 200)  # the host ones too, which the memory comparison does not read
    out = tmp_path / name
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_peak_memory_is_said_where_neither_side_recorded_memory_inside_an_op(tmp_path, capsys):
    """Both sides have framework ops and neither has a memory record inside one: the memory sheets are left out,
    and the memory line went with them, though each side's peak reserved memory (Mem Usage) was read. It now gives
    the peaks and says why the operators' memory is not compared: the H200 AlexNet step with its 200 [memory]
    events moved outside every op (before its first event, after its last) peaks at 1.658203125 GB each side,
    read from the JSON; the NPU text fixture has no operator_memory.csv (no record at all) and peaks at the largest
    Total Reserved(MB) of its memory_record.csv, read by csv, each side. Default and memory-only runs alike; the
    JSON summary says it, and the console's last line."""
    import shutil

    from test_json_report import SCHEMA, validate

    before, after = _memory_moved(tmp_path, "before.pt.trace.json", "before"), \
        _memory_moved(tmp_path, "after.pt.trace.json", "after")
    gpu = kineto_peak_gb(H200_ALEXNET)
    pt = REPO / "tests" / "data" / "npu" / "rank0_ascend_pt"
    assert not (pt / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").exists()
    with open(pt / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", encoding="utf-8", newline="") as fh:
        npu = max(float(r["Total Reserved(MB)"]) for r in csv.DictReader(fh)) / 1024
    other = tmp_path / "copy" / "rank0_ascend_pt"
    shutil.copytree(pt, other)
    for (base, comp), peak, why in (
            ((before, after), gpu, "neither side's memory records fall inside an operator"),
            ((pt, other), npu, "neither side recorded a memory allocation")):
        for kw in ({}, {"enable_memory_compare": True}):
            res = compare(str(base), str(comp), **kw)
            assert "MemoryCompareStatistic" not in res.sheet_names and res.memory_contributors.empty
            t = res.memory_totals
            assert (t["base_peak_gb"], t["comparison_peak_gb"], t["peak_diff_gb"]) == (peak, peak, 0.0)
            assert (t["operators"], t["base_recorded"], t["comparison_recorded"], t["base_mb"]) == (0, False, False,
                                                                                                  None)
            assert t["operators_left_out"] == why
            line = f"Peak reserved memory (Mem Usage) {peak:.2f} GB on both sides.\nMemory inside operators not " \
                   f"compared: {why}."
            assert memory_line(res.frames["memory"]) == render_memory(res.frames) == line
            doc = json.loads(json_report.dumps(res))
            assert validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8"))) == []
            assert doc["summary"]["memory"] == t
    assert gpu == 1.658203125 and npu > 2
    from cliutil import run_inproc

    code, out, _ = run_inproc(capsys, "-d", str(after), "-bp", str(before), "-o", str(tmp_path / "cli"))
    assert code == 0 and "\n".join(out.splitlines()[-2:]) == (
        "Peak reserved memory (Mem Usage) 1.66 GB on both sides.\nMemory inside operators not compared: neither side's "
        "memory records fall inside an operator.")


def test_memory_line_names_each_side_where_one_recorded_no_allocation(tmp_path):
    """The H200 AlexNet step with its [memory] events moved before every op, beside the step without any [memory]
    event: no memory inside an op on either side, for two reasons, each named; the peak is the first side's alone
    (1.658203125 GB), the other's not recorded."""
    before = _memory_moved(tmp_path, "before.pt.trace.json", "before")
    with gzip.open(H200_ALEXNET, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("name") != "[memory]"]
    bare = tmp_path / "no_memory.pt.trace.json"
    bare.write_text(json.dumps(data), encoding="utf-8")
    t = compare(str(before), str(bare), enable_memory_compare=True).memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"]) == (kineto_peak_gb(H200_ALEXNET), None)
    assert t["operators_left_out"] == ("the comparison side recorded no memory allocation and the base side's memory "
                                       "records fall inside no operator")
