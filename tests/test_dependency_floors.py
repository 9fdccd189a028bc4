"""Behaviours that hold only from a given release of a dependency on: each test here failed at the old
floor of ``pyproject.toml`` (``tools/min-versions.txt`` says how to run the suite at the floors)."""

from __future__ import annotations

import pandas as pd

from msprof_compare.compare.contributors import top_contributors
from msprof_compare.report.summary_console import render_contributors


def test_contributors_table_as_wide_as_its_longer_title() -> None:
    """A title wider than the columns widens the table to the title, no further (prettytable < 3.6 scaled
    every column up with its padding and overshot: the title then sat in extra spaces), and by its name column.
    The times are the top operators of the timesformer H100 vs MI300X pair (reference-outputs pair 6), whose
    console showed it."""
    rows = pd.DataFrame({"Name": ["aten::softmax", "aten::matmul", "aten::mul", "aten::linear", "aten::add"],
                         "Base(ms)": [68.781, 50.276, 15.556, 8.491, 1.0],
                         "Comparison(ms)": [41.857, 45.126, 11.024, 12.815, 0.0]})
    text = render_contributors(top_contributors(rows, "operator"))
    lines = text.splitlines()
    title = lines[1][2:-2]
    assert title.startswith("Top Contributors (operator level: ") and title == title.strip()
    assert {len(line) for line in lines} == {len(title) + 4}
    # the name column takes the room (prettytable gave it to the last column, "Cumulative Share" drifting right)
    assert lines[3] == ("| # | Name" + " " * 40 + "| Base(ms) | Comparison(ms) | Diff(ms) | Share | Cumulative Share |")
