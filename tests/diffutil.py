"""The diff rule of the duration sheets, by hand in decimals: a cell (a float of whole ns in µs or ms) read as
the decimal it prints as, the change of two cells to 0.01, a half away from zero (docs/differences.md,
"Duration diffs of every sheet are the exact change")."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal


def _dec(v: float, ns_digits: int | None) -> Decimal:
    """The cell as a decimal; with ``ns_digits`` (3 for µs, 6 for ms) rounded to the ns first, for cells that
    carry a float sum's noise (the original's 66.19499999999998 ms for 66.195)."""
    d = Decimal(repr(float(v)))
    return d if ns_digits is None else d.quantize(Decimal(1).scaleb(-ns_digits), rounding=ROUND_HALF_EVEN)


def exact_diff(base: float, comparison: float, ns_digits: int | None = None) -> float:
    """``comparison - base`` in decimals, to 0.01 with halves away from zero (Decimal's ROUND_HALF_UP)."""
    change = _dec(comparison, ns_digits) - _dec(base, ns_digits)
    return float(change.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)) + 0.0


def on_half(base: float, comparison: float, ns_digits: int | None = None) -> bool:
    """Whether the decimal change lies exactly on a half of 0.01 (where float rounding could go either way)."""
    return abs((_dec(comparison, ns_digits) - _dec(base, ns_digits)).scaleb(2)) % 1 == Decimal("0.5")
