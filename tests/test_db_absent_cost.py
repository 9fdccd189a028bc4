"""A column the DB loader reads that its table lacks: the one warning per table names what each absent column costs
(its NULL cells' text where they have one), and the cost it names is the real one: the figure it names moves as it
says against the unedited excerpt, and only that warning is new.

Every input is a copy of the level-1 excerpt (tests/data/db/l1, cut from the msinsight level-1 sample) edited by
SQL in tmp_path (no sample lacks any of these columns: test_db_schema); expected figures come from plain SQL or from
the unedited excerpt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from dbutil import edited_copy, sql

from msprof_compare import api
from msprof_compare.compare import checks, communication
from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
OPTS, _ = build_options()  # every comparison, the time breakdown included
HEAD = "table {} lacks column(s) {}; read as missing (NULL) in every row: "


def _db(tmp_path: Path, *statements: str) -> Path:
    """An edited copy of the level-1 excerpt, named as an export (the loader reads the DB family from the name)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    return edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", *statements)


def _absent(p, db: Path, table: str) -> list[str]:
    """The absent-column warnings of ``table``, the file's path and the head taken out."""
    head = f"{db}: table {table} lacks column(s) "
    return [w[len(head):] for w in p.warnings if w.startswith(head)]


def _new(p, clean, db: Path) -> list[str]:
    """The warnings of ``p`` that the unedited excerpt's load ``clean`` does not give (paths taken out)."""
    before = {w.replace(str(L1), "DB") for w in clean.warnings}
    return [w.replace(str(db), "DB") for w in p.warnings if w.replace(str(db), "DB") not in before]


def _drop(tmp_path: Path, table: str, column: str, *before: str) -> Path:
    return _db(tmp_path, *before, f"ALTER TABLE {table} DROP COLUMN {column}")


# --------------------------------------------------------------------------- communication: the Wait Time


WAIT = 2675633  # the excerpt's Wait Time (ns): its level-1 sample's 0.003 s (test_db_schema pins it)


@pytest.mark.parametrize(("table", "column", "effect"), [
    ("COMMUNICATION_TASK_INFO", "taskType", "those tasks' names read as empty (the wait rule finds wait tasks by "
                                            "name; CommunicationCompare's Task Name)"),
    ("COMMUNICATION_TASK_INFO", "groupName", "those tasks' group reads as empty (the wait rule follows the tasks of a "
                                             "group)"),
    ("COMMUNICATION_OP", "groupName", "those ops' group reads as empty (OverallMetrics' communication rows and the "
                                      "wait rule go by group)"),
])
def test_absent_communication_column_costs_the_wait_time(tmp_path: Path, table: str, column: str,
                                                         effect: str) -> None:
    """The wait rule reads Notify_Wait tasks by name, within a group: without the tasks' names, their group or the
    ops' group no wait task is found and the 2.7 ms Wait Time reads 0, as the one new warning says; the
    communication time of the groups stays."""
    clean = load_profile(str(L1), OPTS)
    assert db_breakdown(clean).wait_ns == WAIT
    db = _drop(tmp_path, table, column)
    p = load_profile(str(db), OPTS)
    assert _new(p, clean, db) == [f"DB: {HEAD.format(table, column)}{effect}"]
    bd = db_breakdown(p)
    assert bd.wait_ns == 0

    def total(groups: dict) -> int:
        return sum(g["wait"] + g["transmit"] for g in groups.values())

    assert total(bd.groups) == total(db_breakdown(clean).groups) > WAIT


def test_absent_op_group_puts_the_communication_time_under_an_empty_group(tmp_path: Path) -> None:
    """OverallMetrics' communication rows go by the ops' group: without COMMUNICATION_OP.groupName the excerpt's one
    group (its text, SQL) keeps no time and an empty group holds all of it."""
    ((group,),) = sql(L1, "SELECT DISTINCT s.value FROM COMMUNICATION_OP o JOIN STRING_IDS s ON s.id = o.groupName")
    clean = db_breakdown(load_profile(str(L1), OPTS)).groups
    assert list(clean) == [group] and clean[group]["wait"] == WAIT
    got = db_breakdown(load_profile(str(_drop(tmp_path, "COMMUNICATION_OP", "groupName")), OPTS)).groups
    assert got[group] == {"wait": 0, "transmit": 0}
    assert got[""]["transmit"] == clean[group]["wait"] + clean[group]["transmit"]


def test_absent_op_type_leaves_the_ops_out_of_communication_compare(tmp_path: Path) -> None:
    """CommunicationCompare names a DB's ops by their type: without COMMUNICATION_OP.opType the comparison side has
    no row (every ".1" figure blank), where the excerpt's 4 allreduce ops (SQL) fill the base side."""
    db = _drop(tmp_path, "COMMUNICATION_OP", "opType")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "COMMUNICATION_OP") == [
        "opType; read as missing (NULL) in every row: those ops' types read as empty (CommunicationCompare names a "
        "DB's ops by type and leaves out those of none)"]
    sheet = api.compare(str(L1), str(db), enable_communication_compare=True).sheet("CommunicationCompare")
    assert sheet["Calls.1"].isna().all()
    ops = sheet[sheet["Communication OP Name"].eq("allreduce")]
    assert ops["Calls"].tolist() == [sql(L1, "SELECT count(*) FROM COMMUNICATION_OP")[0][0]] == [4]
    assert communication.unnamed_ops(p, None, communication.comm_events(p))[:2] == (4, 4)


# --------------------------------------------------------------------------- compute tasks


def test_absent_kernel_names_move_kernels_between_categories(tmp_path: Path) -> None:
    """The time breakdown's kernel categories read the kernel names: without COMPUTE_TASK_INFO.name the excerpt's 25
    Vector (Trans) kernels (told by a Trans word in their names) and 11 SDMA (Tensor Move) kernels move to other
    categories (both read 0), while the computing time, which no name decides, stays."""
    clean = db_breakdown(load_profile(str(L1), OPTS))
    assert (clean.buckets["vector_trans"].count, clean.buckets["sdma_tm"].count) == (25, 11)
    db = _drop(tmp_path, "COMPUTE_TASK_INFO", "name")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "COMPUTE_TASK_INFO") == [
        "name; read as missing (NULL) in every row: those kernels' names read as empty (the time breakdown's kernel "
        "categories read them)"]
    got = db_breakdown(p)
    assert (got.buckets["vector_trans"].count, got.buckets["sdma_tm"].count) == (0, 0)
    assert got.buckets["vector_notrans"].count > clean.buckets["vector_notrans"].count
    assert got.computing_ns == clean.computing_ns


def _kernel_sheet(db: Path) -> pd.DataFrame:
    return api.compare(str(L1), str(db), enable_kernel_compare=True).sheet("KernelCompare")


@pytest.mark.parametrize(("column", "field", "value", "effect"), [
    ("opType", "Kernel", "", "those kernels' types read as empty (KernelCompare keys kernels by type and input "
                             "shapes)"),
    ("inputShapes", "Input Shape", "N/A", "those kernels' input shapes read as N/A (KernelCompare keys kernels by "
                                          "type and input shapes; the module sheet's Kernel Details print none)"),
])
def test_absent_kernel_key_column_rekeys_kernel_compare(tmp_path: Path, column: str, field: str, value: str,
                                                        effect: str) -> None:
    """KernelCompare keys kernels by (type, input shapes): without COMPUTE_TASK_INFO.opType every comparison-side
    kernel is of the empty type, without inputShapes of the shape N/A, so a base row (of the 127 keys, SQL) meets a
    comparison row only where its own key is so (the excerpt's kernels of no inputs, keyed N/A), and the comparison
    side's calls are the excerpt's 187 kernels."""
    (keys,) = sql(L1, "SELECT count(*) FROM (SELECT DISTINCT o.value, i.value FROM COMPUTE_TASK_INFO c "
                      "JOIN STRING_IDS o ON o.id = c.opType JOIN STRING_IDS i ON i.id = c.inputShapes)")[0]
    db = _drop(tmp_path, "COMPUTE_TASK_INFO", column)
    assert _absent(load_profile(str(db), OPTS), db, "COMPUTE_TASK_INFO") == [
        f"{column}; read as missing (NULL) in every row: {effect}"]
    clean, got = _kernel_sheet(L1), _kernel_sheet(db)
    assert len(clean) == keys == 127 and clean["Calls.1"].notna().all()
    base, comp = got[got["Calls"].notna()], got[got["Calls.1"].notna()]
    assert len(base) == keys
    assert (base["Calls.1"].notna() == base[field].str.strip('"').eq(value)).all()
    assert set(comp[field].str.strip('"')) == {value} and int(comp["Calls.1"].sum()) == 187


def _kernel_lines(db: Path, side: str) -> list[str]:
    """The comparison side's (or base side's) Kernel Details lines of the module sheet, one per kernel."""
    sheet = api.compare(str(L1), str(db), enable_operator_compare=True).sheet("ModuleCompare")
    cells = sheet[f"Kernel Details{side}"].dropna()
    return [line for cell in cells for line in str(cell).splitlines() if line]


@pytest.mark.parametrize(("table", "column", "part", "effect"), [
    ("TASK", "taskId", 1, "those tasks have no Task Id (the operator and module sheets' Kernel Details print "
                          "None)"),
    ("COMPUTE_TASK_INFO", "taskType", 2, "those kernels' core types read as empty (the module sheet's Kernel Details "
                                         "print None)"),
])
def test_absent_task_id_or_core_prints_none_in_kernel_details(tmp_path: Path, table: str, column: str, part: int,
                                                              effect: str) -> None:
    """A module sheet Kernel Details line is "name, task id, task type[, [input shapes: ...]] [duration: ...]":
    without TASK.taskId every line's task id prints None, without COMPUTE_TASK_INFO.taskType every kernel's type;
    the excerpt prints none so, and the lines stay as many."""
    db = _drop(tmp_path, table, column)
    assert _absent(load_profile(str(db), OPTS), db, table) == [f"{column}; read as missing (NULL) in every row: "
                                                               f"{effect}"]
    clean, got = _kernel_lines(L1, ""), _kernel_lines(db, ".1")
    kernel = [line for line in clean if "[duration:" in line and not line.startswith("hcom_")]
    assert kernel and not [line for line in kernel if line.split(", ")[part] == "None"]
    lost = [line for line in got if "[duration:" in line and not line.startswith("hcom_")]
    assert len(lost) == len(kernel) and {line.split(", ")[part] for line in lost} == {"None"}


def test_absent_device_id_blanks_the_device_count(tmp_path: Path) -> None:
    """The device count is of the devices the compute tasks name: 1 on the excerpt (SQL), none without
    TASK.deviceId."""
    assert checks._device_count(load_profile(str(L1), OPTS)) == len(sql(
        L1, "SELECT DISTINCT t.deviceId FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId")) == 1
    db = _drop(tmp_path, "TASK", "deviceId")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "TASK") == ["deviceId; read as missing (NULL) in every row: those computing tasks name no "
                                      "device (the device count leaves them out)"]
    assert checks._device_count(p) is None


def test_two_absent_columns_of_a_table_are_one_line_naming_each_cost(tmp_path: Path) -> None:
    """Two columns of TASK absent: one warning, each column's cost after its name; the process id (globalPid),
    which no figure of a DB reads, is no warning at all."""
    db = _db(tmp_path, "ALTER TABLE TASK DROP COLUMN deviceId", "ALTER TABLE TASK DROP COLUMN taskId",
             "ALTER TABLE TASK DROP COLUMN globalPid")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "TASK") == [
        "taskId, deviceId; read as missing (NULL) in every row: taskId: those tasks have no Task Id (the operator "
        "and module sheets' Kernel Details print None); deviceId: those computing tasks name no device (the device "
        "count leaves them out)"]
    assert (p.kernels["pid"] == -1).all() and not [w for w in p.warnings if "globalPid" in w]


# --------------------------------------------------------------------------- torch ops, metadata, memory


def test_absent_op_link_leaves_operators_without_kernels(tmp_path: Path) -> None:
    """PYTORCH_API.connectionId links an operator to its kernels (through CONNECTION_IDS and TASK.connectionId):
    without it no operator owns a kernel, so the module sheet's comparison side has no device time, where the
    excerpt's holds some."""
    db = _drop(tmp_path, "PYTORCH_API", "connectionId")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "PYTORCH_API") == [
        "connectionId; read as missing (NULL) in every row: those rows link to no task (their operators own no "
        "kernel) and no dequeue to its enqueue"]
    assert len(p.extra["op_connections"]) == 0 < len(load_profile(str(L1), OPTS).extra["op_connections"])
    sheet = api.compare(str(L1), str(db), enable_operator_compare=True).sheet("ModuleCompare")
    assert sheet["Device Total Time(us)"].sum() > 0 and sheet["Device Total Time(us).1"].fillna(0).sum() == 0


def test_absent_op_shapes_leave_the_data_types_read_as_types(tmp_path: Path) -> None:
    """torch_npu writes an op's data types under PYTORCH_API.inputShapes and its shapes under inputDtypes, which the
    loader tells by their texts: without inputDtypes (the shapes) the column left holds letters, so it is read as
    the data types: every compared operator's Input Type is the base's and its Input Shape N/A (the shapes are
    lost). The one column was read as the shapes, so that the sheets showed data types as Input Shape."""
    db = _drop(tmp_path, "PYTORCH_API", "inputDtypes")
    assert _absent(load_profile(str(db), OPTS), db, "PYTORCH_API") == [
        "inputDtypes; read as missing (NULL) in every row: the operator and memory sheets' Input Shape or Input Type "
        "reads N/A: the other column is read alone, as the shapes or the data types its text holds (torch_npu "
        "writes the two swapped)"]
    sheet = api.compare(str(L1), str(db), enable_operator_compare=True, disable_module=True).sheet("OperatorCompare")
    both = sheet[sheet["Input Shape"].notna() & sheet["Input Shape.1"].notna()]
    assert len(both) == len(sheet) > 100
    assert both["Input Type.1"].equals(both["Input Type"]) and set(both["Input Shape.1"]) == {"N/A"}
    assert not both["Input Shape"].equals(both["Input Type"])
    assert both["Input Type"].str.contains("float").any()


def test_absent_stream_leaves_sdma_on_compute_streams_out(tmp_path: Path) -> None:
    """SDMA Time on compute streams: three MEMCPY_ASYNC tasks of compute stream 2 retyped SDMA_SQE (no sample has
    one) count their SQL durations; without TASK.streamId every task is on no stream, so none is on a compute
    stream and SDMA on compute streams reads 0."""
    memcpy = sql(L1, "SELECT t.globalTaskId, t.endNs - t.startNs FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                     "WHERE s.value = 'MEMCPY_ASYNC' AND t.streamId = 2 ORDER BY t.startNs LIMIT 3")
    sdma = ("INSERT INTO STRING_IDS VALUES (990001, 'SDMA_SQE')",
            f"UPDATE TASK SET taskType = 990001 WHERE globalTaskId IN ({', '.join(str(g) for g, _ in memcpy)})")
    clean = db_breakdown(load_profile(str(_db(tmp_path / "a", *sdma)), OPTS))
    assert (clean.sdma_stream.ns, clean.sdma_stream.count) == (sum(d for _, d in memcpy), 3)
    db = _drop(tmp_path / "b", "TASK", "streamId", *sdma)
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "TASK") == ["streamId; read as missing (NULL) in every row: those tasks are on no stream "
                                      "(SDMA Time leaves out their SDMA tasks; their kernels make no compute stream)"]
    assert (db_breakdown(p).sdma_stream.ns, db_breakdown(p).sdma_stream.count) == (0, 0)


def test_absent_metadata_value_loses_the_recorded_world_size(tmp_path: Path) -> None:
    """The metadata feeds the world size check: a copy recording distributed_args.world_size 16 reads 16; without
    META_DATA.value it records none, and the check falls back to the ranks the communication tasks name (at least
    8: dstRank up to 7, SQL)."""
    row = "INSERT INTO META_DATA VALUES ('distributed_args', '{}')".format(json.dumps({"world_size": 16}))
    with_size = load_profile(str(_db(tmp_path / "a", row)), OPTS)
    assert checks._world(with_size)[0] == 16
    db = _drop(tmp_path / "b", "META_DATA", "value", row)
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "META_DATA") == ["value; read as missing (NULL) in every row: no metadata is read, so the "
                                           "world size check has no recorded world size"]
    assert sql(L1, f"SELECT max(dstRank) FROM COMMUNICATION_TASK_INFO WHERE dstRank < {2**32 - 1}") == [(7,)]
    assert p.metadata == {} and checks._world(p)[0] == "at least 8"


def test_absent_destination_rank_loses_the_world_lower_bound(tmp_path: Path) -> None:
    """The world size check's "at least N" is the highest rank id the communication tasks name, plus one: 8 on the
    excerpt (dstRank up to 7 beside HCCL's no-peer 4294967295, SQL); without dstRank the source ranks alone (all 0,
    SQL) give no bound."""
    assert load_profile(str(L1), OPTS).rank_span == 8
    assert sql(L1, f"SELECT max(dstRank) FROM COMMUNICATION_TASK_INFO WHERE dstRank < {2**32 - 1}") == [(7,)]
    assert sql(L1, "SELECT DISTINCT srcRank FROM COMMUNICATION_TASK_INFO") == [(0,)]
    db = _drop(tmp_path, "COMMUNICATION_TASK_INFO", "dstRank")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "COMMUNICATION_TASK_INFO") == [
        "dstRank; read as missing (NULL) in every row: the world size check's lower bound reads no destination rank"]
    assert p.rank_span == 1 and checks._world(p)[0] is None


def test_absent_api_type_names_lose_the_rows_of_other_ids(tmp_path: Path) -> None:
    """ENUM_API_TYPE gives the PYTORCH_API kind ids: a copy whose torch ops are of id 99 (named op there) loads
    every op (SQL count); without ENUM_API_TYPE.name the default id 50001 is read and those ops are lost."""
    ids = ("UPDATE PYTORCH_API SET type = 99 WHERE type = 50001", "UPDATE ENUM_API_TYPE SET id = 99 WHERE id = 50001")
    (ops,) = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001")[0]
    assert len(load_profile(str(_db(tmp_path / "a", *ids)), OPTS).ops) == ops > 0
    db = _drop(tmp_path / "b", "ENUM_API_TYPE", "name", *ids)
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "ENUM_API_TYPE") == [
        "name; read as missing (NULL) in every row: PYTORCH_API rows are told apart by msprof's default kind ids (op "
        "50001, queue 50002, Python 50003); the rows of an export of other ids are lost"]
    assert len(p.ops) == 0


def test_absent_reserved_memory_reads_no_mem_usage(tmp_path: Path) -> None:
    """Mem Usage is the largest MEMORY_RECORD.totalReserved (SQL); without the column it leaves every reading out
    and reads 0."""
    assert load_profile(str(L1), OPTS).extra["memory_peak_bytes"] == sql(
        L1, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0][0] > 0
    db = _drop(tmp_path, "MEMORY_RECORD", "totalReserved")
    p = load_profile(str(db), OPTS)
    assert _absent(p, db, "MEMORY_RECORD") == ["totalReserved; read as missing (NULL) in every row: Mem Usage leaves "
                                               "them out"]
    assert p.extra["memory_peak_bytes"] == 0
