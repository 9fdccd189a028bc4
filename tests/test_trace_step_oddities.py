"""ProfilerStep# markers that give one id twice, or whose ranges overlap, are said by the trace loaders (as the DB
loader says such STEP_TIME rows); a step asked for that appears twice is the first in the file (reference-1
§3.5: the scan stops at the first match).

Cut at test time from real data: tests/data/npu/rank0_ascend_pt and its MindSpore layout (msinsight level1
sample, see the README there) with the sample's own ProfilerStep#50 event (trace_view.json of
msinsight/test/data/pytorch/text/level1/rank0_ascend_pt, its "Call stack" arg left out) and copies of it moved or
renamed; tests/data/kineto/mi300_rccl_generic_excerpt.pt.trace.json with copies of its ProfilerStep#15.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from msprof_compare.api import Options, load_profile
from msprof_compare.compare.steps import step_range

DATA = Path(__file__).parent / "data"
NPU = DATA / "npu" / "rank0_ascend_pt"
MINDSPORE = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
MI300 = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"

#: The level-1 sample's step marker (its window holds the fixture's 3 ms): 1736408883686740.710 us, 155985.8 us long
STEP_50 = {"ph": "X", "name": "ProfilerStep#50", "pid": 3096504, "tid": 3096504, "ts": "1736408883686740.710",
           "dur": 155985.8, "cat": "cpu_op", "args": {"Sequence number": -1, "Fwd thread id": 0}}
START_50 = 1736408883686740710  # ns
END_50 = START_50 + 155985800


def _moved(event: dict, name: str, start_us: str, dur: float | None = None) -> dict:
    e = copy.deepcopy(event)
    e["name"], e["ts"] = name, start_us
    if dur is not None:
        e["dur"] = dur
    return e


def _npu(tmp_path: Path, src: Path, extra: list[dict]) -> tuple[Path, Path]:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    tv = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    tv.write_text(json.dumps(json.loads(tv.read_text()) + extra))
    return dst, tv


def test_npu_step_id_twice_is_said_and_the_first_is_the_step(tmp_path: Path) -> None:
    # the copy starts 10 us after the real step ends: 1736408883686740.710 + 155985.8 + 10
    later = _moved(STEP_50, "ProfilerStep#50", "1736408883842736.510", 1000.0)
    dst, tv = _npu(tmp_path, NPU, [later, STEP_50])  # the copy first in the file
    prof = load_profile(str(dst), Options(base_step=50, comparison_step=50))
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [
        f"{tv}: ProfilerStep# id(s) 50 mark more than one event; --base_step / --comparison_step take the first in "
        "the file"]
    assert step_range(prof, 50) == (1736408883842736510, 1736408883842736510 + 1_000_000)


def test_npu_step_id_twice_at_one_start_is_the_longer_copy(tmp_path: Path) -> None:
    """The real ProfilerStep#50 (155.9858 ms) and a copy of it at its very start, cut to 45.8 ms (the fixture's ops
    run 44.3 to 47.3 ms in), written first. The step was the first in the file, [start, start + 45.8 ms], while the
    op tree nested the real marker under the copy, so the operator sheets held ops after that range's end. Ours:
    the longer copy holds the shorter (``optree._markers_first``) and is the step, so the range is the real
    marker's; every sheet is the one of the fixture with the real marker alone, ApiCompare's order too (the ops
    under the nested copy were a level deeper than the others)."""
    from msprof_compare.api import compare

    short = _moved(STEP_50, "ProfilerStep#50", STEP_50["ts"], 45800.0)
    dst, tv = _npu(tmp_path / "both", NPU, [short, STEP_50])
    alone, _ = _npu(tmp_path / "alone", NPU, [STEP_50])
    prof = load_profile(str(dst), Options(base_step=50, comparison_step=50))
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [
        f"{tv}: ProfilerStep# id(s) 50 mark more than one event; --base_step / --comparison_step take the first in "
        "the file (or a longer copy starting with it, which holds it)"]
    assert step_range(prof, 50) == (START_50, END_50)
    every = {"enable_operator_compare": True, "enable_api_compare": True, "enable_kernel_compare": True,
             "enable_communication_compare": True}
    got, unedited = (compare(str(p), str(p), base_step=50, comparison_step=50, **every) for p in (dst, alone))
    assert got.sheet_names == unedited.sheet_names
    for name in ("OperatorCompare", "ApiCompare", "KernelCompare", "CommunicationCompare"):
        assert got.sheet(name).equals(unedited.sheet(name)), name


@pytest.mark.parametrize("second", ["later_longer", "alike"])
def test_npu_step_written_twice_takes_the_first(tmp_path: Path, second: str) -> None:
    """A second ProfilerStep#50 that may not replace the first: a copy written after it, starting 10 us after the
    step ends and lasting 200 ms, longer than the step's 155.9858 ms (only a copy starting at the first's very
    instant may replace it), or one byte for byte like it (a trace merged twice: neither copy is longer). The step
    is the first in the file, and the note has no "(or a longer copy starting with it ...)" words."""
    copied = _moved(STEP_50, "ProfilerStep#50", "1736408883842736.510", 200000.0) if second == "later_longer" \
        else copy.deepcopy(STEP_50)
    dst, tv = _npu(tmp_path, NPU, [STEP_50, copied])
    prof = load_profile(str(dst), Options(base_step=50, comparison_step=50))
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [
        f"{tv}: ProfilerStep# id(s) 50 mark more than one event; --base_step / --comparison_step take the first in "
        "the file"]
    assert step_range(prof, 50) == (START_50, END_50)


def test_npu_overlapping_steps_are_said(tmp_path: Path) -> None:
    # step 51 starts 100 ms into step 50, which lasts 155.9858 ms
    inside = _moved(STEP_50, "ProfilerStep#51", "1736408883786740.710", 100000.0)
    dst, tv = _npu(tmp_path, NPU, [STEP_50, inside])
    prof = load_profile(str(dst), Options(base_step=50, comparison_step=50))
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [
        f"{tv}: ProfilerStep# step(s) 51 start before an earlier step ends; with a step asked for, the communication "
        "comparison counts an event in both in each; the operator, memory and API sheets count every op of the later "
        "step in the earlier one, even one that runs after the earlier step ends, and the later step holds none (the "
        "later marker nests in the earlier step: under the op it starts inside, if any, whose row then holds the "
        "later step's ops); the module sheets count a module in the step its start lies in"]
    assert step_range(prof, 50) == (START_50, END_50)
    assert step_range(prof, 51) == (START_50 + 100_000_000, START_50 + 200_000_000)


def test_npu_overlapping_steps_note_says_what_each_sheet_holds(tmp_path: Path, caplog) -> None:
    """The note said "an event in both is in each when a step is asked for", true of the communication comparison
    (a time range, reference-1 §1.4) but not of the operator sheets: an op sits under one marker only, and the later
    marker nests under the earlier one (``OpTree.top_layer``). Step 51 starting 40 ms into step 50 and lasting
    200 ms holds the whole fixture window (its 208 ops and its HCCL all-reduce, 44.3 to 47.3 ms into step 50):
    CommunicationCompare of either step holds the all-reduce; step 50's operator sheets hold the ops (23 rows,
    as without the edit: the ops under a step 50 marker alone), step 51's none, and its API comparison stops."""
    from msprof_compare.api import compare
    from msprof_compare.errors import StepError

    inside = _moved(STEP_50, "ProfilerStep#51", "1736408883726740.710", 200000.0)
    dst, _ = _npu(tmp_path / "both", NPU, [STEP_50, inside])
    alone, _ = _npu(tmp_path / "alone", NPU, [STEP_50])
    steps = {"enable_operator_compare": True, "enable_communication_compare": True}
    unedited = compare(str(alone), str(alone), base_step=50, comparison_step=50, **steps)
    sheets = {}
    for step in (50, 51):
        res = compare(str(dst), str(dst), base_step=step, comparison_step=step, **steps)
        sheets[step] = {n: res.sheet(n) for n in res.sheet_names}
    comm = sheets[50]["CommunicationCompare"]
    assert comm.iloc[0, 1] == "allreduce" and comm.iloc[0, 3] == 1
    assert sheets[51]["CommunicationCompare"].equals(comm)
    assert len(sheets[50]["OperatorCompare"]) == 23
    assert sheets[50]["OperatorCompare"].equals(unedited.sheet("OperatorCompare"))
    assert "OperatorCompare" not in sheets[51]
    with pytest.raises(StepError, match="There is no operator event data for step 51"):
        compare(str(dst), str(dst), base_step=51, comparison_step=51, enable_api_compare=True)


def test_npu_overlapping_steps_the_later_steps_ops_after_the_earlier_end_are_the_earlier_steps(tmp_path: Path) -> None:
    """The note said the operator sheets count "an op in both in the earlier step alone", as if the later step's
    ops that run after the earlier one ends were in neither: its marker nests in the earlier step, so all of them
    are the earlier step's. Step 50 cut to end 45.8 ms in (the fixture's ops run 44.3 to 47.3 ms in) and a step 51
    lasting 10 ms: starting 44.2 ms in, before any op, step 50's sheet is the unedited one (12 rows, 23 ops), 9 of
    its top-level ops starting after its end; starting 45.0 ms in, inside the aten::mm of AddmmBackward0's first
    call (44.935 to 45.154 ms), that call's row holds the rest (7 rows of 8 ops; AddmmBackward0 one call, not two).
    Either way step 50 holds the fixture's whole device time (the unedited sheet's total) and step 51 nothing."""
    from msprof_compare.api import compare
    from msprof_compare.compare.optree import build_tree

    op = {"enable_operator_compare": True}
    alone, _ = _npu(tmp_path / "alone", NPU, [STEP_50])
    unedited = compare(str(alone), str(alone), base_step=50, comparison_step=50, **op).sheet(
        "OperatorCompareStatistic")
    assert (len(unedited), unedited["Base Operator Number"].sum()) == (12, 23)
    short = _moved(STEP_50, "ProfilerStep#50", STEP_50["ts"], 45800.0)
    end_50 = START_50 + 45_800_000
    addmm = "autograd::engine::evaluate_function: AddmmBackward0"
    for name, start, rows, ops, calls, after in (("gap", "1736408883730940.710", 12, 23, 2, 9),
                                                 ("inside", "1736408883731740.710", 7, 8, 1, 0)):
        dst, _ = _npu(tmp_path / name, NPU, [short, _moved(STEP_50, "ProfilerStep#51", start, 10000.0)])
        stat = compare(str(dst), str(dst), base_step=50, comparison_step=50, **op).sheet("OperatorCompareStatistic")
        assert (len(stat), stat["Base Operator Number"].sum()) == (rows, ops)
        assert stat.set_index("Operator Name").loc[addmm, "Base Operator Number"] == calls
        assert stat["Base Device Duration(ms)"].sum() == pytest.approx(unedited["Base Device Duration(ms)"].sum())
        assert "OperatorCompareStatistic" not in compare(str(dst), str(dst), base_step=51, comparison_step=51,
                                                         **op).sheet_names
        tree = build_tree(load_profile(str(dst), Options(**op)))
        assert int((tree.ts[tree.top_layer(50)] > end_50).sum()) == after


def test_npu_disjoint_and_touching_steps_are_not_said(tmp_path: Path) -> None:
    # step 51 starts where step 50 ends (as torch writes consecutive steps)
    after = _moved(STEP_50, "ProfilerStep#51", "1736408883842726.510", 10.0)
    dst, _ = _npu(tmp_path, NPU, [STEP_50, after])
    prof = load_profile(str(dst), Options(base_step=51, comparison_step=51))
    assert not [w for w in prof.warnings if "ProfilerStep" in w]
    assert step_range(prof, 51) == (END_50, END_50 + 10_000)


def test_mindspore_step_markers_twice_are_said(tmp_path: Path) -> None:
    # MindSpore 2.5+ writes its step markers outside the torch-op categories (read where a step is asked for)
    marker = {k: v for k, v in STEP_50.items() if k not in ("cat", "args")}
    later = _moved(marker, "ProfilerStep#50", "1736408883842736.510", 1000.0)
    dst, tv = _npu(tmp_path, MINDSPORE, [marker, later])
    prof = load_profile(str(dst), Options(base_step=50, comparison_step=50))
    assert len(prof.ops) == 0
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [
        f"{tv}: ProfilerStep# id(s) 50 mark more than one event; --base_step / --comparison_step take the first in "
        "the file"]
    assert step_range(prof, 50) == (START_50, END_50)


@pytest.mark.parametrize(("shift_us", "name", "said"), [
    (20000.0, "ProfilerStep#15", "ProfilerStep# id(s) 15 mark more than one event"),  # after the step: a copy
    (1000.0, "ProfilerStep#16", "ProfilerStep# step(s) 16 start before an earlier step ends"),  # inside it
    # at its very start, as long: the step options' words on which step holds which are no Kineto trace's (it has
    # no --base_step)
    (0.0, "ProfilerStep#16", "ProfilerStep# step(s) 16 start with a step that ends no earlier"),
])
def test_kineto_step_oddities_are_said(tmp_path: Path, shift_us: float, name: str, said: str) -> None:
    top = json.loads(MI300.read_text())
    step = next(e for e in top["traceEvents"] if e.get("name") == "ProfilerStep#15")
    assert (step["ts"], step["dur"]) == (3743411222862.936, 16798.984)
    other = copy.deepcopy(step)
    other["name"], other["ts"] = name, step["ts"] + shift_us
    top["traceEvents"].append(other)
    path = tmp_path / "cut.pt.trace.json"
    path.write_text(json.dumps(top))
    prof = load_profile(str(path), Options())
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [f"{path}: {said}"]


#: The project's AlexNet H200 trace (tests/data/kineto/README.md): whole, one step, ProfilerStep#50 on the host
#: (user_annotation) at 5179894884720.167 us, 11925.797 us long.
ALEXNET = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def _alexnet_steps(tmp_path: Path, how: str) -> Path:
    """The AlexNet trace with its host step marker written twice (an exact copy after it), or split in two steps
    that overlap (#50 the first 60 % of the step, #51 from 40 % to its end)."""
    import gzip

    top = json.loads(gzip.decompress(ALEXNET.read_bytes()))
    events = top["traceEvents"]
    at = next(i for i, e in enumerate(events) if e.get("cat") == "user_annotation" and e["name"] == "ProfilerStep#50")
    step = events[at]
    assert (step["ts"], step["dur"]) == (5179894884720.167, 11925.797)
    if how == "twice":
        events.insert(at + 1, copy.deepcopy(step))
    else:
        late = _moved(step, "ProfilerStep#51", 5179894889490.486, 7155.478)  # 40 % in, to the step's end
        events[at] = _moved(step, "ProfilerStep#50", step["ts"], 7155.478)
        events.insert(at + 1, late)
    path = tmp_path / f"{how}.pt.trace.json"
    path.write_text(json.dumps(top))
    return path


@pytest.mark.parametrize(("how", "said"), [("twice", "ProfilerStep# id(s) 50 mark more than one event"),
                                           ("overlapping", "ProfilerStep# step(s) 51 start before an earlier step "
                                                           "ends")])
def test_kineto_step_marker_nested_in_a_step_is_no_operator(tmp_path: Path, how: str, said: str) -> None:
    """A step marker inside another (written twice, or a step starting before the previous one ends) nested in
    the op tree under the first, and was compared as one operator: OperatorCompare and MemoryCompare had a row
    ``ProfilerStep#50`` (3.930 ms of device time, 1018.51 MB) holding the whole step, against none on the intact
    trace, and every other operator read as gone (match rate 0 %). Its children are the compared ops, as a
    top-level marker's: every sheet that pairs operators is the intact trace's against itself, row for row."""
    from msprof_compare.api import compare

    damaged = _alexnet_steps(tmp_path, how)
    flags = {"enable_operator_compare": True, "enable_memory_compare": True, "enable_api_compare": True,
             "disable_module": True}
    intact = compare(str(ALEXNET), str(ALEXNET), **flags)
    got = compare(str(ALEXNET), str(damaged), **flags)
    assert [w for w in got.comparison.warnings if "ProfilerStep" in w] == [f"{damaged}: {said}"]
    assert got.sheet_names == intact.sheet_names == ["OperatorCompareStatistic", "OperatorCompare",
                                                     "MemoryCompareStatistic", "MemoryCompare", "ApiCompare"]
    for name in got.sheet_names:
        frame = got.sheet(name)
        assert not frame.astype(str).apply(lambda c: c.str.contains("ProfilerStep#")).any().any(), name
        assert frame.equals(intact.sheet(name)), name
    stats = got.sheet("OperatorCompareStatistic")
    assert (stats["Base Operator Number"] == stats["Comparison Operator Number"]).all()
    assert (stats["Diff Duration(ms)"] == 0).all()


def test_npu_step_without_a_module_of_its_own_says_why_no_module_sheet(samples: Path, tmp_path: Path,
                                                                        caplog) -> None:
    """A text export's module sheets take the modules that start in the step. The level-1 text sample (the
    excerpt holds no nn.Module events) with a ProfilerStep#51 from 40 ms into step 50 to 160 ms after its end:
    every module starts in step 50 (counted from the raw JSON), so step 51 has none, and the module sheets were
    left out without a word (the operator sheets' "no operator infomation" line named the operators alone)."""
    import logging

    from msprof_compare.api import compare

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    raw = json.loads((src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    start_51 = START_50 + 40_000_000
    mods = [e for e in raw if e.get("ph") == "X" and str(e.get("name", "")).lower().startswith("nn.module:")]
    mod_ns = [round(float(e["ts"]) * 1000) for e in mods]  # exact enough: the nearest starts are ms apart
    assert len(mods) == 26 and max(mod_ns) < start_51
    dst, _ = _npu(tmp_path, src, [_moved(STEP_50, "ProfilerStep#51", "1736408883726740.710", 200000.0)])
    with caplog.at_level(logging.WARNING):
        res = compare(str(dst), str(dst), base_step=51, comparison_step=51, enable_operator_compare=True)
    assert not res.sheet_names
    said = [r.getMessage() for r in caplog.records if "nn.Module" in r.getMessage()]
    assert set(said) == {f"{dst}: none of its 26 nn.Module events starts in step 51 (26 start before it), so it has "
                         "no module for the module sheets (ModuleCompare, ModuleCompareStatistic): a module counts "
                         "in the step its start lies in (both sides)"}
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # step 50 holds them: its module sheets, and no such line
        res = compare(str(dst), str(dst), base_step=50, comparison_step=50, enable_operator_compare=True)
    assert "ModuleCompare" in res.sheet_names
    assert not [r for r in caplog.records if "nn.Module" in r.getMessage()]


@pytest.mark.parametrize(("added", "said"), [
    # 16 ends 2 ms into step 15; 17 starts 5 ms in, after 16 ends but inside 15 (which lasts 16.799 ms): both said
    ([("ProfilerStep#16", 1000.0, 1000.0), ("ProfilerStep#17", 5000.0, 1000.0)],
     ["ProfilerStep# step(s) 16, 17 start before an earlier step ends"]),
    # a copy of step 15 after the step, and a step 16 inside that copy alone: the first #15 is the step, which 16
    # starts after, so no overlap is said (the copy is left out of the test)
    ([("ProfilerStep#15", 20000.0, None), ("ProfilerStep#16", 20500.0, 100.0)],
     ["ProfilerStep# id(s) 15 mark more than one event"]),
    # a copy of step 15 at its start, 20 ms long (the step: 16.799 ms): the longer copy holds the step, which the
    # step options' words say where they apply, not on a Kineto trace (no --base_step)
    ([("ProfilerStep#15", 0.0, 20000.0)], ["ProfilerStep# id(s) 15 mark more than one event"]),
])
def test_kineto_step_overlap_is_tested_against_every_earlier_first_step(
        tmp_path: Path, added: list[tuple[str, float, float | None]], said: list[str]) -> None:
    """The overlap test takes the first event of each id and compares each start with the latest end of the steps
    before it, not with the previous step's end alone: a step nested in a longer one does not hide a later step that
    starts inside the longer one. The MI300 excerpt's ProfilerStep#15 (16,798.984 us) with markers added at the
    given offsets from its start (us); the expected lines follow from those offsets by hand."""
    top = json.loads(MI300.read_text())
    step = next(e for e in top["traceEvents"] if e.get("name") == "ProfilerStep#15")
    assert (step["ts"], step["dur"]) == (3743411222862.936, 16798.984)
    for name, shift_us, dur in added:
        other = copy.deepcopy(step)
        other["name"], other["ts"] = name, step["ts"] + shift_us
        if dur is not None:
            other["dur"] = dur
        top["traceEvents"].append(other)
    path = tmp_path / "cut.pt.trace.json"
    path.write_text(json.dumps(top))
    prof = load_profile(str(path), Options())
    assert [w for w in prof.warnings if "ProfilerStep" in w] == [f"{path}: {s}" for s in said]


def test_kineto_markers_without_a_step_number_are_no_step(tmp_path: Path) -> None:
    """A ProfilerStep# marker whose suffix is no number is no step (``model.step_number``): two markers
    "ProfilerStep#abc" inside the MI300 excerpt's step 15 (1 ms and 3 ms in, 0.1 ms each) give neither a repeated
    id nor an overlap."""
    top = json.loads(MI300.read_text())
    step = next(e for e in top["traceEvents"] if e.get("name") == "ProfilerStep#15")
    for shift_us in (1000.0, 3000.0):
        other = copy.deepcopy(step)
        other["name"], other["ts"], other["dur"] = "ProfilerStep#abc", step["ts"] + shift_us, 100.0
        top["traceEvents"].append(other)
    path = tmp_path / "cut.pt.trace.json"
    path.write_text(json.dumps(top))
    assert not [w for w in load_profile(str(path), Options()).warnings if "ProfilerStep" in w]
