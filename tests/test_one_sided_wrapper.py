"""A wrapper on one side only: reference pair 4's GPU side (hta's PARAM AlexNet) has its every op under PARAM's
``[param|cuda]`` annotation, against the NPU level-1 export's framework ops, so the operator level paired nothing
(match rate 0 %) and the two-sided wrapper note (``step_wrappers``), which needs a wrapper on each side, said
nothing. Figures here come from the raw trace (kernels by correlation id) and the original's workbook of the pair,
never from our sheets."""

from __future__ import annotations

import gzip
import json
import logging
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from xlsxutil import read_xlsx

from msprof_compare.api import compare
from msprof_compare.compare.summary_notes import ONE_SIDED_MIN_OPS, one_sided_wrapper, unexplained_note

PAIR = "4-gpu-alexnet-vs-npu-text-l1"
GPU = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
DEVICE = ("kernel", "gpu_memcpy")  # the GPU kernel events (reference-2 §2.1)


def _ns(v: Decimal) -> int:
    return int(v * 1000)


def _trace(samples: Path) -> dict:
    return json.loads(gzip.open(samples / GPU).read(), parse_float=Decimal)


def _launched_inside(events: list[dict], spans: list[dict]) -> int:
    """ns of the kernels and copies whose runtime call (same correlation id) starts inside one of ``spans``."""
    calls = {e["args"]["correlation"]: _ns(e["ts"]) for e in events
             if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    edges = [(_ns(s["ts"]), _ns(s["ts"]) + _ns(s["dur"])) for s in spans]
    return sum(_ns(e["dur"]) for e in events
               if e.get("ph") == "X" and e.get("cat") in DEVICE and e["args"].get("correlation") in calls
               and any(lo <= calls[e["args"]["correlation"]] <= hi for lo, hi in edges))


def _reference_statistic(reference_outputs: Path):
    return read_xlsx(reference_outputs / PAIR / "performance_comparison_result.xlsx",
                     sheet_name="OperatorCompareStatistic", header=2).set_index("Operator Name")


def test_pair4_one_sided_wrapper_is_found_with_its_figures(samples, reference_outputs):
    ev = _trace(samples)["traceEvents"]
    (outer,) = [e for e in ev if e.get("ph") == "X" and e.get("name") == "[param|cuda]"]
    held = _launched_inside(ev, [outer])
    every = _launched_inside(ev, [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"])
    assert held == every == 66_195_000  # every kernel and copy of the trace launched inside it
    stat = _reference_statistic(reference_outputs)
    framework = [n for n in stat.index if n.startswith(("aten::", "autograd::"))]
    ops = int(stat.loc[framework, "Comparison Operator Number"].sum())
    assert ops == 91 and "[param|cuda]" not in framework
    assert stat.loc["[param|cuda]", "Comparison Operator Number"] == 0
    res = compare(str(samples / GPU), str(samples / NPU))
    found = res.frames["contributors"].attrs["one_sided_wrapper"]
    assert found[:2] == ("base", "[param|cuda]") and found[4] == ops
    assert found[2:4] == pytest.approx((held / 1e6, every / 1e6), abs=1e-9)
    assert "wrappers" not in res.frames["contributors"].attrs  # the two-sided note stays out
    note = unexplained_note(res.frames["contributors"], res.frames["waterfall"])
    assert note.startswith("the base side's operator device time lies under one top-level op that the comparison "
                           "side has no op of (an annotation around the work is one), against the comparison side's "
                           f"{ops} framework top-level ops (aten::, autograd::), so the operator level compares that "
                           "op whole, against nothing, and pairs none of the ops inside it (base [param|cuda] "
                           f"{held / 1e6:.3f} ms, 100.0% of the side's {every / 1e6:.3f} ms): ")
    # the operator match-rate check's advice: the wrapper, not "try the op_name_map option"
    detail = res.guards.set_index("Check").loc["operator match rate", "Detail"]
    assert detail.endswith("; the base side's operator device time lies under [param|cuda] (100.0%), one top-level "
                           "op that the comparison side has no op of, so none of the ops inside it is paired: to "
                           "compare them, run again with the transparent_op option: --transparent_op '[param|cuda]'")
    assert "op_name_map" not in detail
    # the sides swapped: the wrapper is the comparison side's
    swapped = compare(str(samples / NPU), str(samples / GPU)).frames["contributors"].attrs["one_sided_wrapper"]
    assert swapped[:2] == ("comparison", "[param|cuda]") and swapped[2:] == found[2:]


def test_pair4_advice_run_pairs_the_ops_inside(samples, reference_outputs, tmp_path, caplog):
    """The note's advice followed: the trace without the annotation's event. Its ops are top-level then, and the
    operator level pairs aten::to (the batch's host-to-device copies): base 55.503 ms (the copies launched inside
    aten::to, from the raw trace) against the original's comparison row, 0.844977 ms of 4 ops."""
    doc = _trace(samples)
    ev = doc["traceEvents"]
    doc["traceEvents"] = [e for e in ev if e.get("name") != "[param|cuda]"]
    assert len(doc["traceEvents"]) == len(ev) - 1
    edited = tmp_path / "alexnet_without_param_cuda.pt.trace.json"
    edited.write_text(json.dumps(doc, default=str), encoding="utf-8")
    to = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"] == "aten::to"]
    copies = _launched_inside(ev, to)
    assert copies == 55_503_000
    want = _reference_statistic(reference_outputs).loc["aten::to"]
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(edited), str(samples / NPU))
    assert "one_sided_wrapper" not in res.frames["contributors"].attrs
    assert res.guards.set_index("Check").loc["operator match rate", "Detail"].endswith(
        "; different models? try the op_name_map option")  # 4 of 108 base ops paired: another workload's shape
    stat = res.sheet("OperatorCompareStatistic").set_index("Operator Name")
    assert "[param|cuda]" not in stat.index
    row = stat.loc["aten::to"]
    assert row["Base Device Duration(ms)"] == pytest.approx(copies / 1e6, abs=1e-9)
    assert (row["Comparison Device Duration(ms)"], row["Comparison Operator Number"]) == pytest.approx(
        (want["Comparison Device Duration(ms)"], want["Comparison Operator Number"]), abs=1e-6)
    detail = res.sheet("OperatorCompare")
    both = detail[detail.iloc[:, 1].notna() & detail.iloc[:, 6].notna()]
    assert both.iloc[:, 1].tolist() == both.iloc[:, 6].tolist() == ["aten::to"] * 4  # 4 comparison aten::to ops
    assert any(r.getMessage().startswith("Top-level operators matched: 4/") for r in caplog.records)
    # "compared by name" under --disable_details too, which pairs no operator: the statistic row is by name
    plain = compare(str(edited), str(samples / NPU), disable_details=True)
    assert plain.sheet("OperatorCompareStatistic").set_index("Operator Name").loc["aten::to"].tolist() == row.tolist()


def _rule(names, base, comp, base_n, comp_n):
    return one_sided_wrapper(names, (np.array(base, float), np.array(comp, float)),
                             (np.array(base_n, float), np.array(comp_n, float)))


def test_one_sided_rule_holds_only_where_each_condition_does():
    many = ONE_SIDED_MIN_OPS
    names = ["[wrap]", "aten::mm", "autograd::engine::evaluate_function: MmBackward0", "DDP.forward"]
    assert _rule(names, [9.0, 1.0, 0, 0], [0, 5.0, 3.0, 2.0], [1, 1, 0, 0], [0, many - 1, 1, 1]) == (
        "base", "[wrap]", 9.0, 10.0, many)  # 90% exactly; the framework ops of both framework names
    # under 90%
    assert _rule(names, [8.9, 1.1, 0, 0], [0, 5.0, 3.0, 2.0], [1, 1, 0, 0], [0, many - 1, 1, 1]) is None
    # the other side has an op of that name
    assert _rule(names, [9.0, 1.0, 0, 0], [1.0, 5.0, 3.0, 2.0], [1, 1, 0, 0], [1, many - 1, 1, 1]) is None
    # too few framework ops on the other side (DDP.forward is none)
    assert _rule(names, [9.0, 1.0, 0, 0], [0, 5.0, 3.0, 2.0], [1, 1, 0, 0], [0, many - 2, 1, 5]) is None
    # a framework op holding the side's time is no wrapper (AccumulateGrad with its all-reduce)
    assert _rule(names[1:3], [9.5, 0.5], [1.0, 5.0], [1, 1], [many, 1]) is None
    # the comparison side's wrapper
    assert _rule(names, [0, 5.0, 3.0, 2.0], [9.0, 1.0, 0, 0], [0, many, 1, 1], [1, 1, 0, 0]) == (
        "comparison", "[wrap]", 9.0, 10.0, many + 1)
    # a blank count cell (NaN) among the framework rows counts as none, not as a failed conversion
    assert _rule(names, [9.0, 1.0, 0, 0], [0, 5.0, 3.0, 2.0], [1, 1, 0, 0], [0, many, np.nan, 1]) == (
        "base", "[wrap]", 9.0, 10.0, many)
    # a wrapper on each side is the two-sided note's (step_wrappers), not this one's
    two = ["[a]", "[b]", "aten::mm"]
    assert _rule(two, [9.5, 0, 0.5], [0, 9.5, 0.5], [1, 0, many], [0, 1, many]) is None


def test_one_sided_rule_takes_the_two_sided_answer_given():
    """The Summary hands ``step_wrappers``' answer in (``operator_wrappers``), where the rule tested it again."""
    many = ONE_SIDED_MIN_OPS
    names = ["[wrap]", "aten::mm", "autograd::engine::evaluate_function: MmBackward0", "DDP.forward"]
    amounts = (np.array([9.0, 1.0, 0, 0]), np.array([0, 5.0, 3.0, 2.0]))
    counts = (np.array([1.0, 1, 0, 0]), np.array([0.0, many - 1, 1, 1]))
    assert one_sided_wrapper(names, amounts, counts, two_sided=None) == ("base", "[wrap]", 9.0, 10.0, many)
    # a two-sided finding given: the note is the two-sided one's, as where the rule finds it itself
    assert one_sided_wrapper(names, amounts, counts, two_sided=("[wrap]", 9.0, "[other]", 9.0)) is None


def test_summary_reads_the_statistic_rows_once(samples, monkeypatch):
    """NPU pair 1 (level 1 vs level 2, operator contributors): one read of OperatorCompareStatistic's rows for both
    wrapper notes, where the two-sided and the one-sided note read them once each."""
    from msprof_compare.compare import summary_notes

    reads = []
    real = summary_notes._statistic_rows
    monkeypatch.setattr(summary_notes, "_statistic_rows", lambda *a: reads.append(1) or real(*a))
    res = compare(str(samples / NPU), str(samples / NPU.replace("level1", "level2")))
    assert res.frames["contributors"]["Level"].iloc[0] == "operator"
    assert len(reads) == 1


#: A one-sided wrapper with memory recorded on both sides (pair 4's base has none): tracelens' SGLang decode capture,
#: every op under its ``capture_32_DECODE`` annotation, against the BERT H100 trace's framework ops
SGLANG = "tracelens/tests/traces/inference/sglang_decode/capture_traces/bs_32_rank0.json.gz"
BERT = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
CAPTURE = "capture_32_DECODE"
#: The memory contributors' note of SGLANG against BERT: 189.77 MB all under the capture annotation and the BERT
#: trace's 104 framework top-level ops, both read from the raw traces in
#: test_memory_contributors_under_a_one_sided_wrapper_say_so_and_the_option_opens_them below.
CAPTURE_NOTE = (
    "the base side's allocated memory lies under one top-level op that the comparison side has no op of (base "
    f"{CAPTURE} 189.77 MB, 100.0% of the side's 189.77 MB), against the comparison side's 104 framework "
    "top-level ops (aten::, autograd::): the memory sheets pair the operators as the operator level does, so "
    "they compare that op whole, against nothing, and pair none of the ops inside it: to compare them, run again "
    f"with the transparent_op option, --transparent_op '{CAPTURE}'")


def _allocated_mb(events: list[dict], span: dict | None = None) -> float:
    """MB of the device allocations (``[memory]`` events of positive Bytes, Device Id >= 0) inside ``span``, or of
    the whole trace."""
    lo, hi = (span["ts"], span["ts"] + span["dur"]) if span else (Decimal("-Infinity"), Decimal("Infinity"))
    return sum(e["args"]["Bytes"] for e in events if e.get("name") == "[memory]" and e["args"].get("Bytes", 0) > 0
               and e["args"].get("Device Id", -1) >= 0 and lo <= e["ts"] <= hi) / 2**20


def _framework_top_ops(events: list[dict]) -> int:
    """The trace's top-level aten:: / autograd:: ops, nested by start and end by hand (threads ignored, as the op
    tree does), a ProfilerStep# marker's children top-level."""
    ops = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation",
                                                                               "cuda_runtime", "cuda_driver")
                  and not e["name"].startswith("ProfilerStep#")), key=lambda e: (e["ts"], -e["dur"]))
    top, end = [], None
    for e in ops:
        if end is None or e["ts"] > end:
            top.append(e)
            end = e["ts"] + e["dur"]
    return sum(e["name"].startswith(("aten::", "autograd::")) for e in top)


def test_memory_contributors_under_a_one_sided_wrapper_say_so_and_the_option_opens_them(samples, tmp_path):
    """The memory sheets pair the operators as the operator level does, so a one-sided wrapper holding a side's
    memory was the memory contributors' one row, against nothing, without a word: the note under them says why and
    gives the flag, which makes the memory sheets those of the trace without the annotation's event."""
    from msprof_compare.compare.memory_summary import contributors_note

    doc = json.loads(gzip.open(samples / SGLANG).read(), parse_float=Decimal)
    ev = doc["traceEvents"]
    (outer,) = [e for e in ev if e.get("ph") == "X" and e.get("name") == CAPTURE and e.get("cat") == "user_annotation"]
    held, every = _allocated_mb(ev, outer), _allocated_mb(ev)
    assert held == every == 189.7734375
    ops = _framework_top_ops(json.loads(gzip.open(samples / BERT).read(), parse_float=Decimal)["traceEvents"])
    assert ops == 104
    res = compare(str(samples / SGLANG), str(samples / BERT))
    contrib = res.frames["memory_contributors"]
    assert contrib["Name"].tolist() == [CAPTURE]
    side, name, mb, total, n = contrib.attrs["one_sided_wrapper"]
    assert (side, name, n) == ("base", CAPTURE, ops) and (mb, total) == pytest.approx((held, every), abs=1e-6)
    assert contributors_note(contrib) == CAPTURE_NOTE
    # the flag: the memory sheets of the trace without the annotation's event, the ops inside it paired by name
    kept = [e for e in ev if e is not outer]
    edited = tmp_path / "sglang_bs32_without_capture.json"
    edited.write_text(json.dumps({**doc, "traceEvents": kept}, default=str), encoding="utf-8")
    opened = compare(str(samples / SGLANG), str(samples / BERT), transparent_op=CAPTURE)
    removed = compare(str(edited), str(samples / BERT))
    for sheet in ("MemoryCompareStatistic", "MemoryCompare"):
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    stat = opened.sheet("MemoryCompareStatistic").set_index("Operator Name")
    assert CAPTURE not in stat.index
    assert stat["Base Allocated Memory(MB)"].sum() == pytest.approx(held, abs=1e-6)
    after = opened.frames["memory_contributors"]
    assert "one_sided_wrapper" not in after.attrs and contributors_note(after) == ""
    assert after["Name"].tolist() == removed.frames["memory_contributors"]["Name"].tolist()


def test_memory_note_holds_under_the_drill_down(samples):
    """The memory note was left out of every ``--max_kernel_num`` run, whose rows may be ops the drill-down reached
    inside pairs (``test_graph_replay.py``'s vLLM pair keeps it out). The drill-down opens pairs of two ops, never an
    op of one side: ``capture_32_DECODE`` is still compared whole, against nothing, with max_kernel_num 10 (its row
    holds the raw JSON's allocations inside it), so the note, with its figures, is given as without the option."""
    from msprof_compare.compare.memory_summary import contributors_note

    doc = json.loads(gzip.open(samples / SGLANG).read(), parse_float=Decimal)
    ev = doc["traceEvents"]
    (outer,) = [e for e in ev if e.get("ph") == "X" and e.get("name") == CAPTURE and e.get("cat") == "user_annotation"]
    held, every = _allocated_mb(ev, outer), _allocated_mb(ev)
    ops = _framework_top_ops(json.loads(gzip.open(samples / BERT).read(), parse_float=Decimal)["traceEvents"])
    res = compare(str(samples / SGLANG), str(samples / BERT), max_kernel_num=10)
    row = res.sheet("MemoryCompareStatistic").set_index("Operator Name").loc[CAPTURE]
    assert row["Base Allocated Memory(MB)"] == pytest.approx(held, abs=1e-6) and row["Comparison Operator Number"] == 0
    contrib = res.frames["memory_contributors"]
    side, name, mb, total, n = contrib.attrs["one_sided_wrapper"]
    assert (side, name, n) == ("base", CAPTURE, ops) and (mb, total) == pytest.approx((held, every), abs=1e-6)
    assert contributors_note(contrib).startswith(
        f"the base side's allocated memory lies under one top-level op that the comparison side has no op of (base "
        f"{CAPTURE} 189.77 MB, 100.0% of the side's 189.77 MB), against the comparison side's {ops} framework ")
    assert contributors_note(contrib).endswith(f"--transparent_op '{CAPTURE}'")


#: vLLM's full-graph decode step (every op under one annotation named after its batch, its device time replayed by
#: one hipGraphLaunch) against xDiT Flux's step (one annotation, thousands of framework ops inside)
DECODE = "tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"
XDIT = "tracelens/tests/traces/inference/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz"


def test_time_note_is_left_out_where_the_drill_down_reached_inside_a_pair(samples):
    """The time counterpart of the memory note's guard (``optree.compared_whole``): with the two step wrappers paired
    (--op_name_map) and drilled into (--max_kernel_num 10), the decode side's time lies under its hipGraphLaunch,
    an op inside the pair that xDiT has no op of. The one-sided rule holds on those rows, and the note said that
    hipGraphLaunch was "one top-level op ... compared whole, against nothing", with --transparent_op
    'hipGraphLaunch' as the advice (and the match-rate check gave it too): it is no top-level op (the annotation
    holds every op of the trace) and a graph launch has no op inside to open. Figures from the raw JSON."""
    from msprof_compare.compare.summary_notes import _statistic_rows, one_sided_note

    ev = json.loads(gzip.open(samples / DECODE).read(), parse_float=Decimal)["traceEvents"]
    (wrapper,) = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime")]
    lo, hi = wrapper["ts"], wrapper["ts"] + wrapper["dur"]
    assert all(lo <= e["ts"] and e["ts"] + e["dur"] <= hi for e in ops)  # hipGraphLaunch among them: not top-level
    (launch,) = [e for e in ops if e["name"] == "hipGraphLaunch"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") in DEVICE]  # kernels and copies
    held = sum(_ns(e["dur"]) for e in kernels if e["args"]["correlation"] == launch["args"]["correlation"])
    total = sum(_ns(e["dur"]) for e in kernels)
    assert (held, total) == (10_388_482, 10_717_708)
    xdit = json.loads(gzip.open(samples / XDIT).read(), parse_float=Decimal)["traceEvents"]
    (other,) = [e["name"] for e in xdit if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                and e["name"].startswith("execute_")]
    res = compare(str(samples / DECODE), str(samples / XDIT), disable_module=True,
                  op_name_map={wrapper["name"]: other}, max_kernel_num=10)
    sheet = next(s for s in res.sheets if s.name == "OperatorCompareStatistic")
    found = one_sided_wrapper(*_statistic_rows(None, [sheet]))  # the rule holds on the drilled rows
    assert found[:2] == ("base", "hipGraphLaunch")
    assert found[2:4] == pytest.approx((held / 1e6, total / 1e6), abs=1e-9)
    contrib = res.frames["contributors"]
    assert "one_sided_wrapper" not in contrib.attrs and one_sided_note(contrib) == ""
    detail = res.guards.set_index("Check").loc["operator match rate", "Detail"]
    assert "transparent_op" not in detail and "hipGraphLaunch" not in detail
