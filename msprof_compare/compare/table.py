"""The one thing comparators hand to reporters: a sheet.

A sheet is a DataFrame plus the layout facts the workbook needs (header
groups, column styles, widths, optional per-row styles). Comparators build
sheets; reporters (xlsx, JSON, console) only render them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

from ..model import column_index, object_array

#: Header names whose cells are "worse" (red) when > 1 (reference-2 §8.4).
RATIO_HEADERS = frozenset({"Diff Ratio", "Diff Total Ratio", "Diff Avg Ratio", "Diff Calls Ratio", "Diff Self Ratio",
                           "E2E Diff Ratio"})

#: Column styles: number format of the data cells.
STYLE_INT = "int"        # '#,##0'; also the original's format of most text columns (names, shapes)
STYLE_FLOAT = "float"    # '#,##0.00'
STYLE_MS3 = "ms3"        # '#,##0.000': the Summary's ms figures, to the µs as the console shows them
STYLE_RATIO = "ratio"    # '0.00%'
#: '0.00##########%': as ``STYLE_RATIO``, and the further places (12 of percent at most) a value holds where two
#: cannot show which side of a threshold it is on (the Ranks sheet's E2E Diff Ratio, ``gate.shown_ratio``)
STYLE_RATIO_FINE = "ratio_fine"
STYLE_TEXT = "text"      # plain string (always written as a string, never a formula)
STYLE_BOLD = "bold"      # bold string (e.g. the Kernel column of KernelCompare)


#: The dtype this pandas gives a column of ``str`` (pandas 3: its ``str`` dtype; pandas 2: object).
TEXT_DTYPE = pd.Series(["text"]).dtype

#: ``Sheet.frame``'s dtype for an object column whose cells (blanks aside) are all of one
#: ``pd.api.types.infer_dtype`` kind.
_FRAME_DTYPES: dict[str, Any] = {"integer": "Int64", "floating": np.dtype(np.float64),
                                 "mixed-integer-float": np.dtype(np.float64), "string": TEXT_DTYPE}

#: Column styles of numbers that are no counts: an all-blank column of one of these is float64 in ``Sheet.frame``.
_FLOAT_STYLES = frozenset({STYLE_FLOAT, STYLE_MS3, STYLE_RATIO, STYLE_RATIO_FINE})


@dataclass(frozen=True)
class Column:
    """One column of a sheet: displayed header, cell style and width."""

    header: str
    style: str = STYLE_TEXT
    width: float = 20


@dataclass
class Sheet:
    """A comparator's output table.

    ``data`` has one DataFrame column per entry of ``columns``, in order
    (its own column labels are ignored by reporters: headers repeat between
    the base and comparison halves). ``base_span`` / ``comparison_span`` are
    the 0-based inclusive column ranges merged in row 1 under
    "Base Profiling: ..." and "Comparison Profiling: ..." (their headers green / yellow; with
    ``stacked_captions`` the captions go to rows 1 and 2 of the base column instead).
    ``row_styles`` (optional) gives a fill per data row ("blue", "light_blue" or "").
    ``stacked_captions``: the comparison caption goes under the base one (row 2, same column), for
    sheets whose spans are single narrow columns, where a caption beside the other would be clipped.
    """

    name: str
    columns: list[Column]
    data: pd.DataFrame
    base_span: tuple[int, int]
    comparison_span: tuple[int, int]
    row_styles: list[str] | None = None
    stacked_captions: bool = False

    @property
    def headers(self) -> list[str]:
        """Display headers in column order (row 3 of the sheet; repeats allowed, unlike DataFrame columns)."""
        return [c.header for c in self.columns]

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        # the generated repr printed the whole DataFrame and every Column: pages in a notebook for one table
        return f"{type(self).__name__}(name={self.name!r}, rows={len(self.data)}, columns={len(self.columns)})"

    def frame(self) -> pd.DataFrame:
        """The data as a pandas user reads a table: display headers (duplicates suffixed ``.1``, as pandas reads the
        xlsx), and each column of cells of one kind with blanks typed as that kind, blanks missing: whole numbers
        nullable ``Int64`` (``<NA>``; a count column without a blank stays int64), other numbers float64 (NaN),
        text pandas' string dtype (``str`` on pandas >= 3, NaN; object on older pandas, None). A column all blank
        takes the type of the column with the same header in the other half, else its style's (a time or ratio:
        float64; else text). The detail comparators keep such columns ``object`` holding None (a blank cell to
        the writers), on which a notebook's ``nlargest``, ``plot``, ``describe`` or ``.str`` fail or skip them. A
        column of numbers and text (OverallMetrics' "/" counts) stays ``object``, as the workbook shows it."""
        return typed_columns(self.labelled(), self.headers, [c.style for c in self.columns])

    def labelled(self) -> pd.DataFrame:
        """The data with display headers (duplicates suffixed ``.1``) and its cells as written, a blank one None:
        the JSON report's rows, whose whole numbers stay whole."""
        seen: dict[str, int] = {}
        names = []
        for h in self.headers:
            k = seen.get(h, 0)
            names.append(h if k == 0 else f"{h}.{k}")
            seen[h] = k + 1
        out = self.data.copy()
        out.columns = names
        return out


def typed_columns(out: pd.DataFrame, headers: list[str] | None = None,
                  styles: list[str] | None = None) -> pd.DataFrame:
    """``out`` (changed in place and returned) with each ``object`` column of cells of one kind and blanks typed as
    ``Sheet.frame`` says; an all-blank column takes the type of the column with the same ``headers`` entry, else
    float64 for a number ``styles`` entry, else text."""
    typed: dict[int, Any] = {}
    empty: list[int] = []
    for i, dtype in enumerate(out.dtypes):
        if isinstance(dtype, np.dtype) and dtype.kind == "O":
            col = out.iloc[:, i]
            kind = pd.api.types.infer_dtype(col, skipna=True)
            if kind == "empty":
                empty.append(i)
                continue
            target = _FRAME_DTYPES.get(kind)
            if target == "Int64" and not col.isna().any():
                target = np.dtype(np.int64)
            if target is not None:
                try:
                    out.isetitem(i, col.astype(target))
                except (OverflowError, TypeError, ValueError):  # an int beyond int64: kept as it is
                    continue
        typed[i] = out.dtypes.iloc[i]
    for i in empty:
        twins = [typed[j] for j, h in enumerate(headers or ()) if h == headers[i] and j in typed] if headers else []
        if twins:
            target = "Int64" if twins[0] == np.int64 else twins[0]
        else:
            target = np.dtype(np.float64) if styles and styles[i] in _FLOAT_STYLES else TEXT_DTYPE
        out.isetitem(i, out.iloc[:, i].astype(target))
    return out


def diff_ratio(base: float, comparison: float) -> tuple[float, float]:
    """The shared diff/ratio rule (reference-2 §0.1): diff rounded to 2 places, ratio (``ratio_of``) to 4. A diff
    that rounds to zero is +0.0 (``+ 0.0``): a -0.0 showed as "-0" in the workbook and the JSON. Duration diffs
    of whole-ns cells use ``exact_diffs`` instead."""
    return round(comparison - base, 2) + 0.0, ratio_of(base, comparison)


def ratio_of(base: float, comparison: float) -> float:
    """Comparison over base to 4 places; 1.0 when both are zero, +inf when only the base is zero."""
    if not base and not comparison:
        return 1.0
    if not base:
        return math.inf
    return round(comparison / base, 4)


def column_at(frame: pd.DataFrame, j: int) -> pd.Series:
    """``frame.iloc[:, j]``: column ``j`` by position, looked up by its label where the labels are unique (the
    sheets' are): pandas' positional indexer costs ~25-40 us a column against ~10 for a label, and the Summary
    reads the statistic sheets' columns by position ~20 times a run (reference-2 fixes their layouts)."""
    return frame[frame.columns[j]] if frame.columns.is_unique else frame.iloc[:, j]


def sheet_numbers(column: pd.Series | np.ndarray) -> np.ndarray:
    """A sheet's column as float64, a blank (None / NaN) or a cell that is no number read as 0: number and blank
    cells convert as they are; a column with text goes through ``pd.to_numeric``."""
    try:
        v = np.array(column, dtype=np.float64)  # a copy: None and NaN read as NaN
    except (TypeError, ValueError):
        v = pd.to_numeric(pd.Series(column, dtype=object), errors="coerce").to_numpy(dtype=np.float64, copy=True)
    v[np.isnan(v)] = 0.0
    return v


def text_cells(column: pd.Series) -> np.ndarray:
    """``column.astype(str).to_numpy(dtype=object)``: a sheet's column as text cells, as pandas' str rule reads
    them. A column of pandas' str dtype, of str objects only, or of int64 is read without the conversion, which
    copied and checked every cell again (45-70 us a column of the 105-row ModuleCompareStatistic, whose columns
    the Summary's checks and contributors read five times a run); any other column goes through pandas. The
    array is always the caller's own: writing into it leaves the sheet as it was."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        if dtype == np.int64:  # pandas writes an int as ``str`` does
            return object_array([str(v) for v in column.to_numpy().tolist()])
        if dtype.kind == "O":
            values = column.to_numpy()
            if set(map(type, values.tolist())) == {str}:
                return values.copy()
    elif dtype == TEXT_DTYPE:  # pandas >= 3: str cells, or missing ones, which astype(str) keeps as they are
        # a copy: without one pandas hands out the column's own writable cells, which a write would change
        return column.to_numpy(dtype=object, copy=True)
    # a copy here too: pandas 3's astype(str) keeps an object column of str-like cells (numpy's str_) as it is
    return column.astype(str).to_numpy(dtype=object, copy=True)


def py_round(x: np.ndarray, ndigits: int) -> np.ndarray:
    """Python's ``round(v, ndigits)`` of each float of ``x``, bit for bit, without a per-value call.

    ``np.round`` scales, rounds and unscales, so a product within rounding error of a half-unit
    (0.285 * 100) can round the other way than Python, which rounds the exact binary value half-even.
    Such values (and non-finite or huge ones) go through ``round`` itself; for the rest the scaled
    product rounds to the same integer, and dividing it by the scale is the nearest double to the
    decimal result, which is what ``round`` returns.
    """
    x = np.asarray(x, dtype=np.float64)
    scale = 10.0 ** ndigits
    with np.errstate(all="ignore"):  # inf / nan products are redone by round() below
        t = x * scale
        out = np.rint(t) / scale
        # |fl(t) - t| <= |t| * 2**-53: a margin of 2**-50 leaves every possible tie to round()
        safe = np.abs(np.abs(t - np.trunc(t)) - 0.5) > np.abs(t) * 2.0 ** -50
        safe &= np.abs(t) < 2.0 ** 52
    risky = np.flatnonzero(~safe)
    if risky.size:
        out[risky] = [round(v, ndigits) for v in x[risky].tolist()]
    return out


def diff_ratios(base: np.ndarray, comparison: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``diff_ratio`` of each pair of two float columns (float64 arrays, bit-identical to the scalar rule)."""
    base = np.asarray(base, dtype=np.float64)
    comparison = np.asarray(comparison, dtype=np.float64)
    zero = base == 0
    with np.errstate(all="ignore"):  # overflow to inf, as Python's float arithmetic
        diff = py_round(comparison - base, 2) + 0.0
        ratio = py_round(comparison / np.where(zero, 1.0, base), 4)
    ratio[zero] = np.where(comparison[zero] == 0, 1.0, math.inf)
    return diff, ratio


def half_up_ns(ns: float, unit_ns: int, places: int) -> float:
    """A whole-ns time (or change) in units of ``unit_ns`` ns to ``places`` decimals, a half away from zero, for a
    text that shows it with ``places`` digits: ``ns / unit_ns`` formatted by its binary value rounds a half either
    way (4.5 us showed as +0.004 ms, 2.5 us as +0.003; 4.5 ms as 0.004 s)."""
    step = unit_ns // 10 ** places
    q, rest = divmod(abs(round(ns)), step)
    return math.copysign(q + (2 * rest >= step), ns) / 10 ** places + 0.0


def ms3(ns: float) -> float:
    """A text's ms with 3 decimals: whole ns to the us, a half away from zero (``half_up_ns``)."""
    return half_up_ns(ns, 10**6, 3)


def ms3_of(ns: np.ndarray) -> np.ndarray:
    """``ms3`` of each whole-ns int64 value, by array operations (the same quotient: |q| + half-up bit, signed,
    divided by 1000), for texts made by the hundred (the module sheets' kernel summaries)."""
    ns = np.asarray(ns, np.int64)
    q, rest = np.divmod(np.abs(ns), 1000)
    return np.copysign(q + (2 * rest >= 1000), ns) / 1000 + 0.0


def ms_places(base_ns: int, comp_ns: int) -> int:
    """The decimals of ms, 3 to 6 (whole ns), that show two different whole-ns times apart and their change as
    no zero, for a "base ms -> comparison ms (change ms)" text: 999,500 -> 1,000,499 ns read "1.000 ms -> 1.000 ms
    (+0.001 ms)", two figures alike of a change, and 1,000,400 -> 1,000,600 ns "1.000 ms -> 1.001 ms (+0.000 ms)";
    they read 0.9995 -> 1.0005 (+0.0010) and 1.0004 -> 1.0006 (+0.0002). Equal times: 3."""
    if base_ns == comp_ns:
        return 3
    for places in range(3, 6):
        if (half_up_ns(base_ns, 10**6, places) != half_up_ns(comp_ns, 10**6, places)
                and half_up_ns(comp_ns - base_ns, 10**6, places)):
            return places
    return 6


def ms_text(ns: float, places: int = 3, sign: bool = False) -> str:
    """A whole-ns time (or change, ``sign``) as ms to ``places`` decimals, a half away from zero (``half_up_ns``),
    without the unit."""
    return f"{half_up_ns(ns, 10**6, places):{'+' if sign else ''}.{places}f}"


def pct_text(base: int, comp: int) -> str:
    """The change from ``base`` to ``comp`` in percent of the base, signed, 2 decimals ("+0.10%"); "N/A" of a 0 base."""
    return f"{(comp - base) / base * 100:+.2f}%" if base else "N/A"


def ms_change(base_ns: int, comp_ns: int, zero_base_pct: bool = True) -> str:
    """"base ms -> comparison ms (change ms, pct)" of two whole-ns times, to the decimals that show two different
    times apart (``ms_places``): the verdict's, the ranks', the cycles' and the communication line's.
    ``zero_base_pct`` False: no percentage of a 0 base ("0.000 ms -> 1.000 ms (+1.000 ms)"), where "N/A" is
    written otherwise."""
    places = ms_places(base_ns, comp_ns)
    pct = f", {pct_text(base_ns, comp_ns)}" if base_ns or zero_base_pct else ""
    return (f"{ms_text(base_ns, places)} ms -> {ms_text(comp_ns, places)} ms "
            f"({ms_text(comp_ns - base_ns, places, sign=True)} ms{pct})")


def ms_alike(base_ns: int, comp_ns: int) -> bool:
    """Whether two whole-ns times read as one at the 0.001 ms shown, their change too ("+0.000"): a text then says
    "X ms on both sides", where ``ms_change`` would need more decimals to show them apart. 999,500 -> 1,000,499 ns
    are not alike (1.000 and 1.000, but +0.001: a change that shows), 1,000,400 -> 1,000,600 neither (1.000 and
    1.001)."""
    return ms3(base_ns) == ms3(comp_ns) and not ms3(comp_ns - base_ns)


def half_up(value: float, places: int) -> float:
    """A float cell (ms to the ns) to ``places`` decimals, a half away from zero, for a text that shows it with
    ``places`` digits: the decimal the cell stands for (its shortest repr) is rounded, as ``half_up_ns`` rounds
    whole ns, not its binary value (``round`` read 0.0045 ms, 0.00449999... as a float, as 0.004 but 0.0025 as
    0.003). A non-finite value is returned as it is."""
    value = float(value)
    if not math.isfinite(value):
        return value
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)) + 0.0  # no -0.0


def decimal_diff(base: float, comparison: float) -> float:
    """``comparison - base`` of two float cells as the difference of the decimals they stand for (0.0045 for
    1.0045 -> 1.009, where the float difference is 0.004499999...), for ``half_up``."""
    if not (math.isfinite(base) and math.isfinite(comparison)):
        return comparison - base
    return float(Decimal(repr(float(comparison))) - Decimal(repr(float(base))))


def exact_diffs(base: np.ndarray | list, comparison: np.ndarray | list, ns_per_unit: int) -> np.ndarray:
    """Diff cells of durations that are whole ns (cells ``ns / ns_per_unit``, e.g. 1000 for µs, 10**6 for ms): the
    exact change to 0.01 unit, a half away from zero, as OverallMetrics' Diff Duration. ``round(c - b, 2)`` of the
    float cells rounds a change lying on a half either way by the cells' binary error: one kernel 15 us longer read
    0.02 ms on OverallMetrics but 0.01 on OperatorCompareStatistic, 25 us read 0.02 there and 0.03 on
    ModuleCompareStatistic (docs/differences.md)."""
    scale = float(ns_per_unit)
    with np.errstate(all="ignore"):
        b = np.rint(np.asarray(base, dtype=np.float64) * scale)
        c = np.rint(np.asarray(comparison, dtype=np.float64) * scale)
    finite = np.isfinite(b) & np.isfinite(c) & (np.abs(b) < 2.0 ** 62) & (np.abs(c) < 2.0 ** 62)
    change = np.where(finite, c, 0.0).astype(np.int64) - np.where(finite, b, 0.0).astype(np.int64)
    step = ns_per_unit // 100
    hundredths, rest = np.divmod(np.abs(change), step)
    hundredths += 2 * rest >= step
    out = np.copysign(hundredths.astype(np.float64), change) / 100 + 0.0
    if not finite.all():  # a cell no ns count holds (inf, nan): the float rule
        odd = ~finite
        out[odd] = diff_ratios(np.asarray(base, np.float64)[odd], np.asarray(comparison, np.float64)[odd])[0]
    return out


#: Cell types pandas never converts: a column holding any of them is an object column of the cells as they are.
_CONTAINERS = frozenset({list, tuple, dict})
#: Mixes of text and these (no float: NaN is a missing text) that pandas infers as object cells as they are.
_TEXT_MIXES = frozenset({str, int, bool})


def _typed(values: tuple) -> Any:
    """The column pandas would infer from ``values`` when they are all of one plain type (float, int within
    int64, str, bool, None), or hold lists, tuples or dicts (object cells: the communication totals' task ties), or
    mix text with ints or flags (object cells: OverallMetrics' counts beside its text cells), built without the
    inference (a 1-row column of lists cost ~50 us there); None for anything else (pandas infers it)."""
    kinds = set(map(type, values))
    if len(kinds) != 1:
        return object_array(values) if not kinds.isdisjoint(_CONTAINERS) or str in kinds and kinds <= _TEXT_MIXES \
            else None
    kind = kinds.pop()
    if kind in _CONTAINERS:
        return object_array(values)
    if kind is float:
        return np.array(values, dtype=np.float64)
    if kind is int:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:  # pandas makes uint64 or object of such ints
            return None
    if kind is str:
        return object_array(values) if isinstance(TEXT_DTYPE, np.dtype) else _text_array(object_array(values))
    # the one-row frames of the Summary (communication, memory, match rate) hold flags and None cells: pandas'
    # inference of each such column cost ~25 us (the communication totals' 22 columns: 0.29 ms)
    if kind is bool:
        return np.array(values, dtype=bool)
    if kind is type(None):  # pandas keeps an all-None column as object holding None
        return object_array(values)
    return None


#: Whether pandas' str columns hold Python strings in an object array (pandas 3 without pyarrow)
_PYTHON_TEXT = getattr(TEXT_DTYPE, "storage", None) == "python"


def _text_array(values: np.ndarray) -> Any:
    """``pd.array(values, dtype=TEXT_DTYPE)`` of a fresh object array of str (``_typed``'s), taking it as its
    storage: ``StringArray`` checks the values in one C-level pass where ``pd.array`` of the tuple converted
    each one (a hundred texts ~12 against ~4 us, 100k 11.9 against 4.9 ms; ~25 columns a compare). An object
    array the caller keeps (``_text_column``) still goes through ``pd.array``, which copies it faster."""
    if _PYTHON_TEXT:
        try:
            got = pd.arrays.StringArray(values, dtype=TEXT_DTYPE)
        except (TypeError, ValueError):  # a pandas whose StringArray takes no dtype
            pass
        else:
            if got.dtype == TEXT_DTYPE:
                return got
    return pd.array(values, dtype=TEXT_DTYPE)


def own_array(series: pd.Series) -> Any:
    """The array a Series holds, as ``DataFrame._from_arrays`` takes it, by public API only: the ndarray itself
    for numpy dtypes (``Series.array`` wraps those), else its ExtensionArray (datetimes: DatetimeArray). The very
    object pandas' private ``Series._values`` returns (``test_table.py``: ``test_own_array_is_the_series_array``)."""
    arr = series.array
    dtype = series.dtype
    return arr.to_numpy() if isinstance(dtype, np.dtype) and dtype.kind not in "mM" else arr


def plain_frame(columns: dict[str, Any], order: list[str] | None = None, objects: bool = False) -> pd.DataFrame:
    """``pd.DataFrame(columns, columns=order)`` (labels and dtypes alike) for equal-length 1-d columns: lists
    or tuples of one plain type and object arrays of str are built as pandas would infer them (``_typed``),
    other numpy and extension arrays and RangeIndex Series are taken as they are, and only the rest goes
    through pandas' inference; scalars, ragged or indexed columns, or an ``order`` other than the keys', go to
    the constructor itself. The comparators' tables are a few dozen rows, where inference and the
    constructor's checks were most of the cost (~0.1-0.2 ms a frame).

    ``objects``: object arrays are object columns as they are, as ``pd.Series(v, dtype=object)`` would give
    them (tables of mixed cells: a Series per column cost ~27 us)."""
    def slow(order: list[str] | None = None) -> pd.DataFrame:  # pandas' constructor, object arrays pinned
        pinned = {c: pd.Series(v, dtype=object, copy=False) if isinstance(v, np.ndarray) and v.dtype == object
                  and v.ndim == 1 else v for c, v in columns.items()} if objects else columns
        return pd.DataFrame(pinned, columns=order)

    if order is not None and list(order) != list(columns):  # a selection or another order: pandas' rules
        return slow(order)
    n = -1
    arrays: list[Any] = []
    for v in columns.values():
        if isinstance(v, pd.Series):
            if not (isinstance(v.index, pd.RangeIndex) and v.index.start == 0 and v.index.step == 1):
                return slow()
            got = own_array(v)
        elif isinstance(v, np.ndarray):
            if v.ndim != 1:
                return slow()
            got = v if v.dtype != object or objects else _text_column(v)
        elif isinstance(v, (list, tuple)):
            got = _typed(tuple(v))
        elif isinstance(v, pd.api.extensions.ExtensionArray):
            got = v
        else:  # a scalar to broadcast, a dict, a generator: the constructor's own rules
            return slow()
        if n < 0:
            n = len(v)
        elif len(v) != n:
            return slow()  # its error
        arrays.append(own_array(pd.Series(v)) if got is None else got)
    if n <= 0:  # no column, or no row (pandas types an empty list by its neighbours)
        return slow()
    try:
        return pd.DataFrame._from_arrays(arrays, columns=column_index(list(columns)), index=pd.RangeIndex(n),
                                         verify_integrity=False)
    except (AttributeError, TypeError):  # a pandas without it (test_table.py: ..._fallback_is_the_fast_frame)
        return slow()


def _text_column(values: np.ndarray) -> Any:
    """An object array of str as pandas infers it (``TEXT_DTYPE``); None for any other object array."""
    if not len(values) or set(map(type, values.tolist())) != {str}:
        return None
    return values if isinstance(TEXT_DTYPE, np.dtype) else pd.array(values, dtype=TEXT_DTYPE)


#: The dtypes ``frame_from_columns`` takes a column's array in as it is: those its cells' inference gives
_PLAIN_DTYPES = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool))


def frame_from_rows(rows: list[list], ncols: int) -> pd.DataFrame:
    """Sheet data from row lists, keeping ``None`` cells as ``None`` (blank in the workbook).

    A column that holds any ``None`` stays ``object``; the others get pandas' inferred
    numeric/text dtype. Used by the detail comparators, whose rows mix absent sides
    with numbers. Columns of one plain type are built directly and the frame from its arrays: pandas'
    per-column inference took ~50 us a column, ~5 ms for the sheets of NPU pair 1 (the dtypes are the
    ones it infers, ``test_frame_from_rows_infers_as_pandas``).
    """
    if not rows:
        return pd.DataFrame({i: pd.Series([], dtype=object) for i in range(ncols)}, columns=range(ncols))
    return frame_from_columns(list(itertools.islice(zip(*rows, strict=False), ncols)), ncols, len(rows))


def frame_from_columns(columns: list[Sequence | np.ndarray], ncols: int, nrows: int) -> pd.DataFrame:
    """``frame_from_rows`` of the rows whose cells ``columns`` lists column by column (fewer columns than
    ``ncols``: the others blank), for a comparator that builds its cells column-wise from arrays (the module
    sheets): the frame its rows would give, dtypes and cell types alike. A column is a list or tuple of ``nrows``
    cells, an object array of them (which the frame may keep as its storage: pass a fresh one), or a numeric
    array: a float64, int64 or bool one is the dtype its cells' inference gives, and taken as it is."""
    if not nrows:
        return pd.DataFrame({i: pd.Series([], dtype=object) for i in range(ncols)}, columns=range(ncols))
    arrays: list[Any] = []
    for values in columns:
        if isinstance(values, np.ndarray) and values.dtype != object:
            if values.dtype in _PLAIN_DTYPES:
                arrays.append(values)
                continue
            values = values.tolist()
        # (an object array's test by one comparison: ``in`` compares cell by cell in Python's loop)
        blank = bool((values == None).any()) if isinstance(values, np.ndarray) else None in values  # noqa: E711
        if blank:  # object dtype kept: pandas would turn text with None into its str dtype (NaN)
            arrays.append(object_array(values))
        else:
            got = _typed(values)
            arrays.append(own_array(pd.Series(list(values))) if got is None else got)  # pandas infers the rest
    while len(arrays) < ncols:  # rows shorter than the sheet: the missing columns are blank, as pandas fills them
        arrays.append(np.full(nrows, np.nan, dtype=object))
    try:
        return pd.DataFrame._from_arrays(arrays, columns=pd.RangeIndex(ncols), index=pd.RangeIndex(nrows),
                                         verify_integrity=False)
    except (AttributeError, TypeError):  # a pandas without it (test_table.py: ..._fallback_is_the_fast_frame)
        # object columns pinned: pandas >= 3 would make text with None its str dtype (None -> NaN)
        pinned = {i: pd.Series(a, dtype=object, copy=False) if isinstance(a, np.ndarray) and a.dtype == object else a
                  for i, a in enumerate(arrays)}
        return pd.DataFrame(pinned, columns=range(ncols))
