"""A comparator's per-side columns as a frame, for tests that read them as a table (the sheets read the
columns themselves)."""

from __future__ import annotations

import pandas as pd

from msprof_compare.compare import kernels, memory
from msprof_compare.compare.table import plain_frame
from msprof_compare.model import Profile

_GROUP_COLUMNS = ["type", "shape", "key", "total", "calls", "max", "min"]


def kernel_groups(profile: Profile, step: int = -1) -> pd.DataFrame:
    """``kernels._group_columns`` as a frame (columns ``_GROUP_COLUMNS``; no row when there is no group)."""
    got = kernels._group_columns(profile, step)
    return pd.DataFrame(columns=_GROUP_COLUMNS) if got is None else plain_frame(got)


def npu_records(profile: Profile) -> pd.DataFrame:
    """``memory._npu_columns`` as a frame (columns ``memory.RECORD_COLUMNS``; no row without records)."""
    got = memory._npu_columns(profile)
    return pd.DataFrame(columns=memory.RECORD_COLUMNS) if got is None else plain_frame(got)


def cells(sheet: pd.DataFrame) -> list[list]:
    """A sheet's frame as rows of the Python cells the workbook writes, read column by column: an int64 column's
    cells are ints, a float64 one's floats, an object one's as stored (None, a blank cell, stays None)."""
    columns = [sheet.iloc[:, j].tolist() for j in range(sheet.shape[1])]
    return [list(r) for r in zip(*columns, strict=True)]
