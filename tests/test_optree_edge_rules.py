"""Op-tree rules (reference-2 §2.2-§2.5) that a mutation pass over compare/optree.py found untested, each on an
edited copy of a real trace because no sample holds the case: ops sharing a start instant (the stable sort keeps
file order), a CUDA driver call at its op's end or at an op's start, forward ops of two threads in one part,
equal part counts with different first flags, and a drill-down where one side alone is over the limit. The
expected values are read off the JSON by hand (the arithmetic is in each docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msprof_compare.api import RunContext
from msprof_compare.compare.align import align
from msprof_compare.compare.optree import build_tree, op_keys, operator_pairs
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).parent / "data"
ALEXNET = DATA / "ops" / "alexnet_excerpt.pt.trace.json"
GPT = DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
ALEXNET_H200 = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
TEXT_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
L1_BWD_TID = 3105075  # the tid of the level1 trace's last fwdbwd flow end (§2.4)


def _opts(**kw):
    return build_options(enable_operator_compare=True, **kw)[0]


def _write(doc, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _pairs(base: Path, comp: Path, **kw):
    o = _opts(**kw)
    return operator_pairs(RunContext(load_profile(str(base), o), load_profile(str(comp), o), o))


def _named(pairs) -> list[tuple]:
    return [(pairs.base.names[i] if i >= 0 else None, pairs.comparison.names[j] if j >= 0 else None)
            for i, j in zip(pairs.ia.tolist(), pairs.ib.tolist(), strict=True)]


def test_ops_sharing_a_start_instant_nest_in_file_order(tmp_path) -> None:
    """§2.2: the ops are sorted with a STABLE sort, so of two ops starting at the same instant the one written
    first in the file opens first and holds the other. Edit of the AlexNet excerpt (its ops all start at
    distinct microseconds): each aten::convolution starts at its aten::conv2d's ts (written just before it), as
    a parent and child recorded in the same microsecond do. The top layer stays the nine ops of the unedited
    excerpt (conv2d, relu_ three times, then max_pool2d, adaptive_avg_pool2d, flatten) and every convolution
    is a child of a conv2d. An unstable sort puts some convolution first (mutant: argsort kind quicksort)."""
    doc = json.loads(ALEXNET.read_text())
    ev = doc["traceEvents"]
    moved = 0
    for prev, e in zip(ev, ev[1:], strict=False):
        if e.get("name") == "aten::convolution" and prev.get("name") == "aten::conv2d":
            e["ts"] = prev["ts"]
            moved += 1
    assert moved == 3
    tree = build_tree(load_profile(str(_write(doc, tmp_path, "same_ts.pt.trace.json")), _opts()))
    assert tree.names[tree.top_layer()].tolist() == ["aten::conv2d", "aten::relu_"] * 3 + [
        "aten::max_pool2d", "aten::adaptive_avg_pool2d", "aten::flatten"]
    conv = [i for i, name in enumerate(tree.names.tolist()) if name == "aten::convolution"]
    assert tree.names[tree.parent[conv]].tolist() == ["aten::conv2d"] * 3


def test_driver_call_at_its_ops_end_and_at_an_ops_start(tmp_path) -> None:
    """Driver-launched kernels (docs/differences.md, ``_driver_edges``): the kernel goes to the innermost op
    whose span holds the call, the end included (§2.2's inclusive rule), and a call starting at an op's own ts
    is already linked to that op by §2.1, so it is not given a second time. Edit of the GPT excerpt (no sample
    has either instant): the cuLaunchKernelEx in aten::addmm (ts 5224448304486.904, dur 114.808) and its ac2g
    flow start move to 5224448304601.712 = 486.904 + 114.808, the addmm's end; the cuLaunchKernelEx in the
    first aten::mm of AddmmBackward0 and its flow start move to that mm's ts 5224448320671.81.
    addmm owns the kernel at that flow's end, nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN (24.704 us),
    its aten::linear none of its own (a climb past the end would give it the kernel); the mm owns its kernel
    (nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coo..., 9.824 us) once (kernel_num 1), not twice."""
    doc = json.loads(GPT.read_text())
    moves = {5224448304587.67: 5224448304601.712, 5224448320707.839: 5224448320671.81}
    hit = 0
    for e in doc["traceEvents"]:
        if e.get("ts") in moves and (e.get("cat") == "cuda_driver" or (e.get("cat") == "ac2g" and e["ph"] == "s")):
            e["ts"] = moves[e["ts"]]
            hit += 1
    assert hit == 4
    tree = build_tree(load_profile(str(_write(doc, tmp_path, "drv.pt.trace.json")), _opts()))
    at = {int(t): i for i, t in enumerate(tree.ts.tolist())}
    addmm, mm = at[5224448304486904], at[5224448320671810]
    assert tree.names[[addmm, mm]].tolist() == ["aten::addmm", "aten::mm"]
    own = tree.kpool["name"][tree.own_kernels(addmm)].tolist()
    assert own == ["nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN"]
    assert tree.device_ns[addmm] == 24704
    linear = tree.parent[addmm]
    assert tree.names[linear] == "aten::linear" and tree.own_kernels(linear).size == 0
    assert (tree.kernel_num[mm], tree.device_ns[mm]) == (1, 9824)


@pytest.fixture(scope="module")
def l1_events() -> list[dict]:
    from conftest import SAMPLES

    src = SAMPLES / TEXT_L1
    if not src.is_file():
        pytest.skip(f"sample data not found at {src}")
    return json.loads(src.read_text(encoding="utf-8"))


def _l1_top_layer(events: list[dict]) -> list[dict]:
    """The children of the level1 trace's one ProfilerStep#50, by the cursor rule over the cpu_op events."""
    ops = sorted((e for e in events if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "cpu_op"),
                 key=lambda e: float(e["ts"]))
    assert ops[0]["name"] == "ProfilerStep#50"
    out, open_end = [], -1.0
    for o in ops[1:]:
        if float(o["ts"]) > open_end:
            out.append(o)
            open_end = float(o["ts"]) + float(o["dur"])
    return out


def _retid(events: list[dict], which: list[dict], tid: int) -> list[dict]:
    ids = {id(e) for e in which}
    return [dict(e, tid=tid) if id(e) in ids else e for e in events]


def test_forward_ops_of_two_threads_stay_one_part(l1_events, tmp_path) -> None:
    """§2.4: a new part starts only where the tid changes AND one of the two tids is the backward one, so
    consecutive forward ops of two threads stay together. Edit of the level1 text trace (all its forward ops
    run on one thread): its first top-layer op, enumerate(DataLoader)#..., runs on tid 3096505, as a data
    loader thread's op would. Top layer (cursor walk of the JSON): 31 forward ops on 3096504, 79 on the backward
    tid 3105075, 5 forward; the edited side keeps the same three parts, so against the unedited trace every
    top-layer op pairs with its twin: 115 rows, 115 matched (cutting at the new tid makes 4 parts against 3)."""
    top = _l1_top_layer(l1_events)
    tids = [o["tid"] for o in top]
    assert (len(top), tids[0], tids.count(L1_BWD_TID)) == (115, 3096504, 79)
    assert tids[31:110] == [L1_BWD_TID] * 79 and top[0]["name"].startswith("enumerate(DataLoader)")
    edited = _write(_retid(l1_events, top[:1], 3096505), tmp_path, "trace_view.json")
    from conftest import SAMPLES

    pairs = _pairs(edited, SAMPLES / TEXT_L1)
    assert (len(pairs), pairs.matched) == (115, 115)


def test_equal_part_counts_with_different_first_flags(l1_events, tmp_path) -> None:
    """§2.4: when the first parts' flags differ and both sides have as many parts, the comparison side's first
    part is the one emitted unmatched. Edit of the level1 text trace (no sample has the case): on the base the
    last 5 top-layer ops (Optimizer.step#SGD.step, 4 aten::item) run on the backward tid, so its parts are
    F(31) B(79 + 5); on the comparison the first 31 do, so its parts are B(31 + 79) F(5). The comparison's
    B(110) comes out unmatched first; then base F(31) pairs with comparison F(5): their only common name is
    aten::item (once among the 31), so 31 + 5 - 1 = 35 rows, 1 matched; then base B(84) unmatched.
    Rows 110 + 35 + 84 = 229, matched 1 (emitting the base's first part instead pairs the two B parts: >= 79)."""
    top = _l1_top_layer(l1_events)
    names = [o["name"] for o in top]
    assert names[110:] == ["Optimizer.step#SGD.step"] + ["aten::item"] * 4 and names[:31].count("aten::item") == 1
    base = _write(_retid(l1_events, top[110:], L1_BWD_TID), tmp_path, "base_trace_view.json")
    comp = _write(_retid(l1_events, top[:31], L1_BWD_TID), tmp_path, "comp_trace_view.json")
    pairs = _pairs(base, comp)
    assert (len(pairs), pairs.matched) == (229, 1)
    assert pairs.ia[:110].tolist() == [-1] * 110


def test_drill_down_when_one_side_alone_is_over_the_limit(tmp_path) -> None:
    """§2.5: a pair is drilled into when max(base kernel_num, comparison kernel_num) > --max_kernel_num, so one
    side over the limit is enough. Edit of the AlexNet excerpt: on the comparison the ac2g flow of the first
    aten::relu_'s launch (cudaLaunchKernel at 1695835585759242) starts at the first conv2d's third
    cudnn_convolution launch (1695835585758909) instead. Kernel counts from the JSON (one flow per
    cudaLaunchKernel): each aten::conv2d holds 3 cudnn_convolution launches + 1 add_ launch = 4, relu_ 1; the
    comparison's first conv2d 5, its first relu_ 0. With limit 4 (the least allowed) the first conv2d pair
    (4 vs 5) is drilled through convolution and _convolution (one child each, same counts) down to
    cudnn_convolution (3 vs 4), reshape (0), add_ (1), all <= 4; the other pairs stay (conv2d 4 vs 4, relu_ 1,
    max_pool2d 1, adaptive_avg_pool2d 1, flatten 0): 3 + 8 = 11 pairs, each with its twin; the same with the
    sides swapped."""
    doc = json.loads(ALEXNET.read_text())
    ev = doc["traceEvents"]
    (start,) = [e for e in ev if e.get("cat") == "ac2g" and e["ph"] == "s" and e["ts"] == 1695835585759242]
    start["ts"] = 1695835585758909
    comp = _write(doc, tmp_path, "moved_flow.pt.trace.json")
    pairs = _pairs(ALEXNET, comp, max_kernel_num=4)
    assert [b for b, _ in _named(pairs)] == ["aten::cudnn_convolution", "aten::reshape", "aten::add_"] + [
        "aten::relu_", "aten::conv2d"] * 2 + ["aten::relu_", "aten::max_pool2d", "aten::adaptive_avg_pool2d",
                                              "aten::flatten"]
    assert all(b == c for b, c in _named(pairs))
    # the same with the sides swapped: the base side alone over the limit
    swapped = _named(_pairs(comp, ALEXNET, max_kernel_num=4))
    assert swapped == _named(pairs)


def test_an_ops_flow_linked_and_driver_kernels_keep_the_flow_order(tmp_path) -> None:
    """An op's own kernels are listed in flow order (§2.1's kernel_dict order), the kernels it gets as the
    innermost op around a driver call (``_driver_edges``) merged in by the same order, not after the linked
    ones. Edit of the GPT excerpt (no op there has both): the ac2g flow 170069 (the cudaLaunchKernel at
    5224448320800.076 launching at::native::reduce_kernel) starts at aten::_cudnn_attention_forward's
    ts 5224448304794.323, the innermost op around the cuLaunchKernelEx at 5224448304911.175 (flow 164591, earlier in
    the file, to cudnn_generated_fort_native_sdpa_sm90_flash_fprop...). Own kernels: the flash kernel, then
    the reduce kernel."""
    doc = json.loads(GPT.read_text())
    (start,) = [e for e in doc["traceEvents"] if e.get("cat") == "ac2g" and e["ph"] == "s" and e["id"] == 170069]
    assert start["ts"] == 5224448320800.076
    start["ts"] = 5224448304794.323
    tree = build_tree(load_profile(str(_write(doc, tmp_path, "merge.pt.trace.json")), _opts()))
    (node,) = [i for i, t in enumerate(tree.ts.tolist()) if t == 5224448304794323]
    assert tree.names[node] == "aten::_cudnn_attention_forward"
    own = tree.kpool["name"][tree.own_kernels(node)].tolist()
    assert [k[:52] for k in own] == ["cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wg",
                                     "void at::native::reduce_kernel<128, 4, at::native::R"]


def test_npu_kernel_without_a_task_type_prints_none(l1_events, tmp_path) -> None:
    """§2.1: an NPU kernel line is ``name, Task Id, Task Type [duration: us]`` with the original's
    ``args.get("Task Type")``, so a kernel without that arg prints None (the loader keeps it as ""). Edit of the
    level1 text trace (every sample kernel has a Task Type): ReLU_0's kernel aclnnInplaceRelu_Relu_Relu (Task Id
    11055, AI_CORE, dur 15.5003125 us, read from the raw JSON) loses its "Task Type" arg."""
    events = [dict(e) for e in l1_events]
    (kernel,) = [e for e in events if e.get("ph") == "X" and e.get("name") == "aclnnInplaceRelu_Relu_Relu"
                 and e.get("args", {}).get("Task Id") == 11055]
    assert (kernel["dur"], kernel["args"]["Task Type"]) == (15.5003125, "AI_CORE")
    kernel["args"] = {k: v for k, v in kernel["args"].items() if k != "Task Type"}
    tree = build_tree(load_profile(str(_write(events, tmp_path, "trace_view.json")), _opts()), with_comm=True)
    lines = [t for t in tree.kernel_text().tolist() if t.startswith("aclnnInplaceRelu_Relu_Relu, 11055,")]
    assert lines == ["aclnnInplaceRelu_Relu_Relu, 11055, None [duration: 15.5]\n"]


def test_a_pair_whose_other_op_has_no_children_is_kept_over_the_limit(tmp_path) -> None:
    """§2.5: a pair is kept when either side has no children, whatever its kernel counts. Edits of the AlexNet
    excerpt: on the base the first aten::relu_'s flow starts at the first conv2d's third cudnn_convolution
    launch (as in the test above: that conv2d holds 5 kernels); on the comparison the first aten::conv2d loses
    every op inside it (the host ops starting in (1695835585757246, 1695835585759199], its end), so it is a
    leaf. Limit 4: the first conv2d pair (5 vs 0, the comparison's without children) stays, as do all the
    others (conv2d 4 vs 4, relu_ 0 or 1, max_pool2d 1, adaptive_avg_pool2d 1, flatten 0): the 9 top-layer
    pairs, each with its twin."""
    base_doc, comp_doc = json.loads(ALEXNET.read_text()), json.loads(ALEXNET.read_text())
    (start,) = [e for e in base_doc["traceEvents"]
                if e.get("cat") == "ac2g" and e["ph"] == "s" and e["ts"] == 1695835585759242]
    start["ts"] = 1695835585758909
    ev = comp_doc["traceEvents"]
    (conv,) = [e for e in ev if e.get("name") == "aten::conv2d" and e["ts"] == 1695835585757246]
    inside = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime")
              and conv["ts"] < e["ts"] <= conv["ts"] + conv["dur"]]
    assert len(inside) == 16
    comp_doc["traceEvents"] = [e for e in ev if not any(e is x for x in inside)]
    pairs = _pairs(_write(base_doc, tmp_path, "moved_flow.pt.trace.json"),
                   _write(comp_doc, tmp_path, "leaf_conv.pt.trace.json"), max_kernel_num=4)
    assert _named(pairs) == [(n, n) for n in ["aten::conv2d", "aten::relu_"] * 3 + [
        "aten::max_pool2d", "aten::adaptive_avg_pool2d", "aten::flatten"]]


@pytest.mark.parametrize(("base", "comp"), [(TEXT_L1, TEXT_L1.replace("level1", "level2")),
                                            (ALEXNET_H200, ALEXNET_H200)])
def test_drill_down_equals_a_literal_walk(samples, base, comp) -> None:
    """``children`` (one sort by parent for all nodes) and the drill-down's shortcut for one child per side with
    equal keys give what a literal §2.5 walk gives: each node's children by a scan of its subtree, every level
    paired by ``align``. Real pairs: NPU text level1/level2, an H200 AlexNet trace against itself."""
    base, comp = (p if isinstance(p, Path) else samples / p for p in (base, comp))
    pairs = _pairs(base, comp, max_kernel_num=4)
    ta, tb = pairs.base, pairs.comparison
    for t in (ta, tb):
        for node in range(-1, t.n):
            lo, hi = (0, t.n) if node < 0 else (node + 1, node + int(t.size[node]))
            assert t.children(node).tolist() == [c for c in range(lo, hi) if t.parent[c] == node]
    top = _pairs(base, comp)
    ka, kb = op_keys(ta, {}, False), op_keys(tb, {}, False)
    out: list[tuple[int, int]] = []
    todo = list(zip(top.ia.tolist(), top.ib.tolist(), strict=True))[::-1]
    shortcut = 0
    while todo:
        x, y = todo.pop()
        ca = ta.children(x).tolist() if x >= 0 else []
        cb = tb.children(y).tolist() if y >= 0 else []
        if not ca or not cb or max(ta.kernel_num[x], tb.kernel_num[y]) <= 4:
            out.append((x, y))
            continue
        shortcut += len(ca) == len(cb) == 1 and ka[ca[0]] == kb[cb[0]]
        ia, ib = align([ka[c] for c in ca], [kb[c] for c in cb])
        todo.extend([(ca[i] if i >= 0 else -1, cb[j] if j >= 0 else -1) for i, j in zip(ia, ib, strict=True)][::-1])
    assert list(zip(pairs.ia.tolist(), pairs.ib.tolist(), strict=True)) == out
    assert len(out) > len(top) and shortcut > 0
