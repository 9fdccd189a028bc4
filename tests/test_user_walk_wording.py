"""What a new user read in a first hour with the tool (session 66's user walk: a GPU job moved to an Ascend NPU,
two NPU runs, GPU PyTorch against MindSpore), and the words that left them guessing: each test pins the new text
on a real sample and checks that what it says holds there."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from cliutil import error_lines, run_inproc

from msprof_compare import cli, compare
from msprof_compare.errors import UsageError

REPO = Path(__file__).resolve().parents[1]
SAMPLE_BASE = REPO / "sample_data" / "bert-small_h100.json.gz"
SAMPLE_COMP = REPO / "sample_data" / "bert-small_mi300.json.gz"
PYTORCH = "msinsight/test/data/pytorch"
TEXT = PYTORCH + "/text/level{}/rank0_ascend_pt"


def test_step_help_says_a_text_export_keeps_its_whole_profile(capsys, samples, reference_outputs):
    """The step options' help says that a text export's OverallMetrics and waterfall cover the whole profile with a
    step too (the user asked for step 50 of two text exports and learnt it from a warning after the run). True on
    the original's pair 1: with --base_step / --comparison_step 50 the E2E Time is the reference workbook's, which
    the original wrote without a step, and so is the waterfall's."""
    said = ("(NPU data only; give both step options; the N of ProfilerStep#N; a text export's OverallMetrics and "
            "waterfall cover the whole profile even so, as in the original)")
    code, out, _ = run_inproc(capsys, "--help")
    flat = " ".join(out.split())
    assert code == 0 and flat.count(said) == 2  # --base_step and --comparison_step
    assert " ".join(cli.build_script_parser().format_help().split()).count(said) == 2
    ref = pd.read_excel(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                        sheet_name="OverallMetrics", header=2).set_index("Index")
    whole = ref.loc["E2E Time", ["Duration(ms)", "Duration(ms).1"]].tolist()
    assert whole == [136.581009, 129.862875]
    res = compare(str(samples / TEXT.format(1)), str(samples / TEXT.format(2)), base_step=50, comparison_step=50,
                  enable_profiling_compare=True)
    assert res.sheet("OverallMetrics").set_index("Index").loc[
        "E2E Time", ["Duration(ms)", "Duration(ms).1"]].tolist() == whole
    w = res.waterfall.set_index("Step")
    assert [w.loc["Base E2E", "Base(ms)"], w.loc["Comparison E2E", "Comparison(ms)"]] == whole


def test_output_naming_a_file_says_what_o_takes(capsys, samples, tmp_path, monkeypatch):
    """``-o afile``, an existing file without a report's suffix, was refused as "is a file, not a directory" alone,
    which left the user to guess that -o may name the report file too. The line now says so (the report's own
    suffix: .json for the JSON report), and "give a directory" alone where two folders of ranks are compared, whose
    reports need a folder; nothing is written either way. Following the hint works: -o afile.xlsx writes there."""
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("mine")
    pair = ("-bp", str(SAMPLE_BASE), "-d", str(SAMPLE_COMP), "--enable_profiling_compare")
    code, _, err = run_inproc(capsys, *pair, "-o", "afile")
    assert code == 2 and error_lines(err) == [
        "error: output path afile is a file, not a directory; give a directory, or a name ending in .xlsx for the "
        "report file itself"]
    code, _, err = run_inproc(capsys, *pair, "-o", "afile", "--output_format", "json")
    assert code == 2 and error_lines(err) == [
        "error: output path afile is a file, not a directory; give a directory, or a name ending in .json for the "
        "report file itself"]
    ranks = (str(samples / PYTORCH / "text/level0"), str(samples / PYTORCH / "text/level1"))
    code, _, err = run_inproc(capsys, "-bp", ranks[0], "-d", ranks[1], "-o", "afile", "--enable_profiling_compare")
    assert code == 2 and error_lines(err) == ["error: output path afile is a file, not a directory; give a directory"]
    assert sorted(os.listdir(".")) == ["afile"] and Path("afile").read_text() == "mine"
    res = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_profiling_compare=True)
    with pytest.raises(UsageError, match=r"^output path afile is a file, not a directory; give a directory, or a "
                                         r"name ending in \.json for the report file itself$"):
        res.to_json("afile")
    code, _, err = run_inproc(capsys, *pair, "-o", "afile.xlsx")
    assert code == 0 and sorted(os.listdir(".")) == ["afile", "afile.xlsx"]


def test_step_check_of_two_db_exports_says_what_their_step_limits(samples):
    """Two DB exports compared on step 50: the Summary's "time breakdown of the steps" row read "ok" beside a Detail
    about text exports ("... of a text export cover the whole profile ..."), the other kind. It now says what the
    step does to these two: it limits OverallMetrics and the waterfall (and the gate, where one is asked). True on
    msinsight's level-1 /
    level-2 DB exports: each side's E2E Time lies inside its STEP_TIME row and is the step's by SQL (reference-1
    §7.1, §7.3: the span of the compute tasks, the communication ops and the tasks of no kernel type that start in
    the step: 137.919295 and 129.206402 ms; the busy span alone, 132.233522 and 124.219742 ms, passed the bound the
    test held before), and the text exports of the same runs keep their note."""
    from dbutil import sql

    from msprof_compare.compare import checks

    db = [samples / PYTORCH / f"db/level{n}/rank0_ascend_pt" for n in (1, 2)]
    res = compare(str(db[0]), str(db[1]), base_step=50, comparison_step=50, enable_profiling_compare=True)
    row = res.guards.set_index("Check").loc[checks.STEP_CHECK]
    assert row.tolist() == ["ok", "step 50", "step 50",
                            "both sides are DB exports, which limit OverallMetrics and the waterfall to the step, "
                            "as every other sheet (a text export's cover the whole profile, as the original's "
                            "OverallMetrics)"]
    e2e = res.sheet("OverallMetrics").set_index("Index").loc["E2E Time", ["Duration(ms)", "Duration(ms).1"]]
    kernel_types = ("KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV",
                    "PROFILING_ENABLE", "PROFILING_DISABLE")  # reference-1 §7.3.6: no part of the E2E span
    spans = ("SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO USING (globalTaskId) UNION ALL "
             "SELECT startNs, endNs FROM COMMUNICATION_OP UNION ALL SELECT t.startNs, t.endNs FROM TASK t "
             f"JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value NOT IN ({', '.join('?' * len(kernel_types))})")
    want = []
    for path, ms in zip(db, e2e.tolist(), strict=True):
        (dbfile,) = (path / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db")
        ((start, end),) = sql(dbfile, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")
        inside = [(s, e) for s, e in sql(dbfile, spans, kernel_types) if start <= s <= end]
        want.append((max(e for _, e in inside) - min(s for s, _ in inside)) / 1e6)
        assert ms <= (end - start) / 1e6  # 137.919 <= 151.889 ms, 129.206 <= 143.742 ms
    assert e2e.tolist() == pytest.approx(want, abs=1e-9) and want == pytest.approx([137.919295, 129.206402], abs=1e-9)
    text = compare(str(samples / TEXT.format(1)), str(samples / TEXT.format(2)), base_step=50, comparison_step=50,
                   enable_profiling_compare=True).guards.set_index("Check").loc[checks.STEP_CHECK]
    assert text["Status"] == "note" and text["Detail"].startswith("OverallMetrics and the waterfall of a text "
                                                                  "export cover")


def test_one_step_option_alone_is_named_as_each_face_takes_it(capsys, samples):
    """``--base_step 50`` without ``--comparison_step`` (the user's first try at a step of two NPU runs): the CLI said
    "Invalid param, base_step and comparison_step must be set at the same time.", the keywords bare, where its
    other option messages name the flag ("Invalid param, --max_kernel_num has to be greater than 3"). The CLI and
    the script now name the flags; compare() keeps the keywords, as the original's sentence. On msinsight's level-1
    and level-2 text exports, whose step 50 both hold: with both options the compare goes on."""
    pair = [str(samples / TEXT.format(n)) for n in (1, 2)]
    said = "Invalid param, --base_step and --comparison_step must be set at the same time."
    for option in ("--base_step", "--comparison_step"):
        code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], option, "50")
        assert code == 2 and error_lines(err) == [f"error: {said}"]
        assert cli.script_main([*pair, option, "50"]) == 2
        assert error_lines(capsys.readouterr().err) == [f"error: {said}"]
    code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--max_kernel_num", "3")
    assert code == 2 and error_lines(err) == ["error: Invalid param, --max_kernel_num has to be greater than 3"]
    with pytest.raises(UsageError) as info:
        compare(*pair, base_step=50)
    assert str(info.value) == "Invalid param, base_step and comparison_step must be set at the same time."
    assert compare(*pair, base_step=50, comparison_step=50, enable_api_compare=True).sheet_names


def test_kernel_compare_on_gpu_data_names_the_gpu_side(capsys, samples, tmp_path):
    """A GPU job against its NPU run (the original's pair 4, PARAM AlexNet against the level-1 text export): the
    original's "kernel compare only support between NPU data and NPU data." named no side, and the user, one of
    whose inputs is NPU data, had to guess which was meant. The line now names the GPU side (the base, here; the
    comparison, swapped; both, for the bundled GPU pair), INFO where the comparison was not asked for, a WARNING
    with --enable_kernel_compare, which then writes no workbook."""
    gpu = str(samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
    npu = str(samples / TEXT.format(1))
    said = "kernel compare only support between NPU data and NPU data."
    for base, comp, which, level in ((gpu, npu, "the base side is a GPU trace", "WARNING"),
                                     (npu, gpu, "the comparison side is a GPU trace", "WARNING"),
                                     (str(SAMPLE_BASE), str(SAMPLE_COMP), "both sides are GPU traces", "WARNING")):
        code, out, err = run_inproc(capsys, "-bp", base, "-d", comp, "--enable_kernel_compare", "-o", str(tmp_path))
        lines = [line.split("] ", 1)[1] for line in err.splitlines() if said in line]
        # asked alone, it ended the run on "No comparison produced any rows": the flags that take a GPU trace too
        flags = "--enable_profiling_compare, --enable_operator_compare, --enable_memory_compare, " \
                "--enable_communication_compare, --enable_api_compare"
        assert code == 0 and lines == [f"{said} ({which}; {flags} take GPU traces)"] and f"[{level}] {said}" in err
    assert os.listdir(tmp_path) == []  # no sheet, no workbook
    code, _, err = run_inproc(capsys, "-bp", gpu, "-d", npu, "--enable_api_compare", "--enable_kernel_compare",
                              "-o", str(tmp_path))
    assert code == 0 and f"[WARNING] {said} (the base side is a GPU trace)" in err
    code, _, err = run_inproc(capsys, "-bp", str(SAMPLE_BASE), "-d", str(SAMPLE_COMP), "-o", str(tmp_path))
    assert code == 0 and f"[INFO] {said} (both sides are GPU traces)" in err


def test_shape_check_names_the_side_without_shapes(samples):
    """The original's pair 4 (PARAM AlexNet on a GPU against the level-1 NPU text export), all comparisons on:
    the "input shapes of top operators" row said "no input shapes on one side (recorded without record_shapes,
    or not read: shapes are loaded only with the operator, memory or API comparison on)", naming no side, and
    its second reason could not hold in a run that read the shapes. It names the side and the reason this run
    tells. By the raw files: none of the GPU trace's 367 host ops (cpu_op, user_annotation) has an Input Dims
    arg, and 451 of the NPU trace_view.json's 860 cpu_op events have one with a digit."""
    import gzip
    import json

    gpu = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    npu = samples / TEXT.format(1)
    with gzip.open(gpu, "rt", encoding="utf-8") as fh:
        events = json.load(fh)["traceEvents"]
    host = [e for e in events if e.get("cat") in ("cpu_op", "user_annotation")]
    assert (len(host), sum("Input Dims" in e.get("args", {}) for e in host)) == (367, 0)
    trace = json.loads((npu / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    dims = [json.dumps(e.get("args", {}).get("Input Dims", [])) for e in trace if e.get("cat") == "cpu_op"]
    assert (len(dims), sum(any(ch.isdigit() for ch in d) for d in dims)) == (860, 451)
    check = "input shapes of top operators"
    row = compare(str(gpu), str(npu)).guards.set_index("Check").loc[check]
    assert row.tolist() == ["unknown", 0, 0, "no input shapes on the base side (recorded without record_shapes=True)"]
    row = compare(str(npu), str(gpu), enable_api_compare=True).guards.set_index("Check").loc[check]
    assert row["Detail"] == "no input shapes on the comparison side (recorded without record_shapes=True)"
    row = compare(str(gpu), str(npu), enable_profiling_compare=True).guards.set_index("Check").loc[check]
    assert row["Detail"] == ("no input shapes on either side (not read: shapes are loaded only with the operator, "
                             "memory or API comparison on)")


def test_shape_check_of_a_communication_run_says_a_kineto_trace_read_its_shapes(samples):
    """A run of the communication comparison alone: the Kineto loader reads the host ops' args there too (for RCCL's
    collective records), so a GPU trace without shapes was recorded without them, where the Detail said "not read"
    (review66c); an NPU export's shapes are not read in that run. The raw files: the PARAM AlexNet GPU trace's 367
    host ops hold no Input Dims with a digit (the test above), the bundled BERT-small H100 trace's 396 of 480
    do, and the level-1 NPU export's trace_view.json holds shapes that only the operator, memory and API
    comparisons read."""
    import gzip
    import json

    gpu = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    with gzip.open(SAMPLE_BASE, "rt", encoding="utf-8") as fh:
        host = [e for e in json.load(fh)["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")]
    shaped = sum(any(ch.isdigit() for ch in json.dumps(e.get("args", {}).get("Input Dims", []))) for e in host)
    assert (len(host), shaped) == (480, 396)
    check = "input shapes of top operators"
    row = compare(str(gpu), str(SAMPLE_BASE), enable_communication_compare=True).guards.set_index("Check").loc[check]
    assert row.tolist() == ["unknown", 0, 0, "no input shapes on the base side (recorded without record_shapes=True)"]
    row = compare(str(gpu), str(samples / TEXT.format(1)),
                  enable_communication_compare=True).guards.set_index("Check").loc[check]
    assert row["Detail"] == ("no input shapes on the base side (recorded without record_shapes=True) nor on the "
                             "comparison side (not read: shapes are loaded only with the operator, memory or API "
                             "comparison on)")


def test_step_note_names_the_gate_only_where_one_is_asked_and_as_each_face_spells_it(capsys, caplog, samples,
                                                                                      tmp_path):
    """The warning of a text export given a step read "OverallMetrics, the waterfall and the fail_on_regression gate
    of a text export cover the whole profile" on the command line, where the option is --fail_on_regression, and
    in runs that asked for no gate. It names the gate only where one is asked, as the CLI spells it on the command
    line and as the keyword for compare(); the workbook's Detail keeps the keyword (the result's text). On
    msinsight's level-1 / level-2 text exports, whose step 50 both hold (their E2E is the whole profile's:
    ``test_summary_and_gate_say_a_text_export_ignores_the_step``)."""
    import logging

    pair = [str(samples / TEXT.format(n)) for n in (1, 2)]
    lead = ("The time breakdown covers the whole profile, not the step asked for (base whole profile, comparison "
            "whole profile): ")
    step = ["--base_step", "50", "--comparison_step", "50", "--enable_profiling_compare"]
    for gate, made in (([], "OverallMetrics and the waterfall"),
                       (["--fail_on_regression", "1000"], "OverallMetrics, the waterfall and the --fail_on_regression "
                                                         "gate")):
        code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], *step, *gate, "-o", str(tmp_path / "out"))
        assert code == 0
        [line] = [e for e in err.splitlines() if lead in e]
        assert line.endswith(f"{lead}{made} of a text export cover the whole profile, as the original's "
                             "OverallMetrics (the step limits the operator, module, memory, API, KernelCompare and "
                             "communication sheets; KernelTypeCompare reads a text export's op_statistic.csv, which "
                             "holds no step ids); a DB export limits them to the step."), gate
    for gate, made in (({}, "OverallMetrics and the waterfall"),
                       ({"fail_on_regression": 1000}, "OverallMetrics, the waterfall and the fail_on_regression gate")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(*pair, base_step=50, comparison_step=50, enable_profiling_compare=True, **gate)
        [line] = [m for m in caplog.messages if m.startswith(lead)]
        assert line.startswith(f"{lead}{made} of a text export cover the whole profile"), gate
        assert res.guards.set_index("Check").loc["time breakdown of the steps", "Detail"].startswith(made)
