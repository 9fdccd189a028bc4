"""Figures of the DB sheets that no other test pins independently: CommunicationCompare, KernelCompare, ApiCompare,
OperatorCompare(Statistic) and MemoryCompare(Statistic) of DB exports, against the original's workbook of reference
pair 3 (db/level1 vs db/level2 rank0, whose figures the excerpts in tests/data/db reproduce: see its README), the
original's workbooks of the text export of the same workload (pairs 1 and 8b) and plain SQL on the excerpts. The
expected values never come from the package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dbutil import sql
from diffutil import exact_diff
from spans import module_times
from xlsxutil import read_xlsx

from msprof_compare.api import compare

DATA = Path(__file__).parent / "data" / "db"
L1 = DATA / "l1" / "ascend_pytorch_profiler_0.db"
L2 = DATA / "l2" / "ascend_pytorch_profiler_0.db"
PAIR3 = "3-npu-db-l1-vs-l2/performance_comparison_result.xlsx"
OP = 50001  # ENUM_API_TYPE "op" of the samples


@pytest.fixture(scope="module")
def pair3():
    """Every comparison of the two DB excerpts, as reference pair 3 was run."""
    return compare(str(L1), str(L2))


@pytest.fixture(scope="module")
def pair3_ops():
    """The operator-level sheets (the default run gives module sheets): ``--disable_module``."""
    return compare(str(L1), str(L2), enable_operator_compare=True, enable_memory_compare=True, disable_module=True)


def _ref(reference_outputs: Path, book: str, name: str) -> pd.DataFrame:
    return read_xlsx(reference_outputs / book, sheet_name=name, header=2)


def _numbers(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s.replace({"INF": np.inf}), errors="coerce").to_numpy(dtype=float)


def _assert_cells_equal(ours: pd.DataFrame, ref: pd.DataFrame, skip: np.ndarray | None = None) -> None:
    """Every cell as the original wrote it, numbers to 1e-9 (rows in ``skip`` left out)."""
    keep = np.ones(len(ref), bool) if skip is None else ~skip
    assert list(ours.columns) == list(ref.columns) and len(ours) == len(ref)
    for col in ref.columns:
        if ref[col].dtype.kind in "if":
            a, b = _numbers(ours[col])[keep], ref[col].to_numpy(dtype=float)[keep]
            assert ((np.abs(a - b) <= 1e-9 * np.maximum(1, np.abs(b))) | (np.isnan(a) & np.isnan(b))).all(), col
        else:
            got, want = ours[col].fillna("").astype(str)[keep], ref[col].fillna("").astype(str)[keep]
            assert got.tolist() == want.tolist(), col


def test_pair3_communication_compare_equals_the_original(pair3, reference_outputs: Path) -> None:
    """CommunicationCompare of a DB export (COMMUNICATION_OP / COMMUNICATION_TASK_INFO): every cell of the
    original's pair-3 sheet (5 rows: one family, its four task names)."""
    ref = _ref(reference_outputs, PAIR3, "CommunicationCompare")
    assert len(ref) == 5
    _assert_cells_equal(pair3.sheet("CommunicationCompare"), ref)


def test_pair3_kernel_compare_equals_the_original(pair3, reference_outputs: Path) -> None:
    """KernelCompare of a DB export (COMPUTE_TASK_INFO): every cell of the original's pair-3 sheet (127 rows) but
    one, the rounding tie docs/differences.md ("KernelCompare totals are exact decimal sums, rounded half up")
    describes for pair 1: the comparison's only TensorMove of shape "4096,9216" lasted 254385 ns by SQL, which
    rounds half up to 254.39 us (the original's float round gives 254.38)."""
    ours, ref = pair3.sheet("KernelCompare"), _ref(reference_outputs, PAIR3, "KernelCompare")
    assert len(ref) == 127
    tie = ((ref["Kernel"] == "TensorMove") & (ref["Input Shape"] == '"4096,9216"')).to_numpy()
    assert tie.sum() == 1
    (dur,) = sql(L2, """SELECT t.endNs - t.startNs FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId =
                        c.globalTaskId JOIN STRING_IDS ty ON ty.id = c.opType JOIN STRING_IDS sh ON sh.id =
                        c.inputShapes WHERE ty.value = 'TensorMove' AND sh.value = '"4096,9216"'""")
    assert dur == (254385,)
    cols = [f"{k} Duration(us).1" for k in ("Total", "Avg", "Max", "Min")]
    assert ref.loc[tie, cols].to_numpy().tolist() == [[254.38] * 4]
    assert ours.loc[tie, cols].to_numpy().tolist() == [[254.39] * 4]
    _assert_cells_equal(ours, ref, skip=tie)


def _api_by_sql(path: Path) -> dict[str, tuple[int, int, int]]:
    """name -> (calls, sum of durations in ns, rows joined per CANN connection id) of the op rows of PYTORCH_API."""
    calls = sql(path, f"""SELECT s.value, count(*), sum(CAST(p.endNs AS INTEGER) - CAST(p.startNs AS INTEGER))
                          FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name WHERE p.type = {OP}
                          GROUP BY s.value""")
    joined = dict(sql(path, f"""SELECT s.value, count(*) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name
                                JOIN CONNECTION_IDS c ON c.id = p.connectionId WHERE p.type = {OP}
                                GROUP BY s.value"""))
    return {name: (n, dur, joined.get(name, 0)) for name, n, dur in calls}


def test_pair3_api_compare_by_sql_and_the_original(pair3, reference_outputs: Path) -> None:
    """ApiCompare of a DB export. An op that launched several tasks has one CONNECTION_IDS row per task and the
    original counts it once per row (docs/differences.md, "DB torch ops: one row per API call"): there Calls and
    Total Duration are PYTORCH_API's by SQL (one call per row), the original's Calls the joined rows, the Self
    Time the original's (its copies nest inside each other). Every other row equals the original's cells."""
    ours, ref = pair3.sheet("ApiCompare"), _ref(reference_outputs, PAIR3, "ApiCompare")
    assert list(ours.columns) == list(ref.columns) and len(ours) == len(ref) == 133
    assert ours["api name"].tolist() == ref["api name"].tolist()
    figures = ref.columns[2:]
    a = np.column_stack([_numbers(ours[c]) for c in figures])
    b = ref[figures].to_numpy(dtype=float)
    same = (a == b).all(axis=1)
    multi = []
    for side, path in (("", L1), (".1", L2)):
        by = _api_by_sql(path)
        for i in np.flatnonzero(~same):
            calls, dur_ns, joined = by[ours["api name"].iat[i]]
            row = ours.iloc[i]
            total = round(dur_ns / 1e6, 2)
            assert (row["Calls" + side], row["Total Duration(ms)" + side]) == (calls, total), (i, side)
            assert row["Avg Duration(ms)" + side] == round(total / calls, 2)
            assert row["Self Time(ms)" + side] == ref["Self Time(ms)" + side].iat[i]
            assert ref["Calls" + side].iat[i] == joined > calls
            multi.append(ours["api name"].iat[i])
    assert sorted(set(multi)) == sorted(["Conv2D", "aclnnMaxPool2dWithMask", "aclnnAdaptiveAvgPool2d",
                                         "aclnnNLLLoss", "aclnnTopk", "aclnnEqTensor", "aclnnNLLLossBackward",
                                         "aclnnMm", "aclnnAdaptiveAvgPool2dBackward",
                                         "aclnnMaxPool2dWithMaskBackward", "Conv2DBackpropInput",
                                         "Conv2DBackpropFilter"])
    # the ratios of those rows: of the rounded values (reference-2 §7), by hand
    for i in np.flatnonzero(~same):
        row = ours.iloc[i]
        for ratio, col in (("Diff Total Ratio", "Total Duration(ms)"), ("Diff Self Ratio", "Self Time(ms)"),
                           ("Diff Avg Ratio", "Avg Duration(ms)"), ("Diff Calls Ratio", "Calls")):
            b_, c_ = row[col], row[col + ".1"]
            want = 1.0 if not b_ and not c_ else (np.inf if not b_ else round(c_ / b_, 4))
            assert _numbers(pd.Series([row[ratio]]))[0] == want, (i, ratio)


def _tasks_of_ops_ns(path: Path) -> int:
    """ns of every compute task launched by a torch op (linked through its CANN connection ids)."""
    return sql(path, f"""SELECT sum(t.endNs - t.startNs) FROM TASK t
                         JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId
                         WHERE t.connectionId IN (SELECT ci.connectionId FROM PYTORCH_API p
                               JOIN CONNECTION_IDS ci ON ci.id = p.connectionId WHERE p.type = {OP})""")[0][0]


def test_pair3_operator_statistic_by_sql_and_the_text_export(pair3_ops, reference_outputs: Path) -> None:
    """OperatorCompareStatistic of DB exports (no reference workbook has one): the device durations add up to
    every compute task the torch ops launched, by SQL (8.903431 / 8.900456 ms); the operator numbers per name
    are those of the text export of the same workload (reference pair 8b's comparison side, text level 1 rank 0:
    separate runs of one script hold the same ops), and the Diff columns follow reference-2 §0.1 by hand."""
    st = pair3_ops.sheet("OperatorCompareStatistic")
    for col, path, want in (("Base Device Duration(ms)", L1, 8.903431), ("Comparison Device Duration(ms)", L2,
                                                                            8.900456)):
        assert _tasks_of_ops_ns(path) / 1e6 == pytest.approx(want, abs=1e-9)
        assert st[col].sum() == pytest.approx(want, abs=1e-9), col
    text = _ref(reference_outputs, "8b-npu-traceview-file-vs-dir/performance_comparison_result.xlsx",
                "OperatorCompareStatistic")
    text = text[text["Comparison Operator Number"] > 0].set_index("Operator Name")["Comparison Operator Number"]
    ours = st.set_index("Operator Name")
    assert len(ours) == len(text) == 35
    for col in ("Base Operator Number", "Comparison Operator Number"):
        assert ours[col].to_dict() == text.to_dict(), col
    for _, row in st.iterrows():
        b_, c_ = row["Base Device Duration(ms)"], row["Comparison Device Duration(ms)"]
        assert row["Diff Duration(ms)"] == exact_diff(b_, c_)
        want = 1.0 if not b_ and not c_ else (np.inf if not b_ else round(c_ / b_, 4))
        assert _numbers(pd.Series([row["Diff Ratio"]]))[0] == want


def test_pair3_memory_statistic_by_sql_and_the_text_export(pair3_ops, reference_outputs: Path) -> None:
    """MemoryCompareStatistic of DB exports: every OP_MEMORY block is placed under a torch op, so the sheet's
    totals are the table's by SQL (1426.019 MB, 552.3967 / 538.56299 ms: release - allocation of the released
    blocks); per operator name the allocated MB are those of the original's workbook of the text export of the
    same workload (pair 1, text level 1 vs level 2), as docs/differences.md ("DB memory records of CANN's own
    allocations are placed as the text export's are") says, while the original's pair 3 misplaces them; so are
    MemoryCompare's sizes, pair by pair."""
    st = pair3_ops.sheet("MemoryCompareStatistic")
    for side, path in (("Base", L1), ("Comparison", L2)):
        ((mb, ms, n),) = sql(path, "SELECT sum(size) / 1048576.0, sum(CASE WHEN allocationTime > 0 AND "
                                   "releaseTime > 0 THEN releaseTime - allocationTime ELSE 0 END) / 1e6, count(*) "
                                   "FROM OP_MEMORY")
        assert n == 184
        assert st[f"{side} Allocated Memory(MB)"].sum() == pytest.approx(mb, rel=1e-12)
        assert st[f"{side} Allocated Duration(ms)"].sum() == pytest.approx(ms, rel=1e-12)
    text = _ref(reference_outputs, "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx", "MemoryCompareStatistic")
    ours = st.set_index("Operator Name")
    text = text.set_index("Operator Name")
    assert sorted(ours.index) == sorted(text.index) and len(ours) == 35
    for col in ("Base Allocated Memory(MB)", "Comparison Allocated Memory(MB)", "Diff Memory(MB)",
                "Base Operator Number", "Comparison Operator Number"):
        np.testing.assert_allclose(ours.loc[text.index, col].astype(float), text[col].astype(float), rtol=1e-12,
                                   err_msg=col)
    # MemoryCompare: the same 115 operator pairs, in the same order, with the same sizes (KB) and their diff cells
    detail = pair3_ops.sheet("MemoryCompare")
    text = _ref(reference_outputs, "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx", "MemoryCompare")
    assert len(detail) == len(text) == 115
    for col in ("Operator Name", "Operator Name.1"):
        assert detail[col].fillna("").tolist() == text[col].fillna("").tolist(), col
    for col in ("Size(KB)", "Size(KB).1", "Diff Size(KB)", "Diff Ratio"):
        assert _numbers(detail[col]).tolist() == text[col].astype(float).tolist(), col


def _kernel_types_by_sql(path: Path) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(op type, task type) -> (calls, total, max, min ns) of the compute tasks of a DB export."""
    rows = sql(path, """SELECT ty.value, tt.value, count(*), sum(t.endNs - t.startNs), max(t.endNs - t.startNs),
                               min(t.endNs - t.startNs)
                        FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId
                        JOIN STRING_IDS ty ON ty.id = c.opType JOIN STRING_IDS tt ON tt.id = c.taskType
                        GROUP BY ty.value, tt.value""")
    return {(op, task): (n, total, hi, lo) for op, task, n, total, hi, lo in rows}


def test_db_kernel_type_compare_by_sql() -> None:
    """KernelTypeCompare of DB exports (no reference workbook has one; reference-2 §6.2: built from the compute
    tasks, keyed by op type and task type): every figure of both sides from a GROUP BY in SQL, the ratios by
    reference-2 §0.1, the rows sorted by Diff Total Ratio, largest first."""
    sheet = compare(str(L1), str(L2), enable_kernel_compare=True, use_kernel_type=True).sheet("KernelTypeCompare")
    sides = [_kernel_types_by_sql(L1), _kernel_types_by_sql(L2)]
    assert len(sheet) == len(sides[0]) == len(sides[1]) == 33
    for _, row in sheet.iterrows():
        key = (row["Kernel Type"], row["Core Type"])
        totals = []
        for sfx, by in zip(("", ".1"), sides, strict=True):
            n, total, hi, lo = by[key]
            got = [row[f"{k} Duration(us){sfx}"] for k in ("Total", "Avg", "Max", "Min")] + [row["Calls" + sfx]]
            assert got == pytest.approx([total / 1000, total / 1000 / n, hi / 1000, lo / 1000, n], rel=1e-12), key
            totals.append((total / 1000, total / 1000 / n))
        (bt, ba), (ct, ca) = totals
        assert (row["Diff Total Ratio"], row["Diff Avg Ratio"]) == (round(ct / bt, 4), round(ca / ba, 4)), key
    ratios = sheet["Diff Total Ratio"].tolist()
    assert ratios == sorted(ratios, reverse=True) and ratios[0] == 1.1413  # NLLLoss 14.020 -> 16.001 us
    assert sheet["Order Id"].tolist() == list(range(1, 34))


TRACE = 50003  # ENUM_API_TYPE "trace" (python functions, nn.Module frames among them)


def _forward_modules_by_sql(path: Path) -> dict[str, tuple[int, int]]:
    """Row name ("/ A_0/ B_0", reference-2 §3.7) -> (device total, device self ns) of every nn.Module frame of a DB
    export: the tasks launched by the torch ops starting inside its span (ends included, reference-2 §3.2 step 5),
    nested by plain interval containment; self = total minus the totals of its direct children."""
    frames = sql(path, f"""SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) FROM PYTORCH_API p
                           JOIN STRING_IDS s ON s.id = p.name
                           WHERE p.type = {TRACE} AND s.value LIKE 'nn.Module:%' ORDER BY 2""")
    launched = sql(path, f"""SELECT CAST(p.startNs AS INTEGER), t.endNs - t.startNs FROM PYTORCH_API p
                             JOIN CONNECTION_IDS ci ON ci.id = p.connectionId
                             JOIN TASK t ON t.connectionId = ci.connectionId
                             JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId WHERE p.type = {OP}""")
    return module_times([(start, end, name) for name, start, end in frames], launched)


def test_db_forward_module_times_by_sql(pair3) -> None:
    """Device Total / Self Time of every forward module (26 per side) in both module sheets of a DB export, from the
    tasks its ops launched (SQL), and the three diff cells of their TOTAL rows by reference-2 §0.1. The original's
    pair-3 figures miss all but each op's last task (docs/differences.md, "DB torch ops"), so SQL is the oracle;
    test_modules_db.py checks four leaf modules and the [ BACKWARD ] rows."""
    by = [_forward_modules_by_sql(L1), _forward_modules_by_sql(L2)]
    assert len(by[0]) == len(by[1]) == 26
    detail, stat = pair3.sheet("ModuleCompare").copy(), pair3.sheet("ModuleCompareStatistic").copy()
    detail.columns, stat.columns = range(detail.shape[1]), range(stat.shape[1])
    rows = {"ModuleCompare": detail[detail[4] == "TOTAL"], "ModuleCompareStatistic": stat[stat[4] == "[ TOTAL ]"]}
    # (self, total) columns per side, and the us/ms scale of each sheet (reference-2 §3.7, §3.8)
    layout = {"ModuleCompare": (((6, 7), (10, 11)), 1000.0, (12, 13, 14)),
              "ModuleCompareStatistic": (((6, 8), (10, 12)), 1e6, (13, 14, 15))}
    for name, sheet in rows.items():
        (cols, scale, (d_total, d_self, ratio)) = layout[name]
        # nn.Module frames (the optimizer's pseudo-modules aside) outside the backward tree
        fwd = sheet[sheet[1].str.startswith("nn.Module:") & ~sheet[3].str.startswith("/[ BACKWARD ]")].set_index(3)
        assert sorted(fwd.index) == sorted(by[0]) == sorted(by[1]), name
        for key, row in fwd.iterrows():
            want = []
            for (c_self, c_total), side in zip(cols, by, strict=True):
                total, own = side[key]
                assert (row[c_total], row[c_self]) == pytest.approx((total / scale, own / scale), abs=1e-9), key
                want.append((total / scale, own / scale))
            (bt, bs), (ct, cs) = want
            assert row[d_total] == pytest.approx(exact_diff(bt, ct), abs=1e-9), key
            assert row[d_self] == pytest.approx(exact_diff(bs, cs), abs=1e-9), key
            want_ratio = 1.0 if not bt and not ct else (np.inf if not bt else round(ct / bt, 4))
            assert _numbers(pd.Series([row[ratio]]))[0] == pytest.approx(want_ratio, abs=1e-12), key


def _top_layer_ops_by_sql(path: Path) -> list[tuple[str, float]]:
    """(name, device us) of the top-layer torch ops of a DB export (reference-2 §2.2-§2.3: ops nested by start
    time alone, a ProfilerStep#N replaced by its children), each with every task launched by an op starting
    inside its span, by SQL and a plain stack walk."""
    ops = sql(path, f"""SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) FROM PYTORCH_API p
                        JOIN STRING_IDS s ON s.id = p.name WHERE p.type = {OP} ORDER BY 2, p.rowid""")
    launched = sql(path, f"""SELECT CAST(p.startNs AS INTEGER), t.endNs - t.startNs FROM PYTORCH_API p
                             JOIN CONNECTION_IDS ci ON ci.id = p.connectionId
                             JOIN TASK t ON t.connectionId = ci.connectionId
                             JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId WHERE p.type = {OP}""")
    stack: list[tuple[str, int, int]] = []
    top = []
    for name, start, end in ops:
        while stack and start > stack[-1][2]:
            stack.pop()
        if (not stack and not name.startswith("ProfilerStep#")) or (
                len(stack) == 1 and stack[0][0].startswith("ProfilerStep#")):
            top.append((name, start, end))
        stack.append((name, start, end))
    return [(name, sum(d for ts, d in launched if start <= ts <= end) / 1000) for name, start, end in top]


def test_db_operator_compare_rows_by_sql(pair3_ops) -> None:
    """OperatorCompare of DB exports: each side's 115 top-layer operators in order, each with the device time of
    the tasks launched inside it (SQL), and the diff cells of every pair by reference-2 §0.1."""
    detail = pair3_ops.sheet("OperatorCompare")
    for path, name, dur in ((L1, "Operator Name", "Device Duration(us)"),
                            (L2, "Operator Name.1", "Device Duration(us).1")):
        want = _top_layer_ops_by_sql(path)
        rows = detail[detail[name].fillna("") != ""]
        assert len(want) == len(rows) == 115
        assert rows[name].tolist() == [n for n, _ in want]
        assert rows[dur].tolist() == pytest.approx([d for _, d in want], abs=1e-9)
    for _, row in detail.iterrows():
        b_, c_ = row["Device Duration(us)"], row["Device Duration(us).1"]
        assert row["Diff Duration(us)"] == exact_diff(b_, c_)
        assert _numbers(pd.Series([row["Diff Ratio"]]))[0] == (
            1.0 if not b_ and not c_ else (np.inf if not b_ else round(c_ / b_, 4)))


def _backward_modules_by_sql(path: Path) -> list[tuple[str, float, float]]:
    """(row name, self us, total us) of every [ BACKWARD ] module of a DB export (reference-2 §3.2 step 7): each
    forward -> backward link (two op rows sharing a CANN connection id; no compute task has it) whose forward op
    lies strictly inside a forward module gives that module's backward copy, spanning the backward op; copies
    nest by time; device times as for forward modules. Names may repeat (AddmmBackward0 and TBackward0 both link
    to one Linear), hence a sorted list."""
    frames = sql(path, f"""SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) FROM PYTORCH_API p
                           JOIN STRING_IDS s ON s.id = p.name
                           WHERE p.type = {TRACE} AND s.value LIKE 'nn.Module:%' ORDER BY 2""")
    modules, stack = [], []
    for name, start, end in frames:
        while stack and start > stack[-1][2]:
            stack.pop()
        stack.append(((stack[-1][0] if stack else "") + "/" + name.replace("nn.Module:", ""), start, end))
        modules.append(stack[-1])
    links = sql(path, f"""SELECT min(CAST(p.startNs AS INTEGER)), max(CAST(p.startNs AS INTEGER))
                          FROM PYTORCH_API p JOIN CONNECTION_IDS ci ON ci.id = p.connectionId WHERE p.type = {OP}
                          GROUP BY ci.connectionId HAVING count(*) > 1""")
    ends = dict(sql(path, f"SELECT CAST(startNs AS INTEGER), CAST(endNs AS INTEGER) FROM PYTORCH_API "
                          f"WHERE type = {OP}"))
    launched = sql(path, f"""SELECT CAST(p.startNs AS INTEGER), t.endNs - t.startNs FROM PYTORCH_API p
                             JOIN CONNECTION_IDS ci ON ci.id = p.connectionId
                             JOIN TASK t ON t.connectionId = ci.connectionId
                             JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId WHERE p.type = {OP}""")
    copies = []
    for fwd, bwd in links:
        inside = [m for m in modules if m[1] < fwd < m[2]]
        if inside:
            deepest = max(inside, key=lambda m: m[0].count("/"))
            copies.append(("/[ BACKWARD ]" + deepest[0], bwd, ends[bwd]))
    out: list[list] = []
    open_: list[tuple[int, list]] = []
    for name, start, end in sorted(copies, key=lambda c: c[1]):
        while open_ and start > open_[-1][0]:
            open_.pop()
        total = sum(d for ts, d in launched if start <= ts <= end)
        rec = [name, total, total]
        if open_:
            open_[-1][1][1] -= total  # a parent's self time leaves out its children's totals
        open_.append((end, rec))
        out.append(rec)
    return sorted((n, own / 1000, total / 1000) for n, own, total in out)


def test_db_backward_module_times_by_sql(pair3) -> None:
    """Device Self / Total Time of the 27 [ BACKWARD ] module rows per side of a DB export's ModuleCompare."""
    detail = pair3.sheet("ModuleCompare").copy()
    detail.columns = range(detail.shape[1])
    rows = detail[(detail[4] == "TOTAL") & detail[3].str.startswith("/[ BACKWARD ]")]
    for path, c_self, c_total in ((L1, 6, 7), (L2, 10, 11)):
        want = _backward_modules_by_sql(path)
        got = sorted(zip(rows[3], rows[c_self], rows[c_total], strict=True))
        assert len(got) == len(want) == 27
        assert [g[0] for g in got] == [w[0] for w in want]
        assert [g[1:] for g in got] == [pytest.approx(w[1:], abs=1e-9) for w in want]
