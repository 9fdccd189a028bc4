"""traceio rules a mutation audit found untested: the gzip cap message, the int64 range bounds of times and
event ends, when float times need the JSON text, how an args error shows the args, integers written as
"7.0"."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import traceio

_KINETO = Path(__file__).parent / "data" / "kineto"


def test_gzip_over_cap_names_the_size_its_trailer_states(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A gzip trace over the cap says how far to raise it: the size its gzip trailer states (the real alexnet
    excerpt's ISIZE, read here from the last 4 bytes as the gzip format defines them); a trailer stating no more
    than the cap (a damaged one, here 5 bytes) is not quoted."""
    src = _KINETO / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    data = src.read_bytes()
    body = gzip.decompress(data)
    stated = int.from_bytes(data[-4:], "little")
    assert stated == len(body) % 2**32
    cap = len(body) - 1
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(cap))
    with pytest.raises(ProfileError) as err:
        traceio.read_bytes(str(src))
    assert err.value.message == (f"decompressed trace is over the {cap} byte limit "
                                 f"(its gzip trailer gives {stated} bytes)")
    lying = tmp_path / "lying.pt.trace.json.gz"
    lying.write_bytes(data[:-4] + (5).to_bytes(4, "little"))
    with pytest.raises(ProfileError) as err:
        traceio.read_bytes(str(lying))
    assert err.value.message == f"decompressed trace is over the {cap} byte limit"


def test_integer_times_from_9e15_us_are_out_of_range() -> None:
    """Integer us times are refused from 9e15 us (9e18 ns, the bound below int64's 9.22e18 that the float path
    keeps too): 9e15 itself is refused, one us less reads as its ns; a negative one names the lowest value."""
    limit = 9_000_000_000_000_000
    assert traceio.to_ns([limit - 1, 0]).tolist() == [(limit - 1) * 1000, 0]
    with pytest.raises(ProfileError) as err:
        traceio.to_ns([1, limit], "t.json")
    assert err.value.message == f"invalid 'ts' value {limit} in trace events: out of range (beyond int64 nanoseconds)"
    with pytest.raises(ProfileError):
        traceio.to_ns([float(limit)], "t.json")
    with pytest.raises(ProfileError) as err:
        traceio.to_ns([5, -limit], "t.json", "dur")
    assert err.value.message == (f"invalid 'dur' value {-limit} in trace events: out of range (beyond int64 "
                                 "nanoseconds)")


_NPU_TRACE = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"


def test_a_float_time_beside_text_times_is_inexact() -> None:
    """A trace_view whose times are text but one is a number (edited from a real excerpt's ts): that
    float cannot hold the ns digits, so ``float_inexact`` must send the loader back to the JSON text; read
    through ``str(float)`` the time would be off by the digits float64 dropped."""
    import json
    from decimal import Decimal

    texts = [e["ts"] for e in json.loads(_NPU_TRACE.read_text()) if isinstance(e.get("ts"), str)]
    text = next(t for t in texts if Decimal(str(float(t))) != Decimal(t))  # one whose float lost digits
    vals = [texts[0], float(text)]
    assert traceio.float_inexact(traceio.to_ns(vals), vals) is True


def test_args_error_shows_args_of_80_characters_whole() -> None:
    """An invalid args value is named with the event's args text: whole up to 80 characters, cut to 77 and
    "..." beyond, and the field is named (args shaped like a Kineto kernel's, its stream id written as text)."""
    import msgspec

    class KernelArgs(msgspec.Struct):
        stream: int = -1

    def shown(raw: bytes) -> str:
        with pytest.raises(ProfileError) as err:
            traceio.decode_args("t.json", [msgspec.Raw(raw)], KernelArgs)
        return err.value.message

    head = b'{"stream": "7", "device": 0, "correlation": 3131, "name": "'
    at80 = head + b"k" * (80 - len(head) - 2) + b'"}'
    at81 = head + b"k" * (81 - len(head) - 2) + b'"}'
    assert len(at80) == 80 and len(at81) == 81
    said = "invalid event args: args.stream is a string, where an integer is due, in the event whose args are "
    assert shown(at80) == said + at80.decode()
    assert shown(at81) == said + at81[:77].decode() + "..."


def test_an_args_number_beyond_float64_says_what_it_is_and_no_due() -> None:
    """A stream id of 1e400, which no 64-bit integer or float holds: the line says what the value is and, as the
    events' own refusals, nothing of what is due (msgspec's "Number out of range" names no type), not
    "where  is due"."""
    import msgspec

    class KernelArgs(msgspec.Struct):
        stream: int = -1

    raw = b'{"stream": 1e400, "device": 0, "correlation": 3131}'
    with pytest.raises(ProfileError) as err:
        traceio.decode_args("t.json", [msgspec.Raw(raw)], KernelArgs)
    assert err.value.message == ("invalid event args: args.stream is a number beyond a 64-bit integer or float, in "
                                 f"the event whose args are {raw.decode()}")


def test_single_digit_stream_ids_written_as_decimal_text() -> None:
    """The real timesformer kernels' stream id (7, every one of them) written as the text "7.0" reads as 7 with
    no warning, as "10.0" does: a whole number below 10 has a decimal exponent of 0, not below the range that
    marks a fraction ("0.5" is one: read as on no stream, and counted)."""
    import json

    events = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text())["traceEvents"]
    streams = [e["args"]["stream"] for e in events if e.get("cat") == "kernel"]
    assert set(streams) == {7}
    warnings: list[str] = []
    out = traceio.checked_ints("t.json", [f"{s}.0" for s in streams], traceio.STREAM_ID, warnings)
    assert out.tolist() == [7] * len(streams) and warnings == []
    out = traceio.checked_ints("t.json", ["7.0", "0.0", "0.5"], traceio.STREAM_ID, warnings)
    assert out.tolist() == [7, 0, -1]
    assert warnings == ["t.json: 1 kernel stream id(s) are not integers within int64 (the first: '0.5'); "
                        "those kernels read as on no stream"]


def test_an_event_may_end_at_the_last_int64_nanosecond() -> None:
    """``check_ends`` refuses an end (ts + dur ns) beyond int64, not one at its very last ns: 2**63 - 1 is
    the largest end numpy adds without wrapping. A negative duration (read as 0 later) is no overflow."""
    last = 2**63 - 1
    ts = np.array([0, last - 1000], dtype=np.int64)
    traceio.check_ends("t.json", ts, np.array([5, 1000], dtype=np.int64))
    traceio.check_ends("t.json", np.array([last], dtype=np.int64), np.array([-7], dtype=np.int64))
    with pytest.raises(ProfileError) as err:
        traceio.check_ends("t.json", ts, np.array([5, 1001], dtype=np.int64))
    assert err.value.message == (f"a trace event ends beyond the int64 nanosecond range (start {last - 1000} ns "
                                 "+ duration 1001 ns)")


def test_a_float_flow_id_that_is_an_integer_reads_as_it_and_another_is_refused_naming_the_event(
        tmp_path: Path) -> None:
    """A flow's ``id`` written as a float (``12.0``) refused the whole trace. The original keys flows by the JSON
    value, and Python's ``12.0 == 12``, so it is that integer: the timesformer excerpt with every flow start's id
    written as a float loads as the excerpt does, its flows still paired with the ends' integer ids (10, by the
    raw JSON: the ac2g starts whose id an end carries). A float that is no integer (``12.5``), or beyond 2**53
    (no longer the integer written), is refused in one line naming the event, as the typed decode refuses a
    bad value; a boolean id is refused as before. A trace written as a bare event list names the event by its
    place in that list."""
    import json

    from msprof_compare.loaders import load_profile
    from msprof_compare.model import PROFILE_FRAMES
    from msprof_compare.options import build_options

    source = _KINETO / "h100_timesformer_excerpt.pt.trace.json"
    doc = json.loads(source.read_text(encoding="utf-8"))
    events = doc["traceEvents"]
    starts = [i for i, e in enumerate(events) if e.get("ph") == "s"]
    ends = {e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"}
    paired = sum(events[i]["id"] in ends for i in starts if events[i].get("cat") == "ac2g")
    for i in starts:
        events[i]["id"] = float(events[i]["id"])
    floats = tmp_path / "floats.pt.trace.json"
    floats.write_text(json.dumps(doc), encoding="utf-8")
    assert f'"id": {events[starts[0]]["id"]!r}' in floats.read_text(encoding="utf-8")  # written as 123968.0
    opts = build_options(enable_operator_compare=True)[0]
    want, got = load_profile(str(source), opts), load_profile(str(floats), opts)
    assert paired == 10 and len(got.flows) == paired
    for frame in PROFILE_FRAMES:
        assert (getattr(want, frame) is None and getattr(got, frame) is None) or getattr(want, frame).equals(
            getattr(got, frame)), frame
    first = events[starts[0]]
    for bad, shown, due in ((12.5, "12.5, a number", "an integer, a string or null"),
                            (2.0**60, "1.152921504606847e+18, a number", "an integer, a string or null"),
                            (True, "true", "")):
        events[starts[0]]["id"] = bad
        floats.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(ProfileError) as info:
            traceio.decode_events(str(floats), floats.read_bytes())
        said = (f"{floats}: invalid trace event: event {starts[0]} of traceEvents (counting from 0; ph 's', name "
                f"{first['name']!r}) has id {shown}")
        assert str(info.value).startswith(said), str(info.value)
        assert not due or str(info.value) == f"{said}, where {due} is due"
    # the trace as a bare event list (no traceEvents object): the event is named by its place in that list
    events[starts[0]]["id"] = 12.5
    floats.write_text(json.dumps(events), encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        traceio.decode_events(str(floats), floats.read_bytes())
    assert str(info.value) == (f"{floats}: invalid trace event: event {starts[0]} of the event list (counting from 0; "
                               f"ph 's', name {first['name']!r}) has id 12.5, a number, where an integer, a string or "
                               "null is due")


def test_a_time_that_is_no_number_names_its_event(tmp_path: Path) -> None:
    """``"dur": ""`` / ``"N/A"`` read "invalid 'dur' value 'N/A' in trace events": the field and value, not the
    event, where every value the typed decode refuses names the event's index, ph and name. The loaders know
    which events a time column came from, so the line names the event alike (found in the file at that index).
    A Kineto op (the timesformer excerpt) and an NPU export's flow start, whose dur no table reads but which is
    parsed apart from the complete events' (the NPU excerpt's trace_view.json, an event list), and its last
    device task, read among the complete events alone though flows come before it (a column's row is mapped
    back to its event). Null and out-of-range times are named alike, each with its own reason."""
    import json
    import shutil

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    opts = build_options(enable_operator_compare=True, enable_profiling_compare=True)[0]
    doc = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8"))
    at = [i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "cpu_op"][2]
    name = doc["traceEvents"][at]["name"]
    # a null ts, and a float dur beyond int64 ns on the negative side (the value of the largest magnitude, not
    # the largest value, is the one named): their own words, after the event
    for field, value, said in (("dur", "", '"", where a number is due'), ("dur", "N/A", '"N/A": not a number'),
                               ("dur", " ", '" ", where a number is due'),
                               ("ts", None, None),  # named as an event with no ts (7a949174)
                               ("dur", -1e300, "-1e+300: out of range (beyond int64 nanoseconds)")):
        edited = json.loads(json.dumps(doc))
        edited["traceEvents"][at][field] = value
        trace = tmp_path / "t.pt.trace.json"
        trace.write_text(json.dumps(edited), encoding="utf-8")
        with pytest.raises(ProfileError) as info:
            load_profile(str(trace), opts)
        tail = f"has {field} {said}" if said else f"has no {field} (absent or null)"
        assert info.value.message == (f"invalid trace event: event {at} of traceEvents (counting from 0; ph 'X', name "
                                      f"{name!r}) {tail}")
    export = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
    events = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    at = next(i for i, e in enumerate(events) if e.get("ph") == "s" and e.get("cat") == "async_npu")
    # and its last device task (a complete event of "Ascend Hardware"), whose dur is read among the complete
    # events' alone: flows come before it
    hardware = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "Ascend Hardware"}
    last = max(i for i, e in enumerate(events) if e.get("ph") == "X" and e["pid"] in hardware)
    assert any(e.get("ph") in ("s", "f") for e in events[:last])
    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(export, copy)
    view = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    view.chmod(0o644)
    for i, ph in ((at, "s"), (last, "X")):
        edited = json.loads(json.dumps(events))
        edited[i]["dur"] = "N/A"
        view.write_text(json.dumps(edited), encoding="utf-8")
        with pytest.raises(ProfileError) as info:
            load_profile(str(copy), opts)
        assert info.value.path == str(view) and info.value.message == (
            f"invalid trace event: event {i} of the event list (counting from 0; ph '{ph}', name "
            f"{events[i]['name']!r}) has dur \"N/A\": not a number")


@pytest.mark.parametrize("written", ["1e20", "100000000000000000000", "100000000000000000", "100000000000000000.5",
                                     "-1E+300", '"1e20"', '"-1E+300"'])
def test_a_time_out_of_range_reads_one_way_as_written(tmp_path: Path, written: str) -> None:
    """One time beyond int64 ns read two ways: "has dur 1e+20: out of range (over int64 nanoseconds)" (a float, as
    Python writes it), "has dur '100000000000000000000': out of range (beyond int64 nanoseconds)" (an integer too
    large for the decode's int64, as a string), and an integer among float durations as a float ("1e+17"); a search
    of the file found none of them. The value is shown as the trace writes it, with one reason: a Kineto op's dur
    (the timesformer excerpt, its durations floats; with a UTF-8 byte-order mark too), and a ts of an NPU export's
    trace_view.json (an event list, its times strings; as a number here) and of a Kineto trace whose times are read
    as text (shifted beyond 2**42 us). A time written as a string shows its JSON quotes ("1e20"), as the refusal
    of a value of the wrong type shows a string, where Python's ('1e20') were shown (session 78)."""
    import json
    import shutil

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    opts = build_options(enable_operator_compare=True, enable_profiling_compare=True)[0]
    why = "out of range (beyond int64 nanoseconds)"
    doc = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8"))
    at = [i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "cpu_op"][2]
    name = doc["traceEvents"][at]["name"]
    assert all(isinstance(e["dur"], float) for e in doc["traceEvents"] if e.get("cat") == "cpu_op")
    trace = tmp_path / "t.pt.trace.json"
    for field, bom, shift in (("dur", b"", 0), ("dur", b"\xef\xbb\xbf", 0), ("ts", b"", 5_000_000_000_000)):
        edited = json.loads(json.dumps(doc))
        for e in edited["traceEvents"]:
            if shift and isinstance(e.get("ts"), (int, float)):
                e["ts"] += shift
        edited["traceEvents"][at][field] = "@@"
        trace.write_bytes(bom + json.dumps(edited).replace('"@@"', written).encode())
        assert type(traceio.decode_events(str(trace), trace.read_bytes(), raw_ts=True)[0][0]) is (
            traceio.RawTsEvent if shift else traceio.Event)
        with pytest.raises(ProfileError) as info:
            load_profile(str(trace), opts)
        assert info.value.message == (f"invalid trace event: event {at} of traceEvents (counting from 0; ph 'X', name "
                                      f"{name!r}) has {field} {written}: {why}"), (field, bom)
    export = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
    events = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    at = [i for i, e in enumerate(events) if e.get("ph") == "X" and len(e["name"]) < 30][7]
    assert isinstance(events[at]["ts"], str)
    events[at]["ts"] = "@@"
    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(export, copy)
    view = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    view.chmod(0o644)
    view.write_text(json.dumps(events).replace('"@@"', written), encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        load_profile(str(copy), opts)
    assert info.value.path == str(view) and info.value.message == (
        f"invalid trace event: event {at} of the event list (counting from 0; ph 'X', name {events[at]['name']!r}) "
        f"has ts {written}: {why}")


def test_an_event_without_a_ts_is_named_as_having_none(tmp_path: Path) -> None:
    """An event whose ``ts`` is absent (or null: the decode reads both as None) was named as one that "has ts null",
    a text a search of the file does not find where the field is absent. It is named as an event with no ts, at its
    index in the file (found here by the json module): an op and a kernel of a Kineto trace, one whose epoch-scale
    times the loader parses from their text (``RawTsEvent``), and a complete event of an NPU export's event list."""
    import json
    import shutil

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    opts = build_options(enable_operator_compare=True, enable_profiling_compare=True)[0]
    doc = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8"))
    kernel = [i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "kernel"][3]
    op = [i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "cpu_op" and len(e["name"]) < 30][4]
    trace = tmp_path / "t.pt.trace.json"
    for at, null, epoch in ((op, False, False), (op, True, False), (kernel, False, False), (op, False, True)):
        events = json.loads(json.dumps(doc["traceEvents"]))
        if epoch:  # beyond 2**42 us: the decode keeps the times as their text
            for e in events:
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] += 5_000_000_000_000
        if null:
            events[at]["ts"] = None
        else:
            del events[at]["ts"]
        trace.write_text(json.dumps({**doc, "traceEvents": events}), encoding="utf-8")
        decoded = traceio.decode_events(str(trace), trace.read_bytes(), raw_ts=True)[0]
        assert (type(decoded[0]) is traceio.RawTsEvent) == epoch
        with pytest.raises(ProfileError) as info:
            load_profile(str(trace), opts)
        name = repr(events[at]["name"])
        shown = name if len(name) <= 40 else f"{name[:37]}..."  # a long kernel name is cut, as every quote is
        assert info.value.message == (f"invalid trace event: event {at} of traceEvents (counting from 0; ph 'X', name "
                                      f"{shown}) has no ts (absent or null)"), (at, null, epoch)
    export = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
    events = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    at = [i for i, e in enumerate(events) if e.get("ph") == "X" and len(e["name"]) < 30][7]
    del events[at]["ts"]
    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(export, copy)
    view = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    view.chmod(0o644)
    view.write_text(json.dumps(events), encoding="utf-8")
    with pytest.raises(ProfileError) as info:
        load_profile(str(copy), opts)
    assert info.value.path == str(view) and info.value.message == (
        f"invalid trace event: event {at} of the event list (counting from 0; ph 'X', name {events[at]['name']!r}) "
        "has no ts (absent or null)")


def test_a_time_string_with_a_json_escape_reads_as_the_decode_reads_it(tmp_path: Path) -> None:
    """A ts written as a string with a JSON escape (``"\\u0036420..."``, the first digit escaped) or a no-break space
    before its digits (json.dumps writes it ``\\u00a0``) is the time the decode reads, but the exact pass over the
    time texts of an epoch-scale trace parsed the text as written: "invalid time value '\\\\u0036...' in trace
    events: not a number", naming no event. The timesformer excerpt shifted beyond 2**42 us (its times read as text,
    ``RawTsEvent``), one op's ts edited: the ops read as those of the trace with that ts written as a number."""
    import json

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    opts = build_options(enable_operator_compare=True, enable_profiling_compare=True)[0]
    doc = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8"))
    for e in doc["traceEvents"]:
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] += 5_000_000_000_000
    at = [i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "cpu_op"][2]
    written = json.dumps(doc["traceEvents"][at]["ts"])
    plain = tmp_path / "plain.pt.trace.json"
    plain.write_text(json.dumps(doc), encoding="utf-8")
    want = load_profile(str(plain), opts).ops["ts"].to_numpy()
    assert type(traceio.decode_events(str(plain), plain.read_bytes(), raw_ts=True)[0][0]) is traceio.RawTsEvent
    trace = tmp_path / "t.pt.trace.json"
    for text in (f'"\\u{ord(written[0]):04x}{written[1:]}"', f'"\\u00a0{written}"'):
        edited = json.loads(json.dumps(doc))
        edited["traceEvents"][at]["ts"] = "@@"
        trace.write_text(json.dumps(edited).replace('"@@"', text), encoding="utf-8")
        assert json.loads(trace.read_text())["traceEvents"][at]["ts"].strip() == written, text
        assert (load_profile(str(trace), opts).ops["ts"].to_numpy() == want).all(), text


def test_the_exact_pass_names_the_row_of_a_time_it_cannot_read() -> None:
    """``exact_ns`` (the times-only second decode) refused a text as "invalid time value ... in trace events",
    where every other refused time is the column's ``TimeValueError`` at its row, which the loaders turn into the
    event's index, ph and name. Its rows are those of ``idx`` (the events a loader keeps), a string's value shown
    as decoded; texts it reads are read as decoded strings too."""
    from msprof_compare.loaders.numparse import TimeValueError

    data = b'{"traceEvents": [{"ts": 1.5}, {"ts": "\\u00312.25"}, {"ts": "x\\u0031"}, {"ts": "\xc2\xa07"}]}'
    texts = traceio.exact_texts("t.json", data)
    assert traceio.exact_ns("t.json", texts, "ts", np.array([3, 1, 0])).tolist() == [7000, 12250, 1500]
    with pytest.raises(TimeValueError) as info:
        traceio.exact_ns("t.json", texts, "ts", np.array([0, 1, 2, 3]))
    assert (info.value.row, info.value.field, info.value.shown, info.value.why) == (2, "ts", "'x1'", "not a number")
    assert info.value.message == "invalid 'ts' value 'x1' in trace events: not a number"
    with pytest.raises(TimeValueError) as info:  # beyond a chunk of texts: the row counts from the column's start
        traceio.exact_ns("t.json", [texts[0]] * (1 << 18) + [texts[2]], "ts")
    assert info.value.row == 1 << 18
    # a dur among texts of one width, 10 of 11 of the common layout (read as one matrix, the rest one by one): its
    # field, at its row of ``idx``
    durs = b", ".join(b'{"dur": %s}' % (b'"x"' if i == 7 else b"%d.5" % (i % 10)) for i in range(11))
    texts = traceio.exact_texts("t.json", b'{"traceEvents": [' + durs + b"]}")
    assert {len(bytes(t.dur)) for t in texts} == {3}
    for idx, row in ((None, 7), (np.arange(10, -1, -1), 3)):
        with pytest.raises(TimeValueError) as info:
            traceio.exact_ns("t.json", texts, "dur", idx)
        assert (info.value.row, info.value.field, info.value.shown) == (row, "dur", "'x'")
        assert info.value.message == "invalid 'dur' value 'x' in trace events: not a number"


@pytest.mark.parametrize("bad", [True, [1], {"x": 1}])
def test_an_id_of_another_type_is_refused_alike_after_a_float_id_or_a_damaged_lane(tmp_path: Path, bad) -> None:
    """The second decode of a trace with a float id (``12.0``) or a damaged lane (``"pid": true``) takes a float id,
    so a later id of another type (``true``, a list) was refused as due "a number, a number's text or null", where
    the same trace without the float id (or the lane) says "an integer, a string or null": the words depended on
    an unrelated event before it. The refusal is the typed decode's, whichever decode found it."""
    import json

    doc = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8"))
    events = doc["traceEvents"]
    flows = [i for i, e in enumerate(events) if "id" in e]
    events[flows[3]]["id"] = bad
    trace = tmp_path / "t.pt.trace.json"

    def refusal() -> str:
        trace.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(ProfileError) as info:
            traceio.decode_events(str(trace), trace.read_bytes())
        return info.value.message

    plain = refusal()  # the typed decode's first refusal: this id
    assert plain.startswith(f"invalid trace event: event {flows[3]} of traceEvents (counting from 0; ph ")
    assert plain.endswith(", where an integer, a string or null is due"), plain
    events[flows[0]]["id"] = float(events[flows[0]]["id"])  # read as that integer by the second decode
    assert refusal() == plain
    events[flows[0]]["id"] = int(events[flows[0]]["id"])
    lane = next(i for i, e in enumerate(events) if e.get("ph") == "X")
    assert lane < flows[3]
    events[lane]["pid"] = True  # a damaged lane: counted by the loaders, not refused
    assert refusal() == plain


def test_a_float_id_at_2_53_is_refused_as_no_longer_the_integer_written(tmp_path: Path) -> None:
    """A float id reads as its integer only while the float is that integer: 2**53 + 1 written as a float
    (``9007199254740993.0``) decodes to 2**53, so reading it as 9007199254740992 paired the flow with another id
    than the one written. It is refused as one beyond 2**53 is; 2**53 - 1 (exact) still reads as that integer."""
    import json
    import re

    doc = json.loads((_KINETO / "h100_timesformer_excerpt.pt.trace.json").read_text(encoding="utf-8"))
    flows = [i for i, e in enumerate(doc["traceEvents"]) if "id" in e]
    doc["traceEvents"][flows[0]]["id"] = -777  # a mark no other id of the excerpt is
    text = json.dumps(doc)
    assert text.count('"id": -777') == 1
    trace = tmp_path / "t.pt.trace.json"
    assert float(2**53 + 1) == 2**53 and float(2**53 - 1) == 2**53 - 1  # what a float holds of each
    # 2**53 written exactly is refused too: its float is also 2**53 + 1's
    for written, read in (("9007199254740991.0", 2**53 - 1), ("9007199254740993.0", None),
                          ("9007199254740992.0", None)):
        trace.write_text(re.sub(r'"id": -777\b', f'"id": {written}', text), encoding="utf-8")
        if read is None:
            with pytest.raises(ProfileError) as info:
                traceio.decode_events(str(trace), trace.read_bytes())
            assert info.value.message.endswith(f"has id {written}, a number, where an integer, a string or null is "
                                               "due"), info.value.message
            assert info.value.message.startswith(f"invalid trace event: event {flows[0]} of traceEvents")
        else:
            events = traceio.decode_events(str(trace), trace.read_bytes())[0]
            assert type(events[flows[0]].id) is int and events[flows[0]].id == read
