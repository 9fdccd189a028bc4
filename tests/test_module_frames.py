"""The module sheets built column by column (``statistic_frame`` / ``detail_frame``) against their rows built one
at a time from the Module records and each side's top-layer ops, as reference-2 §3.7 / §3.8 read: the frame
those rows give (``frame_from_rows``), every cell, its type and each column's dtype alike."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_modules import net_profile  # tests/ is on sys.path (rootdir import mode)
from test_optree import ctx_of

from msprof_compare.api import RunContext
from msprof_compare.compare import modules, table
from msprof_compare.compare.align import align
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

NPU = "msinsight/test/data/pytorch/"
GPU = "tracelens/tests/traces/"


def _diff(base: float, comp: float, ns_per_unit: int) -> float:
    return float(table.exact_diffs([base], [comp], ns_per_unit)[0])


def _op_aggregates(side: modules.ModuleTrees | None, mods: list[modules.Module]) -> dict[str, tuple[int, int, str]]:
    """Per op name of the modules' top-layer ops (first appearance): device ns, op count and kernel summary (a
    line per kernel name, first appearance, its count and ms to the us)."""
    agg: dict[str, list] = {}
    for m in mods if side is not None else []:
        for i in range(m.op_lo, m.op_hi):
            got = agg.setdefault(side.op_names[side.top_node[i]], [0, 0, {}])
            got[0] += int(side.top_ns[i])
            got[1] += 1
            for k in side.top_krows[side.top_kptr[i]:side.top_kptr[i + 1]].tolist():
                line = got[2].setdefault(side.k_names[k], [0, 0])
                line[0] += 1
                line[1] += int(side.k_durs[k])
    return {name: (ns, n, "".join(f"{k}, [number: {kn}], [duration_ms: {table.ms3(kns):.3f}]\n"
                                  for k, (kn, kns) in kernels.items()))
            for name, (ns, n, kernels) in agg.items()}


def _statistic_rows(pairs: list, base: modules.ModuleTrees | None, comp: modules.ModuleTrees | None) -> list[list]:
    """Per module path (those with a base instance, in pair order, then the comparison side's others) a
    [ TOTAL ] row of its instances' sums, then a row per op name: the base side's, each beside the comparison
    side's of that name, then the comparison side's others."""
    groups: dict[str, tuple[list, list]] = {}
    for k in (0, 1):
        for p in pairs:
            if p[k] is not None:
                groups.setdefault(p[k].module_name, ([], []))[k].append(p[k])
    rows: list[list] = []
    for path, (xs, ys) in groups.items():
        head = [re.sub(r"_\d+$", "", path.split("/")[-1]), path.count("/"), path.replace("nn.Module:", "")]
        bs, bt = sum(m.self_ns for m in xs) / 1e6, sum(m.total_ns for m in xs) / 1e6
        cs, ct = sum(m.self_ns for m in ys) / 1e6, sum(m.total_ns for m in ys) / 1e6
        rows.append([len(rows) + 1, *head, "[ TOTAL ]", None, bs, len(xs), bt, None, cs, len(ys), ct,
                     _diff(bt, ct, 10**6), _diff(bs, cs, 10**6), table.diff_ratio(bt, ct)[1],
                     xs[0].call_stack if xs else "", ys[0].call_stack if ys else ""])
        bo, co = _op_aggregates(base, xs), _op_aggregates(comp, ys)
        for name in [*bo, *(n for n in co if n not in bo)]:
            (b_ns, b_n, b_text), (c_ns, c_n, c_text) = bo.get(name, (0, 0, "")), co.get(name, (0, 0, ""))
            b_ms, c_ms = b_ns / 1e6, c_ns / 1e6
            rows.append([len(rows) + 1, *head, name, b_text, b_ms, b_n, None, c_text, c_ms, c_n, None, None,
                         _diff(b_ms, c_ms, 10**6), table.diff_ratio(b_ms, c_ms)[1], None, None])
    return rows


def _op_cells(side: modules.ModuleTrees | None, k: int | None) -> tuple[str, str, float]:
    """(name, kernel details, device us) of top-layer op ``k`` of a side; ("", "", 0.0) for none."""
    if side is None or k is None:
        return "", "", 0.0
    kernels = side.top_krows[side.top_kptr[k]:side.top_kptr[k + 1]]
    return (side.op_names[side.top_node[k]], "".join(side.tree.kernel_text_of(kernels).tolist()),
            int(side.top_ns[k]) / 1000)


def _detail_rows(pairs: list, base: modules.ModuleTrees | None, comp: modules.ModuleTrees | None) -> list[list]:
    """Per module pair a TOTAL row, then its ops paired by ``align`` on their names; an op row whose time grew
    shows each side's op call stack ("" for an absent op)."""
    rows: list[list] = []
    for x, y in pairs:
        ref = x if x is not None else y
        path = ref.module_name
        head = [re.sub(r"_\d+$", "", path.split("/")[-1]), ref.level, path.replace("nn.Module:", "")]
        bs, bt = (x.self_ns / 1000, x.total_ns / 1000) if x is not None else (0.0, 0.0)
        cs, ct = (y.self_ns / 1000, y.total_ns / 1000) if y is not None else (0.0, 0.0)
        rows.append([len(rows) + 1, *head, "TOTAL", None, bs, bt, "TOTAL", None, cs, ct, _diff(bt, ct, 1000),
                     _diff(bs, cs, 1000), table.diff_ratio(bt, ct)[1], x.call_stack if x is not None else "",
                     y.call_stack if y is not None else ""])
        xs = list(range(x.op_lo, x.op_hi)) if x is not None else []
        ys = list(range(y.op_lo, y.op_hi)) if y is not None else []
        ia, ib = align([_op_cells(base, k)[0] for k in xs], [_op_cells(comp, k)[0] for k in ys])
        for i, j in zip(ia.tolist(), ib.tolist(), strict=True):
            bk, ck = (xs[i] if i >= 0 else None), (ys[j] if j >= 0 else None)
            (bn, btext, b_us), (cn, ctext, c_us) = _op_cells(base, bk), _op_cells(comp, ck)
            diff = _diff(b_us, c_us, 1000)
            stacks = [side.top_stacks([k])[0] if k is not None else "" for side, k in ((base, bk), (comp, ck))] \
                if diff > 0 else [None, None]
            rows.append([len(rows) + 1, *head, bn, btext, b_us, None, cn, ctext, c_us, None, None, diff,
                         table.diff_ratio(b_us, c_us)[1], *stacks])
    return rows


def _same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.dtypes) == list(want.dtypes)
    assert got.shape == want.shape and list(got.columns) == list(want.columns) and got.index.equals(want.index)
    for c in want.columns:
        g, w = got[c].tolist(), want[c].tolist()
        assert [type(v) for v in g] == [type(v) for v in w], c
        assert all(a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
                   for a, b in zip(g, w, strict=True)), c


def _check(ctx: RunContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    pairs, base, comp = modules.module_pairs(ctx)
    heads: dict[str, tuple[str, str]] = {}
    stat, detail = modules.statistic_frame(pairs, base, comp, heads), modules.detail_frame(pairs, base, comp, heads)
    _same_frame(stat, table.frame_from_rows(_statistic_rows(pairs, base, comp), len(modules.STAT_COLUMNS)))
    _same_frame(detail, table.frame_from_rows(_detail_rows(pairs, base, comp), len(modules.DETAIL_COLUMNS)))
    return stat, detail


def test_one_sided_modules_and_a_grown_op_as_the_rows_give() -> None:
    """net_profile with Linear_0 renamed Conv_0 on the comparison side: groups of one side; then gemm 8 -> 10 us,
    whose op row shows both sides' call stacks, and ReLU_0's op renamed on the comparison side: a group with an op
    of each side alone."""
    stat, detail = _check(ctx_of(net_profile(), net_profile(linear="nn.Module: Conv_0")))
    assert (stat.iloc[:, 7] == 0).any() and (stat.iloc[:, 11] == 0).any()  # a side without the module
    comp = net_profile(gemm_us=10)
    comp.ops.loc[comp.ops["name"] == "aten::relu", "name"] = "aten::gelu"
    stat, detail = _check(ctx_of(net_profile(), comp))
    grown = detail[detail.iloc[:, 4] == "aten::linear"]
    assert grown.iloc[0, 15:].tolist() == ["model.py(3): forward"] * 2
    # ReLU_0 on both sides: its base op's row, then the comparison side's other op's
    relu = stat[stat.iloc[:, 3] == "/ Net_0/ ReLU_0"]
    assert relu.iloc[:, [4, 7, 11]].values.tolist() == [["[ TOTAL ]", 1, 1], ["aten::relu", 1, 0], ["aten::gelu", 0, 1]]


@pytest.mark.parametrize("pair, rows", [
    ((NPU + "text/level1/rank0_ascend_pt", NPU + "text/level2/rank0_ascend_pt"), (105, 122)),
    ((NPU + "db/level2/rank0_ascend_pt", NPU + "db/level1/rank0_ascend_pt"), (105, 122)),
    ((GPU + "mi300/resnet_act_checkpoint.json.gz", GPU + "h100/Falconsai_nsfw_image_detection__1016002.json.gz"),
     (846, 1993))])
def test_sample_pairs_as_the_rows_give(samples: Path, pair: tuple[str, str], rows: tuple[int, int]) -> None:
    """NPU pair 1 (text), pair 3 swapped (DB) and two GPU models (ResNet with activation checkpointing against a
    ViT): ops of several kernels, grown ops' call stacks; the two models share few modules, so groups, op rows and
    backward modules of one side only, and op call stacks on one side only (the ResNet's ops have none)."""
    opts, _ = build_options(enable_operator_compare=True)
    base, comp = (load_profile(str(samples / p), opts) for p in pair)
    stat, detail = _check(RunContext(base, comp, opts))
    assert (len(stat), len(detail)) == rows
    assert stat.iloc[:, 5].str.contains(r"number: [2-9]").sum() > 10  # ops of several kernels
    assert detail.iloc[:, 16].map(lambda v: isinstance(v, str) and v != "").sum() > 20  # grown ops' stacks
    if "resnet" in pair[0]:
        ops = stat[stat.iloc[:, 4] != "[ TOTAL ]"]
        assert ((ops.iloc[:, 7] == 0) & (ops.iloc[:, 11] > 0)).sum() > 100
        assert ((ops.iloc[:, 11] == 0) & (ops.iloc[:, 7] > 0)).sum() > 100
        assert stat.iloc[:, 3].str.startswith("/[ BACKWARD ]").sum() > 100
        assert ((detail.iloc[:, 4] == "") & (detail.iloc[:, 8] != "")).sum() > 100
        assert ((detail.iloc[:, 8] == "") & (detail.iloc[:, 4] != "")).sum() > 100


def _frames(pairs: list, base: modules.ModuleTrees | None, comp: modules.ModuleTrees | None) -> tuple:
    """Both sheets of ``pairs`` as ``_check`` compares them, for pairs made by hand."""
    stat, detail = modules.statistic_frame(pairs, base, comp), modules.detail_frame(pairs, base, comp)
    _same_frame(stat, table.frame_from_rows(_statistic_rows(pairs, base, comp), len(modules.STAT_COLUMNS)))
    _same_frame(detail, table.frame_from_rows(_detail_rows(pairs, base, comp), len(modules.DETAIL_COLUMNS)))
    return stat, detail


def test_no_pair_gives_empty_sheets_of_the_rows_columns() -> None:
    """No module pair (with both sides' trees, and with neither side's): no row, each sheet's columns and
    dtypes as the empty row list gives them."""
    _, base, comp = modules.module_pairs(ctx_of(net_profile(), net_profile()))
    for b, c in ((base, comp), (None, None)):
        stat, detail = _frames([], b, c)
        assert (stat.shape, detail.shape) == ((0, len(modules.STAT_COLUMNS)), (0, len(modules.DETAIL_COLUMNS)))


@pytest.mark.parametrize("side", [0, 1])
def test_a_side_without_module_trees(side: int) -> None:
    """Every module of one side alone, the other side without trees (``None``), each side in turn: its
    [ TOTAL ] and op rows with the absent side's cells empty (0, "", no op)."""
    pairs, base, comp = modules.module_pairs(ctx_of(net_profile(), net_profile()))
    trees = [base, comp]
    trees[1 - side] = None
    alone = [(p[0], None) if side == 0 else (None, p[1]) for p in pairs]
    stat, detail = _frames(alone, *trees)
    # 4 modules (Net_0, Linear_0, ReLU_0, Linear_0's backward), each with one op
    assert (len(stat), len(detail)) == (8, 8)
    number = stat.iloc[:, 7 if side == 1 else 11]  # the absent side's
    assert number.tolist() == [0] * 8
    ops = detail[detail.iloc[:, 4 if side == 0 else 8] != "TOTAL"]
    assert ops.iloc[:, 8 if side == 0 else 4].tolist() == [""] * 4


def test_figures_past_2_53_ns_as_python_divides_them() -> None:
    """Module and op times past 2**53 ns (104 days): the us of the detail sheet are each whole ns over 1000
    correctly rounded, as Python's ``int / 1000`` gives them, where the float64 of such a ns can be a unit
    off (2**53 + 3 ns: float64 gives ...740.996 us, the quotient ...740.994)."""
    pairs, base, comp = modules.module_pairs(ctx_of(net_profile(), net_profile(gemm_us=10)))
    big = 2**53 + 3
    for k, side in enumerate((base, comp)):
        side.top_ns = side.top_ns + big + 2 * k
        for p in pairs:
            if p[k] is not None:
                p[k].self_ns += big + 2 * k
                p[k].total_ns += big + 4 * k
    ns = [int(v) for s in (base, comp) for v in s.top_ns] + [m.total_ns for p in pairs for m in p]
    assert any(v / 1000 != float(np.float64(v) / 1000) for v in ns)  # float64 would be off for some
    stat, detail = _frames(pairs, base, comp)
    assert detail.iloc[:, 6].max() > 2**53 / 1000 and stat.iloc[:, 6].max() > 2**53 / 1e6
