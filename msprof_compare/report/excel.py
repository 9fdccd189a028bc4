"""The xlsx reporter: ``performance_comparison_result_<UTC>.xlsx``.

Layout follows reference-2 §8 (row 1 merged base/comparison captions, row 2
empty, row 3 headers, data from row 4; Arial 11, thin borders, per-column
number formats, the red "worse" rule, blue row styles on OverallMetrics); our
Summary sheet stacks its two captions in rows 1 and 2.
Where we differ on purpose (see docs/differences.md): header rows are frozen,
the comparator tables but OverallMetrics carry an autofilter on their header
row, comparator sheets print landscape one page wide with their header rows
on every page, a caption longer than its merged range wraps (row 1 grows), every ratio
column is formatted as percentages (the original shows some as floats), every text
cell is written as a string (never a formula), the file is written under a
temporary name and published without ever replacing an existing file, and no
workbook is written when there is no sheet at all.
"""

from __future__ import annotations

import errno
import functools
import logging
import math
import numbers
import os
import re
import shutil
import tempfile
from datetime import datetime
from itertools import chain, count, repeat
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.exceptions import FileCreateError, FileSizeError
from xlsxwriter.packager import Packager
from xlsxwriter.sharedstrings import SharedStrings
from xlsxwriter.utility import _preserve_whitespace, _utf16_len, xl_col_to_name
from xlsxwriter.worksheet import Worksheet
from xlsxwriter.xmlwriter import XMLwriter

from ..compare.table import (
    RATIO_HEADERS,
    STYLE_BOLD,
    STYLE_FLOAT,
    STYLE_INT,
    STYLE_MS3,
    STYLE_RATIO,
    STYLE_RATIO_FINE,
    Sheet,
    own_array,
)
from ..gcpause import gc_paused
from ..textsafe import text_width
from .output import FILE_PREFIX, Part, default_name, output_target, write_new_file

if TYPE_CHECKING:
    from xlsxwriter.format import Format

    from ..api import CompareResult

log = logging.getLogger("msprof-analyze")

#: Excel's hard row limit; rows beyond it cannot be stored.
MAX_ROWS = 1_048_576
#: Above this many data rows in one sheet, stream rows to disk (xlsxwriter constant_memory).
CONSTANT_MEMORY_ROWS = 100_000
#: The sheets whose cells charts plot (report/charts.py: Summary's steps and chart data; OverallMetrics' rows
#: when there is no Summary): small, so constant_memory mode keeps their values for the chart caches.
_CHART_SOURCES = ("Summary", "OverallMetrics")
#: Rows above a sheet's data (reference-2 §8.2): the captions, an empty row (or a note), the headers; the charts'
#: module places its tables and charts by it too.
HEADER_ROWS = 3
_INF = math.inf
_INT_FAST = 2**63  # ints of the frames (int64): larger ones take _classify's path
_INT_EXACT = 2**53  # ints up to this size are exact as floats
_FAST_DTYPES = (np.dtype(np.float64), np.dtype(np.int64))
#: Columns shorter than this take the per-cell path: the whole-column paths' fixed costs (numpy calls) outweigh
#: what they save on a few cells.
_COLUMN_MIN_ROWS = 32

#: Columns whose texts may hold line breaks (the original's kernel and memory lists end each line with one, torch_npu's
#: shapes and call stacks hold ``\r\n``): top-aligned, as they are not wrapped in a one-line row. Centred, LibreOffice
#: laid out every line and showed the middle of them, half of the first line cut at the row's top edge; Excel shows
#: the first line either way. A sheet with such a column gives its data rows their one-line height explicitly
#: (``_FastWorksheet.one_line_rows``): LibreOffice clips a cell's text to a row of a set height, and drew the second
#: and later lines of a row of the default height over the rows below (a cell may hold dozens of lines).
LINES_HEADERS = frozenset({"Input Shape", "Input Type", "Kernel Details", "Allocated Details", "Base Call Stack",
                           "Comparison Call Stack"})
_BASE = {"font_name": "Arial", "font_size": 11, "align": "left", "valign": "vcenter", "border": 1}
_NUM_FORMATS = {STYLE_INT: "#,##0", STYLE_FLOAT: "#,##0.00", STYLE_MS3: "#,##0.000", STYLE_RATIO: "0.00%",
                STYLE_RATIO_FINE: "0.00" + "#" * 10 + "%"}
_FILLS = {"blue": "#00BFFF", "light_blue": "#87CEFA", "red": "#FF0000", "green": "#00FF00", "yellow": "#FFFF00"}


#: The block writer renders sheet XML the way xlsxwriter does and so depends on its internals:
#: it is used only with the xlsxwriter releases it was checked byte-for-byte against.
FAST_WRITER = xlsxwriter.__version__.startswith("3.3.")


# --------------------------------------------------------------------------- target paths


def default_file_name(now: datetime | None = None) -> str:
    """``performance_comparison_result_{UTC %Y%m%d%H%M%S}.xlsx`` as the original names it."""
    return default_name(".xlsx", now)


def resolve_target(target: str | os.PathLike = ".", force: bool = False) -> tuple[str, str | None]:
    """Validate a workbook target without creating anything: ``(directory, file name or None)``."""
    return output_target(target, ".xlsx", force)


# --------------------------------------------------------------------------- workbook


def write_workbook(result: CompareResult, target: str | os.PathLike = ".", now: datetime | None = None, *,
                   create: bool = True) -> str:
    """Write ``result.sheets`` to a new workbook in ``target`` (a directory or an ``.xlsx`` path).

    Returns the absolute path written, or "" when there was no sheet to write.
    Never replaces an existing file (a ``_1``, ``_2``... suffix is added) and
    never leaves a partial workbook behind. ``now``: the run's instant, for the default name (``utc_now()``).
    ``create`` False: a missing folder is not made (``output.write_new_files``).
    """
    part = workbook_part(result)
    if part is None:
        log.warning("%s", no_rows_line(result))
        return ""
    directory, name = resolve_target(target, bool(getattr(getattr(result, "options", None), "force", False)))
    return write_new_file(directory, name or default_file_name(now), part[1], part[2], create=create)


def no_rows_line(result: CompareResult) -> str:
    """The line of a run whose sheets have no rows. Where the time breakdown was made all the same (a side without
    E2E time: GPU against a MindSpore 1.x timeline, reference pair 9c), its console table printed both sides' rows
    just above this line, which then read as though the run had compared nothing: it says where those figures are
    and why no sheet holds them."""
    if getattr(result, "summary", None):
        return ("No comparison produced any rows for the workbook; no workbook was written (the time breakdown is "
                "the console table's alone: OverallMetrics needs E2E time on both sides).")
    return "No comparison produced any rows; no workbook was written."


def workbook_part(result: CompareResult) -> Part | None:
    """The workbook as a report file to publish (``output.write_new_files``); None without rows."""
    sheets = [s for s in result.sheets if len(s)]
    if not sheets:
        return None
    captions = (f"Base Profiling: {result.base.path}", f"Comparison Profiling: {result.comparison.path}")
    return ".xlsx", lambda tmp: render(sheets, tmp, captions), "workbook"


class _Sink:
    """The file the workbook is zipped into.

    When a write fails (disk full), xlsxwriter leaves its ZipFile open, and the ZipFile's
    ``__del__`` later retries the write and prints an "Exception ignored" traceback. After
    the first error the sink accepts and drops everything (keeping positions consistent),
    so that error is the only one anybody sees; the temporary file is removed anyway.
    """

    def __init__(self, fh: Any) -> None:
        self._fh = fh
        self._failed = False
        self._pos = 0

    def _do(self, op: Any, *args: Any) -> Any:
        try:
            return op(*args)
        except OSError:
            self._failed = True
            raise

    def write(self, data: Any) -> int:
        if self._failed:
            self._pos += len(data)
            return len(data)
        n = self._do(self._fh.write, data)
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            raise OSError(errno.ESPIPE, "only absolute seeks")  # ZipFile seeks absolutely
        if not self._failed:
            self._do(self._fh.seek, offset)
        self._pos = offset
        return offset

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        if not self._failed:
            self._do(self._fh.flush)

    def close(self) -> None:
        self._fh.close()

    def abandon(self) -> None:
        """Close after a failure: the file is being thrown away, so its own errors do not matter."""
        self._failed = True
        try:
            self._fh.close()
        except OSError:
            pass


def render(sheets: list[Sheet], filename: str, captions: tuple[str, str]) -> None:
    """Render sheets into ``filename`` (overwritten): the layout part, no path policy.

    Write errors come out as ``OSError`` (xlsxwriter wraps them) with nothing left behind: the
    part files of a huge workbook live in a scratch directory beside ``filename``, removed in every
    case but SIGKILL, and named like our temporary reports so a later run's stale-file cleanup
    removes what a SIGKILL left.
    """
    big = any(len(s) > CONSTANT_MEMORY_ROWS for s in sheets)
    sink = _Sink(open(filename, "wb"))  # noqa: SIM115 - closed by sink.close() / sink.abandon()
    scratch = None
    try:
        scratch = tempfile.mkdtemp(prefix=f".{FILE_PREFIX}", suffix=".parts.tmp",
                                   dir=os.path.dirname(os.path.abspath(filename))) if big else None
        wb = (_FastWorkbook if FAST_WRITER else xlsxwriter.Workbook)(sink, {
            # Small workbooks are assembled in memory (no per-part temp files: ~2x faster close);
            # huge sheets stream rows through temp files instead (the two modes exclude each other).
            "constant_memory": big,
            "in_memory": not big,
            "tmpdir": scratch,
            "strings_to_formulas": False,
            "strings_to_numbers": False,
            "strings_to_urls": False,
        })
        styles = _Styles(wb)
        failure: OSError | None = None
        with gc_paused():  # ~10 % of a large workbook's time went to GC passes over live cell objects
            for sheet in sheets:
                _write_sheet(wb, styles, sheet, captions)
            try:
                wb.close()
            except FileCreateError as exc:
                cause = exc.args[0] if exc.args else None
                failure = cause if isinstance(cause, OSError) else OSError(errno.EIO, str(exc))
            except FileSizeError:
                failure = OSError(errno.EFBIG, "over 4 GB, the limit of an xlsx file without ZIP64")
        if failure is not None:  # raised outside the handler: no chained xlsxwriter traceback
            raise OSError(failure.errno, failure.strerror or str(failure))
    except BaseException:
        sink.abandon()
        raise
    else:
        sink.close()
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


#: What xlsxwriter's sharedStrings.xml writer turns into ``_xHHHH_`` escapes (control characters but tab and
#: newline, the two non-characters), and the look-alikes of such escapes in a text, which it escapes again.
_SST_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\ufffe\uffff]")
_SST_ESCAPES = {c: f"_x{c:04X}_" for c in (*range(0x09), *range(0x0B, 0x20), 0xFFFE, 0xFFFF)}
_SST_LOOKALIKE = re.compile(r"_x[0-9a-fA-F]{4}_")
#: ``_SST_CONTROL``'s characters one by one (``_has_control``).
_SST_CONTROL_CHARS = tuple(map(chr, _SST_ESCAPES))


def _has_control(text: str) -> bool:
    """Whether a long ``text`` holds a character of ``_SST_CONTROL``: one ``in`` scan per character (32 C-level
    character searches), where the pattern's search walks the text at ~7 ns a character (5.8 ms of the
    timesformer pair's ~60 ms workbook, for its 0.8M characters of shared strings; this ~0.2 ms). On a short text
    the pattern is faster (32 calls)."""
    return any(ch in text for ch in _SST_CONTROL_CHARS)


#: Texts scanned and rendered at a time: the joined texts and their XML are copies, so a table of long call stacks
#: is not held twice more at once.
_SST_CHUNK = 1024


class _FastSharedStrings(SharedStrings):
    """xlsxwriter's sharedStrings.xml writer with the usual texts rendered in one pass: its per-string path
    (four regular expressions, two escape scans and three calls) took 5.5 of NPU pair 1's ~55 ms workbook.
    Rich strings and texts holding a look-alike of an escape go through xlsxwriter's own ``_write_si``; the
    bytes are the same (tests compare them)."""

    def _write_sst_strings(self) -> None:
        texts = self.string_table.string_array
        for at in range(0, len(texts), _SST_CHUNK):
            self._write_chunk(texts[at:at + _SST_CHUNK])

    def _write_chunk(self, texts: list[str]) -> None:
        parts: list[str] = []
        # one scan of the texts (joined by a newline, which is neither) tells whether any text needs a look:
        # searched text by text, the patterns cost 1.3 ms of NPU pair 1's call stacks
        joined = "\n".join(texts)
        control = _SST_CONTROL.search if _has_control(joined) else None
        lookalike = "_x" in joined
        del joined
        for text in texts:
            if (text.startswith("<r>") and text.endswith("</r>")) or (
                    lookalike and "_x" in text and _SST_LOOKALIKE.search(text) is not None):
                self.fh.write("".join(parts))
                parts.clear()
                self._write_si(text)
                continue
            if control is not None and control(text) is not None:
                text = text.replace("\r", "_x000D_")  # torch call stacks end lines with "\r\n"; translate is slow
                if control(text) is not None:
                    text = text.translate(_SST_ESCAPES)
            space = ' xml:space="preserve"' if text and (text[0].isspace() or text[-1].isspace()) else ""
            if "&" in text or "<" in text or ">" in text:
                text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            parts.append(f"<si><t{space}>{text}</t></si>")
        self.fh.write("".join(parts))


class _FastPackager(Packager):
    def _write_shared_strings_file(self) -> None:
        # xlsxwriter 3.3's Packager._write_shared_strings_file with our writer class
        sst = _FastSharedStrings()
        sst.string_table = self.workbook.str_table
        if not self.workbook.str_table.count:
            return
        sst._set_xml_writer(self._filename("xl/sharedStrings.xml"))
        sst._assemble_xml_file()


class _FastWorkbook(xlsxwriter.Workbook):
    """A workbook packaged by ``_FastPackager`` (xlsxwriter's documented ``_get_packager`` override)."""

    def _get_packager(self) -> Packager:
        return _FastPackager()


class _Styles:
    """Formats created on demand and shared by all sheets of one workbook."""

    def __init__(self, wb: xlsxwriter.Workbook) -> None:
        self.wb = wb
        self.cache: dict[tuple, Any] = {}

    def get(self, style: str = "", fill: str = "", bold: bool = False, indent: int = 0, num: bool = True,
            wrap: bool = False, link: bool = False, border: bool = True, top: bool = False) -> Any:
        key = (style, fill, bold, indent, num, wrap, link, border, top)
        fmt = self.cache.get(key)
        if fmt is None:
            props = dict(_BASE)
            if link:  # as spreadsheets show a hyperlink
                props.update(font_color="blue", underline=1)
            if not border:
                props["border"] = 0
            if num and style in _NUM_FORMATS:
                props["num_format"] = _NUM_FORMATS[style]
            if bold or style == STYLE_BOLD:
                props["bold"] = True
            if fill:
                props["pattern"] = 1
                props["bg_color"] = _FILLS[fill]
            if indent:
                props["indent"] = indent
            if wrap:
                props["text_wrap"] = True
            if top:
                props["valign"] = "top"
            fmt = self.cache[key] = self.wb.add_format(props)
        return fmt


#: Points per line of a wrapped caption (the default height of a row of 11-point text).
_LINE_POINTS = 15
#: A block row's attributes in ``_FastWorksheet.one_line_rows``: its height, one line, set explicitly.
_ONE_LINE = f' ht="{_LINE_POINTS}" customHeight="1"'
#: The tallest row Excel allows (xlsxwriter writes a taller height as given, beyond what Excel can show or set).
MAX_ROW_POINTS = 409


def row_points(lines: int) -> float:
    """The height of a row of ``lines`` wrapped lines, at most Excel's limit (a longer text scrolls)."""
    return min(MAX_ROW_POINTS, _LINE_POINTS * lines)


#: Advance widths (1/1000 em) of Arial's printable ASCII characters, space to tilde (Helvetica's metrics, which
#: Arial's match): the width of a wrapped cell's word in pixels at 11 points (``charts._break_long_words``).
_ARIAL_REGULAR = dict(zip(map(chr, range(32, 127)), (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, *(556,) * 10, 278, 278,
    584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667,
    778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556,
    278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500,
    334, 260, 334, 584), strict=True))
#: Advance widths (1/1000 em) of Arial Bold's printable ASCII characters, space to tilde (Helvetica-Bold's
#: metrics, which Arial's match): a caption's width in pixels, as Excel lays it out at 11 points (14.67 px/em).
_ARIAL_BOLD = dict(zip(map(chr, range(32, 127)), (
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, *(556,) * 10, 333, 333,
    584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667,
    778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611, 556,
    333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500,
    389, 280, 389, 584), strict=True))
_EM_PIXELS = 11 * 96 / 72


def char_pixels(ch: str, bold: bool = False) -> float:
    """A character's width in pixels at 11 points: its Arial (Bold) advance (``_ARIAL_REGULAR``, ``_ARIAL_BOLD``),
    as Excel lays out a caption or a wrapped cell's word."""
    units = (_ARIAL_BOLD if bold else _ARIAL_REGULAR).get(ch)
    if units is None:  # other scripts: a wide character takes an em, the rest as a capital
        units = 1000 if text_width(ch) == 2 else 722
    return units * _EM_PIXELS / 1000


@functools.lru_cache(maxsize=64)
def _caption_words(text: str) -> tuple[tuple[float, tuple[float, ...]], ...]:
    """Each space-separated word of a caption: its width and its characters' widths in pixels, 3 % to spare
    (a workbook's captions are two texts, measured once)."""
    words = []
    for word in text.split(" "):
        chars = tuple(char_pixels(ch, bold=True) * 1.03 for ch in word)
        words.append((sum(chars), chars))
    return tuple(words)


def _caption_lines(text: str, columns: list) -> int:
    """Lines a wrapped caption needs in a merged range of ``columns``, wrapped as Excel wraps: at spaces, a
    word (a path) that does not fit on the line's rest starting a new line and broken where lines end.
    Widths in pixels (`column_pixels`), less the cell's padding."""
    room = sum(column_pixels(c.width) for c in columns) - 8
    gap = char_pixels(" ", bold=True) * 1.03
    lines, used = 1, 0.0
    for width, chars in _caption_words(text):
        if used + (gap if used else 0.0) + width <= room:
            used += (gap if used else 0.0) + width
            continue
        if used:
            lines, used = lines + 1, 0.0
        for w in chars:
            if used and used + w > room:
                lines, used = lines + 1, 0.0
            used += w
    return lines


def _leading_tabs(text: Any) -> int:
    """The indent of an OverallMetrics Index cell: its leading tabs, one per level below a top row (the original's
    hierarchy, "\tConv (Forward)", "\t\tConv (Forward) (Cube)"), shown as the cell format's indent."""
    if not isinstance(text, str):
        return 0
    return len(text) - len(text.lstrip("\t"))


def _write_sheet(wb: xlsxwriter.Workbook, styles: _Styles, sheet: Sheet, captions: tuple[str, str]) -> None:
    """One sheet, in the order its rows are laid out (constant_memory mode writes rows in order): the captions
    (rows 1 and 2), the headers (row 3), the table's frame (filter, print setup), its data rows, then its charts."""
    ws = wb.add_worksheet(sheet.name, worksheet_class=_FastWorksheet if FAST_WRITER else None)
    if FAST_WRITER and ws.constant_memory and sheet.name in _CHART_SOURCES:
        ws.keep_chart_data()
    columns = sheet.columns
    if sheet.data.shape[1] != len(columns):
        raise ValueError(f"sheet {sheet.name}: {sheet.data.shape[1]} data columns for {len(columns)} headers")
    for j, col in enumerate(columns):
        ws.set_column(j, j, col.width)
    if sheet.stacked_captions:
        _write_stacked_captions(ws, styles, sheet, captions)
    else:
        _write_spanned_captions(ws, styles, sheet, captions)
    _write_headers(ws, styles, sheet)
    nrows = _rows_written(sheet)
    _frame_table(ws, sheet, nrows)
    _write_data(ws, styles, sheet, nrows)
    _draw_charts(wb, ws, sheet)


def _write_stacked_captions(ws: Worksheet, styles: _Styles, sheet: Sheet, captions: tuple[str, str]) -> None:
    """The Summary's captions, stacked in rows 1 and 2 so that neither clips the other. Each wraps within the
    table's columns where longer than they are: it ran on to their right, and the Summary, which prints its
    columns only (report/charts.py), had a long path cut at the page's edge. One wider than its first column is
    merged over the table's columns, wrapped or not: written in that column alone, its fill ended under the path
    ("Base Profiling: sampl" green, "e_data/bert-small_h100.json.gz" on white)."""
    columns = sheet.columns
    first = sheet.base_span[0]
    for r, (text, fill) in enumerate(zip(captions, ("green", "yellow"), strict=True)):
        lines = _caption_lines(text, columns[first:])
        fmt = styles.get(fill=fill, bold=True, num=False, wrap=lines > 1)
        if lines > 1:
            ws.set_row(r, row_points(lines))
        if len(columns) - 1 > first and _caption_lines(text, columns[first:first + 1]) > 1:
            ws.merge_range(r, first, r, len(columns) - 1, "", fmt)
        ws.write_string(r, first, text, fmt)


def _write_spanned_captions(ws: Worksheet, styles: _Styles, sheet: Sheet, captions: tuple[str, str]) -> None:
    """Row 1: each caption merged over its half of the table (or the part of it that prints on one page:
    `caption_range`), the rest of the half filled alike; row 2: empty, or the sheet's note.
    A caption longer than its merged range was cut at the range's edge (the original's layout): on most sheets
    both paths lost the part that tells them apart. Such captions wrap, in a row tall enough."""
    columns = sheet.columns
    spans = [(half, caption_range(sheet, *half), text, fill) for half, text, fill in
             ((sheet.base_span, captions[0], "green"), (sheet.comparison_span, captions[1], "yellow"))]
    lines = max(_caption_lines(text, columns[first:last + 1]) for _, (first, last), text, _ in spans)
    if lines > 1:
        ws.set_row(0, row_points(lines))
    for half, (first, last), text, fill in spans:
        fmt = styles.get(fill=fill, bold=True, num=False, wrap=lines > 1)
        for j in (*range(half[0], first), *range(last + 1, half[1] + 1)):
            ws.write_blank(0, j, None, fmt)
        if last > first:
            ws.merge_range(0, first, 0, last, "", fmt)
        ws.write_string(0, first, text, fmt)
    note = getattr(sheet, "note", "")  # a line in row 2 (ranks_report.RanksSheet): frozen with the headers
    if note:  # unbordered: it runs on over the empty cells to its right, or wraps in the first page's columns
        first, last = _note_columns(sheet)
        # a line per part (ranks_report._note), each wrapped on its own: the row as tall as all of them
        lines = sum(_caption_lines(part, columns[first:last + 1]) for part in note.split("\n"))
        fmt = styles.get(bold=True, num=False, border=False, wrap=lines > 1)
        if lines > 1:
            ws.set_row(1, row_points(lines))
            if last > first:
                ws.merge_range(1, first, 1, last, "", fmt)
        ws.write_string(1, first, note, fmt)


def _write_headers(ws: Worksheet, styles: _Styles, sheet: Sheet) -> None:
    """Row 3, each header filled as its half's caption."""
    cmp_first, cmp_last = sheet.comparison_span
    for j, col in enumerate(sheet.columns):
        fill = "yellow" if cmp_first <= j <= cmp_last else "green"
        ws.write_string(2, j, col.header, styles.get(fill=fill, bold=True, num=False))
    if not sheet.stacked_captions:
        # the header rows stay in view while the table scrolls. Not on Summary, whose tables below the
        # waterfall (contributors, checks, chart data) have headers of their own that row 3 would mislabel.
        ws.freeze_panes(HEADER_ROWS, frozen_name_columns(sheet))


def frozen_name_columns(sheet: Sheet) -> int:
    """How many leading columns stay in view while the table scrolls right: those that name a row (left of the
    base half, as `_page_breaks` repeats them on printed pages). The comparator sheets are 1,800-2,700 px wide,
    so scrolling to a diff column hid the api, kernel or module name it belongs to. None where that is a lone
    Order Id (the name opens the base half, under its merged caption), nor where the names are wider than
    `FROZEN_NAMES_MAX_PIXELS`."""
    key = sheet.base_span[0]
    names = sheet.columns[:key]
    if not names or [c.header for c in names] == ["Order Id"]:
        return 0
    return key if sum(column_pixels(c.width) for c in names) <= FROZEN_NAMES_MAX_PIXELS else 0


def _rows_written(sheet: Sheet) -> int:
    """The sheet's data rows that fit below its header rows (Excel's ``MAX_ROWS``); a warning names the rest."""
    nrows = len(sheet)
    limit = MAX_ROWS - HEADER_ROWS
    if nrows > limit:
        log.warning("Sheet %s has %s rows; Excel holds at most %s, the rest are not written.",
                    sheet.name, f"{nrows:,}", f"{limit:,}")
        nrows = limit
    return nrows


def _frame_table(ws: Worksheet, sheet: Sheet, nrows: int) -> None:
    """What the table of ``nrows`` data rows gets as a whole: one-line rows, its filter and its print setup."""
    if FAST_WRITER and any(c.header in LINES_HEADERS for c in sheet.columns):
        ws.one_line_rows = range(HEADER_ROWS, HEADER_ROWS + nrows)
    if not sheet.stacked_captions and not sheet.row_styles:
        # a filter on the header row: users filter the tables (e.g. a diff column > 0) at once. Not on Summary
        # (tables of several kinds) nor on OverallMetrics, whose rows are a hierarchy.
        ws.autofilter(HEADER_ROWS - 1, 0, HEADER_ROWS - 1 + nrows, len(sheet.columns) - 1)
    if not sheet.stacked_captions:
        _print_setup(ws, sheet, nrows)


def _write_data(ws: Worksheet, styles: _Styles, sheet: Sheet, nrows: int) -> None:
    """The first ``nrows`` data rows: row-styled (OverallMetrics: a fill and an indent per row) cell by cell, the
    others as plain rows (``_write_plain_rows``); then the cells that link to a file."""
    columns = sheet.columns
    cols = [col if len(col) == nrows else col[:nrows] for col in _column_arrays(sheet.data)]
    links = getattr(sheet, "links", None) or {}  # {(data row, column): file name} (ranks_report.RanksSheet)
    is_ratio = [c.header in RATIO_HEADERS for c in columns]
    row_styles = sheet.row_styles
    # A ratio column is shown as percentages throughout. The original types ApiCompare's and the kernel sheets'
    # as floats, so one column read 0.99 beside a red 101.00% (the red format is a percentage).
    # (a column of finer ratios, STYLE_RATIO_FINE, keeps its format)
    kinds = [c.style if c.style == STYLE_RATIO_FINE else STYLE_RATIO if ratio else c.style
             for c, ratio in zip(columns, is_ratio, strict=True)]
    plain = [styles.get(kind, top=c.header in LINES_HEADERS) for kind, c in zip(kinds, columns, strict=True)]
    reds = [styles.get(kind, fill="red") if ratio else None for kind, ratio in zip(kinds, is_ratio, strict=True)]
    if not row_styles and not links and isinstance(ws, _FastWorksheet) and ws.constant_memory:
        _stream_plain_rows(ws, cols, nrows, plain, reds)
        return
    values = [col.tolist() for col in cols]
    if row_styles:
        for i in range(nrows):
            r = i + HEADER_ROWS
            fill = row_styles[i] if i < len(row_styles) else ""
            for j in range(len(columns)):
                v = values[j][i]
                indent = _leading_tabs(v) if j == 0 else 0
                fmt = styles.get(kinds[j], fill=fill, indent=indent) if fill or j == 0 else plain[j]
                _write_cell(ws, r, j, v, fmt, reds[j])
    else:
        arrays = [col if col.dtype in _FAST_DTYPES else None for col in cols]
        # cell by cell with links: a link replaces its cell, which the fast writer's row blocks cannot take
        _write_plain_rows(ws, values, nrows, plain, reds, arrays, blocks=not links)
    for (i, j), target in links.items():
        if i < nrows:  # a relative link: the file beside the workbook, wherever the folder is moved
            ws.write_url(i + HEADER_ROWS, j, f"external:{target}", styles.get(kinds[j], link=True),
                         string=str(values[j][i]))


def _column_arrays(frame: pd.DataFrame) -> list[Any]:
    """Each column's array as the frame holds it (a numpy array, read-only as ``Series.to_numpy`` hands it out, or
    an ExtensionArray: what ``Series.tolist`` and ``Series.to_numpy`` read), by position. A Series per column
    (``items()``; ``iloc[:, j]`` cost more) took ~12 us under pandas 3: 1.5 of NPU pair 1's ~29 ms workbook (CPU),
    for its 119 columns."""
    arrays = getattr(frame, "_iter_column_arrays", None)
    if arrays is None:  # a pandas without it: the Series' own arrays
        return [own_array(col) for _, col in frame.items()]
    out = []
    for a in arrays():
        if isinstance(a, np.ndarray):  # the writer only reads a sheet: a view it cannot write through
            a = a.view()
            a.flags.writeable = False
        out.append(a)
    return out


def _write_plain_rows(ws: Any, values: list[list], nrows: int, fmts: list, reds: list,
                      arrays: list | None = None, blocks: bool = True, first: int = HEADER_ROWS) -> bool:
    """The rows of a sheet without row styles (from sheet row ``first``), in row order (as constant_memory mode
    requires); True where they went as one block.

    On our worksheet class the whole block is handed over at once and its cell XML is rendered
    column-wise (``_FastWorksheet.write_block``); cells it cannot render (booleans, complex numbers,
    objects whose text is empty, xlsxwriter rich-string look-alikes) send the sheet through the per-cell
    path. Strings over Excel's 32,767 units are cut inside the block, as xlsxwriter cuts them.
    """
    if blocks and isinstance(ws, _FastWorksheet) and ws.write_block(first, values, nrows, fmts, reds, arrays):
        return True
    for i in range(nrows):
        r = i + first
        for c, (column, fmt, red) in enumerate(zip(values, fmts, reds, strict=True)):
            _write_cell(ws, r, c, column[i], fmt, red)
    return False


#: Rows of a streamed sheet (constant_memory) rendered and written at a time (``_stream_plain_rows``).
STREAM_ROWS = 4096


def _stream_plain_rows(ws: _FastWorksheet, cols: list, nrows: int, fmts: list, reds: list) -> None:
    """A streamed sheet's plain rows, ``STREAM_ROWS`` at a time: each chunk's values, cells and XML are made from
    the columns and written before the next. A whole sheet at once held its values, its cells, its XML and that
    XML's UTF-8 bytes together: the render's peak, 579 MiB over the compare's on the 1 GB GPU pair (ModuleCompare,
    127k rows of call stacks). The bytes are the same: formats take their xf index at their first use in row-major
    order either way, and a chunk the block writer leaves (``_Fallback``) goes, with the rows after it, through
    the per-cell writes, which number formats in that order too."""
    block = True
    for at in range(0, nrows, STREAM_ROWS):
        end = min(at + STREAM_ROWS, nrows)
        part = [col[at:end] for col in cols]
        values = [col.tolist() for col in part]
        arrays = [col if col.dtype in _FAST_DTYPES else None for col in part]
        block = _write_plain_rows(ws, values, end - at, fmts, reds, arrays, blocks=block, first=HEADER_ROWS + at)


# --------------------------------------------------------------------------- fast rows
#
# xlsxwriter spends ~7.5 us per cell (argument decorators, a namedtuple per cell, a dict per
# row, and at close an attribute list and escape checks per cell). A block of plain rows is
# rendered here instead, one column at a time, into exactly the XML xlsxwriter would write for
# the same write_number / write_string / write_blank calls (tests compare the bytes). Style
# indices are placeholders (\x01..\x08, which can never occur in rendered text: control
# characters are escaped) replaced once the formats' xf indices are known. xlsxwriter numbers
# formats by first use while writing cells (at close in the default mode, at write time in
# constant_memory mode) and shared strings by first use at write time; both orders are kept.

_PLACEHOLDERS = "\x01\x02\x03\x04\x05\x06\x07\x08"
_ROW_SEP = "\x1e"
#: xlsxwriter checks strings longer than this for its 32,767-character limit; we leave them to it.
_STR_FAST_MAX = 16_383
_STR_MAX = 32_767
#: Inline-string cells cached per worksheet (profile names repeat a lot); cleared when full.
_INLINE_CACHE_MAX = 1 << 16


class _Fallback(Exception):
    """A value the block renderer leaves to xlsxwriter's per-cell path."""


def _is_rich(text: str) -> bool:
    """xlsxwriter writes such strings as raw rich-text XML (see ``_FastWorksheet._write_string``)."""
    return text.startswith("<r>") and text.endswith("</r>")


def _checked_text(text: str) -> str:
    """A string cell's text as xlsxwriter stores it: cut to Excel's 32,767 UTF-16 units."""
    if _is_rich(text):
        raise _Fallback
    if len(text) > _STR_FAST_MAX and _utf16_len(text) > _STR_MAX:
        return _utf16_truncate(text, _STR_MAX)
    return text


def _utf16_truncate(text: str, max_units: int) -> str:
    """The longest prefix of ``text`` within ``max_units`` UTF-16 units, never splitting a character above
    U+FFFF: what xlsxwriter's own cut gives, without its per-character Python loop (2-4 ms per long cell,
    76 s for a workbook with 5,000 module call stacks over the limit)."""
    if _utf16_len(text) == len(text):  # no character above U+FFFF: units are characters
        return text[:max_units]
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    units = np.cumsum(np.where(cps > 0xFFFF, 2, 1))
    return text[:int(np.searchsorted(units, max_units, side="right"))]


def _classify(v: Any, ratio: bool) -> tuple[str, Any, bool]:
    """(kind, payload, red) of one plain cell, as ``_write_cell`` writes it.

    kind is "n" (number), "s" (string) or "b" (blank); ``red`` selects the red format.
    Raises ``_Fallback`` for what only xlsxwriter's own path renders identically.
    """
    t = type(v)
    if t is str:
        if not v:
            return "b", None, False
        if ratio and v.strip().upper() == "INF":
            return "s", "INF", True
        return "s", _checked_text(v), False
    if v is None:
        return "b", None, False
    if t is float or t is int:
        f = float(v)
    elif isinstance(v, numbers.Number) and not isinstance(v, (complex, bool)):
        f = float(v)
    elif v is pd.NA or v is pd.NaT:
        return "b", None, False
    elif isinstance(v, (bool, complex)):
        raise _Fallback
    else:
        text = str(v)
        if not text:
            raise _Fallback
        return "s", _checked_text(text), False
    if f != f:
        return "b", None, False
    if f == _INF:
        return "s", "INF", ratio
    if f == -_INF:
        return "s", "-INF", False
    return "n", f, ratio and f > 1


def _numeric_cells(array: np.ndarray, column: list, ref: str, rows: list[str], num: str,
                   num_red: str | None) -> tuple[list, list[int]]:
    """The cells of an int64 / float64 column by one comprehension, and the rows left to the general path (NaN
    and infinities). The per-cell type tests were a quarter of a float cell's cost, and an int within 2**53
    prints as ``str`` does (its float is exact, and ``.16G`` prints its digits): ~0.55 -> ~0.15 us an int cell."""
    rest: list[int] = []
    exact_ints = False
    if array.dtype.kind == "f":
        finite = np.isfinite(array)
        if not finite.all():
            rest = np.flatnonzero(~finite).tolist()
    elif array.size == 0 or (int(array.min()) >= -_INT_EXACT and int(array.max()) <= _INT_EXACT):
        exact_ints = True
    red = None if num_red is None else array > 1  # NaN: False; +inf: left to the general path anyway
    if red is not None and red.any():
        pre = map((num, num_red).__getitem__, red.tolist())
        if exact_ints:
            return [f"{ref}{r}{p}{v}</v></c>" for r, p, v in zip(rows, pre, column, strict=True)], rest
        return [f"{ref}{r}{p}{v:.16G}</v></c>" for r, p, v in zip(rows, pre, column, strict=True)], rest
    if exact_ints:
        return [f"{ref}{r}{num}{v}</v></c>" for r, v in zip(rows, column, strict=True)], rest
    return [f"{ref}{r}{num}{v:.16G}</v></c>" for r, v in zip(rows, column, strict=True)], rest


def _column_cells(column: list, nrows: int, ref: str, rows: list[str], ph: str, red_ph: str | None,
                  strings: list | None, inline: Any, array: np.ndarray | None = None) -> list[str]:
    """One column's cell XML (``<c r=...>`` elements) with style placeholders.

    String cells are appended to ``strings`` as (row index, text, placeholder) and left as
    None in the result when ``strings`` is given (shared-string mode: the index is known only
    after all columns are seen); otherwise ``inline(text, style)`` renders them as inline strings.
    ``array``: the column's values as a numpy array, when they are int64 / float64 (``_numeric_cells``).
    """
    ratio = red_ph is not None
    blank = f'" s="{ph}"/>'
    num = f'" s="{ph}"><v>'
    num_red = f'" s="{red_ph}"><v>'
    plain: dict[str, str] = {}  # texts of this column met before that need no check: -> inline cell tail
    todo: Any = range(nrows)
    if array is not None and array.dtype in _FAST_DTYPES and len(array) == nrows == len(column):
        out, todo = _numeric_cells(array, column, ref, rows, num, num_red if ratio else None)
    else:
        out = [None] * nrows
    for i in todo:
        v = column[i]
        t = type(v)
        if t is float and v == v and v != _INF and v != -_INF and not (ratio and v > 1):
            out[i] = f"{ref}{rows[i]}{num}{v:.16G}</v></c>"
        elif t is int and not ratio and -_INT_FAST < v < _INT_FAST:  # Order Id, counts: every row has some
            out[i] = f"{ref}{rows[i]}{num}{v:.16G}</v></c>"  # int's "G" formats its float, as _classify does
        elif t is str and (tail := plain.get(v)) is not None:  # a column repeats a few texts many times
            if strings is not None:
                strings.append((i, v, ph))
            else:
                out[i] = f"{ref}{rows[i]}{tail}"
        elif t is str and v and not ratio and len(v) <= _STR_FAST_MAX and not _is_rich(v):
            plain[v] = tail = "" if strings is not None else inline(v, ph)
            if strings is not None:
                strings.append((i, v, ph))
            else:
                out[i] = f"{ref}{rows[i]}{tail}"
        elif v is None:
            out[i] = f"{ref}{rows[i]}{blank}"
        else:
            kind, payload, red = _classify(v, ratio)
            p = red_ph if red else ph
            if kind == "n":
                out[i] = f"{ref}{rows[i]}{num_red if red else num}{payload:.16G}</v></c>"
            elif kind == "b":
                out[i] = f"{ref}{rows[i]}{blank}"
            elif strings is not None:
                strings.append((i, payload, p))
            else:
                out[i] = f"{ref}{rows[i]}{inline(payload, p)}"
    return out


class _Texts:
    """A column of texts and blanks (not a ratio column), factorised: each distinct value is checked and rendered
    once and the cells are made by one comprehension, instead of per-cell tests and one (row, text, style) entry
    per cell for the shared-string table. A value's code is the row it first appears in."""

    __slots__ = ("codes", "texts", "order", "count", "ph")

    def __init__(self, codes: list[int], texts: dict[int, str | None], count: int, ph: str) -> None:
        #: per row the code of its value; ``texts``: code -> text (None: a blank), in order of first appearance
        self.codes, self.texts, self.count, self.ph = codes, texts, count, ph
        #: (text, first row) of each text written as a string, in order of first row
        self.order = [(t, k) for k, t in texts.items() if t is not None]

    @classmethod
    def of(cls, column: list, ph: str) -> _Texts | None:
        """The factorised column, or None when a value is neither a text nor a blank (None, NaN, pd.NA, "") or a
        text needs a check (a rich-text look-alike, one that may be over Excel's limit): the general path."""
        first = next((v for v in column if v is not None), None)
        if first is not None and not isinstance(first, str):  # a column of numbers: no pass over it
            return None
        index: dict = {}
        try:
            codes = list(map(index.setdefault, column, count()))
        except TypeError:  # an unhashable value
            return None
        texts: dict[int, str | None] = {}
        for v, k in index.items():
            if type(v) is not str:
                if v is None or v is pd.NA or (type(v) is float and v != v):
                    texts[k] = None
                    continue
                if not isinstance(v, str):
                    return None
                v = str(v)
            if len(v) > _STR_FAST_MAX or _is_rich(v):
                return None
            texts[k] = v or None
        blank = {k for k, t in texts.items() if t is None}  # (each NaN object is its own key)
        return cls(codes, texts, len(codes) - (sum(map(blank.__contains__, codes)) if blank else 0), ph)

    def cells(self, ref: str, rows: list[str], table: Any) -> tuple:
        """The cells, given the shared-string table (a dict) or the inline-string renderer (text, style) -> tail:
        as three columns of pieces (reference, row number, the rest: ``_spliced``), so that a long text's
        inline cell is copied once, by the join of the rows, not first into a cell of its own."""
        ph = self.ph
        blank = f'" s="{ph}"/>'
        if isinstance(table, dict):
            tails = {k: blank if t is None else f'" s="{ph}" t="s"><v>{table[t]}</v></c>'
                     for k, t in self.texts.items()}
        else:
            tails = {k: blank if t is None else table(t, ph) for k, t in self.texts.items()}
        return repeat(ref, len(rows)), rows, list(map(tails.__getitem__, self.codes))


def _spliced(cells: list) -> list:
    """The columns of pieces the rows are joined from: a column of cells, or the pieces of one (``_Texts``)."""
    out: list = []
    for col in cells:
        if col.__class__ is tuple:
            out.extend(col)
        else:
            out.append(col)
    return out


#: Text files written as UTF-8 bytes need no newline translation on this platform (POSIX): ``_write_text`` and
#: ``_FastWorksheet._write_optimized_sheet_data`` may bypass the text layer.
_BINARY_TEXT = os.linesep == "\n"
_COPY_CHUNK = 1 << 20


def _write_text(fh: Any, text: str) -> None:
    """``fh.write(text)`` for xlsxwriter's UTF-8 text files, through the binary buffer when that is the same
    bytes: the text layer's write of a block's XML took 0.66 s CPU for 300 MB, the encode and write 0.27 s."""
    if _BINARY_TEXT and hasattr(fh, "buffer"):
        fh.flush()
        fh.buffer.write(text.encode("utf-8"))
    else:
        fh.write(text)


def _substitute(text: str, subs: list[tuple[str, str]]) -> str:
    """``text`` with each style placeholder of ``subs`` replaced by its xf index (a ratio column's cells, rendered
    before the indices were known)."""
    for ph, x in subs:
        text = text.replace(ph, x)
    return text


class _BlockRow:
    """The table entry of a block row's first cell: writes the whole row's cells."""

    __slots__ = ("block", "index")

    def __init__(self, block: _Block, index: int) -> None:
        self.block, self.index = block, index


class _Covered:
    """The table entry of a block row's last cell, so xlsxwriter's row spans stay right."""

    __slots__ = ()


_COVERED = _Covered()


class _InlineText:
    """A string cell that must not be read as xlsxwriter rich text: written as an escaped inline string."""

    __slots__ = ("string", "format")

    def __init__(self, string: str, fmt: Any) -> None:
        self.string, self.format = string, fmt


class _Block:
    """Plain rows ``first_row..`` of one sheet, rendered to XML with style placeholders."""

    def __init__(self, first_row: int, values: list[list], nrows: int, reds: list) -> None:
        self.first_row, self.nrows = first_row, nrows
        self.values, self.reds = values, reds
        #: (cells, first uses, placeholders) until the rows are resolved at close.
        self.pending: tuple[list[list[str]], list[tuple[int, int, Any]], dict[int, str]] | None = None
        self.rows: list[str] | None = None

    def resolve(self, cells: list[list[str]], order: list[tuple[int, int, Any]], phs: dict[int, str],
                opens: list[str] | None = None) -> str:
        """Give formats their xf index in first-use order; the rows joined by ``_ROW_SEP``, or given each
        row's opening tag, the rows' whole XML (one join of every piece: no split and join again)."""
        used = {}
        for _, _, fmt in sorted(order, key=lambda e: (e[0], e[1])):
            used[id(fmt)] = fmt._get_xf_index()
        if opens is None:
            text = _ROW_SEP.join(map("".join, zip(*_spliced(cells), strict=True)))
        else:
            text = "".join(chain.from_iterable(zip(opens, *_spliced(cells), repeat("</row>", len(opens)),
                                                   strict=True)))
        for fid, xf in used.items():
            text = text.replace(phs[fid], str(xf))
        return text

    def chart_value(self, row: int, col: int) -> Any:
        """What xlsxwriter's ``_get_range_data`` returns for this cell (chart caches)."""
        if not 0 <= col < len(self.values):
            return None
        kind, payload, _ = _classify(self.values[col][row - self.first_row], self.reds[col] is not None)
        if kind == "n":
            return f"{payload:.16g}"
        return payload if kind == "s" else ""


class _FastWorksheet(Worksheet):
    """An xlsxwriter worksheet that also takes whole blocks of plain rows (``write_block``)."""

    def __init__(self) -> None:
        super().__init__()
        self._blocks: list[_Block] = []
        self._has_inline = False
        self._inline_cache: dict[tuple[str, str], str] = {}
        #: constant_memory mode streams rows out, and xlsxwriter then gives charts no cached points (an empty
        #: cache, step names typed as numbers): a sheet charts read (``keep_chart_data``) keeps what
        #: ``_get_range_data`` would have returned, cell by cell (row -> col -> value) and block by block.
        self._chart_cells: dict[int, dict[int, Any]] | None = None
        self._chart_blocks: list[_Block] = []
        #: Rows written with their height set to one line (``ht``, ``customHeight``; see LINES_HEADERS). xlsxwriter
        #: leaves out a height equal to the default, which LibreOffice then treats as free to overflow.
        self.one_line_rows: range = range(0)

    def keep_chart_data(self) -> None:
        """Keep this sheet's values for chart caches in constant_memory mode (a small sheet: Summary). The
        number and blank writes of this sheet alone are wrapped (no cost to the other sheets' cells)."""
        self._chart_cells = {}
        write_number, write_blank = self._write_number, self._write_blank

        def keep_number(row: int, col: int, number: Any, cell_format: Any = None) -> int:
            rc = write_number(row, col, number, cell_format)
            if rc == 0:
                self._keep(row, col, f"{number:.16g}")
            return rc

        def keep_blank(row: int, col: int, blank: Any, cell_format: Any = None) -> int:
            rc = write_blank(row, col, blank, cell_format)
            if rc == 0 and cell_format is not None:  # a blank without a format is no cell
                self._keep(row, col, "")
            return rc

        self._write_number, self._write_blank = keep_number, keep_blank

    def _keep(self, row: int, col: int, value: Any) -> None:
        if self._chart_cells is not None:
            self._chart_cells.setdefault(row, {})[col] = value

    def _inline(self, text: str, style: str) -> str:
        """The tail of an inline-string cell after its reference, escaped as xlsxwriter escapes it."""
        key = (text, style)
        hit = self._inline_cache.get(key)
        if hit is None:
            # xlsxwriter's escapes (two substitutions, two searches, five replaces, each a scan of the text: ~7 us
            # a call stack) are needed only by a text with a control character or an "_x"; the other checks
            # as _FastSharedStrings makes them: 0.50 -> 0.2 s of the 1 GB GPU pair's 71k distinct texts
            if "_x" in text or _SST_CONTROL.search(text) is not None:
                esc = XMLwriter._escape_control_characters(text)
                space = ' xml:space="preserve"' if _preserve_whitespace(esc) else ""
            else:
                esc = text
                space = ' xml:space="preserve"' if esc and (esc[0].isspace() or esc[-1].isspace()) else ""
            if "&" in esc or "<" in esc or ">" in esc:
                esc = esc.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            attr = f' s="{style}"' if style else ""
            hit = f'"{attr} t="inlineStr"><is><t{space}>{esc}</t></is></c>'
            if len(self._inline_cache) >= _INLINE_CACHE_MAX:
                self._inline_cache.clear()
            self._inline_cache[key] = hit
        return hit

    def write_block(self, first_row: int, values: list[list], nrows: int, fmts: list, reds: list,
                    arrays: list | None = None) -> bool:
        """Write rows ``first_row..first_row+nrows-1`` of plain cells; False leaves them to the caller.

        Cells are the same as ``_write_cell(ws, row, col, values[col][i], fmts[col], reds[col])``.
        ``arrays``: per column its values as a numpy array when they are int64 / float64 (else None), for the
        numeric columns' fast path.
        """
        ncols = len(values)
        if not nrows:
            return True
        distinct: dict[int, Any] = {}
        for f in (*fmts, *(r for r in reds if r is not None)):
            distinct.setdefault(id(f), f)
        if (not ncols or len(distinct) > len(_PLACEHOLDERS) or any(f is None for f in fmts)
                or self.excel_version == 2010):
            return False
        last_row = first_row + nrows - 1
        if last_row >= self.xls_rowmax or ncols > self.xls_colmax:
            return False
        if self.constant_memory and first_row <= self.previous_row and self.table.get(self.previous_row):
            return False
        if self.constant_memory and first_row > self.previous_row:
            # the held row (the headers) is written first: its formats take their indices before the block's, as
            # with cell writes (a wrapped caption's format differs from the headers', which it otherwise numbered)
            self._write_single_row(first_row)
        phs = {fid: _PLACEHOLDERS[k] for k, fid in enumerate(distinct)}
        block = _Block(first_row, values, nrows, reds)
        shared = not self.constant_memory
        rows = [str(r + 1) for r in range(first_row, last_row + 1)]
        strings: list | None = [] if shared else None
        cells: list = [None] * ncols
        order: list[tuple[int, int, Any]] = []
        xf: dict[int, str] | None = None
        try:
            # constant_memory: formats take their xf index at write time, so the ratio columns (where the
            # red format's first use depends on the cells) are rendered first, the indices are taken in
            # first-use order, and the other columns are rendered with them: no pass over the block's
            # XML replacing placeholders (~0.2 s per format in a 200 MB sheet)
            for j in (sorted(range(ncols), key=lambda c: reds[c] is None) if not shared else range(ncols)):
                if not shared and xf is None and reds[j] is None:
                    order.extend((0, c, fmts[c]) for c in range(ncols) if reds[c] is None)
                    xf = {id(fmt): str(fmt._get_xf_index()) for _, _, fmt in sorted(order, key=lambda e: e[:2])}
                ref = f'<c r="{xl_col_to_name(j)}'
                red_ph = phs[id(reds[j])] if reds[j] is not None else None
                col_strings: Any = [] if shared else None
                array = arrays[j] if arrays else None
                texts = _Texts.of(values[j], (xf or phs)[id(fmts[j])]) \
                    if red_ph is None and nrows >= _COLUMN_MIN_ROWS and array is None else None
                if texts is not None:  # shared strings: the cells are made once the table has the block's texts
                    col = cells[j] = None if shared else texts.cells(ref, rows, self._inline)
                    col_strings = texts
                else:
                    col = cells[j] = _column_cells(values[j], nrows, ref, rows, (xf or phs)[id(fmts[j])], red_ph,
                                                   col_strings, self._inline,
                                                   array if nrows >= _COLUMN_MIN_ROWS else None)
                if shared:
                    strings.append((j, ref, col_strings))
                if xf is None:
                    order.extend(self._first_uses(col, col_strings, j, phs[id(fmts[j])], fmts[j], red_ph, reds[j]))
        except _Fallback:
            # formats may have their index now; the cell writes keep it. Within a sheet that is the index the
            # cell writes would have given; across sheets plain xlsxwriter may number the formats in another
            # order (it keeps a sheet's last row until close, this writes it at once): the same styles
            return False
        # The cells now exist for xlsxwriter's bookkeeping: dimensions, spans, row order.
        self._check_dimensions(first_row, 0)
        self._check_dimensions(last_row, ncols - 1)
        if shared:
            self._hold_block(block, strings, cells, rows, order, phs)
        else:
            self._stream_block(block, cells, rows, fmts, order, phs, xf)
        return True

    def _hold_block(self, block: _Block, strings: list, cells: list, rows: list[str],
                    order: list[tuple[int, int, Any]], phs: dict[int, str]) -> None:
        """The default mode's end of ``write_block``: the block's texts enter the shared-string table now, in the
        order cell writes would have entered them, and its rows wait for close (``_write_rows``, ``_write_cell``),
        when the formats get their xf indices; each row's first and last cell hold a table entry, so that
        xlsxwriter's row spans and order stay right."""
        self._share_strings(strings, cells, rows, len(cells))
        block.pending = (cells, order, phs)
        self._blocks.append(block)
        first_row, last = block.first_row, len(cells) - 1
        if last:
            self.table.update({first_row + i: {0: _BlockRow(block, i), last: _COVERED} for i in range(block.nrows)})
        else:
            self.table.update({first_row + i: {0: _BlockRow(block, i)} for i in range(block.nrows)})

    def _stream_block(self, block: _Block, cells: list, rows: list[str], fmts: list,
                      order: list[tuple[int, int, Any]], phs: dict[int, str], xf: dict[int, str] | None) -> None:
        """constant_memory's end of ``write_block``: flush the rows before the block, then stream the block as
        xlsxwriter would, the ratio columns' placeholders replaced by the xf indices (``xf``; None where every
        column is a ratio column). ``cells`` is emptied once its rows are joined: a 200 MB sheet's cells are not
        held beside its XML while that is written."""
        first_row, reds = block.first_row, block.reds
        if self._chart_cells is not None:
            self._chart_blocks.append(block)
        if first_row > self.previous_row:
            self._write_single_row(first_row)
        if xf is None:  # every column is a ratio column
            xf = {id(fmt): str(fmt._get_xf_index()) for _, _, fmt in sorted(order, key=lambda e: e[:2])}
        for j in range(len(cells)):
            if reds[j] is not None:  # its cells were rendered before the indices were known
                subs = [(phs[f], xf[f]) for f in (id(fmts[j]), id(reds[j])) if f in xf]
                cells[j] = [_substitute(c, subs) for c in cells[j]]
        height = _ONE_LINE if first_row in self.one_line_rows else ""
        text = "".join(chain.from_iterable(zip([f'<row r="{r}"{height}>' for r in rows], *_spliced(cells),
                                               repeat("</row>", block.nrows),
                                               strict=True)))
        cells.clear()
        _write_text(self.fh, text)
        self.previous_row = first_row + block.nrows - 1

    @staticmethod
    def _first_uses(col: list, col_strings: list | None, j: int, ph: str, fmt: Any, red_ph: str | None,
                    red: Any) -> list[tuple[int, int, Any]]:
        """(row, column, format) of the first cell of this column using each of its formats."""
        if red_ph is None:
            return [(0, j, fmt)]
        firsts: dict[str, int] = {}
        for i, cell in enumerate(col):
            if cell is not None:
                key = red_ph if f's="{red_ph}"' in cell else ph
                firsts.setdefault(key, i)
                if len(firsts) == 2:
                    break
        for i, _text, p in col_strings or ():
            if firsts.get(p, i + 1) > i:
                firsts[p] = i
        return [(i, j, red if p == red_ph else fmt) for p, i in firsts.items()]

    def _share_strings(self, strings: list, cells: list[list], rows: list[str], ncols: int) -> None:
        """Enter the block's strings in the shared-string table in row-major order, as cell writes would."""
        sst = self.str_table
        table = sst.string_table
        first: dict[str, int] = {}
        count = 0
        for j, _ref, col_strings in strings:
            if col_strings.__class__ is _Texts:
                count += col_strings.count
                seen: Any = col_strings.order
            else:
                count += len(col_strings)
                seen = {}
                for i, text, _p in col_strings:
                    if text not in seen:
                        seen[text] = i
                seen = seen.items()
            for text, i in seen:
                if text not in table:
                    pos = i * ncols + j
                    if first.get(text, pos + 1) > pos:
                        first[text] = pos
        for text in sorted(first, key=first.__getitem__):
            table[text] = sst.unique_count
            sst.unique_count += 1
        sst.count += count
        for j, ref, col_strings in strings:
            if col_strings.__class__ is _Texts:
                cells[j] = col_strings.cells(ref, rows, table)
                continue
            out = cells[j]
            for i, text, p in col_strings:
                out[i] = f'{ref}{rows[i]}" s="{p}" t="s"><v>{table[text]}</v></c>'

    def _write_optimized_sheet_data(self) -> None:
        """xlsxwriter's copy of a constant_memory sheet's streamed rows into the sheet's XML file, as bytes: its
        copy decodes and encodes every 64 kB as text (0.28 s of the 1 GB GPU pair's 380 MB of rows). Reading as
        text turns "\r\n" and "\r" into "\n" (universal newlines); the copy does the same."""
        src, out = self.row_data_fh, self.fh
        if self.dim_rowmin is None or not _BINARY_TEXT or not hasattr(src, "buffer") or not hasattr(out, "buffer"):
            super()._write_optimized_sheet_data()
            return
        self._xml_start_tag("sheetData")
        src.flush()
        raw = src.buffer
        raw.seek(0)
        out.flush()
        sink = out.buffer
        carry = b""
        while chunk := raw.read(_COPY_CHUNK):
            if carry or b"\r" in chunk:
                chunk = carry + chunk
                carry = b"\r" if chunk.endswith(b"\r") else b""  # its "\n" may open the next chunk
                if carry:
                    chunk = chunk[:-1]
                chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            sink.write(chunk)
        if carry:
            sink.write(b"\n")
        src.close()
        os.unlink(self.row_data_filename)
        self._xml_end_tag("sheetData")

    def _fast_rows(self) -> bool:
        """Whether ``_write_rows`` may write block rows in one go: no comments, and no row of a block carries
        attributes (row 1's height for a wrapped caption is written as xlsxwriter writes it)."""
        if not self._blocks or self.comments or self.default_row_height != self.original_row_height:
            return False
        return not any(b.first_row <= r < b.first_row + b.nrows for r in self.row_info for b in self._blocks)

    def _calculate_spans(self) -> None:
        # xlsxwriter's, per row from the cells' column keys instead of a test of every column of every row
        if not self._fast_rows():
            super()._calculate_spans()
            return
        # a block's rows have the cells 0 and its last (table entries _BlockRow, _COVERED): their spans come per
        # block, and only the other rows are looked at (~0.8 us a row: 10 of the 100 MB NPU pair's 330 ms)
        table = self.table
        lo_hi: dict[int, tuple[int, int]] = {}
        for b in self._blocks:
            last = len(b.values) - 1
            for g in range(b.first_row >> 4, ((b.first_row + b.nrows - 1) >> 4) + 1):
                cur = lo_hi.get(g)
                lo_hi[g] = (0, last) if cur is None else (min(cur[0], 0), max(cur[1], last))
        in_blocks = set(chain.from_iterable(range(b.first_row, b.first_row + b.nrows) for b in self._blocks))
        for row in table.keys() - in_blocks:
            cells = table[row]
            if cells and self.dim_rowmin <= row <= self.dim_rowmax:
                g, lo, hi = row >> 4, min(cells), max(cells)
                cur = lo_hi.get(g)
                lo_hi[g] = (lo, hi) if cur is None else (min(cur[0], lo), max(cur[1], hi))
        self.row_spans = {g: f"{lo + 1}:{hi + 1}" for g, (lo, hi) in lo_hi.items()}

    def _write_rows(self) -> None:
        """xlsxwriter's row loop, with each block's rows written in one go (its per-row and per-cell
        steps cost ~5 us a row, as much as rendering the row's cells)."""
        if not self._fast_rows():
            super()._write_rows()
            return
        self._calculate_spans()
        starts = {b.first_row: b for b in self._blocks}
        spans, table, fh = self.row_spans, self.table, self.fh
        row, end = self.dim_rowmin, self.dim_rowmax
        while row <= end:
            block = starts.get(row)
            if block is None or block.pending is None:
                cells, info = table.get(row), self.row_info.get(row)
                if cells:  # as xlsxwriter writes a row
                    self._write_row(row, spans.get(row >> 4), info)
                    for col in range(self.dim_colmin, self.dim_colmax + 1):
                        if col in cells:
                            self._write_cell(row, col, cells[col])
                    self._xml_end_tag("row")
                elif info is not None:
                    self._write_empty_row(row, spans.get(row >> 4), info)
                row += 1
                continue
            height = _ONE_LINE if row in self.one_line_rows else ""
            fh.write(block.resolve(*block.pending, [f'<row r="{r + 1}" spans="{spans[r >> 4]}"{height}>'
                                                    for r in range(row, row + block.nrows)]))
            block.pending = None
            row += block.nrows

    def _write_row(self, row: int, spans: str | None, row_info: Any = None, empty_row: bool = False) -> None:
        """xlsxwriter's ``<row>`` tag, with the one-line height of ``one_line_rows`` that it leaves out."""
        if row_info is not None or row not in self.one_line_rows:
            super()._write_row(row, spans, row_info, empty_row)
            return
        attributes: list[tuple[str, Any]] = [("r", row + 1)]
        if spans:
            attributes.append(("spans", spans))
        attributes += [("ht", _LINE_POINTS), ("customHeight", 1)]
        if self.excel_version == 2010:
            attributes.append(("x14ac:dyDescent", "0.25"))
        (self._xml_empty_tag_unencoded if empty_row else self._xml_start_tag_unencoded)("row", attributes)

    def _write_cell(self, row: int, col: int, cell: Any) -> None:
        cls = cell.__class__
        if cls is _BlockRow:
            block = cell.block
            if block.rows is None:
                block.rows = block.resolve(*block.pending).split(_ROW_SEP)
                block.pending = None
            self.fh.write(block.rows[cell.index])
            if cell.index == block.nrows - 1:
                block.rows = []
        elif cls is _Covered:
            return
        elif cls is _InlineText:
            style = str(cell.format._get_xf_index()) if cell.format else ""
            self.fh.write(f'<c r="{xl_col_to_name(col)}{row + 1}{self._inline(cell.string, style)}')
        else:
            super()._write_cell(row, col, cell)

    def _write_string(self, row: int, col: int, string: str, cell_format: Any = None) -> int:
        # xlsxwriter writes a string that looks like "<r>...</r>" as raw rich-text XML, so profile
        # text could inject markup (even a formula). Such text is written as an escaped inline string.
        if not _is_rich(string):
            rc = super()._write_string(row, col, string, cell_format)
            if rc != -1:  # -2: written cut to Excel's limit
                self._keep(row, col, string if rc == 0 else _utf16_truncate(string, _STR_MAX))
            return rc
        if len(string) > _STR_FAST_MAX and _utf16_len(string) > _STR_MAX:
            string = _utf16_truncate(string, _STR_MAX)
        if self._check_dimensions(row, col):
            return -1
        self._keep(row, col, string)
        if self.constant_memory and row > self.previous_row:
            self._write_single_row(row)
        self.table[row][col] = _InlineText(string, cell_format)
        self._has_inline = True
        return 0

    def _get_range_data(self, row_start: int, col_start: int, row_end: int, col_end: int) -> Any:
        if self.constant_memory and self._chart_cells is not None:
            return self._kept_range_data(row_start, col_start, row_end, col_end)
        if self.constant_memory or not (self._blocks or self._has_inline):
            return super()._get_range_data(row_start, col_start, row_end, col_end)
        data: list = []
        for row in range(row_start, row_end + 1):
            cells = self.table.get(row)
            first = cells.get(0) if cells else None
            if first.__class__ is _BlockRow:
                data.extend(first.block.chart_value(row, c) for c in range(col_start, col_end + 1))
            elif cells and any(x.__class__ is _InlineText for x in cells.values()):
                for c in range(col_start, col_end + 1):
                    x = cells.get(c)
                    data.append(x.string if x.__class__ is _InlineText else
                                super()._get_range_data(row, c, row, c)[0] if x is not None else None)
            else:
                data.extend(super()._get_range_data(row, col_start, row, col_end))
        return data

    def _kept_range_data(self, row_start: int, col_start: int, row_end: int, col_end: int) -> list:
        """``_get_range_data`` of the default mode, from what ``keep_chart_data`` kept: None for a row
        without cells, per cell its number text, string, "" (a formatted blank) or None (no cell)."""
        data: list = []
        for row in range(row_start, row_end + 1):
            block = next((b for b in self._chart_blocks if b.first_row <= row < b.first_row + b.nrows), None)
            if block is not None:
                data.extend(block.chart_value(row, c) for c in range(col_start, col_end + 1))
                continue
            cells = self._chart_cells.get(row)
            if cells is None:
                data.append(None)
            else:
                data.extend(cells.get(c) for c in range(col_start, col_end + 1))
        return data


#: The smallest scale a comparator sheet prints at: its 11-point cells at 7.7 points. A sheet that one page wide
#: would print smaller prints several pages wide instead (`_print_across`).
MIN_PRINT_SCALE = 0.70
#: Margins in inches of every printed sheet (`page_frame`): narrow sides, so a table prints 9 % larger than at
#: Excel's 0.7 in.
_MARGINS = {"left": 0.3, "right": 0.3, "top": 0.5, "bottom": 0.6}
#: Printable width and height of a landscape page within `_MARGINS`, in points at 100 %: US Letter (11 x 8.5 in).
#: The paper is left to the printer; Letter is the narrower of Letter and A4 landscape, so on A4 the same pages
#: print a little larger.
PRINTABLE_POINTS = (11 - _MARGINS["left"] - _MARGINS["right"]) * 72
PRINTABLE_HEIGHT_POINTS = (8.5 - _MARGINS["top"] - _MARGINS["bottom"]) * 72


#: Widest run of frozen name columns: ModuleCompareStatistic's five (785 px) leave about 500 px of figures in view
#: on a 1366-px laptop screen; wider, a narrow window could scroll no figure into view.
FROZEN_NAMES_MAX_PIXELS = 800


def column_pixels(width: float) -> float:
    """Width in pixels of a column ``width`` characters wide, as Excel sizes it at Calibri 11: 7w + 5."""
    return width * 7 + 5


def column_points(width: float) -> float:
    """Printed width of a column of ``width`` characters at 100 % (`column_pixels`, 3/4 pt each)."""
    return column_pixels(width) * 0.75


def page_frame(ws: Worksheet) -> None:
    """What every printed sheet shares (the comparator sheets' `_print_setup`, the Summary's layout in
    report/charts.py): landscape, `_MARGINS`, and a footer naming the sheet and the page, for a loose page."""
    ws.set_landscape()
    ws.set_margins(**_MARGINS)
    ws.set_footer("&L&A&RPage &P of &N")


#: How much wider than Excel's a renderer may lay out the columns: LibreOffice sizes a column by the digit of the
#: font it has for Calibri, DejaVu Sans where neither Calibri nor Carlito is installed (4/3 as wide).
_RENDER_WIDTHS = (1.0, 4 / 3)
#: Percents below the largest fitting scale that a renderer may print at: LibreOffice prints 2 % smaller where
#: that saves a page down (tdf#103516); one more for rounding.
_SCALE_SLACK = 3


def _print_across(sheet: Sheet) -> tuple[int, int]:
    """Pages across and identifying columns to repeat on each page, for printing ``sheet`` at
    `MIN_PRINT_SCALE` or larger: (1, 0) where one page wide is that large (``_page_breaks``)."""
    breaks, key = _page_breaks(sheet)
    return 1 + len(breaks), key


def caption_range(sheet: Sheet, first: int, last: int) -> tuple[int, int]:
    """The columns a half's caption (its half: ``first`` to ``last``) is merged over: the half, or where the sheet
    prints several pages across and a page break may fall inside the half, its widest run of columns that no such
    break splits (the first of equals). Fitted to N pages across, Excel and LibreOffice choose the scale and break
    where it leaves them (both ignore a break set by hand under fit-to-pages), most often inside the comparison
    half, whose caption merged over the half then printed cut in two ("...msinsight/" at one page's edge,
    "test/data/..." on the next); where they break depends on the renderer's font (`_fitted_breaks`). The half's
    other row-1 cells keep the caption's fill."""
    pages, key = _print_across(sheet)
    if pages == 1 or last == first:
        return first, last
    widths = [column_points(c.width) for c in sheet.columns]
    starts = [first, *sorted(j for j in _fitted_breaks(widths, key, pages) if first < j <= last), last + 1]
    runs = [(a, b - 1) for a, b in zip(starts[:-1], starts[1:], strict=True)]
    return max(runs, key=lambda run: (sum(widths[run[0]:run[1] + 1]), -run[0]))


def _fitted_breaks(widths: list[float], key: int, pages: int) -> set[int]:
    """The columns that may start a page of columns ``widths`` (points at 100 %, the first ``key`` repeated on
    each page) fitted to ``pages`` across: for each of `_RENDER_WIDTHS`, at the largest whole percent up to 100
    at which ``pages`` hold them, and down to `_SCALE_SLACK` percents less."""
    found: set[int] = set()
    for factor in _RENDER_WIDTHS:
        scaled = [w * factor for w in widths]
        fitting = next((pct for pct in range(100, 9, -1)
                        if len(_column_breaks(scaled, key, PRINTABLE_POINTS * 100 / pct)) < pages), 10)
        for pct in range(fitting, max(9, fitting - _SCALE_SLACK - 1), -1):
            found.update(_column_breaks(scaled, key, PRINTABLE_POINTS * 100 / pct))
    return found


def _column_breaks(widths: list[float], key: int, room: float) -> list[int]:
    """The columns that start each page after the first, breaking columns ``widths`` as Excel and LibreOffice do:
    whole columns left to right on pages of ``room``, each after the first starting with the first ``key``."""
    repeated = sum(widths[:key])
    breaks: list[int] = []
    used = 0.0
    for j, w in enumerate(widths):
        if used + w > room and used > (repeated if breaks else 0.0):
            breaks.append(j)
            used = repeated
        used += w
    return breaks


def _page_breaks(sheet: Sheet) -> tuple[list[int], int]:
    """The columns that start each printed page after the first, and how many identifying columns each of those
    repeats first. One page wide printed the module
    sheets (1,958-1,980 pt of columns on 749 pt) at 38 %, 4-point text, and most other comparator sheets at
    46-57 %. Wider sheets print over several pages, each starting with the columns that name a row: those left
    of the base half (order, module, kernel or API name), so a figure is never on a page without its row's key.
    Not the base half's own first column, though it names an operator or communication op: its row-1 cell is
    where the merged base caption starts, and repeated it printed a cut "Base Profiling: <path>" against the rest
    of the comparison caption on every following page, reading as if the comparison's path were the base's (a
    comparison-only row has no base name anyway: Order Id is the key). The pages are counted as Excel and
    LibreOffice break them, whole columns left to right; where the name columns would leave no room for the
    widest other column, none repeat."""
    widths = [column_points(c.width) for c in sheet.columns]
    room = PRINTABLE_POINTS / MIN_PRINT_SCALE
    if sum(widths) <= room:
        return [], 0
    key = sheet.base_span[0]
    if sum(widths[:key]) + max(widths[key:], default=0.0) > room:
        key = 0
    return _column_breaks(widths, key, room), key


def _note_columns(sheet: Sheet) -> tuple[int, int]:
    """The columns row 2's note is laid over: those of the first printed page (``_page_breaks``) that are not
    repeated on the next ones. Written in column A, a repeated column, it printed cut at A's edge on every page
    after the first ("Job (slowe"); running on past the first page's columns, it was cut at the page's edge."""
    breaks, key = _page_breaks(sheet)
    if not breaks:
        return 0, len(sheet.columns) - 1
    return key, max(key, breaks[0] - 1)


def _print_setup(ws: Worksheet, sheet: Sheet, nrows: int) -> None:
    """Print a comparator table landscape, with its captions and headers atop every page.
    Without a page setup LibreOffice printed the bert pair's 171-row ModuleCompareStatistic on 37 portrait pages
    of three columns each, most without the header row or the module name their figures belong to. A table
    prints one page wide where that keeps `MIN_PRINT_SCALE`, else as many pages wide as `_print_across` counts,
    its name columns repeated on each and the pages of a band of rows one after another ("over, then down"), so
    a row's figures are on consecutive pages. The print area is the table: the chart beside it (report/charts.py)
    would shrink the table to a third of its size. The footer names the sheet and the page."""
    ncols = len(sheet.columns)
    page_frame(ws)
    ws.repeat_rows(0, HEADER_ROWS - 1)
    ws.print_area(0, 0, HEADER_ROWS - 1 + nrows, ncols - 1)
    pages, key = _print_across(sheet)
    ws.fit_to_pages(pages, 0)
    if pages > 1:
        if key:
            ws.repeat_columns(0, key - 1)
        ws.print_across()


def _draw_charts(wb: xlsxwriter.Workbook, ws: Any, sheet: Sheet) -> None:
    """Hand the sheet to the chart module (it logs and skips its own failures). Imported here: it imports this
    module's styles, and is always shipped (no optional dependency of its own)."""
    from .charts import draw_charts

    draw_charts(wb, ws, sheet)


def _write_cell(ws: Worksheet, r: int, c: int, v: Any, fmt: Format | None, red: Format | None) -> None:
    """Write one value: text always as a string, NaN/None/"" as a styled blank, +inf as 'INF'."""
    if v is None:
        ws.write_blank(r, c, None, fmt)
        return
    if isinstance(v, str):
        if v == "":
            ws.write_blank(r, c, None, fmt)
        elif red is not None and v.strip().upper() == "INF":
            ws.write_string(r, c, "INF", red)
        else:
            ws.write_string(r, c, v, fmt)
        return
    if isinstance(v, numbers.Number) and not isinstance(v, complex):
        if isinstance(v, bool):
            ws.write_boolean(r, c, v, fmt)
            return
        f = float(v)
        if math.isnan(f):
            ws.write_blank(r, c, None, fmt)
        elif math.isinf(f):
            ws.write_string(r, c, "INF" if f > 0 else "-INF", red if red is not None and f > 0 else fmt)
        elif red is not None and f > 1:
            ws.write_number(r, c, f, red)
        else:
            ws.write_number(r, c, f, fmt)
        return
    if v is pd.NA or v is pd.NaT:
        ws.write_blank(r, c, None, fmt)
        return
    ws.write_string(r, c, str(v), fmt)
