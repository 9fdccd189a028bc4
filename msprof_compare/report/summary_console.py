"""Console text of the Summary results: the E2E waterfall, the top contributors and where memory grew.

Printed under the "Model Profiling Time Distribution" table; the frames come
from ``compare/summary.py`` (``result.frames["waterfall" | "contributors"]``) and
``compare/memory_summary.py`` (``result.frames["memory_contributors" | "memory"]``).
"""

from __future__ import annotations

import math

import pandas as pd
from prettytable import PrettyTable

from ..compare.summary import coverage_text, share_basis, unexplained_note
from ..textsafe import cut_columns, term_safe

CONSOLE_TOP = 10


def _ms(v: object, signed: bool = False) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    x = round(float(v), 3) + 0.0  # a -127 ns residual shows as 0.000, not "-0.000"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _pct(v: object) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{round(float(v), 3) + 0.0:.1%}"


def render_waterfall(frame: pd.DataFrame | None) -> str:
    """The waterfall as a table: one line per step, ms with 3 decimals ("" when there is none)."""
    if frame is None or not len(frame):
        return ""
    t = PrettyTable()
    t.title = "E2E Time Difference (Waterfall, ms)"
    t.field_names = ["Step", "Base", "Comparison", "Delta", "Cumulative", "Share of E2E Diff"]
    for r in frame.itertuples(index=False):
        t.add_row([term_safe(r.Step), _ms(r[2]), _ms(r[3]), _ms(r[4], signed=True), _ms(r[5]), _pct(r[6])])
    t.align = "r"
    t.align["Step"] = "l"
    return t.get_string()


def render_contributors(frame: pd.DataFrame | None) -> str:
    """The first ``CONSOLE_TOP`` contributors ("" when there is none)."""
    if frame is None or not len(frame):
        return ""
    level = str(frame["Level"].iloc[0])
    shown = frame.head(CONSOLE_TOP)
    # shares are of the summed |change| of this level's device times, not of the E2E change above
    first = f"; the first {len(shown)} shown" if len(shown) < len(frame) else ""
    rows = [[int(r.Rank), r.Name, _ms(r[3]), _ms(r[4]), _ms(r[5], signed=True), _pct(r.Share), _pct(r[7])]
            for r in shown.itertuples(index=False)]
    return _top_table(f"Top Contributors ({level} level: {coverage_text(frame)} of {share_basis(level)}{first})",
                      "ms", rows)


def _top_table(title: str, unit: str, rows: list[list]) -> str:
    """A contributors table (time or memory): rank, name (cut at 70 terminal columns), figures formatted by the
    caller."""
    t = PrettyTable()
    t.title = title
    t.field_names = ["#", "Name", f"Base({unit})", f"Comparison({unit})", f"Diff({unit})", "Share", "Cumulative Share"]
    for row in rows:
        t.add_row([row[0], cut_columns(term_safe(row[1]), 70), *row[2:]])
    t.align = "r"
    t.align["Name"] = "l"
    return t.get_string()


def _fixed(v: float, unit: str = "", signed: bool = False) -> str:
    """A memory figure to 2 decimals, as MemoryCompareStatistic rounds its diffs and Mem Usage shows GB."""
    x = round(float(v), 2) + 0.0  # no "-0.00"
    text = f"{x:+.2f}" if signed else f"{x:.2f}"
    return f"{text} {unit}" if unit else text


def render_memory_contributors(frame: pd.DataFrame | None) -> str:
    """The first ``CONSOLE_TOP`` memory contributors, as the time contributors are shown ("" when none)."""
    if frame is None or not len(frame):
        return ""
    shown = frame.head(CONSOLE_TOP)
    first = f"; the first {len(shown)} shown" if len(shown) < len(frame) else ""
    rows = [[int(r.Rank), r.Name, _fixed(r[2]), _fixed(r[3]), _fixed(r[4], signed=True), _pct(r.Share), _pct(r[6])]
            for r in shown.itertuples(index=False)]
    return _top_table(f"Top Memory Contributors ({coverage_text(frame)} of the operators' allocated-memory "
                      f"change{first})", "MB", rows)


def _change(base: float, comp: float, unit: str) -> str:
    """"1.00 MB -> 3.00 MB (+2.00 MB, +200.00%)" ("... on both sides" when both read the same to 2 decimals:
    "5.96 MB -> 5.96 MB (+0.00 MB, +0.07%)" told of a change it did not show; no percentage of a 0 base)."""
    b, c = _fixed(base, unit), _fixed(comp, unit)
    if b == c:
        return f"{b} on both sides"
    pct = f", {(comp - base) / base * 100:+.2f}%" if base else ""
    return f"{b} -> {c} ({_fixed(comp - base, unit, True)}{pct})"


def memory_line(totals: pd.DataFrame | None) -> str:
    """The memory allocated inside the operators and the peak reserved memory, each side, in one sentence
    ("" without the memory comparison). A side without memory records is "not recorded": its 0 MB is no
    change."""
    if totals is None or not len(totals):
        return ""
    t = totals.iloc[0]
    rec = (bool(t["base_recorded"]), bool(t["comparison_recorded"]))
    mb = tuple(0.0 if v is None or pd.isna(v) else float(v) for v in (t["base_mb"], t["comparison_mb"]))
    inside = "memory allocated inside operators"
    if not all(rec):
        sides = ", ".join(f"{side} {_fixed(v, 'MB') if r else 'not recorded'}"
                          for side, v, r in zip(("base", "comparison"), mb, rec, strict=True))
        missing = "the base" if not rec[0] else "the comparison"
        text = (f"No memory contributor: {missing} side recorded no memory inside its operators (its 0 MB in "
                f"MemoryCompareStatistic means not recorded, not a change); {inside}: {sides}")
    elif not int(t["changed"]):
        # every Diff Memory(MB) rounds to 0.00, yet many small changes can add up to a total that shows
        small = "" if _fixed(mb[0]) == _fixed(mb[1]) else " by 0.01 MB or more"
        text = f"No operator's allocated memory changed{small} ({int(t['operators'])} operators); {inside} " + \
               _change(*mb, "MB")
    else:
        text = f"{inside[0].upper()}{inside[1:]} {_change(*mb, 'MB')}"
    pb, pc = t["base_peak_gb"], t["comparison_peak_gb"]
    pb, pc = (None if v is None or pd.isna(v) else float(v) for v in (pb, pc))
    if pb is not None and pc is not None:
        text += f"; peak reserved memory (Mem Usage) {_change(pb, pc, 'GB')}"
    elif pb is not None or pc is not None:
        text += ("; peak reserved memory (Mem Usage): " + ", ".join(
            f"{side} {_fixed(v, 'GB') if v is not None else 'not recorded'}"
            for side, v in (("base", pb), ("comparison", pc))))
    return f"{text}."


def render_memory(frames: dict[str, pd.DataFrame]) -> str:
    """The memory contributors and the memory line under them ("" without the memory comparison)."""
    parts = [render_memory_contributors(frames.get("memory_contributors")), memory_line(frames.get("memory"))]
    return "\n".join(p for p in parts if p)


def render_explain(frames: dict[str, pd.DataFrame], verdict: str = "") -> str:
    """Waterfall, the E2E verdict in words, then contributors ("" when neither table exists); under the
    contributors, a note when they explain little of the E2E change. ``verdict``: ``CompareResult.verdict``.
    The console prints ``render_memory`` under it."""
    contrib = frames.get("contributors")
    parts = [render_waterfall(frames.get("waterfall")), term_safe(f"{verdict}.") if verdict else "",
             render_contributors(contrib)]
    note = unexplained_note(contrib, frames.get("waterfall"), frames.get("contributor_communication")) \
        if parts[2] else ""
    if note:
        parts.append(term_safe(f"Note: {note}."))
    return "\n".join(p for p in parts if p)
