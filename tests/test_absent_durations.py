"""Complete events ("X") without a "dur": read as 0, counted in one warning per file, and a trace none of whose
device events has one refused (no time breakdown can be made of it).

Cut at test time from real excerpts: tests/data/kineto/h100_timesformer_excerpt.pt.trace.json (TraceLens) and
tests/data/npu/rank0_ascend_pt (msinsight level1 sample, see the README files there), and two MindSpore timeline
files of shared/samples/mindinsight; only "dur" keys are removed.
The expected durations are summed here from the excerpts' own JSON values.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from test_mindspore_user_leftovers import MS_NONE

from msprof_compare.api import Options, ProfileError, compare, load_profile
from msprof_compare.loaders import traceio
from msprof_compare.loaders.kineto import KERNEL_CATS
from msprof_compare.options import build_options
from tests.cliutil import error_lines, run_inproc

DATA = Path(__file__).parent / "data"
TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
NPU = DATA / "npu" / "rank0_ascend_pt"
DEVICE_LANES = ("Ascend Hardware", "HCCL", "Overlap Analysis")


def _ns(us: float | str) -> int:
    return int((Decimal(str(us)) * 1000).to_integral_value())


def _kineto(tmp_path: Path, drop) -> tuple[Path, list[dict]]:
    top = json.loads(TIMESFORMER.read_text())
    for e in top["traceEvents"]:
        if drop(e):
            del e["dur"]
    path = tmp_path / "cut.pt.trace.json"
    path.write_text(json.dumps(top))
    return path, top["traceEvents"]


def _is_kernel(e: dict) -> bool:
    return e.get("ph") == "X" and e.get("cat", "").lower() in KERNEL_CATS


def test_kineto_kernels_and_ops_without_dur_read_as_0_and_said(tmp_path: Path) -> None:
    kernels = [e for e in json.loads(TIMESFORMER.read_text())["traceEvents"] if _is_kernel(e)]
    gone = [(e["name"], e["ts"]) for e in kernels[:3]]
    n_ops = [0]

    def drop(e: dict) -> bool:
        if _is_kernel(e) and (e["name"], e["ts"]) in gone:
            return True
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and n_ops[0] < 2:
            n_ops[0] += 1
            return True
        return False

    path, events = _kineto(tmp_path, drop)
    prof = load_profile(str(path), Options())
    # 75 kernels (62 kernel, 13 gpu_memset), 93 host events of the ops table (73 cpu_op, 20 cuda_runtime)
    assert prof.warnings == [
        f"{path}: complete events without a 'dur' (3 of 75 kernels, 2 of 93 host events); read as 0 long, so "
        "their time counts in no figure"]
    assert len(kernels) == 75
    kept = sum(_ns(e["dur"]) for e in events if _is_kernel(e) and "dur" in e)
    # the 75 kernels last 14490.524 us in all; the three cut last 71.552, 71.264 and 38.304 us
    assert int(prof.kernels["dur"].sum()) == kept == 14_490_524 - 71_552 - 71_264 - 38_304
    zero = prof.kernels[prof.kernels["dur"] == 0]
    assert sorted(zip(zero["name"], zero["ts"] // 1000, strict=True)) == sorted(
        (n, int(t)) for n, t in gone)
    # a run that reads the device time (the CLI's defaults: the time breakdown) goes on too: some kernel has one
    full = load_profile(str(path), build_options()[0])
    assert full.warnings[0].startswith(f"{path}: complete events without a 'dur' (3 of 75 kernels, ")
    assert int(full.kernels["dur"].sum()) == kept


def test_kineto_without_any_kernel_dur_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run that reads the kernels' time (the time breakdown, the operator or the communication comparison) is
    refused, its line naming those of the run that read it and, in the hint, the comparisons that run without."""
    path, _ = _kineto(tmp_path, lambda e: e.get("ph") == "X")
    head = (f"{path}: none of the trace's 75 kernels has a 'dur' (their duration): no device time to compare, "
            "which ")
    hint = "the API and memory comparisons do not read them and run without them"
    with pytest.raises(ProfileError) as info:
        load_profile(str(path), build_options()[0])
    assert f"{info.value.path}: {info.value.message}" == (
        f"{head}the time breakdown, the operator comparison and the communication comparison read from them")
    assert info.value.hint == hint
    with pytest.raises(ProfileError) as info:
        load_profile(str(path), build_options(enable_operator_compare=True, enable_api_compare=True)[0])
    assert f"{info.value.path}: {info.value.message}" == f"{head}the operator comparison reads from them"
    with pytest.raises(ProfileError) as info:  # the gate reads the E2E time: the breakdown is made for it
        load_profile(str(path), build_options(enable_api_compare=True, fail_on_regression=5)[0])
    assert f"{info.value.path}: {info.value.message}" == f"{head}the time breakdown reads from them"
    code, _, err = run_inproc(capsys, "-d", str(path), "-bp", str(TIMESFORMER), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [f"error: {head}the time breakdown, the operator comparison and the communication "
                                f"comparison read from them (comparison side: {hint})"]
    assert not (tmp_path / "out").exists()
    code, _, err = run_inproc(capsys, "-d", str(path), "-bp", str(TIMESFORMER), "-o", str(tmp_path / "out"),
                              "--enable_communication_compare", "--enable_memory_compare")
    assert code == 1 and not (tmp_path / "out").exists()
    assert error_lines(err) == [f"error: {head}the communication comparison reads from them (comparison side: {hint})"]


def test_kineto_without_any_kernel_dur_runs_the_api_and_memory_comparisons(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The API and memory comparisons read host events and memory records, not the kernels' time: a trace with no
    kernel 'dur' at all was refused; now such a run goes on, the absent durations said as any are, and its sheets
    are those of the whole excerpt (each row's figures equal)."""
    path, _ = _kineto(tmp_path, lambda e: _is_kernel(e))
    on = {"enable_api_compare": True, "enable_memory_compare": True}
    prof = load_profile(str(path), build_options(**on)[0])
    assert [w for w in prof.warnings if "'dur'" in w] == [
        f"{path}: complete events without a 'dur' (75 of 75 kernels); read as 0 long, so their time counts in no "
        "figure"]
    assert len(prof.kernels) == 75 and int(prof.kernels["dur"].sum()) == 0
    got, whole = compare(str(path), str(TIMESFORMER), **on), compare(str(TIMESFORMER), str(TIMESFORMER), **on)
    for sheet in ("ApiCompare", "MemoryCompare", "MemoryCompareStatistic"):
        assert len(got.sheet(sheet)) == len(whole.sheet(sheet)) > 0
        pd.testing.assert_frame_equal(got.sheet(sheet), whole.sheet(sheet))
    code, _, err = run_inproc(capsys, "-d", str(path), "-bp", str(TIMESFORMER), "-o", str(tmp_path / "out"),
                              "--enable_api_compare")
    assert code == 0 and len(list((tmp_path / "out").glob("performance_comparison_result_*.xlsx"))) == 1
    assert "error" not in err and "75 of 75 kernels" in err


def _npu(tmp_path: Path, drop, numeric_ts: bool = False) -> tuple[Path, Path, list[dict], dict]:
    """The fixture without kernel_details.csv (the trace's device lanes give the device time), "dur" removed
    from the events ``drop`` picks; ``numeric_ts``: every ts written as a JSON number (epoch microseconds
    beyond float64's ns precision: the decode that keeps time texts, ``traceio.RawTimesEvent``)."""
    dst = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU, dst)
    (dst / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    tv = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    for e in events:
        if drop(e, lanes.get(e.get("pid"))):
            del e["dur"]
    text = json.dumps(events)
    if numeric_ts:
        text = re.sub(r'"ts": "(\d+\.\d+)"', r'"ts": \1', text)
    tv.write_text(text)
    return dst, tv, events, lanes


@pytest.mark.parametrize("numeric_ts", [False, True])
def test_npu_trace_events_without_dur_read_as_0_and_said(tmp_path: Path, numeric_ts: bool) -> None:
    seen = {"Ascend Hardware": 0, "Python": 0}

    def drop(e: dict, lane: str | None) -> bool:
        if e.get("ph") == "X" and lane in seen and seen[lane] < (2 if lane == "Ascend Hardware" else 5):
            seen[lane] += 1
            return True
        return False

    dst, tv, events, lanes = _npu(tmp_path, drop, numeric_ts)
    prof = load_profile(str(dst), Options())
    # 96 device events: 39 Ascend Hardware + 17 HCCL + 40 Overlap Analysis; 208 host events read (cpu_op and the
    # other wanted categories of the Python lane); flows and metadata have no "dur" by design and are not counted
    assert prof.warnings[0] == (f"{tv}: complete events without a 'dur' (2 of 96 device events, 5 of 208 host "
                                "events); read as 0 long, so their time counts in no figure")
    hw = [e for e in events if e.get("ph") == "X" and lanes.get(e["pid"]) == "Ascend Hardware"]
    assert len(hw) == 39 and sum("dur" not in e for e in hw) == 2
    tasks = prof.kernels  # the Ascend Hardware lane's tasks, as there is no kernel_details.csv
    assert len(tasks) == 39
    assert int(tasks["dur"].sum()) == sum(_ns(e["dur"]) for e in hw if "dur" in e)
    zero = sorted(_ns(e["ts"]) for e in hw if e.get("dur", 0) == 0)  # 3 tasks of the excerpt last 0 already
    assert len(zero) == 5 and sorted(tasks["ts"][tasks["dur"] == 0].tolist()) == zero
    # a run that reads the device time (the CLI's defaults: the time breakdown) goes on too: some device event has one
    full = load_profile(str(dst), build_options()[0])
    # (more host categories are read, the same device events)
    assert full.warnings[0].startswith(f"{tv}: complete events without a 'dur' (2 of 96 device events, 5 of ")
    assert len(full.kernels) == 39


def test_npu_trace_without_any_device_dur_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run that reads the device time (the time breakdown, the operator or the communication comparison) is
    refused, its line naming those of the run that read it; kernel_details.csv does not replace them (the hint)."""
    dst, tv, _, _ = _npu(tmp_path, lambda e, lane: lane in DEVICE_LANES and e.get("ph") == "X")
    head = (f"{tv}: none of the trace's 96 device events (Ascend Hardware, HCCL, Overlap Analysis lanes) has a 'dur' "
            "(their duration): no device time to compare, which ")
    with pytest.raises(ProfileError) as info:
        load_profile(str(dst), build_options()[0])
    assert f"{info.value.path}: {info.value.message}" == (
        f"{head}the time breakdown, the operator comparison and the communication comparison read from them")
    assert info.value.hint == ("kernel_details.csv does not replace them; the kernel, API and memory comparisons do "
                               "not read them and run without them")
    with pytest.raises(ProfileError) as info:
        load_profile(str(dst), build_options(enable_operator_compare=True)[0])
    assert f"{info.value.path}: {info.value.message}" == f"{head}the operator comparison reads from them"
    code, _, err = run_inproc(capsys, "-d", str(dst), "-bp", str(NPU), "-o", str(tmp_path / "out"),
                              "--enable_communication_compare")
    assert code == 1 and not (tmp_path / "out").exists()
    assert error_lines(err) == [f"error: {head}the communication comparison reads from them (comparison side: "
                                f"kernel_details.csv does "
                                "not replace them; the kernel, API and memory comparisons do not read them and run "
                                "without them)"]


def test_npu_trace_without_any_device_dur_runs_the_kernel_comparison(tmp_path: Path) -> None:
    """The kernel comparison reads kernel_details.csv's durations, not the trace's: a trace with no device 'dur' at
    all beside the excerpt's kernel_details.csv was refused; now the run goes on, the absent durations said as
    any are, and KernelCompare is that of the whole folder (each row's figures equal)."""
    dst, tv, _, _ = _npu(tmp_path, lambda e, lane: lane in DEVICE_LANES and e.get("ph") == "X")
    shutil.copyfile(NPU / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv",
                    dst / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    prof = load_profile(str(dst), build_options(enable_kernel_compare=True, enable_api_compare=True,
                                                enable_memory_compare=True)[0])
    assert [w for w in prof.warnings if "'dur'" in w] == [
        f"{tv}: complete events without a 'dur' (96 of 96 device events); read as 0 long, so their time counts in no "
        "figure"]
    got = compare(str(dst), str(NPU), enable_kernel_compare=True).sheet("KernelCompare")
    whole = compare(str(NPU), str(NPU), enable_kernel_compare=True).sheet("KernelCompare")
    assert len(got) == len(whole) > 0
    pd.testing.assert_frame_equal(got, whole)


def test_kineto_epoch_scale_trace_without_kernel_dur(tmp_path: Path) -> None:
    """The bf16 GPT excerpt (H200, recorded by this project; ts ~5.2e12 us) decodes with its ts kept as text
    (``traceio.RawTsEvent``), whose absent dur is read the same way: 2 of its 14 kernels cut."""
    src = DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
    top = json.loads(src.read_text())
    kernels = [e for e in top["traceEvents"] if _is_kernel(e)]
    for e in kernels[:2]:
        del e["dur"]
    path = tmp_path / "gpt.pt.trace.json"
    path.write_text(json.dumps(top))
    assert type(traceio.decode_trace(str(path), path.read_bytes())[0][0]) is traceio.RawTsEvent
    prof = load_profile(str(path), Options())
    assert [w for w in prof.warnings if "'dur'" in w] == [
        f"{path}: complete events without a 'dur' (2 of 14 kernels); read as 0 long, so their time counts in no "
        "figure"]
    assert int(prof.kernels["dur"].sum()) == sum(_ns(e["dur"]) for e in kernels[2:])


MS_TIMELINES = "mindinsight/tests/utils/resource"
#: A CANN msprof timeline of a MindSpore run (device lanes, no torch op) and a MindSpore 1.x timeline_display file
#: (events on no named lane: no figure reads them)
MSPROF_TIMELINE = (f"{MS_TIMELINES}/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/"
                   "msprof_0_2_1.json")
MS1_DISPLAY = f"{MS_TIMELINES}/run_2/normal_run/profiler/ascend_timeline_display_1.json"


def test_legacy_timelines_without_dur_follow_the_trace_rule(samples: Path, tmp_path: Path, caplog) -> None:
    """The timeline files given alone (the MindSpore sample's msprof_0_2_1.json and 1.x ascend_timeline_display_1.json,
    every "dur" key removed) load by the text trace rule: the msprof timeline's 1,048 device events without one are
    refused by a run that reads the device time and said in one warning by a run that does not (the API comparison
    against the level-1 export); the 1.x file's events lie on no device lane and are no op, so no figure reads them,
    and its runs are those of the unedited file (CommunicationCompare of the level-1 side alone)."""
    level1 = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    cut = {}
    for name in (MSPROF_TIMELINE, MS1_DISPLAY):
        events = json.loads((samples / name).read_text())
        for e in events if isinstance(events, list) else events["traceEvents"]:
            e.pop("dur", None)
        cut[name] = tmp_path / Path(name).name
        cut[name].write_text(json.dumps(events))
    msprof = str(cut[MSPROF_TIMELINE])
    with pytest.raises(ProfileError, match=r"none of the trace's 1,048 device events .* which the communication "
                                           r"comparison reads from them"):
        compare(msprof, str(level1), enable_communication_compare=True)
    prof = load_profile(msprof, build_options(enable_api_compare=True)[0])
    assert [w for w in prof.warnings if "'dur'" in w] == [
        f"{msprof}: complete events without a 'dur' (1,048 of 1,048 device events); read as 0 long, so their time "
        "counts in no figure"]
    # the timeline has no torch op: the one-sided warning does not offer the communication comparison, which the
    # level-1 side's HCCL ops would give were the timeline timed, as this run with it is refused
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(msprof, str(level1), enable_api_compare=True)
    assert [m for m in caplog.messages if "torch op" in m][0].endswith(
        "(MindSpore and CANN timelines have none): none of this run's other comparisons applies")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(samples / MSPROF_TIMELINE), str(level1), enable_api_compare=True)
    assert [m for m in caplog.messages if "torch op" in m][0].endswith(
        "none of this run's other comparisons applies; enable_profiling_compare=True and "
        "enable_communication_compare=True would add the overall and communication comparisons")
    display = compare(str(cut[MS1_DISPLAY]), str(level1))
    whole = compare(str(samples / MS1_DISPLAY), str(level1))
    assert display.sheet_names == whole.sheet_names == ["CommunicationCompare"]
    pd.testing.assert_frame_equal(display.sheet("CommunicationCompare"), whole.sheet("CommunicationCompare"))


def test_one_sided_warning_offers_no_comparison_a_side_without_device_time_would_refuse(
        tmp_path: Path, caplog) -> None:
    """The timesformer excerpt without any kernel 'dur' (its API run goes on) against the MindSpore-layout excerpt
    (no torch op; its HCCL all-reduce and device lanes timed): the one-sided warning offered the overall and
    communication comparisons by their flags, whose run refuses the cut trace; the unedited excerpt gets both."""
    path, _ = _kineto(tmp_path, lambda e: _is_kernel(e))
    mindspore = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
    for base, end in ((path, "none of this run's other comparisons applies"),
                      (TIMESFORMER, "none of this run's other comparisons applies; enable_profiling_compare=True and "
                                    "enable_communication_compare=True would add the overall and communication "
                                    "comparisons")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(str(base), str(mindspore), enable_api_compare=True)
        assert [m for m in caplog.messages if "torch op" in m][0].endswith(f"({MS_NONE}): " + end)
    with pytest.raises(ProfileError, match="which the communication comparison reads from them"):
        compare(str(path), str(mindspore), enable_communication_compare=True)
    assert {"OverallMetrics", "CommunicationCompare"} <= set(compare(str(TIMESFORMER), str(mindspore)).sheet_names)
