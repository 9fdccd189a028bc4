"""A validity check's note row seen on each face of one compare: the API's guards frame, the JSON (valid against
its schema), the Summary sheet (where the run has a time breakdown) and the console's block (its title with the
figures, then a line per Detail part and one for the reading). The notes whose Detail opens with a lead the log
leaves out (``checks._LOG_LEADS``) are checked so by the tests of each."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from logutil import blocks
from test_json_report import SCHEMA, validate

from msprof_compare.api import compare


@dataclass(frozen=True)
class Note:
    """One note check's words: its Check name, its console title, its Detail's lead and tail ("; " + reading),
    and which log lines speak of it (none may come where there is no row)."""

    check: str
    title: str
    lead: str
    tail: str
    speaks: Callable[[str], bool]

    def row(self, base: Path, comparison: Path, out: Path, caplog: pytest.LogCaptureFixture, both: bool = False,
            **options: Any) -> dict[str, Any] | None:
        """The row of a compare of ``base`` and ``comparison`` with ``options``, once its faces agree; None where
        there is none (and no log line speaks of it). ``both``: one input on both sides, whose block's title gives
        the one figure, "(both sides N)"."""
        out.mkdir(parents=True, exist_ok=True)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(base), str(comparison), **options)
        guards = res.guards
        rows = guards[guards["Check"] == self.check].to_dict("records")
        doc = json.loads(Path(res.to_json(str(out))).read_text(encoding="utf-8"))
        assert validate(doc, json.loads(SCHEMA.read_text())) == []
        assert [g for g in doc["summary"]["guards"] if g["Check"] == self.check] == rows
        if not rows:
            assert [m for m in caplog.messages if self.speaks(m)] == [] and blocks(caplog.messages, self.title) == []
            return None
        (row,) = rows
        assert row["Status"] == "note" and row["Detail"].startswith(self.lead)
        figures = ["n/a" if v is None else str(v) for v in (row["Base"], row["Comparison"])]
        (block,) = blocks(caplog.messages, self.title)
        assert block[0] == (f"{self.title} (both sides {figures[0]}):" if both else
                            f"{self.title} (base {figures[0]}, comparison {figures[1]}):")
        assert "; ".join(block[1:]) == row["Detail"][len(self.lead):] and block[-1] == self.tail[2:]
        if options.get("enable_profiling_compare"):
            ws = openpyxl.load_workbook(res.to_excel(str(out)))["Summary"]
            cells = [[c.value for c in r] for r in ws.iter_rows(min_col=1, max_col=5)]
            assert [row["Check"], row["Status"], row["Base"], row["Comparison"], row["Detail"]] in cells
        return row
