"""Console text of the Summary results: the E2E waterfall, the top contributors and where communication and
memory grew.

Printed under the "Model Profiling Time Distribution" table; the frames come
from ``compare/summary.py`` (``result.frames["waterfall" | "contributors"]``),
``compare/communication_summary.py`` (``result.frames["communication_contributors" | "communication"]``) and
``compare/memory_summary.py`` (``result.frames["memory_contributors" | "memory"]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
from prettytable import PrettyTable

from ..compare import communication_summary, memory_summary
from ..compare.communication_summary import overlap_shift, overlap_words
from ..compare.contributors import contributors_title, shown_rows
from ..compare.module_contributors import module_lead_lines, outside_modules_note
from ..compare.summary_notes import contributors_note_lines
from ..compare.table import half_up, ms_alike, ms_change, ms_text
from ..textsafe import and_list, cut_columns, cut_module_columns, term_safe, text_width


def _ms(v: object, signed: bool = False) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    x = half_up(float(v), 3)  # as the verdict's ms; -0.000127: 0.000, not -0
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _pct(v: object) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{round(float(v), 3) + 0.0:.1%}"


def render_waterfall(frame: pd.DataFrame | None) -> str:
    """The waterfall as a table: one line per step, ms with 3 decimals ("" when there is none)."""
    if frame is None or not len(frame):
        return ""
    t = PrettyTable()
    t.title = "E2E Time Difference (Waterfall, ms)"
    t.field_names = ["Step", "Base", "Comparison", "Delta", "Cumulative", "Share of E2E Diff"]
    for r in frame.itertuples(index=False):
        t.add_row([term_safe(r.Step), _ms(r[2]), _ms(r[3]), _ms(r[4], signed=True), _ms(r[5]), _pct(r[6])])
    t.align = "r"
    t.align["Step"] = "l"
    return t.get_string()


def render_contributors(frame: pd.DataFrame | None, kind: str = "time") -> str:
    """The first ``CONSOLE_TOP`` contributors ("" when there is none), under ``contributors_title`` (``kind``: "time"
    or "module"); module operator names ("module path > operator") lose their leading path components
    (``cut_module_columns``), so the operator shows."""
    if frame is None or not len(frame):
        return ""
    level = str(frame["Level"].iloc[0])
    shown, first = shown_rows(frame)
    rows = [[int(r.Rank), r.Name, _ms(r[3]), _ms(r[4]), _ms(r[5], signed=True), _pct(r.Share), _pct(r[7])]
            for r in shown.itertuples(index=False)]
    return _top_table(contributors_title(frame, kind, first=first), "ms", rows,
                      keep_end=level == "module operator")  # "module path > operator": the operator is at the end


def _top_table(title: str, unit: str, rows: list[list], keep_end: bool = False) -> str:
    """A contributors table (time or memory): rank, name (cut at 70 terminal columns, or the width a longer title
    gives; ``keep_end``: a module path's leading components are cut, ``cut_module_columns``), figures formatted
    by the caller. A title wider than the columns widens the name column: prettytable gave the room to the last
    column, and "Cumulative Share" drifted right."""
    def cut(name: str, columns: int) -> str:
        return cut_module_columns(name, columns) if keep_end else cut_columns(name, columns)

    def table(names: list[str]) -> PrettyTable:
        t = PrettyTable()
        t.field_names = ["#", "Name", f"Base({unit})", f"Comparison({unit})", f"Diff({unit})", "Share",
                         "Cumulative Share"]
        for row, name in zip(rows, names, strict=True):
            t.add_row([row[0], name, *row[2:]])
        t.align = "r"
        t.align["Name"] = "l"
        return t

    names = [cut(term_safe(row[1]), 70) for row in rows]
    t = table(names)
    spare = text_width(title) + 4 - len(t.get_string().partition("\n")[0])   # "| title |" against "+-...-+"
    if spare > 0:
        room = max(map(text_width, ["Name", *names])) + spare
        if keep_end:  # the room the title makes shows more of a module path (no wider table)
            names = [cut(term_safe(row[1]), room) for row in rows]
            t = table(names)
        t.min_width["Name"] = room
    t.title = title
    return t.get_string()


def _fixed(v: float, unit: str = "", signed: bool = False, digits: int = 2) -> str:
    """A figure to ``digits`` decimals: memory to 2, as MemoryCompareStatistic rounds its diffs and Mem Usage
    shows GB; communication ms to 3, a half away from zero as the waterfall and the verdict (``half_up``): by
    ``round`` a 4.5 us change read +0.004 ms in the communication table and line, +0.005 ms in the waterfall."""
    x = half_up(v, 3) if digits == 3 else round(float(v), digits) + 0.0  # no "-0.00"
    text = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    return f"{text} {unit}" if unit else text


def _top(frame: pd.DataFrame | None, kind: str, basis: str, unit: str, digits: int) -> str:
    """The first ``CONSOLE_TOP`` rows of a memory or communication contributors frame (rank, name, base,
    comparison, diff, share, cumulative share), as the time contributors are shown ("" when none)."""
    if frame is None or not len(frame):
        return ""
    shown, first = shown_rows(frame)
    # by column lists: itertuples cost ~1 ms for the few rows shown
    rank, name, base, comp, diff, share, cum = (c.tolist() for _, c in shown.items())
    rows = [[int(r), n, _fixed(b, digits=digits), _fixed(c, digits=digits), _fixed(d, signed=True, digits=digits),
             _pct(s), _pct(cs)] for r, n, b, c, d, s, cs in zip(rank, name, base, comp, diff, share, cum, strict=True)]
    return _top_table(contributors_title(frame, kind, basis, first), unit, rows)


def render_memory_contributors(frame: pd.DataFrame | None) -> str:
    """The first ``CONSOLE_TOP`` memory contributors, as the time contributors are shown ("" when none)."""
    return _top(frame, "memory", memory_summary.SHARE_BASIS, "MB", 2)


def render_communication_contributors(frame: pd.DataFrame | None) -> str:
    """The first ``CONSOLE_TOP`` communication op types by the change of their total duration ("" when none)."""
    return _top(frame, "communication", communication_summary.SHARE_BASIS, "ms", 3)


def _change(base: float, comp: float, unit: str, pct: bool = True) -> str:
    """"1.00 MB -> 3.00 MB (+2.00 MB, +200.00%)" of memory (MB, GB) to 2 decimals ("... on both sides" when both
    read the same: "5.96 MB -> 5.96 MB (+0.00 MB, +0.07%)" told of a change it did not show; no percentage of a 0
    base; none without ``pct``). Times: ``_ms_change``."""
    b, c = _fixed(base, unit), _fixed(comp, unit)
    if b == c:
        return f"{b} on both sides"
    pct = f", {(comp - base) / base * 100:+.2f}%" if base and pct else ""
    diff = comp - base
    shown = _fixed(diff, unit, True)
    # 1.005 -> 1.003 MB: "1.01 MB -> 1.00 MB (-0.00 MB, -0.20%)", not "+0.00"
    if diff < 0 and shown.startswith("+"):
        shown = "-" + shown[1:]
    return f"{b} -> {c} ({shown}{pct})"


def _peak_change(base: float, comp: float) -> str:
    """Two peaks (GB) as ``_change`` writes them, but a change in MB where the GB cannot show it (it rounds to
    0.00 GB, or both peaks read alike) and it does not round to 0.00 MB: text Level0 rank 0 against Level1 rank 0
    read "2.06 GB on both sides" where the comparison holds 4.13 MB more (2109.60 -> 2113.73 MB of
    memory_record.csv), a change across a rounding edge read "+0.00 GB", and one of 5-10 MB between peaks that
    both read 2.06 GB (2.0551 -> 2.0649) read "on both sides". The GB of the Mem Usage column are 1024 MB
    (``breakdown.peak_reserved_gb``)."""
    diff_mb = (comp - base) * 1024
    alike = _fixed(base, "GB") == _fixed(comp, "GB")
    if (round(comp - base, 2) != 0 and not alike) or round(diff_mb, 2) == 0:
        return _change(base, comp, "GB")
    pct = f", {(comp - base) / base * 100:+.2f}%" if base else ""
    return f"{_fixed(base, 'GB')} -> {_fixed(comp, 'GB')} ({_fixed(diff_mb, 'MB', True)}{pct})"


def _ns(ms: float) -> int:
    """A time of the communication totals (whole ns / 1e6) as its ns again."""
    return round(ms * 1e6)


def _ms_change(base: float, comp: float) -> str:
    """Two times of the communication totals (ms of whole ns) as the verdict writes E2E times: "X ms on both sides"
    where they and their change read alike at the 0.001 ms shown (``table.ms_alike``), else "base ms -> comparison
    ms (change ms, pct)" with the decimals that show them apart (``table.ms_change``; no percentage of a 0 base).
    To 3 decimals alone, 1.0006 -> 1.0004 ms read "1.001 ms -> 1.000 ms (+0.000 ms, -0.02%)", and 0.9995 ->
    1.0005 ms "1.000 ms on both sides", a change of 0.001 ms unsaid."""
    b, c = _ns(base), _ns(comp)
    return f"{ms_text(b)} ms on both sides" if ms_alike(b, c) else ms_change(b, c, zero_base_pct=False)


def _value(v: object) -> float | None:
    """A totals cell as a float (None for a null one)."""
    return None if v is None or pd.isna(v) else float(v)


def _recorded(t: pd.Series, base: str, comparison: str) -> tuple[tuple[bool, bool], tuple[float, float]]:
    """(whether each side recorded its figure, the two figures, 0 for a null one) of a totals row."""
    rec = (bool(t["base_recorded"]), bool(t["comparison_recorded"]))
    return rec, (_value(t[base]) or 0.0, _value(t[comparison]) or 0.0)


def _unrecorded(rec: tuple[bool, bool], figures: tuple[float, float], unit: str, digits: int, kind: str,
                zero: str, sheet: str, what: str) -> str:
    """The sentence for a side that recorded nothing: each side's figure, "not recorded" for that one, whose 0 in the
    sheet is no reading, so no contributor. "No memory contributor: the comparison side recorded no memory inside
    its operators (...)" said the "not recorded" of its figure a second time."""
    none = f"not recorded (its {zero} in {sheet} is no reading)"
    sides = ", ".join(f"{side} {_fixed(v, unit, digits=digits) if r else none}"
                      for side, v, r in zip(("base", "comparison"), figures, rec, strict=True))
    return f"{what[0].upper()}{what[1:]}: {sides}, so no {kind} contributor"


def memory_line(totals: pd.DataFrame | None) -> str:
    """The peak reserved memory, then the memory allocated inside the operators, each side, a sentence each on a line
    of its own ("" without the memory comparison): one sentence was 232 characters on NPU pair 1 and 367 on pair 7.
    The peak leads: it is the footprint, the figure to hold against the device's memory.
    The operators' allocations summed are a volume (a buffer freed and allocated again counts twice), so their
    change has no percentage: the bundled pair's +4308.24% stood beside a peak that grew 84.48%. A side without
    memory records is "not recorded": its 0 MB is no change. Where the memory sheets were left out for a side
    without framework ops, the peaks alone and why the operators' memory is not compared. A peak of 0.00 GB from
    readings all 0 names them (once where both sides' words are the same)."""
    if totals is None or not len(totals):
        return ""
    t = totals.iloc[0]
    rec, mb = _recorded(t, "base_mb", "comparison_mb")
    pb, pc = _value(t["base_peak_gb"]), _value(t["comparison_peak_gb"])
    # "allocated inside operators" read as a footprint beside the peak: 5819.29 MB against a 0.27 GB peak
    inside = "allocated inside operators (a sum of allocations, not memory held at once)"
    left_out = totals.attrs.get("operators_left_out")
    if left_out:
        ops = f"Memory inside operators not compared: {left_out}"
    elif not all(rec):
        ops = _unrecorded(rec, mb, "MB", 2, "memory", "0 MB", "MemoryCompareStatistic", f"memory {inside}")
    elif not int(t["changed"]):
        # every Diff Memory(MB) rounds to 0.00, yet many small changes can add up to a total that shows
        small = "" if _fixed(mb[0]) == _fixed(mb[1]) else " by 0.01 MB or more"
        ops = (f"No operator's allocated memory changed{small} ({int(t['operators']):,} "
               f"operators); memory {inside} {_change(*mb, 'MB', pct=False)}")
    else:
        ops = f"Memory {inside} {_change(*mb, 'MB', pct=False)}"
    drilled = totals.attrs.get("drill_left_out")
    if drilled and not left_out:
        ops += (f"; the max_kernel_num drill-down leaves out what an op it opens allocates outside the ops inside "
                f"it (base {_fixed(drilled[0], 'MB')}, comparison {_fixed(drilled[1], 'MB')}): "
                f"{_change(drilled[2], drilled[3], 'MB', pct=False)} without the option")
    if pb is None and pc is None:  # no peak recorded: the operators' sentence alone
        return f"{ops}."
    whole = totals.attrs.get("peak_whole_profile") or []
    # beside the step's operators, a text export's peak is the whole profile's (memory_record.csv ignores the step)
    scope = "" if not whole else (
        f", whole profile on {'both sides' if len(whole) > 1 else f'the {whole[0]} side'}: a text export's "
        "memory_record.csv ignores the step")
    # a 0.00 GB peak of readings all 0 is their largest, as the Mem Usage note under the console table says; the
    # same words for both sides once (two exports of one run repeated "its 20 ... readings are all 0" whole)
    zero = totals.attrs.get("peak_zero") or {}
    if len(zero) == 2 and len(set(zero.values())) == 1:
        zero = {"each side": zero["base"]}
    scope += "".join(f"; {side}: {why}" for side, why in zero.items())
    if pb is not None and pc is not None:
        peak = f"Peak reserved memory (Mem Usage{scope}) {_peak_change(pb, pc)}"
        app = totals.attrs.get("peak_app")
        if app:  # a text export's APP component beside a DB export or a GPU trace, which count no such component
            peak += (f": the {app[0]} side's, a text export's, counts memory_record.csv's APP component "
                     f"({_fixed(app[1], 'GB')} without it), which {memory_summary.APP_ABSENT[app[2]]}")
    else:
        peak = (f"Peak reserved memory (Mem Usage{scope}): " + ", ".join(
            f"{side} {_fixed(v, 'GB') if v is not None else 'not recorded'}"
            for side, v in (("base", pb), ("comparison", pc))))
    return f"{peak}.\n{ops}."


def render_memory(frames: dict[str, pd.DataFrame]) -> str:
    """The memory contributors, the note on their wrappers (as the time contributors get one) and the memory line
    under them ("" without the memory comparison)."""
    contrib = frames.get("memory_contributors")
    note = memory_summary.contributors_note(contrib)
    parts = [render_memory_contributors(contrib), term_safe(f"Note: {note}.") if note else "",
             memory_line(frames.get("memory"))]
    return "\n".join(p for p in parts if p)


def communication_line(totals: pd.DataFrame | None) -> str:
    """Each side's communication time, then what moved with it (the part no computing overlaps, or the ops outside
    the op rows), the task whose total changed most and why a side reads 0, a sentence each on a line of its own
    ("" without CommunicationCompare): one sentence was 366 characters on NPU pair 1. A side without an op row (no
    communication op, or none with an op type) reads 0, which is no change; a side without task rows (GPU, NPU
    level 0) leaves the task change unread."""
    if totals is None or not len(totals):
        return ""
    t = totals.iloc[0]
    rec, ms = _recorded(t, "base_ms", "comparison_ms")
    what = "communication time (CommunicationCompare's op rows)"
    n = int(t["op_types"])
    if not all(rec):
        # an NPU side without an op row: no communication op, or ops without a family (a Level0 DB export's op
        # type N/A, which the log counts): "recorded no communication op" was untrue of the latter. (A GPU side
        # without one is recorded: its trace has no collective kernel, a reading of 0 ms, said below.)
        missing = "base" if not rec[0] else "comparison"
        sides = ", ".join(f"{side} {_fixed(v, 'ms', digits=3) if r else 'no row'}"
                          for side, v, r in zip(("base", "comparison"), ms, rec, strict=True))
        return (f"Communication time (CommunicationCompare's op rows): {sides}.\nNo communication contributor: the "
                f"{missing} side has no op row (no communication op, or only ops without an op type, as a Level0 DB "
                "export's N/A: the log says which), so its 0 is no reading.")
    none = [side for side, flag in zip(("base", "comparison"), totals.attrs.get("no_collectives", (False, False)),
                                       strict=True) if flag]
    said = _communication_change(t, ms, what, n, none, totals.attrs.get(communication_summary.GROSS_NS, 0),
                                 totals.attrs.get(communication_summary.COMPUTING_NS),
                                 bool(totals.attrs.get(communication_summary.TASKS_CHANGED)))
    if none:
        # a GPU trace holds every kernel it ran: without a collective kernel it communicated nothing, so its 0 ms
        # is a reading and the other side's time is all change (NPU wording called it "no reading" before)
        said.append(f"The {none[0]} side's trace holds no collective kernel (NCCL / RCCL or other), so its 0 ms is a "
                    "reading: it ran no communication, as a run on one GPU")
    return "\n".join(f"{x}." for x in said)


def _communication_change(t: pd.Series, ms: tuple[float, float], what: str, n: int,
                          no_collectives: Sequence[str] = (), gross_ns: int = 0,
                          computing_ns: tuple[int, int] | None = None, tasks_changed: bool = False) -> list[str]:
    """``communication_line``'s sentences (no closing stop) where both sides have a reading: the time change, the
    part no computing overlaps where the overlap moved (``overlap_shift``), then the task that changed most (NPU
    sides with task rows). A side without task rows that ``no_collectives`` names (a GPU trace without a collective
    kernel) gets no "task rows on the other side only" sentence: the line then says it ran no communication, which
    says why. The ms of ops without a family (``no_family_*_ms``), which the op rows leave out and the uncovered part
    counts, are said instead of an overlap shift, which their time would fake (an op renamed without a '_' read
    as "computing overlaps less")."""
    if not int(t["changed"]):
        # "changed" counts the op types whose totals read apart to the 0.001 ms shown; others may have moved less
        small = " by 0.001 ms or more" if gross_ns else ""
        text = (f"No communication op type's total duration changed{small} ({n:,} op type{'s' if n != 1 else ''}); "
                f"{what} " + _ms_change(*ms))
    else:
        text = f"{what[0].upper()}{what[1:]} {_ms_change(*ms)}"
        if int(t["changed"]) > 1 and ms_alike(_ns(ms[0]), _ns(ms[1])) \
                and 2e6 * abs(float(t["diff_ms"])) <= gross_ns:
            # +x on one op type, -x on another: "... on both sides" alone read as no change; the figures shown
            # decide, as in _change (a net 0.0003 ms reads "on both sides" too), and the net must be well under
            # the changes' summed size (two op types 0.1 us longer each cancel nothing)
            text += (f" ({int(t['changed']):,} op types changed, their changes cancel out: the communication "
                     "contributors)")
    said = [text]
    shift = overlap_shift(t)
    out = [(side, float(t[f"no_family_{side}_ms"])) for side in ("base", "comparison")
           if _value(t.get(f"no_family_{side}_ms"))]
    if out:
        said.append("Not in the op rows: " + " and ".join(f"{_fixed(v, 'ms', digits=3)} of the {side} side's ops"
                                                         for side, v in out)
                    + ", which have no op family (the log counts them), though OverallMetrics and the waterfall hold "
                    "their time")
    elif shift:  # an op overlapping less computing lengthens E2E with no op's duration changed
        # one side without communication (0 ms) has no overlap to compare with: "more ... than before" told of a
        # GPU run on one device against an NPU one; the other side's overlap is then within it
        alone = [side for side, v in zip(("base", "comparison"), ms, strict=True) if v][:1] if 0.0 in ms else []
        why = _rest_words(t, alone[0], computing_ns) if alone else overlap_words(shift)
        said.append("The part no computing overlaps (the waterfall's communication steps) "
                    f"{_ms_change(float(t['uncovered_base_ms']), float(t['uncovered_comparison_ms']))}: {why}")
    tasks = (bool(t["base_tasks_recorded"]), bool(t["comparison_tasks_recorded"]))
    if all(tasks):
        tb, tc = _value(t["task_base_ms"]), _value(t["task_comparison_ms"])
        if tb is None or tc is None:
            said.append("No task's total duration changed" + (" by 0.001 ms or more" if tasks_changed else ""))
        else:
            ties = t.get("task_ties")
            named = [(t["task"], t["task_op"], tb, tc), *(
                (x["task"], x["task_op"], x["base_ms"], x["comparison_ms"]) for x in (ties or []))]
            listed = _and_list([f"{cut_columns(term_safe(f'{n} (in {op})'), 70)} {_ms_change(b, c)}"
                                for n, op, b, c in named])
            said.append(_task_words(len(named), listed, _against(ms, [(b, c) for _, _, b, c in named])))
    elif any(tasks) and ("comparison" if tasks[0] else "base") not in no_collectives:
        only = "base" if tasks[0] else "comparison"
        said.append(f"Task rows on the {only} side only (the other records none), so no task change is read")
    return said


def _task_words(n: int, listed: str, against: bool) -> str:
    """The sentence on the ``n`` tasks that changed most (``listed``: their names and figures). A task's total adds
    up the planes it ran on at once (Notify_Wait 134 ms in a 100 ms all-reduce), which is said once: where the
    tasks moved ``against`` the communication time, it is why they need not follow it, where two clauses said it
    twice ("summed over its parallel planes, so it may exceed the op's time" and "a total over parallel planes
    need not follow its op's time")."""
    which = "The task that changed most" if n == 1 else f"The {n:,} tasks that changed most, by as much each"
    totals = "its total is" if n == 1 else "their totals are"
    may = "it" if n == 1 else "they"
    if against:
        # "against the communication time's change" read as "compared with it" (user walk, session 66)
        return (f"{which}: {listed}, the other way from the communication time: {totals} summed over parallel "
                f"planes, so {may} may exceed the op's time and need not follow it")
    return f"{which} ({totals} summed over parallel planes, so {may} may exceed the op's time): {listed}"


def _against(ms: tuple[float, float], tasks: list[tuple[float, float]]) -> bool:
    """Whether every task named moved the other way from the communication time, as the figures shown read (to
    the 0.001 ms): text pair L2 -> L1 read "99.973 ms -> 105.992 ms (+6.019 ms ...); the task that changed most ...:
    Notify_Wait ... (-21.917 ms ...)" and sent a reader of a slower all-reduce to a task that got faster, without a
    word. False where they moved alike, or where the time or a named task shows no change."""
    def sign(b: float, c: float) -> int:  # of the change shown (``_ms_change``): none where it reads "on both sides"
        nb, nc = _ns(b), _ns(c)
        return 0 if ms_alike(nb, nc) else (1 if nc > nb else -1)

    op = sign(*ms)
    return bool(op) and all(sign(b, c) == -op for b, c in tasks)


def _rest_words(t: pd.Series, side: str, computing_ns: tuple[int, int] | None) -> str:
    """Where the communication of the one side that has any went, beyond the part no computing overlaps: beside
    computing only where the side's computing time can hold it (MindSpore fixture: 79.090 ms of ops, 1.301 ms
    uncovered, 0.581 ms of computing, whose overlap cannot be the other 77.789 ms)."""
    rest_ns = round((float(t[f"{side}_ms"]) - float(t[f"uncovered_{side}_ms"])) * 1e6)
    comp_ns = None if computing_ns is None else int(computing_ns[side == "comparison"])
    if comp_ns is None or rest_ns <= comp_ns:
        return (f"the rest of the {side} side's communication runs beside computing (or beside its other "
                "communication ops)")
    return (f"the other {_fixed(rest_ns / 1e6, 'ms', digits=3)} of the {side} side's communication is more than its "
            f"computing time ({_fixed(comp_ns / 1e6, 'ms', digits=3)}) can overlap: beyond that, it runs beside its "
            "other communication ops or lies in what the time breakdown counts as free time")


def _and_list(items: list[str]) -> str:
    """"a", "a and b", "a, b and c", "a, b, c and 2 more (CommunicationCompare's task rows)"."""
    if len(items) > 3:
        items = [*items[:3], f"{len(items) - 3:,} more (CommunicationCompare's task rows)"]
    return and_list(items)


def render_communication(frames: dict[str, pd.DataFrame]) -> str:
    """The communication contributors and the communication line under them ("" without CommunicationCompare)."""
    parts = [render_communication_contributors(frames.get("communication_contributors")),
             communication_line(frames.get("communication"))]
    return "\n".join(p for p in parts if p)


def render_explain(frames: dict[str, pd.DataFrame], verdict: str = "") -> str:
    """Waterfall, the E2E verdict in words, then contributors ("" when neither table exists); under the
    contributors, a note when they explain little of the E2E change, the line on those no module row names
    (``outside_modules_note``, as the Summary sheet), then, where a listed operator runs modules
    whose rows hold its time, the module contributors' lead and their table (the first ``CONSOLE_TOP``, names cut
    by leading path components). ``verdict``: ``CompareResult.verdict``. The console prints ``render_communication`` and
    ``render_memory`` under it."""
    contrib = frames.get("contributors")
    parts = [render_waterfall(frames.get("waterfall")), term_safe(f"{verdict}.", keep_newlines=True) if verdict else "",
             render_contributors(contrib)]
    if parts[2]:  # a line, or a block where it names each side's wrapper (contributors_note_lines)
        parts += [term_safe(line) for line in contributors_note_lines(contrib, frames.get("waterfall"),
                                                                      frames.get("contributor_communication"))]
    modules = frames.get("module_contributors")
    # the operators not on the module sheets, where the Summary sheet and the JSON name them too: a reader looks in
    # ModuleCompareStatistic for a contributor the console lists, and one outside every module is not there
    outside = outside_modules_note(contrib, modules) if parts[2] else ""
    if outside:
        parts.append(term_safe(outside))
    lead = module_lead_lines(modules) if parts[2] else []
    if lead:  # where in the modules the time of a contributor that runs them changed (DDP's forward)
        parts += [*(term_safe(line) for line in lead), render_contributors(modules, "module")]
    return "\n".join(p for p in parts if p)
