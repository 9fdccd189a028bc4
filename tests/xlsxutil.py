"""Read a workbook sheet for a test, keeping text cells as written; the caption halves of its row 1."""

from __future__ import annotations

import re
from typing import Any

import openpyxl
import pandas as pd
from openpyxl.cell.cell import MergedCell


def read_xlsx(source: Any, sheet_name: Any = 0, **kwargs: Any) -> Any:
    """``pandas.read_excel`` where only empty cells are missing: its default NA strings ("N/A", "None",
    "NULL", ...) are real cell texts of these workbooks, and reading them as NaN hid differences."""
    return pd.read_excel(source, sheet_name=sheet_name, keep_default_na=False, na_values=[""], **kwargs)


def caption_bands(ws: Any) -> list[str]:
    """Row 1's caption halves of more than one column ("B1:H1"): runs of cells filled as one caption, green (base)
    or yellow (comparison), each holding one text (a merged range's later cells are read as its first)."""
    bands, run = [], []
    for cell in [*ws[1], None]:
        fill = (run[-1][1] if run and isinstance(cell, MergedCell) else
                cell.fill.fgColor.rgb if cell is not None and cell.fill.fill_type == "solid" else None)
        if run and fill != run[0][1]:
            texts = [c.value for c, _ in run if c.value is not None]
            assert len(texts) == 1, texts
            if len(run) > 1:
                bands.append(f"{run[0][0].coordinate}:{run[-1][0].coordinate}")
            run = []
        if fill in ("FF00FF00", "FFFFFF00"):
            run.append((cell, fill))
    return sorted(bands)


def within(inner: str, outer: str) -> bool:
    """Whether the row-1 range ``inner`` ("C1:D1") lies within ``outer``."""
    (a, b), (c, d) = ([openpyxl.utils.column_index_from_string(re.sub(r"\d", "", x)) for x in r.split(":")]
                      for r in (inner, outer))
    return c <= a <= b <= d
