"""The text and the DB export of one torch_npu run must give the same figures, except where an export lacks the data
(docs/differences.md, "Text against DB exports of one workload"). The samples hold no run exported both ways:
msinsight's AlexNet text and DB exports of each level and rank are separate runs of one script (their traces start
27 to 28 minutes apart), so their times differ by run, but what the script fixes (which ops, calls, kernels,
allocations and call stacks) must not. Each side is read by its own loader from its own files, so each is the
other's independent value; the documented exceptions are checked against their raw cause, by CSV or SQL."""

from __future__ import annotations

import csv
import logging
import re
from pathlib import Path

import pandas as pd
import pytest
from dbutil import edited_copy, sql

from msprof_compare import compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

PT = "msinsight/test/data/pytorch"
#: (level, rank) of the runs exported both as text and as a DB (separate runs of one script)
PAIRS = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]
OP = 50001  # ENUM_API_TYPE's op of the samples


def _exports(samples: Path, level: int, rank: int) -> tuple[Path, Path]:
    return (samples / PT / f"text/level{level}/rank{rank}_ascend_pt",
            samples / PT / f"db/level{level}/rank{rank}_ascend_pt")


def _db_file(root: Path) -> Path:
    return next((root / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db"))


def _kernel_rows(text: Path) -> list[dict[str, str]]:
    with open(text / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as f:
        return list(csv.DictReader(f))


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


def test_db_call_stacks_in_any_table_order_share_one_text_per_stack(samples: Path, tmp_path: Path) -> None:
    """The frames are read in table order and sorted only where an export did not write each chain's frames
    together, innermost first: the table rewritten in reverse order gives the same stacks, the SQL join's. Each
    distinct stack is one text its ops share (a text per op held ~410 MB a side at 338k chains)."""
    src = _db_file(_exports(samples, 1, 0)[1])
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     "CREATE TABLE c2 AS SELECT * FROM PYTORCH_CALLCHAINS ORDER BY rowid DESC",
                     "DELETE FROM PYTORCH_CALLCHAINS", "INSERT INTO PYTORCH_CALLCHAINS SELECT * FROM c2",
                     "DROP TABLE c2")
    assert sql(db, "SELECT stackDepth FROM PYTORCH_CALLCHAINS LIMIT 1")[0][0] > 0  # outermost frame first
    opts, _ = build_options(enable_operator_compare=True)
    got = load_profile(str(db), opts).ops.sort_values("ts", kind="stable")["call_stack"].tolist()
    want = _sql_stacks(src)
    assert got == want
    shown = [s for s in got if s != "N/A"]
    assert len(shown) == 316 and len({id(s) for s in shown}) == len(set(shown)) < 316


@pytest.mark.parametrize(("edit", "message"), [
    ("UPDATE PYTORCH_CALLCHAINS SET stackDepth = 'deep' WHERE rowid = 3",
     "table PYTORCH_CALLCHAINS: column stackDepth holds 'deep', not an integer"),
    ("UPDATE PYTORCH_CALLCHAINS SET stack = 0.5 WHERE rowid = 3",
     "table PYTORCH_CALLCHAINS: column stack holds 0.5, not an integer"),
    # the last cell: an older numpy parses "...,2.5" as 2 and stops where the count of cells is already whole
    ("UPDATE PYTORCH_CALLCHAINS SET stack = 2.5 WHERE rowid = (SELECT max(rowid) FROM PYTORCH_CALLCHAINS)",
     "table PYTORCH_CALLCHAINS: column stack holds 2.5, not an integer"),
    # below every integer, so max() is one: its text "-Inf" has no '.', and numpy stops at it
    ("UPDATE PYTORCH_CALLCHAINS SET stackDepth = -1e999 WHERE rowid = 3",
     "table PYTORCH_CALLCHAINS: column stackDepth holds -inf, not an integer"),
    # a blob of digits and a text holding the separator: their bytes alone would parse as numbers (12; 7 and 8)
    ("UPDATE PYTORCH_CALLCHAINS SET stack = X'3132' WHERE rowid = 3",
     "table PYTORCH_CALLCHAINS: column stack holds b'12', not an integer"),
    ("UPDATE PYTORCH_CALLCHAINS SET id = '7,8' WHERE rowid = (SELECT max(rowid) FROM PYTORCH_CALLCHAINS)",
     "table PYTORCH_CALLCHAINS: column id holds '7,8', not an integer"),
])
def test_db_call_stack_cells_of_no_integer_are_refused(samples: Path, tmp_path: Path, edit: str,
                                                       message: str) -> None:
    """The frames are read as one text per column where every cell is an integer or NULL; a text or a fraction
    (which numpy would read as a number, or stop at) is refused by the rule of every integer query, naming it."""
    src = _db_file(_exports(samples, 1, 0)[1])
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db", edit)
    opts, _ = build_options(enable_operator_compare=True)
    with pytest.raises(ProfileError, match=re.escape(message)):
        load_profile(str(db), opts)


def test_db_call_stacks_of_a_step_read_the_chains_of_its_ops_alone(samples: Path, tmp_path: Path) -> None:
    """A step's ops are given the stacks of their own chains, and the frames of the other ops' chains are not read
    (a NULL frame there is not counted). Synthetic: step 50 made to start at the 201st op (every op of the export
    is in it), the first op's innermost frame set NULL; without a step that frame is counted."""
    src = _db_file(_exports(samples, 1, 0)[1])
    ops = sql(src, f"SELECT CAST(startNs AS INTEGER), callchainId FROM PYTORCH_API WHERE type = {OP} "
                   "ORDER BY CAST(startNs AS INTEGER), rowid")
    first = next(c for _, c in ops if c is not None)
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE STEP_TIME SET startNs = {ops[200][0]} WHERE id = 50",
                     f"UPDATE PYTORCH_CALLCHAINS SET stack = NULL WHERE id = {first} AND stackDepth = 0")
    opts, _ = build_options(enable_operator_compare=True)
    p = load_profile(str(db), opts, step=50)
    got = p.ops.sort_values("ts", kind="stable")["call_stack"].tolist()
    assert got == _sql_stacks(src)[200:] and sum(s != "N/A" for s in got) == sum(c is not None for _, c in ops[200:])
    assert not [w for w in p.warnings if "CALLCHAINS" in w]
    said = [w for w in load_profile(str(db), opts).warnings if "CALLCHAINS" in w]
    assert said == [f"{db}: 1 PYTORCH_CALLCHAINS.stack value(s) missing (NULL): those frames read as empty in the op "
                    "call stacks (ModuleCompare's Call Stack cells)"]


WITH_STACK = "If you want to see the operator's call stack, you must enable with_stack switch."


@pytest.mark.parametrize("edit", ["DROP TABLE PYTORCH_CALLCHAINS", "UPDATE PYTORCH_API SET callchainId = NULL"])
def test_a_db_side_without_call_stacks_gets_the_with_stack_warning(samples: Path, tmp_path: Path, edit: str,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A DB export recorded without with_stack (no PYTORCH_CALLCHAINS, or no op naming a chain) gets the warning a
    text export without "Call stack" arguments gets; it was never said of a DB side. The export as recorded, with
    its 316 chains, gets none."""
    src = _db_file(_exports(samples, 1, 0)[1])
    root = tmp_path / "bare_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    root.mkdir(parents=True)
    db = edited_copy(src, root / src.name, edit)
    assert not sql(db, "SELECT name FROM sqlite_master WHERE name = 'PYTORCH_CALLCHAINS'") or \
        sql(db, "SELECT count(callchainId) FROM PYTORCH_API") == [(0,)]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(src.parent.parent), str(root.parent), enable_operator_compare=True)
        assert "ModuleCompare" in res.sheet_names and WITH_STACK in caplog.messages
        caplog.clear()
        res = compare(str(src.parent.parent), str(src.parent.parent), enable_operator_compare=True)
        assert "ModuleCompare" in res.sheet_names and WITH_STACK not in caplog.messages


def _both(sheet: pd.DataFrame, col: str) -> pd.DataFrame:
    """The rows of a merged sheet that hold both sides (``col`` and ``col``.1 set)."""
    return sheet[sheet[col].notna() & sheet[col + ".1"].notna()]


@pytest.mark.parametrize(("level", "rank"), PAIRS)
def test_every_count_agrees_between_the_text_and_the_db_export(samples: Path, level: int, rank: int) -> None:
    """Text (base) against DB (comparison) of one level and rank, every comparison on: every row pairs, and each
    count the sheets give is equal on both sides (calls, numbers, allocation sizes), except the documented ones:
    the text side's kernels without PMU values that it leaves out of Computing's Number and Vector (kernel_details
    .csv), its HCCL KernelCompare row (kernel_details.csv), a Level0 text export's uncategorised computing and
    missing KernelCompare (its kernels typed N/A), and a Level0 DB's communication ops of op type N/A (SQL)."""
    text, db = _exports(samples, level, rank)
    dbf = _db_file(db)
    res = compare(str(text), str(db))
    names = res.sheet_names
    api = res.sheet("ApiCompare")
    assert api["Calls"].notna().all() and api["Calls.1"].notna().all()
    assert api["Calls"].tolist() == api["Calls.1"].tolist() and len(api) > 100
    mem = res.sheet("MemoryCompare")
    assert mem["Size(KB)"].notna().all() and mem["Size(KB).1"].notna().all()
    assert mem["Size(KB)"].tolist() == mem["Size(KB).1"].tolist() and len(mem) == 115
    stat = res.sheet("MemoryCompareStatistic")
    for what in ("Operator Number", "Allocated Memory(MB)"):
        assert stat[f"Base {what}"].tolist() == stat[f"Comparison {what}"].tolist()
    mod = res.sheet("ModuleCompareStatistic")
    assert mod["Number"].notna().all() and mod["Number"].tolist() == mod["Number.1"].tolist()
    detail = res.sheet("ModuleCompare")
    assert detail["Operator Name"].notna().all()
    assert detail["Operator Name"].tolist() == detail["Operator Name.1"].tolist()
    rows = _kernel_rows(text)
    om = res.sheet("OverallMetrics").set_index("Index")
    computing = sql(dbf, "SELECT count(*) FROM COMPUTE_TASK_INFO")[0][0]
    assert om.loc["Computing Time", "Number.1"] == computing == 187
    comm = res.sheet("CommunicationCompare")
    ops = sql(dbf, "SELECT count(*) FROM COMMUNICATION_OP")[0][0]
    if level == 0:  # no Type, no PMU column: the text side's computing is all Other, its Number 0
        assert {r["Type"] for r in rows} == {"N/A"} and "aiv_vec_time(us)" not in rows[0]
        assert om["Number"].replace("/", 0).eq(0).all()
        # the DB names its communication ops' family by op type, N/A at Level0: no row on that side
        assert sql(dbf, "SELECT DISTINCT s.value FROM COMMUNICATION_OP c JOIN STRING_IDS s ON s.id = c.opType") \
            == [("N/A",)]
        assert comm["Calls.1"].isna().all() and comm["Calls"].tolist() == [ops]
        assert "KernelCompare" not in names
        return
    no_pmu = sum(1 for r in rows if r["aiv_vec_time(us)"].strip() == "N/A" and r["Accelerator Core"] != "HCCL")
    assert no_pmu == 2
    numbers = om[om["Number"] != "/"]
    apart = numbers["Number.1"] - numbers["Number"]
    assert apart[apart != 0].to_dict() == {"Computing Time": no_pmu, "\tVector": no_pmu,
                                           "\t\tVector (No Trans)": no_pmu}
    assert comm["Calls"].tolist() == comm["Calls.1"].tolist() and comm["Calls"].iloc[0] == ops == 4
    kc = res.sheet("KernelCompare")
    one = kc[kc["Calls"].isna() | kc["Calls.1"].isna()]
    hccl = [r for r in rows if r["Accelerator Core"] == "HCCL"]
    assert one["Kernel"].tolist() == ["hcom_allReduce_"] and one["Calls"].tolist() == [len(hccl)] == [4]
    both = _both(kc, "Calls")
    assert both["Calls"].tolist() == both["Calls.1"].tolist()
    assert int(both["Calls"].sum()) == computing == len(rows) - len(hccl)
