"""Work a DB load does only for the comparisons that read it (fixed costs of small DB pairs, session 77): the op
statistic, which stands in for op_statistic.csv, is made only for KernelTypeCompare, as the text loader reads
that file. Real data: msinsight's level-1 rank-0 DB export; its figures computed here by SQL."""

from __future__ import annotations

from pathlib import Path

from dbutil import sql

from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DB = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
FILE = f"{DB}/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"


def test_the_op_statistic_is_made_only_for_the_kernel_type_comparison(samples: Path) -> None:
    """Not for the kernel comparison by name, nor for --use_kernel_type without the kernel comparison (the option
    is void there); with both, each (OP Type, Core Type) of the compute tasks with its count, by SQL."""
    for opts in (Options(enable_kernel_compare=True), Options(enable_profiling_compare=True, use_kernel_type=True),
                 Options(enable_profiling_compare=True)):
        assert load_profile(str(samples / DB), opts).op_statistic is None
    st = load_profile(str(samples / DB), Options(enable_kernel_compare=True, use_kernel_type=True)).op_statistic
    want = sql(samples / FILE, "SELECT o.value, k.value, count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c "
                               "ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS o ON o.id = c.opType "
                               "JOIN STRING_IDS k ON k.id = c.taskType GROUP BY 1, 2")
    assert len(want) > 10
    assert sorted(zip(st["OP Type"], st["Core Type"], st["Count"], strict=True)) == sorted(want)

