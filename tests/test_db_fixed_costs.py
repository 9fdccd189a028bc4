"""Work a DB load does only for the comparisons that read it (fixed costs of small DB pairs, session 77): the op
statistic, which stands in for op_statistic.csv, is made only for KernelTypeCompare, as the text loader reads
that file. Real data: msinsight's level-1 rank-0 DB export; its figures computed here by SQL."""

from __future__ import annotations

from pathlib import Path

from dbutil import edited_copy, sql

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


def test_each_rows_connection_ids_are_the_sql_join(samples: Path, tmp_path: Path) -> None:
    """The (op, CANN connection id) pairs that link ops to tasks, each op's first id and each Enqueue / Dequeue
    row's, as a SQL join finds them: every pair once in op order (the read's, PYTORCH_API's row order), ids
    ascending; the first the least. The level-2 export with a CONNECTION_IDS row written twice, one of no
    connection id and the table reversed (the binary search reads it sorted, each pair once)."""
    src = samples / FILE.replace("level1", "level2")
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     "CREATE TABLE zz AS SELECT * FROM CONNECTION_IDS ORDER BY rowid DESC",
                     "INSERT INTO zz SELECT * FROM CONNECTION_IDS WHERE rowid % 7 = 0",
                     "INSERT INTO zz SELECT id, NULL FROM CONNECTION_IDS WHERE rowid % 11 = 0",
                     "DELETE FROM CONNECTION_IDS", "INSERT INTO CONNECTION_IDS SELECT * FROM zz", "DROP TABLE zz")
    p = load_profile(str(db), Options(enable_profiling_compare=True, enable_memory_compare=True))
    timed = "startNs IS NOT NULL AND endNs IS NOT NULL"
    ops = [r for (r,) in sql(db, f"SELECT rowid FROM PYTORCH_API WHERE type = 50001 AND {timed} ORDER BY rowid")]
    pos = {r: i for i, r in enumerate(ops)}
    pairs = sql(db, "SELECT DISTINCT p.rowid, c.connectionId FROM PYTORCH_API p JOIN CONNECTION_IDS c ON c.id = "
                    f"p.connectionId WHERE p.type = 50001 AND p.{timed.replace(' AND ', ' AND p.')} AND "
                    "c.connectionId IS NOT NULL ORDER BY p.rowid, c.connectionId")
    assert len(pairs) > 200 and len(ops) > 500 and len(p.ops) == len(ops)
    oc = p.extra["op_connections"]
    assert list(zip(oc["op_row"].tolist(), oc["connection_id"].tolist(), strict=True)) == \
        [(pos[r], c) for r, c in pairs]
    first = dict(sql(db, f"SELECT p.rowid, min(c.connectionId) FROM PYTORCH_API p JOIN CONNECTION_IDS c ON "
                         f"c.id = p.connectionId WHERE p.type = 50001 AND p.{timed.replace(' AND ', ' AND p.')} "
                         "GROUP BY p.rowid"))
    assert p.ops["connection_id"].tolist() == [first.get(r, -1) for r in ops]
    queue = sql(db, "SELECT min(c.connectionId) FROM PYTORCH_API p LEFT JOIN CONNECTION_IDS c ON c.id = "
                    f"p.connectionId WHERE p.type = 50002 AND p.{timed.replace(' AND ', ' AND p.')} "
                    "GROUP BY p.rowid ORDER BY p.rowid")
    assert len(queue) > 100
    assert p.queue["correlation_id"].tolist() == [-1 if c is None else c for (c,) in queue]
