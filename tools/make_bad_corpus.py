#!/usr/bin/env python3
"""Generate the malformed-input corpus under tests/data/bad/.

Why: every loader must turn bad data into one clear ``error:`` line (exit 1)
and must load odd-but-valid data (exit 0). This script derives >= 200 small
cases, deterministically, from a few real excerpts kept in
``tests/data/bad/_src`` (cut from ../shared/samples; see the README there).

Layout: ``tests/data/bad/<family>/<case>/`` holds the input (a file, a
directory or a symbolic link, named in ``expect.json``) and ``expect.json``::

    {"input": "input.json",          # relative to the case directory
     "exit": 1,                       # 0 = loads (odd but valid), 1 = data error
     "file": "input.json",           # for exit 1: path (relative to the case) the error line must name
     "partner": "kineto.json",       # good input (in _src) compared against it
     "args": [],                      # extra CLI flags (e.g. --force)
     "env": {},                       # env overrides (the size caps)
     "warning": "",                   # for exit 0: substring a warning line must contain (optional)
     "why": "..."}

Usage::

    python tools/make_bad_corpus.py             # regenerate the cases from _src
    python tools/make_bad_corpus.py --refresh-src  # re-cut _src from ../shared/samples first
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"
SRC = BAD / "_src"
SAMPLES = ROOT.parent / "shared" / "samples"

KINETO = "kineto.json"
TRACE = "trace_view.json"
NPU_DIR = "npu_ascend_pt"
DB = "ascend_pytorch_profiler_0.db"
OUT = "ASCEND_PROFILER_OUTPUT"
#: CSV columns the text loader can do without (the core type only refines the kernel breakdown).
OPTIONAL_COLUMNS = ("Accelerator Core",)

# --------------------------------------------------------------------------- _src excerpts

_NPU_SRC = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
_DB_SRC = "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
_KINETO_SRC = "hta/tests/data/trace_compare/base/base.json.gz"
_WINDOW = (1736408883732100.0, 1736408883732400.0)  # us; a slice with kernels, HCCL and overlap events

_SRC_README = """# Source excerpts of the bad-input corpus

Cut by `tools/make_bad_corpus.py --refresh-src` from `../shared/samples` (see its PROVENANCE.md):

* `kineto.json`: `hta/tests/data/trace_compare/base/base.json.gz` (facebookresearch/HolisticTraceAnalysis
  @ f4d0062c, MIT), decompressed, unchanged otherwise.
* `npu_ascend_pt/`: `msinsight/test/data/pytorch/text/level1/rank0_ascend_pt` (Ascend/msinsight @ 4e16fca1,
  Mulan PSL v2): trace_view.json cut to the events of the window [1736408883732100, 1736408883732400] us plus all
  metadata events (flows kept only when both ends are kept; counters dropped); kernel_details.csv,
  operator_memory.csv and memory_record.csv cut to rows in the same window; op_statistic.csv, communication.json,
  profiler_info_0.json and profiler_metadata.json unchanged.
* `trace_view.json`: the cut trace_view.json above.
* `ascend_pytorch_profiler_0.db`: `msinsight/test/data/pytorch/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/
  ascend_pytorch_profiler_0.db` (Ascend/msinsight @ 4e16fca1, Mulan PSL v2) with the tables no comparison reads
  (ACC_PMU, HBM, LLC, SOC_BANDWIDTH_LEVEL, NPU_MODULE_MEM, NPU_MEM, AICORE_FREQ, PYTORCH_CALLCHAINS) dropped and
  the python-function rows of PYTORCH_API (type 'trace') deleted, VACUUMed with 1 KiB pages.
"""


def _in_window(ts: Any) -> bool:
    try:
        v = float(ts)
    except (TypeError, ValueError):
        return False
    return _WINDOW[0] <= v <= _WINDOW[1]


def _cut_csv(src: Path, dst: Path, col: str) -> None:
    text = src.read_text(encoding="utf-8-sig")
    lines = text.splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    idx = header.index(col)
    keep = [lines[0]]
    for line in lines[1:]:
        row = next(csv.reader([line]), [])
        if len(row) > idx and _in_window(row[idx].strip()):
            keep.append(line)
    dst.write_text("".join(keep), encoding="utf-8")


def refresh_src() -> None:
    """Re-cut the excerpts in _src from ../shared/samples."""
    if SRC.exists():
        shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    (SRC / "README.md").write_text(_SRC_README)
    (SRC / KINETO).write_bytes(gzip.decompress((SAMPLES / _KINETO_SRC).read_bytes()))

    npu = SAMPLES / _NPU_SRC
    out = SRC / NPU_DIR / OUT
    out.mkdir(parents=True)
    events = json.loads((npu / OUT / TRACE).read_text())
    kept = [e for e in events
            if e.get("ph") == "M" or (e.get("ph") in ("X", "s", "f", "i") and _in_window(e.get("ts")))]
    ends: dict[Any, set] = {}
    for e in kept:
        if e.get("ph") in ("s", "f"):
            ends.setdefault((e.get("cat"), e.get("id")), set()).add(e["ph"])
    kept = [e for e in kept if e.get("ph") not in ("s", "f") or ends[(e.get("cat"), e.get("id"))] == {"s", "f"}]
    live = {e.get("pid") for e in kept if e.get("ph") != "M"}
    kept = [e for e in kept if e.get("ph") != "M" or e.get("pid") in live]
    (out / TRACE).write_text(json.dumps(kept))
    shutil.copyfile(out / TRACE, SRC / TRACE)
    _cut_csv(npu / OUT / "kernel_details.csv", out / "kernel_details.csv", "Start Time(us)")
    _cut_csv(npu / OUT / "operator_memory.csv", out / "operator_memory.csv", "Allocation Time(us)")
    _cut_csv(npu / OUT / "memory_record.csv", out / "memory_record.csv", "Timestamp(us)")
    for name in ("op_statistic.csv", "communication.json"):
        shutil.copyfile(npu / OUT / name, out / name)
    for name in ("profiler_info_0.json", "profiler_metadata.json"):
        shutil.copyfile(npu / name, SRC / NPU_DIR / name)

    db = SRC / DB
    shutil.copyfile(SAMPLES / _DB_SRC, db)
    os.chmod(db, 0o644)
    con = sqlite3.connect(db)
    for t in ("ACC_PMU", "HBM", "LLC", "SOC_BANDWIDTH_LEVEL", "NPU_MODULE_MEM", "NPU_MEM", "AICORE_FREQ",
              "PYTORCH_CALLCHAINS"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    con.execute("DELETE FROM PYTORCH_API WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'trace')")
    con.commit()
    con.execute("PRAGMA page_size=1024")
    con.execute("VACUUM")
    con.close()
    for p in SRC.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)


# --------------------------------------------------------------------------- case writer


class Corpus:
    def __init__(self) -> None:
        self.count = 0
        self.names: set[str] = set()

    def case(self, family: str, name: str, *, exit: int, why: str, input: str, file: str | None = None,
             partner: str = KINETO, args: list[str] | None = None, env: dict[str, str] | None = None,
             warning: str = "", base: str = "", delete: list[str] | None = None,
             links: dict[str, str] | None = None) -> Path:
        key = f"{family}/{name}"
        assert key not in self.names, key
        self.names.add(key)
        d = BAD / family / name
        d.mkdir(parents=True)
        expect = {"input": input, "exit": exit, "file": file if file is not None else (input if exit else ""),
                  "partner": partner, "args": args or [], "env": env or {}, "warning": warning, "why": why}
        if base:
            expect["base"] = base
        if delete:
            expect["delete"] = delete
        if links:
            expect["links"] = links
        (d / "expect.json").write_text(json.dumps(expect, indent=1) + "\n")
        self.count += 1
        return d

    def file(self, family: str, name: str, data: bytes | str, *, fname: str = "input.json", **kw: Any) -> Path:
        d = self.case(family, name, input=fname, **kw)
        (d / fname).write_bytes(data.encode() if isinstance(data, str) else data)
        return d

    def tree(self, family: str, name: str, base: Path, *, edits: dict[str, bytes | str | None],
             root: str = "input", **kw: Any) -> Path:
        """A good directory (copied at test time from ``base``) with some files replaced (bytes/str) or
        removed (None). Only the replaced files are stored in the case, to keep the corpus small."""
        delete = [rel for rel, data in edits.items() if data is None]
        d = self.case(family, name, input=root, base=base.relative_to(BAD).as_posix(), delete=delete, **kw)
        (d / root).mkdir(parents=True)
        for rel, data in edits.items():
            if data is not None:
                p = d / root / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data.encode() if isinstance(data, str) else data)
        return d


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


# --------------------------------------------------------------------------- families


def _trace_like(c: Corpus, family: str, good: bytes, wrap, partner: str) -> None:
    """Cases shared by the two trace JSON families. ``wrap(events)`` builds the file from an event list."""
    events = json.loads(good)
    if isinstance(events, dict):
        events = events["traceEvents"]
    n = len(good)

    def err(name: str, data: bytes | str, why: str) -> None:
        c.file(family, name, data, exit=1, why=why, partner=partner)

    def ok(name: str, data: bytes | str, why: str, warning: str = "") -> None:
        c.file(family, name, data, exit=0, why=why, partner=partner, warning=warning)

    # truncation at several byte offsets
    for off in (1, 2, 7, 16, 64, 200, n // 4, n // 3, n // 2, (2 * n) // 3, (3 * n) // 4, n - 40, n - 3, n - 2, n - 1):
        err(f"truncated_at_{off}", good[:off], f"file cut after {off} of {n} bytes")
    err("empty", b"", "0-byte file")
    err("whitespace_only", b"  \n\t\r\n", "only blanks")
    err("null_bytes", b"\0" * 512, "NUL bytes")
    err("binary_garbage", bytes((i * 97 + 13) % 256 for i in range(4096)), "binary garbage named .json")
    err("png_named_json", b"\x89PNG\r\n\x1a\n" + bytes(200), "an image named .json")
    err("invalid_utf8_in_name", good.replace(b'"name":', b'"name":"\xff\xfe bad"  ,"x":', 1),
        "invalid UTF-8 bytes inside a string")
    overlong = good.replace(b'"name":', b'"name":"\xc0\xaf",  "y":', 1)
    if family == "kineto":  # Kineto writes UTF-8 whatever the locale
        err("invalid_utf8_overlong", overlong, "overlong UTF-8 sequence")
    else:  # torch_npu writes in the locale's encoding: C0 AF is a GB18030 character
        ok("invalid_utf8_overlong", overlong, "overlong UTF-8 sequence, which is GB18030 text: read as that",
           warning="read as GB18030")
        ok("gb18030_name", good.replace(b'"name":"', '"name":"训练 '.encode("gb18030"), 1),
           "a name written in a Chinese locale's encoding (torch_npu writes with the locale's encoding)",
           warning="read as GB18030")
    err("utf16_encoded", good.decode().encode("utf-16"), "UTF-16 text instead of UTF-8")
    err("latin1_bytes", good.replace(b'"name":"', b'"name":"caf\xe9 ', 1), "Latin-1 byte in an event name")
    err("top_number", b"42", "top level is a number")
    err("top_string", b'"traceEvents"', "top level is a string")
    err("top_true", b"true", "top level is a boolean")
    err("top_null", b"null", "top level is null")
    err("two_documents", good + b"\n" + good, "two JSON documents concatenated")
    err("trailing_garbage", good + b"xyz", "garbage after the JSON")
    err("nan_ts", _replace_first_ts(wrap(events), b"NaN"), "NaN literal (not JSON)")
    err("infinity_dur", _replace_first(wrap(events), b'"dur":', b"Infinity"), "Infinity literal (not JSON)")
    err("ts_null", _replace_first_ts(wrap(events), b"null"), "ts is null")
    err("ts_object", _replace_first_ts(wrap(events), b'{"v":1}'), "ts is an object")
    err("ts_list", _replace_first_ts(wrap(events), b"[1,2]"), "ts is a list")
    err("ts_bool", _replace_first_ts(wrap(events), b"true"), "ts is a boolean")
    err("ts_text", _replace_first_ts(wrap(events), b'"abc"'), "ts is a non-numeric string")
    err("ts_huge_float", _replace_first_ts(wrap(events), b"1e300"), "ts far beyond int64 nanoseconds")
    err("ts_huge_int", _replace_first_ts(wrap(events), str(2**70).encode()), "ts integer beyond int64")
    err("ts_missing", wrap(_without_first_ts(events)), "a complete event without ts (once read as 0)")
    err("ts_empty_string", _set_field(wrap, events, "ts", ""), "ts is an empty string (once read as 0)")
    err("ts_null_string", _set_field(wrap, events, "ts", "null"), "ts is the text null (once read as 0)")
    end_over = [dict(e) for e in events]
    for e in end_over:
        if e.get("ph") == "X":  # each value alone is in range (the duration 1 s); their sum in ns is not
            e.update(ts=9_223_372_036_854_000, dur=1_000_000)
            break
    err("end_over_int64", wrap(end_over), "ts + dur beyond int64 nanoseconds (numpy wrapped the end)")
    err("dur_text", _replace_first(wrap(events), b'"dur":', b'"12us"'), "dur is a non-numeric string")
    err("dur_huge", _replace_first(wrap(events), b'"dur":', b"1e200"), "dur far beyond int64 nanoseconds")
    err("events_not_objects", wrap([1, 2, 3]), "events are numbers")
    err("events_strings", wrap(["a", "b"]), "events are strings")
    err("events_nulls", wrap([None, None]), "events are null")
    err("events_nested_lists", wrap([[events[0]]]), "events are lists")
    err("name_number", _replace_first(wrap(events), b'"name":', b"123"), "name is a number")
    err("ph_number", _set_field(wrap, events, "ph", 5), "ph is a number")
    err("deep_nesting", wrap(events[:2]).replace(b"}", b',"deep":' + b"[" * 5000 + b"]" * 5000 + b"}", 1),
        "5000 nested arrays in an event")
    err("no_events", wrap([]), "no events at all")
    err("metadata_only", wrap([e for e in events if e.get("ph") == "M"]), "only metadata events, no durations")

    ok("valid_copy", good, "the good file itself")
    ok("negative_dur", _set_dur(wrap, events, -5), "one complete event with a negative duration",
       warning="negative")
    ok("zero_dur", _set_dur(wrap, events, 0), "one complete event with zero duration")
    ok("dur_over_a_week", _set_dur(wrap, events, 8 * 86_400 * 10**6), "one complete event lasting 8 days: a damaged "
       "time, read as 0 (once it made E2E 8 days)", warning="last over a week")
    ok("unknown_category", _set_field(wrap, events, "cat", "no_such_category"), "unknown event category")
    ok("unknown_phase", wrap(events + [{"ph": "Z", "name": "odd", "pid": 1, "tid": 1, "ts": _first_ts(events)}]),
       "an event with an unknown phase")
    ok("extra_fields", wrap([dict(e, extra_field={"nested": [1, 2, 3]}) for e in events]), "unknown keys everywhere")
    ok("duplicate_keys", good.replace(b'"ph":', b'"zz":1,"zz":2,"ph":', 1), "duplicate keys in an event")
    no_args = wrap([{k: v for k, v in e.items() if k != "args"} if e.get("ph") == "X" else e for e in events])
    if family == "kineto":  # kernels without args.stream: their lane (tid) is the stream (ROCm PyTorch ~1.13-2.3)
        ok("args_missing", no_args, "complete events without args: each device event's lane (tid) is its stream")
    else:
        ok("args_missing", no_args, "complete events without args")
    empty_args = wrap([dict(e, args={}) if e.get("ph") == "X" else e for e in events])
    ok("args_empty", empty_args, "empty args" + (": the device lanes are the streams" if family == "kineto" else ""))
    if family == "kineto":  # no stream arg and named device lanes: no compute stream (reference-1 §4.2)
        device = ("kernel", "gpu_memcpy", "gpu_memset")
        named = wrap([dict(e, args={}, tid=f"stream {e.get('tid')}") if str(e.get("cat", "")).lower() in device
                      else dict(e, args={}) if e.get("ph") == "X" else e for e in events])
        c.file(family, "args_empty_named_lanes", named, exit=1, partner=partner, file="input.json",
               why="empty args and named device lanes: no kernel carries a stream id")
    ok("id_over_int64", wrap([dict(e, id=2**64 + 7) if e.get("ph") in ("s", "f") else e for e in events]
                             + [{"ph": "i", "name": "big", "pid": 1, "tid": 1, "ts": _first_ts(events),
                                 "id": 2**70, "s": "t"}]), "flow/instant ids over int64")
    ok("pid_over_int64", _set_field(wrap, events, "pid", 2**65), "a pid over int64")
    ok("pid_text", _set_field(wrap, events, "pid", "worker-7"), "a textual pid")
    ok("long_name", _set_field(wrap, events, "name", "op" * 10000), "a 20 KB event name")
    ok("unicode_names", _set_field(wrap, events, "name", "算子\u2028名字 😀 =cmd|'/C calc'!A0"),
       "non-ASCII and formula-like name")
    err("escaped_surrogate", _set_field(wrap, events, "name", "x\ud800y"),
        "lone escaped surrogate: not Unicode text (msgspec refuses it; Python's json would accept it)")
    ok("bom_prefix", b"\xef\xbb\xbf" + good, "UTF-8 byte-order mark before the JSON")
    ok("crlf_pretty", json.dumps(json.loads(good), indent=2).replace("\n", "\r\n").encode(), "pretty-printed, CRLF")
    ok("reversed_order", wrap(list(reversed(events))), "events in reverse time order")
    ok("duplicated_events", wrap(events + events), "every event twice")
    ok("ts_numeric_string", _set_field(wrap, events, "ts", str(_first_ts(events))), "ts as a numeric string")

    gz = gzip.compress(good, mtime=0)
    c.file(family, "gzip_valid", gz, fname="input.json.gz", exit=0, why="gzip-compressed trace", partner=partner)
    c.file(family, "gzip_truncated", gz[: len(gz) // 2], fname="input.json.gz", exit=1,
           why="gzip stream cut in half", partner=partner)
    c.file(family, "gzip_bad_crc", gz[:-8] + b"\0\0\0\0" + gz[-4:], fname="input.json.gz", exit=1,
           why="gzip trailer CRC wrong", partner=partner)
    c.file(family, "gzip_of_garbage", gzip.compress(bytes(range(256)) * 8, mtime=0), fname="input.json.gz", exit=1,
           why="gzip of binary garbage", partner=partner)
    c.file(family, "gzip_header_only", b"\x1f\x8b\x08\x00", fname="input.json.gz", exit=1,
           why="only a gzip magic number", partner=partner)
    bomb = gzip.compress(b" " * (4 * 1024 * 1024) + good, compresslevel=9, mtime=0)
    c.file(family, "gzip_bomb_over_cap", bomb, fname="input.json.gz", exit=1, partner=partner,
           env={"MSPROF_COMPARE_MAX_TRACE_BYTES": "1000000"}, why="decompresses past the trace size cap")
    # padded with blanks past the good partner's size, so the lowered cap refuses only this input
    big = good + b" " * (len((SRC / partner).read_bytes()) + 2000 - len(good))
    cap = {"MSPROF_COMPARE_MAX_TRACE_BYTES": str(len(big) - 1000)}
    c.file(family, "over_size_cap", big, exit=1, partner=partner, env=cap,
           why="file over the (lowered) trace size cap")
    c.file(family, "over_size_cap_forced", big, exit=0, partner=partner, args=["--force"], env=cap,
           why="--force skips the size cap")


def _first_ts(events: list) -> Any:
    for e in events:
        if e.get("ph") == "X":
            return e["ts"]
    return 0


def _replace_first(data: bytes, key: bytes, value: bytes) -> bytes:
    """Replace the value following the first ``key`` (a simple scalar) with ``value``."""
    i = data.index(key) + len(key)
    j = i
    while data[j:j + 1] in (b" ",):
        j += 1
    if data[j:j + 1] == b'"':
        k = data.index(b'"', j + 1) + 1
    else:
        k = j
        while data[k:k + 1] not in (b",", b"}"):
            k += 1
    return data[:i] + value + data[k:]


def _replace_first_ts(data: bytes, value: bytes) -> bytes:
    # the first X event's ts (metadata events may have none)
    i = data.index(b'"ph":"X"') if b'"ph":"X"' in data else data.index(b'"ph": "X"')
    start = data.rfind(b"{", 0, i)
    return data[:start] + _replace_first(data[start:], b'"ts":', value)


def _set_field(wrap, events: list, key: str, value: Any) -> bytes:
    out = [dict(e) for e in events]
    for e in out:
        if e.get("ph") == "X":
            e[key] = value
            break
    return wrap(out)


def _without_first_ts(events: list) -> list:
    out = [dict(e) for e in events]
    for e in out:
        if e.get("ph") == "X":
            del e["ts"]
            break
    return out


def _set_dur(wrap, events: list, dur: Any) -> bytes:
    return _set_field(wrap, events, "dur", dur)


def kineto_family(c: Corpus) -> None:
    top = json.loads((SRC / KINETO).read_bytes())
    top = dict(top, traceEvents=_small(top["traceEvents"], 14))
    good = _dumps(top).encode()

    def wrap(events: list) -> bytes:
        return _dumps(dict(top, traceEvents=events)).encode()

    _trace_like(c, "kineto", good, wrap, KINETO)
    f = "kineto"

    def err(name: str, obj: Any, why: str) -> None:
        c.file(f, name, _dumps(obj) if not isinstance(obj, bytes) else obj, exit=1, why=why, partner=KINETO)

    err("empty_object", {}, "{} (no traceEvents)")
    err("trace_events_object", dict(top, traceEvents={"a": 1}), "traceEvents is an object")
    err("trace_events_string", dict(top, traceEvents="events"), "traceEvents is a string")
    err("trace_events_null", dict(top, traceEvents=None), "traceEvents is null")
    err("trace_events_number", dict(top, traceEvents=5), "traceEvents is a number")
    err("args_number", _with_args(top, 5), "a kernel's args is a number")
    err("args_list", _with_args(top, [1, 2]), "a kernel's args is a list")
    err("args_string", _with_args(top, "stream 7"), "a kernel's args is a string")
    c.file(f, "stream_text", _dumps(_with_args(top, {"stream": "seven", "correlation": 1})), exit=1,
           partner=KINETO, file="input.json",
           why="the only kernel's stream is text: read as no stream id, so no compute stream (the original "
               "would take any truthy value as one)")
    c.file(f, "device_properties_odd", _dumps(dict(top, deviceProperties="n/a")), exit=0, partner=KINETO,
           why="deviceProperties of the wrong type (not used for figures)")
    c.file(f, "no_gpu_events", _dumps(dict(top, traceEvents=[e for e in top["traceEvents"]
                                                         if e.get("cat") in ("cpu_op", "user_annotation")])),
           exit=1, partner=KINETO, why="CPU-only trace: no kernels (the GPU breakdown needs device activity)")
    c.file(f, "wrong_suffix", good, fname="input.txt", exit=1, partner=KINETO, why="a trace named .txt")
    c.file(f, "array_of_kineto", b"[" + good + b"]", exit=1, partner=KINETO,
           why="a Kineto object wrapped in an array (read as trace_view)")


def _small(events: list, n: int) -> list:
    """The first ``n`` non-metadata events, at least one of each category and one complete event of each process
    (an NPU trace's device lanes), plus the metadata of their processes: a valid trace small enough to copy
    into many cases."""
    body = [e for e in events if e.get("ph") != "M"]
    keep, seen = [], set()
    for e in body:
        if len(keep) < n or e.get("cat") not in seen:
            keep.append(e)
            seen.add(e.get("cat"))
    lanes = {e.get("pid") for e in keep if e.get("ph") == "X"}
    shortest: dict = {}  # the shortest complete event of each process still without one
    for e in body:
        if e.get("ph") == "X" and e.get("pid") not in lanes:
            size = len(json.dumps(e))
            if size < shortest.get(e.get("pid"), (size + 1, None))[0]:
                shortest[e.get("pid")] = (size, e)
    picked = {id(e) for e in keep} | {id(e) for _, e in shortest.values()}
    keep = [e for e in body if id(e) in picked]  # in trace order
    pids = {e.get("pid") for e in keep}
    ids = {}
    for e in keep:
        if e.get("ph") in ("s", "f"):
            ids.setdefault((e.get("cat"), e.get("id")), set()).add(e["ph"])
    keep = [e for e in keep if e.get("ph") not in ("s", "f") or ids[(e.get("cat"), e.get("id"))] == {"s", "f"}]
    return [e for e in events if e.get("ph") == "M" and e.get("pid") in pids] + keep


def _with_args(top: dict, args: Any) -> dict:
    events = [dict(e) for e in top["traceEvents"]]
    for e in events:
        if e.get("cat") == "kernel":
            e["args"] = args
            break
    return dict(top, traceEvents=events)


def trace_view_family(c: Corpus) -> None:
    def wrap(events: list) -> bytes:
        return _dumps(events).encode()

    good = wrap(_small(json.loads((SRC / TRACE).read_bytes()), 18))
    _trace_like(c, "trace_view", good, wrap, TRACE)
    f = "trace_view"
    events = json.loads(good)
    c.file(f, "top_object", _dumps({"traceEvents": "x"}), exit=1, partner=TRACE, why="object whose traceEvents is text")
    c.file(f, "ts_decimal_string_bad", _set_field(wrap, events, "ts", "1736408883732241.5.3"), exit=1,
           partner=TRACE, why="ts string with two dots")
    c.file(f, "ts_string_exponent", _set_field(wrap, events, "ts", "1.7e15"), exit=0, partner=TRACE,
           why="ts string in exponent form")
    c.file(f, "no_process_names", wrap([e for e in events if e.get("name") != "process_name"]), exit=1,
           partner=TRACE, file="input.json",
           why="no process_name metadata: torch ops, and device events on lanes that cannot be told apart")
    device = {e.get("pid") for e in events if e.get("name") == "process_name"
              and e.get("args", {}).get("name") in ("Ascend Hardware", "HCCL", "Overlap Analysis")}
    assert device, "the excerpt has device lanes"
    c.file(f, "cpu_only", wrap([e for e in events if e.get("pid") not in device]), exit=1, partner=TRACE,
           file="input.json", why="torch ops but no device lane: a capture without ProfilerActivity.NPU")
    c.file(f, "hardware_only", wrap([e for e in events if e.get("ph") == "M" or e.get("cat") != "cpu_op"]), exit=0,
           partner=TRACE, why="no cpu_op events")
    c.file(f, "process_name_args_text", wrap([dict(e, args="Ascend Hardware") if e.get("name") == "process_name"
                                              else e for e in events]), exit=1, partner=TRACE,
           why="process_name args is a string")
    c.file(f, "half_flows", wrap([e for e in events if e.get("ph") != "f"]), exit=0, partner=TRACE,
           why="flow starts without ends", warning="")


def npu_dir_family(c: Corpus) -> None:
    f = "npu_dir"
    base = SRC / NPU_DIR
    out = f"{OUT}/"
    kd = (base / OUT / "kernel_details.csv").read_text()
    om = (base / OUT / "operator_memory.csv").read_text()
    mr = (base / OUT / "memory_record.csv").read_text()
    ops = (base / OUT / "op_statistic.csv").read_text()
    comm = (base / OUT / "communication.json").read_bytes()
    tv = (base / OUT / TRACE).read_bytes()

    def case(name: str, edits: dict, exit: int, why: str, file: str | None = None, **kw: Any) -> None:
        if any(k.endswith("op_statistic.csv") for k in edits):  # read (and checked) only then (reference-1 §2.4)
            kw.setdefault("args", ["--use_kernel_type"])
        c.tree(f, name, base, edits=edits, exit=exit, why=why, partner=NPU_DIR,
               file=(f"input/{file}" if file else None) if exit else "", **kw)

    # the directory itself
    d = c.case(f, "empty_dir", input="input", exit=1, partner=NPU_DIR, why="empty directory")
    (d / "input").mkdir()
    (d / "input" / ".keep").write_text("")
    d = c.case(f, "empty_ascend_output", input="input", exit=1, partner=NPU_DIR, file=f"input/{OUT}",
               why="ASCEND_PROFILER_OUTPUT exists but is empty")
    (d / "input" / OUT).mkdir(parents=True)
    (d / "input" / OUT / ".keep").write_text("")
    case("csvs_only_no_trace", {f"{out}{TRACE}": None}, 1, "CSV files but no trace_view.json", file=OUT)
    case("trace_view_is_dir", {f"{out}{TRACE}": None, f"{out}{TRACE}/x": "1"}, 1,
         "trace_view.json is a directory", file=OUT)
    case("valid_copy", {}, 0, "the good directory")
    c.tree(f, "ascend_output_level", base / OUT, edits={}, root="ASCEND_PROFILER_OUTPUT", exit=0, partner=NPU_DIR,
           why="the ASCEND_PROFILER_OUTPUT directory given directly")

    # trace_view.json inside a directory
    for off in (0, 1, len(tv) // 2, len(tv) - 1):
        case(f"trace_truncated_{off}", {f"{out}{TRACE}": tv[:off]}, 1, f"trace_view.json cut at {off}",
             file=f"{out}{TRACE}")
    case("trace_object", {f"{out}{TRACE}": '{"a": 1}'}, 1, "trace_view.json is an object", file=f"{out}{TRACE}")
    case("trace_garbage", {f"{out}{TRACE}": bytes(range(256))}, 1, "binary trace_view.json", file=f"{out}{TRACE}")
    case("trace_ts_text", {f"{out}{TRACE}": _replace_first_ts(tv, b'"when"')}, 1, "a ts that is not a number",
         file=f"{out}{TRACE}")

    # missing optional files: loads with a warning
    for name in ("kernel_details.csv", "op_statistic.csv", "memory_record.csv", "operator_memory.csv",
                 "communication.json"):
        case(f"missing_{name.replace('.', '_')}", {f"{out}{name}": None}, 0, f"no {name}")
    case("missing_info_and_metadata", {"profiler_info_0.json": None, "profiler_metadata.json": None}, 0,
         "no profiler_info_*.json / profiler_metadata.json")
    case("all_csvs_missing", {f"{out}{n}": None for n in ("kernel_details.csv", "op_statistic.csv",
                                                        "memory_record.csv", "operator_memory.csv")}, 0,
         "trace_view.json alone in the directory")

    # CSV defects (each CSV the text loader reads)
    csvs = {"kernel_details.csv": kd, "operator_memory.csv": om, "memory_record.csv": mr, "op_statistic.csv": ops}
    for name, text in csvs.items():
        stem = name.split(".")[0]
        path = f"{out}{name}"
        header, *rows = text.splitlines(keepends=True)
        cols = header.rstrip("\r\n").split(",")
        case(f"{stem}_empty", {path: b""}, 1, f"0-byte {name}", file=path)
        case(f"{stem}_header_only", {path: header}, 1,
             f"{name} with a header and no rows (a present but empty export is broken)", file=path)
        case(f"{stem}_garbage", {path: bytes((i * 31 + 7) % 256 for i in range(2048))}, 1,
             f"binary garbage in {name}", file=path)
        case(f"{stem}_invalid_utf8", {path: header.encode() + b"\xff\xfe\xfa," * 8 + b"\n"}, 1,
             f"invalid UTF-8 in {name}", file=path)
        case(f"{stem}_semicolons", {path: text.replace(",", ";")}, 1, f"{name} with ';' delimiters", file=path)
        case(f"{stem}_tabs", {path: text.replace(",", "\t")}, 1, f"{name} with tab delimiters", file=path)
        case(f"{stem}_no_header", {path: "".join(rows) or "1,2,3\n"}, 1, f"{name} without its header line",
             file=path)
        case(f"{stem}_bom_crlf", {path: "\ufeff" + text.replace("\n", "\r\n")}, 0, f"{name} with BOM and CRLF")
        case(f"{stem}_cr_line_ends", {path: text.replace("\n", "\r")}, 0,
             f"{name} with bare CR line ends (old Mac style; pandas reads them, the header must split there too)")
        case(f"{stem}_extra_column", {path: "".join(line.rstrip("\r\n") + ",extra\n" for line in text.splitlines())},
             0, f"{name} with an extra trailing column")
        case(f"{stem}_reordered_columns", {path: _reorder_csv(text)}, 0, f"{name} with columns in reverse order")
        case(f"{stem}_ragged_row", {path: header + (rows[0].split(",")[0] + ",x\n" if rows else "x\n")
                                    + "".join(rows[1:])}, 0, f"{name} with a short row (missing cells read as blank)")
        case(f"{stem}_quoted_newline", {path: header + "".join(rows) + _quoted_newline_row(cols)}, 0,
             f"{name} with a quoted field holding a newline")
        # cut two characters into a row of the second half (or the only row): a short last row, no line end
        nl = text.find("\n", len(header) + (len(text) - len(header)) // 2)
        cut = (nl if 0 <= nl < len(text) - 3 else len(header) - 1) + 3
        case(f"{stem}_truncated", {path: text[:cut]}, 1,
             f"{name} cut mid-row (rows after the cut would be lost without a word)", file=path)

    # column-specific defects
    for name, col in (("kernel_details.csv", "Duration(us)"), ("kernel_details.csv", "Start Time(us)"),
                      ("kernel_details.csv", "Name"), ("kernel_details.csv", "Type"),
                      ("kernel_details.csv", "Accelerator Core"),
                      ("operator_memory.csv", "Size(KB)"), ("operator_memory.csv", "Name"),
                      ("memory_record.csv", "Total Reserved(MB)"), ("op_statistic.csv", "Total Time(us)"),
                      ("op_statistic.csv", "OP Type")):
        text = csvs[name]
        stem = name.split(".")[0]
        slug = col.split("(")[0].strip().lower().replace(" ", "_")
        path = f"{out}{name}"
        optional = col in OPTIONAL_COLUMNS
        case(f"{stem}_missing_{slug}", {path: _drop_column(text, col)}, 0 if optional else 1,
             f"{name} without column {col!r}" + (" (optional)" if optional else ""), file=None if optional else path)
        case(f"{stem}_renamed_{slug}", {path: text.replace(col, col.upper() + "_X", 1)}, 0 if optional else 1,
             f"{name} with column {col!r} renamed" + (" (optional)" if optional else ""),
             file=None if optional else path)
    for name, col in (("kernel_details.csv", "Duration(us)"), ("kernel_details.csv", "Start Time(us)"),
                      ("operator_memory.csv", "Size(KB)"), ("op_statistic.csv", "Total Time(us)")):
        stem = name.split(".")[0]
        slug = col.split("(")[0].strip().lower().replace(" ", "_")
        case(f"{stem}_{slug}_not_number", {f"{out}{name}": _set_cell(csvs[name], col, "n/a?")}, 0,
             f"{name}: one {col} is text (read as missing, counted in one warning)", warning="not numbers")
    case("op_statistic_unread_without_use_kernel_type", {f"{out}op_statistic.csv": b"\x00garbage"}, 0,
         "a broken op_statistic.csv is neither read nor checked without --use_kernel_type", args=[])
    case("kernel_details_negative_duration", {f"{out}kernel_details.csv": _set_cell(kd, "Duration(us)", "-3.5")},
         0, "a kernel with negative duration", warning="negative")
    case("kernel_details_duration_over_a_week",
         {f"{out}kernel_details.csv": _set_cell(kd, "Duration(us)", "691200000000")}, 0,
         "a kernel lasting 8 days: a damaged time, read as 0", warning="last over a week")
    for col in ("Duration(us)", "Start Time(us)"):
        slug = col.split("(")[0].strip().lower().replace(" ", "_")
        case(f"kernel_details_{slug}_huge", {f"{out}kernel_details.csv": _set_cell(kd, col, "1e300")}, 1,
             f"a kernel {col} of 1e300 us (its ns overflow int64)", file=f"{out}kernel_details.csv")
        case(f"kernel_details_{slug}_inf", {f"{out}kernel_details.csv": _set_cell(kd, col, "inf")}, 1,
             f"a kernel {col} of inf", file=f"{out}kernel_details.csv")
    case("kernel_details_duration_exponent", {f"{out}kernel_details.csv": _set_cell(kd, "Duration(us)", "1.5e1")},
         0, "a kernel duration written with an exponent (read exactly)")
    case("memory_record_reserved_inf", {f"{out}memory_record.csv": _set_cell(mr, "Total Reserved(MB)", "inf")}, 1,
         "memory_record.csv Total Reserved(MB) of inf", file=f"{out}memory_record.csv")

    # communication.json / metadata / info
    cpath = f"{out}communication.json"
    case("communication_truncated", {cpath: comm[: len(comm) // 2]}, 1, "communication.json cut", file=cpath)
    case("communication_empty", {cpath: b""}, 0, "0-byte communication.json: no communication data",
         warning="empty")
    case("communication_array", {cpath: b"[1, 2]"}, 1, "communication.json is an array", file=cpath)
    case("communication_garbage", {cpath: b"\x00\x01\x02" * 50}, 1, "binary communication.json", file=cpath)
    case("communication_invalid_utf8", {cpath: comm.replace(b'"', b'"caf\xe9 ', 1)}, 1,
         "Latin-1 byte in a communication.json key (msgspec < 0.19 raises UnicodeDecodeError)", file=cpath)
    case("metadata_invalid_utf8", {"profiler_metadata.json": b'{"ENV_VARIABLES": "caf\xe9"}'}, 0,
         "Latin-1 byte in profiler_metadata.json (an optional file: read as absent, one warning)",
         warning="malformed JSON: Invalid UTF-8 encoded string")  # msgspec < 0.19 adds its position
    case("communication_empty_object", {cpath: b"{}"}, 0, "communication.json with no steps")
    # Python's json.dumps (torch_npu's writer) writes NaN / Infinity; the profiler writes in the locale's encoding
    case("metadata_nan_infinity", {"profiler_metadata.json": b'{"train_loss": NaN, "grad_norm": Infinity, '
                                                             b'"lr": -Infinity}'}, 0,
         "NaN / Infinity values (torch_npu's add_metadata_json, written by json.dumps) in profiler_metadata.json")
    case("communication_bandwidth_nan", {cpath: comm.replace(b'"SDMA": {"Transit Time(ms)": 27.315705875000003',
                                                             b'"SDMA": {"Transit Time(ms)": NaN')}, 0,
         "a NaN bandwidth block value: that bandwidth 0, and said", warning="not a finite number")
    case("metadata_gb18030", {"profiler_metadata.json": '{"ENV_VARIABLES": "训练"}'.encode("gb18030")}, 0,
         "profiler_metadata.json written in a Chinese locale's encoding", warning="read as GB18030")
    case("kernel_details_gb18030", {f"{out}kernel_details.csv": kd.replace(",hcom_allReduce__586_0_1,",
                                                                           ",训练_586_0_1,", 1).encode("gb18030")},
         0, "kernel_details.csv written in a Chinese locale's encoding", warning="read as GB18030")
    case("communication_bandwidth_text", {cpath: comm.replace(b'"SDMA": {"Transit Time(ms)": 27.315705875000003',
                                                              b'"SDMA": {"Transit Time(ms)": "abc"')}, 0,
         "a bandwidth block value that is not a number: that bandwidth 0, and said", warning="not a finite number")
    case("communication_wrong_shape", {cpath: b'{"step1": {"collective": 5}}'}, 0,
         "communication.json with a number where an object is expected: bandwidth absent", warning="communication.json")
    case("metadata_truncated", {"profiler_metadata.json": b'{"ENV_VARIABLES": {'}, 0,
         "profiler_metadata.json cut (an optional file: read as absent, one warning)",
         warning="truncated JSON (")
    case("metadata_array", {"profiler_metadata.json": b"[]"}, 0,
         "profiler_metadata.json is an array (an optional file: read as absent, one warning)",
         warning="holds an array where an object is expected; read as absent")
    case("info_garbage", {"profiler_info_0.json": b"\xff\xfe\x00garbage"}, 0,
         "profiler_info_0.json unreadable (its values are not used)")
    case("info_array", {"profiler_info_0.json": b'[1, 2]'}, 0,
         "profiler_info_0.json is an array: the original's warning",
         warning="profiler_info_0.json: Invalid profiler info.")
    case("info_config_not_object", {"profiler_info_0.json": b'{"config": [1]}'}, 0,
         "profiler_info_0.json whose config is a list (its values are not used)")
    case("info_experimental_config_text", {"profiler_info_0.json": b'{"config": {"experimental_config": "L1"}}'},
         0, "profiler_info_0.json whose experimental_config is text")
    case("op_statistic_count_huge", {f"{out}op_statistic.csv": _set_cell(ops, "Count", "1e300")}, 1,
         "an op_statistic.csv Count of 1e300 (no int64: it became a negative call count)",
         file=f"{out}op_statistic.csv")

    # symbolic links inside the directory (created at test time: links are not portable in a checkout)
    tv_link = {f"input/{out}{TRACE}": f"_src/{NPU_DIR}/{OUT}/{TRACE}"}
    case("trace_symlink", {f"{out}{TRACE}": None}, 1, "trace_view.json is a symbolic link", file=f"{out}{TRACE}",
         links=tv_link)
    case("trace_symlink_forced", {f"{out}{TRACE}": None}, 0, "--force accepts a linked trace_view.json",
         args=["--force"], links=tv_link)
    case("csv_symlink", {f"{out}kernel_details.csv": None}, 1, "kernel_details.csv is a symbolic link",
         file=f"{out}kernel_details.csv",
         links={f"input/{out}kernel_details.csv": f"_src/{NPU_DIR}/{OUT}/kernel_details.csv"})
    case("metadata_symlink", {"profiler_metadata.json": None}, 1, "profiler_metadata.json is a symbolic link",
         file="profiler_metadata.json",
         links={"input/profiler_metadata.json": f"_src/{NPU_DIR}/profiler_metadata.json"})
    big_csv = {f"{out}kernel_details.csv": kd + "\n" * 8000}  # blank lines: same content, bigger file
    cap = {"MSPROF_COMPARE_MAX_TEXT_BYTES": str(max(len(kd.encode()), len(comm), len(mr.encode())) + 100)}
    case("csv_over_cap", big_csv, 1, "kernel_details.csv over the (lowered) CSV cap", file=f"{out}kernel_details.csv",
         env=cap)
    case("csv_over_cap_forced", big_csv, 0, "--force skips the CSV cap", args=["--force"], env=cap)


def _reorder_csv(text: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([list(reversed(r)) for r in rows])
    return buf.getvalue()


def _drop_column(text: str, col: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    i = rows[0].index(col)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([r[:i] + r[i + 1:] for r in rows])
    return buf.getvalue()


def _set_cell(text: str, col: str, value: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    i = rows[0].index(col)
    if len(rows) > 1:
        rows[1][i] = value
    else:
        rows.append([value if j == i else "0" for j in range(len(rows[0]))])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _quoted_newline_row(cols: list[str]) -> str:
    return ",".join('"a\nb"' if j == 0 else "" for j in range(len(cols))) + "\n"


def db_family(c: Corpus) -> None:
    f = "db"
    good = (SRC / DB).read_bytes()

    def err(name: str, data: bytes, why: str, **kw: Any) -> None:
        c.file(f, name, data, fname=DB, exit=1, why=why, partner=DB, **kw)

    err("empty_file", b"", "0-byte database")
    err("text_file", b"this is not a database\n" * 20, "text named .db")
    err("garbage", bytes((i * 53 + 11) % 256 for i in range(8192)), "binary garbage named .db")
    err("truncated_header", good[:50], "SQLite header cut")
    err("truncated_half", good[:16384], "database cut after 16 KiB")
    err("zeroed_pages", good[:4096] + bytes(16384), "pages after the first zeroed")
    err("json_named_db", (SRC / KINETO).read_bytes()[:3000], "a JSON file named .db")
    err("no_tables", _sqlite([]), "valid SQLite without tables")
    err("unrelated_tables", _sqlite(["CREATE TABLE foo(a, b)", "INSERT INTO foo VALUES (1, 2)"]),
        "valid SQLite with unrelated tables")
    err("string_ids_only", _sqlite(["CREATE TABLE STRING_IDS(id INTEGER, value TEXT)",
                                    "INSERT INTO STRING_IDS VALUES (1, 'x')"]), "only STRING_IDS")
    err("task_wrong_columns", _sqlite(["CREATE TABLE TASK(a, b, c)", "INSERT INTO TASK VALUES (1, 2, 3)",
                                       "CREATE TABLE STRING_IDS(id INTEGER, value TEXT)"]),
        "TASK without its columns")
    gdb = f"_src/{DB}"  # the good DB, copied at test time
    c.case(f, "over_size_cap", input=DB, base=gdb, exit=1, partner=DB, why="database over the (lowered) DB cap",
           env={"MSPROF_COMPARE_MAX_DB_BYTES": "4096"})
    c.case(f, "valid_copy", input=DB, base=gdb, exit=0, why="the good database", partner=DB)
    c.case(f, "over_size_cap_forced", input=DB, base=gdb, exit=0, why="--force skips the DB cap", partner=DB,
           args=["--force"], env={"MSPROF_COMPARE_MAX_DB_BYTES": "4096"})
    c.case(f, "analysis_db", input="analysis.db", base=gdb, exit=1, why="analysis.db is never used", partner=DB)
    c.case(f, "other_name_db", input="profile.db", base=gdb, exit=1, why="a .db without a profiler prefix",
           partner=DB)
    # the same defects reached through a directory
    d = c.case(f, "dir_with_garbage_db", input="input", exit=1, partner=DB,
               file=f"input/{OUT}/{DB}", why="ASCEND_PROFILER_OUTPUT holding a garbage profiler DB")
    (d / "input" / OUT).mkdir(parents=True)
    (d / "input" / OUT / DB).write_bytes(b"garbage" * 100)
    d = c.case(f, "dir_with_analysis_db_only", input="input", exit=1, partner=DB, file=f"input/{OUT}",
               why="only analysis.db in ASCEND_PROFILER_OUTPUT")
    (d / "input" / OUT).mkdir(parents=True)
    (d / "input" / OUT / "analysis.db").write_bytes(_sqlite(["CREATE TABLE foo(a)"]))
    c.case(f, "db_symlink", input=DB, exit=1, partner=DB, why="the DB given as a symbolic link", links={DB: gdb})
    c.case(f, "db_symlink_forced", input=DB, exit=0, partner=DB, args=["--force"], why="--force accepts a linked DB",
           links={DB: gdb})


def _sqlite(statements: list[str]) -> bytes:
    """A tiny SQLite file (512-byte pages) built from SQL statements."""
    tmp = BAD / ".tmp.db"
    if tmp.exists():
        tmp.unlink()
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA page_size=512")
    con.execute("PRAGMA journal_mode=DELETE")
    for s in statements:
        con.execute(s)
    con.commit()
    con.execute("VACUUM")
    con.close()
    data = tmp.read_bytes()
    tmp.unlink()
    return data


def paths_family(c: Corpus) -> None:
    f = "paths"
    good = (SRC / KINETO).read_bytes()

    c.case(f, "does_not_exist", input="nothing_here.json", exit=1, why="no such file", partner=KINETO)
    c.file(f, "suffix_txt", good, fname="trace.txt", exit=1, why="unknown suffix", partner=KINETO)
    c.file(f, "no_suffix", good, fname="trace", exit=1, why="no suffix", partner=KINETO)
    c.file(f, "suffix_csv", b"a,b\n1,2\n", fname="kernel_details.csv", exit=1, why="a CSV given alone",
           partner=KINETO)
    d = c.case(f, "dir_without_traces", input="input", exit=1, why="directory with unrelated files", partner=KINETO)
    (d / "input").mkdir()
    (d / "input" / "notes.txt").write_text("hello\n")
    d = c.case(f, "dir_two_kineto_traces", input="input", exit=1, why="directory holding two traces",
               partner=KINETO)
    (d / "input").mkdir()
    (d / "input" / "a.pt.trace.json").write_bytes(good)
    (d / "input" / "b.pt.trace.json").write_bytes(good)
    d = c.case(f, "dir_one_kineto_trace", input="input", exit=0, why="directory holding one trace", partner=KINETO)
    (d / "input").mkdir()
    (d / "input" / "rank0.pt.trace.json").write_bytes(good)
    d = c.case(f, "dir_one_kineto_trace_and_other_json", input="input", exit=0, partner=KINETO,
               why="directory holding one *.pt.trace.json beside other JSON files (those are not offered)")
    (d / "input").mkdir()
    (d / "input" / "rank0.pt.trace.json").write_bytes(good)
    (d / "input" / "config.json").write_bytes(b'{"lr": 0.1}')
    (d / "input" / "step_trace_point_info.json").write_bytes(b"{}")
    d = c.case(f, "dir_json_files_no_kineto_name", input="input", exit=1, partner=KINETO,
               why="directory with two JSON traces, neither named *.pt.trace.json")
    (d / "input").mkdir()
    (d / "input" / "a.json").write_bytes(good)
    (d / "input" / "b.json").write_bytes(good)
    d = c.case(f, "dir_one_json_trace_among_json_objects", input="input", exit=0, partner=KINETO,
               why="directory with one JSON trace (not named *.pt.trace.json) beside a JSON object without "
                   "traceEvents: that trace loads")
    (d / "input").mkdir()
    (d / "input" / "a.json").write_bytes(good)
    (d / "input" / "b.json").write_bytes(b"{}")
    d = c.case(f, "nested_empty_dirs", input="input", exit=1, file=f"input/{OUT}", partner=KINETO,
               why="ASCEND_PROFILER_OUTPUT holding only an empty sub-directory")
    (d / "input" / OUT / "sub").mkdir(parents=True)
    (d / "input" / OUT / "sub" / ".keep").write_text("")
    # links: name -> target ("_src/..." targets become absolute at test time, others stay as written)
    c.case(f, "file_symlink", input="link.json", exit=1, why="input is a symbolic link", partner=KINETO,
           links={"link.json": f"_src/{KINETO}"})
    c.case(f, "file_symlink_forced", input="link.json", exit=0, args=["--force"], partner=KINETO,
           why="--force accepts a symbolic link", links={"link.json": f"_src/{KINETO}"})
    c.case(f, "dir_symlink", input="link_dir", exit=1, why="input directory is a symbolic link", partner=NPU_DIR,
           links={"link_dir": f"_src/{NPU_DIR}"})
    c.case(f, "dangling_symlink", input="dangling.json", exit=1, why="symbolic link to nothing", partner=KINETO,
           links={"dangling.json": "no_such_target.json"})
    c.case(f, "dangling_symlink_forced", input="dangling.json", exit=1, args=["--force"], partner=KINETO,
           why="--force and a link to nothing", links={"dangling.json": "no_such_target.json"})
    c.case(f, "symlink_loop", input="loop.json", exit=1, args=["--force"], why="a link pointing to itself",
           partner=KINETO, links={"loop.json": "loop.json"})
    c.file(f, "odd_characters_ok", good, fname="run +@#,;'$ ü 算子 (1).json", exit=0, partner=KINETO,
           why="punctuation, spaces and non-ASCII letters are accepted (only control characters are refused)")
    c.file(f, "leading_equals", good, fname="input.json", exit=0, partner=KINETO,
           why="a path written as --x=path keeps working")
    (BAD / f / "leading_equals" / "expect.json").write_text(json.dumps(dict(
        json.loads((BAD / f / "leading_equals" / "expect.json").read_text()), input="=input.json"), indent=1) + "\n")
    c.case(f, "db_over_cap_via_env", input=DB, base=f"_src/{DB}", exit=1, partner=KINETO,
           env={"MSPROF_COMPARE_MAX_DB_BYTES": "100"}, why="a GPU vs DB pair where the DB is over the cap")
    c.case(f, "trace_view_named_file", input="trace_view.json", base=f"_src/{TRACE}", exit=0,
           partner=KINETO, why="GPU vs NPU trace_view file")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refresh-src", action="store_true", help="re-cut _src from ../shared/samples first")
    a = ap.parse_args(argv)
    if a.refresh_src or not SRC.exists():
        if not SAMPLES.is_dir():
            print(f"samples not found at {SAMPLES}", file=sys.stderr)
            return 1
        refresh_src()
    for child in BAD.iterdir():
        if child.name != "_src":
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    c = Corpus()
    kineto_family(c)
    trace_view_family(c)
    npu_dir_family(c)
    db_family(c)
    paths_family(c)
    size = sum(p.lstat().st_size for p in BAD.rglob("*") if not p.is_dir() or p.is_symlink())
    print(f"{c.count} cases, {size / 1024:.0f} KiB under {BAD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
