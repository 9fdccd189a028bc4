"""Known regressions injected into copies of real AMD MI300X Kineto traces (tracelens), compared against the
unchanged trace (and, where it says more, against the H100 trace of the same model). The other injected tests use
NVIDIA traces and NPU exports; these check what is AMD's own: ROCm library kernel names (Tensile / hipBLASLt
``Cijk_*`` GEMMs, aotriton's ``attn_fwd``, RCCL's ``ncclDevKernel_Generic`` and MSCCL kernels), HIP launch APIs
(``hipLaunchKernel``, ``hipExtModuleLaunchKernel``, ``hipModuleLaunchKernel``), stream 0 and the ``[memory]``
events of a ROCm build (Device Type 6).

* bert-small on the MI300X (forward, 60 kernels and one copy, all on stream 0, every device event with a launch
  flow): a Cijk GEMM 10 us longer, an attn_fwd 5 us longer, its op renamed as a backward one, the Memcpy DtoD 3 us
  longer, one allocation 100 MiB larger, a GEMM moved to stream 1, a GEMM's launch call renamed from
  hipExtModuleLaunchKernel to hipLaunchKernel;
* the distributed ResNet on the MI300X (17 RCCL ``ncclDevKernel_Generic`` on stream 4): the last all-reduce 1 ms
  longer, and the same kernel named as RCCL's MSCCL kernel.

Every expected figure is the raw events' own (Decimal, plain interval arithmetic, the json module), never the
tool's output. The planted kernels run in idle device time (the next device event starts after the longer end),
so no later event moves.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from spans import union  # tests/ is on sys.path (rootdir import mode)
from test_injected_regressions import _rows, _summary_lines, _waterfall
from test_injected_regressions_gpu import _load, _save

from msprof_compare.api import compare
from msprof_compare.compare.communication import gpu_family
from msprof_compare.report.json_report import to_document
from msprof_compare.report.summary_console import memory_line, render_communication, render_explain

BERT = "tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"
BERT_H100 = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
RESNET = "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
_GEMM = 838  # a Cijk GEMM (7.416 us) of BertIntermediate_0's Linear, 15.8 us before the next kernel
_ATTN = 828  # the first attn_fwd (32.032 us), 55 us before the next kernel
_COPY = 810  # the trace's one Memcpy DtoD (2.404 us)
_ALLREDUCE = 8211  # the last RCCL all-reduce (8656.708 us): no device event after it
_DEVICE = ("kernel", "gpu_memcpy")
_COMM = ("nccl", "rccl", "msccl")  # RCCL's kernels (ncclDevKernel_*, rcclKernel_*, mscclKernel_*)
_CUBE = ("cijk_", "attn_fwd", "bwd_kernel_dk_dv", "bwd_kernel_dq", "bwd_kernel_fuse")  # AMD's Cube words


def _edited(src: Path, dst: Path, old: str, new: str) -> list[dict]:
    """The trace's text with its one occurrence of ``old`` replaced by ``new``, written to ``dst``; its events
    (the whole 20 MB ResNet trace re-written event by event took longer than its comparison)."""
    text = gzip.decompress(src.read_bytes()).decode()
    assert text.count(old) == 1
    dst.write_text(text.replace(old, new))
    return json.loads(dst.read_bytes(), parse_float=Decimal)["traceEvents"]


@lru_cache(maxsize=2)
def _pristine(path: Path) -> list[dict]:
    """The unchanged trace's events, parsed once for the tests that only read them (never modify them)."""
    return _load(path)["traceEvents"]


def _device(events: list[dict], corr: int) -> dict:
    (event,) = [e for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE
                and e["args"].get("correlation") == corr]
    return event


def _figures(events: list[dict]) -> dict[str, Decimal]:
    """By hand, in µs (reference-1 §4.3 with exact unions; stream 0 is a stream, docs/differences.md): E2E over
    the kernels and copies, computing (union of the non-collective kernels), uncovered communication (the
    collectives' union outside computing), free, SDMA (copies on the compute stream, the most frequent of the
    computing kernels'), and the kernels' time by name: Cube (a Cube word), Vector (the other computing ones)."""
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE]
    lo, hi = min(e["ts"] for e in dev), max(e["ts"] + e["dur"] for e in dev)
    kernels = [e for e in dev if e["cat"] == "kernel"]
    comm = [e for e in kernels if e["name"].lower().startswith(_COMM)]
    work = [e for e in kernels if not e["name"].lower().startswith(_COMM)]
    spans = [union([(e["ts"], e["ts"] + e["dur"]) for e in group]) for group in (work, comm)]
    computing = sum(e - s for s, e in spans[0])
    busy = sum(e - s for s, e in union(spans[0] + spans[1]))
    streams = [e["args"]["stream"] for e in work]
    main = max(set(streams), key=streams.count)
    cube = [e["dur"] for e in work if any(w in e["name"].lower() for w in _CUBE)]
    return {"E2E": hi - lo, "Computing": computing, "Uncovered": busy - computing, "Free": hi - lo - busy,
            "SDMA": sum(e["dur"] for e in dev if e["cat"] == "gpu_memcpy" and e["args"]["stream"] == main),
            "Cube": sum(cube), "Vector": sum(e["dur"] for e in work) - sum(cube)}


def _delta(before: list[dict], after: list[dict]) -> dict[str, Decimal]:
    f0, f1 = _figures(before), _figures(after)
    return {k: f1[k] - f0[k] for k in f0 if f1[k] != f0[k]}


def _om_moved(res) -> dict[str, float]:
    """OverallMetrics rows whose durations differ: comparison minus base (ms, to the ns)."""
    return {k: round(r[4] - r[1], 6) for k, r in _rows(res.sheet("OverallMetrics")).items() if round(r[4] - r[1], 6)}


def _launch(events: list[dict], corr: int) -> dict:
    (call,) = [e for e in events if e.get("cat") == "cuda_runtime" and e["args"].get("correlation") == corr]
    return call


def _ops_around(events: list[dict], call: dict, cat: str = "cpu_op") -> list[dict]:
    """The host events of ``cat`` around a launch call on its thread, outermost first."""
    return sorted((e for e in events if e.get("cat") == cat and e["tid"] == call["tid"] and e["ts"] <= call["ts"]
                   and call["ts"] + call["dur"] <= e["ts"] + e["dur"]), key=lambda e: (e["ts"], -e["dur"]))


def _module_path(events: list[dict], corr: int) -> str:
    """The nn.Module path of a kernel's launch, by hand from the nn.Module python_function events around it."""
    mods = _ops_around(events, _launch(events, corr), "python_function")
    return "".join("/ " + e["name"][len("nn.Module: "):] for e in mods if e["name"].startswith("nn.Module: "))


def _idle_after(events: list[dict], kernel: dict) -> Decimal:
    """Time from a device event's end to the next device event's start (the room a planted growth may take)."""
    end = kernel["ts"] + kernel["dur"]
    return min(e["ts"] for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE and e["ts"] >= end) - end


def _cells(res, column: str) -> list[str]:
    """The console table's cells of ``column``: base, comparison."""
    lines = res.console_table().splitlines()
    at = lines[3].split("|").index(f" {column} ")
    return [ln.split("|")[at].strip() for ln in lines[5:7]]


# --------------------------------------------------------------------------- computing: a GEMM, an attention kernel

def test_cijk_gemm_longer_is_matmul_cube_of_its_linear_and_module(samples, tmp_path):
    """The bert-small MI300X trace's 26 Tensile / hipBLASLt GEMMs (``Cijk_Alik_Bljk_...``, all launched by
    hipExtModuleLaunchKernel under aten::linear > aten::addmm) are Matmul (Cube): a Cijk word makes them Cube,
    aten::addmm Matmul (174.130 us by hand); the 4 attn_fwd are Flash Attention (Forward) (Cube), the 30 others
    Vector. One GEMM 10 us longer in idle time: by hand computing and Matmul (Cube) +10 us, free -10 us; the
    operator contributor aten::linear, the module contributor its Linear_4 row (path read from the nn.Module
    events), the Summary sheet and the JSON name both. Against the H100 trace the planted 10 us is all that
    moves between the two runs' Matmul and Free steps."""
    src = samples / BERT
    before = _load(src)["traceEvents"]
    gemms = [e for e in before if e.get("cat") == "kernel" and e["name"].startswith("Cijk_")]
    assert len(gemms) == 26 and {_launch(before, e["args"]["correlation"])["name"] for e in gemms} == {
        "hipExtModuleLaunchKernel"}
    assert {tuple(o["name"] for o in _ops_around(before, _launch(before, e["args"]["correlation"])))
            for e in gemms} == {("aten::linear", "aten::addmm")}
    matmul = sum(e["dur"] for e in gemms)
    assert matmul == Decimal("174.130")
    doc = _load(src)
    gemm = _device(doc["traceEvents"], _GEMM)
    assert gemm["name"].startswith("Cijk_") and _idle_after(doc["traceEvents"], gemm) > 10
    gemm["dur"] += 10
    assert _delta(before, doc["traceEvents"]) == {"Computing": 10, "Free": -10, "Cube": 10}
    path = _module_path(before, _GEMM)
    assert path.endswith("/ BertLayer_0/ BertIntermediate_0/ Linear_4")

    res = compare(str(src), str(_save(doc, tmp_path / "gemm.json")))
    om = _rows(res.sheet("OverallMetrics"))
    assert (om["Matmul (Cube)"][1], om["Matmul (Cube)"][3]) == (float(matmul / 1000), 26)
    assert (om["Flash Attention (Forward) (Cube)"][3], om["Vector"][3]) == (4, 30)
    assert _om_moved(res) == {"Computing Time": 0.01, "Matmul": 0.01, "Matmul (Cube)": 0.01, "Free Time": -0.01,
                              "Free": -0.01}
    assert _waterfall(res) == {"Matmul": 10_000, "Free: Other": -10_000}
    assert _cells(res, "Cube Time(Num)") == ["0.000s(26)", "0.000s(26)"]
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["operator", "aten::linear", 0.01]]
    row = f"{path} > aten::linear"
    assert res.module_contributors[["Name", "Base(ms)", "Comparison(ms)"]].values.tolist() == [
        [row, float((gemm["dur"] - 10) / 1000), float(gemm["dur"] / 1000)]]
    assert "/ BertIntermediate_0/ Linear_4 > aten::linear |" in render_explain(res.frames, res.verdict)
    summary = to_document(res)["summary"]
    assert [r["Name"] for r in summary["contributors"]] == ["aten::linear"]
    assert [r["Name"] for r in summary["module_contributors"]] == [row]
    lines = _summary_lines(res, tmp_path, "gemm.xlsx")
    assert "aten::linear" in lines and row in lines

    # against the H100 trace of the same model: the pair's own differences plus the planted 10 us, nothing else
    h100 = samples / BERT_H100
    plain, planted = (_waterfall(compare(str(h100), str(p))) for p in (src, tmp_path / "gemm.json"))
    assert {k: planted.get(k, 0) - plain.get(k, 0) for k in plain.keys() | planted.keys()
            if planted.get(k, 0) != plain.get(k, 0)} == {"Matmul": 10_000, "Free: Other": -10_000}


def test_attn_fwd_longer_is_flash_attention_forward_cube_and_a_backward_op_makes_it_backward(samples, tmp_path):
    """aotriton's ``attn_fwd`` (launched by hipModuleLaunchKernel under aten::scaled_dot_product_attention >
    aten::_scaled_dot_product_flash_attention > aten::_flash_attention_forward) is Flash Attention (Forward)
    (Cube): FA_MASK's flash_attention names the op, the attn_fwd word the kernel. 5 us longer in idle time: by hand
    computing +5 us, free -5 us; the contributor aten::scaled_dot_product_attention in BertSdpaSelfAttention_0.
    The same kernel's FA ops renamed as backward ones (``..._backward``, as PyTorch names them): its 32.032 us
    move from Flash Attention (Forward) (Cube) to (Backward) (Cube), and the console table gains the backward
    column."""
    src = samples / BERT
    before = _load(src)["traceEvents"]
    attn = [e for e in before if e.get("cat") == "kernel" and e["name"] == "attn_fwd"]
    assert len(attn) == 4
    call = _launch(before, _ATTN)
    assert call["name"] == "hipModuleLaunchKernel"
    assert [o["name"] for o in _ops_around(before, call)] == [
        "aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
        "aten::_flash_attention_forward"]
    doc = _load(src)
    kernel = _device(doc["traceEvents"], _ATTN)
    assert _idle_after(doc["traceEvents"], kernel) > 5
    kernel["dur"] += 5
    assert _delta(before, doc["traceEvents"]) == {"Computing": 5, "Free": -5, "Cube": 5}

    res = compare(str(src), str(_save(doc, tmp_path / "attn.json")))
    om = _rows(res.sheet("OverallMetrics"))
    assert (om["Flash Attention (Forward) (Cube)"][1], om["Flash Attention (Forward) (Cube)"][3]) == (
        float(sum(e["dur"] for e in attn) / 1000), 4)
    assert _om_moved(res) == {"Computing Time": 0.005, "Flash Attention (Forward)": 0.005,
                              "Flash Attention (Forward) (Cube)": 0.005, "Free Time": -0.005, "Free": -0.005}
    assert _waterfall(res) == {"Flash Attention (Forward)": 5_000, "Free: Other": -5_000}
    # the same 5 us change reads alike on each row: 0.005 ms to 0.01, the half away from zero; the float
    # differences (0.0050000000000000044, -0.0050000000000003375, -0.004999999999999893 ms) rounded as floats
    # made Free Time -0.01 but its \tFree 0.00
    assert {k: r[7] for k, r in om.items() if r[7]} == {k: 0.01 if v > 0 else -0.01 for k, v in _om_moved(res).items()}
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["aten::scaled_dot_product_attention", 0.005]]
    assert res.module_contributors["Name"].tolist() == [
        f"{_module_path(before, _ATTN)} > aten::scaled_dot_product_attention"]
    assert _module_path(before, _ATTN).endswith("/ BertAttention_0/ BertSdpaSelfAttention_0")

    back = _load(src)
    events = back["traceEvents"]
    for op in _ops_around(events, _launch(events, _ATTN))[1:]:
        op["name"] = op["name"].replace("_forward", "") + "_backward"
    res = compare(str(src), str(_save(back, tmp_path / "attn_back.json")))
    us = _device(before, _ATTN)["dur"]
    assert us == Decimal("32.032")
    assert _om_moved(res) == {"Flash Attention (Forward)": -0.032032, "Flash Attention (Forward) (Cube)": -0.032032,
                              "Flash Attention (Backward)": 0.032032, "Flash Attention (Backward) (Cube)": 0.032032}
    assert _cells(res, "Flash Attention Time(Backward)(Num)") == ["0.000s(0)", "0.000s(1)"]
    om = _rows(res.sheet("OverallMetrics"))  # 0.032032 ms to 0.01: 0.03 either way
    assert {k: r[7] for k, r in om.items() if r[7]} == {k: 0.03 if v > 0 else -0.03 for k, v in _om_moved(res).items()}


def test_aotriton_backward_kernels_are_cube(samples, tmp_path):
    """aotriton's backward attention kernels (bwd_kernel_dk_dv, bwd_kernel_dq, the fused bwd_kernel_fuse) under
    backward flash-attention ops are Flash Attention (Backward) (Cube), as NVIDIA's flash_bwd kernels are: no
    keyword named them, so on a ROCm training trace the backward attention read (Vector). The bert trace is
    inference: three of its four attn_fwd kernels are renamed so, and the ops around them as backward ones
    (bwd_preprocess, an element-wise pass aotriton runs first, stays Vector: the fourth)."""
    src = samples / BERT
    doc = _load(src)
    events = doc["traceEvents"]
    attn = sorted((e for e in events if e.get("cat") == "kernel" and e["name"] == "attn_fwd"), key=lambda e: e["ts"])
    names = ["bwd_kernel_dk_dv", "bwd_kernel_dq", "bwd_kernel_fuse", "bwd_preprocess"]
    for kernel, name in zip(attn, names, strict=True):
        kernel["name"] = name
        for op in _ops_around(events, _launch(events, kernel["args"]["correlation"]))[1:]:
            if not op["name"].endswith("_backward"):
                op["name"] = op["name"].replace("_forward", "") + "_backward"
    us = [_device(_pristine(src), k["args"]["correlation"])["dur"] for k in attn]
    res = compare(str(src), str(_save(doc, tmp_path / "bwd.json")))
    om = _rows(res.sheet("OverallMetrics"))
    cube, vector = om["Flash Attention (Backward) (Cube)"], om["Flash Attention (Backward) (Vector)"]
    assert (cube[4], cube[6]) == (float(sum(us[:3]) / 1000), 3)  # comparison ms and count
    assert (vector[4], vector[6]) == (float(us[3] / 1000), 1)
    assert (om["Flash Attention (Forward)"][4], om["Flash Attention (Forward)"][6]) == (0.0, 0)  # all four moved


# --------------------------------------------------------------------------- communication and copies

def test_rccl_allreduce_longer_is_uncovered_communication_and_its_allreduce_row(samples, tmp_path):
    """The MI300X ResNet trace's last RCCL all-reduce (``ncclDevKernel_Generic``, stream 4, no family in its
    name: PyTorch's record_param_comms names it all_reduce) 1 ms longer, past every other device event: by hand
    E2E +710.402 us, uncovered communication +971.562 us, free -261.160 us (computing unchanged);
    CommunicationCompare's allreduce row +1000 us over its 6 calls, the communication contributor allreduce +1 ms,
    the operator contributor AccumulateGrad's evaluate_function (the all-reduce runs in the DDP hook its
    backward calls), the JSON and console communication figures."""
    src = samples / RESNET
    before = _pristine(src)
    kernel = _device(before, _ALLREDUCE)
    assert kernel["name"].startswith("ncclDevKernel_Generic") and kernel["args"]["stream"] == 4
    after = _edited(src, tmp_path / "rccl.json", f'"ts": {kernel["ts"]}, "dur": {kernel["dur"]},',
                    f'"ts": {kernel["ts"]}, "dur": {kernel["dur"] + 1000},')
    assert _device(after, _ALLREDUCE)["dur"] == kernel["dur"] + 1000
    assert _delta(before, after) == {"E2E": Decimal("710.402"), "Uncovered": Decimal("971.562"),
                                                  "Free": Decimal("-261.160")}
    # the all-reduces: the kernels whose launch runs inside a record_param_comms naming allreduce (the first five
    # collectives were launched before the profile began: no launch, no record, the original's family)
    records = [e for e in before if e.get("name") == "record_param_comms"
               and e["args"].get("Collective name") == "allreduce"]
    launches = {e["args"]["correlation"] for e in before if e.get("cat") == "cuda_runtime" and any(
        r["tid"] == e["tid"] and r["ts"] <= e["ts"] <= r["ts"] + r["dur"] for r in records)}
    reduces = [e for e in before if e.get("cat") == "kernel" and e["args"].get("correlation") in launches]
    assert len(reduces) == 6 and {e["name"] for e in reduces} == {kernel["name"]}

    res = compare(str(src), str(tmp_path / "rccl.json"))
    assert _om_moved(res) == {"Uncovered Communication Time": 0.971562, "Free Time": -0.26116, "Free": -0.26116,
                              "E2E Time": 0.710402}
    assert _waterfall(res) == {"Uncovered Communication": 971_562, "Free: Other": -261_160,
                               "Comparison E2E": 710_402}
    comm = res.sheet("CommunicationCompare")
    (row,) = comm[comm["Communication OP Name"] == "allreduce"].itertuples(index=False)
    total = sum(e["dur"] for e in reduces)
    assert (row[3], round(row[4], 3), row[10], round(row[11], 3)) == (6, float(total), 6, float(total + 1000))
    assert res.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [["allreduce", 1.0]]
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [
        ["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 1.0]]
    doc_summary = to_document(res)["summary"]["communication"]
    assert (doc_summary["diff_ms"], doc_summary["uncovered_diff_ms"]) == (1.0, 0.971562)
    assert "(+1.000 ms" in render_communication(res.frames)


def test_msccl_allreduce_kernel_is_communication(samples, tmp_path):
    """RCCL runs small all-reduces on the MI300X with its MSCCL algorithms by default, in kernels named
    ``mscclKernel_Sum_hip_bfloat16_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)``. The ResNet trace's last
    all-reduce kernel so named is the same collective: no figure may move. Before, the kernel did not start with
    nccl / rccl and was computing: Vector +8.657 ms, Uncovered Communication -8.657 ms, allreduce 6 -> 5 calls."""
    src = samples / RESNET
    kernel = _device(_pristine(src), _ALLREDUCE)
    msccl = "mscclKernel_Sum_hip_bfloat16_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)"
    after = _edited(src, tmp_path / "msccl.json", f'"name": "{kernel["name"]}", "pid": 2, "tid": 4,\n    '
                    f'"ts": {kernel["ts"]},', f'"name": "{msccl}", "pid": 2, "tid": 4,\n    "ts": {kernel["ts"]},')
    assert _device(after, _ALLREDUCE)["name"] == msccl
    assert not _delta(_pristine(src), after)  # the oracle knows RCCL's kernels
    res = compare(str(src), str(tmp_path / "msccl.json"))
    assert not _waterfall(res) and not _om_moved(res)
    assert not len(res.contributors) and not len(res.communication_contributors)
    comm = res.sheet("CommunicationCompare")
    (row,) = comm[comm["Communication OP Name"] == "allreduce"].itertuples(index=False)
    assert (row[3], row[10]) == (6, 6) and row[4] == row[11]
    # the name says the reduction (Sum), not the collective: PyTorch's record names it, else the original's family
    assert gpu_family([msccl] * 2, None, ["allreduce", ""])[0].tolist() == ["allreduce", "mscclkernel"]


def test_hip_memcpy_longer_is_sdma_of_the_op_that_copied(samples, tmp_path):
    """The bert trace's one copy (Memcpy DtoD, hipMemcpyWithStream under aten::is_nonzero > aten::item >
    aten::_local_scalar_dense, stream 0 = the compute stream) 3 us longer in idle time: by hand SDMA +3 us, free
    (Free: Other) -3 us, Free Time unchanged; the contributor aten::is_nonzero, whose device time is the copy's."""
    src = samples / BERT
    before = _load(src)["traceEvents"]
    call = _launch(before, _COPY)
    assert call["name"] == "hipMemcpyWithStream"
    assert [o["name"] for o in _ops_around(before, call)] == ["aten::is_nonzero", "aten::item",
                                                              "aten::_local_scalar_dense"]
    doc = _load(src)
    copy = _device(doc["traceEvents"], _COPY)
    assert copy["cat"] == "gpu_memcpy" and copy["args"]["stream"] == 0 and _idle_after(doc["traceEvents"], copy) > 3
    copy["dur"] += 3
    assert _delta(before, doc["traceEvents"]) == {"SDMA": 3}  # Free (E2E outside kernels and copies) less SDMA
    res = compare(str(src), str(_save(doc, tmp_path / "copy.json")))
    assert _om_moved(res) == {"SDMA": 0.003, "Free": -0.003}
    assert _waterfall(res) == {"Free: SDMA": 3_000, "Free: Other": -3_000}
    assert _cells(res, "SDMA Time(Num)") == ["0.000s(1)", "0.000s(1)"]
    assert res.contributors[["Name", "Base(ms)", "Diff(ms)"]].values.tolist() == [
        ["aten::is_nonzero", float((copy["dur"] - 3) / 1000), 0.003]]


# --------------------------------------------------------------------------- memory

def test_larger_allocation_moves_memory_rows_line_and_mem_usage(samples, tmp_path):
    """The bert trace's ``[memory]`` events (Device Type 6, a ROCm build's; 234 on device 0): the first of
    aten::addmm's 76 MiB workspace allocations (inside aten::linear > aten::addmm > aten::empty) 100 MiB larger,
    its free as much, Total Allocated between them and Total Reserved from it on 100 MiB higher. By hand:
    aten::linear's allocated memory +100 MB (MemoryCompareStatistic, the memory contributor), peak reserved
    224395264 -> 329252864 bytes, Mem Usage 0.21G -> 0.31G; the memory line and the JSON say so; no time moves."""
    src = samples / BERT
    doc = _load(src)
    mem = sorted((e for e in doc["traceEvents"] if e.get("name") == "[memory]" and e["args"].get("Device Id", -1) >= 0),
                 key=lambda e: e["ts"])
    assert len(mem) == 234 and {e["args"]["Device Type"] for e in mem} == {6}
    first = next(e for e in mem if e["args"]["Bytes"] == 79691776)
    free = next(e for e in mem if e["ts"] > first["ts"] and e["args"]["Addr"] == first["args"]["Addr"])
    assert free["args"]["Bytes"] == -79691776
    host = [o for o in doc["traceEvents"] if o.get("cat") == "cpu_op" and o["tid"] == first["tid"]
            and o["ts"] <= first["ts"] <= o["ts"] + o["dur"]]
    assert [o["name"] for o in sorted(host, key=lambda o: o["ts"])] == ["aten::linear", "aten::addmm", "aten::empty"]
    extra = 100 * 2**20
    peak0 = max(e["args"]["Total Reserved"] for e in mem)
    first["args"]["Bytes"] += extra
    free["args"]["Bytes"] -= extra
    for e in mem:
        if e["ts"] >= first["ts"]:
            e["args"]["Total Reserved"] += extra
            if e["ts"] < free["ts"]:
                e["args"]["Total Allocated"] += extra
    peak1 = max(e["args"]["Total Reserved"] for e in mem)
    assert (peak0, peak1) == (224395264, 329252864)

    res = compare(str(src), str(_save(doc, tmp_path / "mem.json")))
    stat = _rows(res.sheet("MemoryCompareStatistic"), "Operator Name")
    assert {k: r[8] for k, r in stat.items() if r[8]} == {"aten::linear": 100.0}
    assert res.memory_contributors[["Name", "Diff(MB)"]].values.tolist() == [["aten::linear", 100.0]]
    assert _cells(res, "Mem Usage") == [f"{peak0 / 2**30:.2f}G", f"{peak1 / 2**30:.2f}G"] == ["0.21G", "0.31G"]
    line = memory_line(res.frames["memory"])
    assert line.startswith("Peak reserved memory (Mem Usage) 0.21 GB -> 0.31 GB (+0.10 GB, +46.73%).\n")
    assert line.endswith(" (+100.00 MB).")
    m = to_document(res)["summary"]["memory"]
    assert (m["diff_mb"], m["base_peak_gb"], m["comparison_peak_gb"]) == (100.0, peak0 / 2**30, peak1 / 2**30)
    assert not _waterfall(res) and not len(res.contributors)


# --------------------------------------------------------------------------- streams and launch APIs

def test_gemm_on_another_hip_stream_and_launched_by_another_api(samples, tmp_path):
    """A GEMM moved from stream 0 to stream 1 moves no figure: categories go by name and the covering op, the
    union of computing counts every stream, and stream 0 stays the compute stream (59 of 60 kernels). The same
    GEMM's launch call renamed hipExtModuleLaunchKernel -> hipLaunchKernel: the launch flow (by correlation id)
    still links it to aten::addmm, so no time, operator or module row moves; ApiCompare counts the calls by name
    (hipLaunchKernel 30 -> 31, hipExtModuleLaunchKernel 26 -> 25)."""
    src = samples / BERT
    before = _load(src)["traceEvents"]
    same = compare(str(src), str(src))
    doc = _load(src)
    _device(doc["traceEvents"], _GEMM)["args"]["stream"] = 1
    assert not _delta(before, doc["traceEvents"])
    res = compare(str(src), str(_save(doc, tmp_path / "stream.json")))
    for name in res.sheet_names:
        assert res.sheet(name).equals(same.sheet(name)), name

    doc = _load(src)
    call = _launch(doc["traceEvents"], _GEMM)
    assert call["name"] == "hipExtModuleLaunchKernel"
    call["name"] = "hipLaunchKernel"
    calls = [{n: sum(e.get("cat") == "cuda_runtime" and e["name"] == n for e in ev)
              for n in ("hipLaunchKernel", "hipExtModuleLaunchKernel")} for ev in (before, doc["traceEvents"])]
    assert calls == [{"hipLaunchKernel": 30, "hipExtModuleLaunchKernel": 26},
                     {"hipLaunchKernel": 31, "hipExtModuleLaunchKernel": 25}]
    res = compare(str(src), str(_save(doc, tmp_path / "launch.json")))
    for name in res.sheet_names:
        if name != "ApiCompare":
            assert res.sheet(name).equals(same.sheet(name)), name
    api = res.sheet("ApiCompare")
    got = {n: (a, b) for n, a, b in zip(api["api name"], api["Calls"], api["Calls.1"], strict=True)
           if n in ("hipLaunchKernel", "hipExtModuleLaunchKernel")}
    assert got == {"hipLaunchKernel": (30, 31), "hipExtModuleLaunchKernel": (26, 25)}
