"""The E2E verdict: which side is slower and by how much, in words (``e2e_verdict``), with what its E2E time
covers and the asides after its figures (``e2e_words``), as the console, the ``Summary`` sheet, the JSON and the
``--fail_on_regression`` line say it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pandas as pd

from . import checks
from .table import ms3, ms_alike, ms_change

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult, RunContext


#: From this ratio of the slower side's E2E time to the faster one's, the verdict says "N x as long" too.
VERDICT_RATIO = 2.0


def idle_aside(guards: pd.DataFrame | None, overall: pd.DataFrame | None = None) -> str:
    """Where the "longest idle stretch" note says the E2E difference is mostly the two sides' longest stretches
    with no computing, communication or copy, that in the verdict's words, else "". The verdict alone read "the base
    takes 94.60x as long" of PARAM AlexNet's 12.9 s profile, 10.9 s of it one idle stretch, against an NPU step
    whose Computing Time is about the same; the note saying so was a log line above the tables. With the time
    breakdown's figures (``overall``: ``ctx.frames["overall"]``), the Computing Time it asks to compare is given
    too: the console's table shows it in seconds to three decimals (0.011s against 0.009s), which left the user to
    open OverallMetrics for the change it asked about."""
    if guards is None or not guards.attrs.get(checks.IDLE_EXPLAINS):
        return ""
    unsplit = guards.attrs.get(checks.IDLE_UNSPLIT)
    computing = _computing_ns(overall)
    if computing is None:
        return IDLE_ASIDE_UNSPLIT if unsplit else IDLE_ASIDE
    change = ms_change(*computing)
    return _IDLE_LEAD + (f"compare Computing Time, {change} (one side's is not split into categories)" if unsplit
                         else f"compare Computing Time, {change}, and its categories")


def _computing_ns(overall: pd.DataFrame | None) -> tuple[int, int] | None:
    """(base, comparison) Computing Time in ns from the time breakdown's tidy frame, or None without it."""
    if overall is None or not len(overall):
        return None
    rows = overall[overall["metric"] == "computing"].set_index("side")["ns"]
    if not {"base", "comparison"} <= set(rows.index):
        return None
    return int(rows["base"]), int(rows["comparison"])


#: ``idle_aside``'s words; where one side's computing is not split into categories, it asks for Computing Time
#: alone, as the "computing split into categories" note does
_IDLE_LEAD = f"most of that difference is time with {checks.IDLE_WHAT} (validity check: longest idle stretch), so "
IDLE_ASIDE = _IDLE_LEAD + checks.IDLE_ADVICE
IDLE_ASIDE_UNSPLIT = _IDLE_LEAD + checks.IDLE_ADVICE_UNSPLIT


def e2e_words(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> tuple[str, str, str]:
    """The gate line's ``scope``, ``aside`` and ``idle``, each read once: what a DB export's E2E holds that a text
    export's leaves out (``export_aside``) and a DB step's range change (``e2e_aside``) after its figures, and an
    idle stretch that makes most of the difference (``idle_aside``), which the gate says as a second sentence on a
    line of its own, as the verdict does (``run_verdict``)."""
    aside = e2e_aside(ctx, e2e)
    frames = getattr(ctx, "frames", {})
    idle = idle_aside(frames.get("guards"), frames.get("overall"))
    return e2e_scope(ctx, bool(aside)), "; ".join(a for a in (export_aside(ctx, e2e), aside) if a), idle


def run_verdict(ctx: RunContext | CompareResult, wf: pd.DataFrame | None) -> str:
    """``e2e_verdict`` of a run, as the console, the Summary sheet, the JSON and ``CompareResult.verdict`` say it:
    its scope and asides (``e2e_words``), an idle stretch that makes most of the difference a second sentence on
    a line of its own (one line was 289 characters on reference pair 4)."""
    return e2e_verdict(wf, *e2e_words(ctx, getattr(ctx, "frames", {}).get("e2e")))


class ExportWindow(NamedTuple):
    """The part of a DB export's E2E window outside its computing and communication's span, which a text export's
    window (its first computing or communication to its last) leaves out (``export_window``): the side, its ns, of
    which ``after_ns`` after the span (the rest before it), and the copies in it (``copies_ns``, ``copies``: count,
    -1 where the copy tasks were not read: a profile made without them, as the DB loader before session 77 left them
    out of a run without the time breakdown, whose gate then made its own breakdown without them); the rest
    is idle time, as the idle check counts it."""

    side: str
    ns: int
    after_ns: int = 0
    copies_ns: int = 0
    copies: int = 0

    def held(self) -> str:
        """Its time, where it lies and what it holds: "5.686 ms before its first computing or communication (2
        copies, 0.831 ms, and 4.855 ms of idle time)" of the level-1 DB sample, where "5.686 ms of device tasks"
        said 4.855 ms with no task were tasks. Its place alone where the copies were not read."""
        if self.copies < 0:
            return self.where()
        idle = self.ns - self.copies_ns
        parts = [f"{self.copies:,} {'copy' if self.copies == 1 else 'copies'}, {ms3(self.copies_ns):.3f} ms"
                 ] if self.copies else []
        if idle:
            parts.append(f"{ms3(idle):.3f} ms of idle time" if parts else "idle time")
        return f"{self.where()} ({', and '.join(parts)})"

    def where(self) -> str:
        """Its time and where it lies: "5.686 ms before its first computing or communication"."""
        before = self.ns - self.after_ns
        where = ("before its first and after its last" if before and self.after_ns
                 else "before its first" if before else "after its last")
        return f"{ms3(self.ns):.3f} ms {where} computing or communication"


def export_aside(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> str:
    """Where a text export meets a DB export, what the DB side's E2E holds that the text side's would not (its time
    outside its computing and communication's span: in the torch_npu samples ~5 ms before the first kernel, a
    MEMCPY_ASYNC and idle time, which can turn a faster run into a "slower" verdict), else "". Said after the
    verdict's figures: inside the parentheses after "E2E time" its ~150 characters (~230 with a step's scope)
    stood between the words and their figures."""
    window = export_window(ctx, e2e)
    if window is None:
        return ""
    return f"the {window.side} side's E2E, a DB export's, holds {window.held()}, which a text export's leaves out"


def export_window(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> ExportWindow | None:
    """Where a text export meets a DB export, the DB side's time outside its computing and communication's span,
    which its Free Time counts and a text export's window leaves out (``export_aside``; the note on a Free: Other
    change takes it out); else None."""
    sources = {"base": getattr(ctx.base, "source", None), "comparison": getattr(ctx.comparison, "source", None)}
    if {sources["base"], sources["comparison"]} != {"ascend_db", "ascend_text"} or e2e is None or not len(e2e):
        return None
    side = "base" if sources["base"] == "ascend_db" else "comparison"
    row = e2e.iloc[0]
    window = ExportWindow(side, *(int(row[f"{side}_outside_{k}"]) for k in ("busy_ns", "after_ns", "copies_ns",
                                                                            "copies")))
    return window if window.ns > 0 else None


def e2e_scope(ctx: RunContext | CompareResult, range_aside: bool = False) -> str:
    """" (whole profile on ...)" where a step was asked of a text export, whose E2E time ignores it; where a DB
    step's ProfilerStep range changed outside its E2E (``range_aside``: ``e2e_aside`` says so after the figures),
    that the E2E is the step's device tasks' span; else "". (What a DB export's E2E holds beside a text export's
    is ``export_aside``, after the figures.)"""
    parts = []
    whole = checks.whole_profile_sides(ctx)
    if whole:
        sides = "both sides" if len(whole) > 1 else f"the {whole[0]} side"
        parts.append(f"whole profile on {sides}: a text export's E2E ignores the step")
    if range_aside:
        parts.append("the step's device tasks' span")
    return f" ({'; '.join(parts)})" if parts else ""


#: The least change of a DB step's ProfilerStep range (ns) that ``e2e_aside`` weighs against its E2E.
STEP_RANGE_NOTE_NS = 50_000


def e2e_aside(ctx: RunContext | CompareResult, e2e: pd.DataFrame | None) -> str:
    """Where both sides are DB exports given a step: the change of the step's ProfilerStep range (STEP_TIME) when
    its E2E time (the step's device tasks' span, reference-1 §7.3 6) shows under half of it, else "". A host late
    before the step's first device task (or after its last) lengthens the step but no task span: the verdict read
    "as fast as the base" of a step 0.5 ms longer, which the whole profile's E2E showed. A range shrunk apart
    from the span reads "quicker": DB level-0 rank 1 -> level-2 rank 0 at step 50, -0.669 ms outside it. Said
    after the verdict's figures (``e2e_verdict``, the gate's line): inside the parentheses after "E2E time" its
    ~250 characters stood between the words and their figures."""
    if e2e is None or not len(e2e):
        return ""
    spans = []
    for p in (ctx.base, ctx.comparison):
        rng = getattr(p, "extra", {}).get("step_range") if getattr(p, "source", None) == "ascend_db" else None
        if not rng:
            return ""
        spans.append(int(rng[1]) - int(rng[0]))
    step_delta = spans[1] - spans[0]
    outside = step_delta - int(e2e["comparison_ns"].iloc[0]) + int(e2e["base_ns"].iloc[0])
    # the part outside the span moved the range's way by over half of it: an E2E that moved more than the range
    # (tasks running on past its end) is no host's doing
    if abs(step_delta) < STEP_RANGE_NOTE_NS or 2 * outside * (1 if step_delta > 0 else -1) <= abs(step_delta):
        return ""
    # "the time outside", not "of which": where the E2E moved the other way, that time exceeds the range's change;
    # ms as the verdict's figures it follows (no thousands separator)
    return (f"its ProfilerStep range took {ms3(spans[0]):.3f} ms -> "
            f"{ms3(spans[1]):.3f} ms, {ms3(step_delta):+.3f} ms, and its time outside that span (before its "
            f"first or after its last device task) changed by {ms3(outside):+.3f} ms, as where the host was "
            f"{'late' if outside > 0 else 'quicker'}")


#: Where ``e2e_verdict`` ends its first sentence and starts the idle stretch's on a line of its own.
VERDICT_BREAK = ".\n"


def verdict_sentences(verdict: str) -> tuple[str, str]:
    """(the verdict's first sentence, the idle stretch's sentence after its line break or ""), each without its
    closing stop: the JSON gives each a key, as one-line texts, where a break inside ``summary.verdict`` broke the
    dashboards and CI bots that show it on one line."""
    first, _, idle = verdict.partition(VERDICT_BREAK)
    return first, idle


def e2e_verdict(wf: pd.DataFrame | None, scope: str = "", aside: str = "", idle: str = "") -> str:
    """Which side is slower and by how much, in words ("" without a waterfall): the waterfall's end rows give
    only numbers, and "Comparison E2E ... +124.808" does not say at a glance that the comparison is the slow
    side, nor that it takes 11.6 times as long. ``scope``: ``e2e_scope``'s text; ``aside``: ``e2e_aside``'s,
    after the figures; ``idle``: ``idle_aside``'s, a second sentence after a line break (no closing stop: the
    console and the Summary sheet add it, a line and a row per sentence)."""
    if wf is None or not len(wf):
        return ""
    after = f"; {aside}" if aside else ""
    if idle:
        after += f"{VERDICT_BREAK}{idle[0].upper()}{idle[1:]}"
    base, comp = int(wf["Base(ns)"].iloc[0]), int(wf["Comparison(ns)"].iloc[-1])
    if base == comp:
        return f"E2E time{scope} {ms3(base):.3f} ms on both sides: the comparison is as fast as the base{after}"
    diff = comp - base
    if ms_alike(base, comp):
        # "11.773 ms -> 11.773 ms (+0.000 ms, +0.00%): the comparison is slower" of a kernel 3 ns longer
        return (f"E2E time{scope} {ms3(base):.3f} ms on both sides: the comparison is as fast as the base to the 0.001 "
                f"ms shown ({abs(diff)} ns {'slower' if diff > 0 else 'faster'}){after}")
    # as many decimals as show the two figures apart and the change as no zero ("1.000 ms -> 1.000 ms (+0.001 ms")
    text = (f"E2E time{scope} {ms_change(base, comp)}: the comparison is {'slower' if diff > 0 else 'faster'} than "
            "the base")
    ratio = max(base, comp) / min(base, comp)
    if ratio >= VERDICT_RATIO:
        text += f", {'it' if diff > 0 else 'the base'} takes {ratio:.2f}x as long"
    return text + after
