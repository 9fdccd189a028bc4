"""Rules of the native charts and the Summary sheet's extra tables (report/charts.py), read from written
workbooks: chart series ranges, axis and legend settings and sizes from xl/charts and xl/drawings, cells
with pandas. Expected rows and figures are worked out from the sheets' own cells or the raw profiler files."""

from __future__ import annotations

import csv
import logging
import re
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from xlsxutil import read_xlsx

from msprof_compare.compare import checks
from msprof_compare.report.excel import char_pixels

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
TEXT = "msinsight/test/data/pytorch/text"
NPU_L1, NPU_L2 = f"{TEXT}/level1/rank0_ascend_pt", f"{TEXT}/level2/rank0_ascend_pt"
DB_L1 = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
DB_L2 = "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"
TRACE_VIEW = "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json"
BERT = "tracelens/tests/traces/{}/gaunernst_bert-small-uncased__1016001.json.gz"
NS = {"c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
      "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
      "xdr": "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"}
MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def _need(*paths: str) -> None:
    if not all((SAMPLES / p).exists() for p in paths):
        pytest.skip("sample data not found")


def _run(tmp_path_factory, name: str, base: str, comparison: str, **options):
    _need(base, comparison)
    from msprof_compare.api import compare

    result = compare(str(SAMPLES / base), str(SAMPLES / comparison), **options)
    return result, result.to_excel(str(tmp_path_factory.mktemp(name)))


@pytest.fixture(scope="module")
def text_pair(tmp_path_factory):
    """Text export level1 -> level2 (reference pair 1): E2E 136.581 -> 129.863 ms, one contributor."""
    return _run(tmp_path_factory, "text", NPU_L1, NPU_L2)


@pytest.fixture(scope="module")
def db_pair(tmp_path_factory):
    """DB export level2 -> level1: +8.713 ms E2E, seven contributors and a note under them."""
    return _run(tmp_path_factory, "db", DB_L2, DB_L1)


# --------------------------------------------------------------------------- workbook readers

def _summary(path) -> pd.DataFrame:
    """The Summary sheet's cells; row index i is the sheet's row i + 1, column 0 is column A."""
    return read_xlsx(path, sheet_name="Summary", header=None)


def _row_of(col_a: list, text: str, start: int = 0) -> int:
    """1-based row of the first cell of column A at or after 1-based row ``start`` that starts with ``text``."""
    return next(i + 1 for i, v in enumerate(col_a) if i + 1 >= start and isinstance(v, str) and v.startswith(text))


def _xml(path, part: str):
    import xml.etree.ElementTree as ET

    with zipfile.ZipFile(path) as z:
        return ET.fromstring(z.read(part))


def _summary_print_area(path) -> str:
    """The Summary sheet's print area (the comparator sheets have theirs too)."""
    areas = [d.text for d in _xml(path, "xl/workbook.xml").iter(f"{MAIN}definedName")
             if d.get("name") == "_xlnm.Print_Area" and d.text.startswith("Summary!")]
    assert len(areas) == 1
    return areas[0]


def _charts(path) -> dict[str, dict]:
    """Each chart by its title: its series (name, categories ref, values ref, cached values), its value axis
    minimum, its deleted legend entries, and its height in pixels as anchored on its sheet."""
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        rels = {n: z.read(n).decode() for n in names if n.endswith(".rels")}
    sheet_of = {}   # drawing part -> worksheet part
    for n, text in rels.items():
        m = re.fullmatch(r"xl/worksheets/_rels/(sheet\d+\.xml)\.rels", n)
        for target in re.findall(r'Target="\.\./drawings/(drawing\d+\.xml)"', text) if m else []:
            sheet_of[target] = m.group(1)
    out = {}
    for n, text in rels.items():
        m = re.fullmatch(r"xl/drawings/_rels/(drawing\d+\.xml)\.rels", n)
        if not m:
            continue
        chart_part = "xl/charts/" + re.search(r'Target="\.\./charts/(chart\d+\.xml)"', text).group(1)
        root = _xml(path, chart_part)
        title = "".join(t.text for t in root.find("c:chart/c:title", NS).iter(f"{{{NS['a']}}}t"))
        series = []
        for ser in root.iter(f"{{{NS['c']}}}ser"):
            cache = ser.find("c:val/c:numRef/c:numCache", NS)
            series.append({"name": ser.findtext("c:tx/c:v", namespaces=NS),
                           "cat": ser.findtext("c:cat/*/c:f", namespaces=NS),
                           "val": ser.findtext("c:val/c:numRef/c:f", namespaces=NS),
                           "cache": [float(p.findtext("c:v", namespaces=NS)) for p in cache.findall("c:pt", NS)]})
        mins = [e.get("val") for e in root.iter(f"{{{NS['c']}}}min")]
        deleted = [int(e.find("c:idx", NS).get("val")) for e in root.iter(f"{{{NS['c']}}}legendEntry")
                   if e.find("c:delete", NS) is not None and e.find("c:delete", NS).get("val") == "1"]
        out[title] = {"series": series, "min": mins, "deleted": deleted,
                      "height": _anchored_height(path, "xl/drawings/" + m.group(1), sheet_of[m.group(1)])}
    return out


def _anchored_height(path, drawing: str, sheet: str) -> float:
    """Pixels between the anchor's top and bottom: whole rows (15 points = 20 px unless the row sets its own
    height) plus the offsets into the first and last rows (EMU, 9525 a pixel)."""
    anchor = _xml(path, drawing).find("xdr:twoCellAnchor", NS)
    r0, off0 = int(anchor.findtext("xdr:from/xdr:row", namespaces=NS)), int(anchor.findtext("xdr:from/xdr:rowOff",
                                                                                           namespaces=NS))
    r1, off1 = int(anchor.findtext("xdr:to/xdr:row", namespaces=NS)), int(anchor.findtext("xdr:to/xdr:rowOff",
                                                                                         namespaces=NS))
    ws = _xml(path, f"xl/worksheets/{sheet}")
    heights = {int(r.get("r")) - 1: float(r.get("ht")) * 4 / 3 for r in ws.iter(f"{MAIN}row") if r.get("ht")}
    return sum(heights.get(r, 20.0) for r in range(r0, r1)) - off0 / 9525 + off1 / 9525


def _summary_chart_anchor(path) -> tuple[int, int, int, int]:
    """The Summary chart's anchor: 0-based top row, its column, the row its bottom edge is in and the offset in it."""
    anchor = _xml(path, "xl/drawings/drawing1.xml").find("xdr:twoCellAnchor", NS)
    return tuple(int(anchor.findtext(f"xdr:{end}/xdr:{what}", namespaces=NS))
                 for end, what in (("from", "row"), ("from", "col"), ("to", "row"), ("to", "rowOff")))


def _summary_chart_below(path, top: int) -> int:
    """The 0-based first row wholly below the Summary chart, anchored in column A on row ``top`` (0-based), 320 to
    440 px tall (16 to 22 rows of 20 px)."""
    first, col, last, offset = _summary_chart_anchor(path)
    below = last + (offset > 0)
    assert (first, col) == (top, 0) and 16 <= below - top <= 22
    return below


def _ref(first: int, last: int, col: str, sheet: str = "Summary") -> str:
    return f"{sheet}!${col}${first}:${col}${last}" if first != last else f"{sheet}!${col}${first}"


# --------------------------------------------------------------------------- Summary tables

def test_summary_tables_follow_each_other_with_one_blank_row(db_pair):
    """DB level2 -> level1: the waterfall (rows 4-12), the E2E verdict in words (row 13), the waterfall chart under it
    (from row 14: 440 px = 22 rows of 20 px, or a little less where long captions leave less of the first page,
    `test_summary_prints_its_tables_legibly_one_page_wide`), a blank row, the contributors table (title, header, 7
    rows), the note right under it, a row per sentence as the console's lines (the share, the Share column's basis, then
    the Wait / Transmit split of communication's change), merged across the waterfall's six columns A:F, the row naming
    the contributor on no module sheet and the module contributors' lead (a title, a "  - " row per operator, the
    sentence leading into the table, as the console's lines), merged the same way, a blank row, the module contributors
    (title, header, the first 10 of 15 rows: all 113 of SGLang's made the one-page print a sixth of its size), a blank
    row, the communication contributors and the two lines under them (communication, memory), a blank row, then the
    validity checks; the print area ends on the blank row before "Chart data" and spans A:G, the tables' columns (it
    spanned A:U, the tables, a gap column and the 820-px chart beside them, and printed at 45 %)."""
    result, path = db_pair
    sheet = _summary(path)
    col_a = sheet[0].tolist()
    assert col_a[3] == "Base E2E" and col_a[11] == "Comparison E2E"   # rows 4 and 12: 9 waterfall rows
    assert col_a[12].startswith("E2E time ") and col_a[12].endswith("than the base.")  # row 13: the verdict
    below = _summary_chart_below(path, 13)                             # 0-based row under the chart: blank
    assert all(pd.isna(v) for v in col_a[13:below + 1])
    title = _row_of(col_a, "Top Contributors")
    assert title == below + 2 and col_a[title] == "Name"
    n = len(result.contributors)
    assert n == 7
    note_row = title + 2 + n                                           # under the 7th contributor
    assert col_a[note_row - 1].startswith("Note: all operators together changed by ") and col_a[note_row - 1][-1] == "."
    assert col_a[note_row].startswith("The Share column is of ") and col_a[note_row][-1] == "."
    # then how the communication groups' change splits between Wait and Transmit, a sentence of its own, and what
    # each is, a row each
    assert col_a[note_row + 1].startswith("Of the communication groups' uncovered time (+7.991 ms), Wait ")
    assert col_a[note_row + 2].startswith("Wait is ") and col_a[note_row + 3].startswith("Transmit is ")
    note_row += 3
    merged = [m.get("ref") for m in _xml(path, "xl/worksheets/sheet1.xml").iter(f"{MAIN}mergeCell")]
    for r in range(note_row - 3, note_row + 8):  # the basis and split rows, the row on no module sheet, the lead
        assert [m for m in merged if m.endswith(f":F{r}") or m.startswith(f"A{r}:")] == [f"A{r}:F{r}"]
    assert col_a[note_row + 1].startswith("Not on the module sheets: ")
    # the module contributors' lead: its list of the 5 operators that run modules, 3 named and the cut, a row each
    assert col_a[note_row + 2] == "The module rows hold this much of the time of the operators that run modules:"
    assert [v[:4] for v in col_a[note_row + 3:note_row + 7]] == ["  - "] * 4
    assert col_a[note_row + 6].startswith("  - ... (5 in all")
    lead = note_row + 7                                                # the lead's last row, into the table
    assert col_a[lead] == "The module contributors rank the module rows inside them by their change:"
    assert [m for m in merged if m.startswith(f"A{lead + 1}:")] == [f"A{lead + 1}:F{lead + 1}"]
    assert pd.isna(col_a[lead + 1])                                    # blank
    assert col_a[lead + 2].startswith("Top Module Contributors") and col_a[lead + 3] == "Name"
    assert len(result.module_contributors) == 15
    modules = 10                                                       # the first 10 of 15, as the console
    end = lead + 4 + modules                                           # blank, after the 10 rows
    assert not pd.isna(col_a[end - 1]) and pd.isna(col_a[end])
    # then the communication contributors (title, header, one row), their line and the memory line right
    # under them (no memory contributor: no table), a blank row, as the console prints them
    assert col_a[end + 1].startswith("Top Communication Contributors") and col_a[end + 3] == "allreduce"
    # each sentence of the two lines on a row of its own, as on the console's lines: the time, then the task
    assert col_a[end + 4].startswith("Communication time ") and col_a[end + 5].startswith("The task that changed")
    assert col_a[end + 6] == "Peak reserved memory (Mem Usage) 1.49 GB on both sides."
    assert col_a[end + 7].startswith("No operator's allocated")
    assert pd.isna(col_a[end + 8])
    end += 8
    assert col_a[end + 1].startswith("Validity checks")
    checks = len(result.guards)
    last_check = end + 3 + checks                                      # title, header, then one row a check
    assert not pd.isna(col_a[last_check - 1]) and pd.isna(col_a[last_check])
    assert col_a[last_check + 1] == "Chart data"
    area = _summary_print_area(path)
    assert area == f"Summary!$A$1:$G${last_check + 1}"


def _arial_lines(text: str, room: float) -> int:
    """Lines a wrapped cell's text takes on lines of ``room`` pixels in 11-point Arial (``char_pixels``, the
    font's advance widths): each line's text measured whole, a word starting a new line where the line with it
    would be wider (no word of these texts is wider than a line)."""
    lines, line = 1, ""
    for word in text.split():
        joined = f"{line} {word}" if line else word
        if line and sum(map(char_pixels, joined)) > room:
            lines, joined = lines + 1, word
        assert sum(map(char_pixels, word)) <= room, word
        line = joined
    return lines


def test_validity_details_wrap_within_the_printed_page(text_pair):
    """A check's Detail (up to 365 characters on this pair, 282 now) overflowed column E to the right, past the print
    area's last column, and the printed page cut it (world size, NPU profiler settings, longest idle stretch
    ...). Each Detail, and its header, is merged across E to the print area's last column, G (the tables' width,
    the contributors' Rank its last column: it ran to U, beside the chart, and the Summary printed at 45 %), and
    wraps there: E, F and G, 16.71 + 18.71 + 8.43 (Excel's default width, G has none of its own) = 43.85 characters,
    a line of 43.85 x 7 - 5 = 302 pixels. Its row is as tall as the lines its words take there in 11-point Arial
    (each line filled with the words whose pixel widths fit, measured line by line), or a line taller (the row
    keeps 3 % to spare): counted in characters, a row of narrow letters was a line taller than its text."""
    import openpyxl
    from openpyxl.utils import column_index_from_string

    _, path = text_pair
    ws = openpyxl.load_workbook(path)["Summary"]
    last = re.fullmatch(r"Summary!\$A\$1:\$([A-Z]+)\$\d+", _summary_print_area(path)).group(1)
    assert last == "G"
    # the widths set on Summary's columns (sheet1: the first sheet), each <col> one column wide
    sized = {int(c.get("min")): float(c.get("width")) for c in
             _xml(path, "xl/worksheets/sheet1.xml").iter(f"{MAIN}col") if c.get("min") == c.get("max")}
    width = sum(sized.get(j, 8.43) for j in range(5, column_index_from_string(last) + 1))
    assert round(width, 1) == 43.9
    col_a = [c.value for c in ws["A"]]
    header = col_a.index("Check") + 1
    merged = {str(r) for r in ws.merged_cells.ranges}
    assert f"E{header}:{last}{header}" in merged
    rows = range(header + 1, col_a.index(None, header) + 1)
    details = {ws.cell(r, 1).value: ws.cell(r, 5) for r in rows}
    assert len(details) == 9 and max(len(c.value) for c in details.values()) == 282
    for check, cell in details.items():
        r = cell.row
        assert f"E{r}:{last}{r}" in merged, check
        assert cell.alignment.wrap_text is True, check
        assert ws.cell(r, 6).value is None and ws.cell(r, 7).value is None, check
        lines = _arial_lines(cell.value, width * 7 - 5)
        height = ws.row_dimensions[r].height or 15
        assert 15 * lines <= height <= 15 * (lines + 1), (check, height, lines)
    # the longest, 282 characters, on 8 lines of up to 302 pixels: 120 points or 135, well under Excel's 409
    assert len(details["longest idle stretch"].value) == 282
    assert _arial_lines(details["longest idle stretch"].value, width * 7 - 5) == 8
    assert ws.row_dimensions[details["longest idle stretch"].row].height in (120, 135)
    assert ws.row_dimensions[details["step count"].row].height is None  # "distinct ProfilerStep#N ids in the trace"


def test_no_share_note_where_the_contributors_explain_the_change(text_pair):
    """Text level1 -> level2: AccumulateGrad's all-reduce holds 99 % of the change, so no note of the operators'
    share; the one contributor row is followed by the note that its change is that all-reduce, then the one that
    it is on no module sheet (AccumulateGrad is
    outside every module), the communication contributors and the communication and memory lines, and the
    validity checks. The waterfall chart is under the verdict (from row 15, about 22 rows of 20 px), the
    contributors after a blank row. The print area stops on the blank row after the 9 checks, before "Chart
    data"."""
    _result, path = text_pair
    col_a = _summary(path)[0].tolist()
    # no note of the operators' share; the note that the all-reduce is most of AccumulateGrad's change instead
    said = [v for v in col_a if isinstance(v, str) and v.startswith("Note:")]
    assert len(said) == 1 and said[0].startswith("Note: most of the change of autograd::engine::evaluate_function: "
                                                 "torch::autograd::AccumulateGrad is collective communication")
    # its why a sentence (a row) of its own, as on the console
    why = ("These are HCCL ops, which an NPU text export links to the operator that launched them; the waterfall "
           "counts them as communication, not computing.")
    notes = [v for v in col_a if isinstance(v, str) and v.startswith("Not on the module sheets:")]
    assert notes == ["Not on the module sheets: autograd::engine::evaluate_function: torch::autograd::AccumulateGrad "
                     "(it is outside every module); the disable_module option writes every operator's row "
                     "(OperatorCompareStatistic)."]
    title = _row_of(col_a, "Top Contributors")   # the waterfall's 10 rows end on row 13, the verdict on row 14,
    assert col_a[12] == "Comparison E2E" and col_a[13].startswith("E2E time ")  # then the chart, a blank row
    below = _summary_chart_below(path, 14)
    assert all(pd.isna(v) for v in col_a[14:below + 1]) and title == below + 2
    assert col_a[title + 1].endswith("AccumulateGrad") and col_a[title + 2] == said[0]  # one contributor row
    assert col_a[title + 3] == why and col_a[title + 4] == notes[0]
    title += 1  # the rows below are one further down than before the note's why got its own
    # then, as on the console, the communication contributors (title, header, allreduce) and the communication and
    # memory lines, a blank row, and the checks
    assert pd.isna(col_a[title + 4]) and col_a[title + 5].startswith("Top Communication Contributors")
    assert col_a[title + 7] == "allreduce" and col_a[title + 8].startswith("Communication time ")
    assert col_a[title + 9].startswith("The task that changed most: ")  # a row per sentence, as the console's lines
    assert col_a[title + 10] == "Peak reserved memory (Mem Usage) 2.06 GB on both sides."
    assert col_a[title + 11].startswith("No operator's allocated memory changed")
    assert pd.isna(col_a[title + 12])
    assert _row_of(col_a, "Validity checks") == title + 14
    data = _row_of(col_a, "Chart data")
    area = _summary_print_area(path)
    assert data == title + 26 and area == f"Summary!$A$1:$G${data - 1}"


def test_contributor_rows_show_base_comparison_and_running_share(db_pair):
    """Each contributor row of the sheet: Base and Comparison where the headers say (base = the level2 run,
    the -bp side), Diff = Comparison - Base, Cumulative Share = the running sum of Share, Rank 1..7."""
    result, path = db_pair
    sheet = _summary(path)
    title = _row_of(sheet[0].tolist(), "Top Contributors")
    table = sheet.iloc[title: title + 1 + len(result.contributors), :7]
    table = pd.DataFrame(table.iloc[1:].to_numpy(), columns=table.iloc[0].tolist())
    assert list(table.columns) == ["Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share",
                                   "Rank"]
    frame = result.contributors
    assert table["Name"].tolist() == frame["Name"].tolist()
    assert table["Base(ms)"].astype(float).tolist() == pytest.approx(frame["Base(ms)"].astype(float).tolist())
    assert table["Comparison(ms)"].astype(float).tolist() == pytest.approx(
        frame["Comparison(ms)"].astype(float).tolist())
    # the first contributor, ConvolutionBackward0, grew from 1.996702 ms (level2) to 2.008052 ms (level1)
    assert table.iloc[0, 1:4].astype(float).tolist() == pytest.approx([1.996702, 2.008052, 0.01135])
    diff = table["Comparison(ms)"].astype(float) - table["Base(ms)"].astype(float)
    assert table["Diff(ms)"].astype(float).tolist() == pytest.approx(diff.tolist())
    running, total = [], 0.0
    for share in table["Share"].astype(float):
        total += share
        running.append(total)
    assert table["Cumulative Share"].astype(float).tolist() == pytest.approx(running)
    assert running[-1] == pytest.approx(0.835125, abs=1e-6)          # the title's "7 rows cover 83.5%"
    assert table["Rank"].astype(int).tolist() == list(range(1, 8))


def test_only_warned_checks_are_filled_red(text_pair):
    """A "note" check (NPU profiler settings: Level1 vs Level2) and an "unknown" one (world size) hold for the
    same workload too: they keep the plain style; the red fill is for "warn" rows only."""
    import openpyxl

    _result, path = text_pair
    ws = openpyxl.load_workbook(path)["Summary"]
    rows = {ws.cell(r, 1).value: r for r in range(1, ws.max_row + 1) if ws.cell(r, 2).value in ("ok", "note",
                                                                                               "unknown", "warn")}
    assert ws.cell(rows["NPU profiler settings"], 2).value == "note"
    assert ws.cell(rows["world size"], 2).value == "unknown"
    for check in ("NPU profiler settings", "world size", "step count"):
        fills = {ws.cell(rows[check], c).fill.fgColor.rgb for c in range(1, 6)}
        assert "FFFFC7CE" not in fills, check


def test_a_two_line_check_value_gets_a_two_line_row(text_pair, tmp_path, monkeypatch):
    """Synthetic edit of the real checks: world size "at least 1048576" in the 14-wide Comparison column (lines of
    (14 x 7 - 5) / 1.03 = 90.3 px) wraps onto 2 lines, "at least" (3,224 / 1000 em of Helvetica's widths, 47.3 px
    at 14.667 px an em) and "1048576" (57.1 px; 108.4 px with the space), so its row is 2 x 15 = 30 points tall;
    its Base cell ("at least 8") and a row of one line keep the default height (their Details made short: they
    wrap too). "at least 1024" (84.0 px) fits one line."""
    import openpyxl

    result, _path = text_pair
    guards = result.guards.copy()
    i = guards.index[guards["Check"] == "world size"][0]
    guards.loc[i, "Comparison"] = "at least 1048576"
    guards.loc[guards["Check"].isin(["world size", "step count"]), "Detail"] = "ranks"
    sheet = next(s for s in result.sheets if s.name == "Summary")
    monkeypatch.setattr(sheet, "guards", guards)
    ws = openpyxl.load_workbook(result.to_excel(str(tmp_path)))["Summary"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "world size")
    assert ws.cell(row, 4).value == "at least 1048576"
    assert ws.row_dimensions[row].height == 30
    step = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "step count")
    assert ws.row_dimensions[step].height is None


def _shown_cells(path, sheet: str = "sheet1.xml") -> dict[str, str]:
    """{cell: the text a spreadsheet shows} of a sheet's number cells in a percent format (``0.0%`` / ``0.00%``),
    read from the XML (no openpyxl): the value to the format's decimals, a half rounded away from zero as Excel
    and LibreOffice round a displayed number."""
    from decimal import ROUND_HALF_UP, Decimal

    codes = {int(f.get("numFmtId")): f.get("formatCode") for f in _xml(path, "xl/styles.xml").iter(f"{MAIN}numFmt")}
    codes[10] = "0.00%"  # built-in
    styles = [codes.get(int(x.get("numFmtId")), "") for x in _xml(path, "xl/styles.xml").find(f"{MAIN}cellXfs")]
    out = {}
    for c in _xml(path, f"xl/worksheets/{sheet}").iter(f"{MAIN}c"):
        fmt, v = styles[int(c.get("s", 0))], c.findtext(f"{MAIN}v")
        if v is not None and c.get("t") is None and fmt in ("0.0%", "0.00%"):
            places = Decimal(1).scaleb(-(len(fmt) - 3))
            out[c.get("r")] = f"{(Decimal(v) * 100).quantize(places, ROUND_HALF_UP)}%"
    return out


@pytest.mark.parametrize(("check", "base", "comparison", "shown"), [
    # under the threshold (60 %, 50 %), two decimals rounded read the threshold: the log cuts them, and so the sheet
    ("operator match rate", 0.59996, 0.5994, ("59.99%", "59.9%")),
    (checks.IDLE_CHECK, 0.499951, 0.97, ("49.99%", "97.0%")),
    # one decimal rounded keeps it under, or the share is over it: one decimal, rounded, on both faces
    (checks.IDLE_CHECK, 0.4994, 0.5, ("49.9%", "50.0%")),
])
def test_a_share_under_its_threshold_reads_in_the_sheet_as_in_the_log(text_pair, tmp_path, monkeypatch, caplog,
                                                                      check, base, comparison, shown):
    """The Summary's Base / Comparison cells of a share check show the digits the log's line shows: a share just
    under its threshold is cut at two decimals there (49.99 %), and the sheet's 0.00% format rounded 0.499951 up
    to 50.00 %, the threshold the note says the share is under."""
    result, _path = text_pair
    guards = result.guards.copy()
    i = guards.index[guards["Check"].isin([check, "world size"])][0]  # the check's row, else one made the check's
    status = "warn" if check == "operator match rate" else "note"  # a low match rate warns, an idle stretch notes
    guards.loc[i, ["Check", "Status", "Base", "Comparison"]] = [check, status, base, comparison]
    sheet = next(s for s in result.sheets if s.name == "Summary")
    monkeypatch.setattr(sheet, "guards", guards)
    path = result.to_excel(str(tmp_path))
    row = _row_of(_summary(path)[0].tolist(), check, 4)
    cells = _shown_cells(path)
    assert (cells[f"C{row}"], cells[f"D{row}"]) == shown
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        checks.log_guards(guards.loc[[i]])
    assert f"(base {shown[0]}, comparison {shown[1]})" in caplog.text


def test_a_profile_against_itself_has_no_contributors_and_keeps_its_chart_data_off_the_page(tmp_path, caplog):
    """Text level1 against itself (no sample pair has an unchanged run; the same input is the real case of it):
    no operator, module or step changed, so no contributor table; the validity checks follow the waterfall
    (rows 4-13), its verdict (row 14), the waterfall chart (from row 15, about 22 rows of 20 px) and the
    communication and memory lines right under it, a blank row, the title, the header, 10 checks (the first says
    both sides are one input) and a blank row.
    The print area ends there and "Chart data" comes under it (it was once printed on row 27). A check without
    figures (device count) keeps blank bordered cells. Every level is the E2E time,
    136.581009 ms (reference pair 1's base E2E): the span 0 is under half of it, so the value axis starts at
    136.581 rounded down to one significant digit, 100 ms."""
    import openpyxl

    _need(NPU_L1)
    from msprof_compare.api import compare

    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        result = compare(str(SAMPLES / NPU_L1), str(SAMPLES / NPU_L1))
        path = result.to_excel(str(tmp_path))
    assert "Chart for sheet" not in caplog.text
    col_a = _summary(path)[0].tolist()
    assert col_a[3] == "Base E2E" and col_a[12] == "Comparison E2E"
    assert col_a[13] == "E2E time 136.581 ms on both sides: the comparison is as fast as the base."
    assert not [v for v in col_a if isinstance(v, str) and v.startswith(("Top Contributors", "Note:"))]
    # the communication and memory lines, as the console prints them (no contributor tables: nothing changed)
    b = _summary_chart_below(path, 14)
    assert all(pd.isna(v) for v in col_a[14:b])
    assert col_a[b].startswith("No communication op type's total duration changed (1 op type)")
    assert col_a[b + 1] == "No task's total duration changed."  # a row per sentence, as the console's lines
    assert col_a[b + 2] == "Peak reserved memory (Mem Usage) 2.06 GB on both sides."
    assert col_a[b + 3].startswith("No operator's allocated memory changed (35 operators)")
    b += 2
    assert pd.isna(col_a[b + 2])
    assert col_a[b + 3].startswith("Validity checks") and col_a[b + 4] == "Check"
    # first the check that says why nothing changed: one input on both sides
    assert col_a[b + 5:b + 9] == ["one profile on both sides", "operator match rate", "input shapes of top operators",
                                  "step count"]
    assert all(isinstance(v, str) for v in col_a[b + 5:b + 15]) and pd.isna(col_a[b + 15])
    # the text export's kernels name no device: "device count" (its 6th check) has no figures, blank cells that
    # keep the table's borders
    ws = openpyxl.load_workbook(path)["Summary"]
    r = b + 11  # 1-based: the 6th check, 0-based row b + 10
    assert ws[f"A{r}"].value == "device count" and ws[f"C{r}"].value is None and ws[f"D{r}"].value is None
    assert {ws[f"{c}{r}"].border.left.style for c in "ACD"} == {"thin"}
    area = _summary_print_area(path)
    # column A holds no contributor name here, 35 characters: A:G are 250 + 2 x 117 + 103 + 117 + 131 + 64 =
    # 899 px, 674.25 pt, less than the page's 748.8 at 100 %, so Detail runs on over one more column of 8.43 (48 pt;
    # a second would pass 748.8), to H
    assert area == f"Summary!$A$1:$H${b + 16}" and col_a[b + 16] == "Chart data"
    chart = _charts(path)["E2E time: base to comparison (ms)"]
    assert chart["series"][3]["cache"] == pytest.approx([136.581009] + [0.0] * 8 + [136.581009])
    assert chart["series"][1]["cache"] == chart["series"][2]["cache"] == [0.0] * 10   # no increase, no decrease
    assert chart["min"] == ["100"]
    bars = _charts(path)["Time by category: base vs comparison (ms)"]["series"]
    # the 8 steps (rows 5-12), last first, in the chart data: Comparison's bars, then Base's
    at = _row_of(col_a, "OverallMetrics chart:") + 1
    assert [s["val"] for s in bars] == [_ref(at, at + 7, "C"), _ref(at, at + 7, "B")]
    assert col_a[at - 1:at + 7] == col_a[4:12][::-1]
    assert bars[0]["cache"] == bars[1]["cache"]


# --------------------------------------------------------------------------- waterfall and OverallMetrics charts

def _steps(col_a: list) -> tuple[int, int]:
    """1-based first and last rows of the waterfall steps: between "Base E2E" and "Comparison E2E"."""
    return col_a.index("Base E2E") + 2, col_a.index("Comparison E2E")


def _bottom_up(path) -> tuple[int, int]:
    """1-based first and last rows of the OverallMetrics chart's data in the Summary's chart data area."""
    col_a = _summary(path)[0].tolist()
    at = _row_of(col_a, "OverallMetrics chart:") + 1
    first, last = _steps(col_a)
    return at, at + last - first


def test_overall_chart_bars_are_the_waterfall_steps(text_pair):
    """The OverallMetrics bar chart plots the Summary's waterfall steps (rows 5-12: Conv (Forward) ... Free:
    Other, not the two E2E rows), copied last first into the chart data (a bar chart draws its first category
    lowest): Base bars from its Base(ms) column B, Comparison bars from column C; 8 bars make it 32 x 8 + 120 =
    376 px tall. Its category axis names every step, horizontal: LibreOffice named every other one (Conv
    (Forward), Matmul, SDMA (Tensor Move), Group 0 Communication (uncovered)) without the set rotation and label
    interval."""
    _result, path = text_pair
    sheet = _summary(path)
    first, last = _steps(sheet[0].tolist())
    assert (first, last) == (5, 12)
    at, end = _bottom_up(path)
    assert sheet.iloc[at - 2, :3].tolist() == [
        "OverallMetrics chart: the waterfall steps, last first (a bar chart draws its first category lowest)",
        "Base(ms)", "Comparison(ms)"]
    assert sheet.iloc[at - 1:end, :3].values.tolist() == sheet.iloc[first - 1:last, :3].values.tolist()[::-1]
    chart = _charts(path)["Time by category: base vs comparison (ms)"]
    comp, base = chart["series"]
    assert (base["name"], base["cat"], base["val"]) == ("Base", _ref(at, end, "A"), _ref(at, end, "B"))
    assert (comp["name"], comp["cat"], comp["val"]) == ("Comparison", _ref(at, end, "A"), _ref(at, end, "C"))
    assert base["cache"] == pytest.approx(sheet.iloc[first - 1: last, 1].astype(float).tolist()[::-1])
    assert comp["cache"] == pytest.approx(sheet.iloc[first - 1: last, 2].astype(float).tolist()[::-1])
    assert base["cache"][0] == pytest.approx(25.74405) and comp["cache"][0] == pytest.approx(25.032619)  # Free
    assert chart["height"] == pytest.approx(376)
    with zipfile.ZipFile(path) as z:
        parts = [n for n in z.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", n)]
    axes = [ax for ax in (_xml(path, n) for n in parts)
            if "Time by category" in "".join(t.text or "" for t in ax.iter(f"{{{NS['a']}}}t"))]
    assert len(axes) == 1
    cat = axes[0].find("c:chart/c:plotArea/c:catAx", NS)
    assert cat.find("c:tickLblSkip", NS).get("val") == "1"
    assert cat.find("c:txPr/a:bodyPr", NS).get("rot") == "0"


def _bar_chart_faces(path, title: str) -> dict[str, list[str]]:
    """How a horizontal bar chart reads, from its XML and the cells it names: its categories and, within a category,
    its bars top down (a bar chart draws its first category and its first series lowest, unless the category axis
    is reversed: ``maxMin``), Excel's legend (as the bars stand: Peltier, "Order of series and legend entries in
    Excel charts") and LibreOffice 7.4's (its series reversed for a bar chart of unstacked series, whatever the
    axis: VSeriesPlotter::createLegendEntries)."""
    import openpyxl

    chart = _charts(path)[title]
    root = next(x for x in (_xml(path, n) for n in zipfile.ZipFile(path).namelist()
                            if re.fullmatch(r"xl/charts/chart\d+\.xml", n))
                if title == "".join(t.text or "" for t in x.find("c:chart/c:title", NS).iter(f"{{{NS['a']}}}t")))
    bar = root.find("c:chart/c:plotArea/c:barChart", NS)
    assert bar.find("c:barDir", NS).get("val") == "bar" and bar.find("c:grouping", NS).get("val") == "clustered"
    reversed_axis = root.find("c:chart/c:plotArea/c:catAx/c:scaling/c:orientation", NS).get("val") == "maxMin"
    names = [s["name"] for s in chart["series"]]
    sheet, cells = chart["series"][0]["cat"].split("!")
    first, last = (int(x) for x in re.findall(r"\d+", cells))
    col = re.match(r"\$([A-Z])", cells).group(1)
    ws = openpyxl.load_workbook(path)[sheet]
    categories = [ws[f"{col}{r}"].value for r in range(first, last + 1)]
    bars = names if reversed_axis else names[::-1]
    return {"categories": categories if reversed_axis else categories[::-1], "bars": bars, "excel": bars,
            "libreoffice": names[::-1]}


def test_overall_chart_legend_lists_the_bars_in_their_order(text_pair):
    """The OverallMetrics chart's legend lists Base then Comparison, as each step's bars stand top down, in Excel
    and in LibreOffice, and the steps read top down as the Summary lists them: LibreOffice's legend read
    "Comparison, Base" under Base's bar atop each step's pair (the category axis reversed, series Base first).
    Rendered by LibreOffice (7.4, DejaVu Sans): the legend's "Base" left of "Comparison", grey bars above blue."""
    _result, path = text_pair
    faces = _bar_chart_faces(path, "Time by category: base vs comparison (ms)")
    assert faces["bars"] == faces["excel"] == faces["libreoffice"] == ["Base", "Comparison"]
    col_a = _summary(path)[0].tolist()
    first, last = _steps(col_a)
    assert faces["categories"] == col_a[first - 1:last] and faces["categories"][0] == "Conv (Forward)"


def test_constant_memory_workbook_keeps_the_chart_caches(text_pair, tmp_path, monkeypatch):
    """A workbook with a sheet over ``CONSTANT_MEMORY_ROWS`` rows is written in xlsxwriter's constant_memory
    mode; its charts still carry the cached points of their ranges and their step names as text, as in a
    small workbook (readers that draw from the caches: PowerPoint, viewers). Found by the scale oracle: the text
    level1 export replicated 260x (bench/make_large.py) gave ModuleCompare 31,720 rows and timesformer x 80
    104,880 rows; that workbook's two Summary charts had `<c:ptCount val="0"/>` caches and a number range for
    their step names. Same pair (text level1 -> level2) drawn in that mode by setting the threshold to 0; the
    expected points are the Summary's own cells (read back with pandas) and the Free figures of the sample,
    25744050 ns (E2E 136581009 - computing 8873756 - uncovered communication 101963203) and 25.032619 ms."""
    import xml.etree.ElementTree as ET

    from msprof_compare.report import excel

    result, path = text_pair
    sheet = _summary(path)
    first, last = _steps(sheet[0].tolist())
    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 0)
    big = result.to_excel(str(tmp_path))
    charts = _charts(big)
    comp, base = charts["Time by category: base vs comparison (ms)"]["series"]
    assert base["cache"] == pytest.approx(sheet.iloc[first - 1: last, 1].astype(float).tolist()[::-1])
    assert comp["cache"] == pytest.approx(sheet.iloc[first - 1: last, 2].astype(float).tolist()[::-1])
    assert base["cache"][0] == pytest.approx(25.74405) and comp["cache"][0] == pytest.approx(25.032619)
    waterfall = charts["E2E time: base to comparison (ms)"]["series"]
    assert [len(s["cache"]) for s in waterfall] == [10] * 4          # Base E2E, the 8 steps, Comparison E2E
    assert waterfall[3]["cache"][0] == pytest.approx(136.581009)
    with zipfile.ZipFile(big) as z:
        parts = {n: z.read(n) for n in z.namelist() if n.startswith("xl/charts/chart")}
    for root in map(ET.fromstring, parts.values()):
        for ser in root.iter(f"{{{NS['c']}}}ser"):
            names = [p.findtext("c:v", namespaces=NS) for p in ser.findall("c:cat/c:strRef/c:strCache/c:pt", NS)]
            assert names and all(names), names                                   # text, not a number range
    with zipfile.ZipFile(path) as z:                                             # as the default mode writes them
        assert parts == {n: z.read(n) for n in z.namelist() if n.startswith("xl/charts/chart")}


def test_overall_chart_without_a_summary_reads_its_own_duration_columns(text_pair, tmp_path):
    """Rendered without a Summary sheet, the OverallMetrics chart reads that sheet: every row but the last
    (E2E Time), base Duration(ms) in column B and comparison Duration(ms) in column E (not the Number or
    Ratio columns)."""
    from msprof_compare.report import excel

    result, _path = text_pair
    sheet = next(s for s in result.sheets if s.name == "OverallMetrics")
    path = tmp_path / "overall.xlsx"
    excel.render([sheet], str(path), ("Base Profiling: b", "Comparison Profiling: c"))
    df = read_xlsx(path, sheet_name="OverallMetrics", header=2)
    assert df.columns[1] == "Duration(ms)" and df.columns[4] == "Duration(ms).1"
    assert df["Index"].iloc[-1] == "E2E Time" and len(df) == 21
    last = 3 + len(df) - 1                                   # header on row 3, E2E Time on row 24 left out
    (base, comp), = [c["series"] for t, c in _charts(path).items() if t.startswith("Time by category")]
    assert (base["cat"], base["val"]) == (_ref(4, last, "A", "OverallMetrics"), _ref(4, last, "B", "OverallMetrics"))
    assert comp["val"] == _ref(4, last, "E", "OverallMetrics")
    assert comp["cache"] == pytest.approx(df["Duration(ms).1"].iloc[:-1].astype(float).tolist())


def _value_axis_at_the_bottom(path, title: str) -> bool:
    """Whether a horizontal bar chart draws its value axis under the bars, by the OOXML rules (ECMA-376 21.2.2.33,
    ``crosses``: where this axis crosses the other): the value axis crosses the category axis at its first
    category (``autoZero`` / ``min``) or its last (``max``); the first is drawn lowest, unless the category axis is
    reversed (``maxMin``), which draws it on top."""
    root = next(x for x in (_xml(path, n) for n in zipfile.ZipFile(path).namelist()
                            if re.fullmatch(r"xl/charts/chart\d+\.xml", n))
                if title == "".join(t.text or "" for t in x.find("c:chart/c:title", NS).iter(f"{{{NS['a']}}}t")))
    reversed_axis = root.find("c:chart/c:plotArea/c:catAx/c:scaling/c:orientation", NS).get("val") == "maxMin"
    crosses = root.find("c:chart/c:plotArea/c:valAx/c:crosses", NS).get("val")
    return (crosses == "max") == reversed_axis


def test_overall_chart_value_axis_is_under_the_bars_with_or_without_a_summary(text_pair, tmp_path):
    """The OverallMetrics chart's ms axis is under its bars, beside the legend, with the Summary's bottom-up data
    and without a Summary (as where an API caller takes it out of result.sheets), where the category axis is
    reversed to read OverallMetrics' own rows top down: there the ms scale stood above the bars (rendered by
    LibreOffice 7.4, as Excel draws a reversed category axis crossed at its first category)."""
    from msprof_compare.report import excel

    result, path = text_pair
    title = "Time by category: base vs comparison (ms)"
    assert _value_axis_at_the_bottom(path, title)
    alone = tmp_path / "overall.xlsx"
    excel.render([s for s in result.sheets if s.name == "OverallMetrics"], str(alone),
                 ("Base Profiling: b", "Comparison Profiling: c"))
    faces = _bar_chart_faces(alone, title)
    assert faces["categories"][0] == "Computing Time"  # the sheet's rows read top down: the axis is reversed
    assert _value_axis_at_the_bottom(alone, title)


def test_overall_metrics_of_e2e_time_alone_without_a_summary_has_no_chart(text_pair, tmp_path, caplog):
    """Synthetic edit of the real OverallMetrics sheet (text level1 -> level2), rendered without a Summary (as
    where a caller takes it out of result.sheets): cut to its E2E Time row, as of a run whose time falls in no
    other row (the sheet leaves out rows of zero time on both sides; no sample has such a run). Nothing to plot
    (the rows but E2E Time would be rows 4..3): no chart, and no warning."""
    import dataclasses

    from msprof_compare.report import excel

    result, _path = text_pair
    sheet = next(s for s in result.sheets if s.name == "OverallMetrics")
    cut = dataclasses.replace(sheet, data=sheet.data.iloc[-1:], row_styles=sheet.row_styles[-1:])
    path = tmp_path / "overall.xlsx"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        excel.render([cut], str(path), ("Base Profiling: b", "Comparison Profiling: c"))
    assert read_xlsx(path, sheet_name="OverallMetrics", header=2)["Index"].tolist() == ["E2E Time"]
    assert "Chart for sheet" not in caplog.text
    with zipfile.ZipFile(path) as z:
        assert not [n for n in z.namelist() if n.startswith("xl/charts/")]


def test_waterfall_chart_series_legend_and_axis(db_pair):
    """The waterfall chart over the helper table under "Chart data" (9 rows): the invisible base from column B,
    increases C, decreases D, E2E totals E; the invisible series has no legend entry. DB level2 -> level1:
    levels 129.204314 (after Vector) to 137.919295 ms (comparison E2E), a span of 8.715 ms, under half of the
    top: the value axis starts below the lowest level (128.333 ms) rounded down to one significant digit:
    100 ms."""
    _result, path = db_pair
    sheet = _summary(path)
    col_a = sheet[0].tolist()
    header = col_a.index("Step", _row_of(col_a, "Chart data"))  # 0-based index of the helper header
    first, last = header + 2, header + 10
    assert col_a[first - 1] == "Base E2E" and col_a[last - 1] == "Comparison E2E"
    chart = _charts(path)["E2E time: base to comparison (ms)"]
    got = [(s["name"], s["cat"], s["val"]) for s in chart["series"]]
    assert got == [(name, _ref(first, last, "A"), _ref(first, last, col)) for name, col in (
        ("Invisible", "B"), ("Increase (slower)", "C"), ("Decrease (faster)", "D"), ("E2E", "E"))]
    assert chart["series"][3]["cache"] == pytest.approx([129.206402] + [0.0] * 7 + [137.919295])
    assert chart["deleted"] == [0]
    cum = sheet.iloc[3:12, 4].astype(float).tolist()               # Cumulative(ms) of rows 4-12
    low, top = min(cum), max(cum)
    assert (low, top) == (pytest.approx(129.204314), pytest.approx(137.919295)) and top - low < top / 2
    assert chart["min"] == ["100"]


def test_waterfall_category_labels_wrap(text_pair):
    """The waterfall's category labels (the helper table's Step cells) break at spaces into lines of 16 characters
    at most: rotated on one line, "Other Computing (minus overlap of categories)" (B200 against NPU Level1) ran over
    the legend in LibreOffice, and so did text pair 1's "Group 0 Communication (uncovered)". The waterfall table
    above keeps the names whole."""
    _result, path = text_pair
    col_a = _summary(path)[0].tolist()
    header = col_a.index("Step", _row_of(col_a, "Chart data"))
    labels = col_a[header + 1:col_a.index("Comparison E2E", header) + 1]
    steps = col_a[3:3 + len(labels)]
    assert steps[-3:] == ["Group 0 Communication (uncovered)", "Free: Other", "Comparison E2E"]
    assert labels[-3:] == ["Group 0\nCommunication\n(uncovered)", "Free: Other", "Comparison E2E"]
    assert [label.replace("\n", " ") for label in labels] == steps
    assert all(len(line) <= 16 for label in labels for line in label.split("\n"))
    from msprof_compare.compare.waterfall import OVERLAP_STEP
    from msprof_compare.report.charts import category_label

    assert category_label(OVERLAP_STEP) == "Other Computing\n(minus overlap\nof categories)"
    # a word longer than a line (a DB export's HCCL group) keeps its line, whole
    group = "90.91.105.46%enp189s0f0_60000_0"
    assert category_label(f"Group {group} Communication (uncovered)") == f"Group\n{group}\nCommunication\n(uncovered)"


def test_waterfall_axis_starts_at_zero_when_the_change_is_large(tmp_path_factory):
    """Text level1 -> the bare trace_view.json (pair 8's base): E2E falls from 136.581 to 11.270 ms, more than
    half of the top level, so the value axis keeps its automatic start (no minimum), though the last level
    alone would look like a small change."""
    _result, path = _run(tmp_path_factory, "drop", NPU_L1, TRACE_VIEW, enable_profiling_compare=True)
    col_a = _summary(path)[0].tolist()
    assert col_a[3] == "Base E2E"
    chart = _charts(path)["E2E time: base to comparison (ms)"]
    assert chart["series"][3]["cache"][0] == pytest.approx(136.581009)
    assert chart["series"][3]["cache"][-1] == pytest.approx(11.269917)
    assert chart["min"] == []


# --------------------------------------------------------------------------- statistic regressions

def test_regression_tables_under_chart_data_and_their_charts(db_pair):
    """Under "Chart data" and the waterfall helper table, one table a statistic sheet with a regression, each
    after a blank row: "<sheet>: top N regressions (<what>, <unit>)", N = the rows listed; its chart plots
    exactly those rows, is titled "Top N regressions: <what> (<unit>, comparison - base)" and is 24 px a bar
    + 120 px tall (320 px at least). Column A holds each row's whole name, B its growth, C the bar's label the
    chart reads (distinct, the name itself up to 40 characters). CommunicationCompare: only the allreduce op
    grew, so "top 1". The OverallMetrics chart's steps lie among them, as that sheet is drawn."""
    _result, path = db_pair
    cells = _summary(path)
    col_a = cells[0].tolist()
    charts = _charts(path)
    helper_last = col_a.index("Comparison E2E", _row_of(col_a, "Chart data")) + 1
    row = helper_last + 1
    seen = []
    while row < len(col_a):
        assert pd.isna(col_a[row - 1]), row                      # a blank row before each table
        head = col_a[row]
        rows = 0
        while row + 1 + rows < len(col_a) and not pd.isna(col_a[row + 1 + rows]):
            rows += 1
        if head.startswith("OverallMetrics chart:"):  # the steps last first (test_overall_chart_bars_are_...)
            assert rows == _steps(col_a)[1] - _steps(col_a)[0] + 1
            row += rows + 2
            continue
        m = re.fullmatch(r"(\w+): top (\d+) regressions? \((.+), (\w+)\)(; .+)?", head)
        assert m, head
        sheet, n, what, unit = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        first = row + 2
        assert rows == n, sheet
        assert head.endswith("regression" + ("" if n == 1 else "s") + f" ({what}, {unit})" + (m.group(5) or ""))
        chart = charts[f"Top {n} regression{'' if n == 1 else 's'}: {what} ({unit}, comparison - base)"]
        (ser,) = chart["series"]
        assert (ser["name"], ser["cat"], ser["val"]) == (f"Diff({unit})", _ref(first, first + n - 1, "C"),
                                                         _ref(first, first + n - 1, "B"))
        assert cells.iloc[row, 2] == "Chart label"
        names, labels = col_a[row + 1:row + 1 + n], cells[2].tolist()[row + 1:row + 1 + n]
        assert len(set(labels)) == n
        assert all(lab == name if len(name) <= 40 else len(lab) <= 48 for name, lab in zip(names, labels, strict=True))
        assert chart["height"] == pytest.approx(max(320, 24 * n + 120))
        seen.append((sheet, n))
        row += n + 2
    assert seen == [("CommunicationCompare", 1), ("ModuleCompareStatistic", 20), ("ApiCompare", 20),
                    ("KernelCompare", 20)]


def _op_statistic(path: Path) -> dict[str, float]:
    with open(path, newline="", encoding="utf-8") as f:
        return {f"{r['OP Type']} {r['Core Type']}": float(r["Total Time(us)"]) for r in csv.DictReader(f)}


def test_kernel_type_regressions_are_named_by_type_and_core(tmp_path_factory):
    """--use_kernel_type: the regressions of KernelTypeCompare are named "<kernel type> <core type>" and are
    the growth of each pair's total time between the two op_statistic.csv files (Conv2DBackpropFilter on
    AI_CORE: 645.433 -> 663.133 us, +17.7 us first)."""
    from msprof_compare.report import charts

    _need(NPU_L1, NPU_L2)
    from msprof_compare.api import compare

    result = compare(str(SAMPLES / NPU_L1), str(SAMPLES / NPU_L2), enable_kernel_compare=True, use_kernel_type=True)
    base = _op_statistic(SAMPLES / NPU_L1 / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv")
    comp = _op_statistic(SAMPLES / NPU_L2 / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv")
    grew = {k: comp.get(k, 0.0) - base.get(k, 0.0) for k in base.keys() | comp.keys()}
    grew = {k: v for k, v in grew.items() if v > 1e-9}
    assert len(grew) == 15
    top, spec = charts.regressions(next(s for s in result.sheets if s.name == "KernelTypeCompare"))
    assert spec.unit == "us"
    assert dict(zip(top["Name"], top["Diff"], strict=True)) == pytest.approx(grew)
    assert top["Name"].iloc[0] == "Conv2DBackpropFilter AI_CORE" and top["Diff"].iloc[0] == pytest.approx(17.7)


def test_long_module_names_are_listed_in_full(tmp_path_factory):
    """BERT-small, H100 -> MI300: the module paths that grew are up to 102 characters long; the Summary's
    ModuleCompareStatistic regression table lists them whole, as the ModuleCompareStatistic sheet names them."""
    result, path = _run(tmp_path_factory, "bert", BERT.format("h100"), BERT.format("mi300"))
    col_a = _summary(path)[0].tolist()
    head = _row_of(col_a, "ModuleCompareStatistic: top ")
    names = []
    while head + len(names) < len(col_a) and isinstance(col_a[head + len(names)], str):
        names.append(col_a[head + len(names)])
    stat = read_xlsx(path, sheet_name="ModuleCompareStatistic", header=2)
    modules = set(stat["Module Name"].astype(str).str.strip())
    assert names and set(names) <= modules
    assert max(len(n) for n in names) == 102
    # beside them (column C) the bars' labels: a path over 40 characters as its last component after "…",
    # distinct, so the chart's label area stays narrow
    labels = _summary(path)[2].tolist()[head:head + len(names)]
    assert len(set(labels)) == len(labels)
    for name, label in zip(names, labels, strict=True):
        assert label == name if len(name) <= 40 else label == "…" + name[name.rindex("/"):]


def test_module_chart_labels_of_npu_pair_1(text_pair):
    """NPU pair 1 (text level1 -> level2): the ModuleCompareStatistic chart's bars are labelled by the tails of
    their module paths (the paths are up to 75 characters long): a path of at most 40 characters whole, a
    longer one as "…/ <last module>", a backward one with its "[ BACKWARD ]" marker in front (forward and
    backward Linear_1 both grew); the whole paths stay in column A, beside the labels. Left out: "/
    DistributedDataParallel_0", whose growth AlexNet_0 holds (>= 90 %), and "…/ Sequential_0", which grew
    less than its MaxPool2d_1."""
    _result, path = text_pair
    cells = _summary(path)
    head = _row_of(cells[0].tolist(), "ModuleCompareStatistic: top 20 ")   # 1-based: the first data row's index
    names = cells[0].tolist()[head:head + 20]
    labels = cells[2].tolist()[head:head + 20]
    assert cells.iloc[head - 1, 2] == "Chart label"
    assert labels == [
        "/ DistributedDataParallel_0/ AlexNet_0", "…/ Sequential_1", "[ BACKWARD ] …/ Conv2d_0", "…/ Linear_0",
        "…/ MaxPool2d_1", "…/ Linear_1", "…/ MaxPool2d_2", "…/ AdaptiveAvgPool2d_0", "[ BACKWARD ] …/ Linear_1",
        "[ BACKWARD ] …/ ReLU_1", "[ BACKWARD ] …/ ReLU_0", "…/ Linear_2", "…/ MaxPool2d_0",
        "/[ BACKWARD ]/ CrossEntropyLoss_0", "[ BACKWARD ] …/ ReLU_3", "[ BACKWARD ] …/ ReLU_2", "/ CrossEntropyLoss_0",
        "[ BACKWARD ] …/ ReLU_5", "[ BACKWARD ] …/ ReLU_6", "…/ ReLU_6"]
    assert names[2] == "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ Conv2d_0"
    assert names[8] == "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_1"
    assert names[5] == "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_1"


def test_colliding_chart_labels_are_lengthened_alone():
    """Real module paths of timesformer (H100 -> MI300) and NPU pair 1: two modules of one class in different
    parents share their last component, so those two labels take one more component each; the others stay
    short. Equal names (rows of one name) are told apart by a count; long names are cut as head…tail, only
    those whose cut forms would be equal lengthened."""
    from msprof_compare.report.charts import short_labels

    enc = "/ TimesformerForVideoClassification_0/ TimesformerModel_0/ TimesformerEncoder_0"
    names = [f"{enc}/ TimesformerLayer_3/ TimeSformerAttention_6/ TimesformerSelfAttention_6/ Linear_0",
             f"{enc}/ TimesformerLayer_3/ TimeSformerAttention_6/ TimeSformerSelfOutput_6/ Linear_0",
             f"{enc}/ TimesformerLayer_4/ TimeSformerAttention_8"]
    assert short_labels(names, paths=True) == ["…/ TimesformerSelfAttention_6/ Linear_0",
                                               "…/ TimeSformerSelfOutput_6/ Linear_0", "…/ TimeSformerAttention_8"]
    api = "autograd::engine::evaluate_function: "
    names = [api + "torch::autograd::AccumulateGrad", api + "ConvolutionBackward0", "aten::mul", "aten::mul"]
    assert short_labels(names) == ["autograd::engine::evaluate…ccumulateGrad",
                                   "autograd::engine::evaluate…tionBackward0", "aten::mul", "aten::mul (2)"]
    names = [api + "MaxPool2DWithIndicesBackward0", api + "AvgPool2DWithIndicesBackward0", "aten::max_pool2d"]
    # 30 characters keep "…sBackward0", 50 "…IndicesBackward0" of both: only their whole names differ
    assert short_labels(names, cap=30) == names
    assert short_labels(names, cap=30)[:2] != short_labels(names[:1], cap=30) + short_labels(names[1:2], cap=30)


def test_count_suffixes_never_repeat_a_label():
    """A row's own name may already read like a counted label (``aten::mul (2)``): the count skips it, so every
    bar of a chart keeps a label of its own (two equal labels name two bars spreadsheets cannot tell apart)."""
    from msprof_compare.report.charts import short_labels

    assert short_labels(["aten::mul", "aten::mul", "aten::mul (2)"]) == ["aten::mul", "aten::mul (3)",
                                                                         "aten::mul (2)"]
    assert short_labels(["aten::mul", "aten::mul (2)", "aten::mul", "aten::mul"]) == [
        "aten::mul", "aten::mul (2)", "aten::mul (3)", "aten::mul (4)"]
    labels = short_labels(["x", "x (3)", "x", "x", "x (2)", "x"])
    assert len(set(labels)) == 6 and labels[1] == "x (3)" and labels[4] == "x (2)"


def test_statistic_sheets_without_a_summary_chart_nothing_and_warn_nothing(tmp_path, caplog):
    """An operator-only run has no time breakdown, so no Summary to hold chart data: the module sheets (whose
    regressions exist) get no chart, silently."""
    _need(NPU_L1, NPU_L2)
    from msprof_compare.api import compare
    from msprof_compare.report import charts

    result = compare(str(SAMPLES / NPU_L1), str(SAMPLES / NPU_L2), enable_operator_compare=True)
    assert result.sheet_names == ["ModuleCompareStatistic", "ModuleCompare"]
    assert charts.regressions(next(s for s in result.sheets if s.name == "ModuleCompareStatistic")) is not None
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        path = result.to_excel(str(tmp_path))
    assert "Chart for sheet" not in caplog.text
    with zipfile.ZipFile(path) as z:
        assert not [n for n in z.namelist() if n.startswith("xl/charts/")]


def test_a_statistic_sheet_without_its_comparison_amount_column_charts_nothing(text_pair):
    """Synthetic edit of the real ApiCompare sheet: cut to its first 6 columns (Order Id, api name and the base
    side's four), it has no comparison Total Duration (column 6): no regressions, rather than an error."""
    from msprof_compare.compare.table import Sheet
    from msprof_compare.report import charts

    result, _path = text_pair
    api = next(s for s in result.sheets if s.name == "ApiCompare")
    assert charts.regressions(api) is not None
    cut = Sheet("ApiCompare", api.columns[:6], api.data.iloc[:, :6], (2, 5), (6, 6))
    assert charts.regressions(cut) is None


def test_contributors_on_no_sheet_are_named(text_pair, db_pair, tmp_path_factory):
    """Where the workbook shows the module sheets, the operator-level contributors still count every operator,
    so one outside every module is on no sheet: the note under the table names it (audit of session 36: a
    reader looked for pair 1's AccumulateGrad in vain). Independent: the original's pair-1 ModuleCompareStatistic
    has no row of it (nor of any autograd::engine op), and its OperatorCompareStatistic (written with
    --disable_module) has. An optimizer pseudo-module (DB pair: Optimizer.step#SGD.step) is a module of those
    sheets and is not named."""
    ref = Path(__file__).resolve().parents[1].parent / "shared" / "reference-outputs" / "1-npu-text-l1-vs-l2"
    book = ref / "performance_comparison_result.xlsx"
    if not book.exists():
        pytest.skip("reference outputs not found")
    stat = read_xlsx(book, sheet_name="ModuleCompareStatistic", header=None)
    listed = {v for col in (1, 4) for v in stat[col].tolist() if isinstance(v, str)}
    name = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    assert name not in listed and not [v for v in listed if v.startswith("autograd::engine")]
    assert "Optimizer.step#SGD.step" in listed  # a pseudo-module's class
    result, path = text_pair
    assert result.contributors["Name"].tolist() == [name]
    assert [v for v in _summary(path)[0].tolist() if isinstance(v, str)
            and v.startswith(f"Not on the module sheets: {name} (it is outside every module)")]
    db_result, db_path = db_pair
    col_a = _summary(db_path)[0].tolist()
    (note,) = [i for i, v in enumerate(col_a) if isinstance(v, str) and v.startswith("Note:")]
    (where,) = [i for i, v in enumerate(col_a) if isinstance(v, str) and v.startswith("Not on the module sheets:")]
    # under the share note's two sentences and the Wait / Transmit three, which the console and the JSON carry too
    assert where == note + 5 and col_a[note + 2].startswith("Of the communication groups' uncovered time")
    assert "Optimizer.step#SGD.step" in db_result.contributors["Name"].tolist()
    # of the 5 on no sheet, 4 backward ops run around their backward modules, whose rows hold their time, and
    # DistributedDataParallel.forward has a row (0 ms: it is in DistributedDataParallel_0) while AlexNet_0, run
    # inside it, holds its time: the module contributors under the row open those 5 up; the row names the one
    # whose time no module row holds
    assert "Optimizer" not in col_a[where] and col_a[where] == (
        "Not on the module sheets: torch.distributed.ddp.reducer::copy_bucket_to_grad (it is outside every module); "
        "the disable_module option writes every operator's row (OperatorCompareStatistic).")
    assert col_a[where + 1:where + 7] == [  # a row per line, as the console's
        "The module rows hold this much of the time of the operators that run modules:",
        "  - autograd::engine::evaluate_function: ConvolutionBackward0 (all of it)",
        "  - autograd::engine::evaluate_function: ReluBackward0 (all of it)",
        "  - autograd::engine::evaluate_function: AddmmBackward0 (base 0.550 of its 0.606 ms, comparison 0.560 of its "
        "0.613 ms)",
        "  - ... (5 in all; the other 2: all of it)",
        "The module contributors rank the module rows inside them by their change:"]
    # the 5 runners: DistributedDataParallel.forward runs every forward module row under DistributedDataParallel_0;
    # the backward ops of ConvolutionBackward0, ReluBackward0, AddmmBackward0 and NllLossBackward0 run the
    # backward rows of their aten ops. Not inside any of them (by the autograd function names, by hand): the
    # optimizer's rows (Optimizer.step#SGD.step, a contributor on the module sheets, runs no module), the loss's
    # forward (outside DistributedDataParallel.forward), and the backward rows of the functions not listed
    # (MaxPool2d, Dropout, AdaptiveAvgPool2d, log-softmax, the reshape of the flatten)
    runners = [n for n, _ in db_result.module_contributors.attrs["runs_modules"]]
    assert sorted(runners) == sorted(["DistributedDataParallel.forward"] + [
        f"autograd::engine::evaluate_function: {f}Backward0" for f in ("Convolution", "Relu", "Addmm", "NllLoss")])
    bw, net = "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0", "Sequential_0/ MaxPool2d"
    outside = {"/Optimizer.step#SGD.step > aten::_foreach_add", "/Optimizer.step#SGD.step > aten::_foreach_mul_",
               "/Optimizer.step#SGD.step > aten::_foreach_add_", "/ CrossEntropyLoss_0 > aten::cross_entropy_loss",
               "/[ BACKWARD ]/ CrossEntropyLoss_0 > aten::_log_softmax_backward_data", f"{bw} > aten::reshape",
               f"{bw}/ Sequential_1/ Dropout_0 > npu::npu_dropout_backward",
               f"{bw}/ Sequential_1/ Dropout_1 > npu::npu_dropout_backward",
               f"{bw}/ AdaptiveAvgPool2d_0 > aten::_adaptive_avg_pool2d_backward",
               *(f"{bw}/ {net}_{i} > aten::max_pool2d_with_indices_backward" for i in range(3))}
    # the module contributors, recomputed from the workbook's ModuleCompareStatistic cells: its operator rows
    # (not [ TOTAL ]) inside the runners by |comparison - base Device Self Time|, largest first (ties in sheet
    # order), until 80 %
    stat = read_xlsx(db_path, sheet_name="ModuleCompareStatistic", header=None).iloc[3:]  # 2 caption rows, header
    ops = stat[stat[4].astype(str) != "[ TOTAL ]"]
    every = [(f"{str(m).strip()} > {o}", float(b), float(c), round(float(c) - float(b), 6))
             for m, o, b, c in zip(ops[3], ops[4], ops[6], ops[10], strict=True)]
    rows = [r for r in every if r[0] not in outside]
    assert len(every) == 54 and len(rows) == 54 - len(outside) == 42
    order = sorted(range(len(rows)), key=lambda i: -abs(rows[i][3]))
    total, cum, want = sum(abs(r[3]) for r in rows), 0.0, []
    for i in order:
        want.append(rows[i])
        cum += abs(rows[i][3])
        if cum >= 0.8 * total - 1e-12:
            break
    mods = db_result.module_contributors
    got = list(zip(mods["Name"], mods["Base(ms)"], mods["Comparison(ms)"], mods["Diff(ms)"], strict=True))
    assert [g[0] for g in got] == [w[0] for w in want] and len(got) == 15
    assert [x for g in got for x in g[1:]] == pytest.approx([x for w in want for x in w[1:]], abs=1e-9)
    # the 81.1 % is of the 42 rows inside the runners (by hand: the 15 rows' summed |change| over the 42 rows'); of
    # all 54 rows' change they hold 72.1 %, so the title said "of the module operators' device-time change" wrongly
    listed = sum(abs(w[3]) for w in want)
    assert f"{listed / total:.1%}" == "81.1%" and f"{listed / sum(abs(r[3]) for r in every):.1%}" == "72.1%"
    top = col_a.index("Top Module Contributors (module operator level: 15 rows cover 81.1% of the device-time "
                      "change of the module operators inside them; the first 10 shown)")
    assert col_a[top + 2: top + 2 + 10] == [w[0] for w in want[:10]] and pd.isna(col_a[top + 12])
    # with --disable_module the workbook has OperatorCompareStatistic, and the row is gone
    flat, flat_path = _run(tmp_path_factory, "flat", NPU_L1, NPU_L2, disable_module=True)
    assert name in flat.sheet("OperatorCompareStatistic").iloc[:, 1].tolist()
    assert not [v for v in _summary(flat_path)[0].tolist() if isinstance(v, str) and v.startswith("Not on the")]


def test_no_module_contributors_where_no_contributor_runs_modules(text_pair, tmp_path_factory):
    """Where the feature must stay silent: text level1 -> level2, whose one contributor (AccumulateGrad, -6.023
    ms) is outside every module and runs none (its time is HCCL all-reduce), and the README's BERT pair, whose
    contributors (aten::scaled_dot_product_attention, aten::linear, aten::gelu) are ops inside modules, each
    changed over its layers alike (no module row holds half of an op's change: H100 against MI300X). No
    module contributors in the API, the JSON or the Summary sheet, though ModuleCompareStatistic has changed rows
    on both (a trigger that fired on any change listed 18 and 18 rows there)."""
    import json

    from msprof_compare.report.json_report import to_document

    bert_dir = Path(__file__).resolve().parents[1] / "sample_data"
    from msprof_compare.api import compare

    bert = compare(str(bert_dir / "bert-small_h100.json.gz"), str(bert_dir / "bert-small_mi300.json.gz"))
    bert_path = bert.to_excel(str(tmp_path_factory.mktemp("bert")))
    result, path = text_pair
    assert result.contributors["Name"].tolist() == ["autograd::engine::evaluate_function: torch::autograd::"
                                                    "AccumulateGrad"]
    assert bert.contributors["Name"].tolist() == ["aten::scaled_dot_product_attention", "aten::linear",
                                                  "aten::gelu"]
    for res, book in ((result, path), (bert, bert_path)):
        stat = res.sheet("ModuleCompareStatistic")
        assert (stat["Device Self Time Diff(ms)"] != 0).any()  # module rows changed: silence is not for want
        assert not len(res.module_contributors)
        summary = json.loads(json.dumps(to_document(res), default=str))["summary"]
        assert summary["module_contributors"] == [] and summary["module_contributors_note"] is None
        col_a = [v for v in _summary(book)[0].tolist() if isinstance(v, str)]
        assert not [v for v in col_a if v.startswith(("Top Module Contributors", "The module rows hold"))]


def test_module_contributor_names_wrap_so_their_operator_shows(db_pair):
    """DB level2 -> level1: "module path > operator" runs past column A (9 of the first 10 module contributors,
    which the sheet shows;
    "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ Conv2d_0 > aten::convolution_backward"
    is 104 characters), and column B holds a figure, so an unwrapped name was cut at the column's edge: the
    operator at its end was hidden and the Conv2d_0 and Conv2d_2 rows read alike. Each name cell wraps, and a
    name wider than the column's line (width x 7 - 5 px less 3 %, in 11-point Arial's widths) gets a row of two
    lines or more (15 pt each); a name that fits keeps one line."""
    import openpyxl

    result, path = db_pair
    ws = openpyxl.load_workbook(path)["Summary"]
    width = ws.column_dimensions["A"].width
    names = result.module_contributors["Name"].tolist()[:10]
    first = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == names[0])
    long = 0
    for i, name in enumerate(names):
        cell = ws.cell(first + i, 1)
        assert cell.value == name and cell.alignment.wrap_text, name
        height = ws.row_dimensions[first + i].height
        if sum(char_pixels(ch) for ch in name) * 1.03 > (width - 0.7109375) * 7 - 5:  # xlsxwriter adds 0.71
            long += 1
            assert height is not None and height >= 30, name
        else:
            assert height is None, name
    assert long == 9


def test_module_contributors_lead_gives_the_held_part_after_the_name(tmp_path_factory):
    """vLLM decode -> prefill+decode: the comparison's step annotation (execute_8192_context_9(...)) is the one
    contributor and runs the model; the module rows hold 156.000 of its 156.086 ms: the level-1 modules'
    [ TOTAL ] Device Total Time, GptOssForCausalLM_0 155.653032 + LogitsProcessor_0 0.346637 = 155.999669 ms
    (read from the sheet here). The lead names the operator, then the part held, in that order: it read
    "hold this much of the time (comparison 156.000 of its 156.086 ms) of execute_...", the figures between
    "the time" and the 100-character name."""
    inference = "tracelens/tests/traces/inference"
    result, _path = _run(tmp_path_factory, "vllm", f"{inference}/vllm_decode_full/graph_execution.json.gz",
                         f"{inference}/vllm_prefilldecode_piecewise/graph_execution.json.gz")
    from msprof_compare.compare.module_contributors import module_contributors_note

    (name,) = result.contributors["Name"].tolist()
    stat = result.sheet("ModuleCompareStatistic")
    tops = stat[(stat["Operator Name"] == "[ TOTAL ]") & (stat["Module Name"].str.count("/") == 1)]
    held = tops["Device Total Time(ms).1"].sum()
    total = result.contributors["Comparison(ms)"].iloc[0]
    assert round(held, 3) == 156.0 and round(total, 3) == 156.086
    note = module_contributors_note(result.frames["module_contributors"])
    assert note == (
        f"The module rows hold part of the time of {name} (comparison {held:.3f} of its {total:.3f} ms), which runs "
        "modules: the module contributors rank the module rows inside it by their change")
    # the JSON schema quotes the lead as it is written (it said "all of its time", words the lead never has)
    import json

    schema = json.loads((Path(__file__).resolve().parents[1] / "msprof_compare" / "schemas" / "result.schema.json")
                        .read_text())
    described = schema["properties"]["summary"]["properties"]["module_contributors_note"]["description"]
    assert note[:note.index(name) + len(name)].replace(name, "<name>") in described


def test_regression_growth_is_the_exact_difference_of_the_sheet_cells(text_pair, db_pair):
    """Each chart-data growth is the decimal difference of the two cells it comes from, with no float noise
    past the cells' own digits (KernelCompare's MatMulV2 row read 10.420000000000016 us, ModuleCompareStatistic
    0.012880000000000003 ms, ApiCompare 0.22999999999999998 ms): the decimals are the cells' own, as written."""
    from decimal import Decimal

    from msprof_compare.report.charts import STAT_SPECS, regressions

    checked = 0
    for result, _path in (text_pair, db_pair):
        for sheet in result.sheets:
            spec = STAT_SPECS.get(sheet.name)
            if spec is None:  # NPU pairs: ApiCompare has no HIP / CUDA twins to sum
                continue
            out = regressions(sheet)
            if out is None:
                continue
            frame, _ = out
            d = sheet.data
            keep = spec.keep(d) if spec.keep is not None else [True] * len(d)
            cells = {}
            for i in range(len(d)):
                if not keep[i]:
                    continue
                name = str(d.iat[i, spec.name_cols[0]] if not pd.isna(d.iat[i, spec.name_cols[0]]) else "").strip()
                if not name and spec.alt_name_col is not None:
                    name = str(d.iat[i, spec.alt_name_col]).strip()
                for c in spec.name_cols[1:]:
                    name += " " + str(d.iat[i, c])
                b, c_ = (d.iat[i, spec.base_col], d.iat[i, spec.comp_col])
                b, c_ = (0.0 if pd.isna(v) else float(v) for v in (b, c_))
                cells.setdefault(name, []).append(Decimal(repr(c_)) - Decimal(repr(b)))
            for name, diff in zip(frame["Name"], frame["Diff"], strict=True):
                assert Decimal(repr(float(diff))) in cells[name], (sheet.name, name, diff)
                checked += 1
    assert checked >= 60


def test_console_module_contributors_keep_the_backward_marker(db_pair):
    """DB level2 -> level1 on the console: names cut from the left at 70 columns lost their "/[ BACKWARD ]"
    marker, so the backward ``Linear_0 > aten::mm`` row (its full name in the workbook below) read
    ``...ributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::mm``, a forward row. Leading path
    components give way whole now, the marker stays, and the room the title gives the column is used (81
    columns here: the forward names fit whole)."""
    from msprof_compare.report.summary_console import render_explain

    result, _ = db_pair
    names = result.module_contributors["Name"].tolist()[:10]
    assert names[3] == "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::mm"
    text = render_explain(result.frames, result.verdict)
    lines = text[text.index("| Top Module Contributors"):].splitlines()
    shown = [line.split("|")[2].rstrip()[1:] for line in lines[4:14]]
    assert shown[3] == "/[ BACKWARD ]/ .../ AlexNet_0/ Sequential_1/ Linear_0 > aten::mm"
    assert shown[0] == names[0] == "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::linear"
    assert shown[1] == "/[ BACKWARD ]/ .../ Sequential_0/ Conv2d_0 > aten::convolution_backward"
    for full, cut in zip(names, shown, strict=True):
        assert cut.startswith("/[ BACKWARD ]/") == full.startswith("/[ BACKWARD ]/"), (full, cut)
        assert cut == full or full.endswith(cut.partition("...")[2]) and len(cut) <= 81
    assert len({len(line) for line in lines[:15]}) == 1  # the table is no wider than its title


def test_summary_sheet_holds_the_consoles_communication_and_memory_parts(text_pair, tmp_path):
    """The console prints the communication contributors and line, the memory contributors and line; the workbook's
    Summary had none of them, so a reader of the workbook alone never learnt that the all-reduce shrank by 6 ms or
    that the memory inside the operators grew. Text level1 -> level2: allreduce by hand from trace_view.json's HCCL
    lanes; the README pair (H100 -> MI300X BERT-small): the memory table in MB, as the console's."""
    import openpyxl
    from test_communication_console import hccl_by_hand

    from msprof_compare.api import compare
    from msprof_compare.report.summary_console import communication_line, memory_line

    result, path = text_pair
    base_ms, _ = hccl_by_hand(SAMPLES / NPU_L1)
    comp_ms, _ = hccl_by_hand(SAMPLES / NPU_L2)
    cells = _summary(path)
    col_a = cells[0].tolist()
    at = _row_of(col_a, "Top Communication Contributors (1 row covers 100.0% of the communication ops' duration "
                        "change)")
    assert cells.iloc[at, :7].tolist() == ["Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share",
                                           "Cumulative Share", "Rank"]
    name, b, c, d, share, cum, rank = cells.iloc[at + 1, :7].tolist()
    assert (name, share, cum, int(rank)) == ("allreduce", 1, 1, 1)
    # to the ns each event's times are read to (the trace writes sub-ns digits)
    assert (b, c, d) == pytest.approx((float(base_ms), float(comp_ms), float(comp_ms - base_ms)), abs=1e-6)
    line = communication_line(result.frames["communication"])
    assert line.startswith("Communication time (CommunicationCompare's op rows) 105.992 ms -> 99.973 ms")
    # right under the table (from its blank row), as the console prints it, a row per sentence
    assert col_a[at + 2:at + 4] == line.split("\n")
    mem = memory_line(result.frames["memory"]).split("\n")
    assert col_a[col_a.index(mem[0]):col_a.index(mem[0]) + 2] == mem  # no memory contributor here: the lines alone
    assert _row_of(col_a, "Validity checks") > at + 3

    repo = Path(__file__).resolve().parents[1] / "sample_data"
    bert = compare(str(repo / "bert-small_h100.json.gz"), str(repo / "bert-small_mi300.json.gz"))
    book = bert.to_excel(str(tmp_path))
    cells = _summary(book)
    col_a = cells[0].tolist()
    at = _row_of(col_a, "Top Memory Contributors (1 row covers 100.0% of the operators' allocated-memory change)")
    assert cells.iloc[at, 1:4].tolist() == ["Base(MB)", "Comparison(MB)", "Diff(MB)"]
    row = bert.memory_contributors.iloc[0]
    assert cells.iloc[at + 1, :4].tolist() == [row["Name"], row["Base(MB)"], row["Comparison(MB)"], row["Diff(MB)"]]
    assert (round(row["Base(MB)"], 2), round(row["Comparison(MB)"], 2)) == (39.30, 1989.30)  # README's figures
    assert openpyxl.load_workbook(book)["Summary"].cell(at + 2, 2).number_format == "#,##0.00"  # MB as on the console
    assert col_a[at + 2:at + 4] == memory_line(bert.frames["memory"]).split("\n")
    assert not any(isinstance(v, str) and v.startswith("Top Communication Contributors") for v in col_a)


def test_summary_sheet_holds_the_memory_note_under_the_memory_contributors(samples, tmp_path):
    """H100 Falconsai -> H100 Qwen with --op_name_map pairing aten::linear with aten::mul, both memory contributors:
    the console prints, under the memory contributors, the note that the map pairs names the rows keep apart; the
    Summary sheet puts the same "Note: ..." line right under its memory table (a mutant leaving it out survived)."""
    from msprof_compare.api import compare
    from msprof_compare.report.summary_console import render_memory

    traces = samples / "tracelens/tests/traces/h100"
    result = compare(str(traces / "Falconsai_nsfw_image_detection__1016002.json.gz"),
                     str(traces / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"),
                     op_name_map={"aten::linear": "aten::mul"})
    notes = [line for line in render_memory(result.frames).splitlines() if line.startswith("Note: ")]
    assert len(notes) == 1 and "the op_name_map option pairs" in notes[0] and "aten::linear with aten::mul" in notes[0]
    col_a = _summary(result.to_excel(str(tmp_path)))[0].tolist()
    at = _row_of(col_a, "Top Memory Contributors")
    shown = min(len(result.memory_contributors), 10)
    assert col_a[at] == "Name" and all(isinstance(v, str) for v in col_a[at + 1: at + 1 + shown])
    assert col_a[at + 1 + shown] == notes[0]


# --------------------------------------------------------------------------- Summary print setup

def test_summary_prints_its_tables_legibly_one_page_wide(text_pair, db_pair):
    """Fitted on one page with the chart beside its tables (A:U, 1,530 pt on NPU pair 1), the Summary printed at
    45 % (5-point text). Its print area is now the tables' columns, A:G (G, of the default 8.43 characters, 64 px,
    holds the contributors' Rank), printed one page wide (as many tall as needed) at 87.3 % and 86.2 % here, by
    hand from the widths written (7 pixels a character as written, 3/4 pt a pixel) on Letter's 11 in across less
    0.3 in sides; the chart under the waterfall ends on the first page."""
    for (_, path), a_width, scale in ((text_pair, 70.7109375, 0.8728), (db_pair, 72.7109375, 0.8622)):
        with zipfile.ZipFile(path) as z:
            xml = z.read("xl/worksheets/sheet1.xml").decode()
        setup = re.search(r"<pageSetup [^>]*>", xml).group(0)
        assert 'orientation="landscape"' in setup and 'fitToHeight="0"' in setup and "fitToWidth" not in setup
        assert '<pageSetUpPr fitToPage="1"/>' in xml  # its page breaks: test_summary_pages_keep_each_title_...
        assert 'left="0.3" right="0.3" top="0.5" bottom="0.6"' in xml
        assert "<oddFooter>&amp;L&amp;A&amp;RPage &amp;P of &amp;N</oddFooter>" in xml
        assert re.fullmatch(r"Summary!\$A\$1:\$G\$\d+", _summary_print_area(path))
        widths = [float(w) for w in re.findall(r'<col min="\d+" max="\d+" width="([\d.]+)"', xml)]
        assert widths == [a_width, 16.7109375, 14.7109375, 16.7109375, 18.7109375]  # B:C share one <col>
        points = ((a_width + 2 * 16.7109375 + 14.7109375 + 16.7109375 + 18.7109375) * 7 + 64) * 0.75
        assert 10.4 * 72 / points == pytest.approx(scale, abs=1e-4) and scale >= 0.7
        # the chart (from the row under the verdict) ends within the first page, 532.8 pt tall at 100 %
        top = _summary_chart_anchor(path)[0]
        ws = _xml(path, "xl/worksheets/sheet1.xml")
        heights = {int(r.get("r")) - 1: float(r.get("ht")) for r in ws.iter(f"{MAIN}row") if r.get("ht")}
        above = sum(heights.get(r, 15.0) for r in range(top))
        chart = _charts(path)["E2E time: base to comparison (ms)"]["height"]
        assert above + chart * 0.75 <= (8.5 - 1.1) * 72 / scale


@pytest.fixture(scope="module")
def bundled_pair(tmp_path_factory):
    """The bundled bert-small pair, H100 -> MI300X, as the README's command names it (the captions' paths
    relative, each on one line wherever the checkout is): 3 operator contributors, 1 memory contributor."""
    import os

    from msprof_compare.api import compare

    here = os.getcwd()
    os.chdir(Path(__file__).resolve().parents[1])
    try:
        result = compare("sample_data/bert-small_h100.json.gz", "sample_data/bert-small_mi300.json.gz")
    finally:
        os.chdir(here)
    return result, result.to_excel(str(tmp_path_factory.mktemp("bundled")))


_TITLE = re.compile(r"Top .*Contributors \(|Validity checks \(")


def _summary_pages(path) -> tuple[list[list[int]], list[float], float]:
    """The Summary's printed rows (1-based) page by page as its row breaks cut them, the rows' heights (points:
    as written, 15 where none is, 15.75 for a 12-point title Excel sizes itself) and the points a page holds in
    Excel: 7.4 in of Letter's 8.5 less the margins over the print area's scale, one page wide (its columns'
    pixels by ECMA-376's rule, 7 a digit; default columns 64 px)."""
    import math

    ws = _xml(path, "xl/worksheets/sheet1.xml")
    area = _summary_print_area(path)
    last_col, last = re.fullmatch(r"Summary!\$A\$1:\$([A-Z])\$(\d+)", area).groups()
    pixels = dict.fromkeys(range(1, ord(last_col) - 63), 64)
    for col in ws.iter(f"{MAIN}col"):
        for c in range(int(col.get("min")), int(col.get("max")) + 1):
            pixels[c] = math.trunc((256 * float(col.get("width")) + math.trunc(128 / 7)) / 256 * 7)
    scale = min(1.0, 10.4 * 72 / (sum(pixels[c] for c in range(1, ord(last_col) - 63)) * 0.75))
    titles = {i + 1 for i, v in enumerate(_summary(path)[0].tolist()) if isinstance(v, str) and _TITLE.match(v)}
    heights = [15.75 if r in titles else 15.0 for r in range(1, int(last) + 1)]
    for row in ws.iter(f"{MAIN}row"):
        if row.get("ht") and int(row.get("r")) <= int(last):
            heights[int(row.get("r")) - 1] = float(row.get("ht"))
    starts = [0, *(int(b.get("id")) for b in ws.iter(f"{MAIN}brk")), int(last)]
    return [list(range(a + 1, b + 1)) for a, b in zip(starts, starts[1:], strict=False)], heights, 7.4 * 72 / scale


def test_summary_captions_are_filled_under_their_whole_text(bundled_pair):
    """The bundled pair's captions ("Base Profiling: sample_data/bert-small_h100.json.gz", 51 characters of bold
    Arial, over 300 px) are wider than column B (16 characters, 117 px) and fit B:F on one line: each is merged
    over B:F, filled under its whole text (written in B alone, its green ended under "sampl" and the rest of the
    path ran on over white cells), unwrapped, in a row of the default height."""
    import openpyxl

    _, path = bundled_pair
    ws = openpyxl.load_workbook(path)["Summary"]
    assert ws.column_dimensions["B"].width == pytest.approx(16.71, abs=0.01)
    assert {str(r) for r in ws.merged_cells.ranges if r.min_row <= 2} == {"B1:F1", "B2:F2"}
    for cell, fill in ((ws["B1"], "FF00FF00"), (ws["B2"], "FFFFFF00")):
        assert cell.value.endswith(".json.gz") and cell.fill.fgColor.rgb == fill
        assert not cell.alignment.wrap_text and ws.row_dimensions[cell.row].height is None


def test_summary_pages_keep_each_title_with_its_table(bundled_pair, text_pair):
    """Each Summary table's title prints on the page of its header and first two rows, and every page's rows fit
    Excel's page, the breaks all set: LibreOffice, whose pages in DejaVu Sans hold a third more rows, printed the
    bundled pair's "Top Memory Contributors" at the foot of page 1 and its table on page 2. By hand for the bundled
    pair: A:H of 257 + 3 x 117 + 103 + 131 + 2 x 64 = 970 px, 727.5 pt, under the page's 748.8: 100 %, 532.8 pt a
    page, 517.8 with a row to spare. Rows 1-34 (510 pt) hold the waterfall, its verdict and the chart; the
    operators' title, header and 2 rows would end at 570.75: page 2 starts at row 35 and holds 422.25 pt to row 55;
    "GPU vendor" (90 pt: its Detail on 6 lines) ends at 512.25, within: page 2 ends at row 56, page 3 holds the
    rest."""
    for (_, path), pages in ((bundled_pair, [34, 22, 2]), (text_pair, None)):
        rows, heights, page = _summary_pages(path)
        if pages:
            assert page == pytest.approx(532.8) and [len(p) for p in rows] == pages
        for p in rows:  # within Excel's page, which then sets no break of its own
            assert sum(heights[r - 1] for r in p) <= page
        col_a = _summary(path)[0].tolist()
        titles = [i + 1 for i, v in enumerate(col_a) if isinstance(v, str) and _TITLE.match(v)]
        assert len(titles) >= 2
        for t in titles:
            assert next(p for p in rows if t in p)[-1] >= t + 3 or pd.isna(col_a[t + 2]), col_a[t - 1]


def test_a_shortened_charts_rows_fit_the_first_page(samples, tmp_path):
    """The timesformer pair (H100 -> MI300X), whose three-line captions leave the chart less than its 440 px of page
    1: the rows the chart covers fit Excel's page with the rows above it, as every other page's. The chart was
    405 px, ending 5 px into a 21st row that passed the page (rows 1-32, 540 of 532.8 pt): Excel moves such a row
    to the next page, where the break set under the chart left it alone, a page of a chart's last 5 px. Now 19
    whole rows under the 225 pt above it fit the page less a row to spare (517.8 pt): 19 x 20 - 5 = 375 px."""
    from msprof_compare.api import compare

    traces = samples / "tracelens/tests/traces"
    path = compare(*(traces / f"{gpu}/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
                     for gpu in ("h100", "mi300"))).to_excel(str(tmp_path))
    rows, heights, page = _summary_pages(path)
    assert page == pytest.approx(532.8)
    for p in rows:
        assert sum(heights[r - 1] for r in p) <= page, (p[0], p[-1])
    with zipfile.ZipFile(path) as z:
        drawing = z.read("xl/drawings/drawing1.xml").decode()
    # the chart's anchor: from the top of a row to an offset (EMU, 9,525 a pixel) into another, rows of 20 px
    top, end, off = (int(x) for x in re.search(r"<xdr:from><xdr:col>0</xdr:col><xdr:colOff>0</xdr:colOff>"
                                                r"<xdr:row>(\d+)</xdr:row>.*?<xdr:to>.*?<xdr:row>(\d+)</xdr:row>"
                                                r"<xdr:rowOff>(\d+)</xdr:rowOff>", drawing).groups())
    assert sum(heights[:top]) == pytest.approx(225) and (end - top) * 20 + off / 9525 == 375
    assert rows[0][-1] >= end + 1  # the row the chart ends in prints on page 1 (1-based: end + 1)


def test_page_breaks_by_hand():
    """Rows of 15 pt on pages of 100: six a page; a title kept with 2 rows starts the next page where they would
    pass its foot (row 5: 75 + 45 = 120), not where they fit (row 3: 45 + 45); a block taller than a page is cut
    as any rows; a row of ``starts`` starts a page; no row under the chart (``fixed``) does, the row after it
    then; a 15.75-pt title, a header and a 60-pt row (90.75) fit, the next row not."""
    from msprof_compare.report import charts

    rows = [15.0] * 14
    assert charts._page_breaks(rows, 100, {}, set(), set()) == [6, 12]
    assert charts._page_breaks(rows, 100, {5: 7}, set(), set()) == [5, 11]
    assert charts._page_breaks(rows, 100, {3: 5}, set(), set()) == [6, 12]      # 45 + 45 = 90: it fits
    assert charts._page_breaks(rows, 100, {1: 13}, set(), set()) == [6, 12]     # 195 pt: no page holds it
    assert charts._page_breaks(rows, 100, {}, {2}, set()) == [2, 8]
    assert charts._page_breaks(rows, 100, {}, set(), {6, 7}) == [8]
    assert charts._page_breaks([15.75, 15.0, 60.0, 15.0], 100, {0: 2}, set(), set()) == [3]


@pytest.mark.skipif(shutil.which("soffice") is None or shutil.which("pdftotext") is None,
                    reason="needs soffice and pdftotext (apt-get install libreoffice-calc poppler-utils)")
def test_libreoffice_prints_no_title_at_a_pages_foot(bundled_pair, tmp_path):
    """LibreOffice prints the bundled pair's Summary on the pages its row breaks set, whatever font it puts for
    Calibri: page 1 the waterfall and its chart, page 2 the operator and memory contributors and the first checks,
    each title above its header; it printed "Top Memory Contributors" at the foot of page 1 (in DejaVu Sans)."""
    import subprocess

    _, path = bundled_pair
    subprocess.run(["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{tmp_path / 'p'}",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(path)],
                   check=True, capture_output=True, timeout=300)
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / f"{Path(path).stem}.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    pages = [[line.strip() for line in p.splitlines() if line.strip()] for p in text.split("\f")
             if re.search(r"^Summary\s+Page \d+ of \d+$", p.strip().splitlines()[-1] if p.strip() else "", re.M)]
    for page in pages:  # its last line the footer
        for i, line in enumerate(page[:-1]):
            if _TITLE.match(line):
                assert page[i + 1].split()[0] in ("Name", "Check"), line
    assert len(pages) == 3
    assert "E2E time: base to comparison (ms)" in " ".join(pages[0])
    assert not [line for line in pages[0] if _TITLE.match(line)]
    assert [line.split(" (")[0] for line in pages[1] if _TITLE.match(line)] == [
        "Top Contributors", "Top Memory Contributors", "Validity checks"]


@pytest.mark.parametrize(("above", "tables", "height"), [
    (225.0, 621.4, 375),     # 100 %: (532.8 - 15 - 225) / 15 = 19.5 whole rows: 19 x 20 px less a quarter row
    (350.0, 621.4, None),    # 243.7 - 5 px, under 320: the chart starts the next page instead
    (225.0, 1000.0, 440),    # 74.88 %: the page holds 711.5 pt, 648.7 px under the rows: the chart's 440
])
def test_the_chart_fits_the_first_page_or_starts_the_next(above, tables, height):
    from msprof_compare.report import charts

    assert charts._chart_height(above, tables) == height


def test_the_detail_runs_to_the_page_edge_and_further_only_where_a_row_would_be_too_tall():
    """By hand: A:G of 36/16/16/14/16/18/8.43 characters are 257 + 117 + 117 + 103 + 117 + 131 + 64 = 906 px,
    679.5 pt; one 8.43-character column (64 px, 48 pt) more reaches 727.5 of the page's 748.8 pt. With A at 72
    (868.5 pt, 86 %) there is no room. A 1,315-character detail of 4-letter words needs 33 lines of 8 words in
    E:G (42.43 characters, lines of 40), 495 pt, past Excel's 409: 9 and 11 words a line with one and two more
    columns (24 lines, 360 pt), which stay within a page at 70 % (868.5 + 96 <= 1,069.7 pt)."""
    from msprof_compare.report import charts

    table = [16, 16, 14, 16, 18, 8.43]
    assert charts._detail_columns([36, *table], ["short"]) == (7, pytest.approx(42.43 + 8.43))
    assert charts._detail_columns([72, *table], ["short"]) == (6, pytest.approx(42.43))
    long = " ".join(["aaaa"] * 263)
    assert charts._detail_columns([72, *table], [long]) == (8, pytest.approx(42.43 + 2 * 8.43))


@pytest.mark.skipif(shutil.which("soffice") is None or shutil.which("pdftotext") is None,
                    reason="needs soffice and pdftotext (apt-get install libreoffice-calc poppler-utils)")
def test_libreoffice_prints_the_summary_whole(text_pair, tmp_path):
    """LibreOffice prints NPU pair 1's Summary on pages one table wide: the first holds the waterfall, its verdict
    and the chart; the captions' paths, every contributor and every check are printed whole (nothing past the
    page's right edge, where a long path and the Details were cut); the chart data is not printed."""
    import subprocess

    _, path = text_pair
    subprocess.run(["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{tmp_path / 'p'}",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(path)],
                   check=True, capture_output=True, timeout=300)
    text = subprocess.run(["pdftotext", str(tmp_path / f"{Path(path).stem}.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    pages = [p for p in text.split("\f") if re.search(r"^Summary$", p, re.M)]
    assert 2 <= len(pages) <= 5
    first = " ".join(pages[0].split())
    assert "E2E time: base to comparison (ms)" in first and "Comparison E2E" in first
    paths = "".join(pages[0].split())  # a path wraps where its cell ends
    assert f"{NPU_L1}ComparisonProfiling:" in paths and f"{NPU_L2}Step" in paths
    whole = " ".join(" ".join(pages).split())
    for check in ("operator match rate", "NPU profiler settings", "computing split into categories"):
        assert check in whole
    assert "counters to split it by)" in whole and "a note from 50%" in whole  # the last words of the last two
    # the settings' identifier wraps at its underscores, not where a line ends ("ACL_AICORE_PIPE_U" / "TILIZATION")
    lines = [line.strip() for page in pages for line in page.splitlines()]
    assert lines.count("UTILIZATION") == 2 and lines.count("PIPE_") == 2
    assert not [line for line in lines if "TILIZATION" in line and line != "UTILIZATION"]
    assert "Chart data" not in whole
