"""ApiCompare, KernelCompare and MemoryCompare are built from their cells column by column (``api_columns``,
``kernel_columns``, ``memory.detail_columns`` into ``frame_from_columns``); their row functions read the same
cells row by row. The sheet must be the frame those rows give (``frame_from_rows``): dtypes, None cells (blank in
the workbook) and values alike, on the real sample NPU pair 1 (text level 1 vs level 2) and, for the API and
kernel sheets, where a side lacks a name or a kernel key."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from msprof_compare.api import RunContext
from msprof_compare.compare import api_stats, kernels, memory
from msprof_compare.compare.optree import op_tree, operator_pairs
from msprof_compare.compare.table import frame_from_rows
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


@pytest.fixture(scope="module")
def pair1() -> RunContext:
    from conftest import SAMPLES

    if not SAMPLES.is_dir():
        pytest.skip(f"sample data not found at {SAMPLES}")
    opts = Options(enable_api_compare=True, enable_kernel_compare=True, enable_memory_compare=True)
    return RunContext(*(load_profile(str(SAMPLES / p), opts) for p in (L1, L2)), opts)


def _same_frame(got: pd.DataFrame, rows: list[list], ncols: int) -> None:
    """``got`` is ``frame_from_rows(rows, ncols)``: dtypes, cell types (None stays None) and values."""
    want = frame_from_rows(rows, ncols)
    assert list(got.dtypes) == list(want.dtypes)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for j in range(ncols):
        g, w = got.iloc[:, j].tolist(), want.iloc[:, j].tolist()
        assert [type(v) for v in g] == [type(v) for v in w], j


def _sheet(sheets: list, name: str) -> pd.DataFrame:
    return next(s.data for s in sheets if s.name == name)


def test_api_compare_is_the_frame_of_its_rows(pair1: RunContext) -> None:
    tables = [api_stats.side_table(op_tree(pair1, side)) for side in ("base", "comparison")]
    rows = api_stats.api_rows(*tables)
    assert {r[1] for r in rows} == set(tables[0]["name"].tolist()) | set(tables[1]["name"].tolist())
    _same_frame(_sheet(api_stats.build(pair1), "ApiCompare"), rows, 14)


def test_api_columns_of_a_side_lacking_names() -> None:
    # base: a (2 calls, 3.0 ms), b (1 call, 1.0 ms); comparison: b (2 calls, 5.0 ms), c (1 call, 0.5 ms)
    base = {"name": np.array(["a", "b"], object), "total_ms": [3.0, 1.0], "self_ms": [2.0, 1.0],
            "calls": np.array([2, 1])}
    comp = {"name": np.array(["b", "c"], object), "total_ms": [5.0, 0.5], "self_ms": [4.0, 0.5],
            "calls": np.array([2, 1])}
    rows = api_stats.api_rows(base, comp)
    # name, then each side's total, self, avg (total / calls, 0.0 without calls), calls, then four ratios
    # (comparison / base, 4 places; inf where only the comparison has it, 0.0 where only the base has it)
    assert rows == [
        [1, "a", 3.0, 2.0, 1.5, 2, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0],
        [2, "b", 1.0, 1.0, 1.0, 1, 5.0, 4.0, 2.5, 2, 5.0, 4.0, 2.5, 2.0],
        [3, "c", 0.0, 0.0, 0.0, 0, 0.5, 0.5, 0.5, 1, float("inf"), float("inf"), float("inf"), float("inf")],
    ]
    assert [type(v) for v in rows[0]] == [int, str, float, float, float, int] + [float, float, float, int] + \
        [float] * 4
    columns = api_stats.api_columns(base, comp)
    from msprof_compare.compare.table import frame_from_columns

    _same_frame(frame_from_columns(columns, 14, 3), rows, 14)


def test_kernel_compare_is_the_frame_of_its_rows(pair1: RunContext) -> None:
    groups = [kernels._group_columns(p) for p in (pair1.base, pair1.comparison)]
    rows = kernels.kernel_rows(*groups)
    assert {(r[1], r[2]) for r in rows} == {k for g in groups for k in g["key"].tolist()}
    _same_frame(_sheet(kernels.build(pair1), "KernelCompare"), rows, 15)


def test_kernel_columns_of_a_side_lacking_a_key() -> None:
    # base: (MatMul, "2,2") 2 calls 10 us (max 6, min 4); comparison: (MatMul, "2,2") 1 call 7 us, (Add, N/A) 1 call
    base = {"key": [("MatMul", "2,2")], "type": ["MatMul"], "shape": ["2,2"], "total": np.array([10.0]),
            "calls": np.array([2]), "max": np.array([6.0]), "min": np.array([4.0])}
    comp = {"key": [("MatMul", "2,2"), ("Add", "N/A")], "type": ["MatMul", "Add"], "shape": ["2,2", "N/A"],
            "total": np.array([7.0, 1.5]), "calls": np.array([1, 1]), "max": np.array([7.0, 1.5]),
            "min": np.array([7.0, 1.5])}
    rows = kernels.kernel_rows(base, comp)
    # total, avg, max, min, calls a side (0.0, 0.0 and three blanks where it lacks the key); total and avg ratios
    assert rows == [
        [1, "MatMul", "2,2", 10.0, 5.0, 6.0, 4.0, 2, 7.0, 7.0, 7.0, 7.0, 1, 0.7, 1.4],
        [2, "Add", "N/A", 0.0, 0.0, None, None, None, 1.5, 1.5, 1.5, 1.5, 1, float("inf"), float("inf")],
    ]
    from msprof_compare.compare.table import frame_from_columns

    got = frame_from_columns(kernels.kernel_columns(base, comp), 15, 2)
    _same_frame(got, rows, 15)
    assert got.dtypes.iloc[5].kind == "O" and got.iloc[1, 5] is None  # a blank max stays None (blank cell)


def test_memory_compare_is_the_frame_of_its_rows(pair1: RunContext) -> None:
    pairs = operator_pairs(pair1)
    mb, mc = memory.memory_index(pair1, "base"), memory.memory_index(pair1, "comparison")
    rows = memory.detail_rows(pairs, mb, mc)
    assert len(rows) == len(pairs.ia)
    _same_frame(_sheet(memory.build(pair1), "MemoryCompare"), rows, 13)
