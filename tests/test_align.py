"""Alignment: a true LCS, order-preserving, every element exactly once."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from msprof_compare.compare.align import align, lcs_matches, matched_count, no_matching, pairs


def _lcs_len(a: list, b: list) -> int:
    """Textbook O(n*m) DP, as the independent oracle."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _check(a: list, b: list, ia: np.ndarray, ib: np.ndarray) -> None:
    assert len(ia) == len(ib)
    assert sorted(ia[ia >= 0].tolist()) == list(range(len(a)))
    assert sorted(ib[ib >= 0].tolist()) == list(range(len(b)))
    assert np.all(np.diff(ia[ia >= 0]) > 0) and np.all(np.diff(ib[ib >= 0]) > 0)
    assert not np.any((ia < 0) & (ib < 0))
    for i, j in zip(ia.tolist(), ib.tolist(), strict=False):
        if i >= 0 and j >= 0:
            assert a[i] == b[j]


keys = st.lists(st.sampled_from("ABCDE"), max_size=25)


@settings(max_examples=400, deadline=None)
@given(keys, keys)
def test_lcs_is_maximum_and_valid(a: list, b: list) -> None:
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    assert matched_count(ia, ib) == _lcs_len(a, b)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=50, max_size=300), st.data())
def test_long_runs_use_numpy_path(a: list, data: st.DataObject) -> None:
    # a near copy with a few edits: exercises long common runs (numpy chunk path)
    b = list(a)
    for _ in range(data.draw(st.integers(0, 4))):
        pos = data.draw(st.integers(0, len(b)))
        if data.draw(st.booleans()) and pos < len(b):
            del b[pos]
        else:
            b.insert(pos, data.draw(st.integers(0, 5)))
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    assert matched_count(ia, ib) == _lcs_len(a, b)


def test_documented_examples() -> None:
    # reference-2 §0.5 UT facts where textbook LCS and the original agree
    assert pairs(*align(list("abcd"), list("bce"))) == [(0, None), (1, 0), (2, 1), (None, 2), (3, None)]
    assert pairs(*align([], list("bce"))) == [(None, 0), (None, 1), (None, 2)]
    assert pairs(*align(list("abcd"), [])) == [(0, None), (1, None), (2, None), (3, None)]
    assert pairs(*align(list("xyz"), list("xyz"))) == [(0, 0), (1, 1), (2, 2)]
    assert pairs(*align(list("ABCD"), list("BXCE"))) == [(0, None), (1, 0), (None, 1), (2, 2), (None, 3), (3, None)]


def test_quirk_examples_match_more_than_the_original() -> None:
    # B=[D,D,A,D], C=[B,D,D,B]: the original pairs 2; the LCS is 2 as well
    ia, ib = align(list("DDAD"), list("BDDB"))
    assert matched_count(ia, ib) == 2
    # B=[C,A,B,D,B,D], C=[A,D,C]: the original pairs (A,A),(D,D) = 2, LCS = 2
    ia, ib = align(list("CABDBD"), list("ADC"))
    assert matched_count(ia, ib) == 2
    # module children B=[A,B], C=[B,A] -> one match either way
    assert matched_count(*align(list("AB"), list("BA"))) == 1


def test_no_matching_mode() -> None:
    assert pairs(*no_matching(2, 1)) == [(0, None), (1, None), (None, 0)]
    assert pairs(*align(list("AB"), list("C"), match=False)) == [(0, None), (1, None), (None, 0)]


def test_disjoint_and_unhashable_free_keys() -> None:
    ia, ib = align(["x", "y"], ["p", "q", "r"])
    assert matched_count(ia, ib) == 0 and len(ia) == 5
    ma, mb = lcs_matches([("a", 1), ("b", 2)], [("b", 2)])
    assert ma.tolist() == [1] and mb.tolist() == [0]


def test_large_near_identical_is_fast_enough_structure() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 50, 20000).tolist()
    b = list(a)
    for p in sorted(rng.choice(len(b), 100, replace=False).tolist(), reverse=True):
        b[p] = 1000 + p  # unique substitutions
    ia, ib = align(a, b)
    assert matched_count(ia, ib) == 20000 - 100
