"""Loader lines session 67 left vague (left68a): the optional side files' lines (profiler_metadata.json,
profiler_info.json) name their side as the CSVs' and communication.json's do, on the msinsight level1 text job's
ranks 0 and 1, copied and damaged one file at a time."""

from __future__ import annotations

import shutil

import pytest
from cliutil import run_inproc

LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank{}_ascend_pt"
ABSENT = "no process-group names or distributed settings from it"


def _pair(samples, tmp_path):
    """Ranks 0 (base) and 1 (comparison) copied: two folders whose paths differ by one digit."""
    base, comp = tmp_path / "rank0_ascend_pt", tmp_path / "rank1_ascend_pt"
    shutil.copytree(samples / LEVEL1.format(0), base)
    shutil.copytree(samples / LEVEL1.format(1), comp)
    return base, comp


def _lines(err: str, name: str) -> list[str]:
    """The log lines of ``err`` that name file ``name`` (after ``[time][LEVEL] ``)."""
    return [line.split("] ", 1)[1] for line in err.splitlines() if name in line and "] " in line]


@pytest.mark.parametrize(("damage", "problem"), [
    ("dir", "a directory, not a file"),
    ("[1]", "the file holds an array where an object is expected"),
    ('{"a": 1}}', "malformed JSON: "),
])
def test_profiler_metadata_lines_name_their_side(capsys, samples, tmp_path, damage, problem):
    """profiler_metadata.json read as absent (a directory, no object, malformed) was said after its path alone,
    where the other side files' lines name their side, and ranks 0 and 1 differ by one digit. The side now
    opens the line's parenthesis as communication.json's does: "read as absent (comparison side: no ...)"."""
    base, comp = _pair(samples, tmp_path)
    meta = comp / "profiler_metadata.json"
    meta.unlink()
    if damage == "dir":
        meta.mkdir()
    else:
        meta.write_text(damage)
    flags = ("--enable_profiling_compare",)
    for b, d, side in ((base, comp, "comparison side"), (comp, base, "base side"), (comp, comp, "both sides")):
        code, _, err = run_inproc(capsys, "-bp", str(b), "-d", str(d), "-o", str(tmp_path / side), *flags)
        lines = _lines(err, "profiler_metadata.json")
        assert code == 0 and len(lines) == 1, lines
        assert lines[0].startswith(f"{meta}: {problem}")
        assert lines[0].endswith(f"; read as absent ({side}: {ABSENT})")


@pytest.mark.parametrize(("text", "said"), [
    ("[1]", "{info}: Invalid profiler info. ({side})"),
    ("{", "Failed to read profiler_info.json: {info}: truncated JSON ("),
])
def test_profiler_info_lines_name_their_side(capsys, samples, tmp_path, text, said):
    """profiler_info.json that holds no object, or cannot be decoded, is the original's warning after the file's
    path, which named no side where ranks 0 and 1 differ by one digit: the side now follows, as the other side
    files' lines have it."""
    base, comp = _pair(samples, tmp_path)
    info = comp / "profiler_info_1.json"
    info.write_text(text)
    for b, d, side in ((base, comp, "comparison side"), (comp, base, "base side"), (comp, comp, "both sides")):
        code, _, err = run_inproc(capsys, "-bp", str(b), "-d", str(d), "-o", str(tmp_path / side),
                                  "--enable_profiling_compare")
        lines = _lines(err, "profiler_info_1.json")
        assert code == 0 and len(lines) == 1, lines
        assert lines[0].startswith(said.format(info=info, side=side))
        assert lines[0].endswith(f"({side})")


def test_empty_communication_json_names_its_side(capsys, samples, tmp_path):
    """A 0-byte communication.json is read as no communication data with the line "<file>: The communication.json
    file is empty.", which named no side where the line for a missing one does: it now follows, as there."""
    base, comp = _pair(samples, tmp_path)
    comm = comp / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    assert comm.stat().st_size
    comm.write_bytes(b"")
    for b, d, side in ((base, comp, "comparison side"), (comp, base, "base side"), (comp, comp, "both sides")):
        code, _, err = run_inproc(capsys, "-bp", str(b), "-d", str(d), "-o", str(tmp_path / side),
                                  "--enable_profiling_compare")
        assert code == 0 and _lines(err, "communication.json") == [
            f"{comm}: The communication.json file is empty. ({side})"]
