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
  rows inside those contributors that explain 80% of those rows' change (``_module_contributors``);
* the **validity guards** (``checks.guards``): can the two sides be compared, and
  how should the figures be read.

They land in ``ctx.frames["waterfall" | "contributors" | "module_contributors" | "guards"]`` and in the
``Summary`` sheet (placed first in the workbook by ``api.run_comparators``); the communication and memory
counterparts of the contributors (``communication_summary``, ``memory_summary``) in
``ctx.frames["communication_contributors" | "communication" | "memory_contributors" | "memory"]``.
``regression_gate`` implements ``--fail_on_regression``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..model import GPU_COMM_PREFIXES, Profile, factorize, object_array
from ..textsafe import short_list, term_safe, text_width
from . import checks, classify, overall
from .breakdown import Breakdown, hccl_group_stem
from .communication_summary import OVERLAP_SHIFT_SHARE, overlap_words
from .table import (
    STYLE_MS3,
    STYLE_RATIO,
    STYLE_TEXT,
    Column,
    Sheet,
    decimal_diff,
    half_up,
    half_up_ns,
    plain_frame,
    sheet_numbers,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult, RunContext

log = logging.getLogger("msprof-analyze")

SHEET_NAME = "Summary"
#: Contributors are listed until their cumulative share of the absolute change reaches this.
CONTRIBUTOR_COVERAGE = 0.8
#: Group residuals below this (on both sides) are rounding, folded into the largest group.
RESIDUAL_FOLD_NS = 1000
#: The waterfall step of copy time on a compute stream (SDMA), part of free time.
SDMA_STEP = "Free: SDMA"

#: Waterfall frame columns (ns columns are exact; ms columns are for display).
WATERFALL_COLUMNS = ["Step", "Category", "Base(ms)", "Comparison(ms)", "Delta(ms)", "Cumulative(ms)",
                     "Share of E2E Diff", "Base(ns)", "Comparison(ns)", "Delta(ns)"]
CONTRIBUTOR_COLUMNS = ["Rank", "Level", "Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share",
                       "Cumulative Share", "Share of Net Diff"]

# (label, bucket names) of the computing steps, in OverallMetrics order; MC2 and Other follow.
_COMPUTING_STEPS = (
    ("Flash Attention (Forward)", ("fa_fwd_cube", "fa_fwd_vector")),
    ("Flash Attention (Backward)", ("fa_bwd_cube", "fa_bwd_vector")),
    ("Conv (Forward)", ("conv_fwd_cube", "conv_fwd_vector")),
    ("Conv (Backward)", ("conv_bwd_cube", "conv_bwd_vector")),
    ("Matmul", ("matmul_cube", "matmul_vector")),
    ("Page Attention", ("page_attention",)),
    ("Vector", ("vector_trans", "vector_notrans")),
    ("Cube (other)", ("other_cube",)),  # OverallMetrics "\tCube"; the console's Cube Time adds Matmul
    ("SDMA (Tensor Move)", ("sdma_tm",)),
)


# --------------------------------------------------------------------------- waterfall


def _ms3(ns: float) -> float:
    """A text's ms with 3 decimals: whole ns to the us, a half away from zero (``table.half_up_ns``)."""
    return half_up_ns(ns, 10**6, 3)


def _group_labels(bd: Breakdown) -> dict[str, str]:
    """Group key -> display label, as OverallMetrics labels groups (reference-1 §9.4 item 26).

    A process-group name that names exactly one group on this side labels it
    ``"{pg}: Communication"`` so that the two sides pair by pg name even when
    their group ids differ; otherwise ``"{pg}: {key}"`` or the bare key.
    """
    by_pg: dict[str, list[str]] = {}
    for key in bd.groups:
        by_pg.setdefault(bd.pg_names.get(key, "") or "unknown", []).append(key)
    labels = {}
    for key in bd.groups:
        pg = bd.pg_names.get(key, "")
        if pg and pg != "unknown" and len(by_pg.get(pg, ())) == 1:
            labels[key] = f"{pg}: Communication"
        elif pg:
            labels[key] = f"{pg}: {key}"
        else:
            labels[key] = key
    # HCCL names a group "{ip}%{nic}_{port}_{index}_{creation time in us}" (DB exports show them raw):
    # without the creation time the same group of two runs pairs up instead of leaving and arriving
    # (a stripped name two groups of this side share keeps them apart in full)
    stripped = {k: hccl_group_stem(v) or v for k, v in labels.items()}
    uses = Counter(stripped.values())
    return {k: stripped[k] if uses[stripped[k]] == 1 else v for k, v in labels.items()}


def _group_totals(bd: Breakdown) -> dict[str, int]:
    labels = _group_labels(bd)
    out: dict[str, int] = {}
    for key, parts in bd.groups.items():
        lab = labels[key]
        out[lab] = out.get(lab, 0) + int(parts.get("wait", 0)) + int(parts.get("transmit", 0))
    return out


#: The computing residual's name when it is negative on a side.
OVERLAP_STEP = "Other Computing (minus overlap of categories)"


#: Suffix of a communication group's waterfall step: the step holds the group's time outside computing (as
#: the GPU's "Uncovered Communication"), not its whole time, which CommunicationCompare shows.
UNCOVERED = " (uncovered)"


def waterfall(base: Breakdown, comparison: Breakdown) -> pd.DataFrame:
    """Base E2E -> comparison E2E in steps whose ``Delta(ns)`` add up exactly to the E2E difference.

    E2E = computing + lccl + uncovered communication + free by construction of
    ``Breakdown.free_ns``, so splitting each term into parts that sum to it
    (with an explicit residual part where the data's parts need not add up:
    "Other Computing", "Other Communication") keeps the identity exact.
    """
    steps: list[tuple[str, str, int, int]] = []  # (label, category, base ns, comparison ns)

    def parts(bd: Breakdown) -> list[int]:
        vals = [sum(int(bd.buckets[b].ns) for b in names) for _, names in _COMPUTING_STEPS]
        vals.append(int(bd.mc2_ns))
        vals.append(int(bd.computing_ns) - sum(vals))  # residual: Other (unclamped so the sum holds)
        return vals

    pb, pc = parts(base), parts(comparison)
    for vals in (pb, pc):
        # a sub-µs residual is rounding of fractional-ns kernel times (as for the groups below): fold it into
        # that side's largest category instead of showing a noise step; per side, so that a -127 ns residual
        # of one side does not name the other side's real uncategorised time an overlap
        if vals[-1] and abs(vals[-1]) < RESIDUAL_FOLD_NS and any(vals[:-1]):
            i = max(range(len(vals) - 1), key=vals.__getitem__)
            vals[i] += vals[-1]
            vals[-1] = 0
    labels = [lab for lab, _ in _COMPUTING_STEPS] + ["MC2"]
    for lab, b, c in zip(labels, pb[:-1], pc[:-1], strict=True):
        steps.append((lab, "computing", b, c))
    # a residual is below 0 when category kernels overlap in time (concurrent streams): their sums exceed the
    # union. Each side's residual goes to the step it is: real uncategorised time on one side and an overlap
    # on the other are two steps, not one row named for either
    steps.append(("Other Computing", "computing", max(pb[-1], 0), max(pc[-1], 0)))
    steps.append((OVERLAP_STEP, "computing", min(pb[-1], 0), min(pc[-1], 0)))

    gb, gc = _group_totals(base), _group_totals(comparison)
    if set(gb) & set(gc):  # per group only when some group pairs across the runs: a GPU side has none (its
        # time would look like an unrelated "Other Communication" step beside the other side's groups), and
        # groups that all differ (a text export's "Group 0" vs a DB export's HCCL name) would only show the
        # whole communication time leaving in one step and arriving in another
        rb = int(base.uncovered_comm_ns) - sum(gb.values())
        rc = int(comparison.uncovered_comm_ns) - sum(gc.values())
        # a sub-µs residual is rounding of fractional-ns group times: fold it into that side's largest group
        # instead of showing a noise step (a side without groups keeps its residual)
        if gb and rb and abs(rb) < RESIDUAL_FOLD_NS:
            gb[max(gb, key=gb.__getitem__)] += rb
            rb = 0
        if gc and rc and abs(rc) < RESIDUAL_FOLD_NS:
            gc[max(gc, key=gc.__getitem__)] += rc
            rc = 0
        for lab in list(gb) + [k for k in gc if k not in gb]:
            steps.append((lab + UNCOVERED, "communication", gb.get(lab, 0), gc.get(lab, 0)))
        steps.append(("Other Communication" + UNCOVERED, "communication", rb, rc))
    else:
        steps.append(("Uncovered Communication", "communication",
                      int(base.uncovered_comm_ns), int(comparison.uncovered_comm_ns)))
    steps.append(("Lccl", "lccl", int(base.lccl.ns), int(comparison.lccl.ns)))
    steps.append((SDMA_STEP, "free", int(base.sdma_stream.ns), int(comparison.sdma_stream.ns)))
    steps.append(("Free: Other", "free", int(base.free_ns) - int(base.sdma_stream.ns),
                  int(comparison.free_ns) - int(comparison.sdma_stream.ns)))
    steps = [s for s in steps if s[2] or s[3]]

    e2e_b, e2e_c = int(base.e2e_ns), int(comparison.e2e_ns)
    total = e2e_c - e2e_b
    rows: list[dict[str, Any]] = [{
        "Step": "Base E2E", "Category": "start", "Base(ns)": e2e_b, "Comparison(ns)": None,
        "Delta(ns)": None, "cum": e2e_b,
    }]
    level = e2e_b
    for lab, cat, b, c in steps:
        level += c - b
        rows.append({"Step": lab, "Category": cat, "Base(ns)": b, "Comparison(ns)": c,
                     "Delta(ns)": c - b, "cum": level})
    rows.append({"Step": "Comparison E2E", "Category": "end", "Base(ns)": None, "Comparison(ns)": e2e_c,
                 "Delta(ns)": total, "cum": e2e_c})
    if level != e2e_c:  # impossible by construction; a loader filled an inconsistent Breakdown
        log.warning("waterfall steps do not add up to the E2E difference (off by %d ns)", e2e_c - level)

    # one frame built from plain columns: these tables are tiny, so per-column pandas ops would dominate
    def ns_col(key: str) -> list[int | None]:
        return [r[key] for r in rows]

    # the nullable columns from their values and masks: ``pd.array`` of a list infers and checks per value
    def ns(values: list[int | None]) -> tuple[np.ndarray, np.ndarray]:
        mask = np.array([v is None for v in values], dtype=bool)
        return np.array([0 if v is None else v for v in values], dtype=np.int64), mask

    def ms(data: np.ndarray, mask: np.ndarray) -> pd.arrays.FloatingArray:
        out = data / 1e6  # as int / 1e6 per value: the int64 converted to float, then divided
        out[mask] = np.nan
        return pd.arrays.FloatingArray(out, mask.copy())

    b_ns, c_ns, d_ns = ns(ns_col("Base(ns)")), ns(ns_col("Comparison(ns)")), ns(ns_col("Delta(ns)"))
    share = [None if (d is None or not total or r["Category"] == "start") else d / total + 0.0  # no -0.0
             for d, r in zip(ns_col("Delta(ns)"), rows, strict=True)]
    share_mask = np.array([v is None for v in share], dtype=bool)
    return plain_frame({
        "Step": [r["Step"] for r in rows], "Category": [r["Category"] for r in rows],
        "Base(ms)": ms(*b_ns), "Comparison(ms)": ms(*c_ns), "Delta(ms)": ms(*d_ns),
        "Cumulative(ms)": np.array([r["cum"] for r in rows], dtype=np.int64) / 1e6,
        "Share of E2E Diff": pd.arrays.FloatingArray(
            np.array([np.nan if v is None else v for v in share], dtype=np.float64), share_mask),
        "Base(ns)": pd.arrays.IntegerArray(*b_ns), "Comparison(ns)": pd.arrays.IntegerArray(*c_ns),
        "Delta(ns)": pd.arrays.IntegerArray(*d_ns),
    }, WATERFALL_COLUMNS)


# --------------------------------------------------------------------------- contributors

def _operator_statistic(ctx: RunContext, sheets: list[Sheet]) -> list[list] | None:
    """OperatorCompareStatistic rows even when the workbook shows the module level instead.

    Module rows only cover operators inside modules (e.g. an allreduce under
    AccumulateGrad is outside every module), so the operator level explains
    the device-time change better; the operator pairing is cached per run.
    """
    if any(s.name == "OperatorCompareStatistic" for s in sheets) or not ctx.options.enable_operator_compare:
        return None
    if not (len(ctx.base.ops) and len(ctx.comparison.ops)):
        return None
    from .operators import statistic_rows
    from .optree import operator_pairs

    rows = statistic_rows(operator_pairs(ctx))  # from the loaded tables only: it raises no ProfileError
    return rows or None


def _row_level(rows: list[list]) -> pd.DataFrame:
    """``_level_rows``' operator frame from OperatorCompareStatistic rows as they are, without a DataFrame of them
    (~0.6 ms): names as text, device ms as ``_numeric`` reads the sheet's cells."""
    names = [r[1] for r in rows]
    return plain_frame({"Name": object_array([n if type(n) is str else str(n) for n in names]),
                        "Base(ms)": sheet_numbers([r[2] for r in rows]),
                        "Comparison(ms)": sheet_numbers([r[4] for r in rows])})


def _us_to_ms(us: np.ndarray) -> np.ndarray:
    """µs cells (whole ns at most: the kernel sheets' totals are to 0.01 µs, op_statistic.csv's to the ns) in ms,
    rounded to the ns: the bare division leaves binary noise in about a quarter of them (321.47 µs gave
    0.32147000000000003 ms), and rounding to the ns drops no digit they carry."""
    return np.round(us / 1000.0, 6)


def _level_rows(sheets: list[Sheet], operator_rows: list[list] | None = None) -> tuple[str, pd.DataFrame] | None:
    """(level, frame[Name, Base(ms), Comparison(ms)]) from the finest statistic sheet available.

    Reads sheets by column position, which the sheet layouts fix (reference-2
    §2.7, §3.7, §6.1, §6.2); preference: operators, module operators, kernels, kernel types.
    ``operator_rows`` (OperatorCompareStatistic rows) stands in for that sheet when absent.
    """
    by_name = {s.name: s for s in sheets}
    s = by_name.get("OperatorCompareStatistic")
    if (s is None or not len(s)) and operator_rows is not None and len(operator_rows):
        return "operator", _row_level(operator_rows)
    if s is not None and len(s):
        d = s.data
        return "operator", plain_frame({
            "Name": d.iloc[:, 1].astype(str).to_numpy(),
            "Base(ms)": sheet_numbers(d.iloc[:, 2]), "Comparison(ms)": sheet_numbers(d.iloc[:, 4])})
    s = by_name.get("ModuleCompareStatistic")
    if s is not None and len(s):
        d = s.data
        ops = d[d.iloc[:, 4].astype(str) != "[ TOTAL ]"]
        if len(ops):
            name = ops.iloc[:, 3].astype(str).str.strip() + " > " + ops.iloc[:, 4].astype(str)
            return "module operator", plain_frame({
                "Name": name.to_numpy(),
                "Base(ms)": sheet_numbers(ops.iloc[:, 6]), "Comparison(ms)": sheet_numbers(ops.iloc[:, 10])})
    for sheet_name, level in (("KernelCompare", "kernel"), ("KernelTypeCompare", "kernel type")):
        s = by_name.get(sheet_name)
        if s is not None and len(s):
            d = s.data
            sep = " " if level == "kernel" else "-"
            detail = d.iloc[:, 2].fillna("").astype(str)
            # a kernel without input shapes is named by its type alone ("hcom_allReduce_", not "... N/A")
            name = d.iloc[:, 1].fillna("").astype(str) + (sep + detail).where(~detail.isin(["", "N/A"]), "")
            return level, plain_frame({
                "Name": name.to_numpy(),
                "Base(ms)": _us_to_ms(sheet_numbers(d.iloc[:, 3])),
                "Comparison(ms)": _us_to_ms(sheet_numbers(d.iloc[:, 8]))})
    return None


def coverage_text(contrib: pd.DataFrame) -> str:
    """"3 rows cover 86.2%" for titles: the last Cumulative Share to 0.1 %, as the console's cell shows it (a
    whole percent said "covers 100%" over a row of 99.9%)."""
    n = len(contrib)
    cover = round(float(contrib["Cumulative Share"].iloc[-1]), 3) + 0.0
    return f"{n} row{'s' if n != 1 else ''} cover{'s' if n == 1 else ''} {cover:.1%}"


def share_basis(level: str) -> str:
    """What a contributor's Share is a share of, for titles: the summed absolute change of its level,
    which is not the E2E change shown beside it."""
    if level == "category":  # contributors taken from the waterfall steps
        return "the waterfall steps' change"
    return f"the {level}s' device-time change"


def shares_of_e2e(contrib: pd.DataFrame) -> bool:
    """Whether the contributors' shares are of the E2E change too: at the category level where every step that
    changed moved one way, their summed |change| is the E2E change (the steps sum to it). The Summary sheet's
    title said "not of the E2E change" under a host-bound GPU slowdown's one step, Free: Other +0.100 ms of an
    E2E change of +0.100 ms."""
    if not len(contrib) or str(contrib["Level"].iloc[0]) != "category":
        return False
    gross = level_gross_ms(contrib)
    return bool(gross) and not round(gross - abs(level_net_ms(contrib)), 6)


def module_share_basis(frame: pd.DataFrame) -> str:
    """``share_basis`` of the module contributors (``_module_contributors``): their shares are of the change of
    the module rows inside the operators that run modules (``_rows_run_by``), not of every module row. DB level2
    -> level1: "15 rows cover 81.1% of the module operators' device-time change" read as all 54 rows', of whose
    change the 15 hold 72.1%; the 42 rows inside the five runners are the 81.1%'s basis."""
    inside = frame.attrs.get("module_rows_of")
    if inside:
        return f"the device-time change of {'its' if len(inside) == 1 else 'their'} module rows"
    runners = frame.attrs.get("runs_modules") or []
    return f"the device-time change of the module operators inside {'it' if len(runners) == 1 else 'them'}"


#: Below this share of the E2E change, the contributors of a level are said to explain little of it.
EXPLAINED_SHARE = 0.5
#: From this many times the E2E change (same sign), the contributors of a level are said to overstate it.
OVERSTATED_SHARE = 2.0


#: The note says what the Share column is of where the net change is this much (of it) smaller.
SHARES_BASIS_GAP = 0.05


def level_gross_ms(contrib: pd.DataFrame) -> float:
    """The sizes of every row's change of the contributors' level added up (ms): what each listed row's "Share"
    is of (0.0 when no row changed)."""
    for d, s in zip(contrib["Diff(ms)"].tolist(), contrib["Share"].tolist(), strict=True):
        if s is not None and not pd.isna(s) and s:
            return abs(float(d)) / float(s)
    return 0.0


def _shares_basis(contrib: pd.DataFrame, net: float) -> str:
    """Where some rows grew and others shrank, what the Share column is of, beside the net change the note
    gives: on the README's BERT pair the note said "all operators together changed by +0.081 ms" under a
    +0.076 ms row with a Share of 58.8 % (of 0.130 ms), which no reader could reconcile. "" where the net is within
    ``SHARES_BASIS_GAP`` of that basis."""
    gross = level_gross_ms(contrib)
    if gross - abs(net) < SHARES_BASIS_GAP * gross:  # the net is about the basis: the shares read as its parts
        return ""
    return (f"; the Share column is of {gross:.3f} ms, the sizes of their changes added up (savings do not "
            "cancel growth)")


def level_net_ms(contrib: pd.DataFrame) -> float:
    """The net change (ms) of every row of the contributors' level, listed or not: each listed row's
    "Share of Net Diff" is its diff over that net (null when the net is 0)."""
    for d, s in zip(contrib["Diff(ms)"].tolist(), contrib["Share of Net Diff"].tolist(), strict=True):
        if s is not None and not pd.isna(s) and s:
            return float(d) / float(s)
    return 0.0


#: A waterfall step outside device time is named in the note from this share of the E2E change.
NAMED_STEP_SHARE = 0.1


def _outside_steps(wf: pd.DataFrame, e2e_delta_ns: int) -> tuple[str, bool, int | None]:
    """The one or two waterfall steps outside any operator's device time (communication, free time) that
    moved with the E2E change by at least NAMED_STEP_SHARE of it (and by a shown 0.001 ms), largest first,
    whether together they hold half of the change or more (the note then says where the change is instead of
    listing what it might be), and, where they hold all of it, what the other steps moved the other way (ns;
    None where they hold less): "most of it in Free: Other -0.493 ms" of a -0.412 ms change said less than the
    figures. ("", False, None) when no step qualifies."""
    cat = col_of(wf, "Category", object)
    delta = wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
    moved = delta * np.sign(e2e_delta_ns) >= max(NAMED_STEP_SHARE * abs(e2e_delta_ns), 500)
    pick = np.flatnonzero(np.isin(cat, ["communication", "free"]) & moved)
    pick = pick[np.argsort(-np.abs(delta[pick]), kind="stable")][:2]
    steps = col_of(wf, "Step", object)
    named = " and ".join(f"{steps[i]} {_ms3(delta[i]):+.3f} ms" for i in pick)
    held = int(delta[pick].sum())
    rest = e2e_delta_ns - held if len(pick) and abs(held) >= abs(e2e_delta_ns) else None
    return named, bool(len(pick)) and abs(held) * 2 >= abs(e2e_delta_ns), rest


def _unchanged_why(rows: pd.DataFrame, wf: pd.DataFrame) -> str:
    """Why no row of a level changed while the waterfall did. Rows holding no device time on either side: no
    kernel is linked to an operator (a trace without launch flows). Rows holding device time: the change is time
    no operator holds; where uncovered communication moved, the overlap moved (``overlap_words``: a collective
    as long as before at another time, whose operator holds its kernel); where SDMA moved, a copy on a compute
    stream changed (moved to another stream it is Free: Other, reference-1 §4.3); where it is idle time, the
    device waited, as on a host-bound slowdown (a launch or copy call that took longer), which a trace with launch
    flows shows and that was said to lack them. Computing categories that moved against each other hold the same
    kernels under another category (a renamed kernel, another op Type or PMU figures, or a Conv's operator on
    the backward thread of a text export or GPU trace, reference-1 §3.8); Lccl gained from Free Time
    alone is kernel time the Free Time formula takes out a second time: neither is time no operator holds, which
    both were said to be."""
    held = float(np.nansum(rows["Base(ms)"].to_numpy(dtype=float)) +
                 np.nansum(rows["Comparison(ms)"].to_numpy(dtype=float)))
    if not held:
        return "as where no kernel is linked to an operator: a trace without launch flows"
    step = _step_mask(wf)
    delta = wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
    moved = np.flatnonzero(step & (delta != 0))
    cats, steps = col_of(wf, "Category", object), col_of(wf, "Step", object)
    comm = int(delta[moved[cats[moved] == "communication"]].sum())
    sdma = int(delta[moved[steps[moved] == SDMA_STEP]].sum())
    kinds, all_moved = set(cats[moved]), moved
    # computing steps that moved against each other, their sum and Computing unchanged: the same kernels in
    # another category (a name, op Type or PMU figures that changed), which an operator's device time never shows
    regrouped = kinds == {"computing"} and len(moved) > 1 and not int(delta[moved].sum())
    moved = moved[np.argsort(-np.abs(delta[moved]), kind="stable")]
    # the communication (SDMA) steps decide where they moved a quarter of the step that moved most or more (the
    # share the communication line's rule uses, OVERLAP_SHIFT_SHARE, there of the larger of the uncovered part's and
    # the op rows' changes, with a 0.05 ms floor: so the line may still give a small overlap change, the hta host
    # 2 ms late beside 0.052 ms less uncovered communication, whose note reads idle time); any move decided
    most = OVERLAP_SHIFT_SHARE * abs(int(delta[moved[0]])) if len(moved) else 0
    named = " and ".join(f"{steps[i]} {_ms3(delta[i]):+.3f} ms" for i in moved[:2])
    if regrouped:
        why = ("the same kernel time in other computing categories: a kernel's category follows its name, op type, "
               "PMU figures and the operator around it (its name and, outside a DB export, its thread), so kernels "
               "as long as before are counted under another category")
    elif "lccl" in kinds and not comm and not int(delta[all_moved[np.isin(cats[all_moved], ["lccl", "free"])]].sum()):
        # Free Time is E2E less computing, Lccl and uncovered communication (reference-1 §5.4 9): a kernel named
        # kernel_aivec is computing on the timeline too, so its time left Free Time while the device idled as long
        why = ("Lccl time (kernels named kernel_aivec) that Free Time gave up: Free Time is E2E - computing - Lccl - "
               "uncovered communication, and their time counts as computing or communication too, so the device "
               "idled as long as before")
    elif comm and abs(comm) >= most:
        # a collective as long as before at another time (its kernel and its operator unchanged) under less computing
        # was "time no operator's kernels hold", while its operator held the kernel
        why = (f"{overlap_words('less' if comm > 0 else 'more')}: kernels ran at other times, which no operator's "
               "device time shows")
    elif sdma and abs(sdma) >= most:
        # a copy moved off the compute stream is Free: Other, not SDMA (reference-1 §4.3): that read as the device
        # waiting for a slower host, beside a copy that ran as long as before
        why = (f"copy time on a compute stream ({SDMA_STEP}): a copy longer or shorter, or one moved between a "
               "compute stream and another stream, where it is Free: Other")
    elif len(moved) and cats[moved[0]] == "free":  # its sign: a comparison whose host was quicker waited less
        longer = delta[moved[0]] > 0
        why = (f"device idle time: the device waited {'longer' if longer else 'less'} for work, as where the host was "
               f"{'slower' if longer else 'quicker'} to launch it; ApiCompare times the host calls")
    else:
        why = "time no operator's kernels hold"
    return f"the change is in {named}, {why}"


def unexplained_note(contrib: pd.DataFrame | None, wf: pd.DataFrame | None,
                     comm: pd.DataFrame | None = None) -> str:
    """The note under the contributors: ``fallback_note`` (why the waterfall steps stand in for a level),
    ``wrapper_note`` (each side's operators under one top-level op of another name), ``all_steps_note``,
    ``name_map_note``, ``_unexplained`` (how much of the E2E change they explain), then ``communication_note``
    (which of them hold collective communication, from ``comm``: the run's "contributor_communication" frame).
    "" when none applies."""
    parts = [fallback_note(contrib), wrapper_note(contrib), all_steps_note(contrib), name_map_note(contrib),
             _unexplained(contrib, wf), communication_note(contrib, comm)]
    return "; ".join(p for p in parts if p)


def paired_names_map(ctx: RunContext) -> Mapping[str, str]:
    """The --op_name_map that pairs operators in this run: none under --disable_details, which matches no operator
    (reference-1 §1.5), and where the run warns that the map is ignored, a note saying that it pairs names only
    contradicted the warning."""
    return {} if ctx.options.disable_details else ctx.options.op_name_map


def mapped_names(names: list[str], base: np.ndarray, comp: np.ndarray, contrib: pd.DataFrame,
                 op_name_map: Mapping[str, str], digits: int) -> list[tuple[list[str], float, float]]:
    """Per group of statistic rows (``names``, each side's ``base`` / ``comp`` figures) that --op_name_map makes one
    name (``op_name_map.get(name, name)``, as the operator pairing applies it to both sides) with a listed
    contributor among them: (the names, those with a base figure first, and the rows' figures together, to
    ``digits`` decimals), in the order of their first listed contributor (the note shows the first three: in the
    order of each group's first sheet row, a larger contributor's group was left off for a smaller one's). The statistic
    sheets keep a row per name (reference-2 §2.7, §5), so a GPU op and its NPU namesake paired by the map were two
    contributors of opposite sign, and the change of the pair the user asked to compare was in no figure."""
    if not op_name_map or not len(contrib):
        return []
    members: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        members.setdefault(op_name_map.get(n, n), []).append(i)
    rank = {n: r for r, n in reversed(list(enumerate(contrib["Name"].tolist())))}
    out = []
    for idx in members.values():
        # rows without a figure on either side (an op without device time: aten::view) add nothing to the pair, and
        # a group of the listed row and those alone only repeated its own figures
        idx = [i for i in idx if base[i] or comp[i]]
        group = list(dict.fromkeys(names[i] for i in sorted(idx, key=lambda i: not base[i])))
        first = min((rank[n] for n in group if n in rank), default=None)
        if len(group) > 1 and first is not None:
            out.append((first, group, round(float(np.nansum(base[idx])), digits),
                        round(float(np.nansum(comp[idx])), digits)))
    return [g[1:] for g in sorted(out, key=lambda g: g[0])]


def name_map_text(found: list[tuple[list[str], float, float]], unit: str, digits: int) -> str:
    """The note's sentence on ``mapped_names``' groups (the first three), "" for none."""
    if not found:
        return ""
    def joined(names: list[str]) -> str:  # "a with b", "a with b and c", "a with b, c and d"
        return f"{names[0]} with {', '.join(names[1:-1]) + ' and ' if len(names) > 2 else ''}{names[-1]}"

    def fixed(v: float) -> float:  # ms a half away from zero, as the tables beside the note; MB as the memory sheet
        return half_up(v, digits) if unit == "ms" else round(v, digits) + 0.0  # + 0.0: "+0.000", not "-0.000"

    shown = [f"{joined(names)} {fixed(b):.{digits}f} {unit} -> {fixed(c):.{digits}f} {unit} together "
             f"({fixed(decimal_diff(b, c) if unit == 'ms' else c - b):+.{digits}f} {unit})"
             for names, b, c in found[:3]]
    more = f"; ... ({len(found)} in all)" if len(found) > 3 else ""
    return "--op_name_map pairs names that the statistic sheets, and so these rows, keep apart: " + "; ".join(
        shown) + more


def name_map_note(contrib: pd.DataFrame | None) -> str:
    """Where --op_name_map makes a listed contributor and another operator row one name (``attrs["mapped"]``), the
    pair's change together. "" otherwise."""
    return pair_notes(contrib, "operator device time", "ms", 3, "the operator level")[1]


def fallback_note(contrib: pd.DataFrame | None) -> str:
    """Where the waterfall steps stand in for a level whose rows did not change (``attrs["fallback"]``): why. ""
    otherwise."""
    return str(contrib.attrs.get("fallback") or "") if contrib is not None and len(contrib) else ""


def all_steps_note(contrib: pd.DataFrame | None) -> str:
    """Where the contributors are kernel types of a text export given a step (``attrs["all_steps"]``: each such
    side and its step), say that they are the whole profile's: KernelTypeCompare reads op_statistic.csv, which
    holds no step ids, so a kernel type changed in another step was listed as the step's contributor, with the
    only word of it on stderr. "" otherwise."""
    if contrib is None or not len(contrib):
        return ""
    sides = contrib.attrs.get("all_steps")
    if not sides:
        return ""
    why = "a text export's KernelTypeCompare reads op_statistic.csv, which holds no step ids"
    if len(sides) == 1:
        # the other side, a DB export, builds its statistic from the step's tasks: "these kernel types are the whole
        # profile's" read as both columns', where one side's whole profile is set against the other's step
        ((side, step),) = sides
        other = "comparison" if side == "base" else "base"
        return (f"the {side} side's kernel-type times are its whole profile's, not step {step}'s, set against the "
                f"{other}'s step {contrib.attrs.get('other_step', '')} alone (a DB export builds them from the step's "
                f"tasks): {why}")
    asked = ", ".join(f"{side} step {step}" for side, step in sides)
    return f"these kernel types are the whole profile's, not the step's ({asked}): {why}"


#: From this share of a side's operator device time, one top-level op of a name the other side lacks is a wrapper.
WRAPPER_SHARE = 0.9


def step_wrappers(names: list[str], amounts: tuple[np.ndarray, np.ndarray],
                  counts: tuple[np.ndarray, np.ndarray]) -> tuple[str, float, str, float] | None:
    """(base name, its amount, comparison name, its amount) where each side's amount (operator device ms,
    allocated MB) lies (WRAPPER_SHARE or more) under top-level ops of one name that the other side has no op of
    (``counts``: each side's op count per name): an annotation around the whole step named after its batch (the
    tracelens vLLM / SGLang traces: ``execute_32_context_0(...)_generation_32(...)`` against
    ``execute_8192_context_9(...)``), so the operator level pairs nothing inside. A framework op (``aten::``,
    ``autograd::``) is never one: it holds work of its own (an NPU text export links the all-reduce HCCL ops to the
    AccumulateGrad that launched them, 106.247 of its ops' 115.731 ms in level 1 rank 0, beside PARAM AlexNet's
    ``[param|cuda]`` annotation in reference pair 4). None otherwise. One rule for the time contributors
    (``_step_wrappers``) and the memory ones (``memory_summary``)."""
    if not names:
        return None
    total = [float(m.sum()) for m in amounts]
    if not (total[0] > 0 and total[1] > 0):
        return None
    top = [int(np.argmax(m)) for m in amounts]
    if top[0] == top[1] or any(names[i].startswith(checks.FRAMEWORK_PREFIXES) for i in top):
        return None
    for side, other in ((0, 1), (1, 0)):
        i = top[side]
        if amounts[side][i] < WRAPPER_SHARE * total[side] or counts[other][i] > 0:
            return None
    return names[top[0]], float(amounts[0][top[0]]), names[top[1]], float(amounts[1][top[1]])


def _step_wrappers(op_rows: list[list] | None, sheets: list[Sheet]) -> tuple[str, float, str, float] | None:
    """``step_wrappers`` of the operators' device time, read from OperatorCompareStatistic's rows (name, device
    ms and op count per side), as the contributors are."""
    rows = op_rows
    if rows is None:
        sheet = next((s for s in sheets if s.name == "OperatorCompareStatistic"), None)
        if sheet is None or not len(sheet):
            return None
        rows = sheet.data.iloc[:, :6].to_numpy(dtype=object).tolist()
    if not rows:
        return None
    ms = tuple(sheet_numbers([r[i] for r in rows]) for i in (2, 4))
    counts = tuple(sheet_numbers([r[i] for r in rows]) for i in (3, 5))
    return step_wrappers([str(r[1]) for r in rows], ms, counts)  # type: ignore[arg-type]


def wrapper_text(found: tuple[str, float, str, float], what: str, unit: str, digits: int, table: str,
                 details_off: bool = False, mapped: bool = False) -> str:
    """The wrapper note's sentence for ``step_wrappers``' finding: ``what`` lies under the two wrappers (figures
    in ``unit`` to ``digits`` decimals), so ``table`` compares the two, not the ops inside; --op_name_map pairs
    the names, and --max_kernel_num drills into the pair (the operator pairing, which the memory sheets share).
    ``details_off`` (a --disable_details run, which pairs no operator, so both options change nothing) adds that
    the advice needs a run without it. ``mapped``: the run's --op_name_map pairs the two already (the statistic
    sheets keep a row per name all the same), so only --max_kernel_num is left to give: advising the entry the
    user gave read as if it had not been taken."""
    nb, vb, nc, vc = found
    advice = ("--op_name_map pairs them already: to compare inside, pass --max_kernel_num 10" if mapped else
              f"to pair them and compare inside, give --op_name_map the entry {nb!r}: {nc!r} (beside any it holds) "
              "and pass --max_kernel_num 10")
    return (f"each side's {what} lies under one top-level op that the other side has no op of "
            f"(base {nb} {vb:.{digits}f} {unit}, comparison {nc} {vc:.{digits}f} {unit}; an annotation around the "
            f"step, named after its batch, is one), so {table} compares these two, not the ops inside them: "
            + advice + (" in a run without --disable_details (which pairs no operator, so neither option changes "
                        "a sheet)" if details_off else ""))


def split_wrapper_pair(contrib: pd.DataFrame, op_name_map: Mapping[str, str]) -> None:
    """Where the contributors' wrappers (``attrs["wrappers"]``) are one name under ``op_name_map``, mark them so
    (``attrs["wrappers_mapped"]``: the wrapper note then asks for --max_kernel_num alone) and drop their group from
    ``attrs["mapped"]``: the wrapper note gives both figures, and a second sentence on the same two names, with the
    same figures, only repeated them."""
    found = contrib.attrs.get("wrappers")
    if not found or not op_name_map:
        return
    nb, nc = found[0], found[2]
    if op_name_map.get(nb, nb) != op_name_map.get(nc, nc):
        return
    contrib.attrs["wrappers_mapped"] = True
    groups = [g for g in contrib.attrs.get("mapped", []) if set(g[0]) != {nb, nc}]
    if groups:
        contrib.attrs["mapped"] = groups
    else:
        contrib.attrs.pop("mapped", None)


def wrapper_note(contrib: pd.DataFrame | None) -> str:
    """Say where the operator-level contributors are two wrappers (``_step_wrappers``, kept in the contributors'
    ``attrs["wrappers"]``): their table then shows one side's step appearing and the other's vanishing, which
    says nothing of the ops inside; --op_name_map pairs the two names, and --max_kernel_num drills into a pair.
    "" otherwise."""
    return pair_notes(contrib, "operator device time", "ms", 3, "the operator level")[0]


def mark_pairs(ctx: RunContext, contrib: pd.DataFrame, rows: tuple[list[str], np.ndarray, np.ndarray] | None,
               wrappers: tuple[str, float, str, float] | None) -> None:
    """Set the contributors' attrs that ``pair_notes`` reads, for the time and the memory contributors alike:
    ``mapped`` (``mapped_names`` of the statistic ``rows``: names, base and comparison figures), ``wrappers``
    (``step_wrappers``' finding) with ``details_off``, then ``split_wrapper_pair``, which reads ``mapped``."""
    name_map = paired_names_map(ctx)
    mapped = mapped_names(*rows, contrib, name_map, 6) if rows is not None else []
    if mapped:
        contrib.attrs["mapped"] = mapped
    if wrappers is not None:
        contrib.attrs["wrappers"] = wrappers
        contrib.attrs["details_off"] = ctx.options.disable_details
        split_wrapper_pair(contrib, name_map)


def pair_notes(contrib: pd.DataFrame | None, what: str, unit: str, digits: int, table: str) -> tuple[str, str]:
    """(the wrapper note, the --op_name_map note) of contributors marked by ``mark_pairs``, each "" where it does
    not apply: the time and the memory contributors word them alike, with their own figures (``wrapper_text``'s
    ``what``, ``unit``, ``digits``, ``table``)."""
    if contrib is None or not len(contrib):
        return "", ""
    found, mapped = contrib.attrs.get("wrappers"), contrib.attrs.get("mapped")
    wrapper = wrapper_text(found, what, unit, digits, table, bool(contrib.attrs.get("details_off")),
                           bool(contrib.attrs.get("wrappers_mapped"))) if found else ""
    return wrapper, name_map_text(mapped, unit, digits) if mapped else ""


#: A contributor is said to hold communication where its communication changed by this share of its diff or more.
COMM_SHARE = 0.5
#: What the communication inside an operator is, by the kinds of the sides that hold some (the frame
#: "contributor_communication"'s ``attrs["kinds"]``: each side's kind; a side with a figure holds some).
COMM_HELD = {
    "": "HCCL ops, which an NPU text export links to the operator that launched them",
    "GPU": "collective kernels (NCCL / RCCL), which the trace's launch flows link to the operator that launched them",
    "GPU+NPU": "HCCL ops and collective kernels (NCCL / RCCL), which an NPU text export and a GPU trace's launch flows "
               "link to the operator that launched them",
}


def communication_note(contrib: pd.DataFrame | None, comm: pd.DataFrame | None) -> str:
    """Name the listed operator contributors whose change is mostly collective communication launched inside
    them: an NPU text export links each HCCL op to the operator that launched it (an all-reduce under
    ``AccumulateGrad``'s DDP hook), so such an operator's device time holds the collective, which the waterfall
    counts as communication (uncovered where no computing overlaps it), not as the operator's computing. ""
    where none does."""
    if contrib is None or not len(contrib) or comm is None or not len(comm):
        return ""
    held = dict(zip(comm["Name"].tolist(), zip(comm["Base(ms)"].tolist(), comm["Comparison(ms)"].tolist(),
                                               strict=True), strict=True))
    kinds = comm.attrs.get("kinds", ("NPU", "NPU"))  # each side's kind, GPU or NPU
    holds = comm.attrs.get("held", (True, True))  # whether each side holds collective communication at all
    said: list[tuple[str, str]] = []
    for name, diff in zip(contrib["Name"].tolist(), contrib["Diff(ms)"].tolist(), strict=True):
        if name not in held:
            continue
        b, c = held[name]
        # a side that links no collective to an operator (a DB export, a GPU trace of one rank) has no figure: the
        # whole of the other side's communication is then inside this contributor's change only
        if diff and ((0.0 if pd.isna(c) else c) - (0.0 if pd.isna(b) else b)) / diff >= COMM_SHARE:
            said.append((name, _communication_figures(b, c, kinds, holds)))
    if not said:
        return ""
    # the kinds of communication the figures hold: a GPU trace without collective kernels reads 0 ms and holds none
    recorded = {k for k, col, h in zip(kinds, ("Base(ms)", "Comparison(ms)"), holds, strict=True)
                if h and comm[col].notna().any()}
    why = f"({COMM_HELD['GPU+NPU' if len(recorded) == 2 else 'GPU' if recorded == {'GPU'} else '']}; the waterfall " \
          "counts them as communication, not computing)"
    if len(said) == 1:
        return f"most of the change of {said[0][0]} is collective communication launched inside it {why}: {said[0][1]}"
    return (f"most of the change of {len(said)} listed contributors is collective communication launched inside "
            f"them {why}: " + ", ".join(f"{n}: {s}" for n, s in said))


#: Why a GPU side's communication inside an operator is null: its collective kernels are linked to no operator.
GPU_UNRECORDED = "its trace's launch flows link none of its collective kernels to an operator"
#: Why a GPU side's communication inside an operator is 0 ms, a reading: it ran none.
GPU_NO_COLLECTIVES = "trace holds no NCCL / RCCL or other collective kernel"


def _communication_figures(base: float, comparison: float, kinds: tuple[str, str] = ("NPU", "NPU"),
                           held: tuple[bool, bool] = (True, True)) -> str:
    """"communication 1.000 ms -> 2.000 ms", or with "not recorded" (as the communication line says it) for a side
    whose figure is null: it links no collective to an operator, so its 0 would read as a fall of the communication
    that its own CommunicationCompare column shows. The reason names what that side lacks, by its own kind: an
    NPU export links no HCCL op (a DB export), a GPU trace links none (no launch flows); a GPU side beside an NPU
    side was said to link no HCCL op, which no GPU trace has. A GPU trace without any collective kernel (one rank)
    ran no communication: its 0 ms is a reading, as the communication line says, and the reason is given."""
    if not pd.isna(base) and not pd.isna(comparison):
        text = f"communication {base:.3f} ms -> {comparison:.3f} ms"
        none = [side for side, k, h in zip(("base", "comparison"), kinds, held, strict=True) if k == "GPU" and not h]
        return text + (f" (the {none[0]} side's {GPU_NO_COLLECTIVES})" if len(none) == 1 else "")
    sides = ", ".join(f"{side} {'not recorded' if pd.isna(v) else f'{v:.3f} ms'}"
                      for side, v in (("base", base), ("comparison", comparison)))
    side = 0 if pd.isna(base) else 1
    why = GPU_UNRECORDED if kinds[side] == "GPU" else "its export links no HCCL op to an operator"
    return f"communication: {sides} ({why})"


def _unexplained(contrib: pd.DataFrame | None, wf: pd.DataFrame | None) -> str:
    """Where the operators (modules, kernels) together explain under half of the E2E change, say so: their
    device time holds no free time, and in a DB export no communication, so ranking them would point at
    a few µs of an 8 ms regression. Where they changed by twice the E2E change or more, say that too: a
    contributor of -106 ms beside an E2E change of -7.4 ms is no explanation of it either. The waterfall
    ``wf`` holds the E2E change (its end row) and names the steps that hold the rest; without one (a side has
    no E2E time, so the E2E change is not a change of time) there is no note. "" otherwise."""
    if contrib is None or not len(contrib) or wf is None or not len(wf):
        return ""
    e2e_delta_ns = int(wf["Delta(ns)"].iloc[-1])  # the "Comparison E2E" row: comparison E2E - base E2E
    if not e2e_delta_ns:
        return ""
    level = str(contrib["Level"].iloc[0])
    if level == "category":  # the waterfall steps themselves: they are the E2E change
        return ""
    net, e2e = level_net_ms(contrib), e2e_delta_ns / 1e6
    note = _net_note(level, net, e2e, wf, e2e_delta_ns)
    return note + _shares_basis(contrib, net) if note else ""


def _net_note(level: str, net: float, e2e: float, wf: pd.DataFrame, e2e_delta_ns: int) -> str:
    """``_unexplained``'s sentence on the net change of the level's rows against the E2E change ("" for none)."""
    shown = f"{_ms3(e2e_delta_ns):+.3f} ms"  # the verdict's figure: ``e2e`` by its float read +0.004 of 4.5 us
    moved = f"{half_up(net, 3):+.3f} ms"  # as the tables: a net of -100 ns read "-0.000 ms"
    if net / e2e >= OVERSTATED_SHARE:  # a text export against a DB export: -106 ms of operators, -7.4 ms of E2E
        return (f"all {level}s together changed by {moved}, {net / e2e:.1f}x the E2E change ({shown}): "
                "their device time moved much more than the E2E time, as where it overlaps other work or the two "
                "sides record it differently (see the validity checks); the waterfall shows where the E2E change is")
    if net / e2e >= EXPLAINED_SHARE:
        return ""
    named, most, rest = _outside_steps(wf, e2e_delta_ns)
    if rest is not None:
        why = f"the waterfall puts all of it in {named}" + (
            f"; other steps moved {_ms3(rest):+.3f} ms the other way" if _ms3(rest) else "")
    elif most:
        why = f"the waterfall puts most of it in {named}"
    elif named:
        why = f"the waterfall puts part of it in {named}; see the waterfall for the rest"
    else:
        why = "free time, communication, or kernels not linked to them; see the waterfall"
    if net / e2e < 0:  # the other way: a share (-7982 % on text vs DB) would say nothing
        head = f"all {level}s together changed by {moved}, against an E2E change of {shown}: "
        if -net / e2e >= OVERSTATED_SHARE:
            # text vs DB, level 1 rank 0: -106.827 ms of operators against +1.338 ms of E2E read only "the E2E change
            # is outside their device time", as if those 106 ms had not moved
            return head + (f"their device time moved the other way, {-net / e2e:.1f}x as much, as where it overlaps "
                           "other work or the two sides record it differently (see the validity checks), and the E2E "
                           f"change is outside it ({why})")
        return head + f"the E2E change is outside their device time ({why})"
    pct = round(net / e2e * 100)  # a change that rounds to 0 % is no 0 % beside a figure that is not 0
    share = "under 1%" if net and not pct else f"{pct}%"
    return (f"all {level}s together changed by {moved}, {share} of the E2E change ({shown}): "
            f"most of it is outside their device time ({why})")


#: From this ratio of the slower side's E2E time to the faster one's, the verdict says "N x as long" too.
VERDICT_RATIO = 2.0


def idle_aside(guards: pd.DataFrame | None) -> str:
    """Where the "longest idle stretch" note says the E2E difference is mostly the two sides' longest stretches
    with no computing and no communication, that in the verdict's words, else "". The verdict alone read "the base
    takes 94.60x as long" of PARAM AlexNet's 12.9 s profile, 10.9 s of it one idle stretch, against an NPU step
    whose Computing Time is about the same; the note saying so was a log line above the tables."""
    return IDLE_ASIDE if guards is not None and guards.attrs.get(checks.IDLE_EXPLAINS) else ""


#: ``idle_aside``'s words
IDLE_ASIDE = ("most of that difference is time with no computing and no communication (validity check: longest idle "
              "stretch), so compare Computing Time and its categories")


def e2e_words(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> tuple[str, str]:
    """``e2e_verdict``'s ``scope`` and ``aside`` (the gate's line says the same), the aside read once: what a DB
    export's E2E holds that a text export's leaves out (``export_aside``), a DB step's range change
    (``e2e_aside``), then an idle stretch that makes most of the difference (``idle_aside``)."""
    aside = e2e_aside(ctx, e2e)
    idle = idle_aside(getattr(ctx, "frames", {}).get("guards"))
    return e2e_scope(ctx, e2e, bool(aside)), "; ".join(a for a in (export_aside(ctx, e2e), aside, idle) if a)


def export_aside(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> str:
    """Where a text export meets a DB export, what the DB side's E2E holds that the text side's would not (its
    non-kernel tasks outside its computing and communication: a MEMCPY_ASYNC ~5 ms before the first kernel in
    the torch_npu samples, which can turn a faster run into a "slower" verdict), else "". Said after the
    verdict's figures: inside the parentheses after "E2E time" its ~150 characters (~230 with a step's scope)
    stood between the words and their figures."""
    sources = {"base": getattr(ctx.base, "source", None), "comparison": getattr(ctx.comparison, "source", None)}
    if {sources["base"], sources["comparison"]} != {"ascend_db", "ascend_text"} or e2e is None or not len(e2e):
        return ""
    side = "base" if sources["base"] == "ascend_db" else "comparison"
    outside = int(e2e[f"{side}_outside_busy_ns"].iloc[0])
    if outside <= 0:
        return ""
    return (f"the {side} side's E2E, a DB export's, holds {_ms3(outside):.3f} ms of device tasks outside its computing "
            "and communication, which a text export's leaves out")


def e2e_scope(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None = None, range_aside: bool = False) -> str:
    """" (whole profile on ...)" where a step was asked of a text export, whose E2E time ignores it; where a DB
    step's ProfilerStep range changed outside its E2E (``range_aside``: ``e2e_aside`` says so after the figures),
    that the E2E is the step's device tasks' span; else "". (What a DB export's E2E holds beside a text export's
    is ``export_aside``, after the figures.)"""
    parts = []
    whole = checks.whole_profile_sides(ctx)
    if whole:
        sides = "both sides" if len(whole) > 1 else f"the {whole[0]} side"
        parts.append(f"whole profile on {sides}: a text export's E2E ignores the step")
    if range_aside:
        parts.append("the step's device tasks' span")
    return f" ({'; '.join(parts)})" if parts else ""


#: The least change of a DB step's ProfilerStep range (ns) that ``e2e_aside`` weighs against its E2E.
STEP_RANGE_NOTE_NS = 50_000


def e2e_aside(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> str:
    """Where both sides are DB exports given a step: the change of the step's ProfilerStep range (STEP_TIME) when
    its E2E time (the step's device tasks' span, reference-1 §7.3 6) shows under half of it, else "". A host late
    before the step's first device task (or after its last) lengthens the step but no task span: the verdict read
    "as fast as the base" of a step 0.5 ms longer, which the whole profile's E2E showed. A range shrunk apart
    from the span reads "quicker": DB level-0 rank 1 -> level-2 rank 0 at step 50, -0.669 ms outside it. Said
    after the verdict's figures (``e2e_verdict``, the gate's line): inside the parentheses after "E2E time" its
    ~250 characters stood between the words and their figures."""
    if e2e is None or not len(e2e):
        return ""
    spans = []
    for p in (ctx.base, ctx.comparison):
        rng = getattr(p, "extra", {}).get("step_range") if getattr(p, "source", None) == "ascend_db" else None
        if not rng:
            return ""
        spans.append(int(rng[1]) - int(rng[0]))
    step_delta = spans[1] - spans[0]
    outside = step_delta - int(e2e["comparison_ns"].iloc[0]) + int(e2e["base_ns"].iloc[0])
    # the part outside the span moved the range's way by over half of it: an E2E that moved more than the range
    # (tasks running on past its end) is no host's doing
    if abs(step_delta) < STEP_RANGE_NOTE_NS or 2 * outside * (1 if step_delta > 0 else -1) <= abs(step_delta):
        return ""
    # "the time outside", not "of which": where the E2E moved the other way, that time exceeds the range's change;
    # ms as the verdict's figures it follows (no thousands separator)
    return (f"its ProfilerStep range took {_ms3(spans[0]):.3f} ms -> "
            f"{_ms3(spans[1]):.3f} ms, {_ms3(step_delta):+.3f} ms, and its time outside that span (before its "
            f"first or after its last device task) changed by {_ms3(outside):+.3f} ms, as where the host was "
            f"{'late' if outside > 0 else 'quicker'}")


def e2e_verdict(wf: pd.DataFrame | None, scope: str = "", aside: str = "") -> str:
    """Which side is slower and by how much, in words ("" without a waterfall): the waterfall's end rows give
    only numbers, and "Comparison E2E ... +124.808" does not say at a glance that the comparison is the slow
    side, nor that it takes 11.6 times as long. ``scope``: ``e2e_scope``'s text; ``aside``: ``e2e_aside``'s,
    after the figures."""
    if wf is None or not len(wf):
        return ""
    after = f"; {aside}" if aside else ""
    base, comp = int(wf["Base(ns)"].iloc[0]), int(wf["Comparison(ns)"].iloc[-1])
    if base == comp:
        return f"E2E time{scope} {_ms3(base):.3f} ms on both sides: the comparison is as fast as the base{after}"
    diff = comp - base
    text = (f"E2E time{scope} {_ms3(base):.3f} ms -> {_ms3(comp):.3f} ms ({_ms3(diff):+.3f} ms, "
            f"{diff / base * 100:+.2f}%): the comparison is {'slower' if diff > 0 else 'faster'} than the base")
    ratio = max(base, comp) / min(base, comp)
    if ratio >= VERDICT_RATIO:
        text += f", {'it' if diff > 0 else 'the base'} takes {ratio:.2f}x as long"
    return text + after


def top_contributors(rows: pd.DataFrame, level: str, coverage: float = CONTRIBUTOR_COVERAGE) -> pd.DataFrame:
    """The rows whose diffs explain ``coverage`` of the total absolute change, largest first.

    Share = |diff| / sum(|diff|) (the gross change, so regressions and
    improvements never cancel and shares are in [0, 1]); "Share of Net Diff"
    is diff / sum(diff), signed (null when the net change is 0).
    """
    b = col_of(rows, "Base(ms)", float)
    c = col_of(rows, "Comparison(ms)", float)
    # times are whole ns: the difference of two ms floats, rounded to the ns, drops the subtraction's noise
    # (-0.02346799999999999 for -0.023468) and a difference that is only noise
    diff = np.round(c - b, 6)
    pick, share, cum = coverage_cut(diff, coverage)
    if not pick.size:
        return pd.DataFrame({col: pd.Series(dtype=object) for col in CONTRIBUTOR_COLUMNS})
    # the diffs are whole ns, so is their net: a net of 0 ns summed in floats is noise (-2.8e-17), over which
    # each diff became a "share" of +-4.6e15; rounded to the ns it is 0 and the shares null, as documented
    net = float(diff.sum())
    net_zero = not round(net, 6)
    n = len(pick)
    d = diff[pick]
    return plain_frame({
        "Rank": np.arange(1, n + 1), "Level": [level] * n,
        "Name": col_of(rows, "Name", object)[pick], "Base(ms)": b[pick], "Comparison(ms)": c[pick],
        "Diff(ms)": d, "Share": share, "Cumulative Share": cum,
        "Share of Net Diff": [None] * n if net_zero else d / net,
    }, CONTRIBUTOR_COLUMNS)


def coverage_cut(diff: np.ndarray, coverage: float = CONTRIBUTOR_COVERAGE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, shares, cumulative shares) of the fewest rows whose absolute ``diff`` reach ``coverage`` of the
    summed absolute change, largest first; rows of equal absolute diff keep their order (the sheet's). Share is
    |diff| / sum(|diff|): the gross change, so regressions and improvements never cancel. Empty when no diff is
    non-zero. The time and the memory contributors are cut alike."""
    keep = np.flatnonzero(np.abs(diff) > 0)
    if not keep.size:
        return keep, np.empty(0), np.empty(0)
    d = np.abs(diff[keep])
    order = np.argsort(-d, kind="stable")
    share = d[order] / float(d.sum())
    cum = np.cumsum(share)
    n = int(np.searchsorted(cum, coverage - 1e-12) + 1)  # first prefix reaching the coverage
    return keep[order[:n]], share[:n], cum[:n]


def coverage_frame(names: np.ndarray, base: np.ndarray, comparison: np.ndarray, diff: np.ndarray,
                   columns: list[str]) -> pd.DataFrame:
    """The rows of a sheet that ``coverage_cut`` keeps, as a contributors frame of ``columns`` (rank, name, base,
    comparison, diff, share, cumulative share, in that order; empty when no ``diff`` is non-zero): the memory and
    the communication contributors. ``diff`` may be empty (no contributor, e.g. a side not recorded)."""
    pick, share, cum = coverage_cut(diff)
    if not pick.size:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    rank, name, b, c, d, s, cs = columns
    return plain_frame({
        rank: np.arange(1, len(pick) + 1), name: np.array([str(n) for n in names[pick]], dtype=object),
        b: base[pick], c: comparison[pick], d: diff[pick], s: share, cs: cum}, columns)


def _step_mask(wf: pd.DataFrame) -> np.ndarray:
    """The waterfall's steps: every row but the two E2E rows."""
    return np.isin(col_of(wf, "Category", object), ["start", "end"], invert=True)


def _steps_changed(wf: pd.DataFrame) -> bool:
    """Whether some waterfall step changed."""
    return bool(len(wf)) and bool((wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)[_step_mask(wf)] != 0).any())


def _waterfall_contributors(wf: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """Fallback when no statistic sheet exists: every waterfall step (computing categories, communication,
    free time), so the shares are of the waterfall steps' change, as the title says."""
    step = _step_mask(wf)
    return "category", plain_frame({
        "Name": col_of(wf, "Step", object)[step],
        "Base(ms)": wf["Base(ms)"].to_numpy(dtype=float, na_value=np.nan)[step],
        "Comparison(ms)": wf["Comparison(ms)"].to_numpy(dtype=float, na_value=np.nan)[step]})


# --------------------------------------------------------------------------- the comparator

@dataclass(repr=False)  # Sheet's short repr, not one that prints every frame
class SummarySheet(Sheet):
    """The ``Summary`` sheet: the waterfall table plus the frames its chart hook writes beside it."""

    waterfall: pd.DataFrame = field(default_factory=pd.DataFrame)
    contributors: pd.DataFrame = field(default_factory=pd.DataFrame)
    guards: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: ``e2e_verdict``'s sentence, written under the waterfall table
    verdict: str = ""
    #: operator-level contributors on no sheet (the workbook shows the module sheets), said under their table
    outside_modules: list[str] = field(default_factory=list)
    #: of those, the ones with modules run inside them: name -> [(side, ms the module rows hold, its ms)]
    outside_held: dict[str, list[tuple[str, float, float]]] = field(default_factory=dict)
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


#: The contributors of each table the console shows, and the module contributors the Summary sheet shows (every
#: row stays in its statistic sheet, the JSON and the API).
CONSOLE_TOP = 10


def shown_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The first ``CONSOLE_TOP`` rows of a contributors frame and the words its title adds where rows are left
    out ("; the first 10 shown", else ""): the console's and the sheet's tables say it alike."""
    shown = frame.head(CONSOLE_TOP)
    return shown, f"; the first {len(shown)} shown" if len(shown) < len(frame) else ""


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
    return wf["Step"].tolist() + (contrib["Name"].tolist() if len(contrib) else []) + \
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
                        verdict=e2e_verdict(wf, *e2e_words(ctx, ctx.frames.get("e2e"))))


def _waterfall_of(pair: tuple[Breakdown, Breakdown] | None) -> pd.DataFrame:
    """The waterfall of two breakdowns; empty without them or where a side has no E2E time (no Overlap
    Analysis lane, no device activity): OverallMetrics is left out then (reference-1 §9.1), and a waterfall
    from or to 0 would show an invented change."""
    if pair is None or not (pair[0].e2e_ns and pair[1].e2e_ns):
        return pd.DataFrame(columns=WATERFALL_COLUMNS)
    return waterfall(*pair)


def build(ctx: RunContext, sheets: list[Sheet] | None = None) -> list[Sheet]:
    """Fill ``ctx.frames`` with waterfall / contributors / module contributors / guards and return the Summary sheet.

    ``sheets`` are the sheets the other comparators produced (the contributors
    are read from them); the API passes them, since this comparator runs last.
    """
    pair = overall.find_breakdowns(ctx)
    if pair is None and ctx.options.fail_on_regression is not None:  # the gate needs the E2E times
        pair = overall.breakdowns(ctx)  # cached: the guards' idle-stretch check reads it too
    op_rows = None
    if len(ctx.base.ops) and len(ctx.comparison.ops):
        op_rows = _operator_statistic(ctx, sheets or [])
        found = _level_rows(sheets or [], op_rows)
    else:  # no operators on one side (MindSpore data): every operator of the other would "change"
        found = _level_rows([s for s in sheets or [] if s.name in ("KernelCompare", "KernelTypeCompare")])
    guard = checks.guards(ctx, op_rows, sheets or [])
    ctx.frames["guards"] = guard
    checks.log_guards(guard)

    if pair is not None:
        ctx.frames["e2e"] = e2e_frame(*pair)
    wf = _waterfall_of(pair)
    ctx.frames["waterfall"] = wf
    if found is None and len(wf):
        found = _waterfall_contributors(wf)
    contrib = top_contributors(found[1], found[0]) if found is not None else top_contributors(
        pd.DataFrame({"Name": [], "Base(ms)": [], "Comparison(ms)": []}), "")
    if not len(contrib) and found is not None and found[0] != "category" and _steps_changed(wf):
        # every row of the level unchanged, e.g. operators without device time in a trace without launch
        # flows: the table would vanish without a word, so the waterfall steps stand in, as in the gate
        whole = checks.whole_profile_sides(ctx)
        if whole:  # the step's rows are unchanged, the whole-profile breakdown is not: the change is elsewhere
            why = (f"no {found[0]} of the step asked for changed its device time, but the time breakdown of "
                   f"{'both sides' if len(whole) > 1 else f'the {whole[0]} side'} covers the whole profile (a text "
                   "export's ignores the step), so its change lies outside that step; the contributors are the "
                   "waterfall steps, of the whole profile")
        else:
            why = (f"no {found[0]} changed its device time ({_unchanged_why(found[1], wf)}); the contributors are the "
                   "waterfall steps")
        contrib = top_contributors(*reversed(_waterfall_contributors(wf)))
        # said under the table (console, JSON, Summary sheet, gate), where the reader of the steps looks: an INFO
        # line on stderr alone left the JSON and the workbook with steps in place of operators and no word why
        contrib.attrs["fallback"] = why
    if len(contrib) and str(contrib["Level"].iloc[0]) == "kernel type":
        steps = {"base": ctx.options.base_step, "comparison": ctx.options.comparison_step}
        unstepped = [(side, steps[side]) for side in checks.whole_profile_sides(ctx)]  # text sides given a step
        if unstepped:
            contrib.attrs["all_steps"] = unstepped
            if len(unstepped) == 1:  # the other side's step, which its DB export applies
                contrib.attrs["other_step"] = steps["comparison" if unstepped[0][0] == "base" else "base"]
    if len(contrib) and str(contrib["Level"].iloc[0]) == "operator":
        rows = found[1] if found is not None else None
        mark_pairs(ctx, contrib, None if rows is None else (
            rows["Name"].tolist(), rows["Base(ms)"].to_numpy(np.float64), rows["Comparison(ms)"].to_numpy(np.float64)),
            _step_wrappers(op_rows, sheets or []))
    ctx.frames["contributors"] = contrib
    comm = _contributor_communication(ctx, contrib)
    if comm is not None:
        ctx.frames["contributor_communication"] = comm
    from . import communication_summary, memory_summary  # where they grew, in a communication- or memory-only run too

    communication_summary.build(ctx, sheets or [])
    memory_summary.build(ctx, sheets or [])
    outside: list[str] = []
    outside_held: dict[str, list[tuple[str, float, float]]] = {}
    if op_rows is not None and sheets:
        outside = _outside_modules(contrib, sheets)
        own = _own_module_rows(contrib, sheets)
        held = _held_inside(ctx, contrib, outside + list(own))
        outside_held = {n: f for n, f in held.items() if n in outside}
        modules = _module_contributors(ctx, contrib, sheets, outside_held | _around_modules(own, held))
        if modules is None:
            modules = _module_rows_of(contrib, sheets)
        if modules is not None:
            ctx.frames["module_contributors"] = modules
    if not len(wf) or not sheets:  # alone, a Summary would turn a run without any sheet into a workbook
        return []
    sheet = summary_sheet(ctx, wf, contrib, guard)
    sheet.communication = comm
    sheet.outside_modules, sheet.outside_held = outside, outside_held
    sheet.module_contributors = ctx.frames.get("module_contributors")
    sheet.communication_contributors = ctx.frames.get("communication_contributors")
    sheet.communication_totals = ctx.frames.get("communication")
    sheet.memory_contributors = ctx.frames.get("memory_contributors")
    sheet.memory_totals = ctx.frames.get("memory")
    return [sheet]


def _contributor_communication(ctx: RunContext, contrib: pd.DataFrame) -> pd.DataFrame | None:
    """Per listed operator contributor, each side's device time (ms) that is collective communication: the HCCL
    ops of an NPU text export that the operator's subtree owns (the kernel pool's rows without a task id, -2),
    summed over the top-layer operators of that name as OperatorCompareStatistic sums them. None where the
    contributors are no operators, or no listed one holds any."""
    if not len(contrib) or str(contrib["Level"].iloc[0]) != "operator" or not ctx.options.enable_operator_compare:
        return None
    kw = ctx.keywords  # None where the run read no keyword lists: NCCL / RCCL kernels only (no config file read)
    held = tuple(_has_collectives(p, kw) for p in (ctx.base, ctx.comparison))
    if not any(held):
        return None
    from .optree import operator_pairs

    pairs = operator_pairs(ctx)  # cached: the operator comparison built it
    names = contrib["Name"].tolist()
    trees = (pairs.base, pairs.comparison)
    per_side = [_communication_ns(tree, idx, names, kw)
                for tree, idx in zip(trees, (pairs.ia, pairs.ib), strict=True)]
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
    return frame


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


def _outside_modules(contrib: pd.DataFrame, sheets: list[Sheet]) -> list[str]:
    """Operator-level contributors that no row of ModuleCompareStatistic names: the module sheets hold only the
    operators inside modules (an all-reduce under AccumulateGrad is outside every one), so such a contributor is
    on no sheet of the workbook, and a reader looking for it needs to be told why."""
    stat = next((s for s in sheets if s.name == "ModuleCompareStatistic"), None)
    if stat is None or not len(contrib) or str(contrib["Level"].iloc[0]) != "operator":
        return []
    # "Operator Name", and "Module Class", which names the optimizer's pseudo-modules (Optimizer.step#SGD.step)
    listed = set(stat.data.iloc[:, 4].tolist()) | set(stat.data.iloc[:, 1].tolist())  # reference-2 §3.7
    return [n for n in contrib["Name"].tolist() if n not in listed]


def _own_module_rows(contrib: pd.DataFrame, sheets: list[Sheet]) -> dict[str, tuple[float, float]]:
    """Per operator-level contributor that ModuleCompareStatistic names as an operator, the (base, comparison)
    ms its own operator rows there hold (their Device Self Time, summed over the modules it is in)."""
    stat = next((s for s in sheets if s.name == "ModuleCompareStatistic"), None)
    if stat is None or not len(stat) or not len(contrib) or str(contrib["Level"].iloc[0]) != "operator":
        return {}
    d = stat.data  # reference-2 §3.7: Operator Name col 4, the two sides' Device Self Time(ms) cols 6 and 10
    names = d.iloc[:, 4].astype(str).to_numpy()
    base, comp = sheet_numbers(d.iloc[:, 6]), sheet_numbers(d.iloc[:, 10])
    out: dict[str, tuple[float, float]] = {}
    for name in contrib["Name"].tolist():
        rows = names == name
        if name != "[ TOTAL ]" and rows.any():
            out[name] = (float(np.nansum(base[rows])), float(np.nansum(comp[rows])))
    return out


def _around_modules(own: dict[str, tuple[float, float]], held: dict[str, list[tuple[str, float, float]]]
                    ) -> dict[str, list[tuple[str, float, float]]]:
    """Contributors on the module sheets whose own rows there hold less of their change than the rows of the
    modules run inside them: an op run around modules from within a module (DDP's ``DistributedDataParallel.forward``,
    in ``DistributedDataParallel_0``, around ``AlexNet_0``) keeps in its own row only the kernels it launched outside
    those modules (0 ms), so a reader sent to that row by the contributor found it unchanged (AlexNet, MaxPool2d's
    three kernels 30 us longer each: ``DistributedDataParallel.forward`` +0.090 ms, its row 0 -> 0). Returns name ->
    each side's (side, ms the rows of the modules inside it hold, its ms as listed).

    ``held`` counts the op's own rows too (a top-layer op is in its own subtree), so the modules' part is ``held``
    less ``own``: SGLang's ``utils_apply_qk_norm_487`` holds 3.390 ms in its own rows and 17.487 ms in the RMSNorm
    rows inside it, not 20.877. By the change, not the time: where its own rows hold the change, its row reads it."""
    out: dict[str, list[tuple[str, float, float]]] = {}
    for name, (own_b, own_c) in own.items():
        mine = {"base": own_b, "comparison": own_c}
        figures = [(side, round(h - mine[side], 6), t) for side, h, t in held.get(name, [])]
        inner = {side: h for side, h, _t in figures}
        # the change the module rows inside it hold against its own rows' (to the ns the sheets carry)
        moved = inner.get("comparison", 0.0) - inner.get("base", 0.0)
        if round(abs(moved) - abs(own_c - own_b), 6) > 0:
            out[name] = [f for f in figures if f[1] > 0]
    return out


def _held_inside(ctx: RunContext, contrib: pd.DataFrame, names: list[str]) -> dict[str, list[tuple[str, float, float]]]:
    """Per contributor of ``names`` (those outside every module, and those with rows of their own there, for
    ``_around_modules``) with modules run inside it, each side's (side, ms of its device time that the module rows
    hold, its ms as listed), on the sides that list it with some time: a step annotation around the model's forward
    (vLLM's ``execute_8192_context_9(...)``) is outside every module, yet the modules run inside it (the model,
    155.653 ms, and its logits processor) hold 156.000 of its 156.086 ms, so "outside every module" alone read as if
    that time were missing from the module sheets. The
    held time is the device time of the module top-layer ops (``ModuleTrees.top_ns``, the module rows' time)
    inside the subtrees of the ops of that name."""
    if not names:
        return {}
    from .modules import module_trees

    listed = {n: (b, c) for n, b, c in zip(contrib["Name"].tolist(), contrib["Base(ms)"].tolist(),
                                           contrib["Comparison(ms)"].tolist(), strict=True)}
    out: dict[str, list[tuple[str, float, float]]] = {}
    for i, side in enumerate(("base", "comparison")):
        trees = module_trees(ctx, side)
        if trees is None or not len(trees.top_node):
            continue
        tree = trees.tree
        op_names = tree.names
        for name in names:
            nodes = np.flatnonzero(op_names == name)
            # a side where it is listed with no time has it, if at all, only nested in another operator (xDiT's
            # SD 3.5 trace: execute_diffusion_1_256x256 inside model_inference, the same span), whose row holds
            # that time: its modules' rows there are no part of its time ("711.696 of its 0.000 ms")
            if not len(nodes) or not listed[name][i]:
                continue
            held = int(trees.top_ns[_subtrees(tree, nodes)[trees.top_node]].sum())
            if held:
                out.setdefault(name, []).append((side, held / 1e6, float(listed[name][i])))
    return out


def _subtrees(tree: Any, nodes: np.ndarray) -> np.ndarray:
    """Per op-tree node, whether it is in the subtree of one of ``nodes`` (one nested in another counts once)."""
    edge = np.zeros(tree.n + 1, np.int64)
    np.add.at(edge, nodes, 1)
    np.add.at(edge, nodes + tree.size[nodes], -1)
    return np.cumsum(edge)[:-1] > 0


def _rows_run_by(ctx: RunContext, runners: list[str]) -> set[str]:
    """The ModuleCompareStatistic operator rows ("module path > operator", as ``_level_rows`` names them) of the
    top-layer ops inside the ops named ``runners``, on either side: the rows of the modules they run. Ranking
    every module row put rows no runner runs into their table (DB level2 -> level1: the optimizer's
    ``/Optimizer.step#SGD.step > aten::_foreach_add`` under ``DistributedDataParallel.forward`` and the backward
    ops that run modules), so the table answered no question the lead asks."""
    from .modules import display_name, module_trees

    out: set[str] = set()
    for side in ("base", "comparison"):
        trees = module_trees(ctx, side)
        if trees is None or not len(trees.top_node):
            continue
        nodes = np.flatnonzero(pd.Series(trees.tree.names, copy=False).isin(runners).to_numpy())  # hashed
        if not len(nodes):
            continue
        tops = np.flatnonzero(_subtrees(trees.tree, nodes)[trees.top_node])
        module, paths = trees.top_modules()
        op, op_names = factorize(trees.op_names[trees.top_node[tops]])
        # one name per (module, operator) pair, not per op: a 100 MB pair has ~10^5 top-layer ops inside them
        pair = np.unique(module[tops] * len(op_names) + op)
        out.update(f"{display_name(paths[p // len(op_names)]).strip()} > {op_names[p % len(op_names)]}"
                   for p in pair.tolist())
    return out


def _module_contributors(ctx: RunContext, contrib: pd.DataFrame, sheets: list[Sheet],
                         held: dict[str, list[tuple[str, float, float]]]) -> pd.DataFrame | None:
    """The module-operator rows of ModuleCompareStatistic that explain its change, when an operator-level
    contributor runs modules whose rows hold its time (None otherwise). Under DDP every forward regression has one
    operator-level contributor, ``DistributedDataParallel.forward`` (a top-layer op, reference-2 §2.3), and the
    console said no more: AlexNet with MaxPool2d's three forward kernels 30 us longer each read
    ``DistributedDataParallel.forward +0.090``, while the module rows say which three ops in which modules grew.
    Ranks the rows of the modules those contributors run (``_rows_run_by``). ``held``: those contributors
    (outside every module, ``_held_inside``; with a row of their own, ``_around_modules``) with their figures,
    kept in contributor order as ``attrs["runs_modules"]`` for the lead."""
    runners = [n for n in contrib["Name"].tolist() if n in held]
    if not runners:
        return None
    found = _level_rows([s for s in sheets if s.name == "ModuleCompareStatistic"])
    if found is None:
        return None
    rows = found[1]
    frame = top_contributors(rows[rows["Name"].isin(_rows_run_by(ctx, runners))].reset_index(drop=True), found[0])
    if not len(frame):
        return None
    frame.attrs["runs_modules"] = [(n, held[n]) for n in runners]
    return frame


#: A listed operator's module rows are ranked where one of them holds this share of their summed |change|.
LOCALIZED_SHARE = 0.5


def _module_rows_of(contrib: pd.DataFrame, sheets: list[Sheet]) -> pd.DataFrame | None:
    """Where no listed operator runs modules, the module-operator rows of ModuleCompareStatistic of the listed
    operators themselves (a top-layer op inside modules has a row per module it runs in) whose change one module
    row holds (``LOCALIZED_SHARE``), ranked by their change; None where there is none. A model without a wrapper
    around its forward (tracelens' H100 Qwen1.5 trace: one RMSNorm's aten::mean 20 us longer) read "aten::mean
    +0.020" alone, its 49 calls in 49 modules summed, and the console named no module. ``attrs["module_rows_of"]``:
    those operators, in contributor order, for the lead."""
    found = _level_rows([s for s in sheets if s.name == "ModuleCompareStatistic"])
    if found is None or found[0] != "module operator" or not len(contrib):
        return None
    rows = found[1]
    op = rows["Name"].astype(str).str.split(" > ", n=1).str[-1].to_numpy()
    diff = np.abs(np.round(col_of(rows, "Comparison(ms)", float) - col_of(rows, "Base(ms)", float), 6))
    diff = np.nan_to_num(diff)
    listed = []
    for name in contrib["Name"].tolist():
        mine = diff[op == name]
        # one module row holding most of the op's change: a change spread over every layer (one vendor against
        # another) names no module, and listing its rows said no more than the op's own row
        if len(mine) and mine.sum() and mine.max() >= LOCALIZED_SHARE * mine.sum():
            listed.append(name)
    if not listed:
        return None
    frame = top_contributors(rows[np.isin(op, listed)].reset_index(drop=True), found[0])
    if not len(frame):
        return None
    frame.attrs["module_rows_of"] = listed
    return frame


def module_contributors_note(frame: pd.DataFrame | None) -> str:
    """The sentence that introduces the module contributors: which listed operators run modules and how much of
    their time those modules' rows hold ("" without module contributors), and that the table ranks the module rows
    inside them (``_rows_run_by``)."""
    runners = frame.attrs.get("runs_modules") if frame is not None and len(frame) else None
    inside = frame.attrs.get("module_rows_of") if frame is not None and len(frame) else None
    if inside:
        names = short_list(inside, 3, escape=False)
        return (f"{names} run{'s' if len(inside) == 1 else ''} inside modules: the module contributors rank "
                f"{'its' if len(inside) == 1 else 'their'} module rows by their change")
    if not runners:
        return ""
    if len(runners) == 1:
        name, figures = runners[0]
        held = _held_figures(figures)
        # the figures after the name: "this much of the time (comparison 156.000 of its 156.086 ms) of <name>"
        # parted "the time" from its name by the figures, and a step annotation's name is 100 characters long
        share = f"all of the time of {name}" if held == "all of it" else f"part of the time of {name} ({held})"
        return (f"The module rows hold {share}, which runs modules: the module contributors rank the module rows "
                "inside it by their change")
    return (f"The module rows hold this much of the time of the operators that run modules: {_held_list(runners)}; "
            "the module contributors rank the module rows inside them by their change")


def _held_list(named: list[tuple[str, list[tuple[str, float, float]]]]) -> str:
    """"a (all of it), b (base 0.560 of its 0.613 ms), ... (5 in all)": the first three operators with
    ``_held_figures``, as the module contributors' lead and the row on those outside every module name them."""
    return short_list([f"{n} ({_held_figures(f)})" for n, f in named], 3, escape=False)


def _held_figures(figures: list[tuple[str, float, float]]) -> str:
    """"all of it", or each side's "base 0.560 of its 0.613 ms" where the module rows hold less (to 0.001 ms)."""
    # ">=": the module rows hand kernels out by launch time and the op tree by flow, so they could differ by a hair
    if all(round(h, 3) >= round(t, 3) for _, h, t in figures):
        return "all of it"
    return ", ".join(f"{side} {h:.3f} of its {t:.3f} ms" for side, h, t in figures)


def outside_modules_line(outside: list[str], held: dict[str, list[tuple[str, float, float]]]) -> str:
    """The Summary sheet's row under the contributors on the ones no module row names ("" for none). Those
    outside every module whose time is on no module row (an all-reduce under AccumulateGrad) are only in
    OperatorCompareStatistic (``--disable_module``); those run around modules (a step annotation around the
    model's forward, a backward op around its backward module) are named apart, with how much of their time the
    module rows hold: "outside every module" alone read as if that time were missing from the module sheets.
    Where the module contributors open such a contributor up, their lead says that instead (the caller leaves it
    out here); those run around modules from inside one always are (``_around_modules``)."""
    missing = [n for n in outside if n not in held]
    around = [n for n in outside if n in held]
    parts = []
    if missing:
        one = len(missing) == 1
        parts.append(f"Not on the module sheets: {short_list(missing, 3)} ({'it is' if one else 'they are'} outside "
                     "every module)")
    if around:
        its = "its" if len(around) == 1 else "their"
        parts.append(f"{'o' if parts else 'O'}utside every module but run around modules, whose rows hold this much "
                     f"of {its} time: {_held_list([(term_safe(n), held[n]) for n in around])}")
    if not parts:
        return ""
    return "; ".join(parts) + "; --disable_module writes every operator's row (OperatorCompareStatistic)."


# --------------------------------------------------------------------------- CI gate

def e2e_frame(base: Breakdown, comparison: Breakdown) -> pd.DataFrame:
    """The result frame "e2e": both sides' E2E time in ns (0 where a side has none), and the part of each that
    lies outside its computing and communication (a DB export's non-kernel tasks, ``Breakdown.outside_busy_ns``:
    ``e2e_scope`` says it beside a text export)."""
    return plain_frame({"base_ns": [int(base.e2e_ns)], "comparison_ns": [int(comparison.e2e_ns)],
                        "base_outside_busy_ns": [int(base.outside_busy_ns)],
                        "comparison_outside_busy_ns": [int(comparison.outside_busy_ns)]})


def e2e_ns(result: CompareResult, e2e: pd.DataFrame | None = None) -> tuple[int, int] | None:
    """(base, comparison) E2E in ns (of ``e2e``, else of the result's frame), None when no time breakdown
    was made."""
    e2e = result.frames.get("e2e") if e2e is None else e2e
    if e2e is None or not len(e2e):
        return None
    return int(e2e["base_ns"].iloc[0]), int(e2e["comparison_ns"].iloc[0])


def gate_frames(result: CompareResult, base: Breakdown, comparison: Breakdown) -> dict[str, pd.DataFrame | None]:
    """The frames the gate reads ("e2e", "waterfall", "contributors") for a result compared without the time
    breakdown, as ``build`` makes them in a run with ``--fail_on_regression``: the waterfall, and its steps
    as the contributors where the run's sheets named none. Kept out of the result (its reports must not
    change)."""
    wf = _waterfall_of((base, comparison))
    contrib = result.frames.get("contributors")
    if (contrib is None or not len(contrib)) and len(wf):
        contrib = top_contributors(*reversed(_waterfall_contributors(wf)))
    return {"e2e": e2e_frame(base, comparison), "waterfall": wf, "contributors": contrib}


#: Exit code of a run that ``--fail_on_regression`` fails (0 and 1 keep their meanings).
EXIT_REGRESSION = 3


def _change_text(comp: int, base: int, limit: Fraction, regressed: bool) -> str:
    """The E2E change in percent to 2 decimals, or to as many more as it takes to stand on the side of the
    threshold the verdict put it on: "+5.17%, threshold +5.17%" read as no reason for the regression it
    announced (the change is +5.1733%)."""
    change = (comp - base) / base * 100.0
    for places in range(2, 13):
        text = f"{change:+.{places}f}%"
        if (Fraction(text[:-1]) > limit) == regressed:
            break
    return text


def regression_gate(result: CompareResult, pct: float, top: int = 5,
                    frames: Mapping[str, pd.DataFrame | None] | None = None) -> tuple[int, str]:
    """Exit code (3 = regression beyond ``pct`` percent, 0 = within, 1 = a side has no E2E time, so a CI
    gate cannot judge the run and must not pass it) and the message for stderr. ``frames``: those of a
    breakdown made for the gate alone (``gate_frames``), else the result's."""
    frames = result.frames if frames is None else frames
    pair = e2e_ns(result, frames.get("e2e"))
    if pair is None:
        return 1, "error: --fail_on_regression: no E2E time to compare (the time breakdown produced no data)"
    base, comp = pair
    for profile, value in ((result.base, base), (result.comparison, comp)):
        if value <= 0:
            return 1, (f"error: {term_safe(profile.path)}: no E2E time (no device activity or Overlap Analysis data), "
                       "so --fail_on_regression cannot judge the run")
    scope, aside = e2e_words(result, frames.get("e2e"))
    # exact: a change of exactly pct percent is within the threshold (the float change says 7.000000000000001
    # for +7.00%); the threshold is taken as the decimal the user wrote (repr of the float), and shown so
    written = repr(float(pct) + 0.0)  # + 0.0: no "-0"
    limit = Fraction(written)
    regressed = (comp - base) * 100 > limit * base
    change = _change_text(comp, base, limit, regressed)
    head = (f"E2E time{scope} {_ms3(base):.3f} ms -> {_ms3(comp):.3f} ms ({change}), "
            f"threshold +{written[:-2] if written.endswith('.0') else written}%{f'; {aside}' if aside else ''}")
    if not regressed:
        return 0, f"No regression: {head}"
    lines = [f"Performance regression: {head}"]
    contrib = frames.get("contributors")
    note = unexplained_note(contrib, frames.get("waterfall"), frames.get("contributor_communication"))
    worst_lines: list[str] = []
    if contrib is not None and len(contrib):
        worst = contrib[contrib["Diff(ms)"].astype(float) > 0].head(top)
        if len(worst):
            level = worst["Level"].iloc[0]
            worst_lines.append(f"Top contributor ({level} level):" if len(worst) == 1
                               else f"Top {len(worst)} contributors ({level} level):")
            for r in worst.itertuples(index=False):
                worst_lines.append(f"  {term_safe(r.Name)}: +{half_up(float(r[5]), 3):.3f} ms "
                                   f"({float(r.Share):.1%} of {share_basis(level)})")
    if note:  # also where no listed contributor grew: the caveat holds for the ranking the run made
        worst_lines.append(f"{'  ' if worst_lines else ''}Note: {term_safe(note)}.")
    step_lines: list[str] = []
    wf = frames.get("waterfall")
    if wf is not None and len(wf):
        steps = wf[_step_mask(wf)]
        steps = steps[steps["Delta(ns)"].astype("int64") > 0].sort_values("Delta(ns)", ascending=False).head(3)
        if len(steps):
            biggest = zip(steps["Step"], steps["Delta(ns)"], strict=True)
            step_lines.append("Largest waterfall steps: " + ", ".join(
                f"{term_safe(s)} +{_ms3(float(d)):.3f} ms" for s, d in biggest))
    # where the contributors explain little of the change, the waterfall steps that do come first
    lines += step_lines + worst_lines if note else worst_lines + step_lines
    return EXIT_REGRESSION, "\n".join(lines)
