"""DB sheets' per-operator cells no test pinned independently: MemoryCompare's Size(KB) and every line of its
Allocated Details, MemoryCompareStatistic's Allocated Duration(ms) / Allocated Memory(MB) / Operator Number per
name, and OperatorCompare's Input Shape / Input Type / Kernel Details, of the two DB excerpts in tests/data/db
(reference pair 3's inputs), by SQL on OP_MEMORY, PYTORCH_API, CONNECTION_IDS and the task tables and a plain walk
of reference-2 §2.2 / §5.1. test_independent_db_sheets.py pins the memory totals by SQL and the sizes against the
text export of the workload (pair 1); the durations per operator had no independent check (the text export is
another run, its times differ). The original's pair-3 sheets misplace CANN's own allocations (docs/differences.md,
"DB memory records of CANN's own allocations are placed as the text export's are"), so SQL is the oracle.
The Summary's top contributors of DB exports follow from the same SQL figures. The statistic's oracle also runs on
the other DB samples (level 0, rank 1), with the memory totals and peaks. Nothing expected comes from the package."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from dbutil import sql

from msprof_compare.api import compare

DATA = Path(__file__).parent / "data" / "db"
L1 = DATA / "l1" / "ascend_pytorch_profiler_0.db"
L2 = DATA / "l2" / "ascend_pytorch_profiler_0.db"
OP, QUEUE = 50001, 50002  # ENUM_API_TYPE "op" / "queue" of the samples


def _records(path: Path) -> list[tuple[int, int, int, str]]:
    """(placement ns, bytes, duration ns, details line) of every OP_MEMORY row that can be placed. A name no
    PYTORCH_API row has is a CANN node (``cann::`` in the text export): it is placed at the Enqueue of the Dequeue
    running at its allocation (the last Dequeue starting at or before it, if still running; the pair shares a CANN
    connection id), and dropped outside every Dequeue; any other row at its allocation time. The duration is
    release - allocation, 0 for a block never released. The line (reference-2 §5.1) has the times as the text
    export writes them (exact us, docs/differences.md "DB operator memory sizes are in KB, times exact"; 0: never
    released), sizes in KB, and ``{}`` where the op holding the block goes (a CANN node names itself
    ``cann::<node>``)."""
    torch = {n for (n,) in sql(path, "SELECT DISTINCT s.value FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name")}
    queue = sql(path, f"""SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), ci.connectionId
                          FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name
                          JOIN CONNECTION_IDS ci ON ci.id = p.connectionId WHERE p.type = {QUEUE}""")
    enqueue = {cid: start for name, start, _, cid in queue if name == "Enqueue"}
    dequeue = sorted((start, end, cid) for name, start, end, cid in queue if name.startswith("Dequeue"))
    out = []
    for name, size, alloc, release in sql(path, """SELECT s.value, m.size, m.allocationTime, m.releaseTime
                                                   FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name"""):
        dur = release - alloc if alloc and release else 0
        times = f"({alloc // 1000}.{alloc % 1000:03d}, {f'{release // 1000}.{release % 1000:03d}' if release else 0})"
        line = f"{{}}, {times}, [duration: {dur / 1000}], [size: {size / 1024}]\n"
        if name in torch:
            out.append((alloc, size, dur, line))
            continue
        running = [d for d in dequeue if d[0] <= alloc]
        if running and alloc <= running[-1][1]:
            out.append((enqueue.get(running[-1][2], 0), size, dur, line.replace("{}", "cann::" + name)))
    return out


def _top_layer_memory(path: Path) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """Each top-layer torch op (reference-2 §2.3) in order with the (bytes, duration ns, details line) of every
    record in its subtree: ops and records in one list by start (ops first at one time), each record under the
    deepest op still open (§2.2: an op is left when an item starts after its end)."""
    ops = sql(path, f"""SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) FROM PYTORCH_API p
                        JOIN STRING_IDS s ON s.id = p.name WHERE p.type = {OP} ORDER BY p.rowid""")
    items = sorted([(start, 0, end, name) for name, start, end in ops]
                   + [(ts, 1, size, (dur, line)) for ts, size, dur, line in _records(path)],
                   key=lambda x: (x[0], x[1]))
    top: list[tuple[str, list]] = []
    stack: list[tuple[int, int, str]] = []  # (end, index in top or -1, name) of the open ops
    for ts, kind, a, b in items:
        while stack and ts > stack[-1][0]:
            stack.pop()
        if kind == 0:
            if not stack and "ProfilerStep#" in b:
                owner = -1
            elif not stack or (len(stack) == 1 and stack[0][1] == -1):
                top.append((b, []))
                owner = len(top) - 1
            else:
                owner = stack[-1][1]
            stack.append((a, owner, b))
        elif stack and stack[-1][1] >= 0:
            top[stack[-1][1]][1].append((a, b[0], b[1].replace("{}", stack[-1][2])))
    return top


def _ratio(b: float, c: float) -> float:
    return 1.0 if not b and not c else (np.inf if not b else round(c / b, 4))


def _number(v) -> float:
    return np.inf if v == "INF" else float(v)


DURATION = re.compile(r"\[duration: ([0-9.eE+-]+)\]")


@pytest.fixture(scope="module")
def db_run():
    """The DB pair at operator level with the memory comparison (module sheets would replace OperatorCompare)."""
    return compare(str(L1), str(L2), enable_operator_compare=True, enable_memory_compare=True, disable_module=True)


@pytest.mark.parametrize("side", [0, 1], ids=["level1", "level2"])
def test_db_memory_compare_rows_by_sql(db_run, side: int) -> None:
    """MemoryCompare: each side's 115 top-layer ops in order, the KB of the blocks placed under each, every line of
    their Allocated Details (durations parsed apart too), and the diff cells of every row by reference-2 §0.1."""
    detail = db_run.sheet("MemoryCompare")
    want = _top_layer_memory((L1, L2)[side])
    sfx = ("", ".1")[side]
    rows = detail[detail["Operator Name" + sfx].fillna("") != ""]
    assert len(rows) == len(want) == 115
    assert rows["Operator Name" + sfx].tolist() == [n for n, _ in want]
    assert rows["Size(KB)" + sfx].astype(float).tolist() == pytest.approx(
        [sum(s for s, _, _ in recs) / 1024 for _, recs in want], rel=1e-12, abs=1e-12)
    parsed = 0
    for (name, recs), text in zip(want, rows["Allocated Details" + sfx].fillna("").tolist(), strict=True):
        got = sorted(float(d) for d in DURATION.findall(text))
        parsed += len(got)
        assert got == pytest.approx(sorted(d / 1000 for _, d, _ in recs), abs=1e-9), name
        # every line, as a multiset (the sheet lists an op's own blocks, then its descendants' breadth-first)
        assert sorted(text.splitlines(keepends=True)) == sorted(line for _, _, line in recs), name
    assert parsed == sum(len(recs) for _, recs in want) == 184  # every OP_MEMORY row, 24 never released
    for _, row in detail.iterrows():
        b, c = float(row["Size(KB)"]), float(row["Size(KB).1"])
        assert (row["Diff Size(KB)"], _number(row["Diff Ratio"])) == (round(c - b, 2), _ratio(b, c))


def _statistic_by_sql(stat, paths: tuple[Path, Path]) -> list[dict[str, list[int]]]:
    """Check every MemoryCompareStatistic row against the two DBs by SQL: per operator name and side, Allocated
    Duration(ms) (Σ of the durations of the blocks under the name's top-layer ops), Allocated Memory(MB), Operator
    Number; the Diff columns by hand. Gives each side's name -> [ns, bytes, ops]."""
    by_side = []
    for path in paths:
        acc: dict[str, list] = {}
        for name, recs in _top_layer_memory(path):
            a = acc.setdefault(name, [0, 0, 0])
            a[0] += sum(d for _, d, _ in recs)
            a[1] += sum(s for s, _, _ in recs)
            a[2] += 1
        by_side.append(acc)
    assert len(stat) == len(set(by_side[0]) | set(by_side[1]))
    for _, row in stat.iterrows():
        name = row["Operator Name"]
        for side, label in ((0, "Base"), (1, "Comparison")):
            dur, size, n = by_side[side].get(name, (0, 0, 0))
            assert row[f"{label} Allocated Duration(ms)"] == pytest.approx(dur / 1e6, rel=1e-12, abs=1e-12), name
            assert row[f"{label} Allocated Memory(MB)"] == pytest.approx(size / 2**20, rel=1e-12, abs=1e-12), name
            assert row[f"{label} Operator Number"] == n, name
        b, c = row["Base Allocated Memory(MB)"], row["Comparison Allocated Memory(MB)"]
        assert (row["Diff Memory(MB)"], _number(row["Diff Ratio"])) == (round(c - b, 2), _ratio(b, c)), name
    return by_side


def test_db_memory_statistic_per_name_by_sql(db_run) -> None:
    """MemoryCompareStatistic per operator name, both sides, by SQL (``_statistic_by_sql``): 35 names."""
    by_side = _statistic_by_sql(db_run.sheet("MemoryCompareStatistic"), (L1, L2))
    assert len(db_run.sheet("MemoryCompareStatistic")) == 35
    # figures to read: the forward pass holds most block time (421.13243 / 410.11332 ms, 360.85 MB a side)
    assert [s["DistributedDataParallel.forward"] for s in by_side] == [[421132430, 378382336, 1],
                                                                         [410113320, 378382336, 1]]


SAMPLE_DB = "msinsight/test/data/pytorch/db/{}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{}.db"


@pytest.mark.parametrize("base, comparison", [("level0/rank0", "level0/rank1"), ("level0/rank1", "level1/rank1")])
def test_db_memory_statistic_of_the_other_db_samples_by_sql(samples: Path, base: str, comparison: str) -> None:
    """The same SQL oracle on the DB samples beyond pair 3's excerpts: the level-0 exports (no PMU, the pair reference
    output 2 has in text form) and the rank-1 ones a rank-by-rank DB job compares; the memory totals are those
    names' sums (JSON summary.memory, the memory line), the peaks MEMORY_RECORD's largest totalReserved."""
    paths = tuple(samples / SAMPLE_DB.format(p, p[-1]) for p in (base, comparison))
    if not all(p.exists() for p in paths):
        pytest.skip("DB samples absent")
    res = compare(*(str(p) for p in paths), enable_memory_compare=True, disable_details=True)
    by_side = _statistic_by_sql(res.sheet("MemoryCompareStatistic"), paths)
    totals = res.memory_totals
    mb = [sum(v[1] for v in side.values()) / 2**20 for side in by_side]
    assert (totals["operators"], totals["base_mb"], totals["comparison_mb"]) == (
        len(set(by_side[0]) | set(by_side[1])), pytest.approx(mb[0], rel=1e-12), pytest.approx(mb[1], rel=1e-12))
    peaks = [sql(p, "SELECT max(totalReserved) FROM MEMORY_RECORD")[0][0] / 1024**3 for p in paths]
    assert [totals["base_peak_gb"], totals["comparison_peak_gb"]] == pytest.approx(peaks, rel=1e-12)
    assert sum(side["DistributedDataParallel.forward"][2] for side in by_side) == 2  # one forward pass a side


def _top_layer_ops(path: Path) -> list[tuple[str, str, str, list[str], int]]:
    """(name, Input Shape, Input Type, Kernel Details lines, device ns) of each top-layer torch op (reference-2
    §2.3) in order: the lines of every task launched by an op starting inside its span (reference-2 §2.1, with the
    text export's Task Id: docs/differences.md "DB kernel lists name the task id of the text export"). The samples'
    PYTORCH_API holds the shapes in inputDtypes and the types in inputShapes, read the other way round
    (docs/differences.md "DB ops without input shapes read `N/A`"): a NULL shape reads "" beside recorded types,
    else "N/A"."""
    ops = sql(path, f"""SELECT s.value, CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), sh.value, ty.value
                        FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name
                        LEFT JOIN STRING_IDS sh ON sh.id = p.inputDtypes
                        LEFT JOIN STRING_IDS ty ON ty.id = p.inputShapes WHERE p.type = {OP} ORDER BY 2, p.rowid""")
    tasks = sql(path, f"""SELECT CAST(p.startNs AS INTEGER), k.value, t.endNs - t.startNs, t.taskId, tt.value, sh.value
                          FROM PYTORCH_API p JOIN CONNECTION_IDS ci ON ci.id = p.connectionId
                          JOIN TASK t ON t.connectionId = ci.connectionId
                          JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId
                          JOIN STRING_IDS k ON k.id = c.name JOIN STRING_IDS tt ON tt.id = c.taskType
                          LEFT JOIN STRING_IDS sh ON sh.id = c.inputShapes WHERE p.type = {OP}""")
    lines = [(ts, f"{name}, {task}, {kind}{f', [input shapes: {shapes}]' if shapes else ''} [duration: {dur / 1000}]\n",
              dur) for ts, name, dur, task, kind, shapes in tasks]
    stack: list[tuple[str, int]] = []
    top = []
    for name, start, end, shape, types in ops:
        while stack and start > stack[-1][1]:
            stack.pop()
        if (not stack and "ProfilerStep#" not in name) or (len(stack) == 1 and "ProfilerStep#" in stack[0][0]):
            shown = shape if shape is not None else ("" if types is not None else "N/A")
            mine = [(line, dur) for ts, line, dur in lines if start <= ts <= end]
            top.append((name, shown, types if types is not None else "N/A", [m[0] for m in mine],
                        sum(m[1] for m in mine)))
        stack.append((name, end))
    return top


@pytest.mark.parametrize("side", [0, 1], ids=["level1", "level2"])
def test_db_operator_compare_texts_by_sql(db_run, side: int) -> None:
    """OperatorCompare of DB exports: the Input Shape, Input Type and every Kernel Details line of each side's 115
    top-layer ops (test_independent_db_sheets.py pins their names and durations)."""
    detail = db_run.sheet("OperatorCompare")
    sfx = ("", ".1")[side]
    rows = detail[detail["Operator Name" + sfx].fillna("") != ""]
    want = _top_layer_ops((L1, L2)[side])
    assert len(rows) == len(want) == 115
    assert rows["Operator Name" + sfx].tolist() == [w[0] for w in want]
    assert rows["Input Shape" + sfx].tolist() == [w[1] for w in want]
    assert rows["Input Type" + sfx].tolist() == [w[2] for w in want]
    got = [sorted(t.splitlines(keepends=True)) for t in rows["Kernel Details" + sfx].fillna("").tolist()]
    assert got == [sorted(w[3]) for w in want]
    # every task of the ops (187 a side); 51 top-layer ops without shapes or types, 5 with types alone
    assert sum(len(w[3]) for w in want) == 187
    assert (sum(w[1] == "N/A" for w in want), sum(w[1] == "" for w in want)) == (51, 5)


def test_db_summary_contributors_by_sql(db_run) -> None:
    """The Summary's top contributors of DB exports (operator level: the operator names' device time), in plain
    Python from the SQL figures above: ranked by |diff| until 80 % of the summed |diff| is covered, with share,
    cumulative share and share of the net diff (docs/differences.md, "Additions"; the rule as
    test_independent_summary.py writes it for the other families)."""
    per_name: dict[str, list[int]] = {}
    for side, path in enumerate((L1, L2)):
        for name, *_, ns in _top_layer_ops(path):
            per_name.setdefault(name, [0, 0])[side] += ns
    changed = [(n, b, c, c - b) for n, (b, c) in per_name.items() if c != b]
    gross, net = sum(abs(d) for *_, d in changed), sum(d for *_, d in changed)
    want, cum = [], 0.0
    for n, b, c, d in sorted(changed, key=lambda r: -abs(r[3])):
        cum += abs(d) / gross
        want.append((n, b / 1e6, c / 1e6, d / 1e6, abs(d) / gross, cum, d / net))
        if cum >= 0.8 - 1e-12:
            break
    got = db_run.contributors
    assert (got["Level"] == "operator").all() and got["Rank"].tolist() == list(range(1, len(want) + 1))
    assert got["Name"].tolist() == [w[0] for w in want]
    for k, col in enumerate(["Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share",
                             "Share of Net Diff"], start=1):
        assert got[col].astype(float).tolist() == pytest.approx([w[k] for w in want], rel=1e-9, abs=1e-12), col
    # seven names cover 83.5 %; ConvolutionBackward0 first, 2.008052 -> 1.996702 ms
    assert len(want) == 7 and want[0][:4] == ("autograd::engine::evaluate_function: ConvolutionBackward0",
                                              2.008052, 1.996702, pytest.approx(-0.01135, abs=1e-12))
