"""What a new user read in a first hour with the tool (session 66's user walk: a GPU job moved to an Ascend NPU,
two NPU runs, GPU PyTorch against MindSpore), and the words that left them guessing: each test pins the new text
on a real sample and checks that what it says holds there."""

from __future__ import annotations

import pandas as pd
from cliutil import run_inproc

from msprof_compare import cli, compare

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
