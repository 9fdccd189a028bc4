"""A text export's side CSV of bare CR line ends (old Mac line ends: pandas reads them as line ends, and since
session 66's f71ef4f such a file ending in a blank line reads) with a row cut short in its middle: the short-row
check counted LF line ends only, so it saw one line and said nothing, where the same file with CRLF or LF line ends
is said to hold a row that ends before the last column read (its missing cells read as empty). The joined-lines
check (a quote left open) counted LF line ends alone too (review66e)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from msprof_compare.loaders import ascend_text

MEMORY_RECORD = "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"
SAID = "1 row(s) end before the last column read; their missing cells read as empty"
NUL_SAID = ("{}: 1 NUL byte(s) in the rows (a damaged copy?); a cell holding one reads otherwise than written: a text "
            "cell as another name, a number cell as missing or cut short at it")


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_short_middle_row_of_a_memory_record_is_said_whatever_its_line_ends(samples: Path, tmp_path: Path,
                                                                             end: bytes) -> None:
    """msinsight text level1 rank1's memory_record.csv (1,004 rows, CRLF line ends as torch_npu wrote them), its 10th
    row cut after the Timestamp(us) field, so its Total Reserved(MB) (the last column read) is missing; written
    with CRLF, LF or bare CR line ends. The csv module counts the one short row; each file says it once, and the cut
    row's reading is missing (NaN), the others as written."""
    raw = (samples / MEMORY_RECORD).read_bytes()
    lines = raw.split(b"\r\n")
    assert lines[-1] == b"" and len(lines) == 1006
    lines[10] = b",".join(lines[10].split(b",")[:2])
    data = end.join(lines)
    rows = list(csv.reader(io.StringIO(data.decode(), newline="")))
    header = rows[0]
    last = header.index("Total Reserved(MB)")
    assert sum(1 for r in rows[1:] if r and len(r) <= last) == 1
    f = tmp_path / "memory_record.csv"
    f.write_bytes(data)
    warnings: list[str] = []
    got = ascend_text.read_memory_record(str(f), warnings)
    assert warnings == [f"{f}: {SAID}"]
    mb = got["Total Reserved(MB)"].to_numpy()
    want = [float(r[last]) if len(r) > last else float("nan") for r in rows[1:] if r]
    assert len(mb) == len(want) == 1004
    assert mb[9] != mb[9] and mb.tolist()[:9] == want[:9] and mb.tolist()[10:] == want[10:]


@pytest.mark.parametrize("end", [b"\r\n", b"\r"])
def test_nul_byte_in_the_rows_is_said_whatever_the_line_ends(samples: Path, tmp_path: Path, end: bytes) -> None:
    """The same memory_record.csv with a NUL byte written into the Component of its 5th row (a damaged copy): said
    with CRLF line ends, and with bare CR ones too, where the check took the whole file for its header line (no LF
    ends it) and said nothing; so it is with a quoted line break further down, where the header ran to that LF."""
    lines = (samples / MEMORY_RECORD).read_bytes().split(b"\r\n")
    assert lines[5].startswith(b"APP,")
    lines[5] = b"A\0P" + lines[5][3:]
    data = end.join(lines)
    assert data.count(b"\0") == 1
    f = tmp_path / "memory_record.csv"
    f.write_bytes(data)
    warnings: list[str] = []
    ascend_text.read_memory_record(str(f), warnings)
    assert [w for w in warnings if "NUL" in w] == [NUL_SAID.format(f)]
    # a line break in a quoted cell further down (its 20th row's Component, PTA+GE): the check ended the header at
    # that LF, so the NUL before it went unsaid with bare CR line ends (review66e)
    assert lines[20].startswith(b"PTA+GE,")
    lines[20] = b'"PTA\n+GE"' + lines[20][6:]
    f.write_bytes(end.join(lines))
    warnings = []
    ascend_text.read_memory_record(str(f), warnings)
    assert [w for w in warnings if "NUL" in w] == [NUL_SAID.format(f)]


def _physical_lines(text: str) -> int:
    """The non-blank lines of a CSV text, each ended by LF, CRLF or a bare CR (pandas' line ends), quotes ignored."""
    return sum(1 for line in re.split(r"\r\n|\r|\n", text) if line)


def _quote_left_open(samples: Path) -> list[bytes]:
    """memory_record.csv's lines with a quote opened at the start of its 5th row and closed inside the first cell
    of its 8th (a hand-edited copy): the rows between read as one."""
    lines = (samples / MEMORY_RECORD).read_bytes().split(b"\r\n")
    assert lines[5].startswith(b"APP,") and lines[8].startswith(b"APP,")
    lines[5] = b'"' + lines[5]
    lines[8] = b'AP"P' + lines[8][3:]
    return lines


def _read_three_joined(tmp_path: Path, data: bytes) -> tuple[Path, list[list[str]], pd.DataFrame, list[str]]:
    """``data`` written as memory_record.csv and read by ours, with the rows the csv module reads of it, which are
    3 fewer than its lines (the quote left open joins them)."""
    text = data.decode()
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    assert _physical_lines(text) - len(rows) == 3
    f = tmp_path / "memory_record.csv"
    f.write_bytes(data)
    warnings: list[str] = []
    return f, rows, ascend_text.read_memory_record(str(f), warnings), warnings


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_lines_joined_by_a_quote_left_open_are_said_whatever_the_line_ends(samples: Path, tmp_path: Path,
                                                                          end: bytes) -> None:
    """The same memory_record.csv with a quote opened before the Component of its 5th row and another inside that
    of its 8th (a hand-edited copy): the rows between read as one, their lines joined. The csv module reads 3 rows
    fewer than the file has lines; said with CRLF and LF line ends, and with bare CR ones too, where the check
    counted no line end and said nothing."""
    data = end.join(_quote_left_open(samples))
    f, rows, got, warnings = _read_three_joined(tmp_path, data)
    assert len(got) == len(rows) - 1 == 1001
    assert warnings == [f"{f}: 3 line(s) read as part of an earlier row (a line break inside a quoted field: a quote "
                        "left open?)"]


@given(st.lists(st.lists(st.text(alphabet='a1,"\n\r ', max_size=6), min_size=1, max_size=6), min_size=1, max_size=12),
       st.sampled_from(["\n", "\r\n", "\r"]))
def test_joined_lines_count_the_lines_the_csv_module_reads_into_an_earlier_row(rows: list[list[str]],
                                                                                 end: str) -> None:
    """``_joined_lines`` against Python's csv module on CSV text written by it (fields with commas, quotes and line
    breaks) with LF, CRLF or bare CR line ends: the non-blank lines beyond the header and the rows the csv module
    reads (blank ones, which pandas skips, left out). The header holds no line break, as no export's does. A field
    may hold a CR or an LF whatever the file's line ends (the csv module quotes both): the check counted a bare CR
    only in a file whose first line ends in one, so a quoted CR in an LF file went unsaid."""
    out = io.StringIO()
    cells = [[c.replace("\n", "").replace("\r", "") for c in rows[0]], *rows[1:]]
    csv.writer(out, lineterminator=end).writerows(cells)
    text = out.getvalue()
    read = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    want = max(_physical_lines(text) - len(read), 0)
    assert ascend_text._joined_lines(text.encode(), len(read) - 1) == want


KERNEL_DETAILS = "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_a_quote_left_open_is_said_whatever_the_line_ends(samples: Path, tmp_path: Path, end: bytes) -> None:
    """msinsight text level1 rank1's kernel_details.csv (191 kernels, CRLF line ends, quoted Input Shapes) with a
    stray quote written before the first field of its 49th row, the first whose fields hold no quote (in a row with
    quoted shapes the stray quote closes at them): the field runs to the next quote, in the next row, so the two
    lines read as one row. Written with CRLF, LF or bare CR line ends, each file says the same count of joined lines,
    the lines beyond the rows Python's csv module reads; with bare CRs it said none (LF line ends alone were
    counted) while a kernel was gone."""
    lines = (samples / KERNEL_DETAILS).read_bytes().split(b"\r\n")
    assert lines[-1] == b"" and len(lines) == 193
    assert b'"' not in lines[49] and all(b'"' in x for x in lines[1:49])
    lines[49] = b'"' + lines[49]
    data = end.join(lines)
    rows = list(csv.reader(io.StringIO(data.decode(), newline="")))
    inside = len([x for x in lines if x]) - len(rows)
    assert inside == 1
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(data)
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert len(kd) == len(rows) - 1 < 191
    assert [w for w in warnings if "earlier row" in w] == [
        f"{f}: {inside} line(s) read as part of an earlier row (a line break inside a quoted field: a quote left "
        "open?)"]


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_short_last_row_with_its_line_end_is_said_whatever_its_line_ends(samples: Path, tmp_path: Path,
                                                                         end: bytes) -> None:
    """The same memory_record.csv with its last row (the 1,004th) cut after the Timestamp(us) field, its line end
    kept: a row cut short, not a file cut short, so it reads with its reading missing and is said, as a short middle
    row is. With bare CR line ends the last-row check took the file for one that stops inside its last row, refused
    as 'truncated: the last row has 2 of 7 fields and no line end' beside the CR that ends it (it looked for an LF
    alone)."""
    lines = (samples / MEMORY_RECORD).read_bytes().split(b"\r\n")
    assert lines[-1] == b"" and len(lines) == 1006
    lines[-2] = b",".join(lines[-2].split(b",")[:2])
    data = end.join(lines)
    assert data.endswith(end)
    rows = [r for r in csv.reader(io.StringIO(data.decode(), newline="")) if r]
    last = rows[0].index("Total Reserved(MB)")
    assert len(rows) == 1005 and len(rows[-1]) == 2 <= last
    f = tmp_path / "memory_record.csv"
    f.write_bytes(data)
    warnings: list[str] = []
    mb = ascend_text.read_memory_record(str(f), warnings)["Total Reserved(MB)"].to_numpy()
    assert warnings == [f"{f}: {SAID}"]
    assert len(mb) == 1004 and mb[-1] != mb[-1]
    assert mb.tolist()[:-1] == [float(r[last]) for r in rows[1:-1]]


OPERATOR_DETAILS = "msinsight/server/src/test/test_data/test_rank_0/ASCEND_PROFILER_OUTPUT/operator_details.csv"


def test_a_stray_bare_cr_in_an_lf_file_hides_no_joined_line(samples: Path) -> None:
    """msinsight server's test_rank_0 operator_details.csv (LF line ends, as torch_npu wrote it; its quoted Input
    Shapes and Call Stack cells hold line breaks) with one bare CR inserted before the last field of its first
    row: pandas ends a line there, as at an LF, and reads one row more. ``_joined_lines`` told bare CRs only in a
    file whose first line ends in one, so that row came from no line it counted and one joined line went unsaid
    (16 of 17). The count wanted is the csv module's, on the file as written: its non-blank lines less its rows."""
    raw = (samples / OPERATOR_DETAILS).read_bytes()
    assert b"\r" not in raw
    text = raw.decode()
    want = _physical_lines(text) - sum(1 for r in csv.reader(io.StringIO(text, newline="")) if r)
    assert want == 17
    first_end = raw.index(b",0\naten::zero_,")
    data = raw[:first_end] + b"\r" + raw[first_end:]
    read = len(pd.read_csv(io.BytesIO(data), dtype=object))
    assert read == len(pd.read_csv(io.BytesIO(raw), dtype=object)) + 1
    assert ascend_text._joined_lines(data, read) == want


@pytest.mark.parametrize("end", [b"\r\n", b"\n"])
def test_lines_joined_by_a_quote_left_open_are_all_said_beside_a_stray_bare_cr(samples: Path, tmp_path: Path,
                                                                             end: bytes) -> None:
    """The memory_record.csv of the quote-left-open test above (its 5th to 8th rows read as one), with CRLF or LF
    line ends and a bare CR inserted after the Timestamp(us) of its 100th row, which pandas reads as two rows: the
    first cut short (said), the second the rest. Its 3 joined lines are said; 2 were, the split row taken for a
    line the check had not counted."""
    lines = _quote_left_open(samples)
    assert lines[100].startswith(b"PTA+GE,")
    cells = lines[100].split(b",")
    lines[100] = b",".join(cells[:2]) + b"\r," + b",".join(cells[2:])
    data = end.join(lines)
    f, rows, got, warnings = _read_three_joined(tmp_path, data)
    assert len(got) == len(rows) - 1 == 1002
    assert warnings == [f"{f}: {SAID}", f"{f}: 3 line(s) read as part of an earlier row (a line break inside a quoted "
                        "field: a quote left open?)"]


@pytest.mark.parametrize("end", [b"\r\n", b"\n"])
def test_a_bare_cr_inside_the_header_line_ends_it_for_the_nul_check(samples: Path, tmp_path: Path,
                                                                     end: bytes) -> None:
    """The memory_record.csv above, CRLF or LF, its header's last name written ``Device\\rT\\0ype`` (a damaged copy:
    a bare CR and a NUL). pandas ends the header at the CR and reads ``T\\0ype`` (pandas 2.0: ``T``) as a first
    row's Component, so the NUL is in the rows and is said, as is that row cut short. Pins session 67's review: the
    check ends the header at a bare CR in its line (``_header_end``), not at the first LF after it, which would
    leave this NUL unsaid."""
    lines = (samples / MEMORY_RECORD).read_bytes().split(b"\r\n")
    assert lines[0].endswith(b",Stream Ptr,Device Type")
    lines[0] = lines[0][:-len(b" Type")] + b"\rT\0ype"
    data = end.join(lines)
    seen = pd.read_csv(io.BytesIO(data), dtype=object)
    # pandas 3 reads the cell whole, pandas 2.0 cuts it at the NUL ("T"): the NUL warning's "cut short at it"
    assert list(seen.columns)[-1] == "Device" and len(seen) == 1005 and seen["Component"].iloc[0] in ("T\0ype", "T")
    f = tmp_path / "memory_record.csv"
    f.write_bytes(data)
    warnings: list[str] = []
    got = ascend_text.read_memory_record(str(f), warnings)
    assert len(got) == 1005 and got["Component"].iloc[0] == seen["Component"].iloc[0]
    assert warnings == [f"{f}: {SAID}", NUL_SAID.format(f)]
