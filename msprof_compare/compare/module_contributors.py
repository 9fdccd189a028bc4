"""The module contributors of the ``Summary``: where an operator-level contributor runs modules whose rows hold its
time (DDP's forward, a step annotation), the ModuleCompareStatistic operator rows inside those contributors that
explain 80% of those rows' change (``_module_contributors``; else the module rows of the listed operators
themselves, ``_module_rows_of``), and the words on the contributors that no module row names
(``outside_modules_line``; ``outside_modules_note`` for the console, the Summary sheet, the JSON and the gate alike).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..model import object_array
from ..textsafe import short_list
from .contributors import module_operator_columns, top_contributors
from .table import Sheet, column_at, plain_frame, sheet_numbers, text_cells

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext


def _outside_modules(contrib: pd.DataFrame, sheets: list[Sheet]) -> list[str]:
    """Operator-level contributors that no row of ModuleCompareStatistic names: the module sheets hold only the
    operators inside modules (an all-reduce under AccumulateGrad is outside every one), so such a contributor is
    on no sheet of the workbook, and a reader looking for it needs to be told why."""
    stat = next((s for s in sheets if s.name == "ModuleCompareStatistic"), None)
    if stat is None or not len(contrib) or str(col_of(contrib, "Level")[0]) != "operator":
        return []
    # "Operator Name", and "Module Class", which names the optimizer's pseudo-modules (Optimizer.step#SGD.step)
    listed = set(column_at(stat.data, 4).tolist()) | set(column_at(stat.data, 1).tolist())  # reference-2 §3.7
    return [n for n in col_of(contrib, "Name").tolist() if n not in listed]


def _own_module_rows(contrib: pd.DataFrame, sheets: list[Sheet]) -> dict[str, tuple[float, float]]:
    """Per operator-level contributor that ModuleCompareStatistic names as an operator, the (base, comparison)
    ms its own operator rows there hold (their Device Self Time, summed over the modules it is in)."""
    stat = next((s for s in sheets if s.name == "ModuleCompareStatistic"), None)
    if stat is None or not len(stat) or not len(contrib) or str(col_of(contrib, "Level")[0]) != "operator":
        return {}
    d = stat.data  # reference-2 §3.7: Operator Name col 4, the two sides' Device Self Time(ms) cols 6 and 10
    names = text_cells(column_at(d, 4))
    base, comp = sheet_numbers(column_at(d, 6)), sheet_numbers(column_at(d, 10))
    out: dict[str, tuple[float, float]] = {}
    rows_of = _rows_by_value(names)
    for name in col_of(contrib, "Name").tolist():
        rows = rows_of.get(name)
        if name != "[ TOTAL ]" and rows is not None:
            out[name] = (float(np.nansum(base[rows])), float(np.nansum(comp[rows])))
    return out


def _rows_by_value(values: np.ndarray) -> dict[Any, np.ndarray]:
    """Each value's row positions (ascending, so sums add in sheet order), by one grouping: a mask over every
    sheet row per contributor grew with contributors x rows. A missing value (NaN) names no row, as ``==`` held.
    By ``pd.factorize`` and a stable sort, pandas' grouping rules without a groupby: ``.indices`` of one cost
    ~0.4 ms a call on the 105-row ModuleCompareStatistic of NPU pair 1 (twice a run), this ~0.1 ms."""
    codes, uniq = pd.factorize(values)  # a missing value: code -1, sorted first and in no group
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniq) + 1)).tolist()
    return {u: order[lo:hi] for u, lo, hi in zip(uniq.tolist(), bounds[:-1], bounds[1:], strict=True)}


def _around_modules(own: dict[str, tuple[float, float]], held: dict[str, list[tuple[str, float, float]]]
                    ) -> dict[str, list[tuple[str, float, float]]]:
    """Contributors on the module sheets whose own rows there hold less of their change than the rows of the
    modules run inside them: an op run around modules from within a module (DDP's ``DistributedDataParallel.forward``,
    in ``DistributedDataParallel_0``, around ``AlexNet_0``) keeps in its own row only the kernels it launched outside
    those modules (0 ms), so a reader sent to that row by the contributor found it unchanged (AlexNet, MaxPool2d's
    three kernels 30 us longer each: ``DistributedDataParallel.forward`` +0.090 ms, its row 0 -> 0). Returns name ->
    each side's (side, ms the rows of the modules inside it hold, its ms as listed).

    ``held`` counts the op's own rows too (a top-layer op is in its own subtree), so the modules' part is ``held``
    less ``own``: SGLang's ``utils_apply_qk_norm_487`` holds 3.390 ms in its own rows and 17.487 ms in the RMSNorm
    rows inside it, not 20.877. By the change, not the time: where its own rows hold the change, its row reads it."""
    out: dict[str, list[tuple[str, float, float]]] = {}
    for name, (own_b, own_c) in own.items():
        mine = {"base": own_b, "comparison": own_c}
        figures = [(side, round(h - mine[side], 6), t) for side, h, t in held.get(name, [])]
        inner = {side: h for side, h, _t in figures}
        # the change the module rows inside it hold against its own rows' (to the ns the sheets carry)
        moved = inner.get("comparison", 0.0) - inner.get("base", 0.0)
        if round(abs(moved) - abs(own_c - own_b), 6) > 0:
            out[name] = [f for f in figures if f[1] > 0]
    return out


def _held_inside(ctx: RunContext, contrib: pd.DataFrame, names: list[str]) -> dict[str, list[tuple[str, float, float]]]:
    """Per contributor of ``names`` (those outside every module, and those with rows of their own there, for
    ``_around_modules``) with modules run inside it, each side's (side, ms of its device time that the module rows
    hold, its ms as listed), on the sides that list it with some time: a step annotation around the model's forward
    (vLLM's ``execute_8192_context_9(...)``) is outside every module, yet the modules run inside it (the model,
    155.653 ms, and its logits processor) hold 156.000 of its 156.086 ms, so "outside every module" alone read as if
    that time were missing from the module sheets. The
    held time is the device time of the module top-layer ops (``ModuleTrees.top_ns``, the module rows' time)
    inside the subtrees of the ops of that name."""
    out: dict[str, list[tuple[str, float, float]]] = {}
    for side, trees, name, nodes, ms in _listed_nodes(ctx, contrib, names):
        held = int(trees.top_ns[_subtrees(trees.tree, nodes)[trees.top_node]].sum())
        if held:
            out.setdefault(name, []).append((side, held / 1e6, ms))
    return out


def _listed_nodes(ctx: RunContext, contrib: pd.DataFrame, names: list[str]) -> Iterator[tuple[str, Any, str,
                                                                                             np.ndarray, float]]:
    """Per side with module trees and per contributor of ``names`` that side lists with some time: (side, its
    ``ModuleTrees``, the name, the name's op nodes in the tree, its ms as listed). A side where it is listed with no
    time has it, if at all, only nested in another operator (xDiT's SD 3.5 trace: execute_diffusion_1_256x256 inside
    model_inference, the same span), whose row holds that time: its modules' rows there are no part of its time
    ("711.696 of its 0.000 ms"), so it is skipped there."""
    if not names:
        return
    from .modules import module_trees

    listed = {n: (b, c) for n, b, c in zip(col_of(contrib, "Name").tolist(), col_of(contrib, "Base(ms)").tolist(),
                                           col_of(contrib, "Comparison(ms)").tolist(), strict=True)}
    for i, side in enumerate(("base", "comparison")):
        trees = module_trees(ctx, side)
        if trees is None or not len(trees.top_node):
            continue
        # the tree's op names factorized once (``name_codes``): comparing the object array with each name cost
        # ~15 ms a side on a 200 MB DB pair
        codes, uniq = trees.tree.name_codes()
        code_of = {n: k for k, n in enumerate(uniq.tolist())}
        for name in names:
            nodes = np.flatnonzero(codes == code_of.get(name, -1))
            if len(nodes) and listed[name][i]:
                yield side, trees, name, nodes, float(listed[name][i])


def _nested_in_module_ops(ctx: RunContext, contrib: pd.DataFrame, names: list[str]) -> dict[str, str]:
    """Per contributor of ``names`` (none named on the module sheets) that runs, on every side that lists it with
    time, only inside operators the module rows list, the first such operator's name: --max_kernel_num splits the
    operator-level rows into child ops (the level-1 DB's Conv2DBackpropInput, inside aten::convolution_backward of
    the backward Conv2d modules) while the module sheets keep the ops that launch them, so "outside every module"
    was untrue of them."""
    found: dict[str, list[str]] = {}
    for _side, trees, name, nodes, _ms in _listed_nodes(ctx, contrib, names):
        tree = trees.tree
        tops = np.sort(np.asarray(trees.top_node, dtype=np.int64))
        at = np.searchsorted(tops, nodes, "right") - 1  # the nearest module top-layer op at or before each
        top = tops[np.maximum(at, 0)]
        inside = (at >= 0) & (nodes < top + tree.size[top])
        found.setdefault(name, []).append(str(tree.names[top[0]]) if inside.all() else "")
    return {n: parents[0] for n, parents in found.items() if all(parents)}


def _subtrees(tree: Any, nodes: np.ndarray) -> np.ndarray:
    """Per op-tree node, whether it is in the subtree of one of ``nodes`` (one nested in another counts once)."""
    edge = np.zeros(tree.n + 1, np.int64)
    np.add.at(edge, nodes, 1)
    np.add.at(edge, nodes + tree.size[nodes], -1)
    return np.cumsum(edge)[:-1] > 0


def _rows_run_by(ctx: RunContext, runners: list[str]) -> set[str]:
    """The ModuleCompareStatistic operator rows ("module path > operator", as ``level_rows`` names them) of the
    top-layer ops inside the ops named ``runners``, on either side: the rows of the modules they run. Ranking
    every module row put rows no runner runs into their table (DB level2 -> level1: the optimizer's
    ``/Optimizer.step#SGD.step > aten::_foreach_add`` under ``DistributedDataParallel.forward`` and the backward
    ops that run modules), so the table answered no question the lead asks."""
    from .modules import display_name, module_trees

    out: set[str] = set()
    for side in ("base", "comparison"):
        trees = module_trees(ctx, side)
        if trees is None or not len(trees.top_node):
            continue
        # by the tree's op names factorized once (``name_codes``), not hashing every op's name again
        codes, op_names = trees.tree.name_codes()
        wanted = set(runners)
        nodes = np.flatnonzero(np.isin(codes, [i for i, n in enumerate(op_names.tolist()) if n in wanted]))
        if not len(nodes):
            continue
        tops = np.flatnonzero(_subtrees(trees.tree, nodes)[trees.top_node])
        module, paths = trees.top_modules()
        op = codes[trees.top_node[tops]]
        # one name per (module, operator) pair, not per op: a 100 MB pair has ~10^5 top-layer ops inside them
        pair = np.unique(module[tops] * len(op_names) + op)
        out.update(f"{display_name(paths[p // len(op_names)]).strip()} > {op_names[p % len(op_names)]}"
                   for p in pair.tolist())
    return out


def _module_rows(sheets: list[Sheet]) -> tuple[str, pd.DataFrame] | None:
    """``level_rows`` of ModuleCompareStatistic with two more columns, ``n_base`` / ``n_comparison``: each row's
    Number of each side (reference-2 §3.7, columns 7 and 11), which tells a row one side lacks (its 0 ms there is
    no run) from one that ran in 0 ms, for ``_merge_moves``."""
    module_sheets = [s for s in sheets if s.name == "ModuleCompareStatistic" and len(s)]
    found = module_operator_columns(module_sheets[0].data) if module_sheets else None
    if found is None:
        return None
    d, (rows, columns) = module_sheets[0].data, found
    return "module operator", plain_frame({
        **columns, "n_base": np.nan_to_num(sheet_numbers(column_at(d, 7).to_numpy()[rows])),
        "n_comparison": np.nan_to_num(sheet_numbers(column_at(d, 11).to_numpy()[rows]))})


def _merge_moves(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str, str, float, float]]]:
    """Module-operator rows with each operator that runs in another module on each side taken as one row: a row
    only the base side has and one only the comparison side has, of the same operator, paired in the sheet's order
    (the comparison row keeps its name and takes the base row's time). Apart, the two rows read -t and +t, twice
    the op's time in the summed |change| the contributors are cut by: the NPU level-1 text export with its first
    aten::relu_ run inside Conv2d_0 instead of ReLU_0 listed those two rows (86% of the change) and not the
    MaxPool2d row 5 µs longer. Returns the rows and, per move, (operator, base module path, comparison module
    path, base ms, comparison ms)."""
    if "n_base" not in rows or not len(rows):
        return rows, []
    nb, nc = rows["n_base"].to_numpy(), rows["n_comparison"].to_numpy()
    base_only, comp_only = np.flatnonzero((nb > 0) & (nc == 0)), np.flatnonzero((nc > 0) & (nb == 0))
    if not (len(base_only) and len(comp_only)):
        return rows, []
    # names split only where a side lacks the row: a large pair has ~10^4 module rows, few of them one-sided
    path, op = np.empty(len(rows), dtype=object), np.empty(len(rows), dtype=object)
    names = rows["Name"].to_numpy()
    for k in np.concatenate([base_only, comp_only]).tolist():
        path[k], _, op[k] = str(names[k]).rpartition(" > ")
    base_ms, comp_ms = rows["Base(ms)"].to_numpy(dtype=float).copy(), rows["Comparison(ms)"].to_numpy(dtype=float)
    # the k-th base-only row of an operator pairs with its k-th comparison-only row; pairs ordered by the
    # operator's first base-only row, then k (a join, not a scan per operator: ~10^4 one-sided rows where a
    # wrapper module exists on one side only)
    b = pd.DataFrame({"op": op[base_only], "i": base_only})
    c = pd.DataFrame({"op": op[comp_only], "j": comp_only})
    b["k"], c["k"] = b.groupby("op", sort=False).cumcount(), c.groupby("op", sort=False).cumcount()
    b["first"] = b.groupby("op", sort=False)["i"].transform("min")
    pairs = b.merge(c, on=["op", "k"]).sort_values(["first", "k"], kind="stable")
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    base_ms[j] = base_ms[i]
    moves = [(str(o), str(pb).strip(), str(pc).strip(), float(tb), float(tc))
             for o, pb, pc, tb, tc in zip(pairs["op"].tolist(), path[i].tolist(), path[j].tolist(),
                                          base_ms[i].tolist(), comp_ms[j].tolist(), strict=True)]
    drop = i.tolist()
    out = rows.assign(**{"Base(ms)": base_ms})
    return out.drop(index=out.index[drop]).reset_index(drop=True), moves


def _module_contributors(ctx: RunContext, contrib: pd.DataFrame, sheets: list[Sheet],
                         held: dict[str, list[tuple[str, float, float]]]) -> pd.DataFrame | None:
    """The module-operator rows of ModuleCompareStatistic that explain its change, when an operator-level
    contributor runs modules whose rows hold its time (None otherwise). Under DDP every forward regression has one
    operator-level contributor, ``DistributedDataParallel.forward`` (a top-layer op, reference-2 §2.3), and the
    console said no more: AlexNet with MaxPool2d's three forward kernels 30 us longer each read
    ``DistributedDataParallel.forward +0.090``, while the module rows say which three ops in which modules grew.
    Ranks the rows of the modules those contributors run (``_rows_run_by``). ``held``: those contributors
    (outside every module, ``_held_inside``; with a row of their own, ``_around_modules``) with their figures,
    kept in contributor order as ``attrs["runs_modules"]`` for the lead."""
    runners = [n for n in col_of(contrib, "Name").tolist() if n in held]
    if not runners:
        return None
    found = _module_rows(sheets)
    if found is None:
        return None
    rows, moves = _merge_moves(found[1][found[1]["Name"].isin(_rows_run_by(ctx, runners))].reset_index(drop=True))
    frame = top_contributors(rows, found[0])
    if not len(frame):
        return None
    frame.attrs["runs_modules"] = [(n, held[n]) for n in runners]
    frame.attrs["moved"] = moves
    return frame


#: A listed operator's module rows are ranked where one of them holds this share of their summed |change|.
LOCALIZED_SHARE = 0.5


def _module_rows_of(contrib: pd.DataFrame, sheets: list[Sheet]) -> pd.DataFrame | None:
    """Where no listed operator runs modules, the module-operator rows of ModuleCompareStatistic of the listed
    operators themselves (a top-layer op inside modules has a row per module it runs in) whose change one module
    row holds (``LOCALIZED_SHARE``), ranked by their change; None where there is none. A model without a wrapper
    around its forward (tracelens' H100 Qwen1.5 trace: one RMSNorm's aten::mean 20 us longer) read "aten::mean
    +0.020" alone, its 49 calls in 49 modules summed, and the console named no module. ``attrs["module_rows_of"]``:
    those operators, in contributor order, for the lead."""
    found = _module_rows(sheets)
    if found is None or found[0] != "module operator" or not len(contrib):
        return None
    rows, moves = _merge_moves(found[1])
    # the operator after the first " > " (a missing name, NaN under pandas 3's str dtype, stays missing)
    op = object_array([n.split(" > ", 1)[-1] if isinstance(n, str) else n
                       for n in text_cells(rows["Name"]).tolist()])
    diff = np.abs(np.round(col_of(rows, "Comparison(ms)", float) - col_of(rows, "Base(ms)", float), 6))
    diff = np.nan_to_num(diff)
    listed = []
    rows_of = _rows_by_value(op)
    none = np.zeros(0, np.int64)
    for name in col_of(contrib, "Name").tolist():
        mine = diff[rows_of.get(name, none)]
        # one module row holding most of the op's change: a change spread over every layer (one vendor against
        # another) names no module, and listing its rows said no more than the op's own row
        if len(mine) and mine.sum() and mine.max() >= LOCALIZED_SHARE * mine.sum():
            listed.append(name)
    if not listed:
        return None
    frame = top_contributors(rows[np.isin(op, listed)].reset_index(drop=True), found[0])
    if not len(frame):
        return None
    frame.attrs["module_rows_of"] = listed
    frame.attrs["moved"] = [m for m in moves if m[0] in listed]
    return frame


def _held_by_side(contrib: pd.DataFrame, names: list[str], held: dict[str, list[tuple[str, float, float]]]
                  ) -> dict[str, list[tuple[str, float, float]]]:
    """``_held_inside``'s figures of ``names`` with a side that lists the op with some time but whose module rows
    hold none of it added at 0 (``_held_inside`` leaves such a side out, which then read as "all of it")."""
    listed = {n: (b, c) for n, b, c in zip(col_of(contrib, "Name").tolist(), col_of(contrib, "Base(ms)").tolist(),
                                           col_of(contrib, "Comparison(ms)").tolist(), strict=True)}
    out: dict[str, list[tuple[str, float, float]]] = {}
    for name in names:
        got = {side: (h, t) for side, h, t in held.get(name, [])}
        out[name] = [(side, *got.get(side, (0.0, float(listed[name][i]))))
                     for i, side in enumerate(("base", "comparison")) if name in listed and listed[name][i]]
    return out


def find_module_contributors(ctx: RunContext, contrib: pd.DataFrame, sheets: list[Sheet]
                             ) -> tuple[list[str], dict[str, list[tuple[str, float, float]]], pd.DataFrame | None]:
    """What ``summary.build`` takes from the module sheets for the operator-level contributors ``contrib``: those
    no module row names (``_outside_modules``), those of them with modules run inside them and how much of their
    time those modules' rows hold (``_held_inside``; ``outside_modules_line`` words both), and the module
    contributors (``_module_contributors``, else ``_module_rows_of``; None for neither)."""
    outside = _outside_modules(contrib, sheets)
    nested = _nested_in_module_ops(ctx, contrib, outside)
    contrib.attrs["nested_in_module_ops"] = nested
    outside = [n for n in outside if n not in nested]
    own = _own_module_rows(contrib, sheets)
    held = _held_inside(ctx, contrib, outside + list(own))
    outside_held = {n: f for n, f in held.items() if n in outside}
    modules = _module_contributors(ctx, contrib, sheets, outside_held | _around_modules(own, held))
    if modules is None:
        modules = _module_rows_of(contrib, sheets)
        if modules is not None:
            # how much of each listed operator's time the module rows hold: vLLM's hipGraphLaunch (its step wrappers
            # paired) ran outside every module on the base side, so its module row read base 0.000 -> 149.920 ms
            # under its operator row's 10.388 -> 149.920 ms, and the lead said only that it "runs inside modules"
            # (``held`` has them: each names module rows as their operator, so it is one of ``own``)
            modules.attrs["module_rows_held"] = _held_by_side(contrib, modules.attrs["module_rows_of"], held)
    return outside, outside_held, modules


def module_contributors_note(frame: pd.DataFrame | None) -> str:
    """The sentence that introduces the module contributors: which listed operators run modules and how much of
    their time those modules' rows hold ("" without module contributors), that the table ranks the module rows
    inside them (``_rows_run_by``), and which operators run in another module on each side (``_merge_moves``)."""
    lead = _lead(frame)
    moved = frame.attrs.get("moved") if lead and frame is not None else None
    return f"{lead}; {_moves_text(moved)}" if moved else lead


def _moves_text(moves: list[tuple[str, str, str, float, float]]) -> str:
    """The lead's words on operators that run in another module on each side (``_merge_moves``)."""
    if len(moves) == 1:
        op, b, c, _tb, _tc = moves[0]
        return (f"{op} runs in another module on each side (base {b}, comparison {c}): its two module rows count as "
                "one, under its comparison module")
    named = short_list([f"{op} (base {b}, comparison {c})" for op, b, c, _tb, _tc in moves], 3, escape=False)
    return f"{named} run in another module on each side: each one's two module rows count as one, under its " \
        "comparison module"


def _lead(frame: pd.DataFrame | None) -> str:
    """``module_contributors_note`` without the words on moved operators."""
    runners = frame.attrs.get("runs_modules") if frame is not None and len(frame) else None
    inside = frame.attrs.get("module_rows_of") if frame is not None and len(frame) else None
    if inside:
        names = ", ".join(_inside_items(frame, inside))
        return (f"{names} run{'s' if len(inside) == 1 else ''} inside modules: the module contributors rank "
                f"{'its' if len(inside) == 1 else 'their'} module rows by their change")
    if not runners:
        return ""
    if len(runners) == 1:
        name, figures = runners[0]
        held = _held_figures(figures)
        # the figures after the name: "this much of the time (comparison 156.000 of its 156.086 ms) of <name>"
        # parted "the time" from its name by the figures, and a step annotation's name is 100 characters long
        share = f"all of the time of {name}" if held == "all of it" else f"part of the time of {name} ({held})"
        return (f"The module rows hold {share}, which runs modules: the module contributors rank the module rows "
                "inside it by their change")
    return (f"The module rows hold this much of the time of the operators that run modules: {_held_list(runners)}; "
            "the module contributors rank the module rows inside them by their change")


def _held_list(named: list[tuple[str, list[tuple[str, float, float]]]]) -> str:
    """"a (all of it), b (base 0.560 of its 0.613 ms), c (all of it), ... (5 in all; the other 2: all of it)": three
    operators with ``_held_figures`` (those held in part among them: ``_partial_items``), as the module
    contributors' lead and the row on those outside every module name them."""
    return ", ".join(_held_items(named))


def _held_items(named: list[tuple[str, list[tuple[str, float, float]]]]) -> list[str]:
    """``_held_list``'s entries, one per operator shown, then the cut's."""
    entries = [(f"{n} ({f})", f != _ALL) for n, f in ((n, _held_figures(f)) for n, f in named)]
    return _partial_items(entries, lambda rest, part: f"{_others(rest)}: " + (
        _ALL if not part else f"{part} of them in part"))


def _inside_items(frame: pd.DataFrame, inside: list[str]) -> list[str]:
    """The operators the module contributors' rows run inside (``_rows_run_by``), with how much of their time those
    rows hold where it is part: ``_lead``'s list, an entry per operator shown, then the cut's."""
    held = frame.attrs.get("module_rows_held") or {}
    figures = [_held_figures(held.get(n, [])) for n in inside]
    return _partial_items([(n, False) if f == _ALL else (f"{n} (its module rows hold {f})", True)
                           for n, f in zip(inside, figures, strict=True)],
                          lambda rest, part: _others(rest) + (f", {part} of them in part" if part else " wholly"))


def module_contributors_lines(frame: pd.DataFrame | None) -> list[str]:
    """The console's and the Summary sheet's form of ``module_contributors_note`` (whose one line the JSON keeps,
    with these lines beside it: ``module_lead_lines``): where it lists several operators (those that run modules,
    those the rows run inside, or those that run in another module on each side), a title line and a "  - " line
    per operator of each list, then the sentence on what the module contributors rank, which leads into their
    table; else the note as one line ([] for none). The xdit pair's note (flux.1 against SD 3.5) was one line of
    981 characters: two operators with their figures and three moved operators with both module paths of each."""
    note = module_contributors_note(frame)
    if not note or frame is None:
        return [note] if note else []
    runners, inside = frame.attrs.get("runs_modules"), frame.attrs.get("module_rows_of")
    moved = frame.attrs.get("moved") or []
    listed = _inside_items(frame, inside) if inside else _held_items(runners) if runners else []
    if len(listed) < 2 and len(moved) < 2:
        return [note]
    lines: list[str] = []
    if len(listed) >= 2 and inside:
        lines += ["Operators that run inside modules:", *(f"  - {t}" for t in listed)]
        rank = "The module contributors rank their module rows by their change"
    elif len(listed) >= 2:
        lines += ["The module rows hold this much of the time of the operators that run modules:",
                  *(f"  - {t}" for t in listed)]
        rank = "The module contributors rank the module rows inside them by their change"
    else:
        rank = _lead(frame)  # one operator: its sentence, after the moves, leads into the table
    if len(moved) >= 2:
        lines += ["Operators that run in another module on each side (each one's two module rows count as one, under "
                  "its comparison module):",
                  *(f"  - {t}" for t in _moved_items(moved))]
    elif moved:
        lines.append(_moves_text(moved) + ".")  # it opens with the operator's name, kept as it is written
    return [*lines, rank]


def module_lead_lines(frame: pd.DataFrame | None) -> list[str]:
    """``module_contributors_lines`` as the console prints them and the Summary sheet writes them (a row each) above
    the module contributors' table, the last ending with the colon that leads into it; the JSON's
    ``module_contributors_note_lines`` ([] without module contributors)."""
    lines = module_contributors_lines(frame)
    return [*lines[:-1], f"{lines[-1]}:"] if lines else []


def _moved_items(moves: list[tuple[str, str, str, float, float]]) -> list[str]:
    """``_moves_text``'s list of several operators, an entry per operator shown, then the cut's."""
    named = [f"{op} (base {b}, comparison {c})" for op, b, c, _tb, _tc in moves]
    return named[:_NAMED] + ([f"... ({len(named):,} in all)"] if len(named) > _NAMED else [])


def _others(n: int) -> str:
    """"the other one" / "the other 2": the operators a cut list leaves off."""
    return "the other one" if n == 1 else f"the other {n:,}"


#: How many operators the module notes name before "... (N in all)"
_NAMED = 3
_ALL = "all of it"


def _partial_items(entries: list[tuple[str, bool]], rest: Callable[[int, int], str]) -> list[str]:
    """``entries`` (text, whether the module rows hold only part of that operator's time), in their order, cut
    after three as ``short_list`` cuts them, but the three shown are the ones held in part first, then the others
    by rank, and the cut says what the ones left off hold: ``rest(how many, how many of them in part)``. Cut by
    rank alone, pair 3's lead named three operators "(all of it)" and hid the one the module rows hold part of
    (AddmmBackward0: base 0.560 of its 0.613 ms) behind "... (5 in all)"."""
    if len(entries) <= _NAMED:
        return [t for t, _ in entries]
    picked = sorted(range(len(entries)), key=lambda i: not entries[i][1])[:_NAMED]  # stable: by rank within each
    shown = sorted(picked)
    hidden = [part for i, (_, part) in enumerate(entries) if i not in shown]
    return [*(entries[i][0] for i in shown), f"... ({len(entries):,} in all; {rest(len(hidden), sum(hidden))})"]


def _held_figures(figures: list[tuple[str, float, float]]) -> str:
    """"all of it", or each side's "base 0.560 of its 0.613 ms" where the module rows hold less (to 0.001 ms)."""
    # ">=": the module rows hand kernels out by launch time and the op tree by flow, so they could differ by a hair
    if all(round(h, 3) >= round(t, 3) for _, h, t in figures):
        return _ALL
    return ", ".join(f"{side} {h:.3f} of its {t:.3f} ms" for side, h, t in figures)


def outside_modules_line(outside: list[str], held: dict[str, list[tuple[str, float, float]]],
                         nested: dict[str, str] | None = None) -> str:
    """The Summary sheet's row under the contributors on the ones no module row names ("" for none). Those
    outside every module whose time is on no module row (an all-reduce under AccumulateGrad) are only in
    OperatorCompareStatistic (``--disable_module``); those run around modules (a step annotation around the
    model's forward, a backward op around its backward module) are named apart, with how much of their time the
    module rows hold: "outside every module" alone read as if that time were missing from the module sheets.
    Where the module contributors open such a contributor up, their lead says that instead (the caller leaves it
    out here: ``outside_modules_note``); those run around modules from inside one always are (``_around_modules``).
    Names stay as they are, as in ``module_contributors_note``: the console escapes the line where it prints it."""
    missing = [n for n in outside if n not in held]
    around = [n for n in outside if n in held]
    parts = []
    if missing:
        one = len(missing) == 1
        parts.append(f"Not on the module sheets: {short_list(missing, 3, escape=False)} "
                     f"({'it is' if one else 'they are'} outside "
                     "every module)")
    if nested:
        one = len(nested) == 1
        inner = short_list(list(nested), 3, escape=False)
        parents = short_list(list(dict.fromkeys(nested.values())), 3, escape=False)
        runs, its = ("it runs", "its") if one else ("they run", "their")
        parts.append(f"{'n' if parts else 'N'}ot on the module sheets by name: {inner} ({runs} inside {parents}, "
                     f"whose module rows hold {its} time: the max_kernel_num option splits the operator rows into "
                     "child ops, not the module rows)")
    if around:
        its = "its" if len(around) == 1 else "their"
        parts.append(f"{'o' if parts else 'O'}utside every module but run around modules, whose rows hold this much "
                     f"of {its} time: {_held_list([(n, held[n]) for n in around])}")
    if not parts:
        return ""
    # the option named bare: the result's text, read by compare()'s caller as by the CLI's user
    return "; ".join(parts) + "; the disable_module option writes every operator's row (OperatorCompareStatistic)."


def outside_modules_note(contrib: pd.DataFrame | None, modules: pd.DataFrame | None) -> str:
    """``outside_modules_line`` on the operator-level contributors ``contrib`` that no module row names (its
    attrs, set by ``summary.build``), less those the module contributors ``modules`` open up (their lead names
    them): one function for the console, the Summary sheet, the JSON and the gate (``gate._outside_line``, without
    ``modules``: it prints no lead), so that a console reader too learns why
    a listed operator is not in ModuleCompareStatistic ("" where every contributor is there, or no module sheet
    was made)."""
    if contrib is None or not len(contrib):
        return ""
    lead = module_contributors_note(modules)
    opened = {n for n, _ in modules.attrs.get("runs_modules", [])} if lead and modules is not None else set()
    outside = [n for n in contrib.attrs.get("outside_modules", []) if n not in opened]
    return outside_modules_line(outside, contrib.attrs.get("outside_held", {}),
                                contrib.attrs.get("nested_in_module_ops"))
