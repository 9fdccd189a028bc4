"""The edges of a Kineto trace's tail as rank discovery reads it (``traceio.tail_bytes``, ``TraceHeads.rank_of``):
the last 64 KiB exactly, a gzip inflated block by block to its end, and the size cap's bound, on hta's
cupti_profiler sample (its ``distributedInfo`` written after the events, within its last 100 bytes).

Each expected figure is the byte arithmetic below, done on the sample's bytes, never by the functions under test.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import ranks

REPO = Path(__file__).resolve().parent.parent
CUPTI = (REPO.parent / "shared" / "samples" / "hta" / "tests" / "data" / "cupti_profiler"
         / "benchmark_result_924719_1679055439_trace.json.gz")
KEY = b'"distributedInfo"'
TAIL = 64 * 1024  # what discovery reads of a trace's end


@pytest.fixture(scope="module")
def whole() -> bytes:
    if not CUPTI.is_file():
        pytest.skip("samples not present")
    data = gzip.decompress(CUPTI.read_bytes())
    assert len(data) == 863_626 and data.count(KEY) == 1
    assert data.endswith(b'"distributedInfo": {\n    "rank": 0\n  }\n}\n')
    return data


def _placed(whole: bytes, rank: bytes, key_at: int, size: int) -> bytes:
    """The sample with its rank written ``rank``, blanks before its ``distributedInfo`` key (JSON whitespace after
    the comma that precedes it) so the key starts at byte ``key_at``, and blanks before the closing brace so the
    file is ``size`` bytes long."""
    k = whole.index(KEY)
    body = whole[:k] + b" " * (key_at - k) + whole[k:].replace(b'"rank": 0', b'"rank": ' + rank)
    assert body.index(KEY) == key_at and body.endswith(b"}\n}\n")
    out = body[:-2] + b" " * (size - len(body)) + b"}\n"
    assert len(out) == size and out.index(KEY) == key_at
    return out


def _job(tmp_path: Path, trace: bytes, name: str) -> Path:
    job = tmp_path / "job"
    job.mkdir(exist_ok=True)
    shutil.copy(CUPTI, job / "r0.json.gz")  # rank 0, the sample itself
    (job / name).write_bytes(trace)
    return job


def test_a_rank_key_starting_on_the_last_64_kib_s_first_byte_is_read_one_byte_earlier_not(tmp_path, whole):
    """The last 64 KiB of a plain trace start at its size - 65,536: a key starting there (blanks before the closing
    brace make the file its place + 65,536 bytes) is read (rank 1); one starting a byte before the window (a byte
    more of blanks) is cut by it ('distributedInfo"': no rank)."""
    k = whole.index(KEY)
    job = _job(tmp_path, _placed(whole, b"1", k, k + TAIL), "r1.pt.trace.json")
    assert ranks.discover(str(job)) == {0: str(job / "r0.json.gz"), 1: str(job / "r1.pt.trace.json")}
    (job / "r1.pt.trace.json").write_bytes(_placed(whole, b"1", k, k + TAIL + 1))
    with pytest.raises(ProfileError, match=r"r1\.pt\.trace\.json: no rank id: no distributedInfo\.rank in its "
                                           r"first or last 64 KiB"):
        ranks.discover(str(job))


def test_a_gzip_trace_s_tail_spans_its_last_two_inflated_blocks(tmp_path, whole):
    """A gzip trace is inflated in blocks of 256 KiB (1 MiB in ``GzipFile``'s pass, where zlib's fails): one of 1 MiB
    + 100 bytes ends in a block of 100 bytes either way, and a key
    1,000 bytes before the first block's end (1,100 from the file's end, inside its last 64 KiB) is read from the
    two blocks together (rank 2)."""
    size = (1 << 20) + 100
    trace = _placed(whole, b"2", (1 << 20) - 1000, size)
    assert size - trace.index(KEY) == 1100
    job = _job(tmp_path, gzip.compress(trace), "r2.pt.trace.json.gz")
    assert ranks.discover(str(job)) == {0: str(job / "r0.json.gz"), 2: str(job / "r2.pt.trace.json.gz")}


def test_a_gzip_trace_inflating_to_exactly_the_size_cap_is_read(tmp_path, whole, monkeypatch):
    """The cap bounds the bytes a trace inflates to, as the load's: the sample's 863,626 bytes are read with a cap
    of 863,626 (rank 0 and, a copy with rank 3, rank 3); a cap one byte lower refuses the first trace past it."""
    job = _job(tmp_path, gzip.compress(whole.replace(b'"rank": 0', b'"rank": 3')), "r3.json.gz")
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "863626")
    assert ranks.discover(str(job)) == {0: str(job / "r0.json.gz"), 3: str(job / "r3.json.gz")}
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "863625")
    with pytest.raises(ProfileError, match=r"decompressed trace is over the 863625 byte limit \(its gzip trailer "
                                           r"gives 863626 bytes\)"):
        ranks.discover(str(job))


def test_the_tail_s_last_distributed_info_is_the_trace_s(tmp_path, whole):
    """The tail's ``distributedInfo`` is the key written after every event: the last one in it. An event of the
    sample's last 64 KiB whose args hold an object of that name (rank 5) is an event's, not the trace's (rank 1)."""
    last_event = whole.rindex(b'"args": {', 0, whole.index(KEY))
    assert len(whole) - last_event < TAIL
    trace = whole[:last_event + 9] + b'"distributedInfo": {"rank": 5}, ' + whole[last_event + 9:]
    job = _job(tmp_path, trace.replace(b'"rank": 0', b'"rank": 1'), "r1.pt.trace.json")
    assert ranks.discover(str(job)) == {0: str(job / "r0.json.gz"), 1: str(job / "r1.pt.trace.json")}


def test_a_trace_its_head_holds_whole_reads_no_tail(tmp_path, whole, monkeypatch):
    """A trace of 64 KiB or less is its head: where that records no rank, its tail (the same bytes) is not read
    again (a tail read of it fails the test)."""
    from msprof_compare.loaders import traceio

    read = traceio.tail_bytes

    def no_tail(path, *args, **kw):
        assert not path.endswith("r1.pt.trace.json"), "tail read"
        return read(path, *args, **kw)  # r0.json.gz: the sample's rank is in its tail

    monkeypatch.setattr(traceio, "tail_bytes", no_tail)
    job = _job(tmp_path, b'{"traceEvents": []}', "r1.pt.trace.json")
    with pytest.raises(ProfileError, match=r"r1\.pt\.trace\.json: no rank id: no distributedInfo\.rank in its "
                                           r"first or last 64 KiB"):
        ranks.discover(str(job))


def test_a_gzip_trace_of_several_members_padded_with_nuls_is_read_by_zlib_alone(tmp_path, whole, monkeypatch):
    """A gzip trace's tail is inflated by zlib's own gzip reading (``_inflated_tail``), without ``GzipFile``: members
    one after another, NUL bytes between and after them skipped, as ``GzipFile`` reads them. The sample cut in three
    members (the last of 10 bytes: the tail spans all three), 70,000 NULs after the first (past one 64 KiB read),
    5 after the last: its last 64 KiB are the sample's own, and its rank (6) is read."""
    from msprof_compare.loaders import traceio

    trace = whole.replace(b'"rank": 0', b'"rank": 6')
    cut, last = len(trace) - 40_000, len(trace) - 10
    packed = (gzip.compress(trace[:cut]) + b"\0" * 70_000 + gzip.compress(trace[cut:last], 1)
              + gzip.compress(trace[last:]) + b"\0" * 5)
    assert gzip.decompress(packed) == trace  # Python's own reading of the file
    job = _job(tmp_path, packed, "r6.json.gz")

    def no_gzipfile(*args, **kwargs):
        raise AssertionError("GzipFile read the tail")

    heads = ranks.TraceHeads()
    heads.of(str(job / "r6.json.gz"))  # the head, which GzipFile reads (its first 64 KiB alone)
    monkeypatch.setattr(traceio.gzip, "GzipFile", no_gzipfile)
    assert traceio.tail_bytes(str(job / "r6.json.gz"), TAIL) == trace[-TAIL:]
    assert ranks.input_rank(str(job / "r6.json.gz"), heads) == 6


@pytest.mark.parametrize("damage", ["crc", "length", "cut", "garbage after", "half a magic after"])
def test_a_damaged_gzip_tail_is_refused_in_the_load_s_words(tmp_path, whole, damage):
    """Where zlib's pass cannot end cleanly, ``GzipFile``'s runs, so discovery refuses a damaged gzip trace in the
    words its load would: a CRC or length in the trailer one bit off, the stream cut 3 bytes short, bytes after it
    that start no gzip member."""
    from msprof_compare.loaders import traceio

    packed = gzip.compress(whole.replace(b'"rank": 0', b'"rank": 1'))
    flip = {"crc": len(packed) - 8, "length": len(packed) - 4}
    if damage in flip:
        packed = packed[:flip[damage]] + bytes([packed[flip[damage]] ^ 1]) + packed[flip[damage] + 1:]
    else:
        packed = {"cut": packed[:-3], "garbage after": packed + b"garbage",
                  "half a magic after": packed + b"\x1f"}[damage]
    path = tmp_path / "r1.json.gz"
    path.write_bytes(packed)
    with pytest.raises(ProfileError) as loaded:
        traceio.read_bytes(str(path))
    with pytest.raises(ProfileError) as tail:
        traceio.tail_bytes(str(path), TAIL)
    assert str(tail.value) == str(loaded.value) and ": corrupt gzip data: " in str(tail.value)
