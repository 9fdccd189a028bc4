"""The Summary's waterfall on real data beyond its Base / Comparison figures (test_summary.py pins those against
the original's OverallMetrics of pairs 1 and 6b): Delta(ms), Cumulative(ms) and Share of E2E Diff of every step,
before checked on synthetic input only. Expected: plain arithmetic on the original's OverallMetrics cells of the
NPU text pairs 1 and 2 (each step's comparison minus base cell, their running sum from the base E2E, each delta
over the E2E delta)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from xlsxutil import read_xlsx

from msprof_compare.api import compare

TEXT = "msinsight/test/data/pytorch/text"
PAIRS = {
    "1-npu-text-l1-vs-l2": (f"{TEXT}/level1/rank0_ascend_pt", f"{TEXT}/level2/rank0_ascend_pt"),
    "2-npu-text-l0-rank0-vs-rank1": (f"{TEXT}/level0/rank0_ascend_pt", f"{TEXT}/level0/rank1_ascend_pt"),
}
#: waterfall step -> OverallMetrics Index (stripped); a single communication group's uncovered time is the
#: Uncovered Communication Time row (its sub-ns group residual folded in: docs/differences.md, "Additions")
ROWS = {"Other Computing": "Other", "Free: Other": "Free", "Group 0 Communication (uncovered)":
        "Uncovered Communication Time"}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_waterfall_deltas_and_shares_from_the_original(samples: Path, reference_outputs: Path, pair: str) -> None:
    base, comparison = (samples / p for p in PAIRS[pair])
    if not (base.exists() and comparison.exists()):
        pytest.skip("NPU samples absent")
    ref = read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx", sheet_name="OverallMetrics",
                    header=2)
    cells = {str(i).strip(): (float(b), float(c)) for i, b, c in
             zip(ref["Index"], ref["Duration(ms)"], ref["Duration(ms).1"], strict=True)}
    wf = compare(str(base), str(comparison)).waterfall
    (e2e_b, e2e_c) = cells["E2E Time"]
    steps = wf[~wf["Category"].isin(["start", "end"])]
    assert len(steps) == {"1": 8, "2": 3}[pair[0]]  # level 0 (pair 2) has no computing split
    cum = e2e_b
    for _, row in steps.iterrows():
        b, c = cells[ROWS.get(row["Step"], row["Step"])]
        cum += c - b
        assert float(row["Delta(ms)"]) == pytest.approx(c - b, abs=2e-6), row["Step"]
        assert float(row["Cumulative(ms)"]) == pytest.approx(cum, abs=1e-5), row["Step"]
        assert float(row["Share of E2E Diff"]) == pytest.approx((c - b) / (e2e_c - e2e_b), abs=1e-6), row["Step"]
    end = wf.iloc[-1]
    assert float(end["Delta(ms)"]) == pytest.approx(e2e_c - e2e_b, abs=1e-6)
    assert float(end["Cumulative(ms)"]) == pytest.approx(e2e_c, abs=1e-6) == pytest.approx(cum, abs=1e-5)
    assert float(end["Share of E2E Diff"]) == 1.0 and pd.isna(wf["Share of E2E Diff"].iloc[0])
