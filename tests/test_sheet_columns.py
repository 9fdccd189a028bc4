"""ApiCompare, KernelCompare and MemoryCompare as their builds return them (``api_frame``, ``kernel_frame``,
``memory.detail_frame`` of cells built column by column): each column's dtype, a blank cell kept as None (not NaN,
not 0 or ""), and every figure against the original's workbook (reference pair 1, text level 1 vs level 2, whose
sides hold the same names and kernels; pair 8b for memory rows of one side) or against sides written here by hand
where a side lacks a name or a kernel key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES
from frameutil import cells
from refpairs import PAIRS
from xlsxutil import read_xlsx

from msprof_compare.api import RunContext
from msprof_compare.compare import api_stats, kernels, memory
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

PAIR1 = "1-npu-text-l1-vs-l2"
PAIR8B = "8b-npu-traceview-file-vs-dir"

#: dtype kinds of each sheet's columns, by what a column holds: "i" the Order Id and the Calls, "O" names and
#: texts, "f" durations, sizes and ratios
API_KINDS = ["i", "O", "f", "f", "f", "i", "f", "f", "f", "i", "f", "f", "f", "f"]
KERNEL_KINDS = ["i", "O", "O", "f", "f", "f", "f", "i", "f", "f", "f", "f", "i", "f", "f"]
MEMORY_KINDS = ["i", "O", "O", "O", "O", "f", "O", "O", "O", "O", "f", "f", "f"]


def _context(samples: Path, pair: str) -> RunContext:
    opts = Options(enable_api_compare=True, enable_kernel_compare=True, enable_memory_compare=True)
    for p in PAIRS[pair]:
        if not (samples / p).exists():
            pytest.skip(f"{p} not in samples")
    return RunContext(*(load_profile(str(samples / p), opts) for p in PAIRS[pair]), opts)


@pytest.fixture(scope="module")
def pair1() -> RunContext:
    if not SAMPLES.is_dir():
        pytest.skip(f"sample data not found at {SAMPLES}")
    return _context(SAMPLES, PAIR1)


def _sheet(sheets: list, name: str) -> pd.DataFrame:
    return next(s.data for s in sheets if s.name == name)


def _reference(reference_outputs, pair: str, name: str) -> pd.DataFrame:
    return read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx", sheet_name=name, header=2)


def _kinds(frame: pd.DataFrame) -> list[str]:
    return [d.kind for d in frame.dtypes]


def _numbers(frame: pd.DataFrame, j: int) -> np.ndarray:
    return frame.iloc[:, j].to_numpy(dtype=float)


def test_api_compare_of_pair1_is_the_originals(pair1: RunContext, reference_outputs) -> None:
    """133 names on both sides: every name and figure the original's cell, exactly (both round to 0.01 ms)."""
    got = _sheet(api_stats.build(pair1), "ApiCompare")
    ref = _reference(reference_outputs, PAIR1, "ApiCompare")
    assert got.shape == ref.shape == (133, 14)
    assert _kinds(got) == API_KINDS
    assert got.iloc[:, 1].tolist() == ref.iloc[:, 1].tolist()
    for j in (0, *range(2, 14)):
        assert np.array_equal(_numbers(got, j), _numbers(ref, j)), ref.columns[j]


def test_kernel_compare_of_pair1_is_the_originals(pair1: RunContext, reference_outputs) -> None:
    """128 (type, shape) keys on both sides: every cell the original's, exactly, but the TensorMove of 252.385 us
    (docs/differences.md: the original's float sum rounds that tie to 252.38, ours to 252.39)."""
    got = _sheet(kernels.build(pair1), "KernelCompare")
    ref = _reference(reference_outputs, PAIR1, "KernelCompare")
    assert got.shape == ref.shape == (128, 15)
    assert _kinds(got) == KERNEL_KINDS
    for j in (1, 2):
        assert got.iloc[:, j].tolist() == ref.iloc[:, j].tolist()
    tie = ref.iloc[:, 3].to_numpy() == 252.38
    assert tie.sum() == 1 and got.iloc[:, 3][tie].tolist() == [252.39]
    for j in (0, *range(3, 15)):
        assert np.array_equal(_numbers(got, j)[~tie], _numbers(ref, j)[~tie]), ref.columns[j]


def test_memory_compare_of_pair1_is_the_originals(pair1: RunContext, reference_outputs) -> None:
    """115 operator pairs: names as the original's, sizes to 1e-12 relative (the order of float additions); an
    operator without allocations has a blank Allocated Details cell in both workbooks ("" here, which the
    workbook leaves blank)."""
    got = _sheet(memory.build(pair1), "MemoryCompare")
    ref = _reference(reference_outputs, PAIR1, "MemoryCompare")
    assert got.shape == ref.shape == (115, 13)
    assert _kinds(got) == MEMORY_KINDS
    for j in (1, 6):
        assert got.iloc[:, j].tolist() == ref.iloc[:, j].tolist()
    for j in (4, 9):
        assert (got.iloc[:, j] == "").tolist() == ref.iloc[:, j].isna().tolist()
    for j in (0, 5, 10, 11, 12):
        np.testing.assert_allclose(_numbers(got, j), _numbers(ref, j), rtol=1e-12, atol=0, err_msg=ref.columns[j])


def test_memory_rows_of_one_side_have_blank_cells(samples, reference_outputs) -> None:
    """Pair 8b (a bare trace_view.json, without memory, against its export): a row whose side has no operator
    shows that side's name, shape and type blank (None) and its size 0, as the original's. The original left 82
    base and 36 comparison sides empty; ours one fewer of each: it pairs one operator more (docs/differences.md,
    "Operator and module matching is a true maximum matching": 150 rows to the original's 151)."""
    got = _sheet(memory.build(_context(samples, PAIR8B)), "MemoryCompare")
    ref = _reference(reference_outputs, PAIR8B, "MemoryCompare")
    assert (len(got), len(ref)) == (150, 151)
    assert _kinds(got) == MEMORY_KINDS
    rows = cells(got)
    for names, size, want in ((slice(1, 4), 5, int(ref.iloc[:, 1].isna().sum()) - 1),
                              (slice(6, 9), 10, int(ref.iloc[:, 6].isna().sum()) - 1)):
        empty = [r for r in rows if r[names] == [None, None, None]]
        assert len(empty) == want
        assert {r[size] for r in empty} == {0.0}
        assert not [r for r in rows if None in r[names] and r[names] != [None, None, None]]


def test_api_sheet_of_a_side_lacking_names() -> None:
    # base: a (2 calls, 3.0 ms), b (1 call, 1.0 ms); comparison: b (2 calls, 5.0 ms), c (1 call, 0.5 ms)
    base = {"name": np.array(["a", "b"], object), "total_ms": [3.0, 1.0], "self_ms": [2.0, 1.0],
            "calls": np.array([2, 1])}
    comp = {"name": np.array(["b", "c"], object), "total_ms": [5.0, 0.5], "self_ms": [4.0, 0.5],
            "calls": np.array([2, 1])}
    got = api_stats.api_frame(base, comp)
    rows = cells(got)
    # name, then each side's total, self, avg (total / calls, 0.0 without calls), calls, then four ratios
    # (comparison / base, 4 places; inf where only the comparison has it, 0.0 where only the base has it)
    assert rows == [
        [1, "a", 3.0, 2.0, 1.5, 2, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0],
        [2, "b", 1.0, 1.0, 1.0, 1, 5.0, 4.0, 2.5, 2, 5.0, 4.0, 2.5, 2.0],
        [3, "c", 0.0, 0.0, 0.0, 0, 0.5, 0.5, 0.5, 1, float("inf"), float("inf"), float("inf"), float("inf")],
    ]
    assert _kinds(got) == API_KINDS  # a side's absent name reads 0, not blank: the columns stay numeric


def test_kernel_sheet_of_a_side_lacking_a_key() -> None:
    # base: (MatMul, "2,2") 2 calls 10 us (max 6, min 4); comparison: (MatMul, "2,2") 1 call 7 us, (Add, N/A) 1 call
    base = {"key": [("MatMul", "2,2")], "type": ["MatMul"], "shape": ["2,2"], "total": np.array([10.0]),
            "calls": np.array([2]), "max": np.array([6.0]), "min": np.array([4.0])}
    comp = {"key": [("MatMul", "2,2"), ("Add", "N/A")], "type": ["MatMul", "Add"], "shape": ["2,2", "N/A"],
            "total": np.array([7.0, 1.5]), "calls": np.array([1, 1]), "max": np.array([7.0, 1.5]),
            "min": np.array([7.0, 1.5])}
    got = kernels.kernel_frame(base, comp)
    # total, avg, max, min, calls a side (0.0, 0.0 and three blanks where it lacks the key); total and avg ratios
    assert cells(got) == [
        [1, "MatMul", "2,2", 10.0, 5.0, 6.0, 4.0, 2, 7.0, 7.0, 7.0, 7.0, 1, 0.7, 1.4],
        [2, "Add", "N/A", 0.0, 0.0, None, None, None, 1.5, 1.5, 1.5, 1.5, 1, float("inf"), float("inf")],
    ]
    # the base's max, min and calls hold a blank: object columns keeping None (a blank cell, not NaN), the
    # present cells as they are (float, float, int); the comparison's columns stay numeric
    assert _kinds(got) == KERNEL_KINDS[:5] + ["O", "O", "O"] + KERNEL_KINDS[8:]
    assert [type(v) for v in got.iloc[0, 5:8]] == [float, float, int]
