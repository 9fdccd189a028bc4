"""Columns of millions of times are pulled and checked span by span (``traceio.time_values``, ``_unproven``,
``check_ends``) and the Kineto loader converts the Python frames' float times and reads their tids straight into
the rows of their table's block: a 1 GB trace's 4.1M frames held a list, an array and the magnitudes of each time
column at its load's peak (docs/performance.md, session 65). Each piece must read what the whole-column code read.

Inputs: the real AlexNet H200 excerpt of tests/data/kineto (892 python_function events, README there) loaded with a
span of 64 events, its figures recomputed from the JSON with plain Python (``Decimal``); made-up columns for the mixes
of types no real trace holds (the whole-list ``np.array`` they must agree with is computed beside them)."""

from __future__ import annotations

import gzip
import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import msgspec
import numpy as np
import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import kineto, load_profile, traceio
from msprof_compare.model import block_frame
from msprof_compare.options import build_options

ALEXNET = Path(__file__).resolve().parent / "data" / "kineto" / \
    "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
_OPS = build_options(enable_operator_compare=True)[0]
SPAN = 4


class _E(msgspec.Struct):
    ts: object = msgspec.UNSET


def _events(values: list) -> list:
    return [_E(v) for v in values]


@pytest.fixture
def small_span(monkeypatch):
    monkeypatch.setattr(traceio, "_SPAN", SPAN)


MI300 = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "tracelens" / "tests" / "traces" / \
    "mi300" / "facebook_timesformer-base-finetuned-k400__1016002.json.gz"


@pytest.mark.parametrize("path, span, arrays", [
    (ALEXNET, 64, ("dur",)),  # its ts are epoch times kept as text (RawTsEvent): a list of them
    (MI300, 4096, ("ts", "dur")),  # 42k frames, float ts ~2.2e12 us: the proof by spans, then the exact re-read
])
def test_python_frames_read_by_spans_equal_the_json_and_fill_the_block_in_place(monkeypatch, path, span, arrays):
    if not path.exists():
        pytest.skip(f"sample not present: {path}")
    monkeypatch.setattr(traceio, "_SPAN", span)
    blocks: list[np.ndarray] = []

    def probe(table, block, ints, others):
        blocks.append(block)
        return block_frame(table, block, ints, others)

    monkeypatch.setattr(kineto, "block_frame", probe)
    made: list = []
    real = traceio.time_values
    monkeypatch.setattr(traceio, "time_values", lambda ev, name: made.append((name, real(ev, name))) or made[-1][1])
    got = load_profile(str(path), _OPS).python_functions
    events = [e for e in json.loads(gzip.open(path).read(), parse_float=Decimal)["traceEvents"]
              if e.get("cat") == "python_function" and e.get("ph") == "X"]
    n = len(events)
    assert len(got) == n > span
    assert got["ts"].tolist() == [_exact_ns(e["ts"]) for e in events]
    assert got["dur"].tolist() == [_exact_ns(e["dur"]) for e in events]
    assert got["tid"].tolist() == [e["tid"] for e in events]
    frames = {name: v for name, v in made if len(v) == n}
    assert sorted(frames) == ["dur", "ts"]
    for name, v in frames.items():  # float64 arrays, not lists, where the times are numbers
        assert isinstance(v, np.ndarray) == (name in arrays) and (name not in arrays or v.dtype == np.float64)
    (block,) = blocks
    for i, col in enumerate(("ts", "dur", "tid")):
        assert np.shares_memory(got[col].to_numpy(), block[i])


def _exact_ns(us: Decimal | int) -> int:
    return int((Decimal(us) * 1000).to_integral_value(ROUND_HALF_EVEN))


@pytest.mark.parametrize("values", [
    [1.5, 2.25, 3.0, 4.125, 5.5, 6.0, 7.75, 8.0, 9.5],  # floats: the array
    [1, 2, 3, 4, 5, 6, 7, 8, 9],  # ints: the array
    [1.5, 2, 3.0, 4, 5.5, 6, 7.0, 8, 9.5],  # ints among floats in every span: float64 as the list reads
    [1, 2, 3, 4, 5.5, 6, 7, 8, 9],  # an int span, then a float one: the list (its np.array is float64 as a whole)
    [1.5, 2.5, 3.5, 4.5, 5.5, "6.5", 7.5, 8.5, 9.5],  # text in the second span
    [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, None],  # null in the last span
    [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, msgspec.UNSET],  # absent in the last span
    [1, 2, 3, 4, 2**64, 6, 7, 8, 9],  # beyond int64 in the second span
    [1, 2, 3, 4, 5, True, 7, 8, 9],  # a bool
    ["1.5", "2.5", "3.5", "4.5", "5.5", "6.5", "7.5", "8.5", "9.5"],  # text: the list
    [1.5, 2.5, 3.5],  # one span: the list
])
def test_time_values_are_the_lists_array_or_the_list(small_span, values):
    got = traceio.time_values(_events(values), "ts")
    try:
        whole = np.array(values)
    except (ValueError, OverflowError):
        whole = np.array(values, dtype=object)
    if isinstance(got, np.ndarray):
        assert len(values) > SPAN and whole.dtype.kind in "iuf"
        assert got.dtype == whole.dtype and got.tolist() == whole.tolist()
    else:
        assert got == values
    # and the conversion reads the same ns (or refuses in the same words) as from the list
    try:
        want = traceio.times_to_ns(values, "t.json", "ts")
    except ProfileError as exc:
        with pytest.raises(ProfileError) as got_exc:
            traceio.times_to_ns(got, "t.json", "ts")
        assert str(got_exc.value) == str(exc)
        return
    ns, inexact = traceio.times_to_ns(got, "t.json", "ts")
    assert ns.tolist() == want[0].tolist() and inexact == want[1]


def test_time_value_arrays_are_chosen_only_where_each_span_agrees(small_span):
    assert isinstance(traceio.time_values(_events([1, 2, 3, 4, 5.5, 6, 7, 8, 9]), "ts"), list)
    got = traceio.time_values(_events([1.5, 2, 3, 4, 5.5, 6, 7, 8, 9.0]), "ts")
    assert isinstance(got, np.ndarray) and got.dtype == np.float64


def test_float_times_converted_into_the_callers_array():
    us = np.array([1.5, 2234705626572.75, 0.0005, 0.0015, 7.0])
    out = np.full(len(us), -1, dtype=np.int64)
    got = traceio.to_ns(us, "t.json", "dur", out)
    assert np.shares_memory(got, out) and out.tolist() == [1500, 2234705626572750, 0, 2, 7000]
    assert us.tolist() == [1.5, 2234705626572.75, 0.0005, 0.0015, 7.0]  # its input left as it was
    ints = np.array([1, 2], dtype=np.int64)  # ints are multiplied into a new array, the caller copies it
    assert traceio.to_ns(ints, "t.json", "dur", np.zeros(2, dtype=np.int64)).tolist() == [1000, 2000]


@pytest.mark.parametrize("ts, proven", [
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 2234705626572.75], True),  # above 2e12 us, round trip proves it
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 2234705626572.7505], False),  # in the last span, not proven
    ([2234705626572.7505, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], False),  # in the first span
    ([5e12, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], False),  # beyond 2**42 us: nothing is proven
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], True),
])
def test_float_proof_by_spans_is_the_whole_columns(small_span, ts, proven):
    ns, inexact = traceio.times_to_ns(np.array(ts), "t.json", "ts")
    assert inexact is (not proven)
    assert inexact == traceio.float_inexact(ns, ts)  # the list's own proof


def test_ends_beyond_int64_are_found_in_any_span(small_span):
    big = np.iinfo(np.int64).max - 10
    ts = np.array([0, 1, 2, 3, 4, 5, big, 7, big], dtype=np.int64)
    dur = np.array([5, 5, 5, 5, 5, 5, 11, 5, 20], dtype=np.int64)
    with pytest.raises(ProfileError, match=rf"start {big} ns \+ duration 11 ns"):  # the first, in the second span
        traceio.check_ends("t.json", ts, dur)
    dur[6] = 10
    with pytest.raises(ProfileError, match=rf"start {big} ns \+ duration 20 ns"):
        traceio.check_ends("t.json", ts, dur)
    dur[8] = -5  # a negative duration ends before its start
    traceio.check_ends("t.json", ts, dur)


def test_lane_ids_read_into_the_callers_array_or_a_new_one(small_span):
    class L(msgspec.Struct):
        tid: object = traceio.ABSENT_LANE

    out = np.full(9, 99, dtype=np.int64)
    ids, absent, vals = traceio.lane_ids([L(t) for t in [1, 2, 3, 4, 5, traceio.ABSENT_LANE, 7, 8, 9]], "tid", out)
    assert ids is out and out.tolist() == [1, 2, 3, 4, 5, 0, 7, 8, 9] and absent.tolist() == [False] * 5 + [True] + \
        [False] * 3 and vals is None
    named = [1, 2, 3, 4, 5, "stream 7", 7, 8, 9]  # a name in the second span: the value-by-value read, a new array
    ids, _, vals = traceio.lane_ids([L(t) for t in named], "tid", out)
    assert ids is not out and vals == named
    assert ids.tolist() == traceio.lane_ids([L(t) for t in named], "tid")[0].tolist()


@pytest.mark.parametrize("low", [-9.5e15, -9e15])
def test_a_float_time_below_the_negative_bound_is_refused(low):
    """Float microseconds are bounded on both sides (|us| < 9e15, int64 nanoseconds with room): told by the
    column's extremes, a time of -9.5e15 us (or -9e15, the bound itself) is refused naming it, as its list and its
    ``time_values`` array, where its product (-9.5e18 ns) would be cast to int64 unsaid."""
    for values in ([1.5, low, 2.5], np.array([1.5, low, 2.5])):
        with pytest.raises(ProfileError, match=rf"'ts' value {low!r} in trace events: out of range \(beyond int64 "
                                               r"nanoseconds\)"):
            traceio.to_ns(values, "t.json", "ts")


def test_python_frame_float_times_are_converted_into_the_block_rows(monkeypatch):
    """The Python frames' float durations (AlexNet H200: numbers, its ts epoch texts) are multiplied into the
    table's block row itself (``_float_us_to_ns``' ``out``), not into a second array copied there after: each
    conversion of the frames' column is given an ``out`` that is the loaded column's memory."""
    if not ALEXNET.exists():
        pytest.skip(f"sample not present: {ALEXNET}")
    monkeypatch.setattr(traceio, "_SPAN", 64)
    outs: list[tuple[int, np.ndarray | None]] = []
    real = traceio._float_us_to_ns

    def probe(us, out=None):
        outs.append((len(us), out))
        return real(us, out)

    monkeypatch.setattr(traceio, "_float_us_to_ns", probe)
    got = load_profile(str(ALEXNET), _OPS).python_functions
    n = len(got)
    frames = [out for size, out in outs if size == n]
    assert len(frames) == 1 and frames[0] is not None  # the dur column: ts are texts
    assert np.shares_memory(got["dur"].to_numpy(), frames[0])
