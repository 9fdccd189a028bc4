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
