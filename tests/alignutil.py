"""The original's sequence matching (reference-2 §0.5) written out as the spec gives it, in plain Python: the
oracle the alignment tests and the operator-pairing tests check our matching against; and readers of
``align``'s pair arrays."""

from __future__ import annotations

import numpy as np


def pairs(ia: np.ndarray, ib: np.ndarray) -> list[tuple[int | None, int | None]]:
    """The pair arrays as a list of ``(i, j)`` with ``None`` for the absent side."""
    return [(None if i < 0 else i, None if j < 0 else j) for i, j in zip(ia.tolist(), ib.tolist(), strict=False)]


def matched_count(ia: np.ndarray, ib: np.ndarray) -> int:
    """Number of rows pairing two present elements."""
    return int(np.count_nonzero((ia >= 0) & (ib >= 0)))


def original_literal(kb: list, kc: list) -> list[tuple[int, int]]:
    """reference-2 §0.5 written out as the spec gives it (one aliased row, FLAGS, traceback)."""
    n, m = len(kb), len(kc)
    row, prev0, flags = [0] * (n + 1), [0] * (n + 1), set()
    for i in range(1, m + 1):
        p = prev0 if i == 1 else row
        for j in range(1, n + 1):
            if kc[i - 1] == kb[j - 1]:
                row[j] = p[j - 1] + 1
            else:
                left, up = row[j - 1], p[j]
                if left < up:
                    flags.add((i, j))
                    row[j] = up
                else:
                    row[j] = left
    out, i, j = [], m, n
    while i > 0 and j > 0:
        if kb[j - 1] == kc[i - 1]:
            out.append((j - 1, i - 1))
            i, j = i - 1, j - 1
        elif (i, j) in flags:
            i -= 1
        else:
            j -= 1
    return out[::-1]
