"""Figures of the time breakdowns, classification, interval unions, communication and memory sheets that a
mutation audit (mut66) found no test held. Each expected value is worked by hand from the real excerpt the test
reads (tests/data/npu: the level1 torch_npu sample's 3 ms window, tests/data/README files give provenance), or
from rows written out in the test where no sample holds the case."""

from __future__ import annotations

import shutil
from pathlib import Path

from msprof_compare.compare import breakdown_npu as B
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data"
PT = DATA / "npu" / "rank0_ascend_pt"
TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
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


# --------------------------------------------------------------------------- breakdown_gpu


def test_a_gpu_kernel_over_2_147_s_keeps_its_whole_duration(tmp_path: Path) -> None:
    """The timesformer excerpt's last kernel (ts 1420179774617.142 us, 60 us, after the GEMM that ends at
    774615.446 us) made 2,500,000 us long: E2E runs from the first kernel (760069.636 us) to its new end,
    (774617.142 - 760069.636) us + 2.5 s = 2,514,547,506 ns, and Computing gains its 2.5 s less the 60 us it had
    (14,478,811 ns before): 2,514,418,811 ns; Free Time is unchanged (128,695 ns)."""
    text = TIMESFORMER.read_text()
    old = '"ts": 1420179774617.142, "dur": 60.0,'
    assert text.count(old) == 1
    trace = tmp_path / "long.pt.trace.json"
    trace.write_text(text.replace(old, '"ts": 1420179774617.142, "dur": 2500000.0,'))
    bd = gpu_breakdown(load_profile(str(trace), OPTS), OPTS)
    assert (bd.e2e_ns, bd.computing_ns, bd.free_ns) == (2_514_547_506, 2_514_418_811, 128_695)
