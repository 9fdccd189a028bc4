"""The text and the DB export of one torch_npu run must give the same figures, except where an export lacks the data
(docs/differences.md, "Text against DB exports of one workload"). The samples hold no run exported both ways:
msinsight's AlexNet text and DB exports of each level and rank are separate runs of one script (their traces start
27 to 28 minutes apart), so their times differ by run, but what the script fixes (which ops, calls, kernels,
allocations and call stacks) must not. Each side is read by its own loader from its own files, so each is the
other's independent value; the documented exceptions are checked against their raw cause, by CSV or SQL."""

from __future__ import annotations

from pathlib import Path

from dbutil import edited_copy, sql

from msprof_compare import compare
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

PT = "msinsight/test/data/pytorch"
OP = 50001  # ENUM_API_TYPE's op of the samples


def _exports(samples: Path, level: int, rank: int) -> tuple[Path, Path]:
    return (samples / PT / f"text/level{level}/rank{rank}_ascend_pt",
            samples / PT / f"db/level{level}/rank{rank}_ascend_pt")


def _db_file(root: Path) -> Path:
    return next((root / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db"))


def _sql_stacks(db: Path) -> list[str]:
    """Each torch op's call stack in start order, by SQL: its PYTORCH_CALLCHAINS frames by stackDepth joined as the
    text export's "Call stack" argument, "N/A" without a chain."""
    frames: dict[int, list[tuple[int, str]]] = {}
    for chain, depth, text in sql(db, "SELECT c.id, c.stackDepth, s.value FROM PYTORCH_CALLCHAINS c "
                                      "JOIN STRING_IDS s ON s.id = c.stack"):
        frames.setdefault(chain, []).append((depth, text))
    ops = sql(db, f"SELECT callchainId FROM PYTORCH_API WHERE type = {OP} ORDER BY CAST(startNs AS INTEGER), rowid")
    return [";\r\n".join(t for _, t in sorted(frames[c])) if c in frames else "N/A" for (c,) in ops]


def test_db_op_call_stacks_are_its_text_exports(samples: Path) -> None:
    """A DB export recorded with_stack holds each op's frames in PYTORCH_CALLCHAINS; every DB op read "N/A" while
    the text export of the same script gave 316 of its 860 ops their stack. Now the i-th op of each export (start
    order) has the same name and the same call stack, and the DB's are the SQL join of its frames."""
    text, db = _exports(samples, 1, 0)
    opts, _ = build_options(enable_operator_compare=True)
    t, d = (load_profile(str(p), opts).ops.sort_values("ts", kind="stable") for p in (text, db))
    assert t["name"].tolist() == d["name"].tolist()
    assert d["call_stack"].tolist() == _sql_stacks(_db_file(db))
    assert d["call_stack"].tolist() == t["call_stack"].tolist()
    assert (d["call_stack"] != "N/A").sum() == 316
    # read for ModuleCompare alone, the sheet that shows them: not by an API-only run, nor without module sheets
    for kw in ({"enable_api_compare": True}, {"enable_operator_compare": True, "disable_module": True}):
        assert set(load_profile(str(db), build_options(**kw)[0]).ops["call_stack"]) == {"N/A"}


def test_module_call_stacks_of_a_text_and_a_db_export_agree(samples: Path) -> None:
    """ModuleCompare's op rows, text level-1 rank 0 against the DB export of the script: each op cell that shows a
    call stack shows the same on both sides (13 cells read a stack beside the DB side's "N/A" before)."""
    text, db = _exports(samples, 1, 0)
    sheet = compare(str(text), str(db), enable_operator_compare=True).sheet("ModuleCompare")
    ops = sheet[sheet["Operator Name"] != "TOTAL"]
    shown = ops[ops["Base Call Stack"].fillna("").ne("") & ops["Comparison Call Stack"].fillna("").ne("")]
    assert shown["Base Call Stack"].tolist() == shown["Comparison Call Stack"].tolist()
    assert shown["Base Call Stack"].ne("N/A").sum() == 13


def test_db_call_stacks_without_frames_or_a_chain(samples: Path, tmp_path: Path) -> None:
    """A chain id the table lacks reads "N/A", as an op without a chain; a NULL frame reads empty and is counted in
    the DB's warning of NULL cells; a DB without the table (recorded without with_stack: the tests/data excerpt)
    reads "N/A" for every op, without a word."""
    src = _db_file(_exports(samples, 1, 0)[1])
    # the chains of the first two ops that have one (aten::conv2d, aten::relu_)
    (conv,), (relu,) = sql(src, f"SELECT callchainId FROM PYTORCH_API WHERE type = {OP} AND callchainId IS NOT NULL "
                                "ORDER BY CAST(startNs AS INTEGER) LIMIT 2")
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE PYTORCH_CALLCHAINS SET stack = NULL WHERE id = {conv} AND stackDepth = 0",
                     f"UPDATE PYTORCH_API SET callchainId = 999999 WHERE callchainId = {relu}")
    opts, _ = build_options(enable_operator_compare=True)
    p = load_profile(str(db), opts)
    want = _sql_stacks(src)
    got = p.ops.sort_values("ts", kind="stable")["call_stack"].tolist()
    first, second = [i for i, s in enumerate(want) if s != "N/A"][:2]
    assert got[first] == ";\r\n" + want[first].split(";\r\n", 1)[1]  # its innermost frame read empty
    assert got[second] == "N/A"
    assert sum(s != "N/A" for s in got) == 315
    assert f"{db}: 1 PYTORCH_CALLCHAINS.stack value(s) missing (NULL): those frames read as empty in the op call " \
           "stacks (ModuleCompare's Call Stack cells)" in p.warnings
    bare = load_profile(str(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"), opts)
    assert set(bare.ops["call_stack"]) == {"N/A"}
    assert not [w for w in bare.warnings if "CALLCHAINS" in w]
