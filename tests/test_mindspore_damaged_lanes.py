"""Damaged lane ids of a MindSpore run's CANN msprof timeline (msfuzz62): complete events without a pid or tid,
or whose id is not written as an integer within int64, are counted in a warning, as the Kineto loader counts them;
they are read as before (an absent id as 0). Without the note an HCCL op whose tid was lost became a task of plane 0
and its CommunicationCompare row was gone without a word.

Cut at test time from shared/samples/mindinsight's msprof_0_2_1.json (device 0, step 1; see PROVENANCE.md); the
expected rows are picked here from the file's own JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msprof_compare.api import load_profile
from msprof_compare.options import build_options

TIMELINE = ("mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/"
            "timeline/msprof_0_2_1.json")
NOTE = ": each read as 0, so they share that lane with one another and with any event written there"


def _lane_pid(events: list[dict], name: str) -> int:
    return next(e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
                and e["args"]["name"] == name)


def _write(tmp_path: Path, events: list[dict], name: str) -> str:
    path = tmp_path / name / "msprof_0_2_1.json"
    path.parent.mkdir()
    path.write_text(json.dumps(events))
    return str(path)


def test_hccl_op_without_a_tid_is_said_and_read_on_plane_0(samples: Path, tmp_path: Path) -> None:
    events = json.loads((samples / TIMELINE).read_text())
    hccl = _lane_pid(events, "HCCL")
    ops = [i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == hccl and e["tid"] == 70000]
    assert [events[i]["name"] for i in ops] == ["Default/AllReduce-op534_0"]  # the group lane's one op
    opts = build_options(enable_communication_compare=True)[0]
    whole = load_profile(str(samples / TIMELINE), opts)
    assert whole.comm.loc[whole.comm["lane"] == "op", "name"].tolist() == ["Default/AllReduce-op534_0"]
    assert not [w for w in whole.warnings if "without a" in w or "an integer within" in w]
    del events[ops[0]]["tid"]
    path = _write(tmp_path, events, "cut")
    prof = load_profile(path, opts)
    assert [w for w in prof.warnings if NOTE in w] == [f"{path}: 1 complete event without a tid{NOTE}"]
    # read as before: tid 0 is the lane of "Plane 0", so the op is a task there and no op row is left
    assert (prof.comm["lane"] == "op").sum() == 0
    row = prof.comm[prof.comm["name"] == "Default/AllReduce-op534_0"]
    assert row[["lane", "plane", "tid"]].values.tolist() == [["task", "Plane 0", 0]]


def test_hardware_tasks_without_a_pid_or_with_a_nan_tid_are_counted(samples: Path, tmp_path: Path) -> None:
    events = json.loads((samples / TIMELINE).read_text())
    hw = _lane_pid(events, "Ascend Hardware")
    tasks = [i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == hw and "Task Type" in e["args"]]
    for i in tasks[:3]:
        del events[i]["pid"]
    events[tasks[3]]["tid"] = "NaN"
    events[tasks[4]]["tid"] = 10**19
    path = _write(tmp_path, events, "cut")
    prof = load_profile(path, build_options()[0])
    assert [w for w in prof.warnings if "complete event" in w] == [
        f"{path}: 3 complete events without a pid{NOTE}",
        f"{path}: 2 complete events whose tid is not written as an integer within int64 (the first: 'NaN'): each such "
        "value is read as a lane of its own"]


def test_device_task_on_a_process_without_a_name_is_counted(samples: Path, tmp_path: Path) -> None:
    """The HCCL op and two hardware tasks moved to pids no process_name record names (-1, 12345): no lane reads
    them; one note counts them. An event without a pid is said by the lane note alone, not twice."""
    events = json.loads((samples / TIMELINE).read_text())
    hccl, hw = _lane_pid(events, "HCCL"), _lane_pid(events, "Ascend Hardware")
    op = next(i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == hccl and e["tid"] == 70000)
    tasks = [i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == hw and "Task Type" in e["args"]]
    events[op]["pid"] = -1
    events[tasks[0]]["pid"] = events[tasks[1]]["pid"] = 12345
    del events[tasks[2]]["pid"]
    path = _write(tmp_path, events, "cut")
    prof = load_profile(path, build_options(enable_communication_compare=True)[0])
    assert [w for w in prof.warnings if "complete event" in w] == [
        f"{path}: 3 complete event(s) lie on processes the trace gives no name (no process_name record, or an "
        "empty one), so no lane reads them and they count in no figure",
        f"{path}: 1 complete event without a pid{NOTE}"]
    assert (prof.comm["lane"] == "op").sum() == 0
    assert len(prof.kernels) == len(load_profile(str(samples / TIMELINE), build_options()[0]).kernels) - 3


@pytest.mark.parametrize("damage", ["dropped", "emptied"])
def test_hccl_lane_whose_name_record_is_lost_is_said_once(samples: Path, tmp_path: Path, damage: str) -> None:
    """The HCCL process_name record dropped, or its name made "": its op and plane tasks lie on a process without
    a name while the Ascend Hardware lane is found, so the line counting them is said; the missing-lane line that
    follows names the missing HCCL lane without counting those events again (one damage, one count). The count is
    the HCCL process's complete events, from the JSON."""
    events = json.loads((samples / TIMELINE).read_text())
    hccl = _lane_pid(events, "HCCL")
    on_hccl = sum(1 for e in events if e.get("ph") == "X" and e["pid"] == hccl)
    record = next(e for e in events if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] == hccl)
    if damage == "dropped":
        events.remove(record)
    else:
        record["args"]["name"] = ""
    path = _write(tmp_path, events, "cut")
    prof = load_profile(path, build_options(enable_communication_compare=True, enable_profiling_compare=True)[0])
    said = [w for w in prof.warnings if "no name" in w or "HCCL process" in w]
    assert said[0] == (f"{path}: {on_hccl:,} complete event(s) lie on processes the trace gives no name (no "
                       "process_name record, or an empty one), so no lane reads them and they count in no figure")
    assert len(said) == 2 and said[1].startswith(f"{path}: no Communication or HCCL process is named in the trace, "
                                                 "though its Overlap Analysis lane holds")


def test_overlap_spans_of_no_known_kind_are_counted(samples: Path, tmp_path: Path) -> None:
    """The step's one Communication(Not Overlapped) span (41,534.3 us, the whole Uncovered Communication Time)
    written in small letters, and a Free span without a name: the breakdown reads names case-sensitively (as the
    original), so both count in no figure but the E2E window; one note counts them and names the first (the note
    tvfuzz62 wrote for trace_view.json: the CANN timelines take the same path)."""
    events = json.loads((samples / TIMELINE).read_text())
    ovl = _lane_pid(events, "Overlap Analysis")
    spans = [i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == ovl]
    nov = [i for i in spans if events[i]["name"] == "Communication(Not Overlapped)"]
    assert [events[i]["dur"] for i in nov] == [41534.3]
    free = next(i for i in spans if events[i]["name"] == "Free")
    events[nov[0]]["name"] = "communication(not overlapped)"
    del events[free]["name"]
    path = _write(tmp_path, events, "cut")
    prof = load_profile(path, build_options(enable_profiling_compare=True)[0])
    first = "''" if free < nov[0] else "'communication(not overlapped)'"
    assert [w for w in prof.warnings if "Overlap Analysis span(s) have a name other" in w] == [
        f"{path}: 2 Overlap Analysis span(s) have a name other than Computing, Communication, Communication(Not "
        f"Overlapped) or Free (the first: {first}); names are compared exactly, as in the original, so they count in "
        "neither Computing Time nor Uncovered Communication Time, only in the E2E Time and so in Free Time"]
    assert not (prof.overlap["name"] == "Communication(Not Overlapped)").any()
    whole = load_profile(str(samples / TIMELINE), build_options(enable_profiling_compare=True)[0])
    assert not [w for w in whole.warnings if "have a name other" in w]


def test_hccl_tasks_without_a_name_are_counted(samples: Path, tmp_path: Path) -> None:
    """The HCCL planes' tasks without their name: the Wait time is their Notify_Wait tasks' (reference-1 §5.7), so
    the timeline's Wait read 34.20951 ms (pair 9d's OverallMetrics, base) -> 0 with no word; one note counts the
    nameless tasks (the planes' 337, picked from the JSON). Read as before: the figures are unchanged."""
    from msprof_compare.api import compare

    events = json.loads((samples / TIMELINE).read_text())
    hccl = _lane_pid(events, "HCCL")
    tasks = [i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == hccl and e["tid"] != 70000]
    assert len(tasks) == 337
    for i in tasks:
        del events[i]["name"]
    path = _write(tmp_path, events, "cut")

    def wait_ms(side: str) -> float:
        sheet = compare(side, side, enable_profiling_compare=True).sheet("OverallMetrics")
        rows = sheet.loc[sheet.iloc[:, 0] == "\t\tWait"]
        return float(rows.iloc[0, 1]) if len(rows) else 0.0  # no Wait row: the group waited 0

    assert round(wait_ms(str(samples / TIMELINE)), 5) == 34.20951
    assert wait_ms(path) == 0
    assert [w for w in load_profile(path, build_options()[0]).warnings if "without a name" in w] == [
        f"{path}: 337 device tasks on the Ascend Hardware / HCCL lanes without a name (or with an empty one): read as "
        "named \"\", so no figure that goes by name holds them (an HCCL plane's Notify_Wait tasks are its Wait time; "
        "kernels and communication rows are keyed by name)"]
    # an empty name is no name either, counted in the same words (one task: "holds it")
    events = json.loads((samples / TIMELINE).read_text())
    events[tasks[0]]["name"] = ""
    one = _write(tmp_path, events, "one")
    assert [w for w in load_profile(one, build_options()[0]).warnings if "without a name" in w] == [
        f"{one}: 1 device task on the Ascend Hardware / HCCL lanes without a name (or with an empty one): read as "
        "named \"\", so no figure that goes by name holds it (an HCCL plane's Notify_Wait tasks are its Wait time; "
        "kernels and communication rows are keyed by name)"]
