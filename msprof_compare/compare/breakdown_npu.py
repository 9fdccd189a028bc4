"""Time breakdown of an Ascend text export (reference-1 §5.4-§5.10, §8).

Reads only the ``Profile`` (trace tables + side files the ``ascend_text``
loader stored). Computing / uncovered communication / E2E come from the
"Overlap Analysis" lane; the categorised buckets from kernel_details.csv rows
joined to their launching flow (exact int64-ns equality of flow end and
``Start Time(us)``) and classified by the shared ``classify`` module; wait and
transmit per communication group from the HCCL lanes.

Interval choice (see docs/differences.md, "NPU wait / transmit / group
overlap"): the original's OVERLAP / CLIP pointer walks can count overlapping
events twice and, after a long event, skip later ones. We use exact interval
intersections (``timeline``) instead; ``tests/spans.py`` keeps the original
walks for the parity tests.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np
import pandas as pd

from .. import timeline
from ..columns import col_of
from ..model import (
    SDMA_TASK_TYPES,
    Profile,
    bare_trace,
    factorize,
    has_profiling_directory,
    hccl_core,
    hcom_name,
    positions_in_runs,
    starts_read,
    threads_in_order,
)
from ..options import Options
from ..textsafe import json_repr, short_list, short_repr, term_safe
from . import classify
from .breakdown import MC2, Breakdown, last_of_keys, peak_reserved_gb, zero_readings

EVENT_WAIT_TASK = "EVENT_WAIT_SQE"
LCCL_KERNEL = "kernel_aivec"
MC2_SQE = "C_CORE_SQE"
NOTIFY_WAIT, RDMA_SEND = "Notify_Wait", "RDMASend"
COMPUTING, NOT_OVERLAPPED = "Computing", "Communication(Not Overlapped)"


def npu_breakdown(profile: Profile, opts: Options | None = None, kw: classify.Keywords | None = None) -> Breakdown:
    """The time breakdown of one NPU text profile (all times int64 ns)."""
    bd = Breakdown(kind="NPU")
    trace_only = profile.level == "trace"
    if trace_only:
        # what is absent, then what to do: a trace_view.json's profiling directory can be given instead (its
        # kernel_details.csv, memory_record.csv and communication.json hold them); a lone timeline file has none to
        # give. ~300 characters on reference pairs 8, 9c and 9d said the three files' names and no remedy
        why = (" without its profiling directory: pass the directory instead" if has_profiling_directory(profile)
               else ": a lone timeline file holds none of them")
        bd.missing.append(f"{profile.path}: no computing categories, Mem Usage or bandwidths{why}")
        bd.bandwidth_missing = f"{bare_trace(profile)} has no communication.json"
    else:
        _memory(profile, bd)
        _categorise(profile, bd, kw or classify.load_keywords())
    tasks = _device_tasks(profile)
    _lccl(profile, bd, tasks)
    copies = _sdma_stream(profile, bd, tasks)
    if _overlap(profile, bd, tasks, copies):
        _groups(profile, bd)
    bd.pg_names = pg_names(profile.metadata)
    if not trace_only:
        _bandwidth(profile, bd)
    return bd


# --------------------------------------------------------------------------- memory / kernel categories


def _memory(profile: Profile, bd: Breakdown) -> None:
    peak = peak_reserved_gb(profile)
    mr = profile.memory_record
    if peak == 0.0 and (zero := zero_readings(profile)):  # every reading 0: "no peak ... recorded" was untrue
        bd.memory_missing = zero
        bd.memory_zero = True
    if peak is not None:
        bd.memory_gb = peak
        return
    if mr is None or "Total Reserved(MB)" not in mr.columns or not len(mr):
        # not read: the loader has said why (the original's "The file memory_record.csv does not exist.", with its
        # side, or the file's problem), and what that costs is said where the user sees it: under the console
        # table, beside the other side's peak (overall.table_notes); without one, no 0.00G is shown. A log line
        # here said it a second time (the MindSpore excerpt against a GPU trace).
        return
    # the loader left impossible totals out (negative, over 1 PB, with a line that counts them), and every one
    # was (or the cells are empty): said under the console table, beside the other side's peak, where the 0.00G
    # is; a log line here said it a second time, and the note that the side recorded no peak was wrong
    bd.memory_missing = "its memory_record.csv holds no usable Total Reserved(MB) value"


def _col(kd: pd.DataFrame, name: str) -> np.ndarray:
    """A float PMU column, all-NaN when the CSV lacks it."""
    if name in kd.columns:
        return col_of(kd, name, np.float64)
    return np.full(len(kd), np.nan)


def _us_to_ns(x: np.ndarray) -> np.ndarray:
    return np.rint(np.nan_to_num(x, nan=0.0) * 1000.0).astype(np.int64)


def flow_start_map(profile: Profile) -> tuple[np.ndarray, np.ndarray]:
    """async_npu flows as (end ts, start ts), sorted by end ts, one start per end (the last pair wins)."""
    fl = profile.flows
    z = np.zeros(0, dtype=np.int64)
    if not len(fl):
        return z, z
    sel = np.flatnonzero(classify.per_unique(col_of(fl, "cat", object), lambda c: c == "async_npu"))
    if not sel.size:
        return z, z
    f_ts = col_of(fl, "f_ts", np.int64)[sel]
    s_ts = col_of(fl, "s_ts", np.int64)[sel]
    # last flow per end ts, then sorted by end ts
    rev = f_ts[::-1]
    keys, first_in_rev = np.unique(rev, return_index=True)
    return keys, s_ts[::-1][first_in_rev]


def _lookup(keys: np.ndarray, values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """values[keys == q] per query (exact match), 0 where there is none."""
    if keys.size == 0:
        return np.zeros(q.size, dtype=np.int64)
    i = np.searchsorted(keys, q)
    ic = np.minimum(i, keys.size - 1)
    hit = (i < keys.size) & (keys[ic] == q)
    return np.where(hit, values[ic], 0)


def has_pmu(kd: pd.DataFrame) -> bool:
    """Whether kernel_details.csv has the PMU time columns the categories are split by (PipeUtilization)."""
    return "mac_time(us)" in kd.columns or "aiv_vec_time(us)" in kd.columns  # a set of the labels iterated the Index


def hccl_op_rows(kd: pd.DataFrame, named: np.ndarray | None = None) -> np.ndarray:
    """kernel_details.csv rows of HCCL ops (``hcom_allReduce__586_0_1``, or an Accelerator Core of ``HCCL_CORES``):
    communication, which a DB export's compute tasks never hold. ``named``: the rows whose Name passes
    ``hcom_name``, where the caller tested its distinct names already (``_categorise``)."""
    # each distinct text tested once: the .str methods ran per row (43 ms a side for the 28,000 kernels of a
    # 320 MB text export, 10 ms so); a missing value reads as "", which neither test passes, as the "nan" /
    # "None" texts of the per-row reading did
    ops = classify.per_unique(col_of(kd, "Name", object), hcom_name, lower=False) if named is None else named
    if "Accelerator Core" in kd.columns:
        ops = ops | classify.per_unique(col_of(kd, "Accelerator Core", object), hccl_core, lower=False)
    return ops


#: What records the HCCL tasks (Notify_Wait among them) that a Level0 export leaves out: the text and DB level-1
#: and level-2 samples hold them (112.541 ms of Notify_Wait in the level-1 text export).
HCCL_TASK_LEVELS = "Level1 or Level2 records them"

#: Why a text export's kernel_details.csv has no PMU columns where profiler_info.json does not say.
NO_PMU_GUESS = "Level0 export or aic_metrics other than PipeUtilization"


def no_pmu_why(profile: Profile, guess: str = NO_PMU_GUESS) -> str:
    """Why an export holds no PMU figures (a text export's kernel_details.csv without PMU columns, a DB export's
    absent or empty TASK_PMU_INFO), from profiler_info.json where it says (the level, the AI Core metrics), with
    how to record them; ``guess`` where it does not. A Level0 export's line guessed "Level0 export or aic_metrics
    other than PipeUtilization" beside the profiler_info.json that said Level0, and beside one that said Level1
    with PipeUtilization, where the file had lost its PMU columns."""
    level, metrics = profile.extra.get("profiler_level"), profile.extra.get("aic_metrics")
    if level == "Level0":
        return "a Level0 export records none: Level1 or Level2 with aic_metrics PipeUtilization does"
    if isinstance(metrics, str) and "PIPE" not in metrics.upper():  # ACL_AICORE_PIPE_UTILIZATION, PipeUtilization
        return f"recorded with aic_metrics {metrics}: PipeUtilization records them"
    if level in ("Level1", "Level2") and isinstance(metrics, str):  # the guess contradicted profiler_info.json
        return (f"profiler_info.json says {level} with aic_metrics {metrics}, which records them: the export lost "
                "them after it was written")
    return guess


def _categorise(profile: Profile, bd: Breakdown, kw: classify.Keywords) -> None:
    """kernel_details.csv rows -> buckets and MC2 (reference-1 §3.7, §5.3, §5.6)."""
    kd = profile.kernel_details
    if kd is None or not len(kd) or not has_pmu(kd):
        bd.hide_op_details = True
        why = ("no kernel_details.csv" if kd is None else
               f"kernel_details.csv has no PMU columns ({no_pmu_why(profile)})")
        bd.categories_missing = why
        bd.missing.append(f"{profile.path}: the categorised computing rows (Cube, Vector, FA, Conv, Matmul, ...) are "
                          f"absent: {why}")
        if kd is not None and len(kd):
            moves = classify.per_unique(col_of(kd, "Name", object), _tensor_move_test)
            bd.unsplit_moves.add(int(col_of(kd, "dur", np.int64)[moves].sum()), int(moves.sum()))
        return
    cube_cols = [c for c in ("mac_time(us)", "aicore_time(us)") if c in kd.columns]
    if not cube_cols:
        # the PMU Cube test reads those two alone: without either (a column lost from the file) no kernel passes
        # it, and its Cube kernels moved into the Vector rows without a word
        bd.missing.append(f"{profile.path}: kernel_details.csv has PMU columns but neither mac_time(us) nor "
                          "aicore_time(us), so no kernel passes the PMU Cube test (those kernels read as Vector)")
    elif all(np.isnan(_col(kd, c)).all() for c in cube_cols) and not np.isnan(_col(kd, "aiv_vec_time(us)")).all():
        # nor where they hold no value while the vector counters do (a column emptied: found by fuzzing)
        bd.missing.append(f"{profile.path}: kernel_details.csv's {' and '.join(cube_cols)} hold no value, so no "
                          "kernel passes the PMU Cube test (those kernels read as Vector)")
    valid = ~(np.isnan(_col(kd, "aiv_vec_time(us)")) & np.isnan(_col(kd, "mac_time(us)")))
    all_names = col_of(kd, "Name", object)
    # every name predicate in one pass over the distinct names (a kernel name repeats per launch): each
    # predicate factorizing the names again cost more than the tests themselves
    codes, (hccl, tensor_move, mc2, trans, hcom) = classify.per_unique_many(all_names, (
        (classify.hccl_test, False), (_tensor_move_test, True), (classify.mc2_test(kw), True),
        (classify.trans_test(kw), True), (hcom_name, False)))
    # HCCL's own kernels are communication: the Overlap Analysis lane leaves them out of Computing, and so do
    # the categories of computing (the original counts an AIV-mode one as Vector)
    valid_pmu = valid
    valid = valid & ~hccl[codes]
    # kernels without PMU values (N/A: DSA, AI CPU tasks) go to Other here, where a DB export categorises them;
    # the HCCL ops the file lists (hcom_allReduce_, core HCCL) are communication, computing on neither
    no_pmu = ~valid_pmu & ~hccl[codes] & ~hccl_op_rows(kd, hcom[codes])
    if no_pmu.any():
        bd.no_pmu_kernels.add(int(col_of(kd, "dur", np.int64)[no_pmu].sum()), int(no_pmu.sum()))
    rows = np.flatnonzero(valid)
    if not rows.size:
        return
    names = all_names[rows]
    types = col_of(kd, "Type", object)[rows]
    ts = col_of(kd, "ts", np.int64)[rows]
    dur = col_of(kd, "dur", np.int64)[rows]
    read = starts_read(kd)[rows]  # a kernel without a start has no flow (ts -1 is no time) and no C_CORE_SQE task
    keys, starts = flow_start_map(profile)
    flow_ts = np.where(read, _lookup(keys, starts, ts), 0)
    order = classify.processing_order(flow_ts)
    names, types, ts, dur, flow_ts = names[order], types[order], ts[order], dur[order], flow_ts[order]
    rows, read = rows[order], read[order]
    codes = codes[rows]

    def pmu(name: str) -> np.ndarray:
        return _col(kd, name)[rows]

    mac, aicore = pmu("mac_time(us)"), pmu("aicore_time(us)")
    is_cube = (np.nan_to_num(mac, nan=0.0) > 0) | (np.nan_to_num(aicore, nan=0.0) > 0)
    page = classify.contains_any(types, ("pagedattention",))
    ops = profile.ops
    cube_ops = classify.cube_ops(col_of(ops, "name", object), col_of(ops, "ts", np.int64),
                                 col_of(ops, "dur", np.int64), col_of(ops, "tid", np.int64),
                                 backward_tid=profile.backward_tid, kw=kw)
    labels = classify.categorize(dur, flow_ts, is_cube, cube_ops,
                                 is_trans=trans[codes], page_attention=page,
                                 tensor_move=tensor_move[codes], mc2=mc2[codes], npu_type=types)
    classify.fill_buckets(bd, labels, dur)
    classify.fill_conversions(bd, labels, dur, classify.is_conversion_type(types))
    if len(cube_ops):  # a link decides a category only inside a Matmul / Conv / Flash Attention op
        # no async_npu flow ends at them: the categories read them by their Type, else their PMU figures, so
        # their vector kernels leave Matmul / Conv / Flash Attention (the level1 sample without its flows: 57
        # kernels, 1.343 ms to Vector), said by the Summary's check where no operator sheet states them. As on a
        # GPU, those before the first linked kernel are left out: launched before the profile (the tests' excerpt
        # window opens with 4), which no NPU check measures
        linked = flow_ts != 0
        bd.has_launches = bool(linked.any())
        free = read & ~linked
        if bd.has_launches:
            free &= ts >= ts[linked].min()
        bd.unlinked.add(int(dur[free].sum()), int(free.sum()))
    sel = np.flatnonzero(labels == classify.MC2)
    if sel.size:
        comp = np.maximum(np.nan_to_num(pmu("aic_mac_time(us)")), np.nan_to_num(pmu("aic_mte2_time(us)")))
        comp = _us_to_ns(comp + np.nan_to_num(pmu("aiv_time(us)")))
        _mc2(profile, bd, sel, names, ts, dur, comp, read)


def _tensor_move_test(name: str) -> bool:
    """For lower-cased kernel names: a TensorMove run by aclnnInplaceCopy (an SDMA copy, reference-1 §3.7)."""
    return name.startswith("aclnninplacecopy") and "tensormove" in name


def _mc2(profile: Profile, bd: Breakdown, sel: np.ndarray, names: np.ndarray, ts: np.ndarray,
         dur: np.ndarray, comp: np.ndarray, read: np.ndarray) -> None:
    """MC2 kernels; C_CORE_SQE tasks of the Ascend Hardware lane, in start order."""
    k = profile.kernels
    sq = k[k["name"] == MC2_SQE]
    order = np.argsort(col_of(sq, "ts", np.int64), kind="stable")
    sqe_end = (col_of(sq, "ts", np.int64) + col_of(sq, "dur", np.int64))[order]
    add_mc2(bd, sqe_end, sel, names, ts, dur, comp, read)


def add_mc2(bd: Breakdown, sqe_end: np.ndarray, sel: np.ndarray, names: np.ndarray, ts: np.ndarray,
            dur: np.ndarray, comp: np.ndarray, read: np.ndarray | None = None) -> None:
    """Add MC2 kernels ``sel`` (in processing order) to ``bd.mc2`` (reference-1 §5.6).

    Communication = sum over consecutive pairs of the C_CORE_SQE ends inside the kernel, found with
    one forward-only pointer over ``sqe_end`` shared by all kernels, as the original walks it.
    ``read`` (default all): whether each kernel's start was read. Shared by the text and DB breakdowns.
    """
    p = 0
    for i in sel.tolist():
        got = []
        if read is None or read[i]:  # a kernel without a start (``read`` False, ts -1: no time) takes no SQE
            start, end = int(ts[i]), int(ts[i] + dur[i])
            while p < sqe_end.size and sqe_end[p] < start:
                p += 1
            while p < sqe_end.size and sqe_end[p] <= end:
                got.append(int(sqe_end[p]))
                p += 1
        m = bd.mc2.setdefault(str(names[i]), MC2())
        m.ns += int(dur[i])
        m.computing_ns += int(comp[i])
        m.communication_ns += sum(got[j + 1] - got[j] for j in range(0, len(got) - 1, 2))
        m.count += 1


# --------------------------------------------------------------------------- trace-based figures


def _device_tasks(profile: Profile) -> np.ndarray:
    """Rows of the Ascend Hardware tasks as the original's kernel map holds them: one per
    (pid, tid, ts), the last one winning; in file order."""
    k = profile.kernels
    if not len(k):
        return np.zeros(0, dtype=np.int64)
    return last_of_keys(col_of(k, "pid", np.int64), col_of(k, "tid", np.int64),
                         col_of(k, "ts", np.int64))


def _lccl(profile: Profile, bd: Breakdown, tasks: np.ndarray) -> None:
    k = profile.kernels
    c = profile.comm
    parts = []
    if len(tasks):
        hit = classify.per_unique(col_of(k, "name", object)[tasks], lambda n: n == LCCL_KERNEL)
        parts.append(col_of(k, "dur", np.int64)[tasks[hit]])
    if len(c):
        op = np.flatnonzero(col_of(c, "lane", object) == "op")
        if op.size:
            op = op[last_of_keys(col_of(c, "pid", np.int64)[op], col_of(c, "tid", np.int64)[op],
                                  col_of(c, "ts", np.int64)[op])]
            hit = classify.per_unique(col_of(c, "name", object)[op], lambda n: n == LCCL_KERNEL)
            parts.append(col_of(c, "dur", np.int64)[op[hit]])
    for d in parts:
        if d.size:
            bd.lccl.add(int(d.sum()), d.size)


def _sdma_stream(profile: Profile, bd: Breakdown, tasks: np.ndarray) -> np.ndarray:
    """SDMA task time on compute streams (reference-1 §5.4 step 5). Returns which of the device tasks ``tasks``
    are copies (``SDMA_TASK_TYPES``), which ``_overlap`` reads too: the task types are numbered once for both
    (each took its own pass over them, and this rule a second numbering of the streamed tasks' types)."""
    if not len(tasks):
        return np.zeros(0, dtype=bool)
    k = profile.kernels
    codes, uniq = factorize(col_of(k, "task_type", object)[tasks])
    u = uniq.tolist()

    def is_in(words: tuple[str, ...]) -> np.ndarray:  # per task; a missing type (None) is in no list
        return np.array([x in words for x in u], dtype=bool)[codes]

    copies = is_in(SDMA_TASK_TYPES)
    copy_ns = int(col_of(k, "dur", np.int64)[tasks[copies]].sum())
    stream = col_of(k, "stream", np.int64)[tasks]
    on = stream > 0  # stream 0 and an absent "Stream Id" do not count
    rows, stream = tasks[on], stream[on]
    wait_streams = set(stream[is_in((EVENT_WAIT_TASK,))[on]].tolist())
    compute_streams = set(stream[is_in(classify.COMPUTE_TASK_TYPES)[on]].tolist())
    streams = (wait_streams & compute_streams) if wait_streams else compute_streams
    sd = copies[on] & np.isin(stream, list(streams))
    if sd.any():
        bd.sdma_stream.add(int(col_of(k, "dur", np.int64)[rows[sd]].sum()), int(sd.sum()))
    # the copies the rule passed over (all of a current export's: no "Stream Id"), which SDMA Time leaves out
    bd.unread_copies.add(copy_ns - bd.sdma_stream.ns, int(copies.sum()) - bd.sdma_stream.count)
    unread = copies & ~np.isin(tasks, rows[sd])
    bd.unread_copy_types = tuple(sorted(u[c] for c in np.unique(codes[unread]).tolist()))
    return copies


def _overlap(profile: Profile, bd: Breakdown, tasks: np.ndarray, copies: np.ndarray) -> bool:
    """Computing, uncovered communication and the E2E window from the Overlap Analysis lanes; ``tasks``: the device
    tasks (``_device_tasks``), whose copies (SDMA / PCIE_DMA tasks; ``copies``, per task, from ``_sdma_stream``) are
    no idle time."""
    ov = profile.overlap
    if not len(ov):
        bd.missing.append(f"{profile.path}: Failed to get overlap analysis data.")
        return False
    names = col_of(ov, "name", object)
    d = col_of(ov, "dur", np.int64)
    ts = col_of(ov, "ts", np.int64)
    bd.computing_ns = int(d[names == COMPUTING].sum())
    bd.uncovered_comm_ns = int(d[names == NOT_OVERLAPPED].sum())
    busy = (names == COMPUTING) | (names == NOT_OVERLAPPED)  # what Free Time leaves out
    k = profile.kernels
    copy = tasks[copies]
    cs = col_of(k, "ts", np.int64)[copy] if len(copy) else np.zeros(0, np.int64)
    ce = cs + col_of(k, "dur", np.int64)[copy] if len(copy) else cs
    bd.set_window(ts.min(), (ts + d).max(), timeline.union(ts[busy], ts[busy] + d[busy]),
                  profile.files.get("trace_view.json", profile.path), (cs, ce))
    return True


# --------------------------------------------------------------------------- groups


def hccl_lanes(profile: Profile) -> list[tuple[str, int, list[int]]]:
    """(group name, group tid, plane tids) per group (op) lane, in sort_index order (reference-1 §5.1)."""
    pid = profile.extra.get("hccl_pid")
    if pid is None:  # no HCCL lane (a text export's lane may have pid -1)
        return []
    lanes: list[tuple[str, int, list[int]]] = []
    for tid, name in zip(*threads_in_order(profile.threads, pid), strict=True):
        if "Communication" in name:
            lanes.append((name, int(tid), []))
        elif name and lanes:
            lanes[-1][2].append(int(tid))
    return lanes


def wait_candidates(tasks: pd.DataFrame | tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per task: is it a Notify_Wait that counts as waiting (the 4-letter history rule, reference-1 §5.7).

    ``tasks`` (a frame with ``name`` and ``tid``, or those two arrays) must be sorted by start.
    A Notify_Wait is excluded when the plane's history of the previous four tasks
    (R = RDMASend, N = Notify_Wait, O = other, padded with O) is "RRNR" or ends with "RR".
    """
    if isinstance(tasks, pd.DataFrame):
        name, tid = col_of(tasks, "name", object), col_of(tasks, "tid", np.int64)
    else:
        name, tid = tasks
    n = len(name)
    if n == 0:
        return np.zeros(0, dtype=bool)
    letter = np.where(name == RDMA_SEND, 1, np.where(name == NOTIFY_WAIT, 2, 0)).astype(np.int8)
    order = np.argsort(tid, kind="stable")  # per plane, start order kept
    lt = letter[order]
    pos = positions_in_runs(tid[order])

    def prev(k: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.int8)
        if n > k:
            out[k:] = lt[:-k]
        out[pos < k] = 0
        return out

    p1, p2, p3, p4 = prev(1), prev(2), prev(3), prev(4)
    excluded = (pos >= 1) & (((p2 == 1) & (p1 == 1)) | ((p4 == 1) & (p3 == 1) & (p2 == 2) & (p1 == 1)))
    cand_sorted = (lt == 2) & ~excluded
    out = np.zeros(n, dtype=bool)
    out[order] = cand_sorted
    return out


def _sorted_iv(ts: np.ndarray, dur: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    o = np.argsort(ts, kind="stable")
    return ts[o], ts[o] + dur[o]


def _groups(profile: Profile, bd: Breakdown) -> None:
    """Wait / transmit per group and uncovered overlap between groups (reference-1 §5.7-§5.8)."""
    lanes = hccl_lanes(profile)
    if not lanes:
        return
    ov = profile.overlap
    nov = col_of(ov, "name", object) == NOT_OVERLAPPED
    ws, we = _sorted_iv(col_of(ov, "ts", np.int64)[nov], col_of(ov, "dur", np.int64)[nov])
    windows = timeline.union(ws, we)
    c = profile.comm
    lane = col_of(c, "lane", object)
    c_ts, c_dur = col_of(c, "ts", np.int64), col_of(c, "dur", np.int64)
    c_tid, c_name = col_of(c, "tid", np.int64), col_of(c, "name", object)
    task = np.flatnonzero(lane == "task")
    task = task[np.argsort(c_ts[task], kind="stable")]
    task_names = c_name[task]
    cand = task[wait_candidates((task_names, c_tid[task]))]
    cand_tid = c_tid[cand]
    planes, at = np.unique(cand_tid, return_inverse=True)
    sums = np.zeros(len(planes), np.int64)
    np.add.at(sums, at.reshape(-1), c_dur[cand])
    cand_sum = dict(zip(planes.tolist(), sums.tolist(), strict=True))
    op = np.flatnonzero(lane == "op")
    ops_of, waits_of = _rows_by_tid(op, c_tid[op]), _rows_by_tid(cand, cand_tid)
    # msprof gives a group one lane per HCCL kind (ordinary and MC2 / KFC tasks), each named "Group <g>
    # Communication" with planes of its own: a group's figures cover all its lanes (the last lane alone
    # counted before, while the total wait had every lane's)
    ops: dict[str, list[np.ndarray]] = {}
    waits: dict[str, list[np.ndarray]] = {}
    picked = 0  # the candidate time of the planes picked: 0 where each group's least-waiting plane has none
    for name, gtid, planes in lanes:
        ops.setdefault(name, []).append(ops_of(gtid))
        mine = waits.setdefault(name, [])
        if planes:
            best = min(planes, key=lambda t: cand_sum.get(t, 0))  # first plane wins ties
            picked += cand_sum.get(best, 0)
            mine.append(waits_of(best))
    uncovered: list[tuple[str, tuple[np.ndarray, np.ndarray]]] = []
    for name, parts in ops.items():
        rows = np.concatenate(parts)
        os_, oe = _sorted_iv(c_ts[rows], c_dur[rows])
        cb = np.concatenate(waits[name]) if waits[name] else np.zeros(0, np.int64)
        cs, ce = _sorted_iv(c_ts[cb], c_dur[cb])
        wait = _overlap_len(timeline.near(windows, cs, ce), cs, ce) if cb.size else 0
        unc_iv = timeline.intersect((os_, oe), timeline.near(windows, os_, oe))  # the group's uncovered time
        unc = timeline.length(unc_iv)
        bd.groups[name] = {"wait": int(wait), "transmit": int(unc - wait)}
        if wait > unc:
            bd.missing.append(negative_transmit_line(profile, name, int(wait), int(unc)))
        bd.wait_ns += int(wait)
        uncovered.append((name, unc_iv))
    # only a zero Wait Time that the least-waiting planes' lack of Notify_Wait makes is explained with it
    # (``overall.table_notes``), not one whose waits lie under computing: no pass otherwise
    if not bd.wait_ns and not picked:
        bd.notify_wait_ns = int(c_dur[task[task_names == NOTIFY_WAIT]].sum())
    if not bd.wait_ns and op.size and not task.size:  # the file by its name: a lone timeline is named otherwise
        trace = term_safe(os.path.basename(profile.files.get("trace_view.json") or "trace_view.json"))
        # what records them too: "(a Level0 export records none)" left the user without the way to a Wait Time
        bd.wait_unread = (f"its {trace} holds the HCCL communication ops but no HCCL task (a Level0 export records "
                          f"none; {HCCL_TASK_LEVELS}), so none reads as Notify_Wait")
    for (i, j), v in sorted(timeline.pairwise_overlaps([iv for _, iv in uncovered]).items()):
        bd.group_pairs[(uncovered[i][0], uncovered[j][0])] = v


def _rows_by_tid(rows: np.ndarray, tid: np.ndarray) -> Callable[[int], np.ndarray]:
    """``lambda t: rows[tid == t]`` from one stable sort by lane: a mask per group lane scanned every row once per
    lane, quadratic in the groups (``_groups`` at 16,000 groups of 19 HCCL events each: 0.91 -> 0.56 s CPU)."""
    order = np.argsort(tid, kind="stable")  # a lane's rows keep their order
    by, keys = rows[order], tid[order]

    def of(t: int) -> np.ndarray:
        return by[np.searchsorted(keys, t, "left"):np.searchsorted(keys, t, "right")]
    return of


def negative_transmit_line(profile: Profile, group: str, wait: int, uncovered: int) -> str:
    """The warning for a text export's group whose Transmit (uncovered - wait) is negative. reference-1 §5.7 fixes
    the rule: the wait is its Notify_Wait tasks' time inside the not-overlapped windows, the uncovered time its ops'
    time inside them, measured apart; so tasks lying outside the group's ops (none in the samples) give a Wait
    above the group's uncovered time and a negative Transmit, which the sheet would show without a word. (The DB
    breakdown measures the wait within the group's uncovered op time: docs/differences.md.)"""
    return (f"{profile.files.get('trace_view.json', profile.path)}: communication group {group}: Transmit reads "
            f"{(uncovered - wait) / 1e6:.6f} ms, below 0: its Wait ({wait / 1e6:.6f} ms, Notify_Wait tasks inside "
            f"the not-overlapped windows) exceeds its uncovered communication time ({uncovered / 1e6:.6f} ms, its ops "
            "inside them): some of those tasks lie outside the group's ops (reference-1 §5.7 measures the two apart)")


def _overlap_len(windows: timeline.Intervals, es: np.ndarray, ee: np.ndarray) -> int:
    """Exact ``|union(events) ∩ windows|`` (the original's OVERLAP walk can count twice)."""
    return timeline.length(timeline.intersect((es, ee), windows))


# --------------------------------------------------------------------------- side-file figures


def pg_names(metadata: dict) -> dict[str, str]:
    """"Group {id} Communication" -> process-group name, from profiler_metadata.json (reference-1 §5.10)."""
    info = metadata.get("parallel_group_info") if isinstance(metadata, dict) else None
    if not isinstance(info, dict):
        return {}
    out = {}
    for gid, v in info.items():
        name = v.get("group_name", "") if isinstance(v, dict) else ""
        # a null name is no name (as an empty one), not the pg "None" whose groups would pair across the sides
        out[f"Group {gid} Communication"] = "" if name is None else name if isinstance(name, str) else str(name)
    return out


def bandwidths(communication: dict | None, problems: list[str] | None = None,
               absent: list[str] | None = None) -> tuple[float, float] | None:
    """(RDMA, SDMA) GB/s over every communication.json entry (one per step) holding a bandwidth block: the summed
    transit size over the summed transit time, since the OverallMetrics rows beside them cover the whole profile
    (the original keeps the last entry's, one step of several). An entry without a transit time gives no
    bandwidth on its own (0), so its size is left out too. None if no entry has a block. A value that is not
    a number makes its kind 0 GB/s, as a missing one; ``problems`` collects what was wrong. A block without its
    size or time key, or a bandwidth block without an RDMA or SDMA block, reads it as 0, as the original does;
    every export writes them all, so ``absent`` names it."""
    if not isinstance(communication, dict):
        return None
    sums = {"RDMA": [0.0, 0.0], "SDMA": [0.0, 0.0]}  # size (MB), time (ms)
    broken: set[str] = set()
    seen = problems if problems is not None else []
    lacks = absent if absent is not None else []
    found = False
    several = len(communication) > 1
    for step, entry in communication.items():
        try:
            info = entry["collective"]["Total Op Info"]["Communication Bandwidth Info"]
        except (KeyError, TypeError):
            continue
        if not isinstance(info, dict):
            continue
        found = True
        for kind, total in sums.items():
            got = _transit(info.get(kind, _ABSENT), kind, seen, f" in {short_repr(step)}" if several else "", lacks)
            if got is None:
                broken.add(kind)
            elif got[1] > 0:
                total[0] += got[0]
                total[1] += got[1]
    if not found:
        return None
    rdma, sdma = (0.0 if kind in broken else _quotient(*sums[kind], kind, seen) for kind in ("RDMA", "SDMA"))
    return rdma, sdma


#: Transit figures no bandwidth block holds: over 1 PB moved (no device holds more) or a transit of over a week
#: (the loaders' bounds of a reserved total and of a duration, ``numparse.MAX_RESERVED_BYTES`` /
#: ``MAX_DURATION_NS``). A size of 1e308 MB read as a bandwidth of 309 digits in the console.
_TRANSIT_LIMITS = {"Transit Size(MB)": 1e9, "Transit Time(ms)": 7 * 86_400 * 1e3}
_ABSENT = object()


def _transit(block: object, kind: str, problems: list[str], where: str,
             absent: list[str] | None = None) -> tuple[float, float] | None:
    """(size MB, time ms) of one bandwidth block, a missing block or value 0 (reference-1 §5.9); None where the
    block is no object or a value is not a usable number (each named in ``problems``); a key the block lacks, or
    the block itself where the bandwidth block lacks it (``_ABSENT``), is named in ``absent``."""
    if block is _ABSENT:
        if absent is not None:  # every export writes each kind's block: one cut or renamed moved the figure to 0
            absent.append(f"an {kind} block{where}")
        return 0.0, 0.0
    if not isinstance(block, dict):  # null, a number, a list: no block of figures, named
        problems.append(f"{kind} {json_repr(block)}{where}")
        return None
    values = []
    for key in ("Transit Size(MB)", "Transit Time(ms)"):
        if key not in block and absent is not None:  # a block cut or edited: its 0 moved the bandwidth unsaid
            absent.append(f"{kind} {key}{where}")
        raw = block.get(key, 0)
        # a bool or null is no size, and nor is text: msprof writes numbers, and float() read "5" as 5 unsaid;
        # an int beyond float range (10**400) is as unusable as inf
        try:
            v = math.nan if raw is None or isinstance(raw, bool | str) else float(raw)
        except (TypeError, ValueError, OverflowError):
            v = math.nan
        if not math.isfinite(v) or v < 0 or v > _TRANSIT_LIMITS[key]:
            problems.append(f"{kind} {key} {json_repr(raw)}{where}")
            v = math.nan
        values.append(v)
    if not all(math.isfinite(v) for v in values):
        return None
    return values[0], values[1]


def _quotient(size: float, time: float, kind: str, problems: list[str]) -> float:
    if time <= 0:
        return 0.0
    bw = size / time
    if not math.isfinite(size) or not math.isfinite(time) or not math.isfinite(bw):  # sums or a time near 0
        problems.append(f"{kind} bandwidth {short_repr(size)} MB / {short_repr(time)} ms")
        return 0.0
    return bw


def _bandwidth(profile: Profile, bd: Breakdown) -> None:
    if profile.communication is None:
        # the loader has said the file does not exist or is empty: the note under the console table, where this
        # side's 0.000GB/s shows beside the other side's figure, says only what that costs
        level0 = (" (a Level0 export records none; Level1 or Level2 writes it)"
                  if profile.extra.get("profiler_level") == "Level0" else "")
        bd.bandwidth_missing = f"no usable communication.json{level0}"
        return
    problems: list[str] = []
    absent: list[str] = []
    bw = bandwidths(profile.communication, problems, absent)
    # each list names a few (a block per step: an export of 100 steps named 100 blocks on one line)
    if absent:
        bd.missing.append(f"{profile.files.get('communication.json', profile.path)}: bandwidth block(s) without "
                          f"{short_list(absent, 3, False)}; read as 0, as the original does (a block without a time "
                          "gives no bandwidth, one without a size moves none)")
    if problems:
        bd.missing.append(f"{profile.files.get('communication.json', profile.path)}: "
                          f"not a usable number (no number, not finite, negative, or over 1 PB or a week): "
                          f"{short_list(problems, 3, False)}; that bandwidth is shown as 0")
    if bw is None:
        # the file's problem, which no loader line says, in the log (a console without a bandwidth column too);
        # what it costs under the console table
        bd.missing.append(f"{profile.path}: communication.json has no 'Communication Bandwidth Info' block")
        bd.bandwidth_missing = "its communication.json gives no bandwidth"
        return
    bd.rdma_bandwidth, bd.sdma_bandwidth = bw
