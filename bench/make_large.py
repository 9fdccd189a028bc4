#!/usr/bin/env python3
"""Build a large, realistic profile from a real one, without committing it.

The source's events are replicated back to back: each copy is shifted in time
by the source's span (plus a small gap) and gets fresh ids (flow ids,
correlation / External ids, Python ids, NPU connection ids), so the result
looks like a longer run of the same steps.

    python bench/make_large.py SRC OUT --size-mb 1024

SRC is a Kineto trace (``*.json`` / ``*.json.gz``), a bare ``trace_view.json``,
or an Ascend ``*_ascend_pt`` directory (then OUT is a directory: trace_view.json
is replicated and the rows of kernel_details.csv, operator_memory.csv and
memory_record.csv are replicated and shifted alike; the other side files,
which the compare does not read or reads as per-run summaries, are copied).
Each copy is its own step: ``ProfilerStep#N`` of copy k is named ``#N+k``,
and kernel_details.csv's Step Id follows, as a real longer run numbers them.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import os
import re
import shutil
import sys

import msgspec

_ID_ARGS = ("correlation", "External id", "Python id", "Python parent id", "connection_id", "correlation_id",
            "Ev Idx")


def _load(path: str):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return msgspec.json.decode(raw)


def _us(v):
    """A trace ``ts`` as (decimal microseconds in ns int, was_string)."""
    if isinstance(v, str):
        whole, _, frac = v.partition(".")
        return int(whole) * 1000 + int((frac + "000")[:3]), True
    return int(round(float(v) * 1000)), False


def _fmt(ns: int, as_string: bool):
    text = f"{ns // 1000}.{ns % 1000:03d}"
    return text if as_string else float(text)


def _span(events) -> tuple[int, int]:
    lo, hi = None, None
    for e in events:
        if e.get("ph") == "M" or "ts" not in e:
            continue
        ts, _ = _us(e["ts"])
        end = ts + int(round(float(e.get("dur", 0) or 0) * 1000))
        lo = ts if lo is None or ts < lo else lo
        hi = end if hi is None or end > hi else hi
    return lo or 0, hi or 0


_STEP_NAME = re.compile(r"(ProfilerStep#)(\d+)")


def _shift_event(e: dict, shift_ns: int, id_offset: int, copy: int) -> dict:
    e = dict(e)
    name = e.get("name")
    if isinstance(name, str) and name.startswith("ProfilerStep#"):
        e["name"] = _STEP_NAME.sub(lambda m: f"{m[1]}{int(m[2]) + copy}", name, count=1)
    if "ts" in e:
        ns, as_str = _us(e["ts"])
        e["ts"] = _fmt(ns + shift_ns, as_str)
    if "id" in e:
        v = e["id"]
        if isinstance(v, int):
            e["id"] = v + id_offset
        elif isinstance(v, str) and v.isdigit():
            e["id"] = str(int(v) + id_offset)
    args = e.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for k in _ID_ARGS:
            v = args.get(k)
            if isinstance(v, int) and v > 0:
                args[k] = v + id_offset
        e["args"] = args
    return e


def _write_events(out, meta, events, copies: int, span_ns: int, id_step: int) -> None:
    enc = msgspec.json.Encoder()
    first = True
    for e in meta:
        out.write(b"" if first else b",\n")
        out.write(enc.encode(e))
        first = False
    for k in range(copies):
        shift = k * span_ns
        for e in events:
            out.write(b"" if first else b",\n")
            out.write(enc.encode(_shift_event(e, shift, k * id_step, k) if k else e))
            first = False


def _copies_for(src_bytes: int, size_mb: float) -> int:
    return max(1, int(round(size_mb * 1024 * 1024 / max(src_bytes, 1))))


def scale_trace(src: str, out_path: str, size_mb: float) -> int:
    data = _load(src)
    top = data if isinstance(data, dict) else None
    events = top["traceEvents"] if top is not None else data
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    lo, hi = _span(body)
    span = (hi - lo) + 1000_000  # 1 ms gap between copies
    src_size = len(msgspec.json.encode(events))
    copies = _copies_for(src_size, size_mb)
    id_step = 10 ** 9
    with open(out_path, "wb") as out:
        if top is not None:
            out.write(b'{"traceEvents": [\n')
        else:
            out.write(b"[\n")
        _write_events(out, meta, body, copies, span, id_step)
        if top is not None:
            rest = {k: v for k, v in top.items() if k != "traceEvents"}
            out.write(b"\n]")
            for k, v in rest.items():
                out.write(b", " + msgspec.json.encode(k) + b": " + msgspec.json.encode(v))
            out.write(b"}\n")
        else:
            out.write(b"\n]\n")
    return copies


def _shift_csv(src: str, dst: str, copies: int, span_ns: int, time_cols: tuple[str, ...],
               step_col: str | None = None) -> None:
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        shutil.copyfile(src, dst)
        return
    header, body = rows[0], rows[1:]
    idx = [header.index(c) for c in time_cols if c in header]
    step = header.index(step_col) if step_col in header else None
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for k in range(copies):
        for r in body:
            if k:
                r = list(r)
                for i in idx:
                    cell = r[i].strip()
                    if cell and cell.replace(".", "", 1).isdigit():
                        ns, _ = _us(cell)
                        r[i] = _fmt(ns + k * span_ns, True) + ("\t" if r[i].endswith("\t") else "")
                if step is not None and r[step].strip().isdigit():
                    r[step] = str(int(r[step]) + k)
            w.writerow(r)
    with open(dst, "w", encoding="utf-8", newline="") as fh:
        fh.write(buf.getvalue())


def scale_npu_dir(src: str, dst: str, size_mb: float) -> int:
    out_sub = "ASCEND_PROFILER_OUTPUT"
    src_out = os.path.join(src, out_sub) if os.path.isdir(os.path.join(src, out_sub)) else src
    os.makedirs(dst, exist_ok=True)
    dst_out = os.path.join(dst, out_sub) if src_out != src else dst
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if os.path.isfile(p):
            shutil.copyfile(p, os.path.join(dst, name))
    os.makedirs(dst_out, exist_ok=True)
    trace = os.path.join(src_out, "trace_view.json")
    events = _load(trace)
    lo, hi = _span([e for e in events if e.get("ph") != "M"])
    span = (hi - lo) + 1000_000
    copies = scale_trace(trace, os.path.join(dst_out, "trace_view.json"), size_mb)
    for name in os.listdir(src_out):
        p = os.path.join(src_out, name)
        if name == "trace_view.json" or not os.path.isfile(p):
            continue
        if name == "kernel_details.csv":
            _shift_csv(p, os.path.join(dst_out, name), copies, span, ("Start Time(us)",), "Step Id")
        elif name == "operator_memory.csv":
            _shift_csv(p, os.path.join(dst_out, name), copies, span, ("Allocation Time(us)", "Release Time(us)"))
        elif name == "memory_record.csv":
            _shift_csv(p, os.path.join(dst_out, name), copies, span, ("Timestamp(us)",))
        else:
            shutil.copyfile(p, os.path.join(dst_out, name))
    return copies


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float, default=100.0, help="approximate size of the result")
    a = ap.parse_args(argv)
    if os.path.isdir(a.src):
        copies = scale_npu_dir(a.src, a.out, a.size_mb)
        size = os.path.getsize(os.path.join(a.out, "ASCEND_PROFILER_OUTPUT", "trace_view.json")) \
            if os.path.isdir(os.path.join(a.out, "ASCEND_PROFILER_OUTPUT")) else os.path.getsize(
                os.path.join(a.out, "trace_view.json"))
    else:
        copies = scale_trace(a.src, a.out, a.size_mb)
        size = os.path.getsize(a.out)
    print(f"{a.out}: {copies} copies, {size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
