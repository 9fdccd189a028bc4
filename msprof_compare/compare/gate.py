"""``--fail_on_regression``: ``judge`` weighs the E2E change against a threshold (exit code
``EXIT_REGRESSION``) and names the contributors and waterfall steps that explain it; ``gate_frames`` makes the
frames it reads for a result compared without the time breakdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..api import GateContributor, GateStep, RegressionGate, RunContext, _retype, named_as
from ..errors import ProfileError, side_named
from ..loaders.paths import TypedPaths
from ..textsafe import term_safe
from .contributors import share_basis, top_contributors
from .module_contributors import outside_modules_note
from .summary_notes import GATE_BASIS_LEAD, contributors_note_lines
from .table import half_up, ms3, ms_places, ms_text
from .verdict import e2e_words
from .waterfall import e2e_frame, step_mask, waterfall_contributors, waterfall_of

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult
    from ..options import Face


def e2e_ns(result: CompareResult, e2e: pd.DataFrame | None = None) -> tuple[int, int] | None:
    """(base, comparison) E2E in ns (of ``e2e``, else of the result's frame), None when no time breakdown
    was made."""
    e2e = result.frames.get("e2e") if e2e is None else e2e
    if e2e is None or not len(e2e):
        return None
    return int(e2e["base_ns"].iloc[0]), int(e2e["comparison_ns"].iloc[0])


def gate_frames(result: CompareResult) -> dict[str, pd.DataFrame | None] | str:
    """What the gate reads of a result compared without the time breakdown: the frames of a breakdown made for it
    alone, as ``summary.build`` makes them in a run with ``--fail_on_regression`` (the result's frames, with
    "contributor_communication" for the note under the contributors and the contributors' attrs for the line on
    those outside every module, plus "e2e", the waterfall, and its steps as the contributors where the run's sheets
    named none): a new dict, kept out of the result, whose reports and sheets stay as compared. Or the "error: ..."
    message of the error that kept the breakdown from being made (GPU kernels without any stream: no E2E time to
    judge by), its paths named as typed."""
    from .overall import breakdowns

    try:
        comparison = named_as(result.comparison, result.base.path) if result._one_input else result.comparison
        base, comp = breakdowns(RunContext(result.base, comparison, result.options))
    except ProfileError as exc:
        _retype(exc, TypedPaths(result.base.path, result.comparison.path).text)  # named as typed (the paths')
        return f"error: {exc}"
    from .summary import breakdown_attrs

    wf, e2e = waterfall_of((base, comp)), e2e_frame(base, comp)
    contrib = result.frames.get("contributors")
    if (contrib is None or not len(contrib)) and len(wf):
        contrib = top_contributors(*reversed(waterfall_contributors(wf)))
    if contrib is not None:  # what the notes under them read of a breakdown, as the Summary sets it: on a copy
        contrib = contrib.copy()
        contrib.attrs.update(breakdown_attrs(result, e2e, (base, comp)))
    return {**result.frames, "e2e": e2e, "waterfall": wf, "contributors": contrib}


#: The smallest step change the gate's "Largest waterfall steps" line shows (to 0.001 ms, a half away from zero).
_SHOWN_NS = 500

#: Exit code of a run that ``--fail_on_regression`` fails (0 and 1 keep their meanings).
EXIT_REGRESSION = 3


def change_text(comp: int, base: int, limit: Fraction, regressed: bool) -> str:
    """The E2E change in percent to 2 decimals, or to as many more as it takes to stand on the side of the
    threshold the verdict put it on: "+5.17%, threshold +5.17%" read as no reason for the regression it
    announced (the change is +5.1733%)."""
    change = (comp - base) / base * 100.0
    for places in range(2, 13):
        text = f"{change:+.{places}f}%"
        if (Fraction(text[:-1]) > limit) == regressed:
            break
    return text


def _outside_line(contrib: pd.DataFrame, listed: pd.DataFrame) -> str:
    """``outside_modules_note`` on the contributors the gate lists (``listed``, those that grew): a reader of the gate
    looks for them in ModuleCompareStatistic as a reader of the console does. ``summary.build`` names only
    operator-level contributors in ``attrs["outside_modules"]`` (the waterfall steps that stand in for them have
    none). Without the module contributors, as the gate prints no module lead: those that run around modules are
    named with how much of their time the module rows hold, not left to a lead it does not print."""
    names = set(listed["Name"].tolist())
    shown = listed.copy()
    shown.attrs = {**contrib.attrs, "outside_modules": [n for n in contrib.attrs.get("outside_modules", [])
                                                        if n in names],
                   "nested_in_module_ops": {n: p for n, p in (contrib.attrs.get("nested_in_module_ops") or {}).items()
                                            if n in names}}
    return outside_modules_note(shown, None)


def shown_ratio(base: int, comp: int, pct: float, regressed: bool) -> float:
    """E2E comparison over base (whole ns, both above 0) to 4 places, OverallMetrics' Diff Ratio, or to as many more
    as it takes (14 at most: 12 decimals of percent, as ``_change_text``) to stand, shown as a percentage, on the
    side of the ``pct`` threshold the verdict (``regressed``) put it on: the Ranks sheet's cell read 105.17 % beside
    "Regressed (> 5.173252%)" for a rank at +5.17325 % that regressed, and for one at +5.1724 % that did not."""
    limit = 1 + Fraction(threshold_text(pct)) / 100
    for places in range(4, 15):
        value = round(comp / base, places)
        if (Fraction(repr(value)) > limit) == regressed:
            break
    return value


#: The longest plain decimal ``threshold_text`` writes; a longer one is written with an exponent.
_PLAIN_THRESHOLD = 20


def threshold_text(pct: float) -> str:
    """The ``--fail_on_regression`` threshold as the user wrote it (the float's shortest repr), in plain decimals
    (``1e-05`` reads 0.00001) and without a ".0": the decimal the gate judges by, and the one its line and the Ranks
    sheet's Regressed header state (``{pct:g}`` rounded that to six digits, 5.173252 to 5.17325). A plain decimal
    over ``_PLAIN_THRESHOLD`` characters is written as the repr's exponent form, the same decimal (1e-300 was
    written with 300 zeros, 1e300 with 300 digits)."""
    shortest = repr(float(pct) + 0.0)  # + 0.0: no "-0"
    text = format(Decimal(shortest), "f")
    text = text[:-2] if text.endswith(".0") else text
    return text if len(text) <= _PLAIN_THRESHOLD else shortest


def verdict_of(result: CompareResult, pct: float, face: Face, method: bool = True) -> RegressionGate:
    """``api.judge_regression``'s verdict with the reasons its message lists as records (the JSON report's
    ``gate``): a result compared without the time breakdown is judged on one made for the gate alone
    (``gate_frames``); the message names the options as ``face`` takes them, and for ``compare()`` the gate
    as the caller asked it: ``regression_gate()`` (``method``), else the ``fail_on_regression`` keyword (the
    JSON report of a result compared with it). Judged once per threshold and result (``CompareResult._verdicts``)."""
    from ..options import flag_words_kept

    verdict = result._verdicts.get(pct)
    if verdict is None:
        verdict = result._verdicts[pct] = _verdict(result, pct)
    if face.api:  # compare()'s caller: regression_gate() (method) or the fail_on_regression keyword, not the flag
        kept = flag_words_kept(result.base.path, result.comparison.path)
        message = verdict.message.replace("--fail_on_regression", "regression_gate()") if method else verdict.message
        verdict = verdict._replace(message=face.words(message, kept))
    return verdict


def _verdict(result: CompareResult, pct: float) -> RegressionGate:
    """``verdict_of``'s verdict before its face: of the result's frames, or of a breakdown made for the gate."""
    if "e2e" in result.frames:
        return judge(result, pct)
    # compared without the time breakdown: the breakdown made for the gate is kept, as a slim copy keeps it, so a
    # second threshold (or slim() after the gate) does not make it again
    if result._gate is None:
        result._gate = gate_frames(result)
    frames = result._gate
    return RegressionGate.of(1, frames, pct) if isinstance(frames, str) else judge(result, pct, frames=frames)


def judge(result: CompareResult, pct: float, top: int = 5,
          frames: Mapping[str, pd.DataFrame | None] | None = None) -> RegressionGate:
    """The gate's verdict (``verdict_of``'s, ``CompareResult.regression_gate``'s): its code (3 = regression beyond
    ``pct`` percent, 0 = within, 1 = a side has no E2E time, so a CI gate cannot judge the run and must not pass
    it), the message for stderr naming ``top`` contributors, and the reasons that message lists as records.
    ``frames``: those of a breakdown made for the gate alone (``gate_frames``), else the result's."""
    frames = result.frames if frames is None else frames
    pair = e2e_ns(result, frames.get("e2e"))
    if pair is None:
        return RegressionGate.of(1, "error: --fail_on_regression: no E2E time to compare (the time breakdown "
                                    "produced no data)", pct)
    base, comp = pair
    one = result._one_input  # one input given twice (``api.one_input``, told from the paths as typed): both sides
    for profile, value, side in ((result.base, base, "base side"), (result.comparison, comp, "comparison side")):
        if value <= 0:  # named with its side, as every exit-1 line of one input (two inputs may share a name)
            return RegressionGate.of(1, f"error: {term_safe(profile.path)}: no E2E time (no device activity or "
                                        "Overlap Analysis data), so --fail_on_regression cannot judge the run"
                                        f"{side_named('both sides' if one else side)}", pct, e2e=pair)
    scope, aside, idle = e2e_words(result, frames.get("e2e"))
    # exact: a change of exactly pct percent is within the threshold (the float change says 7.000000000000001
    # for +7.00%); the threshold is taken as the decimal the user wrote (repr of the float), and shown so
    written = threshold_text(pct)
    limit = Fraction(written)
    regressed = (comp - base) * 100 > limit * base
    change = change_text(comp, base, limit, regressed)
    # as many decimals as show two different times apart ("1.000 ms -> 1.000 ms (+0.10%)" of 999 ns more)
    places = ms_places(base, comp)
    # the change in ms beside its percent, as the verdict's "base ms -> comparison ms (change ms, pct)": a CI reader
    # of "+4.20%" alone had to work out how many ms that is
    head = (f"E2E time{scope} {ms_text(base, places)} ms -> {ms_text(comp, places)} ms "
            f"({ms_text(comp - base, places, sign=True)} ms, {change}), "
            f"threshold +{written}%{f'; {aside}' if aside else ''}")
    if idle:  # a sentence and a line of its own, as the verdict says it (one line was 232 characters on pair 4)
        head += f".\n{idle[0].upper()}{idle[1:]}."
    if not regressed:
        return RegressionGate.of(0, f"No regression: {head}", pct, e2e=pair)
    lines = [f"Performance regression: {head}"]
    contrib = frames.get("contributors")
    worst_lines: list[str] = []
    listed: list[GateContributor] = []
    outside = ""
    steps_too: set[str] = set()
    if contrib is not None and len(contrib):
        worst = contrib[contrib["Diff(ms)"].astype(float) > 0].head(top)
        if len(worst) and worst["Level"].iloc[0] == "category":
            # the contributors are the waterfall steps that grew: listed again above "Largest waterfall steps:"
            # with the same figures ("Matmul: +3.802 ms (100.0% ...)" then "Matmul +3.802 ms"), so the steps
            # line alone names them, those of them outside its three largest too
            steps_too = set(worst["Name"].tolist())
        elif len(worst):
            level = worst["Level"].iloc[0]
            worst_lines.append(f"Top contributor ({level} level):" if len(worst) == 1
                               else f"Top {len(worst)} contributors ({level} level):")
            for r in worst.itertuples(index=False):
                worst_lines.append(f"  {term_safe(r.Name)}: +{half_up(float(r[5]), 3):.3f} ms "
                                   f"({float(r.Share):.1%} of {share_basis(level)})")
                listed.append(GateContributor(str(r.Name), str(level), float(r[5]), float(r.Share),
                                              share_basis(level)))
            outside = _outside_line(contrib, worst)
    # also where no listed contributor grew: the caveat holds for the ranking the run made. The console's lines, a
    # sentence each (one line was 500 characters on the DB level2 -> level1 pair); the gate prints no Share column,
    # so the basis is of "the percentages above", and is left out where none is listed (Falconsai MI300X -> H100)
    note = contributors_note_lines(contrib, frames.get("waterfall"), frames.get("contributor_communication"),
                                   GATE_BASIS_LEAD if worst_lines else "", computing=False)
    indent = "  " if worst_lines else ""
    worst_lines += [f"{indent}{term_safe(line)}" for line in note]
    if outside:  # under the note, as the console and the Summary sheet print it
        worst_lines.append(f"  {term_safe(outside)}")
    step_lines: list[str] = []
    steps_listed: list[GateStep] = []
    wf = frames.get("waterfall")
    if wf is not None and len(wf):
        # by size, with their signs: a step that shrank offsets the growth (Free: Other -0.498 ms beside
        # communication +31.743 ms of a +31.310 ms change), which the growing steps alone leave unexplained
        steps = wf[step_mask(wf)]
        delta = steps["Delta(ns)"].to_numpy(dtype=np.int64, na_value=0)
        order = np.argsort(-np.abs(delta), kind="stable")
        names = steps["Step"].to_numpy(dtype=object)
        order = order[np.abs(delta[order]) >= _SHOWN_NS]  # "Free: Other +0.000 ms" named a step 3 ns longer
        order = [i for n, i in enumerate(order) if n < 3 or names[i] in steps_too]
        if len(order):
            step_lines.append("Largest waterfall steps: " + ", ".join(
                f"{term_safe(names[i])} {ms3(float(delta[i])):+.3f} ms" for i in order))
            steps_listed = [GateStep(str(names[i]), int(delta[i]), int(delta[i]) / 1e6) for i in order]
    # where the contributors explain little of the change, the waterfall steps that do come first
    lines += step_lines + worst_lines if note else worst_lines + step_lines
    return RegressionGate.of(EXIT_REGRESSION, "\n".join(lines), pct, listed, steps_listed, pair)
