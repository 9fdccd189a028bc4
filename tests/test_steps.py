"""Step ranges: ProfilerStep lookup, the GPU refusal and the unknown-step error."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from msprof_compare.api import RunContext, compare
from msprof_compare.compare import steps, table
from msprof_compare.errors import StepError, UsageError
from msprof_compare.model import Profile, frame
from msprof_compare.options import Options, build_options


def npu(names_ts_dur) -> Profile:
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    p.ops = frame("ops", {"name": [n for n, _, _ in names_ts_dur], "cat": ["cpu_op"] * len(names_ts_dur),
                          "ts": [t for _, t, _ in names_ts_dur], "dur": [d for _, _, d in names_ts_dur]})
    return p


def test_step_range_found():
    p = npu([("ProfilerStep#4", 0, 100), ("aten::add", 5, 1), ("ProfilerStep#5", 200, 50)])
    assert steps.step_range(p, 5) == (200, 250)
    assert steps.step_range(p, 4) == (0, 100)
    assert steps.step_range(p, -1) is None


def test_repeated_step_id_uses_the_first_marker():
    """reference-1 §3.5: of several ProfilerStep# markers with the requested id, the first one gives the range."""
    p = npu([("ProfilerStep#5", 0, 100), ("ProfilerStep#6", 150, 10), ("ProfilerStep#5", 200, 50)])
    assert steps.step_range(p, 5) == (0, 100)


def test_unknown_step_lists_valid_ids():
    p = npu([("ProfilerStep#4", 0, 100), ("ProfilerStep#5", 200, 50), ("ProfilerStep#x", 300, 1)])
    with pytest.raises(StepError) as info:
        steps.step_range(p, 7)
    assert str(info.value) == f"{p.path}: Invalid step id: 7, please choose from the valid steps: 4, 5, x"
    assert info.value.exit_code == 2


def test_step_ids_beyond_int64_are_compared_exactly():
    big = 99999999999999999999999  # a float would round it (and its neighbour) to the same value
    p = npu([(f"ProfilerStep#{big}", 0, 100), (f"ProfilerStep#{big - 1}", 200, 50)])
    assert steps.step_range(p, big) == (0, 100)
    assert steps.step_range(p, big - 1) == (200, 250)


def test_step_number_of_more_than_4300_digits_is_no_number():
    """Python refuses int() of over 4300 digits: such a marker is no step (it was an internal error)."""
    assert steps.step_number("5" * 4300) == int("5" * 4300)
    assert steps.step_number("5" * 4301) == -1
    assert steps.step_number(" +7 ") == 7 and steps.step_number("7a") == -1


def test_non_integer_step_markers_are_logged_as_the_original_does(caplog):
    """reference-1 §3.5: a marker whose id is no integer logs "Can not convert x to int" at ERROR while
    the markers are scanned for the requested step (up to the match) and counts as no step."""
    p = npu([("ProfilerStep#x", 0, 10), ("ProfilerStep#5", 20, 10), ("ProfilerStep#y", 40, 10)])
    with caplog.at_level(logging.ERROR, logger="msprof-analyze"):
        assert steps.step_range(p, 5) == (20, 30)
    assert [r.getMessage() for r in caplog.records] == ["Can not convert x to int"]


def test_step_without_any_profiler_step_says_so():
    p = npu([("aten::add", 0, 10)])
    with pytest.raises(StepError, match=r"^npu: Invalid step id: 3: the profile has no ProfilerStep# markers"):
        steps.step_range(p, 3)


def test_gpu_step_refused():
    g = Profile(path="g.json", kind="GPU", source="kineto")
    with pytest.raises(UsageError, match="step id is invalid in GPU data, please use this when comparing "
                                         "between NPU datas."):
        steps.step_range(g, 1)
    assert steps.step_range(g, -1) is None


def test_side_range_cached_per_side():
    p = npu([("ProfilerStep#4", 0, 100), ("ProfilerStep#5", 200, 50)])
    opts, _ = build_options(base_step="4", comparison_step="5")
    ctx = RunContext(p, p, opts)
    assert steps.side_range(ctx, "base") == (0, 100)
    assert steps.side_range(ctx, "comparison") == (200, 250)
    assert ctx.cache["steps.range.base"] == (0, 100)
    steps.check_steps(ctx)


def test_in_range_inclusive():
    assert steps.in_range([0, 10, 20, 21], (10, 20)).tolist() == [False, True, True, False]
    assert steps.in_range([1, 2], None).tolist() == [True, True]


def test_frame_from_rows_keeps_none():
    f = table.frame_from_rows([[1, None, 2.5], [2, 3, 1.0]], 3)
    assert f[1].tolist() == [None, 3]
    assert f[0].dtype.kind == "i" and f[2].dtype.kind == "f"
    assert len(table.frame_from_rows([], 4).columns) == 4


def test_options_default_no_step():
    assert Options().base_step == -1


# ------------------------------------------------------------------ whole runs (real samples)

TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
SAMPLE_GPU = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
STEP_CHECKED_BY = ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
                   "enable_api_compare", "enable_communication_compare")


@pytest.mark.parametrize("flag", STEP_CHECKED_BY)
def test_unknown_text_step_refused_whichever_comparison_is_on(flag: str, samples: Path) -> None:
    """The original validates the step while reading communication data, i.e. for every comparison
    but kernel compare; the error names the side's input. Before, a profiling-only run ignored it."""
    base, comp = (str(samples / TEXT.format(n)) for n in (1, 2))
    with pytest.raises(StepError, match=r"level2/rank0_ascend_pt: Invalid step id: 7, please choose from "
                                        r"the valid steps: 50$"):
        compare(base, comp, base_step="50", comparison_step="7", **{flag: True})


@pytest.mark.parametrize("flag", [*STEP_CHECKED_BY, "enable_kernel_compare"])
def test_gpu_step_refused_whichever_comparison_is_on(flag: str) -> None:
    with pytest.raises(UsageError, match="step id is invalid in GPU data"):
        compare(str(SAMPLE_GPU), str(SAMPLE_GPU), base_step="1", comparison_step="1", **{flag: True})


def test_step_on_bare_trace_views_compares_without_kernel_sheet(samples: Path) -> None:
    """A bare trace_view.json has no kernel_details.csv, which the original does not read at that level:
    a valid step compares the rest, not "There is no kernel details information for step 50"."""
    base, comp = (str(samples / TEXT.format(n) / "ASCEND_PROFILER_OUTPUT" / "trace_view.json") for n in (1, 2))
    res = compare(base, comp, base_step="50", comparison_step="50")
    names = res.sheet_names
    assert "KernelCompare" not in names and {"OverallMetrics", "ApiCompare"} <= set(names)
    with pytest.raises(StepError, match="trace_view.json: Invalid step id: 7"):
        compare(base, comp, base_step="50", comparison_step="7")


def test_step_needs_ascii_digits() -> None:
    with pytest.raises(UsageError, match="must be a number"):
        build_options(base_step="²", comparison_step="1")



def _loads_seen(monkeypatch) -> list:
    """The paths the API loads from now on (``load_profile`` still does the work)."""
    import msprof_compare.api as api_module

    loaded: list = []
    real = api_module.load_profile
    monkeypatch.setattr(api_module, "load_profile", lambda path, *a, **k: loaded.append(path) or real(path, *a, **k))
    return loaded


def test_gpu_step_refused_before_loading(monkeypatch, tmp_path: Path) -> None:
    """A Kineto input with a step is refused from its first bytes: loading two 170 MB traces only to say
    the options are wrong took 4 s (30 s on 500 MB traces). A base the loader refuses still comes first."""
    from msprof_compare.errors import ProfileError

    loaded = _loads_seen(monkeypatch)
    with pytest.raises(UsageError, match="step id is invalid in GPU data"):
        compare(str(SAMPLE_GPU), str(SAMPLE_GPU), base_step="1", comparison_step="1")
    assert loaded == []
    missing = str(tmp_path / "missing.json")
    with pytest.raises(ProfileError, match="missing.json: no such file or directory"):
        compare(missing, str(SAMPLE_GPU), base_step="1", comparison_step="1")


def test_gpu_step_refused_before_loading_whichever_side_is_kineto(monkeypatch, tmp_path: Path) -> None:
    """An NPU base (tests/data/npu) with a Kineto comparison and a step: the comparison's first bytes refuse it,
    before either side is loaded. An NPU directory whose trace_view.json is no event list (a JSON object, as a
    Kineto trace is) is no Kineto file: the loader's own error comes, not the GPU step refusal."""
    import json
    import shutil

    from msprof_compare.errors import ProfileError

    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    loaded = _loads_seen(monkeypatch)
    with pytest.raises(UsageError, match="step id is invalid in GPU data"):
        compare(str(npu), str(SAMPLE_GPU), base_step="1", comparison_step="1")
    assert loaded == []
    odd = tmp_path / "rank0_ascend_pt"
    shutil.copytree(npu, odd)
    trace = odd / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.write_text(json.dumps({"traceEvents": json.loads(trace.read_text())}))
    with pytest.raises(ProfileError, match="not an Ascend trace_view.json \\(top level is an object"):
        compare(str(odd), str(odd), base_step="1", comparison_step="1")


def test_summary_and_gate_say_a_text_export_ignores_the_step(samples: Path) -> None:
    """On text exports the time breakdown covers the whole profile with a step too (reference-1 §1.4, as the
    original's OverallMetrics); the Summary, which is built from it, and the CI gate say so; a DB export
    limits it to the step, and the check says that as well."""
    from msprof_compare.compare import summary

    base, comp = (str(samples / TEXT.format(n)) for n in (1, 2))
    res = compare(base, comp, base_step="50", comparison_step="50", enable_profiling_compare=True)
    g = res.frames["guards"].set_index("Check")
    row = g.loc[summary.STEP_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("note", "whole profile", "whole profile")
    plain = compare(base, comp, enable_profiling_compare=True)
    assert summary.STEP_CHECK not in set(plain.frames["guards"]["Check"])
    assert res.frames["e2e"].equals(plain.frames["e2e"])  # the figures are those of the run without a step
    _code, message = res.regression_gate(1000)
    assert message.startswith("No regression: E2E time (whole profile on both sides: a text export's E2E ignores "
                              "the step)")
    assert "whole profile" not in plain.regression_gate(1000)[1]
    db = "msinsight/test/data/pytorch/db/level{}/rank0_ascend_pt"
    dres = compare(str(samples / db.format(1)), str(samples / db.format(2)), base_step="50", comparison_step="50",
                   enable_profiling_compare=True)
    row = dres.frames["guards"].set_index("Check").loc[summary.STEP_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("ok", "step 50", "step 50")
    assert "whole profile" not in dres.regression_gate(1000)[1]
    mixed = compare(str(samples / db.format(1)), comp, base_step="50", comparison_step="50",
                    enable_profiling_compare=True)
    row = mixed.frames["guards"].set_index("Check").loc[summary.STEP_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("note", "step 50", "whole profile")
    assert "E2E time (whole profile on the comparison side: a text" in mixed.regression_gate(1000)[1]
    kernels_only = compare(base, comp, base_step="50", comparison_step="50", enable_kernel_compare=True)
    assert summary.STEP_CHECK not in set(kernels_only.frames["guards"]["Check"])  # no breakdown, nothing to say
