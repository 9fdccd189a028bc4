"""Rules of the reporters that no other test pinned down (a mutation audit of report/): what the user sees in
the workbook, the JSON and on the console for a real comparison, and where the files go."""

from __future__ import annotations

import logging
from pathlib import Path

import openpyxl
import pytest
from xlsxutil import read_xlsx

from msprof_compare.report import excel

DATA = Path(__file__).resolve().parent / "data" / "kineto"
#: Two real Kineto excerpts (tests/data/kineto/README.md): a GPU pair with a Summary and an OverallMetrics sheet.
BASE = DATA / "h100_timesformer_excerpt.pt.trace.json"
COMP = DATA / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
GREEN, YELLOW = "FF00FF00", "FFFFFF00"


@pytest.fixture(scope="module")
def gpu_pair():
    from msprof_compare import compare

    return compare(str(BASE), str(COMP))


def test_summary_captions_are_stacked_green_then_yellow(gpu_pair, tmp_path: Path) -> None:
    """The Summary sheet stacks its captions in column B (docs/differences.md, "Additions"); each keeps the
    colour of its side (reference-2 §8.2/§8.3: base green 00FF00, comparison yellow FFFF00, both bold). A caption
    longer than the sheet's columns B:F is merged across them and wraps: run on past them it was cut at the
    printed page's edge (the Summary prints its tables' columns); a shorter one stays in B alone."""
    ws = openpyxl.load_workbook(gpu_pair.to_excel(str(tmp_path)))["Summary"]
    b1, b2 = ws["B1"], ws["B2"]
    assert b1.value == f"Base Profiling: {BASE}" and b2.value == f"Comparison Profiling: {COMP}"
    assert (b1.fill.fgColor.rgb, b2.fill.fgColor.rgb) == (GREEN, YELLOW)
    assert b1.font.b and b2.font.b
    merged = {r.min_row: (r.coord, ws.cell(r.min_row, 2).alignment.wrap_text)
              for r in ws.merged_cells.ranges if r.min_row <= 2}  # (the chart data below has its own)
    # B:F are 117 + 117 + 103 + 117 + 131 = 585 px, 577 within the padding: about 82 characters of 7 px (the
    # caption's bold ones are wider; _caption_lines measures them)
    columns = next(s for s in gpu_pair.sheets if s.name == "Summary").columns[1:]
    assert sum(c.width * 7 + 5 for c in columns) == 585
    for row, cell in ((1, b1), (2, b2)):
        long = excel._caption_lines(cell.value, columns) > 1
        assert long or len(cell.value) < 82, (row, cell.value)
        assert merged.get(row) == ((f"B{row}:F{row}", True) if long else None), (row, len(cell.value))


def test_sheet_of_exactly_the_rows_excel_holds_is_written_whole(gpu_pair, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """A sheet that just fits (here: Excel's row limit lowered to the 3 header rows plus OverallMetrics' rows) is
    written whole, without the warning about rows left out; one row more than fits is cut with it."""
    sheet = gpu_pair.sheet("OverallMetrics")
    n = len(sheet)
    assert n == 14  # Computing Time .. E2E Time of this pair
    monkeypatch.setattr(excel, "MAX_ROWS", excel.HEADER_ROWS + n)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        path = gpu_pair.to_excel(str(tmp_path))
    assert not [m for m in caplog.messages if m.startswith("Sheet OverallMetrics ")]
    written = read_xlsx(path, sheet_name="OverallMetrics", header=2)
    assert written["Index"].tolist() == sheet["Index"].tolist()
    monkeypatch.setattr(excel, "MAX_ROWS", excel.HEADER_ROWS + n - 1)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        path = gpu_pair.to_excel(str(tmp_path))
    assert f"Sheet OverallMetrics has {n} rows; Excel holds at most {n - 1}, the rest are not written." \
        in caplog.messages


def test_json_file_and_stream_end_in_one_newline(gpu_pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON report is a text file: the document and one line break, so `cat` / a shell prompt after `-o -` start
    on a new line; the document before it is exactly ``dumps``'s text (one JSON value, nothing else)."""
    import io
    import json

    from msprof_compare.report import json_report

    text = Path(json_report.write_json(gpu_pair, str(tmp_path))).read_text(encoding="utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert json.loads(text)["base"]["path"] == str(BASE)
    buf = io.StringIO()
    monkeypatch.setattr("sys.stdout", buf)
    assert json_report.write_json(gpu_pair, "-") == "-"
    assert buf.getvalue().endswith("}\n") and not buf.getvalue().endswith("\n\n")
    assert json.loads(buf.getvalue())["comparison"]["path"] == str(COMP)


def test_a_temporary_exactly_a_day_old_is_kept(tmp_path: Path) -> None:
    """A run's hidden temporary report is removed once *more* than STALE_TMP_SECONDS (24 h) old: one exactly
    that old may still be a long run writing, and is kept; one second older is removed."""
    from msprof_compare.report import output

    assert output.STALE_TMP_SECONDS == 24 * 3600
    tmp = tmp_path / ".performance_comparison_result_abc123.tmp"
    tmp.write_bytes(b"partial")
    mtime = tmp.stat().st_mtime
    assert output.remove_stale_temporaries(str(tmp_path), now=mtime + 24 * 3600) == 0 and tmp.exists()
    assert output.remove_stale_temporaries(str(tmp_path), now=mtime + 24 * 3600 + 1) == 1 and not tmp.exists()


def test_json_names_each_side_and_keeps_the_sheet_headers(gpu_pair, tmp_path: Path) -> None:
    """Each side in the JSON: kind (GPU) and source (a Kineto trace) are separate fields. A sheet's "headers" are
    the display headers as the workbook's row 3 shows them (OverallMetrics repeats Duration(ms), Duration Ratio
    and Number: reference-2 §8.2), "columns" the record keys pandas makes of them (".1" on repeats)."""
    import json

    from msprof_compare.report import json_report

    doc = json.loads(json_report.dumps(gpu_pair))
    assert doc["base"] == {"path": str(BASE), "kind": "GPU", "source": "kineto", "level": "",
                           "framework": "PyTorch (Kineto)"}
    assert doc["comparison"] == {"path": str(COMP), "kind": "GPU", "source": "kineto", "level": "",
                                 "framework": "PyTorch (Kineto)"}
    sheet = next(s for s in doc["sheets"] if s["name"] == "OverallMetrics")
    shown = ["Index", "Duration(ms)", "Duration Ratio", "Number", "Duration(ms)", "Duration Ratio", "Number",
             "Diff Duration(ms)", "Diff Ratio"]
    ws = openpyxl.load_workbook(gpu_pair.to_excel(str(tmp_path)))["OverallMetrics"]
    assert [c.value for c in ws[3]] == shown
    assert sheet["headers"] == shown
    assert sheet["columns"] == ["Index", "Duration(ms)", "Duration Ratio", "Number", "Duration(ms).1",
                                "Duration Ratio.1", "Number.1", "Diff Duration(ms)", "Diff Ratio"]
    assert list(sheet["rows"][0]) == sheet["columns"]


def test_stale_cleanup_removes_only_temporaries(tmp_path: Path) -> None:
    """Only ``.performance_comparison_result_*.tmp`` entries are a killed run's leftovers: a hidden file with the
    report prefix but another ending (a report someone hid, two days old) is the user's and stays."""
    import os
    import time

    from msprof_compare.report import output

    leftover = tmp_path / ".performance_comparison_result_abc123.tmp"
    hidden_report = tmp_path / ".performance_comparison_result_20250101000000.xlsx"
    for f in (leftover, hidden_report):
        f.write_bytes(b"x")
        old = time.time() - 2 * 24 * 3600
        os.utime(f, (old, old))
    assert output.remove_stale_temporaries(str(tmp_path)) == 1
    assert not leftover.exists() and hidden_report.read_bytes() == b"x"


def test_a_target_ending_in_a_slash_is_a_folder(tmp_path: Path) -> None:
    """``-o run.xlsx/`` and ``-o run.xlsx/.`` name a folder called run.xlsx (to be made), not the report file: the
    workbook goes inside it under its default name; so do ``-o run.json/`` and an existing folder run.json."""
    target = tmp_path / "run.xlsx"
    assert excel.resolve_target(str(target) + "/.") == (str(target), None)
    assert excel.resolve_target(str(target) + "/") == (str(target), None)
    assert excel.resolve_target(str(target)) == (str(tmp_path), "run.xlsx")
    assert not target.exists()
    # a folder named like the other report kind is a folder too, not a .json file refused for the workbook
    other = tmp_path / "run.json"
    assert excel.resolve_target(str(other) + "/") == (str(other), None)
    other.mkdir()
    assert excel.resolve_target(str(other)) == (str(other), None)


def test_report_file_name_takes_the_extension_of_the_format(tmp_path: Path) -> None:
    """``-o run.xlsx --output_format json`` writes run.json (the CLI help: a name ending in .xlsx or .json names the
    report file, whose extension follows --output_format); ``-o run.json`` with xlsx writes run.xlsx."""
    from msprof_compare import compare
    from msprof_compare.report import deliver

    as_json = compare(str(BASE), str(COMP), output_format="json")
    assert deliver.write_reports(as_json, str(tmp_path / "run.xlsx")) == [str(tmp_path / "run.json")]
    as_xlsx = compare(str(BASE), str(COMP), output_format="xlsx")
    assert deliver.write_reports(as_xlsx, str(tmp_path / "run.json")) == [str(tmp_path / "run.xlsx")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "run.xlsx"]


def test_a_folder_holding_the_other_reports_name_is_a_taken_name(tmp_path: Path) -> None:
    """``-o run.json`` beside a folder run.xlsx: run.xlsx is taken, so the reports move to run_1.* (README: "with
    both formats a taken name moves both to run_1.*"); both went into run.xlsx/ under the default name, away from
    the run.json named. Alone, the workbook is run_1.xlsx; ``-o run.xlsx --output_format json`` beside a folder
    run.json writes run_1.json."""
    from msprof_compare import compare
    from msprof_compare.errors import UsageError
    from msprof_compare.report import deliver

    (tmp_path / "run.xlsx").mkdir()
    both = compare(str(BASE), str(COMP), enable_profiling_compare=True, output_format="xlsx,json")
    assert deliver.write_reports(both, str(tmp_path / "run.json")) == [str(tmp_path / "run_1.xlsx"),
                                                                       str(tmp_path / "run_1.json")]
    as_xlsx = compare(str(BASE), str(COMP), enable_profiling_compare=True)
    assert deliver.write_reports(as_xlsx, str(tmp_path / "run.json")) == [str(tmp_path / "run_2.xlsx")]
    (tmp_path / "x.json").mkdir()
    as_json = compare(str(BASE), str(COMP), enable_profiling_compare=True, output_format="json")
    assert deliver.write_reports(as_json, str(tmp_path / "x.xlsx")) == [str(tmp_path / "x_1.json")]
    assert list((tmp_path / "run.xlsx").iterdir()) == [] and list((tmp_path / "x.json").iterdir()) == []
    (tmp_path / "lnk.xlsx").symlink_to(tmp_path / "run.xlsx")  # a link is refused, as any linked target
    with pytest.raises(UsageError, match="lnk.xlsx is a symbolic link"):
        deliver.check_target(str(tmp_path / "lnk.json"), ("xlsx", "json"))


def test_a_named_report_file_keeps_its_extension_with_both_formats(tmp_path: Path) -> None:
    """``-o run.XLSX --output_format xlsx,json`` writes run.XLSX (and run.json), as the workbook alone does; it
    wrote run.xlsx, not the file named (on a case-insensitive disk, beside an existing run.XLSX, a _1 name)."""
    from msprof_compare import compare
    from msprof_compare.report import deliver

    both = compare(str(BASE), str(COMP), enable_profiling_compare=True, output_format="xlsx,json")
    assert deliver.write_reports(both, str(tmp_path / "run.XLSX")) == [str(tmp_path / "run.XLSX"),
                                                                       str(tmp_path / "run.json")]
    assert deliver.write_reports(both, str(tmp_path / "R.Json")) == [str(tmp_path / "R.xlsx"),
                                                                     str(tmp_path / "R.Json")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["R.Json", "R.xlsx", "run.XLSX", "run.json"]


def test_only_the_reports_asked_for_are_checked(tmp_path: Path) -> None:
    """``-o run.xlsx`` checks run.json only when JSON is asked for too: a run.json symlink beside (someone else's)
    does not stop a workbook-only run, but refuses a run that would write through it."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report import deliver

    (tmp_path / "run.json").symlink_to(tmp_path / "elsewhere.json")
    deliver.check_target(str(tmp_path / "run.xlsx"), ("xlsx",))
    with pytest.raises(UsageError, match="symbolic link"):
        deliver.check_target(str(tmp_path / "run.xlsx"), ("xlsx", "json"))
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_sheet_without_rows_is_in_neither_the_json_nor_the_workbook(gpu_pair, tmp_path: Path) -> None:
    """A result holding a sheet with no rows (a caller's edit: compare() itself drops such sheets) lists it in
    neither report: the workbook writes no empty sheet (reference-2 §8: a comparison without rows gives no
    sheet), and the JSON's "sheets" are the workbook's. Edit: the real Kineto pair's OverallMetrics cut to
    0 rows; the other sheets, in their order, are what both reports must hold."""
    import dataclasses
    import json

    from msprof_compare.report import json_report

    sheets = [dataclasses.replace(s, data=s.data.iloc[:0], row_styles=[]) if s.name == "OverallMetrics" else s
              for s in gpu_pair.sheets]
    assert "OverallMetrics" in gpu_pair.sheet_names and len(gpu_pair.sheet_names) > 1
    expected = [n for n in gpu_pair.sheet_names if n != "OverallMetrics"]
    edited = dataclasses.replace(gpu_pair, sheets=sheets)
    doc = json.loads(json_report.dumps(edited))
    assert [s["name"] for s in doc["sheets"]] == expected
    wb = openpyxl.load_workbook(edited.to_excel(str(tmp_path)))
    assert wb.sheetnames == expected


def test_json_options_hold_an_op_name_map_built_from_numpy_strings() -> None:
    """An API caller may build --op_name_map from a DataFrame column: its values are numpy.str_ (str to the
    option check), which msgspec, the JSON encoder, refuses; the options' dict values are cleaned like cells.
    Real Kineto pair; the map's texts are the input, written back as plain JSON strings."""
    import json

    import numpy as np

    from msprof_compare import compare
    from msprof_compare.report import json_report

    result = compare(str(BASE), str(COMP), op_name_map={"aten::mm": np.str_("aten::matmul")})
    doc = json.loads(json_report.dumps(result))
    assert doc["options"]["op_name_map"] == {"aten::mm": "aten::matmul"}
