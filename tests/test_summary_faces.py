"""The Summary's three faces (console, the workbook's Summary sheet, the JSON report) say each fact in one wording:
on real pairs, every contributor table title and every sentence the console prints under the waterfall is found,
word for word, in the Summary sheet, and the JSON's notes are the console's. The sheet may add rows the console
has no room for (the row on operators outside every module, the validity checks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

TEXT = "msinsight/test/data/pytorch/text"
DB = "msinsight/test/data/pytorch/db"
REPO = Path(__file__).resolve().parents[1]
PAIRS = {
    "npu-text-level1-level2": (f"{TEXT}/level1/rank0_ascend_pt", f"{TEXT}/level2/rank0_ascend_pt"),
    "npu-db-level2-level1": (f"{DB}/level2/rank0_ascend_pt", f"{DB}/level1/rank0_ascend_pt"),
    "bundled-h100-mi300": ("sample_data/bert-small_h100.json.gz", "sample_data/bert-small_mi300.json.gz"),
}


def _faces(samples: Path, tmp_path: Path, pair: str) -> tuple[list[str], list[str], dict]:
    """(console lines, the Summary sheet's column A texts, the JSON document) of one run writing both reports."""
    base, comp = ((REPO if p.startswith("sample_data") else samples) / p for p in PAIRS[pair])
    if not (base.exists() and comp.exists()):
        pytest.skip("sample data not found")
    proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", str(base), "-d", str(comp),
                           "-o", str(tmp_path / "r.json"), "--output_format", "xlsx,json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sheet = pd.read_excel(tmp_path / "r.xlsx", sheet_name="Summary", header=None)
    col_a = [v for v in sheet[0].tolist() if isinstance(v, str)]
    return proc.stdout.splitlines(), col_a, json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))


def _console_titles(lines: list[str]) -> list[str]:
    """The titles of the console's contributor tables (a title line is "|  Top ... |", centred)."""
    cells = [line.strip("|").strip() for line in lines if line.startswith("|")]
    return [c for c in cells if c.startswith("Top ") and "|" not in c]


@pytest.mark.parametrize("pair", list(PAIRS))
def test_titles_and_sentences_read_alike_on_every_face(samples, tmp_path, pair):
    lines, col_a, doc = _faces(samples, tmp_path, pair)
    titles = _console_titles(lines)
    sheet_titles = [v for v in col_a if v.startswith("Top ")]
    assert titles and len(titles) == len(sheet_titles)
    # the sheet lists every time contributor, the console the first 10 (its title says so): else word for word
    assert [t.replace("; the first 10 shown)", ")") if t.startswith("Top Contributors") else t for t in titles] == \
        [t for t in sheet_titles]
    # every sentence under the waterfall (verdict, notes, the module lead, communication and memory lines)
    start = next(i for i, line in enumerate(lines) if "E2E Time Difference" in line)
    sentences = [line for line in lines[start:] if line and line[0] not in "+|["]
    assert sentences and [s for s in sentences if s not in col_a] == []
    summary = doc["summary"]
    assert f"{summary['verdict']}." in sentences
    for key, end in (("contributors_note", "."), ("memory_contributors_note", ".")):
        if summary[key]:
            assert f"Note: {summary[key]}{end}" in sentences
    if summary["module_contributors_note"]:
        assert f"{summary['module_contributors_note']}:" in sentences


def test_time_contributors_title_says_what_the_shares_are_of_on_the_console(samples, tmp_path):
    """The DB pair: its operators changed by +0.003 ms net against an E2E change of +8.713 ms; the console's title
    said what the shares were of, but only the sheet added that it is not the E2E change printed above it."""
    lines, col_a, _doc = _faces(samples, tmp_path, "npu-db-level2-level1")
    title = next(t for t in _console_titles(lines) if t.startswith("Top Contributors"))
    assert title.startswith("Top Contributors (operator level: ")
    assert title.endswith(" of the operators' device-time change, not of the E2E change)") and title in col_a
