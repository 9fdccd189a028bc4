"""MemoryCompareStatistic and MemoryCompare (reference-2 §5).

Memory records (size, allocation/release time) come from the GPU ``[memory]``
instants (allocation/free paired by device and address) or from NPU ``operator_memory.csv``
(``cann::`` rows placed at the enqueue time of the task queue entry that was
running at allocation). Each record is owned by the deepest op open at its
placement time (``OpTree.place``) and an op's memory is its subtree's records.
The op pairing is the operator comparator's (``optree.operator_pairs``), so the
two sheets line up with OperatorCompare row for row.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import side_named
from ..model import CANN_MARK, Profile, bare_trace, factorize, next_at_address
from . import classify
from .optree import OpPairs, OpTree, one_sided, op_tree, operator_pairs
from .table import (
    STYLE_BOLD,
    STYLE_FLOAT,
    STYLE_INT,
    STYLE_RATIO,
    Column,
    Sheet,
    diff_ratio,
    diff_ratios,
    frame_from_columns,
    frame_from_rows,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

STAT_COLUMNS = [
    Column("Top", STYLE_INT, 10), Column("Operator Name", STYLE_BOLD, 30),
    Column("Base Allocated Duration(ms)", STYLE_FLOAT, 25), Column("Base Allocated Memory(MB)", STYLE_FLOAT, 30),
    Column("Base Operator Number", STYLE_INT, 25),
    Column("Comparison Allocated Duration(ms)", STYLE_FLOAT, 27),
    Column("Comparison Allocated Memory(MB)", STYLE_FLOAT, 33),
    Column("Comparison Operator Number", STYLE_INT, 25),
    Column("Diff Memory(MB)", STYLE_FLOAT, 20), Column("Diff Ratio", STYLE_RATIO, 20),
]
STAT_SPANS = ((2, 4), (5, 7))  # C1:E1 base, F1:H1 comparison

_DETAIL_SIDE = [
    Column("Operator Name", STYLE_BOLD, 30), Column("Input Shape", STYLE_INT, 20),
    Column("Input Type", STYLE_INT, 20), Column("Allocated Details", STYLE_INT, 20),
    Column("Size(KB)", STYLE_FLOAT, 20),
]
DETAIL_COLUMNS = [Column("Order Id", STYLE_INT, 10), *_DETAIL_SIDE, *_DETAIL_SIDE,
                  Column("Diff Size(KB)", STYLE_FLOAT, 20), Column("Diff Ratio", STYLE_RATIO, 20)]
DETAIL_SPANS = ((1, 5), (6, 10))  # B1:F1 base, G1:K1 comparison

RECORD_COLUMNS = ["ts", "size_kb", "dur_ns", "name", "alloc_text", "release_text"]


#: The text's tail for each sub-microsecond remainder (0..999 ns), without and with the float style.
_US_TAILS = tuple(
    np.array([".0" if fl else "", *(f".{f:03d}".rstrip("0") for f in range(1, 1000))], dtype=object)
    for fl in (False, True))


def _us_texts(ns: np.ndarray, float_style: bool = False) -> np.ndarray:
    """Integer ns as the microsecond texts a Kineto trace holds (object array): shortest decimal form, and
    ``X.0`` for a whole value when the trace writes its times as floats. No Python call per value: the whole
    microseconds go through ``str`` in one ``map``, the remainder picks its tail from a table."""
    ns = np.asarray(ns, dtype=np.int64)
    with np.errstate(over="ignore"):
        mag = np.abs(ns).view(np.uint64)  # |INT64_MIN| wraps to itself, which is 2**63 as unsigned
    whole, frac = np.divmod(mag, np.uint64(1000))
    tails = _US_TAILS[1 if float_style else 0][frac.astype(np.intp)].tolist()
    out = np.fromiter(map(operator.add, map(str, whole.tolist()), tails), dtype=object, count=len(ns))
    neg = np.flatnonzero(ns < 0)
    if neg.size:
        out[neg] = ["-" + t for t in out[neg].tolist()]
    return out


def _float_style(*columns: np.ndarray) -> bool:
    """Whether a trace writes times as floats (some time has a fractional microsecond)."""
    return any(bool(len(c)) and bool((np.asarray(c) % 1000 != 0).any()) for c in columns)


def gpu_records(profile: Profile) -> pd.DataFrame:
    """Records from ``[memory]`` instants with Device Id >= 0, paired by device and address (reference-1 §4.4
    pairs by address alone: one address on two devices then closed the other device's block; docs/differences.md).

    A positive size opens a record (an already-open one at that address is emitted
    unreleased); a negative one releases the open record if the sizes agree, and
    drops it in any case; records still open at the end are emitted unreleased.
    The pid is no key: a Kineto trace is one process's (every sample's device ``[memory]`` events, resnet50's with
    4 DataLoader workers too, are on one pid, and no allocation's next event at its address is another pid's).
    """
    m = profile.memory
    device = col_of(m, "device_id", np.int64)
    dev = np.flatnonzero(device >= 0)
    ts_all = col_of(m, "ts", np.int64)[dev]
    order = np.argsort(ts_all, kind="stable")
    size = col_of(m, "bytes", np.int64)[dev][order]
    nz = np.flatnonzero(size != 0)  # zero-size events neither open nor close a record
    t = ts_all[order][nz]
    size = size[nz]
    addr = col_of(m, "addr", np.int64)[dev][order][nz]
    device = device[dev][order][nz]
    n = len(size)
    # the next event at the same address of the same device decides each allocation's fate: a matching free
    # releases it, another allocation reopens the address (emitted unreleased), a free of a
    # different size drops it, none leaves it open (emitted unreleased at the end)
    nxt = next_at_address(device, addr)
    alloc_i = np.flatnonzero(size > 0)
    j = nxt[alloc_i]
    has = j >= 0
    jj = np.where(has, j, 0)
    reopened = has & (size[jj] > 0)
    released = has & (size[jj] < 0) & (-size[jj] == size[alloc_i])
    kept = ~has | reopened | released
    # emission order of the original's walk: at the closing event, or after every event
    emit = np.where(has, j, n + alloc_i)[kept]
    by = np.argsort(emit, kind="stable")
    sel = alloc_i[kept][by]
    if not len(sel):
        return pd.DataFrame(columns=RECORD_COLUMNS)
    alloc = t[sel]
    done = released[kept][by]
    rel = np.where(done, t[jj[kept][by]], 0)
    fl = _float_style(col_of(m, "ts", np.int64), col_of(profile.ops, "ts", np.int64))
    # only a missing or zero time gives 0.0 (reference-2 §5.1): a rebased trace's times may be negative
    dur = np.where(done & (rel != 0) & (alloc != 0), rel - alloc, 0)
    release_text = _us_texts(rel, fl)
    release_text[~done] = "None"
    return pd.DataFrame({
        "ts": alloc, "size_kb": size[sel] / 1024, "dur_ns": dur, "name": "",
        "alloc_text": _us_texts(alloc, fl), "release_text": release_text,
    })


def _npu_columns(profile: Profile) -> dict[str, np.ndarray] | None:
    """Records from operator_memory.csv (reference-1 §5.12), as columns ``RECORD_COLUMNS`` (None: no row).

    Rows without an allocation time are skipped. ``cann::`` rows are placed at the
    enqueue of the dequeue entry running at allocation (same correlation id; time 0 where the dequeue
    has none or no enqueue shares it; rows outside every dequeue window are dropped) and keep their name; other rows are
    placed at their allocation time and take the name of the op that owns them.
    ``MemoryIndex`` reads the columns as they are: a frame turned their three text
    columns into pandas' str dtype and back (~0.2 ms a side).
    """
    om = profile.operator_memory
    if om is None or not len(om):
        return None
    rows = np.flatnonzero(col_of(om, "alloc_ns", np.int64) > 0)
    alloc = col_of(om, "alloc_ns", np.int64)[rows]
    rel = col_of(om, "release_ns", np.int64)[rows]
    names = _texts(col_of(om, "Name", object)[rows])
    cann = classify.per_unique(names, lambda s: CANN_MARK in s, lower=False)
    ts = alloc.copy()
    keep = np.ones(len(rows), dtype=bool)
    if cann.any():
        q = profile.queue
        cat = col_of(q, "cat", object)
        q_ts = col_of(q, "ts", np.int64)
        q_dur = col_of(q, "dur", np.int64)
        q_corr = col_of(q, "correlation_id", np.int64)
        # both categories from one factorization of the column
        codes, (is_deq, is_enq) = classify.per_unique_many(cat, ((lambda c: c == "dequeue", True),
                                                                 (lambda c: c == "enqueue", True)))
        deq = np.flatnonzero(is_deq[codes])
        deq = deq[np.argsort(q_ts[deq], kind="stable")]
        enq = np.flatnonzero(is_enq[codes])
        # -1 is no id (a NULL CANN connection id, an absent correlation_id): it pairs with nothing, as NULL in a
        # join, where a dequeue of no id took the time of whichever enqueue of no id came last
        enq = enq[q_corr[enq] != -1]
        enq_ts = dict(zip(q_corr[enq].tolist(), q_ts[enq].tolist(), strict=True))
        d_ts = q_ts[deq]
        d_end = d_ts + q_dur[deq]
        d_corr = q_corr[deq]
        ci = np.flatnonzero(cann)
        k = np.searchsorted(d_ts, alloc[ci], side="right") - 1
        ok = k >= 0
        ok[ok] &= alloc[ci][ok] <= d_end[k[ok]]
        keep[ci[~ok]] = False
        ts[ci[ok]] = [enq_ts.get(c, 0) for c in d_corr[k[ok]].tolist()]
    rel_text = _texts(col_of(om, "Release Time(us)", object)[rows], strip=True)
    rel_text[(rel_text == "") | (rel_text == "N/A")] = "0"
    dur = np.where((alloc > 0) & (rel > 0), np.maximum(rel - alloc, 0), 0)  # loaders warn of rel < alloc
    k = np.flatnonzero(keep)
    return {
        "ts": ts[k], "size_kb": col_of(om, "Size(KB)", float)[rows][k], "dur_ns": dur[k],
        "name": np.where(cann, names, "")[k],
        "alloc_text": _texts(col_of(om, "Allocation Time(us)", object)[rows], strip=True)[k],
        "release_text": rel_text[k],
    }


def _texts(values: np.ndarray, strip: bool = False) -> np.ndarray:
    """A text column as an object array of ``str`` ("" for missing), stripped when asked."""
    out = np.empty(len(values), dtype=object)
    out[:] = ["" if v is None or (isinstance(v, float) and v != v) else (str(v).strip() if strip else str(v))
              for v in values.tolist()]
    return out


def _index_records(profile: Profile) -> pd.DataFrame | dict[str, np.ndarray]:
    """One side's memory records (columns ``RECORD_COLUMNS``; ``ts`` = placement time, ns) as ``MemoryIndex``
    takes them: a GPU side's as a frame, an NPU side's as columns, without their frame."""
    if profile.is_gpu:
        return gpu_records(profile)
    got = _npu_columns(profile)
    return pd.DataFrame(columns=RECORD_COLUMNS) if got is None else got


class MemoryIndex:
    """Records attached to one side's op tree: per-node subtree totals and detail text."""

    def __init__(self, tree: OpTree, records: pd.DataFrame | dict[str, np.ndarray]) -> None:
        """``records``: ``_index_records``' frame, or its columns as arrays."""
        def column(name: str) -> np.ndarray:
            return np.asarray(records[name]) if isinstance(records, dict) else col_of(records, name)

        self.tree = tree
        ts = np.asarray(column("ts"), np.int64)
        self.recorded = len(ts)  # before placing: a side whose records all lie outside ops still recorded
        n = tree.n
        owner = tree.listed_owner(tree.place(ts)) if len(ts) else np.zeros(0, np.int64)
        on_tree = np.flatnonzero(owner >= 0)
        owner = owner[on_tree]
        # records in placement order (ts, then emission order), grouped by owner: the columns the details read,
        # taken as arrays (two pandas row takes of the frame cost ~0.2 ms a side)
        order = np.lexsort((on_tree, ts[on_tree], owner))
        take = on_tree[order]
        self.placed = len(take)  # records inside some op
        self.rec = {c: column(c)[take] for c in ("name", "alloc_text", "release_text", "size_kb", "dur_ns")}
        self.owner = owner[order]
        counts = np.bincount(self.owner, minlength=n) if n else np.zeros(0, np.int64)
        self.ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.owners = np.flatnonzero(counts)  # nodes owning records, in start order
        self._owners: list[int] | None = None
        self._own_text: dict[int, str] = {}
        own_kb = np.bincount(self.owner, weights=np.asarray(self.rec["size_kb"], float), minlength=n)
        # durations summed as integer ns: float running sums over a whole trace left rounding noise in a
        # subtree's difference (4.067431999999998 ms for 4.067432)
        own_ns = self.rec["dur_ns"] = np.asarray(self.rec["dur_ns"], np.int64)
        # subtrees are contiguous ranges [i, i + size[i]) of the start-ordered nodes
        hi = np.arange(n) + tree.size
        cs_kb = np.concatenate([[0.0], np.cumsum(own_kb)])
        cs_ns = np.concatenate([[0], np.cumsum(own_ns)])[self.ptr]  # records are grouped by owner
        cs_cnt = np.concatenate([[0], np.cumsum(counts)])
        self.kb = cs_kb[hi] - cs_kb[:n] if n else np.zeros(0)
        self.dur_ns = cs_ns[hi] - cs_ns[:n] if n else np.zeros(0, np.int64)
        self.count = cs_cnt[hi] - cs_cnt[:n] if n else np.zeros(0, np.int64)
        self._lines: list[str] | None = None

    def lines(self) -> list[str]:
        """Details line of every attached record (reference-2 §5.1)."""
        if self._lines is None:
            names = self.tree.names.tolist()
            own = self.rec["name"].tolist()
            self._lines = [
                f"{nm or names[o]}, ({a}, {r}), [duration: {d}], [size: {s}]\n"
                for nm, o, a, r, d, s in zip(own, self.owner.tolist(), self.rec["alloc_text"].tolist(),
                                             self.rec["release_text"].tolist(), (self.rec["dur_ns"] / 1000).tolist(),
                                             self.rec["size_kb"].tolist(), strict=True)
            ]
        return self._lines

    def details_of(self, nodes: np.ndarray) -> list[str]:
        """Each of ``nodes``' details (-1 for none: ""): its own records' lines, then its descendants' (breadth-first),
        for a sheet's column: which nodes own no record in their subtree (most of a sheet's) and where the others'
        owners lie are found for all at once, where a call per node cost ~0.7 us (1,936 calls, ~1.4 ms, in a compare
        of the timesformer pair)."""
        nodes = np.asarray(nodes, np.int64)
        out = [""] * len(nodes)
        if not len(nodes) or not len(self.owners):
            return out
        at = np.flatnonzero(nodes >= 0)
        sub = nodes[at]
        # a node's subtree holds records where some owner lies in its range [node, node + size)
        lo = np.searchsorted(self.owners, sub)
        hi = np.searchsorted(self.owners, sub + self.tree.size[sub])
        held = np.flatnonzero(hi > lo)
        if not held.size:
            return out
        owners, own_text = self._owner_texts()
        for i, a, b in zip(at[held].tolist(), lo[held].tolist(), hi[held].tolist(), strict=True):
            out[i] = own_text[owners[a]] if b - a == 1 else self._subtree_text(a, b)
        return out

    def _owner_texts(self) -> tuple[list[int], dict[int, str]]:
        """The owning nodes (start order) and each one's own records' lines joined, made on the first ask."""
        if self._owners is None:
            lines = self.lines()
            ptr = self.ptr.tolist()
            self._owners = self.owners.tolist()
            self._own_text = {i: "".join(lines[ptr[i]:ptr[i + 1]]) for i in self._owners}
        return self._owners, self._own_text

    def _subtree_text(self, lo: int, hi: int) -> str:
        """The own texts of the owners ``lo:hi`` (one subtree's) in breadth-first order: depth, then start order."""
        nodes = np.asarray(self._owners[lo:hi], dtype=np.int64)
        nodes = nodes[np.lexsort((nodes, self.tree.listed_depth[nodes]))]
        return "".join([self._own_text[i] for i in nodes.tolist()])


def _side_records(ctx: RunContext, side: str) -> pd.DataFrame | dict[str, np.ndarray]:
    """One side's ``_index_records``, made once per run (the index and the Addr-less check both read them)."""
    profile = ctx.base if side == "base" else ctx.comparison
    return ctx.cached(f"memory.records.{side}", lambda: _index_records(profile))


def memory_index(ctx: RunContext, side: str) -> MemoryIndex:
    """The cached memory index of one side (``build`` says when a side has no memory record)."""
    return ctx.cached(f"memory.index.{side}", lambda: MemoryIndex(op_tree(ctx, side), _side_records(ctx, side)))


#: DB exports whose OP_MEMORY the loader does not read (``ascend_db.load``: PYTORCH_API exports only), by db_kind
_UNREAD_DB_MEMORY = {"mindspore": "a MindSpore DB export's", "msmonitor": "an msmonitor DB's"}


def _no_memory(ctx: RunContext, profile: Profile, other_has: bool) -> None:
    """The original's line for a side without memory records, with why where that is known: a warning when the
    other side has records (the sheets then show this side's operators at 0 MB, which the memory line says means
    "not recorded", not "none").

    A GPU trace hears why only beside a side with records or when the memory comparison was asked for: a
    default run of two GPU traces (profile_memory is off by default) is not advised on a comparison nobody
    asked for, but ``--enable_memory_compare`` on them ends with no workbook, and the why is the only hint."""
    asked = not ctx.options.by_default
    source = "OP_MEMORY table" if profile.source == "ascend_db" else "operator_memory.csv"
    if profile.level == "trace":
        why = f"{bare_trace(profile)} has no operator_memory.csv"
    elif profile.is_gpu and len(profile.memory):  # recorded with profile_memory, but nothing to pair
        host = bool((col_of(profile.memory, "device_id", np.int64) < 0).all())
        what = ("are all host memory, Device Id < 0, which the memory comparison does not read" if host else
                "open no device allocation (frees or zero sizes only)")
        why = f"its [memory] events {what}" if other_has or asked else ""
    elif profile.is_gpu:  # no [memory] event: the capture's option, off by default
        why = "no memory was recorded: profile_memory=True records it" if other_has or asked else ""
    elif profile.source == "ascend_db" and profile.extra.get("db_kind") in _UNREAD_DB_MEMORY:
        # the original reads no memory of these DBs (reference-1 §6): "no OP_MEMORY table: profile_memory=True
        # records it" sent a MindSpore user to record again what was there and on
        why = f"{_UNREAD_DB_MEMORY[profile.extra['db_kind']]} operator memory is not read, as in the original"
    elif profile.operator_memory is None:  # the export lacks it (its loader said so)
        # written only with profile_memory on: the advice holds unless profiler_info says it was on
        why = f"the export has no {source}" + ("" if profile.extra.get("profile_memory") is True else
                                               ": profile_memory=True records it")
    else:  # an NPU profile_memory capture whose allocations no op can take
        why = f"its {source} holds no allocation the comparison can place"
    # the original's sentence, then its side before the why, as a loader's note names it (``errors.side_named``): two
    # ranks of one job without memory gave lines that differed by a digit of a path
    line = f"Can't find any memory event in the file: {profile.path}{side_named(ctx.side(profile), why)}"
    if other_has:
        # a warning (the sheets show this side's operators at 0 MB), saying only what to do about it: what the 0 MB
        # means is said where the figures are, by the memory line (console and Summary sheet: "its 0 MB in
        # MemoryCompareStatistic means not recorded"), and the Mem Usage cell's by the note under the console table
        log.warning("%s", line)
    else:
        log.log(ctx.options.notice_level(), "%s", line)


def statistic_rows(pairs: OpPairs, mb: MemoryIndex, mc: MemoryIndex) -> list[list]:
    """MemoryCompareStatistic rows: each side grouped by its own op names over all pairs."""
    def group(tree: OpTree, idx: MemoryIndex, nodes: np.ndarray) -> dict[str, tuple[float, float, int]]:
        """Per op name, first-appearance order: (summed duration ns, summed KB, count)."""
        nodes = nodes[nodes >= 0]
        if not len(nodes):
            return {}
        codes, uniq = factorize(tree.names[nodes])
        n = len(uniq)
        dur = np.zeros(n, np.int64)
        np.add.at(dur, codes, idx.dur_ns[nodes])  # exact: a float bincount would add rounding noise
        kb = np.bincount(codes, weights=idx.kb[nodes], minlength=n)
        num = np.bincount(codes, minlength=n)
        return dict(zip(uniq.tolist(), zip(dur.tolist(), kb.tolist(), num.tolist(), strict=True), strict=True))

    db, dc = group(pairs.base, mb, pairs.ia), group(pairs.comparison, mc, pairs.ib)
    rows = []
    for name in list(db) + [n for n in dc if n not in db]:
        b, c = db.get(name), dc.get(name)
        bs = [b[0] / 1e6, float(b[1]) / 1024, int(b[2])] if b is not None else [0.0, 0.0, 0]
        cs = [c[0] / 1e6, float(c[1]) / 1024, int(c[2])] if c is not None else [0.0, 0.0, 0]
        rows.append([None, name, *bs, *cs, *diff_ratio(bs[1], cs[1])])
    rows.sort(key=lambda r: -r[-2])
    for i, r in enumerate(rows):
        r[0] = i + 1
    return rows


def detail_frame(pairs: OpPairs, mb: MemoryIndex, mc: MemoryIndex) -> pd.DataFrame:
    """The MemoryCompare sheet's frame, one row per pair in pair order. The build's one way to the frame, so a
    test of it reads what users get."""
    columns = detail_columns(pairs, mb, mc)
    return frame_from_columns(columns, len(DETAIL_COLUMNS), len(columns[0]))


def detail_columns(pairs: OpPairs, mb: MemoryIndex, mc: MemoryIndex) -> list[Sequence]:
    """``detail_frame``'s cells column by column, as ``frame_from_columns`` takes them (its dtypes and cells
    alike): rows made of the columns and split back into columns by the frame cost ~0.2 ms of NPU
    pair 1's pairs."""
    def side(tree: OpTree, idx: MemoryIndex, nodes: np.ndarray) -> list[Sequence]:
        present = nodes >= 0
        safe = np.where(present, nodes, 0)
        cols = [tree.names, col_of(tree.ops, "input_dims", object),
                col_of(tree.ops, "input_type", object)]
        out: list[Sequence] = [np.where(present, c[safe], None).tolist() if tree.n else [None] * len(nodes)
                               for c in cols]
        out.append(idx.details_of(nodes))
        # a float64 array (0.0 where the side is absent): the frame takes it as it is
        out.append(np.where(present, idx.kb[safe] if tree.n else 0.0, 0.0).astype(np.float64))
        return out

    bs, cs = side(pairs.base, mb, pairs.ia), side(pairs.comparison, mc, pairs.ib)
    diff, ratio = diff_ratios(bs[4], cs[4])
    return [list(range(1, len(pairs.ia) + 1)), *bs, *cs, diff, ratio]


def build(ctx: RunContext) -> list[Sheet]:
    """MemoryCompareStatistic, then MemoryCompare unless ``--disable_details``; nothing when no side has a
    memory record inside a torch op (every cell would be 0: the lines logged per side say why)."""
    if one_sided(ctx):
        return []
    pairs = operator_pairs(ctx)
    mb, mc = memory_index(ctx, "base"), memory_index(ctx, "comparison")
    placed = [bool(idx.placed) for idx in (mb, mc)]
    for idx, other, p in ((mb, mc, ctx.base), (mc, mb, ctx.comparison)):
        if not idx.recorded:
            _no_memory(ctx, p, bool(other.placed) and bool(len(pairs)))
        elif not idx.placed and len(pairs):
            # the original counts these records as found and writes 0 MB for every op without a word
            log.warning("%s: none of its memory records falls inside a torch op, so %s%s", p.path,
                        "the memory sheets show this side's operators at 0 MB" if any(placed) else
                        "no operator has memory to compare and the memory sheets are left out",
                        side_named(ctx.side(p)))
    if not len(pairs) or not any(placed):
        return []
    for p, side in ((ctx.base, "base"), (ctx.comparison, "comparison")):
        if p.is_gpu:
            _addr_less_pairing(p, _side_records(ctx, side), ctx.side(p))
    return _sheets(ctx, pairs, mb, mc)


def _addr_less_pairing(profile: Profile, rec: pd.DataFrame, side: str = "") -> None:
    """Warn when a trace's device ``[memory]`` events carry no ``Addr`` (PyTorch 1.8's): every event then
    pairs under one key, so a free closes only the allocation just before it, as the original pairs them.
    The figures stay the original's, but allocations left without a release understate Allocated Duration
    (0 ms each) and dropped ones (a free of another size came next) Allocated Memory, which nothing else in
    the output shows."""
    m = profile.memory
    dev = col_of(m, "device_id", np.int64) >= 0
    if not dev.any() or bool((col_of(m, "addr", np.int64)[dev] != -1).any()):
        return
    size = col_of(m, "bytes", np.int64)[dev]
    allocs = int((size > 0).sum())
    released = int((np.asarray(rec["release_text"], dtype=object) != "None").sum())
    dropped, open_ = allocs - len(rec), len(rec) - released
    if dropped or open_:
        dropped_mb = (int(size[size > 0].sum()) / 1024 - float(np.asarray(rec["size_kb"], float).sum())) / 1024
        log.warning("%s: its [memory] events carry no Addr, so each free pairs only with the allocation just "
                    "before it: of %s device allocations %s are released, %s have no release (Allocated Duration "
                    "counts them as 0) and %s (%.2f MB) are left out of Allocated Memory%s", profile.path,
                    f"{allocs:,}", f"{released:,}", f"{open_:,}", f"{dropped:,}", dropped_mb,
                    side_named(side, "a free of another size came next"))  # one parenthesis, the side first


def _sheets(ctx: RunContext, pairs: OpPairs, mb: MemoryIndex, mc: MemoryIndex) -> list[Sheet]:
    sheets = [Sheet("MemoryCompareStatistic", STAT_COLUMNS, frame_from_rows(statistic_rows(pairs, mb, mc), 10),
                    *STAT_SPANS)]
    if not ctx.options.disable_details:
        sheets.append(Sheet("MemoryCompare", DETAIL_COLUMNS, detail_frame(pairs, mb, mc), *DETAIL_SPANS))
    return sheets
