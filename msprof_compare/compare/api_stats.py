"""ApiCompare: host-side time per op name ("api"), both sides (reference-2 §7).

Every op-tree node except the root and ``ProfilerStep#`` nodes is an API call.
The calls are the nodes of the run's shared op tree (``optree.op_tree``, built
once per side), so API, operator and memory sheets agree on which ops there are.
Self time is the op's duration minus its callees' durations (``callers``: ops of
its own thread directly inside it; the original subtracts its tree children, which
can lie on other threads or run past its end). Values are rounded to 0.01 ms before
the average and before the ratios, as the original does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import timeline as tl
from ..columns import col_of
from ..errors import StepError, on_side
from ..model import DRIVER_CATS, STEP_MARK
from ..textsafe import and_list
from . import table
from .classify import per_unique
from .optree import OpTree, _nest, one_sided, op_tree
from .steps import data_file, side_step
from .table import STYLE_BOLD, STYLE_FLOAT, STYLE_INT, Column, Sheet, frame_from_columns

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

_SIDE = [
    Column("Total Duration(ms)", STYLE_FLOAT, 20),
    Column("Self Time(ms)", STYLE_FLOAT, 20),
    Column("Avg Duration(ms)", STYLE_FLOAT, 20),
    Column("Calls", STYLE_INT, 20),
]
COLUMNS = [
    Column("Order Id", STYLE_INT, 10), Column("api name", STYLE_BOLD, 30), *_SIDE, *_SIDE,
    Column("Diff Total Ratio", STYLE_FLOAT, 20), Column("Diff Self Ratio", STYLE_FLOAT, 20),
    Column("Diff Avg Ratio", STYLE_FLOAT, 20), Column("Diff Calls Ratio", STYLE_FLOAT, 20),
]
SPANS = ((2, 5), (6, 9))  # C1:F1 base, G1:J1 comparison


def callers(ts: np.ndarray, end: np.ndarray, tid: np.ndarray, pid: np.ndarray | None = None) -> np.ndarray:
    """Per op, the op whose self time excludes it (-1: none): the innermost op of its own thread (``pid``,
    ``tid``: two processes may reuse a thread id) that contains it. Not the op-tree parent: that tree
    (reference-2 §2.2) nests by start time alone, across threads and past the parent's end, and
    subtracting such children gave negative self times (pair 4: cudaStreamIsCapturing -7.36 ms for
    0.08 ms of calls, a 7 ms cudaFree that starts as it ends). This is how PyTorch's profiler counts self
    CPU time. A call is open over [start, end): one that ends as another starts holds nothing from then on,
    so back-to-back calls are callees of the call around them (pair 4: a 3.04 ms cudaMalloc starting as
    cudaStreamIsCapturing ends stayed in aten::empty_strided's self time when they were compared closed).
    An op that only partly overlaps the innermost open op of its thread is nobody's callee (PyTorch gives
    it to the next op that contains it; no sample trace has one)."""
    n = len(ts)
    out = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return out
    ts = np.asarray(ts, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    # per thread in start order; of ops starting together the longer first, so it holds the shorter
    keys = (np.arange(n), -end, ts, tid) if pid is None else (np.arange(n), -end, ts, tid, pid)
    order = np.lexsort(keys)
    tids = np.asarray(tid)[order]
    new_thread = np.r_[True, tids[1:] != tids[:-1]]
    if pid is not None:
        pids = np.asarray(pid)[order]
        new_thread |= np.r_[True, pids[1:] != pids[:-1]]
    g = np.cumsum(new_thread) - 1  # thread number of each op
    first = np.flatnonzero(new_thread)
    lo = np.minimum.reduceat(ts[order], first)
    hi = np.maximum.reduceat(end[order], first)
    spans = [h - lo_ + 1 for h, lo_ in zip(hi.tolist(), lo.tolist(), strict=True)]  # Python ints: no overflow
    if sum(spans) < 1 << 62:  # threads laid end to end on one time line, so no op nests across them
        base = np.concatenate([[0], np.cumsum(np.asarray(spans, dtype=np.int64))[:-1]]) - lo
    else:  # times too far apart for that: their ranks keep every comparison _nest makes
        _, rank = np.unique(np.concatenate([ts, end]), return_inverse=True)
        ts, end = rank[:n], rank[n:]
        base = np.arange(len(first), dtype=np.int64) * (2 * n)
    shift = base[g]
    # _nest takes an op as open up to its end inclusive; end - 1 (ns, or ranks) makes it [start, end)
    parent, _ = _nest(ts[order] + shift, end[order] + shift - 1, with_depth=False)
    has = parent >= 0
    child, par = order[has], order[parent[has]]
    inside = end[child] <= end[par]
    out[child[inside]] = par[inside]
    return out


def _calls(tree: OpTree, step: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the API calls' nodes in the original's order, every node's duration, every node's self time).

    Without a step: start-time order (an op around the step markers, such as a record_function around the
    profiled loop, is a call too, as in the original). With a step: breadth-first over the step's top-layer ops
    (``OpTree.top_layer``: children of the ``ProfilerStep#<step>`` nodes of no step ancestor) and all their
    descendants. Subtrees are contiguous in start order, so breadth-first order is (depth, start order), the depth
    not counting step markers: a marker nested in the step (a copy, a step starting inside or with it) put the ops
    under it a level below the step's others, so a copy of the marker reordered the sheet.
    """
    n = tree.n
    dur = tree.end - tree.ts
    caller = callers(tree.ts, tree.end, tree.tid, col_of(tree.ops, "pid", np.int64))
    called = caller >= 0
    self_ns = dur - np.bincount(caller[called], weights=dur[called], minlength=n).astype(np.int64)
    is_step = tree.step_nodes()
    if step < 0:
        order = np.flatnonzero(~is_step)
    else:
        top = tree.top_layer(step)
        if len(top):
            nodes = np.concatenate([np.arange(t, t + int(tree.size[t])) for t in top.tolist()])
            nodes = np.unique(nodes)
            depth = tree.depth
            if (tree.parent[is_step] >= 0).any():  # a marker below another op: the markers above each node
                marks = np.flatnonzero(is_step)
                above = np.zeros(n + 1, np.int64)
                np.add.at(above, marks + 1, 1)
                np.add.at(above, marks + tree.size[marks], -1)
                depth = depth - np.cumsum(above[:n])
            order = nodes[np.lexsort((nodes, depth[nodes]))]
            order = order[~is_step[order]]
        else:
            order = np.zeros(0, dtype=np.int64)
    return order, dur, self_ns


def _subset_codes(codes: np.ndarray, uniq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``factorize`` of the values ``uniq[codes]`` of a factorization's rows ``codes`` (a subset, reordered),
    from the codes: renumbered by first appearance, with the distinct values that appear."""
    n = len(codes)
    first = np.full(len(uniq), n, np.int64)
    np.minimum.at(first, codes, np.arange(n))
    kept = np.flatnonzero(first < n)
    kept = kept[np.argsort(first[kept], kind="stable")]
    new = np.zeros(len(uniq), np.int64)
    new[kept] = np.arange(len(kept))
    return new[codes], uniq[kept]


def side_table(tree: OpTree, step: int = -1) -> dict[str, Any]:
    """Per api name of one side's calls (the step's, or all), first-appearance order: total and self (ns, and
    ms rounded to 0.01), calls; as columns, the names factorized from the tree's codes (``_subset_codes``)."""
    order, call_dur, call_self = _calls(tree, step)
    codes, uniq = tree.name_codes()
    codes, uniq = _subset_codes(codes[order], uniq)
    n = len(uniq)
    dur = np.zeros(n, np.int64)
    self_ns = np.zeros(n, np.int64)
    np.add.at(dur, codes, np.asarray(call_dur[order], np.int64))
    np.add.at(self_ns, codes, np.asarray(call_self[order], np.int64))
    return {
        "name": np.asarray(uniq, dtype=object), "dur": dur, "self_ns": self_ns,
        "calls": np.bincount(codes, minlength=n),
        "total_ms": [round(v / 1e6, 2) for v in dur.tolist()],
        "self_ms": [round(v / 1e6, 2) for v in self_ns.tolist()],
    }


def _side(table_: dict[str, Any], rows: np.ndarray) -> list[np.ndarray]:
    """Total, self, average (ms) and calls of each row's name of one side (``rows``: the side's row of each name,
    -1 where it lacks it: zeros), as float64 and int64 columns; the average ``round(total / calls, 2)`` by
    ``table.py_round``."""
    has = rows >= 0
    at = np.where(has, rows, 0)

    def take(name: str, dtype: Any) -> np.ndarray:
        values = np.asarray(table_[name], dtype=dtype)
        return np.where(has, values[at], 0) if len(values) else np.zeros(len(rows), dtype)

    total, self_ms, calls = take("total_ms", np.float64), take("self_ms", np.float64), take("calls", np.int64)
    n = calls.astype(np.float64)
    some = n != 0
    with np.errstate(all="ignore"):
        avg = np.where(some, table.py_round(total / np.where(some, n, 1.0), 2), 0.0)
    return [total, self_ms, avg, calls]


def api_frame(base: dict[str, Any], comparison: dict[str, Any]) -> pd.DataFrame:
    """The ApiCompare sheet's frame: base names in order, then comparison-only names; ratios of the rounded values.
    The sides are ``side_table`` columns. The build's one way to the frame, so a test of it reads what users get."""
    columns = api_columns(base, comparison)
    return frame_from_columns(columns, len(COLUMNS), len(columns[0]))


def api_columns(base: dict[str, Any], comparison: dict[str, Any]) -> list[Sequence]:
    """``api_frame``'s cells column by column, as ``frame_from_columns`` takes them (its dtypes and cells alike):
    rows made of the columns and split back into columns by the frame cost ~0.1 ms of NPU pair 1's
    133 rows. The ratios are computed as arrays (``table.diff_ratios``, bit-identical to ``diff_ratio``): a call
    of the scalar rule per cell cost ~1.5 ms of NPU pair 1."""
    def index(df: dict[str, Any]) -> dict:
        """Name -> its last row, in first-appearance order (the sides' names are distinct; a frame's may not be)."""
        names = df["name"]
        return {n: i for i, n in enumerate(names if isinstance(names, list) else names.tolist())}

    b, c = index(base), index(comparison)
    names = list(b) + [n for n in c if n not in b]
    bs = _side(base, np.fromiter((b.get(n, -1) for n in names), np.int64, len(names)))
    cs = _side(comparison, np.fromiter((c.get(n, -1) for n in names), np.int64, len(names)))
    # float64 and int64 arrays: the frame takes them as they are, the dtypes its cells' inference gives
    ratios = [table.diff_ratios(x, y)[1] for x, y in zip(bs, cs, strict=True)]
    return [list(range(1, len(names) + 1)), names, *bs, *cs, *ratios]


def _nameless(tree: OpTree, step: int) -> str:
    """Why a DB step may have found no op: the step is its ``ProfilerStep#<step>`` op, found by name, and an op
    whose name STRING_IDS holds no text for (NULL there, or a NULL name) reads as "" (the loader's warning counts
    them); "" when every op has a name."""
    if tree.profile.source != "ascend_db":
        return ""
    n = int(np.count_nonzero(col_of(tree.ops, "name", object) == ""))
    return (f" Operators without a name (no text in STRING_IDS): {n:,}; a step is found by its operator "
            f"{STEP_MARK}{step}, which may be one of them." if n else "")


@dataclass
class ApiSheet(Sheet):
    """The ApiCompare sheet, with each side's kernel launches through the GPU driver (``driver_launches``): calls
    (``cuLaunchKernel`` for Triton and cuBLASLt) that no op category holds, so the sheet has no row of them (the
    original's rows), while the Summary's API regressions join the runtime's launch calls of two vendors into one
    row (``charts._runtime_pairs``), which without them compared a part of one side's launches with all of the
    other's."""

    driver_launches: tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]] = field(
        default_factory=lambda: ({}, {}))


#: The CUDA driver's kernel launch calls: a driver call of another name launches no kernel (``cuLaunchHostFunc``
#: queues a host function), and the B200 trace launches 220 of its 221 driver-launched kernels by
#: ``cuLaunchKernelEx``, which the joined launch row named ``cuLaunchKernel``
DRIVER_LAUNCHES = ("cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel")


def driver_launches(tree: OpTree) -> dict[str, tuple[int, int]]:
    """{call name: (calls, ns)} of a GPU side's kernel launches through the driver (``DRIVER_LAUNCHES`` calls of a
    driver category), in ``DRIVER_LAUNCHES``' order; {} for an NPU side. The whole trace's: a GPU trace takes no step
    (the step options are refused for it)."""
    ops = tree.profile.ops
    if not tree.profile.is_gpu or not len(ops):
        return {}
    cats = per_unique(col_of(ops, "cat", object), lambda c: c in DRIVER_CATS)  # lower-cased; None reads as ""
    names = col_of(ops, "name", object)
    rows = np.flatnonzero(cats & per_unique(names, lambda n: n in DRIVER_LAUNCHES, lower=False))
    called, durs = names[rows], col_of(ops, "dur", np.int64)[rows]
    return {n: (int(hit.sum()), int(durs[hit].sum())) for n in DRIVER_LAUNCHES if (hit := called == n).any()}


def build(ctx: RunContext) -> list[Sheet]:
    """The ApiCompare sheet (nothing when either side has no op)."""
    if one_sided(ctx):
        return []
    tables, driver = [], []
    for side in ("base", "comparison"):
        step = side_step(ctx, side)
        tree = op_tree(ctx, side)  # logs a side without ops
        t = side_table(tree, step)
        driver.append(driver_launches(tree))
        # a side without any op (MindSpore data: "Can't find any torch op" was logged) has no API to look for
        # in the step; the original's error there sent a MindSpore-vs-MindSpore step run to exit 2
        if not len(t["name"]) and step >= 0 and ctx.has_ops(tree.profile):
            with on_side(ctx.side(tree.profile)):  # the refusal names its side, as ``steps.side_range``'s does
                raise StepError(f"{data_file(tree.profile, 'trace_view.json', 'db')}: There is no operator event "
                                f"data for step {step}, please check whether the data contains this step."
                                + _nameless(tree, step))
        tables.append(t)
    if not all(len(t["name"]) for t in tables):
        return []
    return [ApiSheet("ApiCompare", COLUMNS, api_frame(*tables), *SPANS, driver_launches=(driver[0], driver[1]))]


#: Calls that read a device value on the host (``tensor.item()``): they wait for all the device work queued
#: before them, so their host time grows with that work, not with any of their own.
SYNC_CALLS = ("aten::item", "aten::_local_scalar_dense")
#: Copies that wait so when they copy device memory to the host (``tensor.to("cpu")``, ``.cpu()``), and not
#: otherwise (a dtype cast on the device): the name cannot tell which, so they are named with "when".
HOST_COPY_CALLS = ("aten::to", "aten::_to_copy", "aten::copy_")


def is_host_sync(name: str) -> bool:
    """A host call that waits for the device work queued before it: ``SYNC_CALLS`` or a runtime's *Synchronize*."""
    return name in SYNC_CALLS or "synchronize" in name.lower()


def host_syncs(ops: pd.DataFrame, lo: int, hi: int) -> tuple[list[tuple[str, int]], int]:
    """The host's sync calls (``is_host_sync``) among ``ops`` that start in ``[lo, hi)`` (a side's E2E window):
    (name, calls) by first start, and the host ns their union covers (aten::item holds its _local_scalar_dense and
    that a cudaStreamSynchronize: one wait, counted once)."""
    names = col_of(ops, "name", object)
    ts = col_of(ops, "ts", np.int64)
    # per distinct name: a trace holds its op names many times over
    pick = np.flatnonzero(per_unique(names, is_host_sync, lower=False) & (ts >= lo) & (ts < hi))
    if not pick.size:
        return [], 0
    pick = pick[np.argsort(ts[pick], kind="stable")]
    counts: dict[str, int] = {}
    for n in names[pick].tolist():
        counts[n] = counts.get(n, 0) + 1
    start = ts[pick]
    return list(counts.items()), tl.length(tl.union(start, start + col_of(ops, "dur", np.int64)[pick]))


def host_wait_note(names: list[str], short: bool = False) -> str:
    """A note for the API rows ``names`` that are host waits for earlier device work, "" when none is: a GPU
    trace against an NPU export ranked aten::item (+94.02 ms) and aten::_local_scalar_dense (+92.84 ms) first
    among the API regressions (the H200 AlexNet against the NPU level-1 export), the NPU's all-reduce and kernels
    they waited for, not work of theirs. The rows stay, as the original's sheet shows them. ``short``: the
    syncs alone, for a chart's axis title (one line that does not wrap everywhere)."""
    syncs = [n for n in names if is_host_sync(n)]
    if not syncs:
        return ""
    if short:
        return f"{and_list(syncs)}: host waits for earlier device work (a sync), read the device time"
    copies = [n for n in names if n in HOST_COPY_CALLS]
    # a verb and pronouns for one name or several: "cudaDeviceSynchronize wait ... before them" of reference pair 7
    one = len(syncs) == 1
    copy = "waits so too when it copies" if len(copies) == 1 else "wait so too when they copy"
    also = f"; {and_list(copies)} {copy} to the host" if copies else ""
    return (f"{and_list(syncs)} {'waits' if one else 'wait'} on the host for the device work queued before "
            f"{'it' if one else 'them'} (a sync): {'its' if one else 'their'} time is that work's, so read the device "
            f"time (OverallMetrics, the operator or module sheets), not the {'call' if one else 'calls'}{also}")
