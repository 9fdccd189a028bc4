"""Known regressions, injected into copies of real profiles, are attributed where they were put and nowhere else.

Each test edits one thing of a real input (in ``tmp_path``; the originals are never written), in every file that
records it, as the profiler would have written it, and compares the untouched input (base) with the edited copy:

* a GPU kernel lengthened into the idle time after it (AlexNet on an H200, MaxPool2d's forward kernel, three
  launches, each +30 us);
* a straggling peer in an NPU text export: one Notify_Wait of the last HCCL all-reduce +1 ms, every later device
  event moved by 1 ms (msinsight level 1, rank 0);
* the same in a DB export, on the plane whose waits the spec's wait rule reads (reference-1 §7.3 7);
* an operator on one side only (AlexNet: one more aten::add_ with its kernel in idle device time, inside a module
  and outside every module);
* a GPU collective lengthened into idle device time, and another under running computation (an HTA test trace);
* PMU figures of a level-2 NPU text export that make a vector kernel Cube and a Cube kernel vector;
* a kernel of an op run around modules from inside one, lengthened inside those modules or in its own part
  (SGLang's qk norm op around its RMSNorm modules);
* one step of two slower: the level-1 text export and the level-1 DB export each cut in two steps, a MaxPool kernel
  of the first +50 us, compared at each step;
* two kernels of two operators longer and idle time inserted elsewhere, at once (level-1 text export);
* across vendors (base: the AlexNet GPU trace, comparison: the NPU level-1 text export of the same model): a Cube
  MatMul kernel of one Linear 25 ms longer on the NPU side, and, with ``--op_name_map`` pairing the GPU and NPU
  names of the dropout backward op, that op's NPU kernel longer.

The expected figures are the raw files' own plus the injected amount: the injected delta must appear on the
sheets, the waterfall and the contributors of what was edited, and every other figure must stay unchanged.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dbutil import edited_copy, sql, string_id  # tests/ is on sys.path (rootdir import mode)
from spans import union
from xlsxutil import read_xlsx

from msprof_compare.api import compare
from msprof_compare.compare.module_contributors import module_contributors_note
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.report.summary_console import render_explain

ALEXNET = Path(__file__).resolve().parent / "data" / "kineto" / \
    "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU_DB = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
_MAXPOOL = "max_pool_forward_nchw"


def _cell(v):
    """A frame cell with a missing value (NaN, <NA>: ``sheet()`` types blank cells) as None, the blank it was."""
    return None if not isinstance(v, (list, tuple)) and pd.isna(v) else v


def _rows(frame, column: str = "Index") -> dict:
    return {str(k).strip(): r for k, r in zip(frame[column], frame.itertuples(index=False), strict=True)}


def _summary_lines(res, tmp_path: Path, name: str) -> list[str]:
    """Column A's words on the Summary sheet of ``res``'s workbook (the rows under the tables are merged from A)."""
    rows = read_xlsx(res.to_excel(str(tmp_path / name)), sheet_name="Summary", header=None)
    return [v for v in rows.iloc[:, 0].tolist() if isinstance(v, str)]


def _changed(frame, key: str, cols: tuple[str, str]) -> dict[str, float]:
    """Rows of a sheet whose two side columns differ: key -> comparison minus base."""
    out = {}
    for k, b, c in zip(frame[key], frame[cols[0]], frame[cols[1]], strict=True):
        b, c = (0.0 if v is None or v != v else float(v) for v in (b, c))  # NaN / None: a side without the row
        if round(c - b, 6):
            out[str(k)] = round(c - b, 6)
    return out


# --------------------------------------------------------------------------- GPU: one kernel, longer

def _lengthened_alexnet(tmp_path: Path, us: int) -> tuple[Path, list[dict]]:
    """The AlexNet trace with each launch of MaxPool2d's forward kernel ``us`` longer, where the idle time after it
    allows (nothing else on the device moves); returns the copy and the kernels as they were."""
    raw = gzip.decompress(ALEXNET.read_bytes()).decode()
    events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                    key=lambda e: e["ts"])
    pools = [i for i, e in enumerate(device) if _MAXPOOL in e["name"]]
    assert len(pools) == 3
    for i in pools:  # the idle time after each is longer than the injection: no overlap is created
        assert device[i + 1]["ts"] - (device[i]["ts"] + device[i]["dur"]) > us
        old = f'"ts": {device[i]["ts"]:f}, "dur": {device[i]["dur"]:f},'
        assert raw.count(old) == 1
        raw = raw.replace(old, f'"ts": {device[i]["ts"]:f}, "dur": {device[i]["dur"] + us:f},')
    out = tmp_path / "alexnet_maxpool_slower.pt.trace.json"
    out.write_text(raw)
    return out, [device[i] for i in pools]


def test_gpu_kernel_made_longer_is_attributed_to_its_category_operator_and_module(tmp_path):
    """+30 us on each of MaxPool2d's three forward kernels: Vector and Computing +0.090 ms, Free -0.090 ms, E2E
    unchanged; the three MaxPool2d modules and their aten::max_pool2d rows +0.030 ms each (their ancestors' TOTAL
    rows +0.090 ms) and no other row. The operator-level contributor is DistributedDataParallel.forward (the top-layer
    op holding the forward); its own ModuleCompareStatistic row reads 0 -> 0 (it is in DistributedDataParallel_0
    and AlexNet_0 runs inside it), so the Summary says the module rows inside it hold its time: before, nothing
    pointed from the contributor to the rows that changed. Swapped sides give the opposite signs."""
    slower, pools = _lengthened_alexnet(tmp_path, 30)
    res = compare(str(ALEXNET), str(slower))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"Computing Time": 0.09, "Vector": 0.09,
                                                        "Vector (No Trans)": 0.09, "Free Time": -0.09, "Free": -0.09}
    assert om["E2E Time"][1] == om["E2E Time"][4]
    wf = res.waterfall.set_index("Step")["Delta(ns)"].dropna()
    assert {k: int(v) for k, v in wf.items() if v} == {"Vector": 90_000, "Free: Other": -90_000}

    stat = res.sheet("ModuleCompareStatistic")
    ops = stat[stat["Operator Name"] != "[ TOTAL ]"]
    moved = ops[ops["Device Self Time Diff(ms)"] != 0]
    assert moved["Operator Name"].tolist() == ["aten::max_pool2d"] * 3
    assert moved["Device Self Time Diff(ms)"].tolist() == [0.03] * 3
    base_kernels = [float(k["dur"]) / 1000 for k in pools]  # each op holds exactly its kernel
    assert moved["Device Self Time(ms)"].tolist() == pytest.approx(base_kernels, abs=1e-9)
    totals = stat[stat["Operator Name"] == "[ TOTAL ]"]
    grew = totals[totals["Device Total Time Diff(ms)"] != 0]
    assert sorted(grew["Device Total Time Diff(ms)"].tolist()) == [0.03] * 3 + [0.09] * 3  # 3 MaxPool2d; 3 ancestors
    assert set(grew["Module Class"]) == {"nn.Module: MaxPool2d", "nn.Module: Sequential", "nn.Module: AlexNet",
                                         "nn.Module: DistributedDataParallel"}

    contrib = res.contributors
    assert contrib[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.09]]
    (own,) = ops[ops["Operator Name"] == "DistributedDataParallel.forward"].itertuples(index=False)
    assert (own[6], own[10]) == (0, 0)  # its own row: the time is in the modules run inside it
    (summary,) = [s for s in res.sheets if s.name == "Summary"]
    assert summary.contributors.attrs["outside_modules"] == []
    # the module contributors open it up: the three module rows that grew, with their kernels' own figures
    mods = res.module_contributors
    path = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ MaxPool2d_{} > aten::max_pool2d"
    assert mods["Name"].tolist() == [path.format(i) for i in range(3)]
    assert mods["Level"].tolist() == ["module operator"] * 3 and mods["Diff(ms)"].tolist() == [0.03] * 3
    assert mods["Base(ms)"].tolist() == pytest.approx(base_kernels, abs=1e-9)
    assert mods["Comparison(ms)"].tolist() == pytest.approx([k + 0.03 for k in base_kernels], abs=1e-9)
    assert mods["Cumulative Share"].tolist() == pytest.approx([1 / 3, 2 / 3, 1])
    assert module_contributors_note(mods) == (
        "The module rows hold all of the time of DistributedDataParallel.forward, which runs modules: the module "
        "contributors rank the module rows inside it by their change")
    # docs/differences.md quotes it (it said the line reads "all of it", the words of a lead naming several)
    differences = " ".join((Path(__file__).resolve().parents[1] / "docs" / "differences.md").read_text().split())
    assert f'("{module_contributors_note(mods).split(":")[0]}";' in differences
    # the Summary sheet names it in its contributor row and that lead alone: no row under the contributors says it
    # again (its own module row holds only what it launched outside AlexNet_0)
    lines = _summary_lines(res, tmp_path, "maxpool")
    assert [v for v in lines if "DistributedDataParallel.forward" in v] == [
        "DistributedDataParallel.forward", f"{module_contributors_note(mods)}:"]
    # one operator, moved one way: its share is of the operators' change, which the E2E change is not
    assert "Top Contributors (operator level: 1 row covers 100.0% of the operators' device-time change, not of the " \
        "E2E change)" in lines
    assert not res.memory_contributors.shape[0] and res.sheet("ApiCompare")["Total Duration(ms)"].equals(
        res.sheet("ApiCompare")["Total Duration(ms).1"])

    # the console prints the lead and the table under the contributors, names cut by leading path components
    # (the operator is at the end); the JSON carries the frame and the lead as they are
    text = render_explain(res.frames, res.verdict)
    lead = text.index("The module rows hold all of the time of DistributedDataParallel.forward")
    assert text.index("Top Contributors (operator level") < lead < text.index(
        "Top Module Contributors (module operator level: 3 rows cover 100.0% of the device-time change of the module "
        "operators inside it)")
    assert "| 1 | .../ AlexNet_0/ Sequential_0/ MaxPool2d_0 > aten::max_pool2d |    0.026 |          0.056 |"\
        "   +0.030 | 33.3% |            33.3% |" in text
    doc = json.loads((tmp_path / "out.json").read_text()) if res.to_json(tmp_path / "out.json") else None
    assert [r["Name"] for r in doc["summary"]["module_contributors"]] == mods["Name"].tolist()
    assert doc["summary"]["module_contributors_note"] == module_contributors_note(mods)

    back = compare(str(slower), str(ALEXNET))
    assert back.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", -0.09]]
    assert back.module_contributors[["Name", "Diff(ms)"]].values.tolist() == [[path.format(i), -0.03]
                                                                             for i in range(3)]
    wf = back.waterfall.set_index("Step")["Delta(ns)"].dropna()
    assert {k: int(v) for k, v in wf.items() if v} == {"Vector": -90_000, "Free: Other": 90_000}


# --------------------------------------------------------------------------- NPU text: a straggling peer

_HOST = {"Python", "CANN"}


def _objects(text: str):
    """(start, end, object) of each object of a top-level JSON array, in file order."""
    dec = json.JSONDecoder()
    i = text.index("[") + 1
    while True:
        while text[i] in " \r\n\t,":
            i += 1
        if text[i] == "]":
            return
        obj, j = dec.raw_decode(text, i)
        yield i, j, obj
        i = j


def _csv_line(fields: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(fields)
    return buf.getvalue()


def _device_time_inserted(src: Path, dst: Path, at: Decimal, us: Decimal) -> list[str]:
    """A copy of the text export ``src`` with ``us`` of device time inserted at ``at``: every device event of
    trace_view.json (Ascend Hardware, HCCL, Overlap Analysis, counters; not the host's Python / CANN lanes) that
    starts at or after it moves by ``us``, every one running across it grows by ``us``; kernel_details.csv alike.
    Edits the numbers in the files' text; returns the names of the events that grew."""
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"
    text = (out / "trace_view.json").read_bytes().decode()
    objects = list(_objects(text))
    process = {o["pid"]: o["args"]["name"] for _, _, o in objects
               if o.get("ph") == "M" and o.get("name") == "process_name"}
    parts, last, grown = [], 0, []
    for s, e, o in objects:
        if o.get("ph") == "M" or "ts" not in o or process.get(o.get("pid")) in _HOST:
            continue
        ts = Decimal(str(o["ts"]))
        later = lambda m: m.group(1) + f"{Decimal(m.group(2)) + us:f}"  # noqa: E731
        if ts >= at:
            new = re.sub(r'("ts": "?)([\d.]+)', later, text[s:e], count=1)
        elif o.get("ph") == "X" and ts + Decimal(str(o["dur"])) >= at:
            new = re.sub(r'("dur": )([\d.]+)', later, text[s:e], count=1)
            grown.append(f"{process[o['pid']]}: {o['name']}")
        else:
            continue
        parts += [text[last:s], new]
        last = e
    (out / "trace_view.json").write_bytes("".join(parts + [text[last:]]).encode())
    raw = (out / "kernel_details.csv").read_bytes().decode()
    lines = raw.split("\r\n")
    head = next(csv.reader([lines[0]]))
    at_start, at_dur = head.index("Start Time(us)"), head.index("Duration(us)")
    for k in range(1, len(lines)):
        if not lines[k]:
            continue
        row = next(csv.reader([lines[k]]))
        assert _csv_line(row) == lines[k]  # only the edited fields change
        start = Decimal(row[at_start].strip())
        if start >= at:
            row[at_start] = row[at_start].replace(row[at_start].strip(), f"{start + us:f}")
        elif start + Decimal(row[at_dur]) >= at:
            row[at_dur] = f"{Decimal(row[at_dur]) + us:f}"
            grown.append(f"kernel_details: {row[4]}")
        else:
            continue
        lines[k] = _csv_line(row)
    (out / "kernel_details.csv").write_bytes("\r\n".join(lines).encode())
    return grown


def _hccl_events(trace: Path) -> tuple[dict[tuple, str], list[dict]]:
    """A text export's trace_view.json, its floats read as Decimal: each (pid, tid) lane's name (an HCCL op's
    "Group 0 Communication", its tasks' "Plane N") and the HCCL process's complete events, ops and tasks."""
    events = json.loads(trace.read_bytes(), parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    lane = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return lane, [e for e in events if e.get("ph") == "X" and process.get(e["pid"]) == "HCCL"]


def _last_allreduce_wait(trace: Path) -> tuple[dict, dict]:
    """The last HCCL op of the trace and the longest Notify_Wait task within it."""
    lane, hccl = _hccl_events(trace)
    op = max((e for e in hccl if "Communication" in lane[(e["pid"], e["tid"])]), key=lambda e: Decimal(e["ts"]))
    start, end = Decimal(op["ts"]), Decimal(op["ts"]) + op["dur"]
    wait = max((e for e in hccl if e["name"] == "Notify_Wait" and start <= Decimal(e["ts"]) < end),
               key=lambda e: e["dur"])
    return op, wait


def test_npu_text_straggler_wait_is_uncovered_communication_of_its_group(samples, tmp_path):
    """A peer 1 ms late: the Notify_Wait it causes in the last all-reduce (plane 5, 21.98 ms) +1 ms, the rest of
    the device's timeline 1 ms later. Uncovered communication, its group and E2E +1.000 ms; Transmit +1.000 ms, as
    the spec's wait reads the plane with the least waiting (reference-1 §5.7: Plane 0, none), so Wait stays 0;
    computing, free time and every computing category unchanged. CommunicationCompare: allreduce total +1000 us (its
    Max and Min unchanged), Notify_Wait total +1000 us; KernelCompare's hcom_allReduce_ row +1000 us; the
    contributor is the operator that launched it (AccumulateGrad), most of it communication; no module row moves."""
    src = samples / NPU_TEXT
    op, wait = _last_allreduce_wait(src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    assert op["name"].startswith("hcom_allReduce_")
    late = tmp_path / "rank0_ascend_pt"
    grown = _device_time_inserted(src, late, Decimal(wait["ts"]) + wait["dur"], Decimal(1000))
    assert sorted(grown) == sorted([f"HCCL: {op['name']}", "HCCL: Notify_Wait", "Ascend Hardware: Notify Wait",
                                    "Ascend Hardware: EVENT_WAIT", "Overlap Analysis: Communication",
                                    "Overlap Analysis: Communication(Not Overlapped)", f"kernel_details: {op['name']}"])
    res = compare(str(src), str(late))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"Uncovered Communication Time": 1.0, "Transmit": 1.0,
                                                        "Group 0 Communication": 1.0, "E2E Time": 1.0}
    assert "Wait" not in om
    wf = res.waterfall.set_index("Step")["Delta(ns)"].dropna()
    assert {k: int(v) for k, v in wf.items() if v} == {"Group 0 Communication (uncovered)": 1_000_000,
                                                       "Comparison E2E": 1_000_000}
    comm = res.sheet("CommunicationCompare")
    rows = {(_cell(r[1]), _cell(r[2])): r for r in comm.itertuples(index=False)}
    allreduce = rows[("allreduce", None)]
    assert allreduce[15] == 1000 and (allreduce[6], allreduce[7]) == (allreduce[13], allreduce[14])
    changed = {k[1]: round(r[11] - r[4], 6) for k, r in rows.items() if k[0] == "|" and round(r[11] - r[4], 6)}
    assert changed == {"Notify_Wait": 1000}
    kernels = res.sheet("KernelCompare")
    assert _changed(kernels, "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {"hcom_allReduce_": 1000}
    assert not _changed(res.sheet("ModuleCompareStatistic"), "Module Name", ("Device Total Time(ms)",
                                                                              "Device Total Time(ms).1"))
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [
        ["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 1.0]]
    # most of it communication: DDP's gradient hooks launch the four all-reduces under AccumulateGrad, so its
    # communication is the HCCL ops' time of the raw trace (105.991878 ms), and 1 ms more on the late side
    events = json.loads((src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_bytes(), parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl_us = sum(Decimal(str(e["dur"])) for e in events if e.get("ph") == "X" and process.get(e["pid"]) == "HCCL"
                  and e["name"].startswith("hcom_"))
    hccl_ms = float(round(hccl_us * 1000) / 1_000_000)
    assert res.frames["contributor_communication"].values.tolist() == [
        ["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", hccl_ms, round(hccl_ms + 1, 6)]]
    assert res.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [["allreduce", 1.0]]


# --------------------------------------------------------------------------- NPU DB: a straggling peer

def test_npu_db_straggler_wait_on_the_read_plane_is_wait_time(samples, tmp_path):
    """The DB export's rule (reference-1 §7.3 7) reads the plane with the least waiting among those that wait:
    plane 1 here (3.690 ms of Notify_Wait, the others 5.689 ms and up). One of its waits in the last all-reduce
    +1 ms (a peer late), every later device row (TASK, COMMUNICATION_OP, OVERLAP_ANALYSIS) 1 ms later: Wait,
    uncovered communication and E2E +1.000 ms, Transmit unchanged; CommunicationCompare allreduce and its
    Notify_Wait +1000 us; nothing else. The DB links no HCCL op to an operator: the contributors are the waterfall's."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    waits = sql(src, "SELECT c.planeId, SUM(t.endNs - t.startNs) FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                     "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType WHERE s.value = 'Notify_Wait' "
                     "GROUP BY c.planeId ORDER BY 2")
    plane = waits[0][0]
    assert waits[0][1] + 1_000_000 < waits[1][1]  # still the least waiting plane after the injection
    ((end,),) = sql(src, "SELECT t.endNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
                         "JOIN STRING_IDS s ON s.id = c.taskType WHERE s.value = 'Notify_Wait' AND c.planeId = ? "
                         "AND c.opId = (SELECT opId FROM COMMUNICATION_OP ORDER BY startNs DESC LIMIT 1) "
                         # a wait no compute task runs across: the injection lengthens no computation
                         "AND NOT EXISTS (SELECT 1 FROM TASK k JOIN COMPUTE_TASK_INFO USING (globalTaskId) "
                         "WHERE k.startNs < t.endNs AND k.endNs >= t.endNs) "
                         "ORDER BY t.startNs LIMIT 1", (plane,))
    ns = 1_000_000
    late = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    late.mkdir(parents=True)
    edits = [s for table in ("TASK", "COMMUNICATION_OP", "OVERLAP_ANALYSIS") for s in (
        f"UPDATE {table} SET endNs = endNs + {ns} WHERE startNs < {end} AND endNs >= {end}",
        f"UPDATE {table} SET startNs = startNs + {ns}, endNs = endNs + {ns} WHERE startNs >= {end}")]
    edited_copy(src, late / src.name, *edits)
    con = sqlite3.connect(late / src.name)
    try:  # the wait itself, its op, and the not-overlapped window the op ends in grew; the rest moved
        assert con.execute(f"SELECT COUNT(*) FROM COMMUNICATION_OP WHERE endNs - startNs > 0 AND endNs > {end + ns}"
                           ).fetchone()[0] == 1
    finally:
        con.close()
    res = compare(str(samples / NPU_DB), str(late.parent))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"Uncovered Communication Time": 1.0, "Wait": 1.0,
                                                        "E2E Time": 1.0} | {
        k: 1.0 for k in om if k.startswith("90.91.105.46%enp189s0f0_60000_0")}
    comm = res.sheet("CommunicationCompare")
    rows = {(_cell(r[1]), _cell(r[2])): r for r in comm.itertuples(index=False)}
    assert rows[("allreduce", None)][15] == 1000
    assert {k[1] for k, r in rows.items() if k[0] == "|" and round(r[11] - r[4], 6)} == {"Notify_Wait"}
    assert res.contributors["Level"].unique().tolist() == ["category"]
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [
        ["Group 90.91.105.46%enp189s0f0_60000_0 Communication (uncovered)", 1.0]]


# --------------------------------------------------------------------------- GPU: an operator on one side only

def _with_extra_add(tmp_path: Path, name: str, host_ts: Decimal, kernel_ts: Decimal) -> tuple[Path, Decimal]:
    """The AlexNet trace with one more ``aten::add_`` on the main thread at ``host_ts`` (20 us, its
    cudaLaunchKernel 5 us in, 8 us long) whose kernel, a copy of the first aten::add_'s (same name and duration),
    runs at ``kernel_ts``; new external / correlation / flow ids. Host and device time are checked free: no op
    of the thread runs across the new op's bounds, no device event overlaps the kernel. Returns the copy and the
    kernel's duration (us)."""
    raw = gzip.decompress(ALEXNET.read_bytes()).decode()
    events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    first = min((e for e in events if e.get("name") == "aten::add_"), key=lambda e: e["ts"])
    (kernel,) = [e for e in events if e.get("cat") == "kernel"
                 and e["args"].get("External id") == first["args"]["External id"]]
    host_end, kernel_end = host_ts + 20, kernel_ts + kernel["dur"]
    for e in events:
        if e.get("ph") != "X":
            continue
        start, end = e["ts"], e["ts"] + e.get("dur", 0)
        if e.get("cat") == "cpu_op" and e["tid"] == first["tid"]:  # nested around it, or apart
            assert (start <= host_ts and end >= host_end) or end <= host_ts or start >= host_end, e["name"]
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            assert end <= kernel_ts or start >= kernel_end, e["name"]
    ids = {"ext": 99901, "corr": 999001}
    assert not re.search(r'"(External id|correlation|id)": (99901|999001)\b', raw)
    launch = host_ts + 5
    args = ", ".join(f'"{k}": {json.dumps(v, default=str)}' for k, v in first["args"].items()
                     if k not in ("External id", "Ev Idx", "Record function id"))
    pid, tid = first["pid"], first["tid"]
    new = [
        f'{{"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": {pid}, "tid": {tid}, "ts": {host_ts:f}, '
        f'"dur": 20, "args": {{"External id": {ids["ext"]}, {args}}}}}',
        f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, "tid": {tid}, '
        f'"ts": {launch:f}, "dur": 8, "args": {{"External id": {ids["ext"]}, "cbid": 211, '
        f'"correlation": {ids["corr"]}}}}}',
        f'{{"ph": "X", "cat": "kernel", "name": {json.dumps(kernel["name"])}, "pid": {kernel["pid"]}, '
        f'"tid": {kernel["tid"]}, "ts": {kernel_ts:f}, "dur": {kernel["dur"]:f}, "args": {{"External id": '
        f'{ids["ext"]}, "device": 0, "context": 1, "stream": {kernel["args"]["stream"]}, '
        f'"correlation": {ids["corr"]}}}}}',
        f'{{"ph": "s", "id": {ids["corr"]}, "pid": {pid}, "tid": {tid}, "ts": {launch:f}, "cat": "ac2g", '
        '"name": "ac2g"}',
        f'{{"ph": "f", "id": {ids["corr"]}, "pid": {kernel["pid"]}, "tid": {kernel["tid"]}, "ts": {kernel_ts:f}, '
        '"cat": "ac2g", "name": "ac2g", "bp": "e"}',
    ]
    at = raw.index('"traceEvents": [') + len('"traceEvents": [')
    out = tmp_path / name
    out.write_text(raw[:at] + "\n" + ",\n".join(new) + "," + raw[at:])
    return out, kernel["dur"]


def _waterfall(res) -> dict[str, int]:
    wf = res.waterfall.set_index("Step")["Delta(ns)"].dropna()
    return {k: int(v) for k, v in wf.items() if v}


def test_gpu_operator_on_one_side_only_is_a_row_with_a_blank_side_and_its_contributor(tmp_path):
    """One more aten::add_ on the comparison side, its 17.856 us kernel in idle device time: Vector +17.856 us and
    Free -17.856 us, E2E unchanged. Inside a module (ReLU_0, before its relu_): ModuleCompare gains one row whose base
    side is blank, ReLU_0's TOTAL and its three ancestors' grow by the kernel, the module's aten::add_ row counts 0
    -> 1, every module still matches (55/55), and the contributor is the top-layer op holding the forward, opened
    up by the module contributors to "<ReLU_0's path> > aten::add_". Outside every module (between the loss's mul_
    and item): the op itself is the contributor, named as on no module row; with --disable_module OperatorCompare
    has one row with a blank base side, OperatorCompareStatistic aten::add_ 0 -> 1 op, and the operator match rate
    is 112/113 on the comparison side. Swapped sides blank the other side."""
    inside, dur = _with_extra_add(tmp_path, "add_in_relu0.pt.trace.json", Decimal("5179894885735"),
                                  Decimal("5179894885955"))
    ns, ms = int(dur * 1000), float(dur) / 1000
    res = compare(str(ALEXNET), str(inside))
    assert _waterfall(res) == {"Vector": ns, "Free: Other": -ns}
    mod = res.sheet("ModuleCompare")
    blank = mod[mod["Operator Name"].fillna("") == ""]
    blank = blank[blank["Operator Name.1"].fillna("") != ""]
    assert blank[["Operator Name.1", "Device Self Time(us)", "Device Self Time(us).1"]].values.tolist() == [
        ["aten::add_", 0, float(dur)]]
    assert blank["Module Name"].iloc[0].endswith("ReLU_0")
    stat = res.sheet("ModuleCompareStatistic")
    totals = stat[stat["Operator Name"] == "[ TOTAL ]"]
    grown = _changed(totals, "Module Name", ("Device Total Time(ms)", "Device Total Time(ms).1"))
    assert grown == {n: round(ms, 6) for n in grown} and len(grown) == 4
    assert sorted(n.rsplit("/ ", 1)[-1] for n in grown) == ["AlexNet_0", "DistributedDataParallel_0", "ReLU_0",
                                                           "Sequential_0"]
    (row,) = stat[stat["Operator Name"] == "aten::add_"].itertuples(index=False)
    assert row[3].endswith("ReLU_0") and (row[7], row[11]) == (0, 1)
    assert res.frames["match_rate"].values.tolist()[0][:4] == ["modules", 55, 55, 55]
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", ms]]
    (path,) = blank["Module Name"].tolist()  # the module row the contributor's time is on
    assert res.module_contributors[["Name", "Diff(ms)"]].values.tolist() == [[f"{path} > aten::add_", ms]]
    back = compare(str(inside), str(ALEXNET))
    mod = back.sheet("ModuleCompare")
    assert mod[mod["Operator Name.1"].fillna("") == ""]["Operator Name"].fillna("").tolist().count("aten::add_") == 1
    assert back.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", -ms]]

    outside, _ = _with_extra_add(tmp_path, "add_outside.pt.trace.json", Decimal("5179894888790"),
                                 Decimal("5179894888800"))
    res = compare(str(ALEXNET), str(outside))
    assert _waterfall(res) == {"Vector": ns, "Free: Other": -ns}
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["aten::add_", ms]]
    (summary,) = [s for s in res.sheets if s.name == "Summary"]
    assert summary.contributors.attrs["outside_modules"] == ["aten::add_"]
    assert not _changed(res.sheet("ModuleCompareStatistic"), "Module Name",
                        ("Device Total Time(ms)", "Device Total Time(ms).1"))
    res = compare(str(ALEXNET), str(outside), disable_module=True)
    ops = res.sheet("OperatorCompare")
    one_sided = ops[ops["Operator Name"].isna() | ops["Operator Name.1"].isna()]
    assert [[_cell(v) for v in r] for r in one_sided[["Operator Name", "Operator Name.1", "Device Duration(us)",
                                                        "Device Duration(us).1"]].values.tolist()] \
        == [[None, "aten::add_", 0, float(dur)]]
    stat = res.sheet("OperatorCompareStatistic")
    assert stat[stat["Operator Name"] == "aten::add_"].iloc[0, 2:6].tolist() == [0, 0, ms, 1]
    assert res.frames["match_rate"].values.tolist()[0][:4] == ["operators", 112, 112, 113]


# --------------------------------------------------------------------------- GPU: a collective, longer

HTA_NCCL = "hta/tests/data/timeline_analysis/sampled_rank-0.json.gz"


def _lengthened_collective(src: Path, dst: Path, overlapped: bool, us: int) -> dict:
    """A copy of the trace with one NCCL kernel ``us`` longer: the first whose extension runs in idle device time
    (no computing kernel runs across its end and no device event starts within ``us`` after it), or, with
    ``overlapped``, the first whose extension computing covers all along (and nothing of its own stream starts
    in it). Returns the kernel as it was."""
    raw = gzip.decompress(src.read_bytes()).decode()
    events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    nccl = sorted((e for e in device if e.get("cat") == "kernel" and "nccl" in e["name"].lower()),
                  key=lambda e: e["ts"])
    computing = union([(e["ts"], e["ts"] + e["dur"]) for e in device
                       if e.get("cat") == "kernel" and "nccl" not in e["name"].lower()])
    for k in nccl:
        end = k["ts"] + k["dur"]
        covered = next((c[1] - end for c in computing if c[0] <= end < c[1]), Decimal(0))
        starts = [e for e in device if end <= e["ts"] < end + us
                  and (overlapped is False or e["args"].get("stream") == k["args"]["stream"])]
        if not starts and (covered >= us if overlapped else covered == 0):
            break
    else:
        raise AssertionError("no such collective")
    old = f'"ts": {k["ts"]}, "dur": {k["dur"]},'
    assert raw.count(old) == 1
    dst.write_text(raw.replace(old, f'"ts": {k["ts"]}, "dur": {k["dur"] + us},'))
    return k


def test_gpu_collective_made_longer_is_uncovered_only_where_no_computing_overlaps_it(samples, tmp_path):
    """A SendRecv kernel of an HTA test trace (no launch flows: the contributors are the waterfall's categories)
    1 ms longer into idle device time: uncovered communication +1.000 ms, free time -1.000 ms, E2E and computing
    unchanged; CommunicationCompare: its collective's total +1000 us (calls unchanged), the communication
    contributor that collective. Another one 0.5 ms longer while computing kernels run on: no OverallMetrics row and
    no waterfall step moves (the time is overlapped), only CommunicationCompare and the communication contributors
    (+500 us / +0.500 ms). Swapped sides give the opposite signs."""
    src = samples / HTA_NCCL
    idle = _lengthened_collective(src, tmp_path / "idle.json", overlapped=False, us=1000)
    busy = _lengthened_collective(src, tmp_path / "busy.json", overlapped=True, us=500)
    assert (idle["ts"], idle["args"]["stream"]) != (busy["ts"], busy["args"]["stream"])  # two kernels, not one
    for name, us, moved in (("idle.json", 1000, {"Uncovered Communication Time": 1.0, "Free Time": -1.0,
                                                 "Free": -1.0}),
                            ("busy.json", 500, {})):
        res = compare(str(src), str(tmp_path / name))
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == moved
        assert _waterfall(res) == ({"Uncovered Communication": us * 1000, "Free: Other": -us * 1000} if moved else {})
        comm = res.sheet("CommunicationCompare")
        changed = _changed(comm, "Communication OP Name", ("Total Duration(us)", "Total Duration(us).1"))
        assert list(changed.values()) == [us]
        (family,) = changed
        row = comm[comm["Communication OP Name"] == family].iloc[0]
        assert row["Calls"] == row["Calls.1"]
        assert res.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [[family, us / 1000]]
        back = compare(str(tmp_path / name), str(src))
        assert _waterfall(back) == {k: -v for k, v in _waterfall(res).items()}
        assert back.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [[family, -us / 1000]]


# --------------------------------------------------------------------------- NPU text level 2: PMU figures

NPU_TEXT_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def _pmu_edited(src: Path, dst: Path, op_type: str, cells: dict[str, str]) -> dict[str, str]:
    """A copy of the export with the first ``op_type`` row of kernel_details.csv given ``cells`` (nothing else
    edited, the other lines kept byte for byte); returns the row as it was."""
    shutil.copytree(src, dst)
    path = dst / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    raw = path.read_bytes().decode()
    eol = "\r\n" if "\r\n" in raw else "\n"
    lines = raw.split(eol)
    head = next(csv.reader([lines[0]]))
    for k in range(1, len(lines)):
        row = next(csv.reader([lines[k]]))
        if not row:
            continue
        if row[head.index("Type")] == op_type:
            assert _csv_line(row) == lines[k]
            old = dict(zip(head, row, strict=True))
            for col, value in cells.items():
                row[head.index(col)] = value
            lines[k] = _csv_line(row)
            path.write_bytes(eol.join(lines).encode())
            return old
    raise AssertionError(op_type)


def test_npu_pmu_figures_move_a_kernel_between_cube_and_vector_and_nothing_else(samples, tmp_path):
    """A level-2 export, where the PMU columns decide which kernels are Cube (reference-1 §5.3: aicore_time(us) > 0;
    "Accelerator Core" is not read). MaxPool's first forward kernel (a vector kernel, aicore_time 0) given an
    aicore_time: it leaves Vector (No Trans) for the other Cube bucket with its whole duration (173.283 us) and its
    count, computing and every other figure unchanged; the first Conv2D's aicore / MAC time set to 0: it moves from
    Conv (Forward) (Cube) to Conv (Forward) (Vector) (311.646 us). KernelCompare, the module, operator and API
    sheets do not read these columns and stay as they were."""
    src = samples / NPU_TEXT_L2
    pool = _pmu_edited(src, tmp_path / "pool", "MaxPoolWithArgmaxV1", {"aicore_time(us)": "170.0"})
    conv = _pmu_edited(src, tmp_path / "conv", "Conv2D", {"aicore_time(us)": "0.0", "aic_mac_time(us)": "0.0"})
    assert float(pool["aicore_time(us)"]) == 0 and float(conv["aicore_time(us)"]) > 0
    for copy, kernel, moved in ((tmp_path / "pool", pool, ("Vector (No Trans)", "Cube")),
                                (tmp_path / "conv", conv, ("Conv (Forward) (Cube)", "Conv (Forward) (Vector)"))):
        res = compare(str(src), str(copy))
        ms = float(kernel["Duration(us)"]) / 1000
        om = res.sheet("OverallMetrics")
        rows = {str(k).strip(): r for k, r in zip(om["Index"], om.itertuples(index=False), strict=True)}
        times = {k: round(r[4] - r[1], 6) for k, r in rows.items() if round(r[4] - r[1], 6)}
        counts = {k: r[6] - r[3] for k, r in rows.items() if r[3] != "/" and r[6] != r[3]}
        parent = {"Vector (No Trans)": "Vector"}.get(moved[0])  # the Conv rows' parent keeps its sum
        out = [moved[0]] + ([parent] if parent else [])
        assert times == {k: round(-ms, 6) for k in out} | {moved[1]: round(ms, 6)}
        assert counts == {k: -1 for k in out} | {moved[1]: 1}
        assert rows["Computing Time"][1] == rows["Computing Time"][4]
        api = res.sheet("ApiCompare")
        assert api["Total Duration(ms)"].equals(api["Total Duration(ms).1"])
        kernels = res.sheet("KernelCompare")
        assert not _changed(kernels, "Kernel", ("Total Duration(us)", "Total Duration(us).1"))
        assert not _changed(res.sheet("ModuleCompareStatistic"), "Module Name",
                            ("Device Total Time(ms)", "Device Total Time(ms).1"))


# --------------------------------------------------------------------------- GPU: an op run around modules

SGLANG = "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"
_QK_NORM = "sglang_profiler::utils_apply_qk_norm_487"


def _qk_norm_kernels(events: list[dict]) -> tuple[list[dict], list[dict]]:
    """The kernels launched in SGLang's ``utils_apply_qk_norm_487`` ops, read from the raw events alone: (those
    launched inside an nn.Module run within the op, the RMSNorm q_norm / k_norm; the rest, its own)."""
    ops = [e for e in events if e.get("name") == _QK_NORM]
    mods = [e for e in events if e.get("cat") == "python_function" and str(e["name"]).startswith("nn.Module: ")]
    by_corr: dict = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            by_corr.setdefault(e["args"]["correlation"], []).append(e)
    nested, own = [], []
    for op in ops:
        t0, t1 = op["ts"], op["ts"] + op["dur"]
        inner = [m for m in mods if m["tid"] == op["tid"] and t0 <= m["ts"] and m["ts"] + m["dur"] <= t1]
        for e in events:
            if e.get("cat") == "cuda_runtime" and e["tid"] == op["tid"] and t0 <= e["ts"] <= t1:
                ks = by_corr.get(e["args"].get("correlation"), [])
                inside = any(m["ts"] <= e["ts"] <= m["ts"] + m["dur"] for m in inner)
                (nested if inside else own).extend(ks)
    return nested, own


def _sglang_with_kernel_longer(samples: Path, tmp_path: Path, pick: str, us: int) -> tuple[Path, float, float]:
    """A copy of the SGLang prefill trace with the first qk_norm op's first ``pick`` ("nested" or "own") kernel
    ``us`` longer; returns it and the ms of the ops' nested and own kernels in the original."""
    raw = gzip.decompress((samples / SGLANG).read_bytes()).decode()
    nested, own = _qk_norm_kernels(json.loads(raw, parse_float=Decimal)["traceEvents"])
    assert len(nested) == len(own) == 72  # 36 ops: two RMSNorm kernels inside, two copies of their own
    k = (nested if pick == "nested" else own)[0]
    old = f'"ts": {k["ts"]}, "dur": {k["dur"]}, '
    assert raw.count(old) == 1
    out = tmp_path / f"sglang_{pick}_slower.json"
    out.write_text(raw.replace(old, f'"ts": {k["ts"]}, "dur": {k["dur"] + us}, '))
    return out, float(sum(k["dur"] for k in nested)) / 1000, float(sum(k["dur"] for k in own)) / 1000


def test_op_around_modules_inside_one_is_named_with_the_module_rows_part(samples, tmp_path):
    """SGLang wraps the qk norm in ``utils_apply_qk_norm_487``, a top-layer op of each Qwen3Attention module that
    runs two RMSNorm modules: its own rows hold 3.390 ms, the RMSNorm rows inside it 17.487 ms. One RMSNorm kernel
    +100 us (``--max_kernel_num 10`` makes the op a contributor): its own rows do not move, so the Summary names it,
    with the RMSNorm rows' part of its time (17.487 of 20.877 ms), not its own rows' and theirs together ("all of
    it", as before). Its own kernel +100 us instead: its own row reads the change, and the module contributors
    name that row (the Qwen3Attention it ran in), with a lead saying the op runs inside modules."""
    slower, nested, own = _sglang_with_kernel_longer(samples, tmp_path, "nested", 100)
    res = compare(str(samples / SGLANG), str(slower), max_kernel_num=10)
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [[_QK_NORM, 0.1]]
    stat = res.sheet("ModuleCompareStatistic")
    rows = stat[stat["Operator Name"] == _QK_NORM]
    assert round(rows["Device Self Time(ms)"].sum(), 6) == round(own, 6)  # 3.389917, on both sides
    assert not rows["Device Self Time Diff(ms)"].any()
    total = nested + own
    ((_, figures),) = res.module_contributors.attrs["runs_modules"]
    assert [(s, round(h, 6), round(t, 6)) for s, h, t in figures] == [
        ("base", round(nested, 6), round(total, 6)), ("comparison", round(nested + 0.1, 6), round(total + 0.1, 6))]
    # the console's, the workbook's and the JSON's line above the module contributors gives those figures, and the
    # workbook names it nowhere else but in its contributor row
    note = module_contributors_note(res.module_contributors)
    assert note.startswith(
        f"The module rows hold part of the time of {_QK_NORM} (base {nested:.3f} of its {total:.3f} ms, comparison "
        f"{nested + 0.1:.3f} of its {total + 0.1:.3f} ms), which runs modules")
    assert [v for v in _summary_lines(res, tmp_path, "qk") if _QK_NORM in v] == [_QK_NORM, f"{note}:"]
    (name, diff), = res.module_contributors[["Name", "Diff(ms)"]].values.tolist()
    assert "/ RMSNorm_" in name and diff == 0.1

    slower, _, _ = _sglang_with_kernel_longer(samples, tmp_path, "own", 100)
    res = compare(str(samples / SGLANG), str(slower), max_kernel_num=10)
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [[_QK_NORM, 0.1]]
    stat = res.sheet("ModuleCompareStatistic")
    assert round(stat[stat["Operator Name"] == _QK_NORM]["Device Self Time Diff(ms)"].sum(), 6) == 0.1
    # the op runs no module, but runs inside one: its module row that grew is named (it was not: the console named
    # no module, though the op runs in each Qwen3Attention), with a lead of its own
    (grew,) = stat[(stat["Operator Name"] == _QK_NORM) & (stat["Device Self Time Diff(ms)"] != 0)].itertuples()
    row = f"{grew[4].strip()} > {_QK_NORM}"
    assert res.module_contributors[["Name", "Diff(ms)"]].values.tolist() == [[row, 0.1]]
    note = module_contributors_note(res.module_contributors)
    assert note == f"{_QK_NORM} runs inside modules: the module contributors rank its module rows by their change"
    assert [v for v in _summary_lines(res, tmp_path, "qk_own") if _QK_NORM in v] == [_QK_NORM, f"{note}:", row]


# --------------------------------------------------------------------------- NPU: one step of two slower

def _edit_csv(path: Path, edit) -> int:
    """Rewrite the rows of a profiler CSV for which ``edit(header, row)`` returns True (it edits the row in place),
    keeping every other line byte for byte; the number of rows edited."""
    raw = path.read_bytes().decode()
    eol = "\r\n" if "\r\n" in raw else "\n"
    lines = raw.split(eol)
    head = next(csv.reader([lines[0]]))
    n = 0
    for k in range(1, len(lines)):
        if lines[k]:
            row = next(csv.reader([lines[k]]))
            assert _csv_line(row) == lines[k]
            if edit(head, row):
                lines[k] = _csv_line(row)
                n += 1
    path.write_bytes(eol.join(lines).encode())
    return n


def _text_kernel_lengthened(export: Path, start: str, us: Decimal, after: str = "Free") -> None:
    """Make the kernel of a text export (a copy) starting at ``start`` ``us`` longer, into the idle time after it
    (``after``: the Overlap Analysis event that follows it, "Free", or "Communication(Not Overlapped)" where a
    collective runs on): its trace_view.json event and Overlap Analysis Computing event grow, the event after it
    starts later and shrinks; kernel_details.csv's Duration grows and the next kernel's Wait Time on its stream
    shrinks; op_statistic.csv's figures of its type follow."""
    out = export / "ASCEND_PROFILER_OUTPUT"
    text = (out / "trace_view.json").read_bytes().decode()
    objects = list(_objects(text))
    process = {o["pid"]: o["args"]["name"] for _, _, o in objects
               if o.get("ph") == "M" and o.get("name") == "process_name"}
    at = Decimal(start)
    spans = {}
    for s, e, o in objects:
        lane = process.get(o.get("pid"))
        if o.get("ph") == "X" and lane in ("Ascend Hardware", "Overlap Analysis") and Decimal(str(o["ts"])) == at:
            spans[(lane, o["name"] if lane == "Overlap Analysis" else "kernel")] = (s, e, o)
    assert set(spans) == {("Ascend Hardware", "kernel"), ("Overlap Analysis", "Computing")}, spans
    busy_end = at + Decimal(str(spans[("Overlap Analysis", "Computing")][2]["dur"]))
    free = [(s, e, o) for s, e, o in objects if o.get("ph") == "X" and process.get(o["pid"]) == "Overlap Analysis"
            and o["name"] == after and Decimal(str(o["ts"])) == busy_end]
    assert len(free) == 1 and Decimal(str(free[0][2]["dur"])) > us  # time without computing to grow into
    edits = [(s, e, re.sub(r'("dur": )([\d.]+)', lambda m: m.group(1) + f"{Decimal(m.group(2)) + us:f}",
                           text[s:e], count=1)) for s, e, _ in spans.values()]
    s, e, _ = free[0]
    moved = re.sub(r'("ts": ")([\d.]+)', lambda m: m.group(1) + f"{Decimal(m.group(2)) + us:f}", text[s:e], count=1)
    edits.append((s, e, re.sub(r'("dur": )([\d.]+)', lambda m: m.group(1) + f"{Decimal(m.group(2)) - us:f}",
                               moved, count=1)))
    parts, last = [], 0
    for s, e, new in sorted(edits):
        parts += [text[last:s], new]
        last = e
    (out / "trace_view.json").write_bytes("".join(parts + [text[last:]]).encode())
    state: dict = {}

    def kernel(head: list[str], row: list[str]) -> bool:
        if row[head.index("Start Time(us)")].strip() == start:
            state.update(stream=row[head.index("Stream ID")], type=row[head.index("Type")])
            row[head.index("Duration(us)")] = f"{Decimal(row[head.index('Duration(us)')]) + us:f}"
            return True
        if state.get("stream") == row[head.index("Stream ID")] and "waited" not in state:
            state["waited"] = True
            row[head.index("Wait Time(us)")] = f"{Decimal(row[head.index('Wait Time(us)')]) - us:f}"
            return True
        return False

    assert _edit_csv(out / "kernel_details.csv", kernel) == 2
    with open(out / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        durations = [Decimal(r["Duration(us)"]) for r in csv.DictReader(fh) if r["Type"] == state["type"]]

    def statistic(head: list[str], row: list[str]) -> bool:
        if row[0] != state["type"]:
            return False
        total = sum(durations)
        row[head.index("Total Time(us)")] = f"{total:f}"
        row[head.index("Max Time(us)")] = f"{max(durations):f}"
        row[head.index("Avg Time(us)")] = f"{(total / len(durations)).quantize(Decimal('0.001')):f}"
        return True

    assert _edit_csv(out / "op_statistic.csv", statistic) == 1


def _text_steps_split(export: Path) -> Decimal:
    """Cut a text export's one step (ProfilerStep#50) in two where the optimizer's zero_grad starts, as a run of
    two steps writes it: #50 ends 10 us before, #51 starts 5 us before and ends where #50 ended; kernel_details.csv
    gives the kernels from the cut on Step Id 51. Returns the cut (us)."""
    path = export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(path.read_text())
    step = next(e for e in events if e.get("name") == "ProfilerStep#50")
    cut = Decimal(next(e for e in events if str(e.get("name", "")).startswith("Optimizer.zero_grad#"))["ts"])
    start, end = Decimal(step["ts"]), Decimal(step["ts"]) + Decimal(str(step["dur"]))
    step["dur"] = float(cut - 10 - start)
    events.append({**step, "name": "ProfilerStep#51", "ts": f"{cut - 5:f}", "dur": float(end - cut + 5)})
    path.write_text(json.dumps(events))

    def later(head: list[str], row: list[str]) -> bool:
        if Decimal(row[head.index("Start Time(us)")].strip()) < cut:
            return False
        assert row[head.index("Step Id")] == "50"
        row[head.index("Step Id")] = "51"
        return True

    assert _edit_csv(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", later) > 0
    return cut


def _first_kernel(export: Path, op_type: str) -> tuple[str, Decimal]:
    with open(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["Type"] == op_type)
    return row["Start Time(us)"].strip(), Decimal(row["Duration(us)"])


def test_npu_step_regression_shows_in_its_step_only(samples, tmp_path, caplog):
    """The level-1 text export cut in two steps (#50: the forward and the loss; #51 from the optimizer's
    zero_grad on), its first MaxPool kernel (step 50) +50 us into the idle time after it. At step 50 the kernel,
    module and operator sheets hold +50 us; at step 51 none of their rows changes, while OverallMetrics and the
    waterfall, which a text export builds from the whole profile (reference-1 §1.4), hold it at both steps. The
    contributors at step 51 are then the waterfall steps, and the log line saying why named a cause this trace does
    not have (no launch flows): it now says the change lies outside the step."""
    import logging

    base, slow = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, base)
    start, dur = _first_kernel(base, "MaxPoolWithArgmaxV1")
    shutil.copytree(samples / NPU_TEXT, slow)
    _text_kernel_lengthened(slow, start, Decimal(50))
    cut = _text_steps_split(base)
    assert _text_steps_split(slow) == cut and Decimal(start) + dur < cut  # the kernel runs in step 50
    whole = {"Computing Time": 0.05, "Vector": 0.05, "Vector (No Trans)": 0.05, "Free Time": -0.05, "Free": -0.05}
    for step in (50, 51):
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            caplog.clear()
            res = compare(str(base), str(slow), base_step=step, comparison_step=step)
        om = res.sheet("OverallMetrics")
        assert {k.strip(): v for k, v in _changed(om, "Index", ("Duration(ms)", "Duration(ms).1")).items()} == whole
        assert _waterfall(res) == {"Vector": 50_000, "Free: Other": -50_000}
        kernels = res.sheet("KernelCompare")
        moved = _changed(kernels, "Kernel", ("Total Duration(us)", "Total Duration(us).1"))
        if step == 50:
            assert moved == {"MaxPoolWithArgmaxV1": 50.0}
            assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.05]]
            mods = res.sheet("ModuleCompareStatistic")
            totals = mods[mods["Operator Name"] == "[ TOTAL ]"]
            grown = {m: round(d, 6) for m, d in zip(totals["Module Name"], totals["Device Total Time Diff(ms)"],
                                                    strict=True) if round(d, 6)}
            chain = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ MaxPool2d_0".split("/")
            assert grown == {"/".join(chain[:i]): 0.05 for i in range(2, 6)}  # the MaxPool module and its ancestors
            assert "changed its device time" not in caplog.text + unexplained_note(res.contributors, res.waterfall)
        else:
            assert moved == {} and "ModuleCompareStatistic" not in res.sheet_names
            ops = res.sheet("OperatorCompareStatistic")
            assert len(ops) and _changed(ops, "Operator Name", ("Base Device Duration(ms)",
                                                                "Comparison Device Duration(ms)")) == {}
            assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["Vector", 0.05], ["Free: Other", -0.05]]
            note = unexplained_note(res.contributors, res.waterfall)  # on every face, under the steps
            why = ("no operator of the step asked for changed its device time, but the time breakdown of both sides "
                   "covers the whole profile (a text export's ignores the step), so its change lies outside that "
                   "step; the contributors are the waterfall steps, of the whole profile")
            # whole: no side's step to set it against (that is where one text side faces a DB side's step)
            assert res.contributors.attrs["fallback"] == why and note.startswith(why)
            assert "launch flows" not in note and "changed its device time" not in caplog.text


def test_step_of_one_text_side_against_a_db_side_names_that_side(samples, tmp_path):
    """The level-1 text export against the level-1 DB export (separate runs), step 50 on both, neither linking a
    kernel to an operator (the trace's async_npu flows and the DB's CONNECTION_IDS rows removed): every operator row
    of the step is 0 ms on both sides, while the time breakdowns differ, the text side's the whole profile's
    (136.581009 ms, reference pair 1's base E2E), the DB side's its step's (its tasks' span in STEP_TIME, 137.919295
    ms, of a profile 171.971 ms long). The contributors are the waterfall steps, and the note says which side's
    breakdown covers the whole profile: the text side's alone, as base or as comparison, not "both sides" (mutant S6
    of session 52's audit; both sides text: ``test_npu_step_regression_shows_in_its_step_only``)."""
    text, db = tmp_path / "text" / "rank0_ascend_pt", tmp_path / "db" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, text)
    trace = text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    kept = [e for e in events if not (e.get("cat") == "async_npu" and e.get("ph") in ("s", "f"))]
    assert len(events) - len(kept) == 420
    trace.write_text(json.dumps(kept))
    shutil.copytree(samples / NPU_DB, db)
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    assert sql(src, "SELECT COUNT(*) FROM CONNECTION_IDS") == [(563,)]
    edited_copy(src, db / "ASCEND_PROFILER_OUTPUT" / src.name, "DELETE FROM CONNECTION_IDS")
    ((s50, e50),) = sql(src, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")
    ((span,),) = sql(src, "SELECT MAX(endNs) - MIN(startNs) FROM TASK WHERE startNs BETWEEN ? AND ?", (s50, e50))
    assert span == 137_919_295 and sql(src, "SELECT MAX(endNs) - MIN(startNs) FROM TASK") == [(171_971_496,)]
    for base, comp, side, other, ends in ((text, db, "base", "comparison", (136_581_009, span)),
                                          (db, text, "comparison", "base", (span, 136_581_009))):
        res = compare(str(base), str(comp), base_step=50, comparison_step=50)
        wf = res.waterfall
        assert (int(wf["Base(ns)"].iloc[0]), int(wf["Comparison(ns)"].iloc[-1])) == ends
        mods = res.sheet("ModuleCompareStatistic")  # no kernel on any operator: 0 ms on both sides
        assert len(mods) and not np.nansum(np.abs(mods.iloc[:, [6, 8, 10, 12]].astype(float).to_numpy()))
        assert set(res.contributors["Level"]) == {"category"}
        why = ("no operator of the step asked for changed its device time, but the time breakdown of the "
               f"{side} side covers the whole profile (a text export's ignores the step), so its change lies outside "
               f"that step; the contributors are the waterfall steps, of the whole profile against the {other} side's "
               "step")
        assert res.contributors.attrs["fallback"] == why
        assert unexplained_note(res.contributors, wf) == why
        assert f"Note: {why}." in render_explain(res.frames).splitlines()


def _db_steps_split(db: Path, cut: int) -> None:
    """Cut a DB export's one step (a copy) in two at ``cut`` (ns), as a run of two steps writes it: STEP_TIME and the
    PYTORCH_API ProfilerStep# marker of #50 end 10 us before, #51's start 5 us before and end where #50 ended."""
    con = sqlite3.connect(db)
    try:
        ((step, end),) = con.execute("SELECT id, endNs FROM STEP_TIME").fetchall()
        assert step == 50
        con.execute("UPDATE STEP_TIME SET endNs = ?", (cut - 10_000,))
        con.execute("INSERT INTO STEP_TIME VALUES (51, ?, ?)", (cut - 5_000, end))
        mark = string_id(con, "ProfilerStep#50")
        row = list(con.execute("SELECT * FROM PYTORCH_API WHERE name = ?", (mark,)).fetchone())
        assert con.execute("UPDATE PYTORCH_API SET endNs = ? WHERE name = ?", (str(cut - 10_000), mark)).rowcount == 1
        row[0], row[1], row[4] = str(cut - 5_000), str(end), string_id(con, "ProfilerStep#51")
        con.execute(f"INSERT INTO PYTORCH_API VALUES ({', '.join('?' * len(row))})", row)
        con.commit()
    finally:
        con.close()


def test_npu_db_step_regression_shows_in_its_step_only(samples, tmp_path):
    """The level-1 DB export cut in two steps where the optimizer's zero_grad starts (no task runs across it), its
    first MaxPool task (step 50) +50 us into the idle time after it (TASK; OVERLAP_ANALYSIS: its computing window
    grows, the free window after it shrinks). A DB export limits every sheet and the time breakdown to the step
    (reference-1 §7.1): at step 50 Vector, computing, KernelCompare and the MaxPool module +50 us, free -50 us, the
    step's E2E (its tasks' span) unchanged; at step 51 every sheet equals the base's own."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    ((cut,),) = sql(src, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    assert sql(src, "SELECT COUNT(*) FROM TASK WHERE startNs < ? AND endNs > ?", (cut, cut - 10_000)) == [(0,)]
    ((start, end),) = sql(src, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
                               "JOIN STRING_IDS s ON s.id = c.opType WHERE s.value = 'MaxPoolWithArgmaxV1' "
                               "ORDER BY t.startNs LIMIT 1")
    ((free,),) = sql(src, "SELECT endNs - startNs FROM OVERLAP_ANALYSIS WHERE type = 3 AND startNs = ?", (end,))
    ns = 50_000
    assert end < cut and free > ns
    sides = {}
    for name, edits in (("base", ()), ("slow", (
            f"UPDATE TASK SET endNs = endNs + {ns} WHERE startNs = {start}",
            f"UPDATE OVERLAP_ANALYSIS SET endNs = endNs + {ns} WHERE type = 0 AND endNs = {end}",
            f"UPDATE OVERLAP_ANALYSIS SET startNs = startNs + {ns} WHERE type = 3 AND startNs = {end}"))):
        side = tmp_path / name / "rank0_ascend_pt"
        shutil.copytree(samples / NPU_DB, side)
        db = side / "ASCEND_PROFILER_OUTPUT" / src.name
        edited_copy(src, db, *edits)
        _db_steps_split(db, cut)
        sides[name] = str(side)
    ((s50, e50),) = sql(db, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")
    ((span,),) = sql(src, "SELECT MAX(endNs) - MIN(startNs) FROM TASK WHERE startNs BETWEEN ? AND ?", (s50, e50))
    res = compare(sides["base"], sides["slow"], base_step=50, comparison_step=50, enable_profiling_compare=True,
                  enable_operator_compare=True, enable_kernel_compare=True)
    om = res.sheet("OverallMetrics")
    assert {k.strip(): v for k, v in _changed(om, "Index", ("Duration(ms)", "Duration(ms).1")).items()} == {
        "Computing Time": 0.05, "Vector": 0.05, "Vector (No Trans)": 0.05, "Free Time": -0.05, "Free": -0.05}
    e2e = om.set_index(om["Index"].str.strip()).loc["E2E Time", ["Duration(ms)", "Duration(ms).1"]].tolist()
    assert e2e == [span / 1e6] * 2  # the step's tasks' span, not the profile's
    assert _waterfall(res) == {"Vector": ns, "Free: Other": -ns}
    assert _changed(res.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
        "MaxPoolWithArgmaxV1": 50.0}
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.05]]
    other = compare(sides["base"], sides["slow"], base_step=51, comparison_step=51)
    same = compare(sides["base"], sides["base"], base_step=51, comparison_step=51)
    assert other.sheet_names == same.sheet_names and "OverallMetrics" in other.sheet_names
    for name in other.sheet_names:
        if name != "Summary":
            assert other.sheet(name).equals(same.sheet(name)), name
    assert not _waterfall(other) and not len(other.contributors)


def test_two_regressions_at_once_are_each_attributed_and_add_up(samples, tmp_path):
    """Three edits of the level-1 text export at once: the first MaxPool kernel (in DistributedDataParallel.forward)
    +50 us and the LogSoftmax kernel (in the loss) +150 us, each into the idle time after it, and 300 us of idle
    device time inserted in the longest idle stretch before the all-reduce (every later device event 300 us later).
    The waterfall: Vector +0.200 ms, Free +0.100 ms, E2E +0.300 ms, the steps adding up to it to the ns; the
    operator contributors share the operators' +0.200 ms as 150 : 50 (75 %, 25 %), the kernel sheet moves the two
    kernels' rows only; swapped, every figure changes sign."""
    one, two, gap = Decimal(50), Decimal(150), Decimal(300)
    tmp = tmp_path / "tmp" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, tmp)
    pool, _ = _first_kernel(tmp, "MaxPoolWithArgmaxV1")
    soft, _ = _first_kernel(tmp, "LogSoftmaxV2")
    _text_kernel_lengthened(tmp, pool, one)
    _text_kernel_lengthened(tmp, soft, two)
    events = json.loads((samples / NPU_TEXT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_bytes(),
                        parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    first_comm = min(Decimal(e["ts"]) for e in events if e.get("ph") == "X" and process[e["pid"]] == "HCCL")
    idle = max((e for e in events if e.get("ph") == "X" and process[e["pid"]] == "Overlap Analysis"
                and e["name"] == "Free" and Decimal(e["ts"]) + e["dur"] < first_comm), key=lambda e: e["dur"])
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    grown = _device_time_inserted(tmp, slow, Decimal(idle["ts"]) + idle["dur"] / 2, gap)
    assert grown == ["Overlap Analysis: Free"]  # the gap lies in idle time only
    for sign, (base, comp) in ((1, (samples / NPU_TEXT, slow)), (-1, (slow, samples / NPU_TEXT))):
        res = compare(str(base), str(comp))
        ns = {k: sign * int(v * 1000) for k, v in {"Vector": one + two, "Free: Other": gap - one - two}.items()}
        wf = _waterfall(res)
        assert wf == {**ns, "Comparison E2E": sign * int(gap * 1000)}
        assert sum(v for k, v in wf.items() if k != "Comparison E2E") == wf["Comparison E2E"]  # the steps add up
        contrib = {r["Name"]: (r["Diff(ms)"], pytest.approx(r["Share"])) for _, r in res.contributors.iterrows()}
        assert contrib == {"aten::cross_entropy_loss": (sign * float(two) / 1000, float(two / (one + two))),
                           "DistributedDataParallel.forward": (sign * float(one) / 1000, float(one / (one + two)))}
        assert res.contributors["Name"].tolist()[0] == "aten::cross_entropy_loss"  # ranked by the size of the change
        assert _changed(res.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
            "MaxPoolWithArgmaxV1": sign * float(one), "LogSoftmaxV2": sign * float(two)}


# --------------------------------------------------------------------------- GPU base against NPU comparison

def _gpu_op_kernels_us(name: str) -> list[Decimal]:
    """Device µs of each ``name`` cpu op of the AlexNet GPU trace, in start order, from its raw events: the kernels
    and memcpys whose launch (cuda runtime / driver call on the op's thread, within the op) has their correlation
    id; memsets are not counted (reference-1 §5.6: never collected)."""
    events = json.loads(gzip.decompress(ALEXNET.read_bytes()), parse_float=Decimal)["traceEvents"]
    device = {e["args"]["correlation"]: e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
    ops = sorted((e for e in events if e.get("cat") == "cpu_op" and e["name"] == name), key=lambda e: e["ts"])
    return [sum((device[e["args"]["correlation"]]["dur"] for e in events
                 if e.get("cat") in ("cuda_runtime", "cuda_driver") and e["tid"] == op["tid"]
                 and op["ts"] <= e["ts"] <= op["ts"] + op["dur"] and e["args"].get("correlation") in device),
                Decimal(0)) for op in ops]


def test_npu_cube_kernel_against_the_gpu_run_is_attributed_to_matmul_and_the_paired_linear(samples, tmp_path):
    """The GPU -> NPU migration pair (the H200 AlexNet trace as base, the NPU level-1 text export of the same loop as
    comparison), with the NPU's Cube MatMulV2 kernel of the second classifier Linear (aclnnAddmm, 32x4096 by
    4096x4096) 25 ms longer: 25 ms of device time inserted at its end, every later device event 25 ms later. Against
    the untouched pair, only the NPU side's Matmul (Cube), Matmul, Computing and E2E move (+25 ms) on OverallMetrics
    and the waterfall; on the module sheets only that Linear's aten::linear row (GPU: its kernels' 97.569 us from the
    raw trace; NPU: the MatMulV2's 114.922 us + 25 ms) and its ancestors' comparison totals. The +25 ms makes
    DistributedDataParallel.forward the second operator contributor, and the module contributors open it up to that
    one row, paired across vendors. Swapped (NPU base, GPU comparison), every figure changes sign."""
    us = Decimal(25000)
    with open(samples / NPU_TEXT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        (mm,) = [r for r in csv.DictReader(fh)
                 if r["Type"] == "MatMulV2" and r["Input Shapes"] == '"32,4096;4096,4096;4096"']
    assert float(mm["aicore_time(us)"]) > 0  # a Cube kernel (reference-1 §5.3)
    npu_us = Decimal(mm["Duration(us)"])
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    grown = _device_time_inserted(samples / NPU_TEXT, slow, Decimal(mm["Start Time(us)"].strip()) + npu_us, us)
    assert sorted(grown) == ["Ascend Hardware: aclnnAddmm_MatMulCommon_MatMulV2", "Overlap Analysis: Computing",
                             "kernel_details: aclnnAddmm_MatMulCommon_MatMulV2"]  # no collective runs across it
    gpu_us = _gpu_op_kernels_us("aten::linear")[1]  # the forward's three Linears, in order: this is Linear_1
    ms = float(us) / 1000

    before = compare(str(ALEXNET), str(samples / NPU_TEXT))
    after = compare(str(ALEXNET), str(slow))
    wf0, wf1 = _waterfall(before), _waterfall(after)
    assert {k: wf1.get(k, 0) - wf0.get(k, 0) for k in wf0.keys() | wf1.keys() if wf1.get(k) != wf0.get(k)} == {
        "Matmul": int(us * 1000), "Comparison E2E": int(us * 1000)}
    om0, om1 = _rows(before.sheet("OverallMetrics")), _rows(after.sheet("OverallMetrics"))
    assert all(om0[k][1:4] == om1[k][1:4] for k in om0)  # the GPU side's figures: untouched
    assert {k: round(om1[k][4] - om0[k][4], 6) for k in om0 if om1[k][4] != om0[k][4]} == {
        "Matmul (Cube)": ms, "Matmul": ms, "Computing Time": ms, "E2E Time": ms}

    def module_rows(res) -> dict:
        stat = res.sheet("ModuleCompareStatistic")
        return {(m.strip(), o): (b, c) for m, o, b, c in zip(stat["Module Name"], stat["Operator Name"],
                                                              stat["Device Total Time(ms)"],
                                                              stat["Device Total Time(ms).1"], strict=True)}
    rows0, rows1 = module_rows(before), module_rows(after)
    linear = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_1"
    moved = {k: round(rows1[k][1] - rows0[k][1], 6) for k in rows0  # a blank is NaN, which equals nothing
             if not np.array_equal(rows1[k], rows0[k], equal_nan=True)}
    assert moved == {(m, "[ TOTAL ]"): ms for m in ("/ DistributedDataParallel_0", "/ DistributedDataParallel_0/ "
                     "AlexNet_0", "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1", linear)}
    assert all(np.array_equal(rows1[k][0], rows0[k][0], equal_nan=True) for k in rows0)  # no base (GPU) figure moves
    stat = after.sheet("ModuleCompareStatistic")
    (row,) = stat[(stat["Module Name"].str.strip() == linear) & (stat["Operator Name"] == "aten::linear")].itertuples(
        index=False)
    assert (row[6], row[10]) == (pytest.approx(float(gpu_us) / 1000, abs=1e-9),
                                 pytest.approx(float(npu_us + us) / 1000, abs=1e-9))

    ddp = "/ DistributedDataParallel_0"  # DistributedDataParallel.forward's device time is its module's
    forward_diff = round(rows0[(ddp, "[ TOTAL ]")][1] - rows0[(ddp, "[ TOTAL ]")][0] + ms, 6)
    assert before.contributors["Name"].tolist() == [
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"]  # the all-reduce, on the NPU only
    for sign, res in ((1, after), (-1, compare(str(slow), str(ALEXNET)))):
        contrib = res.contributors
        assert contrib["Name"].tolist() == ["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
                                            "DistributedDataParallel.forward"]
        assert contrib["Diff(ms)"].tolist()[1] == pytest.approx(sign * forward_diff, abs=1e-9)
        mods = res.module_contributors
        assert mods["Name"].tolist() == [f"{linear} > aten::linear"]
        gpu_ms, npu_ms = float(gpu_us) / 1000, float(npu_us + us) / 1000
        assert mods[["Base(ms)", "Comparison(ms)", "Diff(ms)"]].values.tolist()[0] == pytest.approx(
            [gpu_ms, npu_ms, npu_ms - gpu_ms] if sign > 0 else [npu_ms, gpu_ms, gpu_ms - npu_ms], abs=1e-6)
        assert module_contributors_note(mods).startswith(
            "The module rows hold all of the time of DistributedDataParallel.forward")
        if sign < 0:
            wf = _waterfall(res)
            assert (wf["Matmul"], wf["Comparison E2E"]) == (-wf1["Matmul"], -wf1["Comparison E2E"])
    assert after.sheet("ApiCompare").equals(before.sheet("ApiCompare"))
    assert after.sheet("MemoryCompare").equals(before.sheet("MemoryCompare"))


def test_op_name_map_pairs_a_gpu_op_with_its_npu_namesake_and_the_pair_shows_an_injection(samples, tmp_path):
    """The GPU -> NPU pair compared op by op (``--disable_module``): the dropout backward op is
    ``autograd::engine::evaluate_function: NativeDropoutBackward0`` on the GPU and ``...: NpuDropoutBackward0`` on
    the NPU, so each call is two rows with a blank side; ``--op_name_map`` pairing the names makes them one row
    (reference-2 §0.4), while OperatorCompareStatistic keeps one row per name and side (§2.7, the pairing is not
    used). The NPU's first backward DropOutDoMask kernel 50 us longer (into the uncovered all-reduce after it): the
    paired row's NPU side grows by 50 us against the GPU kernel's own figure from the raw trace; the NPU name's
    statistic row +0.050 ms; OverallMetrics: Vector (No Trans) and Computing +0.050 ms, Uncovered Communication
    -0.050 ms, E2E unchanged."""
    gpu, npu = (f"autograd::engine::evaluate_function: {n}DropoutBackward0" for n in ("Native", "Npu"))
    names = {gpu: npu}
    us = Decimal(50)
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, slow)
    with open(slow / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        masks = [r for r in csv.DictReader(fh) if r["Type"] == "DropOutDoMask"]
    assert len(masks) == 4  # two forward, two backward (the last two)
    start, npu_us = masks[2]["Start Time(us)"].strip(), Decimal(masks[2]["Duration(us)"])
    _text_kernel_lengthened(slow, start, us, after="Communication(Not Overlapped)")
    gpu_us = _gpu_op_kernels_us(gpu)[0]

    plain = compare(str(ALEXNET), str(samples / NPU_TEXT), disable_module=True)
    ops = plain.sheet("OperatorCompare")
    assert ops["Operator Name"].tolist().count(gpu) == 2 and ops["Operator Name.1"].tolist().count(npu) == 2
    assert not ((ops["Operator Name"] == gpu) & (ops["Operator Name.1"] == npu)).any()  # unpaired without the map
    before = compare(str(ALEXNET), str(samples / NPU_TEXT), disable_module=True, op_name_map=names)
    after = compare(str(ALEXNET), str(slow), disable_module=True, op_name_map=names)

    def pairs(res) -> list:
        ops = res.sheet("OperatorCompare")
        return ops[(ops["Operator Name"] == gpu) & (ops["Operator Name.1"] == npu)][
            ["Device Duration(us)", "Device Duration(us).1", "Diff Duration(us)"]].values.tolist()
    assert len(pairs(before)) == 2
    assert pairs(before)[0] == pytest.approx([float(gpu_us), float(npu_us), round(float(npu_us - gpu_us), 2)])
    assert pairs(after) == [pytest.approx([float(gpu_us), float(npu_us + us), round(float(npu_us + us - gpu_us), 2)]),
                            pairs(before)[1]]
    b_ops, a_ops = before.sheet("OperatorCompare"), after.sheet("OperatorCompare")
    diff = {i: round(a - b, 6) for i, b, a in zip(b_ops["Order Id"], b_ops["Device Duration(us).1"],
                                                 a_ops["Device Duration(us).1"], strict=True) if a != b}
    assert list(diff.values()) == [float(us)]  # that row only

    stat0, stat1 = (_rows(r.sheet("OperatorCompareStatistic"), "Operator Name") for r in (before, after))
    assert {k: round(stat1[k][4] - stat0[k][4], 6) for k in stat0 if stat1[k][4] != stat0[k][4]} == {
        npu: float(us) / 1000}
    assert stat0[npu][2:4] == (0, 0) and stat0[gpu][4:6] == (0, 0)  # one row per name and side
    om0, om1 = _rows(before.sheet("OverallMetrics")), _rows(after.sheet("OverallMetrics"))
    ms = float(us) / 1000
    assert {k: round(om1[k][4] - om0[k][4], 6) for k in om0 if om1[k][4] != om0[k][4]} == {
        "Computing Time": ms, "Vector": ms, "Vector (No Trans)": ms, "Uncovered Communication Time": -ms,
        "Group 0 Communication": -ms, "Transmit": -ms}
    assert _waterfall(after)["Comparison E2E"] == _waterfall(before)["Comparison E2E"]
