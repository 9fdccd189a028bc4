"""Session 69's small leftovers (session 70): the zero Wait Time note given a step, ... Each figure here is read
from the raw files, not from the code's output."""

from __future__ import annotations

import csv
import io
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from test_injected_regressions import _text_steps_split
from test_overall_npu import BASE_ZERO, BOTH_ZERO

from msprof_compare import compare
from msprof_compare.loaders.ascend_text import _line_commas, _long_rows, read_kernel_details

LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def _wait_note(side: str, ms: str, step: int, sheet: bool = True) -> str:
    """``sheet``: whether the run writes CommunicationCompare (``--enable_profiling_compare`` alone does not)."""
    shown = "0.000s" if side == "Comparison" else BASE_ZERO
    absent = "" if sheet else \
        "; this run writes no CommunicationCompare: the enable_communication_compare option adds it"
    return (f"{side} row: its Wait Time {shown} is that of the HCCL plane that waits least in each communication "
            "group, as the original measures a text export, here a plane with no Notify_Wait; its planes hold "
            f"{ms} ms of Notify_Wait over the whole profile, which its Wait Time covers too (CommunicationCompare's "
            f"Notify_Wait rows hold step {step}'s alone{absent}).")


def _both_wait_note(ms: str, step: int) -> str:
    """The note of a self-compare, the same on both rows: one line names both."""
    return (f"Both rows: their Wait Time {BOTH_ZERO} is that of the "
            "HCCL plane that waits least in each communication group, as the original measures a text export, here "
            f"a plane with no Notify_Wait; each side's planes hold {ms} ms of Notify_Wait over the whole profile, "
            f"which its Wait Time covers too (CommunicationCompare's Notify_Wait rows hold step {step}'s alone).")


def test_zero_wait_time_note_given_a_step_says_its_figure_is_the_whole_profiles(samples: Path,
                                                                                  tmp_path: Path) -> None:
    """The level-1 export's one step cut in two at the optimizer's zero_grad (as a run of two steps writes it):
    its 112 Notify_Wait tasks (112.541 ms, summed here from the raw trace) all lie in step 51, after the cut.
    Given step 50, the text export's Wait Time still covers the whole profile (reference-1 §1.4), so the note
    keeps that figure, but CommunicationCompare has no row at all (the step holds no communication op): the note
    named "CommunicationCompare's Notify_Wait rows" as where its 112.541 ms were; it now says the figure is the
    whole profile's and the sheet's rows the step's."""
    export = tmp_path / "split" / "rank0_ascend_pt"
    shutil.copytree(samples / LEVEL1, export)
    cut = _text_steps_split(export)
    raw = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    waits = [e for e in raw if e.get("ph") == "X" and e.get("name") == "Notify_Wait"]
    assert len(waits) == 112 and all(Decimal(str(e["ts"])) > cut for e in waits)
    total = f"{sum(Decimal(str(e['dur'])) for e in waits) / 1000:,.3f}"
    assert total == "112.541"
    res = compare(str(export), str(export), base_step=50, comparison_step=50, enable_profiling_compare=True,
                  enable_communication_compare=True)
    assert "CommunicationCompare" not in res.sheet_names
    said = [n for n in res.summary["notes"] if "Wait Time" in n]
    assert said == [_both_wait_note(total, 50)]
    # step 51 holds them all: the sheet's rows give the same figure, and the note names that step
    res = compare(str(export), str(export), base_step=51, comparison_step=51, enable_profiling_compare=True,
                  enable_communication_compare=True)
    sheet = res.sheet("CommunicationCompare")
    rows = sheet[sheet["Task Name"].astype(str).str.strip() == "Notify_Wait"]
    assert f"{rows['Total Duration(us)'].sum() / 1000:,.3f}" == total
    assert [n for n in res.summary["notes"] if "Wait Time" in n] == [_both_wait_note(total, 51)]


NPU = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"  # tests/data/npu/README.md


def _kernel_lines(export: Path) -> tuple[Path, list[str]]:
    path = export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    return path, path.read_bytes().decode().split("\n")


def test_a_row_with_more_fields_than_the_header_is_said(tmp_path: Path) -> None:
    """The NPU fixture's kernel_details.csv (46 columns) with data row 11, a MatMulV2, writing its Input Data
    Types "FLOAT;FLOAT" as "FLOAT,FLOAT" (an unquoted comma): 47 fields. pandas, given the columns to read,
    drops the extra field without a word and reads each later column from the one before it (aicore_time(us)
    reads Context ID's N/A, aic_mac_time(us) the 1,241,623 aic_total_cycles where 24.176 is written), so the
    kernel moved between Matmul (Cube) and Matmul (Vector), unsaid. Now one line names the count and the row. A
    file whose rows each end in a comma (an empty field past the header: nothing moves) gets no such line and the
    same figures."""
    damaged = tmp_path / "damaged" / "rank0_ascend_pt"
    shutil.copytree(NPU, damaged)
    path, lines = _kernel_lines(damaged)
    header = next(csv.reader([lines[0]]))
    row = next(csv.reader([lines[11]]))
    assert len(header) == 46 and row[header.index("Type")] == "MatMulV2"
    assert row[header.index("Input Data Types")] == "FLOAT;FLOAT" and lines[11].count(",FLOAT;FLOAT,") == 1
    lines[11] = lines[11].replace(",FLOAT;FLOAT,", ",FLOAT,FLOAT,")
    assert len(next(csv.reader([lines[11]]))) == 47
    path.write_bytes("\n".join(lines).encode())
    res = compare(str(NPU), str(damaged), enable_profiling_compare=True)
    warnings: list[str] = []
    read_kernel_details(str(path), warnings)
    assert warnings == [f"{path}: 1 row(s) have more fields than the header's 46 (an unquoted comma in a name? "
                        "first: data row 11); in such a row each column after the extra field reads the value "
                        "written for the column before it, so its figures are wrong: quote the field, or export "
                        "again"]
    sheet = res.sheet("OverallMetrics").set_index("Index")
    cube = sheet.loc["\t\tMatmul (Cube)"]
    assert int(cube["Number.1"]) == int(cube["Number"]) - 1  # the figure the line warns of
    trailing = tmp_path / "trailing" / "rank0_ascend_pt"
    shutil.copytree(NPU, trailing)
    path, lines = _kernel_lines(trailing)
    lines = [line + "," if k and line else line for k, line in enumerate(lines)]
    path.write_bytes("\n".join(lines).encode())
    warnings = []
    read_kernel_details(str(path), warnings)
    assert not [w for w in warnings if "more fields" in w]
    res = compare(str(NPU), str(trailing), enable_profiling_compare=True)
    assert (res.sheet("OverallMetrics")["Diff Duration(ms)"] == 0).all()


@pytest.mark.parametrize(("text", "want"), [
    (b"a,b,c\n1,2,3\n", (0, 0)),
    (b"a,b,c\n1,2,3,\n4,5,6,\n", (0, 0)),  # a trailing comma: an empty field, nothing moves
    (b"a,b,c\r\n1,2,3,\r\n4,5,6\r\n", (0, 0)),
    (b"a,b,c\n1,2,3,,\n", (0, 0)),
    (b"a,b,c\n1,2,3,,4\n", (1, 1)),
    (b"a,b,c\n1,x,y,3\n4,5,6\n", (1, 1)),
    (b"a,b,c\n1,2,3\n4,5,6,7\n\n8,9,10,11,\n", (2, 2)),  # the blank line is no row
    (b'a,b,c\n1,"x,y",3\n4,5,6,7\r\n', (1, 2)),  # a quoted comma is no separator
    (b'a,"b,\nb",c\n1,2,3\n', (0, 0)),  # nor a quoted header's comma and line break
])
def test_long_rows_count_rows_past_the_header(text: bytes, want: tuple[int, int]) -> None:
    """``_long_rows``: (rows with more fields than the header, not only empty ones past it; the first one's data
    row), counted here by hand."""
    rows = len(list(csv.reader(io.StringIO(text.decode(), newline="")))) - 1 - text.count(b"\n\n")
    assert _long_rows(text, rows, 3) == want
    # with the lines the short-row check counted (``_damaged_rows``): the same answer, no second scan
    assert _long_rows(text, rows, 3, _line_commas(text)) == want


def test_a_blank_line_inside_a_quoted_header_name_hides_no_joined_line(tmp_path: Path) -> None:
    """The fixture's kernel_details.csv with a stray quote before data row 3's first field (the field runs to a
    later row's quoted Input Shapes, joining the lines between into one row) is said: "N line(s) read as part of
    an earlier row", N counted here from Python's csv module. With its optional column "Context ID" written as a
    quoted name holding a blank line as well ("Context<LF><LF>ID"), the header's line ends were all taken for
    its own lines, the blank one too, which the count of lines leaves aside: one joined line went unsaid (here
    N is 1, so the line was missing)."""
    src, lines = _kernel_lines(NPU)
    lines[3] = '"' + lines[3]
    plain = tmp_path / "kernel_details.csv"
    plain.write_bytes("\n".join(lines).encode())
    rows = list(csv.reader(io.StringIO(plain.read_text(encoding="utf-8"), newline="")))
    inside = len([x for x in lines if x]) - len(rows)
    assert inside >= 1
    assert lines[0].count(",Context ID,") == 1
    lines[0] = lines[0].replace(",Context ID,", ',"Context\n\nID",')
    broken = tmp_path / "broken" / "kernel_details.csv"
    broken.parent.mkdir()
    broken.write_bytes("\n".join(lines).encode())
    assert len(list(csv.reader(io.StringIO(broken.read_text(encoding="utf-8"), newline="")))) == len(rows)
    for path in (plain, broken):
        warnings: list[str] = []
        read_kernel_details(str(path), warnings)
        said = [w for w in warnings if "earlier row" in w]
        assert said == [f"{path}: {inside} line(s) read as part of an earlier row (a line break inside a quoted "
                        "field: a quote left open?)"], path
