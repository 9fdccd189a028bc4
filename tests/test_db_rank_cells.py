"""Edges of the DB loader's peer ranks read from cells without INTEGER affinity (``ascend_db._device_ranks``,
``_rank_span``, ``_other_rank_cells``): rank 0 and the largest rank id written as whole REALs, and the first cell
that is no rank id taken in table order. On the level-1 DB excerpt (tests/data/db/l1), its rank tables rebuilt
untyped (synthetic edits: no sample declares them so); every expected figure is read from the edit by hand."""

from __future__ import annotations

from pathlib import Path

from dbutil import edited_copy, sql

from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
OPTS, _ = build_options()
UNTYPED_MAP = "CREATE TABLE RANK_DEVICE_MAP (rankId, deviceId INTEGER)"


def _db(tmp_path: Path, *statements: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return edited_copy(L1, tmp_path / "ascend_pytorch_profiler_0.db", *statements)


def test_rank_zero_written_as_a_real_is_rank_zero(tmp_path: Path) -> None:
    """RANK_DEVICE_MAP rankId 0.0 and 2.0 (REAL): ranks 0 and 2, none counted as no rank id."""
    p = load_profile(str(_db(tmp_path, UNTYPED_MAP, "INSERT INTO RANK_DEVICE_MAP VALUES (0.0, 0), (2.0, 2)")), OPTS)
    assert p.extra["device_ranks"] == (0, 2) and p.extra["device_ranks_odd"] == (0, "")


def test_the_first_cell_that_is_no_rank_id_is_the_first_in_table_order(tmp_path: Path) -> None:
    """'x' written before 2.5: 'x' is named first, where SQLite's GROUP BY orders the REAL before the text."""
    db = _db(tmp_path, UNTYPED_MAP, "INSERT INTO RANK_DEVICE_MAP VALUES (1, 1), ('x', 5), (2.5, 4)")
    assert sql(db, "SELECT rankId FROM RANK_DEVICE_MAP WHERE typeof(rankId) <> 'integer' GROUP BY rankId") == [
        (2.5,), ("x",)]
    p = load_profile(str(db), OPTS)
    assert p.extra["device_ranks"] == (1,) and p.extra["device_ranks_odd"] == (2, "'x'")


def test_the_largest_rank_id_written_as_a_real_is_a_rank(tmp_path: Path) -> None:
    """srcRank 2147483647.0 (REAL, the largest rank id) on one task: the span is that rank + 1 without a warning;
    2147483648.0 is no rank id (counted; the span the excerpt's 8: source rank 0, destinations 0-7)."""
    cols = ("name INTEGER, globalTaskId INTEGER, taskType INTEGER, planeId INTEGER, groupName INTEGER, "
            "notifyId INTEGER, rdmaType INTEGER, srcRank, dstRank, transportType INTEGER, size INTEGER, "
            "dataType INTEGER, linkType INTEGER, opId INTEGER")
    rebuilt = ("ALTER TABLE COMMUNICATION_TASK_INFO RENAME TO old_info",
               f"CREATE TABLE COMMUNICATION_TASK_INFO ({cols})",
               "INSERT INTO COMMUNICATION_TASK_INFO SELECT * FROM old_info ORDER BY rowid", "DROP TABLE old_info")
    last = "(SELECT max(rowid) FROM COMMUNICATION_TASK_INFO)"
    assert sql(L1, "SELECT max(srcRank), max(dstRank) FROM COMMUNICATION_TASK_INFO WHERE dstRank < 4294967295") == [
        (0, 7)]
    top = load_profile(str(_db(tmp_path / "top", *rebuilt, f"UPDATE COMMUNICATION_TASK_INFO SET srcRank = "
                                                          f"2147483647.0 WHERE rowid = {last}")), OPTS)
    assert top.rank_span == 2147483648
    assert not [w for w in top.warnings if "rank id" in w]
    past = load_profile(str(_db(tmp_path / "past", *rebuilt, f"UPDATE COMMUNICATION_TASK_INFO SET srcRank = "
                                                            f"2147483648.0 WHERE rowid = {last}")), OPTS)
    assert past.rank_span == 8
    assert [w.split(": ", 1)[1] for w in past.warnings if "rank id" in w] == [
        "1 COMMUNICATION_TASK_INFO srcRank / dstRank value(s) are no rank id (an integer from 0 to 2147483647, or "
        "4294967295: no peer; the first: 2147483648.0); the world size check's lower bound leaves them out"]
