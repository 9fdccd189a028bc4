"""Computing-time categorisation: hand-checked cases and the original's pointer walk as a reference."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msprof_compare.compare import classify as cl
from msprof_compare.compare.breakdown import Breakdown
from msprof_compare.errors import ProfileError


def test_default_keywords():
    kw = cl.load_keywords()
    assert "aten::conv" in kw.conv and "gemm" in kw.cube and "cast" in kw.trans
    assert kw.mc2 == {"allgathermatmul", "matmulreducescatter", "matmulallreduce"}


def test_keyword_override(tmp_path, monkeypatch):
    ini = tmp_path / "k.ini"
    ini.write_text("[OP_MASK]\nFA_MASK=a\nCONV_MASK=B\nMATMUL_MASK=c, ,\nCUBE_MASK=x\nTRANS_MASK=y\nMC2_KERNEL=z\n")
    kw = cl.load_keywords(str(ini))
    assert kw.conv == {"b"} and kw.matmul == {"c"}
    monkeypatch.setenv(cl.CONFIG_ENV, str(ini))
    assert cl.load_keywords() == kw
    ini.write_text(ini.read_text().replace("CONV_MASK=B", "CONV_MASK=D"))  # no stale process-wide copy
    assert cl.load_keywords().conv == {"d"}
    bad = tmp_path / "bad.ini"
    bad.write_text("[OP_MASK]\nFA_MASK=a\n")
    with pytest.raises(ProfileError, match="Missing required key 'CONV_MASK'"):
        cl.load_keywords(str(bad))
    bad.write_text("[X]\n")
    with pytest.raises(ProfileError, match="Missing required section: OP_MASK"):
        cl.load_keywords(str(bad))


def test_config_errors_from_the_environment_say_so(tmp_path, monkeypatch):
    """A MSPROF_COMPARE_CONFIG set long ago in a shell profile made a run fail with "error: k.ini: cannot read
    keyword configuration: [Errno 2] No such file or directory: 'k.ini'": the name twice and nothing about the
    variable. The error now says that the variable named it; a path given by the caller has no such hint."""
    missing = tmp_path / "k.ini"
    monkeypatch.setenv(cl.CONFIG_ENV, str(missing))
    with pytest.raises(ProfileError) as exc:
        cl.load_keywords()
    assert str(exc.value) == (f"{missing}: cannot read keyword configuration: No such file or directory "
                              f"(named by {cl.CONFIG_ENV}; unset it to use the packaged lists)")
    missing.write_text("[OP_MASK]\nFA_MASK=a\n")
    with pytest.raises(ProfileError, match=r"Missing required key 'CONV_MASK' in section 'OP_MASK'\. \(named by"):
        cl.load_keywords()
    with pytest.raises(ProfileError) as exc:
        cl.load_keywords(str(missing))
    assert exc.value.hint is None


def test_keyword_file_that_does_not_parse(tmp_path):
    """A keyword file that is no INI text (a duplicate key, a line outside any section) or no UTF-8 is one
    data error naming the file, not a traceback."""
    keys = "FA_MASK=a\nCONV_MASK=b\nMATMUL_MASK=c\nCUBE_MASK=x\nTRANS_MASK=y\nMC2_KERNEL=z\n"
    bad = tmp_path / "k.ini"
    for text, why in (("[OP_MASK]\n" + keys + "CUBE_MASK=w\n", "option 'CUBE_MASK' in section 'OP_MASK' already "
                                                                "exists"),
                      ("FA_MASK=a\n[OP_MASK]\n" + keys, "File contains no section headers")):
        bad.write_text(text)
        with pytest.raises(ProfileError) as exc:
            cl.load_keywords(str(bad))
        assert exc.value.path == str(bad)
        assert exc.value.message.startswith("cannot read keyword configuration: ") and why in exc.value.message
    bad.write_bytes(("[OP_MASK]\n" + keys.replace("x", "gemm\xe9")).encode("latin-1"))
    with pytest.raises(ProfileError, match="cannot read keyword configuration: 'utf-8' codec can't decode byte 0xe9"):
        cl.load_keywords(str(bad))


def test_name_predicates():
    names = ["aten::conv2d", "aten::mm", "FlashAttnFunc", "aten::add", "aten::convolution_backward"]
    assert cl.cube_op_kind(names).tolist() == [cl.OP_CONV, cl.OP_MATMUL, cl.OP_FA, cl.OP_NONE, cl.OP_CONV]
    assert cl.is_backward_name(names).tolist() == [False, False, False, False, True]
    # reference-1 §3.1: any of bwd / backward / back / grad, in any case
    assert cl.is_backward_name(["FlashAttnBwd", "MulBackward0", "aten::feedback_x", "AccumulateGrad", "aten::mul"]
                               ).tolist() == [True, True, True, True, False]
    assert cl.is_cube_kernel_name(["volta_sgemm_128x64", "elementwise_kernel", "cutlass_80"]).tolist() == \
        [True, False, True]
    assert cl.is_trans_kernel_name(["Cast_1", "Add"]).tolist() == [True, False]
    assert cl.is_mc2_name(["MatmulAllReduce", "MatmulAllReduce_x"]).tolist() == [True, False]
    # FA is checked before conv
    assert cl.cube_op_kind(["aten::conv_flash_attention"]).tolist() == [cl.OP_FA]


def test_current_gpu_library_names_are_keywords():
    """Words added to the original's defaults (docs/differences.md, "GPU kernel and operator names of current
    libraries"): cuDNN SDPA ops are FA, cuBLAS nvjet, AMD Tensile and cuDNN fused-attention kernels are cube."""
    kw = cl.load_keywords()
    assert "cudnn_attention" in kw.fa
    assert {"nvjet", "cijk_", "sdpa", "fmha", "matmul_ogs", "bmm_", "triton_tem_"} <= kw.cube
    assert cl.cube_op_kind(["aten::_scaled_dot_product_cudnn_attention", "aten::_cudnn_attention_backward"]
                           ).tolist() == [cl.OP_FA, cl.OP_FA]
    assert cl.is_cube_kernel_name([
        "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT",            # cuBLAS (H200, CUDA 13)
        "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT",              # cuBLAS (B200)
        "Cijk_Ailk_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32",  # hipBLASLt / Tensile (MI300X)
        "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0",
        "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",  # TensorRT-LLM (B200)
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut",  # same
        "_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmhaBatchPrefill",  # AMD CK
        "aiter::fmha_fwd_hd128_bf16_rtz",                                                    # AMD aiter
        "_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu",                               # triton_kernels (vLLM)
    ]).all()
    # the MoE epilogue of triton_kernels holds "matmul" but no "matmul_ogs"; TensorRT-LLM's multi-CTA decode
    # reduction holds "fmha" only inside "fmhaReduction"
    assert not cl.is_cube_kernel_name(["_finalize_matmul_scatter_bf16",
                                       "void tensorrt_llm::kernels::fmhaReductionKernel<__nv_bfloat16>(KernelParams)",
                                       ]).any()


def test_inductor_pointwise_and_reduction_kernels_are_not_cube():
    """torch.compile names its fused pointwise / reduction / foreach kernels after the aten ops fused into them; a
    cube word there names an op whose matrix work ran elsewhere. Its template kernels (``triton_tem_``) are GEMMs,
    convolutions or flex attention."""
    names = ["triton_red_fused__unsafe_view_add_addmm_clone_convolution_mul_native_layer_norm_12",  # xdit SD 3.5
             "triton_poi_fused__to_copy_add_cat_fmha_v3_fwd_mul_neg_stack_unbind_unsqueeze_view_13",  # xdit flux
             "triton_per_fused__unsafe_view_add_clone_convolution_native_layer_norm_slice_5",
             "triton_for_fused_convolution_0",
             "triton_tem_fused_mm_0", "triton_tem_fused_addmm_1", "triton_tem_fused_bmm_2",
             "my_triton_poi_fused_conv",                  # the prefix counts only at the start
             "Triton_Red_Fused_Convolution_1"]            # names are lower-cased first
    assert cl.is_cube_kernel_name(names).tolist() == [False, False, False, False, True, True, True, True, False]
    # a word starting inside the prefix still counts
    assert cl.cube_name_test(["triton_poi"])("triton_poi_fused_conv_0")
    assert cl.cube_name_test(["poi_f"])("triton_poi_fused_x")
    assert not cl.cube_name_test(["fused"])("triton_poi_fused_x")
    assert cl.cube_name_test(["conv"], vector_prefixes=())("triton_poi_fused_convolution_0")
    # the prefix's last character is inside it: a word starting there counts; one right after it does not
    assert cl.cube_name_test(["_fused"])("triton_poi_fused_x")
    assert not cl.cube_name_test(["conv"])("triton_poi_conv_x")


def test_inductor_kernel_ops_are_no_category_ops(tmp_path, monkeypatch):
    """torch.compile runs its generated kernels under ops named after them; the fused aten op names in there
    (xDiT SD 3.5: ``..._scaled_dot_product_flash_attention_cat_transpose_view_10``, a pointwise copy) make no
    Flash Attention / Conv / Matmul op. A word starting inside the prefix still counts; an empty
    NOT_CUBE_PREFIX gives the original's rule back."""
    names = ["triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10",
             "Triton_Per_Fused_Flash_Attention_1",            # names are lower-cased first
             "triton_tem_fused_flash_attention_2",             # templates are real work
             "my_triton_poi_fused_flash_attention_3",          # the prefix counts only at the start
             "aten::_scaled_dot_product_flash_attention"]
    assert cl.cube_op_kind(names).tolist() == [cl.OP_NONE, cl.OP_NONE, cl.OP_FA, cl.OP_FA, cl.OP_FA]
    # a word right after the prefix is after it too; one starting on the prefix's last character is inside
    assert cl.cube_op_kind(["triton_poi_flash_attention_0"]).tolist() == [cl.OP_NONE]
    kw = dataclasses.replace(cl.load_keywords(cl._DEFAULT_INI), fa=frozenset({"_flash"}))
    assert cl.cube_op_kind(["triton_poi_flash_attention_0"], kw).tolist() == [cl.OP_FA]
    ini = tmp_path / "k.ini"
    monkeypatch.setenv(cl.CONFIG_ENV, str(ini))
    base = "[OP_MASK]\nFA_MASK=flash_attention, triton_poi\nCONV_MASK=b\nMATMUL_MASK=c\nCUBE_MASK=x\nTRANS_MASK=y\n" \
           "MC2_KERNEL=z\n"
    ini.write_text(base)
    assert cl.cube_op_kind(names[:1]).tolist() == [cl.OP_FA]  # "triton_poi" starts inside the prefix
    ini.write_text(base.replace(", triton_poi", "") + "NOT_CUBE_PREFIX =\n")
    assert cl.cube_op_kind(names).tolist() == [cl.OP_FA] * 5


def test_not_cube_prefix_key(tmp_path, monkeypatch):
    """NOT_CUBE_PREFIX is ours and optional: a file without it (one written for the original) gets the Inductor
    prefixes, an empty value switches the rule off, a value replaces the list."""
    base = "[OP_MASK]\nFA_MASK=a\nCONV_MASK=b\nMATMUL_MASK=c\nCUBE_MASK=conv\nTRANS_MASK=y\nMC2_KERNEL=z\n"
    ini = tmp_path / "k.ini"
    monkeypatch.setenv(cl.CONFIG_ENV, str(ini))
    names = ["triton_red_fused_convolution_0", "mine_fused_convolution_1"]
    for extra, want in (("", [False, True]), ("NOT_CUBE_PREFIX =\n", [True, True]),
                        ("NOT_CUBE_PREFIX = Mine_\n", [True, False])):
        ini.write_text(base + extra)
        assert cl.is_cube_kernel_name(names).tolist() == want, extra
    assert cl.load_keywords().not_cube_prefix == ("mine_",)
    assert cl.load_keywords(cl._DEFAULT_INI).not_cube_prefix == tuple(sorted(cl.INDUCTOR_VECTOR_PREFIXES))


def test_cube_word_inside_convert_or_fbgemm_does_not_count():
    """"conv" inside "convert" / "conversion" (dtype and layout conversions) and "gemm" inside "fbgemm"
    (FBGEMM's embedding / permute / quantize kernels) are no cube kernel; another cube word or a real "conv"
    in the same name still is."""
    names = ["void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*)",       # cuDNN SDPA backward
             "std::enable_if<vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
             "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*)",          # vLLM (B200 sample)
             "void fbgemm_gpu::permute_2D_data_kernel<false, int, int>(int, int)",         # hta sampled_rank
             "convolve_then_convert",                                                      # real "conv" first
             "convert_then_convolve",                                                      # real "conv" after
             "convert_dq_cutlass_kernel",                                                  # another cube word
             "fbgemm_gpu::bf16_gemm_kernel",                                               # "gemm" outside fbgemm
             "conconvert",                                                                 # "conv" only inside
             "float_conversion_kernel_0d1d2d3",                                            # Triton dtype cast
             "void conversion_kernel_NCHW_to_NHWC_impl<float, __half>(float const*, __half*)",  # layout
             "conversion_then_conv2d"]                                                     # a real "conv" too
    assert cl.is_cube_kernel_name(names).tolist() == [False, False, False, True, True, True, True, False,
                                                      False, False, True]
    test = cl.cube_name_test(["conv"], ["convert"])
    assert [test(n) for n in ("convert", "xconvertconv", "convertconvert", "conv")] == [False, True, False, True]
    # the rule applies to whatever CUBE_MASK holds; a CUBE_MASK naming the longer word itself matches it
    assert cl.cube_name_test(["convert"], ["convert"])("convert_dq")
    assert cl.cube_name_test(["vert"], ["convert"])("convert") is False
    assert cl.cube_name_test(["vert"], ["convert"])("vertex")
    # a word twice inside its not-word (an ini's CUBE_MASK may hold any): each of its places in the not-word is
    # tried, so the second "gem" of "gemgemm" is inside it as the first is
    test = cl.cube_name_test(["gem"], ["gemgemm"])
    assert [test(n) for n in ("gemgemm", "x_gemgemm_y", "gem_gemgemm", "gemgem_m")] == [False, False, True, True]


def test_cube_rule_applies_to_an_overriding_ini(tmp_path, monkeypatch):
    ini = tmp_path / "k.ini"
    ini.write_text("[OP_MASK]\nFA_MASK=a\nCONV_MASK=b\nMATMUL_MASK=c\nCUBE_MASK=conv, mykernel\n"
                   "TRANS_MASK=y\nMC2_KERNEL=z\n")
    monkeypatch.setenv(cl.CONFIG_ENV, str(ini))
    assert cl.is_cube_kernel_name(["convert_x", "my_conv", "MyKernel_1", "nvjet_tst"]).tolist() == \
        [False, True, True, False]


def test_categorize_hand_checked():
    # cube ops (ns): conv fwd [100,200), mm [300,400), conv on backward thread [500,600), FA bwd [700,800)
    ops = cl.cube_ops(["aten::conv2d", "aten::mm", "aten::conv2d", "flash_attention_backward"],
                      ts=[100, 300, 500, 700], dur=[100, 100, 100, 100], tid=[1, 1, 2, 1], backward_tid=2)
    flow = np.array([150, 0, 350, 450, 550, 750, 550, 160])
    cube = np.array([True, True, False, True, True, False, False, False])
    labels = cl.categorize(np.ones(8), flow, cube, ops)
    assert labels.tolist() == [
        "conv_fwd_cube",      # covered by conv fwd
        "other_cube",         # no flow
        "matmul_vector",      # covered by mm, not a cube kernel
        "other_cube",         # flow between ops: falls through
        "conv_bwd_cube",      # conv on the backward thread
        "fa_bwd_vector",      # FA with a backward name
        "conv_bwd_vector",
        "conv_fwd_vector",
    ]


def test_categorize_npu_priorities():
    ops = cl.cube_ops(["aten::matmul"], ts=[0], dur=[1000])
    flow = np.array([10, 10, 10, 0, 0, 0, 0, 0])
    cube = np.array([False, False, False, False, True, False, False, True])
    trans = np.array([True, False, False, True, True, False, False, False])
    pa = np.array([True, False, False, False, False, False, False, False])
    tm = np.array([False, True, False, False, False, False, False, False])
    mc2 = np.array([False, False, True, False, False, False, False, False])
    types = np.array(["", "", "", "", "", "FlashAttentionScoreGrad", "Conv2DBackpropInput", "MatMulV2"], dtype=object)
    labels = cl.categorize(np.ones(8), flow, cube, ops, is_trans=trans, page_attention=pa, tensor_move=tm,
                           mc2=mc2, npu_type=types)
    assert labels.tolist() == ["page_attention", "sdma_tm", cl.MC2, "vector_trans", "other_cube",
                               "fa_bwd_cube", "conv_bwd_cube", "matmul_cube"]


def test_fill_buckets():
    bd = Breakdown("GPU")
    cl.fill_buckets(bd, np.array(["other_cube", "vector_notrans", "other_cube", cl.MC2], dtype=object),
                    np.array([5, 7, 11, 13]))
    assert (bd.b("other_cube").ns, bd.b("other_cube").count) == (16, 2)
    assert (bd.b("vector_notrans").ns, bd.b("vector_notrans").count) == (7, 1)
    assert bd.computing_count == 3


def test_processing_order_unmatched_first():
    assert cl.processing_order(np.array([30, 0, 10, 0, 10])).tolist() == [1, 3, 2, 4, 0]


def _reference_walk(op_s, op_e, flow):
    """The original's loop, written naively: visit kernels by flow time (unmatched first), pointer forward only."""
    order = sorted(range(len(op_s)), key=lambda i: op_s[i])
    s = [op_s[i] for i in order]
    e = [op_e[i] for i in order]
    kernels = sorted(range(len(flow)), key=lambda k: (flow[k] > 0, flow[k] if flow[k] > 0 else 0))
    out = [-1] * len(flow)
    p = 0
    for k in kernels:
        t = flow[k]
        if t <= 0:
            continue
        while p < len(s) and e[p] < t:
            p += 1
        if p < len(s) and s[p] <= t:
            out[k] = order[p]
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20)), max_size=10),
       st.lists(st.integers(0, 80), max_size=15))
def test_covering_op_matches_pointer_walk(ops, flow):
    op_s = [s for s, _ in ops]
    op_e = [s + d for s, d in ops]
    names = ["aten::mm"] * len(ops)
    co = cl.cube_ops(names, np.array(op_s, dtype=np.int64), np.array([d for _, d in ops], dtype=np.int64))
    got = cl.covering_op(co, np.array(flow, dtype=np.int64))
    # map sorted index back to input index (stable sort by start)
    order = np.argsort(np.array(op_s, dtype=np.int64), kind="stable")
    got_input = [int(order[i]) if i >= 0 else -1 for i in got]
    assert got_input == _reference_walk(op_s, op_e, flow)


def test_a_bad_config_file_is_named_before_the_inputs_load(tmp_path, monkeypatch):
    """The keyword file was read after both inputs had loaded (minutes for GB traces) only to fail then; it is
    now read first when the time breakdown will need it, and not at all when it will not."""
    from msprof_compare import api
    from msprof_compare.loaders import pair

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    base, comp = sample / "bert-small_h100.json.gz", sample / "bert-small_mi300.json.gz"
    monkeypatch.setenv(cl.CONFIG_ENV, str(tmp_path / "gone.ini"))
    loads = []
    real = pair.load_pair
    monkeypatch.setattr(pair, "load_pair", lambda *a, **k: loads.append(1) or real(*a, **k))
    for options in ({}, {"enable_profiling_compare": True}, {"enable_api_compare": True, "fail_on_regression": 5},
                    {"enable_communication_compare": True}):
        with pytest.raises(ProfileError, match=f"gone.ini: cannot read keyword .*named by {cl.CONFIG_ENV}"):
            api.compare(base, comp, **options)
    # communication with one Kineto side (its collectives go by the lists) beside an NPU one
    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    for pair_ in ((base, npu), (npu, base)):
        with pytest.raises(ProfileError, match=f"gone.ini: cannot read keyword .*named by {cl.CONFIG_ENV}"):
            api.compare(*pair_, enable_communication_compare=True)
    assert loads == []
    assert api.compare(base, comp, enable_api_compare=True).sheet_names == ["ApiCompare"]  # file never read
    assert loads == [1]


def _kind_one_by_one(name: object, kw: cl.Keywords) -> int:
    """``cube_op_kind`` of one name, word by word (the rule as documented, without the joined-text scan)."""
    n = "" if name is None else str(name).lower()
    limit = next((len(p) for p in kw.not_cube_prefix if n.startswith(p)), len(n))
    for words, kind in ((kw.fa, cl.OP_FA), (kw.conv, cl.OP_CONV), (kw.matmul, cl.OP_MATMUL)):
        if any(0 <= n.find(w) < limit for w in words):
            return kind
    return cl.OP_NONE


_NAME_PARTS = ["aten::", "conv", "mm", "flash", "attention", "triton_poi_", "_fused_", "\n", "Bmm", "x", "ConV"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.sampled_from(_NAME_PARTS), max_size=6).map("".join)), max_size=12),
       st.booleans())
def test_cube_op_kind_scan_matches_a_search_per_name(names, word_with_break):
    """The one scan of the joined names finds the names holding a word as a search per name does: a word at a
    name's start or end, names holding line breaks, an empty name, a prefix limit, a word holding a break."""
    kw = cl.load_keywords()
    if word_with_break:
        kw = dataclasses.replace(kw, conv=kw.conv | {"x\nconv"})
    assert cl.cube_op_kind(names, kw).tolist() == [_kind_one_by_one(n, kw) for n in names]


def test_cube_op_kind_of_real_op_names(samples):
    """Every op name of NPU pair 1's base side (torch_npu ops, aclnn calls, ProfilerStep) as one by one."""
    import pandas as pd

    path = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT" \
        "/operator_details.csv"
    names = pd.read_csv(path)["Name"].tolist()
    kw = cl.load_keywords()
    got = cl.cube_op_kind(names, kw).tolist()
    assert got == [_kind_one_by_one(n, kw) for n in names]
    assert {cl.OP_CONV, cl.OP_MATMUL, cl.OP_NONE} <= set(got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["Cast_1", "MatmulAllReduce", "aclnnInplaceCopy_TensorMove",
                                                      "HcclAllReduceAivKernel", "add", "ADD", ""])), max_size=10))
def test_per_unique_many_is_per_unique_per_test(names):
    tests = ((cl.hccl_test, False), (cl.trans_test(cl.load_keywords()), True),
             (cl.mc2_test(cl.load_keywords()), True), (lambda n: n == "add", False))
    codes, flags = cl.per_unique_many(np.array(names, dtype=object), tests)
    for (test, lower), f in zip(tests, flags, strict=True):
        assert f[codes].tolist() == cl.per_unique(names, test, lower=lower).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.just(float("nan")), st.integers(0, 2),
                          st.sampled_from(["kernel_aivec", "Kernel_AIVEC", "add", "ADD", "", "nan", "0"])),
                max_size=12), st.booleans())
def test_per_unique_is_the_test_of_each_row(names: list, lower: bool) -> None:
    """Both of ``per_unique``'s ways (a set of str texts; ``factorize`` where a value is missing or not a str)
    answer the test of each row's text, a missing value (None, NaN) reading as ""."""
    def text(n: object) -> str:
        t = "" if n is None or (isinstance(n, float) and n != n) else str(n)
        return t.lower() if lower else t

    for test in (lambda n: n == "kernel_aivec", lambda n: n in ("", "0"), lambda n: "a" in n, lambda n: True):
        got = cl.per_unique(np.array(names, dtype=object), test, lower=lower)
        assert got.dtype == bool and got.tolist() == [test(text(n)) for n in names]


@given(st.lists(st.text(alphabet="ab.*(|\\", max_size=3), max_size=4), st.text(alphabet="ab.*(|\\", max_size=8))
def test_holds_any_is_any_word_in_the_text(words: list, text: str) -> None:
    """The one-search word test answers as ``any(w in text for w in words)``, regex characters and the empty
    word included."""
    assert cl.holds_any(words)(text) == any(w in text for w in words)
