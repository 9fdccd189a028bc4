"""Read a workbook sheet for a test, keeping text cells as written."""

from __future__ import annotations

from typing import Any

import pandas as pd


def read_xlsx(source: Any, sheet_name: Any = 0, **kwargs: Any) -> Any:
    """``pandas.read_excel`` where only empty cells are missing: its default NA strings ("N/A", "None",
    "NULL", ...) are real cell texts of these workbooks, and reading them as NaN hid differences."""
    return pd.read_excel(source, sheet_name=sheet_name, keep_default_na=False, na_values=[""], **kwargs)
