"""NPU text time breakdown: hand-checked excerpt figures, the spec's worked examples, and parity
with the original's outputs (reference-outputs pairs 1, 2, 4, 8, 8b, 9d)."""

from __future__ import annotations

import csv
import gzip
import json
import logging
import math
import shutil
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from spans import clip_walk, overlap_walk
from xlsxutil import read_xlsx

from msprof_compare import compare
from msprof_compare.compare import breakdown_npu as B
from msprof_compare.compare import checks
from msprof_compare.compare.breakdown import BUCKETS
from msprof_compare.loaders import load_profile
from msprof_compare.model import Profile, frame
from msprof_compare.options import Options
from msprof_compare.report.summary_console import memory_line

DATA = Path(__file__).resolve().parent / "data" / "npu"
PT = DATA / "rank0_ascend_pt"
MS = DATA / "profiler" / "rank-0_20250101000000000_ascend_ms"
OPTS = Options(enable_profiling_compare=True)
#: A zero Wait Time as the notes under the console table say it: the original's base cell shows it as "( / )"
#: (reference-1 §10, item 11), the comparison's as 0.000s
BASE_ZERO = "(0 s, which the original's base cell shows as a slash)"
BOTH_ZERO = "(0 s, shown as a slash on the base row as in the original, 0.000s on the comparison row)"


def _without_wait_note(notes: list[str]) -> list[str]:
    """The notes under the table but a text export's zero Wait Time line (tests/test_mindspore_user_leftovers.py
    pins it), which every level-1/2 text side has and which is no part of what this file checks."""
    return [n for n in notes if "is that of the HCCL plane that waits least" not in n]


def ns(v) -> int:
    return int((Decimal(str(v)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _trace(path: Path) -> list[dict]:
    return json.loads((path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())


def _lane(raw: list[dict], process: str) -> list[dict]:
    pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == process)
    return [e for e in raw if e.get("ph") == "X" and e["pid"] == pid]


# --------------------------------------------------------------------------- excerpt, by hand


def test_excerpt_overlap_figures_by_hand():
    raw = _trace(PT)
    ov = _lane(raw, "Overlap Analysis")
    bd = B.npu_breakdown(load_profile(str(PT), OPTS), OPTS)
    assert bd.computing_ns == sum(ns(e["dur"]) for e in ov if e["name"] == "Computing")
    assert bd.uncovered_comm_ns == sum(ns(e["dur"]) for e in ov if e["name"] == "Communication(Not Overlapped)")
    start = min(Decimal(e["ts"]) for e in ov)
    end = max(Decimal(e["ts"]) + Decimal(str(e["dur"])) for e in ov)
    assert bd.e2e_ns == ns(end - start)
    assert bd.kind == "NPU" and not bd.hide_op_details
    assert bd.free_ns == bd.e2e_ns - bd.computing_ns - bd.uncovered_comm_ns


def _wait_by_hand(raw: list[dict], planes: tuple[int, ...] = (), lane: int = 0) -> tuple[int, int]:
    """(wait, uncovered op time) of an HCCL group (the op lane ``lane``, its plane tids ``planes``: by default
    every other thread of the HCCL process) by reference-1 §5.7 in plain Python: the 4-letter history
    per plane in start order, the plane with the smallest Notify_Wait sum (the first in lane order on ties), its
    candidates' time inside the Not Overlapped windows."""
    hccl = _lane(raw, "HCCL")
    ov = _lane(raw, "Overlap Analysis")
    windows = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ov if e["name"] == "Communication(Not Overlapped)"]
    ops = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in hccl if e["tid"] == lane]

    def covered(intervals):  # brute force: points of the windows covered by any interval
        total = 0
        for w0, w1 in windows:
            cuts = sorted((max(a, w0), min(b, w1)) for a, b in intervals if min(b, w1) > max(a, w0))
            reach = w0
            for a, b in cuts:
                a = max(a, reach)
                if b > a:
                    total += b - a
                    reach = b
        return total

    # independent 4-letter history rule, per plane in start order
    history: dict[int, str] = {}
    waits: dict[int, list] = {}
    for e in sorted((e for e in hccl if e["tid"] != 0), key=lambda e: Decimal(e["ts"])):
        h = history.get(e["tid"])
        letter = "R" if e["name"] == "RDMASend" else "N" if e["name"] == "Notify_Wait" else "O"
        if letter == "N" and not (h is not None and (h == "RRNR" or h.endswith("RR"))):
            waits.setdefault(e["tid"], []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
        history[e["tid"]] = (h or "OOOO")[1:] + letter
    pid = hccl[0]["pid"]
    planes = planes or tuple(sorted(e["tid"] for e in raw if e.get("ph") == "M" and e["name"] == "thread_name"
                                    and e["pid"] == pid and e["tid"] != lane))
    best = min(planes, key=lambda t: sum(b - a for a, b in waits.get(t, [])))
    return covered(waits.get(best, [])), covered(ops)


def _hccl_ops(raw: list[dict]) -> tuple[int, list[dict], list[dict]]:
    """The HCCL process's pid in level1 rank0's raw events, the events without its plane 0 (tid 1, no Notify_Wait:
    left out, as the tests here say), and its group lane's ops (tid 0) in time order."""
    pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == "HCCL")
    raw = [e for e in raw if not (e.get("pid") == pid and e.get("tid") == 1)]
    ops = sorted((e for e in raw if e.get("pid") == pid and e.get("tid") == 0 and e.get("ph") == "X"),
                 key=lambda e: Decimal(e["ts"]))
    return pid, raw, ops


def _level1_copy(samples: Path, tmp_path: Path) -> tuple[Path, Path, list[dict]]:
    """(copy of the level1 rank0 sample in tmp_path, its trace_view.json, that file's events) for a test to edit."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    if not src.is_dir():
        pytest.skip(f"{src} not in samples")
    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, copy)
    tv = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    return copy, tv, json.loads(tv.read_text(encoding="utf-8"))


def test_excerpt_wait_transmit_by_hand():
    wait, uncovered = _wait_by_hand(_trace(PT))
    bd = B.npu_breakdown(load_profile(str(PT), OPTS), OPTS)
    g = bd.groups["Group 0 Communication"]
    assert g["wait"] == wait
    assert g["wait"] + g["transmit"] == uncovered > 0
    assert bd.wait_ns == wait


def test_wait_history_of_hccl_tasks_written_out_of_start_order(samples, tmp_path):
    """The wait history reads each plane's tasks in start order, whatever order the file has them in. No sample
    with wait time has them out of order (the level1 sample's plane 0 has no Notify_Wait, so its wait is 0, and
    it has no RDMASend): a copy of level1 rank0's trace_view.json with plane 0 (tid 1) left out, its Memcpy and
    Notify_Record tasks renamed RDMASend (so that "RR" and "RRNR" histories occur), and the HCCL process's
    events written in reverse. Expected wait by the plain-Python history above, on the edited events."""
    copy, tv, raw = _level1_copy(samples, tmp_path)
    pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == "HCCL")
    raw = [e for e in raw if not (e.get("pid") == pid and e.get("tid") == 1)]
    at = [i for i, e in enumerate(raw) if e.get("pid") == pid and e.get("ph") == "X"]
    for i in at:
        if raw[i]["name"] in ("Memcpy", "Notify_Record"):
            raw[i]["name"] = "RDMASend"
    moved = [raw[i] for i in at]
    for i, e in zip(at, reversed(moved), strict=True):
        raw[i] = e
    tv.write_text(json.dumps(raw), encoding="utf-8")
    wait, uncovered = _wait_by_hand(raw)
    assert wait > 0
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    assert bd.groups["Group 0 Communication"] == {"wait": wait, "transmit": uncovered - wait}


def test_total_wait_sums_the_groups(samples, tmp_path):
    """reference-1 §5.7 step 4: the total wait is the sum of the groups' waits. No sample has two groups with
    wait time: a copy of level1 rank0's trace with plane 0 (tid 1, no Notify_Wait) left out and its HCCL lane
    split in two groups, "Group 0 Communication" (tid 0: the first two all-reduces, planes tids 2-4) and a
    made-up "Group 1 Communication" (tid 9, sorted after plane tid 4: the last two all-reduces, planes tids
    5-8). Expected per group by the plain-Python history above."""
    copy, tv, raw = _level1_copy(samples, tmp_path)
    pid, raw, ops = _hccl_ops(raw)
    for e in ops[2:]:
        e["tid"] = 9
    for e in raw:
        if e.get("pid") == pid and e.get("name") == "thread_sort_index" and e["tid"] >= 5:
            e["args"]["sort_index"] += 1  # planes tids 5-8 after the new lane
    raw.append({"name": "thread_name", "pid": pid, "tid": 9, "args": {"name": "Group 1 Communication"}, "ph": "M"})
    raw.append({"name": "thread_sort_index", "pid": pid, "tid": 9, "args": {"sort_index": 5}, "ph": "M"})
    tv.write_text(json.dumps(raw), encoding="utf-8")
    want = {}
    for name, lane, planes in (("Group 0 Communication", 0, (2, 3, 4)), ("Group 1 Communication", 9, (5, 6, 7, 8))):
        wait, uncovered = _wait_by_hand(raw, planes, lane)
        assert wait > 0
        want[name] = {"wait": wait, "transmit": uncovered - wait}
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    assert bd.groups == want
    assert bd.wait_ns == sum(g["wait"] for g in want.values())


def test_wait_plane_tie_goes_to_the_first_plane(samples, tmp_path):
    """reference-1 §5.7 step 3: among planes with equal Notify_Wait sums the first in lane order is taken. No
    sample has a tie: a copy of level1 rank0's trace with only planes 1 and 2 (tids 2, 3) left on its HCCL
    lane, and each Notify_Wait of plane 2 given the duration of plane 1's in the same place (sums 5940.618 us
    both). Plane 1's waits lie 4636.477 us inside the Not Overlapped windows, plane 2's 4457.433 us (the
    plain-Python history above)."""
    copy, tv, raw = _level1_copy(samples, tmp_path)
    pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == "HCCL")
    raw = [e for e in raw if not (e.get("pid") == pid and e.get("tid") not in (0, 2, 3))]
    waits = {t: sorted((e for e in raw if e.get("pid") == pid and e.get("ph") == "X" and e["tid"] == t
                        and e["name"] == "Notify_Wait"), key=lambda e: Decimal(e["ts"])) for t in (2, 3)}
    for first, second in zip(waits[2], waits[3], strict=True):
        second["dur"] = first["dur"]
    tv.write_text(json.dumps(raw), encoding="utf-8")
    wait, uncovered = _wait_by_hand(raw)
    assert wait == 4_636_477
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    assert bd.groups["Group 0 Communication"] == {"wait": wait, "transmit": uncovered - wait}


def test_excerpt_categories_by_hand():
    """The excerpt's kernels matched to their launching cpu ops: every valid kernel row lands in a bucket."""
    kd = pd.read_csv(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", dtype=str, keep_default_na=False)
    valid = kd[~kd["aiv_vec_time(us)"].isin(["", "N/A"])]
    bd = B.npu_breakdown(load_profile(str(PT), OPTS), OPTS)
    assert bd.computing_count == len(valid)
    assert sum(b.ns for b in bd.buckets.values()) == sum(ns(v) for v in valid["Duration(us)"])
    # tensor-move copies are recognised by name alone
    tm = valid[valid["Name"].str.lower().str.startswith("aclnninplacecopy")
               & valid["Name"].str.lower().str.contains("tensormove")]
    assert bd.b("sdma_tm").count == len(tm)


def test_mindspore_fixture_categories_by_type_fallback():
    """No cpu ops / flows (MindSpore): Type fallback, then cube (aicore_time > 0), trans, vector."""
    kd = pd.read_csv(MS / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", dtype=str, keep_default_na=False)
    valid = kd[~kd["aiv_vec_time(us)"].isin(["", "N/A"])]
    want = {b: [0, 0] for b in BUCKETS}
    for _, r in valid.iterrows():
        t, n = r["Type"].lower(), r["Name"].lower()
        if n.startswith("aclnninplacecopy") and "tensormove" in n:
            b = "sdma_tm"
        elif "flashattention" in t:
            b = "fa_bwd_cube" if ("bwd" in t or "grad" in t) else "fa_fwd_cube"
        elif t.startswith("conv"):
            b = "conv_bwd_cube" if any(w in t for w in ("bwd", "backward", "back", "grad")) else "conv_fwd_cube"
        elif "matmul" in t:
            b = "matmul_cube"
        elif float(r["aicore_time(us)"] or 0) > 0:
            b = "other_cube"
        elif any(w in n for w in ("cast", "transdata", "transpose")):
            b = "vector_trans"
        else:
            b = "vector_notrans"
        want[b][0] += ns(r["Duration(us)"])
        want[b][1] += 1
    p = load_profile(str(MS), OPTS)
    bd = B.npu_breakdown(p, OPTS)
    assert {k: [v.ns, v.count] for k, v in bd.buckets.items()} == want
    # the loader named the file; the console note under the table says what it costs, no line here
    assert bd.memory_gb == 0 and not [m for m in bd.missing if "Mem Usage" in m]
    assert bd.groups and bd.e2e_ns > 0


def test_trace_level_missing_rows():
    p = load_profile(str(PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"), OPTS)
    bd = B.npu_breakdown(p, OPTS)
    assert bd.computing_count == 0 and bd.other_ns == bd.computing_ns > 0
    assert bd.memory_gb == 0 and not bd.hide_op_details
    # what is absent, then the remedy, in ~100 characters after the path (~190 said the three side files' names)
    assert bd.missing == [f"{p.path}: no computing categories, Mem Usage or bandwidths without its profiling "
                          "directory: pass the directory instead"]


def test_mem_usage_leaves_out_impossible_readings(tmp_path):
    """A negative reserved total, or one over 1 PB, is no reading: the loader leaves it out with one warning
    and Mem Usage is the largest of the others (the console showed "-2.06G" or a 290-digit figure); a file
    with no usable value gives the reason its console note says (it showed "0.00G" without a word). Rows cut from
    memory_record.csv of msinsight text level1 rank0, some edited."""
    from msprof_compare.loaders.ascend_text import read_memory_record

    head = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\r\n"

    def side(values: list[str]) -> tuple[B.Breakdown, list[str]]:
        f = tmp_path / "memory_record.csv"
        f.write_text(head + "".join(f"APP,1736408883573957.920\t,,{v},,,NPU:0\r\n" for v in values))
        warnings: list[str] = []
        p = Profile(path="npu", kind="NPU", source="ascend_text")
        p.memory_record = read_memory_record(str(f), warnings)
        bd = B.Breakdown("NPU")
        B._memory(p, bd)
        return bd, [w.replace(str(f), "m.csv") for w in warnings]

    bd, warnings = side(["2109.6015625", "-4096", "1e300", "", "1024"])
    assert bd.memory_gb == 2109.6015625 / 1024
    assert warnings == ["m.csv: 2 Total Reserved(MB) value(s) negative or over 1 PB; Mem Usage leaves them out",
                        "m.csv: 1 Total Reserved(MB) value(s) are empty or N/A (an export writes a reading on every "
                        "row: a damaged cell?); the peak reserved memory (Mem Usage) leaves those rows out"]
    bd, _ = side(["", "-1"])
    assert bd.memory_gb == 0 and not bd.missing
    assert bd.memory_missing == "its memory_record.csv holds no usable Total Reserved(MB) value"
    # every cell empty or N/A: nothing was left out, so the loader's line says there is no number at all (a run
    # of two such sides, whose Mem Usage column is not shown, said nothing)
    bd, warnings = side(["", "N/A", ""])
    assert bd.memory_gb == 0 and bd.memory_missing
    assert warnings == ["m.csv: none of its 3 Total Reserved(MB) value(s) is a number (empty or N/A cells); Mem "
                        "Usage has no reading"]
    # readings, every one 0 (an empty cell is none): said as such, not as missing (it read "no peak reserved
    # memory recorded"); one reading alone is "is 0"; the empty cell is counted in the loader's line
    bd, warnings = side(["0", "", "0.0"])
    assert (bd.memory_gb, bd.memory_zero, warnings) == (0.0, True, [
        "m.csv: 1 Total Reserved(MB) value(s) are empty or N/A (an export writes a reading on every row: a damaged "
        "cell?); the peak reserved memory (Mem Usage) leaves those rows out"])
    assert bd.memory_missing == "its 2 memory_record.csv Total Reserved(MB) readings are all 0"
    bd, _ = side(["0"])
    assert bd.memory_missing == "its 1 memory_record.csv Total Reserved(MB) reading is 0"
    # as many readings as the sample file's 1,004 rows, all 0: the count with a thousands separator, as the
    # loaders' counts are (mutation testing, session 63)
    bd, _ = side(["0"] * 1004)
    assert bd.memory_missing == "its 1,004 memory_record.csv Total Reserved(MB) readings are all 0"
    assert (side(["1024"])[0].memory_zero, side(["", "-1"])[0].memory_zero) == (False, False)



def test_summary_memory_line_names_text_readings_all_zero(tmp_path):
    """The torch excerpt against a copy whose memory_record.csv Total Reserved(MB) cells are all 0: the Summary's
    memory line (the peaks alone: neither side has operator_memory.csv) read "comparison not recorded" under the
    OverallMetrics note that its readings are all 0; it shows 0.00 GB and names the readings as the note does
    (count and peak from the raw CSV); the JSON's peak is 0, not null."""
    zero = shutil.copytree(PT, tmp_path / PT.name)
    record = zero / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    lines = record.read_text().splitlines()
    head = lines[0].split(",")
    col = head.index("Total Reserved(MB)")
    cells = [line.split(",") for line in lines[1:]]
    peak = max(Decimal(c[col]) for c in cells if c[col].strip())
    n = sum(1 for c in cells if c[col].strip())
    for c in cells:
        c[col] = "0" if c[col].strip() else c[col]
    record.write_text("\n".join([lines[0], *(",".join(c) for c in cells)]) + "\n")
    res = compare(str(PT), str(zero), enable_memory_compare=True, enable_profiling_compare=True)
    why = f"its {n} memory_record.csv Total Reserved(MB) readings are all 0"
    assert [x for x in res.summary["notes"] if "Mem Usage" in x] == [
        f"Comparison row: {why}, so its Mem Usage shows 0.00G, the largest of them."]
    gb = float(peak / 1024)
    assert memory_line(res.frames["memory"]) == (
        f"Peak reserved memory (Mem Usage; comparison: {why}) {gb:.2f} GB -> 0.00 GB (-{gb:.2f} GB, -100.00%).\n"
        "Memory inside operators not compared: neither side recorded a memory allocation.")
    t = res.memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"], t["peak_diff_pct"]) == (gb, 0.0, -100.0)
    assert t["peak_zero"] == {"comparison": why}


def test_memory_record_without_a_usable_value_is_noted_as_such(tmp_path, caplog):
    """A memory_record.csv whose every Total Reserved(MB) was recorded but left out (negative: the fixture's 30
    rows, their values negated) read "no peak reserved memory recorded" under the console table, and a log line
    said "Mem Usage is absent" beside the loader's: the note now says the values were unusable, once; the
    loader's line counts them. The other side (the fixture as it is) peaks at 2109.6015625 MB, its first row."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, side)
    record = side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [r.split(",") for r in lines[1:]]
    assert len(rows) == 30 and all(float(r[3]) > 0 for r in rows)
    record.write_text(lines[0] + "".join(",".join([*r[:3], f"-{r[3]}", *r[4:]]) for r in rows), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(side), str(PT), enable_profiling_compare=True)
    assert _without_wait_note(res.summary["notes"]) == [
        "Base row: its memory_record.csv holds no usable Total Reserved(MB) value, so its Mem Usage 0.00G is not a "
        "measurement."]
    assert [row[res.summary["headers"].index("Mem Usage")] for row in res.summary["rows"]] == [
        "0.00G", f"{2109.6015625 / 1024:.2f}G"]
    assert [m for m in caplog.messages if "Mem Usage" in m] == [
        f"{record}: 30 Total Reserved(MB) value(s) negative or over 1 PB; Mem Usage leaves them out (base side)"]


# --------------------------------------------------------------------------- spec worked examples


def _iv(pairs):
    a = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return a[:, 0], a[:, 1]


def test_overlap_and_clip_walks_match_the_spec_examples():
    ws, we = _iv([[300, 500], [1200, 3700]])
    assert overlap_walk(ws, we, *_iv([[100, 300], [300, 400]])) == 100
    # the original double counts the nested op [2000, 2500]: 200 + 1500 + 500
    assert overlap_walk(ws, we, *_iv([[100, 600], [1000, 2700], [2000, 2500]])) == 2200
    s, e = clip_walk(*_iv([[0, 10], [20, 30]]), *_iv([[5, 15], [25, 35]]))
    assert list(zip(s.tolist(), e.tolist(), strict=True)) == [(5, 10), (25, 30)]
    a = clip_walk(*_iv([[1000, 2000]]), *_iv([[1200, 2300]]))
    b = clip_walk(*_iv([[1500, 2500]]), *_iv([[1200, 2300]]))
    assert overlap_walk(a[0], a[1], b[0], b[1]) == 500


def _synthetic(ops, tasks, windows) -> Profile:
    """A profile with one HCCL group lane (tid 0) and two planes (tids 1, 2)."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="trace")
    p.extra["hccl_pid"] = 7
    p.threads = frame("threads", {"pid": [7, 7, 7], "tid": [0, 1, 2],
                                  "name": ["Group 0 Communication", "Plane 0", "Plane 1"], "sort_index": [0, 1, 2]})
    rows = [("hcom_allReduce_", 0, "op", s, e) for s, e in ops] + [(n, t, "task", s, e) for n, t, s, e in tasks]
    p.comm = frame("comm", {"name": [r[0] for r in rows], "tid": [r[1] for r in rows], "lane": [r[2] for r in rows],
                            "ts": [r[3] for r in rows], "dur": [r[4] - r[3] for r in rows], "pid": [7] * len(rows),
                            "group": ["Group 0 Communication"] * len(rows)})
    p.overlap = frame("overlap", {"name": ["Communication(Not Overlapped)"] * len(windows),
                                  "ts": [w[0] for w in windows], "dur": [w[1] - w[0] for w in windows],
                                  "tid": [2] * len(windows)})
    return p


def test_wait_transmit_spec_example_exact_union():
    """reference-1 §5.7 UT: wait 100; the original's transmit 2100 counts the nested op twice, ours 1600."""
    tasks = [("RDMASend", 1, 0, 10), ("RDMASend", 1, 10, 20), ("Notify_Wait", 1, 30, 40),  # excluded: after RR
             ("Notify_Wait", 2, 100, 300), ("Notify_Wait", 2, 300, 400)]
    p = _synthetic([(100, 600), (1000, 2700), (2000, 2500)], tasks, [(300, 500), (1200, 3700)])
    bd = B.npu_breakdown(p, OPTS)
    # plane 1 has no wait candidate (its Notify_Wait follows RR), so it has the smallest sum: wait 0
    assert bd.groups["Group 0 Communication"] == {"wait": 0, "transmit": 1700}
    tasks = tasks[3:] + [("Notify_Wait", 1, 50, 450)]  # plane 1 now waits longer than plane 2 -> plane 2 chosen
    p = _synthetic([(100, 600), (1000, 2700), (2000, 2500)], tasks, [(300, 500), (1200, 3700)])
    bd = B.npu_breakdown(p, OPTS)
    assert bd.groups["Group 0 Communication"] == {"wait": 100, "transmit": 1600}
    assert bd.wait_ns == 100


def test_wait_candidates_history_rule():
    names = ["RDMASend", "RDMASend", "Notify_Wait", "RDMASend", "Notify_Wait", "Notify_Wait", "Other",
             "RDMASend", "Notify_Wait"]
    tasks = pd.DataFrame({"name": names, "tid": [1] * len(names), "ts": range(len(names))})
    # N after RR: out; N after "RRNR": out; N after "RNRN": in; N after "NORN"... in
    assert B.wait_candidates(tasks).tolist() == [False, False, False, False, False, True, False, False, True]


def test_mc2_sqe_pairing():
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="ascend_output")
    p.kernels = frame("kernels", {"name": ["C_CORE_SQE"] * 4, "ts": [0, 5, 10, 15], "dur": [5, 5, 5, 5],
                                  "pid": [1] * 4, "tid": [2] * 4, "stream": [2] * 4, "task_type": ["X"] * 4})
    p.kernel_details = pd.DataFrame({
        "Name": ["MatmulAllReduce"], "Type": ["MatmulAllReduce"], "ts": [0], "dur": [25],
        "Duration(us)": [0.025], "aiv_vec_time(us)": [1.0], "aic_mac_time(us)": [0.004],
        "aic_mte2_time(us)": [0.006], "aiv_time(us)": [0.002]})
    bd = B.npu_breakdown(p, OPTS)
    m = bd.mc2["MatmulAllReduce"]
    assert (m.ns, m.count, m.communication_ns, m.computing_ns) == (25, 1, 10, 8)
    assert bd.computing_count == 0  # MC2 is not counted in Computing Time's number


def _hw_tasks(rows: list[tuple]) -> Profile:
    """A trace-level profile whose Ascend Hardware lane holds ``rows`` (name, ts, dur, stream, task type)."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="trace")
    p.kernels = frame("kernels", {"name": [r[0] for r in rows], "ts": [r[1] for r in rows],
                                  "dur": [r[2] for r in rows], "pid": [1] * len(rows),
                                  "tid": [r[3] for r in rows], "stream": [r[3] for r in rows],
                                  "task_type": [r[4] for r in rows]})
    return p


def test_lccl_and_sdma_on_compute_streams():
    """reference-1 §5.4 steps 4-5 on hand-made Ascend Hardware tasks and one HCCL op (no sample has them)."""
    rows = [("kernel_aivec", 0, 10, 1, "AI_VECTOR_CORE"),   # Lccl, any case
            ("MatMul", 20, 30, 1, "AI_CORE"),               # stream 1: compute ...
            ("wait", 55, 2, 1, "EVENT_WAIT_SQE"),           # ... with an event wait
            ("copy", 60, 7, 1, "SDMA_SQE"),                 # counted: stream 1 is compute + event-wait
            ("Add", 80, 5, 3, "AI_VECTOR_CORE"),            # stream 3: compute without event wait
            ("copy", 90, 11, 3, "PCIE_DMA_SQE"),            # not counted while some stream has an event wait
            ("copy", 100, 13, 5, "SDMA_SQE"),               # stream 5 has no compute task
            ("copy", 120, 17, 0, "SDMA_SQE"),               # stream 0 never counts
            ("MatMul", 140, 3, 0, "AI_CORE")]
    p = _hw_tasks(rows)
    p.comm = frame("comm", {"name": ["KERNEL_AIVEC", "hcom_allReduce_"], "ts": [200, 300], "dur": [40, 50],
                            "pid": [7, 7], "tid": [0, 0], "lane": ["op", "op"], "group": ["g", "g"]})
    bd = B.npu_breakdown(p, OPTS)
    assert (bd.lccl.ns, bd.lccl.count) == (10 + 40, 2)
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (7, 1)
    bd = B.npu_breakdown(_hw_tasks([r for r in rows if r[4] != "EVENT_WAIT_SQE"]), OPTS)
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (7 + 11, 2)  # no event wait: every compute stream
    assert (bd.lccl.ns, bd.lccl.count) == (10, 1)


def test_lccl_op_written_twice_counts_once(samples, tmp_path):
    """reference-1 §5.4 step 4: Lccl counts the kernel map's entries, which holds HCCL ops too, one per (pid, tid,
    ts). No sample has an Lccl op: a copy of level1 rank0's trace with its first HCCL op renamed kernel_aivec and
    written twice (same pid, tid, ts). Expected: that op's duration once, 79089.52021875 us -> 79089520 ns."""
    copy, tv, raw = _level1_copy(samples, tmp_path)
    op = next(e for e in raw if e.get("name") == "hcom_allReduce__586_0_1")
    op["name"] = "kernel_aivec"
    raw.append(dict(op))
    tv.write_text(json.dumps(raw), encoding="utf-8")
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    assert (bd.lccl.ns, bd.lccl.count) == (ns(op["dur"]), 1) == (79_089_520, 1)


def _two_groups(overlap: dict) -> Profile:
    """Group 0's op [100, 500) and group 1's op [300, 800) on the HCCL lanes, with the given Overlap Analysis."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="trace")
    p.extra["hccl_pid"] = 7
    p.threads = frame("threads", {"pid": [7, 7], "tid": [0, 10], "name": ["Group 0 Communication",
                                                                          "Group 1 Communication"],
                                  "sort_index": [0, 1]})
    p.comm = frame("comm", {"name": ["hcom_allReduce_", "hcom_broadcast_"], "tid": [0, 10], "lane": ["op", "op"],
                            "ts": [100, 300], "dur": [400, 500], "pid": [7, 7],
                            "group": ["Group 0 Communication", "Group 1 Communication"]})
    p.overlap = frame("overlap", overlap)
    return p


def test_overlapping_groups():
    """Two communication groups whose uncovered ops overlap (reference-1 §5.8): per-group transmit and
    the pair's overlap, from exact interval intersections within the not-overlapped windows."""
    p = _two_groups({"name": ["Communication(Not Overlapped)", "Computing"], "ts": [150, 0], "dur": [850, 150],
                     "tid": [2, 1]})
    bd = B.npu_breakdown(p, OPTS)
    # windows [150, 1000): group 0 op [100, 500) -> 350 uncovered, group 1 op [300, 800) -> 500, both [300, 500)
    assert bd.groups == {"Group 0 Communication": {"wait": 0, "transmit": 350},
                         "Group 1 Communication": {"wait": 0, "transmit": 500}}
    assert bd.group_pairs == {("Group 0 Communication", "Group 1 Communication"): 200}


def test_overlapping_groups_pair_counts_only_uncovered_time():
    """The pair's overlap is that of the groups' uncovered parts (reference-1 §5.8), not of their whole ops:
    with windows [150, 320) and [420, 1000) the ops [100, 500) and [300, 800) overlap on [300, 500) (200 ns),
    of which [300, 320) and [420, 500) are uncovered: 20 + 80 = 100 ns."""
    p = _two_groups({"name": ["Computing", "Communication(Not Overlapped)", "Computing",
                              "Communication(Not Overlapped)"],
                     "ts": [0, 150, 320, 420], "dur": [150, 170, 100, 580], "tid": [1, 2, 1, 2]})
    bd = B.npu_breakdown(p, OPTS)
    # group 0: [150, 320) + [420, 500) = 170 + 80; group 1: [300, 320) + [420, 800) = 20 + 380
    assert bd.groups == {"Group 0 Communication": {"wait": 0, "transmit": 250},
                         "Group 1 Communication": {"wait": 0, "transmit": 400}}
    assert bd.group_pairs == {("Group 0 Communication", "Group 1 Communication"): 100}


def test_bandwidth_and_pg_names():
    comm = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "communication.json").read_text())
    last = list(comm.values())[-1]["collective"]["Total Op Info"]["Communication Bandwidth Info"]
    sdma = last["SDMA"]["Transit Size(MB)"] / last["SDMA"]["Transit Time(ms)"]
    assert B.bandwidths(comm) == (0.0, pytest.approx(sdma))
    assert B.bandwidths({"step1": {"collective": {}}}) is None  # no block: no crash
    two = {"a": {"collective": {"Total Op Info": {"Communication Bandwidth Info": {
        "RDMA": {"Transit Size(MB)": 10, "Transit Time(ms)": 2}}}}},
        "b": {"collective": {"Total Op Info": {"Communication Bandwidth Info": {
            "RDMA": {"Transit Size(MB)": 3, "Transit Time(ms)": 1}, "SDMA": {"Transit Size(MB)": 1,
                                                                         "Transit Time(ms)": 0}}}}}}
    # every step's entry counts, as the other OverallMetrics rows do: (10 + 3) MB / (2 + 1) ms; SDMA 1 MB / 0 ms
    assert B.bandwidths(two) == (pytest.approx(13 / 3), 0.0)
    # a value that is not a number reads 0 and is named (it used to vanish without a word)
    two["b"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["RDMA"]["Transit Time(ms)"] = "abc"
    problems: list[str] = []
    assert B.bandwidths(two, problems) == (0.0, 0.0)
    assert problems == ["RDMA Transit Time(ms) 'abc' in 'b'"]  # a file of several steps names the step
    # an entry without a transit time gives no bandwidth alone, so its size stays out of the sum (review):
    # 10 MB / 2 ms and 3 MB / 0 ms read 5.0, not 6.5
    two["b"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["RDMA"]["Transit Time(ms)"] = 0
    assert B.bandwidths(two) == (5.0, 0.0)
    del two["b"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["RDMA"]["Transit Time(ms)"]
    assert B.bandwidths(two) == (5.0, 0.0)
    # every bad value is named, the size and the time
    bad = {"s1": {"collective": {"Total Op Info": {"Communication Bandwidth Info": {
        "SDMA": {"Transit Size(MB)": "abc", "Transit Time(ms)": "xyz"}}}}}}
    problems = []
    assert B.bandwidths(bad, problems) == (0.0, 0.0)
    assert problems == ["SDMA Transit Size(MB) 'abc'", "SDMA Transit Time(ms) 'xyz'"]
    # negative, boolean, beyond float range (10**400 raised an internal error) or a bandwidth that overflows:
    # each reads 0 and is named, never a negative, "inf" or 120-digit figure in the console; session 60's fuzz:
    # null or "" (read 0 unsaid), over 1 PB (1e308 MB / 1.8 ms printed 309 digits) or a week, a block that is no
    # object (read 0 unsaid)
    for size, time, named in ((-427.5, 27.3, "SDMA Transit Size(MB) -427.5"), (True, 1, "SDMA Transit Size(MB) true"),
                              (10**400, 1, "SDMA Transit Size(MB) 1000000000000000000000000000000000000..."),
                              (1e308, 1e-5, "SDMA Transit Size(MB) 1e+308"),
                              (1e308, 1.8, "SDMA Transit Size(MB) 1e+308"),
                              (1e9 + 1, 1.8, "SDMA Transit Size(MB) 1000000001.0"),
                              (1e12, 1e12, "SDMA Transit Size(MB) 1000000000000.0, SDMA Transit Time(ms) "
                                           "1000000000000.0"),
                              (None, 1, "SDMA Transit Size(MB) null"), ("", 1, "SDMA Transit Size(MB) ''"),
                              # a number written as text (session 60's fuzz: read as the number, unsaid)
                              ("5", 1, "SDMA Transit Size(MB) '5'"), (5, "2", "SDMA Transit Time(ms) '2'"),
                              (1, 7 * 86_400_000 + 1, "SDMA Transit Time(ms) 604800001")):
        one = {"s": {"collective": {"Total Op Info": {"Communication Bandwidth Info": {
            "SDMA": {"Transit Size(MB)": size, "Transit Time(ms)": time}}}}}}
        problems = []
        assert B.bandwidths(one, problems) == (0.0, 0.0)
        assert ", ".join(problems) == named
    # the bounds themselves are figures: 1 PB in a week
    one = {"s": {"collective": {"Total Op Info": {"Communication Bandwidth Info": {
        "SDMA": {"Transit Size(MB)": 1e9, "Transit Time(ms)": 7 * 86_400_000}}}}}}
    assert B.bandwidths(one) == (0.0, pytest.approx(1e9 / (7 * 86_400_000)))
    # each as the JSON file writes it: null, not Python's None (review65b)
    for block, shown in ((None, "null"), (False, "false"), (5, "5"), ("x", "'x'"), ([1], "[1]")):
        one["s"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"] = block
        problems = []
        assert B.bandwidths(one, problems) == (0.0, 0.0)
        assert problems == [f"SDMA {shown}"]
    meta = json.loads((DATA / "profiler_metadata_pg.json").read_text())
    pg = B.pg_names(meta)
    assert pg["Group 10.174.216.241%enp189s0f1_55000_0_1738895506630464 Communication"] == "tp"
    assert len(pg) == len(meta["parallel_group_info"])
    assert B.pg_names({}) == {}
    # a null group_name is no pg name, as an empty one: no "None" label, no pairing of two sides under it
    assert B.pg_names({"parallel_group_info": {"5": {"group_name": None}, "6": {"group_name": ""}}}) == {
        "Group 5 Communication": "", "Group 6 Communication": ""}


def _bandwidth_copy(tmp_path: Path) -> tuple[Path, Path, dict, dict, float]:
    """A copy of the fixture for its communication.json's edits: the copy, the file, its one step's document, the
    Total Op Info bandwidth block, and the SDMA bandwidth the file gives (size / time, from the JSON)."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, side)
    path = side / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    comm = json.loads(path.read_text(encoding="utf-8"))
    (entry,) = comm.values()
    info = entry["collective"]["Total Op Info"]["Communication Bandwidth Info"]
    expected = info["SDMA"]["Transit Size(MB)"] / info["SDMA"]["Transit Time(ms)"]
    assert expected > 1
    return side, path, comm, info, expected


def _sdma_run(side: Path, caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    """The SDMA Bandwidth the console shows for the fixture against ``side``, and the run's bandwidth-block lines."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(PT), str(side), enable_profiling_compare=True)
    col = res.summary["headers"].index("SDMA Bandwidth")
    return [row[col] for row in res.summary["rows"]], [m for m in caplog.messages if "bandwidth block" in m]


@pytest.mark.parametrize("key", ["Transit Time(ms)", "Transit Size(MB)"])
def test_bandwidth_block_without_a_key_is_said(tmp_path, caplog, key):
    """A communication.json bandwidth block without its Transit Time(ms) or Transit Size(MB) reads it as 0, as the
    original does, but every export writes both (the 9 communication.json of the samples, 735 blocks): the
    fixture's SDMA block of Total Op Info without one read 0.000GB/s against the unedited side's size / time
    (computed here from the file), without a word (found by fuzzing the side files). It is now named, with the
    file; the figure stays the original's."""
    side, path, comm, info, expected = _bandwidth_copy(tmp_path)
    (entry,) = comm.values()
    sdma = info["SDMA"]
    del sdma[key]
    path.write_text(json.dumps(comm), encoding="utf-8")
    absent: list[str] = []
    assert B.bandwidths(comm, [], absent) == (0.0, 0.0)
    assert absent == [f"SDMA {key}"]
    shown, said = _sdma_run(side, caplog)
    assert shown == [f"{expected:.3f}GB/s", "0.000GB/s"]
    assert said == [
        f"{path}: bandwidth block(s) without SDMA {key}; read as 0, as the original does (comparison side: a block "
        "without a time gives no bandwidth, one without a size moves none)"]
    # a file of several steps names the step of each block
    two = {"a": entry, "b": json.loads(json.dumps(entry))}
    absent = []
    B.bandwidths(two, [], absent)
    assert absent == [f"SDMA {key} in 'a'", f"SDMA {key} in 'b'"]
    # a file of many steps, each block without the key: the line names three of them and counts them all, 1,200
    # with a thousands separator as the other warning counts (review64b)
    for n, said in ((5, "5"), (1200, "1,200")):
        steps = {f"step{i}": json.loads(json.dumps(entry)) for i in range(1, n + 1)}
        path.write_text(json.dumps(steps), encoding="utf-8")
        assert _sdma_run(side, caplog)[1] == [
            f"{path}: bandwidth block(s) without SDMA {key} in 'step1', SDMA {key} in 'step2', SDMA {key} in "
            f"'step3', ... ({said} in all); read as 0, as the original does (comparison side: a block without a "
            "time gives no bandwidth, one without a size moves none)"]


@pytest.mark.parametrize("cut", ["drop", "rename", "empty"])
def test_bandwidth_kind_block_cut_is_said(tmp_path, caplog, cut):
    """The fixture's Total Op Info bandwidth block without its SDMA block (cut, or renamed 'SDMA_x'), or emptied to
    {}: the SDMA bandwidth read 0.000GB/s against the unedited side's size / time (computed here from the file),
    without a word (found by fuzzing the side files, fuzz66). Every export writes an RDMA and an SDMA block (the
    9 communication.json of the samples, 159 bandwidth blocks); the missing one is now named, the figure stays 0."""
    side, path, comm, info, expected = _bandwidth_copy(tmp_path)
    assert "RDMA" in info
    if cut == "empty":
        info.clear()
    else:
        sdma = info.pop("SDMA")
        if cut == "rename":
            info["SDMA_x"] = sdma
    path.write_text(json.dumps(comm), encoding="utf-8")
    gone = "an RDMA block, an SDMA block" if cut == "empty" else "an SDMA block"
    absent: list[str] = []
    assert B.bandwidths(comm, [], absent) == (0.0, 0.0)
    assert ", ".join(absent) == gone
    shown, said = _sdma_run(side, caplog)
    assert shown == [f"{expected:.3f}GB/s", "0.000GB/s"]
    assert said == [
        f"{path}: bandwidth block(s) without {gone}; read as 0, as the original does (comparison side: a block "
        "without a time gives no bandwidth, one without a size moves none)"]


def test_bandwidth_value_written_null_is_unusable_not_absent(tmp_path, caplog):
    """A bandwidth block whose Transit Time(ms) is there but null is no usable number, not a block without the key:
    the fixture's one step copied to four, each SDMA time null, says the unusable values (three named, then the
    count) and no block without a key."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, side)
    path = side / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    (_, entry), = json.loads(path.read_text(encoding="utf-8")).items()
    entry["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"]["Transit Time(ms)"] = None
    path.write_text(json.dumps({f"step{i}": entry for i in range(1, 5)}), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(PT), str(side), enable_profiling_compare=True)
    assert [m for m in caplog.messages if "bandwidth block" in m] == []
    assert [m for m in caplog.messages if "not a usable number" in m] == [
        f"{path}: not a usable number (no number, not finite, negative, or over 1 PB or a week): SDMA Transit "
        "Time(ms) null in 'step1', SDMA Transit Time(ms) null in 'step2', SDMA Transit Time(ms) null in 'step3', ... "
        "(4 in all); that bandwidth is shown as 0 (comparison side)"]


# --------------------------------------------------------------------------- parity with the original

PAIRS = {
    "1-npu-text-l1-vs-l2": ("msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
                            "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"),
    "2-npu-text-l0-rank0-vs-rank1": ("msinsight/test/data/pytorch/text/level0/rank0_ascend_pt",
                                     "msinsight/test/data/pytorch/text/level0/rank1_ascend_pt"),
    "8-npu-traceview-file-vs-file": (
        "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json",
        "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"),
    "8b-npu-traceview-file-vs-dir": ("mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json",
                                     "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"),
    "4-gpu-alexnet-vs-npu-text-l1": (
        "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"),
    "9d-mindspore-legacy-msprof-timeline-files": (
        "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/"
        "timeline/msprof_0_2_1.json",
        "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1/"
        "timeline/msprof_1_0_1.json"),
}


def _close(ref: float, got: float) -> bool:
    return abs(ref - got) <= 0.01 or abs(ref - got) <= 0.005 * abs(ref)


def _console_block(readme: str, pair: str) -> str:
    num = pair.split("-")[0]
    sec = readme.split(f"\n## {num}. ", 1)[1].split("\n## ", 1)[0]
    block = sec.split("Console output (stdout, verbatim):", 1)[1]
    return block.split("```", 2)[1].strip("\n")


@pytest.mark.parametrize("pair", list(PAIRS))
def test_overall_metrics_match_reference(samples, reference_outputs, pair):
    base, comp = PAIRS[pair]
    for p in (base, comp):
        if not (samples / p).exists():
            pytest.skip(f"{p} not in samples")
    ref = read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx",
                        sheet_name="OverallMetrics", header=2)
    r = compare(str(samples / base), str(samples / comp), enable_profiling_compare=True)
    got = r.sheet("OverallMetrics")
    assert got["Index"].tolist() == ref["Index"].tolist()
    for col in ("Duration(ms)", "Duration(ms).1", "Duration Ratio", "Duration Ratio.1", "Number", "Number.1",
                "Diff Duration(ms)"):
        for idx, x, y in zip(ref["Index"], ref[col], got[col], strict=True):
            if isinstance(x, str) or isinstance(y, str):
                assert str(x) == str(y), (col, idx)
            else:
                assert _close(float(x), float(y)), (col, idx, x, y)
    for idx, x, y in zip(ref["Index"], ref["Diff Ratio"], got["Diff Ratio"], strict=True):
        x, y = float(x), float(y)
        assert (math.isinf(x) and math.isinf(y)) or abs(x - y) <= 0.005 * max(1.0, abs(x)), (idx, x, y)
    want = _console_block((reference_outputs / "README.md").read_text(), pair)
    assert r.console_table().strip("\n") == want


def test_level0_reports_missing_rows(samples, caplog):
    base = samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
    if not base.exists():
        pytest.skip("level0 sample absent")
    p = load_profile(str(base), OPTS)
    # one line naming the folder it is missing from (the two sides' lines used to read alike)
    assert p.warnings == [f"{base / 'ASCEND_PROFILER_OUTPUT'}: The file communication.json does not exist. (no RDMA "
                          "or SDMA Bandwidth, which the Model Profiling Time Distribution table reads from it; a "
                          "Level0 export writes none, Level1 or Level2 writes it)"]
    bd = B.npu_breakdown(p, OPTS)
    assert bd.hide_op_details and bd.computing_count == 0
    # profiler_info_0.json says Level0: the line says so, and how PMU columns are recorded (it guessed "Level0
    # export or aic_metrics other than PipeUtilization")
    assert p.extra["profiler_level"] == "Level0"
    assert f"{base}: the categorised computing rows (Cube, Vector, FA, Conv, Matmul, ...) are absent: " \
        "kernel_details.csv has no PMU columns (a Level0 export records none: Level1 or Level2 with aic_metrics " \
        "PipeUtilization does)" in bd.missing
    assert bd.bandwidth_missing == "no usable communication.json (a Level0 export records none; Level1 or Level2 " \
        "writes it)"
    # a Level1 run with other AI Core metrics names them; a profile whose profiler_info says neither, the guess
    p.extra.update(profiler_level="Level1", aic_metrics="ACL_AICORE_MEMORY")
    assert any(m.endswith("has no PMU columns (recorded with aic_metrics ACL_AICORE_MEMORY: PipeUtilization records "
                          "them)") for m in B.npu_breakdown(p, OPTS).missing)
    p.extra.pop("profiler_level")
    p.extra.pop("aic_metrics")
    assert any(m.endswith("has no PMU columns (Level0 export or aic_metrics other than PipeUtilization)")
               for m in B.npu_breakdown(p, OPTS).missing)


def test_level1_export_that_lost_its_pmu_columns_says_so(samples, tmp_path):
    """profiler_info_0.json of the level-1 sample says Level1 with ACL_AICORE_PIPE_UTILIZATION, which records PMU
    columns; with kernel_details.csv cut after Context ID (its 21 first columns, raw CSV) the line guessed "Level0
    export or aic_metrics other than PipeUtilization", which profiler_info contradicts. It now says the settings
    and that the export lost the columns, as does the category check's reason."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    if not src.exists():
        pytest.skip("level1 sample absent")
    info = json.loads((src / "profiler_info_0.json").read_text())["config"]["experimental_config"]
    assert (info["_profiler_level"], info["_aic_metrics"]) == ("Level1", "ACL_AICORE_PIPE_UTILIZATION")
    base = shutil.copytree(src, tmp_path / "rank0_ascend_pt")
    kd = base / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(src / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    keep = rows[0].index("Context ID") + 1
    assert keep == 21 and "aicore_time(us)" in rows[0][keep:]
    with open(kd, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(r[:keep] for r in rows)
    p = load_profile(str(base), OPTS)
    why = ("profiler_info.json says Level1 with aic_metrics ACL_AICORE_PIPE_UTILIZATION, which records them: the "
           "export lost them after it was written")
    assert f"{base}: the categorised computing rows (Cube, Vector, FA, Conv, Matmul, ...) are absent: " \
        f"kernel_details.csv has no PMU columns ({why})" in B.npu_breakdown(p, OPTS).missing
    assert checks._why_no_categories(p) == f"its kernel_details.csv has no PMU counters ({why})"
    p.extra["aic_metrics"] = "ACL_AICORE_MEMORY"  # other metrics: named, as before
    assert checks._why_no_categories(p) == ("its kernel_details.csv has no PMU counters (recorded with aic_metrics "
                                            "ACL_AICORE_MEMORY: PipeUtilization records them)")


def test_level0_without_categories_is_said_once(samples, caplog):
    """A Level0 export beside a Level2 one: the breakdown's "categorised computing rows are absent" line and the
    category check ("One side's computing time is not split into categories") said the same of the same side. The
    check says it, with the breakdown's reason (how PMU columns are recorded), and the breakdown's line is left
    out; two Level0 exports, which the check does not note (neither side is split), keep each side's line."""
    pt = samples / "msinsight/test/data/pytorch/text"
    level0, level2 = pt / "level0/rank0_ascend_pt", pt / "level2/rank0_ascend_pt"
    if not (level0.exists() and level2.exists()):
        pytest.skip("level0 / level2 samples absent")
    reason = ("kernel_details.csv has no PMU columns (a Level0 export records none: Level1 or Level2 with "
              "aic_metrics PipeUtilization does)")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        r = compare(str(level0), str(level2), enable_profiling_compare=True)
    said = [m for m in caplog.messages if "categor" in m]
    # a block: the reading, then a line per side that has no categories, its reason not nested in another's
    # parentheses ("(base: kernel_details.csv has no PMU columns (a Level0 ...))", 497 characters on one line)
    assert said == ["One side's computing time is not split into categories (base 0.0%, comparison 99.9%): the "
                    "waterfall takes computing as one step (OverallMetrics shows that side's categories at 0), so "
                    "compare Computing Time, not its categories; what a side lacks to split it by:"], said
    at = caplog.messages.index(said[0])
    assert caplog.messages[at + 1] == f"  - base side: {reason}"
    assert not [m for m in caplog.messages[at + 2:] if m.startswith("  - ")]  # one side: one line
    detail = r.guards.set_index("Check").loc["computing split into categories", "Detail"]
    assert detail.endswith(f"compare Computing Time, not its categories; base side: {reason}")  # the Summary, JSON
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(level0), str(level0 / ".." / "rank1_ascend_pt"), enable_profiling_compare=True)
    said = [m for m in caplog.messages if "categor" in m]
    # the side first in the reason's own parenthesis: "(...) (base side)" was two in a row
    assert said == [f"{p}: the categorised computing rows (Cube, Vector, FA, Conv, Matmul, ...) are absent: "
                    f"kernel_details.csv has no PMU columns ({side}: a Level0 export records none: Level1 or Level2 "
                    "with aic_metrics PipeUtilization does)"
                    for p, side in ((level0, "base side"),
                                    (level0 / ".." / "rank1_ascend_pt", "comparison side"))], said


def test_bandwidth_absent_only_where_the_console_shows_the_column(samples, caplog):
    """Two Level0 text exports (no communication.json) have no bandwidth column: each side's "RDMA/SDMA bandwidth
    is absent" line spoke of a figure no output shows, under the loader's line that the file does not exist. Beside
    a level-1 export, whose communication.json gives SDMA 427.596 MB in 27.316 ms, the column shows the Level0
    side's 0.000GB/s, and the note under the console table says why (a log line before the table did). The
    loader's line on the missing file names the side and what reads it (test_user_walk_leftovers): no other line
    speaks of the bandwidth."""
    pt = samples / "msinsight/test/data/pytorch/text"
    level0 = [pt / f"level0/rank{r}_ascend_pt" for r in (0, 1)]
    level1 = pt / "level1/rank0_ascend_pt"
    if not all(p.exists() for p in (*level0, level1)):
        pytest.skip("level0 / level1 samples absent")

    def absent(base: Path, comparison: Path) -> tuple[list[str], list[str]]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(base), str(comparison), enable_profiling_compare=True)
        assert not [m for m in caplog.messages if "andwidth" in m and "communication.json does not exist" not in m]
        lines = [n for n in res.summary["notes"] if "Bandwidth" in n]
        headers = res.summary["headers"]
        return lines, [row[headers.index("SDMA Bandwidth")] for row in res.summary["rows"]] \
            if "SDMA Bandwidth" in headers else []

    assert absent(*level0) == ([], [])
    comm = json.loads((level1 / "ASCEND_PROFILER_OUTPUT/communication.json").read_text(encoding="utf-8"))
    sdma = comm["step50"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"]
    assert absent(level0[0], level1) == (
        ["Base row: no usable communication.json (a Level0 export records none; Level1 or Level2 writes it), so its "
         "SDMA Bandwidth 0.000GB/s is not a measurement."],
        ["0.000GB/s", f"{sdma['Transit Size(MB)'] / sdma['Transit Time(ms)']:.3f}GB/s"])


def test_bandwidth_notes_say_why_in_each_case(tmp_path, caplog):
    """The NPU excerpt's communication.json gives SDMA 15.654GB/s; beside it a side with nothing to read shows
    0.000GB/s, and one note under the console table says so: a communication.json without its 'Communication
    Bandwidth Info' block (the log names the file's problem, as the loader names a missing file), a
    trace_view.json given alone (the log's line on the bare trace says what is absent and to pass its directory;
    the notes say what each cell costs)."""
    comm = json.loads((PT / "ASCEND_PROFILER_OUTPUT/communication.json").read_text(encoding="utf-8"))
    sdma = comm["step50"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"]
    expected = f"{sdma['Transit Size(MB)'] / sdma['Transit Time(ms)']:.3f}GB/s"
    blockless = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, blockless)
    for step in comm.values():
        for kind in step.values():
            for op in kind.values():
                op.pop("Communication Bandwidth Info", None)
    (blockless / "ASCEND_PROFILER_OUTPUT/communication.json").write_text(json.dumps(comm), encoding="utf-8")
    bare = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    for base, notes, logged in (
            (blockless, ["Base row: its communication.json gives no bandwidth, so its SDMA Bandwidth 0.000GB/s is "
                         "not a measurement."],
             f"{blockless}: communication.json has no 'Communication Bandwidth Info' block (base side)"),
            (bare, ["Base row: its computing time is not split into categories (see the validity checks), so its "
                    "Cube Time(Num) and Vector Time(Num) 0.000s(0) are not measurements: its Computing Time is all "
                    "Other Time.",
                    "Base row: no peak reserved memory recorded, so its Mem Usage 0.00G is not a measurement.",
                    "Base row: a trace file given without its profiling directory has no communication.json, so its "
                    "SDMA Bandwidth 0.000GB/s is not a measurement."],
             f"{bare}: no computing categories, Mem Usage or bandwidths without its profiling directory: pass the "
             "directory instead (base side)")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(base), str(PT), enable_profiling_compare=True)
        assert [m for m in caplog.messages if "communication.json" in m or "or bandwidths" in m] == [logged]
        headers = res.summary["headers"]
        assert [row[headers.index("SDMA Bandwidth")] for row in res.summary["rows"]] == ["0.000GB/s", expected]
        assert _without_wait_note(res.summary["notes"]) == notes


def test_a_missing_side_file_is_named_once_per_side(samples, caplog):
    """The loader's line (the original's) says a side file does not exist; the line on what that costs named the
    file again: a Level0 text export beside a level-1 one read "The file communication.json does not exist." and
    "RDMA/SDMA bandwidth is absent: no communication.json", the MindSpore excerpt (no memory_record.csv, by
    listing) beside a GPU trace "Mem Usage is absent: no memory_record.csv" under the loader's line. The cost is
    said once, under the console table where the 0.000GB/s or 0.00G is (a log line said it a second time, and
    the bandwidth's was a log line alone): the log has the loader's line, the notes the cost. The loader's line on
    communication.json names its side and what reads the file (test_user_walk_leftovers), as nothing else does
    where no bandwidth column shows; the note, where one does, what the side's 0.000GB/s means."""
    level0 = samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
    level1 = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    assert not (level0 / "ASCEND_PROFILER_OUTPUT/communication.json").exists()
    assert not (MS / "ASCEND_PROFILER_OUTPUT/memory_record.csv").exists()
    gpu = Path(__file__).resolve().parents[1] / "sample_data/bert-small_h100.json.gz"
    # the Level0 side's computing has no category beside the level-1 side's: its Conv cells' note comes first
    unsplit = ("Base row: its computing time is not split into categories (see the validity checks), so its Conv "
               "Time(Forward)(Num), Conv Time(Backward)(Num) and SDMA Time(Num) 0.000s(0) are not measurements: its "
               "Computing Time is all Other Time.")
    for base, comparison, name, cost, notes in (
            (level0, level1, "communication.json", "andwidth",
             [unsplit,
              f"Base row: its Wait Time {BASE_ZERO} is not a measurement: its trace_view.json holds the HCCL "
              "communication ops but no HCCL task (a Level0 export records none; Level1 or Level2 records them), "
              "so none reads as Notify_Wait.",
              "Base row: no usable communication.json (a Level0 export records none; Level1 or Level2 writes it), "
              "so its SDMA Bandwidth 0.000GB/s is not a measurement.",
              # the level-1 side's cells as the original prints them for it (reference pair 1, 2nd row)
              "Comparison row: its Cube Time(Num) 0.001s(14) and Vector Time(Num) 0.004s(94) have no column here, "
              "as in the original, which leaves both out where a side has no PMU figures to split its computing by; "
              "the OverallMetrics sheet holds them, by category (the base side: kernel_details.csv has no PMU "
              "columns (a Level0 export records none: Level1 or Level2 with aic_metrics PipeUtilization does))."]),
            (gpu, MS, "memory_record.csv", "Mem Usage",
             ["Comparison row: no peak reserved memory recorded, so its Mem Usage 0.00G is not a measurement."])):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(base), str(comparison), enable_profiling_compare=True)
        lines = [r.getMessage() for r in caplog.records]
        named = [m for m in lines if name in m]
        assert len(named) == 1 and f"The file {name} does not exist." in named[0], named
        assert not [m for m in lines if cost in m and m not in named]
        assert _without_wait_note(res.summary["notes"]) == notes


def test_unsplit_level0_sdma_time_is_not_a_measurement(samples):
    """A Level0 text export has no PMU figures, so its TensorMove copies (an NPU side's SDMA Time holds them) sit in
    Other Time, as the original counts them: its SDMA Time(Num) 0.000s(0) beside the level-1 export's 0.001s(11)
    read as a run without copies, and the note under the table named only its Conv cells. Figures counted from the
    two kernel_details.csv files: the same 11 aclnnInplaceCopy TensorMove kernels on both sides."""
    root = samples / "msinsight/test/data/pytorch/text"
    counts = []
    for level in ("level0", "level1"):
        with open(root / level / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        moves = [r for r in rows if r["Name"].startswith("aclnnInplaceCopy") and "TensorMove" in r["Name"]]
        counts.append((len(moves), sum(Decimal(r["Duration(us)"]) for r in moves)))
    assert counts[0][0] == counts[1][0] == 11
    res = compare(str(root / "level0/rank0_ascend_pt"), str(root / "level1/rank0_ascend_pt"),
                  enable_profiling_compare=True)
    headers, rows = res.summary["headers"], res.summary["rows"]
    sdma = [row[headers.index("SDMA Time(Num)")] for row in rows]
    # the level-1 side has no SDMA task on a compute stream: its cell is its TensorMove kernels alone
    assert sdma == ["0.000s(0)", f"{float(counts[1][1]) / 1e6:.3f}s(11)"] == ["0.000s(0)", "0.001s(11)"]
    assert [n for n in res.summary["notes"] if "not split" in n] == [
        "Base row: its computing time is not split into categories (see the validity checks), so its Conv "
        "Time(Forward)(Num), Conv Time(Backward)(Num) and SDMA Time(Num) 0.000s(0) are not measurements: its "
        "Computing Time is all Other Time."]


def test_one_category_cell_is_not_a_measurement_in_the_singular(samples, tmp_path):
    """A Level0 text export beside the bundled H100 trace has one category column (Flash Attention Time(Forward),
    the GPU side's 4 SDPA kernels): its note read "its Flash Attention Time(Forward)(Num) 0.000s(0) are not
    measurements" of one cell. The trace's one memory copy (a DtoH on the compute stream) makes the GPU's SDMA
    Time 0.000s(1), beside which the Level0 side's 0.000s(0) is no measurement either (its TensorMove kernels are
    Other Time): a copy of the trace without that copy has the one cell."""
    level0 = samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
    gpu = Path(__file__).resolve().parents[1] / "sample_data/bert-small_h100.json.gz"
    with gzip.open(gpu, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    copies = [e for e in doc["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    assert [(e["name"], e["args"]["stream"]) for e in copies] == [("Memcpy DtoH (Device -> Pinned)", 7)]
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "gpu_memcpy"]
    copyless = tmp_path / "bert-small_h100_copyless.pt.trace.json"
    copyless.write_text(json.dumps(doc), encoding="utf-8")
    lead = "Base row: its computing time is not split into categories (see the validity checks), so its "
    for trace, cells in ((copyless, "Flash Attention Time(Forward)(Num) 0.000s(0) is not a measurement"),
                         (gpu, "Flash Attention Time(Forward)(Num) and SDMA Time(Num) 0.000s(0) are not "
                               "measurements")):
        res = compare(str(level0), str(trace), enable_profiling_compare=True)
        assert [h for h in res.summary["headers"] if "Time(" in h and "(Num)" in h and "SDMA" not in h] == [
            "Flash Attention Time(Forward)(Num)"]
        assert [n for n in res.summary["notes"] if "not split" in n] == [
            f"{lead}{cells}: its Computing Time is all Other Time."]


def test_legacy_timeline_without_overlap_lane(samples, reference_outputs, tmp_path, caplog):
    """Pair 9c: no Overlap Analysis lane -> all zeros, no OverallMetrics sheet, same console as the original."""
    root = samples / "mindinsight/tests/utils/resource"
    base = root / "run_1/normal_run/profiler/timeline_display_1.json"
    comp = root / "run_2/normal_run/profiler/ascend_timeline_display_1.json"
    if not (base.exists() and comp.exists()):
        pytest.skip("legacy MindSpore timelines absent")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        r = compare(str(base), str(comp), enable_profiling_compare=True)
    # a legacy timeline has no profiling directory to pass: the line says it holds none of what is absent
    assert [m for m in caplog.messages if "computing categories" in m] == [
        f"{p}: no computing categories, Mem Usage or bandwidths: a lone timeline file holds none of them ({side})"
        for p, side in ((base, "base side"), (comp, "comparison side"))]
    assert "OverallMetrics" not in r.sheet_names
    pair = "9c-mindspore-legacy-timeline-display-files"
    assert r.console_table().strip("\n") == _console_block((reference_outputs / "README.md").read_text(), pair)
    # every comparison on: still no sheet (no E2E time: no waterfall either), so no workbook
    full = compare(str(base), str(comp))
    assert full.sheet_names == [] and full.waterfall.empty
    assert full.to_excel(str(tmp_path)) == "" and list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- edge rules (mutation audit)


def test_cube_by_a_small_mac_time_or_aicore_time():
    """reference-1 §5.3: a kernel is cube when mac_time(us) > 0 or aicore_time(us) > 0 (NaN is not > 0):
    0.5 us of either is enough. No flows or ops, Types that name no category: cube -> Cube, else Vector."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="ascend_output")
    p.kernel_details = pd.DataFrame({
        "Name": ["a", "b", "c"], "Type": ["Foo", "Foo", "Foo"], "ts": [0, 100, 200], "dur": [10, 20, 40],
        "mac_time(us)": [0.5, 0.0, np.nan], "aicore_time(us)": [np.nan, 0.5, 0.0], "aiv_vec_time(us)": [1.0] * 3})
    bd = B.npu_breakdown(p, OPTS)
    assert (bd.b("other_cube").ns, bd.b("other_cube").count) == (30, 2)
    assert (bd.b("vector_notrans").ns, bd.b("vector_notrans").count) == (40, 1)


def test_flow_lookup_of_kernels_outside_the_flow_ends():
    """A kernel start no flow ends at (before, between or after every flow end) has no flow start (0)."""
    got = B._lookup(np.array([10, 20]), np.array([1, 2]), np.array([5, 10, 15, 20, 25]))
    assert got.tolist() == [0, 1, 0, 2, 0]


def test_wait_candidate_history_starts_with_others():
    """reference-1 §5.7: a plane's first task has no history; the second's is "OOO" + the first letter, so a
    Notify_Wait after one RDMASend is a candidate (only "RR" at the end excludes). A single task too."""
    tasks = pd.DataFrame({"name": ["RDMASend", "Notify_Wait"], "tid": [1, 1]})
    assert B.wait_candidates(tasks).tolist() == [False, True]
    assert B.wait_candidates((np.array(["Notify_Wait"], dtype=object), np.array([4]))).tolist() == [True]


def test_mc2_sqe_ending_at_the_kernel_start_is_collected():
    """reference-1 §5.6: only SQEs whose end < kernel start are skipped; one ending at the start pairs. A later
    kernel after every SQE gets none."""
    from msprof_compare.compare.breakdown import Breakdown

    bd = Breakdown("NPU")
    B.add_mc2(bd, np.array([5, 10, 15, 20]), np.array([0, 1]), np.array(["M", "N"], dtype=object),
              np.array([5, 100]), np.array([25, 10]), np.array([0, 0]))
    assert bd.mc2["M"].communication_ns == (10 - 5) + (20 - 15)
    assert (bd.mc2["N"].communication_ns, bd.mc2["N"].count) == (0, 1)


def test_planes_belong_to_the_group_lane_above_them():
    """reference-1 §5.1: HCCL threads in sort_index order; a named thread after a group lane is a plane of
    the latest group; an unnamed thread or one before any group is no plane."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="trace")
    p.extra["hccl_pid"] = 7
    p.threads = frame("threads", {
        "pid": [7] * 6, "tid": [50, 0, 1, 2, 10, 11],
        "name": ["Plane 9", "Group 0 Communication", "Plane 0", "", "Group 1 Communication", "Plane 1"],
        "sort_index": [0, 1, 2, 3, 4, 5]})
    assert B.hccl_lanes(p) == [("Group 0 Communication", 0, [1]), ("Group 1 Communication", 10, [11])]


def test_bandwidth_of_a_profile_of_two_steps(samples, tmp_path):
    """schedule(active=2) writes one communication.json entry per step. The OverallMetrics rows cover both steps
    (a text export's breakdown ignores --base_step), so the bandwidth is both steps' transit size over their
    transit time; the original shows the last step's alone. Built from the level-1 sample's step50 entry, copied
    as step51 with twice the SDMA transit size; the figures are computed here from the JSON values."""

    base = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    if not base.exists():
        pytest.skip("level-1 sample absent")
    side = tmp_path / base.name
    shutil.copytree(base, side)
    path = side / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    comm = json.loads(path.read_text(encoding="utf-8"))
    assert list(comm) == ["step50"]
    step51 = json.loads(json.dumps(comm["step50"]))
    sdma = step51["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"]
    size, time = sdma["Transit Size(MB)"], sdma["Transit Time(ms)"]
    assert size > 0 and time > 0
    sdma["Transit Size(MB)"] = 2 * size
    comm["step51"] = step51
    path.write_text(json.dumps(comm), encoding="utf-8")
    expected = (size + 2 * size) / (time + time)  # 1.5 x step50's bandwidth
    assert B.bandwidths(comm)[1] == pytest.approx(expected)
    summary = compare(str(side), str(base), enable_profiling_compare=True).summary
    cells = [row[summary["headers"].index("SDMA Bandwidth")] for row in summary["rows"]]
    assert cells == [f"{expected:.3f}GB/s", f"{size / time:.3f}GB/s"]


def test_bandwidth_block_without_a_size_or_a_time():
    """reference-1 §5.9: a missing Transit Size reads 0 (0 GB/s) and a missing Transit Time too (time <= 0: 0)."""
    info = {"RDMA": {"Transit Time(ms)": 2.0}, "SDMA": {"Transit Size(MB)": 10.0}}
    comm = {"step": {"collective": {"Total Op Info": {"Communication Bandwidth Info": info}}}}
    assert B.bandwidths(comm) == (0.0, 0.0)
    info["SDMA"]["Transit Time(ms)"] = 4.0
    assert B.bandwidths(comm) == (0.0, 2.5)


def test_shown_values_are_cut_after_40_characters():
    from msprof_compare.textsafe import short_repr

    assert short_repr("x" * 38) == repr("x" * 38)           # 40 characters with the quotes: whole
    assert short_repr("x" * 39) == repr("x" * 39)[:37] + "..."
    assert short_repr(7) == "7"


# --------------------------------------------------------------------------- coverage audit


def test_clip_walk_stops_at_a_window_after_the_op():
    """reference-1 §5.8 CLIP: a window starting after the op's end ends that op's walk (op [0, 10] against
    windows [5, 8] and [20, 30] keeps [5, 8] only; op [25, 28] then finds [20, 30])."""
    s, e = clip_walk(*_iv([[0, 10], [25, 28]]), *_iv([[5, 8], [20, 30]]))
    assert list(zip(s.tolist(), e.tolist(), strict=True)) == [(5, 8), (25, 28)]
    s, e = clip_walk(*_iv([[0, 10]]), *_iv([[20, 30]]))
    assert s.size == e.size == 0


def test_flow_start_map_reads_async_npu_flows_only():
    """Kernels find their launching op by async_npu flows; a trace with other flows only (fwdbwd) gives none,
    so every kernel's flow start is 0 (no covering op)."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="trace")
    p.flows = frame("flows", {"id": ["1", "2"], "cat": ["fwdbwd", "fwdbwd"], "s_ts": [10, 20], "f_ts": [30, 40]})
    keys, starts = B.flow_start_map(p)
    assert keys.size == starts.size == 0
    p.flows = frame("flows", {"id": ["1", "2", "3"], "cat": ["fwdbwd", "async_npu", "async_npu"],
                              "s_ts": [10, 20, 25], "f_ts": [30, 40, 40]})
    keys, starts = B.flow_start_map(p)
    assert (keys.tolist(), starts.tolist()) == ([40], [25])  # one start per end: the last flow wins


def test_bandwidth_block_that_is_not_an_object_is_no_block():
    """A "Communication Bandwidth Info" value that is no JSON object (a list, a number) holds no figures: it is
    passed over as an entry without the block, so an earlier entry's figures stand."""
    def entry(info):
        return {"collective": {"Total Op Info": {"Communication Bandwidth Info": info}}}

    good = {"RDMA": {"Transit Size(MB)": 10, "Transit Time(ms)": 4}, "SDMA": {"Transit Size(MB)": 14,
                                                                            "Transit Time(ms)": 2}}
    assert B.bandwidths({"step1": entry([1, 2])}) is None
    assert B.bandwidths({"step1": entry(good), "step2": entry(3)}) == (2.5, 7.0)


def test_group_with_two_lanes_counts_both(samples, tmp_path):
    """msprof gives a communication group one HCCL lane per task kind (ordinary and MC2 / KFC), both named
    "Group <g> Communication" with planes of their own. The level-1 sample's group lane split so: its last two
    all-reduces moved to a second "Group 0 Communication" lane with an empty "Plane 0". The group row keeps all
    four ops: its Wait + Transmit is the whole uncovered communication time, summed here with plain json from
    the Overlap Analysis lane (one group); before, it held the second lane's two ops only."""
    dst, trace, events = _level1_copy(samples, tmp_path)
    pids = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl = next(p for p, n in pids.items() if n == "HCCL")
    ops = sorted((e for e in events if e.get("pid") == hccl and e.get("tid") == 0 and e.get("ph") == "X"),
                 key=lambda e: float(e["ts"]))
    assert len(ops) == 4
    for e in ops[2:]:
        e["tid"] = 9
    for tid, name in ((9, "Group 0 Communication"), (10, "Plane 0")):
        events.append({"name": "thread_name", "pid": hccl, "tid": tid, "args": {"name": name}, "ph": "M"})
        events.append({"name": "thread_sort_index", "pid": hccl, "tid": tid, "args": {"sort_index": tid}, "ph": "M"})
    trace.write_text(json.dumps(events))
    overlap = next(p for p, n in pids.items() if n == "Overlap Analysis")
    uncovered = sum(Decimal(str(e["dur"])) for e in events if e.get("pid") == overlap and e.get("ph") == "X"
                    and e["name"] == "Communication(Not Overlapped)")
    bd = B.npu_breakdown(load_profile(str(dst), Options(enable_profiling_compare=True)))
    assert list(bd.groups) == ["Group 0 Communication"]
    g = bd.groups["Group 0 Communication"]
    assert g["wait"] + g["transmit"] == int(uncovered * 1000) > 0
    assert bd.wait_ns == g["wait"]


def test_overlapped_total_counts_pairs_whose_labels_coincide(samples, tmp_path):
    """reference-1 §9.4 item 27: `\tUncovered Communication Overlapped` is the sum of ALL group-pair overlaps
    (the original sums its pair dict, keyed by group names); the pair rows are labelled by pg name, so two pairs
    can share a label (two groups of one pg name, as the two "embd" groups of the msinsight GPT-3 sample's
    profiler_metadata.json). Edited copy of level1 rank0: its lane renamed "Group group_name_0 Communication"
    (pg "dp"), two made-up lanes group_name_20 / group_name_21 (pg "embd" both) each holding a copy of the first
    all-reduce, moved 1 ms / 2 ms later. Pairs (0, 20), (0, 21) are both labelled "dp & embd"; the total lost one
    of them (151.19 ms instead of 226.86). Expected: plain-Python intersections of each pair's ops with the
    Communication(Not Overlapped) windows, summed over the three pairs."""
    dst, trace, events = _level1_copy(samples, tmp_path)
    pids = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl = next(p for p, n in pids.items() if n == "HCCL")
    overlap = next(p for p, n in pids.items() if n == "Overlap Analysis")
    ops = sorted((e for e in events if e.get("pid") == hccl and e.get("tid") == 0 and e.get("ph") == "X"),
                 key=lambda e: Decimal(e["ts"]))
    for e in events:
        if e.get("ph") == "M" and e.get("pid") == hccl and e["args"].get("name") == "Group 0 Communication":
            e["args"]["name"] = "Group group_name_0 Communication"
    lanes = {0: [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ops]}
    for shift, tid in ((1000, 9), (2000, 10)):
        events.append({"name": "thread_name", "pid": hccl, "tid": tid, "ph": "M",
                       "args": {"name": f"Group group_name_{tid + 11} Communication"}})
        events.append({"name": "thread_sort_index", "pid": hccl, "tid": tid, "args": {"sort_index": tid}, "ph": "M"})
        events.append(dict(ops[0], tid=tid, ts=str(Decimal(ops[0]["ts"]) + shift)))
        lanes[tid] = [(ns(ops[0]["ts"]) + shift * 1000, ns(ops[0]["ts"]) + shift * 1000 + ns(ops[0]["dur"]))]
    trace.write_text(json.dumps(events))
    (dst / "profiler_metadata.json").write_text(json.dumps({"parallel_group_info": {
        "group_name_0": {"group_name": "dp"}, "group_name_20": {"group_name": "embd"},
        "group_name_21": {"group_name": "embd"}}}))
    windows = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events if e.get("pid") == overlap
                     and e.get("ph") == "X" and e["name"] == "Communication(Not Overlapped)")

    def covered(a, b, w):  # |a ∩ b ∩ w|, each a list of disjoint intervals (brute force over all triples)
        return sum(max(0, min(x[1], y[1], z[1]) - max(x[0], y[0], z[0])) for x in a for y in b for z in w)

    assert all(p[1] <= q[0] for p, q in zip(windows, windows[1:], strict=False))  # disjoint windows
    total = covered(lanes[0], lanes[9], windows) + covered(lanes[0], lanes[10], windows) \
        + covered(lanes[9], lanes[10], windows)
    assert round(total / 1e6, 2) == 226.86
    sheet = compare(dst, dst, enable_profiling_compare=True).sheet("OverallMetrics")
    rows = dict(zip(sheet["Index"], sheet["Duration(ms)"], strict=False))
    assert rows["\tUncovered Communication Overlapped"] == pytest.approx(total / 1e6, abs=1e-6)
    pairs = [i for i in sheet["Index"] if " & " in i]
    assert pairs == ["\t\tdp & embd", "\t\tembd & embd"]  # the rows keep the original's label keys


def test_hccl_aiv_kernels_are_in_no_computing_category(tmp_path: Path) -> None:
    """HCCL's AIV-mode kernels (``*AivKernel``) are communication: the Overlap Analysis lane already leaves them
    out of Computing, so their kernel_details.csv rows leave the computing categories too (the original counts
    one as Vector, and the categories then exceeded Computing). Renaming one row with PMU values so: one call and
    its Duration(us) fewer in its category, Computing unchanged."""
    import csv
    import shutil

    side = tmp_path / PT.name
    shutil.copytree(PT, side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    name, dur, vec = head.index("Name"), head.index("Duration(us)"), head.index("aiv_vec_time(us)")
    row = next(r for r in rows[1:] if r[vec] not in ("", "N/A"))
    row[name] = "HcclAllReduceAivKernel"
    with open(kd, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    got, want = B.npu_breakdown(load_profile(str(side), OPTS)), B.npu_breakdown(load_profile(str(PT), OPTS))
    assert got.computing_ns == want.computing_ns and got.e2e_ns == want.e2e_ns
    changed = {k: (want.buckets[k].ns - b.ns, want.buckets[k].count - b.count)
               for k, b in got.buckets.items() if (b.ns, b.count) != (want.buckets[k].ns, want.buckets[k].count)}
    assert list(changed.values()) == [(int(Decimal(row[dur]) * 1000), 1)]


# --------------------------------------------------------------------------- mutation audit: bandwidth per kind

RANK0_COMM = "msinsight/server/src/test/test_data/test_rank_0/ASCEND_PROFILER_OUTPUT/communication.json"


def _info(entry: dict) -> dict:
    return entry["collective"]["Total Op Info"]["Communication Bandwidth Info"]


def _bandwidth_cells(tmp_path: Path, comm: dict) -> dict[str, str]:
    """The console's RDMA / SDMA Bandwidth cells (a column only where a side has a figure) of the excerpt with
    ``comm`` as its communication.json, against the excerpt as it is."""
    side = tmp_path / PT.name
    shutil.copytree(PT, side)
    (side / "ASCEND_PROFILER_OUTPUT" / "communication.json").write_text(json.dumps(comm), encoding="utf-8")
    summary = compare(str(side), str(PT), enable_profiling_compare=True).summary
    return {h: [row[summary["headers"].index(h)] for row in summary["rows"]]
            for h in ("RDMA Bandwidth", "SDMA Bandwidth") if h in summary["headers"]}


def test_bandwidth_entry_without_one_block_still_counts_for_the_other(samples, tmp_path):
    """An entry that lacks the SDMA (or RDMA) block is passed over for that kind only: its other block still
    counts. Synthetic file of two real entries: the excerpt's step50 (level-1 sample: RDMA 0 MB / 0 ms, SDMA
    427.596096 MB / 27.315706 ms) and the GPT-3 test_rank_0 sample's step2 (RDMA 131.072812 MB / 5.410613 ms,
    SDMA 1321.321036 MB / 70.173995 ms) with one block removed. Expected figures by hand (MB / ms = GB/s)."""
    own = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "communication.json").read_text(encoding="utf-8"))
    other = json.loads((samples / RANK0_COMM).read_text(encoding="utf-8"))
    assert list(own) == ["step50"] and list(other) == ["step2"]
    assert (_info(other["step2"])["RDMA"]["Transit Size(MB)"], _info(other["step2"])["RDMA"]["Transit Time(ms)"]) == (
        131.07281199999997, 5.410613242187499)
    no_sdma = json.loads(json.dumps(other["step2"]))
    del _info(no_sdma)["SDMA"]
    # RDMA: step2 alone has a transit time, 131.07281199999997 / 5.410613242187499 = 24.2251; SDMA: step50
    # alone, 427.59609599999993 / 27.315705875000003 = 15.6539 (skipping all of step2 read RDMA 0; taking the
    # missing SDMA block as unusable read SDMA 0)
    comm = {"step50": own["step50"], "step2": no_sdma}
    assert B.bandwidths(comm) == (pytest.approx(24.225130523), pytest.approx(15.653854891))
    assert _bandwidth_cells(tmp_path / "no_sdma", comm) == {"RDMA Bandwidth": ["24.225GB/s", "0.000GB/s"],
                                                            "SDMA Bandwidth": ["15.654GB/s", "15.654GB/s"]}
    no_rdma = json.loads(json.dumps(other["step2"]))
    del _info(no_rdma)["RDMA"]
    # RDMA: no transit time anywhere, 0; SDMA: (427.59609599999993 + 1321.321036) MB over
    # (27.315705875000003 + 70.17399478125) ms = 17.9395 (skipping all of step2 read step50's 15.654)
    comm = {"step50": own["step50"], "step2": no_rdma}
    assert B.bandwidths(comm) == (0.0, pytest.approx(17.939506637))
    assert _bandwidth_cells(tmp_path / "no_rdma", comm) == {"SDMA Bandwidth": ["17.940GB/s", "15.654GB/s"]}


def test_bandwidth_entries_without_a_block_or_with_a_bad_value(samples):
    """Every entry is looked at: one without the bandwidth block (a step of p2p operations only: the sample's
    step2 without its "collective" part) or with a block that is no object is passed over, not the end of the
    file; a bad value spoils its own kind only. The sample's step2 alone gives RDMA 131.07281199999997 MB /
    5.410613242187499 ms = 24.2251 GB/s and SDMA 1321.321036 MB / 70.17399478125 ms = 18.8292 GB/s."""
    step2 = json.loads((samples / RANK0_COMM).read_text(encoding="utf-8"))["step2"]
    want = (pytest.approx(24.225130523), pytest.approx(18.829212162))
    p2p_only = {"p2p": step2["p2p"]}
    assert B.bandwidths({"step1": p2p_only, "step2": step2}) == want
    listed = {"collective": {"Total Op Info": {"Communication Bandwidth Info": [1, 2]}}}
    assert B.bandwidths({"step1": listed, "step2": step2}) == want
    bad = json.loads(json.dumps(step2))
    _info(bad)["RDMA"]["Transit Time(ms)"] = "abc"
    problems: list[str] = []
    assert B.bandwidths({"step2": bad}, problems) == (0.0, pytest.approx(18.829212162))
    assert problems == ["RDMA Transit Time(ms) 'abc'"]


def test_breakdown_frame_is_the_records_frame(samples) -> None:
    """``CompareResult.frames["overall"]`` (built by columns) is the frame pandas makes of its records: values,
    dtypes and column labels (NPU pair 1)."""
    res = compare(str(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"),
                  str(samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"),
                  enable_profiling_compare=True)
    got = res.frames["overall"]
    recs = []
    from msprof_compare.api import RunContext
    from msprof_compare.compare import overall

    base, comp = overall.breakdowns(RunContext(res.base, res.comparison, res.options))
    for side, bd in (("base", base), ("comparison", comp)):
        recs += [(side, name, bd.buckets[name].ns, bd.buckets[name].count) for name in BUCKETS]
        recs += [(side, "computing", bd.computing_ns, bd.computing_count),
                 (side, "uncovered_communication", bd.uncovered_comm_ns, -1), (side, "wait", bd.wait_ns, -1),
                 (side, "lccl", bd.lccl.ns, bd.lccl.count), (side, "sdma_stream", bd.sdma_stream.ns,
                                                            bd.sdma_stream.count),
                 (side, "other", bd.other_ns, -1), (side, "free", bd.free_ns, -1), (side, "e2e", bd.e2e_ns, -1)]
    want = pd.DataFrame([(s, m, int(ns), int(n)) for s, m, ns, n in recs], columns=["side", "metric", "ns", "count"])
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.dtypes.tolist() == want.dtypes.tolist() and got.columns.dtype == want.columns.dtype
    assert len(got) > 20 and got["ns"].gt(0).any()


def test_negative_transmit_is_said(samples, tmp_path, caplog):
    """reference-1 §5.7 measures a group's wait (its least-waiting plane's Notify_Wait candidates inside the
    not-overlapped windows) and its uncovered time (its ops inside them) apart, and Transmit = uncovered - wait:
    kept, so Notify_Wait tasks lying outside the group's ops make Transmit negative, which the sheet showed
    without a word. No sample does it: a copy of level1 rank0 with plane 0 (tid 1, no Notify_Wait) left out, so
    that a waiting plane is chosen, and the group's four all-reduces cut to 1 us each, which leaves their
    Notify_Wait tasks outside them. Figures by the plain-Python rule above; one warning line names the group."""
    copy, tv, raw = _level1_copy(samples, tmp_path)
    pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == "HCCL")
    raw = [e for e in raw if not (e.get("pid") == pid and e.get("tid") == 1)]
    ops = [e for e in raw if e.get("pid") == pid and e.get("tid") == 0 and e.get("ph") == "X"]
    assert len(ops) == 4
    for e in ops:
        e["dur"] = 1
    tv.write_text(json.dumps(raw), encoding="utf-8")
    wait, uncovered = _wait_by_hand(raw)
    assert wait == 14_700 and uncovered < wait  # by hand: 14.7 us of waits, at most 4 us of ops
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    assert bd.groups == {"Group 0 Communication": {"wait": wait, "transmit": uncovered - wait}}
    want = (f"{tv}: communication group Group 0 Communication: Transmit reads {(uncovered - wait) / 1e6:.6f} ms, "
            f"below 0: its Wait ({wait / 1e6:.6f} ms, Notify_Wait tasks inside the not-overlapped windows) exceeds "
            f"its uncovered communication time ({uncovered / 1e6:.6f} ms, its ops inside them)")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(copy), str(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"),
                      enable_profiling_compare=True)
    lines = [r.getMessage() for r in caplog.records if "below 0" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith(want)
    sheet = res.sheet("OverallMetrics").set_index("Index")
    transmit = [i for i in sheet.index if str(i).strip() == "Transmit"]
    assert transmit and sheet.loc[transmit[0], "Duration(ms)"] == pytest.approx((uncovered - wait) / 1e6)


def _cube_columns_edited(tmp_path: Path, name: str, edit) -> tuple[Path, B.Breakdown, B.Breakdown, list[list[str]]]:
    """A copy of the excerpt (``name``) whose kernel_details.csv rows, as the csv module reads them, are rewritten
    by ``edit(rows, aicore_time(us)'s index)``: the copy, its breakdown before and after, and the rows as read."""
    import io

    copy = tmp_path / name
    shutil.copytree(PT, copy)
    f = copy / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(f.read_text(encoding="utf-8"), newline="")))
    whole = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(edit(rows, rows[0].index("aicore_time(us)")))
    f.write_text(out.getvalue(), encoding="utf-8")
    return copy, whole, B.npu_breakdown(load_profile(str(copy), OPTS), OPTS), rows


def _without_column(rows: list[list[str]], col: int) -> list[list[str]]:
    return [r[:col] + r[col + 1:] for r in rows]


def _buckets(bd: B.Breakdown) -> dict[str, tuple[int, int]]:
    return {k: (b.count, b.ns) for k, b in bd.buckets.items()}


def test_cube_column_of_no_value_is_said(tmp_path):
    """The excerpt's kernel_details.csv with every aicore_time(us) cell emptied (synthetic, found by fuzzing the
    level1 rank1 export, fuzz66): the column is there, so the missing-column line below said nothing, but the Cube
    test reads no value in it and the kernels it made Cube moved into Vector without a word, as they do where the
    column is gone (the test below). The line names the empty column; the kernels fall into the rows they fall
    into without the column, the total kept."""
    copy, whole, bd, rows = _cube_columns_edited(
        tmp_path, "x_ascend_pt", lambda rows, col: [rows[0]] + [r[:col] + [""] + r[col + 1:] for r in rows[1:]])
    assert "mac_time(us)" not in rows[0]
    assert [m for m in bd.missing if "Cube" in m] == [
        f"{copy}: kernel_details.csv's aicore_time(us) hold no value, so no kernel passes the PMU Cube test (those "
        "kernels read as Vector)"]
    _, _, gone, _ = _cube_columns_edited(tmp_path, "y_ascend_pt", _without_column)
    assert _buckets(bd) == _buckets(gone) != _buckets(whole)
    cube = [sum(b.count for k, b in x.buckets.items() if k.endswith("cube")) for x in (whole, bd)]
    total = [sum(b.count for b in x.buckets.values()) for x in (whole, bd)]
    assert cube[1] < cube[0] and total[0] == total[1]


def test_pmu_columns_without_a_cube_column_are_said(tmp_path):
    """The excerpt's kernel_details.csv without its aicore_time(us) column (session 60's fuzz: a column lost from
    the file): the PMU columns are there (aiv_vec_time(us)), so the categories are split, but the Cube test reads
    mac_time(us) and aicore_time(us) alone, and the kernels it made Cube moved into Vector without a word. The line
    says so; the excerpt as cut has cube kernels (aicore_time(us) > 0, counted with the csv module) and says
    nothing."""
    copy, whole, bd, rows = _cube_columns_edited(tmp_path, "x_ascend_pt", _without_column)
    col = rows[0].index("aicore_time(us)")
    assert sum(1 for r in rows[1:] if r[col] not in ("", "N/A") and float(r[col]) > 0) > 0
    assert not [m for m in whole.missing if "Cube" in m]
    assert sum(b.count for k, b in whole.buckets.items() if k.endswith("cube")) > 0
    assert [m for m in bd.missing if "Cube" in m] == [
        f"{copy}: kernel_details.csv has PMU columns but neither mac_time(us) nor aicore_time(us), so no kernel "
        "passes the PMU Cube test (those kernels read as Vector)"]
    # the kernels the PMU test made Cube are Vector now (the excerpt: MatMul Cube 5 -> 2, MatMul Vector 3 -> 6), but
    # those the op-name rule still makes Cube: fewer Cube kernels, as many more Vector ones, the total kept
    cube = [sum(b.count for k, b in x.buckets.items() if k.endswith("cube")) for x in (whole, bd)]
    total = [sum(b.count for b in x.buckets.values()) for x in (whole, bd)]
    assert cube[1] < cube[0] and total[0] == total[1]


@pytest.mark.parametrize("onto_compute", [False, True])
def test_sdma_counts_on_compute_streams_that_wait(tmp_path, onto_compute):
    """reference-1 §5.4 step 5: SDMA tasks count on the streams that hold both an EVENT_WAIT_SQE task and a compute
    task (all compute streams only where no stream waits). The level-1 excerpt's stream 4 (its HCCL stream: Notify
    Wait, Write Value, one EVENT_WAIT_SQE) holds its 2 SDMA tasks, typed SDMA_SQE in this copy, whose tasks carry
    their Physic Stream Id as the Stream Id the rule reads (the excerpt has none): stream 4 has no compute task and
    stream 2 (the compute one) no wait, so none counts, and both are the breakdown's unread copies. Moving the wait
    and the SDMA tasks onto stream 2 counts both, their durations summed here from the JSON, and leaves none
    unread."""
    copy = tmp_path / PT.name
    shutil.copytree(PT, copy)
    tv = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = json.loads(tv.read_text())
    hw = {e["pid"] for e in raw if e.get("ph") == "M" and e.get("args", {}).get("name") == "Ascend Hardware"}
    tasks = [e for e in raw if e.get("ph") == "X" and e["pid"] in hw]
    sdma = [e for e in tasks if e["args"]["Task Type"] == "SDMA"]
    wait = [e for e in tasks if e["args"]["Task Type"] == "EVENT_WAIT_SQE"]
    assert len(sdma) == 2 and len(wait) == 1
    assert {e["args"]["Physic Stream Id"] for e in sdma + wait} == {4}
    assert {e["args"]["Physic Stream Id"] for e in tasks if e["args"]["Task Type"] in ("AI_CORE", "MIX_AIV")} == {2}
    for e in sdma:
        e["args"]["Task Type"] = "SDMA_SQE"
    if onto_compute:
        for e in sdma + wait:
            e["args"]["Physic Stream Id"] = 2
    for e in tasks:
        e["args"]["Stream Id"] = e["args"]["Physic Stream Id"]
    tv.write_text(json.dumps(raw))
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    copies = (sum(ns(e["dur"]) for e in sdma), 2)
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (copies if onto_compute else (0, 0))
    # the copies SDMA Time counts are not among those it leaves out (the GPU-vs-NPU note's unread copies), and
    # those it leaves out are all of them
    assert (bd.unread_copies.ns, bd.unread_copies.count) == ((0, 0) if onto_compute else copies)
    # and their task types, which the note names, are those of the copies left out alone
    assert bd.unread_copy_types == (() if onto_compute else ("SDMA_SQE",))


def test_groups_with_planes_of_their_own_each_read_alone(samples, tmp_path):
    """Each group lane's ops and its waiting plane's candidates are found by one stable sort by lane: a mask over
    every op and every candidate per group lane grew with the square of the groups (16,000 groups: 0.91 s ->
    0.56 s CPU). No sample has more than one group: a copy of level1 rank0's trace with each of its four
    all-reduces a group of its own, "Group k Communication" (tid 9k) above planes tids 9k+2 .. 9k+8 holding the
    HCCL tasks that start in that op's span (each task lies in one; plane 0, tid 1, without Notify_Wait, left
    out as above). Expected per group by the plain-Python history above; the groups' figures differ, so a group
    read with another's rows fails."""
    copy, tv, raw = _level1_copy(samples, tmp_path)
    pid, raw, ops = _hccl_ops(raw)
    spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ops]
    assert len(spans) == 4
    for e in raw:
        if e.get("pid") != pid or e.get("ph") != "X":
            continue
        (k,) = [k for k, (a, b) in enumerate(spans) if a <= ns(e["ts"]) < b] if e["tid"] else [ops.index(e)]
        e["tid"] += 9 * k
    raw = [e for e in raw if not (e.get("pid") == pid and e.get("ph") == "M" and e["name"].startswith("thread_"))]
    for k in range(4):
        for t in (0, *range(2, 9)):
            name = f"Group {k} Communication" if t == 0 else f"Plane {t - 1}"
            raw.append({"name": "thread_name", "pid": pid, "tid": 9 * k + t, "args": {"name": name}, "ph": "M"})
            raw.append({"name": "thread_sort_index", "pid": pid, "tid": 9 * k + t, "args": {"sort_index": 9 * k + t},
                        "ph": "M"})
    tv.write_text(json.dumps(raw), encoding="utf-8")
    want = {}
    for k in range(4):
        wait, uncovered = _wait_by_hand(raw, tuple(range(9 * k + 2, 9 * k + 9)), 9 * k)
        want[f"Group {k} Communication"] = {"wait": wait, "transmit": uncovered - wait}
    assert len({(g["wait"], g["transmit"]) for g in want.values()}) == 4 and sum(g["wait"] for g in want.values())
    bd = B.npu_breakdown(load_profile(str(copy), OPTS), OPTS)
    assert bd.groups == want
    assert bd.wait_ns == sum(g["wait"] for g in want.values())


def test_level0_wait_note_names_a_lone_trace_by_its_own_name(samples: Path, tmp_path: Path) -> None:
    """The level-0 text export's trace_view.json copied alone as ``rank0_timeline.json`` (a trace collected from
    its job under another name): its HCCL lane holds the 4 communication ops of 'Group 0 Communication' and not
    one task on 'Plane 0' (read here), so the Wait Time note says no task reads as Notify_Wait; it named "its
    trace_view.json", a file the user did not give."""
    src = samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    raw = json.loads(src.read_text(encoding="utf-8"))
    (hccl,) = [e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == "HCCL"]
    lanes = {e["tid"]: e["args"]["name"] for e in raw if e.get("ph") == "M" and e["name"] == "thread_name"
             and e["pid"] == hccl}
    spans = [lanes[e["tid"]] for e in raw if e.get("ph") == "X" and e["pid"] == hccl]
    assert spans == ["Group 0 Communication"] * 4 and "Plane 0" in lanes.values()
    lone = tmp_path / "rank0_timeline.json"
    shutil.copyfile(src, lone)
    level1 = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    notes = compare(str(lone), str(level1), enable_profiling_compare=True).summary["notes"]
    assert [n for n in notes if n.startswith("Base row: its Wait Time")] == [
        f"Base row: its Wait Time {BASE_ZERO} is not a measurement: its rank0_timeline.json holds the HCCL "
        "communication ops but no HCCL task (a Level0 export records none; Level1 or Level2 records them), so none "
        "reads as Notify_Wait."]


def test_a_wait_time_unread_on_both_rows_is_said_once(samples):
    """Reference pair 2 (Level0 text ranks 0 and 1; neither trace_view.json holds a Notify_Wait task, read here)
    printed the same reason under the console table twice, "Base row: its Wait Time ' / ' (0 s) is not a
    measurement: its trace_view.json holds ..." and "Comparison row: its Wait Time 0.000s ...": one line names
    both rows' cells. Beside the level-1 export (whose planes wait) the Level0 row keeps its own line."""
    pt = samples / "msinsight/test/data/pytorch/text"
    ranks = [pt / f"level0/rank{r}_ascend_pt" for r in (0, 1)]
    for r in ranks:
        assert "Notify_Wait" not in (r / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text(encoding="utf-8")
    notes = compare(*map(str, ranks), enable_profiling_compare=True).summary["notes"]
    assert [n for n in notes if "Wait Time" in n] == [
        f"Both rows: their Wait Time {BOTH_ZERO} is not a measurement: "
        "each side's trace_view.json holds the HCCL communication ops but no HCCL task (a Level0 export records "
        "none; Level1 or Level2 records them), so none reads as Notify_Wait."]
    notes = compare(str(pt / "level1/rank0_ascend_pt"), str(ranks[1]), enable_profiling_compare=True).summary["notes"]
    assert [n for n in notes if "not a measurement" in n and "Wait Time" in n] == [
        "Comparison row: its Wait Time 0.000s is not a measurement: its trace_view.json holds the HCCL communication "
        "ops but no HCCL task (a Level0 export records none; Level1 or Level2 records them), so none reads as "
        "Notify_Wait."]


def test_the_wait_note_says_when_the_run_writes_no_communication_sheet(samples):
    """The plane-rule Wait Time note points to CommunicationCompare's Notify_Wait rows for the figure it gives; a run
    of ``--enable_profiling_compare`` alone (the README's multi-rank and CI examples) writes no such sheet, and the
    note sent its reader to a sheet the workbook does not have. With the communication comparison on, the sheet's
    Notify_Wait row holds the note's figure, the Notify_Wait tasks of trace_view.json summed here (112.541 ms)."""
    level1 = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    level2 = samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
    events = json.loads((level1 / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text(encoding="utf-8"),
                        parse_float=Decimal)
    us = sum(Decimal(e["dur"]) for e in events if e.get("ph") == "X" and e.get("name") == "Notify_Wait")
    assert f"{us / 1000:,.3f}" == "112.541"
    pointer = "112.541 ms of Notify_Wait in all (CommunicationCompare's Notify_Wait rows"
    alone = compare(str(level1), str(level2), enable_profiling_compare=True)
    assert "CommunicationCompare" not in alone.sheet_names
    assert [n for n in alone.summary["notes"] if pointer in n] == [
        f"Base row: its Wait Time {BASE_ZERO} is that of the HCCL plane that waits least in each communication group, "
        "as the original measures a text export, here a plane with no Notify_Wait; its planes hold " + pointer
        + "; this run writes no CommunicationCompare: the enable_communication_compare option adds it)."]
    both = compare(str(level1), str(level2), enable_profiling_compare=True, enable_communication_compare=True)
    sheet = both.sheet("CommunicationCompare")
    # the sheet sums each task's duration as the original reads it, to the ns: 112540.684 us against the raw 112540.689
    assert sheet.loc[sheet["Task Name"] == "Notify_Wait", "Total Duration(us)"].tolist() == [
        pytest.approx(float(us), abs=0.01)]
    assert [n for n in both.summary["notes"] if pointer in n][0].endswith(pointer + ").")


def test_a_zero_base_wait_is_said_in_words_not_quoted(samples, reference_outputs):
    """Reference pair 1 (level-1 against level-2 text export): the original's console shows the base row's zero Wait
    Time as "0.102s( / )" (reference-outputs/README.md), a slash where the comparison row has "(0.000s)". The cell
    stays; the note under the table quoted it as "its Wait Time ' / ' (0 s)", punctuation that read as garbage,
    and now says in words what the cell shows."""
    readme = (reference_outputs / "README.md").read_text()
    block = _console_block(readme, "1-npu-text-l1-vs-l2")
    rows = [line for line in block.splitlines() if line.startswith("| NPU |")]
    assert "0.102s( / )" in rows[0] and "0.096s(0.000s)" in rows[1]
    res = compare(*(str(samples / f"msinsight/test/data/pytorch/text/level{n}/rank0_ascend_pt") for n in (1, 2)),
                  enable_profiling_compare=True)
    assert "0.102s( / )" in res.console_table()
    waits = [n for n in res.summary["notes"] if "Wait Time" in n]
    assert [n.split(" is that of", 1)[0] for n in waits] == [
        f"Base row: its Wait Time {BASE_ZERO}",
        "Comparison row: its Wait Time 0.000s"]
    assert not [n for n in res.summary["notes"] if "' / '" in n]


def test_a_plane_rule_wait_note_the_same_on_both_rows_is_said_once(samples):
    """A self-compare of the level-1 text export printed the plane-rule Wait Time note twice a line apart, the same
    112.541 ms of Notify_Wait on both rows: one line names both rows' cells, as pair 2's unread Wait Time. Reference
    pair 1 (level 1 against level 2), whose planes hold different Notify_Wait, keeps a line per row. The figures are
    the Notify_Wait tasks' durations summed from each trace_view.json (Decimal, us)."""
    pt = samples / "msinsight/test/data/pytorch/text"
    sides = [pt / f"level{n}/rank0_ascend_pt" for n in (1, 2)]
    held = []
    for side in sides:
        doc = json.loads((side / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text(encoding="utf-8"),
                         parse_float=Decimal)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        us = sum(Decimal(e["dur"]) for e in events if e.get("ph") == "X" and e.get("name") == "Notify_Wait")
        held.append(f"{us / 1000:,.3f}")
    assert held == ["112.541", "134.458"]
    rule = ("is that of the HCCL plane that waits least in each communication group, as the original measures a text "
            "export, here a plane with no Notify_Wait; {} planes hold {} ms of Notify_Wait in all "
            "(CommunicationCompare's Notify_Wait rows; this run writes no CommunicationCompare: the "
            "enable_communication_compare option adds it).")
    for side, ms in zip(sides, held, strict=True):
        notes = compare(str(side), str(side), enable_profiling_compare=True).summary["notes"]
        assert notes == [f"Both rows: their Wait Time {BOTH_ZERO} "
                         + rule.format("each side's", ms)]
    notes = compare(*map(str, sides), enable_profiling_compare=True).summary["notes"]
    assert notes == [f"Base row: its Wait Time {BASE_ZERO} {rule.format('its', held[0])}",
                     f"Comparison row: its Wait Time 0.000s {rule.format('its', held[1])}"]
