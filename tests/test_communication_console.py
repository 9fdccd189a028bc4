"""Where communication grew (compare/communication_summary.py): the console's "Top Communication Contributors"
and communication line, the API's ``communication_contributors`` / ``communication_totals`` and JSON
``summary.communication*``, against figures computed here from the inputs themselves (trace_view.json's HCCL
process, communication.json, the DB's COMMUNICATION_OP / COMMUNICATION_TASK_INFO, a Kineto trace's NCCL kernels)
and by hand from CommunicationCompare rows."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cliutil import finish
from dbutil import sql

from msprof_compare.api import compare
from msprof_compare.compare import communication_summary
from msprof_compare.compare.communication import COLUMNS, SPANS, comm_rows
from msprof_compare.compare.table import Sheet, frame_from_rows
from msprof_compare.report import json_report
from msprof_compare.report.summary_console import (
    communication_line,
    render_communication,
    render_communication_contributors,
)

REPO = Path(__file__).resolve().parents[1]
TEXT = "msinsight/test/data/pytorch/text"
DB = "msinsight/test/data/pytorch/db"
DB_FILE = "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
ALEXNET = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
#: The tool holds times as whole ns: a figure summed from the inputs' µs (0.00071875 µs and finer) may differ by
#: up to 0.5 ns an event (112 Notify_Wait tasks: under 0.1 µs)
NS = 1e-4
NCCL_PAIR = ("hta/tests/data/trace_filter/sampled_rank-0.json.gz", "hta/tests/data/trace_filter/sampled_rank-1.json.gz")


def hccl_by_hand(folder: Path) -> tuple[Decimal, dict[str, Decimal]]:
    """(op ms, {task name: ms}) of a text export's trace_view.json: the X events of its HCCL process, ops on the
    threads named ...Communication..., tasks on the others (every task of these runs lies inside an op)."""
    events = json.loads((folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(), parse_float=Decimal)
    procs = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
             and e["args"]["name"] in ("HCCL", "Communication")}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] in procs}
    ops, tasks = Decimal(0), defaultdict(Decimal)
    for e in events:
        if e.get("ph") == "X" and e["pid"] in procs:
            if "Communication" in threads.get((e["pid"], e["tid"]), ""):
                ops += Decimal(str(e["dur"]))
            else:
                tasks[e["name"]] += Decimal(str(e["dur"]))
    return ops / 1000, {k: v / 1000 for k, v in tasks.items()}


def nccl_ms(path: Path) -> float:
    """Summed duration (ms) of the trace's kernels named nccl*."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        events = json.load(fh)["traceEvents"]
    return sum(e["dur"] for e in events if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel"
               and e["name"].lower().startswith("nccl")) / 1000


@pytest.fixture(scope="module")
def pair1():
    samples = REPO.parent / "shared" / "samples"
    if not (samples / TEXT).is_dir():
        pytest.skip("sample data not found")
    return compare(str(samples / TEXT / "level1/rank0_ascend_pt"), str(samples / TEXT / "level2/rank0_ascend_pt"),
                   enable_communication_compare=True)


def test_npu_text_pair1_against_the_trace(pair1, samples):
    """Reference pair 1: allreduce 105.992 -> 99.973 ms (-6.019 ms), while its Notify_Wait tasks grew from 112.541
    to 134.458 ms, the task that changed most (Reduce_Inline +0.45, Memcpy +0.70, Notify_Record -0.0005)."""
    base_ops, base_tasks = hccl_by_hand(samples / TEXT / "level1/rank0_ascend_pt")
    comp_ops, comp_tasks = hccl_by_hand(samples / TEXT / "level2/rank0_ascend_pt")
    # communication.json's "Total Op Info" says the same base total
    info = json.loads((samples / TEXT / "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json").read_text())
    assert float(base_ops) == pytest.approx(
        info["step50"]["collective"]["Total Op Info"]["Communication Time Info"]["Elapse Time(ms)"], abs=1e-9)
    c = pair1.communication_contributors
    assert c["Name"].tolist() == ["allreduce"]
    assert c["Base(ms)"].tolist() == pytest.approx([float(base_ops)], abs=NS)
    assert c["Comparison(ms)"].tolist() == pytest.approx([float(comp_ops)], abs=NS)
    assert c["Diff(ms)"].tolist() == pytest.approx([float(comp_ops - base_ops)], abs=NS)
    assert (c["Share"].tolist(), c["Cumulative Share"].tolist()) == ([1.0], [1.0])
    t = pair1.communication_totals
    changes = {k: comp_tasks[k] - base_tasks[k] for k in base_tasks}
    top = max(changes, key=lambda k: abs(changes[k]))
    assert top == "Notify_Wait"
    assert t["task_ties"] == []  # no other task changed by as much
    assert {k: v for k, v in t.items() if k != "task_ties"} == pytest.approx({
        "op_types": 1, "changed": 1, "base_recorded": True, "comparison_recorded": True,
        "base_ms": float(base_ops), "comparison_ms": float(comp_ops), "diff_ms": float(comp_ops - base_ops),
        "diff_pct": float((comp_ops - base_ops) / base_ops * 100), "base_tasks_recorded": True,
        "comparison_tasks_recorded": True, "task": "Notify_Wait", "task_op": "allreduce",
        "task_base_ms": float(base_tasks[top]), "task_comparison_ms": float(comp_tasks[top]),
        "task_diff_ms": float(changes[top]), "task_diff_pct": float(changes[top] / base_tasks[top] * 100),
        # a communication-only run has no waterfall, whose communication steps are the part no computing overlaps
        "uncovered_base_ms": None, "uncovered_comparison_ms": None, "uncovered_diff_ms": None,
        # every op has a family (hcom_allReduce_...)
        "no_family_base_ms": 0.0, "no_family_comparison_ms": 0.0})
    # with the time breakdown: step_trace_time.csv's Communication(Not Overlapped), in us
    full = compare(str(samples / TEXT / "level1/rank0_ascend_pt"), str(samples / TEXT / "level2/rank0_ascend_pt"),
                   enable_communication_compare=True, enable_profiling_compare=True).communication_totals
    assert [full[f"uncovered_{k}_ms"] for k in ("base", "comparison", "diff")] == pytest.approx(
        [101.963203, 95.962016, -6.001187], abs=1e-9)
    assert {k: v for k, v in full.items() if not k.startswith("uncovered_")} == \
        {k: v for k, v in t.items() if not k.startswith("uncovered_")}
    stt = [(samples / TEXT / f"level{n}/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv").read_text()
           .splitlines()[1].split(",")[2] for n in (1, 2)]
    assert stt == ["101963.203", "95962.01599999999"]
    text = render_communication(pair1.frames).splitlines()
    assert text[1] == ("| Top Communication Contributors (1 row covers 100.0% of the communication ops' duration "
                       "change) |")
    assert text[5] == ("| 1 | allreduce               |  105.992 |         99.973 |   -6.019 | 100.0% |"
                       "           100.0% |")
    # Notify_Wait runs on several planes at once, so its total exceeds the all-reduce's own time: the line says so
    assert comp_tasks["Notify_Wait"] > comp_ops
    assert text[-2:] == ["Communication time (CommunicationCompare's op rows) 105.992 ms -> 99.973 ms (-6.019 ms, "
                         "-5.68%).",
                         "The task that changed most: Notify_Wait (in allreduce) 112.541 ms -> 134.458 ms (+21.917 ms, "
                         "+19.48%), the other way from the communication time: its total is summed over parallel "
                         "planes, so it may exceed the op's time and need not follow it."]


def test_figures_are_the_reference_sheets(samples, reference_outputs):
    """The totals equal the original's CommunicationCompare of pairs 1-3 (its Total Duration(us) columns)."""
    openpyxl = pytest.importorskip("openpyxl")
    pairs = {"1-npu-text-l1-vs-l2": (f"{TEXT}/level1", f"{TEXT}/level2"),
             "2-npu-text-l0-rank0-vs-rank1": (f"{TEXT}/level0", f"{TEXT}/level0"),
             "3-npu-db-l1-vs-l2": (f"{DB}/level1", f"{DB}/level2")}
    for ref, (b, c) in pairs.items():
        ranks = ("rank0", "rank1") if "rank1" in ref else ("rank0", "rank0")
        res = compare(str(samples / b / f"{ranks[0]}_ascend_pt"), str(samples / c / f"{ranks[1]}_ascend_pt"),
                      enable_communication_compare=True)
        wb = openpyxl.load_workbook(reference_outputs / ref / "performance_comparison_result.xlsx", read_only=True)
        rows = list(wb["CommunicationCompare"].iter_rows(min_row=4, values_only=True))
        wb.close()  # read-only: the file stays open until close()
        op = [r for r in rows if r[1] not in (None, "|")]
        t = res.communication_totals
        assert (t["base_ms"], t["comparison_ms"]) == pytest.approx(
            (sum(r[4] for r in op) / 1000, sum(r[11] for r in op) / 1000), abs=NS), ref
        tasks = [r for r in rows if r[1] == "|"]
        assert t["base_tasks_recorded"] is bool(tasks), ref
        if tasks:  # here the two sides' task rows hold the same names in the same order
            change = [abs(r[11] - r[4]) for r in tasks]
            top = tasks[change.index(max(change))]
            assert (t["task"], t["task_base_ms"], t["task_comparison_ms"]) == pytest.approx(
                (top[2], top[4] / 1000, top[11] / 1000), abs=NS), ref


def test_npu_db_pair3_against_the_db(samples):
    """Reference pair 3 from the DBs: COMMUNICATION_OP 102.1081 -> 94.107521 ms; Notify_Wait tasks (by opId, of
    COMMUNICATION_TASK_INFO joined to TASK) 147.285446 -> 118.128141 ms, the largest task change."""
    def by_hand(level: str) -> tuple[float, dict[str, float]]:
        db = samples / DB / level / DB_FILE
        ops = sql(db, "SELECT sum(endNs - startNs) FROM COMMUNICATION_OP")[0][0] / 1e6
        tasks = dict(sql(db, "SELECT s.value, sum(t.endNs - t.startNs) / 1e6 FROM COMMUNICATION_TASK_INFO c JOIN "
                             "TASK t ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.taskType "
                             "WHERE c.opId IN (SELECT opId FROM COMMUNICATION_OP) GROUP BY s.value"))
        return ops, tasks

    (b, bt), (c, ct) = by_hand("level1"), by_hand("level2")
    res = compare(str(samples / DB / "level1/rank0_ascend_pt"), str(samples / DB / "level2/rank0_ascend_pt"),
                  enable_communication_compare=True)
    t = res.communication_totals
    top = max(bt, key=lambda k: abs(ct[k] - bt[k]))
    assert (top, t["task"], t["task_op"]) == ("Notify_Wait", "Notify_Wait", "allreduce")
    assert (t["base_ms"], t["comparison_ms"], t["diff_ms"]) == pytest.approx((b, c, c - b), abs=NS)
    assert (t["task_base_ms"], t["task_comparison_ms"]) == pytest.approx((bt[top], ct[top]), abs=NS)
    assert res.communication_contributors["Diff(ms)"].tolist() == pytest.approx([c - b], abs=NS)
    # the op time and Notify_Wait both fell (-8.001 ms, -29.157 ms): no clause that it moved against the op time
    assert (c - b < 0 and ct[top] - bt[top] < 0) and communication_line(res.frames["communication"]).endswith(
        "Notify_Wait (in allreduce) 147.285 ms -> 118.128 ms (-29.157 ms, -19.80%).")


def test_level0_pair2_has_no_task_rows(samples):
    """Reference pair 2 (level 0, rank 0 vs rank 1): ops only, 85.517 -> 68.606 ms; no task rows on either side,
    so no task is named."""
    b, bt = hccl_by_hand(samples / TEXT / "level0/rank0_ascend_pt")
    c, ct = hccl_by_hand(samples / TEXT / "level0/rank1_ascend_pt")
    assert not bt and not ct
    res = compare(str(samples / TEXT / "level0/rank0_ascend_pt"), str(samples / TEXT / "level0/rank1_ascend_pt"),
                  enable_communication_compare=True)
    t = res.communication_totals
    assert (t["base_ms"], t["comparison_ms"]) == pytest.approx((float(b), float(c)), abs=NS)
    assert (t["base_tasks_recorded"], t["comparison_tasks_recorded"], t["task"]) == (False, False, None)
    assert communication_line(res.frames["communication"]) == (
        f"Communication time (CommunicationCompare's op rows) {float(b):.3f} ms -> {float(c):.3f} ms "
        f"({float(c - b):+.3f} ms, {float((c - b) / b * 100):+.2f}%).")


def test_gpu_pair_with_nccl_kernels(samples):
    """Two ranks of a Kineto trace, NCCL SendRecv kernels on both (10 each): 396.199 -> 379.053 ms; a GPU side
    has no task rows, so no task is named. The trace has no launch flows: the kernels' correlation ids find the
    ProcessGroupNCCL ranges that name their collectives (figures in
    tests/test_gpu_collectives.py::test_correlation_links_kernels_of_a_trace_without_flows); the all-reduce
    (-63.210 ms) and the all-to-all (+47.297 ms) cover 98.9% of the change, the all-gather (-1.233 ms) not."""
    b, c = (samples / p for p in NCCL_PAIR)
    res = compare(str(b), str(c), enable_communication_compare=True)
    t = res.communication_totals
    assert (t["base_ms"], t["comparison_ms"]) == pytest.approx((nccl_ms(b), nccl_ms(c)), abs=NS)
    assert res.communication_contributors["Name"].tolist() == ["allreduce", "alltoall"]
    assert (t["base_tasks_recorded"], t["comparison_tasks_recorded"], t["task"]) == (False, False, None)


def test_gpu_side_without_collectives_reads_zero(samples):
    """Reference pair 4: a GPU trace without any collective kernel (hta's AlexNet, one GPU) against NPU level 1
    with its HCCL allreduce (105.992 ms). A Kineto trace records every kernel it ran, so the GPU side's 0 is a
    reading, no communication: the all-reduce is a contributor (0 -> 105.992 ms), the diff is the NPU side's
    whole time (no percentage of a base of 0), and the line says why the base reads 0; the session-41 audit found
    it called "no reading", an NPU export's wording, no GPU trace's."""
    comp, _ = hccl_by_hand(samples / TEXT / "level1/rank0_ascend_pt")
    assert nccl_ms(samples / ALEXNET) == 0
    res = compare(str(samples / ALEXNET), str(samples / TEXT / "level1/rank0_ascend_pt"),
                  enable_communication_compare=True)
    t = res.communication_totals
    assert (t["base_recorded"], t["comparison_recorded"], t["base_ms"], t["diff_pct"]) == (True, True, 0.0, None)
    assert (t["comparison_ms"], t["diff_ms"]) == pytest.approx((float(comp), float(comp)), abs=NS)
    assert (t["changed"], t["task"], t["base_tasks_recorded"], t["comparison_tasks_recorded"]) == (
        1, None, False, True)
    c = res.communication_contributors
    assert (c["Name"].tolist(), c["Base(ms)"].tolist()) == (["allreduce"], [0.0])
    assert c["Comparison(ms)"].tolist() == pytest.approx([float(comp)], abs=NS)
    assert render_communication(res.frames).endswith(
        "Communication time (CommunicationCompare's op rows) 0.000 ms -> 105.992 ms (+105.992 ms).\nThe base side's "
        "trace holds no collective kernel (NCCL / RCCL or other), so its 0 ms is a reading: it ran no communication, "
        "as a run on one GPU.")
    # the line said why the base side has no task row twice: "task rows on the comparison side only (the other
    # records none), so no task change is read" before the clause above


def test_gpu_pair_one_side_without_collectives(samples):
    """The B200 eager rank (73 symmetric-memory all-reduces, 2119.548 us, and one NCCL all-gather, 21.953 us, summed
    from the raw file) against vLLM's one-GPU decode, which has no collective kernel: 2.142 -> 0 ms is a change
    (the line said the decode's 0 was "no reading", as of a Level0 DB export); the all-reduce is the contributor
    (99.0 %); swapped sides mirror it."""
    eager = samples / "tracelens/tests/traces/b200/eager_trace.json.gz"
    decode = samples / "tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"
    sums: list[dict[str, Decimal]] = []
    for path in (eager, decode):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            events = json.load(fh, parse_float=Decimal)["traceEvents"]
        by: dict[str, Decimal] = defaultdict(Decimal)
        for e in events:
            name = str(e.get("name", "")).lower()
            if e.get("cat") == "kernel" and (name.startswith(("nccl", "rccl")) or "all_reduce" in name):
                by["allgather" if "allgather" in name else "allreduce"] += e["dur"]
        sums.append(by)
    assert sums == [{"allreduce": Decimal("2119.548"), "allgather": Decimal("21.953")}, {}]
    total = float(sum(sums[0].values())) / 1000
    for b, c, side in ((eager, decode, "comparison"), (decode, eager, "base")):
        res = compare(str(b), str(c), enable_communication_compare=True)
        t = res.communication_totals
        assert (t["base_recorded"], t["comparison_recorded"]) == (True, True)
        figures = (t["base_ms"], t["comparison_ms"]) if side == "comparison" else (t["comparison_ms"], t["base_ms"])
        assert figures == pytest.approx((total, 0.0), abs=NS)
        assert t["diff_ms"] == pytest.approx(-total if side == "comparison" else total, abs=NS)
        assert res.communication_contributors["Name"].tolist() == ["allreduce"]
        line = "\n".join(render_communication(res.frames).splitlines()[-2:])
        change = f"{total:.3f} ms -> 0.000 ms (-{total:.3f} ms, -100.00%)" if side == "comparison" else \
            f"0.000 ms -> {total:.3f} ms (+{total:.3f} ms)"
        assert line == (f"Communication time (CommunicationCompare's op rows) {change}.\nThe {side} "
                        "side's trace holds no collective kernel (NCCL / RCCL or other), so its 0 ms is a reading: it "
                        "ran no communication, as a run on one GPU.")


def test_db_side_with_unnamed_ops_is_not_said_to_record_none(samples, caplog):
    """Text level 0 against DB level 0 (the export switched): the DB's 4 COMMUNICATION_OP rows (89.880 ms, by SQL)
    have the op type N/A, so CommunicationCompare has only the text side's allreduce. The console said the DB
    side "recorded no communication op", against the log line that counts its 4 ops; it now says the side has no
    op row, and why there may be none."""
    db = samples / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"
    rows = sql(next((db / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db")),
               "SELECT s.value, c.endNs - c.startNs FROM COMMUNICATION_OP c JOIN STRING_IDS s ON s.id = c.opType")
    assert [t for t, _ in rows] == ["N/A"] * 4 and sum(d for _, d in rows) == 89_880_576
    text, _ = hccl_by_hand(samples / TEXT / "level0/rank0_ascend_pt")
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = compare(str(samples / TEXT / "level0/rank0_ascend_pt"), str(db), enable_communication_compare=True)
    assert [m for m in caplog.messages if "its 4 communication op(s) have an op type of N/A" in m]
    line = render_communication(res.frames)
    assert "recorded no communication op" not in line
    assert line == (f"Communication time (CommunicationCompare's op rows): base {float(text):.3f} ms, comparison no "
                    "row.\nNo communication contributor: the comparison side has no op row (no communication op, or "
                    "only ops without an op type, as a Level0 DB export's N/A: the log says which), so its 0 is no "
                    "reading.")


def test_zero_change_self_compare(pair1, samples):
    """A run against itself: nothing changed, no table, figures on both sides, no task named."""
    folder = str(samples / TEXT / "level1/rank0_ascend_pt")
    res = compare(folder, folder, enable_communication_compare=True)
    assert not len(res.communication_contributors)
    t = res.communication_totals
    assert (t["changed"], t["diff_ms"], t["task"]) == (0, 0.0, None)
    assert render_communication(res.frames) == (
        "No communication op type's total duration changed (1 op type); communication time (CommunicationCompare's "
        "op rows) 105.992 ms on both sides.\nNo task's total duration changed.")


def _sheet(base: dict, comparison: dict) -> Sheet:
    return Sheet("CommunicationCompare", COLUMNS, frame_from_rows(comm_rows(base, comparison), 17), *SPANS)


def _ns(*us: int) -> np.ndarray:
    return np.array([u * 1000 for u in us], dtype=np.int64)


def test_ties_and_positionally_paired_tasks():
    """Two op types change by the same 2 ms (+2, -2): both are listed, in the sheet's order, 50% each. Task rows
    pair by position: base [Notify_Wait 1 ms, Memcpy 2 ms] vs comparison [Memcpy 1 ms, Notify_Wait 2 ms] gives
    rows (Notify_Wait | Memcpy) and (Memcpy | Notify_Wait); by name both changed by 1 ms (a tie: the first in
    the sheet, Notify_Wait 1 -> 2 ms, is ``task``, Memcpy in ``task_ties``), where a row-wise reading would have
    said 0."""
    base = {"allreduce": {"ops": _ns(3000), "tasks": {"Notify_Wait": _ns(1000), "Memcpy": _ns(2000)}},
            "broadcast": {"ops": _ns(5000), "tasks": {}}}
    comp = {"allreduce": {"ops": _ns(5000), "tasks": {"Memcpy": _ns(1000), "Notify_Wait": _ns(2000)}},
            "broadcast": {"ops": _ns(3000), "tasks": {}}}
    sheet = _sheet(base, comp)
    rows = sheet.data
    assert rows.iloc[1, 2] == "Notify_Wait" and rows.iloc[1, 9] == "Memcpy"  # positional pairing, as the original
    cols = communication_summary._Columns(sheet)
    c = communication_summary.contributors(cols)
    assert c["Name"].tolist() == ["allreduce", "broadcast"]
    assert c["Diff(ms)"].tolist() == [2.0, -2.0] and c["Cumulative Share"].tolist() == [0.5, 1.0]
    t = json_report.records(communication_summary.totals(cols))[0]
    assert (t["task"], t["task_op"], t["task_base_ms"], t["task_comparison_ms"]) == ("Notify_Wait", "allreduce",
                                                                                    1.0, 2.0)
    assert (t["base_ms"], t["comparison_ms"], t["diff_ms"], t["changed"]) == (8.0, 8.0, 0.0, 2)
    assert t["task_ties"] == [{"task": "Memcpy", "task_op": "allreduce", "base_ms": 2.0, "comparison_ms": 1.0,
                               "diff_ms": -1.0}]
    # changed op types that net to 0: the line gives the total on both sides and says they cancel out (the table
    # lists them); both tasks that changed by 1 ms are named, not the first alone
    assert communication_line(communication_summary.totals(cols)) == (
        "Communication time (CommunicationCompare's op rows) 8.000 ms on both sides (2 op types changed, their "
        "changes cancel out: the communication contributors).\nThe 2 tasks that changed most, by as much each "
        "(their totals are summed over parallel planes, so they may exceed the op's time): Notify_Wait (in "
        "allreduce) 1.000 ms -> 2.000 ms (+1.000 ms, +100.00%) and Memcpy (in allreduce) 2.000 ms -> 1.000 ms "
        "(-1.000 ms, -50.00%).")


AGAINST = (", the other way from the communication time: its total is summed over parallel planes, so it may exceed "
           "the op's time and need not follow it")
#: The same of two tasks tied
AGAINST_2 = (", the other way from the communication time: their totals are summed over parallel planes, so they "
             "may exceed the op's time and need not follow it")


@pytest.mark.parametrize(("tasks_after", "said"), [
    ((3000, 2500), AGAINST),  # Notify_Wait -2 ms (Memcpy +0.5 ms) while the all-reduce took +1 ms
    ((8000, 2500), ""),  # Notify_Wait +3 ms, with the op time: nothing to add
    ((4000, 1000), AGAINST_2),  # both -1 ms, tied: both named, both against
    ((4000, 3000), ""),  # -1 ms and +1 ms, tied: one of them moved with the op time
])
def test_a_task_that_moved_against_the_communication_time_is_said(tasks_after, said):
    """An all-reduce 9 -> 10 ms (+1 ms) whose Notify_Wait total (summed over the planes it ran on at once) fell:
    the line named it as the task that changed most and left the reader to square a faster task with a slower op.
    Reference pair 1 the other way round (level 2 -> level 1) reads so: 99.973 -> 105.992 ms, Notify_Wait
    134.458 -> 112.541 ms. The clause follows the named tasks where every one moved against the op time."""
    names = ("Notify_Wait", "Memcpy")
    base = {"allreduce": {"ops": _ns(9000), "tasks": {n: _ns(us) for n, us in zip(names, (5000, 2000), strict=True)}}}
    comp = {"allreduce": {"ops": _ns(10000), "tasks": {n: _ns(us) for n, us in zip(names, tasks_after, strict=True)}}}
    line = communication_line(communication_summary.totals(communication_summary._Columns(_sheet(base, comp))))
    assert line.startswith("Communication time (CommunicationCompare's op rows) 9.000 ms -> 10.000 ms "
                           "(+1.000 ms, +11.11%).\nThe ")
    assert line.endswith(f"{said}.") and line.count("the other way") == (1 if said else 0)
    if tasks_after == (3000, 2500):
        # the planes said once: why the task may exceed the op's time is why it need not follow it
        assert line == ("Communication time (CommunicationCompare's op rows) 9.000 ms -> 10.000 ms (+1.000 ms, "
                        "+11.11%).\nThe task that changed most: Notify_Wait (in allreduce) 5.000 ms -> 3.000 ms "
                        f"(-2.000 ms, -40.00%){AGAINST}.")
    else:
        assert ("summed over parallel planes" in line) and line.count("planes") == 1


def test_totals_are_the_whole_ns_behind_the_sheets_us_cells():
    """The sheet's µs cells are whole ns / 1000 as floats, which read back times 1000 fall a hair under the ns for
    about 1 % of the totals under 10 ms (1.001 µs -> 1000.9999999999999): each is rounded to the nearest ns, not
    cut. Ops of 2.097151 and 2.097144 ms, a Notify_Record task of 1.001 and 1.003 µs (all such totals)."""
    base = {"allreduce": {"ops": np.array([2_097_151]), "tasks": {"Notify_Record": np.array([1001])}}}
    comp = {"allreduce": {"ops": np.array([2_097_144]), "tasks": {"Notify_Record": np.array([1003])}}}
    cols = communication_summary._Columns(_sheet(base, comp))
    assert (cols.base.tolist(), cols.comparison.tolist(), cols.tasks) == (
        [2_097_151], [2_097_144], {("allreduce", "Notify_Record"): [1001, 1003]})
    frame = communication_summary.totals(cols)
    t = json_report.records(frame)[0]
    assert (t["base_ms"], t["comparison_ms"], t["diff_ms"]) == (2.097151, 2.097144, -0.000007)
    # 7 ns and 2 ns: neither reads apart to the 0.001 ms shown, so no op type changed and no task is named
    assert (t["changed"], t["task"], t["task_base_ms"], t["task_comparison_ms"]) == (0, None, None, None)
    assert frame.attrs[communication_summary.TASKS_CHANGED] is True


def test_task_ties_go_to_the_first_row_of_the_sheet():
    """A comparison-only task row of the first op type (allreduce | Memcpy 0 -> 1 ms, row 3) comes before the base
    task rows of the next (broadcast | Memcpy 1 -> 2 ms, row 5): with equal changes, the first row's task is
    ``task``, though the base side lists broadcast's task first; the other is its tie."""
    base = {"allreduce": {"ops": _ns(9000), "tasks": {"Notify_Wait": _ns(1000)}},
            "broadcast": {"ops": _ns(9000), "tasks": {"Memcpy": _ns(1000)}}}
    comp = {"allreduce": {"ops": _ns(9000), "tasks": {"Notify_Wait": _ns(1000), "Memcpy": _ns(1000)}},
            "broadcast": {"ops": _ns(9000), "tasks": {"Memcpy": _ns(2000)}}}
    sheet = _sheet(base, comp)
    assert sheet.data.iloc[2, 1] is None and sheet.data.iloc[2, 9] == "Memcpy" and sheet.data.iloc[3, 8] == "broadcast"
    t = json_report.records(communication_summary.totals(communication_summary._Columns(sheet)))[0]
    assert (t["task"], t["task_op"], t["task_base_ms"], t["task_comparison_ms"]) == ("Memcpy", "allreduce", 0.0, 1.0)
    assert (t["changed"], t["diff_ms"]) == (0, 0.0)
    assert [(x["task"], x["task_op"], x["diff_ms"]) for x in t["task_ties"]] == [("Memcpy", "broadcast", 1.0)]


def test_op_type_on_one_side_only_is_a_change():
    """Both sides recorded communication; an op type only the comparison has (the spec's UT: gather) grows from
    0, its tasks too: with both sides recorded, that is a real change, unlike a side without any op."""
    base = {"allreduce": {"ops": _ns(1, 7), "tasks": {"Notify Wait": _ns(1, 2, 3), "Memcpy": _ns(5)}},
            "allgather": {"ops": _ns(1, 4), "tasks": {}}}
    comp = {"allreduce": {"ops": _ns(4, 5), "tasks": {"Notify Wait": _ns(1, 2, 3)}},
            "gather": {"ops": _ns(1), "tasks": {"Notify Wait": _ns(1, 2, 3)}}}
    cols = communication_summary._Columns(_sheet(base, comp))
    c = communication_summary.contributors(cols)
    # diffs: allreduce 8 -> 9 ms (+1), allgather 5 -> 0 (-5), gather 0 -> 1 (+1): |sum| 7, allgather 5/7 < 80%
    assert c["Name"].tolist() == ["allgather", "allreduce"]
    assert c["Diff(ms)"].tolist() == pytest.approx([-0.005, 0.001])
    t = json_report.records(communication_summary.totals(cols))[0]
    # tasks: (allreduce, Notify Wait) 6 -> 6, (allreduce, Memcpy) 5 -> 0, (gather, Notify Wait) 0 -> 6 µs
    assert (t["task"], t["task_op"], t["task_base_ms"], t["task_comparison_ms"]) == ("Notify Wait", "gather", 0.0,
                                                                                    0.006)
    assert t["task_diff_pct"] is None  # no percentage of a base of 0


def test_communication_only_cli_prints_the_block(samples, tmp_path):
    """--enable_communication_compare alone printed nothing; now the table and the line, and with -o - they go
    to stderr while stdout carries the JSON, whose summary.communication is the API's dict."""
    base, comp = (str(samples / TEXT / f"level{n}/rank0_ascend_pt") for n in (1, 2))
    cmd = [sys.executable, "-m", "msprof_compare", "compare", "-bp", base, "-d", comp,
           "--enable_communication_compare"]
    # both children and the API's compare at once (the children's interpreter starts overlap on a second core)
    runs = [subprocess.Popen([*cmd, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for args in (["-o", str(tmp_path)], ["-o", "-", "--output_format", "json"])]
    try:
        res = compare(base, comp, enable_communication_compare=True)
    finally:
        run, piped = map(finish, runs)
    assert run.returncode == 0, run.stderr
    assert "Top Communication Contributors" in run.stdout
    assert "The task that changed most: Notify_Wait (in allreduce) 112.541 ms -> 134.458 ms" in run.stdout
    assert piped.returncode == 0, piped.stderr
    doc = json.loads(piped.stdout)
    assert "Top Communication Contributors" in piped.stderr and "Top Communication" not in piped.stdout
    assert doc["summary"]["communication"] == json.loads(json.dumps(res.communication_totals))
    assert doc["summary"]["communication_contributors"] == json_report.records(res.communication_contributors)
    assert not {"communication", "communication_contributors"} & set(doc["frames"])


def test_no_sheet_no_block():
    """The bundled GPU pair has no communication op: no sheet, no frames, nothing printed (the README's console
    block, which tests/test_cli.py checks byte for byte, is unchanged)."""
    res = compare(str(REPO / "sample_data" / "bert-small_h100.json.gz"),
                  str(REPO / "sample_data" / "bert-small_mi300.json.gz"), enable_communication_compare=True)
    assert "CommunicationCompare" not in res.sheet_names
    assert res.communication_totals is None and not len(res.communication_contributors)
    assert render_communication(res.frames) == "" == render_communication_contributors(None)


def test_db_figures_carry_no_float_noise(samples):
    """Reference pair 3: COMMUNICATION_OP sums to 102108100 ns on the base, 94107521 ns on the comparison, so the
    JSON should read 102.1081 and 94.107521 ms. The sheet's µs cells were summed as floats and divided by 1000:
    102.10810000000001 in summary.communication and its contributor row; whole ns now, as the other time figures."""
    def ns(level: str) -> int:
        return sql(samples / DB / level / DB_FILE, "SELECT sum(endNs - startNs) FROM COMMUNICATION_OP")[0][0]

    b, c = ns("level1"), ns("level2")
    res = compare(str(samples / DB / "level1/rank0_ascend_pt"), str(samples / DB / "level2/rank0_ascend_pt"),
                  enable_communication_compare=True)
    t = json.loads(json.dumps(res.communication_totals))
    ms = [str(Decimal(v) / 1_000_000) for v in (b, c, c - b)]
    assert [repr(t[k]) for k in ("base_ms", "comparison_ms", "diff_ms")] == ms
    row = res.communication_contributors.iloc[0]
    assert [repr(float(row[k])) for k in ("Base(ms)", "Comparison(ms)", "Diff(ms)")] == ms


def _uncovered_by_hand(path: Path) -> Decimal:
    """ms of the union of a trace's nccl* kernels that no other kernel overlaps (exact, from the raw us)."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        kernels = [e for e in json.load(fh)["traceEvents"] if e.get("ph") == "X"
                   and str(e.get("cat", "")).lower() == "kernel"]
    comm, comp = ([(Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"]))) for e in kernels
                   if e["name"].lower().startswith("nccl") is want] for want in (True, False))
    busy, total = sorted(comp), Decimal(0)
    for s, e in sorted(comm):
        cur = s
        for a, b in busy:
            if b > cur and a < e:
                total += max(a - cur, 0)
                cur = max(cur, b)
        total += max(e - cur, 0)
    return total / 1000


def test_overlap_clause_on_the_nccl_pair_is_the_kernels_by_hand(samples):
    """hta's sampled ranks 0 and 1 (10 NCCL kernels each, none overlapping another): the op rows 396.199 ->
    379.053 ms, the part no other kernel overlaps, by hand from the raw kernels, 336.983 -> 303.523 ms, so the
    overlapped part grew 59.216 -> 75.530 ms: "computing (or communication ops running beside one another) overlaps
    more of the communication than before"; swapped, "less"."""
    b, c = (samples / p for p in NCCL_PAIR)
    hand = [_uncovered_by_hand(p) for p in (b, c)]
    assert hand == [Decimal("336.983"), Decimal("303.523")]
    assert [round(nccl_ms(p), 3) for p in (b, c)] == [396.199, 379.053]
    res = compare(str(b), str(c), enable_communication_compare=True, enable_profiling_compare=True)
    t = res.communication_totals
    assert (t["uncovered_base_ms"], t["uncovered_comparison_ms"]) == pytest.approx([float(h) for h in hand], abs=1e-9)
    assert render_communication(res.frames).endswith(
        "Communication time (CommunicationCompare's op rows) 396.199 ms -> 379.053 ms (-17.146 ms, -4.33%).\nThe part "
        "no computing overlaps (the waterfall's communication steps) 336.983 ms -> 303.523 ms (-33.460 ms, -9.93%): "
        "computing (or communication ops running beside one another) overlaps more of the communication than before.")
    back = compare(str(c), str(b), enable_communication_compare=True, enable_profiling_compare=True)
    assert ("(+33.460 ms, +11.02%): computing (or communication ops running beside one another) overlaps less of "
            "the communication than before."
            in render_communication(back.frames))


def test_overlap_shift_needs_a_gap_of_005_ms_and_a_quarter_of_the_larger_change():
    """``overlap_shift``'s two thresholds, with the real pairs' figures where they exist: hta's ranks (ops -17.146
    ms, uncovered -33.460 ms) say "more"; DB level 1 -> level 2 (-8.000579 / -7.991248 ms, the union parting from
    the op sum by µs) nothing; at the edges, a gap of exactly 0.05 ms counts, one under a quarter of the larger
    change (+1.0 against +1.3 ms: 0.3 < 0.325) does not, though it passes a quarter of the smaller one."""
    def shift(ops: float, uncovered: float) -> str | None:
        return communication_summary.overlap_shift({"diff_ms": ops, "uncovered_diff_ms": uncovered})

    assert (shift(-17.146, -33.46), shift(17.146, 33.46)) == ("more", "less")
    assert shift(-8.000579, -7.991248) is None
    assert (shift(0.0, 0.05), shift(0.0, -0.05), shift(0.0, 0.049999)) == ("less", "more", None)
    assert (shift(1.0, 1.3), shift(1.0, 1.34)) == (None, "less")
    assert (shift(None, 1.0), shift(1.0, None), shift(float("nan"), 1.0)) == (None, None, None)


def test_uncovered_part_sums_every_communication_step_and_needs_both_sides(samples):
    """``uncovered_ns`` sums all the waterfall's communication steps (one per communication group that pairs, and
    the rest), nothing else: the level-1 text export's waterfall against level 2 with its one group step split in
    two. A side without an op row (DB level 0, whose ops have the op type N/A) has no uncovered figure either."""
    res = compare(str(samples / TEXT / "level1/rank0_ascend_pt"), str(samples / TEXT / "level2/rank0_ascend_pt"),
                  enable_communication_compare=True, enable_profiling_compare=True)
    wf = res.waterfall
    comm = wf[wf["Category"] == "communication"]
    assert comm["Step"].tolist() == ["Group 0 Communication (uncovered)"]
    split = wf.copy()
    i = comm.index[0]
    split.loc[i, ["Base(ns)", "Comparison(ns)"]] = [101_000_000, 95_000_000]
    extra = split.loc[[i]].assign(**{"Step": "Other Communication (uncovered)", "Base(ns)": 963_203,
                                     "Comparison(ns)": 962_016})
    split = pd.concat([split, extra])
    assert communication_summary.uncovered_ns(split) == communication_summary.uncovered_ns(wf) == (
        101_963_203, 95_962_016)
    # no communication step (nothing uncovered to sum): no figure, not 0 ms on both sides
    assert communication_summary.uncovered_ns(wf[wf["Category"] != "communication"].reset_index(drop=True)) is None
    db = compare(str(samples / DB / "level0/rank0_ascend_pt"), str(samples / DB / "level1/rank0_ascend_pt"),
                 enable_communication_compare=True, enable_profiling_compare=True)
    assert any(db.waterfall["Category"] == "communication")
    t = db.communication_totals
    assert (t["base_recorded"], t["uncovered_base_ms"], t["uncovered_comparison_ms"], t["uncovered_diff_ms"]) == (
        False, None, None, None)


MS_DIR = REPO / "tests/data/npu/profiler/rank-0_20250101000000000_ascend_ms"
BERT_H100 = REPO / "sample_data/bert-small_h100.json.gz"


def _lanes(ms_dir: Path) -> dict[str, Decimal]:
    """The MindSpore excerpt's Overlap Analysis lanes (us), summed by hand from trace_view.json."""
    events = json.loads((ms_dir / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text(encoding="utf-8"))
    events = events["traceEvents"] if isinstance(events, dict) else events
    out: dict[str, Decimal] = defaultdict(Decimal)
    for e in events:
        if e.get("ph") == "X" and e.get("name") in ("Communication", "Communication(Not Overlapped)", "Computing"):
            out[e["name"]] += Decimal(str(e["dur"]))
    return out


def test_overlap_clause_beside_a_side_without_communication_says_no_before():
    """A GPU run on one device (the bundled BERT-small H100 trace: no collective kernel) against the MindSpore
    excerpt, whose one all-reduce runs 79.090 ms and whose Overlap Analysis leaves 1.301 ms of communication
    uncovered (both read here from trace_view.json): the uncovered part's change (+1.301 ms) parts from the op
    rows' (+79.090 ms), but with no communication on the base side nothing was overlapped "before", so the line
    says where the rest went; it said "overlaps more of the communication than before". Swapped, the same of
    the base side (it said "less"). The other 77.789 ms cannot run beside the side's 0.581 ms of computing (its
    Computing lane: 581.45 us), which the line said it did."""
    lanes = _lanes(MS_DIR)
    op, unc, comp = lanes["Communication"], lanes["Communication(Not Overlapped)"], lanes["Computing"]
    assert (round(op / 1000, 3), round(unc / 1000, 3), comp) == (Decimal("79.090"), Decimal("1.301"), Decimal("581.45"))
    assert round((op - unc) / 1000, 3) == Decimal("77.789")
    with gzip.open(BERT_H100, "rt", encoding="utf-8") as fh:
        assert not any(str(e.get("cat", "")).lower() == "kernel" and "nccl" in e["name"].lower()
                       for e in json.load(fh)["traceEvents"])
    res = compare(str(BERT_H100), str(MS_DIR), enable_communication_compare=True, enable_profiling_compare=True)
    line = render_communication(res.frames)
    assert "than before" not in line and "runs beside computing" not in line
    assert ("0.000 ms -> 79.090 ms (+79.090 ms).\nThe part no computing overlaps (the waterfall's communication "
            "steps) 0.000 ms -> 1.301 ms (+1.301 ms): the other 77.789 ms of the comparison side's communication "
            "is more than its computing time (0.581 ms) can overlap: beyond that, it runs beside its other "
            "communication ops or lies in what the time breakdown counts as free time.\nThe base side's trace holds "
            "no collective kernel" in line)
    back = render_communication(compare(str(MS_DIR), str(BERT_H100), enable_communication_compare=True,
                                        enable_profiling_compare=True).frames)
    assert "than before" not in back
    assert ("1.301 ms -> 0.000 ms (-1.301 ms, -100.00%): the other 77.789 ms of the base side's communication is "
            "more than its computing time (0.581 ms) can overlap" in back)


@pytest.mark.parametrize(("extra_ns", "beside"), [(0, True), (1, False)])
def test_rest_of_the_communication_runs_beside_computing_only_where_computing_can_hold_it(tmp_path, extra_ns, beside):
    """The MindSpore excerpt with its all-reduce (and its Communication lane) cut to the uncovered 1301.008 us plus
    the excerpt's 581.45 us of computing: the rest, 0.581450 ms, fits in computing, so it may run beside it; one
    ns more and it does not, and the line says what is known instead."""
    ms_dir = tmp_path / MS_DIR.name
    shutil.copytree(MS_DIR, ms_dir)
    trace = ms_dir / "ASCEND_PROFILER_OUTPUT/trace_view.json"
    events = json.loads(trace.read_text(encoding="utf-8"))
    lanes = _lanes(MS_DIR)
    dur = lanes["Communication(Not Overlapped)"] + lanes["Computing"] + Decimal(extra_ns) / 1000
    assert dur == Decimal("1882.458") + Decimal(extra_ns) / 1000
    cut = 0
    for e in events["traceEvents"] if isinstance(events, dict) else events:
        if e.get("ph") == "X" and (e.get("name") == "Communication" or e.get("name", "").startswith("hcom_allReduce")):
            e["dur"] = float(dur)
            cut += 1
    assert cut == 2  # the HCCL op and its Overlap Analysis lane
    trace.write_text(json.dumps(events), encoding="utf-8")
    res = compare(str(BERT_H100), str(ms_dir), enable_communication_compare=True, enable_profiling_compare=True)
    line = render_communication(res.frames)
    assert "0.000 ms -> 1.882 ms (+1.882 ms).\nThe part no computing overlaps (the waterfall's communication steps) " \
        "0.000 ms -> 1.301 ms (+1.301 ms): " in line
    if beside:
        assert "the rest of the comparison side's communication runs beside computing (or beside its other " \
            "communication ops)" in line
    else:
        assert "the other 0.581 ms of the comparison side's communication is more than its computing time " \
            "(0.581 ms) can overlap" in line


def test_no_family_time_of_a_side_without_op_rows_is_its_ops_time(samples):
    """DB L1 -> L0: the L0 export's 4 COMMUNICATION_OP rows all have op type N/A (sqlite3), so that side has no op
    row and records no communication; its no_family_comparison_ms is those ops' time (SQL: the sum of endNs -
    startNs), which no other field gives (it was null, so a JSON reader could not see the 89.9 ms), not 0, which
    would read as "none of its ops lack a family". The L1 side's 4 ops are all typed hcom_allReduce_: recorded,
    0 ms without a family."""
    dbs = [samples / DB / level / DB_FILE for level in ("level1", "level0")]
    types = [sql(db, "SELECT s.value FROM COMMUNICATION_OP o JOIN STRING_IDS s ON s.id = o.opType") for db in dbs]
    assert [t[0] for t in types[0]] == ["hcom_allReduce_"] * 4 and [t[0] for t in types[1]] == ["N/A"] * 4
    ((ns,),) = sql(dbs[1], "SELECT SUM(endNs - startNs) FROM COMMUNICATION_OP")
    res = compare(str(samples / DB / "level1/rank0_ascend_pt"), str(samples / DB / "level0/rank0_ascend_pt"),
                  enable_communication_compare=True)
    t = res.communication_totals
    assert (t["base_recorded"], t["comparison_recorded"]) == (True, False)
    assert t["no_family_base_ms"] == 0.0 and t["no_family_comparison_ms"] == ns / 1e6 and 89 < ns / 1e6 < 90
    # swapped: the L0 export as the base side
    t = compare(str(samples / DB / "level0/rank0_ascend_pt"), str(samples / DB / "level1/rank0_ascend_pt"),
                enable_communication_compare=True).communication_totals
    assert (t["base_recorded"], t["comparison_recorded"]) == (False, True)
    assert t["no_family_base_ms"] == ns / 1e6 and t["no_family_comparison_ms"] == 0.0


def _one_allreduce(base_ns: int, comparison_ns: int) -> tuple[object, list[str]]:
    """One all-reduce op of ``base_ns`` / ``comparison_ns``: the sheet's columns and its contributors row's
    Base, Comparison and Diff cells as the console shows them."""
    base = {"allreduce": {"ops": np.array([base_ns], dtype=np.int64), "tasks": {}}}
    comp = {"allreduce": {"ops": np.array([comparison_ns], dtype=np.int64), "tasks": {}}}
    cols = communication_summary._Columns(_sheet(base, comp))
    table = render_communication_contributors(communication_summary.contributors(cols))
    row = next(line for line in table.splitlines() if "allreduce" in line)
    return cols, [c.strip() for c in row.strip("|").split("|")][2:5]


def test_half_a_microsecond_rounds_away_from_zero_as_the_waterfall():
    """An all-reduce 1.000 ms -> 1.0045 ms (4.5 us longer, 1004.5 us on the sheet): the communication table and
    line show 1.005 ms and +0.005 ms, as the waterfall and the verdict round a half (``half_up``). By ``round``
    of the floats they read 1.004 and +0.004 (1.0045 and 0.0045 are 1.00449999... and 0.00449999... as floats)."""
    cols, cells = _one_allreduce(1_000_000, 1_004_500)
    assert cells == ["1.000", "1.005", "+0.005"]
    # 4500 / 1000000 = +0.45%
    assert "1.000 ms -> 1.005 ms (+0.005 ms, +0.45%)" in communication_line(communication_summary.totals(cols))


def test_a_fall_under_half_a_microsecond_reads_as_the_contributors_table_above_it():
    """An all-reduce 1.0006 ms -> 1.0004 ms (0.2 us shorter): the contributors table right above the line, the
    waterfall and the verdict write the change as +0.000 (``half_up`` gives 0.0, never -0.0); the line, which keeps
    the sign of a memory fall that rounds to 0.00 MB, wrote -0.000 ms under that table's +0.000. A change that reads
    +0.000 is no contributor now (``contributors.shows_change_ms``): the table is gone, and the line says that no op
    type changed by 0.001 ms or more, as the memory line says "by 0.01 MB or more" over "1.01 MB -> 1.00 MB". Its
    figures read "1.001 ms -> 1.000 ms (+0.000 ms, -0.02%)", two times apart of no change: they take the decimals
    that show them and their change apart, as the verdict's: 1.0006 -> 1.0004 ms, -200 ns = -0.0002 ms, -200 /
    1,000,600 = -0.019988 % -> -0.02%."""
    base = {"allreduce": {"ops": np.array([1_000_600], dtype=np.int64), "tasks": {}}}
    comp = {"allreduce": {"ops": np.array([1_000_400], dtype=np.int64), "tasks": {}}}
    cols = communication_summary._Columns(_sheet(base, comp))
    assert communication_summary.contributors(cols).empty
    assert communication_line(communication_summary.totals(cols)) == (
        "No communication op type's total duration changed by 0.001 ms or more (1 op type); communication time "
        "(CommunicationCompare's op rows) 1.0006 ms -> 1.0004 ms (-0.0002 ms, -0.02%).")


def test_a_change_that_shows_between_times_alike_at_three_decimals_is_written():
    """An all-reduce 0.9995 ms -> 1.0005 ms (999,500 -> 1,000,499 ns): both read 1.000 at 3 decimals, their change
    +0.001, and the line said "1.000 ms on both sides", a change unsaid, where the verdict writes such E2E times
    "0.9995 ms -> 1.0005 ms (+0.0010 ms, +0.10%)": 999 ns = 0.000999 ms -> +0.0010 at 4 decimals, 999 / 999,500 =
    0.09995 % -> +0.10%. Times 3 ns apart still read "on both sides" (1.000 and 1.000, +0.000)."""
    def line(base_ns: int, comparison_ns: int) -> str:
        base = {"allreduce": {"ops": np.array([base_ns], dtype=np.int64), "tasks": {}}}
        comp = {"allreduce": {"ops": np.array([comparison_ns], dtype=np.int64), "tasks": {}}}
        return communication_line(communication_summary.totals(communication_summary._Columns(_sheet(base, comp))))

    assert line(999_500, 1_000_499) == (
        "No communication op type's total duration changed by 0.001 ms or more (1 op type); communication time "
        "(CommunicationCompare's op rows) 0.9995 ms -> 1.0005 ms (+0.0010 ms, +0.10%).")
    assert line(1_000_000, 1_000_003) == (
        "No communication op type's total duration changed by 0.001 ms or more (1 op type); communication time "
        "(CommunicationCompare's op rows) 1.000 ms on both sides.")


def _ms3(v: Decimal) -> str:
    """A Decimal ms to 3 places, a half away from zero, as the console writes ms."""
    return f"{v.quantize(Decimal('0.001'), rounding='ROUND_HALF_UP'):.3f}"


def test_exactly_opposite_op_and_task_changes_are_all_named(samples, tmp_path):
    """The level-1 text export against a copy of itself whose second all-reduce (hcom_allReduce__586_1_1) is
    renamed a broadcast: allreduce loses that op's time and broadcast gains it, net 0, and each task inside it moves
    from one op type to the other. The line read "105.992 ms on both sides" and named only the first of the two
    changes of its top task (Reduce_Inline: -y in allreduce, +y in broadcast) as "the task that changed most"."""
    src = samples / TEXT / "level1/rank0_ascend_pt"
    comp = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, comp)
    trace = comp / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = trace.read_text()
    assert text.count('"hcom_allReduce__586_1_1"') == 1
    trace.write_text(text.replace('"hcom_allReduce__586_1_1"', '"hcom_broadcast__586_1_1"'))
    # by hand: the renamed op's duration and the tasks (the HCCL planes' X events) that start within it, its end
    # included (``attribute_tasks``: a task starting no later than the op's end is the op's), by name
    events = json.loads(text, parse_float=Decimal)
    hccl = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == "HCCL"}
    op = next(e for e in events if e.get("name") == "hcom_allReduce__586_1_1" and e.get("ph") == "X")
    inside: dict[str, Decimal] = defaultdict(Decimal)
    start, end = Decimal(str(op["ts"])), Decimal(str(op["ts"])) + Decimal(str(op["dur"]))  # ts: a string
    for e in events:
        if e.get("ph") == "X" and e["pid"] in hccl and e["tid"] != op["tid"] \
                and start <= Decimal(str(e["ts"])) <= end:
            inside[e["name"]] += Decimal(str(e["dur"])) / 1000
    top = max(inside, key=lambda k: inside[k])
    assert sorted(inside.values())[-2] < inside[top]  # one task name holds most of the op's task time
    total, tasks = hccl_by_hand(src)
    moved, y = Decimal(str(op["dur"])) / 1000, inside[top]
    res = compare(str(src), str(comp), enable_communication_compare=True)
    c = res.communication_contributors
    assert c["Name"].tolist() == ["allreduce", "broadcast"]
    assert c["Diff(ms)"].tolist() == pytest.approx([float(-moved), float(moved)], abs=NS)
    pct = f"{-y / tasks[top] * 100:+.2f}%"
    assert communication_line(res.frames["communication"]) == (
        f"Communication time (CommunicationCompare's op rows) {_ms3(total)} ms on both sides (2 op types changed, "
        "their changes cancel out: the communication contributors).\nThe 2 tasks that changed most, by as much each "
        "(their totals are summed over parallel planes, so they may exceed the op's time): "
        f"{top} (in allreduce) {_ms3(tasks[top])} ms -> {_ms3(tasks[top] - y)} ms (-{_ms3(y)} ms, {pct}) and "
        f"{top} (in broadcast) 0.000 ms -> {_ms3(y)} ms (+{_ms3(y)} ms).")
    # the figures behind it, in the API and the JSON
    t = res.communication_totals
    assert (t["changed"], t["diff_ms"], t["task"], t["task_op"]) == (2, 0.0, top, "allreduce")
    assert [(x["task"], x["task_op"]) for x in t["task_ties"]] == [(top, "broadcast")]
    assert t["task_ties"][0]["diff_ms"] == pytest.approx(float(y), abs=NS) == -t["task_diff_ms"]


def test_more_than_three_tied_tasks_are_counted_after_the_first_three():
    """Four tasks of one op type change by 1 ms each (+1, -1, +1, -1; the op's time unchanged): all four are in
    the totals (``task`` and three ``task_ties``, in the sheet's order), and the line names the first three and
    counts the fourth, which the task rows hold."""
    names = ["Notify_Wait", "Memcpy", "Reduce_Inline", "Notify_Record"]
    before, after = (1000, 2000, 3000, 2000), (2000, 1000, 4000, 1000)
    base = {"allreduce": {"ops": _ns(9000), "tasks": {n: _ns(us) for n, us in zip(names, before, strict=True)}}}
    comp = {"allreduce": {"ops": _ns(9000), "tasks": {n: _ns(us) for n, us in zip(names, after, strict=True)}}}
    t = json_report.records(communication_summary.totals(communication_summary._Columns(_sheet(base, comp))))[0]
    assert (t["task"], t["task_base_ms"], t["task_comparison_ms"]) == ("Notify_Wait", 1.0, 2.0)
    assert t["task_ties"] == [{"task": n, "task_op": "allreduce", "base_ms": b / 1000, "comparison_ms": c / 1000,
                               "diff_ms": (c - b) / 1000}
                              for n, b, c in zip(names[1:], before[1:], after[1:], strict=True)]
    assert communication_line(communication_summary.totals(communication_summary._Columns(_sheet(base, comp)))) == (
        "No communication op type's total duration changed (1 op type); communication time (CommunicationCompare's "
        "op rows) 9.000 ms on both sides.\nThe 4 tasks that changed most, by as much each (their totals are summed "
        "over parallel planes, so they may exceed the op's time): Notify_Wait (in allreduce) 1.000 ms -> 2.000 ms "
        "(+1.000 ms, +100.00%), Memcpy (in allreduce) 2.000 ms -> 1.000 ms (-1.000 ms, -50.00%), Reduce_Inline (in "
        "allreduce) 3.000 ms -> 4.000 ms (+1.000 ms, +33.33%) and 1 more (CommunicationCompare's task rows).")


def _renamed_copy(src: Path, dst: Path, longer_us: dict[str, Decimal]) -> None:
    """Copy the text export ``src`` to ``dst`` with its second all-reduce renamed a broadcast and the ops named in
    ``longer_us`` (by their names in ``src``) that many µs longer."""
    shutil.copytree(src, dst)
    trace = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.chmod(0o644)
    events = json.loads(trace.read_text())
    for name, us in longer_us.items():
        (op,) = [e for e in events if e.get("name") == name and e.get("ph") == "X"]
        op["dur"] = float(Decimal(str(op["dur"])) + us)
    (op,) = [e for e in events if e.get("name") == "hcom_allReduce__586_1_1" and e.get("ph") == "X"]
    op["name"] = "hcom_broadcast__586_1_1"
    trace.write_text(json.dumps(events))


def test_op_changes_that_cancel_out_to_the_figures_shown_are_said(samples, tmp_path):
    """As ``test_exactly_opposite_op_and_task_changes_are_all_named``, with the renamed op 0.3 µs longer (or
    shorter, to keep its total's 3 decimals): allreduce loses the op, broadcast gains it and 0.3 µs, so the total
    changes by 0.0003 ms, which the line shows as "... ms on both sides". The note that the op types' changes cancel
    out went by the total's change rounded to 6 decimals, and so was left out there."""
    src = samples / TEXT / "level1/rank0_ascend_pt"
    total, _tasks = hccl_by_hand(src)
    delta = next(d for d in (Decimal("0.0003"), Decimal("-0.0003")) if _ms3(total + d) == _ms3(total))
    comp = tmp_path / "rank0_ascend_pt"
    _renamed_copy(src, comp, {"hcom_allReduce__586_1_1": delta * 1000})
    res = compare(str(src), str(comp), enable_communication_compare=True)
    t = res.communication_totals
    assert (t["changed"], t["base_ms"], t["comparison_ms"]) == (2, pytest.approx(float(total), abs=NS),
                                                                pytest.approx(float(total + delta), abs=NS))
    assert t["diff_ms"] == pytest.approx(float(delta), abs=1e-9) and t["diff_ms"] != 0
    assert communication_line(res.frames["communication"]).startswith(
        f"Communication time (CommunicationCompare's op rows) {_ms3(total)} ms on both sides (2 op types changed, "
        "their changes cancel out: the communication contributors).\n")


def test_op_changes_too_small_to_show_that_add_up_are_no_cancelling_out(samples, tmp_path):
    """Both sides with the second all-reduce renamed a broadcast; the comparison's broadcast and first all-reduce
    0.1 µs longer each: two op types changed the same way, by 0.0002 ms together, which the line shows as "... ms on
    both sides". Nothing cancels out there, so the line says no such thing; and neither change reads at the 0.001 ms
    shown (+0.000), so no op type is counted as changed or listed as a contributor, and the line says none changed
    by 0.001 ms or more (diff_ms keeps the 0.0002 ms)."""
    src = samples / TEXT / "level1/rank0_ascend_pt"
    total, _tasks = hccl_by_hand(src)
    assert _ms3(total + Decimal("0.0002")) == _ms3(total)
    base, comp = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "comp" / "rank0_ascend_pt"
    _renamed_copy(src, base, {})
    _renamed_copy(src, comp, {"hcom_allReduce__586_1_1": Decimal("0.1"), "hcom_allReduce__586_0_1": Decimal("0.1")})
    res = compare(str(base), str(comp), enable_communication_compare=True)
    t = res.communication_totals
    assert t["changed"] == 0 and t["diff_ms"] == pytest.approx(0.0002, abs=1e-9)
    assert res.communication_contributors.empty
    line = communication_line(res.frames["communication"])
    assert line.startswith("No communication op type's total duration changed by 0.001 ms or more (2 op types); "
                           f"communication time (CommunicationCompare's op rows) {_ms3(total)} ms on both sides.\n")
    assert "cancel out" not in line
    assert render_communication(res.frames) == line


def test_changes_of_a_few_ns_are_no_contributor_nor_the_task_that_changed_most(samples, tmp_path):
    """The level-1 text export against a copy whose first all-reduce (hcom_allReduce__586_0_1, 79089.52021875 us) and
    first Notify_Wait task are 3 ns longer, as rounding leaves them: the console listed the all-reduce as the one
    communication contributor ("105.992 105.992 +0.000", covering 100.0%), AccumulateGrad (which launched it) as the
    one time contributor, and the line named Notify_Wait "the task that changed most ... 112.541 ms on both sides".
    Neither reads apart at the 0.001 ms shown: no contributor table, and the line says nothing changed by 0.001 ms
    or more (the export against itself says "no ... changed" alone)."""
    src = samples / TEXT / "level1/rank0_ascend_pt"
    comp = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, comp)
    trace = comp / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.chmod(0o644)
    events = json.loads(trace.read_text(), parse_float=Decimal)
    (op,) = [e for e in events if e.get("name") == "hcom_allReduce__586_0_1" and e.get("ph") == "X"]
    wait = next(e for e in events if e.get("name") == "Notify_Wait" and e.get("ph") == "X" and e["pid"] == op["pid"])
    for e in (op, wait):
        e["dur"] += Decimal("0.003")
    trace.write_text(json.dumps(events, default=float))
    base_ops, base_tasks = hccl_by_hand(src)
    comp_ops, comp_tasks = hccl_by_hand(comp)
    assert (comp_ops - base_ops, comp_tasks["Notify_Wait"] - base_tasks["Notify_Wait"]) == (Decimal("0.000003"),) * 2
    res = compare(str(src), str(comp))
    t = res.communication_totals
    assert (t["changed"], t["task"], t["diff_ms"]) == (0, None, pytest.approx(0.000003, abs=1e-9))
    assert res.communication_contributors.empty and res.frames["contributors"].empty
    ms, wait_ms = _ms3(base_ops), _ms3(base_tasks["Notify_Wait"])
    assert (ms, wait_ms) == (_ms3(comp_ops), _ms3(comp_tasks["Notify_Wait"])) == ("105.992", "112.541")
    line = (f"No communication op type's total duration changed by 0.001 ms or more (1 op type); communication time "
            f"(CommunicationCompare's op rows) {ms} ms on both sides.\nNo task's total duration changed by 0.001 ms or "
            "more.")
    assert communication_line(res.frames["communication"]) == line
    same = compare(str(src), str(src))
    assert communication_line(same.frames["communication"]) == line.replace(" by 0.001 ms or more", "")
    doc = json_report.to_document(res)
    assert doc["summary"]["contributors"] == [] and doc["summary"]["communication_contributors"] == []
