"""Kernels replayed from a CUDA / HIP graph belong to the op that launched the graph (docs/differences.md,
"Kernels replayed from a CUDA / HIP graph"). Kineto writes their flow ends with the launch call's
correlation id and no flow start; every figure here is recomputed from the raw JSON by each kernel's own
``correlation`` arg (not by flows, as our loader links them)."""

from __future__ import annotations

import gzip
import json
import logging
from decimal import Decimal
from pathlib import Path

import pytest
from dbutil import edited_copy, sql
from logutil import blocks

from msprof_compare.api import compare
from msprof_compare.compare import checks
from msprof_compare.compare.breakdown_db import cube_mask
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data" / "kineto"
L1_DB = Path(__file__).resolve().parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
EXCERPT = DATA / "vllm_mi300x_piecewise_graphs_excerpt.pt.trace.json.gz"
DECODE = "tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"
SGLANG = "tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz"
XDIT = "tracelens/tests/traces/inference/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz"
PIECEWISE = "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz"
RUNTIME = ("cuda_runtime", "cuda_driver", "runtime")


def _ns(v: Decimal) -> int:
    return int(v * 1000)


def _events(path: Path) -> list[dict]:
    return json.loads(gzip.open(path).read(), parse_float=Decimal)["traceEvents"]


def _replayed(events: list[dict]) -> list[tuple[dict, dict]]:
    """(graph launch call, kernel) for every kernel whose correlation id is that of a graph launch."""
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("ph") == "X" and e.get("cat") in RUNTIME and "GraphLaunch" in e["name"]}
    return [(launches[e["args"]["correlation"]], e) for e in events
            if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")
            and e["args"].get("correlation") in launches]


def _calls(events: list[dict]) -> dict:
    """Host launch calls by correlation id (a list: an id may be held by several)."""
    calls: dict = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in RUNTIME:
            calls.setdefault(e["args"].get("correlation"), []).append(e)
    return calls


def _inside(outer: dict, inner: dict) -> bool:
    return (outer["tid"] == inner["tid"] and outer["ts"] <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"])


def test_loader_links_each_replayed_kernel_to_its_launch():
    ev = _events(EXCERPT)
    want = _replayed(ev)
    assert len(want) == 361 and len({id(c) for c, _ in want}) == 25  # 25 launches of piecewise graphs
    prof = load_profile(str(EXCERPT), build_options()[0])
    rep = prof.flows[prof.flows["replay"] == 1]
    got = sorted(zip(rep["s_ts"].tolist(), rep["f_ts"].tolist(), strict=True))
    assert got == sorted((_ns(c["ts"]), _ns(k["ts"])) for c, k in want)
    assert set(rep["s_tid"].tolist()) == {want[0][0]["tid"]}


def test_module_and_operator_sheets_hold_the_replayed_kernels():
    ev = _events(EXCERPT)
    want = _replayed(ev)
    replay_ns = sum(_ns(k["dur"]) for _, k in want)
    # every launch sits in the GraphModule frame of the model (nn.Module python_function)
    frames = [e for e in ev if e.get("cat") == "python_function" and e["name"] == "nn.Module: GraphModule_0"]
    assert all(any(_inside(f, c) for f in frames) for c, _ in want)
    res = compare(str(EXCERPT), str(EXCERPT))
    mod = res.sheet("ModuleCompareStatistic")
    row = mod[(mod["Operator Name"] == "hipGraphLaunch")]
    assert row["Module Name"].tolist() == ["/ GptOssForCausalLM_0/ GraphModule_0"]
    assert row["Number"].tolist() == [25]
    assert row["Device Self Time(ms)"].iloc[0] == pytest.approx(replay_ns / 1e6, abs=1e-9)
    # without modules: the one top-level op (the step annotation) holds every kernel of the trace, 156 ms;
    # before graph replays were linked it held 6.17 ms, the kernels launched outside the graphs
    res = compare(str(EXCERPT), str(EXCERPT), disable_module=True)
    top = res.sheet("OperatorCompareStatistic")
    all_ns = sum(_ns(e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy"))
    assert len(top) == 1
    assert top["Base Device Duration(ms)"].iloc[0] == pytest.approx(all_ns / 1e6, abs=1e-9)
    assert replay_ns / all_ns > 0.95


def test_time_breakdown_ignores_graph_launch_flows(tmp_path):
    """Dropping the replayed kernels' flow ends (the links the original cannot make) changes no
    OverallMetrics figure: a graph launch says nothing of its kernels' op categories, even inside a
    Matmul op (one is wrapped around a launch here; taking its flows would make that graph's kernels
    Matmul)."""
    raw = json.loads(gzip.open(EXCERPT).read())
    launch = [e for e in raw["traceEvents"] if e.get("cat") == "cuda_runtime" and "GraphLaunch" in e["name"]]
    mm = dict(launch[3], cat="cpu_op", name="aten::mm", ts=launch[3]["ts"] - 0.001, dur=launch[3]["dur"] + 0.002,
              args={})
    events = [*raw["traceEvents"], mm]
    ids = {e["args"]["correlation"] for e in launch}
    cut = [e for e in events if not (e.get("ph") == "f" and e.get("id") in ids)]
    assert len(events) - len(cut) >= 361
    sheets = []
    for name, evs in (("all", events), ("cut", cut)):
        path = tmp_path / f"{name}.pt.trace.json"
        path.write_text(json.dumps(dict(raw, traceEvents=evs)))
        sheets.append(compare(str(path), str(path), enable_profiling_compare=True).sheet("OverallMetrics"))
    assert sheets[0].equals(sheets[1])
    assert not sheets[0][sheets[0].iloc[:, 0].astype(str).str.contains("Matmul")].empty


def test_lone_flow_ends_without_a_unique_launch_link_nothing(tmp_path):
    """A flow end whose id no launch call carries, or two calls carry, links no kernel."""
    raw = json.loads(gzip.open(EXCERPT).read())
    ev = raw["traceEvents"]
    first = next(e for e in ev if e.get("cat") == "cuda_runtime" and "GraphLaunch" in e["name"])
    n_first = sum(1 for c, _ in _replayed(ev) if c is first)
    # a second call with the same correlation id: that launch's kernels lose their link
    twin = dict(first, name="hipStreamIsCapturing", ts=first["ts"] + first["dur"] + 0.001, dur=0.001)
    path = tmp_path / "twin.pt.trace.json"
    path.write_text(json.dumps(dict(raw, traceEvents=[*ev, twin])))
    prof = load_profile(str(path), build_options()[0])
    assert int((prof.flows["replay"] == 1).sum()) == 361 - n_first
    # a launch without its correlation arg, or with one that is no number: the same (and no error)
    for args in ({}, {"correlation": [1]}, {"correlation": {"id": 1}}, {"correlation": "x"}, {"correlation": 1.5},
                 {"correlation": True}):
        bare = [dict(e, args=args) if e is first else e for e in ev]
        path.write_text(json.dumps(dict(raw, traceEvents=bare)))
        prof = load_profile(str(path), build_options()[0])
        assert int((prof.flows["replay"] == 1).sum()) == 361 - n_first, args
    assert n_first > 0


@pytest.mark.parametrize("name", [DECODE, SGLANG])
def test_full_graph_decode_traces(samples, name):
    """vLLM and SGLang decode steps replayed as one HIP graph (421 / 544 of their kernels): the step's
    annotation, the only top-level op holding kernels, now holds every kernel launched inside it."""
    path = samples / name
    ev = _events(path)
    want = _replayed(ev)
    assert len(want) == {DECODE: 421, SGLANG: 544}[name]
    (launch,) = {id(c): c for c, _ in want}.values()
    (step,) = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("execute_")]
    assert _inside(step, launch)
    calls = _calls(ev)
    inside_ns = sum(_ns(e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")
                    and len(c := calls.get(e["args"].get("correlation"), ())) == 1 and _inside(step, c[0]))
    assert inside_ns >= sum(_ns(k["dur"]) for _, k in want)
    res = compare(str(path), str(path), disable_module=True)
    ops = res.sheet("OperatorCompareStatistic")
    row = ops[ops["Operator Name"] == step["name"]]
    assert row["Base Device Duration(ms)"].iloc[0] == pytest.approx(inside_ns / 1e6, abs=1e-9)


def test_cuda_graph_launch_with_a_flow_start_links_every_kernel(samples):
    """NVIDIA's Kineto (HTA's 2023 trace: 70 cudaGraphLaunch calls) writes one flow start on the launch and
    one end per replayed kernel / memset, all with one id; the original keeps the last end of an id, so
    all but one kernel of a graph belonged to no op. Every kernel of the graph now links to the launch."""
    path = samples / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz"
    ev = _events(path)
    want = [(c, k) for c, k in _replayed(ev) if k["cat"] == "kernel"]
    assert len(want) == 135
    prof = load_profile(str(path), build_options()[0])
    fl = prof.flows
    got = set(zip(fl["s_ts"].tolist(), fl["f_ts"].tolist(), strict=True))
    assert {(_ns(c["ts"]), _ns(k["ts"])) for c, k in want} <= got
    # one end per id is the original's pair (replay 0, which the time breakdown reads); the others are new
    ids = {str(c["args"]["correlation"]) for c, _ in want}
    per_id = fl[fl["id"].isin(ids)]
    assert (per_id.groupby("id")["replay"].apply(lambda r: int((r == 0).sum())) == 1).all()


def test_graph_kernels_are_listed_as_they_ran(samples):
    """Kernel Details of a cudaGraphLaunch lists the graph's kernels in start order (the flow pairing
    kept the last one first before): every launch row matches one launch's kernels sorted by time."""
    path = samples / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz"
    per_launch: dict = {}
    for c, k in _replayed(_events(path)):
        if k["cat"] == "kernel":
            per_launch.setdefault(id(c), []).append(k)
    want = {tuple(f"{k['name']} [duration: {float(k['dur'])}]" for k in sorted(ks, key=lambda k: k["ts"]))
            for ks in per_launch.values()}
    assert sum(len(w) > 1 for w in want) >= 20  # distinct sequences
    res = compare(str(path), str(path), disable_module=True, enable_operator_compare=True, max_kernel_num=4)
    ops = res.sheet("OperatorCompare")
    rows = ops[ops["Operator Name"] == "cudaGraphLaunch"]["Kernel Details"].tolist()
    assert sum(r.count("\n") > 1 for r in rows) >= 30
    assert all(tuple(r.splitlines()) in want for r in rows)


@pytest.mark.parametrize("name", [PIECEWISE, DECODE, SGLANG, XDIT])
def test_every_kernel_with_a_launch_call_counts_once(samples, name):
    """Without modules, the top-level operators together hold every kernel / memcpy whose launch call (the one
    host call with its correlation id) is known: a runtime call is an op itself, a driver call counts when
    some op holds it. Graph traces had most of their device time in no operator (xDiT Flux: 6,264 of 7,830
    kernels)."""
    path = samples / name
    ev = _events(path)
    calls = _calls(ev)
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "cuda_runtime")]
    want = 0
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy"):
            continue
        c = calls.get(e["args"].get("correlation"), ())
        if len(c) == 1 and (c[0]["cat"] != "cuda_driver"
                            or any(o["ts"] <= c[0]["ts"] <= o["ts"] + o["dur"] for o in ops)):
            want += _ns(e["dur"])
    res = compare(str(path), str(path), disable_module=True, enable_operator_compare=True)
    got = res.sheet("OperatorCompareStatistic")["Base Device Duration(ms)"].sum()
    assert got == pytest.approx(want / 1e6, abs=1e-9)


def test_ids_are_whole_numbers_from_zero():
    from msprof_compare.loaders.kineto import _ids

    got = _ids([3, -2, 2**70, "5", 7.0, True, None, 9, " 8 ", 1.5, [1]]).tolist()
    assert got == [3, -1, -1, 5, 7, -1, -1, 9, 8, -1, -1]
    assert _ids([1, 2**70]).tolist() == [1, -1]  # all ints, one beyond int64
    assert _ids([4, -5, 0]).tolist() == [4, -1, 0]
    assert _ids([True, 5, False]).tolist() == [-1, 5, -1]  # JSON true is no id, beside plain ints too
    assert _ids([]).tolist() == []


def test_graph_launch_through_the_driver_api(tmp_path):
    """A graph launched through the CUDA driver API (cat cuda_driver, e.g. cuGraphLaunch) links its kernels as a
    runtime-API launch does: the excerpt with every launch call's cat changed."""
    raw = json.loads(gzip.open(EXCERPT).read())
    ev = [dict(e, cat="cuda_driver") if e.get("cat") == "cuda_runtime" and "GraphLaunch" in e["name"] else e
          for e in raw["traceEvents"]]
    path = tmp_path / "driver.pt.trace.json"
    path.write_text(json.dumps(dict(raw, traceEvents=ev)))
    assert int((load_profile(str(path), build_options()[0]).flows["replay"] == 1).sum()) == 361


def test_flow_start_first_in_the_file(tmp_path):
    """A launch flow whose start is the first flow event of the file is a start like any other: the other ends
    of its id link their kernels to it (NVIDIA's graph launch form), even when the launch call carries no
    correlation arg to look it up by."""
    flow = {"cat": "ac2g", "name": "ac2g", "id": 7}
    ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
           "args": {}},
          dict(flow, ph="s", pid=1, tid=1, ts=10)]
    for t in (100, 200, 300):
        ev.append({"ph": "X", "cat": "kernel", "name": f"k{t}", "pid": 0, "tid": 7, "ts": t, "dur": 50,
                   "args": {"stream": 7, "device": 0}})
        ev.append(dict(flow, ph="f", pid=0, tid=7, ts=t, bp="e"))
    path = tmp_path / "first.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    flows = load_profile(str(path), build_options()[0]).flows
    rows = zip(flows["f_ts"].tolist(), flows["s_ts"].tolist(), flows["replay"].tolist(), strict=True)
    assert sorted(rows) == [
        (100_000, 10_000, 1), (200_000, 10_000, 1), (300_000, 10_000, 0)]


def test_db_task_replayed_four_times_takes_its_pmu_sets_in_order(tmp_path):
    """An Ascend DB task replayed from a graph runs under one globalTaskId; without timestampNs its k-th run takes
    the k-th PMU set in table order. No DB sample replays a task: the level-1 excerpt with its first cube task
    (Conv2D, globalTaskId 5, not the first id with PMU rows) run 4 times, 1 s apart, with 4 PMU sets, the third
    all zero (a run that did no cube work). The third run is the one vector run: a position looked up one step
    back gave it the fourth set. OverallMetrics: the three new runs add 2 cube and 1 vector Conv (Forward) calls,
    each of the task's SQL duration."""
    gid = sql(L1_DB, "SELECT p.globalTaskId FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                     "WHERE s.value = 'aic_mac_time' AND p.value > 0 ORDER BY p.globalTaskId LIMIT 1")[0][0]
    assert sql(L1_DB, "SELECT min(globalTaskId) FROM TASK_PMU_INFO")[0][0] < gid
    (start, dur), = sql(L1_DB, "SELECT startNs, endNs - startNs FROM TASK WHERE globalTaskId = ?", (gid,))
    (mac,), = sql(L1_DB, "SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value = 'aic_mac_time' AND p.globalTaskId = ?", (gid,))
    (last,), = sql(L1_DB, "SELECT max(rowid) FROM TASK_PMU_INFO")
    edits = []
    for k in (1, 2, 3):
        edits += [f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid} AND rowid = "
                  f"(SELECT min(rowid) FROM TASK WHERE globalTaskId = {gid})",
                  f"UPDATE TASK SET startNs = startNs + {k * 10**9}, endNs = endNs + {k * 10**9} "
                  "WHERE rowid = (SELECT max(rowid) FROM TASK)",
                  f"INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, {'0' if k == 2 else 'value'} "
                  f"FROM TASK_PMU_INFO WHERE globalTaskId = {gid} AND rowid <= {last}"]
    (tmp_path / "replay").mkdir()
    db = edited_copy(L1_DB, tmp_path / "replay" / L1_DB.name, *edits)
    p = load_profile(str(db), build_options(enable_profiling_compare=True)[0])
    mine = (p.extra["kernel_extra"]["global_task_id"] == gid).to_numpy()
    assert p.kernels["ts"].to_numpy()[mine].tolist() == [start + k * 10**9 for k in range(4)]
    assert p.extra["kernel_extra"]["aic_mac_time"].to_numpy()[mine].tolist() == [mac, mac, 0.0, mac] and mac > 0
    assert cube_mask(p)[mine].tolist() == [True, True, False, True]
    om = compare(str(L1_DB), str(db), enable_profiling_compare=True).sheet("OverallMetrics")
    rows = om.set_index(om["Index"].str.strip())
    for index, calls in (("Conv (Forward) (Cube)", 2), ("Conv (Forward) (Vector)", 1)):
        row = rows.loc[index]
        assert int(row["Number.1"]) - int(row["Number"]) == calls, index
        assert row["Duration(ms).1"] - row["Duration(ms)"] == pytest.approx(calls * dur / 1e6, abs=2e-6), index


def test_db_schedule_task_replayed_is_one_kernel_per_run(tmp_path):
    """A task newer msprof moves to COMMUNICATION_SCHEDULE_TASK_INFO (an AI-CPU HCCL kernel) replayed from a graph:
    two TASK runs and one schedule row per run. No DB sample has the table: the level-1 excerpt with its longest
    compute task holding a connection id (ForeachAddList, vector) moved there and run twice, its aic_mac_time made
    text. Each run takes one row (2 kernels, not 2 x 2); both runs are kernels (KernelCompare: 2 calls of N/A shape,
    each of the task's SQL duration) and no computing (one call fewer than the excerpt's, out of Vector (No
    Trans)); the other tasks keep their PMU sets (every other category as in the excerpt), and the schedule task's
    bad value is reported as any loaded task's is."""
    gid, dur = sql(L1_DB, "SELECT c.globalTaskId, t.endNs - t.startNs FROM COMPUTE_TASK_INFO c JOIN TASK t "
                          "USING (globalTaskId) WHERE t.connectionId >= 0 ORDER BY t.endNs - t.startNs DESC LIMIT 1")[0]
    (kernel,), = sql(L1_DB, "SELECT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.opType "
                            "WHERE c.globalTaskId = ?", (gid,))
    row = ("INSERT INTO COMMUNICATION_SCHEDULE_TASK_INFO SELECT name, globalTaskId, taskType, opType FROM "
           f"COMPUTE_TASK_INFO WHERE globalTaskId = {gid}")
    (tmp_path / "sched").mkdir()
    db = edited_copy(L1_DB, tmp_path / "sched" / L1_DB.name,
                     "CREATE TABLE COMMUNICATION_SCHEDULE_TASK_INFO (name INTEGER, globalTaskId INTEGER, "
                     "taskType INTEGER, opType INTEGER)", row, row,
                     f"DELETE FROM COMPUTE_TASK_INFO WHERE globalTaskId = {gid}",
                     f"INSERT INTO TASK SELECT * FROM TASK WHERE globalTaskId = {gid}",
                     "UPDATE TASK SET startNs = startNs + 1000000000, endNs = endNs + 1000000000 "
                     "WHERE rowid = (SELECT max(rowid) FROM TASK)",
                     f"UPDATE TASK_PMU_INFO SET value = 'abc' WHERE globalTaskId = {gid} AND "
                     "name = (SELECT id FROM STRING_IDS WHERE value = 'aic_mac_time')")
    (n,), = sql(L1_DB, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)")
    p = load_profile(str(db), build_options(enable_profiling_compare=True)[0])
    kx = p.extra["kernel_extra"]
    assert len(p.kernels) == n + 1 == 188
    assert kx.loc[kx["schedule"], "global_task_id"].tolist() == [gid, gid]
    assert f"{db}: 1 TASK_PMU_INFO value(s) are not finite numbers; read as missing" in p.warnings
    res = compare(str(L1_DB), str(db), enable_profiling_compare=True, enable_kernel_compare=True)
    kc = res.sheet("KernelCompare")
    moved = kc[(kc["Kernel"] == kernel) & (kc["Input Shape"] == "N/A")]
    assert moved["Calls.1"].tolist() == [2]
    assert moved["Total Duration(us).1"].tolist() == [pytest.approx(2 * dur / 1000, abs=0.01)]
    om = res.sheet("OverallMetrics")
    om = om.set_index(om["Index"].str.strip())
    for index in ("Computing Time", "Vector", "Vector (No Trans)"):
        assert int(om.loc[index, "Number.1"]) == int(om.loc[index, "Number"]) - 1, index
    assert om.loc["Vector (No Trans)", "Duration(ms).1"] == pytest.approx(
        om.loc["Vector (No Trans)", "Duration(ms)"] - dur / 1e6, abs=2e-6)
    cols = ["Duration(ms)", "Number"]
    for index in ("Conv (Forward) (Cube)", "Conv (Forward) (Vector)", "Conv (Backward) (Cube)",
                  "Conv (Backward) (Vector)", "Matmul (Cube)", "Matmul (Vector)", "Vector (Trans)"):
        assert om.loc[index, ["Duration(ms).1", "Number.1"]].tolist() == om.loc[index, cols].tolist()


MOE_EAGER = DATA / "b200_vllm_moe_excerpt.pt.trace.json"
MATMUL_CONV_FA_WORDS = ("aten::addmm", "aten::bmm", "aten::mm", "aten::matmul", "aten::conv", "flash_attention",
                        "fusion_attention", "flashattn", "xformers_flash", "efficient_attention", "flash2attn",
                        "cudnn_attention")


def _plain_events(path: Path) -> list[dict]:
    raw = gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()
    data = json.loads(raw, parse_float=Decimal)
    return data["traceEvents"] if isinstance(data, dict) else data


def _replayed_share(events: list[dict]) -> tuple[int, int, int]:
    """(replayed computing kernels, their summed ns, every computing kernel's summed ns), by each kernel's own
    correlation id against the graph launch calls' (not by flows). The traces hold no collective and no
    copy-named kernel, so every kernel event is a computing one."""
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert not any(w in e["name"].lower() for e in kernels for w in ("nccl", "all_reduce", "htod", "dtod", "dtoh"))
    launches = {e["args"]["correlation"] for e in events
                if e.get("ph") == "X" and e.get("cat") in RUNTIME and "GraphLaunch" in e["name"]}
    rep = [e for e in kernels if e["args"].get("correlation") in launches]
    return len(rep), sum(_ns(e["dur"]) for e in rep), sum(_ns(e["dur"]) for e in kernels)


def _op_launched_ns(events: list[dict]) -> int:
    """Device time of the kernels whose launch flow starts inside a Matmul / Conv / Flash Attention op (the
    steps whose category needs the op): the launch's start ts inside the op's span, flows paired by id."""
    ops = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
           if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
           and any(w in e["name"].lower() for w in MATMUL_CONV_FA_WORDS)]
    starts = {e["id"]: _ns(e["ts"]) for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    ends = {(e["pid"], e["tid"], _ns(e["ts"])): e["id"] for e in events
            if e.get("ph") == "f" and e.get("cat") == "ac2g"}
    total = 0
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            fid = ends.get((e["pid"], e["tid"], _ns(e["ts"])))
            if fid in starts and any(lo <= starts[fid] <= hi for lo, hi in ops):
                total += _ns(e["dur"])
    return total


def _replay_row(res) -> dict:
    g = res.guards.set_index("Check")
    return g.loc["graph replays"].to_dict()


def test_graph_replays_note_between_a_graph_run_and_an_eager_one(caplog, monkeypatch):
    """vLLM's piecewise HIP graphs (MI300X excerpt) against vLLM eager (B200 excerpt): a replayed kernel's launch
    is the graph launch, inside no Matmul / Conv / Flash Attention op, so by the original's rules it is Cube
    (other) or Vector by name, where the eager side's kernels launched inside such ops are Matmul (found by
    the session-41 inference audit: SGLang decode, all graph, against its eager prefill showed Matmul 0 ->
    420 ms). The Summary's checks say how much of each side is replayed and, where the side replaying less
    holds 5 % or more of its computing in those steps, that they differ by the launch mode; the excerpt's eager
    side holds one 6.5 us GEMM (3.1 %): an "ok" row saying so, a note once the threshold is below that share.
    Every figure is recomputed from the raw JSON."""
    from msprof_compare.compare import checks

    n, rep_ns, comp_ns = _replayed_share(_events(EXCERPT))
    assert n == 361 and rep_ns / comp_ns > 0.9
    eager = _plain_events(MOE_EAGER)
    n_eager, _, eager_ns = _replayed_share(eager)
    assert n_eager == 0
    by_op = _op_launched_ns(eager)
    assert by_op == 6_496  # the aten::linear -> aten::mm GEMM of the excerpt
    held = f"the base side replays less and has {by_op / 1e6:.3f} ms ({by_op / eager_ns:.1%} of its computing)"
    assert 0.03 < by_op / eager_ns < checks.REPLAY_OP_SHARE
    caplog.set_level("WARNING", logger="msprof-analyze")
    row = _replay_row(compare(str(MOE_EAGER), str(EXCERPT), enable_profiling_compare=True))
    assert row["Status"] == "ok"
    assert row["Base"] == 0.0 and row["Comparison"] == pytest.approx(rep_ns / comp_ns, rel=1e-12)
    assert f"comparison {n:,} kernels, {rep_ns / 1e6:.3f} ms" in row["Detail"]
    assert f"({held} in those steps: those steps barely move)" in row["Detail"]
    assert "replays much more" not in caplog.text
    monkeypatch.setattr(checks, "REPLAY_OP_SHARE", 0.03)
    row = _replay_row(compare(str(MOE_EAGER), str(EXCERPT), enable_profiling_compare=True))
    assert row["Status"] == "note"
    assert f"{held} in those steps, where the other side's kernels" in row["Detail"]
    assert "One side replays much more of its computing from CUDA / HIP graphs than the other (base 0.0%, " \
           f"comparison {100 * rep_ns / comp_ns:.1f}%)" in caplog.text
    # the same trace on both sides replays alike: an "ok" row, no explanation of a gap
    same = _replay_row(compare(str(EXCERPT), str(EXCERPT), enable_profiling_compare=True))
    assert same["Status"] == "ok" and "barely move" not in same["Detail"]
    # no replay on either side: no row
    assert "graph replays" not in compare(str(MOE_EAGER), str(MOE_EAGER), enable_profiling_compare=True
                                          ).guards["Check"].tolist()


def test_graph_replays_beside_a_side_without_categories(samples):
    """vLLM's piecewise HIP graphs (MI300X excerpt) against an NPU Level0 text export, whose computing is in no
    category (no kernel type or PMU counter): that side has no replayed share to give (blank, not 0 / 0) and
    no op-decided time to move, so the row is "ok"; the graph side's share is recomputed from the raw JSON."""
    n, rep_ns, comp_ns = _replayed_share(_events(EXCERPT))
    level0 = samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
    res = compare(str(EXCERPT), str(level0), enable_profiling_compare=True)
    assert res.guards.set_index("Check").loc["computing split into categories", "Comparison"] == 0.0
    row = _replay_row(res)
    assert row["Status"] == "ok"
    assert row["Base"] == pytest.approx(rep_ns / comp_ns, rel=1e-12) and row["Comparison"] is None
    assert f"(base {n:,} kernels, {rep_ns / 1e6:.3f} ms)" in row["Detail"] and "barely move" not in row["Detail"]


def _replay_sides(eager_by_op_ns: int) -> tuple:
    """An eager side (1 ms of computing, ``eager_by_op_ns`` of it in Matmul, none replayed) and a graph side
    (1 ms, 0.9 ms of it replayed, all Cube (other))."""
    from msprof_compare.compare.breakdown import Breakdown

    eager, graph = Breakdown("GPU"), Breakdown("GPU")
    eager.b("matmul_cube").add(eager_by_op_ns)
    eager.b("vector_notrans").add(1_000_000 - eager_by_op_ns)
    graph.b("other_cube").add(1_000_000)
    graph.replayed.add(900_000, 9)
    return eager, graph


def test_graph_replays_share_shown_below_the_threshold_never_reaches_it():
    """The side replaying less holds 4.96 % of its computing in Matmul, under REPLAY_OP_SHARE (5 %): an "ok" row,
    whose text said it held "5.0%" beside "a note where ... holds 5% or more" (``:.1%`` rounds 4.96 up). A share
    under the threshold that would round to it is cut to 0.1 % (4.9 %); others round as before (hta's 0.96 %:
    1.0 %, ``test_graph_replays_of_inference_samples``); at the threshold (a note) it reads 5.0 %."""
    from msprof_compare.compare import checks

    assert checks.REPLAY_OP_SHARE == 0.05
    row = checks._replay_row(_replay_sides(49_600))
    assert row["Status"] == "ok"
    assert "(the base side replays less and has 0.050 ms (4.9% of its computing) in those steps: those steps " \
           "barely move)" in row["Detail"]
    # 4.66 % rounds to 4.7 % and to no threshold: shown as rounded (cut only where rounding reaches 5.0 %)
    assert "(the base side replays less and has 0.047 ms (4.7% of its computing) in those steps: those steps " \
           "barely move)" in checks._replay_row(_replay_sides(46_600))["Detail"]
    row = checks._replay_row(_replay_sides(50_000))
    assert row["Status"] == "note"
    assert "the base side replays less and has 0.050 ms (5.0% of its computing) in those steps, where" in row["Detail"]


def test_replay_search_tests_the_cat_of_graph_launches_only(monkeypatch):
    """The replayed-kernel search numbered every op's name and cat (two factorizations of the ops frame) in every
    GPU breakdown, a trace without graphs too (~8 ms of a 100 MB ResNet-50 pair's side, ~25 ms of hta's NVIDIA
    graph trace; found by the session-41 review). Now the names are a set, and the cat is tested for the graph
    launches alone (the excerpt's 25 hipGraphLaunch calls, from the raw JSON), none where the trace has none;
    the replayed figures stay those recomputed by correlation id."""
    from msprof_compare.compare import breakdown_gpu, classify

    seen: list[int] = []
    per_unique = classify.per_unique

    def counted(names, test, lower=True):
        seen.append(len(names))
        return per_unique(names, test, lower)

    ev = _events(EXCERPT)
    calls = [e for e in ev if e.get("ph") == "X" and e.get("cat") in RUNTIME and "GraphLaunch" in e["name"]]
    assert len(calls) == 25
    n, rep_ns, _ = _replayed_share(ev)
    monkeypatch.setattr(classify, "per_unique", counted)
    bd = breakdown_gpu.Breakdown(kind="GPU")
    prof = load_profile(str(EXCERPT), build_options()[0])
    k = prof.kernels[prof.kernels["cat"] == "kernel"]  # the computing kernels (no collective or copy here)
    lanes = (k["pid"].to_numpy(), k["tid"].to_numpy())
    breakdown_gpu._replayed_kernels(bd, prof, None, lanes, k["ts"].to_numpy(), k["dur"].to_numpy())
    assert seen == [len(calls)]
    assert (bd.replayed.count, bd.replayed.ns) == (n, rep_ns)
    seen.clear()
    eager = load_profile(str(MOE_EAGER), build_options()[0])
    k = eager.kernels[eager.kernels["cat"] == "kernel"]
    breakdown_gpu._replayed_kernels(bd, eager, None, (k["pid"].to_numpy(), k["tid"].to_numpy()),
                                    k["ts"].to_numpy(), k["dur"].to_numpy())
    assert seen == [] and len(eager.ops) and len(eager.flows)


def test_graph_replays_of_inference_samples(samples, caplog):
    """The full samples: SGLang decode (one HIP graph) against its eager prefill is a note naming the prefill's
    Matmul time; vLLM full-graph decode against piecewise prefill+decode replays alike (ok); hta's NVIDIA
    cudaGraphLaunch trace counts every graph kernel, also the 25 graphs of a single kernel whose one flow
    pair looks like a plain launch."""
    dec, pre = samples / SGLANG, samples / "tracelens/tests/traces/inference/sglang_prefilldecode/" \
        "sglang_Qwen3-8B_prefilldecode.json.gz"
    n, rep_ns, comp_ns = _replayed_share(_events(dec))
    assert (n, rep_ns, comp_ns) == (544, 9_656_404, 9_765_437)
    by_op = _op_launched_ns(_events(pre))
    assert by_op == 420_305_748
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        row = _replay_row(compare(str(dec), str(pre), enable_profiling_compare=True))
    assert (row["Status"], row["Base"], row["Comparison"]) == ("note", pytest.approx(rep_ns / comp_ns), 0.0)
    # the log: the figures on the title line, then the rule, the sheets and the reading each on a line (862
    # characters on one line before)
    (block,) = blocks(caplog.messages, checks.NOTE_CHECKS[checks.REPLAY_CHECK])
    assert block[0].endswith(f"(base {rep_ns / comp_ns:.1%}, comparison 0.0%): share of computing kernel time "
                             f"replayed from CUDA / HIP graphs (base {n} kernels, {rep_ns / 1e6:.3f} ms):")
    assert len(block) == 4 and block[3].startswith("the comparison side replays less and has 420.306 ms")
    assert (f"the comparison side replays less and has 420.306 ms ({by_op / _replayed_share(_events(pre))[2]:.1%} "
            "of its computing) in those steps") in row["Detail"]
    shares = [_replayed_share(_events(samples / p)) for p in (DECODE, PIECEWISE)]
    row = _replay_row(compare(str(samples / DECODE), str(samples / PIECEWISE), enable_profiling_compare=True))
    assert row["Status"] == "ok"
    assert [row["Base"], row["Comparison"]] == [pytest.approx(r / c) for _, r, c in shares]
    hta = samples / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz"
    ev = _events(hta)
    launches = {e["args"]["correlation"] for e in ev
                if e.get("ph") == "X" and e.get("cat") in RUNTIME and "GraphLaunch" in e["name"]}
    graph_kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"
                     and e["args"].get("correlation") in launches]
    assert len(launches) == 70 and len(graph_kernels) == 135
    row = _replay_row(compare(str(hta), str(hta), enable_profiling_compare=True))
    assert f"base {len(graph_kernels):,} kernels, {sum(_ns(e['dur']) for e in graph_kernels) / 1e6:.3f} ms" \
        in row["Detail"]
    # against vLLM's piecewise graphs hta's trace replays much less (50 % vs 96 %), but holds only 2.022 ms (1.0 %
    # of its computing: its non-NCCL kernels) in the op-decided steps: no note (one before the 5 % threshold)
    computing = sum(_ns(e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"
                    and "nccl" not in e["name"].lower())
    by_op = _op_launched_ns(ev)
    assert (by_op, computing) == (2_022_000, 211_100_000)
    row = _replay_row(compare(str(hta), str(samples / PIECEWISE), enable_profiling_compare=True))
    assert row["Status"] == "ok"
    assert (f"(the base side replays less and has {by_op / 1e6:.3f} ms ({by_op / computing:.1%} of its computing)"
            " in those steps: those steps barely move)") in row["Detail"]


def _launched_inside(events: list[dict], span: dict) -> int:
    """Device ns of the kernels and copies whose launch call (by the kernel's own correlation id) starts inside
    ``span`` (an annotation): what the op tree gives that annotation's subtree."""
    calls = {e["args"]["correlation"]: e for e in events
             if e.get("ph") == "X" and e.get("cat") in RUNTIME and "correlation" in e.get("args", {})}
    lo, hi = _ns(span["ts"]), _ns(span["ts"]) + _ns(span["dur"])
    return sum(_ns(e["dur"]) for e in events
               if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")
               and e["args"].get("correlation") in calls
               and lo <= _ns(calls[e["args"]["correlation"]]["ts"]) <= hi)


def test_step_wrappers_of_other_names_are_said(samples):
    """vLLM decode (full graph) against prefill+decode (piecewise graphs): each trace holds one top-level
    annotation, named after its batch (``execute_32_context_0(...)`` / ``execute_8192_context_9(...)``), around
    every op, so the operator-level contributors were the comparison's annotation appearing (+156.086 ms), which
    says nothing of the ops inside (found by the session-41 inference audit). A note now names both wrappers and
    the options that pair them; following it compares the graph launches inside; names that pair (the same
    trace twice) get no note."""
    dec, pw = samples / DECODE, samples / PIECEWISE
    wrappers = []
    for path in (dec, pw):
        ev = _events(path)
        ann = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
        assert len(ann) == 1
        ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime")]
        lo, hi = _ns(ann[0]["ts"]), _ns(ann[0]["ts"]) + _ns(ann[0]["dur"])
        assert all(lo <= _ns(e["ts"]) <= hi for e in ops)  # every op inside it: the only top-level op
        wrappers.append((ann[0]["name"], _launched_inside(ev, ann[0])))
    (nb, mb), (nc, mc) = wrappers
    assert (mb, mc) == (10_717_708, 156_085_905)
    res = compare(str(dec), str(pw))
    note = res.frames["contributors"].attrs["wrappers"]
    assert note == (nb, mb / 1e6, nc, mc / 1e6)
    # read from the OperatorCompareStatistic sheet where the workbook shows it
    plain = compare(str(dec), str(pw), disable_module=True)
    assert "OperatorCompareStatistic" in plain.sheet_names
    assert plain.frames["contributors"].attrs["wrappers"] == note
    from msprof_compare.compare.summary_notes import unexplained_note
    text = unexplained_note(res.frames["contributors"], res.frames["waterfall"])
    assert text.startswith(f"each side's operator device time lies under one top-level op that the other side has "
                           f"no op of (base {nb} {mb / 1e6:.3f} ms, comparison {nc} {mc / 1e6:.3f} ms;")
    assert (f"give the op_name_map option the entry {nb!r}: {nc!r} (beside any it holds) and set the max_kernel_num "
            "option to 10") in text and " --" not in text  # options named bare: compare()'s caller reads it too
    # as the note says: the graph launches inside pair, with the replayed kernels' time (by correlation)
    paired = compare(str(dec), str(pw), op_name_map={nb: nc}, max_kernel_num=10)
    top = paired.contributors.iloc[0]
    replayed = [_replayed_share(_events(p))[1] for p in (dec, pw)]
    assert (top["Name"], top["Base(ms)"], top["Comparison(ms)"]) == ("hipGraphLaunch", *(r / 1e6 for r in replayed))
    assert "wrappers" not in paired.frames["contributors"].attrs
    # a wrapper on one side only (the B200 excerpt's three roots against the whole B200 step): no note
    eager = compare(str(MOE_EAGER), str(samples / "tracelens/tests/traces/b200/eager_trace.json.gz"))
    assert eager.contributors["Name"].tolist() == ["execute_context_1(888_788544)_generation_0(0)"]
    assert "wrappers" not in eager.frames["contributors"].attrs


def test_module_rows_lead_says_how_much_of_a_graph_launch_they_hold(samples):
    """vLLM decode against prefill+decode with the step wrappers paired (the note's advice): the one contributor is
    hipGraphLaunch 10.388 -> 149.920 ms and its module row reads 0.000 -> 149.920 ms, since the decode trace launches
    its full graph outside every module. The lead said only "hipGraphLaunch runs inside modules"; it gives each
    side's part the module rows hold. Recomputed here: the replayed kernels' ns (by correlation id) of the graph
    launches that an ``nn.Module`` python_function of their thread encloses, against all of them."""
    from msprof_compare.compare.module_contributors import module_contributors_note

    dec, pw = samples / DECODE, samples / PIECEWISE
    want = []
    for path in (dec, pw):
        ev = _events(path)
        modules = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "python_function"
                   and e["name"].startswith("nn.Module:")]
        inside = sum(_ns(k["dur"]) for call, k in _replayed(ev) if any(_inside(m, call) for m in modules))
        want.append((inside, _replayed_share(ev)[1]))
    assert want[0][0] == 0 < want[0][1] and want[1][0] == want[1][1]
    wrappers = compare(str(dec), str(pw)).frames["contributors"].attrs["wrappers"]
    paired = compare(str(dec), str(pw), op_name_map={wrappers[0]: wrappers[2]}, max_kernel_num=10)
    assert paired.contributors["Name"].tolist() == ["hipGraphLaunch"]
    (b_in, b_all), (c_in, c_all) = want
    assert module_contributors_note(paired.module_contributors) == (
        f"hipGraphLaunch (its module rows hold base {b_in / 1e6:.3f} of its {b_all / 1e6:.3f} ms, comparison "
        f"{c_in / 1e6:.3f} of its {c_all / 1e6:.3f} ms) runs inside modules: the module contributors rank its module "
        "rows by their change")


def test_step_wrapper_note_under_disable_details_says_the_advice_needs_a_run_without_it(samples):
    """Under --disable_details no operator is paired (reference-1 §1.5), so the note's advice (the --op_name_map
    entry and --max_kernel_num 10) changed nothing when followed in the same run: the table kept the comparison's
    annotation (+156.086 ms) and the note repeated itself, while only --max_kernel_num was said to be ignored
    (found by the session-43 user review). The note now says the advice needs a run without --disable_details,
    and --op_name_map is said to be ignored there as --max_kernel_num is."""
    from msprof_compare.compare.summary_notes import unexplained_note

    dec, pw = str(samples / DECODE), str(samples / PIECEWISE)
    res = compare(dec, pw, disable_details=True)
    nb, _, nc, _ = res.frames["contributors"].attrs["wrappers"]
    text = unexplained_note(res.frames["contributors"], res.frames["waterfall"])
    assert text.endswith("and set the max_kernel_num option to 10 in a run without the disable_details option "
                         "(which pairs no operator, so neither option changes a sheet)") and " --" not in text
    # following the advice with --disable_details kept: the same contributor, both options said to be ignored
    kept = compare(dec, pw, disable_details=True, op_name_map={nb: nc}, max_kernel_num=10)
    assert kept.contributors["Name"].tolist() == res.contributors["Name"].tolist() == [nc]
    matched = "it only takes effect when operators are matched, which disable_details turns off."
    _, said = build_options(disable_details=True, op_name_map=str({nb: nc}), max_kernel_num=10)
    assert said == [f"The max_kernel_num parameter is ignored: {matched}",
                    f"The op_name_map parameter is ignored: {matched}"]
    # without --disable_details the note gives the advice alone, and following it compares inside
    assert "disable_details" not in unexplained_note(*(compare(dec, pw).frames[k] for k in ("contributors",
                                                                                            "waterfall")))
    assert compare(dec, pw, op_name_map={nb: nc}, max_kernel_num=10).contributors["Name"].iloc[0] == "hipGraphLaunch"
    # the memory table's note (vLLM's capture traces) gives the same advice, with the same condition
    from msprof_compare.compare import memory_summary

    cap = [str(samples / p) for p in CAPTURES]
    assert memory_summary.contributors_note(compare(*cap, disable_details=True).memory_contributors).endswith(
        "set the max_kernel_num option to 10 in a run without the disable_details option (which pairs no operator, "
        "so neither option changes a sheet)")
    assert memory_summary.contributors_note(compare(*cap).memory_contributors).endswith(
        "set the max_kernel_num option to 10")


def test_a_framework_op_holding_most_device_time_is_no_step_wrapper(samples):
    """Reference pair 4 (PARAM AlexNet on an A100 against NPU level 1 rank 0) got the wrapper note, telling the user
    to map ``[param|cuda]`` onto AccumulateGrad (found by the session-41 leftovers audit): the NPU text export links
    the all-reduce HCCL ops to the AccumulateGrad that launched them, so that op holds over 90% of the side's
    operator device time, but it is an op with work of its own, not an annotation around the step. The premise
    from the raw inputs: PARAM's outer annotation holds every op of the trace; the NPU side's AccumulateGrad rows own
    the HCCL ops (the sheet's figures, 106.247 of 115.731 ms)."""
    gpu = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    npu = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    ev = _events(gpu)
    (outer,) = [e for e in ev if e.get("ph") == "X" and e.get("name") == "[param|cuda]"]
    lo, hi = _ns(outer["ts"]), _ns(outer["ts"]) + _ns(outer["dur"])
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    assert ops and all(lo <= _ns(e["ts"]) <= hi for e in ops)  # every op inside the annotation
    res = compare(str(gpu), str(npu))
    stat = res.sheet("OperatorCompareStatistic").set_index("Operator Name")
    grad = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    comp = stat["Comparison Device Duration(ms)"]
    assert comp[grad] >= 0.9 * comp.sum() and stat.loc["[param|cuda]", "Base Device Duration(ms)"] == \
        pytest.approx(stat["Base Device Duration(ms)"].sum())
    assert "wrappers" not in res.frames["contributors"].attrs
    from msprof_compare.compare.summary_notes import unexplained_note
    note = unexplained_note(res.frames["contributors"], res.frames["waterfall"],
                            res.frames.get("contributor_communication"))
    # no two-sided advice (an entry mapping [param|cuda] onto AccumulateGrad); the one-sided note instead
    # (tests/test_one_sided_wrapper.py), then the figures of all operators
    assert note.startswith("the base side's operator device time lies under one top-level op that the comparison "
                           "side has no op of") and "give the op_name_map option the entry" not in note
    assert "; all operators together changed by" in note and "--op_name_map" not in note


CAPTURES = ("tracelens/tests/traces/inference/vllm_decode_full/capture_traces/"
            "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz",
            "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/capture_traces/"
            "graph_capture_rank_0.1773709679453551615.pt.trace.json.gz")


def test_memory_contributors_of_step_wrappers_are_said(samples):
    """vLLM's capture traces (the only inference pair with [memory] events) wrap each side's allocations in one
    annotation named after its batch: the memory table showed capture_8192_PIECEWISE 0.00 -> 20764.11 MB with the
    base's capture_32_FULL 513.54 MB cut off by the 80% cut, silently (session-41 audit). The memory table now
    gets the wrapper note the time contributors get, from the same rule, on the console and in the JSON; the MB
    are recomputed from the raw JSON (the positive Bytes of the [memory] events inside the annotation, in MiB,
    which are every allocation of the trace); the entry it gives pairs the two and the table compares inside."""
    from msprof_compare.report.json_report import to_document
    from msprof_compare.report.summary_console import render_memory

    want = []
    for path in CAPTURES:
        ev = _events(samples / path)
        (ann,) = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                  and e["name"].startswith("capture_")]
        lo, hi = ann["ts"], ann["ts"] + ann["dur"]
        alloc = [e["args"]["Bytes"] for e in ev if e.get("name") == "[memory]" and e["args"]["Bytes"] > 0]
        inside = [e["args"]["Bytes"] for e in ev if e.get("name") == "[memory]" and e["args"]["Bytes"] > 0
                  and e["tid"] == ann["tid"] and lo <= e["ts"] <= hi]
        assert sum(inside) == sum(alloc)
        want.append((ann["name"], sum(inside) / 2**20))
    (nb, mb), (nc, mc) = want
    assert (nb, round(mb, 2), nc, round(mc, 2)) == ("capture_32_FULL", 513.54, "capture_8192_PIECEWISE", 20764.11)
    base, comp = (str(samples / p) for p in CAPTURES)
    res = compare(base, comp, enable_memory_compare=True)
    contrib = res.memory_contributors
    assert contrib["Name"].tolist() == [nc]  # the base's wrapper is cut off the table
    found = contrib.attrs["wrappers"]
    assert (found[0], found[2]) == (nb, nc) and (found[1], found[3]) == pytest.approx((mb, mc), abs=1e-6)
    note = (f"Note: each side's allocated memory lies under one top-level op that the other side has no op of (base "
            f"{nb} {mb:.2f} MB, comparison {nc} {mc:.2f} MB; an annotation around the step, named after its batch, "
            f"is one), so the memory table compares these two, not the ops inside them: to pair them and compare "
            f"inside, give the op_name_map option the entry {nb!r}: {nc!r} (beside any it holds) and set the "
            "max_kernel_num option to 10.")
    lines = render_memory(res.frames).splitlines()
    assert note in lines and lines.index(note) == len(lines) - 3  # under the table, above the memory lines (2)
    assert to_document(res)["summary"]["memory_contributors_note"] == note[len("Note: "):-1]
    # as the note says: paired and drilled into, the table lists the ops inside, and the note is gone
    paired = compare(base, comp, enable_memory_compare=True, op_name_map={nb: nc}, max_kernel_num=10)
    assert paired.memory_contributors["Name"].iloc[0].startswith("## Call CompiledFxGraph ")
    assert "wrappers" not in paired.memory_contributors.attrs
    assert to_document(paired)["summary"]["memory_contributors_note"] is None


def test_step_wrapper_note_with_the_map_given_asks_for_max_kernel_num_alone(samples):
    """The wrapper note's advice half-followed: --op_name_map given the entry it names, without --max_kernel_num.
    The statistic sheets keep a row per name, so the wrappers stay the contributors and the note came back telling
    the user to give the entry they gave, followed by a second sentence on the same two names with the same
    figures ("--op_name_map pairs names that the statistic sheets, and so these rows, keep apart: nb with nc 10.718
    ms -> 156.086 ms together"). The note now says the map pairs them already and asks for --max_kernel_num alone,
    and gives the two figures once; the memory table's note (vLLM's capture traces) likewise. Figures from the raw
    traces: the device ns launched inside each annotation, and the [memory] Bytes allocated inside it, in MiB."""
    from msprof_compare.compare import memory_summary
    from msprof_compare.compare.summary_notes import unexplained_note

    dec, pw = samples / DECODE, samples / PIECEWISE
    (nb, mb), (nc, mc) = [(a["name"], _launched_inside(ev, a)) for ev in map(_events, (dec, pw))
                          for a in ev if a.get("ph") == "X" and a.get("cat") == "user_annotation"]
    assert (mb, mc) == (10_717_708, 156_085_905)
    res = compare(str(dec), str(pw), op_name_map={nb: nc})
    assert res.contributors["Name"].tolist() == [nc]  # the wrappers stay the rows: the sheets keep both names
    note = unexplained_note(res.contributors, res.waterfall)
    assert note == (f"each side's operator device time lies under one top-level op that the other side has no op of "
                    f"(base {nb} {mb / 1e6:.3f} ms, comparison {nc} {mc / 1e6:.3f} ms; an annotation around the step, "
                    "named after its batch, is one), so the operator level compares these two, not the ops inside "
                    "them: the op_name_map option pairs them already, in the detail sheets only (the statistic "
                    "sheets, which these rows come from, keep a row per name): to compare inside, set the "
                    "max_kernel_num option to 10")
    # the memory table: the capture traces' wrappers, paired by the map alone
    cap = []
    for path in CAPTURES:
        ev = _events(samples / path)
        (ann,) = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                  and e["name"].startswith("capture_")]
        cap.append((ann["name"], sum(e["args"]["Bytes"] for e in ev if e.get("name") == "[memory]"
                                     and e["args"]["Bytes"] > 0 and e["tid"] == ann["tid"]
                                     and ann["ts"] <= e["ts"] <= ann["ts"] + ann["dur"]) / 2**20))
    (kb, vb), (kc, vc) = cap
    mem = compare(*(str(samples / p) for p in CAPTURES), enable_memory_compare=True, op_name_map={kb: kc})
    # the row beside the note still reads base 0.00 MB (the statistic sheet's row per name): the note says so
    top = mem.memory_contributors.iloc[0]
    assert (top["Name"], top["Base(MB)"], round(top["Comparison(MB)"], 2)) == (kc, 0.0, round(vc, 2))
    assert memory_summary.contributors_note(mem.memory_contributors) == (
        f"each side's allocated memory lies under one top-level op that the other side has no op of (base {kb} "
        f"{vb:.2f} MB, comparison {kc} {vc:.2f} MB; an annotation around the step, named after its batch, is one), so "
        "the memory table compares these two, not the ops inside them: the op_name_map option pairs them already, in "
        "the detail sheets only (the statistic sheets, which these rows come from, keep a row per name): to compare "
        "inside, set the max_kernel_num option to 10")
    # under --disable_details the map is ignored: the advice stays whole, for a run without it
    off = compare(str(dec), str(pw), op_name_map={nb: nc}, disable_details=True)
    assert unexplained_note(off.contributors, off.waterfall).endswith(
        f"give the op_name_map option the entry {nb!r}: {nc!r} (beside any it holds) and set the max_kernel_num option "
        "to 10 in a run without the disable_details option (which pairs no operator, so neither option changes a "
        "sheet)")


def _module_held(events: list[dict]) -> tuple[int, int]:
    """(device ns of the kernels and copies launched inside an ``nn.Module`` frame of the launch call's thread,
    device ns of every kernel and copy with a launch call), by each kernel's own correlation id."""
    frames = [(e["tid"], _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
              if e.get("cat") == "python_function" and e["name"].startswith("nn.Module: ")]
    calls = {e["args"]["correlation"]: e for e in events
             if e.get("ph") == "X" and e.get("cat") in RUNTIME and "correlation" in e.get("args", {})}
    held = total = 0
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy") and e["args"].get("correlation") in calls:
            call = calls[e["args"]["correlation"]]
            total += _ns(e["dur"])
            if any(tid == call["tid"] and lo <= _ns(call["ts"]) <= hi for tid, lo, hi in frames):
                held += _ns(e["dur"])
    return held, total


@pytest.mark.parametrize("base, comparison", [
    (DECODE, PIECEWISE),
    (SGLANG, "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"),
])
def test_module_sheets_coverage_note(samples, base, comparison, caplog):
    """vLLM's and SGLang's full-graph decode launch the graph outside the model's forward, so the base's module
    rows held 0.277 of 10.718 ms (vLLM) and its GptOssForCausalLM_0 read 0 ms beside the piecewise run's
    155.653 ms, silently (found by the session-41 inference audit). A "module sheets coverage" note now gives
    each side's share; the figures are recomputed from the raw JSON (kernels launched inside an nn.Module
    frame). NPU pair 1 (both sides' module rows miss the all-reduce alike, 4 %) gets no row."""
    want = [_module_held(_events(samples / p)) for p in (base, comparison)]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(samples / base), str(samples / comparison))
    assert "ModuleCompareStatistic" in res.sheet_names
    row = res.guards.set_index("Check").loc["module sheets coverage"]
    assert row["Status"] == "note"
    assert [row["Base"], row["Comparison"]] == [pytest.approx(h / t, rel=1e-6) for h, t in want]
    (hb, tb), (hc, tc) = want
    assert (f"base {hb / 1e6:.3f} of {tb / 1e6:.3f} ms, comparison {hc / 1e6:.3f} of {tc / 1e6:.3f} ms"
            in row["Detail"])
    # the option named bare: this result's caller wrote compare(...), a CLI user --disable_module
    assert row["Detail"].endswith("reads 0 ms): the disable_module option writes every operator's row "
                                  "(OperatorCompareStatistic)") and " --" not in row["Detail"]
    # the log: a line per side's figures and one for the reading (one line of 710 characters before)
    (block,) = blocks(caplog.messages, checks.NOTE_CHECKS[checks.MODULE_CHECK])
    assert block[0].endswith("(their level-1 modules' Device Total Time):")
    assert block[1:3] == [f"base {hb / 1e6:.3f} of {tb / 1e6:.3f} ms",
                          f"comparison {hc / 1e6:.3f} of {tc / 1e6:.3f} ms"]
    assert block[3].startswith("device time launched outside every module") and len(block) == 4


def test_no_module_coverage_row_where_both_sides_miss_alike(samples):
    npu = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
    res = compare(str(samples / npu.format(1)), str(samples / npu.format(2)))
    assert "ModuleCompareStatistic" in res.sheet_names
    assert "module sheets coverage" not in res.guards["Check"].tolist()


def test_step_wrapper_outside_every_module_says_what_the_module_rows_hold(samples, tmp_path):
    """The Summary's row on contributors that no module row names said of vLLM's piecewise step annotation "it is
    outside every module", as if its 156.086 ms were missing from the module sheets, where the model's modules run
    inside it hold 156.000 ms of it (session-41 audit). Figures from the raw JSON: kernels and copies launched
    inside an nn.Module frame (every op of the trace lies inside the annotation) and all launched ones. Swapped
    sides give the base's figures; an op around no module (pair 1's AccumulateGrad) keeps the old words. Here a
    module row changed (the graph launch), so the module contributors' lead gives those figures and the sheet's
    row leaves the annotation out (said once); the row's own words are for a run where no module row changed."""
    from xlsxutil import read_xlsx

    from msprof_compare.compare.module_contributors import module_contributors_note, outside_modules_line

    held, total = _module_held(_events(samples / PIECEWISE))
    assert (held, total) == (155_999_669, 156_085_905)
    (name,) = [e["name"] for e in _events(samples / PIECEWISE) if e.get("cat") == "user_annotation"]
    for sides, side in (((DECODE, PIECEWISE), "comparison"), ((PIECEWISE, DECODE), "base")):
        res = compare(*(str(samples / p) for p in sides))
        (summary,) = [s for s in res.sheets if s.name == "Summary"]
        assert summary.contributors.attrs["outside_modules"] == [name]
        figures = f"({side} {held / 1e6:.3f} of its {total / 1e6:.3f} ms)"
        note = module_contributors_note(res.module_contributors)
        assert note.startswith(f"The module rows hold part of the time of {name} {figures}, which runs modules")
        cells = read_xlsx(res.to_excel(str(tmp_path / side)), sheet_name="Summary", header=None).iloc[:, 0].tolist()
        cells = cells[:next(i for i, v in enumerate(cells) if str(v).startswith("Validity checks"))]  # not the charts'
        # its contributor row, the lead (the note on step wrappers names it too, a row per console line: its opening,
        # the wrapper of each side and the --op_name_map entry)
        assert [v for v in cells if isinstance(v, str) and name in v and not v.startswith(("Note: ", "  - ", "To "))
                ] == [name, f"{note}:"]
        assert outside_modules_line(*(summary.contributors.attrs[k] for k in ("outside_modules", "outside_held"))) == (
            f"Outside every module but run around modules, whose rows hold this much of its time: {name} {figures}; "
            "the disable_module option writes every "
            "operator's row (OperatorCompareStatistic).")
    assert outside_modules_line(["AccumulateGrad"], {}) == (
        "Not on the module sheets: AccumulateGrad (it is outside every module); the disable_module option writes every "
        "operator's row (OperatorCompareStatistic).")


def test_step_wrapper_with_no_module_row_changed_is_named_in_the_row_under_the_contributors(samples, tmp_path):
    """Where the annotation's change is outside every module (a kernel it launches outside the model's forward
    2 us longer, into the idle time after it), no module row moves, so there are no module contributors and the
    Summary sheet's row under the contributors says how much of its time the module rows hold (the figures from the
    raw JSON, as above): the one place the workbook says it then, and the console and the JSON say it alike."""
    from xlsxutil import read_xlsx

    raw = gzip.open(samples / PIECEWISE).read().decode()
    events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    held, total = _module_held(events)
    frames = [(e["tid"], e["ts"], e["ts"] + e["dur"]) for e in events
              if e.get("cat") == "python_function" and e["name"].startswith("nn.Module: ")]
    calls = {e["args"]["correlation"]: e for e in events
             if e.get("ph") == "X" and e.get("cat") in RUNTIME and "correlation" in e.get("args", {})}
    kernels = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                     key=lambda e: e["ts"])
    outside = [i for i, e in enumerate(kernels) if e["cat"] == "kernel" and e["args"].get("correlation") in calls
               and not any(t == calls[e["args"]["correlation"]]["tid"] and lo <= calls[e["args"]["correlation"]]["ts"]
                           <= hi for t, lo, hi in frames)]
    k = next(kernels[i] for i in outside if kernels[i + 1]["ts"] - kernels[i]["ts"] - kernels[i]["dur"] > 2)
    old = f'"ts": {k["ts"]}, "dur": {k["dur"]},'
    assert raw.count(old) == 1
    (tmp_path / "longer.json").write_text(raw.replace(old, f'"ts": {k["ts"]}, "dur": {k["dur"] + 2},'))
    (name,) = [e["name"] for e in events if e.get("cat") == "user_annotation"]
    res = compare(str(samples / PIECEWISE), str(tmp_path / "longer.json"))
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [[name, 0.002]]
    assert not len(res.module_contributors)
    cells = read_xlsx(res.to_excel(str(tmp_path)), sheet_name="Summary", header=None).iloc[:, 0].tolist()
    assert [v for v in cells if str(v).startswith("Outside every module")] == [
        f"Outside every module but run around modules, whose rows hold this much of its time: {name} (base "
        f"{held / 1e6:.3f} of its {total / 1e6:.3f} ms, comparison {held / 1e6:.3f} of its {total / 1e6 + 0.002:.3f} "
        "ms); the disable_module option writes every operator's row (OperatorCompareStatistic)."]
    from msprof_compare.report.json_report import to_document
    from msprof_compare.report.summary_console import render_explain

    (line,) = [v for v in cells if str(v).startswith("Outside every module")]
    assert to_document(res)["summary"]["outside_modules_note"] == line
    assert render_explain(res.frames, res.verdict).splitlines()[-1] == line


def test_step_wrapper_held_figures_only_on_a_side_that_lists_it(samples):
    """xDiT's SD 3.5 trace opens model_inference and execute_diffusion_1_256x256 at the same instant for the same
    1194812.438 us (read from the raw JSON), so the second is nested in the first and is no top-layer operator
    there: the contributor execute_diffusion_1_256x256 (the Flux trace's top-layer annotation) lists 0 ms on that
    side, where model_inference holds that time. The row said "comparison 711.696 of its 0.000 ms", counting the
    modules inside the nested op as its time; it now gives the base's figure alone."""
    from msprof_compare.compare.module_contributors import outside_modules_line

    sd = "tracelens/tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz"
    spans = {n: [(e["ts"], e["dur"]) for e in _events(samples / sd) if e.get("name") == n and e["cat"] ==
                 "user_annotation"] for n in ("model_inference", "execute_diffusion_1_256x256")}
    assert spans["model_inference"] == spans["execute_diffusion_1_256x256"] == [
        (Decimal("2915995397957.66"), Decimal("1194812.438"))]
    res = compare(str(samples / XDIT), str(samples / sd))
    listed = res.contributors.set_index("Name")
    assert listed.loc["execute_diffusion_1_256x256", "Comparison(ms)"] == 0
    (summary,) = [s for s in res.sheets if s.name == "Summary"]
    assert [s for s, _h, _t in summary.contributors.attrs["outside_held"]["execute_diffusion_1_256x256"]] == ["base"]
    line = outside_modules_line(*(summary.contributors.attrs[k] for k in ("outside_modules", "outside_held")))
    assert "of its 0.000 ms" not in line
    # the line above the module contributors (console, workbook, JSON) reads the same figures
    from msprof_compare.compare.module_contributors import module_contributors_note

    note = module_contributors_note(res.module_contributors)
    assert "execute_diffusion_1_256x256 (base " in note and "of its 0.000 ms" not in note
    base_ms = listed.loc["execute_diffusion_1_256x256", "Base(ms)"]
    assert "execute_diffusion_1_256x256 (base " in line and f" of its {base_ms:.3f} ms)" in line


def test_no_module_coverage_row_between_a_text_and_a_db_export(samples, monkeypatch):
    """A text export links its HCCL ops to their operators, a DB export only compute tasks, so the same module
    rows are a small share of the text side's operator time and half of the DB side's: level 1, rank 0, gives
    4.0 % against 52.2 %, 48 points, just under the 50-point threshold (found by the session-41 review), and a
    job whose forward holds a little more of its compute would have been told that its module rows "compare
    different parts of their work". The shares are recomputed from the sheets' level-1 module rows; at a
    45-point threshold the row appeared; no row now, in either order, as the gap is the export kinds' (the "NPU
    export kind" note); a pair of one kind keeps the check."""
    from msprof_compare.compare import checks
    from msprof_compare.compare.table import sheet_numbers

    text, db = (samples / f"msinsight/test/data/pytorch/{k}/level1/rank0_ascend_pt" for k in ("text", "db"))
    res = compare(str(text), str(db))
    mod, ops = res.sheet("ModuleCompareStatistic"), compare(str(text), str(db), disable_module=True).sheet(
        "OperatorCompareStatistic")
    top = (mod.iloc[:, 4].astype(str) == "[ TOTAL ]") & (mod.iloc[:, 2].astype(str) == "1")
    shares = [sheet_numbers(mod[top].iloc[:, m]).sum() / sheet_numbers(ops.iloc[:, o]).sum()
              for m, o in ((8, 2), (12, 4))]
    assert shares[0] == pytest.approx(0.040, abs=5e-4) and shares[1] == pytest.approx(0.522, abs=5e-4)
    monkeypatch.setattr(checks, "MODULE_SHARE", 0.45)
    for b, c in ((text, db), (db, text)):
        assert "module sheets coverage" not in compare(str(b), str(c)).guards["Check"].tolist()
    # one kind on both sides: the check is made (the same forward modules, nothing outside them differs)
    monkeypatch.setattr(checks, "MODULE_SHARE", 0.0)
    row = compare(str(text), str(text)).guards.set_index("Check").loc["module sheets coverage"]
    assert row["Base"] == row["Comparison"] == pytest.approx(shares[0], rel=1e-6)


def test_module_rows_held_only_on_a_side_that_lists_the_op():
    """``_held_by_side`` adds a side whose module rows hold none of a listed op's time at 0, but leaves out a side
    that lists it at 0 ms ("base 0.000 of its 0.000 ms" says nothing), and a name the table does not list."""
    import pandas as pd

    from msprof_compare.compare.module_contributors import _held_by_side

    contrib = pd.DataFrame({"Name": ["op", "launch"], "Base(ms)": [0.0, 10.388], "Comparison(ms)": [5.0, 149.92]})
    held = {"op": [("comparison", 2.0, 5.0)], "launch": [("comparison", 149.92, 149.92)]}
    assert _held_by_side(contrib, ["op", "launch", "absent"], held) == {
        "op": [("comparison", 2.0, 5.0)],
        "launch": [("base", 0.0, 10.388), ("comparison", 149.92, 149.92)],
        "absent": []}
