"""Session 72's hand mutants of session 71's source changes that the suite let live (mut72).

Each test names the mutants it kills; each fails under them and passes on the real code. Figures are by hand or
by the raw sample files (``test_gpu_alexnet``'s own reading of them), never read back from this package."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from test_gpu_alexnet import GPU, NPU, _net_of_communication_by_raw_files

from msprof_compare.api import compare
from msprof_compare.compare.summary import net_changes
from msprof_compare.compare.summary_notes import net_of_communication


def _rows(*rows: tuple[str, float, float]) -> pd.DataFrame:
    """OperatorCompareStatistic-shaped rows (Name, Base(ms), Comparison(ms)), as ``net_changes`` reads them."""
    return pd.DataFrame(rows, columns=["Name", "Base(ms)", "Comparison(ms)"])


def test_net_of_communication_of_a_base_side_holding_it(tmp_path: Path) -> None:
    """Kills n_held0 (the base side's communication not taken out of its time): test_gpu_alexnet's pair with the
    sides swapped, the NPU text export (AccumulateGrad's all-reduce) as the base. The ranking is the raw files'
    with every change's sign turned: the same names, in the same order, net of the base's HCCL ops."""
    if not NPU.is_dir():
        pytest.skip("shared samples not found")
    want = [(n, -d) for n, d in _net_of_communication_by_raw_files()]
    res = compare(str(NPU), str(GPU))
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    got = doc["summary"]["contributors_net_of_communication"]
    assert got is not None
    assert [(r["name"], round(r["diff_ms"] * 10**6)) for r in got] == want
    shown = ", ".join(f"{n} {Decimal(d) / 10**6:+.3f} ms" for n, d in want)
    assert shown.startswith("Optimizer.step#SGD.step -1.572 ms, DistributedDataParallel.forward -1.307 ms")
    assert doc["summary"]["contributors_note"].endswith(shown)


def test_net_ranking_names_five_where_the_cut_takes_more() -> None:
    """Kills n_top6 (NET_TOP 6): ten operators 1 ms slower each, no communication: the 80% cut takes eight, of
    which the first five in the sheet's order (equal changes keep it) are named."""
    rows = _rows(*((f"op{i}", 1.0, 2.0) for i in range(10)))
    assert net_changes(rows, [None, None]) == [(f"op{i}", 1.0) for i in range(5)]


def test_net_ranking_leaves_out_a_change_that_reads_0_000_ms() -> None:
    """Kills n_500 (the 0.001 ms mask dropped): +1000 ns and +400 ns; the 80% cut of their 1400 ns needs both,
    but +400 ns reads +0.000 ms, so one name is said."""
    rows = _rows(("a", 1.0, 1.001), ("b", 2.0, 2.0004))
    assert net_changes(rows, [None, None]) == [("a", 0.001)]


def test_net_ranking_reads_whole_ns_rounded() -> None:
    """Kills n_rint (ms * 1e6 cut down, not rounded, to ns): 1.001 ms is 1000999.9999999999 in floating point,
    1,001,000 ns; the communication inside (200,000 ns on the comparison side) is taken out: +0.801 ms."""
    rows = _rows(("a", 0.0, 1.001))
    assert net_changes(rows, [None, {"a": 200_000}]) == [("a", 0.801)]


def _communication(net: list[tuple[str, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A contributors' table whose one row, AccumulateGrad, changed by +106 ms of which +100 ms is its HCCL ops
    (COMM_SHARE met), and the "contributor_communication" frame holding that and the ranking ``net``."""
    acc = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    contrib = pd.DataFrame({"Name": [acc], "Diff(ms)": [106.0]})
    comm = pd.DataFrame({"Name": [acc], "Base(ms)": [0.0], "Comparison(ms)": [100.0]})
    comm.attrs.update(kinds=("GPU", "NPU"), held=(True, True), net=net)
    return contrib, comm


def test_net_ranking_said_only_where_it_names_an_operator_the_table_does_not() -> None:
    """Kills n_listed (the ranking said though every name in it is listed) and n_all (said only where none of its
    names is listed): the table's AccumulateGrad alone ranked says nothing; beside an unlisted op it is said."""
    acc = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    assert net_of_communication(*_communication([(acc, 6.0)])) == []
    both = [(acc, 6.0), ("Optimizer.step#SGD.step", 1.572)]
    assert net_of_communication(*_communication(both)) == both
