"""Native xlsx charts (no images) and the Summary sheet's extra tables.

``draw_charts(workbook, worksheet, sheet)`` is called by the xlsx reporter
right after each sheet's table is written. It dispatches by sheet name:

* ``Summary``: writes the top-contributor and validity tables under the
  waterfall table, the chart data, and a waterfall chart (stacked columns:
  an invisible base series plus increase / decrease / total series);
* ``OverallMetrics``: base vs comparison bars of the time categories;
* statistic sheets: the top-20 regressions as bars, labelled by ``short_labels`` (the chart data keeps each
  bar's whole name beside its label); only in a workbook with a Summary sheet, which holds that data.

Charts must never add cells to another comparator's table (tests read those
sheets with ``pandas.read_excel(header=2)`` and count rows and columns), so
the data a chart needs that is not a contiguous range of its own sheet is
written in the "Chart data" area at the bottom of the Summary sheet. Every
cell is written in increasing row order, which keeps xlsxwriter's
constant-memory mode (used for very large workbooks) working.
A failing chart is logged and skipped; it never breaks the workbook.
"""

from __future__ import annotations

import logging
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..compare import communication_summary, memory_summary
from ..compare.api_stats import DRIVER_LAUNCHES, host_wait_note
from ..compare.checks import rounds_up_to_threshold, shown_share
from ..compare.contributors import contributors_title, shown_rows
from ..compare.module_contributors import module_lead_lines, outside_modules_note
from ..compare.summary_notes import contributors_note_lines
from ..compare.table import Sheet, column_at, sheet_numbers
from . import summary_console as con
from .excel import (
    HEADER_ROWS,
    MAX_ROW_POINTS,
    MIN_PRINT_SCALE,
    PRINTABLE_HEIGHT_POINTS,
    PRINTABLE_POINTS,
    char_pixels,
    column_pixels,
    column_points,
    page_frame,
    row_points,
)

log = logging.getLogger("msprof-analyze")

TOP_REGRESSIONS = 20
EXPLAINED = 0.9          # a module chart leaves out a module one submodule explains this much of
_STATE_ATTR = "_msprof_compare_charts"
_ROW_PIXELS = 20          # the default height of a row of 11-point text in pixels, a chart's size unit
_DEFAULT_WIDTH = 8.43     # characters: the width of a column no width is set for
_CHART_SIZE = (820, 440)  # the waterfall chart's width and height in pixels
#: Charts move with the rows they sit on but keep their size: the default anchor sizes them with their cells, so
#: a filter beside them (ApiCompare, KernelCompare, the statistic sheets: diff > 0) shrank them row by row.
_ANCHOR = {"object_position": 2}
_BLUE, _RED, _GREEN, _GREY = "#4472C4", "#E15759", "#59A14F", "#A5A5A5"


@dataclass
class _State:
    """Per-workbook chart bookkeeping (stored on the workbook object, so nothing is global)."""

    formats: dict[str, Any] = field(default_factory=dict)
    summary: Any = None                 # the Summary worksheet, once written whole (its chart data area begun)
    summary_name: str = ""
    next_row: int = 0                   # next free row of the Summary sheet's chart data area
    #: Summary-sheet rows (first, last) of the waterfall steps (Step / Base / Comparison columns).
    category_rows: tuple[int, int] | None = None
    #: the waterfall steps' (Step, Base(ms), Comparison(ms)) cells, top down: the OverallMetrics bars' data
    category_values: list[tuple[Any, Any, Any]] = field(default_factory=list)
    #: statistic sheets a side of which recorded nothing (the Summary's totals): no regression chart
    unrecorded: set[str] = field(default_factory=set)
    #: the Summary's table titles: title row -> the last row printed on its page (``_table``, ``_page_breaks``)
    keeps: dict[int, int] = field(default_factory=dict)


def _state(wb: Any) -> _State:
    st = getattr(wb, _STATE_ATTR, None)
    if st is None:
        st = _State()
        setattr(wb, _STATE_ATTR, st)
    return st


_FORMATS: dict[str, dict[str, Any]] = {
    "title": {"bold": True, "font_size": 12},
    "header": {"bold": True, "border": 1, "pattern": 1, "bg_color": "#D9D9D9"},
    "text": {"border": 1},
    "float": {"border": 1, "num_format": "#,##0.000"},
    "float2": {"border": 1, "num_format": "#,##0.00"},  # MB, as the console's memory tables
    "ratio": {"border": 1, "num_format": "0.00%"},
    "rate": {"border": 1, "num_format": "0.0%"},   # validity-check rates, as the log shows them
    "rate2": {"border": 1, "num_format": "0.00%"},  # one under its threshold that 0.0% shows as the threshold
    "count": {"border": 1, "num_format": "0"},
    "warn": {"border": 1, "pattern": 1, "bg_color": "#FFC7CE"},
    "wrap": {"text_wrap": True},
    "note": {"italic": True, "font_color": "#595959"},
}


def _fmt(wb: Any, name: str) -> Any:
    """A shared format by name; ``"rate+warn"`` layers the second's properties over the first's."""
    st = _state(wb)
    if name not in st.formats:
        props = {"font_name": "Arial", "font_size": 11, "align": "left", "valign": "vcenter"}
        for part in name.split("+"):
            props.update(_FORMATS[part])
        st.formats[name] = wb.add_format(props)
    return st.formats[name]


def _write(ws: Any, r: int, c: int, v: Any, fmt: Any) -> None:
    """A cell of the Summary's tables: contributor rows hold names and finite numbers, check rows words,
    finite rates and counts, or None for a figure a check could not get (a blank cell). A non-finite number,
    which xlsxwriter refuses, would be blank too rather than lose the workbook."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        ws.write_blank(r, c, None, fmt)
    elif isinstance(v, str):
        ws.write_string(r, c, v, fmt)
    else:
        ws.write_number(r, c, float(v), fmt)


def _wrapped_lines(text: str, width: float) -> int:
    """Lines a wrapped cell ``width`` characters wide needs, wrapped as spreadsheets do: at line breaks, then at
    spaces, a word wider than a line broken where the line ends. Measured as `_break_long_words` measures, words in
    11-point Arial pixels (`_word_pixels`) on lines of ``width`` x 7 - 5 pixels, with 3 % to spare as a caption's
    (`excel._caption_words`): a row too short hides its last lines. Counted in characters (a digit's width each,
    less two a line), a row was a line taller than its text where narrow letters and spaces prevail and a line
    shorter where digits and capitals do (Summary's validity checks, in LibreOffice's PDFs)."""
    room = (width * 7 - 5) / 1.03
    space = char_pixels(" ")
    lines = 0
    for paragraph in text.split("\n"):
        count, used = 1, 0.0
        for word in paragraph.split():
            w = _word_pixels(word)
            if used and used + space + w <= room:
                used += space + w
                continue
            if used:
                count, used = count + 1, 0.0
            for ch in word if w > room else ():
                c = char_pixels(ch)
                if used and used + c > room:
                    count, used = count + 1, 0.0
                used += c
            if w <= room:
                used = w
        lines += count
    return lines


#: Where a word too wide for its cell may break: after a separator of an identifier or a list
_WORD_PARTS = re.compile(r"(?<=[_,/.:;-])")


def _word_pixels(word: str) -> float:
    """A word's width in pixels in 11-point Arial (``excel.char_pixels``)."""
    return sum(char_pixels(ch) for ch in word)


def _break_long_words(text: str, width: float) -> str:
    """``text`` with a line break after a separator (``_WORD_PARTS``) inside each word too wide for a wrapped cell
    ``width`` characters wide, its parts as many to a line as fit: spreadsheets break such a word where its line
    ends, and a setting read "ACL_AICORE_PIPE_U" / "TILIZATION" in the Summary's 16-character Base column. A
    line holds ``width`` x 7 - 5 pixels: Excel's cell holds 7 px a character within its 5 px of margins
    (``column_pixels``), LibreOffice's a little less (in a 14.71-character column it broke "ACL_AICORE_", 101.1 px,
    after 100.6 px). A word that fits, or has no separator, stays whole; the text less the breaks it adds is
    ``text``."""
    room = width * 7 - 5
    lines = []
    for line in text.split("\n"):
        words = []
        for word in line.split(" "):
            if _word_pixels(word) > room:
                parts, word = [p for p in _WORD_PARTS.split(word) if p], ""
                for part in parts:
                    last = word.rpartition("\n")[2]
                    word += "\n" + part if last and _word_pixels(last + part) > room else part
            words.append(word)
        lines.append(" ".join(words))
    return "\n".join(lines)


def _table(wb: Any, ws: Any, row: int, title: str, headers: list[str], rows: list[list[Any]],
           styles: list[str] | Callable[[list[Any]], list[str]], widths: list[float] | None = None,
           last_to: int | None = None) -> int:
    """A titled table at ``row``; returns the next free row (one blank row after the table).
    ``styles``: a format name per column, or a function giving them for a row's values. A row with
    wrapped words gets the height they need (``widths``: the columns' widths): LibreOffice's headless
    conversion keeps the default height and the lines would spill over the next row. ``last_to``: the
    last column's cells are merged across to that column (``widths`` then gives the merged width)."""
    ws.write_string(row, 0, title, _fmt(wb, "title"))
    _state(wb).keeps[row] = row + 1 + min(len(rows), _KEEP_ROWS)  # the title with the header and first rows
    row += 1
    last = len(headers) - 1
    for j, h in enumerate(headers):
        if j == last and last_to is not None:
            ws.merge_range(row, j, row, last_to, "", _fmt(wb, "header"))
        ws.write_string(row, j, h, _fmt(wb, "header"))
    row += 1
    for values in rows:
        names = styles(values) if callable(styles) else styles
        if widths:
            lines = max((_wrapped_lines(v, widths[j]) for j, v in enumerate(values)
                         if isinstance(v, str) and "wrap" in names[j].split("+")), default=1)
            if lines > 1:
                ws.set_row(row, row_points(lines))
        for j, v in enumerate(values):
            if j == last and last_to is not None:
                ws.merge_range(row, j, row, last_to, "", _fmt(wb, names[j]))
            _write(ws, row, j, v, _fmt(wb, names[j]))
        row += 1
    return row + 1


#: Rows of a Summary table printed on its title's page at least (``_page_breaks``)
_KEEP_ROWS = 2
#: Height in points of a title's row (12-point bold; no height is set): Excel sizes it 15.75, LibreOffice 15.6
_TITLE_POINTS = 15.75
#: Points of a printed page left unfilled: a row, for a page that holds a little less than Excel's (``_page_points``)
_PAGE_SPARE = 15.0


def _page_points(widths: list[float]) -> float:
    """Points of the Summary's rows a printed page holds, less ``_PAGE_SPARE``: its print area, columns of these
    ``widths`` (characters), prints one page wide, at 100 % or at the scale that fits it to the page's width in
    Excel's column widths (``column_points``), a page then holding 1/scale of its height. LibreOffice prints the
    same scale where it puts Carlito (Calibri's metrics) for Calibri, and a smaller one where it puts the wider
    DejaVu Sans (NPU pair 1: 3/4 of Excel's), whose pages hold more rows: a page as Excel's holds the Summary's
    rows in both."""
    scale = min(1.0, PRINTABLE_POINTS / sum(column_points(w) for w in widths))
    return PRINTABLE_HEIGHT_POINTS / scale - _PAGE_SPARE


def _page_breaks(heights: list[float], page: float, keeps: dict[int, int], starts: set[int],
                 fixed: set[int]) -> list[int]:
    """The rows that start a printed page of rows ``heights`` (points) on pages of ``page`` points: a row that
    would pass the page's foot, a table title (``keeps``: its title row -> the last row to print with it) whose
    header and first rows would, a row of ``starts``; never a row of ``fixed`` (the rows under the chart, sized
    to its page: ``_chart_height``). Every page break is set, not only those the titles need: a renderer whose
    page holds more rows (LibreOffice in DejaVu Sans) then breaks where Excel does, and a title that Excel's page
    keeps with its table is kept with it there too; before, LibreOffice printed "Top Memory Contributors" at
    the foot of the bundled pair's first page and its table on the second."""
    breaks: list[int] = []
    used = 0.0
    for r, h in enumerate(heights):
        if r and r not in fixed:
            block = sum(heights[r:keeps.get(r, r) + 1])
            if r in starts or used + h > page or (used + block > page and block <= page):
                breaks.append(r)
                used = 0.0
        used += h
    return breaks


def _wrapped_rows(wb: Any, ws: Any, sheet: Sheet, row: int, lines: list[str]) -> int:
    """``lines`` as wrapped rows under a table (from the blank row it left), each merged across the sheet's
    columns and as tall as its words need; returns the next free row."""
    last = len(sheet.columns) - 1
    for text in lines:
        ws.set_row(row - 1, row_points(_wrapped_lines(text, sum(c.width for c in sheet.columns))))
        ws.merge_range(row - 1, 0, row - 1, last, text, _fmt(wb, "text+wrap"))
        row += 1
    return row


def _contributor_table(wb: Any, ws: Any, row: int, title: str, frame: pd.DataFrame,
                       widths: list[float] | None = None, unit: str = "ms") -> int:
    """A contributors frame (``contributors.CONTRIBUTOR_COLUMNS``, or its MB twin: ``unit``) as the Summary sheet's
    table: name, the figures, rank last; with ``widths`` (the sheet's column widths) the names wrap, each row as
    tall as they need. The operator, module, communication and memory contributors share it, so all read alike."""
    figures = [f"Base({unit})", f"Comparison({unit})", f"Diff({unit})"]
    at_name, at_base, at_comp, at_diff, at_share, at_cum, at_rank = (_position(frame, c) for c in (
        "Name", *figures, "Share", "Cumulative Share", "Rank"))
    rows = [[r[at_name], r[at_base], r[at_comp], r[at_diff], r[at_share], r[at_cum], int(r[at_rank])]
            for r in _tuples(frame)]
    number = "float2" if unit == "MB" else "float"
    return _table(wb, ws, row, title, ["Name", *figures, "Share", "Cumulative Share", "Rank"], rows,
                  ["text+wrap" if widths else "text", number, number, number, "ratio", "ratio", "text"], widths)


def _resource_parts(wb: Any, ws: Any, sheet: Sheet, row: int) -> int:
    """The communication and the memory contributors with the lines under them, as the console prints them (the
    first ``CONSOLE_TOP`` rows of each): the workbook's Summary had neither, so a reader of the workbook alone
    never learnt that the communication time or the memory grew. Returns the next free row."""
    widths = [c.width for c in sheet.columns]
    for frame, totals, name, basis, unit, line in (
            (sheet.communication_contributors, sheet.communication_totals, "communication",
             communication_summary.SHARE_BASIS, "ms", con.communication_line),
            (sheet.memory_contributors, sheet.memory_totals, "memory", memory_summary.SHARE_BASIS, "MB",
             con.memory_line)):
        lines = []
        if frame is not None and len(frame):
            shown, first = shown_rows(frame)
            row = _contributor_table(wb, ws, row, contributors_title(frame, name, basis, first), shown, widths, unit)
            note = memory_summary.contributors_note(frame) if name == "memory" else ""
            if note:
                lines.append(f"Note: {note}.")
        text = line(totals)
        if text:
            lines += text.split("\n")  # a row per sentence, as the console gives each its own line
        if lines:
            row = _wrapped_rows(wb, ws, sheet, row, lines)
    return row


def _guard_styles(values: list[Any]) -> list[str]:
    """Rates (floats) as percentages, counts (ints) as integers, words as text; a warned row is red. A rate under
    its check's threshold that one decimal shows as the threshold has two, as in the log (SGLang's 49.96 % idle
    stretch read "50.0%" beside the note "from 50%").
    Base / Comparison words wrap: those columns are the waterfall's, 16 and 14 characters wide, and a setting
    such as "Level1 / ACL_AICORE_PIPE_UTILIZATION" was cut at the cell edge. Detail wraps too, within the
    cells it is merged across (``_validity_checks``)."""
    names = ["text", "text",
             *(("rate2" if rounds_up_to_threshold(values[0], v) else "rate") if isinstance(v, float)
               else "count" if isinstance(v, int) else "text+wrap" for v in values[2:4]), "text+wrap"]
    return [n + "+warn" if values[1] == "warn" else n for n in names]


def _tuples(frame: pd.DataFrame) -> list[tuple]:
    """The rows of ``frame`` as tuples of the values ``itertuples`` gives: that made a namedtuple class per call
    and read each column by ``iloc`` (~0.5 ms a table)."""
    return list(zip(*(col.tolist() for _, col in frame.items()), strict=True))


def _position(frame: pd.DataFrame, label: str) -> int:
    """Where the first column ``label`` is (the one ``itertuples``' field of that name holds)."""
    return list(frame.columns).index(label)


# --------------------------------------------------------------------------- Summary

#: Columns of the Summary's widest tables (the contributors: Name to Rank), which the print area holds at least.
_TABLE_COLUMNS = 7
#: The smallest height in pixels the chart is given to print on the first page; a shorter one starts the next.
_MIN_CHART_HEIGHT = 320


def _table_widths(sheet: Sheet) -> list[float]:
    """Widths in characters of the columns the Summary's tables fill: the sheet's (the waterfall's six) and the
    contributor tables' seventh, Rank, in a column of the default width."""
    widths = [c.width for c in sheet.columns]
    return widths + [_DEFAULT_WIDTH] * (_TABLE_COLUMNS - len(widths))


def _chart_width(sheet: Sheet) -> int:
    """The waterfall chart's width in pixels: ``_CHART_SIZE``'s, or the tables' width where they are narrower,
    so the chart prints within the print area (`column_pixels`)."""
    return min(_CHART_SIZE[0], int(sum(column_pixels(w) for w in _table_widths(sheet))))


def _chart_height(above: float, tables: float) -> int | None:
    """The chart's height in pixels where it ends the first printed page: ``_CHART_SIZE``'s, or less (down to
    ``_MIN_CHART_HEIGHT``) where the rows ``above`` it (points) leave less on a page at the scale the ``tables``
    (points wide) print at in Excel, 1/scale as tall as at 100 %; None where even that is cut at the page's foot.
    The rows the chart covers print whole, so the page, less ``_PAGE_SPARE`` as ``_page_points``', must hold them:
    the chart ends a quarter row into the last whole row that fits. A chart sized to the page's points (405 px on
    the timesformer pair) ended in a row past its foot, which Excel moves to the next page, there alone before the
    break set under the chart (``_page_breaks``)."""
    page = PRINTABLE_HEIGHT_POINTS / min(1.0, PRINTABLE_POINTS / tables) - _PAGE_SPARE
    room = int((page - above) // (_ROW_PIXELS * 0.75)) * _ROW_PIXELS - _ROW_PIXELS // 4
    return min(_CHART_SIZE[1], room) if room >= _MIN_CHART_HEIGHT else None


def _row_heights(ws: Any, rows: int) -> list[float]:
    """The heights in points of the sheet's first ``rows`` rows, as set so far (15 where none is)."""
    sizes = ws.row_sizes  # xlsxwriter 3.3's record of set_row: row -> [height in pixels, hidden]
    return [sizes[r][0] * 0.75 if r in sizes else 15.0 for r in range(rows)]


def _detail_columns(widths: list[float], details: list[str]) -> tuple[int, float]:
    """The last column the validity checks' Detail is merged to and its width in characters, from the tables'
    column ``widths`` (`_table_widths`): their last column (E:G), widened by default-width columns to the page's
    edge where the tables print at 100 % (they are narrower than the page), and on to the width of a page at
    ``MIN_PRINT_SCALE`` where a detail would need a row taller than Excel allows. Before, Detail ran 15 columns
    past the tables and the Summary printed at 45-52 %."""
    last, detail = len(widths) - 1, sum(widths[4:])
    total = sum(column_points(w) for w in widths)
    step = column_points(_DEFAULT_WIDTH)
    while total + step <= (PRINTABLE_POINTS / MIN_PRINT_SCALE
                           if any(_wrapped_lines(d, detail) * _ROW_PIXELS * 0.75 > MAX_ROW_POINTS for d in details)
                           else PRINTABLE_POINTS):
        last, detail, total = last + 1, detail + _DEFAULT_WIDTH, total + step
    return last, detail


def _summary(wb: Any, ws: Any, sheet: Sheet) -> None:
    """Below the Summary's waterfall table, top to bottom: the verdict, the waterfall chart, the operator
    contributors with their notes (``_operator_parts``), the communication and memory ones (``_resource_parts``),
    the validity checks; the print area holds those, and the chart data follows it (the waterfall's here, each
    statistic sheet's as it is drawn: ``_statistic``)."""
    wf: pd.DataFrame = getattr(sheet, "waterfall", pd.DataFrame())
    page_frame(ws)
    row = HEADER_ROWS + len(sheet) + 1
    verdict = getattr(sheet, "verdict", "")
    if verdict:  # in words, on the blank row under the waterfall, within its columns
        row = _wrapped_rows(wb, ws, sheet, row, f"{verdict}.".split("\n"))  # a row per sentence, as the console
    # the waterfall chart under the table and its verdict, within the tables' width: beside them (820 px to their
    # right) it made the print area 1,341-1,541 pt wide, printed on one page at 45-52 %; rows it covers stay blank
    widths = _table_widths(sheet)
    chart_at = row - 1
    height = _chart_height(sum(_row_heights(ws, chart_at)), sum(column_points(w) for w in widths))
    starts = set()
    if height is None:
        height = _CHART_SIZE[1]
        starts.add(chart_at)  # atop the next page rather than cut at the first page's foot
    row = chart_at + -(-height // _ROW_PIXELS) + 1  # the next table after one blank row
    under_chart = set(range(chart_at + 1, row - 1))
    row = _operator_parts(wb, ws, sheet, row, wf)
    row = _resource_parts(wb, ws, sheet, row)
    row, last_col = _validity_checks(wb, ws, sheet, row, widths)
    keeps = _state(wb).keeps
    heights = [max(h, _TITLE_POINTS) if r in keeps else h for r, h in enumerate(_row_heights(ws, row))]
    breaks = _page_breaks(heights, _page_points(widths + [_DEFAULT_WIDTH] * (last_col + 1 - len(widths))), keeps,
                          starts, under_chart)
    if breaks:
        ws.set_h_pagebreaks(breaks)

    # Print the tables and the chart one page wide, as tall as they need, at MIN_PRINT_SCALE or larger (fitted
    # on one page with the chart beside them they printed at 45-52 %); the chart data stays off it, below it.
    ws.print_area(0, 0, row - 1, last_col)
    ws.fit_to_pages(1, 0)
    ws.write_string(row, 0, "Chart data", _fmt(wb, "title"))
    ws.write_string(row + 1, 0, "Cells below feed the charts of this workbook.", _fmt(wb, "note"))
    row += 2
    # the sheet's rows are the waterfall's: Base E2E, at least one step (the steps of a side add up to its
    # E2E, which is above 0 on both sides where a waterfall is made), Comparison E2E
    row = _waterfall_chart(wb, ws, sheet, wf, row, chart_at, height)
    steps = wf.index[~wf["Category"].isin(["start", "end"])]
    # the other sheets' charts read their data here only once the sheet is whole: where a step above failed (the
    # chart skipped, draw_charts), st.next_row stayed 0 and the statistic sheets' chart data was written from row 1
    # over the captions and the waterfall
    st = _state(wb)
    st.summary, st.summary_name = ws, sheet.name
    st.unrecorded = _unrecorded_sheets(sheet)
    st.category_rows = (HEADER_ROWS + int(steps[0]), HEADER_ROWS + int(steps[-1]))
    st.category_values = [tuple(v) for v in _tuples(sheet.data.iloc[steps.tolist(), :3])]
    st.next_row = row


def _unrecorded_sheets(sheet: Sheet) -> set[str]:
    """The statistic sheets whose figures a side did not record (the Summary's memory and communication totals):
    their 0s are no reading, so every row of the other side charted as a regression of its whole amount (a GPU
    trace without profile_memory against an NPU export: "MemoryCompareStatistic: top 18 regressions" under the
    Summary's "base not recorded (its 0 MB in MemoryCompareStatistic is no reading), so no memory contributor")."""
    found = set()
    for name, totals in (("MemoryCompareStatistic", getattr(sheet, "memory_totals", None)),
                         ("CommunicationCompare", getattr(sheet, "communication_totals", None))):
        if totals is not None and len(totals) and not (bool(totals["base_recorded"].iloc[0])
                                                       and bool(totals["comparison_recorded"].iloc[0])):
            found.add(name)
    return found


def _operator_parts(wb: Any, ws: Any, sheet: Sheet, row: int, wf: pd.DataFrame) -> int:
    """The operator contributors (every row: the console shows the first CONSOLE_TOP, as its title says; the sheet
    has the room), the note, the row on contributors off the module sheets and the module lead under them, then
    the module contributors: as the console and the JSON. Returns the next free row; none without contributors."""
    contrib: pd.DataFrame = getattr(sheet, "contributors", pd.DataFrame())
    if not len(contrib):
        return row
    row = _contributor_table(wb, ws, row, contributors_title(contrib), contrib)
    # the note and the module lead a row per console line (sentence, list title, "  - " item): in one wrapped cell
    # the note was 729 characters on reference pair 4, and the lead's list of operators 981 on the xdit pair
    lines = contributors_note_lines(contrib, wf, getattr(sheet, "communication", None))
    modules = getattr(sheet, "module_contributors", None)
    lead = module_lead_lines(modules)
    outside = outside_modules_note(contrib, modules)
    if outside:
        lines.append(outside)
    row = _wrapped_rows(wb, ws, sheet, row, [*lines, *lead])
    if lead:
        # the first CONSOLE_TOP, as the console: the sheet printed on one page (fit_to_pages), and SGLang's
        # 113 rows made its print area 148 rows, 4005 pt tall (38 rows, 675 pt, before the table), printed at
        # a sixth of the size; every row stays in ModuleCompareStatistic, the JSON and the API
        shown, first = shown_rows(modules)
        # names wrap within column A: "module path > operator" runs past its 72 characters (104 for a
        # backward Conv2d row of the DB pair, all 113 rows of SGLang's), and cut at column B's figure the
        # operator at its end was hidden, so that two Conv2d rows read alike
        row = _contributor_table(wb, ws, row, contributors_title(modules, "module", first=first), shown,
                                 [c.width for c in sheet.columns])
    return row


def _validity_checks(wb: Any, ws: Any, sheet: Sheet, row: int, widths: list[float]) -> tuple[int, int]:
    """The validity checks' table (never empty: five checks are always made); returns the next free row and the
    last column their Detail is merged to (``_detail_columns``), the print area's. A share just under its
    threshold is written cut to the two decimals its format shows, as the log shows it: the 0.00% format rounded
    49.996 % up to 50.00 %, the threshold."""
    guard: pd.DataFrame = getattr(sheet, "guards", pd.DataFrame())
    # Base / Comparison words wrap at their separators in their narrow columns (``_break_long_words``)
    rows = [[c, s, *(_break_long_words(x, w) if isinstance(x, str) else x
                     for x, w in ((shown_share(c, b), widths[2]), (shown_share(c, v), widths[3]))), d]
            for c, s, b, v, d in _tuples(guard)]
    # Detail wraps within the print area, the tables' width: left to overflow, a long detail (up to 1,316
    # characters, on a text export against a DB export) ran past the page's edge and was cut there
    last_col, detail = _detail_columns(widths, [r[4] for r in rows if isinstance(r[4], str)])
    row = _table(wb, ws, row, "Validity checks (warn: are both sides the same workload? note: read the "
                 "figures with this in mind)",
                 ["Check", "Status", "Base", "Comparison", "Detail"], rows, _guard_styles,
                 [*widths[:4], detail], last_col)
    return row, last_col


def _waterfall_chart(wb: Any, ws: Any, sheet: Sheet, wf: pd.DataFrame, row: int, at: int, height: int) -> int:
    """Write the stacked-column helper table at ``row`` and insert the chart at row ``at``, column A, no wider
    than the tables (`_chart_width`), ``height`` pixels tall (`_chart_height`)."""
    headers = ["Step", "Invisible", "Increase", "Decrease", "Total"]
    for j, h in enumerate(headers):
        ws.write_string(row, j, h, _fmt(wb, "header"))
    first = row + 1
    levels, low = _waterfall_levels(wf)
    for r, (label, vals) in enumerate(levels, start=first):
        ws.write_string(r, 0, label, _fmt(wb, "text"))
        for j, v in enumerate(vals, start=1):
            ws.write_number(r, j, v, _fmt(wb, "float"))
    last = first + len(levels) - 1

    name = sheet.name
    chart = wb.add_chart({"type": "column", "subtype": "stacked"})
    cats = [name, first, 0, last, 0]
    chart.add_series({"name": "Invisible", "categories": cats, "values": [name, first, 1, last, 1],
                      "fill": {"none": True}, "border": {"none": True}})
    chart.add_series({"name": "Increase (slower)", "categories": cats, "values": [name, first, 2, last, 2],
                      "fill": {"color": _RED}, "gap": 50})
    chart.add_series({"name": "Decrease (faster)", "categories": cats, "values": [name, first, 3, last, 3],
                      "fill": {"color": _GREEN}})
    chart.add_series({"name": "E2E", "categories": cats, "values": [name, first, 4, last, 4],
                      "fill": {"color": _BLUE}})
    # top >= Base E2E > 0 and low <= top, so the test below also means 0 < top / 2 < low
    top = float(wf["Cumulative(ms)"].max())
    y_axis: dict[str, Any] = {"name": "ms", "major_gridlines": {"visible": True, "line": {"color": "#D9D9D9"}}}
    if (top - low) < 0.5 * top:
        # Deltas are small against E2E: start the axis near the lowest level so the steps are visible.
        y_axis["min"] = _nice_floor(low - 0.1 * (top - low))
    chart.set_y_axis(y_axis)
    chart.set_x_axis({"num_font": {"rotation": -45}})
    chart.set_title({"name": "E2E time: base to comparison (ms)"})
    chart.set_legend({"position": "bottom", "delete_series": [0]})
    chart.set_size({"width": _chart_width(sheet), "height": height})
    ws.insert_chart(at, 0, chart, _ANCHOR)
    return last + 2


def _waterfall_levels(wf: pd.DataFrame) -> tuple[list[tuple[str, list[float]]], float]:
    """Each waterfall row's category label and its stacked columns (ms): Invisible, Increase, Decrease, Total. A
    step's bar floats on an invisible column up to the lower of the levels before and after it; the base and
    comparison E2E stand from 0. With the lowest level a bar reaches down to, where the value axis may start."""
    category, step, delta, cumulative = (_position(wf, c) for c in ("Category", "Step", "Delta(ms)",
                                                                    "Cumulative(ms)"))
    levels: list[tuple[str, list[float]]] = []
    lows: list[float] = []
    for item in _tuples(wf):
        cum = float(item[cumulative])
        if item[category] in ("start", "end"):
            vals = [0.0, 0.0, 0.0, cum]
            lows.append(cum)
        else:
            d = float(item[delta])
            # the level before the step, to the ns: 993.777 - 0.044 is 993.7330000000001 in floats, a cell the
            # user reads in the chart data (reference pair 5's Cube (other))
            lo = min(round(cum - d, 6), cum)
            vals = [lo, max(d, 0.0), max(-d, 0.0), 0.0]
            lows.append(lo)
        levels.append((category_label(str(item[step])), vals))
    return levels, min(lows)


#: The longest line of a waterfall category label (``category_label``).
_LABEL_LINE = 16


def category_label(step: str) -> str:
    """A waterfall step's category label, broken at spaces into lines of ``_LABEL_LINE`` characters (a longer word
    on a line of its own). On one line, rotated, a long step ("Other Computing (minus overlap of categories)",
    "Group 0 Communication (uncovered)") ran over the legend under the plot in LibreOffice."""
    return "\n".join(textwrap.wrap(step, _LABEL_LINE, break_long_words=False, break_on_hyphens=False)) or step


def _nice_floor(x: float) -> float:
    """``x`` (> 0) rounded down to one significant digit."""
    step = 10 ** math.floor(math.log10(x))
    return math.floor(x / step) * step


# --------------------------------------------------------------------------- OverallMetrics

def _bottom_up_steps(wb: Any, st: _State) -> tuple[int, int]:
    """The waterfall steps' names and base / comparison ms, last step first, in the Summary's chart data area (at
    ``st.next_row``, under a header): the OverallMetrics bars' data (``_overall``). Returns their first and last
    rows."""
    ws, row = st.summary, st.next_row
    for j, h in enumerate(("OverallMetrics chart: the waterfall steps, last first (a bar chart draws its first "
                           "category lowest)", "Base(ms)", "Comparison(ms)")):
        ws.write_string(row, j, h, _fmt(wb, "header"))
    first = row + 1
    for r, values in enumerate(reversed(st.category_values), start=first):
        for j, v in enumerate(values):
            _write(ws, r, j, v, _fmt(wb, "float" if j else "text"))
    last = first + len(st.category_values) - 1
    st.next_row = last + 2
    return first, last


def _overall(wb: Any, ws: Any, sheet: Sheet) -> None:
    """Base and comparison bars of each time category, the steps top down as the tables list them, Base's bar
    above Comparison's and the legend in that order in Excel and LibreOffice alike. A bar chart draws its first
    category and, within a category, its first series lowest; Excel lists the legend as the bars stand (reversed
    series order, or series order where the category axis is reversed), LibreOffice (7.4) lists a bar chart's
    legend in reversed series order whatever the axis: with the axis reversed, LibreOffice read "Comparison,
    Base" under bars of Base above Comparison. So the axis runs as drawn, the Comparison series comes first and
    the data is the steps last first (``_bottom_up_steps``). Without a Summary, the data is this sheet's own rows,
    which no chart may add to: the axis is reversed to read them top down (the value axis crossing it at its last
    category, under the bars, as with the Summary's data), and LibreOffice's legend is reversed."""
    st = _state(wb)
    chart = wb.add_chart({"type": "bar"})
    if st.category_rows is not None and st.category_values:  # set by a Summary sheet drawn before this one
        src, (first, last) = st.summary_name, _bottom_up_steps(wb, st)
        cols, reverse = (0, 1, 2), False
    else:  # no Summary in the workbook (a caller took it out of result.sheets): this sheet's own rows
        if len(sheet) < 2:  # E2E Time alone (rows of zero time are left out): no category to plot
            return
        src, first, last = sheet.name, HEADER_ROWS, HEADER_ROWS + len(sheet) - 2  # all rows but E2E
        cols, reverse = (0, 1, 4), True
    cats = [src, first, cols[0], last, cols[0]]
    series = [{"name": "Base", "categories": cats, "values": [src, first, cols[1], last, cols[1]],
               "fill": {"color": _GREY}},
              {"name": "Comparison", "categories": cats, "values": [src, first, cols[2], last, cols[2]],
               "fill": {"color": _BLUE}}]
    for s in series if reverse else series[::-1]:
        chart.add_series(s)
    chart.set_title({"name": "Time by category: base vs comparison (ms)"})
    chart.set_x_axis({"name": "ms", "major_gridlines": {"visible": True, "line": {"color": "#D9D9D9"}}})
    # every step named: LibreOffice wrapped "Group 0 Communication (uncovered)" over two lines and then named
    # every other step only (NPU pair 1: 4 of 8), whatever the chart's height; a set rotation keeps each name on
    # as few lines as it needs, a label interval of 1 keeps Excel from skipping names too, and 32 px a step
    # holds a name of two lines
    y_axis: dict[str, Any] = {"reverse": reverse, "interval_unit": 1, "num_font": {"rotation": 0}}
    if reverse:  # the value axis crosses at the first category, which a reversed axis puts on top: the ms scale
        # stood above the bars (Excel and LibreOffice), away from the legend under them; at the last, it is below
        y_axis["crossing"] = "max"
    chart.set_y_axis(y_axis)
    chart.set_legend({"position": "bottom"})
    chart.set_size({"width": 760, "height": max(320, 32 * (last - first + 1) + 120)})
    ws.insert_chart(HEADER_ROWS, len(sheet.columns) + 1, chart, _ANCHOR)


# --------------------------------------------------------------------------- statistic sheets

@dataclass(frozen=True)
class _Spec:
    """Where a statistic sheet keeps a row's name and its base / comparison amounts."""

    name_cols: tuple[int, ...]
    base_col: int
    comp_col: int
    unit: str
    what: str
    keep: Callable[[pd.DataFrame], np.ndarray] | None = None
    #: the comparison side's name column, for rows only the comparison has (blank name on the base side)
    alt_name_col: int | None = None
    #: names are module paths whose amounts hold their submodules' (``_explained_by_a_submodule``)
    paths: bool = False
    #: said on the chart's value axis and above its chart data
    note: str = ""


def _total_rows(d: pd.DataFrame) -> np.ndarray:
    return _texts(column_at(d, 4)) == "[ TOTAL ]"


def _op_rows(d: pd.DataFrame) -> np.ndarray:
    """Communication op rows: task rows ("|" as op name on the side that has them) are parts of their op."""
    return (_texts(column_at(d, 1)) != "|") & (_texts(column_at(d, 8)) != "|")


#: Decimals of a statistic sheet's amounts by unit: ns in ms or us; MB from KB / 1024 (operator_memory.csv's KB
#: may hold fractions), kept to 9 places.
_DECIMALS = {"ms": 6, "us": 3, "MB": 9}

STAT_SPECS: dict[str, _Spec] = {
    "OperatorCompareStatistic": _Spec((1,), 2, 4, "ms", "device duration"),
    "ModuleCompareStatistic": _Spec((3,), 8, 12, "ms", "module device total time", _total_rows, paths=True,
                                    note=f"a module whose growth one submodule holds (>= {EXPLAINED:.0%}) is "
                                         "left out for it"),
    "MemoryCompareStatistic": _Spec((1,), 3, 6, "MB", "allocated memory"),
    "KernelCompare": _Spec((1, 2), 3, 8, "us", "kernel total duration"),
    "KernelTypeCompare": _Spec((1, 2), 3, 8, "us", "kernel type total duration"),
    "ApiCompare": _Spec((1,), 2, 6, "ms", "API total duration"),
    "CommunicationCompare": _Spec((1,), 4, 11, "us", "communication total duration", _op_rows, alt_name_col=8),
}


def _explained_by_a_submodule(names: np.ndarray, diff: np.ndarray, grew: np.ndarray) -> np.ndarray:
    """The rows of ``grew`` to chart: a module's total holds its submodules', so one change under
    ``/ Model_0/ Encoder_0/ Layer_0`` filled three bars (bert-small: the top 20 held 4 levels of the same
    attention growth) and pushed other modules off the chart. A module goes where one of its submodules
    that grew holds ``EXPLAINED`` of its growth or more: the submodule's bar tells the same story more
    precisely. A module whose growth is spread over several submodules (an encoder whose layers each grew)
    stays, as no bar below it says that. One walk up each path, not a pairwise scan."""
    largest: dict[str, float] = {}   # a path -> the largest growth of a module below it
    for name, d in zip(names[grew].tolist(), diff[grew].tolist(), strict=True):
        cut = name.find("/", 1)
        while cut != -1:
            parent = name[:cut]
            if largest.get(parent, 0.0) < d:
                largest[parent] = d
            cut = name.find("/", cut + 1)
    keep = [largest.get(n, 0.0) < EXPLAINED * d for n, d in zip(names[grew].tolist(), diff[grew].tolist(),
                                                                  strict=True)]
    return grew[np.asarray(keep, dtype=bool)]


_HIP_CALL = re.compile(r"^hip(?=[A-Z])")
_CUDA_CALL = re.compile(r"^cuda(?=[A-Z])")
#: HIP calls whose CUDA twin has another name: PyTorch's synchronous copy (``memcpy_and_sync``) is one
#: hipMemcpyWithStream on ROCm, cudaMemcpyAsync + cudaStreamSynchronize on CUDA.
_HIP_TWINS = {"hipMemcpyWithStream": "cudaMemcpyAsync"}
#: The runtime's kernel launch calls, one role across vendors: a library launches the same kernels through
#: another call on each (the TimeSformer traces' GEMMs: cudaLaunchKernelExC on the H100, hipExtModuleLaunchKernel
#: on the MI300X), so by name each vendor's extra launch call ranked as a regression of its whole time.
_LAUNCHES = dict.fromkeys(("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
                           "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel",
                           "hipExtModuleLaunchKernel", "hipLaunchCooperativeKernel", *DRIVER_LAUNCHES),
                          "cudaLaunchKernel")


#: An API name of one vendor's runtime or libraries: a CUDA / HIP runtime call, or an op of cuDNN / MIOpen /
#: cuBLAS / hipBLAS / rocBLAS (``aten::miopen_convolution``)
_VENDOR_LIB = re.compile(r"cudnn|miopen|cublas|hipblas|rocblas", re.IGNORECASE)
#: PyTorch's ops of one role on each vendor's library: ``aten::cudnn_convolution`` on CUDA is
#: ``aten::miopen_convolution`` on ROCm (batch_norm, convolution_transpose alike)
_MIOPEN_OP = re.compile(r"^aten::miopen_")


def _vendor_named(name: str) -> bool:
    """A name only one vendor's stack calls (``_VENDOR_LIB``, a runtime call, a CUDA driver launch)."""
    return bool(_CUDA_CALL.match(name) or _HIP_CALL.match(name) or _VENDOR_LIB.search(name)
                or name in DRIVER_LAUNCHES)


def _with_driver_launches(name: np.ndarray, base: np.ndarray, comp: np.ndarray,
                          calls: tuple[np.ndarray, np.ndarray] | None,
                          driver: tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """The API rows with a row per driver launch call of the sides (``api_stats.driver_launches``: its name, ms to
    2 decimals as ApiCompare's cells), for ``_runtime_pairs`` to join with the runtime's launch calls across
    vendors: the bundled H100 trace launches 22 of its 60 kernels by ``cuLaunchKernel`` (0.136 ms), which no row
    holds, so its launch calls read 0.19 ms against the MI300X's 0.26 ms for 60 launches, a +0.07 ms regression
    where the launches took 0.071 ms less. Unchanged where no side launched through the driver."""
    b, c = driver
    called = [*b, *(n for n in c if n not in b)]
    if not called:
        return name, base, comp, calls

    def cells(side: dict[str, tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:  # calls, ms
        got = [side.get(n, (0, 0)) for n in called]
        return np.array([k for k, _ in got], dtype=float), np.array([round(ns / 1e6, 2) for _, ns in got])

    (nb, mb), (nc, mc) = cells(b), cells(c)
    row_calls = None if calls is None else (np.append(calls[0], nb), np.append(calls[1], nc))
    return np.append(name, np.array(called, dtype=object)), np.append(base, mb), np.append(comp, mc), row_calls


def _runtime_pairs(name: np.ndarray, base: np.ndarray, comp: np.ndarray,
                   calls: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """API rows with the HIP runtime's calls taken as the CUDA ones they mirror (``hipDeviceSynchronize`` as
    ``cudaDeviceSynchronize``, ``aten::miopen_convolution`` as ``aten::cudnn_convolution``): across vendors each
    side holds one runtime's calls only, so every HIP call ranked as a regression of its whole time while its CUDA
    twin was an improvement. One runtime per trace makes this a no-op for two runs on one vendor. The fourth array
    marks the rows, across vendors, of one vendor's calls that the other side never makes (``calls``: each row's
    base and comparison calls; a vendor name of one side's calls alone, ``_vendor_named``): no regression of a call
    both make (``hipGetDevicePropertiesR0600``, 400 calls and 0.17 ms on the TimeSformer MI300X trace, ranked third
    among its API regressions against the H100)."""
    names = name.tolist()
    # a twin by role only across vendors: between two AMD runs it would join two calls of one runtime
    # (SGLang's hipMemcpyAsync and hipMemcpyWithStream), which by name stay apart. A CUDA runtime call's name
    # tells the vendor, not any name starting "cuda": the sheet's rows are every op of the tree, and an
    # annotation or a function of an AMD run may be named so (``cudagraph_replay``). The launch calls join only
    # where the HIP runtime's calls are there too: two NVIDIA runs keep cudaLaunchKernelExC apart
    across = _across_vendors(names)
    twins = {**_HIP_TWINS, **_LAUNCHES} if across else {}
    key = np.array([twins.get(n) or (_HIP_CALL.sub("cuda", n) if n.startswith("hip") else
                                     _MIOPEN_OP.sub("aten::cudnn_", n) if across else n) for n in names],
                   dtype=object)
    b_calls, c_calls = calls if calls is not None else (np.ones(len(names)), np.ones(len(names)))
    if not (key != name).any():
        return name, base, comp, np.zeros(len(names), dtype=bool)
    # pandas' group sums (its summation, to the bit), the names of each key in a dict: a named aggregation with a
    # Python function per group cost ~4 ms of the timesformer pair's workbook, this ~0.5 ms
    sums = pd.DataFrame({"key": key, "base": base, "comp": comp, "b_calls": b_calls, "c_calls": c_calls}).groupby(
        "key", sort=False)[["base", "comp", "b_calls", "c_calls"]].sum()
    names_of: dict[str, dict[str, None]] = {}
    for k, n in zip(key.tolist(), names, strict=True):
        names_of.setdefault(k, {})[n] = None
    joined = [list(names_of[k]) for k in sums.index.tolist()]
    one_side = (sums["b_calls"].to_numpy() == 0) != (sums["c_calls"].to_numpy() == 0)
    vendor = one_side & np.array([all(map(_vendor_named, ns)) for ns in joined], dtype=bool)
    return (np.array([" / ".join(ns) for ns in joined], dtype=object),
            sums["base"].to_numpy(dtype=float), sums["comp"].to_numpy(dtype=float), vendor)


def _across_vendors(names: list[str]) -> bool:
    """Whether API rows hold both a CUDA and a HIP runtime call: a trace of each vendor."""
    return any(_CUDA_CALL.match(n) for n in names) and any(_HIP_CALL.match(n) for n in names)


def _texts(col: pd.Series) -> np.ndarray:
    """A column's cells as text, "" for a missing one (``fillna("").astype(str)``), as an object array; a
    column of text cells (every name column) without pandas' string methods."""
    values = col.to_numpy(dtype=object)
    missing = pd.isna(values)
    present = values[~missing]
    if all(type(v) is str for v in present.tolist()):
        values = values.copy()
        values[missing] = ""
        return values
    return col.fillna("").astype(str).to_numpy(dtype=object)


def _strip(texts: np.ndarray) -> np.ndarray:
    return np.array([t.strip() for t in texts.tolist()], dtype=object)


def _regressions(n: int) -> str:
    """"N regressions", or "1 regression" ("top 1 regressions" read as a slip)."""
    return f"{n} regression{'' if n == 1 else 's'}"


def regressions(sheet: Sheet) -> tuple[pd.DataFrame, _Spec] | None:
    """The ``TOP_REGRESSIONS`` rows of a statistic sheet (one of ``STAT_SPECS``) whose amount grew most (name,
    diff), largest first; None when none grew. Per column numpy work: a workbook draws five of these charts,
    and the pandas string methods cost ~1.5 ms a sheet of a hundred rows."""
    spec = STAT_SPECS[sheet.name]
    d = sheet.data
    if d.shape[1] <= max(spec.comp_col, *spec.name_cols):
        return None
    rows = np.flatnonzero(spec.keep(d)) if spec.keep is not None else slice(None)
    base = sheet_numbers(column_at(d, spec.base_col))[rows]
    comp = sheet_numbers(column_at(d, spec.comp_col))[rows]
    name = _strip(_texts(column_at(d, spec.name_cols[0]))[rows])
    if spec.alt_name_col is not None:
        alt = _strip(_texts(column_at(d, spec.alt_name_col))[rows])
        name = np.where(name != "", name, alt)
    for c in spec.name_cols[1:]:
        name = name + " " + _texts(column_at(d, c))[rows]
    vendor = np.zeros(len(name), dtype=bool)
    if sheet.name == "ApiCompare":
        calls = (sheet_numbers(column_at(d, 5))[rows], sheet_numbers(column_at(d, 9))[rows]) \
            if d.shape[1] > 9 else None
        driver = getattr(sheet, "driver_launches", None)
        if driver is not None and _across_vendors(name.tolist()):
            name, base, comp, calls = _with_driver_launches(name, base, comp, calls, driver)
        name, base, comp, vendor = _runtime_pairs(name, base, comp, calls)
    # the cells hold whole ns (6 decimals of a ms, 3 of a us; a KB / 1024 in MB to a thousandth of a byte): a float
    # difference of two of them carries noise past that (16.340000000000032 us), which the chart data showed
    diff = np.round(comp - base, _DECIMALS[spec.unit])
    grew = np.flatnonzero((diff > 0) & ~vendor)
    left = np.flatnonzero((diff > 0) & vendor)
    if spec.paths:
        grew = _explained_by_a_submodule(name, diff, grew)
    if not grew.size:
        return None
    order = grew[np.argsort(-diff[grew], kind="stable")[:TOP_REGRESSIONS]]
    top = pd.DataFrame({"Name": name[order], "Diff": diff[order]})
    left = left[np.argsort(-diff[left], kind="stable")]
    top.attrs[VENDOR_ONLY] = list(zip(name[left].tolist(), diff[left].tolist(), strict=True))
    return top, spec


#: Key of ``regressions``' frame attrs: the API rows, across vendors, of calls one vendor's stack alone makes that
#: grew (name, diff), largest first: left out of the ranking, named in its title (``vendor_only_note``)
VENDOR_ONLY = "vendor_only"
#: How many of them the title names before "and N more"
VENDOR_NAMED = 3


def vendor_only_note(left: list[tuple[str, float]], unit: str) -> str:
    """The words of the API regressions' title on the calls left out as one vendor's alone, "" for none."""
    if not left:
        return ""
    named = ", ".join(f"{n} +{d:.2f} {unit}" for n, d in left[:VENDOR_NAMED])
    more = f" and {len(left) - VENDOR_NAMED} more" if len(left) > VENDOR_NAMED else ""
    return f"left out as vendor-only (calls the other vendor's stack never makes; ApiCompare keeps their rows): " \
           f"{named}{more}"


LABEL_CAP = 40            # characters of a bar's label before it is shortened
_CELL_LIMIT = 32767       # characters a spreadsheet cell holds
_MARKER = re.compile(r"^/(\[[^\]/]*\])(?=/)")   # "/[ BACKWARD ]/ ...": the module path's direction


def _path_label(name: str, level: int, cap: int) -> tuple[str, bool]:
    """A module path's tail of ``level + 1`` components after "…" (its "[ BACKWARD ]" marker kept in front:
    without it a backward module read as the forward one); True when that is the whole path. A last
    component longer than ``cap`` keeps its end."""
    marker = _MARKER.match(name)
    head = f"{marker.group(1)} " if marker else ""
    start = marker.end() if marker else 0
    if len(name) <= cap:
        return name, True
    cuts = [i for i, c in enumerate(name) if c == "/" and i >= start]
    if not cuts:  # not a path
        return _text_label(name, level, cap)
    k = len(cuts) - 1 - level   # the "/" the tail starts at
    if k < 0 or k == 0 and cuts[0] == start and level > 0:
        return name, True
    tail = name[cuts[max(k, 0)]:]
    if level == 0 and len(tail) >= cap:
        tail = tail[len(tail) - cap + 1:]
    return f"{head}…{tail}", False


def _text_label(name: str, level: int, cap: int) -> tuple[str, bool]:
    """A long name's head and tail around "…" (an API's "evaluate_function: ...Backward0" differs at its end, a
    kernel's shapes after its name), ``cap`` characters, 20 more each ``level``; True when the name is whole.
    A name at most a fifth longer than ``cap`` stays whole: cutting a few characters saved no room and
    garbled it ("cudaDeviceSynchronize / hi…ceSynchronize")."""
    width = cap + 20 * level
    if len(name) <= width + width // 5:
        return name, True
    tail = width // 3
    return f"{name[:width - tail - 1]}…{name[-tail:]}", False


def short_labels(names: list[str], paths: bool = False, cap: int = LABEL_CAP) -> list[str]:
    """A chart's bar labels: each name at most ``cap`` characters where that keeps the labels distinct, module
    paths (``paths``) as their last component after "…/", other names as head…tail; only the labels that
    would collide are lengthened (a component, or 20 characters, at a time), up to the whole name. Equal
    names (a chart lists each row once, so they name distinct rows) get " (2)", " (3)" (a count no other label
    holds). Full module paths (timesformer: up to 166 characters) took half a chart's width and LibreOffice then
    showed every other one."""
    shorten = _path_label if paths else _text_label
    levels = [0] * len(names)
    while True:
        made = [shorten(n, lv, cap) for n, lv in zip(names, levels, strict=True)]
        by_label: dict[str, list[int]] = {}
        for i, (text, _whole) in enumerate(made):
            by_label.setdefault(text, []).append(i)
        grown = False
        for rows in by_label.values():
            if len(rows) > 1 and len({names[i] for i in rows}) > 1:
                for i in rows:
                    if not made[i][1]:
                        levels[i] += 1
                        grown = True
        if not grown:
            break
    labels = [text for text, _whole in made]
    taken = set(labels)
    seen: dict[str, int] = {}
    for i, text in enumerate(labels):
        seen[text] = seen.get(text, 0) + 1
        if seen[text] > 1:
            n = seen[text]
            while f"{text} ({n})" in taken:  # a name of its own may read "x (2)" already
                n += 1
            seen[text] = n
            labels[i] = f"{text} ({n})"
            taken.add(labels[i])
    return labels


def _statistic(wb: Any, ws: Any, sheet: Sheet) -> None:
    st = _state(wb)
    if st.summary is None or sheet.name in st.unrecorded:
        return
    found = regressions(sheet)
    if found is None:
        return
    top, spec = found
    sws, src = st.summary, st.summary_name
    row = st.next_row
    names = [str(n) for n in top["Name"].tolist()]
    said, axis = spec.note, spec.note
    if sheet.name == "ApiCompare":  # host waits for device work lead the API regressions of a GPU against an NPU
        said, axis = host_wait_note(names), host_wait_note(names, short=True)
        said = "; ".join(x for x in (said, vendor_only_note(top.attrs.get(VENDOR_ONLY, []), spec.unit)) if x)
    note = f"; {said}" if said else ""
    sws.write_string(row, 0, f"{sheet.name}: top {_regressions(len(top))} ({spec.what}, {spec.unit}){note}",
                     _fmt(wb, "header"))
    sws.write_string(row, 1, f"Diff({spec.unit})", _fmt(wb, "header"))
    sws.write_string(row, 2, "Chart label", _fmt(wb, "header"))
    first = row + 1
    labels = short_labels(names, paths=spec.paths)
    for i, (name, diff, label) in enumerate(zip(names, top["Diff"].tolist(), labels, strict=True)):
        sws.write_string(first + i, 0, name[:_CELL_LIMIT], _fmt(wb, "text"))   # the whole name, to look up
        sws.write_number(first + i, 1, float(diff), _fmt(wb, "float"))
        sws.write_string(first + i, 2, label, _fmt(wb, "text"))
    last = first + len(top) - 1
    st.next_row = last + 2

    chart = wb.add_chart({"type": "bar"})
    chart.add_series({"name": f"Diff({spec.unit})", "categories": [src, first, 2, last, 2],
                      "values": [src, first, 1, last, 1], "fill": {"color": _RED}})
    chart.set_title({"name": f"Top {_regressions(len(top))}: {spec.what} ({spec.unit}, comparison - base)"})
    chart.set_y_axis({"reverse": True})
    # every bar is a growth (> 0): the axis starts at 0, or spreadsheets start it near the smallest bar when the
    # bars are close (timesformer's top 20 modules, 1.25 to 1.37 ms: from 1.18, the 20th bar looked a third of
    # the first); the note goes under the value axis (one line: a title's line break is not read alike everywhere)
    x_axis = {"min": 0, "major_gridlines": {"visible": True, "line": {"color": "#D9D9D9"}}}
    if axis:
        x_axis["name"] = f"{spec.unit}; {axis}"
        x_axis["name_font"] = {"bold": False, "size": 9}
    chart.set_x_axis(x_axis)
    chart.set_legend({"none": True})
    chart.set_size({"width": 760, "height": max(320, 24 * len(top) + 120)})
    ws.insert_chart(HEADER_ROWS, len(sheet.columns) + 1, chart, _ANCHOR)


# --------------------------------------------------------------------------- dispatch

CHARTS: dict[str, Callable[[Any, Any, Sheet], None]] = {
    "Summary": _summary,
    "OverallMetrics": _overall,
    **{name: _statistic for name in STAT_SPECS},
}


def draw_charts(workbook: Any, worksheet: Any, sheet: Sheet) -> None:
    """The xlsx reporter's hook: add this sheet's charts (and, for Summary, its extra tables)."""
    draw = CHARTS.get(sheet.name)
    if draw is None:
        return
    try:
        draw(workbook, worksheet, sheet)
    except Exception as exc:  # noqa: BLE001 - a chart must never cost the user the workbook
        log.warning("Chart for sheet %s skipped: %s", sheet.name, exc)
