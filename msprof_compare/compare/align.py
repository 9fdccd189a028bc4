"""Sequence alignment of two op/module lists: a true maximum matching (LCS).

The original tool pairs operators with an O(n*m) pure-Python DP whose two rows
alias each other, which leaves matchable operators unmatched and takes hours at
100k operators (spec README, deviation 2). Here the matching is a real longest
common subsequence found with Myers' O((n+m)*D) algorithm in its linear-space
divide-and-conquer form, so the cost grows with the number of differences D,
not with n*m:

* keys are mapped to integers once (``pandas.factorize``);
* elements whose key never occurs on the other side cannot be matched and are
  dropped before the search (a GPU-vs-NPU pair shares only part of its names);
* every sub-problem first strips its common prefix and suffix, and long
  common runs ("snakes") are skipped with numpy slices instead of a Python loop.

The result is two equal-length int64 arrays ``(ia, ib)``: row ``t`` pairs base
element ``ia[t]`` with comparison element ``ib[t]``; ``-1`` stands for "absent".
Rows follow both sequences in order; between two matches the comparison-only
elements come first, then the base-only ones (the original's order in its
documented examples).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd

__all__ = ["align", "lcs_matches", "no_matching", "pairs", "matched_count"]

#: Common runs longer than this are measured with numpy slices.
_SHORT_RUN = 16


def _codes(a_keys: Sequence[Hashable], b_keys: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Map the keys of both sequences to shared integer codes."""
    n = len(a_keys)
    if n + len(b_keys) < 4096:  # a dict is cheaper than factorize's fixed cost on short lists
        table: dict = {}
        ca = [table.setdefault(k, len(table)) for k in a_keys]
        cb = [table.setdefault(k, len(table)) for k in b_keys]
        return np.asarray(ca, dtype=np.int64), np.asarray(cb, dtype=np.int64)
    both = np.empty(n + len(b_keys), dtype=object)
    both[:n] = list(a_keys)
    both[n:] = list(b_keys)
    codes, _ = pd.factorize(both, use_na_sentinel=False)
    codes = codes.astype(np.int64, copy=False)
    return codes[:n], codes[n:]


class _Myers:
    """Linear-space Myers LCS over two int sequences (Python lists + numpy views)."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.an, self.bn = a, b
        self.a, self.b = a.tolist(), b.tolist()
        self.out_a: list[int] = []
        self.out_b: list[int] = []

    # -- common runs -------------------------------------------------------------------------------
    def _fwd_run(self, i: int, j: int, limit: int) -> int:
        """Length of the common run a[i:], b[j:] (at most ``limit``)."""
        a, b = self.a, self.b
        t = 0
        short = min(limit, _SHORT_RUN)
        while t < short and a[i + t] == b[j + t]:
            t += 1
        if t < short or t == limit:
            return t
        step = 256
        while t < limit:
            c = min(step, limit - t)
            neq = self.an[i + t:i + t + c] != self.bn[j + t:j + t + c]
            if neq.any():
                return t + int(neq.argmax())
            t += c
            step *= 4
        return t

    def _bwd_run(self, i: int, j: int, limit: int) -> int:
        """Length of the common run ending just before a[i], b[j] (at most ``limit``)."""
        a, b = self.a, self.b
        t = 0
        short = min(limit, _SHORT_RUN)
        while t < short and a[i - 1 - t] == b[j - 1 - t]:
            t += 1
        if t < short or t == limit:
            return t
        step = 256
        while t < limit:
            c = min(step, limit - t)
            neq = self.an[i - t - c:i - t] != self.bn[j - t - c:j - t]
            if neq.any():
                return t + int(neq[::-1].argmax())
            t += c
            step *= 4
        return t

    def _emit(self, i: int, j: int, length: int) -> None:
        if length > 0:
            self.out_a.extend(range(i, i + length))
            self.out_b.extend(range(j, j + length))

    # -- the search -------------------------------------------------------------------------------
    def _middle_snake(self, a0: int, n: int, b0: int, m: int) -> tuple[int, int, int, int]:
        """Middle snake (x, y, u, v) of a[a0:a0+n] vs b[b0:b0+m] (relative coordinates).

        Both inputs are non-empty and differ at their first and last element.
        """
        a, b = self.a, self.b
        delta = n - m
        odd = delta & 1
        maxd = (n + m + 1) // 2
        off = maxd + 1
        vf = [0] * (2 * maxd + 3)
        vb = [0] * (2 * maxd + 3)
        for d in range(maxd + 1):
            # forward paths with d differences
            for k in range(-d, d + 1, 2):
                if k == -d or (k != d and vf[off + k - 1] < vf[off + k + 1]):
                    x = vf[off + k + 1]
                else:
                    x = vf[off + k - 1] + 1
                y = x - k
                xs, ys = x, y
                if x < n and y < m and a[a0 + x] == b[b0 + y]:
                    r = self._fwd_run(a0 + x, b0 + y, min(n - x, m - y))
                    x += r
                    y += r
                vf[off + k] = x
                if odd:
                    c = delta - k
                    if -(d - 1) <= c <= d - 1 and x + vb[off + c] >= n:
                        return xs, ys, x, y
            # reverse paths with d differences (coordinates counted from the ends)
            for c in range(-d, d + 1, 2):
                if c == -d or (c != d and vb[off + c - 1] < vb[off + c + 1]):
                    x = vb[off + c + 1]
                else:
                    x = vb[off + c - 1] + 1
                y = x - c
                xs, ys = x, y
                if x < n and y < m and a[a0 + n - 1 - x] == b[b0 + m - 1 - y]:
                    r = self._bwd_run(a0 + n - x, b0 + m - y, min(n - x, m - y))
                    x += r
                    y += r
                vb[off + c] = x
                if not odd:
                    k = delta - c
                    if -d <= k <= d and x + vf[off + k] >= n:
                        return n - x, m - y, n - xs, m - ys
        raise AssertionError("middle snake not found")  # pragma: no cover - unreachable

    def run(self) -> tuple[np.ndarray, np.ndarray]:
        stack = [(0, len(self.a), 0, len(self.b))]
        while stack:
            a0, n, b0, m = stack.pop()
            if n == 0 or m == 0:
                continue
            p = self._fwd_run(a0, b0, min(n, m))
            self._emit(a0, b0, p)
            a0 += p
            b0 += p
            n -= p
            m -= p
            if n == 0 or m == 0:
                continue
            s = self._bwd_run(a0 + n, b0 + m, min(n, m))
            self._emit(a0 + n - s, b0 + m - s, s)
            n -= s
            m -= s
            if n == 0 or m == 0:
                continue
            x, y, u, v = self._middle_snake(a0, n, b0, m)
            self._emit(a0 + x, b0 + y, u - x)
            stack.append((a0, x, b0, y))
            stack.append((a0 + u, n - u, b0 + v, m - v))
        ia = np.asarray(self.out_a, dtype=np.int64)
        ib = np.asarray(self.out_b, dtype=np.int64)
        order = np.argsort(ia, kind="stable")
        return ia[order], ib[order]


def lcs_matches(a_keys: Sequence[Hashable], b_keys: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs of a longest common subsequence, increasing in both sequences."""
    if len(a_keys) == 0 or len(b_keys) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    ca, cb = _codes(a_keys, b_keys)
    # Elements whose key is absent on the other side can never be matched.
    ka = np.isin(ca, cb)
    kb = np.isin(cb, ca)
    pa = np.flatnonzero(ka)
    pb = np.flatnonzero(kb)
    if len(pa) == 0 or len(pb) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    ma, mb = _Myers(ca[pa], cb[pb]).run()
    return pa[ma], pb[mb]


def _merge(n: int, m: int, ma: np.ndarray, mb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interleave matches and unmatched elements into one ordered pair list."""
    a_matched = np.zeros(n, dtype=bool)
    a_matched[ma] = True
    b_matched = np.zeros(m, dtype=bool)
    b_matched[mb] = True
    ua = np.flatnonzero(~a_matched)
    ub = np.flatnonzero(~b_matched)
    # gap g = number of matches before the element; match g closes gap g.
    ga = np.searchsorted(ma, ua)
    gb = np.searchsorted(mb, ub)
    gm = np.arange(len(ma), dtype=np.int64)
    gap = np.concatenate([gb, ga, gm])
    rank = np.concatenate([np.zeros(len(ub), np.int64), np.ones(len(ua), np.int64), np.full(len(ma), 2, np.int64)])
    pos = np.concatenate([ub, ua, gm])
    ia = np.concatenate([np.full(len(ub), -1, np.int64), ua, ma])
    ib = np.concatenate([ub, np.full(len(ua), -1, np.int64), mb])
    order = np.lexsort((pos, rank, gap))
    return ia[order], ib[order]


def no_matching(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``--disable_details`` pairing: all base elements alone, then all comparison elements alone."""
    ia = np.concatenate([np.arange(n, dtype=np.int64), np.full(m, -1, np.int64)])
    ib = np.concatenate([np.full(n, -1, np.int64), np.arange(m, dtype=np.int64)])
    return ia, ib


def align(a_keys: Sequence[Hashable], b_keys: Sequence[Hashable], match: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Pair two key sequences: a maximum matching (``match=True``) or the no-matching mode.

    Returns ``(ia, ib)`` int64 arrays of equal length covering every element of
    both sequences exactly once, in order; ``-1`` marks the absent side.
    """
    n, m = len(a_keys), len(b_keys)
    if not match:
        return no_matching(n, m)
    if n == m and list(a_keys) == list(b_keys):  # the common case of module children
        both = np.arange(n, dtype=np.int64)
        return both, both.copy()
    ma, mb = lcs_matches(a_keys, b_keys)
    return _merge(n, m, ma, mb)


def pairs(ia: np.ndarray, ib: np.ndarray) -> list[tuple[int | None, int | None]]:
    """The pair arrays as a list of ``(i, j)`` with ``None`` for the absent side."""
    return [(None if i < 0 else i, None if j < 0 else j) for i, j in zip(ia.tolist(), ib.tolist(), strict=False)]


def matched_count(ia: np.ndarray, ib: np.ndarray) -> int:
    """Number of rows pairing two present elements."""
    return int(np.count_nonzero((ia >= 0) & (ib >= 0)))
