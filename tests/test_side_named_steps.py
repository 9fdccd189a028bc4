"""A step refused (exit 2) names the side whose step option asked for it (session 71), as every exit-1 error of
one side's input does since session 70: "(base side)", "(comparison side)", or "(both sides)" for one input with
one step on both. The line named the file alone, so two ranks of one job, both without step 7, left the user to
read a digit of a path to know whether --base_step or --comparison_step was wrong. Pinned whole on the real
level-1 / level-2 text exports (one ProfilerStep#50 marker each) and the level-1 / level-2 DB exports (STEP_TIME
holds step 50 alone), on both sides."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc

TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
DB = "msinsight/test/data/pytorch/db/level{}/rank0_ascend_pt"
GPU = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"


def _error(capsys, tmp_path: Path, base: Path, comparison: Path | str, steps: tuple[int, int]) -> str:
    """The run's one error line (exit 2, no workbook)."""
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comparison), "-o", str(out), "--base_step",
                              str(steps[0]), "--comparison_step", str(steps[1]))
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and "Traceback" not in err and not out.exists(), err
    return lines[0]


@pytest.mark.parametrize("layout, read, said", [
    (TEXT, "ASCEND_PROFILER_OUTPUT/trace_view.json", "Invalid step id: 7, please choose from the valid steps: 50"),
    (DB, "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
     "Invalid Step Id: 7, please choose from the valid steps: 50"),  # the DB exports' refusal, made while loading
], ids=["text", "db"])
def test_an_absent_step_names_its_side(capsys, samples, tmp_path, layout, read, said):
    """Step 7 asked of the level-1 export (base) or the level-2 one (comparison), step 50 of the other; the
    level-1 export on both sides with step 7 each: one input, one step, "(both sides)"."""
    l1, l2 = (samples / layout.format(n) for n in (1, 2))
    assert _error(capsys, tmp_path, l1, l2, (7, 50)) == f"error: {l1 / read}: {said} (base side)"
    assert _error(capsys, tmp_path, l1, l2, (50, 7)) == f"error: {l2 / read}: {said} (comparison side)"
    assert _error(capsys, tmp_path, l1, l1, (7, 7)) == f"error: {l1 / read}: {said} (both sides)"
    # one input under two paths is one input too (the text export's said "(base side)", the DB's "(both sides)")
    assert _error(capsys, tmp_path, l1, f"{l1}/", (7, 7)) == f"error: {l1 / read}: {said} (both sides)"


def test_a_step_asked_of_a_gpu_trace_names_its_side(capsys, samples, tmp_path):
    """The GPU refusal said "(this side is a GPU trace, ...)": which side, it left to the path; it now names it
    where the other errors of one side do, first in the parenthesis. The bundled H100 trace on both sides is one
    input: "(both sides: ...)"."""
    l1 = samples / TEXT.format(1)
    said = (f"error: {GPU}: step id is invalid in GPU data, please use this when comparing between NPU datas. "
            "({}: a GPU trace, where the step options do not apply: leave out --base_step and --comparison_step to "
            "compare the whole profiles)")
    assert _error(capsys, tmp_path, GPU, l1, (50, 50)) == said.format("base side")
    assert _error(capsys, tmp_path, l1, GPU, (50, 50)) == said.format("comparison side")
    assert _error(capsys, tmp_path, GPU, GPU, (50, 50)) == said.format("both sides")


def test_a_step_without_kernel_rows_names_its_side_by_the_same_rule(capsys, samples, tmp_path):
    """KernelCompare alone reads a text export's steps from kernel_details.csv's Step Id (the level-1 export's 191
    rows are all of step 50), and its refusal took its side from RunContext.side: the export under two paths
    (``run``, ``run/``) with step 7 on both read "(base side)" where ``side_range``'s refusal says "(both sides)"."""
    l1, l2 = (samples / TEXT.format(n) for n in (1, 2))
    said = "There is no kernel details information for step 7, please check whether the data contains this step."

    def error(base, comparison, steps: tuple[int, int]) -> str:
        out = tmp_path / "out"
        code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comparison), "-o", str(out), "--base_step",
                                  str(steps[0]), "--comparison_step", str(steps[1]), "--enable_kernel_compare")
        (line,) = error_lines(err)
        assert code == 2 and not out.exists(), err
        return line

    read = l1 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    assert error(l1, f"{l1}/", (7, 7)) == f"error: {read}: {said} (both sides: it holds step 50)"
    assert error(l1, l1, (7, 7)) == f"error: {read}: {said} (both sides: it holds step 50)"
    assert error(l1, l2, (7, 50)) == f"error: {read}: {said} (base side: it holds step 50)"


def test_a_refusal_with_its_own_aside_names_the_side_first(capsys, samples, tmp_path):
    """A step refusal that ends in a parenthesis of its own (why, what to do) read "(...) (both sides)": two
    parentheses in a row. The side now opens that one parenthesis, as a warning's aside does (``side_named``). The
    level-1 DB export with its STEP_TIME rows deleted (no step can be chosen) against the level-2 one (step 50), and
    on both sides as one input."""
    from dbutil import edited_copy

    bare = edited_copy(samples / DB.format(1) / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                       tmp_path / "ascend_pytorch_profiler_0.db", "DELETE FROM STEP_TIME")
    l2 = samples / DB.format(2)
    said = (f"error: {bare}: The profiling data lacks step markers. Please re-collect it. ({{}}: its STEP_TIME table "
            "holds no step, so no step can be chosen: run without --base_step / --comparison_step)")
    assert _error(capsys, tmp_path, bare, l2, (50, 50)) == said.format("base side")
    assert _error(capsys, tmp_path, l2, bare, (50, 50)) == said.format("comparison side")
    assert _error(capsys, tmp_path, bare, bare, (50, 50)) == said.format("both sides")


def test_a_loader_childs_step_refusal_keeps_its_aside_apart():
    """A step refusal raised in a loader child (``loaders.pair``) crosses the process as its parts: the side the
    parent names comes first in the one parenthesis, as in this process (it was rebuilt from its text, to which
    the side was appended: "(it holds step 50) (base side)")."""
    from msprof_compare.errors import StepError, on_side
    from msprof_compare.loaders.pair import _pack_error, _unpack_error

    with pytest.raises(StepError) as refused, on_side("base side"):
        raise _unpack_error(_pack_error(StepError("x.db: no step 7.", "it holds step 50")))
    assert str(refused.value) == "x.db: no step 7. (base side: it holds step 50)"
