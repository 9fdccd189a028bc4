"""The top contributors of the ``Summary``: the rows of the finest statistic sheet the run has (operators, module
operators, kernels or kernel types) that explain 80% of the absolute device-time change (``level_rows``,
``top_contributors``), and the words their titles use (``coverage_text``, ``share_basis``...). The communication and
memory contributors (``communication_summary``, ``memory_summary``) are cut alike (``coverage_cut``,
``coverage_frame``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..columns import col_of
from ..model import object_array
from .table import Sheet, column_at, ms3, plain_frame, sheet_numbers, text_cells

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext


#: Contributors are listed until their cumulative share of the absolute change reaches this.
CONTRIBUTOR_COVERAGE = 0.8

CONTRIBUTOR_COLUMNS = ["Rank", "Level", "Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share",
                       "Cumulative Share", "Share of Net Diff"]


def operator_statistic(ctx: RunContext, sheets: list[Sheet]) -> list[list] | None:
    """OperatorCompareStatistic rows even when the workbook shows the module level instead.

    Module rows only cover operators inside modules (e.g. an allreduce under
    AccumulateGrad is outside every module), so the operator level explains
    the device-time change better; the operator pairing is cached per run.
    """
    if any(s.name == "OperatorCompareStatistic" for s in sheets) or not ctx.options.enable_operator_compare:
        return None
    if not all(len(p.ops) and ctx.has_ops(p) for p in (ctx.base, ctx.comparison)):
        return None
    from .operators import statistic_rows
    from .optree import operator_pairs

    rows = statistic_rows(operator_pairs(ctx))  # from the loaded tables only: it raises no ProfileError
    return rows or None


def _row_level(rows: list[list]) -> pd.DataFrame:
    """``level_rows``' operator frame from OperatorCompareStatistic rows as they are, without a DataFrame of them
    (~0.6 ms): names as text, device ms as ``table.sheet_numbers`` reads the sheet's cells."""
    names = [r[1] for r in rows]
    return plain_frame({"Name": object_array([n if type(n) is str else str(n) for n in names]),
                        "Base(ms)": sheet_numbers([r[2] for r in rows]),
                        "Comparison(ms)": sheet_numbers([r[4] for r in rows])})


def module_operator_columns(d: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The operator rows of a ModuleCompareStatistic frame ``d`` (every row but the [ TOTAL ] ones): their
    positions and ``level_rows``' columns, Name "module path > operator" and device ms; None without such a row.
    Columns are read as arrays and the rows picked by position: a boolean row take of the sheet's 18-column frame
    and pandas' str methods on the picked copy cost ~0.5 ms a call, twice a run (``level_rows`` and the module
    contributors' ``_module_rows``)."""
    op = text_cells(column_at(d, 4))  # pandas' str rule for a non-text cell, as before
    rows = np.flatnonzero(op != "[ TOTAL ]")
    if not len(rows):
        return None
    module = text_cells(column_at(d, 3))[rows]
    # a missing cell (pandas 3's str dtype keeps it as NaN) names no row, as the str methods left it
    name = object_array([m.strip() + " > " + o if isinstance(m, str) and isinstance(o, str) else np.nan
                         for m, o in zip(module.tolist(), op[rows].tolist(), strict=True)])
    return rows, {"Name": name, "Base(ms)": sheet_numbers(column_at(d, 6).to_numpy()[rows]),
                  "Comparison(ms)": sheet_numbers(column_at(d, 10).to_numpy()[rows])}


def _us_to_ms(us: np.ndarray) -> np.ndarray:
    """µs cells (whole ns at most: the kernel sheets' totals are to 0.01 µs, op_statistic.csv's to the ns) in ms,
    rounded to the ns: the bare division leaves binary noise in about a quarter of them (321.47 µs gave
    0.32147000000000003 ms), and rounding to the ns drops no digit they carry."""
    return np.round(us / 1000.0, 6)


def level_rows(sheets: list[Sheet], operator_rows: list[list] | None = None) -> tuple[str, pd.DataFrame] | None:
    """(level, frame[Name, Base(ms), Comparison(ms)]) from the finest statistic sheet available.

    Reads sheets by column position, which the sheet layouts fix (reference-2
    §2.7, §3.7, §6.1, §6.2); preference: operators, module operators, kernels, kernel types.
    ``operator_rows`` (OperatorCompareStatistic rows) stands in for that sheet when absent. The module operator
    level is left for a run whose operator pairing has no op while its module sheets have rows: a step asked of
    text exports whose ``ProfilerStep#`` marker nests under another step's (a step that starts before the previous
    one ends; tests/test_module_contributors_db.py).
    """
    by_name = {s.name: s for s in sheets}
    s = by_name.get("OperatorCompareStatistic")
    if (s is None or not len(s)) and operator_rows is not None and len(operator_rows):
        return "operator", _row_level(operator_rows)
    if s is not None and len(s):
        d = s.data
        return "operator", plain_frame({
            "Name": column_at(d, 1).astype(str).to_numpy(),
            "Base(ms)": sheet_numbers(column_at(d, 2)), "Comparison(ms)": sheet_numbers(column_at(d, 4))})
    s = by_name.get("ModuleCompareStatistic")
    if s is not None and len(s):
        found = module_operator_columns(s.data)
        if found is not None:
            return "module operator", plain_frame(found[1])
    for sheet_name, level in (("KernelCompare", "kernel"), ("KernelTypeCompare", "kernel type")):
        s = by_name.get(sheet_name)
        if s is not None and len(s):
            d = s.data
            sep = " " if level == "kernel" else "-"
            detail = column_at(d, 2).fillna("").astype(str)
            # a kernel without input shapes is named by its type alone ("hcom_allReduce_", not "... N/A")
            name = column_at(d, 1).fillna("").astype(str) + (sep + detail).where(~detail.isin(["", "N/A"]), "")
            return level, plain_frame({
                "Name": name.to_numpy(),
                "Base(ms)": _us_to_ms(sheet_numbers(column_at(d, 3))),
                "Comparison(ms)": _us_to_ms(sheet_numbers(column_at(d, 8)))})
    return None


def coverage_text(contrib: pd.DataFrame) -> str:
    """"3 rows cover 86.2%" for titles: the last Cumulative Share to 0.1 %, as the console's cell shows it (a
    whole percent said "covers 100%" over a row of 99.9%)."""
    n = len(contrib)
    cover = round(float(col_of(contrib, "Cumulative Share")[-1]), 3) + 0.0
    return f"{n} row{'s' if n != 1 else ''} cover{'s' if n == 1 else ''} {cover:.1%}"


def share_basis(level: str) -> str:
    """What a contributor's Share is a share of, for titles: the summed absolute change of its level,
    which is not the E2E change shown beside it."""
    if level == "category":  # contributors taken from the waterfall steps
        return "the waterfall steps' change"
    return f"the {level}s' device-time change"


def shares_of_e2e(contrib: pd.DataFrame) -> bool:
    """Whether the contributors' shares are of the E2E change too: at the category level where every step that
    changed moved one way, their summed |change| is the E2E change (the steps sum to it). The Summary sheet's
    title said "not of the E2E change" under a host-bound GPU slowdown's one step, Free: Other +0.100 ms of an
    E2E change of +0.100 ms."""
    if not len(contrib) or str(col_of(contrib, "Level")[0]) != "category":
        return False
    # to the 0.001 ms shown: Free: Other +0.100003 ms beside Vector -0.000003 ms (a kernel 3 ns shorter, not
    # listed) of an E2E change of +0.100 ms read "not of the E2E change"
    gross = level_gross_ms(contrib)
    return bool(gross) and ms3(gross * 1e6) == ms3(abs(level_net_ms(contrib)) * 1e6)


def module_share_basis(frame: pd.DataFrame) -> str:
    """``share_basis`` of the module contributors (``module_contributors._module_contributors``): their shares are
    of the change of the module rows inside the operators that run modules (``module_contributors._rows_run_by``),
    not of every module row. DB level2 -> level1: "15 rows cover 81.1% of the module operators' device-time
    change" read as all 54 rows', of whose change the 15 hold 72.1%; the 42 rows inside the five runners are the
    81.1%'s basis."""
    inside = frame.attrs.get("module_rows_of")
    if inside:
        return f"the device-time change of {'its' if len(inside) == 1 else 'their'} module rows"
    runners = frame.attrs.get("runs_modules") or []
    return f"the device-time change of the module operators inside {'it' if len(runners) == 1 else 'them'}"


#: The Summary's contributor tables by kind: their titles open alike on the console and the Summary sheet.
TABLE_NAMES = {"time": "Top Contributors", "module": "Top Module Contributors",
               "communication": "Top Communication Contributors", "memory": "Top Memory Contributors"}


def contributors_title(frame: pd.DataFrame, kind: str = "time", basis: str = "", first: str = "") -> str:
    """The title of a contributors table, one wording for the console and the Summary sheet (they read "Top
    Contributors (operator level: ..." and "Top contributors (operator level; ..., not of the E2E change)" for one
    table, and only the sheet said the shares were not of the E2E change shown above them). ``kind``: a key of
    ``TABLE_NAMES``; ``basis``: what a communication or memory contributor's share is of (their modules' constants);
    ``first``: ``shown_rows``' words on rows left out, which each face adds for the rows it shows. A run without
    E2E time (``attrs["no_e2e"]``: operator compare alone) leaves out "not of the E2E change": it shows none."""
    cover = coverage_text(frame)
    if kind in ("communication", "memory"):
        return f"{TABLE_NAMES[kind]} ({cover} of {basis}{first})"
    level = str(col_of(frame, "Level")[0])
    if kind == "module":
        return f"{TABLE_NAMES[kind]} ({level} level: {cover} of {module_share_basis(frame)}{first})"
    apart = ", which is the E2E change" if shares_of_e2e(frame) else "" if frame.attrs.get("no_e2e") else (
        ", not of the E2E change")
    return f"{TABLE_NAMES[kind]} ({level} level: {cover} of {share_basis(level)}{apart}{first})"


def level_gross_ms(contrib: pd.DataFrame) -> float:
    """The sizes of every row's change of the contributors' level added up (ms): what each listed row's "Share"
    is of (0.0 when no row changed)."""
    for d, s in zip(col_of(contrib, "Diff(ms)").tolist(), col_of(contrib, "Share").tolist(), strict=True):
        if s is not None and not pd.isna(s) and s:
            return abs(float(d)) / float(s)
    return 0.0


def level_net_ms(contrib: pd.DataFrame) -> float:
    """The net change (ms) of every row of the contributors' level, listed or not: each listed row's
    "Share of Net Diff" is its diff over that net (null when the net is 0)."""
    for d, s in zip(col_of(contrib, "Diff(ms)").tolist(), col_of(contrib, "Share of Net Diff").tolist(),
                    strict=True):
        if s is not None and not pd.isna(s) and s:
            return float(d) / float(s)
    return 0.0


def top_contributors(rows: pd.DataFrame, level: str, coverage: float = CONTRIBUTOR_COVERAGE) -> pd.DataFrame:
    """The rows whose diffs explain ``coverage`` of the total absolute change, largest first.

    Share = |diff| / sum(|diff|) (the gross change, so regressions and
    improvements never cancel and shares are in [0, 1]); "Share of Net Diff"
    is diff / sum(diff), signed (null when the net change is 0).
    """
    b = col_of(rows, "Base(ms)", float)
    c = col_of(rows, "Comparison(ms)", float)
    # times are whole ns: the difference of two ms floats, rounded to the ns, drops the subtraction's noise
    # (-0.02346799999999999 for -0.023468) and a difference that is only noise
    diff = np.round(c - b, 6)
    pick, share, cum = coverage_cut(diff, coverage, shows_change_ms(b, c))
    if not pick.size:
        return empty_contributors(CONTRIBUTOR_COLUMNS)
    # the diffs are whole ns, so is their net: a net of 0 ns summed in floats is noise (-2.8e-17), over which
    # each diff became a "share" of +-4.6e15; rounded to the ns it is 0 and the shares null, as documented
    net = float(diff.sum())
    net_zero = not round(net, 6)
    n = len(pick)
    d = diff[pick]
    return plain_frame({
        "Rank": np.arange(1, n + 1), "Level": [level] * n,
        "Name": col_of(rows, "Name", object)[pick], "Base(ms)": b[pick], "Comparison(ms)": c[pick],
        "Diff(ms)": d, "Share": share, "Cumulative Share": cum,
        "Share of Net Diff": [None] * n if net_zero else d / net,
    }, CONTRIBUTOR_COLUMNS)


def empty_contributors(columns: list[str]) -> pd.DataFrame:
    """A contributors frame of ``columns`` without a row (object columns), built from one 2-D block: a Series per
    column and the dict constructor took ~0.35 ms, and a run makes up to three (time, communication and memory
    contributors) where nothing changed; the block takes ~0.04 ms."""
    return pd.DataFrame(np.empty((0, len(columns)), dtype=object), columns=columns)


def coverage_cut(diff: np.ndarray, coverage: float = CONTRIBUTOR_COVERAGE,
                 listed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, shares, cumulative shares) of the fewest rows whose absolute ``diff`` reach ``coverage`` of the
    summed absolute change, largest first; rows of equal absolute diff keep their order (the sheet's). Share is
    |diff| / sum(|diff|): the gross change, so regressions and improvements never cancel. Empty when no diff is
    non-zero. The time and the memory contributors are cut alike. ``listed``: the rows that may be listed (those
    whose change shows, ``shows_change_ms``); the others still count in the gross change, so the rows listed may
    cover less than ``coverage`` of it."""
    changed = np.abs(diff) > 0
    keep = np.flatnonzero(changed if listed is None else changed & listed)
    if not keep.size:
        return keep, np.empty(0), np.empty(0)
    d = np.abs(diff[keep])
    order = np.argsort(-d, kind="stable")
    share = d[order] / float(np.abs(diff[changed]).sum())
    cum = np.cumsum(share)
    n = int(np.searchsorted(cum, coverage - 1e-12) + 1)  # first prefix reaching the coverage
    return keep[order[:n]], share[:n], cum[:n]


def shows_change_ms(base: np.ndarray, comparison: np.ndarray) -> np.ndarray:
    """Per row, whether its change shows at the 0.001 ms the console, the Summary sheet and the gate show a
    contributor's figures with (a half away from zero, as ``table.ms3``): its two figures read apart and its
    diff does not read 0.000. An operator 3 ns longer was listed, "106.247 -> 106.247, +0.000, covers 100.0%";
    0.9995 -> 1.0004 ms would read "1.000 -> 1.000 (+0.001)", 1.0004 -> 1.0008 ms "1.000 -> 1.001 (+0.000)". The
    memory contributors need no such mask: their sheet's figures and diffs are rounded to the 0.01 MB shown."""
    def ns(ms: np.ndarray) -> np.ndarray:
        return np.rint(np.where(np.isfinite(ms), ms, 0.0) * 1e6).astype(np.int64)

    def us(n: np.ndarray) -> np.ndarray:
        return np.sign(n) * ((np.abs(n) + 500) // 1000)

    b, c = np.asarray(base, dtype=np.float64), np.asarray(comparison, dtype=np.float64)
    nb, nc = ns(b), ns(c)
    return np.isfinite(b) & np.isfinite(c) & (us(nb) != us(nc)) & (np.abs(nc - nb) >= 500)


def coverage_frame(names: np.ndarray, base: np.ndarray, comparison: np.ndarray, diff: np.ndarray,
                   columns: list[str], listed: np.ndarray | None = None) -> pd.DataFrame:
    """The rows of a sheet that ``coverage_cut`` keeps, as a contributors frame of ``columns`` (rank, name, base,
    comparison, diff, share, cumulative share, in that order; empty when no ``diff`` is non-zero): the memory and
    the communication contributors. ``diff`` may be empty (no contributor, e.g. a side not recorded); ``listed``:
    as for ``coverage_cut``."""
    pick, share, cum = coverage_cut(diff, listed=listed)
    if not pick.size:
        return empty_contributors(columns)
    rank, name, b, c, d, s, cs = columns
    return plain_frame({
        rank: np.arange(1, len(pick) + 1), name: np.array([str(n) for n in names[pick]], dtype=object),
        b: base[pick], c: comparison[pick], d: diff[pick], s: share, cs: cum}, columns)


#: The contributors of each table the console shows, and the module contributors the Summary sheet shows (every
#: row stays in its statistic sheet, the JSON and the API).
CONSOLE_TOP = 10


def shown_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The first ``CONSOLE_TOP`` rows of a contributors frame and the words its title adds where rows are left
    out ("; the first 10 shown", else ""): the console's and the sheet's tables say it alike."""
    shown = frame.head(CONSOLE_TOP)
    return shown, f"; the first {len(shown)} shown" if len(shown) < len(frame) else ""
