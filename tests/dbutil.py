"""Read-only SQL on a profiler DB, for tests that count rows independently of the loader."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def sql(path: Path, query: str, params: tuple = ()) -> list[tuple]:
    # immutable: a plain mode=ro connection to a WAL-mode sample still creates -shm / -wal files
    # beside it, which would write into ../shared/samples.
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()
