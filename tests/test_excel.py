"""The xlsx reporter: layout parity with the original's workbook and output safety."""

from __future__ import annotations

import math
import os
import re
import shutil
import stat
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import openpyxl
import pandas as pd
import pytest
from refpairs import PAIRS
from xlsxutil import caption_bands, read_xlsx, within

from msprof_compare.compare import overall
from msprof_compare.compare.table import Column, Sheet
from msprof_compare.errors import UsageError
from msprof_compare.report import excel

OVERALL_COLUMNS = overall.COLUMNS  # the production layout, written from the reference's rows
BLUE = {"Computing Time", "Uncovered Communication Time", "Free Time", "E2E Time"}
LIGHT_BLUE = {"\tFlash Attention (Forward)", "\tFlash Attention (Backward)", "\tConv (Forward)", "\tConv (Backward)",
              "\tMatmul", "\tPage Attention", "\tVector", "\tCube", "\tSDMA (Tensor Move)", "\tOther"}
PAIR1 = "1-npu-text-l1-vs-l2"
PAIR1_BASE = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
PAIR1_COMP = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def fake_result(sheets: list[Sheet], base: str = "base/path", comparison: str = "comp/path") -> SimpleNamespace:
    """What write_workbook reads from a CompareResult: the sheets and both paths."""
    return SimpleNamespace(sheets=sheets, base=SimpleNamespace(path=base), comparison=SimpleNamespace(path=comparison))


def small_sheet(name: str = "KernelCompare", rows: list[list] | None = None) -> Sheet:
    cols = [Column("Order Id", "int", 10), Column("Kernel", "bold", 30), Column("Total Duration(us)", "float", 20),
            Column("Total Duration(us)", "float", 20), Column("Diff Total Ratio", "float", 15)]
    rows = rows if rows is not None else [[1, "TransData", 124.54, 123.74, 0.9936], [2, "MatMul", 10.0, 25.0, 2.5]]
    return Sheet(name, cols, pd.DataFrame(rows), (2, 2), (3, 3))


def overall_sheet_from_reference(ref: Path) -> Sheet:
    frame = read_xlsx(ref, sheet_name="OverallMetrics", header=2)
    data = frame.astype(object).where(frame.notna(), None)
    # The reference also paints communication-group rows (depth 1 under Uncovered) light blue.
    styles, parent = [], ""
    for i in frame["Index"]:
        if not i.startswith("\t"):
            parent = i
        group = parent == "Uncovered Communication Time" and i.startswith("\t") and not i.startswith("\t\t")
        styles.append("blue" if i in BLUE else "light_blue" if i in LIGHT_BLUE or group else "")
    return Sheet("OverallMetrics", OVERALL_COLUMNS, data, (1, 3), (4, 6), row_styles=styles)


def test_overall_metrics_matches_reference_cell_by_cell(reference_outputs: Path, tmp_out: Path) -> None:
    ref = reference_outputs / PAIR1 / "performance_comparison_result.xlsx"
    sheet = overall_sheet_from_reference(ref)
    path = Path(excel.write_workbook(fake_result([sheet], PAIR1_BASE, PAIR1_COMP), tmp_out))
    assert path.parent == tmp_out and path.name.startswith("performance_comparison_result_")

    ours = read_xlsx(path, sheet_name="OverallMetrics", header=2)
    theirs = read_xlsx(ref, sheet_name="OverallMetrics", header=2)
    pd.testing.assert_frame_equal(ours, theirs)

    a = openpyxl.load_workbook(path)["OverallMetrics"]
    b = openpyxl.load_workbook(ref)["OverallMetrics"]
    assert sorted(map(str, a.merged_cells.ranges)) == sorted(map(str, b.merged_cells.ranges)) == ["B1:D1", "E1:G1"]
    assert a.freeze_panes == "B4"  # deliberate difference: header rows and the Index column frozen
    for row_a, row_b in zip(a.iter_rows(min_row=1, max_row=b.max_row), b.iter_rows(min_row=1, max_row=b.max_row),
                            strict=True):
        for ca, cb in zip(row_a, row_b, strict=True):
            where = cb.coordinate
            assert ca.value == cb.value, where
            if cb.value is None:
                continue
            assert ca.data_type == cb.data_type, where
            assert (ca.font.name, ca.font.sz, bool(ca.font.b)) == (cb.font.name, cb.font.sz, bool(cb.font.b)), where
            fill_a = ca.fill.fgColor.rgb if ca.fill.fill_type else None
            fill_b = cb.fill.fgColor.rgb if cb.fill.fill_type else None
            assert fill_a == fill_b, where
            assert (ca.alignment.horizontal, ca.alignment.vertical) == (cb.alignment.horizontal, cb.alignment.vertical)
            assert ca.alignment.indent == cb.alignment.indent, where
            assert ca.border.left.style == cb.border.left.style == "thin", where
            assert ca.number_format == cb.number_format, where  # text cells too ('#,##0' for Index)
    for letter in "ABCDEFGHI":
        assert a.column_dimensions[letter].width == pytest.approx(b.column_dimensions[letter].width), letter


@pytest.mark.parametrize("pair", [PAIR1, "2-npu-text-l0-rank0-vs-rank1", "4-gpu-alexnet-vs-npu-text-l1"])
def test_data_cell_formats_match_reference(pair: str, samples: Path, reference_outputs: Path,
                                           tmp_out: Path) -> None:
    """Number format and boldness of every filled data cell of every sheet the original wrote, text
    columns included (most carry '#,##0', names are bold 'General'), and the merged caption cells of row 1
    (each sheet's base / comparison spans)."""
    from msprof_compare import compare

    inputs = {PAIR1: (PAIR1_BASE, PAIR1_COMP),
              "2-npu-text-l0-rank0-vs-rank1": ("msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
                                               "msinsight/test/data/pytorch/text/level0/rank1_ascend_pt"),
              "4-gpu-alexnet-vs-npu-text-l1": (
                  "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
                  "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt")}[pair]
    ours = openpyxl.load_workbook(compare(*(str(samples / p) for p in inputs)).to_excel(tmp_out))
    ref = openpyxl.load_workbook(reference_outputs / pair / "performance_comparison_result.xlsx")
    try:
        assert set(ref.sheetnames) <= set(ours.sheetnames)
        for name in ref.sheetnames:
            a, b = ours[name], ref[name]
            # each caption over its half as the original merges it, or over the part of it that prints on one
            # page, the half filled as the caption (excel.caption_range)
            assert caption_bands(a) == sorted(map(str, b.merged_cells.ranges)), name
            assert all(any(within(str(m), band) for band in caption_bands(a)) for m in a.merged_cells.ranges), name
            for row_a, row_b in zip(a.iter_rows(min_row=4, max_row=min(b.max_row, a.max_row, 60)),
                                    b.iter_rows(min_row=4, max_row=min(b.max_row, a.max_row, 60)), strict=True):
                for ca, cb in zip(row_a, row_b, strict=False):
                    if cb.value is None or ca.value is None:
                        continue
                    want = cb.number_format
                    if b.cell(3, cb.column).value in _RATIOS and want == _F:
                        want = _R  # ApiCompare's and KernelCompare's ratios: percentages (docs/differences.md)
                    assert (ca.number_format, bool(ca.font.b)) == (want, bool(cb.font.b)), (name, cb.coordinate)
    finally:
        ours.close()
        ref.close()


def test_headers_fills_and_red_rule(tmp_out: Path) -> None:
    rows = [[1, "A", 1.0, 1.0, 1.0], [2, "B", 0.0, 3.0, math.inf], [3, "C", 2.0, None, float("nan")],
            [4, "D", 4.0, 6.0, 1.5], [5, "E", 0.0, 0.0, "INF"]]
    path = excel.write_workbook(fake_result([small_sheet(rows=rows)]), tmp_out)
    ws = openpyxl.load_workbook(path)["KernelCompare"]
    assert [c.value for c in ws[3]] == ["Order Id", "Kernel", "Total Duration(us)", "Total Duration(us)",
                                        "Diff Total Ratio"]
    assert [c.fill.fgColor.rgb for c in ws[3]] == ["FF00FF00", "FF00FF00", "FF00FF00", "FFFFFF00", "FF00FF00"]
    assert ws["C1"].value == "Base Profiling: base/path" and ws["D1"].value == "Comparison Profiling: comp/path"
    assert ws["C1"].fill.fgColor.rgb == "FF00FF00" and ws["D1"].fill.fgColor.rgb == "FFFFFF00"
    assert ws["C1"].font.b and ws["D1"].font.b
    assert not ws.merged_cells.ranges  # one-column spans are single cells
    assert ws["B4"].font.b  # bold text column
    ratio = [ws.cell(r, 5) for r in range(4, 9)]
    # a ratio column typed as floats (ApiCompare, kernel sheets) is shown as percentages, red or not
    assert ratio[0].value == 1 and ratio[0].fill.fill_type is None and ratio[0].number_format == "0.00%"
    assert ratio[1].value == "INF" and ratio[1].data_type == "s" and ratio[1].fill.fgColor.rgb == "FFFF0000"
    assert ratio[2].value is None and ratio[2].border.left.style == "thin"  # NaN: styled blank
    assert ws.cell(6, 4).value is None and ws.cell(6, 4).number_format == "#,##0.00"  # None: styled blank
    assert ratio[3].value == 1.5 and ratio[3].fill.fgColor.rgb == "FFFF0000" and ratio[3].number_format == "0.00%"
    assert ratio[4].value == "INF" and ratio[4].fill.fgColor.rgb == "FFFF0000"
    assert ws.freeze_panes == "C4"  # the header rows, and Order Id and Kernel, which name the row
    frame = read_xlsx(path, sheet_name="KernelCompare", header=2)
    assert list(frame.columns) == ["Order Id", "Kernel", "Total Duration(us)", "Total Duration(us).1",
                                   "Diff Total Ratio"]
    assert frame["Total Duration(us).1"].tolist()[:2] == [1.0, 3.0]


def test_no_formula_injection(tmp_out: Path) -> None:
    nasty = ["=1+1", "+SUM(A1:A2)", "-2+3", "@SUM(A1)", "\t=cmd|' /C calc'!A0", "\r=1", "=HYPERLINK(\"x\")"]
    rows = [[i, s, 1.0, 2.0, 0.5] for i, s in enumerate(nasty)]
    sheet = small_sheet(rows=rows)
    sheet.columns[1] = Column("=Kernel", "text", 30)  # headers and captions too
    path = excel.write_workbook(fake_result([sheet], base="=evil", comparison="+evil"), tmp_out)
    wb = openpyxl.load_workbook(path)
    ws = wb["KernelCompare"]
    for row in ws.iter_rows():
        for cell in row:
            assert cell.data_type != "f", (cell.coordinate, cell.value)
    # A CR is stored as the OOXML escape _x000D_ (Excel shows a CR; openpyxl does not unescape it).
    assert [ws.cell(r, 2).value.replace("_x000D_", "\r") for r in range(4, 4 + len(nasty))] == nasty
    assert ws["B3"].value == "=Kernel" and ws["C1"].value == "Base Profiling: =evil"


def test_never_overwrites(tmp_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = "performance_comparison_result_20250101000000.xlsx"
    monkeypatch.setattr(excel, "default_file_name", lambda now=None: fixed)
    existing = tmp_out / "performance_comparison_result_20250101000000.xlsx"
    existing.write_bytes(b"precious")
    first = excel.write_workbook(fake_result([small_sheet()]), tmp_out)
    second = excel.write_workbook(fake_result([small_sheet()]), tmp_out)
    assert existing.read_bytes() == b"precious"
    assert Path(first).name == "performance_comparison_result_20250101000000_1.xlsx"
    assert Path(second).name == "performance_comparison_result_20250101000000_2.xlsx"
    assert sorted(p.name for p in tmp_out.iterdir()) == sorted([existing.name, Path(first).name, Path(second).name])
    target = tmp_out / "mine.xlsx"
    assert excel.write_workbook(fake_result([small_sheet()]), target) == str(target)
    assert Path(excel.write_workbook(fake_result([small_sheet()]), target)).name == "mine_1.xlsx"


def test_modes_and_created_directory(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper"
    old = os.umask(0o022)
    try:
        path = Path(excel.write_workbook(fake_result([small_sheet()]), out))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o750
    assert stat.S_IMODE(os.stat(out.parent).st_mode) == 0o750
    assert [p.name for p in out.iterdir()] == [path.name]  # no temporary file left


def test_no_sheets_writes_nothing(tmp_out: Path, caplog: pytest.LogCaptureFixture) -> None:
    empty = Sheet("KernelCompare", small_sheet().columns, pd.DataFrame(columns=range(5)), (2, 2), (3, 3))
    assert excel.write_workbook(fake_result([]), tmp_out) == ""
    assert excel.write_workbook(fake_result([empty]), tmp_out) == ""
    assert list(tmp_out.iterdir()) == []


def test_bad_targets(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        excel.resolve_target(a_file)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    with pytest.raises(UsageError, match="symbolic link"):
        excel.resolve_target(link)
    with pytest.raises(UsageError, match="not a directory"):
        excel.resolve_target(a_file / "sub")
    if os.geteuid() != 0:  # root can write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(UsageError, match="not writable"):
            excel.resolve_target(locked)
    assert excel.resolve_target(tmp_path / "x.xlsx") == (str(tmp_path), "x.xlsx")
    assert excel.resolve_target(tmp_path) == (str(tmp_path), None)


def test_interrupted_write_leaves_nothing(tmp_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_sheet = excel._write_sheet
    calls = []

    def boom(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_sheet(*args, **kwargs)

    monkeypatch.setattr(excel, "_write_sheet", boom)
    with pytest.raises(KeyboardInterrupt):
        excel.write_workbook(fake_result([small_sheet("A"), small_sheet("B")]), tmp_out)
    assert list(tmp_out.iterdir()) == []


def test_workbook_is_written_with_the_gc_paused(tmp_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing cells allocates an object per cell and GC passes over them cost ~10 % of a large workbook:
    the sheets and the close run with the cyclic GC off, which is on again afterwards, also after a failure."""
    import gc

    import xlsxwriter

    seen = []
    real_sheet, real_close = excel._write_sheet, xlsxwriter.Workbook.close

    def sheet(*args, **kwargs):
        seen.append(("sheet", gc.isenabled()))
        return real_sheet(*args, **kwargs)

    def close(self):
        seen.append(("close", gc.isenabled()))
        return real_close(self)

    monkeypatch.setattr(excel, "_write_sheet", sheet)
    monkeypatch.setattr(xlsxwriter.Workbook, "close", close)
    assert gc.isenabled()
    assert excel.write_workbook(fake_result([small_sheet("A"), small_sheet("B")]), tmp_out)
    assert seen == [("sheet", False), ("sheet", False), ("close", False)]
    assert gc.isenabled()

    def failing_close(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(xlsxwriter.Workbook, "close", failing_close)
    with pytest.raises(KeyboardInterrupt):
        excel.write_workbook(fake_result([small_sheet("C")]), tmp_out)
    assert gc.isenabled()


def test_constant_memory_path_for_big_sheets(tmp_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    rows = [[i, f"k{i}", float(i), float(2 * i), 2.0 if i else 1.0] for i in range(50)]
    path = excel.write_workbook(fake_result([small_sheet(rows=rows), small_sheet("Other")]), tmp_out)
    frame = read_xlsx(path, sheet_name="KernelCompare", header=2)
    assert len(frame) == 50 and frame["Kernel"].tolist()[-1] == "k49"
    assert frame["Total Duration(us).1"].sum() == pytest.approx(2 * sum(range(50)))
    ws = openpyxl.load_workbook(path)["KernelCompare"]
    assert ws["E5"].fill.fgColor.rgb == "FFFF0000"
    assert len(read_xlsx(path, sheet_name="Other", header=2)) == 2


def test_part_files_of_a_big_workbook_live_beside_it(tmp_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """xlsxwriter's streaming parts go to a hidden directory beside the workbook being written, inside the
    run's private folder in the output directory, named as our temporary reports, so the stale-file cleanup
    removes what a SIGKILL leaves (in the system temp they stayed)."""
    import tempfile

    made: list[str] = []
    real = tempfile.mkdtemp

    def recording(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    real_made: list[str] = []

    def resolved(*args, **kwargs):  # the private folder is reached by its descriptor: record the real path
        path = recording(*args, **kwargs)
        real_made.append(os.path.realpath(path))
        return path

    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    monkeypatch.setattr(excel.tempfile, "mkdtemp", resolved)
    excel.write_workbook(fake_result([small_sheet(rows=[[i, f"k{i}", 1.0, 2.0, 2.0] for i in range(20)])]), tmp_out)
    # the output folder's write probe (made and removed at once), the run's private folder, then the parts folder
    probe, private, parts = map(Path, real_made)
    assert probe.parent == tmp_out and not probe.exists()
    assert private.parent == tmp_out and parts.parent == private
    for d in (private, parts):
        assert d.name.startswith(".performance_comparison_result_") and d.name.endswith(".tmp")
        assert not d.exists()
    assert len(list(tmp_out.iterdir())) == 1


# --------------------------------------------------------------------------- block writer


def _edge_sheet(name: str = "OverallMetrics", rows: int = 40, red_first: bool = False) -> Sheet:
    """Every kind of plain cell the writer meets, repeated strings across columns included. ``red_first``: the
    ratio columns open with a red cell (their plain ratio format is first used on a later row)."""
    text = ["x", "", None, "INF", " lead", "trail ", "a&b<c>\"d", "ctl\x01\x1e_x0001_", "tab\tbed\nline",
            "=1+1", "\ufffe", "é中文", "y" * 40_000, "\U0001F600" * 20_000, "x", "1e3"]
    nums = [1.5, np.nan, np.inf, -np.inf, 0.0, -2.25, 1e-300, 123456789.123456789, 2.0**60, 0.1 + 0.2]
    ratio = [0.5, 1.5, np.inf, "INF", "", None, -np.inf, np.nan, 1.0, " inf "]
    if red_first:
        ratio = ratio[1:] + ratio[:1]
    mixed = [np.int64(3), np.float32(0.25), pd.NA, 7, 1.0, "n/a", pd.NaT, 10**20, np.float64(2.5), "x", 2**60]
    n = rows
    data = pd.DataFrame({
        "a": [text[i % len(text)] for i in range(n)],
        "b": [nums[i % len(nums)] for i in range(n)],
        "c": list(range(-3, n - 3)),
        "d": [ratio[i % len(ratio)] for i in range(n)],
        "e": [mixed[i % len(mixed)] for i in range(n)],
        "f": [text[(i + 3) % len(text)] for i in range(n)],
        "g": np.linspace(3.0, 0.0, n) if red_first else np.linspace(0.0, 3.0, n),
    })
    cols = [Column("Name"), Column("Total", "float"), Column("Calls", "int"), Column("Diff Ratio", "ratio"),
            Column("Mixed", "float"), Column("Kernel", "bold"), Column("Diff Total Ratio", "ratio")]
    return Sheet(name, cols, data, (0, 2), (3, 5))


def _parts(path: Path) -> dict[str, bytes]:
    import zipfile

    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if "docProps" not in n}


@pytest.mark.parametrize("red_first", [False, True])
@pytest.mark.parametrize("constant_memory", [False, True])
@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_block_writer_is_byte_identical_to_cell_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      constant_memory: bool, red_first: bool) -> None:
    """Rendered blocks == xlsxwriter's own write_* calls: cells, styles, shared strings, chart caches.
    ``red_first``: the first sheet's ratio columns open with a red cell, so a format of a later column (bold) is
    first used before their plain ratio format (constant_memory numbers the formats in that order)."""
    if constant_memory:
        monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    # OverallMetrics without row styles: its chart reads the block rows (chart caches in default mode).
    sheets = [_edge_sheet(red_first=red_first), small_sheet(), _edge_sheet("Plain", 3)]
    excel.render(sheets, str(tmp_path / "fast.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    blocks = []
    real = excel._FastWorksheet.write_block
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: blocks.append(real(*a)) or True)
    excel.render(sheets, str(tmp_path / "spy.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    assert blocks == [True, True, True]           # the fast path really ran for every sheet
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render(sheets, str(tmp_path / "cells.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    fast, cells = _parts(tmp_path / "fast.xlsx"), _parts(tmp_path / "cells.xlsx")
    assert fast.keys() == cells.keys() and any("chart" in k for k in fast)
    for name in fast:
        assert fast[name] == cells[name], name


@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_block_rows_stay_fast_under_a_wrapped_caption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrapped caption sets row 1's height; the block rows under it are still written in one go (xlsxwriter's
    row loop took NPU pair 1's workbook from ~56 to ~63 ms), and the bytes are those of xlsxwriter's own writes,
    row 1's height and wrapped captions included."""
    from xlsxwriter.worksheet import Worksheet

    captions = (f"Base Profiling: /work/shared/samples/{PAIR1_BASE}", f"Comparison Profiling: /x/{PAIR1_COMP}")
    sheets = [_edge_sheet(rows=40), small_sheet()]
    loops = []
    real = Worksheet._write_rows
    monkeypatch.setattr(Worksheet, "_write_rows", lambda self: loops.append(self.name) or real(self))
    excel.render(sheets, str(tmp_path / "fast.xlsx"), captions)
    assert loops == []
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render(sheets, str(tmp_path / "cells.xlsx"), captions)
    fast, cells = _parts(tmp_path / "fast.xlsx"), _parts(tmp_path / "cells.xlsx")
    assert b'<row r="1" spans="1:7" ht="' in fast["xl/worksheets/sheet1.xml"]
    assert fast.keys() == cells.keys()
    for name in fast:
        assert fast[name] == cells[name], name

def _column_sheet(name: str = "Columns", rows: int = 60, red_first: bool = False) -> Sheet:
    """Columns for the whole-column paths: int64 (within 2**53, past it, int64's limits, a ratio column),
    float64 (NaN and infinities in plain and ratio columns, values whose .16G differs from repr), and text
    columns of plain texts and blanks (None, NaN, pd.NA, "") as object and str dtypes, texts shared across
    columns and escaped (control characters, look-alikes of the escapes, XML specials, whitespace, np.str_), a
    column of np.str_ and str texts, and a text column with a number in it."""
    texts = ["a", "", None, "b c", " lead", "trail ", "a&b<c>\"d", "ctl\x01_x0001_", "tab\tbed\r\nline", "=1+1",
             "\ufffe", "é中文\U0001F600", np.nan, pd.NA, np.str_("a"), "INF", "x" * 300, "\u3000wide", "nel\x85",
             "\x0bvt", "_x00e9_"]
    floats = [1.5, np.nan, np.inf, -np.inf, 0.0, -0.0, 9.995, 0.1 + 0.2, 1e-300, 123456789.123456789, 2.0**60, 1e16,
              5e-5, -2.25]
    ints = [0, -1, 7, 2**53, -(2**53), 2**53 + 1, 2**62, -(2**63), 2**63 - 1, 10**16, 123456789012345]
    n = rows
    ratio = np.linspace(3.0, -1.0, n) if red_first else np.linspace(-1.0, 3.0, n)
    ratio[5::7] = np.nan
    ratio[3::11] = np.inf
    data = pd.DataFrame({
        "a": pd.Series([texts[i % len(texts)] for i in range(n)], dtype=object),
        "b": np.array([floats[i % len(floats)] for i in range(n)]),
        "c": np.array([ints[i % len(ints)] for i in range(n)], dtype=np.int64),
        "d": ratio,
        "e": np.arange(n, dtype=np.int64) % 4 - (0 if red_first else 1),
        "f": pd.Series([texts[(i * 5) % len(texts)] for i in range(n)], dtype="str"),
        "g": np.arange(n, dtype=np.int64) * 3 - 20,
        "h": pd.Series([["k1", "k2", None][i % 3] for i in range(n)], dtype=object),
        # np.str_ texts (what numpy hands back) with no equal str before them: factorised as their str
        "i": pd.Series([np.str_("np only") if i % 2 == 0 else "plain" for i in range(n)], dtype=object),
        # a text column with a number after its first text: the general path, cell by cell
        "j": pd.Series(["lead text" if i % 3 else 2.5 for i in range(1, n + 1)], dtype=object),
    })
    cols = [Column("Name"), Column("Total", "float"), Column("Calls", "int"), Column("Diff Ratio", "ratio"),
            Column("Diff Total Ratio", "ratio"), Column("Kernel", "bold"), Column("Order Id", "int"), Column("Type"),
            Column("Input Type"), Column("Device")]
    return Sheet(name, cols, data, (0, 3), (4, 7))


@pytest.mark.parametrize("red_first", [False, True])
@pytest.mark.parametrize("constant_memory", [False, True])
@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_whole_column_paths_are_byte_identical_to_cell_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              constant_memory: bool, red_first: bool) -> None:
    """int64 / float64 columns rendered by one comprehension and text columns factorised (``_Texts``) give the
    bytes of xlsxwriter's cell writes, in both modes, with the ratio columns' red cells first or not."""
    if constant_memory:
        monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    sheets = [_column_sheet(red_first=red_first), _edge_sheet("Edge", 40), _column_sheet("Again", 40),
              _column_sheet("Short", 9)]  # under _COLUMN_MIN_ROWS: the per-cell path
    numeric, texts = [], []
    real_numeric, real_of = excel._numeric_cells, excel._Texts.of
    monkeypatch.setattr(excel, "_numeric_cells", lambda *a: numeric.append(a[0].dtype.kind) or real_numeric(*a))
    monkeypatch.setattr(excel._Texts, "of", staticmethod(lambda *a: texts.append(real_of(*a)) or texts[-1]))
    excel.render(sheets, str(tmp_path / "fast.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    assert sorted(set(numeric)) == ["f", "i"] and sum(t is not None for t in texts) >= 6  # the paths really ran
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render(sheets, str(tmp_path / "cells.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    fast, cells = _parts(tmp_path / "fast.xlsx"), _parts(tmp_path / "cells.xlsx")
    assert fast.keys() == cells.keys()
    for name in fast:
        assert fast[name] == cells[name], name


@pytest.mark.parametrize("red_first", [False, True])
@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_streamed_sheets_written_a_chunk_of_rows_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           red_first: bool) -> None:
    """constant_memory: a sheet's rows are rendered and written ``STREAM_ROWS`` at a time, with the bytes of the
    whole sheet in one block and of xlsxwriter's cell writes: a ratio column's red format first used in a later
    chunk (or its plain one, ``red_first``) is numbered as before, and a chunk the block writer leaves (a boolean
    in row 30) goes cell by cell with the rows after it."""
    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    odd = _column_sheet("Odd", 60, red_first)
    odd.data["j"] = pd.Series([True if i == 30 else v for i, v in enumerate(odd.data["j"])], dtype=object)
    sheets = [_column_sheet(rows=60, red_first=red_first), _edge_sheet("Edge", 40, red_first), odd]
    captions = ("Base Profiling: b", "Comparison Profiling: c")
    calls: list[tuple[str, int, int, bool]] = []
    real = excel._FastWorksheet.write_block

    def spy(ws, first_row, values, nrows, *rest):
        calls.append((ws.name, first_row, nrows, done := real(ws, first_row, values, nrows, *rest)))
        return done

    monkeypatch.setattr(excel._FastWorksheet, "write_block", spy)
    monkeypatch.setattr(excel, "STREAM_ROWS", 7)
    excel.render(sheets, str(tmp_path / "chunks.xlsx"), captions)
    starts = [excel.HEADER_ROWS + at for at in range(0, 60, 7)]
    assert [c[1:] for c in calls if c[0] == "Columns"] == [(r, min(7, 63 - r), True) for r in starts]
    assert [c[1:] for c in calls if c[0] == "Edge"] == [(r, min(7, 43 - r), True) for r in starts[:6]]
    # Odd: the chunk of data rows 28-34 falls back at the boolean (sheet row 34); no block is tried after it
    assert [c[1:] for c in calls if c[0] == "Odd"] == [(r, 7, r != 31) for r in starts[:5]]
    monkeypatch.setattr(excel, "STREAM_ROWS", 1 << 20)
    excel.render(sheets, str(tmp_path / "whole.xlsx"), captions)
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render(sheets, str(tmp_path / "cells.xlsx"), captions)
    chunks, whole, cells = (_parts(tmp_path / f"{n}.xlsx") for n in ("chunks", "whole", "cells"))
    assert re.search(rb'<c r="J34" s="\d+" t="b"><v>1</v></c>', chunks["xl/worksheets/sheet3.xml"])
    assert chunks == whole == cells


@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_streamed_blocks_number_a_wrapped_captions_formats_as_cell_writes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """constant_memory mode holds row 3 (the headers) until the next row is written. A caption that wraps has a
    format of its own (wrapped), so the headers' formats are first used in row 3: the block writer numbered its
    data formats before it wrote that row, cell writes after it (cellXfs in another order, every s="" of the
    sheet differing)."""
    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    long = "/a/long/profile/path" * 8
    captions = (f"Base Profiling: {long}", f"Comparison Profiling: {long}")
    sheets = [_column_sheet(rows=40)]
    excel.render(sheets, str(tmp_path / "fast.xlsx"), captions)
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render(sheets, str(tmp_path / "cells.xlsx"), captions)
    fast, cells = _parts(tmp_path / "fast.xlsx"), _parts(tmp_path / "cells.xlsx")
    assert b'wrapText="1"' in fast["xl/styles.xml"] and b'customHeight="1"' in fast["xl/worksheets/sheet1.xml"]
    assert fast == cells


@pytest.mark.parametrize("chunk", [1 << 20, 3, 4])
@pytest.mark.skipif(not excel._BINARY_TEXT, reason="the text layer translates newlines on this platform")
def test_streamed_rows_are_copied_as_xlsxwriter_copies_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            chunk: int) -> None:
    """constant_memory: the streamed rows are copied into the sheet's XML as bytes, with the newline translation
    of xlsxwriter's text-mode copy ("\r\n" and "\r" read as "\n"), a "\r\n" split across chunks included."""
    from xlsxwriter.worksheet import Worksheet

    monkeypatch.setattr(excel, "_COPY_CHUNK", chunk)
    rows = 'a\r\nb\rc\n\r\r\nd é中\r\n<row r="1"/>\r'
    copies = []
    for copy in (excel._FastWorksheet._write_optimized_sheet_data, Worksheet._write_optimized_sheet_data):
        ws = excel._FastWorksheet()
        ws.row_data_filename = str(tmp_path / "rows")
        ws.row_data_fh = open(ws.row_data_filename, "w+", encoding="utf-8")  # noqa: SIM115 - closed by the copy
        ws.row_data_fh.write(rows)
        ws.dim_rowmin = 0
        with open(tmp_path / "sheet.xml", "w", encoding="utf-8") as ws.fh:
            ws.fh.write("<x>")
            copy(ws)
            ws.fh.write("</x>")
        copies.append((tmp_path / "sheet.xml").read_bytes())
        assert not (tmp_path / "rows").exists()
    assert copies[0] == copies[1] and b"\r" not in copies[0]


@pytest.mark.parametrize("chunk", [1024, 3])
@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_shared_strings_writer_is_byte_identical_to_xlsxwriters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               chunk: int) -> None:
    """sharedStrings.xml from ``_FastSharedStrings`` == xlsxwriter's own writer, for every kind of text: torch call
    stacks ("\\r\\n" line ends), other control characters and the non-characters, look-alikes of the escapes,
    rich-text look-alikes, XML specials, whitespace (Unicode too) at either end or made by an escape. ``chunk``
    3: texts scanned three at a time, so some chunks need no look and others do."""
    from xlsxwriter.packager import Packager

    monkeypatch.setattr(excel, "_SST_CHUNK", chunk)

    texts = ["a.py(1): f;\r\nb.py(2): g;\r\n", "\r", "x\r", "\rx", "_x000D_", "a_x00Fe_b", "_x12_", "a\x0bb\x1f",
             "<r>rich</r>", "<r>rich\r</r>", "\ufffe", "end\uffff", "\u3000wide", "nel\x85", "\tt", "t\n", " ", "",
             "a&b<c>\"d", "é中文\U0001F600", "plain"]
    data = pd.DataFrame({"a": texts, "b": texts[::-1]})
    sheet = Sheet("Texts", [Column("Name"), Column("Other")], data, (0, 0), (1, 1))
    other = _edge_sheet("Edge")
    excel.render([sheet, other], str(tmp_path / "fast.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    monkeypatch.setattr(excel._FastPackager, "_write_shared_strings_file", Packager._write_shared_strings_file)
    excel.render([sheet, other], str(tmp_path / "own.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    fast, own = _parts(tmp_path / "fast.xlsx"), _parts(tmp_path / "own.xlsx")
    assert fast.keys() == own.keys() and "xl/sharedStrings.xml" in fast
    for name in fast:
        assert fast[name] == own[name], name
    assert b'<t xml:space="preserve">a.py(1): f;_x000D_\nb.py(2): g;_x000D_\n</t>' in fast["xl/sharedStrings.xml"]


def test_column_arrays_read_as_the_series_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """The arrays ``_write_sheet`` reads a sheet's cells from give what each column's Series gives (``tolist``,
    ``dtype``, ``to_numpy`` of int64 / float64), for every kind of column a sheet holds; also on a pandas
    without ``_iter_column_arrays``."""
    frame = pd.DataFrame({
        "int": np.array([1, -2, 3], np.int64), "float": [0.5, np.nan, np.inf], "obj": pd.Series(["a", None, 1.5],
                                                                                          dtype=object),
        "text": pd.array(["x", None, "z"], dtype=pd.StringDtype()), "flag": [True, False, True],
        "when": pd.to_datetime(["2026-01-01", "2026-01-02", None]), "cat": pd.Categorical(["u", "v", "u"])})
    frame.columns = ["dup", "dup", "obj", "text", "flag", "when", "cat"]  # sheets may repeat a header
    want = [(col.tolist(), col.dtype) for _, col in frame.items()]
    for arrays in (excel._column_arrays(frame), None):
        if arrays is None:
            monkeypatch.delattr(pd.DataFrame, "_iter_column_arrays")
            arrays = excel._column_arrays(frame)
        assert len(arrays) == len(want)
        for a, (values, dtype), (_, col) in zip(arrays, want, frame.items(), strict=True):
            assert a.dtype == dtype and repr(a.tolist()) == repr(values)
            if dtype in excel._FAST_DTYPES:
                assert np.array_equal(a, col.to_numpy(), equal_nan=True)
            if isinstance(a, np.ndarray) and hasattr(pd.DataFrame, "_iter_column_arrays"):
                assert not a.flags.writeable  # a write into the sheet's cells fails


def test_control_test_of_a_chunk_agrees_with_the_pattern() -> None:
    """``_has_control`` (the shared-strings writer's one look at a chunk) answers as ``_SST_CONTROL`` for every
    character of the Basic Multilingual Plane (a lone surrogate included) and one above it, alone and at either
    end or the middle of a long ASCII call stack."""
    stack = "a.py(1): f;\n\tb.py(2): g;\n" * 2000
    for code in [*range(0x10000), 0x1F600]:
        ch = chr(code)
        expected = excel._SST_CONTROL.search(ch) is not None
        assert excel._has_control(ch) is expected, hex(code)
        if code < 0x100 or code in (0xFFFD, 0xFFFE, 0xFFFF, 0xD800):
            for text in (ch + stack, stack + ch, stack[:999] + ch + stack[999:]):
                assert excel._has_control(text) is expected, hex(code)
    assert not excel._has_control(stack) and not excel._has_control("")


@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_block_writer_int_ratios_are_red_as_cell_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The int fast path is for columns without red cells (Order Id, counts): an int in a ratio column takes the
    general path, red above 1 as xlsxwriter's cell writes make it."""
    sheet = _edge_sheet("Ints")
    sheet.data["d"] = [(i % 5) - 2 for i in range(len(sheet.data))]  # -2 .. 2
    blocks = []
    real = excel._FastWorksheet.write_block
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: blocks.append(real(*a)) or True)
    excel.render([sheet], str(tmp_path / "fast.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    assert blocks == [True]
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render([sheet], str(tmp_path / "cells.xlsx"), ("Base Profiling: b", "Comparison Profiling: c"))
    assert _parts(tmp_path / "fast.xlsx") == _parts(tmp_path / "cells.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "fast.xlsx")["Ints"]
    d = [ws.cell(row=4 + i, column=4) for i in range(5)]
    assert [c.value for c in d] == [-2, -1, 0, 1, 2]
    assert [c.fill.fgColor.rgb == "FFFF0000" for c in d] == [False, False, False, False, True]


def test_block_writer_values_read_back(tmp_out: Path) -> None:
    """What a reader sees: text verbatim (never a formula), red ratio cells, INF, blanks, cut long text."""
    sheet = _edge_sheet("KernelCompare", 16)
    path = excel.write_workbook(fake_result([sheet]), tmp_out)
    ws = openpyxl.load_workbook(path)["KernelCompare"]
    col_a = [ws.cell(row=4 + i, column=1).value for i in range(16)]
    assert col_a[:3] == ["x", None, None] and col_a[3] == "INF" and col_a[9] == "=1+1"
    assert ws.cell(row=4 + 9, column=1).data_type == "s"
    assert col_a[4:7] == [" lead", "trail ", "a&b<c>\"d"] and col_a[7].startswith("ctl")  # xlsxwriter's _xHHHH_
    assert len(col_a[12]) == 32_767 and col_a[11] == "é中文"
    red = "FFFF0000"
    d = [ws.cell(row=4 + i, column=4) for i in range(10)]
    assert [c.value for c in d[:4]] == [0.5, 1.5, "INF", "INF"] and d[6].value == "-INF"
    assert [c.fill.fgColor.rgb == red for c in d[:4]] == [False, True, True, True]
    assert d[1].number_format == "0.00%" and d[0].number_format == "0.00%" and d[9].value == "INF"
    assert d[4].value is None and d[4].border.left.style == "thin"
    assert ws.cell(row=4, column=3).value == -3 and ws.cell(row=4, column=3).number_format == "#,##0"


@pytest.mark.parametrize("constant_memory", [False, True])
def test_rich_text_lookalike_is_written_as_text(tmp_out: Path, monkeypatch: pytest.MonkeyPatch,
                                                constant_memory: bool) -> None:
    """xlsxwriter would paste "<r>...</r>" into the XML as rich text; profile text must stay text."""
    if constant_memory:
        monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 0)
    evil = '<r><t>a</t></r><r><f>SUM(1)</f><t>b</t></r>'
    rows = [[1, evil, 1.0, 2.0, 2.0], [2, "<r>plain</r>", 1.0, 1.0, 1.0]]
    path = excel.write_workbook(fake_result([small_sheet(rows=rows)]), tmp_out)
    ws = openpyxl.load_workbook(path)["KernelCompare"]
    assert ws["B4"].value == evil and ws["B5"].value == "<r>plain</r>" and ws["B4"].font.b
    assert read_xlsx(path, header=2)["Kernel"].tolist() == [evil, "<r>plain</r>"]


@pytest.mark.parametrize("constant_memory", [False, True])
def test_rich_text_lookalike_over_the_cell_limit(tmp_out: Path, monkeypatch: pytest.MonkeyPatch,
                                                 constant_memory: bool) -> None:
    """A rich-text lookalike opening a row (the first cell of a streamed row) and one over Excel's 32,767
    characters: written as text, the long one cut to the limit as any long text (the end tag cut off)."""
    if constant_memory:
        monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 0)
    long = "<r>" + "x" * 40_000 + "</r>"
    rows = [["<r>1</r>", long, 1.0, 2.0, 2.0], ["<r>2</r>", "<r>y</r>", 1.0, 1.0, 1.0]]
    path = excel.write_workbook(fake_result([small_sheet(rows=rows)]), tmp_out)
    ws = openpyxl.load_workbook(path)["KernelCompare"]
    assert [ws["A4"].value, ws["A5"].value, ws["B5"].value] == ["<r>1</r>", "<r>2</r>", "<r>y</r>"]
    assert ws["B4"].value == long[:excel._STR_MAX] and len(ws["B4"].value) == 32_767


def test_rows_beyond_excel_are_cut_with_a_warning(tmp_out: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """A sheet with more rows than a worksheet holds (1,048,576 with the 3 header rows; 5 here): the rows that
    fit are written, the rest left out, said in one warning."""
    import logging

    monkeypatch.setattr(excel, "MAX_ROWS", excel.HEADER_ROWS + 2)
    rows = [[i, f"k{i}", 1.0, 2.0, 2.0] for i in range(1, 5)]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        path = excel.write_workbook(fake_result([small_sheet(rows=rows)]), tmp_out)
    assert caplog.messages == ["Sheet KernelCompare has 4 rows; Excel holds at most 2, the rest are not written."]
    assert read_xlsx(path, header=2)["Kernel"].tolist() == ["k1", "k2"]


def test_workbook_over_4_gb_is_one_error(tmp_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """xlsxwriter's FileSizeError (a part over 4 GB: no ZIP64) is a write error saying so; nothing is left."""
    import xlsxwriter
    from xlsxwriter.exceptions import FileSizeError

    from msprof_compare.errors import ProfileError

    def too_big(self):
        raise FileSizeError("Filesize would require ZIP64 extensions.")

    monkeypatch.setattr(xlsxwriter.Workbook, "close", too_big)
    with pytest.raises(ProfileError) as info:
        excel.write_workbook(fake_result([small_sheet()]), tmp_out)
    assert info.value.message == "cannot write the workbook: over 4 GB, the limit of an xlsx file without ZIP64"
    assert list(tmp_out.iterdir()) == []


def _reference_pairs() -> list[tuple[str, str, str, str]]:
    """(pair, base, comparison, workbook) of every reference run that wrote a workbook, from its README."""
    readme = Path(__file__).resolve().parents[2] / "shared" / "reference-outputs" / "README.md"
    if not readme.is_file():
        return []
    out = []
    for sec in re.split(r"\n## ", readme.read_text(encoding="utf-8"))[1:]:
        bp = re.search(r"base \(`-bp`\): `([^`]+)`", sec)
        d = re.search(r"comparison \(`-d`\): `([^`]+)`", sec)
        wb = re.search(r"output: `([^`]+\.xlsx)`", sec)
        if bp and d and wb:
            out.append((sec.split(".", 1)[0].strip(), bp.group(1), d.group(1), wb.group(1)))
    return out


@pytest.mark.parametrize(("pair", "base", "comparison", "workbook"), _reference_pairs() or [("none", "", "", "")])
def test_default_run_writes_the_reference_sheets(pair: str, base: str, comparison: str, workbook: str,
                                                 samples: Path, reference_outputs: Path) -> None:
    """A default run (every comparison) writes the sheets the original wrote, in its order, besides our
    Summary; e.g. Level0 kernels (all of Type N/A) give no KernelCompare sheet. The original's blank
    'Sheet1' of a run without rows (9c) is no sheet for us (docs/differences.md)."""
    if pair == "none":
        pytest.skip("reference outputs not found")
    from msprof_compare import compare

    ref = openpyxl.load_workbook(reference_outputs / workbook, read_only=True)
    try:
        expected = [] if ref.sheetnames == ["Sheet1"] else ref.sheetnames
    finally:
        ref.close()
    # pair 8 (two bare trace_view.json files) has no memory record on either side: the original's memory sheets
    # hold 0 in every cell, ours are left out (docs/differences.md)
    left_out = {"8": {"MemoryCompareStatistic", "MemoryCompare"}}.get(pair, set())
    expected = [n for n in expected if n not in left_out]
    result = compare(str(samples / base), str(samples / comparison))
    assert [n for n in result.sheet_names if n != "Summary"] == expected


def test_long_text_cut_matches_xlsxwriter() -> None:
    """Our cut of a cell over Excel's 32,767 UTF-16 units gives xlsxwriter's result (never splitting a character
    above U+FFFF), without its per-character loop; astral characters around the limit, and random mixes."""
    import random

    from xlsxwriter.utility import _utf16_truncate as reference

    limit = excel._STR_MAX
    cases = ["a" * 40_000, "é" * 40_000, "a" * (limit - 1) + "😀" + "b", "a" * limit + "😀", "😀" * 20_000,
             "a" * (limit - 2) + "😀😀", "中" * limit, "a" * limit, ""]
    rnd = random.Random(7)
    alphabet = ["a", "é", "中", "😀", "\U0010ffff"]
    cases += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(16_000, 34_000))) for _ in range(30)]
    for text in cases:
        assert excel._utf16_truncate(text, limit) == reference(text, limit)


def test_index_indent_counts_tabs_not_spaces(reference_outputs: Path, tmp_out: Path) -> None:
    """The Index cell's indent is its number of tab characters (reference-2 §8.5), not of all leading blanks: a
    communication group whose name starts with a space keeps indent 1. Edit: the original's OverallMetrics of
    pair 1 with its "\\tGroup 0 Communication" row renamed "\\t Group 0 Communication" (no sample has such a
    group name); 1 tab -> indent 1, as the unedited row has."""
    sheet = overall_sheet_from_reference(reference_outputs / PAIR1 / "performance_comparison_result.xlsx")
    index = sheet.data.iloc[:, 0].tolist()
    at = index.index("\tGroup 0 Communication")
    sheet.data.iloc[at, 0] = "\t Group 0 Communication"
    path = excel.write_workbook(fake_result([sheet], PAIR1_BASE, PAIR1_COMP), tmp_out)
    cell = openpyxl.load_workbook(path)["OverallMetrics"].cell(at + 4, 1)
    assert (cell.value, cell.alignment.indent) == ("\t Group 0 Communication", 1)


def test_long_captions_wrap_in_a_taller_row(reference_outputs: Path, tmp_out: Path) -> None:
    """A caption longer than its merged range was cut at the range's edge (the original's layout): with the paths
    pair 1's inputs have under /work/shared/samples, OverallMetrics (B1:D1, E1:G1: 50 units each) showed
    'Base Profiling: /work/shared/samples/msinsight/test/data/pytorch/tex' and 'Comparison Profiling:
    /work/shared/samples/msinsight/test/data/pyto', which do not tell the runs apart. Such captions wrap, in a
    row 1 tall enough for their lines: 'Base Profiling:' on one and the 77-character path on two, as LibreOffice
    renders it (3 x 15 points). Captions that fit keep the original's row and cells (no wrap, default height)."""
    sheet = overall_sheet_from_reference(reference_outputs / PAIR1 / "performance_comparison_result.xlsx")
    long_paths = (f"/work/shared/samples/{PAIR1_BASE}", f"/work/shared/samples/{PAIR1_COMP}")
    (tmp_out / "long").mkdir()
    (tmp_out / "short").mkdir()
    for paths, folder, height, wrap in ((long_paths, "long", 45, True), (("a/b", "c/d"), "short", None, False)):
        path = excel.write_workbook(fake_result([sheet], *paths), tmp_out / folder)
        ws = openpyxl.load_workbook(path)["OverallMetrics"]
        assert (ws["B1"].value, ws["E1"].value) == (f"Base Profiling: {paths[0]}", f"Comparison Profiling: {paths[1]}")
        assert ws.row_dimensions[1].height == height, folder
        assert (bool(ws["B1"].alignment.wrap_text), bool(ws["E1"].alignment.wrap_text)) == (wrap, wrap), folder
        assert not any(c.alignment.wrap_text for c in ws[3]) and ws.row_dimensions[3].height is None
        assert sorted(map(str, ws.merged_cells.ranges)) == ["B1:D1", "E1:G1"]


def test_a_two_line_caption_gets_a_two_line_row(reference_outputs: Path, tmp_out: Path) -> None:
    """A caption that needs exactly two lines wraps in a row of 2 x 15 points, not the default height that shows
    its first line only: in OverallMetrics' E1:G1 (50 units: 357 px) 'Comparison Profiling:' (about 160 px of bold
    Arial) and a 36-character path (about 270 px: 'x' is 0.5 em) do not share a line, and the path fits one."""
    sheet = overall_sheet_from_reference(reference_outputs / PAIR1 / "performance_comparison_result.xlsx")
    paths = ("/data/" + "x" * 30, "/data/" + "y" * 30)
    path = excel.write_workbook(fake_result([sheet], *paths), tmp_out)
    ws = openpyxl.load_workbook(path)["OverallMetrics"]
    assert ws["E1"].value == f"Comparison Profiling: {paths[1]}"
    assert ws.row_dimensions[1].height == 30
    assert ws["B1"].alignment.wrap_text and ws["E1"].alignment.wrap_text


def test_caption_lines_follow_arial_bold_widths() -> None:
    """Row 1 is as tall as Excel's wrap of the caption needs, not more: 'Comparison Profiling:' (about 160 px of
    bold 11-point Arial) and pair 1's 77-character path (about 550 px: narrow '/', 't', 'i', 'l' among its
    letters) need one line in CommunicationCompare's I1:O1 (123 units, 896 px), two in ApiCompare's C1:F1 (4 x 20
    units, 580 px: the path alone fits a line) and KernelCompare's D1:H1 (5 x 20 units), three in
    OverallMetrics' E1:G1 (20 + 20 + 10 units: the path takes two lines). An estimate of 8.2 px a character, a
    digit's width, made ApiCompare's row three lines tall."""
    caption = f"Comparison Profiling: /work/shared/samples/{PAIR1_COMP}"
    widths = {"CommunicationCompare": (25, 20, 10, 17, 17, 17, 17), "ApiCompare": (20,) * 4,
              "KernelCompare": (20,) * 5, "OverallMetrics": (20, 20, 10)}
    lines = {name: excel._caption_lines(caption, [Column("x", "int", w) for w in ws]) for name, ws in widths.items()}
    assert lines == {"CommunicationCompare": 1, "ApiCompare": 2, "KernelCompare": 2, "OverallMetrics": 3}
    assert excel._caption_lines("Base Profiling: a/b", [Column("x", "int", 10)]) == 3  # 67 px: a word a line
    assert excel._caption_lines("中" * 30, [Column("x", "int", 20)]) == 4  # a wide character is an em
    # the cell's padding is no room: eight x's (8 x 0.556 em x 14.67 px x 1.03 = 67.2 px) overflow a width-10
    # column's 75 px less 8, seven (58.8 px) fit
    assert [excel._caption_lines("x" * n, [Column("x", "int", 10)]) for n in (7, 8)] == [1, 2]

def test_comparator_tables_carry_an_autofilter(reference_outputs: Path, tmp_out: Path) -> None:
    """Users filter the tables on their header row (a diff > 0, one operator): every comparator table has an
    autofilter over its header row and data rows, A3 to its last cell, so the buttons are there on opening.
    OverallMetrics, whose rows are a hierarchy of categories, has none; the frame pandas reads is unchanged."""
    sheet = overall_sheet_from_reference(reference_outputs / PAIR1 / "performance_comparison_result.xlsx")
    path = excel.write_workbook(fake_result([small_sheet(), sheet]), tmp_out)
    wb = openpyxl.load_workbook(path)
    assert wb["KernelCompare"].auto_filter.ref == "A3:E5"
    assert wb["OverallMetrics"].auto_filter.ref is None
    frame = read_xlsx(path, sheet_name="KernelCompare", header=2)
    assert frame.shape == (2, 5) and frame["Kernel"].tolist() == ["TransData", "MatMul"]


#: The bert pair's comparator sheets as they print on landscape Letter (the narrower of Letter and A4) with 0.3 in
#: side margins: 10.4 in = 748.8 pt across. (pages across, columns repeated on each page), worked out by hand from
#: the column widths below. OverallMetrics' 926.25 pt print one page wide at 81 %; every other sheet would print
#: at 38-57 %, so it is fitted to the fewest pages across that print at 70 % (1,069.7 pt of columns a page).
_BERT_PRINT = {"OverallMetrics": (1, None), "ModuleCompareStatistic": (3, "$A:$E"), "ModuleCompare": (3, "$A:$D"),
               "MemoryCompareStatistic": (2, "$A:$B"), "MemoryCompare": (2, "$A:$A"), "ApiCompare": (2, "$A:$B")}
_PAGE_POINTS = 10.4 * 72


def _bert_workbook(out: Path) -> str:
    from msprof_compare.api import compare

    repo = Path(__file__).resolve().parents[1]
    return compare(str(repo / "sample_data" / "bert-small_h100.json.gz"),
                   str(repo / "sample_data" / "bert-small_mi300.json.gz")).to_excel(str(out))


def _column_points(sheet_xml: str) -> list[float]:
    """Printed widths of a sheet's columns at 100 %, from its ``<col>`` widths by ECMA-376's rule (Part 1,
    18.3.1.13): pixels = trunc((256 w + trunc(128 / 7)) / 256 * 7) for Calibri 11's 7-pixel digit, 0.75 pt a
    pixel."""
    widths: dict[int, float] = {}
    for lo, hi, w in re.findall(r'<col min="(\d+)" max="(\d+)" width="([\d.]+)"', sheet_xml):
        for c in range(int(lo), int(hi) + 1):
            widths[c] = math.trunc((256 * float(w) + math.trunc(128 / 7)) / 256 * 7) * 0.75
    return [widths[c] for c in range(1, max(widths) + 1)]


@pytest.mark.parametrize("constant_memory", [False, True])
def test_comparator_sheets_print_legibly_with_their_headers(tmp_out: Path, monkeypatch: pytest.MonkeyPatch,
                                                            constant_memory: bool) -> None:
    """A printed comparator sheet keeps its headers and its rows' names on every page, at a size that can be
    read: without a page setup LibreOffice printed the bert pair's (sample_data) workbook on 104 portrait pages,
    its 171-row ModuleCompareStatistic on 37 of them three columns wide, most without the header row or the
    module name of their figures; fitted one page wide, that sheet printed at 38 % (4-point text). Each comparator
    sheet is landscape, repeats rows 1-3 (captions, headers), prints its table, A1 to the last cell pandas reads,
    one page wide where that is 70 % or more, else as many pages wide as 70 % needs, with its name columns on
    each and the pages of a band of rows together (over, then down). Summary prints one page wide. Both writers
    (constant_memory for large sheets) set it up alike."""
    import zipfile

    if constant_memory:
        monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 0)
    path = _bert_workbook(tmp_out)
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["Summary", *_BERT_PRINT]
    with zipfile.ZipFile(path) as z:
        book = z.read("xl/workbook.xml").decode()
        xml = {name: z.read(f"xl/worksheets/sheet{i}.xml").decode() for i, name in enumerate(wb.sheetnames, 1)}
    for i, (name, (pages, columns)) in enumerate(_BERT_PRINT.items(), 1):
        ws = wb[name]
        frame = read_xlsx(path, sheet_name=name, header=2)
        last = openpyxl.utils.get_column_letter(frame.shape[1])
        setup = re.search(r"<pageSetup [^>]*>", xml[name]).group(0)
        assert 'orientation="landscape"' in setup and 'fitToHeight="0"' in setup, name
        assert re.search(r'fitToWidth="(\d+)"', setup) is None if pages == 1 else f'fitToWidth="{pages}"' in setup
        assert ('pageOrder="overThenDown"' in setup) == (pages > 1), name
        assert '<pageSetUpPr fitToPage="1"/>' in xml[name], name
        titles = re.search(rf'<definedName name="_xlnm.Print_Titles" localSheetId="{i}">([^<]*)<', book).group(1)
        assert titles == (f"{name}!$1:$3" if columns is None else f"{name}!{columns},{name}!$1:$3"), name
        assert ws.print_area == f"'{name}'!$A$1:${last}${3 + len(frame)}", name
        # a loose page names its sheet (&A) and its place (&P of &N); the sides are narrower than Excel's 0.7 in
        assert (ws.oddFooter.left.text, ws.oddFooter.right.text) == ("&A", "Page &P of &N"), name
        assert ws.page_margins.left == ws.page_margins.right == 0.3, name
        # by hand: one page wide where 748.8 pt hold the columns at 70 %; else fewer pages than given cannot hold
        # the columns that do not repeat (each page less the repeated ones holds 1,069.7 pt at 70 %)
        widths = _column_points(xml[name])
        assert len(widths) == frame.shape[1], name
        assert (_PAGE_POINTS / sum(widths) >= 0.7) == (pages == 1), name
        if pages > 1:
            key = openpyxl.utils.column_index_from_string(columns.split(":")[1][1:])
            room = _PAGE_POINTS / 0.7 - sum(widths[:key])
            assert (pages - 1) * room < sum(widths[key:]) <= pages * room, name
    # ModuleCompareStatistic page by page: A:E (570 pt: Order Id, Module Class, Level, Name, Operator Name) on
    # each, then F:J (A:J 1,061.25 pt; K's 108.75 would pass 1,069.7), K:O (1,061.25 pt; P's 82.5 would pass),
    # P:R (975 pt): three pages, at 1,069.7 / 1,061.25 of 70 % (70.6 %) in Excel (LibreOffice with DejaVu Sans for
    # Calibri: 3/4 of it, its columns 4/3 as wide)
    widths = _column_points(xml["ModuleCompareStatistic"])
    assert sum(widths) == 1957.5 and sum(widths[:5]) == 570
    assert [sum(widths[:10]), 570 + sum(widths[10:15]), 570 + sum(widths[15:])] == [1061.25, 1061.25, 975]
    assert sum(widths[:11]) > _PAGE_POINTS / 0.7 and 570 + sum(widths[10:16]) > _PAGE_POINTS / 0.7
    assert len(wb["ModuleCompareStatistic"]["A"]) == 3 + 171
    summary = wb["Summary"]  # its own setup, one page wide (tests/test_chart_rules.py), no repeated rows
    assert summary.print_title_rows is None and summary.page_setup.fitToHeight == 0


def test_one_page_wide_down_to_70_percent_and_name_columns_that_leave_no_room(tmp_out: Path) -> None:
    """The 70 % line, by hand: ten 20-character columns (145 px, 108.75 pt each: 1,087.5 pt) print one page wide
    at 748.8 / 1,087.5 = 68.9 %, so over two pages with Order Id repeated; nine and a 15-character one (1,061.25 pt)
    at 70.6 %, one page. Name columns wider than a page at 70 % (1,069.7 pt; five of 60 characters: 1,593.75 pt)
    are not repeated, no page would have room for the figures: three 60s (956.25 pt, a fourth makes 1,275), two
    60s and three 20s (963.75 pt, a fourth 20 makes 1,072.5), the last 20: three pages. Two 50s (532.5 pt) leave
    room beside them for a 20 (641.25 pt) but not for the 120 (633.75 pt: 1,166.25), so they are not repeated
    either: 50, 50, 20 (641.25 pt; the 120 makes 1,275), then 120, 20, 20 (851.25 pt): two pages. A first column
    wider than a page at 70 % (210 characters, 1,106.25 pt) takes a page of its own, the three 20s the next: two
    pages (so LibreOffice prints both, at 100 %, the wide column cut at the page's edge)."""
    import zipfile

    def sheet(name: str, widths: list[float], base: int) -> Sheet:
        cols = [Column(f"C{j}", "float", w) for j, w in enumerate(widths)]
        data = pd.DataFrame([[1.0] * len(cols)], columns=[c.header for c in cols])
        return Sheet(name, cols, data, (base, base + 1), (base + 2, base + 3))

    sheets = [sheet("Narrow", [20] * 9 + [15], 1), sheet("Wide", [20] * 10, 1), sheet("Names", [60] * 5 + [20] * 4, 5),
              sheet("Mixed", [50, 50, 20, 120, 20, 20], 2), sheet("First", [210, 20, 20, 20], 0)]
    path = excel.write_workbook(fake_result(sheets), tmp_out)
    with zipfile.ZipFile(path) as z:
        book = z.read("xl/workbook.xml").decode()
        setups = [re.search(r"<pageSetup [^>]*>", z.read(f"xl/worksheets/sheet{i}.xml").decode()).group(0)
                  for i in (1, 2, 3, 4, 5)]
    assert 'fitToWidth' not in setups[0] and 'pageOrder' not in setups[0]
    assert 'fitToWidth="2"' in setups[1] and 'pageOrder="overThenDown"' in setups[1]
    assert 'fitToWidth="3"' in setups[2] and 'pageOrder="overThenDown"' in setups[2]
    assert 'fitToWidth="2"' in setups[3] and 'fitToWidth="2"' in setups[4]
    titles = dict(re.findall(r'<definedName name="_xlnm.Print_Titles" localSheetId="\d+">(\w+)!([^<]*)<', book))
    assert titles == {"Narrow": "$1:$3", "Wide": "$A:$A,Wide!$1:$3", "Names": "$1:$3", "Mixed": "$1:$3",
                      "First": "$1:$3"}


def test_a_caption_is_merged_over_the_part_of_its_half_that_prints_on_one_page(tmp_out: Path) -> None:
    """By hand: ten 20-character columns (108.75 pt each; 145 pt in LibreOffice's DejaVu Sans for Calibri), base
    B:E, comparison F:I, A repeated, print two pages across (A:I 978.75 pt fit a page at 70 %, 1,069.7 pt; A:J do
    not). Fitted to two pages, Excel prints at 100 % with A:F on the first (652.5 pt; A:G 761.25 pt pass 748.8),
    or from 98 % (764.1 pt a page) with A:G; DejaVu Sans at 86 %, 870.7 pt a page, with A:F (870 pt), down to 83 %
    (902.2 pt) alike. So a page may start at G or at H, inside the comparison half: its caption is merged over the
    half's widest part that no such break splits, H:I (G:G and F:F are narrower), F1 and G1 filled yellow with no
    text. The base half B:E prints whole on the first page and keeps its merge; a sheet one page wide keeps both."""
    def sheet(name: str, n: int) -> Sheet:
        cols = [Column(f"C{j}", "float", 20) for j in range(n)]
        return Sheet(name, cols, pd.DataFrame([[1.0] * n], columns=[c.header for c in cols]), (1, 4), (5, 8))

    wide, narrow = sheet("Wide", 10), sheet("Narrow", 9)
    assert excel._print_across(wide) == (2, 1) and excel._print_across(narrow) == (1, 0)
    assert excel.caption_range(wide, 5, 8) == (7, 8) and excel.caption_range(wide, 1, 4) == (1, 4)
    assert excel.caption_range(narrow, 5, 8) == (5, 8)
    wb = openpyxl.load_workbook(excel.write_workbook(fake_result([wide, narrow]), tmp_out))
    ws = wb["Wide"]
    assert sorted(map(str, ws.merged_cells.ranges)) == ["B1:E1", "H1:I1"]
    assert ws["B1"].value.startswith("Base Profiling: ") and ws["H1"].value.startswith("Comparison Profiling: ")
    assert [ws[c].value for c in ("F1", "G1")] == [None, None]
    assert [ws[c].fill.fgColor.rgb for c in ("F1", "G1", "H1")] == ["FFFFFF00"] * 3
    assert caption_bands(ws) == ["B1:E1", "F1:I1"]
    assert sorted(map(str, wb["Narrow"].merged_cells.ranges)) == ["B1:E1", "F1:I1"]


@pytest.mark.skipif(shutil.which("soffice") is None or shutil.which("pdftotext") is None,
                    reason="needs soffice and pdftotext (apt-get install libreoffice-calc poppler-utils)")
def test_wide_sheet_pages_carry_the_row_names_in_libreoffice(tmp_out: Path, tmp_path: Path) -> None:
    """LibreOffice prints the bert pair's ModuleCompareStatistic three pages across, each band of rows on three
    consecutive pages that all start with Order Id .. Operator Name and its rows' module names; the last of
    each three ends with the call stacks. Fitted one page wide it printed 2 pages (at 38 %)."""
    import subprocess

    path = Path(_bert_workbook(tmp_out))
    profile = tmp_path / "profile"
    subprocess.run(["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{profile}",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(path)],
                   check=True, capture_output=True, timeout=300)
    pdf = str(tmp_path / f"{path.stem}.pdf")
    text, raw = (subprocess.run(["pdftotext", mode, pdf, "-"], check=True, capture_output=True, text=True).stdout
                 for mode in ("-layout", "-raw"))
    # a sheet's pages by its footer, read in drawing order (-raw: "ModuleCompareStatistic Page 7 of 40"), their
    # text as laid out: the lines of a call stack past its one-line row are clipped in the picture but stay in
    # the PDF's text, where -layout may set them across the footer's line ("Page forward;", with Carlito)
    def sheet_pages(name: str) -> list[str]:
        return [p for p, r in zip(text.split("\f"), raw.split("\f"), strict=True)
                if re.search(rf"^{name} Page \d+ of \d+$", r, re.M)]

    pages = sheet_pages("ModuleCompareStatistic")
    assert len(pages) % 3 == 0 and len(pages) >= 6
    first_row = re.compile(r"^1\s+nn\.Module", re.M)
    for k, page in enumerate(pages):
        assert all(h in page for h in ("Order Id", "Module Class", "Module Level", "Module Name", "Operator Name"))
        assert ("Comparison Call Stack" in page) == (k % 3 == 2), k
        assert bool(first_row.search(page)) == (k < 3), k
    # MemoryCompare's base half opens with its Operator Name, where the base caption's merge starts: repeated, it
    # printed "Base Profiling: <cut path>" against the rest of the comparison's caption on each band's second page
    # (read as base = the comparison's path); Order Id alone repeats, the base caption is on first pages only
    pages = sheet_pages("MemoryCompare")
    assert len(pages) % 2 == 0 and len(pages) >= 2
    for k, page in enumerate(pages):
        assert "Order Id" in page and ("Base Profiling" in page) == (k % 2 == 0), k
        # its half, G:K, is broken after G (Excel's widths: after H), so its caption is merged over H:K, on the
        # second page; over G:K it printed cut, "Comparison Profiling: /.../sam" against the first page's edge
        assert ("Comparison Profiling" in page) == (k % 2 == 1), k
    # no caption runs past a page's edge: the words above the header row (rows 1 and 2; "Order Id" or "Top"
    # opens it on every page) lie within the side margins (0.3 in, 21.6 pt). Merged over its half, the comparison
    # caption of every sheet printed two or three pages across was cut at a page's edge
    bbox = subprocess.run(["pdftotext", "-bbox", pdf, "-"], check=True, capture_output=True, text=True).stdout
    cut = []
    for number, page in enumerate(bbox.split("<page ")[1:], 1):
        width = float(re.search(r'width="([\d.]+)"', page).group(1))
        words = [(float(x0), float(y0), float(x1), w) for x0, y0, x1, w in re.findall(
            r'<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="[-\d.]+">([^<]*)</word>', page)]
        header = min((y0 for _, y0, _, w in words if w in ("Order", "Top")), default=None)
        if header is None:  # Summary and OverallMetrics pages: one page wide
            continue
        cut += [(number, w) for x0, y0, x1, w in words if y0 < header and (x0 < 21.1 or x1 > width - 21.1)]
    assert len(bbox.split("<page ")) > 20 and cut == [], cut


# --------------------------------------------------------------------------- every cell against reference-2 §8
# The layout of each sheet as reference-2 states it (§2.6, §2.7, §3.7, §3.8, §4.3, §5.3, §5.4, §6.1, §6.2, §7;
# OverallMetrics reference-1 §9.2): (header, number format or "B" for bold text, width) per column, and the two
# merged caption ranges of row 1. Read with zipfile / ElementTree alone, and held against the original's
# workbook too: the table is the spec's, not the package's.
_I, _F, _R, _B = "#,##0", "#,##0.00", "0.00%", "B"
_OP_SIDE = [("Operator Name", _B, 30), ("Input Shape", _I, 20), ("Input Type", _I, 20), ("Kernel Details", _I, 20),
            ("Device Duration(us)", _F, 20)]
_MEM_SIDE = [(h.replace("Kernel Details", "Allocated Details").replace("Device Duration(us)", "Size(KB)"), f, w)
             for h, f, w in _OP_SIDE]
_COMM_SIDE = [("Communication OP Name", _B, 25), ("Task Name", _I, 20), ("Calls", _I, 10),
              *((f"{k} Duration(us)", _F, 17) for k in ("Total", "Avg", "Max", "Min"))]
_KER_SIDE = [*((f"{k} Duration(us)", _F, 20) for k in ("Total", "Avg", "Max", "Min")), ("Calls", _I, 20)]
_API_SIDE = [("Total Duration(ms)", _F, 20), ("Self Time(ms)", _F, 20), ("Avg Duration(ms)", _F, 20), ("Calls", _I, 20)]
_MOD_HEAD = [("Order Id", _I, 10), ("Module Class", _I, 20), ("Module Level", _I, 15), ("Module Name", _I, 35)]
_MOD_TAIL = [("Diff Total Ratio", _R, 15), ("Base Call Stack", _I, 30), ("Comparison Call Stack", _I, 30)]
_MS_SIDE = [("Kernel Details", _I, 20), ("Device Self Time(ms)", _F, 20), ("Number", _I, 10),
            ("Device Total Time(ms)", _F, 20)]
_MD_SIDE = [("Operator Name", _I, 25), ("Kernel Details", _I, 20), ("Device Self Time(us)", _F, 20),
            ("Device Total Time(us)", _F, 20)]
_OM_SIDE = [("Duration(ms)", _F, 20), ("Duration Ratio", _R, 20), ("Number", _I, 10)]
LAYOUT = {
    "OverallMetrics": ([("Index", _I, 40), *_OM_SIDE, *_OM_SIDE, ("Diff Duration(ms)", _F, 20), ("Diff Ratio", _R, 10)],
                       ["B1:D1", "E1:G1"]),
    "CommunicationCompare": ([("Order Id", _I, 10), *_COMM_SIDE, *_COMM_SIDE, ("Diff Duration(us)", _F, 20),
                              ("Diff Ratio", _R, 20)], ["B1:H1", "I1:O1"]),
    "ModuleCompareStatistic": ([*_MOD_HEAD, ("Operator Name", _I, 25), *_MS_SIDE, *_MS_SIDE,
                                ("Device Total Time Diff(ms)", _F, 20), ("Device Self Time Diff(ms)", _F, 20),
                                *_MOD_TAIL], ["F1:I1", "J1:M1"]),
    "ModuleCompare": ([*_MOD_HEAD, *_MD_SIDE, *_MD_SIDE, ("Device Total Time Diff(us)", _F, 20),
                       ("Device Self Time Diff(us)", _F, 20), *_MOD_TAIL], ["E1:H1", "I1:L1"]),
    "OperatorCompareStatistic": ([("Top", _I, 10), ("Operator Name", _B, 30), ("Base Device Duration(ms)", _F, 25),
                                  ("Base Operator Number", _I, 25), ("Comparison Device Duration(ms)", _F, 30),
                                  ("Comparison Operator Number", _I, 30), ("Diff Duration(ms)", _F, 20),
                                  ("Diff Ratio", _R, 20)], ["C1:D1", "E1:F1"]),
    "OperatorCompare": ([("Order Id", _I, 10), *_OP_SIDE, *_OP_SIDE, ("Diff Duration(us)", _F, 20),
                         ("Diff Ratio", _R, 20)], ["B1:F1", "G1:K1"]),
    "MemoryCompareStatistic": ([("Top", _I, 10), ("Operator Name", _B, 30), ("Base Allocated Duration(ms)", _F, 25),
                                ("Base Allocated Memory(MB)", _F, 30), ("Base Operator Number", _I, 25),
                                ("Comparison Allocated Duration(ms)", _F, 27),
                                ("Comparison Allocated Memory(MB)", _F, 33),
                                ("Comparison Operator Number", _I, 25), ("Diff Memory(MB)", _F, 20),
                                ("Diff Ratio", _R, 20)], ["C1:E1", "F1:H1"]),
    "MemoryCompare": ([("Order Id", _I, 10), *_MEM_SIDE, *_MEM_SIDE, ("Diff Size(KB)", _F, 20), ("Diff Ratio", _R, 20)],
                      ["B1:F1", "G1:K1"]),
    "ApiCompare": ([("Order Id", _I, 10), ("api name", _B, 30), *_API_SIDE, *_API_SIDE,
                    *((f"Diff {k} Ratio", _F, 20) for k in ("Total", "Self", "Avg", "Calls"))], ["C1:F1", "G1:J1"]),
    "KernelCompare": ([("Order Id", _I, 10), ("Kernel", _B, 30), ("Input Shape", _I, 20), *_KER_SIDE, *_KER_SIDE,
                       ("Diff Total Ratio", _F, 20), ("Diff Avg Ratio", _F, 20)], ["D1:H1", "I1:M1"]),
    "KernelTypeCompare": ([("Order Id", _I, 10), ("Kernel Type", _B, 30), ("Core Type", _I, 20), *_KER_SIDE,
                           *_KER_SIDE, ("Diff Total Ratio", _F, 20), ("Diff Avg Ratio", _F, 20)], ["D1:H1", "I1:M1"]),
}
_RATIOS = {"Diff Ratio", "Diff Total Ratio", "Diff Avg Ratio", "Diff Calls Ratio", "Diff Self Ratio"}
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
#: Text columns whose cells hold line breaks on these samples (kernel and memory lists, torch_npu's shapes and types,
#: call stacks): ours top-aligns their data cells (docs/differences.md), the original centres them
_LINES = {"Input Shape", "Input Type", "Kernel Details", "Allocated Details", "Base Call Stack",
          "Comparison Call Stack"}


def test_name_columns_stay_in_view_unless_too_wide(tmp_out: Path) -> None:
    """The columns left of the base half name a row and stay in view while the table scrolls right (the
    comparator sheets are 1,800-2,700 px wide: a diff column scrolled into view lost its name); a lone Order Id
    is no name, and names wider than 800 px (at Calibri 11's 7 px a character plus 5 a column) would leave a
    narrow window no figure to scroll to, so only the header rows stay frozen there."""
    rows = [[1, "a", "b", 1.0, 2.0]]

    def sheet(name: str, widths: tuple[float, float]) -> Sheet:
        cols = [Column("Order Id", "int", widths[0]), Column("Kernel", "bold", widths[1]),
                Column("Input Shape", "text", 20), Column("Total Duration(us)", "float", 20),
                Column("Total Duration(us)", "float", 20)]
        return Sheet(name, cols, pd.DataFrame(rows), (3, 3), (4, 4))
    lone = Sheet("MemoryCompare", [Column("Order Id", "int", 10), Column("Operator Name", "bold", 30),
                                   Column("Operator Name", "bold", 30)], pd.DataFrame([[1, "a", "a"]]), (1, 1), (2, 2))
    # 10 + 30 + 20 characters: 420 + 3 * 5 = 435 px; 10 + 83 + 20: 791 + 15 = 806 px; 10 + 82 + 20: 799 px
    sheets = [sheet("KernelCompare", (10, 30)), sheet("ApiCompare", (10, 83)), sheet("KernelTypeCompare", (10, 82)),
              lone]
    wb = openpyxl.load_workbook(excel.write_workbook(fake_result(sheets), tmp_out))
    assert {n: wb[n].freeze_panes for n in wb.sheetnames} == {
        "KernelCompare": "D4", "ApiCompare": "A4", "KernelTypeCompare": "D4", "MemoryCompare": "A4"}


def _layout_violations(path: Path, original: bool) -> tuple[list[str], list[str]]:
    """(sheet names, every broken rule of reference-2 §8) of a workbook, from its XML."""
    import xml.etree.ElementTree as ET
    import zipfile

    z = zipfile.ZipFile(path)
    xml = lambda part: ET.fromstring(z.read(part))  # noqa: E731
    # no shared strings where every text is inline (ours in constant_memory mode) or there is none
    sst = (["".join(t.text or "" for t in si.iter(_NS + "t")) for si in xml("xl/sharedStrings.xml")]
           if "xl/sharedStrings.xml" in z.namelist() else [])
    st = xml("xl/styles.xml")
    fmts = {0: "General", 1: "0", 3: _I, 4: _F, 9: "0%", 10: _R,
            **{int(f.get("numFmtId")): f.get("formatCode") for f in st.iter(_NS + "numFmt")}}
    fonts = [(f.find(_NS + "name").get("val"), f.find(_NS + "sz").get("val"), f.find(_NS + "b") is not None)
             for f in st.find(_NS + "fonts")]
    fills = [(p.find(_NS + "fgColor").get("rgb") if p.get("patternType") == "solid" else None)
             for p in st.find(_NS + "fills").iter(_NS + "patternFill")]
    borders = [tuple(b.find(_NS + s).get("style") for s in ("left", "right", "top", "bottom"))
               for b in st.find(_NS + "borders")]
    xfs = [(fmts[int(x.get("numFmtId"))], fonts[int(x.get("fontId"))], fills[int(x.get("fillId"))],
            borders[int(x.get("borderId"))], *((a.get("horizontal"), a.get("vertical"), int(a.get("indent", 0)))
                                               if (a := x.find(_NS + "alignment")) is not None else (None,) * 3))
           for x in st.find(_NS + "cellXfs")]
    names = [s.get("name") for s in xml("xl/workbook.xml").iter(_NS + "sheet")]
    bad = [] if names[0] == ("OverallMetrics" if original else "Summary") else [f"first sheet {names[0]}"]
    for i, name in enumerate(names):
        if name not in LAYOUT:
            continue
        ws = xml(f"xl/worksheets/sheet{i + 1}.xml")
        cols, spans = LAYOUT[name]
        cells = {}
        for c in ws.iter(_NS + "c"):
            v = c.find(_NS + "v")
            t = c.get("t")
            val = ("".join(x.text or "" for x in c.iter(_NS + "t")) if t == "inlineStr" else None if v is None
                   else sst[int(v.text)] if t == "s" else float(v.text))
            cells[c.get("r")] = (val, xfs[int(c.get("s", 0))])
        merges = sorted(m.get("ref") for m in ws.iter(_NS + "mergeCell"))
        widths = [round(float(c.get("width")) * 7 - 5) / 7 for c in ws.iter(_NS + "col")
                  for _ in range(int(c.get("min")), int(c.get("max")) + 1)]
        panes = [(p.get("state"), p.get("topLeftCell")) for p in ws.iter(_NS + "pane")]
        # ours freezes the header rows and the columns left of the base caption, which name a row; not a lone
        # Order Id (docs/differences.md)
        frozen = spans[0][0] if [c[0] for c in cols[:ord(spans[0][0]) - 65]] != ["Order Id"] else "A"
        # ours merges a caption over the part of its half that prints on one page where a page break may fall
        # inside the half, on a sheet printed several pages across (excel.caption_range)
        setup = ws.find(_NS + "pageSetup")
        across = not original and setup is not None and int(setup.get("fitToWidth", "1")) > 1
        if (merges != spans and not (across and len(merges) <= len(spans) and all(
                any(within(m, span) for span in spans) for m in merges))) \
                or widths != [w for _, _, w in cols] or panes != ([] if original else [("frozen", f"{frozen}4")]):
            bad.append(f"{name}: merges {merges}, widths {widths}, panes {panes}")
        for span, label in zip(spans, ("Base Profiling: ", "Comparison Profiling: "), strict=True):
            first, last = (ord(span[0]) - 65, ord(span[3]) - 65)
            texts = {letter: cells[f"{letter}1"][0] for letter in map(chr, range(65 + first, 66 + last))
                     if cells.get(f"{letter}1", (None,))[0] is not None}
            # each caption over its own half, in its first cell, or in the first of its merge (see above)
            at = next(iter(texts), None)
            if (len(texts) != 1 or not str(texts[at]).startswith(label) or
                    (at != span[0] and not (across and any(m.startswith(f"{at}1:") for m in merges)))):
                bad.append(f"{name}!{span}: caption {texts!r}")
        rows = {int(re.sub("[A-Z]", "", r)) for r in cells}
        letters = [chr(65 + j) for j in range(len(cols))]
        cmp_first, cmp_last = (ord(spans[1][0]) - 65, ord(spans[1][3]) - 65)
        for r in sorted(rows):
            fill_of_row = None
            if name == "OverallMetrics" and r > 3:
                idx = cells[f"A{r}"][0]
                fill_of_row = ("FF00BFFF" if not idx.startswith("\t") else
                               "FF87CEFA" if not idx.startswith("\t\t") and idx not in ("\tSDMA", "\tFree") else None)
            for j, (header, fmt, _) in enumerate(cols):
                ref = f"{letters[j]}{r}"
                val, (num, font, fill, border, h, v, indent) = cells.get(ref, (None, (None,) * 7))
                if (font, border, h, v) == (None, None, None, None):
                    if r != 2 and (r != 1 or spans[0][0] <= letters[j] <= spans[1][3]):
                        bad.append(f"{name}!{ref}: missing")
                    continue
                caption = r == 1 and (val is None or val.startswith(("Base Profiling: ", "Comparison Profiling: ")))
                green_or_yellow = "FFFFFF00" if cmp_first <= j <= cmp_last else "FF00FF00"
                red = header in _RATIOS and (val == "INF" or (isinstance(val, float) and val > 1))
                if header in _RATIOS and fmt == _F and not original:
                    fmt = _R  # the original shows these ratio columns as floats; ours as percentages
                want = (("General", ("Arial", "11", True), green_or_yellow) if r <= 3 and (caption or r == 3) else
                        ("0.00%", ("Arial", "11", False), "FFFF0000") if red else
                        ("General" if fmt == _B else fmt, ("Arial", "11", fmt == _B), fill_of_row))
                indent_want = len(val) - len(val.lstrip("\t")) if name == "OverallMetrics" and j == 0 and r > 3 else 0
                v_want = "top" if r > 3 and header in _LINES and not original else "center"
                if r == 2 or (r == 3 and val != header) or (num, font, fill) != want \
                        or (border, h, v, indent) != (("thin",) * 4, "left", v_want, indent_want):
                    bad.append(f"{name}!{ref} {val!r}: {(num, font, fill, border, h, v, indent)} want {want}")
    return names, bad


@pytest.mark.parametrize("run", ["default", "operator level, kernel types", "original", "constant memory"])
def test_every_cell_follows_the_layout_rules(run: str, samples: Path, reference_outputs: Path, tmp_out: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Captions, headers, widths, number formats, fonts, borders, fills (red ratios, OverallMetrics rows) and
    indents of every cell of the eleven comparator sheets (reference-2 §8) on pair 1, as the original's
    own workbook of pair 1 has them; beyond the formats of the first rows that
    test_data_cell_formats_match_reference compares, this pins the widths and header fills of every sheet and
    KernelTypeCompare, of which no reference workbook exists. Also on the path of a sheet over 100,000 rows
    (xlsxwriter's constant_memory mode, rows streamed with inline strings), taken here from 5 rows."""
    from msprof_compare import compare

    if run == "original":
        path = reference_outputs / PAIR1 / "performance_comparison_result.xlsx"
    else:
        if run == "constant memory":
            monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
        options = {"disable_module": True, "use_kernel_type": True} if run.startswith("operator") else {}
        path = Path(compare(str(samples / PAIR1_BASE), str(samples / PAIR1_COMP), **options).to_excel(tmp_out))
    names, bad = _layout_violations(path, run == "original")
    assert bad == [], bad[:10]
    assert len(names) == {"default": 9, "original": 8}.get(run, 9)


#: Sheets the original wrote that ours leaves out (docs/differences.md: no side recorded memory)
_LEFT_OUT = {"8-npu-traceview-file-vs-file": {"MemoryCompareStatistic", "MemoryCompare"}}


@pytest.mark.parametrize("pair", sorted(set(PAIRS) - {PAIR1, "9c-mindspore-legacy-timeline-display-files"}))
def test_layout_rules_hold_on_every_reference_pair(pair: str, samples: Path, reference_outputs: Path,
                                                   tmp_out: Path) -> None:
    """The rules above hold for every cell of the original's own workbook of each reference pair, not of pair 1's
    alone: the table is the original's layout for DB exports (3: a communication group's row light blue), GPU
    against NPU (4), Kineto traces (5, 6b, 7: red INF ratios of ops one side lacks), bare trace_view.json files
    (8, 8b) and msprof timelines (9d: Wait rows, unfilled); and for ours of the same pair, sheet for sheet. (9c:
    neither wrote a comparator sheet; pair 1: the test above.)"""
    from msprof_compare import compare

    ref_names, bad = _layout_violations(reference_outputs / pair / "performance_comparison_result.xlsx", True)
    assert bad == [], bad[:10]
    ours = compare(*(str(samples / p) for p in PAIRS[pair])).to_excel(tmp_out)
    names, bad = _layout_violations(Path(ours), False)
    assert bad == [], bad[:10]
    assert [n for n in names if n in LAYOUT] == [n for n in ref_names if n not in _LEFT_OUT.get(pair, ())]


@pytest.mark.parametrize("options", [{}, {"disable_module": True}])
def test_cells_of_several_lines_show_their_first_line(options: dict, samples: Path, reference_outputs: Path,
                                                      tmp_out: Path) -> None:
    """A data cell whose text holds a line break (a kernel list ending in "\\n", as the original writes it; a torch_npu
    shape list or call stack) is top-aligned, not wrapped, in a row of one line's height set explicitly: centred in
    its one-line row, LibreOffice showed the middle of its lines, the first cut in half at the row's top, and in a
    row of the default height it drew the further lines over the rows below. Every data row of a sheet with such a
    column has the height; other sheets' data rows have none. Its text is the original's, line breaks and all
    (pair 1's reference workbook, by Order Id on ModuleCompare)."""
    from msprof_compare import compare

    path = compare(str(samples / PAIR1_BASE), str(samples / PAIR1_COMP), **options).to_excel(tmp_out)
    ours = openpyxl.load_workbook(path)
    seen: dict[str, set] = {}
    for ws in ours.worksheets[1:]:
        heights = {r: (d.height, d.customHeight) for r, d in ws.row_dimensions.items()
                   if r > 3 and d.height is not None}
        lines = {h.value for h in ws[3]} & excel.LINES_HEADERS
        assert heights == ({r: (15, True) for r in range(4, ws.max_row + 1)} if lines else {}), ws.title
        for row in ws.iter_rows(min_row=4):
            for c in row:
                if isinstance(c.value, str) and "\n" in c.value:
                    seen.setdefault(ws.title, set()).add(ws.cell(3, c.column).value)
                    assert (c.alignment.vertical, bool(c.alignment.wrap_text)) == ("top", False), (ws.title, c)
    kernels = {"Kernel Details"}
    assert seen == ({"OperatorCompare": {"Input Shape", "Input Type", *kernels},
                     "MemoryCompare": {"Input Shape", "Input Type", "Allocated Details"}} if options else
                    {"ModuleCompareStatistic": {"Base Call Stack", "Comparison Call Stack", *kernels},
                     "ModuleCompare": {"Base Call Stack", "Comparison Call Stack", *kernels},
                     "MemoryCompare": {"Input Shape", "Input Type", "Allocated Details"}})
    if not options:  # the kernel lists of both sides, by Order Id, line for line as the original's ModuleCompare's
        # (their durations differ in their digits: "Kernel durations in detail text have nanosecond resolution")
        ref = openpyxl.load_workbook(reference_outputs / PAIR1 / "performance_comparison_result.xlsx")
        def lines(v: str | None) -> int:  # lines of a list each ending in a line break; -1 for a text that is none
            return 0 if not v else v.count("\n") if v.endswith("\n") else -1

        want, got = ({r[0].value: (lines(r[5].value), lines(r[9].value))
                      for r in wb["ModuleCompare"].iter_rows(min_row=4)} for wb in (ref, ours))
        assert got == want and sum(n for pair in want.values() for n in pair) > 100


@pytest.mark.parametrize("constant_memory", [False, True])
@pytest.mark.skipif(not excel.FAST_WRITER, reason="block writer disabled for this xlsxwriter release")
def test_rows_of_several_line_cells_have_a_set_height_on_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    constant_memory: bool) -> None:
    """The one-line height of a sheet with a column of several-line cells is written by the block writer as by
    xlsxwriter's row loop (cell writes, a constant_memory stream): the same bytes, each data row
    ``ht="15" customHeight="1"``, the caption and header rows and a sheet without such a column as before."""
    if constant_memory:
        monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 5)
    n = 40
    lists = pd.Series(["k1\nk2\n", "", None, "a;\r\nb;", "x" * 300 + "\n" + "y"] * (n // 5), dtype=object)
    data = pd.DataFrame({"a": np.arange(n, dtype=np.int64), "b": lists, "c": np.linspace(0.0, 1.0, n)})
    cols = [Column("Order Id", "int"), Column("Kernel Details"), Column("Total", "float")]
    sheets = [Sheet("Lists", cols, data, (0, 1), (2, 2)), small_sheet()]
    captions = ("Base Profiling: b", "Comparison Profiling: c")
    excel.render(sheets, str(tmp_path / "fast.xlsx"), captions)
    monkeypatch.setattr(excel._FastWorksheet, "write_block", lambda *a: False)
    excel.render(sheets, str(tmp_path / "cells.xlsx"), captions)
    fast, cells = _parts(tmp_path / "fast.xlsx"), _parts(tmp_path / "cells.xlsx")
    assert fast.keys() == cells.keys()
    for name in fast:  # constant_memory: a sheet's block takes its formats' indices before its header row's do
        tags = [re.findall(rb"<row [^>]*>", p[name]) for p in (fast, cells)]
        assert tags[0] == tags[1] and (constant_memory or fast[name] == cells[name]), name
    rows = re.findall(rb'<row r="(\d+)"[^>]*?( ht="15" customHeight="1")?>', fast["xl/worksheets/sheet1.xml"])
    assert rows == [(b"1", b""), (b"3", b""), *((str(r).encode(), b' ht="15" customHeight="1"')
                                                 for r in range(4, n + 4))]
    other = re.findall(rb'<row r="(\d+)"[^>]*?( customHeight="1")?>', fast["xl/worksheets/sheet2.xml"])
    assert [h for r, h in other if int(r) > 3] == [b"", b""]  # small_sheet's two data rows
    ws = openpyxl.load_workbook(tmp_path / "fast.xlsx")["Lists"]  # not wrapped: Excel's look is unchanged
    assert {(c.alignment.vertical, bool(c.alignment.wrap_text)) for c in ws["B"][3:]} == {("top", False)}


@pytest.mark.parametrize(("lines", "points"), [(1, 15), (2, 30), (27, 405), (28, 409), (500, 409)])
def test_row_points_stop_at_excels_tallest_row(lines, points):
    """Wrapped captions and Summary rows grow 15 points a line up to the 409 points Excel accepts."""
    assert excel.row_points(lines) == points


def test_a_run_whose_only_figures_are_the_console_table_says_where_they_are(samples: Path, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture) -> None:
    """HTA's AlexNet trace against a MindSpore 1.x ascend_timeline_display file (reference pair 9c's form): that
    side has no E2E time, so OverallMetrics and the Summary sheet are left out, and no comparison makes a row. The
    console table printed both sides' rows, then the idle-stretch note, which reads the base side's figures
    alone, and the last line said "No comparison produced any rows", as though nothing had been compared. It now
    says the time breakdown is the console table's alone and why no sheet holds it; a run without the table keeps
    the plain line (``test_api_notebook``)."""
    from cliutil import run_inproc

    gpu = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    ms1 = samples / "mindinsight/tests/utils/resource/run_2/normal_run/profiler/ascend_timeline_display_1.json"
    out = tmp_path / "out"
    code, stdout, stderr = run_inproc(capsys, "-bp", str(gpu), "-d", str(ms1), "-o", str(out))
    lines = [line.split("] ", 1)[-1] for line in stderr.splitlines()]
    assert code == 0 and not out.exists()
    assert [row.split("|")[1].strip() for row in stdout.splitlines() if row.startswith("| ") and "s(" in row] == [
        "GPU", "NPU"]
    assert lines[-1] == ("No comparison produced any rows for the workbook; no workbook was written (the time "
                         "breakdown is the console table's alone: OverallMetrics needs E2E time on both sides).")
    # the note of the base side's idle stretch (77.7 % of its E2E) is printed once, before the table's last line
    assert len([line for line in lines if line.startswith("One stretch with no computing")]) == 1


@pytest.mark.skipif(not excel.FAST_WRITER, reason="the inline-string cache is the fast writer's")
def test_a_full_inline_string_cache_is_cleared_and_the_workbook_is_unchanged(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed (constant_memory) sheet caches its inline-string cells' XML, emptied once it holds
    ``_INLINE_CACHE_MAX`` (65,536) entries: only a sheet of more distinct texts than that (a 1 GB trace's) filled
    it, so no test ran the clearing. With a cache of two entries the bundled pair's workbook clears it again and
    again, stays within the bound, and its every part is byte for byte the one the full-size cache writes."""
    import zipfile

    from msprof_compare import compare

    repo = Path(__file__).resolve().parents[1]
    result = compare(str(repo / "sample_data/bert-small_h100.json.gz"),
                     str(repo / "sample_data/bert-small_mi300.json.gz"), enable_profiling_compare=True,
                     enable_operator_compare=True, enable_kernel_compare=True, enable_api_compare=True)
    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 0)
    written = []
    for name, cap in (("full", excel._INLINE_CACHE_MAX), ("two", 2)):
        monkeypatch.setattr(excel, "_INLINE_CACHE_MAX", cap)
        (tmp_path / name).mkdir()
        written.append(zipfile.ZipFile(excel.write_workbook(result, tmp_path / name)))
    sizes: list[int] = []
    real = excel._FastWorksheet._inline

    def recording(self: excel._FastWorksheet, text: str, style: str) -> str:
        got = real(self, text, style)
        sizes.append(len(self._inline_cache))
        return got

    monkeypatch.setattr(excel._FastWorksheet, "_inline", recording)
    (tmp_path / "again").mkdir()
    excel.write_workbook(result, tmp_path / "again")
    assert max(sizes) == 2 and sizes.count(1) > 10  # filled to the bound, and emptied many times
    full, two = written
    assert full.namelist() == two.namelist()
    for part in full.namelist():
        if part != "docProps/core.xml":  # its creation time
            assert full.read(part) == two.read(part), part
