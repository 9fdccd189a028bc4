"""Exact interval arithmetic on int64 nanosecond arrays.

Every time breakdown (GPU computing / uncovered communication, NPU overlap,
DB tasks) is a union, an intersection or a difference of half-open intervals
``[start, end)``. The original counted 1-µs ticks; we compute these exactly
with sort + sweep, fully vectorised (no Python loop per interval).

An *interval set* is a pair ``(s, e)`` of int64 arrays, sorted, disjoint and
non-touching (``e[i] < s[i + 1]``), every interval non-empty. ``union``
produces one from arbitrary intervals; ``intersect`` and ``subtract`` accept
arbitrary intervals too (they normalise first) and return interval sets.
"""

from __future__ import annotations

import numpy as np

Intervals = tuple[np.ndarray, np.ndarray]

_EMPTY = np.zeros(0, dtype=np.int64)


def _as_i64(a: object) -> np.ndarray:
    return np.asarray(a, dtype=np.int64).ravel()


def empty() -> Intervals:
    """The empty interval set."""
    return _EMPTY.copy(), _EMPTY.copy()


def union(starts: object, ends: object) -> Intervals:
    """Merge arbitrary intervals ``[starts[i], ends[i])`` into a disjoint sorted set.

    Empty or inverted intervals (end <= start) are dropped; overlapping,
    nested and touching intervals are merged.
    """
    s = _as_i64(starts)
    e = _as_i64(ends)
    if s.shape != e.shape:
        raise ValueError("starts and ends differ in length")
    keep = e > s
    if not keep.all():
        s, e = s[keep], e[keep]
    if s.size == 0:
        return empty()
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # a new block starts where the interval begins after everything before it ended
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = s.size - 1
    return s[first], reach[last]


def length(iv: Intervals) -> int:
    """Length (ns) of an interval set (already disjoint)."""
    return int((iv[1] - iv[0]).sum())


def _normal(iv: Intervals) -> Intervals:
    """``union(*iv)``, or ``iv`` itself when it is an interval set already (sorted, non-empty, non-touching): the
    sweeps mostly get ``union``'s own results, and re-sorting them took a third of a small sweep."""
    s, e = iv
    if isinstance(s, np.ndarray) and isinstance(e, np.ndarray) and s.dtype == np.int64 and e.dtype == np.int64 \
            and s.ndim == 1 and s.shape == e.shape and (e > s).all() and (s[1:] > e[:-1]).all():
        return s, e
    return union(s, e)


def _sweep(a: Intervals, b: Intervals, want_a: int, want_b: int) -> Intervals:
    """Pieces of the line where membership in (a, b) equals (want_a, want_b)."""
    sa, ea = _normal(a)
    sb, eb = _normal(b)
    pos = np.concatenate([sa, ea, sb, eb])
    if pos.size == 0:
        return empty()
    da = np.concatenate([np.ones(sa.size, np.int64), -np.ones(ea.size, np.int64),
                         np.zeros(sb.size + eb.size, np.int64)])
    db = np.concatenate([np.zeros(sa.size + ea.size, np.int64),
                         np.ones(sb.size, np.int64), -np.ones(eb.size, np.int64)])
    order = np.argsort(pos, kind="stable")
    pos, da, db = pos[order], da[order], db[order]
    ca = np.cumsum(da)
    cb = np.cumsum(db)
    # segment i is [pos[i], pos[i+1]) with the membership after processing event i
    seg = (ca[:-1] == want_a) & (cb[:-1] == want_b) & (pos[1:] > pos[:-1])
    return union(pos[:-1][seg], pos[1:][seg])


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Points covered by both ``a`` and ``b``."""
    sa, ea = _normal(a)
    sb, eb = _normal(b)
    # each interval of ``a`` meets the run of ``b``'s intervals that end after it starts and start before it ends
    # (two sorted searches instead of a sweep's sort of all ends); the pieces of two interval sets neither overlap
    # nor touch, so they are an interval set as they are
    lo = np.searchsorted(eb, sa, side="right")
    count = np.searchsorted(sb, ea, side="left") - lo
    np.maximum(count, 0, out=count)
    total = int(count.sum())
    if total == 0:
        return empty()
    i = np.repeat(np.arange(sa.size), count)
    j = lo[i] + (np.arange(total) - np.repeat(np.cumsum(count) - count, count))
    return np.maximum(sa[i], sb[j]), np.minimum(ea[i], eb[j])


def subtract(a: Intervals, b: Intervals) -> Intervals:
    """Points covered by ``a`` but not by ``b`` (a minus b)."""
    return _sweep(a, b, 1, 0)


def _gaps(busy: Intervals, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(starts, lengths) of the stretches of ``[lo, hi)`` between ``busy``'s intervals, in order, empty ones kept."""
    # the gaps of an interval set are the stretches between its intervals: no sweep needed (a sweep was
    # most of the NPU overlap figures' time). Intervals outside the window clip to empty ones at its edges,
    # so the gaps that are not empty are exactly ``subtract``'s pieces, in order.
    s, e = _normal(busy)
    lo, hi = int(lo), int(hi)
    gs = np.concatenate([np.array([lo], dtype=np.int64), np.clip(e, lo, hi)])
    ge = np.concatenate([np.clip(s, lo, hi), np.array([hi], dtype=np.int64)])
    return gs, ge - gs


def longest_gap(busy: Intervals, lo: int, hi: int) -> tuple[int, int]:
    """(start, length) of the longest stretch of ``[lo, hi)`` that ``busy`` does not cover (the first of
    equal ones); (lo, 0) when it is all covered or empty."""
    return gap_stats(busy, lo, hi)[:2]


def gap_stats(busy: Intervals, lo: int, hi: int) -> tuple[int, int, int, int]:
    """``longest_gap``'s (start, length), then the count and total length of all the stretches of ``[lo, hi)``
    that ``busy`` does not cover, from one pass over the gaps."""
    gs, gap = _gaps(busy, lo, hi)
    i = int(np.argmax(gap))
    start, length = (int(gs[i]), int(gap[i])) if gap[i] > 0 else (int(lo), 0)
    gap = gap[gap > 0]
    return start, length, int(gap.size), int(gap.sum())


def pairwise_overlaps(sets: list[Intervals]) -> dict[tuple[int, int], int]:
    """``length(intersect(sets[i], sets[j]))`` for every pair ``i < j`` whose overlap is not empty, from one
    sort of all intervals: an interval meets exactly the intervals that start at or after it and before
    its end, so only overlapping pairs are ever visited (a pair-by-pair intersection cost G x G sweeps:
    60 s for 1,000 communication groups that never overlap)."""
    norm = [union(*iv) for iv in sets]
    if len(norm) < 2:
        return {}
    s = np.concatenate([iv[0] for iv in norm])
    e = np.concatenate([iv[1] for iv in norm])
    g = np.repeat(np.arange(len(norm), dtype=np.int64), [iv[0].size for iv in norm])
    if s.size < 2:
        return {}
    order = np.argsort(s, kind="stable")
    s, e, g = s[order], e[order], g[order]
    reach = np.searchsorted(s, e, side="left")  # intervals k+1 .. reach[k]-1 start inside interval k
    count = np.maximum(reach - np.arange(s.size) - 1, 0)
    total = int(count.sum())
    if total == 0:
        return {}
    k = np.repeat(np.arange(s.size), count)
    m = k + 1 + (np.arange(total) - np.repeat(np.cumsum(count) - count, count))
    length_km = np.minimum(e[k], e[m]) - s[m]  # s[m] >= s[k]: the overlap of the two
    gk, gm = g[k], g[m]  # never equal: a set's own intervals are disjoint
    lo, hi = np.minimum(gk, gm), np.maximum(gk, gm)
    keys, inv = np.unique(lo * len(norm) + hi, return_inverse=True)
    sums = np.zeros(keys.size, np.int64)
    np.add.at(sums, inv.reshape(-1), length_km)
    return {(int(key // len(norm)), int(key % len(norm))): int(v)
            for key, v in zip(keys.tolist(), sums.tolist(), strict=True) if v}


def near(iv: Intervals, starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """The part of the interval set ``iv`` that can meet intervals within ``[min(starts), max(ends))``: a slice,
    so intersecting many small sets with one large set (each communication group with the not-overlapped
    windows) does not re-sort the large one each time."""
    s, e = iv
    if starts.size == 0 or s.size == 0:
        return empty()
    lo = int(np.searchsorted(e, starts.min(), side="right"))
    hi = int(np.searchsorted(s, ends.max(), side="left"))
    return s[lo:hi], e[lo:hi]
