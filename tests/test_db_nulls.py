"""NULL cells of the NPU DB columns that feed a figure: each either leaves the figure right and is said in one
warning naming the file, ``TABLE.column`` and the rows (as OP_MEMORY sizes are), or, where no figure can be made,
is an error of one line.

Every input is a copy of the level-1 excerpt (tests/data/db/l1, cut from the msinsight level-1 sample) edited by
SQL in tmp_path (no sample holds a NULL in these columns); expected figures come from plain SQL on the same file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cliutil import error_lines, run_inproc
from conftest import SAMPLES
from dbutil import edited_copy, sql

from msprof_compare import api
from msprof_compare.compare import checks
from msprof_compare.compare.breakdown_db import cube_mask, db_breakdown
from msprof_compare.compare.optree import build_tree
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
#: the msinsight server's msprof_0.db, an older export whose ENUM_API_TYPE holds pta 25000 and pytorch 30000
FULL_DB = SAMPLES / "msinsight" / "server" / "src" / "test" / "test_data" / "full_db" / "msprof_0.db"
OPTS, _ = build_options()  # every comparison, the time breakdown included
COMPUTE = "FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
TYPED = "FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType"


def _db(tmp_path: Path, *statements: str) -> Path:
    """An edited copy of the level-1 excerpt, named as an export (the loader reads the DB family from the name)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    return edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", *statements)


def _said(p, column: str) -> list[str]:
    return [w for w in p.warnings if f" {column} value(s) missing (NULL)" in w]


# --------------------------------------------------------------------------- TASK.streamId


#: the excerpt's MEMCPY_ASYNC tasks on compute stream 2, retyped SDMA_SQE below (no sample has an SDMA_SQE task)
MEMCPY = sql(L1, f"SELECT t.globalTaskId, t.endNs - t.startNs {TYPED} WHERE s.value = 'MEMCPY_ASYNC' "
                 "AND t.streamId = 2 ORDER BY t.startNs LIMIT 3")
SDMA = ("INSERT INTO STRING_IDS VALUES (990001, 'SDMA_SQE')",
        f"UPDATE TASK SET taskType = 990001 WHERE globalTaskId IN ({', '.join(str(g) for g, _ in MEMCPY)})")
#: one KERNEL_AIVEC compute task of stream 2
AIVEC = sql(L1, f"SELECT t.globalTaskId {TYPED} WHERE s.value = 'KERNEL_AIVEC' ORDER BY t.startNs LIMIT 1")[0][0]


def test_task_without_a_stream_is_on_no_compute_stream(tmp_path: Path) -> None:
    """SDMA Time on compute streams: three SDMA_SQE tasks on compute stream 2 count (their SQL durations); with
    their streamId and one kernel's set NULL, all four read as one stream -1, a compute stream through that kernel,
    so the three still counted, by chance and without a word. A task of no stream is on no stream now: SDMA on
    compute streams is 0, one warning counts the 4 rows, and no other figure moves."""
    clean = db_breakdown(load_profile(str(_db(tmp_path / "a", *SDMA)), OPTS))
    assert (clean.sdma_stream.ns, clean.sdma_stream.count) == (sum(d for _, d in MEMCPY), 3)
    ids = ", ".join(str(g) for g in [*(g for g, _ in MEMCPY), AIVEC])
    db = _db(tmp_path / "b", *SDMA, f"UPDATE TASK SET streamId = NULL WHERE globalTaskId IN ({ids})")
    p = load_profile(str(db), OPTS)
    assert _said(p, "TASK.streamId") == [
        f"{db}: 4 TASK.streamId value(s) missing (NULL): those tasks are on no stream (SDMA Time leaves out their "
        "SDMA tasks; their kernels make no compute stream)"]
    bd = db_breakdown(p)
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (0, 0)
    assert (bd.computing_ns, bd.e2e_ns, bd.uncovered_comm_ns) == (clean.computing_ns, clean.e2e_ns,
                                                                  clean.uncovered_comm_ns)
    # the copies SDMA Time leaves out, named by their task types in the GPU-vs-NPU note: the excerpt's other
    # MEMCPY_ASYNC tasks beside the three it counts, all of them with the three once those are on no stream
    ((copies,),) = sql(L1, f"SELECT count(*) {TYPED} WHERE s.value = 'MEMCPY_ASYNC'")
    assert (clean.unread_copies.count, clean.unread_copy_types) == (copies - 3, ("MEMCPY_ASYNC",))
    assert (bd.unread_copies.count, bd.unread_copy_types) == (copies, ("MEMCPY_ASYNC", "SDMA_SQE"))


def test_stream_nulls_are_not_said_without_a_time_breakdown(tmp_path: Path) -> None:
    """Only the time breakdown reads TASK.streamId: a run of the operator compare alone says nothing of it."""
    db = _db(tmp_path, "UPDATE TASK SET streamId = NULL")
    assert _said(load_profile(str(db), build_options(enable_operator_compare=True)[0]), "TASK.streamId") == []


def test_absent_stream_is_said_only_where_the_time_breakdown_is_made(tmp_path: Path) -> None:
    """TASK.streamId absent follows its NULL cells' rule: said (with the SDMA Time cost) where the run makes the
    time breakdown, nothing in a run of the operator compare alone, which no stream figure feeds."""
    db = _db(tmp_path, "ALTER TABLE TASK DROP COLUMN streamId")
    said = lambda p: [w for w in p.warnings if "streamId" in w]  # noqa: E731
    assert said(load_profile(str(db), OPTS)) == [
        f"{db}: table TASK lacks column(s) streamId; read as missing (NULL) in every row: those tasks are on no "
        "stream (SDMA Time leaves out their SDMA tasks; their kernels make no compute stream)"]
    assert said(load_profile(str(db), build_options(enable_operator_compare=True)[0])) == []


#: DSAGenBitMask (globalTaskId 34, stream 3) and the stream-2 task running beside it (32), each of its own operator
TIED = (34, 32)
#: per task of TIED: (start of the operator holding its connection id, its name, its duration), by SQL
TIED_OWNERS = sorted(sql(L1, "SELECT CAST(a.startNs AS INTEGER), s.value, t.endNs - t.startNs FROM TASK t "
                             "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                             "JOIN STRING_IDS s ON s.id = c.name JOIN CONNECTION_IDS ci ON ci.connectionId = "
                             "t.connectionId JOIN PYTORCH_API a ON a.connectionId = ci.id "
                             f"WHERE t.globalTaskId IN {TIED}"))


def _owned(p) -> list[tuple[int, str, int]]:
    """(operator start, kernel name, kernel duration) of every kernel an operator of the op tree owns."""
    tree = build_tree(p, with_comm=True)
    names, durs = tree.kpool["name"].tolist(), tree.kpool["dur"].tolist()
    return sorted((int(tree.ts[i]), names[k], durs[k]) for i in range(tree.n) for k in tree.own_kernels(i).tolist())


@pytest.mark.parametrize("lanes", ["ALTER TABLE TASK DROP COLUMN streamId", "UPDATE TASK SET streamId = NULL",
                                   f"UPDATE TASK SET streamId = 2 WHERE globalTaskId = {TIED[0]}"],
                         ids=["absent", "null", "same-stream"])
def test_tasks_of_one_start_keep_their_operators(tmp_path: Path, lanes: str) -> None:
    """The flows find a task by (process, lane, start), the last task of a key winning. A DB's lane was its
    stream: without TASK.streamId (absent or NULL, every task on -1), or on one stream, two tasks starting at the
    same ns were one, the later owned by both operators and the other by none, silently (the DB links each task
    to its operator by connection id). With DSAGenBitMask moved to start with the stream-2 task beside it, each
    stays under the operator of its connection id (SQL), and every operator owns what it owns in the unedited
    excerpt."""
    ((start, end),) = sql(L1, f"SELECT startNs, endNs FROM TASK WHERE globalTaskId = {TIED[0]}")
    ((other,),) = sql(L1, f"SELECT startNs FROM TASK WHERE globalTaskId = {TIED[1]}")
    moved = f"UPDATE TASK SET startNs = {other}, endNs = {other + end - start} WHERE globalTaskId = {TIED[0]}"
    owned = _owned(load_profile(str(_db(tmp_path, moved, lanes)), OPTS))
    assert sorted(r for r in owned if r[1:] in {o[1:] for o in TIED_OWNERS}) == TIED_OWNERS
    assert owned == _owned(load_profile(str(L1), OPTS))


@pytest.mark.parametrize(("pid", "stream", "ts", "tid"), [
    # a tie on stream 3 within process 1 (not across processes), a negative stream of an odd export, a NULL one
    ([1, 1, 2, 1, 1, 1, 1], [3, 3, 3, -5, -1, 2, 3], [10, 10, 10, 20, 30, 30, 40], [3, -6, 3, -5, -7, 2, 3]),
    # three tasks of one stream and start, no stream below 0: lanes from -2 down
    ([7, 7, 7, 7], [0, 0, 0, 0], [5, 5, 5, 6], [0, -2, -3, 0]),
], ids=["negative-stream", "triple-tie"])
def test_own_lanes_lie_below_every_stream(pid: list[int], stream: list[int], ts: list[int], tid: list[int]) -> None:
    """``ascend_db._own_lanes``: a task without a stream (-1) or repeating an earlier task's (process, stream,
    start) gets a lane of its own below every stream id, a negative one of an odd export too, so no key of the
    flows' (process, lane, start) is two tasks' and no own lane is a real stream's. Expected lanes by hand."""
    from msprof_compare.loaders.ascend_db import _own_lanes

    got = _own_lanes(*(np.array(v, dtype=np.int64) for v in (pid, stream, ts)))
    assert got.tolist() == tid
    assert len(set(zip(pid, tid, ts, strict=True))) == len(ts)


# --------------------------------------------------------------------------- TASK.taskId


def test_task_id_nulls_are_counted_and_print_none(tmp_path: Path) -> None:
    """TASK.taskId NULL in three compute tasks: those kernels' Kernel Details lines (OperatorCompare) print Task Id
    None, said in one warning with the rows (the absent column was said, its NULL cells were not); the other
    lines keep the ids SQL reads."""
    three = sql(L1, f"SELECT t.globalTaskId, s.value, t.taskId {COMPUTE} JOIN STRING_IDS s ON s.id = c.name "
                    "ORDER BY t.startNs LIMIT 3")
    db = _db(tmp_path, "UPDATE TASK SET taskId = NULL WHERE globalTaskId IN "
                       f"({', '.join(str(g) for g, _, _ in three)})")
    res = api.compare(str(L1), str(db), enable_operator_compare=True, disable_module=True)
    assert _said(res.comparison, "TASK.taskId") == [
        f"{db}: 3 TASK.taskId value(s) missing (NULL): those tasks have no Task Id (the operator and module sheets' "
        "Kernel Details print None)"]
    assert _said(res.base, "TASK.taskId") == []
    sheet = res.sheet("OperatorCompare")

    def lines(col: str) -> list[list[str]]:
        return [x.split(", ") for cell in sheet[col].fillna("") for x in cell.splitlines() if "[duration:" in x]

    base, comp = lines("Kernel Details"), lines("Kernel Details.1")
    assert len(base) == len(comp) > 50
    nones = [x for x in comp if x[1] == "None"]
    # the three tasks' names, each printed once (a name may repeat: counted, not matched)
    assert len(nones) == 3 and sorted(x[0] for x in nones) == sorted(n for _, n, _ in three)
    assert not [x for x in base if x[1] == "None"]


def test_task_id_outside_uint32_reads_as_missing_and_is_said(tmp_path: Path) -> None:
    """msprof writes TASK.taskId as uint32: -5 and int64's greatest (synthetic) printed as is in the Kernel Details
    lines, unsaid. Three compute tasks so damaged now read as three NULL ones (Task Id None; the kernels equal
    a copy's with those cells NULL), said in one line naming the first by start."""
    three = sql(L1, f"SELECT t.globalTaskId, s.value {COMPUTE} JOIN STRING_IDS s ON s.id = c.name "
                    "ORDER BY t.startNs LIMIT 3")
    ids = [g for g, _ in three]
    bad = _db(tmp_path / "bad", *(f"UPDATE TASK SET taskId = {v} WHERE globalTaskId = {g}"
                                  for v, g in zip((-5, 2**63 - 1, 4294967296), ids, strict=True)))
    null = _db(tmp_path / "null", f"UPDATE TASK SET taskId = NULL WHERE globalTaskId IN ({', '.join(map(str, ids))})")
    assert sql(bad, "SELECT count(*) FROM TASK WHERE taskId < 0 OR taskId > 4294967295") == [(3,)]
    res = api.compare(str(L1), str(bad), enable_operator_compare=True, disable_module=True)
    assert [w for w in res.comparison.warnings if "taskId" in w] == [
        f"{bad}: 3 TASK.taskId value(s) are outside 0 to 4,294,967,295, no id msprof writes (the first: -5): read "
        "as missing: those tasks have no Task Id (the operator and module sheets' Kernel Details print None)"]
    pd.testing.assert_frame_equal(res.comparison.kernels, load_profile(str(null), OPTS).kernels)
    sheet = res.sheet("OperatorCompare")
    comp = [x.split(", ") for cell in sheet["Kernel Details.1"].fillna("") for x in cell.splitlines()
            if "[duration:" in x]
    nones = [x for x in comp if x[1] == "None"]
    assert sorted(x[0] for x in nones) == sorted(n for _, n in three)
    assert not [x for x in comp if x[1].lstrip("-").isdigit() and not 0 <= int(x[1]) <= 4294967295]


def test_task_id_minus_2_is_no_communication(tmp_path: Path) -> None:
    """-2 in the kernel pool marks an HCCL op's row (summed as its operator's communication): the 20 longest compute
    tasks of the level-1 excerpt with taskId -2 (synthetic) made five operator contributors hold up to 2.25 ms of
    communication a DB export links to no operator (the clean excerpt's run against the level-2 one holds none).
    Read as missing, they hold none again."""
    ids = [g for g, in sql(L1, f"SELECT t.globalTaskId {COMPUTE} ORDER BY t.endNs - t.startNs DESC LIMIT 20")]
    db = _db(tmp_path, f"UPDATE TASK SET taskId = -2 WHERE globalTaskId IN ({', '.join(map(str, ids))})")
    l2 = str(L1.parents[1] / "l2" / L1.name)
    frames = [api.compare(l2, str(x), enable_operator_compare=True, disable_module=True).frames
              for x in (L1, db)]
    assert frames[0]["contributors"]["Level"].eq("operator").all() and len(frames[0]["contributors"]) > 0
    assert frames[0].get("contributor_communication") is None
    assert frames[1].get("contributor_communication") is None


def test_plane_id_outside_uint32_is_a_plane_of_its_own_said(tmp_path: Path) -> None:
    """A COMMUNICATION_TASK_INFO.planeId below -1 (synthetic: -5 in three rows) is no plane msprof writes (uint32;
    the level-0 samples hold 4,294,967,295): it stays a plane of its own, as a sound id would group those tasks
    (read as NULL's -1 they would join the tasks of no plane), now said with the count."""
    db = _db(tmp_path, "UPDATE COMMUNICATION_TASK_INFO SET planeId = -5 WHERE rowid IN "
                       "(SELECT rowid FROM COMMUNICATION_TASK_INFO ORDER BY 1 LIMIT 3)")
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "planeId" in w] == [
        f"{db}: 3 COMMUNICATION_TASK_INFO.planeId value(s) are outside 0 to 4,294,967,295, no id msprof writes (the "
        "first: -5): each such value is read as a plane of its own (the wait rule takes, per group, the plane of "
        "least wait)"]
    assert int((p.comm["plane"] == "-5").sum()) == 3


# --------------------------------------------------------------------------- TASK.deviceId


def test_compute_task_without_a_device_is_counted(tmp_path: Path) -> None:
    """The device count is of the devices the compute tasks name: two tasks' deviceId NULL leave it at the one
    device the others name (SQL), said for the 2 compute tasks; all of them NULL leave it blank, said for all 187
    (the TASK rows that are no compute task feed no figure and are not counted)."""
    first = sql(L1, f"SELECT t.globalTaskId {COMPUTE} ORDER BY t.startNs LIMIT 2")
    db = _db(tmp_path / "a", f"UPDATE TASK SET deviceId = NULL WHERE globalTaskId IN ({first[0][0]}, {first[1][0]})")
    p = load_profile(str(db), OPTS)
    assert _said(p, "TASK.deviceId") == [
        f"{db}: 2 TASK.deviceId value(s) missing (NULL): those computing tasks name no device (the device count "
        "leaves them out)"]
    assert checks._device_count(p) == len(sql(db, f"SELECT DISTINCT t.deviceId {COMPUTE} WHERE t.deviceId IS NOT "
                                                  "NULL")) == 1
    db = _db(tmp_path / "b", "UPDATE TASK SET deviceId = NULL")
    p = load_profile(str(db), OPTS)
    (n,) = sql(db, f"SELECT count(*) {COMPUTE}")[0]
    assert [w.split(": ")[1] for w in _said(p, "TASK.deviceId")] == [f"{n:,} TASK.deviceId value(s) missing (NULL)"]
    assert n == 187 and checks._device_count(p) is None


def test_device_count_left_blank_by_null_device_ids_says_so(tmp_path: Path) -> None:
    """A DB side whose computing tasks' deviceId are all NULL has a blank device count; the Summary's detail said
    the blank meant an NPU text export's kernel_details.csv, which no DB has. It names the DB's NULL column now."""
    db = _db(tmp_path, "UPDATE TASK SET deviceId = NULL")
    row = api.compare(str(L1), str(db), enable_profiling_compare=True).guards.set_index("Check").loc["device count"]
    assert row["Base"] == 1 and pd.isna(row["Comparison"])
    assert row["Detail"].endswith("; blank: that side's data names no device (a DB export whose computing tasks' "
                                  "TASK.deviceId are NULL)")


# --------------------------------------------------------------------------- TASK.taskType


def test_task_without_a_type_is_kept_in_the_e2e_span_and_said(tmp_path: Path) -> None:
    """E2E spans the busy time and the TASK rows whose type is no kernel type; PROFILING_ENABLE / DISABLE are
    such types. With their taskType NULL their type is unknown: they stay in the span, as the original reads a
    type it cannot name, so E2E is the span of every TASK row and communication op (SQL), wider than the excerpt's,
    and one warning says the 2 rows."""
    spans = "SELECT min(startNs), max(endNs) FROM COMMUNICATION_OP UNION ALL SELECT min(startNs), max(endNs) "
    kept = sql(L1, spans + f"FROM (SELECT t.* {TYPED} WHERE s.value NOT LIKE 'PROFILING_%')")
    clean = db_breakdown(load_profile(str(L1), OPTS))
    assert clean.e2e_ns == max(e for _, e in kept) - min(s for s, _ in kept)
    db = _db(tmp_path, "UPDATE TASK SET taskType = NULL WHERE taskType IN "
                       "(SELECT id FROM STRING_IDS WHERE value LIKE 'PROFILING_%')")
    p = load_profile(str(db), OPTS)
    assert _said(p, "TASK.taskType") == [
        f"{db}: 2 TASK.taskType value(s) missing (NULL): those tasks have no type (the E2E span keeps them; SDMA "
        "Time, the event-wait streams and the cube-kernel rule pass them over)"]
    every = sql(db, spans + "FROM TASK")
    assert db_breakdown(p).e2e_ns == max(e for _, e in every) - min(s for s, _ in every) > clean.e2e_ns


def test_no_task_type_at_all_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """With every TASK.taskType NULL no kernel, SDMA or profiling task can be told: the breakdown's E2E grew from
    0.138 to 0.172 s without a word. Exit 1 and one line; a run without the time breakdown (the operator compare
    alone) does not read the column and loads."""
    db = _db(tmp_path, "UPDATE TASK SET taskType = NULL")
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db))
    assert code == 1
    assert error_lines(err) == [
        f"error: {db}: table TASK: column taskType is NULL in all 552 row(s) in range, so no task type is known and "
        "the time breakdown cannot tell kernels, SDMA and profiling tasks apart (comparison side)"]
    assert not list(tmp_path.glob("*.xlsx"))
    p = load_profile(str(db), build_options(enable_operator_compare=True)[0])
    assert len(p.kernels) == 187 and not _said(p, "TASK.taskType")


# --------------------------------------------------------------------------- communication


def test_communication_task_without_an_op_id_goes_to_the_op_around_it(tmp_path: Path) -> None:
    """CommunicationCompare puts a DB task under the op of its opId; a NULL opId left the task out (its calls
    and time gone from the sheet without a word). Such a task goes to the op whose time holds its start: with
    every opId NULL, or three, the sheet is the excerpt's, whose per-task calls and time SQL counts by opId."""
    by_id = {name: (n, ns) for name, n, ns in sql(
        L1, "SELECT s.value, count(*), sum(t.endNs - t.startNs) FROM COMMUNICATION_TASK_INFO c JOIN TASK t ON "
            "t.globalTaskId = c.globalTaskId JOIN COMMUNICATION_OP o ON o.opId = c.opId JOIN STRING_IDS s ON "
            "s.id = c.taskType GROUP BY 1")}
    want = api.compare(str(L1), str(L1), enable_communication_compare=True).sheet("CommunicationCompare")
    tasks = want[want["Task Name"].ne("") & want["Task Name"].notna()]
    got = {r["Task Name"]: (r["Calls"], round(r["Total Duration(us)"] * 1000)) for _, r in tasks.iterrows()}
    assert got == by_id and sum(n for n, _ in by_id.values()) == 296
    for sub, where, n in (("a", "", 296), ("b", " WHERE rowid IN (SELECT rowid FROM COMMUNICATION_TASK_INFO "
                                                    "ORDER BY rowid LIMIT 3)", 3)):
        db = _db(tmp_path / sub, f"UPDATE COMMUNICATION_TASK_INFO SET opId = NULL{where}")
        r = api.compare(str(L1), str(db), enable_communication_compare=True)
        assert _said(r.comparison, "COMMUNICATION_TASK_INFO.opId") == [
            f"{db}: {n:,} COMMUNICATION_TASK_INFO.opId value(s) missing (NULL): those tasks go to the communication "
            "op whose time holds their start (CommunicationCompare)"]
        # a NULL opId names no op: none is counted as an opId that COMMUNICATION_OP lacks
        assert not [w for w in r.comparison.warnings if "name an opId" in w]
        assert r.sheet("CommunicationCompare").equals(want)


@pytest.mark.parametrize(("column", "rows", "lane", "effect"), [
    ("COMMUNICATION_OP.opName", 4, "op", "those names read as empty (the time breakdown's Lccl Time counts the ops "
                                         "named kernel_aivec)"),
    ("COMMUNICATION_TASK_INFO.taskType", 296, "task", "those tasks' names read as empty (the wait rule finds wait "
                                                      "tasks by name; CommunicationCompare's Task Name)")])
def test_communication_name_null_is_said(tmp_path: Path, column: str, rows: int, lane: str, effect: str) -> None:
    """A communication op's opName or a task's taskType (its name) NULL reads as an empty name, as before, now
    said once with the rows (SQL count) and, for a task, what it costs (test_db_absent_cost: the Wait Time); the
    other rows keep their names."""
    table, col = column.split(".")
    db = _db(tmp_path, f"UPDATE {table} SET {col} = NULL")
    p = load_profile(str(db), OPTS)
    assert _said(p, column) == [f"{db}: {rows:,} {column} value(s) missing (NULL): {effect}"]
    assert sql(db, f"SELECT count(*) FROM {table} WHERE {col} IS NULL") == [(rows,)]
    names = p.comm.loc[p.comm["lane"] == lane, "name"]
    assert len(names) == rows and set(names) == {""}
    assert not [w for w in p.warnings if "name reference(s)" in w]  # a NULL cell is no STRING_IDS reference


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(("column", "effect"), [
    ("COMPUTE_TASK_INFO.name", "those kernels' names read as empty (the time breakdown's kernel categories read them)"),
    ("PYTORCH_API.name", "those names read as empty"), ("OP_MEMORY.name", "those names read as empty")])
def test_name_null_is_said_per_column(tmp_path: Path, column: str, effect: str) -> None:
    """Three rows of a name column set NULL (of PYTORCH_API, torch op rows) read as empty names (as before) and are
    said in one warning of that column; the rows loaded with an empty name are those three (the excerpt has none)."""
    table, col = column.split(".")
    ops = " WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op')" if table == "PYTORCH_API" else ""
    db = _db(tmp_path, f"UPDATE {table} SET {col} = NULL WHERE rowid IN (SELECT rowid FROM {table}{ops} ORDER BY "
                       "rowid LIMIT 3)")
    p = load_profile(str(db), build_options(enable_memory_compare=True, enable_operator_compare=True)[0])
    assert _said(p, column) == [f"{db}: 3 {column} value(s) missing (NULL): {effect}"]
    loaded = {"COMPUTE_TASK_INFO": p.kernels, "PYTORCH_API": p.ops, "OP_MEMORY": p.operator_memory}[table]
    named = "Name" if table == "OP_MEMORY" else "name"
    assert int(np.count_nonzero(loaded[named].to_numpy() == "")) == 3


# --------------------------------------------------------------------------- STRING_IDS


def test_string_ids_without_any_text_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """STRING_IDS whose every value is NULL names nothing (ops, kernels, task types): with a step asked it gave
    "There is no operator event data for step 50" without saying why, without one a workbook of empty names.
    One line, exit 1, whether a step is asked or not."""
    db = _db(tmp_path, "UPDATE STRING_IDS SET value = NULL")
    (n,) = sql(db, "SELECT count(*) FROM STRING_IDS")[0]
    line = (f"error: {db}: table STRING_IDS: all {n} values are NULL, so no name of an operator, kernel or task "
            "type can be read (comparison side)")
    for step in ([], ["--base_step", "50", "--comparison_step", "50"]):
        code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), *step)
        assert (code, error_lines(err)) == (1, [line])
    with pytest.raises(ProfileError):
        load_profile(str(db), build_options(enable_operator_compare=True)[0])


def test_step_whose_operator_has_no_name_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A step is found by its operator ProfilerStep#N: with that text NULL in STRING_IDS the step's operator is
    nameless and "no operator event data for step 50" now says how many operators have no name (1: SQL)."""
    db = _db(tmp_path, "UPDATE STRING_IDS SET value = NULL WHERE value = 'ProfilerStep#50'")
    (n,) = sql(db, "SELECT count(*) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name WHERE s.value IS NULL")[0]
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), "--base_step", "50", "--comparison_step", "50")
    assert code == 2
    assert error_lines(err) == [
        f"error: {db}: There is no operator event data for step 50, please check whether the data contains this "
        f"step. Operators without a name (no text in STRING_IDS): {n}; a step is found by its operator "
        "ProfilerStep#50, which may be one of them. (comparison side)"]
    assert n == 1


# --------------------------------------------------------------------------- columns read as before, now said

UNLINKED = "those rows link no operator to a task and no dequeue to its enqueue"
#: (TABLE.column, rows to set NULL (a subquery of rowids; the rows the loader reads), the warning's effect,
#: (loaded frame, column, value the three rows read as))
SAID = [
    ("TASK.connectionId", f"SELECT t.rowid {COMPUTE}", "those computing tasks link to no operator",
     ("kernels", "connection_id", -1)),
    ("COMPUTE_TASK_INFO.opType", "SELECT rowid FROM COMPUTE_TASK_INFO", "those kernels' types read as empty "
     "(KernelCompare keys kernels by type and input shapes)",
     ("kernel_details", "Type", "")),
    ("COMPUTE_TASK_INFO.taskType", "SELECT rowid FROM COMPUTE_TASK_INFO", "those kernels' core types read as empty "
     "(the module sheet's Kernel Details print None)",
     ("kernel_details", "Accelerator Core", "")),
    ("CONNECTION_IDS.id", "SELECT rowid FROM CONNECTION_IDS", UNLINKED, None),
    ("CONNECTION_IDS.connectionId", "SELECT rowid FROM CONNECTION_IDS", UNLINKED, None),
    ("OP_MEMORY.allocationTime", "SELECT rowid FROM OP_MEMORY", "no allocation time, so the memory comparison leaves "
     "those blocks out (as before)", ("operator_memory", "alloc_ns", 0)),
    ("COMMUNICATION_OP.groupName", "SELECT rowid FROM COMMUNICATION_OP", "those ops' group reads as empty "
     "(OverallMetrics' communication rows and the wait rule go by group)", ("comm", "group", "")),
    ("COMMUNICATION_TASK_INFO.groupName", "SELECT rowid FROM COMMUNICATION_TASK_INFO", "those tasks' group reads as "
     "empty (the wait rule follows the tasks of a group)", ("comm", "group", "")),
    ("COMMUNICATION_TASK_INFO.planeId", "SELECT rowid FROM COMMUNICATION_TASK_INFO", "those tasks share one plane, -1 "
     "(the wait rule follows the tasks of a plane)", ("comm", "tid", -1)),
    ("PYTORCH_API.globalTid", "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = "
     "'op')", "those rows are on no thread (read as process and thread -1, where they nest with each other)",
     ("ops", "tid", -1)),
]


def test_op_memory_allocation_time_of_no_integer_is_said_with_a_step(tmp_path: Path) -> None:
    """With --base_step an OP_MEMORY allocationTime that is no integer is read as without one: NULL counted in the
    warning, text refused naming the file. SQL's "allocationTime <= step end" left a NULL out unsaid and took text
    for a time after every step, so the step's blocks went missing without a word (dbfuzz65). Synthetic: three
    rows of the L1 excerpt set NULL, then one set 'abc'; the count the step keeps is SQL's."""
    db = _db(tmp_path, "UPDATE OP_MEMORY SET allocationTime = NULL WHERE rowid IN "
                       "(SELECT rowid FROM OP_MEMORY ORDER BY rowid LIMIT 3)")
    (start,) = sql(L1, "SELECT startNs FROM STEP_TIME WHERE id = 50")[0]
    kept = sql(db, "SELECT count(*) FROM OP_MEMORY WHERE allocationTime IS NULL AND (releaseTime IS NULL OR "
                   "releaseTime <= 0 OR releaseTime >= ?)", (start,))[0][0]
    assert kept == 3
    opts = build_options(enable_memory_compare=True)[0]
    p = load_profile(str(db), opts, step=50)
    assert _said(p, "OP_MEMORY.allocationTime") == [
        f"{db}: 3 OP_MEMORY.allocationTime value(s) missing (NULL): no allocation time, so the memory comparison "
        "leaves those blocks out (as before)"]
    clean = load_profile(str(L1), opts, step=50).operator_memory
    assert len(p.operator_memory) == len(clean)  # kept, read as time 0 (the comparison leaves them out)
    assert int((p.operator_memory["alloc_ns"] == 0).sum()) == 3
    bad = _db(tmp_path / "text", "UPDATE OP_MEMORY SET allocationTime = 'abc' WHERE rowid = "
                                 "(SELECT min(rowid) FROM OP_MEMORY)")
    with pytest.raises(ProfileError) as e:
        load_profile(str(bad), opts, step=50)
    assert str(e.value) == f"{bad}: table OP_MEMORY: column allocationTime holds 'abc', not an integer"


@pytest.mark.parametrize(("column", "rows", "effect", "loaded"), SAID, ids=[c for c, *_ in SAID])
def test_null_read_as_before_is_said(tmp_path: Path, column: str, rows: str, effect: str, loaded) -> None:
    """Three rows (of those the loader reads) of a column a figure reads set NULL: read as before (an empty text,
    -1 or 0: three more loaded rows read so than in the excerpt, whose communication ops alone have such a value,
    tid -1), now said in one warning with the count, which SQL gives, and no other column said."""
    table, col = column.split(".")
    db = _db(tmp_path, f"UPDATE {table} SET {col} = NULL WHERE rowid IN ({rows} ORDER BY 1 LIMIT 3)")
    assert sql(db, f"SELECT count(*) FROM {table} WHERE {col} IS NULL") == [(3,)]
    p = load_profile(str(db), build_options(enable_memory_compare=True, enable_operator_compare=True)[0])
    assert _said(p, column) == [f"{db}: 3 {column} value(s) missing (NULL): {effect}"]
    assert [w for w in p.warnings if str(db) in w and "(NULL)" in w] == _said(p, column)  # no other column said
    if loaded:
        name, field, value = loaded
        got = getattr(p, name)[field].to_numpy()
        clean = getattr(load_profile(str(L1), build_options(enable_memory_compare=True,
                                                            enable_operator_compare=True)[0]), name)[field]
        assert int(np.count_nonzero(got == value)) == 3 + int(np.count_nonzero(clean.to_numpy() == value))


def test_negative_global_tid_reads_as_a_null_one_and_is_said(tmp_path: Path) -> None:
    """A PYTORCH_API.globalTid below -1 packs no process and thread (pid << 32 | tid; synthetic: -5 in three op
    rows) and reads as a NULL one (process and thread -1), as before, now said with its count: -5 in 352 rows of
    the level-2 sample moved 1,212 module and operator figures without a word. The ops equal a copy's with those
    three cells NULL."""
    ops = ("SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op') "
           "ORDER BY 1 LIMIT 3")
    neg = _db(tmp_path / "neg", f"UPDATE PYTORCH_API SET globalTid = -5 WHERE rowid IN ({ops})")
    null = _db(tmp_path / "null", f"UPDATE PYTORCH_API SET globalTid = NULL WHERE rowid IN ({ops})")
    assert sql(neg, "SELECT count(*) FROM PYTORCH_API WHERE globalTid < 0") == [(3,)]
    p = load_profile(str(neg), OPTS)
    assert [w for w in p.warnings if "globalTid" in w] == [
        f"{neg}: 3 PYTORCH_API.globalTid value(s) are negative, no process and thread id: those rows are on no "
        "thread (read as process and thread -1, where they nest with each other)"]
    pd.testing.assert_frame_equal(p.ops, load_profile(str(null), OPTS).ops)
    assert int(np.count_nonzero(p.ops["tid"].to_numpy() == -1)) == 3


UNTYPED = ("those rows are of no kind (torch op, queue or Python row) and are left out, so the comparisons that read "
           "such rows (operator, API, memory, module) miss those among them")


def test_no_torch_op_for_want_of_a_type_says_why(tmp_path: Path) -> None:
    """PYTORCH_API rows of NULL type are of no kind and are left out: with every type NULL the side has no torch op
    ("Can't find any torch op" said it without the cause), and the warning now counts them (all 2460 rows, SQL)."""
    db = _db(tmp_path / "a", "UPDATE PYTORCH_API SET type = NULL")
    (n,) = sql(db, "SELECT count(*) FROM PYTORCH_API")[0]
    p = load_profile(str(db), OPTS)
    assert _said(p, "PYTORCH_API.type") == [f"{db}: {n:,} PYTORCH_API.type value(s) missing (NULL): {UNTYPED}"]
    assert n == 2460 and len(p.ops) == 0 and not p.has_ops


def test_rows_of_a_type_the_enum_lacks_are_said(tmp_path: Path) -> None:
    """Three op rows of a type id ENUM_API_TYPE lacks (synthetic: -5) and two of one it holds but no comparison reads
    (mstx) are of no kind the loader reads and left out, as NULL ones are: three ops and two fewer than the clean
    load. The unknown ones are counted now (-5 in 352 rows of the level-2 sample moved 6,525 figures, said only as
    kernels no flow links to an operator); the mstx ones, a kind of the export, are not."""
    clean = load_profile(str(L1), OPTS)
    op = "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op') ORDER BY 1"
    db = _db(tmp_path, f"UPDATE PYTORCH_API SET type = -5 WHERE rowid IN ({op} LIMIT 3)",
             "UPDATE PYTORCH_API SET type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'mstx') "
             f"WHERE rowid IN ({op} LIMIT 2 OFFSET 3)")
    assert sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type NOT IN (SELECT id FROM ENUM_API_TYPE)") == [(3,)]
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "ENUM_API_TYPE" in w] == [
        f"{db}: 3 PYTORCH_API row(s) have a type ENUM_API_TYPE lacks (the first: -5): {UNTYPED}"]
    assert len(p.ops) == len(clean.ops) - 5
    assert not [w for w in clean.warnings if "ENUM_API_TYPE" in w]


@pytest.mark.parametrize("value", [-1, -(2**63) + 1, -(2**63)])
def test_rows_typed_minus_one_beside_ops_are_of_a_type_the_enum_lacks(tmp_path: Path, value: int) -> None:
    """Three op rows typed -1 and two typed NULL (synthetic) beside the excerpt's typed ops: the -1 ones are of an id
    ENUM_API_TYPE lacks, said as such, as without op rows; they were counted with the NULL ones as missing (the
    query read a NULL type as -1). Both kinds are left out: five ops fewer than the clean load. Counts by SQL. So
    are int64's least + 1 and its least, which the query's later marks of a NULL type and of one that is no integer
    said as missing and as 'stored other than as an integer (the first: None)': those are told by the read's mask
    now, no value a type may hold."""
    clean = load_profile(str(L1), OPTS)
    op = "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op') ORDER BY 1"
    db = _db(tmp_path, f"UPDATE PYTORCH_API SET type = {value} WHERE rowid IN ({op} LIMIT 3)",
             f"UPDATE PYTORCH_API SET type = NULL WHERE rowid IN ({op} LIMIT 2)")
    assert sql(db, f"SELECT count(*), typeof(type) FROM PYTORCH_API WHERE type = {value}") == [(3, "integer")]
    assert sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type IS NULL") == [(2,)]
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "PYTORCH_API" in w and "type" in w] == [
        f"{db}: 3 PYTORCH_API row(s) have a type ENUM_API_TYPE lacks (the first: {value}): {UNTYPED}",
        f"{db}: 2 PYTORCH_API.type value(s) missing (NULL): {UNTYPED}"]
    assert len(p.ops) == len(clean.ops) - 5


def test_rows_of_a_type_stored_as_text_are_read_or_said(tmp_path: Path) -> None:
    """A PYTORCH_API type stored other than as an integer passed neither the IN pairs nor the test of an integer
    type no ENUM names, so its rows were left out without a word. Three op rows typed 'op' and two Python rows typed
    2.5 (synthetic) are left out and said (three ops and two Python frames fewer than the clean load, the first by
    SQL); in a type column of no affinity (the table rebuilt so) three op rows typed '50001' as text are read as
    the integer they spell, as every integer query reads digits: the ops of the clean load, nothing said."""
    clean = load_profile(str(L1), OPTS)
    kind = "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = '{}') LIMIT {}"
    db = _db(tmp_path / "a", f"UPDATE PYTORCH_API SET type = 'op' WHERE rowid IN ({kind.format('op', 3)})",
             f"UPDATE PYTORCH_API SET type = 2.5 WHERE rowid IN ({kind.format('trace', 2)})")
    (first,), = sql(db, "SELECT type FROM PYTORCH_API WHERE typeof(type) NOT IN ('integer', 'null') ORDER BY rowid "
                        "LIMIT 1")
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "stored other than" in w] == [
        f"{db}: 5 PYTORCH_API row(s) have a type stored other than as an integer (the first: {first!r}): {UNTYPED}"]
    assert len(p.ops) == len(clean.ops) - 3 and len(p.python_functions) == len(clean.python_functions) - 2
    cols = ("startNs, endNs, globalTid, connectionId, name, sequenceNumber, fwdThreadId, inputDtypes, inputShapes, "
            "callchainId, type, depth")
    db = _db(tmp_path / "b", "CREATE TABLE P2 (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, "
             "name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, "
             "callchainId INTEGER, type, depth INTEGER)",
             f"INSERT INTO P2 SELECT {cols} FROM PYTORCH_API ORDER BY rowid",
             "DROP TABLE PYTORCH_API", "ALTER TABLE P2 RENAME TO PYTORCH_API",
             f"UPDATE PYTORCH_API SET type = '50001' WHERE rowid IN ({kind.format('op', 3)})")
    assert sql(db, "SELECT count(*) FROM PYTORCH_API WHERE typeof(type) = 'text'") == [(3,)]
    p = load_profile(str(db), OPTS)
    assert not [w for w in p.warnings if "PYTORCH_API" in w and "type" in w]
    assert len(p.ops) == len(clean.ops) and len(p.python_functions) == len(clean.python_functions)


#: the columns of the excerpt's PYTORCH_API, and the statements that copy it to a table whose ``type`` column has no
#: affinity, so a text written there stays text (an INTEGER column turns '7' back into 7)
API_COLS = ("startNs, endNs, globalTid, connectionId, name, sequenceNumber, fwdThreadId, inputDtypes, inputShapes, "
            "callchainId, type, depth")
UNTYPED_API = ("CREATE TABLE P2 (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, "
               "sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, "
               "callchainId INTEGER, type, depth INTEGER)",
               f"INSERT INTO P2 SELECT {API_COLS} FROM PYTORCH_API ORDER BY rowid",
               "DROP TABLE PYTORCH_API", "ALTER TABLE P2 RENAME TO PYTORCH_API")


def test_a_kind_not_read_is_said_alike_as_digits_text_or_integer_without_the_enum(tmp_path: Path) -> None:
    """Without ENUM_API_TYPE, msprof's own kind ids are read. Three op rows typed 7 (no kind msprof writes;
    synthetic) with globalTid -5 are of no kind: they were left out unsaid, typed by integer or by digits text
    alike, where a DB with the table says them. Both copies now say the same one line, and the 318 queue rows
    typed '50002' / 50002 (a kind msprof writes, not read with the memory compare off) go unsaid as before: the
    same ops and Python frames (counted by SQL), no queue."""
    ops3 = "SELECT rowid FROM PYTORCH_API WHERE type = 50001 ORDER BY rowid LIMIT 3"

    def copy(name: str, seven: str, queue: str) -> Path:
        return _db(tmp_path / name, "DROP TABLE ENUM_API_TYPE", *UNTYPED_API,
                   f"UPDATE PYTORCH_API SET type = {seven}, globalTid = -5 WHERE rowid IN ({ops3})",
                   f"UPDATE PYTORCH_API SET type = {queue} WHERE type = 50002")

    text, integer = copy("text", "'7'", "'50002'"), copy("int", "7", "50002")
    assert sql(text, "SELECT count(*) FROM PYTORCH_API WHERE typeof(type) = 'text'") == [(321,)]
    assert sql(integer, "SELECT count(*) FROM PYTORCH_API WHERE typeof(type) = 'text'") == [(0,)]
    (ops,), = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001")
    (trace,), = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50003")
    opts = build_options(enable_operator_compare=True)[0]  # the memory compare off: queue rows are not read
    p, q = load_profile(str(text), opts), load_profile(str(integer), opts)
    line = ("3 PYTORCH_API row(s) have a type none of msprof's kind ids is, the DB holding no ENUM_API_TYPE ids "
            "(the first: 7): those rows are of no kind (torch op, queue or Python row) and are left out, so the "
            "comparisons that read such rows (operator, API, memory, module) miss those among them")
    assert p.warnings == [f"{text}: {line}"] and q.warnings == [f"{integer}: {line}"]
    assert len(p.ops) == len(q.ops) == ops - 3 and len(p.python_functions) == len(q.python_functions) == trace
    assert len(p.queue) == len(q.queue) == 0
    pd.testing.assert_frame_equal(p.ops, q.ops)


def test_a_kind_msprof_writes_is_left_out_unsaid_without_the_enum(tmp_path: Path) -> None:
    """msprof's other kinds (mstx 50004, acl 20000, an older export's pytorch 30000: the samples' ENUM_API_TYPE
    tables) are no damage: without the table, rows of them are left out without a word, as with it."""
    ops3 = "SELECT rowid FROM PYTORCH_API WHERE type = 50001 ORDER BY rowid LIMIT 3"
    assert sql(L1, "SELECT id FROM ENUM_API_TYPE WHERE name IN ('mstx', 'acl')") == [(20000,), (50004,)]
    if FULL_DB.exists():  # the shared samples beside the repo
        assert sql(FULL_DB, "SELECT id FROM ENUM_API_TYPE WHERE name = 'pytorch'") == [(30000,)]
    # and every other id of those tables (mutants: one left out of _MSPROF_API_IDS): runtime 5000, hccl 5500, node
    # 10000, model 15000 (the excerpt's), an older export's pta 25000 (full_db's)
    assert sql(L1, "SELECT id FROM ENUM_API_TYPE WHERE id < 20000") == [(5000,), (5500,), (10000,), (15000,)]
    if FULL_DB.exists():
        assert sql(FULL_DB, "SELECT id FROM ENUM_API_TYPE WHERE name = 'pta'") == [(25000,)]
    for i, kind in enumerate((50004, 20000, 30000, 5000, 5500, 10000, 15000, 25000)):
        db = _db(tmp_path / str(i), "DROP TABLE ENUM_API_TYPE",
                 f"UPDATE PYTORCH_API SET type = {kind} WHERE rowid IN ({ops3})")
        p = load_profile(str(db), OPTS)
        (ops,), = sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001")
        assert p.warnings == [] and len(p.ops) == ops


def test_a_step_keeps_the_python_frames_open_at_its_start_typed_as_digits_text(tmp_path: Path) -> None:
    """--base_step: a Python frame begun before the step and still open in it stays (a call stack's outer frames),
    but one whose type is stored as digits text ('50003') was left out, where its integer-typed twin stayed: 13 of
    the excerpt's step 50. Both copies now keep, by SQL on the excerpt, the trace rows starting in the step plus
    those begun before it that end in or after it, less the modules among the latter."""
    (lo, hi), = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")
    start, end = "CAST(p.startNs AS INTEGER)", "CAST(p.endNs AS INTEGER)"
    rows = sql(L1, f"SELECT s.value, {start} FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                   f"WHERE p.type = 50003 AND {start} <= ? AND ({start} >= ? OR {end} >= ?)", (hi, lo, lo))
    want = sorted((n, t) for n, t in rows if t >= lo or not n.lower().startswith("nn.module:"))
    assert sum(t < lo for _, t in want) == 13
    text = _db(tmp_path / "text", *UNTYPED_API, "UPDATE PYTORCH_API SET type = '50003' WHERE type = 50003")
    integer = _db(tmp_path / "int", *UNTYPED_API)
    assert sql(text, "SELECT count(*) FROM PYTORCH_API WHERE typeof(type) = 'text'") == [(len(sql(
        L1, "SELECT 1 FROM PYTORCH_API WHERE type = 50003")),)]
    for db in (text, integer):
        p = load_profile(str(db), OPTS, step=50)
        got = p.python_functions
        assert sorted(zip(got["name"].tolist(), got["ts"].tolist(), strict=True)) == want
        assert p.warnings == []


def test_a_few_rows_of_no_type_beside_ops_are_said(tmp_path: Path) -> None:
    """Three op rows and two Python rows of the excerpt typed NULL beside the others: those five are left out
    (three ops fewer, two Python frames fewer than the clean load) and said with their count. They were dropped
    without a word: counting them took a scan of their own, so only a table of no op was counted; the read query
    now takes them in (its extra test cost nothing measurable at 650k rows) and the loader counts them."""
    clean = load_profile(str(L1), OPTS)
    kind = "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = '{}') LIMIT {}"
    db = _db(tmp_path, f"UPDATE PYTORCH_API SET type = NULL WHERE rowid IN ({kind.format('op', 3)}) OR rowid IN "
                       f"({kind.format('trace', 2)})")
    assert sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type IS NULL") == [(5,)]
    p = load_profile(str(db), OPTS)
    assert _said(p, "PYTORCH_API.type") == [f"{db}: 5 PYTORCH_API.type value(s) missing (NULL): {UNTYPED}"]
    assert len(p.ops) == len(clean.ops) - 3 and len(p.python_functions) == len(clean.python_functions) - 2
    assert not _said(clean, "PYTORCH_API.type")


#: the excerpt's three cube kernels (PMU aic_total_time or aic_mac_time not 0) that start first, by SQL
CUBE3 = [g for (g,) in sql(L1, "SELECT DISTINCT p.globalTaskId FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = "
                               "p.name JOIN TASK t ON t.globalTaskId = p.globalTaskId WHERE s.value IN "
                               "('aic_total_time', 'aic_mac_time') AND p.value <> 0 ORDER BY t.startNs LIMIT 3")]


def test_pmu_rows_without_a_counter_name_are_said(tmp_path: Path) -> None:
    """TASK_PMU_INFO rows whose name is NULL are no counter: with every name NULL the table still has rows, so the
    PMU rule tells cube kernels, and no task has a counter: no cube kernel (the excerpt has 23 by its PMU rows,
    SQL), now said with the 555 rows (SQL)."""
    (cube,) = sql(L1, "SELECT count(DISTINCT p.globalTaskId) FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                      "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = p.globalTaskId WHERE s.value IN "
                      "('aic_total_time', 'aic_mac_time') AND p.value <> 0")[0]
    assert int(cube_mask(load_profile(str(L1), OPTS)).sum()) == cube == 23
    db = _db(tmp_path, "UPDATE TASK_PMU_INFO SET name = NULL")
    (n,) = sql(db, "SELECT count(*) FROM TASK_PMU_INFO")[0]
    p = load_profile(str(db), OPTS)
    assert _said(p, "TASK_PMU_INFO.name") == [
        f"{db}: {n} TASK_PMU_INFO.name value(s) missing (NULL): those rows name no counter, so no task has PMU "
        "figures (the cube-kernel rule finds none)"]
    assert n == 555 and p.extra["has_pmu"] and int(cube_mask(p).sum()) == 0
    # said once: the "no compute task gets a counter" note said it again beside this one
    assert [w for w in p.warnings if "TASK_PMU_INFO" in w] == _said(p, "TASK_PMU_INFO.name")


def test_a_few_pmu_rows_without_a_name_are_said(tmp_path: Path) -> None:
    """Every PMU row of three cube kernels (SQL: 9 rows, 3 counters each) named NULL: those tasks lose their
    counters, so the cube-kernel rule passes them over (23 -> 20 cube kernels) and their aic_mac_time reads missing.
    They were dropped without a word (a count of its own cost a scan, 49 ms at 1.4M rows): the read query now takes
    them in (~10 ms more) and the loader counts those of the tasks it loaded."""
    ids = ", ".join(map(str, CUBE3))
    db = _db(tmp_path, f"UPDATE TASK_PMU_INFO SET name = NULL WHERE globalTaskId IN ({ids})")
    assert len(CUBE3) == 3 and sql(db, "SELECT count(*) FROM TASK_PMU_INFO WHERE name IS NULL") == [(9,)]
    p = load_profile(str(db), OPTS)
    assert _said(p, "TASK_PMU_INFO.name") == [
        f"{db}: 9 TASK_PMU_INFO.name value(s) missing (NULL): those rows name no counter, so their tasks may lack a "
        "PMU figure (read as missing; the cube-kernel rule may pass them over)"]
    assert int(cube_mask(p).sum()) == 20
    kx = p.extra["kernel_extra"]
    lost = kx["global_task_id"].isin(CUBE3).to_numpy()
    clean = load_profile(str(L1), OPTS).extra["kernel_extra"]["aic_mac_time"].isna().to_numpy()
    assert lost.sum() == 3 and not clean[lost].any()  # each had its counter, read missing now; the rest as before
    assert (kx["aic_mac_time"].isna().to_numpy() == (clean | lost)).all()


def test_memory_readings_all_null_are_said(tmp_path: Path) -> None:
    """A MEMORY_RECORD.totalReserved of NULL is no reading. With every reading NULL, Mem Usage read 0 without a
    word: now said for the 20 rows of the excerpt (SQL). NULLs beside readings leave the peak, the largest of the
    others (SQL), and are not counted (a count in the peak's scan cost 7 of its 56 ms at 261k rows)."""
    db = _db(tmp_path / "a", "UPDATE MEMORY_RECORD SET totalReserved = NULL")
    p = load_profile(str(db), OPTS)
    (n,) = sql(db, "SELECT count(*) FROM MEMORY_RECORD")[0]
    assert _said(p, "MEMORY_RECORD.totalReserved") == [
        f"{db}: {n} MEMORY_RECORD.totalReserved value(s) missing (NULL): Mem Usage leaves them out"]
    assert n == 20 and p.extra["memory_peak_bytes"] == 0
    db = _db(tmp_path / "b", "UPDATE MEMORY_RECORD SET totalReserved = NULL WHERE rowid IN (SELECT rowid FROM "
                             "MEMORY_RECORD ORDER BY rowid LIMIT 15)")
    p = load_profile(str(db), OPTS)
    assert p.extra["memory_peak_bytes"] == sql(db, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0][0] > 0
    assert not _said(p, "MEMORY_RECORD.totalReserved")


def test_compute_tasks_without_input_shapes_read_as_the_exports_write_them(tmp_path: Path) -> None:
    """A NULL COMPUTE_TASK_INFO.inputShapes is a task of no inputs, which the exports write as the text N/A (the
    excerpt's 11 MemSet and 2 DSAGenBitMask tasks, SQL; kernel_details.csv of the text export of the same script
    too): those 13 cells set NULL give the sheets of the excerpt, KernelCompare (keyed N/A already) and the module
    sheet's Kernel Details, whose lines dropped their "[input shapes: N/A]" (13 rows). Not said: no figure or key
    changes."""
    na = "(SELECT id FROM STRING_IDS WHERE value = 'N/A')"
    assert sql(L1, f"SELECT count(*) FROM COMPUTE_TASK_INFO WHERE inputShapes = {na}") == [(13,)]
    db = _db(tmp_path, f"UPDATE COMPUTE_TASK_INFO SET inputShapes = NULL WHERE inputShapes = {na}")
    flags = {"enable_kernel_compare": True, "enable_operator_compare": True}
    got, clean = api.compare(str(db), str(L1), **flags), api.compare(str(L1), str(L1), **flags)
    for name in ("KernelCompare", "ModuleCompare"):
        pd.testing.assert_frame_equal(got.sheet(name), clean.sheet(name))
    lines = clean.sheet("ModuleCompare")["Kernel Details"].dropna()  # the base's
    assert lines.str.contains(r"\[input shapes: N/A\]").sum() == 13
    assert not [w for w in load_profile(str(db), OPTS).warnings if "inputShapes" in w]


#: the excerpt's first communication op (by start), renamed kernel_aivec below: no sample has an LCCL op
FIRST_OP = sql(L1, "SELECT rowid, endNs - startNs FROM COMMUNICATION_OP ORDER BY startNs LIMIT 1")[0]
LCCL = ("INSERT INTO STRING_IDS VALUES (990002, 'kernel_aivec')",
        f"UPDATE COMMUNICATION_OP SET opName = 990002 WHERE rowid = {FIRST_OP[0]}")


def test_communication_op_name_feeds_the_lccl_time(tmp_path: Path) -> None:
    """What a DB's COMMUNICATION_OP.opName costs: the time breakdown's Lccl Time counts the ops named kernel_aivec
    (reference-1 §7.3, step 3), its only reader (CommunicationCompare names a DB's ops by type). One op renamed
    so counts its SQL duration; its name NULL reads as empty, Lccl 0, said with that cost. A run without the
    breakdown says nothing of the column, NULL or absent."""
    named = db_breakdown(load_profile(str(_db(tmp_path / "a", *LCCL)), OPTS))
    assert (named.lccl.ns, named.lccl.count) == (FIRST_OP[1], 1) and FIRST_OP[1] > 0
    db = _db(tmp_path / "b", *LCCL, f"UPDATE COMMUNICATION_OP SET opName = NULL WHERE rowid = {FIRST_OP[0]}")
    p = load_profile(str(db), OPTS)
    assert _said(p, "COMMUNICATION_OP.opName") == [
        f"{db}: 1 COMMUNICATION_OP.opName value(s) missing (NULL): those names read as empty (the time breakdown's "
        "Lccl Time counts the ops named kernel_aivec)"]
    bd = db_breakdown(p)
    assert (bd.lccl.ns, bd.lccl.count) == (0, 0) and bd.e2e_ns == named.e2e_ns
    comm = build_options(enable_communication_compare=True)[0]
    assert not comm.time_breakdown
    absent = _db(tmp_path / "c", "ALTER TABLE COMMUNICATION_OP DROP COLUMN opName")
    for edited in (db, absent):
        assert not [w for w in load_profile(str(edited), comm).warnings if "opName" in w]
    assert [w for w in load_profile(str(absent), OPTS).warnings if "opName" in w] == [
        f"{absent}: table COMMUNICATION_OP lacks column(s) opName; read as missing (NULL) in every row: those names "
        "read as empty (the time breakdown's Lccl Time counts the ops named kernel_aivec)"]


def test_a_type_column_of_digits_text_alone_reads_as_its_integers(tmp_path: Path) -> None:
    """A type column of no affinity whose every value is digits text ('50001', '50002', '50003'; the excerpt's
    types rewritten so, synthetic) had no op: the test for any op compared text with the integer ids, so the rows
    were counted as of no kind (all 2,460 said left out), where the same digits beside one integer row were read as
    their integers. They read as integers now: the clean load's ops, Python frames and queue rows (the copy's
    integer twin), nothing said, over all steps and in step 50."""
    text = _db(tmp_path / "text", *UNTYPED_API, "UPDATE PYTORCH_API SET type = CAST(type AS TEXT)")
    integer = _db(tmp_path / "int", *UNTYPED_API)
    assert sql(text, "SELECT count(*), sum(typeof(type) = 'text') FROM PYTORCH_API") == [(2460, 2460)]
    (ops,), = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001")
    for step in (None, 50):
        p, q = load_profile(str(text), OPTS, step=step), load_profile(str(integer), OPTS, step=step)
        assert p.warnings == q.warnings == [] and p.has_ops
        assert len(p.ops) == ops
        for frame in ("ops", "python_functions", "queue"):
            pd.testing.assert_frame_equal(getattr(p, frame), getattr(q, frame))


@pytest.mark.parametrize("step", [None, 50])
def test_no_op_row_reads_other_kinds_typed_as_digits_text(tmp_path: Path, step: int | None) -> None:
    """A PYTORCH_API of no op row at all (the excerpt's 860 op rows deleted; synthetic) whose type column has no
    affinity and whose 318 queue rows and 1,282 Python rows are typed '50002' / '50003' as text: they were counted
    as "type stored other than as an integer" and left out, the Python frames and queue rows with them, where the
    same rows typed by integer were read. Now both copies load alike (counts by SQL), nothing said of the type,
    over all steps and step 50 (left64g, session 64)."""
    def copy(name: str, queue: str, trace: str) -> Path:
        return _db(tmp_path / name, *UNTYPED_API, "DELETE FROM PYTORCH_API WHERE type = 50001",
                   f"UPDATE PYTORCH_API SET type = {queue} WHERE type = 50002",
                   f"UPDATE PYTORCH_API SET type = {trace} WHERE type = 50003")

    text, integer = copy("text", "'50002'", "'50003'"), copy("int", "50002", "50003")
    assert sql(text, "SELECT typeof(type), count(*) FROM PYTORCH_API GROUP BY 1") == [("text", 1600)]
    assert sql(integer, "SELECT typeof(type), count(*) FROM PYTORCH_API GROUP BY 1") == [("integer", 1600)]
    (trace,), = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50003")
    (queue,), = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50002")
    assert (trace, queue) == (1282, 318)
    p, q = load_profile(str(text), OPTS, step=step), load_profile(str(integer), OPTS, step=step)
    assert not [w for w in p.warnings if "type" in w and "PYTORCH_API" in w]
    assert [w.replace(str(text), "DB") for w in p.warnings] == [w.replace(str(integer), "DB") for w in q.warnings]
    assert len(p.ops) == len(q.ops) == 0
    assert len(p.python_functions) == len(q.python_functions) > 0
    assert len(p.queue) == len(q.queue) > 0
    if step is None:
        assert (len(p.python_functions), len(p.queue)) == (trace, queue)
    pd.testing.assert_frame_equal(p.python_functions, q.python_functions)
    pd.testing.assert_frame_equal(p.queue, q.queue)


def test_no_op_row_still_says_a_type_that_is_no_integer(tmp_path: Path) -> None:
    """Beside the digits text read as its kinds, a type that spells no integer ('trace', synthetic, in two Python rows
    of a PYTORCH_API of no op row) is still counted and named, alone: 2 rows, the first 'trace'."""
    db = _db(tmp_path, *UNTYPED_API, "DELETE FROM PYTORCH_API WHERE type = 50001",
             "UPDATE PYTORCH_API SET type = '50003' WHERE type = 50003",
             "UPDATE PYTORCH_API SET type = 'trace' WHERE rowid IN (SELECT rowid FROM PYTORCH_API WHERE type = '50003' "
             "ORDER BY rowid LIMIT 2)")
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "stored other than" in w] == [
        f"{db}: 2 PYTORCH_API row(s) have a type stored other than as an integer (the first: 'trace'): {UNTYPED}"]
    assert len(p.python_functions) == 1282 - 2


def test_no_op_row_counts_digits_beyond_int64_as_no_integer(tmp_path: Path) -> None:
    """Digits beyond int64 spell no integer the loader reads (``_int_cell``, as beside an op), but in a PYTORCH_API
    of no op row they passed the digits test and were neither counted nor read (CAST clamped them to no kind's id,
    review65). Five Python rows of the level-1 excerpt (its 860 op rows deleted, the type column of no affinity,
    '50003' as text; synthetic) typed at int64's edges: those beyond it counted (by Python's int, here), those within
    it read as integers of no kind, and left out unsaid as an integer type is in such a table."""
    edges = ["99999999999999999999", "9223372036854775808", "-9223372036854775809",  # beyond
             "-9223372036854775808", "0009223372036854775807"]  # within: int64's least, its greatest after zeros
    beyond = [v for v in edges if not -(2**63) <= int(v) < 2**63]
    assert len(beyond) == 3
    db = _db(tmp_path, *UNTYPED_API, "DELETE FROM PYTORCH_API WHERE type = 50001",
             "UPDATE PYTORCH_API SET type = '50003' WHERE type = 50003",
             *(f"UPDATE PYTORCH_API SET type = '{v}' WHERE rowid = (SELECT rowid FROM PYTORCH_API WHERE type = '50003' "
               "ORDER BY rowid LIMIT 1)" for v in edges))
    assert [v for v, in sql(db, "SELECT type FROM PYTORCH_API WHERE type <> '50003' AND typeof(type) = 'text' "
                                "ORDER BY rowid")] == edges
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "stored other than" in w] == [
        f"{db}: {len(beyond)} PYTORCH_API row(s) have a type stored other than as an integer (the first: "
        f"{beyond[0]!r}): {UNTYPED}"]
    assert len(p.python_functions) == 1282 - len(edges)


@pytest.mark.parametrize(("op", "trace"), [(2**63 - 1, -(2**63)), (-(2**63), 2**63 - 1)],
                         ids=["op-greatest", "op-least"])
def test_digits_beyond_int64_are_no_kind_where_an_id_is_int64s_edge(tmp_path: Path, op: int, trace: int) -> None:
    """CAST clamps digits beyond int64 to its greatest or least, and the digit tests of the type (the test of any op,
    the rows of the kinds read) took such a row for a row of that kind where ENUM_API_TYPE's id is that edge:
    synthetic, the level-1 excerpt's op id made int64's greatest and its trace id its least (and the other way round:
    mutation audit mut66b, the least edge untested), its 860 op rows deleted, its Python rows typed as the text of
    their new id in a type column of no affinity, two of them '99999999999999999999' and '-99999999999999999999':
    the DB read as holding an op. Now those two are no integer (as ``_int_cell`` reads them): no op, one line
    counting both, the other Python rows read (counts by SQL)."""
    one = "(SELECT rowid FROM PYTORCH_API WHERE type = '{}' ORDER BY rowid LIMIT 1)"
    db = _db(tmp_path, *UNTYPED_API, "DELETE FROM PYTORCH_API WHERE type = 50001",
             f"UPDATE ENUM_API_TYPE SET id = {op} WHERE name = 'op'",
             f"UPDATE ENUM_API_TYPE SET id = {trace} WHERE name = 'trace'",
             f"UPDATE PYTORCH_API SET type = '{trace}' WHERE type = 50003",
             f"UPDATE PYTORCH_API SET type = '99999999999999999999' WHERE rowid = {one.format(trace)}",
             f"UPDATE PYTORCH_API SET type = '-99999999999999999999' WHERE rowid = {one.format(trace)}")
    assert sql(db, "SELECT count(*) FROM PYTORCH_API WHERE CAST(type AS INTEGER) = ?", (op,)) == [(1,)]
    (rows,), = sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type = ?", (str(trace),))
    assert rows == 1282 - 2
    p = load_profile(str(db), OPTS)
    assert p.extra["any_op"] is False and len(p.ops) == 0
    assert [w for w in p.warnings if "PYTORCH_API" in w and "type" in w] == [
        f"{db}: 2 PYTORCH_API row(s) have a type stored other than as an integer (the first: '99999999999999999999'): "
        f"{UNTYPED}"]
    assert len(p.python_functions) == rows


def test_uint32_max_is_a_sound_plane_and_task_id(tmp_path: Path) -> None:
    """4,294,967,295 is uint32's greatest, a value msprof writes: the level-0 sample's 296 communication tasks all
    have planeId 4294967295 (SQL) and read as that plane, unsaid; a compute task of the l1 excerpt given taskId
    4294967295 (synthetic) keeps it, unsaid, where 4294967296 is said (mutant: the bound taken as '>=')."""
    lv0 = SAMPLES / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/" \
        "ascend_pytorch_profiler_0.db"
    if not lv0.exists():
        pytest.skip("shared samples not present")
    assert sql(lv0, "SELECT planeId, count(*) FROM COMMUNICATION_TASK_INFO GROUP BY 1") == [(4294967295, 296)]
    p = load_profile(str(lv0), OPTS)
    assert [w for w in p.warnings if "outside 0 to" in w] == []
    assert int((p.comm["plane"] == "4294967295").sum()) == 296
    (g,), = sql(L1, f"SELECT t.globalTaskId {COMPUTE} ORDER BY t.startNs LIMIT 1")
    for value, said in ((4294967295, False), (4294967296, True)):
        (tmp_path / str(value)).mkdir()
        db = edited_copy(L1, tmp_path / str(value) / L1.name,
                         f"UPDATE TASK SET taskId = {value} WHERE globalTaskId = {g}")
        p = load_profile(str(db), OPTS)
        assert bool([w for w in p.warnings if "TASK.taskId" in w]) is said
        assert (value in p.kernels["task_id"].tolist()) is not said



#: the statements that copy the excerpt's OP_MEMORY to a table whose two times have no affinity, so a whole REAL or
#: digits written there stay as written (an INTEGER column stores both as integers)
OP_MEMORY_COLS = ("name, size, allocationTime, releaseTime, activeReleaseTime, duration, activeDuration, "
                  "allocationTotalAllocated, allocationTotalReserved, allocationTotalActive, releaseTotalAllocated, "
                  "releaseTotalReserved, releaseTotalActive, streamPtr, deviceId")
UNTYPED_OP_MEMORY = ("CREATE TABLE M2 (name INTEGER, size INTEGER, allocationTime BLOB, releaseTime BLOB, "
                     "activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, allocationTotalAllocated "
                     "INTEGER, allocationTotalReserved INTEGER, allocationTotalActive INTEGER, releaseTotalAllocated "
                     "INTEGER, releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER, "
                     "deviceId INTEGER)",
                     f"INSERT INTO M2 SELECT {OP_MEMORY_COLS} FROM OP_MEMORY ORDER BY rowid",
                     "DROP TABLE OP_MEMORY", "ALTER TABLE M2 RENAME TO OP_MEMORY")


@pytest.mark.parametrize("kind", ["REAL", "TEXT"])
def test_op_memory_times_read_from_other_types_keep_to_the_step(tmp_path: Path, kind: str) -> None:
    """With --base_step, OP_MEMORY times written as a whole REAL or as digits in TEXT (read as those integers, as
    without a step) are held to the step as integer ones are: the typeof test that lets a time of no integer reach
    the checks (dbfuzz65) kept a block allocated after the step's end, and SQL's text order kept one released
    before its start. Synthetic: in a copy whose times have no affinity, the L1 excerpt's first three blocks moved
    a second past step 50's end and the next three released a second before its start, once as integers (which
    SQL's filter drops: six blocks fewer) and once as ``kind``: the same blocks."""
    (start, end) = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    late = "(SELECT rowid FROM OP_MEMORY ORDER BY rowid LIMIT 3)"
    early = "(SELECT rowid FROM OP_MEMORY ORDER BY rowid LIMIT 3 OFFSET 3)"
    # multiples of 1024 ns, exact as a REAL (between 2**60 and 2**61 a double holds steps of 256)
    at, gone = (end + 10**9) // 1024 * 1024, (start - 10**9) // 1024 * 1024

    def moved(folder: str, cast: str) -> Path:
        return _db(tmp_path / folder, *UNTYPED_OP_MEMORY,
                   f"UPDATE OP_MEMORY SET allocationTime = {cast.format(at)} WHERE rowid IN {late}",
                   f"UPDATE OP_MEMORY SET allocationTime = {cast.format(gone - 2**20)}, releaseTime = "
                   f"{cast.format(gone)} WHERE rowid IN {early}")

    opts = build_options(enable_memory_compare=True)[0]
    whole = load_profile(str(L1), opts, step=50).operator_memory
    ints = load_profile(str(moved("int", "{}")), opts, step=50).operator_memory
    assert len(ints) == len(whole) - 6  # SQL's filter on integers
    db = moved(kind.lower(), f"CAST({{}} AS {kind})")
    assert sql(db, f"SELECT DISTINCT typeof(allocationTime), typeof(releaseTime) FROM OP_MEMORY WHERE rowid IN "
                   f"{early}") == [(kind.lower(), kind.lower())]
    typed = load_profile(str(db), opts, step=50).operator_memory
    pd.testing.assert_frame_equal(typed.reset_index(drop=True), ints.reset_index(drop=True))
