"""Session 73's hand mutants of session 72's source changes that the suite let live (mut73).

Each test names the mutants it kills; each fails under them and passes on the real code. Expected texts follow
from the inputs (which side lacks ops and why, which steps each side holds), never read back from this package."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc
from test_mindspore_user_leftovers import H200_ALEXNET, MS_FIXTURE, MS_NONE

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError

DATA = Path(__file__).resolve().parent / "data"
#: The level-1 text export: one ProfilerStep#50 marker, 191 kernel_details.csv rows all of step 50
TEXT1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def test_compare_refusal_of_a_name_with_a_quote_mark_is_a_python_literal() -> None:
    """Kills a_apitext (compare()'s refusal given the CLI's shell quoting): a name holding a single quote mark is
    written by Python as "DDP's", by a POSIX shell as 'DDP'"'"'s'. compare() takes Python values, so its line is
    the keyword with the Python literal; the shell form, pasted into Python, is three adjacent literals."""
    name = "DDP's forward"
    with pytest.raises(ProfileError) as refused:
        compare(str(H200_ALEXNET), str(H200_ALEXNET), enable_operator_compare=True, transparent_op=name)
    assert str(refused.value).startswith(f'transparent_op="{name}" names no operator of either side ('), refused.value


def test_matching_options_without_the_pairing_comparisons_are_said_once(caplog: pytest.LogCaptureFixture) -> None:
    """Kills a_mo_enable (the side-without-ops line given where no comparison that pairs ops runs): under
    --enable_profiling_compare alone the op_name_map option is already said to be ignored for want of
    enable_operator_compare or enable_memory_compare; against the MindSpore fixture (no torch op) a second line
    said it again for another reason."""
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200_ALEXNET), str(MS_FIXTURE), enable_profiling_compare=True,
                op_name_map={"aten::conv2d": "Conv2D"})
    assert [m for m in caplog.messages if "op_name_map" in m] == [
        "The op_name_map parameter is ignored: it only takes effect when enable_operator_compare or "
        "enable_memory_compare is enabled."]


def test_one_input_at_two_steps_is_refused_on_the_side_whose_step_is_absent(capsys, samples, tmp_path) -> None:
    """Kills a_one_step (one path, or ``run`` and ``run/``, taken as one input whatever the steps): the level-1
    text export holds step 50 alone, so --base_step 50 --comparison_step 7 on it is two inputs (one file, two
    steps) and the refusal is the comparison side's, under one path and under two."""
    l1 = samples / TEXT1
    read = l1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    said = "Invalid step id: 7, please choose from the valid steps: 50"
    for comparison in (str(l1), f"{l1}/"):
        out = tmp_path / "out"
        code, _, err = run_inproc(capsys, "-bp", str(l1), "-d", comparison, "-o", str(out), "--base_step", "50",
                                  "--comparison_step", "7")
        assert code == 2 and not out.exists(), err
        assert error_lines(err) == [f"error: {read}: {said} (comparison side)"], comparison


def test_match_rate_check_of_two_bare_sides_of_two_kinds_names_each_sides_reason(tmp_path: Path) -> None:
    """Kills ch_reasons (two sides without torch ops of different kinds given the first side's reason alone in the
    Summary's operator match rate check): the NPU fixture with its 208 cpu_op events cut out (a torch_npu export
    without them) against the MindSpore fixture (MindSpore exports record none). The check's threshold, 60%, ends
    every detail of it."""
    base = tmp_path / "rank0_ascend_pt"
    shutil.copytree(DATA / "npu" / "rank0_ascend_pt", base)
    trace = base / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text(encoding="utf-8"))
    kept = [e for e in events if e.get("cat") != "cpu_op"]
    assert len(events) - len(kept) == 208
    trace.write_text(json.dumps(kept), encoding="utf-8")
    row = compare(str(base), str(MS_FIXTURE)).guards.set_index("Check").loc["operator match rate"]
    assert row["Status"] == "unknown"
    assert row["Detail"] == (
        "no operators on either side (base: a torch_npu export without cpu_op events has none; comparison: "
        f"{MS_NONE}): nothing to match, so no sheet pairs them (operator, module, memory, API) (figures: "
        "distinct operator names per side); warn below 60%")


def test_rank_by_rank_refusal_of_a_name_in_no_cycle_calls_the_units_cycles(tmp_path: Path) -> None:
    """Kills a_noun (the end-of-job refusal calling every unit a rank): two folders of one GPU's profiler cycles
    (tensorboard_trace_handler's ``w.<ms>.pt.trace.json.gz``, no rank recorded: the bundled BERT-small H100 trace
    as cycles 1 and 2) compare cycle by cycle, and a name no cycle has is refused in the words the job's units
    go by, as the cycles' reports are named (``..._cycle1_...``)."""
    from msprof_compare.api import compare_ranks

    trace = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        for ms in (900, 1000):
            shutil.copy(trace, tmp_path / side / f"w.{ms}.pt.trace.json.gz")
    with pytest.raises(ProfileError) as refused:
        list(compare_ranks(str(tmp_path / "a"), str(tmp_path / "b"), enable_operator_compare=True,
                           disable_module=True, transparent_op="nothere"))
    assert str(refused.value) == (
        "transparent_op='nothere' names no operator of either side in any cycle compared (2), so it opens nothing "
        "(the op's whole name, case-sensitive, as a cycle report's Operator Name gives it)")


def test_a_db_step_without_compute_tasks_names_the_step_after_its_side(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Kills k_db_where (the DB line's "in step N" dropped when its words moved into the side's parenthesis): the
    level-1 DB excerpt with its COMPUTE_TASK_INFO rows deleted has no compute task in the whole profile, nor in
    step 50 when the run asks for it, and KernelCompare's line says which, after the side."""
    from dbutil import edited_copy

    l1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    copy = edited_copy(l1, tmp_path / "ascend_pytorch_profiler_0.db", "DELETE FROM COMPUTE_TASK_INFO")
    said = []
    for steps in ({}, {"base_step": 50, "comparison_step": 50}):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(str(copy), str(l1), enable_kernel_compare=True, **steps)
        said += [m for m in caplog.messages if m.startswith("Can't find any valid kernels")]
    assert said == [f"Can't find any valid kernels in the file: {copy} (base side: no compute task{where}: the "
                    "database's TASK / COMPUTE_TASK_INFO tables hold none)." for where in ("", " in step 50")]


def test_rank_by_rank_warning_of_a_quoted_name_is_a_python_literal(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Kills o_rank_quote (a rank's warning of a name it lacks quoting it for the shell): compare_ranks() takes
    Python values, so the warning gives the keyword and the Python literal of a name holding a quote mark, as its
    end-of-job refusal does. test_transparent_op's two ranks (the H200 excerpt) have no op of that name."""
    import test_transparent_op as tt

    from msprof_compare.api import compare_ranks

    job = tt._two_ranks(tmp_path)
    name = "DDP's forward"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"), pytest.raises(ProfileError) as refused:
        list(compare_ranks(str(job), str(job), transparent_op=name, enable_operator_compare=True,
                           disable_module=True))
    assert str(refused.value).startswith(f'transparent_op="{name}" names no operator of either side in any rank')
    # rank 1's warning is rank 0's but for its paths: compare_ranks() leaves it out (logs.RankNotices)
    (warned,) = [m for m in caplog.messages if "in this rank" in m]
    assert warned.startswith(f'rank 0: transparent_op="{name}" names no operator of either side ('), warned


@pytest.mark.parametrize("kw", [{"max_kernel_num": 4}, {}], ids=["drilled", "whole"])
def test_ops_named_inside_named_ops_give_their_memory_to_the_first_op_not_named(tmp_path: Path, kw: dict) -> None:
    """Kills o_see_while and o_see_nowhile (a named op inside a named op giving its own memory records to that
    op, itself opened, rather than to the first op around them not named): the H200 excerpt's chain
    aten::conv2d > aten::convolution > aten::_convolution > aten::cudnn_convolution (nested by hand: same thread,
    by start and end), the last three named, against the trace without their events: the cudnn op's own
    allocations are then aten::conv2d's, and every sheet that pairs ops equals the copy's."""
    import test_transparent_op as tt

    names = ["aten::convolution", "aten::_convolution", "aten::cudnn_convolution"]
    doc = tt._load(tt.H200)
    ev = doc["traceEvents"]
    for outer, inner in zip(["aten::conv2d", *names], names, strict=False):
        for op in tt._events_named(ev, inner):  # each directly inside one op of the name before it
            assert len([e for e in tt._events_named(ev, outer) if op in tt._children(ev, e)]) == 1, inner
    assert len(tt._own_memory_events(ev, "aten::cudnn_convolution")) == 9
    kept = [e for e in ev if not (e.get("ph") == "X" and e.get("name") in names and e.get("cat") in tt.OP_CATS)]
    edited = tmp_path / "alexnet_h200_without_convolutions.pt.trace.json"
    edited.write_text(json.dumps({**doc, "traceEvents": kept}, default=str), encoding="utf-8")
    opened = compare(str(tt.H200), str(edited), transparent_op=names, disable_module=True, **kw)
    removed = compare(str(edited), str(edited), disable_module=True, **kw)
    for sheet in tt.PAIRED:
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    details = "".join(opened.sheet("MemoryCompare").iloc[:, 4].fillna("").astype(str).tolist())
    assert not [n for n in names if f"{n}, " in details]


def test_an_entry_renaming_comparison_ops_that_pair_gets_no_idle_line(caplog: pytest.LogCaptureFixture) -> None:
    """Kills i_rowpair (an entry taken to pair a row only where the base side's op is the one renamed): the bundled
    pair with its sides swapped, the MI300 trace (hipDeviceSynchronize) as the base and the H100 trace
    (cudaDeviceSynchronize) as the comparison, the map renaming the comparison side's calls onto the base's name:
    they pair, so the entry is no idle one; test_op_name_map_idle's unswapped run says nothing either."""
    import test_op_name_map_idle as idle

    h100, mi300 = (idle.REPO / "sample_data" / f"bert-small_{g}.json.gz" for g in ("h100", "mi300"))
    assert idle._events(mi300)["cudaDeviceSynchronize"] == idle._events(h100)["hipDeviceSynchronize"] == 0
    assert idle._events(h100)["cudaDeviceSynchronize"] > 0 and idle._events(mi300)["hipDeviceSynchronize"] > 0
    assert idle._said(caplog, mi300, h100, op_name_map={"cudaDeviceSynchronize": "hipDeviceSynchronize"}) == []


def test_an_entry_onto_a_name_of_one_compared_op_says_it_in_the_singular(samples: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    """Kills i_count (the other side's compared ops of the new name counted in the plural whatever their number):
    test_op_name_map_idle's pair 4 with its wrappers opened, the GPU's 5 cudaDeviceSynchronize mapped onto
    aten::flatten, which the NPU's forward runs once and the GPU's twice: the NPU's one flatten pairs with a GPU
    flatten, and the line counts "1 compared operator"."""
    import test_op_name_map_idle as idle

    gpu, npu = idle._events(samples / idle.GPU), idle._events(samples / idle.NPU)
    assert gpu["cudaDeviceSynchronize"] == 5 and npu["cudaDeviceSynchronize"] == 0
    assert npu["aten::flatten"] == 1 and gpu["aten::flatten"] == 2
    assert idle._said(caplog, samples / idle.GPU, samples / idle.NPU, transparent_op=idle.WRAPPERS,
                      op_name_map={"cudaDeviceSynchronize": "aten::flatten"}) == [
        "op_name_map: the entry 'cudaDeviceSynchronize': 'aten::flatten' renames 5 base operators named "
        "'cudaDeviceSynchronize', but none pairs with the comparison side's 1 compared operator named "
        "'aten::flatten' (each pairs with another base operator)."]


def test_a_torch_npu_database_without_ops_is_called_a_torch_npu_export(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Kills mo_db_pt (a database named ascend_pytorch_profiler*.db taken for a MindSpore one): the level-1 DB
    excerpt with its PYTORCH_API rows deleted (dbutil.edited_copy, in a folder named as no profiling directory, so
    the file's name alone tells its profiler) has no torch op; torch_npu writes that database, so the side is a
    torch_npu export recorded without its ops, against the H200 AlexNet trace."""
    from dbutil import edited_copy

    copy = edited_copy(DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db", tmp_path / "ascend_pytorch_profiler_0.db",
                       "DELETE FROM PYTORCH_API")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200_ALEXNET), str(copy), enable_operator_compare=True, use_input_shape=True)
    assert [m for m in caplog.messages if "parameter is ignored" in m] == [
        "The use_input_shape parameter is ignored: it only takes effect when operators are matched, and the "
        "comparison side has no torch op (a torch_npu export without cpu_op events has none)."]


def test_a_database_under_mindspores_name_without_ops_is_called_a_mindspore_export(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Kills mo_db_ms (a database named ascend_mindspore_profiler*.db taken for a torch_npu one): no real MindSpore
    database is among the samples, so the level-1 DB excerpt is copied under MindSpore's file name, which the
    loader reads as MindSpore's (without PYTORCH_API: no torch op), in a folder that names no profiling
    directory; its side is then a MindSpore DB export, whose framework ops are not read (session 76: the words
    were those of a text export, "nor do 2.3 / 2.4 ones without cpu_op events")."""
    copy = tmp_path / "ascend_mindspore_profiler_0.db"
    shutil.copyfile(DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db", copy)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200_ALEXNET), str(copy), enable_operator_compare=True, use_input_shape=True)
    assert [m for m in caplog.messages if "parameter is ignored" in m] == [
        "The use_input_shape parameter is ignored: it only takes effect when operators are matched, and the "
        "comparison side has no torch op (a MindSpore DB export's framework ops are not read, as in the original)."]


def test_the_no_module_in_step_line_ends_with_its_side(caplog: pytest.LogCaptureFixture) -> None:
    """Kills mod_step (the module sheets' no-module-in-step line losing its side when the parenthesis moved to
    errors.side_named): test_count_separators_2's call, two ``nn.Module: Linear_N`` events before step 7's range
    (100 to 200 ns) and one after, read whole; that test cuts the line before its end."""
    import pandas as pd

    from msprof_compare.compare.modules import _say_no_module_in_step
    from msprof_compare.model import Profile

    p = Profile(path="run", kind="GPU", source="kineto")
    p.python_functions = pd.DataFrame({"name": [f"nn.Module: Linear_{i}" for i in range(3)], "ts": [50, 60, 300]})
    view = Profile(path="run", kind="GPU", source="kineto")
    view.python_functions = pd.DataFrame({"name": ["aten::mm"], "ts": [150]})
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        _say_no_module_in_step(p, view, 7, (100, 200), "comparison side")
    assert caplog.messages == [
        "run: none of its 3 nn.Module events starts in step 7 (2 start before it, 1 after it), so it has no module "
        "for the module sheets (ModuleCompare, ModuleCompareStatistic): a module counts in the step its start lies "
        "in (comparison side)"]


def test_step_range_of_a_gpu_trace_unnamed_side_says_this_side() -> None:
    """Kills s_gpu_this (the side-less GPU step refusal losing "this side is"): ``steps.step_range`` called on the
    bundled H100 trace (a library caller; a compare refuses the step earlier, naming the side) cannot tell which
    side the trace is, and says "this side"; told its side, it names it."""
    from msprof_compare.compare.steps import step_range
    from msprof_compare.errors import UsageError
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    trace = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
    p = load_profile(str(trace), build_options(enable_profiling_compare=True)[0])
    with pytest.raises(UsageError) as refused:
        step_range(p, 5)
    assert str(refused.value) == (
        f"{p.path}: step id is invalid in GPU data, please use this when comparing between NPU datas. (this side is "
        "a GPU trace, where the step options do not apply: leave out --base_step and --comparison_step to compare "
        "the whole profiles)")
    # given its side, it names it, first in the parenthesis, as a compare's refusal does (it said "this side")
    with pytest.raises(UsageError) as refused:
        step_range(p, 5, "comparison side")
    assert str(refused.value) == (
        f"{p.path}: step id is invalid in GPU data, please use this when comparing between NPU datas. (comparison "
        "side: a GPU trace, where the step options do not apply: leave out --base_step and --comparison_step to "
        "compare the whole profiles)")
