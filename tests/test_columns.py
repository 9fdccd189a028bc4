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
