"""Where memory grew: the memory counterpart of the top contributors.

Made from the ``MemoryCompareStatistic`` sheet the memory comparator wrote (its columns as they are, no second
pass over the records) whenever that sheet exists, in a memory-only run as in the default one:

* ``ctx.frames["memory_contributors"]``: the operator names whose ``Diff Memory(MB)`` explain 80% of the summed
  absolute change of the sheet's rows, largest first, cut as the time contributors are (``contributors.coverage_cut``);
* ``ctx.frames["memory"]``: one row of totals: the memory allocated inside the compared operators (the sums of
  the sheet's two ``Allocated Memory(MB)`` columns) and the peak reserved memory of each side, the figure the
  console's ``Mem Usage`` shows (taken from the time breakdown when it ran, else read alone). Where the sheet is left
  out because one side has no framework op (``optree.one_sided``) or neither side has a memory record inside an op,
  the peaks alone, with attrs ``operators_left_out`` saying why the operators' memory is not compared: the peak is
  no op's figure.

A side without any memory record inside an operator reads 0 MB in every row of the sheet: its memory was not
recorded, which is no change, so no contributor is listed then and the diffs are null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import checks
from .breakdown import app_counted_gb, peak_reserved_gb, zero_readings
from .contributors import coverage_frame
from .memory import memory_index
from .optree import compared_whole, neither_reason, no_ops_reason, one_sided, operator_pairs
from .overall import find_breakdowns
from .summary_notes import mark_pairs, one_sided_memory_note, one_sided_wrapper, pair_notes, step_wrappers
from .table import Sheet, column_at, plain_frame, sheet_numbers

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

SHEET = "MemoryCompareStatistic"
CONTRIBUTOR_COLUMNS = ["Rank", "Name", "Base(MB)", "Comparison(MB)", "Diff(MB)", "Share", "Cumulative Share"]
#: What the contributors' shares are of, in the console's and the Summary sheet's table titles
SHARE_BASIS = "the operators' allocated-memory change"
TOTAL_COLUMNS = ["operators", "changed", "base_recorded", "comparison_recorded", "base_mb", "comparison_mb",
                 "diff_mb", "diff_pct", "base_peak_gb", "comparison_peak_gb", "peak_diff_gb", "peak_diff_pct"]
#: MemoryCompareStatistic's columns by position (reference-2 §5): name, base MB, comparison MB, Diff Memory(MB),
#: and each side's Operator Number.
_NAME, _BASE_MB, _COMP_MB, _DIFF_MB, _BASE_N, _COMP_N = 1, 3, 6, 8, 4, 7
#: How the wrapper note words the memory contributors (``summary_notes.wrapper_text``: what, unit, decimals, table).
_NOTE_FIGURES = ("allocated memory", "MB", 2, "the memory table")


def _peaks(ctx: RunContext) -> tuple[float, float]:
    """Both sides' peak in GB: the breakdown's figures when the overall comparator (or the gate) made them."""
    pair = find_breakdowns(ctx)
    if pair is not None:
        return float(pair[0].memory_gb), float(pair[1].memory_gb)
    # without the breakdown (which would cost a whole pass over the kernels), its Mem Usage reading alone
    return peak_reserved_gb(ctx.base) or 0.0, peak_reserved_gb(ctx.comparison) or 0.0


def _zeros(ctx: RunContext, peaks: tuple[float, float]) -> tuple[str, str]:
    """Per side of a 0 peak: why, where it recorded readings and every one is 0 (``breakdown.zero_readings``, the
    Mem Usage note's words); "" otherwise. Such a peak is a reading: "not recorded" contradicted the note."""
    base, comp = ("" if p > 0 else zero_readings(prof) for p, prof in zip(peaks, (ctx.base, ctx.comparison),
                                                                           strict=True))
    return base, comp


def _recorded(ctx: RunContext) -> tuple[bool, bool]:
    """Whether each side has a memory record inside an operator (the memory comparator's cached indexes, made
    before its sheet); a side without reads 0 MB in every row."""
    return bool(memory_index(ctx, "base").placed), bool(memory_index(ctx, "comparison").placed)


#: (names, base MB, comparison MB, Diff Memory(MB)) of MemoryCompareStatistic.
_Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _columns(sheet: Sheet) -> _Columns:
    """(names, base MB, comparison MB, Diff Memory(MB)) of the sheet, each pulled once (NaN or no number: 0)."""
    d = sheet.data
    base, comp, diff = (sheet_numbers(column_at(d, j)) for j in (_BASE_MB, _COMP_MB, _DIFF_MB))
    return column_at(d, _NAME).to_numpy(dtype=object), base, comp, diff


def contributors(sheet: Sheet | _Columns, recorded: tuple[bool, bool] = (True, True)) -> pd.DataFrame:
    """The rows of MemoryCompareStatistic whose ``Diff Memory(MB)`` explain 80% of the summed absolute change,
    largest first (equal ones in the sheet's order); none when a side was not recorded or nothing changed.
    ``sheet``: the sheet, or its ``_columns``."""
    names, base, comp, diff = _columns(sheet) if isinstance(sheet, Sheet) else sheet
    return coverage_frame(names, base, comp, diff if all(recorded) else diff[:0], CONTRIBUTOR_COLUMNS)


def totals(sheet: Sheet | _Columns, recorded: tuple[bool, bool], peaks: tuple[float, float],
           zeros: tuple[str, str] = ("", "")) -> pd.DataFrame:
    """The one-row frame "memory": allocated MB inside the operators and peak GB, each side and the change
    (null where a side did not record it, its MB as its peak; no percentage from a base of 0). ``sheet``: as
    for ``contributors``; ``zeros``: per side, why its 0 peak is a reading (every one 0: ``_zeros``), in the attrs
    as ``peak_zero`` {side: why} for the memory line."""
    _, b, c, d = _columns(sheet) if isinstance(sheet, Sheet) else sheet
    base, comp = float(b.sum()), float(c.sum())
    both = all(recorded)
    diff = comp - base if both else None
    pb, pc = (p if p > 0 or z else None for p, z in zip(peaks, zeros, strict=True))
    peak_diff = pc - pb if pb is not None and pc is not None else None
    out = plain_frame({
        "operators": [len(d)], "changed": [int(np.count_nonzero(d)) if both else 0],
        "base_recorded": [recorded[0]], "comparison_recorded": [recorded[1]],
        # a side without records reads 0 MB in the sheet: null here, as its peak, so that no reader takes
        # comparison_mb - base_mb for a growth (the console says "not recorded")
        "base_mb": [base if recorded[0] else None], "comparison_mb": [comp if recorded[1] else None],
        "diff_mb": [diff], "diff_pct": [diff / base * 100.0 if diff is not None and base else None],
        "base_peak_gb": [pb], "comparison_peak_gb": [pc],
        "peak_diff_gb": [peak_diff],
        "peak_diff_pct": [peak_diff / pb * 100.0 if peak_diff is not None and pb else None],
    }, TOTAL_COLUMNS, objects=True)
    zero = {side: z for side, z in zip(("base", "comparison"), zeros, strict=True) if z}
    if zero:
        out.attrs["peak_zero"] = zero
    return out


def _wrappers(sheet: Sheet, cols: _Columns
              ) -> tuple[tuple[str, float, str, float] | None, tuple[str, str, float, float, int] | None]:
    """(``summary_notes.step_wrappers``, ``summary_notes.one_sided_wrapper``) of the allocated memory, from one read
    of the sheet's op counts and one two-sided test, as ``summary_notes.operator_wrappers`` has them for the time.
    Two-sided: each side's memory under one top-level op that the other side has no op of (vLLM's capture traces:
    ``capture_32_FULL`` 513.54 MB against ``capture_8192_PIECEWISE`` 20764.11 MB), where the 80% cut lists the larger
    one alone. One-sided: one side's memory under one top-level op that the other side, with
    framework ops of its own, has no op of (SGLang's ``capture_32_DECODE`` 189.77 MB, all of its side's, against
    BERT's ops): the memory sheets pair the operators as the operator level does, so that op stood whole against
    nothing and was the memory contributors' one row, without a word why."""
    names, base, comp, _ = cols
    found = ([str(n) for n in names.tolist()], (base, comp),
             tuple(sheet_numbers(column_at(sheet.data, j)) for j in (_BASE_N, _COMP_N)))
    two_sided = step_wrappers(*found)  # type: ignore[arg-type]
    return two_sided, one_sided_wrapper(*found, two_sided=two_sided)  # type: ignore[arg-type]


def contributors_note(contrib: pd.DataFrame | None) -> str:
    """The note under the memory contributors: the memory counterpart of the time contributors' wrapper note
    (``summary_notes.wrapper_note``), then the --op_name_map pairs among them (``summary_notes.pair_notes``); ""
    where neither applies."""
    wrapper, mapped = pair_notes(contrib, *_NOTE_FIGURES)
    one_sided = one_sided_memory_note(contrib.attrs.get("one_sided_wrapper")) if contrib is not None else ""
    return "; ".join(p for p in (wrapper, one_sided, mapped) if p)


def build(ctx: RunContext, sheets: list[Sheet]) -> None:
    """Fill ``ctx.frames["memory_contributors" | "memory"]`` when the run made MemoryCompareStatistic."""
    sheet = next((s for s in sheets if s.name == SHEET and len(s)), None)
    if sheet is None:
        _peaks_alone(ctx)
        return
    recorded, cols = _recorded(ctx), _columns(sheet)
    contrib = contributors(cols, recorded)
    if len(contrib):
        two_sided, one_sided = _wrappers(sheet, cols)
        mark_pairs(ctx, contrib, ([str(n) for n in cols[0].tolist()], cols[1], cols[2]), two_sided)
        if one_sided is not None and compared_whole(ctx, one_sided[0], one_sided[1]):  # read by contributors_note
            contrib.attrs["one_sided_wrapper"] = one_sided
    ctx.frames["memory_contributors"] = contrib
    peaks = _peaks(ctx)
    frame = totals(cols, recorded, peaks, _zeros(ctx, peaks))
    dropped = _drill_left_out(ctx, recorded)
    if dropped is not None:
        frame.attrs["drill_left_out"] = dropped
    _keep(ctx, frame)


def _drill_left_out(ctx: RunContext, recorded: tuple[bool, bool]) -> tuple[float, float, float, float] | None:
    """(base MB, comparison MB left out, base MB, comparison MB without the drill-down) where the
    ``--max_kernel_num`` drill-down left out 0.01 MB or more a side: an op it opens is replaced by the ops inside
    it, so what it allocates itself, outside them, is in no row (the H200 AlexNet trace against NPU pair 1's
    level-1 export with 4: the base's 1018.51 MB read 775.35 MB, its change +650.67 MB for +407.51 MB, without a
    word). None otherwise, and where a side recorded nothing (the memory line says "not recorded" then)."""
    pairs = operator_pairs(ctx)  # cached: the memory comparator paired the same ops
    if pairs.undrilled is None or not all(recorded):
        return None
    out: list[float] = []
    for side, before, after in (("base", pairs.undrilled[0], pairs.ia), ("comparison", pairs.undrilled[1], pairs.ib)):
        kb = memory_index(ctx, side).kb
        whole = float(kb[before[before >= 0]].sum()) / 1024
        out += [whole - float(kb[after[after >= 0]].sum()) / 1024, whole]
    if not max(round(out[0], 2), round(out[2], 2)) > 0:
        return None
    return out[0], out[2], out[1], out[3]


def _keep(ctx: RunContext, frame: pd.DataFrame) -> None:
    """``ctx.frames["memory"] = frame``, which says which sides' peak is the whole profile's."""
    # a text export's peak is memory_record.csv's over the whole profile, whatever the step; the operators' memory
    # beside it is the step's: the line says which sides' peak ignores the step. A side without a peak (no
    # memory_record.csv) has none to scope: "whole profile on both sides ...: base not recorded" said it had
    whole = [s for s in checks.whole_profile_sides(ctx) if frame[f"{s}_peak_gb"].iloc[0] is not None]
    if whole:
        frame.attrs["peak_whole_profile"] = whole
    app = _app_counted(ctx, frame)
    if app:
        frame.attrs["peak_app"] = app
    ctx.frames["memory"] = frame


#: What holds no APP component, by the kind of the side beside a text export (``_app_counted``): the console's words.
APP_ABSENT = {"db": "a DB export's MEMORY_RECORD does not hold",
              "gpu": "a GPU trace's [memory] events (its caching allocator's reservation) do not hold"}


def _app_counted(ctx: RunContext, frame: pd.DataFrame) -> tuple[str, float, str] | None:
    """(side, its peak GB without APP, the other side's kind: "db" or "gpu") where a text export's peak counts
    memory_record.csv's APP component (the whole process) beside a peak that does not: a DB export's MEMORY_RECORD
    (the level-1 text export's 2.06 GB against the DB export's 1.49 GB of the same script read as a 27.77% saving,
    with the reason in a log line alone), or a GPU trace's [memory] events, its caching allocator's reservation (a
    GPU job moved to an NPU read 0.11 GB -> 2.06 GB, of which 0.57 GB the GPU side's figure never counts)."""
    kinds = [checks.export_kind(p) or ("gpu" if p.source == "kineto" else "") for p in (ctx.base, ctx.comparison)]
    if kinds.count("text") != 1 or (other := next(k for k in kinds if k != "text")) not in APP_ABSENT:
        return None
    side, text = ("base", ctx.base) if kinds[0] == "text" else ("comparison", ctx.comparison)
    without = app_counted_gb(text)
    if without is None or any(frame[f"{s}_peak_gb"].iloc[0] is None for s in ("base", "comparison")):
        return None
    return side, without, other


def _peaks_alone(ctx: RunContext) -> None:
    """The totals row of the peaks alone where the memory comparison ran and left its sheets out: one side has no
    framework op (a GPU trace of runtime calls, a MindSpore export), or both have and neither recorded memory
    inside one (a capture without profile_memory, an export without operator_memory.csv, allocations outside every
    op). The peak reserved memory (Mem Usage) is each side's own reading, valid without any op or block, and the
    memory line vanished with the sheet, also where neither side has an op (``_neither_why``), beside
    OverallMetrics' Mem Usage change. Nothing where neither side recorded a peak."""
    if not ctx.options.enable_memory_compare:
        return
    # one_sided: cached by the memory comparator
    why = _no_ops_why(ctx) if one_sided(ctx) else _unplaced_why(ctx) or _neither_why(ctx)
    if not why:
        return
    peaks = _peaks(ctx)
    zeros = _zeros(ctx, peaks)
    if not any(p > 0 or z for p, z in zip(peaks, zeros, strict=True)):
        return
    none = np.zeros(0)
    frame = totals((np.empty(0, dtype=object), none, none, none), (False, False), peaks, zeros)
    frame.attrs["operators_left_out"] = why
    _keep(ctx, frame)


def _no_ops_why(ctx: RunContext) -> str:
    """Why the operators' memory is not compared beside a side without framework ops."""
    bare = next(p for p in (ctx.base, ctx.comparison) if not ctx.has_ops(p))
    return f"the {'base' if bare is ctx.base else 'comparison'} side has no torch op ({no_ops_reason(bare)})"


def _neither_why(ctx: RunContext) -> str:
    """Why the operators' memory is not compared where neither side has a torch op (each side's reason once
    where they differ); "" where one has."""
    if any(ctx.has_ops(p) for p in (ctx.base, ctx.comparison)):
        return ""
    return f"neither side has a torch op ({neither_reason(ctx)})"


def _unplaced_why(ctx: RunContext) -> str:
    """Why the operators' memory is not compared where both sides have framework ops and neither has a memory
    record inside one (``memory.build`` left its sheets out, its indexes cached); "" otherwise."""
    if not all(ctx.has_ops(p) for p in (ctx.base, ctx.comparison)):
        return ""
    idx = [memory_index(ctx, side) for side in ("base", "comparison")]
    if any(i.placed for i in idx):
        return ""
    # per side: no record at all, or records none of which falls inside an op
    states = ["recorded" if i.recorded else "none" for i in idx]
    if states[0] == states[1]:
        return ("neither side recorded a memory allocation" if states[0] == "none" else
                "neither side's memory records fall inside an operator")
    none = "base" if states[0] == "none" else "comparison"
    outside = "comparison" if none == "base" else "base"
    return (f"the {none} side recorded no memory allocation and the {outside} side's memory records fall inside no "
            "operator")
