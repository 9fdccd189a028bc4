"""Operator comparison: OperatorCompareStatistic + OperatorCompare, or the module sheets.

The comparator of the "operator" slot (reference-2 §1.2 step 3-4): module-level
sheets when both sides have ``nn.Module`` python functions and ``--disable_module``
is off, otherwise the operator-level sheets built from the shared op pairing
(``optree.operator_pairs``), one row per pair in pair order (§2.6) and one row per
op name, sorted by the rounded ms difference (§2.7).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..columns import col_of
from ..model import factorize
from .optree import OpPairs, OpTree, one_sided, operator_pairs
from .table import (
    STYLE_BOLD,
    STYLE_FLOAT,
    STYLE_INT,
    STYLE_RATIO,
    Column,
    Sheet,
    diff_ratios,
    exact_diffs,
    frame_from_rows,
    plain_frame,
    ratio_of,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

LOW_MATCH_RATE = 0.5

_DETAIL_SIDE = [
    Column("Operator Name", STYLE_BOLD, 30),
    Column("Input Shape", STYLE_INT, 20),
    Column("Input Type", STYLE_INT, 20),
    Column("Kernel Details", STYLE_INT, 20),
    Column("Device Duration(us)", STYLE_FLOAT, 20),
]
DETAIL_COLUMNS = [
    Column("Order Id", STYLE_INT, 10), *_DETAIL_SIDE, *_DETAIL_SIDE,
    Column("Diff Duration(us)", STYLE_FLOAT, 20), Column("Diff Ratio", STYLE_RATIO, 20),
]
DETAIL_SPANS = ((1, 5), (6, 10))  # B1:F1, G1:K1

STAT_COLUMNS = [
    Column("Top", STYLE_INT, 10), Column("Operator Name", STYLE_BOLD, 30),
    Column("Base Device Duration(ms)", STYLE_FLOAT, 25), Column("Base Operator Number", STYLE_INT, 25),
    Column("Comparison Device Duration(ms)", STYLE_FLOAT, 30), Column("Comparison Operator Number", STYLE_INT, 30),
    Column("Diff Duration(ms)", STYLE_FLOAT, 20), Column("Diff Ratio", STYLE_RATIO, 20),
]
STAT_SPANS = ((2, 3), (4, 5))  # C1:D1, E1:F1

__all__ = ["build", "operator_sheets", "detail_rows", "statistic_rows", "counted", "match_note", "low_match_hint"]


def build(ctx: RunContext) -> list[Sheet]:
    """Module sheets when module matching produces pairs, else the operator sheets; none when exactly one side has no
    torch op (the other side's ops would pair with nothing: ``one_sided`` warns why)."""
    if one_sided(ctx):
        return []
    if not ctx.options.disable_module:
        from . import modules

        sheets = modules.build(ctx)
        if sheets is not None:
            return sheets
    return operator_sheets(ctx)


def node_texts(tree: OpTree, nodes: np.ndarray) -> list[str]:
    """Concatenated kernel details of each node's total kernels ("" for absent / kernel-less nodes)."""
    text = tree.kernel_text() if len(tree.kpool) else np.empty(0, dtype=object)
    out: list[str] = []
    knum = tree.kernel_num
    size = tree.size
    for x in nodes.tolist():
        if x < 0 or knum[x] == 0:
            out.append("")
        elif size[x] == 1:
            out.append("".join(text[tree.own_kernels(x)].tolist()))
        else:
            out.append("".join(text[tree.total_kernels(x)].tolist()))
    return out


def detail_rows(pairs: OpPairs) -> list[list]:
    """OperatorCompare rows (§2.6), in pair order."""
    rows: list[list] = []
    sides = []
    dev_cells = []  # each side's device us, 0 where the side is absent: the diff / ratio inputs
    for tree, idx in ((pairs.base, pairs.ia), (pairs.comparison, pairs.ib)):
        present = idx >= 0
        safe = np.where(present, idx, 0)
        ops = tree.ops
        if tree.n:
            names = col_of(ops, "name")[safe]
            shapes = col_of(ops, "input_dims")[safe]
            types = col_of(ops, "input_type")[safe]
            dev = tree.device_ns[safe] / 1000.0
        else:
            names = shapes = types = np.full(len(idx), None, dtype=object)
            dev = np.zeros(len(idx))
        sides.append((present.tolist(), names.tolist(), shapes.tolist(), types.tolist(),
                      node_texts(tree, idx), dev.tolist()))
        dev_cells.append(np.where(present, dev, 0.0))
    (pa, na, sa, ta_, ka, da), (pb, nb, sb, tb_, kb, db) = sides
    ratio = diff_ratios(*dev_cells)[1]
    diff = exact_diffs(*dev_cells, 1000)  # exact ns change, to 0.01 us
    for t, (d, r) in enumerate(zip(diff.tolist(), ratio.tolist(), strict=True)):
        b = [na[t], sa[t], ta_[t], ka[t], da[t]] if pa[t] else [None, None, None, "", 0.0]
        c = [nb[t], sb[t], tb_[t], kb[t], db[t]] if pb[t] else [None, None, None, "", 0.0]
        rows.append([t + 1, *b, *c, d, r])
    return rows


def _group(tree: OpTree, idx: np.ndarray) -> dict[str, tuple[int, int]]:
    """Per op name, in first-appearance order: (summed device ns, op count)."""
    idx = idx[idx >= 0]
    if len(idx) == 0:
        return {}
    codes, uniq = factorize(col_of(tree.ops, "name")[idx])
    ns = np.zeros(len(uniq), np.int64)
    np.add.at(ns, codes, tree.device_ns[idx])
    n = np.bincount(codes, minlength=len(uniq))
    return dict(zip(uniq.tolist(), zip(ns.tolist(), n.tolist(), strict=True), strict=True))


def statistic_rows(pairs: OpPairs) -> list[list]:
    """OperatorCompareStatistic rows (§2.7): grouped by each side's own names, sorted by diff."""
    gb, cdict = _group(pairs.base, pairs.ia), _group(pairs.comparison, pairs.ib)
    rows: list[list] = []
    for name, (ns, n) in gb.items():
        cns, cn = cdict.get(name, (0, 0))
        b_ms, c_ms = ns / 1e6, cns / 1e6
        rows.append([None, name, b_ms, n, c_ms, cn, None, ratio_of(b_ms, c_ms)])
    for name, (cns, cn) in cdict.items():
        if name in gb:
            continue
        c_ms = cns / 1e6
        rows.append([None, name, 0.0, 0, c_ms, cn, None, ratio_of(0.0, c_ms)])
    # Diff Duration(ms): the exact ns change to 0.01 ms (``exact_diffs``), not the float cells' rounded difference
    diffs = exact_diffs([r[2] for r in rows], [r[4] for r in rows], 10**6).tolist()
    for r, d in zip(rows, diffs, strict=True):
        r[-2] = d
    rows.sort(key=lambda r: -r[-2])  # stable: ties keep insertion order
    for i, r in enumerate(rows):
        r[0] = i + 1
    return rows


def low_match_hint(mapped: bool = False) -> str:
    """The advice for a low match rate. ``mapped``: the run was given an op_name_map, so "try the op_name_map
    option" would send the user to what they did already: the hint says the map pairs too few names instead. The
    option is named bare: the text is the result's, which ``compare(op_name_map=...)``'s caller reads as the CLI's
    user does (a flag "--op_name_map" is one the caller never typed)."""
    return ("different models? the op_name_map given pairs too few names: add entries" if mapped
            else "different models? try the op_name_map option")


def counted(what: str, max_kernel_num: int | None = None) -> tuple[str, str]:
    """What a match rate of ``what`` ("operators", "modules") counts, and what ``max_kernel_num`` adds to that
    ("" without it), as the match-rate line and the Summary's "operator match rate" row say it. The operator
    sheets pair the top-level operators (a ProfilerStep#N's children, reference-2 §2.3), an operator inside one
    compared within it: "Operators matched: 0/2 base" of reference pair 4, whose GPU trace holds 367 host ops
    under one annotation, left the user to guess what was counted. The drill-down replaces a pair of more than
    max_kernel_num kernels by the pairing of the operators inside it (§2.5), which the totals then count; an op
    that paired nothing is never opened, so the words say "pair" (pair 4's unpaired ``[param|cuda]`` stayed
    whole where "an operator of more than N kernels" said it would be opened)."""
    if what != "operators":
        return what, ""
    drilled = ("" if max_kernel_num is None else
               f"a pair with more than {max_kernel_num} kernels on a side counted as the operators inside it, as "
               "max_kernel_num asks; an unpaired operator stays whole")
    return "top-level operators", drilled


def match_note(what: str, matched: int, base_total: int, comparison_total: int,
               max_kernel_num: int | None = None, one: bool = False) -> tuple[str, bool]:
    """The match-rate line, and whether it is low enough to deserve a hint. With both sides non-empty the
    validity check "operator match rate" warns too (below 60 %, so at every low rate here) and gives the hint
    (``low_match_hint``): the line then carries none, so the console says the low rate once. ``one``: one input
    on both sides (``api.one_input``), whose rate is said once, "55/55 both sides", as its other notices are."""
    # capitalised as the log's other lines ("Start to compare ...", "Can't find ..."): "modules matched" was the one
    # line of a run that began in lower case
    noun, drilled = counted(what, max_kernel_num)
    sides = (f"{matched:,}/{base_total:,} both sides" if one and base_total == comparison_total
             else f"{matched:,}/{base_total:,} base, {matched:,}/{comparison_total:,} comparison")
    note = f"{noun[:1].upper()}{noun[1:]} matched: {sides}" + (f" ({drilled})" if drilled else "")
    low = (base_total > 0 and matched / base_total < LOW_MATCH_RATE) or \
          (comparison_total > 0 and matched / comparison_total < LOW_MATCH_RATE)
    return note, low


def record_match_rate(ctx: RunContext, what: str, matched: int, base_total: int, comparison_total: int) -> None:
    """Add one row to ``ctx.frames["match_rate"]`` and log the match-rate line (a warning when low).

    Under ``--disable_details`` nothing is matched on purpose (reference-1 §1.5), so there is no
    rate to report or to warn about."""
    if ctx.options.disable_details:
        return
    note, low = match_note(what, matched, base_total, comparison_total,
                           ctx.options.max_kernel_num if what == "operators" else None,
                           base_total == comparison_total and ctx.side(ctx.comparison) == "both sides")
    # by columns: ``pd.DataFrame([record])``'s frame without its row-wise inference (~0.2 ms)
    row = plain_frame({
        "what": [what], "matched": [matched], "base_total": [base_total], "comparison_total": [comparison_total],
        "base_rate": [matched / base_total if base_total else float("nan")],
        "comparison_rate": [matched / comparison_total if comparison_total else float("nan")],
        "low": [low],
    })
    old = ctx.frames.get("match_rate")
    ctx.frames["match_rate"] = row if old is None else pd.concat([old, row], ignore_index=True)
    if base_total or comparison_total:
        # a side with none is no evidence the check weighs (checks._frame_rates): only this line says it
        (log.warning if low and not (base_total and comparison_total) else log.info)(note)


def operator_sheets(ctx: RunContext) -> list[Sheet]:
    """OperatorCompareStatistic, then (unless --disable_details) OperatorCompare."""
    pairs = operator_pairs(ctx)
    n_base = int(np.count_nonzero(pairs.ia >= 0))
    n_comp = int(np.count_nonzero(pairs.ib >= 0))
    record_match_rate(ctx, "operators", pairs.matched, n_base, n_comp)
    stat = Sheet("OperatorCompareStatistic", STAT_COLUMNS, frame_from_rows(statistic_rows(pairs), len(STAT_COLUMNS)),
                 *STAT_SPANS)
    sheets = [stat]
    if not ctx.options.disable_details:
        sheets.append(Sheet("OperatorCompare", DETAIL_COLUMNS, frame_from_rows(detail_rows(pairs), len(DETAIL_COLUMNS)),
                            *DETAIL_SPANS))
    return sheets
