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


def test_match_rate_of_an_empty_side_says_its_figures_are_counts() -> None:
    """GPU AlexNet against a MindSpore export (no torch operator): the match-rate row's Base / Comparison
    hold the two sides' distinct operator names (115 and 0 on the H200 trace against the mindinsight
    msprof timeline), where every other run has rates there; the Detail says so."""
    from msprof_compare import compare

    data = Path(__file__).resolve().parent / "data"
    res = compare(str(data / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"),
                  str(data / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"),
                  enable_profiling_compare=True)
    row = res.guards.set_index("Check").loc["operator match rate"]
    assert row["Status"] == "unknown" and row["Comparison"] == 0 and row["Base"] > 0
    assert ("nothing to match, so no sheet pairs them (operator, module, memory, API) (figures: distinct operator "
            "names per side); warn below 60%") in row["Detail"]


def test_device_count_says_why_a_side_is_blank() -> None:
    """NPU text exports (pairs 1 and 2) name no device: kernel_details.csv has no device column, so the device
    count row was "unknown" with two blank figures and a Detail that did not say why; a DB export names its
    device (pair 3: 1 and 1) and keeps the short Detail."""
    from msprof_compare import compare

    text = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    kernel_details = next(text.rglob("kernel_details.csv")).read_text().splitlines()[0].lower()
    assert "device" not in kernel_details
    row = compare(str(text), str(text), enable_profiling_compare=True).guards.set_index("Check").loc["device count"]
    assert row["Status"] == "unknown" and row["Base"] is None and row["Comparison"] is None
    assert row["Detail"] == ("devices that ran kernels (else Kineto deviceProperties); blank: that side's data "
                             "names no device (an NPU text export's kernel_details.csv has no device column)")


def test_column_a_is_sized_by_the_module_contributors_the_sheet_shows(samples: Path) -> None:
    """DB level2 -> level1 has 15 module contributors, of which the Summary sheet shows the first 10: the
    other 5 names sized column A although no cell of it holds them."""
    from msprof_compare import compare

    r = compare(str(samples / "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"),
                str(samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"))
    modules = r.module_contributors
    assert len(modules) == 15
    names = summary.column_a_names(r.waterfall, r.contributors, modules)
    assert names == r.waterfall["Step"].tolist() + r.contributors["Name"].tolist() + \
        modules["Name"].tolist()[:10]
    assert summary.column_a_names(r.waterfall, r.contributors, None) == \
        r.waterfall["Step"].tolist() + r.contributors["Name"].tolist()
