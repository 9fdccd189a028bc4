"""Time breakdown of an Ascend profiler DB (reference-1 §7.3, §8).

Reads only the ``Profile`` the ``ascend_db`` loader filled (already limited to
the requested step, reference-1 §7.1). Unlike the text export there is no
"Overlap Analysis" lane: computing, uncovered communication and the
not-overlapped windows are derived from the task intervals themselves, exactly,
on int64 ns (``timeline``):

* computing = |∪ compute tasks|; busy = ∪ (compute tasks ∪ communication ops);
  uncovered communication = |busy| − computing;
* not-overlapped windows = busy − compute tasks;
* E2E spans the busy intervals and every TASK whose type is not a kernel type; the part of it outside the busy
  span (``Breakdown.outside_busy_ns``, carried to the verdict and the gate by the result frame "e2e") is what a
  text export's E2E (its Overlap Analysis span) would leave out.

Deliberate differences (docs/differences.md, "DB not-overlapped windows"):
the original builds the windows only from busy intervals that *begin* with a
communication op, so communication that starts while a kernel runs is missing
from the per-group wait / transmit rows (their sum falls short of "Uncovered
Communication Time"). We take every window. Wait, transmit and the group-pair
overlap use exact interval intersections, like the text breakdown
(``breakdown_npu._groups``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .. import timeline
from ..columns import col_of
from ..model import COPY_TASK_TYPES, SDMA_TASK_TYPES, Profile, factorize, pair_codes
from ..options import Options
from . import classify
from .breakdown import Breakdown, Bucket, peak_reserved_gb
from .breakdown_npu import EVENT_WAIT_TASK, HCCL_TASK_LEVELS, LCCL_KERNEL, add_mc2, no_pmu_why, wait_candidates

#: TASK types that are kernels themselves: excluded from the E2E task span (reference-1 §7.3.6).
E2E_EXCLUDED = frozenset({"KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV",
                          "PROFILING_ENABLE", "PROFILING_DISABLE"})
#: rts task types of cube kernels when TASK_PMU_INFO is empty.
CUBE_RTS_TYPES = ("KERNEL_AICORE", "KERNEL_MIX_AIC")


def db_breakdown(profile: Profile, opts: Options | None = None, kw: classify.Keywords | None = None) -> Breakdown:
    """The time breakdown of one DB profile (all times int64 ns)."""
    bd = Breakdown(kind="NPU")
    # the only source of the bandwidths is a text export's communication.json (reference-1 §5.9, §7); a DB
    # export writes them per op to analysis.db (CommAnalyzerBandwidth), which compare never reads (§2.1)
    bd.bandwidth_missing = ("a DB export writes its bandwidth to analysis.db, which the comparison does not read "
                            "(as the original)")
    kx = profile.extra.get("kernel_extra")
    if kx is not None and "schedule" in kx:
        # the tasks of AI-CPU HCCL kernels and of the MC2 KFC stream that newer msprof writes to the schedule
        # table; they stay in the kernel tables for KernelCompare and the op trees
        profile = _without(profile, col_of(kx, "schedule", bool))
    # kernel names are tested once per distinct name (four predicates over one factorization of ~50k names)
    codes, uniq = factorize(col_of(profile.kernels, "name", object))
    # HCCL's own kernels (AIV mode; AI-CPU in older layouts) are communication: no computing and no computing
    # category (msprof's Overlap Analysis leaves them out), though their streams are compute streams for SDMA
    hccl = classify.is_hccl_kernel(uniq)[codes]
    computing = _without(profile, hccl)
    bd.memory_gb = peak_reserved_gb(profile) or 0.0
    if not bd.memory_gb:  # why, for the Mem Usage note (an absent MEMORY_RECORD and an empty one read alike)
        bd.memory_missing = profile.extra.get("memory_missing", "")
        bd.memory_zero = bool(profile.extra.get("memory_zero"))
    _categorise(computing, bd, kw or classify.load_keywords(), (codes[~hccl], uniq))
    lanes = _lanes(profile)  # split once: an object-column comparison per use cost 2-3 ms at 80k rows
    _lccl(profile, bd, lanes)
    _sdma_stream(profile, bd)
    windows = _intervals(computing, bd, lanes)
    _groups(profile, bd, windows, lanes)
    return bd


def _lanes(profile: Profile) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The communication ops and tasks (``comm`` lanes "op" and "task")."""
    c = profile.comm
    lane = col_of(c, "lane", object) if len(c) else np.zeros(0, object)
    return c[lane == "op"], c[lane == "task"]


def _without(profile: Profile, drop: np.ndarray) -> Profile:
    """``profile`` without the kernels (and their ``kernel_extra`` rows) ``drop`` marks."""
    if not drop.any():
        return profile
    keep = ~drop
    kx = profile.extra.get("kernel_extra")
    extra = profile.extra if kx is None else {**profile.extra, "kernel_extra": kx[keep].reset_index(drop=True)}
    return dataclasses.replace(profile, kernels=profile.kernels[keep].reset_index(drop=True), extra=extra)


# --------------------------------------------------------------------------- categories


def flow_starts(profile: Profile) -> np.ndarray:
    """Per compute task: start (ns) of the torch op whose CANN connection id is the task's, 0 if none."""
    k = profile.kernels
    out = np.zeros(len(k), dtype=np.int64)
    oc = profile.extra.get("op_connections")
    if oc is None or not len(oc) or not len(k):
        return out
    op_ts = col_of(profile.ops, "ts", np.int64)[col_of(oc, "op_row")]
    cid = col_of(oc, "connection_id", np.int64)
    first = pd.Series(op_ts).groupby(cid, sort=True).first()  # first op listing that id wins
    keys, vals = first.index.to_numpy(dtype=np.int64), first.to_numpy(dtype=np.int64)
    q = col_of(k, "connection_id", np.int64)
    pos = np.minimum(np.searchsorted(keys, q), max(keys.size - 1, 0))
    hit = (keys.size > 0) & (keys[pos] == q) & (q >= 0)
    out[hit] = vals[pos[hit]]
    return out


def cube_mask(profile: Profile) -> np.ndarray:
    """Cube kernels: PMU aic_total_time or aic_mac_time non-zero; without PMU rows, rts type KERNEL_AICORE/MIX_AIC."""
    kx = profile.extra.get("kernel_extra")
    n = len(profile.kernels)
    if kx is None or len(kx) != n:
        return np.zeros(n, dtype=bool)
    if profile.extra.get("has_pmu"):
        tot = np.nan_to_num(col_of(kx, "aic_total_time", float))
        mac = np.nan_to_num(col_of(kx, "aic_mac_time", float))
        return (tot != 0) | (mac != 0)
    return kx["rts_type"].isin(CUBE_RTS_TYPES).to_numpy(dtype=bool)


def _categorise(profile: Profile, bd: Breakdown, kw: classify.Keywords,
                name_codes: tuple[np.ndarray, np.ndarray]) -> None:
    """Label the compute tasks and add them to the computing buckets; ``name_codes``: the factorized kernel names
    (codes per task, distinct names) on which the name predicates run."""
    k = profile.kernels
    if not len(k):
        return
    kx = profile.extra["kernel_extra"]
    # the original visits tasks sorted by connectionId, then (stably) by flow start
    by_conn = np.argsort(col_of(k, "connection_id", np.int64), kind="stable")
    starts = flow_starts(profile)
    order = by_conn[classify.processing_order(starts[by_conn])]
    names = col_of(k, "name", object)[order]
    codes, uniq = name_codes[0][order], name_codes[1]
    types = col_of(kx, "op_type", object)[order]
    dur = col_of(k, "dur", np.int64)[order]
    ts = col_of(k, "ts", np.int64)[order]
    flow_ts = starts[order]
    is_cube = cube_mask(profile)[order]
    if state := profile.extra.get("pmu_table"):  # as a text export's kernel_details.csv without PMU columns is said
        why = no_pmu_why(profile, "an export recorded without AI Core metrics: Level0, or aic_metrics AiCoreNone")
        bd.missing.append(f"{profile.path}: TASK_PMU_INFO is {state} ({why}), so Cube kernels are told by task type "
                          f"({' / '.join(CUBE_RTS_TYPES)}), not by PMU figures: {int(is_cube.sum()):,} of its "
                          f"{len(k):,} computing tasks count as cube kernels by that rule, which PMU figures may split "
                          "otherwise")
    ops = profile.ops
    cube_ops = classify.cube_ops(col_of(ops, "name", object), col_of(ops, "ts", np.int64),
                                 col_of(ops, "dur", np.int64), kw=kw)
    labels = classify.categorize(
        dur, flow_ts, is_cube, cube_ops,
        is_trans=classify.is_trans_kernel_name(uniq, kw)[codes],
        page_attention=classify.per_unique(types, lambda t: "pagedattention" in t),
        tensor_move=classify.per_unique(uniq, lambda n: n.startswith("aclnninplacecopy") and "tensormove" in n)[codes],
        mc2=classify.is_mc2_name(uniq, kw)[codes],
        npu_type=types,
    )
    classify.fill_buckets(bd, labels, dur)
    classify.fill_conversions(bd, labels, dur, classify.is_conversion_type(types))
    sel = np.flatnonzero(labels == classify.MC2)
    if sel.size:
        pmu = kx.iloc[order]
        mac = np.nan_to_num(col_of(pmu, "aic_mac_time", float))
        mte2 = np.nan_to_num(col_of(pmu, "aic_mte2_time", float))
        aiv = np.nan_to_num(col_of(pmu, "aiv_time", float))
        comp = np.rint(np.maximum(mac, mte2) + aiv).astype(np.int64)  # DB PMU times are ns
        _mc2(profile, bd, sel, names, ts, dur, comp)


def _mc2(profile: Profile, bd: Breakdown, sel: np.ndarray, names: np.ndarray, ts: np.ndarray,
         dur: np.ndarray, comp: np.ndarray) -> None:
    """MC2 kernels; C_CORE_SQE tasks from the DB's TASK table, walked in start order as the text path
    (reference-1 §7.3.2, §5.6): overlapping tasks make end order differ."""
    sq = profile.extra.get("c_core_sqe")
    if sq is None or not len(sq):
        sqe_end = np.zeros(0, np.int64)
    else:
        order = np.argsort(col_of(sq, "ts", np.int64), kind="stable")
        sqe_end = col_of(sq, "end", np.int64)[order]
    add_mc2(bd, sqe_end, sel, names, ts, dur, comp)


def _lccl(profile: Profile, bd: Breakdown, lanes: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> None:
    if not len(profile.comm):
        return
    ops = (lanes or _lanes(profile))[0]
    d = col_of(ops, "dur", np.int64)[classify.per_unique(col_of(ops, "name", object),
                                                                lambda n: n == LCCL_KERNEL)]
    if d.size:
        bd.lccl.add(int(d.sum()), d.size)


def _sdma_stream(profile: Profile, bd: Breakdown) -> None:
    """SDMA task time on compute streams (reference-1 §7.3.4; stream 0 counts here). A task whose TASK.streamId is
    NULL (-1, said by the loader) is on no stream: all such tasks made one stream, a compute stream as soon as
    one kernel lacked its stream, so their SDMA tasks counted or not by chance."""
    ts = profile.extra.get("task_summary")
    if ts is None or not len(ts):
        return
    wait_streams = set(ts.loc[ts["rts_type"] == EVENT_WAIT_TASK, "stream"].tolist()) - {-1}
    compute_streams = set(profile.kernels["stream"].tolist()) - {-1}
    streams = (wait_streams & compute_streams) if wait_streams else compute_streams
    sd = ts[ts["rts_type"].isin(SDMA_TASK_TYPES) & ts["stream"].isin(list(streams))]
    if len(sd):
        bd.sdma_stream.add(int(sd["total_ns"].sum()), int(sd["count"].sum()))
    # the copies the rule passed over (a current export's MEMCPY_ASYNC, all of them), which SDMA Time leaves out
    cp = ts[ts["rts_type"].isin(COPY_TASK_TYPES)]
    bd.unread_copies.add(int(cp["total_ns"].sum()) - bd.sdma_stream.ns, int(cp["count"].sum()) - bd.sdma_stream.count)
    unread = cp[~cp.index.isin(sd.index) & (cp["count"] > 0)]
    bd.unread_copy_types = tuple(sorted(set(unread["rts_type"].tolist())))


# --------------------------------------------------------------------------- intervals


def _iv(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    s = col_of(df, "ts", np.int64)
    return s, s + col_of(df, "dur", np.int64)


def _intervals(profile: Profile, bd: Breakdown,
               lanes: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> timeline.Intervals:
    """Computing, uncovered communication and E2E; returns the not-overlapped windows. ``lanes``: the
    communication ops and tasks, as ``_lanes`` splits them."""
    ks, ke = _iv(profile.kernels)
    c = profile.comm
    cs, ce = _iv((lanes or _lanes(profile))[0]) if len(c) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    compute = timeline.union(ks, ke)
    busy = timeline.union(np.concatenate([ks, cs]), np.concatenate([ke, ce]))
    bd.computing_ns = timeline.length(compute)
    bd.uncovered_comm_ns = timeline.length(busy) - bd.computing_ns
    first, last = [], []
    if busy[0].size:
        first.append(int(busy[0][0]))
        last.append(int(busy[1][-1]))
    tsum = profile.extra.get("task_summary")
    if tsum is not None and len(tsum):
        other = tsum[~tsum["rts_type"].isin(E2E_EXCLUDED)]
        if len(other):
            first.append(int(other["first_start"].min()))
            last.append(int(other["last_end"].max()))
    if first:
        cp = profile.extra.get("copy_tasks")  # no idle time either
        copies = (col_of(cp, "ts", np.int64), col_of(cp, "end", np.int64)) if cp is not None and len(cp) else None
        bd.set_window(min(first), max(last), busy, profile.files.get("db", profile.path), copies)
        if busy[0].size:  # what the non-kernel tasks add to the window (the "NPU export kind" note names it)
            _outside_busy(bd, (min(first), max(last)), (int(busy[0][0]), int(busy[1][-1])), copies, cp is not None)
    else:
        bd.missing.append(f"{profile.path}: no computing task, communication op or device task in range")
    return timeline.subtract(busy, compute)


def _outside_busy(bd: Breakdown, window: tuple[int, int], span: tuple[int, int],
                  copies: tuple[np.ndarray, np.ndarray] | None, read: bool) -> None:
    """The part of the E2E ``window`` outside the computing and communication ``span``, where it lies and the copies
    in it: the export-switch words say what it holds (the level-1 sample's 5.686 ms before its first kernel are two
    MEMCPY_ASYNC, 0.831 ms, and 4.855 ms with no task; "device tasks" said all of it was tasks). ``read``: whether
    the copy tasks were loaded (the DB loader reads them in every run; a profile made without them leaves
    ``outside_copies`` None, said as the time and its place alone)."""
    bd.outside_busy_ns = bd.e2e_ns - (span[1] - span[0])
    bd.outside_after_ns = max(0, window[1] - span[1])
    bd.outside_copies = Bucket() if read else None
    if copies is None or not bd.outside_busy_ns or bd.outside_copies is None:
        return
    region = timeline.union(np.array([window[0], span[1]], np.int64), np.array([span[0], window[1]], np.int64))
    held = timeline.intersect(timeline.union(*copies), region)
    n = int(np.count_nonzero((copies[1] > window[0]) & (copies[0] < span[0])
                             | (copies[1] > span[1]) & (copies[0] < window[1])))
    bd.outside_copies = Bucket(timeline.length(held), n)


def least_lanes(lane_keys: np.ndarray, by_lane: np.ndarray, dur: np.ndarray, g_uniq: np.ndarray,
                p_uniq: np.ndarray) -> dict[int, int]:
    """Each group's (group code ->) lane key ``g * len(p_uniq) + p`` of the plane of least candidate time, the
    first in the table on a tie. ``by_lane``: the candidates' stable sort by lane key, ``lane_keys`` their keys
    in that order, ``dur`` their durations in table order. Each lane's time is summed over its run of
    ``lane_keys``, the least picked by one sort: a pandas group-by of the candidates and a pass over its sums cost
    ~1.5 ms a side on DB pair 3's 300 HCCL tasks. A missing group or plane (None, NaN) is left out, as the
    group-by did."""
    if not lane_keys.size:
        return {}
    planes = max(len(p_uniq), 1)
    runs = np.flatnonzero(np.r_[True, lane_keys[1:] != lane_keys[:-1]])
    key, first = lane_keys[runs], by_lane[runs]  # a stable sort: each run's first candidate in the table
    time = np.add.reduceat(dur[by_lane], runs)
    g = key // planes
    named = ~(pd.isna(g_uniq)[g] | pd.isna(p_uniq)[key % planes])
    key, first, time, g = key[named], first[named], time[named], g[named]
    by_time = np.lexsort((first, time, g))
    heads = by_time[np.r_[True, g[by_time][1:] != g[by_time][:-1]]] if by_time.size else by_time
    return dict(zip(g[heads].tolist(), key[heads].tolist(), strict=True))


def _groups(profile: Profile, bd: Breakdown, windows: timeline.Intervals,
            lanes: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> None:
    """Wait / transmit per communication group and uncovered overlap between groups (reference-1 §7.3.7-8)."""
    if not len(profile.comm):
        return
    ops, tasks = lanes or _lanes(profile)
    tasks = tasks.iloc[np.argsort(col_of(tasks, "ts", np.int64), kind="stable")]
    # the history of the wait rule runs per (group, plane): give each pair its own lane id (pairs of codes: a
    # factorization of (group, plane) tuples cost 10x more)
    g_codes, g_uniq = factorize(col_of(tasks, "group", object))
    p_codes, p_uniq = factorize(col_of(tasks, "plane", object))
    lane_id = pair_codes(g_codes, p_codes)[0] if len(tasks) else np.zeros(0, np.int64)
    is_cand = wait_candidates((col_of(tasks, "name", object), np.asarray(lane_id, dtype=np.int64)))
    cand = tasks[is_cand]
    cand_g, cand_p = g_codes[is_cand], p_codes[is_cand]
    cand_ts, cand_end = _iv(cand)
    g_code = {g: i for i, g in reversed(list(enumerate(g_uniq.tolist())))}
    cand_groups = dict.fromkeys(cand["group"].tolist())  # ordered, and a set for the lookups below (lists of
    # thousands of groups scanned once per group: 4,000 groups 3.2 s, quadratic)
    op_groups = list(dict.fromkeys(ops["group"].tolist()))
    order = [*cand_groups, *(g for g in op_groups if g not in cand_groups)]
    # a (group, plane)'s candidates by one stable sort, not a mask over all of them per group
    lane_key = cand_g.astype(np.int64) * max(len(p_uniq), 1) + cand_p
    by_lane = np.argsort(lane_key, kind="stable")
    lane_keys = lane_key[by_lane]
    least = least_lanes(lane_keys, by_lane, col_of(cand, "dur", np.int64), g_uniq, p_uniq)
    uncovered: dict[str, timeline.Intervals] = {}
    o_s, o_e = _iv(ops)
    rows_of = pd.Series(np.arange(len(ops)), dtype=np.int64).groupby(col_of(ops, "group", object),
                                                                      sort=False).indices
    none = np.zeros(0, np.int64)
    for g in order:
        r = rows_of.get(g, none)
        unc = timeline.intersect((o_s[r], o_e[r]), timeline.near(windows, o_s[r], o_e[r]))
        uncovered[g] = unc
        wait = 0
        if g in cand_groups:
            key = least[g_code[g]]
            sel = by_lane[np.searchsorted(lane_keys, key, "left"):np.searchsorted(lane_keys, key, "right")]
            # within the group's own uncovered op time: the same as within the windows while its tasks lie
            # inside its ops, and never more than that time (tasks of a group with no op, or whose group
            # name is lost, made Transmit negative)
            wait = timeline.length(timeline.intersect((cand_ts[sel], cand_end[sel]), unc))
        bd.groups[g] = {"wait": int(wait), "transmit": int(timeline.length(unc) - wait)}
    bd.wait_ns = sum(v["wait"] for v in bd.groups.values())
    if not bd.wait_ns and len(ops):  # a zero that reads nothing (``overall.table_notes``)
        names = col_of(tasks, "name", object)
        if not len(tasks):
            bd.wait_unread = "its database holds its communication ops but no HCCL task, so none reads as Notify_Wait"
        elif not (np.isin(names, ("", "N/A"), invert=True) & pd.notna(names)).any():
            bd.wait_unread = (f"its {len(tasks):,} HCCL tasks have no task type (N/A: a Level0 export records none; "
                              f"{HCCL_TASK_LEVELS}), so none reads as Notify_Wait")
    for (i, j), v in sorted(timeline.pairwise_overlaps([uncovered[g] for g in op_groups]).items()):
        bd.group_pairs[(op_groups[i], op_groups[j])] = v
