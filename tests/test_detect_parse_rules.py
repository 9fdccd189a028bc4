"""Input detection (``loaders.detect``), path checks (``loaders.paths``) and exact time parsing
(``loaders.numparse``): rules a mutation audit found no test pinning, each against a real fixture
(tests/data/npu, cut from the msinsight samples) or the samples themselves, expected values by hand."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
from test_memory_record_reads import LOST
from test_nested_export_edges import nested_export

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import detect, load_profile
from msprof_compare.options import Options
from msprof_compare.textsafe import short_repr

DATA = Path(__file__).resolve().parent / "data" / "npu"
PT = DATA / "rank0_ascend_pt"
MS = DATA / "profiler" / "rank-0_20250101000000000_ascend_ms"
OPTS = Options(enable_profiling_compare=True)
OUT_OF_RANGE = "out of range (beyond int64 nanoseconds)"


def test_profiler_info_without_rank_suffix_is_read(tmp_path):
    """torch_npu names the file profiler_info.json when the run has no rank id (profiler_info_{rank}.json
    otherwise): both feed the profiler level / AI Core metrics of the Summary's settings note. The fixture's
    file renamed; its experimental_config says _profiler_level "Level1", _aic_metrics
    "ACL_AICORE_PIPE_UTILIZATION" (read with json below)."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    (d / "profiler_info_0.json").rename(d / "profiler_info.json")
    exp = json.loads((d / "profiler_info.json").read_text())["config"]["experimental_config"]
    assert (exp["_profiler_level"], exp["_aic_metrics"]) == ("Level1", "ACL_AICORE_PIPE_UTILIZATION")
    assert detect(str(d)).info_path == str(d / "profiler_info.json")
    p = load_profile(str(d), OPTS)
    assert p.files["profiler_info"] == str(d / "profiler_info.json")
    assert (p.extra["profiler_level"], p.extra["aic_metrics"]) == ("Level1", "ACL_AICORE_PIPE_UTILIZATION")


def test_profiling_directory_without_its_output_folder_is_not_collected(tmp_path):
    """A *_ascend_pt directory copied without ASCEND_PROFILER_OUTPUT holds only profiler_info_0.json and
    profiler_metadata.json: both are JSON objects, but neither is ever taken for a Kineto trace (which would
    fail as "not a trace"); the original's "not collected" error names the directory."""
    d = tmp_path / "rank0_ascend_pt"
    d.mkdir()
    for name in ("profiler_info_0.json", "profiler_metadata.json"):
        shutil.copyfile(PT / name, d / name)
        assert (d / name).read_text().lstrip().startswith("{")
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert err.value.path == str(d)
    assert err.value.message.startswith("The data is not collected by PyTorch or Mindspore mode")
    for gone in ("profiler_metadata.json", "profiler_info_0.json"):  # either file alone: the same
        (d / gone).unlink()
        with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode"):
            load_profile(str(d), OPTS)
        shutil.copyfile(PT / gone, d / gone)


def test_first_profiler_info_by_name_is_read(tmp_path):
    """A profiling directory holding two profiler_info files (another rank's copied in beside it; synthetic: the
    fixture's file copied to profiler_info_1.json with its level edited to Level0) reads the first by name,
    profiler_info_0.json (Level1), whatever the listing order; not the last one matched."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    info = json.loads((d / "profiler_info_0.json").read_text())
    info["config"]["experimental_config"]["_profiler_level"] = "Level0"
    (d / "profiler_info_1.json").write_text(json.dumps(info))
    assert detect(str(d)).info_path == str(d / "profiler_info_0.json")
    assert load_profile(str(d), OPTS).extra["profiler_level"] == "Level1"


def test_two_profiler_databases_are_refused(tmp_path):
    """Two ranks' databases in one ASCEND_PROFILER_OUTPUT (tests/data/db/l1's export copied in twice): the
    original reads whichever the listing gives first, another rank's data on another machine; we refuse
    and name both, sorted."""
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    db = Path(__file__).resolve().parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    for rank in (1, 0):
        shutil.copyfile(db, out / f"ascend_pytorch_profiler_{rank}.db")
    with pytest.raises(ProfileError) as err:
        detect(str(out.parent))
    assert err.value.path == str(out)
    assert err.value.message == ("holds 2 profiler databases (ascend_pytorch_profiler_0.db, "
                                 "ascend_pytorch_profiler_1.db)")
    assert err.value.hint == "pass the .db file to compare"


def test_profiling_directory_never_falls_back_to_a_kineto_trace_beside_its_output(tmp_path):
    """A *_ascend_pt directory whose ASCEND_PROFILER_OUTPUT lost its trace_view.json, with a Kineto trace lying
    beside that folder (a tests/data/kineto excerpt, copied in: synthetic): the NPU export is what the
    directory is, so the error says what the export lacks; the GPU trace is not loaded in its place."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    (d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    kineto = Path(__file__).resolve().parent / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
    shutil.copyfile(kineto, d / kineto.name)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert err.value.path == str(d / "ASCEND_PROFILER_OUTPUT")
    # the fixture's output folder holds these three of the parsed files the message lists
    assert err.value.message == ("holds the parsed kernel_details.csv, memory_record.csv, communication.json but no "
                                 "trace_view.json or ascend_*_profiler_*.db, which the comparison needs")


def test_output_folder_never_falls_back_to_a_kineto_trace_inside_it(tmp_path):
    """The MindSpore-layout fixture's ASCEND_PROFILER_OUTPUT, passed itself, without its trace_view.json and with a
    Kineto trace copied into it (tests/data/kineto's mi300 excerpt: mixed files, synthetic): the GPU trace was
    compared in the export's place without a word, where the *_ascend_ms folder above it is refused (the test
    before). Refused alike, naming the trace and how to compare it; a folder of another name holding a trace and
    a kernel_details.csv stays that trace's folder (pair.input_bytes reads one so)."""
    d = tmp_path / "rank-0_ascend_ms"
    shutil.copytree(MS, d)
    out = d / "ASCEND_PROFILER_OUTPUT"
    (out / "trace_view.json").unlink()
    kineto = Path(__file__).resolve().parent / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
    shutil.copyfile(kineto, out / kineto.name)
    for given in (out, d):
        with pytest.raises(ProfileError) as err:
            detect(str(given))
        assert (err.value.path, err.value.message) == (
            str(out), "holds the parsed kernel_details.csv but no trace_view.json or ascend_*_profiler_*.db, which the "
                      "comparison needs")
    assert err.value.hint == "copy the directory with its trace_view.json, or export the profile again"  # from d
    with pytest.raises(ProfileError) as err:
        detect(str(out))
    assert err.value.hint == ("it holds mi300_rccl_generic_excerpt.pt.trace.json too, no part of the export: pass "
                              "that file itself to compare it as a trace")
    shutil.copyfile(kineto, out / "b.pt.trace.json")  # two such traces: "one of them", not "that file"
    with pytest.raises(ProfileError) as err:
        detect(str(out))
    assert err.value.hint == ("it holds b.pt.trace.json, mi300_rccl_generic_excerpt.pt.trace.json too, no part of the "
                              "export: pass one of them itself to compare it as a trace")
    (out / "b.pt.trace.json").unlink()
    other = tmp_path / "gpu_run"
    out.rename(other)
    layout = detect(str(other))
    assert (layout.level, layout.trace_path) == ("file", str(other / kineto.name))


def test_folder_of_several_named_traces_counts_and_lists_only_those(tmp_path, samples):
    """HTA's execution_trace sample folder (an execution-trace JSON object beside a Kineto trace) with the trace
    copied in as two ranks' *.pt.trace.json.gz (synthetic): the refusal counts and lists the two named
    traces, not the execution trace beside them."""
    src = samples / "hta/tests/data/execution_trace"
    if not src.is_dir():
        pytest.skip("hta execution_trace sample absent")
    d = tmp_path / "run"
    d.mkdir()
    shutil.copyfile(src / "benchmark_simple_add_et.json.gz", d / "benchmark_simple_add_et.json.gz")
    for rank in (0, 1):
        shutil.copyfile(src / "benchmark_simple_add_trace.json.gz", d / f"rank{rank}.pt.trace.json.gz")
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert err.value.message == "directory holds 2 traces (rank0.pt.trace.json.gz, rank1.pt.trace.json.gz)"
    assert err.value.hint == "pass the trace file itself"


def test_trace_view_linked_to_a_directory_is_not_called_broken(tmp_path):
    """ASCEND_PROFILER_OUTPUT/trace_view.json as a symbolic link to a directory (synthetic: the fixture's file
    replaced by a link to its own folder): the link resolves, so it "is not a file"; "a broken symbolic link"
    would send the user looking for a missing target."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    trace = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.unlink()
    trace.symlink_to(d / "ASCEND_PROFILER_OUTPUT", target_is_directory=True)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.message) == (str(trace), "is not a file")


@pytest.mark.parametrize(("names", "named"), [(("msprof_1.db", "msprof_0.db"), "msprof_0.db"),
                                              (("msprof.db",), "msprof.db")])
def test_folder_of_msprof_databases_names_the_first(tmp_path, samples, names, named):
    """A folder holding CANN msprof databases (the msinsight full_db sample's msprof_0.db, copied in as rank 0
    and 1): the refusal names the first by name, msprof_0.db, on every machine. Any msprof*.db counts, as for
    one given alone (``_not_a_profiler_db``): the copy renamed msprof.db (synthetic) is named too."""
    db = samples / "msinsight/server/src/test/test_data/full_db/msprof_0.db"
    if not db.exists():
        pytest.skip("msprof_0.db sample absent")
    for name in names:
        shutil.copyfile(db, tmp_path / name)
    expected = ("a CANN msprof database, which is not supported (pass the ascend_pytorch_profiler_*.db, "
                "ascend_mindspore_profiler_*.db or msmonitor_*.db export)")
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path))
    assert (err.value.path, err.value.message) == (str(tmp_path), f"holds {named}, {expected}")
    with pytest.raises(ProfileError) as err:
        detect(str(tmp_path / named))
    assert err.value.message == expected


def test_parent_hint_names_unparsed_ms_and_unsuffixed_profiling_directories(tmp_path):
    """A parent directory's hint names both kinds of profiling directory: a MindSpore *_ascend_ms one not parsed
    yet (the fixture's, without its ASCEND_PROFILER_OUTPUT: only profiler_info_0.json) and one of any name
    holding an ASCEND_PROFILER_OUTPUT (the torch_npu fixture copied as run_a); sorted by name."""
    ms = tmp_path / MS.name
    ms.mkdir()
    shutil.copyfile(MS / "profiler_info_0.json", ms / "profiler_info_0.json")
    shutil.copytree(PT, tmp_path / "run_a")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(tmp_path))
    assert err.value.hint == ("it holds profiling directories: rank-0_20250101000000000_ascend_ms, run_a; "
                              "pass one of them, one rank per side")


def test_parent_hint_names_profiling_directories_a_level_down(samples):
    """msinsight's text/ folder holds level0/, level1/, level2/, each a parent of ranks: given text/, the hint names
    the ranks by their path from it (listed here with os.walk); it said only that nothing was found. Those folders
    of ranks are inputs too (rank by rank), which it did not say: the first is named. Its parent
    (pytorch/, two levels above the ranks) gets no hint."""
    text = samples / "msinsight/test/data/pytorch/text"
    ranks = sorted(os.path.relpath(os.path.join(root, d), text) for root, dirs, _ in os.walk(text)
                   for d in dirs if d.endswith("_ascend_pt"))
    assert len(ranks) == 5 and all(r.count(os.sep) == 1 for r in ranks)
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(text))
    first = min(r.split(os.sep)[0] for r in ranks)  # a folder of ranks: an input of a rank-by-rank compare
    assert err.value.hint == (f"it holds profiling directories a level down: {', '.join(ranks[:4])}, ... (5 in all); "
                              f"pass one of them, one rank per side; or a folder of ranks on both sides, such as "
                              f"{first}, to compare rank by rank")
    with pytest.raises(ProfileError) as err:
        detect(str(text.parent))
    assert err.value.hint is None


def test_profiling_directories_come_before_timeline_files_in_the_hint(tmp_path, samples):
    """A folder holding a rank's profiling directory (the torch_npu fixture) and a CANN timeline file (the
    mindinsight sample's msprof_1_0_1.json event list) beside it: the hint offers the profiling directory,
    the comparison's own input kind, not the timeline file."""
    timeline = samples / ("mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA/"
                          "device_1/timeline/msprof_1_0_1.json")
    if not timeline.is_file():
        pytest.skip("mindinsight sample absent")
    shutil.copytree(PT, tmp_path / "rank0_ascend_pt")
    shutil.copyfile(timeline, tmp_path / timeline.name)
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(tmp_path))
    assert err.value.hint == "it holds profiling directories: rank0_ascend_pt; pass one of them, one rank per side"


def test_output_folder_without_trace_names_every_parsed_file_it_holds(tmp_path, samples):
    """The msinsight level1 sample's ASCEND_PROFILER_OUTPUT copied without trace_view.json: the message lists the
    six parsed files it knows (kernel_details.csv, op_statistic.csv, operator_memory.csv, memory_record.csv,
    communication.json, step_trace_time.csv: all present there), in that order; not the others (api_statistic.csv,
    l2_cache.csv, ...)."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
    if not src.is_dir():
        pytest.skip("msinsight level1 sample absent")
    out = tmp_path / "ASCEND_PROFILER_OUTPUT"
    out.mkdir()
    for f in src.iterdir():
        if f.name != "trace_view.json":
            shutil.copyfile(f, out / f.name)
    with pytest.raises(ProfileError) as err:
        detect(str(out))
    assert err.value.message == ("holds the parsed kernel_details.csv, op_statistic.csv, operator_memory.csv, "
                                 "memory_record.csv, communication.json, step_trace_time.csv but no trace_view.json "
                                 "or ascend_*_profiler_*.db, which the comparison needs")



@pytest.mark.parametrize(("text", "why"), [
    ("9999999999999999", OUT_OF_RANGE),          # 16 whole digits: 9.999e18 ns > 2**63 - 1 = 9223372036854775807
    ("9223372036854775.808", OUT_OF_RANGE),      # exactly 2**63 ns, one past int64
    ("9300000000000000.0", OUT_OF_RANGE),        # a leading 9 worth 9e18 ns: 9.3e18 > 2**63 - 1
    ("12345678901234567.5", OUT_OF_RANGE),       # 17 whole digits: 1.2e19 ns
    ("-", "not a number"),                       # a sign and no digit
    ("1\x005", "not a number"),                  # a NUL byte inside (zeroed bytes in a damaged file)
])
def test_damaged_time_text_in_a_trace_view_is_named(tmp_path, text, why):
    """The fixture's trace_view.json with the first Ascend Hardware event's ts text replaced (synthetic damage):
    loading names the file and the value, instead of wrapping around int64, reading it as 0 or failing
    with a traceback. The two texts that are no number also as the event's dur."""
    raw = json.loads((PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    hw_pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
                  and e["args"]["name"] == "Ascend Hardware")
    first = next(i for i, e in enumerate(raw) if e.get("ph") == "X" and e["pid"] == hw_pid)
    fields = ("ts", "dur") if why != OUT_OF_RANGE else ("ts",)
    for field in fields:
        events = [dict(e) for e in raw]
        events[first][field] = text
        f = tmp_path / field / "trace_view.json"
        f.parent.mkdir()
        f.write_text(json.dumps(events))
        with pytest.raises(ProfileError) as err:
            load_profile(str(f), OPTS)
        assert err.value.path == str(f)
        # the event named, as a refused decode names it: its index in the event list, its ph and name
        assert err.value.message == (f"invalid trace event: event {first} of the event list (counting from 0; ph 'X', "
                                     f"name {short_repr(raw[first]['name'])}) has {field} {json.dumps(text)}: {why}")


def test_communication_json_as_symbolic_link_is_refused(tmp_path):
    """A side file the text loader reads is checked before it is opened (reference-1 §2.4
    "check_profiling_path" lists communication.json): the fixture's replaced by a symbolic link to the file
    moved elsewhere (synthetic) is refused by name without --force when a run reads it (the profiling
    comparison), and read with it; detection alone no longer refuses it (only some runs read it)."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    side = d / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    side.rename(tmp_path / "elsewhere.json")
    side.symlink_to(tmp_path / "elsewhere.json")
    assert detect(str(d)).level == "profiling"
    with pytest.raises(ProfileError) as err:
        load_profile(str(d), OPTS)
    assert (err.value.path, err.value.message) == (str(side), "is a symbolic link; refusing to follow it")
    forced = load_profile(str(d), Options(enable_profiling_compare=True, force=True))
    assert forced.files["communication.json"] == str(side)
    assert forced.communication == json.loads((tmp_path / "elsewhere.json").read_text())


#: Each side file only some comparisons read: a run that reads it, and one that does not.
READ_BY = {
    "communication.json": (Options(enable_profiling_compare=True), Options(enable_api_compare=True)),
    "memory_record.csv": (Options(enable_memory_compare=True), Options(enable_operator_compare=True)),
    "operator_memory.csv": (Options(enable_memory_compare=True), Options(enable_profiling_compare=True)),
}


@pytest.mark.parametrize("name", sorted(READ_BY))
def test_a_symbolic_link_no_comparison_reads_is_not_refused(samples, tmp_path, name):
    """The original pre-checks all four side files of ASCEND_PROFILER_OUTPUT whether or not the run reads them
    (reference-1 §2.4), so an API-only run was refused for a symbolic-link communication.json it never opens,
    and --force (which also drops the owner, permission and size checks of every file) was the only way on. A
    copy of the msinsight level-1 text export with the file moved and linked back: a run that does not read it
    loads (and has not read it); a run that reads it is refused by name without --force and reads the same data
    through the link with it (memory_record.csv: the memory comparison's quiet read of the peak)."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, d)
    side = d / "ASCEND_PROFILER_OUTPUT" / name
    moved = tmp_path / ("moved_" + name)
    side.rename(moved)
    side.symlink_to(moved)
    reads, skips = READ_BY[name]
    plain = load_profile(str(d), skips)
    assert name not in plain.files
    with pytest.raises(ProfileError) as err:
        load_profile(str(d), reads)
    assert (err.value.path, err.value.message) == (str(side), "is a symbolic link; refusing to follow it")
    forced = load_profile(str(d), Options(**{k: getattr(reads, k) for k in (
        "enable_profiling_compare", "enable_memory_compare")}, force=True))
    assert forced.files[name] == str(side)
    if name == "communication.json":
        assert forced.communication == json.loads(moved.read_text())
    else:  # as many rows as the CSV has lines after its header
        rows = len(moved.read_text(encoding="utf-8").splitlines()) - 1
        got = forced.memory_record if name == "memory_record.csv" else forced.operator_memory
        assert len(got) == rows > 0


def test_metadata_beside_trace_view_as_symbolic_link_is_refused(tmp_path):
    """A folder given with trace_view.json and profiler_metadata.json side by side ("ascend_output" level: the
    fixture's ASCEND_PROFILER_OUTPUT with its profiler_metadata.json beside, synthetic) has that file read
    too (reference-1 §5.10: ``<profiling_path>/profiler_metadata.json``), so it is checked as the other side
    files are: as a symbolic link it is refused by name without --force (it was read unchecked)."""
    d = tmp_path / "flat"
    shutil.copytree(PT / "ASCEND_PROFILER_OUTPUT", d)
    shutil.copyfile(PT / "profiler_metadata.json", tmp_path / "elsewhere.json")
    meta = d / "profiler_metadata.json"
    meta.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.message) == (str(meta), "is a symbolic link; refusing to follow it")
    assert detect(str(d), force=True).level == "ascend_output"
    assert load_profile(str(d), Options(enable_profiling_compare=True, force=True)).files[
        "profiler_metadata.json"] == str(meta)


@pytest.mark.parametrize("problem", ["symlink", "size"])
def test_folder_of_one_kineto_trace_names_the_trace_in_its_checks(tmp_path, monkeypatch, problem):
    """A folder given for the one Kineto trace it holds (the AlexNet excerpt, copied; synthetic: the trace
    moved elsewhere and linked, or the trace cap set below its size): the refusal names the trace, not the
    folder, which is neither a symbolic link nor a file ("run: is a symbolic link" sent the user to a plain
    folder). A trace given as a file is still named as typed."""
    src = DATA.parent / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    d = tmp_path / "run"
    d.mkdir()
    trace = d / "rank0.pt.trace.json.gz"
    monkeypatch.chdir(tmp_path)
    if problem == "symlink":
        shutil.copyfile(src, tmp_path / "elsewhere.pt.trace.json.gz")
        trace.symlink_to(tmp_path / "elsewhere.pt.trace.json.gz")
        want = "is a symbolic link; refusing to follow it"
    else:
        shutil.copyfile(src, trace)
        size = trace.stat().st_size
        monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(size - 1))
        inflated = len(gzip.decompress(src.read_bytes()))
        want = (f"file is {size} bytes ({inflated} decompressed, as its gzip trailer states), over the {size - 1} "
                "byte limit for this kind of file")
    with pytest.raises(ProfileError) as err:
        detect("run")
    assert (err.value.path, err.value.message) == (str(trace), want)
    with pytest.raises(ProfileError) as err:
        detect("run/rank0.pt.trace.json.gz")
    assert (err.value.path, err.value.message) == ("run/rank0.pt.trace.json.gz", want)


def test_folder_given_as_a_symbolic_link_is_refused(tmp_path, monkeypatch):
    """A folder given through a symbolic link is refused as a linked file is (``--force`` accepts it), also where
    it holds one Kineto trace: the later checks look at that trace, a plain file inside the linked folder, not at
    the link given. The AlexNet excerpt copied into a folder, the folder linked (synthetic). A mutant dropping the
    link test of the path given survived."""
    src = DATA.parent / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    real = tmp_path / "real"
    real.mkdir()
    shutil.copyfile(src, real / "rank0.pt.trace.json.gz")
    (tmp_path / "run").symlink_to(real, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProfileError) as err:
        detect("run")
    assert (err.value.path, err.value.message) == ("run", "is a symbolic link; refusing to follow it")
    assert err.value.hint == "add --force to accept it"
    assert detect("run", force=True).trace_path == str(tmp_path / "run" / "rank0.pt.trace.json.gz")


def test_gzip_trace_over_its_cap_gives_the_decompressed_size_the_cap_needs(samples, monkeypatch):
    """The trace cap applies to a gzip trace's decompressed bytes too (the loader refuses past it), but the
    refusal of the file gave only its compressed size: following it (the timesformer H100 trace, 1,218,740 bytes,
    cap raised to 1,300,000) ended in a second refusal, "decompressed trace is over the 1300000 byte limit (its
    gzip trailer gives 17944664 bytes)" (found by the session-43 user review). The first refusal now gives both
    sizes, and a cap of the decompressed size reads the trace."""
    trace = samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    size, inflated = trace.stat().st_size, len(gzip.decompress(trace.read_bytes()))
    assert (size, inflated) == (1_218_740, 17_944_664)
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "1000")
    with pytest.raises(ProfileError) as err:
        detect(str(trace))
    assert err.value.message == (f"file is {size} bytes ({inflated} decompressed, as its gzip trailer states), over "
                                 "the 1000 byte limit for this kind of file")
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(inflated))
    assert load_profile(str(trace), Options(enable_api_compare=True)).kind == "GPU"


def test_gzip_trailer_past_deflates_reach_is_not_quoted(samples, tmp_path, monkeypatch):
    """A truncated gzip trace ends in other bytes than its trailer: the first half of the timesformer H100 trace
    (609,370 bytes) ends in bytes that read as more than deflate's largest expansion of it (1032:1), and the cap's
    refusal quoted the clamp, 628,869,840 bytes, "as its gzip trailer states" (found by the session-43 review).
    Such a trailer states no size: the refusal gives the file's size alone."""
    src = (samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz")
    half = src.read_bytes()[:1_218_740 // 2]
    assert int.from_bytes(half[-4:], "little") > 1032 * len(half)
    trace = tmp_path / "half.json.gz"
    trace.write_bytes(half)
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "1000")
    with pytest.raises(ProfileError) as err:
        detect(str(trace))
    assert err.value.message == "file is 609370 bytes, over the 1000 byte limit for this kind of file"


def test_export_folder_under_another_case_is_named(tmp_path):
    """A profiling folder whose ASCEND_PROFILER_OUTPUT came out lower-cased (the fixture copied so, synthetic):
    it was "not collected by PyTorch or Mindspore mode or not parsed", false of a parsed export, and its parent's
    hint to pass the folder led to that same line. It names the folder and the rename; the original's
    case-sensitive lookup is kept."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    (d / "ASCEND_PROFILER_OUTPUT").rename(d / "ascend_profiler_output")
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(d), "holds ascend_profiler_output, not ASCEND_PROFILER_OUTPUT: the name is case-sensitive",
        "rename it to ASCEND_PROFILER_OUTPUT")
    (d / "ascend_profiler_output").rename(d / "ASCEND_PROFILER_OUTPUT")
    assert detect(str(d)).level == "profiling"


def test_export_nested_in_its_own_folder_is_named(tmp_path):
    """The MindSpore-layout fixture with its ASCEND_PROFILER_OUTPUT moved into a new one (what ``cp -r
    ASCEND_PROFILER_OUTPUT run/`` does where run/ASCEND_PROFILER_OUTPUT is there already; synthetic): the folder
    read as "not collected by PyTorch or Mindspore mode or not parsed" without a word of the export a level down,
    and a side file left in the outer folder as "copy the directory with its trace_view.json". Both keep their
    line and name the nested copy and the move to make; the files moved up, it loads."""
    d, out = nested_export(tmp_path)
    hint = (f"it holds ASCEND_PROFILER_OUTPUT{os.sep}trace_view.json a level down, a copy nested in a folder of its "
            f"own name (as cp -r onto an existing ASCEND_PROFILER_OUTPUT makes): move that folder's files up into "
            f"{out}")
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.hint) == (str(out), hint)
    assert err.value.message.startswith("The data is not collected by PyTorch or Mindspore mode")
    shutil.copy(out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", out)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.message, err.value.hint) == (
        "holds the parsed kernel_details.csv but no trace_view.json or ascend_*_profiler_*.db, which the comparison "
        "needs", hint)
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").rename(out / "trace_view.json")
    assert detect(str(d)).trace_path == str(out / "trace_view.json")


@pytest.mark.parametrize("name", ["TRACE_VIEW.JSON", "Trace_View.json", "trace_view.JSON.gz"])
@pytest.mark.parametrize("level", ["profiling", "ascend_output"])
def test_trace_named_in_another_case_is_named(tmp_path, name, level):
    """The MindSpore-layout fixture with its trace_view.json renamed in another case (a copy through a tool that
    changed it; synthetic): the folder read as "holds the parsed kernel_details.csv but no trace_view.json", false
    of the trace that is there. Named with the rename to do, from the export's folder and from
    ASCEND_PROFILER_OUTPUT passed itself; the lookup stays case-sensitive, as for ASCEND_PROFILER_OUTPUT."""
    d = tmp_path / "rank-0_ascend_ms"
    shutil.copytree(MS, d)
    out = d / "ASCEND_PROFILER_OUTPUT"
    data = (out / "trace_view.json").read_bytes()
    (out / "trace_view.json").unlink()
    (out / name).write_bytes(gzip.compress(data) if name.lower().endswith(".gz") else data)
    with pytest.raises(ProfileError) as err:
        detect(str(d if level == "profiling" else out))
    lower = name.lower()
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(out), f"holds {name}, not {lower}: the name is case-sensitive", f"rename it to {lower}")
    (out / name).rename(out / lower)
    assert detect(str(d)).trace_path == str(out / lower)


def test_side_file_named_in_another_case_is_named(tmp_path):
    """The MindSpore-layout fixture's kernel_details.csv renamed Kernel_Details.csv, and the torch_npu fixture's
    memory_record.csv renamed MEMORY_RECORD.CSV (synthetic): each read as absent, as the lookup stays
    case-sensitive, and the original's "The file ... does not exist." now names the file that is there and the
    rename; a file that is truly missing (the MindSpore fixture has no memory_record.csv) gets what it costs and
    what to do instead (test_memory_record_reads)."""
    ms = tmp_path / "rank-0_ascend_ms"
    shutil.copytree(MS, ms)
    out = ms / "ASCEND_PROFILER_OUTPUT"
    (out / "kernel_details.csv").rename(out / "Kernel_Details.csv")
    p = load_profile(str(ms), OPTS)
    assert p.kernel_details is None and "kernel_details.csv" not in p.files
    assert f"{out}: The file kernel_details.csv does not exist. (Kernel_Details.csv is there: the name is " \
           "case-sensitive; rename it to kernel_details.csv)" in p.warnings
    assert f"{out}: The file memory_record.csv does not exist. ({LOST})" in p.warnings
    pt = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, pt)
    out = pt / "ASCEND_PROFILER_OUTPUT"
    (out / "memory_record.csv").rename(out / "MEMORY_RECORD.CSV")
    p = load_profile(str(pt), OPTS)
    assert f"{out}: The file memory_record.csv does not exist. (MEMORY_RECORD.CSV is there: the name is " \
           "case-sensitive; rename it to memory_record.csv)" in p.warnings
    assert p.memory_record is None


def test_nested_folder_without_an_export_keeps_the_plain_error(tmp_path):
    """An ASCEND_PROFILER_OUTPUT inside ASCEND_PROFILER_OUTPUT that holds no trace or database (its CSVs alone) is
    no export to point at: the error keeps its hint-less line."""
    d = tmp_path / "rank-0_ascend_ms"
    inner = d / "ASCEND_PROFILER_OUTPUT" / "ASCEND_PROFILER_OUTPUT"
    inner.mkdir(parents=True)
    shutil.copy(MS / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", inner)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert err.value.hint is None


def test_profiler_info_over_the_text_cap_is_refused_by_name(tmp_path, monkeypatch):
    """profiler_info_0.json is read whole, so the text-file size cap applies to it: the fixture without its CSV
    and communication side files, with the cap set between the sizes of profiler_metadata.json and
    profiler_info_0.json (os.stat below): the refusal names profiler_info_0.json and its size."""
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    for name in ("kernel_details.csv", "memory_record.csv", "communication.json"):
        (d / "ASCEND_PROFILER_OUTPUT" / name).unlink()
    info = d / "profiler_info_0.json"
    size = info.stat().st_size
    assert (d / "profiler_metadata.json").stat().st_size < size - 1
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TEXT_BYTES", str(size - 1))
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert err.value.path == str(info)
    assert err.value.message == f"file is {size} bytes, over the {size - 1} byte limit for this kind of file"


def test_database_over_its_cap_is_named_as_given(tmp_path, monkeypatch):
    """A profiler .db given directly (tests/data/db/l1's, copied) over the database size cap: the refusal names
    it as the user typed it (a relative path here), as every other message about the given path does."""
    db = Path(__file__).resolve().parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(db, tmp_path / db.name)
    size = db.stat().st_size
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MSPROF_COMPARE_MAX_DB_BYTES", str(size - 1))
    with pytest.raises(ProfileError) as err:
        detect(db.name)
    assert err.value.path == db.name
    assert err.value.message == f"file is {size} bytes, over the {size - 1} byte limit for this kind of file"


def test_blocks_released_before_allocation_are_counted_apart_from_negative_sizes(tmp_path, samples):
    """operator_memory.csv: the warning counts each oddity by itself. The first three rows of the msinsight
    level1 sample's file that have a Release Time, the last two with their Allocation and Release Time swapped
    (synthetic), no size negative: two blocks released before their allocation, zero negative sizes."""
    import csv

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    if not src.is_file():
        pytest.skip("msinsight level1 sample absent")
    with src.open(newline="") as fh:
        header, *rows = list(csv.reader(fh))
    a, r = header.index("Allocation Time(us)"), header.index("Release Time(us)")
    rows = [row for row in rows if row[r].strip()][:3]
    for row in rows[1:]:
        row[a], row[r] = row[r], row[a]
    assert sum(float(row[header.index("Size(KB)")]) < 0 for row in rows) == 0
    assert sum(float(row[r]) < float(row[a]) for row in rows) == 2
    d = tmp_path / "rank0_ascend_pt"
    shutil.copytree(PT, d)
    f = d / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
    with f.open("w", newline="") as fh:
        csv.writer(fh).writerows([header, *rows])
    p = load_profile(str(d), Options(enable_memory_compare=True))
    assert f"{f}: 2 block(s) released before their allocation (duration read as 0)" in p.warnings


def test_lenient_time_parse_reads_a_plus_sign():
    """``lenient_us_to_ns`` (the CSV loader's parse) reads ``[+-]digits[.digits]``, a leading "+" included, and
    marks what is no number unread. By hand: +7.5 us = 7500 ns, 12 us = 12000, -0.25 us = -250."""
    from msprof_compare.loaders.numparse import lenient_us_to_ns

    ns, read = lenient_us_to_ns(["+7.5", "12", "-0.25", "N/A"])
    assert ns.tolist()[:3] == [7500, 12000, -250] and read.tolist() == [True, True, True, False]


def test_unparsed_profiling_directory_says_to_parse_it(tmp_path):
    """A torch_npu profiling directory recorded with parsing off (dynamic_profile's default ``analyse: false``)
    holds the profiler's raw PROF_* folder and FRAMEWORK beside profiler_info, but no ASCEND_PROFILER_OUTPUT: the
    original's "not collected ... or the data is not parsed" left the user to guess which; the hint names the raw
    folder and the offline parse. A directory copied without its output folder and without raw data (only
    profiler_info) keeps the bare message."""
    d = tmp_path / "rank0_ascend_pt"
    (d / "PROF_000001_20250101000000000_ABCDEFGH" / "device_0" / "data").mkdir(parents=True)
    (d / "FRAMEWORK").mkdir()
    shutil.copyfile(PT / "profiler_info_0.json", d / "profiler_info_0.json")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(d))
    assert err.value.hint == ("it holds the profiler's raw data, PROF_000001_20250101000000000_ABCDEFGH, but no "
                              "ASCEND_PROFILER_OUTPUT: the profile was recorded without parsing; parse it offline "
                              "(torch_npu: torch_npu.profiler.profiler.analyse(FOLDER); MindSpore: its Profiler's "
                              "offline analyse), then pass this folder")
    shutil.rmtree(d / "PROF_000001_20250101000000000_ABCDEFGH")
    with pytest.raises(ProfileError, match="not collected by PyTorch or Mindspore mode") as err:
        detect(str(d))
    assert err.value.hint is None


def test_a_folder_or_raw_file_inside_an_export_names_the_profiling_directory(tmp_path, capsys, monkeypatch):
    """torch_npu writes its raw data beside ASCEND_PROFILER_OUTPUT: ``PROF_*/device_0/data``, ``PROF_*/host``,
    ``FRAMEWORK``. A user who opened the export and passed one of those folders (or a raw file in them) was told
    only that the data "is not collected by PyTorch or Mindspore mode or ... not parsed"; the hint now names the
    profiling directory it lies in, as the user typed it (the export given as the hint says compares: the fixture
    export against itself). A folder outside any export keeps the bare message."""
    from tests.cliutil import error_lines, run_inproc

    d = tmp_path / "run_ascend_pt"
    shutil.copytree(PT, d)
    prof = d / "PROF_000001_20250101000000000_ABCDEFGH"
    (prof / "device_0" / "data").mkdir(parents=True)
    (prof / "host" / "data").mkdir(parents=True)
    (prof / "device_0" / "data" / "aicore.data.0.slice_0").write_bytes(b"\0" * 16)
    (d / "FRAMEWORK").mkdir()
    monkeypatch.chdir(tmp_path)
    bare = ("The data is not collected by PyTorch or Mindspore mode or the data is not parsed: no trace_view.json, "
            "profiler *.db or *.pt.trace.json found")
    for typed, head in (("run_ascend_pt/PROF_000001_20250101000000000_ABCDEFGH", "run_ascend_pt"),
                        ("run_ascend_pt/PROF_000001_20250101000000000_ABCDEFGH/device_0/", "run_ascend_pt"),
                        ("run_ascend_pt/FRAMEWORK", "run_ascend_pt"),
                        ("./run_ascend_pt/PROF_000001_20250101000000000_ABCDEFGH/host/data", "./run_ascend_pt")):
        code, _, err = run_inproc(capsys, "-bp", "run_ascend_pt", "-d", typed, "-o", str(tmp_path / "out"))
        hint = f"it is a folder inside the NPU profiling directory {head}: pass that"
        assert (code, error_lines(err)) == (1, [f"error: {typed}: {bare} (comparison side: {hint})"])
    raw = "run_ascend_pt/PROF_000001_20250101000000000_ABCDEFGH/device_0/data/aicore.data.0.slice_0"
    code, _, err = run_inproc(capsys, "-bp", "run_ascend_pt", "-d", raw, "-o", str(tmp_path / "out"))
    assert (code, error_lines(err)) == (1, [f"error: {raw}: Invalid profiling path suffix: aicore.data.0.slice_0 "
                                            f"(comparison side: a "
                                            "file of an NPU profiling export: pass the profiling directory it "
                                            "belongs to, run_ascend_pt)"])
    with pytest.raises(ProfileError) as info:  # typed from inside the export: named relative to there
        monkeypatch.chdir(d)
        detect("FRAMEWORK")
    assert info.value.hint == "it is a folder inside the NPU profiling directory .: pass that"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ProfileError) as info:
        detect("elsewhere")
    assert info.value.hint is None
    code, _, _ = run_inproc(capsys, "-bp", "run_ascend_pt", "-d", "run_ascend_pt", "--enable_profiling_compare",
                            "-o", str(tmp_path / "out"))
    assert code == 0


def test_an_empty_path_is_refused_by_the_loaders_own_entry_points():
    """``detect`` and ``load_profile`` are the loaders' entry points a library caller may use without
    ``compare()`` (which refuses an empty path first): "" is the original's one line there too, with no path to
    name, not a look-up of the current directory."""
    for call in (lambda: detect(""), lambda: load_profile("", OPTS)):
        with pytest.raises(ProfileError) as info:
            call()
        assert str(info.value) == "The path is empty. Please enter a valid path." and info.value.path is None


def test_a_mistyped_trace_name_is_matched_only_in_a_folder_of_at_most_10000_entries(tmp_path):
    """The "did you mean" hint of a missing input reads at most 10,000 of its folder's entries: a folder of
    10,000 (the bundled h100 trace and 9,999 others) still names the near name, one more entry names none (no
    scan of a huge folder for an error message). The trace is the repository's sample_data file."""
    shutil.copy(DATA.parents[2] / "sample_data" / "bert-small_h100.json.gz", tmp_path)
    for i in range(9_999):
        (tmp_path / f"f{i:05d}.txt").touch()
    typed = str(tmp_path / "bert-smal_h100.json.gz")
    missing = f"{typed}: no such file or directory"
    with pytest.raises(ProfileError) as info:
        detect(typed)
    assert str(info.value) == f"{missing} (did you mean {tmp_path / 'bert-small_h100.json.gz'}? that exists)"
    (tmp_path / "f10000.txt").touch()
    with pytest.raises(ProfileError) as info:
        detect(typed)
    assert str(info.value) == missing and info.value.hint is None


def test_two_neighbouring_letters_swapped_in_a_short_name_get_the_near_name(tmp_path, monkeypatch):
    """``rnus`` for ``runs``: two neighbouring letters swapped, one slip, which difflib's ratio counts as two edits
    (0.75 in four letters, under the 0.8 cutoff), so the line named no folder, where the flags' hint takes a swap
    as one (``--hlep``: --help). The same rule here: the last name, the first missing one higher up, and a folder's
    name typed with its slash. No more than that: letters swapped that are not neighbours (``nurs``), a letter
    changed (``ruis``) or three moved (``rnsu``) name nothing, as before."""
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    for typed, meant in (("rnus", "runs? that exists"), ("urns", "runs? that exists"), ("rusn", "runs? that exists"),
                         ("rnus/", "runs/? that exists"), ("rnus/rank0/t.json", "runs/rank0/t.json? runs exists"),
                         ("nurs", None), ("ruis", None), ("rnsu", None)):
        with pytest.raises(ProfileError) as info:
            detect(typed)
        hint = f" (did you mean {meant})" if meant else ""
        assert str(info.value) == f"{typed}: no such file or directory{hint}", typed
