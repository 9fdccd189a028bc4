"""Known regressions, injected into copies of real profiles, are attributed where they were put and nowhere else.

Each test edits one thing of a real input (in ``tmp_path``; the originals are never written), in every file that
records it, as the profiler would have written it, and compares the untouched input (base) with the edited copy:

* a GPU kernel lengthened into the idle time after it (AlexNet on an H200, MaxPool2d's forward kernel, three
  launches, each +30 us);
* a straggling peer in an NPU text export: one Notify_Wait of the last HCCL all-reduce +1 ms, every later device
  event moved by 1 ms (msinsight level 1, rank 0);
* the same in a DB export, on the plane whose waits the spec's wait rule reads (reference-1 §7.3 7).

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

import pytest
from dbutil import edited_copy, sql  # tests/ is on sys.path (rootdir import mode)

from msprof_compare.api import compare
from msprof_compare.compare.summary import module_contributors_note, outside_modules_line
from msprof_compare.report.summary_console import render_explain

ALEXNET = Path(__file__).resolve().parent / "data" / "kineto" / \
    "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU_DB = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
_MAXPOOL = "max_pool_forward_nchw"


def _rows(frame, column: str = "Index") -> dict:
    return {str(k).strip(): r for k, r in zip(frame[column], frame.itertuples(index=False), strict=True)}


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
    assert summary.outside_modules == [] and summary.around_modules == ["DistributedDataParallel.forward"]
    assert outside_modules_line(summary.outside_modules, summary.outside_held, summary.around_modules) == (
        "Run around modules from inside one (so its own row on the module sheets holds only the kernels launched "
        "outside those modules), whose rows hold this much of its time: DistributedDataParallel.forward (all of "
        "it); --disable_module writes every operator's row (OperatorCompareStatistic).")
    # and the module contributors open it up: the three module rows that grew, with their kernels' own figures
    mods = res.module_contributors
    path = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ MaxPool2d_{} > aten::max_pool2d"
    assert mods["Name"].tolist() == [path.format(i) for i in range(3)]
    assert mods["Level"].tolist() == ["module operator"] * 3 and mods["Diff(ms)"].tolist() == [0.03] * 3
    assert mods["Base(ms)"].tolist() == pytest.approx(base_kernels, abs=1e-9)
    assert mods["Comparison(ms)"].tolist() == pytest.approx([k + 0.03 for k in base_kernels], abs=1e-9)
    assert mods["Cumulative Share"].tolist() == pytest.approx([1 / 3, 2 / 3, 1])
    assert module_contributors_note(mods) == (
        "The module rows hold all of the time of DistributedDataParallel.forward, which runs modules: the module "
        "contributors show which of those rows changed")
    assert not res.memory_contributors.shape[0] and res.sheet("ApiCompare")["Total Duration(ms)"].equals(
        res.sheet("ApiCompare")["Total Duration(ms).1"])

    # the console prints the lead and the table under the contributors, names cut from the left (the operator
    # is at the end); the JSON carries the frame and the lead as they are
    text = render_explain(res.frames, res.verdict)
    lead = text.index("The module rows hold all of the time of DistributedDataParallel.forward")
    assert text.index("Top Contributors (operator level") < lead < text.index(
        "Top Module Contributors (module operator level: 3 rows cover 100.0% of the module operators' device-time "
        "change)")
    assert "| 1 | ...Parallel_0/ AlexNet_0/ Sequential_0/ MaxPool2d_0 > aten::max_pool2d |    0.026 |          0.056 |"\
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


def _last_allreduce_wait(trace: Path) -> tuple[dict, dict]:
    """The last HCCL op of the trace and the longest Notify_Wait task within it."""
    events = json.loads(trace.read_bytes(), parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    lane = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"}
    hccl = [e for e in events if e.get("ph") == "X" and process.get(e["pid"]) == "HCCL"]
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
    rows = {(r[1], r[2]): r for r in comm.itertuples(index=False)}
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
    rows = {(r[1], r[2]): r for r in comm.itertuples(index=False)}
    assert rows[("allreduce", None)][15] == 1000
    assert {k[1] for k, r in rows.items() if k[0] == "|" and round(r[11] - r[4], 6)} == {"Notify_Wait"}
    assert res.contributors["Level"].unique().tolist() == ["category"]
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [
        ["90.91.105.46%enp189s0f0_60000_0 (uncovered)", 1.0]]
