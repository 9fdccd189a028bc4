"""The columnar profile model shared by every loader and every comparator.

One ``Profile`` per input. Loaders (Kineto JSON, Ascend text, Ascend DB) fill
the same tables; comparators read only these tables, never the files.

Conventions
-----------
* Times are ``int64`` nanoseconds (``ts``, ``dur``; ``end = ts + dur``). They
  are never floats of epoch values and never Decimals.
* Every table is a pandas DataFrame whose columns are listed in ``SCHEMAS``;
  a table a loader has no data for is an empty frame with those columns
  (``empty(name)``), so comparators never test for ``None``.
* String columns hold Python ``str`` (object dtype); missing text is ``""``.
  Missing integers are ``-1``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from .columns import col_of
from .errors import side_named
from .textsafe import term_safe

I64 = "int64"
F64 = "float64"
OBJ = "object"
#: The name of a step marker event: ``ProfilerStep#<id>`` (reference-1 §3.5).
STEP_MARK = "ProfilerStep#"
#: Lower-cased Kineto cats of the runtime / driver calls that launch device work: CUDA and HIP (Kineto writes
#: both as cuda_*), Intel XPU and out-of-tree PrivateUse1 backends (Kineto's ActivityType names; its JSON output
#: links their launches as CUDA's). Runtime calls are ops as the original's cuda_runtime; driver calls are not.
RUNTIME_CATS = frozenset({"cuda_runtime", "xpu_runtime", "privateuse1_runtime"})
DRIVER_CATS = frozenset({"cuda_driver", "xpu_driver", "privateuse1_driver"})
#: Lower-cased Kineto cats of framework ops. The runtime calls and the user_annotation ranges (ProfilerStep#,
#: record_function) are ops of the tree too (the original's rule: a kernel's launch call is its op where no
#: framework op holds it), but a trace of runtime calls alone, with or without annotations (cut, or filtered of its
#: cpu_op events), has no framework op to pair with another side's: ``pair_has_ops``. An annotation is a range
#: the user named around ops, not an op: Kineto records both from the CPU activity, so a trace with annotations
#: and no cpu_op lost its ops.
FRAMEWORK_OP_CATS = frozenset({"cpu_op", "operator"})
#: Lower-cased cats of the host calls that launch GPU work ("runtime": older Kineto's cat): the kernels a HIP
#: graph launch replays end flows whose id is the launch call's ``correlation`` arg, and no flow starts there.
LAUNCH_CATS = RUNTIME_CATS | DRIVER_CATS | {"runtime"}
#: Lower-cased name prefixes of GPU collective kernels: NCCL's (the original counts a GPU kernel starting with
#: ``nccl``, case-insensitive, as communication), AMD RCCL's and MSCCL's (ours: RCCL on the MI300X runs its
#: MSCCL algorithms, ``mscclKernel_Sum_hip_bfloat16_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)``, for
#: small all-reduces by default). Shared by the categories (``compare.classify``) and the Kineto loader, which
#: names the collectives of those kernels.
GPU_COMM_PREFIXES = ("nccl", "rccl", "msccl")
#: HCCL's rank id for "no peer" (the dst rank of a task on the local chip): 2**32 - 1.
NO_RANK = 0xFFFFFFFF
#: An NPU text export's DMA copy task types (Ascend Hardware lane), and a DB export's: the SDMA row counts the first
#: (on the computing streams), the longest idle stretch leaves out all three. One definition for the DB loader,
#: which reads these tasks, and the breakdowns, which classify them.
SDMA_TASK_TYPES = ("SDMA_SQE", "PCIE_DMA_SQE")
DB_COPY_TASK = "MEMCPY_ASYNC"
COPY_TASK_TYPES = (DB_COPY_TASK, *SDMA_TASK_TYPES)
#: The Accelerator Core / Core Type of HCCL ops: ``HCCL``, and ``COMMUNICATION`` where newer torch_npu writes it
#: (msinsight's st/level2), as the trace's HCCL process is named "HCCL" or "Communication" (reference-1 §5.1).
HCCL_CORES = ("HCCL", "COMMUNICATION")


def hcom_name(name: str) -> bool:
    """An HCCL op by its name (``hcom_allReduce_``): one test for the breakdown, the Summary and the text loader's
    missing-lane line, which counted the HCCL ops by this name alone where the others took the core too."""
    return name.startswith("hcom_")


def hccl_core(core: str) -> bool:
    """An HCCL op by its Accelerator Core / Core Type cell (``HCCL_CORES``, any case), whatever its name: the
    other half of ``hcom_name``'s rule, for the same readers."""
    return core.strip().upper() in HCCL_CORES

#: The name prefix of an NPU memory record of CANN's own allocation (operator_memory.csv writes it; the DB loader
#: adds it): the memory comparison places such a record at the launch it belongs to (reference-2 §5.2).
CANN_MARK = "cann::"

#: ``Profile.extra`` key, True where the loader went on without any device time (none of the kernels / device
#: events has a 'dur', no TASK row has both times) because the run reads none (``traceio.device_time_readers``):
#: the one-sided warning does not offer a comparison that would refuse such a side
#: (``optree.comparisons_without_ops``)
NO_DEVICE_TIME = "no_device_time"

#: ``Profile.extra`` key of a Kineto trace: (how many, the first as written, the arg(s) as the trace names them:
#: ``args.stream``, an Intel XPU trace's ``args["sycl queue"]``) of the kernels whose stream arg is present but
#: reads as no stream (``"abc"``, ``-1``), so that a trace left without a compute stream is told
#: its stream ids are wrong, not missing (``breakdown_gpu.gpu_breakdown``); absent where there is none.
KINETO_UNREAD_STREAMS = "kineto_unread_streams"

#: ``Profile.extra`` key of a result's slim copy (``api.CompareResult.slim``): ``framework_label`` as the profile's
#: tables gave it, which the copy no longer holds (a GPU trace's host events, a MindSpore export's profiler_info)
FRAMEWORK_LABEL = "framework_label"

#: ``Profile.extra`` key of a Kineto trace: how many device ``[memory]`` events wrote Total Reserved 0 where no
#: device event reads more (its Mem Usage 0.00G is then their largest: ``breakdown.zero_readings``); absent
#: where one reads more or no event is a device one.
KINETO_ZERO_RESERVED = "kineto_zero_reserved"

#: ``Profile.extra`` key: the profiler_info.json settings of the wrong type, as written ("_profiler_level 5"); left
#: out of the settings, said where the settings note would be (``checks._settings_row``)
UNREAD_SETTINGS = "unread_settings"

#: ``Profile.extra`` key of a trace_view.json read with its Python functions' names (the operator comparison, or
#: a step asked): (how many, the first's name, their step ids) of the Python functions named ``ProfilerStep#N``
#: whose step no host op marks (``traceio.python_step_marks``), absent where none is; a step refused says them
#: (``compare.steps.step_range``), where "no ProfilerStep# markers" left the marker the profile holds unsaid.
PYTHON_STEP_MARKS = "python_step_marks"

#: ``Profile.extra`` key of a trace_view.json without torch ops (MindSpore 2.5+) read without a step: the distinct
#: names holding ``ProfilerStep#`` of its other events (a set), which a step run keeps as ``extra["step_marks"]``;
#: the step count check counts them (``checks._step_count``), where it stood blank.
OTHER_STEP_MARKS = "other_step_marks"

#: ``Profile.extra`` key of an export whose profiler_info.json tells its framework: "torch_npu" (its settings under
#: ``config.experimental_config``) or "MindSpore" (under ``profiler_parameters``); absent where the file does not
#: tell or was not read. ``npu_framework`` reads it where the folder's name does not say (a renamed copy).
INFO_FRAMEWORK = "info_framework"

#: ``Profile.extra`` key of a MindSpore export's version as its profiler_info.json writes it (``ms_version``, such as
#: "2.4.0"; MindSpore's profiler writes it beside ``profiler_parameters``); absent where the file does not say or
#: was not read. ``framework_label`` shows it.
MS_VERSION = "ms_version"

#: ``comm.op_id`` of a DB communication task whose op (COMMUNICATION_OP, by opId) starts outside the step: the
#: task is in the step but its op is not, so CommunicationCompare leaves it out, as the original's pairing by opId
#: does (a NULL opId, -1, or one no op holds is placed by time instead).
OP_OUT_OF_STEP = -2

#: ``Profile.extra`` key of a DB export read for a step: (ops starting before the step that hold tasks inside it,
#: those tasks, ops starting in the step that hold tasks after its end, those tasks), counted by opId in SQL (the
#: loader keeps only the step's rows); ``communication.step_cut`` says them.
COMM_STEP_CUT = "comm_step_cut"

#: Column name -> dtype for every event table of the model.
SCHEMAS: dict[str, dict[str, str]] = {
    # Host-side operators ("torch ops"). GPU: cat in cpu_op / user_annotation /
    # cuda_runtime / cuda_driver / operator / runtime; NPU text: cpu_op; DB: PYTORCH_API op rows.
    # ``input_dims`` / ``input_type`` / ``call_stack`` keep the original text form
    # ("N/A" when absent): Kineto lists are rendered with str(), NPU strings kept as is.
    # ``connection_id``: the op's first CANN connection id (DB only; the text export links ops to
    # tasks by flows). ``collective``: the ``Collective name`` arg of PyTorch's ``record_param_comms``
    # ops (Kineto, read for CommunicationCompare only; "" elsewhere), which names the collective of RCCL's
    # generic kernels launched inside them when the kernels do not carry it themselves (else a ProcessGroupNCCL
    # range's name does, ``nccl:all_to_all``: compare/communication.py). Args no comparator
    # reads (Sequence number, Fwd thread id, External id, correlation) are not decoded: each field of an
    # args struct costs decode time.
    "ops": {
        "name": OBJ, "cat": OBJ, "ts": I64, "dur": I64, "pid": I64, "tid": I64,
        "input_dims": OBJ, "input_type": OBJ, "call_stack": OBJ, "connection_id": I64, "collective": OBJ,
    },
    # Device activity. GPU: kernel / gpu_memcpy / gpu_memset (cat keeps which);
    # NPU: X events of the "Ascend Hardware" process (cat "npu_task").
    # ``stream`` is -1 when absent (GPU stream 0 is a real stream: AMD ROCm). ``connection_id``: the
    # task's CANN connection id (DB only: the DB breakdown orders and links tasks by it); GPU kernels
    # link to ops by flows, so their External id args are not read and their correlation args only for
    # CommunicationCompare's collective names (the NCCL / RCCL kernels no launch flow ends at: the Kineto
    # loader's ``extra["correlation_launches"]``; a trace without launch flows has every kernel's read with its
    # other args, ``kineto._reads_correlations``). ``collective``: the
    # ``Collective name`` PyTorch copies onto collective kernels (GPU; "" elsewhere). A DB task's ``tid`` is its
    # stream, or a lane of its own where it has none or shares its stream and start (``ascend_db._own_lanes``).
    "kernels": {
        "name": OBJ, "cat": OBJ, "ts": I64, "dur": I64, "pid": I64, "tid": I64,
        "stream": I64, "device": I64, "task_type": OBJ, "task_id": I64, "connection_id": I64, "collective": OBJ,
    },
    # Flow pairs (start "s" joined with end "f" by id, within one category). The NPU text loader
    # keeps only the categories comparators read (async_npu, fwdbwd). ``replay`` is 1 for the other
    # kernel ends of a launch flow id, which a CUDA / HIP graph launch's kernels share: the ends besides
    # the one paired with the start (NVIDIA), or all of them when no start exists (ROCm: the start
    # fields are then the launch call's, the host op whose correlation id the ends carry); 0 for the
    # pairs, 2 for the one end of a plain launch call without a start (linked so, read as a pair: Kineto's
    # ``LOST_START``), -1 from loaders without such flows. The op tree links the kernels of all, the time
    # breakdown those of 1 not.
    "flows": {
        "id": OBJ, "cat": OBJ,
        "s_ts": I64, "s_pid": I64, "s_tid": I64,
        "f_ts": I64, "f_pid": I64, "f_tid": I64, "replay": I64,
    },
    # python_function events (module tree and call stacks). Only what the module comparator
    # reads: their args (Python id / parent id) are never used, and skipping them saves most of
    # the cost of these events (80% of a modern trace). ``tid`` keeps each thread's frames apart.
    "python_functions": {"name": OBJ, "ts": I64, "dur": I64, "tid": I64},
    # GPU "[memory]" instants (all of them; comparators filter on device_id >= 0). Only the
    # fields the memory comparator and the Mem Usage row read.
    "memory": {"ts": I64, "bytes": I64, "addr": I64, "total_reserved": I64, "device_id": I64},
    # NPU HCCL lanes. ``lane`` is "op" for group (op) lanes and "task" for plane lanes;
    # ``group`` is the group lane's thread name (e.g. "Group 0 Communication").
    "comm": {
        "name": OBJ, "ts": I64, "dur": I64, "pid": I64, "tid": I64,
        "lane": OBJ, "group": OBJ, "plane": OBJ, "op_id": I64, "task_type": OBJ,
    },
    # NPU "Overlap Analysis" lane (Computing / Communication / Communication(Not Overlapped) / Free).
    "overlap": {"name": OBJ, "ts": I64, "dur": I64, "tid": I64},
    # NPU task queue events (enqueue/dequeue) for memory placement of CANN_MARK records.
    "queue": {"cat": OBJ, "name": OBJ, "ts": I64, "dur": I64, "tid": I64, "correlation_id": I64},
    # Process / thread metadata ("M" events).
    "threads": {"pid": I64, "tid": I64, "name": OBJ, "sort_index": I64},
    "processes": {"pid": I64, "name": OBJ, "sort_index": I64},
}


_EMPTY_PROTOTYPES: dict[str, pd.DataFrame] = {}


def empty(table: str) -> pd.DataFrame:
    """An empty frame with the columns and dtypes of ``SCHEMAS[table]``.

    A fresh copy of a cached prototype: building the frame costs ~1 ms and every
    ``Profile`` starts with eleven of them.
    """
    proto = _EMPTY_PROTOTYPES.get(table)
    if proto is None:
        proto = pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCHEMAS[table].items()})
        _EMPTY_PROTOTYPES[table] = proto
    return proto.copy()


def frame(table: str, columns: dict[str, Any]) -> pd.DataFrame:
    """Build a table from column arrays, filling absent columns with defaults.

    Loaders pass only what their format has; defaults are ``-1`` for integers,
    ``""`` for text, ``nan`` for floats.
    """
    schema = SCHEMAS[table]
    n = None
    for v in columns.values():
        n = len(v)
        break
    if n is None:
        return empty(table)
    data: dict[str, np.ndarray] = {}
    for col, dtype in schema.items():
        if col in columns:
            v = columns[col]
            data[col] = np.asarray(v, dtype=dtype) if dtype != OBJ else object_array(v)
        elif dtype == I64:
            data[col] = np.full(n, -1, dtype=np.int64)
        elif dtype == F64:
            data[col] = np.full(n, np.nan)
        else:
            data[col] = object_full(n, "")
    return frame_of(data)


def step_marks(names: Any) -> np.ndarray:
    """Which names are step markers: they hold ``STEP_MARK`` (reference-1 §3.5: "contains"); a value that is no
    text is none. One vectorised test, for the loaders' marker scan and the step lookup alike."""
    col = pd.Series(object_array(names), dtype=object)
    return col.str.contains(STEP_MARK, regex=False, na=False).to_numpy(dtype=bool)


#: A step id after '#': an integer, blanks around it allowed (compared as a number: ``#050`` is step 50).
_STEP_ID = re.compile(r"\s*[+-]?\d+\s*")


def step_number(suffix: str) -> int:
    """The integer id of a ``ProfilerStep#`` suffix, -1 when it is not a number (or one of over 4300
    digits, which Python refuses to convert and no step can be)."""
    if not _STEP_ID.fullmatch(suffix):
        return -1
    try:
        return int(suffix)
    except ValueError:
        return -1


def marker_step(name: str) -> int:
    """The step id of a ``ProfilerStep#`` marker name: the integer after its last '#' (``step_number``), -1 where
    none. The one rule of every reader of step markers: the step options (``steps.step_ops``, the op tree's step
    nodes), the step count check, the repeated-id note, the Python-function markers' note."""
    return step_number(name.rsplit("#", 1)[-1])


#: What a step asked for holds of two overlapping steps (``step_notes``): the communication comparison cuts by time
#: (reference-1 §1.4), so an event in both is in each; the operator, memory and API sheets take the ops under the
#: step's top-level marker, and the later marker, which starts inside the earlier step, nests under it (the cursor
#: walk of reference-2 §2.2, the original's too: under the op it starts inside, if any), so every op of the later
#: step is the earlier step's, even one that runs after the earlier step ends, and the later step holds none
#: (``OpTree.top_layer``). The note said "an op in both in the earlier step alone", as if the later step's other
#: ops were in neither: the level-1 excerpt with step 50 cut to end 45.8 ms in and a step 51 from 44.2 to 54.2 ms
#: counts its 9 top-level ops that start after 45.8 ms in step 50. A text export's module sheets take the modules
#: that start in the step (``modules._step_view``).
OVERLAP_STEPS = ("with a step asked for, the communication comparison counts an event in both in each; the operator, "
                 "memory and API sheets count every op of the later step in the earlier one, even one that runs "
                 "after the earlier step ends, and the later step holds none (the later marker nests in the earlier "
                 "step: under the op it starts inside, if any, whose row then holds the later step's ops); the "
                 "module sheets count a module in the step its start lies in")


#: What a step asked for holds where a step marker starts with another (``step_notes``, ``OpTree`` ties).
SAME_START_STEPS = "below, the longer step is the earlier and the shorter the later"
#: The step of an id written twice whose copy starts with the first and lasts longer (``step_markers``).
SAME_START_COPY = "or a longer copy starting with it, which holds it"


def step_notes(path: str, names: np.ndarray, ts: np.ndarray, dur: np.ndarray, selectable: bool) -> list[str]:
    """Warnings for a trace's ``ProfilerStep#`` markers (``names`` / ``ts`` / ``dur`` of the events the steps
    are read from, in file order) that give one id to two events, or whose ranges overlap: real traces hold one
    disjoint range per id, so either is a damaged or merged file whose steps would load without a word. The
    first event of an id is its step (reference-1 §3.5: the scan stops at the first match), so the overlap test
    takes those only. ``selectable``: a step can be asked for (NPU text data; GPU data refuses one).
    Distinct names first: equal names are one object (``traceio.shared_texts``), so a trace without markers
    costs a set of its names."""
    items = names.tolist()
    marks = {n for n in set(items) if isinstance(n, str) and STEP_MARK in n}
    if not marks:
        return []
    # the markers' rows by set lookups over the list already made (a Series and pandas' isin: ~0.1 ms more a call)
    rows = np.flatnonzero(np.fromiter(map(marks.__contains__, items), dtype=bool, count=len(items)))
    ids = np.array([marker_step(n) for n in names[rows].tolist()], dtype=object)
    rows, ids = rows[ids != -1], ids[ids != -1]
    notes = []
    seen: dict[int, int] = {}
    for i in ids.tolist():
        seen[i] = seen.get(i, 0) + 1
    twice = [str(i) for i, n in seen.items() if n > 1]
    if twice:
        first = step_markers(rows, ids, np.asarray(ts), np.asarray(dur))
        longer = any(rs[0] != min(rs) for rs in first.values())  # a longer copy starting with the first is the step
        notes.append(f"{path}: ProfilerStep# id(s) {', '.join(twice)} mark more than one event"
                     + ("; --base_step / --comparison_step take the first in the file" if selectable else "")
                     + (f" ({SAME_START_COPY})" if selectable and longer else ""))
        keep = np.isin(rows, [r for rs in first.values() for r in rs[:1]])
        rows, ids = rows[keep], ids[keep]
    start = np.asarray(ts)[rows]
    end = start + np.asarray(dur)[rows]
    order = np.lexsort((-end, start))  # at one start the longest first: it holds the others (the op tree's tie)
    start, end = start[order], end[order]
    inside = np.flatnonzero(start[1:] < np.maximum.accumulate(end[:-1])) + 1
    if inside.size:
        tied = start[inside] == start[inside - 1]
        said = [f"step(s) {', '.join(str(i) for i in ids[order][inside[m]].tolist())} {how}"
                for m, how in ((~tied, "start before an earlier step ends"),
                               (tied, "start with a step that ends no earlier"
                                + (f" ({SAME_START_STEPS})" if selectable else ""))) if m.any()]
        notes.append(f"{path}: ProfilerStep# {' and '.join(said)}" + (f"; {OVERLAP_STEPS}" if selectable else ""))
    return notes


def step_markers(rows: np.ndarray, ids: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> dict[int, list[int]]:
    """Per step id, its step's marker row (first) and that id's other rows (``rows``: the markers', in file order).
    The step is the first marker in the file (reference-1 §3.5), or a copy starting at its instant that lasts
    longer: the op tree nests the shorter of two markers starting together under the longer
    (``optree._markers_first``), so the longer one's range is the step's ops' range. Shared by the notes and the
    step range."""
    out: dict[int, list[int]] = {}
    for r, i in zip(rows.tolist(), ids.tolist(), strict=True):
        rs = out.setdefault(i, [])
        if rs and ts[r] == ts[rs[0]] and dur[r] > dur[rs[0]]:
            rs.insert(0, r)
        else:
            rs.append(r)
    return out


def zero_readings_text(n: int, what: str, where: str = "") -> str:
    """The Mem Usage note's cause where a side's memory readings are all 0 (``Breakdown.memory_zero``), worded
    alike for memory_record.csv and MEMORY_RECORD: "its 20 <what> readings<where> are all 0"."""
    return f"its {n:,} {what} reading{where} is 0" if n == 1 else f"its {n:,} {what} readings{where} are all 0"


def object_array(values: Any) -> np.ndarray:
    """``values`` as a 1-d object array: ``fromiter`` never inspects the items (``np.array`` probes
    each, e.g. every ``msgspec.Raw`` for the buffer protocol, ~30x slower)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    return np.fromiter(values, dtype=object, count=len(values))


def object_full(n: int, value: Any) -> np.ndarray:
    """An object array of ``n`` cells that all hold ``value``, one object: ``np.full(n, "npu_task", dtype=object)``
    passes a text through numpy's string dtype and makes one ``str`` per cell (numpy 2.4: 1M cells 219 against
    5 ms, and ~60 MB kept where one text would do)."""
    out = np.empty(n, dtype=object)
    out.fill(value)
    return out


#: ``Profile.backward_tid`` of a profile without fwdbwd flow ends.
NO_BACKWARD_TID = -1


def knows_backward_thread(tid: int | None) -> bool:
    """Whether a backward thread id names a thread. Only -1 is "none": a named (text) tid is read as a code below
    -1 (``traceio.to_int``) and is a thread like any other (the fwdbwd flow ended on it)."""
    return tid is not None and int(tid) != NO_BACKWARD_TID


def starts_read(kernel_details: pd.DataFrame) -> np.ndarray:
    """Per kernel_details row, whether its Start Time was read (the text loader's ``start_read``; a DB's starts
    always are). An unread start is kept as ``ts`` -1, which is also the time "-0.001" us reads as: consumers
    that match kernels by start time go by this mask, never by the -1."""
    if "start_read" in kernel_details.columns:
        return col_of(kernel_details, "start_read", bool)  # no Series: ~20 us of a ~1 us pull
    return np.ones(len(kernel_details), dtype=bool)


def names_a_type(text: Any) -> bool:
    """Whether a kernel_details.csv Type cell names a type: "", N/A (a Level0 export writes it on every row) and nan
    (a cell read as missing) name none, blanks around aside. KernelCompare skips a text export's row of none
    (reference-2 §6.1), and the loader counts such rows among typed ones by this same rule."""
    if not isinstance(text, str):
        return False
    t = text.strip()
    return t not in ("", "N/A") and t.lower() != "nan"


#: Column labels -> their Index, for ``column_index``; bounded, since a label list could come from data.
_COLUMN_INDEXES: dict[tuple, pd.Index] = {}
_COLUMN_INDEXES_MAX = 256


def column_index(labels: list) -> pd.Index:
    """``pd.Index(labels)``, one shared object per label list: the model's and the comparators' tables repeat a
    handful of label lists on every load and compare, and a new Index cost ~35-55 us of a small table's build
    (pandas 3 infers its dtype and the frame validates it). An Index is immutable, so frames share one safely
    (none is renamed in place). Keyed by type and value, so that 1, 1.0 and True (equal as dict keys) keep
    Indexes of their own dtypes."""
    key = tuple((type(x), x) for x in labels)
    got = _COLUMN_INDEXES.get(key)
    if got is None:
        got = pd.Index(labels)
        if len(_COLUMN_INDEXES) < _COLUMN_INDEXES_MAX:
            _COLUMN_INDEXES[key] = got
    return got


def block_frame(table: str, block: np.ndarray, ints: tuple[str, ...], others: dict[str, np.ndarray]) -> pd.DataFrame:
    """``frame(table, ...)`` of int64 columns written as the rows of one 2-d ``block`` (``ints`` names them, in the
    schema's order) and of ``others`` (object columns), every column taken as it is. Why: ``frame`` stacks its
    columns into new 2-d blocks, a copy of each (a 1 GB trace's 4.1M Python frames: +94 MiB at its load's peak
    and ~0.2 s of first-touched pages); a frame over ``block`` holds it as its int64 block."""
    schema = SCHEMAS[table]
    if (set(ints) | set(others) != set(schema) or [c for c in schema if c in ints] != list(ints)
            or any(schema[c] != I64 for c in ints) or any(schema[c] != OBJ for c in others)):
        raise ValueError(f"block_frame: columns {ints} + {list(others)} are not those of the {table} table")
    out = pd.DataFrame(block.T, columns=column_index(list(ints)), index=pd.RangeIndex(block.shape[1]), copy=False)
    for i, col in enumerate(schema):  # in schema order: each lands at its own position
        if col in others:
            out.insert(i, col, pd.Series(object_array(others[col]), index=out.index, dtype=object, copy=False))
    return out


#: From this many rows ``frame_of`` builds a table over its columns as they are. Below, pandas' own stacking of
#: them into 2-d blocks (a copy) costs less than its public constructor's checks (~35 us a column).
FRAME_OVER_ROWS = 1 << 16


def frame_of(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """A DataFrame over equal-length 1-d numpy columns, kept as they are (object stays object).

    pandas' own constructor checks and converts every column (and, from pandas 3, copies object
    text into its ``str`` dtype): ~35 us per column, most of the cost of a model table. The
    arrays here are already clean, so they go straight in; if a pandas release drops
    ``_from_arrays``, the public constructor (with object columns pinned) takes over. Both stack
    the columns into 2-d blocks, a copy of each: a table of ``FRAME_OVER_ROWS`` or more rows is
    built over its columns instead (``_frame_over``).
    """
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    if any(len(v) != n for v in columns.values()):  # the fast path would not catch it
        raise ValueError(f"frame_of: columns differ in length: { {c: len(v) for c, v in columns.items()} }")
    if n >= FRAME_OVER_ROWS:
        return _frame_over(columns, names, n)
    try:
        return pd.DataFrame._from_arrays(list(columns.values()), columns=column_index(names),
                                         index=pd.RangeIndex(n), verify_integrity=False)
    except (AttributeError, TypeError):  # pragma: no cover - depends on the pandas release
        return pd.DataFrame({c: pd.Series(v, dtype=object, copy=False) if v.dtype == object else v
                             for c, v in columns.items()})


def _frame_over(columns: dict[str, np.ndarray], names: list[str], n: int) -> pd.DataFrame:
    """``frame_of`` of large columns, each its own block over its array, with no copy (pandas 2.0-3.x: a dict of
    Series, ``copy=False``, leaves the blocks unconsolidated). Why: the stacking copied every column of the table
    at its build (the 1 GB NPU pair's tables: 280 MiB, ~0.1-0.2 s). An array the table cannot own as it is, is
    copied once: a view (it would keep its base alive: a column of a 2-d result), a read-only one (an in-place
    write, ``df.loc[...] = ``, would fail) and one given twice (two columns would share their cells)."""
    idx = pd.RangeIndex(n)
    seen: set[int] = set()
    data: dict[str, pd.Series] = {}
    for c, v in columns.items():
        if v.base is not None or not v.flags.writeable or not v.flags.c_contiguous or id(v) in seen:
            v = v.copy()
        seen.add(id(v))
        data[c] = pd.Series(v, index=idx, dtype=v.dtype, copy=False)
    return pd.DataFrame(data, index=idx, columns=column_index(names), copy=False)


def object_column(values: Any) -> pd.Series:
    """A text column kept as object dtype: pandas >= 3 would otherwise copy it into its ``str``
    dtype (checking every value), and every later ``to_numpy(dtype=object)`` would copy it back."""
    return pd.Series(object_array(values), dtype=object, copy=False)


#: Up to this many values ``factorize`` numbers an object array of str with a dict: pandas' fixed cost (~20-60 us
#: a call) is most of a small array's factorization, and the comparators make ~50 such calls a compare; from a
#: few hundred values pandas' hash table is faster for short texts.
SMALL_FACTORIZE_MAX = 300

#: A text column whose values average at least this many characters is numbered by the dict at any size: pandas
#: hashes every text's characters again on each call (~1 ns a character), where a dict reuses the hash a ``str``
#: keeps (the loaders share one object per distinct name). GPU kernel names (~330-490 characters) were ~8x slower
#: through pandas; below ~50 characters pandas is as fast or faster from a few hundred values.
LONG_TEXT_MIN = 64


def _long_texts(values: np.ndarray) -> bool:
    """Whether ``values`` average ``LONG_TEXT_MIN`` characters or more, judged on 32 of them spread over the
    array (a column's first value is often a short one: a memcpy among kernels). A wrong guess costs time only:
    both ways number the texts alike."""
    sample = values[:: max(1, len(values) // 32)].tolist()
    return sum(len(v) if type(v) is str else 0 for v in sample) >= LONG_TEXT_MIN * len(sample)


def _str_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``factorize`` of an object array by a dict (a small one, or one of long texts: ``_long_texts``); None unless
    every distinct value is a ``str`` (missing values, numbers, bytes: pandas' rules of equality and missingness
    apply to those)."""
    items = values.tolist()
    try:
        uniq = list(dict.fromkeys(items))
    except TypeError:  # an unhashable value
        return None
    if not all(type(u) is str for u in uniq):
        return None
    at = {u: i for i, u in enumerate(uniq)}
    return np.fromiter(map(at.__getitem__, items), dtype=np.intp, count=len(items)), object_array(uniq)


def factorize(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values in first-appearance order), a missing value (None/NaN) being one
    more value (None): ``pd.factorize(values, use_na_sentinel=False)`` without its extra
    missing-value pass over the whole array (a quarter to a third of the time on text columns,
    which by the model's convention hold no missing values anyway)."""
    if isinstance(values, np.ndarray) and values.dtype == object and (
            len(values) <= SMALL_FACTORIZE_MAX or _long_texts(values)):
        got = _str_codes(values)
        if got is not None:
            return got
    codes, uniq = pd.factorize(values)
    uniq = np.asarray(uniq)
    miss = codes < 0
    if miss.any():  # the missing category goes where it first appears
        first = int(np.argmax(miss))
        rank = int(codes[:first].max()) + 1 if first else 0
        codes = np.where(codes >= rank, codes + 1, codes)
        codes[miss] = rank
        uniq = np.insert(uniq.astype(object), rank, None)
    return codes, uniq


#: ``row_keys`` keeps its combined row key below this, so that one more column's codes cannot overflow int64.
_KEY_LIMIT = 1 << 62


def row_keys(cols: list[np.ndarray], rows: np.ndarray) -> np.ndarray:
    """One int64 key per row of ``rows``, equal where the rows are equal in every column of ``cols`` (a NaN cell
    equals a NaN cell, as ``pd.factorize`` codes them), built column by column: an integer column adds its values
    less their minimum (no hashing), another column its ``pd.factorize`` codes, and the key built so far is coded
    afresh only where the next column could overflow it. Two hash passes a column took 3x the time (NPU pair 1's
    596 tied device tasks: 0.28 -> 0.10 ms; 1M tied rows of five columns: 0.28-0.30 -> 0.09-0.10 s)."""
    key, span = np.zeros(rows.size, dtype=np.int64), 1  # every key below ``span``
    for values in cols:
        v = values[rows]
        n = 0
        if v.dtype.kind == "i":
            lo = int(v.min())
            n = int(v.max()) - lo + 1
            if n < _KEY_LIMIT:
                codes = v.astype(np.int64) - lo
        elif v.dtype.kind == "b":
            codes, n = v.astype(np.int64), 2
        if not n or n >= _KEY_LIMIT:  # text, floats (NaN), or integers too far apart
            codes, uniq = pd.factorize(v)
            codes, n = codes.astype(np.int64) + 1, len(uniq) + 1
        if span * n >= _KEY_LIMIT:
            key, uniq = pd.factorize(key)
            span = len(uniq)
            if span * n >= _KEY_LIMIT:  # values of a range near int64's: their codes (below rows.size)
                codes, uniq = pd.factorize(codes)
                n = len(uniq)
        key = key * n + codes
        span *= n
    return key


def repeats(cols: list[np.ndarray], rows: np.ndarray) -> int:
    """How many of ``rows`` repeat an earlier one of them in every column of ``cols`` (``row_keys``): a trace's
    events or a CSV's rows written twice."""
    return int(rows.size - len(pd.unique(row_keys(cols, rows)))) if rows.size else 0


def pair_codes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group codes of the pairs (a[i], b[i]) of two non-negative integer code arrays, in first-appearance
    order, and the first row of each group."""
    codes, firsts = pd.factorize(np.asarray(a, np.int64) * (int(b.max()) + 1 if len(b) else 1) + b)
    first_row = np.full(len(firsts), len(codes), np.int64)
    np.minimum.at(first_row, codes, np.arange(len(codes)))
    return codes, first_row


def starts_at(pid: np.ndarray, tid: np.ndarray, ts: np.ndarray, at_pid: np.ndarray, at_tid: np.ndarray,
              at_ts: np.ndarray) -> np.ndarray:
    """Per (pid, tid, ts) row: whether an ``at_*`` row has the same lane and time. The time alone is no match: in
    a trace of whole µs a flow end on a host thread often shares its ts with a kernel on a device lane."""
    pid, tid, ts = (np.asarray(a, dtype=np.int64) for a in (pid, tid, ts))
    at_pid, at_tid, at_ts = (np.asarray(a, dtype=np.int64) for a in (at_pid, at_tid, at_ts))
    by = np.argsort(at_ts)
    sorted_ts = at_ts[by]
    lo = np.searchsorted(sorted_ts, ts, side="left")
    hi = np.searchsorted(sorted_ts, ts, side="right")
    out = np.zeros(len(ts), dtype=bool)
    # nearly every kernel has one flow ending at its start, so most times are held by one row: its lane decides
    one = np.flatnonzero(hi - lo == 1)
    j = by[lo[one]]
    out[one] = (at_pid[j] == pid[one]) & (at_tid[j] == tid[one])
    many = np.flatnonzero(hi - lo > 1)
    if many.size:  # a time several rows hold: any of them on the row's lane
        rows = by[ranges(lo[many], hi[many])]
        lanes = set(zip(at_pid[rows].tolist(), at_tid[rows].tolist(), at_ts[rows].tolist(), strict=True))
        out[many] = [key in lanes for key in zip(pid[many].tolist(), tid[many].tolist(), ts[many].tolist(),
                                                  strict=True)]
    return out


def ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(lo[i], hi[i])`` over i (empty where ``hi[i] <= lo[i]``)."""
    n = np.maximum(np.asarray(hi, np.int64) - lo, 0)
    total = int(n.sum())
    if total == 0:
        return np.empty(0, np.int64)
    return np.repeat(np.asarray(lo, np.int64) - (np.cumsum(n) - n), n) + np.arange(total, dtype=np.int64)


def next_at_address(device: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """For device [memory] events in time order, each one's next event at the same address of the same device
    (-1: none): the event that decides an allocation's fate in the memory records' pairing (``memory.gpu_records``)
    and in the Kineto loader's count of allocations that pairing cannot close (``kineto._pairing_note``)."""
    by_addr = np.lexsort((addr, device))  # stable: time order within an address
    nxt = np.full(len(addr), -1, dtype=np.int64)
    same = (addr[by_addr][1:] == addr[by_addr][:-1]) & (device[by_addr][1:] == device[by_addr][:-1])
    nxt[by_addr[:-1][same]] = by_addr[1:][same]
    return nxt


def positions_in_runs(keys: np.ndarray) -> np.ndarray:
    """Each element's position within its run of equal ``keys`` (0 for the first; ``keys`` grouped, e.g.
    sorted): the n-th task of a plane, the n-th run of a replayed task."""
    n = len(keys)
    if not n:
        return np.zeros(0, np.int64)
    first = np.ones(n, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return np.arange(n) - np.maximum.accumulate(np.where(first, np.arange(n), 0))


def us_text(ns: np.ndarray | Sequence[int], unset: str | None = None) -> np.ndarray:
    """Epoch ns as the microsecond text the text export writes (``1736408883694624.810``), exact: a float64
    holds such a value only to 0.25 us (the original's ``n / 1000`` shows ``...011.0`` for ``...011.090``).
    ``unset`` is the text of a 0 (a block never released: the CSV's empty cell)."""
    ns = np.asarray(ns, dtype=np.int64)
    if not ns.size:  # np.char.zfill reduces over the widths: an empty array has none
        return np.zeros(0, dtype=object)
    q, r = np.divmod(np.abs(ns), 1000)
    text = np.char.add(np.char.add(q.astype(str), "."), np.char.zfill(r.astype(str), 3))
    text = np.where(ns < 0, np.char.add("-", text), text).astype(object)
    if unset is not None:
        text[ns == 0] = unset
    return text


def us_text_of(ns: int) -> str:
    """``us_text`` of one time: its numpy string steps cost ~20-40 us for a single value (the idle-stretch check's
    start, a late release's times)."""
    return f"{'-' if ns < 0 else ''}{abs(ns) // 1000}.{abs(ns) % 1000:03d}"


def threads_in_order(threads: pd.DataFrame, pid: int) -> tuple[list[int], list[str]]:
    """(tids, names) of the threads of process ``pid`` in display order: by ``sort_index``, a missing
    one (-1) sorting by tid, stable on ties (the order lanes appear in a trace viewer)."""
    sel = np.flatnonzero(col_of(threads, "pid", np.int64) == pid)
    if not sel.size:
        return [], []
    si = col_of(threads, "sort_index", np.int64)[sel]
    tid = col_of(threads, "tid", np.int64)[sel]
    order = np.argsort(np.where(si >= 0, si, tid), kind="stable")
    return tid[order].tolist(), col_of(threads, "name", object)[sel[order]].tolist()


class SideNote(str):
    """A loading note that names the input's side when the API logs it (``of_side``: "base side", "comparison
    side", or "both sides" where one input is on both), which a loader, reading one input, does not know: a Level0
    export on both sides, rank 0 against rank 1 of one job, gave two lines that differed by one digit of a path. As
    text (``Profile.warnings`` compared, a test's ``in``) it is the note without its side. Survives pickling (a
    pair loaded side by side comes back from a process)."""

    said: str
    aside: str
    then: str

    def __new__(cls, said: str, aside: str = "", then: str = "") -> SideNote:
        """``said``, the side's parenthesis (``errors.side_named``, with ``aside``), then ``then``."""
        note = super().__new__(cls, f"{said}{side_named(None, aside)}{then}")
        note.said, note.aside, note.then = said, aside, then
        return note

    def __reduce__(self) -> tuple[Any, tuple[str, str, str]]:
        return SideNote, (self.said, self.aside, self.then)

    def of_side(self, side: str) -> str:
        """The note naming ``side`` ("base side", "comparison side", "both sides")."""
        return f"{self.said}{side_named(side, self.aside)}{self.then}"


def sided(said: str, aside: str = "", then: str = "") -> SideNote:
    """``said`` followed by its side where the API logs it, "(comparison side)", or "(base side: ASIDE)" where
    an aside says more, then ``then`` (a hint, whose command the side would otherwise break): the one form of
    every side file's line, so that two folders whose paths differ by a digit say which side each line is about."""
    return SideNote(said, aside, then)


#: The event tables of a ``Profile``, as its repr counts them.
_TABLES = ("ops", "kernels", "flows", "python_functions", "memory", "comm", "overlap", "queue")


@dataclass(eq=False)
class Profile:
    """Everything the comparators may read about one profiling run.

    ``path`` is the path as the user gave it (shown in sheet headers);
    ``kind`` is "GPU" or "NPU"; ``source`` names the loader family
    ("kineto", "ascend_text", "ascend_db"); ``level`` is where an NPU path pointed
    ("profiling", "ascend_output", "trace" for a text export's bare trace file, "database" for a
    DB export's .db file) or "" for a Kineto trace.
    """

    path: str
    kind: str
    source: str
    level: str = ""
    files: dict[str, str] = field(default_factory=dict)  # role -> file actually read
    ops: pd.DataFrame = field(default_factory=lambda: empty("ops"))
    kernels: pd.DataFrame = field(default_factory=lambda: empty("kernels"))
    flows: pd.DataFrame = field(default_factory=lambda: empty("flows"))
    python_functions: pd.DataFrame = field(default_factory=lambda: empty("python_functions"))
    memory: pd.DataFrame = field(default_factory=lambda: empty("memory"))
    comm: pd.DataFrame = field(default_factory=lambda: empty("comm"))
    overlap: pd.DataFrame = field(default_factory=lambda: empty("overlap"))
    queue: pd.DataFrame = field(default_factory=lambda: empty("queue"))
    threads: pd.DataFrame = field(default_factory=lambda: empty("threads"))
    processes: pd.DataFrame = field(default_factory=lambda: empty("processes"))
    #: tid of the backward thread (from fwdbwd flow ends), NO_BACKWARD_TID if unknown (``knows_backward_thread``).
    backward_tid: int = -1
    #: NPU CSV / JSON side files, as read (None when the file is absent).
    kernel_details: pd.DataFrame | None = None
    op_statistic: pd.DataFrame | None = None
    memory_record: pd.DataFrame | None = None
    operator_memory: pd.DataFrame | None = None
    communication: dict | None = None
    metadata: dict = field(default_factory=dict)  # profiler_metadata.json / DB META_DATA / Kineto top-level metadata
    #: The highest rank id the NPU communication tasks name, plus one (0: none named): a lower bound of the
    #: world size where the metadata records none.
    rank_span: int = 0
    device_properties: list = field(default_factory=list)
    #: Source-specific extras a comparator may need (e.g. DB table frames); documented by the loader.
    extra: dict[str, Any] = field(default_factory=dict)
    #: One-line notes gathered while loading (skipped events etc.), logged once by the API (a ``SideNote`` with
    #: its side named).
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # the generated repr printed every table (tens of KB for a small trace); the sizes say what was loaded
        sizes = ", ".join(f"{name}={len(getattr(self, name))}" for name in _TABLES if len(getattr(self, name)))
        head = f"Profile(path={self.path!r}, kind={self.kind!r}, source={self.source!r}"
        return head + (f", level={self.level!r}" if self.level else "") + (f", {sizes})" if sizes else ")")

    @property
    def is_gpu(self) -> bool:
        """GPU (Kineto) data: step options, kernel compare and flows apply differently to it."""
        return self.kind == "GPU"

    @property
    def is_npu(self) -> bool:
        """NPU (Ascend text or DB) data."""
        return self.kind == "NPU"

    @property
    def has_ops(self) -> bool:
        """Whether the run recorded any torch op: a DB export's ``ops`` are already cut to the step asked for,
        so its loader says in ``extra["any_op"]`` whether PYTORCH_API holds one anywhere."""
        return bool(len(self.ops)) or bool(self.extra.get("any_op"))

    @property
    def has_framework_ops(self) -> bool:
        """Whether the run recorded a framework op: an NPU export's ops are all framework ops; a Kineto trace's
        ops hold its runtime calls and annotations too, which are none (``gpu_framework_ops``, told by its loader
        once)."""
        if not self.is_gpu or not len(self.ops):
            return self.has_ops
        told = self.extra.get("framework_ops")
        if told is None:  # a Profile made without the Kineto loader (a test's); no cat column: no runtime call
            told = "cat" not in self.ops.columns or gpu_framework_ops(col_of(self.ops, "cat", object),
                                                                       col_of(self.ops, "name", object))
        return bool(told)


#: The tables a loader fills from a profile's events and its export's side files: the ``Profile`` fields that hold
#: a frame, read off the class so that a table added to it is in every check of them all (``api._same_events``).
PROFILE_FRAMES = tuple(f.name for f in fields(Profile) if str(f.type).startswith("pd.DataFrame"))


def gpu_framework_ops(cat: np.ndarray, name: np.ndarray, coded: tuple[np.ndarray, np.ndarray] | None = None) -> bool:
    """Whether a Kineto trace's ops (their lower-cased cats and names) hold a framework op: one of
    ``FRAMEWORK_OP_CATS`` other than a ProfilerStep# marker. Markers and record_function ranges (user_annotation)
    are none: against a side with framework ops, a trace of runtime calls under such ranges paired
    ``cudaLaunchKernel`` rows with ``aten::`` ones (the H200 AlexNet trace without its cpu_op events: operator match
    rate 50.9 %, cudaLaunchKernel a top contributor). PyTorch 1.8 writes its markers as cat Operator (the
    tb_plugin resnet50 samples), so an Operator is a framework op only where some Operator is no marker: the names
    are read until the first such (most often the first one). ``coded``: ``cat`` as (a code per op, the distinct
    cats the codes index), as the loader numbers them: no pass over the text column (its ``pd.unique`` took
    16.8 ms at 346,884 ops)."""
    distinct = set(pd.unique(cat).tolist() if coded is None else coded[1].tolist())
    framework = distinct & FRAMEWORK_OP_CATS
    if framework - {"operator"}:
        return True
    if not framework:
        return False
    rows = cat == "operator" if coded is None else np.isin(coded[0], np.flatnonzero(coded[1] == "operator"))
    return any(not (isinstance(n, str) and n.startswith(STEP_MARK)) for n in name[rows].tolist())


def unread_categories(profile: Profile) -> str:
    """The categories of complete events a Kineto trace holds that its loader neither reads nor knows as Kineto's
    own (``extra["unread_cats"]``: work written under another name, such as ``gpu_kernel`` or ``cpu_operator``),
    as messages name them: "'gpu_kernel' (62), 'gpu_memset_v2' (13)"; "" where there is none."""
    unread = profile.extra.get("unread_cats") or {}
    named = [f"'{term_safe(c)}' ({n:,})" for c, n in list(unread.items())[:5]]
    return ", ".join(named) + (", ..." if len(unread) > 5 else "")


def pair_has_ops(base: Profile, comparison: Profile) -> tuple[bool, bool]:
    """Whether each side has ops to pair in this comparison. A GPU trace of runtime calls alone (no framework op:
    recorded without the CPU activity, or cut; user_annotation ranges around the calls are none) has none where
    the other side has framework ops: its cudaLaunchKernel rows would pair against real ops, every one unmatched
    (hta's PARAM AlexNet cut so against the level-1 torch_npu export: 0 of 329 and 0 of 115), so it gets the
    one-sided warning instead. Against another such trace, or a side without ops, its runtime calls stay ops, as
    in the original (reference-1 §4.1 counts cuda_runtime calls as ops): two such traces' only per-launch
    comparison is their operator sheets."""
    fb, fc = base.has_framework_ops, comparison.has_framework_ops
    return base.has_ops and (fb or not fc), comparison.has_ops and (fc or not fb)


def bare_trace(profile: Profile) -> str:
    """How messages name an NPU trace given alone (``level == "trace"``), which brings no side file: a
    trace_view.json left its profiling directory behind, which could be given instead; a legacy MindSpore /
    CANN timeline file (msprof_*.json, ascend_timeline_display_*.json) has none to give (the message audit
    followed "without its profiling directory" there to a refusal)."""
    if has_profiling_directory(profile):
        return "a trace file given without its profiling directory"
    return "a lone timeline file"


def has_profiling_directory(profile: Profile) -> bool:
    """Whether an NPU trace given alone is a trace_view.json, whose profiling directory could be given instead (a
    message then says to pass it); a legacy timeline file has none (``bare_trace``)."""
    return os.path.basename(profile.path).startswith("trace_view")


def npu_framework(profile: Profile) -> str:
    """Which profiler wrote an NPU export, as far as its names tell: "MindSpore", "torch_npu" or "" (unknown).
    Words about a side without ops follow it: a MindSpore trace_view.json given alone was called a torch_npu
    export, and a torch_npu export's ASCEND_PROFILER_OUTPUT a MindSpore one, as the folder given was read alone.
    The DB's name, else the innermost folder on the path named as a profiling directory (a trace_view.json or
    ASCEND_PROFILER_OUTPUT lies inside one), else a ``MindSpore`` process lane (MindSpore 2.x's framework ops),
    else its profiler_info.json's layout (``INFO_FRAMEWORK``), else a ``Python`` process lane (torch_npu's host
    lane). A torch_npu export copied to a folder without ``_ascend_pt`` was called a MindSpore one: evidence or
    nothing, so that a side no name tells of is "NPU" data, not MindSpore's. A MindSpore 1.x timeline file
    (``ascend_timeline_display_1.json``, ``timeline_display_1.json``: no profiler but MindSpore's writes the name)
    is MindSpore's too; a CANN timeline (``msprof_*.json``) stays unknown."""
    db = os.path.basename(profile.files.get("db") or "")
    if db.startswith("ascend_pytorch_profiler"):
        return "torch_npu"
    if db.startswith("ascend_mindspore_profiler"):
        return "MindSpore"
    if "timeline_display_" in os.path.basename(profile.files.get("trace_view.json") or ""):
        return "MindSpore"
    for part in reversed(os.path.normpath(os.path.abspath(profile.path)).split(os.sep)):
        if part.endswith("_ascend_ms"):
            return "MindSpore"
        if part.endswith("_ascend_pt"):
            return "torch_npu"
    names = profile.processes["name"] if "name" in profile.processes.columns else pd.Series(dtype=object)
    if names.eq("MindSpore").any():
        return "MindSpore"
    if profile.extra.get(INFO_FRAMEWORK):
        return str(profile.extra[INFO_FRAMEWORK])
    return "torch_npu" if names.eq("Python").any() else ""


#: The cats PyTorch 1.8's profiler wrote its device events under (later Kineto writes them lower-cased)
_LEGACY_DEVICE_CATS = frozenset({"Kernel", "Memcpy", "Memset"})


def kineto_written(profile: Profile) -> bool:
    """Whether a GPU trace shows that PyTorch's profiler wrote it: Kineto's top-level keys (``schemaVersion``,
    ``deviceProperties``, ``distributedInfo``), a host event it records (cpu_op, cuda_runtime, an annotation:
    ``has_ops``), or PyTorch 1.8's capitalised device cats. A Chrome-format trace of kernels alone with none of
    these (another tool's) was called "PyTorch (Kineto)" though nothing said so."""
    if profile.device_properties or profile.has_ops or {"schemaVersion", "distributedInfo"} & profile.metadata.keys():
        return True
    k = profile.kernels
    return "task_type" in k.columns and bool(k["task_type"].isin(_LEGACY_DEVICE_CATS).any())


def framework_of(profile: Profile) -> str:
    """The framework that recorded a side, whose names its ops carry: "PyTorch" (a Kineto trace, a torch_npu
    export), "MindSpore", or "" where nothing tells (``npu_framework``, ``kineto_written``). Two sides of
    different frameworks name the same work differently (aten::conv2d against MindSpore's), so the sheets that
    pair ops by name pair little."""
    if profile.is_gpu:
        return "PyTorch" if kineto_written(profile) else ""
    return {"torch_npu": "PyTorch", "MindSpore": "MindSpore"}.get(npu_framework(profile), "")


def framework_label(profile: Profile) -> str:
    """``framework_of`` with the profiler that wrote the side, as the frameworks note shows it: "PyTorch (Kineto)",
    "PyTorch (torch_npu)", "MindSpore 2.4.0" (the version its profiler_info.json writes, ``MS_VERSION``), else
    "MindSpore"; "" where nothing tells."""
    if FRAMEWORK_LABEL in profile.extra:
        return str(profile.extra[FRAMEWORK_LABEL])
    framework = framework_of(profile)
    if framework == "PyTorch":
        return "PyTorch (Kineto)" if profile.is_gpu else "PyTorch (torch_npu)"
    version = profile.extra.get(MS_VERSION)
    return f"{framework} {version}" if framework == "MindSpore" and version else framework
