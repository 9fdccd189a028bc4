"""The console of a rank-by-rank compare (``cli`` with two folders of ranks): one line per rank as it finishes,
then one table over the ranks and the job's line (the slowest rank of each side, which sets a synchronous job's
step time). Every figure is the single compare's own (``result.frames["overall"]``; with the gate alone, the E2E
times of the breakdown the gate made, ``frames["e2e"]``), never recomputed."""

from __future__ import annotations

import os
from collections.abc import Iterable
from statistics import median
from typing import TYPE_CHECKING, Any

import pandas as pd
from prettytable import PrettyTable

from ..compare.gate import e2e_ns
from ..compare.table import half_up_ns, ms3, ms_change, ms_places, ms_text, pct_text
from ..compare.verdict import export_window
from ..textsafe import short_list, term_safe
from ..units import RankCycle, Unit, job_noun, unit_label, unit_rank

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult

#: The ``frames["overall"]`` metrics the table shows, by column.
METRICS = ("e2e", "computing", "uncovered_communication", "free")
#: The table's title with figures ("Ranks" / "Cycles": ``units.job_noun``); the noun alone without. E2E alone
#: (the gate's breakdown) is titled ``TABLE_TITLE``, E2E and its parts (``METRICS``) ``PARTS_TITLE``.
TABLE_TITLE = "{}: E2E Time and Diff (ms)"
PARTS_TITLE = "{}: E2E Time and Diff, Diff of Its Parts (ms)"
#: Named as the time distribution table's columns (E2E Time, Computing Time, Uncovered Communication Time, Free
#: Time), the title naming the E2E time of Base and Comparison and the Diff of its parts (Computing, Uncovered
#: Comm., Free: each part's column holds its Diff, signed); the rank lines above the table name the reports, and
#: the step names go under it (``STEP_HEADER``), so that the table fits a 120-column terminal: 105 columns for
#: the README's two ranks, whose times are 3-digit ms, 113 with a Cycle column (it was 160 with a group's name,
#: then 118 and 126 with "Computing Diff", "Uncovered Comm. Diff" and "Free Diff").
#: The table's last column with a time breakdown: each rank's largest waterfall step, as a key and its change
#: ("A +20.448", ``step_cell``); a line under the table names each key's step whole (``step_legend``): the name
#: in the cell (a communication group's, 40 columns or more) was cut at 34 columns and widened the table most.
STEP_HEADER = "Largest Step"
#: The table's title and columns where the ranks hold communication alone (``COMMUNICATION``), before Report.
COMMUNICATION_TITLE = "{}: Communication Time and Diff (ms)"
COMMUNICATION_HEADERS = ("Base Communication", "Comparison Communication", "Diff", "Diff %")
HEADERS = ("Rank", "Base", "Comparison", "Diff", "Diff %", "Computing", "Uncovered Comm.", "Free")


#: The key of a rank's figures holding its largest waterfall step: (step name, delta ns), None where no step moved.
STEP = "step"
#: A rank's row of the table over ranks (and of the job overview, report/ranks_report.py): (rank or ``RankCycle``,
#: ``rank_figures``' {metric: (base ns, comparison ns)} or None, paths of its reports).
Row = tuple[Unit, dict[str, Any] | None, list[str]]


def rank_figures(result: CompareResult) -> dict[str, Any] | None:
    """{metric: (base ns, comparison ns)} of ``METRICS``, from the time breakdown the compare made, and under
    ``STEP`` the waterfall step that moved most (``largest_step``): what drove the rank's change, named in the
    table over the ranks and the overview. E2E alone where only the ``--fail_on_regression`` gate made one (the
    profiling compare off: ``summary.build`` keeps its E2E times, ``frames["e2e"]``, and no other metric), so the
    overview states the times a verdict was judged by; None without a breakdown."""
    frame = result.frames.get("overall")
    if frame is None or not len(frame):
        pair = e2e_ns(result)
        return communication_figures(result) if pair is None else {"e2e": pair, **_window(result)}
    rows = frame[frame["metric"].isin(METRICS)]
    ns = {(s, m): int(v) for s, m, v in zip(rows["side"], rows["metric"], rows["ns"], strict=True)}
    figures: dict[str, Any] = {m: (ns[("base", m)], ns[("comparison", m)]) for m in METRICS}
    figures[STEP] = largest_step(result.frames.get("waterfall"))
    return {**figures, **_window(result)}


#: The key of a rank's figures holding, where a text export meets a DB export, the DB side's E2E outside its
#: computing and communication (``verdict.ExportWindow``), which its E2E and Free Time count and a text export's
#: leave out; absent otherwise.
WINDOW = "export_window"


def _window(result: CompareResult) -> dict[str, Any]:
    """{``WINDOW``: the rank's ``verdict.export_window``} where there is one, else {}: the rank line says it, and the
    overview's Free column (text level 1 -> DB level 1: rank 0's Free +5.200 ms, 5.686 ms of it the DB side's window)
    said nothing of it."""
    window = export_window(result, result.frames.get("e2e"))
    return {} if window is None else {WINDOW: window}


#: The key of a rank's figures without a time breakdown (no "e2e") holding its communication time: (base ns,
#: comparison ns), the sums of CommunicationCompare's op rows (``--enable_communication_compare`` alone).
COMMUNICATION = "communication"


def communication_figures(result: CompareResult) -> dict[str, Any] | None:
    """{``COMMUNICATION``: (base ns, comparison ns)} of a compare without a time breakdown whose
    CommunicationCompare recorded communication on both sides (its ``summary.communication`` totals, the figures
    the single run's communication line states); None otherwise: the table then lists reports alone."""
    totals = result.frames.get("communication")
    if totals is None or not len(totals):
        return None
    row = totals.iloc[0]
    if not (row.get("base_recorded") and row.get("comparison_recorded")):
        return None
    return {COMMUNICATION: (round(float(row["base_ms"]) * 1e6), round(float(row["comparison_ms"]) * 1e6))}


def timed(figures: dict[str, Any] | None) -> bool:
    """Whether a rank's figures hold an E2E time (the table's, the job line's); not those of communication alone."""
    return figures is not None and "e2e" in figures


def largest_step(waterfall: Any) -> tuple[str, int] | None:
    """(name, delta ns) of the Summary waterfall's step of the largest absolute change, the first in the
    waterfall's order on a tie (its steps: computing categories, communication groups, free time); None without a
    waterfall (a side without E2E time) or where no step moved. The steps' deltas add up to the E2E change, so
    this one says where most of it, or of what offsets it, lies."""
    if waterfall is None or not len(waterfall):
        return None
    steps = waterfall[~waterfall["Category"].isin(("start", "end"))]
    deltas = [0 if pd.isna(d) else int(d) for d in steps["Delta(ns)"]]  # <NA>: a step without change
    if not any(deltas):
        return None
    at = max(range(len(deltas)), key=lambda i: (abs(deltas[i]), -i))
    return str(steps["Step"].iloc[at]), deltas[at]


def rank_line(rank: Unit, figures: dict[str, tuple[int, int]] | None, reports: list[str], aside: str = "") -> str:
    """The line printed as a rank (or a cycle: ``units.unit_label``) finishes: its E2E base -> comparison (its
    communication time without a time breakdown, ``COMMUNICATION``), the change, the reports written; then
    ``aside``, what a DB export's E2E holds beside a text export's (``verdict.export_aside``, as a single run's E2E
    line says it): text Level0 -> DB Level0 ranks read E2E +8.591 ms and +29.157 ms with no word of the 4.217 and
    4.179 ms of the DB side's window tasks in them."""
    written = ", ".join(term_safe(p) for p in reports) or "no report (no sheet has rows)"
    if figures is not None and COMMUNICATION in figures:
        base, comp = figures[COMMUNICATION]
        return f"{unit_label(rank)}: communication {ms_change(base, comp)}, {written}"
    if not timed(figures):
        return f"{unit_label(rank)}: {written}"
    base, comp = figures["e2e"]
    return f"{unit_label(rank)}: E2E {ms_change(base, comp)}, {written}" + (f"; {aside}" if aside else "")


def shown_metrics(figures: list[dict[str, tuple[int, int]] | None]) -> list[str]:
    """The ``METRICS`` some rank's figures hold, in order: all four, E2E alone (the gate's breakdown), or none."""
    return [m for m in METRICS if any(f is not None and m in f for f in figures)]


def unit_columns(units: list[Unit]) -> tuple[list[str], list[list[int | None]]]:
    """The columns naming the units, headers and one value list per row: Rank (no cycles), Rank and Cycle (a
    schedule's cycles of ranks), Cycle (a single device's cycles)."""
    if not any(isinstance(u, RankCycle) for u in units):
        return ["Rank"], [[u] for u in units]  # type: ignore[list-item]
    if all(isinstance(u, RankCycle) and u.rank is None for u in units):
        return ["Cycle"], [[u.cycle] for u in units]  # type: ignore[union-attr]
    return ["Rank", "Cycle"], [[unit_rank(u), u.cycle] for u in units]  # type: ignore[union-attr]


def render_ranks(rows: list[Row]) -> str:
    """The table over ranks, one row per (rank, figures, reports): their figures (E2E and the changes of the other
    metrics they hold), or their reports without any (no time breakdown; with figures the rank lines name the
    reports), beside each side's communication time and its change where some rank holds it (``COMMUNICATION``).
    Units of cycles are named by a Cycle column after Rank (``unit_columns``); a single device's cycles title the
    table "Cycles" (``units.job_noun``). With each rank's largest step, the lines naming its keys follow the table
    (``step_legend``). Its ms have 3 decimals, or as many as a rank's times take to read true (``table_places``)."""
    metrics = shown_metrics([f for _, f, _ in rows])
    has_times = bool(metrics)
    stepped = any(f is not None and STEP in f for _, f, _ in rows)
    named, keys = unit_columns([u for u, _, _ in rows])
    keys_of = step_keys([f.get(STEP) for _, f, _ in rows if f is not None])
    headers = [*named, *HEADERS[1:5], *(h for m, h in zip(METRICS[1:], HEADERS[5:], strict=True) if m in metrics),
               *([STEP_HEADER] if stepped else [])]
    table = PrettyTable()
    communication = not has_times and any(f is not None and COMMUNICATION in f for _, f, _ in rows)
    table.field_names = headers if has_times else [*named, *(COMMUNICATION_HEADERS if communication else ()), "Report"]
    places = table_places([f for _, f, _ in rows], "e2e" if has_times else COMMUNICATION)
    for key, (_, figures, reports) in zip(keys, rows, strict=True):
        if not has_times:
            pair = (figures or {}).get(COMMUNICATION)
            cells = [] if not communication else ["-"] * 4 if pair is None else [
                *_pair_cells(*pair, places), pct_text(*pair)]
            table.add_row([*key, *cells, ", ".join(term_safe(os.path.basename(p)) for p in reports) or "-"])
            continue
        if figures is None:  # cannot happen in one run (the options are the same), kept for safety
            table.add_row([*key, *["-"] * (len(headers) - len(key))])
            continue
        base, comp = figures["e2e"]
        diffs = [ms_text(c - b, places, sign=True) for b, c in (figures[m] for m in metrics[1:])]
        table.add_row([*key, *_pair_cells(base, comp, places), pct_text(base, comp), *diffs,
                       *([step_cell(figures.get(STEP), keys_of, places)] if stepped else [])])
    noun = job_noun(u for u, _, _ in rows)
    title = (PARTS_TITLE if len(metrics) > 1 else TABLE_TITLE) if has_times else COMMUNICATION_TITLE if communication \
        else "{}"
    table.title = title.format(noun)
    table.align = "c"
    return "\n".join([table.get_string(), *(step_legend(keys_of) if has_times and stepped else [])])


def table_places(figures: list[dict[str, Any] | None], metric: str) -> int:
    """The decimals of every ms of the table over ranks: the fewest, 3 to 6, at which each rank's ``metric`` pair
    (E2E, or the communication time) reads true, its two times alike where its change reads 0 and apart where it
    does not. At 3, a rank 1,000,400 -> 1,000,600 ns read "1.000 | 1.001 | +0.000" and one 999,500 -> 1,000,499
    "1.000 | 1.000 | +0.001"; at 4 they read 1.0004 | 1.0006 | +0.0002 and 0.9995 | 1.0005 | +0.0010. One count
    for the table, so that its columns line up. Fewer than the rank line's (``table.ms_places``, which shows any
    two times apart): 1 ns across a rounding edge (1,000,499 -> 1,000,500) reads "1.0005 | 1.0005 | +0.0000"
    where the line writes 1.000499 -> 1.000500, and 6 decimals took a table of cycles past 120 columns."""
    pairs = [f[metric] for f in figures if f is not None and metric in f]

    def reads_true(base: int, comp: int, places: int) -> bool:
        alike = half_up_ns(base, 10**6, places) == half_up_ns(comp, 10**6, places)
        return alike == (not half_up_ns(comp - base, 10**6, places))

    return next((p for p in range(3, 6) if all(reads_true(b, c, p) for b, c in pairs)), 6)


def _pair_cells(base: int, comp: int, places: int) -> list[str]:
    """A rank's Base, Comparison and Diff cells (ms to ``places`` decimals)."""
    return [ms_text(base, places), ms_text(comp, places), ms_text(comp - base, places, sign=True)]


def step_key(index: int) -> str:
    """The key of the ``index``-th step name (from 0): A .. Z, then AA, AB, ... as spreadsheet columns."""
    key = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        key = chr(ord("A") + rest) + key
    return key


def step_keys(steps: list[tuple[str, int] | None]) -> dict[str, str]:
    """{step name: key} for the ranks' largest steps, keyed in the order the ranks first name them."""
    names = dict.fromkeys(s[0] for s in steps if s is not None)
    return {name: step_key(i) for i, name in enumerate(names)}


def step_cell(step: tuple[str, int] | None, keys: dict[str, str], places: int = 3) -> str:
    """A rank's largest waterfall step as the table shows it, its key and change (ms to ``places`` decimals, as the
    table's other ms: ``table_places``), "A +0.030" (``step_legend`` names the step); "-" where no step moved."""
    if step is None:
        return "-"
    return f"{keys[step[0]]} {ms_text(step[1], places, sign=True)}"


def step_legend(keys: dict[str, str]) -> list[str]:
    """The lines under the table naming each key's step, whole: "Largest Step A: Group 0 Communication
    (uncovered)"."""
    return [f"{STEP_HEADER} {key}: {term_safe(name)}" for name, key in keys.items()]


def slowest(rows: list[Row]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((rank, E2E ns) of the base, the same of the comparison): the slowest rank of each side, the largest E2E, the
    lowest rank on a tie (a synchronous job's step time is its slowest rank's); None without figures. The job line
    and the job overview file (report/ranks_report.py) both take the job's figures from here."""
    times = [(unit_rank(rank), f["e2e"]) for rank, f, _ in rows if timed(f)]
    if not times:
        return None
    b_rank, (b_ns, _) = max(times, key=lambda t: (t[1][0], -t[0]))
    c_rank, (_, c_ns) = max(times, key=lambda t: (t[1][1], -t[0]))
    return (b_rank, b_ns), (c_rank, c_ns)


def cycles_of(rows: list[Row]) -> dict[int | None, list[Row]]:
    """The rows per cycle, in order ({None: rows} where the units are ranks alone); {} for a single device's
    cycles, which have no job of ranks (one row each)."""
    units = [u for u, _, _ in rows]
    if not any(isinstance(u, RankCycle) for u in units):
        return {None: rows}
    if any(isinstance(u, RankCycle) and u.rank is None for u in units):
        return {}
    grouped: dict[int | None, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row[0].cycle, []).append(row)  # type: ignore[union-attr]
    return grouped


def job_lines(rows: list[Row], selected: tuple[int, ...] | None = None, not_compared: Iterable[Unit] = ()) -> list[str]:
    """The job's line (``job_line``) of each cycle of ranks, ``Job cycle k (...)``; the one line of ranks without
    cycles; none for a single device's cycles. ``selected``: the ranks ``--rank_list`` selected, which the lines
    name (their slowest ranks are of those alone); None: all. ``not_compared``: the units one folder alone holds,
    which the lines name too (``job_line``)."""
    left = list(not_compared)
    return [line for cycle, of_cycle in cycles_of(rows).items()
            if (line := job_line(of_cycle, cycle, selected, left))]


#: How many ids of ``--rank_list`` the job's line names (``job_line``).
_SELECTED_LISTED = 8


def _ranks(ids: list[int]) -> str:
    """"rank 1", "ranks 0, 3", or the first ``_SELECTED_LISTED`` and the count: ids as the job's line names them."""
    return f"{'rank' if len(ids) == 1 else 'ranks'} {short_list(ids, _SELECTED_LISTED)}"


def job_line(rows: list[Row], cycle: int | None = None, selected: tuple[int, ...] | None = None,
             not_compared: Iterable[Unit] = ()) -> str:
    """The slowest rank of each side (``slowest``) and the change between them, "" without figures; of one cycle's
    ranks where ``cycle`` is given; "of ranks 0, 3 selected" ("of rank 1 selected") where ``selected``
    (``--rank_list``) narrowed the job: the job's slowest rank may be one left out. A selected rank without a row
    (in neither folder, or in one only: warned and not compared) is named: "of ranks 0, 7 selected, rank 7 not
    compared", where the line read as if rank 7 had been among those it judged; so is a rank of ``not_compared``
    (one folder alone holds it, in this cycle) without a selection: "(slowest rank per side, rank 1 not
    compared)", where the line read as the whole job's though that rank may be its slowest."""
    job = slowest(rows)
    if job is None:
        return ""
    (b_rank, b_ns), (c_rank, c_ns) = job
    which = "" if cycle is None else f" cycle {cycle}"
    of = "" if selected is None else f" of {_ranks(list(selected))} selected"
    compared = {unit_rank(u) for u, _, _ in rows}
    missing = {r for r in selected or () if r not in compared}
    missing |= {r for u in not_compared
                if (u.cycle if isinstance(u, RankCycle) else None) == cycle and (r := unit_rank(u)) is not None
                and r not in compared}
    if missing:
        of += f", {_ranks(sorted(missing))} not compared"
    places = ms_places(b_ns, c_ns)
    return (f"Job{which} (slowest rank per side{of}): base rank {b_rank} {ms_text(b_ns, places)} ms -> comparison "
            f"rank {c_rank} {ms_text(c_ns, places)} ms ({ms_text(c_ns - b_ns, places, sign=True)} ms, "
            f"{pct_text(b_ns, c_ns)})")


#: (rank, its computing change ns, the other ranks' median uncovered communication change ns, the other ranks)
Straggler = tuple[int, int, float, list[int]]


def straggler(rows: list[Row]) -> Straggler | None:
    """The rank whose computing grew most where the other ranks' uncovered communication grew by about as much (a
    synchronous job: they wait for it at the next collective), None otherwise. "About as much": the others' median
    uncovered communication change is within half and one and a half times the rank's computing change, while the
    others' median computing change is under half of it and the rank's own uncovered communication change under
    half of theirs (a change all ranks share, as a slower network or a new kernel everywhere, names none). The
    lowest rank on a tie. Of the ranks given (one job, one cycle), with a breakdown; two at least."""
    broken_down = [(unit_rank(u), f) for u, f, _ in rows
                   if f is not None and "computing" in f and "uncovered_communication" in f]
    if len(broken_down) < 2:
        return None
    grew = {r: (f["computing"][1] - f["computing"][0],
                f["uncovered_communication"][1] - f["uncovered_communication"][0]) for r, f in broken_down}
    rank = max(grew, key=lambda r: (grew[r][0], -r))
    computing, own_wait = grew[rank]
    others = [d for r, d in grew.items() if r != rank]
    names = [r for r in grew if r != rank]
    wait = median(w for _, w in others)
    if computing <= 0 or not computing <= 2 * wait <= 3 * computing:
        return None
    if 2 * median(c for c, _ in others) >= computing or 2 * own_wait >= wait:
        return None
    return rank, computing, wait, names


def straggler_lines(rows: list[Row]) -> list[str]:
    """The ``straggler`` line of each cycle of ranks (of the job, ranks without cycles): "Likely straggler: rank 0,
    Computing +1.000 ms; rank 1's Uncovered Communication +1.000 ms (waiting on it)"; none where none is found."""
    lines = []
    for cycle, of_cycle in cycles_of(rows).items():
        found = straggler(of_cycle)
        if found is None:
            continue
        rank, computing, wait, others = found
        which = "" if cycle is None else f" of cycle {cycle}"
        waiting = f"rank {others[0]}'s" if len(others) == 1 else f"the other {len(others)} ranks'"
        median_word = "" if len(others) == 1 else "median; "
        lines.append(f"Likely straggler{which}: rank {rank}, Computing {ms3(computing):+.3f} ms; {waiting} Uncovered "
                     f"Communication {ms3(wait):+.3f} ms ({median_word}waiting on it)")
    return lines
