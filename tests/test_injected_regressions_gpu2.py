"""Known regressions injected into copies of a real GPU (Kineto) trace with NCCL collectives, user story 2 on GPU:
the communication faces test_injected_regressions*.py do not cover. The trace: HTA's nccl_parser_config sample (an
A100 DDP run, 3 steps; computing on stream 7, 15 ncclKernel_AllReduce and 6 ncclKernel_Broadcast on stream 40,
launched with cudaLaunchKernelExC from the backward thread).

* one all-reduce 1 ms longer (partly under computing), then the same all-reduce moved 3.1 ms later, as long as
  before, where less computing runs beside it;
* an extra all-reduce: a copy of one, with its launch call and flow, later on the same stream;
* kernels moved between streams: the breakdown classifies by kernel name (nccl or not, reference-1 §4.3), so a
  compute kernel on the communication stream or a collective on the compute stream moves no figure; a copy moved
  off the compute stream leaves SDMA (SDMA counts the compute stream's copies only) for Free: Other.

The expected figures are the raw events' own (Decimal, plain interval arithmetic, not our loader); swapped sides
negate them.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path

import pytest
from spans import union  # tests/ is on sys.path (rootdir import mode)
from test_injected_regressions import _rows, _waterfall
from test_injected_regressions_gpu import _load, _save

from msprof_compare.api import compare
from msprof_compare.compare.module_contributors import module_contributors_note
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.report.json_report import to_document
from msprof_compare.report.summary_console import render_communication, render_explain

NCCL = "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
_CORR = 42422  # an all-reduce (2621.533 us) under 653 us of computing, 23 ms of free stream 40 after it


def _figures(events: list[dict]) -> dict[str, Decimal]:
    """By hand (reference-1 §4.3, exact unions as docs/differences.md says): E2E over the kernels and copies with
    a stream, computing (union of the non-nccl kernels), uncovered communication (nccl kernels' union outside
    computing), free (E2E outside both), SDMA (copies on the most frequent computing stream), in µs."""
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    lo, hi = min(e["ts"] for e in dev), max(e["ts"] + e["dur"] for e in dev)
    spans = {c: union([(e["ts"], e["ts"] + e["dur"]) for e in dev if e["cat"] == "kernel"
                       and ("nccl" in e["name"].lower()) == c]) for c in (False, True)}
    computing = sum(e - s for s, e in spans[False])
    busy = sum(e - s for s, e in union(spans[False] + spans[True]))
    streams = [e["args"]["stream"] for e in dev if e["cat"] == "kernel" and "nccl" not in e["name"].lower()]
    main = max(set(streams), key=streams.count)
    sdma = sum(e["dur"] for e in dev if e["args"]["stream"] == main
               and any(w in e["name"].lower() for w in ("htod", "dtod", "dtoh")))
    return {"E2E": hi - lo, "Computing": computing, "Uncovered": busy - computing, "Free": hi - lo - busy,
            "SDMA": sdma}


def _delta(before: list[dict], after: list[dict]) -> dict[str, Decimal]:
    f0, f1 = _figures(before), _figures(after)
    return {k: f1[k] - f0[k] for k in f0 if f1[k] != f0[k]}


def _om_moved(res) -> dict[str, float]:
    """OverallMetrics rows whose durations differ: comparison minus base (ms, to the ns)."""
    return {k: round(r[4] - r[1], 6) for k, r in _rows(res.sheet("OverallMetrics")).items() if round(r[4] - r[1], 6)}


def _allreduce(events: list[dict], corr: int = _CORR) -> tuple[dict, dict, list[dict]]:
    """The kernel of launch ``corr``, its launch call and its two flow events."""
    (kernel,) = [e for e in events if e.get("cat") == "kernel" and e["args"].get("correlation") == corr]
    (launch,) = [e for e in events if e.get("cat") == "cuda_runtime" and e["args"].get("correlation") == corr]
    flows = [e for e in events if e.get("ph") in ("s", "f") and e.get("id") == corr]
    assert len(flows) == 2 and "AllReduce" in kernel["name"]
    return kernel, launch, flows


def _comm_rows(res) -> dict[str, tuple]:
    """CommunicationCompare: family -> (base calls, base total us, comparison calls, comparison total us)."""
    c = res.sheet("CommunicationCompare")
    return {n: (a, round(b, 3), d, round(e, 3)) for n, a, b, d, e in zip(
        c["Communication OP Name"], c["Calls"], c["Total Duration(us)"], c["Calls.1"], c["Total Duration(us).1"],
        strict=True)}


def test_collective_longer_then_moved_under_less_computing(samples, tmp_path):
    """The all-reduce 1 ms longer: by hand uncovered communication +0.807938 ms (0.192062 ms of the added time
    runs under computing), free -0.807938 ms, E2E and computing unchanged; CommunicationCompare's allreduce total
    +1000 us (calls 15 both), the communication contributor allreduce +1 ms, the operator contributor the backward
    thread's ops (the launch is on the backward thread) +1 ms. The same all-reduce moved 3.1 ms later, as long as
    before (its flow end moved with it): computing beside it 653.365 -> 287.164 us, so uncovered communication
    +0.366201 ms and free -0.366201 ms, no operator and no CommunicationCompare row changes; the note said the
    change was "time no operator's kernels hold" while ## backward ## holds that kernel: it now says computing
    overlaps less of the communication. The communication line gives the uncovered part. Swapped: more."""
    src = samples / NCCL
    before = _load(src)["traceEvents"]
    kernel, launch, _ = _allreduce(before)
    # the launch runs on the backward thread (the first fwdbwd flow end's, reference-1 §4.2)
    first_bwd = min((e for e in before if e.get("cat") == "fwdbwd" and e.get("ph") == "f"), key=lambda e: e["ts"])
    assert launch["tid"] == first_bwd["tid"]

    longer = _load(src)
    _allreduce(longer["traceEvents"])[0]["dur"] += 1000
    moved = _load(src)
    k, _, flows = _allreduce(moved["traceEvents"])
    k["ts"] += 3100
    next(f for f in flows if f["ph"] == "f")["ts"] += 3100
    assert _delta(before, longer["traceEvents"]) == {"Uncovered": Decimal("807.938"), "Free": Decimal("-807.938")}
    assert _delta(before, moved["traceEvents"]) == {"Uncovered": Decimal("366.201"), "Free": Decimal("-366.201")}

    res = compare(str(src), str(_save(longer, tmp_path / "longer.json")))
    assert _om_moved(res) == {"Uncovered Communication Time": 0.807938, "Free Time": -0.807938, "Free": -0.807938}
    assert _waterfall(res) == {"Uncovered Communication": 807_938, "Free: Other": -807_938}
    assert _comm_rows(res)["allreduce"] == (15, 46762.159, 15, 47762.159)
    assert res.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [["allreduce", 1.0]]
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["operator", "## backward ##", 1.0]]
    assert "most of the change of ## backward ## is collective communication launched inside it" in \
        unexplained_note(res.contributors, res.waterfall, res.frames.get("contributor_communication"))
    doc = to_document(res)["summary"]["communication"]
    assert (doc["diff_ms"], doc["uncovered_diff_ms"]) == (1.0, 0.807938)

    res = compare(str(src), str(_save(moved, tmp_path / "moved.json")))
    assert _om_moved(res) == {"Uncovered Communication Time": 0.366201, "Free Time": -0.366201, "Free": -0.366201}
    assert _waterfall(res) == {"Uncovered Communication": 366_201, "Free: Other": -366_201}
    assert _comm_rows(res)["allreduce"] == (15, 46762.159, 15, 46762.159)
    assert not len(res.communication_contributors)
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
        ["category", "Uncovered Communication", 0.366201], ["category", "Free: Other", -0.366201]]
    assert unexplained_note(res.contributors, res.waterfall) == (
        "no operator changed its device time (the change is in Uncovered Communication +0.366 ms and Free: Other "
        "-0.366 ms, computing (or communication ops running beside one another) overlaps less of the communication "
        "than before: kernels ran at other times, which no operator's device time shows); the contributors are the "
        "waterfall steps")
    assert render_communication(res.frames).endswith(
        "No communication op type's total duration changed (2 op types); communication time (CommunicationCompare's "
        "op rows) 46.876 ms on both sides.\nThe part no computing overlaps (the waterfall's communication steps) "
        "39.559 ms -> 39.926 ms (+0.366 ms, +0.93%): "
        "computing (or communication ops running beside one another) overlaps less of the communication than before.")
    doc = to_document(res)["summary"]["communication"]
    assert (doc["diff_ms"], doc["uncovered_diff_ms"]) == (0, 0.366201)

    back = compare(str(tmp_path / "moved.json"), str(src))
    assert _waterfall(back) == {"Uncovered Communication": -366_201, "Free: Other": 366_201}
    assert "computing (or communication ops running beside one another) overlaps more of the communication than " \
        "before" in unexplained_note(back.contributors, back.waterfall)
    assert render_communication(back.frames).endswith(
        "(-0.366 ms, -0.92%): computing (or communication ops running beside one another) overlaps more of the "
        "communication than before.")


def test_extra_collective_on_the_same_stream(samples, tmp_path):
    """A copy of the all-reduce with its launch call (right after the original's, inside the same nccl:all_reduce
    annotation) and its flow, a new correlation id, the kernel 5 ms after the original's end on stream 40 (346.265
    us of computing beside it): by hand uncovered communication +2.275268 ms, free -2.275268 ms; CommunicationCompare
    allreduce calls 15 -> 16, total +2621.533 us; ApiCompare cudaLaunchKernelExC calls 150 -> 151; the operator
    contributor ## backward ## +2.621533 ms, which the note says is collective communication."""
    src = samples / NCCL
    doc = _load(src)
    events = doc["traceEvents"]
    kernel, launch, flows = _allreduce(events)
    start, host = kernel["ts"] + kernel["dur"] + 5000, launch["ts"] + launch["dur"] + 1
    assert not [e for e in events if e.get("cat") == "kernel" and e["args"]["stream"] == 40
                and e["ts"] < start + kernel["dur"] and start < e["ts"] + e["dur"]]  # stream 40 is free there
    for e in [kernel, launch, *flows]:
        e = copy.deepcopy(e)
        e.setdefault("args", {})
        if "correlation" in e["args"]:
            e["args"]["correlation"] = 10**8
        if "id" in e:
            e["id"] = 10**8
        e["ts"] = start if e.get("cat") == "kernel" or e.get("ph") == "f" else host
        events.append(e)
    before = _load(src)["traceEvents"]
    assert _delta(before, events) == {"Uncovered": Decimal("2275.268"), "Free": Decimal("-2275.268")}
    calls = [sum(e.get("name") == "cudaLaunchKernelExC" for e in evs) for evs in (before, events)]
    assert calls == [150, 151]

    res = compare(str(src), str(_save(doc, tmp_path / "extra.json")))
    assert _om_moved(res) == {"Uncovered Communication Time": 2.275268, "Free Time": -2.275268, "Free": -2.275268}
    assert _waterfall(res) == {"Uncovered Communication": 2_275_268, "Free: Other": -2_275_268}
    assert _comm_rows(res) == {"broadcast": (6, 114.334, 6, 114.334), "allreduce": (15, 46762.159, 16, 49383.692)}
    api = res.sheet("ApiCompare")
    (row,) = api[api["api name"] == "cudaLaunchKernelExC"].itertuples(index=False)
    assert (row[5], row[9]) == (150, 151)
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
        ["operator", "## backward ##", 2.621533]]
    assert res.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [["allreduce", 2.621533]]
    assert render_communication(res.frames).endswith(
        "Communication time (CommunicationCompare's op rows) 46.876 ms -> 49.498 ms (+2.622 ms, +5.59%).")


def _on_stream(src: Path, dst: Path, pick, stream: int) -> tuple[Path, list[dict], list[dict]]:
    doc = _load(src)
    (event,) = [e for e in doc["traceEvents"] if pick(e)]
    assert event["args"]["stream"] != stream
    event["args"]["stream"] = stream
    return _save(doc, dst), _load(src)["traceEvents"], doc["traceEvents"]


def test_kernel_moved_between_streams_moves_no_figure(samples, tmp_path):
    """The breakdown tells computing from communication by the kernel's name (nccl or not), on any stream: a
    106.078 us cuDNN layout kernel moved onto the communication stream, or the all-reduce onto the compute stream,
    changes no hand figure and no sheet (stream 7 stays the most frequent computing stream)."""
    src = samples / NCCL
    same = compare(str(src), str(src))
    for corr, stream in ((33852, 40), (_CORR, 7)):
        pick = lambda e, c=corr: e.get("cat") == "kernel" and e["args"].get("correlation") == c  # noqa: E731
        path, before, after = _on_stream(src, tmp_path / f"{corr}.json", pick, stream)
        assert not _delta(before, after)
        res = compare(str(src), str(path))
        for name in ("OverallMetrics", "CommunicationCompare", "OperatorCompareStatistic", "ApiCompare"):
            assert res.sheet(name).equals(same.sheet(name)), name
        assert not _waterfall(res) and not len(res.contributors)


def test_copy_moved_off_the_compute_stream_leaves_sdma_and_says_why(samples, tmp_path):
    """The longest Memcpy DtoD (18.112 us) moved from stream 7 to stream 40: SDMA counts the compute stream's
    copies only, so by hand SDMA -18.112 us, Free: Other +18.112 us, Free Time and E2E unchanged, no operator
    changes. The note read "device idle time: the device waited longer for work, as where the host was slower to
    launch it", of a copy that ran as before; it now says the SDMA step is copy time on a compute stream, a copy
    moved to another stream being Free: Other."""
    src = samples / NCCL
    copies = [e for e in _load(src)["traceEvents"] if e.get("cat") == "gpu_memcpy" and "DtoD" in e["name"]]
    longest = max(copies, key=lambda e: e["dur"])
    assert (longest["dur"], longest["args"]["stream"]) == (Decimal("18.112"), 7)
    path, before, after = _on_stream(src, tmp_path / "copy.json", lambda e: e.get("cat") == "gpu_memcpy" and
                                     e["ts"] == longest["ts"] and e["name"] == longest["name"], 40)
    assert _delta(before, after) == {"SDMA": Decimal("-18.112")}
    res = compare(str(src), str(path))
    assert _om_moved(res) == {"SDMA": -0.018112, "Free": 0.018112}
    assert _waterfall(res) == {"Free: SDMA": -18_112, "Free: Other": 18_112}
    note = unexplained_note(res.contributors, res.waterfall)
    assert note == ("no operator changed its device time (the change is in Free: SDMA -0.018 ms and Free: Other "
                    "+0.018 ms, copy time on a compute stream (Free: SDMA): a copy longer or shorter, or one moved "
                    "between a compute stream and another stream, where it is Free: Other); the contributors are the "
                    "waterfall steps")
    assert to_document(res)["summary"]["contributors_note"] == note  # the JSON carries it as the console


# --------------------------------------------------------------------------- a kernel longer inside one module

QWEN = "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
_MEAN = 688159  # the aten::mean kernel (reduce_kernel, 15.008 us) of Qwen2DecoderLayer_7's second RMSNorm


def _lengthen(events: list[dict], corr: int, us: Decimal) -> tuple[dict, list[dict]]:
    """The kernel of ``corr`` ``us`` longer and every device event from its end on (with the flow end that meets
    it) ``us`` later, as one busy stream runs; returns the kernel and the events moved."""
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    (kernel,) = [e for e in dev if e["cat"] == "kernel" and e["args"]["correlation"] == corr]
    end = kernel["ts"] + kernel["dur"]
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    later = [e for e in dev if e["ts"] >= end]
    for e in later:
        flow = ends.get(e["args"].get("correlation"))
        if flow is not None and flow["ts"] == e["ts"]:
            flow["ts"] += us
        e["ts"] += us
    kernel["dur"] += us
    return kernel, later


def test_kernel_longer_inside_one_module_of_a_model_without_a_wrapper_names_its_module(samples, tmp_path):
    """Qwen1.5 on an H100, forward only, one CUDA stream kept busy (1.312 us to the next kernel): the aten::mean
    kernel of one RMSNorm 20 us longer, every later device event (and its flow end) 20 us later. By hand: E2E,
    computing and Vector +0.020 ms, free unchanged. The operator contributor is aten::mean (its 49 calls, one per
    RMSNorm, summed: 0.743327 -> 0.763327 ms); no wrapper op runs the modules, so the module contributors were
    empty and the console named no module: they now give the one module row that grew, its path read by hand from
    the nn.Module python_function events around the launch call, under a lead saying aten::mean runs inside
    modules (console, JSON, API)."""
    src = samples / QWEN
    doc = _load(src)
    events = doc["traceEvents"]
    us = Decimal(20)
    kernel, later = _lengthen(events, _MEAN, us)
    end = kernel["ts"] + kernel["dur"] - us
    # one stream, busy on: the next kernel waits, and all after it
    assert min(e["ts"] for e in later) - us - end < us
    assert _delta(_load(src)["traceEvents"], events) == {"E2E": us, "Computing": us}

    path = _module_path(events, _MEAN)  # by hand, from the nn.Module python_function events
    assert path == "/ Qwen2Model_0/ Qwen2DecoderLayer_7/ Qwen2RMSNorm_15"
    # aten::mean's device time: the kernels launched inside its 49 calls (one per RMSNorm)
    raw = _load(src)["traceEvents"]
    calls = [e for e in raw if e.get("cat") == "cpu_op" and e["name"] == "aten::mean"]
    assert len(calls) == 49
    inside = {e["args"]["correlation"] for e in raw if e.get("cat") == "cuda_runtime" and any(
        c["tid"] == e["tid"] and c["ts"] <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] for c in calls)}
    means = [e for e in raw if e.get("cat") == "kernel" and e["args"]["correlation"] in inside]

    res = compare(str(src), str(_save(doc, tmp_path / "qwen.json")))
    assert _om_moved(res) == {"Computing Time": 0.02, "Vector": 0.02, "Vector (No Trans)": 0.02, "E2E Time": 0.02}
    assert _waterfall(res) == {"Vector": 20_000, "Comparison E2E": 20_000}
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["aten::mean", 0.02]]
    assert res.contributors["Base(ms)"].tolist() == [float(sum(e["dur"] for e in means) / 1000)]
    mods = res.module_contributors
    assert mods[["Name", "Base(ms)", "Comparison(ms)", "Diff(ms)"]].values.tolist() == [
        [f"{path} > aten::mean", float((kernel["dur"] - us) / 1000), float(kernel["dur"] / 1000), 0.02]]
    lead = "aten::mean runs inside modules: the module contributors rank its module rows by their change"
    assert module_contributors_note(mods) == lead
    text = render_explain(res.frames, res.verdict)
    assert f"{lead}:" in text and "Top Module Contributors (module operator level: 1 row covers 100.0% of the " \
        "device-time change of its module rows)" in text and "Qwen2RMSNorm_15 > aten::mean" in text
    summary = to_document(res)["summary"]
    assert summary["module_contributors_note"] == lead
    assert [r["Name"] for r in summary["module_contributors"]] == [f"{path} > aten::mean"]


def test_a_host_delay_beside_a_small_overlap_change_reads_as_idle_time(samples, tmp_path):
    """Every device event from a quiet moment on (4458676763800 us, no kernel or copy running) 2 ms later, as where
    the host launched late, and the all-reduce 300 us later, as long as before: by hand uncovered communication
    -51.644 us and free +2051.644 us, E2E +2 ms, no operator changes. The note put the change down to computing
    overlapping more of the communication (any communication step that moved decided it), of a change 97.5% idle
    time; the communication steps now decide where they moved a quarter of the largest step's change or more (the
    communication line's overlap rule): the level-1 text export's all-reduce 2 ms later, +0.583 ms beside Free: Other
    +1.417 ms, still reads as less overlap (test_injected_regressions_3)."""
    src = samples / NCCL
    before = _load(src)["traceEvents"]
    doc = _load(src)
    events = doc["traceEvents"]
    kernel, _, flows = _allreduce(events)
    quiet = Decimal("4458676763800")
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X" and e["ts"] >= quiet:
            e["ts"] += 2000
        elif e.get("ph") == "f" and e.get("cat") == "ac2g" and e["ts"] >= quiet:
            e["ts"] += 2000
    assert not any(e.get("cat") in ("kernel", "gpu_memcpy") and e.get("ph") == "X"
                   and e["ts"] < quiet < e["ts"] + e["dur"] for e in before)  # nothing runs across that moment
    kernel["ts"] += 300
    next(f for f in flows if f["ph"] == "f")["ts"] += 300
    assert _delta(before, events) == {"E2E": Decimal("2000"), "Uncovered": Decimal("-51.644"),
                                      "Free": Decimal("2051.644")}
    res = compare(str(src), str(_save(doc, tmp_path / "late.json")))
    assert _waterfall(res) == {"Uncovered Communication": -51_644, "Free: Other": 2_051_644,
                               "Comparison E2E": 2_000_000}
    assert unexplained_note(res.contributors, res.waterfall) == (
        "no operator changed its device time (the change is in Free: Other +2.052 ms and Uncovered Communication "
        "-0.052 ms, device idle time: the device waited longer for work, as where the host was slower to launch it; "
        "ApiCompare times the host calls); the contributors are the waterfall steps")
    back = compare(str(tmp_path / "late.json"), str(src))  # swapped: the device waited less, the host was quicker
    assert unexplained_note(back.contributors, back.waterfall) == (
        "no operator changed its device time (the change is in Free: Other -2.052 ms and Uncovered Communication "
        "+0.052 ms, device idle time: the device waited less for work, as where the host was quicker to launch it; "
        "ApiCompare times the host calls); the contributors are the waterfall steps")


def _module_path(events: list[dict], corr: int) -> str:
    """The nn.Module path of a kernel's launch call, by hand: the nn.Module python_function events around it."""
    (launch,) = [e for e in events if e.get("cat") == "cuda_runtime" and e["args"].get("correlation") == corr]
    around = sorted((e for e in events if e.get("cat") == "python_function" and e["tid"] == launch["tid"]
                     and e["name"].startswith("nn.Module: ") and e["ts"] <= launch["ts"]
                     and launch["ts"] + launch["dur"] <= e["ts"] + e["dur"]), key=lambda e: e["ts"])
    return "".join("/ " + e["name"][len("nn.Module: "):] for e in around)


def test_two_operators_longer_inside_one_module_each_rank_only_their_module_rows(samples, tmp_path):
    """The Qwen1.5 trace with three kernels longer, every later device event (and flow end) as much later: aten::mean
    of Qwen2RMSNorm_15 +20 us, aten::silu of layer 0's MLP +15 us, aten::rsqrt of layer 0's first RMSNorm +2 us. By
    hand the operator contributors are aten::mean and aten::silu (35 of the 37 us, 94.6%); aten::rsqrt is not
    listed, so its module row is no module contributor and no part of the shares' basis: 20/35 = 57.1% and 15/35 =
    42.9%, "2 rows cover 100.0% of the device-time change of their module rows" (plural lead and basis)."""
    src = samples / QWEN
    doc = _load(src)
    events = doc["traceEvents"]
    rsqrt, silu = 682988, 683527
    for corr, us in ((rsqrt, Decimal(2)), (silu, Decimal(15)), (_MEAN, Decimal(20))):
        _lengthen(events, corr, us)
    assert _delta(_load(src)["traceEvents"], events) == {"E2E": Decimal(37), "Computing": Decimal(37)}
    paths = {c: _module_path(events, c) for c in (_MEAN, silu, rsqrt)}
    assert paths == {_MEAN: "/ Qwen2Model_0/ Qwen2DecoderLayer_7/ Qwen2RMSNorm_15",
                     silu: "/ Qwen2Model_0/ Qwen2DecoderLayer_0/ Qwen2MLP_0/ SiLU_0",
                     rsqrt: "/ Qwen2Model_0/ Qwen2DecoderLayer_0/ Qwen2RMSNorm_0"}

    res = compare(str(src), str(_save(doc, tmp_path / "qwen3.json")))
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["aten::mean", 0.02], ["aten::silu", 0.015]]
    mods = res.module_contributors
    assert mods[["Name", "Diff(ms)"]].values.tolist() == [[f"{paths[_MEAN]} > aten::mean", 0.02],
                                                          [f"{paths[silu]} > aten::silu", 0.015]]
    assert mods["Share"].tolist() == pytest.approx([20 / 35, 15 / 35], abs=1e-9)
    lead = "aten::mean, aten::silu run inside modules: the module contributors rank their module rows by their change"
    assert module_contributors_note(mods) == lead
    text = render_explain(res.frames, res.verdict)
    # the console lists the two operators a line each (module_contributors_lines), as the log lists a note's parts
    block = "Operators that run inside modules:\n  - aten::mean\n  - aten::silu\n" \
        "The module contributors rank their module rows by their change:\n"
    assert block in text and "(module operator level: 2 rows cover 100.0% of the device-time change of their " \
        "module rows)" in text


def test_conv_on_the_backward_thread_of_a_gpu_trace_reads_as_its_thread(samples, tmp_path):
    """A GPU trace decides a Conv kernel's direction by its covering conv op's name or thread, as an NPU text export
    does (reference-1 §3.8; backward thread: the first fwdbwd flow end's, 2919752 here): the first aten::conv2d of
    the nccl_parser_config trace and the conv ops inside it moved to that thread (activation-checkpoint
    recomputation runs a forward conv there) move its two kernels, 2.464 + 461.914 = 464.378 us by hand (those
    launched by the cuda_runtime calls inside it), from Conv (Forward) to Conv (Backward). The note said a kernel's
    category follows its operator's thread "in a text export" only."""
    doc = _load(samples / NCCL)
    ev = doc["traceEvents"]
    back = next(e["tid"] for e in ev if e.get("cat") == "fwdbwd" and e.get("ph") == "f")
    conv = min((e for e in ev if e.get("name") == "aten::conv2d"), key=lambda e: e["ts"])
    tid, t0, t1 = conv["tid"], conv["ts"], conv["ts"] + conv["dur"]
    assert (back, tid) == (2919752, 2910249)
    stack = [e for e in ev if e.get("cat") == "cpu_op" and e["tid"] == tid and t0 <= e["ts"] <= t1]
    assert [e["name"] for e in stack] == ["aten::conv2d", "aten::convolution", "aten::_convolution",
                                         "aten::cudnn_convolution"]
    calls = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and e["tid"] == tid
             and t0 <= e["ts"] <= t1}
    hand = sum(e["dur"] for e in ev if e.get("cat") == "kernel" and e["args"].get("correlation") in calls)
    assert hand == Decimal("464.378")
    for e in stack:
        e["tid"] = back
    moved = _save(doc, tmp_path / "conv_back.json")
    res = compare(str(samples / NCCL), str(moved), enable_profiling_compare=True, enable_operator_compare=True)
    wf = res.waterfall
    ns = int(hand * 1000)
    assert {s: int(d) for s, d in zip(wf["Step"], wf["Delta(ns)"], strict=True)
            if s not in ("Base E2E", "Comparison E2E") and int(d)} == {"Conv (Forward)": -ns, "Conv (Backward)": ns}
    assert unexplained_note(res.contributors, wf) == (
        "no operator changed its device time (the change is in Conv (Forward) -0.464 ms and Conv (Backward) +0.464 ms, "
        "the same kernel time in other computing categories: a kernel's category follows its name, op type, PMU "
        "figures and the operator around it (its name and, outside a DB export, its thread), so kernels as long as "
        "before are counted under another category); the contributors are the waterfall steps")
