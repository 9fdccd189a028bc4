"""Known regressions injected into copies of real GPU (Kineto) traces, user story 2 on GPU: the faces
test_injected_regressions.py and test_injected_regressions_2.py do not cover.

* a host-bound slowdown: one cudaLaunchKernel 100 us longer, everything after it 100 us later (the GPU waits):
  free time and E2E, the API rows of the launch and its callers, the lifetimes of the blocks alive across it, and
  the contributors (the waterfall's Free: Other, with a log line that says why instead of blaming launch flows);
* a Memcpy longer (SDMA, the operator that issued it) and a Memset longer (counted nowhere: parity kept);
* one operator's device allocation 64 MiB larger ([memory] Bytes, Total Allocated, Total Reserved): the memory
  sheets, the memory contributors, the memory line and Mem Usage;
* the PyTorch 1.8 legacy format (cat Kernel / Operator / Runtime): one kernel longer is attributed as in the
  modern format;
* ``--use_input_shape`` and ``--max_kernel_num`` on a GPU pair with each MaxPool kernel longer: the rows of the
  right shapes move.

The expected figures are read from the raw events (Decimal, not our code); swapped sides negate them.
"""

from __future__ import annotations

import gzip
import json
import logging
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from spans import union  # tests/ is on sys.path (rootdir import mode)
from test_injected_regressions import ALEXNET, _changed, _lengthened_alexnet, _rows, _waterfall
from test_injected_regressions_2 import _api_rows, _api_table, _expected_api

from msprof_compare.api import compare
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.report.summary_console import memory_line

LEGACY = Path(__file__).resolve().parent / "data" / "kineto" / "legacy_resnet50_excerpt.pt.trace.json"
_DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")


def _load(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw, parse_float=Decimal)


def _dump(o) -> str:
    """JSON text with every Decimal written as read (a float would round the µs timestamps)."""
    if isinstance(o, Decimal):
        return str(o)
    if isinstance(o, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + _dump(v) for k, v in o.items()) + "}"
    if isinstance(o, list):
        return "[" + ",\n".join(_dump(v) for v in o) + "]"
    return json.dumps(o)


def _save(doc: dict, path: Path) -> Path:
    path.write_text(_dump(doc))
    return path


def _e2e_free_us(events: list[dict]) -> tuple[Decimal, Decimal]:
    """(E2E, time no kernel / memcpy runs within it) in µs: the span of the kernel and gpu_memcpy events
    (memsets are not counted, reference-1 §4.1) and its part outside their union."""
    dev = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE[:2]]
    lo, hi = min(s for s, _ in dev), max(e for _, e in dev)
    return hi - lo, hi - lo - sum(e - s for s, e in union(dev))


# --------------------------------------------------------------------------- host-bound: a launch call longer

_LAUNCH_TS = "5179894886152.943"  # the cudaLaunchKernel of MaxPool2d_1's kernel, the GPU idle around it


def _host_delayed(tmp_path: Path, us: Decimal) -> tuple[Path, list[dict], list[dict], Decimal]:
    """The AlexNet trace with one cudaLaunchKernel ``us`` longer: every event from its end on starts ``us`` later
    and every host event running across its end lasts ``us`` longer (a slower host thread delays all that
    follows); device events running then are left as they are. Returns the copy, the events before and after, and
    the end of the launch."""
    doc = _load(ALEXNET)
    before = _load(ALEXNET)["traceEvents"]
    (launch,) = [e for e in doc["traceEvents"] if e.get("cat") == "cuda_runtime" and str(e["ts"]) == _LAUNCH_TS]
    end = launch["ts"] + launch["dur"]
    running = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in _DEVICE
               and e["ts"] < end < e["ts"] + e["dur"]]
    assert not running  # the GPU is idle when the launch ends: the whole delay is idle time
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" or "ts" not in e:
            continue
        if e is launch:
            e["dur"] += us
        elif e["ts"] >= end:
            e["ts"] += us
        elif e.get("ph") == "X" and e.get("cat") not in _DEVICE and e["ts"] + e["dur"] > end:
            e["dur"] += us
    return _save(doc, tmp_path / "alexnet_launch_slower.pt.trace.json"), before, doc["traceEvents"], end


def test_host_bound_launch_delay_is_idle_time_and_its_api_rows_and_says_so(tmp_path, caplog):
    """cudaLaunchKernel of MaxPool2d_1's kernel 100 us longer, the GPU waiting for it: E2E, Free Time and Free
    +0.100 ms (11.772586 -> 11.872586 ms), no computing figure moves and no module / operator device time either.
    ApiCompare: cudaLaunchKernel total and self +0.1 ms (1.20 -> 1.30), its callers aten::max_pool2d_with_indices,
    aten::max_pool2d and DistributedDataParallel.forward total +0.1 ms, their self times unchanged. The device
    blocks alive across the delay live 100 us longer (MemoryCompareStatistic's Allocated Duration, their sizes
    unchanged). The contributors are the waterfall's Free: Other, and the log line says the change is device idle
    time, as on a slower host: it said "a trace without launch flows", which this trace is not. Swapped: negated."""
    us = Decimal(100)
    slow, before, after, end = _host_delayed(tmp_path, us)
    (e2e0, free0), (e2e1, free1) = _e2e_free_us(before), _e2e_free_us(after)
    assert (e2e1 - e2e0, free1 - free0) == (us, us)

    same = compare(str(ALEXNET), str(ALEXNET))
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(ALEXNET), str(slow))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"Free Time": 0.1, "Free": 0.1, "E2E Time": 0.1}
    assert (om["E2E Time"][1], om["E2E Time"][4]) == (float(e2e0 / 1000), float(e2e1 / 1000))
    assert _waterfall(res) == {"Free: Other": 100_000, "Comparison E2E": 100_000}
    for name in ("ModuleCompareStatistic", "ModuleCompare"):
        assert res.sheet(name).equals(same.sheet(name)), name

    t0, t1 = _api_table(before), _api_table(after)
    names = ("cudaLaunchKernel", "aten::max_pool2d_with_indices", "aten::max_pool2d", "DistributedDataParallel.forward")
    assert {n for n in t0 if t0[n] != t1[n]} == set(names)
    assert _api_rows(res, names) == _expected_api(t0, t1, names)
    assert _api_rows(res, ("cudaLaunchKernel",))["cudaLaunchKernel"][:2] + \
        _api_rows(res, ("cudaLaunchKernel",))["cudaLaunchKernel"][4:6] == [1.2, 1.2, 1.3, 1.3]

    # the device blocks allocated before the delay and freed after it (matched by Addr): each lives 100 us longer
    mem = [e for e in before if e.get("name") == "[memory]" and e["args"].get("Device Id", -1) >= 0]
    across = 0
    for a in (e for e in mem if e["args"]["Bytes"] > 0 and e["ts"] < end):
        free = next((f for f in mem if f["ts"] > a["ts"] and f["args"]["Addr"] == a["args"]["Addr"]
                     and f["args"]["Bytes"] < 0), None)
        across += free is not None and free["ts"] >= end
    assert across == 6
    stat = res.sheet("MemoryCompareStatistic")
    assert _changed(stat, "Operator Name", ("Base Allocated Duration(ms)", "Comparison Allocated Duration(ms)")) == {
        "DistributedDataParallel.forward": round(across * 0.1, 6)}
    assert not _changed(stat, "Operator Name", ("Base Allocated Memory(MB)", "Comparison Allocated Memory(MB)"))

    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["category", "Free: Other", 0.1]]
    # a waterfall step is no operator: beside the module sheets, none is said to be missing from them
    assert res.contributors.attrs["outside_modules"] == []
    note = unexplained_note(res.contributors, res.waterfall)  # console, JSON, Summary sheet and gate alike
    assert note.startswith("no operator changed its device time (the change is in Free: Other +0.100 ms, device idle "
                           "time: the device waited longer for work, as where the host was slower to launch it; "
                           "ApiCompare times the host calls); the contributors are the waterfall steps")
    assert "without launch flows" not in note
    # a run that writes no ApiCompare (profiling and operators alone) says so where the note points to it
    bare = compare(str(ALEXNET), str(slow), enable_profiling_compare=True, enable_operator_compare=True)
    assert "ApiCompare" not in bare.sheet_names
    assert unexplained_note(bare.contributors, bare.waterfall).startswith(
        "no operator changed its device time (the change is in Free: Other +0.100 ms, device idle time: the device "
        "waited longer for work, as where the host was slower to launch it; ApiCompare times the host calls; this "
        "run writes no ApiCompare: the enable_api_compare option adds it); the contributors are the waterfall steps")

    # the one step that moved is the E2E change: the Summary sheet's title said "not of the E2E change"
    summary = pd.read_excel(res.to_excel(str(tmp_path / "book")), sheet_name="Summary", header=None)[0].tolist()
    assert "Top Contributors (category level: 1 row covers 100.0% of the waterfall steps' change, which is the E2E " \
        "change)" in summary

    back = compare(str(slow), str(ALEXNET))
    assert _waterfall(back) == {"Free: Other": -100_000, "Comparison E2E": -100_000}
    assert _api_rows(back, names) == {n: v[4:] + v[:4] for n, v in _expected_api(t0, t1, names).items()}
    assert back.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["category", "Free: Other", -0.1]]
    summary = pd.read_excel(back.to_excel(str(tmp_path / "back")), sheet_name="Summary", header=None)[0].tolist()
    assert "Top Contributors (category level: 1 row covers 100.0% of the waterfall steps' change, which is the E2E " \
        "change)" in summary  # a faster comparison: the one step's |change| is the E2E change's


def test_a_step_moved_by_a_few_ns_beside_the_host_delay_is_not_named_nor_a_basis_apart(tmp_path):
    """The host-bound delay above, and the first kernel after it that idle time follows (max_pool_forward_nchw,
    18.207 us) 3 ns shorter, as rounding leaves a kernel: Vector -3 ns and Free: Other +100.003 us, E2E +100 us.
    The category-level title said "not of the E2E change" (its basis, 0.100006 ms, is not the E2E change 0.100000
    ms to the ns, though both read 0.100), and the note named "Free: Other +0.100 ms and Vector +0.000 ms". Every
    operator moved by 3 ns at most: none is listed, and the note says none changed by 0.001 ms or more."""
    slow, _before, _after, end = _host_delayed(tmp_path, Decimal(100))
    doc = _load(slow)
    dev = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in _DEVICE[:2]),
                 key=lambda e: e["ts"])
    kernel, after = next((a, b) for a, b in zip(dev, dev[1:], strict=False)
                         if a["cat"] == "kernel" and a["ts"] > end and b["ts"] > a["ts"] + a["dur"])
    assert kernel["name"].startswith("void at::native::(anonymous namespace)::max_pool_forward_nchw")
    assert (str(kernel["dur"]), after["ts"] - kernel["ts"] - kernel["dur"]) == ("18.207", Decimal("45.313"))
    kernel["dur"] -= Decimal("0.003")
    res = compare(str(ALEXNET), str(_save(doc, tmp_path / "slow_short.pt.trace.json")))
    assert _waterfall(res) == {"Vector": -3, "Free: Other": 100_003, "Comparison E2E": 100_000}
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["category", "Free: Other", 0.100003]]
    assert res.contributors["Share"].tolist() == [pytest.approx(100_003 / 100_006, abs=1e-12)]
    note = unexplained_note(res.contributors, res.waterfall)
    assert note.startswith("no operator changed its device time by 0.001 ms or more (the change is in Free: Other "
                           "+0.100 ms, device idle time: ")
    summary = pd.read_excel(res.to_excel(str(tmp_path / "book")), sheet_name="Summary", header=None)[0].tolist()
    assert "Top Contributors (category level: 1 row covers 100.0% of the waterfall steps' change, which is the E2E " \
        "change)" in summary
    # the gate's steps line named "Free: Other +0.100 ms, Vector +0.000 ms"
    code, message = res.regression_gate(0.5)
    assert code == 3 and [line for line in message.splitlines() if line.startswith("Largest waterfall steps:")] == [
        "Largest waterfall steps: Free: Other +0.100 ms"]


def test_an_e2e_change_of_a_few_ns_reads_as_no_change_at_the_figures_shown(tmp_path):
    """The AlexNet trace with the device event that ends last (a multi_tensor_apply kernel of the optimizer) 3 ns
    longer: E2E and Vector +3 ns. The verdict read "11.773 ms -> 11.773 ms (+0.000 ms, +0.00%): the comparison is
    slower than the base" and the waterfall gave Vector "+0.000, 100.0%" of the E2E change; no operator or step
    is listed as a contributor. The gate judges the ns (+0.00003% is over a threshold of 0%), and its line shows
    the two times to the ns, where it read "11.773 ms -> 11.773 ms" of a regression."""
    doc = _load(ALEXNET)
    dev = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in _DEVICE[:2]]
    last = max(dev, key=lambda e: e["ts"] + e["dur"])
    assert last["name"].startswith("void at::native::(anonymous namespace)::multi_tensor_apply_kernel")
    e2e, _free = _e2e_free_us(dev)
    last["dur"] += Decimal("0.003")
    res = compare(str(ALEXNET), str(_save(doc, tmp_path / "last_longer.pt.trace.json")))
    assert _waterfall(res) == {"Vector": 3, "Comparison E2E": 3}
    ms = f"{e2e / 1000:.3f}"
    assert ms == "11.773" and res.verdict == (f"E2E time {ms} ms on both sides: the comparison is as fast as the base "
                                              "to the 0.001 ms shown (3 ns slower)")
    assert res.waterfall["Share of E2E Diff"].isna().all()
    assert res.contributors.empty
    code, message = res.regression_gate(0.0)
    # the gate's line shows the two times apart, to the ns (both read 11.773 ms to 3 decimals, to 5 11.77259)
    b, c = f"{e2e / 1000:.6f}", f"{(e2e + Decimal('0.003')) / 1000:.6f}"
    assert (b, c) == ("11.772586", "11.772589")
    # and the change to as many: 3 ns, +0.000003 ms
    assert code == 3 and message == (f"Performance regression: E2E time {b} ms -> {c} ms (+0.000003 ms, +0.00003%), "
                                     "threshold +0%")


# --------------------------------------------------------------------------- a Memcpy / a Memset longer

def _copy_longer(tmp_path: Path, cat: str, us: Decimal) -> tuple[Path, dict, list[dict]]:
    """The AlexNet trace with the first ``cat`` event followed by more than ``us`` of idle device time ``us``
    longer (nothing else moves); returns the copy, that event as it was, and the untouched raw events."""
    doc = _load(ALEXNET)
    events = doc["traceEvents"]
    dev = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE), key=lambda e: e["ts"])
    i = next(i for i, e in enumerate(dev[:-1]) if e["cat"] == cat and dev[i + 1]["ts"] - e["ts"] - e["dur"] > us
             and all(d["ts"] + d["dur"] <= e["ts"] for d in dev[:i]))
    old = dict(dev[i])
    dev[i]["dur"] += us
    return _save(doc, tmp_path / f"alexnet_{cat}_slower.pt.trace.json"), old, _load(ALEXNET)["traceEvents"]


def _issuing_top_op(events: list[dict], device_event: dict) -> str:
    """The top-level torch op (cpu_op / user_annotation, ProfilerStep# left out) of the thread whose runtime call
    issued ``device_event`` (same correlation id) and that holds that call."""
    corr = device_event["args"]["correlation"]
    (call,) = [e for e in events if e.get("cat") == "cuda_runtime" and e["args"].get("correlation") == corr]
    outer = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
             and "ProfilerStep#" not in e["name"] and e["tid"] == call["tid"]
             and e["ts"] <= call["ts"] and call["ts"] + call["dur"] <= e["ts"] + e["dur"]]
    return min(outer, key=lambda e: (e["ts"], -e["dur"]))["name"]


def test_memcpy_longer_is_sdma_and_its_operator_memset_longer_counts_nowhere(tmp_path):
    """The 256-byte Memcpy HtoD at 5179894885371.610 (0.928 us) 50 us longer, in idle device time: SDMA +0.050 ms
    and Free -0.050 ms, Free Time and E2E unchanged (a compute-stream copy is free time of the SDMA kind,
    reference-1 §4.3); the waterfall moves Free: Other into Free: SDMA, and the contributor is aten::to, the op
    whose cudaMemcpyAsync issued it. A Memset (Device) 20 us longer moves nothing: the original never collects
    gpu_memset events (reference-1 §4.1, docs/differences.md "memset events ... are not counted"), so every
    sheet equals the untouched pair's. Swapped: negated."""
    us = Decimal(50)
    slow, copy, events = _copy_longer(tmp_path, "gpu_memcpy", us)
    assert (str(copy["ts"]), str(copy["dur"]), copy["name"]) == ("5179894885371.610", "0.928",
                                                                  "Memcpy HtoD (Pinned -> Device)")
    after = _load(slow)["traceEvents"]
    (e2e0, free0), (e2e1, free1) = _e2e_free_us(events), _e2e_free_us(after)
    assert (e2e1 - e2e0, free1 - free0) == (0, -us)  # the idle time outside kernels and copies: Free
    sdma = [sum(e["dur"] for e in evs if e.get("cat") == "gpu_memcpy" and "htod" in e["name"].lower()
                and e["args"]["stream"] == copy["args"]["stream"]) for evs in (events, after)]
    assert sdma[1] - sdma[0] == us  # of it, the copies on the compute stream (SDMA) grow, Free shrinks
    owner = _issuing_top_op(events, copy)
    assert owner == "aten::to"
    res = compare(str(ALEXNET), str(slow))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"SDMA": 0.05, "Free": -0.05}
    assert _waterfall(res) == {"Free: SDMA": 50_000, "Free: Other": -50_000}
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["operator", owner, 0.05]]
    back = compare(str(slow), str(ALEXNET))
    assert _waterfall(back) == {"Free: SDMA": -50_000, "Free: Other": 50_000}
    assert back.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["operator", owner, -0.05]]

    memset, old, _ = _copy_longer(tmp_path, "gpu_memset", Decimal(20))
    assert old["name"] == "Memset (Device)"
    same, res = compare(str(ALEXNET), str(ALEXNET)), compare(str(ALEXNET), str(memset))
    assert [n for n in res.sheet_names if n != "Summary" and not res.sheet(n).equals(same.sheet(n))] == []
    assert _waterfall(res) == {} and not len(res.contributors)


# --------------------------------------------------------------------------- GPU memory: one allocation larger

_ALLOC_TS = "5179894887252.095"  # a 512 KiB device allocation of the first aten::addmm (classifier's Linear)


def test_larger_device_allocation_moves_its_memory_rows_contributor_line_and_peak(tmp_path):
    """The 512 KiB [memory] allocation at 5179894887252.095 64 MiB larger: its Bytes and its free's (the next event
    of its Addr), Total Allocated while it lives and Total Reserved from it on (the caching allocator keeps the
    segment). MemoryCompare: the row holding it (DistributedDataParallel.forward, where the Linear runs) +65536 KB;
    MemoryCompareStatistic: that op +64 MB, Allocated Duration unchanged; memory contributor that op 176.89 ->
    240.89 MB; the memory line: inside operators +64.00 MB, peak reserved 1.66 -> 1.72 GB (the raw maxima of
    Total Reserved: 1.658203125 -> 1.720703125 GiB), as the console's Mem Usage. No time figure moves. Swapped:
    negated."""
    grow = 64 * 1024 * 1024
    doc = _load(ALEXNET)
    mem = sorted((e for e in doc["traceEvents"] if e.get("name") == "[memory]" and e["args"].get("Device Id", -1) >= 0),
                 key=lambda e: e["ts"])
    (alloc,) = [e for e in mem if str(e["ts"]) == _ALLOC_TS]
    free = next(e for e in mem if e["ts"] > alloc["ts"] and e["args"]["Addr"] == alloc["args"]["Addr"])
    assert (alloc["args"]["Bytes"], free["args"]["Bytes"]) == (524288, -524288)
    peak0 = max(e["args"]["Total Reserved"] for e in mem)
    for e in mem:
        if alloc["ts"] <= e["ts"] < free["ts"]:
            e["args"]["Total Allocated"] += grow
        if e["ts"] >= alloc["ts"]:
            e["args"]["Total Reserved"] += grow
    alloc["args"]["Bytes"] += grow
    free["args"]["Bytes"] -= grow
    peak1 = max(e["args"]["Total Reserved"] for e in mem)
    assert (peak0 / 1024**3, peak1 / 1024**3) == (1.658203125, 1.720703125)
    big = _save(doc, tmp_path / "alexnet_addmm_alloc_larger.pt.trace.json")

    same, res = compare(str(ALEXNET), str(ALEXNET)), compare(str(ALEXNET), str(big))
    assert [n for n in res.sheet_names if n != "Summary" and not res.sheet(n).equals(same.sheet(n))] == [
        "MemoryCompareStatistic", "MemoryCompare"]
    stat = res.sheet("MemoryCompareStatistic")
    assert _changed(stat, "Operator Name", ("Base Allocated Memory(MB)", "Comparison Allocated Memory(MB)")) == {
        "DistributedDataParallel.forward": grow / 1024**2}
    assert not _changed(stat, "Operator Name", ("Base Allocated Duration(ms)", "Comparison Allocated Duration(ms)"))
    assert _changed(res.sheet("MemoryCompare"), "Operator Name", ("Size(KB)", "Size(KB).1")) == {
        "DistributedDataParallel.forward": grow / 1024}
    mc = res.memory_contributors
    assert mc[["Name", "Diff(MB)"]].values.tolist() == [["DistributedDataParallel.forward", 64.0]]
    assert mc[["Base(MB)", "Comparison(MB)"]].values.tolist()[0] == pytest.approx([176.88623046875,
                                                                                  240.88623046875])
    line = memory_line(res.frames["memory"])
    assert line.startswith("Peak reserved memory (Mem Usage) 1.66 GB -> 1.72 GB (+0.06 GB, +3.77%).\n")
    assert line.endswith(" (+64.00 MB).")
    usage = [line for line in res.console_table().splitlines() if line.startswith("| GPU")]
    assert ["1.66G" in usage[0], "1.72G" in usage[1]] == [True, True]
    assert _waterfall(res) == {} and not len(res.contributors)
    back = compare(str(big), str(ALEXNET))
    assert back.memory_contributors[["Name", "Diff(MB)"]].values.tolist() == [["DistributedDataParallel.forward",
                                                                              -64.0]]
    assert memory_line(back.frames["memory"]).startswith("Peak reserved memory (Mem Usage) 1.72 GB -> 1.66 GB")


# --------------------------------------------------------------------------- legacy Kineto (PyTorch 1.8)

def test_legacy_kernel_longer_is_attributed_as_in_the_modern_format(tmp_path):
    """The legacy ResNet-50 excerpt (cat Kernel / Operator / Runtime, integer µs, kernels linked by "external
    id"): the first kernel with more than 20 us idle after it, aten::clamp_min's clamp_min_scalar kernel (64 us)
    inside aten::relu_ > aten::clamp_min_, 20 us longer: Vector and Computing +0.020 ms, Free -0.020 ms, E2E
    unchanged; OperatorCompare's aten::relu_ row [[32, 64, 56, 56]] 64 -> 84 us and no other row; the contributor
    aten::relu_ at operator level, as the modern format attributes a kernel to its top-level op. Swapped:
    negated."""
    us = 20
    doc = _load(LEGACY)
    events = doc["traceEvents"]
    dev = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("Kernel", "Memcpy", "Memset")),
                 key=lambda e: e["ts"])
    i = next(i for i, e in enumerate(dev[:-1]) if e["cat"] == "Kernel" and dev[i + 1]["ts"] - e["ts"] - e["dur"] > us
             and all(d["ts"] + d["dur"] <= e["ts"] for d in dev[:i]))
    kernel = dev[i]
    (op,) = [e for e in events if e.get("cat") == "Operator"
             and e["args"].get("External id") == kernel["args"]["external id"]]
    chain = sorted((e for e in events if e.get("cat") == "Operator" and e["tid"] == op["tid"]
                    and e["ts"] <= op["ts"] and op["ts"] + op["dur"] <= e["ts"] + e["dur"]), key=lambda e: e["ts"])
    assert [e["name"] for e in chain] == ["aten::relu_", "aten::clamp_min_", "aten::clamp_min"]
    assert kernel["dur"] == 64
    kernel["dur"] += us
    slow = _save(doc, tmp_path / "legacy_relu_slower.pt.trace.json")

    same, res = compare(str(LEGACY), str(LEGACY)), compare(str(LEGACY), str(slow))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"Computing Time": 0.02, "Vector": 0.02,
                                                        "Vector (No Trans)": 0.02, "Free Time": -0.02, "Free": -0.02}
    assert _waterfall(res) == {"Vector": 20_000, "Free: Other": -20_000}
    oc0, oc1 = same.sheet("OperatorCompare"), res.sheet("OperatorCompare")
    moved = [(r[1], r[2], r[5], r[10]) for r0, r in zip(oc0.itertuples(index=False), oc1.itertuples(index=False),
                                                        strict=True) if list(r0) != list(r)]
    assert moved == [("aten::relu_", "[[32, 64, 56, 56]]", 64.0, 84.0)]
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["operator", "aten::relu_", 0.02]]
    back = compare(str(slow), str(LEGACY))
    assert _waterfall(back) == {"Vector": -20_000, "Free: Other": 20_000}
    assert back.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["operator", "aten::relu_", -0.02]]


# --------------------------------------------------------------------------- --use_input_shape / --max_kernel_num

def _pool_shapes(pools: list[dict], events: list[dict]) -> list[str]:
    """The Input Dims of the aten::max_pool2d op holding each MaxPool kernel's launch (by correlation id)."""
    out = []
    for k in pools:
        (call,) = [e for e in events if e.get("cat") == "cuda_runtime"
                   and e["args"].get("correlation") == k["args"]["correlation"]]
        (op,) = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::max_pool2d"
                 and e["tid"] == call["tid"] and e["ts"] <= call["ts"] <= e["ts"] + e["dur"]]
        out.append(str(op["args"]["Input Dims"]).replace("'", ""))
    return out


@pytest.mark.parametrize("shape", [False, True])
def test_max_kernel_num_opens_the_forward_and_the_right_shapes_move(tmp_path, shape):
    """Each of MaxPool2d's three forward kernels 30 us longer, compared op by op (--disable_module): without
    --max_kernel_num the one row that moves is DistributedDataParallel.forward (+90 us, the top-level op holding
    the forward's kernels); with --max_kernel_num 4 it is opened into its child ops and the three aten::max_pool2d
    rows move by 30 us each, each the row of its own input shape ([32, 64, 55, 55], [32, 192, 27, 27],
    [32, 256, 13, 13], read from the op holding each kernel's launch), with or without --use_input_shape; the
    contributor is then aten::max_pool2d +0.090 ms."""
    slow, pools = _lengthened_alexnet(tmp_path, 30)
    events = _load(ALEXNET)["traceEvents"]
    shapes = _pool_shapes(pools, events)
    assert shapes == ["[[32, 64, 55, 55], [], [], [], [], []]", "[[32, 192, 27, 27], [], [], [], [], []]",
                      "[[32, 256, 13, 13], [], [], [], [], []]"]
    kw = {"disable_module": True, "use_input_shape": shape}
    for extra, expected in (({}, [("DistributedDataParallel.forward", "N/A", 90.0)]),
                            ({"max_kernel_num": 4}, [("aten::max_pool2d", s, 30.0) for s in shapes])):
        same, res = compare(str(ALEXNET), str(ALEXNET), **kw, **extra), compare(str(ALEXNET), str(slow), **kw, **extra)
        oc0, oc1 = same.sheet("OperatorCompare"), res.sheet("OperatorCompare")
        moved = [(r[1], r[2], r[11]) for r0, r in zip(oc0.itertuples(index=False), oc1.itertuples(index=False),
                                                      strict=True) if list(r0) != list(r)]
        assert moved == expected
        base = {(r[1], r[2]): r[5] for r in oc1.itertuples(index=False) if r[1] == "aten::max_pool2d"}
        if extra:
            assert [base[("aten::max_pool2d", s)] for s in shapes] == pytest.approx(
                [float(k["dur"]) for k in pools], abs=1e-9)
        assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
            ["operator", expected[0][0], 0.09]]
