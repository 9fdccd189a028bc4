"""Step selection (``--base_step`` / ``--comparison_step``) shared by the comparators.

A step of text data is the ``[ts, ts + dur]`` range of the ``ProfilerStep#<id>``
op (reference-1 §3.5). Each side uses its own step id. GPU data refuses a step
(the original aborts the run); an id that is not in the data raises
``StepError`` listing the ids that are. Results are cached per run so every
comparator sees the same range and the error is raised once, by whoever asks first.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..columns import col_of
from ..errors import OutOfMemory, ProfileError, StepError, UsageError, on_side, side_named
from ..model import PYTHON_STEP_MARKS, Profile, marker_step, step_marks
from ..textsafe import display, id_ranges, short_repr

if TYPE_CHECKING:  # pragma: no cover
    from ..api import RunContext

log = logging.getLogger("msprof-analyze")

GPU_STEP_MESSAGE = "step id is invalid in GPU data, please use this when comparing between NPU datas."


def gpu_step_error(path: str, side: str = "") -> UsageError:
    """The original's refusal of a step with GPU data, naming the GPU side (``side``: "base side", ...; "this
    side" where the caller cannot tell) and what to do instead: alone it left a GPU-to-NPU user guessing which
    input it meant and how to go on."""
    rest = ", where the step options do not apply: leave out --base_step and --comparison_step to compare the whole " \
        "profiles"
    return UsageError(f"{path}: {GPU_STEP_MESSAGE}" + (side_named(side, f"a GPU trace{rest}") if side else
                                                       f" (this side is a GPU trace{rest})"))


def step_ops(ops: pd.DataFrame) -> pd.DataFrame:
    """The ``ProfilerStep#N`` ops with their integer id (``step``; -1 when the suffix is not a number)."""
    mask = step_marks(col_of(ops, "name", object))
    found = ops.loc[mask, ["name", "ts", "dur"]]
    suffix = found["name"].str.rsplit("#", n=1).str[-1]
    # Python ints, as the requested id is: an id beyond int64 must not round through a float
    ids = np.array([marker_step(n) for n in found["name"].tolist()], dtype=object)
    return found.assign(step=ids, label=suffix.to_numpy())


def step_range(profile: Profile, step: int, side: str = "") -> tuple[int, int] | None:
    """The ``(start_ns, end_ns)`` of ``step`` in ``profile`` (inclusive), or None when no step is asked.

    Raises ``UsageError`` for GPU data and ``StepError`` when the step is absent. ``side`` ("base side", ...;
    ``RunContext.side``) ends the original's "Can not convert" line, as its other notices end.
    """
    if step is None or step < 0:
        return None
    if profile.is_gpu:
        raise gpu_step_error(profile.path, side)
    if profile.source == "ascend_db":  # STEP_TIME range; the DB loader already limited every table to it
        return profile.extra.get("step_range")
    # the torch ops, or where none was collected the markers of any category (MindSpore 2.5+: category "")
    steps = step_ops(profile.ops if len(profile.ops) else profile.extra.get("step_marks", profile.ops))
    match = (steps["step"] == step).to_numpy(dtype=bool)
    scanned = steps.iloc[: int(np.argmax(match)) if match.any() else len(steps)]  # as the original's scan
    for label in dict.fromkeys(scanned.loc[scanned["step"] == -1, "label"].astype(str)):
        log.error("Can not convert %s to int%s", label, side_named(side))  # reference-1 §3.5; the marker is no step
    hit = steps[match]
    if len(hit):  # the first in the file, or a longer copy starting with it (``model.step_markers``: it holds it)
        ts, dur = hit["ts"].to_numpy(), hit["dur"].to_numpy()
        at = int(np.argmax(np.where(ts == ts[0], dur, dur[0])))
        return int(ts[at]), int(ts[at] + dur[at])
    seen = list(dict.fromkeys(steps["label"].astype(str).str.strip()))
    source = steps_file(profile)
    python = profile.extra.get(PYTHON_STEP_MARKS)  # markers written as Python functions: no step, said why
    if not seen:
        among = "" if python is None else " among its host ops, which steps are read from ({}: {})".format(
            "1 Python function is named as one" if python[0] == 1
            else f"{python[0]:,} Python functions are named as one, the first", short_repr(python[1]))
        # the column's steps, where no Python function's marker already says why (a torch_npu export's refusal)
        held = kernel_steps(profile) if python is None else []
        column = "" if not held else (
            f"; its kernel_details.csv numbers kernels by step ({id_ranges(held, escape=False)}), but a step's range "
            "is that of its ProfilerStep# marker, so the step options do not apply to it")
        raise StepError(f"{source}: Invalid step id: {step}: the profile has no ProfilerStep# markers{among}, "
                        f"so no step can be chosen{column}", "run without --base_step / --comparison_step")
    why = None if python is None or step not in python[2] else (
        f"ProfilerStep#{step} here names a Python function; steps are read from the host ops")
    raise StepError(f"{source}: Invalid step id: {step}, please choose from the valid steps: "
                    f"{id_ranges(seen, escape=False)}", why)


def kernel_steps(profile: Profile) -> list[int]:
    """The step ids a text export's kernel_details.csv gives its kernels (``Step Id`` / MindSpore's ``Step ID``),
    sorted: a side without ProfilerStep# markers may still number its kernels by step (the MindSpore layout), and
    the words on its missing markers said only "ProfilerStep#N", as if it had no steps at all."""
    kd = profile.kernel_details
    if profile.source != "ascend_text" or kd is None or "Step Id" not in kd.columns or not len(kd):
        return []
    ids = kd["Step Id"].to_numpy()
    if ids.dtype.kind not in "iu":
        return []
    return sorted(int(i) for i in pd.unique(ids[ids >= 0]))


def steps_file(profile: Profile) -> str:
    """The file a text export's steps are read from (its trace_view.json, or the timeline given), as the DB
    loader's step errors name the ``.db`` that holds STEP_TIME: the folder given named no file that holds the
    steps, and the two kinds of input named theirs differently. A profile built without files (tests): its path."""
    return data_file(profile, "trace_view.json")


def data_file(profile: Profile, *names: str) -> str:
    """The first of ``names`` (keys of ``Profile.files``: "trace_view.json", "kernel_details.csv", "db") the
    profile was read from, for an error about what that file holds: a step error naming the folder given sent
    the user to look for the file; the profile's path where it has none of them (a bare trace, a test's)."""
    return display(next((profile.files[n] for n in names if profile.files.get(n)), profile.path))


def side_step(ctx: RunContext, side: str) -> int:
    """The step id requested for ``side`` ("base" or "comparison"), -1 when none."""
    opts = ctx.options
    return opts.base_step if side == "base" else opts.comparison_step


def side_range(ctx: RunContext, side: str) -> tuple[int, int] | None:
    """Cached ``step_range`` of one side of a run; its refusal names the side (``errors.on_side``)."""
    profile = ctx.base if side == "base" else ctx.comparison
    try:
        return ctx.cached(f"steps.range.{side}", lambda: step_range(profile, side_step(ctx, side), ctx.side(profile)))
    except (StepError, ProfileError, OutOfMemory):  # what ``on_side`` names: the side looked for only then
        with on_side(_refused_side(ctx, profile)):
            raise


def _refused_side(ctx: RunContext, profile: Profile) -> str:
    """``ctx.side``, but "both sides" for one input under two paths (``run`` and ``run/``) with one step, as the
    DB loader's and the GPU step refusals name it (``api.one_input``): a text export's said "(base side)" there."""
    from ..api import one_input

    return "both sides" if one_input(ctx.base.path, ctx.comparison.path, ctx.options) else ctx.side(profile)


def check_steps(ctx: RunContext) -> None:
    """Validate both sides' steps up front (raises like ``step_range``)."""
    side_range(ctx, "base")
    side_range(ctx, "comparison")


def in_range(ts: np.ndarray, rng: tuple[int, int] | None) -> np.ndarray:
    """Mask of start times inside an inclusive step range (all True without a step)."""
    ts = np.asarray(ts)
    if rng is None:
        return np.ones(len(ts), dtype=bool)
    return (ts >= rng[0]) & (ts <= rng[1])
