"""Kineto traces with one kind of damage each, found by a key-by-key fuzz of the loader (session 61): each used to
change figures without a word. The traces are the real timesformer excerpt (tests/data/kineto/README.md) and the
real bert-small H100 trace of ``sample_data/`` (its README), and hta's sampled rank 0 of the shared samples
(``../shared/samples``, PROVENANCE.md; skipped without them), each damaged in a copy; expected figures come from
the undamaged trace or from the raw JSON read with the json module, not from our loader."""

from __future__ import annotations

import gzip
import json
import logging
from decimal import Decimal
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "tests" / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
BERT = ROOT / "sample_data" / "bert-small_h100.json.gz"


def _doc(path: Path) -> dict:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


def _write(tmp_path: Path, doc: dict, name: str) -> str:
    path = tmp_path / f"{name}.pt.trace.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _ns(v) -> int:
    return int(Decimal(str(v)) * 1000)


def _kernel_ends(events: list[dict]) -> list[dict]:
    starts = {(e["pid"], e["tid"], e["ts"]) for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"}
    return [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
            and (e["pid"], e["tid"], e["ts"]) in starts]


def test_a_flow_end_written_twice_links_its_kernel_once(tmp_path):
    """A copy of a kernel's flow end was a second link: the op's Device Total Time counted that kernel twice."""
    doc = _doc(BERT)
    ev = doc["traceEvents"]
    end = _kernel_ends(ev)[5]
    twice = _write(tmp_path, dict(doc, traceEvents=[*ev, dict(end)]), "twice")
    once = _write(tmp_path, doc, "once")
    prof = load_profile(twice, build_options()[0])
    s_ids = {e["id"] for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    f_ids = {e["id"] for e in ev if e.get("ph") == "f" and e.get("cat") == "ac2g"}
    assert len(prof.flows) == len(s_ids & f_ids)  # one row per pair, the copy none
    assert (prof.flows["id"] == str(end["id"])).sum() == 1
    got, want = (compare(p, p, enable_operator_compare=True, disable_module=True).sheet("OperatorCompare")
                 for p in (twice, once))
    assert got.equals(want)


def test_kernels_whose_flow_start_is_lost_keep_their_op(tmp_path):
    """Flow starts cut from the file (every second one): each end at a kernel is linked to its launch call by the
    correlation id, as before, and now read as the pair it was (the time breakdown reads the op around it): the
    Matmul and Flash Attention kernels had read as Cube (other) and Vector, without a word."""
    doc = _doc(BERT)
    ev = doc["traceEvents"]
    starts = [e for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g"]
    cut_ids = {e["id"] for e in starts[::2]}
    cut = _write(tmp_path, dict(doc, traceEvents=[e for e in ev if not (e.get("ph") == "s" and e["id"] in cut_ids)]),
                 "cut")
    prof = load_profile(cut, build_options()[0])
    calls = {e["args"]["correlation"]: e for e in ev
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    lost = [e for e in _kernel_ends(ev) if e["id"] in cut_ids]
    assert lost
    fl = prof.flows[prof.flows["replay"] == 2]
    assert sorted(fl["f_ts"].tolist()) == sorted(_ns(e["ts"]) for e in lost)
    by_id = dict(zip(fl["id"].tolist(), fl["s_ts"].tolist(), strict=True))
    assert by_id == {str(e["id"]): _ns(calls[e["id"]]["ts"]) for e in lost}
    full = _write(tmp_path, doc, "full")
    overall = compare(cut, cut, enable_profiling_compare=True).sheet("OverallMetrics")
    assert overall.equals(compare(full, full, enable_profiling_compare=True).sheet("OverallMetrics"))


def test_kernel_and_op_events_of_another_ph_are_said(tmp_path):
    """Kineto writes kernels and host ops as complete events ("X"); one of another ph is left out, as before, and now
    counted in a warning."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    kernels = [i for i, e in enumerate(ev) if e.get("cat") == "kernel" and e.get("ph") == "X"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    odd = {kernels[3]: "Z", ops[1]: "B", ops[7]: ""}
    path = _write(tmp_path, dict(doc, traceEvents=[dict(e, ph=odd[i]) if i in odd else e for i, e in enumerate(ev)]),
                  "ph")
    prof = load_profile(path, build_options()[0])
    assert len(prof.kernels) == len([e for e in ev if e.get("ph") == "X" and e.get("cat") in
                                     ("kernel", "gpu_memset", "gpu_memcpy")]) - 1
    assert f'{path}: 1 kernel, memcpy or memset event(s) with a ph other than "X" (the first: \'Z\'); not read, so ' \
           "they count in no figure" in prof.warnings
    assert f'{path}: 2 host op or runtime call event(s) with a ph other than "X" (the first: \'B\'); not read, so ' \
           "they count in no figure" in prof.warnings
    assert not any("ph other than" in w for w in load_profile(str(H100), build_options()[0]).warnings)


def test_memory_events_without_bytes_device_id_or_addr_are_counted(tmp_path):
    """A [memory] event without Bytes made no record, one without Device Id read as host memory, and Addr-less ones
    paired with one another, each without a word; all events without Addr (PyTorch 1.8) stay the memory
    comparison's own warning."""
    doc = _doc(BERT)
    ev = doc["traceEvents"]
    mem = [i for i, e in enumerate(ev) if e.get("name") == "[memory]"]
    assert all({"Bytes", "Device Id", "Addr"} <= set(ev[i]["args"]) for i in mem)
    drop = {mem[0]: ("Bytes",), mem[4]: ("Bytes", "Addr"), mem[9]: ("Device Id",), mem[12]: ("Addr",)}

    def damaged(i, e):
        if i not in drop:
            return e
        args = {k: v for k, v in e["args"].items() if k not in drop[i]}
        if i == mem[12]:
            args["Addr"] = None  # null reads as absent
        return dict(e, args=args)

    path = _write(tmp_path, dict(doc, traceEvents=[damaged(i, e) for i, e in enumerate(ev)]), "mem")
    prof = load_profile(path, build_options()[0])
    # the free read as host memory and the Addr-less one leave their allocations open until the address is reused
    assert prof.warnings[-1].startswith(f"{path}: of its device [memory] events, 2 allocations followed at the same "
                                        "address by another allocation with no free between")
    assert prof.warnings[-2] == (
        f"{path}: of {len(mem)} [memory] events, 2 without Bytes (they make no memory record); 2 without Addr (they "
        "pair only with one another, as one address); 1 without Device Id (they read as host memory, which no "
        "memory figure reads)")
    none = [dict(e, args={k: v for k, v in e["args"].items() if k != "Addr"}) if e.get("name") == "[memory]" else e
            for e in ev]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=none), "none"), build_options()[0])
    assert not any("[memory] events, " in w for w in prof.warnings)
    assert not any("[memory] events, " in w for w in load_profile(str(BERT), build_options()[0]).warnings)


def test_complete_events_of_no_or_an_unknown_cat_are_said_where_kernels_and_ops_are_read(tmp_path):
    """A kernel whose cat was damaged (dropped, "NaN") left the kernels without a word where the trace's other
    kernels and ops were read; a trace without kernels or ops names such categories in its refusal or reason."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    kernels = [i for i, e in enumerate(ev) if e.get("cat") == "kernel" and e.get("ph") == "X"]

    def damaged(i, e):
        if i in kernels[:3]:
            return {k: v for k, v in e.items() if k != "cat"}
        return dict(e, cat="NaN") if i == kernels[10] else e

    path = _write(tmp_path, dict(doc, traceEvents=[damaged(i, e) for i, e in enumerate(ev)]), "cat")
    prof = load_profile(path, build_options()[0])
    assert len(prof.kernels) == len([e for e in ev if e.get("ph") == "X" and e.get("cat") in
                                     ("kernel", "gpu_memset", "gpu_memcpy")]) - 4
    assert prof.warnings[-1] == (f"{path}: 4 complete event(s) not read, so they count in no figure: 1 of categories "
                                 "it does not know ('NaN' (1)); 3 without a cat")
    assert not any("not read, so" in w for w in load_profile(str(H100), build_options()[0]).warnings)


def test_collective_kernels_without_a_correlation_id_are_counted(samples, tmp_path):
    """hta's sampled rank 0 holds no launch flow: its 10 SendRecv kernels are named by their launch calls, found by
    the correlation id. Without it (dropped from every third kernel) a kernel fell back to ``sendrecv`` silently."""
    path = samples / "hta/tests/data/trace_filter/sampled_rank-0.json.gz"
    if not path.is_file():
        pytest.skip("hta sampled_rank-0 absent")
    doc = _doc(path)
    ev = doc["traceEvents"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    for k in kernels[::3]:
        k["args"].pop("correlation", None)
    lost = sum(1 for k in kernels[::3] if k["name"].lower().startswith(("nccl", "rccl", "msccl")))
    assert lost
    out = _write(tmp_path, doc, "corr")
    prof = load_profile(out, build_options(enable_communication_compare=True)[0])
    assert f"{out}: {lost} collective kernel(s) that no launch flow reaches have no correlation id (absent, or no " \
           "whole number), so no launch call names their collective: CommunicationCompare reads them by the kernel " \
           "name alone" in prof.warnings
    for opts in (build_options(enable_communication_compare=True)[0], build_options()[0]):
        assert not any("correlation id" in w for w in load_profile(str(path), opts).warnings)


def test_memory_events_written_twice_are_counted(tmp_path):
    """An exact copy of a [memory] event is read as written (a further allocation at that address), as before, and
    now counted: one copied allocation re-paired the blocks after it without a word."""
    doc = _doc(BERT)
    ev = doc["traceEvents"]
    mem = [e for e in ev if e.get("name") == "[memory]"]
    alloc = next(e for e in mem if e["args"]["Bytes"] > 0)
    path = _write(tmp_path, dict(doc, traceEvents=[*ev, dict(alloc), dict(mem[7]), dict(mem[7])]), "copies")
    prof = load_profile(path, build_options()[0])
    assert len(prof.memory) == len(mem) + 3
    assert f"{path}: 3 [memory] event(s) repeat another's time, Bytes, Addr, Device Id and Total Reserved exactly " \
           "(a trace merged or written twice?); each is read as written, so the memory records pair them as " \
           "further allocations and frees" in prof.warnings
    assert not any("[memory] event(s) repeat" in w for w in load_profile(str(BERT), build_options()[0]).warnings)


def test_memory_readings_all_zero_are_said_as_readings_not_as_none(tmp_path):
    """A trace whose [memory] Total Reserved readings are all 0 showed "not recorded" in the Summary's memory line
    and "no peak reserved memory recorded" in the OverallMetrics note, as a trace without any: an absent Total
    Reserved read as 0 too. The readings written as 0 are counted (one event without the key, one with null: no
    reading), as the NPU side words it. Expected peak and count from the raw JSON of the timesformer excerpt."""
    from msprof_compare.report.summary_console import memory_line

    doc = _doc(H100)
    ev = doc["traceEvents"]
    mem = [i for i, e in enumerate(ev) if e.get("name") == "[memory]"]
    peak = max(ev[i]["args"]["Total Reserved"] for i in mem if ev[i]["args"]["Device Id"] >= 0) / 1024**3
    zeroed = [dict(e, args=dict(e["args"], **{"Total Reserved": 0})) if i in mem else e for i, e in enumerate(ev)]
    del zeroed[mem[0]]["args"]["Total Reserved"]
    zeroed[mem[1]]["args"]["Total Reserved"] = None
    n = len(mem) - 2
    assert n == 35 and all(ev[i]["args"]["Device Id"] >= 0 for i in mem)
    zero = _write(tmp_path, dict(doc, traceEvents=zeroed), "zero")
    words = f"its {n} [memory] Total Reserved readings are all 0"
    res = compare(str(H100), zero, enable_profiling_compare=True)
    assert [x for x in res.summary["notes"] if "Mem Usage" in x] == [
        f"Comparison row: {words}, so its Mem Usage shows 0.00G, the largest of them."]
    mem_col = [row[res.summary["headers"].index("Mem Usage")] for row in res.summary["rows"]]
    assert mem_col == [f"{peak:.2f}G", "0.00G"]
    up = compare(zero, str(H100), enable_memory_compare=True)
    assert memory_line(up.frames["memory"]).startswith(
        f"Peak reserved memory (Mem Usage; base: {words}) 0.00 GB -> {peak:.2f} GB (+{peak:.2f} GB).\n")
    assert up.memory_totals["peak_zero"] == {"base": words}
    # no reading at all (every Total Reserved absent): still "not recorded", no count of zeros
    none = _write(tmp_path, dict(doc, traceEvents=[
        dict(e, args={k: v for k, v in e["args"].items() if k != "Total Reserved"}) if i in mem else e
        for i, e in enumerate(ev)]), "none")
    res = compare(str(H100), none, enable_profiling_compare=True)
    notes = [x for x in res.summary["notes"] if "Mem Usage" in x]
    assert notes == ["Comparison row: no peak reserved memory recorded, so its Mem Usage 0.00G is not a measurement."]


def test_host_events_without_a_lane_or_with_no_whole_lane_id_are_counted(tmp_path):
    """An op without a pid or tid read on lane 0 and one whose tid is "NaN" or beyond int64 on a lane of its own
    (a named one), which moved ops between threads (their tree, Self Time) without a word (kfuzz61: bert's Diff
    Self Ratio 1.0 -> 1.5). Each is read as before and counted: an absent id reads as a written 0 would; a
    text name ("stream 7", PyTorch 1.8's) is a lane and no damage. Timesformer excerpt, ops picked from the JSON."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    damaged = [dict(e) for e in ev]
    del damaged[ops[3]]["tid"], damaged[ops[4]]["pid"], damaged[ops[4]]["tid"]
    damaged[ops[5]]["tid"] = "NaN"
    damaged[ops[6]]["tid"] = 10**19
    damaged[ops[7]]["tid"] = "stream 7"
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "lanes")
    prof = load_profile(path, build_options()[0])
    lanes = [w for w in prof.warnings if "host event" in w and ("pid" in w or "tid" in w)]
    assert lanes == [
        f"{path}: 1 host event without a pid; 2 host events without a tid: each read as 0, so they share that "
        "lane with one another and with any event written there",
        f"{path}: 2 host events whose tid is not written as an integer within int64 (the first: 'NaN'): each such "
        "value is read as a lane of its own"]
    # read as before: the absent ids as a written 0
    zeros = [dict(e) for e in damaged]
    zeros[ops[3]]["tid"] = zeros[ops[4]]["tid"] = zeros[ops[4]]["pid"] = 0
    same = load_profile(_write(tmp_path, dict(doc, traceEvents=zeros), "zeros"), build_options()[0])
    assert prof.ops[["pid", "tid"]].equals(same.ops[["pid", "tid"]])
    assert not [w for w in same.warnings if "without a" in w and "host events" in w]
    # the undamaged excerpt: no such note
    assert not [w for w in load_profile(str(H100), build_options()[0]).warnings if "an integer within" in w
                or "without a pid" in w or "without a tid" in w]


def test_metadata_events_without_a_tid_are_no_damage_without_a_pid_are(tmp_path):
    """A process_name / process_sort_index record needs no tid (Chrome's trace format lets it out): no note; one
    without a pid names lane 0, counted. Timesformer excerpt's metadata events."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    procs = [i for i, e in enumerate(ev) if e.get("ph") == "M" and e["name"].startswith("process_")]
    no_tid = [{k: v for k, v in e.items() if k != "tid"} if i in procs else e for i, e in enumerate(ev)]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=no_tid), "notid"), build_options()[0])
    assert not [w for w in prof.warnings if "metadata event" in w]
    no_pid = [dict(e) for e in ev]
    del no_pid[procs[0]]["pid"]
    path = _write(tmp_path, dict(doc, traceEvents=no_pid), "nopid")
    assert [w for w in load_profile(path, build_options()[0]).warnings if "metadata event" in w] == [
        f"{path}: 1 metadata event without a pid: each read as 0, so they share that lane with one another and "
        "with any event written there"]


def test_thread_names_feed_no_figure_so_a_thread_name_without_a_tid_is_not_said(tmp_path, caplog):
    """A Kineto trace's thread names (``Profile.threads``) are read by nothing a user sees (only a
    trace_view.json's lanes are told apart by name), so a thread_name record without a tid, read as thread 0,
    changes nothing and is not said, as a process_name without one is not. The timesformer excerpt's 4
    thread_name records without their tid and renamed: the same sheets, every comparison on, and no message
    that the excerpt as recorded does not give. Should a comparison ever read Kineto thread names, this fails:
    then say such records (``_load_meta``)."""
    doc = _doc(H100)
    names = [e for e in doc["traceEvents"] if e.get("ph") == "M" and e.get("name") == "thread_name"]
    assert len(names) == 4 and all("tid" in e for e in names)
    for e in names:
        del e["tid"]
        e["args"] = {"name": "renamed"}
    path = _write(tmp_path, doc, "thread_names")
    on = {k: True for k in ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
                            "enable_api_compare", "enable_communication_compare")}
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        before = compare(str(H100), str(H100), **on)
        said = [r.getMessage().replace(str(H100), "<trace>") for r in caplog.records]
        caplog.clear()
        after = compare(path, path, **on)
    assert said and [r.getMessage().replace(path, "<trace>") for r in caplog.records] == said
    assert load_profile(path, build_options()[0]).warnings == []
    assert after.sheet_names == before.sheet_names and len(before.sheet_names) == 7
    for name in before.sheet_names:
        assert after.sheet(name).equals(before.sheet(name)), name


def test_host_memory_events_are_no_reserved_reading(tmp_path):
    """Mem Usage reads the device [memory] events alone: with every device Total Reserved 0, a host event (Device
    Id -1) that reserved 5 GiB leaves the peak 0.00G of the device readings, and a host event that wrote 0 is no
    device reading either; a device event that wrote "0" is one. Timesformer excerpt (its 37 [memory] events all
    device ones), two host copies added; the count is the raw JSON's device events."""
    from msprof_compare.model import KINETO_ZERO_RESERVED

    doc = _doc(H100)
    ev = doc["traceEvents"]
    mem = [i for i, e in enumerate(ev) if e.get("name") == "[memory]"]
    zeroed = [dict(e, args=dict(e["args"], **{"Total Reserved": 0})) if i in mem else e for i, e in enumerate(ev)]
    zeroed[mem[2]]["args"]["Total Reserved"] = "0"  # the text of a 0 is a reading of 0 too
    host = [dict(zeroed[mem[0]], args=dict(zeroed[mem[0]]["args"], **{"Device Id": -1, "Total Reserved": r}))
            for r in (5 * 1024**3, 0)]
    path = _write(tmp_path, dict(doc, traceEvents=[*zeroed, *host]), "host")
    prof = load_profile(path, build_options()[0])
    device = sum(1 for i in mem if ev[i]["args"]["Device Id"] >= 0)
    assert device == len(mem) == 37
    assert prof.extra[KINETO_ZERO_RESERVED] == device
    res = compare(str(H100), path, enable_profiling_compare=True)
    assert [x for x in res.summary["notes"] if "Mem Usage" in x] == [
        f"Comparison row: its {device} [memory] Total Reserved readings are all 0, so its Mem Usage shows 0.00G, the "
        "largest of them."]


def test_lane_ids_empty_or_just_beyond_int64_are_counted_per_lane_field(tmp_path):
    """An empty tid and one of exactly 2**63 (one past int64) are no lane either, each read as a lane of its own;
    a pid "NaN" is counted apart, and the first named is the first field's (pid before tid). Timesformer excerpt,
    ops picked from the JSON; the counts by hand: 1 pid, 2 tids."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    damaged = [dict(e) for e in ev]
    damaged[ops[3]]["tid"] = ""
    damaged[ops[4]]["tid"] = 2**63
    damaged[ops[5]]["pid"] = "NaN"
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "edge")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "an integer within" in w] == [
        f"{path}: 1 host event whose pid is not written as an integer within int64; 2 host events whose tid is not "
        "written as an integer within int64 (the first: 'NaN'): each such value is read as a lane of its own"]


def test_two_ends_of_a_plain_launch_without_its_start_stay_replays(tmp_path):
    """Only the one end of a plain launch call whose flow start is lost is read as its pair (LOST_START): an id whose
    start is lost with two ends at two kernels is a replay's, as a graph launch's kernels are, linked to the call
    and left out of the time breakdown's op lookup (replay 1). bert-small: the 7th kernel's flow end given the 6th's
    id, both starts cut; the launch call is a plain cudaLaunchKernel, by the raw JSON."""
    doc = _doc(BERT)
    ev = [dict(e) for e in doc["traceEvents"]]
    e1, e2 = _kernel_ends(ev)[5:7]
    cut = {e1["id"], e2["id"]}
    calls = {e["args"]["correlation"]: e for e in ev
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    assert "graphlaunch" not in calls[e1["id"]]["name"].lower() and e1["ts"] != e2["ts"]
    e2["id"] = e1["id"]
    kept = [e for e in ev if not (e.get("ph") == "s" and e.get("cat") == "ac2g" and e["id"] in cut)]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=kept), "two"), build_options()[0])
    rows = prof.flows[prof.flows["id"] == str(e1["id"])]
    assert sorted(rows["f_ts"].tolist()) == sorted([_ns(e1["ts"]), _ns(e2["ts"])])
    assert rows["replay"].tolist() == [1, 1]
    assert set(rows["s_ts"].tolist()) == {_ns(calls[e1["id"]]["ts"])}


def test_a_trace_without_ops_names_unread_categories_in_its_reason_alone(tmp_path):
    """The not-read warning is for a trace whose kernels and ops are both read: a trace without ops (recorded without
    the CPU activity) names its unread categories in the no-op reason instead, once. Timesformer excerpt without its
    host-op categories, one kernel's cat made "NaN": 1 of that category, counted from the raw JSON."""
    from msprof_compare.compare.optree import no_ops_reason
    from msprof_compare.loaders.kineto import OP_CATS

    doc = _doc(H100)
    ev = doc["traceEvents"]
    kernels = [i for i, e in enumerate(ev) if e.get("cat") == "kernel" and e.get("ph") == "X"]
    kept = [dict(e, cat="NaN") if i == kernels[10] else e for i, e in enumerate(ev)
            if str(e.get("cat", "")).lower() not in OP_CATS]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=kept), "noops"), build_options()[0])
    assert prof.ops.empty and len(prof.kernels) == len([e for e in kept if e.get("ph") == "X" and e.get("cat") in
                                                        ("kernel", "gpu_memset", "gpu_memcpy")])
    assert not [w for w in prof.warnings if "not read, so" in w]
    assert no_ops_reason(prof) == ("a GPU trace without cpu_op or runtime events has none; it holds complete events "
                                   "of categories that are not read: 'NaN' (1)")


VLLM = ROOT / "tests" / "data" / "kineto" / "vllm_mi300x_piecewise_graphs_excerpt.pt.trace.json.gz"


def test_events_without_a_name_are_counted(tmp_path):
    """A kernel without a name changed category (its name gives it) and a host event or Python frame with an empty
    one made a row named "" without a word (commfuzz62 on vLLM's decode trace: Cube 145 -> 144 kernels, Vector
    280 -> 281). They are read as before and counted per kind. vLLM MI300X excerpt, events picked from the
    JSON; an absent name and "" are one case (Kineto's default name is "")."""
    doc = _doc(VLLM)
    ev = doc["traceEvents"]
    kernels = [i for i, e in enumerate(ev) if e.get("cat") == "kernel" and e.get("ph") == "X"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    frames = [i for i, e in enumerate(ev) if e.get("cat") == "python_function" and e.get("ph") == "X"]
    damaged = [dict(e) for e in ev]
    del damaged[kernels[10]]["name"]
    damaged[kernels[20]]["name"] = ""
    damaged[ops[5]]["name"] = ""
    del damaged[frames[2]]["name"]
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "nameless")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "without a name" in w] == [
        f"{path}: 2 kernels; 1 host event; 1 Python function without a name (or with an empty one): read as named "
        "\"\", so no category, operator or API row can tell what they ran"]
    device = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X"]
    assert (prof.kernels["name"] == "").sum() == 2 and len(prof.kernels) == len(device)  # read, not dropped
    # one such event: "it"
    one = _write(tmp_path, dict(doc, traceEvents=[dict(e, name="") if i == ops[5] else e for i, e in enumerate(ev)]),
                 "one")
    assert [w for w in load_profile(one, build_options()[0]).warnings if "without a name" in w] == [
        f"{one}: 1 host event without a name (or with an empty one): read as named \"\", so no category, operator or "
        "API row can tell what it ran"]
    # the undamaged excerpt: no such note
    assert not [w for w in load_profile(str(VLLM), build_options()[0]).warnings if "without a name" in w]


def test_lane_ids_of_another_json_type_are_counted_and_read_as_lanes_of_their_own(tmp_path):
    """A pid or tid written as ``true``, ``false``, ``7.5`` or ``null`` refused the whole trace ("not a trace event
    file: Expected `int | str`, got `bool`"), where a tid beyond int64 or "NaN" is read as a lane of its own and
    counted; and ``int(True)`` would have made it lane 1. Each is now such a lane, counted in the same warning
    (the first named is the first field's, pid before tid, written as the JSON writes it), and the other events'
    lanes are the trace's as written. Timesformer excerpt, ops picked from the JSON; counts by hand: 1 pid, 3 tids.
    Another field of another type is refused, the event named by index and name."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    damaged = [dict(e) for e in ev]
    damaged[ops[3]]["tid"] = True
    damaged[ops[4]]["pid"] = 7.5
    damaged[ops[5]]["tid"] = None
    damaged[ops[6]]["tid"] = False
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "types")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "an integer within" in w] == [
        f"{path}: 1 host event whose pid is not written as an integer within int64; 3 host events whose tid is not "
        "written as an integer within int64 (the first: 7.5): each such value is read as a lane of its own"]
    clean = load_profile(str(H100), build_options()[0]).ops
    tids, written = prof.ops["tid"].tolist(), clean["tid"].tolist()
    pids = prof.ops["pid"].tolist()
    read = [i for i, e in enumerate(ev) if e.get("cat") in ("cpu_op", "cuda_runtime") and e.get("ph") == "X"]
    rows = {i: k for k, i in enumerate(read)}  # the excerpt's host events (ops, runtime calls), read in file order
    assert prof.ops["name"].tolist() == clean["name"].tolist() == [ev[i]["name"] for i in read]
    assert prof.ops["ts"].tolist() == [_ns(ev[i]["ts"]) for i in read]
    own = {tids[rows[ops[3]]], tids[rows[ops[5]]], tids[rows[ops[6]]]}
    assert len(own) == 3 and not own & ({0, 1} | set(written))
    assert pids[rows[ops[4]]] not in set(clean["pid"].tolist()) | {7}
    changed = {rows[ops[k]] for k in (3, 4, 5, 6)}
    assert [(p, t) for k, (p, t) in enumerate(zip(pids, tids, strict=True)) if k not in changed] == [
        (p, t) for k, (p, t) in enumerate(zip(clean["pid"].tolist(), written, strict=True)) if k not in changed]
    damaged[ops[7]]["ph"] = 5
    refused = _write(tmp_path, dict(doc, traceEvents=damaged), "ph")
    with pytest.raises(ProfileError) as info:
        load_profile(refused, build_options()[0])
    assert info.value.message == (f"invalid trace event: event {ops[7]} of traceEvents (counting from 0; name "
                                  f"{ev[ops[7]]['name']!r}) has ph 5, an integer, where a string is due")


def test_nameless_events_by_the_thousand_are_counted_with_separators(tmp_path):
    """The nameless count is written as the other loaders' counts are ("1,385", not "1385"; mutation testing,
    session 63): bert-small's 1,385 Python functions, counted in its raw JSON, each given an empty name."""
    doc = _doc(BERT)
    ev = doc["traceEvents"]
    frames = [i for i, e in enumerate(ev) if e.get("cat") == "python_function" and e.get("ph") == "X"]
    assert len(frames) == 1385
    blank = set(frames)
    path = _write(tmp_path, dict(doc, traceEvents=[dict(e, name="") if i in blank else e for i, e in enumerate(ev)]),
                  "frames")
    assert [w for w in load_profile(path, build_options()[0]).warnings if "without a name" in w] == [
        f"{path}: 1,385 Python functions without a name (or with an empty one): read as named \"\", so no category, "
        "operator or API row can tell what they ran"]


def test_a_nameless_graph_launch_is_one_host_event_however_often_it_is_read(tmp_path):
    """A hipGraphLaunch call without a name is counted once, as the host event it is, though the graph replays'
    flow ends without a start read the launch calls again (``_launch_calls``, which names no kind: its reads count
    in no note; mutation testing, session 63). vLLM MI300X excerpt: its first hipGraphLaunch of the 25, picked from
    the JSON, with an empty name."""
    doc = _doc(VLLM)
    ev = doc["traceEvents"]
    first = next(i for i, e in enumerate(ev) if e.get("cat") == "cuda_runtime" and e.get("name") == "hipGraphLaunch")
    path = _write(tmp_path, dict(doc, traceEvents=[dict(e, name="") if i == first else e for i, e in enumerate(ev)]),
                  "launch")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "without a name" in w] == [
        f"{path}: 1 host event without a name (or with an empty one): read as named \"\", so no category, operator "
        "or API row can tell what it ran"]


def test_memory_allocations_the_pairing_cannot_close_are_counted(tmp_path):
    """An allocation followed at its address by another allocation reads as never released, and one followed by a
    free of another size makes no memory record (the original's pairing, kept): one copied allocation 1 us later
    moved an operator's Allocated Memory and Duration without a word (kfuzz64). The events to damage and the counts
    come from the raw JSON of the timesformer excerpt; its exact copies stay their own line only."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    mem = sorted((i for i, e in enumerate(ev) if e.get("name") == "[memory]" and e["args"]["Device Id"] >= 0),
                 key=lambda i: ev[i]["ts"])
    by_addr: dict = {}
    for i in mem:
        by_addr.setdefault(ev[i]["args"]["Addr"], []).append(i)
    closed = [(a, f) for idx in by_addr.values() for a, f in zip(idx, idx[1:], strict=False)
              if ev[a]["args"]["Bytes"] > 0 and ev[f]["args"]["Bytes"] == -ev[a]["args"]["Bytes"]]
    assert len(closed) >= 2  # two allocations each closed by the free of its size, at its address
    (a1, _), (a2, f2) = closed[:2]
    again = dict(ev[a1], ts=ev[a1]["ts"] + 1)  # a second allocation at a1's address before its free
    damaged = [dict(e, args=dict(e["args"], Bytes=e["args"]["Bytes"] - 512)) if i == f2 else e
               for i, e in enumerate(ev)]
    path = _write(tmp_path, dict(doc, traceEvents=[*damaged, again]), "pairing")
    prof = load_profile(path, build_options()[0])
    assert f"{path}: of its device [memory] events, 1 allocation followed at the same address by another " \
           "allocation with no free between (read as never released) and 1 allocation followed at the same address " \
           "by a free of another size (read as making no memory record), as the original pairs them: a free lost, " \
           "or a trace cut or merged?" in prof.warnings
    copied = _write(tmp_path, dict(doc, traceEvents=[*ev, dict(ev[a2])]), "copied")
    warnings = load_profile(copied, build_options()[0]).warnings
    assert any("1 [memory] event(s) repeat another's" in w for w in warnings)
    assert not any("device [memory] events" in w for w in warnings)
    for whole in (H100, ROOT / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz",
                  ROOT / "tests" / "data" / "kineto" / "legacy_resnet50_excerpt.pt.trace.json"):
        assert not any("device [memory] events" in w for w in load_profile(str(whole), build_options()[0]).warnings)


def test_host_and_zero_size_memory_events_are_no_part_of_the_pairing_note(tmp_path):
    """The note counts what the memory records' pairing reads (``compare.memory.gpu_records``): device events of
    non-zero size. AlexNet's excerpt (raw JSON: 36 host [memory] events, Device Id -1; no device allocation left
    unclosed) with a host allocation copied at ts + 1 us with 1 byte more (not an exact copy) says nothing; a
    0-byte device event at an allocation's address before a second allocation there (both synthetic, between the
    allocation and its free) breaks nothing: the second allocation is still counted; and an address is paired
    on its own device only."""
    doc = _doc(ROOT / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz")
    ev = doc["traceEvents"]
    mem = [e for e in ev if e.get("name") == "[memory]"]
    host = [e for e in mem if e["args"]["Device Id"] == -1 and e["args"]["Bytes"] > 0]
    assert sum(e["args"]["Device Id"] == -1 for e in mem) == 36 and host
    twin = dict(host[0], ts=host[0]["ts"] + 1, args=dict(host[0]["args"], Bytes=host[0]["args"]["Bytes"] + 1))
    path = _write(tmp_path, dict(doc, traceEvents=[*ev, twin]), "host")
    assert not any("device [memory] events" in w for w in load_profile(path, build_options()[0]).warnings)
    dev = sorted((e for e in mem if e["args"]["Device Id"] >= 0), key=lambda e: e["ts"])
    alloc, free = next((a, f) for i, a in enumerate(dev) if a["args"]["Bytes"] > 0 for f in dev[i + 1:]
                       if f["args"]["Addr"] == a["args"]["Addr"])
    assert free["args"]["Bytes"] == -alloc["args"]["Bytes"] and free["ts"] - alloc["ts"] > 2
    zero = dict(alloc, ts=alloc["ts"] + 1, args=dict(alloc["args"], Bytes=0))
    again = dict(alloc, ts=alloc["ts"] + 2)
    path = _write(tmp_path, dict(doc, traceEvents=[*ev, zero, again]), "zero")
    assert [w for w in load_profile(path, build_options()[0]).warnings if "device [memory] events" in w] == [
        f"{path}: of its device [memory] events, 1 allocation followed at the same address by another allocation "
        "with no free between (read as never released), as the original pairs them: a free lost, or a trace cut or "
        "merged?"]
    # one address on two devices is two blocks: an allocation above every address on device 0, and one at the same
    # address on device 1, both left open at the end (synthetic), close nothing of each other
    top = max(e["args"]["Addr"] for e in dev) + 4096
    on = [dict(alloc, ts=alloc["ts"] + 1 + d, args=dict(alloc["args"], Addr=top, **{"Device Id": d})) for d in (0, 1)]
    path = _write(tmp_path, dict(doc, traceEvents=[*ev, *on]), "devices")
    assert not any("device [memory] events" in w for w in load_profile(path, build_options()[0]).warnings)


def test_kineto_events_written_as_a_top_level_list_are_refused_as_such(tmp_path):
    """A Kineto trace's traceEvents written as the file's top level (Chrome's array format) read as an Ascend
    trace_view.json, as every top-level list does, and was refused as "no NPU device lane ... record it with
    torch_npu.profiler.ProfilerActivity.NPU" (kfuzz64): it is refused as a list of Kineto events, naming the device
    categories it holds (from the raw JSON of the timesformer excerpt), and nothing is written."""
    import contextlib
    import io

    from msprof_compare import cli

    doc = _doc(H100)
    cats = sorted({e["cat"] for e in doc["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")})
    assert cats == ["gpu_memset", "kernel"]
    bare = tmp_path / "bare.pt.trace.json"
    bare.write_text(json.dumps(doc["traceEvents"]))
    with pytest.raises(ProfileError) as info:
        load_profile(str(bare), build_options()[0])
    assert info.value.message == ("a list of Kineto (GPU) trace events (cat gpu_memset, kernel), not an Ascend "
                                  'trace_view.json: a Kineto trace is a JSON object whose "traceEvents" holds them')
    assert info.value.hint == ('pass the *.pt.trace.json torch.profiler wrote, or wrap the list as '
                               '{"traceEvents": [...]}')
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli._run_typer(cli._compare_app(), ["-d", str(bare), "-bp", str(H100), "-o", str(out)],
                              "msprof-compare")
    errors = [ln for ln in err.getvalue().splitlines() if ln.startswith("error:")]
    assert code == 1 and "Traceback" not in err.getvalue()
    assert errors == [f"error: {bare}: {info.value.message} (comparison side: {info.value.hint})"]
    assert not out.exists() or not any(out.iterdir())
    wrapped = _write(tmp_path, {"traceEvents": doc["traceEvents"]}, "wrapped")
    assert len(load_profile(wrapped, build_options()[0]).kernels) == sum(
        e.get("ph") == "X" and e.get("cat") in cats for e in doc["traceEvents"])


def test_a_legacy_kineto_list_is_refused_by_its_capitalised_categories(tmp_path):
    """Legacy Kineto (tb_plugin's resnet50 sample, 2021) writes cat "Kernel": its excerpt's traceEvents written
    as the top level are refused as Kineto events too, the category named as the rule reads it (case aside)."""
    doc = json.loads((ROOT / "tests" / "data" / "kineto" / "legacy_resnet50_excerpt.pt.trace.json").read_text())
    assert sum(e.get("cat") == "Kernel" for e in doc["traceEvents"]) == 75
    assert not any(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") for e in doc["traceEvents"])
    bare = tmp_path / "bare.pt.trace.json"
    bare.write_text(json.dumps(doc["traceEvents"]))
    with pytest.raises(ProfileError) as info:
        load_profile(str(bare), build_options()[0])
    assert info.value.message == ("a list of Kineto (GPU) trace events (cat kernel), not an Ascend trace_view.json: "
                                  'a Kineto trace is a JSON object whose "traceEvents" holds them')


def test_a_distributed_rank_that_is_no_rank_id_is_refused_naming_it(tmp_path):
    """A Kineto trace's distributedInfo.rank written as text digits reads as that rank, as a side file's rank does;
    one of another kind (1.0, true, -1, "abc") is refused naming it. Both read as no rank: "1.0" was told "no
    distributedInfo.rank in its first 64 KiB", and two ranks of one host written "0" and "1" were compared as one
    device's two profiler cycles without a word (kfuzz64). The traces are the B200 all-reduce excerpt, its rank
    (0, from the raw JSON) rewritten in the text."""
    from msprof_compare import api
    from msprof_compare.units import RankCycle

    text = (ROOT / "tests" / "data" / "kineto" / "b200_vllm_allreduce_excerpt.pt.trace.json").read_text()
    assert json.loads(text)["distributedInfo"]["rank"] == 0 and text.count('"rank": 0,') == 1

    def folder(name: str, ranks: list[str]) -> Path:
        d = tmp_path / name
        d.mkdir()
        for ms, rank in enumerate(ranks, 1):  # one host's traces, named as tensorboard_trace_handler names them
            (d / f"host.{ms}000.pt.trace.json").write_text(text.replace('"rank": 0,', f'"rank": {rank},'))
        return d

    assert list(api.ranks(folder("ints", ["0", "1"]))) == [0, 1]
    assert list(api.ranks(folder("texts", ['"0"', '"01"']))) == [0, 1]
    assert all(not isinstance(u, RankCycle) for u in api.ranks(folder("mixed", ['"3"', "2"])))
    # a text of 5,000 digits is no rank id either (int() refuses past 4,300 digits: read, it raised ValueError), and
    # is named cut to 40 characters
    for i, (rank, said) in enumerate((("1.0", "1.0"), ("true", "true"), ("-1", "-1"), ('"abc"', "'abc'"),
                                      ("[1]", "[1]"), (f'"{"1" * 5000}"', f"'{'1' * 36}..."))):
        d = folder(f"bad{i}", ["0", rank])
        with pytest.raises(ProfileError) as info:
            api.ranks(d)
        assert str(info.value) == f"{d / 'host.2000.pt.trace.json'}: distributedInfo.rank {said} is no rank id " \
                                  "(0 to 2147483647)"
    # null is no rank written: one host's traces without one are its profiler cycles, as before
    assert list(api.ranks(folder("null", ["null", "null"]))) == [RankCycle(None, 1), RankCycle(None, 2)]


def test_a_whole_float_lane_id_is_said_written_as_a_float_and_read_as_a_lane_of_its_own(tmp_path):
    """A pid written 1.0 was said to be "no whole number within int64 (the first: 1.0)", untrue of 1.0; the words
    now say how it is written, and the reading stays: a lane of its own, not the pid-1 lane (no other event's pid).
    Timesformer excerpt, its fourth cpu_op's pid written 1.0 and its fifth's 1, picked from the JSON."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    damaged = [dict(e) for e in ev]
    damaged[ops[3]]["pid"] = 1.0
    damaged[ops[4]]["pid"] = 1
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "float")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "an integer within" in w] == [
        f"{path}: 1 host event whose pid is not written as an integer within int64 (the first: 1.0): each such "
        "value is read as a lane of its own"]
    ts, pids = prof.ops["ts"].tolist(), prof.ops["pid"].tolist()
    (floated,), (whole,) = ([p for t, p in zip(ts, pids, strict=True) if t == _ns(ev[ops[i]]["ts"])] for i in (3, 4))
    assert whole == 1 and pids.count(floated) == 1  # its own lane: no other op's, the pid-1 one's neither


def test_input_dims_and_types_that_are_no_list_are_counted(tmp_path):
    """An Input Dims / Input type arg written as null, a float or an object changed the op's shape cells (null as
    N/A, 1.5 as "1.5") without a word. Timesformer excerpt, its first three cpu_ops with Input Dims picked from the
    JSON: Input Dims null and 1.5, Input type {"a": 1}; counted by hand: 2 and 1, the first named null. The cells
    are read as before; a run of the time breakdown alone (no op args read) says nothing, nor does the clean excerpt."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and "Input Dims" in e.get("args", {})]
    damaged = [dict(e, args=dict(e["args"])) if "args" in e else e for e in ev]
    damaged[ops[0]]["args"]["Input Dims"] = None
    damaged[ops[1]]["args"]["Input Dims"] = 1.5
    damaged[ops[2]]["args"]["Input type"] = {"a": 1}
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "shapes")
    prof = load_profile(path, build_options(enable_operator_compare=True)[0])
    assert [w for w in prof.warnings if "no list" in w] == [
        f"{path}: 2 Input Dims and 1 Input type arg(s) of host ops are no list (the first: null); each is shown as "
        "written (null as N/A, as an absent one) in those ops' input shape / type cells and the rows keyed by them"]
    cells = {(t, d, y) for t, d, y in zip(prof.ops["ts"].tolist(), prof.ops["input_dims"].tolist(),
                                           prof.ops["input_type"].tolist(), strict=True)}
    assert (_ns(ev[ops[0]]["ts"]), "N/A", str(ev[ops[0]]["args"]["Input type"])) in cells
    assert (_ns(ev[ops[1]]["ts"]), "1.5", str(ev[ops[1]]["args"]["Input type"])) in cells
    assert (_ns(ev[ops[2]]["ts"]), str(ev[ops[2]]["args"]["Input Dims"]), "{'a': 1}") in cells
    assert not [w for w in load_profile(str(H100), build_options(enable_operator_compare=True)[0]).warnings
                if "no list" in w]
    assert not [w for w in load_profile(path, build_options(enable_profiling_compare=True)[0]).warnings
                if "no list" in w]


def test_input_dims_no_list_are_counted_by_value_not_by_distinct_text(tmp_path):
    """The count is of the ops whose arg is no list, though each distinct text is decoded once: the timesformer
    excerpt's first three cpu_ops with Input Dims given null (synthetic) are 3, one distinct text."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    ops = [i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and "Input Dims" in e.get("args", {})][:3]
    damaged = [dict(e, args=dict(e["args"], **{"Input Dims": None})) if i in ops else e for i, e in enumerate(ev)]
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "nulls")
    warnings = load_profile(path, build_options(enable_operator_compare=True)[0]).warnings
    assert [w for w in warnings if "no list" in w] == [
        f"{path}: 3 Input Dims arg(s) of host ops are no list (the first: null); each is shown as written (null as "
        "N/A, as an absent one) in those ops' input shape / type cells and the rows keyed by them"]


def test_two_device_memory_events_are_enough_for_the_pairing_note(tmp_path):
    """The pairing note needs two device events at an address, no more: the timesformer excerpt cut to its first
    device allocation (raw JSON, by time) and a copy of it 1 us later is one allocation followed by another with no
    free between; the allocation alone says nothing."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    rest = [e for e in ev if e.get("name") != "[memory]"]
    first = min((e for e in ev if e.get("name") == "[memory]" and e["args"]["Device Id"] >= 0
                 and e["args"]["Bytes"] > 0), key=lambda e: e["ts"])
    alone = _write(tmp_path, dict(doc, traceEvents=[*rest, first]), "alone")
    assert not any("device [memory] events" in w for w in load_profile(alone, build_options()[0]).warnings)
    path = _write(tmp_path, dict(doc, traceEvents=[*rest, first, dict(first, ts=first["ts"] + 1)]), "two")
    assert [w for w in load_profile(path, build_options()[0]).warnings if "device [memory] events" in w] == [
        f"{path}: of its device [memory] events, 1 allocation followed at the same address by another allocation "
        "with no free between (read as never released), as the original pairs them: a free lost, or a trace cut or "
        "merged?"]


def test_memory_events_at_one_time_pair_in_file_order(tmp_path):
    """Events at the same time are paired in file order (a stable sort by time), as the memory records pair them:
    AlexNet's excerpt with its first device allocation and its free (raw JSON) written at 12 addresses above every
    other, each twice over (the second time with twice the size), all 48 copies at one time in that order, closes
    every block and says nothing. An unstable sort by time put an allocation before another or before a free of
    another size."""
    doc = _doc(ROOT / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz")
    ev = doc["traceEvents"]
    dev = sorted((e for e in ev if e.get("name") == "[memory]" and e["args"]["Device Id"] >= 0), key=lambda e: e["ts"])
    alloc, free = next((a, f) for i, a in enumerate(dev) if a["args"]["Bytes"] > 0 for f in dev[i + 1:]
                       if f["args"]["Addr"] == a["args"]["Addr"])
    assert free["args"]["Bytes"] == -alloc["args"]["Bytes"]
    top, step = max(e["args"]["Addr"] for e in dev) + 4096, 1 << 20
    at = alloc["ts"] + 0.5
    assert at not in {e["ts"] for e in dev}
    tied = [dict(e, ts=at, args=dict(e["args"], Addr=top + k * step, Bytes=e["args"]["Bytes"] * times))
            for k in range(12) for times in (1, 2) for e in (alloc, free)]
    path = _write(tmp_path, dict(doc, traceEvents=[*ev, *tied]), "tied")
    assert not any("device [memory] events" in w for w in load_profile(path, build_options()[0]).warnings)


def test_input_types_alone_no_list_are_named_as_input_types(tmp_path):
    """Where only Input type args are no list, the note names Input type alone (the Input Dims' count is of its
    own values): the timesformer excerpt's first cpu_op with Input Dims (raw JSON) given Input type null."""
    doc = _doc(H100)
    ev = doc["traceEvents"]
    first = next(i for i, e in enumerate(ev) if e.get("cat") == "cpu_op" and "Input Dims" in e.get("args", {}))
    damaged = [dict(e, args=dict(e["args"], **{"Input type": None})) if i == first else e for i, e in enumerate(ev)]
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "types")
    warnings = load_profile(path, build_options(enable_operator_compare=True)[0]).warnings
    assert [w for w in warnings if "no list" in w] == [
        f"{path}: 1 Input type arg(s) of host ops are no list (the first: null); each is shown as written (null as "
        "N/A, as an absent one) in those ops' input shape / type cells and the rows keyed by them"]


def test_input_shape_counts_of_a_thousand_or_more_carry_separators():
    """The no-list note counts with thousands separators, as every loader count of 1,000+ (a404243): the counts
    and first value given to the note's writer (a 1,200-op trace's args are not among the excerpts)."""
    from msprof_compare.loaders.kineto import _odd_shapes_note

    assert _odd_shapes_note("t.json", [(1200, "null"), (3456, "1.5")], 1) == (
        "t.json: 1,200 Input Dims and 3,456 Input type arg(s) of host ops are no list (the first: null); each is "
        "shown as written (null as N/A, as an absent one) in those ops' input shape / type cells and the rows keyed "
        "by them")


def test_a_flow_id_started_twice_is_said_and_pairs_with_its_last_start(tmp_path):
    """A flow start given another start's id (fuzz66b): the key's last start wins, as in the original's flow dict,
    so the earlier launch's kernel was linked to the later launch's op without a word. Kineto starts each id once
    (no excerpt or sample repeats a start); an exact copy of a start changes no link and is not said."""
    doc = _doc(BERT)
    ev = doc["traceEvents"]
    ends = {e["id"] for e in _kernel_ends(ev)}
    first, later = [e for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g" and e["id"] in ends][3:5]
    assert (first["ts"], first["tid"]) != (later["ts"], later["tid"])
    moved = [dict(e, id=first["id"]) if e is later else e for e in ev]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=moved), "reused"), build_options()[0])
    said = [w for w in prof.warnings if "more than once" in w]
    assert said == [f"{tmp_path / 'reused.pt.trace.json'}: 1 flow id starts more than once, at different times or "
                    f"threads (the first: ac2g flow {first['id']}); each is paired with its last start, as the "
                    "original pairs them, so the work its earlier starts launched is linked to the later launch's op "
                    "or to none: ids reused, or traces merged?"]
    row = prof.flows[(prof.flows["id"] == str(first["id"])) & (prof.flows["replay"] == 0)]
    assert row["s_ts"].tolist() == [_ns(later["ts"])]  # the end of `first` pairs with the later start
    copied = [*ev, dict(first)]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=copied), "copied"), build_options()[0])
    assert not [w for w in prof.warnings if "more than once" in w]
    # two ids started twice: the first said is the one whose start comes first in the file (mutation audit mut66b)
    a, b, c, d = [e for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g" and e["id"] in ends][3:7]
    twice = [dict(e, id=a["id"]) if e is b else dict(e, id=c["id"]) if e is d else e for e in ev]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=twice), "twice"), build_options()[0])
    assert [w.split(": ", 1)[1].split(";")[0] for w in prof.warnings if "more than once" in w] == [
        f"2 flow ids start more than once, at different times or threads (the first: ac2g flow {a['id']})"]
    # the same start on another thread of the trace is another start (mutation audit mut66b: the thread unread)
    other = next(e["tid"] for e in ev if e.get("ph") == "X" and e.get("tid") not in (None, first["tid"]))
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=[*ev, dict(first, tid=other)]), "thread"),
                        build_options()[0])
    assert len([w for w in prof.warnings if "1 flow id starts more than once" in w]) == 1


@pytest.mark.parametrize("path", [BERT, *sorted((ROOT / "tests" / "data" / "kineto").glob("*.json*"))],
                         ids=lambda p: p.name[:24])
def test_real_traces_start_no_flow_id_twice_and_pair_every_fwdbwd_flow(path):
    warnings = load_profile(str(path), build_options()[0]).warnings
    assert not [w for w in warnings if "more than once" in w or "fwdbwd flow" in w]


def test_fwdbwd_flows_with_one_end_alone_or_without_an_id_are_said(tmp_path):
    """A fwdbwd flow's end dropped, another's start without its id (fuzz66b): the backward op at such an end was left
    out of its forward module's backward pseudo-module, unsaid. PyTorch writes both ends of each (every sample's pair),
    so the flows are counted where the operator comparison reads them; they are read as before (no pair, no row)."""
    alexnet = ROOT / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    doc = _doc(alexnet)
    ev = doc["traceEvents"]
    fb = [i for i, e in enumerate(ev) if e.get("cat") == "fwdbwd"]
    ends = [i for i in fb if ev[i]["ph"] == "f"]
    starts = [i for i in fb if ev[i]["ph"] == "s"]
    cut_end, idless = ends[3], starts[6]
    # an ac2g flow event without an id too: no fwdbwd one, not counted here (mutation audit mut66b)
    launch = next(i for i, e in enumerate(ev) if e.get("cat") == "ac2g" and e.get("ph") == "s")
    damaged = [{k: v for k, v in e.items() if k != "id"} if i in (idless, launch) else e
               for i, e in enumerate(ev) if i != cut_end]
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "fwdbwd")
    prof = load_profile(path, build_options()[0])
    # the keys with one end alone, in the order of their first event in the file, from the raw JSON
    phs: dict = {}
    for e in damaged:
        if e.get("cat") == "fwdbwd" and "id" in e:
            phs.setdefault(e["id"], set()).add(e["ph"])
    alone = [i for i, p in phs.items() if p != {"s", "f"}]
    assert len(alone) == 2 and ev[cut_end]["id"] in alone and ev[idless]["id"] in alone
    assert [w for w in prof.warnings if "fwdbwd flow" in w] == [
        f"{path}: 2 fwdbwd flows with one end alone (the first: id {alone[0]}) and 1 fwdbwd flow event without an id; "
        "PyTorch writes both ends of each, so the backward op such a flow would link to its forward op is placed in "
        "no backward module (the module comparison leaves it out of them): flows lost, or a trace cut?"]
    assert (prof.flows["cat"] == "fwdbwd").sum() == len(phs) - 2 == len(starts) - 2
    # only the module tree reads them, which the operator comparison builds: a run without it says nothing of them,
    # as of the Python functions (the pairs it reads are the same)
    quiet = load_profile(path, build_options(enable_profiling_compare=True)[0])
    assert not [w for w in quiet.warnings if "fwdbwd flow" in w]
    assert (quiet.flows["cat"] == "fwdbwd").sum() == len(phs) - 2
    assert quiet.backward_tid == prof.backward_tid == ev[ends[0]]["tid"]


def test_python_functions_of_another_ph_are_said(tmp_path):
    """Kineto writes Python functions as complete events ("X") alone, as kernels and host ops; an nn.Module span of
    another ph (none, "B") was left out of the module tree without a word (fuzz66b). It is left out as before and now
    counted, where the Python functions are read (the operator comparison)."""
    alexnet = ROOT / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    doc = _doc(alexnet)
    ev = doc["traceEvents"]
    mods = [i for i, e in enumerate(ev) if e.get("cat") == "python_function" and e["name"].startswith("nn.Module:")]
    odd = [{k: v for k, v in e.items() if k != "ph"} if i == mods[4] else dict(e, ph="B") if i == mods[9] else e
           for i, e in enumerate(ev)]
    path = _write(tmp_path, dict(doc, traceEvents=odd), "ph")
    prof = load_profile(path, build_options()[0])
    assert len(prof.python_functions) == sum(e.get("cat") == "python_function" and e.get("ph") == "X" for e in odd)
    assert len(prof.python_functions) == sum(e.get("cat") == "python_function" for e in ev) - 2
    said = [w for w in prof.warnings if "Python function event(s)" in w]
    assert said == [f'{path}: 2 Python function event(s) with a ph other than "X" (the first: \'\'); not read, so '
                    "they count in no figure"]
    assert not [w for w in load_profile(str(alexnet), build_options()[0]).warnings if "ph other than" in w]
    # a run that reads no Python function says nothing of them
    quiet = load_profile(path, build_options(enable_profiling_compare=True)[0])
    assert not [w for w in quiet.warnings if "Python function event(s)" in w]


def test_a_plain_launch_flow_ending_at_a_second_kernel_is_said(tmp_path):
    """A kernel's launch-flow end given another flow's id (fuzz66b, bert-small MI300X): that flow, started on a
    hipExtModuleLaunchKernel, then ends at two kernels, and the second was read as the call's graph replay, linked to
    its op (Cube / Vector counts moved) without a word. A graph launch's kernels share its id and stay unsaid."""
    mi300 = ROOT / "sample_data" / "bert-small_mi300.json.gz"
    doc = _doc(mi300)
    ev = doc["traceEvents"]
    ends = _kernel_ends(ev)
    moved, donor = ends[-1], ends[-4]
    starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    call = next(e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"
                and (e["pid"], e["tid"], e["ts"]) == tuple(starts[donor["id"]][k] for k in ("pid", "tid", "ts")))
    assert call["name"] == "hipExtModuleLaunchKernel"
    path = _write(tmp_path, dict(doc, traceEvents=[dict(e, id=donor["id"]) if e is moved else e for e in ev]), "reused")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "launch flow that ended" in w] == [
        f"{path}: 1 kernel, memcpy or memset event ends a launch flow that ended at another already, and whose start "
        f"is on a launch call that is no graph launch (the first: ac2g flow {donor['id']}, started on "
        f"{call['name']}); each is read as launched by that call, as a graph replay is: ids reused, or traces merged?"]
    fl = prof.flows[prof.flows["id"] == str(donor["id"])]  # both kernels read as launched by that call, as before
    assert sorted(fl["f_ts"].tolist()) == sorted(_ns(e["ts"]) for e in (donor, moved))
    assert set(fl["s_ts"].tolist()) == {_ns(call["ts"])}
    assert not [w for w in load_profile(str(mi300), build_options()[0]).warnings if "launch flow that ended" in w]
    # two such flows, on calls of two names: counted, the first in the file named with its call (mutation audit
    # mut66b: the last one's id or call was named)
    other = ends[-5]
    other_call = next(e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and (
        e["pid"], e["tid"], e["ts"]) == tuple(starts[other["id"]][k] for k in ("pid", "tid", "ts")))
    assert other_call["name"] != call["name"] and "graphlaunch" not in other_call["name"].lower()
    two = [dict(e, id=donor["id"]) if e is moved else dict(e, id=other["id"]) if e is ends[-2] else e for e in ev]
    path = _write(tmp_path, dict(doc, traceEvents=two), "two")
    assert [w.split(": ", 1)[1].split(";")[0] for w in load_profile(path, build_options()[0]).warnings
            if "launch flow that ended" in w] == [
        "2 kernel, memcpy or memset events end a launch flow that ended at another already, and whose start is on a "
        f"launch call that is no graph launch (the first: ac2g flow {other['id']}, started on {other_call['name']})"]
    # an op of the call's thread starting with it, and the call written twice, leave the call named (mutation audit
    # mut66b: the lookup among every op named the op; among the calls, a repeated one stopped the load)
    at = next(i for i, e in enumerate(ev) if e is call)
    op = dict(call, cat="cpu_op", name="aten::to", dur=call["dur"] + 1)
    crowded = [dict(e, id=donor["id"]) if e is moved else e for e in ev]
    crowded[at:at] = [op, dict(call)]
    path = _write(tmp_path, dict(doc, traceEvents=crowded), "crowded")
    assert [w.split("started on ")[1].split(")")[0] for w in load_profile(path, build_options()[0]).warnings
            if "launch flow that ended" in w] == [call["name"]]


@pytest.mark.parametrize("name", ["hta/tests/data/negative_queue_length_values_check/rank0.json.gz",
                                  "tracelens/tests/traces/inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
                                  "tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz"])
def test_graph_launches_ending_at_many_kernels_are_no_damage(samples, name):
    """The samples whose launch flows end at several kernels: their starts are graph launches or absent. From the
    raw JSON: the flow ids ending at two kernels or more (hta's rank 0: 49, 45 of them started on cudaGraphLaunch;
    vLLM's graph_execution: 25, sglang's decode: 1, none started), read as graph replays, none said."""
    ev = _doc(samples / name)["traceEvents"]
    kernels = {(e["pid"], e["tid"], e["ts"]) for e in ev
               if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    ends: dict = {}
    for e in ev:
        if e.get("ph") == "f" and e.get("cat") == "ac2g" and (e["pid"], e["tid"], e["ts"]) in kernels:
            ends[e["id"]] = ends.get(e["id"], 0) + 1
    many = {i for i, n in ends.items() if n > 1}
    calls = {(e["pid"], e["tid"], e["ts"]): e["name"] for e in ev
             if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"}
    started = [calls.get((e["pid"], e["tid"], e["ts"])) for e in ev
               if e.get("ph") == "s" and e.get("cat") == "ac2g" and e["id"] in many]
    # (ids ending at several kernels, those started, the ids the model reads as graph replays: hta's 4 ids of no
    # start whose call no correlation id finds are not)
    want = {"rank0.json.gz": (49, 45, 45), "graph_execution.json.gz": (25, 0, 25),
            "sglang_Qwen3-8B_decode.json.gz": (1, 0, 1)}[Path(name).name]
    assert (len(many), len(started)) == want[:2] and set(started) <= {"cudaGraphLaunch"}
    prof = load_profile(str(samples / name), build_options()[0])
    assert not [w for w in prof.warnings if "launch flow that ended" in w]
    replayed = set(prof.flows.loc[prof.flows["replay"] == 1, "id"])
    assert replayed <= {str(i) for i in many} and len(replayed) == want[2]


def test_memory_sizes_beyond_a_petabyte_are_no_size(tmp_path):
    """A [memory] Bytes of -2**63 (fuzz66b) read as a free: the 144 MiB allocation it replaced left its operator's
    Allocated Memory (233.96 MB -> 0) without a word. Beyond 1 PB either way a size is no size, as a Total Reserved
    reading is not: it reads as 0 (no record) and is counted."""
    alexnet = ROOT / "tests" / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    doc = _doc(alexnet)
    ev = doc["traceEvents"]
    mem = [i for i, e in enumerate(ev) if e.get("name") == "[memory]" and e["args"]["Device Id"] >= 0]
    allocs = [i for i in mem if ev[i]["args"]["Bytes"] > 0]
    odd = {allocs[3]: -(2**63), allocs[5]: 10**15 + 1}
    damaged = [dict(e, args=dict(e["args"], Bytes=odd[i])) if i in odd else e for i, e in enumerate(ev)]
    path = _write(tmp_path, dict(doc, traceEvents=damaged), "bytes")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "Bytes value" in w] == [
        f"{path}: 2 [memory] Bytes value(s) are not integers from -1 PB to 1 PB (the first: {-(2**63)}); those "
        "events read as size 0 (they make no memory record)"]
    want = [0 if i in odd else ev[i]["args"]["Bytes"] for i in mem]
    dev = prof.memory[prof.memory["device_id"] >= 0]
    assert dev["bytes"].tolist() == want
    assert not [w for w in load_profile(str(alexnet), build_options()[0]).warnings if "Bytes value" in w]
    frees = [i for i in mem if ev[i]["args"]["Bytes"] < 0]
    ends = {allocs[3]: 10**15, frees[3]: -(10**15)}  # 1 PB either way is a size (mutation audit mut66b: -1 PB)
    edge = [dict(e, args=dict(e["args"], Bytes=ends[i])) if i in ends else e for i, e in enumerate(ev)]
    prof = load_profile(_write(tmp_path, dict(doc, traceEvents=edge), "edge"), build_options()[0])
    assert not [w for w in prof.warnings if "Bytes value" in w]
    assert prof.memory[prof.memory["device_id"] >= 0]["bytes"].tolist() == [ends.get(i, ev[i]["args"]["Bytes"])
                                                                            for i in mem]
