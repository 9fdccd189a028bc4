"""Synthesise a large profiler DB by replicating the rows of a sample DB (for speed / memory checks).

    python bench/make_large_db.py SRC.db OUT/ascend_pytorch_profiler_0.db --size-mb 500

(the output must keep a profiler DB name, ascend_pytorch_profiler_*.db, to be compared)

Every replica of the tables the compare reads is shifted in time by one source
span (plus a gap) and gets fresh ids (globalTaskId, connectionId, opId,
CONNECTION_IDS ids, step ids, call chain ids), so the result looks like one long run with many
steps; each replica's ``ProfilerStep#N`` ops are named after its step ids (new
STRING_IDS rows), as a real export names them, so any step can be selected.
A with_stack export's PYTORCH_CALLCHAINS grows with its ops (one chain per op
that has a stack, ~15 frames each in msinsight's samples), as in a longer run.
Other tables are copied once. Indexes of the source are rebuilt at the end.
Write OUT under /tmp: never commit the result.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
import urllib.parse

#: table -> (time columns, id columns {column: id space}); id spaces are offset per replica.
REPLICATED: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "TASK": (("startNs", "endNs"), {"globalTaskId": "task", "connectionId": "conn"}),
    "COMPUTE_TASK_INFO": ((), {"globalTaskId": "task"}),
    "TASK_PMU_INFO": ((), {"globalTaskId": "task"}),
    "COMMUNICATION_TASK_INFO": ((), {"globalTaskId": "task", "opId": "op"}),
    "COMMUNICATION_OP": (("startNs", "endNs"), {"opId": "op", "connectionId": "conn"}),
    "PYTORCH_API": (("startNs", "endNs"), {"connectionId": "link", "callchainId": "chain"}),
    "PYTORCH_CALLCHAINS": ((), {"id": "chain"}),
    "CONNECTION_IDS": ((), {"id": "link", "connectionId": "conn"}),
    "MEMORY_RECORD": (("timestamp",), {}),
    "OP_MEMORY": (("allocationTime", "releaseTime"), {}),
    "STEP_TIME": (("startNs", "endNs"), {"id": "step"}),
}
#: (table, column) giving the size of each id space in the source.
ID_SPACES = {
    "task": [("TASK", "globalTaskId")],
    "conn": [("TASK", "connectionId"), ("COMMUNICATION_OP", "connectionId"), ("CONNECTION_IDS", "connectionId")],
    "op": [("COMMUNICATION_OP", "opId"), ("COMMUNICATION_TASK_INFO", "opId")],
    "link": [("CONNECTION_IDS", "id"), ("PYTORCH_API", "connectionId")],
    "step": [("STEP_TIME", "id")],
    "chain": [("PYTORCH_CALLCHAINS", "id"), ("PYTORCH_API", "callchainId")],
}
#: Columns stored as TEXT in the exports (shifted through an integer cast).
TEXT_TIMES = {("PYTORCH_API", "startNs"), ("PYTORCH_API", "endNs")}


def _tables(con: sqlite3.Connection, schema: str) -> dict[str, str]:
    rows = con.execute(f"SELECT name, sql FROM {schema}.sqlite_master WHERE type = 'table' AND sql IS NOT NULL "
                       "AND name NOT LIKE 'sqlite_%'").fetchall()
    return dict(rows)


def _columns(con: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in con.execute(f'PRAGMA {schema}.table_info("{table}")')]


def build(src: str, out: str, size_mb: float, gap_ns: int = 1_000_000) -> dict[str, float]:
    """Write ``out``; returns facts (replicas, size, seconds)."""
    t0 = time.time()
    if os.path.exists(out):
        os.remove(out)
    con = sqlite3.connect(out)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    # immutable: a read-only open of a WAL-mode export would otherwise leave -shm / -wal files beside the
    # source (a shared sample); the source is a finished export, so no log holds rows it lacks
    src_uri = "file:" + urllib.parse.quote(os.path.abspath(src)) + "?mode=ro&immutable=1"
    con.execute("ATTACH DATABASE ? AS s", (src_uri,))
    tables = _tables(con, "s")
    for name, sql in tables.items():
        con.execute(sql)
        if name not in REPLICATED:
            con.execute(f'INSERT INTO main."{name}" SELECT * FROM s."{name}"')
    present = {t: _columns(con, "s", t) for t in REPLICATED if t in tables}

    def space(key: str) -> int:
        hi = 0
        for t, c in ID_SPACES[key]:
            if t in present and c in present[t]:
                v = con.execute(f'SELECT max("{c}") FROM s."{t}" WHERE "{c}" < 4294967295').fetchone()[0]
                hi = max(hi, int(v or 0))
        return hi + 1

    spaces = {k: space(k) for k in ID_SPACES}
    # ProfilerStep#N names (STRING_IDS ids of PYTORCH_API.name) follow the step ids of their replica
    step_names: list[tuple[int, int]] = []
    if "STRING_IDS" in tables and "STEP_TIME" in present and "name" in present.get("PYTORCH_API", ()):
        step_names = con.execute("SELECT id, CAST(substr(value, 14) AS INTEGER) FROM s.STRING_IDS "
                                 "WHERE value GLOB 'ProfilerStep#[0-9]*' AND id IS NOT NULL").fetchall()
    next_sid = int(con.execute("SELECT max(id) FROM s.STRING_IDS").fetchone()[0] or 0) + 1 if step_names else 0
    lo, hi = con.execute("SELECT min(startNs), max(endNs) FROM s.TASK").fetchone()
    if "PYTORCH_API" in present:
        a, b = con.execute("SELECT min(CAST(startNs AS INTEGER)), max(CAST(endNs AS INTEGER)) FROM s.PYTORCH_API"
                           ).fetchone()
        lo, hi = min(lo, a or lo), max(hi, b or hi)
    period = int(hi - lo) + gap_ns
    target = size_mb * 1024 * 1024
    page = con.execute("PRAGMA page_size").fetchone()[0]
    replica = 0
    while True:
        shift = replica * period
        renamed = ""
        if replica and step_names:
            whens = []
            for sid, n in step_names:
                con.execute("INSERT INTO main.STRING_IDS (id, value) VALUES (?, ?)",
                            (next_sid, f"ProfilerStep#{n + replica * spaces['step']}"))
                whens.append(f"WHEN {sid} THEN {next_sid}")
                next_sid += 1
            renamed = f'CASE "name" {" ".join(whens)} ELSE "name" END'
        for t, cols in present.items():
            times, ids = REPLICATED[t]
            exprs = []
            for c in cols:
                if c in times:
                    e = f'CAST(CAST("{c}" AS INTEGER) + {shift} AS TEXT)' if (t, c) in TEXT_TIMES \
                        else f'"{c}" + {shift}'
                    exprs.append(f'CASE WHEN "{c}" IS NULL THEN NULL ELSE {e} END')
                elif c in ids:
                    off = replica * spaces[ids[c]]
                    exprs.append(f'CASE WHEN "{c}" IS NULL OR "{c}" >= 4294967295 THEN "{c}" ELSE "{c}" + {off} END')
                elif renamed and t == "PYTORCH_API" and c == "name":
                    exprs.append(renamed)
                else:
                    exprs.append(f'"{c}"')
            con.execute(f'INSERT INTO main."{t}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) '
                        f'SELECT {", ".join(exprs)} FROM s."{t}"')
        replica += 1
        con.commit()
        pages = con.execute("PRAGMA main.page_count").fetchone()[0]
        if pages * page >= target:
            break
    for (sql,) in con.execute("SELECT sql FROM s.sqlite_master WHERE type = 'index' AND sql IS NOT NULL").fetchall():
        con.execute(sql)
    con.commit()
    con.execute("DETACH DATABASE s")
    con.close()
    return {"replicas": replica, "size_mb": os.path.getsize(out) / 1024**2, "seconds": time.time() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float, default=500.0)
    args = ap.parse_args(argv)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    facts = build(args.src, args.out, args.size_mb)
    print(f"{args.out}: {facts['replicas']} replicas, {facts['size_mb']:.0f} MB, {facts['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
