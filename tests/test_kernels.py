"""KernelCompare / KernelTypeCompare against hand-computed values and the original's workbook."""

from __future__ import annotations

import csv
import logging
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from frameutil import cells, kernel_groups
from hypothesis import given
from hypothesis import strategies as st
from xlsxutil import read_xlsx

from msprof_compare.api import RunContext, compare
from msprof_compare.compare import kernels
from msprof_compare.errors import StepError
from msprof_compare.model import Profile
from msprof_compare.options import Options

DATA = Path(__file__).parent / "data" / "sheets"
L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def npu(path: str = "npu", **side) -> Profile:
    p = Profile(path=path, kind="NPU", source="ascend_text")
    for k, v in side.items():
        setattr(p, k, v)
    return p


def ctx(base: Profile, comp: Profile, **opts) -> RunContext:
    return RunContext(base, comp, Options(enable_kernel_compare=True, **opts))


def _by_hand(path: Path) -> dict[tuple[str, str], list[float]]:
    """Independent grouping with the csv module: (type, shape) -> durations, in nested first-seen order."""
    nested: dict[str, dict[str, list[float]]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            typ = row["Type"].strip()
            if typ in ("", "N/A"):
                continue
            shape = row["Input Shapes"].strip()
            shape = "N/A" if shape in ("", "N/A") else shape
            nested.setdefault(typ, {}).setdefault(shape, []).append(float(row["Duration(us)"]))
    return {(t, s): v for t, d in nested.items() for s, v in d.items()}


def test_kernel_groups_match_hand_count():
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    groups = kernel_groups(npu(kernel_details=kd))
    expected = _by_hand(DATA / "kernel_details_l1_head40.csv")
    assert list(zip(groups["type"], groups["shape"], strict=False)) == list(expected)
    keys = zip(groups["type"], groups["shape"], strict=True)
    for (t, s), total, calls, mx, mn in zip(keys, groups["total"], groups["calls"], groups["max"], groups["min"],
                                            strict=True):
        vals = expected[(t, s)]
        assert calls == len(vals)
        assert total == pytest.approx(sum(vals))
        assert (mx, mn) == (max(vals), min(vals))


def test_empty_and_na_shapes_of_a_type_are_one_group(tmp_path):
    """reference-2 §6.1: an empty Input Shapes is N/A, so kernels of one type with an empty, an "N/A" and a
    blank-padded " N/A " shape are one group (two groups of one key had made the sheet keep one and drop the
    other's kernels without a word). Checked through the loader against the independent csv grouping."""
    from msprof_compare.loaders.ascend_text import read_kernel_details

    with open(DATA / "kernel_details_l1_head40.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    t, sh = head.index("Type"), head.index("Input Shapes")
    typ = next(r[t] for r in rows[1:] if sum(x[t] == r[t] for x in rows[1:]) >= 3)
    mine = [r for r in rows[1:] if r[t] == typ]
    for r, shape in zip(mine, ("", "N/A", " N/A "), strict=False):
        r[sh] = shape
    path = tmp_path / "kernel_details.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    groups = kernel_groups(npu(kernel_details=read_kernel_details(str(path))))
    expected = _by_hand(path)
    assert len(expected[(typ, "N/A")]) >= 3
    assert list(zip(groups["type"], groups["shape"], strict=True)) == list(expected)
    for (g_t, g_s), calls, total in zip(zip(groups["type"], groups["shape"], strict=True), groups["calls"],
                                        groups["total"], strict=True):
        assert calls == len(expected[(g_t, g_s)])
        assert total == pytest.approx(sum(expected[(g_t, g_s)]), abs=0.006)


def test_pairs_whose_joined_texts_are_equal_stay_two_rows(tmp_path):
    """reference-2 §6.1 keys a group by its type text followed by its shape text: ("MatMulV2", "32,3") and
    ("MatMulV", "232,3") made one key, and KernelCompare kept the first pair's row and dropped the other's
    kernels. Built from the level-1 excerpt (two of its types renamed, unquoted shapes as a DB export writes
    them); each pair is its own row, with the independent csv grouping's figures on both sides."""
    from msprof_compare.loaders.ascend_text import read_kernel_details

    with open(DATA / "kernel_details_l1_head40.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    t, sh = head.index("Type"), head.index("Input Shapes")
    types = list(dict.fromkeys(r[t] for r in rows[1:]))
    for r in rows[1:]:
        if r[t] in types[:2]:
            r[t], r[sh] = ("MatMulV2", "32,3") if r[t] == types[0] else ("MatMulV", "232,3")
    path = tmp_path / "kernel_details.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    expected = _by_hand(path)
    assert {("MatMulV2", "32,3"), ("MatMulV", "232,3")} <= set(expected)
    side = npu(kernel_details=read_kernel_details(str(path)))
    (sheet,) = kernels.build(ctx(side, side))
    got = {(r[1], r[2]): (r[3], r[7], r[8], r[12]) for r in sheet.data.itertuples(index=False)}
    assert list(got) == list(expected)
    for pair, durations in expected.items():
        total = round(sum(durations), 2)
        assert got[pair] == (pytest.approx(total), len(durations), pytest.approx(total), len(durations)), pair


def test_kernel_totals_are_exact_decimal_sums():
    """Through the loader (exact ns durations): each total is the decimal sum rounded half up to 0.01 us."""
    from decimal import ROUND_HALF_UP, Decimal

    from msprof_compare.loaders.ascend_text import read_kernel_details

    path = DATA / "kernel_details_l1_head40.csv"
    groups = kernel_groups(npu(kernel_details=read_kernel_details(str(path))))
    durs: dict[tuple[str, str], list[Decimal]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            typ, shape = row["Type"].strip(), row["Input Shapes"].strip() or "N/A"
            if typ not in ("", "N/A"):
                durs.setdefault((typ, shape), []).append(Decimal(row["Duration(us)"].strip()))

    def r2(v: Decimal) -> float:
        return float(v.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))

    keys = list(zip(groups["type"], groups["shape"], strict=True))
    # total, max and min: the exact decimal figures rounded half up
    assert dict(zip(keys, groups["total"], strict=True)) == {k: r2(sum(v)) for k, v in durs.items()}
    assert dict(zip(keys, groups["max"], strict=True)) == {k: r2(max(v)) for k, v in durs.items()}
    assert dict(zip(keys, groups["min"], strict=True)) == {k: r2(min(v)) for k, v in durs.items()}


def test_kernel_total_tie_rounds_half_up():
    # 793.015 is stored as 793.01499999999998...: a float total would round down to 793.01
    kd = pd.DataFrame({"Type": ["Conv2D", "Conv2D"], "Input Shapes": ["a", "a"],
                       "Duration(us)": [793.0, 0.015], "dur": [793_000, 15]})
    groups = kernel_groups(npu(kernel_details=kd))
    assert groups["total"].tolist() == [793.02]
    assert cells(kernels.kernel_frame(groups, groups))[0][3] == 793.02
    # one TensorMove of 252.385 us (pair 1): round(252.385, 2) is 252.38; Total, Avg, Max, Min all read 252.39
    one = pd.DataFrame({"Type": ["TensorMove"], "Input Shapes": ["s"], "Duration(us)": [252.385], "dur": [252_385]})
    g = kernel_groups(npu(kernel_details=one))
    assert cells(kernels.kernel_frame(g, g))[0][3:8] == [252.39, 252.39, 252.39, 252.39, 1]


def test_kernel_sheet_rounding_and_absent_sides():
    base = pd.DataFrame({"type": ["MatMul", "Add"], "shape": ["256x512", "N/A"], "key": ["MatMul256x512", "AddN/A"],
                         "total": [12.345, 3.0], "calls": [5, 1], "max": [3.456, 3.0], "min": [1.234, 3.0]})
    comp = pd.DataFrame({"type": ["Mul"], "shape": ['"8"'], "key": ['Mul"8"'],
                         "total": [7.0], "calls": [1], "max": [7.0], "min": [7.0]})
    rows = cells(kernels.kernel_frame(base, comp))
    # UT fact: total 12.35, max 3.46, min 1.23, avg from the rounded total 2.47
    assert rows[0][:8] == [1, "MatMul", "256x512", 12.35, 2.47, 3.46, 1.23, 5]
    assert rows[0][8:13] == [0.0, 0.0, None, None, None]
    assert rows[0][13:] == [0.0, 0.0]
    # comparison-only (example verified by run): [5,'Mul','"8"',0,0,None,None,None,7,7,7,7,1,'INF','INF']
    assert rows[2] == [3, "Mul", '"8"', 0.0, 0.0, None, None, None, 7.0, 7.0, 7.0, 7.0, 1, math.inf, math.inf]


def test_kernel_type_rows_sorted_by_total_ratio():
    base = kernels.kernel_type_table(npu(op_statistic=pd.read_csv(DATA / "op_statistic_l1.csv")))
    comp = dict(base)
    cast = comp.pop(("Cast", "AI_VECTOR_CORE"))
    comp[("Extra", "AI_CORE")] = ["Extra", "AI_CORE", 2.0, 1.0, 1.5, 0.5, 2]
    rows = kernels.kernel_type_rows(base, comp)
    assert rows[0][1:3] == ["Extra", "AI_CORE"] and rows[0][-2:] == [math.inf, math.inf]
    assert rows[0][3:8] == [0, 0, 0, 0, 0]
    cast_row = next(r for r in rows if r[1] == "Cast")
    assert cast_row[2] == "AI_VECTOR_CORE"
    assert cast_row[3:8] == cast[2:]           # values straight from op_statistic.csv, unrounded
    assert cast_row[3:8] == [5.78, 1.445, 1.8, 1.28, 4]
    assert cast_row[8:] == [0, 0, 0, 0, 0, 0.0, 0.0]
    # an absent side: float durations and an int count, as a present side (JSON 0.0, not 0)
    assert [type(v) for v in cast_row[3:8]] == [type(v) for v in cast_row[8:13]] == [float] * 4 + [int]
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    ratios = [r[-2] for r in rows]
    assert ratios == sorted(ratios, reverse=True)


def test_kernel_type_compare_real_files():
    b = npu(op_statistic=pd.read_csv(DATA / "op_statistic_l1.csv"))
    c = npu(op_statistic=pd.read_csv(DATA / "op_statistic_l2.csv"))
    sheets = kernels.build(ctx(b, c, use_kernel_type=True))
    assert [s.name for s in sheets] == ["KernelTypeCompare"]
    f = sheets[0].frame()
    assert list(f.columns[:3]) == ["Order Id", "Kernel Type", "Core Type"]
    conv = f[f["Kernel Type"] == "Conv2D"].iloc[0]
    # op_statistic rows: level1 Conv2D,AI_CORE,5,723.434 ... ; level2 read by hand below
    with open(DATA / "op_statistic_l2.csv", newline="") as fh:
        l2 = next(r for r in csv.DictReader(fh) if r["OP Type"] == "Conv2D")
    assert conv["Total Duration(us)"] == 723.434 and conv["Calls"] == 5
    assert conv["Total Duration(us).1"] == float(l2["Total Time(us)"])
    assert conv["Diff Total Ratio"] == round(float(l2["Total Time(us)"]) / 723.434, 4)
    # the Avg, Max and Min columns of each side and the Avg ratio, by hand from the two files' Conv2D rows
    # (l1 Min 69.261, Avg 144.687, Max 313.886; l2 Min 69.941, Avg 144.371, Max 311.646): a ratio of the Max
    # column (311.646 / 313.886 = 0.9929) in place of the Avg one passed every other assertion
    assert [conv["Avg Duration(us)"], conv["Max Duration(us)"], conv["Min Duration(us)"]] == [144.687, 313.886, 69.261]
    assert [conv["Avg Duration(us).1"], conv["Max Duration(us).1"], conv["Min Duration(us).1"]] == [
        144.371, 311.646, 69.941]
    assert conv["Diff Avg Ratio"] == 0.9978  # 144.371 / 144.687 = 0.997816...
    # every type has as many calls on both sides, so the two ratios differ only where the files' 3-decimal
    # averages round apart: Relu (7 calls) 64.081 -> 63.621 us in all, 9.154 -> 9.089 us on average; a sheet
    # that gave the total's ratio as the Avg one passed every assertion above
    relu = f[f["Kernel Type"] == "Relu"].iloc[0]
    assert [relu["Total Duration(us)"], relu["Avg Duration(us)"], relu["Calls"]] == [64.081, 9.154, 7]
    assert [relu["Total Duration(us).1"], relu["Avg Duration(us).1"], relu["Calls.1"]] == [63.621, 9.089, 7]
    assert relu["Diff Total Ratio"] == 0.9928  # 63.621 / 64.081 = 0.992822...
    assert relu["Diff Avg Ratio"] == 0.9929  # 9.089 / 9.154 = 0.992899...


def _op_statistic_rows(path: Path) -> dict[tuple[str, str], list]:
    """(OP Type, Core Type) -> [Total, Avg, Max, Min Time(us), Count] of an op_statistic.csv as written, a repeated
    key's later row kept (reference-2 §6.2), read with the csv module."""
    with open(path, newline="", encoding="utf-8") as fh:
        return {(r["OP Type"], r["Core Type"]): [float(r[f"{k} Time(us)"]) for k in ("Total", "Avg", "Max", "Min")]
                + [int(r["Count"])] for r in csv.DictReader(fh)}


def test_kernel_type_compare_every_row_of_the_text_exports(samples):
    """KernelTypeCompare of the level-1 / level-2 text exports through the loader, every row: each side's five
    figures as the two op_statistic.csv files write them (a type one side lacks: 0 there), Diff Total Ratio and
    Diff Avg Ratio by reference-2 §0.1 on the Total and Avg columns, the rows by Diff Total Ratio, largest first,
    Order Id 1..N. test_kernel_type_compare_real_files checks two rows (Conv2D, Relu); the DB exports' sheet is
    pinned by SQL (test_independent_db_sheets.py)."""
    text = samples / "msinsight/test/data/pytorch/text"
    sides = [text / level / "rank0_ascend_pt" for level in ("level1", "level2")]
    if not all(s.exists() for s in sides):
        pytest.skip("NPU samples absent")
    b, c = (_op_statistic_rows(s / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv") for s in sides)
    sheet = compare(*(str(s) for s in sides), enable_kernel_compare=True, use_kernel_type=True).sheet(
        "KernelTypeCompare")
    assert len(sheet) == len(b.keys() | c.keys())
    for _, row in sheet.iterrows():
        key = (row["Kernel Type"], row["Core Type"])
        want = [b.get(key, [0.0] * 4 + [0]), c.get(key, [0.0] * 4 + [0])]
        for sfx, w in zip(("", ".1"), want, strict=True):
            got = [row[f"{k} Duration(us){sfx}"] for k in ("Total", "Avg", "Max", "Min")] + [row["Calls" + sfx]]
            assert got == w, key
        ratios = [1.0 if not x and not y else math.inf if not x else round(y / x, 4)
                  for x, y in ((want[0][0], want[1][0]), (want[0][1], want[1][1]))]
        assert [row["Diff Total Ratio"], row["Diff Avg Ratio"]] == ratios, key
    assert sheet["Diff Total Ratio"].tolist() == sorted(sheet["Diff Total Ratio"], reverse=True)
    assert sheet["Order Id"].tolist() == list(range(1, len(sheet) + 1))


def test_gpu_side_gives_no_sheet(caplog):
    gpu = Profile(path="gpu.json", kind="GPU", source="kineto")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(gpu, npu())) == []
    # --enable_kernel_compare alone: the flags that take this pair are named (the run writes nothing else); two
    # empty profiles have no op to pair and no device time, so none (a pair with ops: test_user_walk_wording)
    # (each side's reason named, and "nothing to pair", as the no-op warnings of optree say them)
    assert caplog.messages == ["kernel compare only support between NPU data and NPU data. (the base side is a GPU "
                               "trace; neither side has a torch op (base: a GPU trace without cpu_op or runtime "
                               "events has none; comparison: an NPU export without cpu_op events has none), so the "
                               "operator, module, memory and API comparisons have nothing to pair, and no other "
                               "comparison applies to this pair)"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(npu(), gpu, enable_profiling_compare=True)) == []
    assert caplog.messages == ["kernel compare only support between NPU data and NPU data. (the comparison side is "
                               "a GPU trace)"]


def test_missing_op_statistic_warns(caplog):
    """--use_kernel_type with op_statistic.csv absent on one side (a Level0 export): one notice naming that
    side, no KernelTypeCompare sheet (and no KernelCompare in its place)."""
    b = npu("a", op_statistic=pd.read_csv(DATA / "op_statistic_l1.csv"))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(b, npu("b"), use_kernel_type=True)) == []
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["Can't find any valid kernel type data (op_statistic.csv) in the file: b (comparison side)"]


def test_missing_kernel_details_warns(caplog):
    """No kernel_details.csv (the loader has said so): one line naming the side, not the original's "lacks
    duration" advice, which is for a file without usable rows."""
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(npu("a", kernel_details=kd), npu("b"))) == []
    assert caplog.messages == ["Can't find any valid kernels in the file: b (comparison side: no kernel_details.csv)."]
    caplog.clear()
    no_type = kd.assign(Type="N/A")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(npu("a", kernel_details=kd), npu("b", kernel_details=no_type))) == []
    # Level0 writes every Type as N/A: the durations are there, so "lacks duration" would mislead
    assert "kernel_details.csv gives no kernel a Type (each is N/A or empty, as a Level0 export writes it)" \
        in caplog.text
    assert "lacks duration" not in caplog.text
    assert "Can't find any valid kernels in the file: b." in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(npu("a", kernel_details=kd),
                                 npu("b", kernel_details=no_type.drop(columns="Duration(us)")))) == []
    # the original's line, then the side it is about
    assert "Failed to enable enable_kernel_compare,kernel_details.csv lacks duration. Input: comparison b." \
        in caplog.messages


def test_step_filter_and_missing_step():
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    assert len(kernel_groups(npu(kernel_details=kd), 50)) == len(kernel_groups(npu(kernel_details=kd)))
    with pytest.raises(StepError, match="There is no kernel details information for step 7"):
        kernels.build(ctx(npu(kernel_details=kd), npu(kernel_details=kd), base_step=7, comparison_step=7))


def test_step_whose_rows_have_no_valid_type_is_no_missing_step(caplog):
    """A level0 export types every kernel N/A: with a step that its rows do carry, the sheet is skipped
    with the warning of a run without a step, instead of calling the step missing (the original stops)."""
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    kd["Type"] = "N/A"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(npu(kernel_details=kd), npu(kernel_details=kd), base_step=50,
                                 comparison_step=50)) == []
    assert "Can't find any valid kernels in the file: npu." in caplog.text
    assert "kernel_details.csv gives no kernel of step 50 a Type" in caplog.text
    with pytest.raises(StepError, match="There is no kernel details information for step 51"):
        kernels.build(ctx(npu(kernel_details=kd), npu(kernel_details=kd), base_step=51, comparison_step=51))


def test_level0_sample_says_its_kernels_have_no_type(samples, caplog):
    """The level0 samples' 191 kernel_details.csv rows all have a Duration(us) and Type N/A (checked with the
    csv module): the warning names the Type, not a missing duration, and the sides it is about."""
    import csv

    from msprof_compare import compare

    l0 = [samples / f"msinsight/test/data/pytorch/text/level0/rank{r}_ascend_pt" for r in (0, 1)]
    if not l0[0].exists():
        pytest.skip("level0 samples absent")
    with open(next(l0[1].glob("ASCEND_PROFILER_OUTPUT/kernel_details.csv")), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["Type"] for r in rows} == {"N/A"} and all(r["Duration(us)"] for r in rows)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(l0[0]), str(l0[1]), enable_kernel_compare=True)
    assert "KernelCompare" not in [s.name for s in res.sheets]
    assert "lacks duration" not in caplog.text
    # both sides lack the Type: the sentence is said once, naming both sides as given, then each side's path once
    failed = "Failed to enable enable_kernel_compare,kernel_details.csv gives no kernel a Type (each is N/A or empty"
    assert [m for m in caplog.messages if m.startswith(failed)] == [
        f"{failed}, as a Level0 export writes it). Inputs: base {l0[0]} and comparison {l0[1]}."]
    assert [str(p) for p in l0] == [m.split("in the file: ")[1].split(". ")[0] for m in caplog.messages
                                    if "Can't find any valid kernels in the file" in m]
    # one Level0 side of two: the line names which one (it named no input, the base's or the comparison's)
    level1 = samples / L1
    for pair, side in (((l0[0], level1), "base"), ((level1, l0[1]), "comparison")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(*map(str, pair), enable_kernel_compare=True)
        (line,) = [m for m in caplog.messages if m.startswith(failed)]
        assert line.endswith(f"writes it). Input: {side} {pair[side == 'comparison']}.")
    # a run without --enable_* flags: with neither side's kernels, the comparison nobody asked for has nothing to
    # work with, and its lines are INFO (as "Can't find any memory event" of two sides without memory); beside the
    # other side's kernels, whose sheet this side's lack takes away, they stay warnings
    for pair, level in (((l0[0], l0[1]), logging.INFO), ((l0[0], level1), logging.WARNING)):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            compare(*map(str, pair))
        kernel_lines = [r for r in caplog.records
                        if r.getMessage().startswith((failed, "Can't find any valid kernels"))]
        assert len(kernel_lines) == (3 if level == logging.INFO else 2)
        assert {r.levelno for r in kernel_lines} == {level}, pair


def test_kernel_type_compare_with_a_step(samples, caplog):
    """op_statistic.csv has no step ids: with a step the whole-run sheet comes with a warning saying so,
    and a step the data does not hold is refused like KernelCompare refuses it (it was silently ignored)."""
    from msprof_compare import compare

    pair = (str(samples / L1), str(samples / "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt"))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(*pair, enable_kernel_compare=True, use_kernel_type=True, base_step=50, comparison_step=50)
    assert [s.name for s in res.sheets] == ["KernelTypeCompare"]
    # both sides are text exports: one warning names both (one per side said the same twice)
    assert [m for m in caplog.messages if "op_statistic.csv" in m] == [
        f"base {pair[0]} and comparison {pair[1]}: op_statistic.csv holds no step ids, so KernelTypeCompare covers "
        "every step, not step 50 only."]
    whole = compare(*pair, enable_kernel_compare=True, use_kernel_type=True)
    pd.testing.assert_frame_equal(res.sheet("KernelTypeCompare"), whole.sheet("KernelTypeCompare"))
    with pytest.raises(StepError, match="Invalid step id: 51, please choose from the valid steps: 50"):
        compare(*pair, enable_kernel_compare=True, use_kernel_type=True, base_step=51, comparison_step=51)


def test_kernel_types_of_the_whole_profile_said_once(samples, caplog):
    """With a step, a text export's KernelTypeCompare is its whole profile's: said once. A text side against a DB
    export (which builds the statistic from its step's tasks) is named alone, as before; with a time breakdown the
    step note, which says it in its Detail (the Summary sheet keeps it), leaves it to that warning on the console,
    but keeps it where KernelTypeCompare is not made (no --use_kernel_type: no other line says it)."""
    from msprof_compare import compare

    text, db = samples / L1, samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    clause = "; KernelTypeCompare reads a text export's op_statistic.csv, which holds no step ids"
    for kernel_type in (True, False):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(text), str(db), enable_kernel_compare=True, use_kernel_type=kernel_type,
                          enable_profiling_compare=True, base_step=50, comparison_step=50)
        whole = [m for m in caplog.messages if "KernelTypeCompare covers every step" in m]
        (note,) = [m for m in caplog.messages if m.startswith("The time breakdown covers the whole profile")]
        if kernel_type:
            assert whole == [f"{text}: op_statistic.csv holds no step ids, so KernelTypeCompare covers every step, "
                             "not step 50 only."]
            assert clause not in note and note.endswith("KernelCompare and communication sheets); a DB export "
                                                        "limits them to the step.")
        else:
            assert not whole and clause in note
        guards = res.guards
        (detail,) = guards.loc[guards["Check"] == "time breakdown of the steps", "Detail"]
        assert clause in detail


def _compare_frames(ours: pd.DataFrame, ref: pd.DataFrame) -> None:
    assert list(ours.columns) == list(ref.columns)
    assert len(ours) == len(ref)
    for col in ref.columns:
        a, b = ours[col], ref[col]
        if b.dtype.kind in "if":
            a = pd.to_numeric(a, errors="coerce").astype(float)
            ok = ((a - b).abs() <= 0.005 * b.abs().clip(lower=1e-9)) | (a.isna() & b.isna()) | (a == b)
        else:
            ok = a.fillna("").astype(str) == b.fillna("").astype(str)
        assert ok.all(), (col, a[~ok].head().tolist(), b[~ok].head().tolist())


def test_kernel_compare_matches_reference_pair1(samples, reference_outputs):
    """CSV read as a loader would; figures equal the original's workbook."""
    profiles = []
    for rel in (L1, L2):
        kd = pd.read_csv(samples / rel / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", keep_default_na=False)
        profiles.append(npu(str(samples / rel), kernel_details=kd))
    sheets = kernels.build(ctx(*profiles))
    ref = read_xlsx(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                        sheet_name="KernelCompare", header=2)
    _compare_frames(sheets[0].frame(), ref)


def test_db_kernels_keep_na_op_types(tmp_path):
    """A DB export's compute tasks all count (reference-1 §7.4), N/A op types too (every task of the
    level-0 DB samples): one N/A row instead of no sheet and a warning about kernel_details.csv."""
    import shutil
    import sqlite3

    from msprof_compare.api import compare

    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db", db)
    con = sqlite3.connect(db)
    (n,) = con.execute("SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)").fetchone()
    (ns,) = con.execute("SELECT sum(t.endNs - t.startNs) FROM COMPUTE_TASK_INFO c JOIN TASK t "
                        "USING (globalTaskId)").fetchone()
    sid = con.execute("SELECT max(id) + 1 FROM STRING_IDS").fetchone()[0]
    con.execute("INSERT INTO STRING_IDS VALUES (?, 'N/A')", (sid,))
    con.execute("UPDATE COMPUTE_TASK_INFO SET opType = ?, inputShapes = ?", (sid, sid))
    con.commit()
    con.close()
    sheet = compare(str(db), str(db), enable_kernel_compare=True).sheet("KernelCompare")
    assert sheet.iloc[:, 1:4].values.tolist() == [["N/A", "N/A", round(ns / 1000, 2)]]
    assert sheet["Calls"].tolist() == [n]


def test_db_without_compute_tasks_is_said_in_db_words(tmp_path, caplog):
    """A DB export without compute tasks gets no advice about kernel_details.csv, which it does not have."""
    import shutil
    import sqlite3

    from msprof_compare.api import compare

    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db", db)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM COMPUTE_TASK_INFO")
    con.commit()
    con.close()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(db), str(db), enable_kernel_compare=True)
    assert "KernelCompare" not in res.sheet_names
    assert "no compute task: the database's TASK / COMPUTE_TASK_INFO tables hold none" in caplog.text
    assert "kernel_details.csv" not in caplog.text and "aic_metrics" not in caplog.text


def test_kernel_type_table_later_duplicate_row_wins():
    """reference-2 §6.2: op_statistic rows are keyed by OP Type and Core Type; a repeated key keeps the later row."""
    st = pd.DataFrame({"OP Type": ["Add", "Mul", "Add"], "Core Type": ["AI_CORE", "AI_CORE", "AI_CORE"],
                       "Total Time(us)": [1.0, 5.0, 9.0], "Avg Time(us)": [1.0, 5.0, 4.5],
                       "Max Time(us)": [1.0, 5.0, 6.0], "Min Time(us)": [1.0, 5.0, 3.0], "Count": [1, 1, 2]})
    table = kernels.kernel_type_table(npu(op_statistic=st))
    assert list(table) == [("Add", "AI_CORE"), ("Mul", "AI_CORE")]
    assert table[("Add", "AI_CORE")] == ["Add", "AI_CORE", 9.0, 4.5, 6.0, 3.0, 2]



def test_op_statistic_counts_and_times_are_checked(tmp_path):
    """Rows cut from op_statistic.csv of msinsight text level1 rank0, edited: a negative, fractional or
    over-int64 Count is no call count (an error naming the file; 2.7 was cut to 2, -3 shown as Calls); a
    negative time reads as 0 with one warning (KernelTypeCompare showed -1959.079 and a ratio of -1.0022)."""
    from msprof_compare.errors import ProfileError
    from msprof_compare.loaders.ascend_text import read_op_statistic

    head = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    good = "ForeachAddList,AI_VECTOR_CORE,3,1959.079,624.152,653.026,706.614,22.077\n"
    f = tmp_path / "op_statistic.csv"
    for count in ("-3", "2.7", "1e30"):
        f.write_text(head + good.replace(",3,", f",{count},"))
        with pytest.raises(ProfileError, match=re.escape(f"column Count holds {float(count):g}, not a call count")):
            read_op_statistic(str(f), [])
    f.write_text(head + good + "TransData,AI_VECTOR_CORE,57,-1423.208,6.54,24.969,70.801,16.038\n")
    warnings: list[str] = []
    df = read_op_statistic(str(f), warnings)
    assert df["Total Time(us)"].tolist() == [1959.079, 0.0] and df["Max Time(us)"].tolist() == [706.614, 0.0]
    assert df["Count"].tolist() == [3, 57] and df["Ratio(%)"].tolist() == [22.077, 16.038]
    assert warnings == [f"{f}: 1 row(s) with a negative time; their times read as 0"]


def test_op_statistic_time_over_a_week_reads_as_0(tmp_path):
    """Rows cut from op_statistic.csv of msinsight text level1 rank0, edited: a Total Time(us) of 1e20 (three
    billion years) led the console's kernel-type contributors with +99999999999999984.000 ms and no word (found by
    fuzzing the side files). A time over a week (604,800,000,000 us, the loaders' bound of a duration) is no time,
    as a negative one: the row's times read as 0, counted in one line; a week itself is a time."""
    from msprof_compare.loaders.ascend_text import read_op_statistic

    head = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    rows = ["ForeachAddList,AI_VECTOR_CORE,3,1959.079,624.152,653.026,706.614,22.077\n",
            "TransData,AI_VECTOR_CORE,57,1423.208,6.54,24.969,70.801,16.038\n",
            "MaxPoolGradWithArgmaxV1,AI_VECTOR_CORE,3,312.006,100.742,104.002,109.942,3.516\n"]
    week = 7 * 86_400 * 10**6
    f = tmp_path / "op_statistic.csv"
    f.write_text(head + rows[0].replace("1959.079", "1e20") + rows[1].replace("70.801", f"{week}.001")
                 + rows[2].replace(",312.006,", f",{week},"))
    warnings: list[str] = []
    df = read_op_statistic(str(f), warnings)
    assert df["Total Time(us)"].tolist() == [0.0, 0.0, float(week)]
    assert df["Max Time(us)"].tolist() == [0.0, 0.0, 109.942] and df["Min Time(us)"].tolist() == [0.0, 0.0, 100.742]
    assert df["Count"].tolist() == [3, 57, 3] and df["Ratio(%)"].tolist() == [22.077, 16.038, 3.516]
    assert warnings == [f"{f}: 2 row(s) with a time that lasts over a week (a damaged time?); their times read as 0"]
    # a row both negative and over a week is counted once, as negative
    f.write_text(head + rows[0].replace("1959.079", "1e20").replace("624.152", "-1"))
    warnings = []
    assert read_op_statistic(str(f), warnings)["Total Time(us)"].tolist() == [0.0]
    assert warnings == [f"{f}: 1 row(s) with a negative time; their times read as 0"]


@pytest.mark.parametrize("column", ["Avg Time(us)", "Max Time(us)", "Min Time(us)"])
def test_op_statistic_without_a_time_column_says_which(samples, tmp_path, caplog, column):
    """KernelTypeCompare's rows carry each op type's average, largest and smallest time: an op_statistic.csv
    without one of those columns (the L1 sample's, the column cut out by csv) leaves the sheet out with the
    original's "Can't find any valid kernel type data" alone, which named no column (found by fuzzing the side
    files). The loader now says which column is missing."""
    import shutil

    l1 = samples / L1
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(l1, side)
    path = side / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    j = rows[0].index(column)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([r[:j] + r[j + 1:] for r in rows])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(l1), str(side), enable_kernel_compare=True, use_kernel_type=True)
    assert "KernelTypeCompare" not in res.sheet_names
    assert [m for m in caplog.messages if "op_statistic" in m] == [
        f"{path}: no {column} column; KernelTypeCompare reads none of its rows (comparison side)",
        f"Can't find any valid kernel type data (op_statistic.csv) in the file: {side} (comparison side)"]


def test_op_statistic_times_over_a_week_by_the_thousand_are_counted_with_separators(tmp_path):
    """The count of rows over a week carries thousands separators: the L1 op_statistic.csv's ForeachAddList row
    (as the test above cuts it) written for 1,200 op types, each with a Total Time(us) of 1e20."""
    from msprof_compare.loaders.ascend_text import read_op_statistic

    f = tmp_path / "op_statistic.csv"
    f.write_text("OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
                 + "".join(f"Op{i},AI_VECTOR_CORE,3,1e20,624.152,653.026,706.614,22.077\n" for i in range(1200)),
                 encoding="utf-8")
    warnings: list[str] = []
    df = read_op_statistic(str(f), warnings)
    assert warnings == [f"{f}: 1,200 row(s) with a time that lasts over a week (a damaged time?); their times read "
                        "as 0"]
    assert (df["Total Time(us)"] == 0).all() and len(df) == 1200


def test_op_statistic_without_two_time_columns_names_both(samples, tmp_path):
    """Two of the three time columns cut out (the L1 sample's op_statistic.csv, by csv): the line names both, in
    the order the export's header writes them (Min before Avg)."""
    from msprof_compare.loaders.ascend_text import read_op_statistic

    src = samples / L1 / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv"
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    keep = [j for j, c in enumerate(rows[0]) if c not in ("Min Time(us)", "Avg Time(us)")]
    assert len(keep) == len(rows[0]) - 2
    path = tmp_path / "op_statistic.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([[r[j] for j in keep] for r in rows])
    warnings: list[str] = []
    read_op_statistic(str(path), warnings)
    assert warnings == [f"{path}: no Min Time(us), Avg Time(us) column; KernelTypeCompare reads none of its rows"]


def test_op_statistic_zero_time_is_no_negative_time(tmp_path):
    """A time of 0 (a Min Time(us) of 0.000, an op that once took under a ns) is a time: the row keeps its
    times and no warning is given (only a time below 0 zeroes the row)."""
    from msprof_compare.loaders.ascend_text import read_op_statistic

    head = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
    f = tmp_path / "op_statistic.csv"
    f.write_text(head + "ForeachAddList,AI_VECTOR_CORE,3,1959.079,0.000,653.026,706.614,22.077\n")
    warnings: list[str] = []
    df = read_op_statistic(str(f), warnings)
    assert df["Total Time(us)"].tolist() == [1959.079] and df["Min Time(us)"].tolist() == [0.0]
    assert df["Max Time(us)"].tolist() == [706.614] and warnings == []


def test_kernel_details_without_input_shapes_or_step_ids(tmp_path):
    """A kernel_details.csv without the Input Shapes column (the first 40 rows of msinsight text level1 rank0,
    that column and Step Id cut): every kernel of a type is one group with shape "N/A", summed by hand with the
    csv module; without a Step Id every row reads as step -1, so a step asked for finds no row."""
    from msprof_compare.loaders.ascend_text import read_kernel_details

    src = DATA / "kernel_details_l1_head40.csv"
    with open(src, newline="") as fh:
        rows = list(csv.DictReader(fh))
    keep = [c for c in rows[0] if c not in ("Input Shapes", "Step Id")]
    f = tmp_path / "kernel_details.csv"
    with open(f, "w", newline="") as fh:
        w = csv.DictWriter(fh, keep, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    kd = read_kernel_details(str(f))
    assert "Input Shapes" not in kd.columns and kd["Step Id"].tolist() == [-1] * len(rows)
    by_type: dict[str, list[float]] = {}
    for r in rows:
        if r["Type"].strip() not in ("", "N/A"):
            by_type.setdefault(r["Type"].strip(), []).append(float(r["Duration(us)"]))
    groups = kernel_groups(npu(kernel_details=kd))
    assert groups["type"].tolist() == list(by_type) and set(groups["shape"]) == {"N/A"}
    assert groups["calls"].tolist() == [len(v) for v in by_type.values()]
    assert groups["total"].tolist() == pytest.approx([sum(v) for v in by_type.values()], abs=0.005)
    assert groups["max"].tolist() == pytest.approx([max(v) for v in by_type.values()], abs=0.005)
    assert kernel_groups(npu(kernel_details=kd), step=1).empty


def test_op_statistic_without_an_optional_time_column(tmp_path, caplog):
    """op_statistic.csv needs OP Type, Core Type, Count and Total Time(us); a file without Ratio(%) still feeds
    KernelTypeCompare, one without Min Time(us) cannot (its Min column would be made up): said in one warning
    naming the side."""
    from msprof_compare.loaders.ascend_text import read_op_statistic

    head = ["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)", "Max Time(us)"]
    row = ["ForeachAddList", "AI_VECTOR_CORE", "3", "1959.079", "624.152", "653.026", "706.614"]
    f = tmp_path / "op_statistic.csv"
    f.write_text(",".join(head) + "\n" + ",".join(row) + "\n")
    st = read_op_statistic(str(f), [])
    assert "Ratio(%)" not in st.columns
    assert kernels.kernel_type_table(npu(op_statistic=st)) == {
        ("ForeachAddList", "AI_VECTOR_CORE"): ["ForeachAddList", "AI_VECTOR_CORE", 1959.079, 653.026, 706.614, 624.152,
                                               3]}
    i = head.index("Min Time(us)")
    f.write_text(",".join(head[:i] + head[i + 1:]) + "\n" + ",".join(row[:i] + row[i + 1:]) + "\n")
    no_min = npu("b", op_statistic=read_op_statistic(str(f), []))
    assert kernels.kernel_type_table(no_min) == {}
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert kernels.build(ctx(npu("a", op_statistic=st), no_min, use_kernel_type=True)) == []
    assert caplog.messages == ["Can't find any valid kernel type data (op_statistic.csv) in the file: b (comparison "
                               "side)"]


def test_kernel_compare_figures_equal_reference_pair1_exactly(samples, reference_outputs):
    """Every number of KernelCompare (pair 1, through the loaders) equals the original's cell exactly (the
    0.5 % tolerance above would let a third decimal of an average pass), except the one documented tie of
    docs/differences.md: the TensorMove of 252.385 us (ours 252.39, the original's float sum 252.38)."""
    from msprof_compare import compare

    ours = compare(str(samples / L1), str(samples / L2), enable_kernel_compare=True).sheet("KernelCompare")
    ref = read_xlsx(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                    sheet_name="KernelCompare", header=2)
    assert list(ours.columns) == list(ref.columns) and len(ours) == len(ref) == 128
    tie = (ref["Total Duration(us)"] == 252.38).to_numpy()
    assert tie.sum() == 1 and ours["Total Duration(us)"][tie].tolist() == [252.39]
    for col in ref.columns:
        if ref[col].dtype.kind in "if":
            a = pd.to_numeric(ours[col], errors="coerce").to_numpy(dtype=float)[~tie]
            b = ref[col].to_numpy(dtype=float)[~tie]
            assert ((a == b) | (np.isnan(a) & np.isnan(b))).all(), col


def test_negative_kernel_durations_round_half_away_from_zero():
    """The text loader keeps a negative Duration(us) (with a warning); its 0.01 us figures round like the
    positive ones, half away from zero (Decimal ROUND_HALF_UP): -1.015 -> -1.02, -0.015 -> -0.02."""
    kd = pd.DataFrame({"Type": ["Add", "Add"], "Input Shapes": ["a", "a"], "Duration(us)": [-1.0, -0.015],
                       "dur": [-1000, -15]})
    g = kernel_groups(npu(kernel_details=kd))
    assert g[["total", "max", "min"]].values.tolist() == [[-1.02, -0.02, -1.0]]


def test_step_zero_is_a_step():
    """Step id 0 filters the rows like any other id, and a missing step 0 is refused."""
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    kd.loc[:9, "Step Id"] = 0
    with open(DATA / "kernel_details_l1_head40.csv", newline="") as fh:
        first10 = list(csv.DictReader(fh))[:10]
    valid = sum(r["Type"].strip() not in ("", "N/A") for r in first10)
    assert kernel_groups(npu(kernel_details=kd), 0)["calls"].sum() == valid < 40
    kd["Step Id"] = 50
    with pytest.raises(StepError, match="There is no kernel details information for step 0"):
        kernels.build(ctx(npu(kernel_details=kd), npu(kernel_details=kd), base_step=0, comparison_step=0))


def test_kernel_type_compare_refuses_step_zero(samples):
    from msprof_compare import compare

    pair = (str(samples / L1), str(samples / "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt"))
    with pytest.raises(StepError, match="Invalid step id: 0, please choose from the valid steps: 50"):
        compare(*pair, enable_kernel_compare=True, use_kernel_type=True, base_step=0, comparison_step=0)


def test_has_step_rows_reads_either_step_column():
    kd = pd.DataFrame({"Step ID": [3, 4], "Type": ["N/A", "N/A"]})
    assert kernels._has_step_rows(npu(kernel_details=kd), 4)
    assert not kernels._has_step_rows(npu(kernel_details=kd), 5)
    assert not kernels._has_step_rows(npu(), 4)


def test_trace_files_without_their_directory_say_why_there_are_no_kernels(samples, caplog):
    """MindSpore timeline files (pair 9d) are traces given alone, like a bare trace_view.json: the notice names
    the missing kernel_details.csv, not the original's advice about level0 and aic_metrics. Unlike a
    trace_view.json, a legacy timeline file has no profiling directory to give instead: the notice does not
    send the user looking for one (the message audit followed that advice to a refusal)."""
    from msprof_compare.api import compare

    root = samples / "mindinsight/tests/utils/resource/profiler"
    base = root / "PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/msprof_0_2_1.json"
    comp = root / "PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1/timeline/msprof_1_0_1.json"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(comp), enable_kernel_compare=True)
    assert "KernelCompare" not in res.sheet_names
    assert f"Can't find any valid kernels in the file: {base} (base side: a lone timeline file has no " \
        "kernel_details.csv)." in caplog.text
    assert "aic_metrics" not in caplog.text


def test_kernels_without_a_duration_count_as_zero_and_are_said(caplog):
    """A kernel of a valid Type whose Duration(us) is empty or N/A is a 0 us call (as the original), in one
    warning naming the count; kernels without a valid Type are not counted there."""
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    first = kd["Type"].astype(str).str.strip().tolist().index(next(
        t for t in kd["Type"].astype(str).str.strip() if t not in ("", "N/A", "nan")))
    kd["Duration(us)"] = kd["Duration(us)"].astype(object)
    kd.loc[first, "Duration(us)"] = "N/A"
    kd.loc[first + 1, "Duration(us)"] = None
    typ = kd.loc[first, "Type"].strip()
    shape = str(kd.loc[first, "Input Shapes"]).strip()
    with caplog.at_level(logging.WARNING):
        groups = kernel_groups(npu(path="k", kernel_details=kd))
    valid = kd.loc[[first, first + 1], "Type"].astype(str).str.strip()
    n = int((~valid.isin(["", "N/A", "nan"])).sum())
    assert f"k: {n} kernel(s) of a valid Type have no Duration(us)" in caplog.text
    row = groups[(groups["type"] == typ) & (groups["shape"] == (shape if shape not in ("", "nan") else "N/A"))]
    assert float(row["min"].iloc[0]) == 0.0
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        kernel_groups(npu(path="k", kernel_details=pd.read_csv(DATA / "kernel_details_l1_head40.csv")))
    assert "no Duration(us)" not in caplog.text


def test_step_id_zero_on_every_row_is_a_step(caplog):
    """Step ids start at 0 in a run profiled from its first iteration: a kernel_details.csv whose Step Id is 0
    on every row gives each kernel a step, so --base_step 0 builds KernelCompare from all of them (not the
    "gives no kernel a Step Id" warning of a column without ids). No sample numbers a step 0: the l1 excerpt
    with its Step Id column set to 0. Expected: the csv module's own grouping of the excerpt's rows."""
    kd = pd.read_csv(DATA / "kernel_details_l1_head40.csv")
    kd["Step Id"] = 0
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        (sheet,) = kernels.build(ctx(npu(kernel_details=kd), npu(kernel_details=kd), base_step=0, comparison_step=0))
    assert "Step Id" not in caplog.text
    expected = _by_hand(DATA / "kernel_details_l1_head40.csv")
    got = sheet.frame()
    assert list(zip(got["Kernel"], got["Input Shape"], strict=True)) == list(expected)
    assert got["Calls"].tolist() == got["Calls.1"].tolist() == [len(v) for v in expected.values()]
    assert got["Total Duration(us)"].tolist() == pytest.approx([sum(v) for v in expected.values()], abs=0.006)


def test_level0_db_kernels_of_no_op_type_are_said(samples, caplog):
    """A Level0 DB export names no op type (every COMPUTE_TASK_INFO opType is "N/A": plain SQL on the file), and
    every compute task counts in a DB's KernelCompare (reference-1 §7.4), so its sheet is one N/A row of all 187
    tasks, which a text export of that level leaves out. The run says why; a Level1 DB, whose tasks have types,
    is not named."""
    from dbutil import sql

    from msprof_compare.api import compare

    db0 = samples / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"
    db1 = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    f0 = db0 / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    assert sql(f0, "SELECT s.value, count(*) FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.opType "
                   "GROUP BY s.value") == [("N/A", 187)]
    with caplog.at_level(logging.INFO):
        res = compare(str(db0), str(db1), enable_kernel_compare=True)
    sheet = res.sheet("KernelCompare")
    na = sheet[sheet.iloc[:, 1] == "N/A"]
    assert len(na) == 1 and na.iloc[0]["Calls"] == 187
    said = [r for r in caplog.records if "names no op type" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING and str(db0) in said[0].getMessage()


@pytest.mark.parametrize("pair", [(L1, L2, -1), (L1, L2, 50),
                                  ("msinsight/test/data/pytorch/db/level1/rank0_ascend_pt",
                                   "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt", -1)])
def test_sheet_columns_are_the_frames_rows(samples, pair) -> None:
    """The sheet reads ``_group_columns`` as they are, the tests mostly as frames (``frameutil``): the same rows
    from both (NPU pair 1 whole and at step 50, the DB pair)."""
    from msprof_compare.loaders import load_profile

    base, comp, step = pair
    sides = [load_profile(str(samples / p), Options()) for p in (base, comp)]
    frames = [kernel_groups(p, step) for p in sides]
    columns = [kernels._group_columns(p, step) for p in sides]
    for f, c in zip(frames, columns, strict=True):
        assert list(f.columns) == list(c)
        for name in f.columns:
            assert f[name].tolist() == list(c[name]), name
    rows = cells(kernels.kernel_frame(*columns))
    assert len(rows) > 50 and rows == cells(kernels.kernel_frame(*frames))
    assert kernels._group_columns(sides[0], 7) is None and kernel_groups(sides[0], 7).empty


def _literal_kernel_rows(base: dict, comparison: dict) -> list[list]:
    """KernelCompare rows by the scalar rules, row by row (round per cell, ``diff_ratio`` per ratio)."""
    from msprof_compare.compare.table import diff_ratio

    def side(g: dict, k) -> list:
        if k not in g["key"].tolist():
            return [0.0, 0.0, None, None, None]
        i = g["key"].tolist().index(k)
        total, calls = round(float(g["total"][i]), 2), int(g["calls"][i])
        return [total, round(total / calls, 2) if calls else 0.0, round(float(g["max"][i]), 2),
                round(float(g["min"][i]), 2), calls]

    keys = list(dict.fromkeys(base["key"].tolist()))
    keys += [k for k in dict.fromkeys(comparison["key"].tolist()) if k not in keys]
    rows = []
    for k in keys:
        b, c = side(base, k), side(comparison, k)
        typ, shape = k
        rows.append([len(rows) + 1, typ, shape, *b, *c, diff_ratio(b[0], c[0])[1], diff_ratio(b[1], c[1])[1]])
    return rows


def test_kernel_sheet_cells_are_the_scalar_rules(samples) -> None:
    """The rows' rounded cells and ratios, computed over arrays, are those of ``round`` / ``diff_ratio`` per cell
    (NPU pair 1 both ways, with a key only one side has and a group without calls)."""
    from msprof_compare.loaders import load_profile

    sides = [kernels._group_columns(load_profile(str(samples / p), Options())) for p in (L1, L2)]
    sides[1] = {c: v[:-3] for c, v in sides[1].items()}  # keys only the base has
    odd = {c: (list(v) if isinstance(v, list) else v.copy()) for c, v in sides[0].items()}
    odd["calls"][0] = 0
    odd["total"][1] += 0.005  # a total that lies on a rounding tie
    for a, b in ((sides[0], sides[1]), (sides[1], sides[0]), (odd, sides[1])):
        got = cells(kernels.kernel_frame(a, b))
        assert got == _literal_kernel_rows(a, b)
        assert [type(x) for x in got[-1]] == [type(x) for x in _literal_kernel_rows(a, b)[-1]]


@given(st.lists(st.one_of(st.sampled_from(["MatMulV2", " MatMulV2", "N/A", " ", "", "1,2;3"]), st.none(),
                          st.just(math.nan), st.integers(0, 2)), max_size=30),
       st.sampled_from(["", "N/A"]))
def test_stripped_codes_cells_by_their_stripped_text(cells: list, empty: str) -> None:
    """``_stripped``: each cell's stripped text (blank or missing: ``empty``) through its code, one code per
    distinct text, numbered in first-appearance order."""
    codes, distinct = kernels._stripped(pd.Series(cells, dtype=object), empty)
    want = [("" if c is None or (isinstance(c, float) and c != c) else str(c).strip()) or empty for c in cells]
    assert [distinct[c] for c in codes.tolist()] == want
    assert distinct == list(dict.fromkeys(want))


@pytest.mark.parametrize("use_kernel_type, sheet", [(False, "KernelCompare"), (True, "KernelTypeCompare")])
def test_db_export_without_op_types_is_said_for_either_kernel_sheet(samples, caplog, use_kernel_type, sheet):
    """The msinsight Level0 DB exports name no op type of any compute task (COMPUTE_TASK_INFO.opType is N/A for
    all 187, read here from the DB itself), so either kernel sheet holds one N/A row of all 187 tasks. KernelCompare
    said so; the KernelTypeCompare of --use_kernel_type showed the lone N/A row without a word (found by the
    session-43 user review)."""
    import sqlite3

    from msprof_compare.api import compare

    dirs = [samples / f"msinsight/test/data/pytorch/db/level0/rank{r}_ascend_pt" for r in (0, 1)]
    db = dirs[0] / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    with sqlite3.connect(f"file:{db}?immutable=1", uri=True) as con:
        types = con.execute("SELECT s.value, COUNT(*) FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s "
                            "ON s.id = c.opType GROUP BY 1").fetchall()
    con.close()
    assert types == [("N/A", 187)]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(dirs[0]), str(dirs[1]), enable_kernel_compare=True, use_kernel_type=use_kernel_type)
    frame = res.sheet(sheet)
    assert len(frame) == 1 and frame.iloc[0, 1] == "N/A" and frame.iloc[0, -8] == 187  # base Calls
    said = [r.getMessage() for r in caplog.records if "names no op type" in r.getMessage()]
    assert said == [f"{d}: the database names no op type of its compute tasks (N/A: a Level0 export records "
                    f"none), so {sheet} shows them as one N/A type. ({side})"
                    for d, side in zip(dirs, ("base side", "comparison side"), strict=True)]


def test_kernel_type_rows_order_by_total_ratio_on_two_ranks(samples):
    """KernelTypeCompare rows go by Diff Total Ratio, descending and stable (base keys first, then the
    comparison's own), not by the Avg ratio: msinsight's st/level2 op_statistic.csv of rank 0 against rank 2
    (their Count columns differ, so the two ratios order the rows differently). Expected order by hand from the
    two files with the csv module: per (OP Type, Core Type), comparison Total Time / base Total Time to 4
    places, inf where the base lacks the key, 1.0 where both are 0."""
    root = samples / "msinsight/test/st/level2"
    files = [root / f"rank_{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/op_statistic.csv" for r in (0, 2)]

    def read(path: Path) -> dict:
        with open(path, newline="") as fh:
            return {(r["OP Type"], r["Core Type"]): r for r in csv.DictReader(fh)}

    b, c = (read(f) for f in files)
    keys = list(b) + [k for k in c if k not in b]

    def ratio(col: str, k: tuple) -> float:
        x, y = (float(side[k][col]) if k in side else 0.0 for side in (b, c))
        return 1.0 if not x and not y else math.inf if not x else round(y / x, 4)

    by_total = sorted(keys, key=lambda k: -ratio("Total Time(us)", k))
    assert by_total != sorted(keys, key=lambda k: -ratio("Avg Time(us)", k))  # the data tells the two apart
    rows = kernels.kernel_type_rows(*(kernels.kernel_type_table(npu(op_statistic=pd.read_csv(f))) for f in files))
    assert [tuple(r[1:3]) for r in rows] == by_total
    assert [r[0] for r in rows] == list(range(1, len(keys) + 1))


def test_a_side_without_input_shapes_is_said(tmp_path, caplog):
    """The NPU excerpt's kernel_details.csv without its Input Shapes column on the comparison side (session 60's
    fuzz: a column lost from the file): every kernel's shape read N/A, so KernelCompare paired none of them with
    the base's kernels of the same Type and a shape, without a word. The line names the file and its side (the copy
    as the comparison, then as the base); with both sides alike (the excerpt against itself) nothing is said."""
    import io
    import shutil

    from msprof_compare import compare

    src = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    copy = tmp_path / "x_ascend_pt"
    shutil.copytree(src, copy)
    f = copy / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(f.read_text(encoding="utf-8"), newline="")))
    col = rows[0].index("Input Shapes")
    assert any(r[col] not in ("", "N/A") for r in rows[1:])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(src), str(copy), enable_kernel_compare=True)
    assert not [r for r in caplog.records if "no Input Shapes column" in r.getMessage()]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(r[:col] + r[col + 1:] for r in rows)
    f.write_text(out.getvalue(), encoding="utf-8")
    for pair, side in (((src, copy), "comparison side"), ((copy, src), "base side")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(*map(str, pair), enable_kernel_compare=True)
        assert [r.getMessage() for r in caplog.records if "no Input Shapes column" in r.getMessage()] == [
            f"{copy}: kernel_details.csv has no Input Shapes column, so KernelCompare reads every kernel's shape as "
            f"N/A, and its kernels pair with none of the other side's of the same Type and a shape. ({side})"]
