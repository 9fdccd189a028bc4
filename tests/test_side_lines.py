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


# --------------------------------------------------------------------------- a line break inside a header name

KD = LEVEL1.format(0) + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv"


def _kernel_details(samples, tmp_path, name: bytes, written: bytes):
    """msinsight level1 rank 0's kernel_details.csv (CRLF line ends, quotes in its rows alone), its column ``name``
    written as
    ``written`` (a quoted name holding a line break: a hand-edited or damaged header), and the whole file as read
    by Python's csv module, which reads a quoted line break as part of the field."""
    import csv
    import io

    data = (samples / KD).read_bytes()
    head = data[:data.index(b"\r\n")]
    assert b'"' not in head and b"\r" not in head and data.count(b"," + name + b",") == 1
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(data.replace(b"," + name + b",", b"," + written + b",", 1))
    rows = list(csv.reader(io.StringIO(f.read_bytes().decode(), newline="")))
    return f, rows


@pytest.mark.parametrize("brk", [b"\r", b"\n", b"\r\n"])
def test_a_line_break_in_a_required_column_name_names_that_column(samples, tmp_path, brk):
    """The header was cut at its first line break, quoted or not, so "Ty<CR>pe" lost every column after it too:
    "missing required column(s): Type, Start Time(us), Duration(us)", two of them plainly there. The header now
    ends at its first line break outside quotes, as pandas and Python's csv read it: Type alone is missing, and
    the hint names the column whose name holds the break."""
    from msprof_compare.errors import ProfileError
    from msprof_compare.loaders.ascend_text import read_kernel_details

    f, rows = _kernel_details(samples, tmp_path, b"Type", b'"Ty' + brk + b'pe"')
    assert "Ty" + brk.decode() + "pe" in rows[0] and "Start Time(us)" in rows[0] and "Duration(us)" in rows[0]
    with pytest.raises(ProfileError) as err:
        read_kernel_details(str(f), [])
    assert err.value.message == "missing required column(s): Type"
    assert err.value.hint == f"column name(s) {'Ty' + brk.decode() + 'pe'!r} hold a line break: a damaged or " \
                             "hand-edited header?"


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("brk", [b"\r", b"\n", b"\r\n"])
def test_a_line_break_in_an_optional_column_name_is_said_and_the_columns_after_it_read(samples, tmp_path, monkeypatch,
                                                                                        brk, streamed):
    """"Input<CR>Shapes" (an optional column) cut the header there: the columns after it (the PMU columns, Output
    Shapes ...) were read as absent without a word, and the header's own line break was said as "1 line(s) read
    as part of an earlier row". Now the header reads whole: every column after it reads as in the unedited file,
    the rows are the file's (Python's csv count), and one line says the damaged name, read as no column. A file
    streamed from disk (over ``WHOLE_CSV_BYTES``) reads its header in chunks: the same."""
    from msprof_compare.loaders import ascend_text
    from msprof_compare.loaders.ascend_text import read_kernel_details

    whole = read_kernel_details(str(samples / KD), [])
    if streamed:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    f, rows = _kernel_details(samples, tmp_path, b"Input Shapes", b'"Input' + brk + b'Shapes"')
    said: list[str] = []
    got = read_kernel_details(str(f), said)
    assert len(got) == len(rows) - 1 == len(whole)
    assert "Input Shapes" in whole.columns and "Input Shapes" not in got.columns
    after = [c for c in whole.columns if c != "Input Shapes" and c in rows[0]
             and rows[0].index(c) > rows[0].index("Input" + brk.decode() + "Shapes")]
    assert after  # the PMU columns after it, read in the unedited file
    for c in after:
        assert got[c].equals(whole[c]), c
    assert said == [f"{f}: column name(s) {'Input' + brk.decode() + 'Shapes'!r} hold a line break (a damaged or "
                    "hand-edited header?): read as no column"]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_quote_inside_an_unquoted_column_name_is_part_of_the_name(samples, tmp_path, monkeypatch, streamed):
    """A quote that does not open its field (``Input "Shapes``) is a character of the name to pandas and Python's
    csv, not the start of a quoted name. The header's end was found by counting quotes, so one quote took the
    header on over the rows up to the next odd one, and a file read before session 68 was refused as "malformed
    CSV header: new-line character seen in unquoted field - do you need to open the file in universal-newline
    mode?". It reads again: every row (Python's csv count) and every other column as in the unedited file."""
    from msprof_compare.loaders import ascend_text
    from msprof_compare.loaders.ascend_text import read_kernel_details

    whole = read_kernel_details(str(samples / KD), [])
    if streamed:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    f, rows = _kernel_details(samples, tmp_path, b"Input Shapes", b'Input "Shapes')
    assert 'Input "Shapes' in rows[0] and len(rows[0]) == len(rows[1])  # Python's csv: one name, the header whole
    said: list[str] = []
    got = read_kernel_details(str(f), said)
    assert len(got) == len(rows) - 1 == len(whole) and said == []
    assert "Input Shapes" not in got.columns and set(got.columns) == set(whole.columns) - {"Input Shapes"}
    for c in got.columns:
        assert got[c].equals(whole[c]), c


def test_a_quote_inside_a_required_column_name_names_that_column_alone(samples, tmp_path):
    """``Ty"pe``: Type alone is missing (the name as written matches none), where the header ran on into the rows
    and was refused with Python's "do you need to open the file in universal-newline mode?"."""
    from msprof_compare.errors import ProfileError
    from msprof_compare.loaders.ascend_text import read_kernel_details

    f, rows = _kernel_details(samples, tmp_path, b"Type", b'Ty"pe')
    assert 'Ty"pe' in rows[0] and "Start Time(us)" in rows[0] and "Duration(us)" in rows[0]
    with pytest.raises(ProfileError) as err:
        read_kernel_details(str(f), [])
    assert (err.value.message, err.value.hint) == ("missing required column(s): Type", None)
