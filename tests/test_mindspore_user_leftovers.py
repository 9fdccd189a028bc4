"""What a first-user pass over MindSpore inputs left (session 69): a zero Wait Time with no word beside the
Notify_Wait time CommunicationCompare shows, step words that spoke only of ProfilerStep#N to a side whose
kernel_details.csv numbers its steps, and CANN PROF_* hints whose paths did not work pasted back. Each figure
here is read from the raw files, not from the code's output."""

from __future__ import annotations

import csv
import gzip
import json
import logging
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc
from test_steps import _mindspore_25

from msprof_compare import compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import detect, load_profile
from msprof_compare.options import Options

#: Why a MindSpore side has no torch op: 2.5+ writes its framework ops with category "", 2.3 / 2.4 as cpu_op events
#: (docs/differences.md, "MindSpore text exports"), so the words name the versions.
MS_NONE = "MindSpore 2.5+ exports have none, nor do 2.3 / 2.4 ones without cpu_op events"
#: The reason for an export whose profiler_info names MindSpore 2.5.0 (``test_steps._mindspore_25``'s)
MS25_NONE = "a MindSpore 2.5.0 export has none, as no 2.5+ one does"

TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
ALEXNET = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
MS_FIXTURE = Path(__file__).resolve().parent / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
CANN_RUNS = "mindinsight/tests/utils/resource/profiler"


def _notify_wait_ms(export: Path) -> str:
    """Every Notify_Wait task's duration in the raw trace_view.json, summed exactly, as ms to 3 places."""
    raw = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    total = sum(Decimal(str(e["dur"])) for e in raw if e.get("ph") == "X" and e.get("name") == "Notify_Wait")
    return f"{total / 1000:,.3f}"


def test_a_zero_wait_time_beside_notify_wait_is_said_under_the_table(samples: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """A GPU trace against the level-1 export laid out as MindSpore 2.5 writes it: its Wait Time reads 0.000s
    (the original's rule takes each group's plane that waits least, here one with no Notify_Wait) while
    CommunicationCompare lists 112 Notify_Wait tasks of 112.541 ms (summed here from the raw trace). The zero
    stays; the line under the table says why and gives that figure. The level-0 export, with no Notify_Wait task,
    gets no such line."""
    ms = _mindspore_25(samples / TEXT.format(1), tmp_path / "rank-0_20250301120000001_ascend_ms")
    raw = json.loads((ms / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    assert len([e for e in raw if e.get("ph") == "X" and e.get("name") == "Notify_Wait"]) == 112
    assert _notify_wait_ms(ms) == "112.541"
    code, out, _err = run_inproc(capsys, "-d", str(ms), "-bp", str(samples / ALEXNET), "-o", str(tmp_path / "out"))
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if "Uncovered Communication Time(Wait Time)" in line).split("|")
    row = next(line for line in lines if line.startswith("| NPU |")).split("|")
    cell = row[[h.strip() for h in header].index("Uncovered Communication Time(Wait Time)")].strip()
    assert cell.endswith("(0.000s)")  # the figure is the original's, unchanged
    legend = lines.index(f"Rows: base first ({samples / ALEXNET}), comparison second ({ms}).")
    said = [line for line in lines[legend + 1:] if line.startswith("Comparison row: its Wait Time")]
    assert said == ["Comparison row: its Wait Time 0.000s is that of the HCCL plane that waits least in each "
                    "communication group, as the original measures a text export, here a plane with no Notify_Wait; "
                    "its planes hold 112.541 ms of Notify_Wait in all (CommunicationCompare's Notify_Wait rows)."]
    res = compare(str(samples / ALEXNET), str(ms), enable_communication_compare=True)
    sheet = res.sheet("CommunicationCompare")
    waits = sheet[sheet["Task Name.1"].astype(str).str.strip() == "Notify_Wait"]
    assert f"{waits['Total Duration(us).1'].sum() / 1000:,.3f}" == "112.541"  # the figure the line names
    level0 = samples / TEXT.format(0)
    assert _notify_wait_ms(level0) == "0.000"
    notes = compare(str(samples / ALEXNET), str(level0), enable_profiling_compare=True).summary["notes"]
    # no plane was picked there: its zero is said to be no reading (no HCCL task at level 0), not a plane's
    assert [n for n in notes if "Wait Time" in n] == [
        "Comparison row: its Wait Time 0.000s is not a measurement: its trace_view.json holds the HCCL communication "
        "ops but no HCCL task (a Level0 export records none; Level1 or Level2 records them), so none reads as "
        "Notify_Wait."]
    # a zero for another reason is not called the pick of a plane without Notify_Wait: the level-1 copy without
    # Plane 0 (the one plane with no Notify_Wait; Planes 1-7 have 16 each) and without its Communication(Not
    # Overlapped) windows, so that every plane waits but no wait lies in uncovered time
    cut = tmp_path / "cut" / "rank0_ascend_pt"
    shutil.copytree(samples / TEXT.format(1), cut)
    trace = cut / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    plane = [e for e in events if lanes.get((e.get("pid"), e.get("tid"))) == "Plane 0"]
    assert plane and not [e for e in plane if e.get("name") == "Notify_Wait"]
    trace.write_text(json.dumps([e for e in events if e not in plane
                                 and e.get("name") != "Communication(Not Overlapped)"]))
    cut_run = compare(str(samples / ALEXNET), str(cut), enable_profiling_compare=True)
    wait = cut_run.summary["headers"].index("Uncovered Communication Time(Wait Time)")
    assert cut_run.summary["rows"][1][wait].strip() == "0.000s(0.000s)"
    assert not [n for n in cut_run.summary["notes"] if "Wait Time" in n]


def test_a_step_asked_of_a_side_without_markers_names_its_kernel_step_ids(samples: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    """The MindSpore-layout fixture has no ProfilerStep# event but a kernel_details.csv whose Step ID column gives
    every kernel step 50 (read here from the file). Asked for step 50, the refusal said only "the profile has no
    ProfilerStep# markers": it now names the column's steps and says the step options do not apply (tried: step
    50 is refused, exit 2). The step count check says the same of a blank side, on one side or both."""
    kernels = MS_FIXTURE / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with kernels.open(newline="") as fh:
        ids = {row["Step ID"] for row in csv.DictReader(fh)}
    assert ids == {"50"}
    trace = MS_FIXTURE / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    assert "ProfilerStep#" not in trace.read_text()
    code, _out, err = run_inproc(capsys, "-d", str(MS_FIXTURE), "-bp", str(MS_FIXTURE), "--base_step", "50",
                                 "--comparison_step", "50", "-o", str(tmp_path / "never"))
    assert code == 2 and error_lines(err) == [
        f"error: {trace}: Invalid step id: 50: the profile has no ProfilerStep# markers, so no step can be chosen; "
        "its kernel_details.csv numbers kernels by step (50), but a step's range is that of its ProfilerStep# "
        "marker, so the step options do not apply to it (both sides: run without --base_step / --comparison_step)"]
    assert not (tmp_path / "never").exists()
    # a side whose kernel_details.csv numbers no step keeps the refusal as it was
    bare = tmp_path / "rank-0_20250101000000001_ascend_ms"
    (bare / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (bare / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_bytes(trace.read_bytes())
    text = kernels.read_text().splitlines()
    (bare / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text(
        "\n".join([text[0], *("N/A" + line[2:] for line in text[1:])]) + "\n")
    code, _out, err = run_inproc(capsys, "-d", str(bare), "-bp", str(bare), "--base_step", "50",
                                 "--comparison_step", "50", "-o", str(tmp_path / "never"))
    assert code == 2 and error_lines(err) == [
        f"error: {bare / 'ASCEND_PROFILER_OUTPUT' / 'trace_view.json'}: Invalid step id: 50: the profile has no "
        "ProfilerStep# markers, so no step can be chosen (both sides: run without --base_step / --comparison_step)"]
    # the step count check: the level-1 torch_npu export (1 marker, ProfilerStep#50) against the fixture
    row = compare(str(samples / TEXT.format(1)), str(MS_FIXTURE), enable_profiling_compare=True
                  ).guards.set_index("Check").loc["step count"]
    assert (row["Status"], row["Base"], row["Comparison"], row["Detail"]) == (
        "unknown", 1, None, "distinct ProfilerStep#N ids in the trace; blank: the comparison side has no "
        "ProfilerStep#N op; the comparison side's kernel_details.csv numbers kernels by step (50), but a step's "
        "range is that of its ProfilerStep# marker, so --base_step / --comparison_step do not apply to that side")
    row = compare(str(bare), str(bare), enable_profiling_compare=True).guards.set_index("Check").loc["step count"]
    assert row["Detail"] == "distinct ProfilerStep#N ids in the trace; blank: neither side has a ProfilerStep#N op"


def test_cann_runs_hint_paths_work_from_where_the_command_ran(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MindInsight's profiler folder of two CANN runs, typed relative to the current directory (its parent): the
    hint named "PROF_..." and "PROF_.../device_0/timeline/msprof_0_2_1.json", from the folder given, which were not
    found pasted back. Each path it names now starts with the folder as typed: tried, each PROF_* folder is
    refused with its own hint of files and the file given is loaded as a trace."""
    folder = samples / CANN_RUNS
    if not folder.is_dir():
        pytest.skip("mindinsight sample absent")
    monkeypatch.chdir(folder.parent)
    with pytest.raises(ProfileError) as err:
        detect("profiler")
    runs = sorted(p.name for p in folder.iterdir())
    example = os.path.join("profiler", runs[0], "device_0", "timeline", "msprof_0_2_1.json")
    assert err.value.hint == (f"it holds 2 CANN PROF_* folders: {os.path.join('profiler', runs[0])}, "
                              f"{os.path.join('profiler', runs[1])}; choose one and pass one of its timeline files, "
                              f"such as {example}")
    assert detect(example).trace_path == os.path.abspath(example)
    for run in runs:  # each folder named, passed as named, lists files that work from here too
        with pytest.raises(ProfileError) as inner:
            detect(os.path.join("profiler", run))
        listed = inner.value.hint.removeprefix("it holds timeline files: ").removesuffix("; pass one of them")
        for path in listed.split(", "):
            assert path.startswith(os.path.join("profiler", run, "device_"))
            assert detect(path).trace_path == os.path.abspath(path)


H200_ALEXNET = (Path(__file__).resolve().parent / "data" / "kineto"
                / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz")


def _no_op_reason(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path) -> tuple[str, str]:
    """The reason the one-sided warning and the memory line give for the comparison side's missing ops."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(comparison))
    [line] = [m for m in caplog.messages if m.startswith("Can't find any torch op in the file: ")]
    return line.split("only the other side has ops (", 1)[1].split(")", 1)[0], res.memory_totals["operators_left_out"]


def test_a_side_without_ops_is_named_by_the_folder_it_lies_in(tmp_path: Path, caplog) -> None:
    """README (MindSpore profiles): an *_ascend_ms folder's trace_view.json may be passed in its place. Given so,
    the MindSpore export was called "a torch_npu export without cpu_op events", and a torch_npu export's
    ASCEND_PROFILER_OUTPUT (here the MindSpore-layout fixture copied as rank0_ascend_pt: no cpu_op event) "MindSpore
    exports"; the folder given was read alone, not the profiling directory around it. Every path of one export
    now gets the words of its folder, in the warning and in the memory line alike."""
    ms = MS_NONE
    npu = "a torch_npu export without cpu_op events has none"
    pt = tmp_path / "rank0_ascend_pt"
    shutil.copytree(MS_FIXTURE, pt)
    for given, why in ((MS_FIXTURE, ms), (MS_FIXTURE / "ASCEND_PROFILER_OUTPUT", ms),
                       (MS_FIXTURE / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", ms),
                       (pt, npu), (pt / "ASCEND_PROFILER_OUTPUT", npu),
                       (pt / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", npu)):
        said = _no_op_reason(caplog, H200_ALEXNET, given)
        assert said == (why, f"the comparison side has no torch op ({why})"), given


def test_operator_matching_options_against_a_side_without_ops_are_said_to_be_ignored(tmp_path: Path, caplog) -> None:
    """A GPU user moving to MindSpore maps aten names to MindSpore's with --op_name_map, or asks for
    --use_input_shape / --max_kernel_num / --transparent_op: a MindSpore export has no torch op, so the operator and
    memory sheets are left out and the options change nothing, which passed without a word (a key naming no op of
    either side even drew advice to copy names from the OperatorCompare sheet the run does not write). Each option
    given now gets the line the original gives an option no comparison reads, with the side's reason; two sides
    with ops get none."""
    why = f"the comparison side has no torch op ({MS_NONE})"
    options = {"op_name_map": {"aten::conv2d": "Conv2D", "aten::nothere": "X"}, "use_input_shape": True,
               "max_kernel_num": 5, "transparent_op": ["ProfilerStep#50"]}
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200_ALEXNET), str(MS_FIXTURE), **options)
    said = [m for m in caplog.messages if "parameter is ignored" in m or "op_name_map" in m]
    assert said == [f"The {name} parameter is ignored: it only takes effect when operators are matched, and {why}."
                    for name in ("max_kernel_num", "use_input_shape", "op_name_map", "transparent_op")]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(MS_FIXTURE), str(MS_FIXTURE), enable_operator_compare=True, use_input_shape=True)
    assert [m for m in caplog.messages if "parameter is ignored" in m] == [
        "The use_input_shape parameter is ignored: it only takes effect when operators are matched, and neither side "
        f"has a torch op ({MS_NONE})."]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200_ALEXNET), str(H200_ALEXNET), enable_operator_compare=True, use_input_shape=True)
    assert not [m for m in caplog.messages if "parameter is ignored" in m]


def test_transparent_op_said_to_be_ignored_between_two_sides_without_ops_is_not_then_refused(caplog) -> None:
    """Two MindSpore exports hold no torch op: --transparent_op is said to be ignored there, and the next line
    refused the same name as naming no operator (exit 1, nothing written), pointing at an OperatorCompare sheet
    the run does not write. The option changes nothing, as against one side with ops, where the run goes on; a
    misspelt name between two sides with ops is still refused (test_transparent_op)."""
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(MS_FIXTURE), str(MS_FIXTURE), transparent_op="Conv2D")
    assert [m for m in caplog.messages if "transparent_op" in m] == [
        "The transparent_op parameter is ignored: it only takes effect when operators are matched, and neither side "
        f"has a torch op ({MS_NONE})."]
    assert "OverallMetrics" in res.sheet_names

def test_the_workbook_says_why_it_has_no_operator_sheets(tmp_path: Path) -> None:
    """A reader of the workbook alone (GPU trace against a MindSpore export) found no OperatorCompare, ModuleCompare,
    MemoryCompare or ApiCompare sheet and no word of why: the one-sided warning is a console line, and the
    Summary's match-rate check said "(a MindSpore or hardware-only profile): nothing to match". The check now
    gives the side's kind in the warning's words and that no sheet pairs operators. Its base figure, 115, is
    the trace's distinct cpu_op, user_annotation, cuda_runtime and cuda_driver names, counted from the raw file."""
    with gzip.open(H200_ALEXNET, "rt") as fh:
        events = json.load(fh)["traceEvents"]
    names = {e["name"] for e in events
             if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")}
    assert len(names) == 115
    tail = ": nothing to match, so no sheet pairs them (operator, module, memory, API) (figures: distinct operator " \
           "names per side); warn below 60%"
    res = compare(str(H200_ALEXNET), str(MS_FIXTURE))
    assert not [n for n in res.sheet_names if n.startswith(("Operator", "Module", "Memory", "Api"))]
    row = res.guards.set_index("Check").loc["operator match rate"]
    assert row.tolist() == ["unknown", 115, 0,
                            f"no operators on the comparison side ({MS_NONE})" + tail]
    other = tmp_path / "rank-0_20250101000000001_ascend_ms"
    shutil.copytree(MS_FIXTURE, other)
    row = compare(str(MS_FIXTURE), str(other)).guards.set_index("Check").loc["operator match rate"]
    assert row.tolist() == ["unknown", 0, 0, f"no operators on either side ({MS_NONE})" + tail]


MS1_TIMELINE = "mindinsight/tests/utils/resource/run_2/normal_run/profiler/ascend_timeline_display_1.json"
FLAGS = ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
         "enable_communication_compare", "enable_api_compare")


def test_kernel_compare_alone_against_a_side_without_ops_names_the_flags_that_apply(samples: Path, caplog,
                                                                                   capsys: pytest.CaptureFixture,
                                                                                   tmp_path: Path) -> None:
    """A GPU job moved to MindSpore (session 74's user walk), run with --enable_kernel_compare alone: the GPU notice
    named all five other flags as taking GPU traces, but the operator, memory and API comparisons each then say
    the MindSpore side has no torch op and write nothing. The notice now says why and names the flags that do
    write a sheet for this pair, which each flag run alone here shows (none for a MindSpore 1.x timeline, which
    has neither E2E time nor communication). The fixture holds no cpu_op event (read from the raw file)."""
    raw = json.loads((MS_FIXTURE / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    assert not [e for e in raw if e.get("cat") == "cpu_op"]
    said = "kernel compare only support between NPU data and NPU data."
    timeline = samples / MS1_TIMELINE
    for side, why, writes in ((MS_FIXTURE, MS_NONE,
                               {"enable_profiling_compare", "enable_communication_compare"}),
                              (timeline, "MindSpore and CANN timelines have none", set())):
        assert {f for f in FLAGS if compare(str(H200_ALEXNET), str(side), **{f: True}).sheet_names} == writes, side
        for base, comp, gpu, other in ((H200_ALEXNET, side, "base", "comparison"),
                                       (side, H200_ALEXNET, "comparison", "base")):
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
                res = compare(str(base), str(comp), enable_kernel_compare=True)
            assert not res.sheet_names
            tail = ("enable_profiling_compare=True and enable_communication_compare=True would add the overall and "
                    "communication comparisons" if writes else "")  # compare()'s words for the flags
            assert [m for m in caplog.messages if m.startswith(said)] == [
                f"{said} (the {gpu} side is a GPU trace; the {other} side has no torch op ({why}), so the operator, "
                "module, memory and API comparisons have nothing to pair"  # the no-op warnings' words
                + (f": {tail})" if tail else ", and no other comparison applies to this pair)")], (base, comp)
    code, _out, err = run_inproc(capsys, "-bp", str(H200_ALEXNET), "-d", str(MS_FIXTURE), "--enable_kernel_compare",
                                 "-o", str(tmp_path))
    assert code == 0 and os.listdir(tmp_path) == []
    assert "comparisons have nothing to pair: --enable_profiling_compare and --enable_communication_compare would " \
           "add the overall and communication comparisons)" in err


def test_help_says_what_a_mindspore_user_passes(tmp_path: Path) -> None:
    """A PyTorch GPU user moved to MindSpore read --help for what to give -d and found "Path of the profiling data"
    and no word of *_ascend_ms (user walk 74; README's MindSpore section names the forms). Every face's help now
    names them, and each named form of the MindSpore-layout fixture is taken, at the level its name says (the
    database: an empty file of that name beside a copy, which detection takes by its name, reference-1 §2.1)."""
    from msprof_compare import cli

    flat = " ".join(cli.build_script_parser().format_help().split())
    forms = "or an Ascend profiling folder of torch_npu (*_ascend_pt) or MindSpore 2.x (*_ascend_ms), its " \
            "ASCEND_PROFILER_OUTPUT, its trace_view.json or its ascend_*_profiler_*.db."
    assert forms in flat and forms in " ".join(cli.HELP_EPILOG.split())
    # the script takes its two paths without -bp / -d: its help names them as its usage line does
    assert "Each path (base_profiling_path, comparison_profiling_path) is a PyTorch Kineto trace" in flat
    assert "-bp, -d" not in flat and "Each path (-bp, -d) is a PyTorch Kineto trace" in " ".join(
        cli.HELP_EPILOG.split())
    out = MS_FIXTURE / "ASCEND_PROFILER_OUTPUT"
    copy = tmp_path / MS_FIXTURE.name
    shutil.copytree(MS_FIXTURE, copy)
    (copy / "ASCEND_PROFILER_OUTPUT" / "ascend_mindspore_profiler_0.db").write_bytes(b"")
    assert [detect(str(p)).level for p in (MS_FIXTURE, out)] == ["profiling", "ascend_output"]
    assert detect(str(out / "trace_view.json")).trace_path == str(out / "trace_view.json")
    assert detect(str(copy / "ASCEND_PROFILER_OUTPUT" / "ascend_mindspore_profiler_0.db")).db_path.endswith(
        "ascend_mindspore_profiler_0.db")


def test_a_mindspore_25_side_is_said_to_have_no_torch_op_not_no_framework_op(samples: Path, tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    """MindSpore 2.5+ writes its framework ops under a MindSpore process lane with category "": they are framework
    ops, none of them a torch op (cpu_op), which is what the comparison reads. The category notes and the memory
    line told a user of such an export that their side "recorded no framework op" / "has no framework op"
    (user walk 74), which their trace_view.json's MindSpore lane contradicts; they now say it has no torch op, as
    the "Can't find any torch op" warning does, and so does the note's title in the log, which read "A profile
    without framework ops counts some work in other categories" above that Detail (its row keeps its key,
    "categories without framework ops", which scripts select it by). The level-1 export laid out so (its Python
    lane named MindSpore, as MindSpore names its framework lane), whose framework ops are counted here from the raw
    file."""
    ms = _mindspore_25(samples / TEXT.format(1), tmp_path / "rank-0_20250301120000001_ascend_ms")
    trace = ms / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    [lane] = [e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
              and e["args"]["name"] == "Python"]
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name" and e["pid"] == lane:
            e["args"]["name"] = "MindSpore"
    trace.write_text(json.dumps(events))
    framework = [e for e in events if e.get("pid") == lane and e.get("ph") == "X" and e.get("cat") == ""]
    assert len(framework) == 860 and not [e for e in events if e.get("cat") == "cpu_op"]
    why = f"the comparison side has no torch op ({MS25_NONE})"
    gpu = compare(str(H200_ALEXNET), str(ms))
    kinds = gpu.guards.set_index("Check").loc["GPU vs NPU categories", "Detail"]
    assert f"{why}, so its Flash Attention, Conv and Matmul rows hold only" in kinds
    assert gpu.memory_totals["operators_left_out"] == why
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        npu = compare(str(samples / TEXT.format(2)), str(ms)).guards.set_index("Check")
    [title] = [m for m in caplog.messages if "counts some work in other categories" in m]
    assert title.startswith("A profile without torch ops counts some work in other categories (base torch ops, "
                            f"comparison no torch op): {why}, so its Flash Attention")
    assert not [m for m in caplog.messages if "framework op" in m]
    row = npu.loc["categories without framework ops"]
    assert (row["Base"], row["Comparison"]) == ("torch ops", "no torch op")
    assert row["Detail"].startswith(f"{why}, so its Flash Attention, Conv and Matmul rows hold only")
    for res in (gpu, npu):
        assert "no framework op" not in json.dumps(res.summary if res is gpu else npu.to_dict())


def test_a_mindspore_side_without_torch_ops_is_not_said_to_speak_for_every_mindspore_version(
        samples: Path, tmp_path: Path, caplog) -> None:
    """MindSpore 2.3 / 2.4 write their framework ops as cpu_op events, 2.5+ with category "" (docs/differences.md,
    "MindSpore text exports"). A 2.4 export against a 2.5 one: the warning said the 2.5 side had no torch op
    because "MindSpore exports have none", while the other side, a MindSpore export too, had them. It now names
    the versions. The level-1 export laid out as each version writes it (its Python lane named MindSpore);
    the cpu_op events of the 2.4 copy are counted from the raw file."""
    def lane_named_mindspore(export: Path, version: str) -> list[dict]:
        trace = export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        events = json.loads(trace.read_text())
        for e in events:
            if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"] == "Python":
                e["args"]["name"] = "MindSpore"
        trace.write_text(json.dumps(events))
        for info in export.glob("profiler_info*.json"):
            info.write_text(json.dumps({"profiler_parameters": {"profiler_level": "Level1"}, "ms_version": version}))
        return events

    old = tmp_path / "rank-0_20250301120000001_ascend_ms"
    shutil.copytree(samples / TEXT.format(1), old)
    ops = [e for e in lane_named_mindspore(old, "2.4.0") if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    assert len(ops) == 860
    new = _mindspore_25(samples / TEXT.format(1), tmp_path / "rank-1_20250301120000002_ascend_ms")
    assert not [e for e in lane_named_mindspore(new, "2.5.0") if e.get("cat") == "cpu_op"]
    why = MS25_NONE  # its profiler_info names 2.5.0: the 2.3 / 2.4 half of the generic reason does not apply
    assert _no_op_reason(caplog, old, new) == (why, f"the comparison side has no torch op ({why})")
    assert not [m for m in caplog.messages if "MindSpore exports have none" in m]


@pytest.mark.parametrize(("version", "why"), [
    ("2.6.0", "a MindSpore 2.6.0 export has none, as no 2.5+ one does"),
    ("2.10.1", "a MindSpore 2.10.1 export has none, as no 2.5+ one does"),
    ("2.4.1", "a MindSpore 2.4.1 export without cpu_op events has none"),
    ("2.3.0rc2", "a MindSpore 2.3.0rc2 export without cpu_op events has none"),
    ("2.2.14", MS_NONE), ("master", MS_NONE), (None, MS_NONE)])
def test_a_mindspore_side_s_no_op_reason_names_the_line_its_version_is_of(samples: Path, tmp_path: Path,
                                                                          version: str | None, why: str) -> None:
    """A MindSpore export with no torch op was told both halves, "2.5+ have none, nor do 2.3 / 2.4 ones without
    cpu_op events", though its profiler_info.json names its version (``ms_version``): the half that applies is
    said, the generic reason where none is written or it is of no such line (2.2, a build named otherwise)."""
    from msprof_compare.compare.optree import no_ops_reason

    ms = _mindspore_25(samples / TEXT.format(1), tmp_path / "rank-0_20250301120000001_ascend_ms")
    for info in ms.glob("profiler_info*.json"):
        info.write_text(json.dumps({"profiler_parameters": {"profiler_level": "Level1"},
                                    **({"ms_version": version} if version else {})}))
    assert no_ops_reason(load_profile(str(ms), Options())) == why
