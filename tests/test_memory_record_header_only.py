"""A text export's memory_record.csv of a header alone in a run that reads Mem Usage (session 66, left66f).

torch_npu and MindSpore write memory_record.csv only where memory was recorded: their CSV writers return without
writing a file for empty data (torch_npu's FileManager.create_csv_file, MindSpore's alike), so a run that allocated
nothing has no file, which is warned of and compared without Mem Usage ("The file memory_record.csv does not
exist."). A header alone is therefore a cut or edited copy, and the run is refused as for any side CSV without rows;
the error said what was wrong and no way on. It now says both, in its one line."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc
from test_memory_record_reads import LOST

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError

#: tests/data/npu/rank0_ascend_pt: an excerpt of msinsight's text level1 rank0 export (its README)
EXPORT = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
HINT = ("torch_npu and MindSpore write memory_record.csv only where memory was recorded, never a header alone: a cut "
        "or edited copy? Restore it, or move it out of the folder to compare without Mem Usage")


def _header_only(tmp_path: Path) -> Path:
    """A copy of the excerpt whose memory_record.csv keeps its header line alone (CRLF, as torch_npu ends it)."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(EXPORT, side)
    mr = side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    head = mr.read_bytes().splitlines()[0]
    assert head.startswith(b"Component,Timestamp(us),") and b"Total Reserved(MB)" in head
    mr.write_bytes(head + b"\r\n")
    return side


def test_header_only_memory_record_is_refused_with_the_way_on(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """The CLI exits 1 with one error line naming the file, what is wrong and the hint, and writes no workbook; with
    the file moved out of the folder, as the hint says, the run compares, warning that the file does not exist."""
    side = _header_only(tmp_path)
    mr = side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-d", str(side), "-bp", str(EXPORT), "--enable_profiling_compare",
                              "-o", str(out))
    assert code == 1 and "Traceback" not in err
    assert error_lines(err) == [f"error: {mr}: no data rows (comparison side: {HINT})"]
    assert not out.exists() or not any(out.iterdir())
    with pytest.raises(ProfileError) as exc:
        compare(str(side), str(EXPORT), enable_profiling_compare=True)
    assert (exc.value.message, exc.value.hint) == ("no data rows", HINT)
    mr.rename(tmp_path / "memory_record.csv")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(side), str(EXPORT), enable_profiling_compare=True)
    assert any(m.endswith(f"The file memory_record.csv does not exist. (base side: {LOST})") and str(side) in m
               for m in caplog.messages)
    assert res.sheet("OverallMetrics") is not None


def test_memory_only_run_leaves_the_peak_out_without_the_hint(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A memory-only run reads the file for the memory line's peak alone and fails nothing (as before): its warning
    keeps its words, the hint (a way past a refusal) left out."""
    side = _header_only(tmp_path)
    mr = side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(EXPORT), str(side), enable_memory_compare=True)
    assert [m for m in caplog.messages if "memory_record" in m] == [
        f"{mr}: no data rows; the memory line's peak reserved memory (Mem Usage) leaves this side out (comparison "
        "side)"]
