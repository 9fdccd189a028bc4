"""The console summary: the "Model Profiling Time Distribution" table.

The overall comparator decides every header and cell text (reference-1 §10);
this module only lays them out exactly as the original does: a PrettyTable in
its default style, a title row, all cells centred, base row first.
"""

from __future__ import annotations

from typing import Any

from prettytable import PrettyTable

DEFAULT_TITLE = "Model Profiling Time Distribution"


def render_summary(summary: dict[str, Any]) -> str:
    """Render ``{"title", "headers", "rows"}`` as the original's table text ("" when there are no rows)."""
    headers = [str(h) for h in summary.get("headers") or []]
    rows = summary.get("rows") or []
    if not headers or not rows:
        return ""
    table = PrettyTable()
    # PrettyTable rejects duplicate field names; the original's headers are unique, but be safe.
    table.field_names = _unique(headers)
    for row in rows:
        cells = [str(c) for c in row]
        if len(cells) != len(headers):
            raise ValueError(f"summary row has {len(cells)} cells for {len(headers)} headers")
        table.add_row(cells)
    table.title = summary.get("title") or DEFAULT_TITLE
    table.align = "c"
    return table.get_string()


def _unique(headers: list[str]) -> list[str]:
    """PrettyTable needs unique field names: pad repeats with trailing spaces (centring hides them)."""
    seen: dict[str, int] = {}
    out = []
    for h in headers:
        n = seen.get(h, 0)
        seen[h] = n + 1
        out.append(h if n == 0 else h + " " * n)
    return out
