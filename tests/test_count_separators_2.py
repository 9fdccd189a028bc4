"""Warning counts of 1,000 or more carry thousands separators: session 63's DB export notes, whose separators
mutation testing (mut63, mut64) could drop with every test passing, their tests counting fewer than 1,000 rows.
Each test here damages msinsight's level1 DB export of rank 0 (``../shared/samples``, PROVENANCE.md; skipped
without them) in a copy, by SQL that makes thousands of such rows (a table written again, a recursive row
generator); the expected counts are worked out from the table sizes, which are checked by SQL on the sample."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from msprof_compare.loaders import ascend_text, load_profile
from msprof_compare.options import build_options
from tests.dbutil import edited_copy, sql

ROOT = Path(__file__).resolve().parents[1]
LEVEL1_DB = ROOT.parent / "shared" / "samples" / "msinsight" / "test" / "data" / "pytorch" / "db" / "level1" / \
    "rank0_ascend_pt"
DB_NAME = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
#: The rows 1 .. k, for an INSERT ... SELECT ... FROM n of k rows.
ROWS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {k}) "
#: TASK's columns after its times, for a copy of its rows at other times.
TASK_REST = "deviceId, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId, modelId, depth"
#: COMMUNICATION_TASK_INFO written five times (its 296 rows, then 592, then 296 more: 1,480).
COMM_FIVE = ("INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO",
             "INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO",
             "INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO WHERE rowid <= 296")


def _count(query: str) -> int:
    return sql(LEVEL1_DB / DB_NAME, query)[0][0]


def _edited(tmp_path: Path, *statements: str) -> tuple[Path, Path]:
    """The level1 DB rank 0 folder with ``statements`` applied to its DB copy: (the folder, the DB)."""
    if not LEVEL1_DB.is_dir():
        pytest.skip("the shared samples are absent")
    dest = tmp_path / LEVEL1_DB.name
    shutil.copytree(LEVEL1_DB, dest, ignore=shutil.ignore_patterns(Path(DB_NAME).name))
    edited_copy(LEVEL1_DB / DB_NAME, dest / DB_NAME, *statements)
    return dest, dest / DB_NAME


def _warnings(tmp_path: Path, *statements: str, words: str, **options: bool) -> tuple[Path, list[str]]:
    """(the DB, the loaded profile's warnings holding ``words``)."""
    folder, db = _edited(tmp_path, *statements)
    warnings = load_profile(str(folder), build_options(**options)[0]).warnings
    return db, [w for w in warnings if words in w]


def test_step_rows_without_a_time_are_counted_with_separators(tmp_path):
    """1,000 STEP_TIME rows without an id added beside step 50."""
    db, said = _warnings(tmp_path, ROWS.format(k=1000) + "INSERT INTO STEP_TIME SELECT NULL, 1, 2 FROM n",
                         words="STEP_TIME")
    assert said == [f"{db}: 1,000 STEP_TIME row(s) lack an id, a start or an end; they are no steps"]


def test_task_rows_written_again_are_counted_with_separators(tmp_path):
    """TASK written twice, then the whole again: each of its 552 rows four times, 3 x 552 = 1,656 repeats."""
    assert _count("SELECT count(*) FROM TASK") == 552
    assert _count("SELECT count(*) - count(DISTINCT globalTaskId || ',' || startNs) FROM TASK") == 0
    db, said = _warnings(tmp_path, "INSERT INTO TASK SELECT * FROM TASK", "INSERT INTO TASK SELECT * FROM TASK",
                         words="TASK row(s) repeat")
    assert [w.split(" (")[0] for w in said] == [
        f"{db}: 1,656 TASK row(s) repeat an earlier row's globalTaskId and startNs"]


def test_step_tasks_of_a_damaged_start_are_counted_with_separators(tmp_path):
    """TASK written four times, the three copies' startNs 0: with step 50 given, each copied row that ends in the
    step (550 of TASK's 552 by SQL) starts outside it at a damaged time: 3 x 550 = 1,650."""
    (ends,), = sql(LEVEL1_DB / DB_NAME, "SELECT count(*) FROM TASK t, STEP_TIME s WHERE s.id = 50 AND t.endNs "
                   "BETWEEN s.startNs AND s.endNs")
    assert ends == 550
    folder, db = _edited(tmp_path, "INSERT INTO TASK SELECT * FROM TASK", "INSERT INTO TASK SELECT * FROM TASK",
                         "UPDATE TASK SET startNs = 0 WHERE rowid > 552")
    warnings = load_profile(str(folder), build_options()[0], step=50).warnings
    assert [w.split(" at a damaged")[0] for w in warnings if "end in the step" in w] == [
        f"{db}: 1,650 TASK row(s) end in the step but start outside it"]


def test_communication_task_rows_of_no_run_are_counted_with_separators(tmp_path):
    """COMMUNICATION_TASK_INFO written five times over TASK's one run of each task: 4 x 296 = 1,184 rows pair with
    no run."""
    assert _count("SELECT count(*) FROM COMMUNICATION_TASK_INFO") == 296
    assert _count("SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId") \
        == 296
    db, said = _warnings(tmp_path, *COMM_FIVE, words="pair with no TASK run")
    assert said == [f"{db}: 1,184 COMMUNICATION_TASK_INFO row(s) of a globalTaskId that TASK holds fewer times pair "
                    "with no TASK run; left out"]


def test_communication_tasks_without_a_task_row_are_counted_with_separators(tmp_path):
    """COMMUNICATION_TASK_INFO written five times, each row's globalTaskId then made its rowid + 10**9, which no TASK
    row holds: 1,480 ids."""
    db, said = _warnings(tmp_path, *COMM_FIVE,
                         "UPDATE COMMUNICATION_TASK_INFO SET globalTaskId = rowid + 1000000000",
                         words="have no TASK row")
    assert said == [f"{db}: 1,480 globalTaskId(s) of COMMUNICATION_TASK_INFO have no TASK row (no time); left out"]


def test_communication_tasks_without_a_task_id_are_counted_with_separators(tmp_path):
    """COMMUNICATION_TASK_INFO written five times, every globalTaskId NULL: 1,480 rows."""
    db, said = _warnings(tmp_path, *COMM_FIVE, "UPDATE COMMUNICATION_TASK_INFO SET globalTaskId = NULL",
                         words="have no globalTaskId")
    assert said == [f"{db}: 1,480 COMMUNICATION_TASK_INFO row(s) have no globalTaskId; left out"]


def test_communication_tasks_without_an_op_and_rank_are_counted_with_separators(tmp_path):
    """TASK's rows replayed four times (each 1 to 4 ns later) and COMMUNICATION_TASK_INFO written five times, its
    opId 999999 (no COMMUNICATION_OP row) and srcRank -7 (no rank id): 5 x 296 = 1,480 tasks each."""
    replays = [f"INSERT INTO TASK SELECT startNs + {k}, endNs + {k}, {TASK_REST} FROM TASK WHERE rowid <= 552"
               for k in (1, 2, 3, 4)]
    db, said = _warnings(tmp_path, *replays, *COMM_FIVE,
                         "UPDATE COMMUNICATION_TASK_INFO SET opId = 999999, srcRank = -7",
                         words="COMMUNICATION_TASK_INFO")
    assert [w.split(";")[0] for w in said] == [
        f"{db}: 1,480 COMMUNICATION_TASK_INFO row(s) name an opId that COMMUNICATION_OP lacks",
        f"{db}: 1,480 COMMUNICATION_TASK_INFO srcRank / dstRank value(s) are no rank id (an integer from 0 to "
        "2147483647, or 4294967295: no peer"]


def test_pmu_rows_without_a_task_id_are_counted_with_separators(tmp_path):
    """TASK_PMU_INFO without its globalTaskIds, written twice: its rows of the four counters read, 2 x 740."""
    assert _count("SELECT count(*) FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE s.value IN "
                  "('aic_total_time', 'aic_mac_time', 'aic_mte2_time', 'aiv_total_time')") == 740
    db, said = _warnings(tmp_path, "UPDATE TASK_PMU_INFO SET globalTaskId = NULL",
                         "INSERT INTO TASK_PMU_INFO SELECT * FROM TASK_PMU_INFO", words="have no globalTaskId")
    assert said == [f"{db}: 1,480 TASK_PMU_INFO row(s) have no globalTaskId; left out"]


def test_pmu_values_that_are_no_number_are_counted_with_separators(tmp_path):
    """Each of the 187 compute tasks written again as a task of its own (globalTaskId + 10**9, 1 ns later, its
    TASK_PMU_INFO rows with it), then every PMU value 'x': the values read are those of the four counters of the
    185 tasks that hold them (SQL), 2 x 740."""
    assert _count("SELECT count(DISTINCT p.globalTaskId) FROM TASK_PMU_INFO p JOIN COMPUTE_TASK_INFO c "
                  "USING (globalTaskId)") == 185
    info = ("name, globalTaskId + 1000000000, blockDim, mixBlockDim, taskType, opType, inputFormats, inputDataTypes, "
            "inputShapes, outputFormats, outputDataTypes, outputShapes, attrInfo, waitNs")
    task = TASK_REST.replace("globalTaskId", "globalTaskId + 1000000000")
    db, said = _warnings(
        tmp_path, f"INSERT INTO TASK SELECT startNs + 1, endNs + 1, {task} FROM TASK WHERE globalTaskId IN "
        "(SELECT globalTaskId FROM COMPUTE_TASK_INFO)", f"INSERT INTO COMPUTE_TASK_INFO SELECT {info} FROM "
        "COMPUTE_TASK_INFO", "INSERT INTO TASK_PMU_INFO SELECT globalTaskId + 1000000000, name, value FROM "
        "TASK_PMU_INFO", "UPDATE TASK_PMU_INFO SET value = 'x'", words="not finite")
    assert said == [f"{db}: 1,480 TASK_PMU_INFO value(s) are not finite numbers; read as missing"]


def test_a_task_table_without_types_counts_its_rows_with_separators(tmp_path):
    """TASK written twice, every taskType NULL: the refusal counts its 1,104 rows."""
    from msprof_compare.errors import ProfileError

    folder, db = _edited(tmp_path, "INSERT INTO TASK SELECT * FROM TASK", "UPDATE TASK SET taskType = NULL")
    with pytest.raises(ProfileError) as e:
        load_profile(str(folder), build_options()[0])
    assert str(e.value).startswith(f"{db}: table TASK: column taskType is NULL in all 1,104 row(s) in range, ")


def test_api_rows_of_odd_types_are_counted_with_separators(tmp_path):
    """PYTORCH_API's 1,600 queue and Python rows (SQL) given the type 'x' (text), or 99 (no ENUM_API_TYPE id); its
    860 op rows, written twice, given the globalTid -5: 1,720."""
    op = _count("SELECT id FROM ENUM_API_TYPE WHERE name = 'op'")
    assert _count(f"SELECT count(*) FROM PYTORCH_API WHERE type <> {op}") == 1600
    effect = ("those rows are of no kind (torch op, queue or Python row) and are left out, so the comparisons that "
              "read such rows (operator, API, memory, module) miss those among them")
    db, said = _warnings(tmp_path, f"UPDATE PYTORCH_API SET type = 'x' WHERE type <> {op}", words="PYTORCH_API row")
    assert said == [f"{db}: 1,600 PYTORCH_API row(s) have a type stored other than as an integer (the first: 'x'): "
                    f"{effect}"]
    (tmp_path / "b").mkdir()
    db, said = _warnings(tmp_path / "b", f"UPDATE PYTORCH_API SET type = 99 WHERE type <> {op}",
                         words="PYTORCH_API row")
    assert said == [f"{db}: 1,600 PYTORCH_API row(s) have a type ENUM_API_TYPE lacks (the first: 99): {effect}"]
    (tmp_path / "c").mkdir()
    db, said = _warnings(tmp_path / "c", "INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API",
                         f"UPDATE PYTORCH_API SET globalTid = -5 WHERE type = {op}", words="globalTid")
    assert [w.split(":")[1] for w in said] == [" 1,720 PYTORCH_API.globalTid value(s) are negative, no process and "
                                               "thread id"]


def test_rank_map_cells_that_are_no_rank_are_counted_with_separators(tmp_path):
    """RANK_DEVICE_MAP's one row replaced by 1,000 rows of rankId -1: the rank check names the count."""
    from msprof_compare.loaders.ranks import check_db_rank
    from msprof_compare.units import MAX_RANK

    folder, db = _edited(tmp_path, "DELETE FROM RANK_DEVICE_MAP",
                         ROWS.format(k=1000) + "INSERT INTO RANK_DEVICE_MAP SELECT -1, 0 FROM n")
    p = load_profile(str(folder), build_options()[0])
    n = len(p.warnings)
    check_db_rank(0, p)
    assert p.warnings[n:] == [
        f"{db}: RANK_DEVICE_MAP names no rank id; 1,000 rankId value(s) are no rank id (an integer from 0 to "
        f"{MAX_RANK}; the first: -1), and META_DATA no distributed_args rank, so its rank is not checked against "
        "rank 0, which its folder's profiler_info_N.json names"]


#: OP_MEMORY written twice, then twice again, then the whole once more: each of its 184 rows eight times, 1,472.
OP_MEMORY_EIGHT = ("INSERT INTO OP_MEMORY SELECT * FROM OP_MEMORY",) * 3


@pytest.mark.parametrize(("damage", "said"), [
    ("UPDATE OP_MEMORY SET allocationTime = 0", "1,472 OP_MEMORY allocationTime value(s) are 0 or negative (no time); "
     "the memory comparison leaves those blocks out"),
    ("UPDATE OP_MEMORY SET releaseTime = -1", "1,472 OP_MEMORY releaseTime value(s) are negative; read as never "
     "released"),
    ("UPDATE OP_MEMORY SET size = -1", "1,472 negative OP_MEMORY size value(s) read as 0"),
    (f"UPDATE OP_MEMORY SET size = {2**62}", "1,472 OP_MEMORY size value(s) over 1 PB read as 0"),
    ("UPDATE OP_MEMORY SET releaseTime = allocationTime - 1", "1,472 block(s) released before their allocation "
     "(duration read as 0)"),
    # the loader reads the rows by release time: the first is the earliest allocation (SQL), at 1736410576395011090
    # ns, released a week and 1 ns later, at 1737015376395011091 ns
    ("UPDATE OP_MEMORY SET releaseTime = allocationTime + 604800000000001", "1,472 OP_MEMORY releaseTime value(s) "
     "come over a week after the block's allocation (a damaged time?; the first: allocated at 1736410576395011.090 "
     "us, released at 1737015376395011.091 us); read as never released (duration 0)"),
    # 184 distinct allocation times (SQL): 1,472 - 184 rows repeat one
    ("SELECT 1", "1,288 OP_MEMORY row(s) repeat an earlier row in every column read (the same allocation written "
     "again, as in a file joined from two copies); each row counts, as in the original, so those blocks' memory and "
     "time count more than once"),
])
def test_op_memory_damage_is_counted_with_separators(tmp_path, damage, said):
    """OP_MEMORY written eight times (1,472 rows), then damaged in every row."""
    assert sql(LEVEL1_DB / DB_NAME, "SELECT count(*), count(DISTINCT allocationTime), min(allocationTime) "
               "FROM OP_MEMORY") == [(184, 184, 1736410576395011090)]
    folder, db = _edited(tmp_path, *OP_MEMORY_EIGHT, damage)
    warnings = load_profile(str(folder), build_options(enable_memory_compare=True)[0]).warnings
    assert f"{db}: {said}" in warnings


# --------------------------------------------------------------------------- the text export's CSV files

LEVEL1_TEXT_OUT = LEVEL1_DB.parents[2] / "text" / "level1" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"


def _rows(name: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the level1 text export's CSV ``name``."""
    if not LEVEL1_TEXT_OUT.is_dir():
        pytest.skip("the shared samples are absent")
    with (LEVEL1_TEXT_OUT / name).open(newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def _written(tmp_path: Path, name: str, header: list[str], rows: list[list[str]]) -> str:
    path = tmp_path / name
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([header, *rows])
    return str(path)


def _kernels(tmp_path: Path, n: int, **cells: str) -> tuple[str, list[str]]:
    """kernel_details.csv of ``n`` copies of the export's first kernel row, ``cells`` (column -> text) written in
    each (a column the file lacks added): (the file, ``read_kernel_details``' warnings, the steps read)."""
    header, rows = _rows("kernel_details.csv")
    header = header + [c for c in cells if c not in header]
    row = rows[0] + [""] * (len(header) - len(rows[0]))
    for column, text in cells.items():
        row[header.index(column)] = text
    path = _written(tmp_path, "kernel_details.csv", header, [row] * n)
    warnings: list[str] = []
    ascend_text.read_kernel_details(path, warnings, steps_read=True)
    return path, warnings


@pytest.mark.parametrize(("cells", "said"), [
    ({"Step Id": "x"}, "1,000 Step Id value(s) are not whole numbers; those rows belong to no step"),
    ({"Step ID": "51"}, "columns Step Id and Step ID disagree in 1,000 row(s); Step Id is read (those rows' step is "
     "its value)"),
    ({"Start Time(us)": ""}, "1,000 Start Time(us) value(s) are empty; those kernels are not matched (to a launching "
     "operator, a device task's Input Shapes or C_CORE_SQE tasks)."),
    ({"Start Time(us)": "-1"}, "1,000 Start Time(us) value(s) are 0 or negative (no epoch time: a damaged cell?); "
     "kept as times, at which no event of an exported trace starts: those kernels are not matched (to a launching "
     "operator, a device task's Input Shapes or C_CORE_SQE tasks)."),
    ({"aicore_time(us)": "x"}, "1,000 value(s) that are not numbers in column(s) aicore_time(us); read as missing"),
])
def test_kernel_details_damage_is_counted_with_separators(tmp_path, cells, said):
    """kernel_details.csv of 1,000 copies of the level1 text export's first kernel (step 50), each with one cell
    damaged (a Step ID column added where Step Id says 50)."""
    path, warnings = _kernels(tmp_path, 1000, **cells)
    assert f"{path}: {said}" in warnings


@pytest.mark.parametrize(("cell", "said"), [
    ("-1", "1,004 Total Reserved(MB) value(s) negative or over 1 PB; Mem Usage leaves them out"),
    ("", "none of its 1,004 Total Reserved(MB) value(s) is a number (empty or N/A cells); Mem Usage has no reading"),
])
def test_memory_record_damage_is_counted_with_separators(tmp_path, cell, said):
    """memory_record.csv of the level1 text export (1,004 readings) with every Total Reserved(MB) damaged."""
    header, rows = _rows("memory_record.csv")
    assert len(rows) == 1004
    at = header.index("Total Reserved(MB)")
    path = _written(tmp_path, "memory_record.csv", header, [r[:at] + [cell] + r[at + 1:] for r in rows])
    warnings: list[str] = []
    ascend_text.read_memory_record(path, warnings)
    assert warnings == [f"{path}: {said}"]


def test_operator_memory_times_rounded_by_a_spreadsheet_are_counted_with_separators(tmp_path):
    """operator_memory.csv of 1,000 copies of the level1 text export's first block, its Allocation Time(us)
    written as a spreadsheet saves it, 1.73640888E+15 (a time to 10 s)."""
    header, rows = _rows("operator_memory.csv")
    at = header.index("Allocation Time(us)")
    path = _written(tmp_path, "operator_memory.csv", header, [rows[0][:at] + ["1.73640888E+15"] + rows[0][at + 1:]]
                    * 1000)
    warnings: list[str] = []
    ascend_text.read_operator_memory(path, warnings)
    assert [w.split(" (e.g.")[0] for w in warnings if "rounded" in w] == [
        f"{path}: 1,000 Allocation Time(us) value(s) are rounded to coarser than 1 us"]


@pytest.mark.parametrize(("cell", "said"), [
    ("x", "1,001 row(s) with a time that is no number (empty, N/A or text); those times read as 0"),
    ("-1", "1,001 row(s) with a negative time; their times read as 0"),
    (None, "1,000 row(s) repeat the OP Type and Core Type of an earlier row (e.g. 'ForeachAddList', "
     "'AI_VECTOR_CORE'); KernelTypeCompare reads the last row of each, as the original does, and leaves the earlier "
     "ones out"),
])
def test_op_statistic_damage_is_counted_with_separators(tmp_path, cell, said):
    """op_statistic.csv of 1,001 copies of the level1 text export's first row (ForeachAddList, AI_VECTOR_CORE):
    1,000 repeat the first; or each with its Total Time(us) damaged."""
    header, rows = _rows("op_statistic.csv")
    row = rows[0]
    assert row[:2] == ["ForeachAddList", "AI_VECTOR_CORE"]
    if cell is not None:
        at = header.index("Total Time(us)")
        row = row[:at] + [cell] + row[at + 1:]
    path = _written(tmp_path, "op_statistic.csv", header, [row] * 1001)
    warnings: list[str] = []
    ascend_text.read_op_statistic(path, warnings)
    assert f"{path}: {said}" in warnings


# --------------------------------------------------------------------------- comparators' notes, figures given

def test_early_kernel_note_counts_carry_separators() -> None:
    """The "kernels launched before the profile began" note (``checks._early_row``) of a side whose E2E of
    10 ms opens with 2 ms in which 1,234 computing kernels run, 1.5 ms busy (figures given here): the count is
    written with its separator, as the loaders' counts are."""
    from msprof_compare.compare.breakdown import Breakdown, Bucket
    from msprof_compare.compare.checks import _early_row

    base = Breakdown("GPU", early_ns=2_000_000, e2e_ns=10_000_000, has_launches=True,
                     early_kernels=Bucket(ns=1_500_000, count=1_234))
    row, _ = _early_row((base, Breakdown("GPU")))
    assert "base: the first 2.000 ms of E2E, where 1,234 computing kernels run (1.500 ms busy); " in row["Detail"]


def test_unnamed_collective_kernel_counts_carry_separators(caplog) -> None:
    """CommunicationCompare's line for NCCL kernels that name no collective (``communication._note_unnamed``):
    1,200 such kernels of 1 us each beside 300 named ones, 1,500 in all (figures given here)."""
    import logging

    import numpy as np

    from msprof_compare.compare.communication import _note_unnamed
    from msprof_compare.model import Profile

    named = np.array([False] * 1200 + [True] * 300)
    ops = {"dur": np.full(1500, 1000, dtype=np.int64), "family": np.array(["nccl"] * 1500, dtype=object)}
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        _note_unnamed(Profile(path="run", kind="GPU", source="kineto"), ops, named, "base side")
    assert [r.getMessage().split(" name no")[0] for r in caplog.records] == [
        "run: 1,200 of 1,500 collective kernels (1.200 ms)"]
    assert caplog.records[0].getMessage().endswith("their row nccl may hold any collective (base side)")


@pytest.mark.skipif(not hasattr(os, "pathconf"), reason="PATH_MAX is a POSIX limit")
def test_output_path_over_the_limit_counts_its_bytes_with_separators(tmp_path):
    """-o of a folder whose absolute path is 4,200 bytes (names of 200 bytes, not made), past PATH_MAX (4,096 bytes
    on Linux): the refusal gives the path's length and the limit with separators."""
    from msprof_compare.errors import UsageError
    from msprof_compare.report.output import _check_path_length

    limit = os.pathconf(tmp_path, "PC_PATH_MAX") - 1
    base = len(os.fsencode(str(tmp_path)))
    names = ["d" * 200] * ((4200 - base - 2) // 201)  # each takes "/" too; the last name 1 to 201 bytes
    target = str(tmp_path.joinpath(*names, "e" * (4200 - base - 201 * len(names) - 1)))
    assert len(os.fsencode(target)) == 4200 > limit
    with pytest.raises(UsageError) as e:
        _check_path_length(target, "deep", False)
    assert str(e.value).startswith("output deep: the path is 4,200 bytes long (absolute); with the reports' names in "
                                   f"it, it passes this system's limit of {limit:,} bytes for a path")


def test_kernels_without_a_duration_are_counted_with_separators(tmp_path, caplog):
    """KernelCompare's groups of a kernel_details.csv of 1,000 copies of the level1 text export's first kernel (a
    TransData) with an empty Duration(us): the line counts the 1,000 kernels it reads as calls of 0 us."""
    import logging

    from msprof_compare.compare.kernels import _group_columns
    from msprof_compare.model import Profile

    path, _ = _kernels(tmp_path, 1000, **{"Duration(us)": ""})
    p = Profile(path="run", kind="NPU", source="ascend_text")
    p.kernel_details = ascend_text.read_kernel_details(path, [])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        groups = _group_columns(p)
    assert list(groups["type"]) == ["TransData"] and list(groups["calls"]) == [1000]
    assert [r.getMessage() for r in caplog.records] == [
        "run: 1,000 kernel(s) of a valid Type have no Duration(us) in kernel_details.csv; KernelCompare counts each "
        "as a call of 0 us."]


def test_trace_view_hccl_ranks_that_are_no_rank_are_counted_with_separators(tmp_path):
    """The level1 text export's 296 HCCL tasks (events of the HCCL lane with a src rank, counted in its
    trace_view.json) written four times, each src rank -7: 1,184 values that are no rank id (their dst ranks,
    4294967295 or a rank, are none such)."""
    if not LEVEL1_TEXT_OUT.is_dir():
        pytest.skip("the shared samples are absent")
    out = shutil.copytree(LEVEL1_TEXT_OUT.parent, tmp_path / LEVEL1_TEXT_OUT.parent.name)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "HCCL"
            and "src rank" in e.get("args", {})]
    assert len(hccl) == 296
    assert all(e["args"]["dst rank"] == 4294967295 or 0 <= e["args"]["dst rank"] < 2**31 for e in hccl)
    for e in hccl:
        e["args"]["src rank"] = -7
    events += [json.loads(json.dumps(e)) for e in hccl] * 3
    trace.write_text(json.dumps(events))
    warnings = load_profile(str(out), build_options(enable_communication_compare=True)[0]).warnings
    assert [w.split(" (an integer")[0] for w in warnings if "src rank" in w] == [
        f"{trace}: 1,184 HCCL task src rank / dst rank value(s) are no rank id"]


@pytest.mark.parametrize(("before", "after", "said"), [
    (1200, 1300, "2,500 nn.Module events starts in step 7 (1,200 start before it, 1,300 after it)"),
    (1500, 0, "1,500 nn.Module events starts in step 7 (1,500 start before it)"),
    (0, 1500, "1,500 nn.Module events starts in step 7 (1,500 start after it)"),
])
def test_module_events_outside_the_step_are_counted_with_separators(caplog, before, after, said):
    """The module sheets' line for a step in which none of a side's nn.Module events starts
    (``modules._say_no_module_in_step``): thousands of such events (``nn.Module: Linear_N``, figures given here),
    so many starting before step 7's range (100 to 200 ns), the rest after it."""
    import logging

    import pandas as pd

    from msprof_compare.compare.modules import _say_no_module_in_step
    from msprof_compare.model import Profile

    p = Profile(path="run", kind="GPU", source="kineto")
    p.python_functions = pd.DataFrame({"name": [f"nn.Module: Linear_{i}" for i in range(before + after)],
                                       "ts": [50] * before + [300] * after})
    view = Profile(path="run", kind="GPU", source="kineto")
    view.python_functions = pd.DataFrame({"name": ["aten::mm"], "ts": [150]})
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        _say_no_module_in_step(p, view, 7, (100, 200), "base side")
    assert [r.getMessage().split(", so it")[0] for r in caplog.records] == [
        f"run: none of its {said}"]
