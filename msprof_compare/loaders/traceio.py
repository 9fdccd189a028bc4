"""One-pass typed decoding of Chrome-trace JSON (Kineto ``*.pt.trace.json`` and
Ascend ``trace_view.json``).

The file is decoded once with msgspec into small typed structs (unknown keys
skipped, ``args`` kept as raw bytes), with the garbage collector paused, and
turned straight into numpy columns. ``args`` are decoded later, in one batch,
only for the events a loader asks for (``decode_args``). A trace whose float
timestamps exceed float64's ns precision keeps its time texts in that decode
(``RawTsEvent`` for Kineto, ``RawTimesEvent`` for event lists such as a
trace_view.json with numeric epoch times); only when the first timestamps gave
no sign of such times does a loader take a second, times-only pass over the
same bytes (``exact_texts``).
"""

from __future__ import annotations

import codecs
import gzip
import io
import locale
import os
import re
import shlex
import zlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, compress, islice
from operator import attrgetter
from typing import Any, BinaryIO, NamedTuple

import msgspec
import numpy as np

from ..errors import ProfileError
from ..gcpause import gc_paused
from ..model import STEP_MARK, marker_step
from ..options import Options
from ..textsafe import and_list, short_repr, short_text, term_safe
from .numparse import (
    FLOAT_EXACT_US,
    OUT_OF_RANGE,
    NumberError,
    TimeValueError,
    decimal_us_to_ns,
    parse_uniform,
    same_width_matrix,
    texts_us_to_ns,
)
from .paths import GZIP_MAX_RATIO, PROFILER_DB_NAMES, export_hint, mindspore_legacy_hint, size_cap

_NUM = int | float | str


#: ``Event.pid`` / ``tid`` of an event without one: an int (the ids' C-level read into int64 stays as it is) no
#: writer uses, so a loader can tell an absent lane from a written 0; ``to_int`` reads it as 0, as before.
ABSENT_LANE = -(2**63)


class Event(msgspec.Struct, gc=False):
    """The fields of a trace event that any comparator uses."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = ABSENT_LANE
    tid: int | str = ABSENT_LANE
    ts: _NUM | None = None  # None: absent (or null), an error for the events a loader reads
    dur: _NUM | msgspec.UnsetType = msgspec.UNSET  # UNSET: absent, read as 0 and counted (``durs_to_ns``)
    id: int | str | None = None
    args: msgspec.Raw = msgspec.Raw(b"")


class LaxLaneEvent(Event, gc=False):
    """``Event`` whose pid / tid take any JSON value: what ``decode_events`` decodes again with where the typed
    decode refused a pid or tid of another type (``true``, ``7.5``, ``null``, an array). Such a value is a damaged
    lane, counted and read as a lane of its own as one beyond int64 is (``lane_ids``, ``odd_lanes``), where the
    whole trace was refused for it. Only a refused trace pays this second decode. Its ``id`` takes a float too: a
    flow's id written as a number with a fraction (``12.0``) is that integer (``float_ids``), as the original's
    dict of flows keys it (Python's ``12.0 == 12``), where the whole trace was refused for it."""

    pid: Any = ABSENT_LANE
    tid: Any = ABSENT_LANE
    id: int | float | str | None = None


class KinetoFile(msgspec.Struct, gc=False):
    """Top level of a Kineto trace: only what the compare needs."""

    traceEvents: list[Event] | msgspec.UnsetType = msgspec.UNSET  # UNSET: no such key (not a trace at all)
    deviceProperties: Any = None
    distributedInfo: Any = None
    schemaVersion: Any = None
    metadata: Any = None


class RawTsEvent(msgspec.Struct, gc=False):
    """``Event`` with ``ts`` kept as its JSON text (absent reads as ``null``, as ``Event.ts`` reads None):
    what ``decode_events(raw_ts=True)`` returns for Kineto traces whose float timestamps lie beyond
    float64's ns precision, whose times the loader then parses once from that text (``raw_times_to_ns``)
    instead of decoding the file a second time for them (``exact_texts``)."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = ABSENT_LANE
    tid: int | str = ABSENT_LANE
    ts: msgspec.Raw = msgspec.Raw(b"null")
    dur: _NUM | msgspec.UnsetType = msgspec.UNSET
    id: int | str | None = None
    args: msgspec.Raw = msgspec.Raw(b"")


#: ``RawTimesEvent.dur`` of an event without one: no JSON value is that text, and the float decode's checks
#: (``check_raw_ts``) take it as a number, as ``Event`` takes an absent ``dur``; ``durs_to_ns`` reads it as 0
ABSENT_RAW_DUR = msgspec.Raw(b"-")


class RawTimesEvent(msgspec.Struct, gc=False):
    """``Event`` with ``ts`` and ``dur`` kept as their JSON text (absent: ``null`` and ``ABSENT_RAW_DUR``, as
    ``Event`` reads None and UNSET): what ``decode_events(raw_ts=True)`` returns for an event list
    (trace_view.json, a CANN timeline) whose float timestamps lie beyond float64's ns precision. Both times
    are parsed from that text (``raw_times_to_ns``), so an epoch-scale ``dur`` (a damaged one, read as 0
    later) needs no second decode of the file (``exact_texts``) either."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = ABSENT_LANE
    tid: int | str = ABSENT_LANE
    ts: msgspec.Raw = msgspec.Raw(b"null")
    dur: msgspec.Raw = ABSENT_RAW_DUR
    id: int | str | None = None
    args: msgspec.Raw = msgspec.Raw(b"")


class _KinetoRawTs(msgspec.Struct, gc=False):
    """``KinetoFile`` of ``RawTsEvent``s."""

    traceEvents: list[RawTsEvent] | msgspec.UnsetType = msgspec.UNSET
    deviceProperties: Any = None
    distributedInfo: Any = None
    schemaVersion: Any = None
    metadata: Any = None


#: What ``decode_events`` returns: ``Event``s, or with ``raw_ts`` (times beyond float64's ns precision) one
#: of the kinds that keep their time texts; a trace's events are all of one kind.
Events = list[Event] | list[RawTsEvent] | list[RawTimesEvent]

#: What a JSON decode can raise on bad bytes: msgspec < 0.19 lets invalid UTF-8 in a string
#: through as ``UnicodeDecodeError`` (newer versions raise ``DecodeError``).
DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError)

_EVENTS = msgspec.json.Decoder(list[Event])
_KINETO = msgspec.json.Decoder(KinetoFile)
_KINETO_RAW_TS = msgspec.json.Decoder(_KinetoRawTs)
_EVENTS_RAW_TIMES = msgspec.json.Decoder(list[RawTimesEvent])
_TIMES = msgspec.json.Decoder(list[_NUM | None])


class _LaxKinetoFile(msgspec.Struct, gc=False):
    """``KinetoFile`` of ``LaxLaneEvent``s."""

    traceEvents: list[LaxLaneEvent] | msgspec.UnsetType = msgspec.UNSET
    deviceProperties: Any = None
    distributedInfo: Any = None
    schemaVersion: Any = None
    metadata: Any = None


_LAX_EVENTS = msgspec.json.Decoder(list[LaxLaneEvent])
_LAX_KINETO = msgspec.json.Decoder(_LaxKinetoFile)
#: Where a typed decode's ValidationError points at an event's pid or tid (``$.traceEvents[7].tid``, ``$[7].pid``).
_LANE_ERROR = re.compile(r"- at `\$(?:\.traceEvents)?\[\d+\]\.(?:pid|tid)`$")
#: Where it refused an event's ``id`` written as a float (``12.0``), which ``LaxLaneEvent`` takes.
_FLOAT_ID_ERROR = re.compile(r"got `float` - at `\$(?:\.traceEvents)?\[\d+\]\.id`$")
#: The types the typed decode takes for an ``id`` as its refusal words them, and a refusal of ``LaxLaneEvent``, whose
#: id takes a float too, that is to be worded so: an id of another type (``true``) was said to be due "a number, a
#: number's text or null" where a float id or a damaged lane came before it, "an integer, a string or null" elsewhere.
_ID_DUE = "Expected `int | str | null`"
_LAX_ID_REFUSAL = re.compile(r"^Expected `int \| float \| str \| null`"
                             r"(?=, got `\w+` - at `\$(?:\.traceEvents)?\[\d+\]\.id`$)")
#: The bound of the floats ``float_ids`` reads as integer ids: from 2**53 on a float may no longer be the integer
#: written (``9007199254740993.0`` decodes to 2**53), so none of them is read as one.
_EXACT_FLOAT_INT = 2**53


class _Times(msgspec.Struct, gc=False):
    """Raw JSON text of an event's times (for the exact path of ``exact_texts``)."""

    ts: msgspec.Raw = msgspec.Raw(b"0")
    dur: msgspec.Raw = msgspec.Raw(b"0")


class _TimesFile(msgspec.Struct, gc=False):
    traceEvents: list[_Times] = []


def exact_texts(path: str, data: bytes | memoryview) -> list[_Times]:
    """The raw JSON text of every event's ``ts`` and ``dur`` (indices match ``decode_events``).

    Float64 holds a microsecond timestamp to the nanosecond only below
    ~2e12 us; traces with larger float timestamps (ns-resolution Kineto
    traces at epoch scale) would be off by up to ~128 ns, which changes op
    nesting. Such traces keep their time texts in their one decode
    (``decode_events(raw_ts=True)``); loaders call this only where that
    decode's guess missed (a float-decoded trace that ``float_inexact`` finds
    such times in): it re-reads just the two time fields of the same bytes,
    and ``exact_ns`` parses those of the events a loader keeps.
    """
    if data[:3] == b"\xef\xbb\xbf":  # as decode_events: skip a UTF-8 byte-order mark
        data = memoryview(data)[3:]
    try:
        with gc_paused():
            if first_char(data) == "{":
                return msgspec.json.decode(data, type=_TimesFile).traceEvents
            return msgspec.json.decode(data, type=list[_Times])
    except DECODE_ERRORS as exc:
        raise _json_error(path, exc) from None


def exact_ns(path: str, texts: list[_Times], field: str, idx: np.ndarray | None = None) -> np.ndarray:
    """Exact ns of ``field`` ("ts" or "dur") of the events ``idx`` (all when None), from ``exact_texts``."""
    items = texts if idx is None else map(texts.__getitem__, idx.tolist())
    return _exact_raw_ns(path, list(map(attrgetter(field), items)), field)


def _exact_raw_ns(path: str, raws: list, field: str) -> np.ndarray:
    """Exact ns of the time texts ``raws`` of ``field``; a text that reads as no time is the column's
    ``TimeValueError`` at its row, so a loader names its event (``event_time_error``), as every other refused time."""
    try:
        return texts_us_to_ns(raws)
    except NumberError as exc:
        raise TimeValueError(path, f"invalid '{field}' value {exc.text!r} in trace events: {exc.why}", row=exc.row,
                             field=field, shown=short_repr(exc.text), why=exc.why) from None


def raw_times_to_ns(raws: list[msgspec.Raw], path: str = "", field: str = "ts") -> np.ndarray:
    """``RawTsEvent.ts`` / ``RawTimesEvent`` time texts -> int64 ns, as ``to_ns`` (then ``exact_ns`` when
    ``float_inexact``) makes of the values ``Event`` decodes them to.

    Plain ``digits.ddd`` texts of one width (a trace's timestamps) are parsed as text in one vectorised
    pass: for a whole number of ns the text is the exact value, which both of those paths give. Anything
    else (ints, more decimals, strings, null, a sign, mixed widths, values out of range) decodes the texts
    into the values ``Event`` would hold and takes that very path, so errors and roundings are alike.
    """
    n = len(raws)
    # three lengths first: durations differ in width, and a length per text costs ~7 ms at 220k texts
    u = same_width_matrix(raws) if n and len(raws[0]) == len(raws[n // 2]) == len(raws[-1]) else None
    if u is not None:
        got = parse_uniform(u)
        if got is not None and got[2] >= u.shape[1] - 4 and got[1].all():
            ns = got[0]
            if int(ns.max()) < _MAX_US * 500:  # far from to_ns's range limit, where float rounding decides
                return ns
    with gc_paused():
        try:
            values = _TIMES.decode(b"".join((b"[", b",".join(raws), b"]")))
        except (msgspec.ValidationError, *DECODE_ERRORS) as exc:  # the caller turns it into the float
            raise ProfileError(path, f"invalid '{field}' value in trace events: {exc}") from None  # decode's error
    ns, inexact = times_to_ns(values, path, field)
    if inexact:
        ns = _exact_raw_ns(path, raws, field)
    return ns


def durs_to_ns(values: list, convert: Callable[[list], tuple[np.ndarray, bool]],
               timed: np.ndarray | None = None) -> tuple[np.ndarray, bool, np.ndarray | None]:
    """``convert(values)`` (ns, inexact) of a ``dur`` column, and which values were absent from their events
    (None: none), read as 0. ``timed``: the events that should have one (complete events; None: all); the
    others' (flows, instant events) have none by design, read 0 as before and are not marked.

    An absent ``dur`` decodes as a value no conversion takes (UNSET, ``ABSENT_RAW_DUR``), so a column with
    none costs nothing more: only a refused one is looked through, and converted again with 0 in their place
    (a refusal of any other value is raised as it was). The untimed events are split off first (C-level
    ``compress``): a column of flows without ``dur`` would be refused every time."""
    if timed is None or timed.all():
        return _durs_to_ns(values, convert)
    ns = np.zeros(len(values), dtype=np.int64)
    # over the masks' bytes, as ``ascend_text._pick``: a list of a bool per event was 8 bytes an event (a 1 GB
    # trace's 2.6M kept events: 20 MB, where its load nears its peak)
    try:
        got, inexact, absent_timed = _durs_to_ns(list(compress(values, timed.view(np.uint8).tobytes())), convert)
    except TimeValueError as exc:  # its place among all the values, whose events the caller knows
        exc.row = int(np.flatnonzero(timed)[exc.row])
        raise
    ns[timed] = got
    del got
    rest = list(compress(values, (~timed).view(np.uint8).tobytes()))
    if rest.count(_absent_mark(values)) != len(rest):  # untimed events with a dur: read as they were
        try:
            got, rest_inexact, _ = _durs_to_ns(rest, convert)
        except TimeValueError as exc:
            exc.row = int(np.flatnonzero(~timed)[exc.row])
            raise
        ns[~timed] = got
        inexact = inexact or rest_inexact
    absent = None
    if absent_timed is not None:
        absent = np.zeros(len(values), dtype=bool)
        absent[timed] = absent_timed
    return ns, inexact, absent


def _absent_mark(values: list) -> Any:
    return ABSENT_RAW_DUR if values and type(values[0]) is msgspec.Raw else msgspec.UNSET


def _durs_to_ns(values: list, convert: Callable[[list], tuple[np.ndarray, bool]]
                ) -> tuple[np.ndarray, bool, np.ndarray | None]:
    try:
        return (*convert(values), None)
    except ProfileError:
        if isinstance(values, np.ndarray):  # ``time_values``' numbers: no absent value among them
            raise
        mark = _absent_mark(values)
        if mark not in values:
            raise
        absent = np.fromiter((v == mark for v in values), dtype=bool, count=len(values))
        zero = msgspec.Raw(b"0") if mark is ABSENT_RAW_DUR else 0
        return (*convert([zero if a else v for v, a in zip(values, absent.tolist(), strict=True)]), absent)


def absent_dur_note(path: str, counts: dict[str, tuple[int, int]]) -> str:
    """The one warning line for a file's complete events without a ``dur`` (``counts``: what they are ->
    (absent, all of them)), or "" when there are none."""
    parts = [f"{a:,} of {n:,} {what}" for what, (a, n) in counts.items() if a]
    if not parts:
        return ""
    return (f"{path}: complete events without a 'dur' ({', '.join(parts)}); read as 0 long, so their time "
            "counts in no figure")


def device_time_readers(opts: Options) -> list[str]:
    """The comparisons of a run that read a trace's device time (the kernels' or device lanes' ``dur``): the time
    breakdown (computing, communication and free time), the operator comparison (each op's kernels, the modules'
    too) and the communication comparison (the collective kernels, the HCCL lane). The API and memory comparisons
    read host events and memory records, an NPU kernel comparison kernel_details.csv's durations."""
    readers = [("the time breakdown", opts.time_breakdown),
               ("the operator comparison", opts.enable_operator_compare),
               ("the communication comparison", opts.enable_communication_compare)]
    return [name for name, on in readers if on]


def no_device_time(path: str, events: str, readers: list[str], hint: str) -> ProfileError:
    """The refusal of a trace none of whose ``events`` (device events: "75 kernels") has a ``dur``, naming the
    run's ``readers`` (``device_time_readers``, not empty) of that time: computing and communication would read 0
    and the E2E all free time against the other side's, a difference no run had."""
    return ProfileError(path, f"none of the trace's {events} has a 'dur' (their duration): no device time to "
                              f"compare, which {and_list(readers)} read{'s' if len(readers) == 1 else ''} from them",
                        hint=hint)


def read_bytes(path: str, force: bool = False) -> bytes:
    """Read a (possibly gzip-compressed) file into memory, with clear errors. Without ``force`` a file over
    the trace size cap is refused (reference-1 §2.5), the cap ``MSPROF_COMPARE_MAX_TRACE_BYTES`` sets, as for
    the path check and the decompressed size."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None
    limit = -1 if force else size_cap("trace")
    if 0 <= limit < size:
        raise ProfileError(path, f"file is {size} bytes, over the {limit} byte limit", hint=_CAP_HINT)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(path, data, limit)
    return data


_CAP_HINT = "add --force to read it anyway, or raise the limit with MSPROF_COMPARE_MAX_TRACE_BYTES"


def _gunzip(path: str, data: bytes, limit: int) -> bytes:
    """Decompress a gzip trace, refusing output over ``limit`` bytes (the trace size cap; -1: none, --force):
    gzip bombs.

    The first read asks for the size the gzip trailer states (ISIZE: the last member's size mod 2**32),
    capped: one buffer of the right size, as fast as one whole read. A read of the whole cap instead
    allocated the cap at once ("out of memory" for a cap above the machine's memory, an error over
    2**63), and reading all in blocks cost 60 % more on the timesformer traces (23 -> 38 ms a file).
    What the trailer does not cover (several members, 4 GiB or more, trailing zeros) follows in blocks."""
    stated = int.from_bytes(data[-4:], "little") if len(data) >= 18 else 0  # 18: the smallest gzip member
    # deflate expands at most ~1032:1, so a trailer stating more (a crafted or damaged one) is not trusted
    want = max(min(stated, GZIP_MAX_RATIO * len(data)), _GZIP_BLOCK) + 1
    if limit >= 0:
        want = min(want, limit + 1)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            out = fh.read(want)
            if len(out) == want:  # more may follow
                parts, size = [out], len(out)
                while size <= limit or limit < 0:
                    block = fh.read(_GZIP_BLOCK if limit < 0 else min(_GZIP_BLOCK, limit + 1 - size))
                    if not block:
                        break
                    parts.append(block)
                    size += len(block)
                out = b"".join(parts)
    except (OSError, EOFError, zlib.error) as exc:
        raise ProfileError(path, f"corrupt gzip data: {exc}") from None
    if 0 <= limit < len(out):
        raise _over_cap(path, limit, stated)
    return out


def _over_cap(path: str, limit: int, stated: int) -> ProfileError:
    """The refusal of a gzip trace inflating past ``limit``: reading stops there, so the size the trailer states
    (the last member's, mod 2**32; a damaged one may state anything) tells how far to raise it, as the file's
    word, not a size measured."""
    told = f" (its gzip trailer gives {stated} bytes)" if stated > limit else ""
    return ProfileError(path, f"decompressed trace is over the {limit} byte limit{told}", hint=_CAP_HINT)


_GZIP_BLOCK = 1 << 24


def head_bytes(path: str, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a file, decompressed when it is gzip (what ``first_char`` needs to tell
    a file's kind before it is read whole); b"" when they cannot be read (the loader names the problem)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(size)
            if head[:2] == b"\x1f\x8b":
                fh.seek(0)
                with gzip.GzipFile(fileobj=fh) as gz:
                    head = gz.read(size)
    except (OSError, EOFError, zlib.error):
        return b""
    return head


def tail_bytes(path: str, size: int, force: bool = False) -> bytes:
    """The last ``size`` bytes of a file, decompressed when it is gzip: where a Kineto trace's writer put the keys
    it wrote after ``traceEvents`` (the Kineto of hta's 2022-23 samples: ``distributedInfo``). A plain file's are
    one seek away; a gzip one's end only the whole stream reaches, inflated block by block, each dropped but for
    its last ``size`` bytes (no JSON decode; memory: a few blocks; ``_inflated_tail``). ``ProfileError`` in the
    loader's words (``read_bytes``, ``_gunzip``) where the file cannot be read, its gzip is damaged, or it inflates
    past the trace size cap (``force``: none)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                end = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, end - size))
                return fh.read(size)
            end = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, end - 4))
            stated = int.from_bytes(fh.read(4), "little") if end >= 18 else 0  # as _gunzip reads the trailer
            fh.seek(0)
            limit = -1 if force else size_cap("trace")
            tail = _inflated_tail(fh, size, limit)
            if tail is not None:
                return tail
            # damaged, past the cap, or read otherwise by zlib: GzipFile's pass from the start, in the load's words
            fh.seek(0)
            tail, total = b"", 0
            try:
                with gzip.GzipFile(fileobj=fh) as gz:
                    while block := gz.read(_TAIL_BLOCK):
                        total += len(block)
                        if 0 <= limit < total:
                            raise _over_cap(path, limit, stated)
                        tail = (tail + block)[-size:] if len(block) < size else block[-size:]
            except (OSError, EOFError, zlib.error) as exc:
                raise ProfileError(path, f"corrupt gzip data: {exc}") from None
            return tail
    except OSError as exc:
        raise ProfileError(path, f"cannot read file: {exc.strerror or exc}") from None


def _inflated_tail(fh: BinaryIO, size: int, limit: int) -> bytes | None:
    """``tail_bytes``' pass over a sound gzip file (``fh`` at its start): zlib's own gzip reading, which checks each
    member's CRC and length as ``GzipFile`` does, without its buffered reader's copy of every block, and in blocks
    small enough to stay in the CPU's cache while the CRC reads them: 58 against 67 ms for a 62 MB trace (tracelens'
    xdit_sd_3.5). Members follow one another, NUL bytes between or after them skipped (``GzipFile``'s reading).
    None where this pass cannot end cleanly (zlib refuses the data, the stream ends inside a member, the inflated
    size passes ``limit``): ``GzipFile``'s pass then runs from the start, for its result or its error."""
    tail, total, pending = b"", 0, b""
    member: Any = None  # the member being inflated; None between members
    while True:
        chunk = pending or fh.read(_TAIL_INPUT)
        pending = b""
        if not chunk:
            return tail if member is None else None
        if member is None:
            chunk = chunk.lstrip(b"\0")
            if not chunk:
                continue
            member = zlib.decompressobj(31)  # 16 + 15: a gzip header and trailer around a 32 KiB-window stream
        try:
            while True:
                block = member.decompress(chunk, _TAIL_OUTPUT)
                chunk = member.unconsumed_tail
                total += len(block)
                if 0 <= limit < total:
                    return None
                tail = (tail + block)[-size:] if len(block) < size else block[-size:]
                # a full block may leave output inside zlib with its input all taken: asked again, with none
                if member.eof or not chunk and len(block) < _TAIL_OUTPUT:
                    break
        except zlib.error:
            return None
        if member.eof:
            pending, member = member.unused_data, None


#: The blocks ``tail_bytes`` inflates a gzip trace in (``GzipFile``'s pass).
_TAIL_BLOCK = 1 << 20
#: ``_inflated_tail``'s reads of the file and most bytes inflated at once: 64 KiB / 256 KiB measured fastest
#: (1 MiB blocks: as slow as ``GzipFile``'s pass; 4 KiB reads and 64 KiB blocks: 30 % slower).
_TAIL_INPUT, _TAIL_OUTPUT = 1 << 16, 1 << 18


#: The first byte of a JSON text that is neither blank nor part of a byte order mark.
_NOT_BLANK = re.compile(rb"[^\xef\xbb\xbf \t\r\n]")


def first_char(data: bytes | memoryview) -> str:
    """The first non-blank character of a JSON text ("" if none): '{' for Kineto, '[' for trace_view.
    Searched in place: a whole trace is not copied, and blanks longer than a head read are still passed."""
    m = _NOT_BLANK.search(data)
    return chr(data[m.start()]) if m else ""


def decode_problem(msg: str) -> str:
    """msgspec's decode error without its "JSON is malformed: " lead, which our "malformed ... JSON:" repeated."""
    return msg.removeprefix("JSON is malformed: ")


def decode_text(exc: Exception) -> str:
    """A decode error as one text across msgspec versions: older ones raise Python's UnicodeDecodeError for invalid
    UTF-8 ("'utf-8' codec can't decode ..."), where newer ones say "Invalid UTF-8 encoded string"."""
    return f"Invalid UTF-8 encoded string ({exc})" if isinstance(exc, UnicodeDecodeError) else decode_problem(str(exc))


def _json_error(path: str, exc: Exception) -> ProfileError:
    msg = decode_text(exc)
    if "truncated" in msg.lower():
        return ProfileError(path, f"truncated JSON ({msg})",
                            hint="the file was probably cut short while copying or writing")
    return ProfileError(path, f"malformed trace JSON: {msg}")


#: A typed decode's refusal as msgspec words it: the types it wanted and the one it got, or a number beyond its
#: range; then where (``_EVENT_AT``).
_REFUSAL = re.compile(r"(?:Expected `(?P<want>[^`]*)`, got `(?P<got>[^`]*)`|(?P<range>(?:Integer value|Number) out of "
                      r"range)) - at `")
#: Where a refusal of the trace's typed decode points: ``$.traceEvents``, ``$.traceEvents[7]``, ``$[7].dur``.
_EVENT_AT = re.compile(r" - at `\$(?P<top>\.traceEvents)?(?:\[(?P<index>\d+)\])?(?:\.(?P<field>\w+))?`$")

#: msgspec's JSON type names -> words.
_TYPE_WORDS = {"null": "null", "bool": "a boolean", "int": "an integer", "float": "a number", "str": "a string",
               "array": "a list", "object": "an object"}

#: The leads of the refusals ``invalid_event`` words: a value of a wrong type, which no repair of the JSON text
#: (``decode_trace``) mends, and whose shown values (a name) must not be read as a decode error's words.
INVALID_EVENT = "invalid trace event"
TYPE_REFUSALS = (INVALID_EVENT, "invalid trace:")


def refusal_words(message: str) -> tuple[str, str] | None:
    """msgspec's ValidationError ``message`` as words: what was written ("null", "a list", ..., or "a number beyond
    a 64-bit integer or float") and what is due ("" for a number out of range); None where it is worded
    otherwise (a missing field)."""
    m = _REFUSAL.match(message)
    if m is None:
        return None
    if m["range"]:
        return "a number beyond a 64-bit integer or float", ""
    kinds = [k.strip() for k in m["want"].split("|")]
    due = ["a number" if "float" in kinds else "an integer"] if {"int", "float"} & set(kinds) else []
    if "str" in kinds:  # Kineto writes some times as strings: a number's text is what such a field takes
        due.append("a number's text" if "float" in kinds else "a string")
    due += [_TYPE_WORDS.get(k, k) for k in kinds if k not in ("int", "float", "str")]
    return _TYPE_WORDS.get(m["got"], m["got"]), ", ".join(due[:-1]) + f" or {due[-1]}" if len(due) > 1 else due[0]


class _RawEventsText(msgspec.Struct, gc=False):
    traceEvents: msgspec.Raw = msgspec.Raw(b"[]")


#: How much of an event list ``_event_at`` takes at a time (grown where one event is longer)
_EVENT_CHUNK = 1 << 24


def _event_at(data: bytes | memoryview, kind: str, index: int) -> dict[str, msgspec.Raw]:
    """Event ``index`` of a trace the typed decode refused, each field as its JSON text; empty where the text
    cannot give it (a syntax error later on). An error path only, but bounded: the event list is taken as one
    text (no object per event) and decoded 16 MiB at a time, each piece's events kept as their texts until the
    piece that holds ``index``. A decode of the whole list, an object per event, took ~55 bytes an event (0.5 GB
    at 10 million) on top of the file."""
    try:
        with gc_paused():
            events = memoryview(msgspec.json.decode(data, type=_RawEventsText).traceEvents if kind == "{" else
                                msgspec.json.decode(data, type=msgspec.Raw))
            pos, seen, size = 0, 0, _EVENT_CHUNK  # pos: the "[" or the "," before the next event
            while pos < len(events) and events[pos:pos + 1] in (b"[", b","):
                piece = _whole_events(bytearray(events[pos:pos + size]))
                if piece is None:  # no whole event in the piece: a longer one
                    if pos + size >= len(events):
                        return {}
                    size *= 2
                    continue
                texts, sep = piece
                if index < seen + len(texts):
                    return msgspec.json.decode(texts[index - seen], type=dict[str, msgspec.Raw])
                seen, pos = seen + len(texts), pos + sep
            return {}
    except (*DECODE_ERRORS, RecursionError, IndexError, TypeError):
        return {}


def _whole_events(piece: bytearray) -> tuple[list[msgspec.Raw], int] | None:
    """The events of ``piece`` (a piece of an event list from the "[" or "," before an event) up to its last whole
    one, as their texts, and where the "," or "]" after that one lies; None where it holds no whole event. An event
    of the list ends at a "}" followed by a "," or the list's "]", which is set to "]" for the decode (no copy of
    the piece); a "}" inside an event or a string is told by the piece not decoding, as the cut then leaves an
    object or a string open (every event up to a refused field's is an object: the typed decode refuses an event
    of another type first)."""
    piece[0] = ord("[")
    end = len(piece)
    while (end := piece.rfind(b"}", 1, end)) >= 0:
        tail = piece[end + 1:end + 65]
        sep = end + 1 + len(tail) - len(tail.lstrip())
        if piece[sep:sep + 1] in (b",", b"]"):
            kept, piece[sep] = piece[sep], ord("]")
            try:
                return msgspec.json.decode(memoryview(piece)[:sep + 1], type=list[msgspec.Raw]), sep
            except DECODE_ERRORS:
                piece[sep] = kept
    return None


def _text_field(event: dict[str, msgspec.Raw], key: str) -> str | None:
    """Field ``key`` of ``_event_at``'s event where it is a string, quoted as a message quotes a value."""
    try:
        value = msgspec.json.decode(event[key]) if key in event else None
    except (*DECODE_ERRORS, RecursionError):
        return None
    return short_repr(value) if isinstance(value, str) else None


def invalid_event(path: str, data: bytes | memoryview, kind: str, message: str) -> ProfileError:
    """The error of a trace whose typed decode raised msgspec's ValidationError ``message``, in our words: the
    event (its index from 0, and its ph and name where they are strings), the field and its value as written,
    and what is due. msgspec's own line ("Expected `int | float | str`, got `null` - at `$[3949].dur`") named
    them in its notation. Only a refused trace pays the lookup of the event (a second decode)."""
    words, at = refusal_words(message), _EVENT_AT.search(message)
    if words is None or at is None or (at["index"] is None and not at["top"]):
        return ProfileError(path, f"not a trace event file: {message}")
    got, due = words
    if at["index"] is None:
        return ProfileError(path, f"invalid trace: traceEvents is {got}, where a list of events is due")
    index, top, field = int(at["index"]), bool(at["top"]), at["field"]
    if field is None:
        return ProfileError(path, f"{INVALID_EVENT}: {_event_named(index, top)} is {got}, where an event (an object) "
                                  "is due")
    event = _event_at(data, kind, index)
    where = _event_named(index, top, [f"{k} {shown}" for k in ("ph", "name")
                                      if k != field and (shown := _text_field(event, k))])
    # the value as the file writes it (a number beyond float64 decodes to none): what a search of the file finds
    value = short_text(bytes(event[field]).decode("utf-8", "replace")) if field in event else ""
    shown = (value or got) if got in ("null", "a boolean") else f"{value}, {got}" if value else got
    return ProfileError(path, f"{INVALID_EVENT}: {where} has {field} {shown}" + (f", where {due} is due" if due
                                                                                 else ""))


def _event_named(index: int, top: bool, named: list[str] | None = None) -> str:
    """An event as a refusal names it: its index from 0 in the file's traceEvents (``top``) or event list, and
    ``named``, its ph and name as shown (``ph 'X'``) where they are strings. One wording for a value the typed
    decode refused (``invalid_event``) and a time that reads as no time (``event_time_error``)."""
    where = f"event {index} of {'traceEvents' if top else 'the event list'} (counting from 0"
    return f"{where}; {', '.join(named)})" if named else f"{where})"


#: The first event time of a trace (``_beyond_float_ns``).
_FIRST_TS = re.compile(rb'"ts"\s*:\s*(-?[0-9]+\.[0-9]*)')


def _beyond_float_ns(data: bytes | memoryview) -> bool:
    """Whether a trace's first ``ts`` (in its first 64 KiB) is a float too large for float64 to be proven
    exact to the ns (``float_inexact``): a guess of whether ``exact_texts`` would be needed."""
    m = _FIRST_TS.search(data, 0, 1 << 16)
    return m is not None and abs(float(m.group(1))) >= _FLOAT_PROVABLE_US


#: Longest JSON number text that cannot be beyond msgspec's range without an exponent (a float needs
#: over 308 digits to overflow, an int over 4300).
_PLAIN_NUMBER_BYTES = 300


def _texts_valid(raws: list, kinds: bytes) -> bool:
    """Whether every time text of ``raws`` (``RawTsEvent.ts`` / ``RawTimesEvent`` times) is one ``Event``
    accepts (``kinds``: the first bytes it takes; ``ts`` is a number, a string or null, ``dur`` no null):
    what the float decode would have checked. The first byte tells the kind (the text is one whole JSON
    value); a number the float decode finds out of range (``1e400``, hundreds of digits) starts with a
    digit all the same, so the texts that could be one (an exponent, or longer than ``_PLAIN_NUMBER_BYTES``)
    are decoded as ``Event.ts`` is."""
    if not raws:
        return True
    # joined with NUL, which no decoded JSON text holds (a raw control byte is refused, or read as a blank by
    # ``decode_trace``), so the texts' starts are found in one scan, with no len() per text; none is empty
    joined = np.frombuffer(b"\0".join(raws), dtype=np.uint8)
    starts = np.flatnonzero(joined == 0) + 1
    starts = np.concatenate(([0], starts)) if starts.size else np.zeros(1, dtype=np.int64)
    firsts = joined[starts]
    if not np.isin(firsts, np.frombuffer(kinds, dtype=np.uint8)).all():
        return False
    exp = np.flatnonzero((joined == ord("e")) | (joined == ord("E")))
    lens = np.diff(starts, append=joined.size + 1) - 1
    maybe = np.union1d(np.searchsorted(starts, exp, side="right") - 1, np.flatnonzero(lens > _PLAIN_NUMBER_BYTES))
    maybe = maybe[firsts[maybe] != ord('"')]  # strings are time values whatever they hold
    if maybe.size:
        try:
            _TIMES.decode(b"".join((b"[", b",".join(map(raws.__getitem__, maybe.tolist())), b"]")))
        except (msgspec.ValidationError, *DECODE_ERRORS):
            return False
    return True


def _decode_raw_times(kind: str, data: bytes | memoryview) -> tuple[list, Any] | None:
    """``decode_events``'s decode with time texts (``RawTsEvent`` / ``RawTimesEvent``); None where the float
    decode is to run instead: a JSON object without traceEvents (it names that), or bytes refused (it raises
    its own error; an error path, so a second decode costs nothing that matters). A raw control character or
    a backslash that escapes nothing is the one refusal raised as it is: ``decode_trace`` repairs those and
    decodes again, so running the float decode up to it first would cost every such trace (PyTorch 2.3-2.4,
    PyTorch 1.9-2.0 on Windows) a part decode; a bad time before it, which the float decode would have named
    instead, is named all the same, by ``check_raw_ts`` after that decode of the repaired bytes."""
    try:
        if kind == "{":
            top = _KINETO_RAW_TS.decode(data)
            return None if top.traceEvents is msgspec.UNSET else (top.traceEvents, top)
        return _EVENTS_RAW_TIMES.decode(data), None
    except (*DECODE_ERRORS, RecursionError) as exc:  # DECODE_ERRORS: a ValidationError is a DecodeError
        m = INVALID_CHAR.search(str(exc)) if type(exc) is msgspec.DecodeError else None
        if m and int(m.group(1)) < len(data) and data[int(m.group(1))] < 0x20:
            raise
        if type(exc) is msgspec.DecodeError and "escape" in str(exc):
            raise
        return None


def check_raw_ts(path: str, data: bytes, events: list, read: np.ndarray | None = None) -> None:
    """Refuse a trace of ``RawTsEvent``s / ``RawTimesEvent``s as the float decode does when a time text is
    no value that decode takes (a boolean, a list, a number out of range, a null ``dur``): by running it, so
    the error is its own. ``read``: the events whose times were parsed already (``raw_times_to_ns`` took
    their texts as numbers), left unchecked."""
    unread = None if read is None else (~read).tolist()

    def texts(field: str) -> list:  # compress: half the cost of a list of the unread events first
        return list(map(attrgetter(field), events if unread is None else compress(events, unread)))

    ok = _texts_valid(texts("ts"), b'0123456789-"n')
    if ok and events and type(events[0]) is RawTimesEvent:
        ok = _texts_valid(texts("dur"), b'0123456789-"')
    if not ok:
        decode_events(path, data)
        raise ProfileError(path, "not a trace event file: a time value is no number")  # decode_events raised


def decode_events(path: str, data: bytes | memoryview, raw_ts: bool = False) -> tuple[Events, KinetoFile | None]:
    """Decode a trace into a list of typed events (and the Kineto top level, if any).

    ``raw_ts`` (the loaders): a trace whose times look beyond float64's ns precision (``_beyond_float_ns``)
    decodes with its times kept as text, which the loader parses (``raw_times_to_ns``): one decode instead
    of two (a real 184 MB PyTorch 2.11 trace, ts ~5.2e12 us: 0.26 s and ~70 MB less per side). A Kineto
    trace gives ``RawTsEvent``s (``ts`` only: a Kineto ``dur`` of that size is read as 0, ``kineto._Events``),
    an event list ``RawTimesEvent``s (``ts`` and ``dur``). Their time texts are not checked here: the caller
    must refuse what the float decode refuses (``check_raw_ts``: the texts it parsed need no check, and
    before any other error it raises, a trace with a bad time gets the decode's error). Bytes the decode
    with text times refuses go through the float decode, so the error is the one it always gave (about the
    first bad value: the decode with text times passes a bad time and stops at a later bad field).
    """
    kind = first_char(data)
    if data[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte-order mark: harmless, but msgspec refuses it
        data = memoryview(data)[3:]
    try:
        with gc_paused():
            if raw_ts and kind in ("{", "[") and _beyond_float_ns(data):
                got = _decode_raw_times(kind, data)
                if got is not None:
                    return got
            try:
                got = _typed_decode(path, data, kind, _KINETO, _EVENTS)
            except msgspec.ValidationError as exc:
                if not _LANE_ERROR.search(str(exc)) and not _FLOAT_ID_ERROR.search(str(exc)):
                    raise
                # a pid / tid of another type (true, 7.5): a damaged lane, counted by the loaders, not a refusal;
                # a float id (12.0): that integer. Only such a trace pays this second decode
                got = _typed_decode(path, data, kind, _LAX_KINETO, _LAX_EVENTS)
                if got is not None:
                    float_ids(path, data, kind, got[0])
            if got is not None:
                return got
    except msgspec.ValidationError as exc:
        raise invalid_event(path, data, kind, _LAX_ID_REFUSAL.sub(_ID_DUE, str(exc))) from None
    except DECODE_ERRORS as exc:
        refuse_utf16(path, data, "profiler traces are UTF-8")  # UTF-16LE without a BOM starts with '{' or '['
        raise _json_error(path, exc) from None
    except RecursionError:
        raise ProfileError(path, "malformed trace JSON: values nested too deeply") from None
    if kind == "":
        raise ProfileError(path, "empty file")
    refuse_utf16(path, data, "profiler traces are UTF-8")
    archive = archive_kind(data)
    if archive == _SQLITE:  # nothing to unpack: a profiler database renamed, or another database
        raise ProfileError(path, f"not a JSON trace: the file is {archive}",
                           hint=f"a profiler database is read under its own name, {PROFILER_DB_NAMES}, or from its "
                                "profiling directory")
    if archive:
        raise ProfileError(path, f"not a JSON trace: the file is {archive}",
                           hint="unpack it and pass the trace it holds, or its profiling directory")
    stand_in = stand_in_kind(data)
    if stand_in:
        raise ProfileError(path, f"not a JSON trace: the file is {stand_in[0]}", hint=stand_in[1])
    raise ProfileError(path, "not a JSON trace (expected an object with traceEvents or an event list)",
                       hint=_unknown_text_hint(path, data))


def float_ids(path: str, data: bytes | memoryview, kind: str, events: list) -> None:
    """Read each float ``id`` of ``LaxLaneEvent``s as the integer it is (``12.0``: 12, which pairs with a flow's
    ``12``), in place; refuse one that is no integer (``12.5``) or 2**53 or beyond (maybe not the integer written) as
    the typed decode refused it, naming the event. A refused trace's second decode only: a per-event look."""
    for i, event in enumerate(events):
        value = event.id
        if type(value) is float:
            if not (value.is_integer() and abs(value) < _EXACT_FLOAT_INT):
                at = f"$.traceEvents[{i}].id" if kind == "{" else f"$[{i}].id"
                raise invalid_event(path, data, kind, f"{_ID_DUE}, got `float` - at `{at}`")
            event.id = int(value)


def _typed_decode(path: str, data: bytes | memoryview, kind: str, top_decoder: msgspec.json.Decoder,
                  list_decoder: msgspec.json.Decoder) -> tuple[list, Any] | None:
    """``decode_events``' decode of a Kineto object (``top_decoder``) or an event list; None for other text."""
    if kind == "{":
        top = top_decoder.decode(data)
        if top.traceEvents is msgspec.UNSET:
            # communication.json, profiler_info_0.json: name the input to pass
            raise ProfileError(path, "not a trace: a JSON object without traceEvents",
                               hint=export_hint(path) or mindspore_legacy_hint(path)
                               or "a profiler side file? pass the trace, or the profiling directory it belongs to")
        return top.traceEvents, top
    if kind == "[":
        return list_decoder.decode(data), None
    return None


_SQLITE = "an SQLite database"
#: Leading bytes of the archive and compression formats a trace is shipped in (a gzip member is inflated
#: before the check, so a .tar.gz shows as tar, and gzip's own bytes there mean a second compression), and
#: what they are called in an error line.
_MAGIC = ((b"\x1f\x8b", "gzip-compressed twice"),
          (b"PK\x03\x04", "a zip archive"), (b"PK\x05\x06", "an empty zip archive"), (b"BZh", "bzip2-compressed"),
          (b"\xfd7zXZ\x00", "xz-compressed"), (b"\x28\xb5\x2f\xfd", "zstd-compressed"),
          (b"7z\xbc\xaf\x27\x1c", "a 7z archive"), (b"SQLite format 3\x00", _SQLITE))


def archive_kind(data: bytes | memoryview) -> str:
    """What an archive or compressed file is, from its first bytes ("" for anything else): a trace shipped
    as a .zip / .tar.gz / .bz2 and renamed read as "not a JSON trace", which does not say what to do."""
    head = bytes(data[:512])
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[257:262] == b"ustar":  # POSIX tar header (also what a .tar.gz inflates to)
        return "a tar archive"
    return ""


#: Text files that stand in for a trace under its name, by their first bytes (after blanks, case aside): what each
#: is and what to do. A clone of a repository without git-lfs holds a pointer of three lines in place of each large
#: file, and a download of the page that links a file saves that web page under the file's name: both read as
#: "not a JSON trace (expected ...)", which sent the user looking for damage in a profile never fetched.
_STAND_INS = ((b"version https://git-lfs.github.com/spec/", "a Git LFS pointer, not the file it stands for",
               "fetch the file itself: git lfs pull, in the repository it came from"),
              (b"<!doctype html", "a web page (HTML), saved under the file's name",
               "download the file itself, not the page that links it"),
              (b"<html", "a web page (HTML), saved under the file's name",
               "download the file itself, not the page that links it"))


def stand_in_kind(data: bytes | memoryview) -> tuple[str, str] | None:
    """(what the file is, what to do) for a text that stands in for a trace or a profiler database
    (``_STAND_INS``), else None."""
    head = bytes(data[:64]).lstrip().lower()
    for start, kind, hint in _STAND_INS:
        if head.startswith(start):
            return kind, hint
    return None


def _unknown_text_hint(path: str, data: bytes | memoryview) -> str | None:
    """What an unknown file's error adds: its first characters where they are text (a log, a CSV, an error page
    of another kind: what the file is, at a glance), and, where its name ends in .gz but it holds no gzip data, so;
    None for binary data, which a quote would not show."""
    line = bytes(data[:200]).lstrip().split(b"\n", 1)[0].rstrip(b"\r")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    begins = f"it begins {short_repr(text)}" if text.isprintable() and text.strip() else ""
    if path.endswith(".gz") and not _gzip_file(path):
        return "its name ends in .gz, but the file is not gzip-compressed" + (f": {begins}" if begins else "")
    return begins or None


#: The other encoding profiles come in: torch_npu and MindSpore write their text files (trace_view.json, the
#: CSVs, the JSON side files) with ``open`` and no ``encoding=``, so in the locale's encoding, and with
#: ``ensure_ascii=False``; on a Chinese-locale host that is GBK / GB18030 (GB18030 decodes both). Kineto's C++
#: writer always writes UTF-8.
CJK_ENCODING = "gb18030"
_TEXT_CHUNK = 1 << 20


def _locale_encoding() -> str:
    """The encoding the original reads its text files in (``open`` without ``encoding=``): the locale's."""
    try:
        return codecs.lookup(locale.getpreferredencoding(False)).name
    except LookupError:
        return "utf-8"


def _chunks(data: bytes) -> Iterator[memoryview]:
    with memoryview(data) as view:
        for i in range(0, len(data), _TEXT_CHUNK):
            yield view[i:i + _TEXT_CHUNK]


def _is_utf8(data: bytes) -> bool:
    check = codecs.getincrementaldecoder("utf-8")()
    try:
        for chunk in _chunks(data):
            check.decode(chunk)
        check.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _mostly_utf8(data: bytes) -> bool:
    """Whether the non-ASCII text is plainly UTF-8 with a damaged byte, not another encoding: its distinct runs
    of non-ASCII characters hold at least eight characters that decode as UTF-8 per run with one that does not.
    Some GBK byte pairs form a UTF-8 character by chance, so a short GBK name can decode (学习) and be repeated
    thousands of times in call stacks: distinct runs, not occurrences, are what count. In a simulation of random
    GBK names no name reached eight; a damaged UTF-8 file with a few distinct non-ASCII names is caught, one
    with fewer is read as GB18030."""
    dec = codecs.getincrementaldecoder("utf-8")("replace")

    def parts() -> Iterator[str]:
        for chunk in _chunks(data):
            yield dec.decode(chunk)
        yield dec.decode(b"", final=True)

    runs: set[str] = set()
    carry = ""  # a run a chunk boundary cuts between two characters is one run, not two
    for part in parts():
        part = carry + part
        found = _NON_ASCII_RUN.findall(part)
        carry = found.pop() if part and part[-1] > "\x7f" else ""  # the last run, when it ends the part
        runs.update(found)
    if carry:
        runs.add(carry)
    good = bad = 0
    for run in runs:  # a damaged byte next to good characters leaves them good
        n_bad = run.count("\ufffd")
        good += len(run) - n_bad
        bad += n_bad > 0
    return good >= 8 * max(bad, 1)


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _transcode(data: bytes, encoding: str) -> bytes | None:
    """``data`` from ``encoding`` to UTF-8, chunk by chunk (no whole-file string); None where it does not decode."""
    dec = codecs.getincrementaldecoder(encoding)()
    try:
        parts = [dec.decode(c).encode("utf-8") for c in _chunks(data)]
        parts.append(dec.decode(b"", final=True).encode("utf-8"))
    except UnicodeDecodeError:
        return None
    return b"".join(parts)


#: The byte-order marks of UTF-16 text, little- and big-endian (a UTF-32 LE file starts with the first too).
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def refuse_utf16(path: str, head: bytes | memoryview, what: str) -> None:
    """A file re-saved as UTF-16 (a Windows PowerShell redirect, Notepad's 'Unicode', Excel's 'Unicode Text')
    is named as such with the conversion to run: read as UTF-8 it is only "malformed". ``what``: the rule.
    Without a byte-order mark (.NET's ``Encoding.Unicode``, Python's ``utf-16-le``) it is told by the NUL
    byte beside each of its first characters, which no UTF-8 profile holds: it read as "object keys must be
    strings (byte 1)", or as a CSV whose every column was missing."""
    if bytes(head[:2]) in _UTF16_BOMS:
        raise ProfileError(path, f"UTF-16 text (it starts with a UTF-16 byte-order mark, as a Windows PowerShell "
                                 f"redirect or a 'Unicode' save writes): {what}",
                           hint=_convert_hint(path, ""))
    order = _bomless_utf16(head)
    if order:
        raise ProfileError(path, f"UTF-16{order} text without a byte-order mark (a NUL byte beside each of its "
                                 f"first characters): {what}",
                           hint=_convert_hint(path, order))


def _convert_hint(path: str, order: str) -> str:
    """The conversion of a UTF-16 file in place, as a command to run on the file named ("iconv ... IN > OUT" was
    a template to fill in, the file's name then given again to put the result in its place); a gzip trace's text
    through gzip both ways. Gzip by the file's first bytes, as ``read_bytes`` reads it, not by its name: a UTF-16
    text saved under a .gz name (a PowerShell redirect of a download) made "gzip -dc F | iconv | gzip > F.utf8 &&
    mv F.utf8 F", whose status is the last gzip's, replace the file with an empty gzip. Each step that can fail
    ends a pipeline or stands alone, so a failure stops the command before the file is replaced."""
    q = shlex.quote(term_safe(path))
    iconv = f"iconv -f UTF-16{order} -t UTF-8"
    if not _gzip_file(path):
        return f"use the file the profiler wrote, or convert it: {iconv} {q} > {q}.utf8 && mv {q}.utf8 {q}"
    return (f"use the file the profiler wrote, or convert it: gzip -dc {q} | {iconv} > {q}.utf8 && gzip {q}.utf8 "
            f"&& mv {q}.utf8.gz {q}")


def _gzip_file(path: str) -> bool:
    """Whether the file starts with gzip's magic bytes (False where it cannot be read: the hint is plain iconv's)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _bomless_utf16(head: bytes | memoryview) -> str:
    """"LE" or "BE" when the first (up to 32) characters are ASCII written as UTF-16 without a byte-order mark,
    else "". Two characters at least: one NUL after a character is no pattern."""
    h = bytes(head[:64])
    h = h[:len(h) // 2 * 2]
    if len(h) < 4:
        return ""
    low, high = h[0::2], h[1::2]
    if not any(high) and all(low) and low.isascii():
        return "LE"
    if not any(low) and all(high) and high.isascii():
        return "BE"
    return ""


def is_ascii(data: bytes | memoryview) -> bool:
    """``data.isascii()``, by numpy's vectorised maximum of the bytes: ~0.55 of the time on a trace's megabytes
    (NPU pair 1: the check before each decode, 0.49-0.57 -> 0.36-0.37 ms both sides, in the load)."""
    return not len(data) or int(np.frombuffer(data, np.uint8).max()) < 0x80


def as_utf8(path: str, data: bytes) -> tuple[bytes, str]:
    """``data`` as UTF-8, with a warning line when it had to be re-encoded. Text that is not UTF-8 is read as the
    original reads it, in the locale's encoding, when that is not UTF-8; else as GB18030 (``CJK_ENCODING``),
    unless it is plainly UTF-8 with a damaged byte (``_mostly_utf8``: garbling its every other character would be
    worse than the error).
    What does not decode is returned as it is, for the decoder to name the bad byte. ASCII (nearly every
    profile) is told at memory speed; other text is checked in chunks, so no whole-file string is built."""
    if is_ascii(data) or _is_utf8(data) or data[:2] in _UTF16_BOMS:  # UTF-16: the decoder names it
        return data, ""
    encoding, why = _locale_encoding(), "this machine's locale, as the original reads it"
    if encoding in ("utf-8", "ascii"):
        if _mostly_utf8(data):
            return data, ""
        encoding, why = CJK_ENCODING, ("torch_npu and MindSpore write in the locale's encoding: GBK / GB18030 "
                                       "on a Chinese-locale machine")
    # a UTF-8 BOM before text in another encoding (an editor that added one, a concatenation) says nothing of that
    # text: read in the locale's encoding, it became two characters glued to the first header ("Step Id" then
    # named no column, and every row's step read as -1 without a word)
    text = _transcode(data.removeprefix(codecs.BOM_UTF8), encoding)
    if text is None:
        return data, ""
    return text, f"{path}: the text is not UTF-8; read as {encoding.upper()} ({why})"


#: Raw control characters (U+0000-U+001F) as blanks: JSON allows them in strings only as escapes.
_BLANK_CONTROLS = bytes.maketrans(bytes(range(0x20)), b" " * 0x20)
INVALID_CHAR = re.compile(r"invalid character \(byte (\d+)\)")


#: A backslash with what it escapes where JSON and the old writer agree on it: a quote, a backslash, a slash, a
#: uXXXX code (``_backslashes_doubled`` keeps those). Scanned from the left, its matches are the escapes a decoder
#: reads, as a backslash it does not match is followed by no backslash.
_KEPT_ESCAPE = re.compile(rb'\\(?:["\\/]|u[0-9a-fA-F]{4})')


def _backslashes_doubled(data: bytes) -> bytes:
    """``data`` with every backslash that starts no ``_KEPT_ESCAPE`` doubled. The text between the kept escapes (few,
    usually none) is doubled by ``bytes.replace``: a ``re.sub`` that doubled each one by itself took 26 s and 3.4 GB
    over its 12 million matches in a 316 MB trace with Windows call stacks, whose decode takes 0.5 s."""
    pieces: list[bytes] = []
    at = 0
    for m in _KEPT_ESCAPE.finditer(data):
        pieces += (data[at:m.start()].replace(b"\\", b"\\\\"), m.group())
        at = m.end()
    pieces.append(data[at:].replace(b"\\", b"\\\\"))
    return b"".join(pieces)


def decode_trace(path: str, data: bytes) -> tuple[Events, KinetoFile | None, bytes, str]:
    """``decode_events(raw_ts=True)`` (times beyond float64's ns precision kept as text, as both loaders want them),
    decoded again after a repair where the decode stopped at text that two known writers left unescaped, each repair
    at most once; other malformed JSON stays an error. Returns (events, top, the bytes decoded, a warning line or "")
    so that a later read of the raw text (exact times) reads what the events came from.

    - Raw control characters: PyTorch 2.3-2.4's ``with_stack`` wrote some Python function names unescaped
      (pytorch/pytorch#130622, #136180; later Kineto writes "unknown"), which strict JSON refuses though Python's
      ``json`` reads it with ``strict=False``. Every control byte of the text becomes a blank (a one-byte swap:
      offsets stay), so one between tokens is read as whitespace too, which changes no structure.
    - Backslashes: PyTorch 1.9-2.0 on Windows wrote the paths of call stacks, Python function names and
      ``traceName`` with their backslashes unescaped (pytorch/pytorch#60187, #92988, #104841, #98432; fixed by
      pytorch/kineto#754), and Python's ``json`` refuses them too ("Invalid \\escape"), so such traces were refused
      whole. That writer escaped nothing, so every backslash but those before a quote, a backslash, a slash or
      a ``uXXXX`` code (where it cannot be told from an escape another writer made) is read as itself:
      ``\\nn\\modules`` is a path, not a newline. A path that ends in one escapes its closing quote, and the
      trace stays refused."""
    notes: dict[str, str] = {}  # the repairs made: kind -> the warning's words
    original = data
    while True:
        try:
            events, top = decode_events(path, data, raw_ts=True)
        except ProfileError as exc:
            if exc.message.startswith(TYPE_REFUSALS):  # a value of a wrong type, its event's name shown: no repair
                raise
            fixed = _repaired(exc.message, data, notes)
            if fixed is None:
                if "backslash" in notes:  # its byte offset is one of the longer repaired text: give the file's
                    m = _ERROR_BYTE.search(exc.message)
                    if m:
                        at = _file_byte(original, int(m.group(1)))
                        raise ProfileError(exc.path, f"{exc.message[:m.start()]}(byte {at}){exc.message[m.end():]}",
                                           exc.hint) from None
                raise
            data = fixed
            continue
        return events, top, data, f"{path}: {'; '.join(notes.values())}" if notes else ""


def _error_origin(data: bytes) -> int:
    """Where the byte offsets of ``decode_events``' errors count from in ``data``: past a UTF-8 byte-order mark,
    which it skips before decoding."""
    return len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0


#: The byte offset a decode error names (msgspec's "... (byte 1556)").
_ERROR_BYTE = re.compile(r"\(byte (\d+)\)")


def _file_byte(data: bytes, at: int) -> int:
    """The offset in ``data`` of byte ``at`` of ``_backslashes_doubled(data)`` (both after a byte-order mark, as
    decode errors count): where the decode of the repaired text stopped, in the file the user has. A binary search
    whose counts of backslashes add up to about two passes over the text (0.3 s over a 316 MB trace)."""
    start = _error_origin(data)
    kept = [m.span() for m in _KEPT_ESCAPE.finditer(data, start)]  # few, usually none
    firsts = [a for a, _ in kept]
    sums = list(accumulate((data.count(b"\\", a, b) for a, b in kept), initial=0))

    def kept_before(p: int) -> int:  # the backslashes of kept escapes in data[:p], which are not doubled
        i = bisect_left(firsts, p)
        return sums[i - 1] + data.count(b"\\", kept[i - 1][0], min(kept[i - 1][1], p)) if i else 0

    lo, hi, n_lo = start, min(start + at, len(data)), 0  # n_lo: the backslashes in data[start:lo]
    while lo < hi:  # the last offset whose repaired text before it is no longer than ``at``
        mid = (lo + hi + 1) // 2
        n_mid = n_lo + data.count(b"\\", lo, mid)
        if mid - start + n_mid - kept_before(mid) <= at:
            lo, n_lo = mid, n_mid
        else:
            hi = mid - 1
    return lo - start


def _repaired(message: str, data: bytes, notes: dict[str, str]) -> bytes | None:
    """``data`` repaired for the decode error ``message`` (``decode_trace``), with its note added to ``notes``;
    None when the error is of neither kind, or that repair was made already."""
    m = INVALID_CHAR.search(message)
    at = int(m.group(1)) + _error_origin(data) if m else -1
    if 0 <= at < len(data) and data[at] < 0x20 and "control" not in notes:
        notes["control"] = ("raw control characters in the JSON text (PyTorch 2.3-2.4 writes some in Python "
                            "function names) are read as blanks")
        return data.translate(_BLANK_CONTROLS)
    if "escape" in message and "backslash" not in notes:
        fixed = _backslashes_doubled(data)
        if len(fixed) > len(data):  # each lone backslash doubled: the length grew by their count
            notes["backslash"] = (f"{len(fixed) - len(data):,} backslash(es) written unescaped (PyTorch 1.9-2.0 "
                                  "wrote Windows paths so) are read as backslashes")
            return fixed
    return None


# --------------------------------------------------------------------------- times

#: |value| in us from which ns no longer fit an int64 (9.22e18): refused instead of wrapping.
_MAX_US = 9_000_000_000_000_000


def to_ns(values: list[Any] | np.ndarray, path: str = "", field: str = "ts", out: np.ndarray | None = None
          ) -> np.ndarray:
    """Microsecond values (int, float or decimal string) -> int64 nanoseconds.

    Floats of whole-ns decimals are exact below 2**42 us (~4.4e12, ``float_inexact``); above it some
    read a ns off (0.6 % of random 3-decimal times between 4.4e12 and 8.7e12 us), which ``times_to_ns``
    reports so that the loader re-reads the text. NPU timestamps (~1.7e15 us) come as strings and are
    converted exactly. ``out``: an int64 array as long as ``values`` that float values are converted into (and
    returned), so that the caller's destination (a table's block row) is not a second array of the column.
    """
    return _to_ns(values, path, field, out)[0]


def times_to_ns(values: list[Any] | np.ndarray, path: str = "", field: str = "ts", out: np.ndarray | None = None
                ) -> tuple[np.ndarray, bool]:
    """``to_ns`` and ``float_inexact`` of its result in one go: (ns, whether some value is a float too large
    to prove exact). A float column's proof reuses the array ``to_ns`` converted, instead of converting the
    values again and scanning their types (2.3 -> 0.2 ms for 42k Python frames at ~2.2e12 us)."""
    ns, floats = _to_ns(values, path, field, out)
    if floats is None:  # an int array of ``time_values``: exact, as its list reads (no float among them)
        return ns, not isinstance(values, np.ndarray) and bool(len(values)) and float_inexact(ns, values)
    return ns, _unproven(ns, floats)


def time_values(events: list, name: str) -> list | np.ndarray:
    """The ``name`` time values of ``events`` for ``times_to_ns`` / ``to_ns``: their list, or, for a column of more
    than ``_SPAN`` numbers, the array np.array makes of that list, read span by span: where every span's array
    has one numeric dtype, it is the whole list's (each value converted alone to the dtype its types promote to),
    so the detection of ints, floats, text and absent values is ``_to_ns``' own, and a column of any other mix
    comes as its list. Why: the list (8 bytes an event) lived beside the array through the conversion, where a
    1 GB trace's 4.1M Python frames reach their load's peak."""
    get, n = attrgetter(name), len(events)
    if n <= _SPAN or type(get(events[0])) not in (float, int):  # text, raw texts, absent: the list's own path
        return list(map(get, events))
    out = None
    pulled = map(get, events)  # one pass, span by span: slicing the event list touched every event's refcount again
    for i in range(0, n, _SPAN):
        try:
            part = np.array(list(islice(pulled, _SPAN)))
        except (ValueError, OverflowError):
            return list(map(get, events))
        if part.dtype.kind not in "iuf" or (out is not None and part.dtype != out.dtype):
            return list(map(get, events))
        if out is None:
            out = np.empty(n, dtype=part.dtype)
        out[i:i + len(part)] = part
    return out


def _to_ns(values: list[Any] | np.ndarray, path: str, field: str, out: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray | None]:
    """``to_ns``, plus the float64 array of the values when they were read as floats (else None)."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), None
    if isinstance(values, np.ndarray):  # ``time_values``' array: the dtype np.array gives the values' list
        arr = values
    elif type(values[0]) is str:  # decimal text (NPU): exact digits, no detour through np.array
        return decimal_us_to_ns(values, path, field), None
    else:
        try:
            arr = np.array(values)  # numbers (Kineto): its dtype tells what they are, no type scan
        except (ValueError, OverflowError):
            arr = np.array(values, dtype=object)
    kind = arr.dtype.kind
    if kind not in "iuf" and (None in values or str in set(map(type, values))):
        # text after a number, or a ts absent / null (only ``ts`` decodes as None): the exact path,
        # which reads text as the all-text columns and names a missing time
        return decimal_us_to_ns(values, path, field), None
    # no catch-all below: the decoder gives int (int64/uint64) | float | str | None alone, each kind is range
    # checked before its cast, and ``decimal_us_to_ns`` names its own junk (a fuzz of every mix raised nothing else)
    if kind in "iu":
        if arr.max() >= _MAX_US or arr.min() <= -_MAX_US:
            row = int(np.argmax(arr) if arr.max() >= _MAX_US else np.argmin(arr))
            raise TimeValueError(path, f"invalid '{field}' value {arr[row]} in trace events: {OUT_OF_RANGE}",
                                 row=row, field=field, shown=str(arr[row]), why=OUT_OF_RANGE)
        return arr.astype(np.int64) * 1000, None
    if kind == "f":
        if not np.isfinite(arr).all():
            row = int(np.argmin(np.isfinite(arr)))
            raise TimeValueError(path, f"non-finite '{field}' value in trace events", row=row, field=field,
                                 shown=repr(float(arr[row])), why="not a finite number")
        # |us| < _MAX_US told by the extremes of the finite values: no array of their magnitudes (a 1 GB
        # trace's 4.1M Python frames: 33 MB more at its load's peak)
        if not (arr.max() < _MAX_US and arr.min() > -_MAX_US):
            row = int(np.argmax(np.abs(arr)))
            worst = float(arr[row])  # a Python float: numpy 2's repr is "np.float64(...)"
            raise TimeValueError(path, f"invalid '{field}' value {worst!r} in trace events: {OUT_OF_RANGE}",
                                 row=row, field=field, shown=repr(worst), why=OUT_OF_RANGE)
        return _float_us_to_ns(arr, out), arr
    # decimal strings (NPU), possibly mixed with numbers: exact digit parsing
    return decimal_us_to_ns([str(v) for v in values], path, field), None


def event_time_error(exc: TimeValueError, path: str, events: list, index: int, top: bool,
                     data: bytes | memoryview | None = None) -> ProfileError:
    """``exc`` (a time column's error) naming its event, ``events[index]`` (its index from 0 in the file's
    ``traceEvents`` where ``top``, else in its event list), as ``invalid_event`` names a value the decode refused:
    "invalid 'dur' value '' in trace events" left the user to search the file for it. The loaders know which events
    a column came from; an error path only, so the happy path pays no lookup. ``data``: the trace's bytes, in which
    the value is looked up to be shown as written (``_time_as_written``)."""
    event = events[index]
    where = _event_named(index, top, [f"{k} {short_repr(v)}" for k in ("ph", "name")
                                      if isinstance(v := getattr(event, k, None), str)])
    if exc.shown is None:  # absent or null alike (the decode reads both as None): "has ts null" named no text
        return ProfileError(path, f"{INVALID_EVENT}: {where} has no {exc.field} (absent or null)")
    shown = (_time_as_written(data, index, exc.field) if data is not None else None) or exc.shown
    tail = f": {exc.why}" if exc.why else ", where a number is due"
    return ProfileError(path, f"{INVALID_EVENT}: {where} has {exc.field} {shown}{tail}")


def _time_as_written(data: bytes | memoryview, index: int, field: str) -> str | None:
    """``field`` of event ``index`` as the trace writes it, a JSON number or string (None otherwise): the column's
    value is the decoded one, which read one time two ways, "has dur 1e+20" (a float's repr) and "has dur
    '100000000000000000000'" (an integer beyond int64, as text), and an integer among floats as a float
    ("1e+17"); a search of the file finds neither. A string is shown with its JSON quotes and escapes
    (``"1e20"``), as ``invalid_event`` shows a value of the wrong type (``"x", a string``), not in Python's
    (``'1e20'``). One lookup of the event (``_event_at``), as ``invalid_event``'s."""
    if data[:3] == b"\xef\xbb\xbf":  # as decode_events: a UTF-8 byte-order mark is skipped
        data = memoryview(data)[3:]
    raw = _event_at(data, first_char(data), index).get(field)
    text = bytes(raw).decode("utf-8", "replace") if raw is not None else ""
    return short_text(text) if text and text[0] in '-0123456789"' else None


def _float_us_to_ns(us: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Float microseconds -> int64 ns by ``numparse.ROUNDING`` applied to the decimal each float was read from.

    ``rint(us * 1000)`` is that rounding for every value written with at most 3 decimals (whole ns:
    proven by ``ns / 1000`` reading back as the very float), and for almost all others. But a half-ns
    tie such as ``23.7405`` is no float: its nearest float times 1000 lands just off ``23740.5`` about
    once in a hundred (``2.0085`` gives 2008.5000000000002), and ``rint`` then picks the neighbour the
    tie rule would not. So each unproven value within rounding error of a half ns ``k + 0.5`` is compared,
    as a float, with the float of that tie, ``(2k + 1) / 2000`` (one correctly rounded division): equal
    means it was read from the tie (to the even ns), above or below means its decimal lies above or
    below the tie (float rounding is monotonic). No per-value Python; exact for every decimal that a
    float tells apart from the tie (all with up to 15 significant digits).
    """
    # in place, and the round trip and the int cast by spans: a column of millions (a 1 GB trace's 4.1M Python
    # frames) held five float64 arrays of its size at once, now two, the second the caller's ``out`` where given
    ns = np.multiply(us, 1000.0, out=None if out is None else out.view(np.float64))
    np.rint(ns, out=ns)
    spans = range(0, len(ns), _SPAN)
    unproven = np.concatenate([np.flatnonzero(ns[i:i + _SPAN] / 1000.0 != us[i:i + _SPAN]) + i for i in spans]) \
        if len(ns) > _SPAN else np.flatnonzero(ns / 1000.0 != us)
    if unproven.size:
        yu = us[unproven] * 1000.0  # the very products ns was rounded from
        k = np.floor(yu)
        near = np.abs(yu - k - 0.5) <= np.minimum(np.abs(yu) * 2.0**-50 + 2.0**-40, 0.25)
        if near.any():
            i, k = unproven[near], k[near]
            x, tie, odd = us[i], (2.0 * k + 1.0) / 2000.0, (k.astype(np.int64) & 1).astype(bool)
            ns[i] = k + ((x > tie) | ((x == tie) & odd))
    out = ns.view(np.int64)  # each value cast where it lies: an element is read before it is written over
    for i in spans:
        out[i:i + _SPAN] = ns[i:i + _SPAN]
    return out


#: Elements per span of the work ``_float_us_to_ns`` does in pieces (8 MiB of float64).
_SPAN = 1 << 20


_I64_MAX = np.iinfo(np.int64).max


def check_ends(path: str, ts: np.ndarray, dur: np.ndarray, what: str = "trace event") -> None:
    """Refuse events whose end (``ts + dur`` ns) is beyond int64: each value alone passes its own range
    check, but every comparator adds them, and numpy would wrap the sum into a far-past end."""
    for at in range(0, len(ts), _SPAN):  # by spans: two int64 temporaries of a column of millions, otherwise
        over = ts[at:at + _SPAN] > _I64_MAX - np.maximum(dur[at:at + _SPAN], 0)
        if not over.any():
            continue
        i = at + int(np.argmax(over))
        raise ProfileError(path, f"a {what} ends beyond the int64 nanosecond range (start {int(ts[i])} ns "
                                 f"+ duration {int(dur[i])} ns)")


#: Below this |value| in us a float64's ulp is < 0.5 ns, so a round trip proves a float exact.
_FLOAT_PROVABLE_US = float(2**42)


def float_inexact(ns: np.ndarray, vals: list) -> bool:
    """True when some time came as a float too large for float64 to hold to the nanosecond
    (then the loader re-reads the times from the JSON text, ``exact_texts``: a trace that
    ``decode_events(raw_ts=True)`` did not keep the time texts of).

    Re-reading is a second pass over the file (about 0.4 of a decode), so large floats are first
    proven exact: below 2**42 us a float's ulp is under 0.49 ns, hence when ``ns / 1000`` rounds back to the very
    float decoded, the decimal text lies within 0.49 ns of ``ns`` and rounds to it (no tie).
    Traces recorded at up to 1 ns resolution with timestamps under ~4.4e12 us (e.g. ROCm traces
    at ~2.2e12 us) pass; epoch-us NPU times written as numbers (~1.7e15 us) do not.
    """
    if not len(vals) or not (np.abs(ns).max() > FLOAT_EXACT_US * 1000) or all_text(vals) \
            or float not in set(map(type, vals)):
        return False
    arr = np.asarray(vals)
    if arr.dtype.kind != "f":
        return True
    return _unproven(ns, arr)


class SharedTexts(dict):
    """Text -> the first equal text seen. Looked up by ``__getitem__`` over a column, a miss stores the text
    itself (``__missing__``, one Python call per distinct text): a hit is one C-level lookup, and the column can
    be an iterator (a getter map straight from the events), where ``dict.setdefault`` needs each value twice."""

    def __missing__(self, key: Any) -> Any:
        self[key] = key
        return key


def shared_texts(texts: Any, count: int | None = None, seen: SharedTexts | None = None) -> np.ndarray:
    """An object array of the ``str`` values ``texts`` with equal texts as one object: event names repeat in
    every step, and one fresh string per event, kept in the tables, held the freed events' memory (scattered among
    them) and made every later factorization chase one object per row. ``texts`` is an iterable with ``len``, or
    an iterator of ``count`` values (no list in between: ~half the time of pull, then share, on fresh strings).
    ``seen``: the lookup to fill (the caller's, to ask which distinct texts there were), else a new one."""
    if count is None:
        texts = texts if isinstance(texts, (list, np.ndarray)) else list(texts)
        count = len(texts)
    return np.fromiter(map((SharedTexts() if seen is None else seen).__getitem__, texts), dtype=object, count=count)


def all_text(vals: list) -> bool:
    """Whether every value of a non-empty list is a str (epoch times written as text, as torch_npu does; arg
    texts): one C-level join, a quarter of the time of a type scan."""
    if type(vals[0]) is not str:
        return False
    try:
        "".join(vals)
    except TypeError:
        return False
    return True


def _unproven(ns: np.ndarray, us: np.ndarray) -> bool:
    """``float_inexact`` of float64 microseconds ``us`` and their ``ns``: whether some value above
    ``FLOAT_EXACT_US`` is not proven exact by the round trip. (A float array comes from at least one float
    value: np.array makes float64 of nothing else the decoders give.)"""
    big = FLOAT_EXACT_US * 1000
    for i in range(0, len(ns), _SPAN):  # by spans: the magnitudes, picks and quotients of a column of millions
        part = ns[i:i + _SPAN]  # (the 1 GB mi300 trace's 4.1M frames, all above) held four arrays of its size
        mag = np.abs(part)
        if not (mag.max() > big):
            continue
        sel = mag > big
        x = us[i:i + _SPAN][sel]
        if not (bool((np.abs(x) < _FLOAT_PROVABLE_US).all()) and bool((part[sel] / 1000.0 == x).all())):
            return True
    return False


def other_ph_note(path: str, n: int, what: str, first: Any) -> str:
    """The warning for ``n`` events of a kind a trace writes as complete events ("X") alone whose ph is another
    (``first``: the first such ph): damaged, they are not read (the Kineto kernels and host ops, the Ascend
    device lanes)."""
    return (f"{path}: {n:,} {what} event(s) with a ph other than \"X\" (the first: {short_repr(first)}); not read, "
            "so they count in no figure")


def to_int(values: list[Any]) -> np.ndarray:
    """pid/tid/id-like values -> int64; text values (e.g. named tids) map to stable ids below -1; an absent lane
    (``ABSENT_LANE``) reads as 0."""
    try:
        return absent_lanes_as_zero(np.fromiter(values, dtype=np.int64, count=len(values)))
    except (ValueError, TypeError, OverflowError):
        return _value_ints(values)


def _value_ints(values: list[Any]) -> np.ndarray:
    """``to_int`` value by value: ``np.fromiter`` reads true as 1 and 7.5 as 7, so values of any type
    (``LaxLaneEvent``'s lanes) come here straight."""
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if type(v) is int and -(2**63) <= v < 2**63:
            out[i] = v
            continue
        if isinstance(v, str):  # a text "7" is lane 7
            try:
                out[i] = int(v)
                continue
            except (ValueError, OverflowError):
                pass
        # a name, a number beyond int64, a value of another type (``LaxLaneEvent``: true, 7.0; ``int(True)`` made
        # it lane 1): a lane of its own, as ``odd_lanes`` counts it
        out[i] = -2 - (zlib.crc32(str(v).encode()) & 0x7FFFFFFF)
    return absent_lanes_as_zero(out)


def lane_ids(events: list, name: str, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, list | None]:
    """(the ``name`` ids (pid / tid) of ``events`` as int64, each absent one read as 0; a mask of those absent
    (``ABSENT_LANE``); the values as written where some is no int (a named lane, one beyond int64: ``odd_lanes``
    counts the damaged among them), else None). The usual ints go from the getter straight into int64, one
    C-level pass with no list in between. Both trace loaders read their lanes so and count the damage for
    ``lane_notes``. ``out``: an int64 array as long as ``events`` the usual ints are read into span by span (and
    returned), so that the caller's destination (a table's block row) is not a second array of the column."""
    get, n = attrgetter(name), len(events)
    lax = bool(events) and type(events[0]) is LaxLaneEvent  # values of any type: fromiter reads true as 1
    try:
        if lax:
            raise TypeError
        if out is None:
            ids = np.fromiter(map(get, events), dtype=np.int64, count=n)
        else:
            pulled = map(get, events)  # one pass, span by span (no slice of the events: each would touch them again)
            for i in range(0, n, _SPAN):
                out[i:i + _SPAN] = np.fromiter(islice(pulled, _SPAN), dtype=np.int64, count=min(_SPAN, n - i))
            ids = out
    except (ValueError, TypeError, OverflowError):  # a new array: where ``out`` was given, its start written over
        vals = list(map(get, events))
        absent = np.fromiter((type(v) is int and v == ABSENT_LANE for v in vals), dtype=bool, count=n)
        return (_value_ints(vals) if lax else to_int(vals)), absent, vals
    absent = ids == ABSENT_LANE
    if absent.any():
        ids[absent] = 0
    return ids, absent, None


def absent_lanes_as_zero(ids: np.ndarray) -> np.ndarray:
    """``ids`` with every ``ABSENT_LANE`` (an event without that pid / tid) set to 0, in place; returned."""
    absent = ids == ABSENT_LANE
    if absent.any():
        ids[absent] = 0
    return ids


def odd_step_marks(names: Iterable[Any]) -> list[str]:
    """The ``names`` (distinct ones) that name a step marker in another case only (``profilerstep#3``,
    ``PROFILERSTEP#3``): the step scan takes ``ProfilerStep#`` as written (``model.step_marks``, the original's
    "contains" test), so such an event is no step, where a user reading the name sees one."""
    return [n for n in names if isinstance(n, str) and "profilerstep#" in n.lower() and STEP_MARK not in n]


def odd_step_mark_note(path: str, names: np.ndarray, odd: list[str], what: str, selectable: bool) -> str:
    """The warning for the ``names`` (an op column) among ``odd`` (``odd_step_marks``), "" where none is: each is
    one op holding its step's ops, a row that pairs with nothing (the H200 AlexNet trace with ``profilerstep#50``:
    operator match 0 of 112 against the trace as written), where the user reading its name sees a step."""
    rows = np.flatnonzero(np.fromiter(map(set(odd).__contains__, names.tolist()), dtype=bool, count=len(names)))
    if not rows.size:
        return ""
    step = " (--base_step / --comparison_step cannot choose it)" if selectable else ""
    return (f"{path}: {counted(rows.size, what)} named as a step marker in another case (the first: "
            f"{short_repr(names[rows[0]])}): the step scan reads \"{STEP_MARK}\" as written, as the original does, so "
            f"each is no step{step} but one op holding its step's ops (one operator row, which pairs with nothing)")


def python_step_mark_note(path: str, python: np.ndarray, marks: Iterable[Any], host: Callable[[], Iterable[Any]],
                          host_cats: str) -> str:
    """The warning for Python functions named ``ProfilerStep#N`` whose step no host op marks
    (``python_step_marks``'s arguments): steps are read from the host ops (``host_cats``), so such a marker is no
    step and the step count check of its side read none without a word; "" where there is none."""
    found = python_step_marks(python, marks, host)
    return python_step_mark_text(path, found, host_cats) if found else ""


def python_step_marks(python: np.ndarray, marks: Iterable[Any],
                      host: Callable[[], Iterable[Any]]) -> tuple[int, str, frozenset[int]] | None:
    """(how many, the first's name, their step ids) of the Python functions named ``ProfilerStep#N`` (``python``:
    the Python functions' names; ``marks``: their distinct names, or a superset) whose step no host op marks
    (``host``: gives the host ops' names, called only where a Python function is named as a marker); None where
    there is none. The step refusal says them too (``model.PYTHON_STEP_MARKS``). A trace none of whose distinct
    names is a marker costs no pass over its rows."""
    marks = {n for n in marks if isinstance(n, str) and STEP_MARK in n}
    if not marks:
        return None
    named = np.fromiter(map(marks.__contains__, python.tolist()), dtype=bool, count=len(python))
    if not named.any():
        return None
    ids = {marker_step(n) for n in set(host()) if isinstance(n, str) and STEP_MARK in n}
    lost = {n for n in marks if marker_step(n) not in ids}
    rows = np.flatnonzero(named & np.fromiter(map(lost.__contains__, python.tolist()), dtype=bool,
                                              count=len(python))) if lost else ()
    if not len(rows):
        return None
    # the steps of the Python functions found, not of every lost name: ``marks`` may hold other events' names
    return len(rows), python[rows[0]], frozenset(map(marker_step, set(python[rows])))


def python_step_mark_text(path: str, found: tuple[int, str, frozenset[int]], host_cats: str) -> str:
    """``python_step_mark_note``'s warning of what ``python_step_marks`` found."""
    return (f"{path}: {counted(found[0], 'Python functions')} named as a step marker whose step no host op marks "
            f"(the first: {short_repr(found[1])}): steps are read from the host ops ({host_cats}), so that "
            "step is none (the step count check does not count it)")


def counted(n: int, what: str) -> str:
    """``n`` of a kind of event named by its plural noun, as the loaders' warnings count them: "1 kernel",
    "2 host events", "1,024 Python functions"."""
    return f"{n:,} {what.removesuffix('s') if n == 1 else what}"


def nameless_note(path: str, counts: list[str], effect: str) -> str:
    """The one wording of the Kineto and trace_view.json loaders' warnings for events without a name (or with an
    empty one), which both read as named "": ``counts`` each kind's (``counted``), ``effect`` what that name
    does to the figures. The two loaders said the same thing in two wordings ("... (or with an empty one): read
    as named" against "...; read with the name")."""
    return f'{path}: {"; ".join(counts)} without a name (or with an empty one): read as named "", so {effect}'


def lane_notes(path: str, odd: dict[tuple[str, str], list]) -> list[str]:
    """One warning per kind of damaged lane id (the Kineto loader's ``_Events.odd_lanes``,
    the trace_view.json loader's complete events): an event without a pid or tid was read on
    lane 0 and one whose id is a number beyond int64 or the text "NaN" on a lane of its own, where each moved
    ops between threads (the op tree, Self Time) or kernels between streams without a word (kfuzz61;
    msfuzz62: an HCCL op without a tid became a task of plane 0, its CommunicationCompare row gone). A written 0
    or a negative id is no damage: Kineto writes GPU 0's events on pid 0, and CUPTI's callback threads with a tid
    wrapped below 0 (hta's nccl_parser_config, ns_resolution_trace and negative_queue_length_values_check:
    cuda_runtime calls on tids -549452224, -247463936, ...), each a lane like any other."""
    absent = [f"{counted(n, what)} without a {f}" for (what, f), (n, _, _) in odd.items() if n]
    bad = [(f"{counted(n, what)} whose {f} is not written as an integer within int64", first)
           for (what, f), (_, n, first) in odd.items() if n]
    notes = []
    if absent:
        notes.append(f"{path}: {'; '.join(absent)}: each read as 0, so they share that lane with one another and "
                     "with any event written there")
    if bad:
        first = bad[0][1]  # a value of another type as JSON writes it (true, 7.5, null), a text quoted
        shown = short_repr(first) if isinstance(first, str) else short_text(msgspec.json.encode(first).decode())
        notes.append(f"{path}: {'; '.join(w for w, _ in bad)} (the first: {shown}): each such value "
                     "is read as a lane of its own")
    return notes


def odd_lanes(values: list[Any]) -> tuple[int, Any]:
    """(how many, the first) of the pid / tid values that are no lane: a number beyond int64, a float (a whole one
    too: 1.0 is no lane 1, the warning says "not written as an integer", where "no whole number" was untrue of it),
    the text of a number that is no integer within it ("NaN", "1.5", "1.0"), empty text. ``to_int`` reads each as
    a lane of its own, where a text name ("stream 7", PyTorch 1.8's) is one. Called only where the ids are not all
    ints (the usual case)."""
    n, first = 0, None
    for v in values:
        if type(v) is int:
            if -(2**63) <= v < 2**63:
                continue
        elif isinstance(v, str):
            t = v.strip()
            if t and not (NUMBER_TEXT.fullmatch(t) or t.lower().lstrip("+-") in ("nan", "inf", "infinity")):
                continue  # a name
            try:
                if t and -(2**63) <= int(t) < 2**63:  # as ``to_int`` reads it
                    continue
            except ValueError:
                pass
        if not n:
            first = v
        n += 1
    return n, first


#: The text of a number (ASCII digits, no ``_`` separator, no ``inf``; a sign): Python's ``int()`` and
#: ``Decimal()`` also take ``"1_000"`` and non-ASCII digits, which no profiler writes.
NUMBER_TEXT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


#: The "M" event names ``meta_records`` reads.
META_KINDS = frozenset({"process_name", "process_sort_index", "thread_name", "thread_sort_index"})


def meta_records(names: list[str], pids: list[int], tids: list[int],
                 args: list) -> tuple[dict[int, list], dict[tuple[int, int], list], dict[int, int]]:
    """The process and thread records of a trace's "M" events, each loader's tables from one rule: the last
    record of a kind wins. Returns {pid: [name, sort index or -1]}, {(pid, tid): [name, sort index as
    given, None when absent]} (loaders check those differently) and, per pid, the position of its last
    process_name record (which of two same-named processes counts). ``args`` have ``name`` and
    ``sort_index``; a name that is no text reads as its ``str()``, an absent one as ""."""
    procs: dict[int, list] = {}
    threads: dict[tuple[int, int], list] = {}
    order: dict[int, int] = {}
    for k, (nm, pid, tid, a) in enumerate(zip(names, pids, tids, args, strict=True)):
        if nm == "process_name":
            order[pid] = k  # a later record of the same pid moves it later
            procs.setdefault(pid, ["", -1])[0] = "" if a.name is None else str(a.name)
        elif nm == "process_sort_index":
            procs.setdefault(pid, ["", -1])[1] = -1 if (i := whole_int(a.sort_index)) is None else i
        elif nm == "thread_name":
            threads.setdefault((pid, tid), ["", None])[0] = "" if a.name is None else str(a.name)
        elif nm == "thread_sort_index":
            threads.setdefault((pid, tid), ["", None])[1] = a.sort_index
    return procs, threads, order


def whole_int(v: Any) -> int | None:
    """``v`` as an integer when it is one within int64: an int, an integral float or the text of
    either (``7``, ``7.0``, `` "7" ``; text exactly, ``"9007199254740993.0"`` too); None for anything
    else (fractional, beyond int64, a boolean, junk, ``"1_000"``)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, str):
        v = v.strip()
        if not NUMBER_TEXT.fullmatch(v):
            return None
        try:
            v = int(v)
        except ValueError:  # a point or an exponent (or over Python's 4,300 digits)
            v = _decimal_int(v)
    if isinstance(v, float):
        if not v.is_integer():  # also inf / nan
            return None
        v = int(v)
    if isinstance(v, int) and -(2**63) <= v < 2**63:
        return v
    return None


def _decimal_int(text: str) -> int | None:
    """A number's text with a point or an exponent, exactly (a float would round past 2**53)."""
    from decimal import Decimal, InvalidOperation

    try:
        d = Decimal(text)
    except InvalidOperation:
        return None
    if d.is_zero():
        return 0
    if not 0 <= d.adjusted() <= 30 or d != d.to_integral_value():  # below 1, or far beyond int64
        return None
    return int(d)


_INT_OR_NONE = frozenset({int, type(None)})


class IntArg(NamedTuple):
    """How ``checked_ints`` reads one int arg whose misreading would change a figure or a pairing."""

    what: str  # the values, as the warning counts them: "kernel stream id" -> "3 kernel stream id(s)"
    effect: str  # what the bad values read as, for the warning
    default: int = -1  # an absent (or bad) value
    bounds: tuple[int, int, str] | None = None  # lowest, highest and how the warning says it; None: int64
    key: bool = False  # a pairing key: a bad value reads as a code of its own (``bad_key``), not as absent


def checked_ints(path: str, values: list[Any], arg: IntArg, warnings: list[str]) -> np.ndarray:
    """Int args values -> int64 by ``arg``'s rule, ``arg.default`` when absent.

    An integer within int64 reads as itself, also written as an integral float or as the text of
    either (``7.0``, ``"7"``, ``"7.0"``). Any other present value (``2**64``, ``7.5``, ``"abc"``,
    ``true``, a list), or one outside ``arg.bounds`` (``default`` must lie within), reads as absent
    (a pairing key: as ``bad_key``) and is counted in one line appended to ``warnings``, naming the
    file and the first such value: such values used to read as absent, or cut to their integer part,
    without a word. Usual columns (ints and None) pay one type scan and one C-level conversion."""
    n = len(values)
    default = arg.default
    types = set(map(type, values))
    if types <= _INT_OR_NONE:
        try:
            out = np.fromiter(values if type(None) not in types else
                              [default if v is None else v for v in values], dtype=np.int64, count=n)
        except OverflowError:  # an int beyond int64
            pass
        else:
            if arg.bounds is None or not n or (arg.bounds[0] <= out.min() and out.max() <= arg.bounds[1]):
                return out
    lo, hi, said = arg.bounds if arg.bounds is not None else (-(2**63), 2**63 - 1, "within int64")
    got = [default if v is None else whole_int(v) for v in values]
    bad = [i for i, x in enumerate(got) if x is None or not lo <= x <= hi]
    for i in bad:
        got[i] = bad_key(values[i]) if arg.key else default
    if bad:
        warnings.append(f"{path}: {len(bad):,} {arg.what}(s) are not integers {said} (the first: "
                        f"{short_repr(values[bad[0]])}); "
                        f"{arg.effect}")
    return np.fromiter(got, dtype=np.int64, count=n)


def bad_key(v: Any) -> int:
    """A pairing key that is no int64 integer as a code below -1 from its text: it pairs with the same value
    written alike (``"0x7f00"`` with ``"0x7f00"``, as the original's dict keys do), neither with an absent
    key (-1) nor with another bad one (but for a 31-bit hash collision)."""
    return -2 - (zlib.crc32(repr(v).encode()) & 0x7FFFFFFF)


#: Kernel stream ids (Kineto ``args.stream``, trace_view ``Stream Id``): a kernel that leaves (or
#: wrongly joins) a stream changes the E2E window, SDMA and compute-stream sums.
STREAM_ID = IntArg("kernel stream id", "those kernels read as on no stream")


# --------------------------------------------------------------------------- columns

_BATCH_POS = re.compile(r" - at `\$\[(\d+)\]([^`]*)`$")


def _args_problem(message: str, parts: Any) -> str:
    """msgspec's position is in the batch, not the file: name the field and show the args instead."""
    m = _BATCH_POS.search(message)
    if not m:
        return message
    text = bytes(parts[int(m.group(1))]).decode("utf-8", "replace")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if words := refusal_words(message):  # in our words, as the events' own refusals (``invalid_event``)
        got, due = words
        return f"args{m.group(2)} is {got}" + (f", where {due} is due" if due else "") + \
            f", in the event whose args are {shown}"
    return f"{message[:m.start()]} in args{m.group(2)} of the event whose args are {shown}"


#: The most bytes of args text decoded in one batch. The batch text is a fresh buffer: one batch of a large trace's
#: op args (call stacks: 73 MB of a 300 MB trace_view.json) raised the peak RSS by its size and paid its page
#: faults, where batches of this size reuse one freed block.
ARGS_BATCH_BYTES = 8 << 20


def _decode_batch(path: str, parts: Any, struct: type) -> list:
    """Decode args texts ``parts`` (none empty) as one JSON array of ``struct``."""
    # the brackets go on the first and last parts, so the args are copied once: wrapping the joined text
    # copied it again into a fresh buffer, whose page faults cost more than the join (2.7 MB of op args:
    # 3.6 -> 0.2 ms)
    ends = list(parts)
    ends[0] = b"[" + ends[0]
    ends[-1] = b"".join((ends[-1], b"]"))
    blob = b",".join(ends)
    try:
        return msgspec.json.decode(blob, type=list[struct])
    except msgspec.ValidationError as exc:
        raise ProfileError(path, f"invalid event args: {_args_problem(str(exc), parts)}") from None
    except DECODE_ERRORS as exc:
        raise ProfileError(path, f"malformed event args: {decode_text(exc)}") from None
    except RecursionError:
        raise ProfileError(path, "malformed event args: values nested too deeply") from None


def decode_args(path: str, raws: np.ndarray, struct: type, each: Callable[[list], Any] | None = None) -> list:
    """Decode the raw ``args`` of selected events into ``struct`` instances, in batches of about
    ``ARGS_BATCH_BYTES`` (one for all but large traces).

    With ``each``, every batch's instances are handed to it as decoded and not kept (returns []): a struct's
    ``msgspec.Raw`` fields hold its batch's whole text, so a caller that reads a few fields of each keeps no batch
    (a 1 GB trace's 400k op args: ~165 MiB alive at once otherwise)."""
    if len(raws) == 0:
        return []
    # join takes the Raw buffers as they are (no per-event bytes copy); absent args become {}
    parts = raws if all(map(len, raws)) else [r if len(r) else b"{}" for r in raws]
    ends = np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)) + 1)
    with gc_paused():
        if ends[-1] <= ARGS_BATCH_BYTES:
            if each is None:
                return _decode_batch(path, parts, struct)
            each(_decode_batch(path, parts, struct))
            return []
        cuts = np.unique(np.searchsorted(ends, np.arange(ARGS_BATCH_BYTES, ends[-1], ARGS_BATCH_BYTES), "right"))
        bounds = [0, *cuts[(cuts > 0) & (cuts < len(parts))].tolist(), len(parts)]
        out: list = []
        try:
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                if each is None:
                    out += _decode_batch(path, parts[a:b], struct)
                else:
                    each(_decode_batch(path, parts[a:b], struct))
        except ProfileError as exc:
            if exc.message.startswith("invalid event args: "):  # the first invalid args, named without a position
                raise
            # a syntax error's text may give its byte position in the batch: that of the whole batch is the one said
            del out
            _decode_batch(path, parts, struct)
            raise
        return out
