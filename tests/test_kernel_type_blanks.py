"""kernel_details.csv rows whose Type is empty or N/A among typed rows: KernelCompare skips a row of no Type
(reference-2 §6.1: a Level0 export writes N/A on every row), so such a kernel left its group's calls and time
without a word. They are counted in one warning, in the runs that build KernelCompare. On the torch_npu text
fixture's kernel_details.csv (tests/data/npu: rows of msinsight text level1 rank0's), cells edited; the counts
wanted are taken with the csv module."""

from __future__ import annotations

import csv
import io
import logging
import shutil
from pathlib import Path

import pytest

from msprof_compare.loaders import ascend_text, load_profile
from msprof_compare.options import Options

RUN = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
SRC = RUN / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
SAID = ("kernel(s) with an empty or N/A Type among kernels of a Type (a Level0 export writes N/A on every row: a "
        "damaged cell?); KernelCompare leaves them out, as the original does")


def _edited(path: Path, types: dict[int, str], every: str | None = None) -> list[list[str]]:
    """The fixture's rows with data row ``i``'s Type set to ``types[i]`` (each row's to ``every`` where given),
    written to ``path``."""
    rows = list(csv.reader(io.StringIO(SRC.read_text(), newline="")))
    at = rows[0].index("Type")
    for i, r in enumerate(rows[1:]):
        r[at] = every if every is not None else types.get(i, r[at])
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue())
    return rows


def test_kernels_of_no_type_among_typed_ones_are_counted(tmp_path: Path) -> None:
    """Rows 3 and 10 emptied, row 17 N/A (the fixture's Types all name one): one line counts the three, where
    KernelCompare is read; a run that reads no Type says nothing of them."""
    f = tmp_path / "kernel_details.csv"
    rows = _edited(f, {3: "", 10: "", 17: "N/A"})
    at = rows[0].index("Type")
    assert sum(1 for r in rows[1:] if r[at].strip() in ("", "N/A")) == 3 < len(rows) - 1
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert warnings == [f"{f}: 3 {SAID}"]
    assert kd["Type"].tolist()[17] == "N/A" and kd["Type"].tolist()[3] == ""
    warnings = []
    ascend_text.read_kernel_details(str(f), warnings, types_read=False)
    assert warnings == []


def test_a_level0_export_of_no_type_at_all_is_not_said(tmp_path: Path) -> None:
    """Every Type N/A (a Level0 export), or every one empty: KernelCompare has no row, which it says itself."""
    for every in ("N/A", ""):
        f = tmp_path / "kernel_details.csv"
        _edited(f, {}, every=every)
        warnings: list[str] = []
        ascend_text.read_kernel_details(str(f), warnings)
        assert warnings == []


def test_only_a_kernel_comparison_by_type_says_it(tmp_path: Path) -> None:
    """The fixture's folder with row 3's Type emptied: said once by a kernel comparison, not by a profiling compare
    nor by --use_kernel_type's (op_statistic.csv's types)."""
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(RUN, run)
    f = run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    _edited(f, {3: ""})

    def said(**flags: bool) -> list[str]:
        return [w for w in load_profile(str(run), Options(**flags)).warnings if "Type among" in w]

    assert said(enable_kernel_compare=True) == [f"{f}: 1 {SAID}"]
    assert said(enable_profiling_compare=True) == []
    assert said(enable_kernel_compare=True, use_kernel_type=True) == []


def test_the_count_said_is_what_kernel_compare_leaves_out(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The warning and KernelCompare read a Type by one rule (``model.names_a_type``): the kernels counted are those
    its Calls leave out. Rows 3 and 10 emptied, row 17 " N/A " (blanks around, read as N/A) and row 19 "nan", the
    fixture as the base and its unedited copy as the comparison: the base's Calls sum to the rows less the four
    said, the comparison's to every row (counted with the csv module)."""
    from msprof_compare import compare

    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(RUN, run)
    f = run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = _edited(f, {3: "", 10: "", 17: " N/A ", 19: "nan"})
    at = rows[0].index("Type")
    untouched = sum(1 for r in rows[1:] if r[at].strip() not in ("", "N/A", "nan"))
    assert (untouched, len(rows) - 1 - untouched) == (len(rows) - 5, 4)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(run), str(RUN), enable_kernel_compare=True)
    [said] = [m for m in caplog.messages if "Type among" in m]
    assert said == f"{f}: 4 {SAID} (base side)"
    sheet = res.sheet("KernelCompare")
    assert (int(sheet["Calls"].sum()), int(sheet["Calls.1"].sum())) == (untouched, len(rows) - 1)
