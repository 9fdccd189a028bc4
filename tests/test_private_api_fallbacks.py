"""The private pandas APIs the package takes for speed each have a public fallback: here each fallback runs
(the private attribute taken away, as a future pandas might) and must build the frame the fast path builds.

``model.frame_of``'s fallback is checked in ``test_model.py::test_frame_of_equals_the_public_constructor``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from msprof_compare.compare.table import frame_from_rows, plain_frame


def _same(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    assert list(slow.dtypes) == list(fast.dtypes)
    pd.testing.assert_frame_equal(slow, fast, check_exact=True)
    assert type(slow.columns) is type(fast.columns) and type(slow.index) is type(fast.index)
    for c in fast.columns:
        assert [type(v) for v in slow[c].tolist()] == [type(v) for v in fast[c].tolist()]


#: Detail-sheet rows (a one-sided KernelCompare row leaves its text cells None), mixed and odd columns.
_ROWS = [
    ([[1, "aten::add", 0.12, 2, math.inf], [2, "aten::mm", 1.5, 1, 0.8333]], 5),
    ([[1, "Conv2D", None, 3.0, None], [2, None, "Add", None, 4]], 5),  # text with None stays object with None
    ([["a", None], [None, None]], 2), ([["x", 1.0], [math.nan, 2.0]], 2), ([[2**70, True]], 2),
    ([[np.float64(1.5), np.int64(3)]], 2), ([[1, "a"]], 4), ([], 3),
]


@pytest.mark.parametrize("rows, ncols", _ROWS)
def test_frame_from_rows_fallback_is_the_fast_frame(rows: list, ncols: int, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = frame_from_rows(rows, ncols)
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")
    _same(fast, frame_from_rows(rows, ncols))


_COLUMNS = [
    {"name": np.array(["aten::add", "aten::mm"], dtype=object), "dur": np.array([3, 4]), "ms": [0.1, 0.2]},
    {"Step": ["Base E2E", "Conv"], "Base(ms)": pd.array([1.5, None], dtype="Float64"),
     "n": pd.array([1, None], dtype="Int64"), "cum": np.array([1.0, 2.0])},
    {"Status": pd.Series(["warn", None], dtype=object), "Base": pd.Series([1, 0.5], dtype=object)},
    {"mixed": [1, 2.5], "text_nan": ["x", math.nan], "obj": np.array([1.5, "a"], dtype=object), "b": [True, False]},
    {"big": [2**70, 1], "text_none": np.array(["a", None], dtype=object), "empty_text": ["", "a"]},
]


@pytest.mark.parametrize("columns", _COLUMNS)
def test_plain_frame_fallback_is_the_fast_frame(columns: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = plain_frame(columns)
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")
    _same(fast, plain_frame(columns))
