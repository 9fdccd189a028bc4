#!/usr/bin/env python3
"""Check that LibreOffice reads a result workbook cell for cell as we wrote it.

Why: a PDF from ``soffice --convert-to pdf`` (tools/render_workbook.sh) proves only that LibreOffice opened
the file. A cell it drops or misreads (an inline string, a number format, a boolean, an escaped control
character, a very long text, a formula without a cached value) or shows as an error would pass. This tool has
LibreOffice (headless, a private profile) export every sheet to CSV twice, raw values and "as shown" text,
and compares them with what openpyxl reads from the same file: sheet names and order, the used range, every
value (numbers to a relative 6e-15, what LibreOffice's 15 significant digits resolve; text identical, text
cells quoted and number cells not, so a text read as a number is caught; empty = empty). It scans the
as-shown text for error and overflow markers (``Err:502``, ``#VALUE!``, ``###``), and converts the
workbook to PDF, as the render script does, failing when none appears.

    python tools/libreoffice_check.py OUT.xlsx [MORE.xlsx ...]

Prints one line per problem (workbook, sheet!cell, ours vs LibreOffice's) and a summary line on stderr.
Exit 0: no problem; 1: a problem; 2: bad usage, a missing file, no ``soffice`` on PATH, or no openpyxl (the test extra)
(``apt-get install libreoffice-calc``; the CSV options need LibreOffice 7.2 or later).
Cost: about 2-4 s per workbook for the three LibreOffice passes (each starts LibreOffice once for all the
workbooks given), plus openpyxl's read.

Known LibreOffice behaviour the comparison allows for, not a problem in the workbook:
- a raw CSV export still applies a percent format ("6.49706431733858%"): read back as value / 100;
- OOXML string escapes (``_x000D_``, ``_x005F_``) are decoded on our side as LibreOffice and Excel decode
  them (openpyxl leaves most of them escaped);
- Calc keeps a line break in a cell as LF: a CRLF or a lone CR in our text (torch call stacks end lines with
  CRLF) reads as LF, so our text is compared with its line ends made LF. Excel keeps the CR.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell as cell_name  # A1 name of a zero-based (row, col)

CSV_FILTER = "Text - txt - csv (StarCalc)"
# The CSV filter's tokens: separator 44 (","), text delimiter 34 ('"'), charset 76 (UTF-8), first line 1, cell
# formats (import only), language 0, quote all text cells, detect special numbers (import only), save cell
# contents as shown, export formulas, remove spaces, sheet: -1 writes every sheet to NAME-SheetName.csv.
RAW_OPTIONS = "44,34,76,1,,0,true,true,false,false,false,-1"
SHOWN_OPTIONS = "44,34,76,1,,0,true,true,true,false,false,-1"
# LibreOffice writes 15 significant digits: a double reads back within half a unit of the 15th, 5e-15 of it
# (4.99e-15 the most seen over 25 real workbooks), plus an ulp or two for a percent's division by 100.
REL_TOL = 6e-15
# What Calc shows instead of a value: its own error codes, Excel's error literals, a number too wide for its
# column ("###" in the PDF; a CSV export ignores widths, so there it would mean a format gone wrong).
_ERROR_RE = re.compile(r"^(Err:\d{3}|#(VALUE|NAME\?|REF|DIV/0|NUM|N/A|NULL)!?|#{3,})$")
_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_WRITING = re.compile(r"^Writing sheet (.*) -> (.*)$")


@dataclass(frozen=True)
class Field:
    """One CSV field as LibreOffice wrote it: its text and whether it was quoted (a text cell)."""

    text: str
    quoted: bool


def parse_csv(text: str) -> list[list[Field]]:
    """LibreOffice's CSV as rows of fields, keeping whether each field was quoted (the csv module drops that).

    A quoted field keeps its line breaks and carriage returns; outside quotes CRLF or LF ends a row."""
    if text.startswith("\ufeff"):
        text = text[1:]
    rows: list[list[Field]] = []
    row: list[Field] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            j = i + 1
            parts = []
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise ValueError(f"unterminated quoted field at offset {i}")
                parts.append(text[j:k])
                if k + 1 < n and text[k + 1] == '"':
                    parts.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            row.append(Field("".join(parts), True))
        else:
            k = i
            while k < n and text[k] not in ',\r\n':
                k += 1
            row.append(Field(text[i:k], False))
            i = k
        if i >= n:
            break
        if text[i] == ",":
            i += 1
            if i == n:
                row.append(Field("", False))
            continue
        if text.startswith("\r\n", i):
            i += 2
        elif text[i] in "\r\n":
            i += 1
        else:
            raise ValueError(f"unexpected {text[i]!r} after a field at offset {i}")
        rows.append(row)
        row = []
    if row:
        rows.append(row)
    return rows


def decode_ooxml(text: str) -> str:
    """A cell text with its OOXML ``_xHHHH_`` escapes decoded, as Excel and LibreOffice read it."""
    if "_x" not in text:
        return text
    return _OOXML_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def calc_text(text: str) -> str:
    """Our text as Calc holds it: each CRLF and lone CR a LF (see the module's notes)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def used_range(cells: list[list[Any]]) -> tuple[int, int]:
    """(rows, columns) up to the last non-empty cell: what a CSV export spans."""
    nrows = ncols = 0
    for r, row in enumerate(cells):
        for c in range(len(row) - 1, -1, -1):
            if row[c] is not None and row[c] != "":
                nrows = r + 1
                ncols = max(ncols, c + 1)
                break
    return nrows, ncols


def _show(value: Any) -> str:
    if value is None or value == "":
        return "empty"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return f"text {text!r}"
    return f"{type(value).__name__} {value!r}"


def _lo_number(text: str) -> float | None:
    """The number a raw CSV field holds (a percent format is kept even raw), None when it is not one."""
    s = text.strip()
    scale = 1.0
    if s.endswith("%"):
        s, scale = s[:-1], 100.0
    try:
        return float(s) / scale
    except ValueError:
        return None


def _value_problem(ours: Any, raw: Field) -> str | None:
    """Why LibreOffice's raw field differs from our cell, or None when it matches."""
    if ours is None or ours == "":
        return None if raw.text == "" else f"ours empty, LibreOffice's {'text' if raw.quoted else 'value'} " \
            f"{raw.text[:60]!r}"
    if isinstance(ours, bool):
        want = "TRUE" if ours else "FALSE"
        if raw.quoted or raw.text != want:
            return f"ours {_show(ours)}, LibreOffice's {'text' if raw.quoted else 'value'} {raw.text[:60]!r}"
        return None
    if isinstance(ours, (int, float)):
        got = None if raw.quoted else _lo_number(raw.text)
        if got is None or not math.isclose(got, float(ours), rel_tol=REL_TOL, abs_tol=0.0):
            kind = "text" if raw.quoted else "value"
            return f"ours {_show(ours)}, LibreOffice's {kind} {raw.text[:60]!r}"
        return None
    text = calc_text(ours if isinstance(ours, str) else str(ours))
    label = _show(text) if isinstance(ours, str) else _show(ours)  # a datetime: a date format we never write
    if not raw.quoted:
        return f"ours {label}, LibreOffice reads a value {raw.text[:60]!r}" if raw.text else \
            f"ours {label}, LibreOffice's empty"
    if raw.text != text:
        pairs = zip(text, raw.text, strict=False)
        at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(text), len(raw.text)))
        return (f"ours {label} ({len(text)} chars), LibreOffice's {_show(raw.text)} ({len(raw.text)} chars),"
                f" first difference at char {at}")
    return None


def compare_sheet(workbook: str, sheet: str, ours: list[list[Any]], raw_csv: str,
                  shown_csv: str | None = None) -> list[str]:
    """Problems between our cells (rows of openpyxl values, text decoded) and LibreOffice's CSV exports.

    ``raw_csv`` holds the raw values, ``shown_csv`` (optional) the as-shown text of the same sheet."""
    where = f"{workbook}: {sheet}"
    problems: list[str] = []
    raw = parse_csv(raw_csv)
    shown = parse_csv(shown_csv) if shown_csv is not None else None
    nrows, ncols = used_range(ours)
    lo_cols = max((len(r) for r in raw), default=0)
    if (len(raw), lo_cols) != (nrows, ncols):
        problems.append(f"{where}: used range ours {nrows} rows x {ncols} columns, LibreOffice's {len(raw)} x "
                        f"{lo_cols}")
    for r in range(max(nrows, len(raw))):
        our_row = ours[r] if r < len(ours) else []
        lo_row = raw[r] if r < len(raw) else []
        for c in range(max(ncols, len(lo_row))):
            value = our_row[c] if c < len(our_row) else None
            field = lo_row[c] if c < len(lo_row) else Field("", False)
            why = _value_problem(value, field)
            if why is not None:
                problems.append(f"{where}!{cell_name(r, c)}: {why}")
    if shown is None:
        return problems
    if len(shown) != len(raw) or any(len(a) != len(b) for a, b in zip(shown, raw, strict=True)):
        problems.append(f"{where}: the as-shown export's shape differs from the raw one")
    for r, lo_row in enumerate(shown):
        our_row = ours[r] if r < len(ours) else []
        for c, field in enumerate(lo_row):
            value = our_row[c] if c < len(our_row) else None
            if _ERROR_RE.match(field.text.strip()) and value != field.text:
                problems.append(f"{where}!{cell_name(r, c)}: ours {_show(value)}, LibreOffice shows "
                                f"{field.text!r}")
            elif isinstance(value, str) and value and field.text != calc_text(value):
                problems.append(f"{where}!{cell_name(r, c)}: ours {_show(value)}, LibreOffice shows "
                                f"{_show(field.text)}")
    return problems


@contextlib.contextmanager
def _raw_shared_strings() -> Iterator[None]:
    """Make openpyxl keep shared strings as stored, so ``decode_ooxml`` sees every escape once.

    openpyxl removes each "x005F_" from a shared string (so "_x005F_x000D_", a literal "_x000D_", becomes an
    escape it never decodes) and leaves inline strings as stored; decoding both ourselves treats them alike."""
    from openpyxl.cell.text import Text
    from openpyxl.reader import excel
    from openpyxl.xml.constants import SHEET_MAIN_NS
    from openpyxl.xml.functions import iterparse

    def read_string_table(xml_source: Any) -> list[str]:
        strings = []
        tag = f"{{{SHEET_MAIN_NS}}}si"
        for _, node in iterparse(xml_source):
            if node.tag == tag:
                strings.append(Text.from_tree(node).content)
                node.clear()
        return strings

    saved = excel.read_string_table
    excel.read_string_table = read_string_table
    try:
        yield
    finally:
        excel.read_string_table = saved


def read_ours(path: str) -> tuple[list[str], dict[str, list[list[Any]]], list[str]]:
    """(sheet names in order, each sheet's cell values, problems seen on our side) as openpyxl reads them.

    A formula cell stands for its cached value (LibreOffice does not recalculate an xlsx on load by
    default); a formula without one is a problem."""
    import openpyxl

    with _raw_shared_strings():
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
        # a second read, for the formulas, only when a sheet has one (ours have none: it halves the cost)
        formulas = openpyxl.load_workbook(path, read_only=True, data_only=False) if _has_formulas(path) else None
    problems: list[str] = []
    sheets: dict[str, list[list[Any]]] = {}
    try:
        for i, ws in enumerate(wb.worksheets):
            frows = formulas.worksheets[i].iter_rows(values_only=True) if formulas is not None else None
            rows: list[list[Any]] = []
            for row in ws.iter_rows(values_only=True):
                values = [decode_ooxml(v) if isinstance(v, str) else v for v in row]
                for c, f in enumerate(next(frows) if frows is not None else ()):
                    if isinstance(f, str) and f.startswith("=") and values[c] is None:
                        problems.append(f"{path}: {ws.title}!{cell_name(len(rows), c)}: formula {f[:60]!r} "
                                        "without a cached value")
                rows.append(values)
            sheets[ws.title] = rows
        names = list(wb.sheetnames)
    finally:
        wb.close()
        if formulas is not None:
            formulas.close()
    return names, sheets, problems


def _has_formulas(path: str) -> bool:
    """Whether any worksheet part holds a formula element (``<f>`` or ``<f ...>``)."""
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/") and name.endswith(".xml"):
                data = z.read(name)
                if b"<f>" in data or b"<f " in data:
                    return True
    return False


def _soffice(args: list[str], profile: str, timeout: float) -> str:
    """Run LibreOffice headless with a private profile; its stdout (it names each CSV it writes there)."""
    cmd = ["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{profile}", *args]
    # The soffice script starts soffice.bin, which holds our pipes: on a timeout the whole session is killed,
    # or reading the pipes would wait for LibreOffice to finish anyway.
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          start_new_session=True) as proc:
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, _ = proc.communicate()
            print(f"warning: LibreOffice ran past {timeout:.0f} s and was stopped", file=sys.stderr)
    return stdout


def export(workbooks: list[str], tmp: Path, timeout: float = 600.0) -> dict[str, dict[str, Any]]:
    """LibreOffice's raw CSV, as-shown CSV and PDF of each workbook, by workbook path.

    Each workbook is linked in as ``wN.xlsx`` so that equal file names in different folders do not collide; one
    LibreOffice start per pass serves all of them."""
    inputs = tmp / "in"
    inputs.mkdir()
    links = []
    for i, path in enumerate(workbooks):
        link = inputs / f"w{i}.xlsx"
        os.symlink(os.path.abspath(path), link)
        links.append(str(link))
    profile = str(tmp / "profile")
    out: dict[str, dict[str, Any]] = {p: {"raw": {}, "shown": {}, "pdf": None} for p in workbooks}
    stem_of = {f"w{i}": p for i, p in enumerate(workbooks)}
    for kind, options in (("raw", RAW_OPTIONS), ("shown", SHOWN_OPTIONS)):
        outdir = tmp / kind
        outdir.mkdir()
        stdout = _soffice(["--convert-to", f"csv:{CSV_FILTER}:{options}", "--outdir", str(outdir), *links],
                          profile, timeout)
        for line in stdout.splitlines():
            m = _WRITING.match(line.strip())
            if m is None:
                continue
            sheet, csv_path = m.group(1), Path(m.group(2))
            stem = csv_path.name[:-len(f"-{sheet}.csv")] if csv_path.name.endswith(f"-{sheet}.csv") else None
            if stem in stem_of and csv_path.is_file():
                out[stem_of[stem]][kind][sheet] = csv_path.read_text(encoding="utf-8")
    pdfdir = tmp / "pdf"
    pdfdir.mkdir()
    _soffice(["--convert-to", "pdf", "--outdir", str(pdfdir), *links], profile, timeout)
    for stem, path in stem_of.items():
        pdf = pdfdir / f"{stem}.pdf"
        if pdf.is_file() and pdf.stat().st_size > 0:
            out[path]["pdf"] = pdf
    return out


def pdf_problems(workbook: str, pdf: Path | None, ours: dict[str, list[list[Any]]]) -> list[str]:
    """No PDF, or "###" (a number wider than its column) in its text when no cell of ours holds "###"."""
    if pdf is None:
        return [f"{workbook}: LibreOffice wrote no PDF"]
    if shutil.which("pdftotext") is None:
        return []
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=False).stdout
    if "###" not in text:
        return []
    if any(isinstance(v, str) and "###" in v for rows in ours.values() for row in rows for v in row):
        return []
    lines = [line.strip() for line in text.splitlines() if "###" in line]
    return [f"{workbook}: PDF shows '###' (a value wider than its column) in {len(lines)} line(s), first: "
            f"{lines[0][:100]!r}"]


def check(workbooks: list[str], tmp: Path) -> tuple[list[str], int]:
    """(problems, cells compared) for the given workbooks."""
    exported = export(workbooks, tmp)
    problems: list[str] = []
    cells = 0
    for path in workbooks:
        names, ours, own = read_ours(path)
        problems += own
        lo = exported[path]
        lo_names = list(lo["raw"])
        if lo_names != names:
            problems.append(f"{path}: sheets ours {names}, LibreOffice's {lo_names}")
        for name in names:
            if name not in lo["raw"]:
                continue
            rows = ours[name]
            nrows, ncols = used_range(rows)
            cells += nrows * ncols
            problems += compare_sheet(path, name, rows, lo["raw"][name], lo["shown"].get(name))
        problems += pdf_problems(path, lo["pdf"], ours)
    return problems, cells


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workbooks", nargs="+", metavar="WORKBOOK.xlsx")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    missing = [p for p in args.workbooks if not os.path.isfile(p)]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    if shutil.which("soffice") is None:
        print("error: soffice not found on PATH (apt-get install libreoffice-calc; LibreOffice 7.2 or later)",
              file=sys.stderr)
        return 2
    if importlib.util.find_spec("openpyxl") is None:  # README's `pip install .` has no test extra
        print("error: openpyxl not found (pip install '.[test]', or pip install openpyxl)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lo-check-") as tmp:
        problems, cells = check(args.workbooks, Path(tmp))
    for line in problems:
        print(line)
    print(f"{len(args.workbooks)} workbook(s), {cells} cells compared, {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
