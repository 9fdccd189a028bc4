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
from loadutil import kernels_both_ways, load_both_ways

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
    raw, floats = kernels_both_ways(path, monkeypatch)
    assert raw == floats
    if (ts, dur) in _REFUSED:  # the second task (after 2 metadata events), named; its field's value as written
        field, value = ("ts", ts[1]) if ts[1] != _EPOCH else ("dur", dur[1])
        assert (f"invalid trace event: event 3 of the event list (counting from 0; ph 'X', name 't1') has {field} "
                f"{value}") in raw
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
        raw, floats = kernels_both_ways(path, monkeypatch)
        said = f"invalid trace event: event 4 of the event list (counting from 0; ph 'C', name 'c2') has {field} {bad}"
        assert raw == floats and said in raw


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
    where = "traceEvents" if kineto else "the event list"
    assert errors[0] == errors[1] == (f"t.json: invalid trace event: event 1 of {where} (counting from 0; ph 'X', "
                                      "name 'b') has ts true, where a number, a number's text or null is due")


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


# --------------------------------------------------------------------------- DB time checks: one scan


_CELLS = [None, 5, -5, 0, 2**63 - 1, -(2**63), 5.0, 1.5, 1.7e18, "5", "-5", "05", " 5", "+5", "", "abc", "1.7e18",
          "9223372036854775807", "9223372036854775808", "1736410576395167660", "1000000000000000000",
          "999999999999999999", "0999999999999999999", " 173641057639516766", "-173641057639516766",
          "1736410576395167660 ", "9223372036854775806", "\uff11" * 19, "17364105763951676601", b"5",
          b"1736410576395167660"]


@pytest.mark.parametrize("decl", ["TEXT", "INTEGER", "REAL", "NUMERIC", "BLOB", ""])
def test_the_usual_db_time_is_one_the_full_checks_accept(decl: str) -> None:
    """``need_times`` skips its precise scans when every row is the usual one: a cell the quick test takes as
    usual must be one the precise checks neither refuse nor count as untimed (not NULL), in every storage
    class and column affinity; and the 19-digit epoch text is usual."""
    import sqlite3

    from msprof_compare.loaders.ascend_db import _not_integer_text, _usual_integer_text

    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE TABLE T (v {decl})")
    con.executemany("INSERT INTO T (v) VALUES (?)", [(v,) for v in _CELLS])
    fine = {r for (r,) in con.execute(f"SELECT rowid FROM T WHERE v IS NOT NULL AND NOT ({_not_integer_text('v')})")}
    usual_text = {r for (r,) in con.execute(f"SELECT rowid FROM T WHERE {_usual_integer_text('v')}")}
    usual_int = {r for (r,) in con.execute("SELECT rowid FROM T WHERE typeof(v) = 'integer'")}
    assert usual_text <= fine and usual_int <= fine
    epoch = _CELLS.index("1736410576395167660") + 1
    assert epoch in usual_text or decl in ("INTEGER", "REAL", "NUMERIC")  # those store it as a number
    con.close()


def test_a_db_time_check_scans_a_usual_table_once(tmp_path: Path) -> None:
    """The time checks of a real export's TASK (INTEGER times) and PYTORCH_API (TEXT times) are one scan each;
    a table with an odd row (a task without an end, an op without a start: NULL) still gets the precise checks
    and its count."""
    import sqlite3

    from dbutil import edited_copy

    from msprof_compare.loaders import ascend_db

    src = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"

    def scans(path: Path) -> tuple[list[str], dict[str, int]]:
        db = ascend_db._Db(str(path))
        seen: list[str] = []
        db.con.set_trace_callback(seen.append)
        db.need_times("TASK")
        db.need_times("PYTORCH_API", text_ok=True)
        db.close()
        return [s for s in seen if s.startswith("SELECT")], db.untimed

    selects, untimed = scans(src)
    assert len(selects) == 2 and untimed == {}
    odd = edited_copy(src, tmp_path / "odd.db", "UPDATE TASK SET endNs = NULL WHERE rowid = 1",
                      "UPDATE PYTORCH_API SET startNs = NULL WHERE rowid = 2")
    selects, untimed = scans(odd)
    assert len(selects) == 2 * (1 + 3) and untimed == {"TASK": 1, "PYTORCH_API": 1}
    con = sqlite3.connect(odd)
    assert con.execute("SELECT typeof(startNs) FROM PYTORCH_API LIMIT 1").fetchone() == ("text",)
    con.close()


class _Counted:
    """A decoder that counts its calls (which decodes a load ran)."""

    def __init__(self, decoder: object, calls: list) -> None:
        self.decoder, self.calls = decoder, calls

    def decode(self, data: object) -> object:
        self.calls.append(1)
        return self.decoder.decode(data)


@pytest.mark.parametrize("kineto", [True, False])
def test_raw_control_characters_cost_no_float_decode(tmp_path: Path, kineto: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace with time texts kept and a raw control character in a name (PyTorch 2.3-2.4 writes some) goes
    from the decode that stops at it straight to the decode of the cleaned bytes, without a float decode in
    between; a bad time before the character is refused with the float decode's error all the same."""
    ev = (f'{{"ph": "X", "cat": "kernel", "name": "a\\u0001\x01b", "pid": 2, "tid": 3, "ts": {_EPOCH}, "dur": 1, '
          '"args": {"stream": 3}}')
    meta = '{"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "Ascend Hardware"}}, '
    path = tmp_path / ("t.pt.trace.json" if kineto else "trace_view.json")
    path.write_text('{"traceEvents": [' + ev + "]}" if kineto else "[" + meta + ev + "]")
    calls: list = []
    monkeypatch.setattr(traceio, "_KINETO" if kineto else "_EVENTS",
                        _Counted(traceio._KINETO if kineto else traceio._EVENTS, calls))
    prof = load_profile(str(path), build_options(enable_profiling_compare=True)[0])
    assert prof.kernels["name"].tolist() == ["a\x01 b"] and "raw control characters" in prof.warnings[0]
    assert calls == []
    monkeypatch.undo()
    bad = path.read_text().replace(f'"ts": {_EPOCH}', '"ts": true')
    path.write_text(bad.replace("[{", f'[{{"ph": "X", "name": "b", "pid": 2, "tid": 3, "ts": {_EPOCH}}}, {{', 1))
    raw, floats = kernels_both_ways(path, monkeypatch)
    # the kernel named after the repair (its raw control character read as a blank), its name's \x01 escaped
    assert raw == floats and "name 'a\\x01 b') has ts true, where a number, a number's text or null is due" in raw


def _numeric_bytes(data: bytes) -> bytes:
    """A trace_view.json's string times rewritten as JSON numbers (epoch us)."""
    return re.sub(rb'"(ts|dur)":\s*"(-?\d+\.\d+)"', rb'"\1":\2', data)


# the corpus cases whose rewritten times take the one-pass decode (a float epoch time in the first 64 KiB);
# the others go through the float decode either way
_BAD_LISTS = sorted(p.parent.name for p in (DATA / "bad" / "trace_view").glob("*/input.json")
                    if traceio._beyond_float_ns(_numeric_bytes(p.read_bytes())))


def test_most_of_the_bad_trace_view_corpus_takes_the_one_pass_decode() -> None:
    assert len(_BAD_LISTS) >= 50


@pytest.mark.parametrize("case", _BAD_LISTS)
def test_the_bad_trace_view_corpus_with_numeric_times_loads_alike_both_ways(case: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each trace_view.json of the bad-input corpus, its string times rewritten as JSON numbers (epoch us: the
    decode keeps them as text where the first one is a float), loads with times kept as text exactly as through
    the float decode and its re-read: every table, warning and error alike."""
    data = (DATA / "bad" / "trace_view" / case / "input.json").read_bytes()
    path = tmp_path / "trace_view.json"
    path.write_bytes(_numeric_bytes(data))
    out = load_both_ways(path, _ALL, monkeypatch, lambda prof: (
        {k: v.to_dict("list") for k, v in vars(prof).items() if isinstance(v, pd.DataFrame)}, prof.warnings))
    assert out[0] == out[1]
