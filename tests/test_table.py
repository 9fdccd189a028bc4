"""The shared diff / ratio rule of every detail sheet (reference-2 §0.1)."""

from __future__ import annotations

import math

from msprof_compare.compare.table import diff_ratio


def test_diff_ratio_unit_facts():
    """reference-2 §0.1 UT facts, and its consequence: a diff is rounded to 0.01 (0.019 - 0.014 shows 0)."""
    assert diff_ratio(10, 15) == (5.0, 1.5)
    assert diff_ratio(2.5, 3.75) == (1.25, 1.5)
    assert diff_ratio(20, 10) == (-10.0, 0.5)
    assert diff_ratio(0, 0) == (0.0, 1.0)
    assert diff_ratio(0, 5) == (5.0, math.inf)
    assert diff_ratio(-10, -5) == (5.0, 0.5)
    assert diff_ratio(0.014, 0.019) == (0.0, 1.3571)
    assert diff_ratio(1.234, 2.3456) == (1.11, 1.9008)
