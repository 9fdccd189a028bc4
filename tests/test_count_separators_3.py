"""Warning counts of 1,000 or more carry thousands separators, as their neighbours' do: the lines session 64 found
still printing a bare count (a rounded Start Time(us), kernels lasting over a week, NUL bytes in a CSV's rows,
kernel_details.csv's kernels and HCCL ops beside a missing device lane, int args that are no integers in a Kineto
trace, STRING_IDS references to no text, a DB's cube kernels told by task type, unnamed operators; the unescaped
backslashes' count is pinned in tests/test_traceio.py, 6,041 of them, the memcpy names' in test_gpu_alexnet.py).
Each test repeats a real row of an excerpt (tests/data; their README files give the provenance) in a temp copy
until 1,000 or more such items are made; the expected counts are those repetitions."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from dbutil import edited_copy, sql

from msprof_compare.loaders import ascend_text, load_profile
from msprof_compare.options import Options, build_options

DATA = Path(__file__).resolve().parent / "data"
PT = DATA / "npu" / "rank0_ascend_pt"
#: the spreadsheet-saved kernel_details.csv (tests/data/npu/README.md): every Start Time(us) is '1.69512E+15'
SPREADSHEET = DATA / "npu" / "spreadsheet" / "kernel_details.csv"
KINETO = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
L1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"


def _csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    return rows[0], rows[1:]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


def _kernel_warnings(path: Path) -> list[str]:
    warnings: list[str] = []
    ascend_text.read_kernel_details(str(path), warnings, steps_read=True)
    return warnings


# --------------------------------------------------------------------------- kernel_details.csv


def test_rounded_start_times_are_counted_with_separators(tmp_path: Path) -> None:
    """The spreadsheet-saved kernel_details.csv's three rows (each Start Time(us) '1.69512E+15') written 334 times:
    1,002 rounded times."""
    header, rows = _csv_rows(SPREADSHEET)
    at = header.index("Start Time(us)")
    assert [r[at] for r in rows] == ["1.69512E+15"] * 3
    path = _write_csv(tmp_path / "kernel_details.csv", header, rows * 334)
    said = [w for w in _kernel_warnings(path) if "rounded" in w]
    assert len(said) == 1 and said[0].startswith(f"{path}: 1,002 Start Time(us) value(s) are rounded to coarser "
                                                 "than 1 us (e.g. '1.69512E+15': ")


def test_kernels_lasting_over_a_week_are_counted_with_separators(tmp_path: Path) -> None:
    """The torch excerpt's first kernel row written 1,000 times, its Duration(us) 604800000001 (a week and 1 us)."""
    header, rows = _csv_rows(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    row = list(rows[0])
    row[header.index("Duration(us)")] = "604800000001"
    path = _write_csv(tmp_path / "kernel_details.csv", header, [row] * 1000)
    assert f"{path}: 1,000 kernel(s) last over a week (a damaged time?); read as 0" in _kernel_warnings(path)


def test_nul_bytes_in_the_rows_are_counted_with_separators(tmp_path: Path) -> None:
    """The torch excerpt's first kernel row written 1,000 times, a NUL byte in each Name ('aclnnMm\\0...')."""
    header, rows = _csv_rows(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    row = list(rows[0])
    name = header.index("Name")
    row[name] = row[name][:7] + "<NUL>" + row[name][7:]  # Python 3.10's csv writer refuses a NUL ("need to escape")
    path = _write_csv(tmp_path / "kernel_details.csv", header, [row] * 1000)
    path.write_bytes(path.read_bytes().replace(b"<NUL>", b"\0"))
    assert path.read_bytes().count(b"\0") == 1000
    assert [w for w in _kernel_warnings(path) if "NUL" in w] == [
        f"{path}: 1,000 NUL byte(s) in the rows (a damaged copy?); a cell holding one reads otherwise than written: "
        "a text cell as another name, a number cell as missing or cut short at it"]


def test_kernels_and_hccl_ops_beside_an_unnamed_lane_are_counted_with_separators(tmp_path: Path) -> None:
    """The torch excerpt without its process_name records (no device lane is found) and its kernel_details.csv rows
    written 50 times, then its one hcom_ row 950 times more: 20 x 50 + 950 = 1,950 kernels, 50 + 950 = 1,000 HCCL
    ops."""
    out = shutil.copytree(PT, tmp_path / PT.name)
    src = out / "ASCEND_PROFILER_OUTPUT"
    events = [e for e in json.loads((src / "trace_view.json").read_text())
              if not (e.get("ph") == "M" and e.get("name") == "process_name")]
    (src / "trace_view.json").write_text(json.dumps(events))
    n = sum(e.get("ph") == "X" for e in events)
    header, rows = _csv_rows(src / "kernel_details.csv")
    hcom = [r for r in rows if r[header.index("Name")].startswith("hcom_")]
    assert (len(rows), len(hcom), n) == (20, 1, 485)
    _write_csv(src / "kernel_details.csv", header, rows * 50 + hcom * 950)
    trace = src / "trace_view.json"
    said = [w for w in load_profile(str(out), Options(enable_profiling_compare=True)).warnings
            if "is named in the trace" in w]
    assert said == [
        f"{trace}: no 'Ascend Hardware' process is named in the trace ({n} complete event(s) lie on processes it gives "
        "no name), though kernel_details.csv lists 1,950 kernel(s): no device task is read, so operators and modules "
        "get no device time",
        f"{trace}: no Communication or HCCL process is named in the trace ({n} complete event(s) lie on processes it "
        "gives no name), though kernel_details.csv lists 1,000 HCCL op(s): no communication task is read, so the "
        "communication comparison and the communication groups have none"]


# --------------------------------------------------------------------------- Kineto


def _kineto(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.pt.trace.json"
    path.write_text(text)
    return path


def test_int_args_that_are_no_integers_are_counted_with_separators(tmp_path: Path) -> None:
    """The timesformer excerpt with 1,000 copies of its first kernel, each of stream 'x': 1,000 kernel stream ids
    that are no integers."""
    trace = json.loads(KINETO.read_text())
    kernel = next(e for e in trace["traceEvents"] if e.get("cat") == "kernel")
    trace["traceEvents"] += [dict(kernel, args=dict(kernel["args"], stream="x"))] * 1000
    path = _kineto(tmp_path, json.dumps(trace))
    said = [w for w in load_profile(str(path), build_options()[0]).warnings if "are not integers" in w]
    assert len(said) == 1 and said[0].startswith(f"{path}: 1,000 kernel stream id(s) are not integers within int64 "
                                                 "(the first: 'x')")


# --------------------------------------------------------------------------- DB export


def test_references_to_no_text_are_counted_with_separators(tmp_path: Path) -> None:
    """The level-1 DB excerpt with PYTORCH_API written again until 1,000 or more op rows name an id STRING_IDS
    lacks, and as many input shape references: the rows counted by SQL."""
    db = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                     "UPDATE PYTORCH_API SET name = -7, inputShapes = -7 WHERE type = 50001",
                     "INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API WHERE type = 50001")
    (ops,), = sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001 AND name = -7")
    assert ops == 1720
    warnings = load_profile(str(db), build_options()[0]).warnings
    assert f"{db}: 1,720 name reference(s) point to no text in STRING_IDS (an unknown id, or NULL there); those " \
        "names read as empty" in warnings
    said = [w for w in warnings if "reference(s) to a type, shape or group text" in w]
    assert len(said) == 1 and said[0].startswith(f"{db}: 1,720 reference(s)"), said



def test_cube_kernels_told_by_task_type_are_counted_with_separators(tmp_path: Path) -> None:
    """The level-1 DB excerpt without TASK_PMU_INFO, its computing tasks (TASK and COMPUTE_TASK_INFO rows) copied
    six times under new globalTaskIds: 7 x 187 = 1,309 computing tasks, 7 x 31 = 217 of them KERNEL_AICORE or
    KERNEL_MIX_AIC (by SQL on the excerpt)."""
    from msprof_compare.compare.breakdown_db import db_breakdown

    (tasks, cube), = sql(L1, "SELECT count(*), sum(s.value IN ('KERNEL_AICORE', 'KERNEL_MIX_AIC')) FROM TASK t JOIN "
                             "COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS s ON s.id = "
                             "t.taskType")
    assert (tasks, cube) == (187, 31) and sql(L1, "SELECT max(globalTaskId) FROM TASK") == [(551,)]
    copies = []
    for k in range(1, 7):
        copies += [f"INSERT INTO TASK SELECT startNs, endNs, deviceId, connectionId, globalTaskId + {k * 1000}, "
                   "globalPid, taskType, contextId, streamId, taskId, modelId, depth FROM TASK WHERE globalTaskId IN "
                   "(SELECT globalTaskId FROM COMPUTE_TASK_INFO) AND globalTaskId < 1000",
                   f"INSERT INTO COMPUTE_TASK_INFO SELECT name, globalTaskId + {k * 1000}, blockDim, mixBlockDim, "
                   "taskType, opType, inputFormats, inputDataTypes, inputShapes, outputFormats, outputDataTypes, "
                   "outputShapes, attrInfo, waitNs FROM COMPUTE_TASK_INFO WHERE globalTaskId < 1000"]
    db = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", "DROP TABLE TASK_PMU_INFO", *copies)
    said = [m for m in db_breakdown(load_profile(str(db), build_options()[0])).missing if "TASK_PMU_INFO" in m]
    assert len(said) == 1 and said[0].endswith("not by PMU figures: 217 of its 1,309 computing tasks count as cube "
                                               "kernels by that rule, which PMU figures may split otherwise")


def test_unnamed_operators_of_a_missing_step_are_counted_with_separators(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The level-1 DB excerpt with every op row named by an id STRING_IDS lacks and written twice (1,720 rows, SQL):
    step 50's ProfilerStep#50 op is among them, so the step is not found, and the error counts them."""
    from cliutil import error_lines, run_inproc

    db = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                     "UPDATE PYTORCH_API SET name = -7 WHERE type = 50001",
                     "INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API WHERE type = 50001")
    assert sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001 AND name = -7") == [(1720,)]
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), "--base_step", "50", "--comparison_step", "50",
                              "-o", str(tmp_path / "out"))
    assert code == 2
    assert error_lines(err) == [
        f"error: {db}: There is no operator event data for step 50, please check whether the data contains this "
        "step. Operators without a name (no text in STRING_IDS): 1,720; a step is found by its operator "
        "ProfilerStep#50, which may be one of them. (comparison side)"]
