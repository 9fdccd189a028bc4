"""Validity checks of a comparison: can the two profiles be compared, and how should the figures be read.

One row per check (``guards``), in ``ctx.frames["guards"]`` and under the Summary sheet's waterfall; a "warn"
says the two sides are probably not the same workload (operator names, input shapes, step count, world size,
device count), a "note" says what differs by design or changes how to read the figures on the same workload
too (NPU export kind, NPU profiler settings, GPU vendor, GPU vs NPU categories, categories without framework
ops, longest idle stretch, computing split into categories, kernels launched before the profile, kernels linked
to no operator, graph replays, module sheets coverage, time breakdown of the steps).
``log_guards`` says the failed ones once.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import col_of
from ..logs import api_worded
from ..model import (
    DB_COPY_TASK,
    HCCL_CORES,
    LAUNCH_CATS,
    OTHER_STEP_MARKS,
    SDMA_TASK_TYPES,
    STEP_MARK,
    UNREAD_SETTINGS,
    Profile,
    bare_trace,
    factorize,
    framework_label,
    framework_of,
    hcom_name,
    marker_step,
    npu_framework,
    object_array,
    object_column,
    us_text_of,
)
from ..textsafe import and_list, id_ranges, short_repr
from ..units import MAX_RANK
from . import classify
from .breakdown import BUCKETS, Breakdown, Bucket, app_counted_gb, peak_reserved_gb
from .breakdown_npu import has_pmu, hccl_op_rows, no_pmu_why
from .kernels import any_typed, kernel_types_whole
from .optree import Unlinked, built_tree, compared_whole, neither_reason, no_ops_reason, shape_key, unlinked_kernels
from .overall import ROW_OF_BUCKET, breakdown_keywords, find_breakdowns
from .overall import SHEET_NAME as OVERALL_SHEET
from .steps import kernel_steps
from .table import Sheet, column_at, ms3, plain_frame, sheet_numbers, text_cells
from .waterfall import unsplit

if TYPE_CHECKING:  # pragma: no cover
    from ..api import CompareResult, RunContext
    from .classify import Keywords

log = logging.getLogger("msprof-analyze")

#: Below this operator-name match rate the two sides are probably different workloads.
MATCH_RATE_THRESHOLD = 0.6
#: How many of the heaviest operators the input-shape guard looks at.
SHAPE_TOP_OPS = 10
GUARD_COLUMNS = ["Check", "Status", "Base", "Comparison", "Detail"]


def _ms(ns: float) -> str:
    """A Detail's ms: whole ns to 3 decimals a half away from zero, as the verdict and the waterfall give the same
    figure (``ns / 1e6`` by its float read a DB side's E2E 4.5 us over a whole us as .004 beside the verdict's
    .005)."""
    return f"{ms3(ns):.3f}"


def _guard(check: str, ok: bool | None, base: Any, comparison: Any, detail: str) -> dict[str, Any]:
    """A row of typed figures: a rate is a float fraction (shown as a percentage), a count an int, a
    word a str; a figure of the pair (a Jaccard index, operators checked on both sides) fills both sides."""
    # a failed NOTE_CHECKS check is a "note": it fails on the same workload too (other hardware, export)
    status = "unknown" if ok is None else ("ok" if ok else "note" if check in NOTE_CHECKS else "warn")
    return {"Check": check, "Status": status, "Base": _figure(base), "Comparison": _figure(comparison),
            "Detail": detail}


def _figure(v: Any) -> float | int | str | None:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    return float(v)


def shown(v: Any) -> str:
    """A guard figure as text: rates (floats) as percentages; a side the check could not judge "n/a"."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.1%}" if isinstance(v, float) else str(v)


def _op_names(ops: pd.DataFrame) -> set[str]:
    """The distinct op names (``pd.unique``'s; a set of the texts themselves when all are str, ~4x cheaper)."""
    if not len(ops):
        return set()
    names = col_of(ops, "name")
    got = set(names.tolist())
    return got if all(type(n) is str for n in got) else set(pd.unique(names).tolist())


def _empty_side(nb: set[str], nc: set[str]) -> str:
    return "either side" if not (nb or nc) else "the base side" if not nb else "the comparison side"


def _match_rate(ctx: RunContext, nb: set[str], nc: set[str]) -> tuple[float | None, Any, Any, str]:
    """(lowest rate, base figure, comparison figure, how): the operator comparator's match rates
    (``ctx.frames["match_rate"]``: matched / operators per side), else a Jaccard index of the
    framework operator names of ``nb`` / ``nc`` (all names when a side has none), one figure for both."""
    got = _frame_rates(ctx.frames.get("match_rate"), ctx.options.max_kernel_num)
    if got is not None:
        return got
    if not nb or not nc:
        # the figures are then counts, in the columns that hold rates elsewhere: say so ("115 | 0" read as rates)
        # a GPU trace of runtime calls alone (annotations aside) counts no operator against framework ops
        # (``RunContext.has_ops``)
        runtime = [p.is_gpu and p.has_ops and not ctx.has_ops(p) for p in (ctx.base, ctx.comparison)]
        bare = [p for p, names in ((ctx.base, nb), (ctx.comparison, nc)) if not names]
        left_out = ""
        if any(runtime):
            kind = "a GPU trace without cpu_op events, against framework ops"
        elif any(ctx.has_ops(p) for p in bare):  # ops, none in the step asked for
            kind = "a MindSpore or hardware-only profile"
        else:
            # the side's kind in the one-sided warning's words, and the sheets that warning says are left out: a
            # reader of the workbook alone saw no OperatorCompare or ModuleCompare and no word of why
            kind = neither_reason(ctx) if len(bare) == 2 else no_ops_reason(bare[0])
            left_out = ", so no sheet pairs them (operator, module, memory, API)"
        return (None, len(nb), len(nc),
                f"no operators on {_empty_side(nb, nc)} ({kind}): nothing to match{left_out} "
                "(figures: distinct operator names per side)")
    fb, fc = _framework_ops(nb), _framework_ops(nc)
    if fb and fc:
        # the backend's own names (cudaLaunchKernel, aclnnMm, npu::..., record_event) differ between a
        # GPU and an NPU run of one model: 50% of all names shared by the AlexNet pair, 78% of these
        nb, nc, what = fb, fc, "framework operator names (aten::, autograd::)"
    else:
        what = "operator name sets"
    rate = len(nb & nc) / len(nb | nc)
    return rate, rate, rate, f"Jaccard index of the {what}"


def _frame_rates(mr: Any, max_kernel_num: int | None = None) -> tuple[float, float | None, float | None, str] | None:
    """``_match_rate``'s answer from the match-rate frame (``operators.record_match_rate``): rows with an empty
    side left out, NaN rates skipped, the lowest rate per side and of both; None without a rate. What each rate
    counts is said as the match-rate line says it (``operators.counted``: "top-level operators"). On arrays: ~15
    pandas calls on a one-row frame cost ~0.8 ms."""
    from .operators import counted

    if not isinstance(mr, pd.DataFrame) or not len(mr) or not {"base_rate", "comparison_rate"} <= set(mr.columns):
        return None
    br, cr = _floats(mr, "base_rate"), _floats(mr, "comparison_rate")
    if {"base_total", "comparison_total"} <= set(mr.columns):
        # a comparison with nothing on one side (no torch op in a MindSpore profile, no module in a trace
        # recorded without with_modules) matched nothing by necessity: no evidence of another workload
        keep = (_floats(mr, "base_total") > 0) & (_floats(mr, "comparison_total") > 0)
        br, cr = br[keep], cr[keep]
    else:
        keep = np.ones(len(mr), dtype=bool)
    hb, hc = ~np.isnan(br), ~np.isnan(cr)
    if not (hb.any() or hc.any()):
        return None
    said = [counted(str(w), max_kernel_num) for w in col_of(mr, "what")[keep].tolist()] if "what" in mr.columns \
        else []
    what = ", ".join(w for w, _ in said) or counted("operators")[0]
    drilled = "".join(f"; {d}" for _, d in said if d)
    low_b = float(br[hb].min()) if hb.any() else None
    low_c = float(cr[hc].min()) if hc.any() else None
    return (min(v for v in (low_b, low_c) if v is not None), low_b, low_c,
            f"matched / compared {what} per side (operator comparison{drilled})")


def _floats(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as float64: number columns as they are, others through pandas' coercion (unreadable: NaN)."""
    values = col_of(frame, name)
    if values.dtype.kind in "iufb":
        return values.astype(np.float64)
    return np.asarray(pd.to_numeric(pd.Series(values, dtype=object), errors="coerce"), dtype=np.float64)


FRAMEWORK_PREFIXES = ("aten::", "autograd::")


def _framework_ops(names: set[str]) -> set[str]:
    return {n for n in names if isinstance(n, str) and n.startswith(FRAMEWORK_PREFIXES)}


#: The step count check's Detail: what it counts. A step id is one step whatever the stretches its markers cover
#: (one id on two stretches of a trace, a marker written twice, counts once); the text said "ranges" and read 2.
STEP_COUNT_DETAIL = "distinct ProfilerStep#N ids in the trace"


def _step_count(names: set[str], p: Profile | None = None) -> tuple[int, list[str]]:
    """The distinct ProfilerStep#N ids (``STEP_COUNT_DETAIL``) and the markers whose name holds no id, read as
    ``--base_step`` reads them (``model.marker_step``): ``ProfilerStep#050`` and ``ProfilerStep#50`` are one step,
    ``ProfilerStep#1.5`` and a bare ``ProfilerStep#`` none (the count was of names starting with the mark: 4). A DB
    export cut to the step asked for counts its STEP_TIME ids, since its ops hold that step's marker alone (a
    text-vs-DB run with a step warned "base 3, comparison 1"). A text export without torch ops counts the markers
    its loader read among its other events (``extra["step_marks"]`` where a step was asked for, as the step options
    read them: MindSpore 2.5+ writes them with category ""; their names alone, ``extra[OTHER_STEP_MARKS]``, without
    one), where it read "no ProfilerStep#N op" beside the step."""
    steps = p.extra.get("steps") if p is not None and p.source == "ascend_db" else None
    if steps is not None and p.extra.get("step", -1) >= 0 and len(steps):
        return int(steps["id"].nunique()), []
    if p is not None and not len(p.ops) and (other := p.extra.get("step_marks")) is not None:
        names = set(other["name"].tolist())
    elif p is not None and not len(p.ops) and (other := p.extra.get(OTHER_STEP_MARKS)) is not None:
        names = set(other)
    marks = sorted(n for n in names if isinstance(n, str) and STEP_MARK in n)
    ids = [marker_step(n) for n in marks]
    return len({i for i in ids if i != -1}), [n for n, i in zip(marks, ids, strict=True) if i == -1]


def _kernel_step_words(blank: list[str], b: Profile, c: Profile) -> str:
    """The step count Detail's words on a blank side whose kernel_details.csv numbers its kernels by step (the
    MindSpore layout without markers): "no ProfilerStep#N op" alone read as a profile without steps, and left
    unsaid that the step options, which go by the markers, refuse it."""
    held = {side: kernel_steps(p) for side, p in zip(_SIDES, (b, c), strict=True) if side in blank}
    held = {side: ids for side, ids in held.items() if ids}
    if not held:
        return ""
    texts = {side: id_ranges(ids, escape=False) for side, ids in held.items()}
    if len(texts) == 2 and len(set(texts.values())) == 1:
        named = f"both sides' kernel_details.csv number kernels by step ({texts['base']})"
    else:
        named = and_list([f"the {side} side's kernel_details.csv numbers kernels by step ({t})"
                          for side, t in texts.items()])
    return (f"; {named}, but a step's range is that of its ProfilerStep# marker, so --base_step / "
            f"--comparison_step do not apply to {'them' if len(texts) == 2 else 'that side'}")


def _idless_words(idless: tuple[list[str], list[str]]) -> str:
    """The step count Detail's words on the markers whose name holds no step id, by side: the step options reject
    them too ("Can not convert ... to int"), so a count that leaves them out says which it left out."""
    parts = [f"{side} side " + and_list([short_repr(n) for n in names[:3]]
                                        + ([f"{len(names) - 3:,} more"] if len(names) > 3 else []))
             for side, names in zip(_SIDES, idless, strict=True) if names]
    return f"; not counted, no step id after '#': {'; '.join(parts)}" if parts else ""


#: parallel_group_info names of the group of every rank: torch_npu's, MindSpore's.
WORLD_GROUPS = ("default_group", "hccl_world_group")


def _world(p: Any) -> tuple[int | str | None, int, int]:
    """The world size as the check shows it, and the range it lies in: the metadata's figure (exact), else
    "at least N" from the ranks the communication tasks name (N >= 2: one rank's own tasks tell nothing)."""
    exact = _world_size(p.metadata)
    if exact is not None:
        return exact, exact, exact
    if p.rank_span >= 2:
        return f"at least {p.rank_span}", p.rank_span, MAX_WORLD
    return None, 0, 0


#: Where a side's "at least N" world size comes from, by its kind of data (``Profile.rank_span``).
_SPAN_SOURCES = {"ascend_text": "trace_view.json's HCCL tasks (src rank / dst rank)",
                 "ascend_db": "the srcRank / dstRank cells of COMMUNICATION_TASK_INFO"}


def _span_words(sides: list[tuple[str, Any]]) -> str:
    """Where each side's "at least N" comes from, so that a reader can check it in the files: the AlexNet text and
    DB exports read "at least 8" with no world size in their metadata, their HCCL tasks naming peers 0-7 (each
    rank's all-reduces move 61.2 MB to each of 7 peers over HCCS: an 8-rank job, of which two ranks' exports were
    kept). "" where no side's figure is such a bound."""
    said: dict[str, list[str]] = {}
    for side, p in sides:
        if _world_size(p.metadata) is None and p.rank_span >= 2:
            where = _SPAN_SOURCES.get(p.source, "the communication tasks")
            if p.source == "ascend_text" and p.level == "trace":
                # a file given alone: a legacy CANN timeline (msprof_0_2_1.json) read as "trace_view.json's"
                where = f"{os.path.basename(p.path)}'s HCCL tasks (src rank / dst rank)"
            said.setdefault(f"{where} name rank ids up to {p.rank_span - 1} and the metadata records no world size",
                            []).append(side)
    return "".join(f"; {'both sides' if len(s) == 2 else f'{s[0]} side'}: {w}" for w, s in said.items())


#: The largest world size: rank ids run from 0 to ``MAX_RANK`` (torch.distributed's rank is a C int).
MAX_WORLD = MAX_RANK + 1


def _world_size(meta: dict) -> int | None:
    """The world size the metadata records (``_world_reading``), None where it records none."""
    return _world_reading(meta)[0]


def _world_reading(meta: dict) -> tuple[int | None, str, str]:
    """The world size the metadata records: a ``world_size`` of 1 to ``MAX_WORLD`` ranks, an integer or its ASCII
    digits (str.isdigit() also takes "²", on which int() raised), else the size of the one default process group
    an NPU profile lists; the first ``world_size`` it holds that is none ("" where none is), which the check's
    Detail names: 0, 10**18 or 2**63 - 1 ranks were shown as a figure and compared, two sides of 10**18 "ok"; and
    the key the size was read from ("" where none), which the Detail names too (``_world_sources``)."""
    passed = ""
    for key in ("distributedInfo", "distributed_args"):  # Kineto's trace, torch_npu's profiler_metadata.json
        info = meta.get(key)
        if isinstance(info, dict) and info.get("world_size") is not None:
            v = raw = info["world_size"]
            if isinstance(v, str) and v.isascii() and v.isdigit() and len(v.lstrip("0")) <= len(str(MAX_WORLD)):
                v = int(v.lstrip("0") or "0")  # leading zeros: no digit toward int()'s 4,300-digit limit
            if type(v) is int and 1 <= v <= MAX_WORLD:
                return v, passed, f"{key}.world_size"
            passed = passed or f"{key}.world_size {short_repr(raw)}"
    # torch_npu records the process groups without Megatron's distributed_args: the default group (MindSpore's
    # hccl_world_group) is the world
    groups = meta.get("parallel_group_info")
    if isinstance(groups, dict):
        found = {(len(g["global_ranks"]), g["group_name"]) for g in groups.values() if isinstance(g, dict)
                 and g.get("group_name") in WORLD_GROUPS and isinstance(g.get("global_ranks"), list)}
        worlds = {n for n, _ in found}
        if len(worlds) == 1 and 1 <= min(worlds) <= MAX_WORLD:  # a group of no rank is no world
            names = " / ".join(sorted({g for _, g in found}))
            return worlds.pop(), passed, f"parallel_group_info ({names}'s global_ranks)"
    return None, passed, ""


#: Where each kind of data keeps the metadata ``_world_reading`` reads.
_META_FILES = {"kineto": "the trace", "ascend_db": "META_DATA"}


def _world_sources(sides: list[tuple[str, Any]]) -> str:
    """Where each side's world size was read, by the key that gave it ("both sides: the trace's
    distributedInfo.world_size"), or what the side lacks where it has none and no communication task names
    another rank; sides whose figure is the ranks their tasks name are left to ``_span_words``. The Detail
    listed every place any kind of data keeps one (182 characters) on every pair, a GPU pair's too."""
    said: dict[str, list[str]] = {}
    for side, p in sides:
        where = _META_FILES.get(p.source, "profiler_metadata.json")
        _, passed, key = _world_reading(p.metadata)
        if key:
            text = f"read from {where}'s {key}"
        elif p.rank_span >= 2 or passed:  # ``_span_words`` / ``_passed_words`` say what the side holds
            continue
        elif p.source == "kineto":
            text = "the trace records no distributedInfo.world_size"
        elif p.source == "ascend_text" and p.level == "trace":  # no profiler_metadata.json beside it
            text = f"{bare_trace(p)} has no metadata, and no HCCL task names another rank"
        else:
            text = (f"{where} records no world size (distributed_args.world_size, the default group) and no HCCL "
                    "task names another rank")
        said.setdefault(text, []).append(side)
    return "; ".join(f"{'both sides' if len(s) == 2 else f'{s[0]} side'}: {w}" for w, s in said.items())


def _passed_words(sides: list[tuple[str, Any]]) -> str:
    """The metadata world sizes that are none (``_world_reading``), per side: a figure left blank, or taken from
    the default group or the communication tasks, says why. "" where every world_size read is one."""
    said = [(side, passed) for side, p in sides if (passed := _world_reading(p.metadata)[1])]
    if len(said) == 2 and said[0][1] == said[1][1]:
        said = [("both sides", said[0][1])]
    return "".join(f"; {side if side == 'both sides' else f'{side} side'}: {what} is no world size (an integer "
                   f"from 1 to {MAX_WORLD}), left out" for side, what in said)


def _device_count(p: Any) -> int | None:
    """Devices that ran kernels; Kineto's deviceProperties (every GPU the process could see, 8 for a
    one-GPU job on an 8-GPU host) only when the kernels name no device."""
    if len(p.kernels) and "device" in p.kernels:
        dev = col_of(p.kernels, "device")
        dev = dev[dev >= 0]
        if dev.size:
            return int(np.unique(dev).size)
    props = p.device_properties
    return len(props) if props else None


def _no_device(p: Any) -> str:
    """Why a side's device count is blank, by its kind of data."""
    if p.source == "ascend_text" and p.level == "trace":
        # no kernel_details.csv to blame: it read "an NPU text export's kernel_details.csv has no device column"
        # of a MindSpore run's msprof_0_2_1.json given alone
        return f"{bare_trace(p)}: its events name no device"
    if p.source == "ascend_text":
        return "an NPU text export's kernel_details.csv has no device column"
    if p.source == "ascend_db":
        return "a DB export whose computing tasks' TASK.deviceId are NULL"
    return "a trace whose kernels name no device and that records no deviceProperties"


VENDOR_CHECK = "GPU vendor"
KINDS_CHECK = "GPU vs NPU categories"
#: The key keeps its words (the Summary's, the JSON's "Check": scripts select rows by it); the row's title, cells
#: and Detail say "torch op", as the "Can't find any torch op" warning: a MindSpore 2.5+ export has framework ops
#: (category ""), none of them a torch op (cpu_op), which is what files kernels under Conv / Matmul
OPLESS_CHECK = "categories without framework ops"
#: Share of a side's E2E time from which its copies the two kinds file differently are named (pair 4's SDMA
#: (Tensor Move), 0.574 ms, is 0.42 % of its side's; the bundled GPU pair's 0.002 ms of SDMA against an NPU, 0.05 %)
KINDS_SHARE = 0.001
EXPORT_CHECK = "NPU export kind"
SETTINGS_CHECK = "NPU profiler settings"
IDLE_CHECK = "longest idle stretch"
#: What a side's idle time is not: a copy (GPU memcpy / memset, NPU SDMA / DMA / MEMCPY_ASYNC task) is device work,
#: and counted idle the TimeSformer H100 trace's 3.46 ms of HtoD copies read as a 4.069 ms idle stretch, sending a
#: user after a host stall that was not there. The check, the Summary's idle note and the verdict say it alike
IDLE_WHAT = "no computing, communication or copy"
STEP_CHECK = "time breakdown of the steps"
CATEGORY_CHECK = "computing split into categories"
EARLY_CHECK = "kernels launched before the profile"
#: Share of E2E from which the stretch run by kernels launched before the profile is a note
EARLY_SHARE = 0.1
UNLINKED_CHECK = "kernels linked to no operator"
LAUNCHLESS_CHECK = "kernels without a launch flow"
REPLAY_CHECK = "graph replays"
#: Difference of the two sides' replayed shares of computing kernel time from which the graph replays are a note
REPLAY_SHARE_GAP = 0.1
#: Share of its computing kernel time the side replaying less must hold in the Matmul / Conv / Flash Attention steps
#: for that note: below it those steps barely move (hta's NVIDIA graph trace against vLLM's piecewise graphs: 2.022
#: ms, 1.0 % of the base's computing, was a note that changed no reading)
REPLAY_OP_SHARE = 0.05
MODULE_CHECK = "module sheets coverage"
#: Both sides one profile (``RunContext.same``): the row that says why every figure is unchanged
SAME_CHECK = "one profile on both sides"
#: Two sides with ops recorded by different frameworks (PyTorch against MindSpore 2.3 / 2.4, whose framework ops are
#: cpu_op events): the ops pair by name and the two name them differently (``_framework_row``)
FRAMEWORK_CHECK = "frameworks"
#: Difference of the two sides' shares of operator device time held by the module sheets from which that is a note
#: (``_module_row``: it reads the sheets)
MODULE_SHARE = 0.5
#: Checks that fail on the same workload too (a difference by design, such as other hardware or another export,
#: or one that changes how to read the figures, such as a long idle stretch): each is its own warning, about how
#: to read the figures, not part of the "may not be the same workload" block.
NOTE_CHECKS = {VENDOR_CHECK: "Base and comparison GPUs are from different vendors",
               KINDS_CHECK: "A GPU profile and an NPU profile count some work in different categories",
               OPLESS_CHECK: "A profile without torch ops counts some work in other categories",
               EXPORT_CHECK: "Base and comparison are different kinds of NPU export",
               SETTINGS_CHECK: "Base and comparison were collected with different NPU profiler settings",
               IDLE_CHECK: f"One stretch with {IDLE_WHAT} is half or more of a side's E2E time",
               STEP_CHECK: "The time breakdown covers the whole profile, not the step asked for",
               CATEGORY_CHECK: "One side's computing time is not split into categories",
               EARLY_CHECK: "Part of a side's E2E time runs kernels launched before the profile began",
               UNLINKED_CHECK: ("The operator and module sheets and their top contributors leave out kernels no "
                                "flow links to an operator"),
               LAUNCHLESS_CHECK: ("The time breakdown's categories read computing kernels no launch flow links to "
                                  "their op by their names alone"),
               REPLAY_CHECK: "One side replays much more of its computing from CUDA / HIP graphs than the other",
               MODULE_CHECK: "The module sheets hold much less of one side's operator device time than of the other's",
               SAME_CHECK: "Base and comparison are one profile",
               FRAMEWORK_CHECK: "Base and comparison were recorded by different frameworks"}
#: Share of E2E from which one idle stretch is a note: the sample traces' longest stretches are under 10 % of
#: E2E for training steps and 30-45 % for some benchmark loops, and 50-98 % where a profile holds one long stall
#: or opens long before the work (hta's PARAM AlexNet: 10.9 of 12.9 s)
IDLE_SHARE = 0.5
_SIDES = ("base", "comparison")


def whole_profile_sides(ctx: RunContext | CompareResult) -> list[str]:
    """The sides given a step whose time breakdown ignores it: text exports (reference-1 §1.4, as the original's
    OverallMetrics), which the Summary waterfall and the --fail_on_regression gate are built from too."""
    opts = ctx.options
    return [name for name, p, step in (("base", ctx.base, opts.base_step),
                                       ("comparison", ctx.comparison, opts.comparison_step))
            if step >= 0 and p.source == "ascend_text"]


def _step_row(ctx: RunContext) -> dict[str, Any] | None:
    """Where a step was asked for: what the time breakdown of each side covers."""
    steps = {"base": ctx.options.base_step, "comparison": ctx.options.comparison_step}
    if max(steps.values()) < 0:
        return None
    whole = whole_profile_sides(ctx)
    scope = {side: "whole profile" if side in whole or steps[side] < 0 else f"step {steps[side]}" for side in _SIDES}
    # options named bare in a check's Detail (here and below): the result's text, read by compare()'s caller too;
    # the log line names the CLI's option (``log_guards``). The gate only where this run has one: a run without
    # --fail_on_regression was told of "the fail_on_regression gate" it never asked for.
    gated = ctx.options.fail_on_regression is not None
    made = f"OverallMetrics, the waterfall and {_BARE_GATE}" if gated else "OverallMetrics and the waterfall"
    detail = (f"{made} of a text export cover the whole profile, as the original's OverallMetrics (the step limits "
              f"the operator, module, memory, API, KernelCompare and communication sheets{KERNEL_TYPES_WHOLE}); a DB "
              "export limits them to the step")
    if not whole:  # a step given only to DB exports: the row read as if about text exports (user walk, session 66)
        detail = (f"both sides are DB exports, which limit {made} to the step, as every other sheet (a text "
                  "export's cover the whole profile, as the original's OverallMetrics)")
    row = _guard(STEP_CHECK, not whole, scope["base"], scope["comparison"], detail)
    if kernel_types_whole(ctx):  # the kernel comparison's warning said it, for the same sides
        row[LOG_CUT] = KERNEL_TYPES_WHOLE
    # one input on both sides (``api.one_input``): its scope once, "(both sides whole profile)", as the other notes
    row[LOG_BOTH] = ctx.side(ctx.comparison) == "both sides"
    return row


#: The step note's words on KernelTypeCompare, which its log line leaves out where ``kernels.build`` warned of it
KERNEL_TYPES_WHOLE = "; KernelTypeCompare reads a text export's op_statistic.csv, which holds no step ids"
#: A row's key for words of its Detail that the log line leaves out (said by another warning of the run)
LOG_CUT = "log_cut"
#: A row's key for its note as the log says it, a block: (the title line's words after the figures, or "";
#: the items, each on a line of its own). A Detail of several parts read as one line of 500 to 1,000 characters
#: (tracelens' Qwen1.5 pair: the kernels launched before the profile, 994).
LOG_PARTS = "log_parts"
#: A row's key for its note's title where it is not ``NOTE_CHECKS``' (a title in other words for other devices)
LOG_TITLE = "log_title"
#: A row's key: its figures are one input's on both sides (``api.one_input``), which its title says once, "(both
#: sides N)", as its Detail does: "(base 4, comparison 4)" over a line per side read as two profiles
LOG_BOTH = "log_both"


def _in_parts(row: dict[str, Any], lead: str, items: list[str]) -> dict[str, Any]:
    """``row`` with its log block (``LOG_PARTS``): where there is more than one item; one item stays one line."""
    if len(items) > 1:
        row[LOG_PARTS] = (lead, items)
    return row


_EXPORT_KINDS = {"ascend_db": "db", "ascend_text": "text"}


def export_kind(p: Profile) -> str | None:
    """"text" or "db" for an NPU export (the "NPU export kind" check's words), None for other inputs."""
    return _EXPORT_KINDS.get(p.source)


def export_lead(profiler: str = "torch_npu") -> str:
    """The "NPU export kind" note's Detail: this lead, then its figures joined by "; "; the log shows each figure on
    a line of its own (``LOG_PARTS``; up to seven, ~1,500 characters on one line before). It says what to do: the
    figures told the user the export's part without how to leave it out. ``profiler``: the one that wrote both
    sides (``model.npu_framework``: torch_npu and MindSpore each have an export_type), "" for two or unknown, where
    "one torch_npu export_type" was said beside a MindSpore side."""
    who = f"{profiler} " if profiler else ""
    return ("the two kinds define these figures differently (the original's rules), so their difference is partly "
            f"the export's, not the job's (to compare the job alone, collect both runs with one {who}export_type): ")


#: ``export_lead`` of two torch_npu exports
EXPORT_LEAD = export_lead()


def _operator_sheets(ctx: RunContext) -> bool:
    """Whether the operator / module sheets are built: operator compare on and torch ops on both sides."""
    return bool(ctx.options.enable_operator_compare and ctx.has_ops(ctx.base) and ctx.has_ops(ctx.comparison))


def _hccl_kernel_rows(p: Profile) -> tuple[int, str]:
    """kernel_details.csv rows of a text export that are HCCL ops (``hcom_allReduce_``, core ``HCCL`` or
    ``COMMUNICATION``): rows of its KernelCompare that a DB export, whose compute tasks hold no HCCL op, never has;
    and what marks them, as the note says it: "hcom_*" where each one's Type (its KernelCompare row) is so named,
    else the cores too (a row of core COMMUNICATION without the prefix, which "(hcom_*)" sent the user to look
    for in vain)."""
    kd = p.kernel_details
    if p.source != "ascend_text" or kd is None or not len(kd) or "Type" not in kd.columns:
        return 0, ""
    types = kd["Type"].fillna("").astype(str).str.strip()
    typed = (~types.isin(["", "N/A"]) & (types.str.lower() != "nan")).to_numpy(dtype=bool)  # Level0: N/A, no row
    rows = hccl_op_rows(kd) & typed
    named = classify.per_unique(types.to_numpy(dtype=object), hcom_name, lower=False)
    by = "hcom_*" if not (rows & ~named).any() else f"hcom_* or Accelerator Core {' / '.join(HCCL_CORES)}"
    return int(rows.sum()), by


def _export_row(ctx: RunContext, bds: tuple[Breakdown, Breakdown] | None) -> dict[str, Any] | None:
    """The "NPU export kind" check: where a text export is compared with a DB export (torch_npu's export type
    changed between two runs), the figures of this run that the two kinds define differently by the original's
    rules (docs/differences.md, "Text against DB exports of one workload"), each named with its measure where
    the data gives one, so the user does not read a loader's definition as a change of the job. None where a
    side is no NPU export or the run builds none of those figures; an "ok" row (one kind) where it does."""
    b, c = ctx.base, ctx.comparison
    eb, ec = _EXPORT_KINDS.get(b.source), _EXPORT_KINDS.get(c.source)
    operators = _operator_sheets(ctx)
    opts = ctx.options
    if not (eb and ec) or not (operators or bds is not None or opts.enable_memory_compare
                               or opts.enable_kernel_compare):
        return None
    if eb == ec:  # an "ok" row only beside the operator sheets, as before the note named other figures
        if not operators:
            return None
        return _guard(EXPORT_CHECK, True, eb, ec,
                      f"both sides are {eb} exports (a text and a DB export define E2E and Free Time, Mem Usage, "
                      "Wait Time and the operator and module device times differently)")
    sides = {"text": ("base", b) if eb == "text" else ("comparison", c),
             "db": ("base", b) if eb == "db" else ("comparison", c)}
    text_side, text = sides["text"]
    db_side, db_export = sides["db"]
    parts = []
    beside = _text_beside_db(db_export)
    if beside:
        parts.append(f"which export was read: the {db_side} side's folder holds a text export too ({beside} beside "
                     f"{os.path.basename(db_export.files['db'])}), and a folder's DB export is read first, as in the "
                     "original; a copy of the folder without the .db compares text with text")
    if bds is not None:
        db_bd = bds[0] if db_side == "base" else bds[1]
        text_bd = bds[0] if text_side == "base" else bds[1]
        if db_bd.e2e_ns > 0 and db_bd.outside_busy_ns > 0:
            inside = db_bd.e2e_ns - db_bd.outside_busy_ns
            parts.append(
                "E2E and Free Time: a DB export's E2E window also spans its device tasks that are no kernel "
                "(MEMCPY_ASYNC, ...), a text export's (Overlap Analysis) only its computing and communication: "
                f"the {db_side} side's {_ms(db_bd.e2e_ns)} ms hold {_ms(db_bd.outside_busy_ns)} ms "
                f"outside them ({_ms(inside)} ms as a text export measures it)")
        odd = text_bd.no_pmu_kernels
        if odd.count and not text_bd.hide_op_details:
            parts.append(f"Computing Time's Number and categories: the {text_side} side's kernel_details.csv has "
                         f"{odd.count:,} kernel(s) without PMU values (N/A), {_ms(odd.ns)} ms, which a text "
                         "export leaves to Other and a DB export categorises")
        if db_bd.groups and text_bd.groups:
            # both 0 (level 0: no Notify_Wait task either side) is no split; nor is a side whose zero reads
            # nothing (a Level0 export: no typed HCCL task), which the console's note says, not the plane rule
            if (db_bd.wait_ns or text_bd.wait_ns) and not (db_bd.wait_unread or text_bd.wait_unread):
                parts.append("Wait Time: a text export picks the plane that waits least, one without Notify_Wait "
                             "included (0 ms), a DB export only planes that wait")
            parts.append("the communication group rows: a text export names a group 'Group N Communication' (or its "
                         "process-group name), a DB export by its HCCL name, so the two groups' rows do not pair")
    if bds is not None or opts.enable_memory_compare:  # Mem Usage: OverallMetrics, the memory line
        without = app_counted_gb(text)
        if without is not None and peak_reserved_gb(db_export) is not None:
            parts.append(f"Mem Usage: the {text_side} side's {peak_reserved_gb(text):.2f}G counts memory_record.csv's "
                         f"APP component ({without:.2f}G without it), which a DB export's MEMORY_RECORD does not hold")
    if operators:
        parts.append("operator and module device times: a text export links HCCL ops and memcpy tasks to torch ops, "
                     "a DB export only compute tasks")
    if opts.enable_kernel_compare and not opts.use_kernel_type:
        n, by = _hccl_kernel_rows(text)
        if n:
            parts.append(f"KernelCompare: the {text_side} side's kernel_details.csv lists {n:,} HCCL op(s) "
                         f"({by}), which a DB export's compute tasks do not hold")
    if not parts:
        return None
    profilers = {npu_framework(b), npu_framework(c)}
    lead = export_lead(profilers.pop() if len(profilers) == 1 else "")
    row = _guard(EXPORT_CHECK, False, eb, ec, lead + "; ".join(parts))
    row[LOG_PARTS] = (lead[:-2], parts)  # a block even of one figure, whose lead says what the figures are
    return row


def _text_beside_db(p: Profile) -> str:
    """"trace_view.json" where a DB export was read from a folder that also holds a text export (torch_npu's
    export_type text and db at once): the folder's DB wins (reference-1 §2.1), so against a text-only side the
    run compared two kinds of export while the user had a text export of both, with no word of it; "" otherwise
    (a .db given as a file was chosen by the user)."""
    db = p.files.get("db") if p.source == "ascend_db" else None
    # the level, not the path: a path is display text by now (``api.run_comparators``), \xNN where not UTF-8
    if not db or p.level == "database":
        return ""
    return "trace_view.json" if os.path.isfile(os.path.join(os.path.dirname(db), "trace_view.json")) else ""


def _why_no_categories(p: Profile) -> str:
    """What a side without categorised computing lacks, by the kind of input (the log audit saw a bare
    trace_view.json of a Level1 export called "a Level0 text export")."""
    if p.level == "trace":
        return f"{bare_trace(p)}: no kernel_details.csv"
    if p.source == "ascend_text":  # what its kernel_details.csv holds (the level is known at rank level only)
        kd = p.kernel_details
        if kd is None:
            return "no kernel_details.csv"
        if p.extra.get("profiler_level") == "Level0" or not any_typed(kd):
            return "a Level0 export: no kernel types or PMU counters"
        if not has_pmu(kd):
            why = no_pmu_why(p, "aic_metrics other than PipeUtilization")  # profiler_info.json's settings, if said
            return f"its kernel_details.csv has no PMU counters ({why})"
    return "its kernels carry no type or counter of a category"


def _category_row(bds: tuple[Breakdown, Breakdown], sides: tuple[Profile, Profile]) -> dict[str, Any] | None:
    """Where one side's computing is all "Other" and the other side's is split (an NPU Level0 export, whose
    kernels have no type or PMU counters, beside a GPU trace): every category of OverallMetrics then falls to 0
    on that side and its Other Time grows, which reads as a change of work (the waterfall takes computing as one
    step then: ``waterfall.unsplit``). Only when a side has computing time, and not between two GPU traces: a GPU
    kernel always falls in a category by its name, so the row could only read "ok" there, in NPU words (Paged
    Attention, MC2, a Level0 export) that mean nothing for GPU data."""
    if sides[0].is_gpu and sides[1].is_gpu:
        return None
    # at most 1: categories of kernels that overlap in time (concurrent streams) sum past their union
    shares = [min(bd.categorised_ns / bd.computing_ns, 1.0) if bd.computing_ns > 0 else None for bd in bds]
    if None in shares:
        return None
    ok = not unsplit(*bds)  # the waterfall's one Computing step and this note: one rule
    what = ("share of computing time in categories (Flash Attention, Conv, Matmul, Paged Attention, Vector, Cube, "
            "SDMA, MC2); ")
    if ok:
        # what the note would say, said as a note would: "so the waterfall takes computing as one step ...: compare
        # Computing Time, not its categories" read as advice beside "ok" and two sides split alike (365 characters)
        return _guard(CATEGORY_CHECK, ok, shares[0], shares[1],
                      f"{what}a note where one side has some and the other none (a Level0 NPU export, for one, has no "
                      "kernel types or PMU counters to split it by)")
    # a text export's reason is the breakdown's (what its kernel_details.csv lacks, and how to record it), whose own
    # line ``overall.build`` then leaves out. Each side's reason after the sentence, not inside its parentheses:
    # a reason's own "(a Level0 export records none: ...)" nested them two deep (497 characters on one log line)
    whys = [f"{side} side: {bd.categories_missing or _why_no_categories(p)}"
            for side, p, bd, share in zip(_SIDES, sides, bds, shares, strict=True) if share == 0]
    reading = ("the waterfall takes computing as one step (OverallMetrics shows that side's categories at 0), so "
               "compare Computing Time, not its categories")
    row = _guard(CATEGORY_CHECK, ok, shares[0], shares[1],
                 f"{what}a side with none has no data to split it by: {reading}; {'; '.join(whys)}")
    row[LOG_PARTS] = (f"{reading}; what a side lacks to split it by", whys)  # a block even of one side
    return row


def _side_label(side: str, one: bool) -> str | None:
    """How a note names a side's figures: the side, or for one input on both sides (``api.one_input``) "both
    sides" once, the comparison's figures (the same) then unsaid (None)."""
    if not one:
        return side
    return "both sides" if side == "base" else None


def _early_row(bds: tuple[Breakdown, Breakdown], unlinked: list[Unlinked | None] | None = None,
               one: bool = False) -> tuple[dict[str, Any] | None, list[str]]:
    """GPU sides whose E2E window opens with kernels the trace holds no launch of (the previous step's tail):
    that stretch counts in E2E and its computing kernels, by name only, in the categories (the original's
    rules), so two windows holding different amounts of the previous step differ by it. Only where a side has
    such a stretch; a side that cannot be judged (NPU data, a trace without launch flows) shows none.

    ``unlinked``: each side's kernels no flow links to an operator (None where the operator sheets were not
    built). Those of a note's stretch are the same kernels as the "kernels linked to no operator" note's: the
    note then says that the operator sheets leave them out too, once (tracelens' Qwen1.5 pair said its 436 /
    463 kernels in two notes). Returns the row and the sides whose early unlinked kernels it states, which
    ``_unlinked_row`` leaves out. ``one``: one input on both sides (``api.one_input``), whose figures are said
    once, "both sides: ...", as ``_unlinked_row``'s."""
    if not any(bd.early_ns for bd in bds):
        return None, []
    shares = [bd.early_ns / bd.e2e_ns if bd.has_launches and bd.e2e_ns > 0 else None for bd in bds]
    ok = not any(x is not None and x >= EARLY_SHARE for x in shares)
    wheres = [f"{label}: the first {_ms(bd.early_ns)} ms of E2E, where "
              f"{bd.early_kernels.count:,} computing kernels run ({_ms(bd.early_kernels.ns)} ms busy)"
              for side, bd in zip(_SIDES, bds, strict=True) if bd.early_ns and (label := _side_label(side, one))]
    told = [(side, bd, u) for side, bd, u in zip(_SIDES, bds, unlinked or (None, None), strict=True)
            if not ok and bd.early_ns and u is not None and u.early]
    sheets, read = "", "E2E and the categories"
    if told:
        read = "E2E, the categories and the operator figures"
        if all(u.early == bd.early_kernels.count and u.early_ns == bd.early_kernels.ns for _, bd, u in told):
            them = "them"
            figures = "" if len(told) == 2 else f" (on the {told[0][0]} side)"
        else:  # copies or collectives in the stretch, or concurrent kernels (busy is their union, here their sum)
            them = "the kernels of that stretch, computing or not,"
            figures = " (" + "; ".join(f"{label} {_unlinked_words(None, u.early, u.early_copies)[0]}, "
                                       f"{_ms(u.early_ns)} ms" for side, _, u in told
                                       if (label := _side_label(side, one))) + ")"
        sheets = (f"with no launch in the trace, no flow links {them} to an operator either, so the operator and "
                  f"module sheets and their top contributors leave them out{figures}, while the overall time "
                  "breakdown counts them")
    items = [*wheres, "they count in E2E, and the computing ones, by their names only, in the categories "
             "(collectives in communication), so windows holding different amounts of that step differ by them",
             *([sheets] if sheets else []),
             f"a note from {EARLY_SHARE:.0%}: read {read} with this in mind, or profile so that the previous step "
             "has ended (a warmup step, a synchronize before the profiled one)"]
    row = _guard(EARLY_CHECK, ok, shares[0], shares[1],
                 "share of E2E before the first kernel the trace holds a launch of, run by kernels launched before "
                 f"the profile began (the previous step's tail): {'; '.join(items)}")
    row[LOG_BOTH] = one
    # the log's title says "kernels launched before the profile began": its lead says the rest once
    return _in_parts(row, "the share of E2E before the first kernel the trace holds a launch of (the previous "
                     "step's tail)", items), [side for side, _, _ in told]


#: The "kernels linked to no operator" row's Detail opens with what its figures count; the log leaves it out, as
#: its note says it
UNLINKED_LEAD = ("device kernels (NPU: compute tasks) no flow links to an operator, which the operator and module "
                 "sheets and their top contributors leave out: ")


def _unlinked_words(p: Profile | None, n: int, copies: int = 0) -> tuple[str, str]:
    """What a side's unlinked kernels are and which link they lack: "436 kernels ... no launch flow" (GPU), "4 compute
    tasks ... no async_npu flow" (NPU text), "... no CANN connection id" (NPU DB). A GPU side's memcpys are named
    as such: "845 kernels (140 of them memory copies)" (hta's negative_queue sample), not 845 kernels. ``p`` None:
    a GPU side's."""
    gpu = p is None or p.is_gpu
    how = ("launch flow" if gpu else "CANN connection id" if p.source == "ascend_db" else "async_npu flow")
    if not gpu:
        return f"{n:,} compute task{'' if n == 1 else 's'}", how
    copy = "memory copy" if copies == 1 else "memory copies"
    if copies == n:
        return f"{n:,} {copy}", how
    kernels = f"{n:,} kernel{'' if n == 1 else 's'}"
    if not copies:
        return kernels, how
    return f"{kernels} ({copies:,} of them {'a ' if copies == 1 else ''}{copy})", how


def _unlinked_counts(ctx: RunContext) -> list[Unlinked | None] | None:
    """Each side's kernels no flow links to an operator, from the op trees this run built (never built here), None
    for a side whose trace links ops to kernels not at all (told so when its tree is built); None without the
    operator or module sheets."""
    if not _operator_sheets(ctx):
        return None
    trees = [built_tree(ctx, side) for side in _SIDES]
    return [unlinked_kernels(t) if t is not None and t.has_flows else None for t in trees]


def _unlinked_row(ctx: RunContext, counts: list[Unlinked | None] | None, early_row: bool,
                  told: Sequence[str] = (), overall_sheet: bool = False) -> dict[str, Any] | None:
    """Device kernels (NPU: compute tasks) no flow links to an operator (``optree.unlinked_kernels``): the operator
    and module sheets, and the top contributors drawn from them, leave them out, while the time breakdown counts
    them, so the operator device times miss them. Only beside those sheets (``counts``, ``_unlinked_counts``), for
    a side whose trace links ops to kernels at all; a note where a side has any, no row otherwise. A text export
    given a step is counted over the whole profile (its op tree spans every step; a DB export's tasks are cut to
    the step), which its part says. ``early_row``: the "kernels launched before the profile" row is shown, which
    measures the previous step's tail; ``told``: the sides whose kernels of that tail its note states for the
    operator sheets too: here each such side counts only its other kernels (each kernel is said once), and a side
    without any other has no part. ``overall_sheet``: the run writes OverallMetrics (a --fail_on_regression run
    without the profiling compare makes the breakdown for its waterfall alone)."""
    if counts is None:
        return None
    rest = [None if c is None else c if side not in told else
            Unlinked(c.n - c.early, c.ns - c.early_ns, c.copies - c.early_copies)
            for side, c in zip(_SIDES, counts, strict=True)]
    if not any(c is not None and c.n for c in rest):
        return None
    parts = []
    whole = whole_profile_sides(ctx)
    # one input on both sides (``api.one_input``: the comparison carries the base's path here): its part once,
    # "both sides ...", as the run's other notices say it; "base 4 ...; comparison 4 ..." read as two profiles
    one = ctx.side(ctx.comparison) == "both sides"
    for side, p, c, full in zip(_SIDES, (ctx.base, ctx.comparison), rest, counts, strict=True):
        if c is None or not c.n or not (label := _side_label(side, one)):
            continue
        what, how = _unlinked_words(p, c.n, c.copies)
        part = f"{label} {what}, {_ms(c.ns)} ms, no {how}"
        if side in whole:  # a text export's tree spans every step; its operator rows hold the step asked for
            part += " (counted over the whole profile, not only the step asked for)"
        if side in told:
            part += (f" (besides the {full.early:,} before the first kernel the trace holds a launch of, which "
                     f'"{EARLY_CHECK}" states)')
        elif c.early:
            who = ("it runs" if c.n == 1 else "all run" if c.early == c.n
                   else f"{c.early:,} of them run{'s' if c.early == 1 else ''}")
            part += (f" ({who} before the first kernel the trace holds a launch of: the previous step's tail"
                     + (f', which "{EARLY_CHECK}" measures' if early_row else "") + ")")
        parts.append(part)
    # the sheets that count them only where the run writes them: an operator-only run has neither, and one with
    # --fail_on_regression the gate's waterfall alone (it was sent to an OverallMetrics its workbook lacked)
    where = "OverallMetrics, the waterfall" if overall_sheet else "the waterfall"
    counted = "" if find_breakdowns(ctx) is None else f"the overall time breakdown ({where}) counts them, so "
    reading = (f"{counted}the operator rows miss that much of the side's device time: read the operator and module "
               "figures with this in mind, or profile a window that holds their launches")
    # the log's title says what the figures count (``_LOG_LEADS``): a line per side's part, one for the reading
    row = _in_parts(_guard(UNLINKED_CHECK, False, *(None if c is None else c.n for c in rest),
                           f"{UNLINKED_LEAD}{'; '.join(parts)}; {reading}"), "", [*parts, reading])
    row[LOG_BOTH] = one
    return row


#: The "kernels without a launch flow" row's Detail opens with what its figures count; the log's block says it
LAUNCHLESS_LEAD = ("computing kernels that no launch flow links to their op (besides the previous step's tail and "
                   "graph replays, which their own checks state), so the time breakdown reads them by their names "
                   "alone, as Cube (other) or Vector, where one launched inside a Matmul, Conv or Flash Attention op "
                   "counts in that op's category: ")
#: ``LAUNCHLESS_LEAD`` and the note's title where the sides counted are NPU text exports alone, or one of each
#: family: "kernels ... by their names alone" is a GPU trace's rule, and an NPU export has no graph replay
LAUNCHLESS_LEAD_NPU = ("compute tasks that no async_npu flow links to their op (besides those before the first "
                       "linked one, the previous step's tail), so the time breakdown reads them by their Type and PMU "
                       "figures alone, where one launched inside a Matmul, Conv or Flash Attention op counts in that "
                       "op's category: ")
LAUNCHLESS_LEAD_BOTH = ("GPU kernels and NPU compute tasks that no launch flow links to their op (besides the previous "
                        "step's tail and GPU graph replays), so the time breakdown reads them without it, where one "
                        "launched inside a Matmul, Conv or Flash Attention op counts in that op's category: ")
LAUNCHLESS_TITLE_NPU = ("The time breakdown's categories read compute tasks no async_npu flow links to their op by "
                        "their Type and PMU figures alone")
LAUNCHLESS_TITLE_BOTH = ("The time breakdown's categories read GPU kernels and NPU compute tasks no launch flow links "
                         "to their op without it")


def _launchless_row(bds: tuple[Breakdown, Breakdown], unlinked: list[Unlinked | None] | None,
                    flow_cat: str | None = None) -> dict[str, Any] | None:
    """GPU sides whose computing kernels no launch flow links to their op (``Breakdown.unlinked``): their categories
    come from their names alone (the original's rule, reference-1 §3.7), so a trace that lost some launch flows
    (hta's negative_queue sample: 694 kernels mid-trace) or holds none (hta's trace_filter samples: Matmul 0 ms
    beside their GEMMs) moves their time from Matmul / Conv / Flash Attention to Cube (other) or Vector, unsaid
    where no operator sheet is built. A note where a side has any; none for a side the "kernels linked to no
    operator" row counts (``unlinked``: its op tree's counts), which states those kernels for the operator sheets,
    or a side whose trace holds no Matmul / Conv / Flash Attention op (no link would change a category).
    ``flow_cat``: the ``--gpu_flow_cat`` given, which alone links kernels then: a side without a flow of it is said
    to hold none of that category, where "no launch flow" contradicted the warning beside it that names its ac2g
    flows (named as the option, not the flag: a Detail is the same for the CLI and ``compare()``).

    An NPU text export's side alike, for its compute tasks no async_npu flow ends at (its "kernels linked to no
    operator" row's words): a Type naming MatMul, Conv or FlashAttention keeps a task in that category as Cube, so
    its vector tasks move (the level1 sample without its flows: 57 tasks, 1.343 ms, from Conv / Matmul Vector to
    Vector); a DB export links by connection id and counts none here. The title and the Detail open in the words
    of the families counted (``LAUNCHLESS_LEAD_NPU``, ``LAUNCHLESS_LEAD_BOTH``): a GPU trace's rule, "by their names
    alone", is untrue of an NPU side's tasks."""
    none = (f" (the trace holds no flow of category {flow_cat!r}, which the gpu_flow_cat option names)" if flow_cat
            else " (the trace holds no launch flow)")
    counted = [bd.unlinked if (unlinked is None or u is None) else None
               for bd, u in zip(bds, unlinked or (None, None), strict=True)]
    if not any(c is not None and c.count for c in counted):
        return None
    parts = [_launchless_part(side, bd, c, none)
             for side, bd, c in zip(_SIDES, bds, counted, strict=True) if c is not None and c.count]
    kinds = {bd.kind == "NPU" for bd, c in zip(bds, counted, strict=True) if c is not None and c.count}
    npu = True in kinds
    reading = ("Matmul, Conv and Flash Attention miss up to that much of the side's time, which Cube (other) and "
               "Vector hold: read those categories with this in mind, or compare traces that keep their launch flows "
               + ("(ac2g, async_npu), as torch.profiler and torch_npu write them" if npu else
                  "(ac2g), as torch.profiler writes them"))
    # the opening in the counted sides' words: a GPU trace's (the common case, unchanged), an NPU export's, both
    lead, title = ((LAUNCHLESS_LEAD, None) if not npu else (LAUNCHLESS_LEAD_NPU, LAUNCHLESS_TITLE_NPU)
                   if len(kinds) == 1 else (LAUNCHLESS_LEAD_BOTH, LAUNCHLESS_TITLE_BOTH))
    row = _guard(LAUNCHLESS_CHECK, False, *(None if c is None else c.count for c in counted),
                 f"{lead}{'; '.join(parts)}; {reading}")
    if title:
        row[LOG_TITLE] = title
    return _in_parts(row, "", [*parts, reading])


def _launchless_part(side: str, bd: Breakdown, c: Bucket, none: str) -> str:
    """A side's part of the "kernels without a launch flow" row: GPU kernels (``none``: what a trace without the
    flows that link them holds), or an NPU text export's compute tasks with the link they lack and the rule that
    files them (the "kernels linked to no operator" row's words)."""
    plural = "" if c.count == 1 else "s"
    if bd.kind != "NPU":
        return f"{side} {c.count:,} kernel{plural}, {_ms(c.ns)} ms" + ("" if bd.has_launches else none)
    return (f"{side} {c.count:,} compute task{plural}, {_ms(c.ns)} ms, no async_npu flow"
            f"{'' if bd.has_launches else ' (the trace holds none)'}, read by their Type (a MatMul, Conv or "
            "FlashAttention one stays in that category as Cube), else their PMU figures")


#: The categories whose kernels need the op around their launch (a replayed kernel has none): Flash Attention,
#: Conv and Matmul
_OP_BUCKETS = tuple(b for b in BUCKETS if b.startswith(("fa_", "conv_", "matmul_")))


def _replay_row(bds: tuple[Breakdown, Breakdown]) -> dict[str, Any] | None:
    """GPU sides whose computing kernels run from CUDA / HIP graph replays. A replayed kernel's launch is the
    graph launch, inside no Matmul / Conv / Flash Attention op, so by the original's rules it is Cube (other) or
    Vector by its name: between a graph run and an eager one (SGLang's decode, 98.9 % replayed, against its
    eager prefill) the same GEMMs are Cube (other) on one side and Matmul on the other, and the waterfall shows
    Matmul 0 -> 420 ms beside a Cube (other) step that holds the graph side's GEMMs. A note where the replayed
    shares differ by ``REPLAY_SHARE_GAP`` or more and the side replaying less holds ``REPLAY_OP_SHARE`` or more
    of its computing in those op-decided categories (else those steps barely move); only where some side
    replays."""
    if not any(bd.replayed.count for bd in bds):
        return None
    shares = [bd.replayed.ns / bd.categorised_ns if bd.categorised_ns > 0 else None for bd in bds]
    known = [x if x is not None else 0.0 for x in shares]
    less = 0 if known[0] <= known[1] else 1
    by_op = sum(bds[less].b(k).ns for k in _OP_BUCKETS)
    computing = bds[less].categorised_ns
    op_share = by_op / computing if computing > 0 else 0.0
    gap = abs(known[0] - known[1]) >= REPLAY_SHARE_GAP
    ok = not (gap and op_share >= REPLAY_OP_SHARE)  # a share >= 5 % holds some op-decided time
    where = "; ".join(f"{side} {bd.replayed.count:,} kernels, {_ms(bd.replayed.ns)} ms"
                      for side, bd in zip(_SIDES, bds, strict=True) if bd.replayed.count)
    lead = f"share of computing kernel time replayed from CUDA / HIP graphs ({where})"
    rule = ("a replayed kernel's launch is the graph launch, inside no Matmul, Conv or Flash Attention op, so it is "
            "Cube (other) or Vector by its name (the original's rules), where the same kernel launched eagerly "
            "counts for its op")
    sheets = "OperatorCompare and the module sheets give it to the graph launch call"
    detail = f"{lead}: {rule}; {sheets}"
    shown_share = op_share
    if op_share < REPLAY_OP_SHARE <= round(op_share, 3):  # cut, not rounded: an "ok" row must not say 4.96 % is
        shown_share = math.floor(op_share * 1000) / 1000  # "5.0%" beside "a note from 5%"
    holds = f"has {_ms(by_op)} ms ({shown_share:.1%} of its computing) in those steps"
    if ok:
        detail += (f"; a note where the shares differ by {REPLAY_SHARE_GAP:.0%} or more and the side replaying "
                   f"less holds {REPLAY_OP_SHARE:.0%} or more of its computing in Matmul, Conv or Flash Attention")
        if gap and by_op > 0:  # say why a launch-mode gap is no note here
            detail += f" (the {_SIDES[less]} side replays less and {holds}: those steps barely move)"
    else:
        reading = (f"the {_SIDES[less]} side replays less and {holds}, where the other side's kernels of the "
                   "same kind are Cube (other) or Vector, so those steps differ by the launch mode too, not only the "
                   "work: compare Computing Time, or the Matmul, Conv, Flash Attention, Cube (other) and Vector "
                   "steps summed")
        return _in_parts(_guard(REPLAY_CHECK, ok, shares[0], shares[1], f"{detail}; {reading}"), lead,
                         [rule, sheets, reading])
    return _guard(REPLAY_CHECK, ok, shares[0], shares[1], detail)


#: The "longest idle stretch" row's Detail opens with what its Base / Comparison shares are, then each side's
#: stretch; the log leaves the lead out, as its note already says it (it read "... is half or more of a side's
#: E2E time (base 84.0%, ...): the longest stretch with no computing and no communication, as a share of E2E: base
#: 10857.887 ms", a length under "as a share").
IDLE_LEAD = f"the longest stretch with {IDLE_WHAT}, as a share of E2E; its length and start: "
#: The part of that Detail that says the E2E difference is mostly the stretches' change: said where the rest of
#: the difference is at most half of it (the stretches' change is 0.5 to 1.5 times it)
IDLE_DIFF = ", and so does the E2E difference"
#: Key of ``_idle_row``'s flag (and of the guards frame's attrs): the two sides' longest idle stretches make most of
#: the E2E difference, which the verdict says (``verdict.idle_aside``) without reading the Detail's words
IDLE_EXPLAINS = "idle_explains_e2e_diff"
#: Key of ``_idle_row``'s other flag (and of the guards frame's attrs): one side's computing is not split into
#: categories (``waterfall.unsplit``), so the note and the verdict point to Computing Time alone
IDLE_UNSPLIT = "idle_computing_unsplit"
#: What the idle note and the verdict's aside ask to compare instead of E2E: Computing Time and its categories,
#: or Computing Time alone where one side's has no categories. The note said "and its categories" beside the
#: "computing split into categories" note's "compare Computing Time, not its categories" (PARAM AlexNet against
#: a MindSpore run's CANN timeline, which has no kernel_details.csv).
IDLE_ADVICE = "compare Computing Time and its categories"
IDLE_ADVICE_UNSPLIT = "compare Computing Time (one side's is not split into categories)"
#: The advice where the other side has no time breakdown (no E2E time: a MindSpore 1.x timeline_display file,
#: no Overlap Analysis), so no time compares: the note read "(base n/a, ...) ... compare Computing Time and its
#: categories" beside that side's console cells that are no measurements (PARAM AlexNet against it).
IDLE_ADVICE_ALONE = ("the {other} side has no time breakdown (no E2E time) to compare with: read the {side} side's "
                     "Computing Time{categories} alone")


def _idle_where(side: str, bd: Breakdown) -> str:
    """One side's longest idle stretch: its length and where it starts, and, where its copies cut the stretch it
    would be with them counted idle, the time they take outside computing and communication, which Free Time holds
    and the stretches leave out (the TimeSformer H100 trace: 3.578 ms, where 3.46 ms of HtoD copies opened a
    4.069 ms "idle" stretch and a 0.573 ms one is the longest). A side whose computing, communication and copies
    fill its whole E2E window has none: "0.000 ms long, 0.000 ms into the E2E window (ts ...)" placed a stretch
    that does not exist (hta's triton_example, one kernel)."""
    cut = bd.longest_with_copies_ns > bd.longest_idle.length_ns
    copies = f"; not counting {_ms(bd.free_copies_ns)} ms of copies" if cut else ""
    if bd.longest_idle.length_ns <= 0:
        return f"{side} none (computing, communication and copies fill its E2E window)"
    return (f"{side} {_ms(bd.longest_idle.length_ns)} ms long, {_ms(bd.longest_idle.offset_ns)} ms into the E2E "
            f"window (ts {us_text_of(int(bd.longest_idle.start_ns))} us{copies})")


def _idle_row(bds: tuple[Breakdown, Breakdown], one: bool = False) -> dict[str, Any]:
    """The longest stretch of each side's E2E window with no computing, communication or copy, as a share of E2E.

    It counts whole in that side's E2E and Free Time, so where it is most of the E2E they mostly measure the
    stretch; the E2E difference only where the two stretches' change is it to within half of it (the verdict's
    aside, ``IDLE_EXPLAINS``, where that change is half of it or more, the same way). A side without E2E time is
    left out (unknown when no side crosses the threshold). ``one``: one input on both sides (``api.one_input``),
    whose stretch is said once, "both sides ...", as ``_early_row``'s (it read "(base 97.8%, comparison 97.8%)"
    over the same stretch twice)."""
    shares = [bd.longest_idle.length_ns / bd.e2e_ns if bd.e2e_ns > 0 else None for bd in bds]
    crossed = [side for side, x in zip(_SIDES, shares, strict=True) if x is not None and x >= IDLE_SHARE]
    ok = False if crossed else (True if None not in shares else None)
    wheres = [_idle_where(label, bd) for side, bd in zip(_SIDES, bds, strict=True)
              if bd.e2e_ns > 0 and (label := _side_label(side, one))]
    if not wheres:
        return _guard(IDLE_CHECK, None, None, None, "no E2E time on either side")
    detail = f"{IDLE_LEAD}{', '.join(wheres)}"
    split_apart = unsplit(*bds)
    if crossed:
        whose = "both sides'" if len(crossed) == 2 else f"the {crossed[0]} side's"
        b, c = bds
        diff = c.e2e_ns - b.e2e_ns
        # the difference too where the stretches' change is half of it or more, in its direction: a stretch that
        # grew while E2E shrank (or the reverse) is none of the E2E change, which the computing time then holds
        idle_diff = c.longest_idle.length_ns - b.longest_idle.length_ns
        also = None not in shares and diff and idle_diff * diff > 0 and 2 * abs(idle_diff) >= abs(diff)
        # the difference measures the stretches only where the rest of it is half of it or less: the vLLM capture
        # traces' stretches shrank by 53.590 ms, E2E by 2.623 ms (the comparison idles in shorter stretches)
        measures = None not in shares and diff and 2 * abs(diff - idle_diff) <= abs(diff)
        if None in shares:  # the other side has no E2E time: nothing to compare this side's computing with
            side = crossed[0]
            alone = bds[_SIDES.index(side)]
            advice = IDLE_ADVICE_ALONE.format(
                other=_SIDES[1 - _SIDES.index(side)], side=side,
                categories=" and its categories" if alone.categorised_ns > 0 else "")
        else:
            advice = IDLE_ADVICE_UNSPLIT if split_apart else IDLE_ADVICE
        reading = (f"{whose} E2E and Free Time mostly measure that stretch"
                   f"{IDLE_DIFF if measures else ''} (a profile opened long before the work, "
                   f"a stall, a host-side wait): {advice}")
    else:
        reading = f"a note from {IDLE_SHARE:.0%}"
    row = _guard(IDLE_CHECK, ok, shares[0], shares[1], f"{detail}; {reading}")
    row[LOG_BOTH] = one
    # the log's title says what the shares are (``_LOG_LEADS``): its lead names the figures of the lines below
    return {**_in_parts(row, IDLE_LEAD.rpartition("; ")[2][:-2], [*wheres, reading]),
            IDLE_EXPLAINS: bool(crossed and also), IDLE_UNSPLIT: split_apart}


_FA_BUCKETS = tuple(b for b in BUCKETS if b.startswith("fa_"))


def _vendor_row(vb: str | None, vc: str | None, bds: tuple[Breakdown, Breakdown] | None) -> dict[str, Any]:
    """NVIDIA against AMD is a note about Flash Attention's Cube / Vector split, which goes by the names of each
    vendor's attention kernels; with no Flash Attention time on either side (known from the time breakdown)
    there is nothing to read with care."""
    ok = None if vb is None or vc is None else vb == vc
    if ok is False and bds is None:  # an API-, memory- or operator-only run shows no Flash Attention figure
        return _guard(VENDOR_CHECK, True, vb, vc, "no time breakdown in this run, so Flash Attention's Cube / "
                      "Vector split, which goes by each vendor's attention kernel names, does not arise")
    if ok is False and not any(bd.b(k).count for bd in bds for k in _FA_BUCKETS):
        return _guard(VENDOR_CHECK, True, vb, vc, "no Flash Attention time on either side, so its Cube / Vector "
                      "split, which goes by each vendor's attention kernel names, does not arise")
    detail = ("Flash Attention's Cube / Vector split goes by kernel-name keywords, "
              "and the vendors' attention libraries name their kernels differently (AMD aotriton's attn_fwd "
              "is Cube; an attention kernel no keyword names is Vector): across vendors "
              "compare the Flash Attention totals first, then their split")
    clause = _fa_count_clause(bds) if ok is False else ""
    return _in_parts(_guard(VENDOR_CHECK, ok, vb, vc, detail + clause), "", [detail, clause[2:]] if clause else [])


def _fa_count_clause(bds: tuple[Breakdown, Breakdown]) -> str:
    """The Flash Attention Num counts kernels, and a vendor's attention op may launch helpers beside its attention
    kernel (PyTorch SDPA on ROCm: a fill kernel with each attn_fwd), so the same calls read twice the Num there
    (Qwen1.5-0.5B, 24 calls a side: H100 24, MI300X 48); "" where the counts agree."""
    counts = [[sum(bd.b(k).count for k in _FA_BUCKETS if k.endswith(unit)) for unit in ("_cube", "_vector")]
              for bd in bds]
    if sum(counts[0]) == sum(counts[1]):
        return ""
    (bc, bv), (cc, cv) = counts
    return ("; its Num counts kernels, not attention calls, and an attention op may launch helper kernels "
            "beside its attention kernel (on ROCm a fill kernel, Vector, with each attn_fwd): "
            f"base {bc + bv} (Cube {bc}, Vector {bv}), comparison {cc + cv} (Cube {cc}, Vector {cv})")


#: The packaged TRANS_MASK words, as the NPU's kernel types spell them.
_TRANS_NAMES = {"cast": "cast", "transdata": "TransData", "transpose": "Transpose"}


def _trans_words(kw: Keywords | None) -> str:
    """What makes an NPU Vector kernel Vector (Trans), in the words of the run's TRANS_MASK: "named cast,
    TransData or Transpose" for the packaged list (None: the lists were not read, the packaged ones apply),
    else the words of the user's MSPROF_COMPARE_CONFIG file, the packaged ones first, and where the list came
    from (a note naming the default words beside a user's list named a rule the run did not use)."""
    if kw is None or kw.trans == frozenset(_TRANS_NAMES):
        return "named cast, TransData or Transpose"
    words = [_TRANS_NAMES[w] for w in _TRANS_NAMES if w in kw.trans] + sorted(kw.trans - set(_TRANS_NAMES))
    listed = ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
    return f"whose names hold {listed} (TRANS_MASK of the keyword file)"


#: The OverallMetrics rows of an op's Vector kernels: kernels a Flash Attention, Conv or Matmul op launched that are
#: not Cube kernels, which only a side with framework ops (a covering op) can file there
_OP_VECTOR_ROWS = (("Flash Attention (Forward) (Vector)", "fa_fwd_vector"),
                   ("Flash Attention (Backward) (Vector)", "fa_bwd_vector"),
                   ("Conv (Forward) (Vector)", "conv_fwd_vector"), ("Conv (Backward) (Vector)", "conv_bwd_vector"),
                   ("Matmul (Vector)", "matmul_vector"))


def _opless_part(bds: tuple[Breakdown, Breakdown], sides: tuple[Profile, Profile] | None) -> list[str]:
    """Where one NPU side recorded no framework op (a MindSpore export; a torch_npu export recorded without the CPU
    activity) and the other side's (a GPU trace, or an NPU export with ops: torch_npu) Flash Attention, Conv or
    Matmul rows hold Vector kernels: the op-less side
    files its kernels by their type alone, so those rows hold its Cube kernels only and the ops' other kernels
    count in Vector, where the other side files them under the op that launched them. PARAM AlexNet against the
    MindSpore-layout excerpt read Conv (Forward) 6.329 ms -> 0 and Vector 1.703 -> 0.179 ms; the torch_npu export
    of the same kernels files 0.047 ms of them as Matmul (Vector), the MindSpore one as Vector. [] otherwise, and
    where the op-less side has no categories at all (the category note says that). The parenthesis says why that
    side has none by its kind, as the one-sided warning does (``optree.no_ops_reason``): it read "(a MindSpore
    export)" of a torch_npu export without cpu_op events."""
    if sides is None:
        return []
    npu = [i for i, p in enumerate(sides) if not p.is_gpu and not p.has_ops]
    # a side without categories at all (a lone timeline: no kernel_details.csv) has the category note instead
    if len(npu) != 1 or bds[npu[0]].categorised_ns <= 0:
        return []
    other = 1 - npu[0]
    held = [(label, bds[other].b(bucket).ns) for label, bucket in _OP_VECTOR_ROWS if bds[other].b(bucket).ns > 0]
    if not held:
        return []
    figures = and_list([f"{label} {_ms(ns)} ms" for label, ns in held])
    return [f"the {_SIDES[npu[0]]} side has no torch op ({no_ops_reason(sides[npu[0]])}), so its Flash "
            "Attention, Conv and Matmul rows hold only the kernels whose type names them (as Cube) and those ops' "
            f"other kernels count in Vector, where the {_SIDES[other]} side files them under the op that launched them "
            f"({_SIDES[other]}: {figures}): compare those rows with Vector added, or Computing Time"]


def _opless_row(bds: tuple[Breakdown, Breakdown], sides: tuple[Profile, Profile]) -> dict[str, Any] | None:
    """Two NPU exports, one without framework ops (MindSpore against torch_npu): the same Cube-only effect as
    ``_kinds_row``'s MindSpore part, which no note said on an NPU pair. The level-1 torch_npu export against the
    MindSpore-layout fixture read Conv (Forward) 0 -> 0.393 ms (Vector) etc., as if one side ran no convolution's
    Vector work. None where both or neither side has ops, where a side has no time breakdown (no E2E time) or
    where the op-less side has no categories (the category note says that); "ok" where the other side's rows
    hold no Vector kernel."""
    if any(bd.e2e_ns <= 0 for bd in bds) or sum(not p.has_ops for p in sides) != 1:
        return None
    bare = 0 if not sides[0].has_ops else 1
    if bds[bare].categorised_ns <= 0:
        return None
    return _opless_guard(bare, _opless_part(bds, sides),
                         f"the {_SIDES[1 - bare]} side's Flash Attention, Conv and Matmul rows hold no Vector kernel, "
                         f"so the {_SIDES[bare]} side, which files kernels by their type alone (no torch op), "
                         "files none of those ops' kernels elsewhere")


def _opless_guard(bare: int, parts: list[str], ok: str) -> dict[str, Any]:
    """The categories-without-framework-ops row of a pair whose side ``bare`` has none: a note of ``parts[0]``, else
    "ok" with ``ok`` (``_opless_row``, ``_gpu_opless_row``)."""
    cells = ["no torch op" if i == bare else "torch ops" for i in range(2)]
    return _guard(OPLESS_CHECK, not parts, *cells, parts[0] if parts else ok)


#: The GPU categories a kernel reaches through the framework op that launched it (classify.cube_ops), by label.
_GPU_OP_ROWS = (("Flash Attention", tuple(b for b in BUCKETS if b.startswith("fa_"))),
                ("Conv", tuple(b for b in BUCKETS if b.startswith("conv_"))),
                ("Matmul", ("matmul_cube", "matmul_vector")))


def _gpu_opless_part(bds: tuple[Breakdown, Breakdown], sides: tuple[Profile, Profile] | None) -> list[str]:
    """Where one GPU side has no framework op (runtime calls alone, with or without annotations: cut, or filtered
    of its cpu_op events) and the other has them (a GPU trace, an NPU export with ops) and time in Flash Attention,
    Conv or Matmul: a GPU kernel reaches those rows through the aten op that launched it (``classify.cube_ops``),
    so the op-less side files its GEMMs and convolutions in Cube (other) and their other kernels in Vector. The
    H200 AlexNet trace without its cpu_op events against the unedited one read Conv (Forward) 0.566 -> 0, Conv
    (Backward) 0.977 -> 0, Matmul 0.687 -> 0 and Cube (other) 0 -> 1.761 ms in the waterfall, Cube (other) the top
    contributor, with no word of why. [] otherwise."""
    if sides is None:
        return []
    framework = [p.has_framework_ops for p in sides]
    if sum(framework) != 1 or not sides[framework.index(False)].is_gpu:
        return []
    bare = framework.index(False)
    other = 1 - bare
    held = [(label, sum(bds[other].b(k).ns for k in keys)) for label, keys in _GPU_OP_ROWS]
    held = [(label, ns) for label, ns in held if ns > 0]
    if not held:
        return []
    figures = and_list([f"{label} {_ms(ns)} ms" for label, ns in held])
    return [f"the {_SIDES[bare]} side has no torch op ({no_ops_reason(sides[bare])}), so no op files its "
            "kernels under Flash Attention, Conv or Matmul: its GEMMs and convolutions count in Cube (other) and "
            f"their other kernels in Vector, where the {_SIDES[other]} side files them under the op that launched "
            f"them ({_SIDES[other]}: {figures}): compare Computing Time, not those rows"]


def _gpu_opless_row(bds: tuple[Breakdown, Breakdown], sides: tuple[Profile, Profile]) -> dict[str, Any] | None:
    """Two GPU traces, one without framework ops: ``_gpu_opless_part`` as a note; "ok" where the other side's
    Flash Attention, Conv and Matmul rows hold no time; None where both or neither side has framework ops or a
    side has no E2E time."""
    if any(bd.e2e_ns <= 0 for bd in bds):
        return None
    framework = [p.has_framework_ops for p in sides]
    if sum(framework) != 1:
        return None
    bare = framework.index(False)
    return _opless_guard(bare, _gpu_opless_part(bds, sides),
                         f"the {_SIDES[1 - bare]} side's Flash Attention, Conv and Matmul rows hold no time, so the "
                         f"{_SIDES[bare]} side, which has no torch op to file its kernels under them, misses none")


def _kinds_row(bds: tuple[Breakdown, Breakdown], kw: Keywords | None = None,
               sides: tuple[Profile, Profile] | None = None) -> dict[str, Any] | None:
    """A GPU trace against an NPU export: the breakdowns file some of the same work apart, which OverallMetrics
    and the waterfall show as work one side did not do. An NPU's cast / TransData / Transpose kernels are Vector
    (Trans), a GPU's Vector (No Trans) (the GPU side's Vector (Trans) is always 0, and read "INF" beside the
    H200 AlexNet's NPU run: 0 -> 0.477 ms); an NPU's TensorMove copies are SDMA (Tensor Move) in Computing Time, a
    GPU's memory copies SDMA in Free Time (0.574 ms of computing beside 0.488 ms of free time, one waterfall step
    up and one down), while an NPU's own DMA copies (SDMA_SQE / PCIE_DMA_SQE, MEMCPY_ASYNC) are in no SDMA row; an
    NPU side without framework ops files the ops' Vector kernels in Vector (``_opless_part``), a GPU side without
    them its GEMMs and convolutions in Cube (other) (``_gpu_opless_part``).
    A note where any part holds time; the Cube / Vector rule is said in both cases. None where
    a side has no time breakdown (no E2E time)."""
    def held(ns: int, bd: Breakdown) -> bool:  # noise apart: 0.002 ms of SDMA beside a 3.9 ms E2E fired the note
        return ns > 0 and ns >= KINDS_SHARE * bd.e2e_ns

    if any(bd.e2e_ns <= 0 for bd in bds):
        # a side without a time breakdown (a MindSpore 1.x timeline_display file: no Overlap Analysis) has no
        # category to file anything in: the note read "compare SDMA Time, which adds both" beside its "0.000s"
        # cells, which the line under the console table says are no measurements
        return None

    parts = []
    # any Vector (Trans) time: the GPU side's row is 0, so OverallMetrics reads INF, however small the NPU's is
    trans = [(side, bd.b("vector_trans").ns) for side, bd in zip(_SIDES, bds, strict=True) if bd.kind == "NPU"]
    if any(ns for _, ns in trans):
        figures = "; ".join(f"{side}: Vector (Trans) {_ms(ns)} ms" for side, ns in trans)
        parts.append(f"an NPU's Vector kernels {_trans_words(kw)} are Vector (Trans), a GPU's are "
                     f"Vector (No Trans) ({figures}): compare Vector, not its split")
    parts += _conversions_part(bds)
    copies = []
    for side, bd in zip(_SIDES, bds, strict=True):
        kept = [(name, n) for name, n in (("SDMA (Tensor Move)", bd.b("sdma_tm").ns),
                                          ("SDMA in Free Time", bd.sdma_stream.ns)) if held(n, bd)]
        if kept:
            copies.append(f"{side}: {and_list([f'{name} {_ms(n)} ms' for name, n in kept])}")
    if copies:
        # the rows' names are in the figures: "are SDMA (Tensor Move), in Computing Time, and ... SDMA in Free Time"
        # said them twice (347 characters on the Summary sheet of reference pair 4)
        parts.append("an NPU's TensorMove copies count in Computing Time, copies on a compute stream (a GPU's memory "
                     f"copies) in Free Time ({'; '.join(copies)}): compare SDMA Time, which adds both; Computing Time "
                     "and Free Time differ by them")
    # an NPU's own DMA copies (the input batch's host-to-device copy among them: 24 copies, 0.879 ms, in the level-1
    # text export beside the H200 AlexNet's 21 GPU copies, 0.488 ms of SDMA) are in no SDMA row as the original
    # reads current exports: the note above sent the user to SDMA Time, which leaves them out. Where they lie
    # differs by export (the text export's E2E window starts after that copy, the DB export's at it), so no row
    # is named for them
    unread = [f"{side}: {bd.unread_copies.count} copies, {_ms(bd.unread_copies.ns)} ms"
              for side, bd in zip(_SIDES, bds, strict=True) if bd.kind == "NPU" and held(bd.unread_copies.ns, bd)]
    # their task types as the export names them: a text export's SDMA_SQE / PCIE_DMA_SQE, a DB export's MEMCPY_ASYNC
    types = sorted({t for bd in bds if bd.kind == "NPU" and held(bd.unread_copies.ns, bd)
                    for t in bd.unread_copy_types})
    if unread:
        kind = f"{' / '.join(types)} tasks; " if types else ""
        parts.append(f"an NPU's DMA copies ({kind}{'; '.join(unread)}) count in no SDMA row, as in the "
                     f"original, whose rule reads {_unread_copies_why(types)}: SDMA Time leaves them out, where it "
                     "holds a GPU's memory copies; add them to the NPU side's SDMA Time to compare the copies")
    parts += _opless_part(bds, sides) + _gpu_opless_part(bds, sides)
    app = _app_part(sides)  # after the categories' rule: Mem Usage is none of them
    # what to do about it, as the other parts say (the GPU user moved to an NPU read the rule without it: session 66)
    cube = ("the Cube / Vector split goes by PMU counters on an NPU and by op and kernel names on a GPU: compare a "
            "category's total (Flash Attention, Conv, Matmul) before its Cube / Vector split")
    if not parts and not app:
        return _guard(KINDS_CHECK, True, bds[0].kind, bds[1].kind,
                      "no Vector (Trans) time, and no copies (SDMA (Tensor Move), SDMA in Free Time, MEMCPY_ASYNC) of "
                      f"{KINDS_SHARE:.1%} or more of a side's E2E time: the categories a GPU and an NPU file "
                      f"differently; {cube}")
    return _in_parts(_guard(KINDS_CHECK, False, bds[0].kind, bds[1].kind, "; ".join([*parts, cube, *app])), "",
                     [*parts, cube, *app])


def _unread_copies_why(types: Sequence[str]) -> str:
    """What the original's SDMA-on-compute-streams rule reads that an export of these copy task types names
    otherwise (docs/differences.md, "Physic Stream Id"): a text export's SDMA_SQE / PCIE_DMA_SQE tasks carry their
    stream as "Physic Stream Id", a DB export names its copies MEMCPY_ASYNC. "a stream argument and task types that
    current exports name otherwise" left the user to guess which, beside one export that names one of them."""
    why = []
    if not types or any(t in SDMA_TASK_TYPES for t in types):
        why.append("each task's stream from its Stream Id, which a current text export names Physic Stream Id")
    if not types or DB_COPY_TASK in types:
        why.append(f"copy tasks of type {' / '.join(SDMA_TASK_TYPES)}, which a current DB export names {DB_COPY_TASK}")
    return " and ".join(why)


def _conversions_part(bds: tuple[Breakdown, Breakdown]) -> list[str]:
    """A GPU trace against an NPU export: each side's layout and data-type conversion kernels whole
    (``Breakdown.conversions``), with their share of its Computing Time and the rows that hold them. An NPU converts
    tensors to and from the private formats its Cube units read (TransData: NCHW <-> NC1HWC0 / FRACTAL_Z), and the
    note quoted Vector (Trans) alone: 0.477 ms of the NPU level-1 AlexNet run, where its 66 TransData, Transpose and
    Cast kernels took 1.548 ms (17.4 % of its computing), 1.073 ms of them in Conv's Vector rows, against the H200
    run's 39 cuDNN NCHW <-> NHWC transforms, 0.272 ms. [] where the NPU side's take under ``KINDS_SHARE`` of its E2E."""
    npu = [i for i, bd in enumerate(bds) if bd.kind == "NPU"]
    # noise apart, as the copies of ``_kinds_row``: from 0.1 % of the NPU side's E2E time
    if len(npu) != 1 or sum(b.ns for b in bds[npu[0]].conversions.values()) < max(1, KINDS_SHARE * bds[npu[0]].e2e_ns):
        return []

    def figures(side: str, bd: Breakdown) -> str:
        held = sorted(bd.conversions.items(), key=lambda kv: -kv[1].ns)
        total = Bucket(sum(b.ns for _, b in held), sum(b.count for _, b in held))
        if not total.count:
            return f"{side}: none"
        share = f", {total.ns / bd.computing_ns:.1%} of its Computing Time" if bd.computing_ns > 0 else ""
        rows = and_list([f"{ROW_OF_BUCKET.get(k, k)} {b.count} ({_ms(b.ns)} ms)" for k, b in held])
        return f"{side}: {total.count} kernels, {_ms(total.ns)} ms{share}, in {rows}"

    totals = [sum(b.ns for b in bd.conversions.values()) for bd in bds]
    more = totals[npu[0]] - totals[1 - npu[0]]
    said = "; ".join(figures(side, bd) for side, bd in zip(_SIDES, bds, strict=True))
    return [f"layout and data-type conversions (an NPU's kernels of op Type TransData, Transpose or Cast, to and from "
            "the formats its Cube units read; a GPU's cuDNN NCHW <-> NHWC transforms) are filed under several rows "
            f"({said}): the NPU side's take {_ms(abs(more))} ms {'more' if more >= 0 else 'less'} than the GPU "
            "side's; add those rows' figures, not Vector (Trans) alone, for what the conversions cost"]


def _app_part(sides: tuple[Profile, Profile] | None) -> list[str]:
    """Mem Usage, where a text export's peak counts memory_record.csv's APP component (the whole process's device
    memory) beside a GPU trace's peak, its caching allocator's reservation alone: the same AlexNet loop read 1.66G on
    an H200 against 2.06G on the NPU, 1.49G without APP, with no word of it beside a console table alone (the memory
    line, which says it, comes with the memory comparison only)."""
    if sides is None:
        return []
    text = next((i for i, p in enumerate(sides) if p.source == "ascend_text"), None)
    if text is None or peak_reserved_gb(sides[1 - text]) is None:
        return []
    without = app_counted_gb(sides[text])
    if without is None:
        return []
    return [f"an NPU text export's Mem Usage counts memory_record.csv's APP component, the whole process's device "
            f"memory, a GPU's its caching allocator's reservation alone ({_SIDES[text]}: "
            f"{peak_reserved_gb(sides[text]):.2f}G, "
            f"{without:.2f}G without APP): compare the peak without APP"]


def _npu_settings(b: Any, c: Any) -> tuple[str, str] | None:
    """profiler_info.json's profiler level and AI Core metrics of both sides (e.g. "Level1 /
    ACL_AICORE_PIPE_UTILIZATION"); None unless both name a level. The metrics count only where both name
    them (an older export without the key is no difference)."""
    levels = [p.extra.get("profiler_level") for p in (b, c)]
    if not all(isinstance(v, str) for v in levels):
        return None
    metrics = [p.extra.get("aic_metrics") for p in (b, c)]
    if all(isinstance(m, str) for m in metrics):
        return f"{levels[0]} / {metrics[0]}", f"{levels[1]} / {metrics[1]}"
    return levels[0], levels[1]


def _timed_figures(ctx: RunContext, bds: tuple[Breakdown, Breakdown] | None) -> str:
    """The timings this run compares, in words, for the settings note: a kernel-only run compares kernel
    durations, which a profiler level's or AI Core metrics' overhead changes as much as the time breakdown."""
    opts = ctx.options
    if opts.by_default:
        return "timings"
    figures = [name for on, name in (
        (bds is not None, "time breakdown figures"),
        (opts.enable_operator_compare, "operator device times" if opts.disable_module
         else "operator and module device times"),
        (opts.enable_api_compare, "API host times"),
        (opts.enable_kernel_compare, "kernel durations"),
        (opts.enable_communication_compare, "communication durations"),
        (opts.enable_memory_compare, "memory sheets' allocated durations")) if on]
    return and_list(figures) or "timings"


#: An ``UNREAD_SETTINGS`` text that holds the profiler level (torch_npu's ``_profiler_level``, MindSpore's
#: ``profiler_level``).
_LEVEL_UNREAD = re.compile(r"(?:^|, )_?profiler_level ")


#: The "NPU profiler settings" row's Detail opens with what its figures are; the log's line leaves it out, as its
#: title says it ("collected with different NPU profiler settings (base Level1 / ACL_AICORE_PIPE_UTILIZATION, ...)"):
#: 388 characters on NPU pairs 1 and 3, 57 of them this lead
SETTINGS_LEAD = "profiler level / AI Core metrics of profiler_info.json: "


def _settings_row(ctx: RunContext, bds: tuple[Breakdown, Breakdown] | None) -> dict[str, Any] | None:
    """The "NPU profiler settings" check, where both sides name a profiler level (``_npu_settings``), worded for
    the timings the run compares (``_timed_figures``)."""
    sides = (ctx.base, ctx.comparison)
    settings = _npu_settings(*sides)
    unread = [f"the {side}'s {p.extra[UNREAD_SETTINGS]}" for side, p in zip(("base", "comparison"), sides, strict=True)
              if p.extra.get(UNREAD_SETTINGS)]
    # a setting of the wrong type (a level written as a number) is left out: said here, where it is missed
    said = f"{and_list(unread)} in profiler_info.json: of the wrong type, read as not written" if unread else ""
    if settings is None:
        levels = [p.extra.get("profiler_level") for p in sides]
        if not unread or not all(isinstance(v, str) or _LEVEL_UNREAD.search(p.extra.get(UNREAD_SETTINGS, ""))
                                 for v, p in zip(levels, sides, strict=True)):
            return _levelless_row(sides, levels, said)
        return _guard(SETTINGS_CHECK, None, *(v if isinstance(v, str) else "unread" for v in levels),
                      f"{SETTINGS_LEAD}not compared, {said}")
    # a note names what differs: Level1 against Level2 with the same metrics said "levels and metrics", "Level0
    # has no PMU counters" and that the metrics decide the Cube / Vector split, none of which applied
    levels = [p.extra.get("profiler_level") for p in sides]
    metrics = [p.extra.get("aic_metrics") for p in sides]
    ok = settings[0] == settings[1]
    level0 = "Level0" in levels
    other_metrics = all(isinstance(m, str) for m in metrics) and metrics[0] != metrics[1]
    what = ("levels and metrics" if ok or (levels[0] != levels[1] and other_metrics)
            else "levels" if levels[0] != levels[1] else "metrics")
    split = ("; the metrics also decide the time breakdown's Cube / Vector split"
             if bds is not None and (ok or other_metrics or level0) else "")
    return _guard(SETTINGS_CHECK, ok, *settings,
                  f"{SETTINGS_LEAD}{what} record different data at different "
                  f"overhead{' (Level0 has no PMU counters)' if ok or level0 else ''}, and this run's "
                  f"{_timed_figures(ctx, bds)} include that overhead{split}; for timings, collect both runs alike"
                  + (f"; {said}" if said else ""))


#: Where a profiler_info.json holds its profiler level: the words of the settings row that a file without one gives
LEVEL_KEYS = ("torch_npu writes it as config.experimental_config._profiler_level, MindSpore as "
              "profiler_parameters.profiler_level")


def _levelless_row(sides: tuple[Profile, Profile], levels: list[Any], said: str) -> dict[str, Any] | None:
    """The settings row where a side's profiler_info.json names no profiler level (no ``config``, no
    ``experimental_config``, no ``_profiler_level``, or a null one), as the step and device counts say why a
    figure is blank: the row went missing without a word, so two runs of other levels (Level0 against Level2)
    read as compared. Only between NPU sides of which one read a profiler_info.json that names no level: a side
    without the file (a bare trace_view.json, a CANN timeline, one that cannot be decoded, which is warned of)
    has no settings to compare and gives no row, as before; beside such a file it is said to have none readable.
    ``said``: the settings of the wrong type, named after; a side whose level is of the wrong type is "unread",
    as in the row of two such sides, and ``said`` names it (it names a level, one not read)."""
    if not all(p.is_npu for p in sides) or not any("profiler_info" in p.files and not isinstance(v, str)
                                                   for p, v in zip(sides, levels, strict=True)):
        return None
    unread = [bool(_LEVEL_UNREAD.search(p.extra.get(UNREAD_SETTINGS, ""))) for p in sides]
    blank = [(side, "profiler_info" in p.files) for side, p, v, odd in zip(_SIDES, sides, levels, unread, strict=True)
             if not isinstance(v, str) and not odd]
    if len(blank) == 2 and all(held for _, held in blank):
        why = "neither side's profiler_info.json names a profiler level"
    else:
        why = and_list([f"the {side}'s profiler_info.json names no profiler level" if held
                        else f"the {side} has no readable profiler_info.json" for side, held in blank])
    figures = (v if isinstance(v, str) else "unread" if odd else None for v, odd in zip(levels, unread, strict=True))
    return _guard(SETTINGS_CHECK, None, *figures, f"{SETTINGS_LEAD}not compared; blank: {why} ({LEVEL_KEYS})"
                  + (f"; {said}" if said else ""))


#: The operator match rate's words where the sides are of different frameworks (``_framework_row``): not judged
CROSSED_RATE = ("not judged: the sides were recorded by different frameworks, which name the same ops differently "
                f"(check \"{FRAMEWORK_CHECK}\")")


#: The sheets that pair ops by name (the frameworks note's "those sheets")
_NAME_PAIRED_SHEETS = frozenset({"OperatorCompare", "OperatorCompareStatistic", "ModuleCompare",
                                 "ModuleCompareStatistic", "ApiCompare"})


def _framework_row(ctx: RunContext, nb: set[str], nc: set[str], sheets: Sequence[Sheet] = ()) -> dict[str, Any] | None:
    """The frameworks note, for a low operator match rate where both sides have ops for the pair (``nb`` / ``nc``,
    their distinct names) and one is PyTorch's (a Kineto trace, a torch_npu export) and the other MindSpore's (2.3 /
    2.4 write its framework ops as cpu_op events; a 2.5+ export has none, which the "Can't find any torch op"
    warning says). The operator, module and API sheets pair ops by name, and aten::conv2d is no MindSpore name: the
    sheets paired almost nothing and the match rate warned "may not be the same workload ... different models?"
    of one model. A run that writes none of those sheets (profiling only) is told what they would pair."""
    sides = (ctx.base, ctx.comparison)
    frameworks = [framework_of(p) for p in sides]
    if not (nb and nc) or set(frameworks) != {"PyTorch", "MindSpore"}:
        return None
    if _framework_ops(nb if frameworks[0] == "MindSpore" else nc):
        return None  # PyTorch's names (aten::) on the MindSpore side, a copy of a torch_npu export: they pair
    # the ProfilerStep#N markers hold the ops compared, none of them one: ProfilerStep#50 on both sides read as a
    # name the sheets pair ("pair only those") beside "Top-level operators matched: 0/115"
    nb, nc = ({n for n in names if not str(n).startswith(STEP_MARK)} for names in (nb, nc))
    shared = len(nb & nc)
    paired = 'none' if not shared else 'only those'
    pairs = (f"so those sheets pair {paired}" if _NAME_PAIRED_SHEETS.intersection(s.name for s in sheets)
             else f"so those sheets would pair {paired} (this run writes none of them)")
    return _guard(FRAMEWORK_CHECK, False, *(framework_label(p) for p in sides),
                  "the operator, module and API comparisons pair ops by name, and PyTorch and MindSpore name the "
                  f"same work differently: {shared:,} of the {len(nb):,} base and {len(nc):,} comparison operator "
                  f"names are on both sides, {pairs} and the "
                  "operator match rate says nothing of the workload; the op_name_map option pairs the names it maps, "
                  "and the time breakdown (OverallMetrics), the communication and the kernel comparisons do not go by "
                  "framework op names")


def _gpu_vendor(p: Any) -> str | None:
    """NVIDIA or AMD from Kineto deviceProperties names, else from the runtime calls' names (None for NPU data or
    when neither tells). A trace without deviceProperties (PyTorch 1.8's, one a tool rewrote with the events
    alone) read "unknown" beside its unedited self; its launch calls still name their API: CUDA's cuda* / cu*
    (cudaLaunchKernel, cuLaunchKernel), HIP's hip* (ROCm's Kineto files both as cuda_runtime)."""
    if not p.is_gpu:
        return None
    names = " ".join(str(d.get("name", "")) for d in (p.device_properties or []) if isinstance(d, dict)).lower()
    if any(w in names for w in ("nvidia", "tesla", "geforce", "quadro", "titan")):  # older names lack "NVIDIA"
        return "NVIDIA"
    if "amd" in names or "instinct" in names or "radeon" in names:
        return "AMD"
    ops = p.ops
    if not len(ops) or "cat" not in ops.columns:
        return None
    calls = pd.unique(col_of(ops, "name", object)[np.isin(col_of(ops, "cat", object), list(LAUNCH_CATS))])
    apis = {"AMD" if n.startswith("hip") else "NVIDIA" if re.match(r"cu(da)?[A-Z]", n) else None
            for n in calls.tolist() if isinstance(n, str)} - {None}
    return apis.pop() if len(apis) == 1 else None


def _heavy_ops(ops: pd.DataFrame, n: int) -> list[str]:
    """The ``n`` operator names with the largest total host duration, over the ops that recorded input dims
    (cpu ops only when tagged; ProfilerStep# markers left out)."""
    if not len(ops):
        return []
    cats = col_of(ops, "cat", object)
    sel = cats == "cpu_op"
    if not sel.any():
        sel = np.ones(len(ops), dtype=bool)
    names = col_of(ops, "name", object)
    dims = col_of(ops, "input_dims", object)
    sel &= ~_isin(dims, ("", "N/A", "[]"))
    idx = np.flatnonzero(sel)
    if not len(idx):
        return []
    codes, uniq = factorize(names[idx])
    total = np.zeros(len(uniq), np.int64)
    np.add.at(total, codes, col_of(ops, "dur", np.int64)[idx])
    keep = np.array([not str(u).startswith(STEP_MARK) for u in uniq.tolist()], dtype=bool)
    cand = np.flatnonzero(keep)
    # largest totals first, first appearance breaking ties (as ``nlargest`` keeps the first)
    top = cand[np.lexsort((cand, -total[cand]))][:n]
    return [uniq[i] for i in top.tolist()]


#: Up to this many values ``_isin`` looks each up in a set; above it pandas' hash table is faster (a Python
#: lookup costs ~50 ns a value, pandas ~0.1 ms a call plus ~20 ns a value).
ISIN_PYTHON_MAX = 2000


def _isin(values: np.ndarray, items: Any) -> np.ndarray:
    """``Series.isin(items)`` of an object array: for the few thousand ops of a small profile, one set lookup
    per value (the Series and pandas' hash table cost ~0.1 ms a call on a thousand ops); larger arrays and
    values a set cannot hold go through pandas."""
    if len(values) <= ISIN_PYTHON_MAX:
        wanted = set(items)
        try:
            return np.fromiter(map(wanted.__contains__, values.tolist()), dtype=bool, count=len(values))
        except TypeError:  # an unhashable value
            pass
    return object_column(values).isin(list(items)).to_numpy(dtype=bool)


def _shapeless_words(ctx: RunContext) -> str:
    """The shape check's Detail where a side has no input shape: which side, and why, as this run tells: "on one
    side (recorded without record_shapes, or not read ...)" named neither, and gave the reason that could not hold
    in a run that read the shapes (user walk, session 66: a GPU trace without shapes against an NPU export). A side
    read its shapes with the operator, memory or API comparison, and a Kineto trace with the communication
    comparison too (``extra["shapes_read"]``: its loader reads the op args for RCCL's collective records)."""
    why = {side: "recorded without record_shapes=True" if p.extra.get("shapes_read", ctx.options.any_detail())
           else "not read: shapes are loaded only with the operator, memory or API comparison on"
           for side, p in zip(_SIDES, (ctx.base, ctx.comparison), strict=True) if not _has_shapes(p.ops)}
    if len(set(why.values())) == 2:  # a Kineto trace read without shapes against a side not read
        return "no input shapes on " + " nor on ".join(f"the {side} side ({w})" for side, w in why.items())
    where = "either side" if len(why) == 2 else f"the {next(iter(why))} side" if why else "one side"
    return f"no input shapes on {where} ({next(iter(why.values()), 'recorded without record_shapes=True')})"


def _has_shapes(ops: pd.DataFrame) -> bool:
    dims = col_of(ops, "input_dims", object)
    if not len(dims):
        return False
    if isinstance(dims[0], str) and dims[0] not in ("", "N/A"):  # the usual answer where shapes were read
        return True
    return not set(dims.tolist()) <= {"", "N/A"}  # as ``isin(["", "N/A"]).all()``, without the Series


#: Dimensions, separators and ``None`` (an absent optional tensor): anything else (a letter) is no shape. The
#: digit a shape needs is looked for apart: a pattern with the digit inside it backtracked quadratically on a
#: long text that fails near its end (48k characters of dims and then a letter: 40 s).
_SHAPE_TEXT = re.compile(r"(?:[\d,;\s\[\]()-]|None)*")
_DIGIT = re.compile(r"\d")


def _comparable_shape(dims: Any) -> str:
    """Input Dims in one notation for both sides (Kineto writes ``[[32, 3], [3]]``, an Ascend text export
    ``32,3;\\r\\n3``); "" when no dimension was recorded (``N/A``, or torch_npu's ``;\\r\\n;`` for tensor
    lists) or when the text is no shape at all (data types such as ``c10::BFloat16`` where a DB export's
    columns could not be told apart), so such an op is not held against the other side."""
    text = shape_key(str(dims))
    return text if _SHAPE_TEXT.fullmatch(text) and _DIGIT.search(text) else ""


def _shape_mismatches(base: pd.DataFrame, comparison: pd.DataFrame, base_names: set[str],
                      comparison_names: set[str]) -> tuple[int, list[str]]:
    """(ops checked, op names whose input shapes share nothing between the sides); an op counts as
    checked only when both sides recorded shapes for it. ``base_names`` / ``comparison_names``: each side's
    ``_op_names``."""
    # the heaviest of either side found on the other, so that swapping the sides checks the same operators
    names = list(dict.fromkeys([n for n in _heavy_ops(base, SHAPE_TOP_OPS) if n in comparison_names]
                               + [n for n in _heavy_ops(comparison, SHAPE_TOP_OPS) if n in base_names]))
    if not names:
        return 0, []
    keys: dict[str, str] = {}  # shared by both sides: two runs of one model repeat the same texts

    def shapes(ops: pd.DataFrame) -> dict[str, set]:
        nm = col_of(ops, "name", object)
        sel = np.flatnonzero(_isin(nm, names))
        out: dict[str, set] = {}
        for k, d in zip(nm[sel].tolist(), col_of(ops, "input_dims", object)[sel].tolist(), strict=True):
            if d not in keys:
                keys[d] = _comparable_shape(d)
            out.setdefault(k, set()).add(keys[d])
        return {k: v - {""} for k, v in out.items()}

    sb_all, sc_all = shapes(base), shapes(comparison)
    checked, bad = 0, []
    for name in names:
        sb, sc = sb_all.get(name, set()), sc_all.get(name, set())
        if sb and sc:
            checked += 1
            if not (sb & sc):
                bad.append(name)
    return checked, bad


def _module_row(op_rows: list[list] | None, sheets: Sequence[Sheet]) -> dict[str, Any] | None:
    """The "module sheets coverage" check, where the workbook shows the module sheets instead of the operator
    ones: the share of each side's operator device time (top-layer operators, as OperatorCompareStatistic sums
    them) that its level-1 modules hold (ModuleCompareStatistic's Device Total Time). Time launched outside every
    module is on no module row: vLLM's and SGLang's full-graph decode launch the graph outside the model's
    forward, so the base's module rows held 0.277 of 10.718 ms (vLLM) and its model module read 0 ms beside the
    piecewise run's 155.653 ms. A note where the two shares differ by ``MODULE_SHARE`` or more, and no row
    otherwise (where both miss alike, the rows compare like with like: the NPU samples' module rows hold 4 % on
    both sides, the all-reduce under AccumulateGrad being outside); only with both sheets' figures, which
    ``guards`` gets from the Summary (it runs after the other comparators). Not made between a text and a DB NPU
    export (``guards``): the text one links its HCCL ops to their operators, the DB one only compute tasks, so the
    same 4.62-4.67 ms of module rows are 4.0-5.9 % of the text side's operator time and 52.2-52.4 % of the DB side's
    on every such pair of the samples (46-48 points): that gap is the export kinds', which the "NPU export kind"
    note gives, not work launched outside the modules."""
    stat = next((s for s in sheets if s.name == "ModuleCompareStatistic"), None)
    if stat is None or not len(stat) or not op_rows:
        return None
    d = stat.data
    # the level-1 TOTAL rows by arrays: Series compares and boolean takes cost ~0.4 ms here
    top = (text_cells(column_at(d, 4)) == "[ TOTAL ]") & (text_cells(column_at(d, 2)) == "1")
    held = [float(sheet_numbers(column_at(d, col).to_numpy()[top]).sum()) for col in (8, 12)]
    total = [float(sheet_numbers([r[col] for r in op_rows]).sum()) for col in (2, 4)]
    if not any(t > 0 for t in total):
        return None
    shares = [min(h / t, 1.0) if t > 0 else None for h, t in zip(held, total, strict=True)]
    if None in shares or abs(shares[0] - shares[1]) < MODULE_SHARE:
        return None
    wheres = [f"{side} {h:.3f} of {t:.3f} ms" for side, h, t in zip(("base", "comparison"), held, total, strict=True)]
    lead = ("share of each side's operator device time that the module sheets hold (their level-1 modules' Device "
            "Total Time)")
    reading = ("device time launched outside every module (a CUDA / HIP graph launched outside the model's forward, an "
               "optimizer step, a collective under AccumulateGrad) is on no module row, so the module rows of the two "
               "sides compare different parts of their work (a module that holds the other side's graph reads 0 ms): "
               "the disable_module option writes every operator's row (OperatorCompareStatistic)")
    return _in_parts(_guard(MODULE_CHECK, False, shares[0], shares[1], f"{lead}: {', '.join(wheres)}; {reading}"),
                     lead, [*wheres, reading])


def guards(ctx: RunContext, op_rows: list[list] | None = None, sheets: Sequence[Sheet] = ()) -> pd.DataFrame:
    """One row per validity check; Status "warn" means the sides are probably not the same workload. ``op_rows``
    (the Summary's operator statistic rows) and ``sheets`` (the other comparators'): for the checks that read
    them (module sheets coverage)."""
    b, c = ctx.base, ctx.comparison
    # first: it says why every other figure is unchanged. Only where it fails, as the rows that do not apply
    rows = [_guard(SAME_CHECK, False, None, None, ctx.same.removesuffix("."))] if ctx.same else []
    # one pass over each side's op names; none where the pair has none of a side's (``RunContext.has_ops``), but
    # its step markers still count its steps (a GPU trace without cpu_op events read no step count beside 1)
    own = [_op_names(p.ops) for p in (b, c)]
    nb, nc = (names if ctx.has_ops(p) else set() for p, names in zip((b, c), own, strict=True))
    rate, shown_b, shown_c, how = _match_rate(ctx, nb, nc)
    detail = f"{how}; warn below {MATCH_RATE_THRESHOLD:.0%}"
    # PyTorch against MindSpore: their names differ for the same work, so a low rate is no sign of another model
    framework_row = _framework_row(ctx, nb, nc, sheets) if rate is not None and rate < MATCH_RATE_THRESHOLD else None
    crossed = framework_row is not None
    if crossed:
        detail += f"; {CROSSED_RATE}"
    elif rate is not None and rate < MATCH_RATE_THRESHOLD and how.startswith("matched / compared"):
        # the operator comparison's own rates: the advice its "matched" log line gave before (the line now
        # leaves the low rate to this check, so the console says it once)
        from .operators import low_match_hint
        from .summary_notes import operator_one_sided_wrapper, wrapped_match_hint

        # a wrapper on one side (reference pair 4's [param|cuda]): "try the op_name_map option" sent the user to
        # an option that cannot pair it
        one_sided = operator_one_sided_wrapper(op_rows, list(sheets))
        if one_sided is not None and not compared_whole(ctx, one_sided[0], one_sided[1]):
            one_sided = None  # an op the drill-down reached inside a pair: the Summary's note leaves it out too
        detail += f"; {wrapped_match_hint(one_sided) if one_sided else low_match_hint(bool(ctx.options.op_name_map))}"
    rows.append(_guard("operator match rate", None if rate is None or crossed else rate >= MATCH_RATE_THRESHOLD,
                       shown_b, shown_c, detail))
    if framework_row is not None:
        rows.append(framework_row)
    # a side without shapes (every profiling-only load: its ops read "N/A") checks nothing: the heaviest-op
    # search and the shape texts are skipped, with the outcome they would give (no shape, nothing checked)
    # and a side without ops for the pair has no operator to check (its annotations' shapes were checked: "1
    # heaviest operators found on both sides" of a GPU trace without cpu_op events)
    shaped = bool(nb and nc) and _has_shapes(b.ops) and _has_shapes(c.ops)
    checked, bad = _shape_mismatches(b.ops, c.ops, nb, nc) if shaped else (0, [])
    if bad:
        detail = "no common input shape for: " + ", ".join(bad)
    elif checked:
        detail = f"{checked} heaviest operators found on both sides"
    elif not (nb and nc):
        detail = f"no operators on {_empty_side(nb, nc)}: nothing to check"
    elif not shaped:
        detail = _shapeless_words(ctx)
    else:
        detail = ("the heaviest operators of each side are absent from the other side, or have no dimension "
                  "recorded")
    rows.append(_guard("input shapes of top operators", None if not checked else not bad, checked, checked,
                       detail))
    (sb, idless_b), (sc, idless_c) = _step_count(own[0], b), _step_count(own[1], c)
    # a blank figure says why, as the device count's does: pair 4's GPU trace has no ProfilerStep#N, and its
    # blank cell beside the NPU side's 1 read as a count the check failed to make
    blank = [side for side, n in zip(_SIDES, (sb, sc), strict=True) if not n]
    who = "neither side has a" if len(blank) == 2 else f"the {blank[0]} side has no" if blank else ""
    rows.append(_guard("step count", None if not (sb and sc) else sb == sc, sb or None, sc or None,
                       STEP_COUNT_DETAIL + (f"; blank: {who} ProfilerStep#N op" if blank else "")
                       + _kernel_step_words(blank, b, c) + _idless_words((idless_b, idless_c))))
    bds = find_breakdowns(ctx)
    (wb, lo_b, hi_b), (wc, lo_c, hi_c) = _world(b), _world(c)
    # same where both are exact and equal, different where the two ranges do not meet, else unknown
    same = None if wb is None or wc is None else (
        False if hi_b < lo_c or hi_c < lo_b else True if lo_b == hi_b == lo_c == hi_c else None)
    sides = [("base", b), ("comparison", c)]
    source = (_world_sources(sides) + _passed_words(sides) + _span_words(sides)).removeprefix("; ")
    # where the sizes differ, what it means first: the line said only where the figures came from
    figures = _world_figures(bds, sheets)
    so = f", so {figures} differ by that too" if figures else ""  # a run that writes no sheet: what it means alone
    rows.append(_guard("world size", same, wb, wc, source if same is not False else (
        f"jobs of different world sizes run different collectives{so}: compare runs of the same world size; {source}")))
    db, dc = _device_count(b), _device_count(c)
    # a blank figure is a side whose data names no device: say why, as on every NPU text pair it is blank
    blank = and_list(list(dict.fromkeys(_no_device(p) for p, n in ((b, db), (c, dc)) if n is None)))
    rows.append(_guard("device count", None if db is None or dc is None else db == dc, db, dc,
                       "devices that ran kernels (else Kineto deviceProperties)" + (
                           f"; blank: that side's data names no device ({blank})" if blank else "")))
    # the two hardware notes only where both sides are of that hardware: an "unknown" GPU vendor of NPU
    # profiles (or export kind of GPU traces) read as a check that could not be made
    optional = [_export_row(ctx, bds), _settings_row(ctx, bds),
                _step_row(ctx) if bds is not None else None]  # the steps' row only where a time breakdown was made
    if b.is_gpu and c.is_gpu:
        optional.append(_vendor_row(_gpu_vendor(b), _gpu_vendor(c), bds))
        if bds is not None:  # a trace of runtime calls against one with framework ops: Conv / Matmul moved
            optional.append(_gpu_opless_row(bds, (b, c)))
    elif b.is_gpu != c.is_gpu and bds is not None:  # categories: a time breakdown's rows
        optional.append(_kinds_row(bds, breakdown_keywords(ctx), (b, c)))
    elif b.is_npu and c.is_npu and bds is not None:  # MindSpore against torch_npu: the ops' Vector kernels
        optional.append(_opless_row(bds, (b, c)))
    unlinked = _unlinked_counts(ctx)
    one = ctx.side(ctx.comparison) == "both sides"  # one input (``api.one_input``): its figures said once
    early, told = _early_row(bds, unlinked, one) if bds is not None else (None, [])
    if bds is not None:
        optional += [_idle_row(bds, one), _category_row(bds, (b, c)), early]
    # just after the early row, whose stretch its part may name: after "graph replays" it sat apart from it
    optional.append(_unlinked_row(ctx, unlinked, early is not None, told,
                                  any(s.name == OVERALL_SHEET for s in sheets)))
    if bds is not None:
        optional.append(_launchless_row(bds, unlinked, ctx.options.gpu_flow_cat))
    if bds is not None:
        optional.append(_replay_row(bds))
    eb, ec = _EXPORT_KINDS.get(b.source), _EXPORT_KINDS.get(c.source)
    if not (eb and ec and eb != ec):  # a text against a DB export: their operator totals differ by design
        optional.append(_module_row(op_rows, sheets))
    rows += [r for r in optional if r is not None]  # a check that does not apply has no row
    return guard_frame(rows)


#: The sheets whose figures a world size's collectives change, and those figures' words (``_world_figures``); the
#: operator, memory and API sheets time or size the operators that launch the collectives
_WORLD_SHEETS = (("the communication ops' durations", ("CommunicationCompare",)),
                 ("the kernel durations", ("KernelCompare", "KernelTypeCompare")))
_WORLD_OPERATOR_SHEETS = (("device times", ("OperatorCompareStatistic", "ModuleCompareStatistic")),
                          ("memory allocations", ("MemoryCompareStatistic",)), ("host times", ("ApiCompare",)))


def _world_figures(bds: tuple[Breakdown, Breakdown] | None, sheets: Sequence[Sheet]) -> str:
    """The figures of this run that a world size's collectives change, for the world-size warning: Uncovered
    Communication and E2E Time where the time breakdown is made, else those of the sheets the run writes; "" for a
    run that writes none. Told by the sheets, not the options: a memory-only run against a side without torch ops
    (a MindSpore export) writes no memory sheet, yet named "the memory allocations" it shows none of."""
    if bds is not None:
        return "Uncovered Communication and E2E Time"
    names = {s.name for s in sheets}
    inside = [words for words, of in _WORLD_OPERATOR_SHEETS if names.intersection(of)]
    figures = [words for words, of in _WORLD_SHEETS if names.intersection(of)]
    if inside:
        figures.append(f"the {and_list(inside)} of the operators that launch them")
    return and_list(figures)


def guard_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The checks' rows as the guards frame (GUARD_COLUMNS), with the flags some rows carry for other faces in
    its attrs (``IDLE_EXPLAINS``, ``IDLE_UNSPLIT``, ``LOG_CUT``, ``LOG_PARTS``, ``LOG_TITLE``, ``LOG_BOTH``)."""
    # object columns: inference would turn a column of counts and one rate into floats, counts into rates
    frame = plain_frame({c: object_array([r[c] for r in rows]) for c in GUARD_COLUMNS}, objects=True)
    frame.attrs[IDLE_EXPLAINS] = any(r.get(IDLE_EXPLAINS, False) for r in rows)
    frame.attrs[IDLE_UNSPLIT] = any(r.get(IDLE_UNSPLIT, False) for r in rows)
    frame.attrs[LOG_CUT] = {r["Check"]: r[LOG_CUT] for r in rows if LOG_CUT in r}
    frame.attrs[LOG_PARTS] = {r["Check"]: r[LOG_PARTS] for r in rows if LOG_PARTS in r}
    frame.attrs[LOG_TITLE] = {r["Check"]: r[LOG_TITLE] for r in rows if LOG_TITLE in r}
    frame.attrs[LOG_BOTH] = {r["Check"] for r in rows if r.get(LOG_BOTH)}
    return frame


#: Detail leads the log leaves out of a note's line: its note already says them
_LOG_LEADS = {IDLE_CHECK: IDLE_LEAD, UNLINKED_CHECK: UNLINKED_LEAD, SETTINGS_CHECK: SETTINGS_LEAD,
              LAUNCHLESS_CHECK: LAUNCHLESS_LEAD}
#: The checks whose Base / Comparison are shares held against one threshold (a note from it, or a warning below it)
_SHARE_THRESHOLDS = {IDLE_CHECK: IDLE_SHARE, EARLY_CHECK: EARLY_SHARE, "operator match rate": MATCH_RATE_THRESHOLD}


def rounds_up_to_threshold(check: str, v: Any) -> bool:
    """Whether ``v`` is a share under its check's threshold that one decimal shows as the threshold itself (the
    log's line and the Summary sheet's cell then show two: ``_shown_against``, ``charts._guard_styles``)."""
    threshold = _SHARE_THRESHOLDS.get(check)
    return threshold is not None and isinstance(v, float) and v < threshold and shown(v) == shown(threshold)


def shown_share(check: str, v: Any) -> Any:
    """``v`` as the log's line and the Summary sheet's cell show it: a share that ``rounds_up_to_threshold`` cut at
    two decimals of a percent (rounded, 49.996 % read 50.00 %, the threshold again); any other figure as it is."""
    return math.floor(v * 10_000) / 10_000 if rounds_up_to_threshold(check, v) else v


def _shown_against(check: str, v: Any) -> str:
    """``shown(v)``, but a share under its check's threshold that one decimal rounds up to it is cut at two: SGLang's
    prefill + decode stretch, 49.96 % of E2E, read "comparison 50.0%" in the note that says the stretch "is half or
    more of a side's E2E time" on the base side alone."""
    if rounds_up_to_threshold(check, v):
        return f"{shown_share(check, v):.2%}"
    return shown(v)


#: The regression gate as a check's Detail names it (compare()'s keyword), which the CLI's log line spells as its flag
_BARE_GATE = "the fail_on_regression gate"


def log_guards(frame: pd.DataFrame) -> None:
    """One warning block for the failed checks (nothing when all pass), first; then the notes. A "note" (a failed
    NOTE_CHECKS check) holds for the same workload too: each is its own warning, a line per part where its Detail
    has parts (``LOG_PARTS``, the export kind's figures)."""
    # the columns' arrays, not ``frame[c]``: each Series of the frame deep-copied its attrs (~12 us a column)
    rows = list(zip(*(col_of(frame, c).tolist() for c in ("Check", "Status", "Base", "Comparison", "Detail")),
                    strict=True))
    bad = [r for r in rows if r[1] == "warn"]
    if bad:  # first: whether the figures compare at all comes before how to read them
        log.warning("The two profiles may not be the same workload:")
    for check, _status, b, c, detail in bad:
        b = None if pd.isna(b) else _shown_against(check, b)
        c = None if pd.isna(c) else _shown_against(check, c)
        if b is not None and c is not None and b != c:
            sides = f" (base {b}, comparison {c})"
        elif b is not None or c is not None:  # one figure for both sides (a Jaccard index, equal rates)
            sides = f" ({b if b is not None else c})"
        else:
            sides = ""
        log.warning("  - %s%s: %s", check, sides, detail)
    for check, status, b, c, detail in rows:
        if status != "note" or check == SAME_CHECK:  # logged as the inputs were loaded, before the comparison
            continue
        parts = frame.attrs.get(LOG_PARTS, {}).get(check)
        figures = (f"both sides {_shown_against(check, b)}" if check in frame.attrs.get(LOG_BOTH, ())
                   else f"base {_shown_against(check, b)}, comparison {_shown_against(check, c)}")
        if parts:  # a line per part (``LOG_PARTS``): the export kind's figures, a side's figures, ...
            lead, items = parts
            title = frame.attrs.get(LOG_TITLE, {}).get(check, NOTE_CHECKS[check])
            log.warning("%s (%s)%s:", title, figures, f": {lead}" if lead else "")
            for item in items:
                log.warning("  - %s", item)
        else:
            lead = _LOG_LEADS.get(check, "")
            if lead and detail.startswith(lead):  # the note's words already say what it is
                detail = detail[len(lead):]
            detail = detail.replace(frame.attrs.get(LOG_CUT, {}).get(check) or "\0", "")
            said = f"{NOTE_CHECKS[check]} ({figures}): {detail}."
            # the Detail's option named bare, compare()'s keyword: the CLI's line names the flag its user typed
            cli = said.replace(_BARE_GATE, "the --fail_on_regression gate")
            log.warning("%s", cli, **(api_worded(cli, said) if cli != said else {}))
