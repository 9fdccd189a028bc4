"""ApiCompare and memory sheets of the reference pairs no other test compares with the original's workbook:
ApiCompare of pairs 2, 4, 5, 6b, 7, 8 and 8b (only pair 1's was compared), the memory sheets of pairs 5 and 7
(GPU traces whose sides differ: pair 6b compares a trace with itself and pair 4's GPU base has no memory) and of
pair 8b (a bare trace_view.json against its directory). The expected figures are the original's cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from refpairs import PAIRS as ALL_PAIRS
from xlsxutil import read_xlsx

from msprof_compare.api import compare

#: the pairs whose sheets this file checks (the others: tests/test_reference_workbooks.py and earlier tests)
PAIRS = {name: ALL_PAIRS[name] for name in ("2-npu-text-l0-rank0-vs-rank1", "4-gpu-alexnet-vs-npu-text-l1",
                                            "5-gpu-kineto-resnet50", "6b-gpu-timesformer-h100-self",
                                            "7-gpu-hta-dfindex-vs-nsres", "8-npu-traceview-file-vs-file",
                                            "8b-npu-traceview-file-vs-dir")}
#: GPU sides whose Self Time is by thread, not the original's (docs/differences.md, "ApiCompare Self Time
#: subtracts a call's callees on its own thread"; test_api_stats.py checks those cells against a stack walk).
GPU_SIDES = {"4-gpu-alexnet-vs-npu-text-l1": ("",), "5-gpu-kineto-resnet50": ("", ".1"),
             "6b-gpu-timesformer-h100-self": ("", ".1"), "7-gpu-hta-dfindex-vs-nsres": ("", ".1")}
MEMORY = ("5-gpu-kineto-resnet50", "7-gpu-hta-dfindex-vs-nsres", "8b-npu-traceview-file-vs-dir")

_results: dict[str, object] = {}


@pytest.fixture(scope="module", autouse=True)
def _free_results():
    """The runs are kept for the tests of this module only."""
    yield
    _results.clear()


def _result(samples: Path, pair: str):
    """One run per pair (api and memory comparisons on), shared by the tests of this file."""
    if pair not in _results:
        base, comparison = PAIRS[pair]
        for p in (base, comparison):
            if not (samples / p).exists():
                pytest.skip(f"{p} not in samples")
        _results[pair] = compare(str(samples / base), str(samples / comparison), enable_api_compare=True,
                                 enable_memory_compare=pair in MEMORY)
    return _results[pair]


def _numbers(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s.replace({"INF": np.inf}), errors="coerce").to_numpy(dtype=float)


def _ratio(b: float, c: float) -> float:
    """reference-2 §0.1, by hand."""
    return 1.0 if not b and not c else (np.inf if not b else round(c / b, 4))


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_api_compare_equals_the_original(samples: Path, reference_outputs: Path, pair: str) -> None:
    """Every ApiCompare cell as the original's (exactly: both round to 0.01 ms), but the Self Time of Kineto
    sides, where the Diff Self Ratio is checked against our own rounded Self Time cells by reference-2 §0.1."""
    ours = _result(samples, pair).sheet("ApiCompare")
    ref = read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx", sheet_name="ApiCompare", header=2)
    assert list(ours.columns) == list(ref.columns) and len(ours) == len(ref)
    assert ours["api name"].tolist() == ref["api name"].tolist()
    gpu = GPU_SIDES.get(pair, ())
    skip = {"Self Time(ms)" + s for s in gpu} | ({"Diff Self Ratio"} if gpu else set())
    for col in ref.columns[2:]:
        if col not in skip:
            a, b = _numbers(ours[col]), ref[col].to_numpy(dtype=float)
            assert ((a == b) | (np.isnan(a) & np.isnan(b))).all(), (col, np.flatnonzero(a != b)[:5])
    if gpu:
        want = [_ratio(b, c) for b, c in zip(ours["Self Time(ms)"], ours["Self Time(ms).1"], strict=True)]
        assert _numbers(ours["Diff Self Ratio"]).tolist() == want


@pytest.mark.parametrize("pair", MEMORY)
def test_memory_sheets_equal_the_original(samples: Path, reference_outputs: Path, pair: str) -> None:
    """Both memory sheets, every number to 1e-12 relative (the order of float additions). Pair 8b pairs one
    operator differently (docs/differences.md, "Operator and module matching is a true maximum matching": 150
    rows to the original's 151), so there its MemoryCompare is compared side by side: each side's operators in
    their order with their sizes; its statistic (by name) every cell."""
    res = _result(samples, pair)
    book = reference_outputs / pair / "performance_comparison_result.xlsx"
    for name in ("MemoryCompareStatistic", "MemoryCompare"):
        ours, ref = res.sheet(name), read_xlsx(book, sheet_name=name, header=2)
        assert list(ours.columns) == list(ref.columns)
        if name == "MemoryCompare" and pair.startswith("8b"):
            assert (len(ours), len(ref)) == (150, 151)
            for op, size in (("Operator Name", "Size(KB)"), ("Operator Name.1", "Size(KB).1")):
                o, r = ours[ours[op].notna()], ref[ref[op].notna()]
                assert o[op].tolist() == r[op].tolist()
                np.testing.assert_allclose(o[size].astype(float), r[size].astype(float), rtol=1e-12)
            for _, row in ours.iterrows():
                assert row["Diff Size(KB)"] == round(row["Size(KB).1"] - row["Size(KB)"], 2)
                assert _numbers(pd.Series([row["Diff Ratio"]]))[0] == _ratio(row["Size(KB)"], row["Size(KB).1"])
            continue
        assert len(ours) == len(ref) > 0
        for col in ref.columns:
            if ref[col].dtype.kind in "if":
                a, b = _numbers(ours[col]), ref[col].to_numpy(dtype=float)
                ok = np.isclose(a, b, rtol=1e-12, atol=0) | (a == b) | (np.isnan(a) & np.isnan(b))
                assert ok.all(), (name, col, np.flatnonzero(~ok)[:5])
            elif col.startswith("Operator Name"):
                assert ours[col].fillna("").tolist() == ref[col].fillna("").astype(str).tolist(), (name, col)
