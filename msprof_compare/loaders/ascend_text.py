"""Loader for Ascend text exports: torch_npu ``*_ascend_pt`` and MindSpore ``*_ascend_ms``.

One decode of ``trace_view.json`` (msgspec, via ``traceio``; numeric epoch times are
kept as text in it, ``traceio.RawTimesEvent``, and parsed exactly); numpy columns are
pulled out only for the events some table keeps (``_select``: host events of the
enabled comparisons, ``FLOW_CATS`` flows, the hardware / HCCL / overlap lanes and
metadata; counters and the CANN lane are skipped); the tables of the ``Profile``
are cut from those columns with boolean masks, and ``args`` are decoded in one
batch per table, only for the events kept.
Side files (reference-1 §2.3) are read only at the directory levels
("ascend_output", "profiling"); a bare trace_view.json ("trace" level) reads
nothing else.

Side tables as stored on the Profile (original column names kept, plus
exact integer-ns columns so nobody re-parses decimal text):

* ``kernel_details``: ``Step Id`` (int, -1 when N/A; "Step ID" renamed),
  ``Name``, ``Type``, ``Accelerator Core``, ``Input Shapes`` (text, "" when
  empty), ``Start Time(us)`` (stripped text), ``Duration(us)`` (float) and the
  PMU columns present among ``PMU_COLUMNS`` (float, NaN for ""/N/A, 0 for a time below 0 or over a week), plus
  ``ts`` / ``dur`` (int64 ns; ``ts`` is the exact Start Time, -1 if unparsable) and ``start_read``
  (bool: whether the Start Time was read; ``model.starts_read``).
* ``op_statistic``: its columns, numbers as float (``Count`` int).
* ``memory_record``: ``Total Reserved(MB)`` (float) and, where the file has it, ``Component`` (str).
* ``operator_memory``: ``Name``, ``Size(KB)`` (float, 0 for ""/N/A),
  ``Allocation Time(us)``/``Release Time(us)`` (text) and ``alloc_ns`` /
  ``release_ns`` (int64 ns, 0 for ""/N/A), ``Duration(us)``, ``Device Type``.
* ``communication``: communication.json as a dict; ``metadata``:
  profiler_metadata.json; ``extra["profiler_level"]``, ``extra["aic_metrics"]`` and
  ``extra["profile_memory"]``: the settings of profiler_info*.json (``profiler_settings``), read at the
  profiling level by every run (``read_profiler_settings``); ``extra["hccl_pid"]``: the HCCL
  lane process (None when absent: a pid may be -1);
  ``extra["unnamed_lane_events"]``: the complete events on processes without a name (no ``process_name``
  record, or an empty one).
* ``extra[NO_DEVICE_TIME]``: no device task has a ``dur`` (a run that reads no device time goes on);
  ``extra["renamed_flow_cats"]``: the categories of flows that run as async_npu flows do but are not read
  (``_renamed_flows``); ``extra[PYTHON_STEP_MARKS]``: the python_function events named ProfilerStep#N whose step
  no cpu_op marks (``traceio.python_step_marks``), said where a step is refused.
* ``extra["step_marks"]``: where a step is asked for and the trace has no torch op (``cpu_op``), its
  ``ProfilerStep#`` events of any category (name, ts, dur): MindSpore 2.5 and later writes its step
  markers with category "" on the MindSpore lane, and the original then looks for them among all events
  (reference-1 §3.5); ``extra[OTHER_STEP_MARKS]``: without a step, such a trace's marker names alone (a set),
  for the step count check.
* each side file is read only when a comparison that uses it is on (as the original's
  collectors): ``memory_record`` and ``communication`` with the profiling comparison,
  ``operator_memory`` with the memory comparison (and, without the profiling comparison,
  ``memory_record`` for the console's peak memory, a missing one warned of alike), ``op_statistic`` with the kernel
  comparison and ``--use_kernel_type``.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re
from collections.abc import Callable
from functools import partial
from itertools import chain, compress, repeat
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import ProfileError
from ..model import (
    INFO_FRAMEWORK,
    MS_VERSION,
    NO_DEVICE_TIME,
    NO_RANK,
    OTHER_STEP_MARKS,
    PYTHON_STEP_MARKS,
    STEP_MARK,
    UNREAD_SETTINGS,
    Profile,
    SideNote,
    empty,
    factorize,
    frame,
    frame_of,
    hccl_core,
    hcom_name,
    names_a_type,
    npu_framework,
    object_array,
    object_full,
    repeats,
    sided,
    step_marks,
    step_notes,
    threads_in_order,
)
from ..options import Options
from ..textsafe import short_repr, short_text, term_safe
from ..units import MAX_RANK
from . import paths, traceio
from .numparse import (
    LONG_DURATION_TEXT,
    MAX_DURATION_NS,
    MAX_RESERVED_BYTES,
    NumberError,
    duration_notes,
    late_releases,
    lenient_us_to_ns,
    memory_oddities,
    odd_pmu_note,
    odd_ranks_note,
    repeated_rows_note,
    text_us_to_ns,
    zero_odd_durations,
)

#: Process names (metadata) of the lanes the compare reads (reference-1 §5.1).
HCCL_PROCESS_NAMES = ("Communication", "HCCL")
HARDWARE_PROCESS = "Ascend Hardware"
#: The host lane of a torch_npu trace: its complete events all carry a category.
PYTHON_PROCESS = "Python"
OVERLAP_PROCESS = "Overlap Analysis"
#: The device lanes: a capture without the NPU activity has none of them.
DEVICE_LANES = (HARDWARE_PROCESS, *HCCL_PROCESS_NAMES, OVERLAP_PROCESS)

#: PMU columns of kernel_details.csv the breakdown reads (reference-1 §5.3).
PMU_COLUMNS = ("aiv_vec_time(us)", "aicore_time(us)", "mac_time(us)",
               "aic_mac_time(us)", "aic_mte2_time(us)", "aiv_time(us)")
KERNEL_TEXT_COLUMNS = ("Name", "Type", "Accelerator Core", "Input Shapes")
KERNEL_REQUIRED = ("Name", "Type", "Start Time(us)", "Duration(us)")


# --------------------------------------------------------------------------- args structs


class _MetaArgs(msgspec.Struct, gc=False):
    name: Any = None
    sort_index: Any = None


class _OpArgs(msgspec.Struct, gc=False):
    input_dims: Any = msgspec.field(name="Input Dims", default=None)
    input_type: Any = msgspec.field(name="Input type", default=None)
    call_stack: Any = msgspec.field(name="Call stack", default=None)


class _TaskArgs(msgspec.Struct, gc=False):
    task_type: Any = msgspec.field(name="Task Type", default=None)
    stream: Any = msgspec.field(name="Stream Id", default=None)
    task_id: Any = msgspec.field(name="Task Id", default=None)


class _CommArgs(msgspec.Struct, gc=False):
    task_type: Any = msgspec.field(name="task type", default=None)
    # raw: a rank only bounds the world size from below, so a value msgspec cannot hold (1e400) must not
    # fail the load, as it did not when the key was skipped
    src_rank: msgspec.Raw = msgspec.field(name="src rank", default=msgspec.Raw(b"null"))
    dst_rank: msgspec.Raw = msgspec.field(name="dst rank", default=msgspec.Raw(b"null"))


class _QueueArgs(msgspec.Struct, gc=False):
    correlation_id: Any = None


# Int args read with ``traceio.checked_ints`` (a bad value reads as absent, counted in one warning):
# those a misreading turns into other figures. process_sort_index feeds no figure and is read by
# ``traceio.whole_int`` (-1 when it is none, without a warning);
# args no comparator reads (Sequence number, Fwd thread id, the tasks' connection_id)
# are not in the args structs at all: each field costs decode time on every event.
#: "Task Id" of a device task: shown in the kernel details of the operator / module comparisons
#: msprof writes it as uint32, as the DB export's TASK.taskId: a value outside (-5, int64's greatest) was printed as
#: is, and -2, the kernel pool's mark of an HCCL op's row, summed the task as its operator's communication
_TASK_ID = traceio.IntArg("task Task Id value", "those tasks show Task Id None", -1,
                          (-1, 2**32 - 1, "from 0 to 4,294,967,295"))
#: enqueue / dequeue ``correlation_id``: places ``cann::`` memory records at their enqueue
_CORRELATION_ID = traceio.IntArg("enqueue / dequeue correlation_id value",
                                 "each pairs only with the same value (read as a code below -1)", key=True)
#: thread_sort_index ``sort_index``: orders the HCCL lanes, which attaches each plane (task) lane to a group
_THREAD_SORT = traceio.IntArg("thread_sort_index value", "those threads are ordered by their tid")


# --------------------------------------------------------------------------- small helpers


def _text(v: Any) -> str:
    """Arg value -> the text the comparators show ("N/A" when absent)."""
    if v is None:
        return "N/A"
    return v if isinstance(v, str) else str(v)


def _arg_texts(values: list) -> np.ndarray:
    """Arg values -> the texts the tables hold: "" when absent, else ``_text``; equal texts as one object
    (``traceio.shared_texts``: each decoded args struct holds a fresh one, and a task type or an HCCL task's
    type repeats in every step: 282k device tasks kept ~17 MB of copies of a dozen texts)."""
    if values and traceio.all_text(values):
        return traceio.shared_texts(values)
    return traceio.shared_texts([v if type(v) is str else "" if v is None else _text(v) for v in values])


def _shared_arg_texts(args: list, name: str) -> np.ndarray:
    """``traceio.shared_texts`` of ``_text`` of the arg ``name`` of every decoded args struct. The usual values
    (str, or None: absent) are shared in one lookup pass seeded with None -> "N/A", with no call per value; any
    other value (a number, a list) takes ``_text`` value by value: 1, 1.0 and True are one key, so only a table
    of str and None keys stands for the texts."""
    seen = traceio.SharedTexts({None: "N/A"})
    try:
        out = np.fromiter(map(seen.__getitem__, map(attrgetter(name), args)), dtype=object, count=len(args))
    except TypeError:  # an unhashable value (a list, an object)
        out = None
    if out is not None and all(type(k) is str for k in seen if k is not None):
        return out
    return traceio.shared_texts([_text(v) for v in map(attrgetter(name), args)])


class _Codes(dict):
    """Text -> its code, the count of distinct texts before it (``__missing__``: one Python call per distinct
    text): categories coded in one lookup pass straight from the events, the codes and order of
    ``pd.factorize`` (which needs the texts pulled into an array first: ~1.8x the time on fresh strings)."""

    def __missing__(self, key: str) -> int:
        code = self[key] = len(self)
        return code


#: Flow categories the comparators read from an NPU text trace: operator -> task links and
#: forward -> backward links. Other flows (HostToDevice, async_task_queue) feed no table.
FLOW_CATS = ("async_npu", "fwdbwd")


def _absent_durs(path: str, absent: np.ndarray, is_x: np.ndarray, device: np.ndarray, warnings: list[str],
                 opts: Options, extra: dict[str, Any]) -> None:
    """Say the complete events without a ``dur`` (read as 0), device events (the hardware, HCCL and overlap lanes)
    and host events apart; refuse a trace none of whose device tasks has one (flows and instant events have none by
    design) where the run reads the device time (``traceio.device_time_readers``). A run of the other comparisons
    (kernel, API, memory) reads none of those durations, kernel_details.csv or not, and goes on with the warning
    (``extra[NO_DEVICE_TIME]``)."""
    dev, host = is_x & device, is_x & ~device
    n_dev, a_dev = int(dev.sum()), int((absent & dev).sum())
    readers = traceio.device_time_readers(opts)
    if n_dev and a_dev == n_dev:
        if readers:
            raise traceio.no_device_time(
                path, f"{n_dev:,} device events (Ascend Hardware, HCCL, Overlap Analysis lanes)", readers,
                "kernel_details.csv does not replace them; the kernel, API and memory comparisons do not read them and "
                "run without them")
        extra[NO_DEVICE_TIME] = True
    note = traceio.absent_dur_note(path, {"device events": (a_dev, n_dev),
                                          "host events": (int((absent & host).sum()), int(host.sum()))})
    if note:
        warnings.append(note)


def _field(events: list, name: str) -> list:
    return list(map(attrgetter(name), events))


def _objects(events: list, name: str) -> np.ndarray:
    """``name`` of every event as an object array, straight from the getter (no list in between: ~0.7 of the
    time of ``object_array(_field(...))``)."""
    return np.fromiter(map(attrgetter(name), events), dtype=object, count=len(events))


def _ints(events: list, name: str, kinds: dict[str, np.ndarray], odd: dict[tuple[str, str], list]) -> np.ndarray:
    """``traceio.lane_ids`` of ``name`` (pid / tid) of every event, an absent one read as 0; the events of each of
    ``kinds`` (masks of ``events`` by what they are: the complete events, the flows, those a table reads) without
    the id and those whose id is not written as an integer within int64 are counted in ``odd`` for
    ``traceio.lane_notes``."""
    ids, missing, vals = traceio.lane_ids(events, name)
    for what, counted in kinds.items():
        absent = int(np.count_nonzero(missing & counted))
        bad = traceio.odd_lanes(list(compress(vals, counted))) if vals is not None else (0, None)
        if absent or bad[0]:
            odd[(what, name)] = [absent, bad[0], bad[1]]
    return ids


#: Phase codes (``_select``'s "ph" column): one dict lookup per event, then integer tests.
PH_OTHER, PH_X, PH_M, PH_S, PH_F, PH_C = 0, 1, 2, 3, 4, 5
_PH_CODES = {"X": PH_X, "M": PH_M, "s": PH_S, "f": PH_F, "C": PH_C}
#: ``_PH_CODES`` by ASCII code, PH_OTHER elsewhere and in the last entry, which stands for every code point beyond
#: ASCII (``_phase_codes``).
_PH_TABLE = np.zeros(129, dtype=np.int8)
_PH_TABLE[[ord(k) for k in _PH_CODES]] = list(_PH_CODES.values())


def _phase_codes(events: list) -> np.ndarray:
    """The ``PH_*`` code of every event. Phases are one character: their code points go from the getter straight
    into an array (``ord``, no list in between) and one table lookup codes them all (~0.65 of the time of a list
    of the phases and a scan of its NUL-joined text: 1.65M events 155-165 -> 100-125 ms); where ``ord`` refuses a
    phase of another length, each takes a dict lookup."""
    try:
        points = np.fromiter(map(ord, map(attrgetter("ph"), events)), np.int32, len(events))
    except TypeError:  # an empty or longer phase
        return np.fromiter(map(_PH_CODES.get, _field(events, "ph"), repeat(PH_OTHER)), np.int8, len(events))
    return _PH_TABLE.take(points, mode="clip")


#: Up to this many keys ``_among`` compares the values with each key; np.isin costs ~20-30 us of fixed work a
#: call (several per table of a small trace), an equality test a few us.
_FEW_KEYS = 16


def _among(values: np.ndarray, keys: Any) -> np.ndarray:
    """``np.isin(values, keys)`` for integer ``values`` and a few integer ``keys`` (lanes, category codes)."""
    keys = list(keys)
    if len(keys) > _FEW_KEYS:
        return np.isin(values, keys)
    out = np.zeros(len(values), dtype=bool)
    for k in keys:
        out |= values == k
    return out


def _renamed_flows(path: str, ev: list, ph: np.ndarray, rows: np.ndarray, cat_code: np.ndarray, pid: np.ndarray,
                   python_pids: list[int], device_pids: list[int],
                   raw: bool) -> tuple[list[str], np.ndarray, np.ndarray | None] | None:
    """(the categories, the (pid, tid, ns ts) rows of their flow ends on the device lanes, and those ends' positions
    in ``ev`` where their float times are not proven exact, else None) of the flows outside ``FLOW_CATS`` (``rows``:
    their positions in ``ev``) that run as async_npu flows do, from the Python lane to the Ascend Hardware / HCCL
    lanes: a renamed category, which links no op to its task. None where there is none. A CANN timeline's own flows
    start elsewhere (HostToDevice on the CANN lane) or end elsewhere (async_task_queue on the Python lane), so they
    are none. Only the few flows are looked at (level-1 sample: ~0.06 ms a trace). Inexact times are re-read by
    the caller with the read flows' (``_select``): numeric epoch times whose raw-time guess missed were up to
    128 ns off the exactly re-read async_npu ends, which made every flow beside them "renamed"."""
    if not rows.size or not python_pids or not device_pids:
        return None
    code, lane = cat_code[rows], pid[rows]
    starts = code[(ph[rows] == PH_S) & _among(lane, python_pids)]
    ends = (ph[rows] == PH_F) & _among(lane, device_pids)
    both = np.intersect1d(starts, code[ends])
    if not both.size:
        return None
    sel = rows[ends & np.isin(code, both)]
    picked = [ev[i] for i in sel.tolist()]
    names = list(dict.fromkeys(e.cat for e in picked))
    vals = _field(picked, "ts")
    inexact = False
    try:
        if raw:
            ts = traceio.raw_times_to_ns(vals, path, "ts")
        else:
            ts, inexact = traceio.times_to_ns(vals, path, "ts")
    except ProfileError:  # a damaged time: those ends cannot be told from the read flows' (each counted below)
        ts = np.full(len(picked), -1, dtype=np.int64)
    return names, np.column_stack([pid[sel], traceio.lane_ids(picked, "tid")[0], ts]), sel if inexact else None


def _renamed_flow_note(path: str, c: dict[str, Any]) -> str:
    """The warning for the flows ``_renamed_flows`` found whose end no read async_npu flow shares (lane and
    time): the task there is linked to no op, so its time leaves the operator and module figures; where each
    such task also ends an async_npu flow nothing is lost, and nothing is said."""
    found = c.get("renamed_flows")
    if found is None:
        return ""
    names, ends = found
    f = np.flatnonzero((c["ph"] == PH_F) & _cat_is(c, "async_npu"))
    read = set(zip(c["pid"][f].tolist(), c["tid"][f].tolist(), c["ts"][f].tolist(), strict=True))
    lost = sum(1 for key in map(tuple, ends.tolist()) if key not in read)
    if not lost:
        return ""
    named = ", ".join(repr(term_safe(n)) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    return (f"{path}: {lost:,} flow(s) of category {named} run from ops on the Python lane to Ascend Hardware / HCCL "
            "tasks, as async_npu flows do, and no async_npu flow reaches those tasks; only async_npu flows are read "
            "(a renamed category?), so those tasks are linked to no operator: the operator and module sheets leave "
            "them out")


def _wanted_cats(opts: Options) -> frozenset[str]:
    """Lower-cased categories of the host events some enabled comparator reads."""
    cats = {"cpu_op"}
    if opts.enable_operator_compare:
        cats.add("python_function")
    if opts.enable_memory_compare:
        cats.update(("enqueue", "dequeue"))
    return frozenset(cats)


#: The pids (lower-cased) of torch.autograd.profiler's own Chrome trace (Python's ``export_chrome_trace`` without
#: Kineto writes "CPU functions", libtorch's ``RecordProfile`` "CPU Functions": an event list with no process
#: metadata and no categories), which the top-level-list rule would read as an NPU trace.
_LEGACY_PIDS = frozenset({"cpu functions", "cuda functions"})


#: Lower-cased categories of a Kineto trace's device events, which no Ascend trace_view.json holds.
_KINETO_DEVICE_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})


def _refuse_kineto_list(path: str, events: list) -> None:
    """Refuse an event list without NPU device lanes that holds Kineto's GPU kernels, memcpys or memsets (a
    ``*.pt.trace.json``'s traceEvents written as the file's top level, as Chrome's array format allows): every
    top-level list reads as a trace_view.json, so it was refused as "no NPU device lane ... record it with
    torch_npu.profiler.ProfilerActivity.NPU", advice that cannot apply to a GPU trace (kfuzz64). One pass over
    the categories, only where the list names no NPU device lane (an NPU trace then is refused or, a legacy
    MindSpore timeline, small: 0.6 ms for the 6,359 events of mindinsight's timeline_display_1.json)."""
    cats = sorted(_KINETO_DEVICE_CATS.intersection(c.lower() for c in set(map(attrgetter("cat"), events))))
    if cats:
        raise ProfileError(path, f"a list of Kineto (GPU) trace events (cat {', '.join(cats)}), not an Ascend "
                                 "trace_view.json: a Kineto trace is a JSON object whose \"traceEvents\" holds them",
                           hint='pass the *.pt.trace.json torch.profiler wrote, or wrap the list as '
                                '{"traceEvents": [...]}')


def _select(path: str, data: bytes, events: list, opts: Options,
            warnings: list[str], extra: dict[str, Any]) -> tuple[dict[str, np.ndarray], pd.DataFrame, pd.DataFrame,
                                          tuple[int | None, int | None, int | None],
                                          int]:
    """The events some table is built from, as numpy columns; the metadata tables; the lane pids; the count of
    complete events on processes without a name.

    Categories are coded: "cat_code" indexes "cat_names", the distinct lower-cased categories (an object array
    of its own length), so the tables pick their rows by integer tests instead of comparing strings.

    Fields are extracted (and times parsed) only for the events a table keeps: host events of
    the wanted categories, flows of ``FLOW_CATS`` and "X" events of the hardware / HCCL / overlap
    lanes (metadata, which has no times, feeds the processes / threads tables directly). Counter
    events, the CANN lane and unread categories are often three quarters of an NPU trace. The "ph"
    column holds the ``PH_*`` codes; "id" is None but on flows (``_field_at``). Times written as JSON
    numbers too large for float64 to hold to the nanosecond were kept as text by the decode
    (``traceio.RawTimesEvent``) and are parsed from it; only where its guess missed them are they
    re-read from the text of ``data``.
    """
    raw = bool(events) and type(events[0]) is traceio.RawTimesEvent
    with traceio.gc_paused():
        ph = _phase_codes(events)
        is_x = ph == PH_X
        if not is_x.any():
            if events and not any(map(attrgetter("ph"), events)):  # e.g. a run-description list beside traces
                raise ProfileError(path, f"not a trace: none of the list's {len(events):,} entries is a trace event "
                                         "(no \"ph\" field)")
            raise ProfileError(path, "no duration ('X') events in the trace (empty or metadata-only event list)")
        meta = list(map(events.__getitem__, np.flatnonzero(ph == PH_M).tolist()))
        processes, threads, order = _metadata(path, meta, warnings)
        if processes.empty and _LEGACY_PIDS.intersection(p.lower() for p in _field(events[:4096], "pid")
                                                         if isinstance(p, str)):
            raise ProfileError(path, 'a legacy torch.autograd.profiler trace (pid "CPU functions"), not an Ascend '
                                     "trace_view.json or a Kineto trace",
                               hint="record the job with torch.profiler.profile and pass its *.pt.trace.json")
        p_pid, p_name = col_of(processes, "pid", np.int64), col_of(processes, "name", object)
        names_of = dict(zip(p_pid.tolist(), p_name.tolist(), strict=True))
        lanes = tuple(_last_pid(names_of, names, order) for names in LANE_NAMES)
        if all(lane is None for lane in lanes):
            _refuse_kineto_list(path, events)
        _lanes_named_twice(path, events, is_x, names_of, lanes, warnings)
        not_c = ph != PH_C
        cand = np.flatnonzero(not_c)
        ev = _pick(events, not_c) if cand.size != len(events) else events
        ph = ph[cand]
        seen = _Codes()  # categories are str (``traceio.Event``): no missing value, every code >= 0
        codes = np.fromiter(map(seen.__getitem__, map(attrgetter("cat"), ev)), dtype=np.intp, count=len(ev))
        uniq = list(seen)
        low = [u.lower() for u in uniq]
        # the distinct lower-cased categories, "" always among them (an event without a category reads as "")
        lid = {v: i for i, v in enumerate(dict.fromkeys([*low, ""]))}
        cat_code = np.array([lid[v] for v in low], dtype=np.intp)[codes]
        cat_names = np.array(list(lid), dtype=object)
        wanted = _wanted_cats(opts)
        keep = np.array([u in wanted for u in lid])[cat_code]
        flow_cat = np.array([u in FLOW_CATS for u in lid])[cat_code]
        is_flow = (ph == PH_S) | (ph == PH_F)
        keep |= flow_cat & is_flow
        if (odd_flow := flow_cat & ~is_flow).any():
            # torch_npu writes these categories as flow starts and ends alone, and only those pair: one whose ph was
            # damaged ("F", "t") left its op without its task without a word
            n, first = int(np.count_nonzero(odd_flow)), ev[int(np.argmax(odd_flow))]
            warnings.append(f"{path}: {n:,} async_npu / fwdbwd event(s) with a ph other than \"s\" or \"f\" (the "
                            f"first: {short_repr(first.ph)}); not read, so the op or forward op of such a flow links "
                            "to no task")
        odd_ids: dict[tuple[str, str], list] = {}  # complete events and flows whose pid / tid is absent or damaged
        pid = _ints(ev, "pid", _lane_kinds(ph), odd_ids)
        # complete events of processes without a name (no process_name record, or ""): lanes that cannot be told apart
        named = p_pid[p_name != ""]
        unnamed = int((is_x[cand] & ~_among(pid, named.tolist())).sum())
        python_pids = [p for p, n in names_of.items() if n == PYTHON_PROCESS]
        if python_pids and (bare := int((is_x[cand] & (cat_code == lid[""]) & _among(pid, python_pids)).sum())):
            # torch_npu gives every complete event of the Python lane a category (cpu_op, python_function, enqueue,
            # dequeue): one without is damaged, and it left the operator and API figures without a word
            warnings.append(f"{path}: {bare:,} complete event(s) of the Python lane without a cat; not read, so they "
                            "count in no figure")
        if python_pids and (odd := is_x[cand] & np.array([u not in PYTHON_CATS for u in lid])[cat_code]).any():
            _other_python_cats(path, ev, odd & _among(pid, python_pids), warnings)
        lane_pids = [p for p in lanes if p is not None]
        if lane_pids:
            keep |= is_x[cand] & _among(pid, lane_pids)
            # beside the device lanes, complete events of a process without a name are damage (every process of a
            # real trace is named): a device task whose pid was edited left every figure without a word (msfuzz62);
            # those without a pid or with a damaged one are said by ``traceio.lane_notes`` instead
            absent, bad = odd_ids.get(("complete events", "pid"), (0, 0))[:2]
            if (stray := unnamed - bad - (absent if 0 not in named else 0)) > 0:
                warnings.append(f"{path}: {stray:,} complete event(s) lie on processes the trace gives no name (no "
                                "process_name record, or an empty one), so no lane reads them and they count in no "
                                "figure")
            # an async_npu / fwdbwd event of another ph is said above, not again as a lane event
            _other_lane_phases(path, ev, np.where(flow_cat, PH_S, ph) if odd_flow.any() else ph, pid, lane_pids,
                               warnings)
        flows = np.flatnonzero(is_flow)  # one pass over the events; the flows are few
        renamed = _renamed_flows(path, ev, ph, flows[~flow_cat[flows]], cat_code, pid, python_pids,
                                 [p for p in lanes[:2] if p is not None], raw)
        renamed_inexact = None if renamed is None or renamed[2] is None else cand[renamed[2]]  # places in events
        if "cpu_op" not in lid:
            # no torch op: step markers outside the read categories, kept where a step is asked for
            # (``extra["step_marks"]``), else their distinct names alone (``extra[OTHER_STEP_MARKS]``)
            _other_step_marks(ev, keep, ph, is_flow, opts.step_given, extra)
        if opts.step_given and not opts.enable_operator_compare and "python_function" in lid:
            # a step asked with the Python functions unread: a step marker written as one (no step: steps are read
            # from the cpu_op events) left the step refused as "no ProfilerStep# markers" without a word. Their
            # names alone, and only when a step is asked (``_trace_tables`` says them)
            py = np.flatnonzero(cat_code == lid["python_function"])
            extra["python_marks"] = [n for n in map(attrgetter("name"), map(ev.__getitem__, py.tolist()))
                                     if STEP_MARK in n]  # names are str (``traceio.Event``)
        # neither asked: the same where no event read bears a marker name (known below, once the kept events' names
        # are pulled), so the step count check would read none; the Python functions' places in ``events`` kept
        # till then. Beside a host marker a Python function's ProfilerStep#N is said only with the operator
        # comparison or a step: nothing cheaper than the pass tells (the decode gives each name as its own str, no
        # set or count of them; bytes.count over the file takes 0.65 ms on text level 1, the pass 0.11 ms), and the
        # pass would cost every stepped export ~1% of its load (level 1: 1,282 functions of a ~10 ms load)
        py_unread = (cand[cat_code == lid["python_function"]] if not opts.step_given and
                     not opts.enable_operator_compare and "python_function" in lid else None)
        k = np.flatnonzero(keep)
        if k.size != len(ev):
            ev = _pick(ev, keep)
        timed, kept = is_x[cand][k], cand[k]  # timed: complete events, the ones whose "dur" any table reads
        ph, cat, cat_code, pid = ph[k], object_array(uniq)[codes[k]], cat_code[k], pid[k]
        # the candidates' columns (8 bytes an event each) dropped before the times are parsed and the kept events'
        # last columns pulled, where the load of a 1 GB trace reaches its peak: ~130 MB less at it
        del cand, codes, keep, flow_cat, is_flow, not_c, is_x, k
        ts_vals, dur_vals = _field(ev, "ts"), _field(ev, "dur")
        try:
            if raw:  # times kept as text (traceio.RawTimesEvent): parsed exactly, then the unread ones checked
                ts = traceio.raw_times_to_ns(ts_vals, path, "ts")
                dur, _, absent = traceio.durs_to_ns(
                    dur_vals, lambda v: (traceio.raw_times_to_ns(v, path, "dur"), False), timed)
            else:
                ts, ts_inexact = traceio.times_to_ns(ts_vals, path, "ts")
                dur, dur_inexact, absent = traceio.durs_to_ns(
                    dur_vals, partial(traceio.times_to_ns, path=path, field="dur"), timed)
                # the guess of ``decode_events(raw_ts=True)`` missed: a second, times-only decode
                exact = traceio.exact_texts(path, data) if ts_inexact or dur_inexact or renamed_inexact is not None \
                    else None
                ts = traceio.exact_ns(path, exact, "ts", kept) if ts_inexact else ts
                dur = traceio.exact_ns(path, exact, "dur", kept) if dur_inexact else dur
        except traceio.TimeValueError as exc:  # the event named: ``kept`` holds the read events' places
            raise traceio.event_time_error(exc, path, events, int(kept[exc.row]), traceio.first_char(data) == "{",
                                           data) from None
        if raw:
            read = np.zeros(len(events), dtype=bool)
            read[kept] = True
            traceio.check_raw_ts(path, data, events, read)
        elif renamed_inexact is not None:  # the flow ends told from the read flows' by time, read alike
            renamed[1][:, 2] = traceio.exact_ns(path, exact, "ts", renamed_inexact)
        # the times' lists and the kept events' positions read no more: dropped before the last columns are pulled,
        # where a 1 GB trace's load nears its peak (2.6M kept events: 60 MB)
        del ts_vals, dur_vals, kept
        # negative and over-a-week durations read as 0 first (one warning line each), as in the Kineto loader and
        # kernel_details.csv: such a damaged duration is no reason to refuse the trace for an end beyond int64
        warnings.extend(duration_notes(path, *zero_odd_durations(dur)))
        traceio.check_ends(path, ts, dur)
        _no_epoch_starts(path, ev, ts, timed, warnings)
        if absent is not None:
            _absent_durs(path, absent, timed, _among(pid, lane_pids), warnings, opts, extra)
        # equal names as one object each (as ``traceio.shared_texts``; "" looked up below), pulled before the kept
        # events' other columns: the Python functions' places (8 bytes a function) go once the marker names are
        # known, not held through the pulls of tid, flow ids and args. They cannot go sooner: the load peaks at the
        # pick above, where the candidates' columns they are taken from are still held
        names = np.fromiter(map((texts := traceio.SharedTexts()).__getitem__, map(attrgetter("name"), ev)),
                            dtype=object, count=len(ev))
        mark_names = [n for n in texts if isinstance(n, str) and STEP_MARK in n]
        if py_unread is not None and py_unread.size and not mark_names:
            # a pass over the Python functions' names only where no host op marks a step (a trace without steps,
            # or with markers written as Python functions alone): said by ``_trace_tables``
            extra["python_marks"] = [n for n in map(attrgetter("name"), map(events.__getitem__, py_unread.tolist()))
                                     if STEP_MARK in n]
        del py_unread
        cols: dict[str, np.ndarray] = {
            # equal categories and names as one object each (``traceio.shared_texts``): the tables keep them per row
            "ph": ph, "cat": cat,
            "cat_code": cat_code, "cat_names": cat_names, "pid": pid, "name": names,
            "tid": _ints(ev, "tid", _lane_kinds(ph), odd_ids),
            "ts": ts, "dur": dur,
            "id": _field_at(ev, np.flatnonzero((ph == PH_S) | (ph == PH_F)), "id"),  # only flows pair by id
            "args": _objects(ev, "args"),
        }
        cols["blank_names"] = "" in texts  # one lookup: the host events without a name are counted only then
        cols["renamed_flows"] = None if renamed is None else renamed[:2]
        cols["odd_marks"] = traceio.odd_step_marks(texts)  # the distinct names: no pass over the events
        cols["mark_names"] = mark_names
    # an absent pid read as 0 put an event on no named process (pid 0 is none: a device task, HCCL task or overlap
    # span there counted in no figure), an absent tid on lane 0 (an HCCL op onto plane 0, a task of its own): figures
    # moved without a word (tvfuzz62, msfuzz62), as in the Kineto loader before kfuzz61's fix
    warnings.extend(traceio.lane_notes(path, odd_ids))
    return cols, processes, threads, lanes, unnamed


def _other_step_marks(events: list, keep: np.ndarray, ph: np.ndarray, is_flow: np.ndarray, step: bool,
                      extra: dict[str, Any]) -> None:
    """The ``ProfilerStep#`` markers among the events no table reads (``~keep``), for a trace without torch ops
    (MindSpore 2.5+ writes its markers with category ""): the original's step scan then takes any event so named
    (reference-1 §3.5). With a ``step`` they are kept (``keep`` set in place: ``_trace_tables`` makes
    ``extra["step_marks"]`` of them), events of any phase but metadata (an instant marker: dur 0) as that scan;
    without one their distinct names alone go to ``extra[OTHER_STEP_MARKS]`` for the step count check, of the
    events a step run's ``extra["step_marks"]`` would hold (no flow either), so both count alike. One pass over
    those events' names and a marker test of each (~60 ns an event: 0.3 ms of the 14.8 ms load of the
    MindSpore 2.5 layout copy of text level 1, where the pandas test of every name took 1.8 ms); the rows only
    where a step is asked and some name is a marker. A trace with torch ops never gets here."""
    other = ~keep & (ph != PH_M) if step else ~keep & (ph != PH_M) & ~is_flow
    if step:
        names = list(map(attrgetter("name"), compress(events, other.view(np.uint8).tobytes())))
        marks = {n for n in names if STEP_MARK in n}  # names are str (``traceio.Event``)
        if marks:
            keep[np.flatnonzero(other)[np.fromiter(map(marks.__contains__, names), dtype=bool, count=len(names))]] \
                = True
        return
    extra[OTHER_STEP_MARKS] = {n for n in map(attrgetter("name"), compress(events, other.view(np.uint8).tobytes()))
                               if STEP_MARK in n}


def _lane_kinds(ph: np.ndarray) -> dict[str, np.ndarray]:
    """The events a table reads, by kind (``ph``: their phase codes), whose pid / tid ``_ints`` counts: complete
    events and flows (a flow without a pid links to no op or task)."""
    return {"complete events": ph == PH_X, "flow events": (ph == PH_S) | (ph == PH_F)}


#: The categories (lower-cased) of the complete events of torch_npu's Python lane, each read by a table.
HOST_CATS = ("cpu_op", "python_function", "enqueue", "dequeue")
#: ``HOST_CATS`` and "" (an event without a category, counted on its own).
PYTHON_CATS = frozenset({*HOST_CATS, ""})


def _other_python_cats(path: str, events: list, odd: np.ndarray, warnings: list[str]) -> None:
    """Count the complete events of the Python lane (``odd``: a mask of ``events``) whose category is none of
    ``PYTHON_CATS``: torch_npu writes those four alone there, and tables pick host events by category, so an op or
    a task-queue event whose cat was damaged ("cpu_op ", renamed) left ApiCompare, the operator or the memory
    sheets without a word (as one without a cat did)."""
    if n := int(np.count_nonzero(odd)):
        first = events[int(np.argmax(odd))].cat
        warnings.append(f"{path}: {n:,} complete event(s) of the Python lane with a cat other than cpu_op, "
                        f"python_function, enqueue or dequeue (the first: {short_repr(first)}); not read, so they "
                        "count in no figure")


def _other_lane_phases(path: str, events: list, ph: np.ndarray, pid: np.ndarray, lane_pids: list[int],
                       warnings: list[str]) -> None:
    """Count the events of the device lanes (``lane_pids``) whose phase is none the trace writes there (``PH_OTHER``
    but "t": not "X", nor metadata, flow or counter): torch_npu and MindSpore write device tasks, HCCL tasks and overlap
    spans as complete events alone, so one whose ph was damaged (absent, "x", "B") left every figure without a word,
    as in the Kineto loader. ``ph`` and ``pid`` are the codes and pids of ``events``; one test of the phase codes
    where no such event is (the usual trace)."""
    other = ph == PH_OTHER
    if not other.any():
        return
    odd = np.flatnonzero(other & _among(pid, lane_pids)).tolist()
    # a flow step ("t": CANN's msprof timelines write them on the hardware lane) is no damage
    phs = [p for p in map(attrgetter("ph"), map(events.__getitem__, odd)) if p != "t"]
    if phs:
        warnings.append(traceio.other_ph_note(path, len(phs), "Ascend Hardware, HCCL or Overlap Analysis", phs[0]))


#: Starts at or beyond this (ns; ~11.6 days after 1970) are epoch times, as torch_npu, MindSpore and CANN write.
EPOCH_NS = 10**15


def _no_epoch_starts(path: str, events: list, ts: np.ndarray, timed: np.ndarray, warnings: list[str]) -> None:
    """Count the complete events (``timed``) of ``events`` that start before 0, or at 0 where every other one starts
    at an epoch time (``EPOCH_NS``): no time a profiler writes (kernel_details.csv's such starts are counted too), a
    damaged ts. Read as written, such a task lay in no step and its communication or overlap figures moved (an
    overlap span there stretched the E2E time to the whole epoch) without a word. One comparison of the starts where
    none is (the usual trace)."""
    low = timed & (ts <= 0)
    if not low.any():
        return
    others = ts[timed & (ts > 0)]
    if not (others.size and others.min() >= EPOCH_NS):
        low &= ts < 0  # a trace of times from 0 (a relative clock): 0 is a time
    if n := int(low.sum()):
        first = events[int(np.argmax(low))]
        at = bytes(first.ts).decode("utf-8", "replace") if isinstance(first.ts, msgspec.Raw) else first.ts  # raw: text
        warnings.append(f"{path}: {n:,} complete event(s) start at a negative time, or at 0 among epoch times (no "
                        f"start time: a damaged ts; the first: {short_repr(first.name)} at {short_repr(at)}); "
                        "read as written, so they lie outside every step, and figures that span the trace (E2E Time) "
                        "stretch to reach them")


def _repeats_note(path: str, n: int, what: str, same: str, noun: str, figures: str = "") -> str:
    """The warning for ``n`` trace events that repeat an earlier one in every field ``same`` names (a trace joined
    from two copies): read as written, as the original reads them, so the figures that sum them count them twice."""
    return (f"{path}: {n:,} {what} repeat an earlier one (same {same}: the same {noun} written again, as in a trace "
            f"joined from two copies); they are read as written, as in the original, so figures that sum them{figures} "
            f"count those {noun}s more than once.")


def _pick(events: list, mask: np.ndarray) -> list:
    """The events where a boolean mask is set: ``compress`` over the mask's bytes (~0.8 of the time of
    picking them by index)."""
    return list(compress(events, mask.view(np.uint8).tobytes()))


def _field_at(events: list, rows: np.ndarray, name: str) -> np.ndarray:
    """``name`` of the events at ``rows``, in an object array as long as ``events`` (None elsewhere). Picking
    an event out of the list costs about as much as reading its field (both touch every struct), so this
    pays only for a field few events need: flow ids (a tenth of the kept events; ~10 ms of the 100 MB
    trace's ~320 ms ``_select``), not args (half of them: slower than reading all)."""
    if rows.size == len(events):
        return _objects(events, name)
    out = np.full(len(events), None, dtype=object)
    if rows.size:
        out[rows] = _objects(list(map(events.__getitem__, rows.tolist())), name)
    return out


# --------------------------------------------------------------------------- trace tables


def _metadata(path: str, meta: list, warnings: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, int]]:
    """processes / threads tables from the "M" events (last occurrence wins), and the order in
    which process_name records appear (it decides which of two same-named processes counts).
    Thread sort indexes are checked once all are known (``_THREAD_SORT``)."""
    names = [e.name for e in meta]
    kept = [i for i, n in enumerate(names) if n in traceio.META_KINDS]  # only their args are decoded
    meta = list(map(meta.__getitem__, kept))
    procs, threads, order = traceio.meta_records(
        list(map(names.__getitem__, kept)), traceio.lane_ids(meta, "pid")[0].tolist(),
        traceio.lane_ids(meta, "tid")[0].tolist(),
        traceio.decode_args(path, object_array(_field(meta, "args")), _MetaArgs))
    p = frame("processes", {"pid": list(procs), "name": [v[0] for v in procs.values()],
                            "sort_index": [v[1] for v in procs.values()]}) if procs else empty("processes")
    t = frame("threads", {"pid": [k[0] for k in threads], "tid": [k[1] for k in threads],
                          "name": [v[0] for v in threads.values()],
                          "sort_index": traceio.checked_ints(path, [v[1] for v in threads.values()], _THREAD_SORT,
                                                             warnings)}) if threads else empty("threads")
    return p, t, order


#: The process names of each device lane ``_select`` reads: hardware, HCCL, overlap.
LANE_NAMES = ((HARDWARE_PROCESS,), HCCL_PROCESS_NAMES, (OVERLAP_PROCESS,))


def _lanes_named_twice(path: str, events: list, is_x: np.ndarray, names_of: dict[int, str],
                       lanes: tuple[int | None, ...], warnings: list[str]) -> None:
    """One warning per device lane whose name more than one process holds, where the others hold complete events:
    the last named is read (``_last_pid``, as the original's dict of names keeps it) and the others' tasks are
    not, which left the operator device times or the communication figures at 0 without a word where the last
    one was empty (a trace joined from two, a lane copied under another pid). The events' pids are pulled out
    only where a name repeats."""
    twice = [(names, pid) for names, pid in zip(LANE_NAMES, lanes, strict=True)
             if pid is not None and sum(n in names for n in names_of.values()) > 1]
    if not twice:
        return
    x_pids = traceio.lane_ids(_pick(events, is_x), "pid")[0]
    for names, pid in twice:
        others = sorted(p for p, n in names_of.items() if n in names and p != pid)
        left = int(np.count_nonzero(np.isin(x_pids, others)))
        if left:
            warnings.append(f"{path}: {len(others) + 1} processes are named {' or '.join(map(repr, names))}: the "
                            f"one named last (pid {pid}, {int(np.count_nonzero(x_pids == pid)):,} complete "
                            f"event(s)) is read, as in the original; the {left:,} of pid(s) "
                            f"{', '.join(map(str, others))} are not")


def _last_pid(names_of: dict[int, str], names: tuple[str, ...], order: dict[int, int]) -> int | None:
    """The pid of the process with one of ``names`` whose process_name came last in the file; None when there is
    none (not -1: a pid can be -1, and that lane was lost)."""
    pids = [p for p, n in names_of.items() if n in names]
    if not pids:
        return None
    return max(pids, key=lambda p: order.get(p, -1))


def _rank_of(raw: msgspec.Raw | bytes) -> int | None:
    text = bytes(raw)
    if text.isdigit() and len(text) <= 19:  # the usual plain integer (within int64 digits)
        return int(text)
    try:
        return traceio.whole_int(msgspec.json.decode(text))
    except (msgspec.DecodeError, RecursionError):  # out of range (1e400), or nested too deeply
        return None


#: Raw rank texts joined by commas, each a plain integer of at most 18 digits (no int64 overflow) or null (the key
#: absent: no rank).
_PLAIN_RANKS = re.compile(rb"(?:[0-9]{1,18}|null)(?:,(?:[0-9]{1,18}|null))*")


def _rank_span(batches: list[bytes | list[bytes]], path: str, warnings: list[str]) -> int:
    """The highest rank id the HCCL tasks name, plus one (0: none), from their rank texts (``_comm_args``: per args
    batch, the plain texts joined, else each text). A value that is no rank id is passed over (the figure only
    bounds the world size from below): HCCL's NO_RANK and null (no peer) unsaid, any other (negative, over
    ``MAX_RANK``, not an integer) counted in one line of ``warnings``, as the DB loader counts its cells. The usual
    texts (plain integers, null) are parsed in one numpy call a batch (~0.1 ms for the 600 values of a 2 MB trace,
    against ~0.3 ms value by value); any other text takes ``_rank_of``."""
    span, n_odd, first = 0, 0, ""
    for texts in batches:
        if isinstance(texts, bytes):
            if not texts:  # a batch's ranks are two texts a task: none only where the batch is empty
                continue
            ranks = np.fromstring(texts.replace(b"null", b"-1"), dtype=np.int64, sep=",")
            odd = (ranks > MAX_RANK) & (ranks != NO_RANK)
        else:
            got = [_rank_of(v) for v in texts]
            ranks = np.array([r if r is not None and 0 <= r <= MAX_RANK else -1 for r in got], dtype=np.int64)
            odd = np.array([v != b"null" and r != NO_RANK and (r is None or not 0 <= r <= MAX_RANK)
                            for v, r in zip(texts, got, strict=True)], dtype=bool)
        if odd.any():
            if not n_odd:  # the first, as written (a plain text holds no comma), cut
                i = int(np.argmax(odd))
                text = texts.split(b",")[i] if isinstance(texts, bytes) else texts[i]
                first = short_text(text.decode("utf-8", "replace"))
            n_odd += int(odd.sum())
        ranks = ranks[(ranks >= 0) & (ranks <= MAX_RANK)]
        if ranks.size:
            span = max(span, int(ranks.max()) + 1)
    if n_odd:
        warnings.append(f"{path}: {odd_ranks_note(n_odd, 'HCCL task src rank / dst rank', first)}")
    return span


#: ``comm.lane`` by whether the event is on a group (op) lane: taken by index, so the column holds these two texts
_LANES = object_array(["task", "op"])


def _comm(path: str, c: dict[str, Any], hccl_pid: int | None, threads: pd.DataFrame,
          warnings: list[str]) -> tuple[pd.DataFrame, int]:
    """HCCL lanes (reference-1 §5.1): group (op) lanes and the plane (task) lanes attached to them; and
    the rank span of their tasks (``_rank_span``). Events on a lane no group lane precedes (no thread names, or
    the group lane sorted after its planes) belong to no group and count in no communication figure: one
    warning says how many, as the figures alone read 0 without a word."""
    if hccl_pid is None:
        return empty("comm"), 0
    sel, (types, ranks) = c["args"].pop("comm")
    group_of: dict[int, str] = {}
    plane_of: dict[int, str] = {}
    op_lanes: set[int] = set()
    current = ""
    for tid, name in zip(*threads_in_order(threads, hccl_pid), strict=True):
        if "Communication" in name:
            op_lanes.add(tid)
            current = name
            group_of[tid] = name
        elif name:
            group_of[tid] = current
            plane_of[tid] = name
    tids = c["tid"][sel]
    is_op = _among(tids, op_lanes)
    tid_list = tids.tolist()
    group = list(map(group_of.get, tid_list, repeat("")))
    lost = group.count("")
    if lost:
        warnings.append(f"{path}: {lost:,} of the HCCL lane's {len(group)} event(s) belong to no communication group "
                        "lane (no thread named '... Communication' sorts before their thread); they count in no "
                        "communication figure")
    return frame("comm", {
        "name": c["name"][sel], "ts": c["ts"][sel], "dur": c["dur"][sel],
        "pid": c["pid"][sel], "tid": tids,
        "lane": _LANES[is_op.view(np.int8)],  # one text object each, not one a row
        "group": group,
        "plane": list(map(plane_of.get, tid_list, repeat(""))),
        "task_type": _arg_texts(types),
    }), _rank_span(ranks, path, warnings)


#: The Overlap Analysis spans whose durations the time breakdown sums (Computing Time, Uncovered Communication
#: Time); Free Time is the window less their union, and the other spans feed no figure.
SUMMED_OVERLAP_SPANS = ("Computing", "Communication(Not Overlapped)")
#: Every span name torch_npu and MindSpore write on the Overlap Analysis lane (one per thread of it).
OVERLAP_SPAN_NAMES = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")
_OVERLAP_SPAN_SET = frozenset(OVERLAP_SPAN_NAMES)


def _unknown_spans(path: str, name: np.ndarray) -> str:
    """The warning for Overlap Analysis spans named none of ``OVERLAP_SPAN_NAMES``, or "". The breakdown picks
    its spans by exact name, as the original does, so a span renamed, re-cased or without a name (a damaged or
    edited trace) left Computing or Uncovered Communication Time for the E2E window alone, and so for Free Time,
    without a word. Each distinct name is tested once (a lane holds four): their set, where every one is known (the
    usual lane), then ``pd.factorize`` to count the others' spans."""
    if set(name.tolist()) <= _OVERLAP_SPAN_SET:
        return ""
    codes, uniq = pd.factorize(name)
    odd = np.flatnonzero([u not in OVERLAP_SPAN_NAMES for u in uniq.tolist()])
    if not odd.size:
        return ""
    rows = np.isin(codes, odd)
    return (f"{path}: {int(np.count_nonzero(rows)):,} Overlap Analysis span(s) have a name other than "
            f"{', '.join(OVERLAP_SPAN_NAMES[:-1])} or {OVERLAP_SPAN_NAMES[-1]} (the first: "
            f"{short_repr(name[int(np.argmax(rows))])}); names are compared exactly, as in the original, so they "
            "count in neither Computing Time nor Uncovered Communication Time, only in the E2E Time and so in "
            "Free Time")


def _overlapping_spans(path: str, name: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> str:
    """The warning for Overlap Analysis spans of a kind the breakdown sums (``SUMMED_OVERLAP_SPANS``) that start
    before an earlier span of the same kind ends, or "". No real export overlaps two spans of one kind, and
    Computing and Uncovered Communication Time are the sums of those spans' durations, as in the original: a span
    written twice (a trace joined from two copies) or stretched over the next one counted its time twice without a
    word. Per kind, the spans sorted by start are each compared with the latest end before them (a running
    maximum); the time counted twice is the part of each span before that end."""
    count, twice, which = 0, 0, []
    for kind in SUMMED_OVERLAP_SPANS:
        rows = np.flatnonzero(name == kind)
        if rows.size < 2:
            continue
        order = rows[np.argsort(ts[rows], kind="stable")]
        start, end = ts[order], ts[order] + dur[order]
        latest = np.maximum.accumulate(end)[:-1]  # the latest end before each span but the first
        over = (start[1:] < latest) & (end[1:] > start[1:])  # a 0 us span counts nothing
        if over.any():
            count += int(over.sum())
            twice += int((np.minimum(latest[over], end[1:][over]) - start[1:][over]).sum())
            which.append(kind)
    if not count:
        return ""
    return (f"{path}: {count:,} Overlap Analysis span(s) ({', '.join(map(short_repr, which))}) start before an "
            f"earlier span of the same kind ends ({twice / 1e6:.3f} ms of overlap; a span written twice, as in a trace "
            "joined from two copies?); they are read as written, as in the original, so Computing Time and Uncovered "
            "Communication Time, which sum them, count that time more than once.")


def _cat_is(c: dict[str, np.ndarray], *names: str) -> np.ndarray:
    """Which events of ``_select``'s columns have one of the lower-cased categories ``names``: an integer test
    of the category codes (a string compare per event and name took ~3 ms per 250k events)."""
    codes = [i for i, v in enumerate(c["cat_names"].tolist()) if v in names]
    return _among(c["cat_code"], codes)


def _last_by_key(key: np.ndarray) -> np.ndarray:
    """Indices of the last occurrence of each key, in order of those last occurrences."""
    rev = key[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    return np.sort(key.size - 1 - first_in_rev)


def _of_key(key: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Key -> the row ``last`` holds for it (the last start or end of each flow key), -1 for a key without one."""
    of_key = np.full(int(key.max()) + 1, -1, dtype=np.int64)
    of_key[key[last]] = last
    return of_key


def _moved(c: dict[str, np.ndarray], rows: np.ndarray, last: np.ndarray) -> int:
    """How many flow events (``rows`` of ``c``) lie at another place (time, pid or tid) than the last of their key
    (``last``, row for row), which the pairing reads instead."""
    return int(np.count_nonzero(np.logical_or.reduce([c[k][rows] != c[k][last] for k in ("ts", "pid", "tid")])))


def _flows(c: dict[str, np.ndarray]) -> tuple[pd.DataFrame, int, int, int, int]:
    """Flow pairs by (category, id), last start / last end of an id winning, in order of first appearance;
    the backward tid; how many flow ends and how many flow starts a later one of the same id hides at another
    place (lane or time); and how many flow events have no id (they pair with none)."""
    ph = c["ph"]
    is_s, is_f = ph == PH_S, ph == PH_F
    backward_tid = -1
    fb = np.flatnonzero(is_f & _cat_is(c, "fwdbwd"))
    if fb.size:
        backward_tid = int(c["tid"][fb[-1]])
    sel = np.flatnonzero(is_s | is_f)
    has_id = np.not_equal(c["id"][sel], None)  # ids are None but on flows (``_field_at``)
    no_id = int(sel.size - np.count_nonzero(has_id))
    sel = sel[has_id] if no_id else sel
    if sel.size == 0:
        return empty("flows"), backward_tid, 0, 0, no_id
    raw = c["id"][sel]
    # ids pair by their text (7 and "7" are one id); when all are ints (the usual trace) their values pair alike,
    # and only the pairs' ids are made text, at the end
    listed = raw.tolist()
    ints = set(map(type, listed)) == {int}
    if ints:
        try:
            ids = np.array(listed, dtype=np.int64)
        except OverflowError:  # beyond int64: paired by text
            ints = False
    if not ints:
        ids = object_array(list(map(str, listed)))
    id_code, id_uniq = pd.factorize(ids)
    # the flow rows' categories coded afresh (a few; codes by a lookup of the trace-wide ones, whose order does not
    # matter): the trace-wide codes could make ``key`` and the tables below as large as the count of all
    # categories times that of the ids
    cat = c["cat_code"][sel]
    flow_cats = np.flatnonzero(np.bincount(cat, minlength=len(c["cat_names"])))
    lookup = np.zeros(len(c["cat_names"]), dtype=np.int64)
    lookup[flow_cats] = np.arange(flow_cats.size)
    key = lookup[cat] * max(len(id_uniq), 1) + id_code
    start = is_s[sel]
    si, fi = np.flatnonzero(start), np.flatnonzero(~start)
    s_last = si[_last_by_key(key[si])]
    f_last = fi[_last_by_key(key[fi])]
    f_of_key = _of_key(key, f_last)
    # an end written again elsewhere (a damaged id, a joined trace) re-links its start to the later end's task; a
    # start written again elsewhere leaves the earlier op of that id unlinked
    hidden = _moved(c, sel[fi], sel[f_of_key[key[fi]]])
    hidden_s = _moved(c, sel[si], sel[_of_key(key, s_last)[key[si]]])
    s_last = s_last[f_of_key[key[s_last]] >= 0]
    if s_last.size == 0:
        return empty("flows"), backward_tid, hidden, hidden_s, no_id
    # rows in the order each key first appears, start or end (the original's flow dict, reference-2 §2.1): a
    # trace whose device events come first, grouped by stream, lists an op's kernels in that order
    first = np.full(int(key.max()) + 1, key.size, dtype=np.int64)
    np.minimum.at(first, key, np.arange(key.size))
    s_last = s_last[np.argsort(first[key[s_last]], kind="stable")]
    f_pair = f_of_key[key[s_last]]
    gs, gf = sel[s_last], sel[f_pair]
    return frame("flows", {
        "id": object_array(list(map(str, raw[s_last]))) if ints else ids[s_last], "cat": c["cat"][gs],
        "s_ts": c["ts"][gs], "s_pid": c["pid"][gs], "s_tid": c["tid"][gs],
        "f_ts": c["ts"][gf], "f_pid": c["pid"][gf], "f_tid": c["tid"][gf],
    }), backward_tid, hidden, hidden_s, no_id


def _args_rows(c: dict[str, np.ndarray], hw_pid: int | None, hccl_pid: int | None,
               opts: Options) -> dict[str, tuple[np.ndarray, type | None]]:
    """The rows of ``_select``'s columns of the tables that read args, with the args struct each decodes (None: no
    args read), in the tables' order: host operators (args only for the comparators that show them), device tasks,
    HCCL events (none where the lane is not found) and the task queue."""
    is_x = c["ph"] == PH_X
    none = np.arange(0)
    return {"ops": (np.flatnonzero(_cat_is(c, "cpu_op")), _OpArgs if opts.any_detail() else None),
            "kernels": (np.flatnonzero(is_x & (c["pid"] == hw_pid)) if hw_pid is not None else none, _TaskArgs),
            "comm": (np.flatnonzero(is_x & (c["pid"] == hccl_pid)) if hccl_pid is not None else none, _CommArgs),
            "queue": (np.flatnonzero(_cat_is(c, "enqueue", "dequeue")), _QueueArgs)}


def _device_task_notes(path: str, c: dict[str, Any], is_x: np.ndarray, hw_pid: int | None, hccl_pid: int | None,
                       warnings: list[str]) -> None:
    """Say the damage among the complete events of the Ascend Hardware and HCCL lanes (``_select``'s columns ``c``;
    ``is_x``: its complete events) that changes figures unsaid: tasks written twice, a task hidden by a later one of
    the same lane and start, tasks without a name."""
    lanes = [p for p in (hw_pid, hccl_pid) if p is not None]
    if not lanes:
        return
    sel = np.flatnonzero(is_x & _among(c["pid"], lanes))
    cols = [c[k][sel] for k in ("ts", "pid", "tid", "dur", "name")]
    tied = _tied(cols[0])  # rows whose start another row shares
    # tasks of one lane and start are few (NPU pair 1: none of its 596 tied of 835): where none are, no task
    # repeats or hides another, told without hashing the names (0.16 -> 0.07 ms a side)
    repeated = repeats(cols, tied) if (lane_ties := repeats(cols[:3], tied)) else 0
    # a different task at an Ascend Hardware lane and start another holds: the original keys device tasks by
    # "pid-tid-ts", as the flows' ends find them, so the last hides the others (read so here too), unsaid
    hw = tied[cols[1][tied] == hw_pid] if hw_pid is not None and lane_ties else tied[:0]
    hidden = repeats(cols[:3], hw)
    if hidden and (hidden := hidden - repeats(cols, hw)):
        # the count is of the tasks hidden (each tie's distinct tasks but the last): of two, one
        warnings.append(f"{path}: {hidden:,} device task(s) on the Ascend Hardware lanes are hidden by a later, "
                        "different task of the same lane and start: the original keys a task by lane and start, "
                        "and so do we (the flows ending there link only the last to operators; Lccl and SDMA Time "
                        "count only it).")
    if repeated:
        warnings.append(_repeats_note(path, repeated, "device task(s) on the Ascend Hardware / HCCL lanes",
                                      "lane, start, duration and name", "task"))
    # a task without a name (the key lost: read as "") is held by no figure that goes by name: the HCCL planes'
    # Notify_Wait tasks are the Wait time, so the MindSpore timeline's Wait read 34.2 ms -> 0 unsaid (msfuzz62)
    if c["blank_names"] and (nameless := int(np.count_nonzero(cols[4] == ""))):
        warnings.append(traceio.nameless_note(
            path, [f"{traceio.counted(nameless, 'device tasks')} on the Ascend Hardware / HCCL lanes"],
            f"no figure that goes by name holds {'it' if nameless == 1 else 'them'} (an HCCL plane's Notify_Wait "
            "tasks are its Wait time; kernels and communication rows are keyed by name)"))


def _decoded_args(path: str, raws: np.ndarray, struct: type) -> Any:
    """``traceio.decode_args`` of a table's args; the HCCL tasks' (``_CommArgs``) as ``_comm_args``."""
    if struct is _CommArgs:
        return _comm_args(path, raws)
    return traceio.decode_args(path, raws, struct)


def _comm_args(path: str, raws: np.ndarray) -> tuple[list, list[bytes | list[bytes]]]:
    """The HCCL tasks' args, decoded: (their task types, their rank texts per args batch) for ``_comm`` and
    ``_rank_span``. The rank fields are ``msgspec.Raw`` views into their whole batch's text, so a batch whose
    structs were kept lived to the tables' end (a 1 GB trace's 158k HCCL tasks: +29 MiB, at the load's peak): no
    struct is kept. A batch's ranks (src, dst of each task, in order) are one text of them joined by commas where
    each is a plain integer or null (``_PLAIN_RANKS``: one copy, parsed in one call), else each one's text, copied
    out (the per-value path of ``_rank_span``). Copying both texts of every task and reading them again took
    ~0.4 us a task (NPU pair 1: 0.25 ms of a compare)."""
    types: list = []
    ranks: list[bytes | list[bytes]] = []

    def take(batch: list) -> None:
        types.extend(map(attrgetter("task_type"), batch))
        texts = list(chain.from_iterable(map(attrgetter("src_rank", "dst_rank"), batch)))
        joined = b",".join(texts)
        ranks.append(joined if _PLAIN_RANKS.fullmatch(joined) else list(map(bytes, texts)))

    traceio.decode_args(path, raws, _CommArgs, take)
    return types, ranks


def _trace_tables(path: str, handed: list[bytes], opts: Options) -> dict[str, Any]:
    """Decode trace_view.json (its bytes ``handed`` over in a one-item list, emptied here: no frame above keeps them
    to the end of the tables) once and build the trace tables the enabled comparators read: the ``Profile``
    fields they fill, by name, with the decode's ``warnings`` and ``extra``. A table not built here (no lane, no
    rows, a comparator off) is left out, and the ``Profile`` built from these fields gives it its empty default:
    each default is a copy of a prototype (~10 us), and a Profile built first took nine that were replaced.

    Like the Kineto loader, op args (shapes, call stacks) are decoded only for the comparators that
    show them, python_function rows only for the operator/module comparison and the task queue only
    for the memory comparison: the time breakdown reads none of them.
    """
    data = handed.pop()
    warnings: list[str] = []
    extra: dict[str, Any] = {}
    tables: dict[str, Any] = {"warnings": warnings, "extra": extra}
    kind = traceio.first_char(data)
    if kind == "{":
        raise ProfileError(path, "not an Ascend trace_view.json (top level is an object, expected an event list)")
    data, note = traceio.as_utf8(path, data)
    if note:
        warnings.append(note)
    events, _, data, note = traceio.decode_trace(path, data)
    if note:
        warnings.append(note)
    try:
        c, processes, threads, (hw_pid, hccl_pid, ovl_pid), unnamed = _select(path, data, events, opts, warnings, extra)
    except ProfileError:  # times kept as text: a time the float decode refuses comes before any other error
        if events and type(events[0]) is traceio.RawTimesEvent:
            traceio.check_raw_ts(path, data, events)
        raise
    extra["unnamed_lane_events"] = unnamed
    del events
    # the args each table reads, decoded now, in the tables' order (each table pops its list): their Raw views into
    # the trace's bytes kept the bytes (1.1 GB a side at 1 GB; ``load`` hands them over) and the freed events'
    # allocator arenas alive to the tables' end; decoded here, the values take the freed events' place
    c["args"] = {k: (rows, _decoded_args(path, c["args"][rows], struct) if struct is not None else None)
                 for k, (rows, struct) in _args_rows(c, hw_pid, hccl_pid, opts).items()}
    del data
    ph = c["ph"]
    tables["processes"], tables["threads"] = processes, threads
    is_x = ph == PH_X

    # host operators
    sel, a = c["args"].pop("ops")
    steps = None  # the columns the steps are read from (name, ts, dur), as ``step_range`` reads them: not read back
    if sel.size:
        cols: dict[str, np.ndarray | list[str]] = {
            "name": c["name"][sel], "cat": c["cat"][sel], "ts": c["ts"][sel], "dur": c["dur"][sel],
            "pid": c["pid"][sel], "tid": c["tid"][sel]}
        if opts.any_detail():
            cols.update({
                # an op's input shapes, types and call stack repeat in every step: equal texts as one object
                "input_dims": _shared_arg_texts(a, "input_dims"),
                "input_type": _shared_arg_texts(a, "input_type"),
                "call_stack": _shared_arg_texts(a, "call_stack")})
        else:
            cols["input_dims"] = cols["input_type"] = cols["call_stack"] = object_full(sel.size, "N/A")
        tables["ops"] = frame("ops", cols)
        steps = cols["name"], cols["ts"], cols["dur"]  # not read back from the table (~0.3 ms a compare)
    elif opts.step_given:
        sel = np.flatnonzero(step_marks(c["name"]) & ~np.isin(ph, (PH_M, PH_S, PH_F)))
        steps = c["name"][sel], c["ts"][sel], c["dur"][sel]
        extra["step_marks"] = pd.DataFrame(dict(zip(("name", "ts", "dur"), steps, strict=True)))
    elif OTHER_STEP_MARKS in extra and c["mark_names"]:  # read events so named count too, as in ``step_marks``
        extra[OTHER_STEP_MARKS] |= set(c["name"][step_marks(c["name"]) & ~np.isin(ph, (PH_M, PH_S, PH_F))].tolist())
    if steps is not None:
        warnings.extend(step_notes(path, *steps, selectable=True))
        if c["odd_marks"] and (note := traceio.odd_step_mark_note(path, steps[0], c["odd_marks"],
                                                                  "host events", True)):
            warnings.append(note)

    # device tasks
    if hw_pid is not None:
        sel, a = c["args"].pop("kernels")
        if sel.size:
            tables["kernels"] = frame("kernels", {
                "name": c["name"][sel], "cat": object_full(sel.size, "npu_task"),
                "ts": c["ts"][sel], "dur": c["dur"][sel], "pid": c["pid"][sel], "tid": c["tid"][sel],
                "stream": traceio.checked_ints(path, [x.stream for x in a], traceio.STREAM_ID, warnings),
                "task_type": _arg_texts(_field(a, "task_type")),
                "task_id": traceio.checked_ints(path, [x.task_id for x in a], _TASK_ID, warnings),
            })

    _device_task_notes(path, c, is_x, hw_pid, hccl_pid, warnings)
    tables["flows"], tables["backward_tid"], hidden, hidden_s, no_id = _flows(c)
    if hidden:
        warnings.append(f"{path}: {hidden:,} flow end(s) (async_npu, fwdbwd) are followed by another end of the same "
                        "id at another task; the last end is read, as in the original, so the op or forward op of "
                        "that id links only to the last one's task")
    if hidden_s:
        warnings.append(f"{path}: {hidden_s:,} flow start(s) (async_npu, fwdbwd) are followed by another start of the "
                        "same id at another op; the last start is read, as in the original, so the earlier op or "
                        "forward op of that id links to no task")
    if no_id:
        warnings.append(f"{path}: {no_id:,} flow event(s) (async_npu, fwdbwd) have no id; they pair with no other, so "
                        "the op or forward op of such a flow links to no task")
    if note := _renamed_flow_note(path, c):
        warnings.append(note)
        extra["renamed_flow_cats"] = c["renamed_flows"][0]
    tables["comm"], tables["rank_span"] = _comm(path, c, hccl_pid, threads, warnings)

    if ovl_pid is not None:
        sel = np.flatnonzero(is_x & (c["pid"] == ovl_pid))
        if sel.size:
            tables["overlap"] = frame("overlap", {"name": c["name"][sel], "ts": c["ts"][sel],
                                                  "dur": c["dur"][sel], "tid": c["tid"][sel]})
            if note := _overlapping_spans(path, c["name"][sel], c["ts"][sel], c["dur"][sel]):
                warnings.append(note)
            if note := _unknown_spans(path, c["name"][sel]):
                warnings.append(note)

    # _select kept these categories only for the comparators that read them (``_wanted_cats``)
    sel, a = c["args"].pop("queue")
    if sel.size:
        corr = traceio.checked_ints(path, [x.correlation_id for x in a], _CORRELATION_ID, warnings)
        if unpaired := int(np.count_nonzero(corr == -1)):  # as the DB loader says its queue rows of no id
            warnings.append(f"{path}: {unpaired:,} enqueue / dequeue event(s) have no correlation_id; they pair with "
                            "no other, so a memory block CANN allocated in such a dequeue is placed at time 0, under "
                            "no operator")
        tables["queue"] = frame("queue", {"cat": c["cat_names"][c["cat_code"][sel]], "name": c["name"][sel],
                                          "ts": c["ts"][sel], "dur": c["dur"][sel], "tid": c["tid"][sel],
                                          "correlation_id": corr})

    sel = np.flatnonzero(_cat_is(c, "python_function"))
    # a ProfilerStep#N of cat python_function whose step no cpu_op marks: no step, so the step count check read
    # none without a word. From the Python functions' table where it is read (only the trace's distinct names are
    # looked at until such a marker is found), else from the marker names ``_select`` kept of them, alone
    named = extra.pop("python_marks", None) or []
    python, marks = (c["name"][sel], c["mark_names"]) if sel.size else (object_array(named), named)
    if sel.size:
        tables["python_functions"] = frame("python_functions", {
            "name": python, "ts": c["ts"][sel], "dur": c["dur"][sel], "tid": c["tid"][sel]})
    if marks and (found := traceio.python_step_marks(python, marks,
                                                     lambda: () if steps is None else steps[0].tolist())):
        warnings.append(traceio.python_step_mark_text(path, found, "cpu_op"))
        extra[PYTHON_STEP_MARKS] = found  # a step refused says them
    if c["blank_names"] and (n := int(np.count_nonzero(is_x & (c["name"] == "") & _cat_is(c, *HOST_CATS)))):
        # torch_npu names every host event: one without a name (a damaged trace) was read as an operator named ""
        # or, a python_function, as no module, its children moved to the module around it, without a word. The
        # categories named are those read (``_wanted_cats``): enqueue / dequeue only with the memory comparison
        read = _wanted_cats(opts)
        warnings.append(traceio.nameless_note(
            path, [f"{traceio.counted(n, 'host events')} ({', '.join(k for k in HOST_CATS if k in read)})"],
            "such an operator is listed under that name and such a python_function marks no module"))
    # host events written again (a trace joined from two copies) double their calls and times, as device tasks do
    host = np.flatnonzero(is_x & _cat_is(c, "cpu_op", "python_function"))
    # only the rows that share a start are taken out of the columns: none, as a rule (~0.03 ms a side)
    if host.size and (repeated := repeats([c[k] for k in ("ts", "pid", "tid", "dur", "name", "cat_code")],
                                          host[_tied(c["ts"][host])])):
        warnings.append(_repeats_note(path, repeated, "host event(s) (cpu_op, python_function)",
                                      "thread, start, duration, name and category", "event",
                                      " (ApiCompare, the operator and module sheets)"))
    extra["hccl_pid"] = hccl_pid
    return tables


# --------------------------------------------------------------------------- side files


#: The longest first line a CSV may have (a header of ~100 columns is ~2 KB): more is no header.
MAX_HEADER_BYTES = 1 << 20


#: CSVs up to this size are read into memory once, and the header, the last-row check and pandas all
#: work on those bytes; a larger one is probed at both ends (64 KiB each) and streamed by pandas, which
#: keeps its peak memory at the parsed columns instead of the file plus the columns.
WHOLE_CSV_BYTES = 16 << 20

#: CSVs held in memory up to this size are parsed in one go (``low_memory=False``): pandas parses at least 2**19
#: fields a chunk, which a file this small cannot exceed (a field takes at least one byte with its separator), so
#: it came in one chunk anyway, and one go skips concatenating that chunk's columns (~80 us of NPU pair 1's
#: kernel_details.csv, ~20 us of its memory_record.csv); larger files keep the chunks, and their peak memory.
ONE_CHUNK_BYTES = 1 << 19


def _csv_bytes(path: str) -> bytes | None:
    """The whole file when it is small enough to hold (``WHOLE_CSV_BYTES``), else None."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > WHOLE_CSV_BYTES:
                return None
            return fh.read()
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None


#: A CSV header up to its line end (group 1: CR, LF or CRLF, as pandas reads line ends): fields split at commas,
#: a quote opening a quoted field only as the field's first character (its line breaks and commas are the name's,
#: ``""`` a quote in it), as pandas and Python's csv read it; one anywhere else is a character of the name.
#: After a quoted field's closing quote the rest of the field starts with no quote, so no text matches two ways
#: (no backtracking that grows with the header).
_FIELD = rb'(?:"[^"]*(?:""[^"]*)*"(?:[^",\r\n][^,\r\n]*)?|[^",\r\n][^,\r\n]*)?'
_HEADER_TO_END = re.compile(rb"(?:\xef\xbb\xbf)?" + _FIELD + rb"(?:," + _FIELD + rb")*(\r\n?|\n)")


def _header_end(data: bytes) -> tuple[int, int] | None:
    """Where the header's line end starts and ends (``_HEADER_TO_END``): the first outside a quoted field, None
    where there is none. Cut at the first line end, a quoted name holding one ("Ty<CR>pe") lost every column after
    it: "missing required column(s)" named columns plainly there, or optional ones read as absent. A quote inside
    an unquoted name (``Ty"pe``, which pandas reads as written) opens nothing: counted as one, it took the header
    on over the rows, refused as "new-line character seen in unquoted field" (or, held, "no line end in the first
    1048576 bytes") where the file was read before."""
    m = _HEADER_TO_END.match(data)
    return m.span(1) if m else None


def _header_line(path: str, data: bytes | None) -> tuple[bytes, bool]:
    """The bytes before the header's line end (``_header_end``) and whether one was found; reads only as far as
    that line end when the file is not in memory."""
    if data is not None:
        end = _header_end(data[:MAX_HEADER_BYTES + 1])
        if end is None and len(data) > MAX_HEADER_BYTES:
            raise ProfileError(path, f"malformed CSV header: no line end in the first {MAX_HEADER_BYTES} bytes")
        return (data[:end[0]] if end else data), end is not None
    head = b""
    try:
        with open(path, "rb") as fh:
            while True:
                chunk = fh.read(65536)
                head += chunk
                end = _header_end(head)
                # also where this read holds the line end: the cap is on the line
                if (end[0] if end else len(head)) > MAX_HEADER_BYTES:
                    raise ProfileError(path, f"malformed CSV header: no line end in the first "
                                             f"{MAX_HEADER_BYTES} bytes")
                if end or not chunk:
                    break
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None
    return (head[:end[0]] if end else head), end is not None


def _header(path: str, data: bytes | None = None) -> list[str]:
    """The column names of a CSV as written. Empty or undecodable -> ProfileError."""
    first, ended = _header_line(path, data)
    if not first and not ended:
        raise ProfileError(path, "empty file")
    traceio.refuse_utf16(path, first, "the profiler's CSVs are UTF-8")
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ProfileError(path, f"not a UTF-8 CSV: {exc}") from None
    if not text.strip():
        raise ProfileError(path, "empty file (no header line)")
    # Python 3.10's csv refuses a NUL ("line contains NUL") where 3.11 reads it: a stand-in keeps a damaged
    # name's NUL for the caller to name, on every supported Python
    nul = "\0" in text
    try:
        names = next(csv.reader([text.replace("\0", "\uffff") if nul else text]))
    except csv.Error as exc:
        raise ProfileError(path, f"malformed CSV header: {exc}") from None
    return [n.replace("\uffff", "\0") for n in names] if nul else names


def _tail(path: str, data: bytes | None) -> tuple[bytes, int]:
    """The last 64 KB of a CSV (held in ``data`` or read from ``path``), and the offset they start at."""
    if data is not None:
        start = max(0, len(data) - 65536)
        return data[start:], start
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - 65536)
            fh.seek(start)
            return fh.read(), start
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None


def _check_last_row(path: str, n_cols: int, data: bytes | None = None) -> None:
    """A CSV cut short (an interrupted copy, a full disk) usually ends inside a row; pandas would read
    its missing cells as empty and the rows after the cut would be gone without a word. An export ends
    with a line break, or at least with a whole last row. (A cut inside the last field of a row leaves
    every field present and cannot be told from a complete file.)"""
    tail, start = _tail(path, data)
    # a line end of any kind: a bare CR ends a line too, as pandas reads it (a short last row ending in one was
    # refused as having "no line end", where one ending in LF is read and said by ``_short_rows``)
    if not tail or tail.endswith((b"\n", b"\r")):
        return
    # the whole tail, not just its last line: a quoted field may hold line breaks
    text = _counted_text(tail, start)
    fields = _last_fields(text)
    if len(fields) < n_cols and not _stray_quote(text, fields):
        raise ProfileError(path, f"truncated: the last row has {len(fields)} of {n_cols} fields and no line end")


def _counted_text(tail: bytes, start: int) -> str:
    """A CSV tail (``_tail``) as text whose fields are only counted, from a line start inside the window where it
    starts past the file's first byte. Python 3.10's csv raises "line contains NUL" (3.11 reads it), which escaped
    the cut checks as a traceback on a damaged file; a NUL, no delimiter or quote, is replaced."""
    if start:
        tail = tail[tail.find(b"\n") + 1:]
    return tail.decode("utf-8", "replace").replace("\0", "\uffff")


def _last_fields(text: str) -> list[str]:
    """The last row's fields of ``text`` (``_counted_text``), as Python's csv reads them."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return rows[-1] if rows else []


def _ends_open(text: str) -> bool:
    """Whether ``text`` (``_counted_text``) ends inside a quoted field, as Python's csv reads it."""
    try:
        for _ in csv.reader(io.StringIO(text, newline=""), strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def _stray_quote(text: str, fields: list[str]) -> bool:
    """Whether the last row (``fields``, of ``text``) ends in a quoted field left open that runs over whole lines
    (line breaks before its trailing ones): a stray quote in a row further up, as no cell of an export holds a line
    break, not a cut, which leaves the field's start and at most a line break after it. Said "truncated: the last
    row has 2 of 15 fields", a whole file sent the user to a whole last row; pandas' line ("EOF inside string
    starting at row 5") names the row the quote opens in."""
    inside = fields[-1].rstrip("\r\n") if fields else ""
    return ("\n" in inside or "\r" in inside) and _ends_open(text)


def _check_open_quote(path: str, n_cols: int, data: bytes | None) -> None:
    """A CSV cut inside a quoted field (an interrupted copy: kernel_details.csv quotes its shapes) whose cut ends
    in a line break, which ``_check_last_row`` takes for a whole last row: pandas then fails with "EOF inside
    string", a parser's line that did not say the file was cut. Called on that failure alone (no cost to a good
    read); the last row's fields are counted as ``_check_last_row`` counts them, the open field among them. A
    quote opened before the 64 KB window looked at (a stray quote early in a large file) leaves the window parsing
    whole, and one opened inside it leaves an open field spanning lines: either way pandas' line, which names the
    row the quote opens in, stays."""
    text = _counted_text(*_tail(path, data))
    if not _ends_open(text):
        return
    fields = _last_fields(text)
    if _stray_quote(text, fields):
        return
    raise ProfileError(path, f"truncated: the last row has {len(fields)} of {n_cols} fields and ends inside a "
                             "quoted field (a quote opened and never closed)")


def _short_rows(data: bytes, last: int, lines: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> int:
    """How many data rows of a CSV held in memory have no field ``last`` (0-based): a row cut short in the middle
    of a file, which ``_check_last_row`` does not see. A file streamed from disk (over ``WHOLE_CSV_BYTES``) is not
    checked. ``lines``: the file's ``_line_commas``, where the caller has them."""
    commas, blank, _ends = _line_commas(data) if lines is None else lines
    short = (commas < last) & ~blank
    return int(short[1:].sum())  # the header is line 0


def _line_commas(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line of a CSV held in memory: its separators outside quotes, whether it is blank (pandas skips it), and
    the offset of its end. Vectorised over the bytes: separators inside quotes (an even count of quotes before
    them keeps them outside) are left out. A bare CR (one no LF follows) ends a line too, as pandas reads it: a
    file of old Mac line ends (read since ``f71ef4f``) was one line, its short rows unsaid."""
    u = np.frombuffer(data, dtype=np.uint8)
    sep = np.flatnonzero((u == 44) | (u == 10))
    if (bare := _bare_crs(data, u)).size:
        sep = np.sort(np.concatenate((sep, bare)))
    sep = _unquoted(u, sep)
    is_nl = u[sep] != 44
    nl = np.flatnonzero(is_nl)
    if nl.size == 0:  # one line: the header (or a file of one row), no data row to count
        return np.array([sep.size], np.intp), np.zeros(1, bool), np.array([u.size])
    ends = sep[nl]
    # each line's separators: those between its line end and the previous one (the last line runs to the end)
    commas = np.diff(np.concatenate(([-1], nl, [sep.size]))) - 1
    starts = np.concatenate(([0], ends + 1))
    stops = np.concatenate((ends, [u.size]))
    length = stops - starts
    blank = (length == 0) | ((length == 1) & (u[np.minimum(starts, u.size - 1)] == 13))
    return commas, blank, stops


def _unquoted_commas(data: bytes) -> int:
    """The separators of a CSV held in memory that lie outside quoted fields, counted at the cost of two byte
    comparisons and, where the file quotes a field, a lookup per quote (~4 ms for the 825 KB kernel_details.csv
    of msinsight's st/level2 rank 0 on a busy machine, whose read took ~14 ms idle; a file without a quote, such
    as memory_record.csv, one count). ``_long_rows`` compares it with what the rows read need."""
    u = np.frombuffer(data, dtype=np.uint8)
    is_comma = u == 44
    if b'"' not in data:
        return int(np.count_nonzero(is_comma))
    quotes = np.flatnonzero(u == 34)
    # where no quoted field (an open one runs to the end) is over 255 bytes, its separators are summed as bytes
    # between its quotes, without the place of every separator (kernel_details.csv's ~45 a row): ~60 against
    # ~95 us for NPU pair 1's 66 KB file
    if (np.append(quotes[1:], u.size)[0::2] - quotes[0::2]).max() <= 255:
        return int(np.count_nonzero(is_comma)) - int(np.add.reduceat(is_comma.view(np.uint8), quotes)[0::2].sum())
    comma = np.flatnonzero(is_comma)
    lo, hi = quotes[0::2], quotes[1::2]
    if hi.size < lo.size:  # a quote left open runs to the end
        hi = np.append(hi, u.size)
    return comma.size - int((np.searchsorted(comma, hi) - np.searchsorted(comma, lo)).sum())


def _long_rows(data: bytes, rows: int, n_cols: int,
               lines: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple[int, int]:
    """How many data rows of a CSV held in memory have more fields than the header's ``n_cols``, their extra fields
    not all empty, and the first one's data row (1-based); (0, 0) for none. pandas, read with ``usecols``, drops
    the extra field without a word and reads each cell after it from the column before it: an unquoted comma in a
    name (a MatMulV2's Input Data Types "FLOAT,FLOAT" moved it from Cube to Vector, its aic_mac_time(us) reading
    aic_total_cycles). The separators of a file whose ``rows`` rows (and header) each hold ``n_cols`` fields are
    counted first; only a file with more is looked at line by line. A trailing comma (an empty field past the
    header on every row, as some writers end a row) moves no cell and is not counted. A row cut short elsewhere
    can hide a long one from the count: two damages at once. ``lines``: the file's ``_line_commas``, where the
    short-row check made them (their counts add up to that count: no second scan of the bytes)."""
    if (_unquoted_commas(data) if lines is None else int(lines[0].sum())) <= (rows + 1) * (n_cols - 1):
        return 0, 0
    commas, blank, stops = _line_commas(data) if lines is None else lines
    data_line = np.flatnonzero(~blank)[1:]  # the header is the first non-blank line
    extra = commas[data_line] - (n_cols - 1)
    ends = stops[data_line]
    u = np.frombuffer(data, dtype=np.uint8)
    last = np.maximum(ends - 1, 0)
    last = np.where(u[last] == 13, np.maximum(last - 1, 0), last)  # a CRLF line's CR
    # one extra field, empty: the row ends in the comma (a trailing comma); more than one is looked at alone
    long = np.flatnonzero((extra > 1) | ((extra == 1) & (u[last] != 44)))
    keep = [k for k in long.tolist() if extra[k] == 1 or not
            data[max(int(ends[k]) - int(extra[k]) - 1, 0):int(ends[k])].rstrip(b"\r").endswith(b"," * int(extra[k]))]
    return len(keep), (keep[0] + 1 if keep else 0)


def _unquoted(u: np.ndarray, sep: np.ndarray) -> np.ndarray:
    """The separator places ``sep`` (sorted byte offsets into ``u``) that are outside quoted fields."""
    quotes = np.flatnonzero(u == 34)
    if not quotes.size or not sep.size:
        return sep
    # a separator is inside a field where an odd count of quotes precedes it: between an opening quote and the
    # next one. The quotes' places among the separators mark those spans (one lookup per quote, not one per
    # separator: a CSV has a few quoted fields and ~60 separators a row); an unclosed quote runs to the end
    lo = np.searchsorted(sep, quotes[0::2])
    hi = np.searchsorted(sep, quotes[1::2])
    if hi.size < lo.size:
        hi = np.append(hi, sep.size)
    inside = np.cumsum(np.bincount(lo, minlength=sep.size + 1) - np.bincount(hi, minlength=sep.size + 1))
    return sep[inside[:sep.size] == 0]


def _bare_crs(data: bytes, u: np.ndarray) -> np.ndarray:
    """The offsets of the bare CRs (those no LF follows) of a CSV held in memory (``u``: its bytes): pandas reads
    each as a line end, as an LF, so a file of old Mac line ends (read since ``f71ef4f``) has its lines there.
    Looked for only where the file holds a CR (one memchr: an LF file has none) and its CRs outnumber its CRLF
    pairs (``_bare_cr_count``: a CRLF file's CRs are each followed by their line's LF)."""
    if b"\r" not in data or not _bare_cr_count(u):
        return np.zeros(0, dtype=np.intp)
    cr = np.flatnonzero(u == 13)
    return cr[u[np.minimum(cr + 1, u.size - 1)] != 10]


def _bare_cr_count(u: np.ndarray) -> int:
    """How many bare CRs a CSV held in memory (``u``: its bytes) holds: its CRs less its CRLF pairs, counted as
    16-bit words at even and odd offsets. A CRLF file holds none as a rule: three vectorised counts (~0.08 ms for
    825 KB) where finding its CRs (``np.flatnonzero``) took ~0.4 ms."""
    pairs = sum(int(np.count_nonzero(u[at:at + (u.size - at) // 2 * 2].view("<u2") == 0x0A0D)) for at in (0, 1))
    return int(np.count_nonzero(u == 13)) - pairs


def _joined_lines(data: bytes, rows: int) -> int:
    """How many lines of a CSV held in memory were read as part of an earlier row: the non-blank lines (pandas
    skips blank ones) beyond the header and the ``rows`` data rows read. A line break inside a quoted field joins
    lines, and a quote left open (a damaged or hand-edited file) joins every line up to the next quote into one
    row, whose cells then read wrong or not at all; no export writes a line break in the fields read. Only a file
    with more line breaks than rows is scanned (one vectorised count otherwise: ~0.25 ms for the 825 KB
    kernel_details.csv of msinsight's st/level2 rank 0, whose read takes ~21 ms; bytes.count took twice that).
    Bare CRs (``_bare_crs``) count as line ends too, wherever they stand, as pandas reads them: a file of old Mac
    line ends had no LF to count, and a stray one in an LF or CRLF file made a row pandas read from no counted line,
    hiding a joined one."""
    u = np.frombuffer(data, dtype=np.uint8)
    bare = _bare_crs(data, u)
    # u == 10 made twice, in the rare file scanned: one kept across ``_bare_crs`` had its temporaries, as large,
    # page-faulted afresh (a CRLF file of 825 KB: 0.15 -> 1.4 ms)
    if np.count_nonzero(u == 10) + bare.size <= rows + 1:
        return 0
    nl = np.flatnonzero(u == 10)
    if bare.size:
        nl = np.sort(np.concatenate((nl, bare)))
    starts = np.concatenate(([0], nl + 1))
    length = np.concatenate((nl, [u.size])) - starts
    blank = (length == 0) | ((length == 1) & (u[np.minimum(starts, u.size - 1)] == 13))
    return max(int(np.count_nonzero(~blank)) - 1 - rows, 0)


#: A decimal number in ASCII, exponent allowed, or an infinity: what a time cell may hold besides a plain decimal.
_NUMBER_TEXT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?)", re.IGNORECASE | re.ASCII)

#: Cells read as "no number" in float columns.
_NA_TEXTS = frozenset(("", "N/A", "n/a", "NA", "nan", "NaN"))


#: column -> the name an older export gives it: torch_npu's first kernel_details.csv (2023, before csv_headers.py)
#: wrote the start time as ``Start Time`` (CANN's op_summary ``Task Start Time``, in us, later ``Task Start Time(us)``)
_COLUMN_ALIASES = {"Start Time(us)": "Start Time"}


def _read_csv(path: str, text: tuple[str, ...], floats: tuple[str, ...], required: tuple[str, ...],
              warnings: list[str], cased: tuple[str, ...] = (), said: dict[str, int] | None = None
              ) -> dict[str, np.ndarray]:
    """Read the wanted columns of a CSV, as numpy arrays by their names in ``text`` / ``floats``, in the file's
    column order (every reader here takes the columns apart and builds its own table: a DataFrame of them would
    be built only to be taken apart). ``text`` as Python str in object columns ("" when empty; pandas 3's
    ``str`` dtype would check and copy every cell, and every reader here wants object arrays), ``floats`` as float64
    (NaN for ""/N/A; other junk is NaN too, counted in one line of ``warnings``). Column names
    are matched without surrounding blanks. Columns the file lacks are left out; a missing
    ``required`` column, an empty file or a malformed one raises ``ProfileError``. ``cased``: optional names of one
    column a figure of the run reads, said in ``warnings`` where the header has it in another case alone.
    ``said``: where given, gets what the warnings counted of the missing cells, so a reader saying its own blank
    cells says none twice: ``"short"`` the rows cut before the last column read, and each float column's name its
    cells of text that is no number.
    """
    data = _csv_bytes(path)
    if data is not None:  # torch_npu writes in the locale's encoding (traceio.as_utf8)
        data, note = traceio.as_utf8(path, data)
        if note:
            warnings.append(note)
    header = _header(path, data)
    raw = _header_names(path, header, required, warnings, cased)
    _check_last_row(path, len(header), data)

    names = [c for c in text + floats if c in raw]
    if len(raw) < len(header):  # a column written twice (a file joined side by side, an edited header)
        stripped = [h.strip() for h in header]
        twice = [f"{raw[c]!r} ({stripped.count(raw[c].strip())} times)" for c in names
                 if stripped.count(raw[c].strip()) > 1]
        if twice:
            warnings.append(f"{path}: column(s) named more than once: {', '.join(twice)}; the first of each is "
                            "read")
    # dtype objects, not the types: pandas turns each type given into a dtype several times a read, each time
    # inside a ``warnings.catch_warnings`` (~0.15 ms of a kernel_details.csv read)
    dtype = {raw[c]: _OBJECT for c in text if c in raw}
    dtype.update({raw[c]: _FLOAT for c in floats if c in raw})
    na = {raw[c]: list(_NA_TEXTS) for c in floats if c in raw}
    usecols = [raw[c] for c in names]
    # the last column read, where it holds numbers, is read first with an empty cell as no number: pandas then
    # fails on a row cut short before it (its cell missing) and on an empty cell, so a read that succeeds proves
    # every row whole up to it, and the rows' damage check need not count each line's separators to find a cut
    # one (kernel_details.csv's last PMU column holds N/A, no empty cell: ~0.15 ms a side). A file with such a
    # cell is read again as it always was
    last = max(usecols, key=header.index) if usecols else None
    strict = {**na, last: [t for t in na[last] if t]} if data is not None and last in na else None

    def parse(na: dict = na, coerce: bool = True) -> tuple[dict[str, np.ndarray], dict[str, int]]:
        if data is None:  # streamed from disk
            return _parse_csv(lambda: path, {"encoding": "utf-8-sig"}, usecols, dtype, na, floats, raw)
        held = data
        try:
            # bytes held here are UTF-8 already (``as_utf8``), so pandas' C parser reads them as they are, the BOM
            # cut off; told "utf-8-sig", pandas decodes them through a Python text wrapper and encodes them back
            # for that parser (~60 us of a 200-row kernel_details.csv, ~5 ms of a 13 MB one)
            return _parse_csv(lambda: io.BytesIO(held.removeprefix(codecs.BOM_UTF8)),
                              {"encoding": "utf-8", "low_memory": len(held) > ONE_CHUNK_BYTES},
                              usecols, dtype, na, floats, raw, coerce)
        except UnicodeDecodeError:  # not UTF-8 after all: the error as the text wrapper words it (its positions)
            if not coerce:
                raise
            return _parse_csv(lambda: io.BytesIO(held), {"encoding": "utf-8-sig"}, usecols, dtype, na, floats, raw)

    whole = False  # every row has a cell in the last column read, not empty
    if strict is not None:
        try:
            cols, junk = parse(strict, coerce=False)
            whole = True
        except ValueError:  # pandas' ParserError / EmptyDataError, a number column's text, an empty cell: as always
            pass
    try:
        try:
            if not whole:
                cols, junk = parse()
        except UnicodeDecodeError as exc:
            # a file too large to hold up front (WHOLE_CSV_BYTES) written in another encoding: now it is held
            held = _read_all(path) if data is None else data
            data, note = traceio.as_utf8(path, held)
            if data is held:
                raise ProfileError(path, f"malformed CSV: {_first_line(exc)}") from None
            warnings.append(note)
            cols, junk = parse()
    except (pd.errors.ParserError, ValueError, OSError) as exc:  # pandas' ParserError / EmptyDataError: ValueErrors
        if "EOF inside string" in str(exc):
            _check_open_quote(path, len(header), data)
        raise ProfileError(path, f"malformed CSV: {_first_line(exc)}") from None
    if data is not None:
        short = _damaged_rows(path, data, header, usecols, cols, warnings, whole)
        if said is not None:
            said["short"] = short
    if said is not None:
        said.update(junk)
    if junk:  # one line per file, counting what was dropped (a recoverable oddity)
        warnings.append(f"{path}: {sum(junk.values()):,} value(s) that are not numbers in column(s) "
                        f"{', '.join(junk)}; read as missing")
    if len(cols[usecols[0]]) == 0 and required:
        raise ProfileError(path, NO_DATA_ROWS)
    canonical = {raw[c]: c for c in names}
    out = {canonical.get(c, c.strip()): v for c, v in cols.items()}
    for c in floats:
        if c in out and np.isinf(out[c]).any():
            raise ProfileError(path, f"column {c} holds a value that is not finite (inf or out of range)")
    return out


def _header_names(path: str, header: list[str], required: tuple[str, ...], warnings: list[str],
                  cased: tuple[str, ...] = ()) -> dict[str, str]:
    """Each column name of ``header`` without surrounding blanks -> the name as written (the first of names alike
    but for blanks, as pandas reads the first of a repeated name), an older export's alias under today's name
    (``_COLUMN_ALIASES``). A ``required`` column it lacks is an error, naming the columns that differ from it in case
    alone or hold a NUL byte; a NUL byte in an optional column's name is said in ``warnings``, as is a header
    that has none of the names ``cased`` (one optional column's spellings) but one of them in another case."""
    raw: dict[str, str] = {}
    for h in header:
        raw.setdefault(h.strip(), h)
    for name, alias in _COLUMN_ALIASES.items():
        if name not in raw and alias in raw:
            raw[name] = raw[alias]
    missing = [r for r in required if r not in raw]
    # a NUL byte in a column name (a damaged copy): that column matches no name, which said nothing where optional;
    # so a line break in a quoted one (a hand-edited header)
    damaged = ", ".join(repr(h.strip()) for h in header if "\0" in h)
    broken = ", ".join(repr(h.strip()) for h in header if "\r" in h or "\n" in h)
    if missing:
        # a header written in another case (a file edited, or rewritten by a tool that changes case): named, where
        # the error listed every column as missing from a header that visibly holds them
        folded = {r.casefold() for r in missing} | {_COLUMN_ALIASES[r].casefold() for r in missing
                                                      if r in _COLUMN_ALIASES}
        alike = ", ".join(repr(h.strip()) for h in header if h.strip().casefold() in folded)
        hints = [f"column name(s) {damaged} hold a NUL byte: a damaged file?" if damaged else "",
                 f"column name(s) {broken} hold a line break: a damaged or hand-edited header?" if broken else "",
                 f"the header has {alike}: column names are matched with their case" if alike else ""]
        raise ProfileError(path, f"missing required column(s): {', '.join(missing)}",
                           hint="; ".join(h for h in hints if h) or None)
    if damaged:
        warnings.append(f"{path}: column name(s) {damaged} hold a NUL byte (a damaged file?): read as no column")
    if broken:
        warnings.append(f"{path}: column name(s) {broken} hold a line break (a damaged or hand-edited header?): read "
                        "as no column")
    if cased and not any(c in raw for c in cased):
        # kernel_details.csv's "step id": its kernels read as having no step, which the step's warning then blamed
        # on the profiler ("writes them only for a run with a schedule") with the column in plain view
        folded = {c.casefold() for c in cased}
        if seen := list(dict.fromkeys(h.strip() for h in header if h.strip().casefold() in folded)):
            warnings.append(f"{path}: column {' / '.join(map(repr, seen))} read as no column: column names are matched "
                            f"with their case (rename it to {' or '.join(cased)})")
    return raw


def _damaged_rows(path: str, data: bytes, header: list[str], usecols: list[str], cols: dict[str, np.ndarray],
                  warnings: list[str], whole: bool = False) -> int:
    """Say the damage in the rows of a CSV held in memory (``data``; ``cols``: the ``usecols`` pandas read) that
    pandas reads without a word: rows cut short, NUL bytes, lines joined into an earlier row. ``whole``: pandas
    found a cell, not empty, in the last column read on every row (``_read_csv``), so no row is cut short.
    Returns how many rows are cut short."""
    last = max(usecols, key=header.index)
    # pandas reads a cut row's missing cells as empty, without a word; only an empty last cell can be one. The
    # lines' separators, counted for it, serve the long-row check too
    lines = _line_commas(data) if not whole and _any_blank(cols[last]) else None
    if short := _short_rows(data, header.index(last), lines) if lines is not None else 0:
        warnings.append(f"{path}: {short:,} row(s) end before the last column read; their missing cells read as empty")
    long, first = _long_rows(data, len(cols[usecols[0]]), len(header), lines)
    if long:
        warnings.append(f"{path}: {long:,} row(s) have more fields than the header's {len(header)} (an unquoted comma "
                        f"in a name? first: data row {first:,}); in such a row each column after the extra field reads "
                        "the value written for the column before it, so its figures are wrong: quote the field, or "
                        "export again")
    # a NUL in the rows (the header's is named by ``_header_names``): a text cell holding one reads as another name
    # ("A\0I_CORE" is another core type: pandas 2.1+ keeps the NUL, 2.0 cuts the cell at it), a number cell as
    # missing or cut
    # the header's line end outside quotes: bare CR line ends (the check saw no rows there; nor, by the first LF,
    # the rows before a quoted line break), a quoted line break in a name (its NUL is ``_header_names``')
    end = _header_end(data)
    body = end[1] if end else len(data)
    if data.find(_NUL, body) >= 0:  # one memchr
        warnings.append(f"{path}: {data.count(_NUL, body):,} NUL byte(s) in the rows (a damaged copy?); a cell holding "
                        "one reads otherwise than written: a text cell as another name, a number cell as missing or "
                        "cut short at it")
    # a quoted name's line breaks are the header's (said by ``_header_names``), no row's: its lines beyond the
    # first, blank ones aside as ``_joined_lines`` leaves them aside (counting every line end there, a blank line
    # inside a quoted name, "Context<LF><LF>ID", hid a joined line of the rows)
    in_header = sum(1 for line in _LINE_ENDS.split(data[:end[0] if end else body]) if line) - 1
    if joined := _joined_lines(data, len(cols[usecols[0]]) + max(in_header, 0)):
        warnings.append(f"{path}: {joined:,} line(s) read as part of an earlier row (a line break inside a quoted "
                        "field: a quote left open?)")
    return short


def _any_blank(cells: np.ndarray) -> bool:
    """Whether a column read by ``_parse_csv`` has a missing (NaN) or empty cell."""
    if cells.dtype.kind == "f":
        return bool(np.isnan(cells).any())
    return bool(pd.isna(cells).any() or (cells == "").any())


_NUL = b"\0"
#: A line end as pandas reads one: CRLF, LF or a bare CR
_LINE_ENDS = re.compile(rb"\r\n|\r|\n")

#: The dtypes ``_read_csv`` asks pandas for.
_OBJECT, _FLOAT = np.dtype(object), np.dtype(np.float64)


def _csv_columns(source: Callable[[], str | io.BytesIO], **kwargs: Any) -> dict[str, np.ndarray]:
    """``pandas.read_csv(source(), **kwargs)`` as numpy columns by name, in the file's order.

    The columns are taken from pandas' C parser as it hands them to ``read_csv``, which then wraps each in a
    Series and builds a DataFrame over them (with explicit dtypes: ~0.5 ms of the ~1.4 ms read of a
    200-row kernel_details.csv, ~0.25 ms of a memory_record.csv's); the readers here take the columns apart
    at once. Where that inner step is not there or answers another shape (another pandas release; a file
    without data rows, whose empty columns come as Series), the public ``read_csv`` reads it."""
    with pd.read_csv(source(), iterator=True, **kwargs) as reader:
        read = getattr(getattr(reader, "_engine", None), "read", None)
        try:
            got = read() if callable(read) else None
        except TypeError:  # a step of another signature: the public read below (which raises what pandas raises)
            got = None
    if isinstance(got, tuple) and len(got) == 3 and isinstance(got[2], dict) and list(got[1]) == list(got[2]):
        cols = got[2]
        if all(type(v) is np.ndarray and v.ndim == 1 for v in cols.values()) and \
                len({len(v) for v in cols.values()}) <= 1:
            return cols
    df = pd.read_csv(source(), **kwargs)
    return {c: df[c].to_numpy() for c in df.columns}


def _parse_csv(source: Callable[[], str | io.BytesIO], how: dict[str, Any], usecols: list[str], dtype: dict,
               na: dict, floats: tuple[str, ...], raw: dict[str, str],
               coerce: bool = True) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """One pandas read; returns the columns (``_csv_columns``) and the count of non-numbers per float column.
    ``how``: the reader's options for this source (``encoding``, ``low_memory``); ``coerce``: False to raise
    pandas' ValueError where a float column holds text, instead of reading it again as text.
    ``index_col=False``: where the first data row has more fields than the header (a trailing comma), pandas
    would take the first column(s) for a row index and read every column from its left neighbour; the fields
    past the header are ignored instead, as on any later row."""
    try:
        return _csv_columns(source, usecols=usecols, dtype=dtype, keep_default_na=False, na_values=na,
                            skipinitialspace=False, index_col=False, **how), {}
    except UnicodeDecodeError:
        raise
    except ValueError:
        if not coerce:
            raise
    # a float column holds text (rare): parse again with every column as text, coerce junk to NaN
    df = pd.read_csv(source(), usecols=usecols, dtype=object, keep_default_na=False, index_col=False, **how)
    junk: dict[str, int] = {}
    for c in floats:
        if c in raw:
            cells = df[raw[c]].str.strip()
            df[raw[c]] = pd.to_numeric(cells, errors="coerce")
            bad = (df[raw[c]].isna() & ~cells.isin(_NA_TEXTS)).to_numpy(dtype=bool)
            if bad.any():  # pandas < 2.1 coerces a number beyond float64 (1e999) to NaN, not inf: not junk
                over = np.array([_beyond_float(t) for t in cells[bad].tolist()], dtype=bool)
                if over.any():
                    df.loc[np.flatnonzero(bad)[over], raw[c]] = np.inf
                    bad[np.flatnonzero(bad)[over]] = False
            n_bad = int(bad.sum())
            if n_bad:
                junk[c] = n_bad
    return {c: df[c].to_numpy() for c in df.columns}, junk


def _beyond_float(text: object) -> bool:
    """Whether a cell is a decimal number too large for float64 (it reads as inf, not as junk)."""
    return isinstance(text, str) and bool(traceio.NUMBER_TEXT.fullmatch(text)) and math.isinf(float(text))


def _read_all(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _us_times(cells: np.ndarray, column: str, path: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A decimal-us text column (the export pads some with a TAB; ""/N/A when absent): its stripped
    text, its exact int64 ns (0 where there is no number) and which cells were read: a mask, as every
    int64 is some text's time ("-0.001" is -1 ns). A number the fast parser leaves out (an exponent) is
    read exactly; one whose ns overflow int64, or inf, is an error, as in a trace (junk text stays unread
    and is counted by the caller)."""
    texts = [v.strip() for v in cells.tolist()]
    ns, read = lenient_us_to_ns(texts)
    for i in np.flatnonzero(~read).tolist():
        t = texts[i]
        if not _NUMBER_TEXT.fullmatch(t):
            continue  # missing or junk ("N/A", "null", "nan"): the caller counts junk
        try:
            ns[i] = text_us_to_ns(t)
        except NumberError:
            raise ProfileError(path, f"{column} value {t!r} is not a usable time (infinite, or beyond int64 ns)") \
                from None
        read[i] = True
    return texts, ns, read


def _drop_plus(texts: list[str], read: np.ndarray) -> None:
    """Drop the leading ``+`` of the read times in ``texts`` (in place): the memory sheets show a block's times as
    the file writes them (MemoryCompare's Allocated Details), and ``+1736408883694624.810`` is the time
    ``1736408883694624.810`` is; no exporter writes the sign, so one block's times read unlike the others'. One
    C-speed scan where no cell holds a ``+``."""
    if "+" not in "".join(texts):
        return
    for i in np.flatnonzero(read).tolist():
        if texts[i].startswith("+"):
            texts[i] = texts[i][1:]


def _junk_times(texts: list[str], read: np.ndarray) -> int:
    """How many cells ``_us_times`` could not read that are not a "no value" text ("", N/A, ...)."""
    return sum(1 for i in np.flatnonzero(~read).tolist() if texts[i] not in _NA_TEXTS)


#: An exponent-form number: its mantissa's decimals and its exponent (``_rounded_times``).
_EXPONENT_TEXT = re.compile(r"[+-]?\d*(?:\.(\d*))?[eE]([+-]?\d+)", re.ASCII)


def _rounded_times(texts: list[str], read: np.ndarray) -> tuple[np.ndarray, str]:
    """Which read cells of an epoch-time column (us) are written with an exponent and too few digits to give
    the microsecond, and the first of them ("" when none). A spreadsheet that saves a profiler CSV writes
    ``1.69512E+15`` for 1695115378713661.015 (msinsight's published test data held such files): a time off by
    up to hours, which matches no trace event and puts an allocation at another instant: no time at all. Plain
    decimals, and exponent forms whose last digit is a microsecond or finer, are what the profiler writes."""
    rounded = np.zeros(len(texts), dtype=bool)
    joined = "".join(texts)  # one C-speed scan: the usual column holds decimals only
    if "e" not in joined and "E" not in joined:
        return rounded, ""
    for i in np.flatnonzero(read).tolist():
        m = _EXPONENT_TEXT.fullmatch(texts[i])
        if m and int(m.group(2)) > len(m.group(1) or ""):
            rounded[i] = True
    first = np.flatnonzero(rounded)
    return rounded, texts[first[0]] if first.size else ""


def _rounded_note(counts: list[str], example: str) -> str:
    """The words of a ``_rounded_times`` warning, before what the reader does with those cells."""
    return (f"{' and '.join(counts)} value(s) are rounded to coarser than 1 us (e.g. {example!r}: the file was "
            "saved by a spreadsheet?)")


_INT_TEXT = re.compile(r"[+-]?[0-9]+")


def _step_id(text: str) -> int | None:
    """One stripped Step Id cell as an exact int, None when it is no whole number an int64 holds. Digits are
    read exactly (a float64 reads 2**53 + 1 as 2**53, which put two steps' kernels together), other number
    texts (``51.0``) through a float."""
    if _INT_TEXT.fullmatch(text):
        value = int(text) if len(text) < 30 else None  # 30 digits are far beyond int64
    else:
        try:
            f = float(text) if text.isascii() and "_" not in text else float("nan")  # as pandas reads numbers
        except ValueError:
            return None
        value = int(f) if np.isfinite(f) and f == np.floor(f) else None
    return value if value is not None and -(2**63) <= value < 2**63 else None


def _step_ids(texts: list[str], path: str, warnings: list[str] | None, column: str = "Step Id") -> np.ndarray:
    """Step Id cells -> int64, -1 for "no step" (""/N/A). A cell that is no whole number (text, ``50.7``) or is
    negative (a step id counts from 0) is no step either, counted in one warning (``warnings`` None: not said): cut
    to 50 it would put the row into another step."""
    texts = [v.strip() for v in texts]
    read = {t: _step_id(t) for t in set(texts)}  # once per distinct text: a column repeats a few ids
    # a step id below 0 is none either (ProfilerStep#N counts from 0): -1 read as "no step" unsaid, -50 as a step
    # no marker has (found by fuzzing)
    negative = {t for t, v in read.items() if v is not None and v < 0}
    for t in negative:
        read[t] = None
    bad = sum(1 for t in texts if read[t] is None and t not in _NA_TEXTS) if warnings is not None else 0
    if bad:
        n_neg = sum(1 for t in texts if t in negative) if negative else 0
        # a negative id is a whole number: a line counting both kinds names both
        what = ("are negative" if n_neg == bad else "are not whole numbers" if not n_neg
                else f"are negative or not whole numbers ({n_neg:,} negative)")
        warnings.append(f"{path}: {bad:,} {column} value(s) {what}; those rows belong to no step")
    return np.array([-1 if read[t] is None else read[t] for t in texts], dtype=np.int64)


def _floats(texts: list[str], path: str, column: str, warnings: list[str]) -> np.ndarray:
    """Stripped number texts -> float64, NaN for ""/N/A; other junk is NaN too, counted in one warning.
    Only ASCII numbers count, as for the exact ns beside them (float() also takes "1_5" or "１２")."""
    joined = "".join(texts)
    if joined.isascii() and "_" not in joined:
        try:
            return np.array(texts, dtype=np.float64)  # the usual case: every cell a number
        except ValueError:
            pass
    ok = [bool(_NUMBER_TEXT.fullmatch(t)) for t in texts]
    out = pd.to_numeric(pd.Series([t if k else "" for t, k in zip(texts, ok, strict=True)], dtype=object),
                        errors="coerce").to_numpy(dtype=np.float64)
    bad = sum(1 for t, k in zip(texts, ok, strict=True) if not k and t not in _NA_TEXTS)
    if bad:
        warnings.append(f"{path}: {bad:,} {column} value(s) are not numbers; read as missing.")
    return out


#: Bound of a PMU time (us) of kernel_details.csv and of an op_statistic.csv time: the loaders' bound of a
#: duration (a week).
_MAX_PMU_US = MAX_DURATION_NS / 1000


#: What a kernel_details.csv row whose Start Time(us) is not read (or is no epoch time) loses: the start is the key
#: that matches a kernel to the trace.
_UNMATCHED_KERNELS = ("those kernels are not matched (to a launching operator, a device task's Input Shapes or "
                      "C_CORE_SQE tasks).")


def read_kernel_details(path: str, warnings: list[str] | None = None, steps_read: bool = True,
                        types_read: bool = True) -> pd.DataFrame:
    """kernel_details.csv with typed columns and exact ``ts``/``dur`` (see module docstring).

    Non-numeric or negative durations are kept (as NaN / as is) and counted in one line each of ``warnings``.
    ``steps_read``: a figure reads the step column (a step was asked for: the kernel comparisons keep its rows);
    only then are its damaged cells said, as no other figure reads them (a MindSpore export without step markers
    can be given no step at all). ``types_read``: KernelCompare reads the Type column (its groups); only then
    are the kernels of no Type among typed ones said, which it leaves out.
    """
    warnings = [] if warnings is None else warnings
    cols = _read_csv(path, ("Step Id", "Step ID") + KERNEL_TEXT_COLUMNS + ("Start Time(us)", "Duration(us)"),
                     PMU_COLUMNS, KERNEL_REQUIRED, warnings, ("Step Id", "Step ID") if steps_read else ())
    step_col = "Step Id" if "Step Id" in cols else "Step ID" if "Step ID" in cols else None
    out: dict[str, np.ndarray] = {}
    if step_col:
        out["Step Id"] = _step_ids(cols[step_col].tolist(), path, warnings if steps_read else None, step_col)
    else:
        out["Step Id"] = np.full(len(cols["Name"]), -1, np.int64)
    if steps_read and step_col == "Step Id" and "Step ID" in cols:  # both spellings (joined from two exports?)
        differ = int(np.count_nonzero(_step_ids(cols["Step ID"].tolist(), path, []) != out["Step Id"]))
        if differ:
            warnings.append(f"{path}: columns Step Id and Step ID disagree in {differ:,} row(s); Step Id is read "
                            "(those rows' step is its value)")
    for col in KERNEL_TEXT_COLUMNS:
        if col in cols:
            out[col] = np.asarray(cols[col], dtype=object)
    # no export writes a kernel without a Name, by which the time breakdown tells HCCL, SDMA copy, MC2 and
    # TransData kernels: with the names emptied their time moved category without a word (found by fuzzing)
    if n_blank := int(np.count_nonzero(out["Name"] == "")):
        warnings.append(f"{path}: {n_blank:,} kernel(s) with an empty Name; the time breakdown's categories told by "
                        "a kernel's name (HCCL, SDMA copies, MC2, TransData) cannot hold them")
    if types_read and "Type" in out and (n_untyped := _untyped_among_typed(out["Type"])):
        # KernelCompare skips a row of no Type (reference-2 §6.1: a Level0 export writes N/A on every row), so such
        # a kernel among typed ones left its group's calls and time without a word
        warnings.append(f"{path}: {n_untyped:,} kernel(s) with an empty or N/A Type among kernels of a Type (a Level0 "
                        "export writes N/A on every row: a damaged cell?); KernelCompare leaves them out, as the "
                        "original does")
    start, start_ns, start_read = _us_times(cols["Start Time(us)"], "Start Time(us)", path=path)
    rounded, example = _rounded_times(start, start_read)
    if example:
        start_read &= ~rounded
        warnings.append(f"{path}: {_rounded_note([f'{int(rounded.sum()):,} Start Time(us)'], example)}; "
                        f"{_UNMATCHED_KERNELS}")
    # an epoch time of 0 or before is no start an export writes: kept (a time; "-0.001" is -1 ns), said
    no_time = start_read & (start_ns <= 0)
    start_ns[~start_read] = -1  # the documented "no start" of ``ts`` (consumers match starts by equality)
    out["Start Time(us)"] = np.array(start, dtype=object)
    dur_text, dur_ns, _ = _us_times(cols["Duration(us)"], "Duration(us)", path=path)
    dur_us = _floats(dur_text, path, "Duration(us)", warnings)
    if (no_dur := np.isnan(dur_us)).any() and (blank_dur := sum(
            1 for i in np.flatnonzero(no_dur).tolist() if dur_text[i] in _NA_TEXTS)):
        # junk is counted by ``_floats``; an empty or N/A cell read as 0 us took the kernel's time out of its
        # category (Conv, Vector, ...) into Other Computing without a word where KernelCompare was off (an HCCL
        # row's time is read from the trace, not from this file)
        warnings.append(f"{path}: {blank_dur:,} Duration(us) value(s) are empty or N/A (an export writes every "
                        "kernel's duration: a damaged cell?); read as 0 us, so the time breakdown's categories "
                        "count none of those kernels' time (a computing kernel's shows as Other Computing)")
    out["Duration(us)"] = dur_us
    neg = int((dur_us < 0).sum())
    if neg:
        warnings.append(f"{path}: {neg:,} kernel(s) have a negative Duration(us); kept as they are.")
    long = dur_ns > MAX_DURATION_NS
    if long.any():
        warnings.append(f"{path}: {int(long.sum()):,} kernel(s) {LONG_DURATION_TEXT}")
        dur_ns[long] = 0
        dur_us[long] = 0.0
    odd_pmu: dict[str, int] = {}
    for col in PMU_COLUMNS:
        if col in cols:
            out[col] = np.asarray(cols[col], dtype=np.float64)
            # a counter's time below 0 or over a week is no reading: 1e30 us made an MC2 kernel's computing time
            # -9.2e12 ms (its ns wrap int64), -5 us took 5 us off it; 0 is a kernel without that time
            odd = (out[col] < 0) | (out[col] > _MAX_PMU_US)
            if odd.any():
                odd_pmu[col] = int(odd.sum())
                out[col][odd] = 0.0
    if odd_pmu:
        warnings.append(f"{path}: {odd_pmu_note(sum(odd_pmu.values()), ', '.join(odd_pmu))}")
    out["ts"] = start_ns
    out["start_read"] = start_read
    blank = out["Start Time(us)"] == ""
    n_bad = int((~start_read & ~rounded & ~blank).sum())
    if n_bad:
        warnings.append(f"{path}: {n_bad:,} Start Time(us) value(s) are not numbers; {_UNMATCHED_KERNELS}")
    if blank.any():  # no export writes one; unmatched, such a kernel moves to another category
        warnings.append(f"{path}: {int(blank.sum()):,} Start Time(us) value(s) are empty; {_UNMATCHED_KERNELS}")
    if no_time.any():
        warnings.append(f"{path}: {int(no_time.sum()):,} Start Time(us) value(s) are 0 or negative (no epoch time: a "
                        "damaged cell?); kept as times, at which no event of an exported trace starts: "
                        f"{_UNMATCHED_KERNELS}")
    out["dur"] = dur_ns
    traceio.check_ends(path, start_ns, dur_ns, "kernel")
    repeated = _repeated_rows(out)
    if repeated:
        note = repeated_rows_note(repeated, "row(s)", "kernel", "those kernels' time counts")
        warnings.append(f"{path}: {note}.")
    return frame_of(out)


def _untyped_among_typed(types: np.ndarray) -> int:
    """How many Type cells name no type (``names_a_type``: empty, N/A, nan, what KernelCompare skips) where others
    name one; 0 where none or all do. Each distinct text tested once, the rows counted by their codes."""
    codes, uniques = pd.factorize(types)  # a missing cell: code -1
    untyped = np.fromiter((not names_a_type(u) for u in uniques), dtype=bool, count=len(uniques))
    n = int(np.count_nonzero(codes < 0)) + int(np.count_nonzero(untyped[codes[codes >= 0]]))
    return n if n < len(types) else 0


def _repeated_rows(cols: dict[str, np.ndarray]) -> int:
    """How many kernel_details rows repeat an earlier row in every column read: the same kernel written again,
    whose time the breakdown, the kernel comparison and the categories count once per row, as the original does,
    without a word. Only rows sharing a start (``ts``) are compared, by their columns' codes (``pd.factorize``: a
    NaN cell equals a NaN cell), so a file without a shared start costs a pass (a stable sort where the rows are
    out of order; they go by start within a step). 1M rows: 1 ms in order, 0.35 s shuffled, 0.5 s all tied."""
    ts = cols["ts"]
    order = None if (ts[1:] >= ts[:-1]).all() else np.argsort(ts, kind="stable")
    sorted_ts = ts if order is None else ts[order]
    tied = np.flatnonzero(sorted_ts[1:] == sorted_ts[:-1])
    if not tied.size:
        return 0
    mark = np.zeros(ts.size, dtype=bool)
    mark[tied] = mark[tied + 1] = True
    rows = np.flatnonzero(mark)
    if order is not None:
        rows = order[rows]
    return repeats(list(cols.values()), rows[cols["start_read"][rows]])  # a start not read (-1) is no kernel's


def _tied(values: np.ndarray) -> np.ndarray:
    """The rows (ascending) whose value another row shares: ``pd.Index(values).duplicated(keep=False)``'s, told by
    equal neighbours after a stable sort, without pandas' Index and hash table (the device tasks' and host events'
    starts: ~0.02 ms less a call in the load)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    same = ordered[1:] == ordered[:-1]
    out = np.zeros(len(values), dtype=bool)
    out[order[1:][same]] = True
    out[order[:-1][same]] = True
    return np.flatnonzero(out)


#: The error of a CSV whose required columns are there and no row
NO_DATA_ROWS = "no data rows"
#: The hint of a memory_record.csv of a header alone in a run that reads Mem Usage: torch_npu and MindSpore write the
#: file only where memory was recorded (their CSV writers skip empty data), so it is a cut or edited copy, not a run
#: that allocated nothing; the error said what was wrong and no way on
MEMORY_RECORD_HEADER_ONLY = ("torch_npu and MindSpore write memory_record.csv only where memory was recorded, never a "
                             "header alone: a cut or edited copy? Restore it, or move it out of the folder to compare "
                             "without Mem Usage")


def read_memory_record(path: str, warnings: list[str]) -> pd.DataFrame:
    """memory_record.csv: the reserved total (MB) the Mem Usage row needs (its peak) and, where the file has it,
    the ``Component`` of each row (its APP rows, which a DB export's MEMORY_RECORD lacks, make the peak of a text
    export of a run larger than its DB export's: the "NPU export kind" note says by how much). A total below 0
    or over 1 PB is no reading: missing (NaN), counted in one line of ``warnings``, as a DB's; so are empty or N/A
    cells, which no export writes (a row cut short, or a cell of text, is said once, by ``_read_csv``)."""
    said: dict[str, int] = {}
    got = _read_csv(path, ("Component",), ("Total Reserved(MB)",), ("Total Reserved(MB)",), warnings, said=said)
    cells = got["Total Reserved(MB)"]
    mb = np.asarray(cells, dtype=np.float64)
    missing = int(np.count_nonzero(np.isnan(mb)))
    odd = (mb < 0) | (mb > MAX_RESERVED_BYTES / 2**20)
    if odd.any():
        warnings.append(f"{path}: {int(odd.sum()):,} Total Reserved(MB) value(s) negative or over 1 PB; Mem Usage "
                        "leaves them out")
        cells = np.where(odd, np.nan, mb)
    elif len(mb) and missing == len(mb):  # every reading missing: said as such, whatever the cells hold
        warnings.append(f"{path}: none of its {len(mb):,} Total Reserved(MB) value(s) is a number (empty or N/A "
                        "cells); Mem Usage has no reading")
    # an empty or N/A cell among readings was left out of the peak without a word: a peak lower than the run's
    blank = missing - said.get("short", 0) - said.get("Total Reserved(MB)", 0)
    if blank > 0 and missing < len(mb):
        warnings.append(f"{path}: {blank:,} Total Reserved(MB) value(s) are empty or N/A (an export writes a reading "
                        "on every row: a damaged cell?); the peak reserved memory (Mem Usage) leaves those rows out")
    if "Component" in got:
        return frame_of({"Total Reserved(MB)": cells, "Component": got["Component"]})
    return frame_of({"Total Reserved(MB)": cells})


def _checked_side_file(out: str, name: str, force: bool) -> str:
    """The path of side file ``name`` of ``out``, checked (link, owner, permissions, size) where it exists: when a
    run reads it, not up front (reference-1 §2.4 checks every side file first), so a run that does not read one is
    not refused for a link, an owner or a size it never meets."""
    p = os.path.join(out, name)
    if os.path.lexists(p):
        paths.check_input(p, force, kind="text")
    return p


def _peak_memory_record(p: str, profile: Profile) -> pd.DataFrame | None:
    """memory_record.csv ``p`` (there: ``_side_files`` warned of a missing one, as OverallMetrics' runs do) for
    the memory comparison's peak line when OverallMetrics is off. One that cannot be read (truncated, no Total
    Reserved(MB) column, UTF-16) leaves the peak out, said in one warning, not a failed run (the original's memory
    comparison never reads it), and what the read counted (negative totals left out, ...) is said as in
    OverallMetrics: the line said "not recorded" of a damaged file, or a peak without the readings left out, and
    nothing said why."""
    try:
        return read_memory_record(p, profile.warnings)
    except ProfileError as exc:
        profile.warnings.append(f"{exc}; the memory line's peak reserved memory (Mem Usage) leaves this side out")
        profile.files.pop("memory_record.csv", None)
        return None


def read_operator_memory(path: str, warnings: list[str]) -> pd.DataFrame:
    """operator_memory.csv with times as exact ns and odd sizes or times warned about, not failed on: a few bad
    rows should not cost the whole memory comparison."""
    cols = _read_csv(path, ("Name", "Allocation Time(us)", "Release Time(us)", "Device Type"),
                     ("Size(KB)", "Duration(us)"), ("Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)"),
                     warnings)
    alloc, alloc_ns, alloc_read = _us_times(cols["Allocation Time(us)"], "Allocation Time(us)", path=path)
    release, release_ns, release_read = _us_times(cols["Release Time(us)"], "Release Time(us)", path=path)
    _drop_plus(alloc, alloc_read)
    _drop_plus(release, release_read)
    rounded: list[str] = []
    junk: list[str] = []
    example = ""
    for col, texts, times, read in (("Allocation Time(us)", alloc, alloc_ns, alloc_read),
                                    ("Release Time(us)", release, release_ns, release_read)):
        if n := _junk_times(texts, read):
            junk.append(f"{n:,} {col}")
        mask, first = _rounded_times(texts, read)
        if first:  # as a missing time (0), as junk below
            rounded.append(f"{int(mask.sum()):,} {col}")
            example = example or first
            times[mask] = 0
            read &= ~mask  # said here, not as no time below
    if rounded:
        warnings.append(f"{path}: {_rounded_note(rounded, example)}; read as missing")
    if junk:  # as a missing time (0): the row is not placed / the block is never released
        warnings.append(f"{path}: {' and '.join(junk)} value(s) are not times; read as missing")
    # what a DB export's OP_MEMORY says of its blocks (NULL or non-positive times, negative releases), said here
    # too: each moved a block out of the comparison, or its duration to 0, without a word
    # (a time read at or before 0 is no time either: the comparison places allocations after 0 alone)
    no_time = int(np.count_nonzero(alloc_read & (alloc_ns <= 0))) + sum(
        1 for i in np.flatnonzero(~alloc_read).tolist() if alloc[i] in _NA_TEXTS)  # the few cells not read
    if no_time:
        warnings.append(f"{path}: {no_time:,} Allocation Time(us) value(s) are empty, N/A, 0 or negative (no time); "
                        "the memory comparison leaves those blocks out")
    # a release at 0 (or under half a ns) is no time either: an export leaves a block never released empty, and the
    # comparison read the 0 as never released without a word (its block's duration moved; found by fuzzing)
    if (zero := release_read & (release_ns == 0)).any():
        warnings.append(f"{path}: {int(zero.sum()):,} Release Time(us) value(s) are 0 (to the ns: no time); read as "
                        "never released, as an empty one")
        for i in np.flatnonzero(zero).tolist():
            release[i] = ""
    if (unreleased := release_read & (release_ns < 0)).any():
        warnings.append(f"{path}: {int(unreleased.sum()):,} Release Time(us) value(s) are negative; read as never "
                        "released")
        release_ns[unreleased] = 0
        for i in np.flatnonzero(unreleased).tolist():
            release[i] = ""
    late, note = late_releases(alloc_ns, release_ns, "Release Time(us)")
    if note:
        warnings.append(f"{path}: {note}")
        release_ns[late] = 0
        for i in np.flatnonzero(late).tolist():
            release[i] = ""
    size_cells = np.asarray(cols["Size(KB)"], dtype=np.float64)
    if n_blank := int(np.count_nonzero(np.isnan(size_cells))):  # junk was said by _read_csv too
        warnings.append(f"{path}: {n_blank:,} Size(KB) value(s) are no number (empty, N/A or text); read as 0")
    size = np.nan_to_num(size_cells, nan=0.0)
    # a block over 1 PB is no size (no reserved total is larger): summed per operator it reached inf, and a
    # subtree's memory inf - inf = NaN, shown as a blank cell
    huge = size > MAX_RESERVED_BYTES / 1024
    note = memory_oddities(size < 0, (alloc_ns > 0) & (release_ns > 0) & (release_ns < alloc_ns), "Size(KB)", huge)
    if note:
        warnings.append(f"{path}: {note}")
        size = np.where(huge, 0.0, np.maximum(size, 0.0))
    n = len(size)
    names = np.asarray(cols["Name"], dtype=object)
    # no export writes a row without a Name, by which the memory comparison tells a cann:: block (placed at the
    # enqueue of the dequeue that ran it) from an operator's: such a block moved without a word (found by fuzzing)
    if n_blank := int(np.count_nonzero(names == "")):
        warnings.append(f"{path}: {n_blank:,} row(s) with an empty Name; the memory comparison places them at "
                        "their allocation time, as an operator's block (a cann:: one is placed by its dequeue)")
    out = {
        "Name": names,
        "Size(KB)": size,
        "Allocation Time(us)": np.array(alloc, dtype=object),
        "Release Time(us)": np.array(release, dtype=object),
        "alloc_ns": alloc_ns,
        "release_ns": release_ns,
        "Duration(us)": np.asarray(cols["Duration(us)"], dtype=np.float64) if "Duration(us)" in cols
        else np.full(n, np.nan),
        "Device Type": np.asarray(cols["Device Type"], dtype=object) if "Device Type" in cols
        else object_full(n, ""),
    }
    # the allocation start first: it picks the rows to compare (those sharing one), the blocks of an allocation
    # time only: one of none (said above) is left out of the comparison, so it counts nowhere, let alone twice (two
    # such rows alike were said as repeats, as OP_MEMORY's were); the time texts too (rows of no time read 0 ns)
    # the rows sharing an allocation time told by a stable sort (``_tied``), not pandas' Index and hash table: a
    # real export shares none, and the Index cost ~0.1 ms a side in the load
    tied = _tied(alloc_ns)
    repeated = repeats([out[c] for c in ("alloc_ns", "release_ns", "Size(KB)", "Name", "Duration(us)", "Device Type",
                                         "Allocation Time(us)", "Release Time(us)")], tied[alloc_ns[tied] > 0])
    if repeated:
        note = repeated_rows_note(repeated, "row(s)", "allocation", "those blocks' memory and time count")
        warnings.append(f"{path}: {note}.")
    return frame_of(out)


OP_STATISTIC_FLOATS = ("Total Time(us)", "Min Time(us)", "Avg Time(us)", "Max Time(us)", "Ratio(%)")


def read_op_statistic(path: str, warnings: list[str]) -> pd.DataFrame:
    """op_statistic.csv for ``--use_kernel_type``; a blank time reads 0, so one empty cell does not blank a
    KernelTypeCompare row (said in one line)."""
    df = frame_of(_read_csv(path, ("OP Type", "Core Type"), ("Count",) + OP_STATISTIC_FLOATS,
                            ("OP Type", "Core Type", "Count", "Total Time(us)"), warnings))
    times = [c for c in OP_STATISTIC_FLOATS if c in df.columns and c != "Ratio(%)"]
    if lacks := [c for c in OP_STATISTIC_FLOATS[1:4] if c not in df.columns]:
        # KernelTypeCompare's rows carry them: without one the sheet is left out, and the comparator's line (the
        # original's "Can't find any valid kernel type data") said nothing of why
        warnings.append(f"{path}: no {', '.join(lacks)} column; KernelTypeCompare reads none of its rows")
    no_time = np.zeros(len(df), dtype=bool)
    for col in times:
        no_time |= np.isnan(col_of(df, col, np.float64))
    if no_time.any():  # as a missing Count: a 0 us in the sheet, which without a word looks measured
        warnings.append(f"{path}: {int(no_time.sum()):,} row(s) with a time that is no number (empty, N/A or text); "
                        "those times read as 0")
    for col in OP_STATISTIC_FLOATS:
        if col in df.columns:
            df[col] = df[col].fillna(0.0)
    blank = int(df["Count"].isna().sum())
    if blank:  # N/A or empty: the sheet's Number reads 0 calls, which without a word looks measured
        warnings.append(f"{path}: {blank:,} row(s) with no Count (empty or N/A); their call counts read as 0")
    count = df["Count"].fillna(0).to_numpy(dtype=np.float64)
    # finite (checked on read) but no int64, negative or fractional: not a call count
    bad = (np.abs(count) >= 2.0**63) | (count < 0) | (count != np.floor(count))
    if bad.any():
        raise ProfileError(path, f"column Count holds {count[bad][0]:g}, not a call count")
    neg = np.zeros(len(df), dtype=bool)
    long = np.zeros(len(df), dtype=bool)
    for col in times:
        neg |= col_of(df, col, np.float64) < 0
        long |= col_of(df, col, np.float64) > _MAX_PMU_US
    long &= ~neg
    if neg.any():  # a time below 0 is no time: the row's times read as 0, counted in one line
        warnings.append(f"{path}: {int(neg.sum()):,} row(s) with a negative time; their times read as 0")
    if long.any():  # nor is one over a week (the loaders' bound of a duration): 1e20 us led the console's contributors
        warnings.append(f"{path}: {int(long.sum()):,} row(s) with a time that lasts over a week (a damaged time?); "
                        "their times read as 0")
    if neg.any() or long.any():
        for col in times:
            df.loc[neg | long, col] = 0.0
    df["Count"] = count.astype(np.int64)
    # KernelTypeCompare keys its rows by the stripped pair and keeps the last row of a pair (as the original's
    # dict): an export writes each pair once, so an earlier row of a pair (a file joined from two) is left out
    keys = pd.DataFrame({c: df[c].astype(str).str.strip() for c in ("OP Type", "Core Type")})
    # no export writes a row without either name: such a row was compared as a kernel type of a blank name, and
    # the type it was lost its figures, without a word (found by fuzzing)
    if n_blank := int(((keys["OP Type"] == "") | (keys["Core Type"] == "")).sum()):
        warnings.append(f"{path}: {n_blank:,} row(s) with an empty OP Type or Core Type; KernelTypeCompare "
                        "compares them under that empty name")
    repeated = keys.duplicated()
    if repeated.any():
        first = keys[repeated].iloc[0].tolist()
        warnings.append(f"{path}: {int(repeated.sum()):,} row(s) repeat the OP Type and Core Type of an earlier row "
                        f"(e.g. {first[0]!r}, {first[1]!r}); KernelTypeCompare reads the last row of each, as the "
                        "original does, and leaves the earlier ones out")
    return df


def read_json(path: str, warnings: list[str] | None = None) -> Any:
    """A whole JSON side file; None for an empty file. Malformed -> ProfileError.

    torch_npu writes these with Python's ``json`` (``allow_nan`` on: a NaN or infinite value a user hands
    ``add_metadata_json`` lands in profiler_metadata.json as ``NaN`` / ``Infinity``) in the locale's encoding:
    both are read, the encoding said in ``warnings``."""
    data = _read_all(path)
    if not data.strip():
        return None
    data, note = traceio.as_utf8(path, data)
    traceio.refuse_utf16(path, data, "the profiler's JSON files are UTF-8")  # not "malformed JSON ... (byte 0)"
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    try:
        value = msgspec.json.decode(data)
    except traceio.DECODE_ERRORS as exc:
        value = _python_json(path, data, traceio.decode_text(exc))
    except RecursionError:
        raise ProfileError(path, "malformed JSON: values nested too deeply") from None
    if note and warnings is not None:
        warnings.append(note)
    return value


def _python_json(path: str, data: bytes, msg: str) -> Any:
    """What Python's own reader makes of a side file the strict decoder stopped in at a NaN / Infinity /
    -Infinity literal (Python's error where the text has another fault too); the strict decoder's error for a
    file without such a literal."""
    m = traceio.INVALID_CHAR.search(msg)
    if m is None or not data.startswith(_PY_CONSTANTS, int(m.group(1))):
        if "truncated" in msg.lower():
            raise ProfileError(path, f"truncated JSON ({msg})") from None
        raise ProfileError(path, f"malformed JSON: {traceio.decode_problem(msg)}") from None
    try:
        value = json.loads(data)
    except RecursionError:
        raise ProfileError(path, "malformed JSON: values nested too deeply") from None
    except json.JSONDecodeError as exc:
        if exc.pos >= len(exc.doc.rstrip()):
            raise ProfileError(path, f"truncated JSON ({exc.msg} at character {exc.pos})") from None
        raise ProfileError(path, f"malformed JSON: {exc.msg} at character {exc.pos}") from None
    except ValueError:  # text Python cannot decode either
        raise ProfileError(path, f"malformed JSON: {traceio.decode_problem(msg)}") from None
    _no_lone_surrogates(path, value)
    return value


def _no_lone_surrogates(path: str, value: Any) -> None:
    """Python's reader lets an escaped lone surrogate ("\\ud800") through, which the strict decoder refuses and
    no report can write: the same error here."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise ProfileError(path, "malformed JSON: a lone escaped UTF-16 surrogate in a string") from None


#: The literals Python's ``json.dumps`` writes for non-finite floats ("-Infinity": the decoder stops after the sign).
_PY_CONSTANTS = (b"NaN", b"Infinity")


#: The data files beside trace_view.json that ``_side_files`` may read (what the input size counts,
#: ``pair.input_bytes``); the rest of an export (operator_details.csv, step_trace_time.csv,
#: PROF_*/mindstudio_profiler_output, ...) is never read.
SIDE_FILES = ("kernel_details.csv", "memory_record.csv", "operator_memory.csv", "op_statistic.csv",
              "communication.json")


def side_files_read(opts: Options) -> tuple[str, ...]:
    """The ``SIDE_FILES`` a run with ``opts`` reads (as the original's collectors): kernel_details.csv always,
    memory_record.csv for OverallMetrics or the memory comparison's peak line, operator_memory.csv for the memory
    comparison, op_statistic.csv for --use_kernel_type's kernel comparison, communication.json for OverallMetrics.
    The one rule ``_side_files`` reads by and ``pair.input_bytes`` counts by."""
    read = {"kernel_details.csv": True,
            "memory_record.csv": opts.enable_profiling_compare or opts.enable_memory_compare,
            "operator_memory.csv": opts.enable_memory_compare,
            "op_statistic.csv": opts.enable_kernel_compare and opts.use_kernel_type,
            "communication.json": opts.enable_profiling_compare}
    return tuple(n for n in SIDE_FILES if read[n])


def _other_case(out: str, name: str) -> str:
    """What to say after "The file NAME does not exist." where folder ``out`` holds the file in another case
    (KERNEL_DETAILS.CSV: a copy through a tool that changed it), as detection names ASCEND_PROFILER_OUTPUT and
    trace_view.json so: the sentence alone sent the user looking for a file that is there. "" otherwise; listed
    only for a file found missing."""
    try:
        there = sorted(n for n in os.listdir(out) if n.lower() == name and os.path.isfile(os.path.join(out, n)))
    except OSError:
        return ""
    return f"{term_safe(there[0])} is there: the name is case-sensitive; rename it to {name}" if there else ""


def _missing_file(out: str, name: str) -> SideNote:
    """The original's "The file NAME does not exist.", after the folder ``out`` it was looked for in, and the side
    it is about where the API logs it, as communication.json's line: "(base side)", "(comparison side: NAME.CSV is
    there: ...)". Two folders whose paths differ by a digit (rank 0 against rank 1 of one job) gave two lines
    that did not say which side lacks the file."""
    return sided(f"{out}: The file {name} does not exist.", _other_case(out, name))


def _side_files(layout: Any, profile: Profile, opts: Options) -> None:
    """Read the CSV / JSON files beside trace_view.json, each only when a comparison that uses it is on
    (``side_files_read``)."""
    out = layout.ascend_output or os.path.dirname(layout.trace_path)
    wanted = side_files_read(opts)
    missing: dict[str, int] = {}  # a side file found missing -> its warning's place in profile.warnings

    def path_of(name: str) -> str | None:
        p = _checked_side_file(out, name, opts.force)
        if os.path.isfile(p):
            profile.files[name] = p
            return p
        if os.path.isdir(p):  # "does not exist" would send the user looking for a file that is there
            profile.warnings.append(sided(f"{out}: {name} is a directory, not a file; not read."))
            return None
        # the original sentence, after the folder it was looked for in, and its side where the API logs it
        missing[name] = len(profile.warnings)
        profile.warnings.append(_missing_file(out, name))
        return None

    p = path_of("kernel_details.csv")  # read by every run
    if p:
        profile.kernel_details = read_kernel_details(p, profile.warnings, steps_read=opts.step_given,
                                                     types_read=opts.enable_kernel_compare and not opts.use_kernel_type)
    # Mem Usage, or the memory comparison's peak line alone: a missing file (or one named in another case) is
    # warned of for both, as the peak line said "comparison not recorded" beside a MEMORY_RECORD.CSV unsaid
    p = path_of("memory_record.csv") if "memory_record.csv" in wanted else None
    if p and opts.enable_profiling_compare:
        try:
            profile.memory_record = read_memory_record(p, profile.warnings)
        except ProfileError as exc:
            if exc.message != NO_DATA_ROWS:
                raise
            raise ProfileError(p, exc.message, hint=MEMORY_RECORD_HEADER_ONLY) from None
    elif p:
        profile.memory_record = _peak_memory_record(p, profile)
    if "operator_memory.csv" in wanted:
        p = path_of("operator_memory.csv")
        if p:
            profile.operator_memory = read_operator_memory(p, profile.warnings)
    if "op_statistic.csv" in wanted:  # KernelTypeCompare's: no warning where it is missing
        p = _checked_side_file(out, "op_statistic.csv", opts.force)
        if os.path.lexists(p):
            profile.files["op_statistic.csv"] = p
            profile.op_statistic = read_op_statistic(p, profile.warnings)
    p = path_of("communication.json") if "communication.json" in wanted else None
    if p:
        data = read_json(p, profile.warnings)
        if data is None:
            profile.warnings.append(sided(f"{p}: The communication.json file is empty."))
        elif not isinstance(data, dict):
            raise ProfileError(p, "malformed communication.json: top level is not an object")
        else:
            profile.communication = data
    meta = os.path.join(layout.profiling_path, "profiler_metadata.json")
    if os.path.isfile(meta):
        profile.files["profiler_metadata.json"] = meta
        _read_metadata(meta, profile)
    elif os.path.isdir(meta):  # an optional file that cannot be used: read as absent, said (as a malformed one)
        profile.warnings.append(sided(f"{meta}: a directory, not a file; {_AS_ABSENT}", _METADATA_LACKS))
    if layout.level == "profiling" and layout.info_path:
        # every run: the settings note concerns whatever the run compares; warned of only where the original
        # reads the file (OverallMetrics; the memory comparison, whose advice reads profile_memory)
        read_profiler_settings(layout.info_path, profile, warn=opts.time_breakdown or opts.enable_memory_compare)
    elif layout.settings_path:
        read_export_settings(layout.settings_path, profile, opts.force)
    if "communication.json" in missing:  # after the settings: the line says whether a Level0 export lacks it
        at = missing["communication.json"]
        profile.warnings[at] = _without_communication_json(profile.warnings[at], profile)
    for name, cost in _MEMORY_FILE_COSTS.items():  # after the settings too: the advice reads profile_memory
        if name in missing and not profile.warnings[missing[name]].aside:
            profile.warnings[missing[name]] = _without_memory_file(profile.warnings[missing[name]], profile, cost)


def _without_communication_json(said: str, profile: Profile) -> SideNote:
    """The original's "The file communication.json does not exist." (``said``, after its folder) followed by the
    side it is about and what it costs: the line named neither, and nothing else says it where no bandwidth
    column shows (two Level0 exports, which write none) or no console table does (a rank-by-rank run). The note
    under a console table that shows the column says what the side's 0.000GB/s cell means."""
    # which level writes it: "a Level0 export writes none" left the user without the way to a bandwidth
    level0 = ("; a Level0 export writes none, Level1 or Level2 writes it"
              if profile.extra.get("profiler_level") == "Level0" else "")
    return sided(said, f"no RDMA or SDMA Bandwidth, which the Model Profiling Time Distribution table reads from "
                       f"it{level0}")


#: What a missing memory file costs, said after the original's "The file ... does not exist." line and its side:
#: memory_record.csv holds the peak reserved memory, operator_memory.csv a text export's only records of the memory
#: comparison.
_MEMORY_FILE_COSTS = {"memory_record.csv": "no peak reserved memory to compare",
                      "operator_memory.csv": "no memory allocated inside operators to compare (MemoryCompare)"}


def _without_memory_file(said: SideNote, profile: Profile, cost: str) -> SideNote:
    """A missing memory file's line (``said``) followed by its side, what it costs and what to do: torch_npu and
    MindSpore write memory_record.csv and operator_memory.csv only where profile_memory=True recorded memory (a
    MindSpore run without it, its default, got the original's sentence alone, as if the export were damaged). Where
    the export's profiler_info says profile_memory was on, the file is missing from a copy instead."""
    if profile.extra.get("profile_memory") is True:
        why = ("profile_memory was on (its profiler_info), so the run recorded no memory or a copy left the file out: "
               "copy the export again in full")
    else:
        framework = npu_framework(profile)
        who = f"{framework} writes" if framework in ("torch_npu", "MindSpore") else "torch_npu and MindSpore write"
        why = f"{who} it only where profile_memory=True recorded memory: profile with it"
    return sided(said.said, f"{cost}; {why}", said.then)


# What a side file that cannot be used does to the run. The files that hold figures (trace_view.json, the CSVs,
# communication.json) stop it, malformed or truncated, with the file's name: a figure read from part of one would
# be wrong without a word. The optional ones, which hold settings and names but no figure (profiler_info*.json:
# the settings note, warned of where the original reads it; profiler_metadata.json: process-group names and
# distributed settings), are read as absent with one warning, whatever is wrong with them (unreadable, malformed,
# or no object): the run goes on as without them.
_AS_ABSENT = "read as absent"
_METADATA_LACKS = "no process-group names or distributed settings from it"


def _read_metadata(meta: str, profile: Profile) -> None:
    """profiler_metadata.json into ``profile.metadata``; one that cannot be used is an optional file read as absent,
    said in one warning: a malformed one stopped the run, though what it feeds (the groups' names
    and the distributed settings' checks) is what a folder without it goes without."""
    try:
        data = read_json(meta, profile.warnings)
    except ProfileError as exc:
        profile.warnings.append(sided(f"{meta}: {exc.message}; {_AS_ABSENT}", _METADATA_LACKS,
                                      f"; {exc.hint}" if exc.hint else ""))
        return
    if isinstance(data, dict):
        profile.metadata = data
    else:
        profile.warnings.append(sided(f"{meta}: the file {_json_kind(data)} where an object is expected; {_AS_ABSENT}",
                                      _METADATA_LACKS))


def _json_kind(value: Any) -> str:
    """What a JSON side file holds instead of an object, for the warning that reads it as absent."""
    if value is None:
        return "is empty or null"
    kind = ("a boolean" if isinstance(value, bool) else "a number" if isinstance(value, int | float)
            else "a string" if isinstance(value, str) else "an array")
    return f"holds {kind}"


def read_profiler_settings(info_path: str, profile: Profile, warn: bool) -> None:
    """Put the settings of an export's profiler_info.json (``profiler_settings``) into ``profile.extra``, for the
    validity checks' settings note and the memory comparison's advice. Every run of an export reads it (two small
    files), as the note concerns every comparison; a file that cannot be read or decoded leaves the settings out,
    with a warning only where ``warn`` (runs in which the original reads it; its DB mode never does)."""
    try:
        info = read_json(info_path, profile.warnings if warn else None)
    except ProfileError as exc:
        if warn:  # the original's words, the file and its side after them (a hint after the side)
            profile.warnings.append(sided(f"Failed to read profiler_info.json: {info_path}: {exc.message}", "",
                                          f"; {exc.hint}" if exc.hint else ""))
        return
    if not info or not isinstance(info, dict):  # empty, or not an object (reference-1 §5.4)
        if warn:
            profile.warnings.append(sided(f"{info_path}: Invalid profiler info."))
        return
    profile.files["profiler_info"] = info_path
    profile.extra.update(profiler_settings(info))
    config = info.get("config")
    if isinstance(config, dict) and isinstance(config.get("experimental_config"), dict):
        profile.extra[INFO_FRAMEWORK] = "torch_npu"
    elif isinstance(info.get("profiler_parameters"), dict):
        profile.extra[INFO_FRAMEWORK] = "MindSpore"
        version = info.get("ms_version")
        if isinstance(version, str) and version.strip():  # MindSpore's profiler writes it beside its parameters
            profile.extra[MS_VERSION] = short_text(" ".join(version.split()))  # one line, as every message is


def read_export_settings(info_path: str, profile: Profile, force: bool) -> None:
    """The settings of the export folder's profiler_info.json for an input given one folder down (its
    ASCEND_PROFILER_OUTPUT, or its database: ``Layout.settings_path``), for the validity checks' settings note and
    the memory advice alone: a file that fails the input checks (a symbolic link without ``force``, another
    owner's) or cannot be read is left out without a word, as the run does not need it and the original reads no
    profiler_info.json there."""
    try:
        paths.check_input(info_path, force, kind="text")
    except ProfileError:
        return
    read_profiler_settings(info_path, profile, warn=False)


#: MindSpore's AicoreMetrics values -> the CANN names torch_npu writes (``aclprofAicoreMetrics``), so that the
#: settings of a torch_npu run and a MindSpore run compare.
MINDSPORE_AIC_METRICS = {
    "PipeUtilization": "ACL_AICORE_PIPE_UTILIZATION", "ArithmeticUtilization": "ACL_AICORE_ARITHMETIC_UTILIZATION",
    "Memory": "ACL_AICORE_MEMORY_BANDWIDTH", "MemoryL0": "ACL_AICORE_L0B_AND_WIDTH",
    "MemoryUB": "ACL_AICORE_MEMORY_UB", "ResourceConflictRatio": "ACL_AICORE_RESOURCE_CONFLICT_RATIO",
    "L2Cache": "ACL_AICORE_L2_CACHE", "MemoryAccess": "ACL_AICORE_MEMORY_ACCESS", "None": "ACL_AICORE_NONE",
}


def profiler_settings(info: dict) -> dict[str, str | bool]:
    """``profiler_level``, ``aic_metrics`` and ``profile_memory`` of a decoded profiler_info.json: torch_npu's
    config.experimental_config ``_profiler_level`` / ``_aic_metrics`` and common_config ``profile_memory``, or
    MindSpore's (2.5 and later) ``profiler_parameters`` ``profiler_level`` / ``aic_metrics`` (its metrics
    renamed to torch_npu's) / ``profile_memory``; any may be absent. The level words the Level0 notices, level
    and metrics feed the Summary's settings note (the metrics decide which PMU counters the kernels carry),
    profile_memory the advice for a side without memory records."""
    config = info.get("config")
    exp = config.get("experimental_config") if isinstance(config, dict) else None
    common = config.get("common_config") if isinstance(config, dict) else None
    params = info.get("profiler_parameters")
    if isinstance(exp, dict):
        written = {"_profiler_level": exp.get("_profiler_level"), "_aic_metrics": exp.get("_aic_metrics"),
                   "profile_memory": common.get("profile_memory") if isinstance(common, dict) else None}
    elif isinstance(params, dict):
        written = {k: params.get(k) for k in ("profiler_level", "aic_metrics", "profile_memory")}
    else:
        return {}
    mindspore = not isinstance(exp, dict)
    out: dict[str, str | bool] = {}
    odd = []
    for (key, value), name in zip(written.items(), ("profiler_level", "aic_metrics", "profile_memory"), strict=True):
        if isinstance(value, bool if name == "profile_memory" else str):
            out[name] = MINDSPORE_AIC_METRICS.get(value, value) if mindspore and name == "aic_metrics" else value
        elif value is not None:  # a null is no setting written; a number or a list is one misread
            odd.append(f"{key} {short_repr(value)}")
    if odd:  # said where the settings note would be (``checks._settings_row``)
        out[UNREAD_SETTINGS] = ", ".join(odd)
    return out


# --------------------------------------------------------------------------- entry point


def load(layout: Any, opts: Options, data: bytes | list[bytes] | None = None) -> Profile:
    """Load one Ascend text export (``layout.level``: "trace", "ascend_output" or "profiling"). ``data``: the
    trace's bytes, read here when None; handed over in a one-item list (emptied here), they are freed once decoded
    and selected (a 1 GB trace: 1.1 GB before the tables), where a caller's reference keeps them."""
    path = layout.trace_path
    level = layout.level if layout.level in ("trace", "ascend_output", "profiling") else "trace"
    handed = data if isinstance(data, list) else [traceio.read_bytes(path, opts.force) if data is None else data]
    del data
    profile = Profile(path=layout.given, kind="NPU", source="ascend_text", level=level,
                      files={"trace_view.json": path}, **_trace_tables(path, handed, opts))
    if level != "trace":
        _side_files(layout, profile, opts)
    _missing_lanes(profile)
    return profile


def _missing_lanes(profile: Profile) -> None:
    """One warning per device lane of which no task is read where the rest of the export shows the device ran on
    it: the lanes are found by their process names alone, so a trace whose Ascend Hardware or HCCL process is named
    otherwise, or whose name record moved to another pid (a damaged or edited trace), read no device task or no
    communication task, and the operator and module sheets read 0 device time, or the communication figures none,
    without a word. The evidence: the Overlap Analysis lane's Computing / Communication spans, kernel_details.csv's
    kernels (its HCCL ops, for the HCCL lane). A trace without any device lane is refused later, where nothing
    shows device work (``api._check_usable``)."""
    names = set(col_of(profile.processes, "name", object).tolist())
    kd = profile.kernel_details
    kernels = col_of(kd, "Name", object) if kd is not None and len(kd) else np.array([], dtype=object)
    trace = profile.files.get("trace_view.json", profile.path)
    unnamed = profile.extra.get("unnamed_lane_events", 0)
    # where some device lane was found, ``_select`` counted these events in a line of their own: not said again here
    found = any(n in names for lane in LANE_NAMES for n in lane)
    elsewhere = f" ({unnamed:,} complete event(s) lie on processes it gives no name)" if unnamed and not found else ""

    def rows(values: np.ndarray, test: Callable[[str], bool]) -> np.ndarray:  # each distinct text tested once
        codes, uniq = factorize(values)  # a missing value is one more (None, "" here), not the last text's code -1
        return np.array([test(str(u or "")) for u in uniq], dtype=bool)[codes]

    def count(values: np.ndarray, prefix: str) -> int:
        return int(np.count_nonzero(rows(values, lambda t: t.startswith(prefix))))

    def say(lane: str, named: bool, seen: list[str], lost: str) -> None:
        why = f"its {lane} process holds no task" if named else f"no {lane} process is named in the trace"
        profile.warnings.append(f"{trace}: {why}{elsewhere}, though {' and '.join(seen)}: {lost}")

    spans = col_of(profile.overlap, "name", object) if len(profile.overlap) else np.array([], dtype=object)
    if profile.kernels.empty:
        seen = [f"its {OVERLAP_PROCESS} lane holds {n:,} Computing span(s)"
                for n in [int(np.count_nonzero(spans == "Computing"))] if n]
        seen += [f"kernel_details.csv lists {len(kernels):,} kernel(s)"] if len(kernels) else []
        if seen:
            say(f"'{HARDWARE_PROCESS}'", HARDWARE_PROCESS in names, seen,
                "no device task is read, so operators and modules get no device time")
    if profile.comm.empty:
        # the breakdown's and the Summary's rule (``model.hcom_name`` / ``hccl_core``): an Accelerator Core of
        # COMMUNICATION (newer torch_npu) marks an HCCL op whatever its name, which the count by name missed
        ops = rows(kernels, hcom_name)
        if len(kernels) and "Accelerator Core" in kd.columns:
            ops |= rows(col_of(kd, "Accelerator Core", object), hccl_core)
        hcom = int(np.count_nonzero(ops))
        seen = [f"its {OVERLAP_PROCESS} lane holds {n:,} Communication span(s)" for n in [count(spans, "Communication")]
                if n]
        seen += [f"kernel_details.csv lists {hcom:,} HCCL op(s)"] if hcom else []
        if seen:
            say(" or ".join(HCCL_PROCESS_NAMES), bool(names.intersection(HCCL_PROCESS_NAMES)), seen,
                "no communication task is read, so the communication comparison and the communication groups "
                "have none")
