"""An ``--op_name_map`` entry that renames compared operators yet pairs none across two names is said once, naming
the entry, what it renamed and why no row paired; an entry that pairs a row gets no line. The names are those a
user comparing the real pairs types: reference pair 4 (hta's PARAM AlexNet on an A100 against the msinsight NPU
level-1 export), the tb_plugin V100 trace against the same export, and the bundled BERT H100 / MI300 pair. Counts
come from the raw JSON (complete events of that name) and from the original's OperatorCompareStatistic of pair 4
(``reference-outputs/4-gpu-alexnet-vs-npu-text-l1``), which lists the compared top-level operators of each side."""

from __future__ import annotations

import gzip
import json
import logging
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from msprof_compare.api import compare

GPU = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
V100 = "kineto/tb_plugin/test/gpu_metrics_input.json"
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference-outputs" / "4-gpu-alexnet-vs-npu-text-l1"
REPO = Path(__file__).resolve().parents[1]
SGD, FUSED = "Optimizer.step#SGD.step", "Optimizer.step#NpuFusedSGD.step"  # README's example entry
#: the wrappers around pair 4's ops (PARAM's annotations, the NPU's DDP forward), opened to compare the ops inside
PARAM = "[param|pytorch.model.alex_net|0|0|0"
WRAPPERS = ["[param|cuda]", f"{PARAM}]", f"{PARAM}|measure|forward]", f"{PARAM}|warmup|forward]",
            "DistributedDataParallel.forward"]


def _events(path: Path) -> Counter:
    """{name: complete events} of a Kineto trace (or an NPU export's trace_view.json)."""
    if path.is_dir():
        path = path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return Counter(e.get("name") for e in events if e.get("ph") == "X")


def _reference_counts() -> dict[str, tuple[int, int]]:
    """{name: (base, comparison) Operator Number} of the original's OperatorCompareStatistic of pair 4."""
    sheet = pd.read_excel(REFERENCE / "performance_comparison_result.xlsx", sheet_name="OperatorCompareStatistic",
                          header=2)
    return {r["Operator Name"]: (int(r["Base Operator Number"]), int(r["Comparison Operator Number"]))
            for _, r in sheet.iterrows()}


def _said(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path, **kw: object) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(base), str(comparison), enable_operator_compare=True, **kw)
    return [m for m in caplog.messages if m.startswith("op_name_map: the entry")]


def test_entry_of_nested_ops_says_they_lie_inside_compared_ones(samples: Path, caplog: pytest.LogCaptureFixture):
    """``aten::mm`` and ``aclnnMm`` are the NPU's op and the aclnn call inside it: its 6 ``aten::mm`` lie inside
    the autograd and forward ops compared (pair 4's reference lists no ``aten::mm`` row), the GPU trace has none."""
    assert _events(samples / NPU)["aten::mm"] == 6 and _events(samples / GPU)["aten::mm"] == 0
    assert "aten::mm" not in _reference_counts()
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={"aten::mm": "aclnnMm"}) == [
        "op_name_map: the entry 'aten::mm': 'aclnnMm' renames no compared operator: the 6 comparison operators named "
        "'aten::mm' lie inside compared operators, and the pairing compares the top-level ones (the max_kernel_num "
        "option pairs the ops inside a pair of two)."]
    # one op: "lies"
    assert _events(samples / NPU)["aten::log_softmax"] == 1 and "aten::log_softmax" not in _reference_counts()
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={"aten::log_softmax": "aten::softmax"}) == [
        "op_name_map: the entry 'aten::log_softmax': 'aten::softmax' renames no compared operator: the 1 comparison "
        "operator named 'aten::log_softmax' lies inside compared operators, and the pairing compares the top-level "
        "ones (the max_kernel_num option pairs the ops inside a pair of two)."]


def test_readme_example_on_real_pairs(samples: Path, caplog: pytest.LogCaptureFixture):
    """README's example entry is for an NPU run with torch_npu's fused SGD. Pair 4's NPU run uses plain SGD and its
    GPU side no optimizer: the entry renames the NPU's one step op, and no GPU op has the new name. The tb_plugin
    V100 trace steps with plain SGD too: renamed alike on both sides, the two steps pair as without the map."""
    gpu, npu, v100 = _events(samples / GPU), _events(samples / NPU), _events(samples / V100)
    assert _reference_counts()[SGD] == (0, 1) and gpu[SGD] == gpu[FUSED] == 0
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={SGD: FUSED}) == [
        f"op_name_map: the entry '{SGD}': '{FUSED}' renames 1 comparison operator named '{SGD}', and no base "
        f"operator is named '{FUSED}'."]
    assert v100[SGD] == npu[SGD] == 1
    assert _said(caplog, samples / V100, samples / NPU, op_name_map={SGD: FUSED}) == [
        f"op_name_map: the entry '{SGD}': '{FUSED}' renames the 1 base and 1 comparison operators named '{SGD}' "
        "alike, so they pair as by that name without it (an entry pairs a name of one side with another name of "
        "the other)."]


def test_entry_whose_new_name_is_taken_by_other_pairs(samples: Path, caplog: pytest.LogCaptureFixture):
    """Pair 4 with its wrappers opened: the forward ops pair by name, the 5 ``aten::conv2d`` of each measured
    forward among them. Mapping the GPU's 5 ``cudaDeviceSynchronize`` onto ``aten::conv2d`` pairs none of them: the
    NPU's 5 conv2d pair with the GPU's own. A misspelt new name is no op of the other side."""
    gpu, npu = _events(samples / GPU), _events(samples / NPU)
    assert gpu["cudaDeviceSynchronize"] == 5 and npu["cudaDeviceSynchronize"] == 0 and npu["aten::conv2d"] == 5
    assert gpu["[param|clear_cache]"] == 2 and npu["aten::lineer"] == 0
    said = _said(caplog, samples / GPU, samples / NPU, transparent_op=WRAPPERS,
                 op_name_map={"cudaDeviceSynchronize": "aten::conv2d", "[param|clear_cache]": "aten::lineer"})
    assert said == [
        "op_name_map: the entry 'cudaDeviceSynchronize': 'aten::conv2d' renames 5 base operators named "
        "'cudaDeviceSynchronize', but none pairs with the comparison side's 5 compared operators named "
        "'aten::conv2d' (each pairs with another base operator); the entry '[param|clear_cache]': 'aten::lineer' "
        "renames 2 base operators named '[param|clear_cache]', and no comparison operator is named 'aten::lineer'."]


def test_entries_that_pair_rows_get_no_line(samples: Path, caplog: pytest.LogCaptureFixture):
    """The PARAM wrapper mapped onto the NPU's DDP forward pairs the two (one row each), and the CUDA pair's
    ``cudaDeviceSynchronize`` mapped onto the ROCm trace's ``hipDeviceSynchronize`` pairs the two sides' calls:
    no line. Neither name lies on the other side (so without the map no row held both)."""
    gpu, npu = _events(samples / GPU), _events(samples / NPU)
    assert gpu["[param|cuda]"] == 1 and npu["[param|cuda]"] == 0 and gpu["DistributedDataParallel.forward"] == 0
    assert _said(caplog, samples / GPU, samples / NPU,
                 op_name_map={"[param|cuda]": "DistributedDataParallel.forward"}) == []
    h100, mi300 = (REPO / "sample_data" / f"bert-small_{g}.json.gz" for g in ("h100", "mi300"))
    assert _events(h100)["hipDeviceSynchronize"] == _events(mi300)["cudaDeviceSynchronize"] == 0
    assert _events(h100)["cudaDeviceSynchronize"] > 0 and _events(mi300)["hipDeviceSynchronize"] > 0
    assert _said(caplog, h100, mi300, op_name_map={"cudaDeviceSynchronize": "hipDeviceSynchronize"}) == []
    # under --disable_details the map is ignored (said so): no line of its entries
    assert _said(caplog, samples / GPU, samples / NPU, op_name_map={"aten::mm": "aclnnMm"}, disable_details=True) == []
