"""Exact conversion of JSON microsecond numbers to int64 nanoseconds.

Trace timestamps are decimal microseconds. Below ~2e12 us a float64 holds
them to well under a nanosecond, so the fast path (floats) is exact after
rounding. At epoch scale (~1.7e15 us: NPU traces, ns-resolution Kineto
traces) a float round trip shifts them by up to ~128 ns and changes which op
contains which, so such values are parsed from their JSON text instead.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import numpy as np

#: Largest |value| in microseconds for which float64 -> int ns is exact.
FLOAT_EXACT_US = 2.0e12


class NumberError(ValueError):
    """A value that is not a finite decimal number (carries the offending text)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def text_us_to_ns(text: bytes | str) -> int:
    """One decimal-microsecond text (JSON number or quoted string) -> ns, rounded half up."""
    b = text.encode() if isinstance(text, str) else bytes(text)
    b = b.strip().strip(b'"').strip()
    neg = b.startswith(b"-")
    body = b[1:] if neg or b.startswith(b"+") else b
    whole, _, frac = body.partition(b".")
    if whole.isdigit() and (not frac or frac.isdigit()) and len(whole) <= 15:
        v = int(whole) * 1000
        if frac:
            v += int(frac[:3].ljust(3, b"0"))
            if len(frac) > 3 and frac[3] >= 53:
                v += 1
        return -v if neg else v
    if b in (b"", b"null"):
        return 0
    try:
        d = Decimal(b.decode("utf-8", "replace"))
    except InvalidOperation:
        raise NumberError(b.decode("utf-8", "replace")) from None
    if not d.is_finite():
        raise NumberError(str(d))
    v = int((d * 1000).to_integral_value(rounding="ROUND_HALF_UP"))
    if not -(2**63) <= v < 2**63:
        raise NumberError(b.decode("utf-8", "replace"))
    return v


def texts_us_to_ns(texts: list) -> np.ndarray:
    """Many decimal-microsecond texts -> int64 ns (exact)."""
    return np.fromiter((text_us_to_ns(t) for t in texts), dtype=np.int64, count=len(texts))
