"""Known regressions, injected into copies of real NPU profiles: steps with other ids, a slower host, and each
comparison run alone.

Like ``test_injected_regressions.py`` (whose edit helpers these tests share), each test edits a copy of a real
export (msinsight's AlexNet, level 1, rank 0) and checks every figure against the raw files plus the planted delta:

* one step of two slower (a MaxPool kernel +50 us) in a DB and in a text export whose steps the comparison side
  numbers 60 / 61 while the base numbers them 50 / 51: the ids given pair the steps, the other step shows nothing
  (but a text export's whole-profile breakdown), the whole profile shows the delta once, and an id of the other
  side is refused naming the file and its ids;
* the host 500 us late at one point where the device was idle (every host and device event from there on 500 us
  later, every event running across it 500 us longer), in the text and in the DB export: Free and E2E +0.5 ms, no
  operator, kernel, API or module row moves, the Summary says the device waited for the host, and the only other
  figure that moves is the lifetime of the memory blocks live across that point (+0.5 ms each);
* the first all-reduce of the text export 2 ms later, the backward computing under its start unchanged: it
  overlaps computing less, by the computing of its first 2 ms, measured by hand from the Overlap Analysis lane;
* every ``--enable_*_compare`` run alone writes the cells of its sheets exactly as the default run does.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from dbutil import edited_copy, sql, string_id  # tests/ is on sys.path (rootdir import mode)
from spans import union
from test_injected_regressions import (
    NPU_DB,
    NPU_TEXT,
    _changed,
    _db_steps_split,
    _edit_csv,
    _first_kernel,
    _objects,
    _summary_lines,
    _text_kernel_lengthened,
    _text_steps_split,
    _waterfall,
)

from msprof_compare.api import compare
from msprof_compare.compare.communication_summary import overlap_shift
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.errors import StepError

_DB = "ascend_pytorch_profiler_0.db"
_HOST_NOTE = ("no operator changed its device time (the change is in Free: Other +0.500 ms, device idle time: the "
              "device waited longer for work, as where the host was slower to launch it; ApiCompare times the host "
              "calls); the contributors are the waterfall steps")
_COMPARISONS = ("profiling", "communication", "operator", "memory", "api", "kernel")


def _breakdown_moved(res) -> dict[str, float]:
    return {k.strip(): v for k, v in _changed(res.sheet("OverallMetrics"), "Index",
                                              ("Duration(ms)", "Duration(ms).1")).items()}


def _moved_sheets(res, same) -> set[str]:
    """Names of the sheets (Summary aside) of ``res`` whose cells differ from those of ``same``."""
    assert res.sheet_names == same.sheet_names
    return {n for n in res.sheet_names if n != "Summary" and not res.sheet(n).equals(same.sheet(n))}


# --------------------------------------------------------------------------- steps with other ids on each side

def _db_two_steps(samples: Path, tmp_path: Path) -> tuple[str, str]:
    """The level-1 DB export cut in two steps where the optimizer's zero_grad starts (as in
    ``test_npu_db_step_regression_shows_in_its_step_only``), as base (#50, #51) and as a comparison whose first
    MaxPool task (step 50) is 50 us longer into the idle time after it and whose steps are renumbered #60, #61
    (STEP_TIME ids and the ProfilerStep# markers), as a later run of the same job writes them."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / _DB
    ((cut,),) = sql(src, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                         "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    ((start, end),) = sql(src, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
                               "JOIN STRING_IDS s ON s.id = c.opType WHERE s.value = 'MaxPoolWithArgmaxV1' "
                               "ORDER BY t.startNs LIMIT 1")
    assert end < cut
    sides = []
    for edits in ((), (f"UPDATE TASK SET endNs = endNs + 50000 WHERE startNs = {start}",
                       f"UPDATE OVERLAP_ANALYSIS SET endNs = endNs + 50000 WHERE type = 0 AND endNs = {end}",
                       f"UPDATE OVERLAP_ANALYSIS SET startNs = startNs + 50000 WHERE type = 3 AND startNs = {end}")):
        side = tmp_path / ("slow" if edits else "base") / "rank0_ascend_pt"
        shutil.copytree(samples / NPU_DB, side)
        db = edited_copy(src, side / "ASCEND_PROFILER_OUTPUT" / _DB, *edits)
        _db_steps_split(db, cut)
        if edits:
            con = sqlite3.connect(db)
            try:
                assert con.execute("UPDATE STEP_TIME SET id = id + 10").rowcount == 2
                for k in (50, 51):
                    con.execute("UPDATE STRING_IDS SET value = ? WHERE id = ?",
                                (f"ProfilerStep#{k + 10}", string_id(con, f"ProfilerStep#{k}")))
                con.commit()
            finally:
                con.close()
        sides.append(str(side))
    return sides[0], sides[1]


def test_db_steps_numbered_apart_pair_by_the_ids_given(samples, tmp_path):
    """Base steps #50 / #51, comparison #60 / #61, +50 us on a MaxPool task of the first. 50 against 60: Vector,
    computing +0.050 ms, free -0.050 ms (E2E, the step's tasks' span, unchanged), the MaxPool kernel row +50 us,
    the forward its one contributor; 51 against 61: every sheet equals the base's step 51 against itself; the
    whole profile: the same +50 us, once; 50 against 50: refused, naming the comparison's DB and its ids."""
    base, slow = _db_two_steps(samples, tmp_path)
    expected = {"Computing Time": 0.05, "Vector": 0.05, "Vector (No Trans)": 0.05, "Free Time": -0.05, "Free": -0.05}
    for res in (compare(base, slow, base_step=50, comparison_step=60), compare(base, slow)):
        assert _breakdown_moved(res) == expected
        assert _waterfall(res) == {"Vector": 50_000, "Free: Other": -50_000}
        assert _changed(res.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
            "MaxPoolWithArgmaxV1": 50.0}
        assert res.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.05]]
        stats = res.sheet("ModuleCompareStatistic")
        totals = stats[stats["Operator Name"] == "[ TOTAL ]"]
        grown = {m.strip(): round(d, 6) for m, d in zip(totals["Module Name"], totals["Device Total Time Diff(ms)"],
                                                        strict=True) if round(d, 6)}
        chain = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ MaxPool2d_0".split("/")
        assert grown == {"/".join(chain[:i]): 0.05 for i in range(2, 6)}  # the MaxPool module and its ancestors
    other = compare(base, slow, base_step=51, comparison_step=61)
    assert not _moved_sheets(other, compare(base, base, base_step=51, comparison_step=51))
    assert not _waterfall(other) and not len(other.contributors)
    with pytest.raises(StepError) as err:
        compare(base, slow, base_step=50, comparison_step=50)
    assert str(err.value) == (f"{slow}/ASCEND_PROFILER_OUTPUT/{_DB}: Invalid Step Id: 50, please choose from the "
                              "valid steps: 60, 61 (comparison side)")


def test_text_steps_numbered_apart_pair_by_the_ids_given(samples, tmp_path):
    """The level-1 text export cut in two steps (``_text_steps_split``), its first MaxPool kernel +50 us on the
    comparison side, whose steps are renumbered #60 / #61 (ProfilerStep# names, kernel_details.csv's Step Id,
    step_trace_time.csv, communication*.json's step key). 50 against 60: the kernel, module and operator sheets
    hold the +50 us; 51 against 61: only OverallMetrics moves (a text export's breakdown is the whole profile's, and
    the Summary says the change lies outside the step); 50 against 50 is refused naming trace_view.json, and in a
    kernel-only run kernel_details.csv, with the comparison's ids."""
    base, slow = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, base)
    start, _ = _first_kernel(base, "MaxPoolWithArgmaxV1")
    shutil.copytree(samples / NPU_TEXT, slow)
    _text_kernel_lengthened(slow, start, Decimal(50))
    assert _text_steps_split(base) == _text_steps_split(slow)
    out = slow / "ASCEND_PROFILER_OUTPUT"
    trace = (out / "trace_view.json").read_text()
    (out / "trace_view.json").write_text(trace.replace("ProfilerStep#5", "ProfilerStep#6"))

    def later_id(column: str):
        def edit(head: list[str], row: list[str]) -> bool:
            row[head.index(column)] = str(int(row[head.index(column)]) + 10)
            return True
        return edit

    assert _edit_csv(out / "kernel_details.csv", later_id("Step Id")) == 191
    assert _edit_csv(out / "step_trace_time.csv", later_id("Step")) == 1
    for name in ("communication.json", "communication_matrix.json"):
        text = (out / name).read_text()
        assert text.count('"step50"') == 1
        (out / name).write_text(text.replace('"step50"', '"step60"'))
    whole = {"Computing Time": 0.05, "Vector": 0.05, "Vector (No Trans)": 0.05, "Free Time": -0.05, "Free": -0.05}
    first = compare(str(base), str(slow), base_step=50, comparison_step=60)
    assert _breakdown_moved(first) == whole
    assert _changed(first.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
        "MaxPoolWithArgmaxV1": 50.0}
    assert first.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.05]]
    other = compare(str(base), str(slow), base_step=51, comparison_step=61)
    assert _breakdown_moved(other) == whole
    assert _moved_sheets(other, compare(str(base), str(base), base_step=51, comparison_step=51)) == {"OverallMetrics"}
    assert unexplained_note(other.contributors, other.waterfall).startswith(
        "no operator of the step asked for changed its device time, but the time breakdown of both sides covers the "
        "whole profile")
    for extra, where, says in (({}, "trace_view.json", "Invalid step id: 50, please choose from the valid steps: "
                                "60, 61 (comparison side)"),
                               ({"enable_kernel_compare": True}, "kernel_details.csv", "There is no kernel details "
                                "information for step 50, please check whether the data contains this step. "
                                "(comparison side: it holds steps 60, 61)")):
        with pytest.raises(StepError) as err:
            compare(str(base), str(slow), base_step=50, comparison_step=50, **extra)
        assert str(err.value) == f"{out / where}: {says}"


# --------------------------------------------------------------------------- the host late, the device idle

def _text_host_late(src: Path, dst: Path, at: Decimal, us: Decimal) -> list[str]:
    """A copy of the text export ``src`` with the host ``us`` late at ``at``: every trace_view.json event (host
    and device lanes, flows, counters) from ``at`` on moves by ``us``, every X event running across it grows by
    ``us``; kernel_details.csv's starts and operator_memory.csv / memory_record.csv's times alike. Returns the names
    of the events that grew."""
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"
    text = (out / "trace_view.json").read_bytes().decode()
    later = lambda m: m.group(1) + f"{Decimal(m.group(2)) + us:f}"  # noqa: E731
    parts, last, grown = [], 0, []
    for s, e, o in _objects(text):
        if "ts" not in o:
            continue
        ts = Decimal(str(o["ts"]))
        if ts >= at:
            new = re.sub(r'("ts": "?)([\d.]+)', later, text[s:e], count=1)
        elif o.get("ph") == "X" and ts + Decimal(str(o["dur"])) > at:
            new = re.sub(r'("dur": )([\d.]+)', later, text[s:e], count=1)
            grown.append(o["name"])
        else:
            continue
        parts += [text[last:s], new]
        last = e
    (out / "trace_view.json").write_bytes("".join(parts + [text[last:]]).encode())

    def moved(*cols: str):
        def edit(head: list[str], row: list[str]) -> bool:
            hit = False
            for c in cols:
                v = row[head.index(c)].strip()
                if v and Decimal(v) >= at:
                    row[head.index(c)] = row[head.index(c)].replace(v, f"{Decimal(v) + us:f}")
                    hit = True
            return hit
        return edit

    assert _edit_csv(out / "kernel_details.csv", moved("Start Time(us)")) > 0
    _edit_csv(out / "operator_memory.csv", moved("Allocation Time(us)", "Release Time(us)", "Active Release Time(us)"))
    _edit_csv(out / "memory_record.csv", moved("Timestamp(us)"))
    return grown


def _live_across(path: Path, at: Decimal, alloc: str, release: str) -> int:
    """Operator memory blocks allocated before ``at`` and released at or after it (a CSV)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return sum(1 for r in csv.DictReader(fh) if r[release].strip()
                   and Decimal(r[alloc].strip()) < at <= Decimal(r[release].strip()))


def _check_host_late(res, same, live: int) -> None:
    """The figures a 500 us host delay in device idle time gives (see the module docstring)."""
    assert _breakdown_moved(res) == {"Free Time": 0.5, "Free": 0.5, "E2E Time": 0.5}
    assert _waterfall(res) == {"Free: Other": 500_000, "Comparison E2E": 500_000}
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [["category", "Free: Other", 0.5]]
    assert unexplained_note(res.contributors, res.waterfall) == _HOST_NOTE
    assert _moved_sheets(res, same) == {"OverallMetrics", "MemoryCompareStatistic", "MemoryCompare"}
    mem, ref = res.sheet("MemoryCompareStatistic"), same.sheet("MemoryCompareStatistic")
    longer = mem["Comparison Allocated Duration(ms)"] - ref["Comparison Allocated Duration(ms)"]
    assert round(longer.sum(), 6) == live * 0.5  # each block live across the delay, 0.5 ms longer
    assert mem.drop(columns="Comparison Allocated Duration(ms)").equals(
        ref.drop(columns="Comparison Allocated Duration(ms)"))


def test_text_host_late_is_free_time_and_blames_no_operator(samples, tmp_path):
    """The text export, the host 500 us late 130.25 us before Optimizer.zero_grad (1736408883729400 us), where
    no op of the main thread runs (Python frames and ProfilerStep#50 run across it and grow) and the device is idle
    (a Free window of the Overlap Analysis lane runs across it: it grows too)."""
    at, us = Decimal("1736408883729400"), Decimal(500)
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    grown = _text_host_late(samples / NPU_TEXT, slow, at, us)
    assert "Free" in grown and "ProfilerStep#50" in grown  # the device idle, the step longer
    assert not {"Computing", "Communication", "Communication(Not Overlapped)"} & set(grown)
    live = _live_across(samples / NPU_TEXT / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv", at,
                        "Allocation Time(us)", "Release Time(us)")
    assert live == 19
    base = str(samples / NPU_TEXT)
    _check_host_late(compare(base, str(slow)), compare(base, base), live)


_SPANS = {"TASK": ("startNs", "endNs"), "COMMUNICATION_OP": ("startNs", "endNs"), "CANN_API": ("startNs", "endNs"),
          "PYTORCH_API": ("startNs", "endNs"), "OVERLAP_ANALYSIS": ("startNs", "endNs"),
          "STEP_TIME": ("startNs", "endNs"), "SESSION_TIME_INFO": ("startTimeNs", "endTimeNs"),
          "OP_MEMORY": ("allocationTime", "releaseTime")}
_POINTS = {"NPU_MEM": "timestampNs", "NPU_OP_MEM": "timestampNs", "HBM": "timestampNs", "LLC": "timestampNs",
           "ACC_PMU": "timestampNs", "SOC_BANDWIDTH_LEVEL": "timestampNs", "AICORE_FREQ": "timestampNs",
           "NPU_MODULE_MEM": "timestampNs", "MEMORY_RECORD": "timestamp", "OP_MEMORY": "activeReleaseTime"}


def _db_host_late(src: Path, dst: Path, at: int, ns: int) -> list[str]:
    """A copy of the DB export ``src`` with the host ``ns`` late at ``at``: every time column of every table from
    ``at`` on moves by ``ns``, every row running across it grows by ``ns`` (text columns stay text). Returns the
    tables of the rows that grew."""
    shutil.copytree(src, dst)
    con = sqlite3.connect(dst / "ASCEND_PROFILER_OUTPUT" / _DB)

    def plus(c: str) -> str:
        return f"CASE typeof({c}) WHEN 'text' THEN CAST(CAST({c} AS INTEGER) + {ns} AS TEXT) ELSE {c} + {ns} END"

    try:
        grown = []
        for table, (s, e) in _SPANS.items():
            grown += [table] * con.execute(f"SELECT COUNT(*) FROM {table} WHERE CAST({s} AS INTEGER) < {at} "
                                           f"AND CAST({e} AS INTEGER) > {at}").fetchone()[0]
            con.execute(f"UPDATE {table} SET {e} = {plus(e)} WHERE CAST({e} AS INTEGER) >= {at}")
            con.execute(f"UPDATE {table} SET {s} = {plus(s)} WHERE CAST({s} AS INTEGER) >= {at}")
        for table, c in _POINTS.items():
            con.execute(f"UPDATE {table} SET {c} = {plus(c)} WHERE CAST({c} AS INTEGER) >= {at}")
        con.commit()
    finally:
        con.close()
    return grown


def test_db_host_late_is_free_time_and_blames_no_operator(samples, tmp_path):
    """The DB export, the host 500 us late 150 us before Optimizer.zero_grad, where the device is idle (an
    OVERLAP_ANALYSIS free window runs across it) and no CANN API runs: the whole profile and step 50 alike."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / _DB
    ((zero,),) = sql(src, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                          "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    at = zero - 150_000
    assert sql(src, "SELECT type FROM OVERLAP_ANALYSIS WHERE startNs < ? AND endNs > ?", (at, at)) == [(3,)]
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    grown = _db_host_late(samples / NPU_DB, slow, at, 500_000)
    assert {t: grown.count(t) for t in grown} == {"PYTORCH_API": 15, "OVERLAP_ANALYSIS": 1, "STEP_TIME": 1,
                                                  "SESSION_TIME_INFO": 1, "OP_MEMORY": 19}
    base = str(samples / NPU_DB)
    _check_host_late(compare(base, str(slow)), compare(base, base), 19)
    _check_host_late(compare(base, str(slow), base_step=50, comparison_step=50),
                     compare(base, base, base_step=50, comparison_step=50), 19)


def test_db_step_started_late_by_the_host_says_so_beside_its_e2e(samples, tmp_path):
    """The level-1 DB export cut in two steps at Optimizer.zero_grad, the host 500 us late 20 us into step 51, where
    the device is idle until the step's first task: ProfilerStep#51 (STEP_TIME) lasts 0.5 ms longer, while its E2E
    time, the span of its device tasks (reference-1 §7.3 6), does not move. The verdict said "as fast as the base"
    alone; it now gives the step's range change beside it (Summary sheet, JSON, and the console and the gate's line,
    which print the same verdict), at step 51 only: step 50, the
    whole profile (+0.5 ms in its E2E) and a pair of real runs (ranks 0 and 1, whose step range and E2E change
    alike) keep theirs."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / _DB
    ((zero,),) = sql(src, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                          "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    at = zero + 20_000
    ((free_end,),) = sql(src, "SELECT endNs FROM OVERLAP_ANALYSIS WHERE type = 3 AND startNs < ? AND endNs > ?",
                         (at, at))
    assert sql(src, "SELECT COUNT(*) FROM TASK WHERE startNs < ? AND endNs > ?", (free_end, zero - 10_000)) == [(0,)]
    base, slow = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_DB, base)
    _db_steps_split(base / "ASCEND_PROFILER_OUTPUT" / _DB, zero)
    _db_host_late(samples / NPU_DB, slow, at, 500_000)
    _db_steps_split(slow / "ASCEND_PROFILER_OUTPUT" / _DB, zero)
    ((s51, e51),) = sql(base / "ASCEND_PROFILER_OUTPUT" / _DB, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 51")
    ms = (e51 - s51) / 1e6
    res = compare(str(base), str(slow), base_step=51, comparison_step=51)
    e2e = res.frames["e2e"]
    assert int(e2e["base_ns"].iloc[0]) == int(e2e["comparison_ns"].iloc[0])
    # the range's change after the verdict's figures: inside the parentheses after "E2E time" it stood between
    # the words and their figures
    said = (f"E2E time (the step's device tasks' span) {int(e2e['base_ns'].iloc[0]) / 1e6:.3f} ms on both sides: the "
            f"comparison is as fast as the base; its ProfilerStep range took {ms:.3f} ms -> {ms + 0.5:.3f} ms, "
            "+0.500 ms, and its time outside that span (before its first or after its last device task) changed by "
            "+0.500 ms, as where the host was late")
    assert res.verdict == said
    assert json.loads(Path(res.to_json(str(tmp_path / "r.json"))).read_text())["summary"]["verdict"] == said
    assert f"{said}." in _summary_lines(res, tmp_path, "r.xlsx")
    # the gate still judges the E2E, and gives the range's change after its figures too
    code, line = res.regression_gate(1)
    e2e_ms = f"{int(e2e['base_ns'].iloc[0]) / 1e6:.3f} ms"
    assert code == 0 and line == (f"No regression: E2E time (the step's device tasks' span) {e2e_ms} -> {e2e_ms} "
                                  f"(+0.000 ms, +0.00%), threshold +1%; {said.split('; ', 1)[1]}")
    assert compare(str(base), str(slow), base_step=50, comparison_step=50).verdict.startswith("E2E time 29.693 ms on "
                                                                                             "both sides")
    assert compare(str(base), str(slow)).verdict.startswith("E2E time 137.919 ms -> 138.419 ms (+0.500 ms")
    pair = [str(samples / NPU_DB.replace("rank0", f"rank{k}")) for k in (0, 1)]
    assert compare(*pair, base_step=50, comparison_step=50, enable_profiling_compare=True).verdict == (
        "E2E time 137.919 ms -> 134.027 ms (-3.892 ms, -2.82%): the comparison is faster than the base")


def test_db_step_range_note_names_the_way_its_outside_part_moved(samples, tmp_path):
    """The step-range note beside a DB step's E2E: where the range shrank apart from the span, the host was not
    late. DB level-0 rank 1 against level-2 rank 0 at step 50, by hand from STEP_TIME and the span of the TASK rows
    starting inside it: range 144.964290 -> 143.741870 ms, span 129.759412 -> 129.206402 ms, the part outside -0.669
    ms; the note said "as where the host was late" of it."""
    sides = [samples / "msinsight/test/data/pytorch/db/level0/rank1_ascend_pt",
             samples / "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"]
    hand = []
    for side in sides:
        db = next((side / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db"))
        ((s, e),) = sql(db, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")
        ((ts, te),) = sql(db, "SELECT MIN(startNs), MAX(endNs) FROM TASK WHERE startNs BETWEEN ? AND ?", (s, e))
        hand.append((e - s, te - ts))
    (rb, sb), (rc, sc) = hand
    assert (rb, rc, sb, sc) == (144_964_290, 143_741_870, 129_759_412, 129_206_402)
    out = (rc - rb) - (sc - sb)
    assert out == -669_410
    res = compare(*map(str, sides), base_step=50, comparison_step=50, enable_profiling_compare=True)
    assert res.verdict == (
        "E2E time (the step's device tasks' span) 129.759 ms -> 129.206 ms (-0.553 ms, -0.43%): the comparison is "
        "faster than the base; its ProfilerStep range took 144.964 ms -> 143.742 ms, -1.222 ms, and its time outside "
        "that span (before its first or after its last device task) changed by -0.669 ms, as where the host was "
        "quicker")
    back = compare(*map(str, sides[::-1]), base_step=50, comparison_step=50, enable_profiling_compare=True)
    assert "+1.222 ms, and its time outside that span (before its first or after its last device task) changed by " \
        "+0.669 ms, as where the host was late" in back.verdict


def test_db_step_range_note_only_where_the_e2e_shows_under_half_of_it():
    """README: the note comes where the range changed by 0.05 ms or more and the E2E shows under half of that
    change. An E2E that moved more than the range (device tasks running on past its end) got the note too, with
    a part outside the span of the other sign ("+0.100 ms, of which -1.900 ms ... as where the host was late").
    The ranges and spans are step 50 of DB level-0 rank 1 (above) with the comparison's moved as given."""
    from types import SimpleNamespace

    from msprof_compare.compare import verdict

    def note(range_delta: int, e2e_delta: int) -> str:
        sides = [SimpleNamespace(source="ascend_db", extra={"step_range": (0, 144_964_290 + d)})
                 for d in (0, range_delta)]
        ctx = SimpleNamespace(base=sides[0], comparison=sides[1])
        e2e = pd.DataFrame({"base_ns": [129_759_412], "comparison_ns": [129_759_412 + e2e_delta]})
        return verdict.e2e_aside(ctx, e2e)

    assert note(100_000, 2_000_000) == note(-100_000, -2_000_000) == ""   # the E2E moved 20 times the range
    assert note(100_000, 160_000) == ""                                     # 1.6 times
    assert note(100_000, 50_000) == ""                                      # half: not under it
    outside = "and its time outside that span (before its first or after its last device task) changed by"
    assert f"+0.100 ms, {outside} +0.051 ms" in note(100_000, 49_000)
    # the E2E shrank: "+0.100 ms, of which +3.100 ms" read as a part larger than its whole
    assert f"+0.100 ms, {outside} +3.100 ms" in note(100_000, -3_000_000)
    assert note(49_999, 0) == "" and f"-0.050 ms, {outside} -0.050 ms" in note(-50_000, 0)


# --------------------------------------------------------------------------- a collective overlapping less

def _union(iv: list[list[Decimal]]) -> list[list[Decimal]]:
    """``spans.union`` as lists (the form ``_minus`` gives)."""
    return [[a, b] for a, b in union(iv)]


def _minus(x: list[list[Decimal]], y: list[list[Decimal]]) -> list[list[Decimal]]:
    """The parts of the union of ``x`` outside the union of ``y``."""
    out, cut = [], _union(y)
    for a, b in _union(x):
        at = a
        for c0, c1 in cut:
            if c1 > at and c0 < b:
                if c0 > at:
                    out.append([at, c0])
                at = max(at, c1)
        if at < b:
            out.append([at, b])
    return out


def _length(iv: list[list[Decimal]]) -> Decimal:
    return sum((b - a for a, b in _union(iv)), Decimal(0))


def _first_collective_later(src: Path, dst: Path, us: Decimal) -> tuple[dict, dict, list[str]]:
    """A copy of the text export ``src`` whose first all-reduce starts ``us`` later (a gradient bucket ready
    later), the computing running under its start unchanged: its HCCL events (op and plane tasks) and the
    communication stream's Ascend Hardware tasks from its start on, and every other device event from its end on,
    move by ``us`` (kernel_details.csv alike; a device event running across its end grows); the host is unchanged.
    The Overlap Analysis lane is rebuilt from its own intervals as msprof writes it: Computing kept (moved from the
    op's end on), Communication the ops' spans, Communication(Not Overlapped) the ops' spans outside computing,
    Free the rest of the lane's span. Returns the lane's intervals by name before and after, and the events that
    grew."""
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"
    events = json.loads((out / "trace_view.json").read_text())
    proc = {o["pid"]: o["args"]["name"] for o in events if o.get("ph") == "M" and o.get("name") == "process_name"}
    thread = {(o["pid"], o["tid"]): o["args"]["name"] for o in events
              if o.get("ph") == "M" and o.get("name") == "thread_name"}
    first = min((o for o in events if o.get("ph") == "X" and proc.get(o["pid"]) == "HCCL"
                 and thread[(o["pid"], o["tid"])].startswith("Group")), key=lambda o: Decimal(o["ts"]))
    s1 = Decimal(first["ts"])
    e1 = s1 + Decimal(repr(first["dur"]))
    comm_stream = {(o["pid"], o["tid"]) for o in events if o.get("ph") == "X"
                   and proc.get(o["pid"]) == "Ascend Hardware"
                   and o["args"].get("Task Type") in ("Notify Wait", "Write Value")}
    kept, lane, grown = [], [], []
    for o in events:
        where = proc.get(o.get("pid"))
        if where == "Overlap Analysis" and o.get("ph") == "X":
            lane.append(o)
            continue
        kept.append(o)
        if where not in ("HCCL", "Ascend Hardware") or "ts" not in o:
            continue
        ts = Decimal(str(o["ts"]))
        if ts >= e1 or (ts >= s1 and (where == "HCCL" or (o["pid"], o["tid"]) in comm_stream)):
            o["ts"] = f"{ts + us:f}" if isinstance(o["ts"], str) else float(ts + us)
        elif o.get("ph") == "X" and ts + Decimal(repr(o["dur"])) > e1:
            o["dur"] = float(Decimal(repr(o["dur"])) + us)
            grown.append(o["name"])
    before: dict[str, list[list[Decimal]]] = {n: [] for n in ("Computing", "Communication",
                                                                "Communication(Not Overlapped)", "Free")}
    for o in lane:
        before[o["name"]].append([Decimal(o["ts"]), Decimal(o["ts"]) + Decimal(repr(o["dur"]))])
    comp = [[a + us, b + us] if a >= e1 else [a, b] for a, b in before["Computing"]]
    assert all(b <= e1 or a >= e1 + us for a, b in comp)  # no computing runs across the op's end
    comm = [[a + us, b + us] if a >= s1 else [a, b] for a, b in before["Communication"]]
    span = [[min(a for iv in before.values() for a, _ in iv), max(b for iv in before.values() for _, b in iv) + us]]
    after = {"Computing": comp, "Communication": comm, "Communication(Not Overlapped)": _minus(comm, comp),
             "Free": _minus(span, comp + comm)}
    like = {o["name"]: o for o in lane}
    kept += [{**like[name], "ts": f"{a:.3f}", "dur": float(b - a)} for name, iv in after.items() for a, b in iv]
    (out / "trace_view.json").write_text(json.dumps(kept))

    def kernel(head: list[str], row: list[str]) -> bool:
        c = head.index("Start Time(us)")
        start = Decimal(row[c].strip())
        if start >= e1 or (start >= s1 and "hcom" in row[head.index("Name")]):
            row[c] = row[c].replace(row[c].strip(), f"{start + us:f}")
            return True
        return False

    assert _edit_csv(out / "kernel_details.csv", kernel) > 0
    return before, after, grown


def test_collective_overlapping_less_is_uncovered_communication_by_the_computing_it_lost(samples, tmp_path):
    """The level-1 text export's first all-reduce (79.09 ms, under 3.528 ms of backward computing) 2 ms later.
    By hand, from the Overlap Analysis lane: the base's lane first reproduces step_trace_time.csv (communication
    105.992 ms, not overlapped 101.963 ms, overlapped 4.029 ms); after the edit computing lost under the op is
    the computing of its first 2 ms, 0.583349 ms: overlapped 4.028675 -> 3.445326 ms, uncovered communication
    (Group 0, all of it Transmit: the plane the wait rule picks has no Notify_Wait) +0.583349 ms, free time
    +1.416651 ms (the first 2 ms less that computing), E2E +2 ms, computing and every operator unchanged; the
    Summary names those two waterfall steps, no operator; CommunicationCompare's op durations are unchanged."""
    us = Decimal(2000)
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    before, after, grown = _first_collective_later(samples / NPU_TEXT, slow, us)
    assert grown == ["EVENT_WAIT"]  # the computing stream's wait for the all-reduce ends later
    with open(samples / NPU_TEXT / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", newline="") as fh:
        step = next(csv.DictReader(fh))
    overlapped = {k: _length(v["Communication"]) - _length(_minus(v["Communication"], v["Computing"]))
                  for k, v in (("base", before), ("slow", after))}
    assert _minus(before["Communication"], before["Computing"]) == _union(before["Communication(Not Overlapped)"])
    assert round(overlapped["base"], 3) == round(Decimal(step["Overlapped"]), 3) == Decimal("4.028675e3")
    assert round(_length(before["Communication"]), 3) == round(Decimal(step["Communication"]), 3)
    lost = overlapped["base"] - overlapped["slow"]
    assert lost == Decimal("583.349")
    res = compare(str(samples / NPU_TEXT), str(slow))
    ms = float(lost / 1000)
    assert _breakdown_moved(res) == {"Uncovered Communication Time": ms, "Group 0 Communication": ms, "Transmit": ms,
                                     "Free Time": round(2 - ms, 6), "Free": round(2 - ms, 6), "E2E Time": 2.0}
    assert _waterfall(res) == {"Group 0 Communication (uncovered)": 583_349, "Free: Other": 1_416_651,
                               "Comparison E2E": 2_000_000}
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
        ["category", "Free: Other", 1.416651], ["category", "Group 0 Communication (uncovered)", ms]]
    assert unexplained_note(res.contributors, res.waterfall).startswith(
        "no operator changed its device time (the change is in Free: Other +1.417 ms and Group 0 Communication "
        "(uncovered) +0.583 ms, computing (or communication ops running beside one another) overlaps less of the "
        "communication than before: kernels ran at other times, which no operator's device time shows)")
    same = compare(str(samples / NPU_TEXT), str(samples / NPU_TEXT))
    assert _moved_sheets(res, same) == {"OverallMetrics"}
    # the communication line said only that no op's duration changed: it now gives the uncovered part's change
    # (the hand union above: communication less overlapped, 105.992 - 4.029 ms -> 105.992 - 3.445 ms)
    uncovered = [float((_length(v["Communication"]) - overlapped[k]) / 1000) for k, v in (("base", before),
                                                                                           ("slow", after))]
    assert [round(u, 3) for u in uncovered] == [101.963, 102.547]
    from msprof_compare.report.json_report import to_document
    from msprof_compare.report.summary_console import render_communication
    line = "\n".join(render_communication(res.frames).splitlines()[-3:])
    assert line == ("No communication op type's total duration changed (1 op type); communication time "
                    "(CommunicationCompare's op rows) 105.992 ms on both sides.\nThe part no computing overlaps "
                    "(the waterfall's communication steps) 101.963 ms -> 102.547 ms (+0.583 ms, +0.57%): "
                    "computing (or communication ops running beside one another) overlaps less of the "
                    "communication than before.\nNo task's total duration changed.")
    totals = to_document(res)["summary"]["communication"]
    assert (totals["uncovered_base_ms"], totals["uncovered_comparison_ms"]) == pytest.approx(uncovered, abs=1e-9)
    assert totals["uncovered_diff_ms"] == ms and totals["diff_ms"] == 0
    # swapped: ... overlaps more of the communication than before; unchanged: no such part
    back = render_communication(compare(str(slow), str(samples / NPU_TEXT)).frames)
    assert ("102.547 ms -> 101.963 ms (-0.583 ms, -0.57%): computing (or communication ops running beside one another) "
            "overlaps more of the communication than before") in back
    assert "no computing overlaps" not in render_communication(same.frames)


def test_text_steps_do_not_read_an_overlap_shift_from_the_whole_profile(samples, tmp_path):
    """A text export given a step: CommunicationCompare holds the step's ops but the waterfall is the whole
    profile's (OverallMetrics ignores the step), so their changes are not comparable. The level-1 text export cut
    in two steps at its third all-reduce's start (all-reduces 0 and 1 in step 50, 2 and 3 in step 51), compared
    with itself at 50 against 51: the op rows are the trace's HCCL op durations of each step, by hand 79,089.520 +
    2,281.106 us -> 2,402.388 + 22,218.864 us, and the whole profile's uncovered part is the same on both sides;
    the line said "101.963 ms on both sides: computing overlaps less of it" of one unchanged profile."""
    export = tmp_path / "two" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, export)
    path = export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(path.read_text())
    ops = sorted((e for e in events if str(e.get("name", "")).startswith("hcom_allReduce__")),
                 key=lambda e: Decimal(str(e["ts"])))
    step = next(e for e in events if e.get("name") == "ProfilerStep#50")
    cut = Decimal(str(ops[2]["ts"]))
    start, end = Decimal(str(step["ts"])), Decimal(str(step["ts"])) + Decimal(str(step["dur"]))
    step["dur"] = float(cut - 10 - start)
    events.append({**step, "name": "ProfilerStep#51", "ts": f"{cut - 5:f}", "dur": float(end - cut + 5)})
    path.write_text(json.dumps(events))
    hand = [float(sum(Decimal(str(e["dur"])) for e in part) / 1000) for part in (ops[:2], ops[2:])]
    res = compare(str(export), str(export), base_step=50, comparison_step=51, enable_profiling_compare=True,
                  enable_communication_compare=True)
    totals = res.communication_totals
    assert (totals["base_ms"], totals["comparison_ms"]) == pytest.approx(hand, abs=1e-6)
    assert [round(v, 3) for v in hand] == [81.371, 24.621]
    assert res.waterfall["Delta(ns)"].iloc[-1] == 0  # the whole profile against itself
    assert (totals["uncovered_base_ms"], totals["uncovered_comparison_ms"], totals["uncovered_diff_ms"]) == (
        None, None, None)
    from msprof_compare.report.summary_console import render_communication
    line = render_communication(res.frames)
    assert "81.371 ms -> 24.621 ms (-56.749 ms, -69.74%)" in line and "no computing overlaps" not in line


def _db_intervals(db: Path) -> dict[str, list[list[Decimal]]]:
    """The compute tasks (TASK rows with a COMPUTE_TASK_INFO row) and the communication ops of a DB export."""
    return {"compute": [[Decimal(a), Decimal(b)] for a, b in sql(db, "SELECT startNs, endNs FROM TASK JOIN "
                                                                     "COMPUTE_TASK_INFO USING (globalTaskId)")],
            "comm": [[Decimal(a), Decimal(b)] for a, b in sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP")]}


def _db_wait(db: Path, uncovered: list[list[Decimal]]) -> Decimal:
    """By hand, reference-1 §7.3 7 on the one group of these exports: the Notify_Wait tasks of the plane whose
    Notify_Wait total is least among the planes that have one (the first of equal ones; no RDMASend here, so every
    one counts; unlike a text export's rule, docs/differences.md "Group Wait"), inside the group's uncovered op
    time."""
    rows = sql(db, "SELECT c.planeId, s.value, t.startNs, t.endNs FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                   "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType")
    assert "RDMASend" not in {r[1] for r in rows}
    total: dict[int, int] = {}
    for plane, name, a, b in rows:
        if name == "Notify_Wait":
            total[plane] = total.get(plane, 0) + b - a
    best = min(sorted(total), key=total.__getitem__)
    waits = [[Decimal(a), Decimal(b)] for plane, name, a, b in rows if plane == best and name == "Notify_Wait"]
    return _length(waits) - _length(_minus(waits, uncovered))


def test_db_collective_overlapping_less_is_measured_from_the_task_intervals(samples, tmp_path):
    """The same in the level-1 DB export, whose breakdown the tool derives from the task intervals itself (there
    is no Overlap Analysis lane to read): the first all-reduce (COMMUNICATION_OP and its stream's TASK rows from
    its start on) 2 ms later, every other TASK from its end on 2 ms later (one running across its end, the compute
    stream's wait, grows); OVERLAP_ANALYSIS, which the tool does not read, is left as it was. By hand, on the raw
    rows: the base's union reproduces analysis.db's StepTraceTime (computing 8.903431, communication 102.1081, not
    overlapped 98.071947, overlapped 4.036153 ms); the edit takes the computing of the op's first 2 ms out from
    under it, 0.590573 ms: uncovered communication +0.590573 ms, all of it Wait (the hand wait rule: the plane
    chosen waits in a Notify_Wait all along the op's start), free +1.409427 ms, E2E +2 ms."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / _DB
    ns = 2_000_000
    ((s1, e1, stream),) = sql(src, "SELECT o.startNs, o.endNs, t.streamId FROM COMMUNICATION_OP o JOIN TASK t ON "
                                   "t.startNs >= o.startNs AND t.endNs <= o.endNs JOIN COMMUNICATION_TASK_INFO USING "
                                   "(globalTaskId) ORDER BY o.startNs LIMIT 1")
    assert sql(src, "SELECT COUNT(*) FROM TASK JOIN COMPUTE_TASK_INFO USING (globalTaskId) "
                    "WHERE startNs < ? AND endNs > ?", (e1, e1)) == [(0,)]  # no computing runs across its end
    slow = tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_DB, slow)
    db = edited_copy(src, slow / "ASCEND_PROFILER_OUTPUT" / _DB,
                     f"UPDATE TASK SET endNs = endNs + {ns} WHERE startNs < {e1} AND endNs > {e1} "
                     f"AND streamId != {stream}",
                     f"UPDATE TASK SET startNs = startNs + {ns}, endNs = endNs + {ns} "
                     f"WHERE startNs >= {e1} OR (startNs >= {s1} AND streamId = {stream})",
                     f"UPDATE COMMUNICATION_OP SET startNs = startNs + {ns}, endNs = endNs + {ns} "
                     f"WHERE startNs >= {s1}")
    ((step,),) = sql(samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "analysis.db",
                     "SELECT computing || ' ' || communication || ' ' || communication_not_overlapped || ' ' || "
                     "overlapped FROM StepTraceTime")
    base, after = _db_intervals(src), _db_intervals(db)
    figures = {}
    for side, iv in (("base", base), ("slow", after)):
        uncovered = _length(_minus(iv["comm"], iv["compute"]))
        figures[side] = (_length(iv["compute"]), _length(iv["comm"]), uncovered, _length(iv["comm"]) - uncovered)
    assert " ".join(f"{v / 1000:f}".rstrip("0").rstrip(".") for v in figures["base"]) == step
    lost = figures["base"][3] - figures["slow"][3]
    assert figures["slow"][:2] == figures["base"][:2] and lost == 590_573
    wait = {side: _db_wait(path, _minus(iv["comm"], iv["compute"]))
            for side, path, iv in (("base", src, base), ("slow", db, after))}
    assert wait["base"] == 2_675_633 and wait["slow"] - wait["base"] == lost  # the op's head is a Notify_Wait
    res = compare(str(samples / NPU_DB), str(slow))
    ms = float(lost / 1_000_000)
    ((group,),) = sql(src, "SELECT DISTINCT s.value FROM COMMUNICATION_OP o JOIN STRING_IDS s ON s.id = o.groupName")
    assert _breakdown_moved(res) == {"Uncovered Communication Time": ms, group: ms, "Wait": ms,
                                     "Free Time": round(2 - ms, 6), "Free": round(2 - ms, 6), "E2E Time": 2.0}
    label = group.rsplit("_", 1)[0]  # the waterfall drops a group's creation time, to pair it across runs
    assert _waterfall(res) == {f"Group {label} Communication (uncovered)": lost, "Free: Other": ns - lost,
                               "Comparison E2E": ns}
    assert res.contributors["Name"].tolist()[0] == "Free: Other" and len(res.contributors) == 2
    same = compare(str(samples / NPU_DB), str(samples / NPU_DB))
    assert _moved_sheets(res, same) == {"OverallMetrics"}
    # the hand union's uncovered communication (98.071947 ms, analysis.db's not overlapped) + the loss
    totals = res.frames["communication"].iloc[0]
    assert (totals["uncovered_base_ms"], totals["uncovered_comparison_ms"]) == pytest.approx(
        (float(figures["base"][2] / 1_000_000), float(figures["slow"][2] / 1_000_000)), abs=1e-9)
    assert totals["diff_ms"] == 0 and overlap_shift(totals) == "less"


# --------------------------------------------------------------------------- each comparison alone

@pytest.mark.parametrize("kind", ["text", "db"])
def test_each_comparison_alone_writes_the_default_runs_cells(samples, tmp_path, kind):
    """On the host-late pair (the text export) and the renumbered two-step pair (the DB export, steps 50 / 60),
    each ``--enable_*_compare`` alone writes the same sheets, cell for cell, as the default run, and together they
    write all of its sheets (step 50 of the DB pair holds no collective: no CommunicationCompare in either run)."""
    if kind == "text":
        slow = tmp_path / "slow" / "rank0_ascend_pt"
        _text_host_late(samples / NPU_TEXT, slow, Decimal("1736408883729400"), Decimal(500))
        pair, extra = (str(samples / NPU_TEXT), str(slow)), {}
    else:
        pair, extra = _db_two_steps(samples, tmp_path), {"base_step": 50, "comparison_step": 60}
    full = compare(*pair, **extra)
    seen = set()
    for flag in _COMPARISONS:
        alone = compare(*pair, **{f"enable_{flag}_compare": True}, **extra)
        names = [n for n in alone.sheet_names if n != "Summary"]
        assert names or (kind, flag) == ("db", "communication"), flag
        for name in names:
            assert alone.sheet(name).equals(full.sheet(name)), (flag, name)
        seen.update(names)
    assert seen == set(full.sheet_names) - {"Summary"}


def test_db_step_range_aside_writes_its_ms_as_the_verdict_before_it():
    """The range's change follows the verdict's figures in one sentence (00e7cec), so it writes ms as they do: a
    step over a second read "E2E time (...) 1200.000 ms -> 1200.000 ms ...; its ProfilerStep range took 1,300.000 ms
    -> 1,300.500 ms", two spellings of one unit side by side."""
    from types import SimpleNamespace

    from msprof_compare.compare import verdict

    sides = [SimpleNamespace(source="ascend_db", extra={"step_range": (0, 1_300_000_000 + d)}) for d in (0, 500_000)]
    ctx = SimpleNamespace(base=sides[0], comparison=sides[1])
    e2e = pd.DataFrame({"base_ns": [1_200_000_000], "comparison_ns": [1_200_000_000]})
    wf = pd.DataFrame({"Base(ns)": [1_200_000_000, None], "Comparison(ns)": [None, 1_200_000_000]})
    assert verdict.e2e_verdict(wf, " (the step's device tasks' span)", verdict.e2e_aside(ctx, e2e)) == (
        "E2E time (the step's device tasks' span) 1200.000 ms on both sides: the comparison is as fast as the base; "
        "its ProfilerStep range took 1300.000 ms -> 1300.500 ms, +0.500 ms, and its time outside that span (before "
        "its first or after its last device task) changed by +0.500 ms, as where the host was late")
