"""Operator rows of the module sheets (ModuleCompare, ModuleCompareStatistic) on pairs whose sides differ: the
AlexNet H200 Kineto trace (tests/data/kineto) against the msinsight level-1 NPU text run of the same training
loop, and the two DB excerpts of tests/data/db (reference pair 3's inputs). Before, those rows were pinned only by
a trace compared with itself (reference pair 6b) and by the NPU text pairs 1 and 2. Also the TOTAL rows those two
inputs' tests (test_independent_gpu_modules.py, test_independent_db_sheets.py) leave out: the GPU side's backward
copies and optimizer pseudo-modules, and the DB's ModuleCompareStatistic backward rows.

The expected rows are rebuilt here in plain Python from the raw Kineto JSON or by SQL on the DB excerpts,
following reference-2 §3.2 literally (module trees from nn.Module frames and optimizer ops, backward copies from
fwdbwd links, each op to the deepest module strictly holding its start, a module's self kernels handed to its
top-layer ops in time order); the NPU text side's figures are the original's cells of reference pair 1, whose
base is that NPU run. The diff cells follow reference-2 §0.1 by hand. Nothing expected comes from the package."""

from __future__ import annotations

import gzip
import json
from bisect import bisect_right
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dbutil import sql
from diffutil import exact_diff
from xlsxutil import read_xlsx

from msprof_compare.api import compare

DATA = Path(__file__).resolve().parent / "data"
GPU = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
DB1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
DB2 = DATA / "db" / "l2" / "ascend_pytorch_profiler_0.db"
PAIR1 = "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx"
OP, TRACE = 50001, 50003  # ENUM_API_TYPE "op" / "trace" of the samples

Span = tuple[int, int, str]  # start ns, end ns, name
Kernels = list[tuple[str, int, str]]  # (kernel name, ns, its Kernel Details line, reference-2 §2.1)
Rows = list[tuple[str, list[tuple[str, Kernels]]]]  # module path -> its top-layer ops with their kernels
Totals = list[tuple[str, int, int]]  # module path, device self ns, device total ns


# ---------------------------------------------------------------------------------------------------- the oracle

def _tree(frames: list[Span], points: dict[int, Kernels]) -> tuple[dict, list[dict]]:
    """reference-2 §3.2 step 5: modules nested by the cursor rule (pop while start > the open module's end),
    kernel time points (placed after modules of the same start) giving the open module its self kernels."""
    items = sorted([(s, 0, e, n) for s, e, n in frames] + [(ts, 1, ts, "") for ts in points],
                   key=lambda x: (x[0], x[1]))
    root: dict = {"path": "", "children": []}
    mods, stack = [], [root]
    for s, kind, e, n in items:
        while len(stack) > 1 and s > stack[-1]["end"]:
            stack.pop()
        if kind == 0:
            node = {"path": stack[-1]["path"] + "/" + n, "start": s, "end": e, "children": [], "points": [],
                    "ops": [], "open": []}
            stack[-1]["children"].append(node)
            stack.append(node)
            mods.append(node)
        elif len(stack) > 1:
            stack[-1]["points"].append(s)
    return root, mods


def _deepest(root: dict, ts: int) -> dict | None:
    """reference-2 §3.3: the last child starting at or before ts, if it holds ts strictly; repeatedly."""
    node, found = root, None
    while node["children"]:
        i = bisect_right([c["start"] for c in node["children"]], ts) - 1
        if i < 0 or not node["children"][i]["start"] < ts < node["children"][i]["end"]:
            break
        node = found = node["children"][i]
    return found


def _module_ops(frames: list[Span], ops: list[Span], points: dict[int, Kernels],
                links: list[tuple[int, int]]) -> tuple[Rows, Totals]:
    """Every module instance (forward, then backward copies) with its top-layer ops and their kernels, and with
    its device self / total ns (§3.3: its own points' kernels; those and all its descendants').
    ``ops`` in file order; ``links``: (forward ts, backward ts) of each forward -> backward flow."""
    order = sorted(range(len(ops)), key=lambda i: ops[i][0])
    froot, fmods = _tree(frames, points)
    at = {ops[i][0]: ops[i] for i in order}  # the op starting at a flow end: the last of several
    copies = []
    for fts, bts in links:
        m = _deepest(froot, fts)
        if m is not None and bts in at:
            copies.append((at[bts][0], at[bts][1], "[ BACKWARD ]" + m["path"]))
    broot, bmods = _tree(copies, points)
    for i in order:
        s, e, n = ops[i]
        if n.lower().startswith("optimizer") or "ProfilerStep#" in n:
            continue
        m = _deepest(froot, s) or _deepest(broot, s)
        if m is None:
            continue
        while m["open"] and s > m["open"][-1][1]:
            m["open"].pop()
        rec: list = [s, e, n, []]
        if not m["open"]:
            m["ops"].append(rec)
        m["open"].append(rec)
    out: Rows = []
    for m in fmods + bmods:
        top, j = m["ops"], 0
        for ts in sorted(m["points"]):  # a batch goes to the first op ending at or after it, if started
            while j < len(top) and top[j][1] < ts:
                j += 1
            if j < len(top) and top[j][0] <= ts:
                top[j][3].extend(points[ts])
        out.append((m["path"].replace("nn.Module:", ""), [(n, ks) for _, _, n, ks in top]))

    def total(m: dict) -> int:
        m["self"] = sum(d for ts in m["points"] for _, d, _ in points[ts])
        m["total"] = m["self"] + sum(total(c) for c in m["children"])
        return m["total"]

    for r in (froot, broot):
        for c in r["children"]:
            total(c)
    return out, [(m["path"].replace("nn.Module:", ""), m["self"], m["total"]) for m in fmods + bmods]


def _ns(v: Decimal) -> int:
    return int(v * 1000)


def _kineto_side(path: Path) -> tuple[Rows, Totals]:
    """reference-2 §2.1 / §3.2 over the raw events: ops of the five host cats, kernels (kernel, gpu_memcpy)
    keyed by the start ts of their launch flow, fwdbwd flows as links."""
    with gzip.open(path, "rt") as fh:
        events = json.load(fh, parse_float=Decimal)["traceEvents"]

    def cat(e: dict) -> str:
        return str(e.get("cat", "")).lower()

    xs = [e for e in events if e.get("ph") == "X"]
    frames = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"]) for e in xs
              if cat(e) == "python_function" and e["name"].lower().startswith("nn.module:")]
    ops = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"]) for e in xs
           if cat(e) in ("cpu_op", "user_annotation", "cuda_runtime", "operator", "runtime")]
    frames += [o for o in ops if o[2].lower().startswith("optimizer")]
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])): (e["name"], _ns(e["dur"]),
                                                    f"{e['name']} [duration: {_ns(e['dur']) / 1000}]\n")
               for e in xs if cat(e) in ("kernel", "gpu_memcpy")}
    flow = ("async_gpu", "async_cpu_to_gpu", "ac2g", "async")
    starts = {e["id"]: _ns(e["ts"]) for e in events if cat(e) in flow and e.get("ph") == "s"}
    points: dict[int, Kernels] = {}
    for e in events:
        if cat(e) in flow and e.get("ph") == "f" and e["id"] in starts:
            k = kernels.get((e["pid"], e["tid"], _ns(e["ts"])))
            if k:
                points.setdefault(starts[e["id"]], []).append(k)
    fs = {e["id"]: _ns(e["ts"]) for e in events if cat(e) == "fwdbwd" and e.get("ph") == "s"}
    links = [(fs[e["id"]], _ns(e["ts"])) for e in events if cat(e) == "fwdbwd" and e.get("ph") == "f"
             and e["id"] in fs]
    return _module_ops(frames, ops, points, links)


def _db_side(path: Path) -> tuple[Rows, Totals]:
    """The same by SQL: ops are PYTORCH_API rows of type op, frames its nn.Module trace rows, an op's tasks those
    of its CANN connection ids, and a forward -> backward link a connection id two op rows share."""
    frames = sql(path, f"""SELECT CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), s.value FROM PYTORCH_API p
                           JOIN STRING_IDS s ON s.id = p.name WHERE p.type = {TRACE} AND s.value LIKE 'nn.Module:%'""")
    ops = sql(path, f"""SELECT CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), s.value FROM PYTORCH_API p
                        JOIN STRING_IDS s ON s.id = p.name WHERE p.type = {OP} ORDER BY p.rowid""")
    frames += [o for o in ops if o[2].lower().startswith("optimizer")]
    points: dict[int, Kernels] = {}
    for ts, name, dur, task, kind, shapes in sql(
            path, f"""SELECT CAST(p.startNs AS INTEGER), k.value, t.endNs - t.startNs, t.taskId, tt.value, sh.value
                      FROM PYTORCH_API p JOIN CONNECTION_IDS ci ON ci.id = p.connectionId
                      JOIN TASK t ON t.connectionId = ci.connectionId
                      JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId
                      JOIN STRING_IDS k ON k.id = c.name JOIN STRING_IDS tt ON tt.id = c.taskType
                      LEFT JOIN STRING_IDS sh ON sh.id = c.inputShapes WHERE p.type = {OP} ORDER BY t.startNs"""):
        # the text export's Task Id (docs/differences.md, "DB kernel lists name the task id of the text export")
        shown = f", [input shapes: {shapes}]" if shapes else ""
        points.setdefault(ts, []).append((name, dur, f"{name}, {task}, {kind}{shown} [duration: {dur / 1000}]\n"))
    links = sql(path, f"""SELECT min(CAST(p.startNs AS INTEGER)), max(CAST(p.startNs AS INTEGER))
                          FROM PYTORCH_API p JOIN CONNECTION_IDS ci ON ci.id = p.connectionId WHERE p.type = {OP}
                          GROUP BY ci.connectionId HAVING count(*) > 1""")
    return _module_ops(frames, ops, points, links)


def _ms3(ns: int) -> str:
    """Whole ns as ms to 3 decimals, a half up, by decimal arithmetic."""
    return str((Decimal(ns) / 10**6).quantize(Decimal("0.001"), ROUND_HALF_UP))


def _by_module_and_op(rows: Rows) -> dict[tuple[str, str], tuple[float, int, str]]:
    """reference-2 §3.7 operator rows: per (module name, op name) over all instances, Σ op ms, op count and the
    kernel text (per kernel name in first-appearance order: count and Σ ms to 3 decimals, a half up: the whole ns
    of a sum as the original's exact decimals round it)."""
    acc: dict[tuple[str, str], list] = {}
    for path, ops in rows:
        for name, ks in ops:
            a = acc.setdefault((path, name), [0, 0, {}])
            a[0] += sum(d for _, d, _ in ks)
            a[1] += 1
            for k, d, _ in ks:
                a[2].setdefault(k, []).append(d)
    return {key: (ns / 1e6, n, "".join(f"{k}, [number: {len(ds)}], [duration_ms: {_ms3(sum(ds))}]\n"
                                       for k, ds in kd.items()))
            for key, (ns, n, kd) in acc.items()}


# ---------------------------------------------------------------------------------------------------- the sheets

def _ratio(b: float, c: float) -> float:
    return 1.0 if not b and not c else (np.inf if not b else round(c / b, 4))


def _number(v) -> float:
    return np.inf if v == "INF" else float(v)


def _blocks(sheet: pd.DataFrame, total: str) -> list[tuple[str, pd.DataFrame]]:
    """(module name, its operator rows) per TOTAL row, in sheet order."""
    s = sheet.copy()
    s.columns = range(s.shape[1])
    starts = np.flatnonzero((s[4] == total).to_numpy()).tolist() + [len(s)]
    return [(s.at[a, 3], s.iloc[a + 1:b]) for a, b in zip(starts, starts[1:], strict=False)]


def _detail_side(blocks: list, c_name: int, c_self: int) -> list[tuple[str, tuple]]:
    """A side of ModuleCompare: per module row, its ops in order as (name, self us, Kernel Details) (the other
    side's unpaired rows, whose op name is empty, left out), sorted by module name (backward copies' repeat)."""
    return sorted((name, tuple((r[c_name], float(r[c_self]), r[c_name + 1] if isinstance(r[c_name + 1], str) else "")
                               for _, r in rows.iterrows() if isinstance(r[c_name], str) and r[c_name]))
                  for name, rows in blocks)


def _check_detail_diffs(blocks: list) -> int:
    n = 0
    for _, rows in blocks:
        for _, r in rows.iterrows():
            b, c = float(r[6]), float(r[10])
            assert (r[13], _number(r[14])) == (exact_diff(b, c), _ratio(b, c)), r.tolist()
            assert pd.isna(r[7]) and pd.isna(r[11]) and pd.isna(r[12])
            n += 1
    return n


def _stat_ops(blocks: list, side: int) -> dict[tuple[str, str], tuple[float, int, str]]:
    """A side of ModuleCompareStatistic's operator rows: (module, op) -> (ms, count, kernel text)."""
    kt, ms, cnt = (5, 6, 7) if side == 0 else (9, 10, 11)
    return {(name, r[4]): (float(r[ms]), int(r[cnt]), r[kt] if isinstance(r[kt], str) else "")
            for name, rows in blocks for _, r in rows.iterrows() if int(r[cnt]) > 0}


def _check_stat_diffs(blocks: list) -> int:
    n = 0
    for _, rows in blocks:
        for _, r in rows.iterrows():
            b, c = float(r[6]), float(r[10])
            assert (r[14], _number(r[15])) == (exact_diff(b, c), _ratio(b, c)), r.tolist()
            assert pd.isna(r[8]) and pd.isna(r[12]) and pd.isna(r[13])
            n += 1
    return n


def _total_rows(sheet: pd.DataFrame, total: str) -> pd.DataFrame:
    s = sheet.copy()
    s.columns = range(s.shape[1])
    return s[s[4] == total]


def _detail_totals(rows: pd.DataFrame, side: int) -> list[tuple[str, float, float]]:
    """ModuleCompare TOTAL rows of a side: sorted (module name, self us, total us)."""
    c_self, c_total = (6, 7) if side == 0 else (10, 11)
    return sorted(zip(rows[3], rows[c_self].astype(float), rows[c_total].astype(float), strict=True))


def _stat_totals(rows: pd.DataFrame, side: int) -> dict[str, tuple[float, int, float]]:
    """ModuleCompareStatistic [ TOTAL ] rows of a side: module name -> (self ms, number, total ms)."""
    c = (6, 7, 8) if side == 0 else (10, 11, 12)
    return {r[3]: (float(r[c[0]]), int(r[c[1]]), float(r[c[2]])) for _, r in rows.iterrows()}


def _by_module(totals: Totals) -> dict[str, tuple[float, int, float]]:
    """reference-2 §3.7 TOTAL rows: per module name over its instances, Σ self ms, count, Σ total ms."""
    acc: dict[str, list] = {}
    for name, own, total in totals:
        a = acc.setdefault(name, [0, 0, 0])
        a[0] += own
        a[1] += 1
        a[2] += total
    return {k: (own / 1e6, n, total / 1e6) for k, (own, n, total) in acc.items()}


def _check_total_diffs(detail: pd.DataFrame, stat: pd.DataFrame) -> None:
    """The diff cells of the TOTAL rows: total diff, self diff, total ratio (§3.7, §3.8)."""
    for rows, cols in ((detail, (6, 7, 10, 11, 12, 13, 14)), (stat, (6, 8, 10, 12, 13, 14, 15))):
        bs, bt, cs, ct, d_total, d_self, ratio = cols
        for _, r in rows.iterrows():
            b_s, b_t, c_s, c_t = (float(r[c]) for c in (bs, bt, cs, ct))
            assert (r[d_total], r[d_self], _number(r[ratio])) == (
                exact_diff(b_t, c_t), exact_diff(b_s, c_s), _ratio(b_t, c_t)), r.tolist()


def _assert_totals(detail: pd.DataFrame, stat: pd.DataFrame, side: int, want: Totals | tuple, **tol) -> None:
    """One side's TOTAL rows of both sheets against ``want`` (the oracle's instances, or a reference
    workbook's (ModuleCompare, ModuleCompareStatistic) TOTAL rows of a side)."""
    if isinstance(want, tuple):
        ref_detail, ref_stat, ref_side = want
        w_detail, w_stat = _detail_totals(ref_detail, ref_side), _stat_totals(ref_stat, ref_side)
    else:
        w_detail = sorted((n, own / 1000, total / 1000) for n, own, total in want)
        w_stat = _by_module(want)
    got = _detail_totals(detail, side)
    assert [g[0] for g in got] == [w[0] for w in w_detail]
    assert [g[1:] for g in got] == [pytest.approx(w[1:], **tol) for w in w_detail]
    got_stat = _stat_totals(stat, side)
    assert sorted(got_stat) == sorted(w_stat)
    for name, (own, n, total) in w_stat.items():
        assert got_stat[name][1] == n, name
        assert (got_stat[name][0], got_stat[name][2]) == pytest.approx((own, total), **tol), name


def _expected_detail(rows: Rows) -> list[tuple[str, tuple]]:
    return sorted((name, tuple((n, sum(d for _, d, _ in ks) / 1000, "".join(line for _, _, line in ks))
                               for n, ks in ops)) for name, ops in rows)


def _assert_side(got: list, want: list, texts: bool = True, **tol) -> None:
    """Module rows, op names and self times (within ``tol``); the Kernel Details texts when ``texts``."""
    assert [(g[0], [o[0] for o in g[1]]) for g in got] == [(w[0], [o[0] for o in w[1]]) for w in want]
    for g, w in zip(got, want, strict=True):
        assert [o[1] for o in g[1]] == pytest.approx([o[1] for o in w[1]], **tol), g[0]
        if texts:
            assert [o[2] for o in g[1]] == [o[2] for o in w[1]], g[0]


def test_gpu_against_npu_module_operator_rows(samples: Path, reference_outputs: Path) -> None:
    """AlexNet H200 (Kineto) against the NPU level-1 run: 55 module rows a side (26 forward modules, 2 optimizer
    pseudo-modules, 27 backward copies). The GPU side's op rows from the raw JSON, to the ns; the NPU side's are
    pair 1's base cells (within 0.5%: the original keeps the trace's sub-ns digits, docs/differences.md "Kernel
    durations in detail text have nanosecond resolution")."""
    if not (samples / NPU).exists():
        pytest.skip("NPU sample absent")
    base, base_totals = _kineto_side(GPU)
    res = compare(str(GPU), str(samples / NPU), enable_operator_compare=True)
    detail = _blocks(res.sheet("ModuleCompare"), "TOTAL")
    stat = _blocks(res.sheet("ModuleCompareStatistic"), "[ TOTAL ]")
    book = reference_outputs / PAIR1
    ref_detail = _blocks(read_xlsx(book, sheet_name="ModuleCompare", header=None, skiprows=3), "TOTAL")
    ref_stat = _blocks(read_xlsx(book, sheet_name="ModuleCompareStatistic", header=None, skiprows=3), "[ TOTAL ]")
    assert len(base) == len(detail) == len(ref_detail) == 55
    want = _expected_detail(base)
    assert sum(len(ops) for _, ops in want) == 67
    _assert_side(_detail_side(detail, 4, 6), want, abs=1e-9)
    # (Kernel Details: the original prints the trace's sub-ns digits, docs/differences.md)
    _assert_side(_detail_side(detail, 8, 10), _detail_side(ref_detail, 4, 6), texts=False, rel=5e-3, abs=1e-3)
    assert _check_detail_diffs(detail) > 67
    # ModuleCompareStatistic: per module name and op name
    got, want_stat = _stat_ops(stat, 0), _by_module_and_op(base)
    assert sorted(got) == sorted(want_stat)
    for key, (ms, n, text) in want_stat.items():
        assert got[key][1:] == (n, text), key
        assert got[key][0] == pytest.approx(ms, abs=1e-12), key
    got, ref = _stat_ops(stat, 1), _stat_ops(ref_stat, 0)
    assert sorted(got) == sorted(ref)
    for key, (ms, n, _) in ref.items():
        assert got[key][1] == n and got[key][0] == pytest.approx(ms, rel=5e-3, abs=1e-6), key
    assert _check_stat_diffs(stat) == len(set(_stat_ops(stat, 0)) | set(got))
    # the TOTAL rows of all 55 modules (test_independent_gpu_modules.py: the 26 forward ones of ModuleCompare)
    detail_t = _total_rows(res.sheet("ModuleCompare"), "TOTAL")
    stat_t = _total_rows(res.sheet("ModuleCompareStatistic"), "[ TOTAL ]")
    _assert_totals(detail_t, stat_t, 0, base_totals, abs=1e-9)
    ref_t = (_total_rows(read_xlsx(book, sheet_name="ModuleCompare", header=None, skiprows=3), "TOTAL"),
             _total_rows(read_xlsx(book, sheet_name="ModuleCompareStatistic", header=None, skiprows=3), "[ TOTAL ]"),
             0)
    _assert_totals(detail_t, stat_t, 1, ref_t, rel=5e-3, abs=1e-3)
    _check_total_diffs(detail_t, stat_t)
    # a figure to read: the backward aten::mm of classifier Linear_0 on the GPU (two GEMMs), 129.153 + 94.112 us
    linear = "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0"
    fc = [ops for name, ops in want if name == linear]
    assert sorted(t for ops in fc for n, t, _ in ops if n == "aten::mm") == pytest.approx([94.112, 129.153])


@pytest.fixture(scope="module")
def db_pair():
    """The DB pair as reference pair 3 was run (module sheets by default)."""
    return compare(str(DB1), str(DB2))


@pytest.mark.parametrize("db", [DB1, DB2], ids=["level1", "level2"])
def test_db_module_operator_rows_by_sql(db_pair, db: Path) -> None:
    """DB exports (pair 3's inputs): every operator row of both module sheets, both sides, by SQL; the original's
    pair-3 figures keep only each op's last task (docs/differences.md, "DB torch ops"), so SQL is the oracle."""
    res = db_pair
    side = 0 if db == DB1 else 1
    rows, totals = _db_side(db)
    detail = _blocks(res.sheet("ModuleCompare"), "TOTAL")
    stat = _blocks(res.sheet("ModuleCompareStatistic"), "[ TOTAL ]")
    assert len(rows) == len(detail) == 55
    want = _expected_detail(rows)
    assert sum(len(ops) for _, ops in want) == 67
    _assert_side(_detail_side(detail, *((4, 6) if side == 0 else (8, 10))), want, abs=1e-9)
    assert _check_detail_diffs(detail) >= 67
    got, want_stat = _stat_ops(stat, side), _by_module_and_op(rows)
    assert sorted(got) == sorted(want_stat)
    for key, (ms, n, text) in want_stat.items():
        assert got[key][1:] == (n, text), key
        assert got[key][0] == pytest.approx(ms, abs=1e-12), key
    assert _check_stat_diffs(stat) >= len(want_stat)
    # the TOTAL rows: test_independent_db_sheets.py pins the forward ones and ModuleCompare's backward ones
    detail_t = _total_rows(res.sheet("ModuleCompare"), "TOTAL")
    stat_t = _total_rows(res.sheet("ModuleCompareStatistic"), "[ TOTAL ]")
    _assert_totals(detail_t, stat_t, side, totals, abs=1e-9)
    _check_total_diffs(detail_t, stat_t)
