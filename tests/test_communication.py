"""CommunicationCompare: grouping, task attribution, positional task pairing, logs."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xlsxutil import read_xlsx

from msprof_compare.api import RunContext
from msprof_compare.compare import communication as comm
from msprof_compare.model import Profile, frame
from msprof_compare.options import Options

DATA_DB_L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"


def npu(path="npu", ops=(), tasks=(), steps=()) -> Profile:
    """ops/tasks: (name, ts_us, dur_us); steps: (id, ts_us, dur_us)."""
    rows = [(n, t, d, "op") for n, t, d in ops] + [(n, t, d, "task") for n, t, d in tasks]
    p = Profile(path=path, kind="NPU", source="ascend_text")
    p.comm = frame("comm", {"name": [r[0] for r in rows], "ts": [int(r[1] * 1000) for r in rows],
                            "dur": [int(r[2] * 1000) for r in rows], "lane": [r[3] for r in rows]})
    if steps:
        p.ops = frame("ops", {"name": [f"ProfilerStep#{i}" for i, _, _ in steps], "cat": ["cpu_op"] * len(steps),
                              "ts": [int(t * 1000) for _, t, _ in steps], "dur": [int(d * 1000) for _, _, d in steps]})
    return p


def gpu(path="gpu", kernels=()) -> Profile:
    p = Profile(path=path, kind="GPU", source="kineto")
    p.kernels = frame("kernels", {"name": [k[0] for k in kernels], "cat": [k[1] for k in kernels],
                                  "ts": [k[2] * 1000 for k in kernels], "dur": [k[3] * 1000 for k in kernels]})
    return p


def test_family_names():
    import pandas as pd

    names = pd.Series(["hcom_allReduce__123_0_1", "hcom_broadcast_1", "ncclKernel_AllReduce_RING_LL_Sum_float",
                       "ncclDevKernel_Generic", "Default/AllReduce-op534_0", "nounderscore"])
    assert comm.family(names).tolist() == ["allreduce", "broadcast", "ncclkernel", "nccldevkernel",
                                           "default/allreduce-op534", None]
    assert comm.family(pd.Series(["hcom_", "x_"])).tolist() == ["", "x"]  # two pieces: a family, if empty
    # reference-2 §4.2: the second piece only when the first is "hcom" itself
    assert comm.family(pd.Series(["hcomAllReduce_1", "xhcom_allReduce_1"])).tolist() == ["hcomallreduce", "xhcom"]


def test_rows_unit_fact():
    """reference-2 §4.3 UT: six rows, positional task pairing, diff/ratio only on summary rows (durations
    in, as side_data gives them, int64 ns; figures out in µs)."""
    def arr(us):
        return (np.array(us, float) * 1000).astype(np.int64)
    base = {"allreduce": {"ops": arr([0.5, 7]), "tasks": {"Notify Wait": arr([1, 2, 3.0]), "Memcpy": arr([5.0])}},
            "allgather": {"ops": arr([1, 4.0]), "tasks": {}}}
    comp = {"allreduce": {"ops": arr([4, 5.0]), "tasks": {"Notify Wait": arr([1, 2, 3.0])}},
            "gather": {"ops": arr([1.0]), "tasks": {"Notify Wait": arr([1, 2, 3.0])}}}
    rows = comm.comm_rows(base, comp)
    assert rows == [
        [1, "allreduce", None, 2, 7.5, 3.75, 7, 0.5, "allreduce", None, 2, 9, 4.5, 5, 4, 1.5, 1.2],
        [2, "|", "Notify Wait", 3, 6, 2.0, 3, 1, "|", "Notify Wait", 3, 6, 2.0, 3, 1, None, None],
        [3, "|", "Memcpy", 1, 5, 5.0, 5, 5, None, None, None, 0, None, None, None, None, None],
        [4, "allgather", None, 2, 5, 2.5, 4, 1, None, None, None, 0, None, None, None, -5, 0.0],
        [5, None, None, None, 0, None, None, None, "gather", None, 1, 1, 1.0, 1, 1, 1, math.inf],
        [6, None, None, None, 0, None, None, None, "|", "Notify Wait", 3, 6, 2.0, 3, 1, None, None],
    ]
    assert comm.comm_rows({}, {"allreduce": {"ops": arr([4, 5.0]), "tasks": {}}}) == [
        [1, None, None, None, 0, None, None, None, "allreduce", None, 2, 9, 4.5, 5, 4, 9, math.inf]]
    assert comm.comm_rows({}, {}) == []


def test_positional_pairing_ignores_task_names():
    arr = np.array
    base = {"allreduce": {"ops": arr([1000]), "tasks": {"Notify Wait": arr([1000])}}}
    comp = {"allreduce": {"ops": arr([1000]), "tasks": {"Memcpy": arr([2000]), "Notify Wait": arr([3000])}}}
    rows = comm.comm_rows(base, comp)
    assert rows[1][1:3] == ["|", "Notify Wait"] and rows[1][8:10] == ["|", "Memcpy"]
    assert rows[2][1:5] == [None, None, None, 0] and rows[2][9] == "Notify Wait"


def test_task_attribution_unit_fact():
    """UT: op ts 1 dur 2, tasks at ts 2 and 5 -> only the first task belongs to allreduce."""
    p = npu(ops=[("hcom_allReduce_1", 1, 2)], tasks=[("notify_wait", 2, 1), ("notify_wait", 5, 1)])
    d = comm.side_data(p, None)
    assert list(d) == ["allreduce"]
    assert d["allreduce"]["ops"].tolist() == [2000]  # ns
    assert {k: v.tolist() for k, v in d["allreduce"]["tasks"].items()} == {"notify_wait": [1000]}


def test_ignored_op_takes_no_tasks():
    """An op without '_' is skipped before the task walk (reference-1 §3.4): a task inside both it and a
    real op belongs to the real op, and ``hcom_`` (family "") still has its row."""
    p = npu(ops=[("AllReduce", 0, 1000), ("hcom_allGather__1_0_1", 100, 100), ("hcom_", 300, 10)],
            tasks=[("Memcpy", 150, 10), ("Notify Wait", 302, 1)])
    d = comm.side_data(p, None)
    assert list(d) == ["allgather", ""]
    assert {k: v.tolist() for k, v in d["allgather"]["tasks"].items()} == {"Memcpy": [10000]}
    assert {k: v.tolist() for k, v in d[""]["tasks"].items()} == {"Notify Wait": [1000]}


def test_tasks_outside_every_op_belong_to_none():
    """Tasks none of whose ops holds them (before the first op, between ops, after the last) are left out: the
    families keep their op rows and have no task row (reference-1 §3.4's pointer finds no owner)."""
    p = npu(ops=[("hcom_allReduce_1", 10, 5), ("hcom_broadcast_2", 30, 5)],
            tasks=[("Notify Wait", 1, 1), ("Memcpy", 20, 2), ("Notify Wait", 50, 1)])
    d = comm.side_data(p, None)
    assert list(d) == ["allreduce", "broadcast"]
    assert [d[f]["ops"].tolist() for f in d] == [[5000], [5000]]
    assert all(d[f]["tasks"] == {} for f in d)
    rows = comm.comm_rows(d, d)
    assert [r[1] for r in rows] == ["allreduce", "broadcast"]  # summary rows only


def _pointer(op_ts, op_end, task_ts):
    owner = [-1] * len(task_ts)
    p = 0
    for i, (s, e) in enumerate(zip(op_ts, op_end, strict=False)):
        while p < len(task_ts) and task_ts[p] < s:
            p += 1
        while p < len(task_ts) and task_ts[p] <= e:
            owner[p] = i
            p += 1
    return owner


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20)), max_size=12),
       st.lists(st.integers(0, 80), max_size=30))
def test_vectorised_attribution_equals_forward_pointer(ops, tasks):
    ops = sorted(ops)
    op_ts = np.array([s for s, _ in ops], dtype=np.int64)
    op_end = np.array([s + d for s, d in ops], dtype=np.int64)
    task_ts = np.array(sorted(tasks), dtype=np.int64)
    got = comm.attribute_tasks(op_ts, op_end, task_ts).tolist()
    assert got == _pointer(op_ts.tolist(), op_end.tolist(), task_ts.tolist())


def test_gpu_nccl_and_rccl_kernels():
    p = gpu(kernels=[("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", 0, 30),
                     ("ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", 100, 10),
                     ("ncclDevKernel_Generic_4", "kernel", 200, 5),
                     ("rcclKernel_AllGather_x", "Kernel", 300, 4),
                     ("ncclKernel_memset_x", "gpu_memset", 400, 99),
                     ("gemm_kernel", "kernel", 500, 7)])
    d = comm.side_data(p, None)
    # families are the collectives (HCCL's op names); a kernel naming none keeps the original's family
    assert list(d) == ["allreduce", "nccldevkernel", "allgather"]
    assert d["allreduce"]["ops"].tolist() == [30000, 10000]
    assert d["allreduce"]["tasks"] == {}
    # reference-2 §11 example: [1,'ncclkernel',None,1,30,30,30,30,'ncclkernel',None,1,30,30,30,30,0,1]
    one = gpu(kernels=[("ncclKernel_x", "kernel", 0, 30)])
    sheets = comm.build(RunContext(one, one, Options(enable_communication_compare=True)))
    assert sheets[0].data.iloc[0].tolist() == [1, "ncclkernel", None, 1, 30.0, 30.0, 30.0, 30.0,
                                               "ncclkernel", None, 1, 30.0, 30.0, 30.0, 30.0, 0.0, 1.0]


def test_step_range_filters_ops_and_tasks():
    p = npu(ops=[("hcom_allReduce_1", 10, 5), ("hcom_allReduce_1", 100, 5)],
            tasks=[("Memcpy", 11, 1), ("Memcpy", 101, 2)], steps=[(5, 0, 50), (6, 90, 20)])
    ctx = RunContext(p, p, Options(enable_communication_compare=True, base_step=6, comparison_step=5))
    f = comm.build(ctx)[0].frame()
    assert f["Total Duration(us)"].tolist() == [5.0, 2.0]
    assert f["Total Duration(us).1"].tolist() == [5.0, 1.0]


def test_no_comm_data_logs_and_no_sheet(caplog):
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        sheets = comm.build(RunContext(npu("/x/a"), gpu("/x/b.json"), Options(enable_communication_compare=True)))
    assert sheets == []
    # the original's sentence, then the side (two ranks of one job differ by a digit of a path)
    assert [m for m in caplog.messages if m.startswith("Can't find any communication op")] == [
        "Can't find any communication op in the file: /x/a (base side)",
        "Can't find any communication op in the file: /x/b.json (comparison side)"]


def test_ops_that_no_family_names_are_said_as_such(caplog, samples):
    """Communication ops that are there but have no family (a level-0 DB export's opType N/A; a text op
    name without '_') are said to be unnamed, with their count: "can't find any communication op" would
    contradict OverallMetrics, which counts their time."""
    p = npu("/x/a", ops=[("hcomAllReduce", 10, 5), ("hcomBroadcast", 30, 5)], tasks=[("Memcpy", 11, 1)])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert comm.build(RunContext(p, p, Options(enable_communication_compare=True))) == []
    assert "/x/a: its 2 communication op(s) have names without a '_'" in caplog.text
    assert "Can't find any" not in caplog.text
    assert "OverallMetrics" not in caplog.text  # a run without it does not point there
    caplog.clear()
    from msprof_compare.api import compare

    db = samples / "msinsight/test/data/pytorch/db/level0/rank{}_ascend_pt"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(db).format(0), str(db).format(1), enable_communication_compare=True,
                      enable_profiling_compare=True)
    assert "CommunicationCompare" not in res.sheet_names
    for rank, side in ((0, "base side"), (1, "comparison side")):
        assert (f"rank{rank}_ascend_pt: its 4 communication op(s) have an op type of N/A, so CommunicationCompare "
                f"has no family to group them by and no row for this side ({side}: OverallMetrics counts their time)"
                ) in caplog.text
    # and it does: the base DB's 4 COMMUNICATION_OP rows span 89.880576 ms, 85.881122 ms of it outside its 187
    # COMPUTE_TASK_INFO tasks (sqlite3 and a plain interval union, by hand)
    om = res.sheet("OverallMetrics").set_index("Index")
    assert om.loc["Uncovered Communication Time", "Duration(ms)"] == pytest.approx(85.881122, abs=5e-7)


def test_step_without_communication_ops_is_said_as_such(caplog, samples, tmp_path):
    """A side whose chosen step holds no communication op has none to name: "can't find any", not "its N op(s)
    have names without a '_'" (its ops are in another step). No sample has a step without collectives: a copy
    of level1 rank0 with a made-up ProfilerStep#51 after its one step (#50, which holds all 4 hcom_allReduce
    ops), chosen on the base side."""
    import json
    import shutil
    from decimal import Decimal

    from msprof_compare.api import compare

    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", copy)
    tv = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = json.loads(tv.read_text(encoding="utf-8"))
    step = next(e for e in raw if e.get("name") == "ProfilerStep#50")
    end = Decimal(step["ts"]) + Decimal(str(step["dur"]))
    assert all(Decimal(e["ts"]) < end for e in raw if str(e.get("name")).startswith("hcom_"))
    raw.append(dict(step, name="ProfilerStep#51", ts=str(end + 1), dur=1000.0))
    tv.write_text(json.dumps(raw), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(copy), str(copy), enable_communication_compare=True, base_step=51, comparison_step=50)
    rows = res.sheet("CommunicationCompare")
    assert rows["Calls"].isna().all() and rows["Calls.1"].iloc[0] == 4  # base side empty
    # one folder, two steps: the base side's step 51 holds no communication op
    assert f"Can't find any communication op in the file: {copy} (base side)" in caplog.messages
    assert "have names without" not in caplog.text


def test_step_ending_at_an_hccl_op_start_on_real_data(samples, tmp_path):
    """reference-2 §4.1 / §9 (reference-1 §3.4): with a step, communication ops AND tasks are kept each by its own
    start lying in [step start, step end], ends included. No sample holds two steps: a copy of level1 rank0 whose
    ProfilerStep#50 is made to end exactly at the start of its 2nd hcom_allReduce op, with a ProfilerStep#51 added
    from that instant to the old end. That op then counts in both steps, and in step 50 it keeps only its tasks
    that start at its very start (the others start after the step's end), while step 51 loses op 1 and its tasks.
    Expected by hand from the raw JSON (plain json, Decimal): the 4 ops run one after the other (each ends
    before the next starts), so a task belongs to the op whose [start, end] holds its start."""
    import json
    import shutil
    from decimal import Decimal

    from msprof_compare.api import compare

    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", copy)
    tv = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = json.loads(tv.read_text(encoding="utf-8"))
    step = next(e for e in raw if e.get("name") == "ProfilerStep#50")
    s50, end = Decimal(step["ts"]), Decimal(step["ts"]) + Decimal(str(step["dur"]))
    ops, tasks = _hccl_spans(raw)
    cut = ops[1][0]
    step["dur"] = float(cut - s50)
    raw.append(dict(step, name="ProfilerStep#51", ts=str(cut), dur=float(end - cut)))
    tv.write_text(json.dumps(raw), encoding="utf-8")

    def by_hand(lo: Decimal, hi: Decimal) -> tuple[int, Decimal, int]:  # (ops, their total us, their tasks)
        kept = [o for o in ops if lo <= o[0] <= hi]
        n_tasks = sum(1 for t, _ in tasks if lo <= t <= hi and any(a <= t <= b for a, b in kept))
        return len(kept), sum((b - a for a, b in kept), Decimal(0)), n_tasks

    b_ops, b_total, b_tasks = by_hand(s50, cut)
    c_ops, c_total, c_tasks = by_hand(cut, end)
    assert (b_ops, c_ops) == (2, 3)  # op 2 in both steps
    assert 0 < b_tasks < sum(1 for t, _ in tasks if ops[0][0] <= t <= ops[1][1])  # op 2's later tasks left out
    res = compare(str(copy), str(copy), enable_communication_compare=True, base_step=50, comparison_step=51)
    f = res.sheet("CommunicationCompare")
    head = f.iloc[0]
    assert head["Communication OP Name"] == head["Communication OP Name.1"] == "allreduce"
    assert (head["Calls"], head["Calls.1"]) == (b_ops, c_ops)
    # durations are whole ns (docs/differences.md "NPU times are integer nanoseconds"): 0.5 ns per op at most
    assert head["Total Duration(us)"] == pytest.approx(float(b_total), abs=5e-4 * b_ops)
    assert head["Total Duration(us).1"] == pytest.approx(float(c_total), abs=5e-4 * c_ops)
    task_rows = f.iloc[1:]
    assert task_rows.loc[task_rows["Communication OP Name"] == "|", "Calls"].sum() == b_tasks
    assert task_rows.loc[task_rows["Communication OP Name.1"] == "|", "Calls.1"].sum() == c_tasks


def test_headers_and_spans():
    p = npu(ops=[("hcom_allReduce_1", 10, 5)])
    s = comm.build(RunContext(p, p, Options(enable_communication_compare=True)))[0]
    assert s.headers == ["Order Id", "Communication OP Name", "Task Name", "Calls", "Total Duration(us)",
                         "Avg Duration(us)", "Max Duration(us)", "Min Duration(us)", "Communication OP Name",
                         "Task Name", "Calls", "Total Duration(us)", "Avg Duration(us)", "Max Duration(us)",
                         "Min Duration(us)", "Diff Duration(us)", "Diff Ratio"]
    assert (s.base_span, s.comparison_span) == ((1, 7), (8, 14))


@pytest.mark.parametrize("step", [7])
def test_unknown_step(step):
    from msprof_compare.errors import StepError

    p = npu(ops=[("hcom_allReduce_1", 10, 5)], steps=[(5, 0, 50)])
    with pytest.raises(StepError, match="Invalid step id: 7, please choose from the valid steps: 5"):
        comm.build(RunContext(p, p, Options(base_step=step, comparison_step=step)))


REFERENCE_PAIRS = [
    ("1-npu-text-l1-vs-l2", "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
     "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt", 5),
    ("2-npu-text-l0-rank0-vs-rank1", "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
     "msinsight/test/data/pytorch/text/level0/rank1_ascend_pt", 1),
    ("9d-mindspore-legacy-msprof-timeline-files",
     "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/"
     "msprof_0_2_1.json",
     "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1/timeline/"
     "msprof_1_0_1.json", 5),
    ("7-gpu-hta-dfindex-vs-nsres", "hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
     "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 1),
]


@pytest.mark.parametrize("ref_dir,base,comp,rows", REFERENCE_PAIRS, ids=[p[0][:2] for p in REFERENCE_PAIRS])
def test_matches_reference(samples, reference_outputs, ref_dir, base, comp, rows):

    from msprof_compare.api import compare

    res = compare(str(samples / base), str(samples / comp), enable_communication_compare=True)
    ours = res.sheet("CommunicationCompare")
    ref = read_xlsx(reference_outputs / ref_dir / "performance_comparison_result.xlsx",
                        sheet_name="CommunicationCompare", header=2)
    # the original names every NCCL kernel's family "ncclkernel"; ours name the collective (docs/differences.md)
    ref = ref.replace({"Communication OP Name": {"ncclkernel": "allreduce"},
                       "Communication OP Name.1": {"ncclkernel": "allreduce"}})
    assert list(ours.columns) == list(ref.columns)
    assert len(ours) == len(ref) == rows
    for col in ref.columns:
        if ref[col].dtype.kind in "if":
            a, b = ours[col].astype(float), ref[col].astype(float)
            assert (((a - b).abs() <= 0.005 * b.abs()) | (a.isna() & b.isna())).all(), col
        else:
            assert ours[col].fillna("").astype(str).tolist() == ref[col].fillna("").astype(str).tolist(), col


def test_db_ops_are_grouped_by_op_type(tmp_path):
    """A DB names a communication op's family by its opType (reference-2 §4.1): renaming every opType of
    the level-1 excerpt moves its ops (and their tasks, by opId) to that family; an opType that does not
    split on "_" (the level-0 exports write N/A) drops the op."""
    import shutil
    import sqlite3
    from pathlib import Path

    from msprof_compare.api import compare

    src = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(src, db)
    con = sqlite3.connect(db)
    (n_ops,) = con.execute("SELECT count(*) FROM COMMUNICATION_OP").fetchone()
    (n_tasks,) = con.execute("SELECT count(*) FROM COMMUNICATION_TASK_INFO").fetchone()
    sid = con.execute("SELECT max(id) + 1 FROM STRING_IDS").fetchone()[0]
    con.execute("INSERT INTO STRING_IDS VALUES (?, 'hcom_broadcast_')", (sid,))
    con.execute("UPDATE COMMUNICATION_OP SET opType = ?", (sid,))
    con.commit()
    sheet = compare(str(db), str(db), enable_communication_compare=True).sheet("CommunicationCompare")
    ops = sheet[sheet["Communication OP Name"] != "|"]
    assert ops["Communication OP Name"].tolist() == ["broadcast"] and ops["Calls"].tolist() == [n_ops]
    assert sheet.loc[sheet["Communication OP Name"] == "|", "Calls"].sum() == n_tasks
    con.execute("UPDATE STRING_IDS SET value = 'N/A' WHERE id = ?", (sid,))
    con.commit()
    con.close()
    assert "CommunicationCompare" not in compare(str(db), str(db), enable_communication_compare=True).sheet_names


@pytest.mark.parametrize("change", ["UPDATE COMMUNICATION_OP SET opType = NULL",
                                    "ALTER TABLE COMMUNICATION_OP DROP COLUMN opType"])
def test_db_ops_without_an_op_type_are_said_to_have_none(tmp_path, caplog, change):
    """A NULL or absent COMMUNICATION_OP.opType leaves every op without a family, as N/A does: the line says
    they have no op type (it said "an op type of N/A", which these DBs do not hold)."""
    import shutil
    import sqlite3
    from pathlib import Path

    from msprof_compare.api import compare

    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db", db)
    con = sqlite3.connect(db)
    (n_ops,) = con.execute("SELECT count(*) FROM COMMUNICATION_OP").fetchone()
    con.execute(change)
    con.commit()
    con.close()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert "CommunicationCompare" not in compare(str(db), str(db), enable_communication_compare=True).sheet_names
    assert (f"its {n_ops} communication op(s) have no op type (COMMUNICATION_OP.opType is NULL or absent), so "
            "CommunicationCompare has no family to group them by") in caplog.text
    assert "N/A" not in caplog.text


def test_gpu_collectives_follow_the_run_keywords():
    """The keyword lists the run read once (``RunContext.keywords``) pick the GPU collectives, on a GPU side
    beside an NPU one too; the packaged lists would take no ``my_exchange_kernel``."""
    import dataclasses

    from msprof_compare.compare import classify

    kw = dataclasses.replace(classify.load_keywords(classify._DEFAULT_INI), gpu_comm=frozenset({"exchange"}))
    g = gpu("/x/b.json", kernels=[("void ns::my_exchange_kernel<float>(float*)", "kernel", 0, 4)])
    for base in (g, npu("/x/a")):
        sheets = comm.build(RunContext(base, g, Options(enable_communication_compare=True), keywords=kw))
        assert sheets[0].data.iloc[0, 8] == "my_exchange_kernel"


def test_gpu_memcpy_named_nccl_in_any_case():
    """The original takes kernels and memcpys whose lower-cased name starts with nccl (reference-2 §4.1): a memcpy
    named in capitals is a communication op too; one named by a GPU_COMM_MASK word is not (kernels only)."""
    p = gpu(kernels=[("NCCL_AllGather_copy", "gpu_memcpy", 0, 5), ("my_all_reduce_copy", "gpu_memcpy", 10, 7),
                     ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", 20, 3)])
    d = comm.side_data(p, None)
    assert {f: v["ops"].tolist() for f, v in d.items()} == {"allgather": [5000], "allreduce": [3000]}


def test_duplicated_gpu_kernel_event_counts_once():
    """The same NCCL kernel written twice (same pid, tid, ts) is one kernel, as in the original's kernel
    dict and in our OverallMetrics (the later event wins)."""
    p = gpu(kernels=[("ncclDevKernel_AllReduce", "kernel", 0, 40), ("ncclDevKernel_AllReduce", "kernel", 0, 40),
                     ("ncclDevKernel_AllReduce", "kernel", 100, 10)])
    p.kernels["pid"] = 1
    p.kernels["tid"] = 7
    assert comm.side_data(p, None)["allreduce"]["ops"].tolist() == [40000, 10000]


def test_db_tasks_belong_to_their_op_id_not_their_time(tmp_path):
    """A DB task names its op (COMMUNICATION_TASK_INFO.opId): it counts under that op even when its start
    lies outside every op's window, where the text exports' time walk would drop it. Level-1 excerpt, the
    first task moved 1 s before the first op."""
    import shutil
    import sqlite3
    from pathlib import Path

    from msprof_compare.api import compare

    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db", db)
    con = sqlite3.connect(db)
    (n_tasks,) = con.execute("SELECT count(*) FROM COMMUNICATION_TASK_INFO").fetchone()
    (first_op,) = con.execute("SELECT min(startNs) FROM COMMUNICATION_OP").fetchone()
    (gid,) = con.execute("SELECT t.globalTaskId FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
                         "ORDER BY t.startNs LIMIT 1").fetchone()
    con.execute("UPDATE TASK SET startNs = ?, endNs = ? WHERE globalTaskId = ?",
                (first_op - 10**9, first_op - 10**9 + 1000, gid))
    con.commit()
    con.close()
    sheet = compare(str(db), str(db), enable_communication_compare=True).sheet("CommunicationCompare")
    assert sheet.loc[sheet["Communication OP Name"] == "|", "Calls"].sum() == n_tasks == 296


def _cut_line(path, t_pre: int, t_post: int, side: str = "both sides") -> str:
    """The warning as a user reads it, for one op cut at each end of the step (the tests' edits), ending with the
    side it is about."""
    return (f"{path}: the step's bounds cut communication ops from their tasks: {t_pre} task(s) inside the step of 1 "
            f"communication op(s) that start before it are left out, as those ops are; {t_post} task(s) after the "
            "step's end of 1 op(s) that start in it are left out, while those ops' rows count their whole time "
            "(CommunicationCompare counts an op and each task in the step its start lies in, as the original) "
            f"({side})")


def test_db_step_bounds_that_cut_ops_from_their_tasks_are_said(tmp_path, caplog):
    """A step starting 1 us into the first op and ending 1 us into the last one (level-1 DB excerpt, 4 ops, 296
    tasks): the first op and its tasks inside the step are left out (the original pairs a task with its op by
    opId, and the op starts before the step), the last op counts whole but its tasks after the step's end do not.
    Both cuts went without a word; the expected counts are SQL on the unedited excerpt. The first op's tasks were
    placed by time before, under no op; now they are out by their opId, whatever their time."""
    from dbutil import edited_copy, sql

    from msprof_compare.api import compare

    src = DATA_DB_L1
    ops = sql(src, "SELECT opId, startNs, endNs FROM COMMUNICATION_OP ORDER BY startNs")
    assert len(ops) == 4
    lo, hi = ops[0][1] + 1000, ops[3][1] + 1000

    def tasks(where: str, params: tuple) -> int:
        return sql(src, "SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
                   f"WHERE {where}", params)[0][0]

    t_pre = tasks("c.opId = ? AND t.startNs BETWEEN ? AND ?", (ops[0][0], lo, hi))
    t_post = tasks("c.opId = ? AND t.startNs > ?", (ops[3][0], hi))
    kept = tasks("c.opId IN (?, ?, ?) AND t.startNs BETWEEN ? AND ?", (ops[1][0], ops[2][0], ops[3][0], lo, hi))
    assert t_pre == 73 and t_post > 0 and kept + t_pre + t_post < 296
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE STEP_TIME SET startNs = {lo}, endNs = {hi}")
    with caplog.at_level(logging.WARNING):
        res = compare(str(db), str(db), enable_communication_compare=True, base_step=50, comparison_step=50)
    sheet = res.sheet("CommunicationCompare")
    assert sheet.iloc[0]["Calls"] == 3
    total_us = sum(e - s for _, s, e in ops[1:]) / 1000
    assert sheet.iloc[0]["Total Duration(us)"] == pytest.approx(total_us, abs=1e-6)
    assert sheet.loc[sheet["Communication OP Name"] == "|", "Calls"].sum() == kept
    said = [r.getMessage() for r in caplog.records if "bounds cut" in r.getMessage()]
    assert set(said) == {_cut_line(db, t_pre, t_post)}
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # the excerpt's own step holds its ops whole: nothing to say
        compare(str(src), str(src), enable_communication_compare=True, base_step=50, comparison_step=50)
    assert not [r for r in caplog.records if "bounds cut" in r.getMessage()]


def test_db_step_ending_at_a_task_start_holds_that_task(tmp_path, caplog):
    """A task starting at the step's last ns is in the step (its bounds are inclusive, as every step read): the
    level-1 DB excerpt's step moved to start 1 us into the first op and end at the start of the last op's 2nd task.
    The tasks after the step's end are those starting later (SQL on the unedited excerpt), that task not among
    them."""
    from dbutil import edited_copy, sql

    from msprof_compare.api import compare

    src = DATA_DB_L1
    ops = sql(src, "SELECT opId, startNs FROM COMMUNICATION_OP ORDER BY startNs")
    starts = [t for (t,) in sql(src, "SELECT t.startNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING "
                                     "(globalTaskId) WHERE c.opId = ? ORDER BY t.startNs", (ops[3][0],))]
    lo, hi = ops[0][1] + 1000, starts[1]
    assert starts[0] < hi < starts[2]

    def tasks(where: str, params: tuple) -> int:
        return sql(src, "SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
                   f"WHERE {where}", params)[0][0]

    t_pre = tasks("c.opId = ? AND t.startNs BETWEEN ? AND ?", (ops[0][0], lo, hi))
    t_post = tasks("c.opId = ? AND t.startNs > ?", (ops[3][0], hi))
    assert t_post == len(starts) - 2
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE STEP_TIME SET startNs = {lo}, endNs = {hi}")
    # the edited copy on both sides, as the base beside the unedited excerpt (which cuts nothing), as the comparison
    for pair, side in (((db, db), "both sides"), ((db, src), "base side"), ((src, db), "comparison side")):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            compare(*map(str, pair), enable_communication_compare=True, base_step=50, comparison_step=50)
        said = [r.getMessage() for r in caplog.records if "bounds cut" in r.getMessage()]
        assert said == [_cut_line(db, t_pre, t_post, side)]


def test_text_step_bounds_that_cut_ops_from_their_tasks_are_said(samples, tmp_path, caplog):
    """The text export's counterpart: level-1 rank0 with ProfilerStep#50 moved to start 1 us into its first
    hcom_allReduce op and end 1 us into its last. The 4 ops run one after the other, so a task is the op's whose
    [start, end] holds its start (raw JSON, Decimal); the text and DB exports of one run cut the same 73 tasks at
    the start."""
    import json
    import shutil

    from msprof_compare.api import compare

    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", copy)
    tv = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = json.loads(tv.read_text(encoding="utf-8"))
    ops, tasks = _hccl_spans(raw)
    lo, hi = ops[0][0] + 1, ops[3][0] + 1
    step = next(e for e in raw if e.get("name") == "ProfilerStep#50")
    step["ts"], step["dur"] = str(lo), float(hi - lo)
    tv.write_text(json.dumps(raw), encoding="utf-8")
    t_pre = sum(1 for t, _ in tasks if lo <= t <= ops[0][1])
    t_post = sum(1 for t, _ in tasks if hi < t <= ops[3][1])
    kept = sum(1 for t, _ in tasks if lo <= t <= hi and any(a <= t <= b for a, b in ops[1:]))
    assert t_pre == 73 and t_post > 0
    with caplog.at_level(logging.WARNING):
        res = compare(str(copy), str(copy), enable_communication_compare=True, base_step=50, comparison_step=50)
    sheet = res.sheet("CommunicationCompare")
    assert sheet.iloc[0]["Calls"] == 3
    assert sheet.loc[sheet["Communication OP Name"] == "|", "Calls"].sum() == kept
    said = [r.getMessage() for r in caplog.records if "bounds cut" in r.getMessage()]
    assert set(said) == {_cut_line(copy, t_pre, t_post)}


def test_db_step_task_of_an_op_before_the_step_goes_under_no_op_by_its_time(tmp_path, caplog):
    """A DB task inside the step whose op (by opId) starts before it is left out, as the original's pairing by
    opId leaves it, wherever its time lies: it was placed by time as one of a NULL opId, so a task of op 1 moved
    into op 2's window counted under op 2. Level-1 DB excerpt, step start 1 us into op 1; counts by SQL."""
    from dbutil import edited_copy, sql

    from msprof_compare.api import compare

    src = DATA_DB_L1
    ops = sql(src, "SELECT opId, startNs FROM COMMUNICATION_OP ORDER BY startNs")
    lo = ops[0][1] + 1000
    (gid,) = sql(src, "SELECT t.globalTaskId FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
                 "WHERE c.opId = ? AND t.startNs > ? ORDER BY t.startNs LIMIT 1", (ops[0][0], lo))[0]
    at = ops[1][1] + 10
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db", f"UPDATE STEP_TIME SET startNs = {lo}",
                     f"UPDATE TASK SET startNs = {at}, endNs = {at + 10} WHERE globalTaskId = {gid}")
    kept = sql(db, "SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
               "WHERE c.opId <> ? AND t.startNs >= ?", (ops[0][0], lo))[0][0]
    pre = sql(db, "SELECT count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
              "WHERE c.opId = ? AND t.startNs >= ?", (ops[0][0], lo))[0][0]
    assert (kept, pre) == (222, 73)
    with caplog.at_level(logging.WARNING):
        sheet = compare(str(db), str(db), enable_communication_compare=True, base_step=50,
                        comparison_step=50).sheet("CommunicationCompare")
    assert sheet.loc[sheet["Communication OP Name"] == "|", "Calls"].sum() == kept  # 223 before: op 2 took it
    assert any(f"{pre} task(s) inside the step of 1 communication op(s)" in r.getMessage() for r in caplog.records)


def _hccl_spans(raw: list[dict]) -> tuple[list, list]:
    """The (start, end) spans in exact us of the level-1 text sample's HCCL lane: its communication ops (4, one
    apart from the next) and its tasks, read from the raw trace_view.json."""
    from decimal import Decimal

    hccl = next(e["pid"] for e in raw if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "HCCL")
    lanes = {e["tid"]: e["args"]["name"] for e in raw if e.get("ph") == "M" and e.get("pid") == hccl
             and e.get("name") == "thread_name"}
    ops, tasks = [], []
    for e in raw:
        if e.get("ph") == "X" and e.get("pid") == hccl:
            ts = Decimal(e["ts"])
            (ops if "Communication" in lanes[e["tid"]] else tasks).append((ts, ts + Decimal(str(e["dur"]))))
    ops.sort()
    assert len(ops) == 4 and all(ops[i][1] < ops[i + 1][0] for i in range(3))
    return ops, tasks
