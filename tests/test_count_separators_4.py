"""Counts of a thousand or more in the Summary notes' words are written with separators, as the console writes
every count (session 65's ``summary_notes`` changes; mutation audit mut65b). Inputs built by hand, figures counted
from them."""

from __future__ import annotations

import pandas as pd

from msprof_compare.compare import summary_notes


def test_name_map_groups_past_three_are_counted_with_separators() -> None:
    """1,000 op_name_map groups: three shown, then '; ... (1,000 in all)'."""
    groups = [([f"x{i}", f"y{i}"], 1.0, 1.0) for i in range(1000)]
    assert summary_notes.name_map_text(groups, "ms", 3).endswith(
        "x2 with y2 1.000 ms -> 1.000 ms together (+0.000 ms); ... (1,000 in all)")


def test_a_thousand_contributors_holding_communication_are_counted_with_separators() -> None:
    """1,200 listed contributors, each +1 ms of which +1 ms is communication (0 -> 1 ms): all named, under
    'most of the change of 1,200 listed contributors'."""
    names = [f"op{i}" for i in range(1200)]
    contrib = pd.DataFrame({"Name": names, "Diff(ms)": [1.0] * 1200})
    comm = pd.DataFrame({"Name": names, "Base(ms)": [0.0] * 1200, "Comparison(ms)": [1.0] * 1200})
    note = summary_notes.unexplained_note(contrib, pd.DataFrame({"Delta(ns)": [0]}), comm)  # no E2E change to explain
    assert note.startswith("most of the change of 1,200 listed contributors is collective communication launched "
                           "inside them")
    assert note.count("communication 0.000 ms -> 1.000 ms") == 1200
