"""A ``ProfilerStep#`` marker tied with an op (docs/differences.md, "A step marker holds the ops it starts with"): at a
start a marker shares, the ops that outlast it come first, then the marker, then the ops it covers, whatever the
file order; a marker is no child of an op, or of the previous step's marker, that ends as it starts
(``optree._markers_first``, ``optree._unhook_markers``). No sample holds a tie (89 markers of 43 traces, the nearest
op 1 us away), so each case is an edit of a real excerpt that moves one time stamp; the expected top layers are
worked out by hand below.

* ``tests/data/kineto/legacy_resnet50_step6_start.pt.trace.json`` (README there): PyTorch 1.8 writes an op when it
  ends, so ProfilerStep#6 comes after every op of the excerpt. Host ops, microseconds from the marker's start
  (1623142623636318): aten::zeros -48..-12 (holding aten::empty -34..-22 and aten::zero_ -19..-13), the marker
  0..173992, aten::empty 7..17, aten::zeros 33..58 (holding aten::empty 41..49, aten::zero_ 51..57) and
  enumerate(DataLoader)#... 66..68843 (holding aten::empty 72..81). Its top layer: aten::zeros, then the marker's
  children aten::empty, aten::zeros and enumerate(DataLoader).
* ``tests/data/npu/two_steps_ascend_pt`` (make_two_steps.py): ProfilerStep#51 starts at the very ts of
  ``evaluate_function: ReluBackward0`` (1736408883732328.490, ends 732382.870), written after it, as torch_npu
  writes its markers last.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.compare.optree import OpTree, build_tree
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).parent / "data"
RESNET = DATA / "kineto" / "legacy_resnet50_step6_start.pt.trace.json"
TWO_STEPS = DATA / "npu" / "two_steps_ascend_pt"
T6 = 1623142623636318  # ProfilerStep#6's start in the excerpt (us)
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
RELU = "autograd::engine::evaluate_function: ReluBackward0"
EVAL = "autograd::engine::evaluate_function: "
#: step 51's top layer after ReluBackward0's evaluate_function, in start order (the fixture's trace_view.json)
AFTER_RELU = [EVAL + n for n in ("AddmmBackward0", "torch::autograd::AccumulateGrad", "TBackward0",
                                 "torch::autograd::AccumulateGrad", "NpuDropoutBackward0", "ViewBackward0",
                                 "AdaptiveAvgPool2DBackward0", "MaxPool2DWithIndicesBackward0", "ReluBackward0")]


def _tree(path: Path) -> OpTree:
    return build_tree(load_profile(str(path), Options()), with_comm=True)


def _names(tree: OpTree, nodes) -> list[str]:
    return [str(tree.names[i]) for i in nodes]


def _node(tree: OpTree, name: str, ts: int) -> int:
    """The node of that name starting at ``ts`` (ns)."""
    return next(i for i in range(tree.n) if tree.names[i] == name and tree.ts[i] == ts)


def _resnet(tmp_path: Path, edit) -> Path:
    """The excerpt with ``edit`` applied to its event list (in place), written under ``tmp_path``."""
    doc = json.loads(RESNET.read_text())
    edit(doc["traceEvents"])
    out = tmp_path / "edited.pt.trace.json"
    out.write_text(json.dumps(doc))
    return out


def _event(events: list[dict], name: str, ts: int) -> dict:
    return next(e for e in events if e.get("name") == name and e.get("ts") == ts)


def test_unedited_excerpt_writes_the_marker_after_its_ops() -> None:
    """The shape the edits rely on: the marker is the last host op of the file, 7 us before its first child."""
    events = json.loads(RESNET.read_text())["traceEvents"]
    assert [e for e in events if e.get("cat") == "Operator"][-1]["name"] == "ProfilerStep#6"
    tree = _tree(RESNET)
    assert _names(tree, tree.top_layer()) == ["aten::zeros", "aten::empty", "aten::zeros", LOADER]
    assert (tree.parent == -1).sum() == 2  # aten::zeros (-48 us) and the marker


def test_an_op_starting_with_the_marker_is_the_steps_op(tmp_path: Path) -> None:
    """aten::empty moved from +7 to the marker's start (dur 10 us kept), as on a host where it begins within the
    marker's microsecond. §2.2 as written sorts it first (file order) and nests the marker under it: the original
    compares aten::zeros and that aten::empty holding the whole step; the container rule dropped the aten::empty.
    Ours: the marker first, holding it, so the top layer is the unedited one and every op pairs with itself."""
    def edit(events):
        _event(events, "aten::empty", T6 + 7)["ts"] = T6

    path = _resnet(tmp_path, edit)
    tree = _tree(path)
    assert _names(tree, tree.top_layer()) == ["aten::zeros", "aten::empty", "aten::zeros", LOADER]
    mark = _node(tree, "ProfilerStep#6", T6 * 1000)
    assert tree.parent[mark] == -1 and tree.parent[_node(tree, "aten::empty", T6 * 1000)] == mark
    sheet = compare(str(RESNET), str(path), enable_operator_compare=True).sheet("OperatorCompare")
    assert sheet["Operator Name"].tolist() == sheet["Operator Name.1"].tolist() == [
        "aten::zeros", "aten::empty", "aten::zeros", LOADER]


def test_an_op_ending_as_the_marker_starts_keeps_out_of_it(tmp_path: Path) -> None:
    """The marker moved to start at aten::zeros' end, -12 us (its end kept). §2.2 keeps an op open up to its end
    inclusive, so the marker nested under aten::zeros, which held the whole step (the original's one op of the
    step); the container rule put aten::zeros' children aten::empty and aten::zero_ in its place. Ours: the marker
    leaves aten::zeros, which stays one op with its two children."""
    def edit(events):
        mark = _event(events, "ProfilerStep#6", T6)
        mark["ts"], mark["dur"] = T6 - 12, mark["dur"] + 12

    tree = _tree(_resnet(tmp_path, edit))
    assert _names(tree, tree.top_layer()) == ["aten::zeros", "aten::empty", "aten::zeros", LOADER]
    zeros = _node(tree, "aten::zeros", (T6 - 48) * 1000)
    assert tree.parent[zeros] == -1 and _names(tree, tree.children(zeros)) == ["aten::empty", "aten::zero_"]
    assert tree.parent[_node(tree, "ProfilerStep#6", (T6 - 12) * 1000)] == -1


def test_an_op_outlasting_the_marker_holds_it_whatever_the_file_order(tmp_path: Path) -> None:
    """enumerate(DataLoader) made a wrapper starting with the marker and ending 100 us after it, and written last:
    §2.2 as written puts the marker first (file order) and the wrapper inside the step as one op holding the rest
    of it (top layer aten::zeros, aten::empty, wrapper). Ours puts the op that outlasts the marker first, so it
    holds the marker and is opened as "An op around the step markers": its own child aten::empty (+72) is now the
    marker's, next to the marker's aten::empty and aten::zeros."""
    def edit(events):
        wrapper = _event(events, LOADER, T6 + 66)
        events.remove(wrapper)
        wrapper["ts"], wrapper["dur"] = T6, 173992 + 100
        events.append(wrapper)

    tree = _tree(_resnet(tmp_path, edit))
    assert _names(tree, tree.top_layer()) == ["aten::zeros", "aten::empty", "aten::zeros", "aten::empty"]
    wrapper = _node(tree, LOADER, T6 * 1000)
    assert tree.parent[wrapper] == -1 and tree.parent[_node(tree, "ProfilerStep#6", T6 * 1000)] == wrapper


def test_npu_step_holds_the_op_it_starts_with() -> None:
    """Step 50 against step 51 of the NPU fixture, the rows of ReluBackward0's evaluate_function. Its kernel
    aclnnThresholdBackward_ReluGrad_ReluGrad lasts 8.84015625 us in step 50 (flow from 731643.000) and 8.16015625 us
    in step 51 (flow from 732367.280), whole ns 8840 and 8160; step 51's second one (733422.780) has no kernel in
    the window. Base 1 op 0.00884 ms, comparison 2 ops 0.00816 ms, diff -0.00068 -> -0.0, ratio 0.9231, and the
    two pair in OperatorCompare. The container rule gave step 51 ReluBackward0 in the evaluate_function's place:
    a comparison-only row 0.00816 ms (ratio inf) and the evaluate_function unmatched in step 50."""
    run = compare(str(TWO_STEPS), str(TWO_STEPS), base_step=50, comparison_step=51, enable_operator_compare=True)
    stat = run.sheet("OperatorCompareStatistic")
    assert "ReluBackward0" not in stat["Operator Name"].tolist()
    row = stat[stat["Operator Name"] == RELU].iloc[0]
    assert [row["Base Device Duration(ms)"], row["Base Operator Number"], row["Comparison Device Duration(ms)"],
            row["Comparison Operator Number"], row["Diff Duration(ms)"], row["Diff Ratio"]] == [
        0.00884, 1, 0.00816, 2, 0.0, 0.9231]
    detail = run.sheet("OperatorCompare")
    paired = detail[(detail["Operator Name"] == RELU) & (detail["Operator Name.1"] == RELU)]
    assert paired[["Device Duration(us)", "Device Duration(us).1"]].values.tolist() == [[8.84, 8.16]]
    tree = _tree(TWO_STEPS)
    assert _names(tree, tree.top_layer(51)) == [RELU, *AFTER_RELU]


def _step_51_at(tmp_path: Path, ts: str, dur: float) -> Path:
    """A copy of the NPU fixture whose ProfilerStep#51 starts at ``ts`` (us, as trace_view.json writes it) and lasts
    ``dur`` us."""
    out = tmp_path / "two_steps_ascend_pt"
    shutil.copytree(TWO_STEPS, out)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    mark = next(e for e in events if e.get("name") == "ProfilerStep#51")
    mark["ts"], mark["dur"] = ts, dur
    trace.write_text(json.dumps(events))
    return out


def test_npu_step_starting_as_an_op_ends(tmp_path: Path) -> None:
    """ProfilerStep#51 moved to start at 1736408883732382.870, where ReluBackward0's evaluate_function ends (its end
    733510.000 kept). §2.2 as written nests the marker under that op; ours leaves it out of the step: one op
    between the steps (8.160 us of device time, its ReluBackward0 child under it), step 51 the nine ops after it."""
    tree = _tree(_step_51_at(tmp_path, "1736408883732382.870", 1127.13))
    assert _names(tree, tree.top_layer(51)) == AFTER_RELU
    every = tree.top_layer()
    relu = _node(tree, RELU, 1736408883732328490)
    assert _names(tree, every[12:14]) == [RELU, AFTER_RELU[0]] and every[12] == relu
    assert tree.parent[relu] == -1 and _names(tree, tree.children(relu)) == ["ReluBackward0"]
    assert tree.device_ns[relu] == 8160


def _walk(ts: list[int], end: list[int], mark: list[bool]) -> dict[int, int]:
    """Plain reference of the rule: per op (file index), its parent's file index (-1: the root). Markers sharing a
    start come longest first (equal ends in file order), numbered 1, 2, ...; an op starting there goes right after
    the last of them that ends no earlier than it (before them all where it outlasts them all)."""
    marks_at: dict[int, list[int]] = {}  # per start, its markers' file indices, longest first
    for i in sorted(range(len(ts)), key=lambda i: -end[i]):
        if mark[i]:
            marks_at.setdefault(ts[i], []).append(i)
    latest = {t: end[ms[0]] for t, ms in marks_at.items()}

    def rank(i: int) -> tuple[int, int]:
        ms = marks_at.get(ts[i], [])
        if mark[i]:
            return ms.index(i) + 1, 0
        return sum(end[m] >= end[i] for m in ms), 1

    def lifted(i: int) -> bool:  # a marker, or an op outlasting the markers it starts with (which it holds)
        return mark[i] or ts[i] in latest and end[i] > latest[ts[i]]

    stack: list[int] = []
    out = {}
    for i in sorted(range(len(ts)), key=lambda i: (ts[i], rank(i))):
        while stack and (ts[i] >= end[stack[-1]] if lifted(i) else ts[i] > end[stack[-1]]):
            stack.pop()
        out[i] = stack[-1] if stack else -1
        stack.append(i)
    return out


def test_the_vectorised_rule_is_the_plain_walk() -> None:
    """``_markers_first``, ``_nest``, ``_tied_holders`` and ``_unhook_markers`` against ``_walk`` on random lists
    crowded with ties (starts and ends on a grid of 12 instants, a quarter of the ops markers), 400 cases; one in
    ten of 300 ops on 120 instants, so over the 64 markers whose neighbours ``_markers_first`` reads one by one."""
    import numpy as np

    from msprof_compare.compare.optree import _depths, _markers_first, _nest, _tied_holders, _unhook_markers

    rng = np.random.default_rng(66)
    for case in range(400):
        big = case % 10 == 0
        n = 300 if big else int(rng.integers(2, 30))
        ts = rng.integers(0, 120 if big else 12, n)
        end = ts + rng.integers(0, 6, n)
        mark = rng.random(n) < 0.25
        first = np.argsort(ts, kind="stable")
        order = _markers_first(ts[first], end[first], mark[first], np.flatnonzero(mark[first]))
        rows = first if order is None else first[order]
        parent, _ = _nest(ts[rows], end[rows])
        marks = np.flatnonzero(mark[rows])
        if len(marks):  # as build_tree: the ops tied with a marker's start that hold it are lifted too
            _unhook_markers(parent, ts[rows], end[rows],
                            np.union1d(marks, _tied_holders(ts[rows], end[rows], mark[rows], marks)))
        got = {int(rows[k]): int(rows[p]) if p >= 0 else -1 for k, p in enumerate(parent.tolist())}
        assert got == _walk(ts.tolist(), end.tolist(), mark.tolist())
        depth = _depths(parent)
        assert all(depth[k] == (0 if p < 0 else depth[p] + 1) for k, p in enumerate(parent.tolist()))


def test_npu_step_starting_as_the_previous_step_ends(tmp_path: Path) -> None:
    """ProfilerStep#51 moved to start at 1736408883732320.000, where ProfilerStep#50 ends (its end 733510.000 kept).
    §2.2 as written nests #51 under #50, so step 50 held all 22 top-layer ops of both steps and step 51 none (the
    step asked for stopped the run); ours lifts #51 out of #50: step 50 keeps its 12 ops (the unedited fixture's,
    empty_tensor first, evaluate_function: NpuDropoutBackward0 last), step 51 its 10, ReluBackward0's
    evaluate_function first."""
    tree, unedited = _tree(_step_51_at(tmp_path, "1736408883732320.000", 1190.0)), _tree(TWO_STEPS)
    assert _names(tree, tree.top_layer(51)) == [RELU, *AFTER_RELU]
    step50 = _names(tree, tree.top_layer(50))
    assert len(step50) == 12 and step50 == _names(unedited, unedited.top_layer(50))
    assert step50[0] == "empty_tensor" and step50[-1] == EVAL + "NpuDropoutBackward0"
    assert (tree.parent[tree.step_nodes()] == -1).all()


def test_a_wrapper_starting_with_the_marker_keeps_out_of_an_op_ending_there(tmp_path: Path) -> None:
    """The two edits above at once: the marker moved to start at aten::zeros' end (-12 us, its end kept), and
    enumerate(DataLoader) made a wrapper starting there too, outlasting the marker by 100 us and written last. The
    wrapper comes before the marker and holds it (as above), and it is no child of aten::zeros, which ends as it
    starts, as the marker is none: were it one, aten::zeros held the whole step through it and was opened as a
    container, compared nowhere (top layer aten::empty, aten::zero_ and the step's ops), the case the rule is for.
    By hand: aten::zeros (-48..-12) one op with its children aten::empty and aten::zero_; the wrapper opened; the
    marker's children aten::empty (+7), aten::zeros (+33) and aten::empty (+72, the wrapper's child before)."""
    def edit(events):
        mark = _event(events, "ProfilerStep#6", T6)
        mark["ts"], mark["dur"] = T6 - 12, mark["dur"] + 12
        wrapper = _event(events, LOADER, T6 + 66)
        events.remove(wrapper)
        wrapper["ts"], wrapper["dur"] = T6 - 12, 173992 + 12 + 100
        events.append(wrapper)

    tree = _tree(_resnet(tmp_path, edit))
    assert _names(tree, tree.top_layer()) == ["aten::zeros", "aten::empty", "aten::zeros", "aten::empty"]
    zeros = _node(tree, "aten::zeros", (T6 - 48) * 1000)
    wrapper = _node(tree, LOADER, (T6 - 12) * 1000)
    assert tree.parent[zeros] == -1 and _names(tree, tree.children(zeros)) == ["aten::empty", "aten::zero_"]
    assert tree.parent[wrapper] == -1 and tree.parent[_node(tree, "ProfilerStep#6", (T6 - 12) * 1000)] == wrapper


def _top_host_ops(trace: Path, lo_ns: int, hi_ns: int) -> list[str]:
    """The host ops (cpu_op, step markers aside) starting in ``[lo_ns, hi_ns]`` that no other host op contains
    (of two with one range, the first in the file holds the other), in start order: the step's top layer worked out
    from the raw trace, without the op tree."""
    from decimal import Decimal

    ops = [(int(Decimal(e["ts"]) * 1000), int((Decimal(e["ts"]) + Decimal(str(e["dur"]))) * 1000), k, e["name"])
           for k, e in enumerate(json.loads(trace.read_text()))
           if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "ProfilerStep#" not in e["name"]]
    top = [o for o in ops if lo_ns <= o[0] <= hi_ns
           and not any(p[0] <= o[0] and o[1] <= p[1] and (p[0], -p[1], p[2]) < (o[0], -o[1], o[2]) for p in ops)]
    return [o[3] for o in sorted(top)]


@pytest.mark.parametrize("fifty_first", [True, False])
def test_npu_steps_starting_together_the_longer_holds_the_shorter(tmp_path: Path, fifty_first: bool) -> None:
    """ProfilerStep#51 moved to start at ProfilerStep#50's start, 1736408883731000.000 (its end 733510.000 kept, so
    2510 us long; #50 ends at 732320.000). Markers starting together nested in file order: with #50 first in the
    file (as the fixture writes it), #51 nested in #50, so step 50, 1.32 ms long, held all 22 top-layer ops of the
    2.51 ms (the last 10, ReluBackward0's evaluate_function on, start after it ends), step 51 none; written the
    other way round, the other way round. Ours: the longer marker holds the shorter whatever the file order, so
    step 51 holds the 22 top-layer host ops of its range (worked out from the raw trace) and step 50 none, as the
    note says; every op of step 51 lies in its range, which the communication cut uses."""
    from msprof_compare.compare.steps import step_range

    path = _step_51_at(tmp_path, "1736408883731000.000", 2510.0)
    trace = path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    if not fifty_first:
        events = json.loads(trace.read_text())
        marks = [e for e in events if e.get("name") in ("ProfilerStep#50", "ProfilerStep#51")]
        events = [e for e in events if e not in marks] + marks[::-1]
        trace.write_text(json.dumps(events))
    start, end = 1736408883731000000, 1736408883733510000
    expected = _top_host_ops(trace, start, end)
    assert len(expected) == 22 and expected[-10:] == [RELU, *AFTER_RELU]
    prof = load_profile(str(path), Options(base_step=51, comparison_step=51))
    tree = build_tree(prof)
    assert _names(tree, tree.top_layer(51)) == expected
    assert len(tree.top_layer(50)) == 0
    assert tree.parent[_node(tree, "ProfilerStep#50", start)] == _node(tree, "ProfilerStep#51", start)
    assert step_range(prof, 51) == (start, end)
    assert ((tree.ts[tree.top_layer(51)] >= start) & (tree.end[tree.top_layer(51)] <= end)).all()
    assert [w.split(": ", 1)[1].split(";")[0] for w in prof.warnings if "ProfilerStep" in w] == [
        "ProfilerStep# step(s) 50 start with a step that ends no earlier (below, the longer step is the earlier and "
        "the shorter the later)"]


def test_an_op_ending_between_two_tied_markers_ends_is_the_longer_steps(tmp_path: Path) -> None:
    """The fixture with ProfilerStep#51 moved to #50's start, 1736408883731000.000 (2510 us: to 733510.000; #50 ends
    at 732320.000), and two ops moved to that instant: empty_tensor (731005.800, 7.24 us, first in the file) ends at
    731007.240, inside both steps; c10d::allreduce_ (from 731419.400, written later) made 1390 us long, to
    732390.000: after #50 ends, before #51 does, in the gap between ReluBackward0's evaluate_function (to 732382.870)
    and AddmmBackward0's (from 732395.200). The ops tied with the markers went after them all in file order, so
    empty_tensor sat under #50, c10d::allreduce_ under empty_tensor (§2.2 at one start) and, through it, every op
    of #50's range under #50: step 51's top layer was empty_tensor holding the lot. Ours puts each tied op after the
    shortest marker that covers it: #51, c10d::allreduce_ (which outlasts #50, so holds it, as a wrapper holds the
    marker it outlasts), #50, empty_tensor. By hand: step 51's top layer c10d::allreduce_ and the nine
    evaluate_functions after 732390 (AddmmBackward0's on); ReluBackward0's evaluate_function, which starts after
    #50 ends, is c10d::allreduce_'s child, no longer inside #50; step 50 holds none (nested in step 51); ApiCompare
    of step 51, breadth-first, starts with c10d::allreduce_ (level 0) where it started with empty_tensor."""
    from msprof_compare.compare.api_stats import _calls

    path = _step_51_at(tmp_path, "1736408883731000.000", 2510.0)
    trace = path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    next(e for e in events if e.get("name") == "empty_tensor" and e["ts"] == "1736408883731005.800")["ts"] = \
        "1736408883731000.000"
    wrap = next(e for e in events if e.get("name") == "c10d::allreduce_" and e["ts"] == "1736408883731419.400")
    wrap["ts"], wrap["dur"] = "1736408883731000.000", 1390.0
    trace.write_text(json.dumps(events))
    tree = _tree(path)
    start = 1736408883731000000
    s51, s50 = _node(tree, "ProfilerStep#51", start), _node(tree, "ProfilerStep#50", start)
    wrapper, empty = _node(tree, "c10d::allreduce_", start), _node(tree, "empty_tensor", start)
    assert [tree.parent[n] for n in (s51, wrapper, s50, empty)] == [-1, s51, wrapper, s50]
    assert tree.parent[_node(tree, RELU, 1736408883732328490)] == wrapper
    assert _names(tree, tree.top_layer(51)) == ["c10d::allreduce_", *AFTER_RELU]
    assert len(tree.top_layer(50)) == 0
    order = _calls(tree, 51)[0]
    assert _names(tree, order[:10]) == ["c10d::allreduce_", *AFTER_RELU] and order[10] == empty
    run = compare(str(path), str(path), base_step=51, comparison_step=51, enable_api_compare=True)
    assert run.sheet("ApiCompare")["api name"].tolist()[:2] == ["c10d::allreduce_", AFTER_RELU[0]]
