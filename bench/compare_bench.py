#!/usr/bin/env python3
"""How far is a comparison from the cost of just decoding the traces?

    python bench/compare_bench.py BASE COMP [--runs N] [--all]            # ratio mode
    python bench/compare_bench.py BASE COMP --stages [--all] [--json F]   # stage mode

Ratio mode (small inputs; issues 2-5): in this process, after one warm-up of
every job (imports, allocator and page cache warm), ``--runs`` rounds of

(a) the bare typed decode of both inputs: ``traceio.read_bytes`` + ``traceio.decode_events``
    of each JSON trace (a Kineto file, or the ``trace_view.json`` of an NPU directory;
    DB inputs have no JSON trace and count 0). This is the floor: no loader can avoid it;
(b) ``compare()`` through the API (loading, every enabled comparator, the summary);
(c) ``to_excel()`` of that result into a temporary directory;
(d) a floor for any loader of these inputs: (a), plus pulling the fields the time breakdown
    reads out of the decoded events (all but counters), plus a plain ``pandas.read_csv`` of each side CSV the
    compare read (NPU text directories). Reported beside the ratios: where (d) is close to
    2 x (a), a "compare <= 2 x (a)" goal leaves almost nothing for the compare itself.

Each job is timed in wall-clock and in CPU seconds of this process
(``time.process_time``: robust when other work shares the cores). The ratios
printed are median(b)/median(a) and median(b + c)/median(a), CPU and wall.
Peak RSS comes from one fresh subprocess doing (b) + (c) once: its own peak (``VmHWM`` on Linux; Linux
carries the parent's resident size over fork and exec into ``ru_maxrss``, which after the in-process rounds
read this process's size instead), ``ru_maxrss`` elsewhere.

Stage mode (large inputs; issue 9): one fresh subprocess runs the pipeline
once, timing each stage: read + decode of each trace, the rest of each side's
model build (columns, args, side CSV files), each comparator, the summary and the
workbook, with the process's own peak RSS (as above) at the end. Each stage is timed in wall-clock and in
CPU seconds of the process and its waited children (``cpu_by_stage`` in the JSON): on a machine others share,
wall time of one run swings by a third where CPU time moves a few per cent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _flags(everything: bool) -> dict:
    return {} if everything else {"enable_profiling_compare": True}


def _trace_files(path: str) -> list[str]:
    from msprof_compare.loaders import detect

    layout = detect(path, force=True)
    return [layout.trace_path] if layout.trace_path else []


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(t: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - t[0], time.process_time() - t[1]


def decode_both(base: str, comp: str) -> int:
    """Job (a): the bare typed decode of every JSON trace of both inputs; returns the event count."""
    from msprof_compare.loaders import traceio

    n = 0
    for p in (base, comp):
        for f in _trace_files(p):
            data = traceio.read_bytes(f, True)
            events, _top = traceio.decode_events(f, data)
            n += len(events)
            del data, events, _top
    return n


#: Event fields the time breakdown reads from every trace (any loader must pull these out of the decode).
FLOOR_FIELDS = ("ph", "cat", "name", "pid", "tid", "ts", "dur")


def floor_both(base: str, comp: str, side_files: list[str]) -> int:
    """Job (d): (a) plus what no loader of these inputs can skip after the decode: pulling
    ``FLOOR_FIELDS`` out of the decoded events (the phase of every event, the rest of every event
    but counters and metadata; times to exact int64 ns) and a plain
    ``pandas.read_csv`` of each side CSV the compare reads (``side_files``). It is a floor for the
    whole compare only where (d) is well above (a): NPU text directories (trace_view.json + CSVs)."""
    from itertools import compress
    from operator import attrgetter, not_

    import numpy as np
    import pandas as pd

    from msprof_compare.loaders import traceio

    n = 0
    for p in (base, comp):
        for f in _trace_files(p):
            data = traceio.read_bytes(f, True)
            events, _top = traceio.decode_events(f, data)
            # counters feed no figure and metadata has no times; compress() filters at C level so the
            # floor is not inflated
            read = list(compress(events, map(not_, map(frozenset("CM").__contains__, map(attrgetter("ph"), events)))))
            cols = {k: list(map(attrgetter(k), read)) for k in FLOOR_FIELDS[1:]}
            traceio.to_ns(cols["ts"], f, "ts")
            # complete events' durations, as the loaders read them (flows have none: ``traceio.durs_to_ns``)
            timed = np.fromiter(map(attrgetter("ph"), read), dtype=object, count=len(read)) == "X"
            traceio.durs_to_ns(cols["dur"], lambda v, f=f: (traceio.to_ns(v, f, "dur"), False), timed)
            n += len(events)
            del data, events, _top, read, cols
    for f in side_files:
        pd.read_csv(f)
    return n


def _side_csvs(result) -> list[str]:
    """The CSV files both profiles of a result were read from."""
    return [f for prof in (result.base, result.comparison) for f in prof.files.values()
            if isinstance(f, str) and f.endswith(".csv")]


def _ratio(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}"


def ratio_mode(base: str, comp: str, runs: int, everything: bool) -> dict:
    """Warm-up, then ``runs`` rounds of (a), (b), (c) in this process; medians and ratios."""
    import logging

    from msprof_compare.api import compare

    logging.getLogger("msprof-analyze").setLevel(logging.ERROR)
    flags = _flags(everything)
    events = decode_both(base, comp)
    # DB inputs have no JSON trace: (a) times an empty loop, and ratios against it would mean nothing; with
    # one DB side (a) leaves that side's load out, and b/a would count it against the other's decode
    traced = all(_trace_files(p) for p in (base, comp))
    first = compare(base, comp, **flags)
    csvs = _side_csvs(first)
    with tempfile.TemporaryDirectory() as out:
        first.to_excel(out)
    del first
    floor_both(base, comp, csvs)
    a, b, c, d = [], [], [], []
    sheets: dict = {}
    for _ in range(runs):
        t = _clock()
        decode_both(base, comp)
        a.append(_since(t))
        t = _clock()
        result = compare(base, comp, **flags)
        b.append(_since(t))
        with tempfile.TemporaryDirectory() as out:
            t = _clock()
            result.to_excel(out)
            c.append(_since(t))
        sheets = {s.name: len(s) for s in result.sheets}
        del result
        t = _clock()
        floor_both(base, comp, csvs)
        d.append(_since(t))
    med = statistics.median
    out = {"events": events, "runs": runs, "sheets": sheets}
    for k, i in (("wall", 0), ("cpu", 1)):
        da, db = med(x[i] for x in a), med(x[i] for x in b)
        dbc = med(x[i] + y[i] for x, y in zip(b, c, strict=True))
        dd = med(x[i] for x in d)
        ok = traced and da > 0
        out[k] = {"decode": da, "compare": db, "xlsx": med(x[i] for x in c), "compare_xlsx": dbc,
                  "ratio_compare": db / da if ok else None, "ratio_compare_xlsx": dbc / da if ok else None,
                  "floor": dd, "ratio_floor": dd / da if ok else None, "csv_files": len(csvs)}
    return out


def stages(base: str, comp: str, everything: bool) -> dict:
    """One instrumented run of the whole pipeline (in the calling process); seconds per stage."""
    import logging

    from msprof_compare import api
    from msprof_compare.compare import summary
    from msprof_compare.loaders import ascend_text, load_profile, traceio
    from msprof_compare.loaders.pair import load_pair, parallel_wanted
    from msprof_compare.options import build_options
    from msprof_compare.report.excel import write_workbook

    logging.getLogger("msprof-analyze").setLevel(logging.ERROR)
    acc: dict[str, float] = {}
    cpu_acc: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(mod, name: str, key: str) -> None:
        fn = getattr(mod, name)

        def wrapper(*args, **kwargs):
            t, c = time.perf_counter(), _cpu_s()
            try:
                return fn(*args, **kwargs)
            finally:
                acc[key] = acc.get(key, 0.0) + time.perf_counter() - t
                cpu_acc[key] = cpu_acc.get(key, 0.0) + _cpu_s() - c

        setattr(mod, name, wrapper)

    timed(traceio, "read_bytes", "read")
    timed(traceio, "decode_events", "decode")
    timed(ascend_text, "_side_files", "side files")
    out: dict[str, float] = {}
    t0, c0 = time.perf_counter(), _cpu_s()
    opts, _ = build_options(**_flags(everything))
    profiles = []
    parallel = parallel_wanted(base, comp)
    if parallel:  # as compare() does: both sides at once, per-side stages not visible
        t, c = time.perf_counter(), _cpu_s()
        profiles += load_pair(base, comp, load_profile, (opts, opts.base_step), (opts, opts.comparison_step),
                              api._check_usable)
        out["load both sides (2 processes)"] = time.perf_counter() - t
        cpu["load both sides (2 processes)"] = _cpu_s() - c
        out["comparison side: read + decode"] = acc.get("read", 0.0) + acc.get("decode", 0.0)
        cpu["comparison side: read + decode"] = cpu_acc.get("read", 0.0) + cpu_acc.get("decode", 0.0)
    for side, path, step in (("base", base, opts.base_step), ("comparison", comp, opts.comparison_step)):
        if parallel:
            break
        acc.clear()
        cpu_acc.clear()
        t, c = time.perf_counter(), _cpu_s()
        profiles.append(load_profile(path, opts, step=step))
        total, total_cpu = time.perf_counter() - t, _cpu_s() - c
        for key in ("read", "decode", "side files"):
            if key in acc or key != "side files":  # side files: NPU text directories only
                out[f"{side}: {key}"] = acc.get(key, 0.0)
                cpu[f"{side}: {key}"] = cpu_acc.get(key, 0.0)
        out[f"{side}: model build"] = total - sum(acc.values())
        cpu[f"{side}: model build"] = total_cpu - sum(cpu_acc.values())
    ctx = api.RunContext(profiles[0], profiles[1], opts)
    sheets = []
    for name, build in api.comparators(opts):
        t, c = time.perf_counter(), _cpu_s()
        sheets += [s for s in build(ctx) if len(s)]
        out[f"comparator: {name}"] = time.perf_counter() - t
        cpu[f"comparator: {name}"] = _cpu_s() - c
    t, c = time.perf_counter(), _cpu_s()
    sheets[:0] = [s for s in summary.build(ctx, sheets) if len(s)]
    out["comparator: summary"] = time.perf_counter() - t
    cpu["comparator: summary"] = _cpu_s() - c
    result = api.CompareResult(profiles[0], profiles[1], opts, sheets, ctx.summary, ctx.frames)
    with tempfile.TemporaryDirectory() as d:
        t, c = time.perf_counter(), _cpu_s()
        write_workbook(result, d)
        out["workbook"] = time.perf_counter() - t
        cpu["workbook"] = _cpu_s() - c
    out["total"] = time.perf_counter() - t0
    cpu["total"] = _cpu_s() - c0
    out["rows"] = sum(len(s) for s in sheets)
    out["cpu_by_stage"] = cpu
    return out


def _cpu_s() -> float:
    """CPU seconds of this process and of its children waited for so far (a parallel load's loader child)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _input_mb(path: str) -> float:
    files = _trace_files(path)
    p = Path(path)
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 1e6
    return sum(os.path.getsize(f) for f in files) / 1e6


def spawn(job: str, base: str, comp: str, everything: bool, load: str = "auto") -> dict:
    """Run one job in a fresh interpreter; it prints its figures (peak RSS included) as JSON."""
    cmd = [sys.executable, __file__, base, comp, "--child", job] + (["--all"] if everything else [])
    env = dict(os.environ, PYTHONPATH=str(REPO), MSPROF_ANALYZE_LOG_LEVEL="ERROR")
    env["MSPROF_COMPARE_PARALLEL"] = {"auto": "auto", "parallel": "1", "sequential": "0"}[load]
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{job} run failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')}")
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def own_peak_mib() -> float:
    """This process's own peak resident size in MiB: ``VmHWM`` of /proc/self/status where there is one (Linux
    starts ``ru_maxrss`` of a spawned child at the parent's resident size, so a child of a large parent read the
    parent's), else ``ru_maxrss`` (KiB on Linux)."""
    import resource

    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(job: str, base: str, comp: str, everything: bool) -> dict:
    import resource

    if job == "stages":
        info: dict = stages(base, comp, everything)
    else:  # "rss": one full compare + workbook
        import logging

        from msprof_compare.api import compare

        logging.getLogger("msprof-analyze").setLevel(logging.ERROR)
        t = time.perf_counter()
        result = compare(base, comp, **_flags(everything))
        with tempfile.TemporaryDirectory() as out:
            result.to_excel(out)
        info = {"total": time.perf_counter() - t}
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    info["cpu_s"] = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime  # whole run, imports included
    info["maxrss_mib"] = own_peak_mib()
    info["child_maxrss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("comparison")
    ap.add_argument("--runs", type=int, default=5, help="measured rounds in ratio mode (default 5)")
    ap.add_argument("--all", action="store_true", help="all comparisons (default: profiling compare only)")
    ap.add_argument("--stages", action="store_true", help="stage timings of one run in a fresh process")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--load", choices=("auto", "parallel", "sequential"), default="auto",
                    help="how the two sides load (MSPROF_COMPARE_PARALLEL auto/1/0); sequential shows per-side stages")
    ap.add_argument("--child", choices=("stages", "rss"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.base, a.comparison, a.all)))
        return
    mode = "all comparisons" if a.all else "profiling compare only"
    load = os.getloadavg()[0]
    mb = _input_mb(a.base) + _input_mb(a.comparison)
    print(f"inputs: base={a.base} comparison={a.comparison} ({mb:,.1f} MB on disk)")
    print(f"mode: {mode}; load average {load:.2f} on {os.cpu_count()} CPU(s)")
    if a.base == a.comparison:
        print("note: one input given twice: the compare loads it once (a self-compare), the floor decodes it twice")
    if a.stages:
        info = spawn("stages", a.base, a.comparison, a.all, a.load)
        print(f"  {'stage':<32} {'wall':>9}   {'CPU':>9}")
        for k, v in info.items():
            if k not in ("rows", "maxrss_mib", "child_maxrss_mib", "cpu_s", "cpu_by_stage"):
                print(f"  {k:<32} {v:9.3f} s {info['cpu_by_stage'][k]:9.3f} s")
        print(f"  {'peak RSS':<32} {info['maxrss_mib']:9.1f} MiB"
              + (f" (loader child: {info['child_maxrss_mib']:.1f} MiB)" if info["child_maxrss_mib"] else ""))
        print(f"  {'CPU seconds (process + children)':<32} {info['cpu_s']:9.3f} s")
        print(f"  {'seconds per input MB':<32} {info['total'] / mb:9.4f}")
        info.update(mb=mb, load=load, mode=mode, loading=a.load)
    else:
        info = ratio_mode(a.base, a.comparison, a.runs, a.all)
        rss = spawn("rss", a.base, a.comparison, a.all, a.load)
        print(f"{a.runs} measured round(s) in-process after a warm-up; medians; wall and CPU seconds")
        for k in ("wall", "cpu"):
            m = info[k]
            print(f"  {k:<4}: (a) decode {m['decode']:.3f}  (b) compare {m['compare']:.3f}  (c) xlsx {m['xlsx']:.3f}  "
                  f"ratio b/a {_ratio(m['ratio_compare'])}  (b+c)/a {_ratio(m['ratio_compare_xlsx'])}")
        print(f"  events decoded: {info['events']:,}; peak RSS (fresh process, compare + xlsx): "
              f"{rss['maxrss_mib']:.1f} MiB")
        print("  sheets: " + ", ".join(f"{k} {v}" for k, v in info["sheets"].items()))
        w = info["wall"]
        print(f"  (d) floor, wall: (a) + pulling {len(FLOOR_FIELDS)} fields of the non-counter events + "
              f"pandas.read_csv of {w['csv_files']} side CSV(s): {w['floor']:.3f} = {_ratio(w['ratio_floor'])} x (a); "
              f"b/d {_ratio(w['compare'] / w['floor'] if w['ratio_floor'] is not None else None)}")
        if w["ratio_compare"] is None:
            print("  ratios n/a: an input holds no JSON trace (a DB export); time it with --stages")
        info.update(maxrss_mib=rss["maxrss_mib"], mb=mb, load=load, mode=mode)
    if a.json:
        Path(a.json).write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
