"""OverallMetrics' Diff Duration is the exact ns change to 0.01 ms, a half away from zero (session 47 review).

The cells are ms floats of whole ns; a cell whose ms times 1e6 lands just under its ns (1.005 ms is
1004999.9999999999) must still count its whole ns, or a change of exactly 5 us reads 0.00 where the rule says 0.01.
"""

from __future__ import annotations

import pytest

from msprof_compare.compare.overall import _exact_diff


@pytest.mark.parametrize(("base_ns", "comparison_ns", "diff"), [
    (1_000_000, 1_005_000, 0.01),      # +5 us: the half, away from zero
    (1_005_000, 1_000_000, -0.01),     # -5 us
    (1_000_035, 1_005_035, 0.01),      # 1.005035 ms * 1e6 is 1005034.9999999999
    (1_000_000, 1_004_999, 0.0),       # 1 ns short of the half
    (0, 15_000, 0.02),                 # a side without the row ("/": 0 ms), +15 us
    (25_000, 0, -0.03),                # the other side without it, -25 us
])
def test_exact_change_to_the_hundredth_half_away_from_zero(base_ns: int, comparison_ns: int, diff: float) -> None:
    assert _exact_diff(base_ns / 1e6, comparison_ns / 1e6) == diff
    assert str(_exact_diff(base_ns / 1e6, comparison_ns / 1e6)) != "-0.0"
