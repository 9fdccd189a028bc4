#!/usr/bin/env python3
"""How far is a full comparison from the cost of just decoding the traces?

    python bench/compare_bench.py BASE COMP [--runs N] [--all]

Times, in fresh subprocesses (one per run, so no warm caches or shared heap):

(a) a bare typed decode of both inputs: ``traceio.read_bytes`` + ``traceio.decode_events``
    of each JSON trace (a Kineto file, or the ``trace_view.json`` an NPU directory holds;
    DB inputs have no JSON trace and count 0);
(b) the full comparison through the API: ``compare()`` then ``to_excel()`` into a
    temporary directory; profiling compare only by default, every comparison with ``--all``.

Each child times only its own work (interpreter start-up and imports excluded, and
reported apart). Prints the medians, the ratio (b)/(a) and the peak RSS of the
children (each child's own ``resource.getrusage`` ``ru_maxrss``). A benchmark, not a test.
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


def _trace_files(path: str) -> list[str]:
    from msprof_compare.loaders import detect

    layout = detect(path, force=True)
    return [layout.trace_path] if layout.trace_path else []


def child(mode: str, base: str, comp: str, everything: bool) -> dict:
    """Run one measured job in this (fresh) process and return its figures."""
    t_import = time.perf_counter()
    from msprof_compare.loaders import traceio

    if mode == "compare":
        from msprof_compare.api import compare
    imported = time.perf_counter() - t_import
    t0 = time.perf_counter()
    info: dict = {}
    if mode == "decode":
        n = 0
        for p in (base, comp):
            for f in _trace_files(p):
                data = traceio.read_bytes(f, True)
                events, _top = traceio.decode_events(f, data)
                n += len(events)
                del data, events, _top
        info["events"] = n
    else:
        flags = {} if everything else {"enable_profiling_compare": True}
        t1 = time.perf_counter()
        result = compare(base, comp, **flags)
        info["compare_s"] = time.perf_counter() - t1
        with tempfile.TemporaryDirectory() as out:
            t2 = time.perf_counter()
            result.to_excel(out)
            info["xlsx_s"] = time.perf_counter() - t2
        info["sheets"] = {s.name: len(s) for s in result.sheets}
    info["seconds"] = time.perf_counter() - t0
    info["import_s"] = imported
    return info


def spawn(mode: str, base: str, comp: str, everything: bool) -> dict:
    """One fresh interpreter for one job (it reports its own figures, peak RSS included)."""
    cmd = [sys.executable, __file__, "--child", mode, base, comp] + (["--all"] if everything else [])
    env = dict(os.environ, PYTHONPATH=str(REPO), MSPROF_ANALYZE_LOG_LEVEL="ERROR")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed ({proc.returncode}):\n{err.decode(errors='replace')}")
    info = json.loads(out.decode().strip().splitlines()[-1])
    info["wall_s"] = wall
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("comparison")
    ap.add_argument("--runs", type=int, default=3, help="runs of each job (default 3)")
    ap.add_argument("--all", action="store_true", help="all comparisons (default: profiling compare only)")
    ap.add_argument("--child", choices=("decode", "compare"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        import resource

        info = child(a.child, a.base, a.comparison, a.all)
        info["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        print(json.dumps(info))
        return

    decode = [spawn("decode", a.base, a.comparison, a.all) for _ in range(a.runs)]
    full = [spawn("compare", a.base, a.comparison, a.all) for _ in range(a.runs)]
    med = statistics.median
    d, f = med(x["seconds"] for x in decode), med(x["seconds"] for x in full)
    print(f"inputs: base={a.base} comparison={a.comparison}")
    print(f"mode: {'all comparisons' if a.all else 'profiling compare only'}; "
          f"{a.runs} run(s) each, every run in a fresh subprocess (imports excluded from the timings)")
    print(f"(a) bare decode of both traces : median {d:8.3f} s   events {decode[0]['events']:,}   "
          f"peak RSS {max(x['maxrss_kib'] for x in decode) / 1024:7.1f} MiB")
    print(f"(b) full compare + xlsx        : median {f:8.3f} s   "
          f"(compare {med(x['compare_s'] for x in full):.3f} s, xlsx {med(x['xlsx_s'] for x in full):.3f} s)   "
          f"peak RSS {max(x['maxrss_kib'] for x in full) / 1024:7.1f} MiB")
    print(f"ratio (b)/(a)                  : {f / d:8.2f}" if d > 0 else "ratio (b)/(a): n/a (no JSON trace)")
    print(f"start-up + imports per process : median {med(x['wall_s'] - x['seconds'] for x in full):.3f} s (not in (b))")
    print("sheets: " + ", ".join(f"{k} {v}" for k, v in full[0]["sheets"].items()))


if __name__ == "__main__":
    main()
