"""The API's result objects print short: a notebook shows ``compare(...)`` as the profiles' sizes, the sheet
names and the verdict, not tens of KB of DataFrame dumps (the dataclass-generated reprs printed every table).

Inputs: the bundled sample_data pair (README) and the NPU excerpt of tests/data/npu (cut from msinsight text
level1 rank0, see its README).
"""

from pathlib import Path

import msprof_compare
from msprof_compare.compare.table import Column, Sheet

ROOT = Path(__file__).resolve().parent.parent
GPU_BASE = str(ROOT / "sample_data" / "bert-small_h100.json.gz")
GPU_COMP = str(ROOT / "sample_data" / "bert-small_mi300.json.gz")
NPU_DIR = str(ROOT / "tests" / "data" / "npu" / "rank0_ascend_pt")


def test_result_repr_names_profiles_sheets_and_verdict():
    r = msprof_compare.compare(GPU_BASE, GPU_COMP)
    text = repr(r)
    assert len(text) < 1200, text
    assert text.startswith(f"CompareResult(base=Profile(path={GPU_BASE!r}, kind='GPU', source='kineto', ops=612, "
                           "kernels=61, flows=61, python_functions=1385, memory=236), ")
    assert f"comparison=Profile(path={GPU_COMP!r}, kind='GPU', source='kineto', ops=681, " in text
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
    assert repr(r.base).startswith(f"Profile(path={NPU_DIR!r}, kind='NPU', source='ascend_text', level='profiling', "
                                   f"ops={len(r.base.ops)}, kernels={len(r.base.kernels)}, ")
    assert repr(r) == f"CompareResult(base={r.base!r}, comparison={r.comparison!r}, sheets=['ApiCompare'])"


def test_empty_sheet_repr():
    import pandas as pd

    s = Sheet("X", [Column("a")], pd.DataFrame({"a": []}), (0, 0), (0, 0))
    assert repr(s) == "Sheet(name='X', rows=0, columns=1)"
