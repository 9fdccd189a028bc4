"""Kineto loader and GPU time breakdown rules that no other test pinned (a mutation audit of
``loaders/kineto.py`` and ``compare/breakdown_gpu.py``). Expected figures come from the raw JSON (json module,
Decimal µs -> ns, plain Python), not from our loader, timeline or classifier."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from spans import longest_free

from msprof_compare.api import compare
from msprof_compare.compare import checks
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data" / "kineto"
H100 = DATA / "h100_timesformer_excerpt.pt.trace.json"
RCCL = DATA / "mi300_rccl_generic_excerpt.pt.trace.json"
LEGACY_FULL = "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
HTA_ASYNC_GPU = "hta/tests/data/trace_file_list/inference_rank_1.json.gz"
HTA_MULTI_STREAM = "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz"
HTA_NCCL = "hta/tests/data/timeline_analysis/sampled_rank-0.json.gz"
HTA_EARLY = "hta/tests/data/negative_queue_length_values_check/rank0.json.gz"
ACT_CHECKPOINT = "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::matmul", "aten::bmm")  # the default keywords' Matmul ops


def _opts(**kw):
    return build_options(**kw)[0]


def _ns(v) -> int:
    return int(Decimal(str(v)) * 1000)


def _doc(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


def _write(tmp_path: Path, doc: dict, name: str = "t.pt.trace.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def _sample(samples: Path, rel: str) -> Path:
    path = samples / rel
    if not path.is_file():
        pytest.skip(f"{rel} absent")
    return path


def _overall(path: str, **kw):
    return compare(path, path, enable_profiling_compare=True, **kw).sheet("OverallMetrics").set_index("Index")


def _union_ns(spans: list[tuple[int, int]]) -> int:
    total, reach = 0, None
    for s, e in sorted(spans):
        if reach is None or s > reach:
            total, reach = total + e - s, e
        elif e > reach:
            total, reach = total + e - reach, e
    return total


# --------------------------------------------------------------------------- loader


def test_legacy_memcpy_and_memset_cats_are_normalised(samples):
    """PyTorch 1.8 writes its copies as cat ``Memcpy`` / ``Memset``: kernels.cat reads them as gpu_memcpy /
    gpu_memset (the communication comparison takes nccl-named gpu_memcpy rows) while task_type keeps the cat as
    written. The full legacy ResNet50 trace: 8,772 Kernel, 12 Memcpy and 312 Memset events by the raw JSON."""
    path = _sample(samples, LEGACY_FULL)
    raw = Counter(e["cat"] for e in _doc(path)["traceEvents"]
                  if e.get("ph") == "X" and e.get("cat") in ("Kernel", "Memcpy", "Memset"))
    assert raw == {"Kernel": 8772, "Memcpy": 12, "Memset": 312}
    k = load_profile(str(path), _opts()).kernels
    pairs = Counter(zip(k["task_type"].tolist(), k["cat"].tolist(), strict=True))
    assert pairs == {("Kernel", "kernel"): raw["Kernel"], ("Memcpy", "gpu_memcpy"): raw["Memcpy"],
                     ("Memset", "gpu_memset"): raw["Memset"]}


def test_async_gpu_flows_link_launches(samples):
    """hta's inference trace links its four launches by flows of cat ``async_gpu`` (an older Kineto's name,
    reference-1 §4.1): each start / end pair is a flow, from the launch call to the kernel."""
    path = _sample(samples, HTA_ASYNC_GPU)
    ev = _doc(path)["traceEvents"]
    s = {e["id"]: e for e in ev if e.get("cat") == "async_gpu" and e.get("ph") == "s"}
    f = {e["id"]: e for e in ev if e.get("cat") == "async_gpu" and e.get("ph") == "f"}
    want = sorted((_ns(s[i]["ts"]), s[i]["tid"], _ns(f[i]["ts"]), f[i]["tid"]) for i in s.keys() & f.keys())
    assert len(want) == 4
    fl = load_profile(str(path), _opts()).flows
    assert set(fl["cat"]) == {"async_gpu"}
    assert sorted(zip(fl["s_ts"].tolist(), fl["s_tid"].tolist(), fl["f_ts"].tolist(), fl["f_tid"].tolist(),
                      strict=True)) == want


def test_collective_name_on_some_kernels_only(tmp_path):
    """PyTorch writes ``Collective name`` on some kernels and not on others (the RCCL excerpt: not on the kernel
    launched before the profile began). A kernel without it still takes the collective of the record_param_comms
    op around its launch: here the all-reduce kernel (correlation 5604) with its own name removed (a synthetic
    edit), whose launch hipExtLaunchKernel lies inside the record naming ``allreduce``."""
    doc = _doc(RCCL)
    ev = doc["traceEvents"]
    kernels = {k["args"]["correlation"]: k for k in ev if k.get("cat") == "kernel"}
    del kernels[5604]["args"]["Collective name"]
    call = next(e for e in ev if e.get("cat") == "cuda_runtime" and e["args"]["correlation"] == 5604)
    around = [r["args"]["Collective name"] for r in ev if r.get("name") == "record_param_comms"
              and r["tid"] == call["tid"] and r["ts"] <= call["ts"] <= r["ts"] + r["dur"]]
    assert around == ["allreduce"]
    path = _write(tmp_path, doc)
    rows = compare(path, path, enable_communication_compare=True).sheet("CommunicationCompare")
    got = {r["Communication OP Name"]: (r["Calls"], r["Total Duration(us)"]) for _, r in rows.iterrows()}
    dur = {c: kernels[c]["dur"] for c in kernels}
    assert got == {"nccldevkernel": (1, pytest.approx(dur[4079])),
                   "broadcast": (2, pytest.approx(dur[5183] + dur[5188])),
                   "allreduce": (1, pytest.approx(dur[5604]))}


def _matmul_launches(ev: list[dict], flow_cat: str) -> list[int]:
    """Durations (ns) of the kernels whose launch (the start of the ``flow_cat`` flow ending at the kernel) lies
    inside a Matmul op (aten::mm / addmm / matmul / bmm) on the launching thread."""
    starts = {e["id"]: e for e in ev if e.get("cat") == flow_cat and e.get("ph") == "s"}
    ends = {_ns(e["ts"]): starts[e["id"]] for e in ev
            if e.get("cat") == flow_cat and e.get("ph") == "f" and e["id"] in starts}
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"].lower() in MATMUL_OPS]
    out = []
    for k in ev:
        s = ends.get(_ns(k["ts"])) if k.get("cat") == "kernel" else None
        if s and any(o["tid"] == s["tid"] and _ns(o["ts"]) <= _ns(s["ts"]) <= _ns(o["ts"]) + _ns(o["dur"])
                     for o in ops):
            out.append(_ns(k["dur"]))
    return out


def test_gpu_flow_cat_in_another_case(tmp_path):
    """docs/differences.md, "--gpu_flow_cat is matched without regard to case": the H100 excerpt with its ac2g
    flows renamed ``My_Flow`` (a synthetic edit) and ``--gpu_flow_cat My_Flow`` links its kernels as the
    original trace does with the usual categories: 2 kernels launched inside aten::mm / addmm ops are Matmul (by
    the raw JSON; without their launches they would be Cube by name)."""
    doc = _doc(H100)
    want = _matmul_launches(doc["traceEvents"], "ac2g")
    assert len(want) == 2
    for e in doc["traceEvents"]:
        if e.get("cat") == "ac2g":
            e["cat"] = "My_Flow"
    path = _write(tmp_path, doc)
    om = _overall(path, gpu_flow_cat="My_Flow")
    assert om.loc["\tMatmul", "Number"] == 2
    assert om.loc["\tMatmul", "Duration(ms)"] == pytest.approx(sum(want) / 1e6, abs=1e-9)
    assert om["Duration(ms)"].tolist() == _overall(str(H100))["Duration(ms)"].tolist()


def test_xpu_sycl_queue_is_the_stream_not_the_lane(tmp_path):
    """Intel XPU kernels name their queue (``sycl queue``) and no stream (Kineto's XpuptiActivityHandlers): the
    queue is the stream. The H100 excerpt with each device event's ``stream`` arg renamed ``sycl queue`` and set to
    100 + the stream, its lane (tid 7) unchanged (synthetic: no sample is an XPU trace; the queue differs from the
    lane, so reading the lane instead, the rule for a device event without any stream arg, shows): by the raw
    JSON, all 75 device events (62 kernels, 13 memsets) are on stream 107, not 7."""
    doc = _doc(H100)
    device = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memset")]
    assert {(e["tid"], e["args"]["stream"]) for e in device} == {(7, 7)} and len(device) == 75
    for e in device:
        e["args"]["sycl queue"] = 100 + e["args"].pop("stream")
    prof = load_profile(_write(tmp_path, doc), _opts())
    assert prof.kernels["stream"].tolist() == [107] * 75


def test_epoch_scale_float_times_after_a_small_first_ts_are_exact(tmp_path):
    """Times too large for float64 to hold to the ns are re-read from the JSON text also where the trace's first
    float ts is small (the quick check that decodes ts as text looks at that one only): the H100 excerpt with every
    ts shifted by 1.7e15 us (epoch scale, ns digits kept) in its text, and a process_name event at ts 0.0 written
    first (synthetic: every sample's first ts has the scale of the rest). By the raw text (Decimal): E2E = last end
    - first start of the 62 kernels (no memcpy; all on stream 7), computing = their union; float64 holds such ts
    to 0.25 us only."""
    raw = re.sub(rb'("ts"\s*:\s*)(\d+)', lambda m: m.group(1) + str(int(m.group(2)) + 1_700_000_000_000_000).encode(),
                 H100.read_bytes())
    ev = json.loads(raw, parse_float=Decimal)["traceEvents"]
    kernels = [(int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000)) for e in ev
               if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert len(kernels) == 62
    at = raw.index(b"[", raw.index(b'"traceEvents"')) + 1
    first = b'{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "ts": 0.0, "args": {"name": "x"}}, '
    path = tmp_path / "t.pt.trace.json"
    path.write_bytes(raw[:at] + first + raw[at:])
    bd = gpu_breakdown(load_profile(str(path), _opts()))
    assert bd.e2e_ns == max(e for _, e in kernels) - min(s for s, _ in kernels)
    assert bd.computing_ns == _union_ns(kernels)


# --------------------------------------------------------------------------- breakdown


def test_duplicate_kernel_record_counts_once(tmp_path):
    """The original keys kernels by "pid-tid-ts", so a later record of the same key replaces the earlier one: the
    H100 excerpt with its last kernel written twice (synthetic), the copy 1 µs longer, has 62 computing kernels,
    not 63, and the categories hold the copy's duration once."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    copy = dict(kernels[-1], dur=kernels[-1]["dur"] + 1)
    ev.append(copy)
    last = {(e["pid"], e["tid"], _ns(e["ts"])): _ns(e["dur"]) for e in [*kernels, copy]}  # the later one wins
    assert len(last) == 62
    bd = gpu_breakdown(load_profile(_write(tmp_path, doc), _opts()))
    assert bd.computing_count == 62
    assert bd.categorised_ns == sum(last.values())


@pytest.mark.parametrize("stream, sdma_ns", [(20, 1_000), (28, 0), (24, 0)])
def test_compute_stream_ties_and_memcpys(samples, tmp_path, stream, sdma_ns):
    """hta's multi-stream trace runs one sgemm on each of streams 20, 28 and 24 (in file order), each after a
    Memset (Device). One of the memsets is made a 1-µs ``Memcpy HtoD`` (synthetic: no sample has a tie with a
    copy on the tied streams). The compute stream is the most common stream of the computing kernels, the first
    in file order on a tie (reference-1 §4.2: Counter.most_common), copies not counted: 20 each time, so only the
    copy on stream 20 is SDMA."""
    path = _sample(samples, HTA_MULTI_STREAM)
    doc = _doc(path)
    kernels = [e["args"]["stream"] for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    assert kernels == [20, 28, 24]
    memset = next(e for e in doc["traceEvents"] if e.get("cat") == "gpu_memset" and e["args"]["stream"] == stream)
    assert memset["dur"] == 1
    memset.update(cat="gpu_memcpy", name="Memcpy HtoD (Pinned -> Device)")
    om = _overall(_write(tmp_path, doc))
    got = om.loc["\tSDMA", "Duration(ms)"] if "\tSDMA" in om.index else 0  # a row only where a side has SDMA
    assert got == pytest.approx(sdma_ns / 1e6, abs=1e-12)


def test_compute_stream_counts_a_duplicated_kernel_twice(samples, tmp_path):
    """The compute stream comes from a pass over the file's events (reference-1 §4.2), before the kernel map drops
    duplicates: hta's multi-stream trace (one sgemm on each of streams 20, 28, 24) with the stream-24 sgemm
    written twice (synthetic: no sample repeats a kernel) counts 20: 1, 28: 1, 24: 2, so stream 24 is the compute
    stream and the memset on it, made a 1-µs ``Memcpy HtoD`` as in the test above, is SDMA: 0.001 ms. Counted
    after the duplicate is dropped, streams tie and 20, the first, would win (no SDMA)."""
    doc = _doc(_sample(samples, HTA_MULTI_STREAM))
    ev = doc["traceEvents"]
    sgemm = next(e for e in ev if e.get("cat") == "kernel" and e["args"]["stream"] == 24)
    ev.append(dict(sgemm))
    memset = next(e for e in ev if e.get("cat") == "gpu_memset" and e["args"]["stream"] == 24)
    assert memset["dur"] == 1
    memset.update(cat="gpu_memcpy", name="Memcpy HtoD (Pinned -> Device)")
    om = _overall(_write(tmp_path, doc))
    assert om.loc["\tSDMA", "Duration(ms)"] == pytest.approx(0.001, abs=1e-12)


def test_e2e_window_only_from_events_with_a_stream(tmp_path):
    """reference-1 §4.3: E2E spans the kernels and memcpys that carry a stream; a kernel on no stream (no stream
    arg, a named lane) counts in Computing Time only. The H100 excerpt with its first kernel so edited
    (synthetic; the spec's worked example has such a kernel)."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    first = min((e for e in ev if e.get("cat") == "kernel"), key=lambda e: _ns(e["ts"]))
    del first["args"]["stream"]
    first["tid"] = "stream 7"
    timed = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in ev
             if e.get("cat") in ("kernel", "gpu_memcpy") and "stream" in e["args"]]
    kernels = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in ev if e.get("cat") == "kernel"]
    e2e = max(e for _, e in timed) - min(s for s, _ in timed)
    assert _ns(first["ts"]) < min(s for s, _ in timed)
    bd = gpu_breakdown(load_profile(_write(tmp_path, doc), _opts()))
    assert bd.e2e_ns == e2e
    assert bd.computing_ns == _union_ns(kernels)


def test_two_flows_ending_at_one_kernel(tmp_path):
    """Two launch flows ending at one kernel start: the later one (in the order flows first appear) gives the
    kernel its launch (the original's dict overwrite). The H100 excerpt plus a flow (synthetic) from the launch
    call of a vector kernel to one of the two Matmul kernels, written after every other event: that kernel's
    launch is then outside any Matmul op, so it is Cube by name, and one Matmul kernel is left."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    want = _matmul_launches(ev, "ac2g")
    assert len(want) == 2
    starts = {e["id"]: e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    ends = {e["id"]: e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in starts}
    kernel_at = {_ns(e["ts"]): e for e in ev if e.get("cat") == "kernel"}
    ends = {i: f for i, f in ends.items() if _ns(f["ts"]) in kernel_at}  # some end on host calls
    target = next(kernel_at[_ns(f["ts"])] for f in ends.values() if _ns(kernel_at[_ns(f["ts"])]["dur"]) == want[0])
    other = next(starts[i] for i, f in ends.items() if "gemm" not in kernel_at[_ns(f["ts"])]["name"].lower()
                 and "elementwise" in kernel_at[_ns(f["ts"])]["name"])
    new_id = max(e["id"] for e in ev if e.get("cat") == "ac2g") + 1
    ev.append(dict(other, id=new_id))
    ev.append({"ph": "f", "cat": "ac2g", "id": new_id, "pid": target["pid"], "tid": target["tid"],
               "ts": target["ts"], "bp": "e", "name": "ac2g"})
    om = _overall(_write(tmp_path, doc))
    assert om.loc["\tMatmul", "Number"] == 1
    assert om.loc["\tMatmul", "Duration(ms)"] == pytest.approx(want[1] / 1e6, abs=1e-9)


def test_collectives_are_busy_for_the_longest_idle_stretch(samples):
    """The longest idle stretch is the longest part of the E2E window with neither a computing nor an NCCL
    kernel: hta's sampled rank 0 runs 10 NCCL kernels, which cover part of the longest gap between its computing
    kernels (67.861 ms without them, 58.862 ms with them, by the raw JSON)."""
    path = _sample(samples, HTA_NCCL)
    dev = [e for e in _doc(path)["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    timed = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in dev if "stream" in e["args"]]
    lo, hi = min(s for s, _ in timed), max(e for _, e in timed)
    kernels = [e for e in dev if e["cat"] == "kernel"]
    spans = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in kernels]
    computing = [sp for sp, e in zip(spans, kernels, strict=True) if not e["name"].lower().startswith("nccl")]
    want = longest_free(spans, lo, hi)
    assert len(spans) - len(computing) == 10
    assert want[1] == 58_862_000 and longest_free(computing, lo, hi)[1] == 67_861_000
    bd = gpu_breakdown(load_profile(str(path), _opts(enable_profiling_compare=True)))
    assert tuple(bd.longest_idle)[:2] == want


def test_conv_on_the_backward_thread_is_backward(samples):
    """Activation checkpointing recomputes forward convolutions during the backward pass, on the autograd thread
    (the tid of the first fwdbwd flow end): their kernels are Conv(Backward) although the ops are named
    forward. TraceLens' MI300X ResNet with activation checkpointing, by the raw JSON: of the computing kernels
    launched inside an ``aten::conv*`` op, 306 are forward and 933 backward (291 of these by their thread alone)."""
    path = _sample(samples, ACT_CHECKPOINT)
    ev = _doc(path)["traceEvents"]
    bwd_tid = next(e["tid"] for e in ev if e.get("cat") == "fwdbwd" and e.get("ph") == "f")
    starts = {e["id"]: e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    ends = {_ns(e["ts"]): starts[e["id"]] for e in ev
            if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in starts}
    conv = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "aten::conv" in e["name"].lower()]
    spans = [(o["tid"], _ns(o["ts"]), _ns(o["ts"]) + _ns(o["dur"]), o) for o in conv]  # each op's ns once
    count = Counter()
    for k in ev:
        s = ends.get(_ns(k["ts"])) if k.get("cat") == "kernel" and "nccl" not in k["name"].lower() else None
        if s is None:
            continue
        t = _ns(s["ts"])
        around = [o for tid, lo, hi, o in spans if tid == s["tid"] and lo <= t <= hi]
        if around:
            named = any(w in around[0]["name"].lower() for w in ("bwd", "backward", "back", "grad"))
            count["bwd" if named or s["tid"] == bwd_tid else "fwd"] += 1
            count["by thread"] += not named and s["tid"] == bwd_tid
    assert count == {"fwd": 306, "bwd": 933, "by thread": 291}
    om = _overall(str(path))
    assert om.loc["\tConv (Forward)", "Number"] == count["fwd"]
    assert om.loc["\tConv (Backward)", "Number"] == count["bwd"]


def _launched_starts(ev: list[dict]) -> set[tuple]:
    """Lanes and start times (pid, tid, ns) of the kernels with a complete ac2g launch flow, by the raw JSON: flow
    ends whose id has a start (a flow end is at a kernel where its lane and time are the kernel's)."""
    sids = {e["id"] for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    return {_lane(e) for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in sids}


def _lane(e: dict) -> tuple:
    return e["pid"], e["tid"], _ns(e["ts"])


def _early_stretch(path) -> tuple:
    """By the raw JSON: the events, the kernels, the window's start, the set of kernels with a complete launch
    flow (by lane and time), the first of them, and the computing kernels without one that run before it."""
    ev = _doc(path)["traceEvents"]
    dev = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    lo = min(_ns(e["ts"]) for e in dev if "stream" in e["args"])
    launched = _launched_starts(ev)
    kernels = [e for e in dev if e["cat"] == "kernel"]
    first = min(_ns(k["ts"]) for k in kernels if _lane(k) in launched)
    early = [(_ns(k["ts"]), _ns(k["ts"]) + _ns(k["dur"])) for k in kernels
             if _lane(k) not in launched and _ns(k["ts"]) < first and not k["name"].lower().startswith("nccl")]
    return ev, kernels, lo, launched, first, early


def test_early_kernels_run_before_the_first_launched_one(samples):
    """hta's rank 0 opens its E2E window with kernels whose launch flow has no start (launched before the
    profile began): by the raw JSON, the first kernel with a complete launch flow starts 2.230 ms into the window,
    and 5 computing kernels run before it (0.315 ms busy). Kernels without a launch that run later are not early."""
    path = _sample(samples, HTA_EARLY)
    ev, kernels, lo, launched, first, early = _early_stretch(path)
    later = [k for k in kernels if _lane(k) not in launched and _ns(k["ts"]) > first]
    assert (first - lo, len(early), _union_ns(early)) == (2_230_000, 5, 315_000) and later
    row = compare(str(path), str(path), enable_profiling_compare=True).guards.set_index("Check").loc[
        checks.EARLY_CHECK]
    # one input on both sides: its stretch said once
    assert "both sides: the first 2.230 ms of E2E, where 5 computing kernels run (0.315 ms busy)" in row["Detail"]
    assert "comparison:" not in row["Detail"]


def test_a_host_flow_end_at_a_kernel_start_time_launches_no_kernel(dlrm_rank):
    """A flow end is at a kernel where its lane and time are the kernel's, not its time alone: rank 1 of the DLRM
    job (whole-µs timestamps) holds an ac2g flow end without a start on the host thread, at the cudaEventQuery call
    of its id, whose ts is that of the 20th kernel launched before the profile began (17 more such ends fall
    on later kernels). Read by its time alone it
    was a launch of that kernel (a graph replay's), so the early stretch ended there: "the first 0.084 ms of E2E,
    where 19 computing kernels run". By the raw JSON (complete launch flows, lanes and times): the first launched
    kernel starts 0.768 ms into the window, and 64 computing kernels run before it (0.203 ms busy)."""
    path = dlrm_rank(1)
    ev, kernels, lo, launched, first, early = _early_stretch(path)
    assert (first - lo, len(early), _union_ns(early)) == (768_000, 64, 203_000)
    host_end = [f for f in ev if f.get("ph") == "f" and f.get("cat") == "ac2g" and f["pid"] != 1
                and any(k["ts"] == f["ts"] for k in kernels)]
    # stray ends the time alone took for launches (18 in all), the first 0.084 ms into the window
    assert len(host_end) == 18 and min(_ns(f["ts"]) for f in host_end) - lo == 84_000
    bd = gpu_breakdown(load_profile(str(path), _opts()))
    assert (bd.early_ns, bd.early_kernels.count, bd.early_kernels.ns) == (first - lo, 64, 203_000)
    assert not (load_profile(str(path), _opts()).flows["f_pid"] != 1).any()  # every flow ends on a device lane


def test_early_time_counts_from_the_window_start_not_from_an_unstreamed_copy(samples, tmp_path):
    """The early stretch runs from the E2E window's start (the first kernel or memcpy with a stream) to the first
    launched kernel: hta's rank 0 with its first memcpy (launched, 10 us) on a named lane and without a stream arg
    (synthetic, as in the E2E test above: no sample has a device event on no stream before the window). By the raw
    JSON: the window now opens at the second memcpy, 0.335 ms later, so the early stretch is 1.895 ms, not
    2.230 ms."""
    doc = _doc(_sample(samples, HTA_EARLY))
    ev = doc["traceEvents"]
    dev = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    copy = min(dev, key=lambda e: _ns(e["ts"]))
    assert copy["cat"] == "gpu_memcpy"
    del copy["args"]["stream"]
    copy["tid"] = "stream 25"
    lo = min(_ns(e["ts"]) for e in dev if "stream" in e["args"])
    launched = _launched_starts(ev)
    first = min(_ns(k["ts"]) for k in dev if k["cat"] == "kernel" and _lane(k) in launched)
    assert (lo - _ns(copy["ts"]), first - lo) == (335_000, 1_895_000)
    bd = gpu_breakdown(load_profile(_write(tmp_path, doc), _opts()))
    assert bd.early_ns == first - lo


def test_no_early_time_when_the_window_opens_after_the_first_launched_kernel(samples, tmp_path):
    """The early stretch is the part of the E2E window before the first launched kernel, so none when the window
    opens after it: hta's rank 0 with every kernel and memcpy up to the first launched kernel moved to a named lane
    without a stream arg (synthetic, as above), so that the window (streamed events only) opens after that kernel.
    The early kernels before it still run (by the raw JSON: 5 computing ones), but the stretch is 0, not negative."""
    doc = _doc(_sample(samples, HTA_EARLY))
    ev = doc["traceEvents"]
    dev = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    launched = _launched_starts(ev)
    first = min(_ns(k["ts"]) for k in dev if k["cat"] == "kernel" and _lane(k) in launched)
    moved = {}
    for e in dev:
        if _ns(e["ts"]) <= first:
            del e["args"]["stream"]
            lane = _lane(e)
            e["tid"] = moved[lane] = f"stream {e['tid']}"
    for f in ev:  # the launch flows' ends, on their kernels' lanes
        if f.get("ph") == "f" and _lane(f) in moved:
            f["tid"] = moved[_lane(f)]
    assert min(_ns(e["ts"]) for e in dev if "stream" in e["args"]) > first
    bd = gpu_breakdown(load_profile(_write(tmp_path, doc), _opts()))
    assert (bd.early_ns, bd.early_kernels.count) == (0, 5)


def test_early_kernels_on_concurrent_streams_count_their_union(samples, tmp_path):
    """The early kernels' busy time is the union of their times (concurrent streams overlap), not their sum: hta's
    rank 0 with its second early kernel (a 7-us elementwise kernel, not launched in the trace) moved to stream 27
    at 1 us into the first one (a 282-us cutlass gemm) (synthetic: the sample's 5 early kernels run one after
    another on stream 7). By the raw JSON: 282 + 6 + 7 + 13 = 308 us busy, where the sum is 315 us."""
    doc = _doc(_sample(samples, HTA_EARLY))
    ev = doc["traceEvents"]
    dev = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    launched = _launched_starts(ev)
    first = min(_ns(k["ts"]) for k in dev if k["cat"] == "kernel" and _lane(k) in launched)
    early = [k for k in dev if k["cat"] == "kernel" and _lane(k) not in launched and _ns(k["ts"]) < first]
    assert [k["dur"] for k in early] == [282, 7, 6, 7, 13]
    early[1].update(ts=early[0]["ts"] + 1, tid=27)
    early[1]["args"]["stream"] = 27
    assert _lane(early[1]) not in launched
    spans = [(_ns(k["ts"]), _ns(k["ts"]) + _ns(k["dur"])) for k in early]
    assert _union_ns(spans) == 308_000
    bd = gpu_breakdown(load_profile(_write(tmp_path, doc), _opts()))
    assert (bd.early_kernels.ns, bd.early_kernels.count) == (308_000, 5)


def test_user_annotation_is_a_cube_op_candidate(tmp_path):
    """reference-1 §3.7: the host ops a kernel's launch may lie in include cat user_annotation (a
    ``record_function`` range), so a range a user names after flash attention makes the kernels launched in it
    Flash Attention. The H100 excerpt plus such a range (synthetic: no sample names one so) around the launch call
    of one elementwise kernel that no Matmul op holds: it is Flash Attention (Forward) (Vector), its duration by
    the raw JSON."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    starts = {e["id"]: e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    ends = {_ns(e["ts"]): starts[e["id"]] for e in ev
            if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in starts}
    mm = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"].lower() in MATMUL_OPS]
    kernel, call = next((k, ends[_ns(k["ts"])]) for k in ev if k.get("cat") == "kernel"
                        and "elementwise" in k["name"] and _ns(k["ts"]) in ends
                        and not any(_ns(o["ts"]) <= _ns(ends[_ns(k["ts"])]["ts"]) <= _ns(o["ts"]) + _ns(o["dur"])
                                    for o in mm))
    ev.append({"ph": "X", "cat": "user_annotation", "name": "my_flash_attention", "pid": call["pid"],
               "tid": call["tid"], "ts": call["ts"], "dur": 1})
    om = _overall(_write(tmp_path, doc))
    assert om.loc["\tFlash Attention (Forward)", "Number"] == 1
    assert om.loc["\tFlash Attention (Forward)", "Duration(ms)"] == pytest.approx(_ns(kernel["dur"]) / 1e6,
                                                                                 abs=1e-9)


def test_graph_launch_with_correlation_zero(tmp_path):
    """A graph launch call links the kernels it replays by its correlation id, any whole number from 0: the vLLM
    MI300X excerpt with its first hipGraphLaunch's correlation id (and its kernels' flow ends) renumbered 0
    (synthetic: no sample holds id 0). Replay links by the raw JSON: flow ends at a kernel start whose id has no
    flow start and is the correlation id of exactly one launch call."""
    doc = _doc(DATA / "vllm_mi300x_piecewise_graphs_excerpt.pt.trace.json.gz")
    ev = doc["traceEvents"]
    call = next(e for e in ev if e.get("name") == "hipGraphLaunch")
    old = call["args"]["correlation"]
    assert not any(e.get("id") == 0 for e in ev if e.get("ph") in ("s", "f"))
    call["args"]["correlation"] = 0
    for e in ev:
        if e.get("cat") == "ac2g" and e.get("id") == old:
            e["id"] = 0
    corr = Counter(e["args"].get("correlation") for e in ev
                   if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"))
    sids = {e["id"] for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    at_kernel = {(e["pid"], e["tid"], _ns(e["ts"])) for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"}
    lone = [e for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] not in sids
            and (e["pid"], e["tid"], _ns(e["ts"])) in at_kernel and corr[e["id"]] == 1]
    assert sum(e["id"] == 0 for e in lone) > 0
    fl = load_profile(_write(tmp_path, doc), _opts()).flows
    replay = fl[fl["replay"] == 1]
    assert sorted(replay["f_ts"].tolist()) == sorted(_ns(e["ts"]) for e in lone)
    assert (replay[replay["id"] == "0"]["s_ts"] == _ns(call["ts"])).all()


def test_pytorch_18_input_dims_spelled_with_a_small_d_are_read(samples):
    """PyTorch 1.8's traces (kineto tb_plugin's resnet50 autograd-API run, cat "Operator") write "Input dims", not
    "Input Dims": the shapes are read from it, so the operator details, --use_input_shape and the Summary's shape
    check see them instead of N/A (docs/differences.md). Expected from the raw JSON: ``str()`` of each Operator
    event's list, counted per (name, shape text)."""
    path = _sample(samples, "kineto/tb_plugin/samples/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz")
    ops = [e for e in _doc(path)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "Operator"]
    assert ops and all("Input dims" in e["args"] and "Input Dims" not in e["args"] for e in ops)
    want = Counter((e["name"], str(e["args"]["Input dims"])) for e in ops)
    got = load_profile(str(path), _opts(enable_operator_compare=True)).ops
    got = got[got["cat"].str.lower() == "operator"]  # not the Runtime calls
    assert Counter(zip(got["name"], got["input_dims"], strict=True)) == want
    assert want[("aten::conv2d", "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []]")] > 0


def test_starts_at_needs_the_lane_and_the_time():
    """``model.starts_at`` (a flow end at a kernel): a row matches where a row of the other side has its pid, tid
    and ts, whatever the order and duplicates; checked against a set of tuples on random small keys."""
    import numpy as np

    from msprof_compare.model import starts_at

    rng = np.random.default_rng(7)
    for _ in range(300):
        n, m = int(rng.integers(0, 40)), int(rng.integers(0, 40))
        rows = [rng.integers(0, 3, n) for _ in range(3)]
        at = [rng.integers(0, 4, m) for _ in range(3)]
        lanes = set(zip(*(x.tolist() for x in at), strict=True))
        want = [key in lanes for key in zip(*(x.tolist() for x in rows), strict=True)]
        assert starts_at(*rows, *at).tolist() == want


def test_a_kernel_starting_with_the_first_launched_one_is_not_early(samples, tmp_path):
    """Early kernels run before the first launched kernel, strictly: hta's rank 0 with its last early kernel (a
    13-us kernel, not launched in the trace) moved to a stream of its own (99) to start at the very time of the
    first launched kernel (synthetic: no sample has such a tie). By the raw JSON the 4 kernels left before it run
    one after another: 282 + 7 + 6 + 7 = 302 us busy (a mutant reading "at or before" counted 5 kernels, 315 us)."""
    doc = _doc(_sample(samples, HTA_EARLY))
    ev = doc["traceEvents"]
    dev = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    launched = _launched_starts(ev)
    lo = min(_ns(e["ts"]) for e in dev if "stream" in e["args"])
    first_k = min((k for k in dev if k["cat"] == "kernel" and _lane(k) in launched), key=lambda k: _ns(k["ts"]))
    first = _ns(first_k["ts"])
    early = [k for k in dev if k["cat"] == "kernel" and _lane(k) not in launched and _ns(k["ts"]) < first]
    assert [k["dur"] for k in early] == [282, 7, 6, 7, 13]
    early[4].update(ts=first_k["ts"], tid=99)
    early[4]["args"]["stream"] = 99
    assert _lane(early[4]) not in launched
    bd = gpu_breakdown(load_profile(_write(tmp_path, doc), _opts()))
    assert (bd.early_ns, bd.early_kernels.ns, bd.early_kernels.count) == (first - lo, 302_000, 4)


def _copy_notes(path: str) -> list[str]:
    return [w for w in load_profile(path, _opts()).warnings if "repeat another exactly" in w]


def test_an_exact_copy_of_a_host_op_is_counted_in_a_warning(tmp_path):
    """A host event written twice, args and all, is read twice (ApiCompare counts it again) and said. The H100
    timesformer excerpt's two aten::linear calls (72.431 and 64.511 us by the file) with the first written
    again (synthetic: no sample holds an exact copy): ApiCompare's aten::linear reads 3 calls and 0.21 ms
    (72.431 x 2 + 64.511 = 209.373 us), where it read 2 and 0.14 (136.942 us); one warning of 1 copy."""
    doc = _doc(H100)
    linear = [e for e in doc["traceEvents"] if e.get("name") == "aten::linear" and e.get("ph") == "X"]
    assert [e["dur"] for e in linear] == [72.431, 64.511]
    doc["traceEvents"].append(dict(linear[0]))
    path = _write(tmp_path, doc)
    assert not _copy_notes(str(H100))
    assert _copy_notes(path) == [f"{path}: 1 host event(s) with a duration repeat another exactly (name, time, "
                                 "duration, thread and args: a trace merged or written twice?); each is read as "
                                 "written, so ApiCompare counts it again in its op's Calls and Total Duration"]
    api = compare(path, str(H100), enable_api_compare=True).sheet("ApiCompare").set_index("api name")
    assert api.loc["aten::linear", "Calls"] == 3 and api.loc["aten::linear", "Total Duration(ms)"] == 0.21


@pytest.mark.parametrize("changed", [{"tid": 1}, {"pid": 1}, {"dur": 72.432}, {"cat": "user_annotation"},
                                     {"name": "aten::linear_"}, {"args": {"External id": 1}}])
def test_a_host_op_copied_with_one_field_changed_is_no_copy(tmp_path, changed):
    """An exact copy is one in every field: the timesformer excerpt's first aten::linear written again with one field
    changed (its tid, pid, duration, category, name or args) is another event, no copy said (mutation testing,
    session 63: each field but the args and the start could be left out of the comparison with every test passing)."""
    doc = _doc(H100)
    linear = next(e for e in doc["traceEvents"] if e.get("name") == "aten::linear" and e.get("ph") == "X")
    assert (linear["dur"], linear["cat"], linear["tid"] != 1, linear["pid"] != 1) == (72.431, "cpu_op", True, True)
    doc["traceEvents"].append(dict(linear, **changed))
    assert _copy_notes(_write(tmp_path, doc)) == []


def test_calls_of_one_thread_that_start_and_end_together_are_no_copies(samples, tmp_path):
    """Real traces hold distinct calls with one name, time, duration and thread: hta's rank_non_gpu trace writes
    aten::zeros at 1661203462629249 us for 4 us twice (External ids 1931 and 1932), its ns-resolution trace
    aten::result_type six times so (0.037 to 0.039 us). Their args differ, so no warning; the zeros call written a
    third time, its args as the first's, is 1 copy, not 2."""
    ns = _sample(samples, "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    zeros = _sample(samples, "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz")
    assert not _copy_notes(str(ns)) and not _copy_notes(str(zeros))
    doc = _doc(zeros)
    twins = [e for e in doc["traceEvents"] if e.get("name") == "aten::zeros" and e.get("ts") == 1661203462629249]
    assert [(e["dur"], e["args"]["External id"]) for e in twins] == [(4, 1931), (4, 1932)]
    doc["traceEvents"].append(dict(twins[0]))
    notes = _copy_notes(_write(tmp_path, doc))
    assert len(notes) == 1 and ": 1 host event(s) with a duration repeat another" in notes[0]
    # a zero-length call written again is no copy counted (such calls share a time by the thousand in an integer-us
    # trace; mutation testing, session 63): the file's aten::zero_ of 0 us at 1661203462598756 (External id 4)
    zero = [e for e in doc["traceEvents"] if e.get("name") == "aten::zero_" and e.get("ts") == 1661203462598756]
    assert [(e["dur"], e["args"]["External id"]) for e in zero] == [(0, 4)]
    doc["traceEvents"].append(dict(zero[0]))
    notes = _copy_notes(_write(tmp_path, doc))
    assert len(notes) == 1 and ": 1 host event(s) with a duration repeat another" in notes[0]


ALEXNET = DATA / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def _alexnet_marker(edit) -> tuple[dict, dict]:
    """The H200 AlexNet trace (tests/data/kineto, recorded by this project) with its one step marker, the
    user_annotation ``ProfilerStep#50``, changed by ``edit(marker)``: (the trace, the marker)."""
    doc = _doc(ALEXNET)
    marks = [e for e in doc["traceEvents"]
             if e.get("cat") == "user_annotation" and "ProfilerStep#" in e.get("name", "")]
    assert [e["name"] for e in marks] == ["ProfilerStep#50"]
    edit(marks[0])
    return doc, marks[0]


def test_a_step_marker_in_another_case_is_said(tmp_path):
    """``profilerstep#50`` is no step marker to the step scan ("ProfilerStep#" as written, as the original's), so
    the op tree kept it as one op holding the whole step: against the trace as written, operator match 0 of 112
    base ops, its row the step's whole device time, without a word. The warning counts it; the row holds the
    step's device time, summed from the raw JSON: the kernels and memcpys (an op owns no memset, as in the
    original) whose launch flow starts inside the marker's span, on any thread (the backward's too)."""
    doc, mark = _alexnet_marker(lambda m: m.update(name="profilerstep#50"))
    path = _write(tmp_path, doc)
    notes = [w for w in load_profile(path, _opts(enable_operator_compare=True)).warnings if "another case" in w]
    assert notes == [f"{path}: 1 host event named as a step marker in another case (the first: 'profilerstep#50'): "
                     "the step scan reads \"ProfilerStep#\" as written, as the original does, so each is no step but "
                     "one op holding its step's ops (one operator row, which pairs with nothing)"]
    rows = compare(str(ALEXNET), path, enable_operator_compare=True, disable_module=True).sheet(
        "OperatorCompareStatistic").set_index("Operator Name")
    start, end = _ns(mark["ts"]), _ns(mark["ts"]) + _ns(mark["dur"])
    launched = {e["id"] for e in doc["traceEvents"] if e.get("cat") == "ac2g" and e["ph"] == "s"
                and start <= _ns(e["ts"]) <= end}
    ends = {(e["pid"], e["tid"], e["ts"]) for e in doc["traceEvents"] if e.get("cat") == "ac2g" and e["ph"] == "f"
            and e["id"] in launched}
    device = sum(_ns(e["dur"]) for e in doc["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy")
                 and (e["pid"], e["tid"], e["ts"]) in ends)
    assert rows.loc["profilerstep#50", "Comparison Device Duration(ms)"] == pytest.approx(device / 1e6, abs=1e-9)
    assert rows.loc["profilerstep#50", "Base Operator Number"] == 0
    assert not [w for w in load_profile(str(ALEXNET), _opts(enable_operator_compare=True)).warnings
                if "step marker" in w]


def test_a_step_marker_written_as_a_python_function_is_said(tmp_path):
    """A ``ProfilerStep#50`` of cat python_function is no step (steps are read from the host ops), so the step
    count check read none on that side without a word: the warning counts it where the Python functions are
    read (the operator comparison) or, from their names alone, where no host op is named as a marker (a run
    without the operator comparison), and only where no host op marks that step."""
    doc, _ = _alexnet_marker(lambda m: m.update(cat="python_function"))
    path = _write(tmp_path, doc)
    notes = [w for w in load_profile(path, _opts(enable_operator_compare=True)).warnings if "step marker" in w]
    assert notes == [f"{path}: 1 Python function named as a step marker whose step no host op marks (the first: "
                     "'ProfilerStep#50'): steps are read from the host ops (cpu_op, user_annotation), so that step is "
                     "none (the step count check does not count it)"]
    guards = compare(str(ALEXNET), path, enable_operator_compare=True).guards.set_index("Check")
    assert guards.loc["step count", ["Base", "Comparison"]].tolist() == [1, None]
    # a run without the operator comparison (--enable_profiling_compare alone) reads no Python function, but
    # their names where no host op is named as a marker (the check was blank there unsaid, as in the text loader
    # before session 65)
    assert [w for w in load_profile(path, _opts(enable_profiling_compare=True)).warnings if "step marker" in w] == notes
    guards = compare(str(ALEXNET), path, enable_profiling_compare=True).guards.set_index("Check")
    assert guards.loc["step count", ["Base", "Comparison"]].tolist() == [1, None]
    doc["traceEvents"].append(dict(_alexnet_marker(lambda m: None)[1]))  # the marker as a host op again: a step
    again = _write(tmp_path, doc, "again.pt.trace.json")
    for opts in (_opts(enable_operator_compare=True), _opts(enable_profiling_compare=True)):
        assert not [w for w in load_profile(again, opts).warnings if "step marker" in w]
        assert not [w for w in load_profile(str(ALEXNET), opts).warnings if "step marker" in w]
    unmarked, _ = _alexnet_marker(lambda m: None)  # no marker at all: nothing to say (892 Python functions read)
    unmarked["traceEvents"] = [e for e in unmarked["traceEvents"] if "ProfilerStep#" not in e.get("name", "")]
    bare = _write(tmp_path, unmarked, "bare.pt.trace.json")
    assert not [w for w in load_profile(bare, _opts(enable_profiling_compare=True)).warnings if "step marker" in w]


def test_a_step_marker_of_python_function_in_another_case_is_said_too(tmp_path):
    """Categories are matched without case (``_Events.first`` keys by the written text): a ``ProfilerStep#50``
    of cat "Python_Function" beside the trace's 892 "python_function" events (written after them all) is said
    as one of cat python_function is, in a run that reads their names alone (no operator comparison) and in one
    that reads them."""
    doc, marker = _alexnet_marker(lambda m: m.update(cat="Python_Function"))
    assert sum(1 for e in doc["traceEvents"] if e.get("cat") == "python_function") == 892
    events = doc["traceEvents"]
    events.append(events.pop(next(i for i, e in enumerate(events) if e is marker)))  # after them all, in file order
    path = _write(tmp_path, doc)
    for opts in (_opts(enable_profiling_compare=True), _opts(enable_operator_compare=True)):
        assert [w for w in load_profile(path, opts).warnings if "step marker" in w] == [
            f"{path}: 1 Python function named as a step marker whose step no host op marks (the first: "
            "'ProfilerStep#50'): steps are read from the host ops (cpu_op, user_annotation), so that step is none "
            "(the step count check does not count it)"]
