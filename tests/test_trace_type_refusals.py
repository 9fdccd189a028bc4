"""A trace event holding a value of the wrong JSON type is refused in our words: the file, the event (its index
from 0, its ph and name), the field with its value as the file writes it, and what is due. msgspec's own line
("not a trace event file: Expected `int | float | str`, got `null` - at `$[3949].dur`") named them in its
notation. Real inputs, one value edited: the H100 timesformer Kineto excerpt (tests/data/kineto) and the torch_npu
text fixture's trace_view.json (tests/data/npu); each expected line is written from the edited JSON by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from msprof_compare import cli
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import traceio

DATA = Path(__file__).parent / "data"
KINETO = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
NPU = DATA / "npu" / "rank0_ascend_pt"
NUMBER_OR_TEXT = "where a number or a number's text is due"

# (what is edited, the new value as JSON text, what the line says of it)
EDITS = [
    ("dur", "null", f"has dur null, {NUMBER_OR_TEXT}"),
    ("ph", "88", "has ph 88, an integer, where a string is due"),
    ("ts", '{"us": 1}', "has ts {\"us\": 1}, an object, where a number, a number's text or null is due"),
    ("dur", "[71.552]", f"has dur [71.552], a list, {NUMBER_OR_TEXT}"),
    ("name", "true", "has name true, where a string is due"),
    # a long value is cut to 40 characters as written, as every quoted value (a line must stay one line)
    ("dur", "[" + ", ".join(["71.552"] * 12) + "]",
     f"has dur [71.552, 71.552, 71.552, 71.552, 71.5..., a list, {NUMBER_OR_TEXT}"),
]


def _analyze(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(list(args))
    return info.value.code, capsys.readouterr().err


def _edited(text: str, index: int, field: str, value: str) -> str:
    """``text`` (a JSON trace as json.dumps writes it, one event to a line) with ``field`` of event ``index`` set to
    the JSON text ``value``: json.dumps cannot write a value msgspec refuses where the test wants its exact text."""
    lines = text.split("\n")
    event = json.loads(lines[index].rstrip(","))
    event[field] = "@@"
    lines[index] = json.dumps(event).replace('"@@"', value) + ("," if lines[index].endswith(",") else "")
    return "\n".join(lines)


def _one_per_line(events: list) -> str:
    return "[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]"


@pytest.mark.parametrize(("field", "value", "said"), EDITS)
def test_a_kineto_event_of_a_wrong_type_is_named(tmp_path: Path, capsys: pytest.CaptureFixture, field: str,
                                                 value: str, said: str) -> None:
    """The excerpt's first kernel (event 210, by a count of traceEvents) edited; the CLI exits 1 with one line."""
    doc = json.loads(KINETO.read_text())
    events = doc.pop("traceEvents")
    first = next(i for i, e in enumerate(events) if e.get("cat") == "kernel")
    assert first == 210 and events[first]["ph"] == "X"
    kernel = events[first]["name"]
    body = _edited(_one_per_line(events), first + 1, field, value)  # line 0 is the list's "["
    trace = tmp_path / "edited.pt.trace.json"
    trace.write_text('{"traceEvents": ' + body + ", " + json.dumps(doc)[1:])
    code, err = _analyze(capsys, "compare", "-d", str(trace), "-bp", str(KINETO), "-o", str(tmp_path / "out"))
    named = ["ph 'X'"] * (field != "ph") + [f"name {repr(kernel)[:37]}..."] * (field != "name")  # cut at 40
    assert code == 1
    assert err.splitlines()[-1] == (f"error: {trace}: invalid trace event: event 210 of traceEvents (counting from 0; "
                                    f"{', '.join(named)}) {said} (comparison side)")


@pytest.mark.parametrize(("field", "value", "said"), EDITS)
def test_a_trace_view_event_of_a_wrong_type_is_named(tmp_path: Path, capsys: pytest.CaptureFixture, field: str,
                                                     value: str, said: str) -> None:
    """The NPU fixture's trace_view.json (an event list) with its third event, aten::view, edited."""
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU, run)
    view = run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(view.read_text())
    assert events[2]["name"] == "aten::view" and events[2]["ph"] == "X"
    view.write_text(_edited(_one_per_line(events), 3, field, value))
    code, err = _analyze(capsys, "compare", "-d", str(run), "-bp", str(NPU), "-o", str(tmp_path / "out"))
    named = ["ph 'X'"] * (field != "ph") + ["name 'aten::view'"] * (field != "name")
    assert code == 1
    assert err.splitlines()[-1] == (f"error: {view}: invalid trace event: event 2 of the event list (counting from 0; "
                                    f"{', '.join(named)}) {said} (comparison side)")


def test_an_event_that_is_no_object_and_events_that_are_no_list(tmp_path: Path) -> None:
    """A list where an event (an object) is due, in a Kineto trace and an event list, and a traceEvents that is no
    list: named by index, or as traceEvents."""
    events = json.loads(KINETO.read_text())["traceEvents"][:5]
    for top, where in ((lambda body: '{"traceEvents": ' + body + "}", "traceEvents"),
                       (lambda body: body, "the event list")):
        body = _one_per_line(events).replace(json.dumps(events[3]), json.dumps(list(events[3].values())[:2]))
        with pytest.raises(ProfileError) as info:
            traceio.decode_trace("t.json", top(body).encode())
        assert info.value.message == (f"invalid trace event: event 3 of {where} (counting from 0) is a list, where an "
                                      "event (an object) is due")
    with pytest.raises(ProfileError) as info:
        traceio.decode_trace("t.json", b'{"traceEvents": {"0": {"ph": "X"}}}')
    assert info.value.message == "invalid trace: traceEvents is an object, where a list of events is due"


def test_a_number_beyond_float64_is_quoted_as_written(tmp_path: Path) -> None:
    """A dur of 1e400 (no float64 holds it, so the event's value is shown from its text) in the excerpt's first
    kernel."""
    events = json.loads(KINETO.read_text())["traceEvents"]
    body = _edited(_one_per_line(events), 211, "dur", "1e400")
    with pytest.raises(ProfileError) as info:
        traceio.decode_trace("t.json", ('{"traceEvents": ' + body + "}").encode())
    assert info.value.message.startswith("invalid trace event: event 210 of traceEvents (counting from 0; ph 'X', "
                                         "name 'void at::native::")
    assert info.value.message.endswith(") has dur 1e400, a number beyond a 64-bit integer or float")


def test_a_name_that_looks_like_a_decode_error_is_no_repair(tmp_path: Path) -> None:
    """The event's name is in the line now: a name holding "escape" or "invalid character (byte 1)" must not be
    taken for the decode error that ``decode_trace`` repairs (doubled backslashes, blanked control bytes), which
    would decode the file again and name the event from the repaired text."""
    ev = '{"ph": "X", "name": "invalid character (byte 1) \\\\escape", "pid": 1, "tid": 1, "ts": 1, "dur": null}'
    with pytest.raises(ProfileError) as info:
        traceio.decode_trace("t.json", f"[{ev}]".encode())
    assert info.value.message == ("invalid trace event: event 0 of the event list (counting from 0; ph 'X', name "
                                  f"{'invalid character (byte 1) ' + chr(92) + 'escape'!r}) has dur null, "
                                  f"{NUMBER_OR_TEXT}")


def test_args_that_are_no_object_are_named_with_the_args(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Every args field a loader reads takes any JSON value (a value of a wrong type only fails to name what it
    would), so the type refusal a real trace meets in its args is args that are no object: the excerpt's first
    kernel with its args written as a list of [key, value] pairs. The line says what args are and what is due, in the
    events' words, and shows the args as written (cut at 80 characters), where msgspec's ("Expected `object`, got
    `array`") was said."""
    doc = json.loads(KINETO.read_text())
    kernel = doc["traceEvents"][210]
    assert kernel["cat"] == "kernel"
    kernel["args"] = [[k, v] for k, v in kernel["args"].items()]
    trace = tmp_path / "edited.pt.trace.json"
    trace.write_text(json.dumps(doc))
    code, err = _analyze(capsys, "compare", "-d", str(trace), "-bp", str(KINETO), "-o", str(tmp_path / "out"))
    shown = json.dumps(kernel["args"])
    assert len(shown) > 80
    assert code == 1 and err.splitlines()[-1] == (
        f"error: {trace}: invalid event args: args is a list, where an object is due, in the event whose args are "
        f"{shown[:77]}... (comparison side)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("chunk", [64, 512, 1 << 24])
def test_the_refused_event_is_found_piece_by_piece(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """``_event_at`` decodes the event list a piece at a time (its memory no longer grows with the trace: a decode
    of every event as its text took ~55 bytes an event, 99 MiB for the 1.8 million of a 616 MB trace, 0.5 GB at 10
    million). Pieces far smaller than one event (64 bytes: each grows until it holds one), a "}" followed by ","
    inside a string and inside args (a list of objects), as a piece may be cut there: every event of the
    TimeSformer excerpt, so edited, is the one a decode of the whole list gives, as the event list alone and
    inside traceEvents; an index beyond the list gives none."""
    monkeypatch.setattr(traceio, "_EVENT_CHUNK", chunk)
    # numbered, as the excerpt writes some metadata events twice: the event found is the one of its index
    events = [{**e, "seq": i} for i, e in enumerate(json.loads(KINETO.read_text())["traceEvents"][:60])]
    events[3]["name"] = 'a "name" with }, {"ph": "X"} inside'
    events[5]["args"] = {"list": [{"a": 1}, {"b": {"c": [2]}}], "s": "}]"}
    assert len({json.dumps(e) for e in events}) == 60
    for kind, text in (("[", json.dumps(events, indent=1)), ("{", json.dumps({"schemaVersion": 1, "x": "}, {",
                                                                                "traceEvents": events, "y": [{}]}))):
        data = text.encode()
        for i, event in enumerate(events):
            got = traceio._event_at(data, kind, i)
            assert {k: json.loads(bytes(v)) for k, v in got.items()} == event, (kind, i)
        assert traceio._event_at(data, kind, 60) == {}


def test_finding_the_refused_event_takes_memory_of_a_piece_not_of_the_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """200,000 events (9.4 MB of text), the last one refused: finding it allocated an object per event before
    (~55 bytes each, 11 MB as tracemalloc counts it); now what one piece takes (64 KiB pieces here), whatever the
    trace's length."""
    import tracemalloc

    monkeypatch.setattr(traceio, "_EVENT_CHUNK", 1 << 16)
    n = 200_000
    data = ("[" + ",".join(f'{{"ph":"X","name":"k{i}","ts":{i},"dur":1}}' for i in range(n - 1))
            + ',{"ph":"X","name":"last","ts":1,"dur":true}]').encode()
    tracemalloc.start()
    try:
        event = traceio._event_at(data, "[", n - 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert bytes(event["name"]) == b'"last"' and bytes(event["dur"]) == b"true"
    assert peak < 1 << 20, peak
