"""Exact conversion of JSON microsecond numbers to int64 nanoseconds.

Trace timestamps are decimal microseconds. Below ~2e12 us a float64 holds
them to well under a nanosecond, so the fast path (floats) is exact after
rounding. At epoch scale (~1.7e15 us: NPU traces, ns-resolution Kineto
traces) a float round trip shifts them by up to ~128 ns and changes which op
contains which, so such values are parsed from their JSON text instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

import msgspec
import numpy as np

from ..errors import ProfileError
from ..model import NO_RANK, us_text_of
from ..textsafe import short_repr
from ..units import MAX_RANK

#: |value| in microseconds up to which float64 -> int ns is taken as exact without a proof; larger floats are
#: proven by a round trip up to 2**42 us (``traceio.float_inexact``), the rest re-read from their text.
FLOAT_EXACT_US = 2.0e12

#: How a time's exact decimal value becomes whole ns: to the nearest, a tie (``23.7405`` us) to the even ns
#: (23.740 us), as ``decimal.ROUND_HALF_EVEN``. One rule for times written as text and as JSON numbers
#: (a float equal to the float of a tie reads as that tie, ``traceio._float_us_to_ns``): ties in a column
#: of durations then round up as often as down, so sums of ns stay as close to the original's exact
#: decimal sums as they can.
ROUNDING = "ROUND_HALF_EVEN"


#: Why a time whose ns do not fit int64 is refused: one wording for every path that reads a time (text, integer,
#: float; a column's line and an event's).
OUT_OF_RANGE = "out of range (beyond int64 nanoseconds)"


class NumberError(ValueError):
    """A value that is not a finite decimal number, or whose ns do not fit int64 (carries the
    offending text and which of the two it is)."""

    def __init__(self, text: str, why: str = "not a number") -> None:
        super().__init__(text)
        self.text = text
        self.why = why
        self.row = -1  # where in a column of texts (``texts_us_to_ns``), for the caller to name its event


class TimeValueError(ProfileError):
    """A trace's time value that reads as no time (``"dur": ""``, ``"N/A"``, beyond int64 ns): the column's error,
    and where in the column (``row``) the value is, with ``field``, the value as shown (None: none, the field absent
    or null) and why (None: no number at all), so that a loader that knows which events the column came from names
    the event, as a refused decode does (``traceio.event_time_error``); a caller that does not gets the column's
    line."""

    def __init__(self, path: str | None, message: str, hint: str | None = None, *, row: int = -1, field: str = "",
                 shown: str | None = "", why: str | None = None) -> None:
        super().__init__(path, message, hint)
        self.row, self.field, self.shown, self.why = row, field, shown, why


def text_us_to_ns(text: bytes | str) -> int:
    """One decimal-microsecond text (JSON number or quoted string) -> ns, its exact value rounded
    half to even (``ROUNDING``)."""
    b = text.encode() if isinstance(text, str) else bytes(text)
    b = b.strip().strip(b'"').strip()
    neg = b.startswith(b"-")
    body = b[1:] if neg or b.startswith(b"+") else b
    whole, _, frac = body.partition(b".")
    if whole.isdigit() and (not frac or frac.isdigit()) and len(whole) <= 15:  # < 2**63 ns
        v = int(whole) * 1000
        if frac:
            v += int(frac[:3].ljust(3, b"0"))
            if len(frac) > 3 and frac[3] >= 53 and (frac[3] > 53 or frac[4:].strip(b"0") or v & 1):
                v += 1
        return -v if neg else v
    if b in (b"", b"null"):
        return 0
    if b"_" in b or not b.isascii():  # Decimal takes "1_000" and non-ASCII digits, which no profiler writes
        raise NumberError(b.decode("utf-8", "replace"))
    try:
        d = Decimal(b.decode("utf-8", "replace"))
    except InvalidOperation:
        raise NumberError(b.decode("utf-8", "replace")) from None
    if not d.is_finite():  # quoted as written ("inf", not Decimal's "Infinity")
        raise NumberError(b.decode("utf-8", "replace"), "not finite")
    v = int((d * 1000).to_integral_value(rounding=ROUNDING))
    if not -(2**63) <= v < 2**63:
        raise NumberError(b.decode("utf-8", "replace"), OUT_OF_RANGE)
    return v


def texts_us_to_ns(texts: Sequence[bytes | msgspec.Raw]) -> np.ndarray:
    """Many raw JSON number texts (bytes or ``msgspec.Raw``) -> int64 ns (exact).

    Plain ``digits.digits`` texts (nearly all of them) go through the vectorised parser; the
    rest (quoted strings, exponents, ``null``) take the exact per-value path, which raises
    ``NumberError`` on junk. Texts of one length (a trace's timestamps, written with a fixed
    number of decimals) are joined into the byte matrix in one C-level step, with no bytes
    object per value.
    """
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if n > _CHUNK:  # bound the temporary byte matrices
        parts = []
        for i in range(0, n, _CHUNK):
            try:
                parts.append(texts_us_to_ns(texts[i:i + _CHUNK]))
            except NumberError as exc:
                exc.row += i
                raise
        return np.concatenate(parts)
    u = same_width_matrix(texts)
    if u is not None:
        fast = _parse_uniform(u)
        if fast is not None:
            val, ok = fast
            rest = np.flatnonzero(~ok)
            if rest.size:  # as _parse_decimal's rows outside the common layout
                try:
                    val[rest] = texts_us_to_ns([bytes(texts[i]) for i in rest.tolist()])
                except NumberError as exc:
                    exc.row = int(rest[exc.row])
                    raise
            return val
    if type(texts[0]) is not bytes:  # numpy reads a Raw as a sequence of ints, not as text
        texts = [bytes(t) for t in texts]
    val, ok = _parse_decimal(texts)
    for i in np.flatnonzero(~ok).tolist():
        try:  # as written first: a text to decode is one it refuses (a backslash or a non-ASCII byte in it)
            val[i] = text_us_to_ns(texts[i])
        except NumberError as exc:
            val[i] = _decoded_text_us_to_ns(texts[i], exc, i)
    return val


def _decoded_text_us_to_ns(text: bytes, exc: NumberError, row: int) -> int:
    """``text_us_to_ns`` of one JSON value's text that it refused as written (``exc``, at ``row`` of its column),
    a string taken as the decode reads it (escapes decoded, blanks stripped as ``decimal_us_to_ns`` strips the
    decoded strings): a string with a JSON escape (``\\u0031`` is "1") or a no-break space around its digits,
    which the decode reads as a time, was refused as "not a number". Asked only after the refusal: a check of
    every text the vectorised parse leaves (a quoted one) cost that per-value path ~15 %."""
    value = None
    if text[:1] == b'"' and (b"\\" in text or not text.isascii()):
        try:
            value = msgspec.json.decode(text)
        except msgspec.DecodeError:  # no JSON string after all: refused as written
            pass
    try:
        if not isinstance(value, str):
            raise exc
        return text_us_to_ns(value.strip())
    except NumberError as err:
        err.row = row
        raise


_DIGIT_LO, _DIGIT_HI, _DOT, _MINUS, _PLUS = 48, 57, 46, 45, 43
_CHUNK = 1 << 18
#: Up to this many digits ``parse_uniform`` weighs them in one product over an int64 copy.
_SMALL_PRODUCT = 1 << 16


def decimal_us_to_ns(values: np.ndarray | list[Any], path: str = "", field: str = "ts") -> np.ndarray:
    """Exact decimal-microsecond values (text, or numbers) -> int64 ns.

    NPU timestamps (~1.7e15 us with 3+ decimals) exceed float64 precision, so
    the digits are parsed directly from a byte matrix (rounding the exact value
    half to even, ``ROUNDING``). Rows are grouped by (dot position, length), making each group
    one integer matrix-vector product. Values with surrounding blanks are
    stripped and parsed again; anything still not ``[+-]digits[.digits]``
    goes to the exact per-value path (which raises ``ProfileError`` on junk and handles exponents).
    """
    vals = values if isinstance(values, list) else list(values)
    val, ok = lenient_us_to_ns(vals)
    for i in np.flatnonzero(~ok).tolist():
        if vals[i] is None:  # ``ts`` absent or null (the other fields cannot decode as None)
            raise TimeValueError(path, f"trace event(s) without a '{field}' value (absent or null)", row=i,
                                 field=field, shown=None)
        if str(vals[i]).strip() in ("", "null"):  # no time at all, not 0
            raise TimeValueError(path, f"invalid '{field}' value {vals[i]!r} in trace events", row=i, field=field,
                                 shown=short_repr(vals[i]))
        try:
            val[i] = text_us_to_ns(str(vals[i]))
        except NumberError as exc:
            raise TimeValueError(path, f"invalid '{field}' value {exc.text!r} in trace events: {exc.why}", row=i,
                                 field=field, shown=short_repr(exc.text), why=exc.why) from None
    return val


def lenient_us_to_ns(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The vectorised part of ``decimal_us_to_ns``: (ns, read) with ``read`` False (and ns 0) for a value
    that is not plainly ``[+-]digits[.digits]``, surrounding blanks allowed. A mask, not a sentinel ns: every
    int64 is the time of some text ("-0.001" reads as -1 ns)."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    if n > _CHUNK:  # bound the temporary byte matrices; each chunk's figures go straight into the column's (the
        # chunks' arrays and their concatenation held the column twice: 2.6M times of a 1 GB trace, +22 MB)
        val, ok = np.empty(n, dtype=np.int64), np.empty(n, dtype=bool)
        for i in range(0, n, _CHUNK):
            val[i:i + _CHUNK], ok[i:i + _CHUNK] = lenient_us_to_ns(values[i:i + _CHUNK])
        return val, ok
    val, ok = _parse_decimal(values)
    if ok.all():
        return val, ok
    # an empty text (a CSV's unset time) reads as nothing stripped or not: only the others are parsed again
    bad = [i for i in np.flatnonzero(~ok).tolist() if values[i] != ""]
    if bad:
        v2, ok2 = _parse_decimal([values[i].strip() if isinstance(values[i], str) else values[i] for i in bad])
        again = np.array(bad, dtype=np.intp)[ok2]
        val[again] = v2[ok2]
        ok[again] = True
    val[~ok] = 0
    return val, ok


@lru_cache(maxsize=1024)
def _weights(dp: int, ln: int, width: int) -> tuple[np.ndarray, int] | None:
    """Digit weights (ns) of a ``digits.digits`` layout with the dot at ``dp`` and ``ln`` bytes, and
    the column of the first dropped decimal (-1: none); None when the value can exceed int64. Cached (a column
    repeats a few layouts, and every parse asks again), so the weights are read-only."""
    w = np.zeros(width, dtype=np.int64)
    rcol = -1
    for j in range(ln):
        if j == dp:
            continue
        e = dp - j + (2 if j < dp else 3)
        if e > 18:
            return None  # >= 1e19 ns is not an int64
        if e >= 0:
            w[j] = 10 ** e
        elif e == -1:
            rcol = j
    w.flags.writeable = False
    return w, rcol


def _rounds_up(digits: np.ndarray, rcol: int, end: int, v: np.ndarray) -> np.ndarray:
    """Whether each truncated ns value ``v`` rounds up (half to even): its first dropped digit is in column
    ``rcol`` and the others run to ``end``; a tie (5 then only zeros) goes to the even ns."""
    first = digits[:, rcol]
    up = first > 5
    tie = first == 5
    if tie.any():
        rest = (digits[tie, rcol + 1:end] != 0).any(axis=1)
        up[tie] = rest | (v[tie] & 1).astype(bool)
    return up


def same_width_matrix(texts: Sequence[bytes | msgspec.Raw]) -> np.ndarray | None:
    """Texts of one non-zero length as an (n, width) byte matrix, joined in one C-level step with no bytes
    object per value (a trace's timestamps, written with a fixed number of decimals); None otherwise."""
    if not len(texts) or not len(texts[0]) or len(set(map(len, texts))) != 1:
        return None
    return np.frombuffer(b"".join(texts), dtype=np.uint8).reshape(len(texts), len(texts[0]))


def _parse_uniform(u: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The common case in one pass: (nearly) every value is unsigned ``digits.digits`` filling the
    whole width with the dot in one column (Ascend timestamps). (ns, ok) for those rows; None when
    fewer than 90% of the rows have that layout."""
    got = parse_uniform(u)
    return None if got is None else got[:2]


def parse_uniform(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    """``_parse_uniform``, with the dot's column: (ns, ok, dot column) or None."""
    n, width = u.shape
    if width > 21 or width < 2:  # one byte: a lone "." has no digit (it read as 0 us: a kernel at time 0)
        return None
    dp = -1
    for r in (n - 1, n // 2, 0):  # a sample row gives the layout (the first rows are often metadata)
        dots = np.flatnonzero(u[r] == _DOT)
        if len(dots) == 1:
            dp = int(dots[0])
            break
    if dp < 0 or dp + 2 > 18:
        return None
    # digits by column (a transposed copy, one row per text position): each test and sum below runs over long
    # contiguous rows instead of across rows of ~20 bytes (~3x faster than row-wise reductions)
    digit = np.ascontiguousarray(u.T) - np.uint8(_DIGIT_LO)  # wraps below '0', so one compare tests for a digit
    ok = digit[dp] == np.uint8(_DOT - _DIGIT_LO + 256)
    if width > 1:  # every other position a digit (the positions but the dot's: two slices, no index array)
        ok &= np.maximum.reduce(digit[:dp], axis=0, initial=0) < 10
        ok &= np.maximum.reduce(digit[dp + 1:], axis=0, initial=0) < 10
    if dp + 2 == 18:  # a leading digit worth 1e18 ns: 9 could overflow int64 (general path decides)
        ok &= digit[0] < 9
    if ok.sum() < 0.9 * n:
        return None
    w, rcol = _weights(dp, width, width)  # type: ignore[misc]  # never None: dp + 2 <= 18 above
    d = digit if ok.all() else digit[:, ok]
    # position by position: an int64 copy of the whole digit matrix took 8 bytes a digit (200 MB for the
    # 1.5M timestamps of a 566 MB trace) and a matrix product over it; the dot's position weighs 0. A few texts
    # (a CSV column, a small trace) take that product over their copy (at most ``_SMALL_PRODUCT`` digits,
    # 512 KB): ~20 numpy calls of fixed cost fewer (191 timestamps: 42 -> 7 us)
    pos = np.flatnonzero(w)
    if pos.size * d.shape[1] <= _SMALL_PRODUCT:
        v = w[pos] @ d[pos].astype(np.int64)
    else:
        v = np.zeros(d.shape[1], dtype=np.int64)
        for j in pos.tolist():
            v += np.multiply(d[j], w[j], dtype=np.int64)
    if rcol >= 0:
        first = d[rcol]
        up = first > 5
        tie = first == 5
        if tie.any():  # a tie (5 then only zeros) goes to the even ns, as ``_rounds_up``
            up[tie] = (d[rcol + 1:width][:, tie] != 0).any(axis=0) | (v[tie] & 1).astype(bool)
        v += up
    val = np.zeros(n, dtype=np.int64)
    val[ok] = v
    return val, ok, dp


def _text_matrix(vals: Sequence[Any]) -> np.ndarray | None:
    """``np.array(vals, dtype="S")`` as an (n, width) byte matrix, for the usual column of ASCII texts of one
    length (a trace's or a CSV's time texts): one join of the texts with line breaks, instead of numpy's
    conversion of each (~0.4 of its time). None for any other column. The texts are all of the first one's
    length when the join holds as many line breaks as it put in, each where a text of that length ends."""
    n = len(vals)
    first = vals[0] if n else None
    if type(first) is not str or not first or "\n" in first:
        return None
    try:
        text = "\n".join(vals)
    except TypeError:  # some value is no str
        return None
    w = len(first)
    if len(text) != n * (w + 1) - 1 or not text.isascii() or text.count("\n") != n - 1:
        return None
    # the rows are read in place, w + 1 bytes apart (the last has no line break after it): appending one copied
    # the whole text again into a fresh buffer
    b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    if not bool((b[w::w + 1] == 10).all()):
        return None
    return np.lib.stride_tricks.as_strided(b, shape=(n, w), strides=(w + 1, 1), writeable=False)


def _parse_decimal(vals: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Parse what is plainly ``[+-]digits[.digits]``; returns (ns, ok) per value."""
    n = len(vals)
    val = np.zeros(n, dtype=np.int64)
    u = _text_matrix(vals)
    if u is None and n and type(vals[0]) is str and isinstance(vals, list) and "" in vals:
        # a CSV column with unset times: its times alone are texts of one layout, which the one-layout pass below
        # reads, where the empty texts among them (a tenth of operator_memory.csv's Release Time(us) cells) made
        # the column one of two lengths, and then one of several layouts, read layout by layout (~2x the time)
        full = [i for i, v in enumerate(vals) if v != ""]
        ok = np.zeros(n, dtype=bool)
        if full:
            val[full], ok[full] = _parse_decimal([vals[i] for i in full])
        return val, ok
    if u is None:
        try:
            raw = np.array(vals, dtype="S")
        except (UnicodeEncodeError, TypeError, ValueError):
            return val, np.zeros(n, dtype=bool)
        u = raw.view(np.uint8).reshape(n, raw.dtype.itemsize)
    width = u.shape[1]
    if width == 0 or width > 40:
        return val, np.zeros(n, dtype=bool)
    fast = _parse_uniform(u)
    if fast is not None:
        val, ok = fast
        if ok.all():
            return val, ok
        # the few other values take the general path; an empty text (a CSV's unset time) is none
        rest = np.array([i for i in np.flatnonzero(~ok).tolist() if vals[i] != ""], dtype=np.intp)
        if rest.size:
            v2, ok2 = _parse_decimal([vals[i] for i in rest.tolist()])
            val[rest] = v2
            ok[rest] = ok2
        return val, ok
    first = u[:, 0]
    neg = first == _MINUS
    signed = neg | (first == _PLUS)
    if signed.any():
        u = u.copy()
        u[signed, 0] = 48  # a leading sign reads as a zero digit
    is_digit = (u >= _DIGIT_LO) & (u <= _DIGIT_HI)
    is_dot = u == _DOT
    is_pad = u == 0
    n_pad = is_pad.sum(axis=1)
    length = width - n_pad
    n_dot = is_dot.sum(axis=1)
    n_digit = is_digit.sum(axis=1)
    ok = (n_digit + n_dot + n_pad == width) & (n_dot <= 1) & (n_digit > signed)
    if n_pad.any():  # padding must be trailing: no pad byte before ``length``
        ok &= ~(is_pad & (np.arange(width)[None, :] < length[:, None])).any(axis=1)
    dot = np.where(n_dot > 0, np.argmax(is_dot, axis=1), length)
    key = dot.astype(np.int64) * 64 + length
    # the rows of each layout from one sort of the parsed rows' keys (durations come in a dozen layouts: a scan of
    # all rows per layout cost more than the layout's parse)
    cand = np.flatnonzero(ok)
    order = cand[np.argsort(key[cand].astype(np.int16), kind="stable")]  # < 41 * 64: a radix sort
    keys = key[order]
    cuts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(order)]
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        if a == b:
            continue
        rows = order[a:b]
        k = int(keys[a])
        dp, ln = k // 64, k % 64
        got = _weights(dp, ln, width)
        if got is None:
            ok[rows] = False
            continue
        w, rcol = got
        sub = u[rows].astype(np.int64) - _DIGIT_LO
        if dp + 2 == 18:  # a leading digit worth 1e18 ns: 9 could overflow int64
            big = sub[:, 0] >= 9
            if big.any():
                ok[rows[big]] = False
                rows, sub = rows[~big], sub[~big]
        v = sub @ w
        if rcol >= 0:
            v += _rounds_up(sub, rcol, ln, v)
        val[rows] = v
    return np.where(neg, -val, val), ok


#: Plausibility bound of a reserved-memory reading, 1 PB: above it (or below 0) a value is no reading.
MAX_RESERVED_BYTES = 10**15

#: Plausibility bound of one event's duration, a week: no task, kernel or op of a profile lasts that long, so a
#: longer one is a damaged time (a task ending at int64 max lasted 237 years and made E2E 7.5e12 ms). Read as 0
#: with one warning per file, as a negative duration is.
MAX_DURATION_NS = 7 * 86_400 * 10**9
LONG_DURATION_TEXT = "last over a week (a damaged time?); read as 0"


def odd_pmu_note(count: int, where: str) -> str:
    """The one warning of a file's PMU times below 0 or over ``MAX_DURATION_NS`` (no counter reading, read as 0),
    worded alike for kernel_details.csv and TASK_PMU_INFO, which hold the same figures. ``where``: the columns."""
    return (f"{count:,} PMU time(s) negative or over a week (a damaged counter?) in {where}; read as 0, so such a "
            "kernel passes no PMU Cube test and adds no MC2 computing time by them")


def odd_ranks_note(count: int, where: str, first: str) -> str:
    """The one warning of the HCCL tasks' peer rank values that are no rank id, worded alike for a trace's HCCL
    task args and a DB's COMMUNICATION_TASK_INFO, which hold the same figures. A rank id is an integer from 0 to
    ``MAX_RANK``; HCCL's ``NO_RANK`` and a missing value mean no peer and are not counted. ``where``: the values
    ("HCCL task src rank / dst rank"); ``first``: the first counted, as the export writes it."""
    return (f"{count:,} {where} value(s) are no rank id (an integer from 0 to {MAX_RANK}, or {NO_RANK}: no peer; "
            f"the first: {first}); the world size check's lower bound leaves them out")


def repeated_rows_note(count: int, rows: str, written: str, counted: str) -> str:
    """The one warning of a table's rows that repeat an earlier row in every column read (a file joined from two
    copies), worded alike for kernel_details.csv, operator_memory.csv and a DB's OP_MEMORY: each row counts, as in
    the original. ``rows``: what they are ("row(s)"); ``written``: the thing written again ("allocation");
    ``counted``: the figures counted twice, with their verb ("those kernels' time counts")."""
    return (f"{count:,} {rows} repeat an earlier row in every column read (the same {written} written again, as in a "
            f"file joined from two copies); each row counts, as in the original, so {counted} more than once")


def zero_odd_durations(dur: np.ndarray) -> tuple[int, int]:
    """Set negative and over-``MAX_DURATION_NS`` durations of ``dur`` to 0 in place; returns how many of each
    (for the loaders' one warning line each, ``duration_notes``)."""
    neg, long = dur < 0, dur > MAX_DURATION_NS
    n_neg, n_long = int(neg.sum()), int(long.sum())
    if n_neg or n_long:
        dur[neg | long] = 0
    return n_neg, n_long


def duration_notes(path: str, negative: int, too_long: int) -> list[str]:
    """The warning lines for the events ``zero_odd_durations`` read as 0."""
    notes = [f"{path}: {negative:,} event(s) with a negative duration; read as 0"] if negative else []
    if too_long:
        notes.append(f"{path}: {too_long:,} event(s) {LONG_DURATION_TEXT}")
    return notes


def late_releases(alloc_ns: np.ndarray, release_ns: np.ndarray, where: str) -> tuple[np.ndarray, str]:
    """Memory blocks released over ``MAX_DURATION_NS`` after their allocation, and the one warning that says them
    ("" where none), shared by the text and DB loaders, which read them as never released (as a negative release):
    no block of a profile is held a week, and a release time of 2**62 ns reached the Allocated Duration figures as
    2.9e12 ms. The spec's duration (release - allocation) is kept for every plausible block; bounding a damaged one
    by the profile's end would make up a release time. ``where``: the release column, for the warning."""
    late = (alloc_ns > 0) & (release_ns > 0) & (release_ns - alloc_ns > MAX_DURATION_NS)
    if not late.any():
        return late, ""
    i = int(np.argmax(late))
    first = (f"allocated at {us_text_of(int(alloc_ns[i]))} us, released at {us_text_of(int(release_ns[i]))} us")
    return late, (f"{int(late.sum()):,} {where} value(s) come over a week after the block's allocation (a damaged "
                  f"time?; the first: {first}); read as never released (duration 0)")


def memory_oddities(negative: np.ndarray, backwards: np.ndarray, size_name: str,
                    huge: np.ndarray | None = None) -> str:
    """One warning text for memory records with a negative size or one over 1 PB (``huge``; both read as 0) or
    released before they were allocated (duration read as 0), or "" when there are none; shared by the text and
    DB loaders."""
    parts = []
    if negative.any():
        parts.append(f"{int(negative.sum()):,} negative {size_name} value(s) read as 0")
    if huge is not None and huge.any():
        parts.append(f"{int(huge.sum()):,} {size_name} value(s) over 1 PB read as 0")
    if backwards.any():
        parts.append(f"{int(backwards.sum()):,} block(s) released before their allocation (duration read as 0)")
    return "; ".join(parts)
