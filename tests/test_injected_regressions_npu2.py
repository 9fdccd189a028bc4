"""Known regressions planted in copies of the msinsight level-1 exports of one AlexNet step (NPU, mostly the DB; the
originals are never written), checked on every face that reports them: the sheets, the Summary's contributors, the
memory line, the console's Mem Usage cell and the JSON summary.

* an operator allocating 10 MB more (OP_MEMORY) and the peak reserved memory 512 MB higher (MEMORY_RECORD); a
  CANN node's workspace larger, placed at its launching op through the task queue;
* a compute task moved to another op (its TASK.connectionId set to one of that op's launches): between two
  top-level ops (OperatorCompare), and between two modules under one top-level op (ModuleCompare); in the text
  export the same by its async_npu flow's start;
* the export cut in two steps, a host API longer and an allocation larger in the first: only that step moves.

Expected figures come from SQL on the DB (sizes, task durations, spans) or trace_view.json, never from the tool.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

from dbutil import edited_copy, sql  # tests/ is on sys.path (rootdir import mode)
from test_injected_regressions import NPU_DB, NPU_TEXT, _changed, _db_steps_split, _objects

from msprof_compare.api import compare
from msprof_compare.report.summary_console import memory_line

_DB = "ascend_pytorch_profiler_0.db"
_MB = 1 << 20
_OP = "SELECT CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON " \
      "s.id = p.name WHERE s.value = ?"


def _src(samples: Path) -> Path:
    return samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / _DB


def _variant(samples: Path, where: Path, *edits: str) -> Path:
    """An export folder at ``where`` holding the DB with ``edits`` applied."""
    out = where / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    edited_copy(_src(samples), out / _DB, *edits)
    return out.parent


def _moved_sheets(res, same) -> set[str]:
    return {n for n in res.sheet_names if n != "Summary" and not res.sheet(n).equals(same.sheet(n))}


# --------------------------------------------------------------------------- an allocation larger, the peak higher

def test_db_operator_memory_larger_and_peak_higher_on_every_face(samples, tmp_path):
    """The first aten::max_pool2d_with_indices row of OP_MEMORY 10 MB larger and the rows of MEMORY_RECORD at the
    peak totalReserved 512 MB higher. The allocation lies inside DistributedDataParallel.forward, whose
    allocations (OP_MEMORY rows allocated within its PYTORCH_API span) sum to 369514 KB: MemoryCompare 369514 ->
    379754 KB, MemoryCompareStatistic 360.85 -> 370.85 MB (+10 MB), its allocated duration unchanged, no other
    row; the memory line +10.00 MB and the peak 1.49 GB -> 1.99 GB, as the console's Mem Usage cells and the
    JSON's summary.memory; the memory contributor is the forward. No time figure moves. Swapped, the signs."""
    src = _src(samples)
    ((alloc,),) = sql(src, "SELECT m.allocationTime FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name WHERE "
                           "s.value = 'aten::max_pool2d_with_indices' ORDER BY m.allocationTime LIMIT 1")
    ((peak, at_peak),) = sql(src, "SELECT max(totalReserved), (SELECT count(*) FROM MEMORY_RECORD WHERE "
                                  "totalReserved = (SELECT max(totalReserved) FROM MEMORY_RECORD)) FROM MEMORY_RECORD")
    assert at_peak == 482
    ((lo, hi),) = sql(src, _OP, ("DistributedDataParallel.forward",))
    assert lo < alloc < hi
    ((fwd_bytes,),) = sql(src, "SELECT sum(size) FROM OP_MEMORY WHERE allocationTime BETWEEN ? AND ?", (lo, hi))
    assert fwd_bytes / 1024 == 369514
    big = _variant(samples, tmp_path / "big", f"UPDATE OP_MEMORY SET size = size + {10 * _MB} WHERE allocationTime = "
                                              f"{alloc}",
                   f"UPDATE MEMORY_RECORD SET totalReserved = totalReserved + {512 * _MB} WHERE totalReserved = {peak}")
    base = samples / NPU_DB
    same = compare(str(base), str(base))
    gb0, gb1 = peak / 2**30, (peak + 512 * _MB) / 2**30
    assert (f"{gb0:.2f}", f"{gb1:.2f}") == ("1.49", "1.99")
    for sign, (a, b) in ((1, (base, big)), (-1, (big, base))):
        res = compare(str(a), str(b))
        assert _moved_sheets(res, same) == {"MemoryCompare", "MemoryCompareStatistic"}
        kb = (fwd_bytes / 1024, fwd_bytes / 1024 + 10240)[::sign]
        mem = res.sheet("MemoryCompare")
        assert _changed(mem, "Operator Name", ("Size(KB)", "Size(KB).1")) == {
            "DistributedDataParallel.forward": sign * 10240.0}
        (row,) = mem[mem["Size(KB)"] != mem["Size(KB).1"]].itertuples(index=False)
        assert (row[5], row[10]) == kb
        stat = res.sheet("MemoryCompareStatistic")
        assert _changed(stat, "Operator Name", ("Base Allocated Memory(MB)", "Comparison Allocated Memory(MB)")) == {
            "DistributedDataParallel.forward": sign * 10.0}
        assert not _changed(stat, "Operator Name", ("Base Allocated Duration(ms)", "Comparison Allocated Duration(ms)"))
        assert res.memory_contributors[["Name", "Diff(MB)"]].values.tolist() == [
            ["DistributedDataParallel.forward", sign * 10.0]]
        peaks = (gb0, gb1)[::sign]
        t = res.memory_totals
        assert (t["diff_mb"], t["changed"], t["base_peak_gb"], t["comparison_peak_gb"]) == (sign * 10.0, 1, *peaks)
        line = memory_line(res.frames["memory"])
        assert (f"({'+' if sign > 0 else '-'}10.00 MB)." in line and
                f"Peak reserved memory (Mem Usage) {peaks[0]:.2f} GB -> {peaks[1]:.2f} GB "
                f"({'+' if sign > 0 else '-'}0.50 GB," in line)
        table = res.console_table().splitlines()
        col = table[3].split("|").index(" Mem Usage ")
        assert [ln.split("|")[col].strip() for ln in table[5:7]] == [f"{peaks[0]:.2f}G", f"{peaks[1]:.2f}G"]
        doc = json.loads(Path(res.to_json(tmp_path / f"out{sign}.json")).read_text())
        assert doc["summary"]["memory"]["diff_mb"] == sign * 10.0
        assert [c["Name"] for c in doc["summary"]["memory_contributors"]] == ["DistributedDataParallel.forward"]
        assert not res.contributors.size and res.waterfall["Delta(ns)"].fillna(0).eq(0).all()


# --------------------------------------------------------------------------- a compute task moved to another op

def _op_tasks(src: Path, name: str) -> dict[int, int]:
    """The compute tasks of the first op ``name``: globalTaskId -> duration ns, those whose TASK.connectionId is a
    CANN connection id (CONNECTION_IDS) of a PYTORCH_API row inside the op's span."""
    return dict(sql(src, "WITH o AS (" + _OP + " ORDER BY 1 LIMIT 1) SELECT t.globalTaskId, t.endNs - t.startNs "
                    "FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) WHERE t.connectionId IN (SELECT "
                    "i.connectionId FROM PYTORCH_API p JOIN CONNECTION_IDS i ON i.id = p.connectionId, o WHERE "
                    "CAST(p.startNs AS INTEGER) BETWEEN o.\"CAST(p.startNs AS INTEGER)\" AND "
                    "o.\"CAST(p.endNs AS INTEGER)\")", (name,)))


def _task(src: Path, kernel: str) -> tuple[int, int, int]:
    """The first compute task named ``kernel``: globalTaskId, connectionId, duration ns."""
    ((tid, cid, ns),) = sql(src, "SELECT t.globalTaskId, t.connectionId, t.endNs - t.startNs FROM TASK t JOIN "
                                 "COMPUTE_TASK_INFO c USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.name "
                                 "WHERE s.value = ? ORDER BY t.startNs LIMIT 1", (kernel,))
    return tid, cid, ns


def test_db_task_moved_to_another_op_moves_its_time_between_operator_rows_only(samples, tmp_path):
    """aten::topk's Cast task (1.44 us) given the connection id of aten::eq's first task: OperatorCompare and its
    statistic aten::topk 12.50 -> 11.06 us, aten::eq 26.16 -> 27.60 us (the tasks' durations by SQL), the Cast named
    in eq's Kernel Details and no longer in topk's; the contributors are the two ops, +-0.00144 ms; every other
    sheet (kernels, time breakdown, modules, memory) and the E2E as they were."""
    src = _src(samples)
    topk, eq = _op_tasks(src, "aten::topk"), _op_tasks(src, "aten::eq")
    cast, _, ns = _task(src, "aclnnTopk_CastAiCore_Cast")
    _, eq_cid, _ = _task(src, "aclnnEqTensor_TransposeAiCore_Transpose")
    assert (sum(topk.values()), sum(eq.values()), ns) == (12_500, 26_160, 1_440) and cast in topk
    moved = _variant(samples, tmp_path / "moved",
                     f"UPDATE TASK SET connectionId = {eq_cid} WHERE globalTaskId = {cast}")
    base = samples / NPU_DB
    for opts in ({}, {"enable_operator_compare": True, "disable_module": True}):
        res, same = compare(str(base), str(moved), **opts), compare(str(base), str(base), **opts)
        assert _moved_sheets(res, same) == ({"OperatorCompare", "OperatorCompareStatistic"} if opts else set())
        assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [
            ["aten::topk", -ns / 1e6], ["aten::eq", ns / 1e6]]
        assert res.verdict == same.verdict
    stat = res.sheet("OperatorCompareStatistic")
    assert _changed(stat, "Operator Name", ("Base Device Duration(ms)", "Comparison Device Duration(ms)")) == {
        "aten::topk": -ns / 1e6, "aten::eq": ns / 1e6}
    ops = res.sheet("OperatorCompare").set_index("Operator Name")
    assert ops.loc["aten::topk", ["Device Duration(us)", "Device Duration(us).1"]].tolist() == [12.5, 11.06]
    assert ops.loc["aten::eq", ["Device Duration(us)", "Device Duration(us).1"]].tolist() == [26.16, 27.6]
    assert "Cast" in ops.loc["aten::topk", "Kernel Details"] and "Cast" not in ops.loc["aten::topk", "Kernel Details.1"]
    assert "Cast" not in ops.loc["aten::eq", "Kernel Details"] and "Cast" in ops.loc["aten::eq", "Kernel Details.1"]
    doc = json.loads(Path(res.to_json(tmp_path / "out.json")).read_text())
    assert [(c["Name"], c["Diff(ms)"]) for c in doc["summary"]["contributors"]] == [
        ("aten::topk", -ns / 1e6), ("aten::eq", ns / 1e6)]


def test_db_task_moved_between_modules_moves_their_rows_not_their_parents(samples, tmp_path):
    """The first aclnnInplaceRelu task (ReLU_0, 15.74 us) given the connection id of the first
    aclnnMaxPool2dWithMask task (MaxPool2d_0, the module after it): ModuleCompareStatistic's totals ReLU_0
    -15.74 us, MaxPool2d_0 +15.74 us (their diff cells -0.02 / +0.02 ms, rounded), their parents (Sequential_0,
    AlexNet_0, ...) unchanged; no other sheet moves and the top-level forward, unchanged, is no contributor."""
    src = _src(samples)
    relu, _, ns = _task(src, "aclnnInplaceRelu_Relu_Relu")
    _, pool_cid, _ = _task(src, "aclnnMaxPool2dWithMask_TransDataSpecial_TransData")
    assert ns == 15_740
    moved = _variant(samples, tmp_path / "moved", f"UPDATE TASK SET connectionId = {pool_cid} WHERE globalTaskId = "
                                                  f"{relu}")
    base = samples / NPU_DB
    res, same = compare(str(base), str(moved)), compare(str(base), str(base))
    assert _moved_sheets(res, same) == {"ModuleCompare", "ModuleCompareStatistic"}
    mods = res.sheet("ModuleCompareStatistic")
    totals = mods[mods["Operator Name"] == "[ TOTAL ]"]
    grown = _changed(totals, "Module Name", ("Device Total Time(ms)", "Device Total Time(ms).1"))
    assert {m.split("/")[-1].strip(): d for m, d in grown.items()} == {"ReLU_0": -ns / 1e6, "MaxPool2d_0": ns / 1e6}
    # the sheet's diff column is rounded to 0.01 ms (reference-2 "diff = round(c - b, 2)")
    assert sorted(totals["Device Total Time Diff(ms)"].fillna(0).unique().tolist()) == [-0.02, 0.0, 0.02]
    assert not res.contributors.size


# --------------------------------------------------------------------------- one step of two

def test_db_host_api_and_allocation_in_one_step_move_that_step_only(samples, tmp_path):
    """The DB cut in two steps where Optimizer.zero_grad starts; in step 50 the first aclnnInplaceRelu (PYTORCH_API)
    15 us longer into idle host time and the first aten::max_pool2d_with_indices allocation 10 MB larger (released
    in step 51). At step 50: ApiCompare aclnnInplaceRelu total 1.12 -> 1.14 ms and aten::relu_'s self 1.43 -> 1.41
    ms (SQL over the step's rows), MemoryCompare forward +10240 KB, the memory line +10.00 MB; no device figure
    moves. At step 51 every sheet equals the untouched pair's: the block alive into step 51 is no op's there."""
    src = _src(samples)
    ((cut,),) = sql(src, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    name = "SELECT id FROM STRING_IDS WHERE value = '{}'"
    ((start, end),) = sql(src, f"SELECT startNs, CAST(endNs AS INTEGER) FROM PYTORCH_API WHERE name IN "
                               f"({name.format('aclnnInplaceRelu')}) ORDER BY CAST(startNs AS INTEGER) LIMIT 1")
    ((alloc, release),) = sql(src, "SELECT m.allocationTime, m.releaseTime FROM OP_MEMORY m JOIN STRING_IDS s ON "
                                   "s.id = m.name WHERE s.value = 'aten::max_pool2d_with_indices' ORDER BY "
                                   "m.allocationTime LIMIT 1")
    ns = 15_000
    assert end < cut and alloc < cut < release
    assert sql(src, "SELECT COUNT(*) FROM PYTORCH_API WHERE CAST(startNs AS INTEGER) BETWEEN ? AND ?",
               (end + 1, end + ns)) == [(0,)]
    sides = {}
    for side, edits in (("base", ()), ("slow", (
            f"UPDATE PYTORCH_API SET endNs = CAST({end + ns} AS TEXT) WHERE startNs = '{start}'",
            f"UPDATE OP_MEMORY SET size = size + {10 * _MB} WHERE allocationTime = {alloc}"))):
        folder = _variant(samples, tmp_path / side, *edits)
        _db_steps_split(folder / "ASCEND_PROFILER_OUTPUT" / _DB, cut)
        sides[side] = str(folder)
    totals = ("SELECT SUM(CAST(endNs AS INTEGER) - CAST(startNs AS INTEGER)) FROM PYTORCH_API WHERE name IN ({}) "
              "AND CAST(startNs AS INTEGER) < ?")
    ((relu,),) = sql(src, totals.format(name.format("aclnnInplaceRelu")), (cut,))
    ((outer,),) = sql(src, totals.format(name.format("aten::relu_")), (cut,))
    opts = {"enable_api_compare": True, "enable_memory_compare": True, "enable_profiling_compare": True,
            "enable_kernel_compare": True}
    res = compare(sides["base"], sides["slow"], base_step=50, comparison_step=50, **opts)
    same = compare(sides["base"], sides["base"], base_step=50, comparison_step=50, **opts)
    assert _moved_sheets(res, same) == {"ApiCompare", "MemoryCompare", "MemoryCompareStatistic"}
    api = {r[1]: r[2:10] for r in res.sheet("ApiCompare").itertuples(index=False)}
    assert (api["aclnnInplaceRelu"][0], api["aclnnInplaceRelu"][4]) == (round(relu / 1e6, 2),
                                                                        round((relu + ns) / 1e6, 2)) == (1.12, 1.14)
    own = outer - relu  # each aten::relu_ holds one aclnnInplaceRelu and nothing else
    assert (api["aten::relu_"][1], api["aten::relu_"][5]) == (round(own / 1e6, 2), round((own - ns) / 1e6, 2))
    assert _changed(res.sheet("MemoryCompare"), "Operator Name", ("Size(KB)", "Size(KB).1")) == {
        "DistributedDataParallel.forward": 10240.0}
    assert res.memory_totals["diff_mb"] == 10.0 and memory_line(res.frames["memory"]).endswith(" (+10.00 MB).")
    assert not res.contributors.size
    other = compare(sides["base"], sides["slow"], base_step=51, comparison_step=51, **opts)
    alone = compare(sides["base"], sides["base"], base_step=51, comparison_step=51, **opts)
    assert not _moved_sheets(other, alone) and other.memory_totals == alone.memory_totals


def test_text_kernel_launched_by_another_op_moves_its_time_between_operator_rows_only(samples, tmp_path):
    """The text export alike: the async_npu flow of aten::topk's Cast kernel made to start at aclnnEqTensor's ts
    (a flow starts at its launching op's ts, reference-2 "Linking"): aten::topk -1.3800625 us, aten::eq
    +1.3800625 us (the kernel's trace_view.json duration), the contributors those two; no other sheet moves."""
    src = samples / NPU_TEXT
    moved = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, moved)
    tv = moved / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = tv.read_text()
    objs = [o for _, _, o in _objects(text)]
    (cast,) = [o for o in objs if o.get("ph") == "X" and o.get("name") == "aclnnTopk_CastAiCore_Cast"]
    (eq,) = [o for o in objs if o.get("ph") == "X" and o.get("name") == "aclnnEqTensor"]
    (end,) = [o for o in objs if o.get("cat") == "async_npu" and o.get("ph") == "f" and o["ts"] == cast["ts"]]
    ((s, e, start),) = [(s, e, o) for s, e, o in _objects(text) if o.get("cat") == "async_npu"
                        and o.get("ph") == "s" and o["id"] == end["id"]]
    seg = text[s:e].replace(f'"ts": "{start["ts"]}"', f'"ts": "{eq["ts"]}"')
    assert seg != text[s:e]
    tv.write_text(text[:s] + seg + text[e:])
    ms = round(float(Decimal(str(cast["dur"])) / 1000), 6)
    assert ms == 0.00138
    for opts in ({}, {"enable_operator_compare": True, "disable_module": True}):
        res, same = compare(str(src), str(moved), **opts), compare(str(src), str(src), **opts)
        assert _moved_sheets(res, same) == ({"OperatorCompare", "OperatorCompareStatistic"} if opts else set())
        assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["aten::topk", -ms], ["aten::eq", ms]]
    cols = ("Base Device Duration(ms)", "Comparison Device Duration(ms)")
    assert _changed(res.sheet("OperatorCompareStatistic"), "Operator Name", cols) == {"aten::topk": -ms, "aten::eq": ms}


def test_db_cann_node_allocation_larger_is_its_launching_ops(samples, tmp_path):
    """A CANN node's workspace (OP_MEMORY trans_TransData_18: a name no torch op has) 10 MB larger. It was
    allocated while aten::item ran, by the task queue's Dequeue@Conv2DBackpropInput whose Enqueue (the same CANN
    connection id, CONNECTION_IDS) lies in the 4th ConvolutionBackward0: that instance's MemoryCompare row +10240 KB
    and its statistic +10 MB; aten::item and every other row as they were."""
    src = _src(samples)
    conv = "autograd::engine::evaluate_function: ConvolutionBackward0"
    ((alloc,),) = sql(src, "SELECT m.allocationTime FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name WHERE "
                           "s.value = 'trans_TransData_18'")
    assert not sql(src, "SELECT 1 FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name WHERE s.value = "
                        "'trans_TransData_18'")
    q = ("SELECT CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), i.connectionId FROM PYTORCH_API p JOIN "
         "STRING_IDS s ON s.id = p.name JOIN CONNECTION_IDS i ON i.id = p.connectionId WHERE s.value {}")
    ((cid,),) = [(c,) for b, e, c in sql(src, q.format("LIKE 'Dequeue@%'")) if b <= alloc <= e]
    ((enq,),) = [(b,) for b, _, c in sql(src, q.format("= 'Enqueue'")) if c == cid]
    spans = [(b, e) for b, e in sql(src, _OP + " ORDER BY 1", (conv,))]
    assert [i for i, (b, e) in enumerate(spans) if b <= enq <= e] == [3]
    ((item_b, item_e),) = [s for s in sql(src, _OP, ("aten::item",)) if s[0] <= alloc <= s[1]]
    assert not item_b <= enq <= item_e
    big = _variant(samples, tmp_path / "big", f"UPDATE OP_MEMORY SET size = size + {10 * _MB} WHERE allocationTime = "
                                              f"{alloc}")
    base = samples / NPU_DB
    res, same = compare(str(base), str(big)), compare(str(base), str(base))
    assert _moved_sheets(res, same) == {"MemoryCompare", "MemoryCompareStatistic"}
    mem = res.sheet("MemoryCompare")
    rows = mem[mem["Operator Name"] == conv]
    grown = (rows["Size(KB).1"] - rows["Size(KB)"]).tolist()
    assert grown == [0.0, 0.0, 0.0, 10240.0, 0.0] and len(spans) == 5
    assert res.memory_contributors[["Name", "Diff(MB)"]].values.tolist() == [[conv, 10.0]]
