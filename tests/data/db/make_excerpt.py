"""Cut the small real DB excerpts in this folder from the shared samples (run once; output committed).

Keeps only the tables and columns the DB loader reads, all rows of one profiled
step (the samples hold exactly one, ProfilerStep#50), PMU rows only for the
counters the breakdown uses and MEMORY_RECORD only around its peak, so every
OverallMetrics figure of the full file is unchanged.
Usage: python make_excerpt.py SAMPLES_DIR
"""

from __future__ import annotations

import os
import sqlite3
import sys

KEEP = ("STRING_IDS", "ENUM_API_TYPE", "STEP_TIME", "TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_OP",
        "COMMUNICATION_TASK_INFO", "PYTORCH_API", "CONNECTION_IDS", "OP_MEMORY", "META_DATA")
PAIRS = {"l1": "level1", "l2": "level2"}


def cut(src: str, dst: str) -> None:
    if os.path.exists(dst):
        os.remove(dst)
    con = sqlite3.connect(dst)
    con.execute("ATTACH DATABASE ? AS s", (f"file:{src}?mode=ro",))
    for t in KEEP:
        sql = con.execute("SELECT sql FROM s.sqlite_master WHERE name = ?", (t,)).fetchone()[0]
        con.execute(sql)
        con.execute(f"INSERT INTO main.{t} SELECT * FROM s.{t}")
    for t in ("TASK_PMU_INFO", "MEMORY_RECORD"):
        sql = con.execute("SELECT sql FROM s.sqlite_master WHERE name = ?", (t,)).fetchone()[0]
        con.execute(sql)
    con.execute("INSERT INTO main.TASK_PMU_INFO SELECT * FROM s.TASK_PMU_INFO WHERE name IN "
                "(SELECT id FROM s.STRING_IDS WHERE value IN ('aic_total_time', 'aic_mac_time', "
                "'aic_mte2_time', 'aiv_time'))")
    con.execute("INSERT INTO main.MEMORY_RECORD SELECT * FROM s.MEMORY_RECORD ORDER BY totalReserved DESC LIMIT 20")
    con.commit()
    con.execute("DETACH DATABASE s")
    con.execute("VACUUM")
    con.close()


if __name__ == "__main__":
    root = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    for short, level in PAIRS.items():
        src = os.path.join(root, "msinsight/test/data/pytorch/db", level,
                           "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db")
        out_dir = os.path.join(here, short)
        os.makedirs(out_dir, exist_ok=True)
        cut(src, os.path.join(out_dir, "ascend_pytorch_profiler_0.db"))
