"""Rules of session 63's damage notes that mutation testing (mut64) found untested: each test here fails on a
mutant of that code which passed every other test file that covers it (a bound taken as ">=", a list cut to its
first id, a condition dropped, a column left out of a comparison).

Inputs are real exports edited in a copy: the DB level-1 excerpt (tests/data/db/l1, its README) by SQL, or
msinsight's samples (``../shared/samples``, PROVENANCE.md; skipped without them). Expected figures come from plain
SQL on the same file or are worked out by hand from the rows written, never from the loader.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from dbutil import edited_copy, sql

from msprof_compare.errors import ProfileError, UsageError
from msprof_compare.loaders import load_profile
from msprof_compare.loaders.numparse import MAX_DURATION_NS, MAX_RESERVED_BYTES
from msprof_compare.options import build_options

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
OPTS, _ = build_options()
STEP = sql(L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
#: A week in ns, written out: the bound of any duration (a step or block lasting longer is damaged).
WEEK_NS = 7 * 24 * 3600 * 10**9


def _db(tmp_path: Path, *statements: str) -> Path:
    """An edited copy of the level-1 excerpt (the loader reads the DB family from the file name)."""
    return edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", *statements)


def _said(warnings: list[str], words: str) -> list[str]:
    return [w for w in warnings if words in w]


# --------------------------------------------------------------------------- the file itself


def test_a_db_cut_to_its_first_byte_is_not_said_empty(tmp_path: Path) -> None:
    """SQLite opens a file too short for its header as a database without tables, as it does a 0-byte one; only a
    0-byte file is "empty (0 bytes)" (mutant: the empty test taken as "size <= 1"). The excerpt cut to its first
    byte (a copy stopped early) was said to lack tables TASK and STRING_IDS; it is said cut short now, as its bytes
    begin SQLite's header, and a byte that does not ('x') is said to be no SQLite file."""
    f = tmp_path / "ascend_pytorch_profiler_0.db"
    f.write_bytes(L1.read_bytes()[:1])
    assert f.stat().st_size == 1 and f.read_bytes() == b"S"
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == (f"{f}: the file is cut short: 1 byte, fewer than a SQLite database's 100-byte "
                            "header, which it begins as; a partial copy, or a write that did not finish: copy it "
                            "again in full")
    f.write_bytes(L1.read_bytes()[:99])  # its header but its last byte: plural, as "(2 bytes)" is
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value).startswith(f"{f}: the file is cut short: 99 bytes, fewer than a SQLite database's 100-byte")
    f.write_bytes(b"x")
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == f"{f}: not a SQLite database: the file (1 byte) does not begin with SQLite's header"


def test_a_db_cut_short_is_said_so(tmp_path: Path) -> None:
    """A DB shorter than its pages: cut within its last page (one byte short) it loaded as whole, the lost bytes
    read as zeros, without a word (cut at 396,000 bytes: "115 TASK_PMU_INFO row(s) have no globalTaskId"); cut at
    100,000 bytes it was "not a readable SQLite database (database disk image is malformed)". Both are said cut
    short now, with the size the excerpt has (its page count times its page size, by SQLite's PRAGMAs)."""
    (pages,), = sql(L1, "PRAGMA page_count")
    (page,), = sql(L1, "PRAGMA page_size")
    whole = L1.stat().st_size
    assert (pages, page, whole) == (97, 4096, pages * page)
    f = tmp_path / "ascend_pytorch_profiler_0.db"
    for size in (whole - 1, 396_000, 100_000, 100):
        f.write_bytes(L1.read_bytes()[:size])
        with pytest.raises(ProfileError) as e:
            load_profile(str(f), OPTS)
        assert str(e.value) == (f"{f}: the file is cut short: {size:,} bytes where its header says 397,312 (97 "
                                "pages of 4,096 bytes); a partial copy, or a write that did not finish: copy it "
                                "again in full")
    f.write_bytes(L1.read_bytes() + bytes(10))  # bytes beyond its pages: no cut
    assert len(load_profile(str(f), OPTS).ops) == len(load_profile(str(L1), OPTS).ops)


def test_a_db_of_64_kib_pages_cut_short_is_said_so(tmp_path: Path) -> None:
    """SQLite writes a page size of 65,536 as 1 in the header: the excerpt re-paged to 64 KiB pages (VACUUM) and
    cut one byte short is said with its size in 64 KiB pages (page count and size by SQLite's PRAGMAs)."""
    f = _db(tmp_path, "PRAGMA page_size = 65536", "VACUUM")
    (pages,), = sql(f, "PRAGMA page_count")
    (page,), = sql(f, "PRAGMA page_size")
    whole = f.read_bytes()
    assert page == 65536 and whole[16:18] == b"\x00\x01" and len(whole) == pages * page
    assert len(load_profile(str(f), OPTS).ops) == len(load_profile(str(L1), OPTS).ops)  # whole: read as is
    f.write_bytes(whole[:-1])
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == (f"{f}: the file is cut short: {len(whole) - 1:,} bytes where its header says "
                            f"{len(whole):,} ({pages:,} pages of 65,536 bytes); a partial copy, or a write that "
                            "did not finish: copy it again in full")


def test_a_stale_page_count_in_the_header_is_not_read(tmp_path: Path) -> None:
    """The header's page count holds only where its "version-valid-for" number (bytes 92-95) equals the change
    counter (bytes 24-27); a writer that does not keep it leaves a stale count, which SQLite ignores (it counts the
    file's pages). The whole excerpt with a page count of 200 (of its 97) and a valid-for number one behind the
    counter (synthetic bytes) reads as the excerpt does, with no word of a cut."""
    whole = bytearray(L1.read_bytes())
    count = int.from_bytes(whole[24:28], "big")
    whole[28:32] = (200).to_bytes(4, "big")
    whole[92:96] = (count - 1).to_bytes(4, "big")
    f = tmp_path / "ascend_pytorch_profiler_0.db"
    f.write_bytes(bytes(whole))
    p = load_profile(str(f), OPTS)
    assert len(p.ops) == len(load_profile(str(L1), OPTS).ops) > 0
    assert _said(p.warnings, "cut short") == []


def test_a_db_whose_header_lost_its_magic_is_not_read_as_cut(tmp_path: Path) -> None:
    """The page count is read only from a header that begins with SQLite's 16 bytes: the excerpt's first 100,000
    bytes with those bytes overwritten ('x' * 16, synthetic) is no SQLite file to SQLite, said so, not "cut short"
    by the rest of its header (97 pages of 4,096 bytes, which would say 397,312), in the words of any file that does
    not begin with that header."""
    head = bytearray(L1.read_bytes()[:100_000])
    head[:16] = b"x" * 16
    f = tmp_path / "ascend_pytorch_profiler_0.db"
    f.write_bytes(bytes(head))
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == f"{f}: not a SQLite database: the file (100,000 bytes) does not begin with SQLite's header"


# --------------------------------------------------------------------------- STEP_TIME


def test_a_step_of_exactly_a_week_is_a_step(tmp_path: Path) -> None:
    """The bound is "over a week": step 50 stretched back to last exactly 604,800 s is a step (it then holds every
    task before its end, as a step that long would), one ns more is none, named (mutant: ">=" of the bound)."""
    assert MAX_DURATION_NS == WEEK_NS
    _, e50 = STEP
    week = _db(tmp_path, f"UPDATE STEP_TIME SET startNs = {e50 - WEEK_NS} WHERE id = 50")
    p = load_profile(str(week), OPTS)
    assert _said(p.warnings, "STEP_TIME") == []
    assert p.extra["steps"]["id"].tolist() == [50]
    (tmp_path / "more").mkdir()
    more = edited_copy(L1, tmp_path / "more" / "ascend_pytorch_profiler_0.db",
                       f"UPDATE STEP_TIME SET startNs = {e50 - WEEK_NS - 1} WHERE id = 50")
    p = load_profile(str(more), OPTS)
    assert _said(p.warnings, "STEP_TIME") == [
        f"{more}: STEP_TIME step(s) 50 last over a week (a startNs of 0, or another damaged time?); they are no steps"]
    assert p.extra["steps"]["id"].tolist() == []


def test_every_step_that_ends_before_it_starts_is_named(tmp_path: Path) -> None:
    """Two STEP_TIME rows added after step 50 end 1 us before they start (synthetic, ids 52 then 51 as written):
    the note names both, in the table's order (mutant: the first alone)."""
    _, e50 = STEP
    db = _db(tmp_path, f"INSERT INTO STEP_TIME VALUES (52, {e50 + 3000}, {e50 + 2000})",
             f"INSERT INTO STEP_TIME VALUES (51, {e50 + 5000}, {e50 + 4000})")
    p = load_profile(str(db), OPTS)
    assert _said(p.warnings, "STEP_TIME") == [
        f"{db}: STEP_TIME step(s) 52, 51 end before they start; no data lies in them"]


# --------------------------------------------------------------------------- TASK rows written again

#: TASK's columns after its times, for a copy of its rows at other times.
TASK_REST = "deviceId, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId, modelId, depth"


def test_a_replay_is_no_repeated_task_but_a_row_at_its_start_again_is(tmp_path: Path) -> None:
    """Every TASK row run again 1 us later (a graph replay: its globalTaskIds repeat, at other starts) and the
    first row written again as it is: one row repeats a globalTaskId and its startNs; the replays are no such row
    (mutant: repeats grouped by globalTaskId alone, which counted every replay)."""
    (n,), = sql(L1, "SELECT count(*) FROM TASK")
    assert sql(L1, "SELECT count(DISTINCT globalTaskId), count(DISTINCT startNs) FROM TASK") == [(n, n)]
    db = _db(tmp_path, f"INSERT INTO TASK SELECT startNs + 1000, endNs + 1000, {TASK_REST} FROM TASK",
             "INSERT INTO TASK SELECT * FROM TASK WHERE rowid = 1")
    p = load_profile(str(db), OPTS)
    assert [w.split(" (")[0] for w in _said(p.warnings, "repeat an earlier row's")] == [
        f"{db}: 1 TASK row(s) repeat an earlier row's globalTaskId and startNs"]


# --------------------------------------------------------------------------- Kineto step markers

ALEXNET = Path(__file__).parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def _alexnet_markers(tmp_path: Path, *edits: dict) -> str:
    """The H200 AlexNet trace (tests/data/kineto, its README) with its one step marker, the user_annotation
    ``ProfilerStep#50``, written again once per ``edits`` item (its fields changed so, each copy 1 ms after the
    one before) in place of the marker: the written trace's path."""
    doc = json.loads(gzip.decompress(ALEXNET.read_bytes()))
    marks = [e for e in doc["traceEvents"]
             if e.get("cat") == "user_annotation" and "ProfilerStep#" in str(e.get("name", ""))]
    assert [e["name"] for e in marks] == ["ProfilerStep#50"]
    doc["traceEvents"].remove(marks[0])
    for i, edit in enumerate(edits):
        doc["traceEvents"].append({**marks[0], "ts": marks[0]["ts"] + 1000 * i, **edit})
    path = tmp_path / "t.pt.trace.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_python_step_markers_are_counted_by_event_and_the_first_named(tmp_path: Path) -> None:
    """Three Python functions named as step markers no host op marks, two of them ``ProfilerStep#50`` (then
    ``ProfilerStep#51``, last): the note counts the 3 events, not the 2 names, and names the first in time
    (mutants: the count of distinct names; the last event named)."""
    py = {"cat": "python_function"}
    path = _alexnet_markers(tmp_path, py, py, {**py, "name": "ProfilerStep#51"})
    opts, _ = build_options(enable_operator_compare=True)
    assert [w for w in load_profile(path, opts).warnings if "step marker" in w] == [
        f"{path}: 3 Python functions named as a step marker whose step no host op marks (the first: "
        "'ProfilerStep#50'): steps are read from the host ops (cpu_op, user_annotation), so that step is none (the "
        "step count check does not count it)"]


def test_host_step_markers_in_another_case_name_the_first(tmp_path: Path) -> None:
    """Two host events named as step markers in another case, ``profilerstep#50`` then ``PROFILERSTEP#51`` 1 ms
    later: both counted, the first in time named (mutant: the last)."""
    path = _alexnet_markers(tmp_path, {"name": "profilerstep#50"}, {"name": "PROFILERSTEP#51"})
    assert [w.split(": the step scan")[0] for w in load_profile(path, OPTS).warnings if "another case" in w] == [
        f"{path}: 2 host events named as a step marker in another case (the first: 'profilerstep#50')"]


def test_an_info_row_of_no_task_is_not_said_twice(tmp_path: Path) -> None:
    """COMMUNICATION_TASK_INFO's second row written again (its task has one run: one row pairs with none) and its
    first row's globalTaskId moved by 10**9, which no TASK row holds: each is said once, the moved row as having
    no TASK row only; the note of rows that outnumber their task's runs counts only ids TASK holds (mutant: every
    row paired with no run counted there, the moved one too)."""
    db = _db(tmp_path, "INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM COMMUNICATION_TASK_INFO WHERE rowid = 2",
             "UPDATE COMMUNICATION_TASK_INFO SET globalTaskId = globalTaskId + 1000000000 WHERE rowid = 1")
    assert sql(db, "SELECT c.rowid, count(t.globalTaskId) FROM COMMUNICATION_TASK_INFO c LEFT JOIN TASK t "
                   "USING (globalTaskId) WHERE c.rowid IN (1, 2) GROUP BY 1") == [(1, 0), (2, 1)]
    p = load_profile(str(db), OPTS)
    assert _said(p.warnings, "COMMUNICATION_TASK_INFO") == [
        f"{db}: 1 globalTaskId(s) of COMMUNICATION_TASK_INFO have no TASK row (no time); left out",
        f"{db}: 1 COMMUNICATION_TASK_INFO row(s) of a globalTaskId that TASK holds fewer times pair with no TASK run; "
        "left out"]


def test_step_tasks_of_a_damaged_start_leave_the_step_summary(tmp_path: Path) -> None:
    """--base_step 50 with two of its kernels' startNs damaged (int64's greatest; 0): they are said and left out of
    the step, as the note says, so the step's per-type task summary (the breakdown's E2E span and counts) holds the
    TASK rows that start in the step by SQL, and none starts before it (mutant: the damaged rows read as groups of
    their own, then kept, a task starting at 0 in the step)."""
    s50, e50 = STEP
    kernel = ("SELECT t.globalTaskId FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) WHERE t.startNs "
              f"BETWEEN {s50} AND {e50} ORDER BY t.startNs LIMIT 1 OFFSET ")
    db = _db(tmp_path, f"UPDATE TASK SET startNs = {2**63 - 1} WHERE globalTaskId = ({kernel}5)",
             f"UPDATE TASK SET startNs = 0 WHERE globalTaskId = ({kernel}9)")
    (n,), = sql(db, f"SELECT count(*) FROM TASK WHERE startNs BETWEEN {s50} AND {e50} AND endNs IS NOT NULL")
    (first,), = sql(db, f"SELECT min(startNs) FROM TASK WHERE startNs BETWEEN {s50} AND {e50}")
    p = load_profile(str(db), OPTS, 50)
    assert len(_said(p.warnings, "2 TASK row(s) end in the step but start outside it")) == 1
    summary = p.extra["task_summary"]
    assert int(summary["count"].sum()) == n
    assert int(summary["first_start"].min()) == first


def test_communication_tasks_all_of_a_negative_op_id_are_said(tmp_path: Path) -> None:
    """Every COMMUNICATION_TASK_INFO opId -5 (no op holds it; no task names an op of its own): each task loaded is
    one of no op, said and placed by time, as where some tasks keep their ids (mutant: the check skipped when no
    opId is 0 or above)."""
    db = _db(tmp_path, "UPDATE COMMUNICATION_TASK_INFO SET opId = -5")
    (n,), = sql(db, "SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN TASK t USING (globalTaskId)")
    assert n == 296
    p = load_profile(str(db), OPTS)
    assert _said(p.warnings, "name an opId") == [
        f"{db}: 296 COMMUNICATION_TASK_INFO row(s) name an opId that COMMUNICATION_OP lacks; they go to the "
        "communication op whose time holds their start"]


# --------------------------------------------------------------------------- trace_view.json flows renamed

NPU = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"


def test_renamed_flows_of_many_categories_name_three(tmp_path: Path) -> None:
    """The torch excerpt (tests/data/npu, its README) with its first four paired async_npu flows each renamed into a
    category of its own (``c1`` .. ``c4``): their four task ends, which no async_npu flow reaches, are counted in
    one line naming the first three categories and "..." (mutant: two named)."""
    events = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    flows = [e for e in events if e.get("cat") == "async_npu"]
    paired = [i for i in dict.fromkeys(e["id"] for e in flows if e["ph"] == "f")
              if any(e["id"] == i and e["ph"] == "s" for e in flows)][:4]
    assert len(paired) == 4
    for e in flows:
        if e["id"] in paired:
            e["cat"] = f"c{paired.index(e['id']) + 1}"
    out = shutil.copytree(NPU, tmp_path / NPU.name)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.write_text(json.dumps(events))
    assert [w.split(" run from ops")[0] for w in load_profile(str(out), OPTS).warnings
            if "flow(s) of category" in w] == [
        f"{trace}: 4 flow(s) of category 'c1', 'c2', 'c3', ..."]


# --------------------------------------------------------------------------- PYTORCH_API types


def test_an_export_without_ops_says_no_odd_type_it_lacks(tmp_path: Path) -> None:
    """PYTORCH_API without its op rows (all integer-typed: its queue and Python rows stay): the load says why no op
    (none is there) but no row of a type stored other than as an integer, as there is none (mutant: the count of 0
    said, "0 PYTORCH_API row(s) ... (the first: None)")."""
    db = _db(tmp_path, "DELETE FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op')")
    assert sql(db, "SELECT count(*), sum(typeof(type) = 'integer') FROM PYTORCH_API") == [(1600, 1600)]
    p = load_profile(str(db), OPTS)
    assert len(p.ops) == 0
    assert _said(p.warnings, "PYTORCH_API") == []


@pytest.mark.parametrize("enum", [True, False])
def test_an_export_without_ops_says_types_no_kind_id_names_as_beside_ops(tmp_path: Path, enum: bool) -> None:
    """Three Python rows typed -7, then -5 twice (integers no kind id names), in PYTORCH_API without its op rows: they
    were left out unsaid (1,279 Python functions of 1,282), where beside ops they were said. Now the same note as
    the same rows beside the ops give, word for word, with and without the ENUM_API_TYPE table (msprof's ids
    then); count, first and Python functions by SQL (mutants: no count without ops; the last named)."""
    trace = "SELECT rowid FROM PYTORCH_API WHERE type = 50003 ORDER BY 1"
    edits = (f"UPDATE PYTORCH_API SET type = -7 WHERE rowid = ({trace} LIMIT 1)",
             f"UPDATE PYTORCH_API SET type = -5 WHERE rowid IN ({trace} LIMIT 2 OFFSET 1)",
             *(() if enum else ("DROP TABLE ENUM_API_TYPE",)))
    assert sql(L1, "SELECT name FROM ENUM_API_TYPE WHERE id IN (50001, 50003) ORDER BY id") == [("op",), ("trace",)]
    (tmp_path / "ops").mkdir()
    with_ops = _db(tmp_path / "ops", *edits)
    db = _db(tmp_path, "DELETE FROM PYTORCH_API WHERE type = 50001", *edits)
    assert sql(db, "SELECT count(*), sum(type = 50003) FROM PYTORCH_API WHERE type = 50001 OR type = 50003 "
                   "OR type < 0") == [(1282, 1279)]
    assert sql(db, "SELECT type FROM PYTORCH_API WHERE type < 0 ORDER BY rowid") == [(-7,), (-5,), (-5,)]
    lacks = "ENUM_API_TYPE lacks" if enum else "none of msprof's kind ids is, the DB holding no ENUM_API_TYPE ids"
    said = [f"3 PYTORCH_API row(s) have a type {lacks} (the first: -7)"]
    notes = []
    for path in (with_ops, db):
        p = load_profile(str(path), OPTS)
        notes.append([w.split(": ", 1)[1] for w in _said(p.warnings, "PYTORCH_API row(s) have a type")])
        assert [n.split(": those rows")[0] for n in notes[-1]] == said
    assert notes[0] == notes[1]
    assert len(p.ops) == 0 and len(p.python_functions) == 1279


def test_an_export_without_ops_says_digits_of_no_kind_as_beside_ops(tmp_path: Path) -> None:
    """In a type column of no affinity, three Python rows typed 7000 (an integer between msprof's ids, none of
    them), '-9' (digits text of no kind) and 20 digits (beyond int64: no integer), without op rows and beside them:
    the same two notes, the digits counted with the integer as of no kind, the 20 digits as stored other than as
    an integer (mutants: the run of known ids taken from the least to the greatest, which passes over 7000; digits
    text of no kind not read without ops). Python functions by SQL."""
    trace = "SELECT rowid FROM PYTORCH_API WHERE type = 50003 ORDER BY 1"
    edits = (*_NO_AFFINITY, f"UPDATE PYTORCH_API SET type = 7000 WHERE rowid = ({trace} LIMIT 1)",
             f"UPDATE PYTORCH_API SET type = '-9' WHERE rowid = ({trace} LIMIT 1)",
             f"UPDATE PYTORCH_API SET type = '{'9' * 20}' WHERE rowid = ({trace} LIMIT 1)")
    (tmp_path / "ops").mkdir()
    with_ops = _db(tmp_path / "ops", *edits)
    db = _db(tmp_path, "DELETE FROM PYTORCH_API WHERE type = 50001", *edits)
    assert sql(db, "SELECT type FROM PYTORCH_API WHERE type NOT IN (50002, 50003) ORDER BY rowid") == [
        (7000,), ("-9",), ("9" * 20,)]
    (n,), = sql(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50003")
    notes = []
    for path in (with_ops, db):
        p = load_profile(str(path), OPTS)
        notes.append([w.split(": ", 1)[1].split(": those rows")[0] for w in _said(p.warnings, "PYTORCH_API row(s)")])
    assert notes[0] == notes[1] == [
        f"1 PYTORCH_API row(s) have a type stored other than as an integer (the first: '{'9' * 20}')",
        "2 PYTORCH_API row(s) have a type ENUM_API_TYPE lacks (the first: 7000)"]
    assert len(p.ops) == 0 and len(p.python_functions) == n == 1279


def test_an_export_whose_every_type_is_text_says_so(tmp_path: Path) -> None:
    """Every PYTORCH_API type written as the text 'x' (no op is left): the rows are counted and the first named,
    where there is no op to read beside them (mutant: the count made only where ops are read)."""
    db = _db(tmp_path, "UPDATE PYTORCH_API SET type = 'x'")
    (n,), = sql(db, "SELECT count(*) FROM PYTORCH_API WHERE typeof(type) = 'text'")
    p = load_profile(str(db), OPTS)
    assert len(p.ops) == 0
    assert [w.split(": those rows")[0] for w in _said(p.warnings, "stored other than")] == [
        f"{db}: {n:,} PYTORCH_API row(s) have a type stored other than as an integer (the first: 'x')"]


#: PYTORCH_API rebuilt with a ``type`` column of no affinity, which keeps digits written as text (as the excerpt's
#: INTEGER column would not).
_NO_AFFINITY = (
    "CREATE TABLE P2 (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, "
    "sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, "
    "type, depth INTEGER)",
    "INSERT INTO P2 SELECT startNs, endNs, globalTid, connectionId, name, sequenceNumber, fwdThreadId, inputDtypes, "
    "inputShapes, callchainId, type, depth FROM PYTORCH_API ORDER BY rowid",
    "DROP TABLE PYTORCH_API", "ALTER TABLE P2 RENAME TO PYTORCH_API")


def test_types_enum_lacks_name_the_first_and_spare_digits_of_a_kind_it_names(tmp_path: Path) -> None:
    """Two Python rows typed 99 and then 98 (integers ENUM_API_TYPE lacks) and two typed '50004' as text, the digits
    of mstx, a kind ENUM_API_TYPE names and the load does not read: the note counts the two of no kind and names
    the first in the table's order; the mstx rows are left out unsaid, as the same rows typed by integer are
    (mutants: the last named; every row of a kind not read counted)."""
    trace = "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'trace') ORDER BY 1"
    db = _db(tmp_path, *_NO_AFFINITY, f"UPDATE PYTORCH_API SET type = 99 WHERE rowid = ({trace} LIMIT 1)",
             f"UPDATE PYTORCH_API SET type = 98 WHERE rowid = ({trace} LIMIT 1 OFFSET 1)",
             f"UPDATE PYTORCH_API SET type = '50004' WHERE rowid IN ({trace} LIMIT 2 OFFSET 2)")
    assert sql(db, "SELECT type FROM PYTORCH_API WHERE type IN (99, 98, '50004') ORDER BY rowid") == [
        (99,), (98,), ("50004",), ("50004",)]
    assert sql(db, "SELECT name FROM ENUM_API_TYPE WHERE id = 50004") == [("mstx",)]
    clean = load_profile(str(L1), OPTS)
    p = load_profile(str(db), OPTS)
    assert [w.split(": those rows")[0] for w in _said(p.warnings, "PYTORCH_API")] == [
        f"{db}: 2 PYTORCH_API row(s) have a type ENUM_API_TYPE lacks (the first: 99)"]
    assert len(p.python_functions) == len(clean.python_functions) - 4


def test_api_rows_without_a_thread_are_not_said_negative(tmp_path: Path) -> None:
    """Two op rows' globalTid NULL (read as -1, the mark of none) and one -5: the NULL ones are said as missing,
    the -5 alone as negative (mutant: -1 counted as negative too, "3 ... are negative")."""
    op = "SELECT rowid FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op') ORDER BY 1"
    db = _db(tmp_path, f"UPDATE PYTORCH_API SET globalTid = NULL WHERE rowid IN ({op} LIMIT 2)",
             f"UPDATE PYTORCH_API SET globalTid = -5 WHERE rowid = ({op} LIMIT 1 OFFSET 2)")
    p = load_profile(str(db), OPTS)
    said = _said(p.warnings, "globalTid")
    assert [w.split(",")[0] for w in said if "negative" in w] == [
        f"{db}: 1 PYTORCH_API.globalTid value(s) are negative"]
    assert len(said) == 2


# --------------------------------------------------------------------------- CONNECTION_IDS order


def test_connection_ids_out_of_order_within_an_id_are_read_in_order(tmp_path: Path) -> None:
    """CONNECTION_IDS rewritten with each id's connection ids in descending order (ids ascending: 31 ids of the
    excerpt hold several, SQL): an op's first connection id is still its smallest, as msprof writes the table
    (mutant: the table sorted only where its ids go backwards). The op whose link is id 319 (connection ids 962,
    963, 964, 965 by SQL) keeps 962, and every op keeps the clean load's."""
    assert sql(L1, "SELECT group_concat(connectionId) FROM (SELECT connectionId FROM CONNECTION_IDS WHERE id = 319 "
                   "ORDER BY rowid)") == [("962,963,964,965",)]
    db = _db(tmp_path, "CREATE TABLE C2 AS SELECT * FROM CONNECTION_IDS ORDER BY id, connectionId DESC",
             "DROP TABLE CONNECTION_IDS", "ALTER TABLE C2 RENAME TO CONNECTION_IDS")
    assert sql(db, "SELECT connectionId FROM CONNECTION_IDS WHERE id = 319 ORDER BY rowid LIMIT 1") == [(965,)]
    clean, p = load_profile(str(L1), OPTS), load_profile(str(db), OPTS)
    (start,), = sql(L1, "SELECT CAST(startNs AS INTEGER) FROM PYTORCH_API WHERE connectionId = 319")
    assert p.ops.loc[p.ops["ts"] == start, "connection_id"].tolist() == [962]
    assert p.ops["connection_id"].tolist() == clean.ops["connection_id"].tolist()


# --------------------------------------------------------------------------- OP_MEMORY


def test_a_block_of_exactly_one_petabyte_is_a_size(tmp_path: Path) -> None:
    """The bound is "over 1 PB" (10**15 bytes: no reserved total is larger): the first OP_MEMORY block at exactly
    10**15 bytes is read as written, at 10**15 + 1 it is said and read as 0 (mutant: ">=" of the bound)."""
    assert MAX_RESERVED_BYTES == 10**15
    opts, _ = build_options(enable_memory_compare=True)
    said = []
    for size in (10**15, 10**15 + 1):
        (tmp_path / str(size)).mkdir()
        db = edited_copy(L1, tmp_path / str(size) / L1.name, f"UPDATE OP_MEMORY SET size = {size} WHERE rowid = 1")
        said.append([w.split(": ", 1)[1] for w in load_profile(str(db), opts).warnings if "1 PB" in w])
    assert said == [[], ["1 OP_MEMORY size value(s) over 1 PB read as 0"]]


#: OP_MEMORY's columns, for a copy of its first row with one changed.
_OP_MEMORY = ("name, size, allocationTime, releaseTime, activeReleaseTime, duration, activeDuration, "
              "allocationTotalAllocated, allocationTotalReserved, allocationTotalActive, releaseTotalAllocated, "
              "releaseTotalReserved, releaseTotalActive, streamPtr, deviceId")


@pytest.mark.parametrize(("first", "changed", "repeats"), [
    ("SELECT 1", {}, 1),
    ("SELECT 1", {"releaseTime": "releaseTime + 1"}, 0),
    ("SELECT 1", {"name": "name + 1"}, 0),
    ("SELECT 1", {"size": "size + 1"}, 0),
    ("UPDATE OP_MEMORY SET size = 0 WHERE rowid = 3", {"size": "NULL"}, 0),
    ("UPDATE OP_MEMORY SET allocationTime = NULL WHERE rowid = 3", {}, 0),
    ("UPDATE OP_MEMORY SET allocationTime = 0 WHERE rowid = 3", {}, 0),
])
def test_an_op_memory_row_repeats_another_only_in_every_column_read(tmp_path: Path, first: str,
                                                                    changed: dict[str, str], repeats: int) -> None:
    """The excerpt's third OP_MEMORY block (one with a release time, SQL) written again, as it is (a repeat, said)
    or with its release, name or size changed, or with a NULL size beside its size 0 (read as 0 and said as
    missing): those are other blocks of one allocation time, not said as repeats (mutants: each of those columns
    left out of the comparison). Two alike of no allocation time (NULL, 0) are no repeat either: the memory
    comparison leaves such blocks out (said as such), so neither counts, let alone twice."""
    assert sql(L1, "SELECT releaseTime IS NOT NULL, size > 0 FROM OP_MEMORY WHERE rowid = 3") == [(1, 1)]
    cols = ", ".join(changed.get(c, c) for c in _OP_MEMORY.split(", "))
    db = _db(tmp_path, first, f"INSERT INTO OP_MEMORY SELECT {cols} FROM OP_MEMORY WHERE rowid = 3")
    p = load_profile(str(db), build_options(enable_memory_compare=True)[0])
    said = [w.split(": ", 1)[1].split(" (")[0] for w in p.warnings if "OP_MEMORY row(s) repeat" in w]
    assert said == ([f"{repeats} OP_MEMORY row(s) repeat an earlier row in every column read"] if repeats else [])


def test_a_host_range_ending_in_the_step_number_marks_no_step(tmp_path: Path) -> None:
    """The marker as a Python function (no host op marks step 50) beside a user_annotation of the user's own named
    ``iteration#50``: only a ``ProfilerStep#`` host op marks a step, so the Python marker is still said (mutant: the
    step number read from any host op's name after its last "#")."""
    path = _alexnet_markers(tmp_path, {"cat": "python_function"}, {"name": "iteration#50"})
    opts, _ = build_options(enable_operator_compare=True)
    assert [w.split(" (the first")[0] for w in load_profile(path, opts).warnings if "step marker" in w] == [
        f"{path}: 1 Python function named as a step marker whose step no host op marks"]


def test_an_enqueue_event_named_as_a_marker_in_another_case_is_no_host_op(tmp_path: Path) -> None:
    """The torch excerpt's first enqueue event (read for the memory comparison) renamed ``profilerstep#7``: it is no
    op the step scan reads, so no "another case" line counts it and the export loads (mutant: the line made where
    no op holds such a name, which failed on its first)."""
    events = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    first = next(e for e in events if e.get("cat") == "enqueue" and e.get("ph") == "X")
    first["name"] = "profilerstep#7"
    out = shutil.copytree(NPU, tmp_path / NPU.name)
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(events))
    p = load_profile(str(out), build_options(enable_memory_compare=True)[0])
    assert "profilerstep#7" not in set(p.ops["name"])
    assert [w for w in p.warnings if "another case" in w] == []


# --------------------------------------------------------------------------- why an export has no PMU figures


@pytest.mark.parametrize(("level", "metrics", "why"), [
    ("Level2", "PipeUtilization", "profiler_info.json says Level2 with aic_metrics PipeUtilization, which records "
     "them: the export lost them after it was written"),
    ("Level1", "ArithmeticUtilization", "recorded with aic_metrics ArithmeticUtilization: PipeUtilization records "
     "them"),
])
def test_no_pmu_reason_reads_level2_and_the_metrics_as_torch_npu_names_them(level: str, metrics: str,
                                                                            why: str) -> None:
    """``breakdown_npu.no_pmu_why`` of an export whose profiler_info.json says Level2 with aic_metrics
    ``PipeUtilization`` (the name of torch_npu's AiCMetrics option, beside CANN's ACL_AICORE_PIPE_UTILIZATION,
    which the other tests read): those settings record PMU columns, so a file without them lost them; other
    metrics are named (mutants: Level1 alone taken as recording them; "PIPE" sought in the name as written)."""
    from msprof_compare.compare.breakdown_npu import no_pmu_why
    from msprof_compare.model import Profile

    p = Profile(path="run", kind="NPU", source="ascend_text")
    p.extra.update(profiler_level=level, aic_metrics=metrics)
    assert no_pmu_why(p) == why


def test_a_renamed_flow_whose_end_time_is_damaged_is_still_counted(tmp_path: Path) -> None:
    """The torch excerpt with its first paired async_npu flow renamed ``torch_to_npu`` and that flow's end time
    written as "abc" (no time: no async_npu end can share it): the flow is counted as one that reaches a task no
    async_npu flow does (mutant: flows with a damaged time dropped from the count, so none said)."""
    events = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    flows = [e for e in events if e.get("cat") == "async_npu"]
    first = next(i for i in dict.fromkeys(e["id"] for e in flows if e["ph"] == "f")
                 if any(e["id"] == i and e["ph"] == "s" for e in flows))
    for e in flows:
        if e["id"] == first:
            e["cat"] = "torch_to_npu"
            if e["ph"] == "f":
                e["ts"] = "abc"
    out = shutil.copytree(NPU, tmp_path / NPU.name)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.write_text(json.dumps(events))
    assert [w.split(" run from ops")[0] for w in load_profile(str(out), OPTS).warnings
            if "flow(s) of category" in w] == [f"{trace}: 1 flow(s) of category 'torch_to_npu'"]


def test_a_rank_id_written_as_19_digits_is_read_and_20_are_not() -> None:
    """A rank id written as digit text is read where int64 could hold it: 19 digits at most (int64's greatest,
    9223372036854775807, is read), 20 digits never (mutant: 18 digits the bound). Leading zeros do not count."""
    from msprof_compare.loaders.ranks import _rank_id

    assert _rank_id("9223372036854775807") == 2**63 - 1
    assert _rank_id("0001000000000000000000") == 10**18
    assert _rank_id("10000000000000000000") is None


# --------------------------------------------------------------------------- step options


def test_step_ids_up_to_int64s_greatest_are_taken_and_one_more_is_refused() -> None:
    """--base_step / --comparison_step take any id a profile can record (int64: STEP_TIME.id), 9223372036854775807
    given as an integer or as its text; 9223372036854775808 (19 digits too) is refused, naming the bound (mutants:
    ">=" of the bound; the bound 2**63; the text's value left unchecked where it has no more digits than the
    bound)."""
    top = 9223372036854775807
    assert top == 2**63 - 1
    for value in (top, str(top)):
        assert build_options(base_step=value, comparison_step=value)[0].base_step == top
    for value, shown in ((top + 1, str(top + 1)), (str(top + 1), repr(str(top + 1)))):
        with pytest.raises(UsageError) as e:
            build_options(base_step=value, comparison_step=1)
        assert str(e.value) == (f"Invalid param, --base_step and --comparison_step must be a number. (got --base_step "
                                f"{shown}: a step id is a whole number from 0 to {top} (int64), the N of "
                                "ProfilerStep#N)")


# --------------------------------------------------------------------------- the DB rank check

LEVEL0_DB = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "msinsight" / "test" / "data" / \
    "pytorch" / "db" / "level0" / "rank0_ascend_pt"


def test_a_rank_map_naming_one_rank_beside_a_damaged_cell_is_checked(tmp_path: Path) -> None:
    """msinsight's level0 DB rank 0 (``../shared/samples``; META_DATA without distributed_args, RANK_DEVICE_MAP one
    row (0, 0)) with a row (-1, 1) added: the map still names one rank, 0, which the check reads and passes in a
    rank 0 folder without a word (mutant: any cell that is no rank id said to leave the check nothing to go by)."""
    from msprof_compare.loaders.ranks import check_db_rank

    if not LEVEL0_DB.is_dir():
        pytest.skip("the shared samples are absent")
    name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    assert sql(LEVEL0_DB / name, "SELECT * FROM RANK_DEVICE_MAP") == [(0, 0)]
    dest = shutil.copytree(LEVEL0_DB, tmp_path / LEVEL0_DB.name, ignore=shutil.ignore_patterns(Path(name).name))
    edited_copy(LEVEL0_DB / name, dest / name, "INSERT INTO RANK_DEVICE_MAP VALUES (-1, 1)")
    p = load_profile(str(dest), OPTS)
    assert p.extra["device_ranks"] == (0,)
    before = list(p.warnings)
    check_db_rank(0, p)
    assert p.warnings == before


def test_a_signed_integer_text_past_ints_limit_is_said_by_its_digits() -> None:
    """An integer option's text of a sign and 5,000 digits is no integer for the same reason as the unsigned one,
    past int()'s 4,300 digits: both faces' reason counts its digits, the sign left out; blanks around it too
    (mutants: the sign, or the blanks, counted as no digit, so no reason)."""
    from msprof_compare.cli import _why_no_int

    digits = "9" * 5000
    assert [_why_no_int(t) for t in (digits, "-" + digits, "+" + digits, f" {digits} ")] == [" (5,000 digits)"] * 4
    # text that is no number at all gives no count (mutant: "abc" said to be of 3 digits)
    assert [_why_no_int(t) for t in ("abc", "1.5", "-")] == ["", "", ""]


def test_a_rank_map_of_two_ranks_beside_a_meta_data_rank_is_checked(tmp_path: Path) -> None:
    """The level0 DB rank 0 with META_DATA's distributed_args naming rank 0 and RANK_DEVICE_MAP a second row (1, 1):
    META_DATA's rank is checked (it is 0, the folder's), so no line says the rank went unchecked (mutant: the
    two-rank map said whatever META_DATA names)."""
    from msprof_compare.loaders.ranks import check_db_rank

    if not LEVEL0_DB.is_dir():
        pytest.skip("the shared samples are absent")
    name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    dest = shutil.copytree(LEVEL0_DB, tmp_path / LEVEL0_DB.name, ignore=shutil.ignore_patterns(Path(name).name))
    edited_copy(LEVEL0_DB / name, dest / name, "INSERT INTO RANK_DEVICE_MAP VALUES (1, 1)",
                "INSERT INTO META_DATA VALUES ('distributed_args', '{\"rank\": 0, \"world_size\": 2}')")
    p = load_profile(str(dest), OPTS)
    assert p.extra["device_ranks"] == (0, 1) and p.metadata["distributed_args"]["rank"] == 0
    before = list(p.warnings)
    check_db_rank(0, p)
    assert p.warnings == before



@pytest.mark.parametrize("size", [99, 100, 4096])
def test_a_db_that_is_no_sqlite_file_reads_alike_at_any_size(tmp_path: Path, size: int) -> None:
    """A file under a profiler database's name that is no SQLite file is said so in the same words whether it is
    shorter than SQLite's 100-byte header (told by its size) or not (SQLite's "file is not a database", which read
    "not a readable SQLite database (file is not a database)")."""
    f = tmp_path / "ascend_pytorch_profiler_0.db"
    f.write_bytes((b'{"traceEvents": []}' + b" " * size)[:size])
    with pytest.raises(ProfileError) as e:
        load_profile(str(f), OPTS)
    assert str(e.value) == f"{f}: not a SQLite database: the file ({size:,} bytes) does not begin with SQLite's header"
