#!/usr/bin/env python3
"""Compare every loadable input of the staged samples against compatible others and check invariants.

Why: the suite tests chosen pairs and seeded mutations; this sweep runs the CLI (`-o - --output_format json`)
over a deterministic matrix of real inputs and option sets, and checks properties that hold whatever the
input: a clean exit, schema-valid JSON, no NaN/inf, Diff = Comparison - Base to 2 places (durations: the exact
change of their whole ns, a half away from zero; memory: round() of the float) and the ratio rule,
integer counts, the OverallMetrics hierarchy sums, E2E = computing + uncovered communication + free, console
figures = sheet figures, self-compares at zero, swapped sides mirrored, one comparator alone = the same sheet
of the full run, and statistic sheets totalling their detail sheets. The rank phase finds the folders of ranks and
of a profiler schedule's cycles (`msprof_compare.api.ranks`; it builds NPU folders of cycles of ranks from the
text rank folders and Kineto ones from HTA's traces, `build_cycle_folders`), compares two of a kind unit by unit
(`-o FOLDER`; a unit is a rank or a `RankCycle`) and checks that each unit's report is the single compare of its
pair, with the invariants above, that the status (the gate's too), error, report names, unit lines, table, job
lines (one per cycle of ranks), job overview (schema-valid, its figures the unit reports') and the warnings of
one-sided ranks and of cycles beyond the other folder's count follow (of a `--rank_list` run: the listed ranks,
and a warning for those neither folder holds), and that `-o -`, and `--rank_list` on a single device's cycles, are
refused. It is a tool, not part of the suite: slow (minutes) and it reports findings to investigate rather than
asserting.

    python tools/sweep_samples.py                 # ../shared/samples, results in ./sweep-out
    python tools/sweep_samples.py --jobs 2 --limit 50 --out /tmp/sweep
    python tools/sweep_samples.py --phase ranks    # the folders of ranks only (no probe)
Writes OUT/runs.jsonl (one line per run) and OUT/violations-<phases>.txt (``--phase`` joined by "-"); exit 1
when a violation was found.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "msprof_compare" / "schemas" / "result.schema.json").read_text())
sys.path.insert(0, str(ROOT / "tests"))
from test_json_report import validate  # noqa: E402  (the suite's schema-subset validator)

from msprof_compare.report.ranks_console import step_key  # noqa: E402  (the console's A .. Z, AA keys)
from msprof_compare.textsafe import term_safe  # noqa: E402
from msprof_compare.units import RankCycle, Unit, unit_label, unit_noun, unit_order, unit_rank  # noqa: E402

RANKS_SCHEMA = json.loads((ROOT / "msprof_compare" / "schemas" / "ranks.schema.json").read_text())
#: The folder under OUT (and under OUT/copy) of the folders of cycles the rank phase builds: a side named
#: `BUILT/...` is there, not in the samples.
BUILT = "sweep-built"

# ------------------------------------------------------------------------------------------------ inputs


def enumerate_inputs(samples: Path) -> list[tuple[str, str]]:
    """(family, path relative to samples) for every input the CLI could be given, sorted."""
    out: set[tuple[str, str]] = set()
    for p in samples.rglob("*"):
        rel = str(p.relative_to(samples))
        if p.is_dir():
            if p.name.endswith(("_ascend_pt", "_ascend_ms")):
                out.add(("npu_db" if "/db/" in rel else "npu_dir", rel))
            elif p.name == "ASCEND_PROFILER_OUTPUT":
                out.add(("npu_apo", rel))
            elif "mindinsight" in rel and (p.name == "profiler" or p.name.startswith("device_")):
                out.add(("ms_dir", rel))
        elif p.name.endswith(".db") and "ascend_pytorch_profiler" in p.name or p.name == "msprof_0.db":
            out.add(("npu_dbfile", rel))
        elif p.name.endswith((".json", ".json.gz")):
            if p.name == "trace_view.json":
                out.add(("npu_tv", rel))
            elif rel.startswith("mindinsight"):
                out.add(("ms_file", rel))
            else:
                out.add(("gpu", rel))
    return sorted(out, key=lambda t: (t[0], t[1]))


# ------------------------------------------------------------------------------------------------ one run


def where(samples: Path, copies: Path, p: str) -> str:
    """The path of a side: one prefixed `copy:` is in the private copy of the samples (self-compares), one under
    `BUILT` in OUT (the rank phase's folders of cycles, `build_cycle_folders`)."""
    if p.startswith("copy:"):
        return str(copies / p[5:])
    return str(copies.parent / p) if p.startswith(BUILT + "/") else str(samples / p)


def run_cli(samples: Path, copies: Path, base: str, comp: str, opts: list[str], timeout: int,
            output: str = "-") -> dict:
    """One CLI run, comparison side `comp` (see `where`), the JSON report on stdout or in the folder `output`."""
    cmd = [sys.executable, "-m", "msprof_compare", "compare", "-d", where(samples, copies, comp),
           "-bp", where(samples, copies, base), "-o", output, "--output_format", "json", *opts]
    t0 = time.perf_counter()
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=copies.parent)
        rc, out, err = cp.returncode, cp.stdout, cp.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    return {"base": base, "comp": comp, "opts": opts, "rc": rc, "wall": round(time.perf_counter() - t0, 2),
            "stdout": out, "stderr": err}


# ------------------------------------------------------------------------------------------------ invariants

DIFF_RULES = {  # sheet -> [(diff column or None, ratio column or None, base value column, comparison column)]
    "OverallMetrics": [("Diff Duration(ms)", "Diff Ratio", "Duration(ms)", "Duration(ms).1")],
    "CommunicationCompare": [("Diff Duration(us)", "Diff Ratio", "Total Duration(us)", "Total Duration(us).1")],
    "OperatorCompare": [("Diff Duration(us)", "Diff Ratio", "Device Duration(us)", "Device Duration(us).1")],
    "OperatorCompareStatistic": [("Diff Duration(ms)", "Diff Ratio", "Base Device Duration(ms)",
                                  "Comparison Device Duration(ms)")],
    "MemoryCompare": [("Diff Size(KB)", "Diff Ratio", "Size(KB)", "Size(KB).1")],
    "MemoryCompareStatistic": [("Diff Memory(MB)", "Diff Ratio", "Base Allocated Memory(MB)",
                                "Comparison Allocated Memory(MB)")],
    "ApiCompare": [(None, "Diff Total Ratio", "Total Duration(ms)", "Total Duration(ms).1"),
                   (None, "Diff Self Ratio", "Self Time(ms)", "Self Time(ms).1"),
                   (None, "Diff Avg Ratio", "Avg Duration(ms)", "Avg Duration(ms).1"),
                   (None, "Diff Calls Ratio", "Calls", "Calls.1")],
    "KernelCompare": [(None, "Diff Total Ratio", "Total Duration(us)", "Total Duration(us).1"),
                      (None, "Diff Avg Ratio", "Avg Duration(us)", "Avg Duration(us).1")],
    "KernelTypeCompare": [(None, "Diff Total Ratio", "Total Duration(us)", "Total Duration(us).1"),
                          (None, "Diff Avg Ratio", "Avg Duration(us)", "Avg Duration(us).1")],
}
COUNT_COLS = re.compile(r"^(Number|Calls|Operator Number|Base Operator Number|Comparison Operator Number|Order Id|"
                        r"Top|Module Level)(\.1)?$")


#: Sheets whose duration diffs are the exact change of whole-ns cells to 0.01 unit, a half away from zero
#: (docs/differences.md), with the ns in one unit of their cells; the other diffs are round(c - b, 2).
EXACT_DIFF_NS = {"OverallMetrics": 10**6, "CommunicationCompare": 10**3, "OperatorCompare": 10**3,
                 "OperatorCompareStatistic": 10**6, "ModuleCompareStatistic": 10**6, "ModuleCompare": 10**3}


def _expected_diff(sheet: str, b: float, c: float) -> float:
    """The diff a sheet should write of its cells b, c (see EXACT_DIFF_NS), by decimal arithmetic."""
    scale = EXACT_DIFF_NS.get(sheet)
    if scale is None:
        return round(c - b, 2)
    change = Decimal(round(c * scale) - round(b * scale)) / scale
    return float(change.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)) + 0.0


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ratio_ok(r, b, c) -> bool:
    """The reference-2 §0.1 ratio of cells b, c: 1.0 when both are 0, INF when only b is, else round(c / b, 4).
    Every sheet takes its ratios of the values it writes (the API and kernel sheets of their rounded cells)."""
    if not b and not c:
        return r == 1.0
    if not b:
        return r == "INF"
    return _num(r) and abs(r - c / b) <= 5.01e-5 + 1e-12 * abs(c / b)


def sheet_map(doc: dict) -> dict[str, list[dict]]:
    return {s["name"]: s["rows"] for s in doc.get("sheets", [])}


def check_cells(doc: dict) -> list[str]:
    bad: list[str] = []
    for s in doc.get("sheets", []):
        name, rows = s["name"], s["rows"]
        for i, row in enumerate(rows):
            for col, v in row.items():
                if isinstance(v, float) and not math.isfinite(v):
                    bad.append(f"{name}[{i}].{col}: non-finite {v}")
                if isinstance(v, str) and v.strip().lower() in ("nan", "inf", "-inf", "infinity") and v != "INF":
                    bad.append(f"{name}[{i}].{col}: text {v!r}")
                if COUNT_COLS.match(col) and v is not None and v != "/":
                    if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                        bad.append(f"{name}[{i}].{col}: count {v!r}")
            for diff, ratio, bc, cc in DIFF_RULES.get(name, []):
                if bc not in row or cc not in row:
                    continue
                b, c = row[bc], row[cc]
                if name == "CommunicationCompare" and row.get("Communication OP Name") == "|" or \
                        name == "CommunicationCompare" and row.get("Communication OP Name.1") == "|":
                    continue  # task rows carry no diff
                if not (_num(b) or b is None) or not (_num(c) or c is None):
                    continue
                b0, c0 = b or 0, c or 0
                want = _expected_diff(name, b0, c0)
                if diff and row.get(diff) is not None and abs(row[diff] - want) > 1e-9:
                    bad.append(f"{name}[{i}] {diff}={row[diff]} but {c0}-{b0} to 2 places is {want}")
                if ratio and row.get(ratio) is not None and not _ratio_ok(row[ratio], b0, c0):
                    bad.append(f"{name}[{i}] {ratio}={row[ratio]} vs {bc}={b0} {cc}={c0}")
        if name in ("ModuleCompareStatistic", "ModuleCompare"):
            bad += _check_module(name, rows)
    return bad


def _check_module(name: str, rows: list[dict]) -> list[str]:
    bad = []
    unit = "ms" if name == "ModuleCompareStatistic" else "us"
    total = "[ TOTAL ]" if name == "ModuleCompareStatistic" else "TOTAL"
    for i, r in enumerate(rows):
        bt, ct = r.get(f"Device Total Time({unit})"), r.get(f"Device Total Time({unit}).1")
        bs, cs = r.get(f"Device Self Time({unit})"), r.get(f"Device Self Time({unit}).1")
        dsel = r.get(f"Device Self Time Diff({unit})")
        if r.get("Operator Name") == total:
            dtot = r.get(f"Device Total Time Diff({unit})")
            if dtot is not None and abs(dtot - _expected_diff(name, bt or 0, ct or 0)) > 1e-9:
                bad.append(f"{name}[{i}] total diff {dtot} vs {ct}-{bt}")
            if not _ratio_ok(r.get("Diff Total Ratio"), bt or 0, ct or 0):
                bad.append(f"{name}[{i}] total ratio {r.get('Diff Total Ratio')} vs {bt},{ct}")
            for side, t, s_ in (("base", bt, bs), ("comparison", ct, cs)):
                if _num(t) and _num(s_) and s_ > t + 1e-6:
                    bad.append(f"{name}[{i}] {side} self {s_} > total {t}")
        else:
            if dsel is not None and abs(dsel - _expected_diff(name, bs or 0, cs or 0)) > 1e-9:
                bad.append(f"{name}[{i}] self diff {dsel} vs {cs}-{bs}")
            if not _ratio_ok(r.get("Diff Total Ratio"), bs or 0, cs or 0):
                bad.append(f"{name}[{i}] op ratio {r.get('Diff Total Ratio')} vs {bs},{cs}")
    return bad


def check_overall(doc: dict) -> list[str]:
    rows = sheet_map(doc).get("OverallMetrics")
    if not rows:
        return []
    bad: list[str] = []
    for col, num in (("Duration(ms)", "Number"), ("Duration(ms).1", "Number.1")):
        vals = [(r["Index"], r[col] or 0) for r in rows]
        byname = {}
        for k, v in vals:
            byname.setdefault(k, v)
        top = {k: v for k, v in vals if not k.startswith("\t")}
        e2e = top.get("E2E Time", 0)
        if e2e:
            parts = top.get("Computing Time", 0) + top.get("Uncovered Communication Time", 0) + top.get("Free Time", 0)
            if abs(parts - e2e) > 5e-6:
                bad.append(f"OverallMetrics {col}: computing+uncovered+free={parts:.6f} != E2E {e2e:.6f}")
            for r in rows:
                ratio_col = "Duration Ratio" + (".1" if col.endswith(".1") else "")
                if r[ratio_col] is not None and abs(r[ratio_col] - (r[col] or 0) / e2e) > 1e-9:
                    bad.append(f"OverallMetrics {r['Index']!r} {ratio_col} {r[ratio_col]} != dur/E2E")
        # parent = sum of next-level children, for the computing block and the group / free blocks
        stack: list[tuple[int, str, float, list[float]]] = []
        blocks: list[tuple[str, float, list[float]]] = []
        for k, v in vals:
            depth = len(k) - len(k.lstrip("\t"))
            while stack and stack[-1][0] >= depth:
                d, n, pv, ch = stack.pop()
                blocks.append((n, pv, ch))
            if stack:
                stack[-1][3].append(v)
            stack.append((depth, k, v, []))
        while stack:
            d, n, pv, ch = stack.pop()
            blocks.append((n, pv, ch))
        for n, pv, ch in blocks:
            s = n.strip()
            if not ch or s in ("Uncovered Communication Time", "Uncovered Communication Overlapped"):
                continue  # groups overlap one another, so their sum is not the uncovered time
            other = byname.get("\tOther", 0)
            if s == "Computing Time" and not other and sum(ch) >= pv - 1e-6:
                continue  # Other = max(0, computing - categories): kernels running at once make the categories'
                # sum exceed the computing union (docs/differences.md, "minus overlap of categories")
            if abs(sum(ch) - pv) > 1e-5 * max(1, len(ch)):
                bad.append(f"OverallMetrics {col} {s!r}={pv} != sum of children {sum(ch):.6f} ({len(ch)})")
        # Number of Computing Time = sum of category counts
        comp_rows = [r for r in rows if r["Index"].startswith("\t") and not r["Index"].startswith("\t\t")]
        cn = next((r[num] for r in rows if r["Index"] == "Computing Time"), None)
        cat = [r[num] for r in comp_rows if _num(r[num]) and rows.index(r) < next(
            (j for j, x in enumerate(rows) if x["Index"] == "Uncovered Communication Time"), len(rows))]
        if _num(cn) and cat and sum(cat) != cn:
            bad.append(f"OverallMetrics {num}: Computing Number {cn} != sum of categories {sum(cat)}")
    return bad


def _console_cells(doc: dict) -> list[dict]:
    cs = doc.get("console_summary") or {}
    return [dict(zip(cs.get("headers", []), row, strict=False)) for row in cs.get("rows", [])]


def check_console(doc: dict, stderr: str | None) -> list[str]:
    """Console seconds = the OverallMetrics ms (3 decimals), and the printed table = the JSON's."""
    bad: list[str] = []
    cons = _console_cells(doc)
    rows = sheet_map(doc).get("OverallMetrics")
    if cons and rows:
        idx = {r["Index"]: r for r in rows}
        for side, cell in ((0, ""), (1, ".1")):
            for head, key in (("Computing Time", "Computing Time"), ("Free Time", "Free Time"),
                              ("E2E Time", "E2E Time"), ("E2E Time(Not minimal profiling)", "E2E Time")):
                if head in cons[side] and key in idx:
                    want = f"{(idx[key]['Duration(ms)' + cell] or 0) / 1000:.3f}s"
                    got = cons[side][head].strip()
                    if got != want:
                        bad.append(f"console {head} side {side}: {got} != sheet {want}")
            head = "Uncovered Communication Time(Wait Time)"
            key = "Uncovered Communication Time"
            if head in cons[side] and key in idx:
                want = f"{(idx[key]['Duration(ms)' + cell] or 0) / 1000:.3f}s"
                if not cons[side][head].strip().startswith(want):
                    bad.append(f"console {head} side {side}: {cons[side][head]} vs sheet {want}")
    frames = {(f["side"], f["metric"]): f for f in (doc.get("frames") or {}).get("overall", [])}
    for side, name in enumerate(("base", "comparison")):
        if not cons or (name, "computing") not in frames or frames.get((name, "mc2")):
            continue
        for head, metrics in (("Cube Time(Num)", ("matmul_cube", "matmul_vector", "other_cube")),
                              ("Vector Time(Num)", ("vector_trans", "vector_notrans")),
                              ("Conv Time(Forward)(Num)", ("conv_fwd_cube", "conv_fwd_vector")),
                              ("Conv Time(Backward)(Num)", ("conv_bwd_cube", "conv_bwd_vector")),
                              ("Flash Attention Time(Forward)(Num)", ("fa_fwd_cube", "fa_fwd_vector")),
                              ("Flash Attention Time(Backward)(Num)", ("fa_bwd_cube", "fa_bwd_vector")),
                              ("SDMA Time(Num)", ("sdma_tm", "sdma_stream"))):
            if head in cons[side]:
                ns = sum(frames[(name, m)]["ns"] for m in metrics)
                n = sum(frames[(name, m)]["count"] for m in metrics)
                got = cons[side][head].strip()
                want = {f"{ns / 1e9:.3f}s({n})", f"{(ns // 1000) / 1e6:.3f}s({n})"}  # ns or us precision
                if got not in want:
                    bad.append(f"console {head} {name}: {got} != frames {sorted(want)}")
    if cons and stderr is not None:  # the table printed on stderr carries the same cells (None: not printed)
        for row in doc["console_summary"]["rows"]:
            if _table_line(stderr, row[0], row[1:]) is None:
                bad.append("console table row not found on stderr")
    return bad


def _table_line(text: str, label: str, cells: list) -> list[str] | None:
    want = [str(c).strip() for c in cells]
    for ln in text.splitlines():
        parts = [p.strip() for p in ln.strip().strip("|").split("|")]
        if parts and parts[0] == label and parts[1:] == want:
            return parts
    return None


def _sum_matches(sm: dict, detail: str, stat: str, cols: tuple, scale: int, unit: str) -> list[str]:
    """The detail sheet's column summed and scaled equals the statistic sheet's column summed, per side."""
    bad = []
    for dcol, scol in cols:
        a = sum(r[dcol] or 0 for r in sm[detail]) / scale
        b = sum(r[scol] or 0 for r in sm[stat])
        if abs(a - b) > 1e-6 * max(1, abs(a)):
            bad.append(f"{detail} {dcol} total {a:.6f} {unit} != statistic {b:.6f}")
    return bad


def check_totals(doc: dict) -> list[str]:
    """Statistic sheets total their detail sheets where both measure the same thing."""
    sm = sheet_map(doc)
    bad: list[str] = []
    if "OperatorCompare" in sm and "OperatorCompareStatistic" in sm:
        bad += _sum_matches(sm, "OperatorCompare", "OperatorCompareStatistic",
                            (("Device Duration(us)", "Base Device Duration(ms)"),
                             ("Device Duration(us).1", "Comparison Device Duration(ms)")), 1000, "ms")
        for dcol, scol in (("Operator Name", "Base Operator Number"),
                           ("Operator Name.1", "Comparison Operator Number")):
            a = sum(1 for r in sm["OperatorCompare"] if r[dcol] not in (None, ""))
            b = sum(r[scol] or 0 for r in sm["OperatorCompareStatistic"])
            if a != b:
                bad.append(f"OperatorCompare {dcol} count {a} != statistic {b}")
    if "MemoryCompare" in sm and "MemoryCompareStatistic" in sm:
        bad += _sum_matches(sm, "MemoryCompare", "MemoryCompareStatistic",
                            (("Size(KB)", "Base Allocated Memory(MB)"),
                             ("Size(KB).1", "Comparison Allocated Memory(MB)")), 1024, "MB")
    if "ModuleCompare" in sm and "ModuleCompareStatistic" in sm:
        for dcol, scol in (("Device Total Time(us)", "Device Total Time(ms)"),
                           ("Device Total Time(us).1", "Device Total Time(ms).1")):
            a = sum(r[dcol] or 0 for r in sm["ModuleCompare"] if r["Operator Name"] == "TOTAL"
                    or r.get("Operator Name.1") == "TOTAL") / 1000
            b = sum(r[scol] or 0 for r in sm["ModuleCompareStatistic"] if r["Operator Name"] == "[ TOTAL ]")
            if abs(a - b) > 1e-6 * max(1, abs(a)):
                bad.append(f"ModuleCompare {dcol} TOTAL sum {a:.6f} ms != statistic {b:.6f}")
    if "CommunicationCompare" in sm:
        for r in sm["CommunicationCompare"]:
            for sfx in ("", ".1"):
                n, t = r.get("Calls" + sfx), r.get("Total Duration(us)" + sfx)
                avg, mx, mn = (r.get(k + sfx) for k in ("Avg Duration(us)", "Max Duration(us)", "Min Duration(us)"))
                if _num(n) and n > 0 and _num(t):
                    if abs(avg - t / n) > 1e-6 * max(1, abs(avg)) or not (mn - 1e-9 <= avg <= mx + 1e-9):
                        bad.append(f"CommunicationCompare row {r['Order Id']}{sfx}: avg/min/max "
                                   f"{avg} {mn} {mx} vs {t}/{n}")
    for name in ("KernelCompare", "KernelTypeCompare"):
        for r in sm.get(name, []):
            for sfx in ("", ".1"):
                n, t = r.get("Calls" + sfx), r.get("Total Duration(us)" + sfx)
                avg, mx, mn = (r.get(k + sfx) for k in ("Avg Duration(us)", "Max Duration(us)", "Min Duration(us)"))
                if _num(n) and n > 0 and _num(t) and _num(avg):
                    if abs(avg - t / n) > 0.0051 + 0.005 / n or not (mn - 0.006 <= avg <= mx + 0.006):
                        bad.append(f"{name} row {r['Order Id']}{sfx}: avg/min/max {avg} {mn} {mx} vs {t}/{n}")
    return bad


def check_summary(doc: dict) -> list[str]:
    """The waterfall's integer-ns steps add up from base to comparison E2E; frames agree with the sheet."""
    bad: list[str] = []
    summ = doc.get("summary") or {}
    e2e, wf = summ.get("e2e") or {}, summ.get("waterfall") or []
    if wf:
        start, end, mid = wf[0], wf[-1], wf[1:-1]
        if start["Base(ns)"] != e2e.get("base_ns") or end["Comparison(ns)"] != e2e.get("comparison_ns"):
            bad.append("waterfall: ends are not the E2E times")
        cum = start["Base(ns)"]
        for st in mid:
            if st["Delta(ns)"] != (st["Comparison(ns)"] or 0) - (st["Base(ns)"] or 0):
                bad.append(f"waterfall {st['Step']!r}: delta {st['Delta(ns)']} != comparison - base")
            cum += st["Delta(ns)"]
            if abs(st["Cumulative(ms)"] - cum / 1e6) > 1e-9:
                bad.append(f"waterfall {st['Step']!r}: cumulative {st['Cumulative(ms)']} != {cum / 1e6}")
        if cum != e2e.get("comparison_ns"):
            bad.append(f"waterfall: steps reach {cum} ns, comparison E2E is {e2e.get('comparison_ns')}")
        if e2e.get("diff_ns") != (e2e.get("comparison_ns") or 0) - (e2e.get("base_ns") or 0):
            bad.append("summary e2e: diff_ns != comparison - base")
    rows = {r["Index"]: r for r in sheet_map(doc).get("OverallMetrics", [])}
    frames = {(f["side"], f["metric"]): f for f in (doc.get("frames") or {}).get("overall", [])}
    for side, sfx in (("base", ""), ("comparison", ".1")):
        for metric, index in (("computing", "Computing Time"), ("free", "Free Time"), ("e2e", "E2E Time"),
                              ("uncovered_communication", "Uncovered Communication Time")):
            f, r = frames.get((side, metric)), rows.get(index)
            if f and r and abs(f["ns"] / 1e6 - (r["Duration(ms)" + sfx] or 0)) > 1e-9:
                bad.append(f"frames {side} {metric} {f['ns']} ns != sheet {index} {r['Duration(ms)' + sfx]} ms")
        f, r = frames.get((side, "computing")), rows.get("Computing Time")
        if f and r and _num(r["Number" + sfx]) and f["count"] != r["Number" + sfx]:
            bad.append(f"frames {side} computing count {f['count']} != sheet Number {r['Number' + sfx]}")
    for m in (doc.get("frames") or {}).get("match_rate", []):
        for side in ("base", "comparison"):
            tot = m[f"{side}_total"]
            if not 0 <= m["matched"] <= tot or (tot and abs(m[f"{side}_rate"] - m["matched"] / tot) > 1e-12):
                bad.append(f"match_rate {m['what']} {side}: {m['matched']}/{tot} rate {m[f'{side}_rate']}")
    for i, r in enumerate(sheet_map(doc).get("ApiCompare", [])):
        for sfx in ("", ".1"):
            n, t, avg = r.get("Calls" + sfx), r.get("Total Duration(ms)" + sfx), r.get("Avg Duration(ms)" + sfx)
            if _num(n) and n > 0 and _num(t) and _num(avg) and abs(avg - round(t / n, 2)) > 1e-9:
                bad.append(f"ApiCompare[{i}]{sfx}: avg {avg} != round({t}/{n}, 2)")
    return bad


def check_self(doc: dict) -> list[str]:
    """Both sides read the same data: every diff is 0, every ratio 1, nothing one-sided."""
    bad: list[str] = []
    for s in doc.get("sheets", []):
        name = s["name"]
        if name == "Summary":
            continue
        for i, row in enumerate(s["rows"]):
            for col, v in row.items():
                if ("Diff" in col and "Ratio" not in col) and _num(v) and v != 0:
                    bad.append(f"self {name}[{i}] {col}={v}")
                if "Ratio" in col and col.startswith("Diff") and v not in (None, 1.0):
                    bad.append(f"self {name}[{i}] {col}={v}")
    e2e = (doc.get("summary") or {}).get("e2e") or {}
    if e2e.get("diff_ns"):
        bad.append(f"self E2E diff {e2e['diff_ns']} ns")
    return bad


def _side_view(doc: dict, swap: bool) -> dict[str, list[tuple]]:
    """Per sheet, the sorted multiset of (base cells, comparison cells, diffs), sides swapped when asked."""
    view = {}
    for s in doc.get("sheets", []):
        if s["name"] in ("Summary",):
            continue
        cols = s["columns"]
        (b0, b1), (c0, c1) = s["base_span"], s["comparison_span"]
        bcols, ccols = cols[b0:b1 + 1], cols[c0:c1 + 1]
        rows = []
        for r in s["rows"]:
            b = tuple(_norm(r[c]) for c in bcols)
            c = tuple(_norm(r[c]) for c in ccols)
            rows.append((c, b) if swap else (b, c))
        view[s["name"]] = sorted(rows, key=repr)
    return view


def _norm(v):
    return round(v, 6) if isinstance(v, float) else v


# Sheets whose rows are pairs chosen by the quirk-faithful sequence matching (reference-2 §0.5): its ties are
# broken by side, so swapped inputs may pair rows differently (same rows on each side, other partners).
SEQUENCE_MATCHED = {"OperatorCompare", "MemoryCompare", "ModuleCompare"}


def check_swap(doc_ab: dict, doc_ba: dict) -> list[str]:
    bad = []
    a, b = _side_view(doc_ab, False), _side_view(doc_ba, True)
    if set(a) != set(b):
        bad.append(f"swap: sheets {sorted(a)} vs {sorted(b)}")
    for name in sorted(set(a) & set(b)):
        if name in SEQUENCE_MATCHED:  # the pairing breaks ties by side (reference-2 §0.5): compare each side
            for k, side in ((0, "base"), (1, "comparison")):
                if sorted((x[k] for x in a[name]), key=repr) != sorted((x[k] for x in b[name]), key=repr):
                    bad.append(f"swap: {name} {side} cells differ")
            continue
        if a[name] != b[name]:
            only_a = [x for x in a[name] if x not in b[name]]
            bad.append(f"swap: {name} differs ({len(a[name])} vs {len(b[name])} rows; e.g. {only_a[:1]!r:.300})")
    ea, eb = (doc_ab.get("summary") or {}).get("e2e") or {}, (doc_ba.get("summary") or {}).get("e2e") or {}
    if ea.get("diff_ns") is not None and eb.get("diff_ns") is not None and ea["diff_ns"] != -eb["diff_ns"]:
        bad.append(f"swap: E2E diff {ea['diff_ns']} vs {eb['diff_ns']}")
    return bad


def check_subset(full: dict, part: dict, sheets: set[str]) -> list[str]:
    """A comparator run alone (or with details hidden) gives the same sheet as the full run."""
    fm, pm = sheet_map(full), sheet_map(part)
    bad = []
    for name in sorted(sheets):
        if (name in fm) != (name in pm):
            bad.append(f"subset: {name} in full={name in fm} in part={name in pm}")
        elif name in fm and fm[name] != pm[name]:
            bad.append(f"subset: {name} differs ({len(fm[name])} vs {len(pm[name])} rows)")
    return bad


def unaffected(opts: list[str]) -> set[str]:
    """Sheets an option set must leave as the default run has them (reference-1 §3, reference-2 §2.5/§9): the
    matching options touch only the operator / module / memory sheets, the kernel-type option only the kernel
    sheet, and the step options (the only step of these profiles) not OverallMetrics."""
    if opts[0] in ("--use_input_shape", "--max_kernel_num", "--disable_module"):
        return {"OverallMetrics", "CommunicationCompare", "ApiCompare", "KernelCompare"}
    if opts[0] == "--use_kernel_type":
        return {"OverallMetrics", "CommunicationCompare", "ApiCompare", "OperatorCompare", "ModuleCompare",
                "MemoryCompare", "OperatorCompareStatistic", "ModuleCompareStatistic", "MemoryCompareStatistic"}
    if opts[0] == "--base_step":
        return {"OverallMetrics"}
    return set()


def check_run(r: dict) -> tuple[dict | None, list[str]]:
    bad: list[str] = []
    if "Traceback" in r["stderr"] or "Traceback" in r["stdout"]:
        bad.append("traceback: " + r["stderr"].strip().splitlines()[-1][:200])
    gate = r["opts"][r["opts"].index("--fail_on_regression") + 1] if "--fail_on_regression" in r["opts"] else None
    if r["rc"] not in (0, 1, 2) and not (r["rc"] == 3 and gate):  # 2: a usage error, such as a step the data lacks
        bad.append(f"exit status {r['rc']}")  # (docs/differences.md); 3: the gate's verdict, its report written
    if r["rc"] in (1, 2):
        errs = [ln for ln in r["stderr"].splitlines() if "ERROR" in ln or "rror:" in ln]
        if len(errs) != 1:
            bad.append(f"exit {r['rc']} with {len(errs)} error lines: {errs[:3]}")
        if r["stdout"].strip():
            bad.append(f"exit {r['rc']} but JSON written on stdout")
        return None, bad
    if r["rc"] not in (0, 3):
        return None, bad
    try:
        doc = json.loads(r["stdout"], parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except ValueError as e:
        return None, bad + [f"stdout is not strict JSON: {e}"]
    if gate:  # exit 3 where the comparison's E2E time exceeds the base's by more than the threshold, said so
        e2e = (_rank_ns(doc) or {}).get("E2E Time")
        over = e2e is not None and e2e[0] > 0 and (e2e[1] - e2e[0]) / e2e[0] * 100 > float(gate)
        if e2e is not None and r["rc"] != 3 * over or ("Performance regression: " in r["stderr"]) != (r["rc"] == 3):
            bad.append(f"gate {gate}: exit {r['rc']} of E2E {e2e}")
    return doc, bad + check_doc(doc, r["stderr"])


def check_doc(doc: dict, stderr: str | None) -> list[str]:
    """The invariants of one JSON report; `stderr` of its run (None: its console table was not printed)."""
    return [f"schema: {e}" for e in validate(doc, SCHEMA)[:5]] + check_cells(doc) + check_overall(doc) \
        + check_console(doc, stderr) + check_totals(doc) + check_summary(doc)


# ------------------------------------------------------------------------------------------------ plan

ALONE = {  # option -> sheets it produces (besides Summary)
    "--enable_profiling_compare": {"OverallMetrics"},
    "--enable_operator_compare": {"OperatorCompare", "OperatorCompareStatistic", "ModuleCompare",
                                  "ModuleCompareStatistic"},
    "--enable_memory_compare": {"MemoryCompare", "MemoryCompareStatistic"},
    "--enable_communication_compare": {"CommunicationCompare"},
    "--enable_api_compare": {"ApiCompare"},
    "--enable_kernel_compare": {"KernelCompare"},
}
STEPS = ("50", "13", "2")  # the steps of the msinsight AlexNet runs, the LLM run and the server test data
SUBSET_OPTS = [[o] for o in ALONE] + [["--disable_details"]]
EXTRA_OPTS = [["--use_kernel_type"], ["--disable_module"], ["--use_input_shape"], ["--max_kernel_num", "4"],
              ["--max_kernel_num", "10"]]


def _doc_name(key: tuple) -> str:
    return hashlib.sha1(repr(key).encode()).hexdigest()[:16] + ".json.gz"


def plan_pairs(samples: Path, loadable: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (base, comparison) pairs: every NPU profile directory against every other both ways, a thinned GPU
    matrix both ways, GPU vs NPU text / DB, the other NPU input forms and the MindSpore legacy files against
    NPU directories, and those files among themselves; deterministic."""
    fams: dict[str, list[str]] = {}
    for fam, p in loadable:
        fams.setdefault(fam, []).append(p)
    size = lambda p: (samples / p).stat().st_size  # noqa: E731
    npu = fams.get("npu_dir", []) + fams.get("npu_db", [])
    gpu = sorted(fams.get("gpu", []), key=size)
    small = [p for p in gpu if size(p) < 2_000_000][::3]
    big = [p for p in gpu if size(p) >= 2_000_000]
    pairs = list(itertools.permutations(npu, 2)) + list(itertools.permutations(small, 2))
    for x, y in zip(big, big[1:], strict=False):
        pairs += [(x, y), (y, x)]
    same_model = {}  # tracelens h100 / mi300 traces of one model, kineto runs of one script
    for p in gpu:
        key = re.sub(r"/(h100|mi300)/", "/*/", p) if "tracelens" in p else re.sub(r"worker0\.\d+", "worker0", p)
        same_model.setdefault(key, []).append(p)
    for group in same_model.values():
        pairs += list(itertools.permutations(group, 2))
    rep_npu = [p for p in npu if p.endswith(("text/level1/rank0_ascend_pt", "text/level0/rank1_ascend_pt",
                                              "db/level2/rank0_ascend_pt", "db/level0/rank0_ascend_pt"))]
    for g in gpu[::6]:
        for n in rep_npu:
            pairs += [(g, n), (n, g)]
    other = fams.get("npu_apo", []) + fams.get("npu_dbfile", []) + fams.get("npu_tv", [])
    ms = [p for p in fams.get("ms_file", []) if re.search(r"(msprof|timeline_display)_", Path(p).name)]
    for o in other + ms:
        pairs += [(o, rep_npu[0]), (rep_npu[0], o)]
    for x, y in itertools.combinations(ms + fams.get("npu_tv", [])[:3], 2):
        pairs += [(x, y), (y, x)]
    return list(dict.fromkeys((b, c) for b, c in pairs if b != c))


# ------------------------------------------------------------------------------------------------ rank folders

#: The report a rank-by-rank compare writes per unit (README "Multi-rank runs"), with ``--output_format json``:
#: ``rank{R}`` (a rank), ``rank{R}_cycle{k}`` (a schedule's cycle of a rank), ``cycle{k}`` (a single device's cycle).
UNIT_REPORT = re.compile(r"^performance_comparison_result_(?:rank(\d+)_cycle(\d+)|rank(\d+)|cycle(\d+))"
                         r"_(\d{14})\.json$")
#: The job overview a complete rank-by-rank compare writes beside them: ``ranks``, or ``cycles`` for a single device's
#: cycles (they have no ranks).
OVERVIEW_REPORT = re.compile(r"^performance_comparison_result_(?:ranks|cycles)_(\d{14})\.json$")
#: Option sets of the rank phase besides the default one; the step options only where both folders are DB exports.
#: The gate without the profiling compare makes a breakdown of its own, whose E2E times the rank lines, the table,
#: the job line and the overview show.
RANK_OPTS = [["--enable_profiling_compare"], ["--enable_operator_compare"], ["--disable_details"],
             ["--enable_api_compare", "--fail_on_regression", "20"]]
RANK_STEPS = ("50", "13")  # the DB samples' step, and one they lack (a usage error on the first rank)
#: A rank no sample folder holds: the `--rank_list` run of each chosen pair lists it beside their highest common rank
#: (warned about, recorded not compared, the other common ranks left out without a word).
RANK_LIST_ABSENT = 99
#: OverallMetrics rows of the rank table, in its column order after the E2E ones.
RANK_METRICS = ("E2E Time", "Computing Time", "Uncovered Communication Time", "Free Time")
#: The folders of a profiler schedule's cycles of ranks 0 and 1 the rank phase builds (`build_cycle_folders`) from
#: the samples' text rank folders: {folder: the level of each cycle, in recorded order}; 2 cycles against 3 leaves
#: the third not compared.
CYCLE_LAYOUT = {"npu_cycles_2": ("level0", "level1"), "npu_cycles_3": ("level1", "level0", "level1")}
CYCLE_SOURCE = "msinsight/test/data/pytorch/text"
CYCLE_END = 1736408884023552840  # ns: the collection ends the built cycles record, 10 ns apart
#: The Kineto folders of a schedule's cycles of ranks 0 and 1 the rank phase builds (`build_cycle_folders`): {folder:
#: (the source of each cycle, in recorded order; whether each rank's cycles are in a subfolder of their own)}. A
#: source is two real traces, rank 0's and rank 1's (`KINETO_CYCLE_SOURCES`), copied with their distributedInfo.rank
#: set to that rank; the names are tensorboard_trace_handler's (`{worker}.{ms}.pt.trace.json.gz`, one worker per
#: rank, the ms giving the recorded order). Flat, every rank's cycles in on_trace_ready's one folder, and a subfolder
#: per rank (a rank's logs kept apart), as discovery reads both.
KINETO_CYCLE_LAYOUT = {"kineto_cycles_2": (("job", "bench"), False),
                       "kineto_cycles_3": (("bench", "job", "bench"), True)}
#: {source: (rank 0's trace, rank 1's)}: HTA's two ranks of one job (trace_filter, rank 0 and 1 recorded), and two
#: A100 benchmark traces of critical_path (both record rank 0: the copy of simple_add's records rank 1).
KINETO_CYCLE_SOURCES = {
    "job": ("hta/tests/data/trace_filter/sampled_rank-0.json.gz", "hta/tests/data/trace_filter/sampled_rank-1.json.gz"),
    "bench": ("hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
              "hta/tests/data/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz")}
KINETO_CYCLE_MS = 1736408884023  # the first built cycle's timestamp in the names (ms), cycles 1000 ms apart
_DISTRIBUTED_RANK = re.compile(rb'("distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*)-?[0-9]+')


def report_unit(name: str) -> tuple[Unit, str] | None:
    """(unit, timestamp) of a unit report's file name (`UNIT_REPORT`); None for any other name."""
    m = UNIT_REPORT.match(name)
    if m is None:
        return None
    rank, cycle, alone, single, stamp = m.groups()
    return (RankCycle(int(rank), int(cycle)) if rank else int(alone) if alone else RankCycle(None, int(single))), stamp


def folder_kind(units: dict[Unit, str]) -> str:
    """"rank", "rank cycle" (a schedule's cycles of ranks) or "cycle" (a single device's): only folders of one
    kind compare unit by unit (the CLI refuses cycles against ranks, and a single device's against ranks')."""
    return unit_noun(next(iter(units), 0))


def build_cycle_folders(samples: Path, out: Path) -> None:
    """`CYCLE_LAYOUT`'s folders under OUT/BUILT and OUT/copy/BUILT (self-compares), as torch_npu writes a schedule's
    cycles: `{worker}_{timestamp}_ascend_pt`, one worker per rank, copies of the samples' text level rank folders
    whose profiler_info_N.json records the cycle's collection end (the recorded order, against the names' order);
    none where the samples lack the text levels. Why: the samples hold no NPU folder of cycles. So too
    `KINETO_CYCLE_LAYOUT`'s Kineto folders (`_build_kineto_cycles`), none where the samples lack their traces."""
    src = samples / CYCLE_SOURCE
    for root in (out / BUILT, out / "copy" / BUILT):
        shutil.rmtree(root, ignore_errors=True)
        _build_kineto_cycles(samples, root)
        if not all((src / lv / f"rank{r}_ascend_pt").is_dir() for lv in ("level0", "level1") for r in (0, 1)):
            continue
        for folder, levels in CYCLE_LAYOUT.items():
            for k, level in enumerate(levels, 1):
                for r in (0, 1):
                    dst = root / folder / f"host_{r}_2025010100000000{len(levels) + 1 - k}_ascend_pt"
                    info = f"profiler_info_{r}.json"
                    shutil.copytree(src / level / f"rank{r}_ascend_pt", dst, ignore=shutil.ignore_patterns(info))
                    doc = json.loads((src / level / f"rank{r}_ascend_pt" / info).read_text())
                    doc["end_info"]["collectionTimeEnd"] = CYCLE_END + 10 * k
                    (dst / info).write_text(json.dumps(doc))


def _build_kineto_cycles(samples: Path, root: Path) -> None:
    """`KINETO_CYCLE_LAYOUT`'s folders under `root`: cycle k of rank r a copy of its source's rank r trace, the
    first `distributedInfo.rank` of its decompressed text set to r (no other byte changed; the traces are small),
    named `node0_{1000 + r}.{ms}.pt.trace.json.gz`. Why: the samples hold no Kineto folder of cycles of ranks."""
    if not all((samples / p).is_file() for pair in KINETO_CYCLE_SOURCES.values() for p in pair):
        return
    for folder, (sources, per_rank) in KINETO_CYCLE_LAYOUT.items():
        for k, source in enumerate(sources, 1):
            for r, trace in enumerate(KINETO_CYCLE_SOURCES[source]):
                text = gzip.decompress((samples / trace).read_bytes())
                text, n = _DISTRIBUTED_RANK.subn(rb"\g<1>" + str(r).encode(), text, count=1)
                assert n == 1, f"{trace}: no distributedInfo.rank"
                name = f"node0_{1000 + r}.{KINETO_CYCLE_MS + 1000 * k}.pt.trace.json.gz"
                dst = root / folder / (f"rank{r}" if per_rank else "") / name
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(gzip.compress(text, mtime=0))


def find_rank_folders(top: Path, names_from: Path | None = None) -> dict[str, dict[Unit, str]]:
    """{folder: {unit: input}}, relative to `names_from` (default `top`), of every folder under `top` the project's
    own rank discovery (`msprof_compare.api.ranks`) takes as a folder of ranks or of a schedule's cycles, sorted: the
    CLI compares two of one kind unit by unit. Not a folder whose inputs a folder above it holds all of (a rank's
    subfolder of cycles, `rank0/w.<ms>.pt.trace.json`: its rank's units of the folder above, compared there)."""
    from msprof_compare.api import ranks
    from msprof_compare.errors import ProfileError

    rel = names_from or top
    found: dict[str, dict[Unit, str]] = {}
    held: dict[Path, set[str]] = {}
    for d in sorted(p for p in top.rglob("*") if p.is_dir()):
        try:
            by_unit = ranks(str(d))
        except ProfileError:
            continue
        inputs = set(by_unit.values())
        if any(inputs <= held[a] for a in d.parents if a in held):
            continue
        held[d] = inputs
        found[str(d.relative_to(rel))] = {k: str(Path(v).relative_to(rel)) for k, v in by_unit.items()}
    return found


def plan_rank_pairs(samples: Path, folders: dict[str, dict[Unit, str]]) -> list[tuple[str, str]]:
    """(base, comparison) folder pairs: every folder against its private copy; every NPU folder of ranks (its ranks
    hold ASCEND_PROFILER_OUTPUT) against every other both ways, Kineto folders of ranks only against themselves;
    every folder of a schedule's cycles of ranks against every other of its family (Kineto traces or NPU folders:
    the pair phase compares the families; cycle counts unequal too); a single device's cycles against another's of
    as many cycles (the tb_plugin runs: one model)."""
    npu = [f for f, by_rank in folders.items() if folder_kind(by_rank) == "rank"
           and any((samples / p / "ASCEND_PROFILER_OUTPUT").is_dir() for p in by_rank.values())]
    cycles = [f for f, units in folders.items() if folder_kind(units) == "rank cycle"]
    single = [(b, c) for b, c in itertools.permutations(folders, 2)
              if folder_kind(folders[b]) == folder_kind(folders[c]) == "cycle" and len(folders[b]) == len(folders[c])]
    return ([(f, "copy:" + f) for f in folders] + list(itertools.permutations(npu, 2))
            + [(b, c) for b, c in itertools.permutations(cycles, 2) if _traces(folders[b]) == _traces(folders[c])]
            + single)


def _traces(units: dict[Unit, str]) -> bool:
    """Whether a folder's units are Kineto traces (files), not NPU profiling directories."""
    return all(p.endswith((".json", ".json.gz")) for p in units.values())


def rank_option_jobs(samples: Path, folders: dict[str, dict[Unit, str]], pairs: list[tuple[str, str]],
                     n: int) -> list[tuple[str, str, list[str]]]:
    """The option sets on `n` pairs of folders of each kind (`folder_kind`) with two units in common or more
    (self-compares first, then the others, each in hash order); the step options where both folders are DB exports;
    `--rank_list` where the units have ranks."""
    h = lambda s: hashlib.sha1(s.encode()).hexdigest()  # noqa: E731

    def db(f: str) -> bool:
        f = f.removeprefix("copy:")
        return all(any((samples / p / "ASCEND_PROFILER_OUTPUT").glob("*.db")) for p in folders[f].values())

    multi = [(b, c) for b, c in pairs if len(set(folders[b]) & set(folders[c.removeprefix("copy:")])) > 1]
    jobs: list[tuple[str, str, list[str]]] = []
    for kind in dict.fromkeys(folder_kind(folders[b]) for b, _ in multi):
        chosen = sorted([p for p in multi if folder_kind(folders[p[0]]) == kind],
                        key=lambda p: (not p[1].startswith("copy:"), h(p[0] + p[1])))[:n]
        jobs += [(b, c, o) for b, c in chosen for o in RANK_OPTS]
        jobs += [(b, c, ["--base_step", st, "--comparison_step", st]) for b, c in chosen if db(b) and db(c)
                 for st in RANK_STEPS]
        jobs += [(b, c, ["--enable_profiling_compare", "--rank_list",
                         f"{max(unit_rank(u) for u in rank_singles(folders, b, c))},{RANK_LIST_ABSENT}"])
                 for b, c in chosen if kind != "cycle"]  # a single device's cycles: refused (checked once)
    return jobs


def split_rank_list(opts: list[str] | tuple[str, ...]) -> tuple[list[str], set[int] | None]:
    """A rank-by-rank run's options without `--rank_list` (its single compares': a single compare refuses the flag)
    and the ranks it lists (None: every rank)."""
    opts = list(opts)
    if "--rank_list" not in opts:
        return opts, None
    i = opts.index("--rank_list")
    return opts[:i] + opts[i + 2:], {int(x) for x in opts[i + 1].split(",")}


def rank_singles(folders: dict[str, dict[Unit, str]], base: str, comp: str,
                 listed: set[int] | None = None) -> dict[Unit, tuple[str, str]]:
    """{unit: (base input, comparison input)} of the units both folders hold (of the `listed` ranks, when given), in
    the order the CLI compares them (`unit_order`), as the sweep names sides."""
    cf = comp.removeprefix("copy:")
    pre = "copy:" if comp.startswith("copy:") else ""
    common = {u for u in set(folders[base]) & set(folders[cf]) if listed is None or unit_rank(u) in listed}
    return {u: (folders[base][u], pre + folders[cf][u]) for u in sorted(common, key=unit_order)}


def _ms(ns: int, sign: bool = False, places: int = 3) -> str:
    """ns as the console's ms with 3 decimals (or ``places``), a half away from zero, by decimal arithmetic."""
    q = (Decimal(ns) / 10**6).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{q:+.{places}f}" if sign else f"{q:.{places}f}"


def _ms_change(b: int, c: int) -> str:
    """"B ms -> C ms (D ms": a line's two times and change, to the fewest decimals from 3 (6: whole ns) at which two
    different times read apart and their change is no zero, as the verdict, gate, unit and job lines write them."""
    places = next((p for p in range(3, 7) if b == c or (_ms(b, places=p) != _ms(c, places=p)
                                                          and Decimal(_ms(c - b, places=p)) != 0)), 6)
    return f"{_ms(b, places=places)} ms -> {_ms(c, places=places)} ms ({_ms(c - b, True, places)} ms"


def _pct(b: int, c: int) -> str:
    return f"{(c - b) / b * 100:+.2f}%" if b else "N/A"


def _rank_ns(doc: dict) -> dict[str, tuple[int, int]] | None:
    """{OverallMetrics row: (base ns, comparison ns)} of `RANK_METRICS`; None without the sheet. A pair without
    communication has no Uncovered Communication Time row (as the original's sheet): 0 on both sides."""
    rows = {r["Index"]: r for r in sheet_map(doc).get("OverallMetrics", [])}
    if not all(m in rows for m in RANK_METRICS if m != "Uncovered Communication Time"):
        return _gate_ns(doc)
    none = {"Duration(ms)": 0, "Duration(ms).1": 0}
    return {m: (round((rows.get(m, none)["Duration(ms)"] or 0) * 10**6),
                round((rows.get(m, none)["Duration(ms).1"] or 0) * 10**6)) for m in RANK_METRICS}


def _rank_comm(doc: dict | None) -> tuple[int, int] | None:
    """(base ns, comparison ns) of the report's `summary.communication` where both sides recorded communication: the
    rank line, table and overview figures of a unit compared without a time breakdown; None otherwise."""
    comm = ((doc or {}).get("summary") or {}).get("communication")
    if not comm or not (comm.get("base_recorded") and comm.get("comparison_recorded")):
        return None
    return round(comm["base_ms"] * 1e6), round(comm["comparison_ms"] * 1e6)


def _largest_step(doc: dict) -> tuple[str, int] | None:
    """(name, delta ns) of the step of the report's `summary.waterfall` (its start and end rows aside) of the largest
    absolute Delta(ns), the first on a tie; None where no step moved: the rank table's and overview's largest step."""
    steps = [(w["Step"], w["Delta(ns)"] or 0) for w in (doc.get("summary") or {}).get("waterfall") or []
             if w["Category"] not in ("start", "end")]
    best = max(steps, key=lambda t: abs(t[1]), default=None)  # max keeps the first of equal keys
    return best if best is not None and best[1] else None


def _gate_ns(doc: dict) -> dict[str, tuple[int, int]] | None:
    """{"E2E Time": (base ns, comparison ns)} of a report whose run made the time breakdown for the gate alone
    (--fail_on_regression without the profiling compare): the E2E times the gate judged (its `summary.e2e`), which
    the rank line, the table and the overview show; None for any other report."""
    opts, e2e = doc.get("options") or {}, (doc.get("summary") or {}).get("e2e")
    if opts.get("enable_profiling_compare") or opts.get("fail_on_regression") is None or not e2e:
        return None
    return {"E2E Time": (e2e["base_ns"], e2e["comparison_ns"])}


def _strip_volatile(doc: dict) -> dict:
    """The report but for the time it was made and the paths of its inputs (a rank's report names them as the
    rank folder gives them)."""
    doc = dict(doc)
    doc.pop("generated_at", None)
    for side in ("base", "comparison"):
        if isinstance(doc.get(side), dict):
            doc[side] = {k: v for k, v in doc[side].items() if k != "path"}
    return doc


def _first_difference(a, b, at: str = "") -> str:
    """Where two unequal JSON values first differ, for a violation that can be looked up."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{at}.{k}: only in {'single' if k in b else 'rank report'}"
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], f"{at}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{at}[{i}]")
    return f"{at}: {a!r:.120} vs {b!r:.120}"


def _unit_cells(unit: Unit) -> list[str]:
    """The table cells naming a unit: its rank, its rank and cycle, or its cycle (a single device's)."""
    if not isinstance(unit, RankCycle):
        return [str(unit)]
    return [str(unit.cycle)] if unit.rank is None else [str(unit.rank), str(unit.cycle)]


#: The table's columns naming the units, by `folder_kind`.
UNIT_COLUMNS = {"rank": ["Rank"], "rank cycle": ["Rank", "Cycle"], "cycle": ["Cycle"]}


def _slowest(timed: list[tuple[Unit, int, int]]) -> tuple[tuple[int, int], tuple[int, int]]:
    """((rank, base ns), (rank, comparison ns)) of the slowest rank per side, the lowest rank on a tie."""
    b = max(timed, key=lambda t: (t[1], -unit_rank(t[0])))
    c = max(timed, key=lambda t: (t[2], -unit_rank(t[0])))
    return (unit_rank(b[0]), b[1]), (unit_rank(c[0]), c[2])


def _jobs(timed: list[tuple[Unit, int, int]], kind: str) -> dict[int | None, tuple[tuple[int, int], tuple[int, int]]]:
    """{cycle (None: ranks alone): the slowest rank per side} of the timed units; none for a single device's."""
    if kind == "cycle":
        return {}
    groups: dict[int | None, list] = {}
    for t in timed:
        groups.setdefault(t[0].cycle if isinstance(t[0], RankCycle) else None, []).append(t)
    return {cycle: _slowest(of_cycle) for cycle, of_cycle in groups.items()}


def check_rank_run(r: dict, folders: tuple[dict[Unit, str], dict[Unit, str]], singles: dict[Unit, tuple],
                   reports: dict[str, dict | None], listed: set[int] | None = None) -> list[str]:
    """A rank-by-rank run (`r`: its rc, stdout, stderr, `dir` the -o folder, `base_dir` / `comp_dir` the folders
    as given) against the single compares of its units (`singles`: {unit: (rc, error line, JSON or None)}; a unit is
    a rank, or a schedule's cycle of one, `RankCycle`): the status and error of the first unit that fails, one
    report per unit before it (all on success) named UNIT_REPORT with one timestamp, each equal to its single
    compare but for `_strip_volatile` and holding the sweep's invariants, the unit lines, table and job lines (one
    per cycle of ranks, none for a single device's) of its figures, the one-sided ranks and the cycles beyond the
    other folder's count warned about. With `listed` (`--rank_list`) only those ranks count, and the listed ones
    neither folder holds are warned about."""
    bad: list[str] = []
    absent: list[int] = []
    held = folders
    kind = folder_kind(folders[0])
    if listed is not None:
        folders = ({k: v for k, v in folders[0].items() if unit_rank(k) in listed},
                   {k: v for k, v in folders[1].items() if unit_rank(k) in listed})
        absent = sorted(listed - {unit_rank(u) for side in folders for u in side})
    said = [ln for ln in r["stderr"].splitlines() if "of --rank_list in neither" in ln]
    text = (f"{'Rank' if len(absent) == 1 else 'Ranks'} of --rank_list in neither the base {r['base_dir']} nor the "
            f"comparison {r['comp_dir']}, not compared: {', '.join(map(str, absent))}")
    if (absent and (len(said) != 1 or not said[0].endswith(text))) or (said and not absent):
        bad.append(f"listed ranks {absent} in neither folder: warned {said!r:.300}")
    if "Traceback" in r["stderr"] or "Traceback" in r["stdout"]:
        bad.append("traceback: " + r["stderr"].strip().splitlines()[-1][:200])
    common = sorted(set(folders[0]) & set(folders[1]), key=unit_order)
    fail = next((k for k in common if singles[k][0] not in (0, 3)), None)  # 3: the gate's verdict, not a failure
    want = common if fail is None else common[:common.index(fail)]
    regressed = [k for k in want if singles[k][0] == 3]
    want_rc = singles[fail][0] if fail is not None else 3 if regressed else 0
    if r["rc"] != want_rc:
        bad.append(f"exit status {r['rc']}, the single compares give {want_rc}")
    errs = [ln for ln in r["stderr"].splitlines() if "ERROR" in ln or ln.startswith("error:")]
    if fail is not None:
        one = f"error: {unit_label(fail)}: {(singles[fail][1] or '').removeprefix('error: ')}"
        if errs != [one]:
            bad.append(f"error lines {errs[:3]!r:.400} != [{one!r:.300}]")
    elif regressed:  # the gate names the units that regressed, each said so on its own line
        pct = r["opts"][r["opts"].index("--fail_on_regression") + 1]
        one = f"error: --fail_on_regression {pct}: {_named(regressed)} regressed beyond the threshold"
        if errs != [one]:
            bad.append(f"error lines {errs[:3]!r:.400} != [{one!r:.300}]")
        for k in regressed:
            if not any(ln.startswith(f"{unit_label(k)}: Performance regression: ") for ln in r["stderr"].splitlines()):
                bad.append(f"{unit_label(k)}: no line of its regression")
    elif errs:
        bad.append(f"exit 0 with error lines {errs[:3]!r:.300}")
    ranks = [{unit_rank(u) for u in side} for side in folders]
    cycles = [max((u.cycle for u in side if isinstance(u, RankCycle)), default=0) for side in held]
    for side, name, own, other, n, m in (("base", r["base_dir"], *ranks, *cycles),
                                         ("comparison", r["comp_dir"], *ranks[::-1], *cycles[::-1])):
        lines = [ln for ln in r["stderr"].splitlines() if f"only in the {side} " in ln]
        said = [ln for ln in lines if not re.search(r"\bCycles? only in the ", ln)]
        alone = sorted(own - other)
        text = f"only in the {side} {name}, not compared: {', '.join(map(str, alone))}"
        if alone and (len(said) != 1 or not said[0].endswith(text)):
            bad.append(f"ranks {alone} only in the {side}: warned {said!r:.300}")
        if not alone and said:
            bad.append(f"no rank only in the {side}, but warned {said!r:.300}")
        extra = list(range(m + 1, n + 1)) if m else []  # a schedule's cycles beyond the other folder's count
        said = [ln for ln in lines if ln not in said]
        text = (f"{'Cycle' if len(extra) == 1 else 'Cycles'} only in the {side} {name} ({n} cycles against {m}), "
                f"not compared: {', '.join(map(str, extra))}")
        if extra and (len(said) != 1 or not said[0].endswith(text)):
            bad.append(f"cycles {extra} only in the {side}: warned {said!r:.300}")
        if not extra and said:
            bad.append(f"no cycle only in the {side}, but warned {said!r:.300}")
    names: dict[Unit, tuple[str, str]] = {}
    overviews = []
    for n in sorted(reports):
        got = report_unit(n)
        if OVERVIEW_REPORT.match(n):
            overviews.append(n)
        elif got is None:
            bad.append(f"report name {n!r}")
        else:
            names[got[0]] = (n, got[1])
    if sorted(names, key=unit_order) != want:
        bad.append(f"reports of ranks {[unit_label(u) for u in sorted(names, key=unit_order)]}, expected "
                   f"{[unit_label(u) for u in want]}")
    if len({t for _, t in names.values()}) > 1:
        bad.append(f"several timestamps: {sorted({t for _, t in names.values()})}")
    timed = []
    step_keys: dict[str, str] = {}
    # without a time breakdown, each unit's communication totals (its report's summary.communication), where any has
    comms = {k: _rank_comm(reports[names[k][0]]) for k in names if _rank_ns(reports[names[k][0]] or {}) is None}
    shown = any(c is not None for c in comms.values())
    for k in sorted(names, key=unit_order):
        doc, single = reports[names[k][0]], singles.get(k, (None, None, None))[2]
        label = unit_label(k)
        if doc is None:
            bad.append(f"{label}: report is not strict JSON")
            continue
        bad += [f"{label}: {x}" for x in check_doc(doc, None)]
        if single is None:
            bad.append(f"{label}: the single compare wrote no report")
        elif (mine := _strip_volatile(doc)) != (theirs := _strip_volatile(single)):
            bad.append(f"{label}: report != single compare at {_first_difference(mine, theirs)}")
        if r["rc"] not in (0, 3):  # stopped: no line, no table
            continue
        path = str(Path(r["dir"]) / names[k][0])
        ns = _rank_ns(doc)
        key = _unit_cells(k)
        if ns is None and (pair := comms.get(k)) is not None:
            b, c = pair
            line = f"{label}: communication {_ms_change(b, c)}, {_pct(b, c)}), {path}"
            cells = [*key[1:], _ms(b), _ms(c), _ms(c - b, True), _pct(b, c), names[k][0]]
        elif ns is None:
            line, cells = f"{label}: {path}", [*key[1:], *(["-"] * 4 if shown else []), names[k][0]]
        else:
            (b, c), diffs = ns["E2E Time"], [_ms(c - b, True) for b, c in (ns[m] for m in RANK_METRICS[1:] if m in ns)]
            line = f"{label}: E2E {_ms_change(b, c)}, {_pct(b, c)}), {path}"
            cells = [*key[1:], _ms(b), _ms(c), _ms(c - b, True), _pct(b, c), *diffs]
            if len(ns) > 1:  # a time breakdown: the largest step of the unit report's own waterfall
                step = _largest_step(doc)
                if step is not None:  # keyed in the order the units first name a step; named under the table
                    step_keys.setdefault(step[0], step_key(len(step_keys)))
                cells.append("-" if step is None else f"{step_keys[step[0]]} {_ms(step[1], True)}")
            timed.append((k, b, c))
        if line not in r["stdout"].splitlines():
            bad.append(f"{label}: no line {line!r}")
        if _table_line(r["stdout"], key[0], cells) is None:
            bad.append(f"{label}: no table row {cells}")
    jobs = _jobs(timed, kind)
    job_texts = [f"Job{'' if cycle is None else f' cycle {cycle}'} (slowest rank per side): base rank {bk} "
                 + _ms_change(b, c).replace(" ms -> ", f" ms -> comparison rank {ck} ", 1) + f", {_pct(b, c)})"
                 for cycle, ((bk, b), (ck, c)) in jobs.items()]

    def ranks(ids: list[int]) -> str:
        return f"{'rank' if len(ids) == 1 else 'ranks'} {', '.join(map(str, ids))}"

    # the console's say they are of the ranks --rank_list selected (the overview's rank_list says it there), and
    # which of those have no unit of the line's cycle (warned, not compared); without a list, which ranks one folder
    # alone holds in the line's cycle
    console_jobs = []
    for cycle, text in zip(jobs, job_texts, strict=True):
        held = {u.rank if isinstance(u, RankCycle) else u for u in names
                if (u.cycle if isinstance(u, RankCycle) else None) == cycle}
        of = "" if listed is None else f" of {ranks(sorted(listed))} selected"
        if listed is not None and (missing := sorted(set(listed) - held)):
            of += f", {ranks(missing)} not compared"
        elif listed is None and (missing := sorted(
                {u.rank if isinstance(u, RankCycle) else u for u in set(folders[0]) ^ set(folders[1])
                 if (u.cycle if isinstance(u, RankCycle) else None) == cycle} - held - {None})):
            of += f", {ranks(missing)} not compared"  # a rank one folder alone holds, in the line's cycle
        console_jobs.append(text.replace(" (slowest rank per side)", f" (slowest rank per side{of})", 1))
    if r["rc"] in (0, 3) and names:
        header = next(([p.strip() for p in ln.strip().strip("|").split("|")] for ln in r["stdout"].splitlines()
                       if ln.strip("| ").startswith(("Rank |", "Cycle |"))), [])
        legend = [ln for ln in r["stdout"].splitlines() if ln.startswith("Largest Step ")]
        if legend != [f"Largest Step {key}: {term_safe(name)}" for name, key in step_keys.items()]:
            bad.append(f"largest step lines {legend!r:.300} != keys {step_keys!r:.300}")
        if header[:len(UNIT_COLUMNS[kind]) + 1] not in ([*UNIT_COLUMNS[kind], "Base"],
                                                         [*UNIT_COLUMNS[kind], "Report"]):
            bad.append(f"table header {header[:3]}, its units named {UNIT_COLUMNS[kind]}")
        got = [ln for ln in r["stdout"].splitlines() if ln.startswith("Job")]
        if got != console_jobs:
            bad.append(f"job lines {got!r:.300} != {console_jobs!r:.300}")
    # the units one folder alone holds (a rank's cycles, cycles beyond the other's count), each with its input in the
    # folder as given, and with --rank_list those of the listed ranks neither holds (as many cycles as the longer side)
    def given(side: int, unit: Unit) -> str:
        rel, top = (r["base"], r["base_dir"]) if side == 0 else (r["comp"].removeprefix("copy:"), r["comp_dir"])
        return os.path.join(top, os.path.relpath(folders[side][unit], rel))

    one_sided = []
    for k in set(folders[0]) ^ set(folders[1]):
        side = 0 if k in folders[0] else 1
        one_sided.append((k, {**_record_unit(k), "only_in": ("base", "comparison")[side],
                              "base_path": None if side else given(0, k),
                              "comparison_path": given(1, k) if side else None}))
    for rank in absent:
        for k in [RankCycle(rank, c) for c in range(1, max(cycles) + 1)] if max(cycles) else [rank]:
            one_sided.append((k, {**_record_unit(k), "only_in": None, "base_path": None, "comparison_path": None}))
    inputs = {k: (given(0, k), given(1, k)) for k in names if k in folders[0] and k in folders[1]}
    verdicts = {k: singles[k][0] == 3 for k in want} if "--fail_on_regression" in r["opts"] else {}
    return bad + check_overview(r, overviews, names, reports, fail is None and r["rc"] in (0, 3),
                                [x for _, x in sorted(one_sided, key=lambda t: unit_order(t[0]))], listed,
                                inputs=inputs, jobs=jobs, job_texts=job_texts, verdicts=verdicts)


def _named(units: list[Unit]) -> str:
    """Units as the gate's line names them: `ranks 0, 2`, `cycles 1, 2`, else each unit's label."""
    if all(not isinstance(u, RankCycle) for u in units):
        return f"rank{'s' * (len(units) > 1)} {', '.join(map(str, units))}"
    if all(isinstance(u, RankCycle) and u.rank is None for u in units):
        return f"cycle{'s' * (len(units) > 1)} {', '.join(str(u.cycle) for u in units)}"
    return ", ".join(map(unit_label, units))


def _record_unit(unit: Unit) -> dict[str, int | None]:
    """An overview record's `rank`, and its `cycle` for a schedule's cycle."""
    return {"rank": unit.rank, "cycle": unit.cycle} if isinstance(unit, RankCycle) else {"rank": unit}


def check_overview(r: dict, overviews: list[str], names: dict[Unit, tuple[str, str]],
                   reports: dict[str, dict | None], complete: bool, one_sided: list[dict],
                   listed: set[int] | None = None, *, inputs: dict[Unit, tuple[str, str]],
                   jobs: dict[int | None, tuple[tuple[int, int], tuple[int, int]]], job_texts: list[str],
                   verdicts: dict[Unit, bool] | None = None) -> list[str]:
    """The job overview of a rank-by-rank run: one on a `complete` run (every unit compared; none when a unit
    fails, or should), valid against the ranks schema (msprof_compare/schemas/), with the unit reports' timestamp
    and the run's folders,
    a record per unit in the CLI's order (its rank, and its cycle for a schedule's cycles) naming its `inputs` and
    its report, with the figures of the unit report's own OverallMetrics (exact ns; E2E alone, the gate's, where the
    gate alone made a breakdown), the job's slowest rank per side by those figures (`jobs`: one record for ranks, one
    per cycle for a schedule's cycles of ranks, none for a single device's) and its line (`job_texts` joined), the
    `one_sided` units (a rank one folder alone holds, cycles beyond the other's count, a listed rank neither holds)
    as not compared, the `listed` ranks as its rank_list, and with the gate each unit's verdict (`verdicts`: its
    single compare's exit 3) and the threshold."""
    if not complete:
        return [f"a job overview of a failed run: {overviews}"] if overviews else []
    if len(overviews) != 1:
        return [f"job overviews {overviews}, expected one"]
    (name,) = overviews
    doc = reports[name]
    if doc is None:
        return ["the job overview is not strict JSON"]
    bad = [f"job overview schema: {e}" for e in validate(doc, RANKS_SCHEMA)[:5]]
    if {t for _, t in names.values()} != {OVERVIEW_REPORT.match(name).group(1)}:
        bad.append(f"job overview {name}: not the rank reports' timestamp")
    if (doc.get("base_path"), doc.get("comparison_path")) != (r["base_dir"], r["comp_dir"]):
        bad.append(f"job overview folders {doc.get('base_path')!r}, {doc.get('comparison_path')!r}")
    if doc.get("rank_list") != (None if listed is None else sorted(listed)):
        bad.append(f"job overview rank_list {doc.get('rank_list')!r}, the run listed {listed}")
    if doc.get("not_compared") != one_sided:
        bad.append(f"job overview not_compared {doc.get('not_compared')!r:.300} != {one_sided!r:.300}")
    pct = r["opts"][r["opts"].index("--fail_on_regression") + 1] if "--fail_on_regression" in r["opts"] else None
    if doc.get("fail_on_regression") != (None if pct is None else float(pct)):
        bad.append(f"job overview fail_on_regression {doc.get('fail_on_regression')!r}, the run's {pct}")
    if doc.get("job_line") != ("; ".join(job_texts) or None):
        bad.append(f"job overview job_line {doc.get('job_line')!r:.300} != the job lines {job_texts!r:.300}")
    units = [RankCycle(x.get("rank"), x["cycle"]) if "cycle" in x else x.get("rank") for x in doc.get("ranks", [])]
    order = sorted(names, key=unit_order)
    if units != order:
        return bad + [f"job overview of ranks {[unit_label(u) for u in units if u is not None]}, expected "
                      f"{[unit_label(u) for u in order]}"]
    keys = dict(zip(RANK_METRICS, ("e2e", "computing", "uncovered_communication", "free"), strict=True))
    for k, x in zip(order, doc["ranks"], strict=True):
        report, ns, label = names[k][0], _rank_ns(reports[names[k][0]] or {}), unit_label(k)
        if x.get("reports") != [report]:
            bad.append(f"job overview {label}: reports {x.get('reports')}")
        if x.get("regressed") != (verdicts or {}).get(k):
            bad.append(f"job overview {label}: regressed {x.get('regressed')!r}, its single compare's "
                       f"{(verdicts or {}).get(k)!r}")
        if (x.get("base_path"), x.get("comparison_path")) != inputs.get(k):
            bad.append(f"job overview {label}: inputs {x.get('base_path')!r}, {x.get('comparison_path')!r}")
        got = {m: (x[key]["base_ns"], x[key]["comparison_ns"]) for m, key in keys.items() if key in x} or None
        if got != ns:
            bad.append(f"job overview {label}: {got} != the rank report's {ns}")
        comm = _rank_comm(reports[names[k][0]]) if ns is None else None
        if (lambda g: None if g is None else (g["base_ns"], g["comparison_ns"]))(x.get("communication")) != comm:
            bad.append(f"job overview {label}: communication {x.get('communication')!r:.200} != {comm}")
        step = _largest_step(reports[names[k][0]] or {}) if ns is not None and len(ns) > 1 else "absent"
        if x.get("largest_step", "absent") != (step if step in (None, "absent") else {
                "step": step[0], "diff_ns": step[1], "diff_ms": step[1] / 1e6}):
            bad.append(f"job overview {label}: largest_step {x.get('largest_step', 'absent')!r:.200} != {step!r:.200}")
        if ns is not None and any(x[key]["diff_ns"] != c - b for m, key in keys.items() if m in ns
                                  and m != "E2E Time" for b, c in [ns[m]]):
            bad.append(f"job overview {label}: a diff is not the exact change")
    want = [{**({} if cycle is None else {"cycle": cycle}), "base_rank": bk, "comparison_rank": ck, "base_ns": b,
             "comparison_ns": c} for cycle, ((bk, b), (ck, c)) in jobs.items()]
    job = doc.get("job")
    if not want:  # no figures, or a single device's cycles: no job
        wrong = job is not None
    elif None in jobs:  # ranks alone: one record
        wrong = not isinstance(job, dict) or {key: job.get(key) for key in want[0]} != want[0]
    else:  # a schedule's cycles of ranks: a record per cycle
        wrong = not isinstance(job, list) or len(job) != len(want) or any(
            not isinstance(g, dict) or {key: g.get(key) for key in w} != w for g, w in zip(job, want, strict=True))
    if wrong:
        bad.append(f"job overview job {job!r:.200} != {want!r:.200}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", default=str(ROOT.parent / "shared" / "samples"))
    ap.add_argument("--out", default="sweep-out")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--limit", type=int, default=0, help="at most this many runs per phase (0: all)")
    ap.add_argument("--phase", default="probe,pairs,options,ranks",
                    help="comma-separated phases; without probe, OUT/loadable.json of an earlier run is reused")
    ap.add_argument("--resume", action="store_true", help="skip the runs OUT/runs.jsonl already holds")
    ap.add_argument("--option-pairs", type=int, default=20, help="pairs run with each option set")
    ap.add_argument("--rank-option-pairs", type=int, default=4,
                    help="pairs of folders of each kind (ranks, cycles of ranks, a single device's cycles) run with "
                         "each option set")
    a = ap.parse_args(argv)
    samples, out = Path(a.samples).resolve(), Path(a.out).resolve()
    if not samples.is_dir():
        print(f"no samples at {samples}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    copies = out / "copy"
    if not copies.is_dir():  # self-compares need a second path: the CLI refuses one path on both sides
        shutil.copytree(samples, copies, ignore=shutil.ignore_patterns("PROVENANCE.md"))
    inputs = enumerate_inputs(samples)
    if not a.resume and (out / "runs.jsonl").is_file():
        (out / "runs.jsonl").unlink()
    (out / "runs.jsonl").touch()
    viol: list[str] = []
    done: dict[tuple, bool] = {}
    status: dict[tuple, tuple] = {}  # run -> (exit status, its last error line): the rank phase's single compares

    log = (out / "runs.jsonl").open("a")
    lock = threading.Lock()
    (out / "docs").mkdir(exist_ok=True)

    def one(j: tuple[str, str, list[str]]) -> None:
        r = run_cli(samples, copies, j[0], j[1], j[2], a.timeout)
        doc, bad = check_run(r)
        key = (r["base"], r["comp"], tuple(r["opts"]))
        if doc is not None:  # kept on disk: a pair's documents are read back for the swap / subset checks
            with gzip.open(out / "docs" / _doc_name(key), "wt", compresslevel=1) as f:
                json.dump(doc, f)
        err = [ln for ln in r["stderr"].splitlines() if "ERROR" in ln or ln.startswith("error:")][-1:] \
            if r["rc"] else []
        with lock:
            done[key] = doc is not None
            status[key] = (r["rc"], err[0] if err else None)
            log.write(json.dumps({k: r[k] for k in ("base", "comp", "opts", "rc", "wall")} | {
                "error": err[0] if err else None, "violations": bad,
                "sheets": {s["name"]: len(s["rows"]) for s in (doc or {}).get("sheets", [])}}) + "\n")
            log.flush()
            viol.extend(f"{r['base']} | {r['comp']} | {' '.join(r['opts'])}: {b}" for b in bad)

    for line in (out / "runs.jsonl").read_text().splitlines() if a.resume else []:
        r = json.loads(line)
        if r.get("mode") == "ranks":  # rank-by-rank runs are cheap: they run again
            continue
        key = (r["base"], r["comp"], tuple(r["opts"]))
        done[key] = r["rc"] == 0 and (out / "docs" / _doc_name(key)).is_file()
        status[key] = (r["rc"], r["error"])
        viol.extend(f"{r['base']} | {r['comp']} | {' '.join(r['opts'])}: {b}" for b in r["violations"])

    def go(jobs: list[tuple], limit: bool = True) -> None:
        jobs = [j for j in dict.fromkeys((b, c, tuple(o)) for b, c, o in jobs) if j not in done]  # --resume: skip
        if a.limit and limit:  # what an earlier run did
            jobs = jobs[:a.limit]
        print(f"{len(jobs)} runs ...", file=sys.stderr, flush=True)
        with ThreadPoolExecutor(a.jobs) as ex:
            list(ex.map(lambda j: one((j[0], j[1], list(j[2]))), jobs))

    def docs(key: tuple) -> dict | None:
        if not done.get(key):
            return None
        with gzip.open(out / "docs" / _doc_name(key), "rt") as f:
            return json.load(f)

    phases = a.phase.split(",")
    cache = out / "loadable.json"
    if "probe" in phases or not cache.is_file() and {"pairs", "options"} & set(phases):  # a self-compare of
        go([(p, "copy:" + p, []) for _, p in inputs])  # every input tells which inputs load (not the rank phase)
        loadable = [(fam, p) for fam, p in inputs if done.get((p, "copy:" + p, ()))]
        for _, p in loadable:
            viol.extend(f"{p} | self: {b}" for b in check_self(docs((p, "copy:" + p, ()))))
        cache.write_text(json.dumps(loadable))
    loadable = [tuple(x) for x in json.loads(cache.read_text())] if cache.is_file() else []
    print(f"{len(inputs)} inputs, {len(loadable)} load", file=sys.stderr)
    pairs = plan_pairs(samples, loadable)
    if "pairs" in phases:
        go([(b, c, []) for b, c in pairs])
        for b, c in pairs:
            if b < c and done.get((b, c, ())) and done.get((c, b, ())):
                viol.extend(f"{b} | {c} | swap: {x}" for x in check_swap(docs((b, c, ())), docs((c, b, ()))))
    if "options" in phases:
        h = lambda s: hashlib.sha1(s.encode()).hexdigest()  # noqa: E731  (a deterministic sample of the pairs)
        # pairs of NPU profile directories first (they fill every sheet), then the rest, each in hash order
        chosen = sorted(pairs, key=lambda p: ("ascend_pt" not in p[0] + p[1], h(p[0] + p[1])))
        chosen = chosen[:a.option_pairs // 2] + [p for p in chosen if "ascend_pt" not in p[0] + p[1]][
            :a.option_pairs - a.option_pairs // 2]
        jobs = [(b, c, o) for b, c in chosen for o in [[]] + SUBSET_OPTS + EXTRA_OPTS]
        steps = [(b, c) for b, c in chosen if "ascend" in b and "ascend" in c]
        jobs += [(b, c, ["--base_step", st, "--comparison_step", st]) for b, c in steps for st in STEPS]
        go(jobs)
        for b, c in chosen:
            full = docs((b, c, ()))
            for o in SUBSET_OPTS:
                part = docs((b, c, tuple(o)))
                if full is None or part is None:
                    continue
                if o == ["--disable_details"]:
                    keep = {"OverallMetrics", "OperatorCompareStatistic", "ModuleCompareStatistic",
                            "MemoryCompareStatistic", "CommunicationCompare", "ApiCompare", "KernelCompare"}
                    sheets = keep
                else:
                    sheets = ALONE[o[0]]
                viol.extend(f"{b} | {c} | {' '.join(o)}: {x}" for x in check_subset(full, part, sheets))
            for o in EXTRA_OPTS + [["--base_step", st, "--comparison_step", st] for st in STEPS]:
                part = docs((b, c, tuple(o)))
                if full is not None and part is not None:
                    viol.extend(f"{b} | {c} | {' '.join(o)}: {x}" for x in check_subset(full, part, unaffected(o)))
    if "ranks" in phases:  # two folders of ranks, compared rank by rank, against the single compares of their ranks
        build_cycle_folders(samples, out)  # NPU folders of a schedule's cycles of ranks: the samples hold none
        folders = find_rank_folders(samples) | (find_rank_folders(out / BUILT, out) if (out / BUILT).is_dir() else {})
        rpairs = plan_rank_pairs(samples, folders)
        rjobs = [(b, c, []) for b, c in rpairs] + rank_option_jobs(samples, folders, rpairs, a.rank_option_pairs)
        rjobs = rjobs[:a.limit] if a.limit else rjobs
        print(f"{len(folders)} folders of ranks or cycles, {len(rjobs)} rank-by-rank runs", file=sys.stderr)
        go([(sb, sc, split_rank_list(o)[0]) for b, c, o in rjobs
            for sb, sc in rank_singles(folders, b, c, split_rank_list(o)[1]).values()], limit=False)

        def one_rank(j: tuple[str, str, list[str]]) -> None:
            b, c, o = j
            d = out / "ranks" / _doc_name(("ranks", b, c, tuple(o))).split(".")[0]
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            r = run_cli(samples, copies, b, c, o, a.timeout, str(d)) | {
                "dir": str(d), "base_dir": where(samples, copies, b), "comp_dir": where(samples, copies, c)}
            reports: dict[str, dict | None] = {}
            for f in sorted(d.iterdir()):
                try:
                    reports[f.name] = json.loads(f.read_text(), parse_constant=lambda x: (_ for _ in ()).throw(
                        ValueError(x)))
                except ValueError:
                    reports[f.name] = None
            plain, listed = split_rank_list(o)  # the single compares are run without --rank_list
            singles = {k: (*status.get((sb, sc, tuple(plain)), ("not run", None)), docs((sb, sc, tuple(plain))))
                       for k, (sb, sc) in rank_singles(folders, b, c, listed).items()}
            bad = check_rank_run(r, (folders[b], folders[c.removeprefix("copy:")]), singles, reports, listed)
            if not bad:
                shutil.rmtree(d)
            with lock:
                log.write(json.dumps({k: r[k] for k in ("base", "comp", "opts", "rc", "wall")} | {
                    "mode": "ranks", "reports": sorted(reports), "violations": bad}) + "\n")
                log.flush()
                viol.extend(f"{b} | {c} | ranks {' '.join(o)}: {x}" for x in bad)

        print(f"{len(rjobs)} rank-by-rank runs ...", file=sys.stderr, flush=True)
        with ThreadPoolExecutor(a.jobs) as ex:
            list(ex.map(one_rank, rjobs))
        if rpairs:  # -o - is refused: one report per rank needs a folder
            r = run_cli(samples, copies, *rpairs[0], [], a.timeout)
            errs = [ln for ln in r["stderr"].splitlines() if ln.startswith("error:")]
            if r["rc"] != 2 or r["stdout"] or len(errs) != 1 or "-o -" not in errs[0]:
                viol.append(f"{rpairs[0][0]} | ranks -o -: exit {r['rc']}, errors {errs!r:.300}")
        single = next(((b, c) for b, c in rpairs if folder_kind(folders[b]) == "cycle"), None)
        if single:  # --rank_list selects ranks: a single device's cycles have none (a usage error, no report)
            d = out / "ranks" / "rank_list_of_cycles"
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            r = run_cli(samples, copies, *single, ["--rank_list", "0"], a.timeout, str(d))
            errs = [ln for ln in r["stderr"].splitlines() if ln.startswith("error:")]
            if r["rc"] != 2 or r["stdout"] or len(errs) != 1 or "--rank_list selects ranks" not in errs[0] \
                    or any(d.iterdir()):
                viol.append(f"{single[0]} | {single[1]} | --rank_list 0: exit {r['rc']}, errors {errs!r:.300}")
    log.close()
    (out / f"violations-{'-'.join(phases)}.txt").write_text("\n".join(viol) + ("\n" if viol else ""))
    print(f"{len(viol)} violations -> {out}/violations-{'-'.join(phases)}.txt", file=sys.stderr)
    return 1 if viol else 0


if __name__ == "__main__":
    sys.exit(main())
