"""GPU collectives outside NCCL / RCCL are communication, and GPU families name the collective (docs/differences.md,
"GPU: RCCL and other libraries' collective kernels are communication; families name the collective"). Figures are
recomputed from the raw JSON with the json module and plain Python interval arithmetic, not with our loader,
timeline or classifier."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from spans import union

from msprof_compare.api import compare
from msprof_compare.compare import classify as cl
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

EXCERPT = Path(__file__).resolve().parent / "data" / "kineto" / "b200_vllm_allreduce_excerpt.pt.trace.json"
B200 = "tracelens/tests/traces/b200/eager_trace.json.gz"
MULTIMEM = "void (anonymous namespace)::multimem_all_reduce_kernel<"


def _ns(us: float) -> int:
    return int(Decimal(repr(us)) * 1000)


def _length(spans: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in union(spans))


def _walk(events: list[dict], is_comm) -> dict[str, int]:
    """E2E (kernels and memcpys), computing and uncovered communication (ns) of the kernels, by reference-1 §4.3
    with ``is_comm`` naming the communication kernels; no SDMA-named kernel is in these traces (checked)."""
    copies = [e for e in events if e.get("ph") == "X" and e.get("cat") == "gpu_memcpy"]
    ks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert not any(w in k["name"].lower() for k in ks for w in ("htod", "dtod", "dtoh", "memset (device)"))
    spans = [(_ns(k["ts"]), _ns(k["ts"]) + _ns(k["dur"]), is_comm(k["name"])) for k in ks]
    compute = [(s, e) for s, e, c in spans if not c]
    comm = [(s, e) for s, e, c in spans if c]
    # communication not covered by computing: the comm union's length minus its overlap with computing
    overlap = _length([(max(s, cs), min(e, ce)) for s, e in union(comm) for cs, ce in union(compute)
                       if max(s, cs) < min(e, ce)])
    ends = [e for _, e, _ in spans] + [_ns(c["ts"]) + _ns(c["dur"]) for c in copies]
    starts = [s for s, _, _ in spans] + [_ns(c["ts"]) for c in copies]
    return {"e2e": max(ends) - min(starts), "computing": _length(compute),
            "uncovered": _length(comm) - overlap, "comm_calls": len(comm)}


def _nccl_or_multimem(name: str) -> bool:
    return name.startswith("nccl") or name.startswith(MULTIMEM)


def _breakdown(path: Path, ini: Path | None = None, monkeypatch=None):
    if ini is not None:
        monkeypatch.setenv(cl.CONFIG_ENV, str(ini))
    return gpu_breakdown(load_profile(str(path), build_options(enable_profiling_compare=True)[0]))


@pytest.mark.parametrize("name, function", [
    ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, "
     "unsigned int**, unsigned long, unsigned long)", "multimem_all_reduce_kernel"),
    # a ">" operator inside a template argument's parentheses (vLLM's fused_add_rms_norm_kernel, from the B200 trace)
    ("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
     "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)", "fused_add_rms_norm_kernel"),
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllGather_RING_LL"),
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_"
     "kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}> >(int, T1)",
     "elementwise_kernel"),
    ("nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN", "nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN"),
    ("aiter::fmha_fwd_hd128_bf16_rtz", "fmha_fwd_hd128_bf16_rtz"),
    ("Memcpy DtoD (Device -> Device)", "DtoD"),
    # what follows the parameters (clang's clone suffix, a const member)
    ("void ns::my_all_reduce_kernel<float>(float*) [clone .kd]", "my_all_reduce_kernel"),
    ("void ns::S::run_kernel<float>(float*) const", "run_kernel"),
    ("ncclKernel_x(int) [clone .kd]", "ncclKernel_x"),
    # a name ending in a digit or "_" right before its parameters
    ("void ns::reduce_2stage2(float*) [clone .kd]", "reduce_2stage2"),
    ("void ns::f_(int) const", "f_"),
    # brackets that do not balance: the text before the first bracket
    ("void f<bool operator<(int)>(int)", "f"),
    ("void foo_kernel<WarpAllReduce<float>, bool operator< >(float*)", "foo_kernel"),
    ("g(int", "g"),
    ("(anonymous)", "(anonymous)"),  # nothing outside brackets: the name itself
    ("ns::h)(x", "h)"),
    ("", ""),
])
def test_kernel_function_name(name, function):
    assert cl.kernel_function_name(name) == function


@pytest.mark.parametrize("name, comm", [
    # NCCL / RCCL by prefix, in any case (reference-1 §3.1: the name predicates ignore case)
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", True),
    ("NCCLKernel_x", True),
    ("rcclGenericKernel", True),
    # PyTorch symmetric memory (CUDA kernels and its Triton kernels)
    ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)",
     True),
    ("two_shot_all_reduce_kernel", True),
    ("void c10d::symmetric_memory::multimem_all_gather_kernel<16>(unsigned int*, unsigned long)", True),
    # vLLM / SGLang custom all-reduce, TensorRT-LLM, AMD quick reduce
    ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, vllm::Signal*, __nv_bfloat16*, int)",
     True),
    ("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(tensorrt_llm::kernels::AllReduceParams)",
     True),
    ("void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP, __half>(__half const*, __half*, int)", True),
    ("void moe::all_to_all_dispatch<float>(float*)", True),
    # not collectives: a reduce functor as a template argument, torch.compile's fused kernels named after the ops
    # around them, CUB reductions, gathers
    ("void foo_kernel<WarpAllReduce<float> >(float*)", False),
    ("void foo_kernel<WarpAllReduce<float>, bool operator< >(float*)", False),
    ("triton_poi_fused_all_reduce_0", False),
    ("triton_red_fused__to_copy_all_gather_1", False),
    ("triton_tem_fused_all_gather_mm_0", False),
    ("void triton_poi_fused_all_reduce_0(float*)", False),  # the prefix of the function name counts
    # a later occurrence may start a word where the first does not
    ("void ns::small_reduce_then_all_reduce<float>(float*)", True),
    # a word counts where a word of the name starts: a split-KV attention's combine step is no all-reduce
    ("void flash::small_reduce_kernel<float>(float*)", False),
    ("void ns::small_gather_rows<float>(float*)", False),
    ("void ns::OneShotAllReduce<float>(float*)", True),
    ("void ns::fp8allreduce_kernel<float>(float*)", True),  # after a digit: no letter, so a word starts there
    ("void ns::my_all_reduce_kernel<float>(float*) [clone .kd]", True),
    ("void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<long*, long*> >(long*)", False),
    ("void at::native::reduce_kernel<512, 1>(int)", False),
    ("void at::native::index_select_gather_kernel<float>(float*)", False),
    ("Memcpy DtoD (Device -> Device)", False),
])
def test_gpu_comm_names(name, comm):
    assert cl.is_gpu_comm_kernel_name([name], cl.load_keywords(cl._DEFAULT_INI)).tolist() == [comm]


def test_inductor_kernels_whatever_not_cube_prefix_says():
    """torch.compile's kernels are no collectives even with NOT_CUBE_PREFIX emptied (the way to get the original's
    Cube rule back): the two keys do not depend on each other."""
    kw = dataclasses.replace(cl.load_keywords(cl._DEFAULT_INI), not_cube_prefix=())
    names = ["triton_poi_fused_all_reduce_0", "triton_tem_fused_all_gather_mm_0", "two_shot_all_reduce_kernel"]
    assert cl.is_gpu_comm_kernel_name(names, kw).tolist() == [False, False, True]


def _ini(tmp_path: Path, extra: str | None) -> Path:
    """The packaged file with GPU_COMM_MASK removed, then ``extra`` appended to [OP_MASK] when given."""
    lines = [ln for ln in Path(cl._DEFAULT_INI).read_text().splitlines() if not ln.startswith("GPU_COMM_MASK")]
    if extra is not None:
        lines.insert(lines.index("[OP_MASK]") + 1, extra)
    ini = tmp_path / "k.ini"
    ini.write_text("\n".join(lines) + "\n")
    return ini


def test_gpu_comm_mask_key(tmp_path):
    """A file written for the original (no key) gets the default words; an empty value gives the original's rule
    (NCCL / RCCL prefixes only); a value replaces the words."""
    assert cl.load_keywords(cl._DEFAULT_INI).gpu_comm == frozenset(cl.GPU_COLLECTIVE_WORDS)
    assert cl.load_keywords(_ini(tmp_path, None)).gpu_comm == frozenset(cl.GPU_COLLECTIVE_WORDS)
    empty = cl.load_keywords(_ini(tmp_path, "GPU_COMM_MASK ="))
    assert empty.gpu_comm == frozenset()
    names = ["void (anonymous namespace)::multimem_all_reduce_kernel<float, 16>(float*)", "ncclKernel_x",
             "my_Exchange_kernel"]
    assert cl.is_gpu_comm_kernel_name(names, empty).tolist() == [False, True, False]
    mine = cl.load_keywords(_ini(tmp_path, "GPU_COMM_MASK = Exchange"))
    assert cl.is_gpu_comm_kernel_name(names, mine).tolist() == [False, True, True]


def test_excerpt_breakdown(tmp_path, monkeypatch):
    """Two symmetric-memory all-reduces between a layer's GEMMs, norms and MoE kernels (one stream, so the
    all-reduces are wholly uncovered); with an empty GPU_COMM_MASK they are computing, as in the original."""
    events = json.loads(EXCERPT.read_text())["traceEvents"]
    want = _walk(events, _nccl_or_multimem)
    assert want["comm_calls"] == 2
    # µs from the event list: 25.12 + 27.488
    assert want["uncovered"] == 52_608
    bd = _breakdown(EXCERPT)
    assert (bd.e2e_ns, bd.computing_ns, bd.uncovered_comm_ns) == (want["e2e"], want["computing"], want["uncovered"])

    original = _walk(events, lambda n: n.startswith("nccl"))
    assert original["uncovered"] == 0 and original["computing"] == want["computing"] + 52_608
    # the lists a run read once and passes in count, not the file read again
    empty = dataclasses.replace(cl.load_keywords(cl._DEFAULT_INI), gpu_comm=frozenset())
    bd = gpu_breakdown(load_profile(str(EXCERPT), build_options(enable_profiling_compare=True)[0]), kw=empty)
    assert (bd.e2e_ns, bd.computing_ns, bd.uncovered_comm_ns) == (original["e2e"], original["computing"], 0)
    bd = _breakdown(EXCERPT, _ini(tmp_path, "GPU_COMM_MASK ="), monkeypatch)
    assert (bd.e2e_ns, bd.computing_ns, bd.uncovered_comm_ns) == (original["e2e"], original["computing"], 0)


def test_excerpt_communication_sheet():
    """CommunicationCompare names the family by the collective (as HCCL's op families) and takes every call."""
    res = compare(EXCERPT, EXCERPT, enable_communication_compare=True)
    rows = res.sheet("CommunicationCompare").values.tolist()
    assert len(rows) == 1
    durs = [k["dur"] for k in json.loads(EXCERPT.read_text())["traceEvents"]
            if k.get("cat") == "kernel" and k["name"].startswith(MULTIMEM)]
    assert rows[0][1] == "allreduce" and pd.isna(rows[0][2])  # no task name: blank
    assert rows[0][3:8] == [2, pytest.approx(sum(durs)), pytest.approx(sum(durs) / 2), max(durs), min(durs)]
    assert rows[0][15:] == [0, 1]


def test_breakdown_takes_no_memcpy_as_a_collective(tmp_path):
    """A word of one's own that names a memcpy (``ptop`` in ``Memcpy PtoP``) makes it no communication in the time
    breakdown either: memcpys count by the original's rule only (E2E, SDMA), as in CommunicationCompare."""
    trace = json.loads(EXCERPT.read_text())
    gemm = next(e for e in trace["traceEvents"] if e.get("cat") == "kernel" and e["name"].startswith("nvjet_"))
    trace["traceEvents"].append(dict(gemm, cat="gpu_memcpy", name="Memcpy PtoP (Device -> Device)",
                                     args=dict(gemm["args"], stream=99)))  # not the compute stream: no SDMA
    path = tmp_path / "ptop.pt.trace.json"
    path.write_text(json.dumps(trace))
    kw = dataclasses.replace(cl.load_keywords(cl._DEFAULT_INI), gpu_comm=frozenset({"ptop"}))
    bd = gpu_breakdown(load_profile(str(path), build_options(enable_profiling_compare=True)[0]), kw=kw)
    assert bd.uncovered_comm_ns == 0  # only the mask's word: the all-reduces are computing now


def test_communication_sheet_follows_the_key(tmp_path, monkeypatch):
    """The sheet reads the same lists as the breakdown: an empty GPU_COMM_MASK leaves no collective in the
    excerpt (no sheet), a word of one's own adds kernels, never memcpys (the breakdown counts no memcpy as
    communication)."""
    monkeypatch.setenv(cl.CONFIG_ENV, str(_ini(tmp_path, "GPU_COMM_MASK =")))
    assert "CommunicationCompare" not in compare(EXCERPT, EXCERPT, enable_communication_compare=True).sheet_names
    trace = json.loads(EXCERPT.read_text())
    gemm = next(e for e in trace["traceEvents"] if e.get("cat") == "kernel" and e["name"].startswith("nvjet_"))
    copy = dict(gemm, cat="gpu_memcpy", name="Memcpy PtoP (Device -> Device)")
    trace["traceEvents"].append(copy)
    path = tmp_path / "x.pt.trace.json"
    path.write_text(json.dumps(trace))
    monkeypatch.setenv(cl.CONFIG_ENV, str(_ini(tmp_path, "GPU_COMM_MASK = nvjet, ptop")))
    rows = compare(path, path, enable_communication_compare=True).sheet("CommunicationCompare").values.tolist()
    nvjet = [e for e in trace["traceEvents"] if e.get("cat") == "kernel" and e["name"].startswith("nvjet_")]
    assert len(nvjet) == 2 and nvjet[0]["name"] != nvjet[1]["name"]
    # a word of one's own names no collective: one family per function name (the lower-cased kernel name here),
    # no row for the memcpy
    assert {r[1]: (r[3], r[4]) for r in rows} == {e["name"].lower(): (1, pytest.approx(e["dur"])) for e in nvjet}


def test_npu_communication_compare_ignores_the_keyword_file(samples, tmp_path, monkeypatch):
    """NPU inputs never read the keyword lists in CommunicationCompare: a broken MSPROF_COMPARE_CONFIG does
    not stop that comparison (a Kineto side does read them, before loading: tests/test_classify.py)."""
    bad = tmp_path / "bad.ini"
    bad.write_text("[OP_MASK]\n")
    monkeypatch.setenv(cl.CONFIG_ENV, str(bad))
    npu = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    if not npu.is_dir():
        pytest.skip("sample absent")
    assert compare(npu, npu, enable_communication_compare=True).sheet_names == ["CommunicationCompare"]


def test_b200_vllm_sample(samples):
    """The whole vLLM eager trace: 73 all-reduces of PyTorch symmetric memory (2.120 ms) and one NCCL
    all-gather join the uncovered communication time and CommunicationCompare."""
    path = samples / B200
    if not path.is_file():
        pytest.skip("sample absent")
    events = json.load(gzip.open(path))["traceEvents"]
    want = _walk(events, _nccl_or_multimem)
    bd = _breakdown(path)
    assert (bd.e2e_ns, bd.computing_ns, bd.uncovered_comm_ns) == (want["e2e"], want["computing"], want["uncovered"])
    assert want["uncovered"] == 2_141_501
    res = compare(path, path, enable_communication_compare=True)
    rows = res.sheet("CommunicationCompare").values.tolist()
    got = {r[1]: (r[3], r[4]) for r in rows}
    mm = [k["dur"] for k in events if k.get("cat") == "kernel" and k["name"].startswith(MULTIMEM)]
    nccl = [k["dur"] for k in events if k.get("cat") == "kernel" and k["name"].startswith("nccl")]
    assert got == {"allreduce": (len(mm), pytest.approx(sum(mm))), "allgather": (len(nccl), pytest.approx(sum(nccl)))}
    assert (len(mm), len(nccl)) == (73, 1)


@pytest.mark.parametrize("name, family", [
    ("ncclKernel_AllReduce_RING_LL_Sum_float", "allreduce"),
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "allgather"),
    ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "reducescatter"),
    ("ncclKernel_Broadcast_RING_LL_Sum_int8_t", "broadcast"),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "sendrecv"),
    ("ncclKernel_Recv_x", "receive"),  # HCCL's spelling (hcom_receive_)
    # NCCL 2.6 and older: the collective follows the prefix without "_"
    ("ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)", "allreduce"),
    ("ncclReduceScatterTreeLL128Kernel_sum_bf16", "reducescatter"),
    ("rcclKernel_AllGather_x", "allgather"),
    # no collective in the name: the original's family (first "_" piece)
    ("ncclDevKernel_Generic_4", "nccldevkernel"),
    ("ncclKernel_x", "ncclkernel"),
    # other libraries: the first default word in the function name
    ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)", "allreduce"),
    ("void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*)", "allreduce"),
    ("void c10d::symmetric_memory::multimem_all_gather_kernel<16>(unsigned int*)", "allgather"),
    ("void ns::fused_reduce_scatter_all_gather_kernel<float>(float*)", "reducescatter"),
    ("void moe::all_to_all_dispatch<float>(float*)", "alltoall"),
])
def test_gpu_families(name, family):
    from msprof_compare.compare import communication

    assert communication.gpu_family([name], cl.load_keywords(cl._DEFAULT_INI))[0].tolist() == [family]


def test_gpu_and_npu_collectives_pair(samples, reference_outputs):
    """GPU against NPU: NCCL's AllReduce kernels pair with HCCL's allreduce ops (the original's "ncclkernel" row
    never paired with any NPU row, and lumped the Broadcasts in). NPU figures from the original's pair-1 workbook,
    GPU figures from the raw JSON."""
    npu = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    gpu = samples / "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
    if not npu.is_dir() or not gpu.is_file():
        pytest.skip("sample absent")
    ref = pd.read_excel(reference_outputs / "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx",
                        sheet_name="CommunicationCompare", header=2)
    npu_row = ref.iloc[0]
    assert npu_row["Communication OP Name"] == "allreduce"
    events = json.load(gzip.open(gpu))["traceEvents"]
    by = {}
    for k in events:
        if k.get("cat") == "kernel" and k["name"].startswith("nccl"):
            by.setdefault(k["name"].split("_")[1].lower(), []).append(k["dur"])
    assert sorted(by) == ["allreduce", "broadcast"]
    rows = compare(npu, gpu, enable_communication_compare=True).sheet("CommunicationCompare")
    summary = rows[rows["Communication OP Name"].fillna(rows["Communication OP Name.1"]) != "|"]
    got = {(r["Communication OP Name"] if pd.notna(r["Communication OP Name"]) else None, r["Communication OP Name.1"]):
           (r["Calls"] if pd.notna(r["Calls"]) else math.nan, r["Total Duration(us)"], r["Calls.1"],
            r["Total Duration(us).1"]) for _, r in summary.iterrows()}
    assert got == {
        ("allreduce", "allreduce"): (npu_row["Calls"], pytest.approx(npu_row["Total Duration(us)"], rel=1e-6),
                                     len(by["allreduce"]), pytest.approx(sum(by["allreduce"]))),
        (None, "broadcast"): (pytest.approx(math.nan, nan_ok=True), 0.0, len(by["broadcast"]),  # blank Calls
                              pytest.approx(sum(by["broadcast"]))),
    }


RCCL = Path(__file__).resolve().parent / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
RESNET_MI300 = "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
HCCL_WORD = {"allreduce": "allreduce", "broadcast": "broadcast"}  # PyTorch's Collective name -> HCCL's family


def _recorded_families(events: list[dict]) -> dict[str, list[float]]:
    """{family: kernel durations} of the NCCL / RCCL kernels by the raw JSON: a kernel whose name says no
    collective (``ncclDevKernel_Generic``) takes the ``Collective name`` PyTorch wrote on it, else that of the
    ``record_param_comms`` op around the runtime call with its correlation id; a kernel with neither (launched
    before the profile began) keeps "nccldevkernel"."""
    calls = {e["args"]["correlation"]: e for e in events if e.get("ph") == "X"
             and e.get("cat") in ("cuda_runtime", "runtime") and "correlation" in e.get("args", {})}
    records = [e for e in events if e.get("ph") == "X" and e.get("name") == "record_param_comms"]
    out: dict[str, list[float]] = {}
    for k in events:
        if k.get("cat") != "kernel" or not k["name"].startswith("ncclDevKernel_Generic"):
            continue
        name = k["args"].get("Collective name")
        if name is None:
            call = calls.get(k["args"].get("correlation"))
            around = sorted((r for r in records if call and (r["pid"], r["tid"]) == (call["pid"], call["tid"])
                             and r["ts"] <= call["ts"] <= r["ts"] + r["dur"]), key=lambda r: r["ts"])
            name = around[-1]["args"]["Collective name"] if around else None
        out.setdefault(HCCL_WORD[name] if name else "nccldevkernel", []).append(k["dur"])
    return out


def _sheet_families(path) -> dict[str, tuple[int, float]]:
    rows = compare(path, path, enable_communication_compare=True).sheet("CommunicationCompare")
    return {r["Communication OP Name"]: (r["Calls"], r["Total Duration(us)"]) for _, r in rows.iterrows()}


def _rccl(tmp_path: Path, kernel_names: bool = True, flows: bool = True, edit=None) -> Path:
    """The RCCL excerpt, written anew: without the Collective name PyTorch wrote on the kernels (so that only the
    records around the launches name them), without the launch flows, and / or changed by ``edit(events)``."""
    trace = json.loads(RCCL.read_text())
    events = trace["traceEvents"]
    if not kernel_names:
        for k in events:
            if k.get("cat") == "kernel":
                k["args"].pop("Collective name", None)
    if not flows:
        events[:] = [e for e in events if e.get("cat") != "ac2g"]
    if edit:
        edit(events)
    path = tmp_path / "rccl.pt.trace.json"
    path.write_text(json.dumps(trace))
    return path


def test_rccl_generic_kernels_take_the_recorded_collective(tmp_path):
    """RCCL runs every collective in ncclDevKernel_Generic; PyTorch names it on the kernel and in the
    record_param_comms op around the launch (excerpt: two broadcasts, one all-reduce, one kernel launched
    before the profile began). Either source alone gives the same families."""
    events = json.loads(RCCL.read_text())["traceEvents"]
    assert sum("Collective name" in k["args"] for k in events if k.get("cat") == "kernel") == 3
    want = _recorded_families(events)
    assert {f: len(d) for f, d in want.items()} == {"nccldevkernel": 1, "broadcast": 2, "allreduce": 1}
    expected = {f: (len(d), pytest.approx(sum(d))) for f, d in want.items()}
    assert _sheet_families(RCCL) == expected
    assert _sheet_families(_rccl(tmp_path, kernel_names=False)) == expected  # the records alone
    assert _sheet_families(_rccl(tmp_path, flows=False)) == expected  # the kernels alone
    # the records without launch flows: the kernel's correlation id finds its launch call
    assert _sheet_families(_rccl(tmp_path, kernel_names=False, flows=False)) == expected
    # neither: the original's one family
    assert _sheet_families(_rccl(tmp_path, kernel_names=False, flows=False, edit=_no_kernel_correlation)) == {
        "nccldevkernel": (4, pytest.approx(sum(sum(d) for d in want.values())))}


def _no_kernel_correlation(events: list[dict]) -> None:
    """Kernels that carry no correlation id: with the launch flows gone, nothing links them to their launch."""
    for k in events:
        if k.get("cat") == "kernel":
            k["args"].pop("correlation", None)


def test_rccl_unnamed_kernels_are_logged(tmp_path, caplog):
    """The kernel no record names keeps nccldevkernel; one line says that row may hold any collective."""
    with caplog.at_level("INFO", logger="msprof-analyze"):
        _sheet_families(RCCL)
    lines = [r.getMessage() for r in caplog.records if "name no collective" in r.getMessage()]
    lone = next(k["dur"] for k in json.loads(RCCL.read_text())["traceEvents"]
                if k.get("cat") == "kernel" and k["args"]["correlation"] == 4079)
    assert len(lines) == 1  # the same input on both sides: the line is said once (logs.said_once)
    assert f"1 of 4 collective kernels ({lone / 1000:.3f} ms)" in lines[0] and "nccldevkernel" in lines[0]
    line = (f"{RCCL}: 1 of 4 collective kernels ({lone / 1000:.3f} ms) name no collective (no Collective name recorded "
            "for their launch, e.g. launched before the profile began): their row nccldevkernel may hold any "
            "collective")
    assert lines == [f"{line} (both sides)"]
    # beside the bundled H100 trace (no collective kernel), on either side: the line names the excerpt's side
    other = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
    for pair, side in (((RCCL, other), "base side"), ((other, RCCL), "comparison side")):
        caplog.clear()
        with caplog.at_level("INFO", logger="msprof-analyze"):
            compare(*map(str, pair), enable_communication_compare=True)
        assert [m for m in caplog.messages if "name no collective" in m] == [f"{line} ({side})"]


def test_rccl_generic_kernels_full_trace(samples, tmp_path):
    path = samples / RESNET_MI300
    if not path.is_file():
        pytest.skip("sample absent")
    trace = json.load(gzip.open(path))
    want = _recorded_families(trace["traceEvents"])
    assert {f: len(d) for f, d in want.items()} == {"nccldevkernel": 5, "broadcast": 6, "allreduce": 6}
    expected = {f: (len(d), pytest.approx(sum(d))) for f, d in want.items()}
    assert _sheet_families(path) == expected
    for k in trace["traceEvents"]:  # the records alone
        if k.get("cat") == "kernel":
            k["args"].pop("Collective name", None)
    stripped = tmp_path / "resnet.json"
    stripped.write_text(json.dumps(trace))
    assert _sheet_families(stripped) == expected


def test_recorded_collective_odd_values_and_graph_replays(tmp_path):
    """A Collective name that is no text names nothing (the trace still loads); a kernel linked to a graph launch
    (a replay link) takes no collective from a record around that launch; records that say ``wait`` name none.
    (ProcessGroupNCCL's ``nccl:`` ranges, which would name them, are taken out.)"""
    kernels: dict[int, dict] = {}

    def edit(events):
        events[:] = [e for e in events if not str(e.get("name", "")).startswith("nccl:")]
        records = [e for e in events if e.get("name") == "record_param_comms"]
        allreduce = next(r for r in records if r["args"]["Collective name"] == "allreduce")
        broadcasts = [r for r in records if r["args"]["Collective name"] == "broadcast"]
        broadcasts[0]["args"]["Collective name"] = ["broadcast"]
        broadcasts[1]["args"]["Collective name"] = "wait"
        # the kernel launched before the profile began (its flow has no start) gets a graph launch inside the
        # all-reduce's record: the loader links it as a replay, which names no collective
        call = next(e for e in events if e.get("cat") == "cuda_runtime" and e["ts"] >= allreduce["ts"])
        events.append(dict(call, name="hipGraphLaunch", ts=call["ts"] + 1, dur=1,
                           args=dict(call["args"], correlation=4079)))
        kernels.update({k["args"]["correlation"]: k for k in events if k.get("cat") == "kernel"})

    fams = _sheet_families(_rccl(tmp_path, kernel_names=False, edit=edit))
    assert fams == {"nccldevkernel": (3, pytest.approx(sum(kernels[c]["dur"] for c in (4079, 5183, 5188)))),
                    "allreduce": (1, pytest.approx(kernels[5604]["dur"]))}


@pytest.mark.parametrize("args", [None, 5, ["allreduce"], "text"])
def test_record_args_that_are_no_object(tmp_path, args):
    """record_param_comms args are read only for CommunicationCompare: a trace whose records hold args that are
    no JSON object still loads for the other comparisons (kernel compare here: the excerpt has no computing
    kernel for the time breakdown). CommunicationCompare decodes every op's args, which must be objects: a
    clear one-line error, as before these records were read."""
    def edit(events):
        for r in events:
            if r.get("name") == "record_param_comms":
                r["args"] = args

    path = _rccl(tmp_path, kernel_names=False, edit=edit)
    assert compare(path, path, enable_kernel_compare=True).sheet_names == []
    got = {type(None): "null", int: "an integer", list: "a list", str: "a string"}[type(args)]
    with pytest.raises(ProfileError, match=f"invalid event args: args is {got}, where an object is due, in the event "):
        compare(path, path, enable_communication_compare=True)


@pytest.mark.parametrize("text, word", [
    ("allreduce", "allreduce"), ("allreduce_coalesced", "allreduce"), ("_allgather_base", "allgather"),
    ("allgather_into_tensor_coalesced", "allgather"), ("reduce_scatter_tensor_coalesced", "reducescatter"),
    ("_reduce_scatter_base", "reducescatter"), ("alltoall_base", "alltoall"), ("all_to_all", "alltoall"),
    ("all_to_allv", "alltoallv"), ("_broadcast_oop", "broadcast"), ("_reduce_oop", "reduce"),
    ("broadcast", "broadcast"), ("send", "send"), ("recv", "receive"), ("gather", "gather"), ("scatter", "scatter"),
    ("wait", None), ("barrier", None), ("coalesced", None), ("", None), ("_base", None), ("ALLREDUCE", "allreduce"),
])
def test_collective_word(text, word):
    from msprof_compare.compare.communication import collective_word

    assert collective_word(text) == word


def test_recorded_collective_first():
    """PyTorch's record says what an NCCL SendRecv kernel ran (send, recv, all_to_all ...) and names RCCL's
    generic kernel; a record that names no collective (wait) leaves the kernel name's; mask-named kernels keep
    theirs."""
    from msprof_compare.compare import communication

    names = ["ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_SendRecv(x)",
             "ncclDevKernel_Generic_4", "ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_Generic",
             "void (anonymous namespace)::multimem_all_reduce_kernel<float, 16>(float*)"]
    recorded = np.array(["all_to_all", "recv", "_allgather_base", "wait", "", "broadcast"], dtype=object)
    fam, named = communication.gpu_family(names, cl.load_keywords(cl._DEFAULT_INI), recorded)
    assert fam.tolist() == ["alltoall", "receive", "allgather", "allreduce", "nccldevkernel", "allreduce"]
    assert named.tolist() == [True, True, True, True, False, True]


def test_recorded_collective_nested_records(tmp_path):
    """The innermost record around the launch names it: a made-up all-reduce record inside the first broadcast's,
    ending before its launch call, and a made-up barrier record around the broadcast's."""
    def edit(events):
        call = next(e for e in events if e.get("cat") == "cuda_runtime" and e["args"]["correlation"] == 5183)
        outer = next(e for e in events if e.get("name") == "record_param_comms" and e["tid"] == call["tid"]
                     and e["ts"] <= call["ts"] <= e["ts"] + e["dur"])
        assert outer["args"]["Collective name"] == "broadcast" and call["ts"] - outer["ts"] > 3
        events.append(dict(outer, ts=outer["ts"] + 1, dur=round(call["ts"] - outer["ts"] - 2, 3),
                           args={"Collective name": "allreduce"}))
        events.append(dict(outer, ts=outer["ts"] - 1, dur=outer["dur"] + 2, args={"Collective name": "allreduce"}))

    path = _rccl(tmp_path, kernel_names=False, edit=edit)
    assert {f: c for f, (c, _) in _sheet_families(path).items()} == {"nccldevkernel": 1, "broadcast": 2,
                                                                     "allreduce": 1}



def _launch_5183(events):
    """The runtime call that launched the first broadcast kernel (correlation 5183) and the broadcast record
    around it."""
    call = next(e for e in events if e.get("cat") == "cuda_runtime" and e["args"]["correlation"] == 5183)
    record = next(e for e in events if e.get("name") == "record_param_comms" and e["tid"] == call["tid"]
                  and e["ts"] <= call["ts"] <= e["ts"] + e["dur"])
    assert record["args"]["Collective name"] == "broadcast" and call["ts"] - record["ts"] > 3
    return call, record


@pytest.mark.parametrize("case", ["ends_at_call", "touching_at_call", "same_start"])
def test_recorded_collective_records_touching_the_launch(tmp_path, case):
    """Records whose edges fall exactly on the launch call (the RCCL excerpt without the names on the kernels;
    made-up records on the launching thread of the first broadcast, correlation 5183, which no sample has):
    ``ends_at_call``: an all-reduce record inside the broadcast's, ending exactly where the call starts, holds
    the call (closed span) and is the innermost; ``touching_at_call``: that record plus an all-gather record
    starting exactly there (one ends where the next starts): the later-starting one holds the call's whole span;
    ``same_start``: an all-reduce record starting with the broadcast's and ending later encloses it, so the
    broadcast stays the innermost. The other kernels keep their record's collective (5188 broadcast, 5604
    all-reduce, 4079 none: nccldevkernel)."""
    kernels: dict[int, dict] = {}

    def edit(events):
        call, record = _launch_5183(events)
        start = round(record["ts"] + 1, 3)
        if case in ("ends_at_call", "touching_at_call"):
            events.append(dict(record, ts=start, dur=round(call["ts"] - start, 3),
                               args={"Collective name": "allreduce"}))
        if case == "touching_at_call":
            events.append(dict(record, ts=call["ts"], dur=round(call["dur"] + 1, 3),
                               args={"Collective name": "allgather"}))
        if case == "same_start":
            events.append(dict(record, dur=round(record["dur"] + 1, 3), args={"Collective name": "allreduce"}))
        kernels.update({k["args"]["correlation"]: k["dur"] for k in events if k.get("cat") == "kernel"})

    fams = _sheet_families(_rccl(tmp_path, kernel_names=False, edit=edit))
    first = {"ends_at_call": "allreduce", "touching_at_call": "allgather", "same_start": "broadcast"}[case]
    want: dict[str, list[int]] = {"nccldevkernel": [4079], "broadcast": [5188], "allreduce": [5604]}
    want.setdefault(first, []).append(5183)
    assert fams == {f: (len(c), pytest.approx(sum(kernels[i] for i in c))) for f, c in want.items()}


@pytest.mark.parametrize("text", ["wait", "coalesced", "braodcast"])
def test_a_kernel_text_naming_no_collective_leaves_the_record_around_its_launch(tmp_path, text):
    """A ``Collective name`` on the kernel that names no collective (``wait``, ``coalesced``, a misspelt one) is no
    record: the ``record_param_comms`` op around its launch names it, as for a kernel without the arg. The RCCL
    excerpt with that text on the first broadcast kernel (correlation 5183): its family stays the raw JSON's
    (``_recorded_families`` of the unedited events), where the text hid the record and the kernel read
    ``nccldevkernel`` (2 kernels, 8,530.789 + 14.319 us, beside 1 broadcast)."""
    def edit(events):
        kernel = next(k for k in events if k.get("cat") == "kernel" and k["args"]["correlation"] == 5183)
        assert kernel["args"]["Collective name"] == "broadcast"
        kernel["args"]["Collective name"] = text

    want = _recorded_families(json.loads(RCCL.read_text())["traceEvents"])
    assert sorted(len(d) for d in want.values()) == [1, 1, 2] and len(want["broadcast"]) == 2
    assert _sheet_families(_rccl(tmp_path, edit=edit)) == {f: (len(d), pytest.approx(sum(d)))
                                                           for f, d in want.items()}


@pytest.mark.parametrize("case", ["range", "outer_record"])
def test_a_record_naming_no_collective_leaves_the_next_source(tmp_path, case):
    """A ``record_param_comms`` op around the launch that names no collective (``barrier``) is no record: the
    next source names the kernel (the RCCL excerpt without the names on the kernels). ``range``: the broadcast
    record around the first broadcast's launch (correlation 5183) says ``barrier``, so the ``nccl:broadcast`` range
    inside it, around the launch, names it; ``outer_record``: a made-up ``barrier`` record inside the broadcast
    record, around the launch, with the ranges taken out, so the outer broadcast record names it. Either way the
    kernel stays ``broadcast``, where the barrier made it ``nccldevkernel``."""
    def edit(events):
        call, record = _launch_5183(events)
        if case == "range":
            ranges = [e for e in events if e.get("name") == "nccl:broadcast" and e["tid"] == call["tid"]
                      and e["ts"] <= call["ts"] <= e["ts"] + e["dur"]]
            assert len(ranges) == 1
            record["args"]["Collective name"] = "barrier"
        else:
            events[:] = [e for e in events if not str(e.get("name", "")).startswith("nccl:")]
            start = round(record["ts"] + 1, 3)
            events.append(dict(record, ts=start, dur=round(call["ts"] + call["dur"] + 1 - start, 3),
                               args={"Collective name": "barrier"}))

    want = _recorded_families(json.loads(RCCL.read_text())["traceEvents"])
    assert _sheet_families(_rccl(tmp_path, kernel_names=False, edit=edit)) == {
        f: (len(d), pytest.approx(sum(d))) for f, d in want.items()}


def test_no_line_when_no_kernel_names_a_collective(tmp_path, caplog):
    """The INFO line on unnamed kernels is for a side where others were named (docs/differences.md): the RCCL
    excerpt without the names on the kernels, the launch flows and the kernels' correlation ids names none, so its
    one nccldevkernel row is the original's and no line is written."""
    path = _rccl(tmp_path, kernel_names=False, flows=False, edit=_no_kernel_correlation)
    with caplog.at_level("INFO", logger="msprof-analyze"):
        assert list(_sheet_families(path)) == ["nccldevkernel"]
    assert not [r for r in caplog.records if "name no collective" in r.getMessage()]


DOCUMENTED_WORDS = {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter", "reducescatter",
                    "all_to_all", "alltoall", "cross_device_reduce"}


def test_gpu_comm_mask_words_are_the_documented_ones():
    """The packaged file and the default for files without the key hold the words docs/differences.md lists."""
    assert cl.load_keywords(cl._DEFAULT_INI).gpu_comm == DOCUMENTED_WORDS
    assert set(cl.GPU_COLLECTIVE_WORDS) == DOCUMENTED_WORDS


@pytest.mark.parametrize("name, family", [
    ("void ns::my_all_reduce_kernel<float>(float*)", "allreduce"),
    ("void ns::oneShotAllReduceKernel<float>(float*)", "allreduce"),
    ("void ns::fused_all_gather_kernel<float>(float*)", "allgather"),
    ("void ns::AllGatherKernel<float>(float*)", "allgather"),
    ("void ns::fused_reduce_scatter_kernel<float>(float*)", "reducescatter"),
    ("void ns::ReduceScatterKernel<float>(float*)", "reducescatter"),
    ("void ns::fused_all_to_all_kernel<float>(float*)", "alltoall"),
    ("void ns::AllToAllKernel<float>(float*)", "alltoall"),
    ("void vllm::cross_device_reduce_1stage<float, 2>(float*)", "allreduce"),
])
def test_every_default_word_names_a_collective(name, family):
    """Each default GPU_COMM_MASK word makes a kernel a collective of its own family (a word dropped from the
    list fails its case here)."""
    from msprof_compare.compare import communication

    kw = cl.load_keywords(cl._DEFAULT_INI)
    assert cl.is_gpu_comm_kernel_name([name], kw).tolist() == [True]
    assert communication.gpu_family([name], kw)[0].tolist() == [family]


MS_TIMELINE = ("mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1/"
               "timeline/msprof_1_0_1.json")


def test_gpu_collectives_pair_with_mindspore_graph_ops(samples, reference_outputs):
    """GPU against a MindSpore (CANN msprof) timeline, whose HCCL ops are graph ops named
    ``Default/AllReduce-op534_0``: the original's family (first ``_`` piece) is ``default/allreduce-op534``, which
    no GPU collective row could pair with. Beside a GPU side the graph op's collective names the family; two NPU
    sides keep the original's family (reference pair 9d). NPU figures from the raw timeline, GPU from the JSON."""
    gpu = samples / "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
    ms = samples / MS_TIMELINE
    if not ms.is_file() or not gpu.is_file():
        pytest.skip("sample absent")
    by: dict[str, list[float]] = {}
    for k in json.load(gzip.open(gpu))["traceEvents"]:
        if k.get("cat") == "kernel" and k["name"].startswith("nccl"):
            by.setdefault(k["name"].split("_")[1].lower(), []).append(k["dur"])
    with open(ms) as f:
        timeline = json.load(f)
    hccl = next(e["pid"] for e in timeline if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "HCCL")
    ops = [e for e in timeline if e.get("ph") == "X" and e["pid"] == hccl and "/" in e["name"]]
    assert [e["name"] for e in ops] == ["Default/AllReduce-op534_0"]
    for base, comparison, gpu_cols, npu_cols in ((gpu, ms, "", ".1"), (ms, gpu, ".1", "")):
        rows = compare(base, comparison, enable_communication_compare=True).sheet("CommunicationCompare")
        summary = rows[rows["Communication OP Name"].fillna(rows["Communication OP Name.1"]) != "|"]
        got = {(r["Communication OP Name"], r["Communication OP Name.1"]):
               (r["Calls" + gpu_cols], r["Total Duration(us)" + gpu_cols], r["Calls" + npu_cols],
                r["Total Duration(us)" + npu_cols]) for _, r in summary.iterrows()}
        both = ("allreduce", "allreduce")
        assert got[both] == (len(by["allreduce"]), pytest.approx(sum(by["allreduce"])), 1,
                             pytest.approx(float(ops[0]["dur"])))
        assert len(got) == 2  # and the GPU-only broadcast
        # the graph op's HCCL tasks stay under it
        tasks = rows[rows["Communication OP Name" + npu_cols] == "|"]["Task Name" + npu_cols].tolist()
        assert "Notify_Wait" in tasks
    # two NPU sides: the original's family, as in reference pair 9d
    base_9d = samples / MS_TIMELINE.replace("PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1",
                                            "PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0").replace(
        "msprof_1_0_1", "msprof_0_2_1")
    names = compare(base_9d, ms, enable_communication_compare=True).sheet("CommunicationCompare")[
        "Communication OP Name"].tolist()
    book = reference_outputs / "9d-mindspore-legacy-msprof-timeline-files/performance_comparison_result.xlsx"
    ref = pd.read_excel(book, sheet_name="CommunicationCompare", header=2)["Communication OP Name"].tolist()
    assert names == ref and names[0] == "default/allreduce-op534"


def test_scoped_graph_op_with_underscore_pairs_with_gpu(samples, tmp_path):
    """A MindSpore graph op's scope may hold ``_`` (the staged MindSpore profiles name ops
    ``Default/network-WithLossCell/_backbone-AlexNet/Cast-op239``), and a collective of an auto-parallel network
    sits in such a scope. The original's family is the name's first ``_`` piece, ``default/network-withlosscell/``,
    so the collective's name was lost before it was read and the GPU side's allreduce stayed unpaired. An edited
    copy of the real timeline whose all-reduce is so scoped pairs as the unscoped one does (figures from the raw
    files, as in test_gpu_collectives_pair_with_mindspore_graph_ops)."""
    gpu = samples / "hta/tests/data/nccl_parser_config/nccl_data.json.gz"
    ms = samples / MS_TIMELINE
    if not ms.is_file() or not gpu.is_file():
        pytest.skip("sample absent")
    scoped = "Default/network-WithLossCell/_backbone-AlexNet/AllReduce-op534_0"
    text = ms.read_text()
    assert text.count('"Default/AllReduce-op534_0"') >= 1
    copy = tmp_path / ms.relative_to(samples / "mindinsight")
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace('"Default/AllReduce-op534_0"', json.dumps(scoped)))
    timeline = json.loads(copy.read_text())
    hccl = next(e["pid"] for e in timeline if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "HCCL")
    ops = [e for e in timeline if e.get("ph") == "X" and e["pid"] == hccl and "/" in e["name"]]
    assert [e["name"] for e in ops] == [scoped]
    nccl = [k["dur"] for k in json.load(gzip.open(gpu))["traceEvents"]
            if k.get("cat") == "kernel" and k["name"].startswith("nccl") and k["name"].split("_")[1].lower()
            == "allreduce"]
    rows = compare(gpu, copy, enable_communication_compare=True).sheet("CommunicationCompare")
    summary = rows[rows["Communication OP Name"].fillna(rows["Communication OP Name.1"]) != "|"]
    got = {(r["Communication OP Name"], r["Communication OP Name.1"]):
           (r["Calls"], r["Total Duration(us)"], r["Calls.1"], r["Total Duration(us).1"])
           for _, r in summary.iterrows()}
    assert got[("allreduce", "allreduce")] == (len(nccl), pytest.approx(sum(nccl)), 1,
                                               pytest.approx(float(ops[0]["dur"])))
    assert len(got) == 2  # and the GPU-only broadcast
    # two NPU sides keep the original's family, the scope's first piece
    npu = compare(samples / MS_TIMELINE, copy, enable_communication_compare=True).sheet("CommunicationCompare")
    assert "default/network-withlosscell/" in npu["Communication OP Name.1"].tolist()


def _range_families(events: list[dict]) -> dict[str, list[float]]:
    """Independently of the tool: each NCCL kernel's collective from the innermost ``nccl:`` range (the
    ProcessGroupNCCL profiling range) around the runtime call with the kernel's correlation id, mapped by hand
    to HCCL's words; the kernel name's collective where no range is around the call."""
    word = {"nccl:all_to_all": "alltoall", "nccl:all_reduce": "allreduce", "nccl:_all_gather_base": "allgather"}
    calls = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime"}
    ranges = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("nccl:")]
    out: dict[str, list[float]] = {}
    for k in events:
        if k.get("cat") != "kernel" or not k["name"].startswith("nccl"):
            continue
        call = calls[k["args"]["correlation"]]
        around = sorted((r for r in ranges if r["tid"] == call["tid"] and r["ts"] <= call["ts"] <= r["ts"] + r["dur"]),
                        key=lambda r: r["ts"])
        fam = word[around[-1]["name"]] if around else k["name"].split("_")[1].lower()
        out.setdefault(fam, []).append(k["dur"])
    return out


def test_nccl_ranges_name_the_collective_of_sendrecv_kernels(dlrm_rank):
    """PyTorch before 2.2 writes no Collective name (neither on the kernel nor on record_param_comms), so an
    all_to_all's NCCL kernels, ``ncclKernel_SendRecv_...``, were the row ``sendrecv``, which no user asked for
    and no HCCL family pairs with. ProcessGroupNCCL's range around the launch (``nccl:all_to_all``) names it:
    the 8-rank DLRM job's ranks 0 and 1 get ``alltoall`` (5 kernels each, 3,999 vs 9,506 us, recomputed from
    the raw JSON) beside ``allreduce``."""
    base, comp = dlrm_rank(0), dlrm_rank(1)
    want = [_range_families(json.loads(p.read_text())["traceEvents"]) for p in (base, comp)]
    assert {f: len(d) for f, d in want[0].items()} == {"alltoall": 5, "allreduce": 3}
    assert sum(want[0]["alltoall"]) == 3999 and sum(want[1]["alltoall"]) == 9506
    rows = compare(base, comp, enable_communication_compare=True).sheet("CommunicationCompare")
    got = {r["Communication OP Name"]: (r["Calls"], r["Total Duration(us)"], r["Calls.1"], r["Total Duration(us).1"])
           for _, r in rows.iterrows()}
    assert got == {f: (len(want[0][f]), pytest.approx(sum(want[0][f])), len(want[1][f]),
                       pytest.approx(sum(want[1][f]))) for f in ("alltoall", "allreduce")}


def test_dlrm_communication_figures_and_contributors_from_the_raw_trace(dlrm_rank):
    """Every figure of the DLRM ranks' CommunicationCompare rows beyond the calls and totals pinned above (Avg,
    Max, Min of each side, Diff Duration(us), Diff Ratio) and the Summary's communication contributors, from the
    kernels of the raw JSON grouped by their nccl: range: the only sample pair of GPU traces whose two sides both
    ran collectives of different lengths (reference pair 7's comparison side has none; the planted-change tests
    move one kernel, Diff Ratio 1.0). Rows by reference-2 §4.3, diff and ratio by §0.1."""
    base, comp = dlrm_rank(0), dlrm_rank(1)
    want = [_range_families(json.loads(p.read_text())["traceEvents"]) for p in (base, comp)]
    rows = compare(base, comp, enable_communication_compare=True).sheet("CommunicationCompare")
    assert rows["Communication OP Name"].tolist() == ["alltoall", "allreduce"]  # no task rows: a trace has none
    for _, r in rows.iterrows():
        fam = r["Communication OP Name"]
        for sfx, durs in zip(("", ".1"), (want[0][fam], want[1][fam]), strict=True):
            got = [r[f"{k} Duration(us){sfx}"] for k in ("Total", "Avg", "Max", "Min")] + [r["Calls" + sfx]]
            assert got == pytest.approx([sum(durs), sum(durs) / len(durs), max(durs), min(durs), len(durs)]), fam
        b, c = sum(want[0][fam]), sum(want[1][fam])
        assert (r["Diff Duration(us)"], r["Diff Ratio"]) == (round(c - b, 2), round(c / b, 4)), fam
    # by hand: alltoall 3999 -> 9506 us (+5507, 9506 / 3999 = 2.37709...), allreduce 1799 -> 1830 us (+31, 1.01723...)
    assert rows[["Diff Duration(us)", "Diff Ratio"]].values.tolist() == [[5507.0, 2.3771], [31.0, 1.0172]]
    # the Summary's contributors (ms): the families by |change|, until 80 % of the summed |change| is covered;
    # alltoall's 5.507 ms is 5.507 / (5.507 + 0.031) = 0.994402 of it, so it is the one row
    c = compare(base, comp).communication_contributors
    assert c.values.tolist() == [[1, "alltoall", 3.999, 9.506, 5.507, pytest.approx(5507 / 5538, abs=1e-12),
                                  pytest.approx(5507 / 5538, abs=1e-12)]]
    assert c.columns.tolist() == ["Rank", "Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share",
                                  "Cumulative Share"]


TRACE_FILTER = "hta/tests/data/trace_filter/sampled_rank-{}.json.gz"


def test_correlation_links_kernels_of_a_trace_without_flows(samples, tmp_path):
    """hta's sampled ranks hold no launch flow (HTA's sampling left none), but each kernel and its launch call
    share a ``correlation`` id: it finds the ``nccl:`` range around the launch, so the 10 SendRecv kernels of each
    rank are their collectives (all_to_all, all_reduce, _all_gather_base) instead of one ``sendrecv`` row.
    Figures from the raw JSON (rank 0: 4 / 182,403 us, 4 / 107,656 us, 2 / 106,140 us)."""
    base, comp = (samples / TRACE_FILTER.format(r) for r in (0, 1))
    events = [json.load(gzip.open(p))["traceEvents"] for p in (base, comp)]
    assert not any(e.get("cat") == "ac2g" for ev in events for e in ev)  # no launch flow at all
    want = [_range_families(ev) for ev in events]
    assert {f: (len(d), sum(d)) for f, d in want[0].items()} == {
        "alltoall": (4, 182403), "allreduce": (4, 107656), "allgather": (2, 106140)}
    rows = compare(base, comp, enable_communication_compare=True).sheet("CommunicationCompare")
    got = {r["Communication OP Name"]: (r["Calls"], r["Total Duration(us)"], r["Calls.1"], r["Total Duration(us).1"])
           for _, r in rows.iterrows()}
    assert got == {f: (len(want[0][f]), pytest.approx(sum(want[0][f])), len(want[1][f]),
                       pytest.approx(sum(want[1][f]))) for f in ("alltoall", "allreduce", "allgather")}
    # a correlation id two kernels share (as a graph launch's kernels do, computing ones too) links neither:
    # NCCL kernels 0 and 1 share one, NCCL kernel 2 shares one with a computing kernel; those three stay sendrecv
    doc = json.load(gzip.open(base))
    kernels = [k for k in doc["traceEvents"] if k.get("cat") == "kernel"]
    nccl = [k for k in kernels if k["name"].startswith("nccl")]
    other = next(k for k in kernels if not k["name"].startswith("nccl"))
    nccl[1]["args"]["correlation"] = nccl[0]["args"]["correlation"]
    other["args"]["correlation"] = nccl[2]["args"]["correlation"]
    shared = tmp_path / "shared.pt.trace.json"
    shared.write_text(json.dumps(doc))
    fams = _sheet_families(shared)
    assert fams["sendrecv"] == (3, pytest.approx(sum(k["dur"] for k in nccl[:3])))
    assert sum(c for c, _ in fams.values()) == 10


def _correlation_links(events: list[dict]) -> dict[tuple, tuple]:
    """{NCCL kernel (pid, tid, ts ns): launch call (pid, tid, ts ns)} by the raw JSON of a trace without flows: the
    kernel's correlation id, held by no other kernel, names the one runtime / driver call that holds it."""
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    calls = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
    k_ids = [k.get("args", {}).get("correlation") for k in kernels]
    c_ids = [c.get("args", {}).get("correlation") for c in calls]
    out = {}
    for k, i in zip(kernels, k_ids, strict=True):
        if k["name"].lower().startswith("nccl") and k_ids.count(i) == 1 and c_ids.count(i) == 1:
            c = calls[c_ids.index(i)]
            out[(k["pid"], k["tid"], _ns(k["ts"]))] = (c["pid"], c["tid"], _ns(c["ts"]))
    return out


def test_a_trace_without_launch_flows_reads_correlations_with_the_other_args(samples, monkeypatch):
    """In a trace holding no launch flow event, every kernel's and every launch call's ``correlation`` is read:
    it comes with the kernel and op args the loader decodes anyway, where two decodes of their own re-read ~25 MB
    of args (~65 ms per side of a 108 MB flowless trace, docs/performance.md, session 42). The links are those of
    the raw JSON: 10 per rank, as before."""
    from msprof_compare.loaders import kineto

    decoded: list[type] = []
    args = kineto._Events.args

    def counted(self, sub, struct, each=None):
        decoded.append(struct)
        return args(self, sub, struct, each)

    monkeypatch.setattr(kineto._Events, "args", counted)
    for rank in (0, 1):
        path = samples / TRACE_FILTER.format(rank)
        want = _correlation_links(json.load(gzip.open(path))["traceEvents"])
        assert len(want) == 10
        decoded.clear()
        prof = load_profile(str(path), build_options(enable_communication_compare=True)[0])
        assert prof.extra["correlation_launches"] == want
        assert kineto._LaunchArgs not in decoded  # no decode of its own
        assert {kineto._KernelCorrArgs, kineto._OpCorrArgs} <= set(decoded)
        # without the communication comparison (or with launch flows) nothing more is read
        decoded.clear()
        prof = load_profile(str(path), build_options(enable_operator_compare=True)[0])
        assert not prof.extra.get("correlation_launches")
        assert {kineto._KernelCorrArgs, kineto._OpCorrArgs, kineto._LaunchArgs}.isdisjoint(decoded)


def test_a_record_goes_before_the_nccl_range(tmp_path):
    """Where both name the collective, PyTorch's record goes first (it tells ``all_to_allv`` from
    ``all_to_all``, which ProcessGroupNCCL's range calls both ``nccl:all_to_all``); the range names the kernels
    whose record names nothing, and ``nccl:send 0->1`` / ``nccl:recv 1<-0`` are ``send`` / ``receive``."""
    from msprof_compare.compare.communication import nccl_title_collective

    assert [nccl_title_collective(n) for n in ("nccl:send 0->1", "nccl:recv 1<-0", "nccl:_all_gather_base",
                                               "record_param_comms", "gloo:all_reduce")] == [
        "send", "recv", "_all_gather_base", "", ""]
    events = json.loads(RCCL.read_text())["traceEvents"]
    want = _recorded_families(events)  # from the records (kernels carry the same names)
    assert {f: len(d) for f, d in want.items()} == {"nccldevkernel": 1, "broadcast": 2, "allreduce": 1}

    def ranges_say_send(events):  # every range names another collective than the record inside it
        for e in events:
            if str(e.get("name", "")).startswith("nccl:"):
                e["name"] = "nccl:send 0->1"

    fams = _sheet_families(_rccl(tmp_path, kernel_names=False, edit=ranges_say_send))
    assert fams == {f: (len(d), pytest.approx(sum(d))) for f, d in want.items()}

    def records_name_nothing(events):
        ranges_say_send(events)
        for e in events:
            if e.get("name") == "record_param_comms":
                e["args"].pop("Collective name", None)

    fams = _sheet_families(_rccl(tmp_path, kernel_names=False, edit=records_name_nothing))
    assert fams == {"nccldevkernel": (1, pytest.approx(sum(want["nccldevkernel"]))),
                    "send": (3, pytest.approx(sum(want["broadcast"]) + sum(want["allreduce"])))}


def _collective_us_under(events: list[dict], op_name: str) -> float:
    """Independently of the tool: the summed duration of the NCCL kernels whose launch call (the runtime event
    with the kernel's correlation id) lies inside an op so named, on the op's thread."""
    calls = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime"}
    ops = [e for e in events if e.get("ph") == "X" and e.get("name") == op_name]
    total = 0.0
    for k in events:
        if k.get("cat") == "kernel" and k["name"].startswith("nccl"):
            call = calls.get(k["args"]["correlation"])
            if call and any(o["tid"] == call["tid"] and o["ts"] <= call["ts"] <= o["ts"] + o["dur"] for o in ops):
                total += k["dur"]
    return total


def test_communication_figures_round_a_half_up(dlrm_rank, tmp_path):
    """The note's communication figures round a half away from zero, as every ms of the Summary: rank 1 of param's
    DLRM job (``param/et_replay/tests/inputs/dlrm_kineto.tar.gz``, whole-us durations) with its longest NCCL
    kernel under ``## forward ##`` made 1.5 us shorter (the one edit), so that the op's collective time is
    7633.5 us: the note read "7.633 ms" (``{:.3f}`` of the float 7.6335, just under the half), where the
    Summary's other figures round 7.6335 ms to 7.634. Figures recomputed from the edited JSON."""
    base, comp = dlrm_rank(0), dlrm_rank(1)
    doc = json.loads(comp.read_text())
    events = doc["traceEvents"]
    calls = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime"}
    ops = [e for e in events if e.get("ph") == "X" and e.get("name") == "## forward ##"]
    under = [k for k in events if k.get("cat") == "kernel" and k["name"].startswith("nccl")
             and (c := calls.get(k["args"]["correlation"]))
             and any(o["tid"] == c["tid"] and o["ts"] <= c["ts"] <= o["ts"] + o["dur"] for o in ops)]
    longest = max(under, key=lambda k: k["dur"])
    assert isinstance(longest["dur"], int)
    longest["dur"] -= 1.5
    edited = tmp_path / f"edited_{comp.name}"
    edited.write_text(json.dumps(doc))
    us = _collective_us_under(json.loads(edited.read_text())["traceEvents"], "## forward ##")
    assert us == 7633.5 and f"{us / 1000:.3f}" == "7.633"  # the binary float lies under the half
    res = compare(base, edited)
    assert res.contributors["Name"].tolist() == ["## forward ##"]
    assert res.frames["contributor_communication"]["Comparison(ms)"].tolist() == [pytest.approx(7.6335, abs=1e-9)]
    note = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())["summary"]["contributors_note"]
    assert note.endswith(": communication 2.146 ms -> 7.634 ms")


def test_gpu_contributor_holding_a_collective_is_said_to(dlrm_rank, tmp_path, monkeypatch):
    """Rank 1 of the DLRM job is 5.7 ms slower than rank 0, and the one top contributor is ``## forward ##``,
    +5.484 ms: the all_to_all kernel it launched waits 7.6 ms for the other ranks instead of 2.1 ms. The note
    under the contributors says so for a GPU trace too, whose launch flows link each NCCL kernel to the op that
    launched it (before, only an NPU text export's HCCL ops were counted, and the GPU figure was "not
    recorded"); figures recomputed from the raw JSON."""
    base, comp = dlrm_rank(0), dlrm_rank(1)
    want = [_collective_us_under(json.loads(p.read_text())["traceEvents"], "## forward ##") / 1000
            for p in (base, comp)]
    assert want == [2.146, 7.635]
    res = compare(base, comp)
    assert res.contributors["Name"].tolist() == ["## forward ##"]
    comm = res.frames["contributor_communication"]
    assert comm["Name"].tolist() == ["## forward ##"]
    assert [comm["Base(ms)"].iloc[0], comm["Comparison(ms)"].iloc[0]] == [pytest.approx(w) for w in want]
    note = ("most of the change of ## forward ## is collective communication launched inside it (collective "
            "kernels (NCCL / RCCL), which the trace's launch flows link to the operator that launched them; the "
            "waterfall counts them as communication, not computing): communication 2.146 ms -> 7.635 ms")
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    assert doc["summary"]["contributors_note"] == note
    from msprof_compare.report.summary_console import render_explain
    # the console: the figures, then what the figures count as a sentence of its own
    assert "\n".join(["Note: most of the change of ## forward ## is collective communication launched inside it: "
                      "communication 2.146 ms -> 7.635 ms.", "These are collective kernels (NCCL / RCCL), which the "
                      "trace's launch flows link to the operator that launched them; the waterfall counts them as "
                      "communication, not computing."]) in render_explain(res.frames, res.verdict)
    from xlsxutil import read_xlsx
    sheet = read_xlsx(Path(res.to_excel(tmp_path)), sheet_name="Summary", header=None)
    rows = sheet.iloc[:, 0].tolist()  # the console's two lines, a row each, as the JSON lists them
    at = rows.index("Note: most of the change of ## forward ## is collective communication launched inside it: "
                    "communication 2.146 ms -> 7.635 ms.")
    assert rows[at:at + 2] == doc["summary"]["contributors_note_lines"] and rows[at + 1].startswith("These are ")
    # an operator comparison alone reads no keyword file (a bad one must not fail it): NCCL kernels by their prefix
    monkeypatch.setenv("MSPROF_COMPARE_CONFIG", str(tmp_path / "missing.ini"))
    alone = compare(base, comp, enable_operator_compare=True)
    assert alone.frames["contributor_communication"].equals(comm)


def test_launch_calls_are_decoded_once_per_trace(samples, monkeypatch):
    """hta's NVIDIA graph trace has flow ends without a start at kernels (the loader looks their graph launch up
    by correlation id) and NCCL kernels no flow start reaches (the communication comparison looks their launch
    up): both read every launch call's correlation arg, which was decoded twice (~80 ms per 100 MB trace, found
    by the session-41 review); now once, with the same links. Counts from the raw JSON: 5 NCCL kernels whose
    flow id has no start."""
    from msprof_compare.loaders import kineto

    path = samples / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz"
    events = json.load(gzip.open(path))["traceEvents"]
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    ends = {(e["pid"], e["tid"], e["ts"]): e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"}
    lone = [k for k in events if k.get("cat") == "kernel" and k["name"].startswith("nccl")
            and ends.get((k["pid"], k["tid"], k["ts"])) not in starts]
    assert len(lone) == 5
    calls = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"))
    decoded: list[int] = []
    args = kineto._Events.args

    def counted(self, sub, struct, each=None):
        if struct is kineto._LaunchArgs:
            decoded.append(len(sub))
        return args(self, sub, struct, each)

    monkeypatch.setattr(kineto._Events, "args", counted)
    prof = load_profile(str(path), build_options(enable_communication_compare=True)[0])
    assert decoded.count(calls) == 1  # every launch call's args, once
    assert len(decoded) == 2  # and the args of the kernels no flow reaches
    # none of the 5 has its launch call in the trace (launched before the profile): no link
    assert not prof.extra.get("correlation_launches")
