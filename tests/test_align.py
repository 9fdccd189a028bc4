"""Alignment: a true LCS, order-preserving, every element exactly once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from alignutil import matched_count, original_literal, pairs
from hypothesis import given, note, settings
from hypothesis import strategies as st

from msprof_compare.compare import align as align_mod
from msprof_compare.compare.align import align, lcs_matches, no_matching

PATHS = [None, "myers", "bitpar", "sparse"]


@contextmanager
def _path(path: str | None) -> Iterator[None]:
    """Force one search path (Myers, the bit-parallel Hirschberg split or Hunt-Szymanski) for the block."""
    old = align_mod.FORCE_PATH
    align_mod.FORCE_PATH = path
    try:
        yield
    finally:
        align_mod.FORCE_PATH = old


def _lcs_len_literal(a: list, b: list) -> int:
    """Textbook O(n*m) DP, cell by cell."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _lcs_len(a: list, b: list) -> int:
    """The same DP, as the independent oracle, a row at a time in numpy (the cell-by-cell loop was most of this
    file's own time on the 300 x 300 cases): a cell is the larger of its left neighbour and
    ``t = max(up, diagonal + (x == y))`` (where x == y, diagonal + 1 is the largest of the three), so a row is the
    running maximum of ``t``. Keys are numbered by a dict, which groups them as ``==`` does for keys equal to
    themselves (1, 1.0 and True are one key; NaN, equal to no key, is refused)."""
    assert all(x == x for x in (*a, *b))
    codes: dict = {}
    ca = [codes.setdefault(x, len(codes)) for x in a]
    cb = np.array([codes.setdefault(y, len(codes)) for y in b], dtype=np.int64)
    prev = np.zeros(len(b) + 1, dtype=np.int64)
    for x in ca:
        t = np.maximum(prev[1:], prev[:-1] + (cb == x))
        prev = np.concatenate(([0], np.maximum.accumulate(t)))
    return int(prev[-1])


def _check(a: list, b: list, ia: np.ndarray, ib: np.ndarray) -> None:
    assert len(ia) == len(ib)
    assert sorted(ia[ia >= 0].tolist()) == list(range(len(a)))
    assert sorted(ib[ib >= 0].tolist()) == list(range(len(b)))
    assert np.all(np.diff(ia[ia >= 0]) > 0) and np.all(np.diff(ib[ib >= 0]) > 0)
    assert not np.any((ia < 0) & (ib < 0))
    for i, j in zip(ia.tolist(), ib.tolist(), strict=False):
        if i >= 0 and j >= 0:
            assert a[i] == b[j]


def _record_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[tuple]:
    """The argument tuples of every call of ``owner.name`` (a method's include its self), which still runs."""
    calls: list[tuple] = []
    real = getattr(owner, name)

    def spy(*args: object) -> object:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(owner, name, spy)
    return calls


keys = st.lists(st.sampled_from("ABCDE"), max_size=25)


def _every_path(a: list, b: list) -> None:
    """``align(a, b)`` by each search path in turn (``PATHS``): valid, and as long as the oracle's LCS. One drawn
    example serves the four paths: drawing it was most of the time of a property run once per path."""
    best = _lcs_len(a, b)
    for path in PATHS:
        note(f"path: {path}")
        with _path(path):
            ia, ib = align(a, b)
        _check(a, b, ia, ib)
        assert matched_count(ia, ib) == best, path


@settings(max_examples=400, deadline=None)
@given(keys, keys)
def test_lcs_is_maximum_and_valid(a: list, b: list) -> None:
    _every_path(a, b)


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
    _every_path(a, b)


def test_a_common_tail_measured_in_chunks_ends_at_the_difference_nearest_the_end() -> None:
    """The common suffix of a sub-problem is measured one element at a time up to 16 (``_SHORT_RUN``), then in
    numpy chunks; in a chunk the run ends at the difference nearest the end, not at the chunk's first one.
    Base A B + 16 A, comparison B + 18 A (first elements differ: no common prefix): the common tail is the 16 A
    measured one by one; the chunk of the 2 positions before them (base A B, comparison A A) differs at its last
    position, so the tail stops there. Read from the chunk's first difference it was 17 long and paired the
    base's B with an A. By hand, a common subsequence uses the B (then at most the 16 A after the base's B: 17)
    or no B (the base's 17 A): a maximum matching has 17 pairs, each of equal keys. Every search path strips
    the common tail first."""
    a, b = ["A", "B"] + ["A"] * 16, ["B"] + ["A"] * 18
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    assert matched_count(ia, ib) == 17


def test_documented_examples() -> None:
    # reference-2 §0.5 UT facts where textbook LCS and the original agree
    assert pairs(*align(list("abcd"), list("bce"))) == [(0, None), (1, 0), (2, 1), (None, 2), (3, None)]
    assert pairs(*align([], list("bce"))) == [(None, 0), (None, 1), (None, 2)]
    assert pairs(*align(list("abcd"), [])) == [(0, None), (1, None), (2, None), (3, None)]
    assert pairs(*align(list("xyz"), list("xyz"))) == [(0, 0), (1, 1), (2, 2)]
    assert pairs(*align(list("ABCD"), list("BXCE"))) == [(0, None), (1, 0), (None, 1), (2, 2), (None, 3), (3, None)]


@settings(max_examples=500, deadline=None)
@given(keys, keys)
def test_original_pairs_equal_the_spec_algorithm(a: list, b: list) -> None:
    """The vectorised DP (one max-plus scan per row) against the literal algorithm."""
    from msprof_compare.compare.align import _codes, original_pairs

    if not a or not b:
        return
    ma, mb = original_pairs(*_codes(a, b))
    assert list(zip(ma.tolist(), mb.tolist(), strict=True)) == original_literal(a, b)


@settings(max_examples=500, deadline=None)
@given(keys, keys)
def test_alignment_keeps_the_original_pairs_when_a_maximum_can(a: list, b: list) -> None:
    """Always a maximum matching; it holds every pair the original makes whenever the original's
    pairs extend to a maximum matching (gaps filled with LCS)."""
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    best = _lcs_len(a, b)
    assert matched_count(ia, ib) == best
    orig = original_literal(a, b) if a and b else []
    ours = set(zip(ia.tolist(), ib.tolist(), strict=True))
    extendable = len(orig) + sum(
        _lcs_len(a[a0:a1], b[b0:b1])
        for (a0, b0), (a1, b1) in zip([(-1, -1), *orig], [*orig, (len(a), len(b))], strict=True)
        for a0, b0 in [(a0 + 1, b0 + 1)]) == best
    if extendable:
        assert set(orig) <= ours


def test_quirk_examples_give_the_original_output() -> None:
    """reference-2 §0.5 examples where the original differs from textbook LCS: same rows as the original."""
    assert pairs(*align(list("DDAD"), list("BDDB"))) == [(None, 0), (0, None), (1, 1), (2, None), (3, 2), (None, 3)]
    assert pairs(*align(list("CABDBD"), list("ADC"))) == [
        (0, None), (1, 0), (2, None), (3, None), (4, None), (5, 1), (None, 2)]
    assert pairs(*align(list("AB"), list("BA"))) == [(None, 0), (0, 1), (1, None)]


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


def _edited(n: int, frac: float, seed: int) -> tuple[list[int], list[int]]:
    """A random op sequence over 300 names and a copy with ``frac`` of its places substituted, deleted or
    given an insertion (as bench/align_bench.py mutates, without importing the bench)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 300, n).tolist()
    b = list(a)
    for p, kind in zip(sorted(rng.choice(n, int(n * frac), replace=False).tolist(), reverse=True),
                       rng.integers(0, 3, n).tolist(), strict=False):
        if kind == 0:
            b[p] = int(rng.integers(0, 300))
        elif kind == 1:
            del b[p]
        else:
            b.insert(p, int(rng.integers(0, 300)))
    return a, b


@pytest.mark.parametrize("frac", [0.02, 0.5], ids=["near copies (Myers)", "half edited (bit-parallel, sparse)"])
def test_alignment_memory_grows_linearly(frac: float) -> None:
    """Issue 4: no O(n*m) structure. Quadrupling both sides quadruples the peak of what the alignment allocates
    (tracemalloc sees numpy's buffers and Python's ints alike); an n x m table, even of bits, would multiply it
    by 16. Measured: 2 % edits 0.54 -> 2.21 MiB (Myers), 50 % edits 0.87 -> 2.66 MiB (bit-parallel rows and
    Hunt-Szymanski sub-problems) for 3,000 -> 12,000 ops a side."""
    import tracemalloc

    peaks = []
    for n in (3000, 12000):
        a, b = _edited(n, frac, seed=n)
        tracemalloc.start()
        try:
            ia, ib = align(a, b)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        if n == 3000:  # still a maximum matching (the row DP, outside tracemalloc)
            assert matched_count(ia, ib) == _lcs_len(a, b)
    assert peaks[1] < 6 * peaks[0], [f"{p / 2**20:.2f} MiB" for p in peaks]
    assert peaks[1] < 12000 * 12000 / 8 / 4  # a quarter of a bit table of the larger problem


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=60, max_size=200), st.lists(st.integers(0, 6), min_size=60, max_size=200))
def test_very_different_sides(a: list, b: list) -> None:
    # unrelated sides (D large): the automatic choice takes the bit-parallel split here
    _every_path(a, b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["A", "B", 1, 1.0, True, 0, None, (1, 2)]), max_size=20),
       st.lists(st.sampled_from(["A", "B", 1, 1.0, True, 0, None, (1, 2)]), max_size=20))
def test_row_oracle_equals_the_cell_by_cell_dp(a: list, b: list) -> None:
    """The oracle's numpy rows give the textbook loop's length, for keys equal across types too."""
    assert _lcs_len(a, b) == _lcs_len_literal(a, b)


def test_bitpar_row_matches_dp() -> None:
    # the bit-parallel row equals the DP's last row, across several 64-bit words
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 40)
    b = rng.integers(0, 5, 150)
    row = align_mod._lcs_row(a, b)
    assert row.tolist() == [_lcs_len(a.tolist(), b[:j].tolist()) for j in range(len(b) + 1)]


def test_bitpar_row_chunks_masks_for_many_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # with a tiny mask allowance the rows are processed in chunks of symbols: same row
    rng = np.random.default_rng(4)
    a = rng.integers(0, 30, 50)
    b = rng.integers(0, 30, 120)
    full = align_mod._lcs_row(a, b)
    monkeypatch.setattr(align_mod, "_MASK_BYTES", 16 * 3)
    assert align_mod._lcs_row(a, b).tolist() == full.tolist()
    assert full[-1] == _lcs_len(a.tolist(), b.tolist())
    with _path("bitpar"):
        ia, ib = align(a.tolist(), b.tolist())
    _check(a.tolist(), b.tolist(), ia, ib)
    assert matched_count(ia, ib) == full[-1]


def test_auto_path_switches_on_large_differences(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1500 vs 1500 unrelated random keys: Myers alone would search to D ~ 1000
    calls = _record_calls(monkeypatch, align_mod._Myers, "_bitpar_split")
    rng = np.random.default_rng(2)
    a = rng.integers(0, 20, 1500).tolist()
    b = rng.integers(0, 20, 1500).tolist()
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    assert calls
    with _path("myers"):
        assert matched_count(ia, ib) == matched_count(*align(a, b))


def test_sparse_path_is_taken_for_few_matching_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # two permutations of 1100 distinct names: 1100 matching pairs in 1.2e6 cells (above the size where pairs
    # are counted), so Hunt-Szymanski is the cheapest path; the other two paths are the oracles. (3000 names
    # took the Myers oracle 8-12 s, D ~ 6000, for the same path and checks.)
    calls = _record_calls(monkeypatch, align_mod, "_sparse_lcs")
    rng = np.random.default_rng(5)
    n = 1100
    assert n * n >= align_mod._SPARSE_MIN_CELLS
    a = [f"op{i}" for i in rng.permutation(n)]
    b = [f"op{i}" for i in rng.permutation(n)]
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    assert calls
    for path in ("bitpar", "myers"):
        with _path(path):
            assert matched_count(*align(a, b)) == matched_count(ia, ib)


def test_sparse_path_counts_matching_pairs() -> None:
    a = np.array([1, 2, 2, 3, 9])
    b = np.array([2, 2, 2, 3, 3, 7])
    assert align_mod._matching_pairs(a, b) == (2 * 3 + 1 * 2, 2 + 1)
    assert align_mod._matching_pairs(np.array([5]), np.array([4, 6])) == (0, 0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=60), st.lists(st.integers(0, 40), max_size=60))
def test_sparse_lcs_is_a_longest_common_subsequence(a: list, b: list) -> None:
    la, lb = align_mod._sparse_lcs(a, np.asarray(b, dtype=np.int64))
    assert len(la) == _lcs_len(a, b)
    assert all(np.diff(la) > 0) and all(np.diff(lb) > 0)
    assert all(a[i] == b[j] for i, j in zip(la, lb, strict=True))


def test_myers_is_skipped_when_the_counts_bound_d_beyond_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2000 vs 2000 keys over 200 symbols: sum(min(count_a, count_b)) bounds the LCS, so D is known to be
    # far beyond Myers' budget before any search; large sub-problems never start a middle-snake search
    calls = _record_calls(monkeypatch, align_mod._Myers, "_middle_snake")  # (self, a0, n, b0, m, budget)
    rng = np.random.default_rng(6)
    a = rng.integers(0, 200, 2000).tolist()
    b = rng.integers(0, 200, 2000).tolist()
    ia, ib = align(a, b)
    _check(a, b, ia, ib)
    assert calls and not [c for c in calls if c[2] * c[4] >= align_mod._SPARSE_MIN_CELLS]
    with _path("bitpar"):
        assert matched_count(*align(a, b)) == matched_count(ia, ib)


def test_near_copies_are_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    # a long near copy: the symbols are counted (two sorts) for the whole problem only; each Myers split
    # bounds its halves' D by its own, which shows them to be near copies too
    counted = _record_calls(monkeypatch, align_mod, "_matching_pairs")
    rng = np.random.default_rng(7)
    a = rng.integers(0, 300, 20000).tolist()
    b = list(a)
    for p in sorted(rng.choice(len(b), 20, replace=False).tolist(), reverse=True):
        b[p] = 1000 + p
    ia, ib = align(a, b)
    assert matched_count(ia, ib) == 20000 - 20 and len(counted) == 1  # the whole, less its common ends


def test_align_memo_aligns_each_distinct_problem_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated problems (every layer and step of a training trace) are aligned once, same answer."""
    calls = []
    real = align_mod.align
    monkeypatch.setattr(align_mod, "align", lambda a, b: calls.append(1) or real(a, b))
    memo = align_mod.AlignMemo()
    problems = [(list("abcab"), list("bcab")), (list("xy"), list("yx")), (list("abcab"), list("bcab"))]
    for a, b in problems * 3:
        got = memo(a, b)
        want = real(a, b)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert len(calls) == 2


def test_align_memo_never_answers_one_problem_with_another() -> None:
    """One memo, many problems over keys that are equal across types (1, 1.0, True; "a" and numpy's "a"),
    distinct NaN objects and None: every answer is that of a fresh ``align``, so no two sequences share an
    entry unless ``align`` itself cannot tell them apart."""
    import random

    rnd = random.Random(3)
    alphabet = ["a", "a ", "1", 1, 1.0, True, 0, False, -0.0, None, float("nan"), float("nan"), np.str_("a"), ""]
    memo = align_mod.AlignMemo()
    for _ in range(3000):
        a = [rnd.choice(alphabet) for _ in range(rnd.randint(0, 6))]
        b = [rnd.choice(alphabet) for _ in range(rnd.randint(0, 6))]
        got, want = memo(a, b), align_mod.align(a, b)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (a, b)
