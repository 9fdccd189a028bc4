"""Op tree: nesting, flow-linked kernels, top-layer ops, backward split, drill-down (synthetic frames)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare.api import RunContext
from msprof_compare.compare import optree, steps
from msprof_compare.compare.optree import build_tree, op_keys, operator_pairs
from msprof_compare.errors import UsageError
from msprof_compare.model import Profile, frame
from msprof_compare.options import build_options

US = 1000  # ns per us


def gpu_profile(ops: list[tuple], kernels: list[tuple] = (), flows: list[tuple] = (), bwd: int = -1,
                path: str = "p.json") -> Profile:
    """ops: (name, ts_us, dur_us[, tid]); kernels: (name, ts_us, dur_us); flows: (start_ts_us, kernel_ts_us)."""
    p = Profile(path=path, kind="GPU", source="kineto")
    p.ops = frame("ops", {
        "name": [o[0] for o in ops], "cat": ["cpu_op"] * len(ops),
        "ts": [o[1] * US for o in ops], "dur": [o[2] * US for o in ops],
        "pid": [1] * len(ops), "tid": [o[3] if len(o) > 3 else 1 for o in ops],
        "input_dims": ["N/A"] * len(ops), "input_type": ["N/A"] * len(ops), "call_stack": ["N/A"] * len(ops),
    })
    if kernels:
        p.kernels = frame("kernels", {
            "name": [k[0] for k in kernels], "cat": ["kernel"] * len(kernels), "task_type": ["kernel"] * len(kernels),
            "ts": [k[1] * US for k in kernels], "dur": [k[2] * US for k in kernels],
            "pid": [0] * len(kernels), "tid": [7] * len(kernels),
        })
    if flows:
        p.flows = frame("flows", {
            "id": [str(i) for i in range(len(flows))], "cat": ["ac2g"] * len(flows),
            "s_ts": [f[0] * US for f in flows], "s_pid": [1] * len(flows), "s_tid": [1] * len(flows),
            "f_ts": [f[1] * US for f in flows], "f_pid": [0] * len(flows), "f_tid": [7] * len(flows),
        })
    p.backward_tid = bwd
    return p


def ctx_of(base: Profile, comp: Profile, **opts) -> RunContext:
    o, _ = build_options(enable_operator_compare=True, **opts)
    return RunContext(base, comp, o)


def test_reference_ut_fact_tree_kernels_memory() -> None:
    # reference-2 §2.2: ops at 0 (dur 1) and 3 (dur 1); kernel_dict {0: [k0, k1], 1: [k0, k1]}; memory at 0
    p = gpu_profile([("a", 0, 1), ("b", 3, 1)], [("k0", 10, 2), ("k1", 12, 3)],
                    [(0, 10), (0, 12), (1, 10), (1, 12)])
    t = build_tree(p)
    assert t.children(-1).tolist() == [0, 1]
    assert t.kernel_num.tolist() == [2, 0]
    assert t.device_ns.tolist() == [5000, 0]
    assert t.total_kernels(0).tolist() == [0, 1]
    assert t.place(np.array([0])).tolist() == [0]


def test_nesting_is_inclusive_and_ignores_threads() -> None:
    # child starting exactly at the parent's end is still a child; tid does not matter
    p = gpu_profile([("p", 0, 10), ("c1", 2, 3, 9), ("c2", 10, 5), ("n", 16, 1)])
    t = build_tree(p)
    assert t.parent.tolist() == [-1, 0, 0, -1]
    assert t.depth.tolist() == [0, 1, 1, 0]
    assert t.size.tolist() == [3, 1, 1, 1]
    # placement: after ops at equal ts, deepest op still open; outside any op -> root
    assert t.place(np.array([2 * US, 6 * US, 15 * US, 15_500, 100 * US])).tolist() == [1, 0, 2, -1, -1]



def test_tree_ops_are_the_table_itself_only_when_it_is_in_start_order() -> None:
    """The tree's ops are the profile's table when every op is kept and already in start order (no copy);
    otherwise a copy in stable start order, index reset, as before."""
    ordered = gpu_profile([("p", 0, 10), ("c1", 2, 3), ("c2", 2, 1), ("n", 16, 1)])
    t = build_tree(ordered)
    assert t.ops is ordered.ops and t.ts.tolist() == [0, 2 * US, 2 * US, 16 * US]
    shuffled = gpu_profile([("n", 16, 1), ("c1", 2, 3), ("p", 0, 10), ("c2", 2, 1)])
    t = build_tree(shuffled)
    assert t.ops is not shuffled.ops
    assert t.ops["name"].tolist() == ["p", "c1", "c2", "n"] and t.ops.index.equals(pd.RangeIndex(4))
    assert t.parent.tolist() == [-1, 0, 1, -1]
    indexed = gpu_profile([("p", 0, 10), ("c", 2, 3)])
    indexed.ops = indexed.ops.set_axis([5, 6])
    t = build_tree(indexed)
    assert t.ops.index.equals(pd.RangeIndex(2)) and t.ops["name"].tolist() == ["p", "c"]

def test_kernels_link_by_exact_flow_start_and_propagate() -> None:
    # aten op 0..10 with a launch at 1 (two kernels) and another at 5; a parent/child pair at the same ts share
    p = gpu_profile([("aten::mm", 0, 10), ("cudaLaunchKernel", 1, 1), ("cudaLaunchKernel", 5, 1),
                     ("x", 20, 5), ("y", 20, 1)],
                    [("g1", 100, 4), ("g2", 105, 6), ("g3", 120, 1), ("g4", 130, 2)],
                    [(1, 100), (1, 105), (5, 120), (20, 130), (2, 999)])  # last flow ends on no kernel
    t = build_tree(p)
    names = t.names.tolist()
    assert names == ["aten::mm", "cudaLaunchKernel", "cudaLaunchKernel", "x", "y"]
    assert t.kernel_num.tolist() == [3, 2, 1, 2, 1]  # x and y share g4: the original double counts
    assert t.device_ns.tolist() == [11000, 10000, 1000, 4000, 2000]
    text = t.kernel_text()
    assert "".join(text[t.total_kernels(0)].tolist()) == \
        "g1 [duration: 4.0]\ng2 [duration: 6.0]\ng3 [duration: 1.0]\n"


def test_no_flows_warns_with_gpu_flow_cat_hint(caplog) -> None:
    """The --gpu_flow_cat hint only where the trace holds flows of another category (named) and the option
    cannot unlink the other side: it replaces the usual categories on both sides, so following the hint
    against a trace linked by ac2g moved every kernel from one side to the other (the message audit). A
    trace without flow events is told so (the log audit: hta's trace_compare base holds none)."""
    base = gpu_profile([("a", 0, 1)], [("k", 5, 1)], path="base.json")
    base.extra["other_flow_cats"] = ["my_flow"]
    comp = gpu_profile([("a", 0, 1)], [("k", 5, 1)], [(0, 5)], path="comp.json")
    ctx = ctx_of(base, comp)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        optree.op_tree(ctx, "base")
        optree.op_tree(ctx, "comparison")
    assert caplog.messages == ["Can't find any flow event in the file: base.json (base side: it holds flows of "
                               "category 'my_flow'; --gpu_flow_cat replaces the usual categories (ac2g, async, "
                               "async_cpu_to_gpu, async_gpu) on both sides, and comp.json links its ops to kernels "
                               "through those: the option links both only where that trace holds such flows too)"]
    caplog.clear()
    unlinked = gpu_profile([("a", 0, 1)], [("k", 5, 1)], path="comp.json")  # the option can only help here
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        optree.op_tree(ctx_of(base, unlinked), "base")
    assert caplog.messages == ["Can't find any flow event in the file: base.json (base side: it holds flows of "
                               "category 'my_flow': if those link ops to kernels, pass --gpu_flow_cat)"]
    caplog.clear()
    del base.extra["other_flow_cats"]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        optree.op_tree(ctx_of(base, comp), "base")
    assert caplog.messages == ["Can't find any flow event in the file: base.json (base side: the trace holds no flow "
                               "linking an op to its kernels, so no op gets a kernel)"]


def test_other_flow_categories_are_named_from_real_traces(tmp_path, samples) -> None:
    """hta's trace_compare base holds no flow event (checked with json): no category to name. The resnet50
    Kineto trace with its ac2g flows renamed 'my_flow' names that one."""
    import gzip
    import json

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    base = samples / "hta/tests/data/trace_compare/base/base.json.gz"
    if not base.exists():
        pytest.skip("hta sample absent")
    events = json.loads(gzip.decompress(base.read_bytes()))["traceEvents"]
    assert not [e for e in events if e.get("ph") in ("s", "f", "t")]
    assert "other_flow_cats" not in load_profile(str(base), Options(enable_operator_compare=True)).extra
    trace = next((Path(__file__).parent / "data" / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz"))
    doc = json.loads(gzip.decompress(trace.read_bytes()))
    n = 0
    for e in doc["traceEvents"]:
        if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g":
            e["cat"], n = "my_flow", n + 1
    assert n
    # an instant event of that category first: its category still holds flows (review)
    doc["traceEvents"].insert(0, {"ph": "i", "cat": "my_flow", "name": "mark", "pid": 1, "tid": 1, "ts": 1, "s": "t"})
    renamed = tmp_path / "renamed.pt.trace.json"
    renamed.write_text(json.dumps(doc), encoding="utf-8")
    assert load_profile(str(renamed), Options(enable_operator_compare=True)).extra["other_flow_cats"] == ["my_flow"]
    # a category holding flow steps ("t") alone is not named: --gpu_flow_cat pairs only starts and ends
    doc["traceEvents"].insert(0, {"ph": "t", "cat": "step_flow", "id": 1, "name": "x", "pid": 1, "tid": 1, "ts": 2})
    renamed.write_text(json.dumps(doc), encoding="utf-8")
    assert load_profile(str(renamed), Options(enable_operator_compare=True)).extra["other_flow_cats"] == ["my_flow"]


def test_other_flow_categories_named_up_to_three(tmp_path, caplog) -> None:
    """The "no flow event" warning names up to three of the other flow categories (sorted), then "...": the
    alexnet trace with its ac2g flows renamed my_flow and its first two, then three, flow starts given categories
    of their own (synthetic: no sample holds flows of several unknown categories)."""
    import gzip
    import json

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    trace = next((Path(__file__).parent / "data" / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz"))
    doc = json.loads(gzip.decompress(trace.read_bytes()))
    flows = [e for e in doc["traceEvents"] if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g"]
    starts = [e for e in flows if e["ph"] == "s"]
    assert len(starts) >= 3
    for e in flows:
        e["cat"] = "my_flow"
    for extra, named in ((("my_flow_b", "my_flow_c"), "'my_flow', 'my_flow_b', 'my_flow_c'"),
                         (("my_flow_b", "my_flow_c", "my_flow_d"), "'my_flow', 'my_flow_b', 'my_flow_c', ...")):
        for e, cat in zip(starts[:len(extra)], extra, strict=True):
            e["cat"] = cat
        renamed = tmp_path / f"renamed{len(extra)}.pt.trace.json"
        renamed.write_text(json.dumps(doc), encoding="utf-8")
        base = load_profile(str(renamed), Options(enable_operator_compare=True))
        assert set(base.flows["cat"]) == {"fwdbwd"}  # only forward-backward links: none to a kernel
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            optree.op_tree(ctx_of(base, base), "base")
        assert caplog.messages == [f"Can't find any flow event in the file: {renamed} (both sides: it holds flows of "
                                   "category "
                                   f"{named}: if those link ops to kernels, pass --gpu_flow_cat)"]


def test_gpu_flow_cat_matching_no_flow_names_the_trace_flow_categories(tmp_path, caplog) -> None:
    """--gpu_flow_cat naming no flow of the trace said "none of category 'xyz'" without the categories the trace does
    hold, so the user had to search the trace for the right one: the warning names them (but fwdbwd, op to op),
    three at most, sorted, read here from the raw JSON. The timesformer excerpt as recorded (ac2g flows alone), with
    one launch's flow renamed my_flow (a category the loader scans for only when the option matched nothing), with
    two more renamed (four categories: three named, then "..."), and without its flow events (synthetic)."""
    import json

    from msprof_compare import api

    src = Path(__file__).parent / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
    doc = json.loads(src.read_text())
    events = doc["traceEvents"]
    ids = list(dict.fromkeys(e["id"] for e in events if e.get("ph") in ("s", "f")))

    def warned(renames: dict, drop: bool = False) -> tuple[list[str], str]:
        out = json.loads(json.dumps(doc))
        for e in out["traceEvents"]:
            if e.get("ph") in ("s", "f") and e["id"] in renames:
                e["cat"] = renames[e["id"]]
        if drop:
            out["traceEvents"] = [e for e in out["traceEvents"] if e.get("ph") not in ("s", "f", "t")]
        held = sorted({e["cat"] for e in out["traceEvents"] if e.get("ph") in ("s", "f")} - {"fwdbwd"})
        f = tmp_path / f"t{len(renames)}{drop:d}.pt.trace.json"
        f.write_text(json.dumps(out))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            api.compare(str(src), str(f), gpu_flow_cat="xyz", enable_profiling_compare=True,
                        enable_operator_compare=True)
        return [m for m in caplog.messages if "Can't find any flow event" in m and str(f) in m], ", ".join(
            repr(c) for c in held[:3]) + (", ..." if len(held) > 3 else "")

    def line(f_cats: str) -> str:
        return "(comparison side: none of category 'xyz', the gpu_flow_cat given, so no op gets a kernel; " + f_cats \
            + ")"

    lines, named = warned({})
    assert named == "'ac2g'" and lines == [f"Can't find any flow event in the file: {tmp_path / 't00.pt.trace.json'} "
                                           + line(f"it holds flows of category {named}")]
    lines, named = warned({ids[0]: "my_flow"})
    assert named == "'ac2g', 'my_flow'" and len(lines) == 1 and lines[0].endswith(
        line(f"it holds flows of category {named}"))
    lines, named = warned({ids[0]: "my_flow", ids[1]: "zz_b", ids[2]: "zz_c"})
    assert named == "'ac2g', 'my_flow', 'zz_b', ..." and len(lines) == 1 and lines[0].endswith(
        line(f"it holds flows of category {named}"))
    lines, named = warned({}, drop=True)
    assert named == "" and len(lines) == 1 and lines[0].endswith(
        line("the trace holds no other flow that could link an op to its kernels"))


def test_gpu_flow_cat_replaces_default_categories() -> None:
    p = gpu_profile([("a", 0, 1)], [("k", 5, 2)], [(0, 5)])
    p.flows["cat"] = "my_flow"
    assert build_tree(p).kernel_num.tolist() == [0]
    assert build_tree(p, gpu_flow_cat="my_flow").kernel_num.tolist() == [1]
    p.flows["cat"] = "ac2g"
    assert build_tree(p, gpu_flow_cat="my_flow").kernel_num.tolist() == [0]


def test_top_layer_flattens_profiler_steps_and_selects_steps() -> None:
    p = gpu_profile([("ProfilerStep#1", 0, 10), ("a", 1, 1), ("b", 3, 1), ("normal", 20, 1),
                     ("ProfilerStep#2", 30, 10), ("c", 31, 1)])
    t = build_tree(p)
    assert t.names[t.top_layer()].tolist() == ["a", "b", "normal", "c"]
    assert t.names[t.top_layer(2)].tolist() == ["c"]
    assert t.top_layer(7).tolist() == []
    # the id is a number, as step_range reads it: "#050" is step 50 for every comparator
    p = gpu_profile([("ProfilerStep#050", 0, 10), ("a", 1, 1), ("ProfilerStep# 51", 20, 10), ("b", 21, 1)])
    t = build_tree(p)
    assert t.names[t.top_layer(50)].tolist() == ["a"] and t.names[t.top_layer(51)].tolist() == ["b"]
    p.kind, p.source = "NPU", "ascend_text"
    assert steps.step_range(p, 50) == (0, 10 * US)


def test_top_layer_opens_ops_around_step_markers() -> None:
    """An op outside every step that holds step markers (a record_function around the profiled loop) is replaced by
    its children at any depth, as a step node is: without a step its other children stay ops ("x", between the
    steps); with a step, the steps of any depth without a step ancestor are chosen. An op inside a step that
    holds a later step's marker (step 6 starting inside "y" of step 5) stays one op of the earlier step."""
    p = gpu_profile([("train_loop", 0, 100), ("epoch", 1, 60), ("ProfilerStep#1", 2, 30), ("a", 3, 1), ("b", 5, 1),
                     ("ProfilerStep#2", 40, 20), ("c", 41, 1), ("x", 70, 1), ("ProfilerStep#3", 80, 10), ("d", 81, 1),
                     ("ProfilerStep#5", 200, 100), ("y", 210, 50), ("e", 211, 1), ("ProfilerStep#6", 250, 50),
                     ("f", 251, 1), ("g", 270, 1), ("after", 400, 1)])
    t = build_tree(p)
    assert t.names[t.children(-1)].tolist() == ["train_loop", "ProfilerStep#5", "after"]
    assert t.names[t.top_layer()].tolist() == ["a", "b", "c", "x", "d", "y", "after"]  # y holds step 6: f, g
    assert [t.names[t.top_layer(s)].tolist() for s in (1, 2, 3, 5)] == [["a", "b"], ["c"], ["d"], ["y"]]
    assert t.top_layer(6).tolist() == []
    # no step marker below the top level: an op is an op, whatever it holds (the tracelens step annotations)
    t = build_tree(gpu_profile([("execute_8", 0, 100), ("a", 1, 1), ("ProfilerStep#1", 200, 10), ("b", 201, 1)]))
    assert t.names[t.top_layer()].tolist() == ["execute_8", "b"] and t.names[t.top_layer(1)].tolist() == ["b"]


def test_backward_split_reference_fact() -> None:
    # reference-2 §2.4: base A(t1) B(t2) C(t2) D(t1), comparison A(t8) B(t9) Y(t9) D(t8), bwd tids 2 / 9
    base = gpu_profile([("A", 0, 1, 1), ("B", 2, 1, 2), ("C", 4, 1, 2), ("D", 6, 1, 1)], bwd=2)
    comp = gpu_profile([("A", 0, 1, 8), ("B", 2, 1, 9), ("Y", 4, 1, 9), ("D", 6, 1, 8)], bwd=9)
    pairs = operator_pairs(ctx_of(base, comp))
    got = [(pairs.base.names[i] if i >= 0 else None, pairs.comparison.names[j] if j >= 0 else None)
           for i, j in zip(pairs.ia.tolist(), pairs.ib.tolist(), strict=True)]
    assert got == [("A", "A"), ("B", "B"), (None, "Y"), ("C", None), ("D", "D")]


def test_backward_split_on_named_threads() -> None:
    """reference-2 §2.4 pairs the top layer part by part (forward part with forward part, backward with backward)
    when both sides know their backward thread. A trace whose tids are text reads them as codes below -1: the
    split went by ``backward_tid < 0`` ("unknown") while the cube-op rule went by ``!= -1``, so a named backward
    thread was none here and the lists were aligned whole, the comparison's B2 before the base's F1. One rule
    now (model.knows_backward_thread): named threads pair as the numeric ones do (F1 / F2, then B1 / B2)."""
    from msprof_compare.loaders.traceio import to_int

    fwd, bwd = to_int(["MainThread", "autograd thread"]).tolist()
    assert bwd < -1 and fwd < -1

    def pairs_with(f: int, b: int) -> list[tuple]:
        base = gpu_profile([("F1", 0, 1, 1), ("B1", 2, 1, 2)], bwd=2)
        comp = gpu_profile([("F2", 0, 1, f), ("B2", 2, 1, b)], bwd=b)
        pairs = operator_pairs(ctx_of(base, comp))
        return [(pairs.base.names[i] if i >= 0 else None, pairs.comparison.names[j] if j >= 0 else None)
                for i, j in zip(pairs.ia.tolist(), pairs.ib.tolist(), strict=True)]

    expected = [(None, "F2"), ("F1", None), (None, "B2"), ("B1", None)]
    assert pairs_with(8, 9) == expected
    assert pairs_with(fwd, bwd) == expected
    from msprof_compare.model import knows_backward_thread

    assert knows_backward_thread(bwd) and not knows_backward_thread(-1) and not knows_backward_thread(None)


def test_backward_split_first_parts_differ() -> None:
    # base starts with a backward part, comparison with a forward one and has more parts:
    # the comparison's first part is emitted unmatched, then parts pair from there
    base = gpu_profile([("B1", 0, 1, 2), ("F1", 2, 1, 1)], bwd=2)
    comp = gpu_profile([("F0", 0, 1, 8), ("B1", 2, 1, 9), ("F1", 4, 1, 8)], bwd=9)
    pairs = operator_pairs(ctx_of(base, comp))
    assert pairs.ia.tolist() == [-1, 0, 1]
    assert pairs.ib.tolist() == [0, 1, 2]


@pytest.mark.parametrize("late", ["base", "comparison"])
def test_step_without_operators_on_one_side(caplog: pytest.LogCaptureFixture, late: str) -> None:
    """reference-2 §2.3: a step whose ProfilerStep# op holds no operator on one side (that side's step 1 ends
    before its first op) is said in the original's warning, naming that side, and the other side's ops of that step
    are all unmatched, also where both sides know their backward thread (§2.4 split: no part on the empty side).
    Either side empty (mut72's ot_step: the warning's side)."""
    empty = gpu_profile([("ProfilerStep#1", 0, 10), ("a", 20, 1, 1), ("B", 22, 1, 2)], bwd=2, path="empty")
    full = gpu_profile([("ProfilerStep#1", 0, 10), ("a", 1, 1, 8), ("B", 3, 1, 9)], bwd=9, path="full")
    base, comp = (empty, full) if late == "base" else (full, empty)
    for p in (base, comp):
        p.kind, p.source = "NPU", "ascend_text"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        pairs = operator_pairs(ctx_of(base, comp, base_step=1, comparison_step=1))
    assert [m for m in caplog.messages if "step" in m] == [
        f"There is no operator infomation for step 1, please check the step id of empty. ({late} side)"]
    held, other = (pairs.ib, pairs.ia) if late == "base" else (pairs.ia, pairs.ib)
    assert other.tolist() == [-1, -1]
    assert (pairs.comparison if late == "base" else pairs.base).names[held].tolist() == ["a", "B"]


def test_drill_down_reference_fact() -> None:
    # max_kernel_num=5: P(10 kernels; c1, c2) vs P(10 kernels; c1, c3) -> (c1,c1),(None,c3),(c2,None)
    kern = [(f"k{i}", 100 + i, 1) for i in range(10)]
    base = gpu_profile([("P", 0, 10), ("c1", 1, 1), ("c2", 3, 1)], kern, [(1, 100 + i) for i in range(10)])
    comp = gpu_profile([("P", 0, 10), ("c1", 1, 1), ("c3", 3, 1)], kern, [(1, 100 + i) for i in range(10)])
    pairs = operator_pairs(ctx_of(base, comp, max_kernel_num=5))
    got = [(pairs.base.names[i] if i >= 0 else None, pairs.comparison.names[j] if j >= 0 else None)
           for i, j in zip(pairs.ia.tolist(), pairs.ib.tolist(), strict=True)]
    assert got == [("c1", "c1"), (None, "c3"), ("c2", None)]
    # without the option the top-level pair stays
    assert len(operator_pairs(ctx_of(base, comp))) == 1
    # reference-2 §2.5: max(kernel_num) <= max_kernel_num keeps the pair (10 kernels, limit 10: kept)
    assert len(operator_pairs(ctx_of(base, comp, max_kernel_num=10))) == 1
    assert len(operator_pairs(ctx_of(base, comp, max_kernel_num=9))) == 3
    # one child per side (P -> c1 -> c2 over the 10 kernels): equal keys pair and drill on, others do not pair
    base = gpu_profile([("P", 0, 10), ("c1", 0, 5), ("c2", 1, 3)], kern, [(1, 100 + i) for i in range(10)])
    comp = gpu_profile([("P", 0, 10), ("c1", 0, 5), ("c3", 1, 3)], kern, [(1, 100 + i) for i in range(10)])
    pairs = operator_pairs(ctx_of(base, comp, max_kernel_num=5))
    got = [(pairs.base.names[i] if i >= 0 else None, pairs.comparison.names[j] if j >= 0 else None)
           for i, j in zip(pairs.ia.tolist(), pairs.ib.tolist(), strict=True)]
    assert got == [(None, "c3"), ("c2", None)]


def test_keys_name_map_and_input_shape() -> None:
    p = gpu_profile([("aten::mm", 0, 1), ("aten::add", 2, 1)])
    p.ops["input_dims"] = ["[[1, 1], [1, 1]]", "N/A"]
    t = build_tree(p)
    assert op_keys(t, {}, True).tolist() == ["aten::mm1,1;\r\n1,1", "aten::addN/A"]
    assert op_keys(t, {"aten::mm": "mm"}, False).tolist() == ["mm", "aten::add"]
    assert op_keys(t, {"aten::mm": "mm"}, True).tolist()[0] == "mm1,1;\r\n1,1"


def test_npu_kernel_text_with_input_shapes_and_hccl_pool() -> None:
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    p.ops = frame("ops", {"name": ["aten::add", "HcclAllreduce"], "cat": ["cpu_op"] * 2, "ts": [0, 10 * US],
                          "dur": [5 * US, 5 * US], "pid": [1, 1], "tid": [1, 1]})
    p.kernels = frame("kernels", {"name": ["Add"], "cat": ["npu_task"], "ts": [100 * US], "dur": [5 * US],
                                  "pid": [2], "tid": [3], "task_id": [5], "task_type": ["AI_CORE"]})
    p.comm = frame("comm", {"name": ["hcom_allReduce__1_0_1"], "ts": [200 * US], "dur": [30 * US], "pid": [4],
                            "tid": [0], "lane": ["op"]})
    p.flows = frame("flows", {"id": ["1", "2"], "cat": ["async_npu"] * 2, "s_ts": [0, 10 * US],
                              "f_ts": [100 * US, 200 * US], "f_pid": [2, 4], "f_tid": [3, 0]})
    p.kernel_details = pd.DataFrame({"Input Shapes": ['"2,3;3,4"'], "ts": [100 * US]})
    t = build_tree(p, with_comm=True)
    assert t.kernel_num.tolist() == [1, 1]
    text = t.kernel_text()
    assert text[0] == 'Add, 5, AI_CORE, [input shapes: "2,3;3,4"] [duration: 5.0]\n'
    assert text[1] == "hcom_allReduce__1_0_1, None, None [duration: 30.0]\n"
    assert build_tree(p, with_comm=False).kernel_num.tolist() == [1, 0]


def test_match_last_equals_a_dict_lookup():
    """The sort-based multi-key join against a plain dict (last duplicate wins), on random keys."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    keys = st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(-(2**62), 2**62) | st.integers(0, 4))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(keys, max_size=30), st.lists(keys, max_size=30))
    def check(left, right):
        want = {}
        for i, k in enumerate(right):
            want[k] = i
        got = optree.match_last(tuple(np.array([k[c] for k in left], np.int64) for c in range(3)),
                                tuple(np.array([k[c] for k in right], np.int64) for c in range(3)))
        assert got.tolist() == [want.get(k, -1) for k in left]

    check()


def test_driver_launched_kernels_go_to_the_innermost_op_around_the_call() -> None:
    """cuLaunchKernel (cuda_driver) is no op: its kernel counts for the innermost op holding the call; a
    call outside every op gives its kernel to none; an op starting where the call ends is not its child."""
    from msprof_compare.compare import api_stats

    p = gpu_profile([("aten::addmm", 10, 100), ("cuLaunchKernel", 20, 10), ("cudaLaunchKernel", 30, 40),
                     ("cuLaunchKernel", 200, 5), ("aten::add", 300, 100), ("aten::fill_", 310, 10),
                     ("cuLaunchKernel", 350, 5)],
                    [("gemm_drv", 500, 8), ("gemm_rt", 520, 4), ("orphan", 600, 2), ("add_drv", 700, 3)],
                    [(20, 500), (30, 520), (200, 600), (350, 700)])
    p.ops.loc[p.ops["name"] == "cuLaunchKernel", "cat"] = "cuda_driver"
    p.ops.loc[p.ops["name"] == "cudaLaunchKernel", "cat"] = "cuda_runtime"
    tree = build_tree(p)
    # driver calls are not nodes
    assert tree.names.tolist() == ["aten::addmm", "cudaLaunchKernel", "aten::add", "aten::fill_"]
    # addmm: its own driver kernel + the runtime one's; aten::add holds the call made after fill_ ended
    assert tree.device_ns.tolist() == [12 * US, 4 * US, 3 * US, 0]
    order, _, self_ns = api_stats._calls(tree)
    assert tree.names[order].tolist() == ["aten::addmm", "cudaLaunchKernel", "aten::add", "aten::fill_"]
    assert (self_ns[order] // US).tolist() == [60, 40, 90, 10]  # 100 - 40: the driver call is not a child


def test_gpu_flow_cat_that_matches_nothing_says_so(caplog) -> None:
    """With --gpu_flow_cat given, the warning names that category instead of advising the option again."""
    base = gpu_profile([("a", 0, 1)], [("k", 5, 1)], [(0, 5)], path="base.json")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        optree.op_tree(ctx_of(base, base, gpu_flow_cat="NoSuchCat"), "base")
    assert "Can't find any flow event in the file: base.json (both sides: none of category 'NoSuchCat', the " \
           "--gpu_flow_cat " \
           "given, so no op gets a kernel; it holds flows of category 'ac2g')" in caplog.text
    with pytest.raises(UsageError, match="--gpu_flow_cat is blank"):
        build_options(gpu_flow_cat="  ")


def test_total_kernels_of_every_node_on_a_real_trace() -> None:
    """Total kernels are one gather over the subtree (an annotation holds thousands of nodes, a slice each
    took ~10 % of a compare): every node's list equals its own kernels, then each descendant's, breadth
    first, with the descendants found from the parent array alone."""
    from msprof_compare.loaders import load_profile

    p = load_profile(str(Path(__file__).parents[1] / "sample_data" / "bert-small_h100.json.gz"),
                     build_options(enable_operator_compare=True)[0])
    t = build_tree(p)
    children: dict[int, list[int]] = {}
    for i, up in enumerate(t.parent.tolist()):
        children.setdefault(up, []).append(i)
    checked = 0
    for node in range(len(t.parent)):
        order, level = [], [node]
        while level:  # breadth first, each level in trace order
            order += level
            level = [c for x in level for c in children.get(x, [])]
        expect = [k for x in order for k in t.kidx[t.kptr[x]:t.kptr[x + 1]].tolist()]
        assert t.total_kernels(node).tolist() == expect
        checked += len(order) > 2 and len(expect) > 0
    assert checked > 10  # nested nodes with kernels, not just leaves


def test_kernel_lines_read_input_shapes_as_pandas_does():
    """kernel_details' Input Shapes cells as ``fillna("").astype(str)`` reads them (synthetic cells: text, a
    missing value of each kind, a number); an empty shape adds no "[input shapes: ]" part; durations are the
    repr of the us value."""
    p = Profile(path="x", kind="NPU", source="ascend_text")
    shapes = ["1,2;3", None, np.nan, 4, "", pd.NA]
    p.kernel_details = pd.DataFrame({"ts": np.arange(6, dtype=np.int64) * 10,
                                     "Input Shapes": pd.Series(shapes, dtype=object)})
    pool = pd.DataFrame({"name": ["k"] * 6, "dur": [1000, 1234, 1, 10**7, 5, 3], "task_id": [7] * 6,
                         "task_type": ["AI_CORE"] * 6, "ts": np.arange(6, dtype=np.int64) * 10})
    want_shapes = p.kernel_details["Input Shapes"].fillna("").astype(str).tolist()
    assert want_shapes == ["1,2;3", "", "", "4", "", ""]
    want = [f"k, 7, AI_CORE{f', [input shapes: {s}]' if s else ''} [duration: {d / 1000!r}]\n"
            for s, d in zip(want_shapes, pool["dur"].tolist(), strict=True)]
    assert optree.kernel_lines(p, pool).tolist() == want


def test_kernel_pool_from_arrays_is_the_pandas_pool(monkeypatch) -> None:
    """The pool built from numpy columns (``_pool_arrays``) == the pandas take / concat it replaces: values,
    dtypes (object text kept object), columns and index, on the NPU excerpt (39 kernels, one HCCL op-lane row)
    and a GPU trace; a kernel column pandas holds in an extension dtype goes the pandas way."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    data = Path(__file__).parent / "data"
    npu = load_profile(str(data / "npu" / "rank0_ascend_pt"), Options())
    gpu = load_profile(str(data / "kineto" / "h100_timesformer_excerpt.pt.trace.json"), Options())
    assert (npu.comm["lane"] == "op").sum() == 1
    fast = [optree.kernel_pool(p, True) for p in (npu, gpu)]
    monkeypatch.setattr(optree, "_pool_arrays", lambda *a: None)
    slow = [optree.kernel_pool(p, True) for p in (npu, gpu)]
    for f, s in zip(fast, slow, strict=True):
        pd.testing.assert_frame_equal(f, s, check_exact=True)
        assert f.dtypes.tolist() == s.dtypes.tolist() and f.columns.dtype == s.columns.dtype
    assert fast[0]["task_type"].tolist()[-1] is None and fast[0]["task_id"].tolist()[-1] == -2
    monkeypatch.undo()
    monkeypatch.delattr(pd.DataFrame, "_from_arrays")  # a pandas without the private constructor: the fallback
    for f, p in zip(fast, (npu, gpu), strict=True):
        s = optree.kernel_pool(p, True)
        pd.testing.assert_frame_equal(f, s, check_exact=True)
        assert f.dtypes.tolist() == s.dtypes.tolist() and f.columns.dtype == s.columns.dtype
    monkeypatch.undo()
    npu.kernels = npu.kernels.assign(task_id=npu.kernels["task_id"].astype("Int64"))
    assert optree._pool_arrays(npu.kernels, None, npu.comm) is None
    assert str(optree.kernel_pool(npu, True)["task_id"].dtype) == "Int64"


def test_flow_category_hint_escapes_a_control_character_once(caplog) -> None:
    """A category name holding ESC is named with one escape (``$'my\\x1bflow'``, bash's quoting, which reads it
    back as the name): the name escaped before its repr read ``'my\\\\x1bflow'``, a backslash the trace never held
    (mut65)."""
    base = gpu_profile([("a", 0, 1)], [("k", 5, 1)], path="base.json")
    base.extra["other_flow_cats"] = ["my\x1bflow", "z\u202eflow"]
    unlinked = gpu_profile([("a", 0, 1)], [("k", 5, 1)], path="comp.json")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        optree.op_tree(ctx_of(base, unlinked), "base")
    assert caplog.messages == ["Can't find any flow event in the file: base.json (base side: it holds flows of "
                               "category $'my" + "\\" + "x1bflow', $'z" + "\\" + "u202eflow': if those link ops to "
                               "kernels, pass --gpu_flow_cat)"]


def test_no_flow_line_takes_the_reason_itself() -> None:
    """The "Can't find any flow event" line puts the reason it is given after the side, whole: the line took it by
    cutting the first two characters and the last one off a " (WHY)" hint, so a reason of another shape (one that
    ends in a parenthesis of its own) lost its last character. ``unmatched_flow_cat`` gives the reason, without a
    parenthesis around it, for a trace holding no flow (expected text written by hand)."""
    from msprof_compare.compare.breakdown_gpu import no_flow_line, unmatched_flow_cat

    prof = Profile(path="t.json", kind="GPU", source="kineto")
    assert unmatched_flow_cat(prof, "xyz") == ("none of category 'xyz', the --gpu_flow_cat given, so no op gets a "
                                               "kernel; the trace holds no other flow that could link an op to its "
                                               "kernels")
    assert no_flow_line(prof, "it holds flows of category 'a' (one)", "base side") == (
        "Can't find any flow event in the file: t.json (base side: it holds flows of category 'a' (one))")
    assert no_flow_line(prof, "no flow", "") == "Can't find any flow event in the file: t.json (no flow)"
