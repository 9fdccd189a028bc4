"""Operator pairing rules on real traces (reference-2 §2.1-§2.5): step selection, backward parts, drill-down,
flow categories and kernel lines, each against figures computed from the raw events.

The AlexNet H200 trace (tests/data/kineto) is one ProfilerStep#50 of 112 top-layer ops: 31 forward ops on the
main thread (tid 522), 79 on autograd's backward thread (tid 572, the first fwdbwd flow end's), then 2 more on
the main thread. Edits of it (a tid, a flow, a few ops) are made in tmp_path and said in each docstring.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from msprof_compare import compare

DATA = Path(__file__).parent / "data"
ALEXNET = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
EXCERPT = DATA / "ops" / "alexnet_excerpt.pt.trace.json"
#: the GPU op categories these traces hold (reference-2 §2.1; cuda_driver calls are no ops, docs/differences.md)
OP_CATS = {"cpu_op", "user_annotation", "cuda_runtime"}
MAIN, BWD = 522, 572  # the AlexNet trace's main and backward threads
CONV_BWD = "autograd::engine::evaluate_function: ConvolutionBackward0"


def _doc(path: Path = ALEXNET) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


def _write(doc: dict, tmp_path: Path, name: str) -> str:
    out = tmp_path / name
    out.write_text(json.dumps(doc), encoding="utf-8")
    return str(out)


def _d(v) -> Decimal:
    return Decimal(str(v))  # the JSON number (or text) as written: exact


def _walk(ops: list[dict]) -> dict[int, list[int]]:
    """Children of each op (-1: the root) by the cursor walk of §2.2 over start-sorted ops: the open op is left
    while the next op starts strictly after its end; threads are ignored."""
    kids: dict[int, list[int]] = {}
    stack: list[int] = []
    for i, e in enumerate(ops):
        while stack and _d(e["ts"]) > _d(ops[stack[-1]]["ts"]) + _d(ops[stack[-1]]["dur"]):
            stack.pop()
        kids.setdefault(stack[-1] if stack else -1, []).append(i)
        stack.append(i)
    return kids


def _ops(events: list[dict], cats: set[str] = OP_CATS) -> list[dict]:
    """The op events stably sorted by start (ties keep file order, §2.2)."""
    return sorted((e for e in events if e.get("ph") == "X" and str(e.get("cat", "")).lower() in cats),
                  key=lambda e: _d(e["ts"]))


def _top_layer(events: list[dict]) -> tuple[list[dict], dict[int, list[int]], list[int]]:
    """(ops, children, top-layer op indices): the root's children with ProfilerStep# nodes replaced by theirs
    (§2.3, no step given)."""
    ops = _ops(events)
    kids = _walk(ops)
    top: list[int] = []
    for r in kids.get(-1, []):
        top += kids.get(r, []) if "ProfilerStep#" in ops[r]["name"] else [r]
    return ops, kids, top


def _subtree(kids: dict[int, list[int]], i: int) -> list[int]:
    out, todo = [], [i]
    while todo:
        x = todo.pop()
        out.append(x)
        todo += kids.get(x, [])
    return out


def _launches(events: list[dict]) -> list[tuple[Decimal, dict]]:
    """(flow start ts, kernel) of every ac2g flow whose end lies on a kernel or memcpy (§2.1)."""
    kernels = {(e["pid"], e["tid"], _d(e["ts"])): e for e in events
               if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")}
    starts = {e["id"]: _d(e["ts"]) for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    out = []
    for e in events:
        if e.get("ph") == "f" and e.get("cat") == "ac2g" and e["id"] in starts:
            k = kernels.get((e["pid"], e["tid"], _d(e["ts"])))
            if k is not None:
                out.append((starts[e["id"]], k))
    return out


def _in_span(op: dict, launches: list[tuple[Decimal, dict]], at: set[Decimal] | None = None) -> list[dict]:
    """Kernels launched from inside the op's span: those of its subtree (launch calls nest in their op); with
    ``at``, only flows starting where some op starts (an op gets the kernels of flows starting at its ts)."""
    lo = _d(op["ts"])
    hi = lo + _d(op["dur"])
    return [k for t, k in launches if lo <= t <= hi and (at is None or t in at)]


def _rows(sheet) -> list[tuple]:
    """(base name, comparison name) of each OperatorCompare row, None for an absent side."""
    def name(v):
        return v if isinstance(v, str) and v else None
    return [(name(a), name(b)) for a, b in zip(sheet["Operator Name"], sheet["Operator Name.1"], strict=True)]


def test_step_zero_selects_the_children_of_profiler_step_0(samples, tmp_path) -> None:
    """--base_step/--comparison_step 0 is a step like any other (§2.3): only the children of ProfilerStep#0 are
    compared, and a top-level op recorded after the step is dropped, as it is for every other id. Synthetic
    edit (no sample has a step 0, the id torch gives the first step of a profile without a schedule): the
    mstt advisor trace_view.json's ProfilerStep#1 renamed ProfilerStep#0 and ended 1 us before its last
    child, an aten::item, which so becomes a top-level op after the step."""
    src = samples / "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json"
    events = json.loads(src.read_text(encoding="utf-8"))
    step = next(e for e in events if e.get("name") == "ProfilerStep#1")
    ops = _ops(events)
    kids = _walk(ops)
    children = kids[ops.index(step)]
    last = ops[children[-1]]
    assert last["name"] == "aten::item" and len(children) == 69
    step["name"] = "ProfilerStep#0"
    step["dur"] = float(_d(last["ts"]) - _d(step["ts"]) - 1)
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    # independent: the walk over the edited events; the step keeps its first 68 children
    ops = _ops(events)
    kids = _walk(ops)
    want = [ops[i]["name"] for i in kids[ops.index(step)]]
    assert len(want) == 68 and [ops[r]["name"] for r in kids[-1]] == ["ProfilerStep#0", "aten::item"]
    res = compare(str(path), str(path), enable_operator_compare=True, disable_module=True,
                  base_step=0, comparison_step=0)
    rows = _rows(res.sheet("OperatorCompare"))
    assert rows == [(n, n) for n in want]
    stat = res.sheet("OperatorCompareStatistic").set_index("Operator Name")
    assert stat.loc["aten::item", "Base Operator Number"] == want.count("aten::item") == 2


def test_kernel_details_keep_the_nanosecond_durations() -> None:
    """Kernel Details lines read ``name [duration: us]`` with the duration as the trace wrote it (§2.1):
    Kineto 2.x writes ns resolution (80.992, 13.185), which the lines keep in full. Every OperatorCompare cell
    of the AlexNet self-compare against the kernels whose ac2g flows start inside that op's span."""
    events = _doc()["traceEvents"]
    ops, _, top = _top_layer(events)
    launches = _launches(events)
    res = compare(str(ALEXNET), str(ALEXNET), enable_operator_compare=True, disable_module=True)
    detail = res.sheet("OperatorCompare")
    assert detail["Operator Name"].tolist() == [ops[i]["name"] for i in top]
    odd = 0
    for i, cell, cell1 in zip(top, detail["Kernel Details"], detail["Kernel Details.1"], strict=True):
        want = sorted(f"{k['name']} [duration: {float(k['dur'])!r}]" for k in _in_span(ops[i], launches))
        assert sorted(ln for ln in cell.split("\n") if ln) == want, ops[i]["name"]
        assert cell1 == cell
        odd += sum(len(ln.rsplit(".", 1)[-1]) == 4 for ln in want)  # three decimals and "]"
    assert odd > 50  # most durations carry three decimals, which a rounding to 0.01 us would change


def _retid(events: list[dict], op: dict, tid: int) -> None:
    """Move one op event to another thread (the event itself, found by identity)."""
    (e,) = [x for x in events if x is op]
    e["tid"] = tid


def test_consecutive_forward_ops_of_two_threads_stay_one_part(tmp_path) -> None:
    """§2.4: a new part starts only where the tid changes AND one of the two tids is the backward thread, so
    consecutive forward ops of two threads stay one part. Synthetic edit: the last top-layer op
    (cudaDeviceSynchronize) moved from the main thread to tid 523. Both sides keep three parts (forward 31,
    backward 79, forward 2) and a self-compare pairs every op; cutting at 522 -> 523 would make four base
    parts and leave that op alone."""
    doc = _doc()
    ops, _, top = _top_layer(doc["traceEvents"])
    assert [ops[i]["tid"] for i in top] == [MAIN] * 31 + [BWD] * 79 + [MAIN] * 2
    assert ops[top[-1]]["name"] == "cudaDeviceSynchronize"
    _retid(doc["traceEvents"], ops[top[-1]], MAIN + 1)
    base = _write(doc, tmp_path, "retid.pt.trace.json")
    res = compare(base, str(ALEXNET), enable_operator_compare=True, disable_module=True)
    names = [ops[i]["name"] for i in top]
    assert _rows(res.sheet("OperatorCompare")) == [(n, n) for n in names]
    rate = res.frames["match_rate"].iloc[0]
    assert (rate["matched"], rate["base_total"], rate["comparison_total"]) == (112, 112, 112)


def test_first_parts_differ_with_as_many_parts_the_comparisons_first_goes_alone(tmp_path) -> None:
    """§2.4: when the first parts' flags differ, the side with more parts has its first part emitted unmatched;
    with as many parts on both sides it is the comparison's first part, and base part k pairs with
    comparison part k + 1. Synthetic edits of the same trace: base: the last top-layer op moved to the backward
    thread (parts forward 31, backward 79, forward 1, backward 1); comparison: the first one moved there
    (backward 1, forward 30, backward 79, forward 2). Expected: the comparison's first op alone in row 1, then
    30 + 79 + 1 pairs (forward 31 vs 30, backward 79 vs 79, forward 1 vs 2), the base's last op alone."""
    doc_b, doc_c = _doc(), _doc()
    ops_b, _, top = _top_layer(doc_b["traceEvents"])
    ops_c, _, top_c = _top_layer(doc_c["traceEvents"])
    assert [ops_c[i]["name"] for i in top_c] == [ops_b[i]["name"] for i in top]
    _retid(doc_b["traceEvents"], ops_b[top[-1]], BWD)
    _retid(doc_c["traceEvents"], ops_c[top_c[0]], BWD)
    base = _write(doc_b, tmp_path, "base.pt.trace.json")
    comp = _write(doc_c, tmp_path, "comp.pt.trace.json")
    res = compare(base, comp, enable_operator_compare=True, disable_module=True)
    rows = _rows(res.sheet("OperatorCompare"))
    names = [ops_b[i]["name"] for i in top]
    assert rows[0] == (None, names[0])  # the comparison's first part, alone
    assert [r for r in rows if None in r] == [(None, names[0]), (names[0], None), (None, names[111]),
                                              (names[111], None)]
    rate = res.frames["match_rate"].iloc[0]
    assert (rate["matched"], rate["base_total"], rate["comparison_total"]) == (110, 112, 112)


def test_drill_down_keeps_a_pair_with_a_childless_side_and_judges_the_larger_kernel_count(tmp_path) -> None:
    """§2.5 with --max_kernel_num 9: a pair is kept when either side has no children, or when the LARGER of the
    two kernel counts is within the limit; otherwise it is replaced by its children's pairs. The AlexNet
    trace's five ConvolutionBackward0 evaluate_function ops launch 10, 10, 9, 10 and 6 kernels (from the raw
    flows). Synthetic edits of the comparison: one kernel of the first one removed (10 vs 9 kernels: drilled,
    since 10 > 9), the second one's descendant ops removed (no children, no kernel: kept).
    So three pairs of that name stay: the second, the third (9) and the fifth (6)."""
    doc = _doc()
    events = doc["traceEvents"]
    ops, kids, top = _top_layer(events)
    launches = _launches(events)
    conv = [i for i in top if ops[i]["name"] == CONV_BWD]
    counts = [len(_in_span(ops[i], launches)) for i in conv]
    assert counts == [10, 10, 9, 10, 6] and all(kids.get(i) for i in conv)
    first, second = ops[conv[0]], ops[conv[1]]
    # the first: drop one kernel it launches
    kernel = _in_span(first, launches)[0]
    # the second: drop every op nested in it (its subtree but itself)
    gone = {id(ops[j]) for j in _subtree(kids, conv[1]) if j != conv[1]} | {id(kernel)}
    assert len(gone) > 1
    doc["traceEvents"] = [e for e in events if id(e) not in gone]
    comp = _write(doc, tmp_path, "comp.pt.trace.json")
    # independent: the rule over (base count, comparison count, both have children) per op, limit 9
    ops_c = _ops(doc["traceEvents"])
    kids_c = _walk(ops_c)
    starts = {_d(e["ts"]) for e in ops_c}
    edited = _launches(doc["traceEvents"])
    comp_counts = [len(_in_span(ops[i], edited, starts)) for i in conv]
    assert comp_counts == [9, 0, 9, 10, 6]
    both_have_children = [bool(kids_c.get(ops_c.index(ops[i]))) for i in conv]
    assert both_have_children == [True, False, True, True, True]
    kept = [i for i, b, c, both in zip(conv, counts, comp_counts, both_have_children, strict=True)
            if not both or max(b, c) <= 9]
    assert kept == [conv[1], conv[2], conv[4]]
    res = compare(str(ALEXNET), comp, enable_operator_compare=True, disable_module=True, max_kernel_num=9)
    detail = res.sheet("OperatorCompare")
    pairs = detail[(detail["Operator Name"] == CONV_BWD) & (detail["Operator Name.1"] == CONV_BWD)]
    assert len(pairs) == 3
    # the kept childless pair: the base op's ten kernels against none
    row = pairs.iloc[0]
    want_us = sum(_d(k["dur"]) for k in _in_span(second, launches))
    assert row["Device Duration(us)"] == pytest.approx(float(want_us), abs=1e-6)
    assert (row["Kernel Details.1"], row["Device Duration(us).1"]) == ("", 0)
    assert len([ln for ln in row["Kernel Details"].split("\n") if ln]) == 10
    assert [c["Device Duration(us).1"] > 0 for _, c in pairs.iloc[1:].iterrows()] == [True, True]


def test_gpu_flow_cat_is_matched_whatever_its_case(tmp_path, caplog) -> None:
    """--gpu_flow_cat names a category as the trace writes it, in any case: categories compare lower-cased
    (reference-2 §2.1), so flows of category "My_Flow" link ops to kernels under --gpu_flow_cat My_Flow.
    Synthetic edit: the AlexNet excerpt's ac2g flows renamed My_Flow; every top-level op's device time must
    equal the sum of the kernels whose flows start in its span (from the raw events)."""
    import logging

    doc = _doc(EXCERPT)
    n = 0
    for e in doc["traceEvents"]:
        if e.get("cat") == "ac2g":
            e["cat"], n = "My_Flow", n + 1
    assert n
    path = _write(doc, tmp_path, "my_flow.pt.trace.json")
    events = _doc(EXCERPT)["traceEvents"]
    ops, _, top = _top_layer(events)
    launches = _launches(events)
    want = [float(sum(_d(k["dur"]) for k in _in_span(ops[i], launches))) for i in top]
    assert sum(w > 0 for w in want) >= 5
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(path, path, enable_operator_compare=True, disable_module=True, gpu_flow_cat="My_Flow")
    assert not [m for m in caplog.messages if "flow event" in m]
    detail = res.sheet("OperatorCompare")
    assert detail["Operator Name"].tolist() == [ops[i]["name"] for i in top]
    assert detail["Device Duration(us)"].tolist() == pytest.approx(want, abs=1e-6)
    stat = res.sheet("OperatorCompareStatistic")
    total = Counter()
    for i, w in zip(top, want, strict=True):
        total[ops[i]["name"]] += w
    got = dict(zip(stat["Operator Name"], stat["Base Device Duration(ms)"], strict=True))
    assert got == pytest.approx({k: v / 1000 for k, v in total.items()}, abs=1e-9)


GPT = DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"


def _first_driver_call(events: list[dict]) -> tuple[dict, dict, dict]:
    """The excerpt's first cuLaunchKernelEx (cat cuda_driver), its ac2g flow start, and the innermost op
    holding it (the last-starting op whose span holds the call: aten::addmm of the qkv projection)."""
    call = next(e for e in events if e.get("cat") == "cuda_driver")
    t = _d(call["ts"])
    flow = next(e for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g" and _d(e["ts"]) == t)
    holder = [o for o in _ops(events) if _d(o["ts"]) <= t <= _d(o["ts"]) + _d(o["dur"])][-1]
    assert call["name"] == "cuLaunchKernelEx" and holder["name"] == "aten::addmm"
    return call, flow, holder


def test_a_driver_call_starting_with_its_op_counts_its_kernel_once(tmp_path) -> None:
    """A kernel launched through the driver (cuLaunchKernelEx: no op, docs/differences.md) goes to the innermost
    op holding the call, unless its flow starts at an op's own ts: then §2.1 already gives it to that op, and
    it must not be counted a second time. Synthetic edit of the GPT excerpt (a trace of microsecond resolution
    writes such ties): the first driver call and its flow start moved to the start of aten::addmm, which holds
    it. The top-level aten::linear's device time = the kernels launched in its span, each once."""
    doc = _doc(GPT)
    events = doc["traceEvents"]
    call, flow, holder = _first_driver_call(events)
    call["ts"] = flow["ts"] = holder["ts"]
    path = _write(doc, tmp_path, "tie.pt.trace.json")
    ops, _, top = _top_layer(events)
    linear = ops[top[0]]
    assert linear["name"] == "aten::linear"
    kernels = _in_span(linear, _launches(events))
    assert len(kernels) == 4 and len({id(k) for k in kernels}) == 4
    want = float(sum(_d(k["dur"]) for k in kernels))
    res = compare(path, path, enable_operator_compare=True, disable_module=True)
    row = res.sheet("OperatorCompare").iloc[0]
    assert row["Operator Name"] == "aten::linear"
    assert row["Device Duration(us)"] == pytest.approx(want, abs=1e-6)
    assert len([ln for ln in row["Kernel Details"].split("\n") if ln]) == 4


def test_a_driver_call_at_its_ops_end_instant_belongs_to_that_op(tmp_path) -> None:
    """The op holding a driver call includes its end instant, as a child starting at its parent's end is still
    its child (§2.2): the call's kernel goes to that op, not to its parent. Synthetic edit of the GPT excerpt:
    aten::addmm shortened to end exactly where the first cuLaunchKernelEx starts. Its device time
    (``build_tree``) = the kernels launched in its span [ts, end], the driver-launched one included."""
    from msprof_compare.compare.optree import build_tree
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    doc = _doc(GPT)
    events = doc["traceEvents"]
    call, _, holder = _first_driver_call(events)
    holder["dur"] = float(_d(call["ts"]) - _d(holder["ts"]))
    path = _write(doc, tmp_path, "end.pt.trace.json")
    kernels = _in_span(holder, _launches(events))
    names = [k["name"] for k in kernels]
    assert len(kernels) == 1 and names[0].startswith("nvjet")  # the driver-launched GEMM alone
    tree = build_tree(load_profile(path, build_options(enable_operator_compare=True)[0]))
    (node,) = [i for i, n in enumerate(tree.names) if n == "aten::addmm"]
    assert tree.device_ns[node] == sum(round(_d(k["dur"]) * 1000) for k in kernels)


def test_an_npu_kernel_without_a_task_type_prints_none(tmp_path) -> None:
    """The original reads a hardware task's type with ``args.get("Task Type")`` and prints the None it gets
    for an absent key; the loader keeps an absent type as "" and the line printed ``11127, , [input
    shapes...``. Input: the torch_npu excerpt with "Task Type" deleted from the ReduceSum task whose Task Id
    is 11127 (a synthetic edit); the other ReduceSum task (11136) keeps its MIX_AIV."""
    src = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
    dst = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dst)
    trace = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    edited = [e for e in events if e.get("args", {}).get("Task Id") == 11127 and "Task Type" in e["args"]]
    assert [e["name"] for e in edited] == ["aclnnReduceSum_ReduceSumOpAiCore_ReduceSum"]
    del edited[0]["args"]["Task Type"]
    trace.write_text(json.dumps(events))
    res = compare(str(dst), str(src), enable_operator_compare=True)
    text = "\n".join(str(v) for s in res.sheets for v in s.data.to_numpy().ravel().tolist())
    assert "aclnnReduceSum_ReduceSumOpAiCore_ReduceSum, 11127, None, [input shapes:" in text
    assert "aclnnReduceSum_ReduceSumOpAiCore_ReduceSum, 11127, MIX_AIV" in text  # the comparison side's copy
    assert ", 11127, , " not in text
