"""Summary sheet readability found by a first-time user's audit (session 36).

Pair 1 (msinsight AlexNet text export, Level1 vs Level2): its one top contributor is
``autograd::engine::evaluate_function: torch::autograd::AccumulateGrad`` (68 characters), the reason
the comparison is faster; in the Summary's 34-character column A, with its Base(ms) figure in
column B, it read ``autograd::engine::evaluate_function: torch::autog``.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from msprof_compare.compare import summary

NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
ACCUMULATE_GRAD = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"


def test_summary_column_a_fits_the_top_contributor(samples: Path, tmp_path: Path) -> None:
    from msprof_compare import compare

    r = compare(str(samples / NPU_L1), str(samples / NPU_L2), enable_profiling_compare=True,
                enable_operator_compare=True)
    assert r.contributors["Name"].tolist() == [ACCUMULATE_GRAD]
    assert len(ACCUMULATE_GRAD) == 68
    # 68 characters + the 2-character margin; the other columns keep their widths
    assert [c.width for c in r.sheets[0].columns] == [70, 16, 16, 14, 16, 18]
    ws = openpyxl.load_workbook(r.to_excel(str(tmp_path)))["Summary"]
    assert ws.column_dimensions["A"].width > 70  # xlsxwriter stores the width plus its cell padding
    assert ws.column_dimensions["B"].width < 17


@pytest.mark.parametrize(("names", "width"), [
    ([], 34),                                                   # no name: the usual width
    (["Base E2E", "Matmul", None], 34),                         # short names (a blank cell): the usual width
    (["Other Computing (minus overlap of categories)"], 47),     # 45 characters + 2
    (["x" * 200], 72),                                              # a long kernel name: at most the cap
    (["\u7b97\u5b50" * 20], 72),                                 # 40 wide characters are 80 units: capped
    (["\u7b97\u5b50" * 10], 42),                                 # 20 wide characters: 40 units + 2
])
def test_step_column_width(names: list, width: int) -> None:
    assert summary._step_column(names).width == width
    assert summary._step_column(names).header == "Step"
