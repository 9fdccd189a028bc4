"""Sequence alignment of two op/module lists: a true maximum matching (LCS).

The original tool pairs operators with an O(n*m) pure-Python DP whose two rows
alias each other, which leaves matchable operators unmatched and takes hours at
100k operators (spec README, deviation 2). Here the matching is a real longest
common subsequence found with Myers' O((n+m)*D) algorithm in its linear-space
divide-and-conquer form, so the cost grows with the number of differences D,
not with n*m:

* keys are mapped to integers once (``_codes``: a dict for short lists, ``model.factorize`` otherwise);
* elements whose key never occurs on the other side cannot be matched and are
  dropped before the search (a GPU-vs-NPU pair shares only part of its names);
* every sub-problem first strips its common prefix and suffix, and long
  common runs ("snakes") are skipped with numpy slices instead of a Python loop.

Myers' cost grows with D squared, and GPU-vs-NPU pairs differ a lot. So each
middle-snake search runs under a budget proportional to the cost of the
bit-parallel LCS (Allison-Dix / Hyyro: one Python big-int update per element of
the shorter side, the other side's symbol positions as bit masks); a
sub-problem that exceeds it is split by Hirschberg's divide and conquer on the
bit-parallel LCS rows instead (the row at a split is the prefix popcount of the
bit vector), which keeps memory linear and the cost bound independent of D.
The halves carry their exact difference count and go back to Myers when that
is cheap. When few element pairs match at all (mostly distinct names, say a
permutation), Hunt-Szymanski's threshold search costs one binary search per
matching pair and beats both, so a large sub-problem first counts its
matching pairs and takes that path when it is the cheapest. The same counts
bound the LCS by sum(min(count_a, count_b)), hence D from below, so Myers is
not even started where its middle snake lies beyond its budget. Counting is
skipped where D is known to be small: a Myers split bounds its halves' D by
its own. All three paths find a true maximum matching.

Several maximum matchings usually exist. On small problems (``ORIGINAL_MAX_CELLS``) the
original's own pairs are computed too, and kept, with the gaps between them filled by LCS,
whenever that is still a maximum matching, so our sheets pair the same occurrences as the
original's wherever its answer is not short of matches (``preferred_matches``).

The result is two equal-length int64 arrays ``(ia, ib)``: row ``t`` pairs base
element ``ia[t]`` with comparison element ``ib[t]``; ``-1`` stands for "absent".
Rows follow both sequences in order; between two matches the comparison-only
elements come first, then the base-only ones (the original's order in its
documented examples).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence

import numpy as np

from ..model import factorize

__all__ = ["align", "AlignMemo", "lcs_matches", "preferred_matches", "original_pairs", "no_matching"]

#: The keys of one side: a list of hashables, or an array (``preferred_matches`` passes slices of codes).
Keys = Sequence[Hashable] | np.ndarray

#: Common runs longer than this are measured with numpy slices.
_SHORT_RUN = 16

#: Test / benchmark switch: ``None`` chooses per sub-problem, ``"myers"``, ``"bitpar"`` or
#: ``"sparse"`` (Hunt-Szymanski) forces one path (all give a maximum matching).
FORCE_PATH: str | None = None


#: Cost model of the bit-parallel path, in Myers inner steps (see ``_bitpar_cost``);
#: Myers gives up once its middle-snake search has spent ``_ABORT_SHARE`` of it.
_SPLIT_STEPS = 600.0
_AREA_STEPS = 1 / 3300
_ROW_STEPS = 1.0
_ABORT_SHARE = 0.5
#: Upper bound of the symbol bit masks held at once (bytes).
_MASK_BYTES = 32 << 20
#: Cost of the Hunt-Szymanski path in Myers inner steps: per matching pair, per element.
_PAIR_STEPS = 1.4
_ELEMENT_STEPS = 1.0
#: Sub-problems below this many cells never count their matching pairs (Myers or one
#: bit-parallel split is cheap there, and the count costs a sort).
_SPARSE_MIN_CELLS = 1 << 20


def _bitpar_cost(n: int, m: int) -> float:
    """Cost of solving an n x m sub-problem by bit-parallel splits, in Myers inner steps.

    Measured on CPython: a Myers inner step is ~0.45 us, and Myers needs about
    D**2 / 2 of them in all; a bit-parallel row is ~0.35 us plus ~0.066 us per
    1000 bits, Hirschberg walks the short side once per level (twice the area
    in all), and every split has a fixed numpy cost of ~0.25 ms.
    """
    s, lng = (n, m) if n <= m else (m, n)
    return _SPLIT_STEPS + s * (lng * _AREA_STEPS + _ROW_STEPS * s.bit_length())


def _masks(cols: np.ndarray, syms: np.ndarray) -> list[int]:
    """Big-int bit masks: bit j of mask k is set where ``cols[j] == syms[k]`` (``syms`` sorted, unique)."""
    m = len(cols)
    nbytes = (m + 7) >> 3
    k = np.searchsorted(syms, cols)
    k[k == len(syms)] = 0
    pos = np.flatnonzero(syms[k] == cols)
    flat = k[pos] * nbytes + (pos >> 3)
    bit = pos & 7
    buf = np.zeros(len(syms) * nbytes, dtype=np.uint8)
    for b in range(8):  # within one bit position every (symbol, byte) is unique
        sel = bit == b
        buf[flat[sel]] |= np.uint8(1 << b)
    raw = buf.tobytes()
    return [int.from_bytes(raw[i * nbytes:(i + 1) * nbytes], "little") for i in range(len(syms))]


def _lcs_row(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``L[j] = LCS(rows, cols[:j])`` for j = 0..len(cols), by the bit-parallel recurrence.

    Bit j of V is 0 where the LCS row steps up between j and j+1, so the row is
    the prefix count of zero bits. Masks are built for at most
    ``_MASK_BYTES / (len(cols) / 8)`` symbols at a time, so many distinct keys
    cannot exhaust memory.
    """
    m = len(cols)
    nbytes = (m + 7) >> 3
    syms = np.unique(rows)
    chunk = len(rows) if len(syms) * nbytes <= _MASK_BYTES else max(1, _MASK_BYTES // nbytes)
    v = (1 << m) - 1
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        if chunk < len(rows):
            syms = np.unique(part)
        masks = _masks(cols, syms)
        for c in np.searchsorted(syms, part).tolist():
            u = v & masks[c]
            v = (v + u) | (v - u)
    raw = (v & ((1 << m) - 1)).to_bytes(nbytes, "little")
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")[:m]
    out = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(1 - bits.astype(np.int64), out=out[1:])
    return out


def _matching_pairs(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """Number of index pairs (i, j) with ``a[i] == b[j]``, and the bound sum(min(count_a, count_b))
    that no common subsequence can exceed."""
    sa, ca = np.unique(a, return_counts=True)
    sb, cb = np.unique(b, return_counts=True)
    pos = np.searchsorted(sa, sb)
    pos[pos == len(sa)] = 0
    hit = sa[pos] == sb
    both_a, both_b = ca[pos[hit]], cb[hit]
    return int(both_a @ both_b), int(np.minimum(both_a, both_b).sum())


def _sparse_lcs(a: list[int], b: np.ndarray) -> tuple[list[int], list[int]]:
    """A longest common subsequence by Hunt-Szymanski: O((r + n) log n) for r matching pairs.

    ``thresh[k]`` is the smallest b index that ends a common subsequence of length k + 1 so
    far; each a element visits its partners in b in decreasing order, so it extends each
    length at most once. Every improvement is a node linked to the node it extends.
    """
    order = np.argsort(b, kind="stable")
    sb = b[order]
    av = np.asarray(a, dtype=b.dtype)
    lo = np.searchsorted(sb, av, "left").tolist()
    hi = np.searchsorted(sb, av, "right").tolist()
    where = order.tolist()
    thresh: list[int] = []
    tnode: list[int] = []
    node_i: list[int] = []
    node_j: list[int] = []
    node_prev: list[int] = []
    for i in range(len(a)):
        for p in range(hi[i] - 1, lo[i] - 1, -1):
            j = where[p]
            k = bisect_left(thresh, j)
            if k == len(thresh):
                thresh.append(j)
                tnode.append(len(node_i))
            elif thresh[k] > j:
                thresh[k] = j
                tnode[k] = len(node_i)
            else:
                continue
            node_i.append(i)
            node_j.append(j)
            node_prev.append(tnode[k - 1] if k else -1)
    out_a: list[int] = []
    out_b: list[int] = []
    t = tnode[-1] if tnode else -1
    while t >= 0:
        out_a.append(node_i[t])
        out_b.append(node_j[t])
        t = node_prev[t]
    return out_a[::-1], out_b[::-1]


def _codes(a_keys: Keys, b_keys: Keys) -> tuple[np.ndarray, np.ndarray]:
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
    codes, _ = factorize(both)
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
    def _middle_snake(self, a0: int, n: int, b0: int, m: int,
                      budget: float) -> tuple[int, int, int, int, int] | None:
        """Middle snake (x, y, u, v) of a[a0:a0+n] vs b[b0:b0+m] (relative coordinates), and the
        sub-problem's difference count D (the two halves' counts sum to it).

        Both inputs are non-empty and differ at their first and last element.
        Gives up (None) once the search depth squared exceeds ``budget``.
        """
        a, b = self.a, self.b
        delta = n - m
        odd = delta & 1
        maxd = (n + m + 1) // 2
        off = maxd + 1
        vf = [0] * (2 * maxd + 3)
        vb = [0] * (2 * maxd + 3)
        for d in range(maxd + 1):
            if d * d > budget:
                return None
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
                        return xs, ys, x, y, 2 * d - 1
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
                        return n - x, m - y, n - xs, m - ys, 2 * d
        raise AssertionError("middle snake not found")  # pragma: no cover - unreachable

    def _bitpar_split(self, a0: int, n: int, b0: int, m: int) -> list[tuple[int, int, int, int, int, int]]:
        """Hirschberg split of a sub-problem on bit-parallel LCS rows; the halves with their exact D.

        The shorter side is halved (fewer Python steps), the other side is the bit vector.
        """
        an, bn = self.an, self.bn
        if n <= m:
            h = n // 2
            rows_f, rows_r = an[a0:a0 + h], an[a0 + h:a0 + n][::-1]
            cols = bn[b0:b0 + m]
            width = m
        else:
            h = m // 2
            rows_f, rows_r = bn[b0:b0 + h], bn[b0 + h:b0 + m][::-1]
            cols = an[a0:a0 + n]
            width = n
        fwd = _lcs_row(rows_f, cols)
        bwd = _lcs_row(rows_r, cols[::-1])[::-1]  # bwd[j] = LCS(second half, cols[j:])
        j = int(np.argmax(fwd + bwd))
        if n <= m:
            d1 = h + j - 2 * int(fwd[j])
            d2 = (n - h) + (width - j) - 2 * int(bwd[j])
            return [(a0, h, b0, j, d1, d1), (a0 + h, n - h, b0 + j, m - j, d2, d2)]
        d1 = j + h - 2 * int(fwd[j])
        d2 = (width - j) + (m - h) - 2 * int(bwd[j])
        return [(a0, j, b0, h, d1, d1), (a0 + j, n - j, b0 + h, m - h, d2, d2)]

    def _search(self, a0: int, n: int, b0: int, m: int, dist: int,
                most_d: int) -> tuple[tuple[int, int, int, int, int] | None, bool]:
        """The middle snake when Myers is the cheapest path (else None), and whether Hunt-Szymanski beats
        the bit-parallel split. Myers costs about D**2 / 2 steps and meets the middle snake at depth D / 2.
        ``dist`` is the exact D when a bit-parallel split measured it, ``most_d`` an upper bound of it from
        the Myers split that made this half (-1: unknown)."""
        if FORCE_PATH == "myers":
            return self._middle_snake(a0, n, b0, m, float("inf")), False
        if FORCE_PATH in ("bitpar", "sparse"):
            return None, FORCE_PATH == "sparse"
        cost = _bitpar_cost(n, m)
        known = dist if dist >= 0 else most_d
        if known >= 0 and known * known <= 2 * cost:  # D is small (a near copy): Myers, no counting
            return self._middle_snake(a0, n, b0, m, float("inf")), False
        if n * m < _SPARSE_MIN_CELLS:  # too small for the counts' sort to pay
            return (self._middle_snake(a0, n, b0, m, cost * _ABORT_SHARE) if dist < 0 else None), False
        npairs, most = _matching_pairs(self.an[a0:a0 + n], self.bn[b0:b0 + m])
        hunt = npairs * _PAIR_STEPS + (n + m) * _ELEMENT_STEPS
        sparse = hunt < cost
        cost = min(cost, hunt)
        if dist >= 0:  # the exact D is too large for Myers (above): the cheaper of the other two
            return None, sparse
        budget = cost * _ABORT_SHARE  # search until Myers has spent a share of the cheaper other path
        least = n + m - 2 * most  # a lower bound of D: the middle snake lies at depth least / 2 or deeper
        if (least // 2) ** 2 > budget:
            return None, sparse
        return self._middle_snake(a0, n, b0, m, budget), sparse

    def run(self) -> tuple[np.ndarray, np.ndarray]:
        # a task is (a0, n, b0, m, D, bound): D the exact difference count (-1: unknown), bound one no
        # smaller than D (-1: unknown)
        stack = [(0, len(self.a), 0, len(self.b), -1, -1)]
        while stack:
            a0, n, b0, m, dist, most_d = stack.pop()
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
            if n == 1 or m == 1:  # one element: its first equal partner, if any
                if n == 1:
                    hit = np.flatnonzero(self.bn[b0:b0 + m] == self.a[a0])
                    if len(hit):
                        self._emit(a0, b0 + int(hit[0]), 1)
                else:
                    hit = np.flatnonzero(self.an[a0:a0 + n] == self.b[b0])
                    if len(hit):
                        self._emit(a0 + int(hit[0]), b0, 1)
                continue
            snake, sparse = self._search(a0, n, b0, m, dist, most_d)
            if snake is None:
                if sparse:
                    la, lb = _sparse_lcs(self.a[a0:a0 + n], self.bn[b0:b0 + m])
                    self.out_a.extend(i + a0 for i in la)
                    self.out_b.extend(j + b0 for j in lb)
                else:
                    stack.extend(self._bitpar_split(a0, n, b0, m))
                continue
            x, y, u, v, d = snake
            self._emit(a0 + x, b0 + y, u - x)
            stack.append((a0, x, b0, y, -1, d))  # the halves' D sum to d
            stack.append((a0 + u, n - u, b0 + v, m - v, -1, d))
        ia = np.asarray(self.out_a, dtype=np.int64)
        ib = np.asarray(self.out_b, dtype=np.int64)
        order = np.argsort(ia, kind="stable")
        return ia[order], ib[order]


def lcs_matches(a_keys: Keys, b_keys: Keys) -> tuple[np.ndarray, np.ndarray]:
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


#: Problems up to this many DP cells (and comparison elements, the DP's rows) first try the
#: original's own pairing (see ``preferred_matches``); its flag table is about this many bytes.
ORIGINAL_MAX_CELLS = 250_000
ORIGINAL_MAX_ROWS = 1_000


def original_pairs(ca: np.ndarray, cb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs the original's DP picks (reference-2 §0.5), row aliasing included: O(n*m) time
    and a byte per cell for the traceback flags, so ``preferred_matches`` calls it on small
    problems only (at most ``ORIGINAL_MAX_CELLS`` cells).

    ``ca`` (base) and ``cb`` (comparison) are integer key codes. Each DP row is one
    vectorised max-plus scan: with the aliasing, row[j] = row[j-1] + 1 on a key match and
    max(row[j-1], previous row[j]) otherwise, i.e. A[j] + max(0, cummax(prev[k] - A[k]))
    over the non-matching k <= j, where A counts the matches up to j.
    """
    n, m = len(ca), len(cb)
    flags = np.zeros((m + 1, n + 1), dtype=bool)
    row = np.zeros(n + 1, dtype=np.int64)
    never = np.iinfo(np.int64).min // 2
    for i in range(1, m + 1):
        eq = ca == cb[i - 1]
        if i == 1:  # the first row reads a separate all-zero "previous row": nothing is flagged
            row[1:] = np.maximum.accumulate(eq.astype(np.int64))
            continue
        old = row[1:].copy()
        acc = np.cumsum(eq, dtype=np.int64)
        best = np.maximum.accumulate(np.where(eq, never, old - acc))
        new = acc + np.maximum(best, 0)
        left = np.concatenate(([0], new[:-1]))
        flags[i, 1:] = ~eq & (left < old)
        row[1:] = new
    ma: list[int] = []
    mb: list[int] = []
    i, j = m, n
    a, b = ca.tolist(), cb.tolist()
    while i > 0 and j > 0:
        if a[j - 1] == b[i - 1]:
            ma.append(j - 1)
            mb.append(i - 1)
            i -= 1
            j -= 1
        elif flags[i, j]:
            i -= 1
        else:
            j -= 1
    return np.array(ma[::-1], dtype=np.int64), np.array(mb[::-1], dtype=np.int64)


def preferred_matches(a_keys: Sequence[Hashable], b_keys: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """A maximum matching that keeps every pair the original makes, when one exists.

    Several maximum matchings usually exist, and users compare our sheets with the original's.
    On small problems the original's own pairs are computed, the gaps between them are filled
    with longest common subsequences, and the result is used if it is as long as a longest
    common subsequence of the whole; otherwise (the original lost matches there) the plain
    maximum matching of ``lcs_matches`` is returned.
    """
    n, m = len(a_keys), len(b_keys)
    if n == 0 or m == 0 or n * m > ORIGINAL_MAX_CELLS or m > ORIGINAL_MAX_ROWS:
        return lcs_matches(a_keys, b_keys)
    best_a, best_b = lcs_matches(a_keys, b_keys)
    ca, cb = _codes(a_keys, b_keys)
    oa, ob = original_pairs(ca, cb)
    if len(oa) == len(best_a) and np.array_equal(oa, best_a) and np.array_equal(ob, best_b):
        return best_a, best_b
    parts_a, parts_b = [oa], [ob]
    lo_a = np.concatenate(([0], oa + 1))
    lo_b = np.concatenate(([0], ob + 1))
    hi_a = np.concatenate((oa, [n]))
    hi_b = np.concatenate((ob, [m]))
    for a0, a1, b0, b1 in zip(lo_a.tolist(), hi_a.tolist(), lo_b.tolist(), hi_b.tolist(), strict=True):
        if a1 > a0 and b1 > b0:
            ga, gb = lcs_matches(ca[a0:a1], cb[b0:b1])
            parts_a.append(ga + a0)
            parts_b.append(gb + b0)
    ma, mb = np.concatenate(parts_a), np.concatenate(parts_b)
    if len(ma) < len(best_a):
        return best_a, best_b
    order = np.argsort(ma, kind="stable")
    return ma[order], mb[order]


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


def align(a_keys: Sequence[Hashable], b_keys: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Pair two key sequences: a maximum matching (the no-matching mode is ``no_matching``).

    Returns ``(ia, ib)`` int64 arrays of equal length covering every element of
    both sequences exactly once, in order; ``-1`` marks the absent side.
    """
    n, m = len(a_keys), len(b_keys)
    if n == m and list(a_keys) == list(b_keys):  # the common case of module children
        both = np.arange(n, dtype=np.int64)
        return both, both.copy()
    ma, mb = preferred_matches(a_keys, b_keys)
    return _merge(n, m, ma, mb)


class AlignMemo:
    """``align`` of key sequences, each distinct pair of sequences aligned once.

    A training trace repeats the same module children and the same op sequences in every layer and
    step: the GPT-2 pair recorded by ``tools/record_gpu_gpt.py`` (27 steps) asks ModuleCompare for
    17,091 op alignments and module matching for 13,772, of 41 and 40 distinct problems, and the
    operator pairing for 55 thread parts of 4. The result depends only on the two sequences (keys
    equal by ``==`` pair alike), so each is computed once; callers only read the arrays (they are
    shared between repeats)."""

    def __init__(self) -> None:
        self._done: dict[tuple[tuple, tuple], tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, a_keys: Sequence[Hashable], b_keys: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
        """``align(a_keys, b_keys)``, from the memo when this pair of sequences was aligned before."""
        key = (tuple(a_keys), tuple(b_keys))
        got = self._done.get(key)
        if got is None:
            got = self._done[key] = align(a_keys, b_keys)
        return got
