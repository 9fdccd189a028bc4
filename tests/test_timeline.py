"""Interval engine: hand-checked cases plus a brute-force cross-check on small integer grids."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from msprof_compare import timeline as tl


def _pairs(iv):
    return list(zip(iv[0].tolist(), iv[1].tolist(), strict=True))


def test_union_empty():
    assert _pairs(tl.union([], [])) == []
    assert tl.length(tl.union([], [])) == 0


def test_union_overlapping_nested_touching():
    s = [10, 0, 2, 5, 20, 30]
    e = [15, 4, 3, 10, 25, 30]          # [30,30) is empty and dropped
    # [0,4) holds [2,3); [5,10) touches [10,15) -> merged
    assert _pairs(tl.union(s, e)) == [(0, 4), (5, 15), (20, 25)]
    assert tl.length(tl.union(s, e)) == 4 + 10 + 5


def test_union_drops_inverted_and_keeps_dtype():
    s, e = tl.union(np.array([5, 1]), np.array([3, 2]))
    assert _pairs((s, e)) == [(1, 2)]
    assert s.dtype == np.int64 and e.dtype == np.int64


def test_union_large_values_exact():
    base = 1_700_000_000_000_000_000  # NPU-like epoch ns
    s = np.array([base, base + 1, base + 10], dtype=np.int64)
    e = np.array([base + 2, base + 3, base + 11], dtype=np.int64)
    assert _pairs(tl.union(s, e)) == [(base, base + 3), (base + 10, base + 11)]


def test_intersect_cases():
    a = ([0, 10, 20], [5, 15, 30])
    b = ([3, 15, 25], [12, 22, 26])
    # [3,5) + [10,12) + [20,22) + [25,26)
    assert _pairs(tl.intersect(a, b)) == [(3, 5), (10, 12), (20, 22), (25, 26)]
    # touching only -> empty
    assert _pairs(tl.intersect(([0], [5]), ([5], [9]))) == []
    assert _pairs(tl.intersect(([0], [5]), ([], []))) == []


def test_subtract_cases():
    a = ([0, 20], [10, 30])
    b = ([2, 5, 25], [4, 8, 40])
    assert _pairs(tl.subtract(a, b)) == [(0, 2), (4, 5), (8, 10), (20, 25)]
    assert _pairs(tl.subtract(a, ([], []))) == [(0, 10), (20, 30)]
    assert _pairs(tl.subtract(([], []), a)) == []
    # b covers a entirely
    assert _pairs(tl.subtract(([3], [4]), ([0], [10]))) == []
    # a overlapping itself is normalised first
    assert _pairs(tl.subtract(([0, 2], [5, 8]), ([4], [6]))) == [(0, 4), (6, 8)]


_iv = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12)), max_size=12)


def _mask(pairs):
    m = np.zeros(80, dtype=bool)
    for s, d in pairs:
        m[s:s + d] = True
    return m


def _from_mask(m):
    out, i = [], 0
    while i < m.size:
        if m[i]:
            j = i
            while j < m.size and m[j]:
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def _iv_of(pairs):
    return [s for s, _ in pairs], [s + d for s, d in pairs]


@settings(max_examples=200, deadline=None)
@given(_iv, _iv)
def test_against_brute_force(a, b):
    ma, mb = _mask(a), _mask(b)
    A, B = _iv_of(a), _iv_of(b)
    assert _pairs(tl.union(*A)) == _from_mask(ma)
    assert tl.length(tl.union(*A)) == int(ma.sum())
    assert _pairs(tl.intersect(A, B)) == _from_mask(ma & mb)
    assert _pairs(tl.subtract(A, B)) == _from_mask(ma & ~mb)
    # int64 arrays: interval sets (``union``'s own results, taken as they are) and raw intervals (normalised first)
    for a2, b2 in ((tl.union(*A), tl.union(*B)),
                   (tuple(np.array(x, np.int64) for x in A), tuple(np.array(x, np.int64) for x in B))):
        assert _pairs(tl.intersect(a2, b2)) == _from_mask(ma & mb)
        assert _pairs(tl.subtract(a2, b2)) == _from_mask(ma & ~mb)


def test_pairwise_overlaps_equal_pair_by_pair_intersections() -> None:
    """One sort of all intervals gives every pair's overlap as ``length(intersect(a, b))`` does pair by pair,
    pairs without overlap left out; random sets with shared edges, nesting, duplicates and empty sets."""
    rnd = np.random.default_rng(11)
    for trial in range(300):
        n_sets = int(rnd.integers(0, 7))
        sets = []
        for _ in range(n_sets):
            k = int(rnd.integers(0, 6))
            s = rnd.integers(0, 60, k)
            sets.append((s, s + rnd.integers(0, 15, k)))  # raw intervals: overlapping, empty, touching
        want = {}
        for i in range(n_sets):
            for j in range(i + 1, n_sets):
                v = tl.length(tl.intersect(sets[i], sets[j]))
                if v:
                    want[(i, j)] = v
        assert tl.pairwise_overlaps(sets) == want, trial
    # many sets that never overlap: nothing to report, and no pair is visited
    disjoint = [(np.array([10 * i]), np.array([10 * i + 5])) for i in range(2000)]
    assert tl.pairwise_overlaps(disjoint) == {}


def test_longest_gap_cases():
    busy = tl.union([10, 40, 45], [20, 42, 90])
    assert tl.longest_gap(busy, 0, 100) == (20, 20)        # [20, 40) beats [0, 10), [42, 45) and [90, 100)
    assert tl.longest_gap(busy, 0, 60) == (20, 20)
    assert tl.longest_gap(busy, 10, 90) == (20, 20)
    assert tl.longest_gap(tl.union([0], [10]), 0, 30) == (10, 20)   # after the last busy interval
    assert tl.longest_gap(tl.union([25], [30]), 0, 30) == (0, 25)   # before the first
    assert tl.longest_gap(tl.union([0, 20], [5, 25]), 0, 45) == (25, 20)
    assert tl.longest_gap(tl.union([0, 10], [5, 15]), 0, 20) == (5, 5)    # equal stretches: the first
    assert tl.longest_gap(tl.union([0], [50]), 0, 50) == (0, 0)
    assert tl.longest_gap(tl.empty(), 7, 19) == (7, 12)
    assert tl.longest_gap(busy, 5, 5) == (5, 0)


@settings(max_examples=200, deadline=None)
@given(_iv, st.integers(0, 40), st.integers(0, 80))
def test_longest_gap_against_brute_force(a, lo, span):
    hi = min(lo + span, 80)
    free = _from_mask(~_mask(a)[:hi])
    free = [(max(s, lo), e) for s, e in free if e > lo]
    want = max(free, key=lambda p: (p[1] - p[0], -p[0]), default=(lo, lo))
    assert tl.longest_gap(tl.union(*_iv_of(a)), lo, hi) == (want[0], want[1] - want[0])
