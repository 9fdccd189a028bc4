"""Console text of the Summary results: the E2E waterfall and the top contributors.

Printed under the "Model Profiling Time Distribution" table; the frames come
from ``compare/summary.py`` (``result.frames["waterfall" | "contributors"]``).
"""

from __future__ import annotations

import math

import pandas as pd
from prettytable import PrettyTable

from ..compare.summary import coverage_text, share_basis, unexplained_note
from ..textsafe import term_safe

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
    t = PrettyTable()
    # shares are of the summed |change| of this level's device times, not of the E2E change above
    first = f"; the first {len(shown)} shown" if len(shown) < len(frame) else ""
    t.title = f"Top Contributors ({level} level: {coverage_text(frame)} of {share_basis(level)}{first})"
    t.field_names = ["#", "Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share"]
    for r in shown.itertuples(index=False):
        name = term_safe(r.Name)
        if len(name) > 70:
            name = name[:67] + "..."
        t.add_row([int(r.Rank), name, _ms(r[3]), _ms(r[4]), _ms(r[5], signed=True), _pct(r.Share), _pct(r[7])])
    t.align = "r"
    t.align["Name"] = "l"
    return t.get_string()


def render_explain(frames: dict[str, pd.DataFrame], verdict: str = "") -> str:
    """Waterfall, the E2E verdict in words, then contributors ("" when neither table exists); under the
    contributors, a note when they explain little of the E2E change. ``verdict``: ``CompareResult.verdict``."""
    contrib = frames.get("contributors")
    parts = [render_waterfall(frames.get("waterfall")), term_safe(f"{verdict}.") if verdict else "",
             render_contributors(contrib)]
    note = unexplained_note(contrib, frames.get("waterfall")) if parts[2] else ""
    if note:
        parts.append(term_safe(f"Note: {note}."))
    return "\n".join(p for p in parts if p)
