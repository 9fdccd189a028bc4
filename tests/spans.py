"""Interval arithmetic for test oracles, in plain Python (independent of ``msprof_compare.timeline``)."""

from __future__ import annotations


def union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sorted, merged union of [start, end) intervals (touching intervals merge)."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]
