"""Warning counts of 1,000 or more are written with thousands separators, as session 62 made every loader count
them ("2,460 PYTORCH_API.type value(s) missing"). Mutation testing (session 63) found the separator of these notes
could be dropped with every test passing: their tests count fewer than 1,000 events. Here each note counts
thousands, on msinsight's level1 DB and text exports of rank 0 (``../shared/samples``, PROVENANCE.md; skipped
without them), the bert-small H100 trace of ``sample_data/`` (its README) and vLLM's MI300X excerpt
(tests/data/kineto/README.md), edited in a copy; the expected counts come from the DB by SQL or from the raw JSON,
not from the loader."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options
from tests.dbutil import edited_copy, sql

ROOT = Path(__file__).resolve().parents[1]
LEVEL1_DB = ROOT.parent / "shared" / "samples" / "msinsight" / "test" / "data" / "pytorch" / "db" / "level1" / \
    "rank0_ascend_pt"
LEVEL1_TEXT = LEVEL1_DB.parents[2] / "text" / "level1" / "rank0_ascend_pt"
BERT = ROOT / "sample_data" / "bert-small_h100.json.gz"
DB_NAME = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
#: PYTORCH_API written twice: every row, op rows (type 'op') among them, twice.
TWICE = "INSERT INTO PYTORCH_API SELECT * FROM PYTORCH_API"
WEEK_NS = 7 * 86400 * 10**9


def _edited_db(tmp_path: Path, *statements: str) -> tuple[Path, list[str]]:
    """The level1 DB rank 0 folder with ``statements`` applied to its DB copy: (the DB, the loaded profile's
    warnings)."""
    if not LEVEL1_DB.is_dir():
        pytest.skip("the shared samples are absent")
    dest = tmp_path / LEVEL1_DB.name
    shutil.copytree(LEVEL1_DB, dest, ignore=shutil.ignore_patterns(Path(DB_NAME).name))
    edited_copy(LEVEL1_DB / DB_NAME, dest / DB_NAME, *statements)
    return dest / DB_NAME, load_profile(str(dest), build_options(enable_profiling_compare=True)[0]).warnings


def _count(query: str) -> int:
    return sql(LEVEL1_DB / DB_NAME, query)[0][0]


def test_db_rows_ending_before_they_start_are_counted_with_separators(tmp_path):
    """Every op row of PYTORCH_API (written twice) ends 1 ns before it starts: 2 x 860 such rows."""
    n = 2 * _count("SELECT count(*) FROM PYTORCH_API WHERE type = "
                   "(SELECT id FROM ENUM_API_TYPE WHERE name = 'op')")
    assert n == 1720
    db, warnings = _edited_db(tmp_path, TWICE, "UPDATE PYTORCH_API SET endNs = startNs - 1")
    assert [w for w in warnings if "end before they start" in w] == [
        f"{db}: 1,720 row(s) end before they start (1,720 in PYTORCH_API); their duration is read as 0"]


def test_db_rows_over_a_week_are_counted_with_separators(tmp_path):
    """Every op row of PYTORCH_API (written twice) lasts a week and a ns: 2 x 860 such rows."""
    db, warnings = _edited_db(tmp_path, TWICE, f"UPDATE PYTORCH_API SET endNs = startNs + {WEEK_NS + 1}")
    assert [w for w in warnings if "over a week" in w] == [
        f"{db}: 1,720 row(s) (1,720 in PYTORCH_API) last over a week (a damaged time?); read as 0"]


def test_db_rows_without_a_start_are_counted_with_separators(tmp_path):
    """Every PYTORCH_API row without its start: all 2,460."""
    assert _count("SELECT count(*) FROM PYTORCH_API") == 2460
    db, warnings = _edited_db(tmp_path, "UPDATE PYTORCH_API SET startNs = NULL")
    assert [w for w in warnings if "no start or end time" in w] == [
        f"{db}: 2,460 row(s) have no start or end time (2,460 PYTORCH_API); left out"]


def test_db_reserved_totals_below_zero_are_counted_with_separators(tmp_path):
    """MEMORY_RECORD written twice, every totalReserved -1: 2 x 990 readings left out."""
    assert _count("SELECT count(*) FROM MEMORY_RECORD") == 990
    db, warnings = _edited_db(tmp_path, "INSERT INTO MEMORY_RECORD SELECT * FROM MEMORY_RECORD",
                              "UPDATE MEMORY_RECORD SET totalReserved = -1")
    assert [w for w in warnings if "totalReserved" in w] == [
        f"{db}: 1,980 MEMORY_RECORD totalReserved value(s) negative or over 1 PB; Mem Usage leaves them out"]


def _edited_trace(tmp_path: Path, edit) -> tuple[Path, list[dict]]:
    """A copy of the level1 text export whose trace_view.json events went through ``edit`` (in place): (the copy,
    the events as written)."""
    if not LEVEL1_TEXT.is_dir():
        pytest.skip("the shared samples are absent")
    out = shutil.copytree(LEVEL1_TEXT, tmp_path / LEVEL1_TEXT.name)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    edit(events)
    trace.write_text(json.dumps(events))
    return out, events


def test_trace_view_host_events_without_a_name_are_counted_with_separators(tmp_path):
    """Every host event of the level1 text trace nameless: the operator comparison reads its cpu_op and
    python_function events (enqueue and dequeue are read for the memory comparison), 860 + 1,282."""
    def blank(events):
        for e in events:
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "python_function", "enqueue", "dequeue"):
                e["name"] = ""

    out, events = _edited_trace(tmp_path, blank)
    n = sum(e.get("ph") == "X" and e.get("cat") in ("cpu_op", "python_function") for e in events)
    assert n == 2142
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    warnings = load_profile(str(out), build_options(enable_operator_compare=True)[0]).warnings
    assert [w for w in warnings if "without a name" in w] == [
        f"{trace}: 2,142 host events (cpu_op, python_function) without a name (or with an empty one): read as "
        "named \"\", so such an operator is listed under that name and such a python_function marks no module"]


def test_python_lane_events_of_another_category_are_counted_with_separators(tmp_path):
    """Every python_function event of the level1 text trace's Python lane given the category "python_func": 1,282."""
    def recat(events):
        for e in events:
            if e.get("ph") == "X" and e.get("cat") == "python_function":
                e["cat"] = "python_func"

    out, events = _edited_trace(tmp_path, recat)
    assert sum(e.get("cat") == "python_func" for e in events) == 1282
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    warnings = load_profile(str(out), build_options(enable_operator_compare=True)[0]).warnings
    assert [w for w in warnings if "Python lane" in w] == [
        f"{trace}: 1,282 complete event(s) of the Python lane with a cat other than cpu_op, python_function, enqueue "
        "or dequeue (the first: 'python_func'); not read, so they count in no figure"]


@pytest.mark.parametrize(("dur", "said"), [(-1, "with a negative duration; read as 0"),
                                           (8 * 86400 * 10**6, "last over a week (a damaged time?); read as 0")])
def test_kineto_durations_read_as_0_are_counted_with_separators(tmp_path, dur, said):
    """Every Python function of bert-small's trace given a negative duration, or one of 8 days: 1,385 events."""
    doc = json.loads(gzip.decompress(BERT.read_bytes()))
    frames = [e for e in doc["traceEvents"] if e.get("cat") == "python_function" and e.get("ph") == "X"]
    assert len(frames) == 1385
    for e in frames:
        e["dur"] = dur
    path = tmp_path / "bert.pt.trace.json"
    path.write_text(json.dumps(doc))
    assert [w for w in load_profile(str(path), build_options()[0]).warnings if said in w] == [
        f"{path}: 1,385 event(s) {said}"]


def test_kineto_host_events_written_twice_are_counted_with_separators(tmp_path):
    """Every host event with a duration of vLLM's MI300X excerpt (tests/data/kineto/README.md) written again, args
    and all: 642 cpu_op, 381 cuda_runtime and 1 user_annotation events, 1,024 copies."""
    path = ROOT / "tests" / "data" / "kineto" / "vllm_mi300x_piecewise_graphs_excerpt.pt.trace.json.gz"
    doc = json.loads(gzip.decompress(path.read_bytes()))
    host = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("dur", 0) > 0
            and e.get("cat") in ("cpu_op", "cuda_runtime", "user_annotation")]
    assert len(host) == 1024
    doc["traceEvents"] += [dict(e) for e in host]
    twice = tmp_path / "twice.pt.trace.json"
    twice.write_text(json.dumps(doc))
    assert [w for w in load_profile(str(twice), build_options()[0]).warnings if "repeat another exactly" in w] == [
        f"{twice}: 1,024 host event(s) with a duration repeat another exactly (name, time, duration, thread and args: "
        "a trace merged or written twice?); each is read as written, so ApiCompare counts it again in its op's Calls "
        "and Total Duration"]


def test_trace_view_device_tasks_written_again_are_counted_with_separators(tmp_path):
    """The level1 text trace's 535 Ascend Hardware and 300 HCCL tasks each written twice more: 1,670 repeats."""
    def thrice(events):
        lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
        device = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) in ("Ascend Hardware", "HCCL")]
        assert len(device) == 835
        events += [dict(e) for e in device] * 2

    out, _ = _edited_trace(tmp_path, thrice)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    warnings = load_profile(str(out), build_options(enable_profiling_compare=True)[0]).warnings
    assert [w.split(" (same")[0] for w in warnings if "repeat an earlier one" in w] == [
        f"{trace}: 1,670 device task(s) on the Ascend Hardware / HCCL lanes repeat an earlier one"]


def test_step_cut_line_counts_carry_separators() -> None:
    """The step-cut warning of CommunicationCompare (``communication.step_cut_line``) wrote '1500 task(s)' where
    the loaders write '1,500': its counts (tasks and ops before the step, after its end) given here, the line
    written by hand."""
    from msprof_compare.compare.communication import step_cut_line
    from msprof_compare.model import Profile

    p = Profile(path="run", kind="NPU", source="ascend_db")
    assert step_cut_line(p, (1_001, 1_500, 2_000, 12_345)) == (
        "run: the step's bounds cut communication ops from their tasks: 1,500 task(s) inside the step of 1,001 "
        "communication op(s) that start before it are left out, as those ops are; 12,345 task(s) after the step's "
        "end of 2,000 op(s) that start in it are left out, while those ops' rows count their whole time "
        "(CommunicationCompare counts an op and each task in the step its start lies in, as the original)")
