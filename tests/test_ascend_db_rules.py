"""Rules of the SQLite DB loader and its time breakdown that a mutation audit found untested: inclusive step
bounds of every query, which column a field comes from, aggregates, and the MC2 / SDMA / cube rules.

Every input is the level-1 excerpt (tests/data/db/l1) or a copy of it edited in tmp_path by SQL where the case
is absent from the samples (said in each docstring; one test also copies the level-1 sample's
profiler_info_0.json); expected values come from plain SQL on the same file, and plain Python where a figure
needs interval arithmetic.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from cliutil import error_lines, run_inproc
from dbutil import edited_copy, sql, string_id
from frameutil import npu_records
from spans import minus, union

from msprof_compare import api
from msprof_compare.compare.breakdown_db import cube_mask, db_breakdown, flow_starts
from msprof_compare.errors import ProfileError, StepError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
OPTS, _ = build_options()
STEP = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
COMPUTE = "FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"

#: Task types that are kernels (reference-1 §7), in SQL: the other device tasks (SDMA, events, ...) bound E2E
KERNEL_TYPES = ("('KERNEL_AICORE', 'KERNEL_AIVEC', 'FFTS_PLUS', 'KERNEL_MIX_AIC', 'KERNEL_MIX_AIV', "
                "'PROFILING_ENABLE', 'PROFILING_DISABLE')")


def _db(tmp_path: Path, *statements: str, folder: str = "") -> Path:
    """An edited copy of the level-1 excerpt (the loader reads the DB family from the file name)."""
    where = tmp_path / folder if folder else tmp_path
    where.mkdir(parents=True, exist_ok=True)
    return edited_copy(L1, where / "ascend_pytorch_profiler_0.db", *statements)


# --------------------------------------------------------------------------- opening, PMU stamps, older schemas


def test_empty_write_ahead_log_leaves_the_database_immutable(tmp_path: Path) -> None:
    """Only a -wal file holding changes makes the loader open the database for SQLite's log reading (which creates
    a -shm file beside it, and fails in a read-only folder); an empty one (a writer's log after a checkpoint) holds
    none: the excerpt switched to WAL mode beside an empty -wal file (synthetic) loads with nothing created."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, db)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    con.close()
    (tmp_path / "ascend_pytorch_profiler_0.db-wal").write_bytes(b"")
    assert len(load_profile(str(db), OPTS).kernels) == 187
    assert sorted(os.listdir(tmp_path)) == ["ascend_pytorch_profiler_0.db", "ascend_pytorch_profiler_0.db-wal"]


@pytest.mark.parametrize("log", [b"garbage" * 100, (0x377F0682).to_bytes(4, "big") + (3007000).to_bytes(4, "big")
                                 + (4096).to_bytes(4, "big") + bytes(20)], ids=["junk", "header-only"])
def test_write_ahead_log_without_frames_leaves_the_database_immutable(tmp_path: Path, log: bytes) -> None:
    """A -wal file that is no log (junk) or a log header without frames holds no change, and SQLite ignores
    it: the excerpt switched to WAL mode beside one (synthetic) loads immutable, with no -shm file created (a
    read-only folder refused it as "not a readable SQLite database")."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, db)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    con.close()
    (tmp_path / "ascend_pytorch_profiler_0.db-wal").write_bytes(log)
    assert len(load_profile(str(db), OPTS).kernels) == 187
    assert sorted(os.listdir(tmp_path)) == ["ascend_pytorch_profiler_0.db", "ascend_pytorch_profiler_0.db-wal"]


def test_journal_of_an_interrupted_write_is_said(tmp_path: Path) -> None:
    """A rollback journal holding pages (a write a crash interrupted: synthetic, a child process shifts every TASK
    start by 1 us in a transaction whose pages spill to the file, then exits without committing) means the file
    holds part of that write, which the immutable open reads as it is: 210 tasks ended before they started, with
    no word of the cause. Now said. SQLite undoes the write on an open that may write: a copy so opened loads as
    the excerpt does, without the note."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, db)
    crash = ("import os, sqlite3, sys\n"
             "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
             "c.execute('PRAGMA cache_size=1'); c.execute('BEGIN')\n"
             "c.execute('UPDATE TASK SET startNs = startNs + 1000')\n"
             "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", crash, str(db)], check=True)
    assert (tmp_path / "ascend_pytorch_profiler_0.db-journal").read_bytes()[:8] == bytes.fromhex("d9d505f920a163d7")
    p = load_profile(str(db), OPTS)
    assert p.warnings[0] == (f"{db}: ascend_pytorch_profiler_0.db-journal beside it holds pages of a write in "
                             "progress or interrupted (SQLite undoes such a write when it opens the file to write); "
                             "read as the file holds it, which may include part of that write: compare a copy taken "
                             "once the profiler has finished")
    rolled = tmp_path / "rolled"
    rolled.mkdir()
    for name in ("ascend_pytorch_profiler_0.db", "ascend_pytorch_profiler_0.db-journal"):
        shutil.copyfile(tmp_path / name, rolled / name)
    con = sqlite3.connect(rolled / "ascend_pytorch_profiler_0.db")
    assert con.execute("SELECT count(*) FROM TASK").fetchone() == (552,)  # the read rolls the write back
    con.close()
    assert not (rolled / "ascend_pytorch_profiler_0.db-journal").exists()
    got, clean = load_profile(str(rolled / "ascend_pytorch_profiler_0.db"), OPTS), load_profile(str(L1), OPTS)
    assert got.warnings == clean.warnings == []
    pd.testing.assert_frame_equal(got.kernels, clean.kernels)


def test_pmu_set_stamped_at_the_end_of_a_run_belongs_to_it(tmp_path: Path) -> None:
    """A run's [start, end] is closed: the excerpt's first cube task (aic_mac_time > 0) given a second TASK run 1 s
    later, its PMU set stamped exactly at that run's end and a second, all-zero set without a stamp (synthetic):
    the stamped set is the second run's, the zero set (the one no stamp placed) the first run's."""
    (gid, mac) = sql(L1, "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value = 'aic_mac_time' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1")[0]
    (start, end) = sql(L1, "SELECT startNs, endNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    later = 10**9
    db = _db(tmp_path, f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
             f"UPDATE TASK SET startNs = startNs + {later}, endNs = endNs + {later} "
             "WHERE rowid = (SELECT max(rowid) FROM TASK)",
             "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs INTEGER",
             f"UPDATE TASK_PMU_INFO SET timestampNs = {end + later} WHERE globalTaskId = {gid}",
             "INSERT INTO TASK_PMU_INFO (globalTaskId, name, value) SELECT globalTaskId, name, 0 FROM TASK_PMU_INFO "
             f"WHERE globalTaskId = {gid}")
    p = load_profile(str(db), OPTS)
    sel = (p.extra["kernel_extra"]["global_task_id"] == gid).to_numpy()
    runs = sorted(zip(p.kernels["ts"].to_numpy()[sel].tolist(),
                      p.extra["kernel_extra"]["aic_mac_time"].to_numpy()[sel].tolist(), strict=True))
    assert runs == [(start, 0.0), (start + later, mac)] and mac > 0


@pytest.mark.skipif(sqlite3.sqlite_version_info < (3, 35), reason="ALTER TABLE DROP COLUMN needs SQLite 3.35")
def test_task_table_without_a_task_type_has_no_c_core_sqe_tasks(tmp_path: Path) -> None:
    """C_CORE_SQE tasks are TASK rows of that taskType; a TASK table without the column (dropped from the excerpt,
    whose STRING_IDS is given the text C_CORE_SQE: synthetic) has none, and the load does not fail on the
    missing column where no time breakdown is made (with one, the absent column is an error: test_db_schema); the
    absent column is said."""
    db = _db(tmp_path, "INSERT INTO STRING_IDS VALUES ((SELECT max(id) + 1 FROM STRING_IDS), 'C_CORE_SQE')",
             "ALTER TABLE TASK DROP COLUMN taskType")
    p = load_profile(str(db), build_options(enable_operator_compare=True)[0])
    assert len(p.extra["c_core_sqe"]) == 0 and len(p.kernels) == 187
    assert (f"{db}: table TASK lacks column(s) taskType; read as missing (NULL) in every row: those tasks have no "
            "type (the E2E span keeps them; SDMA Time, the event-wait streams and the cube-kernel rule pass them "
            "over)") in p.warnings


# --------------------------------------------------------------------------- steps


def test_task_starting_at_step_start_takes_that_step_id(tmp_path: Path) -> None:
    """The step range is inclusive at its start too: with STEP_TIME 50 starting exactly at the first compute
    task's start, every compute task (all 187 start inside [start, end], by SQL) carries Step Id 50 in
    kernel_details; a half-open lookup left the first one without a step."""
    (first,) = sql(L1, f"SELECT min(t.startNs) {COMPUTE}")[0]
    db = _db(tmp_path, f"UPDATE STEP_TIME SET startNs = {first} WHERE id = 50")
    (inside,) = sql(db, f"SELECT count(*) {COMPUTE} WHERE t.startNs BETWEEN {first} AND {STEP[1]}")[0]
    assert inside == 187
    assert load_profile(str(db), OPTS).kernel_details["Step Id"].tolist() == ["50"] * 187


def test_a_step_load_labels_every_kernel_with_the_step_asked_for(tmp_path: Path) -> None:
    """With a step, every kernel loaded is that step's, even where another STEP_TIME row overlaps it: a
    synthetic step 51 from the middle of step 50 to past its end (no sample has overlapping steps). Its
    kernels were labelled 51 by start time, and KernelCompare of step 50 then dropped them."""
    start, end = STEP
    mid = (start + end) // 2
    db = _db(tmp_path, f"INSERT INTO STEP_TIME VALUES (51, {mid}, {end + 1000})")
    (n,) = sql(db, f"SELECT count(*) {COMPUTE} WHERE t.startNs BETWEEN {start} AND {end}")[0]
    (later,) = sql(db, f"SELECT count(*) {COMPUTE} WHERE t.startNs BETWEEN {mid} AND {end}")[0]
    assert n == 187 and later > 0
    p = load_profile(str(db), OPTS, step=50)
    assert p.kernel_details["Step Id"].tolist() == ["50"] * n
    res = api.compare(str(db), str(db), enable_kernel_compare=True, base_step=50, comparison_step=50)
    sheet = res.sheet("KernelCompare")
    assert int(sheet["Calls"].sum()) == n


def test_repeated_step_ids_are_listed_in_table_order(tmp_path: Path) -> None:
    """A step id held twice keeps its first row, and the step list of the error keeps the table order (as it
    does without repeats): rows 50, 49, 49 (49 and the repeat added here) list "50, 49", not by id."""
    start, end = STEP
    db = _db(tmp_path, f"INSERT INTO STEP_TIME VALUES (49, {start - 100}, {start - 10})",
             f"INSERT INTO STEP_TIME VALUES (49, {start - 90}, {start - 20})")
    order = [i for (i,) in sql(db, "SELECT id FROM STEP_TIME GROUP BY id ORDER BY min(rowid)")]
    assert order == [50, 49]
    with pytest.raises(StepError, match=r"please choose from the valid steps: 50, 49$"):
        load_profile(str(db), OPTS, step=7)


def test_step_row_without_an_id_is_no_step(tmp_path: Path) -> None:
    """A STEP_TIME row with a NULL id (its times present) is no step, said in one warning, as a row without a
    time is; reading it as an integer id stopped the load. Synthetic: such a row added to the excerpt."""
    start, end = STEP
    db = _db(tmp_path, f"INSERT INTO STEP_TIME VALUES (NULL, {start}, {end})")
    p = load_profile(str(db), OPTS, step=50)
    assert f"{db}: 1 STEP_TIME row(s) lack an id, a start or an end; they are no steps" in p.warnings
    assert p.extra["steps"]["id"].tolist() == [50]
    assert len(p.kernels) == 187


@pytest.mark.parametrize("start", [0, -5, -(2**63)])
def test_step_row_starting_at_zero_is_no_step(tmp_path: Path, start: int) -> None:
    """A STEP_TIME startNs of 0 (or below) of an export timed in epoch ns is a damaged time, as a NULL one: read as
    a time, step 51 (ending where step 50 ends) spanned every task before its end, step 50's 187 computing tasks
    (SQL) with it, and took them from step 50 in Step Id, unsaid. A step over a week long (the bound of any
    duration) is no step now, named in one warning; step 50 loads as before. Synthetic: such a row added to the
    excerpt (int64's least: the length is taken without a wrap)."""
    s50, e50 = STEP
    db = _db(tmp_path, f"INSERT INTO STEP_TIME VALUES (51, {start}, {e50})")
    (n,), = sql(db, f"SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                    f"WHERE t.startNs BETWEEN {s50} AND {e50}")
    p = load_profile(str(db), OPTS, step=50)
    assert [w for w in p.warnings if "STEP_TIME" in w] == [
        f"{db}: STEP_TIME step(s) 51 last over a week (a startNs of 0, or another damaged time?); they are no steps"]
    assert p.extra["steps"]["id"].tolist() == [50] and len(p.kernels) == n == 187
    with pytest.raises(StepError, match=r"Invalid Step Id: 51, please choose from the valid steps: 50$"):
        load_profile(str(db), OPTS, step=51)


def test_step_notes_name_a_few_ids_of_many(tmp_path: Path) -> None:
    """Twelve STEP_TIME rows starting at 0 (ids 51 to 62, each ending where step 50 ends; synthetic, added to the
    excerpt): the note named every id, one id a row of a damaged table; it names their run as a range now, as the
    refusal of an absent step lists the valid ones ("51-62", where it read "51, 52, ..., 58, ... (12 in all)").
    Step 50 loads as before."""
    _, e50 = STEP
    db = _db(tmp_path, *(f"INSERT INTO STEP_TIME VALUES ({i}, 0, {e50})" for i in range(51, 63)))
    p = load_profile(str(db), OPTS, step=50)
    assert [w for w in p.warnings if "STEP_TIME" in w] == [
        f"{db}: STEP_TIME step(s) 51-62 last over a week (a startNs of 0, or another damaged time?); they are no "
        "steps"]
    assert p.extra["steps"]["id"].tolist() == [50]


def test_step_notes_name_a_dozen_pieces_of_many(tmp_path: Path) -> None:
    """Fifteen steps of odd ids 51 to 79 (no run to shorten; synthetic rows added to the excerpt) in each of the
    notes that name steps: every note names 11 ids, "...", the last and the count, where the inverted and the
    duplicated steps' notes named 8 and the overlap note every id. Written out by hand: 51, 53, ..., 71, ..., 79."""
    s50, e50 = STEP
    odd = range(51, 80, 2)
    named = "51, 53, 55, 57, 59, 61, 63, 65, 67, 69, 71, ..., 79 (15 in all)"
    for n, (rows, words) in enumerate((
            ([f"({i}, {e50}, {s50})" for i in odd], "end before they start; no data lies in them"),
            ([f"({i}, {e50 + 10 * i}, {e50 + 10 * i + 5})" for i in odd for _ in (0, 1)],
             "more than once; the first row of each is used"),
            ([f"({i}, {s50 + i}, {s50 + i + 1})" for i in odd],
             "start before an earlier step ends; a task in two steps is in each when a step is asked for, and "
             "counted once without one"))):
        db = _db(tmp_path, f"INSERT INTO STEP_TIME VALUES {', '.join(rows)}", folder=str(n))
        said = [w for w in load_profile(str(db), OPTS).warnings if "STEP_TIME" in w]
        holds = "holds " if "more than once" in words else ""
        assert said == [f"{db}: STEP_TIME {holds}step(s) {named} {words}"], said


def _step_end_at(tmp_path: Path, end: int) -> Path:
    return _db(tmp_path, f"UPDATE STEP_TIME SET endNs = {end} WHERE id = 50")


def test_communication_op_starting_at_step_end_belongs_to_the_step(tmp_path: Path) -> None:
    """reference-1 §7.1: COMMUNICATION_OP rows are kept by start in [step start, step end], inclusive: step 50
    cut to end where the excerpt's last communication op starts keeps all 4 ops (SQL BETWEEN)."""
    (last,) = sql(L1, "SELECT max(startNs) FROM COMMUNICATION_OP")[0]
    db = _step_end_at(tmp_path, last)
    want = sql(db, "SELECT startNs, endNs - startNs FROM COMMUNICATION_OP WHERE startNs BETWEEN ? AND ? "
                   "ORDER BY startNs", (STEP[0], last))
    assert len(want) == 4
    ops = load_profile(str(db), OPTS, step=50).comm.query("lane == 'op'")
    assert list(zip(ops["ts"].tolist(), ops["dur"].tolist(), strict=True)) == want


def test_torch_op_starting_at_step_end_belongs_to_the_step(tmp_path: Path) -> None:
    """PYTORCH_API rows (startNs stored as TEXT) are kept by start in the inclusive step range: step 50 cut to
    end at the start of the 100th torch op keeps 100 ops."""
    (t100,) = sql(L1, "SELECT CAST(startNs AS INTEGER) FROM PYTORCH_API WHERE type = 50001 "
                      "ORDER BY CAST(startNs AS INTEGER) LIMIT 1 OFFSET 99")[0]
    db = _step_end_at(tmp_path, t100)
    (n,) = sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001 AND CAST(startNs AS INTEGER) "
                   "BETWEEN ? AND ?", (STEP[0], t100))[0]
    assert n >= 100  # equal starts may add a few
    ops = load_profile(str(db), OPTS, step=50).ops
    assert len(ops) == n and ops["ts"].max() == t100


def test_memory_reading_at_step_end_counts_in_mem_usage(tmp_path: Path) -> None:
    """MEMORY_RECORD readings are kept by timestamp in the inclusive step range: step 50 cut to end at the
    excerpt's first reading (its 20 rows all hold 1600913408 bytes reserved) still has that peak, 1.49 GB."""
    (first,) = sql(L1, "SELECT min(timestamp) FROM MEMORY_RECORD")[0]
    db = _step_end_at(tmp_path, first)
    (peak,) = sql(db, "SELECT max(totalReserved) FROM MEMORY_RECORD WHERE timestamp BETWEEN ? AND ?",
                  (STEP[0], first))[0]
    assert peak == 1600913408
    p = load_profile(str(db), build_options(enable_profiling_compare=True)[0], step=50)
    assert p.extra["memory_peak_bytes"] == peak
    assert db_breakdown(p).memory_gb == pytest.approx(peak / 1024**3)


def test_memory_reading_outside_the_step_is_left_out(tmp_path: Path) -> None:
    """With a step, Mem Usage is the peak of the step's readings alone: a reading of 2 GiB (2147483648 bytes)
    added 1 ns before step 50 starts (synthetic) leaves step 50's peak at the excerpt's 1600913408 bytes, and is
    the peak of the whole profile (no step)."""
    db = _db(tmp_path, f"INSERT INTO MEMORY_RECORD (component, timestamp, totalReserved) "
                       f"VALUES (0, {STEP[0] - 1}, {2**31})")
    opts = build_options(enable_profiling_compare=True)[0]
    assert load_profile(str(db), opts, step=50).extra["memory_peak_bytes"] == 1600913408
    assert load_profile(str(db), opts).extra["memory_peak_bytes"] == 2**31


def test_operator_memory_blocks_alive_at_the_step_bounds(tmp_path: Path) -> None:
    """OP_MEMORY blocks of a step: allocated at or before its end and released at or after its start (both
    bounds inclusive). Step 50 set to [first release, last allocation] of the excerpt keeps the block released
    at the start and the one allocated at the end."""
    (lo,) = sql(L1, "SELECT min(releaseTime) FROM OP_MEMORY")[0]
    (hi,) = sql(L1, "SELECT max(allocationTime) FROM OP_MEMORY")[0]
    db = _db(tmp_path, f"UPDATE STEP_TIME SET startNs = {lo}, endNs = {hi} WHERE id = 50")
    want = sorted(sql(db, "SELECT allocationTime, COALESCE(releaseTime, 0) FROM OP_MEMORY WHERE allocationTime <= ? "
                          "AND (releaseTime IS NULL OR releaseTime >= ?)", (hi, lo)))
    assert (hi, sql(db, "SELECT releaseTime FROM OP_MEMORY WHERE allocationTime = ?", (hi,))[0][0]) in want
    assert any(r == lo for _, r in want)
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0], step=50).operator_memory
    assert sorted(zip(om["alloc_ns"].tolist(), om["release_ns"].tolist(), strict=True)) == want


def test_block_with_release_time_zero_is_alive_in_a_later_step(tmp_path: Path) -> None:
    """A release time of 0 is "never released", as NULL is: such a block stays alive in every later step.
    Synthetic: the excerpt's 24 never-released blocks (NULL) written with 0, and step 50 starting after
    every allocation."""
    (hi,) = sql(L1, "SELECT max(allocationTime) FROM OP_MEMORY")[0]
    db = _db(tmp_path, "UPDATE OP_MEMORY SET releaseTime = 0 WHERE releaseTime IS NULL",
             f"UPDATE STEP_TIME SET startNs = {hi + 1} WHERE id = 50")
    (zero,) = sql(db, "SELECT count(*) FROM OP_MEMORY WHERE releaseTime = 0")[0]
    (later,) = sql(db, "SELECT count(*) FROM OP_MEMORY WHERE releaseTime > ?", (hi,))[0]
    assert zero == 24
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0], step=50).operator_memory
    assert len(om) == zero + later
    assert int((om["release_ns"] == 0).sum()) == zero and set(om.loc[om["release_ns"] == 0, "Release Time(us)"]) == {""}


def test_operator_memory_row_without_a_name_gets_no_cann_mark(tmp_path: Path) -> None:
    """A block whose name is NULL reads as "" and is no CANN node: the ``cann::`` mark (which moves a block to
    its launch) is for names no torch op has, not for a missing one. Synthetic: one OP_MEMORY name set NULL."""
    (first,) = sql(L1, "SELECT min(allocationTime) FROM OP_MEMORY")[0]
    db = _db(tmp_path, f"UPDATE OP_MEMORY SET name = NULL WHERE allocationTime = {first}")
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0]).operator_memory
    assert om.loc[om["alloc_ns"] == first, "Name"].tolist() == [""]
    assert om["Name"].str.startswith("cann::").any()  # the mark is still given to the CANN nodes


def test_operator_memory_name_id_minus_one_is_a_reference_and_null_is_no_text(tmp_path: Path) -> None:
    """OP_MEMORY's NULL name was read as the id -1: a name id of -1 was said as missing (NULL) and a NULL name read
    the text of a STRING_IDS id -1. NULL is now a flag of the query's own. Synthetic, on the l1 excerpt: STRING_IDS
    given id -1 = 'aten::addmm' (a torch op's name: no cann:: mark), the first-allocated block named -1, the
    second NULL: the first reads 'aten::addmm' unsaid, the second "" said as one NULL; with no id -1 in STRING_IDS
    the block named -1 is a reference to no text, said as such (a name read as empty), not as NULL."""
    (a1,), (a2,) = sql(L1, "SELECT allocationTime FROM OP_MEMORY ORDER BY allocationTime LIMIT 2")
    edits = (f"UPDATE OP_MEMORY SET name = -1 WHERE allocationTime = {a1}",
             f"UPDATE OP_MEMORY SET name = NULL WHERE allocationTime = {a2}")
    opts = build_options(enable_memory_compare=True)[0]
    db = _db(tmp_path / "a", "INSERT INTO STRING_IDS VALUES (-1, 'aten::addmm')", *edits)
    p = load_profile(str(db), opts)
    om = p.operator_memory
    assert om.loc[om["alloc_ns"] == a1, "Name"].tolist() == ["aten::addmm"]
    assert om.loc[om["alloc_ns"] == a2, "Name"].tolist() == [""]
    assert [w for w in p.warnings if "name" in w] == [
        f"{db}: 1 OP_MEMORY.name value(s) missing (NULL): those names read as empty"]
    db = _db(tmp_path / "b", *edits)
    p = load_profile(str(db), opts)
    assert p.operator_memory.loc[p.operator_memory["alloc_ns"] == a1, "Name"].tolist() == [""]
    assert [w for w in p.warnings if "name" in w] == [
        f"{db}: 1 name reference(s) point to no text in STRING_IDS (an unknown id, or NULL there); those names read "
        "as empty", f"{db}: 1 OP_MEMORY.name value(s) missing (NULL): those names read as empty"]


def test_operator_memory_name_already_marked_keeps_one_mark(tmp_path: Path) -> None:
    """A block whose OP_MEMORY name already carries the ``cann::`` mark (the excerpt's ReduceSum7 blocks renamed
    "cann::ReduceSum7" through a new STRING_IDS row, synthetic: a name as operator_memory.csv writes it) is not
    marked twice: its 10 blocks read "cann::ReduceSum7", as the unedited excerpt's do."""
    db = _db(tmp_path, "INSERT INTO STRING_IDS VALUES ((SELECT max(id) + 1 FROM STRING_IDS), 'cann::ReduceSum7')",
             "UPDATE OP_MEMORY SET name = (SELECT max(id) FROM STRING_IDS) WHERE name IN "
             "(SELECT id FROM STRING_IDS WHERE value = 'ReduceSum7')")
    (n,) = sql(db, "SELECT count(*) FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name "
                   "WHERE s.value = 'cann::ReduceSum7'")[0]
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0]).operator_memory
    assert (om["Name"] == "cann::ReduceSum7").sum() == n == 10
    assert not om["Name"].str.startswith("cann::cann::").any()


#: The blocks named as no PYTORCH_API row of any kind is (compared as text), by plain SQL: those the mark is for.
_UNMARKED_SQL = ("SELECT count(*) FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name WHERE s.value NOT IN "
                 "(SELECT t.value FROM PYTORCH_API p JOIN STRING_IDS t ON t.id = p.name)")


@pytest.mark.parametrize("case", ["every row read", "an mstx row", "a step", "memory alone"])
def test_cann_mark_reads_the_op_names_once_where_the_op_read_took_every_row(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch,
                                                                             case: str) -> None:
    """The ``cann::`` mark goes to a block whose name no PYTORCH_API row has, of any kind and step. Where the op read
    took every row of the table (the default compare over every step, of a table holding only the kinds it reads, as
    the samples do), the names it read are used and the table is not scanned again for them (0.33 s at 2.6M rows);
    else it is. Synthetic for the other cases: an mstx row (a kind no comparison reads) named ReduceSum7, whose 10
    blocks then read unmarked; step 50 of the unedited excerpt, whose read leaves the other steps' rows out; and
    the memory compare alone, whose read leaves the Python rows out."""
    db, step = L1, -1
    if case == "an mstx row":
        db = _db(tmp_path, "INSERT INTO PYTORCH_API (startNs, endNs, name, type) SELECT startNs, endNs, "
                           "(SELECT min(id) FROM STRING_IDS WHERE value = 'ReduceSum7'), 50004 FROM PYTORCH_API "
                           "LIMIT 1")
    elif case == "a step":
        step = 50
    from msprof_compare.loaders import ascend_db

    queries: list[str] = []
    real = ascend_db._Db.ints
    monkeypatch.setattr(ascend_db._Db, "ints", lambda self, q, *a: queries.append(q) or real(self, q, *a))
    opts = build_options(enable_memory_compare=True)[0] if case == "memory alone" else OPTS
    assert opts.enable_memory_compare
    om = load_profile(str(db), opts, step=step).operator_memory
    (want,) = sql(db, _UNMARKED_SQL)[0]
    assert om["Name"].str.startswith("cann::").sum() == want == (47 if case == "an mstx row" else 57)
    assert ("cann::ReduceSum7" in set(om["Name"])) == (case != "an mstx row")
    scans = [q for q in queries if "DISTINCT name FROM PYTORCH_API" in q]
    assert len(scans) == (0 if case == "every row read" else 1)


def test_operator_memory_block_without_an_allocation_time_lasts_zero(tmp_path: Path) -> None:
    """A block's Duration(us) is its release minus its allocation only when both times are there: the excerpt's
    first-released block with its allocationTime set NULL (synthetic) reads allocation 0 ("" as text) and lasts 0,
    not its release time since the epoch."""
    (first,) = sql(L1, "SELECT min(releaseTime) FROM OP_MEMORY WHERE releaseTime > 0")[0]
    db = _db(tmp_path, f"UPDATE OP_MEMORY SET allocationTime = NULL WHERE releaseTime = {first}")
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0]).operator_memory
    row = om[om["release_ns"] == first]
    assert row["alloc_ns"].tolist() == [0] and row["Allocation Time(us)"].tolist() == [""]
    assert row["Duration(us)"].tolist() == [0.0]


def test_communication_op_ending_before_it_starts_is_counted(tmp_path: Path) -> None:
    """A COMMUNICATION_OP row whose end is before its start reads 0 long and is named in the warning with its
    table, as TASK and PYTORCH_API rows are. Synthetic: the first op's end written 5 ns before its start."""
    db = _db(tmp_path, "UPDATE COMMUNICATION_OP SET endNs = startNs - 5 WHERE startNs = "
                       "(SELECT min(startNs) FROM COMMUNICATION_OP)")
    p = load_profile(str(db), OPTS)
    assert p.warnings == [f"{db}: 1 row(s) end before they start (1 in COMMUNICATION_OP); "
                          "their duration is read as 0"]
    assert p.comm.query("lane == 'op'")["dur"].min() == 0


def test_one_communication_task_without_a_task_row_is_named(tmp_path: Path) -> None:
    """A single info row whose globalTaskId has no TASK row is left out of the join and named, as several are:
    the TASK row of the first COMMUNICATION_TASK_INFO globalTaskId deleted (synthetic), the warning counts 1 and
    the task lane holds the rows the join keeps (SQL)."""
    db = _db(tmp_path, "DELETE FROM TASK WHERE globalTaskId = (SELECT min(globalTaskId) FROM COMMUNICATION_TASK_INFO)")
    p = load_profile(str(db), OPTS)
    assert f"{db}: 1 globalTaskId(s) of COMMUNICATION_TASK_INFO have no TASK row (no time); left out" in p.warnings
    (n,) = sql(db, "SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c ON c.globalTaskId = t.globalTaskId")[0]
    assert (p.comm["lane"] == "task").sum() == n > 0


def test_replayed_communication_tasks_are_in_start_order(tmp_path: Path) -> None:
    """The task lane is ordered by start, also where a graph replay repeats a globalTaskId (each run is paired with
    one info row of its globalTaskId): the excerpt's lowest COMMUNICATION_TASK_INFO globalTaskId given a second TASK
    run 1 s after its first and a second info row (synthetic) is one task more, that run the last, every start at
    or after the one before (starts by SQL, the info row counted once per run)."""
    (gid,) = sql(L1, "SELECT min(globalTaskId) FROM COMMUNICATION_TASK_INFO")[0]
    db = _db(tmp_path, f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
             "UPDATE TASK SET startNs = startNs + 1000000000, endNs = endNs + 1000000000 "
             "WHERE rowid = (SELECT max(rowid) FROM TASK)",
             f"INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = {gid}")
    want = sorted(t for (t,) in sql(db, "SELECT t.startNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c ON "
                                        "c.globalTaskId = t.globalTaskId WHERE c.rowid IN "
                                        "(SELECT min(rowid) FROM COMMUNICATION_TASK_INFO GROUP BY globalTaskId)"))
    (first,) = sql(L1, "SELECT startNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    (n,) = sql(L1, "SELECT count(*) FROM COMMUNICATION_TASK_INFO")[0]
    assert len(want) == n + 1 and want[-1] == first + 10**9
    comm = load_profile(str(db), OPTS).comm
    assert comm.loc[comm["lane"] == "task", "ts"].tolist() == want


# --------------------------------------------------------------------------- which column a field comes from


def test_kernel_details_show_the_task_id_of_task() -> None:
    """OperatorCompare's Kernel Details name each kernel's TASK.taskId (the id the text export writes as Task
    Id), not its globalTaskId (the DB's join key)."""
    res = api.compare(str(L1), str(L1), enable_operator_compare=True, disable_module=True)
    lines = [x for cell in res.sheet("OperatorCompare")["Kernel Details"].fillna("") for x in cell.splitlines() if x]
    shown = {(x.split(", ")[0], int(x.split(", ")[1])) for x in lines}
    want = set(sql(L1, f"SELECT s.value, t.taskId {COMPUTE} JOIN STRING_IDS s ON s.id = c.name"))
    gids = set(sql(L1, f"SELECT s.value, t.globalTaskId {COMPUTE} JOIN STRING_IDS s ON s.id = c.name"))
    assert len(shown) > 50 and shown <= want and not shown & gids


def test_device_count_reads_the_task_device_id(tmp_path: Path) -> None:
    """The Summary's device count is the number of TASK.deviceId values of the compute tasks. Synthetic: the
    excerpt (device 0 only) with its first 10 compute tasks moved to device 1."""
    db = _db(tmp_path, "UPDATE TASK SET deviceId = 1 WHERE globalTaskId IN "
                       "(SELECT globalTaskId FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 10)")
    (devices,) = sql(db, f"SELECT count(DISTINCT t.deviceId) {COMPUTE}")[0]
    assert devices == 2
    g = api.compare(str(db), str(L1), enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc["device count", ["Base", "Comparison"]].tolist() == [2, 1]


def test_kernel_type_avg_is_the_mean_of_the_tasks() -> None:
    """KernelTypeCompare (use_kernel_type) of a DB: per (opType, Accelerator Core) the total, mean, max, min
    and count of the compute tasks' durations, by SQL (ReluGrad on AI_VECTOR_CORE: 7 tasks whose mean is not
    their median)."""
    res = api.compare(str(L1), str(L1), enable_kernel_compare=True, use_kernel_type=True)
    sheet = res.sheet("KernelTypeCompare").set_index(["Kernel Type", "Core Type"])
    rows = sql(L1, f"SELECT o.value, k.value, sum(t.endNs - t.startNs), avg(t.endNs - t.startNs), "
                   f"max(t.endNs - t.startNs), min(t.endNs - t.startNs), count(*) {COMPUTE} "
                   "JOIN STRING_IDS o ON o.id = c.opType JOIN STRING_IDS k ON k.id = c.taskType GROUP BY 1, 2")
    assert len(sheet) == len(rows)
    for typ, core, total, avg, hi, lo, n in rows:
        got = sheet.loc[(typ, core)]
        assert got["Calls"] == n
        assert [got["Total Duration(us)"], got["Avg Duration(us)"], got["Max Duration(us)"],
                got["Min Duration(us)"]] == pytest.approx([total / 1000, avg / 1000, hi / 1000, lo / 1000])
    relu = sql(L1, f"SELECT t.endNs - t.startNs {COMPUTE} JOIN STRING_IDS o ON o.id = c.opType "
                   "WHERE o.value = 'ReluGrad' ORDER BY 1")
    assert len(relu) == 7 and sum(d for (d,) in relu) / 7 != relu[3][0]


def test_kernel_types_of_equal_total_keep_the_order_of_their_first_task(tmp_path: Path) -> None:
    """The DB's op_statistic is sorted by total time, descending, types of equal total in the order their first
    task starts (the sort is stable); KernelTypeCompare of a DB with itself (every Diff Total Ratio 1) keeps that
    order. Every compute task of the excerpt set to 1 us (synthetic), the 33 (opType, core) types tie in groups of
    equal call counts (12 of them once); the order is computed by SQL."""
    db = _db(tmp_path, "UPDATE TASK SET endNs = startNs + 1000 WHERE globalTaskId IN "
                       "(SELECT globalTaskId FROM COMPUTE_TASK_INFO)")
    want = sql(db, f"SELECT o.value, k.value {COMPUTE} JOIN STRING_IDS o ON o.id = c.opType "
                   "JOIN STRING_IDS k ON k.id = c.taskType GROUP BY 1, 2 ORDER BY count(*) DESC, min(t.startNs)")
    assert len(want) == 33
    kinds = build_options(enable_kernel_compare=True, use_kernel_type=True)[0]
    assert list(zip(*(load_profile(str(db), kinds).op_statistic[c] for c in ("OP Type", "Core Type")),
                    strict=True)) == want
    sheet = api.compare(str(db), str(db), enable_kernel_compare=True, use_kernel_type=True).sheet("KernelTypeCompare")
    assert list(zip(sheet["Kernel Type"], sheet["Core Type"], strict=True)) == want


def test_cells_that_are_no_rank_id_are_counted_and_left_out_of_the_span(tmp_path: Path) -> None:
    """srcRank / dstRank cells that are no rank id (3000000000 made the world "at least 3000000001" ranks unsaid;
    -5, a text, a fraction) are left out of the rank span and counted in one warning naming the first (in table
    order, srcRank first); HCCL's no-peer 4294967295 and NULL are no peer, unsaid; 2**31 - 1 is the largest rank
    id. Synthetic: the excerpt's first seven tasks given those cells (its tasks name ranks 0-7)."""
    ids = [r for (r,) in sql(L1, "SELECT rowid FROM COMMUNICATION_TASK_INFO ORDER BY rowid LIMIT 7")]
    cells = [("srcRank", "NULL"), ("dstRank", "3000000000"), ("srcRank", "-5"), ("dstRank", "'r9'"),
             ("srcRank", "2.5"), ("dstRank", "4294967295"), ("dstRank", "2147483647")]
    db = _db(tmp_path, *(f"UPDATE COMMUNICATION_TASK_INFO SET {c} = {v} WHERE rowid = {i}"
                         for i, (c, v) in zip(ids, cells, strict=True)))
    p = load_profile(str(db), OPTS)
    assert p.rank_span == 2**31
    assert [w for w in p.warnings if "rank id" in w] == [
        f"{db}: 4 COMMUNICATION_TASK_INFO srcRank / dstRank value(s) are no rank id (an integer from 0 to 2147483647, "
        "or 4294967295: no peer; the first: -5); the world size check's lower bound leaves them out"]
    clean = _db(tmp_path / "clean", f"UPDATE COMMUNICATION_TASK_INFO SET dstRank = 7 WHERE rowid = {ids[-1]}",
                f"UPDATE COMMUNICATION_TASK_INFO SET dstRank = 3000000000 WHERE rowid = {ids[0]}")
    assert load_profile(str(clean), OPTS).rank_span == 8  # the excerpt's ranks 0-7 without the odd cell

    # a long cell is quoted cut to 40 characters, as other bad values are (textsafe.short_repr): 3,000 characters
    # made the warning a 3,000-character line
    long = _db(tmp_path / "long",
               f"UPDATE COMMUNICATION_TASK_INFO SET srcRank = '{'9' * 3000}x' WHERE rowid = {ids[0]}")
    assert [w for w in load_profile(str(long), OPTS).warnings if "rank id" in w] == [
        f"{long}: 1 COMMUNICATION_TASK_INFO srcRank / dstRank value(s) are no rank id (an integer from 0 to "
        f"2147483647, or 4294967295: no peer; the first: '{'9' * 36}...); the world size check's lower bound leaves "
        "them out"]


def test_whole_real_and_digit_text_ranks_are_read_as_the_text_loader_reads_them(tmp_path: Path) -> None:
    """A peer rank written as a whole REAL or as an integer's text (a COMMUNICATION_TASK_INFO / RANK_DEVICE_MAP
    declared without INTEGER affinity, which SQLite then leaves as written) is that rank, as the text loader reads
    the same value in an HCCL task's args (``traceio.whole_int``): every such cell was "no rank id", counted in a
    warning, and the span below was 0. Synthetic: the excerpt's table rebuilt with untyped rank
    columns, srcRank 0.0 (REAL), dstRank as text ('7', '4294967295': no peer), one dstRank ' 5.0 '; the span is
    8, as in the INTEGER original (its ranks 0-7). Fractions and other text stay odd: '2.5' and 'r9'."""
    cols = ("name INTEGER, globalTaskId INTEGER, taskType INTEGER, planeId INTEGER, groupName INTEGER, "
            "notifyId INTEGER, rdmaType INTEGER, srcRank, dstRank, transportType INTEGER, size INTEGER, "
            "dataType INTEGER, linkType INTEGER, opId INTEGER")
    rebuilt = ("ALTER TABLE COMMUNICATION_TASK_INFO RENAME TO old_info",
               f"CREATE TABLE COMMUNICATION_TASK_INFO ({cols})",
               "INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM old_info ORDER BY rowid", "DROP TABLE old_info",
               "UPDATE COMMUNICATION_TASK_INFO SET srcRank = CAST(srcRank AS REAL), dstRank = CAST(dstRank AS TEXT)",
               "CREATE TABLE RANK_DEVICE_MAP (rankId, deviceId INTEGER)",
               "INSERT INTO RANK_DEVICE_MAP VALUES ('3', 3), (3.0, 3), (' 1 ', 1)")
    ids = [r for (r,) in sql(L1, "SELECT rowid FROM COMMUNICATION_TASK_INFO WHERE dstRank = 5 ORDER BY rowid "
                                 "LIMIT 1")]
    db = _db(tmp_path, *rebuilt, f"UPDATE COMMUNICATION_TASK_INFO SET dstRank = ' 5.0 ' WHERE rowid = {ids[0]}")
    assert sql(db, "SELECT typeof(srcRank), typeof(dstRank), count(*) FROM COMMUNICATION_TASK_INFO "
                   "GROUP BY 1, 2") == [("real", "text", 296)]
    assert sql(db, "SELECT count(*) FROM COMMUNICATION_TASK_INFO WHERE dstRank = '7'") == [(40,)]
    p = load_profile(str(db), OPTS)
    assert p.rank_span == 8
    assert p.extra["device_ranks"] == (1, 3) and p.extra["device_ranks_odd"] == (0, "")
    assert not [w for w in p.warnings if "rank id" in w]

    # a fraction and a word stay no rank id, counted with the first in table order as written
    odd = _db(tmp_path / "odd", *rebuilt, f"UPDATE COMMUNICATION_TASK_INFO SET dstRank = 'r9' WHERE rowid = {ids[0]}",
              "UPDATE COMMUNICATION_TASK_INFO SET srcRank = '2.5' WHERE rowid = (SELECT max(rowid) FROM "
              "COMMUNICATION_TASK_INFO)", "INSERT INTO RANK_DEVICE_MAP VALUES (2.5, 4), ('x', 5)")
    p = load_profile(str(odd), OPTS)
    assert p.rank_span == 8
    assert p.extra["device_ranks"] == (1, 3) and p.extra["device_ranks_odd"] == (2, "2.5")
    assert [w for w in p.warnings if "rank id" in w] == [
        f"{odd}: 2 COMMUNICATION_TASK_INFO srcRank / dstRank value(s) are no rank id (an integer from 0 to "
        "2147483647, or 4294967295: no peer; the first: '2.5'); the world size check's lower bound leaves them out"]


def test_rank_zero_alone_spans_one_rank(tmp_path: Path) -> None:
    """The rank span is the highest rank a communication task names, plus one: rank 0 is a rank. Every task of the
    excerpt (ranks 0-7, span 8) rewritten to name rank 0 as source and destination (synthetic) spans 1."""
    assert sql(L1, "SELECT max(dstRank) FROM COMMUNICATION_TASK_INFO WHERE dstRank < 4294967295") == [(7,)]
    db = _db(tmp_path, "UPDATE COMMUNICATION_TASK_INFO SET srcRank = 0, dstRank = 0")
    assert load_profile(str(db), OPTS).rank_span == 1


def test_meta_data_list_value_is_decoded(tmp_path: Path) -> None:
    """META_DATA values are JSON text, as profiler_metadata.json holds them: a list is decoded as an object is (a
    row ("tags", '["a", 1]') added to the excerpt, synthetic: a user's add_metadata_json value may be any JSON)."""
    db = _db(tmp_path, """INSERT INTO META_DATA VALUES ('tags', ' ["a", 1]')""")
    meta = load_profile(str(db), OPTS).metadata
    assert meta["tags"] == ["a", 1] and isinstance(meta["ENV_VARIABLES"], dict)


# --------------------------------------------------------------------------- task summary: SDMA, E2E


#: the excerpt's last MEMCPY_ASYNC task on compute stream 2: (globalTaskId, start, end)
LAST_MEMCPY = sql(L1, "SELECT t.globalTaskId, t.startNs, t.endNs FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                      "WHERE s.value = 'MEMCPY_ASYNC' AND t.streamId = 2 ORDER BY t.startNs DESC LIMIT 1")[0]


def _sdma_db(tmp_path: Path, *statements: str) -> Path:
    """The excerpt with LAST_MEMCPY typed SDMA_SQE: an SDMA task on a compute stream, which no DB sample has
    (their SDMA tasks are typed SDMA and MEMCPY_ASYNC)."""
    return _db(tmp_path, "INSERT INTO STRING_IDS VALUES (990001, 'SDMA_SQE')",
               f"UPDATE TASK SET taskType = 990001 WHERE globalTaskId = {LAST_MEMCPY[0]}", *statements)


def test_sdma_task_starting_at_step_end_counts(tmp_path: Path) -> None:
    """TASK rows are summed by start in the inclusive step range: step 50 cut to end where the SDMA_SQE task
    starts still holds it (601 ns, 1 task) in "SDMA" on compute streams."""
    _, start, end = LAST_MEMCPY
    db = _sdma_db(tmp_path, f"UPDATE STEP_TIME SET endNs = {start} WHERE id = 50")
    bd = db_breakdown(load_profile(str(db), OPTS, step=50))
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (end - start, 1) == (601, 1)


def test_task_lasting_over_a_week_adds_no_time_and_no_e2e(tmp_path: Path) -> None:
    """A TASK row lasting over a week is read as 0 long, ending at its start: the SDMA_SQE task given an end
    7 days and 1 ns after its start counts once with 0 ns, and E2E is the span of the compute tasks,
    communication ops and non-kernel TASK rows with that task's end read as its start (SQL)."""
    week = 7 * 86_400 * 10**9
    db = _sdma_db(tmp_path, f"UPDATE TASK SET endNs = startNs + {week + 1} WHERE taskType = 990001")
    p = load_profile(str(db), OPTS)
    bd = db_breakdown(p)
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (0, 1)
    spans = sql(db, f"SELECT min(t.startNs), max(t.endNs) {COMPUTE} UNION ALL "
                    "SELECT min(startNs), max(endNs) FROM COMMUNICATION_OP UNION ALL "
                    "SELECT min(t.startNs), max(CASE WHEN t.endNs - t.startNs > ? THEN t.startNs ELSE t.endNs END) "
                    f"FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value NOT IN {KERNEL_TYPES}",
                (week,))
    assert bd.e2e_ns == max(e for _, e in spans) - min(s for s, _ in spans)
    assert any("last over a week" in w for w in p.warnings)


def test_compute_task_of_exactly_a_week_keeps_its_duration(tmp_path: Path) -> None:
    """Only a duration over a week (7 * 86400 s = 604,800,000,000,000 ns) reads as 0: the first compute task
    (by start) given an end exactly a week after its start keeps that duration in kernels and kernel_details;
    the second, a week and 1 ns, reads 0 (synthetic: no sample task lasts that long)."""
    week = 7 * 86_400 * 10**9
    (a, b) = [g for (g,) in sql(L1, f"SELECT t.globalTaskId {COMPUTE} ORDER BY t.startNs LIMIT 2")]
    db = _db(tmp_path, f"UPDATE TASK SET endNs = startNs + {week} WHERE globalTaskId = {a}",
             f"UPDATE TASK SET endNs = startNs + {week + 1} WHERE globalTaskId = {b}")
    p = load_profile(str(db), OPTS)
    assert p.kernels["dur"].tolist()[:2] == [week, 0]
    assert p.kernel_details["dur"].tolist()[:2] == [week, 0]
    assert p.kernel_details["Duration(us)"].tolist()[:2] == [604_800_000_000.0, 0.0]


# --------------------------------------------------------------------------- MC2, cube kernels, torch ops


def _mc2_db(tmp_path: Path, pmu: dict[str, float]) -> tuple[Path, int, int, list[int]]:
    """The excerpt with an MC2 kernel (no sample has one), as test_overall_db.test_mc2_from_db makes it: its first
    compute task over 1 us renamed MatmulAllReduce, one C_CORE_SQE task ending before it and four ending inside
    it (10 ns each), and its PMU rows replaced by ``pmu``. Returns (db, kernel start, kernel end, the four ends)."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, db)
    con = sqlite3.connect(db)
    try:
        gid, start, end = con.execute(f"SELECT t.globalTaskId, t.startNs, t.endNs {COMPUTE} "
                                      "WHERE t.endNs - t.startNs > 1000 ORDER BY t.startNs LIMIT 1").fetchone()
        con.execute("UPDATE COMPUTE_TASK_INFO SET name = ? WHERE globalTaskId = ?",
                    (string_id(con, "MatmulAllReduce"), gid))
        span = end - start
        ends = [start + span // 8, start + span // 4, start + span // 2, start + 3 * span // 4]
        for k, e in enumerate([start - 50, *ends]):
            con.execute("INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, "
                        "streamId, taskId) VALUES (?, ?, 0, -1, ?, 0, ?, 99, ?)",
                        (e - 10, e, 10**9 + k, string_id(con, "C_CORE_SQE"), 10**6 + k))
        con.execute("DELETE FROM TASK_PMU_INFO WHERE globalTaskId = ?", (gid,))
        for name, v in pmu.items():
            con.execute("INSERT INTO TASK_PMU_INFO VALUES (?, ?, ?)", (gid, string_id(con, name), v))
        con.commit()
    finally:
        con.close()
    return db, start, end, ends


def test_mc2_computing_takes_the_larger_of_mac_and_mte2(tmp_path: Path) -> None:
    """reference-1 §5.6: an MC2 kernel's computing part is max(aic_mac_time, aic_mte2_time) + aiv_time; here
    MTE2 is the larger: max(300.4, 400.0) + 50.3 = 450.3 ns, rounded to 450."""
    db, start, end, ends = _mc2_db(tmp_path, {"aic_total_time": 5.0, "aic_mac_time": 300.4,
                                              "aic_mte2_time": 400.0, "aiv_total_time": 50.3})
    m = db_breakdown(load_profile(str(db), OPTS)).mc2["MatmulAllReduce"]
    assert (m.ns, m.computing_ns, m.count) == (end - start, 450, 1)
    assert m.communication_ns == (ends[1] - ends[0]) + (ends[3] - ends[2])


@pytest.mark.parametrize(("pmu", "computing"), [
    ({"aic_mac_time": 1e30, "aic_mte2_time": 400.0, "aiv_total_time": 50.0}, 450),
    ({"aic_mac_time": 300.0, "aiv_total_time": -5.0}, 300),
    ({"aic_mac_time": 300.0, "aiv_total_time": 7 * 86_400 * 10**9 + 1}, 300),
])
def test_mc2_computing_reads_pmu_times_below_0_or_over_a_week_as_0(tmp_path: Path, pmu: dict[str, float],
                                                                    computing: int) -> None:
    """As the text export's (``test_kernel_details_pmu_times_and_starts_that_are_no_reading``): 1e30 ns of
    aic_mac_time wrapped the MC2 computing time's int64 ns, -5 ns of aiv_total_time took 5 ns off it; such a
    value reads as 0 (max(0, 400) + 50 = 450; 300 + 0), counted in one warning."""
    db, start, end, _ = _mc2_db(tmp_path, pmu)
    p = load_profile(str(db), OPTS)
    m = db_breakdown(p).mc2["MatmulAllReduce"]
    assert (m.ns, m.computing_ns, m.count) == (end - start, computing, 1)
    odd = next(k for k, v in pmu.items() if v < 0 or v > 7 * 86_400 * 10**9)
    assert [w for w in p.warnings if "PMU time" in w] == [
        f"{db}: 1 PMU time(s) negative or over a week (a damaged counter?) in TASK_PMU_INFO {odd}; read as 0, so such "
        "a kernel passes no PMU Cube test and adds no MC2 computing time by them"]


def test_c_core_sqe_task_starting_at_step_end_counts(tmp_path: Path) -> None:
    """C_CORE_SQE tasks are kept by start in the inclusive step range: step 50 cut to end where the last SQE
    task inside the MC2 kernel starts keeps all four, so the pairs (1st, 2nd) and (3rd, 4th) both count."""
    db, start, end, ends = _mc2_db(tmp_path, {"aic_mac_time": 300.0})
    con = sqlite3.connect(db)
    con.execute("UPDATE STEP_TIME SET endNs = ? WHERE id = 50", (ends[3] - 10,))
    con.commit()
    con.close()
    m = db_breakdown(load_profile(str(db), OPTS, step=50)).mc2["MatmulAllReduce"]
    assert (m.ns, m.computing_ns) == (end - start, 300)
    assert m.communication_ns == (ends[1] - ends[0]) + (ends[3] - ends[2])


def test_mix_aic_tasks_are_cube_kernels_without_pmu(tmp_path: Path) -> None:
    """Without TASK_PMU_INFO rows (a Level0 export) the cube kernels are the compute tasks of TASK type
    KERNEL_AICORE or KERNEL_MIX_AIC (reference-1 §7.3.1). No sample has a MIX_AIC task: the excerpt without PMU
    rows and with its first KERNEL_AICORE compute task retyped KERNEL_MIX_AIC; 31 cube kernels by SQL either
    way, and Computing Time's cube rows count them all."""
    first = f"(SELECT t.globalTaskId {COMPUTE} JOIN STRING_IDS s ON s.id = t.taskType " \
            "WHERE s.value = 'KERNEL_AICORE' ORDER BY t.startNs LIMIT 1)"
    db = _db(tmp_path, "DELETE FROM TASK_PMU_INFO", "INSERT INTO STRING_IDS VALUES (990002, 'KERNEL_MIX_AIC')",
             f"UPDATE TASK SET taskType = 990002 WHERE globalTaskId = {first}")
    (cube,) = sql(db, f"SELECT count(*) {COMPUTE} JOIN STRING_IDS s ON s.id = t.taskType "
                      "WHERE s.value IN ('KERNEL_AICORE', 'KERNEL_MIX_AIC')")[0]
    assert cube == 31
    p = load_profile(str(db), OPTS)
    assert int(cube_mask(p).sum()) == cube
    bd = db_breakdown(p)
    assert sum(b.count for name, b in bd.buckets.items() if name.endswith("_cube")) == cube


def test_cube_kernels_by_mac_time_when_total_time_is_missing(tmp_path: Path) -> None:
    """With PMU rows, a cube kernel is one whose aic_total_time or aic_mac_time is non-zero (reference-1 §7.3.1):
    either counter alone decides. Synthetic: the excerpt without its aic_total_time rows; the cube kernels are
    then the compute tasks with a non-zero aic_mac_time (SQL), and Computing Time's cube rows count them."""
    db = _db(tmp_path, "DELETE FROM TASK_PMU_INFO WHERE name IN (SELECT id FROM STRING_IDS "
                       "WHERE value = 'aic_total_time')")
    (cube,) = sql(db, f"SELECT count(DISTINCT t.globalTaskId) {COMPUTE} JOIN TASK_PMU_INFO m ON m.globalTaskId = "
                      "t.globalTaskId JOIN STRING_IDS s ON s.id = m.name WHERE s.value = 'aic_mac_time' "
                      "AND m.value <> 0")[0]
    assert cube > 20
    p = load_profile(str(db), OPTS)
    assert int(cube_mask(p).sum()) == cube
    assert sum(b.count for name, b in db_breakdown(p).buckets.items() if name.endswith("_cube")) == cube


def test_run_without_any_torch_op_has_no_ops(tmp_path: Path) -> None:
    """A DB whose PYTORCH_API holds task-queue and Python rows but no op row has no torch ops at all (not "none
    in this step"), so the sheets pairing ops are left out against a side with ops. Synthetic: the op rows
    (type 50001) deleted from the excerpt."""
    db = _db(tmp_path, "DELETE FROM PYTORCH_API WHERE type = 50001")
    assert sql(db, "SELECT count(*) FROM PYTORCH_API")[0][0] > 0
    p = load_profile(str(db), build_options(enable_operator_compare=True)[0])
    assert len(p.ops) == 0 and not p.has_ops
    res = api.compare(str(db), str(L1), enable_operator_compare=True, disable_module=True)
    assert "OperatorCompare" not in res.sheet_names


def test_memory_compare_reads_profile_memory_from_profiler_info(tmp_path: Path, samples: Path, caplog) -> None:
    """A memory-only comparison of an ``*_ascend_pt`` folder reads profiler_info.json too: the level-1 sample's
    says profile_memory true, so a side without OP_MEMORY (dropped here) gets no "profile_memory=True records
    it" advice, which would tell the user to turn on what was on."""
    folder = tmp_path / "rank0_ascend_pt"
    _db(folder, "DROP TABLE OP_MEMORY", folder="ASCEND_PROFILER_OUTPUT")  # the excerpt's source
    info = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/profiler_info_0.json"
    shutil.copyfile(info, folder / "profiler_info_0.json")
    assert '"profile_memory": true' in info.read_text(encoding="utf-8")
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        api.compare(str(folder), str(L1), enable_memory_compare=True)
    said = [r.getMessage() for r in caplog.records if "Can't find any memory event" in r.getMessage()]
    assert said == [f"Can't find any memory event in the file: {folder} (base side: the export has no OP_MEMORY "
                    "table)"]


def test_forward_backward_flow_starts_at_the_earlier_op_whatever_the_table_order(tmp_path: Path) -> None:
    """A connection id shared by two torch ops (and no compute task) is a forward -> backward link: the flow
    starts at the op that starts first. In the samples the forward op also comes first in PYTORCH_API; here
    the 27 forward ops are moved to the end of the table (deleted and inserted again), which must not turn
    the flows round. Expected (id, start, end) by SQL, as test_modules_db's FWDBWD_SQL."""
    links = """SELECT ci.connectionId AS cid, min(CAST(p.startNs AS INTEGER)) AS lo,
        max(CAST(p.startNs AS INTEGER)) AS hi, count(*) FROM PYTORCH_API p
        JOIN CONNECTION_IDS ci ON ci.id = p.connectionId
        WHERE p.type = 50001 GROUP BY ci.connectionId HAVING count(*) > 1 ORDER BY ci.connectionId"""
    forward = ",".join(str(r) for (r,) in sql(L1, f"""SELECT p.rowid FROM PYTORCH_API p JOIN CONNECTION_IDS ci ON
        ci.id = p.connectionId JOIN ({links}) l ON l.cid = ci.connectionId
        WHERE p.type = 50001 AND CAST(p.startNs AS INTEGER) = l.lo"""))
    db = _db(tmp_path, f"INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API WHERE rowid IN ({forward})",
             f"DELETE FROM PYTORCH_API WHERE rowid IN ({forward})")
    want = sql(db, links)
    assert len(want) == len(forward.split(",")) == 27 and all(n == 2 for *_, n in want)
    p = load_profile(str(db), build_options(enable_operator_compare=True)[0])
    fb = p.flows[p.flows["cat"] == "fwdbwd"]
    assert list(zip(fb["id"].tolist(), fb["s_ts"].tolist(), fb["f_ts"].tolist(), strict=True)) == [
        (str(c), s, f) for c, s, f, _ in want]


def test_launch_id_shared_by_two_ops_is_no_forward_backward_link(tmp_path: Path) -> None:
    """A forward/backward link is a CANN connection id two or more ops share and no compute task carries: the
    excerpt's aten::empty (PYTORCH_API rowid 1603, no link) given Conv2D's link 319 (its four launch ids, each
    carried by a compute task; synthetic) shares those ids with Conv2D, which makes them no fwdbwd flow: the
    fwdbwd flows are the ids SQL finds held by two ops and no task, and each task keeps its one async_npu flow."""
    db = _db(tmp_path, "UPDATE PYTORCH_API SET connectionId = 319 WHERE rowid = 1603")
    launch = {str(c) for (c,) in sql(db, "SELECT connectionId FROM CONNECTION_IDS WHERE id = 319")}
    fwdbwd = {str(c) for (c,) in sql(db, "SELECT i.connectionId FROM PYTORCH_API p JOIN CONNECTION_IDS i ON "
                                         "i.id = p.connectionId WHERE p.type = 50001 AND i.connectionId NOT IN "
                                         "(SELECT t.connectionId FROM TASK t JOIN COMPUTE_TASK_INFO c ON "
                                         "c.globalTaskId = t.globalTaskId) GROUP BY 1 "
                                         "HAVING count(DISTINCT p.rowid) > 1")}
    assert len(launch) == 4 and fwdbwd and not launch & fwdbwd
    flows = load_profile(str(db), build_options(enable_operator_compare=True)[0]).flows
    assert set(flows.loc[flows["cat"] == "fwdbwd", "id"]) == fwdbwd
    npu = flows[flows["cat"] == "async_npu"]
    assert npu["id"].isin(launch).sum() == len(sql(db, f"SELECT 1 {COMPUTE} WHERE t.connectionId IN "
                                                      "(SELECT connectionId FROM CONNECTION_IDS WHERE id = 319)"))


# --------------------------------------------------------------------------- wait rule, too-long SQE tasks

def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(e, be) - max(s, bs)) for s, e in union(a) for bs, be in union(b))


def test_wait_history_runs_per_plane(tmp_path: Path) -> None:
    """reference-1 §5.7: a Notify_Wait is no wait when its plane's previous tasks end with two RDMASend (or read
    RDMASend, RDMASend, Notify_Wait, RDMASend); the history is the plane's own, not the group's. No DB sample
    has RDMASend: the excerpt with its Notify_Record tasks renamed RDMASend. Each plane then runs RDMASend,
    Notify_Wait, ... with never two RDMASend in a row, so every Notify_Wait counts, while the group's tasks
    interleaved across its 8 planes hold seven RDMASend in a row. Wait and Transmit computed here: the plane
    with the least wait-task time, its waits within the group's op time not under a compute task."""
    db = _db(tmp_path, "INSERT INTO STRING_IDS VALUES (990003, 'RDMASend')",
             "UPDATE COMMUNICATION_TASK_INFO SET taskType = 990003 WHERE taskType = "
             "(SELECT id FROM STRING_IDS WHERE value = 'Notify_Record')")
    tasks = sql(db, "SELECT c.planeId, s.value, t.startNs, t.endNs FROM COMMUNICATION_TASK_INFO c JOIN TASK t "
                    "ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.taskType ORDER BY t.startNs")
    history: dict[int, list[str]] = {}
    waits: dict[int, list[tuple[int, int]]] = {}
    for plane, name, s, e in tasks:
        h = ["O"] * 4 + history.setdefault(plane, [])
        if name == "Notify_Wait" and h[-2:] != ["R", "R"] and h[-4:] != ["R", "R", "N", "R"]:
            waits.setdefault(plane, []).append((s, e))
        history[plane].append({"RDMASend": "R", "Notify_Wait": "N"}.get(name, "O"))
    assert sum(1 for p, n, *_ in tasks if n == "RDMASend") == 112 and sum(map(len, waits.values())) == 112
    sums = {p: sum(e - s for s, e in w) for p, w in waits.items()}
    best = min(sums, key=sums.get)
    assert list(sums.values()).count(sums[best]) == 1
    compute = sql(db, f"SELECT t.startNs, t.endNs {COMPUTE}")
    uncovered = minus(sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP"), compute)
    wait = _overlap(waits[best], uncovered)
    (group,) = sql(db, "SELECT DISTINCT g.value FROM COMMUNICATION_OP o JOIN STRING_IDS g ON g.id = o.groupName")
    bd = db_breakdown(load_profile(str(db), OPTS))
    assert wait > 0
    assert bd.groups == {group[0]: {"wait": wait, "transmit": sum(e - s for s, e in uncovered) - wait}}


def test_c_core_sqe_task_lasting_over_a_week_ends_at_its_start(tmp_path: Path) -> None:
    """A C_CORE_SQE task lasting over a week is read as 0 long, as every TASK row: it ends at its start. The
    MC2 kernel's fourth SQE task given an end 7 days and 1 ns after its start ends inside the kernel, at
    ends[3] - 10, and pairs with the third; read as it is it ended outside and paired with nothing."""
    db, start, end, ends = _mc2_db(tmp_path, {"aic_mac_time": 300.0})
    con = sqlite3.connect(db)
    con.execute("UPDATE TASK SET endNs = startNs + ? WHERE endNs = ? AND globalTaskId >= ?",
                (7 * 86_400 * 10**9 + 1, ends[3], 10**9))
    con.commit()
    con.close()
    m = db_breakdown(load_profile(str(db), OPTS)).mc2["MatmulAllReduce"]
    assert m.communication_ns == (ends[1] - ends[0]) + (ends[3] - 10 - ends[2])


# --------------------------------------------------------------------------- second audit (names, figures)


def test_empty_string_ids_counts_a_name_reference_to_id_zero(tmp_path: Path) -> None:
    """0 is a valid STRING_IDS id (the excerpt's smallest): with STRING_IDS empty, every compute-task name
    reference is unknown, id 0 included. Synthetic: the excerpt without STRING_IDS rows, torch ops,
    communication and operator memory (so that only compute-task names are references), and one compute task
    named by id 0; the count is that of the compute tasks with an end (plain SQL: 187)."""
    db = _db(tmp_path, "DELETE FROM STRING_IDS", "DELETE FROM PYTORCH_API", "DELETE FROM COMMUNICATION_OP",
             "DELETE FROM COMMUNICATION_TASK_INFO", "DELETE FROM OP_MEMORY",
             "UPDATE COMPUTE_TASK_INFO SET name = 0 "
             "WHERE globalTaskId = (SELECT min(globalTaskId) FROM COMPUTE_TASK_INFO)")
    (n,) = sql(db, f"SELECT count(c.name) {COMPUTE} WHERE t.endNs IS NOT NULL")[0]
    (zero,) = sql(db, "SELECT count(*) FROM COMPUTE_TASK_INFO WHERE name = 0")[0]
    assert n == 187 and zero == 1
    notes = [w for w in load_profile(str(db), OPTS).warnings if "name reference(s) point to no text" in w]
    assert len(notes) == 1 and notes[0].split(": ")[1].startswith(f"{n} name reference(s)")


def test_step_zero_is_named_in_the_kernel_details(tmp_path: Path) -> None:
    """A step whose STEP_TIME id is 0 is a step like any other: the Kernel Details of a load over every step
    show "0" as the Step Id of its tasks, "" only outside every step. Synthetic: the excerpt's only step (50)
    renumbered 0; the counts of tasks starting inside / outside its [start, end] come from plain SQL."""
    db = _db(tmp_path, "UPDATE STEP_TIME SET id = 0 WHERE id = 50")
    (inside,) = sql(db, f"SELECT count(*) {COMPUTE} WHERE t.endNs IS NOT NULL AND t.startNs BETWEEN ? AND ?", STEP)[0]
    (every,) = sql(db, f"SELECT count(*) {COMPUTE} WHERE t.endNs IS NOT NULL")[0]
    assert 0 < inside
    details = load_profile(str(db), OPTS).kernel_details
    assert details["Step Id"].value_counts().to_dict() == ({"0": inside, "": every - inside} if every > inside
                                                             else {"0": inside})


def test_pmu_rows_without_a_counter_the_loader_reads_still_decide_cube_kernels(tmp_path: Path) -> None:
    """"If TASK_PMU_INFO has any rows" the cube kernels are those with a non-zero aic_total_time or aic_mac_time
    (reference-1 §7.3.2), even when no row names either counter: then there are none, and the rts-type rule of a
    PMU-less export (KERNEL_AICORE, 31 tasks in the excerpt) is not used. Synthetic: the excerpt's PMU counter
    names renamed in STRING_IDS (no sample writes PMU rows under other names only)."""
    db = _db(tmp_path, "UPDATE STRING_IDS SET value = value || '_renamed' WHERE value IN "
                       "('aic_total_time', 'aic_mac_time', 'aic_mte2_time', 'aiv_total_time')")
    (rows,) = sql(db, "SELECT count(*) FROM TASK_PMU_INFO")[0]
    (aicore,) = sql(db, f"SELECT count(*) {COMPUTE} JOIN STRING_IDS s ON s.id = t.taskType "
                        "WHERE s.value = 'KERNEL_AICORE'")[0]
    assert rows == 3 * 185 and aicore == 31
    p = load_profile(str(db), OPTS)
    assert int(cube_mask(p).sum()) == 0
    assert not [name for name, b in db_breakdown(p).buckets.items() if name.endswith("_cube") and b.count]


def _pmu_by_task(db: Path, counter: str) -> dict[int, float]:
    return dict(sql(db, "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                        "WHERE s.value = ?", (counter,)))


def test_pmu_values_follow_the_global_task_id_not_the_start_order(tmp_path: Path) -> None:
    """Each compute task takes the PMU values of its own globalTaskId, whatever the order of the ids against the
    start times (the loaded tasks are in start order; msprof numbers them in that order too, so the excerpt
    cannot tell). Synthetic: the first cube task by start given a globalTaskId above every other (TASK,
    COMPUTE_TASK_INFO and TASK_PMU_INFO alike); expected values: the PMU rows by globalTaskId (plain SQL)."""
    (gid,) = sql(L1, f"SELECT t.globalTaskId {COMPUTE} JOIN TASK_PMU_INFO p ON p.globalTaskId = t.globalTaskId "
                     "WHERE p.value > 0 ORDER BY t.startNs LIMIT 1")[0]
    new = 10**12
    db = _db(tmp_path, *(f"UPDATE {t} SET globalTaskId = {new} WHERE globalTaskId = {gid}"
                         for t in ("TASK", "COMPUTE_TASK_INFO", "TASK_PMU_INFO")))
    want = _pmu_by_task(db, "aic_mac_time")
    assert want[new] > 0 and len(want) == 185
    p = load_profile(str(db), OPTS)
    kx = p.extra["kernel_extra"]
    got = {g: v for g, v in zip(kx["global_task_id"].tolist(), kx["aic_mac_time"].tolist(), strict=True)
           if g in want}
    assert got == want


def test_pmu_set_stamped_inside_the_only_run_wins_over_an_earlier_set(tmp_path: Path) -> None:
    """A task run once (not replayed) whose TASK_PMU_INFO holds two sets takes the set stamped inside its
    [start, end], not the first in table order. Synthetic: for the excerpt's first cube task, its set rewritten
    to 0 and stamped a second before the run, and its true set added after it, stamped at the run's end - 1
    (newer exports write timestampNs; no sample has two sets for one run)."""
    (gid, mac) = sql(L1, "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value = 'aic_mac_time' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1")[0]
    (start, end) = sql(L1, "SELECT startNs, endNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    assert end - start > 1
    db = _db(tmp_path, "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs INTEGER",
             f"CREATE TABLE keep AS SELECT globalTaskId, name, value FROM TASK_PMU_INFO WHERE globalTaskId = {gid}",
             f"UPDATE TASK_PMU_INFO SET value = 0, timestampNs = {start - 10**9} WHERE globalTaskId = {gid}",
             f"INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, value, {end - 1} FROM keep")
    p = load_profile(str(db), OPTS)
    kx = p.extra["kernel_extra"]
    assert kx.loc[kx["global_task_id"] == gid, "aic_mac_time"].tolist() == [mac]


def test_pmu_stamp_that_is_no_integer_places_no_set(tmp_path: Path) -> None:
    """A timestampNs that is no integer (here a REAL) is no stamp: that PMU set is paired as an unstamped one, so
    an integer-stamped set inside the run wins over it even when it comes first (the rule the row-by-row reading
    of odd cells applies too). Synthetic: the excerpt with a type-less timestampNs column stamping every set at its
    task's start (as newer exports stamp them all; with a NULL among them every cell is read one by one), then
    for the first cube task its set rewritten to 0 and stamped with a REAL inside the run, and its true set added
    stamped end - 1 as an integer."""
    (gid, mac) = sql(L1, "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value = 'aic_mac_time' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1")[0]
    (start, end) = sql(L1, "SELECT startNs, endNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    assert end - start > 4096  # a double near 1.7e18 steps by 256 ns: its REAL middle lies inside the run
    db = _db(tmp_path, "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs",
             "UPDATE TASK_PMU_INFO SET timestampNs = (SELECT t.startNs FROM TASK t "
             "WHERE t.globalTaskId = TASK_PMU_INFO.globalTaskId)",
             f"CREATE TABLE keep AS SELECT globalTaskId, name, value FROM TASK_PMU_INFO WHERE globalTaskId = {gid}",
             f"UPDATE TASK_PMU_INFO SET value = 0, timestampNs = {float(start + end) / 2!r} WHERE globalTaskId = {gid}",
             f"INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, value, {end - 1} FROM keep")
    assert sql(db, "SELECT DISTINCT typeof(timestampNs) FROM TASK_PMU_INFO WHERE value = 0 AND globalTaskId = ?",
               (gid,)) == [("real",)]
    assert sql(db, "SELECT count(*) FROM TASK_PMU_INFO WHERE timestampNs IS NULL") == [(0,)]
    kx = load_profile(str(db), OPTS).extra["kernel_extra"]
    assert kx.loc[kx["global_task_id"] == gid, "aic_mac_time"].tolist() == [mac]


def test_device_task_without_an_end_is_no_sdma_task_and_no_e2e(tmp_path: Path) -> None:
    """A TASK row without an end is left out of the task summary, as of every other query: an SDMA_SQE copy of
    the excerpt's SDMA task (new globalTaskId, no endNs, starting 1 s before everything; synthetic) adds no SDMA
    task (still 601 ns in 1 task) and does not stretch E2E, which spans the timed compute tasks, communication
    ops and non-kernel TASK rows (SQL)."""
    gid, start, _ = LAST_MEMCPY
    db = _sdma_db(tmp_path, f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
                  f"UPDATE TASK SET globalTaskId = {10**12}, endNs = NULL, startNs = {start - 10**12} "
                  "WHERE rowid = (SELECT max(rowid) FROM TASK)")
    bd = db_breakdown(load_profile(str(db), OPTS))
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (601, 1)
    spans = sql(db, f"SELECT min(t.startNs), max(t.endNs) {COMPUTE} UNION ALL "
                    "SELECT min(startNs), max(endNs) FROM COMMUNICATION_OP UNION ALL "
                    "SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                    f"WHERE s.value NOT IN {KERNEL_TYPES} AND t.endNs IS NOT NULL")
    assert bd.e2e_ns == max(e for _, e in spans) - min(s for s, _ in spans) < 10**12


def test_torch_ops_whose_names_are_all_lost_mark_no_cann_block(tmp_path: Path) -> None:
    """The ``cann::`` mark goes to blocks named by no torch op; when no torch op name can be read (every
    PYTORCH_API name an id STRING_IDS lacks, synthetic), there is nothing to tell CANN nodes from ops by, and
    no block is marked, as without torch ops: the names are OP_MEMORY's own texts (SQL)."""
    db = _db(tmp_path, "UPDATE PYTORCH_API SET name = (SELECT max(id) + 1 FROM STRING_IDS) WHERE name IS NOT NULL")
    want = sorted(v for (v,) in sql(db, "SELECT COALESCE(s.value, '') FROM OP_MEMORY m "
                                        "LEFT JOIN STRING_IDS s ON s.id = m.name"))
    assert len(want) > 100 and not any(v.startswith("cann::") for v in want)
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0]).operator_memory
    assert sorted(om["Name"].tolist()) == want


def test_memory_reading_after_the_step_is_left_out_and_its_end_kept(tmp_path: Path) -> None:
    """Step bounds of Mem Usage are inclusive on both ends: readings added (synthetic) of 2 GiB exactly at step 50's
    end and 3 GiB 1 ns after it give the step a peak of 2 GiB (2147483648 bytes; the excerpt's own peak is
    1600913408) and the whole profile 3 GiB (3221225472 bytes)."""
    db = _db(tmp_path, "INSERT INTO MEMORY_RECORD (component, timestamp, totalReserved) "
                       f"VALUES (0, {STEP[1]}, {2**31}), (0, {STEP[1] + 1}, {3 * 2**30})")
    opts = build_options(enable_profiling_compare=True)[0]
    assert load_profile(str(db), opts, step=50).extra["memory_peak_bytes"] == 2**31
    assert load_profile(str(db), opts).extra["memory_peak_bytes"] == 3 * 2**30


_OP_OF_TASK = ("SELECT p.rowid, CAST(p.startNs AS INTEGER), c.connectionId, t.globalTaskId FROM PYTORCH_API p "
               "JOIN CONNECTION_IDS c ON c.id = p.connectionId JOIN ENUM_API_TYPE e ON e.id = p.type "
               "JOIN TASK t ON t.connectionId = c.connectionId JOIN COMPUTE_TASK_INFO i ON i.globalTaskId = "
               "t.globalTaskId WHERE e.name = 'op' ORDER BY t.startNs LIMIT 1")


def _kernel_row(p, gid: int) -> int:
    (row,) = (p.extra["kernel_extra"]["global_task_id"] == gid).to_numpy().nonzero()[0].tolist()
    return row


def test_flow_start_of_a_connection_id_two_ops_list_is_the_first_ops(tmp_path: Path) -> None:
    """A compute task's flow start is the start of the torch op that lists its connection id; where two ops list
    it, the first op (in op order, here the earlier) wins, as the first flow does in the text export. Synthetic:
    the excerpt's first linked op copied 1 s later (a new CONNECTION_IDS link to the same connection id); the
    expected start is the original op's startNs (SQL)."""
    (rowid, start, cid, gid) = sql(L1, _OP_OF_TASK)[0]
    db = _db(tmp_path, f"INSERT INTO CONNECTION_IDS VALUES ({10**9}, {cid})",
             f"INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API WHERE rowid = {rowid}",
             f"UPDATE PYTORCH_API SET connectionId = {10**9}, "
             f"startNs = CAST(CAST(startNs AS INTEGER) + {10**9} AS TEXT), "
             f"endNs = CAST(CAST(endNs AS INTEGER) + {10**9} AS TEXT) "
             "WHERE rowid = (SELECT max(rowid) FROM PYTORCH_API)")
    p = load_profile(str(db), OPTS)
    assert sorted(p.extra["op_connections"].query(f"connection_id == {cid}")["op_row"].map(
        lambda r: int(p.ops["ts"].iloc[r]))) == [start, start + 10**9]
    assert int(flow_starts(p)[_kernel_row(p, gid)]) == start


def test_task_without_a_connection_id_has_no_flow_start(tmp_path: Path) -> None:
    """A compute task whose TASK.connectionId is NULL has no flow (start 0), even when a CONNECTION_IDS row of an
    op holds a NULL connection id too: missing ids do not pair. Synthetic: the excerpt's first linked task and
    its op's CONNECTION_IDS row both given a NULL connection id."""
    (_, _, cid, gid) = sql(L1, _OP_OF_TASK)[0]
    db = _db(tmp_path, f"UPDATE CONNECTION_IDS SET connectionId = NULL WHERE connectionId = {cid}",
             f"UPDATE TASK SET connectionId = NULL WHERE globalTaskId = {gid}")
    p = load_profile(str(db), OPTS)
    assert int(flow_starts(p)[_kernel_row(p, gid)]) == 0


_QUEUE_OF = ("SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) FROM PYTORCH_API p "
             "JOIN CONNECTION_IDS c ON c.id = p.connectionId JOIN STRING_IDS s ON s.id = p.name "
             "WHERE c.connectionId = ? ORDER BY s.value DESC")


def test_a_dequeue_of_no_connection_id_pairs_with_no_enqueue(tmp_path: Path) -> None:
    """A memory block CANN allocated in a dequeue is placed at the enqueue of the same CANN connection id; a NULL
    id pairs with none (time 0), where -1 paired with -1: the Enqueue / Dequeue of ids 9886 and 9889 given NULL
    in CONNECTION_IDS, the blocks of 9886's dequeue were placed at 9889's enqueue (the last enqueue of no id),
    under another Conv2D. The blocks of each dequeue are counted by SQL: OP_MEMORY rows allocated inside its
    window whose name is no torch op's (3 each: trans_TransData_0, trans_TransData_1, Conv2D1 in 9886's)."""
    opts = build_options(enable_memory_compare=True)[0]
    enq, blocks = {}, {}
    for cid in (9886, 9889):
        (_, e_ts, _), (_, d_ts, d_end) = sql(L1, _QUEUE_OF, (cid,))
        enq[cid] = e_ts
        blocks[cid] = sql(L1, "SELECT count(*) FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name WHERE "
                              "m.allocationTime BETWEEN ? AND ? AND s.value NOT IN (SELECT t.value FROM PYTORCH_API "
                              "q JOIN STRING_IDS t ON t.id = q.name)", (d_ts, d_end))[0][0]
    db = _db(tmp_path, "UPDATE CONNECTION_IDS SET connectionId = NULL WHERE connectionId IN (9886, 9889)")
    clean, got = (npu_records(load_profile(str(f), opts)) for f in (L1, db))
    cann = clean["name"] != ""
    assert [int((clean.loc[cann, "ts"] == enq[c]).sum()) for c in enq] == [blocks[9886], blocks[9889]] == [3, 3]
    placed = got.loc[got["name"] != "", "ts"]
    assert int((placed == 0).sum()) == 6 and not placed.isin(list(enq.values())).any()
    assert (placed[placed != 0].to_numpy() == clean.loc[cann, "ts"][~clean.loc[cann, "ts"].isin(
        list(enq.values()))].to_numpy()).all()
    p = load_profile(str(db), opts)
    assert f"{db}: 4 Enqueue / Dequeue row(s) of PYTORCH_API have no CANN connection id (NULL, or one " \
           "CONNECTION_IDS lacks); they pair with no other, so a memory block CANN allocated in such a dequeue is " \
           "placed at time 0, under no operator" in p.warnings


_LOST_OPS = ("SELECT p.connectionId FROM PYTORCH_API p JOIN ENUM_API_TYPE e ON e.id = p.type WHERE e.name = 'op' "
             "AND p.connectionId IS NOT NULL AND p.connectionId NOT IN (SELECT id FROM CONNECTION_IDS) "
             "ORDER BY p.rowid")
_LOST_EFFECT = "those ops link to no task (they own no kernel)"


def test_an_op_link_connection_ids_lacks_is_said(tmp_path: Path) -> None:
    """A torch op whose PYTORCH_API.connectionId CONNECTION_IDS lacks links no task: said with its count, where its
    kernels went to no operator without a word (--enable_profiling_compare's breakdown moved, dbfuzz65). Synthetic:
    every third linked op of the L1 excerpt given an id 10**9 higher; the count and first id are SQL's."""
    db = _db(tmp_path, "UPDATE PYTORCH_API SET connectionId = connectionId + 1000000000 WHERE rowid % 3 = 2 AND "
                       "connectionId IS NOT NULL")
    lost = [c for (c,) in sql(db, _LOST_OPS)]
    assert len(lost) == 64 and not sql(L1, _LOST_OPS)
    opts = build_options(enable_profiling_compare=True)[0]
    p, clean = load_profile(str(db), opts), load_profile(str(L1), opts)
    assert f"{db}: 64 torch op row(s) of PYTORCH_API have a connectionId that CONNECTION_IDS lacks (the first: " \
           f"{lost[0]}): {_LOST_EFFECT}" in p.warnings
    assert not [w for w in clean.warnings if "connectionId" in w]
    # the ops still linked own the kernels they did
    linked = sql(L1, "SELECT count(DISTINCT p.rowid) FROM PYTORCH_API p JOIN ENUM_API_TYPE e ON e.id = p.type "
                     "JOIN CONNECTION_IDS c ON c.id = p.connectionId WHERE e.name = 'op'")[0][0]
    assert p.extra["op_connections"]["op_row"].nunique() == linked - 64
    # no CONNECTION_IDS table: every linked op (169, SQL's count) is said
    gone = _db(tmp_path, "DROP TABLE CONNECTION_IDS", folder="gone")
    n, first = sql(L1, "SELECT count(*), (SELECT p2.connectionId FROM PYTORCH_API p2 JOIN ENUM_API_TYPE e2 ON "
                       "e2.id = p2.type WHERE e2.name = 'op' AND p2.connectionId IS NOT NULL ORDER BY p2.rowid "
                       "LIMIT 1) "
                       "FROM PYTORCH_API p JOIN ENUM_API_TYPE e ON e.id = p.type WHERE e.name = 'op' AND "
                       "p.connectionId IS NOT NULL")[0]
    assert n == linked == 169
    assert f"{gone}: 169 torch op row(s) of PYTORCH_API have a connectionId but the DB has no CONNECTION_IDS " \
           f"table, which maps it to tasks (the first: {first}): {_LOST_EFFECT}" in \
        load_profile(str(gone), opts).warnings


def test_e2e_spans_the_earliest_and_latest_device_task_of_any_type_and_stream(tmp_path: Path) -> None:
    """E2E reaches the earliest start and the latest end over every (type, stream) group of non-kernel TASK rows,
    not those of the first / last group. Synthetic: a 'Notify Wait' task (the last group by type id) moved to
    start 1 s before any task, and the last MEMCPY_ASYNC task of stream 2 (the first group) to end 1 s after
    every task; the expected span is that of the compute tasks, communication ops and non-kernel TASK rows (SQL)."""
    (lo, hi) = sql(L1, "SELECT min(startNs), max(endNs) FROM TASK")[0]
    (notify,) = sql(L1, "SELECT t.globalTaskId FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                        "WHERE s.value = 'Notify Wait' ORDER BY t.startNs LIMIT 1")[0]
    gid = LAST_MEMCPY[0]
    db = _db(tmp_path, f"UPDATE TASK SET endNs = {lo - 10**9} + endNs - startNs, startNs = {lo - 10**9} "
                       f"WHERE globalTaskId = {notify}",
             f"UPDATE TASK SET startNs = {hi + 10**9} - endNs + startNs, endNs = {hi + 10**9} "
             f"WHERE globalTaskId = {gid}")
    spans = sql(db, f"SELECT min(t.startNs), max(t.endNs) {COMPUTE} UNION ALL "
                    "SELECT min(startNs), max(endNs) FROM COMMUNICATION_OP UNION ALL "
                    "SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                    f"WHERE s.value NOT IN {KERNEL_TYPES}")
    assert min(s for s, _ in spans) == lo - 10**9 and max(e for _, e in spans) == hi + 10**9
    assert db_breakdown(load_profile(str(db), OPTS)).e2e_ns == hi - lo + 2 * 10**9


def test_replayed_run_left_when_stamps_placed_every_pmu_set_takes_the_set_of_its_rank(tmp_path: Path) -> None:
    """A replayed task whose PMU sets a stamp all placed in other runs: a run left over takes the set of its rank
    among the runs, the last set where there are fewer (as for unstamped sets), not the first. Synthetic: the
    excerpt's first cube task run three times (TASK copies 1 s and 2 s later), its own set stamped at the first
    run's start and a second, all-zero set stamped at the second run's start; the third run takes the zero set."""
    (gid, mac) = sql(L1, "SELECT p.globalTaskId, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value = 'aic_mac_time' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1")[0]
    (start,) = sql(L1, "SELECT startNs FROM TASK WHERE globalTaskId = ?", (gid,))[0]
    copies = [f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid} AND startNs = {start}",
              "UPDATE TASK SET startNs = startNs + {d}, endNs = endNs + {d} "
              "WHERE rowid = (SELECT max(rowid) FROM TASK)"]
    db = _db(tmp_path, *(s.format(d=d * 10**9) for d in (1, 2) for s in copies),
             "ALTER TABLE TASK_PMU_INFO ADD COLUMN timestampNs INTEGER",
             f"UPDATE TASK_PMU_INFO SET timestampNs = {start} WHERE globalTaskId = {gid}",
             f"INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, 0, {start + 10**9} FROM TASK_PMU_INFO "
             f"WHERE globalTaskId = {gid}")
    assert sql(db, "SELECT startNs FROM TASK WHERE globalTaskId = ? ORDER BY startNs", (gid,)) == [
        (start,), (start + 10**9,), (start + 2 * 10**9,)]
    p = load_profile(str(db), OPTS)
    kx = p.extra["kernel_extra"]
    sel = (kx["global_task_id"] == gid).to_numpy()
    runs = sorted(zip(p.kernels["ts"].to_numpy()[sel].tolist(), kx["aic_mac_time"].to_numpy()[sel].tolist(),
                      strict=True))
    assert runs == [(start, mac), (start + 10**9, 0.0), (start + 2 * 10**9, 0.0)]


def test_lccl_counts_communication_ops_not_tasks_of_that_name(tmp_path: Path) -> None:
    """Lccl time is that of the communication ops whose opName is kernel_aivec (reference-1 §7.3.3); a
    communication task of that name is no Lccl op. No DB sample has Lccl: the excerpt's first communication op
    renamed Kernel_AIVEC (any case matches) and one communication task typed with the same text (synthetic); the
    expected time is that op's endNs - startNs, 1 op (SQL)."""
    db = _db(tmp_path, "INSERT INTO STRING_IDS VALUES (990003, 'Kernel_AIVEC')",
             "UPDATE COMMUNICATION_OP SET opName = 990003 WHERE rowid = "
             "(SELECT rowid FROM COMMUNICATION_OP ORDER BY startNs LIMIT 1)",
             "UPDATE COMMUNICATION_TASK_INFO SET taskType = 990003 WHERE rowid = "
             "(SELECT max(rowid) FROM COMMUNICATION_TASK_INFO)")
    (dur,) = sql(db, "SELECT endNs - startNs FROM COMMUNICATION_OP WHERE opName = 990003")[0]
    assert sql(db, "SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN TASK t USING (globalTaskId) "
                   "WHERE c.taskType = 990003") == [(1,)]
    bd = db_breakdown(load_profile(str(db), OPTS))
    assert (bd.lccl.ns, bd.lccl.count) == (dur, 1) and dur > 0


def test_mc2_kernels_walk_the_sqe_tasks_in_connection_id_order(tmp_path: Path) -> None:
    """Compute tasks are visited sorted by connectionId, then (stably) by flow start (reference-1 §7.3.2), and the
    C_CORE_SQE pointer only moves forward (§5.6 quirk): of two MC2 kernels without a flow, the later one with the
    smaller connectionId is walked first and takes its SQE pair, after which the earlier one finds none. No sample
    has MC2: the excerpt's first two compute tasks over 1 us renamed MatmulAllReduce (A) and MatmulReduceScatter (B),
    given unlinked connectionIds (B's smaller), and two 10 ns C_CORE_SQE tasks ending inside each (synthetic).
    Expected by hand: B = its second SQE end - its first; A = 0."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, db)
    con = sqlite3.connect(db)
    try:
        (a_gid, a_start, a_end), (b_gid, b_start, b_end) = con.execute(
            f"SELECT t.globalTaskId, t.startNs, t.endNs {COMPUTE} WHERE t.endNs - t.startNs > 1000 "
            "ORDER BY t.startNs LIMIT 2").fetchall()
        assert a_end < b_start
        ends = {}
        for gid, name, cid, start, end in ((a_gid, "MatmulAllReduce", 10**9 + 2, a_start, a_end),
                                           (b_gid, "MatmulReduceScatter", 10**9 + 1, b_start, b_end)):
            con.execute("UPDATE COMPUTE_TASK_INFO SET name = ? WHERE globalTaskId = ?", (string_id(con, name), gid))
            con.execute("UPDATE TASK SET connectionId = ? WHERE globalTaskId = ?", (cid, gid))
            ends[name] = [start + (end - start) // 4, start + 3 * (end - start) // 4]
            for k, e in enumerate(ends[name]):
                con.execute("INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, "
                            "taskType, streamId, taskId) VALUES (?, ?, 0, -1, ?, 0, ?, 99, ?)",
                            (e - 10, e, 10**9 + 2 * cid + k, string_id(con, "C_CORE_SQE"), 10**6 + k))
        con.commit()
    finally:
        con.close()
    assert not sql(db, "SELECT 1 FROM CONNECTION_IDS WHERE connectionId > ?", (10**9,))
    mc2 = db_breakdown(load_profile(str(db), OPTS)).mc2
    b = ends["MatmulReduceScatter"]
    assert (mc2["MatmulAllReduce"].communication_ns, mc2["MatmulReduceScatter"].communication_ns) == (0, b[1] - b[0])
    assert (mc2["MatmulAllReduce"].ns, mc2["MatmulReduceScatter"].ns) == (a_end - a_start, b_end - b_start)


def test_communication_task_ending_before_it_starts_lasts_zero(tmp_path: Path) -> None:
    """A communication task (COMMUNICATION_TASK_INFO ⋈ TASK) whose TASK end is before its start reads 0 long, as a
    compute task does, not a negative time in the wait / transmit sums; the warning counts it once, under TASK.
    Synthetic: the first communication task's end written 1 ns before its start (the least: a mutant reading
    -1 ns as a duration survived the 5 ns this test wrote before)."""
    (gid, start) = sql(L1, "SELECT t.globalTaskId, t.startNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                           "ON c.globalTaskId = t.globalTaskId ORDER BY t.startNs LIMIT 1")[0]
    db = _db(tmp_path, f"UPDATE TASK SET endNs = startNs - 1 WHERE globalTaskId = {gid}")
    p = load_profile(str(db), OPTS)
    tasks = p.comm.query("lane == 'task'")
    assert tasks.loc[tasks["ts"] == start, "dur"].tolist() == [0] and tasks["dur"].min() == 0
    assert f"{db}: 1 row(s) end before they start (1 in TASK); their duration is read as 0" in p.warnings


def test_replayed_tasks_on_the_step_bounds_are_in_the_step(tmp_path: Path) -> None:
    """A step holds the tasks starting at its bounds (``startNs BETWEEN start AND end``), also on the path that
    pairs a graph replay's runs with their info rows: the excerpt with its lowest COMMUNICATION_TASK_INFO
    globalTaskId given a second run 1 s later and a second info row (synthetic, so that the table repeats an id),
    and step 50 cut to open at the 3rd communication task's start and close at the 3rd last one's. By SQL: the
    step's communication task starts, the two bound tasks among them (a mutant reading the bounds as exclusive on
    that path dropped them, while the plain path's SQL kept them)."""
    (gid,) = sql(L1, "SELECT min(globalTaskId) FROM COMMUNICATION_TASK_INFO")[0]
    starts = [t for (t,) in sql(L1, "SELECT t.startNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c ON "
                                    "c.globalTaskId = t.globalTaskId ORDER BY t.startNs")]
    lo, hi = starts[2], starts[-3]
    db = _db(tmp_path, f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
             "UPDATE TASK SET startNs = startNs + 1000000000, endNs = endNs + 1000000000 "
             "WHERE rowid = (SELECT max(rowid) FROM TASK)",
             f"INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = {gid}",
             f"UPDATE STEP_TIME SET startNs = {lo}, endNs = {hi} WHERE id = 50")
    want = sorted(t for (t,) in sql(db, "SELECT startNs FROM TASK WHERE globalTaskId IN (SELECT globalTaskId FROM "
                                        "COMMUNICATION_TASK_INFO) AND startNs BETWEEN ? AND ?", (lo, hi)))
    assert want[0] == lo and want[-1] == hi
    comm = load_profile(str(db), build_options(enable_communication_compare=True)[0], step=50).comm
    assert comm.loc[comm["lane"] == "task", "ts"].tolist() == want


def test_a_step_keeps_the_python_frames_open_at_its_start_but_not_the_modules(tmp_path: Path) -> None:
    """A module (an nn.Module python function) counts in a step only when it starts in it, while other Python frames
    that began before the step and are still open stay (a call stack's outer frames; docs/differences.md). The
    excerpt's one step cut in two at the start of its first ``nn.Module: Conv2d_0`` frame (synthetic STEP_TIME rows):
    step 51's python functions are, by SQL, the trace rows starting in [cut, end] plus the frames that began before
    the cut and end at or after it, less the modules among the latter: DistributedDataParallel_0, AlexNet_0 and
    Sequential_0, which hold Conv2d_0. A mutant keeping those three survived (no module of the samples' one step
    began before it)."""
    (end,) = sql(L1, "SELECT endNs FROM STEP_TIME WHERE id = 50")[0]
    names = "FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name WHERE p.type = 50003"
    (cut,) = sql(L1, f"SELECT min(CAST(p.startNs AS INTEGER)) {names} AND s.value = 'nn.Module: Conv2d_0'")[0]
    db = _db(tmp_path, f"UPDATE STEP_TIME SET endNs = {cut - 1} WHERE id = 50",
             f"INSERT INTO STEP_TIME VALUES (51, {cut}, {end})")
    rows = sql(db, f"SELECT s.value, CAST(p.startNs AS INTEGER) {names} AND CAST(p.startNs AS INTEGER) <= ? AND "
                   "(CAST(p.startNs AS INTEGER) >= ? OR CAST(p.endNs AS INTEGER) >= ?)", (end, cut, cut))
    opened = [(n, t) for n, t in rows if t < cut and n.startswith("nn.Module:")]
    assert sorted(n for n, _ in opened) == ["nn.Module: AlexNet_0", "nn.Module: DistributedDataParallel_0",
                                            "nn.Module: Sequential_0"]
    assert sum(t < cut for _, t in rows) > len(opened)  # outer frames (main.py ...) that are no module stay
    got = load_profile(str(db), OPTS, step=51).python_functions
    kept = sorted(r for r in rows if r not in opened)
    assert sorted(zip(got["name"].tolist(), got["ts"].tolist(), strict=True)) == kept


def test_operator_memory_name_id_minus_one_without_any_text_is_a_reference_too(tmp_path: Path) -> None:
    """STRING_IDS emptied (every name a reference to no text): the first-allocated OP_MEMORY block named -1 is
    counted among those references as it is under its own name id, the count the same (mutation audit mut66b: where
    STRING_IDS holds nothing, -1 was left out as if NULL). Synthetic, on the l1 excerpt."""
    (a1,), = sql(L1, "SELECT allocationTime FROM OP_MEMORY ORDER BY allocationTime LIMIT 1")
    opts = build_options(enable_memory_compare=True)[0]

    def said(folder: str, *edits: str) -> list[str]:
        db = _db(tmp_path / folder, "DELETE FROM STRING_IDS", *edits)
        return [w.split(": ", 1)[1] for w in load_profile(str(db), opts).warnings
                if "name reference(s) point to no text" in w]

    own = said("own")
    assert len(own) == 1  # its count is the same with the block named -1, whatever it is
    assert said("minus", f"UPDATE OP_MEMORY SET name = -1 WHERE allocationTime = {a1}") == own


def test_a_torch_row_starting_at_int64_least_is_refused_naming_the_file(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    """A PYTORCH_API startNs of int64's least (-2**63, stored as the TEXT current exports write) is no time: the
    run exits 1 with one line naming the file, where the module comparison took the instant before the op's start
    (wrapped to int64's greatest) and stopped with an internal error (dbfuzz66: every tenth row of the level-2
    excerpt). Synthetic: the L1 excerpt's first op (by SQL) given that start; one above it is read (its rows said
    as lasting over a week)."""
    (rowid,) = sql(L1, "SELECT min(rowid) FROM PYTORCH_API WHERE type = 50001")[0]
    least = _db(tmp_path, f"UPDATE PYTORCH_API SET startNs = '{-2**63}' WHERE rowid = {rowid}", folder="least")
    with pytest.raises(ProfileError) as err:
        load_profile(str(least), OPTS)
    assert str(err.value) == (f"{least}: table PYTORCH_API: column startNs holds -9223372036854775808, int64's "
                              "least, which is no time (a damaged export?): no comparison can place a row starting "
                              "there")
    out = tmp_path / "out"
    code, _, stderr = run_inproc(capsys, "-bp", str(L1), "-d", str(least), "-o", str(out))
    assert (code, error_lines(stderr)) == (1, [f"error: {err.value} (comparison side)"])
    assert not (out.exists() and os.listdir(out))
    above = _db(tmp_path, f"UPDATE PYTORCH_API SET startNs = '{-2**63 + 1}' WHERE rowid = {rowid}", folder="above")
    ops = load_profile(str(above), OPTS).ops
    assert ops["ts"].min() == -2**63 + 1


_NEGATIVE_LINKS = {
    "TASK.connectionId": ("UPDATE TASK SET connectionId = -5 - rowid WHERE rowid % 10 = 1",
                          "FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId WHERE "
                          "t.connectionId < -1 ORDER BY t.startNs", "those computing tasks link to no operator"),
    "PYTORCH_API.connectionId": ("UPDATE PYTORCH_API SET connectionId = -5 - rowid WHERE rowid % 10 = 1 AND "
                                 "connectionId IS NOT NULL",
                                 "FROM PYTORCH_API t WHERE t.type = 50001 AND t.connectionId < -1 ORDER BY t.rowid",
                                 "those rows link to no task (their operators own no kernel) and no dequeue to its "
                                 "enqueue"),
    "CONNECTION_IDS.connectionId": ("UPDATE CONNECTION_IDS SET connectionId = -5 - rowid WHERE rowid % 10 = 1",
                                    "FROM CONNECTION_IDS t WHERE t.connectionId < -1 ORDER BY t.rowid",
                                    "those rows link no operator to a task and no dequeue to its enqueue"),
}


@pytest.mark.parametrize("column", list(_NEGATIVE_LINKS))
def test_a_negative_connection_id_is_said_as_linking_nothing(tmp_path: Path, column: str) -> None:
    """A connection id below -1 (msprof writes them from 0; -1 reads as NULL) links nothing, as a NULL one: said with
    its count and first value, where the kernels it cost their operator moved without a word (dbfuzz66: -5 in every
    tenth TASK row moved 6 of the L1 excerpt's kernels from Conv to Vector in the breakdown). Synthetic: every
    tenth row of the excerpt given -5 - rowid; the count and the first (in the order the loader reads: kernels by
    start, the other tables in table order; torch ops alone, as a run without the memory comparison reads no
    Enqueue / Dequeue row) are SQL's."""
    edit, rows, effect = _NEGATIVE_LINKS[column]
    db = _db(tmp_path, edit)
    n, = sql(db, f"SELECT count(*) {rows}")[0]
    first, = sql(db, f"SELECT t.connectionId {rows} LIMIT 1")[0]
    assert n > 10 and first < -5
    opts = build_options(enable_profiling_compare=True)[0]
    said = [w for w in load_profile(str(db), opts).warnings if "are negative, no connection id" in w]
    assert said == [f"{db}: {n:,} {column} value(s) are negative, no connection id msprof writes (the first: "
                    f"{first}): {effect}"]
    assert not [w for w in load_profile(str(L1), opts).warnings if "negative" in w]


def test_a_communication_op_written_twice_is_said_and_counted_as_the_original_does(tmp_path: Path) -> None:
    """A COMMUNICATION_OP row repeating an earlier one in every column read (a table joined from two copies, which
    loses opId's key) counts twice, as the original's SQL reads it, and is said as OP_MEMORY's repeats are: one of
    the L1 excerpt's 4 ops written twice made CommunicationCompare's Calls 4 -> 5 without a word (dbfuzz66). The op
    count is SQL's; a row differing in opId alone is another op, no repeat."""
    keyless = ("CREATE TABLE t AS SELECT * FROM COMMUNICATION_OP", "DROP TABLE COMMUNICATION_OP",
               "CREATE TABLE COMMUNICATION_OP AS SELECT * FROM t", "DROP TABLE t")
    twice = _db(tmp_path, *keyless, "INSERT INTO COMMUNICATION_OP SELECT * FROM COMMUNICATION_OP WHERE rowid = 2",
                folder="twice")
    assert sql(twice, "SELECT count(*), count(DISTINCT opId) FROM COMMUNICATION_OP") == [(5, 4)]
    opts = build_options(enable_communication_compare=True)[0]
    p = load_profile(str(twice), opts)
    assert int((p.comm["lane"] == "op").sum()) == 5
    assert f"{twice}: 1 COMMUNICATION_OP row(s) repeat an earlier row in every column read (the same communication " \
           "op written again, as in a file joined from two copies); each row counts, as in the original, so " \
           "CommunicationCompare counts those ops' calls and time more than once" in p.warnings
    other = _db(tmp_path, *keyless, "CREATE TABLE t AS SELECT * FROM COMMUNICATION_OP WHERE rowid = 2",
                "UPDATE t SET opId = opId + 100", "INSERT INTO COMMUNICATION_OP SELECT * FROM t", folder="other")
    assert not [w for w in load_profile(str(other), opts).warnings + load_profile(str(L1), opts).warnings
                if "repeat" in w]


def test_torch_rows_written_twice_are_said_and_counted_as_the_original_does(tmp_path: Path) -> None:
    """PYTORCH_API rows repeating an earlier row in every column read (a table joined from two copies) are read as
    written, as the original reads them, and said as a trace's repeated host events are: every 50th row of the L1
    excerpt written again made an op's ModuleCompare Number 1 -> 2 without a word (dbfuzz66). The count is SQL's:
    the rows of the kinds a full run reads (op, queue, Python: 50001-50003) written twice; a copy whose end differs
    by 1 ns is another call, no repeat."""
    again = "INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API WHERE rowid % 50 = 7"
    twice = _db(tmp_path, again, folder="twice")
    (n,) = sql(twice, "SELECT count(*) FROM PYTORCH_API WHERE rowid % 50 = 7 AND rowid <= 2460 AND type IN "
                      "(50001, 50002, 50003)")[0]
    assert n == 50
    p = load_profile(str(twice), OPTS)
    assert f"{twice}: {n} PYTORCH_API row(s) repeat an earlier row in every column read (the same call written " \
           "again, as in a file joined from two copies); each row counts, as in the original, so ApiCompare and the " \
           "operator and module sheets count those calls more than once" in p.warnings
    assert len(p.ops) == len(load_profile(str(L1), OPTS).ops) + sql(
        twice, "SELECT count(*) FROM PYTORCH_API WHERE rowid > 2460 AND type = 50001")[0][0]
    other = _db(tmp_path, again, "UPDATE PYTORCH_API SET endNs = CAST(CAST(endNs AS INTEGER) + 1 AS TEXT) WHERE "
                                 "rowid > 2460", folder="other")
    assert not [w for w in load_profile(str(other), OPTS).warnings + load_profile(str(L1), OPTS).warnings
                if "repeat an earlier row" in w]


#: Every profiler DB among the shared samples: torch_npu's four level exports (both ranks of level0 and level1,
#: rank 0 of level2) and msinsight's full_db msprof_0.db (PROVENANCE.md).
DB_SAMPLES = sorted((Path(__file__).resolve().parents[1].parent / "shared" / "samples").rglob("*.db"))
#: The columns other than OP_MEMORY.name that the loader resolves through STRING_IDS, reading NULL as -1.
STRING_COLUMNS = {"PYTORCH_API": ("name", "inputShapes", "inputDtypes"),
                  "COMPUTE_TASK_INFO": ("name", "opType", "taskType", "inputShapes"),
                  "COMMUNICATION_OP": ("opName", "opType", "groupName"),
                  "COMMUNICATION_TASK_INFO": ("taskType", "groupName"), "TASK": ("taskType",)}


@pytest.mark.skipif(not any("ascend_pytorch_profiler" in p.name for p in DB_SAMPLES), reason="shared samples absent")
def test_no_profiler_writes_a_string_id_of_minus_one() -> None:
    """Why a -1 in a name or type column outside OP_MEMORY (which tells NULL apart by a flag column) is read as
    NULL, not as a STRING_IDS id (``_Db.text``): in every DB sample STRING_IDS numbers its ids from 0 (CANN's from
    0, torch_npu's from 2**28 and 2**29: the writers' ranges, none negative), and no name column holds a negative
    id, where NULL is common (PYTORCH_API.inputShapes of an op without inputs: 1,909 of 2,460 rows in each
    torch_npu export). A -1 there is no reference a profiler wrote; reading it as the id would cost a NULL flag per
    column in every query for a file no profiler writes."""
    dbs = [p for p in DB_SAMPLES if p.name.startswith(("ascend_pytorch_profiler_", "msprof_"))]
    assert len(dbs) == 6
    for db in dbs:
        tables = {t for (t,) in sql(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert sql(db, "SELECT min(id) >= 0, count(*) > 1000 FROM STRING_IDS") == [(1, 1)], db
        for table, columns in STRING_COLUMNS.items():
            if table in tables:
                for column in columns:
                    assert sql(db, f"SELECT count(*) FROM {table} WHERE {column} < 0") == [(0,)], (db, column)
        if "PYTORCH_API" in tables:
            ranges = sql(db, "SELECT id / 268435456, min(id), count(*) FROM STRING_IDS GROUP BY 1 ORDER BY 1")
            assert [(r, lo) for r, lo, _ in ranges] == [(0, 0), (1, 268435456), (2, 536870912)], db
            assert sql(db, "SELECT sum(inputShapes IS NULL), count(*) FROM PYTORCH_API") == [(1909, 2460)], db
