"""Kernel and operator names of current GPU libraries in the computing breakdown (docs/differences.md,
"GPU kernel and operator names of current libraries"): every figure is recomputed here from the raw JSON
(json module walk, kernels linked to their launch by correlation id, not by our loader's flows)."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from msprof_compare.api import compare
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data" / "kineto"
SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
EXCERPT = DATA / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
TIMESFORMER = "tracelens/tests/traces/{}/facebook_timesformer-base-finetuned-k400__1016002.json.gz"

FA_OPS = ("cudnn_attention", "efficient_attention", "flash_attention")
CONV_OPS = ("aten::conv",)
MATMUL_OPS = ("aten::addmm", "aten::bmm", "aten::mm", "aten::matmul")
ORIGINAL_CUBE_WORDS = ("gemm", "conv", "cutlass", "wgrad", "gemvx")


def _ns(us: float) -> int:
    """Kineto µs (as the json module reads them) to int ns, exactly."""
    return int(Decimal(repr(us)) * 1000)


def _independent(events: list[dict], is_cube) -> dict[str, list[int]]:
    """{bucket: [ns, count]} by the rule of reference-1 §3.7-3.8: a kernel launched inside a FA / Conv / Matmul
    cpu op (the outermost such op holding its launch call) takes that op's category, Cube when
    ``is_cube(name)``; backward by the op's name (these traces have no Conv op on the backward thread); nccl
    kernels are communication, no category."""
    launches = {e["args"]["correlation"]: e for e in events if e.get("ph") == "X"
                and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    # torch.compile's generated kernels run under ops of their own name, which list the fused aten ops
    # (``triton_poi_fused__scaled_dot_product_flash_attention_cat_...``): no category op
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
           and any(w in e["name"].lower() for w in FA_OPS + CONV_OPS + MATMUL_OPS)
           and not e["name"].lower().startswith(("triton_poi_", "triton_red_", "triton_per_", "triton_for_"))]
    # the same brute-force test of every op for every kernel, in numpy (in Python it took 13 s on xDiT SD 3.5);
    # not classify.covering_op's bisection over running end times, so that this stays an independent check
    ops.sort(key=lambda o: o["ts"])  # stable: equal starts keep their event order
    starts = np.array([o["ts"] for o in ops], dtype=float)
    ends = np.array([o["ts"] + o["dur"] for o in ops], dtype=float)
    out: dict[str, list[int]] = {}
    for k in (e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
              and not e["name"].startswith("nccl")  # communication (reference-1 §4.3)
              and "::multimem_all_reduce_kernel<" not in e["name"]):  # symmetric memory's all-reduce (ours)
        launch = launches.get(k["args"].get("correlation"))
        holding = np.flatnonzero((starts <= launch["ts"]) & (launch["ts"] <= ends)) if launch else []
        first = ops[holding[0]] if len(holding) else None
        part = "cube" if is_cube(k["name"]) else "vector"
        if first is None:
            bucket = "other_cube" if part == "cube" else "vector_notrans"
        else:
            name = first["name"].lower()
            direction = "_bwd_" if "backward" in name else "_fwd_"
            if any(w in name for w in FA_OPS):
                bucket = "fa" + direction + part
            elif any(w in name for w in CONV_OPS):
                bucket = "conv" + direction + part
            else:
                bucket = "matmul_" + part
        cell = out.setdefault(bucket, [0, 0])
        cell[0] += _ns(k["dur"])
        cell[1] += 1
    return out


def _buckets(path: Path) -> dict[str, list[int]]:
    bd = gpu_breakdown(load_profile(str(path), build_options(enable_profiling_compare=True)[0]))
    return {name: [b.ns, b.count] for name, b in bd.buckets.items() if b.count}


def test_cudnn_sdpa_and_nvjet_excerpt():
    """bf16 GPT on an H200 (torch 2.11, CUDA 13): cuDNN SDPA ops are Flash Attention, their fused kernels
    (``cudnn_generated_fort_native_sdpa_*``) and cuBLAS's ``nvjet_*`` GEMMs are Cube, and cuDNN's
    ``convert_dq_to_16bits`` is Vector (the original's keywords: FA 0, Matmul all Vector, convert_dq Cube)."""
    events = json.loads(EXCERPT.read_text())["traceEvents"]
    kernels = [e["name"] for e in events if e.get("cat") == "kernel"]
    assert sum(n.startswith("nvjet_sm90_") for n in kernels) == 3
    assert sum(n.startswith("cudnn_generated_fort_native_sdpa_sm90_flash_") for n in kernels) == 2
    assert sum("cudnn::fusion::convert_dq_to_16bits" in n for n in kernels) == 1

    def cube(name: str) -> bool:
        return name.startswith(("nvjet_", "cudnn_generated_fort_native_sdpa_"))

    want = _independent(events, cube)
    assert _buckets(EXCERPT) == want
    # the figures, from the event list (µs): fprop 18.655; bprop 45.088; compute_dot_do_o 7.135 +
    # convert_dq 6.465; nvjet 24.704 + 9.824 + 12.288; three bf16 copies 1.216 + 3.84 + 4.0 and a sum 12.704
    assert want == {"fa_fwd_cube": [18_655, 1], "fa_bwd_cube": [45_088, 1], "fa_bwd_vector": [13_600, 2],
                    "matmul_cube": [46_816, 3], "vector_notrans": [21_760, 4]}


def test_mi300_tensile_gemms_are_cube(samples):
    """AMD hipBLASLt / Tensile GEMMs (``Cijk_*``) are Cube: timesformer MI300X Matmul (Cube) 54.143552 ms,
    (Vector) 3.797577 ms (the contiguous copies), against H100 53.489573 / 5.277761 ms (the original's
    keywords: MI300X 0 / 57.941129 ms)."""
    path = samples / TIMESFORMER.format("mi300")
    if not path.is_file():
        pytest.skip("sample absent")
    events = json.load(gzip.open(path))["traceEvents"]
    want = _independent(events, lambda n: n.startswith("Cijk_") or any(w in n.lower() for w in ORIGINAL_CUBE_WORDS))
    assert _buckets(path) == want
    assert want["matmul_cube"] == [54_143_552, 133] and want["matmul_vector"] == [3_797_577, 72]
    res = compare(str(samples / TIMESFORMER.format("h100")), str(path), enable_profiling_compare=True)
    rows = res.sheet("OverallMetrics").set_index("Index")
    assert rows.loc["\t\tMatmul (Cube)", "Duration(ms)"] == pytest.approx(53.489573)
    assert rows.loc["\t\tMatmul (Cube)", "Duration(ms).1"] == pytest.approx(54.143552)
    assert rows.loc["\t\tMatmul (Vector)", "Duration(ms).1"] == pytest.approx(3.797577)


B200_EXCERPT = DATA / "b200_vllm_moe_excerpt.pt.trace.json"
#: CUBE_MASK words of the packaged compare_config.ini beyond the original's
ADDED_CUBE_WORDS = ("nvjet", "cijk_", "sdpa", "fmha", "matmul_ogs", "bmm_", "triton_tem_", "attn_fwd",
                    "kernel_unified_attention", "mfma", "sage_fwd")


def _packaged_cube(name: str) -> bool:
    """The packaged cube rule, written independently of classify.cube_name_test: the not-words are blanked
    out first, and an Inductor pointwise / reduction kernel is never cube (none of its prefixes holds a word)."""
    low = name.lower()
    if low.startswith(("triton_poi_", "triton_red_", "triton_per_", "triton_for_")):
        return False
    for outer in ("conversion", "convert", "fbgemm", "fmhareduction"):
        low = low.replace(outer, "#")
    return any(w in low for w in ORIGINAL_CUBE_WORDS + ADDED_CUBE_WORDS)


def test_trtllm_gen_gemms_and_fmha_are_cube():
    """vLLM on a B200 (one attention and one MoE layer): TensorRT-LLM's generated batched GEMMs (``bmm_*``)
    and FMHA kernels (``fmhaSm100aKernel_*``) are Cube; they run under vLLM's own ops, so "Cube" (other),
    not Flash Attention / Matmul. The original's keywords made them Vector."""
    events = json.loads(B200_EXCERPT.read_text())["traceEvents"]
    want = _independent(events, _packaged_cube)
    assert _buckets(B200_EXCERPT) == want
    # µs from the event list: fmhaSm100a 12.032, bmm_MxE4m3 102.304, bmm_Bfloat16 59.296, finalizeKernelVecLoad
    # 7.2 (cube by its cutlass:: argument); nvjet 6.496 under aten::addmm; reshape_and_cache 4.288, quantize
    # 4.544 and three routing kernels 2.656 + 4.704 + 4.704
    assert want == {"other_cube": [180_832, 4], "matmul_cube": [6_496, 1], "vector_notrans": [20_896, 5]}


@pytest.mark.parametrize("trace, figures", [
    # vLLM eager on a B200: trtllm-gen bmm_ / fmhaSm100a (the original's keywords and rules: other Cube
    # 0.706 ms (108), Vector 9.351 ms (550)); the 73 multimem_all_reduce_kernel (2.120 ms) are communication
    ("b200/eager_trace.json.gz", {"other_cube": [5_954_129, 144], "vector_notrans": [1_982_524, 441]}),
    # vLLM piecewise CUDA graphs on an MI300X: triton_kernels' _matmul_ogs_ MoE GEMMs (the _finalize_matmul_scatter
    # epilogue stays Vector) and vLLM's Triton kernel_unified_attention_2d (24 kernels, 5.147 ms)
    ("inference/vllm_prefilldecode_piecewise/graph_execution.json.gz",
     {"other_cube": [144_980_990, 144], "vector_notrans": [10_680_879, 268]}),
    # vLLM decode replayed as one HIP graph: the same MoE GEMMs and kernel_unified_attention_2d / _3d
    ("inference/vllm_decode_full/graph_execution.json.gz",
     {"other_cube": [8_644_169, 144], "vector_notrans": [1_753_670, 280]}),
    # SGLang decode on an MI300X: ROCm's paged_attention_ll4mi_QKV_mfma16_kernel (36 kernels, 1.950 ms; its
    # paged_attention_ll4mi_reduce_kernel stays Vector)
    ("inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
     {"other_cube": [7_731_813, 181], "vector_notrans": [2_033_624, 374]}),
    # SGLang on an MI300X: composable_kernel's FmhaBatchPrefill attention under sglang's own op
    ("inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
     {"other_cube": [20_075_158, 36], "vector_notrans": [52_392_686, 346]}),
    # Qwen1.5-0.5B on an MI300X: PyTorch SDPA runs aotriton's attn_fwd (Cube) and a fill kernel (the original's
    # keywords: all Vector, 4.016 ms (48))
    ("mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
     {"fa_fwd_cube": [3_908_798, 24], "fa_fwd_vector": [107_545, 24]}),
    # torch.compile'd SD 3.5 on an MI300X: triton_{poi,red,per}_fused_..._convolution_... kernels are Vector
    # (no "Cube" (other) row at all; the original's keywords and rules: 0.740 ms (17)), the 152 pointwise
    # kernels of the op triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10 are no
    # Flash Attention, and aotriton's attn_fwd is Cube (the original's: FA (Forward) all Vector, 212.867 ms
    # (481), Vector 86.505 ms (4,234))
    ("inference/xdit_sd_3.5/profile_trace_rank_0.json.gz",
     {"other_cube": None, "vector_notrans": [90_482_646, 4_386], "fa_fwd_cube": [208_721_729, 241],
      "fa_fwd_vector": [167_526, 88]}),
    # xDiT Flux with aiter's SageAttention on an MI300X: its sage_fwd attention (228 kernels, 9.996 ms) is Cube
    # like the fmha_fwd it replaces (under hipGraphLaunch, no FA op claims it); sage_quant_kernel stays Vector
    # (the packaged list before sage_fwd: Cube (other) 118.706 ms (2,012), Vector 64.183 ms (5,313))
    ("inference/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz",
     {"other_cube": [128_702_118, 2_240], "vector_notrans": [54_187_213, 5_085]}),
])
def test_inference_library_kernels(samples, trace, figures):
    path = samples / "tracelens/tests/traces" / trace
    if not path.is_file():
        pytest.skip("sample absent")
    want = _independent(json.load(gzip.open(path))["traceEvents"], _packaged_cube)
    assert _buckets(path) == want
    for bucket, figure in figures.items():
        assert want.get(bucket) == figure
