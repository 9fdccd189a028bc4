"""One input given under two paths (``-bp run -d ./run``, an absolute and a relative path of one file) at one step is
one input on both sides: the comparators' notices say it once, "(both sides)", as the loaders' notes of the same run
do; they said "(base side)" and "(comparison side)" in two lines that differed by the path's spelling."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from cliutil import run_inproc

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError

SMALL = Path(__file__).parent / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
#: the excerpt records no [memory] event (profile_memory off), which the memory comparison, asked for, says
NO_MEMORY = ("Can't find any memory event in the file: {} (both sides: no memory was recorded: profile_memory=True "
             "records it)")


def test_one_trace_under_two_paths_gets_one_memory_notice_of_both_sides(capsys: pytest.CaptureFixture,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.chdir(SMALL.parent)
    code, _, err = run_inproc(capsys, "-bp", SMALL.name, "-d", f"./{SMALL.name}", "--enable_memory_compare",
                              "--enable_operator_compare", "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert [line.split("] ", 1)[1] for line in err.splitlines() if "memory event" in line] == [
        NO_MEMORY.format(SMALL.name)]


def test_absolute_and_relative_path_of_one_trace_in_compare(caplog: pytest.LogCaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """compare() of the excerpt by its absolute path and by a relative one: one notice, naming the base's path; the
    result keeps each side's path as given."""
    monkeypatch.chdir(SMALL.parent.parent)
    relative = os.path.join(SMALL.parent.name, SMALL.name)
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(SMALL), relative, enable_memory_compare=True, enable_operator_compare=True)
    assert [m for m in caplog.messages if "memory event" in m] == [NO_MEMORY.format(SMALL)]
    assert (res.base.path, res.comparison.path) == (str(SMALL), relative)


def test_one_export_through_a_linked_folder_gets_one_note_of_both_sides(capsys: pytest.CaptureFixture,
                                                                        samples: Path, tmp_path: Path) -> None:
    """The level0 text export given through a link to its parent folder (``lnk/rank0_ascend_pt``, with --force) and
    by its own path: its loader's note on the missing communication.json and the time breakdown's on the absent
    PMU columns are each one line "(both sides)" naming the base's path; the note said "(base side)" and
    "(comparison side)" (it names files by absolute path, which differ by the link) and, before session 73, so did
    the breakdown's."""
    level0 = samples / "msinsight/test/data/pytorch/text/level0"
    (tmp_path / "lnk").symlink_to(level0, target_is_directory=True)
    base = tmp_path / "lnk" / "rank0_ascend_pt"
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(level0 / "rank0_ascend_pt"), "--force",
                              "-o", str(tmp_path / "out"))
    assert code == 0, err
    said = [line.split("] ", 1)[1] for line in err.splitlines()
            if "communication.json does not exist" in line or "categorised computing rows" in line]
    assert said == [
        f"{base}/ASCEND_PROFILER_OUTPUT: The file communication.json does not exist. (both sides: no RDMA or SDMA "
        "Bandwidth, which the Model Profiling Time Distribution table reads from it; a Level0 export writes none, "
        "Level1 or Level2 writes it)",
        f"{base}: the categorised computing rows (Cube, Vector, FA, Conv, Matmul, ...) are absent: kernel_details.csv "
        "has no PMU columns (both sides: a Level0 export records none: Level1 or Level2 with aic_metrics "
        "PipeUtilization does)"]


ALEXNET = Path(__file__).parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def test_match_rate_line_of_one_input_says_its_rate_once(capsys: pytest.CaptureFixture,
                                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The match-rate line gave one input's rate twice, "Modules matched: 55/55 base, 55/55 comparison" (the AlexNet
    H200 excerpt against itself, and NPU pair 1's level1 export): it says it once, as the run's other notices do;
    two inputs keep a rate per side."""
    from msprof_compare.compare.operators import match_note

    assert match_note("modules", 55, 55, 55, one=True) == ("Modules matched: 55/55 both sides", False)
    assert match_note("modules", 3, 4, 5) == ("Modules matched: 3/4 base, 3/5 comparison", False)
    assert match_note("operators", 7, 9, 9, 10, one=True) == (
        "Top-level operators matched: 7/9 both sides (a pair with more than 10 kernels on a side counted as the "
        "operators inside it, as max_kernel_num asks; an unpaired operator stays whole)", False)
    monkeypatch.chdir(ALEXNET.parent)
    for flags in ([], ["--disable_module"]):  # the module rate, then the top-level operators'
        code, _, err = run_inproc(capsys, "-bp", ALEXNET.name, "-d", f"./{ALEXNET.name}", "--enable_operator_compare",
                                  "-o", str(tmp_path / "out"), *flags)
        assert code == 0, err
        said = [line.split("] ", 1)[1] for line in err.splitlines() if " matched: " in line]
        assert len(said) == 1 and said[0].endswith(" both sides") and "base" not in said[0], said
        matched, total = said[0].split(": ", 1)[1].removesuffix(" both sides").split("/")
        assert matched == total  # the one input pairs every op with itself


def test_a_compare_of_one_input_under_two_paths_never_renames_the_loaded_profile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparators name the comparison by the base's path (one line "(both sides)"), but the loaded profile keeps
    the path as typed all along: the run renamed it for its length, so a comparator (or a second run sharing it)
    reading its path read the base's."""
    from msprof_compare import api
    from msprof_compare.api import run_comparators
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    monkeypatch.chdir(SMALL.parent.parent)
    relative = os.path.join(SMALL.parent.name, SMALL.name)
    opts, _ = build_options(enable_operator_compare=True)
    base, comparison = (load_profile(p, opts) for p in (str(SMALL), relative))
    seen = []

    def spy(ctx: api.RunContext) -> list:
        seen.append((base.path, comparison.path, ctx.comparison.path, ctx.side(ctx.comparison)))
        return []

    monkeypatch.setattr(api, "comparators", lambda _opts: [("spy", spy)])
    result = run_comparators(base, comparison, opts)
    assert seen == [(str(SMALL), relative, str(SMALL), "both sides")]
    assert result.base is base and result.comparison is comparison
    assert comparison.path == relative


def test_one_export_under_two_paths_not_utf8_gets_one_note_of_both_sides(samples: Path, tmp_path: Path) -> None:
    """A copy of the level0 text export in a folder whose name is not UTF-8 (Linux allows any bytes), given as
    ``bad\\xff/rank0_ascend_pt`` and ``./bad\\xff/rank0_ascend_pt``: the time breakdown's note on the absent PMU
    columns is one line "(both sides)", as under a UTF-8 name. The run renamed both loaded profiles to their path's
    text (\\xNN escapes) before testing them for one input, which looked up files of that text, found none and
    said the note twice, "(base side)" and "(comparison side)". The same-input warning names the path as typed,
    as under a UTF-8 name. The workbook's captions keep the paths as text.
    Run as a user would, in a fresh interpreter: the loader's own note holds the name's bytes as Python keeps them
    (lone surrogates, which the CLI's log escapes), and a test log holding them fails pytest-xdist's report."""
    import shutil
    import subprocess
    import sys

    import openpyxl

    folder = os.fsencode(tmp_path) + b"/bad\xff"
    try:
        os.mkdir(folder)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
                    os.fsdecode(folder + b"/rank0_ascend_pt"))
    base = os.fsdecode(b"bad\xff/rank0_ascend_pt")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", base, "-d", f"./{base}",
                           "--enable_profiling_compare", "-o", "out"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, errors="replace", timeout=300)
    assert proc.returncode == 0, proc.stderr
    # the typed path, as a UTF-8 name's (`run` of `-bp run -d ./run`); it named the absolute path, whose escaped
    # text the log's renaming to the typed paths did not match
    assert [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "same input" in line] == [
        "Base and comparison are the same input (bad\\xff/rank0_ascend_pt): every difference will be zero."]
    assert [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "categorised computing rows" in line] == [
        "bad\\xff/rank0_ascend_pt: the categorised computing rows (Cube, Vector, FA, Conv, Matmul, ...) are absent: "
        "kernel_details.csv has no PMU columns (both sides: a Level0 export records none: Level1 or Level2 with "
        "aic_metrics PipeUtilization does)"]
    ws = openpyxl.load_workbook(next((tmp_path / "out").glob("*.xlsx")))["OverallMetrics"]
    assert [v for v in next(ws.iter_rows(max_row=1, values_only=True)) if v] == [
        "Base Profiling: bad\\xff/rank0_ascend_pt", "Comparison Profiling: ./bad\\xff/rank0_ascend_pt"]


def test_gate_refusal_of_one_input_under_two_paths_not_utf8_names_both_sides(samples: Path, tmp_path: Path) -> None:
    """heatMap's trace_view.json (no Overlap Analysis lane, so no E2E time: ``test_gate_json``'s input) copied into
    a folder whose name is not UTF-8 and given as ``bad\\xff/trace_view.json`` and ``bad\\xff/./trace_view.json``:
    the gate's refusal names both sides, as it does under a UTF-8 name
    (``test_gate_json::test_gate_refusal_of_one_input_under_two_paths_names_both_sides``) and as the comparators'
    lines of such a run do. The gate asked the file system about the result's paths, which are the names' text
    (\\xNN escapes), found no file and said "(base side)". A fresh interpreter, as the test above says why."""
    import shutil
    import subprocess
    import sys

    from test_gate_json import HEATMAP

    folder = os.fsencode(tmp_path) + b"/bad\xff"
    try:
        os.mkdir(folder)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    shutil.copy(samples / HEATMAP, os.fsdecode(folder + b"/trace_view.json"))
    base = os.fsdecode(b"bad\xff/trace_view.json")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", base, "-d",
                           os.fsdecode(b"bad\xff/./trace_view.json"), "--enable_profiling_compare",
                           "--fail_on_regression", "5", "-o", "out"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, errors="replace", timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "no E2E time" in line] == [
        "error: bad\\xff/trace_view.json: no E2E time (no device activity or Overlap Analysis data), so "
        "--fail_on_regression cannot judge the run (both sides)"]


LEVEL0 = "msinsight/test/data/pytorch/text/level0"


def test_step_note_of_one_export_under_two_paths_says_its_scope_once(capsys: pytest.CaptureFixture, samples: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    """A step given to one text export under two paths (``rank0_ascend_pt``, ``./rank0_ascend_pt``): the note that
    the time breakdown covers the whole profile says its scope once, "(both sides whole profile)", as the other
    notes of one input say their figures ("(both sides 1)"); it said "(base whole profile, comparison whole
    profile)". Two exports keep a figure per side."""
    monkeypatch.chdir(samples / LEVEL0)
    title = "The time breakdown covers the whole profile, not the step asked for"
    steps = ("--base_step", "50", "--comparison_step", "50", "--enable_profiling_compare")
    code, _, err = run_inproc(capsys, "-bp", "rank0_ascend_pt", "-d", "./rank0_ascend_pt", *steps,
                              "-o", str(tmp_path / "one"))
    assert code == 0, err
    assert [line.split("] ", 1)[1].split(": ", 1)[0] for line in err.splitlines() if title in line] == [
        f"{title} (both sides whole profile)"]
    level1 = str(samples / LEVEL0.replace("level0", "level1") / "rank0_ascend_pt")
    code, _, err = run_inproc(capsys, "-bp", "rank0_ascend_pt", "-d", level1, *steps, "-o", str(tmp_path / "two"))
    assert code == 0, err
    assert [line.split("] ", 1)[1].split(": ", 1)[0] for line in err.splitlines() if title in line] == [
        f"{title} (base whole profile, comparison whole profile)"]


def test_gate_of_one_trace_under_two_paths_names_both_sides_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate of a result compared without the time breakdown makes one for itself (``gate.gate_frames``); for the
    excerpt under two paths its refusal (4 kernels, every one an ncclDevKernel collective: no E2E time to judge)
    said "(base side: ...)" where the run's own breakdown, asked for, says "(both sides: ...)": the same words
    now, after a slim copy too."""
    monkeypatch.chdir(SMALL.parent)
    said = (f"{SMALL.name}: The profiling data does not contain kernel running data. (both sides: its only kernels "
            "are 4 collective(s) (communication), no computing kernel)")
    with pytest.raises(ProfileError) as info:  # the run's own breakdown (the --fail_on_regression run's)
        compare(SMALL.name, f"./{SMALL.name}", enable_operator_compare=True, fail_on_regression=5)
    assert str(info.value) == said
    res = compare(SMALL.name, f"./{SMALL.name}", enable_operator_compare=True)
    assert res.regression_gate(5) == (1, f"error: {said}")
    res = compare(SMALL.name, f"./{SMALL.name}", enable_operator_compare=True)
    assert res.slim().regression_gate(5) == (1, f"error: {said}")
