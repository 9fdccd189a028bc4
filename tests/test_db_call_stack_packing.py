"""A DB export's call-stack frames are read with each frame's (id, stackDepth) packed into one integer in SQL
(``ascend_db._chain_rows``), where both fit. A table whose cells do not fit, or are no numbers, is read again
unpacked; every stack stays the SQL join of its frames (computed here by SQL on the same DB, independently of the
loader), or the table is refused naming the cell. Real data: msinsight's level-1 rank-0 DB export (with_stack, 316
chains of 4,683 frames, depths 0-22, chain ids 0-315), edited in a copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbutil import edited_copy, sql

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import ascend_db, load_profile
from msprof_compare.options import build_options

DB = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
OP = 50001  # ENUM_API_TYPE's op of the sample
BIG = 2**53  # the first chain id that does not pack (ascend_db._DEPTH_BITS = 10: 63 - 10 bits)


def _sql_stacks(db: Path) -> list[str]:
    """Each torch op's call stack in start order by SQL: its frames ordered by stackDepth, joined as a text
    export's "Call stack" argument; "N/A" without a chain or where the table lacks it."""
    frames: dict[int, list[tuple[int, str]]] = {}
    for chain, depth, text in sql(db, "SELECT c.id, c.stackDepth, s.value FROM PYTORCH_CALLCHAINS c "
                                      "JOIN STRING_IDS s ON s.id = c.stack"):
        frames.setdefault(int(chain), []).append((depth, text))
    ops = sql(db, f"SELECT callchainId FROM PYTORCH_API WHERE type = {OP} ORDER BY CAST(startNs AS INTEGER), rowid")
    return [";\r\n".join(t for _, t in sorted(frames[c])) if c in frames else "N/A" for (c,) in ops]


def _stacks(db: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], int]:
    """The loader's op stacks in start order and how many times it read the table (1: packed, 2: unpacked)."""
    reads = []
    real = ascend_db._chain_texts

    def counted(*args):  # noqa: ANN002, ANN202
        reads.append(args[1])
        return real(*args)

    monkeypatch.setattr(ascend_db, "_chain_texts", counted)
    opts, _ = build_options(enable_operator_compare=True)
    ops = load_profile(str(db), opts).ops.sort_values("ts", kind="stable")
    return ops["call_stack"].tolist(), len(reads)


def _first_chain(src: Path) -> int:
    return sql(src, f"SELECT callchainId FROM PYTORCH_API WHERE type = {OP} AND callchainId IS NOT NULL "
                    "ORDER BY CAST(startNs AS INTEGER) LIMIT 1")[0][0]


def test_an_export_is_read_packed_once(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = samples / DB
    got, reads = _stacks(src, monkeypatch)
    assert reads == 1
    assert got == _sql_stacks(src) and sum(s != "N/A" for s in got) == 316


@pytest.mark.parametrize(("edits", "reads", "shown"), [
    # the greatest id and depth that pack: the chain's deepest frame at 1,023
    (lambda c, top: [f"UPDATE PYTORCH_CALLCHAINS SET stackDepth = stackDepth + {1023 - top} WHERE id = {c}",
                     f"UPDATE PYTORCH_CALLCHAINS SET id = {BIG - 1} WHERE id = {c}",
                     f"UPDATE PYTORCH_API SET callchainId = {BIG - 1} WHERE callchainId = {c}"], 1, 316),
    # a stack deeper than 1,023 frames: its deepest at 1,024, or its depths spread to 1000 x (1,000 < 999 as text)
    (lambda c, top: [f"UPDATE PYTORCH_CALLCHAINS SET stackDepth = stackDepth + {1024 - top} WHERE id = {c}"], 2, 316),
    (lambda c, top: [f"UPDATE PYTORCH_CALLCHAINS SET stackDepth = stackDepth * 1000 WHERE id = {c}"], 2, 316),
    # chain ids from 2**53 up, and down from int64's greatest, every op's and frame's
    (lambda c, top: ["UPDATE PYTORCH_CALLCHAINS SET id = id + 9007199254740992",
                     "UPDATE PYTORCH_API SET callchainId = callchainId + 9007199254740992"], 2, 316),
    (lambda c, top: [f"UPDATE PYTORCH_CALLCHAINS SET id = {2**63 - 1} - id",
                     f"UPDATE PYTORCH_API SET callchainId = {2**63 - 1} - callchainId"], 2, 316),
    # a negative chain id, which no op names (its op reads N/A), and a negative depth (sorted first)
    (lambda c, top: [f"UPDATE PYTORCH_CALLCHAINS SET id = -5 WHERE id = {c}"], 2, 315),
    (lambda c, top: [f"UPDATE PYTORCH_CALLCHAINS SET stackDepth = -1 WHERE id = {c} AND stackDepth = {top}"], 2, 316),
])
def test_ids_and_depths_out_of_the_packed_range_read_unpacked(samples: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, edits, reads: int,
                                                              shown: int) -> None:
    """Each edit moves the first op's chain (or every chain) out of the packed range, or to its edge: the stacks
    are still the SQL join's, each op's frames in depth order; only a table that does not pack is read twice."""
    src = samples / DB
    chain = _first_chain(src)
    top = sql(src, f"SELECT max(stackDepth) FROM PYTORCH_CALLCHAINS WHERE id = {chain}")[0][0]
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db", *edits(chain, top))
    got, n = _stacks(db, monkeypatch)
    assert n == reads
    assert got == _sql_stacks(db) and sum(s != "N/A" for s in got) == shown


def test_a_text_column_of_ids_is_not_packed_as_text(samples: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A TEXT column compares numbers as text: '7x' lies between '0' and '9007199254740991', and '7x' * 1024 is
    7168, so a packed read would file that frame under chain 7 without a word. The cells' range is tested without
    the column's affinity: the table is read unpacked, which reads the digits texts as their integers (the rule of
    every integer query: the stacks stay exact) and refuses '7x', naming it."""
    src = samples / DB
    retyped = ["CREATE TABLE c2 (id TEXT, stack INTEGER, stackDepth INTEGER)",
               "INSERT INTO c2 SELECT id, stack, stackDepth FROM PYTORCH_CALLCHAINS ORDER BY rowid",
               "DROP TABLE PYTORCH_CALLCHAINS", "ALTER TABLE c2 RENAME TO PYTORCH_CALLCHAINS",
               # the chains whose id as text is within the bounds as text (all but 91-99 and 910-999)
               f"DELETE FROM PYTORCH_CALLCHAINS WHERE id > '{BIG - 1}'"]
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db", *retyped)
    assert sql(db, "SELECT DISTINCT typeof(id) FROM PYTORCH_CALLCHAINS") == [("text",)]
    got, n = _stacks(db, monkeypatch)
    assert n == 2 and got == _sql_stacks(db) and sum(s != "N/A" for s in got) == 316 - 9
    chain = _first_chain(src)
    (tmp_path / "bad").mkdir()
    bad = edited_copy(src, tmp_path / "bad" / "ascend_pytorch_profiler_0.db", *retyped,
                      f"UPDATE PYTORCH_CALLCHAINS SET id = '{chain}x' WHERE id = '{chain}' AND stackDepth = 0")
    with pytest.raises(ProfileError, match=re.escape(f"table PYTORCH_CALLCHAINS: column id holds '{chain}x', "
                                                     "not an integer")):
        _stacks(bad, monkeypatch)


@pytest.mark.parametrize(("edit", "message"), [
    # a REAL in range packs to a REAL, written with its '.'
    ("UPDATE PYTORCH_CALLCHAINS SET id = 1.5 WHERE rowid = 3", "column id holds 1.5"),
    ("UPDATE PYTORCH_CALLCHAINS SET stackDepth = 2.5 WHERE rowid = 3", "column stackDepth holds 2.5"),
    ("UPDATE PYTORCH_CALLCHAINS SET stackDepth = X'31' WHERE rowid = 3", "column stackDepth holds b'1'"),
])
def test_cells_of_no_integer_in_range_are_refused(samples: Path, tmp_path: Path, edit: str, message: str) -> None:
    db = edited_copy(samples / DB, tmp_path / "ascend_pytorch_profiler_0.db", edit)
    opts, _ = build_options(enable_operator_compare=True)
    with pytest.raises(ProfileError, match=re.escape(f"table PYTORCH_CALLCHAINS: {message}, not an integer")):
        load_profile(str(db), opts)
