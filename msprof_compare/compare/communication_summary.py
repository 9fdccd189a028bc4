"""Where communication grew: the communication counterpart of the top contributors.

Made from the ``CommunicationCompare`` sheet the communication comparator wrote (its columns as they are, no
second pass over the events) whenever that sheet exists, in a communication-only run as in the default one:

* ``ctx.frames["communication_contributors"]``: the communication op types (the sheet's op rows: HCCL op families
  such as ``allreduce``, NCCL collectives on a GPU side) whose total duration changes explain 80% of the summed
  absolute change of the op rows, largest first, cut as the time contributors are (``contributors.coverage_cut``);
* ``ctx.frames["communication"]``: one row of totals: the communication time of each side (the sums of the op
  rows' two ``Total Duration(us)`` columns, in ms) and the task (``Notify_Wait``, ``Memcpy``...: the sheet's
  ``|`` rows, NPU sides only) whose total changed most, per op type and task name, and the part of it no
  computing overlaps (the waterfall's communication steps), which moves without any op's duration where the
  ops overlap computing more or less (``overlap_shift``).

An NPU side without an op row reads 0 in the sheet without having measured 0 (a Level0 DB export's ops have
the op type N/A, so no family, and no row): its communication was not recorded, which is no change, so no
contributor is listed then and the diffs are null. A GPU side without an op row is a trace without any collective
kernel (a Kineto trace records every kernel it ran: one GPU, world size 1), so its 0 is a reading, no
communication, and the change against the other side is real. A side without task rows (GPU, NPU level 0)
gives no task change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .contributors import coverage_frame, shows_change_ms
from .table import Sheet, plain_frame, sheet_numbers

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

SHEET = "CommunicationCompare"
CONTRIBUTOR_COLUMNS = ["Rank", "Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share"]
#: What the contributors' shares are of, in the console's and the Summary sheet's table titles
SHARE_BASIS = "the communication ops' duration change"
#: ``totals``' attrs key: the op types' changes summed by size (ns)
GROSS_NS = "gross_change_ns"
#: ``totals``' attrs key: whether some task's total changed at all, by less than the 0.001 ms shown where
#: ``task`` is null: the line says "no task's total duration changed by 0.001 ms or more", not "changed"
TASKS_CHANGED = "tasks_changed"
#: ``totals``' attrs key: each side's computing time (ns; None without a waterfall): the communication line says
#: the part of the communication outside the uncovered part runs beside computing only where computing can hold it
COMPUTING_NS = "computing_ns"
TOTAL_COLUMNS = ["op_types", "changed", "base_recorded", "comparison_recorded", "base_ms", "comparison_ms",
                 "diff_ms", "diff_pct", "base_tasks_recorded", "comparison_tasks_recorded", "task", "task_op",
                 "task_base_ms", "task_comparison_ms", "task_diff_ms", "task_diff_pct", "task_ties",
                 "uncovered_base_ms", "uncovered_comparison_ms", "uncovered_diff_ms", "no_family_base_ms",
                 "no_family_comparison_ms"]
#: CommunicationCompare's columns by position (reference-2 §4.3): op name, task name and Total Duration(us) of
#: the base side, then of the comparison side.
_B_OP, _B_TASK, _B_TOTAL, _C_OP, _C_TASK, _C_TOTAL = 1, 2, 4, 8, 9, 11
#: The op-name cell of a task row.
TASK_MARK = "|"


class _Columns:
    """The sheet's op rows and task rows, each column pulled once (totals in whole ns: the sheet's µs to 3 places,
    a blank read as 0; sums of integers, so that no float noise reaches the ms figures: 102.10810000000001)."""

    def __init__(self, sheet: Sheet) -> None:
        cells = sheet.data.to_numpy(dtype=object)  # one conversion: a column by iloc cost ~90 us each
        b_op, c_op = cells[:, _B_OP], cells[:, _C_OP]
        b_ns, c_ns = (np.rint(sheet_numbers(cells[:, j]) * 1000.0).astype(np.int64) for j in (_B_TOTAL, _C_TOTAL))
        b_task_row, c_task_row = b_op == TASK_MARK, c_op == TASK_MARK
        b_has, c_has = b_op != None, c_op != None  # noqa: E711 (element-wise: None cells of an absent side)
        op = (b_has & ~b_task_row) | (c_has & ~c_task_row)
        rows = np.flatnonzero(op)
        self.names = np.where(b_has & ~b_task_row, b_op, c_op)[rows]
        self.base, self.comparison = b_ns[rows], c_ns[rows]
        self.recorded = (bool((b_has & op).any()), bool((c_has & op).any()))
        #: per side: a GPU trace without an op row, recorded at 0 ms (``read_gpu_sides``)
        self.no_collectives = (False, False)
        # task rows: each under the op row above it; a row pairs two sides positionally, whatever their names
        owner = np.maximum.accumulate(np.where(op, np.arange(len(op)), 0))
        self.tasks_recorded = (bool(b_task_row.any()), bool(c_task_row.any()))
        # (op type, task name): [base ns, comparison ns], in the order the sheet first shows each
        self.tasks: dict[tuple[str, str], list[int]] = {}
        op_name = np.where(b_has, b_op, c_op)
        sides = ((b_task_row, _B_TASK, b_ns), (c_task_row, _C_TASK, c_ns))
        for i in np.flatnonzero(b_task_row | c_task_row).tolist():
            for side, (task_row, task, ns) in enumerate(sides):
                if task_row[i]:
                    key = (str(op_name[owner[i]]), str(cells[i, task]))
                    self.tasks.setdefault(key, [0, 0])[side] += int(ns[i])

    @property
    def diff(self) -> np.ndarray:
        """Comparison minus base per op row, in ms."""
        return _diff_ms(self.base, self.comparison)


def _diff_ms(base_ns: np.ndarray | int, comp_ns: np.ndarray | int) -> np.ndarray | float:
    """Comparison minus base in ms, from whole ns: a float difference of the µs cells carried noise
    (0.0009999999999999992 for 0.001) that would break ties of equal changes and show a 0 change as one."""
    return np.subtract(comp_ns, base_ns) / 1e6


def contributors(cols: _Columns) -> pd.DataFrame:
    """The op rows of CommunicationCompare whose total duration changes explain 80% of the summed absolute change,
    largest first (equal ones in the sheet's order); none when a side recorded no communication op or nothing
    changed."""
    base, comp = cols.base / 1e6, cols.comparison / 1e6
    both = all(cols.recorded)
    # an op type whose change does not show at the 0.001 ms written is not listed (nor counted in "changed")
    return coverage_frame(cols.names, base, comp, cols.diff if both else cols.diff[:0], CONTRIBUTOR_COLUMNS,
                          shows_change_ms(base, comp) if both else None)


def _pct(diff: float | None, base: float) -> float | None:
    return diff / base * 100.0 if diff is not None and base else None


def uncovered_ns(wf: pd.DataFrame | None) -> tuple[int, int] | None:
    """Each side's communication time that no computing overlaps: the sum of the waterfall's communication steps
    (None without a waterfall, or without such a step)."""
    return _category_ns(wf, "communication")


def computing_ns(wf: pd.DataFrame | None) -> tuple[int, int] | None:
    """Each side's computing time (the sum of the waterfall's computing steps): the most of its communication
    that computing can overlap (None without a waterfall, or without such a step)."""
    return _category_ns(wf, "computing")


def _category_ns(wf: pd.DataFrame | None, category: str) -> tuple[int, int] | None:
    if wf is None or not len(wf):
        return None
    # the rows by position over the columns' arrays: a boolean take of the 10-column frame and two Series
    # conversions cost ~0.6 ms a run
    rows = np.flatnonzero(wf["Category"].to_numpy(dtype=object) == category)
    if not len(rows):
        return None
    base, comp = (int(wf[c].array[rows].to_numpy(dtype=np.int64).sum()) for c in ("Base(ns)", "Comparison(ns)"))
    return base, comp


#: ``overlap_shift`` says the overlap moved where the uncovered part's change and the op rows' differ by this many
#: ms or more, and by this share of the larger of the two changes or more (ops running on other streams beside
#: one another and the breakdown's union part by a few µs: DB level2 -> level1, +8.001 and +7.991 ms).
OVERLAP_SHIFT_MS = 0.05
OVERLAP_SHIFT_SHARE = 0.25


def overlap_shift(row: pd.Series) -> str | None:
    """"less" / "more" where computing overlaps less / more of the communication than before: the uncovered
    part changed apart from the ops' durations (the level-1 text export's first all-reduce 2 ms later, under 0.583
    ms less computing: no op's duration changed, uncovered +0.583 ms); else None."""
    d_unc, d_tot = row.get("uncovered_diff_ms"), row.get("diff_ms")
    if d_unc is None or d_tot is None or pd.isna(d_unc) or pd.isna(d_tot):
        return None
    gap = round(float(d_unc) - float(d_tot), 6)
    if abs(gap) < OVERLAP_SHIFT_MS or abs(gap) < OVERLAP_SHIFT_SHARE * max(abs(float(d_unc)), abs(float(d_tot))):
        return None
    return "less" if gap > 0 else "more"


def overlap_words(shift: str) -> str:
    """An overlap that moved (``overlap_shift``'s "less" / "more") in the words the communication line and the
    Summary's "no operator changed" note share: collectives running beside one another are one span in the part
    no computing overlaps and each their own in the op rows, so how they overlap one another moves that part
    too. The note said "computing overlaps less" alone where the line had learnt this (review46)."""
    return (f"computing (or communication ops running beside one another) overlaps {shift} of the communication "
            "than before")


def totals(cols: _Columns, uncovered: tuple[int, int] | None = None,
           no_family: tuple[int, int] = (0, 0), computing: tuple[int, int] | None = None) -> pd.DataFrame:
    """The one-row frame "communication": each side's communication time (null where a side recorded no op) and the
    change and the number of op types ``changed`` (those whose change shows at the 0.001 ms written,
    ``contributors.shows_change_ms``), then the task whose total changed most (the first in the sheet's order among
    equal ones; null unless both sides have task rows and some task's change shows so) and, in ``task_ties``, the
    other tasks whose total changed by as much (dicts of task, task_op, base_ms, comparison_ms, diff_ms; empty for
    none), then the part no computing overlaps (``uncovered``, in ns: ``uncovered_ns``; null without it, where a
    side recorded no op, or where a text export was given a step: its waterfall is the whole profile's, the op rows
    the step's), then the time (``no_family``, ns per side) of the ops the op rows leave out for want of a family,
    which the uncovered part counts (null where a side has no communication op at all). ``attrs[GROSS_NS]``: the op
    types' changes summed by size (ns; 0 unless both sides recorded ops); ``attrs[TASKS_CHANGED]``: whether any
    task's total changed, by however little. ``attrs[COMPUTING_NS]``: ``computing`` (each side's computing time, ns,
    ``computing_ns``; None without it). ``attrs["no_collectives"]``: per side, whether it is a GPU trace without
    collective kernels, whose 0 ms is a reading (``read_gpu_sides``)."""
    base_ns, comp_ns = int(cols.base.sum()), int(cols.comparison.sum())
    base, comp = base_ns / 1e6, comp_ns / 1e6
    both = all(cols.recorded)
    diff = float(_diff_ms(base_ns, comp_ns)) if both else None
    task: tuple[str, str] | None = None
    ties: list[dict[str, object]] = []
    if both and all(cols.tasks_recorded) and cols.tasks:
        keys = list(cols.tasks)
        ns = np.array(list(cols.tasks.values()), dtype=np.int64)
        # whole ns: equal changes compare equal; a task whose change does not show at the 0.001 ms written is no
        # change ("the task that changed most: Notify_Wait 112.541 ms on both sides" named one 3 ns longer)
        change = np.abs(ns[:, 1] - ns[:, 0]) * shows_change_ms(ns[:, 0] / 1e6, ns[:, 1] / 1e6)
        if change.max() > 0:
            # every task whose change is as large: +x on one and -x on another named the first alone, so a reader
            # took it for the one task that moved
            top = np.flatnonzero(change == change.max()).tolist()
            task = keys[top[0]]
            ties = [{"task": keys[i][1], "task_op": keys[i][0], "base_ms": int(ns[i, 0]) / 1e6,
                     "comparison_ms": int(ns[i, 1]) / 1e6, "diff_ms": float(_diff_ms(*ns[i]))} for i in top[1:]]
    tb, tc = (v / 1e6 for v in cols.tasks[task]) if task else (None, None)
    t_diff = float(_diff_ms(*cols.tasks[task])) if task else None
    shown = shows_change_ms(cols.base / 1e6, cols.comparison / 1e6)
    frame = plain_frame({
        "op_types": [len(cols.names)], "changed": [int(np.count_nonzero(shown)) if both else 0],
        "base_recorded": [cols.recorded[0]], "comparison_recorded": [cols.recorded[1]],
        # a side without an op reads 0 in the sheet: null here, so that no reader takes the other side's time
        # for a growth (the console says "not recorded")
        "base_ms": [base if cols.recorded[0] else None], "comparison_ms": [comp if cols.recorded[1] else None],
        "diff_ms": [diff], "diff_pct": [_pct(diff, base)],
        "base_tasks_recorded": [cols.tasks_recorded[0]], "comparison_tasks_recorded": [cols.tasks_recorded[1]],
        "task": [task[1] if task else None], "task_op": [task[0] if task else None],
        "task_base_ms": [tb], "task_comparison_ms": [tc], "task_diff_ms": [t_diff],
        "task_diff_pct": [_pct(t_diff, tb or 0.0)], "task_ties": [ties],
        "uncovered_base_ms": [uncovered[0] / 1e6 if both and uncovered else None],
        "uncovered_comparison_ms": [uncovered[1] / 1e6 if both and uncovered else None],
        "uncovered_diff_ms": [float(_diff_ms(*uncovered)) if both and uncovered else None],
        # a side recorded without such ops reads 0; one with no op at all null; one whose ops all lack a family
        # (a Level0 DB export's N/A) its ops' time, which no other figure of the frame gives
        "no_family_base_ms": [no_family[0] / 1e6 if cols.recorded[0] or no_family[0] else None],
        "no_family_comparison_ms": [no_family[1] / 1e6 if cols.recorded[1] or no_family[1] else None],
    }, TOTAL_COLUMNS, objects=True)
    frame.attrs["no_collectives"] = cols.no_collectives
    frame.attrs[COMPUTING_NS] = computing
    # the op types' changes summed by size: a net change well under it is changes that cancel out
    frame.attrs[TASKS_CHANGED] = both and any(b != c for b, c in cols.tasks.values())
    frame.attrs[GROSS_NS] = int(np.abs(np.asarray(cols.comparison, dtype=np.int64)
                                       - np.asarray(cols.base, dtype=np.int64)).sum()) if both else 0
    return frame


def read_gpu_sides(cols: _Columns, gpu: tuple[bool, bool]) -> None:
    """Take a GPU side without an op row as recorded, at 0 ms: a Kineto trace holds every kernel it ran, so one
    without a collective kernel communicated nothing (the B200 eager rank against vLLM's one-GPU decode: 2.142 ms
    -> 0 ms is a change, which "no reading" denied), where an NPU side without an op row may have ops of no
    family (a Level0 DB export's N/A)."""
    (rb, rc), (gb, gc) = cols.recorded, gpu
    cols.no_collectives = (gb and not rb, gc and not rc)
    cols.recorded = (rb or gb, rc or gc)


def build(ctx: RunContext, sheets: list[Sheet]) -> None:
    """Fill ``ctx.frames["communication_contributors" | "communication"]`` when the run made CommunicationCompare
    (the comparator writes it only when a side has a communication op)."""
    sheet = next((s for s in sheets if s.name == SHEET and len(s)), None)
    if sheet is None:
        return
    cols = _Columns(sheet)
    if not len(cols.names):
        return
    read_gpu_sides(cols, (ctx.base.is_gpu, ctx.comparison.is_gpu))
    ctx.frames["communication_contributors"] = contributors(cols)
    # a text export given a step: the sheet holds the step's ops, the waterfall the whole profile (its
    # OverallMetrics ignores the step), so the uncovered part's change is not the op rows' to weigh against
    from .checks import whole_profile_sides

    wf = None if whole_profile_sides(ctx) else ctx.frames.get("waterfall")
    from .communication import LEFT_OUT_KEY

    ctx.frames["communication"] = totals(cols, uncovered_ns(wf), ctx.cache.get(LEFT_OUT_KEY, (0, 0)), computing_ns(wf))
