"""The API's result objects print short: a notebook shows ``compare(...)`` as the profiles' sizes, the sheet
names and the verdict, not tens of KB of DataFrame dumps (the dataclass-generated reprs printed every table).

Inputs: the bundled sample_data pair (README) and the NPU excerpt of tests/data/npu (cut from msinsight text
level1 rank0, see its README).
"""

import gzip
import json
from collections import Counter
from pathlib import Path

import msprof_compare
from msprof_compare.compare.table import Column, Sheet

ROOT = Path(__file__).resolve().parent.parent
GPU_BASE = str(ROOT / "sample_data" / "bert-small_h100.json.gz")
GPU_COMP = str(ROOT / "sample_data" / "bert-small_mi300.json.gz")
NPU_DIR = str(ROOT / "tests" / "data" / "npu" / "rank0_ascend_pt")


def _counts(path: str) -> tuple[int, int, int, int, int]:
    """(ops, kernels, flows, python_functions, memory) of a Kineto trace, counted on its raw events: host ops are
    the cpu_op, user_annotation, cuda_runtime and cuda_driver events, device events the kernel and gpu_memcpy
    ones, a flow an ac2g end whose id has a start, memory the [memory] instant events."""
    with gzip.open(path) as fh:
        events = json.load(fh)["traceEvents"]
    cats = Counter(e.get("cat") for e in events if e.get("ph") == "X")
    starts = {e["id"] for e in events if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    flows = sum(1 for e in events if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in starts)
    memory = sum(1 for e in events if e.get("ph") == "i" and e.get("name") == "[memory]")
    return (cats["cpu_op"] + cats["user_annotation"] + cats["cuda_runtime"] + cats["cuda_driver"],
            cats["kernel"] + cats["gpu_memcpy"], flows, cats["python_function"], memory)


def test_result_repr_names_profiles_sheets_and_verdict():
    r = msprof_compare.compare(GPU_BASE, GPU_COMP)
    text = repr(r)
    assert len(text) < 1200, text
    # H100: 479 cpu_op + 1 user_annotation + 110 cuda_runtime + 22 cuda_driver = 612 ops; 60 kernels + 1 memcpy
    base, comp = _counts(GPU_BASE), _counts(GPU_COMP)
    assert (base, comp[0]) == ((612, 61, 61, 1385, 236), 519 + 1 + 161)
    assert text.startswith(f"CompareResult(base=Profile(path={GPU_BASE!r}, kind='GPU', source='kineto', "
                           "ops={}, kernels={}, flows={}, python_functions={}, memory={}), ".format(*base))
    assert f"comparison=Profile(path={GPU_COMP!r}, kind='GPU', source='kineto', ops={comp[0]}, " in text
    assert f"sheets={r.sheet_names!r}" in text
    assert text.endswith(f", verdict={r.verdict!r})")
    assert r.verdict.startswith("E2E time 3.908 ms -> 3.496 ms")


def test_sheet_reprs_give_name_and_size_only():
    r = msprof_compare.compare(GPU_BASE, GPU_COMP, enable_profiling_compare=True)
    summary, overall = r.sheets
    assert repr(summary) == "SummarySheet(name='Summary', rows=7, columns=6)"
    assert repr(overall) == f"Sheet(name='OverallMetrics', rows={len(r.sheet('OverallMetrics'))}, columns=9)"
    assert str(r.sheets) == f"[{summary!r}, {overall!r}]"


def test_npu_profile_repr_says_its_level_and_a_result_without_verdict_says_none():
    r = msprof_compare.compare(NPU_DIR, NPU_DIR, enable_api_compare=True)
    assert r.verdict == ""
    with open(Path(NPU_DIR) / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", encoding="utf-8") as fh:
        ops = sum(1 for e in json.load(fh) if e.get("ph") == "X" and e.get("cat") == "cpu_op")  # 208 torch ops
    assert repr(r.base).startswith(f"Profile(path={NPU_DIR!r}, kind='NPU', source='ascend_text', level='profiling', "
                                   f"ops={ops}, kernels={len(r.base.kernels)}, ")
    assert repr(r) == f"CompareResult(base={r.base!r}, comparison={r.comparison!r}, sheets=['ApiCompare'])"


def test_empty_sheet_repr():
    import pandas as pd

    s = Sheet("X", [Column("a")], pd.DataFrame({"a": []}), (0, 0), (0, 0))
    assert repr(s) == "Sheet(name='X', rows=0, columns=1)"
