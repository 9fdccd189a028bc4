"""The op tree of one profile, its flow-linked kernels, and the operator pairing.

Built from the model tables only (``ops``, ``kernels``, ``flows``, ``comm``), as
numpy arrays over the ops sorted (stably) by start time (reference-2 §2.2):

* nesting is the original's cursor rule: the open op is left while the next op
  starts strictly after its end (an op starting exactly at its parent's end is
  still a child; thread ids are ignored), but for ``ProfilerStep#`` markers: one
  holds the ops starting with it that it covers, whatever the file order (of
  markers starting together, the longest holds the others; a tied op lies
  under the shortest that covers it and holds the shorter ones), and is no child of
  an op ending as it starts, nor is an op it starts with that holds it
  (``build_tree``). In start order every subtree is then a contiguous range
  ``[i, i + size[i])``, so subtree sums are array sums and no per-node objects
  exist;
* kernels are linked through flows: a flow whose start ts equals an op's ts
  (exact integer ns) gives that op the kernel found at the flow end's
  pid/tid/ts. Ops sharing a ts share the kernels (the original double counts
  these; kept for parity). ``kernel_num`` counts a node's subtree kernels.

``operator_pairs(ctx)`` is the one place the operator pairing is decided
(top-layer ops §2.3, backward split §2.4, matching and ``--max_kernel_num``
drill-down §2.5). The memory comparator reuses it from ``ctx.cache`` and places
its records with ``OpTree.place`` (the deepest open op at the record's ts, with
ops ordered before records at equal ts, exactly as if they were sorted together).
"""

from __future__ import annotations

import ast
import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec
import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import ProfileError, side_named
from ..logs import api_worded
from ..model import (
    DRIVER_CATS,
    MS_VERSION,
    NO_DEVICE_TIME,
    RUNTIME_CATS,
    STEP_MARK,
    Profile,
    factorize,
    has_profiling_directory,
    knows_backward_thread,
    marker_step,
    npu_framework,
    ranges,
    starts_read,
    unread_categories,
)
from ..textsafe import and_list, shell_word, term_safe
from . import classify
from .align import AlignMemo, align, no_matching
from .table import plain_frame

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Collection, Mapping

    from ..api import RunContext
    from ..options import Options

log = logging.getLogger("msprof-analyze")

# Driver calls (model.DRIVER_CATS: CUDA's cuLaunchKernel for Triton, cuBLASLt; XPU's, PrivateUse1's) are no op
# category of the original, which so loses every kernel launched through the driver (44.998 of aten::matmul's
# 50.276 ms on the timesformer H100 trace). Ours gives such a kernel to the innermost op around the driver call
# (``_driver_edges``); the calls themselves never become ops.
#: GPU op categories the original treats as ops (reference-2 §2.1; XPU's and PrivateUse1's runtime calls as
#: cuda_runtime).
GPU_OP_CATS = frozenset({"cpu_op", "user_annotation", "operator", "runtime"}) | RUNTIME_CATS
#: Flow categories linking ops to kernels (replaced by ``--gpu_flow_cat`` on GPU when given).
GPU_FLOW_CATS = frozenset({"async_gpu", "async_cpu_to_gpu", "ac2g", "async"})
NPU_FLOW_CATS = frozenset({"async_npu"})
#: The GPU device activities an op can own (the original's: not gpu_memset, not the legacy "Memcpy" / "Memset").
GPU_KERNEL_CATS = frozenset({"kernel", "gpu_memcpy"})
_CACHE_TREE = "optree.tree.{side}"
_CACHE_PAIRS = "optree.operator_pairs"


def side_profile(ctx: RunContext, side: str) -> Profile:
    """The profile of ``side`` ("base" or "comparison"): the per-side caches are keyed by that word."""
    return ctx.base if side == "base" else ctx.comparison


#: ``RunContext.cache`` key: whether the communication comparator made CommunicationCompare rows (it runs before
#: the comparators that pair ops, whose one-sided warning says which comparisons apply)
COMMUNICATION_ROWS = "communication.has_rows"


def _kernel_table(p: Profile) -> bool:
    """Whether ``p`` holds the kernel table KernelCompare groups (kernel_details.csv, a DB export's compute tasks):
    the comparison still says itself why a table gives it no row (Level0's N/A types, a step without kernels)."""
    kd = p.kernel_details
    return kd is not None and len(kd) > 0 and "Type" in kd.columns and "Duration(us)" in kd.columns


#: The comparisons that pair no ops, by the flag that asks for each, in the original's sheet order
_WITHOUT_OPS = (("overall", "enable_profiling_compare"), ("communication", "enable_communication_compare"),
                ("kernel", "enable_kernel_compare"))


def _device_time(p: Profile) -> bool:
    """Whether ``p`` holds device work with a duration, which the overall comparison's E2E time spans (every loader
    reads the kernels / device tasks whatever the run compares): a MindSpore 1.x timeline_display file has none."""
    k = p.kernels
    return len(k) > 0 and bool((col_of(k, "dur", np.int64) > 0).any())


def _communication_rows(ctx: RunContext) -> bool:
    """Whether the communication comparison, not run here, would make CommunicationCompare rows: a side with a
    communication op of a family in its step (an NPU side's as the comparator groups them; a GPU side's collective
    kernels, each of which it names). Both loaders read these whatever the run compares."""
    from .communication import gpu_comm_rows, gpu_family, pair_events, side_data
    from .steps import in_range, side_range

    gpu_pair = ctx.base.is_gpu != ctx.comparison.is_gpu
    kw = ctx.keywords or classify.load_keywords() if ctx.base.is_gpu or ctx.comparison.is_gpu else None
    for side in ("base", "comparison"):
        p = side_profile(ctx, side)
        rng = side_range(ctx, side)
        if p.is_gpu:  # the collective kernels' families by their names (``comm_events``'s naming would log)
            rows = gpu_comm_rows(p.kernels, kw)
            rows = rows[in_range(col_of(p.kernels, "ts", np.int64)[rows], rng)]
            if any(f is not None for f in gpu_family(col_of(p.kernels, "name", object)[rows], kw)[0].tolist()):
                return True
        elif side_data(p, rng, kw, pair_events(p, kw, gpu_pair)):
            return True
    return False


def comparisons_without_ops(ctx: RunContext) -> tuple[list[str], list[tuple[str, str]]]:
    """The comparisons that pair no ops and apply to the pair: (those of this run, (name, flag) of those this run
    left off). Overall: both sides have E2E time (its comparator ran before; else both hold timed device work);
    communication: CommunicationCompare has rows (its comparator ran before; else ``_communication_rows``); kernel:
    both sides NPU data with a kernel table. The one-sided warning said "the overall and communication comparisons
    apply" of every MindSpore side, beside a MindSpore 1.x timeline that has neither, and "none of this run's other
    comparisons applies" in a memory-only run whose pair the overall comparison would serve. A comparison off here
    that would refuse a side read without device time (``model.NO_DEVICE_TIME``) is not offered."""
    from .overall import find_breakdowns

    opts = ctx.options

    def overall() -> bool:
        if opts.enable_profiling_compare:
            bds = find_breakdowns(ctx)
            return bds is not None and all(bd.e2e_ns > 0 for bd in bds)
        return _device_time(ctx.base) and _device_time(ctx.comparison)

    def communication() -> bool:
        if opts.enable_communication_compare:
            return bool(ctx.cache.get(COMMUNICATION_ROWS))
        return _communication_rows(ctx)

    def kernel() -> bool:
        return (ctx.base.is_npu and ctx.comparison.is_npu and _kernel_table(ctx.base)
                and _kernel_table(ctx.comparison))

    tests = {"overall": overall, "communication": communication, "kernel": kernel}
    def refused(name: str) -> bool:  # a side its loader read without any device time, as this run reads none: a
        # run of ``name`` would refuse it (the kernel comparison reads a text export's kernel_details.csv instead)
        return any(p.extra.get(NO_DEVICE_TIME) and (name != "kernel" or p.source == "ascend_db")
                   for p in (ctx.base, ctx.comparison))

    applies, would = [], []
    for name, flag in _WITHOUT_OPS:
        if not getattr(opts, flag) and refused(name):
            continue
        if tests[name]():
            if getattr(opts, flag):
                applies.append(name)
            else:
                would.append((name, flag))
    return applies, would


#: Why a MindSpore side has no torch op: 2.5 and later write their framework ops with category "", 2.3 / 2.4 as
#: cpu_op events (docs/differences.md, "MindSpore text exports"), so such a side is either.
MINDSPORE_NONE = "MindSpore 2.5+ exports have none, nor do 2.3 / 2.4 ones without cpu_op events"


def _mindspore_none(version: object) -> str:
    """``MINDSPORE_NONE`` for the one release line that applies, where profiler_info's ``ms_version`` names it
    (``MS_VERSION``: "2.6.0", "2.4.1rc1"): a 2.6 export was told what 2.3 / 2.4 exports lack. The generic text
    where no version is known or its major.minor reads as neither line (an older or unparsed one)."""
    parts = str(version or "").split(".")
    try:
        line = (int(parts[0]), int("".join(c for c in parts[1][:2] if c.isdigit()) or "x"))
    except (IndexError, ValueError):
        return MINDSPORE_NONE
    if line >= (2, 5):
        return f"a MindSpore {version} export has none, as no 2.5+ one does"
    if line >= (2, 3):
        return f"a MindSpore {version} export without cpu_op events has none"
    return MINDSPORE_NONE


def no_ops_reason(p: Profile) -> str:
    """Why ``p`` has no torch op, as far as its kind tells: a GPU trace or a torch_npu export holds no host event
    that is one (recorded without the CPU activity, or cut); MindSpore 2.5+ exports (framework ops of category ""),
    msmonitor captures and CANN timelines record none; a MindSpore DB's are not read. The warning said "(MindSpore
    exports have none)" of a Kineto trace with kernels alone, and beside a MindSpore 2.3 / 2.4 export, whose
    framework ops are cpu_op events."""
    if p.is_gpu:
        unread = unread_categories(p)
        return ("a GPU trace without cpu_op events has none" if p.has_ops else
                "a GPU trace without cpu_op or runtime events has none") + (
            f"; it holds complete events of categories that are not read: {unread}" if unread else "")
    read = os.path.basename(p.files.get("trace_view.json") or p.files.get("db") or "")
    if read.startswith("msmonitor"):
        return "msmonitor captures have none"
    if read.startswith("ascend_mindspore_profiler"):
        # its framework ops are not read (reference-1 §7.2: PYTORCH_API of a torch_npu DB alone): "nor do 2.3 / 2.4
        # ones without cpu_op events" spoke of text exports' events, none of which a database holds
        return "a MindSpore DB export's framework ops are not read, as in the original"
    if p.level == "trace" and not has_profiling_directory(p):
        return "MindSpore and CANN timelines have none"
    framework = npu_framework(p)
    if framework == "torch_npu":
        return "a torch_npu export without cpu_op events has none"
    if framework == "MindSpore":
        return _mindspore_none(p.extra.get(MS_VERSION))
    # a folder no name, lane or profiler_info.json tells of (a renamed copy): it was called a MindSpore export
    return "an NPU export without cpu_op events has none"


def neither_reason(ctx: RunContext) -> str:
    """Why neither side has a torch op, by kind (``no_ops_reason``): the one reason, or each side's where they
    differ. The no-op warning, the memory line and the kernel notice give it alike."""
    base, comp = (no_ops_reason(p) for p in (ctx.base, ctx.comparison))
    return base if base == comp else f"base: {base}; comparison: {comp}"


def would_add(would: list[tuple[str, str]]) -> str:
    """The flags of the comparisons a run left off that apply to its pair (``comparisons_without_ops``' second
    list) and what they add, as the no-op warnings and the kernel notice name them."""
    names = [n for n, _ in would]
    return (f"{and_list([f'--{f}' for _, f in would])} would add the {and_list(names)} "
            f"comparison{'s' if len(names) > 1 else ''}")


def _without_ops_text(ctx: RunContext) -> str:
    """Which comparisons apply to a pair whose ops cannot be paired, and the flags of those this run left off
    (``comparisons_without_ops``), as the end of the no-op warnings."""
    applies, would = comparisons_without_ops(ctx)
    if applies:
        what = f"the {and_list(applies)} comparison{'s apply' if len(applies) > 1 else ' applies'}"
    else:
        what = "none of this run's other comparisons applies"
    if would:
        what += f"; {would_add(would)}"
    return what


def _neither_side_notice(ctx: RunContext, side: str) -> None:
    """After both sides' "Can't find any torch op" lines of a run that asked for a comparison pairing ops: why
    neither side has one, by its kind, and what does apply. Two MindSpore exports run with
    --enable_operator_compare ended on those two lines and "No comparison produced any rows", with no word that
    MindSpore records no framework op or of the flags that compare such exports, which the one-sided warning
    gives a pair with one MindSpore side."""
    said = ctx.cache.setdefault("optree.no_ops_sides", set())
    said.add(side)
    if said != {"base", "comparison"} or ctx.options.by_default:
        return
    log.warning("Neither side has a torch op (%s), so the operator, module, memory and API comparisons have "
                "nothing to pair: %s", neither_reason(ctx), _without_ops_text(ctx))


def one_sided(ctx: RunContext) -> bool:
    """Whether exactly one side recorded no torch op (a MindSpore export, a capture without the CPU activity):
    a sheet of paired ops would then hold the other side's ops alone, each "100 %" slower or faster, so the
    operator, module, memory and API sheets are left out, with one warning saying why (the original writes
    them one-sided) and which other comparisons apply (``comparisons_without_ops``), naming the flags of those
    this run left off."""
    def compute() -> bool:
        without = [p for p in (ctx.base, ctx.comparison) if not ctx.has_ops(p)]
        if len(without) != 1:
            return False
        log.warning("Can't find any torch op in the file: %s%s, so the sheets that pair the ops of both sides "
                    "(operator, module, memory, API) are left out; only the other side has ops (%s): %s",
                    without[0].path, side_named(ctx.side(without[0])), no_ops_reason(without[0]),
                    _without_ops_text(ctx))
        return True

    return ctx.cached("optree.one_sided", compute)


@dataclass(eq=False)
class OpTree:
    """One side's op tree as arrays indexed by node id (= position in start order).

    ``parent[i]`` is -1 for top-level ops (children of the implicit root);
    ``depth`` counts ancestors; node ``i``'s subtree is ``range(i, i + size[i])``.
    ``kpool`` holds every kernel an op can own (kernels, plus NPU HCCL ops when
    the original adds them); ``kptr``/``kidx`` (CSR) list each node's OWN kernels
    in flow order. ``kernel_num`` and ``device_ns`` are subtree totals.
    """

    profile: Profile
    ops: pd.DataFrame
    ts: np.ndarray
    end: np.ndarray
    tid: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    size: np.ndarray
    kpool: pd.DataFrame
    kptr: np.ndarray
    kidx: np.ndarray
    kernel_num: np.ndarray
    device_ns: np.ndarray
    has_flows: bool = True
    #: ``flow_kernels`` of this side (flows of the run's cats joined to ``kpool``), shared with
    #: the module comparator, which needs the same join for its kernel time points
    fk: pd.DataFrame | None = field(default=None, repr=False)
    #: every node's children, grouped by parent (CSR over nodes -1..n-1; see ``children``)
    _child_order: np.ndarray | None = field(default=None, repr=False)
    _child_ptr: np.ndarray | None = field(default=None, repr=False)
    _kernel_text: np.ndarray | None = field(default=None, repr=False)
    _name_codes: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _is_step: np.ndarray | None = field(default=None, repr=False)
    #: ``depth`` less each node's ``--transparent_op`` ancestors (``see_through``); None without the option
    _open_depth: np.ndarray | None = field(default=None, repr=False)
    #: per ``--transparent_op`` op: its nearest ancestor that is none (-1: none), the owner of its memory records
    _open_owner: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """Number of op nodes, the length of every per-node array."""
        return len(self.ts)

    @property
    def names(self) -> np.ndarray:
        """Op names as an array, for vectorised lookups by node index."""
        return col_of(self.ops, "name")

    def children(self, node: int) -> np.ndarray:
        """Direct children of ``node`` (-1 = the root), in start order.

        One stable sort by parent serves every node: scanning each node's subtree made a
        ``--max_kernel_num`` drill-down of a deep chain (ops nesting back to back) O(n·depth)."""
        if self._child_order is None or self._child_ptr is None:
            self._child_order = np.argsort(self.parent, kind="stable")
            self._child_ptr = np.searchsorted(self.parent[self._child_order], np.arange(-1, self.n + 1))
        return self._child_order[self._child_ptr[node + 1]:self._child_ptr[node + 2]]

    @property
    def listed_depth(self) -> np.ndarray:
        """The depth that orders a node's kernels and memory records in its details: ``depth``, or under
        ``--transparent_op`` the depth in the trace without the named ops' events (``see_through``)."""
        return self.depth if self._open_depth is None else self._open_depth

    def see_through(self, transparent: tuple[str, ...]) -> None:
        """Count the ``--transparent_op`` ops out of every node's listed depth: the breadth-first details of an op
        holding one listed its kernels one level later than the trace without its event does. A named op counts
        itself out too, so it lists at the level of the op around it: the kernels it launched itself (a
        cuLaunchKernel call inside ``aten::mm``, which the op around the driver call owns) are that op's own in the
        trace without its event, listed before the level below (they came after it); its memory records are given
        to that op outright (``listed_owner``). Beside that op's own kernels they follow them, where the trace
        without the event merges the two in launch order."""
        mask = self.transparent_mask(transparent)
        named = np.flatnonzero(mask)
        if not len(named):
            return
        step = np.zeros(self.n + 1, np.int64)  # +1 over each named node's subtree, a contiguous range
        np.add.at(step, named, 1)
        np.add.at(step, named + self.size[named], -1)
        self._open_depth = self.depth - np.cumsum(step[:-1])
        up = self.parent[named]
        todo = np.flatnonzero(up >= 0)
        todo = todo[mask[up[todo]]]
        while len(todo):  # a named op inside a named op: on to the first ancestor not named
            up[todo] = self.parent[up[todo]]
            todo = todo[up[todo] >= 0]
            todo = todo[mask[up[todo]]]
        self._open_owner = (named, up)

    def listed_owner(self, owner: np.ndarray) -> np.ndarray:
        """``place``'s owners with each ``--transparent_op`` op replaced by its nearest ancestor that is none (-1
        where none is): in the trace without the named ops' events a memory record inside one belongs to the op
        around it, which names it in the memory details and lists it among its own records."""
        if self._open_owner is None or not len(owner):
            return owner
        named, up = self._open_owner
        at = np.searchsorted(named, owner)
        hit = (at < len(named)) & (named[np.minimum(at, len(named) - 1)] == owner)
        out = owner.copy()
        out[hit] = up[at[hit]]
        return out

    def subtree_bfs(self, node: int) -> np.ndarray:
        """``node`` and all its descendants in breadth-first order (the original's "total" order)."""
        idx = np.arange(node, node + int(self.size[node]))
        return idx[np.lexsort((idx, self.listed_depth[idx]))]

    def own_kernels(self, node: int) -> np.ndarray:
        """Indices into ``kpool`` of the kernels ``node`` launched itself (not its children's)."""
        return self.kidx[self.kptr[node]:self.kptr[node + 1]]

    def total_kernels(self, node: int) -> np.ndarray:
        """Kernel-pool rows of the node's own kernels, then its descendants' (breadth-first)."""
        if self.kernel_num[node] == 0:
            return np.empty(0, np.int64)
        nodes = self.subtree_bfs(node)  # one gather, not a slice per node: an annotation holds thousands
        return self.kidx[ranges(self.kptr[nodes], self.kptr[nodes + 1])]

    def name_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(code per node, distinct names in first-appearance order): the op names factorized once per tree
        for the module trees and the API sheet (each factorized them again, ~0.1 ms a side of NPU pair 1)."""
        if self._name_codes is None:
            self._name_codes = factorize(col_of(self.ops, "name", object))
        return self._name_codes

    def step_nodes(self) -> np.ndarray:
        """Per node: is it a ``ProfilerStep#`` marker. ``build_tree`` finds them for the ties of markers and ops;
        ``top_layer``, ApiCompare's calls and the module walk read them here."""
        if self._is_step is None:
            self._is_step = _step_flags(*self.name_codes())
        return self._is_step

    def kernel_text(self) -> np.ndarray:
        """The "Kernel Details" line of every kernel-pool row (reference-2 §2.1), computed once."""
        if self._kernel_text is None:
            self._kernel_text = kernel_lines(self.profile, self.kpool)
        return self._kernel_text

    def kernel_text_of(self, rows: np.ndarray) -> np.ndarray:
        """``kernel_text()[rows]``, without the lines of the other rows unless they were made already: the module
        sheets show only the kernels of the top-layer ops inside modules (151 of NPU pair 1's 539 a side)."""
        if self._kernel_text is not None:
            return self._kernel_text[rows]
        return kernel_lines(self.profile, self.kpool, rows) if len(rows) else np.empty(0, dtype=object)

    def place(self, ts: np.ndarray) -> np.ndarray:
        """Node owning each record at ``ts`` (memory records, §2.2), -1 for the root.

        Same result as sorting records together with the ops (ops first at equal
        ts) and walking the cursor: the last op starting at or before ``ts``, or
        its nearest ancestor whose end is not before ``ts``.
        """
        ts = np.asarray(ts, dtype=np.int64)
        cand = np.searchsorted(self.ts, ts, side="right") - 1
        out = cand.copy()
        todo = np.flatnonzero(out >= 0)
        while len(todo):
            cur = out[todo]
            ok = self.end[cur] >= ts[todo]
            todo = todo[~ok]
            out[todo] = self.parent[out[todo]]
            todo = todo[out[todo] >= 0]
        return out

    def transparent_mask(self, transparent: tuple[str, ...]) -> np.ndarray | None:
        """Per node: is it an op ``--transparent_op`` names (never a step marker, which is opened anyway); None
        without the option, so a run without it makes no mask."""
        if not transparent:
            return None
        codes, uniq = self.name_codes()
        return np.isin(uniq, np.asarray(transparent, dtype=object))[codes] & ~self.step_nodes()

    def opened_children(self, node: int, named: np.ndarray | None) -> np.ndarray:
        """``children(node)`` with each ``named`` child replaced by its own children, at any depth, in start order:
        the children ``node`` has in the trace without the named ops' events, which the ``--max_kernel_num``
        drill-down pairs (an opened op's own kernels, if any, stay in ``node``'s totals)."""
        kids = self.children(node)
        if named is None or not named[kids].any():
            return kids
        parts, todo = [], [kids]
        while todo:
            nodes = todo.pop()
            mark = named[nodes]
            parts.append(nodes[~mark])
            todo.extend(self.children(int(c)) for c in nodes[mark].tolist())
        return np.sort(np.concatenate(parts))  # disjoint subtrees: node ids are start order

    def top_layer(self, step: int = -1, transparent: tuple[str, ...] = ()) -> np.ndarray:
        """``top_layer_opened``'s compared ops alone."""
        return self.top_layer_opened(step, transparent)[0]

    def top_layer_opened(self, step: int = -1,
                         transparent: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
        """The compared ops (§2.3): top-level ops with ``ProfilerStep#`` nodes replaced by
        their children; with a step, only the children of that step's node(s) that have no step ancestor.

        An op outside every step that holds step nodes (a ``record_function`` opened around the profiled loop, with the
        first step's marker or before it; an op ending as a marker starts, or starting with it and ending within it,
        holds none: build_tree) is a container, replaced by its children too, at any depth: kept as one op it held the
        whole loop, matching nothing on a side without it (operator match rate 0 %), and with a step the step's marker
        was no top-level op, so the pairing found no op while ``steps.step_range``, which scans every op, found the step
        (the original's "There is no operator infomation for step 50", then ApiCompare's exit 1). Its own kernels, if
        any, are left out, as a step node's are. An op inside a step that holds a later step's marker (a step starting
        before the previous one ends, under the op it starts inside: ``model.step_notes`` warns) stays one op of the
        earlier step, and a step node nested in another is replaced by its children, which belong to the outer step
        (kept as an op, it was one operator named ``ProfilerStep#50`` holding the whole step, matching nothing on the
        other side).

        ``transparent`` (``--transparent_op``): ops of these names that would be compared are replaced by their
        children as a container is, inside a step too (their own kernels left out), which is what the trace without
        their events gives: PARAM's ``[param|cuda]`` annotation around every op of a side otherwise paired nothing.
        Returns (the compared ops, the nodes so opened)."""
        is_step = self.step_nodes()
        named = self.transparent_mask(transparent)  # this runs once a side on every run pairing ops
        opened: list[int] = []
        opener = is_step  # the nodes replaced by their children outside every step
        if (self.parent[is_step] >= 0).any():  # a step node below the top: some op may hold it
            held = np.concatenate([[0], np.cumsum(is_step)])  # step nodes before each node, in start order
            idx = np.arange(self.n)  # a subtree is [i, i + size[i]): its step nodes below i are a difference
            opener = is_step | (held[idx + self.size] > held[idx + 1])
        out: list[np.ndarray] = []
        # (sibling nodes in start order, where the nodes replaced by their children are among them, the next of
        # those, the id of the step node holding them or None): those nodes are few, so the other siblings between
        # two are one slice; a list, not recursion, for a deep chain of nested markers or containers
        inside = is_step  # the nodes replaced by their children inside a step
        if named is not None:
            inside, opener = is_step | named, opener | named
        top = self.children(-1)
        todo: list[tuple[np.ndarray, np.ndarray, int, int | None]] = [(top, np.flatnonzero(opener[top]), 0, None)]
        while todo:
            nodes, marks, k, within = todo.pop()
            taken = within is None and step < 0 or within is not None and (step < 0 or within == step)
            at = int(marks[k - 1]) + 1 if k else 0
            end = int(marks[k]) if k < len(marks) else len(nodes)
            if taken and end > at:
                out.append(nodes[at:end])
            if k < len(marks):  # a step node or a container: its children, then the siblings after it
                node = int(nodes[end])
                inner = self.children(node)
                todo.append((nodes, marks, k + 1, within))
                if named is not None and named[node] and taken:
                    opened.append(node)
                if within is not None:  # inside a step: step nodes (and transparent ops) are replaced, by the
                    own: int | None = within  # outer step's ops
                elif is_step[node]:  # a step with no step ancestor: its id chooses it
                    own = marker_step(self.names[node])
                else:  # a container or a transparent op outside every step
                    own = None
                todo.append((inner, np.flatnonzero((opener if own is None else inside)[inner]), 0, own))
        top_ops = np.concatenate(out) if out else np.empty(0, np.int64)
        return top_ops, np.asarray(opened, np.int64)


def _cat_flags(ops: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per op: is its lower-cased category a GPU op category, a driver category (one factorisation for both)."""
    codes, uniq = factorize(col_of(ops, "cat", object))
    low = ["" if u is None else str(u).lower() for u in uniq.tolist()]
    return (np.array([c in GPU_OP_CATS for c in low], bool)[codes],
            np.array([c in DRIVER_CATS for c in low], bool)[codes])


def _tree_ops(profile: Profile, op_cat: np.ndarray | None = None, paired: bool = True) -> pd.DataFrame:
    """The ops of the tree (GPU: of the op categories, ``op_cat`` from ``_cat_flags``; none where the run pairs
    none of them: ``RunContext.has_ops``) in stable start order, as one row take."""
    ops = profile.ops
    rows = np.arange(len(ops) if paired else 0)
    if profile.is_gpu and len(rows):
        rows = np.flatnonzero(_cat_flags(ops)[0] if op_cat is None else op_cat)
    ts = col_of(ops, "ts")[rows]
    if len(rows) == len(ops) and not (ts[1:] < ts[:-1]).any():
        # every op, already in start order (a DB export's: its loader reads them by start): the table itself; the
        # take and index reset copied all its columns for the same rows (~0.09 ms a side of DB pair 3)
        return ops if isinstance(ops.index, pd.RangeIndex) and ops.index.start == 0 and ops.index.step == 1 \
            else ops.reset_index(drop=True)
    rows = rows[np.argsort(ts, kind="stable")]
    return ops.take(rows).reset_index(drop=True)


#: Up to this many ops ``_nest`` finds parents by a sparse table of running maxima: 3 numpy calls a level where
#: the segment tree makes ~15, which halved the ten nestings of NPU pair 1's compare (155-1,256 ops each). Its
#: log2(n) tables touch every op at every level where the segment tree touches only the ops that hold another, so
#: on the samples' op lists the tree is as fast from ~12k ops (10-25 % faster at 45-95k; where most ops hold
#: others the table stays faster longer), and needs O(n) memory.
SPARSE_NEST_MAX = 1 << 13


def _nest(ts: np.ndarray, end: np.ndarray, with_depth: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Parent and depth of each op of a start-sorted list (the cursor walk of §2.2), vectorised.

    The walk keeps a stack and pops while the next start is after the top's end. With sorted
    starts, the op left on top for node ``i`` is exactly the LAST earlier op ``j`` with
    ``end[j] >= ts[i]`` (anything between them ends before ``ts[i]``, and ``j`` itself cannot
    have been popped, since every later start is <= ``ts[i]`` <= ``end[j]``). That op is found by a
    sparse table (``_last_covering``) or, for long lists, a segment tree (``_last_covering_segments``).
    Depths follow by pointer jumping.

    ``ts`` must be ascending, which is not checked: unsorted, the rule gives an op a parent that starts after it
    (ts [5, 0], end [6, 10]: op 1 under op 0, where the walk puts op 0 under op 1), and the segment tree's binary
    search reads the wrong ranges. Every caller sorts first: ``build_tree`` (``_tree_ops``), ``api_stats.callers``
    (by thread, then start, the threads laid end to end on one axis), ``modules._walk`` and ``_Frames.build``. Of
    ops that start together the caller's order decides which holds the other: each holds the later ones it covers.
    """
    ts = np.asarray(ts, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    n = len(ts)
    if n < 2:
        return np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64) if with_depth else None
    parent = _last_covering(ts, end) if n <= SPARSE_NEST_MAX else _last_covering_segments(ts, end)
    return parent, _depths(parent) if with_depth else None


def _depths(parent: np.ndarray) -> np.ndarray:
    """Number of ancestors of each node: pointer jumping over the parent links (-1: the root)."""
    depth = (parent >= 0).astype(np.int64)
    nxt = parent.copy()
    live = np.flatnonzero(nxt >= 0)
    while len(live):
        up = nxt[live]
        depth[live], nxt[live] = depth[live] + depth[up], nxt[up]
        live = live[nxt[live] >= 0]
    return depth


def _last_covering(ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per ``i``: the last ``j < i`` with ``end[j] >= ts[i]``, -1 for none (``_nest``'s parent rule).

    ``top[k][x]`` is the largest end of the ops at positions ``x - 2**k + 1 .. x``. Each op's search starts at
    op ``i - 1`` and jumps back over the longest run of ops that all end before its start, trying runs of 2**k
    ops from the longest down (a run is skipped whole when its largest end is before the start; the skips add
    up to that longest run, as binary digits do): the op it stops at is the answer, the sentinel none."""
    n = len(ts)
    # position p + 1 holds op p; position 0 a sentinel (the smallest int64), where a search that finds no op
    # stops (positions are kept >= 0)
    top = [np.concatenate([[np.iinfo(np.int64).min], end])]
    width = 1
    while 2 * width <= n:
        prev = top[-1]
        cur = prev.copy()
        np.maximum(prev[width:], prev[:-width], out=cur[width:])
        top.append(cur)
        width *= 2
    pos = np.arange(n, dtype=np.int64)  # op i - 1's position
    for k in range(len(top) - 1, -1, -1):
        pos -= (top[k][pos] < ts) * (1 << k)
        np.maximum(pos, 0, out=pos)
    return pos - 1


def _last_covering_segments(ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``_last_covering`` in O(n) memory: op ``j`` is the candidate parent of the index range ``j+1 .. last i
    with ts[i] <= end[j]``, and the parent of ``i`` is the largest ``j`` whose range covers it: a range-max over
    a segment tree, filled and read level by level in numpy."""
    n = len(ts)
    # op j covers j+1 .. (exclusive) hi: none when the next op starts after its end (most python frames and
    # ops are leaves), so only the others are searched
    label = np.flatnonzero(ts[1:] <= end[:-1])
    size = 1 << int(n - 1).bit_length()
    best = np.full(2 * size, -1, dtype=np.int64)
    lo, hi = label + 1 + size, np.searchsorted(ts, end[label], side="right") + size
    while len(label):
        odd = (lo & 1) == 1
        np.maximum.at(best, lo[odd], label[odd])
        lo = lo + odd
        odd = (hi & 1) == 1
        hi = hi - odd
        np.maximum.at(best, hi[odd], label[odd])
        lo >>= 1
        hi >>= 1
        keep = lo < hi
        label, lo, hi = label[keep], lo[keep], hi[keep]
    # push each node's best down to its children, level by level: leaves get the max over their ancestors
    width = 1
    while width < size:
        np.maximum(best[2 * width:4 * width], np.repeat(best[width:2 * width], 2), out=best[2 * width:4 * width])
        width *= 2
    return best[size:size + n].copy()


def levels(depth: np.ndarray) -> list[np.ndarray]:
    """The node indices of each depth 0, 1, ... (ascending within a level): one sort, so walking a tree level
    by level costs O(n + depth), not O(n x depth) as a ``depth == d`` scan per level did (20 s at depth 80k)."""
    if len(depth) == 0:
        return []
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    return [order[bounds[d]:bounds[d + 1]] for d in range(len(bounds) - 1)]


def _subtree_sum(values: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Per-node sum of ``values`` over the node's subtree (deepest level first)."""
    out = values.astype(np.int64).copy()
    for sel in reversed(levels(depth)[1:]):
        np.add.at(out, parent[sel], out[sel])
    return out


def _range_sums(values: np.ndarray, first: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Sums of ``values`` over the index ranges ``[first, first + size)``: subtree sums of a tree in
    start order, whose subtrees are ranges (no level-by-level pass)."""
    cs = np.concatenate([[0], np.cumsum(values, dtype=np.int64)])
    return cs[first + size] - cs[first]


def flow_cats(profile: Profile, gpu_flow_cat: str = "") -> frozenset:
    """The flow categories that link ops to kernels for this profile."""
    if profile.is_gpu:
        return frozenset({gpu_flow_cat.lower()}) if gpu_flow_cat else GPU_FLOW_CATS
    return NPU_FLOW_CATS


_POOL_COLUMNS = ["name", "ts", "dur", "pid", "tid", "task_id", "task_type"]
#: the pool's column labels, one Index for every pool (pandas 3 spends ~30 us inferring a new one; Index is
#: immutable, so frames can share it, as the model tables do)
_POOL_INDEX = pd.Index(_POOL_COLUMNS)


def kernel_pool(profile: Profile, with_comm: bool) -> pd.DataFrame:
    """The kernels ops can own. NPU adds the HCCL op-lane events when ``with_comm`` (reference-2
    §2.1; ``op_tree`` always asks for them), so collectives attach to their ops."""
    cols = _POOL_COLUMNS
    kernels = profile.kernels
    rows = None
    if profile.is_gpu and len(kernels):
        # the original links only cat kernel / gpu_memcpy (not gpu_memset, not the legacy
        # "Memcpy"/"Memset" cats); the Kineto loader keeps the raw cat in ``task_type``
        task_type = col_of(kernels, "task_type", object)
        raw = np.where(task_type != "", task_type, col_of(kernels, "cat", object))
        rows = np.flatnonzero(classify.per_unique(raw, lambda c: c in GPU_KERNEL_CATS))
    comm = profile.comm if profile.is_npu and with_comm and len(profile.comm) else None
    fast = _pool_arrays(kernels, rows, comm)
    if fast is not None:
        return fast
    pool = kernels.take(rows)[cols] if rows is not None else kernels[cols]
    if comm is not None:
        comm = comm[comm["lane"] == "op"]
        extra = pd.DataFrame({
            "name": col_of(comm, "name"), "ts": col_of(comm, "ts"), "dur": col_of(comm, "dur"),
            "pid": col_of(comm, "pid"), "tid": col_of(comm, "tid"),
            "task_id": np.full(len(comm), -2, np.int64),  # -2: no "Task Id" arg (prints None)
            "task_type": np.full(len(comm), None, dtype=object),
        })
        pool = pd.concat([pool, extra], ignore_index=True)
    return pool.reset_index(drop=True)


def _pool_arrays(kernels: pd.DataFrame, rows: np.ndarray | None, comm: pd.DataFrame | None) -> pd.DataFrame | None:
    """``kernel_pool``'s frame built from numpy columns (its row take, column selection, frame of the HCCL rows,
    concat and index reset were ~1.5 ms a side of NPU pair 1, whose pool has ~540 rows); None where a column
    is not plain numpy or an HCCL column's dtype differs from the kernels' (pandas' concat rules then)."""
    arrays: dict[str, np.ndarray] = {}
    dtypes = kernels.dtypes  # one Series, not one per column
    for c in _POOL_COLUMNS:
        if c not in kernels.columns or not isinstance(dtypes[c], np.dtype):
            return None
        a = col_of(kernels, c)
        arrays[c] = a if rows is None else a[rows]
    if comm is not None:
        op = np.flatnonzero(col_of(comm, "lane", object) == "op")
        extra = {c: col_of(comm, c)[op] for c in ("name", "ts", "dur", "pid", "tid") if c in comm.columns}
        extra["task_id"] = np.full(len(op), -2, np.int64)  # -2: no "Task Id" arg (prints None)
        extra["task_type"] = np.full(len(op), None, dtype=object)
        if len(extra) != len(_POOL_COLUMNS) or any(extra[c].dtype != arrays[c].dtype for c in _POOL_COLUMNS):
            return None
        arrays = {c: np.concatenate([arrays[c], extra[c]]) for c in _POOL_COLUMNS}
    n = len(arrays["ts"])
    # from the arrays as they are: pandas 3's constructor would read an object array of str as its str dtype
    # (concat kept object), and a frame of Series with explicit dtypes took 1.3 ms
    try:
        return pd.DataFrame._from_arrays(list(arrays.values()), columns=_POOL_INDEX,
                                         index=pd.RangeIndex(n), verify_integrity=False)
    except (AttributeError, TypeError):  # a pandas without it (test_kernel_pool_from_arrays_is_the_pandas_pool)
        return pd.DataFrame({c: pd.Series(a, dtype=a.dtype, index=pd.RangeIndex(n), copy=False)
                             for c, a in arrays.items()})


def match_last(left: tuple[np.ndarray, ...], right: tuple[np.ndarray, ...]) -> np.ndarray:
    """For each row of ``left``, the index of the LAST ``right`` row with the same key (all
    columns equal, exact int64), -1 when none: a hash-map lookup done with one sort."""
    nl, nr = len(left[0]), len(right[0])
    out = np.full(nl, -1, dtype=np.int64)
    if nl == 0 or nr == 0:
        return out
    cols = [np.concatenate([np.asarray(a, np.int64), np.asarray(b, np.int64)]) for a, b in zip(left, right,
                                                                                                 strict=True)]
    pos = np.arange(nl + nr, dtype=np.int64)
    is_left = pos < nl
    # sorted by key, right rows before left rows of an equal key, right rows in their order
    order = np.lexsort((pos, is_left, *reversed(cols)))
    last_right = np.maximum.accumulate(np.where(is_left[order], -1, np.arange(nl + nr)))
    lpos = np.flatnonzero(is_left[order])
    cand = last_right[lpos]
    ok = cand >= 0
    same = ok.copy()
    for c in cols:
        sc = c[order]
        same[ok] &= sc[cand[ok]] == sc[lpos[ok]]
    out[order[lpos[same]]] = order[cand[same]] - nl
    return out


def flow_rows(flows: pd.DataFrame, cats: frozenset) -> np.ndarray:
    """Rows of the flows whose lower-cased category is one of ``cats``."""
    return np.flatnonzero(classify.per_unique(col_of(flows, "cat", object), lambda c: c in cats))


def flow_kernels(flows: pd.DataFrame, sel: np.ndarray, pool: pd.DataFrame) -> pd.DataFrame:
    """Flows ``sel`` (``flow_rows``) joined to the pool kernel at their end (columns s_ts, order, k).

    The kernel is found by the flow end's (pid, tid, ts), the last pool row winning for a
    duplicate key as the original's kernel map does; ``order`` is the flow's position in
    ``sel`` (file order); rows are in that order.
    """
    k = match_last(tuple(col_of(flows, c, np.int64)[sel] for c in ("f_pid", "f_tid", "f_ts")),
                   tuple(col_of(pool, c, np.int64) for c in ("pid", "tid", "ts")))
    hit = np.flatnonzero(k >= 0)
    return plain_frame({"s_ts": col_of(flows, "s_ts", np.int64)[sel[hit]], "order": hit, "k": k[hit]})


def _link(ts: np.ndarray, fk: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, kernel, flow order) edges: kernels at the end of flows starting at an op's ts, in
    (node, flow order) order.

    ``ts`` is sorted; a flow links to every node starting at its start ts."""
    none = (np.empty(0, np.int64),) * 3
    if fk is None or fk.empty or len(ts) == 0:
        return none
    s_ts = col_of(fk, "s_ts", np.int64)
    lo = np.searchsorted(ts, s_ts, side="left")
    n = np.searchsorted(ts, s_ts, side="right") - lo
    if not n.any():
        return none
    flow = np.repeat(np.arange(len(s_ts)), n)
    node = ranges(lo, lo + n)
    order = col_of(fk, "order", np.int64)[flow]
    by = np.lexsort((order, node))
    return node[by], col_of(fk, "k", np.int64)[flow[by]], order[by]


def _member(sorted_values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_values)`` for a sorted array: one binary search per value, no sort of both."""
    if not len(sorted_values):
        return np.zeros(len(x), bool)
    pos = np.minimum(np.searchsorted(sorted_values, x), len(sorted_values) - 1)
    return sorted_values[pos] == x


def _driver_edges(profile: Profile, ts: np.ndarray, end: np.ndarray, parent: np.ndarray,
                  fk: pd.DataFrame | None, driver_cat: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, kernel, flow order) for kernels launched by CUDA driver calls: each goes to the innermost
    op whose span holds the call (none outside every op), so no kernel is counted twice. ``driver_cat``:
    the ops' driver-category flags (``_cat_flags``) when the caller has them."""
    none = (np.empty(0, np.int64),) * 3
    if fk is None or fk.empty or not len(ts) or not profile.is_gpu or not len(profile.ops):
        return none
    ops = profile.ops
    drv = np.flatnonzero(_cat_flags(ops)[1] if driver_cat is None else driver_cat)
    if not drv.size:
        return none
    s_ts = col_of(fk, "s_ts", np.int64)
    pick = np.flatnonzero(_member(np.sort(col_of(ops, "ts", np.int64)[drv]), s_ts) & ~_member(ts, s_ts))
    t = s_ts[pick]
    node = np.searchsorted(ts, t, side="right") - 1  # the last op starting by the call
    # the innermost op holding the call is that op or one of its ancestors: climb while it ended before
    climb = np.flatnonzero((node >= 0) & (end[np.maximum(node, 0)] < t))
    while climb.size:
        node[climb] = parent[node[climb]]
        climb = climb[(node[climb] >= 0) & (end[np.maximum(node[climb], 0)] < t[climb])]
    ok = node >= 0
    return node[ok], col_of(fk, "k", np.int64)[pick[ok]], col_of(fk, "order", np.int64)[pick[ok]]


def _step_flags(codes: np.ndarray, uniq: np.ndarray) -> np.ndarray:
    """Per op: is it a step marker (its name holds ``ProfilerStep#``), from the factorized names."""
    return np.array([STEP_MARK in str(u) for u in uniq.tolist()], dtype=bool)[codes]


def _markers_first(ts: np.ndarray, end: np.ndarray, is_step: np.ndarray, marks: np.ndarray) -> np.ndarray | None:
    """The start-sorted ops reordered where a step marker shares its start with other ops, None where none does.

    §2.2 keeps file order at one start, and torch_npu writes every ``ProfilerStep#N`` after the ops of its step
    (trace_view.json), as PyTorch 1.8's Kineto traces write a marker after its first children: an op starting at
    the marker's very ns (us, in a trace of whole microseconds) would hold the marker and, through it, the whole
    step (the original's one top-level op of the step's time; ours opened it as a container, so the op itself was
    compared nowhere). At such a start the ops that outlast the marker (a wrapper opened with the first step) come
    first, then the marker, then the ops it covers, which it holds: each group in file order. Markers sharing a
    start come longest first, so the one whose range covers the others holds them (a marker written twice, a step
    wrapped by a same-start step marker): in file order a shorter one written first held the longer and, through
    it, every op of the longer one's range, so which step held the ops, and whether its operator sheets kept to its
    time range, was the writer's order. An op tied with them goes after the shortest marker that covers it, before
    the next shorter one, which it outlasts and so holds: after them all, one ending past a shorter marker's end
    sat in that marker's range (under it, or under an op it covers written first, whose row held the step).
    No sample holds such a tie (89 markers of 43 traces: the nearest op starts 1 us from its marker).
    ``marks``: the markers' rows."""
    n = len(ts)
    if len(marks) <= 64:  # a trace's few markers: their neighbours read one by one (~0.4 us a marker, where the
        # two binary searches below cost ~10 us on NPU pair 1)
        if not any(i and ts[i - 1] == ts[i] or i + 1 < n and ts[i + 1] == ts[i] for i in marks.tolist()):
            return None
    lo = np.searchsorted(ts, ts[marks], "left")
    hi = np.searchsorted(ts, ts[marks], "right")
    tied = hi - lo > 1
    if not tied.any():
        return None
    order = np.arange(len(ts))
    for a, b in sorted(set(zip(lo[tied].tolist(), hi[tied].tolist(), strict=True))):
        mark, stop = is_step[a:b], end[a:b]
        # the markers by end, latest first (np.lexsort is stable: equal ends keep file order), numbered from 1;
        # an op goes after the shortest marker that covers it (0: it outlasts them all), before the next one
        mk = np.flatnonzero(mark)
        slot = np.empty(b - a, np.int64)
        slot[mk[np.lexsort((-stop[mk],))]] = np.arange(1, len(mk) + 1)
        mark_stops = np.sort(stop[mk])
        slot[~mark] = len(mk) - np.searchsorted(mark_stops, stop[~mark], "left")  # the markers ending no earlier
        order[a:b] = a + np.lexsort((~mark, slot))  # at one slot the marker first; the ops keep file order
    return order


def _tied_holders(ts: np.ndarray, end: np.ndarray, is_step: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """The ops that start at a step marker's very start and outlast every marker starting there (``_markers_first``
    puts them before the markers, which they hold), sorted: ``_unhook_markers`` lifts them too, as a marker. Were
    one the child of an op ending at that start, that op held the marker through it, and with it the whole step,
    the case the marker's own lift is for (a wrapper opened with the step, where the previous op ends)."""
    starts, first = np.unique(ts[marks], return_index=True)  # ``marks`` ascending: their starts too
    longest = np.maximum.reduceat(end[marks], first)
    cand = np.flatnonzero(~is_step & np.isin(ts, starts))
    return cand[end[cand] > longest[np.searchsorted(starts, ts[cand])]]


def _unhook_markers(parent: np.ndarray, ts: np.ndarray, end: np.ndarray, marks: np.ndarray) -> bool:
    """Lift each step marker out of the ops that end exactly as it starts (in place); whether any was lifted.

    §2.2 keeps an op open up to its end inclusive, so a marker starting at the ns an op ends nests under that op,
    which then holds the marker and the step's ops after it: the op, which ran before the step, was the
    original's one op of the whole step and ours a container, compared nowhere (a previous step's marker so held
    the later step, which then had no op of its own: ``top_layer``'s nested step). A marker is instead the child of
    the nearest op around it still open after its start (the walk pops, for a marker, the ops ending at or before
    its start), as ApiCompare's caller walk treats every call as open over [start, end). The ops after the marker
    keep their parents: those it covers are its own, and the ops it left end before any later start. ``marks``:
    the markers' rows, and the ops tied with a marker's start that hold it (``_tied_holders``), lifted alike."""
    marks = marks[parent[marks] >= 0]
    marks = marks[end[parent[marks]] <= ts[marks]]
    if not len(marks):
        return False
    up = parent[marks]
    todo = np.arange(len(marks))
    while len(todo):  # up from the op that ends as the marker starts, past every ancestor ended by then
        up[todo] = parent[up[todo]]
        todo = todo[up[todo] >= 0]
        todo = todo[end[up[todo]] <= ts[marks[todo]]]
    parent[marks] = up
    return True


def build_tree(profile: Profile, gpu_flow_cat: str = "", with_comm: bool = False, paired: bool = True) -> OpTree:
    """Build one side's op tree from the model tables (of no op where ``paired`` is False: a GPU trace of runtime
    calls alone against a side with framework ops, ``RunContext.has_ops``)."""
    op_cat, driver_cat = _cat_flags(profile.ops) if profile.is_gpu and len(profile.ops) else (None, None)
    ops = _tree_ops(profile, op_cat, paired)
    ts = col_of(ops, "ts", np.int64)
    end = ts + col_of(ops, "dur", np.int64)
    # the names are factorized here, not first by ``name_codes`` (every comparator that builds the tree reads them):
    # the step markers among the ops decide their ties
    name_codes = factorize(col_of(ops, "name", object))
    is_step = _step_flags(*name_codes)
    marks = np.flatnonzero(is_step)
    order = _markers_first(ts, end, is_step, marks) if len(marks) else None
    if order is not None:
        ops = ops.take(order).reset_index(drop=True)
        ts, end, is_step = ts[order], end[order], is_step[order]
        marks = np.flatnonzero(is_step)
        name_codes = factorize(col_of(ops, "name", object))  # first appearances in the new order
    parent, depth = _nest(ts, end)
    # with a tie, the ops holding a marker they start with are lifted as it is (none without a tie: no reorder)
    lifted = marks if order is None else np.union1d(marks, _tied_holders(ts, end, is_step, marks))
    if len(marks) and _unhook_markers(parent, ts, end, lifted):
        depth = _depths(parent)
    n = len(ts)
    size = _subtree_sum(np.ones(n, np.int64), parent, depth)
    first = np.arange(n)
    pool = kernel_pool(profile, with_comm)
    sel = flow_rows(profile.flows, flow_cats(profile, gpu_flow_cat))
    has_flows = bool(sel.size)
    fk = flow_kernels(profile.flows, sel, pool) if sel.size and len(pool) else None
    enode, ek, eorder = _link(ts, fk)
    dnode, dk, dorder = _driver_edges(profile, ts, end, parent, fk, driver_cat)
    if dnode.size:  # merged in (node, flow order) order, as _link orders its edges
        by = np.lexsort((np.concatenate([eorder, dorder]), np.concatenate([enode, dnode])))
        enode, ek = np.concatenate([enode, dnode])[by], np.concatenate([ek, dk])[by]
    counts = np.bincount(enode, minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)
    kptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    own_ns = np.zeros(n, np.int64)
    np.add.at(own_ns, enode, col_of(pool, "dur", np.int64)[ek])
    return OpTree(
        profile=profile, ops=ops, ts=ts, end=end, tid=col_of(ops, "tid", np.int64),
        parent=parent, depth=depth, size=size, kpool=pool, kptr=kptr, kidx=ek,
        kernel_num=_range_sums(counts, first, size), device_ns=_range_sums(own_ns, first, size),
        has_flows=has_flows, fk=fk, _name_codes=name_codes, _is_step=is_step,
    )


def kernel_lines(profile: Profile, pool: pd.DataFrame, rows: np.ndarray | None = None) -> np.ndarray:
    """One "Kernel Details" line per pool kernel, newline-terminated (reference-2 §2.1); of the pool rows
    ``rows`` only, in that order, when given.

    GPU: ``name [duration: us]``. NPU: ``name, task id, task type[, [input shapes: s]] [duration: us]``
    with the input shapes of the kernel_details.csv row starting at the same instant (Ascend
    Hardware kernels only: the original looks shapes up for those).
    """
    def column(name: str) -> list:
        values = col_of(pool, name)
        return (values if rows is None else values[rows]).tolist()

    names = column("name")
    durs = [repr(d / 1000) for d in column("dur")]  # inline: a call per kernel cost a third
    if profile.is_gpu:
        return np.array([f"{n} [duration: {d}]\n" for n, d in zip(names, durs, strict=False)], dtype=object)
    shapes: dict[int, str] = {}
    kd = profile.kernel_details
    if kd is not None and len(kd) and "Input Shapes" in kd.columns and "ts" in kd.columns:
        read = np.flatnonzero(starts_read(kd))  # a row without a start is at no instant (its ts -1 is no time)
        shape = col_of(kd, "Input Shapes", object)[read]
        # fillna("").astype(str), without pandas' string conversion of the whole column (~0.4 ms)
        s = ["" if m else v if type(v) is str else str(v) for v, m in zip(shape.tolist(), pd.isna(shape).tolist(),
                                                                        strict=True)]
        shapes = dict(zip(col_of(kd, "ts", np.int64)[read].tolist(), s, strict=False))
    out = []
    # each distinct task id / type is spelt once (a few dozen for hundreds of kernels)
    id_text: dict = {-1: "None", -2: "None"}
    # the loaders keep an absent task type as "" (text columns hold no missing values); the original
    # prints the None its args.get("Task Type") gives
    type_text: dict = {None: "None", "": "None"}
    for n, d, tid_, ttype, ts in zip(names, durs, column("task_id"), column("task_type"), column("ts"),
                                     strict=False):
        task_id = id_text.get(tid_)
        if task_id is None:
            task_id = id_text[tid_] = str(tid_)
        task_type = type_text.get(ttype)
        if task_type is None:
            task_type = type_text[ttype] = str(ttype)
        # HCCL op-lane rows (task type None) never take a shape, even when a kernel starts at that instant
        sh = shapes.get(ts, "") if ttype is not None else ""
        x = f", [input shapes: {sh}]" if sh else ""
        out.append(f"{n}, {task_id}, {task_type}{x} [duration: {d}]\n")
    return np.array(out, dtype=object)


@dataclass(frozen=True)
class Unlinked:
    """The device kernels no flow links to an op (``unlinked_kernels``): their count, total ns and GPU memcpys, and
    of those the ones running before the first kernel a flow ends at (``early_*``: the previous step's tail)."""

    n: int = 0
    ns: int = 0
    copies: int = 0
    early: int = 0
    early_ns: int = 0
    early_copies: int = 0


def unlinked_kernels(tree: OpTree) -> Unlinked:
    """The device kernels no flow links to an op: GPU kernels / memcpys of the pool, NPU compute tasks
    (``classify.COMPUTE_TASK_TYPES``: an HCCL stream's Notify Wait / SDMA / Write Value tasks belong to the HCCL
    op, which joins the pool itself; EVENT_RECORD / EVENT_WAIT / PLACE_HOLDER tasks are stream synchronisation, a
    lone PCIE_DMA copy is the runtime's). The time breakdown counts them; the operator and module sheets, and so the
    top contributors, cannot, which the "kernels linked to no operator" check says. ``early``: the GPU ones running
    before the first kernel a flow ends at (the previous step's tail, which the "kernels launched before the
    profile" check measures, and then states for the operator sheets too). ``copies``: the GPU memcpys among
    them, which the check names apart from the kernels."""
    pool = tree.kpool
    if not len(pool):
        return Unlinked()
    free = np.ones(len(pool), dtype=bool)
    free[tree.kidx] = False
    rows = np.flatnonzero(free)
    dur = col_of(pool, "dur", np.int64)[rows]
    if not rows.size:
        return Unlinked()
    if not tree.profile.is_gpu:  # the HCCL op-lane rows carry task type None: never a compute task
        compute = classify.per_unique(col_of(pool, "task_type", object)[rows],
                                      lambda t: t in classify.COMPUTE_TASK_TYPES, lower=False)
        return Unlinked(int(compute.sum()), int(dur[compute].sum()))
    # the GPU pool holds kernels and memcpys, its task_type the cat as written ("Kernel" in older traces)
    copy = classify.per_unique(col_of(pool, "task_type", object)[rows], "gpu_memcpy".__eq__)
    early = np.zeros(rows.size, dtype=bool)
    if tree.fk is not None and len(tree.fk):
        ts = col_of(pool, "ts", np.int64)
        early = ts[rows] < ts[col_of(tree.fk, "k", np.int64)].min()
    return Unlinked(int(rows.size), int(dur.sum()), int(copy.sum()), int(early.sum()), int(dur[early].sum()),
                    int((copy & early).sum()))


def built_tree(ctx: RunContext, side: str) -> OpTree | None:
    """The op tree of ``side`` where a comparator of this run built one (operator, module, memory, API), else None:
    a validity check that reads it must not build it (``checks``' "kernels linked to no operator")."""
    return ctx.cache.get(_CACHE_TREE.format(side=side))


def op_tree(ctx: RunContext, side: str) -> OpTree:
    """The cached op tree of ``side`` ("base" or "comparison") for this run."""
    opts = ctx.options

    def compute() -> OpTree:
        prof = side_profile(ctx, side)
        # collectives always join the kernel pool (the original: only with communication or profiling
        # compare on, so an operator's device time depended on unrelated flags; docs/differences.md)
        tree = build_tree(prof, opts.gpu_flow_cat, with_comm=True, paired=ctx.has_ops(prof))
        if opts.transparent_op and tree.n:
            tree.see_through(opts.transparent_op)
        if tree.n == 0:
            if ctx.has_ops(prof):  # a DB export's ops cut to a step that holds none: the step's own message follows
                log.info("No torch op of %s lies in the step asked for%s", prof.path, side_named(ctx.side(prof)))
            else:
                # neither side has ops in a run without --enable_* flags (two MindSpore timelines): the sheets
                # that pair them were not asked for and have nothing on either side, an INFO line as the memory
                # comparison's "Can't find any memory event" of two sides without records
                level = logging.WARNING if ctx.has_ops(ctx.base) or ctx.has_ops(ctx.comparison) else \
                    opts.notice_level()
                log.log(level, "Can't find any torch op in the file: %s%s", prof.path, side_named(ctx.side(prof)))
                if level == logging.WARNING and not (ctx.has_ops(ctx.base) or ctx.has_ops(ctx.comparison)):
                    _neither_side_notice(ctx, side)
        elif not tree.has_flows:
            from .breakdown_gpu import flow_cats_text, no_flow_line, unmatched_flow_cat

            def why(quote: Callable[[str], str]) -> str:
                """Why, each category quoted by ``quote``: the CLI's for the shell, compare()'s as Python."""
                if prof.is_gpu and opts.gpu_flow_cat:
                    return unmatched_flow_cat(prof, opts.gpu_flow_cat, quote)
                if prof.is_gpu and prof.extra.get("other_flow_cats"):
                    named = flow_cats_text(prof.extra["other_flow_cats"], quote)
                    other = side_profile(ctx, "comparison" if side == "base" else "base")
                    if other.is_gpu and other.flows["cat"].str.lower().isin(GPU_FLOW_CATS).any():
                        # the option replaces the usual categories on both sides: it would unlink the other one
                        return (f"it holds flows of category {named}; --gpu_flow_cat replaces the usual categories "
                                f"({', '.join(sorted(GPU_FLOW_CATS))}) on both sides, and {term_safe(other.path)} "
                                "links its ops to kernels through those: the option links both only where that trace "
                                "holds such flows too")
                    return f"it holds flows of category {named}: if those link ops to kernels, pass --gpu_flow_cat"
                if not prof.is_gpu and prof.extra.get("renamed_flow_cats"):
                    # the loader's warning above counts those flows and says what they cost (set only where it was
                    # said): named here, not explained again ("... and are not read, so no op gets a kernel" said
                    # the loader's "so those tasks are linked to no operator" a second time); no option takes them
                    named = ", ".join(repr(term_safe(c)) for c in prof.extra["renamed_flow_cats"][:3])
                    return f"none of category async_npu: its flows of category {named} are counted above"
                # GPU or NPU alike: no option can help
                return "the trace holds no flow linking an op to its kernels, so no op gets a kernel"

            said = no_flow_line(prof, why(shell_word), ctx.side(prof))
            log.warning("%s", said, **api_worded(said, no_flow_line(prof, why(repr), ctx.side(prof))))
        return tree

    return ctx.cached(_CACHE_TREE.format(side=side), compute)


# ------------------------------------------------------------------------------------------ keys


def shape_key(dims: str) -> str:
    """``--use_input_shape`` text of the raw Input Dims: list dims joined by ',' and ';\\r\\n'. A
    Kineto list and an Ascend text export's shapes of the same op render alike."""
    if dims.startswith("["):
        try:  # Kineto's lists of ints are JSON: msgspec reads them ~10x faster than literal_eval
            value = msgspec.json.decode(dims)
        except RecursionError:  # nested too deeply to be any shape: the text is its own key
            return dims
        except msgspec.DecodeError:
            try:  # Python-only literals (None, True, 'text', inf)
                value = ast.literal_eval(dims)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return dims  # TypeError: a set or dict literal with an unhashable member, "[{[]: 1}]"
        if isinstance(value, list):
            return ";\r\n".join(",".join(str(x) for x in d) if isinstance(d, (list, tuple)) else str(d)
                                for d in value)
    return dims


def op_keys(tree: OpTree, op_name_map: dict[str, str], use_input_shape: bool) -> np.ndarray:
    """The matching key of every node (reference-2 §0.4)."""
    names = tree.ops["name"]
    if op_name_map:
        names = names.map(lambda s: op_name_map.get(s, s))
    if not use_input_shape:
        return names.to_numpy(dtype=object)
    dims = tree.ops["input_dims"].fillna("N/A").astype(str)
    uniq = {d: shape_key(d) for d in dims.unique().tolist()}
    return (names + dims.map(uniq)).to_numpy(dtype=object)


# ------------------------------------------------------------------------------------------ pairing


@dataclass(eq=False)
class OpPairs:
    """The operator pairing of a run: row ``t`` pairs base node ``ia[t]`` with comparison node
    ``ib[t]`` (-1 = absent) of the two trees. Shared by OperatorCompare and MemoryCompare."""

    base: OpTree
    comparison: OpTree
    ia: np.ndarray
    ib: np.ndarray
    #: (ia, ib) before the ``--max_kernel_num`` drill-down, where it ran: a drilled-into op's own allocations,
    #: outside every op inside it, leave the memory sheets with it (``memory_summary``'s memory line says so)
    undrilled: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.ia)

    @property
    def matched(self) -> int:
        """Rows pairing a base op with a comparison op: the numerator of the operator match rate."""
        return int(np.count_nonzero((self.ia >= 0) & (self.ib >= 0)))


def _parts(nodes: np.ndarray, tid: np.ndarray, bwd: int) -> list[tuple[bool, np.ndarray]]:
    """Cut a top-layer list into thread parts (§2.4); each flagged backward by its first op."""
    if len(nodes) == 0:
        return []
    t = tid[nodes]
    cut = (t[1:] != t[:-1]) & ((t[1:] == bwd) | (t[:-1] == bwd))
    starts = np.concatenate([[0], np.flatnonzero(cut) + 1, [len(nodes)]])
    return [(bool(t[a] == bwd), nodes[a:b]) for a, b in zip(starts[:-1], starts[1:], strict=False)]


def _concat(chunks: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if not chunks:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])


def pair_lists(a: np.ndarray, b: np.ndarray, ka: np.ndarray, kb: np.ndarray,
               match: bool, memo: AlignMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pair two node lists by key (or not at all); returns node ids (-1 = absent). ``memo`` aligns
    repeated key sequences once (each step of a training run repeats its op sequence)."""
    ia, ib = (memo or align)(ka[a].tolist(), kb[b].tolist()) if match else no_matching(len(a), len(b))
    return np.where(ia >= 0, a[np.maximum(ia, 0)] if len(a) else -1, -1), \
        np.where(ib >= 0, b[np.maximum(ib, 0)] if len(b) else -1, -1)


def split_and_pair(ta: OpTree, tb: OpTree, a: np.ndarray, b: np.ndarray, ka: np.ndarray, kb: np.ndarray,
                   match: bool, memo: AlignMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pair two top-layer lists, part by part when both sides know their backward thread (§2.4)."""
    bwd_a, bwd_b = ta.profile.backward_tid, tb.profile.backward_tid
    if not (knows_backward_thread(bwd_a) and knows_backward_thread(bwd_b)):  # a named thread's code is below -1
        return pair_lists(a, b, ka, kb, match, memo)
    pa = _parts(a[np.argsort(ta.ts[a], kind="stable")], ta.tid, bwd_a)
    pb = _parts(b[np.argsort(tb.ts[b], kind="stable")], tb.tid, bwd_b)
    none = np.empty(0, np.int64)
    if not pa or not pb:
        return pair_lists(a if pa else none, b if pb else none, ka, kb, False)
    chunks: list[tuple[np.ndarray, np.ndarray]] = []
    if pa[0][0] != pb[0][0]:
        if len(pa) > len(pb):
            chunks.append(pair_lists(pa[0][1], none, ka, kb, False))
            pa = pa[1:]
        else:
            chunks.append(pair_lists(none, pb[0][1], ka, kb, False))
            pb = pb[1:]
    for k in range(max(len(pa), len(pb))):
        xa = pa[k][1] if k < len(pa) else none
        xb = pb[k][1] if k < len(pb) else none
        chunks.append(pair_lists(xa, xb, ka, kb, match and len(xa) > 0 and len(xb) > 0, memo))
    return _concat(chunks)


def drill_down(ta: OpTree, tb: OpTree, ia: np.ndarray, ib: np.ndarray, ka: np.ndarray, kb: np.ndarray,
               max_kernel_num: int, match: bool, memo: AlignMemo | None = None,
               named: tuple[np.ndarray | None, np.ndarray | None] = (None, None)) -> tuple[np.ndarray, np.ndarray]:
    """``--max_kernel_num``: replace pairs above the limit by the pairing of their children (§2.5). ``named``
    (``OpTree.transparent_mask`` of each side): ``--transparent_op`` ops among the children are replaced by their
    own children (``OpTree.opened_children``), as the top layer opens them: a wrapper nested in a pair (an
    ``aten::`` op around the ops that launch the work) stayed closed there, one row against the other side's ops."""
    out_a: list[int] = []
    out_b: list[int] = []
    none = np.empty(0, np.int64)
    na, nb = named  # without the option the plain lookup, no call more a level
    kids_a = ta.children if na is None else lambda node: ta.opened_children(node, na)
    kids_b = tb.children if nb is None else lambda node: tb.opened_children(node, nb)
    stack = list(zip(ia.tolist(), ib.tolist(), strict=False))[::-1]
    while stack:
        x, y = stack.pop()
        ca = kids_a(x) if x >= 0 else none
        cb = kids_b(y) if y >= 0 else none
        kx = int(ta.kernel_num[x]) if x >= 0 else 0
        ky = int(tb.kernel_num[y]) if y >= 0 else 0
        if len(ca) == 0 or len(cb) == 0 or max(kx, ky) <= max_kernel_num:
            out_a.append(x)
            out_b.append(y)
            continue
        if match and len(ca) == 1 and len(cb) == 1 and ka[ca[0]] == kb[cb[0]]:
            stack.append((int(ca[0]), int(cb[0])))  # one child each, same key: the pair align makes, at a
            continue  # fraction of its cost per level of a deep chain
        sa, sb = pair_lists(ca, cb, ka, kb, match, memo)
        stack.extend(list(zip(sa.tolist(), sb.tolist(), strict=False))[::-1])
    return np.asarray(out_a, np.int64), np.asarray(out_b, np.int64)


def _check_transparent(opts: Options, trees: tuple[OpTree, OpTree], tops: tuple[np.ndarray, np.ndarray],
                       opened: tuple[np.ndarray, np.ndarray],
                       sheet: Callable[[], str] = lambda: "OperatorCompare",
                       ranked: tuple[set[str], set[str]] | None = None) -> None:
    """Refuse a ``--transparent_op`` name that names no op on either side (exit 1, before anything is written): a
    misspelt name otherwise left the run as it was without a word, the user reading the unchanged match rate as the
    option failing. The names nearest to it among the compared ops are offered. A name found only nested inside the
    compared ops is taken: the ``--max_kernel_num`` drill-down opens it (and the module sheets); without the
    drill-down the operator and memory sheets compare its top-level parent whole, which a warning says, with the
    number of such ops a side, where it would otherwise be the silent no-op the error is there against.
    ``sheet`` names the sheet whose Operator Name the hint points at, asked only when refusing (``names_sheet``).
    ``ranked``: a rank-by-rank run's (names checked, names some rank's ops have) over the ranks so far
    (``RunContext.ranks_transparent``): a rank without a name then gets a warning and is compared without it, as a
    job's ranks may run other ops (a pipeline's stages); ``api.rank_results`` refuses a name no rank has at the end.
    None in a single compare, which refuses it before anything is written."""
    found = {str(n) for tree, nodes in zip(trees, opened, strict=True) for n in tree.names[nodes].tolist()}
    if ranked is not None:
        ranked[0].update(opts.transparent_op)
        ranked[1].update(n for n in opts.transparent_op if n in found)
    if all(n in found for n in opts.transparent_op):
        return
    inner: list[np.ndarray] = []  # every op inside a compared one
    nested: dict[str, list[int]] = {}  # name: its nested ops per side
    for side, (tree, top) in enumerate(zip(trees, tops, strict=True)):
        held = ranges(top + 1, top + tree.size[top]) if len(top) else np.empty(0, np.int64)
        inner.append(held)
        mask = tree.transparent_mask(opts.transparent_op)
        named = held[mask[held]] if mask is not None and len(held) else held[:0]
        names, counts = np.unique(tree.names[named].astype(str), return_counts=True)
        for n, c in zip(names.tolist(), counts.tolist(), strict=True):
            nested.setdefault(n, [0, 0])[side] = c
    if opts.max_kernel_num is None or opts.disable_details:
        for n in opts.transparent_op:
            if n in nested and n not in found:
                ops = " and ".join(f"{c:,} of the {w} side" for c, w in zip(nested[n], ("base", "comparison"),
                                                                            strict=True) if c)
                line = ("The transparent_op name {} names only operators nested inside top-level ones ({}): the "
                        "operator comparison compares the top-level operator holding one whole, its figures as "
                        "without the option; the max_kernel_num option opens them where it drills into a pair "
                        "holding one{}")
                # its own line says max_kernel_num is ignored there: the advice alone contradicted it
                dd = ", which it does only where operators are matched (not under disable_details)" \
                    if opts.disable_details else ""
                said = line.format(term_safe(shell_word(n)), ops, dd)  # quoted as the refusal quotes it, each face
                log.warning("%s", said, **api_worded(said, line.format(term_safe(repr(n)), ops, dd)))
    missing = [n for n in opts.transparent_op if n not in found and n not in nested]
    if ranked is not None:
        ranked[1].update(n for n in opts.transparent_op if n in nested)
    if not missing:
        return
    import difflib

    compared = sorted({str(n) for tree, top, held in zip(trees, tops, inner, strict=True)
                       for n in tree.names[np.concatenate([top, held])].tolist()})
    near = [m for n in missing for m in difflib.get_close_matches(n, compared, n=3, cutoff=0.6)]
    step = " in the compared steps" if opts.step_given else ""
    paths = f"{term_safe(trees[0].profile.path)}, {term_safe(trees[1].profile.path)}"
    names, opens = ("names", "it opens") if len(missing) == 1 else ("name", "they open")  # two: "X and Y name"
    where = sheet()

    def text(quote: Callable[[str], str]) -> tuple[str, str]:
        """(message, hint) with each name as ``quote`` writes it: the CLI's for a shell, compare()'s as Python
        (``transparent_op='x'``); a name holding a quote mark or a backslash reads otherwise in the other."""
        what = " and ".join(f"--transparent_op {term_safe(quote(n))}" for n in missing)
        close = f"; close names: {', '.join(term_safe(quote(m)) for m in dict.fromkeys(near))}" if near else ""
        return (f"{what} {names} no operator of either side{step} ({paths}), so {opens} nothing",
                f"the op's whole name, case-sensitive, as the {where} sheet's Operator Name gives it{close}")

    if ranked is not None:  # a warning, its names quoted as the refusal's on each face (``logs.API_TEXT``)
        line = "{} in this rank, which is compared without %s ({})" % ("it" if len(missing) == 1 else "them")
        said = line.format(*text(shell_word))
        log.warning("%s", said, **api_worded(said, line.format(*text(repr))))
        return
    error = ProfileError(None, *text(shell_word))
    error.api_text = text(repr)
    raise error


def entry_pairs_ops(pairs: OpPairs, key: str) -> bool:
    """Whether a row of ``pairs`` holds an op named ``key`` against one of another name: what only the
    ``--op_name_map`` entry of ``key`` (renaming by whole name) pairs."""
    both = (pairs.ia >= 0) & (pairs.ib >= 0)
    return _pairs_across(pairs.base.names[pairs.ia[both]], pairs.comparison.names[pairs.ib[both]], key)


def _pairs_across(pa: np.ndarray, pb: np.ndarray, key: str) -> bool:
    """``entry_pairs_ops`` of the paired rows' names (``pa[i]`` against ``pb[i]``): one test for the operators'
    idle-entry line and the modules' (which asks it of an entry whose module paths pair as without it)."""
    return bool(np.any((pa == key) != (pb == key)))


def idle_map_entries(op_name_map: Mapping[str, str], pairs: OpPairs,
                     opened: tuple[np.ndarray, np.ndarray] = (np.empty(0, np.int64), np.empty(0, np.int64)),
                     step_given: bool = False, pairs_modules: Collection[str] = ()) -> list[str]:
    """Per ``--op_name_map`` entry that renames compared operators yet pairs none across two names (no row pairs an
    op it renamed with an op of another name), why: its ops lie only inside the compared ones, both sides hold
    them (renamed alike, they pair as by the old name), the other side has no compared op of the new name, or the
    pairing, which keeps each side's order, left them apart. The user otherwise saw the same one-sided rows and no
    word why the map did not help. Said of no entry that pairs a row, renames no op (the unused-key warning's), is
    renamed again (the renames-once warning's) or pairs modules (``pairs_modules``: module matching reads the map
    too; ``modules.module_map_verdicts``). An entry whose key lies in a call-stack frame's name alone, or in module
    paths the matching pairs as without it, was left out as a module path's. ``opened``: each side's ops that
    ``--transparent_op`` opened (``OpTree.top_layer_opened``), which no step leaves out: said to lie "outside the
    compared steps", they were, in a run that asked for no step."""
    ta, tb = pairs.base, pairs.comparison
    both = (pairs.ia >= 0) & (pairs.ib >= 0)
    pa, pb = ta.names[pairs.ia[both]], tb.names[pairs.ib[both]]
    rows = (pairs.ia[pairs.ia >= 0], pairs.ib[pairs.ib >= 0])
    compared = (ta.names[rows[0]], tb.names[rows[1]])
    # the ops of a name no row holds lie inside compared ones: the pairing compares top-level ops, and the drill-down
    # pairs the ops inside a pair above its limit only
    inner = ("lie inside compared operators that the max_kernel_num drill-down did not open (a pair at or under its "
             "limit, or an op of one side)" if pairs.undrilled is not None else
             "lie inside compared operators, and the pairing compares the top-level ones (the max_kernel_num option "
             "pairs the ops inside a pair of two)")
    out: list[str] = []
    for k, v in op_name_map.items():
        if k == v or op_name_map.get(v, v) != v or k in pairs_modules:
            continue
        if _pairs_across(pa, pb, k):  # a row pairs an op it renamed with one of another name
            continue
        held = [int(np.count_nonzero(n == k)) for n in compared]
        total = [int(np.count_nonzero(t.names == k)) for t in (ta, tb)]
        if not any(total):
            continue
        old, new = term_safe(repr(k)), term_safe(repr(v))
        entry = f"the entry {old}: {new}"
        if not any(held):
            why = [_whereabouts(t, r, o, k, step_given) for t, r, o in zip((ta, tb), rows, opened, strict=True)]
            said = [(_per_side([why[0][w], why[1][w]]), w) for w in _WHEREABOUTS if why[0][w] or why[1][w]]
            if len(said) == 1:
                where = f"the {_per_side(total)} named {old} {_where(said[0][1], sum(total), inner)}"
            else:  # each count with its own reason
                where = f"of the ops named {old}, " + ", and ".join(
                    f"the {c} {_where(w, why[0][w] + why[1][w], inner)}" for c, w in said)
            out.append(f"{entry} renames no compared operator: {where}")
            continue
        if all(held):
            out.append(f"{entry} renames the {_per_side(held)} named {old} alike, so they pair as by that name "
                       "without it (an entry pairs a name of one side with another name of the other)")
            continue
        side, other = (0, 1) if held[0] else (1, 0)
        said = f"{entry} renames {_per_side([held[0], 0] if side == 0 else [0, held[1]])} named {old}"
        targets = [v, *(n for n, m in op_name_map.items() if m == v and n != k)]
        there = int(np.count_nonzero(np.isin(compared[other], targets)))
        who = ("base", "comparison")[other]
        if there:
            taken = int(np.count_nonzero(np.isin((pa, pb)[other], targets)))
            why = (f"each pairs with another {('base', 'comparison')[side]} operator" if taken == there else
                   "the pairing keeps each side's order of operators")
            out.append(f"{said}, but none pairs with the {who} side's {_count(there, 'compared operator')} named "
                       f"{new} ({why})")
            continue
        why = _whereabouts((ta, tb)[other], rows[other], opened[other], v, step_given)
        if any(why.values()):
            where = ", and ".join(f"its {_count(c, 'op')} of that name {_where(w, c, inner)}"
                                  for w, c in why.items() if c)
            out.append(f"{said}, and no {who} operator compared is named {new}: {where}")
        else:
            out.append(f"{said}, and no {who} operator is named {new}")
    return out


#: Why ops of a name are not compared, as ``_whereabouts`` counts them: (the words for several, for one); "inside"
#: is the caller's (the pairing's or the drill-down's words)
_WHEREABOUTS = {
    "inside": ("", ""),
    "opened": ("are seen through by --transparent_op (their children are compared in their place)",
               "is seen through by --transparent_op (its children are compared in its place)"),
    "marker": ("are step markers, never compared themselves (the ops inside them are)",
               "is a step marker, never compared itself (the ops inside it are)"),
    "outside": ("lie outside the compared steps", "lies outside the compared steps"),
    "holder": ("hold the step markers, so their children are compared in their place",
               "holds the step markers, so its children are compared in its place"),
}


def _whereabouts(tree: OpTree, rows: np.ndarray, opened: np.ndarray, name: str, step_given: bool) -> dict[str, int]:
    """{reason: ops of ``tree`` named ``name`` that neither are the compared ops ``rows`` nor lie inside them}:
    inside compared ops, opened by ``--transparent_op`` (``opened``), step markers, or else outside the compared
    steps where a step was asked for, and without one ops opened for holding step markers (the containers of
    ``top_layer_opened``), the only other ops the top layer leaves out."""
    named = tree.names == name
    named[rows] = False
    within = np.zeros(tree.n, bool)
    if len(rows):
        within[ranges(rows + 1, rows + tree.size[rows])] = True
    seen = np.zeros(tree.n, bool)
    seen[opened] = True
    left = named & ~within
    marker = left & ~seen & tree.step_nodes()
    out = {"inside": int(np.count_nonzero(named & within)), "opened": int(np.count_nonzero(left & seen)),
           "marker": int(np.count_nonzero(marker)), "outside": 0, "holder": 0}
    out["outside" if step_given else "holder"] = int(np.count_nonzero(left & ~seen & ~marker))
    return out


def _where(reason: str, n: int, inner: str) -> str:
    """``_WHEREABOUTS``'s words for ``reason``, agreeing with ``n`` ops."""
    return _lie(n, inner) if reason == "inside" else _WHEREABOUTS[reason][n == 1]


def _lie(n: int, text: str) -> str:
    """``text`` ("lie inside ...") with its verb agreeing with ``n`` ops."""
    return f"lies{text[3:]}" if n == 1 else text


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' if n != 1 else ''}"


def _per_side(counts: list[int]) -> str:
    """``[3, 0]`` as "3 base operators", ``[1, 2]`` as "1 base and 2 comparison operators"."""
    said = [f"{c:,} {w}" for c, w in zip(counts, ("base", "comparison"), strict=True) if c]
    return " and ".join(said) + (" operators" if sum(counts) > 1 else " operator")


def names_sheet(opts: Options, modules_paired: Callable[[], bool] | None = None) -> str:
    """The sheet with an Operator Name column that the run writes, where a hint on an op name (``--op_name_map``'s
    unused key, ``--transparent_op``'s refusal) sends the user: module sheets replace the operator ones where module
    matching pairs any (``modules.build``'s rule), ``--disable_details`` leaves the statistic sheets alone, and a
    memory comparison alone writes the memory sheets. ``modules_paired``: whether module matching pairs any, asked
    only where it decides; None before the run has paired (``api``'s warning), where either sheet may be written.
    The hints named OperatorCompare, or both, in runs that make no such sheet (the AlexNet H200 excerpt's default
    run writes ModuleCompare; a memory comparison alone, neither)."""
    stat = "Statistic" if opts.disable_details else ""
    if not opts.enable_operator_compare:
        return f"MemoryCompare{stat}"
    if opts.disable_module:
        return f"OperatorCompare{stat}"
    if modules_paired is None:
        return f"OperatorCompare{stat} or ModuleCompare{stat}"
    return f"ModuleCompare{stat}" if modules_paired() else f"OperatorCompare{stat}"


def _names_sheet(ctx: RunContext) -> str:
    """``names_sheet`` once the run has paired."""
    from .modules import module_pairs

    return names_sheet(ctx.options, lambda: bool(module_pairs(ctx)[0]))


def operator_pairs(ctx: RunContext) -> OpPairs:
    """The run's operator pairing (cached): top-layer ops of both sides (§2.3), split by the
    backward thread (§2.4), matched by the §0.4 key with a maximum matching (or not at all
    under ``--disable_details``), then drilled down under ``--max_kernel_num`` (§2.5)."""

    def compute() -> OpPairs:
        opts = ctx.options
        ta, tb = op_tree(ctx, "base"), op_tree(ctx, "comparison")
        a, opened_a = ta.top_layer_opened(opts.base_step, opts.transparent_op)
        b, opened_b = tb.top_layer_opened(opts.comparison_step, opts.transparent_op)
        # not where a side has no torch op to pair (two MindSpore exports): the option is said to be ignored there
        # (``api._matching_options_without_ops``), and a refusal of the name followed that line
        if opts.transparent_op and (opts.disable_details or all(ctx.has_ops(t.profile) for t in (ta, tb))):
            _check_transparent(opts, (ta, tb), (a, b), (opened_a, opened_b), lambda: _names_sheet(ctx),
                               ctx.ranks_transparent)
        for tree, step, top in ((ta, opts.base_step, a), (tb, opts.comparison_step, b)):
            if step >= 0 and len(top) == 0 and ctx.has_ops(tree.profile):  # no op at all: "Can't find any torch op"
                log.warning("There is no operator infomation for step %s, please check the step id of %s.%s",
                            step, tree.profile.path, side_named(ctx.side(tree.profile)))
        ka = op_keys(ta, opts.op_name_map, opts.use_input_shape)
        kb = op_keys(tb, opts.op_name_map, opts.use_input_shape)
        match = not opts.disable_details
        memo = AlignMemo()  # the parts of every step repeat a few op sequences (the GPT pair: 55 parts, 4 distinct)
        ia, ib = split_and_pair(ta, tb, a, b, ka, kb, match, memo)
        if opts.max_kernel_num is None or not match:
            pairs = OpPairs(ta, tb, ia, ib)
        else:
            named = (ta.transparent_mask(opts.transparent_op), tb.transparent_mask(opts.transparent_op))
            pairs = OpPairs(ta, tb, *drill_down(ta, tb, ia, ib, ka, kb, opts.max_kernel_num, match, memo, named),
                            undrilled=(ia, ib))
        if match and opts.op_name_map:
            from .modules import module_map_verdicts

            moved = [k for k, (_, changed) in module_map_verdicts(ctx).items() if changed]
            idle = idle_map_entries(opts.op_name_map, pairs, (opened_a, opened_b), opts.step_given, moved)
            if idle:
                log.warning("--op_name_map: %s.", "; ".join(idle))
        return pairs

    return ctx.cached(_CACHE_PAIRS, compute)


def compared_whole(ctx: RunContext, side: str, name: str) -> bool:
    """Whether the one-sided wrapper's rows (``name`` on ``side``, ``summary_notes.one_sided_wrapper``) are top-level
    ops compared whole against nothing, as the time and the memory notes say. Always without the ``--max_kernel_num``
    drill-down; under it, where every op of that name the rows hold is a top-level one the drill-down left as it was
    (it opens pairs of two ops, never an op of one side: SGLang's capture_32_DECODE against the BERT trace). Not
    where the drill-down reached the op inside a pair: vLLM's wrappers paired by the map and drilled into list one
    side's op alone (the decode trace's hipGraphLaunch against xDiT's ops, the capture traces' compiled-graph call),
    an op inside a pair, not top-level, for which the notes' words and their transparent_op advice are wrong."""
    opts = ctx.options
    if opts.max_kernel_num is None or opts.disable_details:  # no drill-down: the pairing need not be asked for
        return True
    pairs = operator_pairs(ctx)  # cached: the comparators paired the same ops
    if pairs.undrilled is None:
        return True
    i = 0 if side == "base" else 1
    tree = (pairs.base, pairs.comparison)[i]
    rows = (pairs.ia, pairs.ib)[i]
    rows = rows[rows >= 0]
    named = rows[tree.names[rows] == name]
    top = pairs.undrilled[i]
    return bool(len(named)) and bool(np.isin(named, top[top >= 0]).all())
