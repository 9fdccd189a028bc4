"""The note under the contributors where Free: Other holds a text -> DB export switch's E2E change: text level 1
against DB level 1, rank 0 (the msinsight AlexNet samples, separate runs of one script). The waterfall puts the
change in Free: Other +5.200 ms, and the note read it as idle time, "the device waited longer for work, as where the
host was slower to launch it"; but 5.686 ms of the DB side's Free: Other lie before its first computing or
communication (two MEMCPY_ASYNC, 0.831 ms, and 4.855 ms of idle time), in the window the original's DB rule spans
and a text export's leaves out, so the device idled 0.486 ms less (test_export_switch's raw reckoning, whose
figures this reuses: SQL on the DB, the text export's Overlap Analysis lanes, and the DB's own OVERLAP_ANALYSIS
lanes that MindStudio Insight wrote)."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest
from dbutil import sql
from test_export_switch import DB_L1, TEXT_L1, _db_file, _db_held, _db_window, _overlap_lanes

from msprof_compare import compare
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.compare.verdict import export_window


def _idle_change_ns(samples) -> tuple[int, int]:
    """(the DB side's window tasks outside its computing and communication, the DB run's free lane less the text
    run's), ns, by the raw files."""
    text, db = samples / TEXT_L1, samples / DB_L1
    (free_lane,), = sql(_db_file(db), "SELECT sum(endNs - startNs) FROM OVERLAP_ANALYSIS WHERE type = 3")
    _, outside = _db_window(_db_file(db))
    return outside, free_lane - _overlap_lanes(text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")["Free"]


def _note(res) -> str:
    """The note under the contributors (the console's, the Summary sheet's and the JSON's)."""
    return unexplained_note(res.frames["contributors"], res.frames["waterfall"],
                            res.frames.get("contributor_communication"))


def _ms(ns: int) -> str:
    return f"{Decimal(ns) / 10**6:.3f}"


def _signed_ms(ns: int) -> str:
    return f"{Decimal(ns) / 10**6:+.3f}"


@pytest.mark.parametrize("db_side", ["comparison", "base"])
def test_free_other_of_an_export_switch_is_read_net_of_the_db_window(samples, db_side):
    """Both ways round: the DB side's window tasks are said with their figure, and the idle time's change net of
    them, -0.486 ms where the DB run is the comparison (it waited less), +0.486 ms the other way."""
    outside, idle = _idle_change_ns(samples)
    assert (outside, idle) == (5_685_773, -485_906)  # test_export_switch's figures
    text, db = str(samples / TEXT_L1), str(samples / DB_L1)
    res = compare(text, db) if db_side == "comparison" else compare(db, text)
    note = _note(res)
    free = 5_199_867 if db_side == "comparison" else -5_199_867
    sign = 1 if db_side == "comparison" else -1
    assert f"the waterfall puts all of it in Free: Other {sign * 5.199867:+.3f} ms" in note
    held = _db_held(_db_file(samples / DB_L1))
    assert held.startswith(f"{_ms(outside)} ms before its first computing or communication (2 copies, ")
    assert (f"Free: Other is device idle time and, on the {db_side} side (a DB export), also its {held}, which a "
            f"text export's E2E leaves out; net of that time, the idle time changed by {sign * idle / 10**6:+.3f} ms: "
            "the device waited "
            f"{'less' if db_side == 'comparison' else 'longer'} for work, as where the host was "
            f"{'quicker' if db_side == 'comparison' else 'slower'} to launch it or to load its data; ApiCompare "
            "times the host calls") in note
    assert sign * idle == free - sign * outside  # the waterfall's step less the window, the raw files' idle change


def test_only_a_text_export_beside_a_db_export_has_a_window_taken_out(samples):
    """The window is the DB side's, and only beside a text export: two DB exports both span their window tasks (level
    2 -> level 1: 4.987 and 5.686 ms), two text exports none, so Free: Other is idle time alone for them."""
    db2 = str(samples / "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt")
    text2 = str(samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt")
    text, db = str(samples / TEXT_L1), str(samples / DB_L1)
    outside, _ = _idle_change_ns(samples)
    whole = (outside, 0, 830_617, 2)  # before the first kernel; the two copies by SQL (test_export_switch)
    for base, comparison, want in ((text, db, ("comparison", *whole)), (db, text, ("base", *whole)),
                                   (db2, db, None), (text2, text, None)):
        res = compare(base, comparison, enable_profiling_compare=True)
        assert export_window(res, res.frames["e2e"]) == want


TEXT_L0 = "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
DB_L0 = "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"


def _raw_steps(samples, text: str, db: str) -> tuple[int, int, int]:
    """(the DB side's window tasks, its Free: Other less the text side's, the idle time's change net of those
    tasks), ns, by the raw files: the DB's E2E window (SQL) less the union of its compute tasks and communication ops,
    against the text export's Free lane; the idle time is the gaps inside the DB's busy span. Reckoned without the
    DB's OVERLAP_ANALYSIS, which the Level0 export lacks."""
    from spans import union

    path = _db_file(samples / db)
    busy = union(sql(path, "SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId) "
                           "UNION ALL SELECT startNs, endNs FROM COMMUNICATION_OP"))
    held = sum(e - s for s, e in busy)
    e2e, outside = _db_window(path)
    free = _overlap_lanes(samples / text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")["Free"]
    return outside, e2e - held - free, (busy[-1][1] - busy[0][0]) - held - free


def test_free_other_named_second_is_read_net_of_the_db_window_too(samples):
    """Text Level0 -> DB Level0, rank 0: the waterfall puts most of the +8.591 ms in Uncovered Communication and
    Free: Other +4.210 ms, named second, and the note said nothing of the DB side's 4.217 ms of window tasks in that
    step, so Free: Other read as the device idling 4.2 ms longer; net of them it idled 0.008 ms less. A step named
    second is not read (as where no window is taken out): the figure net of the window, no words on the host."""
    outside, free, idle = _raw_steps(samples, TEXT_L0, DB_L0)
    assert (outside, free, idle) == (4_217_444, 4_209_500, -7_944) and free - outside == idle
    res = compare(str(samples / TEXT_L0), str(samples / DB_L0))
    assert export_window(res, res.frames["e2e"])[:2] == ("comparison", outside)
    note = _note(res)
    # uncovered communication by the raw files too: the DB's ops outside its compute tasks, the text export's lane
    from spans import minus, union

    path = _db_file(samples / DB_L0)
    compute = union(sql(path, "SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)"))
    ops = minus(union(sql(path, "SELECT startNs, endNs FROM COMMUNICATION_OP")), compute)
    lanes = _overlap_lanes(samples / TEXT_L0 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    comm = sum(e - s for s, e in ops) - lanes["Communication(Not Overlapped)"]
    assert (f"the waterfall puts most of it in Uncovered Communication {_signed_ms(comm)} ms and Free: Other "
            f"{_signed_ms(free)} ms; Free: Other is device idle time and, on the comparison side (a DB export), also "
            f"its {_db_held(path)}, which a text export's E2E leaves out; net of that time, the idle time changed by "
            f"{_signed_ms(idle)} ms)") in note
    assert "waited" not in note
    # the idle time's change is 0.008 ms, not 0.007 ms, as the rounded figures 4.210 - 4.217 would give
    assert _signed_ms(idle) == "-0.008" and Decimal("4.210") - Decimal("4.217") == Decimal("-0.007")


@pytest.mark.parametrize("text, db", [(TEXT_L1, DB_L1), (TEXT_L0, DB_L0)], ids=["level1", "level0"])
def test_lines_under_the_e2e_line_give_the_window_by_its_figure(samples, tmp_path, text, db):
    """The console, the Summary sheet, the gate and the JSON's lines show the note under the E2E line, which says
    what the DB side's window holds ("the comparison side's E2E, a DB export's, holds 5.686 ms before its first
    computing or communication (2 copies, 0.831 ms, and 4.855 ms of idle time), which a text export's leaves out"):
    there the note gives its figure and place alone, where it said all of that again; the JSON's one line, which
    may be read alone, says it whole."""
    import openpyxl
    from logutil import note_lines

    from msprof_compare.report.json_report import to_document
    from msprof_compare.report.summary_console import render_explain

    outside, _, idle = _raw_steps(samples, text, db)
    res = compare(str(samples / text), str(samples / db))
    held = _db_held(_db_file(samples / db))
    brief = (f"Free: Other is device idle time and also the comparison side's {held.split(' (', 1)[0]}, which the "
             f"E2E line names; net of that time, the idle time changed by {_signed_ms(idle)} ms")
    aside = f"the comparison side's E2E, a DB export's, holds {held}, which a text export's leaves out"
    assert held.startswith(f"{_ms(outside)} ms before its first computing or communication (2 copies, ")
    assert aside in res.verdict
    console = render_explain(res.frames, res.verdict).splitlines()
    doc = to_document(res)["summary"]
    book = openpyxl.load_workbook(res.to_excel(tmp_path), read_only=True)
    try:
        cells = [c for row in book["Summary"].iter_rows(values_only=True) for c in row if isinstance(c, str)]
    finally:
        book.close()
    gate = [line.strip() for line in res.regression_gate(0).message.splitlines()]
    for face, lines in {"console": console, "json": doc["contributors_note_lines"], "sheet": cells,
                        "gate": gate}.items():
        said = [line for line in lines if brief in line]
        assert len(said) == 1 and "copies" not in said[0], face
        # the E2E line is above it (the JSON's, its verdict, beside it)
        above = [doc["verdict"]] if face == "json" else lines[:lines.index(said[0])]
        assert [line for line in above if aside in line], face
    assert brief not in doc["contributors_note"] and f"{held}, which a text export's E2E leaves out" in \
        doc["contributors_note"]
    assert doc["contributors_note_lines"] == note_lines(doc["contributors_note"])


def test_no_operator_changed_reads_free_other_net_of_the_db_window(samples):
    """The reason of "no operator changed" (``unchanged_why``) read Free: Other as idle time whole, the DB side's
    window tasks and all, where the note's main path takes them out. No pair of the samples reaches that reading
    beside a text -> DB switch (uncovered communication moves a quarter of Free: Other or more, and decides), so the
    text level 1 -> DB level 1 waterfall is read with its communication step held still: Free: Other +5.200 ms is
    the device idling 0.486 ms less (the raw files' figures), not "waited longer"."""
    from msprof_compare.compare.summary_notes import unchanged_why

    outside, free, idle = _raw_steps(samples, TEXT_L1, DB_L1)
    assert (outside, free, idle) == (5_685_773, 5_199_867, -485_906)
    res = compare(str(samples / TEXT_L1), str(samples / DB_L1), enable_profiling_compare=True)
    wf = res.frames["waterfall"].copy()
    comm = (wf["Category"] == "communication").to_numpy()
    assert int(wf.loc[comm, "Delta(ns)"].sum()) == -3_891_256
    wf.loc[comm, "Delta(ns)"] = 0
    rows = pd.DataFrame({"Base(ms)": [1.0], "Comparison(ms)": [1.0]})
    window = export_window(res, res.frames["e2e"])
    assert window == ("comparison", outside, 0, 830_617, 2)
    why = unchanged_why(rows, wf, window=window)
    # the second step named (Matmul) is the waterfall's: its words are checked, not its figure
    assert why.startswith(f"the change is in Free: Other {_signed_ms(free)} ms and Matmul ")
    assert why.endswith(", Free: Other is device idle time and, on the "
                        f"comparison side (a DB export), also its {_db_held(_db_file(samples / DB_L1))}, which a "
                        f"text export's E2E leaves out; net of that time, the idle time changed by {_signed_ms(idle)} "
                        "ms: the device waited less for work, as where the host "
                        "was quicker to launch it or to load its data; ApiCompare times the host calls")
    # without the window, the step whole: the reading the main path had before it took the window out
    assert unchanged_why(rows, wf).endswith("device idle time: the device waited longer for work, as where the host "
                                            "was slower to launch it; ApiCompare times the host calls")


def test_rank_lines_of_an_export_switch_say_what_the_db_side_holds(samples, tmp_path):
    """Text Level0 -> DB Level0 rank by rank: each rank's line read E2E +8.591 ms and +29.157 ms with no word of the
    DB side's window tasks, which a single run's E2E line names; the lines now end with the same words, each rank's
    own figure (SQL on its DB); two DB exports' rank lines say nothing more."""
    from test_bad_corpus import run_cli

    text, db = samples / "msinsight/test/data/pytorch/text/level0", samples / "msinsight/test/data/pytorch/db/level0"
    code, out, _ = run_cli(["-bp", str(text), "-d", str(db), "--output_path", str(tmp_path / "switch"),
                            "--enable_profiling_compare"])
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("rank ")]
    assert len(lines) == 2
    for rank, line in enumerate(lines):
        _, outside = _db_window(_db_file(db / f"rank{rank}_ascend_pt"))
        assert line.startswith(f"rank {rank}: E2E ") and line.endswith(
            f".xlsx; the comparison side's E2E, a DB export's, holds {_db_held(_db_file(db / f'rank{rank}_ascend_pt'))}"
            ", which a text export's leaves out"), line
        assert _ms(outside) in line
    assert [_ms(_db_window(_db_file(db / f"rank{r}_ascend_pt"))[1]) for r in (0, 1)] == ["4.217", "4.179"]
    code, out, _ = run_cli(["-bp", str(db), "-d", str(db), "--output_path", str(tmp_path / "same"),
                            "--enable_profiling_compare"])
    assert code == 0 and [line for line in out.splitlines() if line.startswith("rank ")] and \
        "a DB export's" not in out


def test_rank_overview_of_an_export_switch_says_what_the_db_side_holds(samples, tmp_path):
    """Text level 1 -> DB level 1 rank by rank: the rank lines named the DB side's window, but the overview's JSON
    and workbook did not, and its Free column (rank 0: +5.200 ms) counts that window on the DB side. Each record now
    has ``export_window`` (its figure and words by SQL on the rank's DB), row 2 names each rank's, the document keeps
    to the schema; the gate alone (no profiling compare) gives the same records; two DB exports have none."""
    import json

    import openpyxl
    from test_bad_corpus import run_cli
    from test_json_report import validate
    from test_ranks_report import SCHEMA

    from msprof_compare import compare_ranks, ranks_overview

    text, db = samples / "msinsight/test/data/pytorch/text/level1", samples / "msinsight/test/data/pytorch/db/level1"
    out = tmp_path / "switch"
    code, _, _ = run_cli(["-bp", str(text), "-d", str(db), "--output_path", str(out), "--enable_profiling_compare",
                          "--output_format", "xlsx,json"])
    assert code == 0
    doc = json.loads(next(out.glob("performance_comparison_result_ranks_*.json")).read_text())
    assert validate(doc, SCHEMA) == []
    said = []
    for rank, record in enumerate(doc["ranks"]):
        dbf = _db_file(db / f"rank{rank}_ascend_pt")
        _, outside = _db_window(dbf)
        window = record["export_window"]
        assert (window["side"], window["ns"], window["ms"], window["held"]) == (
            "comparison", outside, outside / 1e6, _db_held(dbf))
        assert f"({window['copies']} copies, {_ms(window['copies_ns'])} ms, and " in window["held"]
        said.append(f"rank {rank} {_ms(outside)} ms")
    assert said == ["rank 0 5.686 ms", "rank 1 4.715 ms"]
    book = openpyxl.load_workbook(next(out.glob("performance_comparison_result_ranks_*.xlsx")), read_only=True)
    try:
        note = next(c for row in book["Ranks"].iter_rows(values_only=True) for c in row if c and "Job" in str(c))
    finally:
        book.close()
    assert ("E2E and Free Time of a DB export count its time outside its computing and communication, which a text "
            f"export's leave out: the comparison side's {', '.join(said)} (JSON: ranks[].export_window)"
            ) in note.splitlines()
    # a job of more ranks than row 2 lists (32, as its other lists): the rest are counted, their figures in the JSON
    from msprof_compare.report import ranks_report

    many = [dict(doc["ranks"][0], rank=r) for r in range(33)]
    first = ", ".join(f"rank {r} {said[0].split(' ', 2)[2]}" for r in range(32))
    assert ranks_report._window_text(many).endswith(
        f"the comparison side's {first}, ... (33 in all) (JSON: ranks[].export_window)")
    # a window that holds no copy task (read, none in it) gives 0 copies; null is for copy tasks never read
    from msprof_compare.compare.verdict import ExportWindow

    ns = doc["ranks"][0]["export_window"]["ns"]
    assert {k: v for k, v in ranks_report._window_record(ExportWindow("comparison", ns)).items()
            if k.startswith("copies")} == {"copies": 0, "copies_ns": 0}
    assert ranks_report._window_record(ExportWindow("comparison", ns, copies=-1))["copies"] is None
    gate = ranks_overview(compare_ranks(str(text), str(db), enable_api_compare=True, fail_on_regression=1000))
    assert [r["export_window"] for r in gate["ranks"]] == [r["export_window"] for r in doc["ranks"]]
    same = ranks_overview(compare_ranks(str(db), str(db), enable_profiling_compare=True))
    assert not any("export_window" in r for r in same["ranks"])


def test_rank_overview_workbook_names_no_json_the_run_does_not_write(samples, tmp_path):
    """Text level 1 -> DB level 1, rank 0 alone, with the default --output_format xlsx: no overview JSON is
    written, yet row 2 sent the reader to "JSON: ranks[].export_window" for what the DB side's window holds. It
    points to the rank's Summary, which says it (the figures and words by SQL on the rank's DB)."""
    import openpyxl
    from test_bad_corpus import run_cli

    text, db = samples / "msinsight/test/data/pytorch/text/level1", samples / "msinsight/test/data/pytorch/db/level1"
    out = tmp_path / "xlsx"
    code, _, _ = run_cli(["-bp", str(text), "-d", str(db), "--output_path", str(out), "--rank_list", "0",
                          "--enable_profiling_compare"])
    assert code == 0 and not list(out.glob("*.json"))
    dbf = _db_file(db / "rank0_ascend_pt")
    _, outside = _db_window(dbf)

    def texts(path) -> list[str]:
        book = openpyxl.load_workbook(path, read_only=True)
        try:
            return [str(c) for row in book.worksheets[0].iter_rows(values_only=True) for c in row if c]
        finally:
            book.close()

    note = next(t for t in texts(next(out.glob("performance_comparison_result_ranks_*.xlsx"))) if "Job" in t)
    assert ("E2E and Free Time of a DB export count its time outside its computing and communication, which a text "
            f"export's leave out: the comparison side's rank 0 {_ms(outside)} ms (each rank's Summary says what it "
            "holds)") in note.splitlines() and "JSON" not in note
    summary = texts(next(out.glob("performance_comparison_result_rank0_*.xlsx")))
    assert any(f"holds {_db_held(dbf)}, which a text export's leaves out" in t for t in summary)
