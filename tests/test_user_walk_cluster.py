"""What a user read walking the scenarios session 66's first user walk left out (GPU PyTorch against MindSpore, a
cluster job compared rank by rank under a CI gate, the Python API in a notebook), and the words that left them
guessing: each test pins the new text on a real sample and checks that what it says holds there."""

from __future__ import annotations

import os

from msprof_compare import compare
from tests.cliutil import error_lines, run_inproc

PYTORCH = "msinsight/test/data/pytorch"


def test_a_regressed_ranks_gate_block_names_its_rank_on_every_line(capsys, samples, tmp_path):
    """msinsight's two 2-rank text runs (level0 -> level1) under a 10 % gate: both ranks regress, and each prints
    its gate block. Only its first line named the rank ("rank 0: Performance regression: ..."), so the steps and
    contributors under it read as no rank's in a CI log, and a grep for "rank 1:" lost them, where every log line
    of a rank names it (README, "Each rank's log lines begin with `rank N:`"). Each line now begins with its rank,
    and the block is, line for line, the gate of that rank's pair compared alone."""
    text = samples / PYTORCH / "text"
    code, _, err = run_inproc(capsys, "-bp", str(text / "level0"), "-d", str(text / "level1"),
                              "-o", str(tmp_path / "out"), "--fail_on_regression", "10")
    assert code == 3
    assert error_lines(err) == ["error: --fail_on_regression 10: ranks 0, 1 regressed beyond the threshold"]
    said = [line for line in err.splitlines() if not line.startswith(("[", "error:"))]
    for rank in (0, 1):
        alone = compare(str(text / "level0" / f"rank{rank}_ascend_pt"),
                        str(text / "level1" / f"rank{rank}_ascend_pt"), fail_on_regression=10)
        status, message = alone.regression_gate(10)
        assert status == 3 and message.count("\n") >= 3  # the steps, the contributors' title and a contributor
        block = [line for line in said if line.startswith(f"rank {rank}: ")]
        assert block == [f"rank {rank}: {line}" for line in message.split("\n")]
    # step_trace_time.csv's Stage: 116251.182 -> 136581.009 us, +20.330 ms
    assert said[0].startswith("rank 0: Performance regression: E2E time 116.251 ms -> 136.581 ms (+20.330 ms, "
                              "+17.49%)")
    assert any(line.startswith("rank 1: Largest waterfall steps: Group 0 Communication (uncovered) +31.743 ms")
               for line in said)
    assert len(said) == sum(line.startswith(("rank 0: ", "rank 1: ")) for line in said)


def test_compare_ranks_shows_what_it_found_when_printed(samples):
    """A notebook cell holding ``compare_ranks(...)`` showed ``<msprof_compare.api.RankResults object at 0x...>``,
    though the call has read both folders: the repr now names them, the ranks to compare (``.units``), those not
    compared and the selection, as ``ranks()`` and the one-sided warning find them on msinsight's 2-rank runs."""
    from msprof_compare import compare_ranks, ranks

    text = samples / PYTORCH / "text"
    base, comp = str(text / "level0"), str(text / "level1")
    every = compare_ranks(base, comp)
    assert list(ranks(base)) == list(ranks(comp)) == [0, 1] == list(every.units)
    assert repr(every) == (f"RankResults(base={base!r}, comparison={comp!r}, units=[0, 1], not_compared=[], "
                           "rank_list=None)")
    some = compare_ranks(base, comp, rank_list="1,7")  # rank 7: in neither folder
    assert repr(some) == (f"RankResults(base={base!r}, comparison={comp!r}, units=[1], not_compared=[7], "
                          "rank_list=[1, 7])")
    assert [rank for rank, _ in some] == [1] and repr(some).count("units=[1]") == 1  # the same once iterated


def test_compare_ranks_logs_which_inputs_each_rank_compares_as_the_cli_does(capsys, caplog, samples, tmp_path):
    """In a notebook with logging on, a rank's lines began with its notices: the CLI's "rank 0: comparing BASE with
    COMPARISON" line was not logged, though README says compare_ranks' log lines are the CLI's. Both faces now log
    it before each rank, naming the rank's inputs that ranks() finds in each folder."""
    import logging

    from msprof_compare import compare_ranks, ranks

    text = samples / PYTORCH / "text"
    base, comp = str(text / "level0"), str(text / "level1")
    code, _, err = run_inproc(capsys, "-bp", base, "-d", comp, "-o", str(tmp_path / "out"),
                              "--enable_profiling_compare")
    assert code == 0
    cli_lines = [line.split("[INFO] ", 1)[1] for line in err.splitlines() if ": comparing " in line]
    # each rank's folder as the sample holds it (level0/rank0_ascend_pt, ...), not read back from ranks()
    expected = [f"rank {r}: comparing {os.path.join(base, f'rank{r}_ascend_pt')} with "
                f"{os.path.join(comp, f'rank{r}_ascend_pt')}" for r in (0, 1)]
    assert cli_lines == expected
    assert [ranks(folder) for folder in (base, comp)] == [
        {r: os.path.join(folder, f"rank{r}_ascend_pt") for r in (0, 1)} for folder in (base, comp)]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        for _rank, result in compare_ranks(base, comp, enable_profiling_compare=True):
            del result
    assert [m for m in caplog.messages if ": comparing " in m] == expected
    assert caplog.messages.index(expected[1]) > caplog.messages.index(expected[0]) + 1  # rank 0's lines between


def test_job_line_names_a_rank_one_folder_alone_holds(capsys, samples, tmp_path):
    """msinsight's level0 run (ranks 0 and 1) against a level1 run of which rank 0 alone was kept: rank 1 is warned
    about and not compared, but the job's line read "Job (slowest rank per side): ..." as the whole job's, though
    the rank left out may be its slowest (a --rank_list run's line says so of a listed rank not compared). It now
    names it, as --rank_list's does; its figures are rank 0's (README: 116.251 -> 136.581 ms), and the overview
    lists rank 1 as not compared, in the base alone."""
    import json
    import shutil

    text = samples / PYTORCH / "text"
    comp = tmp_path / "level1"
    shutil.copytree(text / "level1" / "rank0_ascend_pt", comp / "rank0_ascend_pt")
    out = tmp_path / "out"
    code, stdout, err = run_inproc(capsys, "-bp", str(text / "level0"), "-d", str(comp), "-o", str(out),
                                   "--enable_profiling_compare", "--output_format", "xlsx,json")
    assert code == 0
    assert f"Rank only in the base {text / 'level0'}, not compared: 1" in err
    job = "base rank 0 116.251 ms -> comparison rank 0 136.581 ms (+20.330 ms, +17.49%)"
    assert [line for line in stdout.splitlines() if line.startswith("Job")] == [
        f"Job (slowest rank per side, rank 1 not compared): {job}"]
    (overview,) = out.glob("performance_comparison_result_ranks_*.json")
    doc = json.loads(overview.read_text())
    assert [(r["rank"], r["only_in"]) for r in doc["not_compared"]] == [(1, "base")]
    assert [r["rank"] for r in doc["ranks"]] == [0]
    # the overview's row 2 says it before the job line, as a selection's "Ranks selected: ... (rank 1 not compared)"
    import openpyxl

    (book,) = out.glob("performance_comparison_result_ranks_*.xlsx")
    row2 = [c.value for c in openpyxl.load_workbook(book)["Ranks"][2] if c.value is not None]
    assert row2 == [f"Rank 1 not compared (one folder alone holds it)\nJob (slowest rank per side): {job}"]
    # with --rank_list the selection's words hold it, once
    code, stdout, _ = run_inproc(capsys, "-bp", str(text / "level0"), "-d", str(comp), "-o", str(tmp_path / "o2"),
                                 "--enable_profiling_compare", "--rank_list", "0,1")
    assert code == 0 and [line for line in stdout.splitlines() if line.startswith("Job")] == [
        f"Job (slowest rank per side of ranks 0, 1 selected, rank 1 not compared): {job}"]
