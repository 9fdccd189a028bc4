"""The SQLite DB loader: tables filled, step selection, errors, msmonitor / MindSpore DBs.

Expected values are computed independently with plain SQL on the same file
(or by hand for the synthetic DBs), never with the loader's own helpers.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cliutil import error_lines, run_inproc
from dbutil import edited_copy, sql

from msprof_compare.compare.breakdown_db import cube_mask, db_breakdown
from msprof_compare.errors import ProfileError, StepError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).parent / "data" / "db"
L1 = DATA / "l1" / "ascend_pytorch_profiler_0.db"
OPTS, _ = build_options()


# --------------------------------------------------------------------------- real excerpt


def _csv_us(ns: int | None) -> str:
    """The microsecond text operator_memory.csv / kernel_details.csv write, by hand ("" for none)."""
    return "" if not ns else f"{ns // 1000}.{ns % 1000:03d}"


def test_us_columns_are_the_text_exports_exact_texts() -> None:
    """Epoch times shown in us (MemoryCompare's allocation / release texts, kernel start) are the exact
    decimal the text export writes, not a float64 (0.25 us apart at epoch scale: ...011.090 read ...011.0)."""
    p = load_profile(str(L1), build_options(enable_memory_compare=True)[0])
    rows = sql(L1, "SELECT allocationTime, releaseTime FROM OP_MEMORY ORDER BY releaseTime")
    om = p.operator_memory
    assert om["Allocation Time(us)"].tolist() == [_csv_us(a) for a, _ in rows]
    assert om["Release Time(us)"].tolist() == [_csv_us(r) for _, r in rows]
    assert any(str(a / 1000) != _csv_us(a) for a, _ in rows if a)  # the float text would differ
    starts = [t for (t,) in sql(L1, "SELECT t.startNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId)")]
    assert sorted(p.kernel_details["Start Time(us)"].tolist()) == sorted(_csv_us(t) for t in starts)
    from msprof_compare.model import us_text

    values = np.array([0, 7, 1118, -1500, 1_736_410_576_395_011_090], dtype=np.int64)
    assert us_text(values).tolist() == ["0.000", "0.007", "1.118", "-1.500", "1736410576395011.090"]
    assert us_text(values, "").tolist()[0] == ""


def test_operator_memory_rows_keep_their_order_whatever_the_release_times_type(tmp_path: Path) -> None:
    """OP_MEMORY rows come by release time as read, whether a time is an INTEGER or its digits as TEXT (a column of
    no affinity): SQL's ORDER BY ranked text after every number, so every tenth release written as text moved its
    block to the end of its operator's Allocated Details (dbfuzz66). The order is SQL's on the unedited excerpt."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    edited_copy(L1, db, "CREATE TABLE t AS SELECT * FROM OP_MEMORY", "DROP TABLE OP_MEMORY",
                "CREATE TABLE OP_MEMORY (name, size, allocationTime, releaseTime)",
                "INSERT INTO OP_MEMORY SELECT name, size, allocationTime, releaseTime FROM t ORDER BY rowid",
                "DROP TABLE t", "UPDATE OP_MEMORY SET releaseTime = CAST(releaseTime AS TEXT) WHERE rowid % 10 = 1")
    assert sql(db, "SELECT count(*) FROM OP_MEMORY WHERE typeof(releaseTime) = 'text'") == [(17,)]
    rows = sql(L1, "SELECT name, allocationTime, releaseTime FROM OP_MEMORY ORDER BY releaseTime")
    for step in (-1, 50):
        om = load_profile(str(db), build_options(enable_memory_compare=True)[0], step=step).operator_memory
        assert om["Release Time(us)"].tolist() == [_csv_us(r) for _, _, r in rows]
        assert om["Allocation Time(us)"].tolist() == [_csv_us(a) for _, a, _ in rows]


def test_api_rows_take_pid_and_tid_from_global_tid() -> None:
    """PYTORCH_API.globalTid is the process id in its high 32 bits and the thread id in its low 32 (the excerpt's
    three thread ids are all past 16 bits): ops, Python rows and task-queue rows carry them, by SQL.
    Mutants shifting by 31 or masking 16 bits survived, since every consumer keys lanes by the same columns."""
    p = load_profile(str(L1), OPTS)
    for table, kind in ((p.ops, 50001), (p.queue, 50002), (p.python_functions, 50003)):
        want = sql(L1, "SELECT CAST(startNs AS INTEGER), globalTid >> 32, globalTid & 4294967295 FROM PYTORCH_API "
                       "WHERE type = ?", (kind,))
        assert min(t for _, _, t in want) > 0xFFFF and len(want) == len(table)
        cols = [table["ts"].tolist(), table["tid"].tolist()]
        if "pid" in table.columns:
            cols.insert(1, table["pid"].tolist())
            assert sorted(zip(*cols, strict=True)) == sorted(want)
        else:
            assert sorted(zip(*cols, strict=True)) == sorted((ts, tid) for ts, _, tid in want)


def test_tables_filled_from_excerpt() -> None:
    p = load_profile(str(L1), OPTS)
    assert (p.kind, p.source) == ("NPU", "ascend_db")
    assert p.extra["db_kind"] == "pytorch"
    (n_compute,) = sql(L1, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)")[0]
    assert len(p.kernels) == n_compute == 187
    # api rows by type (ENUM_API_TYPE: op 50001, queue 50002, trace 50003)
    counts = dict(sql(L1, "SELECT type, count(*) FROM PYTORCH_API GROUP BY type"))
    assert len(p.ops) == counts[50001]
    assert len(p.queue) == counts[50002]
    assert len(p.python_functions) == counts[50003]
    assert set(p.queue["cat"]) == {"enqueue", "dequeue"}
    ops_lane = p.comm[p.comm["lane"] == "op"]
    tasks_lane = p.comm[p.comm["lane"] == "task"]
    assert len(ops_lane) == sql(L1, "SELECT count(*) FROM COMMUNICATION_OP")[0][0] == 4
    assert len(tasks_lane) == sql(L1, "SELECT count(*) FROM COMMUNICATION_TASK_INFO")[0][0]
    assert set(ops_lane["group"]) == {"90.91.105.46%enp189s0f0_60000_0_1736410538306028"}
    # every time is int64 ns
    for df in (p.kernels, p.ops, p.comm, p.queue, p.python_functions):
        assert df["ts"].dtype == np.int64 and df["dur"].dtype == np.int64
    # first compute task, by hand from the file
    row = sql(L1, "SELECT t.startNs, t.endNs, t.streamId, t.connectionId FROM TASK t JOIN COMPUTE_TASK_INFO c "
                  "USING (globalTaskId) ORDER BY t.startNs LIMIT 1")[0]
    k0 = p.kernels.iloc[0]
    assert (k0["name"], k0["task_type"]) == ("trans_TransData_0", "AI_VECTOR_CORE")
    assert (int(k0["ts"]), int(k0["dur"]), int(k0["stream"]), int(k0["connection_id"])) == (
        row[0], row[1] - row[0], row[2], row[3])
    assert p.extra["kernel_extra"]["op_type"].iloc[0] == "TransData"
    assert p.kernel_details["Input Shapes"].iloc[0] == '"32,3,224,224"'
    assert p.kernel_details["ts"].iloc[0] == row[0]
    assert p.extra["memory_peak_bytes"] == sql(L1, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0][0]


def test_ops_one_row_per_api_call_with_all_connection_ids() -> None:
    """An op that launched four tasks is one op with four CANN connection ids (and four flows)."""
    p = load_profile(str(L1), OPTS)
    conv = p.ops.index[p.ops["name"] == "Conv2D"]
    assert len(conv) == 5
    oc = p.extra["op_connections"]
    first = oc[oc["op_row"] == conv[0]]["connection_id"].tolist()
    assert first == [962, 963, 964, 965]
    assert int(p.ops.loc[conv[0], "connection_id"]) == 962
    fl = p.flows[p.flows["id"].isin(["962", "963", "964", "965"])]
    assert len(fl) == 4 and (fl["s_ts"] == p.ops.loc[conv[0], "ts"]).all()
    assert set(fl["f_ts"]) == set(p.kernels.loc[p.kernels["connection_id"].between(962, 965), "ts"])
    # enqueue / dequeue of one launch share the CANN connection id
    q = p.queue
    assert set(q.loc[q["correlation_id"] == 9884, "cat"]) == {"enqueue", "dequeue"}


def test_operator_memory_uses_csv_column_names() -> None:
    opts, _ = build_options(enable_memory_compare=True)
    p = load_profile(str(L1), opts)
    om = p.operator_memory
    assert len(om) == sql(L1, "SELECT count(*) FROM OP_MEMORY")[0][0]
    size, alloc = sql(L1, "SELECT size, allocationTime FROM OP_MEMORY WHERE releaseTime IS NULL LIMIT 1")[0]
    assert om["Size(KB)"].iloc[0] == size / 1024
    assert om["alloc_ns"].iloc[0] == alloc and om["release_ns"].iloc[0] == 0
    assert {"Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)"} <= set(om.columns)


def test_operator_memory_rows_written_again_are_said(tmp_path: Path) -> None:
    """OP_MEMORY rows repeating an earlier row in every column read (synthetic: the excerpt's first row written twice
    more, its second once more with another size) are counted as operator_memory.csv's are: they doubled those
    blocks' memory in the memory comparison without a word. Every row still counts, as in the original; the row of
    another size is no repeat. Counts and sizes by SQL."""
    db = edited_copy(L1, _db(tmp_path),
                     *["INSERT INTO OP_MEMORY SELECT * FROM OP_MEMORY WHERE rowid = (SELECT min(rowid) FROM OP_MEMORY)"]
                     * 2,
                     "INSERT INTO OP_MEMORY SELECT name, size + 512, allocationTime, releaseTime, activeReleaseTime, "
                     "duration, activeDuration, allocationTotalAllocated, allocationTotalReserved, "
                     "allocationTotalActive, releaseTotalAllocated, releaseTotalReserved, releaseTotalActive, "
                     "streamPtr, deviceId FROM OP_MEMORY WHERE rowid = (SELECT min(rowid) + 1 FROM OP_MEMORY)")
    p = load_profile(str(db), build_options(enable_memory_compare=True)[0])
    assert [w for w in p.warnings if "repeat" in w] == [
        f"{db}: 2 OP_MEMORY row(s) repeat an earlier row in every column read (the same allocation written again, as "
        "in a file joined from two copies); each row counts, as in the original, so those blocks' memory and time "
        "count more than once"]
    count, total = sql(db, "SELECT count(*), sum(size) FROM OP_MEMORY")[0]
    assert len(p.operator_memory) == count == sql(L1, "SELECT count(*) FROM OP_MEMORY")[0][0] + 3
    assert p.operator_memory["Size(KB)"].sum() == total / 1024
    assert not any("repeat" in w for w in load_profile(str(L1), build_options(enable_memory_compare=True)[0]).warnings)


def test_connection_ids_in_another_table_order_link_alike(tmp_path: Path) -> None:
    """CONNECTION_IDS written in another row order (synthetic: the excerpt's rows in descending connectionId order;
    msprof writes them by id, then connectionId) gives every op the same first connection id, the smallest of its
    id (SQL), and the same (op, connection id) pairs in the same order: an op's first id and the order of its
    kernels in the Kernel Details lists followed the table order (34 lists of the level-2 sample moved)."""
    db = edited_copy(L1, _db(tmp_path), "CREATE TABLE zz AS SELECT * FROM CONNECTION_IDS ORDER BY connectionId DESC",
                     "DELETE FROM CONNECTION_IDS", "INSERT INTO CONNECTION_IDS SELECT * FROM zz", "DROP TABLE zz")
    assert sql(db, "SELECT connectionId FROM CONNECTION_IDS LIMIT 1") == sql(L1, "SELECT max(connectionId) FROM "
                                                                                 "CONNECTION_IDS")
    got, clean = load_profile(str(db), OPTS), load_profile(str(L1), OPTS)
    first = dict(sql(L1, "SELECT CAST(p.startNs AS INTEGER), min(c.connectionId) FROM PYTORCH_API p "
                         "JOIN CONNECTION_IDS c ON c.id = p.connectionId "
                         "JOIN ENUM_API_TYPE e ON e.id = p.type AND e.name = 'op' "
                         "GROUP BY p.rowid"))
    ops = got.ops[got.ops["connection_id"] >= 0]
    assert len(ops) == len(first) > 0
    assert {int(t): int(c) for t, c in zip(ops["ts"], ops["connection_id"], strict=True)} == first
    pd.testing.assert_frame_equal(got.ops, clean.ops)
    pd.testing.assert_frame_equal(got.extra["op_connections"], clean.extra["op_connections"])


def test_file_is_not_modified(tmp_path: Path) -> None:
    copy = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, copy)
    os.chmod(copy, 0o644)
    before = (copy.read_bytes(), os.stat(copy).st_mode)
    load_profile(str(copy), OPTS)
    assert (copy.read_bytes(), os.stat(copy).st_mode) == before
    assert sorted(os.listdir(tmp_path)) == ["ascend_pytorch_profiler_0.db"]  # no -journal / -wal left


def _wal_copy(dest: Path) -> Path:
    """A copy of the excerpt switched to write-ahead-log mode (how some writers leave their databases)."""
    dest.mkdir()
    copy = dest / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, copy)
    con = sqlite3.connect(copy)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    con.close()
    return copy


def test_wal_mode_database_is_read_without_files_beside_it(tmp_path: Path) -> None:
    """A read-only SQLite connection to a WAL-mode database still creates -shm / -wal files beside it
    (and fails in a read-only directory): opened immutable, nothing is created and the tables are the same."""
    copy = _wal_copy(tmp_path / "wal")
    before = copy.read_bytes()
    wal, plain = load_profile(str(copy), OPTS), load_profile(str(L1), OPTS)
    assert sorted(os.listdir(copy.parent)) == ["ascend_pytorch_profiler_0.db"] and copy.read_bytes() == before
    tables = [k for k, v in vars(plain).items() if hasattr(v, "columns") and len(v)]
    assert {"ops", "kernels", "comm"} <= set(tables)
    for table in tables:
        assert getattr(wal, table).equals(getattr(plain, table)), table


def _pending_log(tmp_path: Path, change: str) -> Path:
    """A copy of the excerpt in WAL mode whose ``change`` is still in its -wal file (no checkpoint), copied with
    the log while the writer holds it: the .db of a folder holding the .db and a non-empty -wal, no -shm."""
    live = _wal_copy(tmp_path / "live")
    con = sqlite3.connect(live)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute(change)
    con.commit()
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    for name in ("ascend_pytorch_profiler_0.db", "ascend_pytorch_profiler_0.db-wal"):
        shutil.copyfile(live.parent / name, snapshot / name)  # while the writer still holds the log
    con.close()
    return snapshot / "ascend_pytorch_profiler_0.db"


def test_pending_write_ahead_log_is_read(tmp_path: Path) -> None:
    """Changes still in a non-empty -wal file (not yet in the database file) are seen, not ignored."""
    from msprof_compare.loaders.ascend_db import _Db

    snapshot = _pending_log(tmp_path, "CREATE TABLE ONLY_IN_THE_LOG (x INTEGER)").parent
    assert (snapshot / "ascend_pytorch_profiler_0.db-wal").stat().st_size > 0
    db = _Db(str(snapshot / "ascend_pytorch_profiler_0.db"))
    try:
        assert "ONLY_IN_THE_LOG" in db.tables
    finally:
        db.close()


def test_pending_write_ahead_log_in_a_read_only_folder_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture) -> None:
    """A -wal holding changes, no -shm, a read-only folder: SQLite must create the -shm to read the log and cannot,
    and the sound export was "not a readable SQLite database (unable to open database file)" (seen as a user
    without write access to the folder). The line now says what blocks it and what to do; any other failure
    reads as before. Root writes anywhere, so the folder's refusal is simulated: SQLite's error and os.access's
    answer as they come for such a user."""
    from msprof_compare.loaders import ascend_db

    db = _pending_log(tmp_path, "DELETE FROM TASK WHERE rowid % 2 = 0")
    snapshot = db.parent

    connect, access = sqlite3.connect, os.access

    def refused(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        if "/snapshot/" not in database:
            return connect(database, *args, **kwargs)
        assert "immutable" not in database  # the log is read only without immutable
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(ascend_db.sqlite3, "connect", refused)
    monkeypatch.setattr(ascend_db.os, "access", lambda p, mode: os.path.abspath(p) != str(snapshot) and access(p, mode))
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), "-o", str(tmp_path))
    assert code == 1
    assert error_lines(err) == [
        f"error: {db}: its write-ahead log ascend_pytorch_profiler_0.db-wal holds changes not yet in the database, "
        "which SQLite reads only through ascend_pytorch_profiler_0.db-shm, a file it cannot create in this read-only "
        "folder (unable to open database file); copy the .db and its -wal to a writable folder (comparison side)"]
    assert not list(tmp_path.glob("*.xlsx"))
    (snapshot / "ascend_pytorch_profiler_0.db-shm").write_bytes(b"")  # a -shm there: not the folder's doing
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), "-o", str(tmp_path))
    assert error_lines(err) == [f"error: {db}: not a readable SQLite database (unable to open database file) "
                                f"(comparison side)"]


def test_pending_write_ahead_log_beside_a_hot_journal_says_why(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    """A -wal holding changes beside a rollback journal holding pages (a journal's header, then zeroed pages: a
    write interrupted, synthetic): SQLite must undo that write before it reads the log, which a read-only open may
    not, and the sound file was "not a readable SQLite database (attempt to write a readonly database)" (dbfuzz65).
    The line now names the journal; nothing is written beside the file or as a report."""
    db = _pending_log(tmp_path, "DELETE FROM TASK WHERE rowid % 2 = 0")
    journal = db.parent / "ascend_pytorch_profiler_0.db-journal"
    journal.write_bytes(bytes.fromhex("d9d505f920a163d7") + bytes(600))
    before = sorted(os.listdir(db.parent))
    code, _, err = run_inproc(capsys, "-bp", str(L1), "-d", str(db), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [
        f"error: {db}: ascend_pytorch_profiler_0.db-journal beside it holds pages of a write in progress or "
        "interrupted, which SQLite must undo before it reads the changes its write-ahead log "
        "ascend_pytorch_profiler_0.db-wal holds, and the file is opened read-only (attempt to write a readonly "
        "database): compare a copy taken once the profiler has finished (comparison side)"]
    assert sorted(os.listdir(db.parent)) == before and not (tmp_path / "out").exists()
    journal.unlink()  # the log alone reads
    assert run_inproc(capsys, "-bp", str(L1), "-d", str(db), "-o", str(tmp_path / "out"))[0] == 0


@pytest.mark.parametrize("beside", ["none", "wal", "journal"])
def test_the_wal_and_journal_beside_a_db_are_probed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         beside: str) -> None:
    """The cut-short check and the open both need to know whether a -wal or -journal beside the file holds
    changes: each file is probed once per DB (twice before session 76), and the probes still decide (a log
    holding changes is read, a hot journal is said)."""
    from msprof_compare.loaders import ascend_db

    if beside == "wal":
        db = _pending_log(tmp_path, "CREATE TABLE ONLY_IN_THE_LOG (x INTEGER)")
    else:
        db = tmp_path / "ascend_pytorch_profiler_0.db"
        shutil.copyfile(L1, db)
        if beside == "journal":
            (tmp_path / "ascend_pytorch_profiler_0.db-journal").write_bytes(bytes.fromhex("d9d505f920a163d7")
                                                                            + bytes(600))
    calls: list[str] = []
    for name in ("_pending_wal", "_hot_journal"):
        real = getattr(ascend_db, name)
        monkeypatch.setattr(ascend_db, name, lambda p, real=real, name=name: calls.append(name) or real(p))
    handle = ascend_db._Db(str(db))
    try:
        assert sorted(calls) == ["_hot_journal", "_pending_wal"]
        assert ("ONLY_IN_THE_LOG" in handle.tables) == (beside == "wal")
        assert [n.split(" beside")[0] for n in handle.notes] == (
            ["ascend_pytorch_profiler_0.db-journal"] if beside == "journal" else [])
    finally:
        handle.close()


# --------------------------------------------------------------------------- steps


def test_step_limits_every_query(tmp_path: Path) -> None:
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    p = load_profile(str(L1), OPTS, step=50)
    assert p.extra["step_range"] == (start, end)
    n = sql(L1, "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO USING (globalTaskId) "
                "WHERE t.startNs BETWEEN ? AND ?", (start, end))[0][0]
    assert len(p.kernels) == n
    assert set(p.kernel_details["Step Id"]) == {"50"}
    # a narrower step: make a copy whose step 50 covers only the first half
    copy = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, copy)
    mid = (start + end) // 2
    con = sqlite3.connect(copy)
    con.execute("INSERT INTO STEP_TIME VALUES (51, ?, ?)", (mid + 1, end))
    con.execute("UPDATE STEP_TIME SET endNs = ? WHERE id = 50", (mid,))
    con.commit()
    con.close()
    a = load_profile(str(copy), OPTS, step=50)
    b = load_profile(str(copy), OPTS, step=51)
    assert len(a.kernels) + len(b.kernels) == 187
    assert a.kernels["ts"].max() <= mid < b.kernels["ts"].min()
    ops_a = a.ops["ts"].to_numpy()
    assert ((ops_a >= start) & (ops_a <= mid)).all()
    comm_b = b.comm["ts"].to_numpy()
    assert ((comm_b > mid) & (comm_b <= end)).all()
    # the breakdown of the two halves adds up to the whole for the computing time
    whole = db_breakdown(load_profile(str(copy), OPTS))
    assert db_breakdown(a).computing_ns + db_breakdown(b).computing_ns == whole.computing_ns
    # memory blocks alive during a step: allocated before its end, not released before its start; a
    # block never released (NULL) stays alive, so it counts in the later step too
    mem_opts = build_options(enable_memory_compare=True)[0]
    for step, (lo, hi) in ((50, (start, mid)), (51, (mid + 1, end))):
        alive = sql(copy, "SELECT count(*), sum(releaseTime IS NULL) FROM OP_MEMORY WHERE allocationTime <= ? "
                          "AND NOT coalesce(releaseTime, 0) BETWEEN 1 AND ?", (hi, lo - 1))[0]
        assert alive[1] > 0
        om = load_profile(str(copy), mem_opts, step=step).operator_memory
        assert (len(om), int((om["release_ns"] == 0).sum())) == alive


def test_a_steps_breakdown_is_that_of_the_rows_starting_in_it(tmp_path: Path) -> None:
    """reference-1 §7.1 / §7.3: with a step, Computing, Uncovered Communication and the E2E window are made of the
    compute tasks, communication ops and non-kernel TASK rows that start in it, an op reaching past its end whole.
    Step 50 of the level-1 excerpt cut at its midpoint into 50 and 51: the first allreduce starts in 50 and ends
    89 ms later, in 51. Each half's figures by plain-Python unions of the rows SQL selects (tests/spans.py)."""
    from spans import union

    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    mid = (start + end) // 2
    copy = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", f"UPDATE STEP_TIME SET endNs = {mid}",
                       f"INSERT INTO STEP_TIME VALUES (51, {mid + 1}, {end})")
    kernel_types = ("KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV",
                    "PROFILING_ENABLE", "PROFILING_DISABLE")  # §7.3.6: the types the E2E span leaves out
    marks = ",".join("?" * len(kernel_types))
    length = lambda iv: sum(e - s for s, e in iv)  # noqa: E731
    crossing = 0
    for step, (lo, hi) in ((50, (start, mid)), (51, (mid + 1, end))):
        compute = sql(copy, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
                            "WHERE t.startNs BETWEEN ? AND ?", (lo, hi))
        ops = sql(copy, "SELECT startNs, endNs FROM COMMUNICATION_OP WHERE startNs BETWEEN ? AND ?", (lo, hi))
        other = sql(copy, "SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                          f"WHERE s.value NOT IN ({marks}) AND t.startNs BETWEEN ? AND ?", (*kernel_types, lo, hi))[0]
        crossing += sum(e > hi for _, e in ops)
        busy = union(compute + ops)
        e2e = max(busy[-1][1], other[1]) - min(busy[0][0], other[0])
        bd = db_breakdown(load_profile(str(copy), build_options(enable_profiling_compare=True)[0], step=step))
        assert (bd.computing_ns, bd.uncovered_comm_ns, bd.e2e_ns) == (
            length(union(compute)), length(busy) - length(union(compute)), e2e), step
        assert ops and other[0] < busy[0][0], step  # both halves have communication and a task before the busy span
    assert crossing == 1  # the first allreduce, counted whole in step 50


def test_task_starting_at_step_end_belongs_to_the_step(tmp_path: Path) -> None:
    """reference-1 §7.1: the step range [startNs, endNs] is inclusive; a task starting at endNs is in it."""
    (t100,) = sql(L1, "SELECT t.startNs FROM TASK t JOIN COMPUTE_TASK_INFO USING (globalTaskId) "
                      "ORDER BY t.startNs LIMIT 1 OFFSET 99")[0]  # the 100th compute task (start times unique)
    copy = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, copy)
    con = sqlite3.connect(copy)
    con.execute("UPDATE STEP_TIME SET endNs = ? WHERE id = 50", (t100,))
    con.commit()
    con.close()
    p = load_profile(str(copy), OPTS, step=50)
    assert len(p.kernels) == 100 and p.kernels["ts"].iloc[-1] == t100
    # without a step, each task's Step Id comes from the (inclusive) range holding its start
    assert load_profile(str(copy), OPTS).kernel_details["Step Id"].tolist() == ["50"] * 100 + [""] * 87


def test_absent_step_names_the_steps_present() -> None:
    with pytest.raises(StepError, match=r"Invalid Step Id: 7, please choose from the valid steps: 50") as e:
        load_profile(str(L1), OPTS, step=7)
    assert e.value.exit_code == 2


def test_step_ending_before_it_starts_is_said(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A STEP_TIME row whose endNs is before its startNs holds no data: asked for, it stopped the run with
    "There is no operator event data for step 50" although the step is there. Its bounds are named instead (a
    step error, exit 2, one line from the CLI, no output); without a step the profile loads as before."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    db = edited_copy(L1, _db(tmp_path), "UPDATE STEP_TIME SET startNs = endNs, endNs = startNs")
    with pytest.raises(StepError) as e:
        load_profile(str(db), OPTS, step=50)
    assert str(e.value) == (f"{db}: step 50 in STEP_TIME ends before it starts (startNs {end}, endNs {start}), so "
                            "no data lies in it") and e.value.exit_code == 2
    assert len(load_profile(str(db), OPTS).kernels) == 187
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-d", str(db), "-bp", str(L1), "-o", str(out), "--base_step", "50",
                              "--comparison_step", "50")
    assert code == 2 and not out.exists() and error_lines(err) == [f"error: {e.value} (comparison side)"]


def test_step_ending_before_it_starts_is_said_without_a_step(tmp_path: Path) -> None:
    """Without a step asked, a STEP_TIME row ending before it starts was silent, and one starting inside another
    step took that step's later tasks: they got no Step Id (a KernelCompare of that step left them out). Step 51
    added to the l1 export, starting in the middle of step 50 and ending 1 ns before (synthetic row): one warning
    naming it, and every kernel keeps step 50 and its time, as in the export unedited."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    mid = (start + end) // 2
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, {mid}, {mid - 1})")
    p, plain = load_profile(str(db), OPTS), load_profile(str(L1), OPTS)
    assert [w for w in p.warnings if "STEP_TIME" in w] == [
        f"{db}: STEP_TIME step(s) 51 end before they start; no data lies in them"]
    kd = p.kernel_details
    assert (kd["ts"] > mid).any() and set(kd["Step Id"]) == {"50"}
    assert kd[["ts", "dur", "Step Id"]].equals(plain.kernel_details[["ts", "dur", "Step Id"]])


def test_step_of_one_instant_is_no_inverted_step(tmp_path: Path) -> None:
    """A STEP_TIME row ending where it starts is a step of one instant, not one ending before it starts: step 51
    added to the l1 export at the start of its 10th compute task, for 0 ns (synthetic row). No STEP_TIME warning
    (a mutant reading "end <= start" as inverted said "no data lies in them"), and by SQL the step holds the one
    compute task starting at that very ns."""
    (at,) = sql(L1, "SELECT t.startNs FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                    "ORDER BY t.startNs LIMIT 1 OFFSET 9")[0]
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, {at}, {at})")
    (n,) = sql(db, "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                   "WHERE t.startNs BETWEEN ? AND ?", (at, at))[0]
    assert n == 1
    whole = load_profile(str(db), OPTS)
    assert [w for w in whole.warnings if "STEP_TIME" in w] == [  # no "end before they start": it lies in step 50
        f"{db}: STEP_TIME step(s) 51 start before an earlier step ends; a task in two steps is in each when a step "
        "is asked for, and counted once without one"]
    k = load_profile(str(db), OPTS, step=51).kernels
    assert k["ts"].tolist() == [at]
    # without a step, kernel_details places that task in step 51 (the last step starting at or before it, which
    # holds it) and the 9 compute tasks before it in step 50 (whose [startNs, endNs] holds all 187, by SQL): a
    # mutant taking a step of one instant for no step put the task in step 50
    (inside,) = sql(db, "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                        "JOIN STEP_TIME s ON s.id = 50 WHERE t.startNs BETWEEN s.startNs AND s.endNs")[0]
    details = whole.kernel_details
    assert inside == len(details) == 187
    assert details.loc[details["ts"] == at, "Step Id"].tolist() == ["51"]
    assert details.loc[details["ts"] < at, "Step Id"].tolist() == ["50"] * 9


def test_a_step_past_a_nested_one_inside_an_earlier_step_is_said(tmp_path: Path) -> None:
    """The overlap test compares each step's start with the latest end of the steps starting before it, not with
    the previous step's alone: steps 51 (1 to 2 us into step 50) and 52 (from the middle of step 50 for 1 ns) added
    to the l1 export (synthetic rows). 52 starts after 51 ends but inside 50: both are named."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    mid = (start + end) // 2
    assert start + 2000 < mid < end
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, {start + 1000}, {start + 2000})",
                     f"INSERT INTO STEP_TIME VALUES (52, {mid}, {mid + 1})")
    assert [w for w in load_profile(str(db), OPTS).warnings if "STEP_TIME" in w] == [
        f"{db}: STEP_TIME step(s) 51, 52 start before an earlier step ends; a task in two steps is in each when a "
        "step is asked for, and counted once without one"]


def test_overlapping_steps_are_said(tmp_path: Path) -> None:
    """Two STEP_TIME rows that overlap loaded silently, though a task in both is in each step asked for and in the
    later one's Step Id. Step 51 added to the l1 export from the middle of step 50 to as far past its end (synthetic
    row): one warning naming 51; by SQL, steps 50 and 51 hold 187 and n compute tasks, n of them in both."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    mid = (start + end) // 2
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, {mid}, {end + (end - mid)})")
    join = "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
    (n51,) = sql(db, join + "WHERE t.startNs BETWEEN ? AND ?", (mid, end + (end - mid)))[0]
    (both,) = sql(db, join + "WHERE t.startNs BETWEEN ? AND ?", (mid, end))[0]
    assert 0 < both == n51 < 187
    whole = load_profile(str(db), OPTS)
    assert [w for w in whole.warnings if "STEP_TIME" in w] == [
        f"{db}: STEP_TIME step(s) 51 start before an earlier step ends; a task in two steps is in each when a step "
        "is asked for, and counted once without one"]
    assert len(load_profile(str(db), OPTS, step=50).kernels) == 187
    assert len(load_profile(str(db), OPTS, step=51).kernels) == n51
    assert (whole.kernel_details["Step Id"] == "51").sum() == n51
    # steps that touch (51 starting the ns after 50 ends) do not overlap: no warning
    (tmp_path / "touch").mkdir()
    db2 = edited_copy(L1, _db(tmp_path / "touch"), f"INSERT INTO STEP_TIME VALUES (51, {end + 1}, {end + 10})")
    assert not [w for w in load_profile(str(db2), OPTS).warnings if "STEP_TIME" in w]


@pytest.mark.parametrize("where", ["with", "inside"])
def test_a_step_inside_another_leaves_the_outer_steps_later_tasks_their_step_id(tmp_path: Path, where: str) -> None:
    """A STEP_TIME step 51 (synthetic row) inside the l1 export's step 50: starting with it and ending halfway
    ("with"), or from its 101st compute task's start to just before its 151st's ("inside"). A task goes to the
    latest step to start that holds it, of two starting together the shorter; the tasks of step 50 after step 51
    ends got no Step Id, since the step found for them (51, the last to start) had ended. By SQL: the compute tasks
    starting in step 51 are 51's, the rest of step 50's 187 are 50's, none without an id. The note names step 51
    as starting with a longer step (it said "before an earlier step ends" of a step starting at the same ns)."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    join = "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
    starts = [t for (t,) in sql(L1, join.replace("count(*)", "t.startNs") + "ORDER BY t.startNs")]
    lo, hi = (start, (start + end) // 2) if where == "with" else (starts[100], starts[150] - 1)
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, {lo}, {hi})")
    (n51,) = sql(db, join + "WHERE t.startNs BETWEEN ? AND ?", (lo, hi))[0]
    (late,) = sql(db, join + "WHERE t.startNs > ? AND t.startNs <= ?", (hi, end))[0]
    assert 0 < n51 and 0 < late and n51 + late <= 187
    whole = load_profile(str(db), OPTS)
    ids = whole.kernel_details["Step Id"].value_counts().to_dict()
    assert (ids.get("51"), ids.get("50"), ids.get("", 0)) == (n51, 187 - n51, 0)
    said = "start with a step that ends no earlier (below, the longer step is the earlier and the shorter the " \
        "later)" if where == "with" else "start before an earlier step ends"
    assert [w for w in whole.warnings if "STEP_TIME" in w] == [
        f"{db}: STEP_TIME step(s) 51 {said}; a task in two steps is in each when a step is asked for, and "
        "counted once without one"]


def test_a_db_step_id_reaches_no_sheet(tmp_path: Path) -> None:
    """The STEP_TIME warning says a task in two steps is "counted once without" a step: the Step Id the later step
    gives it is a column no sheet shows (docs/differences.md says so), which the warning named. Step 51 added to
    the l1 export from the middle of step 50 to as far past its end (synthetic row), n compute tasks starting in
    both (by SQL): every sheet of a run without a step is the unedited export's; with step 50 asked
    KernelCompare's calls are its 187 tasks, the n in step 51's Step Id among them, and with step 51 asked, n."""
    from msprof_compare.api import compare

    doc = " ".join((Path(__file__).parents[1] / "docs" / "differences.md").read_text(encoding="utf-8").split())
    assert ("No sheet shows that Step Id: a run without a step reads every task whatever its step, and KernelCompare "
            "reads the column only with a step asked for") in doc
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    mid = (start + end) // 2
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, {mid}, {end + (end - mid)})")
    join = "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
    (n,) = sql(db, join + "WHERE t.startNs BETWEEN ? AND ?", (mid, end))[0]
    assert 0 < n < 187 and (load_profile(str(db), OPTS).kernel_details["Step Id"] == "51").sum() == n
    every = {"enable_profiling_compare": True, "enable_operator_compare": True, "enable_memory_compare": True,
             "enable_communication_compare": True, "enable_api_compare": True, "enable_kernel_compare": True}
    edited, unedited = (compare(str(p), str(p), **every) for p in (db, L1))
    assert edited.sheet_names == unedited.sheet_names
    for name in unedited.sheet_names:
        assert edited.sheet(name).equals(unedited.sheet(name)), name
    for step, calls in ((50, 187), (51, n)):
        sheet = compare(str(db), str(db), base_step=step, comparison_step=step, enable_kernel_compare=True)
        assert sheet.sheet("KernelCompare")["Calls"].sum() == calls, step


def test_a_task_at_the_outer_steps_very_end_is_the_outer_steps(tmp_path: Path) -> None:
    """The l1 export's step 50 cut to end at its 161st compute task's start, and a synthetic step 51 inside it
    (from its 101st task's start to just before its 151st's). A step holds a task starting at its very end, so the
    task at step 50's last ns is step 50's, as the tasks after step 51 ends are; those after it hold no step. By
    SQL: the tasks starting in step 51 are 51's, those from its end to step 50's end (161st included) 50's."""
    start, _ = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    join = "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
    starts = [t for (t,) in sql(L1, join.replace("count(*)", "t.startNs") + "ORDER BY t.startNs")]
    lo, hi, end = starts[100], starts[150] - 1, starts[160]
    assert starts[159] < end < starts[161]  # one task starts at the new end
    db = edited_copy(L1, _db(tmp_path), f"UPDATE STEP_TIME SET endNs = {end} WHERE id = 50",
                     f"INSERT INTO STEP_TIME VALUES (51, {lo}, {hi})")
    (n51,) = sql(db, join + "WHERE t.startNs BETWEEN ? AND ?", (lo, hi))[0]
    (n50,) = sql(db, join + "WHERE t.startNs BETWEEN ? AND ? AND NOT t.startNs BETWEEN ? AND ?",
                 (start, end, lo, hi))[0]
    assert (n51, n50) == (50, 111)  # the 101st to 150th, and the 1st to 100th with the 151st to 161st
    ids = load_profile(str(db), OPTS).kernel_details["Step Id"].value_counts().to_dict()
    assert (ids.get("51"), ids.get("50"), ids.get("", 0)) == (n51, n50, 187 - n51 - n50)


def test_no_step_markers(tmp_path: Path) -> None:
    copy = tmp_path / "ascend_pytorch_profiler_0.db"
    edited_copy(L1, copy, "DELETE FROM STEP_TIME")
    assert len(load_profile(str(copy), OPTS).kernels) == 187  # without a step nothing changes
    with pytest.raises(StepError, match="lacks step markers. Please re-collect it."):
        load_profile(str(copy), OPTS, step=50)


def test_names_that_string_ids_lacks_are_counted(tmp_path: Path) -> None:
    """A name id STRING_IDS lacks, or holds as NULL, reads as "" (the row stays): said in one warning with the
    count of such references, instead of a profile whose kernels and ops are silently nameless."""
    assert not any("STRING_IDS" in w for w in load_profile(str(L1), OPTS).warnings)
    (kernel_name,) = sql(L1, "SELECT t.name FROM COMPUTE_TASK_INFO t JOIN TASK USING (globalTaskId) "
                             "ORDER BY TASK.startNs LIMIT 1")[0]
    uses = sum(n for (n,) in sql(L1, "SELECT count(*) FROM COMPUTE_TASK_INFO WHERE name = ? UNION ALL "
                                     "SELECT count(*) FROM PYTORCH_API WHERE name = ?", (kernel_name, kernel_name)))
    copy = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                       f"UPDATE STRING_IDS SET value = NULL WHERE id = {kernel_name}")
    p = load_profile(str(copy), OPTS)
    assert len(p.kernels) == 187 and (p.kernels["name"] == "").sum() >= 1
    notes = [w for w in p.warnings if "STRING_IDS" in w]
    assert len(notes) == 1 and notes[0].endswith("those names read as empty")
    assert int(notes[0].split(": ")[1].split(" ")[0]) >= uses
    (tmp_path / "blank").mkdir()
    # all but one text NULL: still said; every text NULL names nothing, an error (tests/test_db_nulls.py)
    blank = edited_copy(L1, tmp_path / "blank" / "ascend_pytorch_profiler_0.db",
                        "UPDATE STRING_IDS SET value = NULL WHERE id <> (SELECT min(id) FROM STRING_IDS)")
    assert any("name reference(s) point to no text in STRING_IDS" in w for w in load_profile(str(blank), OPTS).warnings)
    # a NULL text that is no name (an input shape) reads "" as before, and is said as a text, not as a name
    (shape_id,) = sql(L1, "SELECT inputShapes FROM PYTORCH_API WHERE inputShapes IS NOT NULL LIMIT 1")[0]
    (tmp_path / "shape").mkdir()
    shape = edited_copy(L1, tmp_path / "shape" / "ascend_pytorch_profiler_0.db",
                        f"UPDATE STRING_IDS SET value = NULL WHERE id = {shape_id} "
                        "AND id NOT IN (SELECT name FROM PYTORCH_API WHERE name IS NOT NULL)")
    p = load_profile(str(shape), OPTS)
    (refs,) = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE inputShapes = ? OR inputDtypes = ?",
                  (shape_id, shape_id))[0]
    assert [w.split(": ", 1)[1] for w in p.warnings if "STRING_IDS" in w] == [
        f"{refs} reference(s) to a type, shape or group text point to no text in STRING_IDS (an unknown id, or NULL "
        "there); read as empty (input shapes and data types of an unknown id as N/A)"]
    before = load_profile(str(L1), OPTS).ops
    changed = (p.ops["input_dims"] != before["input_dims"]) | (p.ops["input_type"] != before["input_type"])
    assert changed.any() and set(p.ops.loc[changed, "input_dims"]) | set(p.ops.loc[changed, "input_type"]) >= {""}
    assert "N/A" not in set(p.ops.loc[changed, "input_dims"]) - set(before.loc[changed, "input_dims"])


@pytest.mark.parametrize("table", ["OP_MEMORY", "COMPUTE_TASK_INFO"])
def test_empty_memory_or_kernel_tables_load(tmp_path: Path, table: str) -> None:
    """No memory block or no compute task (an empty table, or none in the chosen step) is a profile without
    them, not an internal error."""
    copy = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", f"DELETE FROM {table}")
    opts = build_options(enable_memory_compare=True, enable_profiling_compare=True)[0]
    p = load_profile(str(copy), opts)
    if table == "OP_MEMORY":
        assert p.operator_memory is not None and len(p.operator_memory) == 0
    else:
        assert len(p.kernel_details) == 0
    from msprof_compare.model import us_text

    assert us_text(np.zeros(0, np.int64)).tolist() == []


# --------------------------------------------------------------------------- errors


def _db(tmp_path: Path, name: str = "ascend_pytorch_profiler_0.db") -> Path:
    return tmp_path / name


def test_not_sqlite(tmp_path: Path) -> None:
    f = _db(tmp_path)
    f.write_bytes(b"this is not a database, just text\n" * 100)
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(f) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="open files are listed in /proc (Linux)")
def test_refused_database_is_closed(tmp_path: Path) -> None:
    """A .db that SQLite opens but cannot read (the real excerpt with its header overwritten) is refused,
    and its connection closed: it stayed open until the next garbage collection (an open file, and
    Python 3.13's ResourceWarning "unclosed database"). The collector is off here so that the check
    does not depend on when it runs."""
    f = _db(tmp_path)
    data = bytearray(L1.read_bytes())
    data[:16] = b"\x00" * 16  # "SQLite format 3\0": SQLite then reads "file is not a database"
    f.write_bytes(bytes(data))
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(ProfileError) as e:
            load_profile(str(f), OPTS)
        # told as a file under SQLite's 100-byte header is (test_damage_note_rules), where it read "not a readable
        # SQLite database (file is not a database)"
        assert str(e.value) == (f"{f}: not a SQLite database: the file ({len(data):,} bytes) does not begin with "
                                "SQLite's header")
        fds = Path("/proc/self/fd")
        held = [fd for fd in fds.iterdir() if os.path.realpath(fd) == str(f.resolve())]
    finally:
        if gc_was_on:
            gc.enable()
    assert held == []


def test_a_db_that_is_a_git_lfs_pointer_or_a_web_page_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A clone without git-lfs holds a pointer of three lines (git-lfs spec/v1: 130 bytes here) under the export's
    .db name, and a download of the page that links it a web page: both read "not a SQLite database: the file (130
    bytes) does not begin with SQLite's header", with no word of what the file is or what to do, which a trace under
    such a text got. The words are the trace's (``traceio.stand_in_kind``), at any size (a page under SQLite's
    100-byte header goes the other way to its words); a side file that is no stand-in reads as before. Through the
    command line, in a profiling directory (the DB export of the level-1 excerpt on the other side): exit 1, one
    line, nothing written."""
    pointer = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 71459\n")
    lfs = ("the file is a Git LFS pointer, not the file it stands for; fetch the file itself: git lfs pull, in the "
           "repository it came from")
    page = ("the file is a web page (HTML), saved under the file's name; download the file itself, not the page that "
            "links it")
    other = tmp_path / "other_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    other.mkdir(parents=True)
    shutil.copy(L1, other / L1.name)
    out = tmp_path / "out"
    csv = "the file (200 bytes) does not begin with SQLite's header"
    for i, (data, said) in enumerate(((pointer, lfs), (b"<!DOCTYPE html><title>404</title>", page),
                                      (b"\n<html>" + b"<p>Sign in</p>" * 20 + b"</html>", page),
                                      (b"Name,Type\n" * 20, csv))):
        f = tmp_path / f"run{i}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
        f.parent.mkdir(parents=True)
        f.write_bytes(data)
        assert (len(data) < 100) == (i == 1)  # one under SQLite's header, the others beyond it
        code, stdout, err = run_inproc(capsys, "-bp", str(f.parent.parent), "-d", str(other.parent), "-o", str(out))
        assert code == 1 and stdout == "" and not out.exists()
        assert error_lines(err) == [f"error: {f}: not a SQLite database: {said} (base side)"], err


def test_corrupt_db(tmp_path: Path) -> None:
    f = _db(tmp_path)
    data = bytearray(L1.read_bytes())
    data[4096:len(data) // 2] = b"\xff" * (len(data) // 2 - 4096)
    f.write_bytes(bytes(data))
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(f) in str(e.value)


def test_missing_required_table(tmp_path: Path) -> None:
    f = _db(tmp_path)
    con = sqlite3.connect(f)
    con.execute("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)")
    con.commit()
    con.close()
    with pytest.raises(ProfileError, match="TASK is missing") as e:
        load_profile(str(f), OPTS)
    assert str(f) in str(e.value)


def test_empty_file_and_a_database_without_either_required_table(tmp_path: Path) -> None:
    """A 0-byte .db (a profiler stopped before it wrote it), which SQLite opens as a database without tables, is
    said to be empty, where it read "table TASK, STRING_IDS is missing"; a database lacking both tables names them
    in a sentence (synthetic: the excerpt's copy without them)."""
    f = _db(tmp_path)
    f.write_bytes(b"")
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == (f"{f}: the file is empty (0 bytes), not a profiler database: was the profiler stopped "
                            "before it wrote it?")
    (tmp_path / "both").mkdir()
    g = edited_copy(L1, tmp_path / "both" / "ascend_pytorch_profiler_0.db", "DROP TABLE TASK", "DROP TABLE STRING_IDS")
    with pytest.raises(ProfileError) as e:
        load_profile(str(g), OPTS)
    assert str(e.value) == f"{g}: not a profiler database: tables TASK and STRING_IDS are missing"


def test_empty_task_table(tmp_path: Path) -> None:
    f = _db(tmp_path)
    edited_copy(L1, f, "DELETE FROM TASK")
    with pytest.raises(ProfileError, match="TASK table is empty") as e:
        load_profile(str(f), OPTS)
    assert str(f) in str(e.value)


@pytest.mark.parametrize("column", ["startNs", "endNs"])
def test_task_table_without_a_timed_row(tmp_path: Path, column: str) -> None:
    """Rows without a start or end time are left out of every query (one warning; the rest load:
    ``test_db_rows_without_a_time_are_left_out_and_counted``). When that is every TASK row the profile has no
    device time: a run that reads it is refused, naming which of its comparisons do (it loaded with an E2E time of
    0 and the one warning), as a trace without any device 'dur' is (test_absent_durations.py). The API and memory
    comparisons read PYTORCH_API and the memory tables: such a run goes on, and its sheets are the whole export's
    (it was refused too)."""
    f = edited_copy(L1, _db(tmp_path), f"UPDATE TASK SET {column} = NULL")
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == (f"{f}: no row of the TASK table has a start and an end time (552 row(s) without): no "
                            "device time to compare, which the time breakdown, the operator comparison, the "
                            "communication comparison and the kernel comparison read from it (the API and memory "
                            "comparisons do not read it and run without it)")
    with pytest.raises(ProfileError, match=r"which the kernel comparison reads from it \(the API"):
        load_profile(str(f), build_options(enable_kernel_compare=True)[0])
    on = {"enable_api_compare": True, "enable_memory_compare": True}
    assert f"{f}: 552 row(s) have no start or end time (552 TASK); left out" in load_profile(
        str(f), build_options(**on)[0]).warnings
    from msprof_compare.api import compare

    got, whole = compare(str(f), str(L1), **on), compare(str(L1), str(L1), **on)
    for sheet in ("ApiCompare", "MemoryCompare", "MemoryCompareStatistic"):
        assert len(got.sheet(sheet)) == len(whole.sheet(sheet)) > 0
        pd.testing.assert_frame_equal(got.sheet(sheet), whole.sheet(sheet))
    (tmp_path / "one").mkdir()
    one = edited_copy(L1, tmp_path / "one" / f.name, f"UPDATE TASK SET {column} = NULL WHERE rowid > 1")
    assert f"{one}: 551 row(s) have no start or end time (551 TASK); left out" in load_profile(str(one), OPTS).warnings


def test_rows_ending_before_they_start_read_as_zero(tmp_path: Path) -> None:
    """A task, communication task or API row whose endNs is before its startNs (an end never written,
    read as 0) once gave durations of -1.7e18 ns that swamped every figure. Such a duration is read as 0,
    as the trace loaders do, and one warning counts the rows per table."""
    f = _db(tmp_path)
    shutil.copyfile(L1, f)
    con = sqlite3.connect(f)
    (task,) = con.execute("SELECT globalTaskId FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 1").fetchone()
    con.execute("UPDATE TASK SET endNs = 0 WHERE globalTaskId = ?", (task,))
    # and a task no compute query reads (a memcpy, a notify): counted once, from the whole TASK table
    con.execute("UPDATE TASK SET endNs = 0 WHERE globalTaskId = (SELECT min(globalTaskId) FROM TASK WHERE "
                "globalTaskId NOT IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO))")
    con.execute("UPDATE PYTORCH_API SET endNs = startNs - 5 WHERE rowid IN "
                "(SELECT rowid FROM PYTORCH_API WHERE type = 50001 ORDER BY startNs LIMIT 2)")
    con.commit()
    con.close()
    p = load_profile(str(f), OPTS)
    assert p.warnings == [f"{f}: 4 row(s) end before they start (2 in TASK, 2 in PYTORCH_API); "
                          "their duration is read as 0"]
    want = sorted(max(e - s, 0) for s, e in sql(f, "SELECT t.startNs, t.endNs FROM TASK t "
                                                    "JOIN COMPUTE_TASK_INFO USING (globalTaskId)"))
    assert sorted(p.kernels["dur"].tolist()) == want and want[0] == 0
    assert (p.ops["dur"] >= 0).all() and int((p.ops["dur"] == 0).sum()) >= 2
    clean = db_breakdown(load_profile(str(L1), OPTS))
    bad = db_breakdown(p)
    assert 0 < bad.computing_ns <= clean.computing_ns


def test_op_shapes_come_from_the_column_that_holds_them(tmp_path: Path) -> None:
    """torch_npu writes each op's data types under PYTORCH_API.inputShapes and its shapes under inputDtypes
    (the text export of the same workload has those shapes as Input Dims). The loader reads them the right way
    round, and a DB whose columns are right is read as it is. An op with data types but no shapes (the text
    export writes its Input Dims as "") reads "", one with neither "N/A"."""
    opts = build_options(enable_operator_compare=True)[0]

    def expected(db: Path, shapes: str, dtypes: str) -> list[tuple]:
        q = (f"SELECT n.value, coalesce(s.value, CASE WHEN d.value IS NULL THEN 'N/A' ELSE '' END), "
             f"coalesce(d.value, 'N/A') FROM PYTORCH_API a "
             f"JOIN STRING_IDS n ON n.id = a.name LEFT JOIN STRING_IDS s ON s.id = a.{shapes} "
             f"LEFT JOIN STRING_IDS d ON d.id = a.{dtypes} WHERE a.type = 50001")
        return sorted(sql(db, q))

    def loaded(db: Path) -> list[tuple]:
        ops = load_profile(str(db), opts).ops
        return sorted(zip(ops["name"], ops["input_dims"], ops["input_type"], strict=True))

    want = expected(L1, "inputDtypes", "inputShapes")
    assert ("aten::conv2d", "32,3,224,224;\r\n64,3,11,11;\r\n64;\r\n;\r\n;\r\n;\r\n",
            "float;\r\nfloat;\r\nfloat;\r\nScalarList;\r\nScalarList;\r\nScalarList;\r\nScalar") in want
    assert loaded(L1) == want
    assert sum(1 for _, s, t in want if s == "" and t != "N/A") == 55  # aten::item and friends: Scalar inputs
    fixed = _db(tmp_path)
    edited_copy(L1, fixed, "UPDATE PYTORCH_API SET inputShapes = inputDtypes, inputDtypes = inputShapes")
    assert expected(fixed, "inputShapes", "inputDtypes") == want
    assert loaded(fixed) == want


@pytest.mark.parametrize("swap", [False, True], ids=["torch_npu", "right-way-round"])
@pytest.mark.parametrize("lost", ["types", "shapes"])
def test_one_shape_or_type_column_alone_is_read_as_what_it_holds(tmp_path: Path, swap: bool, lost: str) -> None:
    """Each column's texts tell what it holds (letters: data types; digits without a letter: shapes), so where one
    of the two is NULL in every row the other is read as what it holds, in either layout (torch_npu's swapped one,
    and the right way round): an all-NULL column of shapes kept the swap off and showed torch_npu's types
    (``float;...``) as every op's Input Shape, its Input Type N/A. The column lost reads N/A in every op (no op
    recorded it: not the "" of an op with types but no shapes, which says its inputs have none). Expected values:
    plain SQL on the level-1 excerpt (torch_npu: types in inputShapes, shapes in inputDtypes)."""
    opts = build_options(enable_operator_compare=True)[0]
    cols = {"types": "inputShapes", "shapes": "inputDtypes"}  # torch_npu's layout
    edits = ["UPDATE PYTORCH_API SET inputShapes = inputDtypes, inputDtypes = inputShapes"] if swap else []
    where = {k: ({"types": "inputDtypes", "shapes": "inputShapes"} if swap else cols)[k] for k in cols}
    db = edited_copy(L1, _db(tmp_path), *edits, f"UPDATE PYTORCH_API SET {where[lost]} = NULL")
    kept = "shapes" if lost == "types" else "types"
    got = sql(L1, f"SELECT n.value, coalesce(k.value, 'N/A') FROM PYTORCH_API a JOIN STRING_IDS n ON n.id = a.name "
                  f"LEFT JOIN STRING_IDS k ON k.id = a.{cols[kept]} WHERE a.type = 50001")
    assert len(got) == 860 and sum(v != "N/A" for _, v in got) == (496 if kept == "shapes" else 551)
    want = sorted((n, v, "N/A") if kept == "shapes" else (n, "N/A", v) for n, v in got)
    ops = load_profile(str(db), opts).ops
    assert sorted(zip(ops["name"], ops["input_dims"], ops["input_type"], strict=True)) == want
    conv = ("32,3,224,224;\r\n64,3,11,11;\r\n64;\r\n;\r\n;\r\n;\r\n" if kept == "shapes" else
            "float;\r\nfloat;\r\nfloat;\r\nScalarList;\r\nScalarList;\r\nScalarList;\r\nScalar")
    assert ("aten::conv2d", *((conv, "N/A") if kept == "shapes" else ("N/A", conv))) in want


def _ops_as_read(db: Path, shapes: str, dtypes: str) -> list[tuple]:
    """(name, Input Shape, Input Type) of each op row by plain SQL, ``shapes`` / ``dtypes`` naming the columns read
    as each: "" for an op with types and no shapes, N/A for one without."""
    return sorted(sql(db, f"SELECT n.value, coalesce(s.value, CASE WHEN d.value IS NULL THEN 'N/A' ELSE '' END), "
                          f"coalesce(d.value, 'N/A') FROM PYTORCH_API a JOIN STRING_IDS n ON n.id = a.name "
                          f"LEFT JOIN STRING_IDS s ON s.id = a.{shapes} LEFT JOIN STRING_IDS d ON d.id = a.{dtypes} "
                          "WHERE a.type = 50001"))


def test_a_types_column_alone_whose_types_hold_digits_is_read_as_types(tmp_path: Path) -> None:
    """Half-precision types hold digits (``c10::Half``): the right-way-round layout with every op's shapes NULL and
    its types so named is read as it is, where digits alone would take the types for shapes and swap them
    (mutation audit mut66b). The level-1 excerpt, its columns swapped, 'float' renamed in the types' texts."""
    opts = build_options(enable_operator_compare=True)[0]
    db = edited_copy(L1, _db(tmp_path), "UPDATE PYTORCH_API SET inputShapes = inputDtypes, inputDtypes = inputShapes",
                     "UPDATE STRING_IDS SET value = replace(value, 'float', 'c10::Half') WHERE id IN "
                     "(SELECT inputDtypes FROM PYTORCH_API WHERE type = 50001)",
                     "UPDATE PYTORCH_API SET inputShapes = NULL")
    # no op has shapes: each reads N/A (shapes not recorded), not the "" of an op with types and no shapes
    want = sorted((n, "N/A", t) for n, _, t in _ops_as_read(db, "inputShapes", "inputDtypes"))
    assert len(want) == 860 and sum("c10::Half" in t for _, _, t in want) == 415
    ops = load_profile(str(db), opts).ops
    assert sorted(zip(ops["name"], ops["input_dims"], ops["input_type"], strict=True)) == want


@pytest.mark.parametrize(("layout", "other"), [("shapes", "1,2"), ("types", "float")])
def test_two_columns_that_both_hold_shapes_or_both_types_are_read_as_they_are(tmp_path: Path, layout: str,
                                                                             other: str) -> None:
    """Where both columns hold shapes (digits without a letter), or both data types, nothing tells them swapped:
    each is read as its name says (mutation audit mut66b: one kind in both was taken for the swap). The level-1
    excerpt in the right-way-round layout with every typed op's inputDtypes made the shape '1,2', and in
    torch_npu's layout (types in inputShapes) with them made 'float'."""
    opts = build_options(enable_operator_compare=True)[0]
    edits = ["UPDATE PYTORCH_API SET inputShapes = inputDtypes, inputDtypes = inputShapes"] if layout == "shapes" \
        else []
    db = edited_copy(L1, _db(tmp_path), *edits, f"INSERT INTO STRING_IDS VALUES ((SELECT max(id) + 1 FROM STRING_IDS), "
                     f"'{other}')", "UPDATE PYTORCH_API SET inputDtypes = (SELECT max(id) FROM STRING_IDS) WHERE "
                     "inputDtypes IS NOT NULL")
    want = _ops_as_read(db, "inputShapes", "inputDtypes")
    assert len(want) == 860 and sum(t == other for _, _, t in want) == (551 if layout == "shapes" else 496)
    ops = load_profile(str(db), opts).ops
    assert sorted(zip(ops["name"], ops["input_dims"], ops["input_type"], strict=True)) == want


# --------------------------------------------------------------------------- synthetic msmonitor / MindSpore


def make_synthetic(path: Path) -> None:
    """A tiny DB with the tables an msmonitor / MindSpore export has (no PYTORCH_API, no PMU).

    Compute tasks (stream 2): A [0,100) KERNEL_AICORE MatMul, B [150,200) KERNEL_AIVEC Add,
    C [400,500) KERNEL_AIVEC Cast. Communication op hcom_allReduce__1_0_1 [120,450) in group "g1",
    with Notify_Wait tasks on plane 0 [120,140), [300,350) and a Memcpy on plane 1 [350,360).
    An EVENT_RECORD task [600,610) on stream 3 extends E2E. STEP_TIME: step 1 = [0,1000].
    """
    strings = {1: "MatMul_1", 2: "MatMul", 3: "AI_CORE", 4: "KERNEL_AICORE", 5: "Add_2", 6: "Add",
               7: "AI_VECTOR_CORE", 8: "KERNEL_AIVEC", 9: "Cast_3", 10: "Cast", 11: "hcom_allReduce__1_0_1",
               12: "g1", 13: "hcom_allReduce_", 14: "Notify_Wait", 15: "Memcpy", 16: "EVENT_RECORD",
               17: '"4,4"'}
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
                           globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
                           streamId INTEGER, taskId INTEGER, modelId INTEGER);
        CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER,
                                        mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, inputFormats INTEGER,
                                        inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER,
                                        outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER);
        CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER,
                                       groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER, retry INTEGER,
                                       dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER);
        CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER, globalTaskId INTEGER, taskType INTEGER,
                                              planeId INTEGER, groupName INTEGER, notifyId INTEGER,
                                              rdmaType INTEGER, srcRank INTEGER, dstRank INTEGER,
                                              transportType INTEGER, size INTEGER, dataType INTEGER,
                                              linkType INTEGER, opId INTEGER);
        CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
    """)
    con.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", strings.items())
    tasks = [  # start, end, connectionId, globalTaskId, taskType, stream
        (0, 100, 1, 1, 4, 2), (150, 200, 2, 2, 8, 2), (400, 500, 3, 3, 8, 2),
        (120, 140, 4, 4, 14, 4), (300, 350, 4, 5, 14, 4), (350, 360, 4, 6, 15, 4), (600, 610, 5, 7, 16, 3),
    ]
    con.executemany("INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 7, ?, 0, ?, 0, 0)", tasks)
    con.executemany("INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, taskType, opType, inputShapes) "
                    "VALUES (?, ?, ?, ?, 17)", [(1, 1, 3, 2), (5, 2, 7, 6), (9, 3, 7, 10)])
    con.execute("INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, groupName, opId, opType) "
                "VALUES (11, 120, 450, 4, 12, 1, 13)")
    con.executemany("INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, taskType, planeId, groupName, opId) "
                    "VALUES (11, ?, ?, ?, 12, 1)", [(4, 14, 0), (5, 14, 0), (6, 15, 1)])
    con.execute("INSERT INTO STEP_TIME VALUES (1, 0, 1000)")
    con.commit()
    con.close()


@pytest.mark.parametrize("name", ["msmonitor_123_0.db", "ascend_mindspore_profiler_0.db"])
def test_synthetic_msmonitor_and_mindspore(tmp_path: Path, name: str) -> None:
    f = tmp_path / name
    make_synthetic(f)
    opts, _ = build_options(enable_memory_compare=True)
    p = load_profile(str(f), opts, step=1)
    assert p.extra["db_kind"] == ("msmonitor" if name.startswith("msmonitor") else "mindspore")
    assert p.ops.empty and p.operator_memory is None  # only overall, communication and kernel pages
    assert p.kernels["name"].tolist() == ["MatMul_1", "Add_2", "Cast_3"]
    assert p.kernel_details["Type"].tolist() == ["MatMul", "Add", "Cast"]
    bd = db_breakdown(p)
    # by hand: compute ∪ = 100 + 50 + 100 = 250; busy = [0,100) ∪ [120,500) = 480; uncovered = 230
    assert bd.computing_ns == 250
    assert bd.uncovered_comm_ns == 230
    # E2E: busy [0,500) and the EVENT_RECORD task [600,610) -> 610
    assert bd.e2e_ns == 610
    assert bd.free_ns == 610 - 250 - 230
    # no PMU: cube = KERNEL_AICORE; MatMul by the Type fallback, Cast is a trans vector, Add plain vector
    assert (bd.b("matmul_cube").ns, bd.b("matmul_cube").count) == (100, 1)
    assert (bd.b("vector_trans").ns, bd.b("vector_notrans").ns) == (100, 50)
    # windows = [120,150) ∪ [200,400) ∪ [450? no: op ends 450 inside Cast) -> [120,150),[200,400)
    # group uncovered = 30 + 200 = 230; wait = Notify_Wait [120,140) ∩ windows + [300,350) ∩ windows = 20 + 50
    assert bd.groups == {"g1": {"wait": 70, "transmit": 160}}
    assert bd.wait_ns == 70


def test_synthetic_without_step_table_rows(tmp_path: Path) -> None:
    f = tmp_path / "msmonitor_1_0.db"
    make_synthetic(f)
    with pytest.raises(StepError, match="valid steps: 1"):
        load_profile(str(f), OPTS, step=3)
    p = load_profile(str(f), OPTS)
    assert len(p.kernels) == 3 and p.extra["step_range"] is None


def test_db_op_statistic_sorted_by_total_descending(tmp_path: Path) -> None:
    """reference-1 §7.4: the DB op statistic stands in for op_statistic.csv: largest total first, ties first-seen."""
    f = tmp_path / "msmonitor_1_0.db"
    make_synthetic(f)  # MatMul 100 ns, Add 50 ns, Cast 100 ns, in start order
    st = load_profile(str(f), build_options(enable_kernel_compare=True, use_kernel_type=True)[0]).op_statistic
    assert st["OP Type"].tolist() == ["MatMul", "Cast", "Add"]
    assert st["Total Time(us)"].tolist() == [0.1, 0.1, 0.05]


def test_synthetic_msmonitor_pair_all_pages_with_step(tmp_path: Path) -> None:
    """msmonitor DBs (no torch ops) give the overall, communication and kernel pages, also with a step."""
    from msprof_compare import api

    a, b = tmp_path / "a" / "msmonitor_1_0.db", tmp_path / "b" / "msmonitor_2_0.db"
    for f in (a, b):
        f.parent.mkdir()
        make_synthetic(f)
    res = api.compare(str(a), str(b), base_step=1, comparison_step=1, enable_profiling_compare=True,
                      enable_communication_compare=True, enable_kernel_compare=True)
    assert {"OverallMetrics", "CommunicationCompare", "KernelCompare"} <= set(res.sheet_names)
    om = res.sheet("OverallMetrics")
    e2e = om[om["Index"] == "E2E Time"]
    assert float(e2e["Duration(ms)"].iloc[0]) == pytest.approx(610 / 1e6)
    comm = res.sheet("CommunicationCompare")
    assert comm.iloc[0, 1] == "allreduce" and comm.iloc[0, 3] == 1


@pytest.mark.parametrize(("table", "warning", "gone"), [
    ("PYTORCH_API", "no PYTORCH_API table; no torch ops", "ops"),
    ("COMPUTE_TASK_INFO", "no COMPUTE_TASK_INFO table; no computing tasks", "kernels"),
])
def test_db_without_an_optional_table(tmp_path: Path, table: str, warning: str, gone: str) -> None:
    """A DB export lacking the torch-op or the compute-task table (e.g. a CANN-only capture) still loads and
    compares: the profile says what is missing, the table is empty, the default compare writes its sheets."""
    from msprof_compare.api import compare

    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(DATA / "l1" / "ascend_pytorch_profiler_0.db", db)
    con = sqlite3.connect(db)
    con.execute(f"DROP TABLE {table}")
    con.commit()
    con.close()
    p = load_profile(str(db), build_options()[0])
    assert p.warnings == [f"{db}: {warning}"]
    assert len(getattr(p, gone)) == 0
    full = load_profile(str(DATA / "l1" / "ascend_pytorch_profiler_0.db"), build_options()[0])
    other = "kernels" if gone == "ops" else "ops"
    assert len(getattr(p, other)) == len(getattr(full, other))
    result = compare(str(db), str(DATA / "l1" / "ascend_pytorch_profiler_0.db"))
    assert [s.name for s in result.sheets][:2] == ["Summary", "OverallMetrics"]


@pytest.mark.parametrize(("table", "column", "value", "message"), [
    ("COMMUNICATION_OP", "groupName", "abc", r"column groupName holds .abc., not an integer"),
    ("OP_MEMORY", "size", 1e30, r"column size holds 1e\+30, not an integer"),
    ("MEMORY_RECORD", "totalReserved", "abc", r"table MEMORY_RECORD: column totalReserved holds 'abc', not a number"),
    # time text SQLite's CAST would read as 0 or 1, or a range filter would drop without a word
    ("PYTORCH_API", "startNs", "abc", r"table PYTORCH_API: column startNs holds 'abc', not an integer"),
    ("PYTORCH_API", "endNs", "1.7e18", r"table PYTORCH_API: column endNs holds '1.7e18', not an integer"),
    # digits beyond int64: CAST would clamp them to int64 max
    ("PYTORCH_API", "startNs", "99999999999999999999",
     r"table PYTORCH_API: column startNs holds '99999999999999999999', not an integer"),
    ("TASK", "startNs", "x1736410538306028", r"table TASK: column startNs holds 'x1736410538306028', not an integer"),
    ("COMMUNICATION_OP", "endNs", "", r"table COMMUNICATION_OP: column endNs holds '', not an integer"),
    # a fraction: read as its whole part before (a kernel named after name id 12, step 50.5 chosen as step 50)
    ("COMPUTE_TASK_INFO", "name", 12.5, r"table COMPUTE_TASK_INFO: column name holds 12\.5, not an integer"),
    # a column of a join names its own table, where "table TASK, COMPUTE_TASK_INFO" named both
    ("COMMUNICATION_TASK_INFO", "planeId", "abc",
     r"table COMMUNICATION_TASK_INFO: column planeId holds 'abc', not an integer"),
    ("TASK", "streamId", 0.5, r"table TASK: column streamId holds 0\.5, not an integer"),  # read as stream 0 once
    ("STEP_TIME", "id", 50.5, r"table STEP_TIME: column id holds 50\.5, not an integer"),
    ("CONNECTION_IDS", "connectionId", "abc", r"table CONNECTION_IDS: column connectionId holds 'abc', not an integer"),
])
def test_db_cell_that_is_no_integer(tmp_path: Path, table: str, column: str, value: object, message: str) -> None:
    """A text, fractional or out-of-range cell where a query needs an integer is a one-line data error naming the file,
    the table and the column (it escaped as an internal error). A NULL time: see the next test."""
    copy = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, copy)
    con = sqlite3.connect(copy)
    con.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = (SELECT min(rowid) FROM {table})", (value,))
    con.commit()
    con.close()
    with pytest.raises(ProfileError, match=message) as info:
        load_profile(str(copy), build_options(enable_memory_compare=True, enable_communication_compare=True,
                                              enable_profiling_compare=True)[0])
    assert info.value.path == str(copy)


def test_db_cell_that_is_no_integer_names_its_own_table_of_a_join(tmp_path: Path) -> None:
    """A TASK cell read through the compute tasks' join (TASK t JOIN COMPUTE_TASK_INFO c) names TASK alone, where
    the error said "table TASK, COMPUTE_TASK_INFO" (synthetic: the first compute task's deviceId written 'abc')."""
    copy = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                       "UPDATE TASK SET deviceId = 'abc' WHERE globalTaskId = (SELECT min(globalTaskId) FROM "
                       "COMPUTE_TASK_INFO)")
    with pytest.raises(ProfileError) as info:
        load_profile(str(copy), OPTS)
    assert str(info.value) == f"{copy}: table TASK: column deviceId holds 'abc', not an integer"


def test_db_column_no_figure_reads_is_not_checked(tmp_path: Path) -> None:
    """COMMUNICATION_OP.connectionId feeds no figure: the loader no longer reads it, so a text in it (which failed
    the whole load as "not an integer") loads, with the same communication rows as the clean file."""
    copy = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                       "UPDATE COMMUNICATION_OP SET connectionId = 'abc'")
    opts = build_options(enable_communication_compare=True, enable_profiling_compare=True)[0]
    got, clean = load_profile(str(copy), opts).comm, load_profile(str(L1), opts).comm
    assert len(got) == len(clean) > 0 and got["dur"].tolist() == clean["dur"].tolist()


def _old_not_integer_text(col: str) -> str:
    """The TEXT time check as it was before its fast first test (session 15), kept as the reference."""
    digits = f"ltrim({col}, '0')"
    return (f"{col} IS NOT NULL AND typeof({col}) <> 'integer' "
            f"AND NOT (typeof({col}) = 'text' AND (CAST(CAST({col} AS INTEGER) AS TEXT) = {col} "
            f"OR ({col} <> '' AND {col} NOT GLOB '*[^0-9]*' AND (length({digits}) < 19 OR "
            f"(length({digits}) = 19 AND {digits} <= '9223372036854775807')))))")


@pytest.mark.parametrize("decl", ["TEXT", "INTEGER", "REAL", "NUMERIC", "BLOB", "", "TEXT COLLATE NOCASE"])
def test_db_text_time_check_flags_the_same_cells_as_before(decl: str) -> None:
    """The fast first test of the TEXT time check (``x >= '' AND x < X''`` for typeof text, then the round
    trip) changes no verdict: over every storage class, in a column of each declared type (affinity decides
    how the comparisons convert), it flags exactly the cells the full rule flags, and those are the cells
    Python's reading of the rule rejects."""
    from msprof_compare.loaders.ascend_db import _not_integer_text

    values = [None, 5, -5, 0, 2**63 - 1, -(2**63), 5.0, 1.5, 1.7e18, "5", "-5", "0", "-0", "05", "007", " 5", "5 ",
              "+5", "", "abc", "1.7e18", "12abc", "9223372036854775807", "9223372036854775808",
              "-9223372036854775808", "00009223372036854775807", "99999999999999999999", b"5", b"", b"abc",
              "1736410576395167660", "\u0665", "1000000000000000000", "999999999999999999", "0999999999999999999",
              " 173641057639516766", "+173641057639516766", "-173641057639516766", "1736410576395167660 ",
              "9223372036854775806", "\uff11" * 19, "17364105763951676601", b"1736410576395167660"]
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE TABLE T (v {decl})")
    con.executemany("INSERT INTO T (v) VALUES (?)", [(v,) for v in values])
    stored = con.execute("SELECT rowid, v, typeof(v) FROM T").fetchall()

    def rejected(old: bool) -> set[int]:
        where = _old_not_integer_text("v") if old else _not_integer_text("v")
        return {r for (r,) in con.execute(f"SELECT rowid FROM T WHERE {where}")}

    def python_rule(v: object, kind: str) -> bool:  # True: no integer time
        if kind in ("null", "integer"):
            return False
        if kind != "text":
            return True
        digits = v[1:] if v.startswith("-") else v
        if v.startswith("-") and v != "-0" and digits.lstrip("0") == digits and digits.isascii() \
                and digits.isdigit():
            return not -(2**63) <= int(v)
        if not (digits == v and v.isascii() and v.isdigit()):
            return True
        return int(v) > 2**63 - 1

    new = rejected(old=False)
    assert new == rejected(old=True)
    assert new == {r for r, v, kind in stored if python_rule(v, kind)}
    assert new  # the set of values holds bad ones in every affinity
    con.close()


@pytest.mark.parametrize("decl", ["INTEGER", "REAL", "NUMERIC", "TEXT", "BLOB", "", "TEXT COLLATE NOCASE"])
def test_db_memory_peak_scan_reads_cells_as_before(decl: str) -> None:
    """The one-scan Mem Usage query (comparisons standing for typeof) gives, for each kind of cell in a column
    of each declared type, the peak, the out-of-range count and the "no number" verdict the typeof-based
    queries gave (session 15), one cell at a time and all cells together."""
    from msprof_compare.loaders.ascend_db import _memory_peak_sql
    from msprof_compare.loaders.numparse import MAX_RESERVED_BYTES as top

    x = "totalReserved"
    old = (f"SELECT max(CASE WHEN {x} BETWEEN 0 AND {top} THEN {x} END), sum(typeof({x}) IN ('integer', 'real') "
           f"AND NOT {x} BETWEEN 0 AND {top}), EXISTS (SELECT 1 FROM MEMORY_RECORD WHERE typeof({x}) NOT IN "
           f"('integer', 'real', 'null') OR abs({x}) > 1.79e308) FROM MEMORY_RECORD")
    values = [None, 0, 5, -5, 2.5, top, top + 1, 1e300, float("inf"), float("-inf"), 2**63 - 1, "5", "abc", "",
              " 7", "1e3", b"5", b"", b"abc"]
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE TABLE MEMORY_RECORD ({x} {decl})")
    for cells in [[v] for v in values] + [values]:
        con.execute("DELETE FROM MEMORY_RECORD")
        con.executemany("INSERT INTO MEMORY_RECORD VALUES (?)", [(v,) for v in cells])
        peak, odd, junk = con.execute(_memory_peak_sql("")).fetchone()
        peak0, odd0, junk0 = con.execute(old).fetchone()
        assert (peak, odd or 0, bool(junk)) == (peak0, odd0 or 0, bool(junk0)), cells
    con.close()


def test_db_op_columns_no_comparator_reads_are_not_fetched(tmp_path: Path) -> None:
    """PYTORCH_API sequenceNumber / fwdThreadId feed no figure, so they are not fetched (sqlite3 costs a
    microsecond per value fetched): junk there no longer stops the load ("not an integer" before), and
    the ops table has no columns for them."""
    copy = edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db",
                       "UPDATE PYTORCH_API SET sequenceNumber = 'abc', fwdThreadId = 1e30")
    opts = build_options(enable_operator_compare=True)[0]
    p, want = load_profile(str(copy), opts), load_profile(str(L1), opts)
    assert len(p.ops) == sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001")[0][0] > 0
    assert p.ops.equals(want.ops)
    assert not {"seq", "fwd_tid"} & set(p.ops.columns)


def test_db_rows_without_a_time_are_left_out_and_counted(tmp_path: Path) -> None:
    """A TASK, PYTORCH_API or COMMUNICATION_OP row with a NULL startNs or endNs cannot be placed: it is left out
    of every query and counted in one warning. A NULL start was dropped without a word (the range filter), a
    NULL end of a task stopped the run, and a NULL op start did so only without a step."""
    stmt = "UPDATE {t} SET {c} = NULL WHERE rowid IN (SELECT rowid FROM {t} ORDER BY rowid LIMIT {n})"
    db = edited_copy(L1, _db(tmp_path),
                     stmt.format(t="TASK", c="startNs", n=1), stmt.format(t="TASK", c="endNs", n=3),
                     stmt.format(t="PYTORCH_API", c="endNs", n=2),
                     stmt.format(t="COMMUNICATION_OP", c="startNs", n=1))
    assert sql(db, "SELECT count(*) FROM TASK WHERE startNs IS NULL OR endNs IS NULL") == [(3,)]
    opts = build_options(enable_operator_compare=True, enable_profiling_compare=True)[0]
    p, clean = load_profile(str(db), opts), load_profile(str(L1), opts)
    assert f"{db}: 6 row(s) have no start or end time (3 TASK, 1 COMMUNICATION_OP, 2 PYTORCH_API); left out" \
        in p.warnings
    assert not any("no start or end time" in w for w in clean.warnings)
    lost = sql(db, "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                   "WHERE t.startNs IS NULL OR t.endNs IS NULL")[0][0]
    assert len(p.kernels) == len(clean.kernels) - lost
    ops_lost = sql(db, "SELECT count(*) FROM PYTORCH_API p JOIN ENUM_API_TYPE e ON e.id = p.type "
                       "WHERE e.name = 'op' AND p.endNs IS NULL")[0][0]
    assert len(p.ops) == len(clean.ops) - ops_lost
    lanes = p.comm["lane"].to_numpy()
    assert (lanes == "op").sum() == (clean.comm["lane"].to_numpy() == "op").sum() - 1
    stepped = load_profile(str(db), opts, step=50)  # with a step the ops are range-filtered: still no error
    assert any("no start or end time" in w for w in stepped.warnings)


@pytest.mark.parametrize(("table", "second", "edit", "value", "message"), [
    ("STRING_IDS", "value", "INSERT INTO STRING_IDS VALUES (?, 'y')", "abc",
     r"table STRING_IDS: column id holds 'abc', not an integer"),
    ("ENUM_API_TYPE", "name", "UPDATE ENUM_API_TYPE SET id = ? WHERE name = 'op'", "op-id",
     r"table ENUM_API_TYPE: column id holds 'op-id', not an integer"),
    ("ENUM_API_TYPE", "name", "UPDATE ENUM_API_TYPE SET id = ? WHERE name = 'op'", 1e300,
     r"table ENUM_API_TYPE: column id holds 1e\+300, not an integer"),
])
def test_db_id_that_is_no_integer(tmp_path: Path, table: str, second: str, edit: str, value: object,
                                  message: str) -> None:
    """An enum or string id that is no int64 (possible once a table is rebuilt without its INTEGER PRIMARY KEY)
    is a data error naming the table; it escaped as an internal error (int('abc'), an overflow binding 1e300)."""
    copy = _db(tmp_path)
    shutil.copyfile(L1, copy)
    con = sqlite3.connect(copy)
    con.execute(f"ALTER TABLE {table} RENAME TO old")
    con.execute(f"CREATE TABLE {table} (id, {second} TEXT)")
    con.execute(f"INSERT INTO {table} SELECT * FROM old")
    con.execute("DROP TABLE old")
    con.execute(edit, (value,))
    con.commit()
    con.close()
    with pytest.raises(ProfileError, match=message) as info:
        load_profile(str(copy), build_options(enable_operator_compare=True)[0])
    assert info.value.path == str(copy)


def test_db_ids_written_as_digits_text_read_as_their_integers(tmp_path: Path) -> None:
    """STRING_IDS and ENUM_API_TYPE ids stored as their digits as TEXT (tables rebuilt without INTEGER affinity;
    '050001' with a leading zero) read as those integers, as every integer query reads digits text: the load is
    the excerpt's, name for name and note for note. They were refused ("holds '10', not an integer") where the
    TASK name ids and PYTORCH_API types pointing at them read digits text."""
    db = edited_copy(L1, _db(tmp_path),
                     "ALTER TABLE STRING_IDS RENAME TO s", "CREATE TABLE STRING_IDS (id, value TEXT)",
                     "INSERT INTO STRING_IDS SELECT CAST(id AS TEXT), value FROM s ORDER BY id", "DROP TABLE s",
                     "ALTER TABLE ENUM_API_TYPE RENAME TO e", "CREATE TABLE ENUM_API_TYPE (id, name TEXT)",
                     "INSERT INTO ENUM_API_TYPE SELECT '0' || id, name FROM e", "DROP TABLE e")
    assert sql(db, "SELECT DISTINCT typeof(id) FROM STRING_IDS UNION SELECT DISTINCT typeof(id) FROM "
                   "ENUM_API_TYPE") == [("text",)]
    assert sql(db, "SELECT id FROM ENUM_API_TYPE WHERE name = 'op'") == [("050001",)]
    got, clean = load_profile(str(db), OPTS), load_profile(str(L1), OPTS)
    # the excerpt's torch ops, by SQL: PYTORCH_API rows of the op kind with both times
    assert len(clean.ops) == sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001 AND startNs IS NOT NULL "
                                     "AND endNs IS NOT NULL")[0][0] > 0
    assert got.ops["name"].tolist() == clean.ops["name"].tolist()
    assert got.kernels["name"].tolist() == clean.kernels["name"].tolist()
    assert [w.replace(str(db), "DB") for w in got.warnings] == [w.replace(str(L1), "DB") for w in clean.warnings]


def test_db_enum_id_of_digits_text_beside_integer_ids_is_no_kind_the_table_lacks(tmp_path: Path) -> None:
    """One ENUM_API_TYPE id written as digits text among integer ones (queue's 50002) is an id the table holds:
    an operator-only run, which reads no queue rows, leaves the 318 queue rows out as before, unsaid, where
    they were said as "of a type ENUM_API_TYPE lacks" (the table's ids were read as integers alone)."""
    db = edited_copy(L1, _db(tmp_path), "ALTER TABLE ENUM_API_TYPE RENAME TO e",
                     "CREATE TABLE ENUM_API_TYPE (id, name TEXT)",
                     "INSERT INTO ENUM_API_TYPE SELECT CASE name WHEN 'queue' THEN CAST(id AS TEXT) ELSE id END, name "
                     "FROM e", "DROP TABLE e")
    assert sql(db, "SELECT typeof(id) FROM ENUM_API_TYPE WHERE name = 'queue'") == [("text",)]
    assert sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50002") == [(318,)]
    ops_only = build_options(enable_operator_compare=True)[0]
    got, clean = load_profile(str(db), ops_only), load_profile(str(L1), ops_only)
    assert not any("ENUM_API_TYPE lacks" in w for w in got.warnings)
    assert [w.replace(str(db), "DB") for w in got.warnings] == [w.replace(str(L1), "DB") for w in clean.warnings]
    assert got.ops["name"].tolist() == clean.ops["name"].tolist()


def test_db_strings_stored_as_blobs_and_repeated_connection_rows(tmp_path: Path) -> None:
    """A STRING_IDS value stored as a BLOB reads as its UTF-8 text (it showed as "b'...'"), or is an error when
    it is no UTF-8, as a TEXT value is; a CONNECTION_IDS row repeated word for word links nothing twice (it
    doubled every module's device time)."""
    opts = build_options(enable_operator_compare=True)[0]
    clean = load_profile(str(L1), opts)
    copy = _db(tmp_path)
    shutil.copyfile(L1, copy)
    con = sqlite3.connect(copy)
    (name_id,) = con.execute("SELECT name FROM PYTORCH_API WHERE type = 50001 LIMIT 1").fetchone()
    (name,) = con.execute("SELECT value FROM STRING_IDS WHERE id = ?", (name_id,)).fetchone()
    con.execute("UPDATE STRING_IDS SET value = CAST(value AS BLOB) WHERE id = ?", (name_id,))
    con.execute("INSERT INTO CONNECTION_IDS SELECT * FROM CONNECTION_IDS")
    con.commit()
    con.close()
    p = load_profile(str(copy), opts)
    assert name in set(p.ops["name"]) and not any(str(n).startswith("b'") for n in p.ops["name"])
    pd.testing.assert_frame_equal(p.flows, clean.flows)
    pd.testing.assert_frame_equal(p.extra["op_connections"], clean.extra["op_connections"])
    con = sqlite3.connect(copy)
    con.execute("UPDATE STRING_IDS SET value = x'fffe41' WHERE id = ?", (name_id,))
    con.commit()
    con.close()
    with pytest.raises(ProfileError, match=f"table STRING_IDS: value of id {name_id} is not UTF-8 text"):
        load_profile(str(copy), opts)


@pytest.mark.parametrize(("edits", "infinity", "min_odd"), [
    # totals below 0 or over 1 PB are left out of Mem Usage with one warning (a negative total showed "-0.07G",
    # 1e300 a 290-digit figure); an infinity stays an error, as in a CSV
    (("UPDATE MEMORY_RECORD SET totalReserved = -totalReserved WHERE rowid % 2 = 0",
      "UPDATE MEMORY_RECORD SET totalReserved = 1e300 WHERE rowid = (SELECT min(rowid) FROM MEMORY_RECORD "
      "WHERE rowid % 2 = 1)"), "9e999", 3),
    # -2**63 is a negative reading like any other: SQLite's abs() raised "integer overflow" on it, which stopped
    # the load as "cannot read the database"; with an infinity in an earlier row the one-scan query met it too
    # and hid the infinity's message (session 15)
    (("INSERT INTO MEMORY_RECORD SELECT component, timestamp, totalAllocated, -9223372036854775808, totalActive, "
      "streamPtr, deviceId FROM MEMORY_RECORD WHERE rowid = (SELECT max(rowid) FROM MEMORY_RECORD)",), "-9e999", 1),
], ids=["negative-and-1e300", "int64-minimum"])
def test_db_mem_usage_leaves_out_impossible_readings(tmp_path: Path, edits: tuple[str, ...], infinity: str,
                                                     min_odd: int) -> None:
    (peak,) = sql(L1, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0]
    copy = edited_copy(L1, _db(tmp_path), *edits)
    (odd,) = sql(copy, "SELECT count(*) FROM MEMORY_RECORD WHERE totalReserved < 0 OR totalReserved > 1e15")[0]
    assert odd >= min_odd  # counted by SQL, independently of the loader
    p = load_profile(str(copy), OPTS)
    assert p.extra["memory_peak_bytes"] == peak
    assert p.warnings == [f"{copy}: {odd} MEMORY_RECORD totalReserved value(s) negative or over 1 PB; Mem Usage "
                          "leaves them out"]
    (tmp_path / "inf").mkdir()
    inf = edited_copy(copy, _db(tmp_path / "inf"), "UPDATE MEMORY_RECORD SET totalReserved = "
                      f"{infinity} WHERE rowid = (SELECT min(rowid) FROM MEMORY_RECORD)")
    with pytest.raises(ProfileError, match=f"column totalReserved holds {'-' if infinity[0] == '-' else ''}inf, "
                                           "not a number"):
        load_profile(str(inf), OPTS)


def test_db_under_a_path_that_is_not_utf8(tmp_path: Path) -> None:
    """Linux file names are bytes: a DB in a directory whose name is not UTF-8 opens (the URI is quoted from
    the path's bytes; str-encoding it was an internal error)."""
    d = tmp_path / os.fsdecode(b"bad\xffdir")
    d.mkdir()
    shutil.copyfile(L1, d / L1.name)
    p = load_profile(str(d / L1.name), OPTS)
    assert len(p.kernels) == sql(L1, "SELECT count(*) FROM COMPUTE_TASK_INFO")[0][0]


def test_connection_id_shared_by_many_ops_gives_one_flow_per_task(tmp_path: Path) -> None:
    """Every op of the L1 excerpt linked to one CANN connection id that all 187 compute tasks carry too: each
    task gets one flow, from the last of those ops to start by the task's start (the first one when none
    does). Pairing every op with every task made 860 x 187 flows, and minutes of work at 2,000 tasks."""
    db = edited_copy(L1, _db(tmp_path), "UPDATE PYTORCH_API SET connectionId = 1",
                     "DELETE FROM CONNECTION_IDS WHERE id = 1",
                     "INSERT INTO CONNECTION_IDS (id, connectionId) VALUES (1, 424242)",
                     "UPDATE TASK SET connectionId = 424242 WHERE globalTaskId IN "
                     "(SELECT globalTaskId FROM COMPUTE_TASK_INFO)")
    p = load_profile(str(db), build_options(enable_operator_compare=True)[0])
    fl = p.flows[p.flows["cat"] == "async_npu"]
    tasks = sql(db, "SELECT t.startNs FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId")
    assert len(fl) == len(tasks) == 187 and set(fl["id"]) == {"424242"}
    starts = sorted(p.ops["ts"].tolist())  # every op holds the id
    assert len(starts) == 860
    for s_ts, f_ts in zip(fl["s_ts"].tolist(), fl["f_ts"].tolist(), strict=True):
        before = [s for s in starts if s <= f_ts]
        assert s_ts == (before[-1] if before else starts[0])
    assert sorted(fl["f_ts"].tolist()) == sorted(t for (t,) in tasks)


def test_pmu_values_that_are_not_numbers(tmp_path: Path) -> None:
    """TASK_PMU_INFO values written as text: a number text reads as its number, other text and inf read as
    missing (NaN), counted in one warning. SQLite's CAST AS REAL read 'abc' as 0.0, a real-looking figure."""
    db = edited_copy(L1, _db(tmp_path),
                     "UPDATE TASK_PMU_INFO SET value = 'abc' WHERE rowid = 188",
                     "UPDATE TASK_PMU_INFO SET value = ' 2.5' WHERE rowid = 187",
                     "UPDATE TASK_PMU_INFO SET value = 9e999 WHERE rowid = 189")
    gid = {r: sql(db, "SELECT globalTaskId FROM TASK_PMU_INFO WHERE rowid = ?", (r,))[0][0] for r in (187, 188, 189)}
    assert sql(db, "SELECT s.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE p.rowid IN "
                   "(187, 188, 189)") == [("aic_mac_time",)] * 3
    p = load_profile(str(db), OPTS)
    ex = p.extra["kernel_extra"]
    mac = dict(zip(ex["global_task_id"].tolist(), ex["aic_mac_time"].tolist(), strict=True))
    assert mac[gid[187]] == 2.5 and np.isnan(mac[gid[188]]) and np.isnan(mac[gid[189]])
    assert f"{db}: 2 TASK_PMU_INFO value(s) are not finite numbers; read as missing" in p.warnings
    clean = load_profile(str(L1), OPTS).extra["kernel_extra"]
    assert clean["aic_mac_time"].notna().sum() == ex["aic_mac_time"].notna().sum() + 2
    assert not any("TASK_PMU_INFO" in w for w in load_profile(str(L1), OPTS).warnings)


def test_pmu_times_below_0_or_over_a_week_read_as_0(tmp_path: Path) -> None:
    """As kernel_details.csv's (``test_kernel_details_pmu_times_and_starts_that_are_no_reading``): a TASK_PMU_INFO
    time below 0 or over a week (ns) is no counter reading and reads as 0, counted in one warning naming the
    counters. -5 ns of aic_total_time made a vector kernel Cube (the rule tests != 0); 1e30, also written as the
    text '1e30' (which the column's NUMERIC affinity stores as a real), is no time. A week itself is a reading;
    'abc' stays missing, in its own warning. Expected values by SQL on the copy; every other value as the
    unedited excerpt reads it."""
    week = 7 * 86_400 * 10**9
    pick = ("SELECT p.rowid, p.globalTaskId FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
            "WHERE s.value = ? AND {} ORDER BY p.rowid LIMIT 1")
    # a vector kernel: all its counters 0
    vec = sql(L1, "SELECT p.globalTaskId FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE s.value IN "
                  "('aic_total_time', 'aic_mac_time') GROUP BY p.globalTaskId HAVING max(abs(p.value)) = 0 "
                  "ORDER BY p.globalTaskId LIMIT 1")[0][0]
    neg = sql(L1, pick.format(f"p.globalTaskId = {vec}"), ("aic_total_time",))[0]
    huge = sql(L1, pick.format("p.value > 0"), ("aic_mac_time",))[0]
    text = sql(L1, pick.format(f"p.globalTaskId <> {huge[1]} AND p.value > 0"), ("aic_mte2_time",))[0]
    kept = sql(L1, pick.format(f"p.globalTaskId NOT IN ({huge[1]}, {text[1]})"), ("aic_mte2_time",))[0]
    junk = sql(L1, pick.format(f"p.globalTaskId NOT IN ({vec}, {huge[1]})"), ("aic_total_time",))[0]
    db = edited_copy(L1, _db(tmp_path), f"UPDATE TASK_PMU_INFO SET value = -5 WHERE rowid = {neg[0]}",
                     f"UPDATE TASK_PMU_INFO SET value = 1e30 WHERE rowid = {huge[0]}",
                     f"UPDATE TASK_PMU_INFO SET value = '1e30' WHERE rowid = {text[0]}",
                     f"UPDATE TASK_PMU_INFO SET value = {week} WHERE rowid = {kept[0]}",
                     f"UPDATE TASK_PMU_INFO SET value = 'abc' WHERE rowid = {junk[0]}")
    assert [v for (v,) in sql(db, "SELECT value FROM TASK_PMU_INFO WHERE rowid IN (?, ?, ?, ?, ?) ORDER BY rowid",
                                    tuple(sorted((neg[0], huge[0], text[0], kept[0], junk[0]))))] == [
        v for _, v in sorted({neg[0]: -5, huge[0]: 1e30, text[0]: 1e30, kept[0]: week, junk[0]: "abc"}.items())]
    assert sql(db, "SELECT typeof(value) FROM TASK_PMU_INFO WHERE rowid = ?", (text[0],)) == [("real",)]
    clean, p = load_profile(str(L1), OPTS), load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "PMU" in w] == [
        f"{db}: 1 TASK_PMU_INFO value(s) are not finite numbers; read as missing",
        f"{db}: 3 PMU time(s) negative or over a week (a damaged counter?) in TASK_PMU_INFO aic_total_time, "
        "aic_mac_time, aic_mte2_time; read as 0, so such a kernel passes no PMU Cube test and adds no MC2 "
        "computing time by them"]
    a, b = clean.extra["kernel_extra"], p.extra["kernel_extra"]
    assert a["global_task_id"].tolist() == b["global_task_id"].tolist()
    row = {g: i for i, g in enumerate(b["global_task_id"].tolist())}
    expected = {("aic_total_time", vec): 0.0, ("aic_mac_time", huge[1]): 0.0, ("aic_mte2_time", text[1]): 0.0,
                ("aic_mte2_time", kept[1]): float(week), ("aic_total_time", junk[1]): np.nan}
    for col in ("aic_total_time", "aic_mac_time", "aic_mte2_time", "aiv_time"):
        want = a[col].to_numpy().copy()
        for (c, g), v in expected.items():
            if c == col:
                want[row[g]] = v
        np.testing.assert_array_equal(b[col].to_numpy(), want)  # NaN == NaN
    # the vector kernel stays one (-5 made it Cube), every other kernel as before but the junk one's, whose
    # aic_total_time is missing and whose aic_mac_time decides
    cube, was = cube_mask(p), cube_mask(clean)
    assert not cube[row[vec]] and not was[row[vec]]
    mac_j = sql(L1, "SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE "
                    "s.value = 'aic_mac_time' AND p.globalTaskId = ?", (junk[1],))[0][0]
    assert cube[row[junk[1]]] == (mac_j != 0)
    same = np.ones(len(cube), dtype=bool)
    same[row[junk[1]]] = False
    np.testing.assert_array_equal(cube[same], was[same])
    assert not any("PMU time" in w for w in clean.warnings)


def test_task_links_that_joins_would_drop(tmp_path: Path) -> None:
    """A COMPUTE_TASK_INFO row without a TASK row is left out of the join, named in a warning; a TASK row
    repeating a compute task's globalTaskId is a graph replay's second run, counted without a warning (counts
    by SQL)."""
    db = edited_copy(L1, _db(tmp_path),
                     "DELETE FROM TASK WHERE globalTaskId IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO "
                     "ORDER BY globalTaskId LIMIT 2)",
                     "INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = (SELECT max(globalTaskId) FROM "
                     "COMPUTE_TASK_INFO)",
                     # the second run starts 1 s after the first, as a replay's runs start apart
                     "UPDATE TASK SET startNs = startNs + 1000000000, endNs = endNs + 1000000000 "
                     "WHERE rowid = (SELECT max(rowid) FROM TASK)")
    p = load_profile(str(db), OPTS)
    assert f"{db}: 2 globalTaskId(s) of COMPUTE_TASK_INFO have no TASK row (no time); left out" in p.warnings
    assert not any("repeat" in w for w in p.warnings)
    n = sql(db, "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId")[0][0]
    assert len(p.kernels) == n == 187 - 2 + 1
    assert not any("TASK row" in w for w in load_profile(str(L1), OPTS).warnings)


def test_task_rows_written_twice_are_counted(tmp_path: Path) -> None:
    """TASK rows repeating an earlier row's globalTaskId and startNs (synthetic: the excerpt's first compute task
    and its first SDMA task written again, word for word) are no graph replay, whose runs start apart: they are
    read as written, two tasks each, as a text export's device tasks written twice are, and counted in one
    warning. Before, such a copy took its kernel's count and time twice without a word. Counts by SQL."""
    first = "(SELECT min(t.startNs) FROM TASK t JOIN {} ON s.id = t.taskType AND s.value = 'SDMA')"
    db = edited_copy(L1, _db(tmp_path),
                     "INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = (SELECT min(globalTaskId) FROM "
                     "COMPUTE_TASK_INFO)",
                     "INSERT INTO TASK SELECT t.* FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                     f"WHERE s.value = 'SDMA' AND t.startNs = {first.format('STRING_IDS s')}")
    p = load_profile(str(db), OPTS)
    assert [w for w in p.warnings if "repeat" in w] == [
        f"{db}: 2 TASK row(s) repeat an earlier row's globalTaskId and startNs (the same task written again, as in "
        "a file joined from two copies: a graph replay's runs start apart); they are read as written, so figures "
        "that sum tasks count those tasks more than once"]
    n = sql(db, "SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId")[0][0]
    assert len(p.kernels) == n == 187 + 1
    sdma = sql(db, "SELECT count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value = 'SDMA'")[0][0]
    ts = p.extra["task_summary"]
    assert ts.loc[ts["rts_type"] == "SDMA", "count"].sum() == sdma == sql(
        L1, "SELECT count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value = 'SDMA'")[0][0] + 1


def test_step_rows_without_times_and_repeated_ids(tmp_path: Path) -> None:
    """A STEP_TIME row without a start read as starting at 0 (step 51 then spanned every task before its end)
    and is no step now; a step id held twice uses its first row; a STRING_IDS id held twice its first value:
    each named in one warning."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (51, NULL, {end})",
                     f"INSERT INTO STEP_TIME VALUES (50, {start + 10}, {start + 20})",
                     # STRING_IDS rebuilt without its primary key (no real export can repeat an id)
                     "CREATE TABLE S2 AS SELECT * FROM STRING_IDS", "DROP TABLE STRING_IDS",
                     "ALTER TABLE S2 RENAME TO STRING_IDS",
                     "INSERT INTO STRING_IDS SELECT id, 'not ' || value FROM STRING_IDS WHERE id = "
                     "(SELECT name FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 1)")
    p = load_profile(str(db), OPTS, step=50)
    assert p.extra["step_range"] == (start, end)
    assert f"{db}: 1 STEP_TIME row(s) lack an id, a start or an end; they are no steps" in p.warnings
    assert f"{db}: STEP_TIME holds step(s) 50 more than once; the first row of each is used" in p.warnings
    assert f"{db}: 1 STRING_IDS row(s) repeat an id; the first value of each id is used" in p.warnings
    assert not any(n.startswith("not ") for n in p.kernels["name"].tolist() + p.ops["name"].tolist())
    with pytest.raises(StepError, match=r"Invalid Step Id: 51, please choose from the valid steps: 50$"):
        load_profile(str(db), OPTS, step=51)
    assert not any("STEP_TIME" in w or "STRING_IDS" in w for w in load_profile(str(L1), OPTS).warnings)


def test_a_text_held_under_two_string_ids(tmp_path: Path) -> None:
    """STRING_IDS holds some texts under two ids (61 in the level-1 sample, e.g. Conv2D); a lookup by text
    must take every row using either id. Half of the aic_mac_time PMU rows moved to a second id of that text
    still give every task its value (a lookup of one id lost them)."""
    db = edited_copy(L1, _db(tmp_path), "INSERT INTO STRING_IDS (id, value) VALUES (999999, 'aic_mac_time')",
                     "UPDATE TASK_PMU_INFO SET name = 999999 WHERE rowid IN (SELECT p.rowid FROM TASK_PMU_INFO p "
                     "JOIN STRING_IDS s ON s.id = p.name WHERE s.value = 'aic_mac_time' AND p.rowid % 2 = 0)")
    moved = sql(db, "SELECT count(*) FROM TASK_PMU_INFO WHERE name = 999999")[0][0]
    assert moved > 10
    clean, p = load_profile(str(L1), OPTS), load_profile(str(db), OPTS)
    a, b = clean.extra["kernel_extra"]["aic_mac_time"], p.extra["kernel_extra"]["aic_mac_time"]
    assert a.notna().sum() == b.notna().sum() > moved and np.allclose(a.fillna(-1), b.fillna(-1))


@pytest.mark.parametrize(("kind", "shown"), [("REAL", r"1\.7\d*e\+18"), ("TEXT", r"'17\d+'")])
def test_time_columns_of_another_type_are_refused(tmp_path: Path, kind: str, shown: str) -> None:
    """TASK rebuilt with startNs as REAL (epoch ns held only to 256 ns) or as TEXT digits: refused. A REAL whole
    number must not pass the TEXT shortcut (a round trip through INTEGER) of the PYTORCH_API check, and TEXT
    digits are accepted only where the queries convert them (PYTORCH_API): the TASK queries compare what is
    stored, so every task "ended before it started" and the task totals read 0."""
    cols = ("endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId, "
            "modelId, depth")
    (tmp_path / kind).mkdir()
    db = edited_copy(L1, _db(tmp_path / kind), "ALTER TABLE TASK RENAME TO TASK_OLD",
                     f"CREATE TABLE TASK AS SELECT CAST(startNs AS {kind}) AS startNs, {cols} FROM TASK_OLD",
                     "DROP TABLE TASK_OLD")
    assert sql(db, "SELECT DISTINCT typeof(startNs) FROM TASK") == [(kind.lower(),)]
    with pytest.raises(ProfileError, match=rf"table TASK: column startNs holds {shown}, not an integer"):
        load_profile(str(db), OPTS)


def test_pmu_cells_are_read_by_one_rule_whatever_their_neighbours(tmp_path: Path) -> None:
    """A PMU value is read the same way whether or not other rows of its batch are odd: a blob is no number
    (NaN, counted) even among clean rows (the bulk path read b'2.5' as 2.5 there and NaN beside junk), and a
    task id that is no integer (3.7) is an error (it was cut to 3 among clean rows)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    blob = edited_copy(L1, _db(tmp_path / "a"), "UPDATE TASK_PMU_INFO SET value = CAST('2.5' AS BLOB) "
                       "WHERE rowid = 188")
    p = load_profile(str(blob), OPTS)
    assert f"{blob}: 1 TASK_PMU_INFO value(s) are not finite numbers; read as missing" in p.warnings
    gid = sql(blob, "SELECT globalTaskId FROM TASK_PMU_INFO WHERE rowid = 188")[0][0]
    ex = p.extra["kernel_extra"]
    assert np.isnan(ex.loc[ex["global_task_id"] == gid, "aic_mac_time"]).all()
    frac = edited_copy(L1, _db(tmp_path / "b"), "UPDATE TASK_PMU_INFO SET globalTaskId = 3.7 WHERE rowid = 188")
    with pytest.raises(ProfileError, match=r"table TASK_PMU_INFO: column globalTaskId holds 3\.7, not an integer"):
        load_profile(str(frac), OPTS)


def test_pmu_task_id_beyond_int64_is_no_integer(tmp_path: Path) -> None:
    """A TASK_PMU_INFO task id of 1e30 (SQLite keeps the text '1e30' or a number beyond int64 as a REAL) is named
    as no integer, as 3.7 is: the bulk conversion's OverflowError must send the batch to the per-row check, not
    escape as an internal error."""
    big = edited_copy(L1, _db(tmp_path), "UPDATE TASK_PMU_INFO SET globalTaskId = 1e30 WHERE rowid = 188")
    with pytest.raises(ProfileError, match=r"table TASK_PMU_INFO: column globalTaskId holds 1e\+30, not an integer"):
        load_profile(str(big), OPTS)


@pytest.mark.parametrize(("value", "said"), [("''", "''"), ("'aic_mac_time'", "'aic_mac_time'"),
                                             ("X'0a'", r"b'\n'"), ("380.5", "380.5")])
def test_pmu_counter_name_that_is_no_integer_is_refused(tmp_path: Path, value: str, said: str) -> None:
    """A TASK_PMU_INFO name (a STRING_IDS id) that is no integer is refused, as a globalTaskId that is none: the
    counters' IN test passed such a row over, so its task lost that counter without a word (dbfuzz66: a third of
    the names '' moved 3 Cube kernels to Vector). Synthetic: row 188 of the L1 excerpt, one of a loaded compute
    task's aic_mac_time (by SQL); a whole REAL of that id is the id."""
    assert sql(L1, "SELECT s.value, p.globalTaskId IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO) FROM "
                   "TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE p.rowid = 188") == [("aic_mac_time", 1)]
    # a column of no affinity keeps the text and the blob as stored
    db = edited_copy(L1, _db(tmp_path), "CREATE TABLE t AS SELECT globalTaskId, name, value FROM TASK_PMU_INFO",
                     "DROP TABLE TASK_PMU_INFO", "CREATE TABLE TASK_PMU_INFO (globalTaskId, name, value)",
                     "INSERT INTO TASK_PMU_INFO SELECT * FROM t ORDER BY rowid", "DROP TABLE t",
                     f"UPDATE TASK_PMU_INFO SET name = {value} WHERE rowid = 188")
    with pytest.raises(ProfileError) as err:
        load_profile(str(db), OPTS)
    assert str(err.value) == f"{db}: table TASK_PMU_INFO: column name holds {said}, not an integer"


def test_pmu_ids_of_digits_text_are_their_ids(tmp_path: Path) -> None:
    """A TASK_PMU_INFO globalTaskId and name (a STRING_IDS id) stored as digits text (a column declared without
    INTEGER affinity) are the ids they write, as digits text is in every integer query: every loaded task keeps
    its counters, as in the excerpt. Both were refused ("holds '380', not an integer")."""
    db = edited_copy(L1, _db(tmp_path), "CREATE TABLE t AS SELECT globalTaskId, name, value FROM TASK_PMU_INFO",
                     "DROP TABLE TASK_PMU_INFO", "CREATE TABLE TASK_PMU_INFO (globalTaskId, name, value)",
                     "INSERT INTO TASK_PMU_INFO SELECT CAST(globalTaskId AS TEXT), CAST(name AS TEXT), value FROM t "
                     "ORDER BY rowid", "DROP TABLE t")
    assert sql(db, "SELECT DISTINCT typeof(globalTaskId), typeof(name) FROM TASK_PMU_INFO") == [("text", "text")]
    got, clean = (load_profile(str(p), OPTS).extra["kernel_extra"] for p in (db, L1))
    # row 188 (by SQL): an aic_mac_time of a loaded compute task, read as its value
    gid, value = sql(L1, "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE p.rowid = 188 AND s.value = 'aic_mac_time'")[0]
    assert got.loc[got["global_task_id"] == gid, "aic_mac_time"].tolist() == [value]
    for col in ("aic_total_time", "aic_mac_time", "aic_mte2_time"):
        assert got[col].notna().sum() > 0
        np.testing.assert_array_equal(got[col].to_numpy(), clean[col].to_numpy())


def test_pmu_counter_name_of_a_whole_real_is_its_id(tmp_path: Path) -> None:
    """A name stored as a whole REAL (a column declared without INTEGER affinity) is the id it writes: every loaded
    task keeps its counters, as in the excerpt."""
    db = edited_copy(L1, _db(tmp_path), "CREATE TABLE t AS SELECT globalTaskId, name, value FROM TASK_PMU_INFO",
                     "DROP TABLE TASK_PMU_INFO", "CREATE TABLE TASK_PMU_INFO (globalTaskId, name, value)",
                     "INSERT INTO TASK_PMU_INFO SELECT globalTaskId, CAST(name AS REAL), value FROM t ORDER BY rowid",
                     "DROP TABLE t")
    assert sql(db, "SELECT DISTINCT typeof(name) FROM TASK_PMU_INFO") == [("real",)]
    got, clean = (load_profile(str(p), OPTS).extra["kernel_extra"] for p in (db, L1))
    for col in ("aic_total_time", "aic_mac_time", "aic_mte2_time"):
        assert got[col].fillna(-1).tolist() == clean[col].fillna(-1).tolist()


def test_db_profiler_info_that_is_no_object_leaves_the_settings_out(tmp_path: Path) -> None:
    """profiler_info_0.json beside a DB export feeds only the Summary's settings note: an object's level is read,
    a file whose top level is no object (a list) is passed over like one that cannot be decoded."""
    root = tmp_path / "rank0_ascend_pt"
    (root / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copyfile(L1, root / "ASCEND_PROFILER_OUTPUT" / L1.name)
    info = root / "profiler_info_0.json"
    opts, _ = build_options(enable_profiling_compare=True)
    info.write_text('{"config": {"experimental_config": {"_profiler_level": "Level1"}}}')
    p = load_profile(str(root), opts)
    assert p.extra["profiler_level"] == "Level1" and p.files["profiler_info"] == str(info)
    info.write_text('[{"config": {"experimental_config": {"_profiler_level": "Level1"}}}]')
    p = load_profile(str(root), opts)
    assert "profiler_level" not in p.extra and "profiler_info" not in p.files


def test_a_folder_holding_both_exports_reads_the_database(tmp_path: Path, samples: Path) -> None:
    """torch_npu asked for both export types writes trace_view.json and the profiler DB into one
    ASCEND_PROFILER_OUTPUT: the DB is read (reference-1 §2: a DB beats trace_view.json in a directory), given the
    profiling folder or the output folder. Here the level-1 text export's trace_view.json beside the level-1 DB
    excerpt: the loaded kernels are the DB's 187 compute tasks (by SQL), not the trace's. A mutant preferring the
    trace survived (no sample folder holds both)."""
    from msprof_compare.loaders import detect

    root = tmp_path / "rank0_ascend_pt"
    out = root / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copyfile(L1, out / L1.name)
    shutil.copyfile(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
                    / "trace_view.json", out / "trace_view.json")
    (n_compute,) = sql(L1, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)")[0]
    for given, level in ((root, "profiling"), (out, "ascend_output")):
        layout = detect(str(given))
        assert (layout.db_path, layout.trace_path, layout.level) == (str(out / L1.name), "", level)
        p = load_profile(str(given), OPTS)
        assert p.source == "ascend_db" and len(p.kernels) == n_compute == 187


@pytest.mark.parametrize("listed", [sorted, lambda names: sorted(names, reverse=True)])
def test_folder_choices_do_not_follow_the_listing_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         listed) -> None:
    """The original takes the first profiler DB and the first profiler_info*.json the file system lists, so one
    folder could read another rank's data on another machine (the determinism audit: the E2E of a folder holding
    rank 0's and rank 1's DBs read 137.919 or 134.027 ms by creation order). Several DBs are refused, naming
    them; of several profiler_info files the first by name is read, whatever the listing order."""
    from msprof_compare.loaders import detect

    root = tmp_path / "rank0_ascend_pt"
    out = root / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    for name in ("ascend_pytorch_profiler_1.db", L1.name):
        shutil.copyfile(L1, out / name)
    for name in ("profiler_info_0.json", "profiler_info.json"):
        (root / name).write_text("{}")
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p: listed(real(p)))
    with pytest.raises(ProfileError) as err:
        detect(str(root))
    assert err.value.message == ("holds 2 profiler databases (ascend_pytorch_profiler_0.db, "
                                 "ascend_pytorch_profiler_1.db)") and err.value.hint == "pass the .db file to compare"
    (out / "ascend_pytorch_profiler_1.db").unlink()
    layout = detect(str(root))
    assert layout.db_path == str(out / L1.name) and layout.info_path == str(root / "profiler_info.json")


def test_repeated_step_ids_place_tasks_by_the_first_row(tmp_path: Path) -> None:
    """A step id held twice uses its first STEP_TIME row for the step's range and for the Step Id of every task
    alike (tasks were also placed by the second row)."""
    start, end = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    db = edited_copy(L1, _db(tmp_path), f"INSERT INTO STEP_TIME VALUES (50, {end + 1}, {end + 10**12})",
                     f"UPDATE TASK SET startNs = {end + 100}, endNs = {end + 200} WHERE globalTaskId = "
                     "(SELECT max(globalTaskId) FROM COMPUTE_TASK_INFO)")
    kd = load_profile(str(db), OPTS).kernel_details
    late = kd["ts"] > end
    assert late.sum() == 1 and kd.loc[late, "Step Id"].tolist() == [""] and set(kd.loc[~late, "Step Id"]) == {"50"}


def test_info_rows_without_a_task_id(tmp_path: Path) -> None:
    """COMMUNICATION_TASK_INFO rows with no globalTaskId cannot be joined to a TASK: left out, and said."""
    db = edited_copy(L1, _db(tmp_path), "UPDATE COMMUNICATION_TASK_INFO SET globalTaskId = NULL WHERE rowid IN "
                     "(SELECT rowid FROM COMMUNICATION_TASK_INFO LIMIT 3)")
    p = load_profile(str(db), OPTS)
    assert f"{db}: 3 COMMUNICATION_TASK_INFO row(s) have no globalTaskId; left out" in p.warnings


def test_pmu_junk_of_tasks_not_loaded_is_not_counted(tmp_path: Path) -> None:
    """The PMU warning counts the values of the tasks the profile holds: a junk cell of a task id no compute
    task has (or one outside the chosen step) changes no figure and is not reported."""
    db = edited_copy(L1, _db(tmp_path), "UPDATE TASK_PMU_INFO SET value = 'abc', globalTaskId = 999999999 "
                     "WHERE rowid = 188")
    assert not any("TASK_PMU_INFO" in w for w in load_profile(str(db), OPTS).warnings)


def test_pmu_number_texts_are_ascii_numbers() -> None:
    """A PMU text reads as a number by the CSV cells' rule: ``float`` alone also takes ``1_000`` and non-ASCII
    digits, which no export writes."""
    from msprof_compare.loaders.ascend_db import _number_or_nan

    assert [_number_or_nan(v) for v in (2, 2.5, "2.5", " 3 ", "1e3")] == [2.0, 2.5, 2.5, 3.0, 1000.0]
    assert all(np.isnan(_number_or_nan(v)) for v in ("1_000", "\u0661\u0662", "abc", b"2.5", None, True))


# --------------------------------------------------------------------------- coverage audit


def _variant(tmp_path: Path, name: str, *statements: str) -> Path:
    """The excerpt with ``statements`` applied, under its export name in a folder of its own."""
    folder = tmp_path / name
    folder.mkdir()
    return edited_copy(L1, folder / "ascend_pytorch_profiler_0.db", *statements)


def test_tables_an_export_may_lack(tmp_path: Path) -> None:
    """Tables an older or a single-device export lacks: ENUM_API_TYPE (its default ids are the excerpt's, so the
    ops, task-queue rows and Python rows are the same 860 / 318 / 1,282 rows of types 50001 / 50002 / 50003, by
    SQL: a mutant swapping the queue and trace defaults survived the ops alone), OP_MEMORY (no operator memory),
    COMMUNICATION_OP with COMMUNICATION_TASK_INFO (no communication), STEP_TIME (no step: one asked for is refused
    with the original's sentence)."""
    clean = load_profile(str(L1), OPTS)
    ops = sql(L1, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001")[0][0]
    assert len(clean.ops) == ops == 860
    no_enum = load_profile(str(_variant(tmp_path, "enum", "DROP TABLE ENUM_API_TYPE")), OPTS)
    pd.testing.assert_frame_equal(no_enum.ops, clean.ops)
    counts = dict(sql(L1, "SELECT type, count(*) FROM PYTORCH_API GROUP BY type"))
    assert (len(clean.queue), len(clean.python_functions)) == (counts[50002], counts[50003]) == (318, 1282)
    pd.testing.assert_frame_equal(no_enum.queue, clean.queue)
    pd.testing.assert_frame_equal(no_enum.python_functions, clean.python_functions)
    mem = build_options(enable_memory_compare=True)[0]
    assert load_profile(str(L1), mem).operator_memory is not None
    assert load_profile(str(_variant(tmp_path, "mem", "DROP TABLE OP_MEMORY")), mem).operator_memory is None
    assert len(clean.comm) == sum(sql(L1, f"SELECT count(*) FROM {t}")[0][0]
                                  for t in ("COMMUNICATION_OP", "COMMUNICATION_TASK_INFO")) > 0
    single = load_profile(str(_variant(tmp_path, "comm", "DROP TABLE COMMUNICATION_OP",
                                       "DROP TABLE COMMUNICATION_TASK_INFO")), OPTS)
    assert len(single.comm) == 0 and len(single.kernels) == len(clean.kernels)
    no_steps = _variant(tmp_path, "steps", "DROP TABLE STEP_TIME")
    assert load_profile(str(no_steps), OPTS).extra["steps"].empty
    with pytest.raises(StepError, match="The profiling data lacks step markers. Please re-collect it."):
        load_profile(str(no_steps), OPTS, step=50)


def test_enum_api_type_name_under_several_ids(tmp_path: Path) -> None:
    """ENUM_API_TYPE's id is its key but a name may repeat: with an extra (99, 'op') row the loader kept the last
    id alone, so the 860 type-50001 rows were no ops and the run said only "Can't find any torch op". Rows of
    every id of a name are read as that kind, with a step too."""
    opts = build_options(enable_operator_compare=True, enable_memory_compare=True)[0]
    extra = _variant(tmp_path, "extra", "INSERT INTO ENUM_API_TYPE VALUES (99, 'op')")
    moved = _variant(tmp_path, "moved", "INSERT INTO ENUM_API_TYPE VALUES (99, 'op')",
                     "INSERT INTO ENUM_API_TYPE VALUES (98, 'trace')",
                     "UPDATE PYTORCH_API SET type = 99 WHERE type = 50001 AND rowid % 2 = 0",
                     "UPDATE PYTORCH_API SET type = 98 WHERE type = 50003 AND rowid % 2 = 0")
    assert sql(moved, "SELECT count(*) FROM PYTORCH_API WHERE type IN (98, 99)")[0][0] > 0
    for step in (-1, 50):
        clean = load_profile(str(L1), opts, step=step)
        assert len(clean.ops) and len(clean.python_functions) and len(clean.queue)
        for db in (extra, moved):
            p = load_profile(str(db), opts, step=step)
            for table in ("ops", "python_functions", "queue"):
                pd.testing.assert_frame_equal(getattr(p, table), getattr(clean, table))


def test_string_ids_row_without_an_id_is_passed_over(tmp_path: Path) -> None:
    """A STRING_IDS row whose id is NULL (possible where the table is declared without its primary key) names
    nothing: it is passed over (an id cell is otherwise read as an integer or refused), and every name reads as
    before."""
    db = _variant(tmp_path, "nullid", "CREATE TABLE S AS SELECT * FROM STRING_IDS", "DROP TABLE STRING_IDS",
                  "ALTER TABLE S RENAME TO STRING_IDS", "INSERT INTO STRING_IDS (id, value) VALUES (NULL, 'orphan')")
    assert sql(db, "SELECT count(*) FROM STRING_IDS WHERE id IS NULL") == [(1,)]
    clean, got = load_profile(str(L1), OPTS), load_profile(str(db), OPTS)
    assert got.ops["name"].tolist() == clean.ops["name"].tolist()
    assert got.kernels["name"].tolist() == clean.kernels["name"].tolist()


def test_id_cells_and_integer_columns(tmp_path: Path) -> None:
    """An id stored as a whole REAL (a table declared without INTEGER affinity) reads as that integer; a
    fraction is refused. An integer query names the column of a bad cell also when it is not in the first row."""
    from msprof_compare.loaders.ascend_db import _Db

    db = _Db(str(L1))
    try:
        assert db.id_value(5.0, "STRING_IDS", "id") == 5 and isinstance(db.id_value(5.0, "STRING_IDS", "id"), int)
        with pytest.raises(ProfileError, match=r"table STRING_IDS: column id holds 5\.5, not an integer"):
            db.id_value(5.5, "STRING_IDS", "id")
    finally:
        db.close()
    f = tmp_path / "cells.db"
    con = sqlite3.connect(f)
    con.execute("CREATE TABLE X (a INTEGER, b INTEGER)")
    con.executemany("INSERT INTO X VALUES (?, ?)", [(1, 2), (3, 4), (5, "x")])
    con.commit()
    con.close()
    db = _Db(str(f))
    try:
        assert db.ints("SELECT x.a, x.b FROM X x WHERE x.b <> 'x'", (), 2).tolist() == [[1, 2], [3, 4]]
        with pytest.raises(ProfileError, match=r"table X: column b holds 'x', not an integer"):
            db.ints("SELECT x.a, x.b FROM X x", (), 2)
    finally:
        db.close()


def test_task_without_global_task_id_is_one_error(tmp_path: Path) -> None:
    """TASK without its globalTaskId column, beside the info tables joined on it: one error naming the table and
    the column (the joins' SQL error named no table: "no such column: t.globalTaskId")."""
    db = _variant(tmp_path, "noid", "ALTER TABLE TASK DROP COLUMN globalTaskId")
    with pytest.raises(ProfileError, match=r": table TASK lacks column\(s\) globalTaskId$"):
        load_profile(str(db), OPTS)


def test_out_of_memory_while_loading_a_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory running out inside the DB loader is a data error naming the file (the connection is closed)."""
    from msprof_compare.loaders import ascend_db

    closed = []
    real_close = ascend_db._Db.close
    monkeypatch.setattr(ascend_db._Db, "close", lambda self: closed.append(1) or real_close(self))

    def hungry(_db):
        raise MemoryError

    monkeypatch.setattr(ascend_db, "_steps", hungry)
    with pytest.raises(ProfileError) as info:
        load_profile(str(L1), OPTS)
    assert (info.value.path, info.value.message) == (str(L1), "not enough memory to load the database")
    assert closed == [1]


def test_optional_column_an_export_lacks(tmp_path: Path) -> None:
    """An optional column absent from its table (COMPUTE_TASK_INFO.inputShapes of an export recorded without
    shapes, or an older schema) reads as N/A, as a NULL cell does (the exports' text for a task without inputs): the
    compute tasks are the same, and KernelCompare groups each type under the shape N/A, its totals the task
    durations summed by SQL."""
    from msprof_compare import compare

    db = _variant(tmp_path, "noshapes", "ALTER TABLE COMPUTE_TASK_INFO DROP COLUMN inputShapes")
    opts = build_options(enable_kernel_compare=True)[0]
    clean, got = load_profile(str(L1), opts), load_profile(str(db), opts)
    assert set(got.kernel_details["Input Shapes"]) == {"N/A"} and set(clean.kernel_details["Input Shapes"]) != {"N/A"}
    pd.testing.assert_frame_equal(got.kernels, clean.kernels)
    sheet = compare(str(db), str(db), enable_kernel_compare=True).sheet("KernelCompare")
    assert set(sheet["Input Shape"]) == {"N/A"}
    totals = dict(sql(L1, "SELECT s.value, sum(t.endNs - t.startNs) FROM TASK t JOIN COMPUTE_TASK_INFO c "
                          "ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS s ON s.id = c.opType GROUP BY 1"))
    assert len(sheet) == len(totals)
    for kernel, total in zip(sheet["Kernel"], sheet["Total Duration(us)"], strict=True):
        assert total == pytest.approx(totals[kernel] / 1000, abs=0.005), kernel


# --------------------------------------------------------------------------- graph replays and older schemas
# A task replayed from a graph (aclgraph, a static graph) runs under one globalTaskId several times: TASK holds one
# row per run, and so may TASK_PMU_INFO / COMMUNICATION_TASK_INFO; newer exports stamp those rows with timestampNs
# inside their run. Each test adds a second run to one real task of the excerpt.

_LATER = 10**9  # the second run starts 1 s after the first: inside no other run of the excerpt


def _replayed(tmp_path: Path, name: str, gid_sql: str, *statements: str) -> tuple[Path, int, int, int]:
    """The excerpt with a second TASK run of the task ``gid_sql`` selects, ``_LATER`` ns after its first, plus
    ``statements`` (``{gid}``, ``{start}`` and ``{start2}`` filled in); (db, gid, first start, second start)."""
    gid = sql(L1, gid_sql)[0][0]
    (start,) = sql(L1, "SELECT startNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    fill = {"gid": gid, "start": start, "start2": start + _LATER}
    db = _variant(tmp_path, name,
                  f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
                  f"UPDATE TASK SET startNs = startNs + {_LATER}, endNs = endNs + {_LATER} "
                  "WHERE rowid = (SELECT max(rowid) FROM TASK)",
                  *(s.format(**fill) for s in statements))
    return db, gid, start, start + _LATER


_CUBE_GID = ("SELECT p.globalTaskId FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
             "WHERE s.value = 'aic_mac_time' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1")
# a second PMU set for the task, all zero (a run that did no cube work): as many rows as the first set
_ZERO_SET = ("INSERT INTO TASK_PMU_INFO (globalTaskId, name, value) SELECT globalTaskId, name, 0 FROM TASK_PMU_INFO "
             "WHERE globalTaskId = {gid}")


def _runs(p, gid: int) -> pd.DataFrame:
    kx = p.extra["kernel_extra"]
    sel = (kx["global_task_id"] == gid).to_numpy()
    return pd.DataFrame({"ts": p.kernels["ts"].to_numpy()[sel], "mac": kx["aic_mac_time"].to_numpy()[sel],
                         "cube": cube_mask(p)[sel]}).sort_values("ts", ignore_index=True)


@pytest.mark.parametrize("second_set", [True, False])
def test_replayed_task_without_times_pairs_pmu_sets_by_rank(tmp_path: Path, second_set: bool) -> None:
    """Without timestampNs the k-th run of a globalTaskId takes its k-th PMU set in table order (msprof writes
    a run's rows as it reads it): the zero set written second goes to the second run, which so is no cube task;
    with one set for both runs (a task written once per graph) both take it. Before, only one run got values:
    the second was no cube task, its time moved from Cube to Vector."""
    db, gid, start, start2 = _replayed(tmp_path, "pmu", _CUBE_GID, *([_ZERO_SET] if second_set else []))
    (mac,) = sql(L1, "SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                     "WHERE s.value = 'aic_mac_time' AND p.globalTaskId = ?", (gid,))[0]
    runs = _runs(load_profile(str(db), OPTS), gid)
    assert runs["ts"].tolist() == [start, start2] and mac > 0
    assert runs["mac"].tolist() == ([mac, 0.0] if second_set else [mac, mac])
    assert runs["cube"].tolist() == [True, not second_set]


def test_replayed_task_pmu_sets_go_to_the_run_holding_their_time(tmp_path: Path) -> None:
    """With timestampNs each PMU set belongs to the run whose [start, end] holds its time: the zero set stamped
    inside the second run makes that run no cube task; the first run keeps its values. Other tasks' rows
    (no time here) keep theirs."""
    db, gid, start, start2 = _replayed(
        tmp_path, "stamped", _CUBE_GID, "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs INTEGER",
        "UPDATE TASK_PMU_INFO SET timestampNs = {start} + 1 WHERE globalTaskId = {gid}",
        _ZERO_SET.replace("(globalTaskId, name, value)", "(globalTaskId, name, value, timestampNs)")
                 .replace("name, 0 FROM", "name, 0, {start2} + 1 FROM"))
    (mac,) = sql(L1, "SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                     "WHERE s.value = 'aic_mac_time' AND p.globalTaskId = ?", (gid,))[0]
    p = load_profile(str(db), OPTS)
    runs = _runs(p, gid)
    assert runs["mac"].tolist() == [mac, 0.0]
    assert runs["cube"].tolist() == [True, False]
    clean = load_profile(str(L1), OPTS).extra["kernel_extra"]
    kx = p.extra["kernel_extra"]
    others = kx[kx["global_task_id"] != gid].sort_values("global_task_id", ignore_index=True)
    base = clean[clean["global_task_id"] != gid].sort_values("global_task_id", ignore_index=True)
    pd.testing.assert_frame_equal(others, base)


_WAIT_GID = ("SELECT c.globalTaskId FROM COMMUNICATION_TASK_INFO c JOIN STRING_IDS s ON s.id = c.taskType "
             "WHERE s.value = 'Notify_Wait' ORDER BY c.globalTaskId LIMIT 1")


def test_replayed_communication_task_is_one_task_per_run(tmp_path: Path) -> None:
    """Two runs and two (equal) info rows of one Notify_Wait without timestampNs: each run takes one row, so the
    task counts twice, not four times (a plain join gave n * n rows)."""
    db, gid, start, start2 = _replayed(
        tmp_path, "comm", _WAIT_GID,
        "INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = {gid}")
    opts = build_options(enable_communication_compare=True)[0]
    task = load_profile(str(db), opts).comm.query("lane == 'task'")
    (n,) = sql(L1, "SELECT count(*) FROM COMMUNICATION_TASK_INFO")[0]
    assert len(task) == n + 1
    assert task.loc[task["ts"].isin([start, start2]), "name"].tolist() == ["Notify_Wait"] * 2


def test_replayed_communication_rows_pair_with_runs_by_time(tmp_path: Path) -> None:
    """With timestampNs each info row goes to the run holding its time: the second row, given another opId
    and stamped in the second run, names that run's op; the first run keeps the first row's."""
    db, gid, start, start2 = _replayed(
        tmp_path, "commstamped", _WAIT_GID,
        "ALTER TABLE COMMUNICATION_TASK_INFO ADD COLUMN timestampNs INTEGER",
        "UPDATE COMMUNICATION_TASK_INFO SET timestampNs = (SELECT min(t.startNs) FROM TASK t "
        "WHERE t.globalTaskId = COMMUNICATION_TASK_INFO.globalTaskId)",
        "INSERT INTO COMMUNICATION_TASK_INFO SELECT name, globalTaskId, taskType, planeId, groupName, notifyId, "
        "rdmaType, srcRank, dstRank, transportType, size, dataType, linkType, 9999, {start2} FROM "
        "COMMUNICATION_TASK_INFO WHERE globalTaskId = {gid}")
    (op_id,) = sql(L1, "SELECT opId FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,))[0]
    opts = build_options(enable_communication_compare=True)[0]
    task = load_profile(str(db), opts).comm.query("lane == 'task'")
    (n,) = sql(L1, "SELECT count(*) FROM COMMUNICATION_TASK_INFO")[0]
    assert len(task) == n + 1
    runs = task[task["ts"].isin([start, start2])].sort_values("ts")
    assert runs["op_id"].tolist() == [op_id, 9999] and op_id != 9999


def test_replayed_communication_rows_pair_with_runs_by_rank_in_any_step(tmp_path: Path) -> None:
    """Without timestampNs, a second info row of a replayed Notify_Wait (its own opId, as msprof writes one row per
    run) goes to the second run, also when a step holds only that run: the run's op id is its own row's, not
    the first run's (whose op is not in the step: the task was lost from CommunicationCompare)."""
    db, gid, start, start2 = _replayed(
        tmp_path, "commrank", _WAIT_GID,
        "INSERT INTO COMMUNICATION_TASK_INFO SELECT name, globalTaskId, taskType, planeId, groupName, notifyId, "
        "rdmaType, srcRank, dstRank, transportType, size, dataType, linkType, 9999 FROM COMMUNICATION_TASK_INFO "
        "WHERE globalTaskId = {gid}",
        "INSERT INTO STEP_TIME VALUES (51, {start2} - 1, {start2} + 1000000)")
    (op_id,) = sql(L1, "SELECT opId FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,))[0]
    opts = build_options(enable_communication_compare=True)[0]
    task = load_profile(str(db), opts).comm.query("lane == 'task'")
    runs = task[task["ts"].isin([start, start2])].sort_values("ts")
    assert runs["op_id"].tolist() == [op_id, 9999] and op_id != 9999
    step = load_profile(str(db), opts, step=51).comm.query("lane == 'task'")
    assert step[["ts", "op_id"]].values.tolist() == [[start2, 9999]]


_SECOND_ROW = ("INSERT INTO COMMUNICATION_TASK_INFO SELECT name, globalTaskId, taskType, planeId, groupName, notifyId, "
               "rdmaType, srcRank, dstRank, transportType, size, dataType, linkType, {op}{ts} FROM "
               "COMMUNICATION_TASK_INFO WHERE globalTaskId = {{gid}} AND rowid = (SELECT min(rowid) FROM "
               "COMMUNICATION_TASK_INFO WHERE globalTaskId = {{gid}})")


def _op_ids(db: Path, starts: list[int]) -> list[int]:
    task = load_profile(str(db), build_options(enable_communication_compare=True)[0]).comm.query("lane == 'task'")
    return task[task["ts"].isin(starts)].sort_values("ts")["op_id"].tolist()


def test_info_rows_outnumbering_their_task_runs_are_said(tmp_path: Path) -> None:
    """A second COMMUNICATION_TASK_INFO row of a task TASK holds once (synthetic: the Notify_Wait's row written again
    with opId 9999, as an edited or merged copy could write it) pairs with no run: the one run takes its first row,
    as before, and the spare row, left out, is said. Where every row has its run (the replay tests) nothing is."""
    gid = sql(L1, _WAIT_GID)[0][0]
    db = _variant(tmp_path, "spare", _SECOND_ROW.format(op=9999, ts="").format(gid=gid))
    (op_id,) = sql(L1, "SELECT opId FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,))[0]
    (start,) = sql(L1, "SELECT startNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    assert sql(db, "SELECT count(*) FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,)) == [(2,)]
    opts = build_options(enable_communication_compare=True)[0]
    p = load_profile(str(db), opts)
    assert [w for w in p.warnings if "pair with no TASK run" in w] == [
        f"{db}: 1 COMMUNICATION_TASK_INFO row(s) of a globalTaskId that TASK holds fewer times pair with no TASK run; "
        "left out"]
    (n,) = sql(L1, "SELECT count(*) FROM COMMUNICATION_TASK_INFO")[0]
    task = p.comm.query("lane == 'task'")
    assert len(task) == n and task.loc[task["ts"] == start, "op_id"].tolist() == [op_id]


def test_replayed_rows_without_a_time_fall_back_to_rank(tmp_path: Path) -> None:
    """A repeating info table with a timestampNs column whose cells are NULL: each run falls back to its rank's
    row (the second run the second row, opId 9999) instead of being dropped (the time join dropped every task)."""
    db, gid, start, start2 = _replayed(
        tmp_path, "commnull", _WAIT_GID, "ALTER TABLE COMMUNICATION_TASK_INFO ADD COLUMN timestampNs INTEGER",
        _SECOND_ROW.format(op=9999, ts=", NULL"))
    (op_id,) = sql(L1, "SELECT opId FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,))[0]
    assert _op_ids(db, [start, start2]) == [op_id, 9999]
    (n,) = sql(L1, "SELECT count(*) FROM COMMUNICATION_TASK_INFO")[0]
    opts = build_options(enable_communication_compare=True)[0]
    assert (load_profile(str(db), opts).comm["lane"] == "task").sum() == n + 1


def test_replayed_stamped_row_is_not_taken_again_by_rank(tmp_path: Path) -> None:
    """Rows in another order than the runs: the first row (opId as loaded) stamped inside the second run, the
    second row (opId 9999) without a time. The stamp places the first row; the first run takes the row left
    (9999), not the first row again by its rank (which dropped 9999 and counted the first row twice)."""
    db, gid, start, start2 = _replayed(
        tmp_path, "mixstamp", _WAIT_GID, "ALTER TABLE COMMUNICATION_TASK_INFO ADD COLUMN timestampNs INTEGER",
        "UPDATE COMMUNICATION_TASK_INFO SET timestampNs = {start2} + 1 WHERE globalTaskId = {gid}",
        _SECOND_ROW.format(op=9999, ts=", NULL"))
    (op_id,) = sql(L1, "SELECT opId FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,))[0]
    assert _op_ids(db, [start, start2]) == [9999, op_id]


def test_replayed_run_without_an_end_keeps_its_place(tmp_path: Path) -> None:
    """Three runs (the middle one without an end: no task) and three rows in table order (opIds as loaded,
    8888, 9999): the third run takes the third row; the middle run still counts in the order (it took the
    second row's place before, shifting the third run to 8888)."""
    db, gid, start, start2 = _replayed(
        tmp_path, "untimed", _WAIT_GID, "UPDATE TASK SET endNs = NULL WHERE rowid = (SELECT max(rowid) FROM TASK)",
        "INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid} AND rowid = (SELECT min(rowid) FROM TASK "
        "WHERE globalTaskId = {gid})",
        f"UPDATE TASK SET startNs = startNs + {2 * _LATER}, endNs = endNs + {2 * _LATER} "
        "WHERE rowid = (SELECT max(rowid) FROM TASK)",
        _SECOND_ROW.format(op=8888, ts=""), _SECOND_ROW.format(op=9999, ts=""))
    (op_id,) = sql(L1, "SELECT opId FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?", (gid,))[0]
    assert _op_ids(db, [start, start2, start + 2 * _LATER]) == [op_id, 9999]


def test_replayed_pmu_rank_decides_the_run_in_a_step(tmp_path: Path) -> None:
    """Without timestampNs, a step holding only the second run gives it the second PMU set (the zero set): the
    run's rank is taken among all runs of its globalTaskId, not only the step's."""
    db, gid, start, start2 = _replayed(tmp_path, "pmurank", _CUBE_GID, _ZERO_SET,
                                       "INSERT INTO STEP_TIME VALUES (51, {start2} - 1, {start2} + 1000000)")
    runs = _runs(load_profile(str(db), OPTS, step=51), gid)
    assert runs["ts"].tolist() == [start2]
    assert runs["mac"].tolist() == [0.0] and runs["cube"].tolist() == [False]


def test_replayed_pmu_time_decides_the_run_in_a_step(tmp_path: Path) -> None:
    """With timestampNs, a step holding only the second run gives it the set stamped inside it (the zero set),
    not the first run's: every run of the globalTaskId is looked at, not only the step's."""
    db, gid, start, start2 = _replayed(
        tmp_path, "pmustep", _CUBE_GID, "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs INTEGER",
        "UPDATE TASK_PMU_INFO SET timestampNs = {start} + 1 WHERE globalTaskId = {gid}",
        _ZERO_SET.replace("(globalTaskId, name, value)", "(globalTaskId, name, value, timestampNs)")
                 .replace("name, 0 FROM", "name, 0, {start2} + 1 FROM"),
        "INSERT INTO STEP_TIME VALUES (51, {start2} - 1, {start2} + 1000000)")
    runs = _runs(load_profile(str(db), OPTS, step=51), gid)
    assert runs["ts"].tolist() == [start2]
    assert runs["mac"].tolist() == [0.0] and runs["cube"].tolist() == [False]


def test_mc2_computing_reads_the_db_aiv_total(tmp_path: Path) -> None:
    """TASK_PMU_INFO names the AIV total ``aiv_total_time`` (the level-1 sample's full export does;
    kernel_details.csv renames it ``aiv_time(us)``): the loader reads it as ``aiv_time``, so an MC2 kernel's
    computing part includes its AIV time (the original looks the DB up under the text name and adds 0; see
    test_overall_db's MC2 test). A row under the text name is no DB counter and stays unread."""
    gid = sql(L1, "SELECT globalTaskId FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 1")[0][0]
    new_id = "(SELECT max(id) + 1 FROM STRING_IDS)"
    pmu = "INSERT INTO TASK_PMU_INFO VALUES ({}, (SELECT id FROM STRING_IDS WHERE value = '{}'), {})"
    db = _variant(tmp_path, "aiv", f"INSERT INTO STRING_IDS VALUES ({new_id}, 'aiv_total_time')",
                  f"INSERT INTO STRING_IDS VALUES ({new_id}, 'aiv_time')",
                  pmu.format(gid, "aiv_total_time", 49912.99), pmu.format(gid + 1, "aiv_time", 7))
    kx = load_profile(str(db), OPTS).extra["kernel_extra"]
    assert kx.loc[kx["global_task_id"] == gid, "aiv_time"].tolist() == [49912.99]
    assert kx["aiv_time"].notna().sum() == 1


def test_pytorch_api_before_its_type_column(tmp_path: Path) -> None:
    """torch_npu's DB before August 2024 had no PYTORCH_API.type: ops, task-queue and Python rows shared the
    table, an op the only row with a sequence number, a queue row the only other with a connection id. The
    loader tells them apart so (it refused the DB: "lacks column(s) type"; the original loses every op): ops,
    queue and Python functions equal the typed excerpt's. Without a sequence number either, no ops and a
    warning, the device figures unchanged."""
    opts = build_options(enable_operator_compare=True, enable_memory_compare=True)[0]
    old = _variant(tmp_path, "untyped", "ALTER TABLE PYTORCH_API DROP COLUMN type")
    typed, got = load_profile(str(L1), opts), load_profile(str(old), opts)
    for name in ("ops", "queue", "python_functions"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(typed, name))
    counts = dict(sql(L1, "SELECT type, count(*) FROM PYTORCH_API GROUP BY type"))
    assert (len(got.ops), len(got.queue), len(got.python_functions)) == (counts[50001], counts[50002], counts[50003])
    assert got.has_ops and not got.warnings
    bare = _variant(tmp_path, "bare", "ALTER TABLE PYTORCH_API DROP COLUMN type",
                    "ALTER TABLE PYTORCH_API DROP COLUMN sequenceNumber")
    p = load_profile(str(bare), opts)
    assert not len(p.ops) and not p.has_ops
    assert p.warnings == [f"{bare}: table PYTORCH_API has neither a type nor a sequenceNumber column, so torch ops "
                          "cannot be told from its other rows; no torch ops"]
    pd.testing.assert_frame_equal(p.kernels, typed.kernels)


def _mac(p, gid: int) -> list:
    return _runs(p, gid)["mac"].tolist()


def test_pmu_stamps_count_without_replays(tmp_path: Path) -> None:
    """A task run once with two PMU sets, the first stamped before the run, the second inside it: the run takes
    the one inside, whether or not some other task of the export is replayed (it took the first set unless
    one was)."""
    gid = sql(L1, _CUBE_GID)[0][0]
    (start,) = sql(L1, "SELECT startNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    db = _variant(tmp_path, "outside", "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs INTEGER",
                  f"UPDATE TASK_PMU_INFO SET timestampNs = {start} - 500000000 WHERE globalTaskId = {gid}",
                  _ZERO_SET.replace("(globalTaskId, name, value)", "(globalTaskId, name, value, timestampNs)")
                  .replace("name, 0 FROM", f"name, 0, {start} + 1 FROM").format(gid=gid))
    assert _mac(load_profile(str(db), OPTS), gid) == [0.0]


def test_replayed_pmu_null_value_keeps_its_place(tmp_path: Path) -> None:
    """A NULL counter value of the first run's set is that run's missing value (NaN, counted in the note), not
    a reason to give the first run the second run's value."""
    db, gid, start, start2 = _replayed(
        tmp_path, "pmunull", _CUBE_GID, _ZERO_SET.replace("name, 0 FROM", "name, 7 FROM"),
        "UPDATE TASK_PMU_INFO SET value = NULL WHERE rowid = (SELECT min(p.rowid) FROM TASK_PMU_INFO p JOIN "
        "STRING_IDS s ON s.id = p.name WHERE s.value = 'aic_mac_time' AND p.globalTaskId = {gid})")
    p = load_profile(str(db), OPTS)
    mac = _mac(p, gid)
    assert np.isnan(mac[0]) and mac[1] == 7.0
    assert f"{db}: 1 TASK_PMU_INFO value(s) are not finite numbers; read as missing" in p.warnings


def test_replayed_runs_with_one_start_take_one_pmu_set_each(tmp_path: Path) -> None:
    """Two TASK rows of one task with the same start (a duplicated row): each takes one PMU set by its place,
    as the communication rows do, instead of both taking the first."""
    gid = sql(L1, _CUBE_GID)[0][0]
    db = _variant(tmp_path, "dupstart", f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
                  _ZERO_SET.format(gid=gid))
    mac = sorted(_mac(load_profile(str(db), OPTS), gid))
    (first,) = sql(L1, "SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                       "WHERE s.value = 'aic_mac_time' AND p.globalTaskId = ?", (gid,))[0]
    assert mac == [0.0, first]


def test_pmu_row_without_a_task_is_left_out(tmp_path: Path) -> None:
    """A TASK_PMU_INFO row without a globalTaskId belongs to no task: left out and counted in a note (it refused
    the whole DB), as COMPUTE_TASK_INFO rows without one are."""
    db = _variant(tmp_path, "nullgid", "UPDATE TASK_PMU_INFO SET globalTaskId = NULL WHERE rowid = 1")
    p = load_profile(str(db), OPTS)
    assert f"{db}: 1 TASK_PMU_INFO row(s) have no globalTaskId; left out" in p.warnings
    assert p.extra["kernel_extra"]["aic_total_time"].notna().sum() >= 1


def test_schedule_tasks_are_kernels_but_no_computing(tmp_path: Path) -> None:
    """Newer msprof writes the tasks of AI-CPU HCCL kernels (``*AicpuKernel``) and of the MC2 KFC stream into
    COMMUNICATION_SCHEDULE_TASK_INFO instead of COMPUTE_TASK_INFO (db_assembler.cpp): one compute task of the
    excerpt moved there stays a kernel (KernelCompare and its op's device time as before; they lost it) and
    leaves computing, as msprof's Overlap Analysis does (Computing Time = the union of the other tasks,
    by plain interval arithmetic over SQL rows)."""
    from msprof_compare import compare

    gid = sql(L1, "SELECT c.globalTaskId FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId) "
                  "WHERE t.connectionId >= 0 ORDER BY t.endNs - t.startNs DESC LIMIT 1")[0][0]
    db = _variant(tmp_path, "sched",
                  "CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO (name INTEGER, globalTaskId INTEGER, "
                  "taskType INTEGER, opType INTEGER)",
                  "INSERT INTO COMMUNICATION_SCHEDULE_TASK_INFO SELECT name, globalTaskId, taskType, opType FROM "
                  f"COMPUTE_TASK_INFO WHERE globalTaskId = {gid}",
                  f"DELETE FROM COMPUTE_TASK_INFO WHERE globalTaskId = {gid}")
    opts = build_options(enable_profiling_compare=True, enable_kernel_compare=True)[0]
    got, want = load_profile(str(db), opts), load_profile(str(L1), opts)
    assert len(got.kernels) == len(want.kernels) == 187
    kx = got.extra["kernel_extra"]
    assert kx.loc[kx["schedule"], "global_task_id"].tolist() == [gid]
    # the table as msprof writes it, without inputShapes: no warning of an absent column (there was one)
    assert got.warnings == want.warnings
    pd.testing.assert_frame_equal(got.kernels[["name", "ts", "dur", "connection_id"]],
                                  want.kernels[["name", "ts", "dur", "connection_id"]])
    rows = sql(L1, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
                   "WHERE c.globalTaskId <> ? ORDER BY t.startNs", (gid,))
    union, end = 0, None
    for s, e in rows:
        if end is None or s > end:
            union, end = union + (e - s), e
        elif e > end:
            union, end = union + (e - end), e
    assert db_breakdown(got).computing_ns == union < db_breakdown(want).computing_ns
    r = compare(str(L1), str(db), enable_kernel_compare=True, enable_operator_compare=True, disable_module=True)
    kc = r.sheet("KernelCompare")
    # by kernel type (the schedule table has no input shapes: the moved task's row reads shape N/A)
    by = kc.groupby("Kernel")[["Total Duration(us)", "Total Duration(us).1", "Calls", "Calls.1"]].sum()
    # (each row's total is rounded to 0.01 us: a split row sums to within 0.01)
    assert by["Total Duration(us)"].tolist() == pytest.approx(by["Total Duration(us).1"].tolist(), abs=0.011)
    assert by["Calls"].tolist() == by["Calls.1"].tolist()
    op = r.sheet("OperatorCompareStatistic")
    assert op["Base Device Duration(ms)"].tolist() == op["Comparison Device Duration(ms)"].tolist()


def test_hccl_aiv_kernels_are_no_computing(tmp_path: Path) -> None:
    """HCCL's AIV-mode kernels (``*AivKernel``) stay in COMPUTE_TASK_INFO, but msprof's Overlap Analysis leaves
    tasks named ``*AivKernel`` / ``*AicpuKernel`` out of Computing (overlap_analysis_processor.cpp), which is
    what the text path reads: the renamed task leaves Computing (the union of the other tasks, by plain interval
    arithmetic over SQL rows), and its time not under another task moves to uncovered communication when a
    communication op covers it. It leaves its computing category too (one call and its SQL duration fewer)."""
    # the longest compute task that runs inside a communication op
    gid, s0, e0 = sql(L1, "SELECT c.globalTaskId, t.startNs, t.endNs FROM COMPUTE_TASK_INFO c "
                          "JOIN TASK t USING (globalTaskId) WHERE EXISTS (SELECT 1 FROM COMMUNICATION_OP o "
                          "WHERE o.startNs <= t.startNs AND t.endNs <= o.endNs) "
                          "ORDER BY t.endNs - t.startNs DESC LIMIT 1")[0]
    db = _variant(tmp_path, "aiv", "INSERT INTO STRING_IDS VALUES (990001, 'HcclAllReduceAivKernel')",
                  f"UPDATE COMPUTE_TASK_INFO SET name = 990001 WHERE globalTaskId = {gid}")
    opts = build_options(enable_profiling_compare=True)[0]
    got, want = load_profile(str(db), opts), load_profile(str(L1), opts)
    assert (got.kernels["name"] == "HcclAllReduceAivKernel").sum() == 1
    rows = sql(L1, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
                   "WHERE c.globalTaskId <> ? ORDER BY t.startNs", (gid,))

    def union(iv: list[tuple[int, int]]) -> int:
        total, end = 0, None
        for s, e in sorted(iv):
            if end is None or s > end:
                total, end = total + (e - s), e
            elif e > end:
                total, end = total + (e - end), e
        return total

    others = union(rows)
    covered = union(rows + [(s0, e0)]) - others  # the renamed task's time not under another task
    bd, before = db_breakdown(got), db_breakdown(want)
    assert bd.computing_ns == others == before.computing_ns - covered and covered > 0
    assert bd.uncovered_comm_ns == before.uncovered_comm_ns + covered
    assert bd.e2e_ns == before.e2e_ns
    changed = {k: (before.buckets[k].ns - b.ns, before.buckets[k].count - b.count)
               for k, b in bd.buckets.items() if (b.ns, b.count) != (before.buckets[k].ns, before.buckets[k].count)}
    assert list(changed.values()) == [(e0 - s0, 1)]


def test_hccl_aiv_kernel_streams_stay_compute_streams_for_sdma(tmp_path: Path) -> None:
    """reference-1 §7.3.4: SDMA tasks count on compute streams (those of COMPUTE_TASK_INFO's tasks) that wait on
    events. An HCCL AIV kernel leaves computing, not the compute streams: with the task types named as the rule
    expects (SDMA_SQE / EVENT_WAIT_SQE) and the HCCL stream's task 110 listed as an AIV kernel, the SDMA row is
    the SQL count and sum of that rule, as with any other name for the task."""
    edits = ("UPDATE STRING_IDS SET value = 'SDMA_SQE' WHERE value = 'SDMA'",
             "UPDATE STRING_IDS SET value = 'EVENT_WAIT_SQE' WHERE value = 'EVENT_WAIT'")

    def listed(name: str) -> Path:
        return _variant(tmp_path, name, *edits, f"INSERT INTO STRING_IDS VALUES (990001, '{name}')",
                        "INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId) VALUES (990001, 110)")

    aiv, plain = listed("HcclAllReduceAivKernel"), listed("PlainKernel")
    typ = "(SELECT value FROM STRING_IDS WHERE id = t.taskType)"
    wait = {r[0] for r in sql(aiv, f"SELECT DISTINCT streamId FROM TASK t WHERE {typ} = 'EVENT_WAIT_SQE'")}
    comp = {r[0] for r in sql(aiv, "SELECT DISTINCT t.streamId FROM TASK t "
                                   "JOIN COMPUTE_TASK_INFO USING (globalTaskId)")}
    (hccl_stream,) = sql(aiv, "SELECT streamId FROM TASK WHERE globalTaskId = 110")[0]
    assert hccl_stream in wait & comp
    n, ns = sql(aiv, f"SELECT count(*), sum(endNs - startNs) FROM TASK t WHERE {typ} = 'SDMA_SQE' AND streamId IN "
                     f"({','.join(map(str, wait & comp))})")[0]
    assert n > 0
    for db in (aiv, plain):
        bd = db_breakdown(load_profile(str(db), build_options(enable_profiling_compare=True)[0]))
        assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (ns, n)


def test_schedule_tasks_without_a_compute_table(tmp_path: Path) -> None:
    """msprof writes COMPUTE_TASK_INFO only when it has rows: a run whose only kernels are AI-CPU HCCL ones has
    the schedule table alone. Its tasks are still kernels (no computing), with the missing-table warning."""
    db = _variant(tmp_path, "schedonly",
                  "CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO AS SELECT name, globalTaskId, taskType, opType "
                  "FROM COMPUTE_TASK_INFO", "DROP TABLE COMPUTE_TASK_INFO")
    (n,) = sql(L1, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)")[0]
    p = load_profile(str(db), build_options(enable_profiling_compare=True)[0])
    assert len(p.kernels) == n == 187 and p.extra["kernel_extra"]["schedule"].all()
    assert f"{db}: no COMPUTE_TASK_INFO table; no computing tasks" in p.warnings
    assert db_breakdown(p).computing_ns == 0


def test_replayed_pmu_run_sharing_a_start_with_a_run_without_an_end(tmp_path: Path) -> None:
    """Two TASK rows of one task with one start, the first without an end (no task): the loaded run is the
    second of its id, so it takes the second PMU set (the zero set), not the first run's."""
    gid = sql(L1, _CUBE_GID)[0][0]
    db = _variant(tmp_path, "dupnoend", f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
                  "UPDATE TASK SET endNs = NULL WHERE rowid = "
                  f"(SELECT min(rowid) FROM TASK WHERE globalTaskId = {gid})",
                  _ZERO_SET.format(gid=gid))
    assert _mac(load_profile(str(db), OPTS), gid) == [0.0]


def test_schedule_only_export_with_replays(tmp_path: Path) -> None:
    """A schedule table alone (no COMPUTE_TASK_INFO) in an export whose TASK repeats a globalTaskId: the PMU
    pairing looks its runs up in the tables the kernels came from (it queried COMPUTE_TASK_INFO: "no such
    table", the whole DB refused). Both runs are kernels."""
    gid = sql(L1, _CUBE_GID)[0][0]
    db = _variant(tmp_path, "schedreplay",
                  "CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO AS SELECT name, globalTaskId, taskType, opType "
                  "FROM COMPUTE_TASK_INFO", "DROP TABLE COMPUTE_TASK_INFO",
                  f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
                  f"UPDATE TASK SET startNs = startNs + {_LATER}, endNs = endNs + {_LATER} "
                  "WHERE rowid = (SELECT max(rowid) FROM TASK)")
    p = load_profile(str(db), OPTS)
    assert len(p.kernels) == 188 and p.extra["kernel_extra"]["schedule"].all()
    assert (p.extra["kernel_extra"]["global_task_id"] == gid).sum() == 2


def test_real_db_named_as_mindspore_categorises_without_torch_ops(samples: Path, tmp_path: Path) -> None:
    """reference-1 §6 / §7: an ``ascend_mindspore_profiler_*.db`` is read without PYTORCH_API (no torch op covers a
    kernel, so §3.7 step 4 never applies) and without the memory pages. The real level-1 DB (msinsight
    ``db/level1/rank0_ascend_pt``) copied unchanged under that name into an ``*_ascend_ms`` directory: every
    compute task is categorised by its opType fallback, its PMU cube test (TASK_PMU_INFO has rows: cube iff
    aic_total_time or aic_mac_time is non-zero) and its name, as plain SQL over the file gives:
    Conv2D forward (opType starts with conv, no backward word): 5 tasks; Conv2DBackprop*: 9; MatMul*: 9 (all Cube,
    no Matmul (Vector) row, which the PyTorch-named file has through aten::matmul); no other cube task; names
    holding cast/transdata/transpose: 67 Vector (Trans); the other 86 Vector (No Trans), 11 TensorMove SDMA."""
    src = (samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
           / "ascend_pytorch_profiler_0.db")
    out = tmp_path / "host_1_20250301120000001_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    db = out / "ascend_mindspore_profiler_0.db"
    shutil.copyfile(src, db)
    rows = sql(db, "SELECT n.value, o.value, t.endNs - t.startNs, "
                   "(SELECT count(*) FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                   " WHERE p.globalTaskId = c.globalTaskId AND s.value IN ('aic_total_time', 'aic_mac_time') "
                   " AND p.value != 0) "
                   "FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId "
                   "JOIN STRING_IDS n ON n.id = c.name JOIN STRING_IDS o ON o.id = c.opType")
    buckets: dict[str, list[int]] = {}
    for name, op_type, dur_ns, cube_pmu in rows:  # reference-1 §3.7 steps 1-3, 5-8 (no step 4: no torch op)
        low, typ = name.lower(), op_type.lower()
        if low.startswith("aclnninplacecopy") and "tensormove" in low:
            key = "\tSDMA (Tensor Move)"
        elif typ.startswith("conv"):
            key = "\t\tConv (Backward) (Cube)" if any(w in typ for w in ("bwd", "backward", "back", "grad")) \
                else "\t\tConv (Forward) (Cube)"
        elif "matmul" in typ:
            key = "\t\tMatmul (Cube)"
        elif cube_pmu:
            key = "\tCube"
        elif any(w in low for w in ("cast", "transdata", "transpose")):
            key = "\t\tVector (Trans)"
        else:
            key = "\t\tVector (No Trans)"
        buckets.setdefault(key, []).append(dur_ns)
    assert {k: len(v) for k, v in buckets.items()} == {
        "\t\tConv (Forward) (Cube)": 5, "\t\tConv (Backward) (Cube)": 9, "\t\tMatmul (Cube)": 9,
        "\t\tVector (Trans)": 67, "\t\tVector (No Trans)": 86, "\tSDMA (Tensor Move)": 11}
    from msprof_compare.api import compare

    res = compare(str(out.parent), str(out.parent), enable_profiling_compare=True)
    om = res.sheet("OverallMetrics").set_index("Index")
    for key, durs in buckets.items():
        assert (om.loc[key, "Duration(ms)"], om.loc[key, "Number"]) == (pytest.approx(sum(durs) / 1e6, abs=1e-9),
                                                                         len(durs)), key
    assert "\t\tMatmul (Vector)" not in om.index and "\tCube" not in om.index
    assert om.loc["Computing Time", "Number"] == len(rows) == 187
    every = compare(str(out.parent), str(out.parent))  # no torch op, no memory page: the pages MindSpore has
    assert every.sheet_names == ["Summary", "OverallMetrics", "CommunicationCompare", "KernelCompare"]


def test_in_pairs_selects_what_in_selects() -> None:
    """``_in_pairs`` (an IN list split into lists of two, which SQLite tests by comparison instead of a temporary
    table) selects the rows ``IN`` does, for 1 to 5 values, over cells of every storage class and both column
    affinities the exports use (synthetic rows)."""
    from msprof_compare.loaders.ascend_db import _in_pairs

    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (i INTEGER, n)")
    cells = [1, 2, 3, 4, 5, 6, None, "2", "x", 3.0, 4.5, b"\x05", -1]
    con.executemany("INSERT INTO t VALUES (?, ?)", [(v, v) for v in cells])
    for col in ("i", "n"):
        for k in range(1, 6):
            params = (5, "2", 3, 1, 4)[:k]
            marks = ",".join("?" * k)
            want = con.execute(f"SELECT rowid FROM t WHERE {col} IN ({marks}) AND rowid > 0", params).fetchall()
            got = con.execute(f"SELECT rowid FROM t WHERE ({_in_pairs(col, k)}) AND rowid > 0", params).fetchall()
            assert got == want and (k < 2 or want)
    con.close()


def test_fwdbwd_flows_rules_on_synthetic_links() -> None:
    """The fwdbwd flows (``_fwdbwd_flows``, numpy since session 33) by their rules, on synthetic op links: an id
    held by two or more ops and by no compute task starts at its earliest op (a tie at the lower op row) and
    ends at every other op; an (id, op) link listed twice counts once; an id of one op, of a task, or -1 gives
    none. Ordered by id, then by the end's start. Expected rows written out by hand."""
    from msprof_compare.loaders.ascend_db import _fwdbwd_flows
    from msprof_compare.model import Profile, frame

    ops = frame("ops", {"name": np.array(list("abcdefg"), dtype=object), "ts": np.array([50, 10, 30, 10, 70, 5, 9]),
                        "dur": np.ones(7, np.int64), "pid": np.arange(100, 107), "tid": np.arange(200, 207)})
    kernels = frame("kernels", {"name": np.array(["k"], dtype=object), "ts": np.array([1]), "dur": np.array([1]),
                                "connection_id": np.array([8])})
    links = [(9, 0), (9, 1), (9, 2), (9, 1), (4, 3), (4, 1), (7, 4), (8, 5), (8, 6), (-1, 5), (-1, 6)]
    oc = pd.DataFrame({"op_row": [r for _, r in links], "connection_id": [c for c, _ in links]})
    p = Profile(path="x", kind="NPU", source="ascend_db", ops=ops, kernels=kernels, extra={"op_connections": oc})
    got = _fwdbwd_flows(p)
    # id 4: ops 1 and 3 both start at 10, op 1 starts; id 9: op 1 (10) starts, op 2 (30) then op 0 (50) end
    want = [("4", 10, 101, 201, 10, 103, 203), ("9", 10, 101, 201, 30, 102, 202), ("9", 10, 101, 201, 50, 100, 200)]
    cols = ["id", "s_ts", "s_pid", "s_tid", "f_ts", "f_pid", "f_tid"]
    assert [tuple(r) for r in got[cols].itertuples(index=False)] == want
    assert set(got["cat"]) == {"fwdbwd"}


def test_msprof_2025_table_layouts_read_alike(tmp_path: Path) -> None:
    """COMMUNICATION_OP, COMPUTE_TASK_INFO and TASK as msprof's later exports lay them out (the schema of
    msinsight's server/src/test/test_data/full_db/msprof_0.db @ 4e16fca1f118: COMMUNICATION_OP without relay,
    retry, dataType, algType and count but with opConnectionId; COMPUTE_TASK_INFO without attrInfo; TASK with
    globalTaskId after modelId): the columns read are by name, so every table the loader fills is the same."""
    (tmp_path / "v").mkdir()
    layouts = {
        "COMMUNICATION_OP": "opName, startNs, endNs, connectionId, groupName, opId, waitNs, NULL AS opConnectionId, "
                            "opType",
        "COMPUTE_TASK_INFO": "name, globalTaskId, blockDim, mixBlockDim, taskType, opType, inputFormats, "
                             "inputDataTypes, inputShapes, outputFormats, outputDataTypes, outputShapes, waitNs",
        "TASK": "startNs, endNs, deviceId, connectionId, globalPid, taskType, contextId, streamId, taskId, modelId, "
                "globalTaskId, depth",
    }
    statements = [s for t, cols in layouts.items() for s in (
        f"ALTER TABLE {t} RENAME TO {t}_OLD", f"CREATE TABLE {t} AS SELECT {cols} FROM {t}_OLD", f"DROP TABLE {t}_OLD")]
    db = edited_copy(L1, _db(tmp_path / "v"), *statements)
    assert "relay" not in {r[1] for r in sql(db, "PRAGMA table_info(COMMUNICATION_OP)")}
    assert sql(db, "SELECT count(*) FROM COMMUNICATION_OP")[0][0] > 0
    opts = build_options(enable_communication_compare=True, enable_kernel_compare=True,
                         enable_memory_compare=True)[0]
    want, got = load_profile(str(L1), opts), load_profile(str(db), opts)
    assert min(len(want.comm), len(want.kernels), len(want.kernel_details)) > 0
    for table in ("kernels", "kernel_details", "comm", "ops", "operator_memory"):
        pd.testing.assert_frame_equal(getattr(got, table), getattr(want, table), obj=table)
    assert got.warnings == [w.replace(str(L1), str(db)) for w in want.warnings]
