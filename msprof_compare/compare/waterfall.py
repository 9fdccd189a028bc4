"""The E2E waterfall of the ``Summary``: base E2E -> comparison E2E in steps (computing by category,
uncovered communication by group, lccl, free time) whose deltas add up *exactly* (integer ns) to the E2E
difference (``waterfall``), and the other frames made of the two sides' breakdowns that the Summary, the verdict
and the gate read: ``ctx.frames["e2e"]`` (``e2e_frame``) and the steps as contributors where no statistic sheet
names any (``waterfall_contributors``).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from ..columns import col_of
from .breakdown import Breakdown, hccl_group_stem
from .table import plain_frame

log = logging.getLogger("msprof-analyze")


#: Group residuals below this (on both sides) are rounding, folded into the largest group.
RESIDUAL_FOLD_NS = 1000
#: The waterfall step of copy time on a compute stream (SDMA), part of free time.
SDMA_STEP = "Free: SDMA"
#: The waterfall step of the rest of Free Time: the device's idle time and the copies no SDMA row counts.
FREE_OTHER_STEP = "Free: Other"

#: Waterfall frame columns (ns columns are exact; ms columns are for display).
WATERFALL_COLUMNS = ["Step", "Category", "Base(ms)", "Comparison(ms)", "Delta(ms)", "Cumulative(ms)",
                     "Share of E2E Diff", "Base(ns)", "Comparison(ns)", "Delta(ns)"]


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


def _group_labels(bd: Breakdown, pg_names: dict[str, str] | None = None) -> dict[str, str]:
    """Group key -> display label, as OverallMetrics labels groups (reference-1 §9.4 item 26).

    A process-group name that names exactly one group on this side labels it
    ``"{pg}: Communication"`` so that the two sides pair by pg name even when
    their group ids differ; otherwise ``"{pg}: {key}"`` or the bare key.
    """
    names = bd.pg_names if pg_names is None else pg_names
    by_pg: dict[str, list[str]] = {}
    for key in bd.groups:
        by_pg.setdefault(names.get(key, "") or "unknown", []).append(key)
    labels = {}
    for key in bd.groups:
        pg = names.get(key, "")
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
    return {k: _says_communication(stripped[k] if uses[stripped[k]] == 1 else v, names.get(k, ""))
            for k, v in labels.items()}


def _paired_labels(base: Breakdown, comparison: Breakdown) -> tuple[dict[str, str], dict[str, str]]:
    """Both sides' group labels, a group of one key on both sides whose labels pair with nothing (a process-group
    name on one side only, or two names) labelled by its key alone on each: OverallMetrics pairs such groups by
    key (``overall._group_rows``), and the waterfall showed the whole communication time as one step instead."""
    lb, lc = _group_labels(base), _group_labels(comparison)
    vb, vc = set(lb.values()), set(lc.values())
    unnamed_b, unnamed_c = _group_labels(base, {}), _group_labels(comparison, {})
    for key in lb.keys() & lc.keys():
        if lb[key] not in vc and lc[key] not in vb:
            lb[key], lc[key] = unnamed_b[key], unnamed_c[key]
    return lb, lc


def _says_communication(label: str, pg: str) -> str:
    """``Group {name} Communication`` for a group whose label is a bare HCCL name (a DB export's), as a text export
    names its groups (``Group 0 Communication``): the bare name never said the step is communication time."""
    if "Communication" in label:
        return label
    head = f"{pg}: " if pg and label.startswith(f"{pg}: ") else ""
    return f"{head}Group {label[len(head):] or '(no name)'} Communication"  # a DB's NULL group name: no "Group  C"


def _group_totals(bd: Breakdown, labels: dict[str, str] | None = None) -> dict[str, int]:
    labels = _group_labels(bd) if labels is None else labels
    out: dict[str, int] = {}
    for key, parts in bd.groups.items():
        lab = labels[key]
        out[lab] = out.get(lab, 0) + int(parts.get("wait", 0)) + int(parts.get("transmit", 0))
    return out


#: The one computing step where a side's computing is not split into categories (``unsplit``).
COMPUTING_STEP = "Computing"


def unsplit(base: Breakdown, comparison: Breakdown) -> bool:
    """Whether exactly one side's computing time lies in no category (``checks``' category check fails): the
    waterfall then takes computing as one step, the comparison that side's data allows."""
    shares = [bd.categorised_ns > 0 for bd in (base, comparison) if bd.computing_ns > 0]
    return len(shares) == 2 and shares[0] != shares[1]


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
    if unsplit(base, comparison):
        # one side has no data to split its computing by (an NPU Level0 export beside a split side): its category
        # steps would fall to 0 and its Other Computing grow, a change of work read into the data's absence
        steps.append((COMPUTING_STEP, "computing", int(base.computing_ns), int(comparison.computing_ns)))
    else:
        labels = [lab for lab, _ in _COMPUTING_STEPS] + ["MC2"]
        for lab, b, c in zip(labels, pb[:-1], pc[:-1], strict=True):
            steps.append((lab, "computing", b, c))
        # a residual is below 0 when category kernels overlap in time (concurrent streams): their sums exceed the
        # union. Each side's residual goes to the step it is: real uncategorised time on one side and an overlap
        # on the other are two steps, not one row named for either
        steps.append(("Other Computing", "computing", max(pb[-1], 0), max(pc[-1], 0)))
        steps.append((OVERLAP_STEP, "computing", min(pb[-1], 0), min(pc[-1], 0)))

    lb, lc = _paired_labels(base, comparison)
    gb, gc = _group_totals(base, lb), _group_totals(comparison, lc)
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
    steps.append((FREE_OTHER_STEP, "free", int(base.free_ns) - int(base.sdma_stream.ns),
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
        log.warning("waterfall steps do not add up to the E2E difference (off by %s ns)", f"{e2e_c - level:,}")

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
    # no share of an E2E change that reads +0.000 ms (under 500 ns): "Vector +0.000 100.0%" of a kernel 3 ns longer
    share = [None if (d is None or abs(total) < 500 or r["Category"] == "start") else d / total + 0.0  # no -0.0
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


def step_mask(wf: pd.DataFrame) -> np.ndarray:
    """The waterfall's steps: every row but the two E2E rows."""
    return np.isin(col_of(wf, "Category", object), ["start", "end"], invert=True)


def steps_changed(wf: pd.DataFrame) -> bool:
    """Whether some waterfall step changed by the 0.001 ms the waterfall shows or more (a half away from zero): the
    steps stand in for contributors only then, as no row of a level is listed whose change reads +0.000."""
    return bool(len(wf)) and bool(
        (np.abs(wf["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)[step_mask(wf)]) >= 500).any())


def waterfall_contributors(wf: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """Fallback when no statistic sheet exists: every waterfall step (computing categories, communication,
    free time), so the shares are of the waterfall steps' change, as the title says."""
    step = step_mask(wf)
    return "category", plain_frame({
        "Name": col_of(wf, "Step", object)[step],
        "Base(ms)": wf["Base(ms)"].to_numpy(dtype=float, na_value=np.nan)[step],
        "Comparison(ms)": wf["Comparison(ms)"].to_numpy(dtype=float, na_value=np.nan)[step]})


def waterfall_of(pair: tuple[Breakdown, Breakdown] | None) -> pd.DataFrame:
    """The waterfall of two breakdowns; empty without them or where a side has no E2E time (no Overlap
    Analysis lane, no device activity): OverallMetrics is left out then (reference-1 §9.1), and a waterfall
    from or to 0 would show an invented change."""
    if pair is None or not (pair[0].e2e_ns and pair[1].e2e_ns):
        return pd.DataFrame(columns=WATERFALL_COLUMNS)
    return waterfall(*pair)


def e2e_frame(base: Breakdown, comparison: Breakdown) -> pd.DataFrame:
    """The result frame "e2e": both sides' E2E time in ns (0 where a side has none), and the part of each that
    lies outside its computing and communication's span (a DB export's, ``Breakdown.outside_busy_ns``), of which
    after it, and the copies in it (-1 where they were not read; ``verdict.export_window`` says it beside a text
    export)."""
    cols: dict[str, list[int]] = {"base_ns": [int(base.e2e_ns)], "comparison_ns": [int(comparison.e2e_ns)]}
    for side, bd in (("base", base), ("comparison", comparison)):
        cols.update({f"{side}_outside_busy_ns": [int(bd.outside_busy_ns)],
                     f"{side}_outside_after_ns": [int(bd.outside_after_ns)],
                     f"{side}_outside_copies_ns": [bd.outside_copies.ns if bd.outside_copies is not None else 0],
                     f"{side}_outside_copies": [bd.outside_copies.count if bd.outside_copies is not None else -1]})
    return plain_frame(cols)
