"""Counts in log lines carry thousands separators, as their neighbours' do (``4,140 device allocations``): the
cycles of a rank-by-rank compare, the waterfall's consistency line. The counts here are set by hand."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from msprof_compare import api
from msprof_compare.compare.breakdown import Breakdown
from msprof_compare.compare.waterfall import waterfall
from msprof_compare.options import API_FACE
from msprof_compare.units import RankCycle


def test_cycles_one_folder_alone_holds_are_counted_with_separators(monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A single device's 1,001 cycles against 1,000: "(1001 cycles against 1000)" now reads as the other counts."""
    held = {"b": 1001, "c": 1000}
    monkeypatch.setattr(api, "_discover", lambda folder, *a, **k: {
        RankCycle(None, k): f"{folder}/cycle{k}" for k in range(1, held[folder] + 1)})
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        pairs, alone = api.rank_pairs("b", "c", {}, API_FACE)
    assert (len(pairs), list(alone)) == (1000, [RankCycle(None, 1001)])
    assert caplog.messages == ["Cycle only in the base b (1,001 cycles against 1,000), not compared: 1001"]


@dataclass
class _Off(Breakdown):
    """A breakdown whose free time is off its E2E by ``off`` ns, as a loader that filled it inconsistently would
    leave it (the waterfall's identity holds by construction otherwise)."""

    off: int = 0

    @property
    def free_ns(self) -> int:  # type: ignore[override]
        return super().free_ns - self.off


def test_waterfall_that_does_not_add_up_says_by_how_much_with_separators(caplog: pytest.LogCaptureFixture) -> None:
    base = Breakdown("GPU", computing_ns=600_000, e2e_ns=1_000_000)
    comparison = _Off("GPU", computing_ns=700_000, e2e_ns=3_000_000, off=1_234_567)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        wf = waterfall(base, comparison)
    # the steps' deltas: computing +100,000, free (2,300,000 - 1,234,567) - 400,000 = +665,433; the E2E's +2,000,000
    steps = wf[~wf["Category"].isin(["start", "end"])]
    assert int(steps["Delta(ns)"].sum()) == 765_433 == 2_000_000 - 1_234_567
    assert caplog.messages == ["waterfall steps do not add up to the E2E difference (off by 1,234,567 ns)"]
