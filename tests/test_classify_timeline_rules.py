"""Computing-time categorisation rules a mutation audit found untested (reference-1 §3.7, §3.8): where the NPU
``Type`` fallback looks for its words, the covering cpu op ranking above that fallback, Flash Attention's
direction by name only (not by thread), Page Attention ranking above Tensor Move, and Conv ranking above Matmul
in cpu-op names. Inputs are copies of the NPU excerpt (tests/data/npu) with one field edited per case, each
edit named in its test; expected figures come from the excerpt's rows. (The audit's interval-engine mutants,
timeline.py, were all caught by tests/test_timeline.py or cannot change a result.)"""

from __future__ import annotations

import csv
import json
import shutil
from decimal import Decimal
from pathlib import Path

from msprof_compare.compare import breakdown_npu as B
from msprof_compare.compare import classify as cl
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data" / "npu"
PT = DATA / "rank0_ascend_pt"
MS = DATA / "profiler" / "rank-0_20250101000000000_ascend_ms"
OPTS = Options(enable_profiling_compare=True)


def _ns(us: str) -> int:
    return int(Decimal(us.strip()) * 1000)


def _edited(src: Path, tmp_path: Path, kernels: dict | None = None, ops: dict | None = None) -> Path:
    """A copy of an excerpt: ``kernels`` maps a kernel_details.csv Start Time (µs text) to {column: new value},
    ``ops`` a trace_view.json cpu_op ts (µs text) to its new name."""
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"
    if kernels:
        path = out / "kernel_details.csv"
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        head, seen = rows[0], set()
        for row in rows[1:]:
            start = row[head.index("Start Time(us)")].strip()
            for col, value in kernels.get(start, {}).items():
                row[head.index(col)] = value
                seen.add(start)
        assert seen == set(kernels)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows(rows)
    if ops:
        path = out / "trace_view.json"
        raw = json.loads(path.read_text(encoding="utf-8"))
        hit = [e for e in raw if e.get("cat") == "cpu_op" and e["ts"] in ops]
        assert len(hit) == len(ops)
        for e in hit:
            e["name"] = ops[e["ts"]]
        path.write_text(json.dumps(raw), encoding="utf-8")
    return dst


def _buckets(path: Path) -> dict[str, tuple[int, int]]:
    bd = B.npu_breakdown(load_profile(str(path), OPTS), OPTS)
    return {k: (v.ns, v.count) for k, v in bd.buckets.items() if v.count}


def _launched(op_ts: str) -> set[str]:
    """Start Times (µs text, as kernel_details.csv writes them) of the kernels whose async_npu flow starts
    inside the excerpt's cpu op at ``op_ts``: flow start and end paired by id, the end's ts being the kernel's."""
    raw = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    op = next(e for e in raw if e.get("cat") == "cpu_op" and e["ts"] == op_ts)
    lo = Decimal(op["ts"])
    hi = lo + Decimal(str(op["dur"]))
    flows = [e for e in raw if e.get("cat") == "async_npu"]
    ids = {e["id"] for e in flows if e["ph"] == "s" and lo <= Decimal(e["ts"]) <= hi}
    return {e["ts"] for e in flows if e["ph"] == "f" and e["id"] in ids}


def test_type_fallback_finds_matmul_and_flashattention_anywhere_conv_only_at_the_start(tmp_path):
    """reference-1 §3.7 step 5 on kernels no cpu op covers (the MindSpore excerpt has no cpu ops): ``Type``
    *contains* ``flashattention`` (backward only with ``bwd`` / ``grad``, not "back"), *starts with* ``conv``,
    *contains* ``matmul``; always Cube. The excerpt's Types are MatMulV2 / MemSet / vector ops, none of which
    tells these apart, so four rows get Types of other CANN ops: BatchMatMulV2, DepthwiseConv2D and
    PromptFlashAttention are real op types; FlashAttentionScoreBackward is made up (no sample holds an FA Type
    with "back" alone)."""
    edits = {
        "1736408883731013.819": "BatchMatMulV2",                # MemSet 11.26 (vector) -> Matmul (Cube)
        "1736408883731113.701": "DepthwiseConv2D",              # MatMulV2 21.98 (cube) -> other Cube, no Conv
        "1736408883731226.644": "PromptFlashAttention",         # MemSet 10.98 -> FA forward (Cube)
        "1736408883731326.666": "FlashAttentionScoreBackward",  # MatMulV2 16.54 -> FA forward (Cube)
    }
    got = _buckets(_edited(MS, tmp_path, kernels={k: {"Type": v} for k, v in edits.items()}))
    with open(MS / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    types = {r["Start Time(us)"].strip(): edits.get(r["Start Time(us)"].strip(), r["Type"]) for r in rows}
    matmul = [r for r in rows if "matmul" in types[r["Start Time(us)"].strip()].lower()]
    # BatchMatMulV2 11.26 plus the excerpt's three other MatMulV2 rows 45.921 + 30.661 + 287.666
    assert got["matmul_cube"] == (sum(_ns(r["Duration(us)"]) for r in matmul), 4) == (375_508, 4)
    assert got["other_cube"] == (21_980, 1)
    assert got["fa_fwd_cube"] == (10_980 + 16_540, 2)
    assert "conv_fwd_cube" not in got and "fa_bwd_cube" not in got


def test_covering_cpu_op_ranks_above_the_type_fallback(tmp_path):
    """reference-1 §3.7: a kernel launched inside a cpu cube op is classified by that op (step 4) before its
    ``Type`` is looked at (step 5). The MemSet at 732533.430 runs under ``aten::mm``; with its Type edited to
    FlashAttentionScore it still counts as Matmul (Vector), not Flash Attention."""
    got = _buckets(_edited(PT, tmp_path, kernels={"1736408883732533.430": {"Type": "FlashAttentionScore"}}))
    with open(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    under_mm = set().union(*(_launched(ts) for ts in ("1736408883731716.900", "1736408883731779.400",
                                                      "1736408883732432.100", "1736408883732490.880")))
    vector = [r for r in rows if r["Start Time(us)"].strip() in under_mm and float(r["aicore_time(us)"]) == 0]
    # the three MemSets launched by aten::mm: 10.94 + 25.46 + 10.10
    assert got["matmul_vector"] == (sum(_ns(r["Duration(us)"]) for r in vector), 3) == (46_500, 3)
    assert not any(k.startswith("fa_") for k in got)


def test_flash_attention_direction_comes_from_the_name_not_the_thread(tmp_path):
    """reference-1 §3.8: an FA op is backward by its name only; a Conv op also when it runs on the backward
    thread. Recomputation (activation checkpointing) runs forward ops on autograd's thread: the excerpt's
    ``aten::mm`` ops all run there (tid 3105075, the thread of its fwdbwd flow ends); one is renamed to
    torch_npu's forward ``npu::npu_fusion_attention`` (the op name of msinsight/test/st/level2), another to
    ``aten::convolution``."""
    fa_op, conv_op = "1736408883731716.900", "1736408883732432.100"
    got = _buckets(_edited(PT, tmp_path, ops={fa_op: "npu::npu_fusion_attention", conv_op: "aten::convolution"}))
    # kernels launched inside the FA op: MemSet 732533.430 (10.94, vector), MatMulV2 732632.592 (45.921, cube);
    # inside the Conv op: MemSet 733553.670 (10.10), MatMulV2 733651.792 (287.666)
    assert _launched(fa_op) == {"1736408883732533.430", "1736408883732632.592"}
    assert _launched(conv_op) == {"1736408883733553.670", "1736408883733651.792"}
    assert got["fa_fwd_vector"] == (10_940, 1) and got["fa_fwd_cube"] == (45_921, 1)
    assert "fa_bwd_vector" not in got and "fa_bwd_cube" not in got
    assert got["conv_bwd_vector"] == (10_100, 1) and got["conv_bwd_cube"] == (287_666, 1)


def test_page_attention_ranks_above_tensor_move(tmp_path):
    """reference-1 §3.7 steps 1-2: Page Attention (by ``Type``) is checked before SDMA Tensor Move (by name).
    No real kernel is both: one MemSet row (11.26 µs) gets the Tensor Move kernel name of the level1 sample
    (``aclnnInplaceCopy_TensorMoveAiCore_TensorMove``) and the Type PagedAttention."""
    edit = {"Name": "aclnnInplaceCopy_TensorMoveAiCore_TensorMove", "Type": "PagedAttention"}
    got = _buckets(_edited(MS, tmp_path, kernels={"1736408883731013.819": edit}))
    assert got["page_attention"] == (11_260, 1)
    assert "sdma_tm" not in got


def test_conv_words_rank_above_matmul_words_in_cpu_op_names():
    """reference-1 §3.8: "Checks are in order FA, Conv, Matmul"; an op name holding words of several lists takes
    the first. No op of the samples holds a Conv and a Matmul word, so the names are made up."""
    assert cl.cube_op_kind(["aten::conv_with_aten::mm", "aten::addmm_then_aten::conv2d",
                            "aten::matmul_flash_attention"]).tolist() == [cl.OP_CONV, cl.OP_CONV, cl.OP_FA]


def test_a_conv_op_on_tid_minus_one_is_forward_without_a_backward_thread(tmp_path):
    """reference-1 §3.8: a Conv op is backward when it runs on the backward thread, the tid of a ``fwdbwd`` flow
    end; a trace without such flows (a forward-only capture) has no backward thread, so no Conv op is backward
    by its thread, whatever its tid. No exporter writes tid -1 (ours reads "no backward thread" as -1): the
    NPU excerpt with its 14 fwdbwd flow events removed and the ``aten::mm`` at 732432.100 renamed
    ``aten::convolution`` and moved to tid -1. The kernels launched inside it (the test above: MemSet 10.10 us,
    vector; MatMulV2 287.666 us, cube) count as Conv forward."""
    conv_op = "1736408883732432.100"
    dst = _edited(PT, tmp_path, ops={conv_op: "aten::convolution"})
    path = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    kept = [e for e in raw if e.get("cat") != "fwdbwd"]
    assert len(raw) - len(kept) == 14
    (op,) = [e for e in kept if e.get("cat") == "cpu_op" and e["ts"] == conv_op]
    op["tid"] = -1
    path.write_text(json.dumps(kept), encoding="utf-8")
    got = _buckets(dst)
    assert _launched(conv_op) == {"1736408883733553.670", "1736408883733651.792"}
    assert got["conv_fwd_vector"] == (10_100, 1) and got["conv_fwd_cube"] == (287_666, 1)
    assert "conv_bwd_vector" not in got and "conv_bwd_cube" not in got


def test_tensor_move_ranks_above_mc2(tmp_path):
    """reference-1 §3.7 steps 2-3: SDMA Tensor Move (lower Name starts with ``aclnninplacecopy``, holds
    ``tensormove``) is checked before MC2 (lower Name in MC2_KERNEL). With the packaged lists no name is both; a
    user's MC2_KERNEL may name any kernel: the packaged ini with the level1 sample's Tensor Move kernel name
    added to MC2_KERNEL, and the MS excerpt's MemSet row at 731013.819 (11.26 µs) given that name. It counts as
    Tensor Move, not MC2."""
    name = "aclnnInplaceCopy_TensorMoveAiCore_TensorMove"
    ini = tmp_path / "mask.ini"
    text = Path(cl._DEFAULT_INI).read_text(encoding="utf-8")
    assert text.count("MC2_KERNEL = ") == 1
    ini.write_text(text.replace("MC2_KERNEL = ", f"MC2_KERNEL = {name.lower()}, "), encoding="utf-8")
    kw = cl.load_keywords(str(ini))
    assert name.lower() in kw.mc2
    src = _edited(MS, tmp_path, kernels={"1736408883731013.819": {"Name": name}})
    bd = B.npu_breakdown(load_profile(str(src), OPTS), OPTS, kw)
    assert (bd.buckets["sdma_tm"].ns, bd.buckets["sdma_tm"].count) == (11_260, 1)
    assert not bd.mc2
