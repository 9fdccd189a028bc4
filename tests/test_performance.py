"""The performance changes keep results identical: exact times proven without re-reading the
JSON, batch args decoding, the inlined xlsx cell writer and the two-process loading of large inputs.
No timed assertions here (timings live in bench/ and docs/performance.md)."""

from __future__ import annotations

import os
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd
import pytest
from loadutil import kernels_both_ways

from msprof_compare.api import compare
from msprof_compare.compare.table import STYLE_FLOAT, STYLE_INT, STYLE_RATIO, Column, Sheet
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile, pair, traceio
from msprof_compare.loaders.numparse import text_us_to_ns
from msprof_compare.options import build_options
from msprof_compare.report import excel

DATA = Path(__file__).resolve().parent / "data"
NPU_DIR = DATA / "npu" / "rank0_ascend_pt"
KINETO = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"


# --------------------------------------------------------------------------- exact times of large floats


def _kineto_trace(tmp_path: Path, ts_texts: list[str], dur_texts: list[str]) -> Path:
    pairs = enumerate(zip(ts_texts, dur_texts, strict=True))
    events = [f'{{"ph": "X", "cat": "kernel", "name": "k{i}", "pid": 0, "tid": 7, "ts": {t}, "dur": {d}, '
              f'"args": {{"stream": 7, "correlation": {i}}}}}' for i, (t, d) in pairs]
    p = tmp_path / "t.pt.trace.json"
    p.write_text('{"traceEvents": [' + ", ".join(events) + "]}")
    return p


@pytest.mark.parametrize("ts_texts", [
    ["2234705626572.75", "2234705872608.284", "2234706053387.961", "4398046511103.999"],  # ns resolution
    ["2234705626572.7505", "2234705626572.2345", "3000000000000.0004"],  # sub-ns digits: text re-read
    ["4398046511104.001", "1700000000000000.123"],  # beyond 2**42 us: never proven, text re-read
])
def test_kineto_epoch_float_times_are_exact(tmp_path: Path, ts_texts: list[str]) -> None:
    path = _kineto_trace(tmp_path, ts_texts, ["1.5"] * len(ts_texts))
    opts, _ = build_options(enable_profiling_compare=True)
    prof = load_profile(str(path), opts)
    assert prof.kernels["ts"].tolist() == [text_us_to_ns(t) for t in ts_texts]
    assert prof.kernels["dur"].tolist() == [1500] * len(ts_texts)


_BIG_TS = [  # event time texts of Kineto traces whose first ts is beyond 2**42 us (read from the JSON text)
    ["5224448211566.355", "5224448211567.001", "5224448211568.000", "5224448211569.999"],  # the usual: one pass
    ["5224448211566.355", "5224448211567", "5224448211567.5", "5224448211568.0005", '"5224448211569.25"'],
    ["5224448211566.355", "52244482115660.355", "-5224448211566.355", "5.224448211566355e12"],
    ["5224448211566.355", "4.5e15", "4499999999999999.999"],  # toward to_ns's range limit
    ["5224448211566.355", "-5224448211566.355"],  # a negative time on the counter no loader reads is a number
    # kernel times of the H200 GPT excerpt (one width), one quoted: 11 of 12 rows of the common layout, the
    # quoted one parsed apart (not left 0)
    ["5224448320657.412", "5224448320659.799", "5224448320662.867", "5224448320665.035", "5224448320670.144",
     "5224448320672.521", "5224448320675.883", "5224448320678.206", "5224448320680.519", "5224448320683.927",
     '"5224448320686.5"', "5224448320690.251"],
]
_BAD_TS = [  # refused alike: a time of a kept event null or out of range, a time the float decode refuses
    ["5224448211566.355", "null"],
    ["5224448211566.355", "9000000000000000.001"],
    ["5224448211566.355", "8999999999999999.5"],  # over the limit once read as a float
    ["5224448211566.355", "true"],
    ["5224448211566.355", "[1]"],
    # one width, every value beyond 4.5e15 us: the last reads as 9e15 as a float, over the limit (the text is not)
    ["8999999999999990.5", "8999999999999998.5", "8999999999999999.5"],
]


def _load_both_ways(tmp_path: Path, ts_texts: list[str], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Load a trace with its times taken from the JSON text (RawTsEvent) and through the float decode."""
    path = _kineto_trace(tmp_path, ts_texts, ["1.5"] * len(ts_texts))
    text = path.read_text()  # plus an event no loader reads, whose ts the float decode still checks
    path.write_text(text.replace('"traceEvents": [', '"traceEvents": [{"ph": "C", "name": "c", "ts": '
                                 + ts_texts[-1] + "}, "))
    return kernels_both_ways(path, monkeypatch)


@pytest.mark.parametrize("ts_texts", _BIG_TS + _BAD_TS)
def test_times_read_from_the_text_match_the_float_decode(tmp_path: Path, ts_texts: list[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """One decode with ts kept as text (``decode_events(raw_ts=True)``) loads what the float decode and its
    exact re-read load, values and errors alike."""
    data = _kineto_trace(tmp_path, ts_texts, ["1"] * len(ts_texts)).read_bytes()
    events, _ = traceio.decode_events("t.json", data, raw_ts=True)
    assert isinstance(events[0], traceio.RawTsEvent)  # the one-decode path is taken
    if ts_texts[-1] in ("true", "[1]"):  # no time: refused with the float decode's own error
        with pytest.raises(ProfileError, match=r"has ts (true|\[1\]).*, where a number, a number.s text or null"):
            traceio.check_raw_ts("t.json", data, events)
    raw, floats = _load_both_ways(tmp_path, ts_texts, monkeypatch)
    assert raw == floats
    assert isinstance(raw, str) == (ts_texts in _BAD_TS)
    if ts_texts is _BIG_TS[0] or ts_texts is _BIG_TS[5]:
        assert raw[0] == [text_us_to_ns(t.strip('"')) for t in ts_texts]


def _errors_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The load errors of a trace with ts kept as text, then with the float decode (the first ts's size picks
    the path; patched to pick the float one)."""
    opts, _ = build_options(enable_profiling_compare=True)
    errors = []
    for raw in (True, False):
        if not raw:
            monkeypatch.setattr(traceio, "_beyond_float_ns", lambda data: False)
        with pytest.raises(ProfileError) as info:
            load_profile(str(path), opts)
        errors.append(str(info.value))
    return errors


@pytest.mark.parametrize("bad", ["1e400", "-1e400", "1E400", "1" * 400 + ".5", "1" * 5000])
@pytest.mark.parametrize("kept", [True, False])
def test_a_time_beyond_float_range_is_refused_as_the_float_decode_does(tmp_path: Path, bad: str, kept: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A ts the float decode finds out of range (an overflowing exponent, 400 digits, a 5000-digit integer)
    starts with a digit like any number: with ts kept as text it is refused all the same, with the float
    decode's error, on a kernel (read) as on a counter (read by no loader; it used to load)."""
    path = tmp_path / "t.pt.trace.json"
    kernel = '{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {}, "dur": 1.5}}'
    events = [kernel.format("5224448211566.355"),
              kernel.format(bad) if kept else f'{{"ph": "C", "name": "c", "pid": 0, "ts": {bad}}}']
    path.write_text('{"traceEvents": [' + ", ".join(events) + "]}")
    errors = _errors_both_ways(path, monkeypatch)
    assert errors[0] == errors[1]
    shown = bad if len(bad) <= 40 else bad[:37] + "..."  # as the file writes it, cut as a message cuts a value
    assert errors[0] == (f"{path}: invalid trace event: event 1 of traceEvents (counting from 0; ph "
                         f"{'X' if kept else 'C'!r}, name {'k' if kept else 'c'!r}) has ts {shown}, a number beyond "
                         "a 64-bit integer or float")


def test_an_object_without_trace_events_is_refused_whatever_its_times(tmp_path: Path) -> None:
    """A JSON object with epoch-scale ``ts`` values (the decode that keeps them as text) but no traceEvents is no
    trace: refused by name, not returned as an empty event list."""
    data = b'{"metadata": {"ts": 5224448211566.355}, "deviceProperties": []}'
    for raw_ts in (True, False):
        with pytest.raises(ProfileError, match="not a trace: a JSON object without traceEvents"):
            traceio.decode_events("t.json", data, raw_ts=raw_ts)
    path = tmp_path / "t.pt.trace.json"
    path.write_bytes(data)
    with pytest.raises(ProfileError, match="without traceEvents"):
        load_profile(str(path), build_options()[0])


def test_comparators_run_with_the_cyclic_gc_paused() -> None:
    """Each comparator runs with the cyclic GC off (its millions of live rows and nodes made every pass
    slow) and the GC is back on after it, also when it raises."""
    import gc

    from msprof_compare import api

    seen = []
    opts, _ = build_options()
    assert api.comparators(opts) and gc.isenabled()
    wrapper = api._gc_paused(len).__code__
    on = api.comparators(build_options(**{f"enable_{n}_compare": True for n in (
        "profiling", "operator", "memory", "communication", "api", "kernel")})[0])
    assert len(on) >= 6 and all(build.__code__ is wrapper for _, build in on)  # every one is run GC-paused
    api._gc_paused(lambda ctx: seen.append(gc.isenabled()) or [])(None)
    with pytest.raises(ZeroDivisionError):
        api._gc_paused(lambda ctx: seen.append(gc.isenabled()) or 1 / 0)(None)
    assert seen == [False, False] and gc.isenabled()


@pytest.mark.parametrize("kernel_args", ['{"stream": [7]}', '{"stream": 7}'])
def test_a_bad_time_the_loader_never_reads_is_refused_first(tmp_path: Path, kernel_args: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """With ts kept as text, a ts the float decode refuses on an event no loader reads (a counter) is found
    after the load, or, when the load fails on something else first (bad kernel args), before that error:
    the error is the float decode's, as it was."""
    path = tmp_path / "t.pt.trace.json"
    path.write_text('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, '
                    f'"ts": 5224448211566.355, "dur": 1.5, "args": {kernel_args}}}, '
                    '{"ph": "C", "name": "c", "pid": 0, "ts": false}]}')
    errors = _errors_both_ways(path, monkeypatch)
    assert errors[0] == errors[1] == (f"{path}: invalid trace event: event 1 of traceEvents (counting from 0; ph 'C', "
                                      "name 'c') has ts false, where a number, a number's text or null is due")


def test_exact_times_mixes_the_vectorised_and_the_per_value_paths() -> None:
    # Epoch-scale ns texts (16 whole digits) take the vectorised parser; quoted strings, exponents,
    # null, a missing dur and negatives fall back one by one. Expected values written out by hand (half-ns
    # ties to the even ns: 12.0005 -> 12000, -0.0005 -> 0, 12.0015 -> 12002).
    data = (b'{"traceEvents": ['
            b'{"ts": 1712195495519689.047, "dur": 12.0005}, {"ts": 1, "dur": 12.0015}, '
            b'{"ts": 1712195495519690.0004, "dur": "3.5"}, '
            b'{"ts": 1.5e3, "dur": null}, {"ts": -0.0005}, {"ts": 9223372036854775.807, "dur": 0}]}')
    texts = traceio.exact_texts("t.json", data)
    ts, dur = traceio.exact_ns("t.json", texts, "ts"), traceio.exact_ns("t.json", texts, "dur")
    assert ts.tolist() == [1712195495519689047, 1000, 1712195495519690000, 1500000, 0, 9223372036854775807]
    assert dur.tolist() == [12000, 12002, 3500, 0, 0, 0]
    assert traceio.exact_ns("t.json", texts, "ts", np.array([5, 0])).tolist() == [9223372036854775807,
                                                                                 1712195495519689047]
    bad = traceio.exact_texts("t.json", b'[{"ts": 9223372036854775.808}, {"ts": 1.5}]')
    assert traceio.exact_ns("t.json", bad, "ts", np.array([1])).tolist() == [1500]  # only the events kept
    with pytest.raises(ProfileError, match=r"invalid 'ts' value '9223372036854775.808' in trace events: out of "
                                           r"range \(beyond int64 nanoseconds\)"):
        traceio.exact_ns("t.json", bad, "ts")


def test_to_ns_reads_mixed_number_and_text_columns_in_any_order() -> None:
    # A text value anywhere (first or after numbers) sends the whole column to the exact decimal
    # parser; numbers alone go through numpy. Expected ns written out by hand.
    assert traceio.to_ns([1.5, 2, 3.0004]).tolist() == [1500, 2000, 3000]
    assert traceio.to_ns([7, 8]).tolist() == [7000, 8000]
    texts = ["1712195495519689.047", 12.5, 3]
    assert traceio.to_ns(texts).tolist() == [1712195495519689047, 12500, 3000]
    assert traceio.to_ns(texts[::-1]).tolist() == [3000, 12500, 1712195495519689047]
    assert traceio.to_ns([1.0, "2.0005", "4", "2.0015"]).tolist() == [1000, 2000, 4000, 2002]
    with pytest.raises(ProfileError, match="invalid 'dur' value 'x'"):
        traceio.to_ns([1.0, "x"], "t.json", "dur")
    with pytest.raises(ProfileError, match="invalid 'ts' value 'x' in trace events: not a number"):
        traceio.to_ns(["x", 1.0], "t.json", "ts")
    with pytest.raises(ProfileError, match=r"'1736408883686643712' in trace events: out of range \(beyond int64"):
        traceio.to_ns(["1736408883686643712"], "t.json", "ts")  # ns written where us belong
    for empty in ("", " null ", None):
        with pytest.raises(ProfileError, match="'ts' value"):
            traceio.to_ns(["1.5", empty], "t.json", "ts")


def test_float_proof_rejects_what_it_cannot_prove() -> None:
    vals = [2234705626572.7505]  # decodes to a float whose ns does not round-trip
    ns = traceio.to_ns(vals)
    assert traceio.float_inexact(ns, vals)
    vals = [2234705626572.75, 12.5]
    assert not traceio.float_inexact(traceio.to_ns(vals), vals)
    vals = [5e12]  # over 2**42 us: a float's ulp is ~1 ns, nothing is proven
    assert traceio.float_inexact(traceio.to_ns(vals), vals)


@pytest.mark.parametrize("vals", [
    [], [2234706017408.97, 12.5], [2234705626572.7505], [5e12], [1420179912439.015, 3], [1420179912439, 3],
    [2234706017408, 1.5], ["2234706017408.97", 1.5], [2234706017408.97, "1.5"], [2**62 // 1000, 7],
])
def test_times_to_ns_is_to_ns_and_float_inexact(vals: list) -> None:
    """One conversion for both answers (the float proof reuses the array ``to_ns`` converted): the same ns
    and the same verdict as the two calls, for floats below and above what a float proves (mi300 times are
    ~2.2e12 us), ints, mixed columns and text."""
    ns, inexact = traceio.times_to_ns(vals, "t", "ts")
    want = traceio.to_ns(vals, "t", "ts")
    assert ns.dtype == np.int64 and ns.tolist() == want.tolist()
    assert inexact == (bool(len(vals)) and traceio.float_inexact(want, vals))


def test_decode_args_joins_raw_buffers_and_fills_absent_args() -> None:
    class A(msgspec.Struct):
        x: int = -1

    events, _ = traceio.decode_events("t", b'[{"args": {"x": 1}}, {"ph": "X"}, {"args": {"x": 3, "y": [1]}}]')
    raws = np.fromiter((e.args for e in events), dtype=object, count=len(events))
    assert [a.x for a in traceio.decode_args("t", raws, A)] == [1, -1, 3]
    assert [a.x for a in traceio.decode_args("t", raws[[0, 2]], A)] == [1, 3]
    # the brackets go on the first and last parts: one part, or an absent one at either end
    assert [a.x for a in traceio.decode_args("t", raws[[2]], A)] == [3]
    assert [a.x for a in traceio.decode_args("t", raws[[1]], A)] == [-1]
    assert [a.x for a in traceio.decode_args("t", raws[[1, 0, 1]], A)] == [-1, 1, -1]


def test_decode_args_error_names_the_field_and_shows_the_args() -> None:
    """msgspec's position is in the batch of selected events, not in the file (it named an unrelated event):
    the message names the field and shows the offending args instead."""
    class A(msgspec.Struct):
        x: int = -1

    raws = np.fromiter([msgspec.Raw(b'{"x": 1}'), msgspec.Raw(b'{"x": "seven"}')], dtype=object, count=2)
    with pytest.raises(ProfileError) as info:
        traceio.decode_args("t.json", raws, A)
    assert str(info.value) == ('t.json: invalid event args: args.x is a string, where an integer is due, in the event '
                               'whose args are {"x": "seven"}')
    raws = np.empty(1, dtype=object)
    raws[0] = msgspec.Raw(b"[" + b"1, " * 40 + b"1]")
    with pytest.raises(ProfileError, match=r"args is a list, where an object is due, in the event whose args are "
                                           r"\[1, 1, .{70}\.\.\.$"):
        traceio.decode_args("t.json", raws, A)


def test_decode_args_in_batches_gives_the_one_batch_result_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large selection's args decode in batches of about ``ARGS_BATCH_BYTES`` (the peak memory of one batch of
    a 300 MB trace's call stacks): the op args of the NPU excerpt decode alike in many batches, and an
    invalid or malformed args text past the first batch gives the one-batch message, byte position included."""
    from msprof_compare.loaders import ascend_text

    trace = NPU_DIR / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events, _ = traceio.decode_events(str(trace), trace.read_bytes())
    raws = np.fromiter((e.args for e in events if e.cat == "cpu_op"), dtype=object)
    fields = ("input_dims", "input_type", "call_stack")
    whole = [tuple(getattr(a, f) for f in fields) for a in traceio.decode_args("t", raws, ascend_text._OpArgs)]
    batches: list[int] = []
    real = traceio._decode_batch
    monkeypatch.setattr(traceio, "_decode_batch", lambda *a: batches.append(len(a[1])) or real(*a))
    monkeypatch.setattr(traceio, "ARGS_BATCH_BYTES", 1024)
    batched = [tuple(getattr(a, f) for f in fields) for a in traceio.decode_args("t", raws, ascend_text._OpArgs)]
    assert len(raws) > 200 and len(batches) > 10 and sum(batches) == len(raws)
    assert batched == whole and any(d is not None for d, *_ in whole)

    class A(msgspec.Struct):
        x: int = -1

    def message(raws: np.ndarray) -> str:
        with pytest.raises(ProfileError) as info:
            traceio.decode_args("t.json", raws, A)
        return str(info.value)

    for bad in (b'{"x": "seven"}', b'{"x": '):
        texts = [msgspec.Raw(b'{"x": %d}' % i) for i in range(400)] + [msgspec.Raw(bad), msgspec.Raw(b"{}")]
        bad_raws = np.fromiter(texts, dtype=object, count=len(texts))
        monkeypatch.setattr(traceio, "ARGS_BATCH_BYTES", 1 << 20)
        one = message(bad_raws)
        monkeypatch.setattr(traceio, "ARGS_BATCH_BYTES", 64)
        assert message(bad_raws) == one
    assert one.startswith("t.json: malformed event args:") and "(byte 4" in one



def test_npu_trace_texts_share_one_object_per_text() -> None:
    """Names, categories and an op's input shapes, types and call stack repeat in every step: the tables hold one
    string object per distinct text, not one per row (one per row kept ~430 MiB of scattered small strings of a
    300 MB trace_view.json side while the other side loaded, and made every later factorization chase them)."""
    opts, _ = build_options()
    profile = load_profile(str(NPU_DIR), opts)
    for table, column in (("ops", "input_dims"), ("ops", "input_type"), ("ops", "call_stack"), ("ops", "name"),
                          ("ops", "cat"), ("kernels", "name"), ("queue", "name"), ("comm", "name"),
                          ("overlap", "name"), ("flows", "cat")):
        values = getattr(profile, table)[column].to_numpy(dtype=object).tolist()
        assert len(values) > 10 and len({id(v) for v in values}) == len(set(values)) < len(values), (table, column)



def test_npu_op_arg_texts_other_than_text_read_as_before() -> None:
    """The op arg texts are shared by one lookup pass keyed by the decoded values; 1, 1.0 and True are one key
    there, so any value but a str or an absent one takes ``_text`` value by value (True is "True", not "1")."""
    from msprof_compare.loaders import ascend_text

    def texts(*values: str) -> list:
        raws = np.fromiter((msgspec.Raw(v.encode()) for v in values), dtype=object, count=len(values))
        args = traceio.decode_args("t.json", raws, ascend_text._OpArgs)
        return ascend_text._shared_arg_texts(args, "input_dims").tolist()

    mixed = ('{"Input Dims": "[1]"}', '{"Input Dims": 1}', '{"Input Dims": true}', '{"Input Dims": 1.0}', "{}",
             '{"Input Dims": [1, 2]}', '{"Input Dims": null}', '{"Input Dims": "[1]"}')
    assert texts(*mixed) == ["[1]", "1", "True", "1.0", "N/A", "[1, 2]", "N/A", "[1]"]
    assert texts(*mixed[2:4]) == ["True", "1.0"]
    plain = texts('{"Input Dims": "[2, 3]"}', "{}", '{"Input Dims": "[2, 3]"}', '{"Input Dims": ""}')
    assert plain == ["[2, 3]", "N/A", "[2, 3]", ""] and plain[0] is plain[2]


def test_kineto_names_share_one_object_per_text() -> None:
    """The Kineto loader's name columns alike (``traceio.shared_texts``)."""
    opts, _ = build_options()
    profile = load_profile(str(KINETO), opts)
    for table in ("ops", "kernels"):
        values = getattr(profile, table)["name"].to_numpy(dtype=object).tolist()
        assert len(values) > 10 and len({id(v) for v in values}) == len(set(values)) < len(values), table


# --------------------------------------------------------------------------- xlsx fast path


def _generic_rows(ws, values, nrows, fmts, reds, arrays=None, blocks=True) -> None:
    """The reference: every cell through the generic ``_write_cell``."""
    for i in range(nrows):
        for c, (column, fmt, red) in enumerate(zip(values, fmts, reds, strict=True)):
            excel._write_cell(ws, i + excel.HEADER_ROWS, c, column[i], fmt, red)


def _sheet_parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if "docProps" not in n}


def test_inlined_cell_writer_matches_generic_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = pd.DataFrame({
        "a": ["x", "", None, "INF", "tab\tbed", "1e3"],
        "b": [1.5, np.nan, np.inf, -np.inf, 0.0, -2.25],
        "c": [1, 0, -5, 2**40, True, False],
        "d": [0.5, 1.5, np.inf, "INF", "", None],
        "e": [np.int64(3), np.float32(0.25), pd.NA, 7, 1.0, "n/a"],
    })
    cols = [Column("Name"), Column("Total", STYLE_FLOAT), Column("Calls", STYLE_INT),
            Column("Diff Ratio", STYLE_RATIO), Column("Mixed", STYLE_FLOAT)]
    sheet = Sheet("S", cols, data, (0, 2), (3, 4))
    excel.render([sheet], str(tmp_path / "fast.xlsx"), ("b", "c"))
    monkeypatch.setattr(excel, "_write_plain_rows", _generic_rows)
    excel.render([sheet], str(tmp_path / "generic.xlsx"), ("b", "c"))
    assert _sheet_parts(tmp_path / "fast.xlsx") == _sheet_parts(tmp_path / "generic.xlsx")


# --------------------------------------------------------------------------- two-process loading


def _tables(p) -> dict:
    return {k: getattr(p, k) for k in ("ops", "kernels", "flows", "python_functions", "memory", "comm",
                                       "overlap", "queue", "threads", "processes")}


@pytest.mark.parametrize("base", [NPU_DIR, KINETO])
def test_parallel_load_gives_the_sequential_result(base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    comparison = tmp_path / base.name  # another path: one given twice is loaded once
    (shutil.copytree if base.is_dir() else shutil.copyfile)(base, comparison)
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    assert pair.parallel_wanted(str(base), str(comparison))
    par = compare(str(base), str(comparison))
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "0")
    assert not pair.parallel_wanted(str(base), str(comparison))
    seq = compare(str(base), str(comparison))
    assert par.sheet_names == seq.sheet_names
    for name in seq.sheet_names:
        pd.testing.assert_frame_equal(par.sheet(name), seq.sheet(name))
    for k, v in _tables(seq.base).items():
        pd.testing.assert_frame_equal(getattr(par.base, k), v)
    assert par.base.warnings == seq.base.warnings


@pytest.mark.parametrize("given", [NPU_DIR, KINETO])
def test_one_input_given_twice_is_loaded_once(given: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A self-compare decodes the input once; its result is that of comparing the input with a copy of it."""
    copy = tmp_path / given.name
    (shutil.copytree if given.is_dir() else shutil.copyfile)(given, copy)
    loads: list[str] = []
    real = load_profile

    def counted(path: str, *args: Any) -> Any:
        loads.append(path)
        return real(path, *args)

    monkeypatch.setattr("msprof_compare.api.load_profile", counted)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "0")  # loads counted in this process
    same = compare(str(given), str(given))
    assert loads == [str(given)]
    assert same.base is not same.comparison
    other = compare(str(given), str(copy))
    assert loads[1:] == [str(given), str(copy)]
    assert same.sheet_names == other.sheet_names
    for name in same.sheet_names:
        pd.testing.assert_frame_equal(same.sheet(name), other.sheet(name))
    for k, v in _tables(other.comparison).items():
        pd.testing.assert_frame_equal(getattr(same.comparison, k), v)
    assert same.comparison.path == str(given)


def test_parallel_load_keeps_the_error_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    bad_base = tmp_path / "bad_base.json"
    bad_base.write_text('{"traceEvents": [')
    bad_comp = tmp_path / "bad_comp.json"
    bad_comp.write_text("[1, 2")
    for b, c, culprit in ((bad_base, KINETO, bad_base), (KINETO, bad_comp, bad_comp), (bad_base, bad_comp, bad_base)):
        with pytest.raises(ProfileError) as exc:
            compare(str(b), str(c), enable_profiling_compare=True)
        assert exc.value.path == str(culprit), (b, c)


@pytest.fixture(scope="module")
def kineto_twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """KINETO under another path, for the comparison side of the loader-child tests: one path given for both
    sides is loaded once, with no child."""
    twin = tmp_path_factory.mktemp("twin") / KINETO.name
    shutil.copyfile(KINETO, twin)
    return twin


def test_parallel_load_survives_a_dead_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader child dies without a word: the base is loaded again in this process, and the result is the
    sequential load's. Two different traces, so a base taken from the wrong side shows (the check was only that
    an OverallMetrics sheet came out, which a base loaded from the comparison's path also gave)."""
    import os

    other = DATA / "kineto" / "legacy_resnet50_excerpt.pt.trace.json"
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "0")
    want = compare(str(KINETO), str(other), enable_profiling_compare=True)
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    monkeypatch.setattr(pair, "_child", lambda conn, *a: os._exit(3))
    res = compare(str(KINETO), str(other), enable_profiling_compare=True)
    assert (res.base.path, res.comparison.path) == (str(KINETO), str(other))
    e2e = res.sheet("OverallMetrics").set_index("Index").loc["E2E Time", ["Duration(ms)", "Duration(ms).1"]]
    assert e2e.iloc[0] != e2e.iloc[1]
    assert res.sheet_names == want.sheet_names
    for name in want.sheet_names:
        pd.testing.assert_frame_equal(res.sheet(name), want.sheet(name))


def test_parallel_load_reports_child_failures_like_sequential(kineto_twin: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked base loader's out-of-memory is a MemoryError here (the CLI's out-of-memory advice), an
    unexpected error keeps its message (the CLI's "internal error" line) with the child's traceback
    chained for --debug, and the child ignores Ctrl-C (the parent reports it and kills the child)."""
    import os
    import signal

    from msprof_compare import api

    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    parent, real = os.getpid(), api.load_profile

    def failing(exc: BaseException):
        def load(path, *args):
            if os.getpid() != parent:
                raise exc
            return real(path, *args)
        return load

    monkeypatch.setattr(api, "load_profile", failing(MemoryError()))
    with pytest.raises(MemoryError) as oom:
        compare(str(KINETO), str(kineto_twin), enable_profiling_compare=True)
    assert (oom.value.path, oom.value.doing) == (str(KINETO), "loading it")  # the base, which the child loaded
    monkeypatch.setattr(api, "load_profile", failing(ValueError("boom in loader")))
    with pytest.raises(pair.LoaderError, match="^boom in loader$") as info:
        compare(str(KINETO), str(kineto_twin), enable_profiling_compare=True)
    assert "ValueError: boom in loader" in str(info.value.__cause__) and "in load" in str(info.value.__cause__)

    def report_sigint(path, *args):
        if os.getpid() != parent:
            raise ProfileError(path, f"SIGINT handler {signal.getsignal(signal.SIGINT)!r}")
        return real(path, *args)

    monkeypatch.setattr(api, "load_profile", report_sigint)
    with pytest.raises(ProfileError, match="SIGINT handler <Handlers.SIG_IGN: 1>"):
        compare(str(KINETO), str(kineto_twin), enable_profiling_compare=True)


def test_parallel_load_keeps_usage_errors_of_the_child(kineto_twin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A usage error of the forked base loader (the DB loader refuses an absent step there: StepError, exit 2)
    comes back as that very class with its message, not as an internal error."""
    import os

    from msprof_compare import api
    from msprof_compare.errors import StepError, UsageError

    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    parent, real = os.getpid(), api.load_profile
    for exc in (StepError("base.db: Invalid Step Id: 7, please choose from the valid steps: 50"),
                UsageError("a usage error in the loader")):
        def load(path, *args, exc=exc):
            if os.getpid() != parent:
                raise exc
            return real(path, *args)

        monkeypatch.setattr(api, "load_profile", load)
        with pytest.raises(UsageError) as info:
            compare(str(KINETO), str(kineto_twin), enable_profiling_compare=True)
        # a step refused names the side the child loaded (``errors.on_side``)
        side = " (base side)" if type(exc) is StepError else ""
        assert type(info.value) is type(exc) and str(info.value) == str(exc) + side
        assert info.value.exit_code == 2


def test_ctrl_c_while_loading_the_comparison_side_ends_the_loader_child(kineto_twin: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while this process loads the comparison side: the forked base loader is killed at once (not
    waited for until its load ends) and the KeyboardInterrupt goes on to the CLI ("error: interrupted")."""
    import os
    import time

    from msprof_compare import api

    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    parent = os.getpid()
    marker = tmp_path / "child.pid"

    def load(path, *args):
        if os.getpid() != parent:  # the base side, in the child: a long load
            marker.write_text(str(os.getpid()))
            time.sleep(60)
        deadline = time.monotonic() + 30
        while not marker.exists() or not marker.read_text():  # the child is loading
            assert time.monotonic() < deadline
            time.sleep(0.01)
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "load_profile", load)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        compare(str(KINETO), str(kineto_twin), enable_profiling_compare=True)
    assert time.monotonic() - started < 30
    child = int(marker.read_text())
    assert not _running(child)


def test_input_bytes_of_a_folder_with_a_broken_link(tmp_path: Path) -> None:
    """A data file loading reads that cannot be sized (a broken symbolic link named like one) makes the
    estimate 0 ("unknown", as for a missing path): the loading notice and the parallel-load choice then go
    by that, and detection reports the file. A broken link loading would not read changes nothing."""
    folder = tmp_path / "prof"
    folder.mkdir()
    (folder / "a.json").write_text("{}")
    assert pair.input_bytes(str(folder)) == 2
    (folder / "kernel_details.csv").symlink_to(folder / "gone.csv")  # a Kineto folder reads no CSV
    assert pair.input_bytes(str(folder)) == 2
    npu = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU_DIR, npu)
    (npu / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    assert pair.input_bytes(str(npu)) > 0
    (npu / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").symlink_to(tmp_path / "gone.csv")
    assert pair.input_bytes(str(npu)) == 0


# A compare whose base side (loaded in the forked child) takes a minute; it reports the child's pid.
_SLOW_BASE = r"""
import os, sys, time
from pathlib import Path
from typing import Any
from msprof_compare import api
from msprof_compare.loaders import pair
pair.PARALLEL_MIN_BYTES = 0
real = api.load_profile
def slow(path, *args):
    if path == sys.argv[2]:
        Path(sys.argv[1]).write_text(str(os.getpid()))
        time.sleep(60)
    return real(path, *args)
api.load_profile = slow
api.compare(sys.argv[2], sys.argv[3], enable_profiling_compare=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL", "SIGINT"])
def test_loader_child_dies_with_the_compare(sig: str, tmp_path: Path) -> None:
    """A compare killed while its forked loader works (a job scheduler's SIGTERM, ``timeout``, SIGKILL)
    takes the loader with it: no orphan keeps loading gigabytes, then blocks on a pipe nobody reads.
    Ctrl-C sent to the compare alone ends it at once too (it kills the loader, not wait for its load)."""
    import os
    import signal
    import subprocess
    import time

    marker = tmp_path / "child.pid"
    comparison = tmp_path / "comparison.pt.trace.json"  # another path: only the base side is slow
    comparison.write_bytes(KINETO.read_bytes())
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_BASE, str(marker), str(KINETO), str(comparison)],
                            env=dict(os.environ, MSPROF_COMPARE_PARALLEL="1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            # Ctrl-C at its default even when the test run ignores it (`cmd &`, nohup)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() or not marker.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, "the loader child never started"
            time.sleep(0.05)
        child = int(marker.read_text())
        if sig == "SIGINT":
            time.sleep(1.0)  # let the compare finish its own (small) side and wait for the child
        proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _running(child):
            assert time.monotonic() < deadline, "the loader child outlived the compare"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "zombie" not in fh.read()
    except FileNotFoundError:
        return False


def test_no_fork_beside_other_threads_or_in_a_pool_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """fork() copies only the calling thread: a lock another thread holds (an import lock) stays locked in
    the child, which then never answers; and a Pool worker (a daemon process) may not have children. Both
    load in turn, even when parallel loading is forced."""
    import threading

    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not pair.parallel_wanted(str(KINETO), str(KINETO))
    finally:
        stop.set()
        other.join()
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    monkeypatch.setattr(pair.mp, "current_process", lambda: type("Worker", (), {"daemon": True})())
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))


def test_auto_mode_needs_large_inputs_idle_cpus_and_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MSPROF_COMPARE_PARALLEL", raising=False)
    monkeypatch.setattr(pair, "idle_cpus", lambda: 8.0)
    monkeypatch.setattr(pair, "available_memory", lambda: 1 << 40)
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))  # small
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    size = 2 * KINETO.stat().st_size
    monkeypatch.setattr(pair, "available_memory", lambda: pair.PARALLEL_MEMORY_FACTOR * size - 1)
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))  # both sides loaded at once would not fit
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    assert pair.parallel_wanted(str(KINETO), str(KINETO))  # forced
    monkeypatch.delenv("MSPROF_COMPARE_PARALLEL")
    monkeypatch.setattr(pair, "available_memory", lambda: None)  # unknown: not a reason to load in turn
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    monkeypatch.setattr(pair.sys, "platform", "darwin")
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))  # macOS: not fork-safe
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    monkeypatch.delenv("MSPROF_COMPARE_PARALLEL")
    monkeypatch.setattr(pair.sys, "platform", "linux")
    monkeypatch.setattr(pair, "idle_cpus", lambda: 1.2)
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))  # busy machine
    monkeypatch.undo()
    assert pair.available_memory() is None or pair.available_memory() > 0  # the real reading


def test_input_bytes_counts_data_files() -> None:
    assert pair.input_bytes(str(KINETO)) == KINETO.stat().st_size
    # trace_view.json and the side files loading reads; not profiler_info / profiler_metadata (a few hundred bytes)
    expected = sum(f.stat().st_size for f in (NPU_DIR / "ASCEND_PROFILER_OUTPUT").iterdir()
                   if f.name in ("trace_view.json", "kernel_details.csv", "memory_record.csv", "communication.json"))
    assert pair.input_bytes(str(NPU_DIR)) == expected
    assert pair.input_bytes(str(DATA / "missing")) == 0


def test_input_bytes_counts_gzip_decompressed(tmp_path: Path) -> None:
    """Loading holds the decompressed trace: a .json.gz counts at that size (the memory checks use it)."""
    import gzip

    raw = KINETO.read_bytes()
    gz = tmp_path / "t.pt.trace.json.gz"
    gz.write_bytes(gzip.compress(raw))
    assert gz.stat().st_size < len(raw) and pair.input_bytes(str(gz)) == len(raw)
    fake = tmp_path / "not_gzip.json.gz"
    fake.write_bytes(b"x" * 100)
    assert pair.input_bytes(str(fake)) == 100
    named_json = tmp_path / "gz_inside.json"  # gzip is recognised by its magic bytes, as the loader does
    named_json.write_bytes(gz.read_bytes())
    assert pair.input_bytes(str(named_json)) == len(raw)
    cut = tmp_path / "cut.json.gz"  # a truncated gzip ends in random bytes: clamped to deflate's 1032:1
    cut.write_bytes(gz.read_bytes()[:-8] + b"\xff\xff\xff\xff")
    assert pair.input_bytes(str(cut)) == 1032 * cut.stat().st_size


def test_input_bytes_opens_only_what_may_be_a_gzip_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The size probe takes sizes from the directory; only a JSON or .gz file (a trace) is opened, for gzip's
    magic bytes and trailer; CSVs and DBs are not."""
    import builtins
    import gzip

    text, db = tmp_path / "text", tmp_path / "db"
    text.mkdir()
    db.mkdir()
    (text / "kernel_details.csv").write_text("a,b\n1,2\n")
    (text / "trace_view.json").write_text("[]" + " " * 30)
    (db / "ascend_pytorch_profiler_0.db").write_bytes(b"SQLite format 3\x00" + bytes(100))
    (tmp_path / "t.pt.trace.json.gz").write_bytes(gzip.compress(b"[" + b" " * 5000 + b"]"))
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.path.basename(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    assert pair.input_bytes(str(text)) == 32 + 8
    assert pair.input_bytes(str(db)) == 116
    assert pair.input_bytes(str(tmp_path / "t.pt.trace.json.gz")) == 5002
    assert set(opened) <= {"t.pt.trace.json.gz", "trace_view.json"} and "t.pt.trace.json.gz" in opened


def test_available_memory_respects_a_cgroup_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory cgroup's limit (a container, a Slurm job, a systemd unit) leaves less than the host's
    MemAvailable: the tightest limit from the process's own cgroup up to the root counts."""
    own = tmp_path / "job" / "step"  # cgroup v2: the limit is set on the parent, the own cgroup has none
    own.mkdir(parents=True)
    (tmp_path / "job" / "memory.max").write_text("1073741824\n")
    (tmp_path / "job" / "memory.current").write_text("268435456\n")
    (own / "memory.max").write_text("max\n")
    (own / "memory.current").write_text("1000\n")
    monkeypatch.setattr(pair, "_CGROUP_ROOT", str(tmp_path))
    monkeypatch.setattr(pair, "_cgroup_paths", lambda: {"": "/job/step"})
    assert pair._cgroup_left() == 1073741824 - 268435456
    got = pair.available_memory()
    assert got is not None and got <= 1073741824 - 268435456
    v1 = tmp_path / "memory" / "slurm"  # cgroup v1, no limit (its "unlimited" is a huge number)
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (v1 / "memory.usage_in_bytes").write_text("4096\n")
    monkeypatch.setattr(pair, "_cgroup_paths", lambda: {"memory": "/slurm"})
    assert pair._cgroup_left() is None


def test_profile_error_survives_pickling() -> None:
    import pickle

    e = pickle.loads(pickle.dumps(ProfileError("/x.json", "bad data", hint="a hint")))
    assert (type(e), e.path, e.message, e.hint, str(e)) == (ProfileError, "/x.json", "bad data", "a hint",
                                                            "/x.json: bad data (a hint)")


def test_bench_ratio_mode_reports_the_floor() -> None:
    """bench/compare_bench.py's ratio mode on the NPU excerpt: (d) reads the same events as (a)
    plus the side CSVs the compare read (no timed assertion: only what each job covers)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare_bench", DATA.parents[1] / "bench" / "compare_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    d = str(NPU_DIR)
    assert bench.floor_both(d, d, []) == bench.decode_both(d, d) > 0
    info = bench.ratio_mode(d, d, 1, False)
    wall = info["wall"]
    assert wall["csv_files"] == 4  # kernel_details.csv and memory_record.csv of each side
    assert wall["floor"] > 0 and wall["decode"] > 0 and wall["ratio_floor"] == wall["floor"] / wall["decode"]
    plain = compare(d, d, enable_profiling_compare=True)
    assert info["sheets"] == {s.name: len(s) for s in plain.sheets}


def test_large_inputs_say_they_are_loading(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """One line before and one after loading inputs over ``api.LOAD_NOTICE_BYTES``; none for small ones."""
    import logging

    from msprof_compare import api

    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        compare(str(NPU_DIR), str(NPU_DIR), enable_profiling_compare=True)
    assert not any("profiling data" in r.getMessage() for r in caplog.records)
    caplog.clear()
    size = 2 * pair.input_bytes(str(NPU_DIR))
    monkeypatch.setattr(api, "LOAD_NOTICE_BYTES", size)
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        compare(str(NPU_DIR), str(NPU_DIR), enable_profiling_compare=True)
    lines = [r.getMessage() for r in caplog.records if "same input" not in r.getMessage()]  # a self-compare
    assert lines[0] == f"Loading {size / 1e6:,.0f} MB of profiling data, please wait."
    assert re.fullmatch(r"Profiling data loaded in \d+\.\d s\.", lines[1])


def test_an_input_refused_at_once_gets_no_loading_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """A folder the loader refuses before reading (two profiler DBs in it) got "Loading N MB ..., please wait."
    and then its error: nothing was loading. Its error comes alone, in the sides' order."""
    import logging

    from msprof_compare import api

    db = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    two = tmp_path / "two"
    two.mkdir()
    for rank in (0, 1):
        shutil.copyfile(db, two / f"ascend_pytorch_profiler_{rank}.db")
    monkeypatch.setattr(api, "LOAD_NOTICE_BYTES", 1)
    for base, comp in ((two, NPU_DIR), (NPU_DIR, two)):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"), pytest.raises(ProfileError) as err:
            compare(str(base), str(comp), enable_profiling_compare=True)
        assert err.value.path == str(two) and "pass the .db file to compare" in str(err.value)
        assert not [r for r in caplog.records if "profiling data" in r.getMessage()]


def test_unknown_parallel_setting_is_said_in_a_self_compare_too(monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """One input given as -bp and -d loads once and never forks, so MSPROF_COMPARE_PARALLEL was not read there
    and a mistyped value went unsaid, where a compare of two inputs warns: the self-compare warns the same way,
    once."""
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "yes")
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        compare(str(KINETO), str(KINETO), enable_operator_compare=True)
    said = [r.getMessage() for r in caplog.records if "MSPROF_COMPARE_PARALLEL" in r.getMessage()]
    assert said == ["Ignoring MSPROF_COMPARE_PARALLEL='yes': expected 0, 1 or auto."]


def test_unknown_parallel_setting_is_said_and_read_as_auto(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """A mistyped MSPROF_COMPARE_PARALLEL (``yes``) was taken silently as "auto"; it is still auto, said once."""
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "yes")
    monkeypatch.setattr(pair, "idle_cpus", lambda: 0)  # auto: no idle CPUs, so no fork
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        assert not pair.parallel_wanted(str(KINETO), str(KINETO))
    assert "Ignoring MSPROF_COMPARE_PARALLEL='yes': expected 0, 1 or auto." in caplog.text
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", " AUTO ")
    caplog.clear()
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        pair.parallel_wanted(str(KINETO), str(KINETO))
    assert "Ignoring" not in caplog.text
