"""Reading one column of a pandas table as a numpy array, the way comparators and loaders pull them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, ExtensionDtype


def col_of(df: pd.DataFrame, name: str, dtype: Any = None) -> np.ndarray:
    """``df[name].to_numpy(dtype=dtype)`` without the Series: pandas builds one on every ``df[name]``
    (~17 us, most of a small table's pull), and the comparators pull a few hundred columns per compare.
    The frame's own array is returned read-only, as pandas' copy-on-write ``to_numpy`` view; a converted
    one is a new array. Extension columns (pandas' ``str``) are converted as ``Series.to_numpy`` converts them (their
    ``to_numpy``); duplicate names go through pandas."""
    loc = df.columns.get_loc(name)  # KeyError for a missing column, as df[name]
    values = _COLUMN_ARRAY(df, loc) if _COLUMN_ARRAY is not None and type(loc) is int else None
    if isinstance(values, ExtensionArray) and isinstance(values.dtype, ExtensionDtype):
        # what ``Series.to_numpy`` returns for an extension column (pandas 3's ``str`` columns of every sheet),
        # without the Series: building it copied the frame's ``attrs`` (deeply), ~30-50 us a pull of the
        # contributors frame, whose attrs hold the notes' figures. Not for an array of a numpy dtype (naive
        # datetime64 / timedelta64), whose ``to_numpy`` is a writable view of the frame's data: pandas makes it
        # read-only, as ``col_of`` hands out the frame's own arrays
        return values.to_numpy(dtype=dtype)
    if type(values) is not np.ndarray:  # a duplicate name, an old pandas, a datetime64 column
        return df[name].to_numpy(dtype=dtype)
    if dtype is None or values.dtype == dtype:
        out = values.view()
        out.flags.writeable = False
        return out
    return np.asarray(values, dtype=dtype)


#: pandas' own column getter, looked up once (a bound-method lookup per pull was ~5 % of ``col_of``).
_COLUMN_ARRAY = getattr(pd.DataFrame, "_get_column_array", None)
