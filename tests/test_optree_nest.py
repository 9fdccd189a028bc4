"""The vectorised nesting (optree._nest, modules._walk) against the plain cursor walk of §2.2.

The cursor walk is what the original does and what the code used to do one op at a time; the
vectorised forms must give the same parents, depths and point owners for any start-sorted
input, including overlapping (not properly nested) intervals, equal starts and negative durations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from msprof_compare.compare.modules import _handout, _root, _walk
from msprof_compare.compare.optree import _last_covering, _last_covering_segments, _nest
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options


def _cursor(ts: list[int], end: list[int]) -> tuple[list[int], list[int]]:
    parent, depth, stack = [], [], []
    for i, t in enumerate(ts):
        while stack and t > end[stack[-1]]:
            stack.pop()
        parent.append(stack[-1] if stack else -1)
        depth.append(len(stack))
        stack.append(i)
    return parent, depth


def test_nest_matches_cursor_walk() -> None:
    rng = np.random.default_rng(7)
    for _ in range(1500):
        n = int(rng.integers(0, 40))
        ts = np.sort(rng.integers(0, 30, n)).astype(np.int64)
        end = ts + rng.integers(-3, 25, n)
        parent, depth = _nest(ts, end)
        assert (parent.tolist(), depth.tolist()) == _cursor(ts.tolist(), end.tolist())


def test_nest_by_hand() -> None:
    # 0 [0,10] holds 1 [2,5] (which holds 2 [5,5]: starting at the end is inside) and 3 [6,9]; 4 starts after 0
    parent, depth = _nest(np.array([0, 2, 5, 6, 11]), np.array([10, 5, 5, 9, 12]))
    assert parent.tolist() == [-1, 0, 1, 0, -1]
    assert depth.tolist() == [0, 1, 2, 1, 0]


def _walk_ref(names, ts, ends, pts):
    """The per-event cursor walk over modules and kernel points (modules first at equal ts)."""
    all_ts = list(ts) + list(pts)
    order = sorted(range(len(all_ts)), key=lambda i: all_ts[i])
    made, parent, stack, owner = [], [], [], [-1] * len(pts)
    for i in order:
        t = all_ts[i]
        while stack and t > ends[made[stack[-1]]]:
            stack.pop()
        if i < len(names):
            parent.append(stack[-1] if stack else -1)
            made.append(i)
            stack.append(len(made) - 1)
        else:
            owner[i - len(names)] = stack[-1] if stack else -1
    return made, parent, owner


def test_walk_matches_cursor_walk() -> None:
    rng = np.random.default_rng(11)
    for _ in range(500):
        n, k = int(rng.integers(1, 15)), int(rng.integers(0, 10))
        ts = rng.integers(0, 30, n).astype(np.int64)
        ends = ts + rng.integers(-2, 20, n)
        pts = np.unique(rng.integers(0, 35, k)).astype(np.int64)
        names = np.array([f"m{i}" for i in range(n)], dtype=object)
        w = _walk(names, ts, ends, np.zeros(n, np.int64), pts, np.ones(len(pts), np.int64), _root())
        made, parent, owner = _walk_ref(names.tolist(), ts.tolist(), ends.tolist(), pts.tolist())
        assert w.names.tolist() == [names[i] for i in made]
        assert w.parent.tolist() == parent
        assert w.point_owner.tolist() == owner
        # self time = points owned; total = subtree sums
        for j, m in enumerate(w.mods):
            assert m.self_ns == owner.count(j)
            assert m.total_ns == m.self_ns + sum(c.total_ns for c in m.children)


def test_handout_by_hand() -> None:
    # module 0 has top ops [0,4] and [6,9]; points at 3 (op 0), 5 (gap: none) and 9 (op 1)
    got = _handout(np.array([0, 0]), np.array([0, 6]), np.array([4, 9]), np.array([0, 0, 0]),
                   np.array([3, 5, 9]))
    assert got.tolist() == [0, -1, 1]
    # two modules (0: ops [0,4], [6,9]; 1: op [10,20]), points in no order: the cursor restarts per module, a
    # point at an op's start belongs to it, and module 1's points reach only its own op
    got = _handout(np.array([0, 0, 1]), np.array([0, 6, 10]), np.array([4, 9, 20]),
                   np.array([1, 0, 1, 0, 1]), np.array([10, 6, 25, 2, 15]))
    assert got.tolist() == [2, 1, -1, 0, 2]
    # module 1's op [10,20] lies within module 0's op [0,40]: its point at 15 is module 1's op, not module 0's;
    # module 2 has no op, so its point goes to none
    got = _handout(np.array([0, 1]), np.array([0, 10]), np.array([40, 20]), np.array([0, 1, 2]),
                   np.array([5, 15, 30]))
    assert got.tolist() == [0, 1, -1]



def test_handout_point_past_its_modules_ops_gets_none() -> None:
    """A kernel point after the last top-layer op of its module gets no op, even where the next module's first
    op (the next entry of the sorted top layer) has started by then: module 0 has op [0,4], module 1 op [1,3];
    module 0's points at 2 (its op) and 8 (after it: none), module 1's at 2 (its op)."""
    got = _handout(np.array([0, 1]), np.array([0, 1]), np.array([4, 3]), np.array([0, 0, 1]), np.array([2, 8, 2]))
    assert got.tolist() == [0, -1, 1]


def test_subtree_sums_level_by_level_match_a_plain_walk() -> None:
    """``_subtree_sum`` over ``levels`` (one sort, then one slice per depth) equals a plain reverse walk of the
    parent links, on random forests and on a 50,000-deep chain (a scan of every node per level was
    O(n x depth): 20 s at depth 80,000)."""
    from msprof_compare.compare.optree import _subtree_sum, levels

    rnd = np.random.default_rng(3)
    shapes = []
    for n in (1, 2, 10, 500):
        parent = np.array([-1] + [int(rnd.integers(-1, i)) for i in range(1, n)], dtype=np.int64)
        shapes.append(parent)
    shapes.append(np.arange(-1, 49_999, dtype=np.int64))  # a chain: node i's parent is i - 1
    for parent in shapes:
        n = len(parent)
        depth = np.zeros(n, np.int64)
        for i in range(n):  # parents come first
            depth[i] = depth[parent[i]] + 1 if parent[i] >= 0 else 0
        values = rnd.integers(0, 1000, n)
        want = values.astype(np.int64).copy()
        for i in range(n - 1, -1, -1):
            if parent[i] >= 0:
                want[parent[i]] += want[i]
        assert _subtree_sum(values, parent, depth).tolist() == want.tolist()
        lv = levels(depth)
        assert len(lv) == depth.max() + 1 and sorted(np.concatenate(lv).tolist()) == list(range(n))
        assert all((depth[s] == d).all() and (np.diff(s) > 0).all() for d, s in enumerate(lv))
    assert levels(np.zeros(0, np.int64)) == []


def test_both_nestings_are_the_cursor_walk_on_pair1(samples: Path) -> None:
    """``_nest``'s sparse table (small lists) and its segment tree (long ones) give the cursor walk's parents on
    real nestings, NPU pair 1's ops and python functions (the op tree and the python frames nest these), and on
    random lists with ties, zero durations and times near the int64 limit."""
    opts, _ = build_options()
    prof = load_profile(str(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"), opts)
    cases = []
    for table in (prof.ops, prof.python_functions):
        ts = table["ts"].to_numpy(np.int64)
        order = np.argsort(ts, kind="stable")
        cases.append((ts[order], (ts + table["dur"].to_numpy(np.int64))[order]))
    assert min(len(c[0]) for c in cases) > 800
    rng = np.random.default_rng(5)
    for n in (2, 3, 17, 64, 65, 300):
        ts = np.sort(rng.integers(0, 2 * n, n))
        cases.append((ts, ts + rng.choice([-1, 0, 1, 3, n // 2, 2 * n], n)))
    big = np.sort(rng.integers(2**62, 2**63 - 10**6, 200))
    cases.append((big, big + rng.integers(0, 10**6, 200)))
    for ts, end in cases:
        want, depth = _cursor(ts.tolist(), end.tolist())
        assert _last_covering(ts, end).tolist() == want
        assert _last_covering_segments(ts, end).tolist() == want
        assert [a.tolist() for a in _nest(ts, end)] == [want, depth]
