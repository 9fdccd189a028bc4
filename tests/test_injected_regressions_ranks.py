"""A regression planted in one rank of a copy of the msinsight level-1 text export (two ranks of one AlexNet step;
the originals are never written), compared rank by rank as a user of a cluster run does (``-bp old/ -d new/``):
the tool must point at the rank, the waterfall step, the operator, the module row and the kernel that moved.

Rank 0's forward MatMulV2 kernel under aten::addmm (kernel_details.csv Start Time 1736408883716197.363) is made
30 us longer into the idle time after it (``_text_kernel_lengthened``: the trace event, its Overlap Analysis
Computing event, the Free event after it, kernel_details.csv and op_statistic.csv); rank 1 is a plain copy.
Expected figures: the 30 us planted, and the kernel's duration and input shapes read from kernel_details.csv.
"""

from __future__ import annotations

import csv
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from test_injected_regressions import (  # tests/ is on sys.path (rootdir import mode)
    _device_time_inserted,
    _last_allreduce_wait,
    _text_kernel_lengthened,
)
from test_ranks import table_rows

from msprof_compare.api import compare_ranks
from tests.cliutil import run_inproc

_LEVEL1 = "msinsight/test/data/pytorch/text/level1"
_MATMUL = "1736408883716197.363"  # rank 0: aclnnAddmm_MatMulCommon_MatMulV2 under aten::addmm, idle time after it


def _kernel(export: Path, start: str) -> dict[str, str]:
    with open(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        return next(r for r in csv.DictReader(fh) if r["Start Time(us)"].strip() == start)


@pytest.fixture
def slowed(samples: Path, tmp_path: Path) -> tuple[Path, Path]:
    base = samples / _LEVEL1
    if not base.is_dir():
        pytest.skip("sample data not found")
    new = tmp_path / "new"
    shutil.copytree(base, new)
    _text_kernel_lengthened(new / "rank0_ascend_pt", _MATMUL, Decimal(30))
    return base, new


def test_a_kernel_slowed_in_one_rank_is_pointed_at_by_rank_step_operator_module_and_kernel(slowed, capsys, tmp_path):
    base, new = slowed
    row = _kernel(base / "rank0_ascend_pt", _MATMUL)
    assert (row["Name"], row["Type"]) == ("aclnnAddmm_MatMulCommon_MatMulV2", "MatMulV2")
    code, out, err = run_inproc(capsys, "-bp", str(base), "-d", str(new), "-o", str(tmp_path / "out"))
    assert code == 0, err
    # the ranks table: rank 0 computes 0.030 ms more and idles 0.030 ms less (its E2E unchanged); rank 1 unmoved
    rows = table_rows(out)
    # the largest step: Matmul and Free: Other moved as much, the first in the waterfall's order is named
    assert rows[0][3:] == ["+0.000", "+0.00%", "+0.030", "+0.000", "-0.030", "A +0.030"]
    assert rows[1][3:] == ["+0.000", "+0.00%", "+0.000", "+0.000", "+0.000", "-"]
    assert "Largest Step A: Matmul\n" in out  # the key's step, named under the table
    assert "straggler" not in out  # no other rank waits longer: no straggler is named
    results = dict(compare_ranks(str(base), str(new)))
    r0, r1 = results[0], results[1]
    # rank 0: the Matmul step (its Free: Other the other way), the forward pass the operator, Linear_0's aten::linear
    # the module row, the MatMulV2 kernel of its shapes in KernelCompare
    steps = r0.waterfall[r0.waterfall["Delta(ms)"].astype(float).fillna(0) != 0]
    assert steps[["Step", "Delta(ms)"]].values.tolist() == [["Matmul", 0.03], ["Free: Other", -0.03]]
    assert r0.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.03]]
    modules = r0.frames["module_contributors"]
    assert modules[["Name", "Diff(ms)"]].values.tolist() == [
        ["/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::linear", 0.03]]
    kernels = r0.sheet("KernelCompare")
    diff = kernels["Total Duration(us).1"].astype(float) - kernels["Total Duration(us)"].astype(float)
    moved = kernels[diff.abs() > 1e-9]
    assert moved[["Kernel", "Input Shape"]].values.tolist() == [["MatMulV2", row["Input Shapes"]]]
    assert float(diff[moved.index[0]]) == pytest.approx(30.0, abs=1e-6)  # us
    # rank 1: nothing moved, nothing listed
    assert not (r1.waterfall["Delta(ms)"].astype(float).fillna(0) != 0).any() and not len(r1.contributors)


def test_a_straggler_is_named_by_its_computing_and_the_other_ranks_waiting(samples, tmp_path, capsys):
    """A synchronous job's straggler: rank 0's MatMulV2 kernel (the one above) 1 ms longer, its timeline 1 ms later
    (``_device_time_inserted`` halfway through the kernel), and rank 1 waiting for it: the longest Notify_Wait of its
    last all-reduce 1 ms longer, its timeline 1 ms later. Expected: each rank's E2E +1.000 ms; rank 0's largest
    waterfall step Matmul +1.000 ms, rank 1's its communication group's uncovered time +1.000 ms; rank 0 named
    the likely straggler, rank 1 waiting on it; the overview records both, in ns."""
    base = samples / _LEVEL1
    if not base.is_dir():
        pytest.skip("sample data not found")
    new = tmp_path / "new"
    new.mkdir()
    kernel = _kernel(base / "rank0_ascend_pt", _MATMUL)
    at = Decimal(_MATMUL) + Decimal(kernel["Duration(us)"]) / 2
    grown = _device_time_inserted(base / "rank0_ascend_pt", new / "rank0_ascend_pt", at, Decimal(1000))
    assert sorted(grown) == sorted([f"Ascend Hardware: {kernel['Name']}", "Overlap Analysis: Computing",
                                    f"kernel_details: {kernel['Name']}"])  # the kernel alone, no collective
    _, wait = _last_allreduce_wait(base / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    grown = _device_time_inserted(base / "rank1_ascend_pt", new / "rank1_ascend_pt",
                                  Decimal(wait["ts"]) + wait["dur"], Decimal(1000))
    assert "HCCL: Notify_Wait" in grown and "Overlap Analysis: Computing" not in grown
    out_dir = tmp_path / "out"
    code, out, err = run_inproc(capsys, "-bp", str(base), "-d", str(new), "-o", str(out_dir),
                                "--output_format", "json")
    assert code == 0, err
    rows = table_rows(out)
    assert rows[0][3:] == ["+1.000", f"{100 / float(rows[0][1]):+.2f}%", "+1.000", "+0.000", "+0.000",
                           "A +1.000"]
    assert rows[1][3:] == ["+1.000", f"{100 / float(rows[1][1]):+.2f}%", "+0.000", "+1.000", "+0.000",
                           "B +1.000"]
    assert "Largest Step A: Matmul\nLargest Step B: Group 0 Communication (uncovered)\n" in out
    assert ("Likely straggler: rank 0, Computing +1.000 ms; rank 1's Uncovered Communication +1.000 ms "
            "(waiting on it)") in out.splitlines()
    (overview,) = out_dir.glob("performance_comparison_result_ranks_*.json")
    doc = json.loads(overview.read_text(encoding="utf-8"))
    assert [r["largest_step"] for r in doc["ranks"]] == [
        {"step": "Matmul", "diff_ns": 1_000_000, "diff_ms": 1.0},
        {"step": "Group 0 Communication (uncovered)", "diff_ns": 1_000_000, "diff_ms": 1.0}]
    assert doc["straggler"] == {"rank": 0, "computing_diff_ns": 1_000_000, "computing_diff_ms": 1.0,
                                "other_ranks": [1], "others_uncovered_communication_diff_ms": 1.0}
    assert doc["straggler_line"].startswith("Likely straggler: rank 0, Computing +1.000 ms")
