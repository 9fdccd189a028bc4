"""Every trace is decoded once: times too large for float64 to hold to the ns are kept as JSON text in that
one decode (``traceio.RawTsEvent`` / ``RawTimesEvent``) instead of being re-read by a second, times-only
decode (``traceio.exact_texts``), with the values, warnings and errors the float decode and its re-read gave.

Inputs: the real torch_npu excerpt of tests/data/npu (its string times rewritten as JSON numbers, as a
trace_view.json with numeric epoch times has them) and the real H100 timesformer Kineto excerpt."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile, traceio
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data"
NPU_TRACE = DATA / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
KINETO = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
_ALL = build_options(**{f"enable_{n}_compare": True for n in (
    "profiling", "operator", "memory", "communication", "api", "kernel")})[0]


def _numeric_times(text: str) -> str:
    """torch_npu's string times as JSON numbers, digits unchanged (epoch us ~1.7e15: beyond float64's ns)."""
    return re.sub(r'"(ts|dur)": "(\d+\.\d+)"', r'"\1": \2', text)


def _frames(path: Path) -> tuple[dict[str, pd.DataFrame], list[str]]:
    prof = load_profile(str(path), _ALL)
    frames = {k: v for k, v in vars(prof).items() if isinstance(v, pd.DataFrame)}
    return frames, [w.replace(str(path), "P") for w in prof.warnings]


def _no_second_pass(*args: object) -> None:
    raise AssertionError("the file was decoded a second time (traceio.exact_texts)")


def test_a_trace_view_with_numeric_epoch_times_loads_as_its_text_twin_in_one_decode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same events with times written as numbers and as strings load into the same tables (every
    frame, every warning), and the numeric one is decoded once, its times parsed from the text."""
    text = NPU_TRACE.read_text()
    numeric = _numeric_times(text)
    assert numeric.count('"ts": 17') > 500 and '"ts": "' not in numeric
    (tmp_path / "num").mkdir()
    (tmp_path / "str").mkdir()
    (tmp_path / "num" / "trace_view.json").write_text(numeric)
    (tmp_path / "str" / "trace_view.json").write_text(text)
    events, _ = traceio.decode_events("t.json", numeric.encode(), raw_ts=True)
    assert type(events[0]) is traceio.RawTimesEvent
    monkeypatch.setattr(traceio, "exact_texts", _no_second_pass)
    num, num_warn = _frames(tmp_path / "num" / "trace_view.json")
    txt, txt_warn = _frames(tmp_path / "str" / "trace_view.json")
    assert sorted(num) == sorted(txt) and len(num["kernels"]) > 30 and len(num["ops"]) > 30
    for name, frame in txt.items():
        pd.testing.assert_frame_equal(num[name], frame, obj=name)
    assert num_warn == txt_warn


def _list_trace(tmp_path: Path, ts: list[str], dur: list[str], extra: str = "") -> Path:
    """A trace_view.json of real shape: the excerpt's hardware lane metadata and tasks with the given times,
    plus a counter no table reads (``extra``: one more event's JSON)."""
    meta = ('{"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "Ascend Hardware"}}, '
            '{"ph": "M", "name": "thread_name", "pid": 2, "tid": 3, "args": {"name": "Stream 3"}}')
    tasks = [f'{{"ph": "X", "name": "t{i}", "pid": 2, "tid": 3, "ts": {t}, "dur": {d}, '
             f'"args": {{"Stream Id": 3, "Task Type": "AI_CORE"}}}}'
             for i, (t, d) in enumerate(zip(ts, dur, strict=True))]
    counter = '{"ph": "C", "name": "c", "pid": 2, "tid": 0, "ts": 1736408883688177.93, "args": {"v": 1}}'
    path = tmp_path / "trace_view.json"
    path.write_text("[" + ", ".join([meta, *tasks, counter] + ([extra] if extra else [])) + "]")
    return path


def _load_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """The kernels (ts, dur) and warnings, or the error, of a load with times kept as text, then of the float
    decode with its exact re-read (the guess patched to pick it)."""
    opts = build_options(enable_profiling_compare=True)[0]
    out = []
    for raw in (True, False):
        if not raw:
            monkeypatch.setattr(traceio, "_beyond_float_ns", lambda data: False)
        try:
            prof = load_profile(str(path), opts)
            out.append((prof.kernels["ts"].tolist(), prof.kernels["dur"].tolist(), prof.warnings))
        except ProfileError as exc:
            out.append(str(exc))
    monkeypatch.undo()
    return out


_EPOCH = "1736408883688177.930"
_TIMES = [  # (ts texts, dur texts) of the tasks
    ([_EPOCH, "1736408883688178.5005", "1736408883688179.0015"], ["145.57", "0.0005", "12"]),  # ties to even
    ([_EPOCH, '"1736408883688180.25"', "1736408883688181"], ['"3.5"', "1736408883688177.930", "-2.5"]),
    ([_EPOCH, "1.7364088836881779e15", "8999999999999999.5"], ["1", "2", "3"]),  # an exponent; over the limit
    ([_EPOCH, "9000000000000000.001"], ["1", "2"]),  # over int64 ns as text
    ([_EPOCH, "null"], ["1", "2"]),  # no time
    ([_EPOCH, _EPOCH], ["1", "9223372036854775.807"]),  # ends beyond int64
]
_REFUSED = [  # texts the float decode refuses: its own error, wherever they are
    ([_EPOCH, "true"], ["1", "2"]),
    ([_EPOCH, "[1]"], ["1", "2"]),
    ([_EPOCH, "1e400"], ["1", "2"]),
    ([_EPOCH, _EPOCH], ["1", "null"]),
    ([_EPOCH, _EPOCH], ["1", "{}"]),
    ([_EPOCH, _EPOCH], ["1", "-1e400"]),
]


@pytest.mark.parametrize(("ts", "dur"), _TIMES + _REFUSED)
def test_list_times_read_from_the_text_match_the_float_decode(tmp_path: Path, ts: list[str], dur: list[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An event list with epoch float times decodes with its times as text and loads what the float decode
    and its exact re-read load: values, roundings, warnings and errors alike."""
    path = _list_trace(tmp_path, ts, dur)
    events, _ = traceio.decode_events("t.json", path.read_bytes(), raw_ts=True)
    assert type(events[0]) is traceio.RawTimesEvent
    raw, floats = _load_both_ways(path, monkeypatch)
    assert raw == floats
    if (ts, dur) in _REFUSED:
        assert "not a trace event file" in raw
    if ts is _TIMES[0][0]:
        assert raw[0] == [1736408883688177930, 1736408883688178500, 1736408883688179002]
        assert raw[1] == [145570, 0, 12000]


@pytest.mark.parametrize("bad", ["true", "[1]", "1e400", "null"])
def test_a_bad_time_no_table_reads_is_refused_as_the_float_decode_does(tmp_path: Path, bad: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A time the float decode refuses on an event no table reads (a counter), alone or behind a load error
    of another kind (a task's args that are no object): the float decode's error either way."""
    for args in ('{"Stream Id": 3}', "7"):
        field = "ts" if bad != "null" else "dur"
        extra = f'{{"ph": "C", "name": "c2", "pid": 2, "tid": 0, "ts": {_EPOCH}, "{field}": {bad}}}'
        path = _list_trace(tmp_path, [_EPOCH], ["1"], extra)
        path.write_text(path.read_text().replace('{"Stream Id": 3, "Task Type": "AI_CORE"}', args))
        raw, floats = _load_both_ways(path, monkeypatch)
        assert raw == floats and "not a trace event file" in raw


@pytest.mark.parametrize("kineto", [True, False])
def test_the_error_of_a_bad_file_is_the_float_decodes(tmp_path: Path, kineto: bool) -> None:
    """A bad time followed by another bad field: the decode with time texts passes the time and stops at the
    field; the error is the float decode's, about the time, the first bad value in the file."""
    events = (f'{{"ph": "X", "name": "a", "pid": 1, "ts": {_EPOCH}, "dur": 1}}, '
              f'{{"ph": "X", "name": "b", "pid": 1, "ts": true, "dur": 1}}, '
              f'{{"ph": "X", "name": "c", "pid": [1], "ts": {_EPOCH}, "dur": 1}}')
    data = ('{"traceEvents": [' + events + "]}" if kineto else "[" + events + "]").encode()
    errors = []
    for raw_ts in (True, False):
        with pytest.raises(ProfileError) as info:
            traceio.decode_events("t.json", data, raw_ts=raw_ts)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "got `bool`" in errors[0] and "ts`" in errors[0]


def test_a_kineto_dur_beyond_float_precision_is_read_as_0_without_a_second_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Kineto dur float64 cannot hold to the ns (over 2e12 us) lasts over a week: read as 0 with the warning
    whatever its digits, so the file is not decoded again for them; the other durations are as they were."""
    text = KINETO.read_text()
    m = re.search(r'"cat": "kernel", "name": "[^"]*", "pid": \d+, "tid": \d+,\s*"ts": [\d.]+, "dur": ([\d.]+)', text)
    assert m, "the excerpt's first kernel"
    path = tmp_path / "t.pt.trace.json"
    path.write_text(text[:m.start(1)] + "2234705626572.7505" + text[m.end(1):])
    opts = build_options(enable_profiling_compare=True)[0]
    before = load_profile(str(KINETO), opts).kernels
    monkeypatch.setattr(traceio, "exact_texts", _no_second_pass)
    prof = load_profile(str(path), opts)
    changed = prof.kernels["dur"].to_numpy() != before["dur"].to_numpy()
    assert changed.sum() == 1 and prof.kernels["dur"][changed].tolist() == [0]
    assert prof.kernels["ts"].tolist() == before["ts"].tolist()
    assert any("1 event(s) last over a week" in w for w in prof.warnings)
