"""tools/libreoffice_check.py: its comparison of our cells with LibreOffice's CSV exports, fed CSV text that
LibreOffice 7.4 wrote for a real workbook (tests/data/libreoffice/README.md) and mutated copies of it, and one
run of the whole tool where ``soffice`` is installed."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

_spec = importlib.util.spec_from_file_location("libreoffice_check", REPO_ROOT / "tools" / "libreoffice_check.py")
lo = importlib.util.module_from_spec(_spec)
sys.modules["libreoffice_check"] = lo  # dataclasses look their module up there
_spec.loader.exec_module(lo)

DATA = REPO_ROOT / "tests" / "data" / "libreoffice"
WORKBOOK = DATA / "db_l1_l2_memory.xlsx"
#: The captured sheets and how many leading rows each capture holds (None: the whole sheet).
CAPTURED = {"Summary": None, "OverallMetrics": None, "MemoryCompareStatistic": None, "MemoryCompare": 24}


def _csv(sheet: str, kind: str) -> str:
    with open(DATA / f"{sheet}.{kind}.csv", encoding="utf-8", newline="") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def ours() -> dict[str, list[list]]:
    names, sheets, problems = lo.read_ours(str(WORKBOOK))
    assert names == list(CAPTURED) and problems == []
    return {name: rows if CAPTURED[name] is None else rows[:CAPTURED[name]] for name, rows in sheets.items()}


def _problems(ours: dict, sheet: str, raw: str | None = None, shown: str | None = None) -> list[str]:
    return lo.compare_sheet("w.xlsx", sheet, ours[sheet], _csv(sheet, "raw") if raw is None else raw,
                            _csv(sheet, "shown") if shown is None else shown)


@pytest.mark.parametrize("sheet", list(CAPTURED))
def test_captured_exports_match_our_cells(ours: dict, sheet: str) -> None:
    assert _problems(ours, sheet) == []


def test_captures_hold_what_the_comparison_allows_for(ours: dict) -> None:
    """The captures exercise the two LibreOffice behaviours the tool allows for: a raw export keeps a percent
    format, and a CRLF in our text (a torch input shape list) reads as LF."""
    raw = lo.parse_csv(_csv("OverallMetrics", "raw"))
    assert raw[3][2].text.endswith("%") and not raw[3][2].quoted
    assert lo._lo_number(raw[3][2].text) == pytest.approx(ours["OverallMetrics"][3][2], rel=lo.REL_TOL)
    with_cr = [(r, c) for r, row in enumerate(ours["MemoryCompare"]) for c, v in enumerate(row)
               if isinstance(v, str) and "\r\n" in v]
    assert len(with_cr) >= 8
    r, c = with_cr[0]
    field = lo.parse_csv(_csv("MemoryCompare", "raw"))[r][c]
    assert "\r" not in field.text and field.text == ours["MemoryCompare"][r][c].replace("\r\n", "\n")


def _replace_field(text: str, row: int, col: int, new: str) -> str:
    """The CSV text with one field's source replaced (``new`` quoted or not as given)."""
    rows = lo.parse_csv(text)
    out = []
    for r, fields in enumerate(rows):
        cells = []
        for c, f in enumerate(fields):
            cells.append(new if (r, c) == (row, col) else
                         ('"' + f.text.replace('"', '""') + '"' if f.quoted else f.text))
        out.append(",".join(cells))
    return "\n".join(out) + "\n"


def test_serializing_back_is_the_capture() -> None:
    """The mutation helper rewrites a capture unchanged when it changes nothing (so a mutant differs only there)."""
    for sheet in CAPTURED:
        text = _csv(sheet, "raw")
        assert _replace_field(text, -1, -1, "") == text


# (sheet, row, col, raw replacement or None, shown replacement or None, words of the problem)
MUTANTS = [
    ("OverallMetrics", 3, 1, "9.903431", None, "ours float 8.903431, LibreOffice's value '9.903431'"),
    ("OverallMetrics", 3, 1, '"8.903431"', None, "LibreOffice's text '8.903431'"),
    ("OverallMetrics", 3, 2, "6.6%", None, "LibreOffice's value '6.6%'"),
    ("OverallMetrics", 2, 0, "Index", None, "LibreOffice reads a value 'Index'"),
    ("OverallMetrics", 3, 0, '""', None, "ours text 'Computing Time' (14 chars), LibreOffice's empty"),
    ("OverallMetrics", 3, 1, "", None, "LibreOffice's value ''"),
    ("OverallMetrics", 1, 0, "0", None, "ours empty, LibreOffice's value '0'"),
    ("OverallMetrics", 3, 1, None, "Err:502", "LibreOffice shows 'Err:502'"),
    ("OverallMetrics", 3, 1, None, "#VALUE!", "LibreOffice shows '#VALUE!'"),
    ("OverallMetrics", 3, 1, None, "###", "LibreOffice shows '###'"),
    ("OverallMetrics", 2, 1, None, '"Duration"', "LibreOffice shows text 'Duration'"),
    ("MemoryCompare", 4, 2, '"32,3,224,224;\n;\n;\n;\n;\n;\n"', None, "first difference at char"),
    ("MemoryCompare", 4, 2, '"32,3,224,224;;;;;;;"', None, "first difference at char 13"),
]


@pytest.mark.parametrize(("sheet", "row", "col", "raw", "shown", "words"), MUTANTS)
def test_a_mutated_capture_is_flagged_at_its_cell(ours: dict, sheet: str, row: int, col: int, raw: str | None,
                                                  shown: str | None, words: str) -> None:
    raw_text = _csv(sheet, "raw") if raw is None else _replace_field(_csv(sheet, "raw"), row, col, raw)
    shown_text = _csv(sheet, "shown") if shown is None else _replace_field(_csv(sheet, "shown"), row, col, shown)
    problems = _problems(ours, sheet, raw_text, shown_text)
    where = f"w.xlsx: {sheet}!{lo.cell_name(row, col)}: "
    assert problems and all(p.startswith(where) for p in problems), problems
    assert any(words in p for p in problems), problems


def test_a_row_or_column_more_or_less_is_flagged(ours: dict) -> None:
    raw = _csv("OverallMetrics", "raw")
    extra_row = raw + ",,,,,,,,1\n"
    problems = _problems(ours, "OverallMetrics", extra_row, extra_row)
    assert "w.xlsx: OverallMetrics: used range ours 24 rows x 9 columns, LibreOffice's 25 x 9" in problems
    assert "w.xlsx: OverallMetrics!I25: ours empty, LibreOffice's value '1'" in problems
    rows = raw.split("\n")
    dropped_last = "\n".join(rows[:-2]) + "\n"
    problems = _problems(ours, "OverallMetrics", dropped_last, dropped_last)
    assert problems[0] == "w.xlsx: OverallMetrics: used range ours 24 rows x 9 columns, LibreOffice's 23 x 9"
    assert any(p.startswith("w.xlsx: OverallMetrics!A24: ours text") for p in problems)
    shown = _csv("OverallMetrics", "shown").replace("\n", ",\n")
    assert "w.xlsx: OverallMetrics: the as-shown export's shape differs from the raw one" in \
        _problems(ours, "OverallMetrics", None, shown)


def test_numbers_within_what_fifteen_digits_resolve() -> None:
    """LibreOffice writes 15 significant digits: our double reads back within REL_TOL, one more unit does not."""
    ours = [[0.1 + 0.2, 123456789.123456789, 1e-300, 0.06497064317338584, 2**60, -2.25]]
    raw = "0.3,123456789.123457,1E-300,6.49706431733858%,1.15292150460685E+018,-2.25\n"
    assert lo.compare_sheet("w", "S", ours, raw) == []
    assert lo.compare_sheet("w", "S", ours, "0.3,123456789.123458,1E-300,6.49706431733858%,"
                                            "1.15292150460685E+018,-2.25\n") == [
        "w: S!B1: ours float 123456789.12345679, LibreOffice's value '123456789.123458'"]


def test_booleans_and_errors() -> None:
    assert lo.compare_sheet("w", "S", [[True, False]], "TRUE,FALSE\n") == []
    assert lo.compare_sheet("w", "S", [[True, False]], '"TRUE",1\n') == [
        "w: S!A1: ours bool True, LibreOffice's text 'TRUE'", "w: S!B1: ours bool False, LibreOffice's value '1'"]
    # a text of ours that reads like an error marker is no problem when LibreOffice shows that very text
    assert lo.compare_sheet("w", "S", [["#N/A"]], '"#N/A"\n', '"#N/A"\n') == []


def test_parse_csv_keeps_quoting_and_line_breaks() -> None:
    text = '1,"a ""q"", b",,"x\r\ny\nz"\r\n"",2\n3,'
    assert lo.parse_csv(text) == [
        [lo.Field("1", False), lo.Field('a "q", b', True), lo.Field("", False), lo.Field("x\r\ny\nz", True)],
        [lo.Field("", True), lo.Field("2", False)],
        [lo.Field("3", False), lo.Field("", False)]]
    assert lo.parse_csv("\ufeffa\n") == [[lo.Field("a", False)]]
    with pytest.raises(ValueError, match="unterminated"):
        lo.parse_csv('"open')


def test_read_ours_decodes_string_escapes_as_spreadsheets_do(tmp_path: Path) -> None:
    """openpyxl keeps "_x000D_" as stored and removes each "x005F_" of a shared string, so a literal "_x000D_"
    (stored "_x005F_x000D_") and a CR read alike; the tool decodes both once, as Excel and LibreOffice do."""
    import xlsxwriter

    path = tmp_path / "esc.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("S")
    ws.write_string(0, 0, "line\r\nnext")
    ws.write_string(0, 1, "literal _x000D_ and \x01")
    ws.write_formula(1, 0, "=1+1", None, 2)
    wb.close()
    names, sheets, problems = lo.read_ours(str(path))
    assert names == ["S"] and problems == []
    assert sheets["S"][0] == ["line\r\nnext", "literal _x000D_ and \x01"]
    assert sheets["S"][1][0] == 2
    assert lo.decode_ooxml("_x005F_x000D_|_x000D_|_x00e9_") == "_x000D_|\r|\u00e9"


def test_a_formula_without_a_cached_value_is_a_problem(tmp_path: Path) -> None:
    import xlsxwriter

    path = tmp_path / "f.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    wb.add_worksheet("S").write_formula(0, 0, "=1+1", None, "")
    wb.close()
    assert lo.read_ours(str(path))[2] == [f"{path}: S!A1: formula '=1+1' without a cached value"]


def test_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    assert lo.main([]) == 2
    assert lo.main([str(tmp_path / "none.xlsx")]) == 2
    assert "no such file" in capsys.readouterr().err
    monkeypatch.setattr(lo.shutil, "which", lambda name: None)
    assert lo.main([str(WORKBOOK)]) == 2
    assert "soffice not found" in capsys.readouterr().err
    # the README's install (no test extra) has no openpyxl: one line and 2, where a traceback ended the run
    monkeypatch.setattr(lo.shutil, "which", lambda name: "/usr/bin/" + name)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(lo.importlib.util, "find_spec", lambda name: None if name == "openpyxl" else find_spec(name))
    assert lo.main([str(WORKBOOK)]) == 2
    assert capsys.readouterr().err == "error: openpyxl not found (pip install '.[test]', or pip install openpyxl)\n"


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice (apt-get install libreoffice-calc)")
def test_whole_tool_on_a_real_workbook_and_a_broken_one(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """One LibreOffice run over the real workbook (clean) and a workbook it cannot read as written: a formula
    with no cached value, recalculated by LibreOffice, and a number too wide for its column in the PDF."""
    import xlsxwriter

    broken = tmp_path / "broken.xlsx"
    wb = xlsxwriter.Workbook(str(broken))
    ws = wb.add_worksheet("N")
    ws.set_column(0, 0, 2)
    ws.write_number(0, 0, 123456789.5)
    ws.write_formula(1, 0, "=A1*2", None, "")
    wb.close()
    assert lo.main([str(WORKBOOK), str(broken)]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines == [
        f"{broken}: N!A2: formula '=A1*2' without a cached value",
        f"{broken}: N: used range ours 1 rows x 1 columns, LibreOffice's 2 x 1",
        f"{broken}: N!A2: ours empty, LibreOffice's value '246913579'",
        f"{broken}: PDF shows '###' (a value wider than its column) in 2 line(s), first: '###'"]
    assert "2 workbook(s)" in err and "4 problem(s)" in err
