"""Loader of the Ascend profiler SQLite exports (reference-1 §7, reference-2 §9).

Reads ``ascend_pytorch_profiler_*.db``, ``ascend_mindspore_profiler_*.db`` and
``msmonitor_*.db`` into the same ``Profile`` tables the text loader fills, so
the comparators have one code path per sheet.

Why it looks like this:

* The file is opened read-only through a ``file:...?mode=ro&immutable=1`` URI and never
  modified (the original chmods it): no lock, journal or ``-shm`` file is created beside it, so
  exports in read-only directories load too. Only when a non-empty ``-wal`` file holds changes
  not yet in the database is it opened without ``immutable`` (SQLite must read that log).
* A DB can be gigabytes: we never read a table whole. Every query selects a
  few integer columns, is limited to the requested step in SQL, and is fetched
  in chunks straight into int64 numpy arrays. Text columns are fetched as their
  ``STRING_IDS`` ids and resolved with one vectorised lookup against
  ``STRING_IDS`` (the same result as a ``LEFT JOIN STRING_IDS`` in SQL, but the
  strings are shared objects instead of one new ``str`` per row and cell).
* Aggregates that only the time breakdown needs (per task type and stream:
  count, total, first start, last end) are computed by SQLite (``GROUP BY``),
  not by materialising every task.
* With a step (``--base_step``/``--comparison_step``) every query keeps rows
  whose start lies in the ``STEP_TIME`` range (inclusive), memory records by
  timestamp, operator memory by overlap, as the original does (but a block never
  released is alive in every later step, which the original drops).

DB-specific frames a comparator may need are in ``Profile.extra``:

``db_kind``            "pytorch", "mindspore" or "msmonitor" (from the file name).
``step`` / ``step_range``  the step applied (-1 / None when none).
``steps``              STEP_TIME as a frame (id, start, end), empty when absent.
``kernel_extra``       aligned with ``kernels``: op_type (opType), rts_type
                       (TASK.taskType), global_task_id, input_shapes, schedule (a task of
                       COMMUNICATION_SCHEDULE_TASK_INFO: no computing), and the
                       PMU values aic_total_time, aic_mac_time, aic_mte2_time,
                       aiv_time (ns, NaN when absent, 0 for a time below 0 or over a week;
                       TASK_PMU_INFO's aiv_total_time).
``has_pmu``            TASK_PMU_INFO has rows (decides the cube-kernel rule).
``pmu_table``          "" where it has, else "empty" or "absent" (what the breakdown's line on the rule says).
``task_summary``       per (rts_type, stream): count, total_ns, first_start, last_end
                       over every TASK row in range.
``c_core_sqe``         C_CORE_SQE tasks (ts, end), for MC2 communication time.
``copy_tasks``         the DMA copy tasks (``COPY_TASK_TYPES``: ts, end), which are no device idle time.
``op_connections``     (op_row, connection_id): every CANN connection id of each
                       op (an op that launched four tasks has four).
``memory_peak_bytes``  max MEMORY_RECORD.totalReserved in range (0 when absent).
``memory_zero`` / ``memory_missing``  where that peak is 0: whether readings in range are all 0, and the
                       words of why there is no peak, for the Mem Usage note (``_memory_peak_extra``).
``any_op``             PYTORCH_API holds an op row, in the step or not (``Profile.has_ops``).
``device_ranks`` / ``device_ranks_odd`` / ``device_map_none``  the rank ids RANK_DEVICE_MAP records, the
                       count and first of its cells that are no rank id, and (only with neither) why it holds
                       none: what a folder of ranks checks each DB's rank against (``ranks.check_db_rank``).
``NO_DEVICE_TIME``     no TASK row has a start and an end (a run that reads no device time goes on).
``COMM_STEP_CUT``      the communication tasks a step's bounds part from their op (``_comm_step_cut``).

``Profile.metadata`` holds the META_DATA rows (name -> value; a JSON object or list decoded, as
``profiler_metadata.json`` of a text export holds them); ``Profile.rank_span`` the highest rank id of
COMMUNICATION_TASK_INFO plus one.
"""

from __future__ import annotations

import array
import itertools
import logging
import os
import re
import sqlite3
import urllib.parse
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..errors import ProfileError, StepError
from ..model import (
    CANN_MARK,
    COMM_STEP_CUT,
    COPY_TASK_TYPES,
    NO_DEVICE_TIME,
    NO_RANK,
    OP_OUT_OF_STEP,
    SAME_START_STEPS,
    Profile,
    frame,
    object_array,
    object_full,
    positions_in_runs,
    repeats,
    us_text,
    zero_readings_text,
)
from ..options import Options
from ..textsafe import and_list, id_ranges, short_repr
from ..units import MAX_RANK
from . import traceio
from .numparse import (
    LONG_DURATION_TEXT,
    MAX_DURATION_NS,
    MAX_RESERVED_BYTES,
    late_releases,
    memory_oddities,
    odd_pmu_note,
    odd_ranks_note,
    repeated_rows_note,
)

log = logging.getLogger("msprof-analyze")

#: File-name prefix -> DB family.
DB_KINDS = {
    "ascend_pytorch_profiler": "pytorch",
    "ascend_mindspore_profiler": "mindspore",
    "msmonitor": "msmonitor",
}

#: Tables without which no comparison is possible.
REQUIRED_TABLES = ("TASK", "STRING_IDS")

#: Where newer msprof writes the tasks of AI-CPU HCCL kernels and of the MC2 KFC stream (``_compute_tasks``).
SCHEDULE_INFO = "COMMUNICATION_SCHEDULE_TASK_INFO"

#: Default ENUM_API_TYPE ids (used when the enum table is missing).
_API_TYPES = {"op": 50001, "queue": 50002, "trace": 50003}

#: What a column read as missing (NULL) costs the figures, per "TABLE.column": the one text said both for its NULL
#: cells ("N TABLE.column value(s) missing (NULL): <effect>", ``_Db.null``) and for a table that lacks it ("table
#: TABLE lacks column(s) ...: <effect>", ``_Db.absent_said``), where the absence alone was said (a lost planeId
#: made 2.7 ms of Wait Time 94 ms under "read as missing (NULL) in every row", which named no figure).
_KERNEL_EFFECTS = {
    "name": "those kernels' names read as empty (the time breakdown's kernel categories read them)",
    "opType": "those kernels' types read as empty (KernelCompare keys kernels by type and input shapes)",
    "taskType": "those kernels' core types read as empty (the module sheet's Kernel Details print None)",
    # a NULL cell is a task of no inputs (read as the exports write it, unsaid): only an absent column says this
    "inputShapes": "those kernels' input shapes read as N/A (KernelCompare keys kernels by type and input shapes; "
                   "the module sheet's Kernel Details print none)",
}
_NO_LINK = "those rows link no operator to a task and no dequeue to its enqueue"
_SHAPES_LOST = ("the operator and memory sheets' Input Shape or Input Type reads N/A: the other column is read alone, "
                "as the shapes or the data types its text holds (torch_npu writes the two swapped)")
_NO_METADATA = "no metadata is read, so the world size check has no recorded world size"
_DEFAULT_KINDS = ("PYTORCH_API rows are told apart by msprof's default kind ids (op 50001, queue 50002, Python "
                  "50003); the rows of an export of other ids are lost")
NULL_EFFECTS: dict[str, str] = {
    "TASK.streamId": "those tasks are on no stream (SDMA Time leaves out their SDMA tasks; their kernels make no "
                     "compute stream)",
    "TASK.connectionId": "those computing tasks link to no operator",
    "TASK.deviceId": "those computing tasks name no device (the device count leaves them out)",
    "TASK.taskId": "those tasks have no Task Id (the operator and module sheets' Kernel Details print None)",
    "TASK.taskType": "those tasks have no type (the E2E span keeps them; SDMA Time, the event-wait streams and the "
                     "cube-kernel rule pass them over)",
    **{f"{info}.{c}": text for info in ("COMPUTE_TASK_INFO", SCHEDULE_INFO) for c, text in _KERNEL_EFFECTS.items()},
    "COMMUNICATION_OP.opName": "those names read as empty (the time breakdown's Lccl Time counts the ops named "
                               "kernel_aivec)",
    "COMMUNICATION_OP.groupName": "those ops' group reads as empty (OverallMetrics' communication rows and the wait "
                                  "rule go by group)",
    "COMMUNICATION_OP.opId": "the tasks of those ops go to the communication op whose time holds their start "
                             "(CommunicationCompare)",
    "COMMUNICATION_OP.opType": "those ops' types read as empty (CommunicationCompare names a DB's ops by type and "
                               "leaves out those of none)",
    "COMMUNICATION_TASK_INFO.taskType": "those tasks' names read as empty (the wait rule finds wait tasks by name; "
                                        "CommunicationCompare's Task Name)",
    "COMMUNICATION_TASK_INFO.planeId": "those tasks share one plane, -1 (the wait rule follows the tasks of a plane)",
    "COMMUNICATION_TASK_INFO.groupName": "those tasks' group reads as empty (the wait rule follows the tasks of a "
                                         "group)",
    "COMMUNICATION_TASK_INFO.opId": "those tasks go to the communication op whose time holds their start "
                                    "(CommunicationCompare)",
    "COMMUNICATION_TASK_INFO.srcRank": "the world size check's lower bound reads no source rank",
    "COMMUNICATION_TASK_INFO.dstRank": "the world size check's lower bound reads no destination rank",
    "PYTORCH_API.globalTid": "those rows are on no thread (read as process and thread -1, where they nest with each "
                             "other)",
    "PYTORCH_API.connectionId": "those rows link to no task (their operators own no kernel) and no dequeue to its "
                                "enqueue",
    "PYTORCH_API.inputShapes": _SHAPES_LOST,
    "PYTORCH_API.inputDtypes": _SHAPES_LOST,
    "PYTORCH_CALLCHAINS.stack": "those frames read as empty in the op call stacks (ModuleCompare's Call Stack cells)",
    "CONNECTION_IDS.id": _NO_LINK,
    "CONNECTION_IDS.connectionId": _NO_LINK,
    "META_DATA.name": _NO_METADATA,
    "META_DATA.value": _NO_METADATA,
    "ENUM_API_TYPE.id": _DEFAULT_KINDS,
    "ENUM_API_TYPE.name": _DEFAULT_KINDS,
    "MEMORY_RECORD.totalReserved": "Mem Usage leaves them out",
    "MEMORY_RECORD.timestamp": "those readings are in no step (Mem Usage of a step leaves them out)",
}

#: PMU counters the breakdown reads: ``kernel_extra`` column -> TASK_PMU_INFO name. msprof writes the AIV total as
#: ``aiv_total_time`` in the DB and renames it ``aiv_time(us)`` only in the text export's kernel_details.csv.
PMU_NAMES = {"aic_total_time": "aic_total_time", "aic_mac_time": "aic_mac_time", "aic_mte2_time": "aic_mte2_time",
             "aiv_time": "aiv_total_time"}

_ALL = (-(2**63), 2**63 - 1)

#: rows per fetchmany: a small batch of row tuples stays in the CPU caches and pymalloc reuses its memory. With
#: 2**18 rows the first load of a side of the 100 MB DB pair took 2.1-2.4 s CPU and 340-450 MiB peak RSS; with
#: 2**11, 1.9-2.1 s and 320 MiB (1,024 to 16,384 rows measured alike)
_CHUNK = 1 << 11

#: rowids per piece of a query read as ``group_concat`` texts (``_Db.ints_as_text``): ~20 MB of text for
#: PYTORCH_API's nine columns, where the whole table's (226 MB at 2.63M rows) cost 157 MiB of peak RSS more than
#: the row fetch. A table whose rowids span more than ``_TEXT_PIECES`` pieces is read as one (an export numbers
#: its rows from 1 up: a sparse table would cost a query per empty piece).
_TEXT_ROWS = 1 << 18
_TEXT_PIECES = 1 << 10

NO_STEP_MARKERS = "The profiling data lacks step markers. Please re-collect it."


def db_kind(path: str) -> str:
    """The DB family from the file name (``pytorch`` when it cannot be told)."""
    name = os.path.basename(path)
    for prefix, kind in DB_KINDS.items():
        if name.startswith(prefix):
            return kind
    return "pytorch"


def _size(path: str) -> int:
    """The file's size in bytes, -1 where it cannot be read."""
    try:
        return os.path.getsize(path)
    except OSError:
        return -1


#: the first bytes of a rollback journal that holds pages to restore (SQLite's "hot journal" header)
_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _hot_journal(path: str) -> str:
    """The note for a rollback journal beside the database that still holds pages (a write in progress, or one a
    crash interrupted), "" where none: SQLite rolls such a journal back on an open that may write, but the input is
    opened immutable, so it is read as the file holds it, part of that write included (dbfuzz63: a copy taken while
    a writer held the file loaded without a word). A journal emptied or zeroed after a commit is no such file."""
    try:
        with open(path + "-journal", "rb") as fh:
            head = fh.read(8)
    except OSError:
        return ""
    if head != _JOURNAL_MAGIC:
        return ""
    name = os.path.basename(path)
    return (f"{name}-journal beside it holds pages of a write in progress or interrupted (SQLite undoes such a write "
            "when it opens the file to write); read as the file holds it, which may include part of that write: "
            "compare a copy taken once the profiler has finished")


#: The first 16 bytes of every SQLite database file (its header is 100 bytes).
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _cut_short(path: str, logged: bool) -> str:
    """Why ``path`` is no whole SQLite file, "" where its size looks whole (or cannot be told). SQLite reads a
    file of a byte or so as a database without tables ("tables TASK and STRING_IDS are missing"), and one cut
    within its last page as whole, zeros for the lost bytes (rows read as of no globalTaskId, without a word of the
    cut); other cuts were "database disk image is malformed". The header's page count times its page size is the
    file's size where its "valid-for" counter matches the change counter (every current writer keeps it so); a
    write-ahead log or rollback journal holding changes (``logged``: ``_pending_wal`` or ``_hot_journal``, probed
    once by the caller) may be ahead of the file, so those are left to SQLite."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return ""
    if size == 0:  # SQLite reads it as a database without tables: ``_load`` says so in its own words
        return ""
    if size < 100:  # less than the header
        if _SQLITE_MAGIC.startswith(head) or head.startswith(_SQLITE_MAGIC):
            return (f"the file is cut short: {size:,} byte{'' if size == 1 else 's'}, fewer than a SQLite database's "
                    "100-byte header, which it begins as; a partial copy, or a write that did not finish: copy it "
                    "again in full")
        return _no_sqlite_header(size, head)
    if head[:16] != _SQLITE_MAGIC or head[24:28] != head[92:96] or logged:
        return ""
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if size >= pages * page:
        return ""
    return (f"the file is cut short: {size:,} bytes where its header says {pages * page:,} ({pages:,} pages of "
            f"{page:,} bytes); a partial copy, or a write that did not finish: copy it again in full")


def _no_sqlite_header(size: int, head: bytes) -> str:
    """The words for a file that is no SQLite database at all, short or long: one under the header's 100 bytes is
    told by ``_cut_short``, a longer one by SQLite ("file is not a database", which ``_unopened`` names so).
    ``head``, its first bytes: a text standing in for the file (a Git LFS pointer, a web page:
    ``traceio.stand_in_kind``) is named with what to do, as under a trace's name; it read as any other file."""
    stand_in = traceio.stand_in_kind(head)
    if stand_in:
        return f"not a SQLite database: the file is {stand_in[0]}; {stand_in[1]}"
    unit = "byte" if size == 1 else "bytes"
    return f"not a SQLite database: the file ({size:,} {unit}) does not begin with SQLite's header"


def _pending_wal(path: str) -> bool:
    """True when a write-ahead log beside the database may hold changes not yet copied into it: a WAL header
    (magic number, page size) and at least one frame after it. SQLite ignores any other -wal file (a header
    alone, a leftover of another file, junk), yet opening without ``immutable`` for it created a -shm file
    beside the input and, in a read-only folder, refused a sound database as "not a readable SQLite database"."""
    try:
        with open(path + "-wal", "rb") as fh:
            head = fh.read(32)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return False
    if len(head) < 32 or int.from_bytes(head[:4], "big") not in (0x377F0682, 0x377F0683):
        return False
    page = int.from_bytes(head[8:12], "big")
    return size >= 32 + 24 + (65536 if page == 1 else page)  # one frame: 24-byte header + a page


def _not_integer_text(col: str) -> str:
    """SQL that is true for a value of ``col`` no integer time can be read from: not NULL, not an INTEGER, and
    not a TEXT holding one (an optional minus sign, then digits within int64; leading zeros allowed).

    The first test accepts the usual row at once: a text (``col >= '' AND col < X''`` is typeof text, since
    text sorts after numbers and before blobs, at half the cost of typeof) of 19 characters whose integer
    prefix has 19 digits (an epoch time in ns; 2**63 - 1 is left out: CAST clamps larger digits to it), or one
    that survives the round trip through INTEGER (no leading zeros). Only the other values meet the full
    rule, whose digit pattern is twice as costly: 0.146 -> 0.058 s a column of 650k rows. A REAL is never one:
    1.7e18 holds the ns only to 256. Digits with leading zeros pass the pattern; beyond int64 they do not (CAST
    would clamp them)."""
    digits = f"ltrim({col}, '0')"
    return (f"NOT ({col} >= '' AND {col} < X'' AND ((length({col}) = 19 AND {_EPOCH_NS_CAST.format(col=col)}) "
            f"OR CAST(CAST({col} AS INTEGER) AS TEXT) = {col})) "
            f"AND {col} IS NOT NULL AND typeof({col}) <> 'integer' "
            f"AND NOT (typeof({col}) = 'text' AND (CAST(CAST({col} AS INTEGER) AS TEXT) = {col} "
            f"OR ({col} <> '' AND {col} NOT GLOB '*[^0-9]*' AND (length({digits}) < 19 OR "
            f"(length({digits}) = 19 AND {digits} <= '9223372036854775807')))))")


def _usual_integer_text(col: str) -> str:
    """SQL true for the usual TEXT time of ``col``, 19 digits (``_not_integer_text``'s first test, narrowed)."""
    return f"{col} >= '' AND {col} < X'' AND length({col}) = 19 AND {_EPOCH_NS_CAST.format(col=col)}"


_EPOCH_NS_CAST = "CAST({col} AS INTEGER) BETWEEN 1000000000000000000 AND 9223372036854775806"


def _int_cell(value: Any) -> int | None:
    """A cell of an integer query as an int: an integer within int64, a whole REAL (a column declared without
    INTEGER affinity; as ``_Db.id_value``) or the ASCII digits of an integer as TEXT; None for anything else
    (NULL, a fraction, other text, a blob)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    return None


_DIGITS = re.compile(r"-?[0-9]+", re.ASCII)


def _read_lenient(cells: list, at: int, ncols: int) -> np.ndarray:
    """Column ``at`` of a chunk's cells (rows of ``ncols``, flattened) read in place as ``_int_cell`` reads it, a
    cell that is no integer as 0; per row 0 (an integer), 1 (NULL) or 2 (anything else). Only its cells that are
    no Python int are looked at one by one."""
    raw = cells[at::ncols]
    state = np.zeros(len(raw), dtype=np.int8)
    for i in [i for i, v in enumerate(raw) if type(v) is not int]:
        read = _int_cell(raw[i])
        state[i] = 0 if read is not None else 1 if raw[i] is None else 2
        raw[i] = 0 if read is None else read
    cells[at::ncols] = raw
    return state


_COALESCED = re.compile(r"COALESCE\((\w+\.\w+), -1\)")


def _number_cell(expr: str) -> str:
    """The SQL of an integer query's cell ``expr`` as ``_Db.ints_as_text`` reads it: a number as itself, anything
    else as 'x' (SQLite sorts numbers before text and blobs, so a cell ``< ''`` is a number). A column read with
    NULL as -1 (``_Db.col``'s ``COALESCE(a.c, -1)``) is tested once, where the test of the COALESCE called it
    twice (0.35 s CPU of 2.6 at PYTORCH_API's 2.63M rows); a CAST AS INTEGER is an integer, or NULL, which
    ``group_concat`` leaves out, so its text is one number short and is not parsed (``_parsed``)."""
    if expr.startswith("CAST(") and expr.endswith(" AS INTEGER)"):
        return expr
    if got := _COALESCED.fullmatch(expr):
        c = got[1]
        return f"CASE WHEN {c} < '' THEN {c} WHEN {c} IS NULL THEN -1 ELSE 'x' END"
    return f"CASE WHEN {expr} < '' THEN {expr} ELSE 'x' END"


def _as_int64(cells: list) -> np.ndarray | None:
    """``cells`` as int64 where every one is a Python int within int64, else None."""
    try:
        return np.frombuffer(array.array("q", cells), dtype=np.int64)
    except (TypeError, OverflowError):
        return None


def _unopened(path: str, exc: sqlite3.Error, pending: bool, journal: str) -> str:
    """Why ``path`` could not be opened (``pending``: ``_pending_wal``; ``journal``: ``_hot_journal``'s note). A
    write-ahead log holding changes is read through a ``-shm`` file that SQLite must create beside the database when
    there is none: in a read-only folder it cannot, and the export was "not a readable SQLite database (unable to
    open database file)", which sent the user after a sound file."""
    folder = os.path.dirname(os.path.abspath(path))
    if pending and not os.path.exists(path + "-shm") and not os.access(folder, os.W_OK):
        name = os.path.basename(path)
        return (f"its write-ahead log {name}-wal holds changes not yet in the database, which SQLite reads only "
                f"through {name}-shm, a file it cannot create in this read-only folder ({exc}); copy the .db and its "
                "-wal to a writable folder")
    if pending and "readonly" in str(exc) and journal:
        # a rollback journal holding pages beside a log holding changes: SQLite must undo that write before it reads
        # the log, which a read-only open may not, and the sound file was "not a readable SQLite database (attempt
        # to write a readonly database)" (dbfuzz65)
        name = os.path.basename(path)
        return (f"{name}-journal beside it holds pages of a write in progress or interrupted, which SQLite must undo "
                f"before it reads the changes its write-ahead log {name}-wal holds, and the file is opened read-only "
                f"({exc}): compare a copy taken once the profiler has finished")
    if "not a database" in str(exc):  # SQLite's words (before 3.21: "file is encrypted or is not a database")
        try:
            with open(path, "rb") as fh:
                head, size = fh.read(64), os.fstat(fh.fileno()).st_size  # 64: what stand_in_kind reads
        except OSError:
            head, size = _SQLITE_MAGIC, 0
        if head[:16] != _SQLITE_MAGIC:  # as a short file is told (_cut_short), where "(file is not a database)" was
            return _no_sqlite_header(size, head)
    return f"not a readable SQLite database ({exc})"


class _Db:
    """A read-only connection plus the schema facts the queries depend on."""

    def __init__(self, path: str) -> None:
        self.path = path
        # quoted from the path's bytes: a name that is not UTF-8 (Linux allows it) cannot be str-encoded
        uri = "file:" + urllib.parse.quote(os.fsencode(os.path.abspath(path))) + "?mode=ro"
        # the -wal and -journal beside it probed once each (the cut check and the open both read them)
        pending, journal = _pending_wal(path), _hot_journal(path)
        if cut := _cut_short(path, pending or bool(journal)):
            raise ProfileError(path, cut)
        if not pending:
            # immutable: no locks, no -shm / -wal files created beside a WAL-mode export (read-only
            # directories work too). Only a -wal holding frames (changes not yet in the file) needs them.
            uri += "&immutable=1"
        con = None
        try:
            con = sqlite3.connect(uri, uri=True, check_same_thread=False)
            # a view serves as its table: a DB whose TASK was a view was "not a profiler database", and one whose
            # COMMUNICATION_TASK_INFO was had no wait time, without a word
            rows = con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        except sqlite3.Error as exc:
            if con is not None:  # opened but unreadable: closed here, not whenever the collector frees it
                con.close()
            raise ProfileError(path, _unopened(path, exc, pending, journal)) from None
        self.con = con
        self.tables = {r[0] for r in rows}
        self.views = {r[0] for r in rows if r[1] == "view"}
        self._cols: dict[str, set[str]] = {}
        #: STRING_IDS in id order: ids, texts, and whether the text is NULL (read "")
        self._strings: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        #: rows whose endNs is before their startNs, per table (their duration is read as 0)
        self.negative: dict[str, int] = {}
        #: other recoverable oddities, one warning line each
        self.notes: list[str] = list(filter(None, [journal]))
        self.untimed: dict[str, int] = {}  # rows without a start or end time, per table
        self.too_long: dict[str, int] = {}  # rows lasting over MAX_DURATION_NS (read as 0), per table
        self.unnamed = 0  # name references that STRING_IDS lacks or holds as NULL (read as "")
        self.untexted = 0  # other text references (types, shapes, groups) that it lacks or holds as NULL
        #: "TABLE.column" -> [rows read as NULL, what that does]: one warning each (``nulls_said``)
        self.nulls: dict[str, list] = {}
        #: tables (TASK, COMPUTE_TASK_INFO, COMMUNICATION_TASK_INFO) holding a globalTaskId more than once
        self.repeats: set[str] = set()
        #: table -> the columns a query read as NULL because the table lacks them (``col``, ``lacks``): one warning
        self.absent: dict[str, list[str]] = {}
        #: (rows, distinct name ids) of the PYTORCH_API read over every step (``_api_rows``), for ``_mark_cann``
        self.api_names: tuple[int, np.ndarray] | None = None

    def durations(self, start: np.ndarray, end: np.ndarray, table: str = "") -> np.ndarray:
        """``end - start`` (ns), a negative one or one over ``MAX_DURATION_NS`` read as 0, as the trace loaders
        do, and counted under ``table`` when given (TASK rows, read by several queries, are counted once by
        ``_task_summary``)."""
        with np.errstate(over="ignore"):
            dur = end - start
        wrapped = (end >= start) != (dur >= 0)  # int64 subtraction overflowed: far beyond any bound
        neg = (dur < 0) & ~wrapped
        long = (dur > MAX_DURATION_NS) | wrapped
        odd = neg | long
        if odd.any():
            for counts, mask in ((self.negative, neg), (self.too_long, long)):
                if table and mask.any():
                    counts[table] = counts.get(table, 0) + int(mask.sum())
            dur = np.where(odd, 0, dur)
        return dur

    def null(self, column: str, rows: int, effect: str = "") -> None:
        """Count ``rows`` of ``column`` ("TABLE.column") that are NULL where a figure reads the value: said in one
        warning per column (``nulls_said``), where they changed a figure without a word. ``effect``: what they
        cost, where not the column's ``NULL_EFFECTS`` text (which an absent column's warning says too)."""
        if rows:
            got = self.nulls.setdefault(column, [0, effect or NULL_EFFECTS[column]])
            got[0] += int(rows)

    def named(self, table: str, column: str) -> str:
        """"TABLE.column" where the table has the column (its NULLs can be counted), else ""."""
        return f"{table}.{column}" if column in self.columns(table) else ""

    def nulls_said(self) -> list[str]:
        return [f"{n:,} {column} value(s) missing (NULL): {effect}" for column, (n, effect) in self.nulls.items()]

    def said(self) -> list[str]:
        """The warnings of everything the queries counted, once the load is done (each becomes one line after the
        DB's path): absent columns, the notes, the string references that point nowhere, NULL cells, then the
        rows whose times were read as 0 long or left out. Counted as the queries run, said together, so a table
        read by several queries is said once."""
        notes = list(self.notes)
        if self.unnamed:
            notes.append(f"{self.unnamed:,} name reference(s) point to no text in STRING_IDS (an unknown id, or NULL "
                         "there); those names read as empty")
        if self.untexted:
            notes.append(f"{self.untexted:,} reference(s) to a type, shape or group text point to no text in "
                         "STRING_IDS (an unknown id, or NULL there); read as empty (input shapes and data types of an "
                         "unknown id as N/A)")
        out = self.absent_said() + notes + self.nulls_said()
        if self.negative:
            what = ", ".join(f"{n:,} in {t}" for t, n in self.negative.items())
            out.append(f"{sum(self.negative.values()):,} row(s) end before they start ({what}); their duration is "
                       "read as 0")
        if self.too_long:
            what = ", ".join(f"{n:,} in {t}" for t, n in self.too_long.items())
            out.append(f"{sum(self.too_long.values()):,} row(s) ({what}) {LONG_DURATION_TEXT}")
        if self.untimed:
            what = ", ".join(f"{n:,} {t}" for t, n in self.untimed.items())
            out.append(f"{sum(self.untimed.values()):,} row(s) have no start or end time ({what}); left out")
        return out

    def close(self) -> None:
        self.con.close()

    def has(self, table: str) -> bool:
        return table in self.tables

    def columns(self, table: str) -> set[str]:
        if table not in self._cols:
            rows = self.con.execute(f'PRAGMA table_info("{table}")').fetchall()
            self._cols[table] = {r[1] for r in rows}
        return self._cols[table]

    def col(self, table: str, alias: str, name: str, figure: bool = True) -> str:
        """``COALESCE(alias.name, -1)`` when the column exists, else the literal -1 (the column is noted as absent
        where a ``figure`` reads it: an absent column that costs nothing is no warning)."""
        if self.lacks(table, name) if figure else name not in self.columns(table):
            return "-1"
        return f"COALESCE({alias}.{name}, -1)"

    def lacks(self, table: str, name: str) -> bool:
        """Whether ``table`` lacks the column ``name`` that a figure reads, noted for one warning (``absent_said``):
        read as NULL in every row, a lost TASK.taskType doubled the Free Time and a lost planeId made 2.7 ms of
        Wait Time 94 ms, without a word."""
        if name in self.columns(table):
            return False
        got = self.absent.setdefault(table, [])
        if name not in got:
            got.append(name)
        return True

    def absent_said(self) -> list[str]:
        """One warning per table, naming what each absent column costs: its NULL cells' text (``NULL_EFFECTS``),
        as every row is read so."""
        out = []
        for table, names in self.absent.items():
            effects = [(n, NULL_EFFECTS.get(f"{table}.{n}", "")) for n in names]
            said = effects[0][1] if len(effects) == 1 else "; ".join(f"{n}: {e}" for n, e in effects if e)
            out.append(f"table {table} lacks column(s) {', '.join(names)}; read as missing (NULL) in every row"
                       + (f": {said}" if said else ""))
        return out

    def rowid(self, table: str, alias: str = "") -> str:
        """The rowid of ``table`` (table order, which picks the first of repeated rows), or NULL for a view, which
        has none (its rows come in the order the view gives)."""
        return "NULL" if table in self.views else f"{alias}.rowid" if alias else "rowid"

    def need(self, table: str, *names: str) -> None:
        missing = [n for n in names if n not in self.columns(table)]
        if missing:
            raise ProfileError(self.path, f"table {table} lacks column(s) {', '.join(missing)}")

    def need_times(self, table: str, text_ok: bool = False) -> None:
        """``startNs`` / ``endNs`` of every row must be an integer, or its digits as TEXT where ``text_ok`` (current
        exports write PYTORCH_API so, and its queries CAST them; the TASK and COMMUNICATION_OP queries compare
        the values as stored, so a text there compared as text: every task "ended before it started"): SQLite's
        CAST reads other text as 0 (``'1.7e18'`` as 1) and a range filter silently drops it, which once gave an
        op a 1.7e12 ms total. A row without either time (NULL) cannot be placed: the queries leave it out,
        counted here for one warning.

        One scan first looks for a row that is not the usual one (both times INTEGER, or where ``text_ok`` both
        the usual TEXT, ``_usual_integer_text``), stopping at the first: in a table without one nothing is refused
        or counted, and the three scans of the precise checks (one per column and the count; 0.384 -> 0.29 s for
        PYTORCH_API, 0.048 -> 0.026 s for TASK, at 972k and 218k rows) run only for a table with one."""
        self.need(table, "startNs", "endNs")
        usual = (lambda c: f"({_usual_integer_text(c)})") if text_ok else (lambda c: f"typeof({c}) = 'integer'")
        # NULL first: a comparison with NULL is NULL, which NOT leaves NULL, selecting no row
        if self.scalar(f"SELECT 1 FROM {table} WHERE startNs IS NULL OR endNs IS NULL OR NOT ({usual('startNs')} AND "
                       f"{usual('endNs')}) LIMIT 1") is None:
            return
        for col in ("startNs", "endNs"):
            if not text_ok:
                bad = self.scalar(f"SELECT {col} FROM {table} WHERE {col} IS NOT NULL AND typeof({col}) <> 'integer' "
                                  "LIMIT 1")
                if bad is not None:
                    raise ProfileError(self.path, f"table {table}: column {col} holds {bad!r}, not an integer")
                continue
            bad = self.scalar(f"SELECT {col} FROM {table} WHERE {_not_integer_text(col)} LIMIT 1")
            if bad is not None:
                raise ProfileError(self.path, f"table {table}: column {col} holds {bad!r}, not an integer")
        untimed = self.scalar(f"SELECT count(*) FROM {table} WHERE startNs IS NULL OR endNs IS NULL")
        if untimed:
            self.untimed[table] = int(untimed)

    def scalar(self, sql: str, params: tuple = ()) -> Any:
        row = self.con.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def ints(self, sql: str, params: tuple, ncols: int) -> np.ndarray:
        """Run a query whose columns are all integers; an (n, ncols) int64 array, fetched in chunks."""
        return self._ints(sql, params, ncols, None)[0]

    def ints_as_text(self, cols: list[str], tail: str, params: tuple, at: int, table: str, alias: str
                     ) -> tuple[list[np.ndarray], np.ndarray]:
        """``ints`` of ``SELECT cols tail`` (``tail``: ``FROM table alias WHERE ...``, the table's rowid order) as
        one int64 array per column, but the cells of column ``at`` that are no integer (NULL, a fraction, other
        text, a blob) read as 0 where they stopped the run, and told apart by a mask of their own, no value a cell
        may hold: per row, 0 an integer, 1 NULL, 2 anything else (the NULL and no-integer types were read as int64's
        least + 1 and its least, which an integer type may hold).

        A row fetch makes a Python int of every cell (~0.1 us each): each column comes as one ``group_concat`` text
        that numpy parses instead, ``_TEXT_ROWS`` rowids at a time. A cell that is no number writes 'x', which no
        number's text holds, and SQLite writes a REAL with a '.' or as Inf (``_parsed``): a piece holding one is
        fetched row by row (``_ints``), so its reading and its error are those of the whole query's fetch. Read as
        one piece: a view, a WITHOUT ROWID table or one whose own column is named rowid (none has the rowid
        order)."""
        cells = [f"CAST(group_concat({_number_cell(c)}) AS BLOB)" for c in cols]
        texts_sql = f"SELECT count(*), {', '.join(cells)} {tail}"
        rows_sql = f"SELECT {', '.join(cols)} {tail}"
        span = self._rowid_span(table)
        if span is None or (span[1] - span[0]) // _TEXT_ROWS >= _TEXT_PIECES:
            pieces: list[tuple] = [()]
        else:
            pieces = [(lo, min(lo + _TEXT_ROWS - 1, span[1])) for lo in range(span[0], span[1] + 1, _TEXT_ROWS)]
            rowid = f" AND {alias}.rowid BETWEEN ? AND ?"
            texts_sql, rows_sql = texts_sql + rowid, rows_sql + rowid
        parts: list[list[np.ndarray]] = [[] for _ in cols]
        states = []
        for piece in pieces:
            n, *texts = self.con.execute(texts_sql, params + piece).fetchone()
            got, state = _parsed(n, texts), None
            if got is None:  # a cell that is no integer: this piece row by row
                block, state = self._ints(rows_sql, params + piece, len(cols), at)
                got = [block[:, i] for i in range(len(cols))]
            states.append(np.zeros(n, dtype=np.int8) if state is None else state)
            for part, col in zip(parts, got, strict=True):
                part.append(col)
        # a piece's columns as they are (no copy) where there is one
        return [p[0] if len(p) == 1 else np.concatenate(p) for p in parts], np.concatenate(states)

    def _rowid_span(self, table: str) -> tuple[int, int] | None:
        """The least and greatest rowid of ``table``; None for an empty table, a view, a WITHOUT ROWID table or one
        with a column of its own named rowid. Two queries: SQLite finds a min() or a max() alone at the rowid
        tree's end, but both in one query scanned the table (0.4-1.1 s at 2.63M rows)."""
        if table in self.views or "rowid" in {c.lower() for c in self.columns(table)}:
            return None
        try:
            lo, hi = (self.scalar(f"SELECT {f}(rowid) FROM {table}") for f in ("min", "max"))
        except sqlite3.OperationalError:  # WITHOUT ROWID
            return None
        return None if lo is None else (lo, hi)

    def _ints(self, sql: str, params: tuple, ncols: int, at: int | None) -> tuple[np.ndarray, np.ndarray | None]:
        cur = self.con.execute(sql, params)
        parts, states = [], []
        while True:
            rows = cur.fetchmany(_CHUNK)
            if not rows:
                break
            state = None
            try:
                # array("q") takes Python ints alone: np.fromiter read a REAL 12.5 as 12 and a text ' 12', '1_2'
                # or '١٢' as 12, without a word (a name id 12.5 named the task after id 12)
                flat = np.frombuffer(array.array("q", itertools.chain.from_iterable(rows)), dtype=np.int64)
            except (TypeError, OverflowError):
                cells = list(itertools.chain.from_iterable(rows))
                if at is not None:
                    state = _read_lenient(cells, at, ncols)
                # with the lenient column read, the other columns at once where they are integers: NULL types spread
                # through a table took 1.27 -> 1.81 s CPU at 650k rows when every cell went through _int_cell, 1.23 s
                flat = None if at is None else _as_int64(cells)
                if flat is None:
                    cells = [_int_cell(v) for v in cells]
                    if None in cells:
                        raise self._not_an_integer(sql, cur.description, rows, at) from None
                    flat = np.array(cells, dtype=np.int64)
            parts.append(flat.reshape(len(rows), ncols))
            if at is not None:
                states.append(np.zeros(len(rows), dtype=np.int8) if state is None else state)
        if not parts:
            return np.zeros((0, ncols), dtype=np.int64), None if at is None else np.zeros(0, dtype=np.int8)
        got = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return got, None if at is None else np.concatenate(states)

    def id_value(self, value: Any, table: str, column: str) -> int:
        """An id cell read one by one (an enum or string table, a PMU row's ids) by the rule of every integer
        query (``_int_cell``: an integer within int64, a whole REAL or its ASCII digits as TEXT), else an error.
        Digits text was refused here alone ("holds '10', not an integer"), where the TASK name ids pointing at
        that STRING_IDS id, and a PYTORCH_API type of that ENUM_API_TYPE id, read it."""
        got = _int_cell(value)
        if got is None:
            raise ProfileError(self.path, f"table {table}: column {column} holds {value!r}, not an integer")
        return got

    def _not_an_integer(self, sql: str, description: Any, rows: list[tuple], lenient: int | None = None
                        ) -> ProfileError:
        """The error for a cell an integer query cannot use (NULL where a value is needed, text, a blob, a
        fraction, a number out of int64 range: ``_int_cell``), naming its column and table. The ``lenient``
        column's cells are read whatever they hold (``ints_as_text``'s mask): one of them before the cell at fault
        (a NULL PYTORCH_API type) was named instead, and which was named hung on where the read's pieces fell."""
        tables = ", ".join(dict.fromkeys(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql))) or "?"
        # each table's alias ("FROM TASK t JOIN COMPUTE_TASK_INFO c"): a TASK cell was said to be in "table TASK,
        # COMPUTE_TASK_INFO", which sent the user to both
        aliases = dict((a, t) for t, a in re.findall(r"\b(?:FROM|JOIN)\s+(\w+)\s+(?!(?:ON|WHERE|JOIN|CROSS|ORDER|"
                                                     r"GROUP|LIMIT|UNION)\b)(\w+)", sql))
        for row in rows:
            for j, v in enumerate(row):
                if j != lenient and _int_cell(v) is None:
                    # the selected expression names its columns as alias.column ("max(t.endNs)")
                    expr = description[j][0]
                    pairs = re.findall(r"\b(\w+)\.(\w+)", expr)
                    column = " / ".join(dict.fromkeys(c for _, c in pairs)) or expr
                    owners = list(dict.fromkeys(aliases.get(a, "") for a, _ in pairs))
                    where = ", ".join(owners) if owners and all(owners) else tables
                    return ProfileError(self.path, f"table {where}: column {column} holds {v!r}, not an integer")
        return ProfileError(self.path, f"table {tables}: a value is not an integer")

    # ------------------------------------------------------------------ strings

    def _string_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._strings is None:
            self.need("STRING_IDS", "id", "value")  # SQLite's "no such column: value" named no table
            rows = self.con.execute("SELECT id, value FROM STRING_IDS WHERE id IS NOT NULL").fetchall()
            ids = [r[0] for r in rows]
            values = [r[1] for r in rows]
            try:  # the usual table: integer ids (array("q") takes Python ints alone) and text values
                id_arr = np.frombuffer(array.array("q", ids), dtype=np.int64)
                plain = set(map(type, values)) <= {str}
            except (TypeError, OverflowError):
                plain = False
            # in bulk: 1.2 -> 0.85 ms of a 34 ms load of the level-1 sample (1,380 texts); else row by row
            self._strings = self._sorted_strings(id_arr, values, np.zeros(len(values), dtype=bool)) if plain \
                else self._strings_by_row(rows)
            if self._strings[2].size and self._strings[2].all():  # every name and type empty: nothing to compare
                raise ProfileError(self.path, f"table STRING_IDS: all {self._strings[2].size} values are NULL, so no "
                                              "name of an operator, kernel or task type can be read")
        return self._strings

    def _strings_by_row(self, rows: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """STRING_IDS rows read one by one: an id must be an integer, a value text, NULL or a UTF-8 blob."""
        ids: list[int] = []
        values: list[str] = []
        nulls: list[bool] = []
        for i, v in rows:
            if i is None:
                continue
            ids.append(self.id_value(i, "STRING_IDS", "id"))
            nulls.append(v is None)  # reads "", as before; a name reference to it is counted
            if v is None:
                values.append("")
                continue
            if isinstance(v, bytes):  # a BLOB: text only if it is UTF-8, as a TEXT value must be
                try:
                    v = v.decode("utf-8")
                except UnicodeDecodeError:
                    raise ProfileError(self.path, f"table STRING_IDS: value of id {i} is not UTF-8 text") \
                        from None
            values.append(str(v))
        return self._sorted_strings(np.asarray(ids, dtype=np.int64), values, np.asarray(nulls, dtype=bool))

    def _sorted_strings(self, id_arr: np.ndarray, values: list[str], nulls: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        val_arr = np.empty(len(values), dtype=object)
        val_arr[:] = values
        order = np.argsort(id_arr, kind="stable")
        repeated = int(np.count_nonzero(np.diff(id_arr[order]) == 0))
        if repeated:  # searchsorted below finds the first row of an id
            self.notes.append(f"{repeated:,} STRING_IDS row(s) repeat an id; the first value of each id is used")
        return id_arr[order], val_arr[order], nulls[order]

    def text(self, ids: np.ndarray, missing: str = "", names: bool = False, column: str = "",
             weights: np.ndarray | None = None, count: bool = True, null: np.ndarray | None = None) -> np.ndarray:
        """Resolve STRING_IDS ids (``-1`` or unknown -> ``missing``) to a str object array. References that
        STRING_IDS lacks or holds as NULL are counted (``count``; each reference ``weights`` rows where given) and
        said in one warning: under ``unnamed`` for a column of ``names`` (kernels, ops, collectives, memory blocks),
        else under ``untexted`` (a type, a shape, a group: an op type pointing nowhere moved its kernel to the
        empty type's KernelCompare row without a word). Any id but ``-1`` can be such a reference: a negative one
        was passed over. ``column`` ("TABLE.column"): its own NULLs (``-1``, no reference at all) are counted under
        it (``_Db.null``). ``null``: where given, the mask of the cells that are NULL (read as ``missing``), so that
        every id, -1 too, is a reference like any other (the query reads NULL as a flag of its own, not as -1).
        Without it -1 is NULL's: no profiler writes a negative STRING_IDS id (every DB sample numbers them from 0,
        torch_npu's from 2**28 and 2**29, and no name column holds one:
        ``tests/test_ascend_db_rules.py::test_no_profiler_writes_a_string_id_of_minus_one``), so a flag column per
        query would cost every load for a file no profiler writes (OP_MEMORY's flag column tells its NULL size and
        allocation time apart too)."""
        sid, sval, blank = self._string_table()
        ids = np.asarray(ids, dtype=np.int64)
        none = ids == -1 if null is None else np.asarray(null, dtype=bool)
        if column:
            self.null(column, np.count_nonzero(none), NULL_EFFECTS.get(
                column, "those names read as empty" if names else "read as empty"))
        if sid.size == 0 or ids.size == 0:
            out = object_full(ids.size, missing)
            bad = ~none
        else:
            pos = np.minimum(np.searchsorted(sid, ids), sid.size - 1)
            out = sval[pos]
            unknown = (sid[pos] != ids) | none
            out[unknown] = missing
            bad = (unknown | blank[pos]) & ~none  # the row's column is NULL itself
        if count and bad.any():
            n = int(np.count_nonzero(bad) if weights is None else np.asarray(weights)[bad].sum())
            if names:
                self.unnamed += n
            else:
                self.untexted += n
        return out

    def string_ids(self, value: str) -> list[int]:
        """Every id of ``value``: STRING_IDS may hold one text under several ids (61 texts twice in the
        level-1 sample, e.g. ``Conv2D``), and a row may use any of them."""
        sid, sval, _ = self._string_table()
        return sid[sval == value].tolist()


# ---------------------------------------------------------------------- steps


def _step_list(ids: np.ndarray) -> str:
    """Step ids as a STEP_TIME note names them, in the order given: runs as ranges and past a dozen pieces the first
    ones, "...", the last and the count (``id_ranges``, as the refusal of an absent step lists the valid ones): a
    table of thousands of damaged rows (every startNs 0) made one line of every id."""
    return id_ranges(ids.tolist(), escape=False)


def _steps(db: _Db) -> pd.DataFrame:
    if not db.has("STEP_TIME"):
        return pd.DataFrame({"id": np.zeros(0, np.int64), "start": np.zeros(0, np.int64), "end": np.zeros(0, np.int64)})
    db.need("STEP_TIME", "id", "startNs", "endNs")
    where = "id IS NULL OR startNs IS NULL OR endNs IS NULL"
    partial = db.scalar(f"SELECT count(*) FROM STEP_TIME WHERE {where}")
    if partial:  # a NULL start read as 0 made the step span everything before its end
        db.notes.append(f"{partial:,} STEP_TIME row(s) lack an id, a start or an end; they are no steps")
    a = db.ints(f"SELECT id, startNs, endNs FROM STEP_TIME WHERE NOT ({where}) ORDER BY {db.rowid('STEP_TIME')}", (), 3)
    # a step over a week long (the bound of any duration) has a damaged time, as a NULL start (read as 0 it spanned
    # every task before its end, unsaid): startNs 0 of an export in epoch ns. Synthetic exports timed from 0 keep
    # their steps; the difference of two int64 values is taken in Python ints (no wrap)
    if (long := np.array([e - s > MAX_DURATION_NS for s, e in a[:, 1:].tolist()], dtype=bool)).any():
        db.notes.append(f"STEP_TIME step(s) {_step_list(a[long, 0])} last over a week (a "
                        "startNs of 0, or another damaged time?); they are no steps")
        a = a[~long]
    ids, first, counts = np.unique(a[:, 0], return_index=True, return_counts=True)
    if (counts > 1).any():
        db.notes.append(f"STEP_TIME holds step(s) {_step_list(ids[counts > 1])} more than "
                        "once; the first row of each is used")
        a = a[np.sort(first)]  # for the step range and for placing tasks in steps alike
    inverted = a[:, 2] < a[:, 1]
    if inverted.any():  # asked for, such a step is refused (_step_range); otherwise it holds no task
        db.notes.append(f"STEP_TIME step(s) {_step_list(a[inverted, 0])} end before they "
                        "start; no data lies in them")
    sound = a[~inverted]
    sound = sound[np.lexsort((-sound[:, 2], sound[:, 1]))]  # of steps starting together the longer first (_step_ids)
    # a step starting before an earlier one ends shares tasks with it: asked for, each step takes its whole range
    # (_step_range), while without a step a task goes to the later one (_step_ids); real exports hold disjoint steps
    inside = np.flatnonzero(sound[1:, 1] < np.maximum.accumulate(sound[:-1, 2])) + 1
    if inside.size:
        tied = sound[inside, 1] == sound[inside - 1, 1]
        said = [f"step(s) {_step_list(sound[inside[m], 0])} {how}"
                for m, how in ((~tied, "start before an earlier step ends"),
                               (tied, f"start with a step that ends no earlier ({SAME_START_STEPS})")) if m.any()]
        # what a sheet shows: the Step Id a task without a step asked for gets (the later step's) reaches none
        db.notes.append(f"STEP_TIME {' and '.join(said)}; a task in two steps is in each when a step is asked for, "
                        "and counted once without one")
    return pd.DataFrame({"id": a[:, 0], "start": a[:, 1], "end": a[:, 2]})


def _step_range(db: _Db, steps: pd.DataFrame, step: int) -> tuple[int, int] | None:
    """The inclusive ``[startNs, endNs]`` of ``step``; StepError (exit 2) when it is absent or ends before it
    starts."""
    if step is None or step < 0:
        return None
    if steps.empty:
        what = "its STEP_TIME table holds no step" if db.has("STEP_TIME") else "it has no STEP_TIME table"
        raise StepError(f"{db.path}: {NO_STEP_MARKERS}", f"{what}, so no step can be chosen: run without "
                        "--base_step / --comparison_step")
    hit = steps[steps["id"] == step]
    if hit.empty:
        ids = id_ranges(list(dict.fromkeys(steps["id"].tolist())), escape=False)
        raise StepError(f"{db.path}: Invalid Step Id: {step}, please choose from the valid steps: {ids}")
    start, end = int(hit["start"].iloc[0]), int(hit["end"].iloc[0])
    if end < start:  # no data can lie in it: "There is no operator event data for step N" hid why
        raise StepError(f"{db.path}: step {step} in STEP_TIME ends before it starts (startNs {start}, endNs {end}), "
                        "so no data lies in it")
    return start, end


def _step_ids(steps: pd.DataFrame, ts: np.ndarray) -> np.ndarray:
    """The STEP_TIME id whose range holds each start time (-1 when none): of overlapping steps the latest to start,
    of two starting together the shorter (the later of the two, as the trace notes say). A step ending before it
    starts holds none, and takes none from the step it starts in. A time past the end of the last step starting
    before it goes to an earlier step that still holds it: it got no id, though inside a step (a step 51 inside
    step 50, or starting with it and ending first, left step 50's later tasks without one)."""
    out = np.full(ts.size, -1, dtype=np.int64)
    starts, ends, ids = (steps[c].to_numpy() for c in ("start", "end", "id"))  # arrays: frame ops cost ~1 ms here
    sound = np.flatnonzero(ends >= starts)
    if not sound.size or ts.size == 0:
        return out
    order = sound[np.lexsort((-ends[sound], starts[sound]))]
    starts, ends, ids = starts[order], ends[order], ids[order]
    reach = np.maximum.accumulate(ends)  # the latest end of the steps up to each: past it no earlier step holds a time
    overlap = bool((starts[1:] < reach[:-1]).any())  # real exports: no, and no pass more over the tasks
    pos = np.searchsorted(starts, ts, side="right") - 1
    ok = pos >= 0
    pc = np.where(ok, pos, 0)
    ok &= ts <= (reach if overlap else ends)[pc]
    if overlap:  # a time past the end of the step found but inside an earlier one: that one's
        back = np.flatnonzero(ok & (ts > ends[pc]))
        while back.size:
            pc[back] -= 1
            back = back[ts[back] > ends[pc[back]]]
    out[ok] = ids[pc[ok]]
    return out


# ---------------------------------------------------------------------- tables


def _kernel_tables(db: _Db) -> list[str]:
    """The info tables the kernels come from. msprof writes either only when it has rows: a run whose only
    kernels are AI-CPU HCCL ones has the schedule table alone."""
    return [info for info in ("COMPUTE_TASK_INFO", SCHEDULE_INFO)
            if db.has(info) and "globalTaskId" in db.columns(info)]


def _compute_tasks(db: _Db, rng: tuple[int, int], steps: pd.DataFrame, step: int, breakdown: bool,
                   statistic: bool) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """(COMPUTE_TASK_INFO + COMMUNICATION_SCHEDULE_TASK_INFO) ⋈ TASK -> (kernels, kernel_extra, kernel_details,
    op_statistic). Newer msprof moves the tasks of AI-CPU HCCL kernels (``*AicpuKernel``) and of the MC2 KFC stream
    out of COMPUTE_TASK_INFO into COMMUNICATION_SCHEDULE_TASK_INFO (``db_assembler.cpp``); the text export keeps
    them in kernel_details.csv and under their op, and so do we (``kernel_extra["schedule"]`` marks them: the time
    breakdown leaves them out of computing, as the Overlap Analysis lane does). The op statistic only where
    ``statistic`` (KernelTypeCompare's, as the text loader reads op_statistic.csv): its group-by cost 3.2 ms a side
    of pair 3's ~60 ms profiling-only compare."""
    for info in ("COMPUTE_TASK_INFO", SCHEDULE_INFO):  # a schedule table without the key was passed over unsaid
        if db.has(info):
            db.need(info, "globalTaskId")
    tables = _kernel_tables(db)
    if not tables:  # the kernel_extra columns the PMU read and the breakdown expect, without rows
        return frame("kernels", {}), pd.DataFrame({
            "op_type": np.zeros(0, object), "rts_type": np.zeros(0, object), "global_task_id": np.zeros(0, np.int64),
            "input_shapes": np.zeros(0, object), "schedule": np.zeros(0, bool)}), None, None
    t = lambda n: db.col("TASK", "t", n)  # noqa: E731
    # the process (globalPid) feeds no figure of a DB (a trace's kernel lookups by pid follow launch flows, which a
    # DB has none of): an export without it is no warning
    # the stream feeds the time breakdown alone (its compute streams): said absent where the run makes it, as its
    # NULL cells are (``_task_summary``)
    t_cols = ["t.startNs", "t.endNs", db.col("TASK", "t", "streamId", figure=breakdown), t("connectionId"),
              "t.globalTaskId", t("taskId"), t("deviceId"),
              db.col("TASK", "t", "globalPid", figure=False), t("taskType")]
    parts = []
    for info in tables:
        c = lambda n, info=info: db.col(info, "c", n)  # noqa: E731
        # msprof writes the schedule table without inputShapes (its tasks' shapes read N/A): no column to miss,
        # where noting it warned "lacks column(s) inputShapes" of every export that has the table
        shapes = "-1" if info == SCHEDULE_INFO and "inputShapes" not in db.columns(info) else c("inputShapes")
        parts.append(_task_join(db, info, t_cols, [c("name"), c("opType"), c("taskType"), shapes], rng))
    schedule = np.repeat([info == SCHEDULE_INFO for info in tables], [len(x) for x in parts])
    a = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if len(parts) > 1:  # by start, as one join gives them
        order = np.argsort(a[:, 0], kind="stable")
        a, schedule = a[order], schedule[order]
    ts, end = a[:, 0], a[:, 1]
    dur = db.durations(ts, end)
    names = db.text(a[:, 9], names=True)
    for info in tables:  # per table: its text columns read as empty (KernelCompare's keys, the categories)
        mine = schedule if info == SCHEDULE_INFO else ~schedule
        # not inputShapes: a NULL there reads as the text the exports write for a task without inputs (below)
        for j, name in ((9, "name"), (10, "opType"), (11, "taskType")):
            if name in db.columns(info):
                db.null(f"{info}.{name}", np.count_nonzero(a[mine, j] == -1))
    for j, name in ((6, "deviceId"), (3, "connectionId"), (5, "taskId")):
        if name in db.columns("TASK"):
            db.null(f"TASK.{name}", np.count_nonzero(a[:, j] == -1))
    _negative_links(db, a[:, 3], "TASK.connectionId", NULL_EFFECTS["TASK.connectionId"])
    # a task id that is no uint32 reads as a NULL one: printed as is (Task Id -5 / 9223372036854775807), and -2
    # marks an HCCL op's row of the kernel pool, so such a kernel was summed as its operator's communication
    task_id = a[:, 5]
    if "taskId" in db.columns("TASK"):
        bad = _no_uint32(db, task_id, "TASK.taskId", "read as missing: " + NULL_EFFECTS["TASK.taskId"])
        if bad.any():
            task_id = np.where(bad, -1, task_id)
    op_type = db.text(a[:, 10])
    core = db.text(a[:, 11])
    # a NULL cell reads as the exports write a task without inputs, "N/A" (the msinsight level0-2 DBs and the text
    # exports' kernel_details.csv): KernelCompare keyed it N/A already, the Kernel Details lines dropped its
    # "[input shapes: N/A]". A table without the column (an export recorded without shapes, its own warning) too
    shapes = db.text(a[:, 12], missing="N/A")
    rts = db.text(a[:, 8], count=False)  # TASK.taskType: counted over every TASK row by _task_summary
    kernels = frame("kernels", {
        "name": names, "cat": object_full(len(a), "npu_task"), "ts": ts, "dur": dur,
        "pid": a[:, 7], "tid": _own_lanes(a[:, 7], a[:, 2], ts), "stream": a[:, 2], "device": a[:, 6],
        "task_type": core, "task_id": task_id, "connection_id": a[:, 3],
    })
    extra = pd.DataFrame({"op_type": op_type, "rts_type": rts, "global_task_id": a[:, 4], "input_shapes": shapes,
                          "schedule": schedule})
    sid = _step_ids(steps, ts)
    step_col = np.where(sid >= 0, sid.astype(str), "").astype(object)
    if step >= 0:
        step_col = object_full(len(a), str(step))
    # "ts"/"dur" are the exact ns values (as the text loader's); the start text is kernel_details.csv's
    details = pd.DataFrame({
        "Step Id": step_col, "Name": names, "Type": op_type, "Accelerator Core": core,
        "Start Time(us)": us_text(ts), "Duration(us)": dur / 1000.0, "Input Shapes": shapes,
        "ts": ts, "dur": dur,
    })
    return kernels, extra, details, _op_statistic(op_type, core, dur) if statistic else None


def _op_statistic(op_type: np.ndarray, core: np.ndarray, dur: np.ndarray) -> pd.DataFrame:
    """op_statistic.csv of the text export, made from the loaded kernels (the DB has no such table): one row per
    (OP Type, Core Type), its count, total, min, average and max time (us) and share of the total, by total
    time, largest first."""
    # summed as int64 ns, divided once: a float sum of µs leaves noise (968.9390000000001 for 968.939)
    stat = (pd.DataFrame({"OP Type": op_type, "Core Type": core, "d": dur})
            .groupby(["OP Type", "Core Type"], sort=False)["d"]
            .agg(["size", "sum", "min", "max"]).reset_index())
    stat.columns = ["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Max Time(us)"]
    ns = stat["Total Time(us)"].to_numpy(np.int64)
    stat["Avg Time(us)"] = ns / (1000 * stat["Count"].to_numpy(np.int64))
    for c in ("Total Time(us)", "Min Time(us)", "Max Time(us)"):
        stat[c] = stat[c].to_numpy(np.int64) / 1000
    stat = stat[["OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)", "Max Time(us)"]]
    total = stat["Total Time(us)"].sum()
    stat["Ratio(%)"] = stat["Total Time(us)"] / total * 100 if total else 0.0
    return stat.sort_values("Total Time(us)", ascending=False, kind="stable").reset_index(drop=True)


#: msprof writes a task id and a communication plane id as uint32 (the level-0 samples' planeId 4,294,967,295)
_UINT32_MAX = 2**32 - 1


def _no_uint32(db: _Db, values: np.ndarray, column: str, effect: str) -> np.ndarray:
    """The cells of ``column`` ("TABLE.column", read with NULL as -1) that are no uint32 (below -1, or over
    4,294,967,295: a damaged cell, int64's greatest) as a mask, said in one note naming the first; -1 is NULL's."""
    # one pass: -1 goes to 0, a value below it wraps over 2**32 (two comparisons cost twice the column's NULL count)
    bad = (values + 1).view(np.uint64) > _UINT32_MAX + 1
    if n := int(np.count_nonzero(bad)):
        db.notes.append(f"{n:,} {column} value(s) are outside 0 to {_UINT32_MAX:,}, no id msprof writes (the first: "
                        f"{int(values[bad][0])}): {effect}")
    return bad


def _negative_links(db: _Db, values: np.ndarray, column: str, effect: str) -> None:
    """Say the cells of ``column`` ("TABLE.column", read with NULL as -1) below -1, naming the first: msprof writes
    connection ids from 0, and the links take ids from 0 alone, so such a cell links nothing, as a NULL one, where
    it was passed over without a word (dbfuzz66: -5 in every tenth TASK row of the level-1 excerpt moved 6 kernels
    from its breakdown's Conv rows to Vector)."""
    bad = values < -1
    if n := int(np.count_nonzero(bad)):
        db.notes.append(f"{n:,} {column} value(s) are negative, no connection id msprof writes (the first: "
                        f"{int(values[bad][0])}): {effect}")


def _own_lanes(pid: np.ndarray, stream: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """The compute tasks' tid: their stream, where that makes (pid, tid, start) one task's alone; else a lane of
    the task's own (-2, -3, ... below any stream). The flows find a task by that key (``optree.flow_kernels``),
    the last task of a key winning, as a trace's kernel map does, where the DB links each task to its operator by
    connection id: a task of no stream (TASK.streamId NULL or absent: -1, as the COMMUNICATION_OP rows of the
    kernel pool are) or one starting on its stream at the same ns as another lost its operator to the other task,
    then owned by both, silently. ``ts`` is sorted (the tasks come by start), so only adjacent starts can tie."""
    tid = stream.copy()
    own = stream == -1
    tie = np.flatnonzero(ts[1:] == ts[:-1])
    if tie.size:  # among tied starts: the rows whose (pid, stream, start) an earlier row holds
        rows = np.union1d(tie, tie + 1)
        own[rows[pd.DataFrame({"p": pid[rows], "s": stream[rows], "t": ts[rows]}).duplicated().to_numpy()]] = True
    if own.any():  # below every stream, a negative one of an odd export too
        tid[own] = min(-2, int(stream.min()) - 1) - np.arange(np.count_nonzero(own), dtype=np.int64)
    return tid


def _pmu(db: _Db, extra: pd.DataFrame, kernels: pd.DataFrame) -> bool:
    """Add the PMU counters of the compute tasks to ``extra``; True when TASK_PMU_INFO has rows.

    A task replayed from a graph runs under one globalTaskId several times (TASK holds a row per run), and
    TASK_PMU_INFO may hold a set per run: each run takes one value per counter by ``_pick_rows`` (a value
    stamped inside the run, else the value of its place among the runs and values no stamp placed, over all
    runs of its globalTaskId, the step's or not)."""
    for n in PMU_NAMES:
        extra[n] = np.full(len(extra), np.nan)
    if not db.has("TASK_PMU_INFO") or db.scalar("SELECT 1 FROM TASK_PMU_INFO LIMIT 1") is None:
        return False
    db.need("TASK_PMU_INFO", "globalTaskId", "name", "value")
    ids = {col: db.string_ids(name) for col, name in PMU_NAMES.items()}
    wanted = {i: n for n, some in ids.items() for i in some}
    if not wanted or extra.empty:
        if not extra.empty:
            _no_counter(db)
        return True
    gid = extra["global_task_id"].to_numpy(dtype=np.int64)
    (r_gid, r_start, r_end, r_timed), where = _loaded_runs(db, gid, kernels)
    # rows of no name (NULL, read -1) come with the counters': a value of no counter, which a loaded task may have
    # lost one of its counters to (NaN), counted from the rows in memory (the scan's extra test cost ~10 ms at 1.4M
    # rows, where a count of its own cost 49). So do names that are no integer (text, a blob, a fraction), which
    # ``_pmu_rows`` refuses as any id: the IN test passed them over, so a task lost a counter without a word (a
    # third of the level-1 excerpt's names '' moved 3 Cube kernels to Vector, dbfuzz66). typeof() <> 'integer'
    # tests NULL too: 0.203 -> 0.226 s CPU a scan of 1.4M rows (IS NULL OR typeof() NOT IN (...) 0.256)
    rows = _pmu_rows(db, f"{_in_pairs('name', len(wanted))} OR typeof(name) <> 'integer'", tuple(wanted),
                     "timestampNs" in db.columns("TASK_PMU_INFO"))
    nameless = rows["name"] == -1
    said_none = False  # the NULL note says that no task has PMU figures: ``_no_counter`` would say it again
    if nameless.any():
        named = bool((~nameless).any())
        # a loaded task's rows only (a step's, compute tasks): the others change no figure
        loaded = np.count_nonzero(np.isin(rows["task"][nameless], gid))
        said_none = not named and loaded > 0
        db.null("TASK_PMU_INFO.name", loaded,
                "those rows name no counter, so their tasks may lack a PMU figure (read as missing; the cube-kernel "
                "rule may pass them over)" if named else
                "those rows name no counter, so no task has PMU figures (the cube-kernel rule finds none)")
        rows = rows[~nameless]
    junk = 0
    odd: dict[str, int] = {}  # TASK_PMU_INFO name -> loaded values below 0 or over MAX_DURATION_NS
    for name, some in ids.items():
        if not some:
            continue
        sel = rows[np.isin(rows["name"], some)]
        sel = sel[np.argsort(sel["task"], kind="stable")]  # by globalTaskId, table order kept within one
        run_pick = _pick_rows(r_gid, r_start, r_end, r_timed, sel["task"], sel["ts"])
        pick = np.where(where >= 0, run_pick[np.maximum(where, 0)], -1)
        got = pick >= 0
        col = np.full(len(extra), np.nan)
        col[got] = sel["value"][pick[got]]
        used = np.zeros(len(sel), dtype=bool)  # each picked row once (np.unique: 7 ms at 49k tasks, a mask 0.1)
        used[pick[got]] = True
        junk += int(np.isnan(sel["value"][used]).sum())
        # as kernel_details.csv's (ns here): a time below 0 or over a week is no reading and reads as 0; -5 made a
        # kernel Cube (the rule tests != 0), 1e30 wrapped an MC2 kernel's computing time (its rint to int64)
        value = sel["value"][used]
        n_odd = int(np.count_nonzero((value < 0) | (value > MAX_DURATION_NS)))
        if n_odd:
            odd[PMU_NAMES[name]] = n_odd
            col[(col < 0) | (col > MAX_DURATION_NS)] = 0.0
        extra[name] = col
    if junk:  # only the values of the tasks loaded (a step, compute tasks) count
        db.notes.append(f"{junk:,} TASK_PMU_INFO value(s) are not finite numbers; read as missing")
    if odd:
        db.notes.append(odd_pmu_note(sum(odd.values()), f"TASK_PMU_INFO {', '.join(odd)}"))
    if not said_none and all(np.isnan(extra[n].to_numpy()).all() for n in PMU_NAMES):
        _no_counter(db)
    return True


def _loaded_runs(db: _Db, gid: np.ndarray, kernels: pd.DataFrame
                 ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The runs the PMU rows are paired over (``_pick_rows``: globalTaskId, start, end and whether it has an end,
    sorted by globalTaskId, then start) and, for each loaded compute task (``gid``: its globalTaskId, ``kernels``:
    its row), its position among them (-1: none). Where TASK replays a globalTaskId the runs are every run of the
    compute tasks, the step's or not, so each run pairs with its own row; else they are the loaded tasks."""
    start = kernels["ts"].to_numpy(dtype=np.int64)
    if "TASK" in db.repeats:  # pair over every run of each globalTaskId, then read the loaded ones
        runs = _all_runs(db, _kernel_tables(db), [])
        r_gid, r_start, r_end, r_timed = runs[:, 0], runs[:, 1], runs[:, 2], runs[:, 3] == 1
        # keyed by (id, start, n-th such run): two runs of one id and start map one to one
        loaded = pd.DataFrame({"gid": gid, "start": start})
        loaded["k"] = loaded.groupby(["gid", "start"], sort=False).cumcount()
        every = pd.DataFrame({"gid": r_gid, "start": r_start, "i": np.arange(r_gid.size)})[r_timed]  # as loaded
        every["k"] = every.groupby(["gid", "start"], sort=False).cumcount()
        where = loaded.merge(every, on=["gid", "start", "k"], how="left", sort=False)["i"].fillna(-1).to_numpy(
            np.int64)
        return (r_gid, r_start, r_end, r_timed), where
    # one run per globalTaskId: the loaded runs, sorted by id
    order = np.argsort(gid, kind="stable")
    r_gid, r_start = gid[order], start[order]
    r_end = r_start + kernels["dur"].to_numpy(dtype=np.int64)[order]
    where = np.empty(gid.size, dtype=np.int64)
    where[order] = np.arange(gid.size)
    return (r_gid, r_start, r_end, np.ones(gid.size, dtype=bool)), where


def _no_counter(db: _Db) -> None:
    """Note a TASK_PMU_INFO with rows of which no compute task loaded gets a counter: the cube-kernel rule then reads
    the PMU and finds no cube kernel. Fuzzed (every row's globalTaskId pointing nowhere, every counter name id a
    text), the level-1 sample's 14 Cube kernels became Vector ones without a word."""
    db.notes.append(f"TASK_PMU_INFO holds rows, but no compute task gets a counter from them "
                    f"({', '.join(PMU_NAMES.values())}): no kernel counts as a cube kernel by its PMU figures")


def _in_pairs(col: str, n: int) -> str:
    """SQL true where ``col`` is one of ``n`` parameters: ``col IN (?, ?) OR col IN (?, ?) ...``. SQLite tests an
    IN list of up to two values by comparisons, a longer one by a lookup in a temporary table, which on the scan
    of TASK_PMU_INFO's 1.4M rows for its four counters cost 0.10 s against 0.08 s."""
    return " OR ".join(f"{col} IN ({','.join('?' * min(2, n - i))})" for i in range(0, n, 2))


def _run_of(task: np.ndarray, ts: np.ndarray, gid: np.ndarray, start: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """For each (globalTaskId, time) of a detail row, the position of the run (a row of ``gid`` / ``start`` /
    ``dur``) of that globalTaskId whose [start, start + dur] holds the time; -1 where none does (no time, or a
    time outside every run). Runs of one globalTaskId never overlap, so the latest run starting at or before
    the time is the only candidate."""
    out = np.full(task.size, -1, dtype=np.int64)
    timed = np.flatnonzero(ts != _NO_TIME)
    if not timed.size or not gid.size:
        return out
    runs = pd.DataFrame({"gid": gid, "start": start, "end": start + dur, "pos": np.arange(gid.size)})
    runs = runs.sort_values("start", kind="stable")
    rows = pd.DataFrame({"gid": task[timed], "ts": ts[timed], "i": timed}).sort_values("ts", kind="stable")
    m = pd.merge_asof(rows, runs, left_on="ts", right_on="start", by="gid", direction="backward")
    hit = m["pos"].notna().to_numpy() & (m["ts"].to_numpy() <= m["end"].fillna(-1).to_numpy())
    out[m["i"].to_numpy()[hit]] = m["pos"].to_numpy()[hit].astype(np.int64)
    return out


_PMU_ROW = np.dtype([("task", np.int64), ("name", np.int64), ("value", np.float64), ("ts", np.int64)])
#: the time of a PMU row without one (no ``timestampNs`` column or a NULL there)
_NO_TIME = np.iinfo(np.int64).min
#: a fetched PMU row: _PMU_ROW plus whether its cells are typed (integer ids, a numeric value)
_PMU_FETCHED = np.dtype(_PMU_ROW.descr + [("typed", np.int64)])
#: the same without the time (a table without ``timestampNs``)
_PMU_FETCHED_UNSTAMPED = np.dtype([("task", np.int64), ("name", np.int64), ("value", np.float64), ("typed", np.int64)])


def _pmu_rows(db: _Db, where: str, params: tuple, stamped: bool) -> np.ndarray:
    """(globalTaskId, name id, value, time) rows of ``TASK_PMU_INFO WHERE <where>`` in table order, as one
    structured array (ids stay exact int64; the time is ``timestampNs`` where ``stamped``, else ``_NO_TIME``, as
    is a time that is no integer). Every value is read by one rule: a number as it is, a number text as its
    number, anything else (other text, a blob, inf) as missing (NaN), counted in one note: SQLite's CAST AS REAL
    read 'abc' as 0.0 (NULL too: it keeps its place in a replayed task's run order). The ids must be integers, as
    in any query (a NULL name reads -1: the caller counts those rows); a row without a globalTaskId is left out,
    counted in a note. Typed rows (the usual case) are converted in bulk; a chunk holding another cell is read row
    by row (the query says which: a separate scan for odd cells cost 0.07 s of 0.18 at 1.4M rows)."""
    # unstamped: no time column at all (a constant column cost a Python int per row, 20 ms at 195k rows)
    ts, typed_ts = (", timestampNs", " AND typeof(timestampNs) = 'integer'") if stamped else ("", "")
    fetched = _PMU_FETCHED if stamped else _PMU_FETCHED_UNSTAMPED
    cur = db.con.execute(f"SELECT globalTaskId, COALESCE(name, -1), value{ts}, typeof(globalTaskId) = 'integer' AND "
                         f"typeof(name) IN ('integer', 'null') AND typeof(value) IN ('integer', 'real'){typed_ts} "
                         "FROM TASK_PMU_INFO "
                         f"WHERE {where} ORDER BY {db.rowid('TASK_PMU_INFO')}", params)
    parts = []
    no_id = 0
    while rows := cur.fetchmany(_CHUNK):
        try:
            got = np.fromiter(rows, dtype=fetched, count=len(rows))
        except (TypeError, ValueError, OverflowError):
            got = None
        if got is not None and got["typed"].all():
            part = np.empty(len(got), dtype=_PMU_ROW)
            for f in ("task", "name", "value"):
                part[f] = got[f]
            part["ts"] = got["ts"] if stamped else _NO_TIME
            parts.append(part)
            continue
        kept = [r for r in rows if r[0] is not None]  # a row of no task: left out, counted
        no_id += len(rows) - len(kept)
        # the ids as read (a whole REAL or digits text: its integer), not as fetched, which numpy would convert
        parts.append(np.fromiter(((db.id_value(r[0], "TASK_PMU_INFO", "globalTaskId"),
                                   db.id_value(r[1], "TASK_PMU_INFO", "name"), _number_or_nan(r[2]),
                                   _time_or_none(r[3]) if stamped else _NO_TIME)
                                  for r in kept), dtype=_PMU_ROW, count=len(kept)))
    if no_id:
        db.notes.append(f"{no_id:,} TASK_PMU_INFO row(s) have no globalTaskId; left out")
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=_PMU_ROW)
    out["value"][~np.isfinite(out["value"])] = np.nan  # NaN: junk (the caller counts those of loaded tasks)
    return out


def _time_or_none(value: Any) -> int:
    """A detail row's ``timestampNs`` cell: an integer within int64 as it is, anything else no time."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) < value < 2**63:
        return value
    return _NO_TIME


def _number_or_nan(value: Any) -> float:
    """A PMU cell as float: numbers and ASCII number texts as they are (as the text loader's CSV cells: no
    ``1_000``, no non-ASCII digits, which ``float`` takes), anything else NaN."""
    if isinstance(value, str) and (not value.isascii() or "_" in value):
        return np.nan
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            return float(value)
        except ValueError:
            return np.nan
    return np.nan


def _check_task_links(db: _Db) -> None:
    """Note what the TASK joins would drop without a word: info rows (compute or communication) whose globalTaskId
    has no TASK row. Counted over the whole DB, by joins that look tasks up by key (a NOT EXISTS scan of TASK took
    167 s at 100 MB). A globalTaskId that TASK repeats is a task replayed from a graph (one row per run), no
    damage, unless a row repeats a run's start too (counted); ``db.repeats`` records that, and which info tables
    repeat one too (their joins pair rows to runs)."""
    if "globalTaskId" not in db.columns("TASK"):
        if any(db.has(info) for info in ("COMPUTE_TASK_INFO", SCHEDULE_INFO, "COMMUNICATION_TASK_INFO")):
            db.need("TASK", "globalTaskId")  # the joins' SQL error named no table ("no such column: t.globalTaskId")
        return
    if db.scalar("SELECT count(globalTaskId) - count(DISTINCT globalTaskId) FROM TASK"):
        db.repeats.add("TASK")
        # a replay's runs start apart; a row repeating a run's start is that run written again (a file joined from
        # two copies), read as a second run: 3 such rows took Conv (Backward) 1.958 -> 1.979 ms and its kernel count
        # 46 -> 47 without a word (dbfuzz63). Only where TASK repeats an id, so an export without replays pays nothing;
        # the pairs are grouped only where some start repeats (1M replayed rows: ~0.9 s, the pairs ~2 s more)
        if db.scalar("SELECT count(startNs) - count(DISTINCT startNs) FROM TASK") and (twice := db.scalar(
                "SELECT sum(n - 1) FROM (SELECT count(*) AS n FROM TASK WHERE globalTaskId IS NOT NULL "
                "AND startNs IS NOT NULL GROUP BY globalTaskId, startNs HAVING n > 1)")):
            db.notes.append(f"{twice:,} TASK row(s) repeat an earlier row's globalTaskId and startNs (the same task "
                            "written again, as in a file joined from two copies: a graph replay's runs start apart); "
                            "they are read as written, so figures that sum tasks count those tasks more than once")
    for info in ("COMPUTE_TASK_INFO", SCHEDULE_INFO, "COMMUNICATION_TASK_INFO"):
        if db.has(info) and "globalTaskId" in db.columns(info):
            n, no_id, rows = db.con.execute(f"SELECT count(DISTINCT globalTaskId), count(*) - count(globalTaskId), "
                                            f"count(globalTaskId) FROM {info}").fetchone()
            if (rows or 0) > (n or 0):
                db.repeats.add(info)
            # TASK first (CROSS JOIN fixes the order): the planner's other order built a temporary index of
            # TASK per query (0.044 -> 0.024 s at 146k tasks)
            # where neither table repeats a globalTaskId a join row is one info row: count(*) counts what DISTINCT
            # would, without its temporary B-tree (43 -> 29 ms for 78k communication tasks)
            what = "count(DISTINCT c.globalTaskId)" if {"TASK", info} & db.repeats else "count(*)"
            linked = db.scalar(f"SELECT {what} FROM TASK t CROSS JOIN {info} c ON c.globalTaskId = t.globalTaskId") or 0
            if (n or 0) > linked:
                db.notes.append(f"{n - linked:,} globalTaskId(s) of {info} have no TASK row (no time); left out")
            if no_id:
                db.notes.append(f"{no_id:,} {info} row(s) have no globalTaskId; left out")


def _task_join(db: _Db, info: str, t_cols: list[str], c_cols: list[str], rng: tuple[int, int]) -> np.ndarray:
    """``TASK t ⋈ info c`` in range, by start: the ``t_cols`` then the ``c_cols`` expressions of each row, one row
    per run. Where ``info`` repeats a globalTaskId (a graph replay writes a row per run), each run takes one row
    of its globalTaskId (``_pick_rows``) instead of all of them (n runs with n rows were n * n tasks), paired
    over every run of the globalTaskId, not only the step's (a later step's run takes its own row, with its own
    opId)."""
    cols = t_cols + c_cols
    if info not in db.repeats:
        return db.ints(f"SELECT {', '.join(cols)} FROM TASK t JOIN {info} c ON c.globalTaskId = t.globalTaskId "
                       "WHERE t.startNs BETWEEN ? AND ? AND t.endNs IS NOT NULL ORDER BY t.startNs", rng, len(cols))
    runs = _all_runs(db, [info], [c if c != "t.endNs" else "COALESCE(t.endNs, t.startNs)" for c in t_cols])
    stamp = (f"CASE WHEN typeof(c.timestampNs) = 'integer' THEN c.timestampNs ELSE {_NO_TIME} END"
             if "timestampNs" in db.columns(info) else str(_NO_TIME))
    rows = db.ints(f"SELECT c.globalTaskId, {stamp}, {', '.join(c_cols)} FROM {info} c "
                   f"WHERE c.globalTaskId IS NOT NULL ORDER BY c.globalTaskId, {db.rowid(info, 'c')}", (),
                   2 + len(c_cols))
    pick = _pick_rows(runs[:, 0], runs[:, 1], runs[:, 2], runs[:, 3] == 1, rows[:, 0], rows[:, 1])
    # rows of a globalTaskId with more rows than TASK runs pair with no run and are left out: said (a second row
    # naming a task, as an edited or merged copy writes it, lost the task it named from every figure, dbfuzz63)
    used = np.zeros(len(rows), dtype=bool)
    used[pick[pick >= 0]] = True
    if (spare := int(np.count_nonzero(~used & np.isin(rows[:, 0], runs[:, 0])))):
        db.notes.append(f"{spare:,} {info} row(s) of a globalTaskId that TASK holds fewer times pair with no TASK "
                        "run; left out")
    keep = np.flatnonzero((pick >= 0) & (runs[:, 3] == 1) & (runs[:, 1] >= rng[0]) & (runs[:, 1] <= rng[1]))
    keep = keep[np.argsort(runs[keep, 1], kind="stable")]
    return np.hstack([runs[keep, 4:], rows[pick[keep], 2:]])


def _all_runs(db: _Db, infos: list[str], t_cols: list[str]) -> np.ndarray:
    """Every TASK run of the ``infos`` tables' globalTaskIds that has a start, the step's or not, by
    (globalTaskId, start): globalTaskId, start, end (the start where there is none), whether it has an end (1 /
    0), then ``t_cols``.
    A run without an end is no task but still counts in its globalTaskId's run order. (IN: the id list is built
    once; a join on a subquery without an index was quadratic.)"""
    extra = "".join(f", {c}" for c in t_cols)
    ids = " UNION ALL ".join(f"SELECT globalTaskId FROM {info}" for info in infos)
    return db.ints(f"SELECT t.globalTaskId, t.startNs, COALESCE(t.endNs, t.startNs), t.endNs IS NOT NULL{extra} "
                   f"FROM TASK t WHERE t.globalTaskId IN ({ids}) AND t.startNs IS NOT NULL "
                   f"ORDER BY t.globalTaskId, t.startNs, {db.rowid('TASK', 't')}", (), 4 + len(t_cols))


def _groups_of(gid: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of ``keys``: whether sorted ``gid`` holds it, the index of its first element there and its
    count (0, 0 where absent)."""
    has = np.zeros(keys.size, dtype=bool)
    first = np.zeros(keys.size, dtype=np.int64)
    count = np.zeros(keys.size, dtype=np.int64)
    if gid.size and keys.size:
        uniq, at, n = np.unique(gid, return_index=True, return_counts=True)
        pos = np.minimum(np.searchsorted(uniq, keys), uniq.size - 1)
        has = uniq[pos] == keys
        first[has], count[has] = at[pos[has]], n[pos[has]]
    return has, first, count


def _pick_rows(run_gid: np.ndarray, run_start: np.ndarray, run_end: np.ndarray, run_timed: np.ndarray,
               row_gid: np.ndarray, row_ts: np.ndarray) -> np.ndarray:
    """For each run (every run of its globalTaskId, sorted by globalTaskId, then start; ``run_timed``: it has
    an end), the index of its detail row (rows sorted by globalTaskId, then table order), -1 when its
    globalTaskId has none. A row stamped with a time inside a run of its globalTaskId (``timestampNs`` of newer
    exports; runs of one id never overlap) belongs to that run (the first such row, where two are). The other
    runs pair with the rows no stamp placed, in order: the k-th such run the k-th such row, the last one where
    fewer are left (one row for all runs: a task written once per graph), or, where a stamp placed every row,
    the row of the run's own rank. Table order is the only clue an export without stamps gives; we take it to
    follow the runs, as msprof appends each run's rows as it reads the device data."""
    pick = np.full(run_gid.size, -1, dtype=np.int64)
    has, first, count = _groups_of(row_gid, run_gid)
    if not has.any():
        return pick
    done = np.zeros(run_gid.size, dtype=bool)
    used = np.zeros(row_gid.size, dtype=bool)
    stamped = np.flatnonzero(row_ts != _NO_TIME)
    timed = np.flatnonzero(run_timed)
    if stamped.size and timed.size:
        at = _run_of(row_gid[stamped], row_ts[stamped], run_gid[timed], run_start[timed],
                     run_end[timed] - run_start[timed])
        hit = np.flatnonzero(at >= 0)
        runs, once = np.unique(timed[at[hit]], return_index=True)  # first stamped row of each run
        pick[runs] = stamped[hit[once]]
        done[runs] = True
        used[stamped[hit[once]]] = True
    rest = np.flatnonzero(has & ~done)
    free = np.flatnonzero(~used)
    f_has, f_first, f_count = _groups_of(row_gid[free], run_gid[rest])
    rank = positions_in_runs(run_gid[rest])
    sel = rest[f_has]
    pick[sel] = free[f_first[f_has] + np.minimum(rank[f_has], f_count[f_has] - 1)]
    other = rest[~f_has]
    pick[other] = first[other] + np.minimum(positions_in_runs(run_gid)[other], count[other] - 1)
    return pick


def _task_summary(db: _Db, rng: tuple[int, int], breakdown: bool) -> pd.DataFrame:
    """Per (task type, stream) of the TASK rows in range: count, total ns, first start, last end. A NULL task type
    or stream (-1) is counted from these groups at no cost (``breakdown``: the figures that read them are made):
    a task of no type is kept in the E2E span, as the original reads it, and passed over by the SDMA, event-wait
    and cube rules; one on no stream belongs to no compute stream. With no type anywhere in range no breakdown
    can be made: an error."""
    # a task lasting over MAX_DURATION_NS is 0 long (ends at its start); compared as end > start + bound, which
    # cannot overflow for times inside the int64 range a trace can hold
    long = f"t.endNs > t.startNs + {MAX_DURATION_NS}"
    # a step's tasks go by start: one of a damaged start (int64's greatest, 0) that ends in the step left it unsaid,
    # where the run over every step counts it (a kernel fewer in the step's breakdown). Such rows are read as groups
    # of their own (flag 0) and counted: 13 ms more a 1.1M-row TASK, where a scan of their own took 36 ms
    where, params, flag = "t.startNs BETWEEN ? AND ?", rng, ""
    if rng != _ALL:
        where = f"({where} OR (t.endNs BETWEEN ? AND ? AND (t.endNs < t.startNs OR {long})))"
        params, flag = (*rng, *rng, *rng), ", t.startNs BETWEEN ? AND ?"
    group = "1, 2, 9" if flag else "1, 2"
    a = db.ints(f"SELECT {db.col('TASK', 't', 'taskType')}, {db.col('TASK', 't', 'streamId', figure=breakdown)}, "
                f"count(*), sum(CASE WHEN t.endNs < t.startNs OR {long} THEN 0 ELSE t.endNs - t.startNs END), "
                f"min(t.startNs), max(CASE WHEN {long} THEN t.startNs ELSE t.endNs END), sum(t.endNs < t.startNs), "
                f"sum({long}){flag} FROM TASK t WHERE {where} AND t.endNs IS NOT NULL GROUP BY {group}",
                params, 9 if flag else 8)
    if flag:
        if lost := int(a[a[:, 8] == 0, 2].sum()):
            db.notes.append(f"{lost:,} TASK row(s) end in the step but start outside it at a damaged time (after "
                            "their end, or over a week before it); they are left out of the step, where a run over "
                            "every step counts them (0 long)")
        a = a[a[:, 8] == 1, :8]
    backwards = int(a[:, 6].sum()) if len(a) else 0
    if backwards:
        db.negative["TASK"] = backwards
    too_long = int(a[:, 7].sum()) if len(a) else 0
    if too_long:
        db.too_long["TASK"] = too_long
    cols = db.columns("TASK")
    if breakdown and len(a):
        untyped = int(a[a[:, 0] == -1, 2].sum())
        if untyped and untyped == int(a[:, 2].sum()):  # every task is of no type: no E2E, SDMA or kernel kind
            # a table without the column is as typeless (its E2E grew from 0.138 to 0.172 s, said only as absent)
            what = (f"table TASK: column taskType is NULL in all {untyped:,} row(s) in range" if "taskType" in cols
                    else "table TASK lacks column taskType")
            raise ProfileError(db.path, f"{what}, so no task type is known and the time breakdown cannot tell "
                                        "kernels, SDMA and profiling tasks apart")
        db.null("TASK.taskType", untyped)
    if breakdown and len(a) and "streamId" in cols:
        db.null("TASK.streamId", int(a[a[:, 1] == -1, 2].sum()))
    return pd.DataFrame({"rts_type": db.text(a[:, 0], weights=a[:, 2]), "stream": a[:, 1], "count": a[:, 2],
                         "total_ns": a[:, 3], "first_start": a[:, 4], "last_end": a[:, 5]})


def _c_core_sqe(db: _Db, rng: tuple[int, int]) -> pd.DataFrame:
    sids = db.string_ids("C_CORE_SQE")
    if not sids or "taskType" not in db.columns("TASK"):
        return pd.DataFrame({"ts": np.zeros(0, np.int64), "end": np.zeros(0, np.int64)})
    a = db.ints(f"SELECT startNs, endNs FROM TASK WHERE taskType IN ({','.join('?' * len(sids))}) "
                "AND startNs BETWEEN ? AND ? AND endNs IS NOT NULL ORDER BY startNs", (*sids, *rng), 2)
    # an end before the start, or over MAX_DURATION_NS after it: 0 long (counted with the TASK table)
    return pd.DataFrame({"ts": a[:, 0], "end": a[:, 0] + db.durations(a[:, 0], a[:, 1])})




def _copy_tasks(db: _Db, rng: tuple[int, int]) -> pd.DataFrame:
    """The copy tasks in range (``COPY_TASK_TYPES``), as ``_c_core_sqe`` reads its tasks: (ts, end). Over every
    step the table is scanned (``+startNs``): the export's start-time index made it look each row up, 0.16 s
    against 0.09 s on a 240,000-task DB."""
    sids = [i for t in COPY_TASK_TYPES for i in db.string_ids(t)]
    if not sids or "taskType" not in db.columns("TASK"):
        return pd.DataFrame({"ts": np.zeros(0, np.int64), "end": np.zeros(0, np.int64)})
    start = "+startNs" if rng == _ALL else "startNs"
    a = db.ints(f"SELECT startNs, endNs FROM TASK WHERE taskType IN ({','.join('?' * len(sids))}) "
                f"AND {start} BETWEEN ? AND ? AND endNs IS NOT NULL", (*sids, *rng), 2)
    return pd.DataFrame({"ts": a[:, 0], "end": a[:, 0] + db.durations(a[:, 0], a[:, 1])})


def _communication(db: _Db, rng: tuple[int, int], breakdown: bool) -> pd.DataFrame:
    """COMMUNICATION_OP as lane "op" and COMMUNICATION_TASK_INFO ⋈ TASK as lane "task". An op's name (opName) feeds
    the time breakdown's Lccl Time alone (CommunicationCompare names a DB's ops by type; no flow links them to a
    torch op): its absence and NULL cells are said where the run makes the breakdown (``breakdown``)."""
    parts = []
    if db.has("COMMUNICATION_OP"):
        db.need_times("COMMUNICATION_OP")
        o = lambda n: db.col("COMMUNICATION_OP", "o", n)  # noqa: E731
        name = db.col("COMMUNICATION_OP", "o", "opName", figure=breakdown)
        a = db.ints(f"SELECT o.startNs, o.endNs, {name}, {o('groupName')}, {o('opId')}, {o('opType')} "
                    "FROM COMMUNICATION_OP o "
                    "WHERE o.startNs BETWEEN ? AND ? AND o.endNs IS NOT NULL ORDER BY o.startNs", rng, 6)
        # rows alike in every column read, opId too (the exports' key, which a table joined from two copies repeats):
        # each counts, as in the original, said as OP_MEMORY's are (dbfuzz66: one of the level-1 excerpt's 4 ops
        # written twice made CommunicationCompare's Calls 4 -> 5 without a word). Tested among rows of a shared start
        if repeated := repeats([a[:, j] for j in range(6)], np.flatnonzero(pd.Index(a[:, 0]).duplicated(keep=False))):
            db.notes.append(repeated_rows_note(repeated, "COMMUNICATION_OP row(s)", "communication op",
                                               "CommunicationCompare counts those ops' calls and time"))
        parts.append(frame("comm", {
            "name": db.text(a[:, 2], names=True, column=db.named("COMMUNICATION_OP", "opName") if breakdown else ""),
            "ts": a[:, 0],
            "dur": db.durations(a[:, 0], a[:, 1], "COMMUNICATION_OP"),
            "lane": object_full(len(a), "op"),
            "group": db.text(a[:, 3], column=db.named("COMMUNICATION_OP", "groupName")),
            "op_id": a[:, 4], "task_type": db.text(a[:, 5]),
        }))
    if db.has("COMMUNICATION_TASK_INFO"):
        db.need("COMMUNICATION_TASK_INFO", "globalTaskId")
        c = lambda n: db.col("COMMUNICATION_TASK_INFO", "c", n)  # noqa: E731
        # columns: start, end, pid | task type, plane, group, op id
        pid = db.col("TASK", "t", "globalPid", figure=False)  # as the kernels' (``_compute_tasks``)
        a = _task_join(db, "COMMUNICATION_TASK_INFO", ["t.startNs", "t.endNs", pid],
                       [c("taskType"), c("planeId"), c("groupName"), c("opId")], rng)
        if "opId" in db.columns("COMMUNICATION_TASK_INFO"):
            db.null("COMMUNICATION_TASK_INFO.opId", np.count_nonzero(a[:, 6] == -1))
        if "planeId" in db.columns("COMMUNICATION_TASK_INFO"):
            db.null("COMMUNICATION_TASK_INFO.planeId", np.count_nonzero(a[:, 4] == -1))
            # kept: a damaged id still groups its tasks as a sound one would, where read as NULL's -1 they would
            # join the tasks of no plane
            _no_uint32(db, a[:, 4], "COMMUNICATION_TASK_INFO.planeId",
                       "each such value is read as a plane of its own (the wait rule takes, per group, the plane of "
                       "least wait)")
        _orphan_op_ids(db, a[:, 6])
        parts.append(frame("comm", {
            "name": db.text(a[:, 3], names=True, column=db.named("COMMUNICATION_TASK_INFO", "taskType")), "ts": a[:, 0],
            "dur": db.durations(a[:, 0], a[:, 1]),
            "pid": a[:, 2], "tid": a[:, 4],
            "lane": object_full(len(a), "task"),
            "group": db.text(a[:, 5], column=db.named("COMMUNICATION_TASK_INFO", "groupName")),
            "plane": a[:, 4].astype(str).astype(object), "op_id": a[:, 6], "task_type": db.text(a[:, 3], count=False),
        }))
    _one_comm_table(db)
    if not parts:
        return frame("comm", {})
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _comm_step_cut(db: _Db, rng: tuple[int, int], comm: pd.DataFrame) -> tuple[int, int, int, int]:
    """The communication tasks a step's bounds part from their op, as ``COMM_STEP_CUT`` counts them; the step's
    tasks of an op outside it take ``OP_OUT_OF_STEP`` in ``comm`` (else they were placed by time, under another op
    or none). Both cuts are the original's rule (ops and tasks by start, tasks to their op by opId), said by
    ``communication.step_cut``: moving the level-1 sample's step start 1 us into its first op left 73 of its 295
    tasks out without a word."""
    if (rng == _ALL or not len(comm) or not db.has("COMMUNICATION_OP") or not db.has("COMMUNICATION_TASK_INFO")
            or "opId" not in db.columns("COMMUNICATION_OP") or "opId" not in db.columns("COMMUNICATION_TASK_INFO")):
        return (0, 0, 0, 0)
    task = (comm["lane"] == "task").to_numpy()
    op_id = comm["op_id"].to_numpy()
    outside = db.ints("SELECT o.opId FROM COMMUNICATION_OP o WHERE o.opId IS NOT NULL AND o.endNs IS NOT NULL "
                      "AND o.startNs IS NOT NULL AND NOT (o.startNs BETWEEN ? AND ?)", rng, 1)[:, 0]
    cut = task & (op_id >= 0) & np.isin(op_id, outside)
    before = (len(np.unique(op_id[cut])), int(cut.sum()))
    if cut.any():
        comm.loc[cut, "op_id"] = OP_OUT_OF_STEP
    # tasks after the step of its ops: one row per TASK run, as the step's own tasks are counted
    after = db.ints("SELECT count(DISTINCT o.opId), count(*) FROM TASK t "
                    "JOIN COMMUNICATION_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
                    "JOIN COMMUNICATION_OP o ON o.opId = c.opId "
                    "WHERE o.startNs BETWEEN ? AND ? AND o.endNs IS NOT NULL AND t.startNs > ? "
                    "AND t.endNs IS NOT NULL", (*rng, rng[1]), 2)
    return (*before, int(after[0, 0]), int(after[0, 1]))


def _orphan_op_ids(db: _Db, op_id: np.ndarray) -> None:
    """Count the communication tasks whose opId no COMMUNICATION_OP row holds, in the step or not: CommunicationCompare
    pairs a task with its op by id and dropped such a task without a word (Calls 36 -> 35 on the level-1 sample for
    one task); it places them by time now, as a NULL opId (``communication.side_data``). A negative opId no op holds
    (-5; -2, the mark of a task whose op is outside the step) is such a task too, and is rewritten to the NULL mark
    (-1) in ``op_id``: CommunicationCompare placed only ids from 0 by time, so 42 tasks of opId -5 left it without a
    word (Calls 36 -> 32, dbfuzz63)."""
    if not (op_id != -1).any() or not db.has("COMMUNICATION_OP") or "opId" not in db.columns("COMMUNICATION_OP"):
        return
    if db.scalar("SELECT 1 FROM COMMUNICATION_OP LIMIT 1") is None:
        # no op at all: ``_one_comm_table`` says so; "they go to the communication op whose time holds their start"
        # beside it named ops that are not there
        return
    known = db.ints("SELECT DISTINCT o.opId FROM COMMUNICATION_OP o WHERE o.opId IS NOT NULL", (), 1)[:, 0]
    orphan = (op_id != -1) & ~np.isin(op_id, known)
    if orphan.any():
        db.notes.append(f"{int(orphan.sum()):,} COMMUNICATION_TASK_INFO row(s) name an opId that COMMUNICATION_OP "
                        "lacks; they go to the communication op whose time holds their start")
        op_id[orphan & (op_id < 0)] = -1


def _one_comm_table(db: _Db) -> None:
    """Note a DB holding communication ops but no communication task, or the reverse (the table absent or
    empty): msprof writes both or neither, and either alone changed the communication figures without a word (no
    task: a Wait Time of 2.7 ms read 0; no op: 98 ms of Communication time read as Free Time)."""
    held = {t: db.has(t) and db.scalar(f"SELECT 1 FROM {t} LIMIT 1") is not None
            for t in ("COMMUNICATION_OP", "COMMUNICATION_TASK_INFO")}
    if held["COMMUNICATION_OP"] == held["COMMUNICATION_TASK_INFO"]:
        return
    have, lack = sorted(held, key=held.get, reverse=True)
    state = "is empty" if db.has(lack) else "is absent"
    effect = ("no communication task is known, so the Wait Time of communication reads 0 and CommunicationCompare "
              "has no task rows" if have == "COMMUNICATION_OP" else
              "no communication op is known, so no Communication time is counted (its tasks' time is Free Time)")
    db.notes.append(f"{have} holds rows but {lack} {state}: {effect}")


def _metadata(db: _Db) -> dict[str, Any]:
    """META_DATA as the text export's profiler_metadata.json: torch_npu and MindSpore write the same keys
    (``parallel_group_info``, ``distributed_args``, ``ENV_VARIABLES``) there, each value as JSON text. It feeds
    only the world-size check, so a value that is no JSON stays text and a table without the two columns
    reads as none."""
    if not db.has("META_DATA") or [c for c in ("name", "value") if db.lacks("META_DATA", c)]:
        return {}
    out: dict[str, Any] = {}
    # as bytes: a text that is not UTF-8 would fail the whole load in sqlite3's decoding (the original never
    # reads the table); such a name or value is read with replacement characters
    rows = db.con.execute("SELECT CAST(name AS BLOB), CAST(value AS BLOB) FROM META_DATA WHERE name IS NOT NULL")
    for name, value in rows:
        text = None if value is None else bytes(value).decode("utf-8", "replace")
        parsed: Any = text
        if text is not None and text.lstrip()[:1] in ("{", "["):
            try:
                parsed = msgspec.json.decode(text)
            except (msgspec.DecodeError, RecursionError):
                pass
        out[bytes(name).decode("utf-8", "replace")] = parsed
    return out


def _device_ranks(db: _Db) -> tuple[tuple[int, ...], tuple[int, str]]:
    """The rank ids RANK_DEVICE_MAP records (rankId, each once, sorted; cells that are no rank id passed over): the
    rank the DB itself names, which a folder of ranks' discovery checks against its profiler_info_N.json
    (``ranks.check_db_rank``). torch_npu writes it where META_DATA holds no ``distributed_args`` (msinsight's
    2-rank DB exports: one row, (0, 0) and (1, 1)). () where the table or its column is missing. With them, the
    count of cells that are no rank id (NULL, negative, over ``MAX_RANK``, a fraction, other text) and the first, for
    the check's note where they leave it nothing to check. A whole REAL or an integer's text (a column declared
    without INTEGER affinity) is the rank it writes, as ``_rank_span`` and the text loader read one."""
    if not db.has("RANK_DEVICE_MAP") or db.lacks("RANK_DEVICE_MAP", "rankId"):
        return (), (0, "")
    rank = f"typeof(rankId) = 'integer' AND rankId BETWEEN 0 AND {MAX_RANK}"
    rows = db.con.execute(f"SELECT DISTINCT rankId FROM RANK_DEVICE_MAP WHERE {rank}")
    ranks = {int(r) for r, in rows}
    odd, first = 0, None
    for value, read, count in _other_rank_cells(db, "RANK_DEVICE_MAP", "rankId", rank, with_null=True):
        if read is not None and 0 <= read <= MAX_RANK:
            ranks.add(read)
        else:
            odd, first = odd + count, first if odd else value
    return tuple(sorted(ranks)), (odd, short_repr(first) if odd else "")


def _other_rank_cells(db: _Db, table: str, col: str, rank: str,
                      with_null: bool = False) -> list[tuple[Any, int | None, int]]:
    """The cells of ``col`` that the SQL test ``rank`` (an INTEGER rank id) passes over, each distinct value once in
    table order of its first cell: (value, its whole number as the text loader reads a rank, ``traceio.whole_int``:
    ``3.0`` and ``'3'`` are 3, else None; its count). NULL among them only ``with_null``. Read only where the
    usual scan found such a cell: a whole REAL or an integer's text in a column declared without INTEGER affinity
    was counted as no rank id, where the text loader reads the same value as that rank."""
    null = "" if with_null else f"{col} IS NOT NULL AND "
    rows = db.con.execute(f"SELECT {col}, count(*), min({db.rowid(table)}) FROM {table} WHERE {null}NOT "
                          f"({rank}) GROUP BY {col}").fetchall()
    rows.sort(key=lambda r: (r[2] is None, r[2] or 0))
    return [(v, None if isinstance(v, bytes) else traceio.whole_int(v), n) for v, n, _ in rows]


def _device_map_none(db: _Db) -> str:
    """Why RANK_DEVICE_MAP holds no rankId cell at all, for the rank check's note (``ranks.check_db_rank``): exports
    that never write it are usual (msprof_0.db of the msinsight server's tests), so it is no warning."""
    if not db.has("RANK_DEVICE_MAP"):
        return "no RANK_DEVICE_MAP table"
    if "rankId" not in db.columns("RANK_DEVICE_MAP"):
        return "a RANK_DEVICE_MAP without a rankId column"
    return "an empty RANK_DEVICE_MAP"


def _rank_span(db: _Db) -> int:
    """The highest rank id COMMUNICATION_TASK_INFO names (as source or destination), plus one; 0 when none.
    Over every row, not only the step's: it bounds the world size, which no step changes. A cell that is no
    rank id is passed over: HCCL's NO_RANK and NULL (no peer) unsaid, any other (negative, over ``MAX_RANK``,
    not an integer) counted in one warning: 3000000000 made the world "at least 3000000001" ranks unsaid."""
    if not db.has("COMMUNICATION_TASK_INFO"):
        return 0
    cols = [c for c in ("srcRank", "dstRank") if not db.lacks("COMMUNICATION_TASK_INFO", c)]
    if not cols:
        return 0
    rank = "typeof({c}) = 'integer' AND {c} BETWEEN 0 AND {top}"
    # one scan, per column the largest rank id and the counts that tell the odd cells: cells, rank ids, no-peer
    # ones (a UNION ALL of the two columns scanned the table twice: 36 -> 20 ms at 78k rows). Counted so, the odd
    # cells cost 17% of the scan at 1M rows (0.57 -> 0.67 s), a sum of their own test 90% (1.09 s)
    picks = [f"max(CASE WHEN {rank.format(c=c, top=MAX_RANK)} THEN {c} END), count(CASE WHEN "
             f"{rank.format(c=c, top=MAX_RANK)} THEN 1 END), sum({c} = {NO_RANK}), count({c})" for c in cols]
    got = db.con.execute(f"SELECT {', '.join(picks)} FROM COMMUNICATION_TASK_INFO").fetchone()
    tops = got[::4]
    n_odd = sum((cells or 0) - ranks - (peerless or 0) for ranks, peerless, cells in zip(
        got[1::4], got[2::4], got[3::4], strict=True))
    tops = [v for v in tops if v is not None]
    first = None
    if n_odd:  # whole REALs and integers' texts among them are rank ids (or no peer), as the text loader reads them
        n_odd = 0
        for c in cols:
            for value, read, count in _other_rank_cells(db, "COMMUNICATION_TASK_INFO", c,
                                                        rank.format(c=c, top=MAX_RANK)):
                if read is not None and 0 <= read <= MAX_RANK:
                    tops.append(read)
                elif read != NO_RANK:
                    n_odd, first = n_odd + count, first if n_odd else value
    if n_odd:
        db.notes.append(odd_ranks_note(n_odd, "COMMUNICATION_TASK_INFO srcRank / dstRank", short_repr(first)))
    return int(max(tops)) + 1 if tops else 0


def _api_types(db: _Db) -> dict[str, tuple[int, ...]]:
    """The ENUM_API_TYPE ids of each PYTORCH_API kind read (op, queue, trace); a kind the table lacks keeps its
    default id. Every id of a name counts: the ids are the table's key but the names are not, and keeping only
    the last id of a repeated name lost every torch op without a word. An id under two names is the first's."""
    owner: dict[int, str] = {}
    # a table without its two columns is read as absent (the default ids), said as absent columns
    if db.has("ENUM_API_TYPE") and not [c for c in ("id", "name") if db.lacks("ENUM_API_TYPE", c)]:
        for i, name in db.con.execute("SELECT id, name FROM ENUM_API_TYPE"):
            if name in _API_TYPES and i is not None:
                owner.setdefault(db.id_value(i, "ENUM_API_TYPE", "id"), name)
    return {name: tuple(i for i, n in owner.items() if n == name) or (default,)
            for name, default in _API_TYPES.items()}


def _enum_ids(db: _Db) -> tuple[int, ...]:
    """Every integer id ENUM_API_TYPE holds (each kind, read or not: mstx, runtime, ...), read as ``_api_types``
    reads its kinds' ids (``_int_cell``: a whole REAL or digits text is its integer; other cells name no id); ()
    without the table or its id column. Integers alone were taken, so a kind's id written as digits text was read
    by ``_api_types`` but said as one "ENUM_API_TYPE lacks" for the rows of it."""
    if not db.has("ENUM_API_TYPE") or db.lacks("ENUM_API_TYPE", "id"):
        return ()
    ids = (_int_cell(i) for i, in db.con.execute("SELECT DISTINCT id FROM ENUM_API_TYPE"))
    return tuple(dict.fromkeys(i for i in ids if i is not None))


def _api_kind(db: _Db, types: dict[str, tuple[int, ...]]) -> str | None:
    """The SQL of a PYTORCH_API row's kind (an ENUM_API_TYPE id). Exports before the ``type`` column (added in
    August 2024) wrote torch ops, task-queue and Python rows into one table: only an op has a sequence number,
    a queue row a connection id (``Enqueue`` / ``Dequeue``) and a Python row neither. None when neither column
    tells them apart."""
    cols = db.columns("PYTORCH_API")
    if "type" in cols:
        return "p.type"
    if "sequenceNumber" not in cols:
        return None
    queue = f"WHEN p.connectionId IS NOT NULL THEN {types['queue'][0]} " if "connectionId" in cols else ""
    return f"(CASE WHEN p.sequenceNumber IS NOT NULL THEN {types['op'][0]} {queue}ELSE {types['trace'][0]} END)"


#: The SQL test of a PYTORCH_API row whose type is stored other than as an integer (or NULL).
_ODD_TYPE = "typeof(p.type) NOT IN ('integer', 'null')"
#: The SQL test of a PYTORCH_API type stored as the ASCII digits of an integer (``_DIGITS``, as ``_int_cell`` reads
#: them): a first character '-' or a digit, digits alone after it, a digit last. A comparison first: SQLite sorts
#: numbers before text, so an integer type fails it without a function call (typeof() first cost a step load of
#: 650k rows 20 ms, 5%).
_DIGITS_TYPE = ("(p.type >= '' AND typeof(p.type) = 'text' AND p.type GLOB '[-0-9]*' AND p.type GLOB '*[0-9]' "
                "AND p.type NOT GLOB '?*[^0-9]*')")
#: ``_DIGITS_TYPE`` of digits beyond int64, which ``_int_cell`` reads as no integer (CAST would clamp them): past
#: the sign and leading zeros, over 19 digits, or 19 above int64's greatest (its least, negative). A length test
#: first: the trims and comparisons doubled the count of 655k types written '50003' (0.7 -> 1.3 s)
_BEYOND_INT64_TYPE = ("(length(p.type) > 18 AND (length(ltrim(p.type, '-0')) > 19 OR length(ltrim(p.type, '-0')) = 19 "
                      "AND ltrim(p.type, '-0') > CASE WHEN p.type GLOB '-*' THEN '9223372036854775808' "
                      "ELSE '9223372036854775807' END))")


def _unclamped(ids: tuple[int, ...]) -> str:
    """What a test of digits text followed by ``CAST(p.type AS INTEGER) IN (ids)`` adds: CAST clamps digits beyond
    int64 to its greatest or least, so where ``ids`` holds either (an id ENUM_API_TYPE may hold) those are kept out,
    as ``_int_cell`` reads no integer from them (the test of any op and the row queries took such a row for one of
    that kind). Only then: the test cost 1.5% of a load of 422k op-less rows typed as digits text."""
    return f" AND NOT {_BEYOND_INT64_TYPE}" if {2**63 - 1, -(2**63)} & set(ids) else ""


#: The PYTORCH_API kind ids msprof writes (the samples' ENUM_API_TYPE: runtime 5000, hccl 5500, node 10000, model
#: 15000, acl 20000, op 50001, queue 50002, trace 50003, mstx 50004; an older export's pta 25000, pytorch 30000):
#: without the table's ids, a row of an integer type none of these is of no kind, said as one ENUM_API_TYPE lacks.
_MSPROF_API_IDS = (5000, 5500, 10000, 15000, 20000, 25000, 30000, 50001, 50002, 50003, 50004)


def _longest_run(ids: tuple[int, ...]) -> tuple[int, ...]:
    """(first, last) of the longest run of consecutive ``ids`` (the first such, of two ids at least), or ()."""
    best: tuple[int, ...] = ()
    got = sorted(set(ids))
    lo = 0
    for i in range(1, len(got) + 1):
        if i == len(got) or got[i] != got[i - 1] + 1:
            if i - lo >= 2 and (not best or got[i - 1] - got[lo] > best[1] - best[0]):
                best = (got[lo], got[i - 1])
            lo = i
    return best


def _odd_api_types(db: _Db, count: int, effect: str) -> None:
    """Say ``count`` PYTORCH_API rows whose type is no integer (the first named): they are of no kind, and were
    left out without a word (an integer type no ENUM names was already counted). Rows whose type is ASCII digits
    within int64 are read as that integer, so they are neither counted by the callers nor named first here."""
    if not count:
        return
    cur = db.con.execute(f"SELECT p.type FROM PYTORCH_API p WHERE {_ODD_TYPE} ORDER BY {db.rowid('PYTORCH_API')}")
    first = next((v for v, in cur if _int_cell(v) is None), None)
    db.notes.append(f"{count:,} PYTORCH_API row(s) have a type stored other than as an integer (the first: "
                    f"{short_repr(first)}): {effect}")


def _swapped(shapes: np.ndarray, dtypes: np.ndarray) -> bool:
    """Whether a DB holds each op's data types under ``inputShapes`` and its shapes under ``inputDtypes``.

    The torch_npu exports seen so far do (``inputShapes`` = ``float;\r\nScalar``, ``inputDtypes`` =
    ``32,3,224,224;\r\n64``, while the text export of the same workload has those shapes as Input Dims). Each
    column's texts tell what it holds: letters are data types, digits without a letter are shapes. The columns are
    read the other way round when the shapes column holds types and the types column none, or the types column
    holds shapes and the shapes column none, so a DB whose columns are right is read as it is, and one column
    alone (the other NULL in every op row, or absent) is read as what it holds: an all-NULL ``inputDtypes`` kept
    the rule off and showed the types ``float;...`` as every op's Input Shape, its Input Type N/A."""
    # each column's distinct characters tested, not each character of its texts: 0.26-0.31 -> 0.08-0.11 ms a side
    # on DB pair 3 (3,800 characters of shapes)
    s, d = (set("".join(v for v in col.tolist() if v != "N/A")) for col in (shapes, dtypes))
    s_types, d_types = any(c.isalpha() for c in s), any(c.isalpha() for c in d)
    s_shapes = not s_types and any(c.isdigit() for c in s)
    d_shapes = not d_types and any(c.isdigit() for c in d)
    return (s_types and not d_types) or (d_shapes and not s_shapes)


def _api_rows(db: _Db, rng: tuple[int, int], opts: Options, types: dict[str, tuple[int, ...]], kind_sql: str,
              any_op: bool) -> dict[str, np.ndarray]:
    """The PYTORCH_API rows of the kinds the enabled comparators read (``types``' ids; ``kind_sql``: the SQL of a
    row's kind, ``_api_kind``) in range, as int64 columns by name (ts, end, gtid, link, name, type, and shapes /
    dtypes where a comparator shows them). Rows of no kind (a NULL type, one that is no integer, an id ENUM_API_TYPE
    lacks) are read beside them where some op is typed (``any_op``), counted in one note each and left out."""
    p = lambda n: db.col("PYTORCH_API", "p", n)  # noqa: E731
    untyped_effect = ("those rows are of no kind (torch op, queue or Python row) and are left out, so the "
                      "comparisons that read such rows (operator, API, memory, module) miss those among them")
    # rows of no type beside typed ones are read with them (the scan's extra test cost nothing measurable at 650k
    # rows) and counted; where no op is left, all are counted by a scan of their own (36 ms at 650k rows), which
    # leaves a table of no type at all unread
    null_kinds = kind_sql == "p.type" and any_op
    # no op at all: rows of the other kinds typed as digits text are read as those kinds (below), as beside an op;
    # they were counted as of no kind and left out, a table's Python and queue rows with them
    digit_kinds = kind_sql == "p.type" and not any_op
    if digit_kinds:  # why no op
        db.null("PYTORCH_API.type", db.scalar("SELECT count(*) FROM PYTORCH_API WHERE type IS NULL"), untyped_effect)
        # digits beyond int64 are no integer, as beside an op (``_int_cell``): counted, where they were neither
        # counted nor read (CAST clamped them to no kind's id)
        _odd_api_types(db, db.scalar(f"SELECT count(*) FROM PYTORCH_API p WHERE {_ODD_TYPE} AND NOT ({_DIGITS_TYPE} "
                                     f"AND NOT {_BEYOND_INT64_TYPE})"), untyped_effect)
    wanted = list(types["op"])
    if opts.enable_memory_compare:
        wanted.extend(types["queue"])
    if opts.enable_operator_compare and not opts.disable_module:
        wanted.extend(types["trace"])
    cols = {"ts": "CAST(p.startNs AS INTEGER)", "end": "CAST(p.endNs AS INTEGER)", "gtid": p("globalTid"),
            "link": p("connectionId"), "name": p("name"), "type": kind_sql}
    if opts.any_detail():
        cols.update(shapes=p("inputShapes"), dtypes=p("inputDtypes"))
        # with_stack's frames (a DB recorded without it has no such table), shown by ModuleCompare's op rows alone:
        # read only for that sheet, ~0.4 us a frame (2.2 s at 5M frames, 338k chains: _call_stacks)
        if (db.has("PYTORCH_CALLCHAINS") and opts.enable_operator_compare and not opts.disable_module
                and not opts.disable_details):
            cols["chain"] = db.col("PYTORCH_API", "p", "callchainId", figure=False)
    # startNs/endNs are TEXT in current exports: compare and return them as integers.
    # a column's IN list as pairs (_in_pairs: 77 -> 63 ms a scan of 650k rows for three kinds); the CASE of older
    # exports would be evaluated once per pair
    # rows of an integer type ENUM_API_TYPE lacks are of no kind too: read beside the others, counted, left out
    # (-5 in 352 rows of the level-2 sample moved 6,525 figures, said only as kernels no flow links, dbfuzz63)
    # without the table's ids, msprof's (a type of none was left out unsaid, where digits text of it was said); where
    # no op is typed too, as its digits text within int64 (three Python rows typed -5 were left out unsaid there,
    # 1,279 Python functions of 1,282, where beside ops they were said)
    enum_ids = _enum_ids(db) if kind_sql == "p.type" else ()
    known = (enum_ids or _MSPROF_API_IDS) if kind_sql == "p.type" else ()
    # (tested only on the rows of no kind read: every run's mstx rows, an API-only run's Python rows too: the
    # level-2 sample's PYTORCH_API copied to 650k rows took 0.59 -> 0.62 s CPU an API-only load, NOT of IN pairs
    # 0.66 s; a full run's load 1.3 s alike)
    # the longest run of consecutive known ids first (msprof's op, queue, trace and mstx: 50001-50004), which passes
    # over most rows by two comparisons: without ops every row meets this test (819k op-less rows read API-only:
    # 0.39 -> 0.44 s CPU without it, 0.40 with)
    run = _longest_run(known)
    stray = (f" OR ({'p.type NOT BETWEEN ? AND ? AND ' if run else ''}p.type NOT IN ({','.join('?' * len(known))}) "
             "AND typeof(p.type) = 'integer')") if known else ""
    # types that are no integer (text, a fraction, a blob), read beside them at no cost to integer rows (the test is
    # made of rows no IN pair takes): ASCII digits read as the integer (as every integer query reads them), others
    # as no kind (``_Db.ints_as_text``'s mask), counted; both were left out unsaid
    stray += f" OR {_ODD_TYPE}" if null_kinds else ""
    stray += (f" OR ({_DIGITS_TYPE} AND (CAST(p.type AS INTEGER) IN ({','.join('?' * len(wanted))})"
              f"{_unclamped(tuple(wanted))} OR NOT {_BEYOND_INT64_TYPE} AND CAST(p.type AS INTEGER) NOT IN "
              f"({','.join('?' * len(known))})))"
              if digit_kinds else "")
    kinds = (f"({_in_pairs(kind_sql, len(wanted))}{' OR p.type IS NULL' if null_kinds else ''}{stray})"
             if kind_sql == "p.type" else f"{kind_sql} IN ({','.join('?' * len(wanted))})")
    sql = f"FROM PYTORCH_API p WHERE {kinds} AND p.startNs IS NOT NULL AND p.endNs IS NOT NULL"
    params: tuple = (*wanted, *run, *known, *((*wanted, *known) if digit_kinds else ()))
    if rng != _ALL:  # the TEXT -> INTEGER cast of every row costs: only when a step asks for it
        # Python frames that began before the step and are still open in it stay (as the text path keeps them):
        # a module's call stack is made of its outer frames (docs/differences.md, "A step without data ...");
        # modules are cut below
        trace = ",".join("?" * len(types["trace"]))
        # a Python row typed as digits text is one too (read as its integer, as in the step; such a frame begun
        # before the step was left out, where its integer-typed twin stayed)
        text_trace = (f" OR ({_DIGITS_TYPE}{_unclamped(types['trace'])} AND CAST(p.type AS INTEGER) IN ({trace}))"
                      if kind_sql == "p.type" else "")
        sql += (" AND CAST(p.startNs AS INTEGER) <= ? AND (CAST(p.startNs AS INTEGER) >= ? OR "
                f"(({kind_sql} IN ({trace}){text_trace}) AND CAST(p.endNs AS INTEGER) >= ?))")
        params += (rng[1], rng[0], *types["trace"], *(types["trace"] if text_trace else ()), rng[0])
    # a NULL type (beside typed rows alone) and one that is no integer are told by the read's mask, no type value
    read, state = db.ints_as_text(list(cols.values()), sql, params, list(cols).index("type"), "PYTORCH_API", "p")
    got = dict(zip(cols, read, strict=True))
    if rng == _ALL and opts.enable_memory_compare:  # the names ``_mark_cann`` scans for, where this read took them all
        db.api_names = (len(state), pd.unique(got["name"]))
    if state.any():
        if null_kinds:  # the step's rows of no type (NULL), or of a type that is no integer: counted, then left out
            db.null("PYTORCH_API.type", np.count_nonzero(state == 1), untyped_effect)
            _odd_api_types(db, int(np.count_nonzero(state == 2)), untyped_effect)
        keep = state == 0  # else none is selected (the digit tests keep out what CAST would clamp)
        got = {k: v[keep] for k, v in got.items()}
    if known:
        # rows of a kind not read: the stray test's, and digits text of any kind, which without the ENUM table
        # stayed (their negative globalTids were said, queue rows read with the memory compare off)
        kind = got["type"]
        unwanted = ~np.isin(kind, wanted)
        # a kind no ENUM id names (without the table's ids, none of msprof's) is said, typed by integer or digits
        unknown = unwanted & ~np.isin(kind, known)
        if unknown.any():
            lacks = ("ENUM_API_TYPE lacks" if enum_ids else
                     "none of msprof's kind ids is, the DB holding no ENUM_API_TYPE ids")
            db.notes.append(f"{int(unknown.sum()):,} PYTORCH_API row(s) have a type {lacks} (the first: "
                            f"{int(kind[unknown][0])}): {untyped_effect}")
        if unwanted.any():
            got = {k: v[~unwanted] for k, v in got.items()}
    return got


#: How a text export joins the frames of an op's "Call stack" argument, innermost first.
_FRAME_SEP = ";\r\n"


#: A chain frame's (id, stackDepth) read as one integer, ``id << _DEPTH_BITS | stackDepth``, where both fit: a stack
#: over 1,023 frames deep (Python's default recursion limit is 1,000), or a chain id from 2**53 (an export numbers
#: its chains from 0 up), reads unpacked. Few bits keep the text short: 20 cost 0.03 s more at 5M frames.
_DEPTH_BITS = 10


def _chain_texts(db: _Db, cells: list[str]) -> tuple[int, list[bytes | None]]:
    """The row count of PYTORCH_CALLCHAINS and each cell expression of ``cells`` as one ``group_concat`` text."""
    n, *texts = db.con.execute(f"SELECT count(*), {', '.join(f'CAST(group_concat({c}) AS BLOB)' for c in cells)} "
                               "FROM PYTORCH_CALLCHAINS").fetchone()
    return n, texts


def _parsed(n: int, texts: list[bytes | None]) -> list[np.ndarray] | None:
    """Each ``group_concat`` text as int64 where none holds an 'x' (a cell that is no integer, or out of range), a
    REAL's '.' or ``Inf``, and each holds ``n`` numbers; else None. Each text is let go once parsed (50 MB at 5M
    frames)."""
    if any(b"x" in t or b"." in t or b"I" in t for t in texts if t):
        return None
    out = []
    for i, t in enumerate(texts):
        out.append(np.fromstring(t or b"", dtype=np.int64, sep=","))
        texts[i] = None
    return out if all(c.size == n for c in out) else None


def _chain_rows(db: _Db) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PYTORCH_CALLCHAINS' id, stackDepth and stack columns as int64 arrays, NULL read as -1. A with_stack run holds
    ~6 frames an op (5M rows in a 500 MB DB), where a row-by-row fetch cost 2.4 s: each column as one group_concat
    text parsed by numpy costs 1.3 s. Only where every cell is an integer or NULL: SQLite sorts numbers before text
    and blobs, so a cell ``< ''`` is a number, and any other cell but NULL is written as 'x', which no number's text
    holds; SQLite writes a REAL with a '.' or as Inf. That test in each cell's own expression cost 0.37 s CPU less
    than each column's ``typeof(max())`` at 5M rows (an aggregate step per row). The texts come as blobs, which numpy
    parses as it does text, without their decoding to str. Any other column is read by ``_Db.ints``, whose rule and
    error message hold for such a cell.

    id and stackDepth are read first as one packed text (``_DEPTH_BITS``): 1.50 -> 1.43 s CPU at 5M frames. Packed
    only where both are numbers in range, tested without the columns' affinity (``+``: a TEXT column would compare
    the bounds as text, and '12abc' * 1024 is 12288), so a text, a blob, a NULL or a number out of range reads 'x';
    a REAL in range stays one in the product, written with its '.'. Such a table is read again unpacked (its NULLs
    as -1, or its error)."""
    packed = (f"CASE WHEN +stackDepth BETWEEN 0 AND {(1 << _DEPTH_BITS) - 1} AND +id BETWEEN 0 AND "
              f"{(1 << (63 - _DEPTH_BITS)) - 1} THEN id * {1 << _DEPTH_BITS} + stackDepth ELSE 'x' END")
    cell = "CASE WHEN {c} < '' THEN {c} WHEN {c} IS NULL THEN -1 ELSE 'x' END"
    got = _parsed(*_chain_texts(db, [packed, cell.format(c="stack")]))
    if got is not None:
        key, stack = got
        return key >> _DEPTH_BITS, key & ((1 << _DEPTH_BITS) - 1), stack
    cols = ("id", "stackDepth", "stack")
    got = _parsed(*_chain_texts(db, [cell.format(c=c) for c in cols]))
    if got is not None:
        return got[0], got[1], got[2]
    rows = db.ints(f"SELECT {', '.join(f'COALESCE({c}, -1) AS {c}' for c in cols)} FROM PYTORCH_CALLCHAINS", (), 3)
    return rows[:, 0], rows[:, 1], rows[:, 2]


def _call_stacks(db: _Db, chains: np.ndarray) -> np.ndarray:
    """Each op's call stack (``chains``: its PYTORCH_API.callchainId, -1 none) from PYTORCH_CALLCHAINS: its frames
    by stackDepth, innermost (0) first, joined as the text export of a run writes the op's "Call stack", so that the
    module sheets of the two exports of one run show the same stacks (every DB op read ``N/A`` before, beside its
    text export's stack); ``N/A`` for an op without a chain or whose chain the table lacks, the text export's word.

    A run repeats its chains step after step (36 distinct frame sequences among 338k chains of a 500 MB DB built
    from a real one): each distinct sequence is resolved and joined once and its text shared by its ops. A text per
    op cost 4.4 s and ~410 MB a side there."""
    out = object_full(chains.size, "N/A")
    if not (chains >= 0).any():
        return out
    if missing := sorted({"id", "stackDepth", "stack"} - db.columns("PYTORCH_CALLCHAINS")):
        db.notes.append(f"table PYTORCH_CALLCHAINS lacks column(s) {', '.join(missing)}: the torch ops' call stacks "
                        "read N/A")
        return out
    ids, depth, stack = _chain_rows(db)
    # exports write a chain's frames together, innermost first: the (stable) sort is needed only where they do not
    step = np.diff(ids)
    if not ((step > 0) | ((step == 0) & (np.diff(depth) >= 0))).all():
        order = np.lexsort((depth, ids))
        ids, stack = ids[order], stack[order]
    del depth, step
    if not ids.size:
        return out
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    sizes = np.diff(np.r_[starts, ids.size])
    heads = ids[starts]  # ascending, each chain once
    # each op's chain among them, found by a binary search: np.unique of the ops' chain ids (to keep the chains of
    # the loaded ops alone, where a step range leaves others out) cost 0.27 s CPU at 921k ops
    pos = np.minimum(np.searchsorted(heads, chains), heads.size - 1)
    hit = (chains >= 0) & (heads[pos] == chains)
    if not hit.any():
        return out
    used = np.zeros(heads.size, dtype=bool)
    used[pos[hit]] = True
    keep = np.flatnonzero(used)
    starts, sizes = starts[keep], sizes[keep]
    # a NULL frame id read as -1, which ``_Db.text`` takes for NULL (no profiler writes a STRING_IDS id of -1)
    buf = stack.tobytes()
    seqs: dict[bytes, int] = {}
    code = np.fromiter((seqs.setdefault(buf[8 * a:8 * (a + n)], len(seqs))
                        for a, n in zip(starts.tolist(), sizes.tolist(), strict=True)), np.int64, keep.size)
    del buf
    frame_ids = np.frombuffer(b"".join(seqs), dtype=np.int64)
    lengths = np.array([len(k) // 8 for k in seqs], dtype=np.int64)
    # every frame of every chain counted, as one text per frame counted them (NULL frames, ids STRING_IDS lacks)
    weights = np.repeat(np.bincount(code, minlength=len(seqs)), lengths)
    db.null("PYTORCH_CALLCHAINS.stack", int(weights[frame_ids == -1].sum()))
    frames = db.text(frame_ids, weights=weights).tolist()
    bounds = np.r_[0, np.cumsum(lengths)].tolist()
    stacks = object_array([_FRAME_SEP.join(frames[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    at = np.full(heads.size, -1, dtype=np.int64)  # each chain's distinct sequence
    at[keep] = code
    out[hit] = stacks[at[pos[hit]]]
    return out


def _pytorch_api(db: _Db, rng: tuple[int, int], profile: Profile, opts: Options) -> None:
    """PYTORCH_API -> ops (type op), python_functions (trace), queue (Enqueue/Dequeue).

    Python's sqlite3 costs about a microsecond per value fetched and this is the
    largest table, so only what the enabled comparators use is read: trace rows
    for the module compare, queue rows for the memory compare, the op shapes and
    types for the op-tree comparators (sequence number and forward thread feed no figure).
    """
    if not db.has("PYTORCH_API"):
        profile.warnings.append(f"{db.path}: no PYTORCH_API table; no torch ops")
        return
    db.need("PYTORCH_API", "name")
    db.need_times("PYTORCH_API", text_ok=True)
    types = _api_types(db)
    kind_sql = _api_kind(db, types)
    if kind_sql is None:
        profile.warnings.append(f"{db.path}: table PYTORCH_API has neither a type nor a sequenceNumber column, so "
                                "torch ops cannot be told from its other rows; no torch ops")
        return
    # over every step: "no op in the step" is a step error, "no op at all" is not (``Profile.has_ops``)
    ops = ",".join("?" * len(types["op"]))
    # an op typed as digits text is one too (read as its integer below): a type column of no affinity holding only
    # digits text ('50001') had no op, every row said left out, where one integer row beside them read them all
    text_op = (f" OR ({_DIGITS_TYPE}{_unclamped(types['op'])} AND CAST(p.type AS INTEGER) IN ({ops}))"
               if kind_sql == "p.type" else "")
    profile.extra["any_op"] = db.scalar(f"SELECT 1 FROM PYTORCH_API p WHERE ({kind_sql} IN ({ops}){text_op}) AND "
                                        "startNs IS NOT NULL AND endNs IS NOT NULL LIMIT 1",
                                        types["op"] * (2 if text_op else 1)) is not None
    col = _api_rows(db, rng, opts, types, kind_sql, profile.extra["any_op"])
    none = np.full(len(col["ts"]), -1, dtype=np.int64)
    ts, link, gtid = col["ts"], col["link"], col["gtid"]
    # int64's least is no start: the trace loaders refuse a time beyond int64 ns, and the comparators take the
    # instant before a start (the module walk's ``ts - 1`` wrapped to int64's greatest: an internal error, dbfuzz66)
    if ts.size and ts.min() == _ALL[0]:
        raise ProfileError(db.path, f"table PYTORCH_API: column startNs holds {_ALL[0]}, int64's least, which is no "
                                    "time (a damaged export?): no comparison can place a row starting there")
    if "globalTid" in db.columns("PYTORCH_API"):
        db.null("PYTORCH_API.globalTid", np.count_nonzero(gtid == -1))
        # a negative one packs no process and thread (pid << 32 | tid) and reads as a NULL one, said: -5 in 352 rows
        # of the level-2 sample moved 1,212 module and operator figures without a word (dbfuzz63)
        if odd := int(np.count_nonzero(gtid < -1)):
            db.notes.append(f"{odd:,} PYTORCH_API.globalTid value(s) are negative, no process and thread id: "
                            f"{NULL_EFFECTS['PYTORCH_API.globalTid']}")
    pid = np.where(gtid >= 0, gtid >> 32, -1)
    tid = np.where(gtid >= 0, gtid & 0xFFFFFFFF, -1)
    kind = col["type"]
    # rows alike in every column read (a table joined from two copies): each counts, as in the original, said as a
    # trace's repeated host events are (dbfuzz66: every 50th row of the level-1 excerpt written again made an op's
    # ModuleCompare Number 1 -> 2 without a word). The rows compared are those whose start another shares, found by
    # hashing: 17 ms CPU at 650k rows (their starts are in no order)
    if repeated := repeats([ts, col["end"], gtid, link, col["name"], kind,
                            *(col[k] for k in ("shapes", "dtypes") if k in col)],
                           np.flatnonzero(pd.Index(ts).duplicated(keep=False))):
        db.notes.append(repeated_rows_note(repeated, "PYTORCH_API row(s)", "call", "ApiCompare and the operator and "
                                           "module sheets count those calls"))
    dur = db.durations(ts, col["end"], "PYTORCH_API")

    conn, first_cid, listed = _connections(db, link)

    is_op = np.flatnonzero(np.isin(kind, types["op"]))
    # the rows whose link a figure reads (ops: their kernels; Enqueue / Dequeue: their pairing)
    _negative_links(db, link[np.isin(kind, types["op"] + types["queue"])], "PYTORCH_API.connectionId",
                    NULL_EFFECTS["PYTORCH_API.connectionId"])
    # an op's link that CONNECTION_IDS lacks (or no such table) links no task: its kernels were counted under no
    # operator without a word, said only by a sheet's "kernels no flow links" line, and by none under
    # --enable_profiling_compare, whose breakdown moved (dbfuzz65); every op link of the samples is listed
    if (lost := is_op[(link[is_op] >= 0) & ~listed[is_op]]).size:
        where = ("that CONNECTION_IDS lacks" if db.has("CONNECTION_IDS") else
                 "but the DB has no CONNECTION_IDS table, which maps it to tasks")
        db.notes.append(f"{lost.size:,} torch op row(s) of PYTORCH_API have a connectionId {where} (the first: "
                        f"{int(link[lost[0]])}): those ops link to no task (they own no kernel)")
    names = db.text(col["name"], names=True, column="PYTORCH_API.name")
    shape_ids, dtype_ids = col.get("shapes", none)[is_op], col.get("dtypes", none)[is_op]
    shapes, dtypes = db.text(shape_ids, missing="N/A"), db.text(dtype_ids, missing="N/A")
    # told from each column's distinct ids' texts: a pass over every op's text took 39-47 ms at 227k ops, this 3-12 ms
    if _swapped(*(db.text(pd.unique(ids), missing="N/A", count=False) for ids in (shape_ids, dtype_ids))):
        shapes, dtypes = dtypes, shapes
        shape_ids, dtype_ids = dtype_ids, shape_ids
    # data types without shapes: the op's inputs have no dimensions (a scalar), which the text export of a run
    # writes as an empty Input Dims; "N/A" stays for an op that recorded neither, and for every op where no op has
    # shapes (the column NULL in every row read, or absent): shapes not recorded, which "" would say were none
    if (shape_ids >= 0).any():
        shapes[(shape_ids < 0) & (dtype_ids >= 0)] = ""
    profile.ops = frame("ops", {
        "name": names[is_op], "cat": object_full(is_op.size, "cpu_op"),
        "ts": ts[is_op], "dur": dur[is_op], "pid": pid[is_op], "tid": tid[is_op],
        "input_dims": shapes, "input_type": dtypes,
        "call_stack": _call_stacks(db, col.get("chain", none)[is_op]),
        "connection_id": first_cid[is_op],
    })
    # op_row: position in profile.ops
    op_pos = np.full(len(none), -1, dtype=np.int64)
    op_pos[is_op] = np.arange(is_op.size)
    oc = conn[op_pos[conn["row"].to_numpy()] >= 0] if len(conn) else conn
    op_conn = pd.DataFrame({"op_row": op_pos[oc["row"].to_numpy()], "connection_id": oc["connection_id"].to_numpy()})
    profile.extra["op_connections"] = op_conn

    is_tr = np.flatnonzero(np.isin(kind, types["trace"]))
    if rng != _ALL:  # a module (nn.Module python function) counts only when it starts in the step
        module = pd.Series(names[is_tr], dtype=object).str.lower().str.startswith("nn.module:", na=False)
        is_tr = is_tr[(ts[is_tr] >= rng[0]) | ~module.to_numpy(dtype=bool)]
    profile.python_functions = frame("python_functions", {
        "name": names[is_tr], "ts": ts[is_tr], "dur": dur[is_tr], "tid": tid[is_tr]})
    is_q = np.flatnonzero(np.isin(kind, types["queue"]))
    if unpaired := int(np.count_nonzero(first_cid[is_q] == -1)):  # a NULL id paired with every other NULL one
        db.notes.append(f"{unpaired:,} Enqueue / Dequeue row(s) of PYTORCH_API have no CANN connection id (NULL, or "
                        "one CONNECTION_IDS lacks); they pair with no other, so a memory block CANN allocated in "
                        "such a dequeue is placed at time 0, under no operator")
    qnames = names[is_q]
    codes, uniq = pd.factorize(qnames)  # tested once per distinct name: 12 -> 2 ms at 84k queue rows
    qcat = np.array(["enqueue" if n.startswith("Enqueue") else "dequeue" for n in uniq.tolist()], dtype=object)[codes]
    profile.queue = frame("queue", {
        "cat": qcat, "name": qnames, "ts": ts[is_q], "dur": dur[is_q], "tid": tid[is_q],
        "correlation_id": first_cid[is_q],
    })


def _connections(db: _Db, link: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The CANN connection ids of the PYTORCH_API rows read (``link``: their connectionId, -1 for NULL), which
    index CONNECTION_IDS(id, connectionId): every (row, connection_id) pair, each row's first connection id
    (-1 where it has none), which links an op to its tasks and a dequeue to its enqueue, and whether each row's
    link is an id CONNECTION_IDS holds (a row that is not links nothing, which the caller says)."""
    conn = pd.DataFrame({"row": np.zeros(0, np.int64), "connection_id": np.zeros(0, np.int64)})
    has_link = link >= 0
    listed = np.zeros(len(link), dtype=bool)
    if db.has("CONNECTION_IDS") and has_link.any():
        # aliased: an error names the column by its alias.column ("column COALESCE(id, -1)" before); an absent
        # column reads as NULL (said), where SQLite's "no such column: c.id" named no table
        c = db.ints(f"SELECT {db.col('CONNECTION_IDS', 'c', 'id')}, {db.col('CONNECTION_IDS', 'c', 'connectionId')} "
                    "FROM CONNECTION_IDS c", (), 2)
        for j, name in enumerate(("id", "connectionId")):  # a link of no id or no connection id links nothing
            if name in db.columns("CONNECTION_IDS"):
                db.null(f"CONNECTION_IDS.{name}", np.count_nonzero(c[:, j] == -1))
                _negative_links(db, c[:, j], f"CONNECTION_IDS.{name}", _NO_LINK)
        listed = has_link & np.isin(link, c[c[:, 0] >= 0, 0])
        # a row repeated word for word would link the same kernels twice and double their op's time; a row of no
        # connection id links nothing and is dropped (kept, its -1 could be an op's or an Enqueue / Dequeue row's
        # first id, ahead of a real one)
        c = c[(c[:, 0] >= 0) & (c[:, 1] >= 0)]
        d_id, d_cid = np.diff(c[:, 0]), np.diff(c[:, 1])
        if not ((d_id > 0) | ((d_id == 0) & (d_cid >= 0))).all():
            # by (id, connectionId), as msprof writes the table: an op's first connection id, and the order of its
            # kernels in the Kernel Details lists, followed the table order (a shuffled copy of the level-2
            # sample's moved 34 lists, dbfuzz63); the check is two diffs, the sort only for such a table
            c = c[np.lexsort((c[:, 1], c[:, 0]))]
            d_id, d_cid = np.diff(c[:, 0]), np.diff(c[:, 1])
        c = c[np.r_[True, (d_id != 0) | (d_cid != 0)][:len(c)]]  # each (id, connectionId) once
        # each linked row's pairs in row order, its ids ascending (a pandas inner merge's order): a binary search
        # of the sorted ids, where pandas' drop_duplicates, merge and drop_duplicates made the whole function 2.8 ms
        # a side on pair 3's 860 rows (profiling only), this 1.1 ms
        rows = np.flatnonzero(has_link)
        lo = np.searchsorted(c[:, 0], link[rows], side="left")
        n = np.searchsorted(c[:, 0], link[rows], side="right") - lo
        first_at = np.cumsum(n) - n
        at = np.arange(int(n.sum())) - np.repeat(first_at - lo, n)
        conn = pd.DataFrame({"row": np.repeat(rows, n), "connection_id": c[at, 1]})
        first_cid = np.full(len(link), -1, dtype=np.int64)
        first_cid[rows[n > 0]] = c[lo[n > 0], 1]
        return conn, first_cid, listed
    return conn, np.full(len(link), -1, dtype=np.int64), listed


def _flows(profile: Profile) -> pd.DataFrame:
    """One "async_npu" flow per compute task, from the op sharing its CANN connection id, as the text export
    has (one flow per task); then the "fwdbwd" flows.

    In an export an id links one op to its tasks. Should several ops share a task's id, the task takes the
    last of them to start by the task's start (a launch precedes its task), else the first: pairing every op
    with every task grew quadratically (104 s with 2,000 tasks on one id) and gave each task many owners.
    """
    oc = profile.extra.get("op_connections")
    k = profile.kernels
    if oc is None or oc.empty or k.empty:
        return _fwdbwd_flows(profile)
    ops = profile.ops
    op_row = oc["op_row"].to_numpy(np.int64)
    o_cid = oc["connection_id"].to_numpy(np.int64)
    o_ts = ops["ts"].to_numpy(np.int64)[op_row]
    t_cid = k["connection_id"].to_numpy(np.int64)
    task = np.flatnonzero((t_cid >= 0) & np.isin(t_cid, o_cid))
    t_cid, t_ts = t_cid[task], k["ts"].to_numpy(np.int64)[task]
    # one sortable int64 key per (id, time): id code x (time ranks + 1) + time rank, ranks over both sides
    codes, ids = pd.factorize(np.concatenate([o_cid, t_cid]))
    ranks = np.unique(np.concatenate([o_ts, t_ts]), return_inverse=True)[1].reshape(-1)
    width = np.int64(ranks.max() + 2 if ranks.size else 1)
    o_code, t_code = codes[:o_cid.size].astype(np.int64), codes[o_cid.size:].astype(np.int64)
    o_key = o_code * width + ranks[:o_cid.size]
    order = np.lexsort((np.arange(o_key.size), o_key))  # by key, then by row (the last op at a tie wins)
    o_key, o_code, op_row, o_ts = o_key[order], o_code[order], op_row[order], o_ts[order]
    last = np.searchsorted(o_key, t_code * width + ranks[o_cid.size:], side="right") - 1
    first = np.searchsorted(o_key, t_code * width, side="left")
    before = (last >= 0) & (o_code[np.maximum(last, 0)] == t_code)
    pick = np.where(before, last, first)  # every task's id is held by some op (isin above): first is in range
    # rows in op-link order, then task order (the order a join of the two tables gives; consumers keep the
    # last flow of equal end times)
    rows = np.lexsort((np.arange(task.size), order[pick]))
    pick, task, t_code, t_ts = pick[rows], task[rows], t_code[rows], t_ts[rows]
    src = op_row[pick]
    npu = frame("flows", {
        "id": np.array([str(v) for v in ids.tolist()], dtype=object)[t_code],
        "cat": object_full(task.size, "async_npu"),
        "s_ts": o_ts[pick], "s_pid": ops["pid"].to_numpy()[src], "s_tid": ops["tid"].to_numpy()[src],
        "f_ts": t_ts, "f_pid": k["pid"].to_numpy()[task], "f_tid": k["tid"].to_numpy()[task],
    })
    fb = _fwdbwd_flows(profile)
    return pd.concat([npu, fb], ignore_index=True) if len(fb) else npu


def _fwdbwd_flows(profile: Profile) -> pd.DataFrame:
    """The "fwdbwd" flows (forward op -> its backward op), which the module compare needs for its
    ``[ BACKWARD ]`` modules (reference-2 §3.2 step 7).

    The DB has no flow table: torch_npu writes each forward/backward link as one CANN
    connection id shared by the two ``op`` rows (through CONNECTION_IDS), while a launch
    link is shared by one op and its tasks. So: ids held by two or more ops and by no
    compute task; the earliest op starts the flow, every other op ends one (as in the
    text export, where the flow starts at the forward op). Ordered by connection id.
    """
    oc = profile.extra.get("op_connections")
    if oc is None or oc.empty:
        return frame("flows", {})
    ops = profile.ops
    # in numpy: the frame operations (drop_duplicates, duplicated, sort_values, merge) cost 3.3 ms of a 33 ms load
    # of the level-1 sample in fixed costs (now 0.4 ms; 20 -> 13 ms at 100 MB)
    cid, row = oc["connection_id"].to_numpy(np.int64), oc["op_row"].to_numpy(np.int64)
    keep = cid >= 0
    if len(profile.kernels):
        keep &= ~np.isin(cid, profile.kernels["connection_id"].to_numpy())
    cid, row = cid[keep], row[keep]
    ts = ops["ts"].to_numpy(np.int64)[row]
    order = np.lexsort((row, ts, cid))  # by id, then start, then op row
    cid, row, ts = cid[order], row[order], ts[order]
    new = np.ones(cid.size, dtype=bool)  # an (id, op) pair listed twice counts once (same start: adjacent)
    new[1:] = (cid[1:] != cid[:-1]) | (row[1:] != row[:-1])
    cid, row, ts = cid[new], row[new], ts[new]
    first = np.ones(cid.size, dtype=bool)
    first[1:] = cid[1:] != cid[:-1]
    start = np.flatnonzero(first)[np.cumsum(first) - 1]  # each row's first row of its id: the flow's start
    end = np.flatnonzero(~first)  # ids held by one op alone have no such row
    if not end.size:
        return frame("flows", {})
    s_row, f_row, s = row[start[end]], row[end], start[end]
    pid, tid = ops["pid"].to_numpy(np.int64), ops["tid"].to_numpy(np.int64)
    return frame("flows", {
        "id": np.array([str(v) for v in cid[end].tolist()], dtype=object),
        "cat": object_full(end.size, "fwdbwd"),
        "s_ts": ts[s], "s_pid": pid[s_row], "s_tid": tid[s_row],
        "f_ts": ts[end], "f_pid": pid[f_row], "f_tid": tid[f_row],
    })


def _operator_memory(db: _Db, rng: tuple[int, int] | None) -> pd.DataFrame | None:
    """OP_MEMORY with operator_memory.csv's column names (sizes KB, times us) plus exact ns columns."""
    if not db.has("OP_MEMORY"):
        return None
    db.need("OP_MEMORY", "name", "size", "allocationTime", "releaseTime")
    where, params = "", ()
    if rng is not None:
        # a block never released (NULL / 0) is alive in every later step: keep it (the original's
        # "releaseTime >= start" drops it, docs/differences.md)
        # a time that is no integer (NULL, text, a blob) stays for the checks below, as without a step: SQL's "<="
        # dropped a NULL one unsaid and ranked text and blobs above every number, so 'abc' in a third of the
        # level-2 excerpt's rows moved 336 memory figures of step 50 without a word, where the run without a step
        # refused it (dbfuzz65); the cells read as integers (a whole REAL, digits as TEXT: ``_int_cell``) are then
        # held to the step below, as SQL holds integers
        where, params = ("WHERE (m.releaseTime IS NULL OR m.releaseTime <= 0 OR m.releaseTime >= ? OR "
                         "typeof(m.releaseTime) <> 'integer') AND (m.allocationTime <= ? OR "
                         "typeof(m.allocationTime) <> 'integer')"), rng
    # the NULL cells of size, allocation time and name as bits of one flag column (1, 2, 4), no value fetched more: a
    # NULL allocation time read as int64's least (-1 before it) and a NULL name as -1 made a row holding that value
    # NULL (said as missing, not as a time below 0 or a name STRING_IDS lacks). The CASE's one test first: 48,576
    # rows 53.6 -> 54.2 ms CPU (the sum alone 55.5). By release time as read (an integer, a whole REAL or digits as
    # TEXT alike): SQLite sorts text after every number, so a release written as digits text moved its block to the
    # end of its operator's Allocated Details (dbfuzz66: every tenth of the level-2 excerpt's, 5 lines moved)
    a = db.ints("SELECT COALESCE(m.name, -1), COALESCE(m.size, 0), COALESCE(m.allocationTime, 0), "
                "COALESCE(m.releaseTime, 0), CASE WHEN m.size IS NOT NULL AND m.allocationTime IS NOT NULL AND m.name "
                "IS NOT NULL THEN 0 ELSE (m.size IS NULL) + 2 * (m.allocationTime IS NULL) + 4 * (m.name IS NULL) END "
                f"FROM OP_MEMORY m {where} ORDER BY CAST(m.releaseTime AS INTEGER)", params, 5)
    if rng is not None:  # the step's bounds on the times SQL let through untested, read as integers (a whole REAL,
        # digits as TEXT): a block allocated after the step's end or released before its start is none of the step's
        a = a[(a[:, 2] <= rng[1]) & ((a[:, 3] <= 0) | (a[:, 3] >= rng[0]))]
    alloc, rel, size, nulls = a[:, 2], a[:, 3], a[:, 1], a[:, 4]
    untimed = (nulls & 2) != 0  # NULL: read as 0 (no time), as before, now said
    if timeless := int(np.count_nonzero((alloc <= 0) & ~untimed)):  # the comparison reads a time above 0 alone
        db.notes.append(f"{timeless:,} OP_MEMORY allocationTime value(s) are 0 or negative (no time); the memory "
                        "comparison leaves those blocks out")
    if unreleased := int(np.count_nonzero(rel < 0)):  # every rule read it as 0 (never released) but its text
        db.notes.append(f"{unreleased:,} OP_MEMORY releaseTime value(s) are negative; read as never released")
        rel = np.maximum(rel, 0)
    late, note = late_releases(alloc, rel, "OP_MEMORY releaseTime")
    if note:
        db.notes.append(note)
        rel = np.where(late, 0, rel)
    if untimed.any():
        db.null("OP_MEMORY.allocationTime", np.count_nonzero(untimed), "no allocation time, so the memory comparison "
                "leaves those blocks out (as before)")
    names = _mark_cann(db, db.text(a[:, 0], names=True, column="OP_MEMORY.name", null=(nulls & 4) != 0))
    # a block over 1 PB is no size (no reserved total is larger), as operator_memory.csv's: 2**62 bytes in 26 rows of
    # the level-2 sample moved 351 memory figures without a word (dbfuzz63)
    huge = size > MAX_RESERVED_BYTES
    note = memory_oddities(size < 0, (alloc > 0) & (rel > 0) & (rel < alloc), "OP_MEMORY size", huge)
    if missing := int(np.count_nonzero(nulls & 1)):  # read as 0 without a word, where a negative size was named
        note = "; ".join(filter(None, (f"{missing:,} OP_MEMORY size value(s) missing (NULL) read as 0", note)))
    if note:
        db.notes.append(note)
        size = np.where(huge, 0, np.maximum(size, 0))
    # rows whose allocation another row shares, compared in every column read (as operator_memory.csv's): a block
    # written again counted its memory and time twice without a word (dbfuzz63). A block of no allocation time
    # (NULL, 0 or negative: said above) is left out of the comparison, so it counts nowhere, let alone twice: two
    # such rows alike were said as repeats of a real row
    if repeated := repeats([alloc, a[:, 0], a[:, 1], rel, nulls],
                           np.flatnonzero(pd.Index(alloc).duplicated(keep=False) & (alloc > 0))):
        db.notes.append(repeated_rows_note(repeated, "OP_MEMORY row(s)", "allocation",
                                           "those blocks' memory and time count"))
    dur = np.where((alloc > 0) & (rel > 0), np.maximum(rel - alloc, 0), 0)
    return pd.DataFrame({
        "Name": names, "Size(KB)": size / 1024.0,
        "Allocation Time(us)": us_text(alloc, ""), "Release Time(us)": us_text(rel, ""), "Duration(us)": dur / 1000.0,
        "size_bytes": size, "alloc_ns": alloc, "release_ns": rel,
    })


def _mark_cann(db: _Db, names: np.ndarray) -> np.ndarray:
    """CANN's own allocations (a graph node's workspace, ``ReduceSum7``, ``trans_TransData_16``) are named
    ``cann::<node>`` in operator_memory.csv, the mark by which the memory comparison places them at the
    launch they belong to (reference-2 §5.2); OP_MEMORY writes the node name alone, so they were placed at
    their allocation time, under whichever op was then running (124 MB under aten::item on the level-1 DB
    sample). A name no torch op has (PYTORCH_API, compared as text: STRING_IDS may hold one text under
    several ids) is such a node and gets the mark. Without torch ops nothing is marked.

    Where the op read took every row of the table (``_Db.api_names``: its row count is the table's), the names it
    read are those: a count (0.06 s) in place of a scan for them (0.33 s at 2.6M rows)."""
    if not (db.has("PYTORCH_API") and len(names)):
        return names
    if db.api_names is not None and db.api_names[0] == db.scalar("SELECT count(*) FROM PYTORCH_API"):
        ids = db.api_names[1]  # NULL read as -1, a text of "" below, as no name
    else:
        ids = db.ints("SELECT DISTINCT name FROM PYTORCH_API WHERE name IS NOT NULL", (), 1)[:, 0]
    torch = set(db.text(ids, count=False).tolist()) - {""}
    if not torch:
        return names
    codes, uniq = pd.factorize(names)  # once per distinct name
    marked = np.array([CANN_MARK + n if n and n not in torch and CANN_MARK not in n else n for n in uniq.tolist()]
                      + [""], dtype=object)
    return marked[codes]


#: a totalReserved cell that is no number: text, a blob, an infinity. Compared, not abs(): SQLite's abs() raises
#: "integer overflow" on -2**63, which stopped the load as "cannot read the database"
_NO_RESERVED_NUMBER = "(totalReserved >= '' OR totalReserved > 1.79e308 OR totalReserved < -1.79e308)"


def _memory_peak_sql(where: str) -> str:
    """The largest reading of MEMORY_RECORD.totalReserved (0 to 1 PB), the count of numbers outside that range,
    and whether a cell is no number (text, a blob, an infinity), in one scan."""
    x = "totalReserved"
    return (f"SELECT max(CASE WHEN {x} BETWEEN 0 AND {MAX_RESERVED_BYTES} THEN {x} END), "
            f"sum({x} < '' AND NOT {x} BETWEEN 0 AND {MAX_RESERVED_BYTES}), "
            f"max{_NO_RESERVED_NUMBER} FROM MEMORY_RECORD {where}")


def _memory_peak(db: _Db, rng: tuple[int, int]) -> int:
    if not db.has("MEMORY_RECORD") or db.lacks("MEMORY_RECORD", "totalReserved"):
        return 0
    # the whole run: every reading, its timestamp read or not (a BETWEEN over the int64 range left out every
    # reading whose timestamp was NULL or TEXT: Mem Usage "0.00G, no peak reserved memory recorded" beside 990
    # readings); a step: the readings whose integer timestamp lies in it
    where, params = "", ()
    if rng != _ALL:
        if db.lacks("MEMORY_RECORD", "timestamp"):  # no reading can be placed in the step, as a NULL timestamp
            where = "WHERE 0"
        else:
            where, params = "WHERE timestamp BETWEEN ? AND ?", rng
            if odd := db.scalar("SELECT count(*) FROM MEMORY_RECORD WHERE typeof(timestamp) <> 'integer'"):
                db.notes.append(f"{odd:,} MEMORY_RECORD reading(s) have no integer timestamp, so none of them can "
                                "be placed in the step; Mem Usage leaves them out")
    # a reserved total below 0 or over 1 PB is no reading: left out, and counted in one warning. Text, a blob
    # or an infinity stops the load; the same scan tells whether there is one (a second scan cost 0.04 s).
    # "x < ''" is typeof(x) IN ('integer', 'real') and "x >= ''" is text or blob, NULL for NULL (numbers sort
    # before text, text before blobs) at a fraction of typeof's cost: 0.073 -> 0.040 s at 261k rows
    v, odd, junk = db.con.execute(_memory_peak_sql(where), params).fetchone()
    if junk:
        bad = db.scalar(f"SELECT totalReserved FROM MEMORY_RECORD {where} {'AND' if where else 'WHERE'} "
                        f"{_NO_RESERVED_NUMBER} LIMIT 1", params)
        raise ProfileError(db.path, f"table MEMORY_RECORD: column totalReserved holds {bad!r}, not a number")
    if odd:
        db.notes.append(f"{odd:,} MEMORY_RECORD totalReserved value(s) negative or over 1 PB; Mem Usage leaves "
                        "them out")
    if v is None:  # no reading: with every one NULL Mem Usage read 0.00G unsaid. Counted only then: a count in
        # the scan above cost 7 ms of its 56 at 261k rows, and NULLs beside readings leave the peak as it is
        db.null("MEMORY_RECORD.totalReserved", db.scalar(f"SELECT count(*) - count(totalReserved) FROM MEMORY_RECORD "
                                                         f"{where}", params) or 0)
    return int(v or 0)


def _zero_readings(db: _Db, rng: tuple[int, int]) -> int:
    """How many MEMORY_RECORD readings in range are 0, asked where the peak is 0: with readings, every usable one
    is then 0 (an all-0 table read "no usable totalReserved value", or in a step "none ... placed in step N", of
    readings that were there)."""
    if not db.has("MEMORY_RECORD") or "totalReserved" not in db.columns("MEMORY_RECORD"):
        return 0
    if rng == _ALL:
        return db.scalar("SELECT count(*) FROM MEMORY_RECORD WHERE totalReserved = 0") or 0
    if "timestamp" not in db.columns("MEMORY_RECORD"):
        return 0
    return db.scalar("SELECT count(*) FROM MEMORY_RECORD WHERE totalReserved = 0 AND timestamp BETWEEN ? AND ?",
                     rng) or 0


def _memory_missing(db: _Db, step: int, recorded: bool) -> str:
    """Why MEMORY_RECORD gives no peak, for the Mem Usage note under the console table (``Breakdown.memory_missing``):
    an absent and an empty table read "no peak reserved memory recorded" alike, while the cause and what to do
    differ. ``recorded``: profiler_info says profile_memory was on (then the advice to turn it on is left out)."""
    if not db.has("MEMORY_RECORD"):
        return "its DB has no MEMORY_RECORD table" + ("" if recorded else " (profile_memory=True records it)")
    if db.scalar("SELECT 1 FROM MEMORY_RECORD LIMIT 1") is None:
        return "its MEMORY_RECORD table is empty"
    # an absent totalReserved reads as NULL in every row (its own warning): no usable value, as those
    if step >= 0 and "totalReserved" in db.columns("MEMORY_RECORD") and db.scalar(_memory_peak_sql("")) is not None:
        return f"none of its MEMORY_RECORD readings is placed in step {step}"  # outside it, or of no timestamp
    return "its MEMORY_RECORD holds no usable totalReserved value"


def _memory_peak_extra(db: _Db, rng: tuple[int, int], step: int, recorded: bool) -> dict[str, Any]:
    """``memory_peak_bytes``, MEMORY_RECORD's peak in range; where it is 0, ``memory_zero`` (readings there are,
    all 0) and ``memory_missing``, why there is no peak (``_memory_missing``; ``step`` -1: no step asked,
    ``recorded``: profiler_info says profile_memory was on)."""
    peak = _memory_peak(db, rng)
    if peak:
        return {"memory_peak_bytes": peak}
    zeros = _zero_readings(db, rng)
    missing = (zero_readings_text(zeros, "MEMORY_RECORD totalReserved", f" in step {step}" if step >= 0 else "")
               if zeros else _memory_missing(db, step, recorded))
    return {"memory_peak_bytes": peak, "memory_zero": bool(zeros), "memory_missing": missing}


# ---------------------------------------------------------------------- entry point


def load(layout: Any, opts: Options, step: int = -1) -> Profile:
    """Load one profiler DB (``layout.db_path``) into a ``Profile`` (kind NPU, source ascend_db).

    ``step`` (-1: all data) limits every query to that STEP_TIME range; a step that
    is absent raises ``StepError`` naming the steps present.
    """
    path = layout.db_path
    db = _Db(path)
    try:
        return _load(db, layout, opts, step)
    except sqlite3.Error as exc:
        raise ProfileError(path, f"cannot read the database ({exc})") from None
    except MemoryError:
        raise ProfileError(path, "not enough memory to load the database") from None
    finally:
        db.close()


def _untimed_tasks(db: _Db, opts: Options) -> None:
    """A TASK table none of whose rows has a start and an end time (NULL): refused by a run that reads the device
    time, naming which of its comparisons do (the time breakdown, the operator and communication comparisons, as of
    a text or Kineto trace without 'dur', ``traceio.device_time_readers``; and a DB's kernel comparison, which takes
    its kernels' durations from TASK). The API and memory comparisons read PYTORCH_API and the memory tables: such a
    run goes on, the rows counted in the load's untimed-rows warning (it was refused whatever the run compared), the
    profile marked ``NO_DEVICE_TIME``."""
    readers = traceio.device_time_readers(opts) + (["the kernel comparison"] if opts.enable_kernel_compare else [])
    if readers:
        raise ProfileError(db.path, f"no row of the TASK table has a start and an end time ({db.untimed['TASK']} "
                                    f"row(s) without): no device time to compare, which {and_list(readers)} "
                                    f"read{'s' if len(readers) == 1 else ''} from it",
                           hint="the API and memory comparisons do not read it and run without it")


def _load(db: _Db, layout: Any, opts: Options, step: int) -> Profile:
    path = db.path
    missing = [t for t in REQUIRED_TABLES if not db.has(t)]
    if missing:
        if not db.tables and _size(path) == 0:  # SQLite reads a 0-byte file as a database without tables
            raise ProfileError(path, "the file is empty (0 bytes), not a profiler database: was the profiler "
                                     "stopped before it wrote it?")
        raise ProfileError(path, f"not a profiler database: table{'s' if len(missing) > 1 else ''} "
                                 f"{and_list(missing)} {'are' if len(missing) > 1 else 'is'} missing")
    db.need_times("TASK")
    if db.scalar("SELECT 1 FROM TASK LIMIT 1") is None:
        raise ProfileError(path, "the TASK table is empty: no device activity was recorded")
    untimed = bool(db.untimed.get("TASK")) and db.scalar(
        "SELECT 1 FROM TASK WHERE startNs IS NOT NULL AND endNs IS NOT NULL LIMIT 1") is None  # every row left out
    if untimed:  # no device time at all
        _untimed_tasks(db, opts)
    _check_task_links(db)
    kind = db_kind(path)
    steps = _steps(db)
    step_range = _step_range(db, steps, step)
    rng = step_range or _ALL
    applied = step if step_range else -1  # the step every query is cut to, -1 for none

    # where the path pointed, as a text export's level says it: the folder, its ASCEND_PROFILER_OUTPUT, or the
    # database itself (JSON base.level / comparison.level, which read "" for every DB side)
    profile = Profile(path=layout.given, kind="NPU", source="ascend_db",
                      level="database" if layout.level == "file" else layout.level, files={"db": path})
    profile.extra.update({"db_kind": kind, "step": applied, "step_range": step_range,
                          "steps": steps, NO_DEVICE_TIME: untimed})
    if layout.level == "profiling" and layout.info_path:  # the original's DB mode reads only the database
        from .ascend_text import read_profiler_settings

        read_profiler_settings(layout.info_path, profile, warn=False)
    elif layout.settings_path:  # the database given, or its ASCEND_PROFILER_OUTPUT
        from .ascend_text import read_export_settings

        read_export_settings(layout.settings_path, profile, opts.force)
    kernels, kextra, details, stat = _compute_tasks(db, rng, steps, applied, opts.time_breakdown,
                                                    opts.enable_kernel_compare and opts.use_kernel_type)
    if not db.has("COMPUTE_TASK_INFO"):
        profile.warnings.append(f"{path}: no COMPUTE_TASK_INFO table; no computing tasks")
    profile.kernels = kernels
    profile.kernel_details = details
    profile.op_statistic = stat
    profile.extra["has_pmu"] = _pmu(db, kextra, kernels)
    # why the cube rule reads task types (the breakdown says it, as a text export's missing PMU columns)
    profile.extra["pmu_table"] = "" if profile.extra["has_pmu"] else "empty" if db.has("TASK_PMU_INFO") else "absent"
    profile.extra["kernel_extra"] = kextra
    profile.extra["task_summary"] = _task_summary(db, rng, opts.time_breakdown)
    profile.extra["c_core_sqe"] = _c_core_sqe(db, rng)
    # read in every run, as the C_CORE_SQE tasks: a result compared without the time breakdown makes one for
    # regression_gate(), whose idle stretches and window words count the copies (0.09 s on 240,000 tasks)
    profile.extra["copy_tasks"] = _copy_tasks(db, rng)
    profile.comm = _communication(db, rng, opts.time_breakdown)
    profile.extra[COMM_STEP_CUT] = _comm_step_cut(db, rng, profile.comm)
    profile.metadata = _metadata(db)
    profile.extra["device_ranks"], profile.extra["device_ranks_odd"] = _device_ranks(db)
    if not profile.extra["device_ranks"] and not profile.extra["device_ranks_odd"][0]:
        profile.extra["device_map_none"] = _device_map_none(db)
    profile.rank_span = _rank_span(db)
    profile.extra.update(_memory_peak_extra(db, rng, applied, profile.extra.get("profile_memory") is True))
    profile.extra.setdefault("op_connections", pd.DataFrame({"op_row": np.zeros(0, np.int64),
                                                             "connection_id": np.zeros(0, np.int64)}))
    if kind == "pytorch":
        _pytorch_api(db, rng, profile, opts)
        profile.flows = _flows(profile)
        if opts.enable_memory_compare:
            profile.operator_memory = _operator_memory(db, step_range)
    profile.warnings.extend(f"{path}: {note}" for note in db.said())
    return profile
