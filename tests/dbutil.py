"""Read-only SQL on a profiler DB, for tests that count rows independently of the loader."""

from __future__ import annotations

import shutil
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


def edited_copy(src: Path, dest: Path, *statements: str) -> Path:
    """A copy of the DB ``src`` at ``dest`` with the SQL ``statements`` applied: a test's variant of a real
    export (the original is never written)."""
    shutil.copyfile(src, dest)
    con = sqlite3.connect(dest)
    try:
        for statement in statements:
            con.execute(statement)
        con.commit()
    finally:
        con.close()
    return dest


def string_id(con: sqlite3.Connection, text: str) -> int:
    """The STRING_IDS id of ``text``, added when absent: how a test names a row of its DB variant."""
    row = con.execute("SELECT id FROM STRING_IDS WHERE value = ?", (text,)).fetchone()
    if row:
        return row[0]
    new = con.execute("SELECT max(id) + 1 FROM STRING_IDS").fetchone()[0]
    con.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (new, text))
    return new
