"""GPU time breakdown (reference-1 §4.3) from a Kineto ``Profile``, with exact unions.

Which device events count is the original's rule, kept for parity:

* "collected" events are cat ``kernel`` and ``gpu_memcpy`` (as written in the
  file, case-insensitively). ``gpu_memset`` events and the legacy PyTorch 1.8
  ``Memcpy`` / ``Memset`` cats are never counted (the original never collects
  them; see docs/differences.md);
* E2E spans every collected event that has a stream. Unlike the original,
  stream 0 is a real stream (AMD ROCm puts every kernel on it);
* SDMA: collected events on the compute stream (the most frequent stream of
  non-NCCL kernels) whose name holds htod / dtod / dtoh / memset (device);
* computing = exact union of the other non-NCCL kernels on all streams;
  uncovered communication = union of NCCL/RCCL kernels minus computing. The
  original counted 1-µs ticks; on integer-µs traces the results are identical.
  Collective kernels of other libraries (``GPU_COMM_MASK``, ours) count as
  NCCL kernels here (``classify.gpu_comm_test``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
import pandas as pd

from .. import timeline as tl
from ..columns import col_of
from ..errors import ProfileError, side_named
from ..logs import api_worded
from ..model import KINETO_UNREAD_STREAMS, LAUNCH_CATS, RUNTIME_CATS, Profile, factorize, starts_at, unread_categories
from ..options import Options
from ..textsafe import shell_word, short_repr, term_safe
from . import classify
from .breakdown import Breakdown, last_of_keys, peak_reserved_gb, zero_readings

log = logging.getLogger("msprof-analyze")

#: Launch-flow categories (replaced by ``--gpu_flow_cat`` when given).
LAUNCH_FLOW_CATS = ("async_gpu", "async_cpu_to_gpu", "ac2g", "async")
#: Host op cats the original collects as torch ops (cube-op candidates).
TORCH_OP_CATS = frozenset({"cpu_op", "user_annotation", "operator", "runtime"}) | RUNTIME_CATS
SDMA_WORDS = ("htod", "dtod", "dtoh", "memset (device)")


def _lower(values: np.ndarray) -> np.ndarray:
    """Lower-cased copy of a text column, computed once per distinct value."""
    if not len(values):
        return np.zeros(0, dtype=object)
    codes, uniq = factorize(values)
    return np.array([str(u).lower() for u in uniq], dtype=object)[codes]


def _launch_cats(opts: Options | None) -> tuple[str, ...]:
    """The flow categories that link a kernel to its launch: ``--gpu_flow_cat`` when given."""
    return (opts.gpu_flow_cat.lower(),) if opts is not None and opts.gpu_flow_cat else LAUNCH_FLOW_CATS


def unmatched_flow_cat(profile: Profile, cat: str, quote: Callable[[str], str] = shell_word) -> str:
    """Why the "Can't find any flow event" warning's trace has no flow of ``--gpu_flow_cat``: one
    text for the op tree's warning and the time breakdown's, so a run that builds both says it once
    (``logs.said_once``). It names (three at most) the categories of the trace's flows but fwdbwd's, which links op
    to op, so the user can pick the one that links its ops to kernels: the bare "none of category" left it to
    searching the trace. ``quote``: how the names are quoted (``flow_cats_text``)."""
    held = set(col_of(profile.flows, "cat", object).tolist()) if len(profile.flows) else set()
    held = sorted((held - {"fwdbwd"}) | set(profile.extra.get("other_flow_cats", ())))
    if held:
        other = f"it holds flows of category {flow_cats_text(held, quote)}"
    else:
        other = "the trace holds no other flow that could link an op to its kernels"
    return f"none of category {term_safe(quote(cat))}, the --gpu_flow_cat given, so no op gets a kernel; {other}"


def flow_cats_text(cats: list[str], quote: Callable[[str], str] = shell_word) -> str:
    """Flow categories as the "Can't find any flow event" hints name them: the first three, quoted, then ", ..."
    where there are more. ``quote``: for the shell (the CLI's line: a name to paste after --gpu_flow_cat) or
    ``repr`` (compare()'s: ``logs.api_worded``). Escaped for the terminal after quoting: escaping before it doubled
    each backslash of a repr (``'a\\\\x1b'``)."""
    return ", ".join(term_safe(quote(c)) for c in cats[:3]) + (", ..." if len(cats) > 3 else "")


def no_flow_line(profile: Profile, why: str, side: str) -> str:
    """The original's "Can't find any flow event" line, then ``side`` and ``why`` in one parenthesis, as the op
    tree's warning and the time breakdown's both say it (one text, said once). ``why`` is the reason itself: a
    hint cut out of " (WHY)" by its first two characters and last one read wrong once its wording changed."""
    return f"Can't find any flow event in the file: {profile.path}{side_named(side, why)}"


def _warn_unmatched_flow_cat(profile: Profile, opts: Options | None, side: str = "") -> None:
    """A ``--gpu_flow_cat`` that names no flow of the trace links no kernel to its op, so the Flash Attention, Conv
    and Matmul rows lose their kernels (to Cube (other) / Vector): a run with the time breakdown alone
    (``--enable_profiling_compare``, ``--fail_on_regression``) builds no op tree, whose warning said so, and changed
    those rows without a word."""
    if opts is None or not opts.gpu_flow_cat:
        return
    flows = profile.flows
    if not len(flows) or not np.isin(col_of(flows, "cat", object), _launch_cats(opts)).any():
        said = no_flow_line(profile, unmatched_flow_cat(profile, opts.gpu_flow_cat), side)
        log.warning("%s", said, **api_worded(said, no_flow_line(profile, unmatched_flow_cat(
            profile, opts.gpu_flow_cat, repr), side)))


def flow_start_of(profile: Profile, kernel_ts: np.ndarray, opts: Options | None = None) -> np.ndarray:
    """Per kernel start (ns): start of the launch flow ending there, 0 when none (reference-1 §3.3)."""
    flows = profile.flows
    cats = _launch_cats(opts)
    out = np.zeros(len(kernel_ts), dtype=np.int64)
    if not len(flows) or not len(kernel_ts):
        return out
    # a graph replay's flow starts at the graph launch, which says nothing of the kernel's op
    sel = np.isin(col_of(flows, "cat", object), cats) & (col_of(flows, "replay", np.int64) != 1)
    f_ts = col_of(flows, "f_ts", np.int64)[sel]
    s_ts = col_of(flows, "s_ts", np.int64)[sel]
    if not f_ts.size:
        return out
    # several flows ending at one time: the later one wins (the original's dict overwrite)
    order = np.argsort(f_ts, kind="stable")
    f_ts, s_ts = f_ts[order], s_ts[order]
    last = np.append(f_ts[1:] != f_ts[:-1], True)
    f_ts, s_ts = f_ts[last], s_ts[last]
    kt = np.asarray(kernel_ts, dtype=np.int64)
    pos = np.minimum(np.searchsorted(f_ts, kt), f_ts.size - 1)
    hit = f_ts[pos] == kt
    out[hit] = s_ts[pos[hit]]
    return out


def _early_kernels(bd: Breakdown, profile: Profile, opts: Options | None, lanes: tuple[np.ndarray, np.ndarray],
                   ts: np.ndarray, end: np.ndarray, computing: np.ndarray, window_lo: int) -> int | None:
    """Kernels without a launch in the trace (no launch flow, graph replays included, ends at them) that run
    before the first kernel launched in it: the previous step's tail, which the E2E window opens with. Only
    where some kernel has a launch (``bd.has_launches``; a trace without flows says so elsewhere).
    ``early_kernels`` holds the computing ones (their count, and the union of their times: concurrent streams
    overlap), which the categories count; collectives among them count as communication. Returns the start of
    the first launched kernel (None where none is), before which every kernel is of that tail."""
    flows = profile.flows
    if not len(flows) or not ts.size:
        return None
    pid, tid = lanes
    mine = np.isin(col_of(flows, "cat", object), _launch_cats(opts))
    # a kernel is launched where a flow ends at it: its lane and start (a host call's flow end can share the ts)
    launched = starts_at(pid, tid, ts, *(col_of(flows, c, np.int64)[mine] for c in ("f_pid", "f_tid", "f_ts")))
    if not launched.any():
        return None
    bd.has_launches = True
    first = int(ts[launched].min())
    early = ~launched & (ts < first)
    if early.any():
        bd.early_ns = max(0, first - window_lo)
        busy = early & computing
        if busy.any():
            bd.early_kernels.add(tl.length(tl.union(ts[busy], end[busy])), int(busy.sum()))
    return first


def _replayed_kernels(bd: Breakdown, profile: Profile, opts: Options | None, lanes: tuple[np.ndarray, np.ndarray],
                      ts: np.ndarray, dur: np.ndarray) -> np.ndarray | None:
    """The computing kernels replayed from a CUDA / HIP graph: a launch flow ends at the kernel and starts at a
    graph launch call (``cudaGraphLaunch``, ``hipGraphLaunch``, ``cuGraphLaunch``; ROCm writes no flow start, and
    the loader links such ends to the call by correlation id). Flows alone cannot tell them: an NVIDIA graph of
    one kernel has one plain flow pair (hta's negative_queue_length_values_check: 25 of its 70 launches). The
    categories of replayed kernels come from their names alone, as the op around a graph launch says nothing
    of the op a kernel was captured from (``flow_start_of`` leaves the ROCm ones out; the original links one end
    per flow id), so a graph run's GEMMs are Cube (other) where an eager run's are Matmul; the "graph replays"
    check of the Summary says so where the two sides replay differently. Returns which kernels are replayed
    (None where none is)."""
    flows, ops = profile.flows, profile.ops
    if not len(flows) or not len(ops) or not ts.size:
        return None
    names = col_of(ops, "name", object).tolist()
    # the graph launch names found in the set of names (equal names are mostly one object: ~5x cheaper than
    # numbering them, which every GPU breakdown paid for a trace without graphs), then the cat of those ops alone
    graph = {n for n in set(names) if isinstance(n, str) and "graphlaunch" in n.lower()}
    if not graph:
        return None
    launch = np.fromiter(map(graph.__contains__, names), dtype=bool, count=len(names))
    rows = np.flatnonzero(launch)
    launch[rows] = classify.per_unique(col_of(ops, "cat", object)[rows], lambda c: c in LAUNCH_CATS)
    if not launch.any():
        return None
    mine = np.isin(col_of(flows, "cat", object), _launch_cats(opts))
    at_launch = starts_at(*(col_of(flows, c, np.int64)[mine] for c in ("s_pid", "s_tid", "s_ts")),
                          *(col_of(ops, c, np.int64)[launch] for c in ("pid", "tid", "ts")))
    if not at_launch.any():
        return None
    hit = starts_at(*lanes, ts, *(col_of(flows, c, np.int64)[mine][at_launch] for c in ("f_pid", "f_tid", "f_ts")))
    if not hit.any():
        return None
    bd.replayed.add(int(dur[hit].sum()), int(hit.sum()))
    return hit


#: The processes only an Ascend timeline names (trace_view.json, a CANN msprof_*.json): its device lanes.
NPU_LANE_NAMES = ("Ascend Hardware", "HCCL", "Overlap Analysis")


def npu_lanes(profile: Profile) -> list[str]:
    """The Ascend device lanes (``NPU_LANE_NAMES``) a trace read as a GPU trace names, in that order."""
    names = set(col_of(profile.processes, "name", object).tolist())
    return [n for n in NPU_LANE_NAMES if n in names]


def missing_kernels_hint(profile: Profile) -> str:
    """What to do about a GPU trace without kernel events. Recording with the CUDA activity helps only where
    the trace shows it was off: launch calls (cudaLaunchKernel, hipModuleLaunchKernel, cudaGraphLaunch) or
    memcpy / memset events are recorded only with it on, and then the kernel records were lost or cut out. An
    Ascend timeline put inside a JSON object (``{"traceEvents": [...]}``, as trace viewers save one) reads as a GPU
    trace, where CUDA advice misleads: its device processes are named instead. A trace whose complete events are
    of categories the loader does not read (``kineto._unread_cats``: kernels written under another name) is told
    so, not that its kernels were lost."""
    lanes = npu_lanes(profile)
    if lanes:
        return (f"it is an Ascend NPU timeline inside a JSON object (process{'es' if len(lanes) > 1 else ''} "
                f"{', '.join(map(repr, lanes))}), which is read as a GPU trace: pass the event list as the profiler "
                "wrote it: the profiling directory, its trace_view.json, or a CANN msprof_*.json")
    named = unread_categories(profile)
    if named:
        return (f"it holds complete events of categories that are not read: {named}; GPU work is read from the "
                "categories kernel, gpu_memcpy and gpu_memset (PyTorch 1.8: Kernel, Memcpy, Memset) alone, so a "
                "trace that names its kernels otherwise is not supported")
    ops = profile.ops
    launches = int((ops["cat"].str.lower().isin(LAUNCH_CATS) & ops["name"].str.contains("Launch", regex=False)).sum()
                   if len(ops) else 0)
    copies = len(profile.kernels)  # no kernel among them: memcpy / memset events
    if not (launches or copies):
        return "record it with torch.profiler.ProfilerActivity.CUDA"
    held = " and ".join(x for x in (f"{launches:,} kernel launch call(s)" if launches else "",
                                    f"{copies:,} memcpy / memset event(s)" if copies else "") if x)
    return (f"it holds {held}: the CUDA activity was recorded, but its kernel events were lost or cut from the "
            "file; record it again")


def _undirected_copies(profile: Profile, sel: np.ndarray, names: np.ndarray, dur: np.ndarray, side: str = "") -> None:
    """Warn of the compute stream's memcpys whose name gives no htod / dtod / dtoh direction: the SDMA rows leave
    them out by the original's name rule, so a peer-to-peer ("Memcpy PtoP (Device -> Device)") or host-to-host
    copy, or a name another profiler wrote, moves from SDMA to Free without a word. Kineto names every CUDA / HIP
    copy "Memcpy <kind> (<src> -> <dst>)" and the samples' are all HtoD / DtoH / DtoD, so this says nothing there."""
    if not sel.any():
        return
    codes, uniq = factorize(names[sel])
    top = uniq[int(np.argmax(np.bincount(codes)))]
    n = int(sel.sum())
    log.warning("%s: %s memcpy event(s) on the compute stream (%.3f ms; %s%s) name no HtoD / DtoH / DtoD "
                "direction, so OverallMetrics' SDMA row and the SDMA Time(Num) leave them out (the original's name "
                "rule), and their time stays in Free%s", profile.files.get("trace", profile.path), f"{n:,}",
                int(dur[sel].sum()) / 1e6, short_repr(str(top)), f" and {len(uniq) - 1:,} other name(s)"
                if len(uniq) > 1 else "", side_named(side))


def gpu_breakdown(profile: Profile, opts: Options | None = None, kw: classify.Keywords | None = None,
                  side: str = "") -> Breakdown:
    """Computing / communication / free breakdown of one Kineto profile (all times int ns); ``side``: the
    profile's, which its warnings name."""
    bd = Breakdown("GPU")
    # beside an NPU text export's bandwidth this side's 0.000GB/s would read as stalled transfers (pair 4)
    bd.bandwidth_missing = "a GPU trace records no transfer bandwidth"
    k = profile.kernels
    raw_cat = _lower(col_of(k, "task_type", object))
    rows = np.flatnonzero((raw_cat == "kernel") | (raw_cat == "gpu_memcpy"))
    if not (raw_cat[rows] == "kernel").any():
        raise ProfileError(profile.files.get("trace", profile.path), "no GPU kernels found in the trace",
                           hint=missing_kernels_hint(profile))
    kw = kw or classify.load_keywords()
    stream = col_of(k, "stream", np.int64)[rows]
    comm = classify.is_gpu_comm_kernel_name(col_of(k, "name", object)[rows], kw)
    # the compute stream comes from a pass over the file's events (reference-1 §4.2), before the kernel map
    # below drops duplicates: a kernel written twice counts twice, and ties go to the first stream in the file
    computing = (raw_cat[rows] == "kernel") & ~comm
    cand = computing & (stream >= 0)
    if not cand.any():  # no compute stream, so no E2E window: the original stops here (reference-1 §4.2)
        # a trace of collectives alone (a capture of a communication phase) has streams: say what it lacks
        n = int((raw_cat[rows] == "kernel").sum())
        unread = profile.extra.get(KINETO_UNREAD_STREAMS)  # written, but wrong ("abc", -1): not "missing"
        why = (f"no computing kernel carries a usable stream id: {unread[2]} of {unread[0]:,} kernel(s) is not an "
               f"integer of 0 or more (the first: {short_repr(unread[1])})" if computing.any() and unread else
               # no arg at all tells the backend apart: both names, as Kineto writes them
               'no computing kernel carries a stream id (args.stream, or an Intel XPU trace\'s args["sycl queue"])'
               if computing.any() else
               f"its only kernels are {n:,} collective(s) (communication), no computing kernel")
        raise ProfileError(profile.files.get("trace", profile.path),
                           "The profiling data does not contain kernel running data.", hint=why)
    _warn_unmatched_flow_cat(profile, opts, side)
    codes, uniq = pd.factorize(stream[cand])
    compute_stream = int(uniq[int(np.argmax(np.bincount(codes)))])

    # the original keys kernels by "pid-tid-ts": a later duplicate replaces an earlier one
    keep = last_of_keys(col_of(k, "pid", np.int64)[rows], col_of(k, "tid", np.int64)[rows],
                        col_of(k, "ts", np.int64)[rows])
    rows, stream, comm = rows[keep], stream[keep], comm[keep]
    is_kernel = raw_cat[rows] == "kernel"
    names = col_of(k, "name", object)[rows]
    ts = col_of(k, "ts", np.int64)[rows]
    end = ts + col_of(k, "dur", np.int64)[rows]
    has_stream = stream >= 0
    sdma = (stream == compute_stream) & classify.contains_any(names, SDMA_WORDS)
    bd.sdma_stream.add(int((end[sdma] - ts[sdma]).sum()), int(sdma.sum()))
    _undirected_copies(profile, (stream == compute_stream) & ~is_kernel & ~sdma, names, end - ts, side)

    work = is_kernel & ~sdma
    compute = work & ~comm
    comp_iv = tl.union(ts[compute], end[compute])
    bd.computing_ns = tl.length(comp_iv)
    comm_sel = work & comm
    if comm_sel.any():
        bd.uncovered_comm_ns = tl.length(tl.subtract((ts[comm_sel], end[comm_sel]), comp_iv))
    # E2E: every kernel and memcpy with a stream; idle: neither a computing nor an nccl kernel (the computing
    # union is already merged, so this second union is small) ...
    busy = tl.union(np.concatenate([comp_iv[0], ts[comm_sel]]), np.concatenate([comp_iv[1], end[comm_sel]]))
    # nor a copy: memcpy events, kernels named as copies (the SDMA rows), and memsets and PyTorch 1.8's "Memcpy"
    # events (by the normalised cat), which E2E leaves out
    cat = col_of(k, "cat", object)
    fill = np.flatnonzero((cat == "gpu_memset") | ((cat == "gpu_memcpy") & (raw_cat != "gpu_memcpy")))
    fill_ts, fill_dur = col_of(k, "ts", np.int64)[fill], col_of(k, "dur", np.int64)[fill]
    copies = (np.concatenate([ts[~work], fill_ts]), np.concatenate([end[~work], fill_ts + fill_dur]))
    bd.set_window(ts[has_stream].min(), end[has_stream].max(), busy, profile.files.get("trace", profile.path), copies)
    lanes = tuple(col_of(k, c, np.int64)[rows][is_kernel] for c in ("pid", "tid"))
    first = _early_kernels(bd, profile, opts, lanes, ts[is_kernel], end[is_kernel], compute[is_kernel],
                           int(ts[has_stream].min()))

    # categorise the computing kernels (reference-1 §3.7, GPU variant)
    cnames = names[compute]
    cts = ts[compute]
    cdur = end[compute] - cts
    ops = profile.ops
    o = np.flatnonzero(classify.per_unique(col_of(ops, "cat", object), lambda c: c in TORCH_OP_CATS))
    cube_ops = classify.cube_ops(col_of(ops, "name", object)[o], col_of(ops, "ts", np.int64)[o],
                                 col_of(ops, "dur", np.int64)[o], col_of(ops, "tid", np.int64)[o],
                                 backward_tid=profile.backward_tid, kw=kw)
    flow_ts = flow_start_of(profile, cts, opts)
    labels = classify.categorize(cdur, flow_ts, classify.is_cube_kernel_name(cnames, kw), cube_ops)
    classify.fill_buckets(bd, labels, cdur)
    classify.fill_conversions(bd, labels, cdur, classify.is_gpu_layout_kernel(cnames))
    replayed = _replayed_kernels(bd, profile, opts, tuple(col_of(k, c, np.int64)[rows][compute]
                                                          for c in ("pid", "tid")), cts, cdur)
    if len(cube_ops):  # a link decides a category only inside a Matmul / Conv / Flash Attention op
        # no launch flow ends at them: the categories read them by name alone (the original's rule), said by the
        # Summary's check; the previous step's tail and graph replays are said by their own checks
        free = flow_ts == 0
        if first is not None:
            free &= cts >= first
        if replayed is not None:
            free &= ~replayed
        bd.unlinked.add(int(cdur[free].sum()), int(free.sum()))

    peak = peak_reserved_gb(profile)
    if peak is not None:
        bd.memory_gb = peak
        if peak == 0.0 and (zero := zero_readings(profile)):  # every reading 0: "not recorded" was untrue
            bd.memory_missing = zero
            bd.memory_zero = True
    # else: the original's "Gpu profiling data doesn't contain memory info.", said where the run knows whether the
    # memory comparison says it of this side (overall._gpu_without_memory)
    return bd
