"""A duration over a week is a damaged time (numparse.MAX_DURATION_NS): every loader reads it as 0 with one
warning, so the figures equal those of the same input with that duration written as 0.

Inputs are the real excerpts of tests/data (see the README files there), one event edited."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from cliutil import error_lines, run_inproc
from dbutil import edited_copy, sql

from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.compare.breakdown_npu import npu_breakdown
from msprof_compare.loaders import ascend_db, load_profile
from msprof_compare.loaders.numparse import MAX_DURATION_NS
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data"
OPTS = build_options(enable_profiling_compare=True)[0]
WEEK_US = MAX_DURATION_NS // 1000
LONG = "last over a week (a damaged time?); read as 0"


def _same_breakdown(a, b) -> None:
    for f in ("e2e_ns", "computing_ns", "free_ns", "uncovered_comm_ns"):
        assert getattr(a, f) == getattr(b, f), f
    assert {k: v.ns for k, v in a.buckets.items()} == {k: v.ns for k, v in b.buckets.items()}


def _edit_first_kernel(events: list, dur: int, lane: object = None) -> None:
    for e in events:
        if e.get("ph") == "X" and (e.get("cat") == "kernel" if lane is None else e.get("pid") == lane):
            e["dur"] = dur
            return
    raise AssertionError("no event to edit")


def test_kineto_event_over_a_week_reads_as_zero(tmp_path: Path) -> None:
    src = json.loads((DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json").read_text())
    paths = {}
    for name, dur in (("long", WEEK_US + 1), ("zero", 0), ("week", WEEK_US)):
        doc = json.loads(json.dumps(src))
        _edit_first_kernel(doc["traceEvents"], dur)
        paths[name] = tmp_path / f"{name}.pt.trace.json"
        paths[name].write_text(json.dumps(doc))
    long, zero = load_profile(str(paths["long"]), OPTS), load_profile(str(paths["zero"]), OPTS)
    assert f"{paths['long']}: 1 event(s) {LONG}" in long.warnings
    assert not any(LONG in w for w in load_profile(str(paths["week"]), OPTS).warnings)  # a week itself is kept
    _same_breakdown(gpu_breakdown(long), gpu_breakdown(zero))


def test_npu_text_event_and_kernel_over_a_week_read_as_zero(tmp_path: Path) -> None:
    src = DATA / "npu" / "rank0_ascend_pt"
    dirs = {}
    for name, dur in (("long", WEEK_US + 1), ("zero", 0)):
        d = tmp_path / name / "x_ascend_pt"
        shutil.copytree(src, d)
        tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        events = json.loads(tv.read_text())
        hw = next(e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                  and e["args"].get("name") == "Ascend Hardware")
        _edit_first_kernel(events, dur, lane=hw)
        tv.write_text(json.dumps(events))
        kd = d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
        lines = kd.read_text().splitlines()
        head = [c.strip() for c in lines[0].split(",")]
        cells = lines[1].split(",")
        cells[head.index("Duration(us)")] = str(dur)
        kd.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")
        dirs[name] = d
    long, zero = load_profile(str(dirs["long"]), OPTS), load_profile(str(dirs["zero"]), OPTS)
    assert f"{dirs['long'] / 'ASCEND_PROFILER_OUTPUT' / 'trace_view.json'}: 1 event(s) {LONG}" in long.warnings
    assert f"{dirs['long'] / 'ASCEND_PROFILER_OUTPUT' / 'kernel_details.csv'}: 1 kernel(s) {LONG}" in long.warnings
    assert long.kernel_details["dur"].iloc[0] == 0 and long.kernel_details["Duration(us)"].iloc[0] == 0.0
    _same_breakdown(npu_breakdown(long), npu_breakdown(zero))


@pytest.mark.parametrize("kind", ["trace_view", "kineto"])
def test_an_event_over_a_week_ending_beyond_int64_loads_as_zero_in_both_traces(tmp_path: Path, kind: str) -> None:
    """A damaged duration that also carries the event's end past int64 (start 9e15 us, dur 5e14 us: one
    kernel of each excerpt edited) reads as 0 with the over-a-week warning in both trace loaders: the Kineto
    loader zeroed it before checking the end, the trace_view.json loader checked first and refused the trace
    ("ends beyond the int64 nanosecond range")."""
    start, dur = 9_000_000_000_000_000 - 1_000_000, 500_000_000_000_000
    if kind == "kineto":
        doc = json.loads((DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json").read_text())
        events = doc["traceEvents"]
        lane = None
    else:
        d = tmp_path / "x_ascend_pt"
        shutil.copytree(DATA / "npu" / "rank0_ascend_pt", d)
        events = doc = json.loads((d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
        lane = next(e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                    and e["args"].get("name") == "Ascend Hardware")
    _edit_first_kernel(events, dur, lane=lane)
    edited = next(e for e in events if e.get("dur") == dur)
    edited["ts"] = start if kind == "kineto" else f"{start}.000"
    path = tmp_path / "t.pt.trace.json" if kind == "kineto" else d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    path.write_text(json.dumps(doc))
    prof = load_profile(str(path if kind == "kineto" else d), OPTS)
    assert f"{path}: 1 event(s) {LONG}" in prof.warnings


def test_db_task_ending_at_int64_max(tmp_path: Path) -> None:
    """A compute task and a non-kernel task each ending at int64 max (an end never written): their durations
    read as 0, and E2E is that of the same DB with those tasks ending at their start."""
    l1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    pick = ("globalTaskId IN ((SELECT min(globalTaskId) FROM COMPUTE_TASK_INFO), (SELECT max(globalTaskId) FROM "
            "TASK WHERE globalTaskId NOT IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO)))")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    long = edited_copy(l1, tmp_path / "a" / l1.name, f"UPDATE TASK SET endNs = 9223372036854775807 WHERE {pick}")
    zero = edited_copy(l1, tmp_path / "b" / l1.name, f"UPDATE TASK SET endNs = startNs WHERE {pick}")
    assert sql(long, "SELECT count(*) FROM TASK WHERE endNs = 9223372036854775807") == [(2,)]
    p, q = load_profile(str(long), OPTS), load_profile(str(zero), OPTS)
    assert f"{long}: 2 row(s) (2 in TASK) {LONG}" in p.warnings
    bp, bq = db_breakdown(p), db_breakdown(q)
    _same_breakdown(bp, bq)
    assert 0 < bp.e2e_ns < 10**9  # the excerpt spans well under a second (7.5e12 ms before)


def test_db_step_task_of_a_damaged_start_is_said(tmp_path: Path) -> None:
    """--base_step: a step's tasks go by start, so a kernel of step 50 whose startNs is damaged (int64's greatest;
    0) left the step without a word, where the run over every step counts it (0 long, said). The two are said now
    (counted apart from a task that starts, soundly, 1 us before the step and ends in it): the step keeps the
    excerpt's 187 compute tasks of step 50 (SQL) less those two, and the whole run says nothing of a step."""
    l1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    step = "SELECT startNs FROM STEP_TIME WHERE id = 50"
    kernel = ("SELECT t.globalTaskId FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) WHERE t.startNs "
              f"BETWEEN ({step}) AND (SELECT endNs FROM STEP_TIME WHERE id = 50) ORDER BY t.startNs LIMIT 1 OFFSET ")
    (tmp_path / "a").mkdir()
    db = edited_copy(l1, tmp_path / "a" / l1.name,
                     f"UPDATE TASK SET startNs = 9223372036854775807 WHERE globalTaskId = ({kernel}5)",
                     f"UPDATE TASK SET startNs = 0 WHERE globalTaskId = ({kernel}9)",
                     f"UPDATE TASK SET startNs = ({step}) - 1000 WHERE globalTaskId = ({kernel}0)")
    (n,), = sql(l1, f"SELECT count(*) FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) WHERE t.startNs "
                    f"BETWEEN ({step}) AND (SELECT endNs FROM STEP_TIME WHERE id = 50)")
    assert n == 187
    assert sql(db, f"SELECT count(*) FROM TASK WHERE startNs BETWEEN 1 AND ({step}) - 1 AND endNs > ({step})") == [(1,)]
    said = (f"{db}: 2 TASK row(s) end in the step but start outside it at a damaged time (after their end, or over "
            "a week before it); they are left out of the step, where a run over every step counts them (0 long)")
    p = load_profile(str(db), OPTS, 50)
    assert len(p.kernels) == n - 3 and said in p.warnings
    assert not [w for w in load_profile(str(l1), OPTS, 50).warnings if "TASK row(s)" in w]
    whole = load_profile(str(db), OPTS)
    assert not [w for w in whole.warnings if "in the step" in w] and len(whole.kernels) == n


def test_db_durations_bound_and_int64_wrap() -> None:
    """``_Db.durations``: negative and over-a-week durations read as 0, counted per table; an end - start that
    wraps int64 is over the bound, not a negative (or tiny) duration."""
    db = SimpleNamespace(negative={}, too_long={})
    start = np.array([0, 10, 0, 0, -(2**62) * 2], dtype=np.int64)
    end = np.array([5, 3, MAX_DURATION_NS, MAX_DURATION_NS + 1, 2**62], dtype=np.int64)
    got = ascend_db._Db.durations(db, start, end, "TASK")
    assert got.tolist() == [5, 0, MAX_DURATION_NS, 0, 0]
    assert db.negative == {"TASK": 1} and db.too_long == {"TASK": 2}


def test_window_beyond_int64_is_a_data_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Damaged times far apart (a DB MEMCPY_ASYNC task starting at -2**63; two Kineto kernels at -8.9e15 and
    8.9e15 us: each value within its loader's range) made the E2E window longer than int64 ns: "internal error:
    Python int too large to convert to C long" in the waterfall. It is refused as the data error of that file,
    with no workbook."""
    l1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    pick = "SELECT min(globalTaskId) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value = 'MEMCPY_ASYNC'"
    db = edited_copy(l1, tmp_path / l1.name, f"UPDATE TASK SET startNs = {-2**63} WHERE globalTaskId = ({pick})")
    doc = json.loads((DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json").read_text())
    kernels = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    kernels[0]["ts"], kernels[-1]["ts"] = -8.9e15, 8.9e15
    trace = tmp_path / "w.pt.trace.json"
    trace.write_text(json.dumps(doc))
    for bad, good in ((db, l1), (trace, DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json")):
        out = tmp_path / f"out_{bad.stem}"
        code, _, err = run_inproc(capsys, "-d", str(bad), "-bp", str(good), "-o", str(out))
        errors = error_lines(err)
        assert code == 1 and len(errors) == 1, err
        assert errors[0].startswith(f"error: {bad}: the device activity spans ") and "int64" in errors[0]
        assert not out.exists() or not os.listdir(out)
