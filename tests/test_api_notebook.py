"""The Python API as a notebook uses it: the sheets' DataFrames as pandas reads the workbook (numbers numeric),
independent of what the caller does to them, and ``help(compare)`` naming every option.

Input: the bundled sample_data pair (sample_data/README.md: TraceLens' bert-small traces, H100 and MI300X).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import msprof_compare
from msprof_compare.options import Options

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "sample_data" / "bert-small_h100.json.gz"
COMP = ROOT / "sample_data" / "bert-small_mi300.json.gz"


@pytest.fixture(scope="module")
def result() -> msprof_compare.CompareResult:
    return msprof_compare.compare(BASE, COMP)


@pytest.fixture(scope="module")
def workbook(result: msprof_compare.CompareResult, tmp_path_factory: pytest.TempPathFactory) -> str:
    return result.to_excel(tmp_path_factory.mktemp("wb"))


@pytest.mark.parametrize("name", ["Summary", "ModuleCompareStatistic", "ModuleCompare"])
def test_number_columns_with_blanks_are_floats_as_read_from_the_workbook(result, workbook, name):
    """A number column with blank cells (a module row has no device total time; the waterfall's first row no
    comparison figure) came back ``object`` holding None, on which ``nlargest`` raised TypeError, while pandas
    reads the same column of the written workbook as float64 with NaN. Each sheet's frame now has the workbook's
    numeric columns numeric, with its blanks where the workbook has them and its values."""
    frame = result.sheet(name)
    read = pd.read_excel(workbook, sheet_name=name, header=2, nrows=len(frame)).iloc[:, :frame.shape[1]]
    assert list(read.columns) == list(frame.columns)
    numeric = [c for c in read.columns if pd.api.types.is_numeric_dtype(read[c])]
    blanks = [c for c in numeric if read[c].isna().any()]
    assert {"Base(ms)", "Comparison(ms)"} <= set(blanks) if name == "Summary" else \
        {"Device Total Time(ms)" if name.endswith("Statistic") else "Device Total Time(us)"} <= set(blanks)
    for c in numeric:
        assert pd.api.types.is_numeric_dtype(frame[c]), (c, frame[c].dtype)
        np.testing.assert_array_equal(frame[c].isna().to_numpy(), read[c].isna().to_numpy(), err_msg=c)
        np.testing.assert_allclose(frame[c].to_numpy(float), read[c].to_numpy(float), rtol=1e-12, err_msg=c)
    diff = next(c for c in blanks if "Diff" in c or "Delta" in c)
    top = frame.nlargest(2, diff)  # TypeError on an object column
    assert top[diff].tolist() == sorted(read[diff].dropna().tolist(), reverse=True)[:2]


def test_text_columns_with_blanks_are_pandas_text_and_mixed_columns_keep_their_cells(result):
    """A text column with blanks (a call stack; the Summary's Step, built as object) came back ``object`` holding
    None, where pandas reads text as its string dtype (``str`` on pandas 3): ``.str`` accessors and ``dtypes``
    filters treated it as no text. It is now pandas' text dtype, its blanks missing where the sheet's cells are
    None; OverallMetrics' Number column ("/" for a time with no count) keeps its text beside the counts, as the
    workbook shows it."""
    text = pd.Series(["text"]).dtype
    modules = result.sheet("ModuleCompareStatistic")
    cells = result.sheets[result.sheet_names.index("ModuleCompareStatistic")].labelled()["Base Call Stack"]
    stack = modules["Base Call Stack"]
    assert stack.dtype == text and result.sheet("Summary")["Step"].dtype == text
    np.testing.assert_array_equal(stack.isna().to_numpy(), np.array([c is None for c in cells]))
    assert stack.isna().any() and stack.dropna().tolist() == [c for c in cells if c is not None]
    assert stack.dropna().str.len().gt(0).all()
    number = result.sheet("OverallMetrics")["Number"].tolist()
    assert result.sheet("OverallMetrics")["Number"].dtype == object
    assert "/" in number and any(isinstance(v, int) for v in number)


def test_json_rows_keep_whole_numbers(result):
    """The JSON report reads the cells as written: a count column with blanks stays whole numbers there, not
    the floats ``sheet()`` gives (MemoryCompare's Diff Size(KB) and ModuleCompareStatistic's counts)."""
    from msprof_compare.report.json_report import to_document

    doc = {s["name"]: s for s in to_document(result)["sheets"]}
    for name in ("ModuleCompareStatistic", "ModuleCompare"):
        frame, rows = result.sheets[result.sheet_names.index(name)].labelled(), doc[name]["rows"]
        for j, c in enumerate(frame.columns):
            cells = frame.iloc[:, j].tolist()
            assert [r[c] for r in rows] == cells, c
            assert all(type(r[c]) is int for r, v in zip(rows, cells, strict=True) if isinstance(v, (int, np.integer))
                       and not isinstance(v, bool)), c


def test_frames_are_copies(result, tmp_path):
    """Changing a returned frame changes neither a later ``sheet()`` nor the workbook written afterwards."""
    frame = result.sheet("ModuleCompareStatistic")
    col = "Device Total Time(ms)"
    first = frame[col].first_valid_index()
    kept = frame.at[first, col]
    frame[col] = -1.0
    waterfall = result.waterfall
    waterfall["Delta(ms)"] = -1.0
    assert result.waterfall["Delta(ms)"].iloc[-1] != -1.0
    assert result.sheet("ModuleCompareStatistic").at[first, col] == kept
    read = pd.read_excel(result.to_excel(tmp_path), sheet_name="ModuleCompareStatistic", header=2)
    assert read.at[first, col] == pytest.approx(kept)
    assert (read[col].dropna() >= 0).all()


def test_help_names_every_option():
    """``help(msprof_compare.compare)`` lists the options by name (a notebook user has no ``-h``), each field of
    Options once, and says which exceptions it raises."""
    doc = msprof_compare.compare.__doc__ or ""
    named = set(re.findall(r"``(\w+)``", doc))
    missing = [f.name for f in dataclasses.fields(Options) if f.name not in named]
    assert not missing, missing
    assert "UsageError" in doc and "ProfileError" in doc and "to_excel" in doc


def test_a_report_target_named_like_another_file_is_a_folder_with_a_warning(result, tmp_path, caplog):
    """``to_excel("results.csv")`` made a folder results.csv holding the workbook without a word, where the CLI's
    ``-o results.csv`` warns; the API now warns too, once: a second call finds the folder it made."""
    caplog.set_level(logging.WARNING, logger="msprof-analyze")
    target = tmp_path / "results.csv"
    written = result.to_excel(target)
    assert Path(written).parent == target and target.is_dir()
    notices = [r.getMessage() for r in caplog.records if "taken as a folder" in r.getMessage()]
    assert notices == [f"output {target} is taken as a folder (created) and the report goes into it: the report "
                       "is a .xlsx file; end the path in .xlsx to name the file itself."]
    caplog.clear()
    assert Path(result.to_excel(target)).parent == target
    assert Path(result.to_json(tmp_path / "plain")).parent == tmp_path / "plain"
    assert not [r for r in caplog.records if "taken as a folder" in r.getMessage()]
    written = result.to_json(str(tmp_path / "report.txt"))
    assert Path(written).parent == tmp_path / "report.txt"
    assert [r.getMessage() for r in caplog.records if "taken as a folder" in r.getMessage()] == [
        f"output {tmp_path / 'report.txt'} is taken as a folder (created) and the report goes into it: the report "
        "is a .json file; end the path in .json to name the file itself."]


def test_a_home_relative_target_warns_only_when_it_makes_the_folder(result, tmp_path, monkeypatch, caplog):
    """``to_excel("~/results.csv")`` writes into $HOME/results.csv (the path is expanded, as the CLI's shell
    would), but the folder was looked for under the unexpanded name, so every later call said again that the
    folder is created; the first call warns, the second finds the folder it made and does not."""
    monkeypatch.setenv("HOME", str(tmp_path))
    caplog.set_level(logging.WARNING, logger="msprof-analyze")
    first = result.to_excel("~/results.csv")
    assert Path(first).parent == tmp_path / "results.csv"
    assert len([r for r in caplog.records if "taken as a folder" in r.getMessage()]) == 1
    caplog.clear()
    second = result.to_excel("~/results.csv")
    assert Path(second).parent == tmp_path / "results.csv" and second != first
    assert not [r for r in caplog.records if "taken as a folder" in r.getMessage()]


def test_a_count_column_with_a_blank_is_nullable_int_in_the_frame_and_whole_in_the_json(samples, tmp_path):
    """KernelCompare of the level-1 text export against the level-2 DB export (msinsight AlexNet, rank 0): the DB's
    compute tasks hold no hcom_allReduce_ (SQL), the text export's kernel_details.csv has it 4 times (csv), so
    that row's comparison Calls is blank. Of the count columns, the one with the blank is nullable Int64 with
    <NA> there in ``sheet()`` (float64 before, as pandas reads the workbook: counts printed as 36.0); the one
    without stays int64; the JSON keeps the counts whole and the blank null. Each side's calls add up to its
    kernels: 191 rows of the csv, 187 tasks of the DB."""
    import csv
    import json

    from dbutil import sql

    pt = samples / "msinsight/test/data/pytorch"
    text, db = pt / "text/level1/rank0_ascend_pt", pt / "db/level2/rank0_ascend_pt"
    with open(text / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as fh:
        kernels = [r["Type"] for r in csv.DictReader(fh)]
    tasks = sql(db / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                "SELECT s.value FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                "JOIN STRING_IDS s ON s.id = c.opType")
    assert (len(kernels), kernels.count("hcom_allReduce_")) == (191, 4)
    assert len(tasks) == 187 and ("hcom_allReduce_",) not in tasks

    result = msprof_compare.compare(text, db, enable_kernel_compare=True)
    frame = result.sheet("KernelCompare")
    read = pd.read_excel(result.to_excel(tmp_path), sheet_name="KernelCompare", header=2)
    assert frame["Calls"].dtype == read["Calls"].dtype == np.int64
    assert frame["Calls.1"].dtype == pd.Int64Dtype() and read["Calls.1"].dtype == np.float64
    assert frame.loc[frame["Calls.1"].isna(), "Kernel"].tolist() == ["hcom_allReduce_"]
    assert frame.loc[frame["Kernel"] == "hcom_allReduce_", "Calls"].tolist() == [4]
    np.testing.assert_array_equal(frame["Calls.1"].to_numpy(dtype=np.float64, na_value=np.nan),
                                  read["Calls.1"].to_numpy())
    assert frame["Calls.1"].dropna().map(type).eq(int).all()
    assert (int(frame["Calls"].sum()), frame["Calls.1"].sum()) == (191, 187)

    doc = json.loads(Path(result.to_json(tmp_path / "r.json")).read_text())
    rows = next(s for s in doc["sheets"] if s["name"] == "KernelCompare")["rows"]
    calls = [r["Calls.1"] for r in rows]
    assert [r["Kernel"] for r in rows if r["Calls.1"] is None] == ["hcom_allReduce_"]
    assert all(type(c) is int for c in calls if c is not None) and sum(c for c in calls if c is not None) == 187


def test_no_warning_for_a_report_target_when_nothing_is_written(tmp_path, caplog):
    """KernelCompare on GPU data makes no row, so ``to_excel("results.csv")`` writes nothing and makes no folder:
    no warning that the folder is created and the report goes into it (the no-rows warning alone)."""
    caplog.set_level(logging.WARNING, logger="msprof-analyze")
    empty = msprof_compare.compare(BASE, COMP, enable_kernel_compare=True)
    assert empty.sheet_names == []
    assert empty.to_excel(tmp_path / "results.csv") == ""
    assert list(tmp_path.iterdir()) == []
    said = [r.getMessage() for r in caplog.records]
    assert "No comparison produced any rows; no workbook was written." in said
    assert not [m for m in said if "taken as a folder" in m]


def test_a_target_the_cli_refuses_is_refused_when_nothing_is_written(tmp_path, monkeypatch):
    """A result without rows writes no workbook, but its target is judged as ``-o`` is: ``to_excel("notes.txt")``
    of an existing file returned "" where ``msprof-compare ... -o notes.txt`` exits 2 with the line below, before
    it loads anything (found by option fuzzing, optfuzz66). A usable new folder is still not made."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    empty = msprof_compare.compare(BASE, COMP, enable_kernel_compare=True)  # GPU data: KernelCompare has no row
    with pytest.raises(msprof_compare.UsageError) as info:
        empty.to_excel("notes.txt")
    assert str(info.value) == ("output path notes.txt is a file, not a directory; give a directory, or a name ending "
                               "in .xlsx for the report file itself")
    assert empty.to_excel("new") == "" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_report_target_that_is_no_path_is_a_usage_error(result, tmp_path):
    """The folder notice is worked out before the write: a target that is no path (an int, or a path object whose
    ``__fspath__`` gives neither str nor bytes) must still meet the writers' UsageError, not a TypeError from
    the notice, and leave nothing behind."""
    from msprof_compare.errors import UsageError

    class OddPath:
        def __fspath__(self) -> object:
            return 3

    for target, kind in ((3, "int"), (OddPath(), "OddPath")):
        for write in (result.to_excel, result.to_json):
            with pytest.raises(UsageError, match=f"^output must be a path \\(str or os.PathLike\\), not {kind}$"):
                write(target)
    assert list(tmp_path.iterdir()) == []


def test_a_bytes_report_target_named_like_another_file_warns_too(result, tmp_path, caplog):
    """The API takes a target as bytes as well (as the inputs): ``to_excel(b".../results.tsv")`` makes the folder
    results.tsv and says so, naming the path as text."""
    import os

    caplog.set_level(logging.WARNING, logger="msprof-analyze")
    target = tmp_path / "results.tsv"
    assert Path(result.to_excel(os.fsencode(target))).parent == target
    assert [r.getMessage() for r in caplog.records if "taken as a folder" in r.getMessage()] == [
        f"output {target} is taken as a folder (created) and the report goes into it: the report is a .xlsx file; "
        "end the path in .xlsx to name the file itself."]


def test_all_blank_columns_take_their_kind(samples):
    """CommunicationCompare of the GPU trace (bert-small H100: no collective) against the msinsight AlexNet level-1
    text export (rank 0, 4 allreduce ops): every base cell but Total Duration is blank, and those columns came
    back ``object`` of None whatever they hold. A blank column now takes its other half's type (Calls: Int64,
    the comparison's int64 with blanks; names: text) or its style's (durations: float64), so
    ``frame["Avg Duration(us)"] - frame["Avg Duration(us).1"]`` is a float Series of NaN, not a TypeError."""
    import json

    comm = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    ops = json.loads((comm / "communication.json").read_text())
    result = msprof_compare.compare(BASE, comm.parent, enable_communication_compare=True)
    frame = result.sheet("CommunicationCompare")
    text = pd.Series(["text"]).dtype
    blank = ["Communication OP Name", "Task Name", "Calls", "Avg Duration(us)", "Max Duration(us)",
             "Min Duration(us)"]
    assert frame[blank].isna().all().all() and frame["Total Duration(us)"].eq(0).all()
    assert [str(frame[c].dtype) for c in blank] == [str(text), str(text), "Int64", "float64", "float64", "float64"]
    assert frame["Calls.1"].dtype == np.int64 and frame["Communication OP Name.1"].dtype == text
    gap = frame["Avg Duration(us)"] - frame["Avg Duration(us).1"]
    assert gap.dtype == np.float64 and gap.isna().all()
    # the comparison's allreduce op row: its calls are the allreduce ops of communication.json (every step's)
    names = [op for step in ops.values() for group in step.values() for op in group]
    allreduce = frame.loc[frame["Communication OP Name.1"] == "allreduce", "Calls.1"].tolist()
    assert allreduce == [sum("allreduce" in n.lower() for n in names)] and allreduce[0] > 0


def test_guards_text_columns_are_text_and_their_figures_kept(result):
    """``result.guards`` came back all ``object``; its Check / Status / Detail columns are text (pandas' text
    dtype), while Base / Comparison, a rate on one row and a count or a name on another, keep their cells."""
    text = pd.Series(["text"]).dtype
    guards = result.guards
    assert [str(guards[c].dtype) for c in ("Check", "Status", "Detail")] == [str(text)] * 3
    assert guards["Base"].dtype == object and guards["Comparison"].dtype == object
    rows = guards.set_index("Check")
    assert rows.loc["operator match rate", "Status"] == "ok"
    assert rows.loc["step count", ["Base", "Comparison"]].tolist() == [1, 1]
    kinds = {type(v) for v in guards["Base"].tolist() if v is not None}
    assert {float, int, str} <= kinds


def test_summary_frames_keep_their_columns_and_dtypes_when_empty(result, samples):
    """The bundled GPU pair records no collective and its contributors run no module: ``communication_contributors``
    and ``module_contributors`` were frames of no column (``["Diff(ms)"]`` raised KeyError), and the msinsight
    level-1 / level-2 text pair's ``memory_contributors`` (no operator's memory changed there) had object
    columns. Each Summary frame now has the columns and dtypes of a frame with rows, empty or not; so has a run
    without the time breakdown (no waterfall or contributors)."""
    from msprof_compare.compare import communication_summary, contributors, memory_summary, waterfall

    full = {"contributors": result.contributors, "memory_contributors": result.memory_contributors,
            "waterfall": result.waterfall, "guards": result.guards}
    assert all(len(f) for f in full.values())
    comm, modules = result.communication_contributors, result.module_contributors
    assert comm.empty and list(comm.columns) == communication_summary.CONTRIBUTOR_COLUMNS
    assert comm["Diff(ms)"].dtype == np.float64 and comm["Diff(ms)"].sum() == 0 and comm["Rank"].dtype == np.int64
    assert modules.empty and modules.dtypes.equals(full["contributors"].dtypes)
    assert list(modules.columns) == contributors.CONTRIBUTOR_COLUMNS

    pt = samples / "msinsight/test/data/pytorch/text"
    npu = msprof_compare.compare(pt / "level1/rank0_ascend_pt", pt / "level2/rank0_ascend_pt",
                                 enable_memory_compare=True)
    assert "MemoryCompareStatistic" in npu.sheet_names and npu.memory_contributors.empty
    assert list(npu.memory_contributors.columns) == memory_summary.CONTRIBUTOR_COLUMNS
    assert npu.memory_contributors.dtypes.equals(full["memory_contributors"].dtypes)

    api_only = msprof_compare.compare(BASE, COMP, enable_api_compare=True)
    for name in ("waterfall", "contributors"):
        empty, frame = getattr(api_only, name), full[name]
        assert empty.empty and list(empty.columns) == list(frame.columns), name
        assert empty.dtypes.equals(frame.dtypes), name
    assert api_only.guards.dtypes.equals(full["guards"].dtypes)
    assert list(api_only.waterfall.columns) == waterfall.WATERFALL_COLUMNS
