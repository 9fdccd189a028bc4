"""Interval arithmetic for test oracles, in plain Python (independent of ``msprof_compare.timeline``), and the
original's OVERLAP / CLIP pointer walks (reference-1 §5.7-§5.8), which the exact intersections replace."""

from __future__ import annotations

import numpy as np


def union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sorted, merged union of [start, end) intervals (touching intervals merge)."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def minus(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of the union of ``a`` that no interval of ``b`` covers, as sorted [start, end) intervals."""
    out, cut = [], union(b)
    for s, e in union(a):
        for bs, be in cut:
            if be <= s or bs >= e:
                continue
            if bs > s:
                out.append((s, bs))
            s = max(s, be)
            if s >= e:
                break
        if s < e:
            out.append((s, e))
    return out


def longest_free(busy: list[tuple[int, int]], lo: int, hi: int) -> tuple[int, int]:
    """(start, length) of the longest part of [lo, hi) no busy interval covers (the first of equal ones)."""
    best, at = (lo, 0), lo
    for s, e in sorted(busy):
        if s > at and min(s, hi) - at > best[1]:
            best = (at, min(s, hi) - at)
        at = max(at, e)
    if hi - at > best[1]:
        best = (at, hi - at)
    return best


def overlap_walk(ws: np.ndarray, we: np.ndarray, es: np.ndarray, ee: np.ndarray) -> int:
    """The original's OVERLAP(windows, events) pointer walk (reference-1 §5.7): what the exact intersection
    (``timeline``) replaces, for the parity tests.

    Windows and events must be sorted by start. Overlapping events can be counted twice.
    """
    total, p, n = 0, 0, len(es)
    for w0, w1 in zip(ws.tolist(), we.tolist(), strict=True):
        while p < n:
            s, e = int(es[p]), int(ee[p])
            if e <= w0:
                p += 1
            elif s >= w1:
                break
            elif e >= w1:
                total += w1 - max(s, w0)
                break
            else:
                total += e - max(s, w0)
                p += 1
    return total


def clip_walk(os_: np.ndarray, oe: np.ndarray, ws: np.ndarray, we: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The original's CLIP(ops, windows) (reference-1 §5.8), for parity checks."""
    out_s, out_e = [], []
    q, m = 0, len(ws)
    for s, e in zip(os_.tolist(), oe.tolist(), strict=True):
        while q < m and we[q] < s:
            q += 1
        while q < m:
            if ws[q] > e:
                break
            if we[q] < e:
                out_s.append(max(s, int(ws[q])))
                out_e.append(int(we[q]))
                q += 1
            else:
                out_s.append(max(s, int(ws[q])))
                out_e.append(min(e, int(we[q])))
                break
    return np.asarray(out_s, dtype=np.int64), np.asarray(out_e, dtype=np.int64)


def module_times(frames: list[tuple[int, int, str]], launched: list[tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Row name ("/ A_0/ B_0", reference-2 §3.7) -> (device total, device self ns) of nn.Module frames (start, end,
    name), in the order given (by start): a frame's total is the device time of the launches (launch ts, device ns)
    whose ts lies in its span, ends included (reference-2 §3.2 step 5); frames nest by plain interval containment,
    and self is the total less the totals of its direct children. A DB export's and a Kineto trace's oracles."""
    total: dict[str, int] = {}
    children: dict[str, int] = {}
    stack: list[tuple[str, int]] = []
    for start, end, name in frames:
        while stack and start > stack[-1][1]:
            stack.pop()
        parent = stack[-1][0] if stack else ""
        path = parent + "/" + name.replace("nn.Module:", "")
        total[path] = sum(d for ts, d in launched if start <= ts <= end)
        if parent:
            children[parent] = children.get(parent, 0) + total[path]
        stack.append((path, end))
    return {k: (v, v - children.get(k, 0)) for k, v in total.items()}
