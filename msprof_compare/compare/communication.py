"""CommunicationCompare: collective ops per family, with NPU task detail rows (reference-2 §4).

Per side, communication ops are grouped by family (``hcom_allReduce__1_0`` ->
``allreduce``; GPU kernels by their collective, ours, so that GPU and NPU rows pair: ``ncclKernel_AllReduce_...``
and ``multimem_all_reduce_kernel`` -> ``allreduce``, where the original reads ``ncclkernel``). NPU HCCL tasks
(plane lanes) are attributed to the op they start in with one forward-moving
pointer, which here is a vectorised ``searchsorted`` + running maximum.
A summary row per family carries the diff and ratio of the totals; task rows
(``|``) follow, paired positionally between the two sides, as the original does.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import side_named
from ..model import COMM_STEP_CUT, GPU_COMM_PREFIXES, OP_OUT_OF_STEP, Profile, factorize, pair_codes, ranges
from . import classify
from .breakdown import last_of_keys
from .optree import COMMUNICATION_ROWS, GPU_KERNEL_CATS
from .steps import in_range, side_range
from .table import (
    STYLE_BOLD,
    STYLE_FLOAT,
    STYLE_INT,
    STYLE_RATIO,
    Column,
    Sheet,
    exact_diffs,
    frame_from_rows,
    ms3,
    ratio_of,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")
#: ``RunContext.cache`` key: per side, the ns of the communication ops without a family (``unnamed_ops``).
LEFT_OUT_KEY = "communication_left_out_ns"
#: ``RunContext.cache`` key: per side, (how many communication ops have no family, what their op type or name holds
#: instead: ``_db_op_types``'s words, or names without a '_'): the Summary says why a run without op rows cannot
#: break its communication down by op (``summary_notes.unsplit_communication_note``).
UNNAMED_KEY = "communication_unnamed"

_SIDE = [
    Column("Communication OP Name", STYLE_BOLD, 25),
    Column("Task Name", STYLE_INT, 20),
    Column("Calls", STYLE_INT, 10),
    Column("Total Duration(us)", STYLE_FLOAT, 17),
    Column("Avg Duration(us)", STYLE_FLOAT, 17),
    Column("Max Duration(us)", STYLE_FLOAT, 17),
    Column("Min Duration(us)", STYLE_FLOAT, 17),
]
COLUMNS = [Column("Order Id", STYLE_INT, 10), *_SIDE, *_SIDE,
           Column("Diff Duration(us)", STYLE_FLOAT, 20), Column("Diff Ratio", STYLE_RATIO, 20)]
SPANS = ((1, 7), (8, 14))  # B1:H1 base, I1:O1 comparison


def _family_of(name: object) -> str | None:
    parts = str(name).lower().split("_")
    if len(parts) < 2:
        return None
    return parts[1] if parts[0] == "hcom" else parts[0]


def family(names: pd.Series | np.ndarray) -> np.ndarray:
    """Op family of each name (None when the name has no ``_``: the op is ignored): 2nd piece after
    ``hcom``, else the 1st (``hcom_`` is the family "").

    Computed once per distinct name."""
    arr = np.asarray(names, dtype=object)
    if not len(arr):
        return np.zeros(0, dtype=object)
    codes, uniq = factorize(arr)
    return np.array([_family_of(u) for u in uniq.tolist()], dtype=object)[codes]


#: Collectives NCCL / RCCL name in their kernels, lower-cased, longest first (``ncclKernel_AllReduce_RING_LL_Sum_
#: float``, ``ncclDevKernel_AllGather_RING_LL``, NCCL 2.6's ``ncclAllReduceRingLLKernel_sum_f32``): HCCL's op
#: families are the same words (``hcom_allReduce_``), except that HCCL spells a receive out (``hcom_receive_``).
NCCL_COLLECTIVES = ("reducescatter", "allreduce", "allgather", "broadcast", "sendrecv", "alltoall", "reduce", "send",
                    "recv")
_HCCL_SPELLING = {"recv": "receive"}
#: The collective a default GPU_COMM_MASK word names; a word of the user's own names none (family: function name).
COLLECTIVE_OF_WORD = {"all_reduce": "allreduce", "allreduce": "allreduce", "cross_device_reduce": "allreduce",
                      "all_gather": "allgather", "allgather": "allgather", "reduce_scatter": "reducescatter",
                      "reducescatter": "reducescatter", "all_to_all": "alltoall", "alltoall": "alltoall"}


def _nccl_collective(name: str) -> str | None:
    """The collective an NCCL / RCCL / MSCCL kernel's name says (None: ``ncclDevKernel_Generic``, RCCL's kernel
    for all; ``mscclKernel_Sum_...``, which names the reduction, not the collective)."""
    low = classify.kernel_function_name(name).lower()
    low = low[len(next((p for p in GPU_COMM_PREFIXES if low.startswith(p)), "")):].lstrip("_")  # no nccl / rccl
    for lead in ("devkernel_", "kernel_"):
        if low.startswith(lead):
            low = low[len(lead):]
            break
    word = next((w for w in NCCL_COLLECTIVES if low.startswith(w)), None)
    return _HCCL_SPELLING.get(word, word) if word else None


def _gpu_family_of(name: object, words: tuple[str, ...]) -> tuple[str | None, bool, bool]:
    """(family by the name, whether the name says the collective, whether it is an NCCL / RCCL kernel)."""
    text = str(name)
    if text.lower().startswith(GPU_COMM_PREFIXES):
        said = _nccl_collective(text)
        return (said or _family_of(text.lower())), said is not None, True  # unsaid: the original's family
    function = classify.kernel_function_name(text)
    low = function.lower()
    # the mask word that starts first in the function name says which collective it is
    found = [(low.find(w), w) for w in words if classify.word_starts(function, low, w)]
    return (COLLECTIVE_OF_WORD.get(min(found)[1], low) if found else low), True, False


def collective_word(text: str) -> str | None:
    """HCCL's family word for PyTorch's ``Collective name`` (``_allgather_base``, ``reduce_scatter_tensor_
    coalesced``, ``_broadcast_oop``, ``all_to_allv`` -> ``allgather``, ``reducescatter``, ``broadcast``,
    ``alltoallv``); None for what names no collective (``wait``, ``barrier``, ``coalesced``)."""
    word = text.lower().lstrip("_")
    stripped = True
    while stripped:
        stripped = False
        for suffix in ("_coalesced", "_base", "_into_tensor", "_tensor", "_oop"):
            if word.endswith(suffix):
                word, stripped = word[: -len(suffix)], True
    word = word.replace("_", "")
    if word in NCCL_COLLECTIVES or word in ("gather", "scatter", "alltoallv"):
        return _HCCL_SPELLING.get(word, word)
    return None


#: HCCL's family words for the collectives a MindSpore graph op can run (``AllReduce``, ``AlltoAllV``, ``Receive``).
GRAPH_OP_COLLECTIVES = frozenset(_HCCL_SPELLING.get(w, w) for w in NCCL_COLLECTIVES) | {"gather", "scatter",
                                                                                         "alltoallv"}
#: A MindSpore graph op's name in a CANN msprof timeline, lower-cased: optional scope, the op type, ``-op``, the
#: op's number and the task's index (``default/allreduce-op534_0``). A scope may hold ``_``
#: (``default/network-withlosscell/_backbone-alexnet/...``), which cuts the original's family (the first ``_``
#: piece) inside the scope, so the collective is read from the whole name.
_GRAPH_OP = re.compile(r"(?:.*/)?([a-z]+)-op\d+(?:_\d+)*")


def _graph_op_collective(name: str) -> str | None:
    m = _GRAPH_OP.fullmatch(name.lower())
    return m.group(1) if m and m.group(1) in GRAPH_OP_COLLECTIVES else None


def collective_families(names: np.ndarray) -> np.ndarray:
    """An NPU side's op families for pairing with a GPU side, whose families are collectives: a MindSpore graph
    op (``Default/AllReduce-op534_0``, original family ``default/allreduce-op534``, one per op) goes under its
    collective (``allreduce``), where ``hcom_allReduce_...`` ops already are; other names keep ``family``.
    Computed once per distinct name."""
    fam = family(names)
    if not len(fam):
        return fam
    codes, uniq = factorize(np.asarray(names, dtype=object))
    coll = np.array([_graph_op_collective(str(u)) for u in uniq.tolist()], dtype=object)[codes]
    return np.where(coll != None, coll, fam)  # noqa: E711 (element-wise)


def _enclosing(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per record (sorted by start, the longer first on ties): the latest-starting earlier record that was still
    open at its start (-1: none), so that a look-up walks out through nested records, never back over siblings."""
    parent = np.full(len(starts), -1, dtype=np.int64)
    stack: list[int] = []
    for i, s in enumerate(starts.tolist()):
        while stack and ends[stack[-1]] < s:
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        stack.append(i)
    return parent


#: ProcessGroupNCCL's profiling range around each collective it runs (``nccl:all_to_all``, ``nccl:_all_gather_base``,
#: ``nccl:send 0->1``): the only name of the collective in traces of PyTorch before 2.2, whose record_param_comms
#: ops carry no ``Collective name``.
NCCL_TITLE_PREFIX = "nccl:"


def nccl_title_collective(name: str) -> str:
    """The collective a ProcessGroupNCCL range names: ``nccl:send 0->1`` -> ``send``, ``nccl:all_to_all`` ->
    ``all_to_all`` ("" for a name that is no such range)."""
    if not name.startswith(NCCL_TITLE_PREFIX):
        return ""
    return name[len(NCCL_TITLE_PREFIX):].split(" ", 1)[0]


def launch_collectives(profile: Profile, rows: np.ndarray) -> np.ndarray:
    """Per kernel row: the collective of the innermost ``record_param_comms`` op around its launch call, else
    that of the innermost ProcessGroupNCCL range (``nccl:all_to_all``) around it ("" when none): for traces whose
    kernels do not carry PyTorch's ``Collective name`` themselves. A record's name goes first: it tells an
    ``all_to_allv`` from an ``all_to_all``, which ProcessGroupNCCL's range calls both ``nccl:all_to_all``; before
    PyTorch 2.2 the records name nothing and the range is the only name of the collective an NCCL SendRecv
    kernel ran.

    The launch comes from the launch flow ending at the kernel, never a graph replay's link (a graph launch
    names no collective); for a kernel no launch flow ends at, from the runtime call with the kernel's
    ``correlation`` id (the loader's ``extra["correlation_launches"]``: traces written without flows)."""
    coll = col_of(profile.ops, "collective", object)
    out = _innermost_record(profile, rows, naming(coll), coll)
    left = np.flatnonzero(out == "")
    if len(left) and len(profile.ops):
        # the ranges' names are read only here, for the kernels no record names (a factorization of every op
        # name would cost each run ~0.1 s per million ops)
        codes, uniq = factorize(col_of(profile.ops, "name", object))
        said = np.array([nccl_title_collective(u) if isinstance(u, str) else "" for u in uniq.tolist()],
                        dtype=object)
        if (said != "").any():
            titles = said[codes]
            out[left] = _innermost_record(profile, rows[left], naming(titles), titles)
    return out


def naming(texts: np.ndarray) -> np.ndarray:
    """Positions of the ``texts`` (recorded ``Collective name`` texts, "" where none) that name a collective
    (``collective_word``), each distinct text tested once. A record that names none (``wait``, ``barrier``,
    ``coalesced``, a damaged text) is no record: the next source, an outer record, the ProcessGroupNCCL range
    or the kernel's name, says the collective, where such a record hid them all (an RCCL generic kernel whose
    own text said ``wait`` read ``nccldevkernel`` beside the ``broadcast`` record around its launch)."""
    rows = np.flatnonzero(texts != "")
    if not len(rows):
        return rows
    codes, uniq = factorize(texts[rows])
    return rows[np.array([isinstance(t, str) and collective_word(t) is not None for t in uniq.tolist()],
                         dtype=bool)[codes]]


def _innermost_record(profile: Profile, rows: np.ndarray, rec: np.ndarray, coll: np.ndarray) -> np.ndarray:
    """Per kernel row: the ``coll`` text (per op) of the innermost op of ``rec`` around its launch call ("" when
    none)."""
    out = np.full(len(rows), "", dtype=object)
    ops = profile.ops
    flows = profile.flows
    # kernels no launch flow ends at, linked to their launch call by the correlation id (a trace without flows)
    by_correlation = profile.extra.get("correlation_launches") or {}
    if not len(rec) or not (len(flows) or by_correlation) or not len(rows):
        return out
    k = profile.kernels
    k_ts = col_of(k, "ts", np.int64)[rows]
    f_ts = col_of(flows, "f_ts", np.int64)
    # only the flows ending at these kernels (a large trace holds millions of flows)
    sel = np.flatnonzero(np.isin(f_ts, k_ts))
    sel = sel[(col_of(flows, "cat", object)[sel] != "fwdbwd")
              & (col_of(flows, "replay", np.int64)[sel] != 1)]
    f = {c: col_of(flows, c, np.int64)[sel] for c in ("f_pid", "f_tid", "f_ts", "s_pid", "s_tid", "s_ts")}
    launch = dict(zip(zip(f["f_pid"].tolist(), f["f_tid"].tolist(), f["f_ts"].tolist(), strict=True),
                      zip(f["s_pid"].tolist(), f["s_tid"].tolist(), f["s_ts"].tolist(), strict=True), strict=True))
    for kernel, call in by_correlation.items():  # the loader links only kernels no launch flow ends at
        launch.setdefault(kernel, call)
    o_ts = col_of(ops, "ts", np.int64)
    o_end = o_ts + col_of(ops, "dur", np.int64)
    o_pid, o_tid = col_of(ops, "pid", np.int64), col_of(ops, "tid", np.int64)
    by_thread: dict[tuple[int, int], list[int]] = {}
    for i in rec[np.lexsort((-o_end[rec], o_ts[rec]))].tolist():
        by_thread.setdefault((int(o_pid[i]), int(o_tid[i])), []).append(i)
    threads = {t: (o_ts[ix], o_end[ix], _enclosing(o_ts[ix], o_end[ix]), coll[ix]) for t, ix in by_thread.items()}
    keys = zip(*(col_of(k, c, np.int64)[rows].tolist() for c in ("pid", "tid", "ts")), strict=True)
    for j, key in enumerate(keys):
        start = launch.get(key)
        recs = threads.get(start[:2]) if start else None
        if recs is None:
            continue
        starts, ends, parent, names = recs
        t = start[2]
        at = int(np.searchsorted(starts, t, side="right")) - 1
        while at >= 0 and ends[at] < t:  # out through the records around this one
            at = int(parent[at])
        if at >= 0:
            out[j] = names[at]
    return out


def gpu_family(names: np.ndarray, kw: classify.Keywords | None = None,
               recorded: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(family, whether a collective named it) of GPU collective kernels: the collective, named as HCCL's op
    families so that GPU and NPU rows pair (``ncclKernel_AllReduce_...`` and ``multimem_all_reduce_kernel`` ->
    ``allreduce``; the original's rule, the first ``_`` piece, gives ``ncclkernel`` for every NCCL collective).

    An NCCL / RCCL kernel takes first the collective PyTorch recorded for it (``recorded``: ``Collective name``
    texts per kernel, "" when none; it tells the collective an NCCL SendRecv kernel ran, and names RCCL's
    generic kernel), then the one its name says, else the original's family; kernels picked by a word of the
    user's own, their function name. The record winning over the name is not said: real consistent traces do it
    (param's 8 dlrm workers: 5 SendRecv kernels each under all_to_all; PyTorch runs an uneven all_gather as
    broadcasts), so a line counting such kernels would fire where nothing is wrong."""
    arr = np.asarray(names, dtype=object)
    if not len(arr):
        return np.zeros(0, dtype=object), np.zeros(0, dtype=bool)
    words = tuple(sorted((kw or classify.load_keywords()).gpu_comm))
    codes, uniq = factorize(arr)
    by_name = [_gpu_family_of(u, words) for u in uniq.tolist()]
    fam = np.array([f for f, _, _ in by_name], dtype=object)[codes]
    said = np.array([s for _, s, _ in by_name], dtype=bool)[codes]
    if recorded is not None:
        nccl = np.array([n for _, _, n in by_name], dtype=bool)[codes]
        rows = np.flatnonzero(nccl & (np.asarray(recorded, dtype=object) != ""))
        if len(rows):  # once per distinct recorded text
            r_codes, r_uniq = factorize(np.asarray(recorded, dtype=object)[rows])
            word = np.array([collective_word(t) or "" for t in r_uniq.tolist()], dtype=object)[r_codes]
            rows, word = rows[word != ""], word[word != ""]
            fam[rows] = word
            said[rows] = True
    return fam, said


Events = dict[str, np.ndarray]


def gpu_comm_rows(k: pd.DataFrame, kw: classify.Keywords | None = None) -> np.ndarray:
    """Positions of a GPU side's collective kernels in its kernels frame ``k``: the original's rule takes memcpys
    named nccl*; other collectives are kernels, as in the breakdown."""
    names = col_of(k, "name", object)
    cats = col_of(k, "cat", object)
    prefixed = classify.per_unique(names, lambda n: n.startswith(GPU_COMM_PREFIXES))
    return np.flatnonzero(classify.per_unique(cats, lambda c: c in GPU_KERNEL_CATS)
                          & (prefixed | (classify.is_gpu_comm_kernel_name(names, kw) & (cats == "kernel"))))


def comm_events(profile: Profile, kw: classify.Keywords | None = None, side: str = "") -> tuple[Events, Events]:
    """(ops, tasks) of one side as columns name / ts / dur / op_id; GPU has no task rows, and its ops
    carry their family (``classify.gpu_comm_test`` picks them). ``side``: how the unnamed-kernel line names the
    side (``RunContext.side``)."""
    def cols(df: pd.DataFrame, rows: np.ndarray, op_id: np.ndarray | None = None) -> Events:
        return {"name": col_of(df, "name", object)[rows], "ts": col_of(df, "ts", np.int64)[rows],
                "dur": col_of(df, "dur", np.int64)[rows],
                "op_id": col_of(df, "op_id", np.int64)[rows] if op_id is None else op_id}

    none = np.zeros(0, dtype=np.int64)
    if profile.is_gpu:
        k = profile.kernels
        if not len(k):
            return cols(k, none, none), cols(k, none, none)
        rows = gpu_comm_rows(k, kw)
        # the original's kernel dict keys "pid-tid-ts": a duplicate event is one kernel (the later one)
        rows = rows[last_of_keys(*(col_of(k, c, np.int64)[rows] for c in ("pid", "tid", "ts")))]
        ops = cols(k, rows, np.full(len(rows), -1, np.int64))
        # PyTorch's Collective name: on the kernel itself, else on the record around its launch call
        recorded = col_of(k, "collective", object)[rows]
        lacking = np.setdiff1d(np.arange(len(rows)), naming(recorded), assume_unique=True)
        if len(lacking):
            recorded[lacking] = launch_collectives(profile, rows[lacking])
        ops["family"], named = gpu_family(ops["name"], kw, recorded)
        _note_unnamed(profile, ops, named, side)
        return ops, cols(k, none, none)
    c = profile.comm
    is_op = col_of(c, "lane", object) == "op"
    return cols(c, np.flatnonzero(is_op)), cols(c, np.flatnonzero(~is_op))


def _note_unnamed(profile: Profile, ops: Events, named: np.ndarray, side: str) -> None:
    """One line when some NCCL / RCCL kernels name no collective, neither in their name nor in PyTorch's record
    (RCCL's generic kernel launched before the profile began): their row may hold any collective, so the
    collectives' rows beside it lack that time. It ends with ``side``, as the comparators' other lines about one
    side's data do: two ranks of one job gave lines that differed by a digit of a path."""
    left = ~named  # only NCCL / RCCL kernels can be left unnamed: the others are named by their mask word
    if left.any() and named.any():
        log.info("%s: %s of %s collective kernels (%.3f ms) name no collective (no Collective name recorded for "
                 "their launch, e.g. launched before the profile began): their row %s may hold any collective%s",
                 profile.path, f"{int(left.sum()):,}", f"{len(left):,}", ms3(int(ops["dur"][left].sum())),
                 ", ".join(sorted({str(f) for f in ops["family"][left]})), side_named(side))


def _sorted(ev: Events, rng: tuple[int, int] | None) -> Events:
    rows = np.flatnonzero(in_range(ev["ts"], rng))
    rows = rows[np.argsort(ev["ts"][rows], kind="stable")]
    return {k: v[rows] for k, v in ev.items()}


def attribute_tasks(op_ts: np.ndarray, op_end: np.ndarray, task_ts: np.ndarray) -> np.ndarray:
    """Op index of each task (-1: none) for start-sorted ops and tasks.

    Equivalent to the original's single forward pointer: per op, skip tasks that start
    before it, then take every task starting no later than its end.
    """
    owner = np.full(len(task_ts), -1, dtype=np.int64)
    if not len(op_ts) or not len(task_ts):
        return owner
    lo = np.searchsorted(task_ts, op_ts, side="left")
    hi = np.searchsorted(task_ts, op_end, side="right")
    ptr_after = np.maximum.accumulate(np.maximum(hi, lo))
    ptr_before = np.concatenate([[0], ptr_after[:-1]])
    start = np.maximum(ptr_before, lo)
    stop = ptr_after
    counts = np.maximum(stop - start, 0)
    if counts.sum():
        op_idx = np.repeat(np.arange(len(op_ts)), counts)
        owner[ranges(start, start + counts)] = op_idx
    return owner


def side_data(profile: Profile, rng: tuple[int, int] | None, kw: classify.Keywords | None = None,
              events: tuple[Events, Events] | None = None) -> dict[str, dict]:
    """``{family: {"ops": durations_ns, "tasks": {task name: durations_ns}}}`` in first-appearance order, as
    int64 ns: the sheet's µs figures are their exact sums divided once (``_stats``), not float running sums.
    ``events``: the profile's ``comm_events``, when the caller has them already (left unchanged)."""
    ops, tasks = events or comm_events(profile, kw)
    if profile.source == "ascend_db":  # DB ops are named by their opType there (reference-2 §4.1, -1 §7.4)
        is_op = col_of(profile.comm, "lane", object) == "op"
        ops = {**ops, "name": col_of(profile.comm, "task_type", object)[is_op]}
    ops = _sorted(ops, rng)
    tasks = _sorted(tasks, rng)
    fam_arr = ops["family"] if "family" in ops else family(ops["name"])
    # ignored ops leave before the task walk, so their tasks go to the op around them (reference-1 §3.4)
    keep = np.array([f is not None for f in fam_arr.tolist()], dtype=bool)
    out: dict[str, dict] = {}
    if not keep.any():
        return out
    op_ids = ops["op_id"]  # every op's, the ignored ones' too: a task of none of them is placed by time
    ops = {k: v[keep] for k, v in ops.items()}
    fam_arr = fam_arr[keep]
    op_ts = ops["ts"]
    op_end = op_ts + ops["dur"]
    if profile.source == "ascend_db" and (ops["op_id"] >= 0).any():
        by_id = dict(zip(ops["op_id"].tolist(), range(len(op_ts)), strict=False))
        owner = np.array([by_id.get(i, -1) for i in tasks["op_id"].tolist()], dtype=np.int64)
        # COMMUNICATION_TASK_INFO.opId NULL, or one no op holds (both said by the loader): placed by time
        no_id = (tasks["op_id"] == -1) | ((tasks["op_id"] >= 0) & ~np.isin(tasks["op_id"], op_ids))
        if no_id.any():
            owner[no_id] = attribute_tasks(op_ts, op_end, tasks["ts"])[no_id]
    else:
        owner = attribute_tasks(op_ts, op_end, tasks["ts"])
    owner[tasks["op_id"] == OP_OUT_OF_STEP] = -1  # its op starts outside the step (``COMM_STEP_CUT``)
    op_ns = ops["dur"]
    for f in pd.unique(fam_arr):
        out[f] = {"ops": op_ns[fam_arr == f], "tasks": {}}
    if len(tasks["ts"]):
        has = owner >= 0
        t_fam = fam_arr[owner[has]]
        t_name = tasks["name"][has]
        t_ns = tasks["dur"][has]
        if len(t_fam):
            # (family, task name) groups in first-appearance order, values in row order
            f_codes, _ = pd.factorize(t_fam)
            n_codes, _ = pd.factorize(t_name)
            g, first_row = pair_codes(f_codes, n_codes)
            order = np.argsort(g, kind="stable")
            bounds = np.searchsorted(g[order], np.arange(len(first_row) + 1))
            for k, r in enumerate(first_row.tolist()):
                out[t_fam[r]]["tasks"][t_name[r]] = t_ns[order[bounds[k]:bounds[k + 1]]]
    return out


def step_cut(profile: Profile, rng: tuple[int, int] | None, events: tuple[Events, Events]) -> tuple[int, int, int, int]:
    """(ops starting before the step whose tasks run inside it, those tasks; ops starting in the step whose tasks
    run after it, those tasks): what the step's bounds cut from CommunicationCompare, which counts an op and its
    tasks by their starts (reference-2 §4.1, §9). A text export's tasks go to ops by time, as ``side_data``'s walk
    would place them, a DB's by opId (counted by the loader, which keeps the step's rows alone)."""
    none = (0, 0, 0, 0)
    if rng is None or profile.is_gpu:
        return none
    if profile.source == "ascend_db":
        return tuple(profile.extra.get(COMM_STEP_CUT, none))
    ops, tasks = (_sorted(e, None) for e in events)
    op_ts, op_end, t_ts = ops["ts"], ops["ts"] + ops["dur"], tasks["ts"]
    inside = in_range(op_ts, rng)
    first = op_ts[inside].min() if inside.any() else rng[1] + 1
    # the step's tasks before its first op: the walk skips them; those an earlier op's time holds are its
    early = np.flatnonzero(in_range(t_ts, rng) & (t_ts < first))
    pre = np.flatnonzero((op_ts < rng[0]) & (op_end >= rng[0]))
    own = attribute_tasks(op_ts[pre], op_end[pre], t_ts[early])
    # tasks after the step that the walk would give to a step's op, had the step not left them out
    late = np.flatnonzero(t_ts > rng[1])
    own_late = attribute_tasks(op_ts[inside], op_end[inside], t_ts[late])
    return (len(np.unique(own[own >= 0])), int((own >= 0).sum()),
            len(np.unique(own_late[own_late >= 0])), int((own_late >= 0).sum()))


def step_cut_line(profile: Profile, cut: tuple[int, int, int, int]) -> str | None:
    """One warning for a side whose step bounds cut communication tasks from their ops (None when none): the
    original leaves them out without a word."""
    n_pre, t_pre, n_post, t_post = cut
    parts = []
    if t_pre:
        parts.append(f"{t_pre:,} task(s) inside the step of {n_pre:,} communication op(s) that start before it are "
                     "left out, as those ops are")
    if t_post:
        parts.append(f"{t_post:,} task(s) after the step's end of {n_post:,} op(s) that start in it are left out, "
                     "while those ops' rows count their whole time")
    if not parts:
        return None
    return (f"{profile.path}: the step's bounds cut communication ops from their tasks: " + "; ".join(parts)
            + " (CommunicationCompare counts an op and each task in the step its start lies in, as the original)")


def _stats(name: str | None, task: str | None, values: np.ndarray | None) -> list:
    """Calls, total, average, max and min in µs of one group's int64 ns durations. The total and the average
    divide the exact integer sum once: a float running sum of µs left noise in the last digits
    (105991.87800000001 for 105991.878, an average of 26497.969500000003 for 26497.9695)."""
    if values is None or not len(values):
        return [None, None, None, 0.0, None, None, None]
    total_ns = int(values.sum(dtype=np.int64))
    n = len(values)
    return [name, task, n, total_ns / 1000, total_ns / (1000 * n), int(values.max()) / 1000,
            int(values.min()) / 1000]


def comm_rows(base: dict[str, dict], comparison: dict[str, dict]) -> list[list]:
    """Summary and task rows for every family: base families first, then comparison-only ones."""
    rows: list[list] = []
    ops: list[int] = []  # the op rows' indices
    for key in list(base) + [k for k in comparison if k not in base]:
        b, c = base.get(key), comparison.get(key)
        bs = _stats(key, None, b["ops"] if b else None)
        cs = _stats(key, None, c["ops"] if c else None)
        ops.append(len(rows))
        rows.append([None, *bs, *cs, None, ratio_of(bs[3], cs[3])])  # Diff Duration(us): below, of all op rows
        b_tasks = list((b or {}).get("tasks", {}).items())
        c_tasks = list((c or {}).get("tasks", {}).items())
        for i, (tname, vals) in enumerate(b_tasks):
            other = _stats("|", c_tasks[i][0], c_tasks[i][1]) if i < len(c_tasks) else _stats(None, None, None)
            rows.append([None, *_stats("|", tname, vals), *other, None, None])
        for tname, vals in c_tasks[len(b_tasks):]:
            rows.append([None, *_stats(None, None, None), *_stats("|", tname, vals), None, None])
    # the totals are whole ns: Diff Duration(us) is their exact change to 0.01 us, in one pass (``exact_diffs``)
    if ops:
        op_rows = [rows[i] for i in ops]
        for r, diff in zip(op_rows, exact_diffs([r[4] for r in op_rows], [r[11] for r in op_rows], 1000).tolist(),
                           strict=True):
            r[15] = diff
    for i, r in enumerate(rows):
        r[0] = i + 1
    return rows


def unnamed_ops(profile: Profile, rng: tuple[int, int] | None, events: tuple[Events, Events]) -> tuple[int, int, int]:
    """(ops in ``rng``, how many of them have no family, their ns): CommunicationCompare leaves those out
    (reference-2 §4.2) while OverallMetrics and the waterfall count their time."""
    ops = events[0]
    names = ops["name"]
    if profile.source == "ascend_db":  # named by their op type, as ``side_data`` groups them
        names = col_of(profile.comm, "task_type", object)[col_of(profile.comm, "lane", object) == "op"]
    keep = in_range(ops["ts"], rng)
    fam = ops["family"] if "family" in ops else family(names)
    miss = keep & pd.isna(np.asarray(fam, dtype=object))  # no family: None
    return int(keep.sum()), int(miss.sum()), int(ops["dur"][miss].sum())


def _db_op_types(profile: Profile, rng: tuple[int, int] | None) -> str:
    """What a DB's communication ops without a family hold in their op type (level-0 exports write N/A; a NULL
    or absent COMMUNICATION_OP.opType reads as none), for the line that says why they have no row."""
    c = profile.comm
    op = (col_of(c, "lane", object) == "op") & in_range(col_of(c, "ts", np.int64), rng)
    types = sorted({str(t) for t in col_of(c, "task_type", object)[op]})
    shown = [t for t in types if t][:3]
    if not shown:
        return "no op type (COMMUNICATION_OP.opType is NULL or absent)"
    return f"an op type of {' / '.join(shown)}" + (" or none" if "" in types else "")


def pair_events(p: Profile, kw: classify.Keywords | None, gpu_pair: bool, side: str = "") -> tuple[Events, Events]:
    """``comm_events`` of one side as the sheet groups them: beside a GPU side (``gpu_pair``), a text export's ops
    go by collective, as GPU families are collectives; ``side`` as ``comm_events``'."""
    events = comm_events(p, kw, side)
    if gpu_pair and p.is_npu and p.source != "ascend_db":
        events = ({**events[0], "family": collective_families(events[0]["name"])}, events[1])
    return events


def build(ctx: RunContext) -> list[Sheet]:
    """The CommunicationCompare sheet (left out when neither side has a communication op)."""
    data = []
    left_out: list[int] = []
    unnamed: list[tuple[int, str]] = []
    kw = None
    gpu_pair = ctx.base.is_gpu != ctx.comparison.is_gpu
    if ctx.base.is_gpu or ctx.comparison.is_gpu:  # the GPU side's collectives go by keyword lists
        kw = ctx.keywords or classify.load_keywords()
    for side, p in (("base", ctx.base), ("comparison", ctx.comparison)):
        rng = side_range(ctx, side)
        events = pair_events(p, kw, gpu_pair, ctx.side(p))
        d = side_data(p, rng, kw, events)
        if (cut := step_cut_line(p, step_cut(p, rng, events))) is not None:
            log.warning("%s%s", cut, side_named(ctx.side(p)))
        total, n_out, ns_out = unnamed_ops(p, rng, events)
        left_out.append(ns_out)  # a side without any row is "not recorded" (communication_line), its time still said
        why = "" if not n_out else (_db_op_types(p, rng) if p.source == "ascend_db"
                                    else "names without a '_' (a family is a name's first '_' piece)")
        unnamed.append((n_out, why))
        if d and n_out:  # some ops left out: the op rows fall short of OverallMetrics by their time
            log.warning("%s: %s of its %s communication op(s) (%.3f ms) have %s, so CommunicationCompare leaves them "
                        "out of its op rows%s", p.path, f"{n_out:,}", f"{total:,}", ms3(ns_out), why,
                        side_named(ctx.side(p), "OverallMetrics and the waterfall count their time"))
        if not d:
            if n_out:  # "can't find any" would contradict OverallMetrics, which counts their time
                counted = "OverallMetrics counts their time" if ctx.options.enable_profiling_compare else None
                log.warning("%s: its %s communication op(s) have %s, so CommunicationCompare has no family to "
                            "group them by and no row for this side%s", p.path, f"{n_out:,}", why,
                            side_named(ctx.side(p), counted))
            else:
                log.log(ctx.options.notice_level(), "Can't find any communication op in the file: %s%s", p.path,
                        side_named(ctx.side(p)))
        data.append(d)
    ctx.cache[LEFT_OUT_KEY] = tuple(left_out)
    ctx.cache[UNNAMED_KEY] = tuple(unnamed)
    rows = comm_rows(*data)
    ctx.cache[COMMUNICATION_ROWS] = bool(rows)
    if not rows:
        return []
    return [Sheet("CommunicationCompare", COLUMNS, frame_from_rows(rows, 17), *SPANS)]
