"""Figures of the time breakdowns, classification, interval unions, communication and memory sheets that a
mutation audit (mut66) found no test held. Each expected value is worked out by hand, or by plain SQL or
``tests/spans.py``, from the real excerpt the test reads or edits (tests/data: the level-1 torch_npu text window
``npu/rank0_ascend_pt``, the level-1 DB excerpt ``db/l1``, the timesformer Kineto excerpt; their README files give
provenance), or from the few values a pure function is given.

Several cases are int64 figures past int32 (a kernel or an overlap over 2.147 s, epoch times whose low 32 bits
read negative): the samples' own values stay below 2**31 by chance, so an int32 read passed every other test."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest
from dbutil import edited_copy, sql
from spans import minus, union

from msprof_compare import timeline
from msprof_compare.compare import breakdown_npu as B
from msprof_compare.compare import classify, memory
from msprof_compare.compare import communication as comm
from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data"
PT = DATA / "npu" / "rank0_ascend_pt"
L1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
OPTS = Options(enable_profiling_compare=True)


def _export(tmp_path: Path) -> Path:
    """A copy of the torch_npu text fixture to edit."""
    out = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, out)
    return out


# --------------------------------------------------------------------------- breakdown_npu


def test_an_export_without_kernel_details_has_no_categories_and_still_its_overlap_figures(tmp_path: Path) -> None:
    """Without kernel_details.csv the categories are absent, said so, and the Overlap Analysis figures stand:
    Computing 581,450 ns, as with the file (the lane, not the kernels, gives it)."""
    out = _export(tmp_path)
    (out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    bd = B.npu_breakdown(load_profile(str(out), OPTS), OPTS)
    assert bd.categories_missing == "no kernel_details.csv" and bd.hide_op_details
    assert bd.computing_ns == 581_450 and bd.categorised_ns == 0


def test_a_kernel_over_2_147_s_keeps_its_whole_duration_in_its_category(tmp_path: Path) -> None:
    """Durations are int64 ns: a MatMulV2 of 2,500,000 us (2.5e9 ns, past int32) adds all of it to Matmul (Cube).
    The fixture's five MatMulV2 kernels are 21.98 + 16.54 + 45.921 + 30.661 + 287.666 us = 402,768 ns; the last
    one made 2.5 s gives 115,102 + 2,500,000,000 ns."""
    out = _export(tmp_path)
    kd = out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = kd.read_text().splitlines(keepends=True)
    assert lines[-1].count(",287.666,") == 1
    lines[-1] = lines[-1].replace(",287.666,", ",2500000,")
    kd.write_text("".join(lines))
    bd = B.npu_breakdown(load_profile(str(out), OPTS), OPTS)
    assert (bd.buckets["matmul_cube"].ns, bd.buckets["matmul_cube"].count) == (115_102 + 2_500_000_000, 5)


# --------------------------------------------------------------------------- breakdown_gpu


def test_a_gpu_kernel_over_2_147_s_keeps_its_whole_duration(tmp_path: Path) -> None:
    """The timesformer excerpt's last kernel (ts 1420179774617.142 us, 60 us, after the GEMM that ends at
    774615.446 us) made 2,500,000 us long: E2E runs from the first kernel (760069.636 us) to its new end,
    (774617.142 - 760069.636) us + 2.5 s = 2,514,547,506 ns, and Computing gains its 2.5 s less the 60 us it had
    (14,478,811 ns before): 2,514,418,811 ns; Free Time is unchanged (128,695 ns)."""
    text = TIMESFORMER.read_text()
    old = '"ts": 1420179774617.142, "dur": 60.0,'
    assert text.count(old) == 1
    trace = tmp_path / "long.pt.trace.json"
    trace.write_text(text.replace(old, '"ts": 1420179774617.142, "dur": 2500000.0,'))
    bd = gpu_breakdown(load_profile(str(trace), OPTS), OPTS)
    assert (bd.e2e_ns, bd.computing_ns, bd.free_ns) == (2_514_547_506, 2_514_418_811, 128_695)


# --------------------------------------------------------------------------- breakdown_db

_WAITS = ("SELECT c.planeId, t.startNs, t.endNs, t.globalTaskId FROM COMMUNICATION_TASK_INFO c JOIN TASK t "
          "ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.taskType "
          "WHERE s.value = 'Notify_Wait' ORDER BY t.startNs")


def test_db_wait_plane_tie_goes_to_the_plane_first_in_the_table(tmp_path: Path) -> None:
    """Of a group's planes of equal least Notify_Wait time the one whose task comes first in the table wins, not
    the one of the smaller planeId (a sorted groupby). The level-1 excerpt's group (no RDMASend: every Notify_Wait is
    a wait task) has planes 1-7 in that order of first task, plane 1 of the least time; planes 1 and 2 swap ids,
    so plane 2 comes first, and plane 1's tasks are cut, from their ends and first to last, by the difference of
    the two sums, so the two tie as the least. Expected Wait by hand as in
    test_ascend_db_rules.test_wait_history_runs_per_plane: plane 2's waits within the group's op time not under a
    compute task."""
    first = sql(L1, _WAITS)
    sums = {p: sum(e - s for q, s, e, _ in first if q == p) for p in (1, 2)}
    cuts, excess = [], sums[2] - sums[1]
    for p, s, e, g in first:
        if p == 2 and excess:
            cut = min(e - s, excess)
            cuts.append(f"UPDATE TASK SET endNs = endNs - {cut} WHERE globalTaskId = {g}")
            excess -= cut
    db = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                     "UPDATE COMMUNICATION_TASK_INFO SET planeId = 3 - planeId WHERE planeId IN (1, 2)", *cuts)
    waits: dict[int, list[tuple[int, int]]] = {}
    for plane, s, e, _ in sql(db, _WAITS):
        waits.setdefault(plane, []).append((s, e))
    assert next(iter(waits)) == 2 and sum(e - s for s, e in waits[1]) == sum(e - s for s, e in waits[2])
    assert min(sum(e - s for s, e in w) for w in waits.values()) == sum(e - s for s, e in waits[2])
    compute = sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = "
                      "t.globalTaskId")
    uncovered = minus(sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP"), compute)

    def within(plane: int) -> int:
        return sum(max(0, min(e, ue) - max(s, us)) for s, e in union(waits[plane]) for us, ue in uncovered)

    assert within(1) != within(2)
    (group,) = sql(db, "SELECT DISTINCT g.value FROM COMMUNICATION_OP o JOIN STRING_IDS g ON g.id = o.groupName")
    bd = db_breakdown(load_profile(str(db), OPTS))
    assert bd.groups == {group[0]: {"wait": within(2), "transmit": sum(e - s for s, e in uncovered) - within(2)}}


# --------------------------------------------------------------------------- classify


def test_categorize_refuses_per_kernel_arrays_of_another_length() -> None:
    """``categorize`` labels kernels by position, so a flow-start or cube array of another length than the
    durations would label kernels by another kernel's figures: either one alone is refused."""
    ops = classify.cube_ops([], np.zeros(0, np.int64), np.zeros(0, np.int64))
    dur, cube = np.array([5, 7]), np.array([True, False])
    assert classify.categorize(dur, np.zeros(2, np.int64), cube, ops).tolist() == ["other_cube", "vector_notrans"]
    with pytest.raises(ValueError, match="differ in length"):
        classify.categorize(dur, np.zeros(3, np.int64), cube, ops)
    with pytest.raises(ValueError, match="differ in length"):
        classify.categorize(dur, np.zeros(2, np.int64), np.array([True]), ops)


def test_npu_type_fallback_tells_forward_from_backward_conv() -> None:
    """A kernel no cube op covers takes its category from its CANN op Type (reference-1 §3.7 step 5): Conv2D is a
    forward conv, Conv2DBackpropInput a backward one (a backward word in the type); MatMulV2 Matmul,
    FlashAttentionScore / FlashAttentionScoreGrad forward / backward FA, all Cube; Add keeps Vector."""
    types = np.array(["Conv2D", "Conv2DBackpropInput", "MatMulV2", "FlashAttentionScore", "FlashAttentionScoreGrad",
                      "Add"], dtype=object)
    ops = classify.cube_ops([], np.zeros(0, np.int64), np.zeros(0, np.int64))
    labels = classify.categorize(np.ones(6, np.int64), np.zeros(6, np.int64), np.zeros(6, bool), ops, npu_type=types)
    assert labels.tolist() == ["conv_fwd_cube", "conv_bwd_cube", "matmul_cube", "fa_fwd_cube", "fa_bwd_cube",
                               "vector_notrans"]


def test_processing_order_sorts_epoch_flow_starts_as_int64() -> None:
    """The visiting order (MC2's names and SQE walk follow it): kernels without a flow first, then by flow start as
    int64 ns. The torch_npu fixture's HCCL op start (1736408883732241564 ns) and one 2**31 ns later: the later one
    last, though as int32 it would wrap below 0 and read as no flow."""
    t = 1_736_408_883_732_241_564
    assert classify.processing_order(np.array([t, t + 2**31, 0], np.int64)).tolist() == [2, 0, 1]


# --------------------------------------------------------------------------- timeline


def test_pairwise_overlaps_past_2_147_s_are_whole_int64_ns() -> None:
    """Two communication groups overlapping for 4 s (a long profile's uncovered time): [0, 5 s) and [1 s, 6 s)
    share [1 s, 5 s) = 4,000,000,000 ns, plus [7 s, 8 s) in both: 5,000,000,000 ns in all, past int32."""
    s = 10**9
    a = (np.array([0, 7 * s]), np.array([5 * s, 8 * s]))
    b = (np.array([1 * s, 7 * s]), np.array([6 * s, 8 * s]))
    assert timeline.pairwise_overlaps([a, b]) == {(0, 1): 5 * s}


# --------------------------------------------------------------------------- communication


def test_db_tasks_of_an_op_without_a_family_go_to_no_op(tmp_path: Path) -> None:
    """A DB task goes to its op by opId: the tasks of an op whose type names no family (no '_', an ignored op)
    go to no op, not to another one. The level-1 excerpt's fourth hcom_allReduce_ (opId 4) typed 'barrier':
    allreduce keeps ops 1-3 and their tasks alone, 9 Memcpy / 28 Notify_Wait / 28 Notify_Record / 9
    Reduce_Inline each (plain SQL below)."""
    db = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                     "INSERT INTO STRING_IDS VALUES (990004, 'barrier')",
                     "UPDATE COMMUNICATION_OP SET opType = 990004 WHERE opId = 4")
    want = {}
    for name, ns in sql(db, "SELECT s.value, t.endNs - t.startNs FROM COMMUNICATION_TASK_INFO c JOIN TASK t ON "
                            "t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.taskType "
                            "WHERE c.opId IN (1, 2, 3) ORDER BY t.startNs"):
        want.setdefault(name, []).append(ns)
    ops = [e - s for s, e in sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP WHERE opId IN (1, 2, 3) "
                                     "ORDER BY startNs")]
    got = comm.side_data(load_profile(str(db), OPTS), None)
    assert list(got) == ["allreduce"] and got["allreduce"]["ops"].tolist() == ops == [88_750_993, 2_180_324,
                                                                                       2_412_628]
    tasks = got["allreduce"]["tasks"]
    assert {k: len(v) for k, v in tasks.items()} == {"Notify_Record": 84, "Notify_Wait": 84, "Memcpy": 27,
                                                      "Reduce_Inline": 27}
    assert {k: sorted(v.tolist()) for k, v in tasks.items()} == {k: sorted(v) for k, v in want.items()}


def test_text_step_cut_counts_an_op_and_its_tasks_at_each_end_of_the_step() -> None:
    """``step_cut`` on the torch_npu fixture's one HCCL op (hcom_allReduce__586_0_1 from 1736408883732241.564 us,
    79 ms) and its 16 tasks (the first at the op's start, then 243.384, 247.564, ... us). A step from 1 us before
    the op to 1 us into it holds the op, whose 15 later tasks fall after its end: (0, 0, 1, 15), the op counted
    though it is the step's first. A step from 1 us into the op to the third task's start (247.564 us) holds no op
    start: the op starts before it and two of its tasks lie inside, the one on the step's last ns too:
    (1, 2, 0, 0)."""
    p = load_profile(str(PT), Options(enable_communication_compare=True))
    events = comm.comm_events(p)
    ops, tasks = events
    op = 1_736_408_883_732_241_564
    assert ops["ts"].tolist() == [op] and len(tasks["ts"]) == 16
    assert sorted(tasks["ts"].tolist())[:3] == [op, op + 1_820, op + 6_000]
    assert comm.step_cut(p, (op - 1_000, op + 1_000), events) == (0, 0, 1, 15)
    assert comm.step_cut(p, (op + 1_000, op + 6_000), events) == (1, 2, 0, 0)


# --------------------------------------------------------------------------- memory


def test_npu_memory_records_keep_allocation_times_whose_low_32_bits_read_negative() -> None:
    """An allocation time is an int64 epoch ns: the level-1 DB excerpt's 127 OP_MEMORY rows of torch ops (its 57
    cann:: rows, placed at their enqueue, left out), all allocated, their times' low 32 bits below 2**31 by chance,
    moved 2**31 ns later are all records still, each placed at its time; read as int32 those times wrap below 0
    and the rows drop as rows without an allocation time."""
    p = load_profile(str(L1), Options(enable_memory_compare=True))
    om = p.operator_memory
    om = om[~om["Name"].str.contains("cann::", regex=False)].reset_index(drop=True)
    alloc = om["alloc_ns"].to_numpy(np.int64)
    assert len(om) == 127 and (alloc > 0).all() and ((alloc & 0xFFFFFFFF) < 2**31).all()
    om["alloc_ns"] = alloc + 2**31
    got = memory._npu_columns(dataclasses.replace(p, operator_memory=om))
    assert got is not None and got["ts"].tolist() == (alloc + 2**31).tolist()
