"""Every error of one side's input names its side (session 70, left70a), as the loaders' warnings do since session
69: "(base side)", "(comparison side)" or "(both sides)" after the message, before the hint ("(comparison side:
HINT)"). The line named the file alone, so two inputs of one name in different folders (rank 0 against rank 1 of a
job, two runs' kernel_details.csv) left the user to read paths to know which of -bp / -d to fix. Each case is
pinned whole, on both sides, on the CLI and in the API's exception message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc

import msprof_compare
from msprof_compare.errors import OutOfMemory, ProfileError

DATA = Path(__file__).parent / "data"
TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank{}_ascend_pt"
SWAPS = (("base side", True), ("comparison side", False))


def _one_error(capsys: pytest.CaptureFixture, good: Path | str, bad: Path | str, bad_is_base: bool,
               out: Path) -> str:
    """The run's one error line, ``bad`` given as the base (``-bp``) or as the comparison (``-d``)."""
    base, comp = (bad, good) if bad_is_base else (good, bad)
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out))
    lines = error_lines(err)
    assert code == 1 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(("side", "bad_is_base"), SWAPS)
def test_a_missing_file_names_its_side(capsys, tmp_path, side, bad_is_base):
    """No hint: the side alone closes the line."""
    missing = tmp_path / "run1" / "trace.json"
    line = _one_error(capsys, TIMESFORMER, missing, bad_is_base, tmp_path / "out")
    assert line == f"error: {missing}: no such file or directory ({side})"


@pytest.mark.parametrize(("side", "bad_is_base"), SWAPS)
def test_a_truncated_trace_names_its_side_before_the_hint(capsys, tmp_path, side, bad_is_base):
    """The timesformer excerpt cut after its first 1,000 bytes (inside its event list): the side, then the hint,
    in one pair of parentheses."""
    cut = tmp_path / "cut.json"
    cut.write_bytes(TIMESFORMER.read_bytes()[:1000])
    line = _one_error(capsys, TIMESFORMER, cut, bad_is_base, tmp_path / "out")
    assert line.startswith(f"error: {cut}: truncated JSON (")
    assert line.endswith(f") ({side}: the file was probably cut short while copying or writing)"), line


def test_one_bad_file_on_both_sides_says_both(capsys, tmp_path):
    """The same cut file as -bp and -d, or under two paths of one file (``x`` and ``./x``): "both sides", once;
    the error names the base's path, as the loader reads the base first."""
    cut = tmp_path / "cut.json"
    cut.write_bytes(TIMESFORMER.read_bytes()[:1000])
    for other in (cut, tmp_path / "." / "cut.json"):
        code, _, err = run_inproc(capsys, "-bp", str(cut), "-d", str(other), "-o", str(tmp_path / "out"))
        lines = error_lines(err)
        assert code == 1 and len(lines) == 1, err
        assert lines[0].startswith(f"error: {cut}: truncated JSON (") and lines[0].endswith(
            ") (both sides: the file was probably cut short while copying or writing)"), lines


@pytest.mark.parametrize(("side", "bad_is_base"), SWAPS)
def test_a_trace_without_kernels_names_its_side(capsys, tmp_path, side, bad_is_base):
    """A trace of no event (``{"traceEvents": []}``) is refused once loaded (``api._check_usable``)."""
    empty = tmp_path / "empty.json"
    empty.write_text('{"traceEvents": []}')
    line = _one_error(capsys, TIMESFORMER, empty, bad_is_base, tmp_path / "out")
    assert line == (f"error: {empty}: no GPU kernel, memcpy or memset events in the trace ({side}: record it with "
                    "torch.profiler.ProfilerActivity.CUDA)")


@pytest.mark.parametrize(("side", "bad_is_base"), SWAPS)
def test_a_breakdown_refusal_names_its_side(capsys, tmp_path, side, bad_is_base):
    """The timesformer excerpt with each of its 62 kernels' args.stream set to -1: no computing kernel carries a
    stream, so the time breakdown (``gpu_breakdown``, run by the comparators after loading) has no E2E window and
    refuses the side."""
    doc = json.loads(TIMESFORMER.read_text())
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) == 62
    for e in kernels:
        e["args"]["stream"] = -1
    bad = tmp_path / "nostream.json"
    bad.write_text(json.dumps(doc))
    line = _one_error(capsys, TIMESFORMER, bad, bad_is_base, tmp_path / "out")
    assert line == (f"error: {bad}: The profiling data does not contain kernel running data. ({side}: no computing "
                    "kernel carries a usable stream id: args.stream of 62 kernel(s) is not an integer of 0 or more "
                    "(the first: -1))")


@pytest.mark.parametrize(("side", "bad_is_base"), SWAPS)
def test_a_truncated_csv_names_its_side(capsys, samples, tmp_path, side, bad_is_base):
    """Ranks 0 and 1 of the msinsight level1 text job, rank 1's kernel_details.csv cut to its first 5,000 bytes
    (inside its row 8, whose 46 fields stop at the 8th): the folders share every file name but the rank's."""
    good, bad = tmp_path / "a" / "rank0_ascend_pt", tmp_path / "b" / "rank1_ascend_pt"
    shutil.copytree(samples / LEVEL1.format(0), good)
    shutil.copytree(samples / LEVEL1.format(1), bad)
    kd = bad / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    kd.write_bytes(kd.read_bytes()[:5000])
    line = _one_error(capsys, good, bad, bad_is_base, tmp_path / "out")
    assert line == f"error: {kd}: truncated: the last row has 8 of 46 fields and no line end ({side})"


def test_a_rank_folder_error_names_rank_and_side(capsys, samples, tmp_path):
    """Two folders of ranks 0 and 1 (level1), the comparison's rank 1 kernel_details.csv cut as above: the rank
    first, the side last."""
    for job in ("jb", "jc"):
        for rank in (0, 1):
            shutil.copytree(samples / LEVEL1.format(rank), tmp_path / job / f"rank{rank}_ascend_pt")
    kd = tmp_path / "jc" / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    kd.write_bytes(kd.read_bytes()[:5000])
    code, _, err = run_inproc(capsys, "-bp", str(tmp_path / "jb"), "-d", str(tmp_path / "jc"),
                              "-o", str(tmp_path / "out"))
    assert code == 1 and error_lines(err) == [
        f"error: rank 1: {kd}: truncated: the last row has 8 of 46 fields and no line end (comparison side)"], err


def test_the_api_message_names_the_side(samples, tmp_path):
    """``compare()`` and ``compare_ranks()`` raise ``ProfileError`` whose message says the side as the CLI's
    line does; ``.side`` holds it. compare_ranks: the msinsight level1 text job (ranks 0 and 1) against an empty
    folder, each way."""
    missing = tmp_path / "nope"
    for args, side in (((missing, TIMESFORMER), "base side"), ((TIMESFORMER, missing), "comparison side")):
        with pytest.raises(ProfileError) as info:
            msprof_compare.compare(*args)
        assert str(info.value) == f"{missing}: no such file or directory ({side})"
        assert info.value.side == side
    empty = tmp_path / "empty"
    empty.mkdir()
    job = samples / LEVEL1.format(0).rsplit("/", 1)[0]
    for args, side in (((job, empty), "comparison side"), ((empty, job), "base side")):
        with pytest.raises(ProfileError) as info:
            msprof_compare.compare_ranks(*args)
        assert str(info.value) == (f"{empty}: holds no profiling directory or trace of a rank ({side}: pass a folder "
                                   "holding rank0_ascend_pt, rank1_ascend_pt, ... or one Kineto trace per rank)")


def test_the_other_input_of_a_folder_of_ranks_names_its_side(capsys, samples, tmp_path):
    """A folder of ranks against a path that does not exist: the missing path's error (read before the folder's
    refusal) names the side it was given as."""
    job = tmp_path / "job"
    for rank in (0, 1):
        shutil.copytree(samples / LEVEL1.format(rank), job / f"rank{rank}_ascend_pt")
    missing = tmp_path / "nope"
    for args, side in ((("-bp", job, "-d", missing), "comparison side"), (("-bp", missing, "-d", job), "base side")):
        code, _, err = run_inproc(capsys, *map(str, args), "-o", str(tmp_path / "out"))
        assert code == 1 and error_lines(err) == [f"error: {missing}: no such file or directory ({side})"], err


def test_out_of_memory_names_the_side(monkeypatch, capsys, tmp_path):
    """Memory running out while one input loads: the line names the input, then its side, then the advice; the
    API's ``OutOfMemory`` message is that line without the advice, its side included (``OutOfMemory.said``: the CLI
    reads ``.side`` itself, so only the API's message showed it lost)."""
    from msprof_compare.loaders import kineto

    real = kineto.load
    bad = tmp_path / "big.json"
    shutil.copy(TIMESFORMER, bad)

    def load(layout, *args, **kwargs):
        if Path(layout.trace_path) == bad:
            raise MemoryError
        return real(layout, *args, **kwargs)

    monkeypatch.setattr(kineto, "load", load)
    for bad_is_base, side in ((True, "base side"), (False, "comparison side")):
        base, comp = (bad, TIMESFORMER) if bad_is_base else (TIMESFORMER, bad)
        code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(tmp_path / "out"))
        lines = error_lines(err)
        assert code == 1 and len(lines) == 1, err
        assert lines[0].startswith(f"error: {bad}: out of memory while loading it ({side}); a comparison needs "), lines
        with pytest.raises(OutOfMemory) as info:
            msprof_compare.compare(str(base), str(comp))
        assert str(info.value) == f"{bad}: out of memory while loading it ({side})"
        assert info.value.side == side
