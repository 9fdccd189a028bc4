"""The schema of an NPU DB export edited (the session-59 structural fuzz): a table made a view, a column the loader
reads dropped, one of the two communication tables emptied. Each either leaves every figure right, or changes
figures with one warning naming the file and what is missing, or, where no figure can be made, is an error of one
line naming the table and the column.

Every input is a copy of the level-1 excerpt (tests/data/db/l1, cut from the msinsight level-1 sample) edited by
SQL in tmp_path; expected figures come from the unedited excerpt, from a copy with the column set NULL (what the
warning says the absent column reads as) or from plain SQL.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest
from cliutil import error_lines, run_inproc
from dbutil import edited_copy, sql

from msprof_compare.compare.breakdown_db import cube_mask, db_breakdown
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
OPTS, _ = build_options()  # every comparison, the time breakdown included
STEP = sql(L1, "SELECT id FROM STEP_TIME")[0][0]


def _db(tmp_path: Path, *statements: str) -> Path:
    """An edited copy of the level-1 excerpt, named as an export (the loader reads the DB family from the name)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    return edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", *statements)


def _figures(path: Path, step: int = -1) -> tuple[dict, dict[str, pd.DataFrame], list[str]]:
    """The time breakdown, the loaded frames and the warnings (the file's own path taken out) of one DB."""
    p = load_profile(str(path), OPTS, step)
    frames = {"kernels": p.kernels, "comm": p.comm, "ops": p.ops, "queue": p.queue, "memory": p.operator_memory,
              "python": p.python_functions, "links": p.extra["op_connections"], "pmu": p.extra["kernel_extra"]}
    return asdict(db_breakdown(p)), frames, [w.replace(str(path), "DB") for w in p.warnings]


def _same(a: tuple, b: tuple) -> None:
    assert a[0] == b[0]
    for name, frame in a[1].items():
        pd.testing.assert_frame_equal(frame.reset_index(drop=True), b[1][name].reset_index(drop=True), obj=name)


# --------------------------------------------------------------------------- a view for a table


@pytest.mark.parametrize("table, step", [("TASK", -1), ("COMMUNICATION_TASK_INFO", -1), ("TASK_PMU_INFO", -1),
                                         ("STEP_TIME", STEP), ("PYTORCH_API", -1), ("STRING_IDS", -1)])
def test_view_serves_as_its_table(tmp_path: Path, table: str, step: int) -> None:
    """Only tables were read: with TASK a view the DB was "not a profiler database", and with
    COMMUNICATION_TASK_INFO one the wait time of communication read 0 (2.7 ms on the level-1 sample) without a
    word. A view now serves as its table (it has no rowid: rows come in its order) and every figure and frame
    equals the table's, with no warning of its own; TASK's E2E is the SQL span of the busy rows."""
    view = _db(tmp_path, f"ALTER TABLE {table} RENAME TO {table}_rows",
               f"CREATE VIEW {table} AS SELECT * FROM {table}_rows")
    got, want = _figures(view, step), _figures(L1, step)
    _same(got, want)
    assert got[2] == [w.replace(str(L1), "DB") for w in want[2]]
    if table == "TASK":
        spans = sql(L1, "SELECT min(startNs), max(endNs) FROM COMMUNICATION_OP UNION ALL SELECT min(t.startNs), "
                        "max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                        "WHERE s.value NOT LIKE 'PROFILING_%'")
        assert got[0]["e2e_ns"] == max(e for _, e in spans) - min(s for s, _ in spans)


# --------------------------------------------------------------------------- a column the loader reads absent


@pytest.mark.parametrize("table, column", [
    ("TASK", "deviceId"), ("TASK", "taskId"), ("TASK", "streamId"), ("COMPUTE_TASK_INFO", "name"),
    ("COMPUTE_TASK_INFO", "opType"), ("COMPUTE_TASK_INFO", "taskType"), ("COMPUTE_TASK_INFO", "inputShapes"),
    ("COMMUNICATION_TASK_INFO", "planeId"), ("COMMUNICATION_TASK_INFO", "groupName"),
    ("COMMUNICATION_TASK_INFO", "opId"), ("COMMUNICATION_OP", "groupName"), ("COMMUNICATION_OP", "opType"),
    ("PYTORCH_API", "inputDtypes"), ("PYTORCH_API", "globalTid"), ("CONNECTION_IDS", "connectionId"),
    ("ENUM_API_TYPE", "name"), ("MEMORY_RECORD", "totalReserved"), ("TASK", "connectionId"),
    ("COMMUNICATION_OP", "opName"), ("COMMUNICATION_TASK_INFO", "taskType"), ("COMMUNICATION_TASK_INFO", "srcRank"),
    ("COMMUNICATION_TASK_INFO", "dstRank"), ("PYTORCH_API", "connectionId"), ("PYTORCH_API", "inputShapes"),
    ("CONNECTION_IDS", "id"), ("META_DATA", "name"), ("META_DATA", "value"),
])
def test_absent_column_reads_as_null_and_is_said(tmp_path: Path, table: str, column: str) -> None:
    """A column a figure reads, absent, was read as NULL in every row without a word: a lost planeId made the 2.7 ms
    Wait Time of the level-1 sample 94 ms, a lost COMPUTE_TASK_INFO.name moved 4 kernels between Conv and Vector.
    Now one warning names the table, the column and what that costs, and every figure is the one of a copy whose
    column is NULL in every row (what the warning says). Where that copy's NULL cells are said, the cost is their
    warning's text (one text per column; test_db_absent_cost checks that the costs are the real ones)."""
    gone = _db(tmp_path / "gone", f"ALTER TABLE {table} DROP COLUMN {column}")
    null = _db(tmp_path / "null", f"UPDATE {table} SET {column} = NULL")
    got, want = _figures(gone), _figures(null)
    _same(got, want)
    head = f"DB: table {table} lacks column(s) {column}; read as missing (NULL) in every row: "
    (said,) = [w for w in got[2] if w.startswith(head)]
    assert len(said) > len(head) + 20 and not [w for w in want[2] if w.startswith(head)]
    null_said = [w.split(" (NULL): ", 1)[1] for w in want[2] if f" {table}.{column} value(s) missing (NULL): " in w]
    assert null_said in ([], [said[len(head):]])
    assert [w for w in got[2] if w != said] == [w for w in want[2] if f"{table}.{column} " not in w]
    assert not [w for w in _figures(L1)[2] if "lacks column" in w]  # the excerpt lacks none


def test_real_exports_lack_no_column_the_loader_reads(samples: Path, tmp_path: Path) -> None:
    """The absent-column warning is no noise on real exports: the torch_npu DBs of every level the samples hold
    (Level0, whose TASK_PMU_INFO table is absent, Level1, Level2; both ranks) and msprof's own export of another
    version (MindStudio Insight's msprof_0.db, no PYTORCH_API, MEMORY_RECORD or TASK_PMU_INFO table, copied
    under an export's name) have every column the loader reads, with every comparison on and with a step. What
    differs by level or version is a table (said per table) or a column read without this warning
    (PYTORCH_API.type, COMMUNICATION_SCHEDULE_TASK_INFO.inputShapes, TASK_PMU_INFO.timestampNs)."""
    dbs = sorted(samples.glob("msinsight/test/data/pytorch/db/level*/rank*_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                              "ascend_pytorch_profiler_*.db"))
    assert len(dbs) == 5
    msprof = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(samples / "msinsight/server/src/test/test_data/full_db/msprof_0.db", msprof)
    for db in [*dbs, msprof]:
        steps = [s for (s,) in sql(db, "SELECT id FROM STEP_TIME")] if sql(
            db, "SELECT 1 FROM sqlite_master WHERE name = 'STEP_TIME'") else []
        for step in [-1, *steps[:1]]:
            p = load_profile(str(db), OPTS, step)
            assert not [w for w in p.warnings if "lacks column" in w], (db, step)
    assert not sql(dbs[0], "SELECT 1 FROM sqlite_master WHERE name = 'TASK_PMU_INFO'")  # Level0


def test_absent_planeid_changes_the_wait_time(tmp_path: Path) -> None:
    """The figure a lost column moved the most, pinned: the level-1 excerpt's Wait Time is 2,675,633 ns (the
    sample's 0.003 s); without planeId every task is on one plane and it is 94,028,225 ns, now with the warning."""
    assert _figures(L1)[0]["wait_ns"] == 2675633
    gone = _db(tmp_path, "ALTER TABLE COMMUNICATION_TASK_INFO DROP COLUMN planeId")
    got = _figures(gone)
    assert got[0]["wait_ns"] == 94028225
    assert ("DB: table COMMUNICATION_TASK_INFO lacks column(s) planeId; read as missing (NULL) in every row: those "
            "tasks share one plane, -1 (the wait rule follows the tasks of a plane)") in got[2]


def test_absent_memory_timestamp_is_said_only_with_a_step(tmp_path: Path) -> None:
    """MEMORY_RECORD without timestamp: the whole run's peak needs none (every record, the SQL maximum, no
    warning); in a step no record can be placed (Mem Usage 0, as with every timestamp NULL) and the absent
    column is said."""
    db = _db(tmp_path, "ALTER TABLE MEMORY_RECORD DROP COLUMN timestamp")
    peak = sql(L1, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0][0]
    p = load_profile(str(db), OPTS)
    assert p.extra["memory_peak_bytes"] == peak and not [w for w in p.warnings if "lacks column" in w]
    p = load_profile(str(db), OPTS, STEP)
    assert p.extra["memory_peak_bytes"] == 0
    assert (f"{db}: table MEMORY_RECORD lacks column(s) timestamp; read as missing (NULL) in every row: those "
            "readings are in no step (Mem Usage of a step leaves them out)") in p.warnings


@pytest.mark.parametrize("table, column, message", [
    ("TASK", "taskType", "table TASK lacks column taskType, so no task type is known and the time breakdown cannot "
                         "tell kernels, SDMA and profiling tasks apart"),
    ("TASK", "globalTaskId", "table TASK lacks column(s) globalTaskId"),
    ("STRING_IDS", "value", "table STRING_IDS lacks column(s) value"),
    ("STRING_IDS", "id", "table STRING_IDS lacks column(s) id"),
])
def test_absent_column_no_figure_can_do_without_is_one_error(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                             table: str, column: str, message: str) -> None:
    """TASK.taskType absent made every task typeless without a word (E2E 0.138 -> 0.172 s; all NULL was already
    an error); the other three stopped the load with SQLite's "no such column: value", naming no table. Exit 1,
    one line naming the file, the table and the column, and no report. (Renamed: STRING_IDS.id, its key, cannot be
    dropped.)"""
    db = _db(tmp_path, f"ALTER TABLE {table} RENAME COLUMN {column} TO {column}_x")
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), "-o", str(tmp_path))
    assert code == 1
    assert error_lines(err) == [f"error: {db}: {message} (comparison side)"]
    assert not list(tmp_path.glob("*.xlsx"))


def test_schedule_table_without_its_key_is_an_error(tmp_path: Path) -> None:
    """COMMUNICATION_SCHEDULE_TASK_INFO without globalTaskId was passed over without a word (its kernels lost);
    it is refused as COMPUTE_TASK_INFO without it is."""
    db = _db(tmp_path, "CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO (name INTEGER, taskType INTEGER)")
    with pytest.raises(ProfileError, match=r": table COMMUNICATION_SCHEDULE_TASK_INFO lacks column\(s\) globalTaskId$"):
        load_profile(str(db), OPTS)


# --------------------------------------------------------------------------- one communication table alone


def test_communication_ops_without_tasks_are_said(tmp_path: Path) -> None:
    """COMMUNICATION_TASK_INFO absent or empty beside communication ops: the 2.7 ms Wait Time read 0 without a word.
    The communication time of the ops stays (the SQL sum of their durations, the sample's 98 ms) and one warning
    says why no wait is known."""
    ops_ns = sql(L1, "SELECT sum(endNs - startNs) FROM COMMUNICATION_OP")[0][0]
    for state, statement in (("absent", "DROP TABLE COMMUNICATION_TASK_INFO"),
                             ("empty", "DELETE FROM COMMUNICATION_TASK_INFO")):
        got = _figures(_db(tmp_path / state, statement))
        assert got[0]["wait_ns"] == 0
        assert got[1]["comm"]["dur"].sum() == ops_ns
        assert (f"DB: COMMUNICATION_OP holds rows but COMMUNICATION_TASK_INFO is {state}: no communication task is "
                "known, so the Wait Time of communication reads 0 and CommunicationCompare has no task rows") in got[2]


def test_communication_tasks_without_ops_are_said(tmp_path: Path) -> None:
    """COMMUNICATION_OP absent beside communication tasks: no communication time (98 ms of the sample read as Free
    Time) and one warning says so; with both tables gone nothing is said (a run without communication)."""
    got = _figures(_db(tmp_path / "a", "DROP TABLE COMMUNICATION_OP"))
    assert got[0]["uncovered_comm_ns"] == 0
    assert ("DB: COMMUNICATION_TASK_INFO holds rows but COMMUNICATION_OP is absent: no communication op is known, so "
            "no Communication time is counted (its tasks' time is Free Time)") in got[2]
    none = _figures(_db(tmp_path / "b", "DROP TABLE COMMUNICATION_OP", "DROP TABLE COMMUNICATION_TASK_INFO"))
    assert not [w for w in none[2] if "COMMUNICATION" in w]


def test_communication_tasks_beside_an_empty_op_table_are_said_once(tmp_path: Path) -> None:
    """COMMUNICATION_OP empty beside communication tasks: one warning says no op is known. Every task's opId then
    pointed nowhere, and a second warning said those tasks "go to the communication op whose time holds their
    start", of ops that are not there."""
    got = _figures(_db(tmp_path, "DELETE FROM COMMUNICATION_OP"))
    assert got[0]["uncovered_comm_ns"] == 0
    assert [w for w in got[2] if "COMMUNICATION" in w] == [
        "DB: COMMUNICATION_TASK_INFO holds rows but COMMUNICATION_OP is empty: no communication op is known, so no "
        "Communication time is counted (its tasks' time is Free Time)"]


# --------------------------------------------------------------------------- references pointing nowhere

COMPUTE = "FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
#: the first compute task, its op type's text and how many compute tasks have that text
FIRST, FIRST_TYPE = sql(L1, f"SELECT c.globalTaskId, s.value {COMPUTE} JOIN STRING_IDS s ON s.id = c.opType "
                            "ORDER BY t.startNs LIMIT 1")[0]
TYPED = sql(L1, f"SELECT count(*) {COMPUTE} JOIN STRING_IDS s ON s.id = c.opType WHERE s.value = ?",
            (FIRST_TYPE,))[0][0]
NOWHERE = sql(L1, "SELECT max(id) + 1000 FROM STRING_IDS")[0][0]


@pytest.mark.parametrize("statement, said", [
    (f"UPDATE COMPUTE_TASK_INFO SET opType = {NOWHERE} WHERE globalTaskId = {FIRST}",
     "1 reference(s) to a type, shape or group text point to no text in STRING_IDS (an unknown id, or NULL there); "
     "read as empty (input shapes and data types of an unknown id as N/A)"),
    (f"UPDATE COMPUTE_TASK_INFO SET opType = -7 WHERE globalTaskId = {FIRST}",
     "1 reference(s) to a type, shape or group text point to no text in STRING_IDS (an unknown id, or NULL there); "
     "read as empty (input shapes and data types of an unknown id as N/A)"),
    (f"UPDATE TASK SET taskType = {NOWHERE} WHERE globalTaskId = {FIRST}",
     "1 reference(s) to a type, shape or group text point to no text in STRING_IDS (an unknown id, or NULL there); "
     "read as empty (input shapes and data types of an unknown id as N/A)"),
    (f"UPDATE COMPUTE_TASK_INFO SET name = -7 WHERE globalTaskId = {FIRST}",
     "1 name reference(s) point to no text in STRING_IDS (an unknown id, or NULL there); those names read as empty"),
])
def test_text_reference_pointing_nowhere_is_said(tmp_path: Path, statement: str, said: str) -> None:
    """A reference STRING_IDS lacks was counted only in a name column and only when not negative: an op type
    pointing nowhere moved its kernel into the empty op type's KernelCompare row without a word. Every text column
    counts it now, once a row (TASK.taskType, read by two queries, is counted once): the op type case leaves the
    first kernel's type empty and its type one kernel short of the SQL count."""
    db = _db(tmp_path, statement)
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "point to no text" in w] == [f"{db}: {said}"]
    if "opType" in statement:
        types = p.extra["kernel_extra"]["op_type"]
        assert (types == FIRST_TYPE).sum() == TYPED - 1 and (types == "").sum() == 1


@pytest.mark.parametrize("op_id", [NOWHERE, -5, -2])
def test_communication_task_naming_an_op_id_no_op_has_goes_by_time(tmp_path: Path, op_id: int) -> None:
    """CommunicationCompare pairs a DB task with its op by opId; a task whose opId no COMMUNICATION_OP row holds
    was dropped without a word (Calls 36 -> 35 on the level-1 sample). It is read as a NULL opId now (placed in the
    op whose time holds its start, as the loader says of NULLs), with one warning: every task of the excerpt is
    in CommunicationCompare again, as many as COMMUNICATION_TASK_INFO joins to TASK (SQL), each where a copy with
    that opId NULL places it. A negative opId (-5; -2, the mark of a task whose op is outside a step) was not
    counted and still dropped (dbfuzz63)."""
    from msprof_compare.compare.communication import side_data

    (row,) = sql(L1, "SELECT min(rowid) FROM COMMUNICATION_TASK_INFO")[0]
    (tasks,) = sql(L1, "SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                       "ON c.globalTaskId = t.globalTaskId")[0]
    gone = _db(tmp_path / "gone", f"UPDATE COMMUNICATION_TASK_INFO SET opId = {op_id} WHERE rowid = {row}")
    null = _db(tmp_path / "null", f"UPDATE COMMUNICATION_TASK_INFO SET opId = NULL WHERE rowid = {row}")
    p = load_profile(str(gone), OPTS)
    placed = sum(len(v) for fam in side_data(p, None).values() for v in fam["tasks"].values())
    assert placed == tasks
    assert (f"{gone}: 1 COMMUNICATION_TASK_INFO row(s) name an opId that COMMUNICATION_OP lacks; they go to the "
            "communication op whose time holds their start") in p.warnings
    want = side_data(load_profile(str(null), OPTS), None)
    got = side_data(p, None)
    assert list(got) == list(want)
    for fam, parts in want.items():
        assert (got[fam]["ops"] == parts["ops"]).all() and list(got[fam]["tasks"]) == list(parts["tasks"])
        for name, ns in parts["tasks"].items():
            assert (got[fam]["tasks"][name] == ns).all()


PMU_SAID = ("TASK_PMU_INFO holds rows, but no compute task gets a counter from them (aic_total_time, aic_mac_time, "
            "aic_mte2_time, aiv_total_time): no kernel counts as a cube kernel by its PMU figures")


@pytest.mark.parametrize("statements", [
    ("UPDATE TASK_PMU_INFO SET globalTaskId = -1 - globalTaskId",),
    ("UPDATE STRING_IDS SET value = value || '_x' WHERE value IN ('aic_total_time', 'aic_mac_time', 'aic_mte2_time')",),
])
def test_pmu_rows_no_compute_task_reads_are_said(tmp_path: Path, statements: tuple[str, ...]) -> None:
    """TASK_PMU_INFO with rows decides the cube-kernel rule by the PMU (reference-1 §7.3); rows of which no compute
    task gets a counter (every globalTaskId pointing nowhere, or no counter name the breakdown reads) made the
    excerpt's 23 cube kernels (cube_mask; SQL: the tasks with a non-zero aic_total_time or aic_mac_time)
    Vector ones without a word. The figures stay by the rule (no cube kernel) and one warning says why; the
    unedited excerpt says nothing of it."""
    (cubes,) = sql(L1, "SELECT count(DISTINCT t.globalTaskId) FROM TASK t JOIN COMPUTE_TASK_INFO c "
                       "ON c.globalTaskId = t.globalTaskId JOIN TASK_PMU_INFO p ON p.globalTaskId = t.globalTaskId "
                       "JOIN STRING_IDS s ON s.id = p.name WHERE s.value IN ('aic_total_time', 'aic_mac_time') "
                       "AND p.value <> 0")[0]
    clean = load_profile(str(L1), OPTS)
    assert int(cube_mask(clean).sum()) == cubes > 0 and not [w for w in clean.warnings if "TASK_PMU_INFO" in w]
    db = _db(tmp_path, *statements)
    p = load_profile(str(db), OPTS)
    assert int(cube_mask(p).sum()) == 0
    assert f"{db}: {PMU_SAID}" in p.warnings


def test_memory_readings_whatever_their_timestamp_count_for_the_whole_run(tmp_path: Path) -> None:
    """Mem Usage of the whole run is the largest reading, but the query kept readings by a timestamp BETWEEN over
    the int64 range: with every timestamp TEXT (digits, a table without types) none was kept and the report said
    "no peak reserved memory recorded" beside the excerpt's readings. The whole run reads every reading now (the
    SQL maximum); a step still places only integer timestamps, and says how many it could not place."""
    db = _db(tmp_path, "CREATE TABLE M AS SELECT * FROM MEMORY_RECORD", "DROP TABLE MEMORY_RECORD",
             "CREATE TABLE MEMORY_RECORD (component, timestamp, totalAllocated, totalReserved, totalActive, "
             "streamPtr, deviceId)", "INSERT INTO MEMORY_RECORD SELECT component, CAST(timestamp AS TEXT), "
             "totalAllocated, totalReserved, totalActive, streamPtr, deviceId FROM M", "DROP TABLE M")
    (peak, rows) = sql(L1, "SELECT max(totalReserved), count(*) FROM MEMORY_RECORD")[0]
    assert sql(db, "SELECT count(*) FROM MEMORY_RECORD WHERE typeof(timestamp) = 'text'")[0][0] == rows
    p = load_profile(str(db), OPTS)
    assert p.extra["memory_peak_bytes"] == peak and not [w for w in p.warnings if "MEMORY_RECORD" in w]
    p = load_profile(str(db), OPTS, STEP)
    assert p.extra["memory_peak_bytes"] == 0
    assert (f"{db}: {rows} MEMORY_RECORD reading(s) have no integer timestamp, so none of them can be placed in the "
            "step; Mem Usage leaves them out") in p.warnings


@pytest.mark.parametrize("value", [0, -7, -1, -(2**63)])
def test_memory_block_allocated_at_no_time_is_said(tmp_path: Path, value: int) -> None:
    """The memory comparison reads blocks allocated at a time above 0 alone; one whose allocationTime is 0 or
    negative was left out without a word (a NULL one was said). It is still left out (the blocks the comparison
    reads are one fewer, by SQL), and one warning counts it. -1 too, which the query's reading of NULL as -1 said
    as missing (NULL), and int64's least, which its later reading of NULL as that value said so: NULL is now a
    flag of its own, no value a cell may hold."""
    db = _db(tmp_path, f"UPDATE OP_MEMORY SET allocationTime = {value} "
                       "WHERE rowid = (SELECT min(rowid) FROM OP_MEMORY)")
    (timed,) = sql(L1, "SELECT count(*) FROM OP_MEMORY WHERE allocationTime > 0")[0]
    p = load_profile(str(db), OPTS)
    assert int((p.operator_memory["alloc_ns"] > 0).sum()) == timed - 1
    assert (f"{db}: 1 OP_MEMORY allocationTime value(s) are 0 or negative (no time); the memory comparison leaves "
            "those blocks out") in p.warnings
    assert not [w for w in p.warnings if "OP_MEMORY.allocationTime" in w]  # not said as missing (NULL)
    assert value in p.operator_memory["alloc_ns"].tolist()


@pytest.mark.parametrize("ns", [-7, -1])
def test_memory_block_released_at_a_negative_time_is_said(tmp_path: Path, ns: int) -> None:
    """A releaseTime of 0 (or NULL) is a block never released; a negative one (-1 ns the nearest) was read so by
    the durations without a word, and shown as a negative release time. It is read as 0 now (the loaded frame
    equals that of a copy whose releaseTime is 0), and one warning counts it."""
    row = "WHERE rowid = (SELECT min(rowid) FROM OP_MEMORY)"
    neg = load_profile(str(_db(tmp_path / "neg", f"UPDATE OP_MEMORY SET releaseTime = {ns} {row}")), OPTS)
    zero = load_profile(str(_db(tmp_path / "zero", f"UPDATE OP_MEMORY SET releaseTime = 0 {row}")), OPTS)
    pd.testing.assert_frame_equal(neg.operator_memory, zero.operator_memory)
    assert [w.split(": ", 1)[1] for w in neg.warnings if "releaseTime" in w] == [
        "1 OP_MEMORY releaseTime value(s) are negative; read as never released"]


def test_input_shapes_pointing_nowhere_read_as_the_warning_says(tmp_path: Path) -> None:
    """The "type, shape or group text" warning says how each such reference reads: a torch op's inputShapes id that
    STRING_IDS lacks reads N/A (the text for no inputs), as the compute task's does; one whose text is NULL there
    reads empty (``test_ascend_db``). The warning read "an op's input shapes and types as N/A", which also named
    the op types (read empty) and the NULL texts. The first op with shapes (SQL) reads N/A, and no other op changes."""
    (rowid, shape_id) = sql(L1, "SELECT rowid, inputShapes FROM PYTORCH_API WHERE inputShapes IS NOT NULL "
                                "ORDER BY startNs, rowid LIMIT 1")[0]
    (refs,) = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE inputShapes = ?", (shape_id,))[0]
    (text,) = sql(L1, "SELECT value FROM STRING_IDS WHERE id = ?", (shape_id,))[0]
    assert refs >= 1 and text not in ("", "N/A")
    db = _db(tmp_path, f"UPDATE PYTORCH_API SET inputShapes = {NOWHERE} WHERE rowid = {rowid}")
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "point to no text" in w] == [
        f"{db}: 1 reference(s) to a type, shape or group text point to no text in STRING_IDS (an unknown id, or NULL "
        "there); read as empty (input shapes and data types of an unknown id as N/A)"]
    before = load_profile(str(L1), OPTS).ops
    changed = [c for c in ("input_dims", "input_type")
               if (p.ops[c].to_numpy() != before[c].to_numpy()).any()]
    assert len(changed) == 1
    diff = p.ops[changed[0]].to_numpy() != before[changed[0]].to_numpy()
    assert diff.sum() == 1 and p.ops.loc[diff, changed[0]].tolist() == ["N/A"]
    assert before.loc[diff, changed[0]].tolist() == [text]
