"""``columns.col_of``: a table column as a numpy array, as ``df[name].to_numpy(dtype)`` gives it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from msprof_compare.columns import col_of
from msprof_compare.model import frame


def test_col_of_equals_to_numpy() -> None:
    """``col_of`` is ``df[name].to_numpy(dtype)``: the same values and dtype, the frame's own array read-only
    (pandas 3's copy-on-write view; pandas 2 without copy-on-write hands out a writable one, which could change
    the frame: ``col_of`` never does), a converted one a new array; extension columns and duplicate names as
    pandas."""
    f = frame("ops", {"name": np.array(["aten::add", "", "aten::mm"], dtype=object),
                      "ts": np.array([3, 1, 2], dtype=np.int64), "dur": np.array([0, 5, 7], dtype=np.int64)})
    for name in ("name", "ts", "dur"):
        for dtype in (None, object, np.int64, np.float64) if name != "name" else (None, object):
            want, got = f[name].to_numpy(dtype=dtype), col_of(f, name, dtype)
            assert got.dtype == want.dtype and got.tolist() == want.tolist()
            assert got.flags.writeable == (not np.shares_memory(got, f[name].to_numpy()))
    ts = col_of(f, "ts", np.int64)
    with pytest.raises(ValueError):
        ts[0] = 9
    assert col_of(f, "ts", np.float64).flags.writeable
    text = pd.DataFrame({"s": pd.array(["a", None], dtype="string"), "d": [1, 2]})
    assert col_of(text, "s", object).tolist() == text["s"].to_numpy(dtype=object).tolist()
    dup = pd.DataFrame([[1, 2]], columns=["x", "x"])
    assert col_of(dup, "x").tolist() == dup["x"].to_numpy().tolist()
    with pytest.raises(KeyError):
        col_of(f, "missing")


class _Counted:
    """An attrs value that counts its deep copies (pandas copies a frame's attrs into every Series it builds)."""

    copies = 0

    def __deepcopy__(self, memo: dict) -> _Counted:
        _Counted.copies += 1
        return self


@pytest.mark.parametrize("dtype", ["str", "string", "Float64", "Int64", "boolean", "category"])
def test_extension_columns_as_to_numpy_without_the_series(dtype) -> None:
    """An extension column (pandas 3's ``str`` columns of every sheet, the nullable numbers) comes out as
    ``df[name].to_numpy(dtype)`` gives it, missing cells as pandas writes them, read from the column's own array:
    no Series is built, so the frame's ``attrs`` (the contributors' hold the notes' figures) are not copied."""
    values = {"str": ["a", None, "b"], "string": ["a", None, "b"], "Float64": [1.5, None, 2.0],
              "Int64": [1, None, 3], "boolean": [True, None, False], "category": ["x", None, "x"]}[dtype]
    f = pd.DataFrame({"c": pd.array(values, dtype=dtype), "n": [1, 2, 3]})
    f.attrs["note"] = _Counted()
    first = _Counted.copies
    f["c"]  # noqa: B018 - a Series of the column: whether this pandas copies the attrs into it (2.0 shares them)
    series_copies = _Counted.copies > first
    for to in (None, object):
        want = f["c"].to_numpy(dtype=to)
        before = _Counted.copies
        got = col_of(f, "c", to)
        assert _Counted.copies == before
        assert got.dtype == want.dtype and len(got) == len(want)
        assert [None if pd.isna(v) else v for v in got.tolist()] == [None if pd.isna(v) else v for v in want.tolist()]
        assert [type(v) for v in got.tolist()] == [type(v) for v in want.tolist()]
    assert _Counted.copies > first or not series_copies  # the Series of ``want`` copied them: the probe counts


@pytest.mark.parametrize("values", [pd.to_datetime([1, 2, 3]), pd.to_timedelta([1, 2, 3])])
def test_datetime_columns_stay_read_only(values) -> None:
    """A naive datetime64 / timedelta64 column is held as a pandas array of a numpy dtype: its own ``to_numpy`` is a
    writable view of the frame's data, where ``df[name].to_numpy()`` makes that view read-only (pandas 3's
    copy-on-write). ``col_of`` gives what pandas gives, so a write into the pulled column cannot change the frame."""
    f = pd.DataFrame({"t": values, "n": [1, 2, 3]})
    want, got = f["t"].to_numpy(), col_of(f, "t")
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert np.shares_memory(got, want) and got.flags.writeable == want.flags.writeable
    assert col_of(f, "t", object).tolist() == f["t"].to_numpy(dtype=object).tolist()
