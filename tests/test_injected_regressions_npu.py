"""Changes that move NPU computing time between the categories of the time breakdown (reference-1 §3.7, §5.3,
§7.3), planted in copies of the msinsight level-1 exports of one AlexNet step (the originals are never written):

* a MatMulV2 kernel (under aten::addmm) 30 us longer into idle time, then the same kernel run on the vector cores
  (Accelerator Core / Task Type AI_VECTOR_CORE with the PMU figures such a kernel has): Matmul (Cube) -> Matmul
  (Vector), the console's Cube Time unchanged (it adds Matmul (Vector), §8.4); the DB export the same;
* a vector kernel of aten::mul_ given the op type FlashAttentionScoreGrad (the Type fallback: Flash Attention
  (Backward) (Cube) whatever the PMU says), and with its op renamed npu::npu_fusion_attention (the covering op
  decides: Flash Attention (Forward) (Vector) by its PMU figures);
* a Relu kernel renamed into the MC2 (AllGatherMatmul), Paged Attention and Lccl (kernel_aivec) families, and in
  the DB export into MC2;
* the first aten::conv2d moved to autograd's thread (as activation-checkpoint recomputation runs it): Conv
  (Backward) in the text export, Conv (Forward) still in the DB export, which decides by the op's name alone.

Expected figures are the raw CSV's durations; every other OverallMetrics figure must stay as it was.
"""

from __future__ import annotations

import csv
import shutil
from decimal import Decimal
from pathlib import Path

from dbutil import edited_copy, sql  # tests/ is on sys.path (rootdir import mode)
from test_injected_regressions import NPU_DB, NPU_TEXT, _edit_csv, _objects, _rows, _text_kernel_lengthened

from msprof_compare.api import compare
from msprof_compare.compare.summary_notes import unexplained_note

_MATMUL = "1736408883716197.363"  # aclnnAddmm_MatMulCommon_MatMulV2 under aten::addmm, idle time after it
_MUL = "1736408883725328.766"  # aclnnInplaceMuls_MulAiCore_Mul under aten::mul_ (no cube op around it)
_MUL_OP = ("aten::mul_", "1736408883725025.310")
_RELU = "1736408883705425.768"  # aclnnInplaceRelu_Relu_Relu under aten::relu_


def _kernel(export: Path, start: str) -> dict[str, str]:
    with open(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        return next(r for r in csv.DictReader(fh) if r["Start Time(us)"].strip() == start)


def _retagged(src: Path, dst: Path, start: str, op: tuple[str, str, str] | None = None, **cells: str) -> Path:
    """A copy of the text export with kernel_details.csv cells of the kernel at ``start`` set (its trace_view.json
    event's name follows Name; its Task Type stays: these exports write AI_CORE there for the AI_VECTOR_CORE
    kernels too) and, with ``op`` (name, ts, new name), that cpu op renamed; nothing else edited."""
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"

    def edit(head: list[str], row: list[str]) -> bool:
        if row[head.index("Start Time(us)")].strip() != start:
            return False
        for col, value in cells.items():
            row[head.index(col)] = value
        return True

    assert _edit_csv(out / "kernel_details.csv", edit) == 1
    text = (out / "trace_view.json").read_text()
    edits = []
    for s, e, o in _objects(text):
        if o.get("ph") == "X" and str(o.get("ts")) == start and "Task Type" in o.get("args", {}):
            seg = text[s:e]
            if "Name" in cells:
                seg = seg.replace(f'"name": "{o["name"]}"', f'"name": "{cells["Name"]}"', 1)
            edits.append((s, e, seg))
        elif op and o.get("cat") == "cpu_op" and o.get("name") == op[0] and str(o.get("ts")) == op[1]:
            edits.append((s, e, text[s:e].replace(f'"name": "{op[0]}"', f'"name": "{op[2]}"', 1)))
    assert len(edits) == (2 if op else 1)
    parts, last = [], 0
    for s, e, new in sorted(edits):
        parts += [text[last:s], new]
        last = e
    (out / "trace_view.json").write_text("".join(parts + [text[last:]]))
    return dst


def _moved(res) -> dict[str, tuple[float, object]]:
    """OverallMetrics rows whose duration or number changed: name -> (comparison - base ms, number change)."""
    out = {}
    for k, r in _rows(res.sheet("OverallMetrics")).items():
        d = round(r[4] - r[1], 6)
        n = r[6] - r[3] if r[3] != "/" and r[6] != "/" else None
        if d or n:
            out[k] = (d, n)
    return out


def _steps(res) -> dict[str, int]:
    wf = res.waterfall
    return {s: int(d) for s, d in zip(wf["Step"], wf["Delta(ns)"], strict=True)
            if s not in ("Base E2E", "Comparison E2E") and d}


def test_matmul_kernel_longer_then_on_the_vector_cores(samples, tmp_path):
    """+30 us into idle time: Computing, Matmul and Matmul (Cube) +0.03 ms, Free -0.03 ms, its operator's module
    (DistributedDataParallel.forward) the contributor. Run on the vector cores instead (Accelerator Core
    AI_VECTOR_CORE, which the breakdown does not read (reference-1 §5.3), aicore_time
    and aic_mac_time 0, aiv_time its duration): its 346.567 us and its count leave Matmul (Cube) for Matmul
    (Vector), Matmul and Computing unchanged, so no waterfall step moves; the console's Cube Time(Num) adds Matmul
    (Vector) (reference-1 §8.4) and keeps reading 0.001s(14)."""
    src = samples / NPU_TEXT
    row = _kernel(src, _MATMUL)
    assert (row["Type"], row["Accelerator Core"]) == ("MatMulV2", "AI_CORE") and float(row["aicore_time(us)"]) > 0
    longer = tmp_path / "longer"
    shutil.copytree(src, longer)
    _text_kernel_lengthened(longer, _MATMUL, Decimal(30))
    res = compare(str(src), str(longer))
    assert _moved(res) == {"Computing Time": (0.03, 0), "Matmul": (0.03, 0), "Matmul (Cube)": (0.03, 0),
                           "Free Time": (-0.03, None), "Free": (-0.03, None)}
    assert _steps(res) == {"Matmul": 30_000, "Free: Other": -30_000}
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.03]]

    ms = float(row["Duration(us)"]) / 1000
    vec = _retagged(src, tmp_path / "vector", _MATMUL, **{
        "Accelerator Core": "AI_VECTOR_CORE", "aicore_time(us)": "0", "aic_mac_time(us)": "0",
        "aiv_time(us)": row["Duration(us)"], "aiv_vec_time(us)": "10.0"})
    res = compare(str(src), str(vec))
    assert _moved(res) == {"Matmul (Cube)": (round(-ms, 6), -1), "Matmul (Vector)": (round(ms, 6), 1)}
    assert not _steps(res) and not len(res.contributors)
    base_row, comp_row = res.console_table().splitlines()[5:7]
    assert base_row.split("|")[2].strip() == comp_row.split("|")[2].strip() == "0.001s(14)"


def test_db_matmul_task_on_the_vector_cores_moves_as_in_the_text_export(samples, tmp_path):
    """The DB export (level 1, rank 0) decides Cube by TASK_PMU_INFO (aic_total_time or aic_mac_time non-zero,
    reference-1 §7.3 2): the first MatMulV2 task with its rts type KERNEL_AIVEC, core AI_VECTOR_CORE and its
    aic_* PMU values 0 moves its duration (by SQL) and count from Matmul (Cube) to Matmul (Vector), nothing else."""
    db = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    (gid, dur), = sql(db, "SELECT t.globalTaskId, t.endNs - t.startNs FROM COMPUTE_TASK_INFO c JOIN TASK t "
                          "ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.opType "
                          "WHERE s.value = 'MatMulV2' ORDER BY t.startNs LIMIT 1")
    ids = dict(sql(db, "SELECT value, id FROM STRING_IDS WHERE value IN ('KERNEL_AIVEC', 'AI_VECTOR_CORE')"))
    copy = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    copy.mkdir(parents=True)
    edited_copy(db, copy / db.name,
                f"UPDATE TASK SET taskType = {ids['KERNEL_AIVEC']} WHERE globalTaskId = {gid}",
                f"UPDATE COMPUTE_TASK_INFO SET taskType = {ids['AI_VECTOR_CORE']} WHERE globalTaskId = {gid}",
                f"UPDATE TASK_PMU_INFO SET value = 0 WHERE globalTaskId = {gid} AND name IN "
                "(SELECT id FROM STRING_IDS WHERE value LIKE 'aic\\_%' ESCAPE '\\')")
    res = compare(str(db), str(copy / db.name))
    ms = dur / 1e6
    assert _moved(res) == {"Matmul (Cube)": (round(-ms, 6), -1), "Matmul (Vector)": (round(ms, 6), 1)}
    assert not _steps(res)


def test_flash_attention_direction_by_type_or_by_its_operator(samples, tmp_path):
    """A vector kernel of aten::mul_ (1.6 us, aicore_time 0) with op type FlashAttentionScoreGrad: no cube op
    covers its launch, so the Type fallback makes it Flash Attention (Backward) (Cube), Cube whatever its PMU says
    (reference-1 §3.7 5). With op type FlashAttentionScore and its op renamed npu::npu_fusion_attention, the
    covering FA op decides: forward (no backward word), Vector by its PMU (§3.8). Either way it leaves Vector (No
    Trans), and the console gains the FA column with 0.000s(1)."""
    src = samples / NPU_TEXT
    row = _kernel(src, _MUL)
    assert row["Type"] == "Mul" and float(row["aicore_time(us)"]) == 0
    ms = float(row["Duration(us)"]) / 1000
    left = {"Vector": (round(-ms, 6), -1), "Vector (No Trans)": (round(-ms, 6), -1)}
    grad = _retagged(src, tmp_path / "grad", _MUL, Name="aclnnFlashAttentionScoreGrad_FlashAttentionScoreGrad",
                     Type="FlashAttentionScoreGrad")
    res = compare(str(src), str(grad))
    assert _moved(res) == left | {"Flash Attention (Backward)": (ms, 1),
                                  "Flash Attention (Backward) (Cube)": (ms, 1)}
    assert "Flash Attention Time(Backward)(Num)" in res.console_table()
    fwd = _retagged(src, tmp_path / "fwd", _MUL, op=(*_MUL_OP, "npu::npu_fusion_attention"),
                    Name="aclnnFlashAttentionScore_FlashAttentionScore", Type="FlashAttentionScore")
    res = compare(str(src), str(fwd))
    assert _moved(res) == left | {"Flash Attention (Forward)": (ms, 1), "Flash Attention (Forward) (Vector)": (ms, 1)}
    assert _steps(res) == {"Flash Attention (Forward)": round(ms * 1e6), "Vector": -round(ms * 1e6)}


def test_kernel_renamed_into_mc2_paged_attention_or_lccl(samples, tmp_path):
    """The Relu kernel (15.5 us, aiv_time 13.419 us) renamed AllGatherMatmul (MC2: exact name, reference-1 §3.7 3):
    Vector -> the MC2 row (0.0155 ms, Computing part aiv_time, max(aic_mac, aic_mte2) being 0; no C_CORE_SQE so no
    Communication part), Computing Time's number 185 -> 184 (MC2 not counted, §9.4); with op type PagedAttention:
    Vector -> Page Attention. Renamed kernel_aivec: still Vector, and Lccl 0.0155 ms, which Free Time gives up
    (E2E - computing - Lccl - uncovered, §5.4 9) although the timeline is the same. The note under the contributors
    said these were "time no operator's kernels hold" (aten::relu_ holds the kernel); it now says what they are."""
    src = samples / NPU_TEXT
    row = _kernel(src, _RELU)
    ms, us = float(row["Duration(us)"]) / 1000, round(float(row["Duration(us)"]) * 1000)
    left = {"Vector": (-ms, -1), "Vector (No Trans)": (-ms, -1)}
    mc2 = compare(str(src), str(_retagged(src, tmp_path / "mc2", _RELU, Name="AllGatherMatmul",
                                          Type="AllGatherMatmul")))
    assert _moved(mc2) == left | {"Computing Time": (0.0, -1), "AllGatherMatmul": (ms, None),
                                  "Computing": (float(row["aiv_time(us)"]) / 1000, None)}
    assert _steps(mc2) == {"Vector": -us, "MC2": us}
    pa = compare(str(src), str(_retagged(src, tmp_path / "pa", _RELU, Name="PagedAttention", Type="PagedAttention")))
    assert _moved(pa) == left | {"Page Attention": (ms, 1)}
    for res in (mc2, pa):
        note = unexplained_note(res.contributors, res.waterfall)
        assert "the same kernel time in other computing categories" in note, note
        assert "no operator's kernels hold" not in note
    lccl = compare(str(src), str(_retagged(src, tmp_path / "lccl", _RELU, Name="kernel_aivec")))
    assert _moved(lccl) == {"Free Time": (-ms, None), "Free": (-ms, None)}
    assert _steps(lccl) == {"Lccl": us, "Free: Other": -us}
    assert "Lccl Time(Num)" in lccl.console_table()
    note = unexplained_note(lccl.contributors, lccl.waterfall)
    assert "Lccl time (kernels named kernel_aivec) that Free Time gave up" in note, note
    assert "no operator's kernels hold" not in note


def test_db_task_renamed_into_mc2_as_in_the_text_export(samples, tmp_path):
    """The DB export's first Relu task renamed AllGatherMatmul (name and op type): Vector -> the MC2 row with the
    task's duration, its Computing part max(aic_mac_time, aic_mte2_time) + aiv_total_time of TASK_PMU_INFO (ns; the
    text export's aiv_time(us), docs/differences.md), Computing Time's number -1, as in the text export."""
    db = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    (gid, dur), = sql(db, "SELECT t.globalTaskId, t.endNs - t.startNs FROM COMPUTE_TASK_INFO c JOIN TASK t "
                          "ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.opType "
                          "WHERE s.value = 'Relu' ORDER BY t.startNs LIMIT 1")
    pmu = dict(sql(db, "SELECT s.value, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
                       f"WHERE p.globalTaskId = {gid}"))
    new = 1 + max(i for i, in sql(db, "SELECT id FROM STRING_IDS"))
    copy = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    copy.mkdir(parents=True)
    edited_copy(db, copy / db.name, f"INSERT INTO STRING_IDS VALUES ({new}, 'AllGatherMatmul')",
                f"UPDATE COMPUTE_TASK_INFO SET name = {new}, opType = {new} WHERE globalTaskId = {gid}")
    res = compare(str(db), str(copy / db.name))
    ms = dur / 1e6
    part = round((max(pmu["aic_mac_time"], pmu["aic_mte2_time"]) + pmu["aiv_total_time"]) / 1e6, 6)
    assert 0 < part < ms
    assert _moved(res) == {"Vector": (-ms, -1), "Vector (No Trans)": (-ms, -1), "Computing Time": (0.0, -1),
                           "AllGatherMatmul": (ms, None), "Computing": (part, None)}
    assert _steps(res) == {"Vector": -dur, "MC2": dur}


def test_conv_on_the_backward_thread_is_backward_in_text_and_forward_in_a_db(samples, tmp_path):
    """How a Conv kernel's direction is decided (reference-1 §3.8): by its covering aten::conv op, backward if the
    op's name has a backward word or, in a text export, if the op runs on the backward thread (the tid of the last
    fwdbwd flow end); a DB export goes by the name alone. The first aten::conv2d (with its aten::convolution and
    aten::_convolution) moved to autograd's thread, as activation-checkpoint recomputation runs a forward conv: in the
    text export the kernels launched inside it (by the async_npu flows: Conv2D and the TransData around it) leave
    Conv (Forward) for Conv (Backward), Cube and Vector parts by their aicore_time, Computing unchanged, and the
    note says so; the DB export of the same change moves nothing."""
    src = samples / NPU_TEXT
    out = tmp_path / "text"
    shutil.copytree(src, out)
    path = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = path.read_text()
    events = [o for _, _, o in _objects(text)]
    back_tid = [o["tid"] for o in events if o.get("cat") == "fwdbwd" and o.get("ph") == "f"][-1]
    conv = min((o for o in events if o.get("name") == "aten::conv2d"), key=lambda o: Decimal(str(o["ts"])))
    t0, t1 = Decimal(str(conv["ts"])), Decimal(str(conv["ts"])) + Decimal(str(conv["dur"]))
    assert conv["tid"] != back_tid
    edits = []
    for s, e, o in _objects(text):
        if o.get("cat") == "cpu_op" and o["name"].startswith("aten::") and "conv" in o["name"] \
                and o["tid"] == conv["tid"] and t0 <= Decimal(str(o["ts"])) <= t1:
            edits.append((s, e, text[s:e].replace(f'"tid": {o["tid"]}', f'"tid": {back_tid}', 1)))
    assert len(edits) == 3
    parts, last = [], 0
    for s, e, new in sorted(edits):
        parts += [text[last:s], new]
        last = e
    path.write_text("".join(parts + [text[last:]]))
    starts = {o["id"]: Decimal(str(o["ts"])) for o in events if o.get("cat") == "async_npu" and o.get("ph") == "s"}
    launched = {Decimal(str(o["ts"])) for o in events if o.get("cat") == "async_npu" and o.get("ph") == "f"
                and t0 <= starts[o["id"]] <= t1}
    with open(src / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if Decimal(r["Start Time(us)"].strip()) in launched]
    cube = [Decimal(r["Duration(us)"]) for r in rows if float(r["aicore_time(us)"]) > 0]
    vector = [Decimal(r["Duration(us)"]) for r in rows if float(r["aicore_time(us)"]) <= 0]
    assert len(cube) == 1 and len(vector) == 3
    c, v = float(sum(cube)) / 1000, float(sum(vector)) / 1000
    res = compare(str(src), str(out))
    r6 = lambda x: round(x, 6)  # noqa: E731
    assert _moved(res) == {"Conv (Forward)": (r6(-c - v), -4), "Conv (Forward) (Cube)": (r6(-c), -1),
                           "Conv (Forward) (Vector)": (r6(-v), -3), "Conv (Backward)": (r6(c + v), 4),
                           "Conv (Backward) (Cube)": (r6(c), 1), "Conv (Backward) (Vector)": (r6(v), 3)}
    ns = round((c + v) * 1e6)
    assert _steps(res) == {"Conv (Forward)": -ns, "Conv (Backward)": ns}
    # the kernels' names, op types and PMU figures are as before: their operator's thread moved them, which the
    # note said was a name, op type or PMU change
    assert unexplained_note(res.contributors, res.waterfall).startswith(
        "no operator changed its device time (the change is in Conv (Forward) -0.401 ms and Conv (Backward) +0.401 ms, "
        "the same kernel time in other computing categories: a kernel's category follows its name, op type, PMU "
        "figures and the operator around it (its name and, outside a DB export, its thread), so kernels as long "
        "as before are counted under another category)")

    db = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    (back,), = sql(db, "SELECT DISTINCT a.globalTid FROM PYTORCH_API a JOIN STRING_IDS s ON s.id = a.name "
                       "WHERE s.value = 'aten::convolution_backward'")
    first = sql(db, "SELECT a.rowid FROM PYTORCH_API a JOIN STRING_IDS s ON s.id = a.name WHERE s.value IN "
                    "('aten::conv2d', 'aten::convolution', 'aten::_convolution') ORDER BY CAST(a.startNs AS INTEGER) "
                    "LIMIT 2")
    assert len(first) == 2
    copy = tmp_path / "db" / "ASCEND_PROFILER_OUTPUT"
    copy.mkdir(parents=True)
    edited_copy(db, copy / db.name, "UPDATE PYTORCH_API SET globalTid = {} WHERE rowid IN ({})".format(
        back, ", ".join(str(i) for i, in first)))
    assert not _moved(compare(str(db), str(copy / db.name)))


def test_db_copies_on_the_compute_stream_are_no_sdma_row_as_in_the_text_export(samples):
    """reference-1 §7.3 4 counts SDMA_SQE / PCIE_DMA_SQE tasks on compute streams (those with EVENT_WAIT_SQE tasks
    where any exist); the DB export names its copies MEMCPY_ASYNC and its waits EVENT_WAIT (SQL on TASK: 24
    copies on streams 2 and 3, where compute tasks run), so, as in the text export whose stream argument is
    ``Physic Stream Id`` (docs/differences.md), OverallMetrics has no SDMA row and Free Time is all Free."""
    db = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    kinds = dict(sql(db, "SELECT s.value, count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                         "GROUP BY s.value"))
    assert not {"SDMA_SQE", "PCIE_DMA_SQE", "EVENT_WAIT_SQE"} & set(kinds)
    (n, _), = sql(db, "SELECT count(*), sum(t.endNs - t.startNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                      "WHERE s.value = 'MEMCPY_ASYNC' AND t.streamId IN (SELECT t2.streamId FROM COMPUTE_TASK_INFO c "
                      "JOIN TASK t2 ON t2.globalTaskId = c.globalTaskId)")
    assert n == 24
    rows = _rows(compare(str(db), str(db)).sheet("OverallMetrics"))
    assert "SDMA" not in rows and rows["Free"][1] == rows["Free Time"][1] > 0
