"""The ``Summary`` sheet: why the end-to-end time changed, and can we trust it.

Three results, built after every other comparator ran (they read its sheets):

* the **waterfall**: base E2E -> comparison E2E in steps (computing by
  category, uncovered communication by group, lccl, free time) whose deltas
  add up *exactly* (integer ns) to the E2E difference;
* the **top contributors**: the rows of the finest statistic sheet the run has
  (operators, module operators, kernels or kernel types) that explain 80% of the absolute
  device-time change; without those sheets, the waterfall steps that explain
  80% of the steps' absolute change ("category" level); where an operator-level
  contributor runs modules whose rows hold its time (DDP's forward, a step
  annotation), the **module contributors**: the ModuleCompareStatistic operator
  rows inside those contributors that explain 80% of those rows' change;
* the **validity guards** (``checks.guards``): can the two sides be compared, and
  how should the figures be read.

They land in ``ctx.frames["waterfall" | "contributors" | "module_contributors" | "guards"]`` and in the
``Summary`` sheet (placed first in the workbook by ``api.run_comparators``); the communication and memory
counterparts of the contributors (``communication_summary``, ``memory_summary``) in
``ctx.frames["communication_contributors" | "communication" | "memory_contributors" | "memory"]``.
``build`` makes them; they are made in:

* ``waterfall.py``: the waterfall, and the result frame "e2e";
* ``contributors.py``: the top contributors and the words of their titles;
* ``module_contributors.py``: the module contributors;
* ``summary_notes.py``: the notes under the contributors; ``verdict.py``: the E2E verdict under the waterfall;
* ``gate.py``: ``judge``, which implements ``--fail_on_regression``.

This module keeps the ``build`` that runs them, the sheet (``SummarySheet``) and the communication inside the
operator contributors (``ctx.frames["contributor_communication"]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..model import GPU_COMM_PREFIXES, Profile, object_array
from ..textsafe import text_width
from . import checks, classify, communication_summary, memory_summary, overall
from .contributors import (
    CONSOLE_TOP,
    CONTRIBUTOR_COVERAGE,
    coverage_cut,
    level_rows,
    operator_statistic,
    top_contributors,
)
from .module_contributors import find_module_contributors
from .optree import compared_whole
from .summary_notes import free_other_copies, idle_evidence, mark_pairs, operator_wrappers, unchanged_why
from .table import STYLE_MS3, STYLE_RATIO, STYLE_TEXT, Column, Sheet, plain_frame
from .verdict import export_window, run_verdict
from .waterfall import e2e_frame, steps_changed, waterfall_contributors, waterfall_of

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult, RunContext
    from .breakdown import Breakdown

SHEET_NAME = "Summary"


# --------------------------------------------------------------------------- the comparator

@dataclass(repr=False)  # Sheet's short repr, not one that prints every frame
class SummarySheet(Sheet):
    """The ``Summary`` sheet: the waterfall table plus the frames its chart hook writes beside it."""

    waterfall: pd.DataFrame = field(default_factory=pd.DataFrame)
    contributors: pd.DataFrame = field(default_factory=pd.DataFrame)
    guards: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: ``e2e_verdict``'s sentence, written under the waterfall table
    verdict: str = ""
    #: the run's "contributor_communication" frame (None: no listed contributor holds communication)
    communication: pd.DataFrame | None = None
    #: the run's "module_contributors" frame (None: no listed contributor runs modules that hold its time)
    module_contributors: pd.DataFrame | None = None
    #: the run's communication and memory frames (contributors and totals; None where the run made none), written
    #: under the time contributors as the console prints them
    communication_contributors: pd.DataFrame | None = None
    communication_totals: pd.DataFrame | None = None
    memory_contributors: pd.DataFrame | None = None
    memory_totals: pd.DataFrame | None = None


#: ms to 3 places, as the console's waterfall and the contributors table beside it (2 places showed most
#: steps of a few-ms trace as 0.00)
_SHEET_COLUMNS = [
    Column("Step", STYLE_TEXT, 34), Column("Base(ms)", STYLE_MS3, 16), Column("Comparison(ms)", STYLE_MS3, 16),
    Column("Delta(ms)", STYLE_MS3, 14), Column("Cumulative(ms)", STYLE_MS3, 16),
    Column("Share of E2E Diff", STYLE_RATIO, 18),
]


#: Column A holds the waterfall's steps and, under them, the top contributors' names, each with a figure in
#: column B that cuts it at the column's edge: the column widens to the longest of them (its width in
#: characters, plus a margin for the bold and wide letters), up to this many characters, as many as the
#: console shows of a name. At the fixed 34, "Other Computing (minus overlap of categories)" read "Other
#: Computing (minus overlap of c" and a contributor "autograd::engine::evaluate_function: torch::autog".
STEP_COLUMN_MAX_WIDTH = 72


def _step_column(names: list[Any]) -> Column:
    """The Step column, as wide as the longest of ``names`` needs (between its usual 34 and
    ``STEP_COLUMN_MAX_WIDTH``)."""
    first = _SHEET_COLUMNS[0]
    longest = max((text_width(n) for n in names if isinstance(n, str)), default=0)
    return replace(first, width=max(first.width, min(longest + 2, STEP_COLUMN_MAX_WIDTH)))


def _blank_missing(values: list[Any]) -> np.ndarray:
    """An object array of ``values`` with every missing one (None, NaN, pd.NA) as None, a blank cell: one
    vectorised ``pd.isna`` instead of one call per value."""
    arr = object_array(values)
    arr[pd.isna(arr)] = None
    return arr


def column_a_names(wf: pd.DataFrame, contrib: pd.DataFrame, modules: pd.DataFrame | None) -> list:
    """The names the Summary sheet writes in column A: the waterfall's steps, every contributor, and the first
    ``CONSOLE_TOP`` module contributors, which are all it shows of them (SGLang's 113 module rows widened the
    column for names it does not show)."""
    return wf["Step"].tolist() + (col_of(contrib, "Name").tolist() if len(contrib) else []) + \
        (modules["Name"].head(CONSOLE_TOP).tolist() if modules is not None else [])


def summary_sheet(ctx: RunContext, wf: pd.DataFrame, contrib: pd.DataFrame, guard: pd.DataFrame) -> SummarySheet:
    """The Summary sheet: the waterfall as its rows; contributors, guards and the verdict ride along for the
    writer, which lays them out beside and under the rows."""
    cols = ["Step", "Base(ms)", "Comparison(ms)", "Delta(ms)", "Cumulative(ms)", "Share of E2E Diff"]
    data = plain_frame({c: _blank_missing(wf[c].tolist()) for c in cols}, objects=True)
    columns = [_step_column(column_a_names(wf, contrib, ctx.frames.get("module_contributors"))),
               *_SHEET_COLUMNS[1:]]
    return SummarySheet(SHEET_NAME, columns, data, (1, 1), (2, 2), stacked_captions=True,
                        waterfall=wf, contributors=contrib, guards=guard,
                        verdict=run_verdict(ctx, wf))


def build(ctx: RunContext, sheets: list[Sheet] | None = None) -> list[Sheet]:
    """Fill ``ctx.frames`` with waterfall / contributors / module contributors / guards and return the Summary sheet.

    ``sheets`` are the sheets the other comparators produced (the contributors
    are read from them); the API passes them, since this comparator runs last.
    """
    pair = overall.find_breakdowns(ctx)
    if pair is None and ctx.options.fail_on_regression is not None:  # the gate needs the E2E times
        pair = overall.breakdowns(ctx)  # cached: the guards' idle-stretch check reads it too
    op_rows = None
    if all(len(p.ops) and ctx.has_ops(p) for p in (ctx.base, ctx.comparison)):  # ``RunContext.has_ops``
        op_rows = operator_statistic(ctx, sheets or [])
        found = level_rows(sheets or [], op_rows)
    else:  # no operators on one side (MindSpore data): every operator of the other would "change"
        found = level_rows([s for s in sheets or [] if s.name in ("KernelCompare", "KernelTypeCompare")])
    guard = checks.guards(ctx, op_rows, sheets or [])
    ctx.frames["guards"] = guard
    checks.log_guards(guard)

    if pair is not None:
        ctx.frames["e2e"] = e2e_frame(*pair)
    wf = waterfall_of(pair)
    ctx.frames["waterfall"] = wf
    if found is None and len(wf):
        found = waterfall_contributors(wf)
    contrib = top_contributors(found[1], found[0]) if found is not None else top_contributors(
        pd.DataFrame({"Name": [], "Base(ms)": [], "Comparison(ms)": []}), "")
    # the notes on device idle time point to ApiCompare, and say so where the run writes none (summary_notes)
    api = any(s.name == "ApiCompare" for s in sheets or [])
    if not len(contrib) and found is not None and found[0] != "category" and steps_changed(wf):
        # every row of the level unchanged, e.g. operators without device time in a trace without launch
        # flows: the table would vanish without a word, so the waterfall steps stand in, as in the gate. Rows
        # that moved by less than the 0.001 ms shown are not listed: the words say so, "no operator changed" did not
        b, c = (found[1][k].to_numpy(dtype=float) for k in ("Base(ms)", "Comparison(ms)"))
        small = " by 0.001 ms or more" if bool(np.nan_to_num(np.round(c - b, 6)).any()) else ""
        whole = checks.whole_profile_sides(ctx)
        if whole:  # the step's rows are unchanged, the whole-profile breakdown is not: the change is elsewhere
            # with one text side the waterfall sets that side's whole profile against the other side's step
            other = "" if len(whole) > 1 else "comparison" if whole[0] == "base" else "base"
            why = (f"no {found[0]} of the step asked for changed its device time{small}, but the time breakdown of "
                   f"{'both sides' if len(whole) > 1 else f'the {whole[0]} side'} covers the whole profile (a text "
                   "export's ignores the step), so its change lies outside that step; the contributors are the "
                   "waterfall steps, of the whole profile" + (f" against the {other} side's step" if other else ""))
        else:
            # the category links every side's kernels only where both are GPU traces (an NPU side has its own flows)
            flow_cat = ctx.options.gpu_flow_cat if ctx.base.is_gpu and ctx.comparison.is_gpu else ""
            window = export_window(ctx, ctx.frames.get("e2e"))  # a DB export's window tasks beside a text export
            why = unchanged_why(found[1], wf, flow_cat, api, window, free_other_copies(pair))
            why = f"no {found[0]} changed its device time{small} ({why}); the contributors are the waterfall steps"
        contrib = top_contributors(*reversed(waterfall_contributors(wf)))
        # said under the table (console, JSON, Summary sheet, gate), where the reader of the steps looks: an INFO
        # line on stderr alone left the JSON and the workbook with steps in place of operators and no word why
        contrib.attrs["fallback"] = why
    if len(contrib) and str(col_of(contrib, "Level")[0]) == "kernel type":
        steps = {"base": ctx.options.base_step, "comparison": ctx.options.comparison_step}
        unstepped = [(side, steps[side]) for side in checks.whole_profile_sides(ctx)]  # text sides given a step
        if unstepped:
            contrib.attrs["all_steps"] = unstepped
            if len(unstepped) == 1:  # the other side's step, which its DB export applies
                contrib.attrs["other_step"] = steps["comparison" if unstepped[0][0] == "base" else "base"]
    if len(contrib) and str(col_of(contrib, "Level")[0]) == "operator":
        rows = found[1] if found is not None else None
        two_sided, one_sided = operator_wrappers(op_rows, sheets or [])
        mark_pairs(ctx, contrib, None if rows is None else (
            rows["Name"].tolist(), rows["Base(ms)"].to_numpy(np.float64), rows["Comparison(ms)"].to_numpy(np.float64)),
            two_sided)
        # read by the note under the contributors (summary_notes.one_sided_note); not for an op the drill-down
        # reached inside a pair, where the note's "top-level op ... compared whole" and its advice are wrong
        if one_sided is not None and compared_whole(ctx, one_sided[0], one_sided[1]):
            contrib.attrs["one_sided_wrapper"] = one_sided
    contrib.attrs["api_sheet"] = api
    contrib.attrs.update(breakdown_attrs(ctx, ctx.frames.get("e2e"), pair))
    # where communication's change comes from, for the notes under the contributors (summary_notes): why no sheet
    # splits it by op, and the kernel contributors that are communication
    contrib.attrs["communication_unsplit"] = _unsplit_communication(ctx)
    contrib.attrs["communication_kernels"], contrib.attrs["communication_kernels_by"] = _communication_kernels(
        ctx, contrib)
    contrib.attrs["communication_sheets"] = [(sheet, option) for sheet, option in (
        ("OverallMetrics", "enable_profiling_compare"), ("CommunicationCompare", "enable_communication_compare"))
        if not getattr(ctx.options, option)]
    # what the profiles hold on their idle time (the note on a Free: Other change), unless the verdict says that
    # an idle stretch makes most of the difference
    contrib.attrs["idle_explained"] = bool(guard.attrs.get(checks.IDLE_EXPLAINS))
    contrib.attrs["idle_evidence"] = idle_evidence(pair, (ctx.base.ops, ctx.comparison.ops))
    ctx.frames["contributors"] = contrib
    comm = _contributor_communication(ctx, contrib, found[1] if found is not None and found[0] == "operator" else None)
    if comm is not None:
        ctx.frames["contributor_communication"] = comm
    # where they grew, in a communication- or memory-only run too
    communication_summary.build(ctx, sheets or [])
    memory_summary.build(ctx, sheets or [])
    if op_rows is not None and sheets:
        outside, outside_held, modules = find_module_contributors(ctx, contrib, sheets)
        # on the contributors frame, which the console, the sheet and the JSON all read (outside_modules_note)
        contrib.attrs["outside_modules"], contrib.attrs["outside_held"] = outside, outside_held
        if modules is not None:
            ctx.frames["module_contributors"] = modules
    if not len(wf) or not sheets:  # alone, a Summary would turn a run without any sheet into a workbook
        return []
    sheet = summary_sheet(ctx, wf, contrib, guard)
    sheet.communication = comm
    sheet.module_contributors = ctx.frames.get("module_contributors")
    sheet.communication_contributors = ctx.frames.get("communication_contributors")
    sheet.communication_totals = ctx.frames.get("communication")
    sheet.memory_contributors = ctx.frames.get("memory_contributors")
    sheet.memory_totals = ctx.frames.get("memory")
    return [sheet]


def breakdown_attrs(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None,
                    pair: tuple[Breakdown, Breakdown] | None) -> dict[str, Any]:
    """The contributors' attrs that the notes under them read of the time breakdown ``pair`` (``e2e``: its
    frame): a DB export's window tasks, which its Free: Other holds beside a text export's (the note on idle time),
    and how the communication groups' change splits between Wait and Transmit. Set by ``build`` and by
    ``gate.gate_frames``, on the breakdown it makes for a result compared without one (whose gate read a text -> DB
    switch's Free: Other as the device waiting longer, where the CLI's said it waited 0.486 ms less). Without a
    breakdown (operator or kernel compare alone) there is no E2E change: the titles set the shares against none."""
    return {"no_e2e": pair is None, "export_window": export_window(ctx, e2e),
            "wait_split": overall.wait_split(*pair) if pair is not None else None}


def _unsplit_communication(ctx: RunContext) -> tuple[tuple[int, str, bool], ...] | None:
    """Where the communication comparison ran and wrote no op row because the sides' communication ops have no family
    (a Level0 DB export's op type N/A), per side: how many ops lack one, what they hold instead
    (``communication.UNNAMED_KEY``) and whether the export is a Level0 one; else None."""
    from .communication import UNNAMED_KEY
    from .optree import COMMUNICATION_ROWS

    unnamed = ctx.cache.get(UNNAMED_KEY)
    if ctx.cache.get(COMMUNICATION_ROWS, True) or not unnamed or not any(n for n, _ in unnamed):
        return None
    return tuple((n, why, p.extra.get("profiler_level") == "Level0")
                 for (n, why), p in zip(unnamed, (ctx.base, ctx.comparison), strict=True))


def _communication_kernels(ctx: RunContext, contrib: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The kernel-level contributors that are HCCL ops (kernel_details.csv's rows of Accelerator Core HCCL or
    COMMUNICATION or a ``hcom_`` name, ``breakdown_npu.hccl_op_rows``, on either side), by name: KernelCompare names
    a row by its type, then its input shapes. At the kernel type level (KernelTypeCompare, ``{OP Type}-{Core
    Type}``) a type of Core Type HCCL or COMMUNICATION, a ``hcom_`` type or one of those kernels' types: no sample's
    op_statistic.csv lists its HCCL ops (the text level-1 export's totals are its Computing Time without its 4
    all-reduce ops), but a row of them read as a kernel type like the others. Second, what marked them, in the
    note's words (``HCOM_NAME`` ...): the core as the file writes it (newer torch_npu writes COMMUNICATION,
    msinsight's st/level2), else the ``hcom_`` name."""
    level = str(col_of(contrib, "Level")[0]) if len(contrib) else ""
    if level not in ("kernel", "kernel type"):
        return [], []
    from ..model import hccl_core, hcom_name
    from .breakdown_npu import hccl_op_rows

    types: set[str] = set()
    # the types of HCCL rows of an HCCL core -> those cores, as the note words them: two torch_npu versions' exports
    # write HCCL on one side and COMMUNICATION on the other, and the note names a cell each file holds
    cored: dict[str, list[str]] = {}
    for p in (ctx.base, ctx.comparison):
        kd = p.kernel_details if p.is_npu else None
        if kd is not None and len(kd) and "Type" in kd.columns:
            rows = hccl_op_rows(kd)
            kinds = [str(t).strip() if t else "" for t in col_of(kd, "Type", object)[rows].tolist()]
            types.update(t for t in kinds if t)
            if "Accelerator Core" in kd.columns:
                cores = col_of(kd, "Accelerator Core", object)[rows].tolist()
                for t, c in zip(kinds, cores, strict=True):
                    if t and hccl_core(str(c or "")) and core_word(c) not in cored.setdefault(t, []):
                        cored[t].append(core_word(c))
    names = col_of(contrib, "Name").tolist()
    if level == "kernel type":
        def hccl(name: str) -> str:
            kind, _, core = name.rpartition("-")
            return (f"Core Type {core_word(core)}" if hccl_core(core) else HCOM_TYPE if hcom_name(kind) else
                    HCCL_KERNEL_TYPE if kind in types else "")
        marked = [(n, hccl(n)) for n in names]
    else:
        marked = [(n, (f"Accelerator Core {' / '.join(cored[t])}" if cored.get(t) else HCOM_NAME) if t in types else "")
                  for n in names for t in [n if n in types else n.split(" ", 1)[0]]]
    return [n for n, w in marked if w], list(dict.fromkeys(w for _, w in marked if w))


#: What marked a kernel contributor as an HCCL op, in the note's words (``communication_kernels_note``): an HCCL
#: core is said as the file writes it ("Accelerator Core COMMUNICATION", ``core_word``), so the note names a cell
#: the user finds.
HCOM_NAME = "a name starting hcom_"
HCOM_TYPE = "an OP Type starting hcom_"
HCCL_KERNEL_TYPE = "the OP Type of kernel_details.csv's HCCL ops"


def core_word(core: object) -> str:
    """An HCCL core cell as the note words it: upper case, unpadded (``hccl `` -> ``HCCL``)."""
    return str(core or "").strip().upper()


def _contributor_communication(ctx: RunContext, contrib: pd.DataFrame,
                                op_rows: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """Per listed operator contributor, each side's device time (ms) that is collective communication: the HCCL
    ops of an NPU text export that the operator's subtree owns (the kernel pool's rows without a task id, -2),
    summed over the top-layer operators of that name as OperatorCompareStatistic sums them. None where the
    contributors are no operators, or no listed one holds any. With the operator ``op_rows`` the contributors were cut
    from, ``attrs["net"]`` holds those rows ranked by their change net of that communication (``net_changes``)."""
    if not len(contrib) or str(col_of(contrib, "Level")[0]) != "operator" or not ctx.options.enable_operator_compare:
        return None
    kw = ctx.keywords  # None where the run read no keyword lists: NCCL / RCCL kernels only (no config file read)
    held = tuple(_has_collectives(p, kw) for p in (ctx.base, ctx.comparison))
    if not any(held):
        return None
    from .optree import operator_pairs

    pairs = operator_pairs(ctx)  # cached: the operator comparison built it
    names = col_of(contrib, "Name").tolist()
    trees = (pairs.base, pairs.comparison)
    # every operator row's communication at once (one pass over each tree): the listed ones' for the frame, the
    # others' for the ranking net of it
    every = names if op_rows is None else list(dict.fromkeys([*names, *op_rows["Name"].tolist()]))
    per_side = [_communication_ns(tree, idx, every, kw)
                for tree, idx in zip(trees, (pairs.ia, pairs.ib), strict=True)]
    net = [] if op_rows is None else net_changes(op_rows, per_side)
    rows = [(n, *((side or {}).get(n, 0) for side in per_side)) for n in names]
    rows = [r for r in rows if r[1] or r[2]]
    if not rows:
        return None
    # a side whose operators own no collective (a DB export links only compute tasks; a GPU trace without launch
    # flows, none) records none: null, not 0 ms beside the other side's figure; a GPU trace without any collective
    # kernel (one rank) ran none: 0 ms is its reading, as in the communication line
    zero = [t.profile.is_gpu and not h for t, h in zip(trees, held, strict=True)]
    base, comp = ([(0.0 if zero[i - 1] else np.nan) if side is None else r[i] / 1e6 for r in rows]
                  for i, side in enumerate(per_side, 1))
    frame = plain_frame({"Name": object_array([r[0] for r in rows]), "Base(ms)": np.array(base),
                         "Comparison(ms)": np.array(comp)})
    frame.attrs["kinds"] = tuple("GPU" if t.profile.is_gpu else "NPU" for t in trees)
    frame.attrs["held"] = held  # a null side's reason: it holds no collective, or links none to an operator
    frame.attrs["net"] = net
    return frame


#: At most this many operators are named by their change net of communication (``net_changes``).
NET_TOP = 5
#: They are named where their absolute changes net of communication add up to this share of the operators' absolute
#: change or more: 5.2% (GPU AlexNet -> NPU text, computing +5.8 ms beside a +106 ms all-reduce) and 8.3% (mstt's
#: one-device trace -> NPU text) named the computing that moved; 0.9% to 1.2% (NPU level1 -> level2, rank0 -> rank1,
#: text -> DB: +0.016 ms of noise, or a copy task one export links and the other does not) named noise.
NET_MATERIAL_SHARE = 0.03


def net_changes(rows: pd.DataFrame, per_side: list[dict[str, int] | None]) -> list[tuple[str, float]]:
    """(name, ms) of the operator ``rows`` (Name, Base(ms), Comparison(ms)) whose device-time change, less the
    change of the collective communication inside them (``per_side``: each side's ``_communication_ns`` of every
    row; None: a side that records none, 0 ns), explains ``CONTRIBUTOR_COVERAGE`` of the rows' absolute change so
    reckoned, largest first, at most ``NET_TOP``: the contributors the cut would list without the communication;
    [] where those changes are under ``NET_MATERIAL_SHARE`` of the rows' absolute change (noise beside it).
    Where an NPU text export's all-reduce fills AccumulateGrad's change, they are the computing that moved (GPU
    AlexNet -> NPU: the optimizer's step, its _foreach_add_), which the table leaves out. Figures: whole ns / 1e6."""
    names = col_of(rows, "Name", object)
    ns = [np.rint(np.nan_to_num(col_of(rows, c, float)) * 1e6).astype(np.int64) for c in ("Base(ms)", "Comparison(ms)")]
    held = [np.fromiter(((side or {}).get(n, 0) for n in names), np.int64, len(names)) for side in per_side]
    net = (ns[1] - held[1]) - (ns[0] - held[0])
    if np.abs(net).sum() < NET_MATERIAL_SHARE * np.abs(ns[1] - ns[0]).sum():
        return []
    pick, _, _ = coverage_cut(net / 1e6, CONTRIBUTOR_COVERAGE, np.abs(net) >= 500)  # those that read 0.001 ms or more
    return [(str(names[i]), int(net[i]) / 1e6) for i in pick[:NET_TOP]]


def _has_collectives(p: Profile, kw: Any) -> bool:
    """Whether a side holds collective communication an operator can own: an NPU side's HCCL ops, a GPU side's
    collective kernels (``classify.gpu_comm_test``, the breakdown's rule)."""
    if p.is_npu:
        return bool(len(p.comm))
    k = p.kernels
    return bool(len(k)) and bool(_gpu_collective_kernels(col_of(k, "name", object), col_of(k, "task_type", object),
                                                         kw).any())


def _gpu_collective_kernels(names: np.ndarray, cats: np.ndarray, kw: Any) -> np.ndarray:
    """Per GPU kernel: a collective, as the breakdown counts communication (kernel events only, not memcpys); without
    the run's keyword lists ``kw`` (no time breakdown, no communication comparison: a bad MSPROF_COMPARE_CONFIG must
    not fail such a run), the NCCL / RCCL kernels."""
    comm = classify.is_gpu_comm_kernel_name(names, kw) if kw is not None else \
        classify.per_unique(names, lambda n: n.startswith(GPU_COMM_PREFIXES))
    return classify.per_unique(cats, lambda c: c == "kernel") & comm


def _communication_ns(tree: Any, idx: np.ndarray, names: list[str], kw: Any = None) -> dict[str, int] | None:
    """{name: ns of collective communication in the subtrees of the top-layer nodes ``idx`` so named: an NPU
    side's HCCL ops, a GPU side's collective kernels}; None where no operator of the side owns one (nothing
    recorded, not 0 ns)."""
    if not len(tree.kidx):
        return None
    if tree.profile.is_gpu:
        pool = tree.kpool
        is_comm = _gpu_collective_kernels(col_of(pool, "name", object)[tree.kidx],
                                          col_of(pool, "task_type", object)[tree.kidx], kw)
    else:
        is_comm = col_of(tree.kpool, "task_id", np.int64)[tree.kidx] == -2
    if not is_comm.any():
        return None
    idx = idx[idx >= 0]
    if not len(idx):
        return {}
    owner = np.repeat(np.arange(tree.n), np.diff(tree.kptr))
    dur = col_of(tree.kpool, "dur", np.int64)[tree.kidx]
    own = np.zeros(tree.n, dtype=np.int64)  # integer ns: bincount's weights would sum in float
    np.add.at(own, owner[is_comm], dur[is_comm])
    below = np.concatenate([[0], np.cumsum(own)])
    sub = below[idx + tree.size[idx]] - below[idx]
    out: dict[str, int] = {}
    wanted = set(names)
    for n, ns in zip(col_of(tree.ops, "name", object)[idx].tolist(), sub.tolist(), strict=True):
        if n in wanted and ns:
            out[n] = out.get(n, 0) + int(ns)
    return out
