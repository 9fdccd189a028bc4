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

import logging
import re
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..model import Profile
from .align import align, no_matching
from .optree import OpTree, _nest, flow_cats, op_tree, side_profile
from .table import STYLE_FLOAT, STYLE_INT, STYLE_RATIO, Column, Sheet, diff_ratio

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

MODULE_PREFIX = "nn.module:"
BACKWARD = "[ BACKWARD ]"
_TRAILING_ID = re.compile(r"_\d+$")
_CACHE = "modules.trees.{side}"

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
    """One module node. ``ops`` are its top-layer op node ids (in the side's OpTree);
    ``op_kernels[i]`` the kernel-pool rows handed to ``ops[i]``."""

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
    self_points: list[int] = field(default_factory=list)
    ops: list[int] = field(default_factory=list)
    op_kernels: list[np.ndarray] = field(default_factory=list)

    @property
    def module_class(self) -> str:
        return _TRAILING_ID.sub("", self.name.split("/")[-1])


@dataclass(eq=False)
class ModuleTrees:
    """One side's forward and backward module trees plus what their sheets need."""

    profile: Profile
    tree: OpTree
    forward: Module
    backward: Module
    pool: pd.DataFrame
    kernel_text: np.ndarray
    op_names: list = field(default_factory=list)
    op_stacks: list = field(default_factory=list)
    k_names: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    k_durs: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))


def _root() -> Module:
    return Module(name="", ts=0, end=0, parent=None, level=1, module_name="")


def _is_module(names: pd.Series) -> np.ndarray:
    n = len(MODULE_PREFIX)
    heads = [s[:n] for s in names.tolist()]
    hit = {h: h.lower() == MODULE_PREFIX for h in set(heads)}
    return np.fromiter((hit[h] for h in heads), dtype=bool, count=len(heads))


def has_modules(profile: Profile) -> bool:
    pf = profile.python_functions
    return bool(len(pf)) and bool(_is_module(pf["name"]).any())


# ------------------------------------------------------------------------------------ kernel points


def _kernel_points(profile: Profile, pool: pd.DataFrame, cats: frozenset) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The original's kernel_dict as arrays: sorted unique flow-start ts, CSR pointers, pool rows."""
    fl = profile.flows
    if len(fl) == 0 or len(pool) == 0:
        return np.empty(0, np.int64), np.zeros(1, np.int64), np.empty(0, np.int64)
    fl = fl[fl["cat"].str.lower().isin(cats).to_numpy(dtype=bool)]
    keyed = pd.DataFrame({"f_pid": pool["pid"].to_numpy(), "f_tid": pool["tid"].to_numpy(),
                          "f_ts": pool["ts"].to_numpy(), "k": np.arange(len(pool), dtype=np.int64)})
    keyed = keyed.drop_duplicates(["f_pid", "f_tid", "f_ts"], keep="last")
    fk = fl[["s_ts", "f_pid", "f_tid", "f_ts"]].reset_index(drop=True)
    fk["order"] = np.arange(len(fk), dtype=np.int64)
    fk = fk.merge(keyed, on=["f_pid", "f_tid", "f_ts"], how="inner").sort_values(["s_ts", "order"], kind="stable")
    s = fk["s_ts"].to_numpy(np.int64)
    pts, start = np.unique(s, return_index=True)
    ptr = np.concatenate([start, [len(s)]]).astype(np.int64)
    return pts, ptr, fk["k"].to_numpy(np.int64)


# ------------------------------------------------------------------------------------ tree walks


def _walk(names: list[str], ts: list[int], ends: list[int], point_ts: np.ndarray, point_ns: np.ndarray,
          prefix_root: Module) -> list[Module]:
    """Nest module events and kernel points by the cursor rule (§3.2 step 5); returns the modules."""
    nm = len(names)
    all_ts = np.concatenate([np.asarray(ts, np.int64), point_ts])
    order = np.argsort(all_ts, kind="stable").tolist()  # modules before points at equal ts
    root = prefix_root
    cur = root
    made: list[Module] = []
    pns = point_ns.tolist()
    for i in order:
        t = int(all_ts[i])
        while cur is not root and t > cur.end:
            cur = cur.parent  # type: ignore[assignment]
        if i < nm:
            node = Module(name=names[i], ts=t, end=ends[i], parent=cur, level=cur.level + 1,
                          module_name=f"{cur.module_name}/{names[i]}")
            cur.children.append(node)
            made.append(node)
            cur = node
        elif cur is not root:
            p = i - nm
            cur.self_points.append(p)
            cur.self_ns += pns[p]
    for node in reversed(made):  # children are created after their parents
        node.total_ns += node.self_ns
        if node.parent is not root and node.parent is not None:
            node.parent.total_ns += node.total_ns
    return made


def _deepest(nodes_start: np.ndarray, nodes_end: np.ndarray, nodes_parent: np.ndarray,
             queries: np.ndarray) -> np.ndarray:
    """Deepest node strictly containing each query ts (§3.3): at each level take the last child
    starting at or before ts and descend only if start < ts < end. -1 when none."""
    q = np.asarray(queries, np.int64)
    out = np.full(len(q), -1, np.int64)
    n = len(nodes_start)
    if n == 0 or len(q) == 0:
        return out
    t0 = int(min(nodes_start.min(), q.min()))
    span = int(max(nodes_start.max(), q.max())) - t0 + 2
    order = np.lexsort((np.arange(n), nodes_start, nodes_parent))
    keys = (nodes_parent[order] + 1) * span + (nodes_start[order] - t0)
    active = np.arange(len(q))
    cur = np.full(len(q), -1, np.int64)
    while len(active):
        qk = (cur[active] + 1) * span + (q[active] - t0)
        pos = np.searchsorted(keys, qk, side="right") - 1
        ok = pos >= 0
        child = np.where(ok, order[np.maximum(pos, 0)], -1)
        ok &= nodes_parent[np.maximum(child, 0)] == cur[active]
        c = np.maximum(child, 0)
        ok &= (nodes_start[c] < q[active]) & (q[active] < nodes_end[c])
        cur[active[ok]] = child[ok]
        out[active[ok]] = child[ok]
        active = active[ok]
    return out


def _arrays(mods: list[Module]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    idx = {id(m): i for i, m in enumerate(mods)}
    start = np.array([m.ts for m in mods], np.int64)
    end = np.array([m.end for m in mods], np.int64)
    parent = np.array([idx.get(id(m.parent), -1) for m in mods], np.int64)
    return start, end, parent


def _chain(names: list[str], parent: np.ndarray, i: int) -> str:
    """``;\\n``-joined name chain from the top-level ancestor down to node ``i``."""
    out = []
    while i >= 0:
        out.append(names[i])
        i = int(parent[i])
    return ";\n".join(reversed(out))


def build_side(profile: Profile, tree: OpTree, gpu_flow_cat: str = "") -> ModuleTrees | None:
    """Forward and backward module trees of one side (§3.2-3.4); None without nn.Module events."""
    pf = profile.python_functions
    if not len(pf):
        return None
    is_mod = _is_module(pf["name"])
    if not is_mod.any():
        return None
    pool = tree.kpool  # the same kernels the op tree links (kernel_pool)
    cats = flow_cats(profile, gpu_flow_cat)
    pts, pptr, pk = _kernel_points(profile, pool, cats)
    kdur = pool["dur"].to_numpy(np.int64)
    # every point holds at least one kernel, so reduceat sums each group
    point_ns = np.add.reduceat(kdur[pk], pptr[:-1]) if len(pk) else np.zeros(len(pts), np.int64)

    mods = pf[is_mod]
    opnames = tree.ops["name"]
    lower = opnames.str.lower()
    optim = lower.str.startswith("optimizer").to_numpy(dtype=bool)
    m_names = mods["name"].tolist() + opnames[optim].tolist()
    m_ts = mods["ts"].tolist() + tree.ts[optim].tolist()
    m_end = (mods["ts"] + mods["dur"]).tolist() + tree.end[optim].tolist()
    fwd = _root()
    fmods = _walk(m_names, m_ts, m_end, pts, point_ns, fwd)

    # call-function tree (names only) for call stacks
    calls = pf[~is_mod]
    cstart = calls["ts"].to_numpy(np.int64)
    corder = np.argsort(cstart, kind="stable")
    cstart = cstart[corder]
    cend = cstart + calls["dur"].to_numpy(np.int64)[corder]
    cnames = calls["name"].to_numpy()[corder].tolist()
    cparent, _ = _nest(cstart, cend)

    # backward pseudo-modules from fwdbwd flows
    fstart, fend, fparent = _arrays(fmods)
    bwd = _root()
    bmods: list[Module] = []
    fl = profile.flows
    fb = fl[fl["cat"].str.lower().to_numpy() == "fwdbwd"] if len(fl) else fl
    if len(fb) and len(fmods):
        bwd_pid = int(fb["f_pid"].iloc[0])
        sel = np.flatnonzero(tree.ops["pid"].to_numpy(np.int64) == bwd_pid)
        op_at = dict(zip(tree.ts[sel].tolist(), sel.tolist(), strict=False))  # later ops win
        owner = _deepest(fstart, fend, fparent, fb["s_ts"].to_numpy(np.int64))
        names, ts_, ends = [], [], []
        for f_ts, m in zip(fb["f_ts"].tolist(), owner.tolist(), strict=False):
            op = op_at.get(f_ts)
            if op is None or m < 0:
                continue
            names.append(BACKWARD + fmods[m].module_name)
            ts_.append(int(tree.ts[op]))
            ends.append(int(tree.end[op]))
        if names:
            bmods = _walk(names, ts_, ends, pts, point_ns, bwd)

    # call stacks: default chain of module names, replaced by the enclosing call function's chain
    for mlist in (fmods, bmods):
        if not mlist:
            continue
        _, _, par = _arrays(mlist)
        mnames = [m.name for m in mlist]
        found = _deepest(cstart, cend, cparent, np.array([m.ts for m in mlist], np.int64))
        for k, (m, c) in enumerate(zip(mlist, found.tolist(), strict=True)):
            m.call_stack = _chain(cnames, cparent, c) if c >= 0 else _chain(mnames, par, k)

    # assign ops to modules (§3.2 step 8), then hand out self kernels (step 9)
    keep = ~optim & ~opnames.str.contains("ProfilerStep#", regex=False).to_numpy(dtype=bool)
    ops_idx = np.flatnonzero(keep)
    owner_f = _deepest(fstart, fend, fparent, tree.ts[ops_idx])
    owner = [fmods[i] if i >= 0 else None for i in owner_f.tolist()]
    if bmods:
        bstart, bend, bparent = _arrays(bmods)
        miss = np.flatnonzero(owner_f < 0)
        ob = _deepest(bstart, bend, bparent, tree.ts[ops_idx[miss]])
        for j, i in zip(miss.tolist(), ob.tolist(), strict=False):
            if i >= 0:
                owner[j] = bmods[i]
    per_mod: dict[int, list[int]] = {}
    mod_of: dict[int, Module] = {}
    for op, m in zip(ops_idx.tolist(), owner, strict=False):
        if m is not None:
            per_mod.setdefault(id(m), []).append(op)
            mod_of[id(m)] = m
    for key, ops in per_mod.items():
        # in start order, an op is top-layer in its module's private tree (§2.2 cursor rule)
        # exactly when it starts after the end of every earlier op of that module
        arr = np.asarray(ops, np.int64)
        ends = tree.end[arr]
        prev = np.maximum.accumulate(np.concatenate([[np.iinfo(np.int64).min], ends[:-1]]))
        mod_of[key].ops = arr[tree.ts[arr] > prev].tolist()
    for m in fmods + bmods:
        m.op_kernels = [np.empty(0, np.int64) for _ in m.ops]
        if not m.ops or not m.self_points:
            continue
        o_ts = tree.ts[m.ops].tolist()
        o_end = tree.end[m.ops].tolist()
        j = 0
        buckets: list[list[int]] = [[] for _ in m.ops]
        for p in sorted(m.self_points, key=lambda p: pts[p]):
            t = int(pts[p])
            while j < len(o_end) and o_end[j] < t:
                j += 1
            if j < len(o_end) and t >= o_ts[j]:
                buckets[j].extend(pk[pptr[p]:pptr[p + 1]].tolist())
        m.op_kernels = [np.asarray(b, np.int64) for b in buckets]
    text = tree.kernel_text() if len(pool) else np.empty(0, dtype=object)
    return ModuleTrees(profile, tree, fwd, bwd, pool, text, tree.ops["name"].tolist(),
                       tree.ops["call_stack"].tolist(), pool["name"].to_numpy(), pool["dur"].to_numpy(np.int64))


def module_trees(ctx: RunContext, side: str) -> ModuleTrees | None:
    """Cached module trees of one side (None when it has no nn.Module python functions)."""
    opts = ctx.options

    def compute() -> ModuleTrees | None:
        prof = side_profile(ctx, side)
        if not len(prof.python_functions):
            return None
        return build_side(prof, op_tree(ctx, side), opts.gpu_flow_cat)

    return ctx.cached(_CACHE.format(side=side), compute)


# ------------------------------------------------------------------------------------ matching


def _module_key(name: str, op_name_map: dict[str, str]) -> str:
    """Matching key of a module path; ``--op_name_map`` renames substrings (deliberate difference 6)."""
    for k, v in op_name_map.items():
        name = name.replace(k, v)
    return name


def match_modules(a: Module, b: Module, op_name_map: dict[str, str],
                  match: bool) -> list[tuple[Module | None, Module | None]]:
    """Breadth-first matching of two module trees by path (§3.5); roots excluded."""
    out: list[tuple[Module | None, Module | None]] = []
    queue: deque[tuple[Module | None, Module | None]] = deque([(a, b)])
    while queue:
        x, y = queue.popleft()
        ca = x.children if x is not None else []
        cb = y.children if y is not None else []
        if x is not None and y is not None and match:
            ia, ib = align([_module_key(m.module_name, op_name_map) for m in ca],
                           [_module_key(m.module_name, op_name_map) for m in cb])
        else:
            ia, ib = no_matching(len(ca), len(cb))
        for i, j in zip(ia.tolist(), ib.tolist(), strict=False):
            pair = (ca[i] if i >= 0 else None, cb[j] if j >= 0 else None)
            out.append(pair)
            queue.append(pair)
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
    return module_name.replace("nn.Module:", "")


def _op_info(side: ModuleTrees, m: Module, i: int) -> tuple[str, str, int, str, list[str], list[int]]:
    """(op name, kernel details, device ns, call stack, kernel names, kernel ns) of m.ops[i]."""
    op = m.ops[i]
    ks = m.op_kernels[i]
    if len(ks) == 0:
        return side.op_names[op], "", 0, side.op_stacks[op], [], []
    durs = side.k_durs[ks].tolist()
    return (side.op_names[op], "".join(side.kernel_text[ks].tolist()), int(sum(durs)), side.op_stacks[op],
            side.k_names[ks].tolist(), durs)


def _stack(text: str) -> str | None:
    """An op's call stack cell: blank when the trace recorded none (the model's "N/A"), as the original."""
    return None if text == "N/A" else text


def detail_rows(pairs: list, base: ModuleTrees | None, comp: ModuleTrees | None) -> list[list]:
    """ModuleCompare rows (§3.8): a TOTAL row per module pair, then its op pairs."""
    rows: list[list] = []
    for x, y in pairs:
        ref = x if x is not None else y
        head = [ref.module_class, ref.level, display_name(ref.module_name)]
        bs, bt = (x.self_ns / 1000, x.total_ns / 1000) if x is not None else (0, 0)
        cs, ct = (y.self_ns / 1000, y.total_ns / 1000) if y is not None else (0, 0)
        dt, rt = diff_ratio(bt, ct)
        ds, _ = diff_ratio(bs, cs)
        rows.append([None, *head, "TOTAL", None, bs, bt, "TOTAL", None, cs, ct, dt, ds, rt,
                     x.call_stack if x is not None else "", y.call_stack if y is not None else ""])
        xa = [_op_info(base, x, i) for i in range(len(x.ops))] if x is not None and base else []
        ya = [_op_info(comp, y, i) for i in range(len(y.ops))] if y is not None and comp else []
        ia, ib = align([o[0] for o in xa], [o[0] for o in ya])
        for i, j in zip(ia.tolist(), ib.tolist(), strict=False):
            bo = xa[i] if i >= 0 else ("", "", 0, "", [], [])
            co = ya[j] if j >= 0 else ("", "", 0, "", [], [])
            b_us, c_us = bo[2] / 1000, co[2] / 1000
            d, r = diff_ratio(b_us, c_us)
            rows.append([None, *head, bo[0], bo[1], b_us, None, co[0], co[1], c_us, None, None, d, r,
                         _stack(bo[3]) if d > 0 else None, _stack(co[3]) if d > 0 else None])
    for i, r in enumerate(rows):
        r[0] = i + 1
    return rows


def _kernel_summary(names: list[str], durs: list[int]) -> str:
    agg: dict[str, list[int]] = {}
    for n, d in zip(names, durs, strict=False):
        agg.setdefault(n, []).append(d)
    return "".join(f"{n}, [number: {len(v)}], [duration_ms: {sum(v) / 1e6:.3f}]\n" for n, v in agg.items())


def _side_group(side: ModuleTrees | None, mods: list[Module]) -> dict:
    """Totals and per-op-name aggregates of one side's instances of one module name."""
    ops: dict[str, list] = {}
    for m in mods:
        for i in range(len(m.ops)):
            name, _t, ns, _cs, kn, kd = _op_info(side, m, i)  # type: ignore[arg-type]
            rec = ops.setdefault(name, [0, 0, [], []])
            rec[0] += ns
            rec[1] += 1
            rec[2].extend(kn)
            rec[3].extend(kd)
    return {
        "number": len(mods), "self": sum(m.self_ns for m in mods) / 1e6, "total": sum(m.total_ns for m in mods) / 1e6,
        "stack": mods[0].call_stack if mods else "", "ops": ops,
    }


def statistic_rows(pairs: list, base: ModuleTrees | None, comp: ModuleTrees | None) -> list[list]:
    """ModuleCompareStatistic rows (§3.7): per module path, a [ TOTAL ] row then op-name rows."""
    gb: dict[str, list[Module]] = {}
    gc: dict[str, list[Module]] = {}
    for x, y in pairs:
        if x is not None:
            gb.setdefault(x.module_name, []).append(x)
        if y is not None:
            gc.setdefault(y.module_name, []).append(y)
    names = list(gb) + [n for n in gc if n not in gb]
    rows: list[list] = []
    for name in names:
        sb = _side_group(base, gb.get(name, []))
        sc = _side_group(comp, gc.get(name, []))
        cls = _TRAILING_ID.sub("", name.split("/")[-1])
        head = [cls, name.count("/"), display_name(name)]
        dt, rt = diff_ratio(sb["total"], sc["total"])
        ds, _ = diff_ratio(sb["self"], sc["self"])
        rows.append([None, *head, "[ TOTAL ]", None, sb["self"], sb["number"], sb["total"], None, sc["self"],
                     sc["number"], sc["total"], dt, ds, rt, sb["stack"], sc["stack"]])
        op_names = list(sb["ops"]) + [n for n in sc["ops"] if n not in sb["ops"]]
        for op in op_names:
            bo = sb["ops"].get(op, [0, 0, [], []])
            co = sc["ops"].get(op, [0, 0, [], []])
            b_ms, c_ms = bo[0] / 1e6, co[0] / 1e6
            d, r = diff_ratio(b_ms, c_ms)
            rows.append([None, *head, op, _kernel_summary(bo[2], bo[3]), b_ms, bo[1], None,
                         _kernel_summary(co[2], co[3]), c_ms, co[1], None, None, d, r, None, None])
    for i, r in enumerate(rows):
        r[0] = i + 1
    return rows


def module_pairs(ctx: RunContext) -> tuple[list, ModuleTrees | None, ModuleTrees | None]:
    """Ordered module pairs of the run (forward trees, then backward trees) and both sides' trees."""
    base, comp = module_trees(ctx, "base"), module_trees(ctx, "comparison")
    if base is None or comp is None:
        return [], base, comp
    opts = ctx.options
    match = not opts.disable_details
    pairs = match_modules(base.forward, comp.forward, opts.op_name_map, match)
    pairs += match_modules(base.backward, comp.backward, opts.op_name_map, match)
    return order_pairs(pairs), base, comp


def build(ctx: RunContext) -> list[Sheet] | None:
    """Module sheets, or None when module matching produced no pair (operator sheets instead)."""
    from .operators import _frame, record_match_rate

    pairs, base, comp = module_pairs(ctx)
    if not pairs:
        return None
    nb = sum(1 for p in pairs if p[0] is not None)
    nc = sum(1 for p in pairs if p[1] is not None)
    matched = sum(1 for p in pairs if p[0] is not None and p[1] is not None)
    note = record_match_rate(ctx, "modules", matched, nb, nc)
    sheets = [Sheet("ModuleCompareStatistic", STAT_COLUMNS, _frame(statistic_rows(pairs, base, comp),
                                                                    len(STAT_COLUMNS)), *STAT_SPANS, notes=[note])]
    if not ctx.options.disable_details:
        rows = detail_rows(pairs, base, comp)
        if rows and not any(r[-1] or r[-2] for r in rows if r[4] != "TOTAL"):
            log.warning("If you want to see the operator's call stack, you must enable with_stack switch.")
        sheets.append(Sheet("ModuleCompare", DETAIL_COLUMNS, _frame(rows, len(DETAIL_COLUMNS)), *DETAIL_SPANS))
    return sheets
