"""Kineto (PyTorch profiler ``*.pt.trace.json``) loader: one decode -> a GPU ``Profile``.

Why it is shaped like this: the typed decode (traceio) is the floor of the
run time, so everything after it must be cheap. Only ``ph`` and ``cat`` are
read for every event; the events are then grouped by (ph, cat) and the other
fields are turned into columns only for the groups the enabled comparators
need (python_function rows, 80% of a modern trace, are skipped unless the
operator comparison is on). ``args`` are batch-decoded per group with small
msgspec Structs.

Legacy PyTorch 1.8/1.9 traces (cats ``Kernel``, ``Memcpy``, ``Memset``,
``Operator``, ``Runtime``) are mapped case-insensitively; ``kernels.cat`` is
normalised to ``kernel`` / ``gpu_memcpy`` / ``gpu_memset`` and
``kernels.task_type`` keeps the cat as written in the file.
"""

from __future__ import annotations

from itertools import compress
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from ..errors import ProfileError
from ..model import (
    DRIVER_CATS,
    GPU_COMM_PREFIXES,
    KINETO_UNREAD_STREAMS,
    KINETO_ZERO_RESERVED,
    LAUNCH_CATS,
    NO_DEVICE_TIME,
    RUNTIME_CATS,
    STEP_MARK,
    Profile,
    block_frame,
    frame,
    gpu_framework_ops,
    next_at_address,
    object_array,
    object_full,
    repeats,
    row_keys,
    starts_at,
    step_notes,
    unread_categories,
)
from ..options import Options
from ..textsafe import short_text
from . import traceio
from .numparse import MAX_RESERVED_BYTES, duration_notes, zero_odd_durations

#: Lower-cased cat -> normalised kernels.cat.
KERNEL_CATS = {"kernel": "kernel", "gpu_memcpy": "gpu_memcpy", "gpu_memset": "gpu_memset",
               "memcpy": "gpu_memcpy", "memset": "gpu_memset"}
#: Lower-cased cats of host-side ops (reference-1 §4.1, plus the driver calls).
OP_CATS = frozenset({"cpu_op", "user_annotation", "operator", "runtime"}) | RUNTIME_CATS | DRIVER_CATS
#: Lower-cased flow cats kept in ``flows`` (``--gpu_flow_cat`` is added per run).
FLOW_CATS = frozenset({"ac2g", "async_cpu_to_gpu", "async_gpu", "async", "fwdbwd"})
#: Lower-cased cats of the events a trace holds by the million (ops, kernels, Python frames, instant events such
#: as "[memory]"), which Kineto never writes flows in: left out of the scan for other flow categories.
NOT_FLOW_CATS = frozenset(KERNEL_CATS) | OP_CATS | frozenset({"python_function", "cpu_instant_event",
                                                             "gpu_user_annotation", "trace"})
#: Lower-cased cats whose events are read as something else, so never searched for "[memory]" events.
NOT_MEMORY_CATS = frozenset(KERNEL_CATS) | OP_CATS | FLOW_CATS | {"python_function"}

# bool, list, dict: a boolean, an array or an object is no integer either; ``checked_ints`` / ``whole_int`` count
# it (a typed decode refused the trace)
_NUM = int | float | str | bool | None | list | dict  # runtime alias for msgspec

# Int args read with ``traceio.checked_ints`` (a bad value reads as absent, counted in one warning):
# those a misreading turns into other figures. ``sort_index`` feeds no figure and is read by
# ``traceio.whole_int`` (-1 when it is none, without a warning);
# args no comparator reads (External id, Sequence number, Fwd thread id) are not in the args structs at all: each
# field costs decode time on every event. The correlation of kernels and launch calls, read only to link what no
# launch flow links (flow ends without a start, collective kernels), is decoded apart (``_LaunchArgs``), or in
# ``_KernelCorrArgs`` / ``_OpCorrArgs`` in a trace without launch flows (``_reads_correlations``).
#: kernel ``device``: the devices that ran kernels (the summary's device count check)
_DEVICE = traceio.IntArg("kernel device id", "those kernels count on no device")
#: ``[memory]`` ``Bytes``: the size that opens (> 0) or closes (< 0: a free) a memory record; beyond 1 PB either way
#: it is no size either (as Total Reserved): -2**63 turned an allocation of 234 MB into a free, its operator's
#: Allocated Memory 233.96 MB -> 0, without a word (fuzz66b)
_BYTES = traceio.IntArg("[memory] Bytes value", "those events read as size 0 (they make no memory record)", 0,
                        (-MAX_RESERVED_BYTES, MAX_RESERVED_BYTES, "from -1 PB to 1 PB"))
#: ``[memory]`` ``Addr``: the key allocations and frees pair by
_ADDR = traceio.IntArg("[memory] Addr value", "each pairs only with the same value (read as a code below -1)",
                       key=True)
#: ``[memory]`` ``Total Reserved``: Mem Usage is its peak; out of 0 B - 1 PB it is no total either (as the NPU loaders)
_RESERVED = traceio.IntArg("[memory] Total Reserved value", "Mem Usage leaves them out", 0,
                           (0, MAX_RESERVED_BYTES, "from 0 to 1 PB"))
#: ``[memory]`` ``Device Id``: < 0 is host memory, which neither the memory comparison nor Mem Usage reads
_DEVICE_ID = traceio.IntArg("[memory] Device Id value", "those events read as host memory (Device Id -1)")


class _KernelArgs(msgspec.Struct, gc=False):
    stream: _NUM = None
    # Intel XPU kernels name their queue (an integer id) and no stream (Kineto's XpuptiActivityHandlers)
    sycl_queue: _NUM = msgspec.field(default=None, name="sycl queue")
    device: _NUM = None
    # Any: a value that is no text names no collective; it must not fail the trace
    collective: Any = msgspec.field(default=None, name="Collective name")


class _KernelCorrArgs(_KernelArgs, gc=False):
    """``_KernelArgs`` and the correlation id, for a trace without launch flows whose collective kernels
    ``_link_collectives_by_correlation`` links by it (``_reads_correlations``)."""

    correlation: Any = None  # Any, as _LaunchArgs'


class _OpArgs(msgspec.Struct, gc=False):
    # raw JSON text: many ops share the same shapes, so each distinct text is decoded and str()-ed once
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input Dims")
    # PyTorch 1.8's legacy traces (cat "Operator") spell it with a small d
    input_dims_18: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input dims")
    input_type: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input type")
    call_stack: Any = msgspec.field(default=None, name="Call stack")
    # record_param_comms ops only (Any: a value that is no text names no collective; it must not fail the trace)
    collective: Any = msgspec.field(default=None, name="Collective name")


class _OpCorrArgs(_OpArgs, gc=False):
    """``_OpArgs`` and the correlation id (launch calls only), beside ``_KernelCorrArgs``."""

    correlation: Any = None


#: PyTorch's record of each c10d collective (its args name the collective, the group, the sizes).
COMM_RECORD_OP = "record_param_comms"


class _MemArgs(msgspec.Struct, gc=False):
    total_reserved: _NUM = msgspec.field(default=None, name="Total Reserved")
    bytes: _NUM = msgspec.field(default=None, name="Bytes")
    addr: _NUM = msgspec.field(default=None, name="Addr")
    device_id: _NUM = msgspec.field(default=None, name="Device Id")


class _LaunchArgs(msgspec.Struct, gc=False):
    # Any: an odd value (a list, an object) only fails to name a launch; it must not fail the trace,
    # whose runtime calls' args were never checked before graph replays were linked
    correlation: Any = None


class _MetaArgs(msgspec.Struct, gc=False):
    name: Any = None
    sort_index: _NUM = None


def _text(values: list) -> np.ndarray:
    """Args rendered as the original shows them: str() of the value, "N/A" when absent."""
    return np.array(["N/A" if v is None else v if isinstance(v, str) else str(v) for v in values], dtype=object)


class _RawTexts:
    """``_text`` of raw JSON args values (absent = empty), fed batch by batch (``add``) and decoded once per
    distinct text (``values``): only the distinct texts are kept between batches, not each value's ``Raw``, which
    holds its whole args batch (``traceio.decode_args``'s ``each``)."""

    def __init__(self) -> None:
        self.first: dict[bytes, int] = {}  # each distinct text -> its first position
        self.pos: list[np.ndarray] = []  # per batch, each value's text's first position
        self.n = 0

    def add(self, raws: list) -> None:
        n = len(raws)
        # the texts as bytes from one join and split (JSON text holds no NUL byte: control characters are
        # escaped, and decode_trace blanks raw ones), not one bytes() per value (both columns of 4.4k ops: 2.6 ->
        # 2.2 ms)
        keys = b"\0".join(raws).split(b"\0") if n else []
        if len(keys) != n:
            keys = list(map(bytes, raws))
        self.pos.append(np.fromiter(map(self.first.setdefault, keys, range(self.n, self.n + n)), np.int64, n))
        self.n += n

    def values(self, path: str, odd: list | None = None) -> np.ndarray:
        """The values, each distinct text decoded once. ``odd``: where given, the values present that are no JSON
        array (null, a number, an object, a text: Kineto writes the input shapes and types as arrays) get (how
        many, the first as written) appended; tested once per distinct text."""
        out = np.empty(self.n, dtype=object)  # each distinct text's value, at its first position
        bad: dict[int, bytes] = {}  # the first positions of the distinct texts that are present and no array
        for k, i in self.first.items():
            try:
                x = msgspec.json.decode(k) if k else None
            except traceio.DECODE_ERRORS as exc:
                raise ProfileError(path, f"malformed event args: {traceio.decode_text(exc)}") from None
            except RecursionError:
                raise ProfileError(path, "malformed event args: values nested too deeply") from None
            out[i] = "N/A" if x is None else x if isinstance(x, str) else str(x)
            if odd is not None and k and not isinstance(x, list):
                bad[i] = k
        pos = np.concatenate(self.pos) if self.pos else np.arange(0)
        if bad:  # the first value of such a text is its first position: the earliest hit names the text
            hits = np.flatnonzero(np.isin(pos, list(bad)))
            odd.append((len(hits), bad[int(hits[0])].decode("utf-8", "replace")))
        return out[pos]


class _Events:
    """The decoded events with per-(ph, cat) index groups."""

    def __init__(self, path: str, events: list, data: bytes = b"") -> None:
        self.path = path
        self.events = events
        self.data = data
        self._exact: list | None = None  # traceio.exact_texts, read when float times are not exact
        n = len(events)
        with traceio.gc_paused():
            first: dict[str, int] = {}
            # code = index of the first event with that cat (cheapest grouping in pure Python; the cats go
            # straight from the getter into it, no list in between)
            self.codes = np.fromiter(map(first.setdefault, map(attrgetter("cat"), events), range(n)), np.int64, n)
        self.first = first
        self._lookup = np.zeros(len(events), dtype=bool)
        #: RawTsEvents: the events whose ts ``columns`` parsed (the others ``traceio.check_raw_ts`` checks)
        self.ts_read = np.zeros(len(events), dtype=bool) if events and type(events[0]) is traceio.RawTsEvent \
            else None
        self.negative = 0  # events with dur < 0 (read as 0, reported once)
        #: the kernel events in the kernels frame's row order (``_load_kernels``), for the args a later step decodes
        self.kernel_events: list = []
        #: ``_launch_calls``' decoded launch calls (event indices, events, positions of the ids only one call
        #: holds, those ids): the flow ends without a start and the collective kernels without a flow both look
        #: calls up, and decoding every call's args twice cost ~80 ms per 100 MB trace (hta's NVIDIA graphs)
        self.launch_ids: tuple[np.ndarray, list, np.ndarray, pd.Index] | None = None
        #: the distinct names of the collective kernels (``_load_kernels``, when the communication comparison is on)
        self.collective_names: set | None = None
        #: the kernels' correlation ids (``_ids``) in frame order, read with their other args (``_reads_correlations``)
        self.kernel_correlations: np.ndarray | None = None
        self.too_long = 0  # events lasting over MAX_DURATION_NS (read as 0, reported once)
        #: what the events whose ``dur`` was read are -> (how many had none, read as 0; how many there are)
        self.absent_durs: dict[str, tuple[int, int]] = {}
        #: (what the events are, "pid" / "tid") -> [how many had none (read as 0), how many a value that is no
        #: lane (a number beyond int64, "NaN": each read as a lane of its own), the first of those]
        self.odd_lanes: dict[tuple[str, str], list] = {}
        #: what ``where`` looked for -> (how many events of its categories had another ph, the first such ph)
        self.other_ph: dict[str, tuple[int, Any]] = {}
        #: what the events whose name was read are -> how many have none or an empty one (``_nameless_note``)
        self.nameless: dict[str, int] = {}
        #: what the events whose name was read are -> their distinct names (``traceio.SharedTexts``), for the looks
        #: at names that cost no pass over the events (``_step_mark_notes``)
        self.distinct_names: dict[str, traceio.SharedTexts] = {}

    def where(self, cats: set | frozenset, ph: tuple[str, ...] | None, what: str = "") -> tuple[np.ndarray, list]:
        """(indices in file order, events) of the events whose lower-cased cat is in ``cats``
        and whose ph is in ``ph`` (None: any ph but metadata "M"). ``what`` names the events where those of
        another ph are counted (``other_ph``): Kineto writes kernels and host ops as complete events ("X")
        alone, so one of another ph is damaged, and its leaving every figure was said nowhere."""
        firsts = [i for c, i in self.first.items() if c.lower() in cats]
        if not firsts:
            return np.zeros(0, dtype=np.int64), []
        if len(firsts) == 1:
            mask = self.codes == firsts[0]
        else:
            lk = self._lookup
            lk[firsts] = True
            mask = lk[self.codes]
            lk[firsts] = False
        idx = np.flatnonzero(mask)
        if 5 * len(idx) > 2 * len(self.codes):
            # a large share (the Python frames): one C-level pass over all events, which makes no int per
            # event as indexing does (42k of 50k events: 2.2 -> 1.0 ms), over the mask's bytes, as ascend_text._pick
            # does, with no list of a bool per event (the 1 GB timesformer trace's 4.1M of 4.9M: 0.13 -> 0.074 s)
            sub = list(compress(self.events, mask.view(np.uint8).tobytes()))
        else:
            sub = list(map(self.events.__getitem__, idx.tolist()))
        phs = list(map(attrgetter("ph"), sub))
        keep = None  # the usual case (every ph wanted) costs two C-level scans
        if ph is None:
            keep = [p != "M" for p in phs] if "M" in phs else None
        elif sum(map(phs.count, ph)) != len(phs):
            keep = [p in ph for p in phs]
            if what:
                self.other_ph[what] = (keep.count(False), phs[keep.index(False)])
        if keep is not None:
            idx = idx[np.array(keep, dtype=bool)]
            sub = [e for e, k in zip(sub, keep, strict=True) if k]
        return idx, sub

    def cat_codes(self, idx: np.ndarray, lower: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(a code per event of ``idx``, the distinct cats of those events that the codes index, lower-cased when
        asked). The events' category codes are numbered by hashing (``pd.factorize`` of int64: 3.8 against 38 ms
        for the sort of ``np.unique`` at 347k ops), and one lookup per distinct cat names them."""
        code, firsts = pd.factorize(self.codes[idx])
        ev = self.events
        return code, np.array([ev[i].cat.lower() if lower else ev[i].cat for i in firsts.tolist()], dtype=object)

    def cat_of(self, idx: np.ndarray, lower: bool = False) -> np.ndarray:
        """The cat of each event of ``idx`` (lower-cased when asked)."""
        code, cats = self.cat_codes(idx, lower)
        return cats[code]

    def cat_lower_of(self, idx: np.ndarray) -> np.ndarray:
        return self.cat_of(idx, lower=True)

    def columns(self, sub: list, fields: tuple[str, ...], idx: np.ndarray, what: str = "",
                lanes: tuple[str, ...] = ("pid", "tid"), into: dict[str, np.ndarray] | None = None
                ) -> dict[str, np.ndarray]:
        """Numpy columns of selected events (names, ints, ns times); ``idx`` are their event indices, ``what``
        names them where a ``dur`` is read (``absent_durs``) or one of their ``lanes`` ids is damaged
        (``odd_lanes``). ``into``: int64 arrays (a block's rows) some columns are written into, each as soon as it
        is read, so that no whole column is held twice."""
        out: dict[str, np.ndarray] = {}
        n = len(sub)
        with traceio.gc_paused():
            for f in fields:
                get = attrgetter(f)
                if f in ("pid", "tid"):
                    out[f], missing, vals = traceio.lane_ids(sub, f, None if into is None else into.get(f))
                    absent = int(np.count_nonzero(missing))
                    odd = traceio.odd_lanes(vals) if vals is not None else (0, None)
                    if what and f in lanes and (absent or odd[0]):  # lane 0 / one of its own: ``traceio.lane_notes``
                        lane = self.odd_lanes.setdefault((what, f), [0, 0, None])
                        lane[0] += absent
                        lane[1] += odd[0]
                        lane[2] = odd[1] if lane[2] is None else lane[2]
                    _settle(out, into, f)
                    continue
                if f not in ("ts", "dur"):  # text (names): equal ones as one object
                    seen = traceio.SharedTexts()
                    out[f] = traceio.shared_texts(map(get, sub), n, seen)
                    if what:
                        self.distinct_names[what] = seen
                    if what and "" in seen:  # no name, or an empty one: counted only then (the distinct texts)
                        self.nameless[what] = self.nameless.get(what, 0) + int(np.count_nonzero(out[f] == ""))
                    continue
                vals = traceio.time_values(sub, f)  # a list, or (millions of numbers) their array
                row = None if into is None else into.get(f)  # float times are converted into it: no second array
                try:
                    if f == "ts" and len(vals) and type(vals[0]) is msgspec.Raw:  # traceio.RawTsEvent
                        out[f] = traceio.raw_times_to_ns(vals, self.path, f)
                        self.ts_read[idx] = True  # set for a trace of RawTsEvents (``__init__``)
                    elif f == "ts":
                        out[f], inexact = traceio.times_to_ns(vals, self.path, f, row)
                        if inexact:
                            out[f] = self._exact_ts(idx)
                    else:
                        # a dur float64 cannot hold to the ns is over 2e12 us, so read as 0 here (over a week)
                        # whatever its digits: no re-read for it
                        out[f], _, absent = traceio.durs_to_ns(
                            vals, lambda v, row=row: (traceio.to_ns(v, self.path, "dur", row), False))
                except traceio.TimeValueError as exc:  # the event named: ``idx`` holds the events' places
                    raise traceio.event_time_error(exc, self.path, self.events, int(idx[exc.row]), True,
                                                   self.data) from None
                if f == "dur":
                    self.absent_durs[what] = (0 if absent is None else int(absent.sum()), n)
                    n_neg, n_long = zero_odd_durations(out[f])
                    self.negative += n_neg
                    self.too_long += n_long
                del vals  # the times' list is not held through the next column's read
                _settle(out, into, f)
        if "dur" in out:
            traceio.check_ends(self.path, out["ts"], out["dur"])
        return out

    def _exact_ts(self, idx: np.ndarray) -> np.ndarray:
        """The exact ``ts`` of the events ``idx`` from a second, times-only decode (``traceio.exact_texts``):
        only where ``decode_events(raw_ts=True)``'s guess missed, a trace whose first float ts (first 64 KiB)
        is below 2**42 us and a later one is not, which no trace of the samples or tests is (the one-pass
        figures in docs/performance.md)."""
        if self._exact is None:
            self._exact = traceio.exact_texts(self.path, self.data)
        return traceio.exact_ns(self.path, self._exact, "ts", idx)

    def args(self, sub: list, struct: type, each: Any = None) -> list:
        # fromiter: assigning a list of msgspec.Raw into an object array probes each for the buffer protocol
        raws = np.fromiter(map(attrgetter("args"), sub), dtype=object, count=len(sub))
        return traceio.decode_args(self.path, raws, struct, each)


def _settle(out: dict[str, np.ndarray], into: dict[str, np.ndarray] | None, f: str) -> None:
    """Column ``f`` of ``out`` copied into its array of ``into`` (if any), which replaces it (the read one is freed)."""
    if into is not None and f in into:
        if not np.may_share_memory(out[f], into[f]):  # float times converted into it already
            into[f][:] = out[f]
        out[f] = into[f]


#: ``flows.replay`` of a flow end whose start is missing, linked by correlation id to a launch call that is no
#: graph launch and launched no other kernel: a launch as a pair is (ROCm writes its hipMemsetAsync calls' flows so).
LOST_START = 2

#: The category of the CUPTI range profiler's per-kernel counter events (no timeline of their own).
RANGE_PROFILER_CAT = "cuda_profiler_range"


def load(layout: Any, opts: Options, data: bytes | None = None) -> Profile:
    """Load one Kineto trace into a GPU ``Profile`` (see the module docstring)."""
    path = layout.trace_path
    if data is None:
        data = traceio.read_bytes(path, opts.force)
    events, top, data, note = traceio.decode_trace(path, data)
    if top is None:
        raise ProfileError(path, "not a Kineto trace (expected a JSON object with traceEvents)")
    if not (events and type(events[0]) is traceio.RawTsEvent):
        profile = _load(layout, opts, path, data, events, top)
    else:
        try:  # ts kept as text: a ts the float decode refuses comes before any other error (traceio.check_raw_ts)
            profile = _load(layout, opts, path, data, events, top)
        except ProfileError:
            traceio.check_raw_ts(path, data, events)
            raise
    if note:
        profile.warnings.insert(0, note)
    return profile


def _load(layout: Any, opts: Options, path: str, data: bytes, events: list, top: Any) -> Profile:
    prof = Profile(path=layout.given, kind="GPU", source="kineto", files={"trace": path})
    if isinstance(top.deviceProperties, list):
        prof.device_properties = top.deviceProperties
    if isinstance(top.metadata, dict):
        prof.metadata = dict(top.metadata)
    if top.distributedInfo is not None:
        prof.metadata.setdefault("distributedInfo", top.distributedInfo)
    if top.schemaVersion is not None:  # Kineto's mark: the trace's framework (``model.kineto_written``)
        prof.metadata.setdefault("schemaVersion", top.schemaVersion)
    ev = _Events(path, events, data)
    details = opts.any_detail() or opts.enable_communication_compare
    prof.extra["shapes_read"] = details  # the shape check's words (checks._shapeless_words): read, or not
    corr = _reads_correlations(ev, opts)
    _load_kernels(prof, ev, opts, corr)
    if prof.kernels.empty and prof.extra.get("mtia"):  # refused whatever else it holds: the other loaders took
        raise mtia_error(path, prof.extra["mtia"])  # ~2/3 of the time to this refusal (87 MB hta sample)
    _load_ops(prof, ev, with_args=details, comm=opts.enable_communication_compare,
              corr=ev.kernel_correlations is not None)  # the launch calls' ids too, where the kernels' were read
    if len(prof.ops):
        prof.warnings.extend(step_notes(path, prof.ops["name"].to_numpy(), prof.ops["ts"].to_numpy(),
                                        prof.ops["dur"].to_numpy(), selectable=False))
    _load_flows(prof, ev, opts)
    if opts.enable_communication_compare:
        _link_collectives_by_correlation(prof, ev)
    _load_memory(prof, ev)
    _load_meta(prof, ev)
    prof.extra["unread_cats"] = _unread_cats(ev)
    note = _unread_note(prof, ev)
    if note:
        prof.warnings.append(note)
    if opts.enable_operator_compare:
        _load_python(prof, ev)
    prof.warnings.extend(_step_mark_notes(prof, ev))
    if ev.ts_read is not None:  # RawTsEvents: the ts no loader parsed are checked still
        traceio.check_raw_ts(path, data, events, ev.ts_read)
    prof.warnings.extend(duration_notes(path, ev.negative, ev.too_long))
    note = traceio.absent_dur_note(path, ev.absent_durs)
    if note:
        prof.warnings.append(note)
    prof.warnings.extend(traceio.lane_notes(path, ev.odd_lanes))
    if ev.nameless:
        prof.warnings.append(_nameless_note(path, ev.nameless))
    prof.warnings.extend(traceio.other_ph_note(path, n, what, first) for what, (n, first) in ev.other_ph.items())
    return prof


def _step_mark_notes(prof: Profile, ev: _Events) -> list[str]:
    """Warnings for step markers the step scan does not take: a host op named so in another case
    (``traceio.odd_step_mark_note``), and a Python function named ``ProfilerStep#N`` whose id no host op marks,
    which is no step (the step count check reads none). Only the distinct names are looked at, and the rows only
    where some name is such a marker. Python functions unread (no operator comparison) have their names read alone
    where no host op is named as a marker (``_python_mark_names``), as the text loader does."""
    notes = []
    ops = ev.distinct_names.get("host events")
    odd = traceio.odd_step_marks(ops or ())
    if odd and (note := traceio.odd_step_mark_note(ev.path, prof.ops["name"].to_numpy(), odd, "host events", False)):
        notes.append(note)
    python = ev.distinct_names.get("Python functions")
    names = prof.python_functions["name"].to_numpy() if python else None
    if python is None and (python := _python_mark_names(ev, ops)):
        names = object_array([e.name for e in ev.where(frozenset({"python_function"}), ("X",))[1]])
    if python and (note := traceio.python_step_mark_note(ev.path, names, python, lambda: ops or (),
                                                         "cpu_op, user_annotation")):
        notes.append(note)
    return notes


def _python_mark_names(ev: _Events, ops: Any) -> list[str]:
    """The distinct names holding ``ProfilerStep#`` of the python_function events, which the loader did not read,
    where no host op bears a marker name (``ops``: their distinct names): a marker written as a Python function
    alone left the step count check blank unsaid in a default run. A trace whose steps are host ops (every stepped
    sample) pays one look at its host ops' distinct names; one without them a pass over its Python functions'
    names (~40 ns each: 6 ms CPU for the 162k of xdit_flux.1's capture trace, 2.7% of its load). Beside a host
    marker a Python function's marker is said only with the operator comparison: no cheaper test exists (the decode
    keeps each name as its own str, no set or count of them; bytes.count over the file is slower than the pass,
    5.3 against 1.7 ms on timesformer h100), and the pass would cost such a trace ~3% of its load (its 42,330
    Python functions)."""
    firsts = [i for c, i in ev.first.items() if c.lower() == "python_function"]
    if not firsts or any(STEP_MARK in n for n in ops or () if isinstance(n, str)):
        return []
    mask = ev.codes == firsts[0] if len(firsts) == 1 else np.isin(ev.codes, firsts)
    return [n for n in set(map(attrgetter("name"), compress(ev.events, mask.view(np.uint8).tobytes())))
            if isinstance(n, str) and STEP_MARK in n]


def _nameless_note(path: str, nameless: dict[str, int]) -> str:
    """One warning for the kernels, host events and Python functions without a name (or with an empty one): a
    kernel's name gives its computing category and a host event's its operator, API and module rows, so such an
    event moved a kernel between categories (vLLM's decode trace: Cube 145 -> 144 kernels, Vector 280 -> 281) or
    made an op row named "" without a word (commfuzz62)."""
    counted = [traceio.counted(n, what) for what, n in nameless.items()]
    they = "it" if sum(nameless.values()) == 1 else "they"
    return traceio.nameless_note(path, counted, f"no category, operator or API row can tell what {they} ran")


def _reads_correlations(ev: _Events, opts: Options) -> bool:
    """Whether the kernels' and launch calls' ``correlation`` args are read in the decodes of their other args.

    Why: ``_link_collectives_by_correlation`` needs the correlation of every kernel no launch flow ends at and of
    every launch call. In a trace holding no event of a launch flow category, that is every kernel: a decode of
    its own re-read all their args (~65 ms per side of a 108 MB flowless trace, ~20 MB of kernel args and ~5 MB
    of launch calls'), where one more field in the kernel and op decodes costs ~7 ms (and ~7 MiB more peak memory
    a side: the ops' args hold the launch calls' ids). A trace with launch flows keeps deciding after the flows are
    read, and decodes nothing more where they reach its collective kernels."""
    if not opts.enable_communication_compare:
        return False
    launch = (FLOW_CATS - {"fwdbwd"}) | ({opts.gpu_flow_cat.lower()} if opts.gpu_flow_cat else set())
    return not any(c.lower() in launch for c in ev.first)


def mtia_error(path: str, categories: list[str]) -> ProfileError:
    """The refusal of a trace whose device work is an MTIA accelerator's (``mtia_*`` categories, not read)
    instead of GPU kernels: the advice to record ``ProfilerActivity.CUDA`` cannot apply to it."""
    from ..textsafe import term_safe

    named = ", ".join(term_safe(c) for c in categories[:3]) + (", ..." if len(categories) > 3 else "")
    return ProfileError(path, f"no GPU kernel, memcpy or memset events in the trace: it holds an MTIA accelerator's "
                              f"events ({named}), which are not supported")


def _load_kernels(prof: Profile, ev: _Events, opts: Options, corr: bool = False) -> None:
    """The kernels frame (memcpy and memset events too). A trace none of whose kernels has a ``dur`` is refused
    only by a run that reads their time (``traceio.device_time_readers``); the API and memory comparisons read
    host events and memory records and go on with the absent-dur warning."""
    comm = opts.enable_communication_compare
    idx, sub = ev.where(frozenset(KERNEL_CATS), ("X",), "kernel, memcpy or memset")
    if not len(idx):
        # the CUPTI range profiler (``_ExperimentalConfig(profiler_metrics=...)``) writes its kernels' counters
        # as "cuda_profiler_range" events instead of a kernel timeline: say so when the trace is refused
        prof.extra["range_profiler"] = any(c.lower() == RANGE_PROFILER_CAT for c in ev.first)
        # an MTIA accelerator's device activity (mtia_ccp_events, mtia_runtime, ...), which is not read
        prof.extra["mtia"] = sorted(c for c in ev.first if c.lower().startswith("mtia_"))
        return
    ev.kernel_events = sub
    cols = ev.columns(sub, ("name", "ts", "dur", "pid", "tid"), idx, "kernels")
    readers = traceio.device_time_readers(opts)
    if ev.absent_durs["kernels"][0] == len(idx):
        # every device figure would read 0 (computing, communication, kernel times) and the E2E all free time
        # against the other side's: a breakdown made of no time at all, which names no real difference
        if readers:
            raise traceio.no_device_time(ev.path, f"{len(idx):,} kernels", readers,
                                         "the API and memory comparisons do not read them and run without them")
        prof.extra[NO_DEVICE_TIME] = True
    if comm:  # tested once per distinct name, found as a set (equal names are mostly one object: ~10x cheaper than
        # numbering them, 4 against 40 ms for 78k kernels), as every trace with the communication comparison on pays it
        ev.collective_names = {n for n in set(cols["name"].tolist())
                               if isinstance(n, str) and n.lower().startswith(GPU_COMM_PREFIXES)}
    corr = corr and bool(ev.collective_names)
    args = ev.args(sub, _KernelCorrArgs if corr else _KernelArgs)
    if corr:
        ev.kernel_correlations = _ids([a.correlation for a in args])  # an array: ints of their own weigh 5x more
    cols["cat"] = np.array([KERNEL_CATS[c] for c in ev.cat_lower_of(idx)], dtype=object)
    cols["task_type"] = ev.cat_of(idx)
    streams = [a.sycl_queue if a.stream is None else a.stream for a in args]
    cols["stream"] = traceio.checked_ints(ev.path, streams, traceio.STREAM_ID, prof.warnings)
    # no stream arg at all: Kineto's device lane (tid) is the stream (CUPTI) or HIP queue (roctracer), which
    # ROCm builds of PyTorch ~1.13-2.3 wrote without a "stream" arg; a named lane ("stream 7") stays none
    absent = np.fromiter((s is None for s in streams), dtype=bool, count=len(streams))
    unread = np.flatnonzero(~absent & (cols["stream"] < 0))
    if len(unread):
        # the arg as the trace names it: an Intel XPU trace's queue is no args.stream
        queue = sum(args[i].stream is None for i in unread.tolist())
        field = " / ".join(f for f, n in (("args.stream", len(unread) - queue), ('args["sycl queue"]', queue)) if n)
        prof.extra[KINETO_UNREAD_STREAMS] = (len(unread), streams[int(unread[0])], field)
    if absent.any():
        cols["stream"] = np.where(absent & (cols["tid"] >= 0), cols["tid"], cols["stream"])
    cols["device"] = traceio.checked_ints(ev.path, [a.device for a in args], _DEVICE, prof.warnings)
    colls = [a.collective for a in args]
    if any(c is not None for c in colls):
        cols["collective"] = _collective_texts(colls)
    prof.kernels = frame("kernels", cols)


#: Lower-cased cats of Kineto's events that hold no GPU work the loader could read (its ActivityType names,
#: tb_plugin's legacy "Python" and "Memory"), beside those it reads: ``_unread_cats`` leaves them out.
KNOWN_OTHER_CATS = frozenset({"python_function", "python", "gpu_user_annotation", "cpu_instant_event", "trace",
                              "memory", "overhead", "cuda_sync", "external_correlation", "glow_runtime",
                              "collective_comm", RANGE_PROFILER_CAT})


def _unread_cats(ev: _Events) -> dict[str, int]:
    """{cat: complete events} of the categories the loader neither reads nor knows as Kineto's own
    (``KNOWN_OTHER_CATS``), which the refusal of a trace without kernels and the reason of a side without ops name
    (``model.unread_categories``): a trace whose kernels were written under another name (``gpu_kernel``) was told
    its "kernel events were lost or cut from the file", one whose ops were (``cpu_operator``) that it was "a GPU
    trace without cpu_op events". A trace of known categories alone (every sample) pays a look at its distinct
    categories."""
    known = frozenset(KERNEL_CATS) | OP_CATS | FLOW_CATS | KNOWN_OTHER_CATS  # flows: no complete event to count
    other = frozenset(c.lower() for c in ev.first if c and c.lower() not in known and not c.lower().startswith("mtia_"))
    if not other:
        return {}
    idx, _ = ev.where(other, ("X",))
    if not len(idx):
        return {}
    cats, counts = np.unique(ev.cat_of(idx).astype(str), return_counts=True)
    return dict(zip(cats.tolist(), counts.tolist(), strict=True))


def _unread_note(prof: Profile, ev: _Events) -> str:
    """The warning for complete events of categories the loader does not read (``_unread_cats``) or of none, in a
    trace it reads kernels and ops from: a kernel or op whose cat was damaged ("kernel " or "" for "kernel") left
    every figure without a word, where a trace without kernels or ops names them in its refusal or reason. No
    sample holds such events, and a trace of known categories pays one look at its distinct categories."""
    if prof.kernels.empty or prof.ops.empty:
        return ""
    unread = prof.extra["unread_cats"]
    none = len(ev.where(frozenset({""}), ("X",))[0]) if "" in ev.first else 0
    if not unread and not none:
        return ""
    named = unread_categories(prof)
    parts = ([f"{sum(unread.values()):,} of categories it does not know ({named})"] if unread else []) + (
        [f"{none:,} without a cat"] if none else [])
    return (f"{ev.path}: {sum(unread.values()) + none:,} complete event(s) not read, so they count in no figure: "
            f"{'; '.join(parts)}")


def _collective_texts(values: list) -> np.ndarray:
    return np.array([v if isinstance(v, str) else "" for v in values], dtype=object)


def _odd_shapes_note(path: str, odd: list[tuple[int, str]], dims: int) -> str:
    """One warning for the host ops whose Input Dims / Input type arg is no array (null, a number, an object:
    ``_RawTexts.values``), which changed the Input Shapes / Input Type columns, and the ops matched by them, without a
    word: each is shown as written (null as N/A, as an absent one), as the original's str() shows it.
    ``dims``: how many of ``odd``'s entries are Input Dims' (the first, where any)."""
    names = ["Input Dims"] * dims + ["Input type"] * (len(odd) - dims)
    parts = [f"{n:,} {arg}" for (n, _), arg in zip(odd, names, strict=True)]
    return (f"{path}: {' and '.join(parts)} arg(s) of host ops are no list (the first: {short_text(odd[0][1])}); "
            "each is shown as written (null as N/A, as an absent one) in those ops' input shape / type cells and "
            "the rows keyed by them")


def _load_ops(prof: Profile, ev: _Events, with_args: bool, comm: bool = False, corr: bool = False) -> None:
    idx, sub = ev.where(OP_CATS, ("X",), "host op or runtime call")
    if not len(idx):
        return
    cols = ev.columns(sub, ("name", "ts", "dur", "pid", "tid"), idx, "host events")
    cat_code, op_cats = ev.cat_codes(idx, lower=True)
    cols["cat"] = op_cats[cat_code]
    n = len(idx)
    if with_args:
        # the fields read are taken from each batch of structs as it is decoded: the structs' Raw fields hold
        # their batch's whole args text (1 GB GPU pair: ~165 MiB of op args alive at once, ~125 MiB of it left as
        # free heap after the second side's load)
        dims, types, stacks = _RawTexts(), _RawTexts(), []
        colls: list = []
        corrs: list = []

        def take(batch: list) -> None:
            dims.add([a.input_dims or a.input_dims_18 for a in batch])
            types.add([a.input_type for a in batch])
            stacks.extend([a.call_stack for a in batch])
            if comm:
                colls.extend([a.collective for a in batch])
            if corr:
                corrs.extend([a.correlation for a in batch])

        ev.args(sub, _OpCorrArgs if corr else _OpArgs, each=take)
        if corr:  # the launch calls (LAUNCH_CATS are op cats): the ones ``_launch_calls`` would decode again
            cats = [i for c, i in ev.first.items() if c.lower() in LAUNCH_CATS]
            launch = np.flatnonzero(np.isin(ev.codes[idx], cats))
            rows = launch.tolist()
            _index_launch_calls(ev, idx[launch], [sub[i] for i in rows], [corrs[i] for i in rows])
        odd: list[tuple[int, str]] = []
        cols["input_dims"] = dims.values(ev.path, odd)
        dims_odd = len(odd)
        cols["input_type"] = types.values(ev.path, odd)
        if odd:
            prof.warnings.append(_odd_shapes_note(ev.path, odd, dims_odd))
        cols["call_stack"] = _text(stacks)
    else:
        na = object_full(n, "N/A")
        cols["input_dims"] = na
        cols["input_type"] = na
        cols["call_stack"] = na
    if comm and with_args:  # CommunicationCompare names RCCL's generic kernels by the record around their launch
        records = np.flatnonzero(cols["name"] == COMM_RECORD_OP).tolist()
        if records:
            coll = object_full(n, "")
            coll[records] = _collective_texts([colls[i] for i in records])
            cols["collective"] = coll
    if copies := _op_copies(cols, sub):
        prof.warnings.append(f"{ev.path}: {copies:,} host event(s) with a duration repeat another exactly (name, "
                             "time, duration, thread and args: a trace merged or written twice?); each is read as "
                             "written, so ApiCompare counts it again in its op's Calls and Total Duration")
    prof.ops = frame("ops", cols)
    prof.extra["framework_ops"] = gpu_framework_ops(cols["cat"], cols["name"], (cat_code, op_cats))


def _op_copies(cols: dict[str, np.ndarray], sub: list) -> int:
    """How many host events with a duration repeat an earlier one in every field, args included. The columns
    alone cannot tell a copy: one thread's calls can start and end together (hta's traces: aten::zeros twice in
    one us, External ids 1931 and 1932; aten::result_type six times), and zero-length calls share a time by the
    thousand, so only the few events whose time, duration, lane and name another shares (``row_keys``; an
    integer-us trace's nested calls share a start by the thousand: hta's negative_queue_length_values_check) have
    their category and raw args read and compared (``repeats``; every sample: none repeats another). Zero-length
    events are left out: a copy of one moves only its op's ApiCompare Calls (by 1, its Total Duration by 0), a
    trace written twice repeats its timed events too and is said by them, and taking them in doubled the check's
    cost (session 63: hta negative_queue_length_values_check, 30,423 zero-length host events, 4.6 -> 10.2 ms, 3,904
    tied rows' args read; param's resnet_kineto 5.0 -> 9.5 ms) to find no copy in any sample."""
    pos = np.flatnonzero(cols["dur"] > 0)
    pos = pos[pd.Index(cols["ts"][pos]).duplicated(keep=False)]  # hashing the starts, then the rows that tie
    if pos.size < 2:
        return 0
    fields = [cols[k] for k in ("ts", "dur", "pid", "tid", "name")]
    pos = pos[pd.Index(row_keys(fields, pos)).duplicated(keep=False)]
    if not pos.size:
        return 0
    picked = [sub[i] for i in pos.tolist()]
    raw = [object_array([e.cat for e in picked]), object_array([bytes(e.args) for e in picked])]
    return repeats([*(f[pos] for f in fields), *raw], np.arange(pos.size))


def _load_flows(prof: Profile, ev: _Events, opts: Options) -> None:
    cats = set(FLOW_CATS)
    if opts.gpu_flow_cat:
        cats.add(opts.gpu_flow_cat.lower())
    idx, sub = ev.where(frozenset(cats), ("s", "f"))
    cat = ev.cat_lower_of(idx) if len(idx) else np.zeros(0, dtype=object)
    unmatched = bool(opts.gpu_flow_cat) and not (cat == opts.gpu_flow_cat.lower()).any()
    if not len(idx) or (cat == "fwdbwd").all() or unmatched:
        # no flow that links ops to kernels (or none of --gpu_flow_cat's category): the flow categories it is not
        # read from are named in the "no flow event" warning, whose --gpu_flow_cat hint would mislead a trace
        # without any (only then: a scan of the other categories' events)
        others = frozenset(c.lower() for c in ev.first) - cats - NOT_FLOW_CATS
        # flow starts and ends only: --gpu_flow_cat reads no flow step ("t"), so a category of steps alone is no hint
        o_idx, _ = ev.where(others, ("s", "f")) if others else (np.zeros(0, np.int64), [])
        if len(o_idx):
            prof.extra["other_flow_cats"] = sorted(set(ev.cat_of(o_idx).tolist()))
    if not len(idx):
        return
    cols = ev.columns(sub, ("ts", "pid", "tid"), idx, "flow events")
    n = len(idx)
    is_s = np.fromiter(map("s".__eq__, map(attrgetter("ph"), sub)), dtype=bool, count=n)
    fb = np.flatnonzero(~is_s & (cat == "fwdbwd"))
    if fb.size:
        # the backward thread is the tid of the first fwdbwd flow end in the file
        prof.backward_tid = int(cols["tid"][fb[0]])
    # pair by (cat, id): ids are ints or strings (5 and "5" differ), None is no id; a later start /
    # end of the same key overwrites an earlier one, and flows keep the order of each key's first
    # appearance, start or end (the original's flow dict)
    id_code, id_uniq = pd.factorize(np.fromiter(map(attrgetter("id"), sub), dtype=object, count=n))
    cat_code, cat_uniq = pd.factorize(cat)
    pos = np.flatnonzero(id_code >= 0)
    key, _ = pd.factorize(cat_code[pos].astype(np.int64) * len(id_uniq) + id_code[pos])  # first-appearance order
    nkeys = int(key.max()) + 1 if key.size else 0
    last = np.full((2, nkeys), -1, dtype=np.int64)  # row 0: last end, row 1: last start of each key
    np.maximum.at(last, (is_s[pos].astype(np.intp), key), pos)
    both = (last >= 0).all(axis=0)
    if note := _restarted_flows_note(ev.path, cols, cat, id_uniq[id_code[pos]], pos, key, is_s[pos]):
        prof.warnings.append(note)
    # the fwdbwd category's code, where the trace holds one; its flows are read by the module tree alone, which the
    # operator comparison builds: only that run says a lone one (as the Python functions beside them)
    fwd = np.flatnonzero(cat_uniq == "fwdbwd") if opts.enable_operator_compare else np.zeros(0, np.intp)
    if fwd.size and (note := _lone_fwdbwd_note(ev.path, cat_code == fwd[0], id_code, id_uniq, last, both)):
        prof.warnings.append(note)
    si, fi = last[1][both], last[0][both]
    out = {
        "id": np.array(list(map(str, id_uniq[id_code[si]].tolist())), dtype=object), "cat": cat[si],
        "s_ts": cols["ts"][si], "s_pid": cols["pid"][si], "s_tid": cols["tid"][si],
        "f_ts": cols["ts"][fi], "f_pid": cols["pid"][fi], "f_tid": cols["tid"][fi],
        "replay": np.zeros(si.size, dtype=np.int64),
    }
    # the other launch-flow ends (a graph launch's kernels share its flow id; the original keeps one end
    # per key), those at a kernel start: most ends without a start sit on host calls
    m = ~is_s[pos] & ~(both[key] & (last[0][key] == pos)) & (cat[pos] != "fwdbwd")
    ends, ekey = pos[m], key[m]
    k = prof.kernels
    on = starts_at(cols["pid"][ends], cols["tid"][ends], cols["ts"][ends], k["pid"].to_numpy(dtype=np.int64),
                   k["tid"].to_numpy(dtype=np.int64), k["ts"].to_numpy(dtype=np.int64))
    ends, ekey = ends[on], ekey[on]
    if ends.size:
        ends, ekey = _distinct_ends(cols, ends, ekey, np.where(both, last[0], -1))
    if ends.size:
        start = last[1][ekey]
        s_cols = {k: cols[k][np.maximum(start, 0)] for k in ("ts", "pid", "tid")}
        if note := _plain_launch_ends_note(ev.path, prof, s_cols, start >= 0, id_uniq[id_code[ends]], cat[ends]):
            prof.warnings.append(note)
        replay = np.ones(ends.size, dtype=np.int64)
        lone = np.flatnonzero(start < 0)  # no start: the graph launch call by correlation id
        found = _launch_calls(ev, id_uniq[id_code[ends[lone]]])
        ok = start >= 0
        if found is not None:
            hit, call = found
            ok[lone[hit]] = True
            for k in s_cols:
                s_cols[k][lone[hit]] = call[k]
            # the one end of a plain launch call (cudaLaunchKernel, hipMemsetAsync) whose flow start is missing is
            # its kernel's launch as a pair is (LOST_START), not a graph replay: read as one, its kernel lost its op
            # in the time breakdown (a cut start: Matmul and Flash Attention kernels read as Cube (other) and
            # Vector) without a word
            single = np.flatnonzero(~pd.Index(ekey[lone[hit]]).duplicated(keep=False))  # few: a graph's are many
            replay[lone[hit[single[_plain_calls(call["name"][single])]]]] = LOST_START
        ends, replay = ends[ok], replay[ok]
        for k, v in (("id", np.array(list(map(str, id_uniq[id_code[ends]].tolist())), dtype=object)),
                     ("cat", cat[ends]), ("s_ts", s_cols["ts"][ok]), ("s_pid", s_cols["pid"][ok]),
                     ("s_tid", s_cols["tid"][ok]), ("f_ts", cols["ts"][ends]), ("f_pid", cols["pid"][ends]),
                     ("f_tid", cols["tid"][ends]), ("replay", replay)):
            out[k] = np.concatenate([out[k], v])
        # rows in the order of their key's first appearance, as the pairs are, and the ends of one key in
        # time order: a graph's kernels are listed (Kernel Details) as they ran
        order = np.lexsort((out["f_ts"], np.concatenate([np.flatnonzero(both), ekey[ok]])))
        out = {k: v[order] for k, v in out.items()}
    prof.flows = frame("flows", out)


def _restarted_flows_note(path: str, cols: dict[str, np.ndarray], cat: np.ndarray, ids: np.ndarray, pos: np.ndarray,
                          key: np.ndarray, starts: np.ndarray) -> str:
    """The warning for flow ids that start twice at different times or threads (``pos``: the flow events with an id,
    ``key`` their (cat, id) key, ``ids`` their ids, ``starts`` which are starts). Kineto starts each flow once, on
    the call that launched the work (no sample repeats a start: 81 traces, ac2g / async / async_gpu / fwdbwd);
    the ends may repeat (a graph launch's kernels). The pairing keeps a key's last start, as the original's flow
    dict does, so a reused id linked the earlier launch's kernel to the later launch's op or to none, which moved
    it between operators and Cube / Vector without a word (fuzz66b). An exact copy of a start changes no link and
    is not counted. Costs a count of the starts per key; the rows only where a key starts twice."""
    skey = key[starts]
    if not skey.size:
        return ""
    many = np.bincount(skey)[skey] > 1
    if not many.any():
        return ""
    rows = pos[starts][many]
    distinct = pd.DataFrame({"k": skey[many], "ts": cols["ts"][rows], "pid": cols["pid"][rows],
                             "tid": cols["tid"][rows]}).drop_duplicates()
    again = distinct["k"].to_numpy()[distinct["k"].duplicated(keep=False).to_numpy()]
    if not again.size:
        return ""
    n = int(np.unique(again).size)
    first = int(np.flatnonzero(np.isin(skey, again))[0])  # the earliest start of such a key in the file
    at = np.flatnonzero(starts)[first]
    return (f"{path}: {traceio.counted(n, 'flow ids')} {'starts' if n == 1 else 'start'} more than once, at "
            "different times or threads (the first: "
            f"{short_text(str(cat[pos[at]]))} flow {short_text(str(ids[at]))}); each is paired with its last start, "
            "as the original pairs them, so the work its earlier starts launched is linked to the later launch's "
            "op or to none: ids reused, or traces merged?")


def _lone_fwdbwd_note(path: str, fwdbwd: np.ndarray, id_code: np.ndarray, id_uniq: Any, last: np.ndarray,
                      both: np.ndarray) -> str:
    """The warning for fwdbwd flows with one end alone (a start and no end, or an end and no start) and fwdbwd flow
    events without an id. PyTorch writes a forward op's link to its backward op with both ends (every sample's
    fwdbwd flows pair: 6 traces, 4 to 905 each), so one end alone is damage, and it left the backward op out of its
    forward module's backward pseudo-module, which moved the module sheets' rows without a word (fuzz66b: one end
    dropped from the AlexNet H200 trace, a Backward module's op gone). ``last``: each key's last end (row 0) and start
    (row 1), ``both``: the keys holding both, ``fwdbwd``: which flow events are fwdbwd's. Costs a look at each key's
    category, in a trace with fwdbwd flows; said only in a run of the operator comparison, which builds the module
    tree (another run reads of the fwdbwd flows the backward thread's id alone)."""
    rep = np.maximum(last[0], last[1])  # a flow event of each key
    lone = np.flatnonzero(~both & fwdbwd[rep])
    no_id = int(np.count_nonzero((id_code < 0) & fwdbwd))
    if not lone.size and not no_id:
        return ""
    parts = []
    if lone.size:
        first = rep[lone[0]]  # keys are numbered in first-appearance order
        parts.append(f"{traceio.counted(int(lone.size), 'fwdbwd flows')} with one end alone (the first: id "
                     f"{short_text(str(id_uniq[id_code[first]]))})")
    if no_id:
        parts.append(f"{traceio.counted(no_id, 'fwdbwd flow events')} without an id")
    return (f"{path}: {' and '.join(parts)}; PyTorch writes both ends of each, so the backward op such a flow would "
            "link to its forward op is placed in no backward module (the module comparison leaves it out of them): "
            "flows lost, or a trace cut?")


def _plain_launch_ends_note(path: str, prof: Profile, s_cols: dict[str, np.ndarray], started: np.ndarray,
                            ids: np.ndarray, cats: np.ndarray) -> str:
    """The warning for launch flows that end at a second kernel although they start on a launch call that is no graph
    launch (``s_cols``: the start of each further end at a kernel, ``started``: which have one). A graph launch's
    kernels share its flow id; a plain launch (cudaLaunchKernel, cudaMemcpyAsync, ...) launches one piece of work, so
    its id ending at another kernel is an id reused or traces merged: that kernel was read as the call's graph replay,
    linked to its op, and moved between operators and Cube / Vector without a word (fuzz66b: one ac2g end given
    another flow's id in bert-small). In the samples such ends start on cudaGraphLaunch alone (hta's
    negative_queue rank 0: 45 ids) or have no start. Costs a lookup of the few starts of further ends."""
    sel = np.flatnonzero(started)
    ops = prof.ops
    if not sel.size or not len(ops):
        return ""
    # the launch calls starting at one of those times: an int64 lookup over the ops, then their few rows alone (every
    # launch call indexed cost a graph trace ~6 ms: hta's negative_queue rank 0, 45 graph launches)
    launch = np.flatnonzero(np.isin(ops["ts"].to_numpy(np.int64), np.unique(s_cols["ts"][sel])))
    launch = launch[np.isin(ops["cat"].to_numpy()[launch], list(LAUNCH_CATS))]
    calls = pd.MultiIndex.from_arrays([ops[c].to_numpy(np.int64)[launch] for c in ("pid", "tid", "ts")])
    keep = ~calls.duplicated()
    at = calls[keep].get_indexer(pd.MultiIndex.from_arrays([s_cols[c][sel] for c in ("pid", "tid", "ts")]))
    found = at >= 0
    names = ops["name"].to_numpy()[launch[keep]]  # each distinct call, judged once, then spread to its ends
    plain = _plain_calls(names)[at[found]]
    hits = sel[found][plain]
    if not hits.size:
        return ""
    first = hits[0]
    n = int(hits.size)
    return (f"{path}: {traceio.counted(n, 'kernel, memcpy or memset events')} {'ends' if n == 1 else 'end'} a launch "
            "flow that ended at another already, and whose start is on a launch call that is no graph launch (the "
            f"first: {short_text(str(cats[first]))} flow {short_text(str(ids[first]))}, started on "
            f"{short_text(str(names[at[found][plain][0]]))}); each is read as launched by that call, as a graph replay "
            "is: ids reused, or traces merged?")


def _plain_calls(names: np.ndarray) -> np.ndarray:
    """Which launch calls (by name) are no graph launch (cudaGraphLaunch, hipGraphLaunch: a name holding
    "graphlaunch", any case). Judged in Python, so the callers pass few: the distinct calls, or the ends alone of
    their flow, not a graph's replayed kernels, which repeat their launch by the thousand (judged per kernel,
    500,000 ends of 2,000 graph launches cost ~50 ms)."""
    return np.fromiter(("graphlaunch" not in str(n).lower() for n in names.tolist()), dtype=bool, count=len(names))


def _distinct_ends(cols: dict[str, np.ndarray], ends: np.ndarray, ekey: np.ndarray,
                   paired: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The other flow ends at kernels (positions ``ends`` of flow keys ``ekey``) less the copies of an end of the
    same key at the same lane and time (``paired``: each key's paired end, -1 where none): an end written twice
    linked its kernel to the op twice, so the operator's device time counted that kernel twice, silently (the
    original keeps one end per key). A graph launch's kernels end its flow at distinct times and stay."""
    pe = paired[ekey]
    has = pe >= 0
    same = has.copy()
    for c in ("pid", "tid", "ts"):
        same &= cols[c][ends] == cols[c][np.maximum(pe, 0)]
    dup = pd.DataFrame({"k": ekey, "p": cols["pid"][ends], "t": cols["tid"][ends],
                        "s": cols["ts"][ends]}).duplicated().to_numpy()
    keep = ~(same | dup)
    return ends[keep], ekey[keep]


def _link_collectives_by_correlation(prof: Profile, ev: _Events) -> None:
    """``extra["correlation_launches"]``: {kernel (pid, tid, ts): launch call (pid, tid, ts)} for the NCCL / RCCL
    kernels no launch flow ends at, found by the ``correlation`` arg the kernel and its launch call share.

    Why: CommunicationCompare names a kernel's collective from the records around its launch call (a
    ``record_param_comms`` op, a ``nccl:all_to_all`` range), found through the launch flow. Some traces hold no
    launch flow but keep the correlation ids (hta's sampled ``trace_filter`` ranks: 10 SendRecv kernels each), so
    their SendRecv kernels stayed ``sendrecv``. Only the collective's name reads this link; the operator and
    module comparisons keep linking by flows (reference-2 §2.1). A correlation id several kernels without a flow
    share (a graph launch's kernels) links none, as a graph replay names no collective. A trace without any launch
    flow has the correlations read with the kernels' and launch calls' other args (``_reads_correlations``); in
    one with launch flows they are decoded only for the kernels no flow ends at, and only when such a collective
    kernel exists: a trace whose launch flows reach its collective kernels decodes nothing more."""
    k = prof.kernels
    if not len(k):
        return
    coll_names = ev.collective_names  # found by _load_kernels
    if not coll_names:
        return
    names = k["name"].tolist()
    coll = np.fromiter(map(coll_names.__contains__, names), dtype=bool, count=len(names))
    fl = prof.flows
    unlinked = np.ones(len(k), dtype=bool)
    if len(fl):  # the kernels a launch flow (of any kind but fwdbwd) already ends at
        launch = (fl["cat"] != "fwdbwd").to_numpy()
        unlinked = ~starts_at(k["pid"].to_numpy(np.int64), k["tid"].to_numpy(np.int64), k["ts"].to_numpy(np.int64),
                              fl["f_pid"].to_numpy(np.int64)[launch], fl["f_tid"].to_numpy(np.int64)[launch],
                              fl["f_ts"].to_numpy(np.int64)[launch])
    if not (coll & unlinked).any():
        return
    # the correlation ids of every kernel no flow ends at: one several of them share (a graph launch's kernels,
    # computing ones too) names no launch of a single collective
    pool = np.flatnonzero(unlinked)
    if ev.kernel_correlations is not None:  # read with the kernels' other args (a trace without launch flows)
        ids = ev.kernel_correlations[pool]
    else:
        sub = ev.kernel_events  # in the frame's (file) order
        ids = _ids([a.correlation for a in ev.args([sub[i] for i in pool.tolist()], _LaunchArgs)])
    lost = int((coll[pool] & (ids < 0)).sum())
    if lost:  # Kineto writes a correlation on every kernel: without it the kernel's collective went unnamed silently
        prof.warnings.append(f"{ev.path}: {lost:,} collective kernel(s) that no launch flow reaches have no "
                             "correlation id (absent, or no whole number), so no launch call names their collective: "
                             "CommunicationCompare reads them by the kernel name alone")
    keep = coll[pool] & (ids >= 0) & ~pd.Index(ids).duplicated(keep=False)
    rows, corr = pool[keep], ids[keep]
    found = _launch_calls(ev, corr)
    if found is None:
        return
    hit, call = found
    key = zip(*(k[c].to_numpy(np.int64)[rows[hit]].tolist() for c in ("pid", "tid", "ts")), strict=True)
    prof.extra["correlation_launches"] = dict(zip(key, zip(
        call["pid"].tolist(), call["tid"].tolist(), call["ts"].tolist(), strict=True), strict=True))


def _launch_calls(ev: _Events, ids: np.ndarray) -> tuple[np.ndarray, dict] | None:
    """The launch calls of flow ends that have no flow start, by correlation id.

    Kineto (ROCm's, at least) writes the flow ends of the kernels a HIP graph launch replays with the
    launch call's correlation id and no flow start. The call is the host op of a ``LAUNCH_CATS`` cat
    whose ``correlation`` arg is the end's id (a whole number >= 0); an id several calls hold names none.
    Returns (the positions in ``ids`` that found their call, the call's ts / pid / tid per position),
    None when none did.
    """
    if not len(ids):
        return None
    want = _ids(ids.tolist())
    if ev.launch_ids is None:  # decoded once per trace (or read with the ops' args: ``_reads_correlations``)
        idx, sub = ev.where(LAUNCH_CATS, ("X",))
        _index_launch_calls(ev, idx, sub, [a.correlation for a in ev.args(sub, _LaunchArgs)])
    idx, sub, keep, by_id = ev.launch_ids
    if not len(idx):
        return None
    at = by_id.get_indexer(want)  # a -1 (no id) finds nothing: kept ids are >= 0
    hit = np.flatnonzero(at >= 0)
    if not hit.size:
        return None
    rows, inv = np.unique(keep[at[hit]], return_inverse=True)
    call = ev.columns([sub[i] for i in rows.tolist()], ("name", "ts", "pid", "tid"), idx[rows])
    return hit, {k: v[inv.reshape(-1)] for k, v in call.items()}


def _index_launch_calls(ev: _Events, idx: np.ndarray, sub: list, correlations: list) -> None:
    """``ev.launch_ids`` from the launch calls (event indices, events in file order) and their correlation args."""
    corr = _ids(correlations) if len(idx) else np.zeros(0, np.int64)
    keep = np.flatnonzero(~pd.Index(corr).duplicated(keep=False) & (corr >= 0))
    ev.launch_ids = idx, sub, keep, pd.Index(corr[keep])


def _ids(values: list) -> np.ndarray:
    """Correlation / flow ids as int64, -1 for what is no whole number >= 0 (``traceio.whole_int``); a
    column of plain ints (the usual one) costs one C-level conversion."""
    if set(map(type, values)) <= {int}:
        try:
            out = np.fromiter(values, dtype=np.int64, count=len(values))
        except OverflowError:  # an int beyond int64
            pass
        else:
            out[out < 0] = -1
            return out
    return np.array([-1 if (i := traceio.whole_int(v)) is None or i < 0 else i for v in values], dtype=np.int64)


def _load_memory(prof: Profile, ev: _Events) -> None:
    """``[memory]`` events (reference-1 §3.1: the name in any case, whatever the cat or phase; Kineto
    writes them as instants of cat ``cpu_instant_event``, ``memory`` or none)."""
    idx, sub = ev.where(frozenset(c.lower() for c in ev.first) - NOT_MEMORY_CATS, None)
    if not len(idx):
        return
    names = list(map(attrgetter("name"), sub))
    if names.count("[memory]") != len(names):
        keep = np.array([n.lower() == "[memory]" for n in names], dtype=bool)
        if not keep.any():
            return
        idx = idx[keep]
        sub = [e for e, k in zip(sub, keep.tolist(), strict=False) if k]
    cols = ev.columns(sub, ("ts",), idx)
    args = ev.args(sub, _MemArgs)
    absent = []
    for col, arg in (("bytes", _BYTES), ("addr", _ADDR), ("total_reserved", _RESERVED), ("device_id", _DEVICE_ID)):
        values = list(map(attrgetter(col), args))
        cols[col] = traceio.checked_ints(ev.path, values, arg, prof.warnings)
        if col in _MEMORY_ABSENT and (n := values.count(None)) and (col != "addr" or n < len(values)):
            absent.append(f"{n:,} without {_MEMORY_ABSENT[col]}")
        if col == "total_reserved":
            reserved = values
    if absent:
        prof.warnings.append(f"{ev.path}: of {len(args):,} [memory] events, {'; '.join(absent)}")
    _zero_reserved(prof, cols, reserved)
    # an exact copy of an event (a trace merged or written twice) is a second allocation or free at that address,
    # which re-paired the blocks after it (kfuzz61: one copied allocation moved aten::linear's Allocated Memory
    # and turned 2 operators into 26 in a memory row) without a word
    copy = pd.DataFrame(cols).duplicated().to_numpy()
    copies = int(copy.sum())
    if copies:
        prof.warnings.append(f"{ev.path}: {copies:,} [memory] event(s) repeat another's time, Bytes, Addr, Device Id "
                             "and Total Reserved exactly (a trace merged or written twice?); each is read as written, "
                             "so the memory records pair them as further allocations and frees")
    if note := _pairing_note(ev.path, cols, ~copy):
        prof.warnings.append(note)
    prof.memory = frame("memory", cols)


def _pairing_note(path: str, cols: dict[str, np.ndarray], read: np.ndarray) -> str:
    """The warning for device [memory] events at an address that the memory records' pairing
    (``compare.memory.gpu_records``: the next event at the same address and device decides an allocation's fate)
    cannot close as written: an allocation followed by another allocation there (the earlier one reads as never
    released) and one followed by a free of another size (it makes no record). A whole trace has neither (every
    sample with Addr: none of either); one copied allocation at ts + 1 us or one damaged Bytes moved an operator's
    Allocated Memory and Duration without a word (kfuzz64). ``read``: the events that are no exact copy of an
    earlier one (said by their own line, left out here); Addr-less events (PyTorch 1.8's) are the memory
    comparison's own warning. The next event at an address is the pairing's own (``model.next_at_address``)."""
    sel = np.flatnonzero(read & (cols["device_id"] >= 0) & (cols["bytes"] != 0))
    if sel.size < 2:
        return ""
    sel = sel[np.argsort(cols["ts"][sel], kind="stable")]  # time order (file order among equal times), as paired
    addr, size = cols["addr"][sel], cols["bytes"][sel]
    nxt = next_at_address(cols["device_id"][sel], addr)
    alloc = np.flatnonzero((size > 0) & (nxt >= 0) & (addr != -1))
    after = size[nxt[alloc]]
    reopened = int(np.count_nonzero(after > 0))
    other = int(np.count_nonzero((after < 0) & (-after != size[alloc])))
    said = []
    if reopened:
        said.append(f"{traceio.counted(reopened, 'allocations')} followed at the same address by another "
                    "allocation with no free between (read as never released)")
    if other:
        said.append(f"{traceio.counted(other, 'allocations')} followed at the same address by a free of "
                    "another size (read as making no memory record)")
    if not said:
        return ""
    return (f"{path}: of its device [memory] events, {' and '.join(said)}, as the original pairs them: a free "
            "lost, or a trace cut or merged?")


def _zero_reserved(prof: Profile, cols: dict[str, np.ndarray], reserved: list) -> None:
    """Where every device event's Total Reserved reads 0, count the events that wrote a 0 (an absent, null or
    impossible value also reads 0, yet is no reading): Mem Usage 0.00G is then their largest, which the memory
    line and the OverallMetrics note said was "not recorded". Costs a pass only in that case."""
    dev = cols["device_id"] >= 0
    if not dev.any() or cols["total_reserved"][dev].any():
        return
    prof.extra[KINETO_ZERO_RESERVED] = sum(1 for v, d in zip(reserved, dev.tolist(), strict=True)
                                    if d and traceio.whole_int(v) == 0)


#: The ``[memory]`` args Kineto writes on every event whose absence (or null) changes a memory figure, and what the
#: event then reads as (``_load_memory`` counts them; events all without Addr, PyTorch 1.8's, are said by the memory
#: comparison, which pairs them its own way).
_MEMORY_ABSENT = {
    "bytes": "Bytes (they make no memory record)",
    "addr": "Addr (they pair only with one another, as one address)",
    "device_id": "Device Id (they read as host memory, which no memory figure reads)",
}


def _load_meta(prof: Profile, ev: _Events) -> None:
    idx, sub = ev.where(frozenset({""}), ("M",))
    if not len(idx):
        return
    # a process's name or sort index needs no tid (and Chrome's format lets it out): only the pid is said. A
    # thread_name record without a tid (read as thread 0) is not said either: no comparison reads a Kineto trace's
    # thread names (only a trace_view.json's lanes are told apart by name), so it changes nothing a user sees
    # (tests/test_kineto_damaged_keys.py::test_thread_names_feed_no_figure_so_a_thread_name_without_a_tid_is_not_said)
    cols = ev.columns(sub, ("pid", "tid"), idx, "metadata events", lanes=("pid",))
    procs, threads, _ = traceio.meta_records([e.name for e in sub], cols["pid"].tolist(), cols["tid"].tolist(),
                                             ev.args(sub, _MetaArgs))
    for rec in threads.values():
        rec[1] = -1 if (i := traceio.whole_int(rec[1])) is None else i
    if procs:
        prof.processes = frame("processes", {
            "pid": list(procs), "name": [v[0] for v in procs.values()], "sort_index": [v[1] for v in procs.values()]})
    if threads:
        prof.threads = frame("threads", {
            "pid": [k[0] for k in threads], "tid": [k[1] for k in threads],
            "name": [v[0] for v in threads.values()], "sort_index": [v[1] for v in threads.values()]})


def _load_python(prof: Profile, ev: _Events) -> None:
    # one of another ph is counted (``other_ph``), as kernels and host ops are: an nn.Module span left out (no ph,
    # "B") changed the module tree, and the operators' and modules' rows, without a word (fuzz66b; Kineto writes
    # Python functions as complete events alone: every sample's are "X")
    idx, sub = ev.where(frozenset({"python_function"}), ("X",), "Python function")
    if not len(idx):
        return
    # ts, dur and tid go into the rows of one int64 block, which the table holds as it is: ``frame`` copied each
    # column into blocks of its own (a 1 GB trace's 4.1M frames: +94 MiB at its load's peak, ~0.2 s)
    block = np.empty((3, len(idx)), dtype=np.int64)
    cols = ev.columns(sub, ("name", "ts", "dur", "tid"), idx, "Python functions",
                      into=dict(zip(("ts", "dur", "tid"), block, strict=True)))
    prof.python_functions = block_frame("python_functions", block, ("ts", "dur", "tid"), {"name": cols["name"]})
