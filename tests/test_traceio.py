"""traceio helpers: the shared GC pause of the decoders; one rounding rule for times as numbers and text."""

from __future__ import annotations

import gc
import json
import os
import re
import threading
from collections.abc import Iterator
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pytest

from msprof_compare.loaders import load_profile, traceio
from msprof_compare.loaders.numparse import decimal_us_to_ns, texts_us_to_ns
from msprof_compare.loaders.traceio import IntArg, checked_ints, gc_paused, to_ns
from msprof_compare.loaders.traceio import _locale_encoding as _real_locale_encoding  # before conftest patches it
from msprof_compare.options import Options


@pytest.fixture(autouse=True)
def _gc_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def _wait(event: threading.Event) -> None:
    assert event.wait(10), "a test thread did not get there"


def _threads(*targets) -> None:
    errors: list[BaseException] = []

    def guard(fn):
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
                errors.append(exc)
        return run

    ts = [threading.Thread(target=guard(t)) for t in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    if errors:
        raise errors[0]


def test_overlapping_pauses_end_with_the_last() -> None:
    """Thread A pauses, B pauses, A leaves while B still decodes: GC stays off for B, and is on again
    once B leaves (A used to re-enable it under B, since B had found it off)."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def a() -> None:
        with gc_paused():
            a_in.set()
            _wait(b_in)
        a_out.set()

    def b() -> None:
        _wait(a_in)
        with gc_paused():
            b_in.set()
            _wait(a_out)
            seen["b after a left"] = gc.isenabled()

    _threads(a, b)
    assert seen == {"b after a left": False}
    assert gc.isenabled()


def test_many_threads_inside_at_once() -> None:
    """N threads inside the pause together; all but one leave; the last one still decodes with GC off."""
    n = 6
    inside = threading.Barrier(n)
    others_out = threading.Barrier(n)  # the n-1 leavers and the last one
    seen: list[bool] = []

    def leaver() -> None:
        with gc_paused():
            inside.wait(10)
        others_out.wait(10)

    def last() -> None:
        with gc_paused():
            inside.wait(10)
            others_out.wait(10)
            seen.append(gc.isenabled())

    _threads(*[leaver] * (n - 1), last)
    assert seen == [False] and gc.isenabled()


def test_host_choice_is_kept() -> None:
    """GC disabled by the host before the decodes stays disabled, also when decodes overlap;
    ``gc.enable()`` during a decode stays enabled; an exception still ends the pause."""
    gc.disable()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert not gc.isenabled()
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
        gc.enable()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), gc_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def _fork_and_report_gc(leave_pause: bool = False) -> bytes:
    """Fork; the child reports GC's state at once, [after leaving the caller's pause,] inside a pause of its
    own and after it; the parent returns that report."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child process
        try:
            states = [gc.isenabled()]
            if leave_pause:
                gc_paused.__exit__(None, None, None)  # the caller's ``with`` block, left in the child
                states.append(gc.isenabled())
            with gc_paused():
                states.append(gc.isenabled())
            states.append(gc.isenabled())
            os.write(w, bytes(states))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        got = f.read()
    os.waitpid(pid, 0)
    return got


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12+: fork() of a process with threads
def test_forked_child_ends_the_pause_of_the_parents_threads() -> None:
    """A process forked while another thread decodes: that thread does not exist in the child, so its
    pause ended only there: GC stayed off for the child's whole life, also after its own decodes.
    Now the child starts with GC on and its own pauses work; the parent's pause is untouched."""
    inside, leave = threading.Event(), threading.Event()
    child: list[bytes] = []

    def decode() -> None:
        with gc_paused():
            inside.set()
            _wait(leave)

    def fork() -> None:
        _wait(inside)
        child.append(_fork_and_report_gc())
        assert not gc.isenabled()  # the decode of the parent still runs
        leave.set()

    _threads(decode, fork)
    assert child == [bytes([True, False, True])]
    assert gc.isenabled()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_fork_inside_a_pause() -> None:
    """A fork made inside a pause: the child ends the pause at the fork, so its leaving the ``with``
    block must not count below zero (later pauses of the child would leave GC on)."""
    with gc_paused():
        got = _fork_and_report_gc(leave_pause=True)
    assert got == bytes([True, True, False, True])
    assert gc.isenabled()



#: Half-ns ties and their neighbours. 2.0085 and 2.0155 are ties whose nearest float times 1000 lands just
#: off the half (2008.5000000000002, 2015.4999999999998): rint took 2009 / 2015, the decimal rule 2008 / 2016.
TIES = ["23.7405", "23.7415", "0.0005", "1.0015", "-2.5005", "2.0085", "2.0155", "4.0455", "23.74050001",
        "23.7404999", "1.2695", "12345.6785", "1736408883732.2415", "0.6000312", "7", "7.25"]


def _exact(text: str) -> int:
    return int((Decimal(text) * 1000).to_integral_value(ROUND_HALF_EVEN))


def test_half_ns_ties_round_alike_as_numbers_and_text() -> None:
    """A time on a half-ns tie reads as the same ns whether written as a JSON number or as text: its
    decimal value rounded half to even (text rounded half up, numbers half-even on the float product)."""
    want = [_exact(t) for t in TIES]
    assert to_ns([float(t) for t in TIES]).tolist() == want
    assert to_ns(TIES).tolist() == want
    assert decimal_us_to_ns(TIES).tolist() == want
    assert texts_us_to_ns([t.encode() for t in TIES]).tolist() == want
    same_width = ["1736408883732241.5005", "1736408883732241.5015", "1736408883732241.5025"]
    assert decimal_us_to_ns(same_width).tolist() == [_exact(t) for t in same_width]  # the one-layout path


def test_texts_of_one_width_parse_as_bytes_do() -> None:
    """Raw texts of one width take the joined-matrix path: same ns as the per-text path, odd rows included
    (no dot, a sign, an exponent, a quoted string, ties), and junk still raises."""
    import msgspec

    from msprof_compare.loaders.numparse import NumberError, text_us_to_ns

    texts = ["5224448211566.355", "224448211566.3555", "224448211566.3565", "52244482115663.55", "-1234567890123456",
             "-224448211566.355", "5.22444821156e+12", '"22444821156.355"', "1.000000000001e12"]
    texts += [f"52244482{k:05d}.{k % 1000:03d}" for k in range(90)]
    raws = msgspec.json.decode(("[" + ",".join(texts) + "]").encode(), type=list[msgspec.Raw])
    assert len(set(map(len, raws))) == 1
    want = [text_us_to_ns(bytes(r)) for r in raws]
    assert texts_us_to_ns(raws).tolist() == want == texts_us_to_ns([bytes(r) for r in raws]).tolist()
    with pytest.raises(NumberError):
        texts_us_to_ns(msgspec.json.decode(b'[1.5, 2.5, "x.5"]', type=list[msgspec.Raw]))


def test_trace_durations_as_numbers_and_text_load_alike(tmp_path) -> None:
    """Through a loader: a trace_view.json with its times as numbers loads to the ns of the text form."""
    ev = [{"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "Ascend Hardware"}}]
    durs = [t for t in TIES if float(t) >= 0 and len(t) < 12]  # no negative or over-a-week duration (read as 0)
    ev += [{"ph": "X", "name": f"t{i}", "pid": 2, "tid": 3, "ts": str(100 * i) + ".0005", "dur": t, "args": {}}
           for i, t in enumerate(durs)]
    loaded = []
    for form in (str, float):
        f = tmp_path / f"{form.__name__}" / "trace_view.json"
        f.parent.mkdir()
        f.write_text(json.dumps([dict(e, ts=form(e["ts"]), dur=form(e["dur"])) if "dur" in e else e for e in ev]))
        loaded.append(load_profile(str(f), Options(enable_profiling_compare=True)).kernels)
    assert np.array_equal(loaded[0]["dur"], loaded[1]["dur"]) and np.array_equal(loaded[0]["ts"], loaded[1]["ts"])
    assert loaded[0]["dur"].tolist() == [_exact(t) for t in durs]
    assert loaded[0]["ts"].tolist()[:3] == [0, 100_000, 200_000]


def test_number_texts_whole_long_and_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Times written without a decimal point, with more than 40 characters (the byte-matrix parser's width:
    the exact path takes them), and columns longer than one parsing chunk (2**18 values; 4 here): each reads
    as its exact decimal value rounded half to even, by Decimal here."""
    from msprof_compare.loaders import numparse

    assert [numparse.text_us_to_ns(t) for t in (b"12", b"-7", b'"1736408883732241"')] == \
        [12_000, -7_000, 1_736_408_883_732_241_000]
    from decimal import localcontext

    long = ["1." + "0" * 50, "2.0005" + "0" * 40 + "1", "  3.25" + " " * 40]  # the second is just above a tie
    with localcontext() as c:
        c.prec = 80  # Decimal's 28 digits would round the second to the tie itself
        assert decimal_us_to_ns(long).tolist() == [_exact(t.strip()) for t in long] == [1_000, 2_001, 3_250]
    texts = TIES + ["1736408883732241.5", "5", "0.0004", "-12.5"]
    want = [_exact(t) for t in texts]
    monkeypatch.setattr(numparse, "_CHUNK", 4)
    assert decimal_us_to_ns(texts).tolist() == want
    assert texts_us_to_ns([t.encode() for t in texts]).tolist() == want


def test_time_texts_of_a_trace_with_a_byte_order_mark(tmp_path) -> None:
    """The exact re-read of the time texts (float times beyond float64's ns precision) skips a UTF-8 byte-order
    mark as the decode does, so the event indices match: a trace_view.json written with one loads alike."""
    from msprof_compare.loaders.traceio import exact_ns, exact_texts

    data = b'[{"ph": "X", "ts": 1736408883732241.5005, "dur": 0.6000312}, {"ph": "X", "ts": 1.25, "dur": 2}]'
    with_bom = exact_texts("t.json", b"\xef\xbb\xbf" + data)
    assert exact_ns("t.json", with_bom, "ts").tolist() == [_exact("1736408883732241.5005"), 1_250]
    assert exact_ns("t.json", with_bom, "dur").tolist() == [600, 2_000]
    ev = [{"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "Ascend Hardware"}},
          {"ph": "X", "name": "t0", "pid": 2, "tid": 3, "ts": 1736408883732241.5005, "dur": 0.6000312, "args": {}}]
    loaded = []
    for bom in (b"", b"\xef\xbb\xbf"):
        f = tmp_path / f"bom{len(bom)}" / "trace_view.json"
        f.parent.mkdir()
        f.write_bytes(bom + json.dumps(ev).encode())
        loaded.append(load_profile(str(f), Options(enable_profiling_compare=True)).kernels)
    assert loaded[0]["ts"].tolist() == loaded[1]["ts"].tolist() == [_exact("1736408883732241.5005")]
    assert loaded[0]["dur"].tolist() == loaded[1]["dur"].tolist() == [600]


def test_folder_with_one_corrupt_gzip_trace(tmp_path) -> None:
    """A folder whose only JSON file is a .json.gz with a broken deflate stream: its first bytes cannot be read
    to tell its kind, so it is taken as the trace, and the loader names it as corrupt (not "no trace found")."""
    import gzip

    from msprof_compare.errors import ProfileError

    f = tmp_path / "run" / "trace.json.gz"
    f.parent.mkdir()
    good = gzip.compress(b'{"traceEvents": []}' * 50, mtime=0)
    f.write_bytes(good[:10] + bytes(len(good) - 10))
    with pytest.raises(ProfileError) as exc:
        load_profile(str(f.parent), Options())
    assert exc.value.path == str(f) and exc.value.message.startswith("corrupt gzip data")


#: checked_ints: present values and what they read as. Integers within int64, also written as integral floats
#: or as text, read as themselves; anything else reads as absent (the default) and is counted
INTS = [(7, 7), (0, 0), (-1, -1), (-5, -5), (None, -9), (7.0, 7), ("8", 8), (" 9 ", 9), ("10.0", 10), (-3.0, -3),
        (2**63 - 1, 2**63 - 1), (-(2**63), -(2**63)), ("-9223372036854775808", -(2**63)),
        (7.5, -9), ("7.5", -9), (2**63, -9), (2**64, -9), (-(2**63) - 1, -9), ("9223372036854775808", -9),
        ("abc", -9), ("", -9), ("0x10", -9), (True, -9), (False, -9), (1e300, -9), (float("nan"), -9),
        (float("inf"), -9), ([1], -9), ({"a": 1}, -9)]


def test_checked_ints_reads_integers_and_counts_the_rest() -> None:
    arg = IntArg("widget id", "those widgets read as without one", default=-9)
    warnings: list[str] = []
    out = checked_ints("f.json", [v for v, _ in INTS], arg, warnings)
    assert out.dtype == np.int64 and out.tolist() == [want for _, want in INTS]
    assert warnings == ["f.json: 16 widget id(s) are not integers within int64 (the first: 7.5); "
                        "those widgets read as without one"]
    # usual columns, and each good value alone: no warning
    for values, want in [([1, 2, 3], [1, 2, 3]), ([None, 4, None], [-9, 4, -9]), ([], []),
                         *(([v], [w]) for v, w in INTS if w != -9 or v is None)]:
        got: list[str] = []
        assert checked_ints("f.json", values, arg, got).tolist() == want and got == []
    # a long first value is cut in the warning
    warnings.clear()
    checked_ints("f.json", [1, "x" * 100], arg, warnings)
    assert warnings == [f"f.json: 1 widget id(s) are not integers within int64 (the first: {repr('x' * 100)[:37]}...); "
                        "those widgets read as without one"]


def test_checked_ints_counts_a_thousand_or_more_with_separators() -> None:
    """The one line's count carries thousands separators, as every loader count of 1,000+: 1,200 junk values."""
    warnings: list[str] = []
    out = checked_ints("f.json", ["x"] * 1200, IntArg("widget id", "those widgets read as without one"), warnings)
    assert out.tolist() == [-1] * 1200
    assert warnings == ["f.json: 1,200 widget id(s) are not integers within int64 (the first: 'x'); those widgets "
                        "read as without one"]


def test_checked_ints_bounds() -> None:
    """Values outside the bounds read as the default too, in the same one line as the junk."""
    arg = IntArg("total", "left out", 0, (0, 1000, "from 0 to 1 kB"))
    warnings: list[str] = []
    out = checked_ints("f.json", [5, 1000, 0, None, -1, 1001, "x", 10.0, 2**64], arg, warnings)
    assert out.tolist() == [5, 1000, 0, 0, 0, 0, 0, 10, 0]
    assert warnings == ["f.json: 4 total(s) are not integers from 0 to 1 kB (the first: -1); left out"]
    warnings.clear()
    assert checked_ints("f.json", [5, None, 1000], arg, warnings).tolist() == [5, 0, 1000] and not warnings
    # plain integers (the usual column) out of the bounds: the same rule and line
    assert checked_ints("f.json", [5, 1001, -2], arg, warnings).tolist() == [5, 0, 0]
    assert warnings == ["f.json: 2 total(s) are not integers from 0 to 1 kB (the first: 1001); left out"]


def test_checked_ints_pairing_keys() -> None:
    """A bad pairing key is a code below -1 of its own: equal values (written alike) share it, others do not."""
    arg = IntArg("key", "each pairs only with the same value", key=True)
    warnings: list[str] = []
    out = checked_ints("f.json", ["0x7f00", 5, "0x7f00", "0x7f01", 2**64, 2**64, None, 7.5, "7.5"], arg, warnings)
    assert out[1] == 5 and out[6] == -1 and (np.delete(out, [1, 6]) < -1).all()
    assert out[0] == out[2] != out[3] and out[4] == out[5] != out[0] and out[7] != out[8]
    assert warnings == ["f.json: 7 key(s) are not integers within int64 (the first: '0x7f00'); "
                        "each pairs only with the same value"]


def test_blanks_longer_than_a_head_read_before_the_json(tmp_path) -> None:
    """A trace (Kineto or trace_view) whose JSON starts after more blanks than ``head_bytes`` reads (4 KiB) was
    refused as an "empty file"; a blank-only file still is."""
    from msprof_compare.errors import ProfileError
    from msprof_compare.loaders.traceio import first_char

    assert first_char(b"\xef\xbb\xbf" + b" \t\r\n" * 2000 + b"[{}]") == "["
    assert first_char(memoryview(b" " * 5000 + b"{")) == "{"
    assert first_char(b" \n" * 3000) == ""
    excerpt = os.path.join(os.path.dirname(__file__), "data", "kineto",
                           "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json")
    with open(excerpt, "rb") as fh:
        body = fh.read()
    padded = tmp_path / "padded.pt.trace.json"
    padded.write_bytes(b" \n" * 4000 + body)
    opts = Options()
    assert load_profile(str(padded), opts).kernels.equals(load_profile(excerpt, opts).kernels)
    blank = tmp_path / "blank.pt.trace.json"
    blank.write_bytes(b" \n" * 4000)
    with pytest.raises(ProfileError, match="empty file"):
        load_profile(str(blank), opts)


_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("control", [b"\x01", b"\n", b"\x1f"])
def test_raw_control_characters_in_names(tmp_path, control: bytes) -> None:
    """PyTorch 2.3-2.4 wrote some with_stack Python function names with raw control characters
    (pytorch/pytorch#130622, #136180), which strict JSON refuses ("invalid character"): the trace now loads,
    the character read as a blank and named in one warning. The bundled H100 bert trace with one inserted
    into its first python_function name loads every table as the clean trace does, that name aside."""
    import gzip

    with open(os.path.join(_REPO, "sample_data", "bert-small_h100.json.gz"), "rb") as f:
        clean = gzip.decompress(f.read())
    name = next(e["name"] for e in json.loads(clean)["traceEvents"] if e.get("cat") == "python_function")
    at = clean.index(b'"name": "' + name.encode() + b'"') + len(b'"name": "') + 3
    f = tmp_path / "ctrl.pt.trace.json"
    f.write_bytes(clean[:at] + control + clean[at:])
    with pytest.raises(json.JSONDecodeError):
        json.loads(f.read_bytes())  # strict JSON refuses it: a real test of the fallback
    g = tmp_path / "clean.pt.trace.json"
    g.write_bytes(clean)
    opts = Options(enable_operator_compare=True)
    got, want = load_profile(str(f), opts), load_profile(str(g), opts)
    assert got.warnings[0] == (f"{f}: raw control characters in the JSON text (PyTorch 2.3-2.4 writes some in "
                               "Python function names) are read as blanks")
    assert not any("control" in w for w in want.warnings)
    assert name[:3] + " " + name[3:] in got.python_functions["name"].tolist()
    for table in ("kernels", "ops", "flows"):
        assert getattr(got, table).equals(getattr(want, table)), table
    assert got.python_functions["ts"].tolist() == want.python_functions["ts"].tolist()


def test_control_character_outside_strings_stays_an_error(tmp_path) -> None:
    """Only a decode that stopped at a control character is retried: here the decoder stops at the missing
    value separator (a control byte after a value), so the trace is refused as before with its own message."""
    from msprof_compare.errors import ProfileError

    f = tmp_path / "bad.pt.trace.json"
    f.write_bytes(b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}\x01]}')
    with pytest.raises(ProfileError) as info:
        load_profile(str(f), Options())
    assert "malformed trace JSON" in info.value.message and "control" not in info.value.message


def _windows_paths(text: bytes) -> bytes:
    """The legacy ResNet50 excerpt as PyTorch 1.9-2.0 wrote such a trace on Windows: its "Call stack" paths with
    backslashes, written unescaped (pytorch/pytorch#60187, #92988, #104841, #98432; pytorch/kineto#617), and
    tensorboard_trace_handler's ``traceName`` (``.\\result\\...``: ``\\r`` is a JSON escape, ``\\w`` none)."""
    unix = b"/home/yangu/anaconda3/envs/kineto/lib/python3.7/site-packages/"
    assert text.count(unix) > 10
    text = text.replace(unix, b"C:\\Users\\yangu\\anaconda3\\envs\\kineto\\lib\\site-packages\\")
    text = text.replace(b"torch/nn/modules/", b"torch\\nn\\modules\\")
    return text.replace(b"{", b'{"traceName": ".\\result\\worker0.1623143089861.pt.trace.json", ', 1)


def test_unescaped_windows_paths(tmp_path) -> None:
    """A trace PyTorch 1.9-2.0 recorded on Windows holds paths whose backslashes Kineto wrote unescaped (fixed by
    pytorch/kineto#754), which strict JSON refuses ("invalid escape"): it was refused whole although its data
    are all there. Now every backslash that escapes no quote, backslash, slash or \\uXXXX is read as itself (that
    writer escaped nothing, so ``\\n`` in ``\\nn\\modules`` is a path too), named in one warning; every table is
    the one of the excerpt as written on Linux, the call stacks but for their paths."""
    legacy = os.path.join(_REPO, "tests", "data", "kineto", "legacy_resnet50_excerpt.pt.trace.json")
    with open(legacy, "rb") as fh:
        unix = fh.read()
    f = tmp_path / "worker0.1623143089861.pt.trace.json"
    f.write_bytes(_windows_paths(unix))
    with pytest.raises(json.JSONDecodeError, match="Invalid \\\\escape"):
        json.loads(f.read_bytes())  # what Python and the TensorBoard plugin said of such traces
    opts = Options(enable_operator_compare=True)
    got, want = load_profile(str(f), opts), load_profile(legacy, opts)
    n = _windows_paths(unix).count(b"\\")
    assert got.warnings[0] == (f"{f}: {n:,} backslash(es) written unescaped (PyTorch 1.9-2.0 wrote Windows paths so) "
                               "are read as backslashes")
    assert not any("backslash" in w for w in want.warnings)
    for table in ("kernels", "flows", "memory", "python_functions"):
        assert getattr(got, table).equals(getattr(want, table)), table
    stacks = got.ops["call_stack"]
    assert got.ops.drop(columns="call_stack").equals(want.ops.drop(columns="call_stack"))
    assert stacks.str.contains("C:\\Users\\yangu\\", regex=False).sum() == \
        want.ops["call_stack"].str.contains("/home/yangu/", regex=False).sum() > 0
    assert stacks.str.contains("torch\\nn\\modules\\conv.py(440): _conv_forward", regex=False).any()


def test_unescaped_backslash_in_a_trace_of_text_times(tmp_path) -> None:
    """The same repair where the times are kept as text (ts ~5.2e12 us, beyond float64's ns): the decode that keeps
    them stops at the backslash and is the one repeated, the repaired trace loads as the original does."""
    excerpt = os.path.join(_REPO, "tests", "data", "kineto", "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json")
    with open(excerpt, "rb") as fh:
        body = fh.read()
    f = tmp_path / "win.pt.trace.json"
    f.write_bytes(body.replace(b"{", b'{"traceName": "C:\\runs\\gpt.pt.trace.json", ', 1))
    got, want = load_profile(str(f), Options()), load_profile(excerpt, Options())
    assert got.warnings[0] == f"{f}: 2 backslash(es) written unescaped (PyTorch 1.9-2.0 wrote Windows paths so) " \
                              "are read as backslashes"
    for table in ("kernels", "ops", "flows"):
        assert getattr(got, table).equals(getattr(want, table)), table


def test_unescaped_backslashes_and_control_characters_together(tmp_path) -> None:
    """A writer that escaped nothing leaves both kinds in one trace: both repairs are made, each once, and named in
    the one warning line."""
    legacy = os.path.join(_REPO, "tests", "data", "kineto", "legacy_resnet50_excerpt.pt.trace.json")
    with open(legacy, "rb") as fh:
        text = _windows_paths(fh.read())
    f = tmp_path / "both.pt.trace.json"
    f.write_bytes(text.replace(b"_conv_forward", b"_conv\x01forward"))
    got = load_profile(str(f), Options(enable_operator_compare=True))
    n = text.count(b"\\")
    assert got.warnings[0] == (f"{f}: {n:,} backslash(es) written unescaped (PyTorch 1.9-2.0 wrote Windows paths so) "
                               "are read as backslashes; raw control characters in the JSON text (PyTorch 2.3-2.4 "
                               "writes some in Python function names) are read as blanks")
    assert got.ops["call_stack"].str.contains("conv.py(440): _conv forward", regex=False).any()


def test_unescaped_backslash_repair_costs_a_copy_or_two_of_the_text() -> None:
    """The repair doubled each lone backslash by a ``re.sub`` match: 11x the text's size at its peak on the Windows form
    of the real legacy excerpt (6,041 backslashes), 26 s and 3.4 GB over a 316 MB trace of it (12 million), whose
    decode takes 0.5 s. It now costs about the repaired copy (2.1x here, with kept escapes; 1 s over that trace),
    with the same bytes."""
    import tracemalloc

    legacy = os.path.join(_REPO, "tests", "data", "kineto", "legacy_resnet50_excerpt.pt.trace.json")
    with open(legacy, "rb") as fh:
        text = _windows_paths(fh.read()) + rb'"a \\ \" \/ \u00e9 \n \\\x \\\"'  # kept escapes too
    message = "malformed trace JSON: invalid escape character in string (byte 101)"
    tracemalloc.start()
    try:
        fixed = traceio._repaired(message, text, {})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fixed == re.sub(rb'(\\["\\/]|\\u[0-9a-fA-F]{4})|(\\)', rb"\1\2\2", text)  # each lone one doubled
    assert fixed.endswith(rb'"a \\ \" \/ \u00e9 \\n \\\\x \\\"')
    assert peak < 3 * len(text), peak / len(text)


def test_backslash_before_a_closing_quote_stays_an_error(tmp_path) -> None:
    """A path that ends in a backslash, written unescaped, escapes the string's closing quote: the text has no
    structure left to read, and the trace is refused with the decoder's error, as before."""
    from msprof_compare.errors import ProfileError

    f = tmp_path / "bad.pt.trace.json"
    f.write_bytes(b'{"traceName": "C:\\logs\\", "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}')
    with pytest.raises(ProfileError) as info:
        load_profile(str(f), Options())
    assert "malformed trace JSON" in info.value.message or "truncated" in info.value.message


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_an_error_after_the_backslash_repair_names_the_files_byte(tmp_path, bom: bytes) -> None:
    """The Windows form of the real legacy excerpt with a path that ends in a backslash after its 6,041 others
    (tensorboard_trace_handler's ``traceName`` of a folder, last key): the decoder stops at the next key, and the
    error named that byte of the repaired text, 6,041 bytes (one per doubled backslash) past the file's."""
    from msprof_compare.errors import ProfileError

    legacy = os.path.join(_REPO, "tests", "data", "kineto", "legacy_resnet50_excerpt.pt.trace.json")
    with open(legacy, "rb") as fh:
        text = _windows_paths(fh.read()).rstrip()
    assert text.endswith(b"]}")
    text = bom + text[:-1] + rb', "traceName": "C:\logs\", "baseTimeNanoseconds": 1}'
    f = tmp_path / "cut.pt.trace.json"
    f.write_bytes(text)
    with pytest.raises(ProfileError) as info:
        load_profile(str(f), Options())
    m = re.fullmatch(r"malformed trace JSON: expected ',' or '}' \(byte (\d+)\)", info.value.message)
    assert m, info.value.message
    assert text[len(bom) + int(m.group(1)):].startswith(b"baseTimeNanoseconds"), int(m.group(1))


def test_is_ascii_is_bytes_isascii() -> None:
    """``is_ascii`` (the check before each trace decode) says what ``bytes.isascii`` says: the torch excerpt's
    trace_view.json (tests/data/npu, ASCII) as it is, with one byte at or above 0x80 put first, in the middle and
    last (the top bit of each byte, not a multiple-of-8 word's), and the empty text."""
    from pathlib import Path

    from msprof_compare.loaders.traceio import is_ascii

    trace = (Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
             / "trace_view.json").read_bytes()
    assert trace.isascii() and is_ascii(trace) and is_ascii(memoryview(trace)[3:])
    assert is_ascii(b"") and is_ascii(b"\x7f") and not is_ascii(b"\x80")
    for at in (0, len(trace) // 2, len(trace) - 1):
        for byte in (0x80, 0xC3, 0xFF):
            damaged = trace[:at] + bytes([byte]) + trace[at + 1:]
            assert not damaged.isascii() and not is_ascii(damaged), (at, byte)


def test_as_utf8_checks_in_chunks_and_reencodes_gb18030() -> None:
    """UTF-8 is checked in 1 MiB chunks: a character split by a chunk boundary is still UTF-8 (the same bytes come
    back, no note); GB18030 text is re-encoded to the UTF-8 of the same characters, also across chunks; text that
    is neither, or mostly UTF-8 with a damaged byte, comes back unchanged for the decoder to refuse."""
    from msprof_compare.loaders.traceio import as_utf8

    ascii_ = b"[" + b" " * 100 + b"]"
    assert as_utf8("t.json", ascii_) == (ascii_, "")
    chunk = 1 << 20
    text = "a" * (chunk - 1) + "训" + "练" * 10  # 训 spans the first boundary
    data = text.encode("utf-8")
    got, note = as_utf8("t.json", data)
    assert got is data and note == ""
    for gb in (text.encode("gb18030"), ("a" * chunk + "训练").encode("gb18030")):
        got, note = as_utf8("t.json", gb)
        assert got == gb.decode("gb18030").encode("utf-8") and note.startswith(
            "t.json: the text is not UTF-8; read as GB18030")
    short = '["/home/算法/x.py"]'.encode("gbk")  # one of its two GBK pairs is a UTF-8 character by chance
    assert short.decode("utf-8", "replace").count("\ufffd") == 1
    assert as_utf8("t.json", short)[0] == '["/home/算法/x.py"]'.encode()
    # a GBK name that decodes as UTF-8 by chance, repeated in every call stack, beside one that does not:
    # distinct names count, not occurrences
    repeated = ('["/home/学习/x.py"],' * 4000 + '["模型训练"]').encode("gbk")
    assert repeated.decode("utf-8", "replace").count("\ufffd") == 4
    assert as_utf8("t.json", repeated)[0] == repeated.decode("gbk").encode()
    # an incomplete sequence at the very end is a failure too (the decoder's final flush)
    tail = ("\u0080" * 8).encode() + b"\x81\x40\xe1\x80"
    assert as_utf8("t.json", tail)[0] == tail.decode("gb18030").encode()
    bad = b'["caf\xe9"]'  # E9 then a quote: no GB18030 character either
    assert as_utf8("t.json", bad) == (bad, "")
    damaged = data + b"\xc0A"  # decodes as GB18030, but it is UTF-8 (eleven characters) with one bad byte
    assert damaged.decode("gb18030") and as_utf8("t.json", damaged) == (damaged, "")


def test_meta_records_last_record_wins() -> None:
    """Both loaders' process / thread tables come from this one rule (stated here by hand): the last record of
    a kind wins, a name that is no text reads as its str(), a process sort index that is no integer as -1,
    thread sort indexes stay as given (the loaders check them), and a process's order is its last
    process_name record's position."""
    from types import SimpleNamespace as A

    from msprof_compare.loaders.traceio import meta_records

    names = ["process_name", "thread_name", "process_sort_index", "process_name", "process_name",
             "thread_sort_index", "process_sort_index", "other", "thread_name"]
    pids = [1, 1, 1, 2, 1, 1, 2, 3, 1]
    tids = [0, 7, 0, 0, 0, 7, 0, 0, 8]
    args = [A(name="Python", sort_index=None), A(name="main", sort_index=None), A(name=None, sort_index="4"),
            A(name=5, sort_index=None), A(name="CANN", sort_index=None), A(name=None, sort_index=4.5),
            A(name=None, sort_index="x"), A(name="ignored", sort_index=1), A(name=None, sort_index=None)]
    procs, threads, order = meta_records(names, pids, tids, args)
    assert procs == {1: ["CANN", 4], 2: ["5", -1]}
    assert threads == {(1, 7): ["main", 4.5], (1, 8): ["", None]}
    assert order == {1: 4, 2: 3}


_NPU_TRACE = os.path.join(_REPO, "tests", "data", "npu", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "trace_view.json")


def test_as_utf8_text_cut_inside_its_one_character() -> None:
    """Text that is UTF-8 up to its last two bytes, which begin a character and stop there (a copy cut short), is
    not UTF-8: only the check's final flush sees it. It is then read as GB18030, as the rule says for text that
    is not UTF-8 (one damaged run without eight good characters), since the two bytes E8 AE (the start of 训 in
    UTF-8) are one GB18030 character. The first event of the NPU excerpt's trace_view.json, its name given a
    Chinese suffix (the excerpt is ASCII), cut there."""
    from msprof_compare.loaders.traceio import as_utf8

    with open(_NPU_TRACE, "rb") as fh:
        head = fh.read(4096)
    assert head.isascii() and head.startswith(b'[{"ph": "X", "name": "empty_tensor"')
    data = head.replace(b'"empty_tensor"', '"empty_tensor训练"'.encode(), 1)
    data = data[:data.index("训".encode()) + 2]
    assert data[-2:] == b"\xe8\xae" and data[:-2].isascii()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    want = data[:-2] + "\u7481".encode()  # GB18030 E8 AE is U+7481 (璁)
    assert data.decode("gb18030").encode() == want
    assert as_utf8("t.json", data) == (want, "t.json: the text is not UTF-8; read as GB18030 (torch_npu and "
                                             "MindSpore write in the locale's encoding: GBK / GB18030 on a "
                                             "Chinese-locale machine)")


def test_raw_control_character_after_a_byte_order_mark(tmp_path) -> None:
    """The decoder's error offset counts from after a UTF-8 byte-order mark, which the retry with control
    characters as blanks adds back to find the byte it stopped at: the bundled H100 bert trace, written with a
    BOM and one raw control character inside its first python_function name, loads as without the BOM."""
    import gzip

    with open(os.path.join(_REPO, "sample_data", "bert-small_h100.json.gz"), "rb") as f:
        clean = gzip.decompress(f.read())
    name = next(e["name"] for e in json.loads(clean)["traceEvents"] if e.get("cat") == "python_function")
    at = clean.index(b'"name": "' + name.encode() + b'"') + len(b'"name": "') + 3
    opts = Options(enable_operator_compare=True)
    got = {}
    for bom in (b"", b"\xef\xbb\xbf"):
        f = tmp_path / f"bom{len(bom)}.pt.trace.json"
        f.write_bytes(bom + clean[:at] + b"\x01" + clean[at:])
        p = load_profile(str(f), opts)
        assert p.warnings[0] == (f"{f}: raw control characters in the JSON text (PyTorch 2.3-2.4 writes some in "
                                 "Python function names) are read as blanks")
        got[bom] = p
    assert name[:3] + " " + name[3:] in got[b"\xef\xbb\xbf"].python_functions["name"].tolist()
    for table in ("kernels", "ops", "python_functions"):
        assert getattr(got[b""], table).equals(getattr(got[b"\xef\xbb\xbf"], table)), table


_CJK_WHY = "torch_npu and MindSpore write in the locale's encoding: GBK / GB18030 on a Chinese-locale machine"


@pytest.mark.parametrize(("preferred", "encoding", "why"), [
    ("UTF-8", "GB18030", _CJK_WHY),
    ("ANSI_X3.4-1968", "GB18030", _CJK_WHY),
    ("cp936", "GBK", "this machine's locale, as the original reads it"),
    ("no-such-codec", "GB18030", _CJK_WHY),
], ids=["utf8", "c-locale", "cp936", "unknown"])
def test_locale_encoding_names_as_the_locale_module_gives_them(monkeypatch: pytest.MonkeyPatch, preferred: str,
                                                               encoding: str, why: str) -> None:
    """The locale module names encodings as the C library does ("UTF-8", "ANSI_X3.4-1968" in the C / POSIX
    locale, "cp936" on a Chinese Windows); normalised, a UTF-8 or ASCII locale is no encoding to read other text
    in (GB18030 is tried, as on a UTF-8 host), a GBK one is, and an unknown name counts as UTF-8. The NPU
    excerpt's trace_view.json with a Chinese op name, written in GBK (the same bytes as GB18030 here)."""
    import locale

    from msprof_compare.loaders import traceio

    monkeypatch.setattr(traceio, "_locale_encoding", _real_locale_encoding)
    monkeypatch.setattr(locale, "getpreferredencoding", lambda do_setlocale=True: preferred)
    with open(_NPU_TRACE, encoding="utf-8") as fh:
        text = fh.read()
    assert text.isascii() and text.count('"aten::mm"') == 4
    data = text.replace('"aten::mm"', '"aten::mm训练"').encode("gbk")
    assert data.decode("gbk") == data.decode("gb18030")
    got, note = traceio.as_utf8("t.json", data)
    assert got == text.replace('"aten::mm"', '"aten::mm训练"').encode("utf-8")
    assert note == f"t.json: the text is not UTF-8; read as {encoding} ({why})"


@pytest.mark.parametrize("shift", [-4, -3, -2, -1, 0])
def test_a_chunk_boundary_between_two_characters_keeps_their_run_whole(shift: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """GBK text whose non-ASCII runs hold 7 characters that decode as UTF-8 by chance (学习 2, 状态 2, 准 1, 模型训练
    2 with a damaged byte: by hand from the GBK bytes, as in test_ascend_text_loader's GBK test) is GB18030 at
    every place of the 1 MiB chunk boundary: a boundary between 学 and 习 counted two runs and three characters
    more, and the text was taken for damaged UTF-8 (shifts -3 and -2). The decision is that of one whole chunk."""
    chunk = traceio._TEXT_CHUNK
    tail = '["学习", "状态", "准", "模型训练"]'.encode("gbk")
    data = b'["' + b"a" * (chunk + shift - 2) + "学习".encode("gbk") + b'", ' + tail[1:]
    text, note = traceio.as_utf8("t.json", data)
    assert text == data.decode("gb18030").encode("utf-8") and note.startswith("t.json: the text is not UTF-8; read as")
    monkeypatch.setattr(traceio, "_TEXT_CHUNK", 1 << 30)
    assert traceio.as_utf8("t.json", data) == (text, note)


def test_malformed_trace_names_the_fault_once(tmp_path):
    """The NPU excerpt's trace_view.json with its first "ph" value's opening quote replaced by x
    (``[{"ph": x...``): the fault is at byte 8 (``[`` 0, ``{`` 1, ``"ph"`` 2-5, ``:`` 6, space 7). The error said
    "malformed trace JSON: JSON is malformed: ...", msgspec's lead repeating ours."""
    from pathlib import Path

    from msprof_compare.errors import ProfileError

    src = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    data = src.read_bytes()
    assert data.startswith(b'[{"ph": "X"')
    bad = tmp_path / "trace_view.json"
    bad.write_bytes(data[:8] + b"x" + data[9:])
    with pytest.raises(ProfileError) as info:
        load_profile(str(bad), Options(enable_profiling_compare=True))
    assert info.value.message == "malformed trace JSON: invalid character (byte 8)"


def test_a_lone_dot_is_no_number(tmp_path, capsys) -> None:
    """A time of "." (no digit) read as 0 us, alone or beside real times: the one-layout parser took a text of
    its dot column alone for a number (a kernel at ts 0 made the E2E 1.7e12 ms). It is "not a number", as "-" is,
    in the parser (checked against ``Decimal``, which refuses it too) and through the CLI (exit 1, one line, no
    output): the bundled bert trace with its first kernel's ts set to "." (found by fuzzing, session 57)."""
    import gzip
    from decimal import InvalidOperation
    from pathlib import Path

    from cliutil import error_lines, run_inproc

    from msprof_compare.errors import ProfileError
    from msprof_compare.loaders import numparse
    from msprof_compare.textsafe import short_repr

    with pytest.raises(InvalidOperation):
        Decimal(".")
    for texts in (["."], [".", "."], ["12.5", "."]):
        with pytest.raises(ProfileError, match=re.escape("invalid 'ts' value '.' in trace events: not a number")):
            decimal_us_to_ns(texts)
    val, ok = numparse.lenient_us_to_ns([".", "12.5", "1.", ".5"])
    assert ok.tolist() == [False, True, True, True] and val.tolist() == [0, 12_500, 1_000, 500]
    repo = Path(__file__).resolve().parent.parent
    doc = json.loads(gzip.decompress((repo / "sample_data" / "bert-small_h100.json.gz").read_bytes()))
    at = next(i for i, e in enumerate(doc["traceEvents"]) if e.get("cat") == "kernel")
    doc["traceEvents"][at]["ts"] = "."
    trace = tmp_path / "dot.pt.trace.json"
    trace.write_text(json.dumps(doc))
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-d", str(trace), "-bp", str(repo / "sample_data" / "bert-small_mi300.json.gz"),
                              "-o", str(out))
    name = short_repr(doc["traceEvents"][at]["name"])  # the event named, as a refused decode names it
    assert code == 1 and error_lines(err) == [f"error: {trace}: invalid trace event: event {at} of traceEvents "
                                              f"(counting from 0; ph 'X', name {name}) has ts \".\": not a number "
                                              f"(comparison side)"]
    assert not out.exists()


@pytest.mark.parametrize(("text", "why"), [("1_000", "not a number"), ("\u0661\u0662\u0663", "not a number"),
                                         ("\uff11\uff12", "not a number"), ("inf", "not finite"),
                                         ("nan", "not finite")])
def test_a_time_text_python_alone_reads_is_no_number(text: str, why: str) -> None:
    """A trace time given as text went to ``Decimal``, which reads "1_000" as 1000 and Arabic-Indic or fullwidth
    digits as theirs: a ts of "1_000" was 1 ms, where the CSVs' times (``_NUMBER_TEXT``) count it as no number.
    No profiler writes them; they are "not a number" here too, and a value that is not finite is quoted as the file
    has it ("inf", not Decimal's "Infinity") (fuzzing, session 57; expected values by hand)."""
    from msprof_compare.errors import ProfileError

    with pytest.raises(ProfileError) as info:
        decimal_us_to_ns(["12.5", text])
    assert info.value.message == f"invalid 'ts' value {text!r} in trace events: {why}"
    assert decimal_us_to_ns(["12.5", " 1e3 ", "+7"]).tolist() == [12_500, 1_000_000, 7_000]  # still numbers


def test_a_trace_shipped_in_an_archive_is_named_as_such(tmp_path, capsys) -> None:
    """A zip, a bzip2 file or a .tar.gz renamed to the trace's suffix (or a trace gzip-compressed twice) read as
    "not a JSON trace (expected an object with traceEvents ...)", which does not say what to do; the error line
    now names what the file is and says to unpack it (exit 1, one line, no output written). The bundled bert
    trace is the payload."""
    import bz2
    import gzip
    import io
    import lzma
    import sqlite3
    import tarfile
    import zipfile
    from pathlib import Path

    from cliutil import error_lines, run_inproc

    repo = Path(__file__).resolve().parent.parent
    trace = gzip.decompress((repo / "sample_data" / "bert-small_h100.json.gz").read_bytes())
    other = str(repo / "sample_data" / "bert-small_mi300.json.gz")
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("trace.json", trace[:100_000])
    tarred = io.BytesIO()
    with tarfile.open(fileobj=tarred, mode="w:gz") as t:
        info = tarfile.TarInfo("trace.json")
        info.size = 100_000
        t.addfile(info, io.BytesIO(trace[:100_000]))
    db = tmp_path / "x.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE t (a)")
    con.close()
    files = {"z.pt.trace.json.gz": (zipped.getvalue(), "a zip archive"),
             "t.json.gz": (tarred.getvalue(), "a tar archive"),
             "b.json": (bz2.compress(trace[:1000]), "bzip2-compressed"),
             "x.json": (lzma.compress(trace[:1000]), "xz-compressed"),
             "s.json": (db.read_bytes(), "an SQLite database"),
             # gzip run on a .json.gz (fuzzing, session 57): read once inflated, it was "not a JSON trace"
             "g.pt.trace.json.gz": (gzip.compress(gzip.compress(trace[:1000])), "gzip-compressed twice")}
    out = tmp_path / "out"
    for name, (data, kind) in files.items():
        f = tmp_path / name
        f.write_bytes(data)
        code, _, err = run_inproc(capsys, "-d", str(f), "-bp", other, "-o", str(out))
        hint = ("a profiler database is read under its own name, ascend_pytorch_profiler_*.db, "
                "ascend_mindspore_profiler_*.db or msmonitor_*.db, or from its profiling directory"
                if kind == "an SQLite database"
                else "unpack it and pass the trace it holds, or its profiling directory")
        assert code == 1 and error_lines(err) == [f"error: {f}: not a JSON trace: the file is {kind} (comparison "
                                                  f"side: {hint})"], err
        assert not out.exists()
    assert traceio.archive_kind(trace) == "" and traceio.archive_kind(b"") == ""


def test_a_file_that_stands_in_for_a_trace_is_named_with_what_to_do(tmp_path) -> None:
    """A Git LFS pointer (a clone without git-lfs) and a web page (a download of the page that links the file)
    under a trace's name, and a .json.gz that is no gzip at all, read as "not a JSON trace (expected an object
    with traceEvents or an event list)": no word of what the file is or what to do. The line now names the
    pointer and the page, with what to do, and quotes an unknown text's first line, saying where a .gz name
    holds no gzip data; binary data is quoted nowhere. Run through ``python -m msprof_compare`` (exit 1, one
    error line, nothing written); the bundled MI300 trace is the other side. The pointer's lines are the
    git-lfs specification's (spec/v1): its version line, an oid and a size."""
    import gzip
    import os
    import subprocess
    import sys
    from pathlib import Path

    from cliutil import error_lines

    repo = Path(__file__).resolve().parent.parent
    other = str(repo / "sample_data" / "bert-small_mi300.json.gz")
    pointer = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 71459\n")
    lfs = ("not a JSON trace: the file is a Git LFS pointer, not the file it stands for (comparison side: fetch the "
           "file itself: git lfs pull, in the repository it came from)")
    page = ("not a JSON trace: the file is a web page (HTML), saved under the file's name (comparison side: download "
            "the file itself, not the page that links it)")
    unknown = "not a JSON trace (expected an object with traceEvents or an event list) (comparison side"
    files = {"lfs.pt.trace.json.gz": (pointer, lfs),
             "rank0.pt.trace.json": (pointer, lfs),
             "page.json.gz": (b"\n  <!DOCTYPE html>\n<html lang=\"en\"><body>Sign in</body></html>\n", page),
             "page.json": (b"<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD></HTML>", page),
             "notgz.json.gz": (b"not gzip\r\nat all",
                               f"{unknown}: its name ends in .gz, but the file is not gzip-compressed: it begins "
                               "'not gzip')"),
             # gzip data: the .gz name is right, the text inside is no trace
             "gz.json.gz": (gzip.compress(b"Name,Duration(us)\nMatMul,1.5\n"),
                            f"{unknown}: it begins 'Name,Duration(us)')"),
             "binary.json": (b"\x00\x01\x02\x03junk", f"{unknown})"),
             # a failed job's log under the trace's name: its first line whole (under 40 characters quoted)
             "log.pt.trace.json": (b"Traceback (most recent call last):\n  File \"train.py\", line 3\n",
                                   f"{unknown}: it begins 'Traceback (most recent call last):')")}
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(repo)}
    for name, (data, said) in files.items():
        f = tmp_path / name
        f.write_bytes(data)
        proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-d", str(f), "-bp", other,
                               "-o", str(out)], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 1 and error_lines(proc.stderr) == [f"error: {f}: {said}"], proc.stderr
        assert not out.exists() and proc.stdout == ""
    assert traceio.stand_in_kind(gzip.decompress((repo / "sample_data" / "bert-small_h100.json.gz").read_bytes())) \
        is None


def test_python_step_marks_asks_the_host_ops_only_where_a_python_function_is_a_marker() -> None:
    """``marks`` may be a superset (every distinct name of the trace): where no Python function bears a marker
    name, the host ops' names are not gathered (a pass over every host op); where one does, its step is lost
    unless a host op marks it (by hand)."""
    def no_host() -> list:
        raise AssertionError("host ops read")

    python = np.array(["forward", "ProfilerStep#3", "backward"], dtype=object)
    assert traceio.python_step_marks(python[[0, 2]], ["ProfilerStep#3", "forward"], no_host) is None
    assert traceio.python_step_marks(python, ["ProfilerStep#3"], lambda: ["ProfilerStep#3"]) is None
    assert traceio.python_step_marks(python, ["ProfilerStep#3"], lambda: ["ProfilerStep#4", 7]) == \
        (1, "ProfilerStep#3", frozenset({3}))
