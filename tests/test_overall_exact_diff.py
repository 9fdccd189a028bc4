"""OverallMetrics' Diff Duration is the exact ns change to 0.01 ms, a half away from zero (session 47 review).

The cells are ms floats of whole ns; a cell whose ms times 1e6 lands just under its ns (1.005 ms is
1004999.9999999999) must still count its whole ns, or a change of exactly 5 us reads 0.00 where the rule says 0.01.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from msprof_compare.compare.overall import _Rows

CASES = [

    (1_000_000, 1_005_000, 0.01),      # +5 us: the half, away from zero
    (1_005_000, 1_000_000, -0.01),     # -5 us
    (1_000_035, 1_005_035, 0.01),      # 1.005035 ms * 1e6 is 1005034.9999999999
    (1_000_000, 1_004_999, 0.0),       # 1 ns short of the half
    (0, 15_000, 0.02),                 # a side without the row ("/": 0 ms), +15 us
    (25_000, 0, -0.03),                # the other side without it, -25 us
    (1_000_000, 1_000_003, 0.0),       # +3 ns: 0.0, not -0.0 nor a change
]


def _diff_cells(cases: list[tuple[int, int, float]]) -> list[float]:
    """The Diff Duration(ms) cells of OverallMetrics rows of these ns, made as ``overall_rows`` makes them (one
    pass over all the rows once they are added)."""
    rows = _Rows(SimpleNamespace(e2e_ns=10**7), SimpleNamespace(e2e_ns=10**7))
    for base_ns, comparison_ns, _ in cases:
        assert rows.add("row", "", (base_ns / 1e6, "/"), (comparison_ns / 1e6, "/"))
    rows.diffs()
    return [r[7] for r in rows.rows]


@pytest.mark.parametrize(("base_ns", "comparison_ns", "diff"), CASES)
def test_exact_change_to_the_hundredth_half_away_from_zero(base_ns: int, comparison_ns: int, diff: float) -> None:
    (got,) = _diff_cells([(base_ns, comparison_ns, diff)])
    assert got == diff and str(got) != "-0.0" and type(got) is float


def test_each_row_alone_in_one_pass() -> None:
    """All the rows at once give each row's own cell (the pass is row by row)."""
    got = _diff_cells(CASES)
    assert got == [d for _, _, d in CASES] and "-0.0" not in map(str, got)
