"""ApiCompare: self time, rounding, grouping order, steps, and parity with the original's workbook."""

from __future__ import annotations

import logging
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from frameutil import cells
from hypothesis import given
from hypothesis import strategies as st
from xlsxutil import read_xlsx

from msprof_compare.api import RunContext
from msprof_compare.columns import col_of
from msprof_compare.compare import api_stats
from msprof_compare.compare.optree import build_tree
from msprof_compare.errors import StepError
from msprof_compare.model import Profile, factorize, frame
from msprof_compare.options import Options

L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def prof(ops, kind="NPU", path="p", cats=None) -> Profile:
    """ops: (name, ts_us, dur_us)."""
    p = Profile(path=path, kind=kind, source="ascend_text" if kind == "NPU" else "kineto")
    p.ops = frame("ops", {"name": [o[0] for o in ops], "cat": cats or ["cpu_op"] * len(ops),
                          "ts": [int(o[1] * 1000) for o in ops], "dur": [int(o[2] * 1000) for o in ops]})
    return p


def calls_of(p: Profile, step: int = -1) -> pd.DataFrame:
    """The API calls (name, self ns) in the sheet's order, as ``side_table`` reads them (``_calls``)."""
    tree = build_tree(p)
    order, _, self_ns = api_stats._calls(tree, step)
    return pd.DataFrame({"name": col_of(tree.ops, "name", object)[order], "self": self_ns[order]})


def table_of(p: Profile) -> dict:
    """One side's ``side_table`` over all its calls."""
    return api_stats.side_table(build_tree(p))


def test_self_time_excludes_direct_children_only():
    # UT: dur 50 with children 10 and 20 -> self 20; a grandchild does not count
    p = prof([("parent", 0, 50), ("c1", 1, 10), ("g", 2, 3), ("c2", 20, 20)])
    calls = calls_of(p)
    assert calls["name"].tolist() == ["parent", "c1", "g", "c2"]
    assert (calls["self"] // 1000).tolist() == [20, 7, 3, 20]


def test_rounding_and_ratios():
    # UT: base two calls (5000, 7000 us) vs comparison one call (6000 us) -> avg 6.0 both sides
    b = table_of(prof([("op", 0, 5000), ("op", 10000, 7000)]))
    c = table_of(prof([("op", 0, 6000)]))
    rows = cells(api_stats.api_frame(b, c))
    assert rows == [[1, "op", 12.0, 12.0, 6.0, 2, 6.0, 6.0, 6.0, 1, 0.5, 0.5, 1.0, 0.5]]
    # example verified by run: [3,'cudaLaunchKernel',0.01,0.01,0,3,0.02,0.02,0.01,4,2,2,'INF',1.3333]
    b = table_of(prof([("cudaLaunchKernel", i * 100, 3.4) for i in range(3)]))
    c = table_of(prof([("cudaLaunchKernel", i * 100, 5) for i in range(4)]))
    assert cells(api_stats.api_frame(b, c))[0][1:] == ["cudaLaunchKernel", 0.01, 0.01, 0.0, 3, 0.02, 0.02, 0.01, 4,
                                               2.0, 2.0, math.inf, 1.3333]


def test_rows_follow_the_scalar_rule_cell_by_cell():
    """The columns computed as arrays == the per-cell rule: ``round(total / calls, 2)`` and ``diff_ratio`` of
    each pair, half-way averages (0.57 / 2 = 0.285 rounds down in binary) and zero bases included."""
    from msprof_compare.compare.table import diff_ratio

    def frame(rows):
        return pd.DataFrame(rows, columns=["name", "total_ms", "self_ms", "calls"])

    b = frame([("a", 0.57, 0.57, 2), ("b", 1.0, 0.0, 3), ("c", 0.0, 0.0, 1), ("d", 12.34, 5.5, 7),
               ("e", 0.01, 0.01, 1)])
    c = frame([("b", 2.0, 0.29, 6), ("a", 0.57, 0.01, 2), ("f", 3.3, 3.3, 4), ("c", 0.0, 0.0, 1), ("e", 0.02, 0.0, 3)])

    def side(entry):
        if entry is None:
            return [0.0, 0.0, 0.0, 0]
        total, self_ms, calls = entry
        return [total, self_ms, round(total / calls, 2) if calls else 0.0, int(calls)]

    bi = {r.name: (r.total_ms, r.self_ms, r.calls) for r in b.itertuples()}
    ci = {r.name: (r.total_ms, r.self_ms, r.calls) for r in c.itertuples()}
    names = ["a", "b", "c", "d", "e", "f"]
    want = []
    for i, n in enumerate(names):
        bs, cs = side(bi.get(n)), side(ci.get(n))
        want.append([i + 1, n, *bs, *cs, *(diff_ratio(x, y)[1] for x, y in zip(bs, cs, strict=True))])
    got = cells(api_stats.api_frame(b.to_dict("list"), c.to_dict("list")))  # the columns side_table gives
    assert got == want
    assert [type(v) for v in got[0]] == [type(v) for v in want[0]]
    assert got[0][4] == 0.28  # 0.285 is 0.28499999... in binary


def test_grouping_order_and_absent_sides():
    b = table_of(prof([("op1", 0, 1), ("op1", 2, 1), ("op2", 4, 1)]))
    c = table_of(prof([("op1", 0, 1), ("op2", 2, 1), ("op3", 4, 1000)]))
    rows = cells(api_stats.api_frame(b, c))
    assert [r[1] for r in rows] == ["op1", "op2", "op3"]
    assert rows[2][2:6] == [0.0, 0.0, 0.0, 0] and rows[2][-4:] == [math.inf] * 4


def test_profiler_steps_are_not_apis_and_step_is_bfs():
    ops = [("ProfilerStep#1", 0, 100), ("a", 1, 50), ("a_child", 2, 10), ("b", 60, 10),
           ("ProfilerStep#2", 200, 100), ("x", 201, 50), ("x_child", 202, 10), ("y", 260, 10)]
    p = prof(ops)
    assert calls_of(p)["name"].tolist() == ["a", "a_child", "b", "x", "x_child", "y"]
    # breadth-first: top-layer ops of step 2 first, then their children
    assert calls_of(p, 2)["name"].tolist() == ["x", "y", "x_child"]
    ctx = RunContext(p, p, Options(enable_api_compare=True, base_step=1, comparison_step=2))
    f = api_stats.build(ctx)[0].frame()
    assert f["api name"].tolist() == ["a", "b", "a_child", "x", "y", "x_child"]
    # a step marker inside a step's subtree (a second ProfilerStep#2 under x) is no api either with a step:
    # only the whole-run order left markers out, and keeping it in the step's order broke no test
    nested = prof([*ops[:7], ("ProfilerStep#2", 215, 5), *ops[7:]])
    assert calls_of(nested, 2)["name"].tolist() == ["x", "y", "x_child"]
    assert calls_of(nested)["name"].tolist() == ["a", "a_child", "b", "x", "x_child", "y"]


def test_step_without_ops_raises():
    p = prof([("ProfilerStep#1", 0, 100)])
    with pytest.raises(StepError, match="There is no operator event data for step 1"):
        api_stats.build(RunContext(p, p, Options(enable_api_compare=True, base_step=1, comparison_step=1)))


def test_gpu_runtime_calls_count_but_driver_calls_do_not():
    p = prof([("aten::mm", 0, 10), ("cudaLaunchKernel", 1, 4), ("cuLaunchKernel", 2, 1)], kind="GPU",
             cats=["cpu_op", "cuda_runtime", "cuda_driver"])
    calls = calls_of(p)
    assert calls["name"].tolist() == ["aten::mm", "cudaLaunchKernel"]
    assert (calls["self"] // 1000).tolist() == [6, 4]


def test_empty_side_no_sheet(caplog):
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert api_stats.build(RunContext(prof([("a", 0, 1)]), prof([], path="/e"), Options())) == []
    assert "Can't find any torch op in the file: /e" in caplog.text


def test_api_compare_matches_reference_pair1(samples, reference_outputs):
    from msprof_compare.api import compare

    res = compare(str(samples / L1), str(samples / L2), enable_api_compare=True)
    ours = res.sheet("ApiCompare")
    ref = read_xlsx(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                        sheet_name="ApiCompare", header=2)
    assert list(ours.columns) == list(ref.columns)
    assert len(ours) == len(ref) == 133
    assert ours["api name"].tolist() == ref["api name"].tolist()
    for col in ref.columns[2:]:  # every figure equals the original's cell exactly (0.01 ms rounding included)
        assert np.array_equal(ours[col].astype(float), ref[col].astype(float), equal_nan=True), col


def test_step_zero_is_a_step():
    """ProfilerStep#0 is a step like any other: its calls in breadth-first order, and a step 0 without ops
    is refused (not read as "no step")."""
    ops = [("ProfilerStep#0", 0, 100), ("a", 1, 50), ("a_child", 2, 10), ("b", 60, 10),
           ("ProfilerStep#1", 200, 100), ("x", 201, 50)]
    p = prof(ops)
    assert calls_of(p, 0)["name"].tolist() == ["a", "b", "a_child"]
    empty = prof([("ProfilerStep#0", 0, 100), ("ProfilerStep#1", 200, 100), ("x", 201, 50)])
    with pytest.raises(StepError, match="There is no operator event data for step 0"):
        api_stats.build(RunContext(empty, empty, Options(enable_api_compare=True, base_step=0, comparison_step=0)))


def test_self_time_subtracts_callees_of_the_same_thread_only():
    """The op tree nests by start time alone (§2.2); self time subtracts only what a call contains on its own
    thread. Ops (name, ts_us, dur_us, tid)."""
    ops = [("main", 0, 100, 1), ("bwd", 5, 60, 2), ("inner", 10, 20, 1), ("next", 100, 40, 1),
           ("short", 120, 10, 1), ("long", 120, 20, 1)]
    p = prof([o[:3] for o in ops])
    p.ops["tid"] = np.array([o[3] for o in ops], dtype=np.int64)
    tree = build_tree(p)
    # the tree: bwd (thread 2) under main, inner under bwd, next (starts at main's end) under inner's
    # ancestors, long / short under next
    names = tree.ops["name"].tolist()
    parent_names = [names[i] if i >= 0 else None for i in tree.parent]
    assert dict(zip(names, parent_names, strict=True))["inner"] == "bwd"
    calls = calls_of(p).set_index("name")["self"] // 1000
    # main holds inner (its thread), not bwd (other thread) nor next (starts as main ends, runs past it)
    # of long and short (one start) the longer holds the shorter, whatever the file order
    assert calls.to_dict() == {"main": 80, "bwd": 60, "inner": 20, "next": 20, "long": 10, "short": 10}


def test_a_callee_starting_as_its_sibling_ends_is_still_a_callee():
    """Back-to-back calls (one starts in the microsecond the previous one ends, as on every Kineto trace): the
    second is its enclosing call's callee, not nobody's. Pair 4's AlexNet trace: a 3.04 ms cudaMalloc that
    starts as cudaStreamIsCapturing ends, inside aten::empty_strided, stayed in empty_strided's self time.
    Ops (name, ts_us, dur_us, tid)."""
    ops = [("outer", 0, 100, 1), ("a", 10, 20, 1), ("b", 30, 30, 1), ("c", 60, 0, 1), ("d", 60, 5, 1)]
    p = prof([o[:3] for o in ops])
    p.ops["tid"] = np.array([o[3] for o in ops], dtype=np.int64)
    calls = calls_of(p).set_index("name")["self"] // 1000
    assert calls.to_dict() == {"outer": 45, "a": 20, "b": 30, "c": 0, "d": 5}


def _independent_self_ms(trace: dict) -> dict[str, float]:
    """Self time per op name (ms, rounded to 0.01) from the raw events, by a per-thread stack walk: an op's
    callees are the ops of its thread it directly contains (ties at one start: the longer holds the shorter)."""
    cats = {"cpu_op", "user_annotation", "cuda_runtime", "operator", "runtime"}
    evs = [e for e in trace["traceEvents"] if e.get("ph") == "X" and str(e.get("cat", "")).lower() in cats]
    by_tid: dict = {}
    for k, e in enumerate(evs):
        ts = round(Decimal(e["ts"]) * 1000)
        by_tid.setdefault(e["tid"], []).append((ts, ts + round(Decimal(e["dur"]) * 1000), k, e["name"]))
    self_ns: dict[str, int] = {}
    for items in by_tid.values():
        items.sort(key=lambda x: (x[0], -x[1], x[2]))
        stack: list[list] = []  # [end, name, own self]
        done = []
        for ts, end, _, name in items:
            while stack and stack[-1][0] <= ts:  # a call ended by this start holds nothing from here on
                done.append(stack.pop())
            if stack and end <= stack[-1][0]:
                stack[-1][2] -= end - ts
            stack.append([end, name, end - ts])
        done.extend(stack)
        for _, name, own in done:
            self_ns[name] = self_ns.get(name, 0) + own
    return {name: round(v / 1e6, 2) for name, v in self_ns.items() if "ProfilerStep#" not in name}


@pytest.mark.parametrize("base, comparison", [
    ("hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", L1),
    ("hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
     "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
])
def test_self_times_of_real_gpu_traces_against_a_stack_walk(samples, base, comparison):
    """Pair 4's AlexNet trace (the original shows cudaStreamIsCapturing at -7.36 ms: a 7 ms call that starts
    as it ends counts as its child) and pair 7 (ops of autograd's thread nest under the main thread's
    ``## backward ##``): every Self Time cell of the Kineto sides against the raw events."""
    import gzip
    import json

    from msprof_compare.api import compare

    res = compare(str(samples / base), str(samples / comparison), enable_api_compare=True)
    sheet = res.sheet("ApiCompare")
    sides = [(base, "Self Time(ms)", "Calls")]
    if comparison.endswith(".gz"):
        sides.append((comparison, "Self Time(ms).1", "Calls.1"))
    for path, col, calls in sides:
        with gzip.open(samples / path) as fh:
            expected = _independent_self_ms(json.load(fh, parse_float=Decimal))  # exact ns times
        rows = sheet[sheet[calls] > 0]
        got = dict(zip(rows["api name"], rows[col].astype(float), strict=True))
        assert got == expected, path
        assert min(got.values()) >= 0
    if "alexnet" in base:
        assert got["cudaStreamIsCapturing"] == 0.08


def test_callers_of_threads_spanning_most_of_int64():
    """Threads are laid end to end on one time line; where their spans add up beyond int64 the ranks of the
    times are nested instead, with the same answer."""
    ts = np.array([0, 10, 20, 5, 8, 50], dtype=np.int64)
    end = np.array([100, 30, 25, 9, 8, 60], dtype=np.int64)
    tid = np.array([1, 1, 1, 2, 2, 1])
    small = api_stats.callers(ts, end, tid)
    assert small.tolist() == [-1, 0, 1, -1, 3, 0]
    far = 4_000_000_000_000_000_000  # threads 3 and 4 each span this: 8e18 in all, beyond 2**62
    ts2, end2 = np.r_[ts, 0, far, 0, far], np.r_[end, 1, far, 1, far + 1]
    tid2 = np.r_[tid, 3, 3, 4, 4]
    ts2[[3, 4]] += far  # thread 2 moved far out: its nesting must not change
    end2[[3, 4]] += far
    assert api_stats.callers(ts2, end2, tid2).tolist() == small.tolist() + [-1, -1, -1, -1]
    # one thread from near the bottom of int64 to near its top: a span that int64 itself cannot hold
    edge = 9_000_000_000_000_000_000
    ts3, end3 = np.r_[ts, -edge, edge], np.r_[end, -edge + 5, edge]
    assert api_stats.callers(ts3, end3, np.r_[tid, 0, 0]).tolist() == small.tolist() + [-1, -1]  # thread 0: first


def _callers_by_stack(ts, end, tid) -> list[int]:
    """The rule of ``callers`` by a per-thread stack walk in Python ints (no int64 arithmetic)."""
    out = [-1] * len(ts)
    threads: dict[int, list[int]] = {}
    for i, t in enumerate(tid.tolist()):
        threads.setdefault(t, []).append(i)
    for idx in threads.values():
        idx.sort(key=lambda i: (int(ts[i]), -int(end[i]), i))
        stack: list[int] = []
        for i in idx:
            while stack and int(end[stack[-1]]) <= int(ts[i]):  # ended by this start: not open any more
                stack.pop()
            if stack and int(end[i]) <= int(end[stack[-1]]):
                out[i] = stack[-1]
            stack.append(i)
    return out


def test_callers_against_a_stack_walk_over_the_int64_range():
    """Random ops of three threads, times small, at the ends of int64, or anywhere in it: a span from near
    -9.2e18 to near 9.2e18 wrapped in int64 and once let threads overlap on the shared time line."""
    rng = np.random.default_rng(1)
    edge = 9_000_000_000_000_000_000
    for case in range(900):
        n = int(rng.integers(2, 12))
        ts = (rng.integers(0, 50, n) if case % 3 == 0 else
              rng.choice([-edge, -edge + 10, 0, 5, edge - 20, edge - 5], n) if case % 3 == 1 else
              rng.integers(-edge, edge, n)).astype(np.int64)
        dur = np.where(rng.random(n) < 0.5, rng.integers(0, 30, n), rng.integers(0, 10**18, n))
        end = np.array([min(int(t) + int(d), 2**63 - 1) for t, d in zip(ts, dur, strict=True)], dtype=np.int64)
        tid = rng.integers(0, 3, n)
        assert api_stats.callers(ts, end, tid).tolist() == _callers_by_stack(ts, end, tid), case
        pid = rng.integers(0, 2, n)  # a thread is (pid, tid): two processes may reuse a tid
        assert api_stats.callers(ts, end, tid, pid).tolist() == _callers_by_stack(ts, end, pid * 10 + tid), case


@pytest.mark.parametrize("step", [-1, 50])
def test_side_table_groups_the_calls_by_name(samples, step: int) -> None:
    """``side_table`` (names renumbered from the tree's codes, ``_subset_codes``) == the calls grouped by name
    in first-appearance order, by pandas (NPU pair 1, the whole profile and step 50)."""
    from msprof_compare.loaders import load_profile

    opts = Options()
    tables = []
    for p in (L1, L2):
        tree = build_tree(load_profile(str(samples / p), opts))
        order, dur, self_ns = api_stats._calls(tree, step)
        calls = pd.DataFrame({"name": col_of(tree.ops, "name", object)[order], "dur": dur[order],
                              "self": self_ns[order]})
        want = calls.groupby("name", sort=False, dropna=False).agg(
            dur=("dur", "sum"), self_ns=("self", "sum"), calls=("dur", "size"))
        got = api_stats.side_table(tree, step)
        assert list(got["name"]) == want.index.tolist()
        for c in ("dur", "self_ns", "calls"):
            assert got[c].tolist() == want[c].tolist(), c
        assert got["total_ms"] == [round(v / 1e6, 2) for v in want["dur"].tolist()]
        assert got["self_ms"] == [round(v / 1e6, 2) for v in want["self_ns"].tolist()]
        tables.append(got)
    assert len(cells(api_stats.api_frame(*tables))) > 100


@given(st.lists(st.sampled_from(["aten::mm", "aten::add", "ProfilerStep#2", "", None, "aten::mm "]), max_size=30),
       st.randoms(use_true_random=False))
def test_subset_codes_factorize_the_subset(names: list, rnd) -> None:
    """A subset of a factorization's rows, in any order, renumbered from its codes: the factorization of the
    subset's values (codes by first appearance, missing values one category)."""
    arr = np.array(names, dtype=object)
    codes, uniq = factorize(arr)
    rows = np.array(rnd.sample(range(len(names)), rnd.randint(0, len(names))), dtype=np.int64)
    got_codes, got_uniq = api_stats._subset_codes(codes[rows], uniq)
    want_codes, want_uniq = factorize(arr[rows])
    assert got_codes.tolist() == want_codes.tolist() and got_uniq.tolist() == want_uniq.tolist()
