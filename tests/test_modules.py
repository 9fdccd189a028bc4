"""ModuleCompareStatistic / ModuleCompare: synthetic trees checked by hand, and the original's output."""

from __future__ import annotations

import gzip
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_optree import US, ctx_of, gpu_profile  # tests/ is on sys.path (rootdir import mode)
from xlsxutil import read_xlsx

from msprof_compare import compare
from msprof_compare.api import RunContext
from msprof_compare.compare import modules, operators, optree
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.model import Profile, frame
from msprof_compare.options import build_options


def net_profile(linear: str = "nn.Module: Linear_0", gemm_us: int = 8, path: str = "p.json") -> Profile:
    """A tiny model: Net_0 { Linear_0 { aten::linear -> gemm }, ReLU_0 { aten::relu -> relu }, aten::flatten },
    then the backward op of Linear_0 (fwdbwd flow) launching a 4 us kernel."""
    p = gpu_profile(
        [("aten::linear", 11, 4), ("cudaLaunchKernel", 12, 1), ("aten::relu", 36, 5), ("cudaLaunchKernel", 37, 1),
         ("aten::flatten", 52, 2), ("autograd::engine::evaluate_function: AddmmBackward0", 70, 10),
         ("cudaLaunchKernel", 71, 1)],
        [("gemm", 200, gemm_us), ("relu", 220, 2), ("gemm_bwd", 240, 4)],
        [(12, 200), (37, 220), (71, 240)], path=path)
    p.ops.loc[p.ops["name"] == "aten::linear", "call_stack"] = "model.py(3): forward"
    fb = frame("flows", {"id": ["b1"], "cat": ["fwdbwd"], "s_ts": [11 * US], "s_pid": [1], "s_tid": [1],
                         "f_ts": [70 * US], "f_pid": [1], "f_tid": [1]})
    p.flows = pd.concat([p.flows, fb], ignore_index=True)
    p.python_functions = frame("python_functions", {
        "name": ["train.py(10): step", "nn.Module: Net_0", linear, "nn.Module: ReLU_0"],
        "ts": [0, 5 * US, 10 * US, 35 * US], "dur": [100 * US, 55 * US, 20 * US, 15 * US], "tid": [1] * 4})
    return p


def test_module_trees_by_hand() -> None:
    ctx = ctx_of(net_profile(), net_profile())
    side = modules.module_trees(ctx, "base")
    net = side.forward.children[0]
    lin, relu = net.children
    assert [net.module_name, lin.module_name] == ["/nn.Module: Net_0", "/nn.Module: Net_0/nn.Module: Linear_0"]
    assert [net.level, lin.level] == [2, 3]
    assert (lin.self_ns, relu.self_ns, net.self_ns, net.total_ns) == (8000, 2000, 0, 10000)
    assert [side.tree.names[o] for o in side.top_node[net.op_lo:net.op_hi]] == ["aten::flatten"]
    assert [side.tree.names[o] for o in side.top_node[lin.op_lo:lin.op_hi]] == ["aten::linear"]
    assert side.top_krows[side.top_kptr[lin.op_lo]:side.top_kptr[lin.op_lo + 1]].tolist() == [0]
    assert lin.call_stack == "train.py(10): step"
    (bwd,) = side.backward.children
    assert bwd.module_name == "/[ BACKWARD ]/nn.Module: Net_0/nn.Module: Linear_0"
    assert bwd.self_ns == 4000
    # the sheet's Module Class: the last path part without its instance number, forward and backward alike
    detail = next(s.data for s in modules.build(ctx) if s.name == "ModuleCompare")
    classes = {name: set(detail[detail.iloc[:, 3] == name].iloc[:, 1]) for name in set(detail.iloc[:, 3])}
    assert classes == {"/ Net_0": {"nn.Module: Net"}, "/ Net_0/ Linear_0": {"nn.Module: Linear"},
                       "/ Net_0/ ReLU_0": {"nn.Module: ReLU"}, "/[ BACKWARD ]/ Net_0/ Linear_0": {"nn.Module: Linear"}}


def test_call_stacks_stay_within_a_thread() -> None:
    """A data-loader thread's frame that spans the step is no caller of the main thread's code (the
    original nested all threads' frames into one tree); the backward module, on autograd's thread
    without frames, takes its stack from the thread of its forward module, which called backward()."""
    p = net_profile()
    p.python_functions = pd.concat([frame("python_functions", {
        "name": ["threading.py(1030): _bootstrap", "threading.py(355): wait"],
        "ts": [0, 1], "dur": [200 * US, 150 * US], "tid": [9, 9]}), p.python_functions], ignore_index=True)
    bwd_op = p.ops["name"] == "autograd::engine::evaluate_function: AddmmBackward0"
    p.ops.loc[bwd_op, "tid"] = 3
    p.ops.loc[p.ops["ts"] == 71 * US, "tid"] = 3  # its launch
    side = modules.module_trees(ctx_of(p, net_profile()), "base")
    net = side.forward.children[0]
    lin, relu = net.children
    assert [net.call_stack, lin.call_stack, relu.call_stack] == ["train.py(10): step"] * 3
    (bwd,) = side.backward.children
    assert bwd.call_stack == "train.py(10): step"
    # a module on a thread with no frames keeps its own chain of module names
    q = net_profile()
    q.python_functions.loc[0, "tid"] = 9
    side = modules.module_trees(ctx_of(q, net_profile()), "base")
    lin = side.forward.children[0].children[0]
    assert lin.call_stack == "nn.Module: Net_0;\nnn.Module: Linear_0"


def _nested(rng: np.random.Generator, lo: int, hi: int, depth: int) -> list[tuple[int, int]]:
    """Properly nested intervals inside (lo, hi): random children, recursively."""
    out: list[tuple[int, int]] = []
    if depth == 0 or hi - lo < 10:
        return out
    cuts = sorted({int(x) for x in rng.integers(lo + 1, hi, 4)})
    if len(cuts) < 4:
        return out
    for a, b in ((cuts[0], cuts[1]), (cuts[2], cuts[3])):
        out.append((a, b))
        out += _nested(rng, a, b, depth - 1)
    return out


def _brute_deepest(iv: list[tuple[int, int]], q: int) -> int:
    """The innermost interval strictly containing q (nested intervals: the shortest one)."""
    hits = [(b - a, i) for i, (a, b) in enumerate(iv) if a < q < b]
    return min(hits)[1] if hits else -1


def test_deepest_and_frames_survive_int64_key_overflow() -> None:
    """Times near the int64 limit: ``_Frames`` shifts each thread to its own stretch of the time axis
    (``thread * span + time``), which overflows int64 with a long time range and many threads (a long multi-GB
    trace) and silently nested wrongly once; ``_deepest`` must hold there too. Times near 1e18 ns reach that range
    with a handful of nodes."""
    rng = np.random.default_rng(7)
    big = 4 * 10**18
    iv = [(0, big)] + _nested(rng, 0, big, 6)
    iv.sort(key=lambda t: (t[0], -t[1]))
    start = np.array([a for a, _ in iv], np.int64)
    end = np.array([b for _, b in iv], np.int64)
    parent, _ = modules._nest(start, end)
    queries = np.concatenate([start, end, start + 1, end - 1, rng.integers(0, big, 300)]).astype(np.int64)
    got = modules._deepest(start, end, parent, queries)
    assert got.tolist() == [_brute_deepest(iv, int(q)) for q in queries]
    # frames of three threads over the same huge range: every lookup stays on its own thread
    tids = np.repeat([3, 5, 9], len(iv))
    frames = modules._Frames.build(np.array([f"f{i % len(iv)}@{t}" for i, t in enumerate(tids)], dtype=object),
                                   np.tile(start, 3), np.tile(end, 3), tids, 0, big)
    q_tid = rng.choice([3, 5, 9, 4], len(queries))
    found = frames.deepest(queries, q_tid)
    names = [frames.names[f] if f >= 0 else None for f in found.tolist()]
    want = [None if t == 4 or _brute_deepest(iv, int(q)) < 0 else f"f{_brute_deepest(iv, int(q))}@{t}"
            for q, t in zip(queries.tolist(), q_tid.tolist(), strict=True)]
    assert names == want


def test_module_name_test_is_str_lower_startswith() -> None:
    """``_is_module`` folds ASCII case on a fixed-width copy of the names instead of calling
    ``str.lower``: the same verdict for case variants, names the prefix only begins, characters that
    lower into ASCII (Kelvin sign, dotted capital I), surrogates, NULs and values that are no text."""
    names = ["nn.Module: Linear_0", "NN.MODULE:x", "nN.mOdUlE:", "nn.Module:", "nn.Module", "nn.module;x",
             "\u212an.Module:", "\u0130nn.Module:", "nn.Modul\u0130:", "\ud800nn.Module:", "nn.Module:\ud800",
             "nn.Module\x00:", " nn.Module:", "", "n", "torch/nn/modules/module.py(1501): _call_impl",
             "\u00f1n.Module:", None, 5, 2.5]
    want = [isinstance(n, str) and n.lower().startswith("nn.module:") for n in names]
    assert modules._is_module(np.array(names, dtype=object)).tolist() == want
    assert modules._is_module(np.array([], dtype=object)).tolist() == []
    # a long column is tested once per distinct value (numbered by a dict): the same verdicts, each name's own,
    # with equal names as one object or as copies, and values that are equal as keys (1, 1.0, True) or no key
    # equal to themselves (NaN) kept apart
    rng = np.random.default_rng(63)
    pool = [*names, 1, 1.0, True, float("nan"), "1"]
    picks = rng.integers(0, len(pool), modules.PER_NAME_MIN + 5).tolist()
    long = [pool[i] if i % 2 else (pool[i] + "x")[:-1] if isinstance(pool[i], str) else pool[i] for i in picks]
    got = modules._is_module(np.array(long, dtype=object))
    assert got.tolist() == [isinstance(n, str) and n.lower().startswith("nn.module:") for n in long]
    assert got.sum() > 0 and not got.all()


def test_module_name_test_takes_values_the_cast_refuses() -> None:
    """A list or a tuple among the names made ``_is_module`` raise ValueError (numpy's cast to a fixed-width array
    takes a sequence for a row), short column or long, where its unhashable-value branch meant to cast every name.
    The loaders give text alone (a Kineto name that is no string is refused by the decoder, below), so only a
    ``Profile`` built in Python holds one: it is no module now, and the text beside it keeps its verdict."""
    odd = [["nn.Module: x"], ("nn.Module: y",), {"nn.Module: z": 1}, None, 5]
    names = ["nn.Module: Linear_0", "NN.MODULE:x", "\u0130nn.Module:", "nn.Modul", *odd]
    want = [True, True, False, False, False, False, False, False, False]
    assert want == [isinstance(n, str) and n.lower().startswith("nn.module:") for n in names]
    short = np.empty(len(names), dtype=object)
    short[:] = names
    assert modules._is_module(short).tolist() == want
    long = np.empty(modules.PER_NAME_MIN + len(names), dtype=object)
    long[:] = [names[i % len(names)] for i in range(len(long))]
    assert modules._is_module(long).tolist() == [want[i % len(names)] for i in range(len(long))]


def test_kineto_name_that_is_no_text_is_refused(tmp_path: Path) -> None:
    """What a loader does with such a name: the timesformer excerpt (tests/data/kineto) with a python_function
    named by a list is refused in one line naming the event, so no list reaches ``_is_module`` from a trace."""
    src = Path(__file__).parent / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
    trace = json.loads(src.read_text())
    n = len(trace["traceEvents"])
    trace["traceEvents"].append({"ph": "X", "cat": "python_function", "name": ["nn.Module: x"], "pid": 1, "tid": 1,
                                 "ts": 1, "dur": 1})
    bad = tmp_path / "x.pt.trace.json"
    bad.write_text(json.dumps(trace))
    with pytest.raises(ProfileError) as e:
        load_profile(str(bad), build_options(enable_operator_compare=True)[0])
    assert str(e.value) == (f"{bad}: invalid trace event: event {n} of traceEvents (counting from 0; ph 'X') has name "
                            '["nn.Module: x"], a list, where a string is due')


def _descent(start: list[int], end: list[int], parent: list[int], q: int) -> int:
    """§3.3 read literally: from the root, take the last child (start order) starting at or before q
    and go down while it strictly holds q."""
    kids: dict[int, list[int]] = {}
    for i, p in enumerate(parent):
        kids.setdefault(p, []).append(i)
    cur = -1
    while True:
        before = [k for k in kids.get(cur, []) if start[k] <= q]
        if not before or not start[before[-1]] < q < end[before[-1]]:
            return cur
        cur = before[-1]


@pytest.mark.parametrize("seed", range(6))
def test_deepest_is_the_literal_descent(seed: int) -> None:
    """``_deepest`` climbs from the last node starting at or before ts instead of descending: the same
    node on cursor-rule trees whatever their shape, here with equal starts, zero durations and
    children outliving their parent (a child may start at its parent's end)."""
    rng = np.random.default_rng(seed)
    n = 60
    start = np.sort(rng.integers(0, 200, n)).astype(np.int64)
    end = start + rng.choice([0, 1, 3, 10, 40, 150], n)
    parent, _ = modules._nest(start, end)
    queries = np.concatenate([start, end, start - 1, start + 1, end - 1, end + 1, rng.integers(-5, 400, 100)])
    got = modules._deepest(start, end, parent, queries)
    s, e, p = start.tolist(), end.tolist(), parent.tolist()
    assert got.tolist() == [_descent(s, e, p, q) for q in queries.tolist()]


@pytest.mark.parametrize("seed", range(4))
def test_group_cummax_is_pandas_groupby_cummax(seed: int) -> None:
    """``_group_cummax`` (one accumulate over values shifted group by group) == pandas' groupby cummax it
    replaces, on sorted groups with repeated values, single-member groups, epoch-scale ns, negative values and
    spans too wide to shift (pandas answers those)."""
    rng = np.random.default_rng(seed)
    n = 300
    groups = np.sort(rng.integers(0, 40, n)).astype(np.int64)
    values = rng.integers(0, 50, n).astype(np.int64) * 10**15 + rng.integers(0, 3, n)
    wide = rng.integers(-2**62, 2**62, n)  # spans whose sum leaves int64: pandas' way
    far = values + 2**61  # values beyond the shifts' bound: pandas' way too
    for v in (values, values - 10**17, wide, far):
        want = pd.Series(v).groupby(groups).cummax().to_numpy(np.int64)
        assert modules._group_cummax(v, groups).tolist() == want.tolist()
    assert modules._group_cummax(np.empty(0, np.int64), np.empty(0, np.int64)).tolist() == []


def test_backward_op_is_the_last_op_at_the_flow_end() -> None:
    """The backward pseudo-module's op is the LAST op of the flow end's process starting at the flow end (a binary
    search over the start-ordered tree, as the pandas Index lookup it replaces); ops of other processes at that
    instant and flows ending where no op starts are skipped."""
    p = net_profile()
    extra = frame("ops", {"name": ["other_pid_op", "aten::first_at_70"], "ts": [70 * US, 70 * US],
                          "dur": [1 * US, 2 * US], "pid": [2, 1], "tid": [1, 1], "cat": ["cpu_op", "cpu_op"]})
    p.ops = pd.concat([extra.iloc[[1]], p.ops, extra.iloc[[0]]], ignore_index=True)
    lost = frame("flows", {"id": ["b2"], "cat": ["fwdbwd"], "s_ts": [36 * US], "s_pid": [1], "s_tid": [1],
                           "f_ts": [90 * US], "f_pid": [1], "f_tid": [1]})
    p.flows = pd.concat([p.flows, lost], ignore_index=True)
    side = modules.build_side(p, optree.build_tree(p))
    names = [m.module_name for m in side.backward.children]
    assert names == ["/[ BACKWARD ]/nn.Module: Net_0/nn.Module: Linear_0"]
    bw = side.backward.children[0]
    assert (bw.ts, bw.end) == (70 * US, 80 * US)  # AddmmBackward0 (the later op at 70 us), not the 2 us op


def test_module_sheets_by_hand() -> None:
    ctx = ctx_of(net_profile(), net_profile(gemm_us=10))
    sheets = operators.build(ctx)
    assert [s.name for s in sheets] == ["ModuleCompareStatistic", "ModuleCompare"]
    stat, detail = sheets[0].frame(), sheets[1].frame()
    assert list(stat.columns) == [
        "Order Id", "Module Class", "Module Level", "Module Name", "Operator Name", "Kernel Details",
        "Device Self Time(ms)", "Number", "Device Total Time(ms)", "Kernel Details.1", "Device Self Time(ms).1",
        "Number.1", "Device Total Time(ms).1", "Device Total Time Diff(ms)", "Device Self Time Diff(ms)",
        "Diff Total Ratio", "Base Call Stack", "Comparison Call Stack"]
    rows = stat.values.tolist()
    assert rows[0][:5] == [1, "nn.Module: Net", 1, "/ Net_0", "[ TOTAL ]"]
    assert rows[0][6:9] == [0, 1, 0.010] and rows[0][10:13] == [0, 1, 0.012]
    assert rows[0][13:] == [0.0, 0.0, 1.2, "train.py(10): step", "train.py(10): step"]
    assert rows[1][4:8] == ["aten::flatten", "", 0, 1] and rows[1][9:12] == ["", 0, 1]
    assert math.isnan(rows[1][8]) and math.isnan(rows[1][12])  # blank: a number column reads it as NaN
    lin_op = [r for r in rows if r[4] == "aten::linear"][0]
    assert lin_op[3] == "/ Net_0/ Linear_0" and lin_op[2] == 2
    assert lin_op[5] == "gemm, [number: 1], [duration_ms: 0.008]\n"
    assert lin_op[9] == "gemm, [number: 1], [duration_ms: 0.010]\n"
    assert lin_op[6] == 0.008 and lin_op[10] == 0.010 and lin_op[15] == 1.25
    bwd = [r for r in rows if r[3].startswith("/[ BACKWARD ]")][0]
    assert bwd[2] == 3 and bwd[4] == "[ TOTAL ]" and bwd[6] == 0.004
    d = detail.values.tolist()
    assert d[0][:5] == [1, "nn.Module: Net", 2, "/ Net_0", "TOTAL"] and d[0][6:9] == [0, 10.0, "TOTAL"]
    assert pd.isna(d[0][5])  # blank: a text column reads it as missing
    lin_row = [r for r in d if r[4] == "aten::linear"][0]
    assert lin_row[5] == "gemm [duration: 8.0]\n" and lin_row[6] == 8.0 and lin_row[10] == 10.0
    assert lin_row[13:] == [2.0, 1.25, "model.py(3): forward", "model.py(3): forward"]
    assert ctx.frames["match_rate"].iloc[0][["what", "matched"]].tolist() == ["modules", 4]


WITH_STACK = "If you want to see the operator's call stack, you must enable with_stack switch."


def test_with_stack_warning_only_without_stacks(caplog: pytest.LogCaptureFixture) -> None:
    """No op got slower, so every op call-stack cell is blank: that is not a trace without with_stack.
    Ops without a "Call stack" argument (PyTorch 2 writes with_stack as python_function events only)
    take the chain of their thread's frames; only without any frame does the warning show, and an op
    that got slower shows its "N/A"."""
    caplog.set_level("WARNING", logger="msprof-analyze")
    operators.build(ctx_of(net_profile(), net_profile()))
    assert WITH_STACK not in caplog.messages
    base, comp = net_profile(), net_profile(gemm_us=10)
    for p in (base, comp):
        p.ops["call_stack"] = "N/A"
    detail = operators.build(ctx_of(base, comp))[1].frame()
    assert WITH_STACK not in caplog.messages
    lin_row = detail[detail["Operator Name"] == "aten::linear"].values.tolist()[0]
    assert lin_row[13:] == [2.0, 1.25, "train.py(10): step", "train.py(10): step"]
    base, comp = net_profile(), net_profile(gemm_us=10)
    for p in (base, comp):
        p.ops["call_stack"] = "N/A"
        p.python_functions = p.python_functions.iloc[1:].reset_index(drop=True)  # module events only
    detail = operators.build(ctx_of(base, comp))[1].frame()
    assert caplog.messages.count(WITH_STACK) == 1
    lin_row = detail[detail["Operator Name"] == "aten::linear"].values.tolist()[0]
    assert lin_row[13:] == [2.0, 1.25, "N/A", "N/A"]


def test_op_call_stacks_from_frames_innermost_first() -> None:
    """An op's derived stack lists its thread's frames from the innermost out, like the "Call stack"
    argument, taken on the op's own thread; an op on a thread without frames keeps "N/A"."""
    p = net_profile()
    p.ops["call_stack"] = "N/A"
    p.python_functions = pd.concat([p.python_functions, frame("python_functions", {
        "name": ["model.py(3): forward", "threading.py(355): wait"], "ts": [10 * US + 500, 0],
        "dur": [2 * US, 90 * US], "tid": [1, 9]})], ignore_index=True)
    p.ops.loc[p.ops["name"] == "aten::relu", "tid"] = 3
    p.ops.loc[p.ops["name"] == "aten::flatten", "tid"] = 9
    side = modules.module_trees(ctx_of(p, net_profile()), "base")
    ks = list(range(len(side.top_node)))
    by_name = dict(zip(side.op_names[side.top_node].tolist(), side.top_stacks(ks), strict=True))
    assert by_name == {"aten::linear": "model.py(3): forward;\ntrain.py(10): step",
                       "aten::relu": "N/A", "aten::flatten": "threading.py(355): wait",
                       "cudaLaunchKernel": "train.py(10): step"}  # the backward launch, under Linear's backward


def test_op_name_map_renames_modules() -> None:
    base, comp = net_profile(), net_profile(linear="nn.Module: Dense_0")
    plain = modules.module_pairs(ctx_of(base, comp))[0]
    mapped = modules.module_pairs(ctx_of(base, comp, op_name_map="{'Dense': 'Linear'}"))[0]
    assert sum(1 for x, y in plain if x is not None and y is not None) == 2  # Net_0 and the backward module
    assert sum(1 for x, y in mapped if x is not None and y is not None) == 4


def test_op_name_map_renames_module_paths_in_one_pass(samples: Path, tmp_path: Path) -> None:
    """A replaced text is not looked up again, as for ops (exact lookup): the level-1 trace against a copy whose
    ReLU modules are named GELU. ``{'ReLU': 'GELU'}`` pairs them; the swap ``{'ReLU': 'GELU', 'GELU': 'ReLU'}``
    pairs none (base ReLU -> GELU, comparison GELU -> ReLU), where replacing key after key turned both into
    ReLU. Longest key first: ``Dropout`` is renamed whole, not as ``Drop`` + ``out``."""
    src = samples / TEXT_L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = src.read_text(encoding="utf-8")
    assert text.count('"nn.Module: ReLU_') == 7
    gelu = tmp_path / "trace_view.json"
    gelu.write_text(text.replace('"nn.Module: ReLU_', '"nn.Module: GELU_'), encoding="utf-8")

    def relu_pairs(op_name_map: str) -> int:
        """ModuleCompare TOTAL rows of a base ReLU module with comparison time (an absent side shows 0)."""
        detail = compare(str(src), str(gelu), op_name_map=op_name_map).sheet("ModuleCompare")
        total = detail[detail["Operator Name"] == "TOTAL"]
        return int(((total["Module Class"] == "nn.Module: ReLU") & (total["Device Total Time(us).1"] > 0)).sum())

    assert relu_pairs("{'ReLU': 'GELU'}") == 14  # 7 forward + 7 backward
    assert relu_pairs("{'ReLU': 'GELU', 'GELU': 'ReLU'}") == 0
    key = modules._module_keyer({"Drop": "X", "Dropout": "Y", "": "Z", "Linear": "Conv", "Conv": "Linear"})
    assert key("/ Net_0/ Dropout_0/ Drop_1/ Linear_0/ Conv_2") == "/ Net_0/ Y_0/ X_1/ Conv_0/ Linear_2"


def test_fallbacks_to_operator_level() -> None:
    with_mods, without = net_profile(), net_profile()
    without.python_functions = without.python_functions.iloc[:1]  # no nn.Module events
    assert [s.name for s in operators.build(ctx_of(with_mods, without))] == \
        ["OperatorCompareStatistic", "OperatorCompare"]
    assert [s.name for s in operators.build(ctx_of(with_mods, net_profile(), disable_module=True))] == \
        ["OperatorCompareStatistic", "OperatorCompare"]
    assert [s.name for s in operators.build(ctx_of(with_mods, net_profile(), disable_details=True))] == \
        ["ModuleCompareStatistic"]


def test_statistic_call_stack_is_the_first_instance() -> None:
    """reference-2 §3.7: a module name's group shows the call stack of its first instance, not a later one."""
    def mod(ts: int, stack: str) -> modules.Module:
        return modules.Module(name="nn.Module: A_0", ts=ts, end=ts + 5, parent=None, level=2,
                              module_name="/nn.Module: A_0", self_ns=1000, total_ns=2000, call_stack=stack)

    pairs = [(mod(0, "s.py(1): first"), mod(0, "t.py(1): first")), (mod(10, "s.py(2): later"), None)]
    (total,) = modules.statistic_frame(pairs, None, None).values.tolist()
    assert total[:5] == [1, "nn.Module: A", 1, "/ A_0", "[ TOTAL ]"]
    assert total[7:9] == [2, 0.004] and total[11:13] == [1, 0.002]
    assert total[16:] == ["s.py(1): first", "t.py(1): first"]


# ---------------------------------------------------------------------------------- reference pairs

REF_PAIRS = {
    "1-npu-text-l1-vs-l2": ("msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
                            "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"),
    "2-npu-text-l0-rank0-vs-rank1": ("msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
                                     "msinsight/test/data/pytorch/text/level0/rank1_ascend_pt"),
    "6b-gpu-timesformer-h100-self": (
        "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
        "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"),
}
# Kernel text differs below 1 ns (docs/differences.md); openpyxl shows "\r" as "_x000D_".
_TEXT_SKIP = ("Kernel Details",)


def _same(x, y) -> bool:
    xn = x is None or (isinstance(x, float) and np.isnan(x)) or x == ""
    yn = y is None or (isinstance(y, float) and np.isnan(y)) or y == ""
    if xn or yn:
        return xn and yn
    if isinstance(x, (int, float, np.number)) and isinstance(y, (int, float, np.number)):
        return bool(np.isclose(float(x), float(y), rtol=5e-3, atol=1e-3))
    return str(x).replace("_x000D_", "\r") == str(y)


def _foreign_frames(trace: Path) -> set[str]:
    """Names of call functions (non-module python functions) seen only on threads that run no
    nn.Module: the original let them into the main thread's call stacks, we do not."""
    opener = gzip.open if trace.suffix == ".gz" else open
    with opener(trace, "rt") as fh:
        events = json.load(fh)
    events = events["traceEvents"] if isinstance(events, dict) else events
    by_tid: dict[object, set[str]] = defaultdict(set)
    for e in events:
        if str(e.get("cat", "")).lower() == "python_function" and e.get("ph") == "X":
            by_tid[e["tid"]].add(e["name"])
    module_tids = {t for t, names in by_tid.items() if any(n.lower().startswith("nn.module:") for n in names)}
    main = set().union(*(by_tid[t] for t in module_tids))
    return set().union(*(names for t, names in by_tid.items() if t not in module_tids)) - main


def _without(stack, foreign: set[str]):
    if not isinstance(stack, str) or not foreign:
        return stack
    return ";\n".join(f for f in stack.split(";\n") if f not in foreign)


@pytest.mark.parametrize("pair", sorted(REF_PAIRS))
def test_reference_pairs(pair: str, samples: Path, reference_outputs: Path) -> None:
    base, comp = REF_PAIRS[pair]
    trace = samples / base
    if trace.is_dir():
        trace = trace / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    foreign = _foreign_frames(trace)
    # 6b: a tqdm monitor thread's frames (docs/differences.md, call stacks); the NPU runs have none
    assert bool(foreign) == pair.startswith("6b"), sorted(foreign)
    fixed = 0
    # the reference ran every comparison; communication on adds the HCCL ops to the NPU kernel pool
    res = compare(str(samples / base), str(samples / comp), enable_operator_compare=True,
                  enable_communication_compare=pair.startswith(("1-", "2-")))
    with pd.ExcelFile(reference_outputs / pair / "performance_comparison_result.xlsx") as xl:
        refs = {name: read_xlsx(xl, name, header=2) for name in ("ModuleCompareStatistic", "ModuleCompare")}
    for name, ref in refs.items():
        ours = res.sheet(name)
        assert list(ours.columns) == list(ref.columns)
        assert len(ours) == len(ref)
        for col in ref.columns:
            if col.startswith(_TEXT_SKIP):
                continue
            if col.endswith("Call Stack"):
                want = ref[col].map(lambda s: _without(s, foreign))
                fixed += sum(isinstance(a, str) and a != b for a, b in zip(want, ref[col], strict=True))
                ref[col] = want
            theirs, mine = ref[col], ours[col]  # looked up once: per cell, the two lookups were most of this test
            bad = [i for i in range(len(ref)) if not _same(theirs.iat[i], mine.iat[i])]
            assert not bad, (name, col, bad[:5], ref[col].iat[bad[0]], ours[col].iat[bad[0]])
        for col in [c for c in ref.columns if c.startswith("Kernel Details")]:
            # same kernels in the same order; durations equal to the nanosecond
            def strip(s):
                return ([ln.rsplit(" [duration", 1)[0] for ln in str(s).split("\n")]
                                 if isinstance(s, str) else [])
            r = [strip(v) for v in ref[col]]
            o = [strip(v) for v in ours[col]]
            # Excel cuts cells at 32767 characters: compare the lines the reference kept
            assert all(x[:-1] == y[:len(x) - 1] for x, y in zip(r, o, strict=True)), (name, col)
    assert (fixed > 0) == bool(foreign), fixed


@pytest.mark.parametrize("pair", ["1-npu-text-l1-vs-l2", "2-npu-text-l0-rank0-vs-rank1"])
def test_kernel_summaries_round_their_ms_as_the_original(pair: str, samples: Path, reference_outputs: Path) -> None:
    """ModuleCompareStatistic's `[duration_ms: x.xxx]` of a kernel name is its whole-ns sum to the us, a half up,
    as the original rounds its exact decimals: aclnnInplaceRelu_Relu_Relu's 15.5003125 us is 15500 ns, which the
    float 0.0155 printed as 0.015 (4 cells of pair 1, 2 of pair 2 read a us below the reference's 0.016). The
    reference's summaries are now matched cell for cell, and the raw trace holds that tie."""
    base, comp = REF_PAIRS[pair]
    if pair.startswith("1-"):
        tv = json.loads((samples / base / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
        assert [e["dur"] for e in tv if e.get("name") == "aclnnInplaceRelu_Relu_Relu"][0] == 15.5003125
    res = compare(str(samples / base), str(samples / comp), enable_operator_compare=True,
                  enable_communication_compare=True)
    ref = read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx", "ModuleCompareStatistic",
                    header=2)
    ours = res.sheet("ModuleCompareStatistic")
    for col in ("Kernel Details", "Kernel Details.1"):
        mine, theirs = ours[col].fillna("").tolist(), ref[col].fillna("").tolist()
        assert sum(bool(t) for t in theirs) > 40
        assert [i for i, (m, t) in enumerate(zip(mine, theirs, strict=True)) if m != t] == []


# --------------------------------------------------------------------------- edge rules (mutation audit)

TEXT_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def test_one_sided_modules_in_both_sheets() -> None:
    """Linear_0 renamed Conv_0 on the comparison side: Net_0 and ReLU_0 pair, Linear_0 (forward and backward)
    is base-only, Conv_0 comparison-only. Absent sides show 0 time, 0 number, "" details; the match rate
    counts 2 pairs of 4 modules per side. Figures from net_profile's kernels (gemm 8 us, gemm_bwd 4 us)."""
    ctx = ctx_of(net_profile(), net_profile(linear="nn.Module: Conv_0"))
    stat, detail = (s.data.values.tolist() for s in operators.build(ctx))
    by = {(r[3], r[4]): r for r in stat}
    lin_total, lin_op = by[("/ Net_0/ Linear_0", "[ TOTAL ]")], by[("/ Net_0/ Linear_0", "aten::linear")]
    assert lin_total[6:16] == [0.008, 1, 0.008, None, 0, 0, 0, -0.01, -0.01, 0.0]
    assert lin_op[9:13] == ["", 0, 0, None]
    conv_total, conv_op = by[("/ Net_0/ Conv_0", "[ TOTAL ]")], by[("/ Net_0/ Conv_0", "aten::linear")]
    assert conv_total[6:16] == [0, 0, 0, None, 0.008, 1, 0.008, 0.01, 0.01, math.inf]
    assert conv_op[5:9] == ["", 0, 0, None]
    rows = {(r[3], r[4]): r for r in detail}
    assert rows[("/ Net_0/ Linear_0", "TOTAL")][6:15] == [8.0, 8.0, "TOTAL", None, 0, 0, -8.0, -8.0, 0.0]
    assert rows[("/ Net_0/ Linear_0", "aten::linear")][8:12] == ["", "", 0.0, None]
    assert rows[("/ Net_0/ Conv_0", "TOTAL")][6:15] == [0, 0, "TOTAL", None, 8.0, 8.0, 8.0, 8.0, math.inf]
    assert rows[("/ Net_0/ Conv_0", "")][4:11] == ["", "", 0.0, None, "aten::linear", "gemm [duration: 8.0]\n", 8.0]
    rate = ctx.frames["match_rate"].iloc[0]
    assert rate[["what", "matched", "base_total", "comparison_total"]].tolist() == ["modules", 2, 4, 4]


def test_one_sided_module_totals_are_floats() -> None:
    """ModuleCompare's TOTAL times of an absent side are 0.0 like a present side's (self_ns / 1000): int 0 made
    the time columns mix int and float (0 against 0.0 in the JSON report)."""
    ctx = ctx_of(net_profile(), net_profile(linear="nn.Module: Conv_0"))
    detail = operators.build(ctx)[1].data
    totals = detail[detail.iloc[:, 4] == "TOTAL"]
    assert len(totals) == 6 and {0.0} < set(totals.iloc[:, 7].tolist() + totals.iloc[:, 11].tolist())
    for col in (6, 7, 10, 11):  # Device Self / Total Time(us) of each side
        assert {type(v) for v in totals.iloc[:, col].tolist()} == {float}, detail.columns[col]


def test_kernel_launched_after_the_last_op_of_the_last_module() -> None:
    """A kernel whose launch (flow start, 45 us) lies in ReLU_0 after its only op (aten::relu, 36-41 us) counts
    in ReLU_0's self time but goes to no op (ReLU_0 is the last module: no backward flow here)."""
    def prof() -> Profile:
        p = net_profile()
        p.flows = p.flows[p.flows["cat"] != "fwdbwd"].reset_index(drop=True)
        late = frame("kernels", {"name": ["late"], "cat": ["kernel"], "task_type": ["kernel"], "ts": [260 * US],
                                 "dur": [3 * US], "pid": [0], "tid": [7]})
        p.kernels = pd.concat([p.kernels, late], ignore_index=True)
        f = frame("flows", {"id": ["9"], "cat": ["ac2g"], "s_ts": [45 * US], "s_pid": [1], "s_tid": [1],
                            "f_ts": [260 * US], "f_pid": [0], "f_tid": [7]})
        p.flows = pd.concat([p.flows, f], ignore_index=True)
        return p

    side = modules.module_trees(ctx_of(prof(), prof()), "base")
    relu = side.forward.children[0].children[1]
    assert relu.module_name.endswith("ReLU_0") and relu.self_ns == (2 + 3) * US
    ptr, rows = side.top_kptr, side.top_krows
    assert [side.k_names[rows[ptr[k]:ptr[k + 1]]].tolist() for k in range(relu.op_lo, relu.op_hi)] == [["relu"]]


def test_frames_of_a_thread_without_frames() -> None:
    """An op of a thread with no python frame (here tid 2, above every framed thread) has no caller frame."""
    fr = modules._Frames.build(np.array(["f"], dtype=object), np.array([0]), np.array([100]), np.array([1]), 0, 100)
    assert fr.deepest(np.array([50, 50]), np.array([1, 2])).tolist() == [0, -1]


def test_step_keeps_the_kernels_its_ops_launch_after_its_end(samples: Path, tmp_path: Path) -> None:
    """With a step chosen, a text export's module trees keep the flows that start in the step (the launch), as a
    DB export's loader does, also when the kernel runs after the step's end: the device lags the host unless
    the step ends in a sync. The level1 sample's ProfilerStep#50 ends after a 92 ms ``aten::item`` of
    ``progress.display`` (main.py(373)) that waits for the device; here it ends where that call starts, as in
    a step without the display, and SGD.step's four kernels all run after it. Expected: the sum of their
    durations in the trace (read below with the json module), on both sides (comparison: the unedited trace)."""
    src = samples / TEXT_L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text(encoding="utf-8"))
    (step,) = [e for e in events if e.get("name") == "ProfilerStep#50"]
    item = next(e for e in events if e.get("name") == "aten::item" and float(e["dur"]) > 90_000)
    step["dur"] = round(float(item["ts"]) - float(step["ts"]), 3)  # 62724.72 us instead of 155985.8
    end = float(step["ts"]) + step["dur"]
    hw = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Ascend Hardware"}
    sgd = [e for e in events if e.get("ph") == "X" and e["pid"] in hw and e["name"].startswith("aclnnForeach")]
    assert len(sgd) == 4 and all(float(e["ts"]) > end for e in sgd)
    want_us = sum(float(e["dur"]) for e in sgd)  # 628.313 + 305.866 + 706.614 + 624.152
    cut = tmp_path / "trace_view.json"
    cut.write_text(json.dumps(events), encoding="utf-8")
    res = compare(str(cut), str(src), enable_operator_compare=True, base_step=50, comparison_step=50)
    stat, detail = res.sheet("ModuleCompareStatistic"), res.sheet("ModuleCompare")
    (row,) = stat[(stat["Module Name"] == "/Optimizer.step#SGD.step") & (stat["Operator Name"] == "[ TOTAL ]")
                  ].to_dict("records")
    (drow,) = detail[(detail["Module Name"] == "/Optimizer.step#SGD.step") & (detail["Operator Name"] == "TOTAL")
                     ].to_dict("records")
    assert [row["Device Total Time(ms)"], row["Device Total Time(ms).1"]] == pytest.approx([want_us / 1000] * 2,
                                                                                          abs=1e-6)
    assert [drow["Device Total Time(us)"], drow["Device Total Time(us).1"]] == pytest.approx([want_us] * 2,
                                                                                            abs=1e-3)


@pytest.mark.parametrize("path", [TEXT_L1, "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt",
                                  "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"])
def test_top_modules_agree_with_the_module_records(samples: Path, path: str) -> None:
    """``top_modules`` (by arrays: each top-layer op's owner and the walks' paths) names, for every top-layer op,
    the path of the Module record whose ``op_lo:op_hi`` holds it, forward and backward: the records' walk is the
    rule it replaced. The AlexNet text / DB exports and TraceLens' MI300 ResNet with activation checkpointing
    (recomputed forward modules under backward) have ops in both walks and modules that own no op."""
    opts, _ = build_options(enable_operator_compare=True)
    profile = load_profile(str(samples / path), opts)
    trees = modules.module_trees(RunContext(profile, profile, opts), "base")
    owner = np.full(len(trees.top_node), None, dtype=object)
    todo, owning = [trees.forward, trees.backward], set()
    while todo:
        m = todo.pop()
        assert all(o is None for o in owner[m.op_lo:m.op_hi])  # each op in one module's range
        owner[m.op_lo:m.op_hi] = m.module_name
        if m.op_hi > m.op_lo:
            owning.add(m.module_name)
        todo.extend(m.children)
    module, paths = trees.top_modules()
    assert len(paths) == len(set(paths))
    assert [paths[i] for i in module] == owner.tolist()
    assert owning <= set(paths)
    assert any(p.startswith("/[ BACKWARD ]") for p in owner.tolist())
    assert len(set(paths)) > len(owning)  # modules without ops are listed too
