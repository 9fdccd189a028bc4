"""The time breakdown of one profile: what OverallMetrics and the console show.

Each loader family has its own way to compute it (GPU kernels, NPU overlap
lanes + kernel_details.csv, NPU DB tasks) but all fill this one record, and
the OverallMetrics sheet / console table are built from two of them.
All times are integer nanoseconds; conversion to ms/s happens only when
rendering (reference-1 §8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .. import timeline as tl
from ..columns import col_of
from ..errors import ProfileError
from ..model import KINETO_ZERO_RESERVED, factorize, zero_readings_text

if TYPE_CHECKING:  # pragma: no cover
    from ..model import Profile

_I64_MAX = 2**63 - 1

#: HCCL names a group "{ip}%{nic}_{port}_{index}_{creation time in us}" (a DB export keeps the name raw): group 1 is
#: the name without its creation time, which differs between two runs of one job.
_HCCL_CREATED = re.compile(r"^(.*%.*_\d+_\d+)_\d{13,}$")


def hccl_group_stem(key: str) -> str | None:
    """The HCCL group name without its creation time; None for a name that holds none (``Group 0 Communication``)."""
    m = _HCCL_CREATED.match(key)
    return m.group(1) if m else None


#: Categorised computing buckets (reference-1 §8.1), in OverallMetrics order.
BUCKETS = (
    "fa_fwd_cube", "fa_fwd_vector", "fa_bwd_cube", "fa_bwd_vector",
    "conv_fwd_cube", "conv_fwd_vector", "conv_bwd_cube", "conv_bwd_vector",
    "matmul_cube", "matmul_vector", "page_attention",
    "vector_trans", "vector_notrans", "other_cube", "sdma_tm",
)


def peak_reserved_gb(profile: Profile) -> float | None:
    """The run's largest reserved device memory in GB (OverallMetrics' Mem Usage, the memory line's peak), None
    where it was not recorded: Kineto ``Total Reserved`` of device ``[memory]`` events, NPU memory_record.csv
    ``Total Reserved(MB)`` (its loader left impossible totals out as NaN), the DB's ``MEMORY_RECORD`` peak. One
    reading for both, so the two figures cannot drift apart."""
    if profile.source == "kineto":
        mem = profile.memory
        reserved = col_of(mem, "total_reserved", np.int64)[col_of(mem, "device_id", np.int64) >= 0]
        return float(reserved.max()) / 1024**3 if len(reserved) else None
    if profile.source == "ascend_db":
        peak = int(profile.extra.get("memory_peak_bytes", 0) or 0)
        return peak / 1024**3 if peak else None
    mr = profile.memory_record
    if mr is None or "Total Reserved(MB)" not in mr.columns or not len(mr):
        return None
    return _largest_gb(col_of(mr, "Total Reserved(MB)", np.float64))


def zero_readings(profile: Profile) -> str:
    """Why a side's peak reserved memory is 0 where it recorded readings, every one 0 (``zero_readings_text``:
    the Mem Usage note and the Summary's memory line say it alike); "" where it has a peak or no reading:
    memory_record.csv (its loader left impossible totals out as NaN), the DB's MEMORY_RECORD and Kineto's device
    ``[memory]`` Total Reserved (its loader counted the events that wrote a 0, ``KINETO_ZERO_RESERVED``)."""
    if profile.source == "kineto":
        n = int(profile.extra.get(KINETO_ZERO_RESERVED, 0) or 0)
        return zero_readings_text(n, "[memory] Total Reserved") if n else ""
    if profile.source == "ascend_db":
        return str(profile.extra.get("memory_missing", "")) if profile.extra.get("memory_zero") else ""
    mr = profile.memory_record
    if profile.source != "ascend_text" or mr is None or "Total Reserved(MB)" not in mr.columns:
        return ""
    mb = col_of(mr, "Total Reserved(MB)", np.float64)
    read = mb[~np.isnan(mb)]
    return zero_readings_text(read.size, "memory_record.csv Total Reserved(MB)") if read.size and not read.any() else ""


def _largest_gb(mb: np.ndarray) -> float | None:
    """The largest reading of memory_record.csv's Total Reserved(MB) cells in GB (NaN: no reading)."""
    v = mb[~np.isnan(mb)]
    return float(v.max()) / 1024 if v.size else None


def peak_without_app_gb(profile: Profile) -> float | None:
    """A text export's Mem Usage without memory_record.csv's APP rows (the whole process's reservation, which
    torch_npu writes to the text export only: a DB export's MEMORY_RECORD holds the PTA / GE / PTA+GE rows
    alone), in GB; None for other inputs, a file without a Component column or APP row, or no other reading."""
    mr = profile.memory_record
    if profile.source != "ascend_text" or mr is None or "Component" not in mr.columns or not len(mr):
        return None
    # per distinct component (a handful over ~1,000 rows): the pandas string chain took ~1 ms a call, and the
    # export-kind check, the GPU-vs-NPU check and the memory line each ask (session 71)
    codes, uniq = factorize(col_of(mr, "Component", object))
    app = np.array([u is not None and str(u).strip().upper() == "APP" for u in uniq.tolist()], dtype=bool)[codes]
    if not app.any():
        return None
    return _largest_gb(col_of(mr, "Total Reserved(MB)", np.float64)[~app])


def app_counted_gb(profile: Profile) -> float | None:
    """``peak_without_app_gb`` where the APP rows set a text export's peak (the two read apart to 2 decimals): the
    figure the export-kind check, the GPU-vs-NPU check and the memory line give beside a DB export's or a GPU
    trace's peak, which counts no such component; None otherwise. One rule for the three."""
    without = peak_without_app_gb(profile)
    if without is None:
        return None
    peak = peak_reserved_gb(profile)
    return without if peak is not None and f"{peak:.2f}" != f"{without:.2f}" else None


@dataclass
class Bucket:
    """Accumulated duration (ns) and event count of one category."""

    ns: int = 0
    count: int = 0

    def add(self, ns: int, count: int = 1) -> None:
        """Add as Python ints, so numpy int64 sums cannot wrap or leak numpy scalars into the sheets."""
        self.ns += int(ns)
        self.count += int(count)


@dataclass
class MC2:
    """One MC2 fused kernel name (NPU): total, computing and communication parts (ns)."""

    ns: int = 0
    computing_ns: int = 0
    communication_ns: int = 0
    count: int = 0


class Stretch(NamedTuple):
    """A stretch of one side's E2E window: where it starts (trace clock and from the window's start), how long."""

    start_ns: int = 0
    length_ns: int = 0
    offset_ns: int = 0


@dataclass
class Breakdown:
    """The time breakdown of one profile (reference-1 §3-§9)."""

    kind: str                                   # "GPU" or "NPU"
    buckets: dict[str, Bucket] = field(default_factory=lambda: {b: Bucket() for b in BUCKETS})
    computing_ns: int = 0
    uncovered_comm_ns: int = 0
    wait_ns: int = 0
    #: A text export's Notify_Wait task time on its HCCL planes, all of it (CommunicationCompare's Notify_Wait
    #: rows): its Wait Time is the plane that waits least per group (reference-1 §5.7), often one with none, so a
    #: 0.000s beside this figure is said under the console table (``overall.table_notes``); summed only where each
    #: group's plane picked has no Notify_Wait (so the Wait Time is 0 for that reason), else 0
    notify_wait_ns: int = 0
    #: Why a Wait Time of 0 reads nothing: the export names no HCCL task a Notify_Wait (a Level0 DB export types
    #: its tasks N/A; a Level0 text export has no HCCL task lanes), said under the console table; "" otherwise
    wait_unread: str = ""
    e2e_ns: int = 0
    sdma_stream: Bucket = field(default_factory=Bucket)   # SDMA on compute streams ("\tSDMA" under Free Time)
    #: NPU: the DMA copies (a text export's SDMA_SQE / PCIE_DMA_SQE tasks, a DB export's MEMCPY_ASYNC ones too)
    #: that ``sdma_stream`` leaves out: the original's rule reads a text task's "Stream Id" and a DB task of the
    #: SQE types, which current exports name "Physic Stream Id" and MEMCPY_ASYNC (parity kept,
    #: docs/differences.md), so SDMA Time leaves them out, where it holds a GPU's copies (the GPU-vs-NPU note)
    unread_copies: Bucket = field(default_factory=Bucket)
    #: The task types of ``unread_copies``, sorted (the note names them: a text export's SDMA_SQE / PCIE_DMA_SQE,
    #: a DB export's MEMCPY_ASYNC; the note called a text export's copies MEMCPY_ASYNC tasks)
    unread_copy_types: tuple[str, ...] = ()
    lccl: Bucket = field(default_factory=Bucket)
    #: The layout / data-type conversion kernels (NPU: op Type TransData, Transpose or Cast,
    #: ``classify.CONVERSION_TYPES``; GPU: cuDNN's NCHW <-> NHWC transforms, by name) by the category they are filed
    #: in: Vector (Trans) goes by kernel names and the op around a kernel, so on an NPU most of them count in Conv's
    #: Vector rows (the GPU-vs-NPU note gives them whole)
    conversions: dict[str, Bucket] = field(default_factory=dict)
    mc2: dict[str, MC2] = field(default_factory=dict)     # kernel name -> parts, first-seen order
    #: group key (e.g. "Group 0 Communication" or a DB group name) -> {"wait": ns, "transmit": ns}
    groups: dict[str, dict[str, int]] = field(default_factory=dict)
    #: (group key A, group key B) -> overlapped uncovered communication (ns)
    group_pairs: dict[tuple[str, str], int] = field(default_factory=dict)
    pg_names: dict[str, str] = field(default_factory=dict)  # group key -> process-group name
    memory_gb: float = 0.0
    rdma_bandwidth: float = 0.0                  # GB/s
    sdma_bandwidth: float = 0.0                  # GB/s
    hide_op_details: bool = False                # NPU kernel_details.csv without PMU columns
    #: the longest stretch of the E2E window with no computing, no communication and no copy (GPU memcpy / memset,
    #: NPU SDMA / DMA / MEMCPY_ASYNC tasks): one long stretch (a profile opened long before the work, a stall) can be
    #: most of E2E and Free Time. A copy is device work: counted idle, the TimeSformer H100 trace's 3.46 ms of HtoD
    #: copies read as a 4.069 ms idle stretch, and a user looked for a host stall that was not there
    longest_idle: Stretch = field(default_factory=Stretch)
    #: all such stretches of the E2E window (count, total ns): beside ``longest_idle``, whether idle time is one
    #: stall or many waits between kernels, and how long one is on average (the Summary's note on Free: Other)
    idle_stretches: Bucket = field(default_factory=Bucket)
    #: the time the copies take outside computing and communication in the E2E window (ns): Free Time holds it, the
    #: idle stretches do not
    free_copies_ns: int = 0
    #: the longest stretch with no computing and no communication, copies counted idle (ns): where it is longer than
    #: ``longest_idle``, the copies cut that stretch, and the idle check says their time beside it (a text export's
    #: copies, 0.011 ms, mostly under its computing, cut none: said, they lengthened its line for nothing)
    longest_with_copies_ns: int = 0
    #: GPU: the part of the E2E window before the first kernel the trace holds a launch of, run by kernels
    #: launched before profiling began (the previous step's tail): it counts in E2E and, by name only, in the
    #: categories; ``early_kernels``: the computing ones among them (count, union of their times)
    early_ns: int = 0
    early_kernels: Bucket = field(default_factory=Bucket)
    #: DB export: the part of the E2E window outside its first computing or communication start and its last end,
    #: which its non-kernel device tasks open or close (reference-1 §7.3.6: a MEMCPY_ASYNC ~5 ms before the first
    #: kernel in the torch_npu samples, the rest of that time copies and idle time); a text export's window (the
    #: Overlap Analysis lanes) has none, so two kinds differ by it in E2E and Free Time
    outside_busy_ns: int = 0
    #: ... of which after its last computing or communication end (ns; the rest is before its first start), and the
    #: copies in it (count, union of their times; None where the copy tasks were not loaded): the rest is idle
    #: time, as the idle check counts it
    outside_after_ns: int = 0
    outside_copies: Bucket | None = field(default_factory=Bucket)
    #: NPU text export: kernel_details.csv kernels without PMU values (N/A), HCCL's aside: invalid rows that its
    #: categories leave to Other (reference-1 §5.3) and a DB export's categorise (§7.3.2)
    no_pmu_kernels: Bucket = field(default_factory=Bucket)
    #: GPU: some kernel's launch is in the trace (early is judged); NPU text: an async_npu flow ends at a computing
    #: kernel (set where ``unlinked`` is counted)
    has_launches: bool = False
    #: GPU: the computing kernels replayed from a CUDA / HIP graph (count, sum of their durations): their launch
    #: is the graph launch, inside no Matmul / Conv / Flash Attention op, so they are Cube (other) or Vector by
    #: name alone, where the same kernels launched eagerly count in those ops' categories
    replayed: Bucket = field(default_factory=Bucket)
    #: GPU: the computing kernels no launch flow links to their op, besides the previous step's tail
    #: (``early_kernels``) and graph replays (``replayed``), each said by its own check (count, sum of their
    #: durations): their categories come from their names alone, where a launched one inside a Matmul / Conv /
    #: Flash Attention op counts in that op's category. Counted only where the trace holds such an op (else a link
    #: would change no category). NPU text: the computing kernels no async_npu flow ends at, read by their Type
    #: (MatMul, Conv, FlashAttention: that category's Cube), else their PMU figures
    unlinked: Bucket = field(default_factory=Bucket)
    #: Rows the data could not provide, with the reason, and figures it gives that cannot be right (a negative
    #: group Transmit): shown as one log line (WARNING) each.
    missing: list[str] = field(default_factory=list)
    #: Why a text export's computing lies in no category ("kernel_details.csv has no PMU columns (...)"), its line
    #: of ``missing`` without the path: where one side alone is so, the category check says it with this reason
    #: and that line is not logged as well (``overall.build``; a Level0 run said it twice)
    categories_missing: str = ""
    #: NPU text export without categories (a Level0 export: no PMU columns): its kernel_details.csv's TensorMove
    #: kernels, which SDMA (Tensor Move) holds in an export with categories and Other Time holds here, so its SDMA
    #: Time(Num) 0.000s(0) is no measurement (said under the console table, ``overall.table_notes``)
    unsplit_moves: Bucket = field(default_factory=Bucket)
    #: Why this side has no RDMA / SDMA bandwidth (a GPU trace or a DB export holds none to read; a text export
    #: without a usable communication.json, of which the loader has warned). Said under the console table only
    #: where the other side has a bandwidth, whose column then shows this side's 0.000GB/s
    #: (`overall.table_notes`), as a side without memory gets its Mem Usage note there
    bandwidth_missing: str = ""
    #: Why this side's Mem Usage reads 0.00G where the data held readings, none usable (every Total Reserved(MB)
    #: of memory_record.csv empty or left out by its loader), or a DB export's MEMORY_RECORD gives none (absent,
    #: empty, no reading in the step: ``ascend_db._memory_missing``); "" for another side that recorded none. Said
    #: in its Mem Usage note under the console table (`overall.table_notes`), which read "no peak reserved memory
    #: recorded" for such a side
    memory_missing: str = ""
    #: The side recorded readings and every one is 0 (``memory_missing`` counts them): its Mem Usage 0.00G is their
    #: largest, which the note says, rather than a reading that is missing
    memory_zero: bool = False

    def set_window(self, lo: int, hi: int, busy: tl.Intervals, path: str, copies: tl.Intervals | None = None) -> None:
        """E2E and the longest idle stretch from one window, so the two cannot drift apart. ``busy``: computing and
        communication; ``copies``: the device's copies, which are no idle time either (``free_copies_ns``: what
        they add outside ``busy``). A window longer than int64 nanoseconds (292 years: a damaged time, e.g. a DB
        task starting at -2**63) is refused as the data error of ``path``: every figure of the window is int64 ns
        (the waterfall failed with an internal error, the idle stretch wrapped)."""
        if int(hi) - int(lo) > _I64_MAX:
            raise ProfileError(path, f"the device activity spans {int(hi) - int(lo)} ns, {int(lo)} to {int(hi)}: "
                                     "beyond the int64 nanosecond range", hint="a damaged time?")
        self.e2e_ns = max(0, int(hi) - int(lo))
        if hi <= lo:
            self.longest_idle, self.idle_stretches = Stretch(int(lo)), Bucket()
            self.free_copies_ns = self.longest_with_copies_ns = 0
            return
        _, self.longest_with_copies_ns, _, free = tl.gap_stats(busy, int(lo), int(hi))
        if copies is not None and len(copies[0]):
            busy = tl.union(np.concatenate([busy[0], copies[0]]), np.concatenate([busy[1], copies[1]]))
        start, length, count, idle = tl.gap_stats(busy, int(lo), int(hi))
        self.longest_idle = Stretch(start, length, start - int(lo))
        self.idle_stretches = Bucket(idle, count)
        self.free_copies_ns = free - idle

    @property
    def free_ns(self) -> int:
        """Scheduling time: E2E minus computing, lccl and uncovered communication."""
        return self.e2e_ns - self.computing_ns - self.lccl.ns - self.uncovered_comm_ns

    def b(self, name: str) -> Bucket:
        """A bucket by its category name (a KeyError names a misspelt category at once)."""
        return self.buckets[name]

    @property
    def mc2_ns(self) -> int:
        """All MC2 (fused compute + communication) kernels' time: part of the categorised computing time."""
        return sum(m.ns for m in self.mc2.values())

    @property
    def categorised_ns(self) -> int:
        """Computing time the categories hold (every bucket and MC2); above the computing union where
        kernels of different categories overlap in time."""
        return sum(bk.ns for bk in self.buckets.values()) + self.mc2_ns

    @property
    def other_ns(self) -> int:
        """Computing time no category explains (reference-1 §8.3), never negative."""
        return max(0, self.computing_ns - self.categorised_ns)

    @property
    def computing_count(self) -> int:
        """Number shown for Computing Time: every bucket count, MC2 excluded."""
        return sum(bk.count for bk in self.buckets.values())


def last_of_keys(pid: np.ndarray, tid: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Indices of the last row of every distinct (pid, tid, ts), in row order: the original keys
    device tasks by "pid-tid-ts" in a dict, so a later duplicate replaces an earlier one."""
    n = len(ts)
    order = np.lexsort((np.arange(n), ts, tid, pid))
    p, t, s = pid[order], tid[order], ts[order]
    last = np.ones(n, dtype=bool)
    last[:-1] = (p[1:] != p[:-1]) | (t[1:] != t[:-1]) | (s[1:] != s[:-1])
    return np.sort(order[last])
