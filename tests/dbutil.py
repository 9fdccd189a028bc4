"""Read-only SQL on a profiler DB, for tests that count rows independently of the loader."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def sql(path: Path, query: str, params: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()
