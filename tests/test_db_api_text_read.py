"""A DB export's PYTORCH_API rows are read as one ``group_concat`` text per column, a rowid range at a time
(``ascend_db._Db.ints_as_text``), where a row fetch made a Python int of every cell. A range holding a cell that is
no integer is fetched row by row as before, so its rows, notes and errors are those of the row fetch; the ops stay
the SQL of the same DB (computed here independently of the loader), in rowid order. Real data: msinsight's level-1
rank-0 DB export (2,460 PYTORCH_API rows, rowids 1-2,460), edited in a copy; pieces of 256 rowids make ten."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dbutil import edited_copy, sql

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import ascend_db, load_profile
from msprof_compare.model import Profile
from msprof_compare.options import Options, build_options

DB = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
PIECE = 256


def _sql_ops(db: Path, table: str = "PYTORCH_API") -> list[tuple]:
    """Each torch op (type 50001) by SQL in rowid order: start, duration, name, thread."""
    return sql(db, "SELECT CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) - CAST(p.startNs AS INTEGER), "
                   f"s.value, p.globalTid & 4294967295 FROM {table} p JOIN STRING_IDS s ON s.id = p.name "
                   "WHERE p.type = 50001 ORDER BY p.rowid")


class _Reads:
    """How the loader read PYTORCH_API: pieces read as text (parsed or not) and row fetches of its rows."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, piece: int = PIECE) -> None:
        self.texts: list[bool] = []  # per piece read as text: parsed (True) or fetched row by row
        self.rows = 0
        monkeypatch.setattr(ascend_db, "_TEXT_ROWS", piece)
        parsed, ints = ascend_db._parsed, ascend_db._Db._ints

        def counted_parse(n, texts):  # noqa: ANN001, ANN202
            got = parsed(n, texts)
            if len(texts) >= 6:  # the API read's columns (a call-stack read has two or three)
                self.texts.append(got is not None)
            return got

        def counted_ints(db, sql_text, *args):  # noqa: ANN001, ANN002, ANN202
            self.rows += "FROM PYTORCH_API p" in sql_text
            return ints(db, sql_text, *args)

        monkeypatch.setattr(ascend_db, "_parsed", counted_parse)
        monkeypatch.setattr(ascend_db._Db, "_ints", counted_ints)


def _row_fetch(db: Path, opts: Options, monkeypatch: pytest.MonkeyPatch) -> Profile | str:
    """The load with every text refused and the table read as one piece (one row fetch: the read before the
    text path), or its error."""
    with monkeypatch.context() as m:
        m.setattr(ascend_db, "_parsed", lambda n, texts: None)
        m.setattr(ascend_db._Db, "_rowid_span", lambda db, table: None)  # one query over the whole table
        try:
            return load_profile(str(db), opts)
        except ProfileError as exc:
            return str(exc)


def _same(a: Profile, b: Profile) -> None:
    for name in ("ops", "queue", "python_functions"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert a.warnings == b.warnings


def test_an_export_is_read_as_text_in_rowid_pieces(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten pieces of 256 rowids, each parsed, no row fetched; the ops are the SQL's, the whole load the row
    fetch's (every comparison's rows: ops, queue and Python rows)."""
    reads = _Reads(monkeypatch)
    opts, _ = build_options()
    got = load_profile(str(samples / DB), opts)
    assert reads.texts == [True] * 10 and reads.rows == 0
    want = _sql_ops(samples / DB)
    assert len(want) == 860
    assert list(zip(got.ops["ts"], got.ops["dur"], got.ops["name"], got.ops["tid"], strict=True)) == want
    assert len(got.queue) == 318 and len(got.python_functions) == 1282
    _same(got, _row_fetch(samples / DB, opts, monkeypatch))


@pytest.mark.parametrize("edit, fetched", [
    # NULL types beside typed rows (counted, left out) in the third piece and the last
    ("UPDATE PYTORCH_API SET type = NULL WHERE rowid IN (600, 601, 2460)", [2, 9]),
    # a type written as a whole REAL and one as text digits: read as the integer (kept as ops), in one piece
    ("UPDATE PYTORCH_API SET type = CAST(type AS REAL) WHERE rowid = 1700 AND type = 50001", [6]),
    ("UPDATE PYTORCH_API SET name = CAST(name AS TEXT) WHERE rowid = 1100", [4]),
    # a type that is no integer: counted and named, left out
    ("UPDATE PYTORCH_API SET type = 'op' WHERE rowid = 5", [0]),
])
def test_a_piece_with_a_cell_of_no_integer_is_fetched_row_by_row(samples: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch, edit: str,
                                                                  fetched: list[int]) -> None:
    """Only the pieces holding such a cell are fetched row by row; the load is the row fetch's, rows, notes and
    all (the DB's column affinity keeps a plain UPDATE from storing a REAL or text, so the tables are remade
    without it)."""
    db = edited_copy(samples / DB, tmp_path / "ascend_pytorch_profiler_0.db",
                     "CREATE TABLE api AS SELECT * FROM PYTORCH_API ORDER BY rowid",
                     "DROP TABLE PYTORCH_API",
                     "CREATE TABLE PYTORCH_API (startNs, endNs, globalTid, connectionId, name, sequenceNumber, "
                     "fwdThreadId, inputDtypes, inputShapes, callchainId, type, depth)",
                     "INSERT INTO PYTORCH_API SELECT * FROM api ORDER BY rowid", "DROP TABLE api", edit)
    reads = _Reads(monkeypatch)
    opts, _ = build_options()
    got = load_profile(str(db), opts)
    assert [i for i, ok in enumerate(reads.texts) if not ok] == fetched and len(reads.texts) == 10
    assert reads.rows == len(fetched)
    _same(got, _row_fetch(db, opts, monkeypatch))


@pytest.mark.parametrize("edit", ["UPDATE PYTORCH_API SET globalTid = 'abc' WHERE rowid = 2000",
                                  "UPDATE PYTORCH_API SET connectionId = 1.5 WHERE rowid = 2000"])
def test_a_cell_a_figure_cannot_use_is_refused_as_by_the_row_fetch(samples: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   edit: str) -> None:
    """The error names the cell's table, column and value, as the row fetch's does."""
    db = edited_copy(samples / DB, tmp_path / "ascend_pytorch_profiler_0.db", edit)
    _Reads(monkeypatch)
    with pytest.raises(ProfileError) as got:
        load_profile(str(db), Options())
    want = _row_fetch(db, Options(), monkeypatch)
    assert str(got.value) == want and "table PYTORCH_API: column" in want and "not an integer" in want


@pytest.mark.parametrize("edits, pieces", [
    # a view serves as its table and has no rowid: one piece
    (["ALTER TABLE PYTORCH_API RENAME TO api", "CREATE VIEW PYTORCH_API AS SELECT * FROM api"], 1),
    # rowids of a sparse table spanning over _TEXT_PIECES pieces: one piece, not one query per empty piece
    (["UPDATE PYTORCH_API SET rowid = rowid * 300 + 1000000"], 1),
    # rowids from 2**40 up: pieces of the span, as from 1
    (["UPDATE PYTORCH_API SET rowid = rowid + 1099511627776"], 10),
    # a WITHOUT ROWID table, and one whose own column is named rowid: one piece
    (["CREATE TABLE api (k INTEGER PRIMARY KEY, startNs, endNs, globalTid, connectionId, name, sequenceNumber, "
      "fwdThreadId, inputDtypes, inputShapes, callchainId, type, depth) WITHOUT ROWID",
      "INSERT INTO api SELECT rowid, * FROM PYTORCH_API", "DROP TABLE PYTORCH_API",
      "ALTER TABLE api RENAME TO PYTORCH_API"], 1),
    (["ALTER TABLE PYTORCH_API ADD COLUMN RowId INTEGER", "UPDATE PYTORCH_API SET RowId = 5 WHERE _rowid_ % 2 = 0"],
     1),
])
def test_tables_without_a_usable_rowid_are_read_as_one_piece(samples: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, edits: list[str],
                                                             pieces: int) -> None:
    """Each reads the export's ops (its own order: the view's and the WITHOUT ROWID table's are the export's)."""
    db = edited_copy(samples / DB, tmp_path / "ascend_pytorch_profiler_0.db", *edits)
    reads = _Reads(monkeypatch)
    got = load_profile(str(db), Options(enable_profiling_compare=True))
    assert reads.texts == [True] * pieces and reads.rows == 0
    assert list(zip(got.ops["ts"], got.ops["dur"], got.ops["name"], got.ops["tid"], strict=True)) == \
        _sql_ops(samples / DB)


@pytest.mark.parametrize("null_at", [1999, 5])
def test_a_cell_at_fault_is_named_not_a_null_type_before_it(samples: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, null_at: int) -> None:
    """A NULL type is read (counted and left out): the error names the globalTid cell no figure can use, whether
    the NULL type is in its piece (rowid 1999) or an earlier one (5), in the pieces' read and the whole query's
    row fetch alike; a NULL type before it in the row fetch's chunk was named instead ("column type holds
    None")."""
    db = edited_copy(samples / DB, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE PYTORCH_API SET type = NULL WHERE rowid = {null_at}",
                     "UPDATE PYTORCH_API SET globalTid = 'abc' WHERE rowid = 2000")
    _Reads(monkeypatch)
    with pytest.raises(ProfileError) as got:
        load_profile(str(db), Options())
    assert str(got.value) == f"{db}: table PYTORCH_API: column globalTid holds 'abc', not an integer"
    assert _row_fetch(db, Options(), monkeypatch) == str(got.value)
