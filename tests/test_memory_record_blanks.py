"""memory_record.csv rows whose Total Reserved(MB) is empty or N/A were left out of the peak (Mem Usage) without a
word where other rows held readings: a peak lower than the run's, unsaid. They are counted in one warning; a row
cut short before the column, or a cell of text, is said once, by its own line. On the torch_npu text fixture's
memory_record.csv (tests/data/npu: the first 30 rows of msinsight text level1 rank0's), cells edited; the peaks
wanted are computed here with the csv module."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import numpy as np

from msprof_compare.loaders import ascend_text, load_profile
from msprof_compare.options import Options

RUN = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
SRC = RUN / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
COLUMN = "Total Reserved(MB)"
SAID = ("Total Reserved(MB) value(s) are empty or N/A (an export writes a reading on every row: a damaged cell?); "
        "the peak reserved memory (Mem Usage) leaves those rows out")


def _rows() -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(SRC.read_text(), newline="")))
    return rows[0], rows[1:]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    path.write_text(out.getvalue())
    return path


def _peak(rows: list[list[str]], at: int) -> float:
    """The largest reading of the rows that hold one (a number)."""
    readings = []
    for r in rows:
        try:
            readings.append(float(r[at]))
        except (IndexError, ValueError):
            pass
    return max(readings)


def test_empty_and_na_readings_are_counted_in_one_line(tmp_path: Path) -> None:
    """Rows 1 and 4 (2,109.6 and 2,113.7 MB) emptied, row 9 N/A: one line counts the three; the peak is the largest
    of the other 27 rows' readings, those rows' cells are missing."""
    header, rows = _rows()
    at = header.index(COLUMN)
    assert len(rows) == 30 and all(r[at] for r in rows)
    for i, text in ((0, ""), (3, ""), (8, "N/A")):
        rows[i][at] = text
    f = _write(tmp_path / "memory_record.csv", header, rows)
    warnings: list[str] = []
    mb = ascend_text.read_memory_record(str(f), warnings)[COLUMN].to_numpy()
    assert warnings == [f"{f}: 3 {SAID}"]
    assert np.flatnonzero(np.isnan(mb)).tolist() == [0, 3, 8]
    assert np.nanmax(mb) == _peak(rows, at)


def test_a_short_row_and_a_text_cell_are_said_once(tmp_path: Path) -> None:
    """Row 2 cut after its Timestamp(us) (its reading missing: the short-row line says it), row 5 written "-" (the
    not-a-number line says it) and row 6 emptied: the empty-cell line counts row 6 alone."""
    header, rows = _rows()
    at = header.index(COLUMN)
    rows[1] = rows[1][:2]
    rows[4][at] = "-"
    rows[5][at] = ""
    f = _write(tmp_path / "memory_record.csv", header, rows)
    warnings: list[str] = []
    mb = ascend_text.read_memory_record(str(f), warnings)[COLUMN].to_numpy()
    assert warnings == [f"{f}: 1 row(s) end before the last column read; their missing cells read as empty",
                        f"{f}: 1 value(s) that are not numbers in column(s) Total Reserved(MB); read as missing",
                        f"{f}: 1 {SAID}"]
    assert np.flatnonzero(np.isnan(mb)).tolist() == [1, 4, 5]
    assert np.nanmax(mb) == _peak(rows, at)


def test_every_reading_missing_is_said_as_before(tmp_path: Path) -> None:
    """Every cell empty: the one line that says Mem Usage has no reading, not a second one counting the cells."""
    header, rows = _rows()
    at = header.index(COLUMN)
    for r in rows:
        r[at] = ""
    f = _write(tmp_path / "memory_record.csv", header, rows)
    warnings: list[str] = []
    ascend_text.read_memory_record(str(f), warnings)
    assert warnings == [f"{f}: none of its 30 Total Reserved(MB) value(s) is a number (empty or N/A cells); Mem Usage "
                        "has no reading"]


def test_a_run_reading_mem_usage_says_it_once(tmp_path: Path) -> None:
    """The fixture's folder with row 4 of memory_record.csv emptied, loaded for the memory comparison (its peak
    line): the line is among the profile's warnings once, and the peak is the other rows'."""
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(RUN, run)
    header, rows = _rows()
    at = header.index(COLUMN)
    rows[3][at] = ""
    f = _write(run / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", header, rows)
    prof = load_profile(str(run), Options(enable_memory_compare=True))
    assert [w for w in prof.warnings if str(f) in w] == [f"{f}: 1 {SAID}"]
    assert prof.memory_record[COLUMN].max() == _peak(rows, at)
