"""KernelCompare (kernel_details.csv) and KernelTypeCompare (op_statistic.csv), NPU vs NPU.

reference-2 §6. KernelCompare groups device kernels by op type, then input
shapes, and shows per-side totals rounded to 0.01 us (the average is taken from
the rounded total). KernelTypeCompare (``--use_kernel_type``) shows the rows of
op_statistic.csv keyed by (OP Type, Core Type), sorted by the total ratio.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import StepError, on_side, side_named
from ..model import Profile, bare_trace, factorize, names_a_type, object_array, pair_codes, starts_read, step_number
from ..textsafe import id_ranges
from . import table
from .steps import _refused_side, data_file, side_range, side_step, steps_file
from .table import STYLE_BOLD, STYLE_FLOAT, STYLE_INT, Column, Sheet, frame_from_columns, frame_from_rows, ratio_of

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

GPU_MESSAGE = "kernel compare only support between NPU data and NPU data."
#: The comparisons that take a GPU trace, named where --enable_kernel_compare alone was asked of one.
OTHER_FLAGS = ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
               "enable_communication_compare", "enable_api_compare")

_SIDE = [
    Column("Total Duration(us)", STYLE_FLOAT, 20),
    Column("Avg Duration(us)", STYLE_FLOAT, 20),
    Column("Max Duration(us)", STYLE_FLOAT, 20),
    Column("Min Duration(us)", STYLE_FLOAT, 20),
    Column("Calls", STYLE_INT, 20),
]
_RATIOS = [Column("Diff Total Ratio", STYLE_FLOAT, 20), Column("Diff Avg Ratio", STYLE_FLOAT, 20)]

KERNEL_COLUMNS = [
    Column("Order Id", STYLE_INT, 10), Column("Kernel", STYLE_BOLD, 30), Column("Input Shape", STYLE_INT, 20),
    *_SIDE, *_SIDE, *_RATIOS,
]
KERNEL_TYPE_COLUMNS = [
    Column("Order Id", STYLE_INT, 10), Column("Kernel Type", STYLE_BOLD, 30), Column("Core Type", STYLE_INT, 20),
    *_SIDE, *_SIDE, *_RATIOS,
]
SPANS = ((3, 7), (8, 12))  # D1:H1 base, I1:M1 comparison


def _text(series: pd.Series) -> pd.Series:
    """A CSV column as stripped text ("" for missing)."""
    return series.fillna("").astype(str).str.strip()


def _number(series: pd.Series) -> np.ndarray:
    """A CSV column as float (NaN when missing or not a number)."""
    if series.dtype.kind in "iuf":
        return series.to_numpy(dtype=float)
    return pd.to_numeric(_text(series), errors="coerce").to_numpy(dtype=float)


def _stripped(series: pd.Series, empty: str = "") -> tuple[np.ndarray, list[str]]:
    """(codes, distinct texts) of a CSV text column, each cell stripped and read as ``empty`` when blank or
    missing; strips once per distinct value. Cells equal after that share a code (the group key is the text:
    " N/A", "" and "N/A" are one shape). Codes are in first-appearance order."""
    codes, uniq = factorize(series.to_numpy(dtype=object))  # missing cells: one category, None
    texts = ["" if u is None else str(u).strip() for u in uniq.tolist()]
    canon, distinct = factorize(object_array([t or empty for t in texts]))
    return canon[codes], distinct.tolist()


def _valid_types(texts: list[str]) -> np.ndarray:
    """Whether each stripped Type text names a type (a Level0 export writes N/A)."""
    return np.array([names_a_type(t) for t in texts], dtype=bool)


def any_typed(kd: pd.DataFrame) -> bool:
    """Whether any kernel_details.csv row has a valid Type (none in a Level0 export)."""
    return "Type" in kd.columns and bool(_valid_types(_stripped(kd["Type"])[1]).any())


def _group_columns(profile: Profile, step: int = -1, side: str = "") -> dict[str, Any] | None:
    """Per (Type, Input Shapes) group of kernel_details.csv: total, calls, max, min (us); None: no group.

    Groups keep the original's nested first-appearance order: types in order of first
    appearance, and within a type, shapes in order of first appearance.
    Columns: type, shape, key (the (type, shape) pair the sides are matched by), total, calls, max, min,
    as arrays or lists: the sheet reads them as they are, without a frame in between (its text columns
    went into pandas' str dtype and back, ~0.2 ms a side).
    """
    kd = profile.kernel_details
    if kd is None or not len(kd) or "Type" not in kd.columns or "Duration(us)" not in kd.columns:
        return None
    t_codes, t_text = _stripped(kd["Type"])
    if profile.source == "ascend_db":  # every compute task counts, N/A op types too (reference-1 §7.4)
        t_ok = np.ones(len(t_text), dtype=bool)
    else:  # kernel_details.csv rows without a valid Type are skipped (reference-2 §6.1)
        t_ok = _valid_types(t_text)
    keep = t_ok[t_codes]
    if step >= 0:
        step_col = next((c for c in ("Step Id", "Step ID") if c in kd.columns), None)
        if step_col is not None:
            keep &= _step_ids(profile) == step
        else:
            keep[:] = False
    rows = np.flatnonzero(keep)
    if not rows.size:
        return None
    if "Input Shapes" in kd.columns:  # an empty shape is N/A (reference-2 §6.1): one group with the N/A ones
        s_codes, s_text = _stripped(kd["Input Shapes"], empty="N/A")
    else:
        s_codes, s_text = np.zeros(len(kd), np.int64), ["N/A"]
    raw_dur = _number(kd["Duration(us)"])[rows]
    missing = int(np.isnan(raw_dur).sum())
    if missing:  # as the original, but said: such a kernel lowers the Avg and Min of its group
        log.warning("%s: %s kernel(s) of a valid Type have no Duration(us) in kernel_details.csv; KernelCompare "
                    "counts each as a call of 0 us.%s", profile.path, f"{missing:,}", side_named(side))
    dur = np.nan_to_num(raw_dur)
    # types and (type, shape) pairs numbered in first-appearance order among the kept rows
    # without a step whole types are kept or left out, so the kept types appear in the order of their codes (first
    # appearance over every row): the codes order them as their renumbering would (pd.factorize, ~30 us a side)
    t_rank = t_codes[rows] if step < 0 else pd.factorize(t_codes[rows])[0]
    pair, first_row = pair_codes(t_codes[rows], s_codes[rows])
    n = len(first_row)
    calls = np.bincount(pair, minlength=n)
    if "dur" in kd.columns:
        # the loaders' exact ns: the exact decimal sum (and max, min), rounded half up to the 0.01 us the
        # sheet shows (a float sum, then round(), lands on either side of a .xx5 tie by chance)
        def hundredths(ns: np.ndarray) -> np.ndarray:
            return np.where(ns >= 0, (ns + 5) // 10, -((5 - ns) // 10)) / 100.0

        d_ns = col_of(kd, "dur", np.int64)[rows]
        total_ns = np.zeros(n, np.int64)
        np.add.at(total_ns, pair, d_ns)
        mx_ns = np.full(n, np.iinfo(np.int64).min)
        mn_ns = np.full(n, np.iinfo(np.int64).max)
        np.maximum.at(mx_ns, pair, d_ns)
        np.minimum.at(mn_ns, pair, d_ns)
        total, mx, mn = hundredths(total_ns), hundredths(mx_ns), hundredths(mn_ns)
    else:
        total = np.zeros(n)
        np.add.at(total, pair, dur)
        mx = np.full(n, -np.inf)
        mn = np.full(n, np.inf)
        np.maximum.at(mx, pair, dur)
        np.minimum.at(mn, pair, dur)
    pair_t_rank = t_rank[first_row]
    order = np.lexsort((np.arange(n), pair_t_rank))
    p_type = [t_text[c] for c in t_codes[rows][first_row[order]].tolist()]
    p_shape = [s_text[c] for c in s_codes[rows][first_row[order]].tolist()]
    keys = np.empty(n, dtype=object)  # a list of tuples would be read by pandas as rows, not as cells
    keys[:] = list(zip(p_type, p_shape, strict=True))
    return {
        # the (type, shape) pair itself: the original's key, the two texts joined, makes one key of two pairs
        # ("MatMulV2" + "32,3" and "MatMulV" + "232,3"), and the sheet kept one of them
        "type": p_type, "shape": p_shape, "key": keys,
        "total": total[order], "calls": calls[order], "max": mx[order], "min": mn[order],
    }


def kernel_frame(base: pd.DataFrame | dict[str, Any], comparison: pd.DataFrame | dict[str, Any]) -> pd.DataFrame:
    """The KernelCompare sheet's frame: base keys in order (with the same key of the comparison), then
    comparison-only keys. The sides are ``_group_columns``' columns (or, in tests, a frame of them). The build's
    one way to the frame, so a test of it reads what users get."""
    columns = kernel_columns(base, comparison)
    return frame_from_columns(columns, len(KERNEL_COLUMNS), len(columns[0]))


def kernel_columns(base: pd.DataFrame | dict[str, Any], comparison: pd.DataFrame | dict[str, Any]) -> list[Sequence]:
    """``kernel_frame``'s cells column by column, as ``frame_from_columns`` takes them (its dtypes and cells
    alike): rows made of the columns and split back into columns by the frame cost ~0.1 ms of NPU pair 1's
    128 rows."""
    def index(df: pd.DataFrame | dict[str, Any]) -> dict:
        out: dict = {}
        # lists, not Series: iterating pandas' str column steps through its __getitem__ cell by cell
        cols = (list(df[c]) if isinstance(df[c], list) else df[c].tolist()
                for c in ("key", "type", "shape", "total", "calls", "max", "min"))
        for key, typ, shape, total, calls, mx, mn in zip(*cols, strict=False):
            out.setdefault(key, (typ, shape, (total, calls, mx, mn)))
        return out

    b, c = index(base), index(comparison)
    keys = list(b) + [k for k in c if k not in b]
    heads = [(b.get(k) or c[k])[:2] for k in keys]
    bs, cs = _kernel_sides([b.get(k) for k in keys]), _kernel_sides([c.get(k) for k in keys])
    # float64 arrays: the frame takes them as they are, the dtype its cells' inference gives
    ratios = [table.diff_ratios(np.asarray(bs[i], np.float64), np.asarray(cs[i], np.float64))[1] for i in (0, 1)]
    return [list(range(1, len(keys) + 1)), [h[0] for h in heads], [h[1] for h in heads], *bs, *cs, *ratios]


def _kernel_sides(entries: list[tuple | None]) -> list[list]:
    """One side's cells of every row, as five columns: total, avg = total / calls, max and min (us, each
    ``round(v, 2)``; avg 0.0 without calls) and calls, or 0.0, 0.0 and three blanks where the side lacks the
    key. ``table.py_round`` (bit-identical to ``round``) over arrays: four ``round`` and two ``ratio_of``
    calls a row cost ~0.5 ms of NPU pair 1's 128 rows."""
    if not entries:
        return [[], [], [], [], []]
    present = np.array([e is not None for e in entries], dtype=bool)
    vals = np.array([e[2] if e is not None else (0.0, 0, 0.0, 0.0) for e in entries], dtype=np.float64)
    total = table.py_round(vals[:, 0], 2)
    calls = vals[:, 1]
    with np.errstate(all="ignore"):
        avg = np.where(calls != 0, table.py_round(total / np.where(calls != 0, calls, 1.0), 2), 0.0)
    mx, mn = table.py_round(vals[:, 2], 2).tolist(), table.py_round(vals[:, 3], 2).tolist()
    n = [int(e[2][1]) if e is not None else None for e in entries]
    total_l, avg_l = np.where(present, total, 0.0).tolist(), np.where(present, avg, 0.0).tolist()
    mask = present.tolist()
    return [total_l, avg_l, [v if p else None for v, p in zip(mx, mask, strict=True)],
            [v if p else None for v, p in zip(mn, mask, strict=True)], n]


def kernel_type_table(profile: Profile) -> dict[tuple[str, str], list]:
    """op_statistic.csv as ``{(OP Type, Core Type): [type, core, total, avg, max, min, count]}`` (later rows win).
    The pair itself is the key: the original's ``"OP Type-Core Type"`` text makes one key of ("A-B", "C") and
    ("A", "B-C"), and its sheet kept one of them (as KernelCompare's joined type and shape did)."""
    st = profile.op_statistic
    need = ("OP Type", "Core Type", "Total Time(us)", "Avg Time(us)", "Max Time(us)", "Min Time(us)", "Count")
    if st is None or not len(st) or any(c not in st.columns for c in need):
        return {}
    typ, core = _text(st["OP Type"]), _text(st["Core Type"])
    vals = [np.nan_to_num(_number(st[c])) for c in need[2:6]]
    count = np.nan_to_num(_number(st["Count"])).astype(np.int64)
    out: dict[tuple[str, str], list] = {}
    for i, (t, k) in enumerate(zip(typ, core, strict=False)):
        out[(t, k)] = [t, k, *(float(v[i]) for v in vals), int(count[i])]
    return out


def kernel_type_rows(base: dict[tuple[str, str], list], comparison: dict[tuple[str, str], list]) -> list[list]:
    """KernelTypeCompare rows, sorted (stable) by Diff Total Ratio descending, then numbered."""
    empty = ["", "", 0.0, 0.0, 0.0, 0.0, 0]  # durations (us) as floats, the count as an int, as a present side
    rows = []
    for key in list(base) + [k for k in comparison if k not in base]:
        b = base.get(key, empty)
        c = comparison.get(key, empty)
        typ = b[0] or c[0]
        core = b[1] or c[1]
        rows.append([None, typ, core, *b[2:], *c[2:], ratio_of(b[2], c[2]), ratio_of(b[3], c[3])])
    rows.sort(key=lambda r: -r[-2])
    for i, r in enumerate(rows):
        r[0] = i + 1
    return rows


def _npu_pair(ctx: RunContext) -> bool:
    if ctx.base.is_npu and ctx.comparison.is_npu:
        return True
    # the original's sentence named no side: beside an NPU export the user was left to guess which input it meant
    # (user walk, session 66: a GPU job moved to an NPU)
    gpu = [side for side, p in (("base", ctx.base), ("comparison", ctx.comparison)) if not p.is_npu]
    which = "both sides are GPU traces" if len(gpu) == 2 else f"the {gpu[0]} side is a GPU trace"
    opts = ctx.options
    if not opts.by_default and not any(getattr(opts, f) for f in OTHER_FLAGS):
        # asked alone, the run ended on "No comparison produced any rows" with no word of the flags that do take a
        # GPU trace (user walk, session 69)
        which += _other_flags(ctx)
    log.log(opts.notice_level(), "%s (%s)", GPU_MESSAGE, which)
    if ctx.options.use_kernel_type and ctx.options.by_default:
        # the notice above is INFO in a run without --enable_* flags: --use_kernel_type, which asks for
        # KernelTypeCompare alone, passed without a warning on GPU data, as an option no comparison reads does not
        log.warning("The use_kernel_type parameter is ignored: it only takes effect when both sides are NPU data, "
                    "which the kernel comparison needs.")
    return False


def _other_flags(ctx: RunContext) -> str:
    """The end of the GPU notice of a run that asked for KernelCompare alone: the flags that take a GPU trace,
    where both sides have ops to pair; else why a side has none and the flags of the comparisons that apply to
    the pair. Beside a MindSpore export it named --enable_operator_compare, --enable_memory_compare and
    --enable_api_compare, each of which then said the side has no torch op and wrote nothing (user walk,
    session 74: a GPU job moved to MindSpore)."""
    from .optree import comparisons_without_ops, neither_reason, no_ops_reason, would_add

    without = [(side, p) for side, p in (("base", ctx.base), ("comparison", ctx.comparison)) if not ctx.has_ops(p)]
    if not without:
        return f"; {', '.join('--' + f for f in OTHER_FLAGS)} take GPU traces"
    who = (f"neither side has a torch op ({neither_reason(ctx)})" if len(without) == 2 else
           f"the {without[0][0]} side has no torch op ({no_ops_reason(without[0][1])})")
    # the words of the no-op warnings (optree), which the operator, memory and API flags would give
    said = f"; {who}, so the operator, module, memory and API comparisons have nothing to pair"
    would = comparisons_without_ops(ctx)[1]
    return said + (f": {would_add(would)}" if would else ", and no other comparison applies to this pair")


def _no_kernels(profile: Profile, side: str, step: int = -1, level: int = logging.WARNING) -> str:
    """Say at ``level`` why ``profile`` gives KernelCompare no kernel where its path says it all, its ``side``
    first in the parenthesis (two ranks of one job differ by a digit of a path); else return what its
    kernel_details.csv lacks, for the original's "Failed to enable" line (``_failed_sides``)."""
    if profile.source == "ascend_db":  # the original's advice below names a CSV a DB export does not have
        where = f" in step {step}" if step >= 0 else ""
        log.log(level, "Can't find any valid kernels in the file: %s%s.", profile.path, side_named(
            side, f"no compute task{where}: the database's TASK / COMPUTE_TASK_INFO tables hold none"))
        return ""
    if profile.level == "trace":  # the original's advice below (level, aic_metrics) would mislead here
        log.log(level, "Can't find any valid kernels in the file: %s%s.", profile.path,
                side_named(side, f"{bare_trace(profile)} has no kernel_details.csv"))
        return ""
    if profile.kernel_details is None:  # the loader said the file is absent; "lacks duration" would mislead
        log.log(level, "Can't find any valid kernels in the file: %s%s.", profile.path,
                side_named(side, "no kernel_details.csv"))
        return ""
    if "Duration(us)" in profile.kernel_details.columns:
        # the loader requires the column: what is missing is a Type (Level0 writes N/A), which "lacks duration" hid
        where = f" of step {step}" if step >= 0 else ""
        return f"gives no kernel{where} a Type (each is N/A or empty, as a Level0 export writes it)"
    return "lacks duration"


def _failed_sides(ctx: RunContext, failed: list[tuple[str, Profile, int]]) -> None:
    """The warnings of the sides (side, profile, step) that give KernelCompare no kernel: the original's "Failed
    to enable" line is followed by the sides it is about and their paths, which it did not name (a Level0 export
    on one side of two: the line named no input, the lines after it a path each), once for the sides it says
    alike. Where neither side gives a kernel in a run without ``--enable_*`` flags they are INFO lines
    (``Options.notice_level``), as the memory comparison's "Can't find any memory event" of two sides without
    memory records: the user did not ask for the comparison and neither side has anything for it (two bare
    trace_view.json files printed two warnings after the loaders' that they have no kernel_details.csv); with the
    other side's kernels, or the comparison asked for, a warning."""
    level = ctx.options.notice_level() if len(failed) == 2 else logging.WARNING
    lacking: dict[str, list[tuple[str, Profile]]] = {}
    for side, profile, step in failed:
        what = _no_kernels(profile, ctx.side(profile), step, level)
        if what:
            lacking.setdefault(what, []).append((side, profile))
    for what, sides in lacking.items():
        log.log(level, "Failed to enable enable_kernel_compare,kernel_details.csv %s. Input%s: %s.", what,
                "s" if len(sides) > 1 else "", " and ".join(f"{side} {profile.path}" for side, profile in sides))
        for _side, profile in sides:
            log.log(level, "Can't find any valid kernels in the file: %s. Please make sure that the profiling data "
                    "is greater than level0 and aic_metrics=PipeUtilization.", profile.path)


def _step_ids(profile: Profile) -> np.ndarray | None:
    """The Step Id of each kernel_details row as an exact int (-1 for none), None without the column. Ids are
    compared as integers, exactly (a float64 reads 2**53 + 1 as 2**53: two steps' kernels were one step)."""
    kd = profile.kernel_details
    col = next((c for c in ("Step Id", "Step ID") if kd is not None and c in kd.columns), None)
    if col is None:
        return None
    cells = kd[col]
    if cells.dtype.kind in "iu":
        return cells.to_numpy()
    # text (a DB export writes its step ids as digits, "" for none): each distinct text read once, as a marker's id
    codes, uniq = pd.factorize(cells.to_numpy(dtype=object), use_na_sentinel=True)
    return np.array([*(step_number(str(v)) for v in uniq.tolist()), -1], dtype=object)[codes]


def _has_step_rows(profile: Profile, step: int) -> bool:
    """Whether any kernel_details row (valid Type or not) carries ``step`` as its Step Id."""
    ids = _step_ids(profile)
    return ids is not None and bool((ids == step).any())


def _unstepped_in_step(profile: Profile, step: int, rng: tuple[int, int] | None) -> int:
    """How many kernel_details.csv kernels of a valid Type have no Step Id (empty, N/A or unreadable) yet start
    inside ``step``'s span (``rng``, its ProfilerStep# marker, inclusive): KernelCompare keeps a text export's
    kernels by their Step Id alone (reference-2 §6.1), so these leave the step's figures. torch_npu leaves the id
    empty for kernels outside every step; one inside a step's span without it is a damaged export or a gap in the
    profiler's step assignment, which the user should hear of. 0 for a DB export (its kernels are the step's by
    time) or without a range."""
    kd = profile.kernel_details
    if (rng is None or profile.source == "ascend_db" or kd is None or not len(kd) or "Type" not in kd.columns
            or "ts" not in kd.columns):
        return 0
    ids = _step_ids(profile)
    if ids is None:
        return 0
    ts = col_of(kd, "ts", np.int64)
    cand = (ids == -1) & starts_read(kd) & (ts >= rng[0]) & (ts <= rng[1])
    if not cand.any():
        return 0
    t_codes, t_text = _stripped(kd["Type"])
    return int(np.count_nonzero(cand & _valid_types(t_text)[t_codes]))


def _range_or_none(ctx: RunContext, side: str) -> tuple[int, int] | None:
    """``side_range``, None where the trace does not hold the step: kernel_details.csv's own refusal of a step it
    lacks (which names the steps it holds) comes first, as before."""
    try:
        return side_range(ctx, side)
    except StepError:
        return None


def _steps_held(profile: Profile) -> str | None:
    """The steps kernel_details.csv does hold, for the missing-step error: the trace may hold the step while
    the CSV does not (a cut or partial export), and the trace's step list would then send the user in circles."""
    ids = _step_ids(profile)
    held = sorted({int(v) for v in ids[ids >= 0].tolist()}) if ids is not None else []
    if not len(held):
        return None
    steps = id_ranges(held)
    return f"it holds step{'s' if len(held) > 1 else ''} {steps}"


def _no_step_ids(profile: Profile) -> bool:
    """A text export whose kernel_details.csv gives no row a step (the loader reads a missing column as -1)."""
    ids = _step_ids(profile)
    return profile.source != "ascend_db" and ids is not None and len(ids) > 0 and not (ids >= 0).any()


def _untyped_notice(ctx: RunContext, profile: Profile, sheet: str) -> None:
    """A DB export without op types (Level0) fills ``sheet`` with one N/A row: said, for either sheet (the
    KernelTypeCompare of ``--use_kernel_type`` showed it without a word)."""
    log.log(ctx.options.notice_level(), "%s: the database names no op type of its compute tasks (N/A: a Level0 "
            "export records none), so %s shows them as one N/A type.%s", profile.path, sheet,
            side_named(ctx.side(profile)))


def kernel_types_whole(ctx: RunContext) -> list[str]:
    """The sides ("base", "comparison") given a step whose KernelTypeCompare covers the whole profile: text
    exports, whose op_statistic.csv holds no step ids (a DB builds its statistic from the step's tasks), where the
    kernel comparison makes that sheet (``--use_kernel_type``, NPU data on both sides). ``build`` says so, once
    for both: the time breakdown's step note leaves it to that warning (``checks._step_row``)."""
    opts = ctx.options
    if not (opts.enable_kernel_compare and opts.use_kernel_type and ctx.base.is_npu and ctx.comparison.is_npu):
        return []
    return [side for side, p in (("base", ctx.base), ("comparison", ctx.comparison))
            if side_step(ctx, side) >= 0 and p.source != "ascend_db"]


def _whole_kernel_types_notice(ctx: RunContext) -> None:
    """One warning for the sides whose KernelTypeCompare ignores their step (``kernel_types_whole``), naming
    each side's path and step: one line per side said the same fact twice on a pair of text exports."""
    sides = kernel_types_whole(ctx)
    for side in sides:
        side_range(ctx, side)  # an id the data does not hold is refused, as KernelCompare does
    if not sides:
        return
    profiles = {"base": ctx.base, "comparison": ctx.comparison}
    steps = {side: side_step(ctx, side) for side in sides}
    if len(sides) == 1:
        where = str(profiles[sides[0]].path)
    else:
        where = f"base {ctx.base.path} and comparison {ctx.comparison.path}"
    if len(set(steps.values())) == 1:
        which = f"step {steps[sides[0]]}"
    else:
        which = f"base step {steps['base']} and comparison step {steps['comparison']}"
    log.warning("%s: op_statistic.csv holds no step ids, so KernelTypeCompare covers every step, not %s only.",
                where, which)


def build(ctx: RunContext) -> list[Sheet]:
    """KernelTypeCompare with ``--use_kernel_type``, else KernelCompare; nothing for GPU data."""
    if not _npu_pair(ctx):
        return []
    if ctx.options.use_kernel_type:
        _whole_kernel_types_notice(ctx)
        tables = [kernel_type_table(p) for p in (ctx.base, ctx.comparison)]
        for p, t in zip((ctx.base, ctx.comparison), tables, strict=False):
            if not t:
                log.warning("Can't find any valid kernel type data (op_statistic.csv) in the file: %s%s", p.path,
                            side_named(ctx.side(p)))
        if not all(tables):
            return []
        for p, t in zip((ctx.base, ctx.comparison), tables, strict=True):
            if p.source == "ascend_db" and all(typ == "N/A" for typ, _core in t):
                _untyped_notice(ctx, p, "KernelTypeCompare")
        rows = kernel_type_rows(*tables)
        return [Sheet("KernelTypeCompare", KERNEL_TYPE_COLUMNS, frame_from_rows(rows, 15), *SPANS)]

    groups = []
    failed: list[tuple[str, Profile, int]] = []  # the sides that give no kernel, said together
    untold = False  # a side whose kernels cannot be limited to its step
    for side, p in (("base", ctx.base), ("comparison", ctx.comparison)):
        step = side_step(ctx, side)
        if step >= 0 and _no_step_ids(p):
            # MindSpore writes the column only with a schedule and not in O2 graph mode: the step cannot be told
            side_range(ctx, side)  # an id the trace does not hold is refused, as KernelTypeCompare does
            log.warning("%s: kernel_details.csv gives no kernel a Step Id, so its kernels cannot be limited to step "
                        "%d (the profiler writes them only for a run with a schedule; MindSpore not in O2 graph "
                        "mode either); KernelCompare is left out.%s", p.path, step, side_named(ctx.side(p)))
            untold = True
            continue
        if step >= 0 and (n := _unstepped_in_step(p, step, _range_or_none(ctx, side))):
            log.warning("%s: %s kernel(s) of a valid Type have no Step Id yet start inside step %d (the span of "
                        "its ProfilerStep#%d in %s); KernelCompare keeps a text export's kernels by their Step Id, "
                        "as the original does, so it leaves them out of step %d (a damaged export, or kernels the "
                        "profiler placed in no step).%s", data_file(p, "kernel_details.csv"), f"{n:,}", step,
                        step, steps_file(p), step, side_named(ctx.side(p)))
        g = _group_columns(p, step, ctx.side(p))
        if g is None:
            # the original reads no kernel details at trace level; a step whose rows all lack a valid
            # Type (level0 exports) is no missing step: the sheet is skipped as without a step
            # (a DB export's step was checked against its STEP_TIME table when it was loaded: a step without
            # compute tasks there is said by _failed_sides, not refused as absent)
            # a directory without kernel_details.csv is no missing step either: _failed_sides names the file
            if (step >= 0 and p.level != "trace" and p.source != "ascend_db" and p.kernel_details is not None
                    and not _has_step_rows(p, step)):
                with on_side(_refused_side(ctx, p)):  # its side, by ``side_range``'s rule (run and run/: both)
                    raise StepError(f"{data_file(p, 'kernel_details.csv')}: There is no kernel details information "
                                    f"for step {step}, please check whether the data contains this step.",
                                    _steps_held(p))
            failed.append((side, p, step))
        groups.append(g)
    _failed_sides(ctx, failed)
    if untold or not all(g is not None for g in groups):
        return []
    for p, g in zip((ctx.base, ctx.comparison), groups, strict=True):
        if p.source == "ascend_db" and all(t == "N/A" for t in g["type"]):  # every compute task counts (§7.4)
            _untyped_notice(ctx, p, "KernelCompare")
    shaped = ["Input Shapes" in p.kernel_details.columns for p in (ctx.base, ctx.comparison)]
    if shaped[0] != shaped[1]:  # a column lost from one file: its kernels' shapes read N/A, pairing with none
        lacking = ctx.comparison if shaped[0] else ctx.base
        log.warning("%s: kernel_details.csv has no Input Shapes column, so KernelCompare reads every kernel's shape "
                    "as N/A, and its kernels pair with none of the other side's of the same Type and a shape.%s",
                    lacking.path, side_named(ctx.side(lacking)))
    return [Sheet("KernelCompare", KERNEL_COLUMNS, kernel_frame(*groups), *SPANS)]
