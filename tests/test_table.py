"""The shared diff / ratio rule of every detail sheet (reference-2 §0.1)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from msprof_compare.compare.table import (
    TEXT_DTYPE,
    column_at,
    diff_ratio,
    exact_diffs,
    frame_from_columns,
    frame_from_rows,
    ms3,
    ms3_of,
    own_array,
    plain_frame,
)
from msprof_compare.model import column_index, object_array


def test_diff_ratio_unit_facts():
    """reference-2 §0.1 UT facts, and its consequence: a diff is rounded to 0.01 (0.019 - 0.014 shows 0)."""
    assert diff_ratio(10, 15) == (5.0, 1.5)
    assert diff_ratio(2.5, 3.75) == (1.25, 1.5)
    assert diff_ratio(20, 10) == (-10.0, 0.5)
    assert diff_ratio(0, 0) == (0.0, 1.0)
    assert diff_ratio(0, 5) == (5.0, math.inf)
    assert diff_ratio(-10, -5) == (5.0, 0.5)
    assert diff_ratio(0.014, 0.019) == (0.0, 1.3571)
    assert diff_ratio(1.234, 2.3456) == (1.11, 1.9008)


def test_a_diff_that_rounds_to_zero_is_positive_zero(samples):
    """-0.003 rounds to -0.0 in Python, which the workbook and the JSON showed as "-0". NPU pair 1's default run
    has such diffs (operators a few us faster, modules' self times): every numeric cell of every sheet must be
    free of the negative zero."""
    import numpy as np

    from msprof_compare.api import compare
    from msprof_compare.compare.table import diff_ratios

    assert math.copysign(1.0, diff_ratio(1.004, 1.001)[0]) == 1.0
    assert math.copysign(1.0, diff_ratios(np.array([1.004]), np.array([1.001]))[0][0]) == 1.0
    text = samples / "msinsight/test/data/pytorch/text"
    res = compare(str(text / "level1/rank0_ascend_pt"), str(text / "level2/rank0_ascend_pt"))
    negative_zeros = {}
    for sheet in res.sheets:
        for col in sheet.data.columns:
            vals = [v for v in sheet.data[col].tolist() if isinstance(v, float) and v == 0 and math.copysign(1, v) < 0]
            if vals:
                negative_zeros[(sheet.name, col)] = len(vals)
    assert negative_zeros == {}


#: Rows shaped as the detail sheets' (ApiCompare: order, name, floats, calls; a one-sided KernelCompare row with
#: None cells), and odd columns: mixed int / float, text with NaN, an int beyond int64, a bool, numpy scalars,
#: rows shorter and longer than the sheet.
_ROWS = [
    ([[1, "aten::add", 0.12, 0.05, 0.06, 2, 0.0, 0.0, 0.0, 0, 1.0, math.inf],
      [2, "aten::mm", 1.5, 1.5, 1.5, 1, 1.25, 1.25, 1.25, 1, 0.8333, 0.8333]], 12),
    ([[1, "Conv2D", "N/A", 3.0, None], [2, "Add", "1,2", None, 4]], 5),
    ([[1, 2.5], [3, 4]], 2), ([["x", 1.0], [math.nan, 2.0]], 2), ([[2**70, True]], 2),
    ([[np.float64(1.5), np.int64(3)]], 2), ([[1, "a"]], 4), ([[1, 2, 3]], 2), ([], 3),
    # text mixed with ints or flags, and cells of lists, tuples or dicts: object cells as they are
    ([["a", [1, 2], (1,)], [3, [3, 4], (2, 3)], [True, [], {}]], 3), ([["a", [1]], ["b", "x"], [2**70, 1.5]], 2),
    ([["a", {"k": 1}], [1.5, ()]], 2), ([[{}, ["a"]], [{"b": [1]}, [np.nan]]], 2),
]


@pytest.mark.parametrize("rows, ncols", _ROWS)
def test_frame_from_rows_infers_as_pandas(rows, ncols):
    """frame_from_rows builds plain columns itself: the frame is the one pandas makes from the columns as lists
    (None columns as object Series), dtypes, values and labels alike."""
    want = pd.DataFrame({i: pd.Series(list(v), dtype=object) if None in v else list(v)
                         for i, v in enumerate(zip(*rows, strict=False))} if rows else
                        {i: pd.Series([], dtype=object) for i in range(ncols)}, columns=range(ncols))
    got = frame_from_rows(rows, ncols)
    assert list(got.dtypes) == list(want.dtypes)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert type(got.columns) is type(want.columns)
    for c in want.columns:
        assert [type(v) for v in got[c].tolist()] == [type(v) for v in want[c].tolist()]


_COLUMNS = [
    {"name": np.array(["aten::add", "aten::mm"], dtype=object), "dur": np.array([3, 4]), "ms": [0.1, 0.2]},
    {"Step": ["Base E2E", "Conv"], "Base(ms)": pd.array([1.5, None], dtype="Float64"),
     "n": pd.array([1, None], dtype="Int64"), "cum": np.array([1.0, 2.0])},
    {"Status": pd.Series(["warn", None], dtype=object), "Base": pd.Series([1, 0.5], dtype=object)},
    {"mixed": [1, 2.5], "text_nan": ["x", math.nan], "obj": np.array([1.5, "a"], dtype=object), "b": [True, False]},
    {"big": [2**70, 1], "np": [np.float64(1.0), np.float64(2.0)], "empty_text": np.array(["", "a"], dtype=object)},
    {"a": [], "b": np.zeros(0)}, {"scalar": "", "x": [1, 2]}, {"ragged": [1], "y": [1, 2]},
    {"indexed": pd.Series([1, 2], index=[5, 6]), "z": [1, 2]},
    # the Summary's one-row frames: flags, None cells, a list cell
    {"recorded": [False], "task": [None], "ties": [[]], "np_flag": [np.True_]},
    {"flags": [True, False], "nones": [None, None], "half": [None, 1.5], "text_none": ["a", None]},
    # object cells as they are: text with ints or flags, lists / tuples / dicts alone or among other cells
    {"text_int": ["a", 1], "text_flag": [True, "a"], "text_int_flag": ["a", 2, False], "pairs": [[1, 2], [3, 4]]},
    {"ragged_lists": [[1, 2], [3]], "tuples": [(1, 2), (3,)], "dicts": [{}, {"a": 1}], "mixed": [[1], None]},
    {"list_text": [["a"], "b"], "list_float": [[1], 1.5], "dict_int": [{"a": 1}, 2], "text_float": ["a", 1.5]},
]


@pytest.mark.parametrize("columns", _COLUMNS)
def test_plain_frame_is_the_constructors_frame(columns):
    """plain_frame gives the frame pd.DataFrame gives (dtypes, values, labels), or its error."""
    try:
        want = pd.DataFrame(columns)
    except ValueError:
        with pytest.raises(ValueError):
            plain_frame(columns)
        return
    got = plain_frame(columns)
    assert list(got.dtypes) == list(want.dtypes)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.columns.dtype == want.columns.dtype and got.index.equals(want.index)
    for c in want.columns:
        assert [type(v) for v in got[c].tolist()] == [type(v) for v in want[c].tolist()]
    order = list(columns)[::-1]
    pd.testing.assert_frame_equal(plain_frame(columns, order), pd.DataFrame(columns, columns=order))



def test_column_index_is_shared_and_keyed_by_label_type() -> None:
    """plain_frame's column Index is one shared object per label list (frames of the same table reuse it), and
    labels equal as dict keys but of other types (1, 1.0, True) keep an Index of their own dtype."""
    first = plain_frame({"a": [1, 2], "b": ["x", "y"]})
    assert plain_frame({"a": [3], "b": ["z"]}).columns is first.columns
    for labels in ([1, 2], [1.0, 2.0], [True, False]):
        got = column_index(labels)
        assert got.dtype == pd.Index(labels).dtype and got.tolist() == labels
        assert column_index(list(labels)) is got
    assert plain_frame({1.0: [1], 2.0: [2]}).columns.dtype == pd.DataFrame({1.0: [1], 2.0: [2]}).columns.dtype


@pytest.mark.parametrize("texts", [["a"], ["aten::mm", "", "aten::mm", "ß\u00e9"], ["x"] * 3])
def test_text_columns_are_pandas_text_arrays_of_their_own(texts: list) -> None:
    """A str column of a sheet is the array ``pd.array(texts, dtype=str)`` makes (type, dtype, values), over
    storage of its own: an object array handed in is not shared with the frame."""
    want = pd.array(texts, dtype=pd.Series(["x"]).dtype)
    src = np.array(texts, dtype=object)
    for got in (plain_frame({"t": list(texts)})["t"].array, plain_frame({"t": src})["t"].array,
                frame_from_rows([[t] for t in texts], 1)[0].array):
        assert type(got) is type(want) and got.dtype == want.dtype and got.tolist() == want.tolist()
    frame = plain_frame({"t": src})
    src[0] = "changed"
    assert frame["t"].tolist() == texts


_OBJECT_COLUMNS = [
    {"Check": np.array(["a", "b"], dtype=object), "Base": np.array([1, 0.5], dtype=object),
     "Status": np.array(["warn", None], dtype=object), "n": [1, 2]},
    {"Step": np.array(["E2E", math.nan], dtype=object), "cells": np.array([(1, 2), "x"], dtype=object)},
]


@pytest.mark.parametrize("columns", _OBJECT_COLUMNS)
def test_plain_frame_keeps_object_arrays_as_object_columns(columns: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """``objects=True``: the frame of the object arrays as object Series (no inference: counts stay ints beside a
    rate, text stays object), through the fast path and through pandas' constructor alike."""
    want = pd.DataFrame({c: pd.Series(v, dtype=object) if isinstance(v, np.ndarray) else v
                         for c, v in columns.items()})
    got = plain_frame(columns, objects=True)
    _same_frame(got, want)
    assert list(got.dtypes)[:2] == [np.dtype(object)] * 2
    _same_frame(plain_frame(columns, list(columns)[::-1], objects=True), want[list(columns)[::-1]])
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")
    _same_frame(plain_frame(columns, objects=True), want)

def _same_frame(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    assert list(slow.dtypes) == list(fast.dtypes)
    pd.testing.assert_frame_equal(slow, fast, check_exact=True)
    assert type(slow.columns) is type(fast.columns) and type(slow.index) is type(fast.index)
    for c in fast.columns:
        assert [type(v) for v in slow[c].tolist()] == [type(v) for v in fast[c].tolist()]


#: and for the fallbacks: text columns with None in them (pandas 3's constructor made them str, None -> NaN)
_NONE_TEXT_ROWS = [([[1, "Conv2D", None, 3.0, None], [2, None, "Add", None, 4]], 5), ([["a", None], [None, None]], 2)]
_NONE_TEXT_COLUMNS = [{"text_none": np.array(["a", None], dtype=object), "empty_text": ["", "a"]}]


@pytest.mark.parametrize("rows, ncols", _ROWS + _NONE_TEXT_ROWS)
def test_frame_from_rows_fallback_is_the_fast_frame(rows: list, ncols: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The private ``DataFrame._from_arrays`` taken away (as a future pandas might): the public fallback builds
    the frame the fast path builds."""
    fast = frame_from_rows(rows, ncols)
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")
    _same_frame(fast, frame_from_rows(rows, ncols))


@pytest.mark.parametrize("rows, ncols", _ROWS + _NONE_TEXT_ROWS)
def test_frame_from_columns_is_the_rows_frame(rows: list, ncols: int) -> None:
    """The cells given column by column (lists, tuples or fresh object arrays of them, as the module sheets build
    theirs): the frame ``frame_from_rows`` makes of the rows, dtypes and cell types alike."""
    want = frame_from_rows(rows, ncols)
    columns = list(zip(*rows, strict=False))[:ncols]
    for form in (list, tuple, object_array):
        _same_frame(frame_from_columns([form(c) for c in columns], ncols, len(rows)), want)


def test_frame_from_columns_takes_numeric_arrays_as_their_cells() -> None:
    """A float64, int64 or bool array is the column its cells make; another numeric dtype is read by its cells
    (float32 as Python floats: float64; uint8 as ints: int64)."""
    arrays = [np.array([0.5, math.nan, -0.0, math.inf]), np.array([3, -2, 2**62, 0]), np.array([True, False] * 2),
              np.array([0.1, 2.5, -1.0, 3.0], np.float32), np.array([0, 1, 255, 7], np.uint8)]
    got = frame_from_columns(arrays, 6, 4)
    _same_frame(got, frame_from_rows([list(r) for r in zip(*(a.tolist() for a in arrays), strict=True)], 6))


@pytest.mark.parametrize("columns", _COLUMNS[:5] + _NONE_TEXT_COLUMNS)
def test_plain_frame_fallback_is_the_fast_frame(columns: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = plain_frame(columns)
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")
    _same_frame(fast, plain_frame(columns))


@pytest.mark.parametrize("series", [
    pd.Series([1, 2]), pd.Series([1.5, float("nan")]), pd.Series([True, False]), pd.Series(["a", "b"]),
    pd.Series(["a", None], dtype=object), pd.Series(pd.to_datetime(["2020-01-01"])),
    pd.Series(np.array([1, 2], dtype="m8[ns]")), pd.Series(["x", "y"], dtype="category"),
    pd.Series([1, None], dtype="Int64"), pd.Series([], dtype=float)], ids=lambda s: str(s.dtype))
def test_own_array_is_the_series_array(series: pd.Series) -> None:
    """The public path gives the very array pandas' private ``Series._values`` holds (no copy, no wrapper):
    an ndarray for numpy dtypes, the ExtensionArray for the others."""
    got = own_array(series)
    assert got is series._values
    assert isinstance(got, np.ndarray) == (isinstance(series.dtype, np.dtype) and series.dtype.kind not in "mM")


@pytest.mark.parametrize("labels", [list(range(4)), ["Name", "a", "b", "c"], ["x", "x", 2, "x"]],
                         ids=["sheet", "named", "repeated"])
def test_column_at_is_iloc(labels: list) -> None:
    """``column_at`` gives what ``iloc[:, j]`` gives (values, dtype, name, index) for unique labels (the sheets'
    RangeIndex, named columns) and for repeated ones, where it is ``iloc`` itself."""
    frame = frame_from_rows([["op", 1.5, 2, None], ["op2", 0.25, 3, "s"]], 4)
    frame.columns = labels
    for j in range(4):
        got, want = column_at(frame, j), frame.iloc[:, j]
        pd.testing.assert_series_equal(got, want)
        assert got.tolist() == want.tolist()


def test_summary_totals_columns_skip_pandas_inference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-row frame shaped as the communication totals of NPU pair 1 (flags, None task cells, floats, ints) is
    built without pandas' per-column inference, which cost ~25 us a column; the frame is still the
    constructor's."""
    from msprof_compare.compare import table

    columns = {"op_types": [2], "changed": [1], "base_recorded": [True], "comparison_recorded": [True],
               "base_ms": [101.963203], "comparison_ms": [95.962016], "diff_ms": [-6.001187],
               "base_tasks_recorded": [False], "comparison_tasks_recorded": [False], "task": [None],
               "task_op": [None], "task_base_ms": [None], "task_diff_ms": [None]}
    inferred = []
    real = table.own_array
    monkeypatch.setattr(table, "own_array", lambda s: inferred.append(s) or real(s))
    got = plain_frame(columns, objects=True)
    assert inferred == []
    _same_frame(got, pd.DataFrame(columns))


def test_text_cells_read_columns_as_pandas_str_rule(samples: Path) -> None:
    """``text_cells`` reads columns of pandas' str dtype, of str objects and of int64 without converting them, and
    gives ``astype(str).to_numpy(dtype=object)`` cell for cell: every column of NPU pair 1's ModuleCompareStatistic
    and module / operator sheets, and columns of missing, mixed, float, bool and no cells."""
    from msprof_compare.api import compare
    from msprof_compare.compare.table import text_cells

    pt = samples / "msinsight/test/data/pytorch/text"
    result = compare(str(pt / "level1/rank0_ascend_pt"), str(pt / "level2/rank0_ascend_pt"))
    columns = [d.iloc[:, i] for name in ("ModuleCompareStatistic", "ModuleCompare", "ApiCompare", "KernelCompare")
               for d in [next(s.data for s in result.sheets if s.name == name)] for i in range(d.shape[1])]
    assert any(c.dtype == np.int64 for c in columns) and any(c.dtype == object for c in columns)
    columns += [pd.Series(v) for v in (["a", None, "b"], ["a", float("nan")], ["x", 1, 2.5], [1.5, 2.0],
                                       [True, False], [], [None, None], ["é", "[ TOTAL ]"], [2**62, -3])]
    columns += [pd.Series(["a", None], dtype=TEXT_DTYPE), pd.Series(["a", "b"], dtype=object)]
    # text with a number, and a text cell of a str subclass: neither is read as it is
    columns += [pd.Series(["a", 2.5], dtype=object), pd.Series(["a", np.str_("b")], dtype=object)]
    for col in columns:
        want = col.astype(str).to_numpy(dtype=object)
        got = text_cells(col)
        assert got.dtype == object and len(got) == len(want)
        assert [type(v) for v in got.tolist()] == [type(v) for v in want.tolist()], col
        assert pd.Series(got).equals(pd.Series(want)), col
        # the cells are the caller's: a write into them leaves the sheet as it was (pandas 3's str dtype handed out
        # its own array, which astype(str) did too)
        kept = col.copy(deep=True)
        got[:] = "changed"
        assert col.equals(kept) and not np.shares_memory(got, col.to_numpy(dtype=object)), col


#: Cells as the sheets hold them: whole ns in ms / us, halves of the 0.01 step (5 us in ms, 5 ns in us), and cells
#: no ns count holds.
_CELLS = st.one_of(st.integers(-10**12, 10**12).map(lambda ns: ns / 1e6),
                   st.integers(-10**9, 10**9).map(lambda ns: ns / 1e3),
                   st.integers(-10**6, 10**6).map(lambda k: k * 0.005),
                   st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([4.611686018427388e12, 4.6116860184273874e12, -4.6116860184273874e12, 0.0, -0.0]))


@given(st.lists(st.tuples(_CELLS, _CELLS), min_size=1, max_size=8), st.sampled_from([1000, 10**6]))
def test_exact_diffs_of_rows_are_each_rows_alone(pairs, ns_per_unit):
    """OverallMetrics and CommunicationCompare's op rows take their Diff Duration from one ``exact_diffs`` pass over
    all their rows (a scalar twin of the rule did one row at a time): each cell is the one the row alone gives, bit
    for bit, its sign included, whatever the other rows hold (cells at the 2**62 ns bound, non-finite ones)."""
    base, comparison = [b for b, _ in pairs], [c for _, c in pairs]
    got = exact_diffs(base, comparison, ns_per_unit).tolist()
    for g, b, c in zip(got, base, comparison, strict=True):
        want = float(exact_diffs([b], [c], ns_per_unit)[0])
        assert (math.isnan(g) and math.isnan(want)) or (g == want and math.copysign(1, g) == math.copysign(1, want))


def test_ms_change_shows_two_times_apart_and_no_percent_of_a_zero_base() -> None:
    """The verdict's and the rank lines' "base -> comparison (change, pct)" text: 999,500 -> 1,000,499 ns is
    0.9995 -> 1.0005 ms at 4 decimals (3 show both as 1.000), the change 999 ns = +0.0010 ms, 999 / 999,500 =
    +0.09995 % -> +0.10 %; a 0 base has no percent, and 0 -> 5 ns is told apart at 5 decimals (0.000005 ms rounds
    half up to 0.00001)."""
    from msprof_compare.compare.table import ms_change, pct_text

    assert ms_change(999_500, 1_000_499) == "0.9995 ms -> 1.0005 ms (+0.0010 ms, +0.10%)"
    assert ms_change(2_000_000, 1_000_000) == "2.000 ms -> 1.000 ms (-1.000 ms, -50.00%)"
    assert ms_change(0, 5) == "0.00000 ms -> 0.00001 ms (+0.00001 ms, N/A)"
    assert pct_text(0, 0) == "N/A"


def test_ms_alike_is_figures_and_change_alike_at_three_decimals() -> None:
    """Two whole-ns times read as one at the 0.001 ms shown where both and their change do: 1,000,000 and 1,000,003
    ns (1.000, 1.000, +0.000); 999,500 -> 1,000,499 read 1.000 and 1.000 but +0.001 (999 ns, a half up); 1,000,400
    -> 1,000,600 read 1.000 and 1.001 (+0.000). ``ms_change`` without a 0 base's percentage: 0 -> 1 ms reads
    "0.000 ms -> 1.000 ms (+1.000 ms)"."""
    from msprof_compare.compare.table import ms_alike, ms_change

    assert ms_alike(1_000_000, 1_000_003) and ms_alike(5, 5) and ms_alike(1_000_499, 1_000_000)
    assert not ms_alike(999_500, 1_000_499) and not ms_alike(1_000_400, 1_000_600) and not ms_alike(0, 500)
    assert ms_change(0, 1_000_000, zero_base_pct=False) == "0.000 ms -> 1.000 ms (+1.000 ms)"
    assert ms_change(2_000_000, 1_000_000, zero_base_pct=False) == "2.000 ms -> 1.000 ms (-1.000 ms, -50.00%)"


def test_ms3_of_is_ms3() -> None:
    """The kernel summaries' ms: ``ms3_of`` of an array gives ``ms3`` of each value, halves (away from zero),
    negatives and values past 2**53 ns among them."""
    rng = np.random.default_rng(7)
    ns = np.concatenate([np.arange(-3000, 3001), [499, 500, 1500, -1500, 2**53 + 501, 2**62, -(2**62)],
                         rng.integers(-(2**60), 2**60, 2000), rng.integers(0, 10**9, 2000) // 500 * 500])
    got = ms3_of(ns)
    assert got.dtype == np.float64
    assert [repr(v) for v in got.tolist()] == [repr(ms3(v)) for v in ns.tolist()]
