"""A PyTorch GPU job moved to MindSpore on an NPU (user guide, scenario 3), session 76: a MindSpore 2.3 / 2.4 export
writes its framework ops as cpu_op events under MindSpore's own names, none of which is a PyTorch name, so the
operator sheets paired nothing and the match rate warned that the two profiles "may not be the same workload ...
different models?". The export is built from the level-1 torch_npu sample as MindSpore's profiler writes it (its
host lane named MindSpore with ``Thread <tid>`` lanes, flows named mindspore_to_npu, ``ts`` / ``dur`` as strings,
no Python functions or enqueue / dequeue, a profiler_info_0.json of ``profiler_parameters``, ``ms_version`` and
``cann_version``); the framework op names are modelled on MindSpore's PyNative launch events, none a PyTorch
name. Not real MindSpore output: no public modern MindSpore export exists (docs/differences.md, "MindSpore text
exports: what was verified")."""

from __future__ import annotations

import gzip
import json
import logging
import shutil
from pathlib import Path

import pytest

from msprof_compare import compare
from msprof_compare.compare.checks import CROSSED_RATE, FRAMEWORK_CHECK, NOTE_CHECKS
from msprof_compare.loaders import load_profile
from msprof_compare.model import MS_VERSION, framework_label
from msprof_compare.options import Options

TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
ALEXNET = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
#: The host events torch_npu writes and MindSpore does not
TORCH_ONLY = ("python_function", "enqueue", "dequeue", "fwdbwd", "async_task_queue")


def _mindspore_24(src: Path, dst: Path, info: dict | None = None) -> Path:
    """``src`` laid out as MindSpore 2.4 writes it (module docstring): framework ops stay cpu_op events, renamed
    ``PynativeFramework::LaunchTask::<Op>`` (the ProfilerStep#N marker kept). ``info``: profiler_info_0.json."""
    shutil.copytree(src, dst)
    trace = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    lane = next(e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "Python")
    kept = []
    for e in events:
        if e.get("cat") in TORCH_ONLY:
            continue
        if e.get("pid") == lane and e.get("ph") == "M" and e.get("name") in ("process_name", "thread_name"):
            e["args"]["name"] = "MindSpore" if e["name"] == "process_name" else f"Thread {e['tid']}"
        if e.get("cat") == "cpu_op" and not e["name"].startswith("ProfilerStep#"):
            op = e["name"].rsplit("::", 1)[-1]
            e["name"] = "PynativeFramework::LaunchTask::" + "".join(w.capitalize() for w in op.split("_"))
        if e.get("cat") == "async_npu":
            e["name"] = "mindspore_to_npu"
        for key in ("ts", "dur"):
            if key in e and e.get("ph") in ("X", "s", "f"):
                e[key] = str(e[key])
        kept.append(e)
    trace.write_text(json.dumps(kept))
    (dst / "profiler_metadata.json").unlink()
    for old in dst.glob("profiler_info*.json"):
        old.unlink()
    (dst / "profiler_info_0.json").write_text(json.dumps(info if info is not None else {
        "profiler_parameters": {"profiler_level": "Level1", "activities": ["CPU", "NPU"],
                                "aic_metrics": "PipeUtilization", "with_stack": False, "profile_memory": True},
        "ms_profiler_info": {}, "cann_profiler_info": {}, "ms_version": "2.4.1", "cann_version": "8.0.RC3",
        "jit_level": "O0"}))
    return dst


def _raw_names(events: list[dict], cats: tuple[str, ...]) -> set[str]:
    """The distinct names of the complete events of ``cats``, the ProfilerStep#N markers left out (they hold the
    ops compared)."""
    return {e["name"] for e in events
            if e.get("ph") == "X" and e.get("cat") in cats and not e["name"].startswith("ProfilerStep#")}


def test_a_mindspore_24_side_against_a_pytorch_gpu_trace_is_said_to_name_its_ops_otherwise(
        samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The frameworks note names each side's framework (the MindSpore version its profiler_info_0.json writes) and
    counts the names both sides share (none), read here from the raw files: the GPU trace's host ops are its
    cpu_op, user_annotation and cuda_runtime events (64 names), the MindSpore side's its cpu_op events (123, its
    ProfilerStep#50 marker left out, which the torch_npu export holds too). The match rate is then not judged, and
    nothing says "not the same workload"; the sheets are as they were."""
    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "profiler" / "rank-0_20250301120000001_ascend_ms")
    gpu = json.loads(gzip.open(samples / ALEXNET).read())["traceEvents"]
    nb = _raw_names(gpu, ("cpu_op", "user_annotation", "cuda_runtime"))
    nc = _raw_names(json.loads((ms / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text()), ("cpu_op",))
    assert (len(nb), len(nc), len(nb & nc)) == (64, 123, 0)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(samples / ALEXNET), str(ms))
    guards = res.guards.set_index("Check")
    row = guards.loc[FRAMEWORK_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("note", "PyTorch (Kineto)", "MindSpore 2.4.1")
    assert row["Detail"].startswith(
        "the operator, module and API comparisons pair ops by name, and PyTorch and MindSpore name the same work "
        f"differently: 0 of the {len(nb)} base and {len(nc)} comparison operator names are on both sides, so those "
        "sheets pair none and the operator match rate says nothing of the workload")
    rate = guards.loc["operator match rate"]
    assert rate["Status"] == "unknown" and rate["Detail"].endswith(CROSSED_RATE)
    assert (rate["Base"], rate["Comparison"]) == (0.0, 0.0)
    assert not [m for m in caplog.messages if "may not be the same workload" in m or "different models" in m]
    [line] = [m for m in caplog.messages if m.startswith(NOTE_CHECKS[FRAMEWORK_CHECK])]
    assert line.startswith("Base and comparison were recorded by different frameworks (base PyTorch (Kineto), "
                           "comparison MindSpore 2.4.1): the operator, module and API comparisons pair ops by name")
    assert "OperatorCompareStatistic" in res.sheet_names  # the sheets stay: only the words about them changed
    # the other way round, and against the torch_npu export the MindSpore run was ported from
    swapped = compare(str(ms), str(samples / ALEXNET)).guards.set_index("Check").loc[FRAMEWORK_CHECK]
    assert (swapped["Base"], swapped["Comparison"]) == ("MindSpore 2.4.1", "PyTorch (Kineto)")
    torch_npu = samples / TEXT.format(1)
    npu = compare(str(torch_npu), str(ms), enable_operator_compare=True).guards.set_index("Check")
    names = _raw_names(json.loads((torch_npu / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text()),
                       ("cpu_op",))
    assert (len(names), len(names & nc)) == (133, 0)
    assert (npu.loc[FRAMEWORK_CHECK, "Base"], npu.loc[FRAMEWORK_CHECK, "Comparison"]) == (
        "PyTorch (torch_npu)", "MindSpore 2.4.1")
    assert "0 of the 133 base and 123 comparison operator names are on both sides, so those sheets pair none" \
        in npu.loc[FRAMEWORK_CHECK, "Detail"]
    assert npu.loc["operator match rate", "Status"] == "unknown"


def test_a_profiling_only_run_is_told_what_the_sheets_it_does_not_write_would_pair(samples: Path,
                                                                                  tmp_path: Path) -> None:
    """A profiling-only run writes no operator, module or API sheet: the note says what they would pair, rather
    than naming sheets the workbook does not hold (as the world-size warning does since session 75)."""
    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "profiler" / "rank-0_20250301120000001_ascend_ms")
    res = compare(str(samples / ALEXNET), str(ms), enable_profiling_compare=True)
    assert not {"OperatorCompareStatistic", "ModuleCompareStatistic", "ApiCompare"} & set(res.sheet_names)
    detail = res.guards.set_index("Check").loc[FRAMEWORK_CHECK, "Detail"]
    assert ("operator names are on both sides, so those sheets would pair none (this run writes none of them) and "
            "the operator match rate says nothing of the workload") in detail
    assert "so those sheets pair none" not in detail


def test_pytorch_pairs_and_pytorch_named_copies_get_no_frameworks_note(samples: Path, tmp_path: Path) -> None:
    """Reference pair 4 (PyTorch on both sides) keeps its match-rate warning and gets no frameworks row; so does a
    MindSpore-layout copy that kept PyTorch's op names (aten::, as the test fixtures built from torch_npu exports
    do), whose low rate comes from the GPU trace's [param|cuda] annotation, not from the names."""
    pair4 = compare(str(samples / ALEXNET), str(samples / TEXT.format(1))).guards.set_index("Check")
    assert FRAMEWORK_CHECK not in pair4.index and pair4.loc["operator match rate", "Status"] == "warn"
    copy = tmp_path / "rank-0_20250301120000001_ascend_ms"
    shutil.copytree(samples / TEXT.format(1), copy)
    named = compare(str(samples / ALEXNET), str(copy)).guards.set_index("Check")
    assert FRAMEWORK_CHECK not in named.index and named.loc["operator match rate", "Status"] == "warn"


def test_an_op_name_map_that_pairs_the_names_clears_the_frameworks_note(samples: Path, tmp_path: Path) -> None:
    """The note's advice followed: the torch_npu level-1 export against its MindSpore 2.4 layout, given an
    op_name_map from each MindSpore name to the PyTorch name it was made from (the module's renaming, by hand),
    pairs the ops; the operator match rate is judged again (ok, above 60%) and no row says the frameworks differ.
    Without the map the same pair gets the note and a rate not judged."""
    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "profiler" / "rank-0_20250301120000001_ascend_ms")
    src = json.loads((samples / TEXT.format(1) / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    mapped = {"PynativeFramework::LaunchTask::" + "".join(w.capitalize() for w in n.rsplit("::", 1)[-1].split("_")): n
              for n in _raw_names(src, ("cpu_op",))}
    plain = compare(str(samples / TEXT.format(1)), str(ms)).guards.set_index("Check")
    assert FRAMEWORK_CHECK in plain.index and plain.loc["operator match rate", "Status"] == "unknown"
    guards = compare(str(samples / TEXT.format(1)), str(ms), op_name_map=mapped).guards.set_index("Check")
    assert FRAMEWORK_CHECK not in guards.index
    rate = guards.loc["operator match rate"]
    assert rate["Status"] == "ok" and rate["Base"] >= 0.6 and rate["Comparison"] >= 0.6


def test_two_mindspore_sides_get_no_frameworks_note(samples: Path, tmp_path: Path) -> None:
    """One framework on both sides: the MindSpore 2.4 layout (PynativeFramework::LaunchTask::<Op>) against a
    MindSpore-layout copy that kept aten:: names. Their names differ and the operator match rate is 0 (no op name
    on both sides, by the two sets), yet the frameworks are one: the rate keeps its warning and no row says
    "recorded by different frameworks"."""
    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "a" / "rank-0_20250301120000001_ascend_ms")
    copy = tmp_path / "b" / "rank-0_20250301120000002_ascend_ms"
    shutil.copytree(samples / TEXT.format(1), copy)
    res = compare(str(ms), str(copy))
    assert [framework_label(p) for p in (res.base, res.comparison)] == ["MindSpore 2.4.1", "MindSpore"]
    events = [json.loads((d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text()) for d in (ms, copy)]
    assert not _raw_names(events[0], ("cpu_op",)) & _raw_names(events[1], ("cpu_op",))
    guards = res.guards.set_index("Check")
    assert FRAMEWORK_CHECK not in guards.index
    assert guards.loc["operator match rate", ["Status", "Base", "Comparison"]].tolist() == ["warn", 0.0, 0.0]


@pytest.mark.parametrize(("info", "label"), [
    ({"profiler_parameters": {"profiler_level": "Level1"}}, "MindSpore"),  # no version written
    ({"profiler_parameters": {}, "ms_version": 2.4}, "MindSpore"),  # of the wrong type: not shown
    ({"profiler_parameters": {}, "ms_version": " 2.4.0\n"}, "MindSpore 2.4.0"),
    ({"config": {"experimental_config": {}}, "ms_version": "2.4.0"}, "MindSpore"),  # torch_npu's layout: not read
])
def test_the_mindspore_version_is_read_from_profiler_info_alone(samples: Path, tmp_path: Path, info: dict,
                                                               label: str) -> None:
    """MindSpore's profiler writes ``ms_version`` beside ``profiler_parameters`` in profiler_info_<rank>.json; the
    label shows it where it is text, one line; a side given as its trace_view.json reads no profiler_info.json."""
    ms = _mindspore_24(samples / TEXT.format(0), tmp_path / "rank-0_20250301120000001_ascend_ms", info)
    assert framework_label(load_profile(str(ms), Options())) == label
    alone = load_profile(str(ms / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"), Options())
    assert MS_VERSION not in alone.extra and framework_label(alone) == "MindSpore"


def test_the_json_result_names_each_side_s_framework(samples: Path, tmp_path: Path) -> None:
    """``kind`` / ``source`` read "NPU" / "ascend_text" for a MindSpore export and a torch_npu one alike, so a
    script reading the JSON could not tell which framework a side was recorded by: ``framework`` says it, in the
    frameworks note's words; null for a legacy CANN timeline, which no name tells of. Valid against the schema."""
    from test_json_report import SCHEMA, validate

    from msprof_compare.report.json_report import to_document

    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "profiler" / "rank-0_20250301120000001_ascend_ms")
    doc = to_document(compare(str(samples / ALEXNET), str(ms), enable_profiling_compare=True))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    assert (doc["base"]["framework"], doc["comparison"]["framework"]) == ("PyTorch (Kineto)", "MindSpore 2.4.1")
    assert (doc["comparison"]["kind"], doc["comparison"]["source"]) == ("NPU", "ascend_text")
    # reference pair 9d's base, a CANN timeline of a MindSpore 1.x run
    timeline = "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/" \
               "timeline/msprof_0_2_1.json"
    legacy = to_document(compare(str(samples / timeline), str(samples / TEXT.format(1)),
                                 enable_profiling_compare=True))
    assert (legacy["base"]["framework"], legacy["comparison"]["framework"]) == (None, "PyTorch (torch_npu)")


def test_a_mindspore_db_side_is_not_said_to_lack_cpu_op_events(samples: Path, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """An ascend_mindspore_profiler_*.db is read without PYTORCH_API (reference-1 §6 / §7.2), so its side has no
    torch op whatever it holds; the warning said "(MindSpore 2.5+ exports have none, nor do 2.3 / 2.4 ones without
    cpu_op events)", words of a text export's events, none of which a database holds. The level-1 DB copied under
    MindSpore's name (its PYTORCH_API rows kept, counted here) into an *_ascend_ms folder, against the GPU trace;
    the label and the memory line say MindSpore as before."""
    from dbutil import sql

    src = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    out = tmp_path / "profiler" / "rank-0_20250301120000001_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    db = out / "ascend_mindspore_profiler_0.db"
    shutil.copyfile(src / "ascend_pytorch_profiler_0.db", db)
    assert sql(db, "SELECT count(*) FROM PYTORCH_API")[0][0] > 0  # ops the loader leaves unread, as the original
    (out.parent / "profiler_info_0.json").write_text(json.dumps(
        {"profiler_parameters": {"profiler_level": "Level1"}, "ms_version": "2.5.0"}))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(samples / ALEXNET), str(out.parent))
    why = "a MindSpore DB export's framework ops are not read, as in the original"
    [line] = [m for m in caplog.messages if m.startswith("Can't find any torch op")]
    assert f"only the other side has ops ({why}): the overall and communication comparisons apply" in line
    assert "cpu_op" not in line
    detail = res.guards.set_index("Check").loc["operator match rate", "Detail"]
    assert detail.startswith(f"no operators on the comparison side ({why}): nothing to match")
    assert framework_label(load_profile(str(out.parent), Options())) == "MindSpore 2.5.0"


@pytest.mark.parametrize("name", ["run_2/normal_run/profiler/ascend_timeline_display_1.json",
                                  "run_1/normal_run/profiler/timeline_display_1.json"])
def test_a_mindspore_1x_timeline_file_is_named_mindspore(samples: Path, name: str) -> None:
    """Reference pair 9c's files: no profiler but MindSpore 1.x's writes ``(ascend_)timeline_display_<rank>.json``
    (in a ``profiler`` folder, no ``_ascend_ms`` in the path, no MindSpore lane, no profiler_info.json), so the
    name tells what a CANN timeline (``msprof_*.json``, above: null) does not. The JSON's framework read null."""
    from msprof_compare.report.json_report import _profile as side_record

    p = load_profile(str(samples / "mindinsight/tests/utils/resource" / name), Options())
    assert framework_label(p) == "MindSpore"
    assert side_record(p)["framework"] == "MindSpore"


def test_a_chrome_trace_without_kineto_marks_names_no_framework(samples: Path, tmp_path: Path) -> None:
    """A Chrome-format trace of GPU kernels alone, without any mark of PyTorch's profiler (Kineto's
    ``schemaVersion`` / ``deviceProperties`` / ``distributedInfo``, a host event such as cpu_op or cuda_runtime,
    PyTorch 1.8's capitalised cats), could be another tool's: it was called "PyTorch (Kineto)". The AlexNet trace's
    kernels alone give null; with each mark put back alone, "PyTorch (Kineto)"."""
    from msprof_compare.report.json_report import _profile as side_record

    doc = json.loads(gzip.open(samples / ALEXNET).read())
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) == 79 and doc["schemaVersion"] and doc["deviceProperties"]
    host = next(e for e in doc["traceEvents"] if e.get("cat") == "cuda_runtime")

    def label(top: dict, events: list[dict]) -> str:
        path = tmp_path / "t.json"
        path.write_text(json.dumps({**top, "traceEvents": events}))
        p = load_profile(str(path), Options())
        return side_record(p)["framework"]

    assert label({}, kernels) is None
    assert label({"schemaVersion": doc["schemaVersion"]}, kernels) == "PyTorch (Kineto)"
    assert label({"deviceProperties": doc["deviceProperties"]}, kernels) == "PyTorch (Kineto)"
    assert label({"distributedInfo": {"rank": 0}}, kernels) == "PyTorch (Kineto)"
    assert label({}, [*kernels, host]) == "PyTorch (Kineto)"
    assert label({}, [{**e, "cat": "Kernel"} for e in kernels]) == "PyTorch (Kineto)"


def test_a_slim_result_keeps_each_side_s_framework(samples: Path, tmp_path: Path) -> None:
    """``CompareResult.slim`` drops the tables the framework is told from (a GPU trace's host events and
    deviceProperties, a MindSpore export's profiler_info version), so its JSON read "MindSpore" of a 2.4.1 export
    and null of a Kineto trace: the copy keeps each side's label as the full result gives it."""
    import pickle

    from msprof_compare.report.json_report import to_document

    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "profiler" / "rank-0_20250301120000001_ascend_ms")
    full = compare(str(samples / ALEXNET), str(ms), enable_profiling_compare=True)
    slim = pickle.loads(pickle.dumps(full.slim()))
    frameworks = [(d["base"]["framework"], d["comparison"]["framework"]) for d in map(to_document, (full, slim))]
    assert frameworks == [("PyTorch (Kineto)", "MindSpore 2.4.1")] * 2


def test_the_export_kind_note_names_the_profiler_whose_export_type_to_keep(samples: Path, tmp_path: Path) -> None:
    """The "NPU export kind" note (a text export against a DB export) says how to compare the job alone: "collect
    both runs with one torch_npu export_type", said beside MindSpore sides too, whose profiler has an export_type of
    its own. It names the profiler that wrote both sides (``model.npu_framework``), none where two did: the
    MindSpore 2.4 layout of the level-1 text export against the level-1 DB copied under MindSpore's name (as
    above), then against the torch_npu DB itself; two torch_npu exports keep "torch_npu"."""
    from msprof_compare.compare import checks

    db = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    ms = _mindspore_24(samples / TEXT.format(1), tmp_path / "a" / "rank-0_20250301120000001_ascend_ms")
    out = tmp_path / "b" / "rank-0_20250301120000002_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copyfile(db / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                    out / "ascend_mindspore_profiler_0.db")

    def lead(base: Path, comparison: Path) -> str:
        detail = compare(str(base), str(comparison), enable_profiling_compare=True).guards.set_index("Check").loc[
            checks.EXPORT_CHECK, "Detail"]
        return detail.split(": ", 1)[0]

    said = ("the two kinds define these figures differently (the original's rules), so their difference is partly "
            "the export's, not the job's (to compare the job alone, collect both runs with one {}export_type)")
    assert lead(ms, out.parent) == said.format("MindSpore ")
    assert lead(ms, db) == said.format("")
    assert lead(samples / TEXT.format(1), db) == said.format("torch_npu ") == checks.EXPORT_LEAD[:-2]
