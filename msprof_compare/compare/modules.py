"""Module comparison: ModuleCompareStatistic + ModuleCompare (reference-2 §3).

Per side, a forward module tree is nested from the ``nn.Module:`` python
functions (plus optimizer ops as pseudo-modules) with the §2.2 cursor rule;
kernel "time points" (the start ts of each kernel flow) give every module its
self kernels. Backward pseudo-modules come from ``fwdbwd`` flows: the backward
op at the flow end, renamed ``[ BACKWARD ]<forward module path>``. Each op is
assigned to the deepest module strictly containing its start, and a module's
self kernels are handed to its top-layer ops. The trees of both sides are
matched level by level with the maximum matching of ``align`` on module paths.

Modules are few (hundreds to a few thousand), so they are small Python records;
ops and kernels stay in numpy arrays. ``build`` returns ``None`` when module
matching yields no pair, so the caller falls back to the operator sheets.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import side_named
from ..model import Profile, factorize, object_array, object_full, ranges
from ..textsafe import term_safe
from . import classify
from .align import AlignMemo, no_matching
from .optree import OpTree, _nest, _subtree_sum, build_tree, levels, op_tree, side_profile
from .steps import in_range, side_range, side_step
from .table import (
    STYLE_FLOAT,
    STYLE_INT,
    STYLE_RATIO,
    Column,
    Sheet,
    diff_ratios,
    exact_diffs,
    frame_from_columns,
    ms3_of,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

MODULE_PREFIX = "nn.module:"
BACKWARD = "[ BACKWARD ]"
_TRAILING_ID = re.compile(r"_\d+$")
_CACHE = "modules.trees.{side}"
_CACHE_PAIRS = "modules.pairs"
_CACHE_VERDICTS = "modules.map_verdicts"

_STAT_SIDE = [
    Column("Kernel Details", STYLE_INT, 20), Column("Device Self Time(ms)", STYLE_FLOAT, 20),
    Column("Number", STYLE_INT, 10), Column("Device Total Time(ms)", STYLE_FLOAT, 20),
]
STAT_COLUMNS = [
    Column("Order Id", STYLE_INT, 10), Column("Module Class", STYLE_INT, 20), Column("Module Level", STYLE_INT, 15),
    Column("Module Name", STYLE_INT, 35), Column("Operator Name", STYLE_INT, 25), *_STAT_SIDE, *_STAT_SIDE,
    Column("Device Total Time Diff(ms)", STYLE_FLOAT, 20), Column("Device Self Time Diff(ms)", STYLE_FLOAT, 20),
    Column("Diff Total Ratio", STYLE_RATIO, 15),
    Column("Base Call Stack", STYLE_INT, 30), Column("Comparison Call Stack", STYLE_INT, 30),
]
STAT_SPANS = ((5, 8), (9, 12))  # F1:I1, J1:M1

_DETAIL_SIDE = [
    Column("Operator Name", STYLE_INT, 25), Column("Kernel Details", STYLE_INT, 20),
    Column("Device Self Time(us)", STYLE_FLOAT, 20), Column("Device Total Time(us)", STYLE_FLOAT, 20),
]
DETAIL_COLUMNS = [
    Column("Order Id", STYLE_INT, 10), Column("Module Class", STYLE_INT, 20), Column("Module Level", STYLE_INT, 15),
    Column("Module Name", STYLE_INT, 35), *_DETAIL_SIDE, *_DETAIL_SIDE,
    Column("Device Total Time Diff(us)", STYLE_FLOAT, 20), Column("Device Self Time Diff(us)", STYLE_FLOAT, 20),
    Column("Diff Total Ratio", STYLE_RATIO, 15),
    Column("Base Call Stack", STYLE_INT, 30), Column("Comparison Call Stack", STYLE_INT, 30),
]
DETAIL_SPANS = ((4, 7), (8, 11))  # E1:H1, I1:L1


@dataclass(eq=False)
class Module:
    """One module node. Its top-layer ops are ``ModuleTrees.top_*[op_lo:op_hi]`` (in start order)."""

    name: str
    ts: int
    end: int
    parent: Module | None
    level: int
    module_name: str
    children: list[Module] = field(default_factory=list)
    self_ns: int = 0
    total_ns: int = 0
    call_stack: str = ""
    op_lo: int = 0
    op_hi: int = 0


@dataclass(eq=False)
class ModuleTrees:
    """One side's forward and backward module trees plus what their sheets need.

    The top-layer ops of all modules are flat arrays (module by module, each in start order):
    ``top_node`` (op-tree node), ``top_ns`` (device ns of the kernels handed to it) and a CSR
    ``top_kptr``/``top_krows`` of those kernels (kernel-pool rows, in hand-out order).
    """

    profile: Profile
    tree: OpTree
    forward: Module
    backward: Module
    top_node: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    top_ns: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    top_kptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    top_krows: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    op_names: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    op_stacks: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    #: the side's frames when its op stacks are derived from them (``_derives_stacks``), else None
    frames: _Frames | None = None
    k_names: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    k_durs: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    #: per top-layer op, its module (forward modules in walk order, then backward ones), and each module's path
    top_owner: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    module_paths: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    _infos: tuple[list, np.ndarray, np.ndarray] | None = field(default=None, repr=False)  # see _op_cells

    def top_modules(self) -> tuple[np.ndarray, list[str]]:
        """(per top-layer op, the index of its module's path in the list; the distinct module paths,
        ``module_name``, as ModuleCompareStatistic keys its rows): a module owns ``top_*[op_lo:op_hi]``, its
        children's ops apart; the instances of a path (one per step) share its index. The list holds every module's
        path, also of modules that own no op."""
        # by arrays: walking the Module records took 17-18 ms a side on a 200 MB DB export (29,000 modules), 5 ms so
        codes, paths = factorize(self.module_paths)
        return codes[self.top_owner], paths.tolist()

    def top_stacks(self, ks: list[int]) -> list[str]:
        """Call stacks of top-layer ops ``ks``: their "Call stack" argument, or the chain of the
        frames of their thread around them, innermost first as that argument lists them. Asked
        only for the cells that show one (ops whose self time grew), not for every op."""
        nodes = self.top_node[np.asarray(ks, np.int64)]
        out = self.op_stacks[nodes].copy()
        if self.frames is not None and len(nodes):
            found = self.frames.deepest(self.tree.ts[nodes], col_of(self.tree.ops, "tid", np.int64)[nodes])
            hit = found >= 0
            out[hit] = self.frames.inner_chains(found[hit])
        return out.tolist()



#: Bound of the int64 search keys built as ``group * span + time`` (a quarter of the int64 range,
#: so a sum of two never wraps): above it, times are replaced by their ranks.
KEY_LIMIT = 2**61


def _root() -> Module:
    return Module(name="", ts=0, end=0, parent=None, level=1, module_name="")


#: ``MODULE_PREFIX`` as UCS-4 codes, and which of them are letters (compared with ASCII case folded)
_PREFIX_CODES = np.array([ord(ch) for ch in MODULE_PREFIX], np.uint32)
_PREFIX_LETTERS = np.array([ch.isalpha() for ch in MODULE_PREFIX])


#: From this many names ``_is_module`` casts the distinct ones only: below it the dict's calls cost more than the
#: cast saves (NPU pair 1's 1,282 python functions of 435 names: 69 us cast, 123 us numbered).
PER_NAME_MIN = 8192


def _is_module(names: pd.Series | np.ndarray) -> np.ndarray:
    """Whether each name starts with ``nn.Module:`` (any case, as ``str.lower`` reads it).

    Tested on the names' first ten characters cast to a fixed-width array, all names at once: hashing
    the 40k python functions of a trace to test each distinct name once took twice as long. ASCII case
    folding (``c | 0x20`` for the letters) is exact here: the only characters ``str.lower`` maps into
    ASCII are U+0130 (to "i" + a combining dot) and U+212A (to "k"), neither a letter of the prefix.
    A value that is no ``str`` is no module: None and numbers by the cast (their ``str()``), a sequence or a
    mapping, which the cast refuses, by ``_prefixed``'s per-value fallback. The loaders give text alone (the
    Kineto and trace_view.json decoders refuse a name that is no JSON string, STRING_IDS values are cast to
    ``str``); such a value comes only from a ``Profile`` built in Python.

    A long column of hashable values (``PER_NAME_MIN``) is tested once per distinct value (numbered by a dict,
    ``_Numbering``): the loaders share equal names as one object, whose hash is cached, so the numbering costs a
    lookup a row, and the cast to a fixed-width array, ~2x that, is made of the distinct names alone (the 1 GB
    timesformer trace's 4.1M python functions of 709 names: 0.21-0.22 -> 0.12 s a side; timesformer's 42k:
    5.3 -> 3.6-4.0 ms)."""
    arr = np.asarray(names, dtype=object)
    if len(arr) < PER_NAME_MIN:
        return _prefixed(arr)
    seen = _Numbering()
    try:
        codes = np.fromiter(map(seen.__getitem__, arr.tolist()), dtype=np.intp, count=len(arr))
    except TypeError:  # an unhashable value (a list): every name tested
        return _prefixed(arr)
    return _prefixed(object_array(list(seen)))[codes]


class _Numbering(dict):
    """Value -> its number, the count of distinct values before it (``__missing__``: one call per distinct value)."""

    def __missing__(self, key: Any) -> int:
        code = self[key] = len(self)
        return code


def _prefixed(arr: np.ndarray) -> np.ndarray:
    """``_is_module`` of an object array, by the cast of every value; an array the cast refuses (a list or a
    dict among its values: numpy takes a sequence for a row) is tested value by value, text alone a candidate
    (``str.lower`` of the first characters: each character lowers to one or more, so they decide the prefix)."""
    width = len(MODULE_PREFIX)
    try:
        head = arr.astype(f"U{width}").view(np.uint32).reshape(len(arr), width)
    except (ValueError, TypeError):
        prefix = MODULE_PREFIX.lower()
        return np.fromiter((isinstance(v, str) and v[:width].lower().startswith(prefix) for v in arr.tolist()),
                           dtype=bool, count=len(arr))
    cand = np.flatnonzero((head[:, 0] | 0x20) == _PREFIX_CODES[0])  # few names start with n / N
    h = head[cand]
    out = np.zeros(len(arr), bool)
    out[cand] = (np.where(_PREFIX_LETTERS, h | 0x20, h) == _PREFIX_CODES).all(axis=1)
    return out


# ------------------------------------------------------------------------------------ kernel points


def _kernel_points(tree: OpTree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The original's kernel_dict as arrays: sorted unique flow-start ts, CSR pointers, pool rows."""
    if tree.fk is None:
        return np.empty(0, np.int64), np.zeros(1, np.int64), np.empty(0, np.int64)
    s_ts = col_of(tree.fk, "s_ts", np.int64)
    by = np.lexsort((col_of(tree.fk, "order", np.int64), s_ts))  # flows by (start, file order)
    s = s_ts[by]
    pts, start = np.unique(s, return_index=True)
    ptr = np.concatenate([start, [len(s)]]).astype(np.int64)
    return pts, ptr, col_of(tree.fk, "k", np.int64)[by]


# ------------------------------------------------------------------------------------ tree walks


@dataclass(eq=False)
class _Walk:
    """One module tree as arrays in walk order (parents before children) plus its Module records."""

    mods: list[Module]
    start: np.ndarray
    end: np.ndarray
    parent: np.ndarray
    names: np.ndarray
    paths: np.ndarray
    point_owner: np.ndarray  # per kernel point: owning module, -1 = the root
    tid: np.ndarray  # the thread whose Python frames give each module its call stack


def _walk(names: np.ndarray, ts: np.ndarray, ends: np.ndarray, tids: np.ndarray, point_ts: np.ndarray,
          point_ns: np.ndarray, root: Module) -> _Walk:
    """Nest module events and kernel points by the cursor rule (§3.2 step 5), vectorised.

    Modules and points are sorted together (modules first at equal ts). A point never holds
    anything, so it gets end = ts - 1; ``_nest`` then gives every module its parent module and
    every point the module open at its ts (the deepest one: the cursor's position).
    """
    names = np.asarray(names, dtype=object)
    ts = np.asarray(ts, np.int64)
    ends = np.asarray(ends, np.int64)
    nm = len(names)
    all_ts = np.concatenate([ts, point_ts])
    order = np.argsort(all_ts, kind="stable")  # modules before points at equal ts
    par_s, dep_s = _nest(all_ts[order], np.concatenate([ends, point_ts - 1])[order])
    is_mod = order < nm
    mpos = np.flatnonzero(is_mod)
    rank = np.full(len(order) + 1, -1, np.int64)  # merged position -> walk index; [-1] -> root
    rank[mpos] = np.arange(len(mpos))
    midx = order[mpos]
    mparent = rank[par_s[mpos]]
    mdepth = dep_s[mpos]
    point_owner = np.full(len(point_ts), -1, np.int64)
    ppos = np.flatnonzero(~is_mod)
    point_owner[order[ppos] - nm] = rank[par_s[ppos]]
    w_names = names[midx]
    w_ts = ts[midx]
    w_end = ends[midx]
    paths = np.empty(len(mpos), dtype=object)
    for d, sel in enumerate(levels(mdepth)):
        head = paths[mparent[sel]] if d else root.module_name
        paths[sel] = head + "/" + w_names[sel]
    self_ns = np.zeros(len(mpos), np.int64)
    owned = point_owner >= 0
    np.add.at(self_ns, point_owner[owned], np.asarray(point_ns, np.int64)[owned])
    total_ns = _subtree_sum(self_ns, mparent, mdepth)
    made: list[Module] = []
    for name, t, e, p, d, path, s, tot in zip(w_names.tolist(), w_ts.tolist(), w_end.tolist(), mparent.tolist(),
                                              mdepth.tolist(), paths.tolist(), self_ns.tolist(), total_ns.tolist(),
                                              strict=True):
        up = made[p] if p >= 0 else root
        node = Module(name=name, ts=t, end=e, parent=up, level=root.level + 1 + d, module_name=path,
                      self_ns=s, total_ns=tot)
        up.children.append(node)
        made.append(node)
    return _Walk(made, w_ts, w_end, mparent, w_names, paths, point_owner, np.asarray(tids, np.int64)[midx])


def _deepest(nodes_start: np.ndarray, nodes_end: np.ndarray, nodes_parent: np.ndarray,
             queries: np.ndarray) -> np.ndarray:
    """Deepest node strictly containing each query ts (§3.3): at each level take the last child
    starting at or before ts and descend only if start < ts < end. -1 when none.

    The nodes are in start order and ``nodes_parent`` is their ``_nest`` (the cursor rule), so every
    subtree is an index range. The descent then only ever enters ancestors of ``j``, the last node
    starting at or before ts: a later sibling starts after ts, and a node around ts (its end after
    ts) holds every node after it up to ``j``. So the answer is ``j``, or the parent of the topmost
    ancestor of ``j`` (itself included) not strictly around ts: a climb from ``j`` that needs no
    search keys (sorting 40k frames by parent for them cost more than all the lookups)."""
    q = np.asarray(queries, np.int64)
    start = np.asarray(nodes_start, np.int64)
    out = np.searchsorted(start, q, side="right") - 1
    node = out.copy()
    active = np.flatnonzero(node >= 0)
    while len(active):
        at, qa = node[active], q[active]
        up = nodes_parent[at]
        miss = ~((start[at] < qa) & (qa < nodes_end[at]))
        out[active[miss]] = up[miss]
        node[active] = up
        active = active[up >= 0]
    return out


def _chains(names: np.ndarray, parent: np.ndarray, nodes: list[int], innermost_first: bool = False,
            memo: dict[int, str] | None = None) -> list[str]:
    """``;\\n``-joined name chain from the top-level ancestor down to each node, or from the node up
    (an op's "Call stack" order); shared parts are built once (across calls when given ``memo``).

    A Python loop over the nodes asked, each chain built once from its parent's: session 63 measured it in a
    default compare at 1.5 ms of timesformer's 0.19 s (CPU, 1,088 nodes), 6.7 ms of xdit's 0.9 s (5,477), 0.3 ms of
    vLLM's, 0.1 ms of NPU pair 1's and 0.2 s of the 1 GB GPU pair's 23 s (99,696): under 1 %, so it stays a loop
    (the chains are Python strings whatever builds them)."""
    memo = {} if memo is None else memo
    out = []
    for i in nodes:
        path = []
        j = i
        while j >= 0 and j not in memo:
            path.append(j)
            j = int(parent[j])
        text = memo[j] if j >= 0 else None
        for k in reversed(path):
            if text is None:
                text = names[k]
            else:
                text = names[k] + ";\n" + text if innermost_first else text + ";\n" + names[k]
            memo[k] = text
        out.append(memo[i])
    return out


@dataclass(eq=False)
class _Frames:
    """Call functions (non-module python functions) nested thread by thread.

    The original nests all threads' frames into one tree, so a data-loader or tqdm thread's long
    ``wait`` frame became the caller of the main thread's code (docs/differences.md). Here each
    thread is moved to its own stretch of the time axis, so one vectorised nesting and lookup
    serve all threads and no frame is ever the parent of another thread's frame.
    """

    names: np.ndarray
    start: np.ndarray  # shifted, sorted
    end: np.ndarray
    parent: np.ndarray
    tids: np.ndarray  # sorted distinct threads; thread k occupies [k * span, (k + 1) * span)
    t0: int
    span: int
    #: the distinct frame times when times are kept as ranks (``_ranks``), else None
    times: np.ndarray | None = None
    _inner: dict[int, str] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, names: np.ndarray, ts: np.ndarray, end: np.ndarray, tids: np.ndarray,
              lo: int, hi: int) -> _Frames:
        """``lo``/``hi`` bound every frame time and every time that will be looked up."""
        uniq, code = np.unique(np.asarray(tids, np.int64), return_inverse=True)
        ts, end = np.asarray(ts, np.int64), np.asarray(end, np.int64)
        times = None
        if len(uniq) * (hi - lo + 2) >= KEY_LIMIT:  # threads * time range overflows int64: use ranks
            times = np.unique(np.concatenate([ts, end]))
            ts, end = 2 * np.searchsorted(times, ts), 2 * np.searchsorted(times, end)
            lo, hi = -1, 2 * len(times)
        t0, span = lo, hi - lo + 2
        shift = code.astype(np.int64) * span - t0
        order = np.argsort(ts + shift, kind="stable")
        start, stop = (ts + shift)[order], (end + shift)[order]
        parent, _ = _nest(start, stop, with_depth=False)
        return cls(np.asarray(names, dtype=object)[order], start, stop, parent, uniq, t0, span, times)

    def _ranks(self, ts: np.ndarray) -> np.ndarray:
        """Looked-up times on the rank scale of the frames: a frame time t_k is 2k, a time between
        t_k and t_k+1 is 2k+1, so every order and equality with frame times is kept."""
        if self.times is None:
            return ts
        pos = np.searchsorted(self.times, ts)
        exact = self.times[np.minimum(pos, len(self.times) - 1)] == ts
        return 2 * pos - (~exact).astype(np.int64)

    def deepest(self, ts: np.ndarray, tids: np.ndarray) -> np.ndarray:
        """Deepest frame of the same thread strictly containing each ts (§3.3 rule); -1 when none,
        and for a thread without frames."""
        out = np.full(len(ts), -1, np.int64)
        if not len(self.tids) or not len(ts):
            return out
        pos = np.minimum(np.searchsorted(self.tids, tids), len(self.tids) - 1)
        mine = np.flatnonzero(self.tids[pos] == tids)
        out[mine] = _deepest(self.start, self.end, self.parent,
                             self._ranks(np.asarray(ts, np.int64)[mine]) - self.t0
                             + pos[mine].astype(np.int64) * self.span)
        return out

    def chains(self, found: np.ndarray) -> list[str]:
        """Outermost-first chains (a module's call stack)."""
        return _chains(self.names, self.parent, found.tolist())

    def inner_chains(self, found: np.ndarray) -> list[str]:
        """Innermost-first chains (an op's call stack), memoised across ops."""
        return _chains(self.names, self.parent, found.tolist(), innermost_first=True, memo=self._inner)


def has_modules(profile: Profile) -> bool:
    """Whether the profile holds nn.Module python functions, without which it has no module tree (``build_side``)
    and a run writes operator sheets, not module sheets: what a hint said before pairing may rely on."""
    return bool(_is_module(col_of(profile.python_functions, "name", object)).any())


def module_event_names(profile: Profile) -> list[str]:
    """The distinct names of the profile's nn.Module python functions, of which (with the optimizer ops) module
    paths are made: ``--op_name_map`` renames a path by substring, so a key inside one of them renames something,
    where one inside a call-stack frame's name (``<built-in function linear>``) renames nothing."""
    names = pd.unique(col_of(profile.python_functions, "name", object))
    return [str(n) for n in names[_is_module(names)].tolist()]


def backward_modules_possible(profile: Profile) -> bool:
    """Whether the profile's module trees may hold backward modules, whose paths begin ``/[ BACKWARD ]``
    (``_backward_walk``): nn.Module events and fwdbwd flows. A key inside ``[ BACKWARD ]`` renames those paths."""
    fl = profile.flows
    return has_modules(profile) and bool(len(fl)) and bool(
        classify.per_unique(col_of(fl, "cat", object), lambda c: c == "fwdbwd").any())


def build_side(profile: Profile, tree: OpTree, transparent: tuple[str, ...] = ()) -> ModuleTrees | None:
    """Forward and backward module trees of one side (§3.2-3.4); None without nn.Module events. ``transparent``
    (``--transparent_op``): ops of these names are no module's op, as step markers are not, so their children are
    a module's top-layer ops in their place, as in the trace without their events."""
    pf = profile.python_functions
    pf_names = col_of(pf, "name", object)
    is_mod = _is_module(pf_names)
    if not is_mod.any():
        return None
    pool = tree.kpool  # the same kernels the op tree links (kernel_pool)
    pts, pptr, pk = _kernel_points(tree)
    kdur = col_of(pool, "dur", np.int64)
    # every point holds at least one kernel, so reduceat sums each group
    point_ns = np.add.reduceat(kdur[pk], pptr[:-1]) if len(pk) else np.zeros(len(pts), np.int64)

    pf_ts = col_of(pf, "ts", np.int64)
    pf_end = pf_ts + col_of(pf, "dur", np.int64)
    op_names = col_of(tree.ops, "name", object)
    # optimizer ops (pseudo-modules) by the tree's factorisation of the op names; ProfilerStep# ops (no op of a
    # module) as the tree found them
    codes, uniq = tree.name_codes()
    optim = classify.distinct_flags(uniq, lambda t: t.startswith("optimizer"))[codes]
    step = tree.step_nodes()
    fwd, bwd = _root(), _root()
    pf_tid = col_of(pf, "tid", np.int64)
    fw = _walk(np.concatenate([pf_names[is_mod], op_names[optim]]),
               np.concatenate([pf_ts[is_mod], tree.ts[optim]]),
               np.concatenate([pf_end[is_mod], tree.end[optim]]),
               np.concatenate([pf_tid[is_mod], col_of(tree.ops, "tid", np.int64)[optim]]), pts, point_ns, fwd)
    bw = _backward_walk(profile, tree, fw, pts, point_ns, bwd)
    call = ~is_mod
    times = np.concatenate([pf_ts, pf_end, tree.ts, tree.end])  # frames, modules and ops
    frames = _Frames.build(pf_names[call], pf_ts[call], pf_end[call], pf_tid[call],
                           int(times.min()), int(times.max()))
    _set_call_stacks(frames, [w for w in (fw, bw) if w is not None])

    keep = ~optim & ~step
    if transparent:
        keep &= ~np.isin(uniq, np.asarray(transparent, dtype=object))[codes]
    top_node, top_owner = _assign_ops(tree, np.flatnonzero(keep), fw, bw)
    kptr, krows = _hand_out_kernels(tree, fw, bw, top_node, top_owner, pts, pptr, pk)
    top_ns = np.zeros(len(top_node), np.int64)
    np.add.at(top_ns, np.repeat(np.arange(len(top_node)), np.diff(kptr)), kdur[krows])
    return ModuleTrees(profile, tree, fwd, bwd, top_node, top_ns, kptr, krows,
                       op_names, col_of(tree.ops, "call_stack", object),
                       frames=frames if _derives_stacks(profile, tree, frames, top_node) else None,
                       k_names=col_of(pool, "name", object), k_durs=kdur, top_owner=top_owner,
                       module_paths=fw.paths if bw is None else np.concatenate([fw.paths, bw.paths]))


def _backward_walk(profile: Profile, tree: OpTree, fw: _Walk, pts: np.ndarray, point_ns: np.ndarray,
                   root: Module) -> _Walk | None:
    """Backward pseudo-modules from fwdbwd flows: the op at the flow end, named after the deepest
    forward module strictly containing the flow start; None when there are none."""
    fl = profile.flows
    # the three columns read, not a filtered copy of the whole flow table
    fb = np.flatnonzero(classify.per_unique(col_of(fl, "cat", object), lambda c: c == "fwdbwd")) \
        if len(fl) else np.zeros(0, np.int64)
    if not (len(fb) and len(fw.mods)):
        return None
    bwd_pid = int(col_of(fl, "f_pid", np.int64)[fb[0]])
    sel = np.flatnonzero(col_of(tree.ops, "pid", np.int64) == bwd_pid)
    # the op of the backward process starting at each flow end, the last of several (later ops win): the tree
    # is in start order, so a binary search finds it (a pandas Index lookup cost ~0.3 ms a side)
    sel_ts = tree.ts[sel]
    f_ts = col_of(fl, "f_ts", np.int64)[fb]
    at = np.searchsorted(sel_ts, f_ts, side="right") - 1
    if len(sel):
        at[sel_ts[np.maximum(at, 0)] != f_ts] = -1
    owner = _deepest(fw.start, fw.end, fw.parent, col_of(fl, "s_ts", np.int64)[fb])
    ok = (at >= 0) & (owner >= 0)
    if not ok.any():
        return None
    op = sel[at[ok]]
    # a backward op runs on autograd's thread, which has no Python frames: its call stack is read
    # on the thread of the forward module, the one that called backward()
    bw = _walk(BACKWARD + fw.paths[owner[ok]], tree.ts[op], tree.end[op], fw.tid[owner[ok]], pts, point_ns, root)
    return bw if len(bw.mods) else None


def _set_call_stacks(frames: _Frames, walks: list[_Walk]) -> None:
    """Each module's call stack: the chain of names of the deepest call function of its thread
    around its start, else its own chain of module names."""
    for w in walks:
        found = frames.deepest(w.start, w.tid)
        hit = found >= 0
        stacks = np.empty(len(w.mods), dtype=object)
        stacks[hit] = frames.chains(found[hit])
        miss = np.flatnonzero(~hit)  # module-name chains only where no frame is around (each costs a join)
        stacks[miss] = _chains(w.names, w.parent, miss.tolist())
        for m, st in zip(w.mods, stacks.tolist(), strict=True):
            m.call_stack = st


def _derives_stacks(profile: Profile, tree: OpTree, frames: _Frames, top_node: np.ndarray) -> bool:
    """Whether a side's op call stacks come from its Python frames: no top-layer op has a "Call
    stack" argument, and they run on threads that have frames.

    PyTorch 2 traces record with_stack as python_function events only: their ops carry no "Call
    stack", and the original's op call-stack cells stay empty (docs/differences.md)."""
    stacks = col_of(tree.ops, "call_stack", object)[top_node].tolist()
    if profile.source == "ascend_db" or _any_stack(stacks):
        return False
    return bool(np.isin(col_of(tree.ops, "tid", np.int64)[top_node], frames.tids).any())


def _any_stack(stacks: list) -> bool:
    """Whether any value is a call stack (neither "" nor "N/A"; None and NaN count, as ``not in`` reads them)."""
    arr = np.asarray(stacks, dtype=object)
    return bool(((arr != "") & (arr != "N/A")).any())


def _assign_ops(tree: OpTree, ops_idx: np.ndarray, fw: _Walk, bw: _Walk | None) -> tuple[np.ndarray, np.ndarray]:
    """(top-layer op, owning module) pairs, module by module (§3.2 step 8): an op belongs to the deepest
    forward module around its start, else the deepest backward one (backward modules numbered after the
    forward ones); each module gets its op range ``op_lo:op_hi`` in these arrays."""
    nf = len(fw.mods)
    owner = _deepest(fw.start, fw.end, fw.parent, tree.ts[ops_idx])
    if bw is not None:
        miss = np.flatnonzero(owner < 0)
        ob = _deepest(bw.start, bw.end, bw.parent, tree.ts[ops_idx[miss]])
        owner[miss] = np.where(ob >= 0, ob + nf, -1)
    has = owner >= 0
    ops_idx, owner = ops_idx[has], owner[has]
    by = np.argsort(owner, kind="stable")  # module by module, ops in start order
    ops_idx, owner = ops_idx[by], owner[by]
    # in start order, an op is top-layer in its module's private tree (§2.2 cursor rule)
    # exactly when it starts after the end of every earlier op of that module
    prev = _group_cummax(tree.end[ops_idx], owner)
    first = np.ones(len(owner), bool)
    first[1:] = owner[1:] != owner[:-1]
    top = first.copy()
    top[1:] |= tree.ts[ops_idx[1:]] > prev[:-1]
    top_node, top_owner = ops_idx[top], owner[top]
    all_mods = fw.mods + (bw.mods if bw is not None else [])
    bounds = np.searchsorted(top_owner, np.arange(len(all_mods) + 1))
    for m, lo, hi in zip(all_mods, bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        m.op_lo, m.op_hi = lo, hi
    return top_node, top_owner


def _group_cummax(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` within each run of equal ``groups`` (sorted, so each group is one run): one
    ``maximum.accumulate`` over the values moved group by group above every earlier group's (each group's
    values shifted to start at the sum of the earlier groups' spans). pandas' groupby cummax cost ~0.4 ms a
    call on a few hundred ops; pandas still answers where a shift could leave int64."""
    values = np.asarray(values, np.int64)
    n = len(values)
    if not n:
        return values
    starts = np.flatnonzero(np.concatenate([[True], groups[1:] != groups[:-1]]))
    lo = np.minimum.reduceat(values, starts)
    hi = np.maximum.reduceat(values, starts)
    # shifted values and shifts stay within int64: values within +-2**61 and spans summing below 2**61
    if (lo.min() < -2**61 or hi.max() > 2**61
            or float((hi.astype(np.float64) - lo.astype(np.float64) + 1).sum()) >= 2.0 ** 61):
        return pd.Series(values).groupby(groups).cummax().to_numpy(np.int64)
    span = hi - lo + 1
    base = np.repeat(np.cumsum(span) - span - lo, np.diff(np.append(starts, n)))  # value -> shifted value
    return np.maximum.accumulate(values + base) - base


def _hand_out_kernels(tree: OpTree, fw: _Walk, bw: _Walk | None, top_node: np.ndarray, top_owner: np.ndarray,
                      pts: np.ndarray, pptr: np.ndarray, pk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each module's self kernels go to its top-layer ops (§3.2 step 9): a kernel point goes to the first
    top-layer op of its module ending at or after it, if that op has started. Returns (kptr, krows): the
    kernel rows of top-layer op ``i`` are ``krows[kptr[i]:kptr[i + 1]]``."""
    q_owner_parts, q_point_parts = [], []
    for w, off in ((fw, 0), (bw, len(fw.mods))):
        if w is not None:
            mine = w.point_owner >= 0
            q_owner_parts.append(w.point_owner[mine] + off)
            q_point_parts.append(np.flatnonzero(mine))
    q_owner, q_point = np.concatenate(q_owner_parts), np.concatenate(q_point_parts)
    t_end, t_ts = tree.end[top_node], tree.ts[top_node]
    kptr = np.zeros(len(top_node) + 1, np.int64)
    krows = np.empty(0, np.int64)
    if len(q_point) and len(top_node):
        j = _handout(top_owner, t_ts, t_end, q_owner, pts[q_point])
        got = j >= 0
        j, q_point = j[got], q_point[got]
        by = np.lexsort((q_point, j))
        j, q_point = j[by], q_point[by]
        counts = pptr[q_point + 1] - pptr[q_point]
        krows = pk[ranges(pptr[q_point], pptr[q_point + 1])]
        np.add.at(kptr, j + 1, counts)
        kptr = np.cumsum(kptr)
    return kptr, krows


def _handout(top_owner: np.ndarray, t_ts: np.ndarray, t_end: np.ndarray, q_owner: np.ndarray,
             q_ts: np.ndarray) -> np.ndarray:
    """Per kernel point (module ``q_owner``, time ``q_ts``): the first top-layer op of its module ending at or
    after it, if that op has started by then (-1: none). The original walks a cursor; top-layer ops sorted by
    module, then start, end in increasing order within a module (the loaders read a negative duration as 0,
    so no op ends before it starts), which makes the walk a search."""
    uniq = np.unique(np.concatenate([t_end, q_ts]))
    span = len(uniq) + 1
    keys = top_owner * span + np.searchsorted(uniq, t_end)
    j = np.searchsorted(keys, q_owner * span + np.searchsorted(uniq, q_ts), side="left")
    jj = np.minimum(j, len(top_owner) - 1)
    return np.where((j < len(top_owner)) & (top_owner[jj] == q_owner) & (q_ts >= t_ts[jj]), j, -1)


def _step_view(profile: Profile, rng: tuple[int, int]) -> Profile:
    """A text export cut, as a DB export's loader cuts it, to the torch ops, modules and flows that start inside
    the step. Device rows stay (a kernel follows the op that launched it, as in the operator sheets of a step,
    whenever it ran), and so do the other python functions: the frames of a call stack began before it."""
    def cut(df: pd.DataFrame, col: str = "ts", keep: np.ndarray | None = None) -> pd.DataFrame:
        inside = in_range(col_of(df, col, np.int64), rng)
        if keep is not None:
            inside |= keep
        return df if inside.all() else df[inside].reset_index(drop=True)

    pf = profile.python_functions
    return dataclasses.replace(profile, ops=cut(profile.ops), flows=cut(profile.flows, "s_ts"),
                               python_functions=cut(pf, keep=~_is_module(col_of(pf, "name", object))))


def _say_no_module_in_step(profile: Profile, view: Profile, step: int, rng: tuple[int, int], side: str) -> None:
    """Warn when a text export holds nn.Module events but none starts in the step asked for: the module sheets
    are then left out without a word, as a module counts in the step its start lies in (as a DB export's loader
    cuts them). A step starting inside an earlier one (the level-1 text sample with a ProfilerStep#51 from 40 ms
    into step 50) is such a step: its modules started in step 50, and its ops nest under step 50's marker, so its
    only line was the operator sheets' "There is no operator infomation for step 51"."""
    pf = profile.python_functions
    if _is_module(col_of(view.python_functions, "name", object)).any():
        return
    is_mod = _is_module(col_of(pf, "name", object))
    if not is_mod.any():
        return
    ts = col_of(pf, "ts", np.int64)[is_mod]
    before = int((ts < rng[0]).sum())
    where = (f"{before:,} start before it" if before == len(ts) else
             f"{len(ts) - before:,} start after it" if not before else
             f"{before:,} start before it, {len(ts) - before:,} after it")
    log.warning("%s: none of its %s nn.Module events starts in step %d (%s), so it has no module for the module "
                "sheets (ModuleCompare, ModuleCompareStatistic): a module counts in the step its start lies in%s",
                profile.path, f"{len(ts):,}", step, where, side_named(side))


def module_trees(ctx: RunContext, side: str) -> ModuleTrees | None:
    """Cached module trees of one side (None when it has no nn.Module python functions)."""
    def compute() -> ModuleTrees | None:
        prof = side_profile(ctx, side)
        if not len(prof.python_functions):
            return None
        rng = side_range(ctx, side) if prof.source == "ascend_text" else None
        if rng is None:  # a DB export's loader already cut every table to the step
            return build_side(prof, op_tree(ctx, side), ctx.options.transparent_op)
        # the original builds a text export's module trees from the whole profile whatever the step; ours
        # from the step's rows, as for a DB export (docs/differences.md)
        view = _step_view(prof, rng)
        _say_no_module_in_step(prof, view, side_step(ctx, side), rng, ctx.side(prof))
        return build_side(view, build_tree(view, ctx.options.gpu_flow_cat, with_comm=True),
                          ctx.options.transparent_op)

    return ctx.cached(_CACHE.format(side=side), compute)


# ------------------------------------------------------------------------------------ matching


def _module_keyer(op_name_map: dict[str, str]) -> Callable[[str], str]:
    """Matching key of a module path; ``--op_name_map`` renames substrings (deliberate difference 6).

    One pass, longest key first at each position: a replaced text is never looked up again, so a map whose
    keys chain or swap (``{'Linear': 'Conv', 'Conv': 'Linear'}``) keeps two modules apart, as the exact
    lookup does for ops; one key after another would give both modules one key. Empty keys name nothing.
    """
    keys = sorted((k for k in op_name_map if k), key=len, reverse=True)
    if not keys:
        return lambda name: name
    pattern = re.compile("|".join(map(re.escape, keys)))
    return lambda name: pattern.sub(lambda m: op_name_map[m.group(0)], name)


def _applied(path: str, keys: list[str]) -> list[tuple[int, str]]:
    """Where ``_module_keyer`` of ``keys`` (those of the map found in ``path``, non-empty) replaces text in ``path``,
    and which key, without a pattern: from the left, at each place the longest key found there, the text after it
    searched on, as the pattern's alternation (longest first) replaces them."""
    starts: dict[int, str] = {}
    for k in keys:
        at = path.find(k)
        while at >= 0:
            if len(k) > len(starts.get(at, "")):
                starts[at] = k
            at = path.find(k, at + 1)
    out: list[tuple[int, str]] = []
    pos = 0
    for at in sorted(starts):
        if at >= pos:
            out.append((at, starts[at]))
            pos = at + len(starts[at])
    return out


def _renamed(path: str, keys: list[str], op_name_map: Mapping[str, str]) -> str:
    """``_module_keyer`` of the map's ``keys`` (those found in ``path``, non-empty) applied to ``path``, without a
    pattern (``_applied``)."""
    out: list[str] = []
    pos = 0
    for at, k in _applied(path, keys):
        out += [path[pos:at], op_name_map[k]]
        pos = at + len(k)
    out.append(path[pos:])
    return "".join(out)


def match_modules(a: Module, b: Module, op_name_map: dict[str, str],
                  match: bool) -> list[tuple[Module | None, Module | None]]:
    """Breadth-first matching of two module trees by path (§3.5); roots excluded."""
    out: list[tuple[Module | None, Module | None]] = []
    queue: deque[tuple[Module | None, Module | None]] = deque([(a, b)])
    align = AlignMemo()
    key = _module_keyer(op_name_map)
    while queue:
        x, y = queue.popleft()
        ca = x.children if x is not None else []
        cb = y.children if y is not None else []
        if x is not None and y is not None and match:
            ia, ib = align([key(m.module_name) for m in ca], [key(m.module_name) for m in cb])
        else:
            ia, ib = no_matching(len(ca), len(cb))
        for i, j in zip(ia.tolist(), ib.tolist(), strict=False):
            pair = (ca[i] if i >= 0 else None, cb[j] if j >= 0 else None)
            out.append(pair)
            queue.append(pair)
    return out


def map_entry_verdicts(op_name_map: Mapping[str, str], base: ModuleTrees, comp: ModuleTrees,
                       pairs: list[tuple[Module | None, Module | None]]) -> dict[str, tuple[list[int], bool]]:
    """Per ``--op_name_map`` key found in a module path of either side: (the paths it renames per side, whether the
    matching pairs otherwise without its entry). A path holding the key is not renamed by it where another key's
    text replaced there first covers it (``'Embedding'`` in ``BertEmbeddings_0`` beside a ``'BertEmbeddings'``
    entry): counting it said an entry renamed paths it left as they were.
    ``pairs``: the matching's, with the whole map. The matching aligns
    the children of each pair of two, breadth first, so it pairs alike without an entry wherever every children
    list holding a path it renames aligns alike: only those lists are aligned again, each distinct path's key made
    once. Re-running the whole matching per entry cost 85 % of a 7.4 s compare of the timesformer pair under a
    200-entry map."""
    out: dict[str, tuple[list[int], bool]] = {}
    entries = [(k, v) for k, v in op_name_map.items() if k and k != v]
    if not entries:
        return out
    # the children lists the matching aligns (those of each pair of two, the roots' too), each distinct pair of
    # path lists once: a job's steps repeat them
    lists: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
    aligned: dict[int, int] = {}  # id of a paired module (or root): its children lists' number in ``lists``
    for x, y in [(base.forward, comp.forward), (base.backward, comp.backward), *pairs]:
        if x is not None and y is not None:
            got = (tuple(m.module_name for m in x.children), tuple(m.module_name for m in y.children))
            aligned[id(x)] = aligned[id(y)] = lists.setdefault(got, len(lists))
    held_by: list[dict[str, int]] = [{}, {}]  # each side's modules per distinct path
    within: list[dict[str, set[int]]] = [{}, {}]  # the lists each distinct path is aligned in
    for t, count, where in zip((base, comp), held_by, within, strict=True):
        for m in (m for tree in (t.forward, t.backward) for m in _descendants(tree)):
            count[m.module_name] = count.get(m.module_name, 0) + 1
            at = where.setdefault(m.module_name, set())
            if (i := aligned.get(id(m.parent))) is not None:
                at.add(i)
    by_number = list(lists)
    key = _module_keyer(dict(op_name_map))
    full: dict[str, str] = {}

    def keyed(path: str) -> str:
        """The path's key with the whole map, made once."""
        if path not in full:
            full[path] = key(path)
        return full[path]

    # a path's key depends on the keys found in it alone: without an entry, each path holding its key is keyed by
    # the others found there (a pattern of every other key cost 0.1 s to compile per entry)
    found = [{p: [a for a in op_name_map if a and a in p] for p in count} for count in held_by]
    # the keys replaced in each path with the whole map: an entry renames the paths whose list holds its key, not
    # every path holding it (another key's text replaced first may cover it: 'Embedding' in BertEmbeddings_0)
    replaced = [{p: {a for _, a in _applied(p, keys)} for p, keys in side.items()} for side in found]
    align = AlignMemo()
    for k, _ in entries:
        hit = [[p for p, keys in side.items() if k in keys] for side in found]
        if not any(hit):
            continue
        renamed = [[p for p in h if k in side[p]] for side, h in zip(replaced, hit, strict=True)]
        # the keys the entry changes (a path it does not rename keys alike without it); the others stay
        moved = {p: _renamed(p, [a for a in side[p] if a != k], op_name_map)
                 for side, h in zip(found, renamed, strict=True) for p in h}
        held = [sum(count[p] for p in h) for count, h in zip(held_by, renamed, strict=True)]
        changed = False
        for i in set().union(*(where[p] for where, h in zip(within, renamed, strict=True) for p in h)):
            with_it = [[keyed(p) for p in paths] for paths in by_number[i]]
            without = [[moved.get(p, w) for p, w in zip(paths, ws, strict=True)]
                       for paths, ws in zip(by_number[i], with_it, strict=True)]
            if without != with_it and any(not np.array_equal(a, b) for a, b in
                                          zip(align(*with_it), align(*without), strict=True)):
                changed = True
                break
        out[k] = (held, changed)
    return out


def idle_module_entries(op_name_map: Mapping[str, str], verdicts: dict[str, tuple[list[int], bool]]) -> list[str]:
    """Per ``--op_name_map`` entry that renames module paths yet pairs no module the matching without it does not,
    why: those of both sides are renamed alike (``{'BertEmbeddings': 'Emb'}`` on the bundled pair), one side's
    pair with no module of the other otherwise, or none is renamed, the key lying in another key's text wherever a
    path holds it. The operators' entries get the same words
    (``optree.idle_map_entries``, which leaves to these lines a key that pairs modules). ``verdicts``:
    ``map_entry_verdicts`` of the run's matching, those of entries that pair operators left out."""
    out: list[str] = []
    for k, (held, changed) in verdicts.items():
        if changed:
            continue
        old, new = term_safe(repr(k)), term_safe(repr(op_name_map[k]))
        if not any(held):
            out.append(f"the entry {old}: {new} renames no module path: where one holds {old}, the text of another "
                       "key covers it, replaced there first (the map replaces the longest key at each place, from the "
                       "left)")
            continue
        if all(held):
            out.append(f"the entry {old}: {new} renames the {held[0]:,} base and {held[1]:,} comparison module paths "
                       f"holding {old} alike, so they pair as without it (an entry pairs a name of one side with "
                       "another name of the other)")
            continue
        n = max(held)
        out.append(f"the entry {old}: {new} renames {n:,} {'base' if held[0] else 'comparison'} module "
                   f"path{'s' if n != 1 else ''} holding {old}, but {'it pairs' if n == 1 else 'they pair'} as "
                   "without it")
    return out


def _descendants(root: Module) -> list[Module]:
    """Every module under ``root`` (not itself), breadth first."""
    out: list[Module] = []
    queue = deque(root.children)
    while queue:
        m = queue.popleft()
        out.append(m)
        queue.extend(m.children)
    return out


def order_pairs(pairs: list[tuple[Module | None, Module | None]]) -> list[tuple[Module | None, Module | None]]:
    """Row order shared by both module sheets (§3.6)."""
    with_base = sorted((p for p in pairs if p[0] is not None), key=lambda p: p[0].ts)  # type: ignore[union-attr]
    only_comp = sorted((p for p in pairs if p[0] is None), key=lambda p: p[1].ts)  # type: ignore[union-attr]
    out = []
    k = 0
    for p in with_base:
        if p[1] is not None:
            while k < len(only_comp) and only_comp[k][1].ts < p[1].ts:  # type: ignore[union-attr]
                out.append(only_comp[k])
                k += 1
        out.append(p)
    out.extend(only_comp[k:])
    return out


# ------------------------------------------------------------------------------------ sheets


def display_name(module_name: str) -> str:
    """The module path as the sheets show it: the ``nn.Module:`` prefix on every level only adds width."""
    return module_name.replace("nn.Module:", "")


def _heads(paths: list[str], memo: dict[str, tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Module Class (the last path part less its ``_N``: alike for every instance) and Module Name
    (``display_name``) of each module path, each distinct path worked out once in ``memo`` (shared by the two
    sheets of a run: timesformer's 334 paths of ~200 characters, ~0.25 ms) and each class once."""
    classes: dict[str, str] = {}
    for path in paths:
        if path not in memo:
            last = path.rpartition("/")[2]
            cls = classes.get(last)
            if cls is None:
                cls = classes[last] = _TRAILING_ID.sub("", last)
            memo[path] = (cls, display_name(path))
    got = [memo[p] for p in paths]
    return object_array([c for c, _ in got]), object_array([d for _, d in got])


def _op_cells(side: ModuleTrees) -> tuple[list, np.ndarray, np.ndarray]:
    """Per top-layer op of a side: its name as a list (the ops' alignment keys) and as an array, and its kernel
    details; built once per side (call stacks: ``ModuleTrees.top_stacks``, for the cells that show one)."""
    if side._infos is None:
        ptr = side.top_kptr.tolist()
        lines = side.tree.kernel_text_of(side.top_krows).tolist()  # the lines of these kernels only
        texts = object_array(["".join(lines[a:b]) if b > a else "" for a, b in zip(ptr[:-1], ptr[1:], strict=True)])
        names = side.op_names[side.top_node]
        side._infos = (names.tolist(), names, texts)
    return side._infos


def _us(ns: np.ndarray) -> np.ndarray:
    """Whole ns in us as Python's ``int / 1000`` gives them (the quotient correctly rounded): numpy's, of the
    float64 of each ns, is the same below 2**53 ns (104 days)."""
    if len(ns) and int(np.abs(ns).max()) >= 2**53:
        return np.array([v / 1000 for v in ns.tolist()], np.float64)
    return ns / 1000


def _where(mask: np.ndarray, values: np.ndarray, other: Any) -> np.ndarray:
    """An object array of ``values`` (Python scalars) where ``mask`` holds, ``other`` elsewhere."""
    out = object_full(len(mask), other)
    out[mask] = values[mask]
    return out


def _first_rows(sizes: np.ndarray) -> np.ndarray:
    """Whether each row of consecutive blocks of ``sizes`` rows (each at least one) is its block's first."""
    first = np.zeros(int(sizes.sum()), bool)
    first[np.cumsum(sizes) - sizes] = True
    return first


def _detail_side(mods: list[Module | None], cells: tuple[list, np.ndarray, np.ndarray] | None,
                 top_ns: np.ndarray | None, op: np.ndarray, total: np.ndarray, pair: np.ndarray) -> dict[str, Any]:
    """One side's ModuleCompare cells: per row (``pair``: its module pair; ``total``: a TOTAL row; ``op``: the
    row's top-layer op of this side, -1 for none), the operator name, kernel details, self and total us and call
    stack (the TOTAL rows' only: the op rows' are set by ``detail_frame``)."""
    has = op >= 0
    self_ns = np.array([m.self_ns if m is not None else 0 for m in mods], np.int64)
    total_ns = np.array([m.total_ns if m is not None else 0 for m in mods], np.int64)
    op_ns = np.zeros(len(op), np.int64)
    name, text = object_full(len(op), ""), object_full(len(op), "")
    if cells is not None and has.any():
        op_ns[has] = top_ns[op[has]]  # type: ignore[index]
        name[has], text[has] = cells[1][op[has]], cells[2][op[has]]
    name[total], text[total] = "TOTAL", None
    stack = object_array([m.call_stack if m is not None else "" for m in mods])[pair]
    stack[~total] = None
    return {"name": name, "text": text, "self": _us(np.where(total, self_ns[pair], op_ns)),
            "total": _us(total_ns[pair]), "stack": stack}


def detail_frame(pairs: list, base: ModuleTrees | None, comp: ModuleTrees | None,
                 heads: dict[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    """ModuleCompare (§3.8): a TOTAL row per module pair, then its op pairs. The ops are aligned pair by pair
    (``AlignMemo``), then the cells are taken column by column from the sides' arrays, where a list per row (its
    diffs set after one vectorised pass) made timesformer's 1,311 rows in 5.8 ms, now 4.0 (most of it the ops'
    kernel texts and call stacks). ``heads``: ``_heads``' memo, shared with ``statistic_frame``."""
    align = AlignMemo()
    sides = [(_op_cells(s) if s is not None else None) for s in (base, comp)]
    parts: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    for x, y in pairs:
        xa = sides[0][0][x.op_lo:x.op_hi] if x is not None and sides[0] is not None else []
        ya = sides[1][0][y.op_lo:y.op_hi] if y is not None and sides[1] is not None else []
        ia, ib = align(xa, ya)
        parts[0].append(ia)
        parts[1].append(ib)
    n_ops = np.array([len(ia) for ia in parts[0]], np.int64)
    total = _first_rows(n_ops + 1)
    pair = np.repeat(np.arange(len(pairs)), n_ops + 1)
    got = []
    for k, (side, trees) in enumerate(zip(sides, (base, comp), strict=True)):
        mods = [p[k] for p in pairs]
        lo = np.array([m.op_lo if m is not None else 0 for m in mods], np.int64)
        at = np.concatenate(parts[k]) if pairs else np.zeros(0, np.int64)
        op = np.full(len(total), -1, np.int64)
        op[~total] = np.where(at >= 0, at + np.repeat(lo, n_ops), -1)
        got.append((op, _detail_side(mods, side, trees.top_ns if trees is not None else None, op, total, pair)))
    (op_b, b), (op_c, c) = got
    first_b, first_c = np.where(total, b["total"], b["self"]), np.where(total, c["total"], c["self"])
    diff = exact_diffs(first_b, first_c, 1000)
    # the only op cells that show a call stack: those whose time grew ("" for an absent op)
    grew = ~total & (diff > 0)
    for side, cells, op in ((base, b, op_b), (comp, c, op_c)):
        cells["stack"][grew] = ""
        ask = np.flatnonzero(grew & (op >= 0))
        if len(ask):
            cells["stack"][ask] = side.top_stacks(op[ask].tolist())  # type: ignore[union-attr]
    refs = [x if x is not None else y for x, y in pairs]
    # a path's last part is its module's name
    cls, shown = _heads([m.module_name for m in refs], {} if heads is None else heads)
    head = [cls[pair], np.array([m.level for m in refs], np.int64)[pair], shown[pair]]
    columns = [np.arange(1, len(total) + 1), *head]
    for s in (b, c):
        columns += [s["name"], s["text"], s["self"], _where(total, s["total"], None)]
    columns += [_where(total, diff, None), exact_diffs(b["self"], c["self"], 1000),
                diff_ratios(first_b, first_c)[1], b["stack"], c["stack"]]
    return frame_from_columns(columns, len(DETAIL_COLUMNS), len(total))


@dataclass(eq=False)
class _SideStats:
    """One side's aggregates for ModuleCompareStatistic: per module name (group), the instances' count, self /
    total ns and first call stack; per (group, op name) key, groups in order and op names in first-appearance
    order within each, its group, op name, device ns, op count and kernel summary."""

    number: np.ndarray
    self_ns: np.ndarray
    total_ns: np.ndarray
    stack: np.ndarray
    op_group: np.ndarray
    op_name: np.ndarray
    op_ns: np.ndarray
    op_count: np.ndarray
    op_text: np.ndarray


def _first_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(code per key, distinct keys), codes numbered in order of first appearance."""
    codes, uniq = factorize(keys)
    return codes.astype(np.int64), uniq


def _text_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_first_codes`` of names by a dict where every distinct one is a ``str`` (else by ``factorize``, whose
    rules of missing values apply): the loaders share equal names as one object, whose hash is cached, where
    pandas hashes every value's text again (timesformer's 446 kernel rows a side, names of ~400 characters:
    0.50 -> 0.05 ms)."""
    seen = _Numbering()
    try:
        codes = np.fromiter(map(seen.__getitem__, values.tolist()), dtype=np.int64, count=len(values))
    except TypeError:  # an unhashable value
        return _first_codes(values)
    if all(type(v) is str for v in seen):
        return codes, object_array(list(seen))
    return _first_codes(values)


def _side_stats(side: ModuleTrees | None, groups: list[list[Module]]) -> _SideStats:
    """``_SideStats`` of the module groups (instances in pair order), with numpy group sums instead of a
    dict and list per op name: op names grouped by (module name, op name) in first-appearance order, and
    each group's kernels by kernel name the same way (the summary's lines, in first-appearance order)."""
    ng = len(groups)
    mods = [m for g in groups for m in g]
    number = np.array([len(g) for g in groups], np.int64)
    gid = np.repeat(np.arange(ng), number)
    self_ns = np.zeros(ng, np.int64)
    total_ns = np.zeros(ng, np.int64)
    np.add.at(self_ns, gid, np.array([m.self_ns for m in mods], np.int64))
    np.add.at(total_ns, gid, np.array([m.total_ns for m in mods], np.int64))
    stack = object_array([g[0].call_stack if g else "" for g in groups])
    lo = np.array([m.op_lo for m in mods], np.int64)
    hi = np.array([m.op_hi for m in mods], np.int64)
    pos = ranges(lo, hi)  # top-layer ops, group by group
    if side is None or not len(pos):
        none = np.zeros(0, np.int64)
        return _SideStats(number, self_ns, total_ns, stack, none, np.empty(0, object), none, none,
                          np.empty(0, object))
    op_gid = np.repeat(gid, hi - lo)
    name_code, _ = _text_codes(side.op_names[side.top_node[pos]])
    # (group, op name) keys in first-appearance order: groups come one after another, so keys do too
    key, key_uniq = _first_codes(op_gid * (int(name_code.max()) + 1) + name_code)
    nkey = len(key_uniq)
    first = np.full(nkey, len(pos), np.int64)
    np.minimum.at(first, key, np.arange(len(pos)))
    op_ns = np.zeros(nkey, np.int64)
    np.add.at(op_ns, key, side.top_ns[pos])
    op_count = np.bincount(key, minlength=nkey).astype(np.int64)
    # kernels of each key's ops in op order, summed per kernel name (first appearance within the key)
    kptr = side.top_kptr
    nk = kptr[pos + 1] - kptr[pos]
    krows = side.top_krows[ranges(kptr[pos], kptr[pos + 1])]
    text = _kernel_summaries(side, np.repeat(key, nk), krows, nkey)
    return _SideStats(number, self_ns, total_ns, stack, op_gid[first], side.op_names[side.top_node[pos[first]]],
                      op_ns, op_count, text)


def _kernel_summaries(side: ModuleTrees, kkey: np.ndarray, krows: np.ndarray, nkey: int) -> np.ndarray:
    """Per key, the Kernel Details of ModuleCompareStatistic: its kernels (pool rows ``krows``, of keys ``kkey``)
    summed per kernel name, a line per name in first-appearance order ("" for a key without kernels)."""
    text = object_full(nkey, "")
    if not len(krows):
        return text
    kname, kname_uniq = _text_codes(side.k_names[krows])
    line, line_uniq = _first_codes(kkey * len(kname_uniq) + kname)
    line_ns = np.zeros(len(line_uniq), np.int64)
    np.add.at(line_ns, line, side.k_durs[krows])
    line_n = np.bincount(line, minlength=len(line_uniq))
    owner = line_uniq // len(kname_uniq)
    lines = [f"{n}, [number: {c}], [duration_ms: {d:.3f}]\n" for n, c, d in
             zip(kname_uniq[line_uniq % len(kname_uniq)].tolist(), line_n.tolist(), ms3_of(line_ns).tolist(),
                 strict=True)]
    by = np.argsort(owner, kind="stable")  # each key's lines together, in first-appearance order
    bounds = np.searchsorted(owner[by], np.arange(nkey + 1)).tolist()
    ordered = [lines[i] for i in by.tolist()]
    text[:] = ["".join(ordered[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return text


def _match_keys(sb: _SideStats, sc: _SideStats) -> tuple[np.ndarray, np.ndarray]:
    """Per base (group, op name) key, the comparison key of the same group and op name (-1: none); and the
    comparison keys no base key has, in their order."""
    nb = len(sb.op_name)
    codes, uniq = _text_codes(np.concatenate([sb.op_name, sc.op_name]))
    kb = sb.op_group * len(uniq) + codes[:nb]
    kc = sc.op_group * len(uniq) + codes[nb:]
    match = np.full(nb, -1, np.int64)
    if len(kc):
        order = np.argsort(kc, kind="stable")  # the keys of a side are distinct
        at = np.minimum(np.searchsorted(kc[order], kb), len(kc) - 1)
        hit = kc[order][at] == kb
        match[hit] = order[at][hit]
    taken = np.zeros(len(kc), bool)
    taken[match[match >= 0]] = True
    return match, np.flatnonzero(~taken)


def _stat_side(s: _SideStats, key: np.ndarray, group: np.ndarray, total: np.ndarray) -> dict[str, Any]:
    """One side's ModuleCompareStatistic cells: per row (``group``: its module name; ``total``: a [ TOTAL ] row;
    ``key``: the row's (group, op name) key of this side, -1 for none), kernel details, self ms, number, total ms
    and call stack."""
    has = key >= 0
    text, op_ns, count = object_full(len(key), ""), np.zeros(len(key), np.int64), np.zeros(len(key), np.int64)
    text[has], op_ns[has], count[has] = s.op_text[key[has]], s.op_ns[key[has]], s.op_count[key[has]]
    text[total] = None
    return {"text": text, "self": np.where(total, s.self_ns[group], op_ns) / 1e6,
            "number": np.where(total, s.number[group], count), "total": s.total_ns[group] / 1e6,
            "stack": _where(total, s.stack[group], None)}


def statistic_frame(pairs: list, base: ModuleTrees | None, comp: ModuleTrees | None,
                    heads: dict[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    """ModuleCompareStatistic (§3.7): per module path, a [ TOTAL ] row then its op-name rows, the base side's op
    names first (each with the comparison side's of that name), then the comparison side's others. The cells are
    taken column by column from the sides' aggregates, where a list per row made timesformer's 835 rows in 4.9 ms,
    now 2.7. ``heads``: ``_heads``' memo, shared with ``detail_frame``."""
    gb: dict[str, list[Module]] = {}
    gc: dict[str, list[Module]] = {}
    for x, y in pairs:
        if x is not None:
            gb.setdefault(x.module_name, []).append(x)
        if y is not None:
            gc.setdefault(y.module_name, []).append(y)
    names = list(gb) + [n for n in gc if n not in gb]
    sb = _side_stats(base, [gb.get(n, []) for n in names])
    sc = _side_stats(comp, [gc.get(n, []) for n in names])
    ng = len(names)
    match, comp_only = _match_keys(sb, sc)
    # rows: each group's [ TOTAL ] (part 0), its base keys (1), its comparison-only keys (2), each part in order
    group = np.concatenate([np.arange(ng), sb.op_group, sc.op_group[comp_only]])
    part = np.repeat(np.arange(3), [ng, len(match), len(comp_only)])
    row = np.lexsort((part, group))  # stable
    none = np.full(ng, -1, np.int64)
    key_b = np.concatenate([none, np.arange(len(match)), np.full(len(comp_only), -1, np.int64)])[row]
    key_c = np.concatenate([none, match, comp_only])[row]
    group, total = group[row], part[row] == 0
    b, c = _stat_side(sb, key_b, group, total), _stat_side(sc, key_c, group, total)
    op = np.where(key_b >= 0, sb.op_name[np.maximum(key_b, 0)] if len(sb.op_name) else None,
                  sc.op_name[np.maximum(key_c, 0)] if len(sc.op_name) else None).astype(object)
    op[total] = "[ TOTAL ]"
    cls, shown = _heads(names, {} if heads is None else heads)
    head = [cls[group], np.array([name.count("/") for name in names], np.int64)[group], shown[group]]
    first_b, first_c = np.where(total, b["total"], b["self"]), np.where(total, c["total"], c["self"])
    columns = [np.arange(1, len(total) + 1), *head, op]
    for s in (b, c):
        columns += [s["text"], s["self"], s["number"], _where(total, s["total"], None)]
    columns += [_where(total, exact_diffs(first_b, first_c, 10**6), None), exact_diffs(b["self"], c["self"], 10**6),
                diff_ratios(first_b, first_c)[1], b["stack"], c["stack"]]
    return frame_from_columns(columns, len(STAT_COLUMNS), len(total))


def module_pairs(ctx: RunContext) -> tuple[list, ModuleTrees | None, ModuleTrees | None]:
    """Ordered module pairs of the run (forward trees, then backward trees) and both sides' trees (cached: the
    sheets, the hint's sheet name and the map's idle entries ask for them)."""
    def compute() -> tuple[list, ModuleTrees | None, ModuleTrees | None]:
        base, comp = module_trees(ctx, "base"), module_trees(ctx, "comparison")
        if base is None or comp is None:
            return [], base, comp
        opts = ctx.options
        match = not opts.disable_details
        pairs = match_modules(base.forward, comp.forward, opts.op_name_map, match)
        pairs += match_modules(base.backward, comp.backward, opts.op_name_map, match)
        return order_pairs(pairs), base, comp

    return ctx.cached(_CACHE_PAIRS, compute)


def module_map_verdicts(ctx: RunContext) -> dict[str, tuple[list[int], bool]]:
    """``map_entry_verdicts`` of the run's module matching (cached), shared by the modules' idle-entry line and the
    operators' (``optree.idle_map_entries`` leaves out a key that pairs modules); empty where the run matches no
    modules: without the operator comparison, under --disable_module or --disable_details, one side without ops
    or module events, or trees of no module (the operator sheets are written then; a matching that pairs none, as
    BERT's against timesformer's, gets verdicts: an entry can pair their top-level modules)."""
    def compute() -> dict[str, tuple[list[int], bool]]:
        opts = ctx.options
        if not opts.op_name_map or opts.disable_details or opts.disable_module or not opts.enable_operator_compare:
            return {}
        from .optree import one_sided

        if one_sided(ctx):
            return {}
        pairs, base, comp = module_pairs(ctx)
        if not pairs or base is None or comp is None:
            return {}
        return map_entry_verdicts(opts.op_name_map, base, comp, pairs)

    return ctx.cached(_CACHE_VERDICTS, compute)


def _pairs_ops(ctx: RunContext, key: str) -> bool:
    """Whether the ``--op_name_map`` entry of ``key``, some op's whole name, pairs an operator with one of another
    name: its module paths pairing as without it does not make it idle then."""
    from .optree import entry_pairs_ops, operator_pairs

    return entry_pairs_ops(operator_pairs(ctx), key)


def _say_lost_path_keys(keys: list[str], named: set[str], base: ModuleTrees, comp: ModuleTrees) -> None:
    """Warn of the ``--op_name_map`` keys holding "/" that no module path of either side holds and no op is named:
    they rename nothing. The unused-key warning, made before the trees are, leaves such a key out (it could span
    two levels of a path), so a misspelt path (``'/nn.Module: BertEmbedings_0'``) renamed nothing without a word."""
    paths = {m.module_name for t in (base, comp) for tree in (t.forward, t.backward) for m in _descendants(tree)}
    lost = [k for k in keys if k not in named and not any(k in p for p in paths)]
    if lost:
        one = len(lost) == 1
        log.warning("--op_name_map: %s %s no operator of either side and %s part of no module path, so %s nothing "
                    "(names are case-sensitive: copy them from the ModuleCompare sheet).",
                    ", ".join(term_safe(repr(k)) for k in lost), "names" if one else "name", "is" if one else "are",
                    "it renames" if one else "they rename")


def _has_stacks(side: ModuleTrees) -> bool:
    """Whether any top-layer op of a side carries a call stack. The original tests the sheet's last
    column, which its TOTAL rows always fill, so its warning never shows; cells of ops whose time did
    not grow stay blank, so the sheet cannot tell a trace recorded without with_stack either."""
    if side.frames is not None:
        return True
    stacks = side.op_stacks[side.top_node].tolist()
    return not stacks or _any_stack(stacks)  # no op at all: already warned about


def build(ctx: RunContext) -> list[Sheet] | None:
    """Module sheets, or None when module matching produced no pair (operator sheets instead)."""
    from .operators import record_match_rate

    pairs, base, comp = module_pairs(ctx)
    if not pairs:
        return None
    nb = sum(1 for p in pairs if p[0] is not None)
    nc = sum(1 for p in pairs if p[1] is not None)
    matched = sum(1 for p in pairs if p[0] is not None and p[1] is not None)
    record_match_rate(ctx, "modules", matched, nb, nc)
    verdicts = module_map_verdicts(ctx)
    spanning = [k for k in ctx.options.op_name_map if "/" in k] if not ctx.options.disable_details else []
    if verdicts or spanning:
        named = {str(n) for side in ("base", "comparison") for n in op_tree(ctx, side).name_codes()[1].tolist()}
        idle = idle_module_entries(ctx.options.op_name_map,
                                   {k: got for k, got in verdicts.items() if k not in named or not _pairs_ops(ctx, k)})
        if idle:
            log.warning("--op_name_map: %s.", "; ".join(idle))
        _say_lost_path_keys(spanning, named, base, comp)  # type: ignore[arg-type]
    heads: dict[str, tuple[str, str]] = {}  # the module paths' class and name cells, for both sheets
    sheets = [Sheet("ModuleCompareStatistic", STAT_COLUMNS, statistic_frame(pairs, base, comp, heads), *STAT_SPANS)]
    if not ctx.options.disable_details:
        detail = detail_frame(pairs, base, comp, heads)
        # a DB side too: one recorded without with_stack has no PYTORCH_CALLCHAINS (or no op naming a chain)
        if len(detail) and any(not _has_stacks(t) for t in (base, comp)):
            log.warning("If you want to see the operator's call stack, you must enable with_stack switch.")
        sheets.append(Sheet("ModuleCompare", DETAIL_COLUMNS, detail, *DETAIL_SPANS))
    return sheets
