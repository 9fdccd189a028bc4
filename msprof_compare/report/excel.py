"""The xlsx reporter: ``performance_comparison_result_<UTC>.xlsx``.

Layout follows reference-2 §8 (row 1 merged base/comparison captions, row 2
empty, row 3 headers, data from row 4; Arial 11, thin borders, per-column
number formats, the red "worse" rule, blue row styles on OverallMetrics).
Where we differ on purpose (see docs/differences.md): header rows are frozen,
every text cell is written as a string (never a formula), the file is written
under a temporary name and published without ever replacing an existing file,
and no workbook is written when there is no sheet at all.
"""

from __future__ import annotations

import logging
import math
import numbers
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pandas as pd
import xlsxwriter

from ..compare.table import RATIO_HEADERS, STYLE_BOLD, STYLE_FLOAT, STYLE_INT, STYLE_RATIO, Sheet
from ..errors import ProfileError, UsageError

if TYPE_CHECKING:
    from ..api import CompareResult

log = logging.getLogger("msprof-analyze")

FILE_PREFIX = "performance_comparison_result_"
FILE_MODE = 0o640
DIR_MODE = 0o750
#: Excel's hard row limit; rows beyond it cannot be stored.
MAX_ROWS = 1_048_576
#: Above this many data rows in one sheet, stream rows to disk (xlsxwriter constant_memory).
CONSTANT_MEMORY_ROWS = 100_000
HEADER_ROWS = 3
_INF = math.inf

_BASE = {"font_name": "Arial", "font_size": 11, "align": "left", "valign": "vcenter", "border": 1}
_NUM_FORMATS = {STYLE_INT: "#,##0", STYLE_FLOAT: "#,##0.00", STYLE_RATIO: "0.00%"}
_FILLS = {"blue": "#00BFFF", "light_blue": "#87CEFA", "red": "#FF0000", "green": "#00FF00", "yellow": "#FFFF00"}


# --------------------------------------------------------------------------- target paths


def default_file_name(now: datetime | None = None) -> str:
    """``performance_comparison_result_{UTC %Y%m%d%H%M%S}.xlsx`` as the original names it."""
    now = now or datetime.now(timezone.utc)
    return f"{FILE_PREFIX}{now.strftime('%Y%m%d%H%M%S')}.xlsx"


def resolve_target(target: str | os.PathLike = ".") -> tuple[str, str | None]:
    """Validate an output target without creating anything.

    Returns ``(directory, file name or None)``: a target ending in ``.xlsx`` that
    is not an existing directory names the file; anything else is a directory.
    Raises ``UsageError`` for a target that can never be written (a symlink, a
    file where a directory is needed, no write permission).
    """
    raw = os.fspath(target) or "."
    path = os.path.abspath(os.path.expanduser(raw))
    name: str | None = None
    if path.lower().endswith(".xlsx") and not os.path.isdir(path):
        path, name = os.path.dirname(path), os.path.basename(path)
        if os.path.islink(os.path.join(path, name)):
            raise UsageError(f"output file {raw} is a symbolic link; refusing to write through it")
    if os.path.islink(path):
        raise UsageError(f"output path {raw} is a symbolic link; refusing to write through it")
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise UsageError(f"output path {raw} is a file, not a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise UsageError(f"output directory {raw} is not writable")
        return path, name
    # Missing: it will be created; the nearest existing ancestor must allow that.
    parent = os.path.dirname(path)
    while parent and not os.path.exists(parent):
        nxt = os.path.dirname(parent)
        if nxt == parent:
            break
        parent = nxt
    if not os.path.isdir(parent):
        raise UsageError(f"cannot create output directory {raw}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot create output directory {raw}: {parent} is not writable")
    return path, name


def _make_dir(path: str) -> None:
    """Create a missing output directory (and parents) with mode 0o750."""
    if os.path.isdir(path):
        return
    missing = []
    p = path
    while p and not os.path.exists(p):
        missing.append(p)
        p = os.path.dirname(p)
    try:
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        for d in missing:
            os.chmod(d, DIR_MODE)
    except OSError as exc:
        raise ProfileError(path, f"cannot create output directory: {exc.strerror or exc}") from None


def _publish(tmp: str, directory: str, name: str) -> str:
    """Give the finished temporary file its final name without replacing any existing file.

    A hard link fails atomically when the name exists, so a concurrent writer can
    never be clobbered; filesystems without hard links fall back to a checked rename.
    """
    stem, ext = os.path.splitext(name)
    for i in range(10_000):
        final = os.path.join(directory, name if i == 0 else f"{stem}_{i}{ext}")
        try:
            os.link(tmp, final)
            return final
        except FileExistsError:
            continue
        except OSError:
            if os.path.lexists(final):
                continue
            os.replace(tmp, final)
            return final
    raise ProfileError(directory, f"too many existing files named {stem}_N{ext}")


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into SystemExit while writing so ``finally`` removes the temp file."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def handler(signum, _frame):
        raise SystemExit(128 + signum)

    for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        try:
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):
            pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# --------------------------------------------------------------------------- workbook


def write_workbook(result: CompareResult, target: str | os.PathLike = ".") -> str:
    """Write ``result.sheets`` to a new workbook in ``target`` (a directory or an ``.xlsx`` path).

    Returns the absolute path written, or "" when there was no sheet to write.
    Never replaces an existing file (a ``_1``, ``_2``... suffix is added) and
    never leaves a partial workbook behind.
    """
    sheets = [s for s in result.sheets if len(s)]
    if not sheets:
        log.warning("No comparison produced any rows; no workbook was written.")
        return ""
    directory, name = resolve_target(target)
    _make_dir(directory)
    name = name or default_file_name()
    captions = (f"Base Profiling: {result.base.path}", f"Comparison Profiling: {result.comparison.path}")
    tmp = ""
    try:
        with _terminate_as_exit():
            fd, tmp = tempfile.mkstemp(prefix=f".{FILE_PREFIX}", suffix=".xlsx.tmp", dir=directory)
            os.close(fd)
            render(sheets, tmp, captions)
            os.chmod(tmp, FILE_MODE)
            final = _publish(tmp, directory, name)
    except OSError as exc:
        raise ProfileError(directory, f"cannot write the workbook: {exc.strerror or exc}") from None
    finally:
        if tmp:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
    return final


def render(sheets: list[Sheet], filename: str, captions: tuple[str, str]) -> None:
    """Render sheets into ``filename`` (overwritten): the layout part, no path policy."""
    big = any(len(s) > CONSTANT_MEMORY_ROWS for s in sheets)
    wb = xlsxwriter.Workbook(filename, {
        # Small workbooks are assembled in memory (no per-part temp files: ~2x faster close);
        # huge sheets stream rows through temp files instead (the two modes exclude each other).
        "constant_memory": big,
        "in_memory": not big,
        "strings_to_formulas": False,
        "strings_to_numbers": False,
        "strings_to_urls": False,
    })
    try:
        styles = _Styles(wb)
        for sheet in sheets:
            _write_sheet(wb, styles, sheet, captions)
    finally:
        wb.close()


class _Styles:
    """Formats created on demand and shared by all sheets of one workbook."""

    def __init__(self, wb: xlsxwriter.Workbook) -> None:
        self.wb = wb
        self.cache: dict[tuple, Any] = {}

    def get(self, style: str = "", fill: str = "", bold: bool = False, indent: int = 0, num: bool = True):
        key = (style, fill, bold, indent, num)
        fmt = self.cache.get(key)
        if fmt is None:
            props = dict(_BASE)
            if num and style in _NUM_FORMATS:
                props["num_format"] = _NUM_FORMATS[style]
            if bold or style == STYLE_BOLD:
                props["bold"] = True
            if fill:
                props["pattern"] = 1
                props["bg_color"] = _FILLS[fill]
            if indent:
                props["indent"] = indent
            fmt = self.cache[key] = self.wb.add_format(props)
        return fmt


def _leading_tabs(text: Any) -> int:
    if not isinstance(text, str):
        return 0
    return len(text) - len(text.lstrip("\t"))


def _write_sheet(wb: xlsxwriter.Workbook, styles: _Styles, sheet: Sheet, captions: tuple[str, str]) -> None:
    ws = wb.add_worksheet(sheet.name)
    columns = sheet.columns
    ncols = len(columns)
    if sheet.data.shape[1] != ncols:
        raise ValueError(f"sheet {sheet.name}: {sheet.data.shape[1]} data columns for {ncols} headers")
    for j, col in enumerate(columns):
        ws.set_column(j, j, col.width)

    # Row 1: the two captions; row 2 empty; row 3 headers.
    spans = ((sheet.base_span, captions[0], "green"), (sheet.comparison_span, captions[1], "yellow"))
    for (first, last), text, fill in spans:
        fmt = styles.get(fill=fill, bold=True, num=False)
        if last > first:
            ws.merge_range(0, first, 0, last, "", fmt)
        ws.write_string(0, first, text, fmt)
    cmp_first, cmp_last = sheet.comparison_span
    for j, col in enumerate(columns):
        fill = "yellow" if cmp_first <= j <= cmp_last else "green"
        ws.write_string(2, j, col.header, styles.get(fill=fill, bold=True, num=False))
    ws.freeze_panes(HEADER_ROWS, 0)

    nrows = len(sheet)
    limit = MAX_ROWS - HEADER_ROWS
    if nrows > limit:
        log.warning("Sheet %s has %d rows; Excel holds at most %d, the rest are not written.",
                    sheet.name, nrows, limit)
        nrows = limit

    values = [sheet.data.iloc[:nrows, j].tolist() for j in range(ncols)]
    is_ratio = [c.header in RATIO_HEADERS for c in columns]
    row_styles = sheet.row_styles
    plain = [styles.get(c.style) for c in columns]
    plain_red = styles.get(STYLE_RATIO, fill="red")
    if row_styles:
        for i in range(nrows):
            r = i + HEADER_ROWS
            fill = row_styles[i] if i < len(row_styles) else ""
            for j in range(ncols):
                v = values[j][i]
                indent = _leading_tabs(v) if j == 0 else 0
                fmt = styles.get(columns[j].style, fill=fill, indent=indent) if fill or j == 0 else plain[j]
                _write_cell(ws, r, j, v, fmt, plain_red if is_ratio[j] else None)
    else:
        _write_plain_rows(ws, values, nrows, plain, [plain_red if x else None for x in is_ratio])
    _draw_charts(wb, ws, sheet)


def _write_plain_rows(ws: Any, values: list[list], nrows: int, fmts: list, reds: list) -> None:
    """The rows of a sheet without row styles: ``_write_cell`` with the common types inlined.

    Big sheets have millions of cells; dispatching on the exact type of each value (str, float,
    int) skips the per-cell ABC checks. Anything else goes through ``_write_cell``. Rows are
    written in order, as constant_memory mode requires.
    """
    write_number, write_string, write_blank = ws.write_number, ws.write_string, ws.write_blank
    cols = list(enumerate(zip(values, fmts, reds, strict=True)))
    for i in range(nrows):
        r = i + HEADER_ROWS
        for c, (column, fmt, red) in cols:
            v = column[i]
            t = type(v)
            if t is float:
                if v != v:
                    write_blank(r, c, None, fmt)
                elif v == _INF or v == -_INF:
                    write_string(r, c, "INF" if v > 0 else "-INF", red if red is not None and v > 0 else fmt)
                elif red is not None and v > 1:
                    write_number(r, c, v, red)
                else:
                    write_number(r, c, v, fmt)
            elif t is str and v and red is None:
                write_string(r, c, v, fmt)
            elif v is None:
                write_blank(r, c, None, fmt)
            elif t is int and red is None:
                write_number(r, c, float(v), fmt)
            else:
                _write_cell(ws, r, c, v, fmt, red)


def _draw_charts(wb: xlsxwriter.Workbook, ws: Any, sheet: Sheet) -> None:
    """Hand the sheet to the optional chart module (it logs and skips its own failures)."""
    try:
        from .charts import draw_charts
    except ImportError:
        return
    draw_charts(wb, ws, sheet)


def _write_cell(ws, r: int, c: int, v: Any, fmt, red) -> None:
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
