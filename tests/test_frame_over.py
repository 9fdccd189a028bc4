"""Tables of ``model.FRAME_OVER_ROWS`` rows or more are built over their columns as they are (``model._frame_over``):
pandas' stacking of the columns into 2-d blocks copied every column of every table (the 1 GB NPU pair's tables:
280 MiB, ~0.1-0.2 s; docs/performance.md, session 64). Every figure must stay as it was: real pairs compared with
every table built so are compared with the stacked tables' results, sheet by sheet and on the console."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare import api, model
from msprof_compare.model import FRAME_OVER_ROWS, frame, frame_of

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
NPU1 = SAMPLES / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU2 = SAMPLES / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
TF = SAMPLES / "tracelens/tests/traces"
TF_H100 = TF / "h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
TF_MI300 = TF / "mi300/facebook_timesformer-base-finetuned-k400__1016002.json.gz"


def _columns(n: int) -> dict[str, np.ndarray]:
    names = np.empty(n, dtype=object)
    names[:] = [f"op{i % 7}" for i in range(n)]
    return {"name": names, "ts": np.arange(n, dtype=np.int64) * 10, "dur": np.full(n, 3, dtype=np.int64),
            "tid": np.arange(n, dtype=np.int64) % 4}


def test_a_large_table_holds_its_columns_and_equals_the_stacked_one(monkeypatch: pytest.MonkeyPatch) -> None:
    n = FRAME_OVER_ROWS
    cols = _columns(n)
    over = frame("python_functions", cols)
    for c, v in cols.items():  # each column is the array given, no copy
        assert np.shares_memory(over[c].to_numpy(), v)
    monkeypatch.setattr(model, "FRAME_OVER_ROWS", n + 1)
    stacked = frame("python_functions", cols)
    assert not np.shares_memory(stacked["ts"].to_numpy(), cols["ts"])
    pd.testing.assert_frame_equal(over, stacked)
    assert over.dtypes.tolist() == stacked.dtypes.tolist() == [np.dtype(object)] + [np.dtype(np.int64)] * 3


def test_views_read_only_and_repeated_columns_are_copied_once() -> None:
    n = FRAME_OVER_ROWS
    two_d = np.arange(2 * n, dtype=np.int64).reshape(n, 2)
    ro = np.arange(n, dtype=np.int64)
    ro.flags.writeable = False
    same = np.zeros(n, dtype=np.int64)
    df = frame_of({"view": two_d[:, 0], "ro": ro, "a": same, "b": same})
    assert not np.shares_memory(df["view"].to_numpy(), two_d)  # the 2-d base is not kept alive by the table
    assert not np.shares_memory(df["ro"].to_numpy(), ro)
    assert np.shares_memory(df["a"].to_numpy(), same) and not np.shares_memory(df["b"].to_numpy(), same)
    df.loc[df.index[:5], "a"] = 9  # an in-place write: allowed, and it moves one column only
    df.loc[df.index[:5], "ro"] = 9
    assert df["a"].head(5).tolist() == [9] * 5 and df["b"].head(5).tolist() == [0] * 5
    assert df["view"].tolist() == two_d[:, 0].tolist() and ro[:5].tolist() == [0, 1, 2, 3, 4]


def test_a_contiguous_view_is_copied_too() -> None:
    """A slice of a longer 1-d array is contiguous and writable, yet a view: held as it is, the table would keep
    the whole base alive (and a write through the table would show in it)."""
    n = FRAME_OVER_ROWS
    longer = np.arange(2 * n, dtype=np.int64)
    df = frame_of({"head": longer[:n]})
    assert not np.shares_memory(df["head"].to_numpy(), longer)
    df.loc[df.index[:3], "head"] = -1
    assert longer[:3].tolist() == [0, 1, 2] and df["head"].head(4).tolist() == [-1, -1, -1, 3]


def _run(base: Path, comp: Path) -> tuple[dict[str, pd.DataFrame], str]:
    result = api.compare(str(base), str(comp), enable_profiling_compare=True, enable_operator_compare=True,
                         enable_memory_compare=True, enable_communication_compare=True, enable_api_compare=True,
                         enable_kernel_compare=True)
    return {name: result.sheet(name) for name in result.sheet_names}, result.console_table()


@pytest.mark.parametrize(("base", "comp"), [(NPU1, NPU2), (TF_H100, TF_MI300)], ids=["npu_pair1", "timesformer"])
def test_real_pairs_give_the_same_figures_with_every_table_built_over_its_columns(
        base: Path, comp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (base.exists() and comp.exists()):
        pytest.skip("shared samples not present")
    sheets, console = _run(base, comp)
    monkeypatch.setattr(model, "FRAME_OVER_ROWS", 1)
    calls: list[int] = []
    real = model._frame_over
    monkeypatch.setattr(model, "_frame_over", lambda *a: calls.append(a[2]) or real(*a))
    over_sheets, over_console = _run(base, comp)
    assert len(calls) > 10 and max(calls) > 1000  # the loaders' tables went through _frame_over
    assert over_console == console and list(over_sheets) == list(sheets) and len(sheets) >= 6
    for name, frame_ in sheets.items():
        pd.testing.assert_frame_equal(over_sheets[name], frame_, check_exact=True)
