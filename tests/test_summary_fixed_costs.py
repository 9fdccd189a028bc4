"""The Summary's helpers that read the sheets by arrays instead of frame takes and pandas' str methods (session
50: NPU pair 1's fixed costs), checked against the pandas expressions they replace on the real sheets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare.api import compare
from msprof_compare.compare import contributors, module_contributors

TEXT = "msinsight/test/data/pytorch/text"


@pytest.fixture(scope="module")
def module_sheet() -> pd.DataFrame:
    samples = Path(__file__).resolve().parents[2] / "shared" / "samples"
    if not samples.is_dir():
        pytest.skip(f"sample data not found at {samples}")
    res = compare(str(samples / TEXT / "level1/rank0_ascend_pt"), str(samples / TEXT / "level2/rank0_ascend_pt"),
                  enable_operator_compare=True)
    return next(s for s in res.sheets if s.name == "ModuleCompareStatistic").data


def _by_pandas(d: pd.DataFrame) -> tuple[np.ndarray, list, np.ndarray, np.ndarray]:
    """The module operator rows as the Summary read them before: a boolean row take and pandas' str methods."""
    keep = (d.iloc[:, 4].astype(str) != "[ TOTAL ]").to_numpy()
    ops = d[keep]
    name = ops.iloc[:, 3].astype(str).str.strip() + " > " + ops.iloc[:, 4].astype(str)
    return (np.flatnonzero(keep), name.tolist(), ops.iloc[:, 6].to_numpy(np.float64),
            ops.iloc[:, 10].to_numpy(np.float64))


def test_module_operator_columns_match_the_pandas_reading(module_sheet) -> None:
    """Rows, names and device ms of the level-1 / level-2 pair's 105-row sheet as the pandas expression reads
    them; a copy with a missing module cell and a missing operator cell names those rows as pandas did."""
    for d in (module_sheet, module_sheet.astype({module_sheet.columns[3]: object, module_sheet.columns[4]: object})):
        d = d.copy()
        first_op = int(np.flatnonzero(d.iloc[:, 4].astype(str) != "[ TOTAL ]")[0])
        d.iloc[first_op, 3], d.iloc[first_op + 1, 4] = None, None
        rows, cols = contributors.module_operator_columns(d)
        want_rows, names, base, comp = _by_pandas(d)
        assert rows.tolist() == want_rows.tolist() and len(rows) > 50
        got = cols["Name"].tolist()
        assert [n if isinstance(n, str) else "<missing>" for n in got] == \
            [n if isinstance(n, str) else "<missing>" for n in names]
        assert cols["Base(ms)"].tolist() == np.nan_to_num(base).tolist()
        assert cols["Comparison(ms)"].tolist() == np.nan_to_num(comp).tolist()
        assert (pd.isna(got[0]), pd.isna(got[1])) == (pd.isna(names[0]), pd.isna(names[1]))
    level, frame = module_contributors._module_rows([_Sheet(module_sheet)])
    want_rows, names, _, _ = _by_pandas(module_sheet)
    assert level == "module operator" and frame["Name"].tolist() == names
    assert frame["n_base"].tolist() == module_sheet.iloc[want_rows, 7].astype(float).tolist()
    assert frame["n_comparison"].tolist() == module_sheet.iloc[want_rows, 11].astype(float).tolist()


def test_rows_by_value_are_each_names_rows_in_sheet_order(module_sheet) -> None:
    """Each operator name's rows of the 105-row sheet (as a loop over the rows finds them), ascending, as int64; a
    missing name (None, NaN) in no group, "" a name like any other, no row at all no group."""
    names = module_sheet.iloc[:, 4].astype(object).to_numpy().copy()
    names[[3, 7]] = None, np.nan
    names[9] = ""
    want: dict = {}
    for i, n in enumerate(names.tolist()):
        if isinstance(n, str):
            want.setdefault(n, []).append(i)
    got = module_contributors._rows_by_value(names)
    assert list(got) == list(want) and len(want) > 20 and "[ TOTAL ]" in want and "" in want
    assert all(got[n].dtype == np.int64 and got[n].tolist() == want[n] for n in want)
    assert module_contributors._rows_by_value(np.empty(0, dtype=object)) == {}


class _Sheet:
    """The two attributes ``_module_rows`` reads of a sheet."""

    name = "ModuleCompareStatistic"

    def __init__(self, data: pd.DataFrame) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)


def test_empty_contributors_are_fresh_frames() -> None:
    """The empty contributors frame is a new frame on every call, as the constructor made it: attrs set on one
    (``summary.build`` writes the fallback reason there) and columns added to it reach no later one."""
    columns = contributors.CONTRIBUTOR_COLUMNS
    first = contributors.empty_contributors(columns)
    pd.testing.assert_frame_equal(first, pd.DataFrame({c: pd.Series(dtype=object) for c in columns}))
    first.attrs["fallback"] = "why"
    first["extra"] = []
    second = contributors.empty_contributors(columns)
    assert second is not first and second.attrs == {} and list(second.columns) == columns
    assert contributors.top_contributors(pd.DataFrame({"Name": ["a"], "Base(ms)": [1.0], "Comparison(ms)": [1.0]}),
                                         "operator").attrs == {}


def test_module_sheets_make_only_the_kernel_lines_they_show() -> None:
    """The module sheets read the "Kernel Details" lines of the kernels handed to top-layer ops inside modules (151
    of the 539 pool rows a side of the level-1 text export): ``kernel_text_of`` makes those lines alone, each the
    line ``kernel_text`` makes for its row, whether or not the full text was made first."""
    from msprof_compare.api import RunContext
    from msprof_compare.compare import modules, optree

    samples = Path(__file__).resolve().parents[2] / "shared" / "samples"
    if not samples.is_dir():
        pytest.skip(f"sample data not found at {samples}")
    res = compare(str(samples / TEXT / "level1/rank0_ascend_pt"), str(samples / TEXT / "level2/rank0_ascend_pt"),
                  enable_operator_compare=True)
    side = modules.module_trees(RunContext(res.base, res.comparison, res.options), "base")
    rows = side.top_krows
    assert 0 < len(np.unique(rows)) < len(side.tree.kpool)
    made = []
    real = optree.kernel_lines
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(optree, "kernel_lines", lambda p, pool, r=None: made.append(r) or real(p, pool, r))
        fresh = optree.build_tree(side.profile, with_comm=True)
        some = fresh.kernel_text_of(rows)
    assert len(made) == 1 and made[0] is rows  # the shown rows only, not the pool
    full = fresh.kernel_text()
    assert some.tolist() == full[rows].tolist() == fresh.kernel_text_of(rows).tolist()
    assert all(line.endswith("]\n") and line.count(", ") >= 2 for line in some.tolist())
