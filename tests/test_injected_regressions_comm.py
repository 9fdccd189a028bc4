"""Known regressions injected into the communication of real NPU exports: what moves, where, by how much.

Each test edits a copy of the level-1 AlexNet exports (text and DB, ``msinsight/test/data/pytorch``) as the
profiler would have written the change, and compares the untouched export with the edited one, both ways round
where the sign matters:

* one collective's transit size doubled at the same transit time (communication.json: its own block and the
  ``Total Op Info`` sum): only the console's SDMA Bandwidth cell moves (reference-1 §5.9: size / time of the
  total block, MB/ms = GB/s, 3 decimals); no sheet, no OverallMetrics row, no note;
* one collective's transit longer at the same size (a Reduce_Inline task 500 us longer on the device timeline,
  and its transit time in communication.json): the bandwidth drops to size / (time + 0.5 ms), and the op row, the
  task row, the communication rows of OverallMetrics and E2E move by the 500 us;
* one collective renamed (``hcom_allReduce_`` -> ``hcom_broadcast_``, text and DB): the op rows split as
  reference-2 §4.2 / §4.3 say (a comparison-only ``broadcast`` row with its own task rows), communication time
  unchanged;
* the wait / transit split of one task pair moved (a Notify_Wait 500 us longer, the Memcpy after it on the same
  plane 500 us shorter, DB export's read plane): Wait +0.5 ms, Transmit -0.5 ms, the group's row, the
  uncovered communication and E2E unchanged.

Expected figures are read from the raw files (Decimal JSON, SQL), never from the tool's output.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
from dbutil import edited_copy, sql, string_id  # tests/ is on sys.path (rootdir import mode)
from spans import union
from test_injected_regressions import NPU_DB, NPU_TEXT, _device_time_inserted, _hccl_events, _objects, _rows

from msprof_compare.api import compare
from msprof_compare.report.json_report import to_document

_OP = "hcom_allReduce__586_1_1"  # the second all-reduce of the text export (2281.106 us, 74 tasks)
_KEY = f"{_OP}@17522688603477080586"
_BW_KINDS = ("HCCS", "SDMA")  # the on-chip transport of this 8-rank job: both blocks hold the same figures
_DB_FILE = "ascend_pytorch_profiler_0.db"


def _comm_json(export: Path) -> Path:
    return export / "ASCEND_PROFILER_OUTPUT" / "communication.json"


def _load(path: Path) -> dict:
    return json.loads(path.read_bytes(), parse_float=Decimal)


def _write_decimal_json(doc: dict, path: Path) -> None:
    """JSON with every Decimal written as the number it is (not a float's nearest repr, not a string)."""
    text = json.dumps(doc, default=lambda d: f"@@{d:f}@@")
    path.write_text(re.sub(r'"@@(-?[0-9.]+)@@"', r"\1", text))


def _bandwidth_cells(res) -> dict[str, list[str]]:
    """The console table's bandwidth columns: header -> [base cell, comparison cell]."""
    s = res.summary
    heads = list(s["headers"])
    return {h: [row[heads.index(h)] for row in s["rows"]] for h in heads if "Bandwidth" in h}


def _gbps(size: Decimal, time: Decimal) -> str:
    """reference-1 §5.9 / §10: MB / ms = GB/s, console ``{v:.3f}GB/s`` (half-even on the exact quotient is the
    same here: no quotient of these samples sits on a half)."""
    return f"{size / time:.3f}GB/s"


def _frames_equal(a, b) -> list[str]:
    """The sheets whose frames differ between two results."""
    out = []
    for name in a.sheet_names:
        fa, fb = a.sheet(name), b.sheet(name)
        if not fa.equals(fb):  # equals() takes blanks (None, NaN) in the same cells as equal
            out.append(name)
    return out


def _total_block(doc: dict) -> dict:
    (step,) = doc.values()
    return step["collective"]["Total Op Info"]["Communication Bandwidth Info"]


# --------------------------------------------------------------------------- 1. transit size doubled

def test_transit_size_doubled_moves_the_sdma_bandwidth_cell_and_nothing_else(samples, tmp_path):
    """hcom_allReduce__586_1_1 moved twice the data (117.440512 MB -> 234.881024 MB on its SDMA and HCCS blocks,
    the Total Op Info sums +117.440512 MB) in the same 9.0886 ms of transit: the total SDMA bandwidth reads
    427.596096 / 27.315705875 = 15.654 GB/s before and 545.036608 / 27.315705875 = 19.953 GB/s after (more data
    in the same time: the bandwidth rises, it does not halve). RDMA moved nothing on either side, so no RDMA
    column. Every sheet, the communication totals and the notes are those of the export against itself: the
    durations did not change."""
    src = samples / NPU_TEXT
    doc = _load(_comm_json(src))
    total = _total_block(doc)
    op = doc["step50"]["collective"][_KEY]["Communication Bandwidth Info"]
    size, time = total["SDMA"]["Transit Size(MB)"], total["SDMA"]["Transit Time(ms)"]
    grown = op["SDMA"]["Transit Size(MB)"]
    assert (size, grown) == (Decimal("427.59609599999993"), Decimal("117.44051199999998"))
    for kind in _BW_KINDS:
        op[kind]["Transit Size(MB)"] += grown
        total[kind]["Transit Size(MB)"] += grown
    big = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, big)
    _write_decimal_json(doc, _comm_json(big))
    assert _total_block(_load(_comm_json(big)))["SDMA"]["Transit Size(MB)"] == size + grown

    same = compare(str(src), str(src))
    before, after = _gbps(size, time), _gbps(size + grown, time)
    assert (before, after) == ("15.654GB/s", "19.953GB/s")
    for a, b, cells in ((src, big, [before, after]), (big, src, [after, before])):
        res = compare(str(a), str(b))
        assert _bandwidth_cells(res) == {"SDMA Bandwidth": cells}
        assert _frames_equal(res, same) == []
        assert res.communication_totals == same.communication_totals
        assert res.summary["notes"] == same.summary["notes"]
        # the console table differs from the export against itself in that one cell alone
        moved = [(i, h, x) for i, (row_a, row_b) in enumerate(zip(res.summary["rows"], same.summary["rows"],
                                                                   strict=True))
                 for h, x, y in zip(res.summary["headers"], row_a, row_b, strict=True) if x != y]
        assert moved == [(1 if a == src else 0, "SDMA Bandwidth", after)]


# --------------------------------------------------------------------------- 2. transit time longer

def test_transit_longer_at_the_same_size_lowers_the_bandwidth_and_moves_its_task_row(samples, tmp_path):
    """The plane-1 Reduce_Inline of hcom_allReduce__586_1_1 (727.7345 us, 8404992 bytes) 500 us longer, the rest of
    the device timeline 500 us later, and communication.json saying so (the op's and the total's SDMA / HCCS transit
    time +0.5 ms, sizes unchanged): SDMA bandwidth 427.596096 / 27.815705875 = 15.372 GB/s (was 15.654);
    CommunicationCompare's allreduce +500 us (Diff Duration 500.0, its Min now the next shortest op, 2402.388 us),
    its Reduce_Inline task row +3500 us (the seven planes reduce in parallel: the six
    others run across that end and wait for it) and no other task row; KernelCompare's hcom_allReduce_ +500 us;
    OverallMetrics' uncovered communication, Group 0, Transmit and E2E +0.5 ms (the 500 us lie in a not-overlapped
    window), no Wait row (the spec's wait reads Plane 0, which never waits)."""
    src = samples / NPU_TEXT
    lane, hccl = _hccl_events(src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    ops = sorted((e for e in hccl if "Communication" in lane[(e["pid"], e["tid"])]), key=lambda e: Decimal(e["ts"]))
    (op,) = [e for e in ops if e["name"] == _OP]
    start, end = Decimal(op["ts"]), Decimal(op["ts"]) + op["dur"]
    (task,) = [e for e in hccl if e["name"] == "Reduce_Inline" and lane[(e["pid"], e["tid"])] == "Plane 1"
               and start <= Decimal(e["ts"]) <= end]
    assert (task["dur"], task["args"]["size(Byte)"]) == (Decimal("727.7345"), 8404992)
    us = Decimal(500)
    slow = tmp_path / "rank0_ascend_pt"
    grown = _device_time_inserted(src, slow, Decimal(task["ts"]) + task["dur"], us)
    # the seven planes reduce in parallel: the six others' Reduce_Inline run across that end and grow with it (the
    # slow link holds them all); no computing runs there, so the 500 us are uncovered
    tasks_grown = {n: grown.count(f"HCCL: {n}") for n in {g[6:] for g in grown if g.startswith("HCCL: ")}}
    assert tasks_grown == {_OP: 1, "Reduce_Inline": 7}, grown
    assert not [g for g in grown if g.startswith("Overlap Analysis: Comput")]
    doc = _load(_comm_json(src))
    info = doc["step50"]["collective"][_KEY]
    total = _total_block(doc)
    ms = us / 1000
    for kind in _BW_KINDS:
        info["Communication Bandwidth Info"][kind]["Transit Time(ms)"] += ms
        total[kind]["Transit Time(ms)"] += ms
    for block in (info["Communication Time Info"], doc["step50"]["collective"]["Total Op Info"][
            "Communication Time Info"]):
        block["Transit Time(ms)"] += ms
        block["Elapse Time(ms)"] += ms
    _write_decimal_json(doc, _comm_json(slow))
    size, time = total["SDMA"]["Transit Size(MB)"], total["SDMA"]["Transit Time(ms)"]
    before, after = _gbps(size, time - ms), _gbps(size, time)
    assert (before, after) == ("15.654GB/s", "15.372GB/s")

    durs = sorted(round(e["dur"], 3) for e in ops)  # times are read to the ns
    reduce_total = sum((round(e["dur"], 3) for e in hccl if e["name"] == "Reduce_Inline"), Decimal(0))
    for sign, (a, b) in ((1, (src, slow)), (-1, (slow, src))):
        res = compare(str(a), str(b))
        assert _bandwidth_cells(res) == {"SDMA Bandwidth": [before, after] if sign > 0 else [after, before]}
        rows = {(_cell(r[1]), _cell(r[2])): r for r in res.sheet("CommunicationCompare").itertuples(index=False)}
        moved = {k: round(r[11] - r[4], 3) for k, r in rows.items() if round(r[11] - r[4], 3)}
        assert moved == {("allreduce", None): sign * 500.0, ("|", "Reduce_Inline"): sign * 7 * 500.0}
        row = rows[("allreduce", None)]
        slow_side, plain_side = (row[10:15], row[3:8]) if sign > 0 else (row[3:8], row[10:15])
        assert [slow_side[0], slow_side[1], slow_side[4]] == [4, float(sum(durs) + us), float(durs[1])]
        assert [plain_side[0], plain_side[1], plain_side[4]] == [4, float(sum(durs)), float(durs[0])]
        assert (row[15], row[16]) == (sign * 500.0, float(round((sum(durs) + us) / sum(durs), 4)) if sign > 0
                                      else float(round(sum(durs) / (sum(durs) + us), 4)))
        task_row = rows[("|", "Reduce_Inline")]
        assert sorted([task_row[4], task_row[11]]) == [float(reduce_total), float(reduce_total + 7 * us)]
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == {k: sign * 0.5 for k in (
            "Uncovered Communication Time", "Group 0 Communication", "Transmit", "E2E Time")}
        assert "Wait" not in om
        kernels = res.sheet("KernelCompare")
        hcom = kernels[kernels["Kernel"] == "hcom_allReduce_"]
        assert round(float(hcom["Total Duration(us).1"].iloc[0] - hcom["Total Duration(us)"].iloc[0]), 3) == \
            sign * 500.0


# --------------------------------------------------------------------------- 3. a collective renamed

def _family(name: str) -> str | None:
    """reference-2 §4.2: lower-case, split on "_"; under 2 pieces no op; ``hcom`` -> the second piece."""
    parts = name.lower().split("_")
    if len(parts) < 2:
        return None
    return parts[1] if parts[0] == "hcom" else parts[0]


def _side(ops: list[tuple], tasks: list[tuple], by_op: bool) -> dict[str, tuple[list, dict]]:
    """family -> (op durations, task name -> durations), each in time order. ``ops``: (start, dur, name, id);
    ``tasks``: (start, dur, name, op id). Text (``by_op`` False): the forward-moving task pointer of §4.2; DB:
    by op id."""
    out: dict[str, tuple[list, dict]] = {}
    ops, tasks = sorted(ops), sorted(tasks)
    i = 0
    for start, dur, name, oid in ops:
        key = _family(name)
        if key is None:
            continue
        durs, named = out.setdefault(key, ([], {}))
        durs.append(dur)
        if by_op:
            mine = [t for t in tasks if t[3] == oid]
        else:
            while i < len(tasks) and tasks[i][0] < start:
                i += 1
            mine = []
            while i < len(tasks) and tasks[i][0] <= start + dur:
                mine.append(tasks[i])
                i += 1
        for t in mine:
            named.setdefault(t[2], []).append(t[1])
    return out


def _cells(durs: list | None) -> list:
    if not durs:
        return [None, None, None, 0.0, None, None, None]
    total = sum(durs, Decimal(0))
    return [len(durs), float(total), float(total / len(durs)), float(max(durs)), float(min(durs))]


def _expected_rows(base: dict, comp: dict) -> list[list]:
    """CommunicationCompare's rows as reference-2 §4.3 builds them (without Order Id)."""
    def op_side(key: str | None, d: dict) -> list:
        c = _cells(d[key][0] if key in d else None)
        return [key, None, *c] if len(c) == 5 else c

    def task_side(name: str | None, durs: list | None) -> list:
        c = _cells(durs)
        return ["|", name, *c] if len(c) == 5 else c

    def ratio(b: Decimal, c: Decimal) -> float:
        return 1.0 if not b and not c else float("inf") if not b else float(round(c / b, 4))

    rows = []
    for key in [*base, *(k for k in comp if k not in base)]:
        b_ops = base[key][0] if key in base else []
        c_ops = comp[key][0] if key in comp else []
        tb, tc = sum(b_ops, Decimal(0)), sum(c_ops, Decimal(0))
        rows.append([*op_side(key if key in base else None, base), *op_side(key if key in comp else None, comp),
                     float((tc - tb).quantize(Decimal("0.01"), ROUND_HALF_UP)), ratio(tb, tc)])
        b_tasks = list(base[key][1].items()) if key in base else []
        c_tasks = list(comp[key][1].items()) if key in comp else []
        for name, durs in b_tasks:
            other = c_tasks.pop(0) if c_tasks else (None, None)
            rows.append([*task_side(name, durs), *task_side(*other), None, None])
        for name, durs in c_tasks:
            rows.append([*task_side(None, None), *task_side(name, durs), None, None])
    return rows


def _cell(v):
    """A frame cell with a missing value (NaN, <NA>: ``sheet()`` types blank cells) as None, the blank it was."""
    return None if not isinstance(v, (list, tuple)) and pd.isna(v) else v


def _sheet_rows(res) -> list[list]:
    def norm(v):
        if isinstance(v, float) and v == v and abs(v) != float("inf"):
            return round(v, 6)
        return _cell(v)
    return [[norm(v) for v in r[1:]] for r in res.sheet("CommunicationCompare").itertuples(index=False)]


def _rounded(rows: list[list]) -> list[list]:
    return [[round(v, 6) if isinstance(v, float) and abs(v) != float("inf") else v for v in r] for r in rows]


def _text_side(export: Path) -> dict:
    lane, hccl = _hccl_events(export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    ops, tasks = [], []
    for e in hccl:  # times to the ns, as read
        item = (round(Decimal(e["ts"]), 3), round(e["dur"], 3), e["name"], None)
        (ops if "Communication" in lane[(e["pid"], e["tid"])] else tasks).append(item)
    return _side(ops, tasks, by_op=False)


def _db_side(db: Path) -> dict:
    ops = [(s, Decimal(d) / 1000, n, i) for s, d, n, i in sql(
        db, "SELECT o.startNs, o.endNs - o.startNs, t.value, o.opId FROM COMMUNICATION_OP o "
            "JOIN STRING_IDS t ON t.id = o.opType")]
    tasks = [(s, Decimal(d) / 1000, n, i) for s, d, n, i in sql(
        db, "SELECT t.startNs, t.endNs - t.startNs, s.value, c.opId FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
            "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType")]
    return _side(ops, tasks, by_op=True)


def test_collective_renamed_splits_its_op_and_task_rows_text(samples, tmp_path):
    """hcom_allReduce__586_1_1 renamed hcom_broadcast__586_1_1 (trace_view.json, kernel_details.csv Name and Type,
    communication*.json keys): allreduce 4 calls -> 3 (105991.878 -> 103710.772 us, Diff -2281.11, ratio 0.9785),
    its task rows positionally paired with the three ops' tasks; then a comparison-only broadcast row (1 call,
    2281.106 us, Diff +2281.11, ratio INF) with its 74 tasks. Communication time and OverallMetrics unchanged;
    KernelCompare's hcom_allReduce_ row loses the call a new hcom_broadcast_ row has."""
    src = samples / NPU_TEXT
    renamed = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, renamed)
    out = renamed / "ASCEND_PROFILER_OUTPUT"
    new = _OP.replace("allReduce", "broadcast")
    for f in ("trace_view.json", "communication.json", "communication_matrix.json", "kernel_details.csv"):
        raw = (out / f).read_bytes()
        assert raw.count(_OP.encode()) >= 1
        raw = raw.replace(_OP.encode(), new.encode())
        if f == "kernel_details.csv":
            assert raw.count(f"{new},hcom_allReduce_,".encode()) == 1
            raw = raw.replace(f"{new},hcom_allReduce_,".encode(), f"{new},hcom_broadcast_,".encode())
        (out / f).write_bytes(raw)
    base, comp = _text_side(src), _text_side(renamed)
    assert list(comp) == ["allreduce", "broadcast"] and len(comp["broadcast"][0]) == 1
    assert sum(len(v) for v in comp["broadcast"][1].values()) == 74
    res = compare(str(src), str(renamed))
    expected = _rounded(_expected_rows(base, comp))
    assert expected[0][-2:] == [-2281.11, 0.9785] and expected[5][7:9] == ["broadcast", None]
    assert _sheet_rows(res) == expected
    assert res.communication_contributors[["Name", "Diff(ms)"]].values.tolist() == [
        ["allreduce", -2.281106], ["broadcast", 2.281106]]
    totals = res.communication_totals
    assert (totals["base_ms"], totals["comparison_ms"], totals["diff_ms"]) == (105.991878, 105.991878, 0.0)
    same = compare(str(src), str(src))
    assert res.sheet("OverallMetrics").equals(same.sheet("OverallMetrics"))
    # KernelCompare groups kernel_details.csv by Type (reference-2 §6.1): 4 -> 3 calls, and a comparison-only row
    with (out / "kernel_details.csv").open(newline="") as f:
        hcom = {r["Name"]: float(r["Duration(us)"]) for r in csv.DictReader(f) if r["Type"].startswith("hcom_")}
    kernels = res.sheet("KernelCompare").set_index("Kernel")
    rest = [v for k, v in hcom.items() if k != new]
    assert kernels.loc["hcom_allReduce_", ["Calls", "Calls.1", "Min Duration(us).1"]].tolist() == [
        4, 3, round(min(rest), 2)]
    assert kernels.loc["hcom_broadcast_", ["Calls", "Total Duration(us)", "Calls.1", "Total Duration(us).1"]
                       ].tolist()[1:] == [0.0, 1, round(hcom[new], 2)]  # 2281.105 (float) -> 2281.11

    # the workbook: the comparison-only op row's Diff Ratio is the text INF in red, ratios as percentages, times
    # with 2 decimals (reference-2 §4.3, §7 rule 9)
    import openpyxl

    ws = openpyxl.load_workbook(res.to_excel(str(tmp_path / "wb")))["CommunicationCompare"]
    cells = {r[0].value: r for r in ws.iter_rows(min_row=4) if r[0].value is not None}
    order = 1 + next(k for k, r in enumerate(expected) if r[7] == "broadcast")
    ratio, diff, total = cells[order][16], cells[order][15], cells[order][11]
    assert (ratio.value, ratio.fill.fgColor.rgb[-6:], ratio.number_format) == ("INF", "FF0000", "0.00%")
    assert (diff.value, diff.number_format, total.number_format) == (2281.11, "#,##0.00", "#,##0.00")
    assert (cells[1][16].value, cells[1][16].number_format) == (0.9785, "0.00%")


def test_collective_renamed_splits_its_op_and_task_rows_db(samples, tmp_path):
    """The DB export's op 2 (hcom_allReduce__210_1_1) given the op type hcom_broadcast_ (COMMUNICATION_OP.opType,
    a new STRING_IDS entry, and its opName): allreduce 3 calls, a comparison-only broadcast row with the tasks of
    opId 2 (by op id, §4.2), each figure from SQL."""
    src = samples / NPU_DB
    db = src / "ASCEND_PROFILER_OUTPUT" / _DB_FILE
    renamed = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, renamed)
    target = renamed / "ASCEND_PROFILER_OUTPUT" / _DB_FILE
    con = sqlite3.connect(target)
    try:
        kind, name = string_id(con, "hcom_broadcast_"), string_id(con, "hcom_broadcast__210_1_1")
        assert con.execute("UPDATE COMMUNICATION_OP SET opType = ?, opName = ? WHERE opId = 2",
                           (kind, name)).rowcount == 1
        con.commit()
    finally:
        con.close()
    base, comp = _db_side(db), _db_side(target)
    assert list(comp) == ["allreduce", "broadcast"] and comp["broadcast"][0] == [Decimal("2180.324")]
    res = compare(str(src), str(renamed))
    expected = _rounded(_expected_rows(base, comp))
    assert expected[0][-2:] == [-2180.32, float(round(Decimal(102108100 - 2180324) / 102108100, 4))]
    assert _sheet_rows(res) == expected
    assert res.communication_totals["diff_ms"] == 0.0


# --------------------------------------------------------------------------- 4. wait / transit split moved

def test_wait_transit_split_moved_db_moves_wait_and_transmit_only(samples, tmp_path):
    """DB export, plane 1 (the read plane of reference-1 §7.3 7: least Notify_Wait, 3.690 ms; the next 5.689 ms), in
    hcom_allReduce__210_1_1: its last Notify_Wait before the Memcpy (8290304 bytes, 574.491 us) ends 500 us later
    and the Memcpy starts 500 us later, its end unchanged: the same op, the same total, 500 us moved from transit
    to waiting, inside a not-overlapped window (no compute task runs there). OverallMetrics: Wait +0.5 ms, Transmit
    -0.5 ms, the group's row, uncovered communication and E2E unchanged. CommunicationCompare: allreduce unchanged,
    Notify_Wait +500 us, Memcpy -500 us. JSON ``summary.communication``: no op change, the task that changed most
    is the first of the two equal changes in the sheet's order (Memcpy, -0.5 ms). The console's wait cell rounds to
    1 ms (seconds, 3 decimals): 2.676 -> 3.176 ms both read 0.003s."""
    src = samples / NPU_DB
    db = src / "ASCEND_PROFILER_OUTPUT" / _DB_FILE
    waits = sql(db, "SELECT c.planeId, SUM(t.endNs - t.startNs) FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                    "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType WHERE s.value = 'Notify_Wait' "
                    "GROUP BY c.planeId ORDER BY 2")
    plane = waits[0][0]
    ns = 500_000
    assert waits[0][1] + ns < waits[1][1]  # still the least waiting plane
    tasks = sql(db, "SELECT t.globalTaskId, s.value, t.startNs, t.endNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                    "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType WHERE c.planeId = ? AND c.opId = 2 "
                    "ORDER BY t.startNs", (plane,))
    i = next(k for k, t in enumerate(tasks) if t[1] == "Memcpy")
    wait, memcpy = tasks[i - 1], tasks[i]
    assert wait[1] == "Notify_Wait" and memcpy[3] - memcpy[2] == 574_491 and wait[3] + ns < memcpy[2] + ns
    assert sql(db, "SELECT COUNT(*) FROM TASK k JOIN COMPUTE_TASK_INFO USING (globalTaskId) "
                   "WHERE k.startNs < ? AND k.endNs > ?", (wait[3] + ns, wait[3])) == [(0,)]
    compute = union(sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO USING (globalTaskId)"))
    plane_waits = sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
                          "JOIN STRING_IDS s ON s.id = c.taskType WHERE s.value = 'Notify_Wait' AND c.planeId = ?",
                      (plane,))
    ops = sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP")
    assert all(any(a <= s and e <= b for a, b in ops) for s, e in plane_waits)
    wait_ns = sum((e - s) - sum(max(0, min(e, b) - max(s, a)) for a, b in compute) for s, e in plane_waits)
    moved = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, moved)
    edited = moved / "ASCEND_PROFILER_OUTPUT" / _DB_FILE
    edited.unlink()
    edited_copy(db, edited, f"UPDATE TASK SET endNs = endNs + {ns} WHERE globalTaskId = {wait[0]}",
                f"UPDATE TASK SET startNs = startNs + {ns} WHERE globalTaskId = {memcpy[0]}")
    for sign, (a, b) in ((1, (src, moved)), (-1, (moved, src))):
        res = compare(str(a), str(b))
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == {"Wait": sign * 0.5, "Transmit": sign * -0.5}
        rows = {(_cell(r[1]), _cell(r[2])): r for r in res.sheet("CommunicationCompare").itertuples(index=False)}
        assert {k: round(r[11] - r[4], 3) for k, r in rows.items() if round(r[11] - r[4], 3)} == {
            ("|", "Notify_Wait"): sign * 500.0, ("|", "Memcpy"): sign * -500.0}
        totals = res.communication_totals
        assert (totals["changed"], totals["diff_ms"], totals["task"], totals["task_diff_ms"]) == (
            0, 0.0, "Memcpy", sign * -0.5)
        # units by hand on one row: the untouched side's Wait is its read plane's Notify_Wait time that no compute
        # task covers (each wait lies inside an op, so inside the busy span), ns -> ms in the sheet, ms -> s with 3
        # decimals on the console
        plain = om["Wait"][1 if sign > 0 else 4]
        assert plain == wait_ns / 1e6 == 2.675633
        cell = res.summary["rows"][0 if sign > 0 else 1][res.summary["headers"].index(
            "Uncovered Communication Time(Wait Time)")]
        assert cell == f"{om['Uncovered Communication Time'][1] / 1000: .3f}s({plain / 1000:.3f}s)" == " 0.098s(0.003s)"


def test_wait_transit_split_moved_text_moves_the_task_rows_and_the_bandwidth(samples, tmp_path):
    """Text export, plane 5 of hcom_allReduce__586_1_1: its Notify_Wait (877.4575 us) ends 500 us later and the
    Reduce_Inline after it (739.21478125 us, 8404992 bytes) starts 500 us later, its end unchanged; communication.json
    says so (the op's and the total's transit time -0.5 ms, wait time +0.5 ms). CommunicationCompare: Notify_Wait
    +500 us, Reduce_Inline -500 us, the op unchanged; OverallMetrics unchanged: the text rule reads the wait of the
    plane that waits least (Plane 0, which has no Notify_Wait), so Wait stays 0 on both sides (no Wait row, the
    console's "( / )" and "(0.000s)"); the SDMA bandwidth rises to 427.596096 / 26.815705875 = 15.946 GB/s."""
    src = samples / NPU_TEXT
    trace = src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = trace.read_text()
    wait_ts, reduce_ts, us = "1736408883811368.405", "1736408883812249.022", Decimal(500)
    # each task is on its HCCL plane and, as a copy, on its Ascend Hardware stream: both edited
    parts, last, edited = [], 0, []
    for s, e, o in _objects(text):
        if o.get("ph") != "X" or o.get("ts") not in (wait_ts, reduce_ts):
            continue
        dur = Decimal(str(o["dur"]))
        if o["ts"] == wait_ts:
            new = text[s:e].replace(f'"dur": {o["dur"]}', f'"dur": {dur + us:f}', 1)
        else:
            new = text[s:e].replace(f'"dur": {o["dur"]}', f'"dur": {dur - us:f}', 1).replace(
                f'"ts": "{reduce_ts}"', f'"ts": "{Decimal(reduce_ts) + us:f}"', 1)
        assert new != text[s:e]
        edited.append((o["name"], o["ts"], dur))
        parts += [text[last:s], new]
        last = e
    assert sorted(edited) == [("Notify Wait", wait_ts, Decimal("877.4575")), ("Notify_Wait", wait_ts, Decimal(
        "877.4575")), ("Reduce_Inline", reduce_ts, Decimal("739.21478125")), ("SDMA", reduce_ts, Decimal(
            "739.21478125"))]
    moved = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, moved)
    (moved / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text("".join(parts + [text[last:]]))
    doc = _load(_comm_json(src))
    ms = Decimal("0.5")
    total = _total_block(doc)
    for info in (doc["step50"]["collective"][_KEY], doc["step50"]["collective"]["Total Op Info"]):
        info["Communication Time Info"]["Transit Time(ms)"] -= ms
        info["Communication Time Info"]["Wait Time(ms)"] += ms
        for kind in _BW_KINDS:
            info["Communication Bandwidth Info"][kind]["Transit Time(ms)"] -= ms
    _write_decimal_json(doc, _comm_json(moved))
    size, time = total["SDMA"]["Transit Size(MB)"], total["SDMA"]["Transit Time(ms)"]
    assert (_gbps(size, time + ms), _gbps(size, time)) == ("15.654GB/s", "15.946GB/s")
    res = compare(str(src), str(moved))
    assert _bandwidth_cells(res) == {"SDMA Bandwidth": ["15.654GB/s", "15.946GB/s"]}
    rows = {(_cell(r[1]), _cell(r[2])): r for r in res.sheet("CommunicationCompare").itertuples(index=False)}
    assert {k: round(r[11] - r[4], 3) for k, r in rows.items() if round(r[11] - r[4], 3)} == {
        ("|", "Notify_Wait"): 500.0, ("|", "Reduce_Inline"): -500.0}
    same = compare(str(src), str(src))
    assert res.sheet("OverallMetrics").equals(same.sheet("OverallMetrics"))
    head = res.summary["headers"].index("Uncovered Communication Time(Wait Time)")
    assert [r[head] for r in res.summary["rows"]] == [" 0.102s( / )", " 0.102s(0.000s)"]  # 101.963203 ms


# --------------------------------------------------------------------------- 3b. a collective in a new group

def test_collective_moved_to_a_new_group_moves_its_uncovered_time_between_group_rows(samples, tmp_path):
    """hcom_allReduce__586_1_1, its 74 tasks and the HostToDevice flow end that links it to its operator moved to a
    new lane "Group 1 Communication" with its own planes (as the profiler writes a second communicator): the op's
    part in the not-overlapped window ([811381.805, 813615.950] us, the op [811334.844, 813615.950]: 2234.145 us)
    leaves Group 0's row and Transmit (101.963203 -> 99.729058 ms, Diff -2.23, ratio 0.9781) for a comparison-only
    Group 1 row and its Transmit (2.234145 ms, Diff 2.23, ratio INF); no Wait row (each group's Plane 0 never
    waits), no overlap row (the groups' ops never run at once); uncovered communication, CommunicationCompare and
    the operators unchanged; the contributors are the two group steps of the waterfall."""
    src = samples / NPU_TEXT
    text = (src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text()
    events = json.loads(text, parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    (pid,) = [p for p, n in process.items() if n == "HCCL"]
    lanes = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] == pid}
    assert lanes == {0: "Group 0 Communication", **{k: f"Plane {k - 1}" for k in range(1, 9)}}
    (op,) = [e for e in events if e.get("name") == _OP]
    start, end = Decimal(op["ts"]), Decimal(op["ts"]) + round(op["dur"], 3)  # times are read to the ns
    moved_events = 0
    for e in events:
        if e.get("pid") == pid and e.get("ph") != "M" and start <= Decimal(e["ts"]) <= end:
            e["tid"] += 9
            moved_events += 1
    assert moved_events == 1 + 74 + 2  # the op, its tasks, the flow end at the op and one at a task's start
    events += [{"name": n, "pid": pid, "tid": 9 + k, "ph": "M",
                "args": {"name": "Group 1 Communication" if k == 0 else f"Plane {k - 1}"} if n == "thread_name"
                else {"sort_index": 9 + k}} for k in range(9) for n in ("thread_name", "thread_sort_index")]
    grouped = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, grouped)
    _write_decimal_json(events, grouped / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    windows = [(Decimal(e["ts"]), Decimal(e["ts"]) + round(e["dur"], 3)) for e in events if e.get("ph") == "X"
               and e["name"] == "Communication(Not Overlapped)" and process.get(e["pid"]) == "Overlap Analysis"]
    part = sum((max(Decimal(0), min(end, b) - max(start, a)) for a, b in windows), Decimal(0))
    assert part == Decimal("2234.145")
    res = compare(str(src), str(grouped))
    om = res.sheet("OverallMetrics")
    rows = [(i.strip(), b, c, d, r) for i, b, c, d, r in zip(
        om["Index"], om["Duration(ms)"], om["Duration(ms).1"], om["Diff Duration(ms)"], om["Diff Ratio"],
        strict=True)]
    uncovered = next(r for r in rows if r[0] == "Uncovered Communication Time")
    ms = float(part / 1000)
    k = rows.index(uncovered)
    assert rows[k:k + 5] == [
        uncovered,
        ("Group 0 Communication", uncovered[1], round(uncovered[1] - ms, 6), -2.23, round(1 - ms / uncovered[1], 4)),
        ("Transmit", uncovered[1], round(uncovered[1] - ms, 6), -2.23, round(1 - ms / uncovered[1], 4)),
        ("Group 1 Communication", 0.0, ms, 2.23, float("inf")),
        ("Transmit", 0.0, ms, 2.23, float("inf"))]
    assert uncovered[3] == 0.0 and rows[k + 5][0] == "Free Time"
    assert {r[0] for r in rows if r[3]} == {"Group 0 Communication", "Group 1 Communication", "Transmit"}
    same = compare(str(src), str(src))
    assert res.sheet("CommunicationCompare").equals(same.sheet("CommunicationCompare"))
    assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [
        ["Group 0 Communication (uncovered)", -ms], ["Group 1 Communication (uncovered)", ms]]


# --------------------------------------------------------------------------- 3c. a collective without a family

def test_collective_renamed_without_a_family_is_said_left_out_not_an_overlap_shift(samples, tmp_path, caplog):
    """hcom_allReduce__586_1_1 renamed hcomAllReduce586 (no '_': no family, reference-2 §4.2, so no row) on the
    comparison side of the text export, op 2 of the DB export given the op type N/A: CommunicationCompare's op
    rows lose that op's 2281.106 us (DB: 2180.324 us) while the uncovered communication of OverallMetrics and the
    waterfall still count it. The communication line said "computing (or communication ops running beside one
    another) overlaps less of the communication than before" and the log nothing, as only a side with no op left
    at all was warned of; now the log counts the ops left out with their time, and the line says their time is not
    in the op rows instead of inventing an overlap shift."""
    from msprof_compare.report.summary_console import communication_line

    src = samples / NPU_TEXT
    text_side = tmp_path / "text" / "rank0_ascend_pt"
    shutil.copytree(src, text_side)
    trace = text_side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = trace.read_bytes()
    assert raw.count(_OP.encode()) == 1
    trace.write_bytes(raw.replace(_OP.encode(), b"hcomAllReduce586"))
    (op,) = [e for e in json.loads(raw, parse_float=Decimal) if e.get("name") == _OP and e.get("ph") == "X"]
    text_ms = round(op["dur"], 3) / 1000  # 2.281106 ms, times read to the ns

    db = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / _DB_FILE
    db_side = tmp_path / "db" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_DB, db_side)
    target = db_side / "ASCEND_PROFILER_OUTPUT" / _DB_FILE
    con = sqlite3.connect(target)
    try:
        con.execute("UPDATE COMMUNICATION_OP SET opType = ? WHERE opId = 2", (string_id(con, "N/A"),))
        con.commit()
    finally:
        con.close()
    ((db_ns, n_db),) = sql(db, "SELECT SUM(CASE WHEN opId = 2 THEN endNs - startNs END), COUNT(*) "
                               "FROM COMMUNICATION_OP")
    for a, b, ms, n, why in ((src, text_side, text_ms, 4, "names without a '_'"),
                             (samples / NPU_DB, db_side, Decimal(db_ns) / 1_000_000, n_db, "an op type of N/A")):
        caplog.clear()
        res = compare(str(a), str(b))
        rows = {(_cell(r[1]), _cell(r[2])): r for r in res.sheet("CommunicationCompare").itertuples(index=False)}
        assert round(rows[("allreduce", None)][15], 2) == -float(round(ms * 1000, 2))
        om = _rows(res.sheet("OverallMetrics"))
        assert om["Uncovered Communication Time"][7] == 0.0
        warned = [r.getMessage() for r in caplog.records if "leaves them out" in r.getMessage()]
        assert len(warned) == 1 and warned[0].startswith(f"{b}: 1 of its {n} communication op(s) ({ms:.3f} ms) have "
                                                         f"{why}")
        # the side first in the line's one closing parenthesis ("(...) (comparison side)" was two in a row)
        assert warned[0].endswith(", so CommunicationCompare leaves them out of its op rows (comparison side: "
                                  "OverallMetrics and the waterfall count their time)")
        line = communication_line(res.frames["communication"])
        assert "overlaps" not in line
        assert f"\nNot in the op rows: {ms:.3f} ms of the comparison side's ops, which have no op family" in line
        totals = to_document(res)["summary"]["communication"]  # the JSON carries the same figures
        assert (totals["no_family_base_ms"], totals["no_family_comparison_ms"]) == (0.0, float(ms))
