"""Defects found by session 38's differential test (the current tree against 6b6e2e3 on mutated copies of the
real samples); each test pins the figure computed by hand."""

from __future__ import annotations

import pandas as pd
import pytest


def test_share_of_net_diff_is_null_when_the_steps_cancel_to_the_ns():
    """Waterfall steps whose changes cancel exactly (-30,401 + -96,782 + 127,183 ns = 0: the E2E time of both
    sides is 100,602,230 ns) have no net change, so "Share of Net Diff" is null, as documented. The float sum
    of the ns-rounded ms diffs is -2.8e-17, and each step's share of it was -4.6e15 / +3.5e15. Figures: the
    waterfall of msinsight text/level0/rank1_ascend_pt against a copy with 33 events duplicated (case 0)."""
    from msprof_compare.compare import contributors

    steps = pd.DataFrame({"Name": ["Other Computing", "Group 0 Communication (uncovered)",
                                   "Other Communication (uncovered)", "Free: Other"],
                          "Base(ms)": [8.843574, 64.616114, 0.096782, 27.04576],
                          "Comparison(ms)": [8.813173, 64.616114, 0.0, 27.172943]})
    top = contributors.top_contributors(steps, "category")
    assert top["Name"].tolist() == ["Free: Other", "Other Communication (uncovered)"]
    assert top["Diff(ms)"].tolist() == [0.127183, -0.096782]
    assert top["Share of Net Diff"].tolist() == [None, None]
    assert contributors.level_net_ms(top) == 0.0
    # a net that is not 0 keeps its shares: +0.127183 - 0.096782 = +0.030401 ms
    two = contributors.top_contributors(steps.iloc[2:], "category")
    assert two["Share of Net Diff"].tolist() == pytest.approx([0.127183 / 0.030401, -0.096782 / 0.030401], rel=1e-12)
