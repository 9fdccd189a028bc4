"""The Ascend text loader: tables vs independent counts (json module), side files, levels, errors."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_memory_record_reads import LOST

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import detect, load_profile
from msprof_compare.loaders.numparse import decimal_us_to_ns, lenient_us_to_ns
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data" / "npu"
PT = DATA / "rank0_ascend_pt"
MS = DATA / "profiler" / "rank-0_20250101000000000_ascend_ms"
OPTS = Options(enable_profiling_compare=True)
ALL = Options(**{k: True for k in ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
                                   "enable_communication_compare", "enable_api_compare", "enable_kernel_compare")})


def ns(v) -> int:
    return int((Decimal(str(v)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())


@pytest.fixture(scope="module")
def prof():
    return load_profile(str(PT), ALL)


def _pids(raw: list[dict]) -> dict[str, int]:
    return {e["args"]["name"]: e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"}


def test_tables_match_independent_counts(raw, prof):
    pids = _pids(raw)
    x = [e for e in raw if e.get("ph") == "X"]
    assert prof.kind == "NPU" and prof.source == "ascend_text" and prof.level == "profiling"
    assert len(prof.ops) == sum(e.get("cat") == "cpu_op" for e in raw) > 0
    hw = [e for e in x if e["pid"] == pids["Ascend Hardware"]]
    assert len(prof.kernels) == len(hw) > 0
    assert set(prof.kernels["cat"]) == {"npu_task"}
    assert prof.kernels["task_type"].tolist() == [e["args"]["Task Type"] for e in hw]
    assert prof.kernels["ts"].tolist() == [ns(e["ts"]) for e in hw]
    # float durations (e.g. 25.4605 us) round to the nearest ns; a half-ns may go either way
    assert np.abs(prof.kernels["dur"].to_numpy() - [ns(e["dur"]) for e in hw]).max() <= 1
    assert len(prof.overlap) == sum(e["pid"] == pids["Overlap Analysis"] for e in x) > 0
    hccl = [e for e in x if e["pid"] == pids["HCCL"]]
    names = {e["tid"]: e["args"]["name"] for e in raw
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == pids["HCCL"]}
    n_ops = sum("Communication" in names.get(e["tid"], "") for e in hccl)
    assert (prof.comm["lane"] == "op").sum() == n_ops > 0
    assert (prof.comm["lane"] == "task").sum() == len(hccl) - n_ops > 0
    assert set(prof.comm["group"]) == {"Group 0 Communication"}
    assert len(prof.queue) == sum(e.get("cat") in ("enqueue", "dequeue") for e in raw)
    assert len(prof.python_functions) == sum(e.get("cat") == "python_function" for e in raw)
    meta = [e for e in raw if e.get("ph") == "M"]
    assert len(prof.processes) == len({e["pid"] for e in meta if e["name"].startswith("process_")})
    assert len(prof.threads) == len({(e["pid"], e["tid"]) for e in meta if e["name"].startswith("thread_")})


def test_profiling_only_selects_the_same_rows(prof):
    """Profiling-only loading skips python functions and the task queue but cuts every table the
    breakdown reads exactly as a full load does."""
    p = load_profile(str(PT), OPTS)
    assert len(prof.queue) > 0  # (this excerpt has no python_function events)
    assert len(p.python_functions) == 0 and len(p.queue) == 0
    for table in ("kernels", "comm", "overlap", "flows", "processes", "threads"):
        a, b = getattr(prof, table), getattr(p, table)
        cols = [c for c in a.columns if c not in ("input_dims", "input_type", "call_stack")]
        assert a[cols].equals(b[cols]), table
    assert prof.ops[["name", "ts", "dur", "tid"]].equals(p.ops[["name", "ts", "dur", "tid"]])
    assert p.backward_tid == prof.backward_tid


def test_flows_and_backward_tid(raw, prof):
    # only the categories a comparator reads are kept (op -> task and forward -> backward links)
    assert "async_npu" in set(prof.flows["cat"]) <= {"async_npu", "fwdbwd"}
    assert {e.get("cat") for e in raw if e["ph"] in "sf"} > {"async_npu", "fwdbwd"}
    for cat in ("async_npu", "fwdbwd"):
        s = {str(e["id"]): e for e in raw if e.get("cat") == cat and e["ph"] == "s"}
        f = {str(e["id"]): e for e in raw if e.get("cat") == cat and e["ph"] == "f"}
        got = prof.flows[prof.flows["cat"] == cat]
        assert sorted(got["id"]) == sorted(set(s) & set(f))
        for row in got.itertuples():
            assert row.s_ts == ns(s[row.id]["ts"]) and row.f_ts == ns(f[row.id]["ts"])
    fwdbwd_ends = [e for e in raw if e.get("cat") == "fwdbwd" and e["ph"] == "f"]
    assert prof.backward_tid == fwdbwd_ends[-1]["tid"]


def _tiny_trace(tmp_path: Path, flows: list[tuple]) -> Path:
    """A bare trace_view.json: cpu ops aten::t1..t3 on tids 1..3 at 10/30/40 us; flows: (ph, id, tid, ts_us)."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Python"}}]
    ev += [{"ph": "X", "cat": "cpu_op", "name": f"aten::t{t}", "pid": 1, "tid": t, "ts": str(ts), "dur": "5",
            "args": {}} for t, ts in ((1, 10), (2, 30), (3, 40))]
    ev += [{"ph": ph, "cat": "fwdbwd", "name": "fwdbwd", "id": i, "pid": 1, "tid": t, "ts": str(ts), "bp": "e"}
           for ph, i, t, ts in flows]
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    return f


def test_last_by_key_gives_last_occurrences_in_file_order(tmp_path):
    """reference-1 §3.3: flows pair by id like a dict, so of repeated ids the LAST start / end is the one kept."""
    from msprof_compare.loaders.ascend_text import _last_by_key

    key = np.array([5, 3, 5, 7, 3, 9])
    assert _last_by_key(key).tolist() == [2, 3, 4, 5]  # 5 -> 2, 7 -> 3, 3 -> 4, 9 -> 5
    f = _tiny_trace(tmp_path, [("s", 7, 1, 10), ("f", 7, 2, 30), ("f", 7, 3, 40)])
    flows = load_profile(str(f), Options(enable_operator_compare=True)).flows
    assert flows[["id", "s_ts", "s_tid", "f_ts", "f_tid"]].values.tolist() == [["7", 10_000, 1, 40_000, 3]]


def test_backward_tid_is_the_last_fwdbwd_end(tmp_path):
    """reference-1 §5.1: NPU text takes the backward thread id from the last fwdbwd flow end (GPU: the first)."""
    f = _tiny_trace(tmp_path, [("s", 1, 1, 10), ("f", 1, 2, 30), ("s", 2, 1, 12), ("f", 2, 3, 40)])
    assert load_profile(str(f), Options(enable_operator_compare=True)).backward_tid == 3


def test_ops_keep_text_args(raw, prof):
    ops = [e for e in raw if e.get("cat") == "cpu_op"]
    i = next(k for k, e in enumerate(ops) if "Input Dims" in e["args"])
    first, row = ops[i], prof.ops.iloc[i]
    assert row["name"] == first["name"]
    assert row["input_dims"] == first["args"]["Input Dims"]
    assert row["input_type"] == first["args"]["Input type"]
    assert row["call_stack"] == "N/A"  # no stack recorded in this window
    j = next(k for k, e in enumerate(ops) if "Input Dims" not in e["args"])
    assert prof.ops.iloc[j]["input_dims"] == "N/A"  # absent -> "N/A"


def test_kernel_details_exact_start_times(prof):
    lines = (PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_text().splitlines()[1:]
    kd = prof.kernel_details
    assert len(kd) == len(lines) == 20
    starts = [ln.split(",")[8] for ln in lines]
    assert all(s.endswith("\t") for s in starts)  # the trailing TAB of real exports
    assert kd["ts"].tolist() == [ns(s.strip()) for s in starts]
    assert kd["Step Id"].tolist() == [50] * 20
    assert kd["dur"].tolist() == [ns(ln.split(",")[9]) for ln in lines]
    # PMU "N/A" -> NaN; Accelerator Core text kept
    assert kd["aiv_vec_time(us)"].dtype == np.float64
    assert set(kd["Accelerator Core"]) <= {"AI_CORE", "AI_VECTOR_CORE", "MIX_AIV", "AI_CPU", "HCCL", "N/A"}


def test_side_files(prof):
    assert prof.memory_record is not None and len(prof.memory_record) == 30
    import csv

    with open(PT / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", newline="") as fh:
        reserved = [float(r["Total Reserved(MB)"]) for r in csv.DictReader(fh) if r["Total Reserved(MB)"]]
    assert prof.memory_record["Total Reserved(MB)"].max() == max(reserved)
    assert isinstance(prof.communication, dict) and "step50" in prof.communication
    assert prof.metadata.get("ENV_VARIABLES") is not None
    assert prof.extra["profiler_level"] == "Level1"
    assert prof.operator_memory is None  # the fixture has none
    assert any(": The file operator_memory.csv does not exist. (no memory allocated inside operators to compare "
               "(MemoryCompare); " in w for w in prof.warnings)
    assert prof.files["kernel_details.csv"].endswith("kernel_details.csv")


def test_load_builds_no_empty_table_it_replaces(monkeypatch):
    """The Profile gets the trace tables at construction: an empty default is made only for a table the trace
    gave no rows (each is a copy of a prototype; nine made and thrown away were ~0.15 ms of a side's load)."""
    from msprof_compare import model

    made: list[str] = []
    real = model.empty
    monkeypatch.setattr(model, "empty", lambda table: made.append(table) or real(table))
    p = load_profile(str(PT), ALL)
    filled = [t for t in ("ops", "kernels", "flows", "comm", "overlap", "queue", "python_functions", "threads",
                          "processes") if len(getattr(p, t))]
    assert len(filled) == 8  # the excerpt has rows for all of them but python_functions
    # python_functions: no rows in the excerpt; memory: a table an NPU text export has no data for
    assert sorted(made) == ["memory", "python_functions"]


def test_side_files_only_for_the_comparisons_that_use_them():
    """memory_record.csv and communication.json feed OverallMetrics only: an API-only run neither reads
    them nor warns when they are missing (the MindSpore fixture has neither)."""
    api_only = Options(enable_api_compare=True)
    p = load_profile(str(PT), api_only)
    assert p.memory_record is None and p.communication is None
    assert "kernel_details.csv" in p.files and "memory_record.csv" not in p.files
    assert load_profile(str(MS), api_only).warnings == []


def test_trace_level_reads_only_the_trace(raw):
    p = load_profile(str(PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"), ALL)
    assert p.level == "trace"
    assert list(p.files) == ["trace_view.json"]
    assert p.kernel_details is None and p.memory_record is None and p.communication is None
    assert p.metadata == {} and p.warnings == []
    assert len(p.kernels) == len(load_profile(str(PT), OPTS).kernels)


def test_ascend_output_level():
    p = load_profile(str(PT / "ASCEND_PROFILER_OUTPUT"), OPTS)
    assert p.level == "ascend_output"
    assert p.kernel_details is not None
    # the original reads profiler_info.json only at the profiling level; ours reads the one of the folder above
    # for the validity checks' settings note alone (test_summary.py::
    # test_npu_profiler_settings_of_an_export_given_one_folder_down), without a warning
    assert p.files["profiler_info"] == str(PT / "profiler_info_0.json")
    assert not [w for w in p.warnings if "profiler_info" in str(w)]


def test_ascend_output_without_trace_view(tmp_path):
    """An ASCEND_PROFILER_OUTPUT whose trace_view.json is missing: its communication JSON files are
    not taken for Kineto traces; the message says what is missing."""
    out = tmp_path / "ASCEND_PROFILER_OUTPUT"
    shutil.copytree(PT / "ASCEND_PROFILER_OUTPUT", out)
    (out / "trace_view.json").unlink()
    shutil.copyfile(out / "communication.json", out / "communication_matrix.json")
    with pytest.raises(ProfileError, match="no trace_view.json") as err:
        detect(str(out))
    # the export was parsed (its CSVs are there): "not collected ... or not parsed" would mislead (log audit)
    parsed = sorted(n for n in ("kernel_details.csv", "memory_record.csv", "communication.json")
                    if (out / n).exists())
    assert parsed and err.value.path == str(out)
    assert err.value.message.startswith("holds the parsed ") and all(n in err.value.message for n in parsed)
    assert err.value.message.endswith("but no trace_view.json or ascend_*_profiler_*.db, which the comparison needs")
    assert err.value.hint == "copy the directory with its trace_view.json, or export the profile again"


def test_msprof_database_is_named(tmp_path, samples):
    """A CANN msprof_*.db (a real one from the msinsight tests: TASK, COMPUTE_TASK_INFO, ... tables) is no
    export the comparison reads: it is named as what it is, given alone or in its folder, where the folder
    form said no profiler *.db was found. analysis.db keeps its own sentence."""
    db = samples / "msinsight/server/src/test/test_data/full_db/msprof_0.db"
    if not db.exists():
        pytest.skip("msprof_0.db sample absent")
    folder = tmp_path / "full_db"
    folder.mkdir()
    shutil.copyfile(db, folder / db.name)
    expected = ("a CANN msprof database, which is not supported (pass the ascend_pytorch_profiler_*.db, "
                "ascend_mindspore_profiler_*.db or msmonitor_*.db export)")
    with pytest.raises(ProfileError) as err:
        detect(str(folder / db.name))
    assert err.value.message == expected
    with pytest.raises(ProfileError) as err:
        detect(str(folder))
    assert err.value.message == f"holds msprof_0.db, {expected}"
    shutil.copyfile(db, folder / "analysis.db")
    with pytest.raises(ProfileError) as err:
        detect(str(folder / "analysis.db"))
    assert err.value.message.endswith("; analysis.db is not used)")


def test_directory_of_event_list_jsons_is_no_profile(tmp_path):
    """A legacy MindSpore profiler folder (ascend_timeline_display_*.json) or a CANN timeline folder holds
    JSON event lists, which are no Kineto trace: the spec's "not collected" error, not a profile of zeros
    from its one JSON, nor advice to pass one of them; a lone JSON object (a renamed Kineto trace) loads."""
    legacy = tmp_path / "profiler"
    legacy.mkdir()
    (legacy / "ascend_timeline_display_1.json").write_text('[{"name": "Conv2D", "ph": "X", "ts": 1, "dur": 2}]')
    (legacy / "op_summary_1.csv").write_text("Op Name\nConv2D\n")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(legacy))
    assert err.value.hint is None
    (legacy / "msprof_1.json").write_text("\n [ ]")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode"):
        detect(str(legacy))
    parent = tmp_path / "device_1"  # a CANN device folder with a timeline folder of such files: refused, naming
    (parent / "timeline").mkdir(parents=True)  # them as the timeline folder's refusal does (its own test below)
    (parent / "timeline" / "msprof_1.json").write_text("[]")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(parent))
    assert err.value.hint == f"it holds timeline files: {parent / 'timeline' / 'msprof_1.json'}; pass one of them"
    kineto = tmp_path / "renamed"
    kineto.mkdir()
    (kineto / "worker0.json").write_text('\ufeff {"traceEvents": []}')
    assert detect(str(kineto)).trace_path == str(kineto / "worker0.json")
    (kineto / "timeline.json").write_text("[]")  # an event list beside it does not make it ambiguous
    assert detect(str(kineto)).trace_path == str(kineto / "worker0.json")
    import gzip  # compressed files are told apart by their decompressed first bytes

    (kineto / "timeline.json").unlink()
    (kineto / "worker0.json").rename(kineto / "w.json.gz")
    (kineto / "w.json.gz").write_bytes(gzip.compress(b' {"traceEvents": []}'))
    (kineto / "events.json.gz").write_bytes(gzip.compress(b"[]"))
    assert detect(str(kineto)).trace_path == str(kineto / "w.json.gz")


def test_an_empty_json_alone_in_a_folder_is_its_trace(tmp_path):
    """A folder whose one JSON file is empty (a Kineto trace whose copy was cut off at once) leads to that file,
    whose loader names its problem, not to "not collected ... no *.pt.trace.json found" about the folder: an empty
    file may be a Kineto trace (``_kineto_object``). A mutant counting only files that start with "{" survived."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "worker0.json").write_bytes(b"")
    assert detect(str(run)).trace_path == str(run / "worker0.json")
    with pytest.raises(ProfileError) as err:
        load_profile(str(run), OPTS)
    assert (err.value.path, err.value.message) == (str(run / "worker0.json"), "empty file")


def test_legacy_timeline_folder_names_its_files(samples):
    """A CANN timeline folder does not load (reference pair 9d gives its files alone): the refusal names its
    msprof_*.json files to give instead, not one lane's (hccl_*, step_trace_*) (the message audit found no
    hint there). A MindSpore timeline_display file gives no device time (all zeros, review): no file is offered
    there, but the hint says what the folder is (a user walk found a MindSpore user told only that the data was
    "not collected by PyTorch or Mindspore mode")."""
    root = samples / "mindinsight/tests/utils/resource"
    timeline = root / "profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/device_1/timeline"
    if not timeline.is_dir():
        pytest.skip("mindinsight sample absent")
    assert sorted(p.name for p in timeline.iterdir())[:4] == ["hccl_1_0_1.json", "hccl_1_0_2.json",
                                                              "msprof_1_0_1.json", "msprof_1_0_2.json"]
    for folder, hint in ((timeline, f"it holds timeline files: {timeline / 'msprof_1_0_1.json'}, "
                                    f"{timeline / 'msprof_1_0_2.json'}; pass one of them"),
                         (root / "run_2/normal_run/profiler", "it is a MindSpore 1.x profiler folder "
                          "(framework_raw_1.csv), which this comparison does not read: profile with MindSpore 2.x, "
                          "whose Profiler writes an *_ascend_ms folder, and pass that"),
                         # the summary folder MindInsight is pointed at, holding profiler/: the hint was missing there
                         (root / "run_2/normal_run", "it holds a MindSpore 1.x profiler folder "
                          "(profiler/framework_raw_1.csv), which this comparison does not read: profile with MindSpore "
                          "2.x, whose Profiler writes an *_ascend_ms folder, and pass that")):
        with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore") as err:
            detect(str(folder))
        assert err.value.hint == hint
    assert detect(str(timeline / "msprof_1_0_1.json")).trace_path == str(timeline / "msprof_1_0_1.json")


def test_a_profiler_folder_without_the_1x_tables_gives_no_mindspore_hint(samples, tmp_path):
    """The MindSpore 1.x hint goes by the tables only such a folder holds (framework_raw_N, step_trace_raw_N,
    output_op_compute_time_N): a summary folder whose profiler/ holds the rest of run_2's files (its timelines,
    minddata and AI Core files) but none of those is refused with the general line alone, itself or its
    profiler/: the hint names one of those tables as its evidence, and here there is none to name."""
    from msprof_compare.loaders.paths import MINDSPORE_LEGACY

    source = samples / "mindinsight/tests/utils/resource/run_2/normal_run/profiler"
    if not source.is_dir():
        pytest.skip("mindinsight sample absent")
    profiler = tmp_path / "summary" / "profiler"
    profiler.mkdir(parents=True)
    kept = [p for p in source.iterdir() if p.is_file() and not MINDSPORE_LEGACY.match(p.name)]
    assert len(kept) == 17 and "ascend_timeline_display_1.json" in {p.name for p in kept}
    for p in kept:
        shutil.copy(p, profiler)
    for folder in (profiler.parent, profiler):
        with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore") as err:
            detect(str(folder))
        assert err.value.hint is None, err.value.hint


def test_mindspore_1x_file_given_alone_is_not_sent_to_its_folder(samples, tmp_path):
    """A file of a MindSpore 1.x profiler folder passed as the input (its side JSON objects, its .csv / .txt
    tables) was told "pass the trace, or the profiling directory it belongs to" or "expected a ... profiling
    directory": the folder it belongs to is refused in its turn as MindSpore 1.x data, so the advice failed.
    The refusal now says what the file is and what to record instead, as the folder's does. Files of the real
    run_1 folder (it holds framework_raw_1.csv, one only such a folder holds); the same JSON object in a folder
    without such a file keeps the general hint."""
    from msprof_compare.cli import compare_main

    legacy = samples / "mindinsight/tests/utils/resource/run_1/normal_run/profiler"
    if not legacy.is_dir():
        pytest.skip("legacy MindSpore profiler folder absent")
    assert (legacy / "framework_raw_1.csv").is_file()
    advice = ("which this comparison does not read: profile with MindSpore 2.x, whose Profiler writes an *_ascend_ms "
              "folder, and pass that")
    beside = f"a file of a MindSpore 1.x profiler folder (framework_raw_1.csv beside it), {advice}"
    for name, message, hint in (
            ("timeline_summary_1.json", "not a trace: a JSON object without traceEvents", beside),
            ("step_trace_point_info.json", "not a trace: a JSON object without traceEvents", beside),
            ("flops_1.txt", "Invalid profiling path suffix: flops_1.txt", beside),
            ("framework_raw_1.csv", "Invalid profiling path suffix: framework_raw_1.csv",
             f"a MindSpore 1.x profiler file, {advice}")):
        with pytest.raises(ProfileError) as err:
            load_profile(str(legacy / name), OPTS)
        assert (err.value.message, err.value.hint) == (message, hint), name
    alone = tmp_path / "timeline_summary_1.json"
    shutil.copyfile(legacy / "timeline_summary_1.json", alone)
    with pytest.raises(ProfileError) as err:
        load_profile(str(alone), OPTS)
    assert err.value.hint == "a profiler side file? pass the trace, or the profiling directory it belongs to"
    # the CLI's one line, exit 1
    with pytest.raises(SystemExit) as done:
        compare_main(["-bp", str(legacy / "timeline_summary_1.json"), "-d", str(alone), "-o", str(tmp_path / "o")])
    assert done.value.code == 1


def test_cann_prof_folder_names_its_timeline_files(samples, monkeypatch):
    """A CANN run's PROF_* folder, and its device_N folder, hold the msprof_*.json timeline files a level or two
    down (device_N/timeline/): the refusal names them, as it does for the timeline folder itself (the sweep found
    both read as "the data is not parsed", with no hint), each by a path that works from where the command ran:
    the folder as typed, then the file's path from it (their path from the folder alone was not found pasted
    back). Tried from the samples folder with a relative input, and each path named detected as given."""
    prof = samples / "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA"
    if not prof.is_dir():
        pytest.skip("mindinsight sample absent")
    assert sorted(p.name for p in prof.iterdir() if p.is_dir()) == ["device_1"]
    monkeypatch.chdir(prof.parent)  # a relative input, as a user types it from the folder above
    timeline = os.path.join(prof.name, "device_1", "timeline")
    for folder in (prof.name, os.path.join(prof.name, "device_1"), "./" + prof.name):
        with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore") as err:
            detect(folder)
        typed = os.path.join("." if folder.startswith("./") else "", timeline)
        listed = [os.path.join(typed, f"msprof_1_0_{i}.json") for i in (1, 2)]
        assert err.value.hint == f"it holds timeline files: {listed[0]}, {listed[1]}; pass one of them"
        for path in listed:  # each file named compares given alone, from where the command ran
            assert detect(path).trace_path == os.path.abspath(path)


def test_parent_of_rank_directories_names_them(tmp_path):
    """A multi-rank run's parent directory: the original's message, plus the ranks to choose from."""
    for rank in (1, 0):
        shutil.copytree(PT, tmp_path / f"rank{rank}_ascend_pt")
    (tmp_path / "logs").mkdir()
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore") as err:
        detect(str(tmp_path))
    assert err.value.hint == "it holds profiling directories: rank0_ascend_pt, rank1_ascend_pt; pass one of them, " \
                             "one rank per side"
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path / "logs"))
    assert err.value.hint is None
    (tmp_path / "logs" / "run1").mkdir()  # a TensorBoard log directory: runs holding Kineto traces
    (tmp_path / "logs" / "run1" / "worker0.pt.trace.json").write_text('{"traceEvents": []}')
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path / "logs"))
    assert err.value.hint == "it holds profiling directories: run1; pass one of them, one rank per side"
    (tmp_path / "logs" / "evil\nrank_ascend_pt").mkdir()  # names listed in a message are escaped: one line
    (tmp_path / "logs" / "a\n.pt.trace.json").write_text("{}")
    (tmp_path / "logs" / "b.pt.trace.json").write_text("{}")
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path / "logs"))
    assert "\n" not in str(err.value) and "a\\n.pt.trace.json" in str(err.value)
    (tmp_path / "logs" / "b.pt.trace.json").unlink()
    (tmp_path / "logs" / "a\n.pt.trace.json").unlink()
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path / "logs"))
    assert "\n" not in str(err.value) and "evil\\nrank_ascend_pt" in err.value.hint


def test_parent_of_many_rank_directories_lists_four(tmp_path):
    """The hint lists up to four profiling directories; a fifth makes it "..." and the count: the excerpt copied
    as ranks 0-3 of a run, then as rank 4 too."""
    for rank in range(4):
        shutil.copytree(PT, tmp_path / f"rank{rank}_ascend_pt")
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path))
    assert err.value.hint == ("it holds profiling directories: rank0_ascend_pt, rank1_ascend_pt, rank2_ascend_pt, "
                              "rank3_ascend_pt; pass one of them, one rank per side")
    shutil.copytree(PT, tmp_path / "rank4_ascend_pt")
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path))
    assert err.value.hint == ("it holds profiling directories: rank0_ascend_pt, rank1_ascend_pt, rank2_ascend_pt, "
                              "rank3_ascend_pt, ... (5 in all); pass one of them, one rank per side")


def test_timeline_folder_with_many_msprof_files_lists_four(samples, tmp_path, monkeypatch):
    """The timeline hint lists up to four msprof_*.json files; a fifth makes it "..." and the count: the
    mindinsight CANN timeline folder (msprof_1_0_1.json, msprof_1_0_2.json) with copies of those two as
    msprof_1_0_3.json and msprof_1_0_4.json, then of the first as msprof_1_0_5.json."""
    src = (samples / "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/"
                     "device_1/timeline")
    if not src.is_dir():
        pytest.skip("mindinsight sample absent")
    timeline = tmp_path / "timeline"
    shutil.copytree(src, timeline)
    shutil.copy(src / "msprof_1_0_1.json", timeline / "msprof_1_0_3.json")
    shutil.copy(src / "msprof_1_0_2.json", timeline / "msprof_1_0_4.json")
    monkeypatch.chdir(tmp_path)  # given as "timeline": the files are named from there, as typed
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore") as err:
        detect("timeline")
    named = [os.path.join("timeline", f"msprof_1_0_{i}.json") for i in (1, 2, 3, 4)]
    assert err.value.hint == f"it holds timeline files: {', '.join(named)}; pass one of them"
    shutil.copy(src / "msprof_1_0_1.json", timeline / "msprof_1_0_5.json")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore") as err:
        detect("timeline")
    assert err.value.hint == f"it holds timeline files: {', '.join(named)}, ... (5 in all); pass one of them"


def test_profiling_only_skips_unneeded_csvs():
    p = load_profile(str(PT), OPTS)
    assert p.operator_memory is None and p.op_statistic is None
    assert not any("operator_memory" in w for w in p.warnings)


def test_mindspore_layout():
    for path, level in ((MS, "profiling"), (MS / "ASCEND_PROFILER_OUTPUT", "ascend_output"),
                        (MS / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", "file")):
        assert detect(str(path)).level == level
    p = load_profile(str(MS), OPTS)
    assert p.level == "profiling" and p.kind == "NPU"
    assert len(p.ops) == 0 and len(p.flows[p.flows["cat"] == "async_npu"]) == 0
    assert len(p.kernels) > 0 and len(p.overlap) > 0 and len(p.comm) > 0
    assert "Step Id" in p.kernel_details.columns and (p.kernel_details["Step Id"] == 50).all()
    assert any(w.endswith(f": The file memory_record.csv does not exist. ({LOST})") for w in p.warnings)
    assert any(": The file communication.json does not exist. (no RDMA or SDMA Bandwidth" in w for w in p.warnings)


# --------------------------------------------------------------------------- errors


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "x_ascend_pt"
    shutil.copytree(PT, dst)
    return dst


def test_directory_without_output_or_trace(tmp_path):
    (tmp_path / "empty_ascend_pt").mkdir()
    with pytest.raises(ProfileError) as exc:
        load_profile(str(tmp_path / "empty_ascend_pt"), OPTS)
    assert "empty_ascend_pt" in str(exc.value)


def test_gzip_trace_view_in_a_directory_loads_like_the_plain_one(tmp_path):
    """A trace_view.json gzipped in place (to save space) is read like a .json.gz trace (spec README item 5),
    with the directory's side files; the plain file wins when both are there."""
    import gzip

    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    gz = f.with_name("trace_view.json.gz")
    gz.write_bytes(gzip.compress(f.read_bytes()))
    assert detect(str(d)).trace_path == str(f)
    f.unlink()
    assert detect(str(d)).trace_path == str(gz)
    plain, packed = load_profile(str(PT), ALL), load_profile(str(d), ALL)
    assert packed.level == "profiling" and packed.kernel_details is not None and packed.memory_record is not None
    for name in ("ops", "kernels", "flows", "comm", "overlap", "kernel_details"):
        a, b = getattr(plain, name), getattr(packed, name)
        assert len(a) == len(b) > 0, name
        assert a.reset_index(drop=True).equals(b.reset_index(drop=True)), name


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("kind", ["broken link", "directory"])
def test_trace_view_that_is_no_file_is_named(tmp_path, kind, gz):
    """A trace_view.json (or .json.gz) that is there but cannot be read is named as such, not reported
    as missing."""
    d = _copy(tmp_path)
    (d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    f = d / "ASCEND_PROFILER_OUTPUT" / ("trace_view.json.gz" if gz else "trace_view.json")
    if kind == "broken link":
        f.symlink_to(tmp_path / "gone.json")
    else:
        f.mkdir()
    with pytest.raises(ProfileError) as exc:
        detect(str(d), force=True)
    text = str(exc.value)
    assert str(f) in text and ("broken symbolic link" if kind == "broken link" else "not a file") in text, text


def test_dangling_trace_view_beside_a_kineto_trace_loads_the_trace(tmp_path):
    """A folder of a Kineto trace that also holds a dangling trace_view.json link loads the Kineto trace,
    as before the broken-link message existed; the link is named only when nothing else loads."""
    folder = tmp_path / "run"
    folder.mkdir()
    kineto = Path(__file__).resolve().parent / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
    shutil.copyfile(kineto, folder / "x.pt.trace.json")
    (folder / "trace_view.json").symlink_to(tmp_path / "gone.json")
    layout = detect(str(folder), force=True)
    assert layout.trace_path == str(folder / "x.pt.trace.json")
    (folder / "x.pt.trace.json").unlink()
    with pytest.raises(ProfileError, match="trace_view.json: is a broken symbolic link"):
        detect(str(folder), force=True)


@pytest.mark.parametrize("where", ["profiling", "output"])
@pytest.mark.parametrize("mode", ["read", "search"])
def test_directory_without_access_is_said_with_force_too(tmp_path, monkeypatch, where, mode):
    """A profiling directory (or its ASCEND_PROFILER_OUTPUT) the user cannot list or look into is named with
    the missing permission, with --force too; it read as data "not collected" (every file in it missing)."""
    import os

    d = _copy(tmp_path)
    target = d if where == "profiling" else d / "ASCEND_PROFILER_OUTPUT"
    denied = (str(target), os.R_OK if mode == "read" else os.X_OK)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: (os.fspath(p), m) != denied and real(p, m, **kw))
    # what the file system then does for a user (root passes): no listing, or nothing inside can be looked at
    real_listdir, real_stat = os.listdir, os.stat
    inside = str(target) + os.sep

    def listdir(p="."):
        if mode == "read" and os.fspath(p) == str(target):
            raise PermissionError(13, "Permission denied", os.fspath(p))
        return real_listdir(p)

    def stat(p, *a, **kw):
        if mode == "search" and isinstance(p, (str, os.PathLike)) and os.fspath(p).startswith(inside):
            raise PermissionError(13, "Permission denied", os.fspath(p))
        return real_stat(p, *a, **kw)

    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "stat", stat)
    for force in (False, True):
        with pytest.raises(ProfileError) as exc:
            detect(str(d), force=force)
        text = str(exc.value)
        assert text.startswith(str(target)) and ("not readable" if mode == "read" else "not executable") in text
        assert ("chmod u+r" if mode == "read" else "chmod u+x") in text and "not collected" not in text


def test_kernel_details_missing_column(tmp_path):
    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = f.read_text().splitlines()
    f.write_text("\n".join(ln.replace("Start Time(us)", "Begin(us)") for ln in lines) + "\n")
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert "kernel_details.csv" in str(exc.value) and "Start Time(us)" in str(exc.value)


def test_kernel_details_early_start_time_header(tmp_path):
    """torch_npu's first kernel_details.csv (2023, Ascend/pytorch op_summary_bean.py) named the start column
    ``Start Time`` (CANN's ``Task Start Time``, us; ``Start Time(us)`` since): read as that column (it refused every
    run of such a directory). The excerpt's file with only that header renamed loads the same kernels, the
    same exact start times."""
    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    header, rest = f.read_text().split("\n", 1)
    assert header.count("Start Time(us)") == 1
    f.write_text(header.replace("Start Time(us)", "Start Time") + "\n" + rest)
    old, new = load_profile(str(PT), OPTS).kernel_details, load_profile(str(d), OPTS).kernel_details
    assert new["ts"].tolist() == old["ts"].tolist() and (new["ts"] > 0).all()
    assert new.equals(old)


def test_trace_view_with_a_raw_control_character(tmp_path):
    """A raw control character inside a name of trace_view.json (strict JSON refuses it; PyTorch 2.3-2.4 wrote
    such names) is read as a blank, named in one warning, as in Kineto traces: the device tables are the
    excerpt's."""
    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    data = f.read_bytes()
    at = data.index(b'"name": "') + len(b'"name": "') + 1
    f.write_bytes(data[:at] + b"\x02" + data[at:])
    got, want = load_profile(str(d), OPTS), load_profile(str(PT), OPTS)
    assert f"{f}: raw control characters in the JSON text (PyTorch 2.3-2.4 writes some in Python function " \
        "names) are read as blanks" in got.warnings
    for table in ("kernels", "overlap", "comm"):
        assert getattr(got, table).equals(getattr(want, table)), table


@pytest.mark.parametrize("cpu_pid", ["CPU functions", "CPU Functions"])
def test_legacy_autograd_trace_is_no_npu_trace(tmp_path, cpu_pid):
    """torch.autograd.profiler's own Chrome export (``export_chrome_trace`` without Kineto; pytorch/pytorch#33961's
    shape: an event list without process metadata or categories, pids "CPU functions" / "CUDA functions";
    libtorch's C++ RecordProfile writes "CPU Functions") is a top-level list, which read as an NPU trace gave an
    all-zero NPU row and exit 0: it is refused, saying what it is."""
    f = tmp_path / "trace.json"
    f.write_text(json.dumps([
        {"name": "aten::add", "ph": "X", "ts": 101.524, "dur": 134.49, "tid": 1, "pid": cpu_pid, "args": {}},
        {"name": "aten::add", "ph": "s", "ts": 101.524, "tid": 1, "pid": cpu_pid, "id": 0,
         "cat": "cpu_to_cuda", "args": {}},
        {"name": "add_kernel", "ph": "f", "ts": 102.957, "tid": 0, "pid": "CUDA functions", "id": 0,
         "cat": "cpu_to_cuda", "args": {}},
        {"name": "add_kernel", "ph": "X", "ts": 102.957, "dur": 134.176, "tid": 0, "pid": "CUDA functions",
         "args": {}}]))
    with pytest.raises(ProfileError) as exc:
        load_profile(str(f), OPTS)
    assert exc.value.message == ('a legacy torch.autograd.profiler trace (pid "CPU functions"), not an Ascend '
                                 "trace_view.json or a Kineto trace")
    assert exc.value.hint == "record the job with torch.profiler.profile and pass its *.pt.trace.json"


def test_truncated_trace(tmp_path):
    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    f.write_bytes(f.read_bytes()[:50000])
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert "trace_view.json" in str(exc.value) and "truncated" in str(exc.value)


def test_list_of_non_events(tmp_path):
    """A JSON list of objects that are not trace events (tracelens' execution_details.json, written beside its
    traces) says so, instead of calling it a trace without duration events; a list of events without any
    "X" keeps that message."""
    f = tmp_path / "execution_details.json"
    f.write_text('[\n  {"file": "bs_32_rank0.json.gz", "batch_size": 32, "mode": "FULL"}\n]\n')
    with pytest.raises(ProfileError, match=r"not a trace: none of the list's 1 entries is a trace event"):
        load_profile(str(f), OPTS)
    f.write_text('[{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Python"}}]')
    with pytest.raises(ProfileError, match=r"no duration \('X'\) events in the trace"):
        load_profile(str(f), OPTS)


@pytest.mark.parametrize("name", ["kernel_details.csv", "memory_record.csv"])
def test_empty_csv(tmp_path, name):
    d = _copy(tmp_path)
    (d / "ASCEND_PROFILER_OUTPUT" / name).write_bytes(b"")
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert name in str(exc.value) and "empty" in str(exc.value)


@pytest.mark.parametrize("name", ["kernel_details.csv", "memory_record.csv"])
def test_csv_with_a_header_and_no_rows(tmp_path, name):
    """A CSV cut after its header (the excerpt's own header line) has no data rows: an error naming the file."""
    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / name
    f.write_bytes(f.read_bytes().split(b"\n", 1)[0] + b"\n")
    with pytest.raises(ProfileError, match="no data rows") as exc:
        load_profile(str(d), OPTS)
    assert name in str(exc.value)


def test_malformed_communication_json(tmp_path):
    d = _copy(tmp_path)
    (d / "ASCEND_PROFILER_OUTPUT" / "communication.json").write_text('{"step50": {')
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert "communication.json" in str(exc.value)


def test_trace_view_with_object_top_level(tmp_path):
    d = _copy(tmp_path)
    (d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text('{"traceEvents": []}')
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert "trace_view.json" in str(exc.value)


def test_bad_timestamp(tmp_path):
    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    ev = json.loads(f.read_text())
    next(e for e in ev if e.get("ph") == "X")["ts"] = "12x.5"
    f.write_text(json.dumps(ev))
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert "trace_view.json" in str(exc.value)


# --------------------------------------------------------------------------- exact times


def test_epoch_times_written_as_numbers_stay_exact(tmp_path):
    """A trace_view.json whose "ts" are JSON numbers instead of strings (epoch us, ~1.7e15: float64
    holds them only to 0.25 us) loads to the same nanoseconds as the string form."""
    import re

    d = _copy(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    original = f.read_text()
    texts = re.findall(r'"ts": "([0-9.]+)"', original)
    assert len(texts) > 500
    assert sum(round(float(t) * 1000) != ns(t) for t in texts) > 100  # through a float, times do move
    f.write_text(re.sub(r'"ts": "([0-9.]+)"', r'"ts": \1', original))
    a, b = load_profile(str(PT), ALL), load_profile(str(d), ALL)
    for table in ("ops", "kernels", "comm", "flows", "overlap", "queue", "python_functions"):
        x, y = getattr(a, table), getattr(b, table)
        assert len(x) == len(y) and (len(x) > 0 or table == "python_functions"), table  # the excerpt has none
        for col in [c for c in x.columns if c in ("ts", "dur", "s_ts", "f_ts")]:
            assert np.array_equal(x[col].to_numpy(), y[col].to_numpy()), (table, col)




@given(st.lists(st.tuples(st.integers(0, 8 * 10**15), st.integers(0, 10**7), st.integers(1, 7),
                          st.sampled_from(["", " ", "\t"])), max_size=50))
def test_decimal_us_to_ns_is_exact(items):
    texts, want = [], []
    for whole, frac, digits, pad in items:
        frac_text = str(frac).zfill(digits)[:digits]
        text = f"{whole}.{frac_text}"
        texts.append(text + pad)
        want.append(ns(text))
    assert decimal_us_to_ns(texts).tolist() == want


@given(st.integers(1, 16), st.integers(1, 6), st.lists(st.integers(0, 10**22), min_size=1, max_size=60),
       st.lists(st.sampled_from([0, 7, "7", "-1.5", " 2.25", "12.3456"]), max_size=5))
def test_decimal_us_to_ns_uniform_layout_is_exact(whole_digits, frac_digits, numbers, others):
    """The one-layout fast path (Ascend timestamps: same width, dot in one column), with a few
    values of other shapes mixed in that must take the general path."""
    texts = []
    for x in numbers:
        digits = str(x).zfill(whole_digits + frac_digits)[-(whole_digits + frac_digits):]
        texts.append(digits[:whole_digits] + "." + digits[whole_digits:])
    values = texts + others
    want = [ns(str(v)) for v in values]
    if any(not -(2**63) <= w < 2**63 for w in want):
        with pytest.raises(ProfileError):
            decimal_us_to_ns(values, path="t.json")
    else:
        assert decimal_us_to_ns(values).tolist() == want


@given(st.lists(st.one_of(st.just(""), st.just(" "), st.just("N/A"),
                          st.tuples(st.integers(0, 10**15), st.integers(0, 10**6), st.integers(0, 6))),
                max_size=60))
def test_lenient_us_to_ns_of_a_column_with_unset_cells(cells):
    """A CSV time column (``_us_times``): decimals of several layouts (0-6 decimals, so each takes the layout-by-
    layout path, or the one-layout path when one dominates) among empty, blank and N/A cells; each decimal reads
    exactly (half to even), each other cell as unread (0)."""
    texts, want = [], []
    for c in cells:
        if isinstance(c, str):
            texts.append(c)
            want.append(None)
        else:
            whole, frac, digits = c
            text = f"{whole}.{str(frac).zfill(digits)[:digits]}" if digits else str(whole)
            texts.append(text)
            want.append(ns(text))
    got, read = lenient_us_to_ns(texts)
    assert read.tolist() == [w is not None for w in want]
    assert got.tolist() == [0 if w is None else w for w in want]


@given(st.lists(st.tuples(st.integers(10**15, 2 * 10**15 - 1), st.integers(0, 999)), min_size=1, max_size=80),
       st.lists(st.booleans(), max_size=80), st.sampled_from(["", "N/A"]))
def test_lenient_us_to_ns_of_one_layout_among_empty_cells(times, unset, other):
    """operator_memory.csv's Release Time(us): epoch times of one layout among empty cells (any share of them),
    sometimes an N/A too. The times are parsed apart from the empty cells (``numparse._parse_decimal``): each reads
    as Decimal does, every other cell unread (0)."""
    texts = [f"{w}.{f:03d}" for w, f in times]
    for i, u in enumerate(unset[:len(texts)]):
        if u:
            texts[i] = ""
    texts[len(texts) // 2] = other if len(texts) > 2 else texts[len(texts) // 2]
    got, read = lenient_us_to_ns(texts)
    want = [ns(t) if t not in ("", "N/A") else None for t in texts]
    assert read.tolist() == [w is not None for w in want]
    assert got.tolist() == [0 if w is None else w for w in want]


@pytest.mark.parametrize("decimals", [3, 6])
def test_uniform_layout_reads_alike_for_few_and_many_texts(decimals):
    """``numparse.parse_uniform`` weighs the digits of a few texts in one product over an int64 copy and those of
    many position by position: 5,000 random timestamps of one layout (seeded; 3 decimals, or 6 with a tenth of
    them a half-ns tie) read as Decimal does, whole and in columns of 100."""
    rng = np.random.default_rng(decimals)
    whole = rng.integers(10**15, 2 * 10**15, 5000).tolist()
    frac = rng.integers(0, 10**decimals, 5000).tolist()
    if decimals > 3:
        frac[::10] = [f // 1000 * 1000 + 500 for f in frac[::10]]
    texts = [f"{w}.{f:0{decimals}d}" for w, f in zip(whole, frac, strict=True)]
    want = [ns(t) for t in texts]
    assert decimal_us_to_ns(texts).tolist() == want
    assert np.concatenate([decimal_us_to_ns(texts[i:i + 100]) for i in range(0, 5000, 100)]).tolist() == want


def test_decimal_us_to_ns_edge_cases():
    got = decimal_us_to_ns(["-3.5", "+7.12345", "12", "1.", ".5", "0.0005", "0.0004", 5, 1.25, "1e3", "0.0015",
                            "0.00050001", "-0.0015", "5e-4"])
    # half-ns ties to the even ns (numparse.ROUNDING); just above a tie rounds up
    assert got.tolist() == [-3500, 7123, 12000, 1000, 500, 0, 0, 5000, 1250, 1000000, 2, 1, -2, 0]
    got, read = lenient_us_to_ns(["N/A", "", "abc", "-0.001"])
    assert got.tolist() == [0, 0, 0, -1] and read.tolist() == [False, False, False, True]
    with pytest.raises(ProfileError):
        decimal_us_to_ns(["abc"], path="f.json")


def test_decimal_us_to_ns_texts_of_other_lengths_that_join_to_one_width():
    """The texts of a column are joined into one byte matrix only when each is as long as the first: texts of two
    lengths whose total fits the matrix ("1.2" + "12.34" is two rows of four bytes) would be cut mid-number
    and read as other digits ("1.21", "2.34")."""
    assert decimal_us_to_ns(["1.2", "12.34"]).tolist() == [1200, 12340]
    assert decimal_us_to_ns(["12.34", "1.2", "5.678"]).tolist() == [12340, 1200, 5678]
    # a line break inside a text: the join's breaks no longer mark where each text ends (the blank is stripped)
    got, read = lenient_us_to_ns(["1.2\n", "3.4", "5.6"])
    assert got.tolist() == [1200, 3400, 5600] and read.all()


def test_tied_rows_are_those_whose_start_another_shares():
    """``_tied`` (the device-task and host-event repeat checks' rows) gives every row whose value another row holds,
    each tie's first row too, in row order: the torch excerpt's complete-event starts (tests/data/npu: 485 events,
    81 of them sharing a start, counted here by a Counter of the texts), their reversal, and the edge cases."""
    from collections import Counter

    from msprof_compare.loaders.ascend_text import _tied

    trace = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    starts = [e["ts"] for e in json.loads(trace.read_text()) if e.get("ph") == "X"]
    held = Counter(starts)
    want = [i for i, t in enumerate(starts) if held[t] > 1]
    assert (len(starts), len(want)) == (485, 81)
    ns = np.array([int(t.replace(".", "")) for t in starts], dtype=np.int64)  # "...005.800" us: exact ns
    assert _tied(ns).tolist() == want
    assert _tied(ns[::-1]).tolist() == sorted(len(starts) - 1 - i for i in want)
    empty = np.zeros(0, dtype=np.int64)
    assert _tied(empty).tolist() == [] and _tied(ns[:1]).tolist() == []
    assert _tied(np.array([7, 7, 7], dtype=np.int64)).tolist() == [0, 1, 2]


def test_phase_codes_of_unusual_phases():
    """Phases are coded by code point when each is one character (one outside ASCII codes as "other"); an empty
    or longer phase makes every phase take the per-event lookup, where it codes as "other" (``_phase_codes``)."""
    from types import SimpleNamespace

    from msprof_compare.loaders.ascend_text import PH_C, PH_F, PH_M, PH_OTHER, PH_S, PH_X, _phase_codes

    def codes(phases):
        return _phase_codes([SimpleNamespace(ph=p) for p in phases]).tolist()

    assert codes(["X", "M", "C", "s", "f", "B", "i"]) == [PH_X, PH_M, PH_C, PH_S, PH_F, PH_OTHER, PH_OTHER]
    assert codes(["", "XX"]) == codes(["XX", ""]) == [PH_OTHER, PH_OTHER]  # as long as two one-letter phases
    assert codes(["X", ""]) == [PH_X, PH_OTHER]
    assert codes(["\u00e9", "X"]) == [PH_OTHER, PH_X]
    # code points at and beyond the table's end, NUL and the letters' other case are no phase either
    assert codes(["\x7f", "\x80", "\U0010ffff", "\x00", "x", "m", "c", "S", "F", "X"]) == [PH_OTHER] * 9 + [PH_X]
    assert codes([]) == []


@pytest.mark.parametrize("whole", [True, False], ids=["read-once", "streamed"])
def test_kernel_times_with_exponent_or_out_of_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    whole: bool) -> None:
    """A time written with an exponent is read exactly; one whose ns overflow int64 (or inf) is an
    error naming the file, not a kernel that silently counts as 0 us. The same whether the CSV is small
    enough to be read into memory once or is probed at its ends and streamed by pandas."""
    from msprof_compare.loaders import ascend_text
    from msprof_compare.loaders.ascend_text import read_kernel_details

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)

    f = tmp_path / "kernel_details.csv"
    head = "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
    f.write_text(head + "50,a,Add,AI_CORE,1736408883732241.5\t,1.5e1\n50,b,Mul,AI_CORE,1736408883732300\t,2.25\n")
    kd = read_kernel_details(str(f))
    assert kd["dur"].tolist() == [15_000, 2_250]
    assert kd["ts"].tolist() == [1736408883732241500, 1736408883732300000]
    for bad in ("1e300", "inf", "-1e20"):
        f.write_text(head + f"50,a,Add,AI_CORE,1736408883732241.5\t,{bad}\n")
        with pytest.raises(ProfileError, match=r"kernel_details.csv: Duration\(us\) value .* not a usable time"):
            read_kernel_details(str(f))
    f.write_text(head + "50,a,Add,AI_CORE,1736408883732241.5\t,1.5\n50,b,M")
    with pytest.raises(ProfileError, match="truncated: the last row has 3 of 6 fields"):
        read_kernel_details(str(f))
    # complete files without a final line break load, also when the last row quotes a line break
    f.write_text(head + '50,a,Add,AI_CORE,1736408883732241.5\t,1.5\n50,"b\nc",Mul,AI_CORE,1736408883732300,2')
    assert read_kernel_details(str(f))["Name"].tolist() == ["a", "b\nc"]
    # text that is no number stays missing (junk counted in a warning), not an error
    for junk, warned in (("null", True), ("NAN", False)):
        f.write_text(head + f"50,a,Add,AI_CORE,1736408883732241.5\t,{junk}\n")
        warnings: list[str] = []
        assert read_kernel_details(str(f), warnings)["dur"].tolist() == [0]
        assert any("not numbers" in w for w in warnings) == warned


def test_csv_header_blanks_and_pmu_junk(tmp_path: Path) -> None:
    """Header names padded with blanks are matched stripped (not refused as a missing column); a PMU cell
    that is no number is NaN, counted in the profile's warnings."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "kernel_details.csv"
    f.write_text(" Step Id, Name ,Type,Accelerator Core,Start Time(us), Duration(us),aiv_vec_time(us)\n"
                 "50,a,Add,AI_CORE,1736408883732241.5\t,1.5,junk\n50,b,Mul,AI_CORE,1736408883732300\t,2.25,0.75\n")
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["Name"].tolist() == ["a", "b"] and kd["Step Id"].tolist() == [50, 50]
    assert kd["dur"].tolist() == [1500, 2250]
    assert np.isnan(kd["aiv_vec_time(us)"].iloc[0]) and kd["aiv_vec_time(us)"].iloc[1] == 0.75
    assert warnings == [f"{f}: 1 value(s) that are not numbers in column(s) aiv_vec_time(us); read as missing"]


def test_csv_missing_marks_padded_with_blanks(tmp_path: Path) -> None:
    """A float column whose "no number" marks carry blanks (" N/A ", which pandas' exact NA match misses, so the
    typed read fails): read again as text, the marks are missing values, not junk, and nothing is warned."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "kernel_details.csv"
    f.write_text("Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),aiv_vec_time(us)\n"
                 "50,a,Add,AI_CORE,1736408883732241.5\t,1.5, N/A \n50,b,Mul,AI_CORE,1736408883732300\t,2.25,0.75\n")
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert np.isnan(kd["aiv_vec_time(us)"].iloc[0]) and kd["aiv_vec_time(us)"].iloc[1] == 0.75
    assert kd["dur"].tolist() == [1500, 2250] and warnings == []


def test_kernel_details_step_ids_that_are_not_whole_numbers(tmp_path: Path) -> None:
    """A Step Id of 50.7 was cut to 50 (its kernels joined step 50's KernelCompare) and text read as no step
    silently: both now belong to no step (-1), counted in one warning; N/A and "" stay silent."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "kernel_details.csv"
    rows = [("50", "a"), ("50.7", "b"), ("N/A", "c"), ("step", "d"), ("", "e"), ("51.0", "f")]
    f.write_text("Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n" + "".join(
        f"{s},{n},Add,AI_CORE,1736408883732241.5\t,1.5\n" for s, n in rows))
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["Step Id"].tolist() == [50, -1, -1, -1, -1, 51]
    assert warnings == [f"{f}: 2 Step Id value(s) are not whole numbers; those rows belong to no step"]


def test_kernel_details_step_id_and_step_ID_that_disagree(tmp_path: Path) -> None:
    """Both spellings of the step column (a file joined from a torch_npu and a MindSpore export?): Step Id is read,
    as before, and the rows whose Step ID says otherwise are counted (they were read silently). Agreeing copies,
    "50" beside "50.0", are silent."""
    import csv
    import io

    from msprof_compare.loaders import ascend_text

    side = tmp_path / "side"
    shutil.copytree(PT, side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(kd.read_text(encoding="utf-8"), newline="")))
    assert {r[0] for r in rows[1:]} == {"50"} and len(rows) == 21
    other = ["51", "N/A"] + ["50.0"] * 18  # rows 0 and 1 disagree; the rest read 50
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([rows[0] + ["Step ID"]] + [
        r + [o] for r, o in zip(rows[1:], other, strict=True)])
    kd.write_text(out.getvalue(), encoding="utf-8", newline="")
    warnings: list[str] = []
    got = ascend_text.read_kernel_details(str(kd), warnings)
    assert set(got["Step Id"].tolist()) == {50}
    assert warnings == [f"{kd}: columns Step Id and Step ID disagree in 2 row(s); Step Id is read (those rows' step "
                        "is its value)"]
    other[:2] = ["50", "50"]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([rows[0] + ["Step ID"]] + [
        r + [o] for r, o in zip(rows[1:], other, strict=True)])
    kd.write_text(out.getvalue(), encoding="utf-8", newline="")
    warnings = []
    ascend_text.read_kernel_details(str(kd), warnings)
    assert warnings == []


def test_kernel_details_pmu_times_and_starts_that_are_no_reading(tmp_path: Path) -> None:
    """Session 60's fuzz: a PMU time below 0 or over a week is no counter reading: read as 0, counted per file
    (-5 us of aic_mac_time took 5 us off an MC2 kernel's computing time, 1e30 us wrapped its ns to -9.2e12 ms);
    a Start Time of 0 or before is no start an export writes: kept as a time (-1 ns is one,
    ``test_start_time_of_minus_one_ns_is_a_time_not_junk``), now counted. A week itself is a reading."""
    from msprof_compare.loaders import ascend_text

    week_us = 7 * 86_400 * 10**6
    kd = _edited_kernel_details(tmp_path / "side", {
        (0, "aic_mac_time(us)"): "-5", (1, "aicore_time(us)"): "1e30", (2, "aiv_time(us)"): str(week_us + 1),
        (3, "aiv_vec_time(us)"): str(week_us), (4, "Start Time(us)"): "0", (5, "Start Time(us)"): "-12.5\t"})
    ref = ascend_text.read_kernel_details(str(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"), [])
    warnings: list[str] = []
    got = ascend_text.read_kernel_details(str(kd), warnings)
    assert warnings == [
        f"{kd}: 3 PMU time(s) negative or over a week (a damaged counter?) in aicore_time(us), aic_mac_time(us), "
        "aiv_time(us); read as 0, so such a kernel passes no PMU Cube test and adds no MC2 computing time by them",
        f"{kd}: 2 Start Time(us) value(s) are 0 or negative (no epoch time: a damaged cell?); kept as times, at which "
        "no event of an exported trace starts: those kernels are not matched (to a launching operator, a device "
        "task's Input Shapes or C_CORE_SQE tasks)."]
    assert got["aic_mac_time(us)"].iloc[0] == 0.0 and got["aicore_time(us)"].iloc[1] == 0.0
    assert got["aiv_time(us)"].iloc[2] == 0.0 and got["aiv_vec_time(us)"].iloc[3] == week_us
    assert got["ts"].tolist()[4:6] == [0, -12500] and got["start_read"].all()
    # every other cell as the excerpt reads it
    for col in ("aic_mac_time(us)", "aicore_time(us)", "aiv_time(us)", "aiv_vec_time(us)", "ts"):
        changed = {"aic_mac_time(us)": 0, "aicore_time(us)": 1, "aiv_time(us)": 2, "aiv_vec_time(us)": 3}.get(col)
        keep = [i for i in range(20) if i != changed and not (col == "ts" and i in (4, 5))]
        np.testing.assert_array_equal(got[col].to_numpy()[keep], ref[col].to_numpy()[keep])  # NaN == NaN


def _edited_kernel_details(side: Path, cells: dict[tuple[int, str], str], prefix: str = "") -> Path:
    """A copy of the excerpt at ``side`` whose kernel_details.csv has ``cells`` ((data row, column) -> text)
    replaced, written with ``prefix`` before its header; returns that file."""
    import csv
    import io

    shutil.copytree(PT, side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(kd.read_text(encoding="utf-8"), newline="")))
    for (i, col), text in cells.items():
        rows[1 + i][rows[0].index(col)] = text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    kd.write_text(prefix + out.getvalue(), encoding="utf-8", newline="")
    return kd


def test_kernel_details_nan_and_na_cells_are_missing_values(tmp_path: Path) -> None:
    """A float or step cell written "nan" / "NaN" (Python's str of a float NaN) or "NA" / "n/a" is a missing value
    like "N/A", not junk: no junk line counts it (a missing Duration(us) has its own line, as an empty or N/A one);
    junk beside it ("12us", "n.a.") still is, one per column. The
    excerpt's kernel_details.csv (20 rows, all Step Id 50, every Duration(us) and aiv_vec_time(us) a number but
    row 7's N/A) with cells changed (synthetic: no sample writes these)."""
    cells = {(0, "Step Id"): "nan", (1, "Step Id"): "NA",
             (2, "Duration(us)"): "NaN", (3, "Duration(us)"): "n/a", (4, "Duration(us)"): "nan",
             (5, "Duration(us)"): "12us",
             (8, "aiv_vec_time(us)"): "nan", (9, "aiv_vec_time(us)"): "NaN", (10, "aiv_vec_time(us)"): "NA",
             (11, "aiv_vec_time(us)"): "n/a", (12, "aiv_vec_time(us)"): "n.a."}
    kd = _edited_kernel_details(tmp_path / PT.name, cells)
    p = load_profile(str(tmp_path / PT.name), OPTS)
    assert [w for w in p.warnings if w.startswith(str(kd))] == [
        f"{kd}: 1 value(s) that are not numbers in column(s) aiv_vec_time(us); read as missing",
        f"{kd}: 1 Duration(us) value(s) are not numbers; read as missing.",
        # the three missing durations, counted apart from the junk: they read as 0 us, out of every category
        f"{kd}: 3 Duration(us) value(s) are empty or N/A (an export writes every kernel's duration: a damaged "
        "cell?); read as 0 us, so the time breakdown's categories count none of those kernels' time (a computing "
        "kernel's shows as Other Computing)"]
    got = p.kernel_details
    assert got["Step Id"].tolist() == [-1, -1] + [50] * 18
    assert np.isnan(got["Duration(us)"].to_numpy()[2:6]).all() and got["dur"].tolist()[2:6] == [0, 0, 0, 0]
    assert got["dur"].tolist()[:2] == [11_260, 21_980]  # rows 0 and 1: 11.26 and 21.98 us
    assert np.isnan(got["aiv_vec_time(us)"].to_numpy()[7:13]).all()  # row 7: N/A as exported
    assert got["aiv_vec_time(us)"].tolist()[13] == 0.301


def test_kernel_details_with_a_byte_order_mark(tmp_path: Path) -> None:
    """A CSV saved with a UTF-8 byte-order mark (Excel's "CSV UTF-8") reads as without it, also where a PMU cell
    holds junk, which makes pandas read the file a second time, all as text: the excerpt's kernel_details.csv
    with row 0's aiv_vec_time(us) changed to "junk" (synthetic), written with and without a BOM."""
    got = {}
    for bom in ("", "\ufeff"):
        side = tmp_path / f"bom{len(bom)}" / PT.name
        kd = _edited_kernel_details(side, {(0, "aiv_vec_time(us)"): "junk"}, bom)
        assert kd.read_bytes().startswith(bom.encode() + b"Step Id,")
        p = load_profile(str(side), OPTS)
        assert [w for w in p.warnings if w.startswith(str(kd))] == [
            f"{kd}: 1 value(s) that are not numbers in column(s) aiv_vec_time(us); read as missing"]
        got[bom] = p.kernel_details
    assert got[""].equals(got["\ufeff"])
    assert len(got[""]) == 20 and got[""]["Step Id"].tolist() == [50] * 20
    assert got[""]["Name"].tolist()[0] == "aclnnMm_MatMulCommon_MemSet"


def test_csv_rows_with_a_field_more_than_the_header(tmp_path: Path) -> None:
    """A side CSV whose data rows end with one field more than the header (a trailing comma): pandas took the
    first column for a row index and read every column from its left neighbour (Name held the Type, Start
    Time(us) the Duration(us), memory_record.csv's Total Reserved(MB) the empty Total Active(MB)) without a
    word. The field past the header is ignored, as on any later row: the excerpt's kernel_details.csv and
    memory_record.csv (its first Total Reserved(MB) made "junk", so that the all-text second read runs too)
    with "," appended to every data row (synthetic) read as the files without it."""
    loaded = []
    for comma in ("", ","):
        side = tmp_path / f"comma{len(comma)}" / PT.name
        shutil.copytree(PT, side)
        out = side / "ASCEND_PROFILER_OUTPUT"
        for name in ("kernel_details.csv", "memory_record.csv"):
            head, *rows = (out / name).read_text(encoding="utf-8").splitlines()
            if name == "memory_record.csv":
                rows[0] = ",".join(v if k != head.split(",").index("Total Reserved(MB)") else "junk"
                                   for k, v in enumerate(rows[0].split(",")))
            (out / name).write_text("\n".join([head, *(r + comma for r in rows)]) + "\n", encoding="utf-8")
        p = load_profile(str(side), OPTS)
        loaded.append((p, [w.replace(str(side), "SIDE") for w in p.warnings]))
    (want, want_warnings), (got, got_warnings) = loaded
    assert got.kernel_details.equals(want.kernel_details) and got.memory_record.equals(want.memory_record)
    assert got.kernel_details["Name"].tolist()[0] == "aclnnMm_MatMulCommon_MemSet"
    reserved = got.memory_record["Total Reserved(MB)"].tolist()
    assert np.isnan(reserved[0]) and reserved[1] == 2109.6015625
    assert got_warnings == want_warnings == [
        "SIDE/ASCEND_PROFILER_OUTPUT/memory_record.csv: 1 value(s) that are not numbers in column(s) "
        "Total Reserved(MB); read as missing"]


def test_csv_columns_taken_from_the_parser_are_those_read_csv_returns(samples: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The side CSVs' columns come from pandas' parser without the DataFrame ``read_csv`` builds over them
    (``ascend_text._csv_columns``): one read per file. Where that step is not there or takes other arguments
    (another pandas release), the public ``read_csv`` reads the file again; the tables and warnings are the same
    in all three cases: NPU pair 1's level1 kernel_details.csv, memory_record.csv, operator_memory.csv and
    op_statistic.csv as exported, and the excerpt's kernel_details.csv with one aiv_vec_time(us) cell "junk"
    (synthetic: its last column read, so pandas reads it with an empty cell as no number first, then as always,
    then a third time all as text)."""
    import pandas as pd

    from msprof_compare.loaders import ascend_text

    out = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    junk = _edited_kernel_details(tmp_path / PT.name, {(0, "aiv_vec_time(us)"): "junk"})
    files = [(ascend_text.read_kernel_details, out / "kernel_details.csv"),
             (ascend_text.read_memory_record, out / "memory_record.csv"),
             (ascend_text.read_operator_memory, out / "operator_memory.csv"),
             (ascend_text.read_op_statistic, out / "op_statistic.csv"),
             (ascend_text.read_kernel_details, junk)]
    real = pd.read_csv
    calls: list[bool] = []

    class Hidden:  # a reader without pandas' inner parser step ("hidden"), or with one of another signature
        def __init__(self, reader: Any, odd: bool) -> None:
            self.reader = reader
            if odd:
                self._engine = SimpleNamespace(read=lambda nrows, more: reader._engine.read(nrows))

        def __enter__(self) -> Hidden:
            return self

        def __exit__(self, *exc: object) -> None:
            self.reader.close()

    def read_csv(*args: Any, mode: str = "", **kwargs: Any) -> Any:
        calls.append(bool(kwargs.get("iterator")))
        got = real(*args, **kwargs)
        return Hidden(got, mode == "odd") if mode and kwargs.get("iterator") else got

    tables = {}
    for mode in ("", "hidden", "odd"):
        monkeypatch.setattr(pd, "read_csv", lambda *a, _m=mode, **k: read_csv(*a, mode=_m, **k))
        calls.clear()
        tables[mode] = [(read(str(f), w := []), w) for read, f in files]
        # the junk file: its read with an empty last cell as no number (``_read_csv``) fails, as does the usual
        # read, then one all as text (``_parse_csv``); each after the public read where the step is not used
        assert calls == ([True] * 4 + [True, True, False] if not mode
                         else [True, False] * 4 + [True, False, True, False, False])
    monkeypatch.setattr(pd, "read_csv", real)
    for fast, hidden, odd in zip(tables[""], tables["hidden"], tables["odd"], strict=True):
        for (table, warnings) in (hidden, odd):
            pd.testing.assert_frame_equal(fast[0], table, check_exact=True)
            assert [str(t) for t in fast[0].dtypes] == [str(t) for t in table.dtypes] and fast[1] == warnings
    assert len(tables[""][0][0]) == 191 and tables[""][0][0]["Name"].dtype == object
    assert tables[""][4][1] == [f"{junk}: 1 value(s) that are not numbers in column(s) aiv_vec_time(us); "
                                   "read as missing"]


def test_json_side_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    """A JSON side file saved with a UTF-8 byte-order mark reads as without it: the excerpt's
    profiler_metadata.json and profiler_info_0.json, each with a BOM, against the json module's reading."""
    from msprof_compare.loaders.ascend_text import read_json

    for name in ("profiler_metadata.json", "profiler_info_0.json"):
        f = tmp_path / name
        f.write_bytes(b"\xef\xbb\xbf" + (PT / name).read_bytes())
        assert read_json(str(f)) == json.loads((PT / name).read_text(encoding="utf-8"))


def test_csv_header_read_across_chunks_and_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A header longer than one 64 KiB read (with a BOM) is read whole; a first line without any line end
    is refused after MAX_HEADER_BYTES (a NUL-filled file took minutes: the scan was quadratic)."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "kernel_details.csv"
    extra = [f"pmu_{i:05d}" for i in range(9000)]  # ~90 KB of header
    f.write_bytes("\ufeff".encode() + ",".join(["Name", "Type", "Start Time(us)", "Duration(us)", *extra]).encode()
                  + b"\r\n" + b"a,Add,1736408883732241.5,1.5" + b",0" * len(extra) + b"\r\n")
    for data in (None, f.read_bytes()):  # streamed, or from the bytes read once
        assert ascend_text._header(str(f), data)[:4] == ["Name", "Type", "Start Time(us)", "Duration(us)"]
        assert len(ascend_text._header(str(f), data)) == 4 + len(extra)
    monkeypatch.setattr(ascend_text, "MAX_HEADER_BYTES", 1 << 16)
    f.write_bytes(bytes(3 << 16))
    for data in (None, f.read_bytes()):
        with pytest.raises(ProfileError, match=r"malformed CSV header: no line end in the first 65536 bytes"):
            ascend_text._header(str(f), data)
    f.write_bytes(b"")
    for data in (None, b""):
        with pytest.raises(ProfileError, match="empty file"):
            ascend_text._header(str(f), data)


def test_csv_headers_that_are_no_header(tmp_path: Path) -> None:
    """A first line of blanks only, and one whose single field is over the csv module's field limit (131,072
    characters, below MAX_HEADER_BYTES), are no header: one error each naming the file."""
    from msprof_compare.loaders import ascend_text

    f = tmp_path / "memory_record.csv"
    f.write_text(" \t \nTotal Reserved(MB)\n1\n")
    with pytest.raises(ProfileError, match=r"memory_record\.csv: empty file \(no header line\)$"):
        ascend_text.read_memory_record(str(f), [])
    f.write_text("x" * 200_000 + "\n1\n")
    with pytest.raises(ProfileError, match=r"malformed CSV header: field larger than field limit \(131072\)$"):
        ascend_text.read_memory_record(str(f), [])


@pytest.mark.parametrize("whole", [True, False])
def test_truncated_csv_longer_than_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    """The last-row check looks at the last 64 KiB: in a longer file cut inside a row it starts at the first
    line start in that window and still finds the short last row (read in memory or probed on disk)."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    f = tmp_path / "memory_record.csv"
    body = "Component,Timestamp(us),Total Reserved(MB)\n" + "".join(f"APP,{i},{i % 97}.5\n" for i in range(6000))
    assert len(body) > 65536
    f.write_text(body + "APP,6000")
    with pytest.raises(ProfileError, match="truncated: the last row has 2 of 3 fields and no line end"):
        ascend_text.read_memory_record(str(f), [])
    f.write_text(body + "APP,6000,1.5")  # whole last row, no line end: complete
    df = ascend_text.read_memory_record(str(f), [])
    assert len(df) == 6001 and df["Total Reserved(MB)"].iloc[-1] == 1.5


@pytest.mark.parametrize("whole", [True, False])
def test_csv_of_bare_cr_line_ends_ending_in_a_blank_line(samples: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    """msinsight text level1 rank1's memory_record.csv (79 KB, its lines ended by LF and its last by CRLF) with
    every LF turned into a bare CR (old Mac line ends, read since session 60): it ends in a blank line, which
    pandas skips, and the last-row check read that blank line as a last row of 0 of 7 fields, refusing the file
    as truncated (found by fuzzing, fuzz66). It reads the rows the csv module counts in the file as written; the
    file cut inside its last row is still refused."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    src = samples / "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"
    raw = src.read_bytes()
    assert raw.endswith(b"\r\n") and len(raw) > 65536
    n_rows = sum(1 for r in csv.reader(io.StringIO(raw.decode(), newline="")) if r) - 1
    f = tmp_path / "memory_record.csv"
    f.write_bytes(raw.replace(b"\n", b"\r"))
    df = ascend_text.read_memory_record(str(f), [])
    assert len(df) == n_rows == len(ascend_text.read_memory_record(str(src), []))
    f.write_bytes(raw.rstrip(b"\r\n")[:-8].replace(b"\n", b"\r"))  # cut inside the last row
    with pytest.raises(ProfileError, match="truncated: the last row has 6 of 7 fields and no line end"):
        ascend_text.read_memory_record(str(f), [])


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("end", [b"\r", b"\n", b"\r\n", b""])
def test_csv_cut_inside_a_quoted_field(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       whole: bool, end: bytes) -> None:
    """NPU pair 1's level1 kernel_details.csv cut inside its first quoted cell (row 1's Input Shapes, three
    quotes, then "32,3,..."), the cut ending in a line break or not: the file is refused as truncated, naming the
    fields the last row has, where a cut ending in a CR, LF or CRLF (inside the open quote, so no row end) read
    pandas' "EOF inside string" line. Row 1 holds 14 commas before that quote, so the cut row has 15 fields of
    the header's 46."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    raw = (src / "kernel_details.csv").read_bytes()
    header, row1 = raw.split(b"\n")[:2]
    assert header.count(b",") + 1 == 46 and row1[:row1.index(b'"')].count(b",") == 14
    cut = len(header) + 1 + row1.index(b'"') + 5  # inside the quotes: '"""32'
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(raw[:cut] + end)
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_kernel_details(str(f), [])
    assert exc.value.path == str(f)
    assert exc.value.message.startswith("truncated: the last row has 15 of 46 fields and "), exc.value.message


@pytest.mark.parametrize("whole", [True, False])
def test_a_stray_quote_before_the_last_64_kb_keeps_the_parsers_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   whole: bool) -> None:
    """A quote opened in row 1 of a 6,001-row memory_record.csv (over 64 KB) and never closed: the end of the file
    is whole (no quote in its last 64 KB), so it is not said to be cut; pandas' line, which names the row the quote
    opens in, stays."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    f = tmp_path / "memory_record.csv"
    body = "".join(f"APP,{i},{i % 97}.5\n" for i in range(6000))
    assert len(body) > 65536
    f.write_text('Component,Timestamp(us),Total Reserved(MB)\n"APP,1,2.5\n' + body)
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_memory_record(str(f), [])
    assert exc.value.message.startswith("malformed CSV: Error tokenizing data. C error: EOF inside string starting "
                                        "at row 1"), exc.value.message


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("end", [b"\r\n", b""])
@pytest.mark.parametrize(("name", "line"), [("operator_memory.csv", 5), ("memory_record.csv", -3)])
def test_a_stray_quote_in_the_last_64_kb_keeps_the_parsers_row(samples: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch, whole: bool,
                                                                end: bytes, name: str, line: int) -> None:
    """NPU pair 1's level1 operator_memory.csv (30,582 bytes, all inside the 64 KB looked at) and memory_record.csv
    (79,015 bytes; its third line from the end is inside them), whole, with a quote written before the second field
    of one line: neither file quotes a cell, so the field runs to the end of the file over every line after it.
    That is no cut (the file ends with its last row, whole): it was refused as "truncated: the last row has 2 of
    15 fields and ends inside a quoted field" (without the file's last line break: "... and no line end"), which
    sent the user to a whole last row; pandas' line, which names the row the quote opens in (its line number, the
    header being row 0), stays."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    raw = (samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT" / name
           ).read_bytes()
    assert b'"' not in raw and raw.endswith(b"\r\n")
    lines = raw.split(b"\r\n")
    row = line % len(lines)
    assert len(raw) - len(b"\r\n".join(lines[row:])) > len(raw) - 65536  # the quote is inside the window
    lines[row] = lines[row].replace(b",", b',"', 1)
    f = tmp_path / name
    f.write_bytes(b"\r\n".join(lines).removesuffix(b"\r\n") + end)
    read = ascend_text.read_memory_record if name == "memory_record.csv" else ascend_text.read_operator_memory
    with pytest.raises(ProfileError) as exc:
        read(str(f), [])
    assert exc.value.message.startswith("malformed CSV: Error tokenizing data. C error: EOF inside string starting "
                                        f"at row {row}"), exc.value.message


@pytest.mark.parametrize("whole", [True, False])
def test_csv_rows_that_do_not_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    """Past a good header: a row with a byte that is no UTF-8, or a quote opened and never closed, is a
    malformed CSV (one error naming the file), read in memory or streamed."""
    from msprof_compare.loaders import ascend_text

    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    f = tmp_path / "memory_record.csv"
    head = b"Component,Timestamp(us),Total Reserved(MB)\nAPP,1,2.5\n"
    for body, why in ((b"APP,2,3.\xe95\n", "malformed CSV: 'utf-8' codec can't decode byte 0xe9"),
                      # cut inside a quoted field, a line break after the cut: the last row is one field
                      (b'"APP,2\n', "truncated: the last row has 1 of 3 fields and ends inside a quoted field"),
                      # a NUL in the cut row (a damaged copy): Python 3.10's csv refused the tail with "line
                      # contains NUL", so the cut went unsaid there (the floors' run)
                      (b'"AP\0P,2\n', "truncated: the last row has 1 of 3 fields and ends inside a quoted field"),
                      # a quote opened in row 2 that runs over the whole row 3 to the end: no cut, pandas' line
                      (b'"APP,2,3.5\nAPP,3,1\n', "malformed CSV: Error tokenizing data. C error: EOF inside string "
                                                    "starting at row 2"),
                      (b'"AP\0P,2,3.5\nAPP,3,1\n', "malformed CSV: Error tokenizing data. C error: EOF inside "
                                                      "string starting at row 2")):
        f.write_bytes(head + body)
        with pytest.raises(ProfileError) as exc:
            ascend_text.read_memory_record(str(f), [])
        assert exc.value.path == str(f) and exc.value.message.startswith(why), exc.value.message


def test_held_csv_goes_to_pandas_as_utf8(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV held in memory is UTF-8 already (``as_utf8``): pandas gets its bytes as UTF-8, the BOM cut off, not as
    "utf-8-sig" (which pandas decodes through a Python text wrapper and encodes back). NPU pair 1's level1
    kernel_details.csv, edited: a BOM, CRLF line ends and one Name cell quoted with a CR LF, a comma and an "é"
    (synthetic); the table and warnings equal the streamed read's ("utf-8-sig" from disk), and a byte that is no
    UTF-8 gets the streamed read's error, positions and all."""
    import pandas as pd

    from msprof_compare.loaders import ascend_text

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    lines = (src / "kernel_details.csv").read_bytes().split(b"\n")
    cells = lines[3].split(b",")
    cells[4] = '"caf\u00e9\r\nx, y"'.encode()
    lines[3] = b",".join(cells)
    good = b"\xef\xbb\xbf" + b"\r\n".join(lines)
    f = tmp_path / "kernel_details.csv"
    real = pd.read_csv
    encodings: list[str] = []
    monkeypatch.setattr(pd, "read_csv", lambda *a, **k: encodings.append(k["encoding"]) or real(*a, **k))

    def read(whole: int) -> tuple[pd.DataFrame | str, list[str]]:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", whole)
        warnings: list[str] = []
        try:
            return ascend_text.read_kernel_details(str(f), warnings), warnings
        except ProfileError as exc:
            return exc.message, warnings

    f.write_bytes(good)
    held = read(1 << 24)
    assert encodings == ["utf-8"]
    streamed = read(0)
    assert encodings[1:] == ["utf-8-sig"]
    pd.testing.assert_frame_equal(held[0], streamed[0], check_exact=True)
    # the quoted line break is said where the file is held (a check of the bytes, as for rows cut short)
    assert held[1] == [f"{f}: 1 line(s) read as part of an earlier row (a line break inside a "
                       "quoted field: a quote left open?)"] and streamed[1] == []
    assert held[0]["Name"].iloc[2] == "caf\u00e9\r\nx, y" and len(held[0]) == 191
    f.write_bytes(good[:5000] + b"\xff" + good[5001:])
    assert read(1 << 24) == read(0) == (
        "malformed CSV: 'utf-8' codec can't decode byte 0xff in position 4997: invalid start byte", [])


def test_float_column_with_text_beside_non_ascii_text(samples: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A float column holding text is read again with every column as text, with the same reader options as the
    first read: held (UTF-8 bytes, BOM cut) and streamed ("utf-8-sig" from disk) alike, a non-ASCII Name cell reads
    back as written and the junk cell as missing, counted in one warning. NPU pair 1's level1 kernel_details.csv,
    edited: a BOM, one Name cell "café, 算子" with a CR LF inside (quoted), one aicore_time(us) cell "abc"."""
    import csv

    from msprof_compare.loaders import ascend_text

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    with open(src / "kernel_details.csv", encoding="utf-8", newline="") as fh:
        header, *rows = list(csv.reader(fh))
    name_at, junk_at = header.index("Name"), header.index("aicore_time(us)")
    rows[2][name_at], rows[4][junk_at] = "caf\u00e9, \u7b97\u5b50\r\nx", "abc"
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([header, *rows])
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(b"\xef\xbb\xbf" + text.getvalue().encode())
    want = [float(r[junk_at]) if r[junk_at] not in ("", "N/A", "abc") else None for r in rows]
    assert want[4] is None and sum(w is not None and w > 0 for w in want) == 23
    for whole in (1 << 24, 0):  # held, streamed
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", whole)
        warnings: list[str] = []
        got = ascend_text.read_kernel_details(str(f), warnings)
        assert got["Name"].tolist() == [r[name_at] for r in rows]
        assert got["Name"].iloc[2] == "caf\u00e9, \u7b97\u5b50\r\nx"
        assert [None if v != v else v for v in got["aicore_time(us)"].tolist()] == want
        joined = [f"{f}: 1 line(s) read as part of an earlier row (a line break inside a quoted field: a "
                  "quote left open?)"] if whole else []  # said of a file held (a check of the bytes)
        assert warnings == [*joined,
                            f"{f}: 1 value(s) that are not numbers in column(s) aicore_time(us); read as missing"]


def test_small_held_csv_parsed_in_one_go(samples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV held in memory up to ``ONE_CHUNK_BYTES`` is parsed in one go (``low_memory=False``: no chunk columns
    to concatenate); a larger one keeps pandas' chunks, and the tables are the same either way. NPU pair 1's level1
    kernel_details.csv as exported (66 KB), and its rows repeated 100 times (19,100 rows, 6.5 MB: two chunks of
    pandas' 16,384 rows for its 46 columns)."""
    import pandas as pd

    from msprof_compare.loaders import ascend_text

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    head, rows = src.read_bytes().split(b"\n", 1)
    big = tmp_path / "kernel_details.csv"
    big.write_bytes(head + b"\n" + rows * 100)
    real = pd.read_csv
    asked: list[bool] = []
    monkeypatch.setattr(pd, "read_csv", lambda *a, **k: asked.append(k["low_memory"]) or real(*a, **k))
    small = ascend_text.read_kernel_details(str(src), [])
    chunked = ascend_text.read_kernel_details(str(big), [])
    monkeypatch.setattr(ascend_text, "ONE_CHUNK_BYTES", 1 << 24)
    one_go = ascend_text.read_kernel_details(str(big), [])
    assert asked == [False, True, False]
    pd.testing.assert_frame_equal(chunked, one_go, check_exact=True)
    assert len(small) == 191 and len(one_go) == 19_100
    pd.testing.assert_frame_equal(one_go.iloc[:191], small, check_exact=True)


def test_side_json_nested_too_deeply(tmp_path: Path) -> None:
    """communication.json nested deeper than the decoder goes is a malformed file (one error naming it).
    The depth the decoder accepts follows the interpreter's recursion limit: 1,000-2,000 levels up to Python 3.12,
    over 9,000 in 3.13, so the file nests 100,000 deep."""
    d = _copy(tmp_path)
    comm = d / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    comm.write_text('{"step": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert (exc.value.path, exc.value.message) == (str(comm), "malformed JSON: values nested too deeply")


def test_profiler_info_absent_or_broken(tmp_path, caplog):
    """profiler_info_*.json: absent -> nothing said (the original's harmless ERROR line is not copied); present
    but malformed -> the original's warning, and the run goes on; its level is read when valid."""
    d = _copy(tmp_path)
    info = d / "profiler_info_0.json"
    assert load_profile(str(d), OPTS).extra.get("profiler_level") is not None
    info.write_text("{not json")
    p = load_profile(str(d), OPTS)
    assert any(w.startswith("Failed to read profiler_info.json: ") for w in p.warnings)
    assert "profiler_level" not in p.extra
    info.unlink()
    caplog.clear()
    p = load_profile(str(d), OPTS)
    assert not any("profiler_info" in w or "profiler info" in w for w in p.warnings)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_small_csv_is_opened_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The header check, the last-row check and pandas work on one read of a small CSV."""
    import builtins

    from msprof_compare.loaders import ascend_text

    f = tmp_path / "kernel_details.csv"
    f.write_text("Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
                 "50,a,Add,AI_CORE,1736408883732241.5\t,1.5\n")
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    read_csv = ascend_text.pd.read_csv
    sources: list[object] = []
    monkeypatch.setattr(ascend_text.pd, "read_csv", lambda src, **kw: sources.append(src) or read_csv(src, **kw))
    assert ascend_text.read_kernel_details(str(f))["dur"].tolist() == [1500]
    assert opened.count(str(f)) == 1 and not isinstance(sources[0], str)


def test_odd_stream_ids_are_counted(tmp_path):
    """An NPU task whose "Stream Id" is no integer within int64 is on no stream, counted in one warning."""
    ev = [{"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "Ascend Hardware"}}]
    ev += [{"ph": "X", "name": f"t{i}", "pid": 2, "tid": 3, "ts": str(10 * i), "dur": "1", "args": {"Stream Id": v}}
           for i, v in enumerate([3, "4", 2**64, "x"])]
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), OPTS)
    assert prof.kernels["stream"].tolist() == [3, 4, -1, -1]
    assert [w for w in prof.warnings if "stream" in w] == [
        f"{f}: 2 kernel stream id(s) are not integers within int64 (the first: {2**64}); "
        "those kernels read as on no stream"]


def _hardware_tasks(events: list[dict]) -> list[dict]:
    hw = {e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
          and e["args"]["name"] == "Ascend Hardware"}
    return [e for e in events if e.get("ph") == "X" and e["pid"] in hw]


def test_odd_task_ids_are_counted(raw, tmp_path):
    """A "Task Id" that is no integer shows as None in the kernel details (7.5 used to show as 7), counted in
    one warning; integer text and integral floats read as their integer."""
    from msprof_compare.compare.optree import kernel_lines

    ev = json.loads(json.dumps(raw))
    tasks = _hardware_tasks(ev)[:4]
    for e, v in zip(tasks, ["11125", 11126.0, 7.5, True], strict=True):
        e["args"]["Task Id"] = v
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), ALL)
    assert prof.kernels["task_id"].tolist()[:4] == [11125, 11126, -1, -1]
    assert [line.split(", ")[1] for line in kernel_lines(prof, prof.kernels.iloc[:4])] == \
        ["11125", "11126", "None", "None"]
    assert [w for w in prof.warnings if "Task Id" in w] == [
        f"{f}: 2 task Task Id value(s) are not integers from 0 to 4,294,967,295 (the first: 7.5); those tasks show "
        "Task Id None"]
    assert not [w for w in load_profile(str(PT), ALL).warnings if "not integers" in w]  # the excerpt as recorded


def test_task_ids_outside_uint32_read_as_missing(raw, tmp_path):
    """msprof writes a Task Id as uint32, as the DB's TASK.taskId: -5, int64's greatest and 2**32 (synthetic, on
    the first four tasks of the excerpt) were printed as is, unsaid. They now read as absent (Task Id None),
    counted in the one line of the column's bad values naming the first, with a non-integer one (7.5, on the fifth
    task) too: two lines said one column's damage; 4,294,967,295 is in range and stays."""
    from msprof_compare.compare.optree import kernel_lines

    ev = json.loads(json.dumps(raw))
    tasks = _hardware_tasks(ev)[:5]
    for e, v in zip(tasks, [-5, 2**63 - 1, 2**32, 2**32 - 1, 7.5], strict=True):
        e["args"]["Task Id"] = v
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), ALL)
    assert prof.kernels["task_id"].tolist()[:5] == [-1, -1, -1, 4294967295, -1]
    assert [line.split(", ")[1] for line in kernel_lines(prof, prof.kernels.iloc[:5])] == \
        ["None", "None", "None", "4294967295", "None"]
    assert [w for w in prof.warnings if "Task Id" in w] == [
        f"{f}: 4 task Task Id value(s) are not integers from 0 to 4,294,967,295 (the first: -5); those tasks show "
        "Task Id None"]
    ids = [e["args"]["Task Id"] for e in _hardware_tasks(raw)]
    assert all(0 <= i < 2**32 for i in ids)  # the excerpt as recorded: nothing to say



def test_a_task_id_over_uint32_among_integers_alone_reads_as_missing(raw, tmp_path):
    """Integers alone take the fast read (one C-level conversion, then the bounds): one task's Task Id 2**32 among
    the excerpt's integer ids (synthetic) reads as absent and is said, as it is beside a non-integer one."""
    ev = json.loads(json.dumps(raw))
    _hardware_tasks(ev)[0]["args"]["Task Id"] = 2**32
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), ALL)
    assert prof.kernels["task_id"].tolist()[0] == -1
    assert [w for w in prof.warnings if "Task Id" in w] == [
        f"{f}: 1 task Task Id value(s) are not integers from 0 to 4,294,967,295 (the first: 4294967296); those "
        "tasks show Task Id None"]
    assert not [w for w in load_profile(str(PT), ALL).warnings if "Task Id" in w]


def test_task_id_minus_2_is_no_communication(raw, tmp_path, monkeypatch):
    """-2 in the kernel pool marks an HCCL op's row, summed as its operator's communication: the 20 longest tasks of
    the excerpt typed Task Id -2 (synthetic) added 0.04 ms of communication to the top contributor against the DB
    level-2 excerpt (79.130421 ms where the recorded excerpt gives 79.08952). Read as missing, as the DB loader
    reads a taskId outside uint32, the contributors' communication is the recorded excerpt's again."""
    import pandas as pd

    from msprof_compare import api
    from msprof_compare.loaders import ascend_text

    ev = json.loads(json.dumps(raw))
    for e in sorted(_hardware_tasks(ev), key=lambda e: -float(e["dur"]))[:20]:
        e["args"]["Task Id"] = -2
    bad = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, bad)
    (bad / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(ev))
    l2 = str(DATA.parent / "db" / "l2" / "ascend_pytorch_profiler_0.db")

    def communication(x: Path):
        return api.compare(l2, str(x), enable_operator_compare=True, disable_module=True) \
            .frames["contributor_communication"]

    clean = communication(PT)
    assert clean["Comparison(ms)"].notna().any()  # the excerpt's HCCL ops: real communication under operators
    pd.testing.assert_frame_equal(communication(bad), clean)
    # the test can fail: with the ids read as they are, the fake communication comes back
    monkeypatch.setattr(ascend_text, "_TASK_ID", ascend_text._TASK_ID._replace(bounds=None))
    assert communication(bad)["Comparison(ms)"].sum() > clean["Comparison(ms)"].sum()


def test_queue_events_without_a_correlation_id_pair_with_none(raw, tmp_path):
    """An enqueue / dequeue without correlation_id pairs with none (as the DB's NULL CANN connection id): a cann::
    block allocated in such a dequeue is placed at time 0, where -1 paired with -1 took the last enqueue of no id,
    another launch's. The excerpt's first two launches (correlation ids 8280, 8281) lose theirs; one warning
    counts the four events."""
    import pandas as pd
    from frameutil import npu_records

    ev = json.loads(json.dumps(raw))
    enq = {e["args"]["correlation_id"]: e for e in ev if e.get("cat") == "enqueue"}
    deq = {e["args"]["correlation_id"]: e for e in ev if e.get("cat") == "dequeue"}
    for e in (enq[8280], enq[8281], deq[8280], deq[8281]):
        del e["args"]["correlation_id"]
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), ALL)
    assert [w for w in prof.warnings if "correlation" in w] == [
        f"{f}: 4 enqueue / dequeue event(s) have no correlation_id; they pair with no other, so a memory block CANN "
        "allocated in such a dequeue is placed at time 0, under no operator"]

    def placed(dequeue: dict) -> list[int]:
        """Where a cann:: block allocated 1 us into ``dequeue`` is placed."""
        alloc = ns(dequeue["ts"]) + 1000
        prof.operator_memory = pd.DataFrame({"Name": ["cann::x"], "Size(KB)": [1.0], "Allocation Time(us)": ["1"],
                                             "Release Time(us)": [""], "alloc_ns": [alloc], "release_ns": [0]})
        return npu_records(prof)["ts"].tolist()

    assert placed(deq[8280]) == placed(deq[8281]) == [0]  # -1 with -1 took enqueue 8281's (the last) start
    assert placed(deq[8282]) == [ns(enq[8282]["ts"])]
    assert not [w for w in load_profile(str(PT), ALL).warnings if "correlation" in w]  # the excerpt as recorded


def test_odd_queue_correlation_ids_are_counted(raw, tmp_path):
    """An enqueue / dequeue correlation_id that is no integer is a key of its own, counted in one warning: a
    cann:: block allocated in a dequeue is placed at the enqueue holding the same value, as the original's dict
    does (2**64 and "abc" used to read as -1 without a word, pairing with each other and with absent ids)."""
    import pandas as pd
    from frameutil import npu_records

    ev = json.loads(json.dumps(raw))
    enq = [e for e in ev if e.get("cat") == "enqueue"][:3]
    assert [e["args"]["correlation_id"] for e in enq] == [8280, 8281, 8282]
    deq = {e["args"]["correlation_id"]: e for e in ev if e.get("cat") == "dequeue"}
    enq[0]["args"]["correlation_id"] = "8280"  # integer text: the integer
    enq[1]["args"]["correlation_id"] = deq[8281]["args"]["correlation_id"] = 2**64
    enq[2]["args"]["correlation_id"] = "abc"
    deq[8282]["args"]["correlation_id"] = "abd"
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), ALL)
    assert [w for w in prof.warnings if "correlation" in w] == [
        f"{f}: 4 enqueue / dequeue correlation_id value(s) are not integers within int64 (the first: {2**64}); "
        "each pairs only with the same value (read as a code below -1)"]
    q = prof.queue
    corr = q["correlation_id"].to_numpy()
    assert 8280 in corr and not (corr == -1).any()

    def placed(dequeue: dict) -> list[int]:
        """Where a cann:: block allocated 1 us into ``dequeue`` is placed."""
        alloc = ns(dequeue["ts"]) + 1000
        prof.operator_memory = pd.DataFrame({"Name": ["cann::x"], "Size(KB)": [1.0], "Allocation Time(us)": ["1"],
                                             "Release Time(us)": [""], "alloc_ns": [alloc], "release_ns": [0]})
        return npu_records(prof)["ts"].tolist()

    assert placed(deq[8281]) == [ns(enq[1]["ts"])]  # 2**64 with 2**64
    assert placed(deq[8282]) == [0]                 # "abd" finds no enqueue ("abc" is another value)
    assert placed(deq[8280]) == [ns(enq[0]["ts"])]


def test_odd_thread_sort_indexes_are_counted(tmp_path):
    """A thread_sort_index that is no integer orders its thread by tid (as a missing one), counted in one
    warning: the order of the HCCL lanes attaches each plane to the group lane above it, and 4.5 used to
    sort as 4."""
    lanes = [(5, "Group A Communication", 1), (6, "Plane 0", 2), (7, "Group B Communication", 3), (0, "Plane 1", 4.5)]
    ev: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": 9, "tid": 0, "args": {"name": "HCCL"}}]
    for tid, name, si in lanes:
        ev.append({"ph": "M", "name": "thread_name", "pid": 9, "tid": tid, "args": {"name": name}})
        ev.append({"ph": "M", "name": "thread_sort_index", "pid": 9, "tid": tid, "args": {"sort_index": si}})
    ev += [{"ph": "X", "name": f"t{tid}", "pid": 9, "tid": tid, "ts": "10", "dur": "1", "args": {}}
           for tid, *_ in lanes]
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(ev))
    prof = load_profile(str(f), ALL)
    assert prof.threads["sort_index"].tolist() == [1, 2, 3, -1]
    assert prof.comm["group"].tolist() == ["Group A Communication", "Group A Communication", "Group B Communication",
                                           ""]  # Plane 1 (tid 0) comes first: under no group
    assert [w for w in prof.warnings if "sort_index value" in w] == [
        f"{f}: 1 thread_sort_index value(s) are not integers within int64 (the first: 4.5); those threads are "
        "ordered by their tid"]
    assert f"{f}: 1 of the HCCL lane's 4 event(s) belong to no communication group lane (no thread named '... " \
        "Communication' sorts before their thread); they count in no communication figure" in prof.warnings


def test_field_at_reads_only_the_rows_asked_for():
    """Flow ids are read only for flow events (a tenth of the kept ones): the other rows hold None."""
    from msprof_compare.loaders import traceio
    from msprof_compare.loaders.ascend_text import _field_at

    events, _ = traceio.decode_events("t", b'[{"ph": "s", "id": 7}, {"ph": "X"}, {"ph": "f", "id": "7"}]')
    assert _field_at(events, np.array([0, 2]), "id").tolist() == [7, None, "7"]
    assert _field_at(events, np.arange(3), "ph").tolist() == ["s", "X", "f"]
    assert _field_at(events, np.zeros(0, np.int64), "id").tolist() == [None, None, None]


def test_folder_of_json_side_objects_is_no_profile(tmp_path, samples):
    """A legacy MindSpore 1.x profiler folder (reference pair 9a) holds JSON objects that are no trace
    (pipeline_profiling_1.json, step_trace_point_info.json, timeline_summary_1.json). It read "directory holds
    no *.pt.trace.json but 3 JSON traces (...) (pass the trace file itself)", and passing one of them failed
    again ("not a trace"); it now gets the original's "not collected" error, as the pair's reference output.
    Only JSON objects that hold traceEvents count as traces: one among side objects loads, several are named."""
    legacy = samples / "mindinsight/tests/utils/resource/run_1/normal_run/profiler"
    if not legacy.is_dir():
        pytest.skip("legacy MindSpore profiler folder absent")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(legacy))
    assert err.value.hint.startswith("it is a MindSpore 1.x profiler folder (framework_raw_1.csv)")  # no file offered
    mixed = tmp_path / "mixed"  # two renamed traces among side objects: those two are named, in the singular
    mixed.mkdir()
    for name in ("pipeline_profiling_1.json", "timeline_summary_1.json"):
        shutil.copyfile(legacy / name, mixed / name)
    (mixed / "a.json").write_text('{"schemaVersion": 1, "traceEvents": []}')
    (mixed / "b.json").write_text('{"schemaVersion": 1, "traceEvents": []}')
    with pytest.raises(ProfileError) as err:
        detect(str(mixed))
    assert err.value.message == "directory holds no *.pt.trace.json but 2 JSON traces (a.json, b.json)"
    assert err.value.hint == "pass the trace file itself"
    (mixed / "b.json").unlink()  # one trace among side objects is that trace (it was refused as "1 JSON trace")
    layout = detect(str(mixed))
    assert (layout.level, layout.trace_path) == ("file", str(mixed / "a.json"))


def test_one_real_trace_among_side_objects_loads_as_that_trace(tmp_path, samples):
    """A run folder with a renamed Kineto trace beside other JSON objects (a legacy MindSpore folder's
    timeline_summary_1.json) was refused with "pass the trace file itself"; the folder now loads exactly
    what the trace file loads."""
    legacy = samples / "mindinsight/tests/utils/resource/run_1/normal_run/profiler"
    if not legacy.is_dir():
        pytest.skip("legacy MindSpore profiler folder absent")
    trace = Path(__file__).resolve().parent / "data" / "kineto" / "legacy_resnet50_excerpt.pt.trace.json"
    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(trace, run / "worker0.json")
    for name in ("pipeline_profiling_1.json", "timeline_summary_1.json", "step_trace_point_info.json"):
        shutil.copyfile(legacy / name, run / name)
    folder, alone = load_profile(str(run), Options()), load_profile(str(trace), Options())
    assert len(folder.kernels) == len(alone.kernels) > 0
    assert folder.kernels["dur"].tolist() == alone.kernels["dur"].tolist()
    assert len(folder.ops) == len(alone.ops) > 0


def test_missing_and_empty_side_files_name_their_folder(tmp_path):
    """Two ranks compared, one of them without communication.json, printed "The file communication.json does
    not exist." with nothing saying which side (reference pair 2 prints it twice). The original's sentence is
    kept after the folder it was looked for in (a grep for it still finds it); an empty file names itself."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, side)
    out = side / "ASCEND_PROFILER_OUTPUT"
    (out / "communication.json").unlink()
    p = load_profile(str(side), OPTS)
    assert f"{out}: The file communication.json does not exist. (no RDMA or SDMA Bandwidth, which the Model " \
        "Profiling Time Distribution table reads from it)" in p.warnings
    (out / "communication.json").write_bytes(b"")
    p = load_profile(str(side), OPTS)
    assert f"{out / 'communication.json'}: The communication.json file is empty." in p.warnings
    assert p.communication is None


def test_side_file_that_is_a_directory_is_named_so(tmp_path):
    """kernel_details.csv (the excerpt's, synthetic) replaced by a folder of that name: the warning says it is a
    directory, not that the file does not exist; the side loads without kernel details."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, side)
    out = side / "ASCEND_PROFILER_OUTPUT"
    (out / "kernel_details.csv").unlink()
    (out / "kernel_details.csv").mkdir()
    p = load_profile(str(side), OPTS)
    assert f"{out}: kernel_details.csv is a directory, not a file; not read." in p.warnings
    assert not any("kernel_details.csv does not exist" in w for w in p.warnings) and p.kernel_details is None


def _with_src_rank(tmp_path: Path, hccl: set, text: str) -> Path:
    """A copy of the excerpt whose HCCL tasks (processes ``hccl``) have ``text`` (JSON) as src rank, 0 as dst rank."""
    d = tmp_path / f"s{len(list(tmp_path.iterdir()))}_ascend_pt"
    shutil.copytree(PT, d)
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    for e in events:
        if e.get("pid") in hccl and "src rank" in (e.get("args") or {}):
            e["args"]["src rank"] = "@RANK@"
            e["args"]["dst rank"] = 0
    tv.write_text(json.dumps(events).replace('"@RANK@"', text))
    return d


def test_rank_span_of_the_hccl_tasks(tmp_path):
    """The highest rank id the HCCL tasks name, plus one (the world-size check's lower bound). The excerpt's
    32 rank args, counted with the json module: ranks 0-7 and 2**32 - 1 (no peer), so 8; a value that is no
    rank id is passed over, a rank id written as text or as an integral float counts."""
    ev = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    hccl = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == "HCCL"}
    ranks = [v for e in ev if e.get("pid") in hccl and e.get("ph") == "X"
             for k, v in (e.get("args") or {}).items() if k in ("src rank", "dst rank")]
    assert len(ranks) == 32 and set(ranks) == {*range(8), 2**32 - 1}
    assert load_profile(str(PT), OPTS).rank_span == 8
    # JSON text of the src rank -> span; values msgspec cannot hold (1e400, 5,000 digits) loaded before the
    # ranks were read, and still do: the figure only bounds the world size
    for odd, span in (("true", 0), ("-1", 0), (str(2**32 - 1), 0), (str(2**64), 0), ('"abc"', 0), ("[9]", 0),
                      ('"9"', 10), ("9.0", 10), (str(2**32 - 2), 0), (str(2**31 - 1), 2**31), ("1e400", 0),
                      ("-1e400", 0), ("9" * 5000, 0), ("[[[9]]]", 0), ("null", 0), ("{}", 0), ("9" * 19, 0),
                      ("-" + "9" * 25, 0)):
        d = _with_src_rank(tmp_path, hccl, odd)
        assert load_profile(str(d), OPTS).rank_span == max(span, 1), odd[:20]  # dst rank 0 alone spans 1
    # a trace without rank args (a Level0 export): no span
    for e in ev:
        (e.get("args") or {}).pop("src rank", None)
        (e.get("args") or {}).pop("dst rank", None)
    d = _copy(tmp_path)
    (d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(ev))
    assert load_profile(str(d), OPTS).rank_span == 0


def test_hccl_rank_values_that_are_no_rank_id_are_counted_in_one_warning(tmp_path):
    """A src / dst rank that is no rank id is counted in one warning naming the first, as the DB loader counts its
    COMMUNICATION_TASK_INFO cells: 3000000000 made the world "at least 3000000001" ranks unsaid; a long value is
    quoted cut to 40 characters as written (5,000 digits made a 5,249-character line). HCCL's no-peer
    2**32 - 1 and null are no fault, and the real excerpt (ranks 0-7 and no-peer, read with the json module) says
    nothing. The events with a src rank are counted with the json module, each given the value under test."""
    ev = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    hccl = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] == "HCCL"}
    n_src = sum(1 for e in ev if e.get("pid") in hccl and e.get("ph") == "X" and "src rank" in (e.get("args") or {}))
    assert n_src > 0
    assert not any("no rank id" in w for w in load_profile(str(PT), OPTS).warnings)
    # (the src rank's JSON text, the first value the warning quotes or None where none is said, the span)
    for odd, first, span in (("3000000000", "3000000000", 1), ('"abc"', '"abc"', 1), ("-1", "-1", 1),
                             (str(2**32 - 2), str(2**32 - 2), 1), (str(2**32 - 1), None, 1), ("null", None, 1),
                             (str(2**31 - 1), None, 2**31), ("9" * 5000, "9" * 37 + "...", 1)):
        d = _with_src_rank(tmp_path, hccl, odd)
        tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        p = load_profile(str(d), OPTS)
        said = [w for w in p.warnings if "no rank id" in w]
        if first is None:
            assert said == [], odd
        else:
            assert said == [f"{tv}: {n_src} HCCL task src rank / dst rank value(s) are no rank id (an integer from "
                            f"0 to 2147483647, or 4294967295: no peer; the first: {first}); the world size "
                            "check's lower bound leaves them out"], odd
        assert p.rank_span == span, odd


def _zh_copy(src: Path, dst: Path, encoding: str) -> None:
    """The excerpt with Chinese text in op names, an arg, a kernel name and the metadata, written in ``encoding``
    (torch_npu writes its files with the locale's encoding and ``ensure_ascii=False``)."""
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"
    tv = (out / "trace_view.json").read_text(encoding="utf-8")
    assert tv.count('"aten::view"') > 1 and '"Input type": "float;' in tv
    tv = tv.replace('"aten::view"', '"aten::view训练"').replace('"Input type": "float;', '"Input type": "float张量;')
    (out / "trace_view.json").write_bytes(tv.encode(encoding))
    kd = (out / "kernel_details.csv").read_text(encoding="utf-8")
    first = kd.splitlines()[1].split(",")[4]  # Name of the first row
    (out / "kernel_details.csv").write_bytes(kd.replace(f",{first},", f",{first}训练,", 1).encode(encoding))
    meta = json.loads((dst / "profiler_metadata.json").read_text(encoding="utf-8"))
    meta["note"] = "训练"
    (dst / "profiler_metadata.json").write_bytes(json.dumps(meta, ensure_ascii=False).encode(encoding))


def test_text_export_written_in_a_chinese_locale(tmp_path: Path) -> None:
    """torch_npu writes trace_view.json, the CSVs and the JSON side files with ``open`` and no ``encoding=``:
    on a GBK / GB18030 locale, non-ASCII text lands in that encoding (the original, run in the same locale,
    reads it). Each such file loads with one warning naming it, and every table equals that of the same export
    written in UTF-8."""
    _zh_copy(PT, tmp_path / "gb" / PT.name, "gb18030")
    _zh_copy(PT, tmp_path / "utf8" / PT.name, "utf-8")
    got = load_profile(str(tmp_path / "gb" / PT.name), ALL)
    want = load_profile(str(tmp_path / "utf8" / PT.name), ALL)
    root = tmp_path / "gb" / PT.name
    why = ("the text is not UTF-8; read as GB18030 (torch_npu and MindSpore write in the locale's encoding: GBK / "
           "GB18030 on a Chinese-locale machine)")
    notes = [w for w in got.warnings if "GB18030" in w]
    out = root / "ASCEND_PROFILER_OUTPUT"
    files = [out / "trace_view.json", out / "kernel_details.csv", root / "profiler_metadata.json"]
    assert notes == [f"{f}: {why}" for f in files]
    assert not any("GB18030" in w for w in want.warnings)
    assert (got.ops["name"] == "aten::view训练").sum() == (want.ops["name"] == "aten::view训练").sum() > 1
    for table in ("ops", "kernels", "flows", "python_functions"):
        assert getattr(got, table).equals(getattr(want, table)), table
    assert got.kernel_details.equals(want.kernel_details) and got.kernel_details["Name"][0].endswith("训练")
    assert got.metadata == want.metadata and got.metadata["note"] == "训练"


def _latin1_name(tmp_path: Path, suffix: str) -> tuple[Path, Path, str]:
    """The excerpt with ``suffix`` after the first kernel name, its kernel_details.csv written in Latin-1;
    returns (the copy, its kernel_details.csv, that name)."""
    side = tmp_path / PT.name
    shutil.copytree(PT, side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    text = kd.read_text(encoding="utf-8")
    first = text.splitlines()[1].split(",")[4]
    kd.write_bytes(text.replace(f",{first},", f",{first}{suffix},", 1).encode("latin-1"))
    return side, kd, first


def test_text_that_is_neither_utf8_nor_gb18030_stays_an_error(tmp_path: Path) -> None:
    """On a UTF-8 host only GB18030 is tried: a Latin-1 byte before a comma is neither, and the error names the
    UTF-8 fault."""
    side, kd, first = _latin1_name(tmp_path, "\xe9")
    with pytest.raises(ProfileError) as info:
        load_profile(str(side), OPTS)
    assert info.value.path == str(kd)
    assert info.value.message.startswith("malformed CSV: 'utf-8' codec can't decode byte 0xe9")


def test_damaged_utf8_is_not_read_as_gb18030(tmp_path: Path) -> None:
    """A UTF-8 trace with several distinct Chinese names and one damaged byte is refused as before: read as
    GB18030, its every other non-ASCII name would be garbled (GB18030 decodes nearly any byte pair)."""
    side = tmp_path / "utf8" / PT.name
    _zh_copy(PT, side, "utf-8")
    tv = side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = tv.read_text(encoding="utf-8")
    for old, new in (("aten::transpose", "aten::transpose转置"), ("aten::mul", "aten::mul乘法"),
                     ("aten::detach", "aten::detach分离")):
        assert f'"{old}"' in text
        text = text.replace(f'"{old}"', f'"{new}"')
    tv.write_text(text, encoding="utf-8")
    data = tv.read_bytes()
    assert data.decode("gb18030")  # the damaged copy below would decode as GB18030 too
    at = data.index(b'"name": "') + len(b'"name": "')
    tv.write_bytes(data[:at] + b"\xc0" + data[at:])
    with pytest.raises(ProfileError, match="Invalid UTF-8") as info:
        load_profile(str(side), OPTS)
    assert info.value.path == str(tv)


def test_text_in_the_locale_encoding_is_read_as_the_original_reads_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """On a host whose locale is not UTF-8, text that is not UTF-8 is read in the locale's encoding, as the
    original's ``open`` reads it: a Latin-1 kernel name under a Latin-1 locale is that name (as GB18030 it
    would be a CJK character)."""
    from msprof_compare.loaders import traceio

    monkeypatch.setattr(traceio, "_locale_encoding", lambda: "iso8859-1")
    side, kd, first = _latin1_name(tmp_path, "_Größe")
    p = load_profile(str(side), OPTS)
    assert p.kernel_details["Name"][0] == f"{first}_Größe"
    assert f"{kd}: the text is not UTF-8; read as ISO8859-1 (this machine's locale, as the original reads it)" \
        in p.warnings


def test_side_json_with_python_constants(tmp_path: Path) -> None:
    """Python's json.dumps writes NaN / Infinity / -Infinity (torch_npu's add_metadata_json takes any JSON a user
    gives, stores it as Python values and dumps it so): read as Python reads them. Other malformed JSON, even
    with such a literal before the fault, is still an error."""
    from msprof_compare.loaders.ascend_text import read_json

    f = tmp_path / "profiler_metadata.json"
    f.write_bytes(b'{"loss": NaN, "norm": Infinity, "lr": [-Infinity, 1]}')
    got = read_json(str(f))
    assert np.isnan(got["loss"]) and got["norm"] == float("inf") and got["lr"] == [float("-inf"), 1]
    # a fault after such a literal is named where it is (Python's reader), not at the literal
    f.write_bytes(b'{"loss": NaN, "x": }')
    with pytest.raises(ProfileError) as info:
        read_json(str(f))
    assert info.value.message == "malformed JSON: Expecting value at character 19"
    f.write_bytes(b'{"loss": NaN, "b": [1, 2')
    with pytest.raises(ProfileError) as info:
        read_json(str(f))
    assert info.value.message.startswith("truncated JSON (")
    # Python's reader lets a lone escaped surrogate through; the strict decoder's refusal holds
    f.write_bytes(b'{"loss": NaN, "group_name": "dp\\ud800"}')
    with pytest.raises(ProfileError, match="a lone escaped UTF-16 surrogate"):
        read_json(str(f))
    f.write_bytes(b'{"loss": NaN, "pair": "\\ud83d\\ude00"}')  # an escaped pair is one character
    assert read_json(str(f))["pair"] == "\U0001f600"
    f.write_bytes(b'{"loss": nan}')
    with pytest.raises(ProfileError, match="malformed JSON"):
        read_json(str(f))


def test_large_csv_in_the_locale_encoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV too large to hold up front (``WHOLE_CSV_BYTES``) is read by pandas from its path: one in GB18030 is
    then held and read again, with the same rows and note as a small one."""
    from msprof_compare.loaders import ascend_text

    _zh_copy(PT, tmp_path / "gb" / PT.name, "gb18030")
    _zh_copy(PT, tmp_path / "utf8" / PT.name, "utf-8")
    monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    got = load_profile(str(tmp_path / "gb" / PT.name), OPTS)
    want = load_profile(str(tmp_path / "utf8" / PT.name), OPTS)
    assert got.kernel_details.equals(want.kernel_details) and got.kernel_details["Name"][0].endswith("训练")
    kd = tmp_path / "gb" / PT.name / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    assert sum(w.startswith(f"{kd}: the text is not UTF-8; read as GB18030") for w in got.warnings) == 1

@pytest.mark.parametrize("held", [True, False], ids=["held", "streamed"])
def test_row_cut_short_in_a_gb18030_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: bool) -> None:
    """A kernel_details.csv in GB18030 with its first row cut before aiv_vec_time(us), the last column read: held
    in memory or streamed (too large to hold up front, then held once pandas fails to decode it), the cut row is
    said. Streamed, it went unsaid: the held bytes took the name of the flag that says every row is whole."""
    from msprof_compare.loaders import ascend_text

    _zh_copy(PT, tmp_path / "gb" / PT.name, "gb18030")
    kd = tmp_path / "gb" / PT.name / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = kd.read_bytes().split(b"\n")
    fields = lines[1].split(b",")
    assert b'"' not in lines[1] and "训练".encode("gb18030") in lines[1]
    lines[1] = b",".join(fields[:lines[0].split(b",").index(b"aiv_vec_time(us)")])  # its last 10 cells gone
    kd.write_bytes(b"\n".join(lines))
    if not held:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    got = load_profile(str(tmp_path / "gb" / PT.name), OPTS)
    assert f"{kd}: 1 row(s) end before the last column read; their missing cells read as empty" in got.warnings


@pytest.mark.parametrize("held", [True, False], ids=["held", "streamed"])
def test_gb18030_csv_behind_a_utf8_bom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: bool) -> None:
    """A kernel_details.csv in GB18030 that opens with a UTF-8 BOM (an editor added one): the BOM says nothing of
    the text after it. Read with the rest in GB18030 it became two characters before "Step Id", which then named
    no column: held in memory every kernel's step read -1 without a word; streamed (too large to hold) the read
    failed with pandas' "Usecols do not match". Both now equal the UTF-8 copy, with the one encoding note."""
    from msprof_compare.loaders import ascend_text

    _zh_copy(PT, tmp_path / "gb" / PT.name, "gb18030")
    _zh_copy(PT, tmp_path / "utf8" / PT.name, "utf-8")
    kd = tmp_path / "gb" / PT.name / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    kd.write_bytes(b"\xef\xbb\xbf" + kd.read_bytes())
    if not held:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    got = load_profile(str(tmp_path / "gb" / PT.name), OPTS)
    want = load_profile(str(tmp_path / "utf8" / PT.name), OPTS)
    rows = (PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_text(encoding="utf-8").splitlines()
    at = rows[0].split(",").index("Step Id")
    steps = {int(r.split(",")[at]) for r in rows[1:]}
    assert len(steps) == 1 and min(steps) >= 0  # the excerpt's one step, which -1 would lose
    assert got.kernel_details.equals(want.kernel_details) and got.kernel_details["Name"][0].endswith("训练")
    assert (got.kernel_details["Step Id"] == min(steps)).all()
    assert sum(w.startswith(f"{kd}: the text is not UTF-8; read as GB18030") for w in got.warnings) == 1



def test_gb18030_trace_behind_a_utf8_bom(tmp_path: Path) -> None:
    """A trace_view.json in GB18030 behind a UTF-8 BOM: read with the text in GB18030, the BOM's last byte took the
    opening '[' into one character and the trace was refused as "not a JSON trace". It now loads as its UTF-8
    copy does, with the encoding note; and with a raw control character in an op name it also takes the retry
    that reads such characters as blanks, whose position must be found in the re-encoded text (no BOM left)."""
    _zh_copy(PT, tmp_path / "gb" / PT.name, "gb18030")
    _zh_copy(PT, tmp_path / "utf8" / PT.name, "utf-8")
    tv = tmp_path / "gb" / PT.name / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    gb = tv.read_bytes()
    tv.write_bytes(b"\xef\xbb\xbf" + gb)
    got = load_profile(str(tmp_path / "gb" / PT.name), OPTS)
    want = load_profile(str(tmp_path / "utf8" / PT.name), OPTS)
    for table in ("ops", "kernels", "flows"):
        assert getattr(got, table).equals(getattr(want, table)), table
    assert (got.ops["name"] == "aten::view训练").sum() > 1
    assert sum(w.startswith(f"{tv}: the text is not UTF-8; read as GB18030") for w in got.warnings) == 1
    # one name of the GB18030 text with a raw control character (bytes 0x01: one byte in either encoding)
    at = gb.index(b'"aten::view') + len(b'"aten::')
    tv.write_bytes(b"\xef\xbb\xbf" + gb[:at] + b"\x01" + gb[at:])
    got = load_profile(str(tmp_path / "gb" / PT.name), OPTS)
    assert (got.ops["name"] == "aten:: view训练").sum() == 1  # a blank where the control character was
    assert len(got.ops) == len(want.ops)
    assert any("raw control characters in the JSON text" in w for w in got.warnings)

def _renamed_trace(side: Path, renames: dict[str, str]) -> str:
    """A copy of the excerpt at ``side`` whose trace_view.json op names ``renames`` are renamed (every
    occurrence); returns that trace's text (the excerpt is ASCII)."""
    shutil.copytree(PT, side)
    text = (side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8")
    assert text.isascii()
    for old, new in renames.items():
        assert f'"name": "{old}"' in text
        text = text.replace(f'"name": "{old}"', f'"name": "{new}"')
    return text


def test_trace_view_with_a_name_across_the_text_chunk_boundary(tmp_path: Path) -> None:
    """Text is checked and re-encoded in 1 MiB chunks (``traceio._TEXT_CHUNK``). The excerpt's trace_view.json with
    its 4 aten::mm ops named aten::mm训练, padded with blanks between events to 2 MiB + 1 byte so that the first
    训 starts on the last byte of the first chunk and the last chunk is the closing bracket alone (synthetic
    padding of real text: no sample is that large and non-ASCII). Written in UTF-8 it is UTF-8 (no note), though
    its bytes would decode as GB18030 too; written in GB18030 it is re-encoded whole. Both load the ops of the
    unpadded UTF-8 copy."""
    chunk = 1 << 20
    text = _renamed_trace(tmp_path / "plain" / PT.name, {"aten::mm": "aten::mm训练"})
    tv = tmp_path / "plain" / PT.name / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    tv.write_text(text, encoding="utf-8")
    want = load_profile(str(tmp_path / "plain" / PT.name), OPTS)
    assert (want.ops["name"] == "aten::mm训练").sum() == 4
    for enc in ("utf-8", "gb18030"):
        side = tmp_path / enc / PT.name
        shutil.copytree(PT, side)
        data = text.encode(enc)
        first = data.index("训".encode(enc))
        assert data[:1] == b"[" and data[-1:] == b"]"
        data = data[:1] + b" " * (chunk - 1 - first) + data[1:]
        data = data[:-1] + b" " * (2 * chunk + 1 - len(data)) + b"]"
        assert len(data) == 2 * chunk + 1 and data[chunk - 1:chunk + 1] == "训".encode(enc)[:2]
        assert data.decode("gb18030")  # the UTF-8 copy too: read as GB18030, its names would be garbled
        f = side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        f.write_bytes(data)
        got = load_profile(str(side), OPTS)
        assert got.ops.equals(want.ops), enc
        assert got.kernels.equals(want.kernels), enc
        notes = [w for w in got.warnings if "not UTF-8" in w]
        assert notes == ([] if enc == "utf-8" else [f"{f}: the text is not UTF-8; read as GB18030 (torch_npu and "
                                                   "MindSpore write in the locale's encoding: GBK / GB18030 on a "
                                                   "Chinese-locale machine)"])


def test_gbk_names_that_decode_as_utf8_by_chance_up_to_the_limit(tmp_path: Path) -> None:
    """GBK text is told from damaged UTF-8 by how many characters its distinct non-ASCII runs hold that decode as
    UTF-8 by chance: under eight per damaged run it is GBK. The excerpt's trace_view.json with four op names
    given Chinese suffixes and written in GBK (a synthetic edit: no sample is in GBK). By hand from the GBK bytes:
    学习 (D1A7 CFB0) and 状态 (D7B4 CCAC) decode as two UTF-8 characters each, 准 (D7BC) as one, 准确 (D7BC C8B7) as
    two, and 模型训练 (C4A3 D0CD D1B5 C1B7) as two with four bad bytes (one damaged run). With 准 that is 7
    characters: read as GB18030 (a DEL, which is ASCII, in another name counts for nothing); with 准确, 8: taken
    for damaged UTF-8 and refused with the UTF-8 fault."""
    import re

    for suffix, good in (("准", 7), ("准确", 8)):
        side = tmp_path / suffix / PT.name
        renames = {"aten::view": "aten::view学习", "aten::mul": "aten::mul状态",
                   "aten::detach": f"aten::detach{suffix}", "aten::transpose": "aten::transpose模型训练",
                   "aten::item": "aten::item\x7f"}
        text = _renamed_trace(side, renames)
        tv = side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        data = text.encode("gbk")
        tv.write_bytes(data)
        runs = set(re.findall(r"[^\x00-\x7f]+", data.decode("utf-8", "replace")))
        assert sum(len(r) - r.count("\ufffd") for r in runs) == good
        assert [r.count("\ufffd") for r in runs if "\ufffd" in r] == [4]
        if good < 8:
            p = load_profile(str(tv.parent.parent), OPTS)
            names = set(p.ops["name"])
            assert {"aten::view学习", "aten::mul状态", "aten::detach准", "aten::transpose模型训练",
                    "aten::item\x7f"} <= names
            assert f"{tv}: the text is not UTF-8; read as GB18030 (torch_npu and MindSpore write in the locale's " \
                   "encoding: GBK / GB18030 on a Chinese-locale machine)" in p.warnings
        else:
            with pytest.raises(ProfileError, match="malformed trace JSON: Invalid UTF-8") as info:
                load_profile(str(tv.parent.parent), OPTS)
            assert info.value.path == str(tv)


def test_mindspore_capture_without_the_npu_activity_names_mindspore_s_activity(tmp_path: Path) -> None:
    """A MindSpore 2.3 / 2.4 export gives its framework ops the category cpu_op (docs/differences.md, "MindSpore
    text exports: what was verified"), so one recorded without the NPU activity is refused as a torch_npu capture
    without it is, and was told to "record it with torch_npu.profiler.ProfilerActivity.NPU", a profiler a
    MindSpore script does not use. The torch_npu fixture's host lane alone (208 cpu_op events, no device lane, no
    kernel_details.csv), in an ``*_ascend_ms`` folder with MindSpore's profiler_info, its lane named "MindSpore"
    as MindSpore names it; the same trace under a torch_npu folder name keeps torch_npu's words, and a folder of
    neither name is told MindSpore's by its "MindSpore" lane alone."""
    from msprof_compare import compare

    events = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    host = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Python"}
    kept = [e for e in events if e.get("pid") in host]
    assert sum(e.get("cat") == "cpu_op" for e in kept) == 208
    ms_lane = [dict(e, args={"name": "MindSpore"}) if e.get("name") == "process_name" else e for e in kept]
    ms_hint = "record it with mindspore.profiler.ProfilerActivity.NPU among the Profiler's activities"
    for name, trace, hint in (("rank-0_20250301120000001_ascend_ms", ms_lane, ms_hint),
                              ("rank-0_20250301120000001_ascend_ms", kept, ms_hint),
                              ("host_1_20250301120000001_ascend_pt", kept,
                               "record it with torch_npu.profiler.ProfilerActivity.NPU"),
                              ("capture", ms_lane, ms_hint)):
        side = tmp_path / name / "ASCEND_PROFILER_OUTPUT"
        side.mkdir(parents=True, exist_ok=True)
        tv = side / "trace_view.json"
        tv.write_text(json.dumps(trace), encoding="utf-8")
        (side.parent / "profiler_info_0.json").write_text(
            json.dumps({"profiler_parameters": {"profiler_level": "Level1"}, "ms_version": "2.4.0"}), encoding="utf-8")
        with pytest.raises(ProfileError) as info:
            compare(str(side.parent), str(tmp_path / "absent"))
        assert info.value.path == str(tv)
        assert info.value.message == ("no NPU device lane (Ascend Hardware, Communication, HCCL or Overlap Analysis) "
                                      "in the trace")
        assert info.value.hint == hint, (name, trace is ms_lane)


def test_capture_without_the_npu_activity_is_refused(tmp_path: Path) -> None:
    """A torch_npu capture recorded without ``ProfilerActivity.NPU`` has torch ops but no device lane (and no
    kernel_details.csv): its device times would all read 0, a 100 % gain against the other side. It is refused
    as a CPU-only Kineto trace is, naming trace_view.json, before the other side is read; the same export with
    its device lanes compares."""
    from msprof_compare import compare

    side = tmp_path / PT.name
    shutil.copytree(PT, side)
    tv = side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text(encoding="utf-8"))
    host = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Python"}
    assert len(host) == 1 and any(e.get("cat") == "cpu_op" for e in events)
    tv.write_text(json.dumps([e for e in events if e.get("pid") in host]), encoding="utf-8")
    (side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    with pytest.raises(ProfileError) as info:
        compare(str(side), str(tmp_path / "absent"))
    assert info.value.path == str(tv)
    assert info.value.message == ("no NPU device lane (Ascend Hardware, Communication, HCCL or Overlap Analysis) "
                                  "in the trace")
    assert info.value.hint == "record it with torch_npu.profiler.ProfilerActivity.NPU"
    # profiler_level Level_none records no device data whatever the activities: the hint names the level
    info_file = side / "profiler_info_0.json"
    info_json = json.loads(info_file.read_text(encoding="utf-8"))
    assert "ProfilerActivity.NPU" in info_json["config"]["common_config"]["activities"]
    info_json["config"]["experimental_config"]["_profiler_level"] = "Level_none"
    info_file.write_text(json.dumps(info_json), encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        compare(str(side), str(tmp_path / "absent"))
    assert info.value.message == ("no NPU device lane (Ascend Hardware, Communication, HCCL or Overlap Analysis) "
                                  "in the trace: it was recorded with profiler_level Level_none, which records no "
                                  "device data")
    assert info.value.hint == "record it again with profiler_level Level0 or higher"
    with pytest.raises(ProfileError) as info:  # every run reads the level, a kernel-only one too
        compare(str(side), str(tmp_path / "absent"), enable_kernel_compare=True)
    assert info.value.message.endswith("it was recorded with profiler_level Level_none, which records no device data")
    shutil.copy(PT / "profiler_info_0.json", info_file)
    assert compare(str(PT), str(PT)).sheet_names
    # each lane the loader reads counts, the "Communication" name of HCCL's lane too (it was not in this check)
    kept = json.loads(tv.read_text(encoding="utf-8"))
    tv.write_text(json.dumps(kept + [{"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "Communication"}}]),
                  encoding="utf-8")
    named = compare(str(side), str(PT), enable_profiling_compare=True).base  # compared, not refused
    assert named.kernels.empty and "Communication" in named.processes["name"].tolist()
    # a MindSpore LevelNone capture has no torch op either: without the level it would read as a legacy timeline
    ms = tmp_path / MS.name
    shutil.copytree(MS, ms)
    (ms / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    ms_tv = ms / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    ms_events = json.loads(ms_tv.read_text(encoding="utf-8"))
    lanes = {e["pid"] for e in ms_events if e.get("name") == "process_name"
             and e["args"]["name"] in ("Ascend Hardware", "HCCL", "Overlap Analysis")}
    assert lanes
    ms_tv.write_text(json.dumps([e for e in ms_events if e.get("pid") not in lanes]), encoding="utf-8")
    (ms / "profiler_info_0.json").write_text(json.dumps({"profiler_parameters": {"profiler_level": "LevelNone"}}),
                                             encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        compare(str(PT), str(ms))
    assert info.value.path == str(ms_tv)
    assert info.value.message.endswith("it was recorded with profiler_level LevelNone, which records no device data")
    (ms / "profiler_info_0.json").write_text(json.dumps({"profiler_parameters": {"profiler_level": "Level1"}}),
                                             encoding="utf-8")
    assert compare(str(PT), str(ms)).sheet_names  # another level: compared as before (the original's zeros)
    # device events on processes the trace does not name: the metadata is what is missing
    shutil.copy(PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", tv)
    unnamed = [e for e in events if e.get("name") != "process_name"]
    tv.write_text(json.dumps(unnamed), encoding="utf-8")
    n = sum(e.get("ph") == "X" for e in unnamed)  # no process is named: every complete event
    with pytest.raises(ProfileError) as info:
        compare(str(side), str(tmp_path / "absent"))
    assert info.value.message == ("no NPU device lane (Ascend Hardware, Communication, HCCL or Overlap Analysis) "
                                  f"is named in the trace: {n:,} complete event(s) lie on processes it gives no "
                                  "name (no process_name record, or an empty one)")
    assert info.value.hint.startswith("the trace's process metadata is missing")
    # kernel_details.csv rows are device data: KernelCompare reads them alone
    shutil.copy(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", side / "ASCEND_PROFILER_OUTPUT")
    tv.write_text(json.dumps([e for e in events if e.get("pid") in host]), encoding="utf-8")
    assert "KernelCompare" in compare(str(side), str(PT), enable_kernel_compare=True).sheet_names


SPREADSHEET = DATA / "spreadsheet"


def test_spreadsheet_rounded_start_times_are_not_matched(tmp_path: Path) -> None:
    """Real kernel_details.csv rows saved through a spreadsheet (``tests/data/npu/spreadsheet``: msinsight's
    test_rank_0 @ 2970b0e8): every Start Time(us) reads ``1.69512E+15``, a time off by up to 5e9 us. Read as a
    time it matched no launching flow (on a copy of the level-1 sample so rounded, the breakdown moved kernels
    from Conv to Vector without a word) and could take C_CORE_SQE tasks of another instant as an MC2 kernel's.
    Such a start is no time: not read (ts -1), said in one warning that names the cause, not counted as "not
    numbers"."""
    from msprof_compare.loaders import ascend_text

    f = SPREADSHEET / "kernel_details.csv"
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["ts"].tolist() == [-1, -1, -1] and not kd["start_read"].any()
    assert kd["Start Time(us)"].tolist() == ["1.69512E+15"] * 3
    assert kd["dur"].tolist() == [496851, 4975266, 5798]  # durations are whole: read as ever
    assert warnings == [f"{f}: 3 Start Time(us) value(s) are rounded to coarser than 1 us (e.g. '1.69512E+15': "
                        "the file was saved by a spreadsheet?); those kernels are not matched (to a launching "
                        "operator, a device task's Input Shapes or C_CORE_SQE tasks)."]
    # a full time in exponent form keeps every microsecond: read as before
    g = tmp_path / "kernel_details.csv"
    g.write_text("Name,Type,Start Time(us),Duration(us)\na,Add,1.695115378713661E+15,1.5\n"
                 "b,Add,1.6951153787136612E+15,1.5\n")
    warnings = []
    kd = ascend_text.read_kernel_details(str(g), warnings)
    assert kd["ts"].tolist() == [1695115378713661000, 1695115378713661200] and warnings == []


def test_fifteen_significant_digits_of_an_epoch_start_are_rounded_too(tmp_path: Path) -> None:
    """A spreadsheet that keeps its 15 significant digits writes the real starts of the excerpt's rows
    (1695115378713661, 1695115378715400.2 and 1695115378722946 us in msinsight's later test_rank_0) as
    ``1.69511537871366E+15``, ``1.6951153787154E+15`` and ``1.69511537872295E+15``: a last digit of 10 us or
    more, no time either (the rule is the exponent against the decimals, not off by one)."""
    from msprof_compare.loaders import ascend_text

    rows = (SPREADSHEET / "kernel_details.csv").read_text().splitlines()
    forms = ["1.69511537871366E+15", "1.6951153787154E+15", "1.69511537872295E+15"]
    g = tmp_path / "kernel_details.csv"
    g.write_text("\n".join([rows[0], *(r.replace("1.69512E+15", v) for r, v in zip(rows[1:], forms, strict=True))]))
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(g), warnings)
    assert kd["ts"].tolist() == [-1, -1, -1] and kd["Start Time(us)"].tolist() == forms
    assert warnings == [f"{g}: 3 Start Time(us) value(s) are rounded to coarser than 1 us (e.g. "
                        "'1.69511537871366E+15': the file was saved by a spreadsheet?); those kernels are not "
                        "matched (to a launching operator, a device task's Input Shapes or C_CORE_SQE tasks)."]


def test_spreadsheet_rounded_memory_times_are_missing() -> None:
    """Real operator_memory.csv rows saved through a spreadsheet (msinsight's test_rank_1 @ 2970b0e8): times of
    six digits put every allocation at one instant (charged to whatever operator spans it, or, as in the
    level-1 sample so rounded, to none: "none of its memory records falls inside a torch op", with no cause
    given). They read as missing (0: the rows are not placed), with one warning that names the cause."""
    from msprof_compare.loaders import ascend_text

    f = SPREADSHEET / "operator_memory.csv"
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert om["alloc_ns"].tolist() == [0, 0, 0] and om["release_ns"].tolist() == [0, 0, 0]
    assert om["Size(KB)"].tolist() == [192.0, 64.0, 1344.0]
    assert warnings == [f"{f}: 3 Allocation Time(us) and 3 Release Time(us) value(s) are rounded to coarser than "
                        "1 us (e.g. '1.69512E+15': the file was saved by a spreadsheet?); read as missing"]


def test_trace_view_event_without_a_pid_or_tid_reads_as_lane_0_as_before(tmp_path):
    """traceio.Event marks an absent pid / tid (``ABSENT_LANE``); the trace_view loader reads it as 0 still: the
    same frames as the events with pid and tid written as 0, and one note of its own, which counts the complete events
    without a pid (all cut) and those without a tid among the ones read (their pid lost, the host events of the
    categories a run with every comparison reads: cpu_op, python_function, enqueue, dequeue)."""
    out = tmp_path / "a" / "ASCEND_PROFILER_OUTPUT"
    shutil.copytree(PT / "ASCEND_PROFILER_OUTPUT", out)
    events = json.loads((out / "trace_view.json").read_text())
    xs = [i for i, e in enumerate(events) if e.get("ph") == "X"]
    for i in xs[::5]:
        del events[i]["pid"], events[i]["tid"]
    (out / "trace_view.json").write_text(json.dumps(events))
    zero = tmp_path / "b" / "ASCEND_PROFILER_OUTPUT"
    shutil.copytree(PT / "ASCEND_PROFILER_OUTPUT", zero)
    for i in xs[::5]:
        events[i].update(pid=0, tid=0)
    (zero / "trace_view.json").write_text(json.dumps(events))
    a, b = (load_profile(str(d / "trace_view.json"), ALL) for d in (out, zero))
    for name in ("ops", "kernels", "flows"):
        fa, fb = getattr(a, name), getattr(b, name)
        assert (fa is None and fb is None) or fa.equals(fb), name
    cut = [events[i] for i in xs[::5]]
    read = sum(e.get("cat", "").lower() in ("cpu_op", "python_function", "enqueue", "dequeue") for e in cut)
    note = (f"{out / 'trace_view.json'}: {len(cut)} complete events without a pid; {read} complete events without a "
            "tid: each read as 0, so they share that lane with one another and with any event written there")
    assert len(cut) == 97 and read > 0
    assert note in a.warnings
    # written as 0, they lie on pid 0, which no process_name record names: said as such instead
    stray = (f"{zero / 'trace_view.json'}: {len(cut)} complete event(s) lie on processes the trace gives no name "
             "(no process_name record, or an empty one), so no lane reads them and they count in no figure")
    assert stray in b.warnings
    assert [w for w in a.warnings if w != note] == [w.replace(str(zero), str(out)) for w in b.warnings if w != stray]


def test_a_task_id_of_minus_one_reads_as_absent_and_moves_no_figure(raw, tmp_path):
    """A literal Task Id of -1 (the DB's NULL; msprof writes uint32, so no export holds it) reads as an absent one,
    without a word: the id feeds only the Kernel Details text of the operator and module sheets, which prints
    None for either (the original prints -1 as written), and no figure. The excerpt with its first three
    hardware tasks' Task Id set to -1 and the key taken from the next two (synthetic): every sheet of an operator
    run equals the unedited excerpt's but for those five kernels' task id in the Kernel Details texts, and the
    loader says nothing of Task Id."""
    import pandas as pd

    from msprof_compare.api import compare
    from msprof_compare.compare.optree import kernel_lines

    ev = json.loads(json.dumps(raw))
    tasks = _hardware_tasks(ev)[:5]
    was = [(e["name"], e["args"]["Task Id"]) for e in tasks]
    for e in tasks[:3]:
        e["args"]["Task Id"] = -1
    for e in tasks[3:]:
        del e["args"]["Task Id"]
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, side)
    (side / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(ev))
    prof = load_profile(str(side), ALL)
    assert prof.kernels["task_id"].tolist()[:5] == [-1] * 5
    assert [line.split(", ")[1] for line in kernel_lines(prof, prof.kernels.iloc[:5])] == ["None"] * 5
    assert not [w for w in prof.warnings if "Task Id" in w]
    flags = {"enable_operator_compare": True, "enable_profiling_compare": True}
    got, want = compare(str(side), str(side), **flags), compare(str(PT), str(PT), **flags)
    assert got.sheet_names == want.sheet_names
    renamed = 0
    for name in want.sheet_names:
        a, b = got.sheet(name), want.sheet(name).copy()
        for col in [c for c in b.columns if str(c).startswith("Kernel Details")]:
            for n, tid in was:  # the unedited text with those tasks' ids as None
                before = b[col].astype(str).str.count(f"{n}, {tid}, ").sum()
                b[col] = b[col].astype(str).str.replace(f"{n}, {tid}, ", f"{n}, None, ", regex=False)
                renamed += before
            a = a.assign(**{col: a[col].astype(str)})
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert renamed > 0
