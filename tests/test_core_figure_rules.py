"""Figures of the time breakdowns, classification, interval unions, communication and memory sheets that a
mutation audit (mut66) found no test held. Each expected value is worked by hand from the real excerpt the test
reads (tests/data/npu: the level1 torch_npu sample's 3 ms window, tests/data/README files give provenance), or
from rows written out in the test where no sample holds the case."""

from __future__ import annotations

import shutil
from pathlib import Path

from msprof_compare.compare import breakdown_npu as B
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data"
PT = DATA / "npu" / "rank0_ascend_pt"
OPTS = Options(enable_profiling_compare=True)


def _export(tmp_path: Path) -> Path:
    """A copy of the torch_npu text fixture to edit."""
    out = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, out)
    return out


# --------------------------------------------------------------------------- breakdown_npu


def test_an_export_without_kernel_details_has_no_categories_and_still_its_overlap_figures(tmp_path: Path) -> None:
    """Without kernel_details.csv the categories are absent, said so, and the Overlap Analysis figures stand:
    Computing 581,450 ns, as with the file (the lane, not the kernels, gives it)."""
    out = _export(tmp_path)
    (out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    bd = B.npu_breakdown(load_profile(str(out), OPTS), OPTS)
    assert bd.categories_missing == "no kernel_details.csv" and bd.hide_op_details
    assert bd.computing_ns == 581_450 and bd.categorised_ns == 0


def test_a_kernel_over_2_147_s_keeps_its_whole_duration_in_its_category(tmp_path: Path) -> None:
    """Durations are int64 ns: a MatMulV2 of 2,500,000 us (2.5e9 ns, past int32) adds all of it to Matmul (Cube).
    The fixture's five MatMulV2 kernels are 21.98 + 16.54 + 45.921 + 30.661 + 287.666 us = 402,768 ns; the last
    one made 2.5 s gives 115,102 + 2,500,000,000 ns."""
    out = _export(tmp_path)
    kd = out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = kd.read_text().splitlines(keepends=True)
    assert lines[-1].count(",287.666,") == 1
    lines[-1] = lines[-1].replace(",287.666,", ",2500000,")
    kd.write_text("".join(lines))
    bd = B.npu_breakdown(load_profile(str(out), OPTS), OPTS)
    assert (bd.buckets["matmul_cube"].ns, bd.buckets["matmul_cube"].count) == (115_102 + 2_500_000_000, 5)
