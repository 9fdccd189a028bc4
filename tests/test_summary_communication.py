"""Where the Summary says where a change of communication comes from, on NPU exports (the msinsight AlexNet samples,
two ranks of one DDP job per level; PROVENANCE.md): how the communication groups' uncovered time split between Wait
and Transmit (DB level 2 -> level 1), why two Level0 DB exports' communication cannot be broken down by op, and a
kernel-only run's HCCL op among the kernel contributors. Every figure is read from the raw files here: SQL on the
DBs (reference-1 §7.3 5-7: the not-overlapped windows, the least-waiting plane's Notify_Wait inside them), and
kernel_details.csv's rows; the sentences are checked on each face that shows the note under the contributors
(console, JSON, Summary sheet, the regression gate's message)."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest
from dbutil import sql
from spans import minus, union
from test_export_switch import _db_file, _db_window

from msprof_compare import compare
from msprof_compare.report.json_report import to_document
from msprof_compare.report.summary_console import render_explain

DB = "msinsight/test/data/pytorch/db"
TEXT = "msinsight/test/data/pytorch/text"


def _length(spans: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in spans)


def _within(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """ns of the union ``a`` inside the union ``b``."""
    return _length(a) - _length(minus(a, b))


def _raw_split(export: Path) -> tuple[int, int]:
    """(Wait, Transmit) of the export's one communication group, ns: the not-overlapped windows (the union of compute
    tasks and communication ops less the compute tasks), the Notify_Wait of the plane that waits least inside them,
    and the rest of the ops' time inside them (reference-1 §7.3 5 and 7)."""
    db = _db_file(export)
    assert sql(db, "SELECT count(DISTINCT groupName) FROM COMMUNICATION_OP") == [(1,)]
    # no RDMASend: every Notify_Wait is a wait candidate (the history rule of reference-1 §5.7 excludes none)
    assert sql(db, "SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN STRING_IDS s ON s.id = c.taskType "
                   "WHERE s.value = 'RDMASend'") == [(0,)]
    compute = union(sql(db, "SELECT startNs, endNs FROM TASK JOIN COMPUTE_TASK_INFO USING (globalTaskId)"))
    ops = union(sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP"))
    windows = minus(union(compute + ops), compute)
    notify = ("FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType "
              "WHERE s.value = 'Notify_Wait'")
    plane = sql(db, f"SELECT c.planeId {notify} GROUP BY c.planeId ORDER BY sum(t.endNs - t.startNs) LIMIT 1")[0][0]
    waits = union(sql(db, f"SELECT t.startNs, t.endNs {notify} AND c.planeId = ?", (plane,)))
    wait = _within(waits, windows)
    return wait, _within(ops, windows) - wait


def _ms(ns: int) -> str:
    return f"{Decimal(ns) / 10**6:.3f}"


def _signed(ns: int) -> str:
    return f"{Decimal(ns) / 10**6:+.3f}"


def _faces(res, tmp_path: Path) -> dict[str, list[str]]:
    """The lines of the note under the contributors as each face gives them: the console's, the JSON's, the Summary
    sheet's rows (column A's texts) and, where the run regressed, the gate's message (its lines, indented)."""
    book = openpyxl.load_workbook(res.to_excel(tmp_path), read_only=True)
    try:
        cells = [c for row in book["Summary"].iter_rows(values_only=True) for c in row if isinstance(c, str)]
    finally:
        book.close()
    faces = {"console": render_explain(res.frames, res.verdict).splitlines(),
             "json": to_document(res)["summary"]["contributors_note_lines"], "sheet": cells}
    code, message = res.regression_gate(0)
    if code == 3:  # a run that regressed: the gate's message lists the contributors and the note under them
        faces["gate"] = [line.strip() for line in message.splitlines()]
    return faces


@pytest.mark.parametrize("mirror", [False, True], ids=["level2-level1", "level1-level2"])
def test_the_communication_change_is_split_into_wait_and_transmit(samples, tmp_path, mirror):
    """DB level 2 -> level 1: the waterfall's communication group step +7.991 ms is Wait 0.006 -> 2.676 ms and
    Transmit 90.075 -> 95.396 ms by the raw DBs; the note under the contributors says so on every face, and the
    mirror run says it the other way round."""
    l2, l1 = samples / DB / "level2/rank0_ascend_pt", samples / DB / "level1/rank0_ascend_pt"
    (wb, tb), (wc, tc) = _raw_split(l2), _raw_split(l1)
    assert (wb, wc, tb, tc) == (5_540, 2_675_633, 90_075_159, 95_396_314)
    if mirror:
        l2, l1, wb, wc, tb, tc = l1, l2, wc, wb, tc, tb
    res = compare(str(l2), str(l1))
    step = res.frames["waterfall"].set_index("Step").loc[
        "Group 90.91.105.46%enp189s0f0_60000_0 Communication (uncovered)"]
    assert (int(step["Base(ns)"]), int(step["Comparison(ns)"])) == (wb + tb, wc + tc)  # the groups' time, whole
    said = [f"Of the communication groups' uncovered time ({_signed(wc + tc - wb - tb)} ms), Wait changed by "
            f"{_signed(wc - wb)} ms, {_ms(wb)} ms -> {_ms(wc)} ms, and Transmit by {_signed(tc - tb)} ms, {_ms(tb)} ms "
            f"-> {_ms(tc)} ms (OverallMetrics' Wait and Transmit rows).",
            "Wait is this rank waiting in its collectives for slower peers: the rank-by-rank compare of the job's "
            "ranks gives each rank's Wait, and the slowest rank waits least.",
            "Transmit is moving the data: more data, or a slower link."]
    assert ("+7.991", "+2.670", "+5.321") == tuple(_signed((-1 if mirror else 1) * v) for v in (
        wc + tc - wb - tb, wc - wb, tc - tb))
    for face, lines in _faces(res, tmp_path).items():  # the figures, then what Wait and Transmit are, a line each
        at = lines.index(said[0])
        assert lines[at:at + 3] == said, face
    assert max(map(len, said)) < 200  # one sentence was 370 characters
    # the one-line note holds them after the Share column's basis, as sentences
    note = to_document(res)["summary"]["contributors_note"]
    assert note.endswith(f"(savings do not cancel growth); {said[0][0].lower()}{said[0][1:]} {' '.join(said[1:])[:-1]}")
    # OverallMetrics' rows give the same four figures (ms)
    om = res.sheet("OverallMetrics")
    rows = {str(r[0]).strip(): r for r in om.itertuples(index=False)}
    assert (rows["Wait"][1], rows["Wait"][4], rows["Transmit"][1], rows["Transmit"][4]) == (
        wb / 1e6, wc / 1e6, tb / 1e6, tc / 1e6)


def test_the_split_keeps_its_lines_under_a_wrapper_block(samples, tmp_path):
    """Where the note opens with the wrapper block (each side's operators under one top-level op of another name),
    the parts after its advice held the Wait / Transmit figures and both words in one line, which every other note
    gives a line each. The DB level 2 -> level 1 result, its contributors marked as two wrappers (its top two
    operator-level rows, 10 and 20 ms: no NPU sample has wrappers): each face gives the three lines, figures by SQL."""
    l2, l1 = samples / DB / "level2/rank0_ascend_pt", samples / DB / "level1/rank0_ascend_pt"
    (wb, tb), (wc, tc) = _raw_split(l2), _raw_split(l1)
    res = compare(str(l2), str(l1))
    contrib = res.frames["contributors"]
    contrib.attrs.update(wrappers=(contrib["Name"].iloc[0], 10.0, contrib["Name"].iloc[1], 20.0), details_off=False)
    said = ["(OverallMetrics' Wait and Transmit rows).",
            "Wait is this rank waiting in its collectives for slower peers: the rank-by-rank compare of the job's "
            "ranks gives each rank's Wait, and the slowest rank waits least.",
            "Transmit is moving the data: more data, or a slower link."]
    figures = (f"Wait changed by {_signed(wc - wb)} ms, {_ms(wb)} ms -> {_ms(wc)} ms, and Transmit by "
               f"{_signed(tc - tb)} ms, {_ms(tb)} ms -> {_ms(tc)} ms ")
    for face, lines in _faces(res, tmp_path).items():
        assert f"- base {contrib['Name'].iloc[0]} 10.000 ms" in [t.strip() for t in lines], face  # the wrapper block
        at = next(i for i, t in enumerate(lines) if t.startswith("To pair them"))
        assert lines[at].endswith(figures + said[0]) and lines[at + 1:at + 3] == said[1:], face


def test_a_run_of_the_time_breakdown_alone_says_the_split_under_its_steps(samples, tmp_path):
    """--enable_profiling_compare alone: the contributors are the waterfall steps, and the note under them is the
    Wait / Transmit sentence alone."""
    l2, l1 = samples / DB / "level2/rank0_ascend_pt", samples / DB / "level1/rank0_ascend_pt"
    (wb, tb), (wc, tc) = _raw_split(l2), _raw_split(l1)
    res = compare(str(l2), str(l1), enable_profiling_compare=True)
    assert res.frames["contributors"]["Level"].iloc[0] == "category"
    lines = to_document(res)["summary"]["contributors_note_lines"]
    assert lines == [f"Note: of the communication groups' uncovered time ({_signed(wc + tc - wb - tb)} ms), Wait "
                     f"changed by {_signed(wc - wb)} ms, {_ms(wb)} ms -> {_ms(wc)} ms, and Transmit by "
                     f"{_signed(tc - tb)} ms, {_ms(tb)} ms -> {_ms(tc)} ms (OverallMetrics' Wait and Transmit rows).",
                     "Wait is this rank waiting in its collectives for slower peers: the rank-by-rank compare of the "
                     "job's ranks gives each rank's Wait, and the slowest rank waits least.",
                     "Transmit is moving the data: more data, or a slower link."]
    console = render_explain(res.frames, res.verdict).splitlines()
    at = console.index(lines[0])
    assert console[at:at + 3] == lines


@pytest.mark.parametrize("pair", [
    (f"{DB}/level1/rank0_ascend_pt", f"{DB}/level0/rank0_ascend_pt"),  # Level0: its HCCL tasks have no type
    (f"{TEXT}/level2/rank0_ascend_pt", f"{TEXT}/level1/rank0_ascend_pt"),  # least-waiting planes without a wait
], ids=["db-level1-level0", "text-level2-level1"])
def test_no_split_where_a_side_does_not_measure_wait(samples, pair):
    """Where a side's Wait Time is no measurement (the console table's notes say why), the change is not split:
    a 0 that reads nothing would be a fall of the wait."""
    res = compare(*(str(samples / p) for p in pair))
    notes = res.summary["notes"]
    assert any("Wait Time" in n and ("not a measurement" in n or "plane that waits least" in n) for n in notes)
    assert res.frames["contributors"].attrs["wait_split"] is None
    assert "Wait (" not in (to_document(res)["summary"]["contributors_note"] or "")


def _raw_communication(export: Path) -> int:
    """ns of communication no compute task overlaps: the union of compute tasks and communication ops, less the
    compute tasks' union (reference-1 §7.3 5)."""
    db = _db_file(export)
    compute = union(sql(db, "SELECT startNs, endNs FROM TASK JOIN COMPUTE_TASK_INFO USING (globalTaskId)"))
    ops = union(sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP"))
    return _length(minus(union(compute + ops), compute))


def test_two_level0_exports_name_the_communication_no_sheet_breaks_down(samples, tmp_path):
    """Two Level0 DB exports (rank 0 -> rank 1 of one job): every communication op has the op type N/A, so no
    CommunicationCompare is written, and the Summary gave no communication line and no word of why, beside uncovered
    communication of 83.8 % of the E2E change; the note now gives that change, with why no sheet breaks it down by
    op."""
    r0, r1 = samples / DB / "level0/rank0_ascend_pt", samples / DB / "level0/rank1_ascend_pt"
    for export in (r0, r1):
        assert sql(_db_file(export), "SELECT s.value, count(*) FROM COMMUNICATION_OP o JOIN STRING_IDS s "
                                     "ON s.id = o.opType GROUP BY s.value") == [("N/A", 4)]
    moved = _raw_communication(r1) - _raw_communication(r0)
    e2e = _db_window(_db_file(r1))[0] - _db_window(_db_file(r0))[0]
    assert (_signed(moved), f"{moved / e2e:.1%}") == ("+4.120", "83.8%")
    res = compare(str(r0), str(r1))
    assert "CommunicationCompare" not in [s.name for s in res.sheets] and res.frames.get("communication") is None
    why = ("each side's 4 communication ops have an op type of N/A (a Level0 export records no op type), so "
           "CommunicationCompare has no family to group them by and is not written; OverallMetrics gives it by "
           "communication group")
    # under the waterfall, whose communication step gives the change and its share, the note does not repeat them
    step = res.frames["waterfall"].set_index("Step").loc[
        "Group 90.91.105.46%enp189s0f0_60000_0 Communication (uncovered)"]
    assert (int(step["Delta(ns)"]), f"{float(step['Share of E2E Diff']):.1%}") == (moved, f"{moved / e2e:.1%}")
    said = ("No sheet breaks the change of uncovered communication (the waterfall's communication steps) down by op: "
            f"{why}.")
    for face, lines in _faces(res, tmp_path).items():
        assert said in lines, face
        assert not [line for line in lines if line.startswith("Note: ") and "+4.120 ms, 83.8%" in line], face
    # the JSON's one line, read alone, gives them
    assert to_document(res)["summary"]["contributors_note"].endswith(
        f"; uncovered communication (the waterfall's communication steps) changed by {_signed(moved)} ms, "
        f"{moved / e2e:.1%} of the E2E change, which no sheet breaks down by op: {why}")
    # a run without the communication comparison writes no such sheet for a reason of its own: no word of it
    alone = compare(str(r0), str(r1), enable_profiling_compare=True)
    assert "no sheet breaks" not in " ".join(to_document(alone)["summary"]["contributors_note_lines"])


def test_the_unsplit_note_names_each_side_by_its_own_ops(samples):
    """The words where the sides differ: counts apart, and a side without any communication op (its 0 ns adds
    nothing to the waterfall's communication steps), on the Level0 pair's waterfall."""
    from msprof_compare.compare.summary_notes import unsplit_communication_note

    res = compare(str(samples / DB / "level0/rank0_ascend_pt"), str(samples / DB / "level0/rank1_ascend_pt"))
    contrib, wf = res.frames["contributors"].copy(), res.frames["waterfall"]
    na = "an op type of N/A"
    for sides, ops in (
            (((4, na, True), (5, na, True)), "the base side's 4 and the comparison side's 5 communication ops have an "
                                             "op type of N/A (a Level0 export records no op type)"),
            (((1, na, True), (0, "", False)),
             "the base side's 1 communication op has an op type of N/A (a Level0 export records no op type); the "
             "comparison side has no communication op"),
            (((4, na, False), (4, "no op type (COMMUNICATION_OP.opType is NULL or absent)", False)),
             "the base side's 4 communication ops have an op type of N/A and the comparison side's 4 communication ops "
             "have no op type (COMMUNICATION_OP.opType is NULL or absent)")):
        contrib.attrs["communication_unsplit"] = sides
        assert f"which no sheet breaks down by op: {ops}, so CommunicationCompare" in unsplit_communication_note(
            contrib, wf)
    contrib.attrs["communication_unsplit"] = None
    assert unsplit_communication_note(contrib, wf) == ""


def test_one_side_with_op_rows_keeps_the_communication_line(samples):
    """Level 1 -> Level0: the level-1 side has op rows, so CommunicationCompare is written and the communication
    line says the Level0 side has none, as before; the note adds nothing."""
    res = compare(str(samples / DB / "level1/rank0_ascend_pt"), str(samples / DB / "level0/rank0_ascend_pt"))
    assert res.frames["communication"] is not None
    assert res.frames["contributors"].attrs["communication_unsplit"] is None
    assert "no sheet breaks" not in (to_document(res)["summary"]["contributors_note"] or "")


def _hccl_ms(export: Path) -> tuple[Decimal, list[str]]:
    """kernel_details.csv's HCCL ops (Accelerator Core HCCL, a valid Type): their summed Duration(us) in ms, and
    their types."""
    with open(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Accelerator Core"].strip() == "HCCL"]
    return sum(Decimal(r["Duration(us)"]) for r in rows) / 1000, sorted({r["Type"].strip() for r in rows})


@pytest.mark.parametrize("options, absent", [
    ({"enable_kernel_compare": True}, "; this run writes no OverallMetrics and no CommunicationCompare: the "
                                      "enable_profiling_compare and enable_communication_compare options add them"),
    ({"enable_kernel_compare": True, "enable_communication_compare": True},
     "; this run writes no OverallMetrics: the enable_profiling_compare option adds it"),
], ids=["kernels-alone", "with-communication"])
def test_a_kernel_contributor_that_is_an_hccl_op_is_marked_as_communication(samples, tmp_path, options, absent):
    """Text level 2 -> level 1 with the kernel comparison alone: the top kernel contributor, hcom_allReduce_ (+6.019
    ms by kernel_details.csv), is the all-reduce, which the note now says, as it says of an operator holding one."""
    l2, l1 = samples / TEXT / "level2/rank0_ascend_pt", samples / TEXT / "level1/rank0_ascend_pt"
    (base, types), (comp, types1) = _hccl_ms(l2), _hccl_ms(l1)
    assert types == types1 == ["hcom_allReduce_"] and f"{comp - base:+.3f}" == "+6.019"
    res = compare(str(l2), str(l1), **options)
    top = res.frames["contributors"].iloc[0]
    assert (top["Level"], top["Name"], top["Diff(ms)"]) == ("kernel", "hcom_allReduce_", float(comp - base))
    said = ("Note: hcom_allReduce_ is collective communication, not computing: an HCCL op, which kernel_details.csv "
            "lists among the kernels (Accelerator Core HCCL); the time breakdown (OverallMetrics, the waterfall) "
            f"counts it as communication and CommunicationCompare breaks it down by task{absent}.")
    assert to_document(res)["summary"]["contributors_note_lines"] == [said]
    assert said in render_explain(res.frames, res.verdict).splitlines()


def _with_hccl_kernel_type(export: Path, dest: Path, core: str = "HCCL") -> Path:
    """A copy of a real text export whose op_statistic.csv gains the row of its HCCL ops, as op_statistic.csv writes
    a kernel type: OP Type, Core Type HCCL, Count and the Total / Min / Avg / Max Time(us) of kernel_details.csv's
    HCCL rows (Accelerator Core HCCL), and their Ratio(%) of the new total. No sample's op_statistic.csv lists its
    HCCL ops (the text level-1 export's totals add up to its Computing Time without its 4 all-reduce ops)."""
    import shutil

    shutil.copytree(export, dest)
    with open(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Accelerator Core"].strip() == core]
    (kind,) = {r["Type"].strip() for r in rows}
    durs = [Decimal(r["Duration(us)"].strip()) for r in rows]
    stat = dest / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv"
    with open(stat, newline="") as f:
        total = sum(Decimal(r["Total Time(us)"]) for r in csv.DictReader(f)) + sum(durs)
    avg = (sum(durs) / len(durs)).quantize(Decimal("0.001"))
    ratio = (sum(durs) * 100 / total).quantize(Decimal("0.001"))
    with open(stat, "a", newline="") as f:
        f.write(f"{kind},{core},{len(durs)},{sum(durs)},{min(durs)},{avg},{max(durs)},{ratio}\n")
    return dest


def test_a_kernel_type_contributor_that_is_an_hccl_op_is_marked_as_communication(samples, tmp_path):
    """--use_kernel_type, text level 2 -> level 1, each op_statistic.csv given the row of its HCCL ops
    (``_with_hccl_kernel_type``): the top contributor, hcom_allReduce_-HCCL (+6.019 ms by kernel_details.csv), is
    the all-reduce, which the note says as it says of a kernel contributor that is one; it read as a kernel type
    like the others."""
    l2, l1 = samples / TEXT / "level2/rank0_ascend_pt", samples / TEXT / "level1/rank0_ascend_pt"
    (base, _), (comp, _) = _hccl_ms(l2), _hccl_ms(l1)
    b = _with_hccl_kernel_type(l2, tmp_path / "l2" / "rank0_ascend_pt")
    c = _with_hccl_kernel_type(l1, tmp_path / "l1" / "rank0_ascend_pt")
    res = compare(str(b), str(c), enable_kernel_compare=True, use_kernel_type=True)
    top = res.frames["contributors"].iloc[0]
    assert (top["Level"], top["Name"]) == ("kernel type", "hcom_allReduce_-HCCL")
    assert top["Diff(ms)"] == pytest.approx(float(comp - base), abs=1e-9)
    assert res.frames["contributors"].attrs["communication_kernels"] == ["hcom_allReduce_-HCCL"]
    said = ("Note: hcom_allReduce_-HCCL is collective communication, not computing: HCCL ops, which op_statistic.csv "
            "lists among the kernel types (Core Type HCCL); the time breakdown (OverallMetrics, the waterfall) counts "
            "it as communication and CommunicationCompare breaks it down by task; this run writes no OverallMetrics "
            "and no CommunicationCompare: the enable_profiling_compare and enable_communication_compare options add "
            "them.")
    assert to_document(res)["summary"]["contributors_note_lines"] == [said]
    assert said in render_explain(res.frames, res.verdict).splitlines()
    # the real exports' kernel types hold no HCCL op: none is marked
    plain = compare(str(l2), str(l1), enable_kernel_compare=True, use_kernel_type=True).frames["contributors"]
    assert plain["Level"].iloc[0] == "kernel type" and plain.attrs["communication_kernels"] == []


def _as_communication_core(export: Path, dest: Path, unnamed: bool = False) -> Path:
    """A copy of a real text export whose HCCL ops' Accelerator Core reads COMMUNICATION, as newer torch_npu writes
    it (msinsight's st/level2: every hcom_ row of rank 0's kernel_details.csv, none HCCL); ``unnamed``: their Name
    also loses its ``hcom_`` prefix (the Type keeps it), so the core alone says they are HCCL ops."""
    import io
    import shutil

    shutil.copytree(export, dest)
    kd = dest / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(kd.read_text(encoding="utf-8"), newline="")))
    col, name = rows[0].index("Accelerator Core"), rows[0].index("Name")
    for r in rows[1:]:
        if r[col].strip() == "HCCL":
            r[col] = "COMMUNICATION"
            r[name] = r[name].removeprefix("hcom_") if unnamed else r[name]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    kd.write_text(out.getvalue(), encoding="utf-8")
    return dest


def test_an_hccl_op_of_core_communication_is_said_to_be_marked_by_that_core(samples, tmp_path):
    """Text level 2 -> level 1, each HCCL op's Accelerator Core rewritten COMMUNICATION as newer torch_npu writes it:
    the all-reduce (+6.019 ms) is still communication, by that core, and the note names the cell as the file writes
    it, not "(Accelerator Core HCCL)", which no row holds; so it does where the ops' names lose their hcom_ prefix
    too (the core alone marks them: before, no note). A kernel type hcom_allReduce_-COMMUNICATION (op_statistic.csv's
    row of them) is marked by its Core Type COMMUNICATION, not "(Core Type HCCL)"."""
    with open(samples / "msinsight/test/st/level2/rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
              newline="") as f:
        cores = {r["Accelerator Core"] for r in csv.DictReader(f) if r["Type"].startswith("hcom_")}
    assert cores == {"COMMUNICATION"}
    l2, l1 = samples / TEXT / "level2/rank0_ascend_pt", samples / TEXT / "level1/rank0_ascend_pt"
    (base, _), (comp, _) = _hccl_ms(l2), _hccl_ms(l1)
    b = _as_communication_core(l2, tmp_path / "l2" / "rank0_ascend_pt")
    c = _as_communication_core(l1, tmp_path / "l1" / "rank0_ascend_pt")
    res = compare(str(b), str(c), enable_kernel_compare=True, enable_profiling_compare=True,
                  enable_communication_compare=True)
    top = res.frames["contributors"].iloc[0]
    assert (top["Name"], top["Diff(ms)"]) == ("hcom_allReduce_", float(comp - base))
    said = ("Note: hcom_allReduce_ is collective communication, not computing: an HCCL op, which kernel_details.csv "
            "lists among the kernels (Accelerator Core COMMUNICATION); the time breakdown (OverallMetrics, the "
            "waterfall) counts it as communication and CommunicationCompare breaks it down by task.")
    assert to_document(res)["summary"]["contributors_note_lines"] == [said]
    b2 = _as_communication_core(l2, tmp_path / "l2u" / "rank0_ascend_pt", unnamed=True)
    c2 = _as_communication_core(l1, tmp_path / "l1u" / "rank0_ascend_pt", unnamed=True)
    res = compare(str(b2), str(c2), enable_kernel_compare=True, enable_profiling_compare=True,
                  enable_communication_compare=True)
    assert res.frames["contributors"]["Name"].iloc[0] == "hcom_allReduce_"
    assert to_document(res)["summary"]["contributors_note_lines"] == [said]
    # the kernel type: op_statistic.csv's row of those ops, of Core Type COMMUNICATION
    b, c = (_with_hccl_kernel_type(d, tmp_path / f"{d.parent.name}t" / d.name, "COMMUNICATION") for d in (b, c))
    res = compare(str(b), str(c), enable_kernel_compare=True, use_kernel_type=True, enable_profiling_compare=True,
                  enable_communication_compare=True)
    top = res.frames["contributors"].iloc[0]
    assert (top["Level"], top["Name"]) == ("kernel type", "hcom_allReduce_-COMMUNICATION")
    assert top["Diff(ms)"] == pytest.approx(float(comp - base), abs=1e-9)
    assert to_document(res)["summary"]["contributors_note_lines"] == [
        "Note: hcom_allReduce_-COMMUNICATION is collective communication, not computing: HCCL ops, which "
        "op_statistic.csv lists among the kernel types (Core Type COMMUNICATION); the time breakdown "
        "(OverallMetrics, the waterfall) counts it as communication and CommunicationCompare breaks it down by task."]


def test_an_hccl_op_of_core_hccl_on_one_side_and_communication_on_the_other_names_both_cores(samples, tmp_path):
    """Text level 2 as the file writes it (core HCCL) -> level 1 with its HCCL ops' core rewritten COMMUNICATION, as
    two torch_npu versions' exports do: the all-reduce contributor is marked by both cores, the base's first; the
    note named the base's alone, "(Accelerator Core HCCL)", a cell the comparison's file does not hold."""
    l2, l1 = samples / TEXT / "level2/rank0_ascend_pt", samples / TEXT / "level1/rank0_ascend_pt"
    (base, types), (comp, _) = _hccl_ms(l2), _hccl_ms(l1)
    assert types == ["hcom_allReduce_"]
    c = _as_communication_core(l1, tmp_path / "l1" / "rank0_ascend_pt")
    res = compare(str(l2), str(c), enable_kernel_compare=True, enable_profiling_compare=True,
                  enable_communication_compare=True)
    top = res.frames["contributors"].iloc[0]
    assert (top["Name"], top["Diff(ms)"]) == ("hcom_allReduce_", float(comp - base))
    assert to_document(res)["summary"]["contributors_note_lines"] == [
        "Note: hcom_allReduce_ is collective communication, not computing: an HCCL op, which kernel_details.csv "
        "lists among the kernels (Accelerator Core HCCL / COMMUNICATION); the time breakdown (OverallMetrics, the "
        "waterfall) counts it as communication and CommunicationCompare breaks it down by task."]


def test_db_kernels_hold_no_hccl_op(samples):
    """A DB export's KernelCompare holds its compute tasks alone: no kernel contributor is an HCCL op, none is
    marked."""
    res = compare(str(samples / DB / "level2/rank0_ascend_pt"), str(samples / DB / "level1/rank0_ascend_pt"),
                  enable_kernel_compare=True)
    names = res.frames["contributors"]["Name"].tolist()
    assert names and not any(n.startswith("hcom_") for n in names)
    assert res.frames["contributors"].attrs["communication_kernels"] == []
    assert "collective communication" not in (to_document(res)["summary"]["contributors_note"] or "")


@pytest.mark.parametrize("pair", [
    (f"{TEXT}/level1/rank0_ascend_pt", f"{DB}/level0/rank0_ascend_pt"),
    (f"{DB}/level2/rank0_ascend_pt", f"{TEXT}/level0/rank0_ascend_pt"),
    (f"{DB}/level1/rank0_ascend_pt", f"{DB}/level2/rank0_ascend_pt"),
], ids=["text-l1-db-l0", "db-l2-text-l0", "db-l1-db-l2"])
def test_wait_is_measured_where_the_table_notes_do_not_say_otherwise(samples, pair):
    """One rule (``overall.wait_zero``) for the console table's notes on a Wait Time that is no measurement and the
    Summary's split of communication into Wait and Transmit (``wait_measured``): each side is measured exactly where
    no note under the table names its Wait Time; a DB side is measured exactly where its HCCL tasks name
    Notify_Wait (SQL: a Level0 export's task types are N/A)."""
    from msprof_compare.api import RunContext
    from msprof_compare.compare import overall

    res = compare(*(str(samples / p) for p in pair), enable_profiling_compare=True)
    base, comp = overall.breakdowns(RunContext(res.base, res.comparison, res.options))
    notes = [n for n in res.summary["notes"] if "Wait Time" in n]
    for side, bd, path in (("Base", base, pair[0]), ("Comparison", comp, pair[1])):
        said = [n for n in notes if n.startswith((f"{side} row:", "Both rows:"))]
        assert overall.wait_measured(bd) is not bool(said), (side, notes)
        if path.startswith(DB):
            (waits,) = sql(_db_file(samples / path), "SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN STRING_IDS s "
                                                     "ON s.id = c.taskType WHERE s.value = 'Notify_Wait'")[0]
            assert overall.wait_measured(bd) is (waits > 0), side
    assert (res.frames["contributors"].attrs["wait_split"] is None) is not all(
        overall.wait_measured(bd) for bd in (base, comp))
