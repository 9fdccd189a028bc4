"""What session 66's user walk (``test_user_walk_wording.py``) left: the words that still left a new user guessing,
each pinned on a real sample, with what they say checked there."""

from __future__ import annotations

import pytest
from cliutil import error_lines, run_inproc

from msprof_compare import cli, compare
from msprof_compare.errors import UsageError

PYTORCH = "msinsight/test/data/pytorch"
TEXT = PYTORCH + "/text/level{}/rank0_ascend_pt"


def test_step_that_is_no_number_is_named_as_each_face_takes_it(capsys, samples, tmp_path):
    """``--base_step x --comparison_step 50`` on two NPU text exports: the CLI said "Invalid param, base_step and
    comparison_step must be a number. (got --base_step 'x': ...)", the options bare before the flag it quoted,
    where "must be set at the same time" names the flags (test_user_walk_wording). The CLI and the script now name
    the flags in the original's sentence too, a step past int64 likewise; compare() keeps its keywords, the
    original's words. Nothing is written. Step 50 is in both exports: with a number the compare goes on."""
    pair = [str(samples / TEXT.format(n)) for n in (1, 2)]
    out = tmp_path / "never"
    said = ("Invalid param, --base_step and --comparison_step must be a number. (got --base_step 'x': a step id is "
            "a whole number >= 0, the N of ProfilerStep#N)")
    code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--base_step", "x", "--comparison_step", "50",
                              "-o", str(out))
    assert code == 2 and error_lines(err) == [f"error: {said}"]
    assert cli.script_main([*pair, "--base_step", "x", "--comparison_step", "50", "-o", str(out)]) == 2
    assert error_lines(capsys.readouterr().err) == [f"error: {said}"]
    big = str(2**63)  # one past the largest step id a profile can record (int64)
    code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--base_step", "50", "--comparison_step", big,
                              "-o", str(out))
    assert code == 2 and error_lines(err) == [
        f"error: Invalid param, --base_step and --comparison_step must be a number. (got --comparison_step '{big}': "
        f"a step id is a whole number from 0 to {2**63 - 1} (int64), the N of ProfilerStep#N)"]
    assert not out.exists()
    with pytest.raises(UsageError) as info:
        compare(*pair, base_step="x", comparison_step=50)
    assert str(info.value) == ("Invalid param, base_step and comparison_step must be a number. (got base_step='x': "
                               "a step id is a whole number >= 0, the N of ProfilerStep#N)")
    with pytest.raises(UsageError, match=r"^Invalid param, base_step and comparison_step must be a number\. \(got "
                                         r"comparison_step=True: a step id is a whole number >= 0, the N of "
                                         r"ProfilerStep#N\)$"):
        compare(*pair, base_step=50, comparison_step=True)
    assert compare(*pair, base_step=50, comparison_step=50, enable_api_compare=True).sheet_names == ["ApiCompare"]


def _top_level(events: list[dict], cats: tuple[str, ...]) -> list[dict]:
    """The events of ``cats`` that no other such event of their thread holds, a ProfilerStep#N marker aside (its
    children are top-level, reference-2 §2.3): nesting by start and end, by hand."""
    lanes: dict[tuple, list[dict]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in cats:
            lanes.setdefault((e["pid"], e["tid"]), []).append(e)
    top = []
    for lane in lanes.values():
        lane.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        open_: list[dict] = []
        for e in lane:
            while open_ and float(e["ts"]) >= float(open_[-1]["ts"]) + float(open_[-1]["dur"]):
                open_.pop()
            if "ProfilerStep#" not in e["name"] and all("ProfilerStep#" in o["name"] for o in open_):
                top.append(e)
            open_.append(e)
    return top


def test_operator_match_line_says_it_counts_top_level_operators(samples, caplog):
    """Reference pair 4 (PARAM AlexNet on a GPU against the level-1 NPU text export): "Operators matched: 0/2 base,
    0/115 comparison", of a GPU trace with 367 host ops (cpu_op, user_annotation), left the user to guess what the
    2 counted: the top-level operators the operator sheets pair, here one annotation holding the whole run and a
    cudaDeviceSynchronize after it. The line and the Summary's "operator match rate" Detail now say "top-level
    operators". Counted from the raw files: the events no other host event of their thread holds (a ProfilerStep#N
    marker's children taken as top-level), 2 and 115."""
    import gzip
    import json
    import logging

    gpu = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    npu = samples / TEXT.format(1)
    with gzip.open(gpu, "rt", encoding="utf-8") as fh:
        events = json.load(fh)["traceEvents"]
    assert sum(e.get("cat") in ("cpu_op", "user_annotation") for e in events) == 367
    top = _top_level(events, ("cpu_op", "user_annotation", "cuda_runtime"))
    assert [e["name"] for e in top] == ["[param|cuda]", "cudaDeviceSynchronize"]
    trace = json.loads((npu / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    assert len(_top_level(trace, ("cpu_op",))) == 115
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(gpu), str(npu), enable_operator_compare=True)
    assert [m for m in caplog.messages if "matched:" in m] == [
        "Top-level operators matched: 0/2 base, 0/115 comparison"]
    assert res.frames["match_rate"].iloc[0][["what", "base_total", "comparison_total"]].tolist() == [
        "operators", 2, 115]
    row = res.guards.set_index("Check").loc["operator match rate"]
    # the advice of a wrapper on one side (every kernel is launched inside [param|cuda]:
    # tests/test_one_sided_wrapper.py), not "try the op_name_map option", which cannot pair it
    hint = ("the base side's operator device time lies under [param|cuda] (100.0%), one top-level op that the "
            "comparison side has no op of, so none of the ops inside it is paired: to compare them, run again with "
            "the transparent_op option: --transparent_op '[param|cuda]'")
    assert row.tolist() == ["warn", 0.0, 0.0, "matched / compared top-level operators per side (operator comparison); "
                                              f"warn below 60%; {hint}"]
    # the log line of compare() names the option as its keyword (Face.words), the Detail as the CLI's flag
    said = hint.replace("--transparent_op '[param|cuda]'", "transparent_op='[param|cuda]'")
    assert [m for m in caplog.messages if m.startswith("  - operator match rate")] == [
        "  - operator match rate (0.0%): matched / compared top-level operators per side (operator comparison); warn "
        f"below 60%; {said}"]


def test_missing_communication_json_names_its_side_and_what_reads_it(capsys, samples, reference_outputs, tmp_path):
    """Reference pair 2 (Level0 text exports of ranks 0 and 1): the original's "The file communication.json does
    not exist.", twice, after its folder, named neither the side nor what the file is for, and nothing else did:
    neither side has a bandwidth, so the console has no bandwidth column (the reference console's), and a
    rank-by-rank run shows no console table at all. Each line now names its side and the RDMA / SDMA Bandwidth
    that Model Profiling Time Distribution reads from the file, and says a Level0 export writes none and which levels
    do (their profiler_info_N.json say Level0). One input on both sides says it once, of both; the note survives
    pickling (a large pair loads in two processes). A level-1 export without the file has no Level0 clause."""
    import json
    import pickle
    import shutil

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    ranks = [samples / f"{PYTORCH}/text/level0/rank{r}_ascend_pt" for r in (0, 1)]
    for r, rank in enumerate(ranks):
        assert not (rank / "ASCEND_PROFILER_OUTPUT" / "communication.json").exists()
        info = json.loads((rank / f"profiler_info_{r}.json").read_text(encoding="utf-8"))
        assert info["config"]["experimental_config"]["_profiler_level"] == "Level0"
    ref = (reference_outputs / "README.md").read_text(encoding="utf-8")
    assert ref.count("[WARNING] The file communication.json does not exist.\n") == 4  # pair 2's two runs, two each
    lost = ("no RDMA or SDMA Bandwidth, which the Model Profiling Time Distribution table reads from it; a Level0 "
            "export writes none, Level1 or Level2 writes it)")

    def said(err: str) -> list[str]:
        return [line.split("] ", 1)[1] for line in err.splitlines() if "communication.json" in line]

    code, out, err = run_inproc(capsys, "-bp", str(ranks[0]), "-d", str(ranks[1]), "-o", str(tmp_path / "one"),
                                "--enable_profiling_compare")
    assert code == 0 and said(err) == [
        f"{ranks[0]}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. (base side: {lost}",
        f"{ranks[1]}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. (comparison side: {lost}"]
    assert "Bandwidth" not in out  # no column: neither side has one, as the reference console
    code, _, err = run_inproc(capsys, "-bp", str(ranks[0]), "-d", str(ranks[0]), "-o", str(tmp_path / "self"),
                              "--enable_profiling_compare")
    assert code == 0 and said(err) == [
        f"{ranks[0]}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. (both sides: {lost}"]
    level1 = samples / TEXT.format(1)
    code, _, err = run_inproc(capsys, "-bp", str(level1.parents[1] / "level0"), "-d", str(level1.parents[1] / "level1"),
                              "-o", str(tmp_path / "ranks"), "--enable_profiling_compare")
    assert code == 0 and said(err) == [  # rank 1's, the same but for its path, is left out and counted
        f"rank 0: {ranks[0]}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. (base side: {lost}"]
    p = load_profile(str(ranks[0]), build_options(enable_profiling_compare=True)[0])
    (note,) = [w for w in p.warnings if "communication.json" in w]
    again = pickle.loads(pickle.dumps(note))
    assert (str(again), again.of_side("base side")) == (str(note), note.of_side("base side"))
    assert str(note) == f"{ranks[0]}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. ({lost}"
    copy = tmp_path / "level1" / "rank0_ascend_pt"
    shutil.copytree(level1, copy)
    (copy / "ASCEND_PROFILER_OUTPUT" / "communication.json").unlink()
    code, out, err = run_inproc(capsys, "-bp", str(level1), "-d", str(copy), "-o", str(tmp_path / "l1"),
                                "--enable_profiling_compare")
    assert code == 0 and said(err) == [
        f"{copy}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. (comparison side: no RDMA or "
        "SDMA Bandwidth, which the Model Profiling Time Distribution table reads from it)"]
    assert "Comparison row: no usable communication.json, so its SDMA Bandwidth 0.000GB/s is not a measurement." \
        in out


def test_gpu_side_without_memory_is_said_once(samples, caplog):
    """Reference pair 4's GPU base recorded no memory (no [memory] event at all, counted in the raw trace). A run
    with the memory comparison said it twice: the original's "Gpu profiling data doesn't contain memory info."
    (INFO, of the time breakdown) and the memory comparison's "Can't find any memory event in the file: ..." (a
    warning that says why and what to do). The original says the first alone, as it gives the second for
    directory inputs only (reference-1 §4, §5.11) and a GPU trace is a file: ours says the second where the
    memory comparison runs, the first where it does not, and where it leaves its sheets out because the other side
    has no torch op (the MindSpore excerpt), so that the fact is said once in each run."""
    import gzip
    import json
    import logging
    from pathlib import Path

    gpu = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    npu = samples / TEXT.format(1)
    with gzip.open(gpu, "rt", encoding="utf-8") as fh:
        assert not [e for e in json.load(fh)["traceEvents"] if e.get("name") == "[memory]"]
    info = ("INFO", f"{gpu}: Gpu profiling data doesn't contain memory info. (base side)")
    warned = ("WARNING", f"Can't find any memory event in the file: {gpu} (base side: no memory was recorded: "
                         "profile_memory=True records it)")
    ms = Path(__file__).resolve().parent / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
    for comparison, flags, said in (
            (npu, {}, [warned]),
            (npu, {"enable_profiling_compare": True}, [info]),
            (npu, {"enable_profiling_compare": True, "enable_memory_compare": True}, [warned]),
            (npu, {"enable_memory_compare": True}, [warned]),
            (ms, {}, [info])):  # no torch op in the MindSpore export: no memory sheet, no memory line
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            compare(str(gpu), str(comparison), **flags)
        got = [(r.levelname, r.getMessage()) for r in caplog.records]
        assert [(lv, m) for lv, m in got if str(gpu) in m and "memory" in m] == said, flags


def test_kernel_compare_without_kernels_keeps_both_of_the_originals_sentences(samples, reference_outputs, caplog):
    """"Failed to enable enable_kernel_compare,kernel_details.csv ..." followed by "Can't find any valid kernels in
    the file: ..." read as one fact said twice, but both are the original's and it prints both: reference pair 2
    (two Level0 exports, whose kernels have no Type) lists the pair of lines for each side. Both stay, the first
    once for the two sides (naming them), then the second of each side, in the reference's order."""
    import logging

    ref = (reference_outputs / "README.md").read_text(encoding="utf-8")
    pair2 = ref[ref.index("## 2. npu-text-l0-rank0-vs-rank1"):ref.index("## 3. ")]
    start = pair2.index("```\n") + 4  # the all-comparisons run's ERROR/WARNING lines
    lines = pair2[start:pair2.index("```", start)].splitlines()
    kernel = [line for line in lines if "kernel" in line]
    heads = [line.split("] ", 1)[1].split(",")[0].split(":")[0] for line in kernel]
    assert heads == ["Failed to enable enable_kernel_compare", "Can't find any valid kernels in the file"] * 2
    ranks = [samples / f"{PYTORCH}/text/level0/rank{r}_ascend_pt" for r in (0, 1)]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(ranks[0]), str(ranks[1]), enable_kernel_compare=True)
    said = [m for m in caplog.messages if "kernel" in m]
    advice = "Please make sure that the profiling data is greater than level0 and aic_metrics=PipeUtilization."
    assert said == [
        "Failed to enable enable_kernel_compare,kernel_details.csv gives no kernel a Type (each is N/A or empty, as "
        f"a Level0 export writes it). Inputs: base {ranks[0]} and comparison {ranks[1]}.",
        *(f"Can't find any valid kernels in the file: {r}. {advice}" for r in ranks)]
    assert all(f"Can't find any valid kernels in the file: msinsight/test/data/pytorch/text/level0/rank{r}_ascend_pt. "
               f"{advice}" in pair2 for r in (0, 1))
