"""Rules of the Ascend text loader a mutation audit found unguarded: which process is a lane, how flows pair
whatever the event order, what a CSV cell at a boundary reads as and what is counted in a warning.

Inputs are the NPU excerpt of tests/data/npu (cut from msinsight text level1 rank0) and the msinsight text
level1 rank0 sample, edited in tmp_path where no sample has the case; expected values come from the json /
csv modules and decimal arithmetic, never from the loader."""

from __future__ import annotations

import csv
import io
import json
import shutil
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from msprof_compare import model
from msprof_compare.api import compare
from msprof_compare.compare import breakdown_npu
from msprof_compare.errors import ProfileError, StepError
from msprof_compare.loaders import ascend_text, load_profile, traceio
from msprof_compare.model import Profile
from msprof_compare.options import Options

PT = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
OPTS = Options(enable_profiling_compare=True)
LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def ns(v) -> int:
    """Decimal us -> whole ns, ties to even (the loader's rule), computed with decimal."""
    return int((Decimal(str(v).strip()) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _excerpt(tmp_path: Path) -> Path:
    dst = tmp_path / "x_ascend_pt"
    shutil.copytree(PT, dst)
    return dst


def _trace(d: Path) -> tuple[Path, list[dict]]:
    f = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    return f, json.loads(f.read_text())


def _with_trace(tmp_path: Path, events: list[dict]) -> tuple[Path, Path]:
    """A copy of the excerpt whose trace_view.json holds ``events``: (the export folder, the trace)."""
    out = shutil.copytree(PT, tmp_path / PT.name)
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.write_text(json.dumps(events))
    return out, trace


def _pid_of(events: list[dict], name: str) -> int:
    return next(e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
                and e["args"]["name"] == name)


def _edited_csv(f: Path, cells: dict[tuple[int, str], str], extra: dict[str, list[str]] | None = None) -> Path:
    """Rewrite the CSV ``f`` with ``cells`` ((data row, column) -> text) replaced and ``extra`` columns appended."""
    rows = list(csv.reader(io.StringIO(f.read_text(encoding="utf-8"), newline="")))
    for (i, col), text in cells.items():
        rows[1 + i][rows[0].index(col)] = text
    for col, values in (extra or {}).items():
        rows[0].append(col)
        for row, v in zip(rows[1:], values, strict=True):
            row.append(v)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    f.write_text(out.getvalue(), encoding="utf-8", newline="")
    return f


def _kernel_details(tmp_path: Path, cells: dict[tuple[int, str], str],
                    extra: dict[str, list[str]] | None = None) -> tuple[Path, list[dict]]:
    """A copy of the excerpt's kernel_details.csv (20 rows) edited; returns it and its rows as the csv module
    reads them."""
    f = tmp_path / "kernel_details.csv"
    shutil.copy(PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", f)
    _edited_csv(f, cells, extra)
    with open(f, newline="", encoding="utf-8") as fh:
        return f, list(csv.DictReader(fh))


# --------------------------------------------------------------------------- lanes


def test_process_named_communication_is_the_hccl_lane(tmp_path):
    """reference-1 §5.1: a process named "Communication" is the HCCL lane as "HCCL" is (the excerpt's HCCL process
    renamed, synthetic: no sample writes that name): its complete events are the communication rows."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    pid = _pid_of(events, "HCCL")
    for e in events:
        if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] == pid:
            e["args"]["name"] = "Communication"
    f.write_text(json.dumps(events))
    n = sum(e.get("ph") == "X" and e["pid"] == pid for e in events)
    p = load_profile(str(d), OPTS)
    assert n > 0 and len(p.comm) == n
    assert p.extra["hccl_pid"] == pid and set(p.comm["pid"]) == {pid}


def test_hccl_events_without_a_group_lane_are_warned(tmp_path):
    """reference-1 §5.1: a plane lane attaches to the group lane sorted before it. The excerpt's HCCL lane without
    its thread_name records (synthetic) has no group lane: every event is a task of no group, and so counts in no
    communication figure, which one warning now says (the figures read 0 without a word)."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    pid = _pid_of(events, "HCCL")
    events = [e for e in events if not (e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == pid)]
    f.write_text(json.dumps(events))
    n = sum(e.get("ph") == "X" and e["pid"] == pid for e in events)
    p = load_profile(str(d), OPTS)
    assert n > 0 and len(p.comm) == n and set(p.comm["group"]) == {""}
    assert [w for w in p.warnings if "HCCL" in w] == [
        f"{f}: {n} of the HCCL lane's {n} event(s) belong to no communication group lane (no thread named "
        "'... Communication' sorts before their thread); they count in no communication figure"]


@pytest.mark.parametrize("lane", ["HCCL", "Ascend Hardware", "Overlap Analysis"])
def test_a_lane_of_pid_minus_one_is_read(tmp_path, lane):
    """A lane's pid of -1 is a pid like any other, not "no such lane" (the loader once marked a missing lane with
    -1, and the lane's events were lost without a word): the excerpt's lane moved to pid -1 (synthetic) keeps its
    events, and the HCCL lane its groups."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    pid = _pid_of(events, lane)
    for e in events:
        if e.get("pid") == pid:
            e["pid"] = -1
    f.write_text(json.dumps(events))
    n = sum(e.get("ph") == "X" and e["pid"] == -1 for e in events)
    p = load_profile(str(d), OPTS)
    got = {"HCCL": p.comm, "Ascend Hardware": p.kernels, "Overlap Analysis": p.overlap}[lane]
    assert n > 0 and got is not None and len(got) == n
    if lane == "HCCL":
        assert p.extra["hccl_pid"] == -1 and breakdown_npu.hccl_lanes(p)


@pytest.mark.parametrize("where", ["before", "after"])
def test_of_two_same_named_processes_the_one_named_last_counts(tmp_path, where):
    """Two processes named "Ascend Hardware" (the excerpt plus a one-task process 7, synthetic): the kernels are
    those of the process whose process_name record comes last in the file."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    real = _pid_of(events, "Ascend Hardware")
    fake = [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "Ascend Hardware"}},
            {"ph": "X", "name": "FakeTask", "pid": 7, "tid": 0, "ts": "1736408883731500.000", "dur": "1.0",
             "args": {"Task Type": "AI_CORE", "Stream Id": 2, "Task Id": 1}}]
    f.write_text(json.dumps(fake + events if where == "before" else events + fake))
    k = load_profile(str(d), OPTS).kernels
    if where == "before":
        assert set(k["pid"]) == {real}
        assert len(k) == sum(e.get("ph") == "X" and e["pid"] == real for e in events) > 1
    else:
        assert k["name"].tolist() == ["FakeTask"] and k["ts"].tolist() == [1736408883731500000]


# --------------------------------------------------------------------------- flows


@pytest.mark.parametrize("order", ["reversed", "by start"])
def test_flows_pair_by_category_and_id_in_any_event_order(samples, tmp_path, order):
    """The sample's trace writes its 27 fwdbwd flows before its 210 async_npu flows, each start before its end.
    Event order carries no meaning in a Chrome trace: written reversed (an end comes first) or sorted by start
    (the two categories interleave), every (category, id) still pairs its start with its end, and the backward
    thread is the tid of the last fwdbwd end in the file."""
    raw = json.loads((samples / LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    if order == "reversed":
        events = raw[::-1]
    else:
        events = [e for e in raw if e.get("ph") == "M"] + sorted(
            (e for e in raw if e.get("ph") != "M"), key=lambda e: Decimal(str(e["ts"])))
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(events))
    p = load_profile(str(f), Options(enable_operator_compare=True))
    for cat, n in (("async_npu", 210), ("fwdbwd", 27)):
        s = {str(e["id"]): e for e in events if e.get("cat") == cat and e["ph"] == "s"}
        fin = {str(e["id"]): e for e in events if e.get("cat") == cat and e["ph"] == "f"}
        assert len(set(s) & set(fin)) == n
        got = p.flows[p.flows["cat"] == cat].sort_values("id")
        assert got["id"].tolist() == sorted(set(s) & set(fin))
        assert got["s_ts"].tolist() == [ns(s[i]["ts"]) for i in got["id"]]
        assert got["f_ts"].tolist() == [ns(fin[i]["ts"]) for i in got["id"]]
        assert got["f_tid"].tolist() == [fin[i]["tid"] for i in got["id"]]
    ends = [e for e in events if e.get("cat") == "fwdbwd" and e["ph"] == "f"]
    starts = [e for e in events if e.get("cat") == "fwdbwd" and e["ph"] == "s"]
    assert p.backward_tid == ends[-1]["tid"] != starts[-1]["tid"]


def test_an_ops_kernels_follow_the_flows_first_appearance(samples, tmp_path):
    """reference-2 §2.1: an op's kernels are listed in flow-dictionary order, the order each flow id first
    appears, start or end. The sample writes every flow's start just before its end; edited so that the ends of
    the four flows of Conv2D at 1736408883702792.080 (TransData_0, TransData_1, Conv2D1, TransData_2, all on
    stream 2) come first, in reverse, as a trace listing device events before host ones may. The original's
    dict then meets those ids in reverse and lists the op's kernels reversed; they were listed in the order of
    the starts (review)."""
    from msprof_compare.compare.optree import build_tree

    raw = json.loads((samples / LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    ids = [e["id"] for e in raw if e.get("cat") == "async_npu" and e["ph"] == "s" and e["ts"] == "1736408883702792.080"]
    ends = [e for e in raw if e.get("cat") == "async_npu" and e["ph"] == "f" and e["id"] in ids]
    assert len(ids) == len(ends) == 4
    events = ends[::-1] + [e for e in raw if not (e.get("cat") == "async_npu" and e["ph"] == "f" and e["id"] in ids)]
    f = tmp_path / "trace_view.json"
    f.write_text(json.dumps(events))
    tree = build_tree(load_profile(str(f), Options(enable_operator_compare=True)))
    node = int(np.flatnonzero(tree.ts == ns("1736408883702792.080"))[0])
    assert tree.kpool["name"].to_numpy()[tree.own_kernels(node)].tolist() == [
        "trans_TransData_2", "Conv2D1", "trans_TransData_1", "trans_TransData_0"]


def test_flow_ids_beyond_int64_pair_by_their_text(tmp_path):
    """Flow ids pair by their text (7 and "7" are one id); all-int ids pair by value, unless one is beyond int64:
    the excerpt's first two whole async_npu flows given the ids 2**64 (int) and "18446744073709551616" (its text) at
    start and end, and 2**64 + 1 at both ends of the second (synthetic). Each flow still pairs, its id shown as
    the text; the others are the excerpt's."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    flows = [e for e in events if e.get("cat") == "async_npu" and e["ph"] in ("s", "f")]
    whole = [i for i in dict.fromkeys(e["id"] for e in flows)
             if sorted(e["ph"] for e in flows if e["id"] == i) == ["f", "s"]]  # the excerpt cuts some flows
    first, second = ([e for e in flows if e["id"] == i] for i in whole[:2])
    want = load_profile(str(d), OPTS).flows
    for e in first:
        e["id"] = 2**64 if e["ph"] == "s" else str(2**64)
    for e in second:
        e["id"] = 2**64 + 1
    f.write_text(json.dumps(events))
    got = load_profile(str(d), OPTS).flows
    assert len(got) == len(want) > 2
    ids = got["id"].tolist()
    assert ids[:2] == [str(2**64), str(2**64 + 1)] and ids[2:] == want["id"].tolist()[2:]
    for col in ("s_ts", "f_ts", "s_tid", "f_tid"):
        assert got[col].tolist() == want[col].tolist()


def test_op_args_are_read_only_by_the_comparisons_that_show_them(tmp_path):
    """The time breakdown shows no op shapes or stacks, so it does not decode op args: a cpu_op whose args are a
    list (the excerpt's first op edited, synthetic) still loads for it, with every op; the operator comparison,
    which shows them, names the fault."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    next(e for e in events if e.get("cat") == "cpu_op")["args"] = [1]
    f.write_text(json.dumps(events))
    assert len(load_profile(str(d), OPTS).ops) == sum(e.get("cat") == "cpu_op" for e in events) > 0
    with pytest.raises(ProfileError, match="invalid event args"):
        load_profile(str(d), Options(enable_operator_compare=True))


# --------------------------------------------------------------------------- refusals


def test_trace_view_holding_an_object_with_events_is_refused(tmp_path):
    """A trace_view.json is an event list: the excerpt's events wrapped in {"traceEvents": [...]} (Kineto's
    layout, synthetic) are refused with that reason, not read as an NPU trace."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    f.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(ProfileError, match=r"top level is an object, expected an event list") as exc:
        load_profile(str(d), OPTS)
    assert "trace_view.json" in str(exc.value)


def test_metadata_only_list_is_said_to_have_no_duration_events(tmp_path):
    """A list of the excerpt's metadata events plus one entry without "ph" (synthetic) holds trace events: the
    error says it has no duration events, not that none of its entries is a trace event."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    f.write_text(json.dumps([e for e in events if e.get("ph") == "M"] + [{"name": "run", "ts": "1"}]))
    with pytest.raises(ProfileError, match=r"no duration \('X'\) events in the trace"):
        load_profile(str(d), OPTS)


def test_csv_header_as_long_as_the_cap_is_a_header(tmp_path, monkeypatch):
    """The cap is on the longest first line allowed: a header line exactly MAX_HEADER_BYTES long without a line
    end (the excerpt's kernel_details.csv header alone) is a header, and the file has no data rows."""
    head = (PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_bytes().split(b"\n")[0]
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(head)
    monkeypatch.setattr(ascend_text, "MAX_HEADER_BYTES", len(head))
    with pytest.raises(ProfileError, match="no data rows"):
        ascend_text.read_kernel_details(str(f), [])
    monkeypatch.setattr(ascend_text, "MAX_HEADER_BYTES", len(head) - 1)
    with pytest.raises(ProfileError, match="no line end in the first"):
        ascend_text.read_kernel_details(str(f), [])


# --------------------------------------------------------------------------- kernel_details.csv cells


def test_start_time_us_wins_over_the_early_start_time_column(tmp_path):
    """"Start Time" is read only when "Start Time(us)" is absent (torch_npu's first exports): with both (the
    excerpt plus a "Start Time" column of zeros, synthetic) the kernel starts are the Start Time(us) values."""
    f, rows = _kernel_details(tmp_path, {}, {"Start Time": ["0"] * 20})
    kd = ascend_text.read_kernel_details(str(f), [])
    assert kd["ts"].tolist() == [ns(r["Start Time(us)"]) for r in rows]
    assert kd["Start Time(us)"].tolist() == [r["Start Time(us)"].strip() for r in rows]


def test_float_junk_is_counted_per_value(tmp_path):
    """The PMU junk warning counts values, not columns: two junk cells in aiv_vec_time(us) and one in
    aicore_time(us) (the excerpt, three cells edited) are 3 values in 2 columns."""
    f, _ = _kernel_details(tmp_path, {(0, "aiv_vec_time(us)"): "x", (1, "aiv_vec_time(us)"): "y",
                                      (2, "aicore_time(us)"): "z"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert warnings == [f"{f}: 3 value(s) that are not numbers in column(s) aiv_vec_time(us), aicore_time(us); "
                        "read as missing"]
    assert np.isnan(kd["aiv_vec_time(us)"].to_numpy()[:2]).all() and np.isnan(kd["aicore_time(us)"].iloc[2])


def test_duration_with_an_underscore_is_no_number(tmp_path):
    """Python's float() reads "1_5" as 15; an export never writes it, so it is junk: NaN (0 ns), counted once.
    Row 1 keeps its 21.98 us."""
    f, _ = _kernel_details(tmp_path, {(0, "Duration(us)"): "1_5"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert np.isnan(kd["Duration(us)"].iloc[0]) and kd["dur"].tolist()[:2] == [0, 21_980]
    assert warnings == [f"{f}: 1 Duration(us) value(s) are not numbers; read as missing."]


def test_zero_duration_is_not_negative(tmp_path):
    """A kernel of 0 us is a duration, only one below 0 is warned: rows 0 and 1 set to 0 and -2.5 (synthetic)."""
    f, _ = _kernel_details(tmp_path, {(0, "Duration(us)"): "0", (1, "Duration(us)"): "-2.5"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["Duration(us)"].tolist()[:2] == [0.0, -2.5]
    assert warnings == [f"{f}: 1 kernel(s) have a negative Duration(us); kept as they are."]


def test_kernel_of_exactly_a_week_is_kept(tmp_path):
    """Only a duration over a week (7 * 86400 s = 604800000000 us) reads as 0: row 0 set to exactly a week is
    kept, row 1 one ns longer is zeroed, with one warning (synthetic values)."""
    f, _ = _kernel_details(tmp_path, {(0, "Duration(us)"): "604800000000", (1, "Duration(us)"): "604800000000.001"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["dur"].tolist()[:2] == [604_800_000_000_000, 0]
    assert kd["Duration(us)"].tolist()[:2] == [604800000000.0, 0.0]
    assert warnings == [f"{f}: 1 kernel(s) last over a week (a damaged time?); read as 0"]


def test_empty_or_na_duration_is_said(tmp_path):
    """An empty or N/A Duration(us) reads as 0 us, which took the kernel's time out of its breakdown category (Conv,
    Vector, ...) into Other Computing without a word where KernelCompare, whose own line says it, was off: counted
    in one line, apart from text that is no number (said by ``_floats``). Rows 0-2 of the excerpt set to "", "N/A"
    and "1 us" (synthetic: no sample leaves a duration out); row 3 keeps its duration."""
    f, rows = _kernel_details(tmp_path, {(0, "Duration(us)"): "", (1, "Duration(us)"): "N/A",
                                         (2, "Duration(us)"): "1 us"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["dur"].tolist()[:4] == [0, 0, 0, ns(rows[3]["Duration(us)"])]
    assert np.isnan(kd["Duration(us)"].to_numpy()[:3]).all()
    assert warnings == [
        f"{f}: 1 Duration(us) value(s) are not numbers; read as missing.",
        f"{f}: 2 Duration(us) value(s) are empty or N/A (an export writes every kernel's duration: a damaged cell?); "
        "read as 0 us, so the time breakdown's categories count none of those kernels' time (a computing kernel's "
        "shows as Other Computing)"]


def test_empty_start_time_is_missing_not_junk(tmp_path):
    """An empty Start Time(us) is no start (ts -1), counted apart from text that is no number: rows 0, 1 and 3
    set to "", "abc" and " " (synthetic). The empty ones were not said (session 60's fuzz: every start emptied moved
    the level1 export's Conv and Cube kernels into Vector without a word); no real kernel_details.csv of the
    samples has one."""
    f, rows = _kernel_details(tmp_path, {(0, "Start Time(us)"): "", (1, "Start Time(us)"): "abc",
                                         (3, "Start Time(us)"): " "})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["ts"].tolist()[:4] == [-1, -1, ns(rows[2]["Start Time(us)"]), -1]
    assert warnings == [f"{f}: 1 Start Time(us) value(s) are not numbers; those kernels are not matched "
                        "(to a launching operator, a device task's Input Shapes or C_CORE_SQE tasks).",
                        f"{f}: 2 Start Time(us) value(s) are empty; those kernels are not matched "
                        "(to a launching operator, a device task's Input Shapes or C_CORE_SQE tasks)."]


def test_a_lone_dot_is_no_time(tmp_path):
    """A cell holding only "." (no digit) read as 0 us without a word, a kernel starting at time 0, since the
    one-layout parser accepts a text of its dot column alone; it is text that is no number, as "abc" is: row 0's
    Start Time(us) set to "." (synthetic, found by fuzzing, session 57). Expected by hand: no start (-1), counted."""
    f, rows = _kernel_details(tmp_path, {(0, "Start Time(us)"): "."})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["ts"].tolist()[:2] == [-1, ns(rows[1]["Start Time(us)"])]
    assert warnings == [f"{f}: 1 Start Time(us) value(s) are not numbers; those kernels are not matched "
                         "(to a launching operator, a device task's Input Shapes or C_CORE_SQE tasks)."]


def test_short_middle_row_is_warned(tmp_path):
    """A row cut short in the middle of kernel_details.csv (the excerpt's row 3 cut after its 4th field, and a
    quoted Input Shapes with a comma and a line break in row 5 to show quotes are respected, synthetic): pandas
    reads the missing cells as empty, so the one line says so; the file's last row is whole."""
    f, rows = _kernel_details(tmp_path, {(5, "Input Shapes"): "1,2\n3"})
    lines = f.read_bytes().split(b"\n")
    lines[4] = b",".join(lines[4].split(b",")[:4])
    f.write_bytes(b"\n".join(lines))
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert len(kd) == len(rows) and kd["Name"].tolist()[3] == "" and kd["Input Shapes"].tolist()[5] == "1,2\n3"
    # the cut row's Name (its 5th field), Type (its 6th), Start Time(us) (its 9th) and Duration(us) are among those
    # empty cells: each said, with what it costs
    assert warnings == [f"{f}: 1 row(s) end before the last column read; their missing cells read as empty",
                        f"{f}: 1 line(s) read as part of an earlier row (a line break inside a quoted "
                        "field: a quote left open?)",
                        f"{f}: 1 kernel(s) with an empty Name; the time breakdown's categories told by a kernel's "
                        "name (HCCL, SDMA copies, MC2, TransData) cannot hold them",
                        f"{f}: 1 kernel(s) with an empty or N/A Type among kernels of a Type (a Level0 export writes "
                        "N/A on every row: a damaged cell?); KernelCompare leaves them out, as the original does",
                        f"{f}: 1 Duration(us) value(s) are empty or N/A (an export writes every kernel's duration: "
                        "a damaged cell?); read as 0 us, so the time breakdown's categories count none of those "
                        "kernels' time (a computing kernel's shows as Other Computing)",
                        f"{f}: 1 Start Time(us) value(s) are empty; those kernels are not matched (to a launching "
                        "operator, a device task's Input Shapes or C_CORE_SQE tasks)."]


def test_rows_whole_to_the_last_pmu_column_skip_the_line_scan(tmp_path, monkeypatch):
    """The excerpt's kernel_details.csv holds a number or N/A (its row 7, an AI CPU kernel's) in the last column read,
    aiv_vec_time(us), on every row: read with an empty cell as no number there, pandas proves no row cut short
    before it, so the line-by-line scan for cut rows (``_line_commas``) is not run, and the figures are as written
    (N/A read as missing, no warning). An emptied cell there (row 3, synthetic) is read again as before: scanned,
    and said by nothing, as it is no cut row."""
    calls: list[int] = []
    real = ascend_text._line_commas
    monkeypatch.setattr(ascend_text, "_line_commas", lambda data: calls.append(1) or real(data))
    f, rows = _kernel_details(tmp_path, {})
    assert [r["aiv_vec_time(us)"] for r in rows][:8] == ["0.051", "0.0", "0.76", "0.0", "0.188", "0.039", "0.973",
                                                         "N/A"]
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    vec = kd["aiv_vec_time(us)"].tolist()
    assert calls == [] and warnings == [] and vec[:7] == [0.051, 0.0, 0.76, 0.0, 0.188, 0.039, 0.973]
    assert np.isnan(vec[7]) and len(kd) == len(rows) == 20
    f, rows = _kernel_details(tmp_path, {(3, "aiv_vec_time(us)"): ""})
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert calls == [1] and warnings == [] and np.isnan(kd["aiv_vec_time(us)"].tolist()[3]) and len(kd) == 20


@given(st.text(alphabet=',"a\n', max_size=700))
@example("a," + '"' + "," * 300 + '",a,b')  # a quoted field of 302 bytes
@example('a,"' + "," * 300)  # a quote left open, 300 separators after it
@example('"",,"a,b"')
def test_unquoted_commas_count_the_separators_outside_quotes(text):
    """``_unquoted_commas`` against a walk over the text that turns "inside" on and off at each quote (a quote left
    open runs to the end): the separators of quoted fields summed as bytes (fields of 255 bytes at most) or found
    one by one (longer ones) alike."""
    inside, want = False, 0
    for ch in text:
        if ch == '"':
            inside = not inside
        elif ch == "," and not inside:
            want += 1
    assert ascend_text._unquoted_commas(text.encode()) == want


@given(st.lists(st.lists(st.text(alphabet='a1,"\n ', max_size=6), min_size=1, max_size=6), min_size=1, max_size=12),
       st.integers(0, 6), st.booleans(), st.sampled_from(["\n", "\r\n", "\r"]))
def test_short_rows_count_the_rows_the_csv_module_reads_short(rows, last, final_break, end):
    """``_short_rows`` (quote spans found among the separators, fields counted between line ends) against Python's
    csv module on CSV text written by it: fields with commas, quotes and line breaks, rows of 1-6 fields (a short
    one is a row cut short), with or without a line break after the last row, lines ended by LF, CRLF or a bare CR
    (old Mac line ends, which pandas reads as line ends too: such a file read as one line, its short rows unsaid).
    A row counts as short when it has no field ``last`` (0-based); the first row is the header."""
    out = io.StringIO()
    csv.writer(out, lineterminator=end).writerows(rows)
    text = out.getvalue() if final_break else out.getvalue()[:-len(end)]
    read = list(csv.reader(io.StringIO(text, newline="")))
    want = sum(1 for r in read[1:] if r and len(r) <= last)  # csv reads a blank line as [] (pandas skips it)
    assert ascend_text._short_rows(text.encode(), last) == want


@given(st.lists(st.lists(st.text(alphabet='a1,"\n ', max_size=6), min_size=1, max_size=6), min_size=1, max_size=12),
       st.booleans(), st.sampled_from(["\n", "\r\n", "\r"]))
def test_line_commas_add_up_to_the_separators_the_csv_module_reads(rows, final_break, end):
    """The separators ``_line_commas`` counts line by line add up to the fields the csv module reads past each
    row's first, a file of one line included: ``_long_rows`` takes their sum for its whole-file count
    (``_unquoted_commas``) where the short-row check made them. CSV text written by the csv module, as above."""
    out = io.StringIO()
    csv.writer(out, lineterminator=end).writerows(rows)
    text = out.getvalue() if final_break else out.getvalue()[:-len(end)]
    want = sum(len(r) - 1 for r in csv.reader(io.StringIO(text, newline="")) if r)
    assert int(ascend_text._line_commas(text.encode())[0].sum()) == ascend_text._unquoted_commas(text.encode()) == want


def test_start_time_of_minus_one_ns_is_a_time_not_junk(tmp_path):
    """A Start Time(us) of -0.001 is -1 ns, a number: not counted with the junk (the loader once marked "no number"
    with ts -1, which this time reads as). Rows 0 and 1 set to "-0.001" and "abc", row 2's Duration(us) to
    "-0.001" (synthetic): that one reads as -1 ns, not as a missing 0, and is counted with the negative ones."""
    f, _ = _kernel_details(tmp_path, {(0, "Start Time(us)"): "-0.001", (1, "Start Time(us)"): "abc",
                                      (2, "Duration(us)"): "-0.001"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["ts"].tolist()[:2] == [-1, -1] and kd["dur"].tolist()[2] == -1
    matched = ("those kernels are not matched (to a launching operator, a device task's Input Shapes or C_CORE_SQE "
               "tasks).")
    assert warnings == [f"{f}: 1 kernel(s) have a negative Duration(us); kept as they are.",
                        f"{f}: 1 Start Time(us) value(s) are not numbers; {matched}",
                        f"{f}: 1 Start Time(us) value(s) are 0 or negative (no epoch time: a damaged cell?); kept as "
                        f"times, at which no event of an exported trace starts: {matched}"]


def test_a_kernel_without_a_start_lends_no_device_task_its_shapes(tmp_path):
    """A kernel_details row whose Start Time(us) is no number kept ts -1, the time "-0.001" reads as, and the
    kernel details of a device task at -1 ns took that row's Input Shapes (the later row of one ts won) instead
    of those of the row that starts there. Rows 0 and 1 of the excerpt set to "-0.001" and "abc" (synthetic);
    their shapes differ in the excerpt."""
    from msprof_compare.compare.optree import kernel_lines

    f, rows = _kernel_details(tmp_path, {(0, "Start Time(us)"): "-0.001", (1, "Start Time(us)"): "abc"})
    assert rows[0]["Input Shapes"] != rows[1]["Input Shapes"]
    p = Profile(path=str(tmp_path), kind="NPU", source="ascend_text")
    p.kernel_details = ascend_text.read_kernel_details(str(f))
    pool = pd.DataFrame({"name": ["k"], "dur": [1000], "task_id": [7], "task_type": ["AI_CORE"], "ts": [-1]})
    assert kernel_lines(p, pool).tolist() == [f"k, 7, AI_CORE, [input shapes: {rows[0]['Input Shapes']}] "
                                              "[duration: 1.0]\n"]
    assert p.kernel_details["start_read"].tolist()[:3] == [True, False, True]


def test_release_time_of_minus_one_ns_is_no_junk(tmp_path):
    """operator_memory.csv rows (msinsight text level1 rank0, cut), a Release Time(us) set to -0.001 (synthetic):
    -1 ns is a time, not a value that is no time (not counted as junk); a negative one, which the memory comparison
    read as never released without a word, is said as a DB export's negative releaseTime is (session 60)."""
    f = tmp_path / "operator_memory.csv"
    f.write_text(OPERATOR_MEMORY_HEAD +
                 "aten::_convolution,25009.5,1736408883702735.700\t,-0.001\t,0.000\t,NPU:0\n")
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert om["release_ns"].tolist() == [0] and om["Release Time(us)"].tolist() == [""]
    assert warnings == [f"{f}: 1 Release Time(us) value(s) are negative; read as never released"]


def test_release_times_of_0_by_the_thousand_are_counted_with_separators(samples, tmp_path):
    """The count of Release Time(us) values of 0 carries thousands separators: msinsight text level1 rank0's
    operator_memory.csv header and its first released block's row written 1,200 times, each released at 0.000."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    j = rows[0].index("Release Time(us)")
    row = next(r for r in rows[1:] if r[j].strip())
    path = tmp_path / "operator_memory.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        zero = [*row[:j], "0.000", *row[j + 1:]]
        csv.writer(fh, lineterminator="\n").writerows([rows[0], *[zero] * 1200])
    warnings: list[str] = []
    ascend_text.read_operator_memory(str(path), warnings)
    assert [w for w in warnings if "are 0" in w] == [
        f"{path}: 1,200 Release Time(us) value(s) are 0 (to the ns: no time); read as never released, as an empty one"]


def test_release_time_of_0_is_said_and_read_as_empty(samples, tmp_path, caplog):
    """msinsight text level1 rank0's operator_memory.csv with two released blocks' Release Time(us) set to 0.000 and
    to 0.0000001 (under half a ns: 0 ns), synthetic: the comparison read them as never released without a word,
    and the blocks' Allocated Duration moved (found by fuzzing the side files; an export leaves a block never
    released empty, as 24 of the file's 184 rows). Now counted in one warning; the figures are those of the same
    file with the two cells left empty, the export's spelling (the oracle: a second run)."""
    import logging

    l1 = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    sides = {}
    for how, cells in (("zero", ("0.000\t", "0.0000001\t")), ("empty", ("", ""))):
        side = tmp_path / how / "rank0_ascend_pt"
        shutil.copytree(l1, side)
        path = side / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        j = rows[0].index("Release Time(us)")
        released = [i for i, r in enumerate(rows[1:], 1) if r[j].strip()]
        assert len(rows) == 185 and len(released) == 160
        for i, cell in zip(released[:2], cells, strict=True):
            rows[i][j] = cell
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows(rows)
        sides[how] = (side, path)
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(sides["zero"][1]), warnings)
    assert warnings == [f"{sides['zero'][1]}: 2 Release Time(us) value(s) are 0 (to the ns: no time); read as never "
                        "released, as an empty one"]
    assert (om["release_ns"] == 0).sum() == 26 and (om["Release Time(us)"] == "").sum() == 26
    runs = {}
    for how, (side, _path) in sides.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            runs[how] = compare(str(l1), str(side), enable_memory_compare=True)
        said = [m for m in caplog.messages if "Release Time(us)" in m]
        assert len(said) == (1 if how == "zero" else 0)
    for sheet in ("MemoryCompareStatistic", "MemoryCompare"):
        pd.testing.assert_frame_equal(runs["zero"].sheet(sheet), runs["empty"].sheet(sheet))
    # and the edit moves a figure: the two blocks' durations differ from the unedited side's
    stat = runs["zero"].sheet("MemoryCompareStatistic")
    assert (stat["Base Allocated Duration(ms)"] != stat["Comparison Allocated Duration(ms)"]).any()


def test_memory_counts_of_thousands_carry_separators(tmp_path):
    """operator_memory.csv of 2,500 blocks built from a row of msinsight text level1 rank0's (columns cut), each
    allocated 1 us after the one before (no repeat), edited (synthetic): 1,200 released at -1 us, 1,050 of those
    and 200 others of size -1 KB, and 1,001 of the others released 1 us before their allocation. Each count, made
    here by construction, reads with its thousands separator, as the loaders' newer notes (session 63) write
    theirs: "1200" beside "1,200" read as two styles in one log."""
    rows = []
    for i in range(2500):
        alloc = 1736408883700000 + i
        size = "-1.0" if i < 1050 or 1200 <= i < 1400 else "512.5"
        release = "-1.000" if i < 1200 else f"{alloc - 1}.000" if i < 2201 else f"{alloc + 5}.000"
        rows.append(f"aten::empty_strided,{size},{alloc}.000\t,{release}\t,0.000\t,NPU:0\n")
    f = tmp_path / "operator_memory.csv"
    f.write_text(OPERATOR_MEMORY_HEAD + "".join(rows))
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert warnings == [f"{f}: 1,200 Release Time(us) value(s) are negative; read as never released",
                        f"{f}: 1,250 negative Size(KB) value(s) read as 0; 1,001 block(s) released before their "
                        "allocation (duration read as 0)"]
    assert int((om["release_ns"] == 0).sum()) == 1200 and int((om["Size(KB)"] == 0).sum()) == 1250


# --------------------------------------------------------------------------- memory side files


@pytest.mark.parametrize("kept, dropped", [("0", "-1"), ("953674316", "953674317")])
def test_reserved_total_bounds(tmp_path, kept, dropped):
    """Total Reserved(MB) is a reading from 0 up to 1 PB (10**15 bytes): 0 is one and -1 is none; in MB,
    953674316 * 1048576 = 999,999,999,574,016 bytes is one, 953674317 * 1048576 = 1,000,000,000,622,592 bytes
    none. The excerpt's memory_record.csv (30 rows) with rows 0 and 1 set so (synthetic); one value is left
    out, row 2 keeps its 2109.6015625."""
    f = tmp_path / "memory_record.csv"
    shutil.copy(PT / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", f)
    _edited_csv(f, {(0, "Total Reserved(MB)"): kept, (1, "Total Reserved(MB)"): dropped})
    warnings: list[str] = []
    mb = ascend_text.read_memory_record(str(f), warnings)["Total Reserved(MB)"].to_numpy()
    assert mb[0] == float(kept) and np.isnan(mb[1]) and mb[2] == 2109.6015625
    assert warnings == [f"{f}: 1 Total Reserved(MB) value(s) negative or over 1 PB; Mem Usage leaves them out"]


OPERATOR_MEMORY_HEAD = "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Device Type\n"


def test_operator_memory_edge_rows(tmp_path):
    """Rows cut from operator_memory.csv of msinsight text level1 rank0 (columns cut), edited: a block released at
    the instant it was allocated lasts 0 and is no oddity; an empty Size(KB) reads as 0, said (as a DB export's
    NULL size is, since session 60; no real operator_memory.csv of the samples has one)."""
    f = tmp_path / "operator_memory.csv"
    f.write_text(OPERATOR_MEMORY_HEAD +
                 "aten::_convolution,25009.5,1736408883702735.700\t,1736408883702735.700\t,0.000\t,NPU:0\n"
                 "aten::empty_strided,,1736408883694624.810\t,,,NPU:0\n"
                 "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0\n")
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert warnings == [f"{f}: 1 Size(KB) value(s) are no number (empty, N/A or text); read as 0"]
    assert om["Size(KB)"].tolist() == [25009.5, 0.0, 25009.5]
    assert om["alloc_ns"].tolist() == [1736408883702735700, 1736408883694624810, 1736408883702735700]
    assert om["release_ns"].tolist() == [1736408883702735700, 0, 1736408883736793940]


def test_operator_memory_short_row_in_a_text_column_is_warned(tmp_path):
    """The last column operator_memory.csv is read for is text (Device Type): a middle row cut before it (rows of
    msinsight text level1 rank0, columns cut, the second row cut after Release Time(us), synthetic) reads as an
    empty Device Type, said in one line; text cells come as Python str in object columns."""
    f = tmp_path / "operator_memory.csv"
    f.write_text(OPERATOR_MEMORY_HEAD +
                 "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0\n"
                 "aten::empty_strided,0.5,1736408883701264.010\t,1736408883736793.940\t\n"
                 # another size: not the first row again, which is said as a repeat
                 "aten::_convolution,25009.0,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0\n")
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert warnings == [f"{f}: 1 row(s) end before the last column read; their missing cells read as empty"]
    assert om["Device Type"].dtype == object and om["Name"].dtype == object
    assert om["Name"].tolist() == ["aten::_convolution", "aten::empty_strided", "aten::_convolution"]


def test_nul_byte_in_a_column_name_is_named(tmp_path):
    """Rows of msinsight text level1 rank0's operator_memory.csv, a NUL byte written into a column name (a damaged
    copy, found by fuzzing): in the optional Device Type the column read as absent without a word, now one warning
    names it; in the required Size(KB) the "missing required column" error says why."""
    row = "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0\n"
    f = tmp_path / "operator_memory.csv"
    f.write_text(OPERATOR_MEMORY_HEAD.replace("Device Type", "Device\0 Type") + row)
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert om["Name"].tolist() == ["aten::_convolution"]
    assert warnings == [f"{f}: column name(s) 'Device\\x00 Type' hold a NUL byte (a damaged file?): read as no "
                        "column"]
    f.write_text(OPERATOR_MEMORY_HEAD.replace("Size(KB)", "\0Size(KB)") + row)
    with pytest.raises(ProfileError) as err:
        ascend_text.read_operator_memory(str(f), [])
    assert str(err.value) == (f"{f}: missing required column(s): Size(KB) (column name(s) '\\x00Size(KB)' hold a "
                              "NUL byte: a damaged file?)")


def test_required_columns_named_in_another_case_are_pointed_at(tmp_path):
    """Rows of msinsight text level1 rank0's operator_memory.csv, the header upper-cased (a file rewritten by a tool
    that changes case; found by fuzzing): the error listed Name, Size(KB), Allocation Time(us) and Release Time(us)
    as missing from a header that visibly holds them; its hint now names them as written. Columns are still
    matched with their case (an export writes them one way)."""
    row = "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0\n"
    f = tmp_path / "operator_memory.csv"
    f.write_text(OPERATOR_MEMORY_HEAD.upper() + row)
    with pytest.raises(ProfileError) as err:
        ascend_text.read_operator_memory(str(f), [])
    assert str(err.value) == (f"{f}: missing required column(s): Name, Size(KB), Allocation Time(us), Release "
                              "Time(us) (the header has 'NAME', 'SIZE(KB)', 'ALLOCATION TIME(US)', 'RELEASE "
                              "TIME(US)': column names are matched with their case)")
    # one column alone, lower-cased, beside the NUL hint of another
    f.write_text(OPERATOR_MEMORY_HEAD.replace("Release Time(us)", "release time(us)").replace("Size(KB)", "\0Size(KB)")
                 + row)
    with pytest.raises(ProfileError) as err:
        ascend_text.read_operator_memory(str(f), [])
    assert str(err.value) == (f"{f}: missing required column(s): Size(KB), Release Time(us) (column name(s) "
                              "'\\x00Size(KB)' hold a NUL byte: a damaged file?; the header has 'release time(us)': "
                              "column names are matched with their case)")


def test_op_statistic_empty_time_reads_as_zero(tmp_path):
    """Rows of op_statistic.csv of msinsight text level1 rank0, one Min Time(us) emptied (synthetic): it reads as
    0.0, the row's other times and the other row as written; said since session 60, as a missing Count is."""
    f = tmp_path / "op_statistic.csv"
    f.write_text("OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
                 "ForeachAddList,AI_VECTOR_CORE,3,1959.079,,653.026,706.614,22.077\n"
                 "TransData,AI_VECTOR_CORE,57,1423.208,6.54,24.969,70.801,16.038\n")
    warnings: list[str] = []
    df = ascend_text.read_op_statistic(str(f), warnings)
    assert df["Min Time(us)"].tolist() == [0.0, 6.54] and df["Total Time(us)"].tolist() == [1959.079, 1423.208]
    assert warnings == [f"{f}: 1 row(s) with a time that is no number (empty, N/A or text); those times read as 0"]


def test_op_statistic_count_without_a_number_is_warned(tmp_path):
    """The same rows with Count N/A and empty (synthetic, found by fuzzing): each reads 0 calls, as before, but
    one warning counts them; KernelTypeCompare's Number read 0 as if measured, without a word."""
    f = tmp_path / "op_statistic.csv"
    f.write_text("OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
                 "ForeachAddList,AI_VECTOR_CORE,N/A,1959.079,599.1,653.026,706.614,22.077\n"
                 "TransData,AI_VECTOR_CORE,,1423.208,6.54,24.969,70.801,16.038\n"
                 "MatMulV2,AI_CORE,24,957.97,17.2,39.915,109.4,10.797\n")
    warnings: list[str] = []
    df = ascend_text.read_op_statistic(str(f), warnings)
    assert df["Count"].tolist() == [0, 0, 24]
    assert warnings == [f"{f}: 2 row(s) with no Count (empty or N/A); their call counts read as 0"]


def test_op_statistic_is_read_only_for_the_kernel_type_comparison(samples):
    """op_statistic.csv feeds KernelTypeCompare alone: a kernel comparison by name does not read it, nor does
    --use_kernel_type without the kernel comparison (the option is then void, and a mutant reading the file for
    the option alone survived); with both every row of the sample's file is there (counted with the csv module)."""
    d = samples / LEVEL1
    p = load_profile(str(d), Options(enable_kernel_compare=True))
    assert p.op_statistic is None and "op_statistic.csv" not in p.files
    p = load_profile(str(d), Options(enable_profiling_compare=True, use_kernel_type=True))
    assert p.op_statistic is None and "op_statistic.csv" not in p.files
    with open(d / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    p = load_profile(str(d), Options(enable_kernel_compare=True, use_kernel_type=True))
    assert p.op_statistic["OP Type"].tolist() == [r["OP Type"] for r in rows] and len(rows) > 1
    assert p.op_statistic["Count"].tolist() == [int(r["Count"]) for r in rows]


# --------------------------------------------------------------------------- JSON side files


def test_empty_profiler_metadata_is_no_metadata(tmp_path):
    """An empty profiler_metadata.json (the excerpt's emptied) reads as no metadata ({}), like an absent one."""
    d = _excerpt(tmp_path)
    (d / "profiler_metadata.json").write_text("")
    p = load_profile(str(d), OPTS)
    assert p.metadata == {} and "profiler_metadata.json" in p.files


def test_profiler_info_holding_an_empty_object_is_invalid(tmp_path):
    """reference-1 §5.4: an empty or non-object profiler info is "Invalid profiler info."; an empty object {}
    (the excerpt's profiler_info_0.json emptied to {}) is one, and gives no profiler level."""
    d = _excerpt(tmp_path)
    info = d / "profiler_info_0.json"
    info.write_text("{}")
    p = load_profile(str(d), OPTS)
    assert f"{info}: Invalid profiler info." in p.warnings
    assert "profiler_level" not in p.extra


# --------------------------------------------------------------------------- lanes, flows and task args (2)


def test_hccl_thread_without_a_name_joins_no_group(tmp_path):
    """reference-1 §5.1: only a named thread of the HCCL process is a plane lane attached to the current group.
    The excerpt's HCCL tid 3 ("Plane 2", sort index 3, after "Group 0 Communication") with its thread_name record
    removed (synthetic: no sample lacks one) keeps a sort index but no name: its two tasks (Notify_Record,
    Notify_Wait) belong to no group and no plane, while tid 2's stay in Group 0 on "Plane 1"."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    pid = _pid_of(events, "HCCL")
    events = [e for e in events if not (e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == pid
                                        and e["tid"] == 3)]
    f.write_text(json.dumps(events))
    comm = load_profile(str(d), OPTS).comm
    on3 = comm[comm["tid"] == 3]
    assert on3["name"].tolist() == ["Notify_Record", "Notify_Wait"]
    assert on3["group"].tolist() == ["", ""] and on3["plane"].tolist() == ["", ""]
    on2 = comm[comm["tid"] == 2]
    assert set(on2["group"]) == {"Group 0 Communication"} and set(on2["plane"]) == {"Plane 1"}


def test_flow_halves_whose_category_differs_in_case_still_pair(tmp_path):
    """reference-1 §5.2: flows are the events whose lower-cased category is async_npu, paired by id. The excerpt's
    first async_npu flow end that has a start (16 of its 20 ends have one; id 1736408883731435008, ts
    1736408883731435.008) rewritten with category "ASYNC_NPU" (synthetic) still pairs with its start: the same
    flows as the unedited file, that one among them."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    starts = {e["id"] for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"}
    end = next(e for e in events if e.get("cat") == "async_npu" and e["ph"] == "f" and e["id"] in starts)
    before = load_profile(str(d), OPTS).flows
    end["cat"] = "ASYNC_NPU"
    f.write_text(json.dumps(events))
    flows = load_profile(str(d), OPTS).flows
    assert len(flows) == len(before) > 0
    row = flows[flows["id"] == str(end["id"])]
    assert row["f_ts"].tolist() == [1736408883731435008] and row["cat"].tolist() == ["async_npu"]


def test_hardware_task_without_a_task_type_keeps_none(tmp_path):
    """A hardware task whose args lack "Task Type" (the excerpt's first Ascend Hardware task,
    aclnnMm_MatMulCommon_MemSet, that key removed: synthetic) keeps an empty task type, which the kernel
    details print as "None" as the original's args.get("Task Type") does; not the "N/A" of an absent op arg.
    The next task keeps its AI_CORE."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    hw = _pid_of(events, "Ascend Hardware")
    first = next(e for e in events if e.get("ph") == "X" and e["pid"] == hw)
    del first["args"]["Task Type"]
    f.write_text(json.dumps(events))
    k = load_profile(str(d), OPTS).kernels
    assert k["name"].iloc[0] == "aclnnMm_MatMulCommon_MemSet"
    assert k["task_type"].tolist()[:2] == ["", "AI_CORE"]


# --------------------------------------------------------------------------- CSV cells and side files (2)


def test_csv_whose_first_line_is_empty_has_no_header(tmp_path):
    """A CSV starting with a line break (the excerpt's memory_record.csv after an empty line, synthetic) has an
    empty first line, so no header: "empty file (no header line)", not the "empty file" of a file of 0 bytes."""
    f = tmp_path / "memory_record.csv"
    f.write_bytes(b"\n" + (PT / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").read_bytes())
    with pytest.raises(ProfileError, match=r"memory_record\.csv: empty file \(no header line\)$"):
        ascend_text.read_memory_record(str(f), [])


@pytest.mark.parametrize("text", ["inf", "-Infinity", "1e999"])
def test_pmu_value_that_is_not_finite_is_refused(tmp_path, text):
    """A float cell reads "inf" or overflows float64 (1e999): no counter value, a damaged file, refused naming
    the column (the excerpt's kernel_details.csv, row 0 aiv_vec_time(us) edited: synthetic)."""
    f, _ = _kernel_details(tmp_path, {(0, "aiv_vec_time(us)"): text})
    with pytest.raises(ProfileError, match=r"column aiv_vec_time\(us\) holds a value that is not finite"):
        ascend_text.read_kernel_details(str(f), [])


def test_step_id_of_two_to_the_63_is_no_step(tmp_path):
    """Step Id 9223372036854775808 (2**63, one past the int64 maximum; the excerpt's row 0 edited, synthetic) is no
    whole number an int64 holds: the row belongs to no step (-1), counted in one warning; row 1 keeps step 50."""
    f, _ = _kernel_details(tmp_path, {(0, "Step Id"): "9223372036854775808"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["Step Id"].tolist()[:2] == [-1, 50]
    assert warnings == [f"{f}: 1 Step Id value(s) are not whole numbers; those rows belong to no step"]


def test_negative_step_id_is_no_step(tmp_path):
    """Step Id -50 and -1 (the excerpt's rows 0 and 1 edited, synthetic, found by fuzzing): a step id counts from 0,
    so neither is a step; -1 read as "no step" and -50 as a step of its own, both without a word. Both rows
    belong to no step (-1), counted in one warning; row 2 keeps step 50; with a text cell beside them the line
    counts both kinds."""
    f, rows = _kernel_details(tmp_path, {(0, "Step Id"): "-50", (1, "Step Id"): " -1"})
    assert rows[2]["Step Id"] == "50"
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["Step Id"].tolist()[:3] == [-1, -1, 50]
    assert warnings == [f"{f}: 2 Step Id value(s) are negative; those rows belong to no step"]
    f, _ = _kernel_details(tmp_path, {(0, "Step Id"): "-50", (1, "Step Id"): "x"})
    warnings = []
    ascend_text.read_kernel_details(str(f), warnings)
    assert warnings == [f"{f}: 2 Step Id value(s) are negative or not whole numbers (1 negative); those rows "
                        "belong to no step"]
    warnings = []
    ascend_text.read_kernel_details(str(f), warnings, steps_read=False)  # no step asked: nothing said
    assert warnings == []


def test_communication_json_that_is_no_object_is_refused(tmp_path):
    """communication.json holds one object; the excerpt's file replaced by a list ([1], synthetic) is malformed,
    named with its path, not read as data."""
    d = _excerpt(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    assert f.is_file()
    f.write_text("[1]")
    with pytest.raises(ProfileError, match=r"malformed communication.json: top level is not an object") as exc:
        load_profile(str(d), OPTS)
    assert exc.value.path == str(f)


@pytest.mark.parametrize(("text", "kind"), [
    ("", "is empty or null"), ("  \n", "is empty or null"), ("null", "is empty or null"), ("[]", "holds an array"),
    ("[1]", "holds an array"), ("5", "holds a number"), ("1.5", "holds a number"), ('"x"', "holds a string"),
    ("true", "holds a boolean")])
def test_profiler_metadata_that_is_no_object_is_one_warning(tmp_path, text, kind):
    """profiler_metadata.json is optional (process-group names, distributed settings; reference-1 §5.10), as
    profiler_info.json is: one that holds no object is read as absent with one warning, whatever it holds. It
    was silent for an empty file or null and stopped the run for [] or 5. The excerpt's file replaced
    (synthetic); the rest of the load is unchanged: the same kernels, and the metadata of a folder without the
    file."""
    d = _excerpt(tmp_path)
    f = d / "profiler_metadata.json"
    whole = load_profile(str(d), OPTS)
    assert whole.metadata["ENV_VARIABLES"]["HCCL_RDMA_TC"] == ""  # the excerpt's own file: an object, read
    f.write_text(text)
    prof = load_profile(str(d), OPTS)
    assert [w for w in prof.warnings if "profiler_metadata" in w] == [
        f"{f}: the file {kind} where an object is expected; read as absent (no process-group names or distributed "
        "settings from it)"]
    assert prof.metadata == {}
    assert prof.kernels["dur"].sum() == whole.kernels["dur"].sum() and len(prof.kernels) == len(whole.kernels)
    f.write_text("{}")  # an object holding nothing is no fault
    assert not [w for w in load_profile(str(d), OPTS).warnings if "profiler_metadata" in w]


@pytest.mark.parametrize(("text", "problem"), [('{"ENV_VARIABLES": {"HCCL_RDMA_TC": ', "truncated JSON ("),
                                               ("{ENV_VARIABLES: 1}", "malformed JSON: "),
                                               ('{"a": 1}}', "malformed JSON: ")])
def test_malformed_profiler_metadata_is_read_as_absent(tmp_path, text, problem):
    """A malformed or truncated profiler_metadata.json stopped the run (exit 1), while one holding no object was
    read as absent: the file is optional (it feeds the groups' names and the distributed settings' checks, no
    figure of its own), so it is read as absent with one warning naming the file and what is wrong, as
    profiler_info.json is (ascend_text._AS_ABSENT). The excerpt's file replaced (synthetic); the kernels load as
    with the whole file."""
    d = _excerpt(tmp_path)
    f = d / "profiler_metadata.json"
    whole = load_profile(str(d), OPTS)
    f.write_text(text)
    prof = load_profile(str(d), OPTS)
    said = [w for w in prof.warnings if "profiler_metadata" in w]
    assert len(said) == 1 and said[0].startswith(f"{f}: {problem}")
    assert said[0].endswith("; read as absent (no process-group names or distributed settings from it)")
    assert prof.metadata == {}
    assert prof.kernels["dur"].sum() == whole.kernels["dur"].sum() and len(prof.kernels) == len(whole.kernels)


def test_profiler_metadata_that_is_a_directory_is_said(tmp_path):
    """A directory named profiler_metadata.json (a damaged copy, found by session 60's fuzz) was passed over
    without a word, where a malformed file is read as absent with one warning: now the same line says it. The
    excerpt's file replaced by a folder; the kernels load as with the whole file."""
    d = _excerpt(tmp_path)
    f = d / "profiler_metadata.json"
    whole = load_profile(str(d), OPTS)
    f.unlink()
    f.mkdir()
    prof = load_profile(str(d), OPTS)
    assert [w for w in prof.warnings if "profiler_metadata" in w] == [
        f"{f}: a directory, not a file; read as absent (no process-group names or distributed settings from it)"]
    assert prof.metadata == {} and len(prof.kernels) == len(whole.kernels)
    f.rmdir()  # absent: nothing said, as before
    assert not [w for w in load_profile(str(d), OPTS).warnings if "profiler_metadata" in w]


def test_profiler_metadata_read_as_absent_gives_no_group_names(tmp_path):
    """The process-group names come from profiler_metadata.json's parallel_group_info (reference-1 §5.10): the
    msinsight file that holds one (tests/data/npu/profiler_metadata_pg.json) names its groups; replaced by an
    array, no group is named."""
    from msprof_compare.compare.breakdown_npu import pg_names

    d = _excerpt(tmp_path)
    f = d / "profiler_metadata.json"
    shutil.copy(PT.parent / "profiler_metadata_pg.json", f)
    names = pg_names(load_profile(str(d), OPTS).metadata)
    assert "default_group" in names.values() and "dp" in names.values()
    f.write_text("[]")
    assert pg_names(load_profile(str(d), OPTS).metadata) == {}


@pytest.mark.parametrize("whole", [True, False], ids=["read-once", "streamed"])
def test_last_row_probe_starting_inside_a_quoted_field(tmp_path, monkeypatch, whole):
    """The last-row check parses only the last 64 KiB, from the first line start in it: a window that begins at
    the closing quote of a quoted cell must not open a quoted field running to the end of the file. The excerpt's
    kernel_details.csv rows 0 and 1 (row 1's last quote opens its last 149 bytes), then 20 copies of row 0 (LF +
    269 bytes) and 223 of row 2 (LF + 268 bytes), no line end after the last: 149 + 20 * 270 + 223 * 269 = 65536
    bytes from that quote to the end, so the window starts on it. The file is complete (its last row whole) and
    loads with all 245 rows (synthetic: no sample CSV over 64 KiB lacks its final line end)."""
    if not whole:
        monkeypatch.setattr(ascend_text, "WHOLE_CSV_BYTES", 0)
    lines = (PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_bytes().split(b"\n")
    head, rows = lines[0], lines[1:]
    assert (len(rows[0]), len(rows[2]), len(rows[1]) - rows[1].rfind(b'"')) == (269, 268, 149)
    body = b"\n".join([head, rows[0], rows[1]] + [rows[0]] * 20 + [rows[2]] * 223)
    assert body[len(body) - 65536:len(body) - 65535] == b'"'
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(body)
    kd = ascend_text.read_kernel_details(str(f), [])
    assert len(kd) == 245 and kd["Start Time(us)"].iloc[-1] == "1736408883731226.644"


def test_side_json_cut_short_is_truncated(tmp_path):
    """A JSON side file cut short (an interrupted copy) is named truncated, not merely malformed: the excerpt's
    communication.json cut to its first half (synthetic) fails the load with "truncated JSON (...)", naming it."""
    d = _excerpt(tmp_path)
    f = d / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    data = f.read_bytes()
    f.write_bytes(data[:len(data) // 2])
    with pytest.raises(ProfileError) as exc:
        load_profile(str(d), OPTS)
    assert exc.value.path == str(f) and exc.value.message.startswith("truncated JSON (")


def test_lone_surrogate_in_a_side_json_key_is_refused(tmp_path):
    """Python's reader (used for a side file holding NaN / Infinity) lets an escaped lone surrogate through, in a
    key as in a value; no report can write either, so both are refused as the strict decoder refuses them
    (profiler_metadata.json with a NaN value and the key "dp\\ud800", synthetic)."""
    f = tmp_path / "profiler_metadata.json"
    f.write_bytes(b'{"loss": NaN, "dp\\ud800": 1}')
    with pytest.raises(ProfileError, match="a lone escaped UTF-16 surrogate"):
        ascend_text.read_json(str(f))


def test_side_json_fault_without_a_python_constant_keeps_the_strict_message(tmp_path):
    """Python's reader is asked only where the strict decoder stopped at a NaN / Infinity literal; any other fault
    is named as the strict decoder names it, with its byte offset: communication.json holding {"a": x}
    (synthetic) is malformed at byte 6, where the x is."""
    f = tmp_path / "communication.json"
    f.write_bytes(b'{"a": x}')
    with pytest.raises(ProfileError) as exc:
        ascend_text.read_json(str(f))
    assert exc.value.message == "malformed JSON: invalid character (byte 6)"  # msgspec's own lead is not repeated


def test_profiler_info_without_common_config_keeps_level_and_metrics(tmp_path):
    """The profiler level and AI Core metrics come from experimental_config; profile_memory, from common_config,
    may be missing without losing them: the excerpt's profiler_info_0.json with common_config removed (synthetic)
    still gives its _profiler_level and _aic_metrics, read from the file with the json module."""
    d = _excerpt(tmp_path)
    info = d / "profiler_info_0.json"
    data = json.loads(info.read_text())
    exp = data["config"]["experimental_config"]
    del data["config"]["common_config"]
    info.write_text(json.dumps(data))
    p = load_profile(str(d), OPTS)
    assert (p.extra["profiler_level"], p.extra["aic_metrics"]) == (exp["_profiler_level"], exp["_aic_metrics"])
    assert "profile_memory" not in p.extra


def test_duration_in_non_ascii_digits_is_no_number(tmp_path):
    """Python's float() reads fullwidth digits ("１２") as 12; an export writes ASCII, so they are junk: NaN (0 ns),
    counted once, as "1_5" is (the excerpt's row 0 Duration(us) edited, synthetic). Row 1 keeps its 21.98 us."""
    f, _ = _kernel_details(tmp_path, {(0, "Duration(us)"): "\uff11\uff12"})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert np.isnan(kd["Duration(us)"].iloc[0]) and kd["dur"].tolist()[:2] == [0, 21_980]
    assert warnings == [f"{f}: 1 Duration(us) value(s) are not numbers; read as missing."]


@pytest.mark.parametrize("length", [100_000, 150_000])
def test_streamed_header_over_the_cap_is_refused_as_in_memory(tmp_path, monkeypatch, length):
    """A header line longer than MAX_HEADER_BYTES is no header whether the file is read whole or streamed in 64 KiB
    reads: with the cap at 65536, a first line of 100,000 bytes (its line end in the second read) or 150,000 bytes
    (in the third) of column names "c00000," (synthetic) is refused both ways. The streamed read checked the cap
    only on a read without the line end, so it took the 100,000-byte line as a header."""
    monkeypatch.setattr(ascend_text, "MAX_HEADER_BYTES", 1 << 16)
    f = tmp_path / "memory_record.csv"
    f.write_bytes("".join(f"c{i:05d}," for i in range(21_429)).encode()[:length] + b"\n1\n")
    for data in (None, f.read_bytes()):
        with pytest.raises(ProfileError, match=r"malformed CSV header: no line end in the first 65536 bytes"):
            ascend_text._header(str(f), data)


def test_flow_ids_pair_by_their_text_whether_all_are_numbers_or_not(tmp_path):
    """Flows pair by the text of their id (reference-2 §2.1): the excerpt's first paired async_npu end with its id
    written as a JSON string (synthetic) still pairs with its start, and the flows are the unedited file's, row
    for row. The loader pairs an all-integer id column by value and any other by text: both ways agree."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    flows = [e for e in events if e.get("cat") == "async_npu" and e["ph"] in ("s", "f")]
    ends = {e["id"] for e in flows if e["ph"] == "f"}
    assert all(type(e["id"]) is int for e in flows)
    paired = next(e["id"] for e in flows if e["ph"] == "s" and e["id"] in ends)
    before = load_profile(str(d), OPTS).flows
    next(e for e in flows if e["ph"] == "f" and e["id"] == paired)["id"] = str(paired)
    f.write_text(json.dumps(events))
    got = load_profile(str(d), OPTS).flows
    assert len(before) > 0 and str(paired) in set(before["id"])
    pd.testing.assert_frame_equal(got, before)


def test_flow_events_without_an_id_pair_with_nothing(tmp_path):
    """Flows pair by (category, id); a flow event without an id pairs with nothing, not with another id-less one:
    the excerpt's first paired async_npu start and the end of another pair with their "id" removed (synthetic)
    lose those two flows, and no flow takes the id "None"."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    flows = [e for e in events if e.get("cat") == "async_npu" and e["ph"] in ("s", "f")]
    ends = {e["id"] for e in flows if e["ph"] == "f"}
    paired = [e["id"] for e in flows if e["ph"] == "s" and e["id"] in ends]
    before = len(load_profile(str(d), OPTS).flows)
    del next(e for e in flows if e["ph"] == "s" and e["id"] == paired[0])["id"]
    del next(e for e in flows if e["ph"] == "f" and e["id"] == paired[1])["id"]
    f.write_text(json.dumps(events))
    got = load_profile(str(d), OPTS).flows
    assert len(got) == before - 2 and "None" not in set(got["id"])


def test_args_of_metadata_the_loader_does_not_read_are_not_decoded(tmp_path):
    """Only process / thread name and sort-index records feed the lanes, so only their args are decoded: a
    process_labels record whose args are a list (the excerpt's HCCL one edited, synthetic) does not fail the load;
    the HCCL lane is still found."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    pid = _pid_of(events, "HCCL")
    label = next(e for e in events if e.get("ph") == "M" and e["name"] == "process_labels" and e["pid"] == pid)
    label["args"] = ["NPU"]
    f.write_text(json.dumps(events))
    assert load_profile(str(d), OPTS).extra["hccl_pid"] == pid


MS_KERNELS = (Path(__file__).resolve().parent / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
              / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")


def _repeats(data: bytes) -> int:
    """Rows of a CSV that repeat an earlier one byte for byte, counted from the raw lines (no quoted line break in
    these files)."""
    rows = data.splitlines()[1:]
    return len(rows) - len(set(rows))


def test_repeated_kernel_rows_are_said_and_counted_as_the_original_does(tmp_path):
    """A kernel_details.csv row written again (a file joined from two copies) counted each time without a word:
    the MindSpore-layout fixture's kernels (tests/data/npu/README.md) with rows 1-3 appended again and row 1 a
    third time read 4 repeats, counted here from the raw lines; every row stays (the original's figures), and the
    warning says so. A row that differs in one column read (its Duration) is no repeat."""
    data = MS_KERNELS.read_bytes()
    lines = data.splitlines(keepends=True)
    assert _repeats(data) == 0
    f = tmp_path / "kernel_details.csv"
    joined = data + b"".join(lines[1:4]) + lines[1]
    f.write_bytes(joined)
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert len(kd) == len(lines) - 1 + 4 and _repeats(joined) == 4
    assert warnings == [f"{f}: 4 row(s) repeat an earlier row in every column read (the same kernel written again, "
                        "as in a file joined from two copies); each row counts, as in the original, so those "
                        "kernels' time counts more than once."]
    fields = lines[1].decode().split(",")
    assert fields[9] == "11.26"  # Duration(us) of row 1
    fields[9] = "11.27"
    f.write_bytes(data + ",".join(fields).encode())
    warnings.clear()
    ascend_text.read_kernel_details(str(f), warnings)
    assert warnings == []


def test_repeated_kernel_rows_without_a_start_are_no_repeat(tmp_path):
    """A row whose Start Time(us) is not read (ts -1) is no kernel the repeat count compares: the MindSpore-layout
    fixture's row 1 appended twice with its start "abc" (column 9) in both, two byte-equal lines (1 repeat by the
    raw lines), reads 2 starts that are no number and no repeated row."""
    data = MS_KERNELS.read_bytes()
    fields = data.splitlines(keepends=True)[1].decode().split(",")
    assert fields[8].strip() == "1736408883731013.819"
    fields[8] = "abc"
    joined = data + 2 * ",".join(fields).encode()
    assert _repeats(joined) == 1
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(joined)
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert kd["ts"].tolist()[-2:] == [-1, -1]
    assert warnings == [f"{f}: 2 Start Time(us) value(s) are not numbers; those kernels are not matched "
                        "(to a launching operator, a device task's Input Shapes or C_CORE_SQE tasks)."]


def test_repeated_kernel_rows_of_a_real_file(samples):
    """mstt's advisor test data holds a row written four times (3 repeats by its raw lines); the other real
    kernel_details files of the samples hold none, and none is said of them."""
    found = sorted(samples.rglob("kernel_details*.csv"))
    assert len(found) >= 10
    for path in found:
        warnings: list[str] = []
        ascend_text.read_kernel_details(str(path), warnings)
        said = [w for w in warnings if "repeat an earlier row" in w]
        n = _repeats(path.read_bytes())
        assert said == ([f"{path}: {n} row(s) repeat an earlier row in every column read (the same kernel written "
                         "again, as in a file joined from two copies); each row counts, as in the original, so "
                         "those kernels' time counts more than once."] if n else []), path
    assert sum(_repeats(p.read_bytes()) > 0 for p in found) == 1


def test_repeated_device_tasks_are_said(tmp_path):
    """Device tasks written again (a trace joined from two copies) were read without a word: the MindSpore-layout
    fixture's trace_view.json (tests/data/npu/README.md) with its first 5 Ascend Hardware tasks and 2 HCCL tasks
    appended again reads 7 repeats, counted here from the raw events; a copy whose duration differs, and a
    repeated Overlap Analysis event (no task), are no repeat."""
    src = MS_KERNELS.parent / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}

    def on(lane):
        return [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == lane]

    hw, hccl, ovl = on("Ascend Hardware"), on("HCCL"), on("Overlap Analysis")
    assert len(hw) >= 6 and len(hccl) >= 2 and ovl
    again = [dict(e) for e in hw[:5] + hccl[:2]]
    changed = dict(hw[5], dur=float(hw[5]["dur"]) + 1.0)
    folder = tmp_path / "rank-0_ascend_ms" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    trace = folder / "trace_view.json"
    trace.write_text(json.dumps(events + again + [changed, dict(ovl[0])]))
    keys = [(e["pid"], e["tid"], str(e["ts"]), float(e["dur"]), e["name"])
            for e in json.loads(trace.read_text()) if e.get("ph") == "X" and lanes.get(e.get("pid")) in
            ("Ascend Hardware", "HCCL")]
    assert len(keys) - len(set(keys)) == 7
    profile = load_profile(str(folder), OPTS)
    said = [w for w in profile.warnings if "repeat an earlier one" in w]
    assert said == [f"{trace}: 7 device task(s) on the Ascend Hardware / HCCL lanes repeat an earlier one (same lane, "
                    "start, duration and name: the same task written again, as in a trace joined from two copies); "
                    "they are read as written, as in the original, so figures that sum them count those tasks more "
                    "than once."]
    assert not [w for w in load_profile(str(src.parent), OPTS).warnings if "repeat an earlier one" in w]


def test_overlapping_overlap_analysis_spans_are_said(tmp_path: Path) -> None:
    """Overlap Analysis spans of one kind that overlap (one written twice, one stretched over the next) summed
    into Computing / Uncovered Communication Time twice without a word. The torch excerpt (tests/data/npu) with its
    Computing span at ...731113.701 (21.981 us) written again and its Communication(Not Overlapped) span at
    ...732435.748 stretched by 150 us to end at ...732683.430, over the next one (...732544.370 + 88.222 us, all of
    it) and into the one after (...732678.513: 4.917 us): 3 spans, 21.981 + 88.222 + 4.917 = 115.120 us, worked out
    by hand from the events listed here. A Free and a Communication span written again feed no sum: no word.
    Computing Time keeps the original's sum (the copy counted), the warning says so."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    ovl = {(e["name"], e["ts"]): e for e in events
           if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Overlap Analysis"}
    copy = dict(ovl["Computing", "1736408883731113.701"])
    assert copy["dur"] == 21.981
    stretched = ovl["Communication(Not Overlapped)", "1736408883732435.748"]
    assert stretched["dur"] == 97.682
    assert ovl["Communication(Not Overlapped)", "1736408883732544.370"]["dur"] == 88.222
    assert "1736408883732678.513" < "1736408883732683.430" < "1736408883732773.995"  # the third's start and end
    stretched["dur"] = 247.682
    events += [copy, dict(ovl["Free", "1736408883731135.682"]), dict(ovl["Communication", "1736408883732241.564"])]
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "Overlap Analysis span" in w] == [
        f"{trace}: 3 Overlap Analysis span(s) ('Computing', 'Communication(Not Overlapped)') start before an earlier "
        "span of the same kind ends (0.115 ms of overlap; a span written twice, as in a trace joined from two "
        "copies?); they are read as written, as in the original, so Computing Time and Uncovered Communication Time, "
        "which sum them, count that time more than once."]
    clean = load_profile(str(PT), OPTS)
    assert not [w for w in clean.warnings if "Overlap Analysis span" in w]
    assert (breakdown_npu.npu_breakdown(profile).computing_ns
            == breakdown_npu.npu_breakdown(clean).computing_ns + 21_981)
    # only the spans read: a Free span stretched over the next Free span is no figure's
    stretched["dur"] = 97.682
    ovl["Free", "1736408883731025.080"]["dur"] = 500.0
    trace.write_text(json.dumps(events[:-3]))
    assert not [w for w in load_profile(str(out), OPTS).warnings if "Overlap Analysis span" in w]


def test_touching_and_empty_overlap_spans_overlap_nothing(tmp_path: Path) -> None:
    """A span that starts where the one before it ends, and a 0 us span inside another, count no time twice: no
    warning. Torch excerpt (tests/data/npu): its second Computing span moved to start at the first one's end
    (computed with decimal), and a 0 us copy of the first one starting 1 us into it."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    comp = sorted((e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Overlap Analysis"
                   and e["name"] == "Computing"), key=lambda e: Decimal(str(e["ts"])))
    first, second = comp[:2]
    end = Decimal(str(first["ts"])) + Decimal(str(first["dur"]))
    assert Decimal(str(second["ts"])) >= end and Decimal(str(first["dur"])) > 1
    second["ts"] = str(end)
    events.append(dict(first, ts=str(Decimal(str(first["ts"])) + 1), dur=0))
    out, trace = _with_trace(tmp_path, events)
    assert not [w for w in load_profile(str(out), OPTS).warnings if "Overlap Analysis span" in w]


def test_two_spans_of_a_kind_that_overlap_are_said(tmp_path: Path) -> None:
    """Two spans of one kind are enough to overlap: the torch excerpt (tests/data/npu) with its Uncovered
    Communication spans cut to the first two, the first stretched 50 us past the second's start; the overlap (50 us
    or the second's whole duration, the smaller) computed with decimal."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}

    def uncovered(e):
        return (e.get("ph") == "X" and lanes.get(e.get("pid")) == "Overlap Analysis"
                and e["name"] == "Communication(Not Overlapped)")

    spans = sorted((e for e in events if uncovered(e)), key=lambda e: Decimal(str(e["ts"])))
    assert len(spans) > 2
    a, b = spans[:2]
    events = [e for e in events if not uncovered(e) or e is a or e is b]
    a["dur"] = str(Decimal(str(b["ts"])) - Decimal(str(a["ts"])) + 50)
    twice = min(Decimal(50), Decimal(str(b["dur"])))
    out, trace = _with_trace(tmp_path, events)
    assert [w for w in load_profile(str(out), OPTS).warnings if "Overlap Analysis span" in w] == [
        f"{trace}: 1 Overlap Analysis span(s) ('Communication(Not Overlapped)') start before an earlier span of the "
        f"same kind ends ({twice / 1000:.3f} ms of overlap; a span written twice, as in a trace joined from two "
        "copies?); they are read as written, as in the original, so Computing Time and Uncovered Communication Time, "
        "which sum them, count that time more than once."]


def test_a_host_event_copied_under_another_category_is_no_repeat(tmp_path: Path) -> None:
    """The host repeats are keyed by category too: a cpu_op written again as a python_function is another event,
    not the same one twice. Torch excerpt (tests/data/npu), its first cpu_op appended so."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    op = next(e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    events.append(dict(op, cat="python_function"))
    out, trace = _with_trace(tmp_path, events)
    assert not [w for w in load_profile(str(out), Options(enable_operator_compare=True)).warnings
                if "host event(s)" in w]


def test_overlap_analysis_spans_of_another_name_are_counted(tmp_path: Path) -> None:
    """The breakdown picks Overlap Analysis spans by exact name, as the original does: a span renamed, re-cased or
    without a name left Computing or Uncovered Communication Time for Free Time without a word. The torch excerpt
    (tests/data/npu) with its first Computing span renamed "computing", its first Communication(Not Overlapped)
    span's name removed and its first Free span renamed "Idle": 3 such spans, the first in file order named; the
    two sums fall by those two spans' durations, read here from the raw events, and E2E Time stays."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    spans = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Overlap Analysis"]
    assert {e["name"] for e in spans} == {"Computing", "Communication", "Communication(Not Overlapped)", "Free"}
    computing = next(e for e in spans if e["name"] == "Computing")
    uncovered = next(e for e in spans if e["name"] == "Communication(Not Overlapped)")
    free = next(e for e in spans if e["name"] == "Free")
    computing["name"], free["name"] = "computing", "Idle"
    del uncovered["name"]
    first = next(e for e in spans if e is computing or e is uncovered or e is free)
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "Overlap Analysis span" in w] == [
        f"{trace}: 3 Overlap Analysis span(s) have a name other than Computing, Communication, Communication(Not "
        f"Overlapped) or Free (the first: {first.get('name', '')!r}); names are compared exactly, as in the original, "
        "so they count in neither Computing Time nor Uncovered Communication Time, only in the E2E Time and so in Free "
        "Time"]
    got, clean = breakdown_npu.npu_breakdown(profile), breakdown_npu.npu_breakdown(load_profile(str(PT), OPTS))
    assert got.computing_ns == clean.computing_ns - ns(computing["dur"])
    assert got.uncovered_comm_ns == clean.uncovered_comm_ns - ns(uncovered["dur"])
    assert got.e2e_ns == clean.e2e_ns
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "Overlap Analysis span" in w]


def test_events_without_a_pid_or_tid_are_counted(tmp_path: Path) -> None:
    """An event without a pid or tid reads as lane 0, as the Kineto loader reads it (and says so): pid 0 is no
    process the trace names, so a device task that lost its pid left the operator device times without a word.
    The torch excerpt (tests/data/npu) with the pid of its first Ascend Hardware task and of its first async_npu
    flow start removed and the tid of its first cpu_op and of its first async_npu flow end removed: a complete
    event and a flow without a pid, a complete event and a flow without a tid, counted here from the raw events,
    each kind apart; the lane reads one task fewer."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware"]
    del hw[0]["pid"]
    del next(e for e in events if e.get("ph") == "s" and e.get("cat") == "async_npu")["pid"]
    del next(e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op")["tid"]
    # a flow end counts as a flow, as a start does (mutation testing, session 63: the ends went uncounted unsaid)
    del next(e for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu")["tid"]
    xs, flows = ([e for e in events if e.get("ph") in phases] for phases in (("X",), ("s", "f")))
    assert [sum("pid" not in e for e in xs), sum("pid" not in e for e in flows), sum("tid" not in e for e in xs),
            sum("tid" not in e for e in flows)] == [1, 1, 1, 1]
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "without a pid" in w] == [
        f"{trace}: 1 complete event without a pid; 1 flow event without a pid; 1 complete event without a tid; 1 flow "
        "event without a tid: each read as 0, so they share that lane with one another and with any event written "
        "there"]
    assert len(profile.kernels) == len(hw) - 1
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "without a" in w]


def test_device_lane_events_of_another_phase_are_counted(tmp_path: Path) -> None:
    """Device tasks, HCCL tasks and overlap spans are complete events ("X"): one whose ph was damaged left every
    figure (a kernel out of the operator times, a span out of Computing Time) without a word. The torch excerpt
    (tests/data/npu) with its first three Ascend Hardware tasks' ph made "x", absent and "B" and its first Overlap
    Analysis span's "i": 4 such events, the first "x", counted here from the raw events; the kernels read are the
    lane's complete events less those three."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}

    def on(lane):
        return [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == lane]

    hw, ovl = on("Ascend Hardware"), on("Overlap Analysis")
    hw[0]["ph"], hw[2]["ph"], ovl[0]["ph"] = "x", "B", "i"
    del hw[1]["ph"]
    out, trace = _with_trace(tmp_path, events)
    device = ("Ascend Hardware", "HCCL", "Overlap Analysis")
    odd = [e.get("ph", "") for e in events
           if lanes.get(e.get("pid")) in device and e.get("ph", "") not in ("X", "M", "s", "f", "C")]
    assert sorted(odd) == ["", "B", "i", "x"]
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "other than" in w] == [
        f"{trace}: 4 Ascend Hardware, HCCL or Overlap Analysis event(s) with a ph other than \"X\" (the first: "
        f"{odd[0]!r}); not read, so they count in no figure"]
    assert len(profile.kernels) == len(hw) - 3
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "other than" in w]


def test_repeated_host_events_are_said(tmp_path: Path) -> None:
    """Host events written again (a trace joined from two copies) doubled an operator's calls and time in ApiCompare
    and the operator sheets without a word. The torch excerpt (tests/data/npu; it holds no python_function event)
    with its first 5 cpu_op events appended again reads 5 repeats, counted here from the raw events by a set of
    (pid, tid, ts, dur, name, cat); a copy whose duration differs is no repeat; the ops are read as written."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    assert len(ops) >= 6
    events += [dict(e) for e in ops[:5]] + [dict(ops[5], dur=float(ops[5]["dur"]) + 1.0)]
    out, trace = _with_trace(tmp_path, events)
    keys = [(e["pid"], e["tid"], str(e["ts"]), float(e["dur"]), e["name"], e["cat"]) for e in events
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "python_function")]
    assert len(keys) - len(set(keys)) == 5
    opts = Options(enable_operator_compare=True, enable_api_compare=True)
    profile = load_profile(str(out), opts)
    assert [w for w in profile.warnings if "host event(s)" in w] == [
        f"{trace}: 5 host event(s) (cpu_op, python_function) repeat an earlier one (same thread, start, duration, "
        "name and category: the same event written again, as in a trace joined from two copies); they are read as "
        "written, as in the original, so figures that sum them (ApiCompare, the operator and module sheets) count "
        "those events more than once."]
    assert len(profile.ops) == len(ops) + 6
    assert not [w for w in load_profile(str(PT), opts).warnings if "host event(s)" in w]


def test_events_without_an_epoch_start_are_counted(tmp_path: Path) -> None:
    """A complete event at a negative start, or at 0 among epoch starts, is a damaged ts: read as written, an HCCL
    task there changed CommunicationCompare (an overlap span stretched E2E Time to the whole epoch) without a word.
    The torch excerpt (tests/data/npu) with its first HCCL task's ts made -5 and its first cpu_op's "0": 2 such
    events, the first in file order named here; the task is read as written (-5 us = -5,000 ns)."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl = next(e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "HCCL")
    op = next(e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    hccl["ts"], op["ts"] = -5, "0"
    first = next(e for e in events if e is hccl or e is op)
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "no start time" in w] == [
        f"{trace}: 2 complete event(s) start at a negative time, or at 0 among epoch times (no start time: a damaged "
        f"ts; the first: {first['name']!r} at {first['ts']!r}); read as written, so they lie outside every step, and "
        "figures that span the trace (E2E Time) stretch to reach them"]
    assert (profile.comm["ts"] == -5_000).sum() == 1
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "no start time" in w]


def test_host_events_of_another_phase_are_no_device_lane_damage(tmp_path: Path) -> None:
    """The phase check reads the device lanes alone: a cpu_op of the Python lane made "B" is no device task, so
    the device lanes' count stays the 1 damaged task's (its first Ascend Hardware task made "x"). Torch excerpt
    (tests/data/npu), counted from the raw events."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = next(e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware")
    op = next(e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    assert lanes[op["pid"]] == "Python"
    hw["ph"], op["ph"] = "x", "B"
    out, trace = _with_trace(tmp_path, events)
    assert [w for w in load_profile(str(out), OPTS).warnings if "other than" in w] == [
        f"{trace}: 1 Ascend Hardware, HCCL or Overlap Analysis event(s) with a ph other than \"X\" (the first: 'x'); "
        "not read, so they count in no figure"]


def test_the_first_event_without_an_epoch_start_is_named(tmp_path: Path) -> None:
    """The warning names the first damaged event in file order, not the trace's first event: the torch excerpt
    (tests/data/npu) with its third HCCL task's ts made -5 alone (1 event, named here from the raw events)."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "HCCL"][2]
    hccl["ts"] = -5
    out, trace = _with_trace(tmp_path, events)
    assert [w for w in load_profile(str(out), OPTS).warnings if "no start time" in w] == [
        f"{trace}: 1 complete event(s) start at a negative time, or at 0 among epoch times (no start time: a damaged "
        f"ts; the first: {hccl['name']!r} at -5); read as written, so they lie outside every step, and figures that "
        "span the trace (E2E Time) stretch to reach them"]


def test_python_lane_events_without_a_category_are_counted(tmp_path: Path) -> None:
    """torch_npu gives every complete event of the Python lane a category; one whose cat was damaged (absent,
    renamed, "") left ApiCompare and the operator sheets without a word. The torch excerpt (tests/data/npu) with
    the cat of its first two cpu_op events removed and the third's made "": 3 such events, and 3 ops fewer."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    del ops[0]["cat"], ops[1]["cat"]
    ops[2]["cat"] = ""
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    # said once: an event without a cat is not one "with a cat other than" the four too (mutation testing, session 63)
    assert [w for w in profile.warnings if "Python lane" in w] == [
        f"{trace}: 3 complete event(s) of the Python lane without a cat; not read, so they count in no figure"]
    assert len(profile.ops) == len(ops) - 3
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "without a cat" in w]


def test_python_lane_events_of_another_category_are_counted(tmp_path: Path) -> None:
    """torch_npu writes four categories on the Python lane (cpu_op, python_function, enqueue, dequeue), and the
    tables pick host events by category (case aside): an op whose cat was damaged ("cpu_op ") or a dequeue renamed
    left ApiCompare, the operator or memory sheets without a word. The torch excerpt (tests/data/npu) with its first
    cpu_op's cat made "cpu_op ", its second's "CPU_OP" (read: case aside) and its first dequeue's
    "gpu_user_annotation": 2 such events, the first named; 1 op fewer."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    python = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Python"]
    assert {e.get("cat") for e in python} == {"cpu_op", "enqueue", "dequeue"}
    ops = [e for e in python if e["cat"] == "cpu_op"]
    ops[0]["cat"], ops[1]["cat"] = "cpu_op ", "CPU_OP"
    next(e for e in python if e["cat"] == "dequeue")["cat"] = "gpu_user_annotation"
    out, trace = _with_trace(tmp_path, events)
    opts = Options(enable_memory_compare=True)
    profile = load_profile(str(out), opts)
    assert [w for w in profile.warnings if "Python lane" in w] == [
        f"{trace}: 2 complete event(s) of the Python lane with a cat other than cpu_op, python_function, enqueue or "
        "dequeue (the first: 'cpu_op '); not read, so they count in no figure"]
    assert len(profile.ops) == len(ops) - 1
    assert not [w for w in load_profile(str(PT), opts).warnings if "Python lane" in w]


def test_python_lane_cat_note_counts_that_lane_alone_and_names_its_first_damaged_event(tmp_path: Path) -> None:
    """The note of the Python lane's other categories counts that lane's events alone and names the first damaged
    one, not the trace's first event (mutation testing, session 63: either could change with every test passing).
    The torch excerpt (tests/data/npu) with its sixth cpu_op's cat made "cpu_op_" and its first Ascend Hardware
    task's "AscendCL" (a device lane reads its tasks whatever their cat): 1 such event, named; every task read."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}

    def on(lane):
        return [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == lane]

    ops, hw = [e for e in on("Python") if e.get("cat") == "cpu_op"], on("Ascend Hardware")
    ops[5]["cat"], hw[0]["cat"] = "cpu_op_", "AscendCL"
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "Python lane" in w] == [
        f"{trace}: 1 complete event(s) of the Python lane with a cat other than cpu_op, python_function, enqueue or "
        "dequeue (the first: 'cpu_op_'); not read, so they count in no figure"]
    assert len(profile.kernels) == len(hw)

def test_one_stray_task_one_nameless_task_and_lane_damage_are_each_said_once(tmp_path: Path) -> None:
    """Counts of one are said, and each event in one note alone (mutation testing, session 63: a threshold of 2, or
    a stray count that did not leave out the events the lane notes say, passed every test). The torch excerpt
    (tests/data/npu) with a process_name record for pid 0 ("Extra", so an event without a pid, read as pid 0, lies on
    a named process), the pid of its first cpu_op removed, its first Ascend Hardware task moved to pid 424242 (no
    process_name), its second's pid made "NaN" (a lane of its own, said as damage), its third's name made "", and its
    fourth cpu_op made an instant ("i") without a name (no complete event: not counted as a nameless host event).
    By hand: 1 event without a pid, 1 with a damaged pid, 1 stray, 1 nameless device task, no nameless host event;
    the Ascend Hardware lane reads its tasks less the two moved off it."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert 0 not in lanes and 424242 not in lanes
    hw = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware"]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    events.append({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "Extra"}})
    del ops[0]["pid"]
    hw[0]["pid"], hw[1]["pid"], hw[2]["name"] = 424242, "NaN", ""
    ops[3]["ph"], ops[3]["name"] = "i", ""
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    said = [w for w in profile.warnings if "pid" in w or "no name" in w or "without a name" in w]
    assert said == [
        f"{trace}: 1 complete event(s) lie on processes the trace gives no name (no process_name record, or an empty "
        "one), so no lane reads them and they count in no figure",
        f"{trace}: 1 complete event without a pid: each read as 0, so they share that lane with one another and with "
        "any event written there",
        f"{trace}: 1 complete event whose pid is not written as an integer within int64 (the first: 'NaN'): each such "
        "value is read as a lane of its own",
        f"{trace}: 1 device task on the Ascend Hardware / HCCL lanes without a name (or with an empty one): read as "
        "named \"\", so no figure that goes by name holds it (an HCCL plane's Notify_Wait tasks are its Wait time; "
        "kernels and communication rows are keyed by name)"]
    assert len(profile.kernels) == len(hw) - 2


def test_a_trace_naming_no_process_says_its_unnamed_events_beside_each_missing_lane(tmp_path: Path) -> None:
    """With no process named at all (every process_name record lost) no device lane is found, so the missing-lane
    lines say where the device events went, which no other line says there (mutation testing, session 63: the aside
    could be dropped with every test passing). The torch excerpt (tests/data/npu) without its process_name records:
    its complete events, its kernel_details.csv rows and their hcom_ ones counted here from the raw files."""
    src = PT / "ASCEND_PROFILER_OUTPUT"
    events = [e for e in json.loads((src / "trace_view.json").read_text())
              if not (e.get("ph") == "M" and e.get("name") == "process_name")]
    n = sum(e.get("ph") == "X" for e in events)
    with open(src / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        names = [row["Name"] for row in csv.DictReader(fh)]
    hcom = sum(name.startswith("hcom_") for name in names)
    assert (n, len(names), hcom) == (485, 20, 1)
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "is named in the trace" in w] == [
        f"{trace}: no 'Ascend Hardware' process is named in the trace ({n} complete event(s) lie on processes it gives "
        f"no name), though kernel_details.csv lists {len(names)} kernel(s): no device task is read, so operators and "
        "modules get no device time",
        f"{trace}: no Communication or HCCL process is named in the trace ({n} complete event(s) lie on processes it "
        f"gives no name), though kernel_details.csv lists {hcom} HCCL op(s): no communication task is read, so the "
        "communication comparison and the communication groups have none"]

def test_the_missing_communication_lane_counts_the_hccl_ops_by_core_as_the_breakdown_does(tmp_path: Path) -> None:
    """The missing-lane line counted kernel_details.csv's HCCL ops by their ``hcom_`` name alone, where the breakdown
    and the Summary take an Accelerator Core of HCCL or COMMUNICATION (newer torch_npu) as one whatever its name
    (``model.hcom_name`` / ``hccl_core``, one rule for the three). The torch excerpt without its process_name
    records, as above, its one HCCL op (row 7) renamed without its prefix and of core COMMUNICATION, and a Mul
    (row 5) of core " hccl" (padded, lower case): 2 HCCL ops, where the count by name found none and the line
    was not said."""
    src = PT / "ASCEND_PROFILER_OUTPUT"
    events = [e for e in json.loads((src / "trace_view.json").read_text())
              if not (e.get("ph") == "M" and e.get("name") == "process_name")]
    n = sum(e.get("ph") == "X" for e in events)
    out, trace = _with_trace(tmp_path, events)
    kd = out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert (rows[7]["Name"], rows[7]["Accelerator Core"]) == ("hcom_allReduce__586_0_1", "HCCL")
    assert sum(r["Name"].startswith("hcom_") or r["Accelerator Core"] == "HCCL" for r in rows) == 1
    _edited_csv(kd, {(7, "Name"): "allReduce__586_0_1", (7, "Accelerator Core"): "COMMUNICATION",
                     (5, "Accelerator Core"): " hccl"})
    profile = load_profile(str(out), OPTS)
    assert not any(name.startswith("hcom_") for name in profile.kernel_details["Name"])
    assert [w for w in profile.warnings if "no Communication or HCCL process" in w] == [
        f"{trace}: no Communication or HCCL process is named in the trace ({n} complete event(s) lie on processes it "
        "gives no name), though kernel_details.csv lists 2 HCCL op(s): no communication task is read, so the "
        "communication comparison and the communication groups have none"]


def test_flow_ends_written_again_elsewhere_are_counted(tmp_path: Path) -> None:
    """An async_npu flow end written again at another task re-linked its op to that task (the last end wins, as in
    the original) without a word: with --enable_profiling_compare alone OverallMetrics moved unsaid. The torch
    excerpt (tests/data/npu) with its first two async_npu ends of a start in it appended again at the start and
    lane of its last Ascend Hardware task, and its third appended unchanged (no other task): 2 such ends; the two
    flows now end at that task."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    last = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware"][-1]
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "async_npu"}
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu" and e["id"] in starts]
    assert len(ends) >= 3
    moved = [dict(e, ts=last["ts"], pid=last["pid"], tid=last["tid"]) for e in ends[:2]]
    events += [*moved, dict(ends[2])]
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "flow end(s)" in w] == [
        f"{trace}: 2 flow end(s) (async_npu, fwdbwd) are followed by another end of the same id at another task; the "
        "last end is read, as in the original, so the op or forward op of that id links only to the last one's task"]
    flows = profile.flows.set_index("id")
    start = Decimal(str(last["ts"])) * 1000
    assert all(flows.loc[str(e["id"]), "f_ts"] == int(start) for e in moved)
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "flow end(s)" in w]


def test_flow_ends_written_again_on_another_thread_or_process_alone_are_counted(tmp_path: Path) -> None:
    """A place is a time, a pid and a tid: an end written again at its own time on another thread, or on another
    process, is elsewhere too (mutation testing, session 63: either id could be left out of the comparison with every
    test passing). The torch excerpt (tests/data/npu) with its first async_npu end of a start in it appended again
    with its tid plus 1, and its second with pid 424242: 2 such ends."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "async_npu"}
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu" and e["id"] in starts]
    assert ends[0]["id"] != ends[1]["id"] and 424242 not in {e.get("pid") for e in events}
    events += [dict(ends[0], tid=ends[0]["tid"] + 1), dict(ends[1], pid=424242)]
    out, trace = _with_trace(tmp_path, events)
    assert [w for w in load_profile(str(out), OPTS).warnings if "flow end(s)" in w] == [
        f"{trace}: 2 flow end(s) (async_npu, fwdbwd) are followed by another end of the same id at another task; the "
        "last end is read, as in the original, so the op or forward op of that id links only to the last one's task"]

def test_flow_starts_written_again_elsewhere_and_flows_without_an_id_are_counted(tmp_path: Path) -> None:
    """A flow start written again at another op re-linked the id to that op (the last start wins, as in the
    original), and a flow without an id paired with none, each leaving an op without its task unsaid. The torch
    excerpt (tests/data/npu) with its second paired async_npu start given the first one's id and the end of its
    third pair without an id: 1 start hidden, 1 event without an id, counted here from the raw events; the first id
    now starts at the second op, and two pairs are lost (the second's and the third's)."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    flows = [e for e in events if e.get("cat") == "async_npu" and e.get("ph") in ("s", "f")]
    ends = {e["id"]: e for e in flows if e["ph"] == "f"}
    starts = [e for e in flows if e["ph"] == "s" and e["id"] in ends]
    assert len(starts) >= 3 and len({e["id"] for e in starts}) == len(starts)
    first, second = starts[0], starts[1]
    assert (first["ts"], first["tid"]) != (second["ts"], second["tid"])
    second["id"] = first["id"]
    del ends[starts[2]["id"]]["id"]
    out, trace = _with_trace(tmp_path, events)
    before = load_profile(str(PT), OPTS)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "flow start(s)" in w or "have no id" in w] == [
        f"{trace}: 1 flow start(s) (async_npu, fwdbwd) are followed by another start of the same id at another op; "
        "the last start is read, as in the original, so the earlier op or forward op of that id links to no task",
        f"{trace}: 1 flow event(s) (async_npu, fwdbwd) have no id; they pair with no other, so the op or forward op "
        "of such a flow links to no task"]
    assert len(profile.flows) == len(before.flows) - 2
    assert profile.flows.set_index("id").loc[str(first["id"]), "s_ts"] == ns(second["ts"])
    assert not [w for w in before.warnings if "flow start(s)" in w or "have no id" in w]


def test_flow_counts_take_thousands_separators(tmp_path: Path) -> None:
    """The flow notes count as their neighbours do ("1,200", not "1200"): the torch excerpt (tests/data/npu) with
    its first async_npu end written again 1,200 times without an id (copies of one event, 1 us apart), then its
    first paired async_npu end and that end's start each written again 1,200 times with their id."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    end = next(e for e in events if e.get("cat") == "async_npu" and e.get("ph") == "f")
    copies = [{k: v for k, v in end.items() if k != "id"} for _ in range(1200)]
    for i, e in enumerate(copies):
        e["ts"] = str(Decimal(str(end["ts"])) + i + 1)
    out, trace = _with_trace(tmp_path, events + copies)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "have no id" in w] == [
        f"{trace}: 1,200 flow event(s) (async_npu, fwdbwd) have no id; they pair with no other, so the op or forward "
        "op of such a flow links to no task"]
    # a paired end and its start each written again 1,200 times with their id, 1 us apart: all but the last of each
    # lie elsewhere than the last, 1,200 of each (mutation testing, session 63: these two counts' separators passed)
    starts = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e.get("ph") == "s"}
    paired = next(e for e in events if e.get("cat") == "async_npu" and e.get("ph") == "f" and e["id"] in starts)
    again = [dict(e, ts=str(Decimal(str(e["ts"])) + i + 1)) for e in (paired, starts[paired["id"]])
             for i in range(1200)]
    out, trace = _with_trace(tmp_path / "again", events + again)
    said = [w for w in load_profile(str(out), OPTS).warnings if "flow end(s)" in w or "flow start(s)" in w]
    assert [w.split(" (async_npu")[0] for w in said] == [f"{trace}: 1,200 flow end(s)", f"{trace}: 1,200 flow start(s)"]


def test_flow_events_of_another_phase_are_counted(tmp_path: Path) -> None:
    """Only flow starts and ends ("s", "f") pair: an async_npu or fwdbwd event whose ph was damaged ("F", "t") left
    its op without its task without a word. The torch excerpt (tests/data/npu) with its first async_npu start's ph
    made "t" and its first async_npu end's (on the Ascend Hardware lane) "F": 2 such events, the first in file
    order named, said once (not again as a device lane event); the two pairs are lost."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    flows = [e for e in events if e.get("cat") == "async_npu" and e.get("ph") in ("s", "f")]
    ends = {e["id"] for e in flows if e["ph"] == "f"}
    start = next(e for e in flows if e["ph"] == "s" and e["id"] in ends)
    starts = {e["id"] for e in flows if e["ph"] == "s"}
    end = next(e for e in flows if e["ph"] == "f" and e["id"] in starts and e["id"] != start["id"])
    start["ph"], end["ph"] = "t", "F"
    first = next(e for e in events if e is start or e is end)
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "ph other than" in w] == [
        f"{trace}: 2 async_npu / fwdbwd event(s) with a ph other than \"s\" or \"f\" (the first: {first['ph']!r}); "
        "not read, so the op or forward op of such a flow links to no task"]
    assert len(profile.flows) == len(load_profile(str(PT), OPTS).flows) - 2


def test_host_events_without_a_name_are_counted(samples, tmp_path: Path) -> None:
    """torch_npu names every host event: one whose name was lost read as an operator named "" or, a
    python_function, as no module (its children moved to the module around it) without a word. The msinsight text
    level1 rank0 sample with the name of its first two nn.Module python_function events removed and its first
    cpu_op's made "": 3 such events, counted here from the raw events; they are read, with the name ""."""
    src = samples / LEVEL1
    out = shutil.copytree(src, tmp_path / "r_ascend_pt")
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    modules = [e for e in events if e.get("cat") == "python_function" and e["name"].startswith("nn.Module:")]
    for e in modules[:2]:
        del e["name"]
    next(e for e in events if e.get("cat") == "cpu_op")["name"] = ""
    trace.write_text(json.dumps(events))
    assert sum(e.get("ph") == "X" and e.get("cat") in ("cpu_op", "python_function") and not e.get("name")
               for e in events) == 3
    opts = Options(enable_operator_compare=True)
    profile = load_profile(str(out), opts)
    # the categories named are those the run reads: enqueue / dequeue only with the memory comparison (it listed
    # them in an operator comparison, which reads none)
    assert [w for w in profile.warnings if "without a name" in w] == [
        f"{trace}: 3 host events (cpu_op, python_function) without a name (or with an empty one): "
        "read as named \"\", so such an operator is listed under that name and such a python_function marks no "
        "module"]
    # the memory comparison alone reads cpu_op, enqueue and dequeue: of the three, the cpu_op
    assert [w for w in load_profile(str(out), Options(enable_memory_compare=True)).warnings
            if "without a name" in w] == [
        f"{trace}: 1 host event (cpu_op, enqueue, dequeue) without a name (or with an empty one): read as named "
        "\"\", so such an operator is listed under that name and such a python_function marks no module"]
    assert (profile.python_functions["name"] == "").sum() == 2 and (profile.ops["name"] == "").sum() == 1
    assert not [w for w in load_profile(str(src), opts).warnings if "without a name" in w]


def test_real_traces_hold_no_overlapping_span_other_phase_or_repeated_host_event(samples):
    """No real trace_view.json or CANN msprof timeline of the samples has two spans of one kind overlapping on its
    Overlap Analysis lane, a device lane event of a phase the lanes do not hold or a host event written twice: none
    of those warnings is given."""
    found = sorted(samples.rglob("trace_view.json")) + sorted(samples.rglob("msprof_*.json"))
    assert len(found) >= 8
    for path in found:
        said = [w for w in load_profile(str(path), Options(enable_operator_compare=True)).warnings
                if "Overlap Analysis span" in w or "with a ph other than" in w or "host event(s)" in w
                or "no start time" in w or "without a cat" in w or "flow end(s)" in w or "without a pid" in w
                or "have a name other than" in w or "Python lane" in w
                or "flow start(s)" in w or "have no id" in w or "async_npu / fwdbwd event(s)" in w
                or "without a name" in w]
        assert not said, path


def test_different_tasks_of_one_lane_and_start_are_counted(tmp_path: Path) -> None:
    """Two different tasks on one Ascend Hardware lane at one start: the original keys a device task by
    "pid-tid-ts" (so do the flows' ends), so the last hides the first, as we read it too, and nothing said so.
    The torch excerpt's second and fourth MatMul-lane tasks (and the async_npu flows ending at them) moved to the
    first one's start: two tasks hidden (of three at one key), counted from the raw events; a copy of a task (the
    repeat warning's) is not one."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware"]
    first = hw[0]
    for second in (hw[1], hw[3]):
        assert (first["pid"], first["tid"]) == (second["pid"], second["tid"]) and first["name"] != second["name"]
        for e in events:
            if e.get("ph") == "f" and (e["pid"], e["tid"], e["ts"]) == (second["pid"], second["tid"], second["ts"]):
                e["ts"] = first["ts"]
        second["ts"] = first["ts"]
    events.append(dict(hw[2]))  # a copy: the other warning's
    out, trace = _with_trace(tmp_path, events)
    tasks = [(e["pid"], e["tid"], e["ts"], e["dur"], e["name"]) for e in events
             if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware"]
    hidden = len(set(tasks)) - len({t[:3] for t in tasks})
    assert hidden == 2
    warnings = load_profile(str(out), OPTS).warnings
    assert [w for w in warnings if "different task of the same lane" in w] == [
        f"{trace}: {hidden} device task(s) on the Ascend Hardware lanes are hidden by a later, different task of the "
        "same lane and start: the original keys a task by lane and start, and so do we (the flows ending there link "
        "only the last to operators; Lccl and SDMA Time count only it)."]
    assert len([w for w in warnings if "repeat an earlier one" in w]) == 1
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "different task of the same lane" in w]


def test_different_hccl_tasks_of_one_lane_and_start_are_no_hidden_tasks(tmp_path: Path) -> None:
    """The lane-and-start key hides tasks of the Ascend Hardware lanes alone: two different HCCL tasks of one lane
    moved to one start are both read, and no task is said hidden. Torch excerpt (tests/data/npu): the second HCCL
    task of the first one's lane and another name moved to the first one's start."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hccl = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "HCCL"]
    first = hccl[0]
    other = next(e for e in hccl[1:] if (e["pid"], e["tid"]) == (first["pid"], first["tid"])
                 and e["name"] != first["name"])
    other["ts"] = first["ts"]
    out, trace = _with_trace(tmp_path, events)
    assert not [w for w in load_profile(str(out), OPTS).warnings if "different task of the same lane" in w]


def test_tasks_of_one_lane_tied_with_other_lanes_at_different_starts_hide_nothing(tmp_path: Path) -> None:
    """Tasks hide one another only at one lane and one start: two tasks of one Ascend Hardware lane at different
    starts, each sharing its start with a task of another lane (streams starting work at the same ns), are no
    hidden task. Torch excerpt (tests/data/npu): a task of a second lane moved to each of the first lane's first
    two starts, the lanes and starts picked from the raw events."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    hw = [e for e in events if e.get("ph") == "X" and lanes.get(e.get("pid")) == "Ascend Hardware"]
    a1, a2 = [e for e in hw if e["tid"] == hw[0]["tid"]][:2]
    b1, b2 = [e for e in hw if e["tid"] != hw[0]["tid"]][:2]
    assert a1["ts"] != a2["ts"]
    b1["ts"], b2["ts"] = a1["ts"], a2["ts"]
    out, trace = _with_trace(tmp_path, events)
    assert not [w for w in load_profile(str(out), OPTS).warnings if "different task of the same lane" in w]


def _repeats_by_tuples(cols: list[np.ndarray], rows: np.ndarray) -> int:
    """The count ``model.repeats`` gives, by a set of row tuples (NaN and None cells read as one value)."""
    def cell(v: object) -> object:
        return ("nan",) if v is None or (isinstance(v, float) and v != v) else v
    seen = {tuple(cell(c[r]) for c in cols) for r in rows.tolist()}
    return rows.size - len(seen)


@given(st.lists(st.tuples(st.sampled_from([-2**63, -1, 0, 7, 2**62, 2**63 - 1]), st.integers(0, 3),
                          st.sampled_from([0.0, -0.0, 1.5, float("nan")]), st.sampled_from(["a", "b", None]),
                          st.booleans(), st.integers(-5, 5)), max_size=40))
def test_repeats_count_rows_equal_in_every_column(rows):
    """``model.repeats`` (one combined int64 key a row) against a set of the rows: integers up to int64's ends (their
    range overflows the key), NaN equal to NaN, -0.0 equal to 0.0, None cells, booleans."""
    cols = [np.array([r[i] for r in rows], dtype=dt) for i, dt in
            enumerate((np.int64, np.int64, np.float64, object, bool, np.int64))]
    every = np.arange(len(rows))
    assert model.repeats(cols, every) == _repeats_by_tuples(cols, every)
    assert model.repeats(cols, every[::2]) == _repeats_by_tuples(cols, every[::2])


def test_repeats_of_many_tied_rows():
    """60k rows of five columns whose key overflows int64 before the last column (starts of a ns clock, wide pids):
    the key is coded afresh on the way, and the count is the set of rows' (repeats made by copying rows)."""
    rng = np.random.default_rng(5)
    n = 60_000
    cols = [1_700_000_000_000_000_000 + rng.integers(0, 2_000, n) * 1_000, rng.integers(0, 1 << 40, n) % 3 * (1 << 40),
            rng.integers(0, 8, n), rng.integers(0, 10**9, n), np.array([f"k{i}" for i in rng.integers(0, 50, n)],
                                                                       dtype=object)]
    copies = rng.integers(0, n, 500)
    cols = [np.concatenate([c, c[copies]]) for c in cols]
    every = np.arange(n + 500)
    assert model.repeats(cols, every) == _repeats_by_tuples(cols, every) >= 500
    # two distinct rows whose keys would meet were the key not coded afresh: 2**61 * 9 wraps to 2**61 in int64,
    # which is also c * 9 + 2 for c = (2**61 - 2) / 9 (the column's range 2**61 + 1, the next one's 9)
    c = (2**61 - 2) // 9
    pair = [np.array([2**61, c, 0], dtype=np.int64), np.array([0, 2, 8], dtype=np.int64)]
    assert model.repeats(pair, np.arange(3)) == 0


def test_repeats_code_a_wide_integer_column_afresh_where_the_key_cannot_hold_it():
    """Five distinct keys before an integer column whose range is 2**62 - 1 (just under the limit, so its values less
    their minimum would be its codes): 5 * (2**62 - 1) overflows, so the column's values are coded afresh too. Without
    that, row (e, 4) would be keyed 4 * (2**62 - 1) + 4 = 2**64, which wraps to row (a, 0)'s key 0 (mutation testing,
    session 63). By hand: the five rows differ in both columns, so none repeats; a copy of one row is one repeat."""
    names = np.array(["a", "b", "c", "d", "e"], dtype=object)
    wide = np.array([0, 2**62 - 2, 1, 2, 4], dtype=np.int64)
    assert model.repeats([names, wide], np.arange(5)) == _repeats_by_tuples([names, wide], np.arange(5)) == 0
    twice = [np.append(names, "e"), np.append(wide, 4)]
    assert model.repeats(twice, np.arange(6)) == _repeats_by_tuples(twice, np.arange(6)) == 1

def test_real_timelines_hold_no_repeated_device_task(samples):
    """No real trace_view.json or CANN msprof timeline of the samples is said to repeat a device task."""
    found = sorted(samples.rglob("trace_view.json")) + sorted(samples.rglob("msprof_*.json"))
    assert len(found) >= 8
    for path in found:
        profile = load_profile(str(path), OPTS)
        assert not [w for w in profile.warnings if "repeat an earlier one" in w], path


def test_a_column_named_twice_reads_the_first_with_a_warning(tmp_path):
    """A column written twice (a file joined side by side, an edited header) read the last of names alike but for
    blanks ("Duration(us) " after "Duration(us)") without a word, and the first of names alike to the byte: now the
    first of either, said in one line. The excerpt's kernel_details.csv with a second Duration column of 7s appended,
    padded and not; and the excerpt's first Duration cell, taken by the csv module, is what is read."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(src.read_text(encoding="utf-8"), newline="")))
    first = float(rows[1][rows[0].index("Duration(us)")])
    assert first == 11.26
    for name in ("Duration(us)", "Duration(us) ", " Duration(us)"):
        f = tmp_path / "kernel_details.csv"
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(
            r + [v] for r, v in zip(rows, [name] + ["7"] * (len(rows) - 1), strict=True))
        f.write_text(out.getvalue())
        warnings: list[str] = []
        kd = ascend_text.read_kernel_details(str(f), warnings)
        assert kd["Duration(us)"].iloc[0] == first and kd["dur"].iloc[0] == 11260
        assert warnings == [f"{f}: column(s) named more than once: 'Duration(us)' (2 times); the first of each is "
                            "read"]
    # the first of the two, when it is the padded one: its cells (7) are read, and the warning names it as written
    f = tmp_path / "op_statistic.csv"
    st_rows = (Path(__file__).resolve().parent / "data" / "bad" / "_src" / "npu_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
               / "op_statistic.csv").read_text().splitlines()
    f.write_text("\n".join(["Count ," + st_rows[0]] + ["7," + r for r in st_rows[1:]]) + "\n")
    warnings = []
    st_df = ascend_text.read_op_statistic(str(f), warnings)
    assert st_df["Count"].tolist() == [7] * (len(st_rows) - 1)
    assert warnings == [f"{f}: column(s) named more than once: 'Count ' (2 times); the first of each is read"]
    # a column the reader does not read may repeat without a word (kernel_details' own header has none twice)
    f.write_text("\n".join([st_rows[0] + ",Other,Other"] + [r + ",1,2" for r in st_rows[1:]]) + "\n")
    warnings = []
    ascend_text.read_op_statistic(str(f), warnings)
    assert warnings == []


BAD_SRC_OUT = Path(__file__).resolve().parent / "data" / "bad" / "_src" / "npu_ascend_pt" / "ASCEND_PROFILER_OUTPUT"


def test_op_statistic_pair_written_twice_is_said(tmp_path):
    """op_statistic.csv (tests/data/bad/_src: msinsight text level1 rank0's, whole) with its rows 2-3 written again
    below with other counts, and row 1 again with a blank-padded type: KernelTypeCompare keeps the last row of an
    (OP Type, Core Type) pair, as the original does, so the earlier rows were left out without a word. The
    warning counts the 3 repeated pairs; the table read holds the later figures (from the csv module)."""
    from msprof_compare.compare.kernels import kernel_type_table
    lines = (BAD_SRC_OUT / "op_statistic.csv").read_text().splitlines()
    rows = list(csv.reader(lines))
    again = [r[:2] + ["99"] + r[3:] for r in rows[2:4]] + [[" " + rows[1][0] + " "] + rows[1][1:]]
    f = tmp_path / "op_statistic.csv"
    f.write_text("\n".join(lines + [",".join(r) for r in again]) + "\n")
    warnings: list[str] = []
    st_df = ascend_text.read_op_statistic(str(f), warnings)
    assert warnings == [f"{f}: 3 row(s) repeat the OP Type and Core Type of an earlier row (e.g. "
                        f"{rows[2][0]!r}, {rows[2][1]!r}); KernelTypeCompare reads the last row of each, as the "
                        "original does, and leaves the earlier ones out"]
    table = kernel_type_table(Profile(path="x", kind="NPU", source="ascend_text", op_statistic=st_df))
    assert len(table) == len(rows) - 1
    assert table[(rows[2][0], rows[2][1])][-1] == 99 and table[(rows[1][0], rows[1][1])][-1] == int(rows[1][2])
    f.write_text("\n".join(lines) + "\n")  # the file as exported: no pair twice, nothing said
    warnings.clear()
    ascend_text.read_op_statistic(str(f), warnings)
    assert warnings == []


def test_kernel_of_no_name_is_said(samples, tmp_path):
    """kernel_details.csv of msinsight text level1 rank0 with its HCCL kernels' Name emptied (synthetic, found by
    fuzzing): the time breakdown tells HCCL, SDMA copy, MC2 and TransData kernels by their name, so their time
    moved category without a word. Read as before (every row, as the csv module counts them), the emptied
    kernels are counted in one warning; the file as exported says nothing of names."""
    src = samples / LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(src.read_text(), newline="")))
    hcom = [i for i, r in enumerate(rows[1:]) if r[4].startswith("hcom_")]
    assert rows[0][4] == "Name" and len(hcom) >= 2
    f = _edited_csv(Path(shutil.copy(src, tmp_path / "kernel_details.csv")), {(i, "Name"): "" for i in hcom})
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert len(kd) == len(rows) - 1 and int((kd["Name"] == "").sum()) == len(hcom)
    assert f"{f}: {len(hcom)} kernel(s) with an empty Name; the time breakdown's categories told by a kernel's " \
           "name (HCCL, SDMA copies, MC2, TransData) cannot hold them" in warnings
    warnings.clear()
    ascend_text.read_kernel_details(str(src), warnings)
    assert not [w for w in warnings if "empty Name" in w]


def test_op_statistic_row_of_no_type_is_said(tmp_path):
    """op_statistic.csv (tests/data/bad/_src: msinsight text level1 rank0's, whole) with row 1's OP Type emptied and
    row 3's Core Type blanked (synthetic, found by fuzzing): KernelTypeCompare compared each under an empty name
    and the type it was lost its figures, without a word. Read as before (the rows keep their figures, from the
    csv module), one warning counts the 2 rows."""
    from msprof_compare.compare.kernels import kernel_type_table
    rows = list(csv.reader((BAD_SRC_OUT / "op_statistic.csv").read_text().splitlines()))
    rows[1][0] = ""
    rows[3][1] = "  "
    f = tmp_path / "op_statistic.csv"
    f.write_text("\n".join(",".join(r) for r in rows) + "\n")
    warnings: list[str] = []
    st_df = ascend_text.read_op_statistic(str(f), warnings)
    assert warnings == [f"{f}: 2 row(s) with an empty OP Type or Core Type; KernelTypeCompare compares them under "
                        "that empty name"]
    table = kernel_type_table(Profile(path="x", kind="NPU", source="ascend_text", op_statistic=st_df))
    assert len(table) == len(rows) - 1
    assert table[("", rows[1][1])][-1] == int(rows[1][2]) and table[(rows[3][0], "")][-1] == int(rows[3][2])


def test_operator_memory_rows_written_again_are_said(tmp_path):
    """operator_memory.csv (tests/data/bad/_src: two real rows of msinsight text level1 rank0's) with row 1 written
    twice more and row 2 once more with another Size(KB): the repeats doubled those blocks' memory in the memory
    comparison without a word, where kernel_details.csv's are said. Every row still counts (the original's
    figures): 2 repeats said, counted from the raw lines; the row of another size is no repeat."""
    data = (BAD_SRC_OUT / "operator_memory.csv").read_bytes()
    lines = data.splitlines(keepends=True)
    other = lines[2].replace(b",512.5,", b",512.0,", 1)
    assert other != lines[2]
    f = tmp_path / "operator_memory.csv"
    joined = data + lines[1] + lines[1] + other
    f.write_bytes(joined)
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert len(om) == 5 and _repeats(joined) == 2
    assert warnings == [f"{f}: 2 row(s) repeat an earlier row in every column read (the same allocation written "
                        "again, as in a file joined from two copies); each row counts, as in the original, so those "
                        "blocks' memory and time count more than once."]
    assert om["Size(KB)"].sum() == 512.5 * 4 + 512.0


def test_operator_memory_row_of_no_name_is_said(samples, tmp_path):
    """operator_memory.csv of msinsight text level1 rank0 with its cann:: rows' Name emptied (synthetic, found by
    fuzzing): the memory comparison tells a cann:: block (placed by its dequeue) from an operator's by the name, so
    those blocks moved without a word. Read as before (the sizes as written), the rows counted with the csv
    module are said in one warning; the file as exported says nothing."""
    src = samples / LEVEL1 / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
    text = src.read_text()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    cann = [i for i, r in enumerate(rows[1:]) if r[0].startswith("cann::")]
    assert rows[0][0] == "Name" and len(cann) >= 5
    f = _edited_csv(Path(shutil.copy(src, tmp_path / "operator_memory.csv")), {(i, "Name"): "" for i in cann})
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert f"{f}: {len(cann)} row(s) with an empty Name; the memory comparison places them at their allocation " \
           "time, as an operator's block (a cann:: one is placed by its dequeue)" in warnings
    assert (om["Name"] == "").sum() == len(cann)
    assert om["Size(KB)"].sum() == pytest.approx(sum(float(r[1]) for r in rows[1:]))
    f.write_text(text)
    warnings.clear()
    ascend_text.read_operator_memory(str(f), warnings)
    assert not [w for w in warnings if "empty Name" in w]


def test_operator_memory_rows_alike_without_an_allocation_time_are_no_repeats(tmp_path):
    """Row 2 of the same two real rows written twice more with its Allocation Time(us) emptied, then twice more with
    it 0: the memory comparison leaves blocks of no allocation time out (said), so they count nowhere, and the two
    pairs alike were said as 2 rows repeating an earlier row, "count more than once" (as OP_MEMORY's, left65i).
    The 4 rows of no time are said, no repeat; row 1 written once more is still the 1 repeat it is."""
    data = (BAD_SRC_OUT / "operator_memory.csv").read_bytes()
    lines = data.splitlines(keepends=True)
    cells = lines[2].split(b",")
    assert cells[2].strip() == b"1736408883732357.240" and len(cells) == 15  # row 2's own time, 15 columns
    blank = b",".join([*cells[:2], b"", *cells[3:]])
    zero = b",".join([*cells[:2], b"0", *cells[3:]])
    f = tmp_path / "operator_memory.csv"
    f.write_bytes(data + blank + blank + zero + zero)
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert len(om) == 6
    assert warnings == [f"{f}: 4 Allocation Time(us) value(s) are empty, N/A, 0 or negative (no time); the memory "
                        "comparison leaves those blocks out"]
    f.write_bytes(data + blank + blank + lines[1])
    warnings.clear()
    ascend_text.read_operator_memory(str(f), warnings)
    assert warnings[-1].startswith(f"{f}: 1 row(s) repeat an earlier row in every column read")


def test_operator_memory_of_the_samples_reads_without_a_word(samples):
    """No real operator_memory.csv of the samples holds a repeated row, a block without an allocation time or size,
    or a negative release, and nothing is said of any (their empty Release Time(us) cells: never released)."""
    found = sorted(samples.rglob("operator_memory.csv"))
    assert len(found) >= 9
    for path in found:
        warnings: list[str] = []
        ascend_text.read_operator_memory(str(path), warnings)
        assert _repeats(path.read_bytes()) == 0
        assert warnings == []


def test_operator_memory_blocks_without_a_time_are_said(tmp_path):
    """Rows cut from operator_memory.csv of msinsight text level1 rank0 (columns cut), edited (synthetic): an
    Allocation Time(us) empty, N/A, 0 or negative left the block out of the memory comparison (which places
    allocations after 0 only) without a word, where a DB export's NULL or non-positive allocationTime is said.
    4 such rows, counted by hand; the whole row keeps its time and nothing is said of it; a text that is no time
    is said as junk only."""
    f = tmp_path / "operator_memory.csv"
    good = "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0\n"
    f.write_text(OPERATOR_MEMORY_HEAD + good +
                 "".join(f"aten::empty_strided,0.5,{t},,,NPU:0\n" for t in ("", "N/A", "0.000\t", "-3.5", "abc")))
    warnings: list[str] = []
    om = ascend_text.read_operator_memory(str(f), warnings)
    assert om["alloc_ns"].tolist() == [1736408883702735700, 0, 0, 0, -3500, 0]
    assert warnings == [f"{f}: 1 Allocation Time(us) value(s) are not times; read as missing",
                        f"{f}: 4 Allocation Time(us) value(s) are empty, N/A, 0 or negative (no time); the memory "
                        "comparison leaves those blocks out"]


def test_op_statistic_times_that_are_no_number_are_said(tmp_path):
    """op_statistic.csv (tests/data/bad/_src: msinsight text level1 rank0's) with row 1's Total Time(us) emptied,
    row 2's Min Time(us) N/A and row 3's Max Time(us) "abc": each reads 0 (one empty cell does not blank the row),
    which KernelTypeCompare showed as a measured 0 us without a word (the junk one was counted, not the others).
    3 rows said; the Ratio(%) column feeds no figure and is not counted."""
    lines = (BAD_SRC_OUT / "op_statistic.csv").read_text().splitlines()
    rows = list(csv.reader(lines))
    head = rows[0]
    rows[1][head.index("Total Time(us)")] = ""
    rows[2][head.index("Min Time(us)")] = "N/A"
    rows[3][head.index("Max Time(us)")] = "abc"
    rows[4][head.index("Ratio(%)")] = ""
    f = tmp_path / "op_statistic.csv"
    f.write_text("\n".join(",".join(r) for r in rows) + "\n")
    warnings: list[str] = []
    st_df = ascend_text.read_op_statistic(str(f), warnings)
    assert warnings == [f"{f}: 1 value(s) that are not numbers in column(s) Max Time(us); read as missing",
                        f"{f}: 3 row(s) with a time that is no number (empty, N/A or text); those times read as 0"]
    assert st_df["Total Time(us)"].iloc[0] == 0.0 and st_df["Min Time(us)"].iloc[1] == 0.0
    assert st_df["Max Time(us)"].iloc[2] == 0.0 and st_df["Total Time(us)"].iloc[1] == float(rows[2][3])


def test_a_quote_left_open_is_said(tmp_path):
    """The excerpt's kernel_details.csv with a stray quote written before row 3's first field (a damaged or
    hand-edited file): the field runs to the next quote, a later row's quoted Input Shapes, so the rows between
    read as one (a kernel gone) with only a Step Id warning that did not say so. The line breaks inside quoted
    fields are counted: the lines beyond the rows Python's csv module reads."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = src.read_bytes().split(b"\n")
    lines[3] = b'"' + lines[3]
    f = tmp_path / "kernel_details.csv"
    f.write_bytes(b"\n".join(lines))
    rows = list(csv.reader(io.StringIO(f.read_text(encoding="utf-8"), newline="")))
    inside = len([x for x in lines if x]) - len(rows)
    assert inside >= 1
    warnings: list[str] = []
    kd = ascend_text.read_kernel_details(str(f), warnings)
    assert len(kd) == len(rows) - 1
    assert f"{f}: {inside} line(s) read as part of an earlier row (a line break inside a quoted field: a quote " \
           "left open?)" in warnings


def test_no_real_side_csv_holds_a_quoted_line_break(samples):
    """The CSVs the loader reads, as exported: no line break inside a quoted field (by Python's csv module), and no
    line is counted as joined to the rows that module reads."""
    found = [p for name in ("kernel_details.csv", "memory_record.csv", "operator_memory.csv", "op_statistic.csv")
             for p in sorted(samples.rglob(name))]
    assert len(found) >= 30
    for path in found:
        data = path.read_bytes()
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
        assert not any("\n" in c or "\r" in c for r in rows for c in r)
        assert ascend_text._joined_lines(data, len(rows) - 1) == 0


def test_a_device_lane_named_otherwise_is_said(tmp_path):
    """The excerpt (tests/data/npu) with its Ascend Hardware and HCCL processes renamed (a damaged or edited
    trace): the lanes are found by name, so no device or communication task was read and the operator device times
    and communication figures read 0 without a word. One warning each, with the evidence counted from the JSON:
    the Overlap Analysis spans and kernel_details.csv's kernels / HCCL ops. The excerpt as cut says nothing."""
    d = _excerpt(tmp_path)
    assert not [w for w in load_profile(str(d), OPTS).warnings if "process is named" in w]
    f, events = _trace(d)
    hw, hccl, ovl = (_pid_of(events, n) for n in ("Ascend Hardware", "HCCL", "Overlap Analysis"))
    computing = sum(1 for e in events if e.get("ph") == "X" and e["pid"] == ovl and e["name"] == "Computing")
    comm = sum(1 for e in events if e.get("ph") == "X" and e["pid"] == ovl and e["name"].startswith("Communication"))
    with open(d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        kernels = list(csv.DictReader(fh))
    hcom = sum(1 for k in kernels if k["Name"].startswith("hcom_"))
    assert computing and comm and hcom
    for e in events:
        if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] in (hw, hccl):
            e["args"]["name"] += " (renamed)"
    f.write_text(json.dumps(events))
    p = load_profile(str(d), OPTS)
    assert p.kernels.empty and p.comm.empty
    assert [w for w in p.warnings if "process is named" in w] == [
        f"{f}: no 'Ascend Hardware' process is named in the trace, though its Overlap Analysis lane holds {computing} "
        f"Computing span(s) and kernel_details.csv lists {len(kernels)} kernel(s): no device task is read, so "
        "operators and modules get no device time",
        f"{f}: no Communication or HCCL process is named in the trace, though its Overlap Analysis lane holds {comm} "
        f"Communication span(s) and kernel_details.csv lists {hcom} HCCL op(s): no communication task is read, so "
        "the communication comparison and the communication groups have none"]


def test_a_device_lane_named_by_two_processes_is_said(tmp_path):
    """The excerpt with a second process_name record 'Ascend Hardware' for an empty pid after the real one (a trace
    joined from two, a lane copied under another pid): the last named is read (reference-1 §5.1, "last occurrence
    wins"), so no device task was read and the operators' device times read 0 without a word. One warning counts
    the tasks left out, from the JSON; a second name on a pid that holds no complete event says nothing when it
    comes first (the real lane, named last, is read)."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    hw = _pid_of(events, "Ascend Hardware")
    record = next(e for e in events if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] == hw)
    tasks = sum(1 for e in events if e.get("ph") == "X" and e["pid"] == hw)
    assert tasks
    f.write_text(json.dumps(events + [dict(record, pid=12345)]))
    p = load_profile(str(d), OPTS)
    assert p.kernels.empty
    assert [w for w in p.warnings if "processes are named" in w] == [
        f"{f}: 2 processes are named 'Ascend Hardware': the one named last (pid 12345, 0 complete event(s)) is "
        f"read, as in the original; the {tasks:,} of pid(s) {hw} are not"]
    f.write_text(json.dumps([dict(record, pid=12345)] + events))
    p = load_profile(str(d), OPTS)
    assert len(p.kernels) == tasks and not [w for w in p.warnings if "processes are named" in w]


def test_a_device_lane_whose_name_moved_to_another_pid_is_said(tmp_path):
    """The excerpt with the Ascend Hardware process_name record moved to pid -1 (its tasks now on a process
    without a name): a process of that name exists but holds no task, so the operators' device times read 0 without
    a word. The line says so and counts the complete events on processes without a name (the lane's, from the
    JSON)."""
    d = _excerpt(tmp_path)
    f, events = _trace(d)
    hw = _pid_of(events, "Ascend Hardware")
    ovl = _pid_of(events, "Overlap Analysis")
    tasks = sum(1 for e in events if e.get("ph") == "X" and e["pid"] == hw)
    computing = sum(1 for e in events if e.get("ph") == "X" and e["pid"] == ovl and e["name"] == "Computing")
    with open(d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        kernels = len(list(csv.DictReader(fh)))
    for e in events:
        if e.get("ph") == "M" and e["name"] == "process_name" and e["pid"] == hw:
            e["pid"] = -1
    f.write_text(json.dumps(events))
    p = load_profile(str(d), OPTS)
    assert p.kernels.empty and p.extra["unnamed_lane_events"] == tasks
    # the other lanes are found, so the tasks on the unnamed process are counted in a line of their own, and the
    # lane's line does not count them again
    assert [w for w in p.warnings if "'Ascend Hardware' process" in w or "no name" in w] == [
        f"{f}: {tasks:,} complete event(s) lie on processes the trace gives no name (no process_name record, or an "
        "empty one), so no lane reads them and they count in no figure",
        f"{f}: its 'Ascend Hardware' process holds no task, though its Overlap Analysis lane holds {computing} "
        f"Computing span(s) and kernel_details.csv lists {kernels} kernel(s): no device task is read, so operators "
        "and modules get no device time"]


def test_nul_bytes_in_the_rows_are_said(tmp_path):
    """op_statistic.csv (tests/data/bad/_src, msinsight text level1 rank0's) with a NUL byte written into row 1's
    Core Type (a damaged copy, found by session 60's fuzz): the text cell keeps it (pandas 2.0: is cut at it), so
    KernelTypeCompare read 'AI_VEC\\0TOR_CORE' (or 'AI_VEC') as a core type of its own without a word. One line
    counts the NUL bytes of the rows; the file as exported has none and says nothing."""
    data = (BAD_SRC_OUT / "op_statistic.csv").read_bytes()
    assert b"\0" not in data
    f = tmp_path / "op_statistic.csv"
    f.write_bytes(data.replace(b"AI_VECTOR_CORE", b"AI_VEC\0TOR_CORE", 1))
    warnings: list[str] = []
    st_df = ascend_text.read_op_statistic(str(f), warnings)
    # pandas 2.1+ keeps the NUL in the cell, 2.0 cuts the cell at it: another core type either way
    assert st_df["Core Type"].iloc[0] in ("AI_VEC\0TOR_CORE", "AI_VEC")
    assert warnings == [f"{f}: 1 NUL byte(s) in the rows (a damaged copy?); a cell holding one reads otherwise than "
                        "written: a text cell as another name, a number cell as missing or cut short at it"]


def _renamed_flow_ends(events: list[dict], cat: str) -> int:
    """The ``cat`` flow ends on the Ascend Hardware / HCCL lanes, of a category whose starts lie on the Python lane,
    at a lane and time no async_npu end shares, counted from the raw events (times as written: the excerpt's are
    text)."""
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    device = {p for p, n in lanes.items() if n in ("Ascend Hardware", "HCCL")}
    assert any(e.get("cat") == cat and e["ph"] == "s" and lanes[e["pid"]] == "Python" for e in events)
    read = {(e["pid"], e["tid"], ns(e["ts"])) for e in events if e.get("cat") == "async_npu" and e["ph"] == "f"}
    return sum(1 for e in events if e.get("cat") == cat and e["ph"] == "f" and e["pid"] in device
               and (e["pid"], e["tid"], ns(e["ts"])) not in read)


def test_flows_of_a_renamed_category_that_leave_tasks_unlinked_are_counted(tmp_path: Path, caplog) -> None:
    """async_npu flows link an op (Python lane) to its device task; a trace whose flows of that kind were written
    under another category linked those tasks to no op without a word, where CANN's own flows (HostToDevice from
    the CANN lane, async_task_queue within the Python lane: both in the excerpt) are none. The torch excerpt
    (tests/data/npu) with its first three paired async_npu flows renamed ``torch_to_npu``: the ends no async_npu
    flow shares, counted from the raw events (3), are said, and those flows are not read; the same three copied
    under another category beside the async_npu ones cost nothing and are not said; every async_npu flow renamed
    also names the category in the missing-flow line."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    assert not [w for w in load_profile(str(PT), OPTS).warnings if "renamed" in w]
    flows = [e for e in events if e.get("cat") == "async_npu"]
    paired = [i for i in dict.fromkeys(e["id"] for e in flows if e["ph"] == "f")
              if any(e["id"] == i and e["ph"] == "s" for e in flows)][:3]
    assert len(paired) == 3
    renamed = json.loads(json.dumps(events))
    for e in renamed:
        if e.get("cat") == "async_npu" and e["id"] in paired:
            e["cat"] = "torch_to_npu"
    lost = _renamed_flow_ends(renamed, "torch_to_npu")
    assert lost == 3
    out, trace = _with_trace(tmp_path / "renamed", renamed)
    profile = load_profile(str(out), OPTS)
    assert [w for w in profile.warnings if "renamed" in w] == [
        f"{trace}: {lost} flow(s) of category 'torch_to_npu' run from ops on the Python lane to Ascend Hardware / HCCL "
        "tasks, as async_npu flows do, and no async_npu flow reaches those tasks; only async_npu flows are read (a "
        "renamed category?), so those tasks are linked to no operator: the operator and module sheets leave them out"]
    before = load_profile(str(PT), OPTS).flows
    assert len(profile.flows) == len(before) - 3

    copied = events + [dict(e, cat="mirror") for e in events if e.get("cat") == "async_npu" and e["id"] in paired]
    assert _renamed_flow_ends(copied, "mirror") == 0
    out, _ = _with_trace(tmp_path / "copied", copied)
    assert not [w for w in load_profile(str(out), OPTS).warnings if "renamed" in w]

    every = [dict(e, cat="torch_to_npu") if e.get("cat") == "async_npu" else e for e in events]
    n = _renamed_flow_ends(every, "torch_to_npu")
    out, trace = _with_trace(tmp_path / "every", every)
    assert [w for w in load_profile(str(out), OPTS).warnings if "renamed" in w][0].startswith(f"{trace}: {n} flow(s)")
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        compare(str(out), str(out), enable_operator_compare=True)
    assert [r.getMessage() for r in caplog.records if "Can't find any flow event" in r.getMessage()] == [
        f"Can't find any flow event in the file: {out} (both sides: none of category async_npu: its flows of "
        "category 'torch_to_npu' are counted above)"]
    # the loader's warning said what those flows cost; the line above names them, it does not say it again
    said = [r.getMessage() for r in caplog.records if "torch_to_npu" in r.getMessage()]
    assert len(said) == 2 and "linked to no operator" in said[0] and "operator" not in said[1].split("(", 1)[1]



def _numeric_times(events: list[dict]) -> list[dict]:
    """``events`` with their text times written as JSON numbers and a process_name record of ts 0.0 first: the
    decode's raw-time guess (the first float ts of the first 64 KiB) reads that 0.0 and takes floats, so the epoch
    times (~1.7e15 us, float64 steps of 0.25 us) are re-read exactly from their text (``traceio.exact_texts``)."""
    out = [dict(e, ts=float(e["ts"])) if isinstance(e.get("ts"), str) else dict(e) for e in events]
    first = next(i for i, e in enumerate(out) if e.get("ph") == "M" and e.get("name") == "process_name")
    return [dict(out[first], ts=0.0), *out[:first], *out[first + 1:]]


def test_renamed_flows_in_numeric_epoch_times_are_told_by_their_exact_times(tmp_path: Path) -> None:
    """A flow end outside async_npu is told from the read async_npu ends by lane and time; in a trace of numeric
    epoch times whose raw-time guess missed, the read ends were re-read exactly but the others kept their float
    times, up to 128 ns off: the 16 paired flows copied under another category (nothing lost) were said as 16
    flows of a renamed category. The excerpt (tests/data/npu) so copied, and with three flows renamed, its times
    written as numbers (``_numeric_times``): nothing said, and the 3 ends counted from the raw events
    (``_renamed_flow_ends``, exact decimals of the numbers as written)."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    flows = [e for e in events if e.get("cat") == "async_npu"]
    paired = [i for i in dict.fromkeys(e["id"] for e in flows if e["ph"] == "f")
              if any(e["id"] == i and e["ph"] == "s" for e in flows)]
    assert len(paired) == 16
    copied = _numeric_times(events + [dict(e, cat="mirror") for e in flows if e["id"] in paired])
    assert _renamed_flow_ends(copied, "mirror") == 0
    out, trace = _with_trace(tmp_path / "copied", copied)
    decoded, _ = traceio.decode_events(str(trace), trace.read_bytes(), raw_ts=True)
    assert type(decoded[0]) is traceio.Event  # floats: the guess missed, as the test means
    assert not [w for w in load_profile(str(out), OPTS).warnings if "renamed category" in w]

    renamed = _numeric_times([dict(e, cat="torch_to_npu") if e.get("cat") == "async_npu" and e["id"] in paired[:3]
                              else e for e in events])
    lost = _renamed_flow_ends(renamed, "torch_to_npu")
    assert lost == 3
    out, trace = _with_trace(tmp_path / "renamed", renamed)
    assert [w for w in load_profile(str(out), OPTS).warnings if "renamed category" in w] == [
        f"{trace}: {lost} flow(s) of category 'torch_to_npu' run from ops on the Python lane to Ascend Hardware / HCCL "
        "tasks, as async_npu flows do, and no async_npu flow reaches those tasks; only async_npu flows are read (a "
        "renamed category?), so those tasks are linked to no operator: the operator and module sheets leave them out"]

def _level1_marker_copy(samples: Path, tmp_path: Path) -> tuple[Path, Path, Path, list[dict], list[dict]]:
    """The level1 rank0 sample, a copy of it to edit, the copy's trace_view.json, its events and its step markers:
    one, the cpu_op ``ProfilerStep#50`` (checked on the raw events), for a test to rename or recategorise."""
    src = samples / LEVEL1
    out = shutil.copytree(src, tmp_path / "r_ascend_pt")
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    marks = [e for e in events if "ProfilerStep#" in str(e.get("name", ""))]
    assert [(e["cat"], e["name"]) for e in marks] == [("cpu_op", "ProfilerStep#50")]
    return src, out, trace, events, marks


def test_a_step_marker_in_another_case_is_said(samples: Path, tmp_path: Path) -> None:
    """``profilerstep#50`` is no step to the step scan ("ProfilerStep#" as written, as the original's): in a
    torch_npu export it was one op holding the whole step and no step to choose, unsaid. The level1 rank0 sample
    with its one marker (cpu_op ``ProfilerStep#50``, counted from the raw events) renamed so: counted in the
    warning; the step options find no marker; the sample as written gets no such line."""
    src, out, trace, events, marks = _level1_marker_copy(samples, tmp_path)
    marks[0]["name"] = "profilerstep#50"
    trace.write_text(json.dumps(events))
    opts = Options(enable_operator_compare=True)
    assert [w for w in load_profile(str(out), opts).warnings if "another case" in w] == [
        f"{trace}: 1 host event named as a step marker in another case (the first: 'profilerstep#50'): the step scan "
        "reads \"ProfilerStep#\" as written, as the original does, so each is no step (--base_step / "
        "--comparison_step cannot choose it) but one op holding its step's ops (one operator row, which pairs with "
        "nothing)"]
    with pytest.raises(StepError, match="no ProfilerStep# markers"):
        compare(str(out), str(src), base_step=50, comparison_step=50, enable_operator_compare=True)
    assert not [w for w in load_profile(str(src), opts).warnings if "step marker" in w]


def test_a_step_marker_written_as_a_python_function_is_said(samples: Path, tmp_path: Path) -> None:
    """A ``ProfilerStep#50`` of cat python_function is no step (steps are read from the cpu_op events), so the step
    count check read none on that side without a word, and --base_step 50 was refused with no marker held. The level1
    rank0 sample with its one marker (cpu_op ``ProfilerStep#50``, counted from the raw events) made a python_function:
    counted where the Python functions are read (the operator comparison), and from their names alone where a step
    is asked or no host op marks one (a default run); the marker written as both a cpu_op and a python_function is
    a step, and no line; the sample as written gets none either, and pays no pass over its Python functions."""
    src, out, trace, events, marks = _level1_marker_copy(samples, tmp_path)
    marks[0]["cat"] = "python_function"
    trace.write_text(json.dumps(events))
    opts = Options(enable_operator_compare=True)
    assert [w for w in load_profile(str(out), opts).warnings if "step marker" in w] == [
        f"{trace}: 1 Python function named as a step marker whose step no host op marks (the first: "
        "'ProfilerStep#50'): steps are read from the host ops (cpu_op), so that step is none (the step count check "
        "does not count it)"]
    guards = compare(str(src), str(out), enable_operator_compare=True).guards.set_index("Check")
    assert guards.loc["step count", ["Base", "Comparison"]].tolist() == [1, None]
    # without the operator comparison the Python functions are not read, but their names are where no host op
    # marks a step (the check then reads none; left65a, session 65: it was blank unsaid) or a step is asked (which
    # the marker leaves refused, "no ProfilerStep# markers"): counted alike
    said = [f"{trace}: 1 Python function named as a step marker whose step no host op marks (the first: "
            "'ProfilerStep#50'): steps are read from the host ops (cpu_op), so that step is none (the step count "
            "check does not count it)"]
    assert [w for w in load_profile(str(out), Options()).warnings if "step marker" in w] == said
    guards = compare(str(src), str(out)).guards.set_index("Check")
    assert guards.loc["step count", ["Base", "Comparison"]].tolist() == [1, None]
    stepped = Options(enable_profiling_compare=True, base_step=50, comparison_step=50)
    assert [w for w in load_profile(str(out), stepped).warnings if "step marker" in w] == [
        f"{trace}: 1 Python function named as a step marker whose step no host op marks (the first: "
        "'ProfilerStep#50'): steps are read from the host ops (cpu_op), so that step is none (the step count check "
        "does not count it)"]
    assert "python_marks" not in load_profile(str(out), stepped).extra
    assert not [w for w in load_profile(str(src), stepped).warnings if "step marker" in w]
    both = shutil.copytree(src, tmp_path / "b_ascend_pt")
    twice = both / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    twice.write_text(json.dumps([*json.loads(trace.read_text()), dict(marks[0], cat="cpu_op")]))
    bare = shutil.copytree(src, tmp_path / "n_ascend_pt")  # no marker at all: nothing to say
    unmarked = [e for e in events if e is not marks[0]]
    (bare / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(unmarked))
    assert not [w for w in load_profile(str(bare), Options()).warnings if "step marker" in w]
    for o in (opts, stepped, Options()):
        assert not [w for w in load_profile(str(both), o).warnings if "step marker" in w]
        assert not [w for w in load_profile(str(src), o).warnings if "step marker" in w]
        assert "python_marks" not in load_profile(str(src), o).extra


def test_a_whole_float_lane_id_is_said_as_written(tmp_path: Path) -> None:
    """A tid written 1.0 in trace_view.json was "no whole number within int64 (the first: 1.0)", untrue of 1.0: it is
    "not written as an integer" now, and still read as a lane of its own. The torch excerpt with its first cpu_op's
    tid written 1.0 (its tid as written is no 1, by the JSON): the op is on no lane of the clean load."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    op = next(i for i, e in enumerate(events) if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    assert events[op]["tid"] != 1
    events[op]["tid"] = 1.0
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), Options(enable_operator_compare=True))
    assert [w for w in profile.warnings if "an integer within" in w] == [
        f"{trace}: 1 complete event whose tid is not written as an integer within int64 (the first: 1.0): each such "
        "value is read as a lane of its own"]
    before = load_profile(str(PT), Options(enable_operator_compare=True))
    moved = profile.ops.loc[profile.ops["ts"] == ns(events[op]["ts"]), "tid"].tolist()
    assert len(moved) >= 1 and not set(moved) & (set(before.ops["tid"].tolist()) | {1})


def test_a_step_refused_says_the_step_markers_written_as_python_functions(samples: Path, tmp_path: Path) -> None:
    """The step refusal itself says why a marker the profile holds is no step: "no ProfilerStep# markers" where the
    one marker was a Python function followed the warning that ended "the step count check does not count it", and
    the list of valid steps left the asked one unexplained (left64f, session 64). The level1 rank0 sample's one
    marker (cpu_op ``ProfilerStep#50``) made a python_function, and a second one (``ProfilerStep#51``) added, both
    counted by hand; with a cpu_op ``ProfilerStep#49`` beside them, 49 is the one valid step. Operator comparison on
    (the Python functions' table) and off (their names alone) alike; a refusal with no such marker is as before."""
    src, out, trace, events, marks = _level1_marker_copy(samples, tmp_path)
    marks[0]["cat"] = "python_function"
    trace.write_text(json.dumps(events))
    for on in (False, True):
        with pytest.raises(StepError) as info:
            compare(str(src), str(out), base_step=50, comparison_step=50, enable_profiling_compare=True,
                    enable_operator_compare=on)
        assert str(info.value) == (
            f"{trace}: Invalid step id: 50: the profile has no ProfilerStep# markers among its host ops, which steps "
            "are read from (1 Python function is named as one: 'ProfilerStep#50'), so no step can be chosen "
            "(comparison side: run without base_step / comparison_step)")  # the API's names of the options
    trace.write_text(json.dumps([*events, dict(marks[0], name="ProfilerStep#51")]))
    with pytest.raises(StepError, match=r"markers among its host ops, which steps are read from \(2 Python "
                                        r"functions are named as one, the first: 'ProfilerStep#50'\), so no step"):
        compare(str(src), str(out), base_step=50, comparison_step=51, enable_profiling_compare=True)
    trace.write_text(json.dumps([*events, dict(marks[0], name="ProfilerStep#51"),
                                 dict(marks[0], cat="cpu_op", name="ProfilerStep#49")]))
    for asked, why in ((51, ": ProfilerStep#51 here names a Python function; steps are read from the host ops"),
                       (52, "")):
        with pytest.raises(StepError) as info:
            compare(str(src), str(out), base_step=50, comparison_step=asked, enable_profiling_compare=True)
        assert str(info.value) == (f"{trace}: Invalid step id: {asked}, please choose from the valid steps: "
                                   f"49 (comparison side{why})")
    with pytest.raises(StepError) as info:
        compare(str(out), str(src), base_step=49, comparison_step=52, enable_profiling_compare=True)
    assert str(info.value) == (f"{src / 'ASCEND_PROFILER_OUTPUT' / 'trace_view.json'}: Invalid step id: 52, please "
                               "choose from the valid steps: 50 (comparison side)")


def test_a_step_refused_names_a_python_function_only_for_its_own_marker(samples: Path, tmp_path: Path) -> None:
    """The "ProfilerStep#N here names a Python function ..." reason is given only where a Python function bears
    that name: the trace's distinct marker names, which the operator comparison hands the check, also hold those of
    events of no host category, whose steps were said to be Python functions' (review64b). The level1 rank0
    sample's cpu_op ``ProfilerStep#50`` kept, a python_function ``ProfilerStep#51`` and an Ascend Hardware task
    renamed ``ProfilerStep#52`` added (neither a host op, so 50 stays the one valid step)."""
    src = samples / LEVEL1
    out = shutil.copytree(src, tmp_path / "r_ascend_pt")
    trace = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    mark = next(e for e in events if e.get("name") == "ProfilerStep#50")
    hardware = next(e["pid"] for e in events if e.get("name") == "process_name"
                    and e["args"]["name"] == "Ascend Hardware")
    task = next(e for e in events if e.get("ph") == "X" and e["pid"] == hardware)
    trace.write_text(json.dumps([*events, dict(mark, cat="python_function", name="ProfilerStep#51"),
                                 dict(task, name="ProfilerStep#52")]))
    for on in (False, True):
        for asked, why in ((51, ": ProfilerStep#51 here names a Python function; steps are read from the host ops"),
                           (52, "")):
            with pytest.raises(StepError) as info:
                compare(str(src), str(out), base_step=50, comparison_step=asked, enable_profiling_compare=True,
                        enable_operator_compare=on)
            assert str(info.value) == (f"{trace}: Invalid step id: {asked}, please choose from the valid steps: "
                                       f"50 (comparison side{why})")


def test_lane_ids_of_another_json_type_are_counted(tmp_path: Path) -> None:
    """A tid written as ``true`` or ``false`` refused the whole trace_view.json ("not a trace event file"); it is now
    a damaged lane, read as a lane of its own and counted, as a tid beyond int64 is. The torch excerpt with its
    first Ascend Hardware task's tid ``true`` and its first cpu_op's ``false`` (file order gives the first named):
    2 complete events; the task is on no Ascend Hardware lane of the excerpt any more, the op's tid neither 0 nor
    any of the excerpt's."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text())
    hw = _pid_of(events, "Ascend Hardware")
    task = next(i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] == hw)
    op = next(i for i, e in enumerate(events) if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    events[task]["tid"], events[op]["tid"] = True, False
    out, trace = _with_trace(tmp_path, events)
    profile = load_profile(str(out), Options(enable_operator_compare=True))
    first = "true" if task < op else "false"
    assert [w for w in profile.warnings if "an integer within" in w] == [
        f"{trace}: 2 complete events whose tid is not written as an integer within int64 (the first: {first}): each "
        "such value is read as a lane of its own"]
    before = load_profile(str(PT), Options(enable_operator_compare=True))
    lanes = set(before.ops["tid"].tolist()) | set(before.kernels["tid"].tolist()) | {0, 1}
    moved = profile.ops.loc[profile.ops["ts"] == ns(events[op]["ts"]), "tid"].tolist()
    assert len(moved) >= 1 and not set(moved) & lanes
    assert len(profile.kernels) == len(before.kernels)
    kernel = profile.kernels.loc[profile.kernels["ts"] == ns(events[task]["ts"]), "tid"].tolist()
    assert len(kernel) == 1 and kernel[0] not in lanes


def test_damaged_step_ids_are_said_only_where_a_step_reads_them(samples: Path, tmp_path: Path) -> None:
    """kernel_details.csv's step column is read by the kernel comparisons of a step asked for alone (a MindSpore
    export without step markers can be given none), so its damaged cells are said there and nowhere else: the
    warning named them on every run, where they moved no figure. The level1 rank0 sample (191 rows, all of step 50,
    counted from the raw CSV) with its first two Step Id cells made ``5x0`` and ``abc``: no line without a step;
    with step 50 the line, and KernelCompare holds 189 base kernels against the sample's 191."""
    src = samples / LEVEL1
    out = shutil.copytree(src, tmp_path / "r_ascend_pt")
    kd = out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(kd.read_text(encoding="utf-8"), newline="")))
    assert rows[0][0] == "Step Id" and [r[0] for r in rows[1:]] == ["50"] * 191
    rows[1][0], rows[2][0] = "5x0", "abc"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    kd.write_text(buf.getvalue(), encoding="utf-8")
    said = f"{kd}: 2 Step Id value(s) are not whole numbers; those rows belong to no step"
    assert said not in load_profile(str(out), Options(enable_kernel_compare=True)).warnings
    assert said in load_profile(str(out), Options(enable_kernel_compare=True, base_step=50,
                                                  comparison_step=50)).warnings
    sheet = compare(str(out), str(src), enable_kernel_compare=True, base_step=50, comparison_step=50).sheet(
        "KernelCompare")
    assert (int(sheet["Calls"].fillna(0).sum()), int(sheet["Calls.1"].fillna(0).sum())) == (189, 191)


@pytest.mark.parametrize("length", [1 << 16, (1 << 16) + 1])
def test_a_header_line_of_the_cap_exactly_is_read_both_ways(tmp_path, monkeypatch, length):
    """The cap is on the header line, its line end not counted: with the cap at 65536, a first line of exactly
    65,536 bytes of column names "c00000," (synthetic) is the header whether the file is read whole or streamed
    (its line end opens the second 64 KiB read, whose rows must not count: kills a_hl_cap_len; the in-memory scan
    must reach the byte after the cap: kills a_mem_slice), and one byte more is refused both ways."""
    monkeypatch.setattr(ascend_text, "MAX_HEADER_BYTES", 1 << 16)
    f = tmp_path / "memory_record.csv"
    line = "".join(f"c{i:05d}," for i in range(9_400))[:length]
    f.write_bytes(line.encode() + b"\n1\n")
    for data in (None, f.read_bytes()):
        if length > 1 << 16:
            with pytest.raises(ProfileError, match=r"malformed CSV header: no line end in the first 65536 bytes"):
                ascend_text._header(str(f), data)
        else:
            assert ascend_text._header(str(f), data) == line.split(",")


def test_a_header_cut_before_its_line_end_has_no_rows_to_hold_a_nul(tmp_path):
    """memory_record.csv cut inside its header line (an interrupted copy), its Component name damaged by a NUL:
    the file has no rows, so the NUL is the name's alone, said once, and the read then finds no data rows; the
    NUL was counted again as "1 NUL byte(s) in the rows" where the rows were taken to start at the file's first
    byte (kills a_body_none). Input: the torch_npu excerpt's memory_record.csv header (tests/data/npu/README.md),
    without its line end, its 'Component' written 'Comp\\0onent'."""
    src = PT / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    header = src.read_bytes().split(b"\n", 1)[0].rstrip(b"\r")
    f = tmp_path / "memory_record.csv"
    f.write_bytes(header.replace(b"Component", b"Comp\0onent", 1))
    warnings: list[str] = []
    with pytest.raises(ProfileError, match="no data rows"):
        ascend_text.read_memory_record(str(f), warnings)
    assert warnings == [f"{f}: column name(s) 'Comp\\x00onent' hold a NUL byte (a damaged file?): read as no column"]
