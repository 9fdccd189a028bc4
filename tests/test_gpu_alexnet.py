"""The same-workload GPU-vs-NPU pair: AlexNet training step 50 recorded on an H200 with
tools/record_gpu_alexnet.py (tests/data/kineto/README.md) against the msinsight level-1 NPU run of the
same training loop. Figures recomputed from the raw trace with plain Python."""

from __future__ import annotations

import gzip
import json
import logging
import zipfile
from collections import Counter
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest
from logutil import blocks, split_idle
from spans import union

from msprof_compare.api import compare
from msprof_compare.compare.api_stats import host_wait_note
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data" / "kineto"
GPU = DATA / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / \
    "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
WITH_STACK = "If you want to see the operator's call stack, you must enable with_stack switch."


def _without_wait_note(notes: list[str]) -> list[str]:
    """The notes under the table but a text export's zero Wait Time line (tests/test_mindspore_user_leftovers.py
    pins it), which every level-1/2 text side has and which is no part of what this file checks."""
    return [n for n in notes if "is that of the HCCL plane that waits least" not in n]


@pytest.fixture(scope="module")
def events() -> list[dict]:
    # exact decimals: the trace's µs timestamps are epoch-scale with 3 decimals
    with gzip.open(GPU, "rt") as fh:
        return json.load(fh, parse_float=Decimal)["traceEvents"]


def _ns(v) -> int:
    return int(Decimal(v) * 1000)


def _length(intervals: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in intervals)


def _minus(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Length of union ``a`` not covered by union ``b`` (both disjoint and sorted)."""
    total = 0
    for s, e in a:
        cut = sum(max(0, min(e, be) - max(s, bs)) for bs, be in b)
        total += e - s - cut
    return total


def test_loader_counts_match_the_raw_trace(events: list[dict]) -> None:
    opts = build_options(enable_operator_compare=True, enable_memory_compare=True)[0]
    p = load_profile(str(GPU), opts)
    x = Counter(e.get("cat") for e in events if e.get("ph") == "X")
    assert p.kernels["cat"].value_counts().to_dict() == {
        "kernel": x["kernel"], "gpu_memcpy": x["gpu_memcpy"], "gpu_memset": x["gpu_memset"]} == {
        "kernel": 162, "gpu_memcpy": 21, "gpu_memset": 7}
    assert p.ops["cat"].value_counts().to_dict() == {c: x[c] for c in ("cpu_op", "cuda_runtime", "user_annotation",
                                                                         "cuda_driver")}
    assert len(p.python_functions) == x["python_function"] == 892
    tids = Counter(e["tid"] for e in events if e.get("cat") == "python_function")
    assert p.python_functions["tid"].value_counts().to_dict() == dict(tids)
    assert len(p.memory) == sum(1 for e in events if e.get("name") == "[memory]") == 236
    starts = {e["id"] for e in events if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    ends = {e["id"] for e in events if e.get("cat") == "ac2g" and e.get("ph") == "f"}
    assert (p.flows["cat"] == "ac2g").sum() == len(starts & ends)


def test_gpu_breakdown_recomputed(events: list[dict]) -> None:
    kernels = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
               if e.get("ph") == "X" and e.get("cat") == "kernel"]
    memcpy = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
              if e.get("ph") == "X" and e.get("cat") == "gpu_memcpy"]
    assert not any("nccl" in e["name"].lower() for e in events if e.get("cat") == "kernel")  # one rank
    comp = union(kernels)
    e2e = max(e for _, e in kernels + memcpy) - min(s for s, _ in kernels + memcpy)
    bd = gpu_breakdown(load_profile(str(GPU), build_options(enable_profiling_compare=True)[0]))
    assert (bd.computing_ns, bd.computing_count) == (_length(comp), 162)
    assert bd.e2e_ns == e2e
    assert bd.free_ns == e2e - _length(comp)
    # the memcpys outside every kernel are the "SDMA" part of free time
    res = compare(str(GPU), str(GPU), enable_profiling_compare=True).sheet("OverallMetrics").set_index("Index")
    assert res.loc["\tSDMA", "Duration(ms)"] == pytest.approx(_minus(union(memcpy), comp) / 1e6, abs=1e-9)
    assert res.loc["Computing Time", "Duration(ms)"] == pytest.approx(_length(comp) / 1e6, abs=1e-9)
    assert res.loc["E2E Time", "Duration(ms)"] == pytest.approx(e2e / 1e6, abs=1e-9)
    peak = max(int(e["args"]["Total Reserved"]) for e in events if e.get("name") == "[memory]")
    assert bd.memory_gb == pytest.approx(peak / 1024 ** 3) and f"{bd.memory_gb:.2f}G" == "1.66G"


@pytest.fixture(scope="module")
def samples_dir_or_skip():
    if not NPU.is_dir():
        pytest.skip("shared samples not found")
    return NPU


def test_gpu_vs_npu_same_workload(samples_dir_or_skip, caplog: pytest.LogCaptureFixture) -> None:
    """The same training loop on both sides: the one check that warns is the world size, 1 GPU rank against
    the NPU job's 8 (the shapes of Kineto and torch_npu are written differently but compared alike), every
    module matched, and no with_stack warning for a trace recorded with_stack (PyTorch 2 frames give the op
    call stacks)."""
    caplog.set_level(logging.INFO, logger="msprof-analyze")
    res = compare(str(GPU), str(NPU))
    assert res.sheet_names == ["Summary", "OverallMetrics", "CommunicationCompare", "ModuleCompareStatistic",
                               "ModuleCompare", "MemoryCompareStatistic", "MemoryCompare", "ApiCompare"]
    g = res.guards.set_index("Check")
    assert g.index[g["Status"] == "warn"].tolist() == ["world size"]
    assert g.loc["world size", ["Base", "Comparison"]].tolist() == [1, "at least 8"]
    # the 10 heaviest shaped cpu ops of each side found on the other (15 names), with a dims text on both sides:
    # 12 (8 from the GPU side's top 10 alone), counted with pandas over the loaded ops, independently of the guard
    assert g.loc["input shapes of top operators", ["Status", "Detail"]].tolist() == [
        "ok", "12 heaviest operators found on both sides"]
    (warned,) = blocks(caplog.messages, "The two profiles may not be the same workload")
    assert [m.split(" (")[0] for m in warned[1:]] == ["world size"]
    # the line says what the difference means and what to do, before where the sizes come from
    line = next(m for m in caplog.messages if m.startswith("  - world size"))
    assert line.startswith("  - world size (base 1, comparison at least 8): jobs of different world sizes run "
                           "different collectives, so ") and ": compare runs of the same world size; base side: read " \
        "from the trace's distributedInfo.world_size; comparison side: " in line
    assert WITH_STACK not in caplog.messages
    assert "Modules matched: 55/55 base, 55/55 comparison" in caplog.messages
    detail = res.sheet("ModuleCompare")
    conv = detail[(detail["Operator Name"] == "aten::conv2d") & detail["Base Call Stack"].notna()].iloc[0]
    base_frames = conv["Base Call Stack"].split(";\n")
    npu_frames = [f.rsplit("/torch/", 1)[-1] for f in conv["Comparison Call Stack"].split(";\r\n")]
    # innermost first on both sides: conv.py's _conv_forward, then forward, then Module._call_impl
    assert [f.split("(")[0] for f in base_frames[1:4]] == ["torch/nn/modules/conv.py"] * 2 + \
        ["torch/nn/modules/module.py"]
    assert [f.split("(")[0] for f in npu_frames[:3]] == ["nn/modules/conv.py"] * 2 + ["nn/modules/module.py"]
    total = detail[detail["Operator Name"] == "TOTAL"]["Base Call Stack"]
    assert not total.str.contains("threading.py").any()  # the pin-memory thread's frames stay out
    console = res.console_table()
    assert "| GPU |" in console and "| NPU |" in console


def test_profiling_only_guard_on_framework_names(samples_dir_or_skip) -> None:
    """Without the operator comparison the match-rate check is a Jaccard index of the framework
    operator names: 64 of the 82 aten::/autograd:: names are shared (78.0%; all names: 50.0%, which
    warned)."""
    g = compare(str(GPU), str(NPU), enable_profiling_compare=True).guards.set_index("Check")
    row = g.loc["operator match rate"]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("ok", 64 / 82, 64 / 82)


ACCUMULATE = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"


#: How the note's part on the operators net of communication opens (summary_notes.net_of_communication_note).
NET_LEAD = "net of the collective communication inside them, the operators whose device time changed most are "


def _outermost(ops: list[tuple[int, int, int, str]]) -> dict[int, list[tuple[int, int, str]]]:
    """Per thread, the host ops no other op of the thread encloses, (start, end, name) in time order: the top
    layer, a ProfilerStep# annotation seen through (OperatorCompareStatistic's rows are its children)."""
    by_tid: dict[int, list] = {}
    for tid, start, end, name in sorted(ops, key=lambda o: (o[0], o[1], -o[2])):
        if name.startswith("ProfilerStep#"):
            continue
        tops = by_tid.setdefault(tid, [])
        if not tops or start >= tops[-1][1]:
            tops.append((start, end, name))
    return by_tid


def net_cut(net: list[tuple[str, int]], gross: int) -> list[tuple[str, int]]:
    """``summary.net_changes``' cut, by hand: the (name, ns) changes ``net`` (largest first) that explain 80% of
    ``gross``, their summed size, at most 5."""
    picked, covered = [], 0
    for name, d in net:
        picked.append((name, d))
        covered += abs(d)
        if covered >= 0.8 * gross:
            break
    return picked[:5]


def _device_ns_by_top_op(events: list[dict], host_cats: tuple[str, ...], flow_cat: str,
                         device: dict[tuple, int]) -> Counter:
    """ns of the device tasks ``device`` ((pid, tid, ts ns) -> dur ns) each flow of ``flow_cat`` leads to, per name
    of the top-layer host op (``host_cats``) its start lies in: raw events, no msprof_compare code."""
    def ns(v) -> int:
        return int((Decimal(str(v)) * 1000).to_integral_value())

    tops = _outermost([(e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in events
                       if e.get("ph") == "X" and e.get("cat") in host_cats])
    starts = {e["id"]: e for e in events if e.get("cat") == flow_cat and e.get("ph") == "s"}
    out: Counter = Counter()
    for f in events:
        if f.get("cat") != flow_cat or f.get("ph") != "f" or f["id"] not in starts:
            continue
        task = device.get((f["pid"], f["tid"], ns(f["ts"])))
        s = starts[f["id"]]
        owner = [n for a, b, n in tops.get(s["tid"], []) if a <= ns(s["ts"]) <= b]
        if task is not None and owner:
            out[owner[0]] += task
    return out


def _net_of_communication_by_raw_files() -> list[tuple[str, int]]:
    """The GPU -> NPU pair's operators ranked by device-time change net of the HCCL ops inside them, by the raw
    files: the GPU trace's kernels and memory copies (OperatorCompareStatistic counts no memset: with them
    DistributedDataParallel.forward read 1.014942 ms, its row 1.011614) through the ac2g launch flows, the NPU
    trace_view.json's Ascend Hardware and HCCL tasks through the async_npu flows; (name, ns), largest first, those
    explaining 80% of the absolute change so reckoned, at most 5."""
    def ns(v) -> int:
        return int((Decimal(str(v)) * 1000).to_integral_value())

    gpu = _gpu_events()
    kernels = {(e["pid"], e["tid"], ns(e["ts"])): ns(e["dur"]) for e in gpu
               if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")}
    base = _device_ns_by_top_op(gpu, ("cpu_op", "user_annotation"), "ac2g", kernels)
    npu = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    procs = {e["pid"]: e["args"]["name"] for e in npu if e.get("ph") == "M" and e.get("name") == "process_name"}
    tasks = {name: {(e["pid"], e["tid"], ns(e["ts"])): ns(e["dur"]) for e in npu
                    if e.get("ph") == "X" and procs.get(e["pid"]) == name} for name in ("Ascend Hardware", "HCCL")}
    comp = _device_ns_by_top_op(npu, ("cpu_op",), "async_npu", {**tasks["Ascend Hardware"], **tasks["HCCL"]})
    hccl = _device_ns_by_top_op(npu, ("cpu_op",), "async_npu", tasks["HCCL"])
    assert set(hccl) == {ACCUMULATE}  # the all-reduce, the one communication any operator holds
    net = sorted(((n, (comp[n] - hccl[n]) - base[n]) for n in set(base) | set(comp)), key=lambda r: -abs(r[1]))
    gross = sum(abs(d) for _, d in net)
    assert gross >= 0.03 * sum(abs(comp[n] - base[n]) for n in set(base) | set(comp))  # material (NET_MATERIAL_SHARE)
    return net_cut(net, gross)


def test_net_of_communication_names_the_computing_that_moved(samples_dir_or_skip, tmp_path: Path) -> None:
    """GPU AlexNet -> NPU text export: AccumulateGrad's +106 ms all-reduce is the one contributor, so the NPU's
    slower computing was in no text but the workbook's rows. The note now ends with the operators ranked by their
    change net of the communication inside them, figures by the raw files: on the console, in the JSON (note, its
    lines and summary.contributors_net_of_communication) and on the Summary sheet; the contributors, their JSON and
    the gate's message are as before."""
    want = _net_of_communication_by_raw_files()
    assert [n for n, _ in want] == ["Optimizer.step#SGD.step", "DistributedDataParallel.forward",
                                    "autograd::engine::evaluate_function: ConvolutionBackward0", "aten::to",
                                    "torch.distributed.ddp.reducer::copy_bucket_to_grad"]
    shown = ", ".join(f"{n} {Decimal(d) / 10**6:+.3f} ms" for n, d in want)
    assert shown.startswith("Optimizer.step#SGD.step +1.572 ms, DistributedDataParallel.forward +1.307 ms")
    res = compare(str(GPU), str(NPU), fail_on_regression=5.0)
    assert res.contributors["Name"].tolist() == [ACCUMULATE]  # the table: unchanged
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    summary = doc["summary"]
    # then the note on Free: Other's growth (test_gpu_to_npu_user.py::test_free_other_growth_is_said_with_...)
    note, idle = split_idle(summary["contributors_note"])
    assert note.endswith(f"; {NET_LEAD}{shown}") and idle.startswith("Free: Other +17.902 ms")
    line = f"{NET_LEAD[0].upper()}{NET_LEAD[1:]}{shown}."
    assert summary["contributors_note_lines"][-2:] == [line, idle] and len(summary["contributors_note_lines"]) == 4
    assert [(r["name"], round(r["diff_ms"] * 10**6)) for r in summary["contributors_net_of_communication"]] == want
    assert [r["Name"] for r in summary["contributors"]] == [ACCUMULATE]
    from msprof_compare.report.summary_console import render_explain
    assert line in render_explain(res.frames, res.verdict).splitlines()
    from xlsxutil import read_xlsx
    rows = read_xlsx(Path(res.to_excel(tmp_path)), sheet_name="Summary", header=None).iloc[:, 0].tolist()
    assert line in rows
    # the gate lists the contributors it judges, no ranking beside them
    gate = doc["gate"]["lines"]
    assert any(g.strip().startswith("These are HCCL ops") for g in gate) and not [g for g in gate if "Net of" in g]


def test_net_of_communication_is_not_said_beside_noise(samples_dir_or_skip, tmp_path: Path) -> None:
    """NPU level1 -> DB level1 export of the same job: AccumulateGrad's all-reduce, linked by the text export alone,
    fills the contributors; net of it, aten::to moved -0.842 ms (the copy tasks a text export links to it and a DB
    export does not), 0.9% of the operators' absolute change: no ranking is said (NET_MATERIAL_SHARE), and the
    note ends with the communication figures as before."""
    db = NPU.parents[2] / "db/level1/rank0_ascend_pt"
    res = compare(str(NPU), str(db))
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    note = doc["summary"]["contributors_note"]
    assert "collective communication launched inside it" in note and NET_LEAD not in note
    assert note.endswith("comparison not recorded (its export links no HCCL op to an operator)")
    assert doc["summary"]["contributors_net_of_communication"] is None


def _hccl_ms_under(trace_view: Path, op_name: str) -> Decimal:
    """ms of the HCCL ops (Communication lanes of the HCCL process) whose async_npu launch flow starts inside an
    op named ``op_name``, by the raw trace_view.json."""
    events = json.loads(trace_view.read_text(), parse_float=Decimal)
    events = events["traceEvents"] if isinstance(events, dict) else events
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    hccl = {(e["pid"], e["tid"], Decimal(e["ts"])): Decimal(e["dur"]) for e in events
            if e.get("ph") == "X" and procs.get(e["pid"]) == "HCCL"
            and "Communication" in lanes.get((e["pid"], e["tid"]), "")}
    starts = {e["id"]: Decimal(e["ts"]) for e in events if e.get("cat") == "async_npu" and e.get("ph") == "s"}
    ops = [(Decimal(e["ts"]), Decimal(e["ts"]) + Decimal(e["dur"])) for e in events
           if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"] == op_name]
    total = Decimal(0)
    for e in events:
        if e.get("cat") == "async_npu" and e.get("ph") == "f" and e["id"] in starts:
            key = (e["pid"], e["tid"], Decimal(e["ts"]))
            if key in hccl and any(s <= starts[e["id"]] <= end for s, end in ops):
                total += hccl[key]
    return total / 1000


def test_contributor_holding_the_all_reduce_is_said_to(samples_dir_or_skip, tmp_path: Path) -> None:
    """The GPU-to-NPU pair's one top contributor is AccumulateGrad, +106 ms, because the NPU text export links
    the HCCL all-reduce its DDP hook launched to it: the note under the contributors says that its change is
    communication (which the waterfall counts as such), with each side's figure, on the console, in the JSON and
    on the Summary sheet."""
    want = _hccl_ms_under(NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", ACCUMULATE)
    assert round(want, 3) == Decimal("105.992")  # the four hcom_allReduce ops, all under AccumulateGrad
    res = compare(str(GPU), str(NPU))
    assert res.contributors["Name"].tolist() == [ACCUMULATE]
    comm = res.frames["contributor_communication"]
    # the loader keeps whole ns: the raw µs durations carry sub-ns digits (79089.52021875), 4 ops of them
    # the GPU side's collectives would be kernels, never HCCL ops, and it has none (one rank): it ran no
    # communication, a reading of 0 ms, which the note says as the communication line does (session 41: it said
    # "not recorded" while the line under it said the GPU side's 0 ms is a reading)
    assert comm["Name"].tolist() == [ACCUMULATE] and comm["Base(ms)"].tolist() == [0.0]
    assert comm["Comparison(ms)"].tolist() == [pytest.approx(float(want), abs=2e-6)]
    said = f"most of the change of {ACCUMULATE} is collective communication launched inside it"
    # the reason names what the GPU side lacks: it holds no collective kernel (it said "its export links no HCCL op")
    assert not [e for e in _gpu_events() if e.get("cat") == "kernel" and e["name"].lower().startswith(("nccl", "rccl"))]
    figures = (f"communication 0.000 ms -> {want:.3f} ms (the base side's trace holds no NCCL / RCCL or other "
               "collective kernel)")
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    assert doc["summary"]["contributors_note"].startswith(said)
    # the figures end the communication note, which the computing net of it follows (test_net_of_communication_...)
    assert doc["summary"]["contributors_note"].split(f"; {NET_LEAD}")[0].endswith(figures)
    assert doc["frames"]["contributor_communication"][0]["Name"] == ACCUMULATE
    from msprof_compare.report.summary_console import render_explain
    assert f"Note: {said}" in render_explain(res.frames, res.verdict)
    from xlsxutil import read_xlsx
    sheet = read_xlsx(Path(res.to_excel(tmp_path)), sheet_name="Summary", header=None)
    # the console's lines, a row each: the figures, then what they count (the JSON's contributors_note_lines)
    rows = sheet.iloc[:, 0].tolist()
    at = rows.index(f"Note: {said}: {figures}.")
    lines = doc["summary"]["contributors_note_lines"]
    assert rows[at:at + 4] == lines and lines[1].startswith("These are HCCL ops (HCCL: the NPU's collective")
    # a DB export links no HCCL op to an operator: no such note (its contributors are other operators)
    db = NPU.parents[2] / "db/level1/rank0_ascend_pt"
    assert "contributor_communication" not in compare(str(GPU), str(db)).frames


def _gpu_events(path: Path = GPU) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)["traceEvents"]


def test_gpu_side_without_linked_collectives_is_said_so_by_its_kind(samples: Path, tmp_path: Path) -> None:
    """A GPU side beside an NPU side whose operators own no collective was said to be "not recorded" because "its
    export links no HCCL op to an operator": no GPU trace has HCCL ops. hta's sampled rank 0 holds 10 NCCL kernels
    and no launch flow (HTA's sampling kept none), so no operator owns them: the reason says that, and the NPU
    side's figure (the all-reduce under AccumulateGrad, by the raw trace_view.json) is unchanged."""
    gpu = samples / "hta/tests/data/trace_filter/sampled_rank-0.json.gz"
    events = _gpu_events(gpu)
    assert sum(e.get("cat") == "kernel" and e["name"].startswith("nccl") for e in events) == 10
    assert not [e for e in events if e.get("ph") in ("s", "f")]  # no flow of any kind
    _assert_base_not_recorded(gpu, NPU, tmp_path,
                              "its trace's launch flows link none of its collective kernels to an operator")


def _assert_base_not_recorded(base: Path, comp: Path, tmp_path: Path, why: str) -> None:
    """``base`` against the NPU text export ``comp`` (its folder or its trace_view.json): AccumulateGrad's
    communication is null on the base side and the raw trace's HCCL ops under it on the comparison side, and the
    JSON note ends with the reason ``why``."""
    want = _hccl_ms_under(comp / "ASCEND_PROFILER_OUTPUT" / "trace_view.json" if comp.is_dir() else comp, ACCUMULATE)
    res = compare(str(base), str(comp))
    comm = res.frames["contributor_communication"]
    assert comm["Name"].tolist() == [ACCUMULATE] and comm["Base(ms)"].isna().all()
    assert comm["Comparison(ms)"].tolist() == [pytest.approx(float(want), abs=2e-6)]
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    assert doc["summary"]["contributors_note"].split(f"; {NET_LEAD}")[0].endswith(
        f"communication: base not recorded ({why}), comparison {want:.3f} ms")


@pytest.mark.parametrize("text_is_base", [True, False])
def test_contributor_communication_of_a_db_side_is_not_recorded(samples_dir_or_skip, tmp_path: Path,
                                                                text_is_base: bool) -> None:
    """The NPU level-1 text export against the DB export of the same job: the DB side links no HCCL op to an
    operator, so AccumulateGrad's communication there is no reading. The note said "communication 105.992 ms ->
    0.000 ms", a collapse of the all-reduce, while the communication line under it (from the DB side's own
    CommunicationCompare column) read 105.992 ms -> 102.108 ms; it now says the DB side did not record it, and
    the frame holds null there, in either order of the sides."""
    db = NPU.parents[2] / "db/level1/rank0_ascend_pt"
    want = _hccl_ms_under(NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", ACCUMULATE)
    base, comp = (NPU, db) if text_is_base else (db, NPU)
    res = compare(str(base), str(comp))
    comm = res.frames["contributor_communication"]
    text_col, db_col = ("Base(ms)", "Comparison(ms)") if text_is_base else ("Comparison(ms)", "Base(ms)")
    assert comm["Name"].tolist() == [ACCUMULATE] and comm[db_col].isna().all()
    assert comm[text_col].tolist() == [pytest.approx(float(want), abs=2e-6)]
    why = "(its export links no HCCL op to an operator)"
    sides = [f"base {want:.3f} ms", f"comparison not recorded {why}"] if text_is_base else \
        [f"base not recorded {why}", f"comparison {want:.3f} ms"]
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    note = doc["summary"]["contributors_note"]
    assert note.endswith(f"communication: {', '.join(sides)}")  # the reason beside the side it is of
    assert "0.000 ms" not in note
    assert doc["frames"]["contributor_communication"][0][db_col] is None


def test_npu_side_without_any_hccl_op_is_said_to_hold_none(samples: Path, tmp_path: Path) -> None:
    """Pair 8: mstt's advisor trace_view.json (no HCCL process, no hcom_ op: a run on one device) against the
    level-1 text export's trace_view.json. AccumulateGrad's all-reduce has no counterpart on the base side, whose
    figure is null as a side without a CommunicationCompare row is; the reason said "its export links no HCCL op
    to an operator", a link the export had lost (as a DB export's), where the trace holds no HCCL op at all."""
    base = samples / "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json"
    raw = json.loads(base.read_text())
    raw = raw["traceEvents"] if isinstance(raw, dict) else raw
    assert not [e for e in raw if str(e.get("name", "")).startswith("hcom_")]
    assert not [e for e in raw if e.get("ph") == "M" and (e.get("args") or {}).get("name") == "HCCL"]
    _assert_base_not_recorded(base, NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", tmp_path,
                              "its export holds no HCCL op")


def test_operator_only_run_names_no_waterfall(samples: Path, tmp_path: Path) -> None:
    """NPU pair 1 (level1 -> level2 text exports) with --enable_operator_compare alone: the console, the JSON and the
    API have no waterfall, yet the note under AccumulateGrad said "the waterfall counts them as communication";
    it now says what the figures are without it, and a default run (which has the waterfall) keeps the clause.
    The communication figure is the raw trace's HCCL ops under AccumulateGrad."""
    comp = samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
    want_b = _hccl_ms_under(NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", ACCUMULATE)
    want_c = _hccl_ms_under(comp / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", ACCUMULATE)
    said = (f"most of the change of {ACCUMULATE} is collective communication launched inside it (HCCL ops, which an "
            "NPU text export links to the operator that launched them{}): "
            f"communication {want_b:.3f} ms -> {want_c:.3f} ms")
    alone = compare(str(NPU), str(comp), enable_operator_compare=True)
    assert not len(alone.waterfall)
    doc = json.loads(Path(alone.to_json(tmp_path / "alone.json")).read_text())
    assert doc["summary"]["waterfall"] == [] and doc["summary"]["contributors_note"] == said.format("")
    from msprof_compare.report.summary_console import render_explain
    assert "waterfall" not in render_explain(alone.frames, alone.verdict)
    full = compare(str(NPU), str(comp))
    assert len(full.waterfall)
    doc = json.loads(Path(full.to_json(tmp_path / "full.json")).read_text())
    assert doc["summary"]["contributors_note"] == said.format("; the waterfall counts them as communication, not "
                                                              "computing")


def test_gpu_side_bandwidth_of_zero_is_explained(caplog: pytest.LogCaptureFixture) -> None:
    """The GPU-vs-NPU story (the original's pair 4): beside the text export's SDMA Bandwidth the GPU row read
    0.000GB/s without a word, as if its 21 copies had stalled, while a DB side's 0 was explained. A Kineto trace
    holds no bandwidth figures: the GPU side is now named in one note under the console table (a log line
    before it was), as its Mem Usage would be; a GPU-vs-GPU run, whose console has no bandwidth column, gets
    none."""
    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    comm = json.loads((npu / "ASCEND_PROFILER_OUTPUT/communication.json").read_text(encoding="utf-8"))
    sdma = comm["step50"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"]
    expected = f"{sdma['Transit Size(MB)'] / sdma['Transit Time(ms)']:.3f}GB/s"
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = compare(str(GPU), str(npu), enable_profiling_compare=True)
    headers = res.summary["headers"]
    assert [row[headers.index("SDMA Bandwidth")] for row in res.summary["rows"]] == ["0.000GB/s", expected]
    assert [n for n in res.summary["notes"] if "Bandwidth" in n] == [
        "Base row: a GPU trace records no transfer bandwidth, so its SDMA Bandwidth 0.000GB/s is not a measurement."]
    assert not [m for m in caplog.messages if "andwidth" in m]
    caplog.clear()
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = compare(str(GPU), str(GPU), enable_profiling_compare=True)
    assert "SDMA Bandwidth" not in res.summary["headers"]
    assert not [n for n in res.summary["notes"] if "Bandwidth" in n]


def test_text_side_without_communication_gets_no_gpu_bandwidth_note(caplog: pytest.LogCaptureFixture,
                                                                     tmp_path: Path) -> None:
    """The GPU note is for a GPU side alone: the NPU excerpt without its communication.json, against the
    excerpt, reads 0.000GB/s too, and says why in its own terms (no communication.json), not as a GPU trace."""
    import shutil

    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    bare = tmp_path / "rank0_ascend_pt"
    shutil.copytree(npu, bare)
    (bare / "ASCEND_PROFILER_OUTPUT" / "communication.json").unlink()
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = compare(str(bare), str(npu), enable_profiling_compare=True)
    headers = res.summary["headers"]
    assert res.summary["rows"][0][headers.index("SDMA Bandwidth")] == "0.000GB/s"
    assert _without_wait_note(res.summary["notes"]) == [
        "Base row: no usable communication.json, so its SDMA Bandwidth 0.000GB/s is not a measurement."]
    assert not [m for m in caplog.messages if "GPU trace" in m or ("andwidth" in m and "does not exist" not in m)]
    assert [m for m in caplog.messages if "communication.json" in m] == [  # the loader's, of its side
        f"{bare / 'ASCEND_PROFILER_OUTPUT'}: The file communication.json does not exist. (base side: no RDMA or SDMA "
        "Bandwidth, which the Model Profiling Time Distribution table reads from it)"]


def test_api_regressions_led_by_host_syncs_say_so(samples_dir_or_skip, tmp_path: Path) -> None:
    """The H200 AlexNet against the NPU run: the API chart's two first regressions are aten::item (+94.02 ms)
    and aten::_local_scalar_dense (+92.84 ms), host waits for the device work queued before them (the NPU's
    all-reduce among it), not work of theirs. The chart data's header and the chart's axis say so; the rows
    stay. Diffs by hand from the raw traces: each side's calls summed, rounded to 0.01 ms as the sheet is
    (aten::item: 27 NPU calls, 94.10 ms, against 3 GPU calls, 0.08 ms)."""
    def total(events: list[dict], name: str) -> float:
        return round(sum(float(e["dur"]) for e in events if e.get("name") == name and e.get("ph") == "X") / 1000, 2)

    with gzip.open(GPU, "rt", encoding="utf-8") as fh:
        gpu = json.load(fh)["traceEvents"]
    npu = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    npu = npu["traceEvents"] if isinstance(npu, dict) else npu
    hand = {n: round(total(npu, n) - total(gpu, n), 2) for n in ("aten::item", "aten::_local_scalar_dense")}
    assert hand == {"aten::item": 94.02, "aten::_local_scalar_dense": 92.84}

    res = compare(str(GPU), str(NPU))  # the Summary sheet holds the chart data
    api = res.sheet("ApiCompare")
    assert set(hand) <= set(api["api name"])  # the original's rows all stay
    path = res.to_excel(str(tmp_path))
    book = openpyxl.load_workbook(path, read_only=True)
    rows = [r for r in book["Summary"].iter_rows(values_only=True) if any(c is not None for c in r)]
    book.close()
    at = next(i for i, r in enumerate(rows) if str(r[0]).startswith("ApiCompare: top"))
    assert rows[at][0] == (
        "ApiCompare: top 20 regressions (API total duration, ms); aten::item and aten::_local_scalar_dense wait on "
        "the host for the device work queued before them (a sync): their time is that work's, so read the device "
        "time (OverallMetrics, the operator or module sheets), not the calls; aten::to, aten::copy_ and "
        "aten::_to_copy wait so too when they copy to the host")
    assert [(r[0], round(r[1], 2)) for r in rows[at + 1:at + 3]] == list(hand.items())
    with zipfile.ZipFile(path) as z:
        charts = [z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/charts/chart")]
    api_chart = [c for c in charts if "API total duration" in c]
    assert len(api_chart) == 1 and ("<a:t>ms; aten::item and aten::_local_scalar_dense: host waits for earlier "
                                    "device work (a sync), read the device time</a:t>") in api_chart[0]


def test_host_wait_note_names_syncs_only_where_the_rows_hold_one() -> None:
    """Synchronize calls of any runtime are syncs; copies alone are no sync (a cast on the device is one)."""
    assert host_wait_note(["aten::to", "aten::copy_", "aten::conv2d"]) == ""
    assert host_wait_note(["cudaStreamSynchronize", "aten::conv2d", "aclrtSynchronizeStream"]) == (
        "cudaStreamSynchronize and aclrtSynchronizeStream wait on the host for the device work queued before them "
        "(a sync): their time is that work's, so read the device time (OverallMetrics, the operator or module "
        "sheets), not the calls")
    # one sync and one copy: each verb and pronoun of one (pair 7 read "cudaDeviceSynchronize wait ... before them")
    assert host_wait_note(["cudaDeviceSynchronize", "aten::to"]) == (
        "cudaDeviceSynchronize waits on the host for the device work queued before it (a sync): its time is that "
        "work's, so read the device time (OverallMetrics, the operator or module sheets), not the call; aten::to "
        "waits so too when it copies to the host")
    assert host_wait_note(["aten::item"], short=True) == (
        "aten::item: host waits for earlier device work (a sync), read the device time")


def test_memcpys_without_a_direction_leave_sdma_with_a_warning(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """A compute-stream memcpy whose name gives no HtoD / DtoH / DtoD direction leaves the SDMA rows (the
    original's name rule) and is counted in one warning. The AlexNet trace's 21 memcpys all run on stream 7, the
    stream of its 162 kernels, and all name a direction: SDMA 487.907 us (21). Its 70.464 us and 32.64 us DtoD
    copies renamed "Memcpy PtoP (Device -> Device)" and "Memcpy HtoH (Pinned -> Pinned)" (names Kineto writes for
    peer-to-peer and host-to-host copies; a synthetic edit, no sample holds one): SDMA 384.803 us (19), \\tFree
    0.103104 ms more, Free Time itself unchanged, and one warning of the 2 copies (0.103 ms)."""
    renamed = {70.464: "Memcpy PtoP (Device -> Device)", 32.64: "Memcpy HtoH (Pinned -> Pinned)"}
    doc = []
    for e in _gpu_events():  # floats as the file writes them (``events`` holds Decimals)
        if e.get("cat") == "gpu_memcpy" and e["dur"] in renamed:
            assert e["name"] == "Memcpy DtoD (Device -> Device)" and e["args"]["stream"] == 7
            e = {**e, "name": renamed[e["dur"]]}
        doc.append(e)
    edited = tmp_path / "renamed.pt.trace.json"
    edited.write_text(json.dumps({"traceEvents": doc}), encoding="utf-8")
    directed = sum(_ns(str(e["dur"])) for e in doc if e.get("cat") == "gpu_memcpy"
                   and any(w in e["name"].lower() for w in ("htod", "dtoh", "dtod")))
    opts = build_options(enable_profiling_compare=True)[0]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        before = gpu_breakdown(load_profile(str(GPU), opts))
    assert not [r for r in caplog.records if "direction" in r.getMessage()]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        after = gpu_breakdown(load_profile(str(edited), opts))
    assert (before.sdma_stream.ns, before.sdma_stream.count) == (487907, 21)
    assert (after.sdma_stream.ns, after.sdma_stream.count) == (directed, 19) == (487907 - 70464 - 32640, 19)
    assert after.free_ns == before.free_ns
    said = [r.getMessage() for r in caplog.records if "direction" in r.getMessage()]
    assert said == [f"{edited}: 2 memcpy event(s) on the compute stream (0.103 ms; 'Memcpy HtoH (Pinned -> Pinned)' "
                    "and 1 other name(s)) name no HtoD / DtoH / DtoD direction, so OverallMetrics' SDMA row and the "
                    "SDMA Time(Num) leave them out (the original's name rule), and their time stays in Free"]
    # a compare names the side the copies are on (each line of one side's data does)
    from msprof_compare import compare

    for pair, side in (((edited, GPU), "base side"), ((GPU, edited), "comparison side")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(*map(str, pair), enable_profiling_compare=True)
        assert [r.getMessage() for r in caplog.records if "direction" in r.getMessage()] == [f"{said[0]} ({side})"]


def test_undirected_memcpys_are_counted_with_thousands_separators(caplog: pytest.LogCaptureFixture) -> None:
    """The count of that warning is written as the loaders' counts are ("1,200", not "1200"): 1,200 copies named
    "Memcpy PtoP (Device -> Device)" of the AlexNet trace's 70.464 us DtoD length, 84.5568 ms in all."""
    import numpy as np

    from msprof_compare.compare.breakdown_gpu import _undirected_copies

    prof = load_profile(str(GPU), build_options(enable_profiling_compare=True)[0])
    names = np.array(["Memcpy PtoP (Device -> Device)"] * 1200, dtype=object)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        _undirected_copies(prof, np.ones(1200, dtype=bool), names, np.full(1200, 70464, dtype=np.int64))
    assert [r.getMessage() for r in caplog.records] == [
        f"{prof.files.get('trace', prof.path)}: 1,200 memcpy event(s) on the compute stream (84.557 ms; 'Memcpy PtoP "
        "(Device -> Device)') name no HtoD / DtoH / DtoD direction, so OverallMetrics' SDMA row and the SDMA "
        "Time(Num) leave them out (the original's name rule), and their time stays in Free"]


def test_undirected_memcpy_names_are_counted_with_thousands_separators(caplog: pytest.LogCaptureFixture) -> None:
    """The count of the other names is written so too: 1,002 copies of the AlexNet trace's 70.464 us DtoD length,
    two named "Memcpy PtoP (Device -> Device)" (the commonest, named) and 1,000 of names of their own."""
    import numpy as np

    from msprof_compare.compare.breakdown_gpu import _undirected_copies

    prof = load_profile(str(GPU), build_options(enable_profiling_compare=True)[0])
    names = np.array(["Memcpy PtoP (Device -> Device)"] * 2 + [f"Memcpy PtoP {i}" for i in range(1000)],
                     dtype=object)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        _undirected_copies(prof, np.ones(1002, dtype=bool), names, np.full(1002, 70464, dtype=np.int64))
    assert [r.getMessage() for r in caplog.records] == [
        f"{prof.files.get('trace', prof.path)}: 1,002 memcpy event(s) on the compute stream (70.605 ms; 'Memcpy PtoP "
        "(Device -> Device)' and 1,000 other name(s)) name no HtoD / DtoH / DtoD direction, so OverallMetrics' SDMA "
        "row and the SDMA Time(Num) leave them out (the original's name rule), and their time stays in Free"]


def test_undirected_memcpys_name_their_most_frequent_name_and_only_the_compute_streams(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The warning names the commonest undirected name, not the first in the file, and counts the compute stream's
    copies alone: a copy on another stream is in no SDMA row whatever its name (mutation testing, session 63). The
    AlexNet trace's DtoD copies of 1.312 us (the first), 8.64 us and 1.152 us renamed "Memcpy HtoH (Pinned ->
    Pinned)", "Memcpy PtoP (Device -> Device)" twice, and its 32.64 us one renamed PtoP and moved to stream 99
    (a synthetic edit): 3 copies warned, 1.312 + 8.64 + 1.152 = 11.104 us (0.011 ms), named PtoP (2 of 3); SDMA
    487.907 - 11.104 - 32.64 = 444.163 us (17 of 21)."""
    renamed = {1.312: "Memcpy HtoH (Pinned -> Pinned)", 8.64: "Memcpy PtoP (Device -> Device)",
               1.152: "Memcpy PtoP (Device -> Device)", 32.64: "Memcpy PtoP (Device -> Device)"}
    doc = []
    for e in _gpu_events():
        if e.get("cat") == "gpu_memcpy" and e["dur"] in renamed:
            assert e["name"] == "Memcpy DtoD (Device -> Device)" and e["args"]["stream"] == 7
            e = {**e, "name": renamed[e["dur"]]}
            if e["dur"] == 32.64:
                e = {**e, "tid": 99, "args": {**e["args"], "stream": 99}}
        doc.append(e)
    assert [e["dur"] for e in doc if e.get("cat") == "gpu_memcpy" and e["dur"] in renamed] == [1.312, 8.64, 1.152,
                                                                                              32.64]
    edited = tmp_path / "renamed.pt.trace.json"
    edited.write_text(json.dumps({"traceEvents": doc}), encoding="utf-8")
    opts = build_options(enable_profiling_compare=True)[0]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        bd = gpu_breakdown(load_profile(str(edited), opts))
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (487907 - 1312 - 8640 - 1152 - 32640, 17)
    said = [r.getMessage() for r in caplog.records if "direction" in r.getMessage()]
    assert said == [f"{edited}: 3 memcpy event(s) on the compute stream (0.011 ms; 'Memcpy PtoP (Device -> Device)' "
                    "and 1 other name(s)) name no HtoD / DtoH / DtoD direction, so OverallMetrics' SDMA row and the "
                    "SDMA Time(Num) leave them out (the original's name rule), and their time stays in Free"]
