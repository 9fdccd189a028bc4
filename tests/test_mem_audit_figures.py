"""MemoryCompareStatistic figures against an independent computation from the raw inputs (session 36 memory
audit): plain Python over the trace JSON and operator_memory.csv, following reference-2 §2.2 (one stable
time-sorted walk of ops and records, each record owned by the deepest open op), §2.3 (ProfilerStep children
are the compared ops) and §5.1 (records). Per operator name the statistic groups every compared op of a side,
so its figures do not depend on how the two sides were matched."""

from __future__ import annotations

import bisect
import csv
import gzip
import json
import math
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from msprof_compare.api import compare
from msprof_compare.report.summary_console import render_memory

L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
L0R1 = "msinsight/test/data/pytorch/text/level0/rank1_ascend_pt"
L1R1 = "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt"
H100 = "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
MI300 = "tracelens/tests/traces/mi300/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
GPU_OP_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "operator", "runtime"}


def _ns(text: object) -> int:
    return int((Decimal(str(text).strip()) * 1000).to_integral_value())


def _events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def _ops(events: list[dict], cats: set[str]) -> list[tuple[int, int, str]]:
    return [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e.get("dur", 0)), e["name"]) for e in events
            if e.get("ph") == "X" and str(e.get("cat", "")).lower() in cats]


def _gpu(path: Path) -> tuple[list, list]:
    """[memory] device events paired by Addr: (placement ns, KB, lifetime ns)."""
    events = _events(path)
    mem = sorted((e for e in events if str(e.get("name", "")).lower() == "[memory]"
                  and int(e["args"].get("Device Id", -1)) >= 0), key=lambda e: _ns(e["ts"]))
    live: dict = {}
    recs = []
    for e in mem:
        size, addr, t = int(e["args"]["Bytes"]), e["args"].get("Addr"), _ns(e["ts"])
        if size > 0:
            if addr in live:
                recs.append((*live.pop(addr), 0))
            live[addr] = (t, size / 1024)
        elif size < 0 and addr in live:
            t0, kb = live.pop(addr)
            if -size / 1024 == kb:
                recs.append((t0, kb, t - t0 if t and t0 else 0))
    recs += [(*v, 0) for v in live.values()]
    return _ops(events, GPU_OP_CATS), recs


def _npu(folder: Path) -> tuple[list, list]:
    """operator_memory.csv rows; a cann:: row is placed at the enqueue of the dequeue running at allocation."""
    out = folder / "ASCEND_PROFILER_OUTPUT"
    events = _events(out / "trace_view.json")
    deq = sorted((_ns(e["ts"]), _ns(e["ts"]) + _ns(e.get("dur", 0)), e["args"].get("correlation_id"))
                 for e in events if e.get("cat") == "dequeue")
    enq = {e["args"].get("correlation_id"): _ns(e["ts"]) for e in events if e.get("cat") == "enqueue"}
    starts = [d[0] for d in deq]
    recs = []
    with open(out / "operator_memory.csv", newline="") as f:
        for row in csv.DictReader(f):
            alloc = row["Allocation Time(us)"].strip()
            if alloc in ("", "N/A") or Decimal(alloc) == 0:
                continue
            a = _ns(alloc)
            rel = row["Release Time(us)"].strip()
            r = 0 if rel in ("", "N/A") else _ns(rel)
            ts = a
            if "cann::" in row["Name"]:
                k = bisect.bisect_right(starts, a) - 1
                if k < 0 or a > deq[k][1]:
                    continue
                ts = enq.get(deq[k][2], 0)
            recs.append((ts, float(row["Size(KB)"]), r - a if r and a else 0))
    return _ops(events, {"cpu_op"}), recs


def _top_ops(ops: list, recs: list) -> list[tuple[str, float, int]]:
    """Each compared op in time order: (name, KB, lifetime ns) of the records in its subtree."""
    items = sorted([(o[0], 0, i) for i, o in enumerate(ops)] + [(r[0], 1, j) for j, r in enumerate(recs)],
                   key=lambda x: (x[0], x[1]))
    parent, children, own = {}, {-1: []}, {}
    cur = -1
    for ts, kind, k in items:
        while cur != -1 and ts > ops[cur][1]:
            cur = parent[cur]
        if kind == 0:
            parent[k], cur = cur, k
            children[parent[k]].append(k)
            children[k] = []
        else:
            own.setdefault(cur, []).append(recs[k])
    top = [g for c in children[-1] for g in (children[c] if "ProfilerStep#" in ops[c][2] else [c])]

    def total(n: int) -> tuple[float, int]:
        stack, kb, ns = [n], 0.0, 0
        while stack:
            x = stack.pop()
            kb += sum(r[1] for r in own.get(x, []))
            ns += sum(r[2] for r in own.get(x, []))
            stack += children[x]
        return kb, ns

    return [(ops[n][2], *total(n)) for n in top]


def _by_name(ops: list, recs: list) -> dict[str, tuple[float, float, int]]:
    """Per compared op name: (Allocated Duration ms, Allocated Memory MB, Operator Number)."""
    acc: dict[str, list] = {}
    for name, kb, ns in _top_ops(ops, recs):
        a = acc.setdefault(name, [0, 0.0, 0])
        a[0] += ns
        a[1] += kb
        a[2] += 1
    return {k: (v[0] / 1e6, v[1] / 1024, v[2]) for k, v in acc.items()}


def _sheet_side(stat, side: str) -> dict[str, tuple[float, float, int]]:
    cols = [f"{side} Allocated Duration(ms)", f"{side} Allocated Memory(MB)", f"{side} Operator Number"]
    return {r[0]: (float(r[1]), float(r[2]), int(r[3]))
            for r in stat[["Operator Name", *cols]].itertuples(index=False) if int(r[3]) > 0}


def _assert_same(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for name, (ms, mb, n) in want.items():
        g = got[name]
        assert g[2] == n and g[0] == pytest.approx(ms, rel=1e-12, abs=1e-9) and \
            g[1] == pytest.approx(mb, rel=1e-12, abs=1e-12), (name, g, (ms, mb, n))


@pytest.mark.parametrize(("kind", "base", "comparison", "expected"), [
    # pair 1: 184 records a side (57 of them cann::), 1426.02 MB in 35 names; its two sides allocate alike
    ("npu", L1, L2, {"aten::to": (0.72172, 18.37744140625, 4)}),
    # the rank-1 exports a rank-by-rank job compares (Level0 -> Level1): the forward pass holds 360.85 MB a side
    ("npu", L0R1, L1R1, {"DistributedDataParallel.forward": (441.17571, 360.853515625, 1)}),
    # TimeSformer H100 vs MI300X: the MI300X allocates twice as much in aten::linear
    ("gpu", H100, MI300, {"aten::linear": (190.948016, 6259.7685546875, 85)}),
])
def test_memory_statistic_matches_an_independent_computation(samples, kind, base, comparison, expected):
    b, c = samples / base, samples / comparison
    if not (b.exists() and c.exists()):
        pytest.skip("sample absent")
    res = compare(str(b), str(c), enable_memory_compare=True, disable_details=True)
    stat = res.sheet("MemoryCompareStatistic")
    read = _npu if kind == "npu" else _gpu
    want_b, want_c = _by_name(*read(b)), _by_name(*read(c))
    _assert_same(_sheet_side(stat, "Base"), want_b)
    _assert_same(_sheet_side(stat, "Comparison"), want_c)
    for name, figures in expected.items():  # one row as the audit read it off the workbook
        assert want_b[name] == pytest.approx(figures)
    diff = stat["Diff Memory(MB)"].tolist()
    assert diff == sorted(diff, reverse=True)  # growth first (reference-2 §5.4)
    assert stat["Diff Memory(MB)"].tolist() == [round(x, 2) for x in
                                                (stat["Comparison Allocated Memory(MB)"]
                                                 - stat["Base Allocated Memory(MB)"]).tolist()]


def _ratio(b: float, c: float) -> float:
    """reference-2 §0.1: 1.0 when both are 0, inf when only the base is, else c / b to 4 places."""
    return 1.0 if not b and not c else math.inf if not b else round(c / b, 4)


def test_memory_diff_ratio_and_contributors_from_the_raw_trace(samples):
    """Diff Memory(MB) and Diff Ratio of every MemoryCompareStatistic row, and the Summary's memory contributors
    (Base / Comparison / Diff MB, Share, Cumulative Share, Rank), from the MB computed above out of the raw
    [memory] events: TimeSformer H100 vs MI300X, the only sample pair whose two sides allocate different non-zero
    amounts under one name (the NPU text pairs allocate alike, ratio 1.0; the DB pair is pinned by SQL in
    test_independent_db_sheets2.py). Before, the statistic's Diff Ratio of a trace was checked only where one side
    was 0 (INF / 0) or both alike, and the contributors' Share only where one row held all the change."""
    b, c = samples / H100, samples / MI300
    if not (b.exists() and c.exists()):
        pytest.skip("sample absent")
    res = compare(str(b), str(c), enable_memory_compare=True, disable_details=True)
    stat = res.sheet("MemoryCompareStatistic")
    want_b, want_c = _by_name(*_gpu(b)), _by_name(*_gpu(c))
    mb = {n: (want_b.get(n, (0, 0.0, 0))[1], want_c.get(n, (0, 0.0, 0))[1]) for n in set(want_b) | set(want_c)}
    got = {r[0]: (r[1], r[2]) for r in stat[["Operator Name", "Diff Memory(MB)", "Diff Ratio"]].itertuples(index=False)}
    assert set(got) >= set(mb)
    for name, (bm, cm) in mb.items():
        assert got[name] == (round(cm - bm, 2), _ratio(bm, cm)), name
    # aten::linear 6259.768555 -> 12634.736328 MB: +6374.97, ratio 12634.736328 / 6259.768555 = 2.01840...
    assert got["aten::linear"] == (6374.97, 2.0184)
    # contributors: the sheet's 2-decimal diffs largest |diff| first until 80 % of their summed |diff| is covered
    diffs = sorted(((round(cm - bm, 2), n) for n, (bm, cm) in mb.items() if round(cm - bm, 2)),
                   key=lambda x: -abs(x[0]))
    whole = sum(abs(d) for d, _ in diffs)  # 6374.97 + 3652.53 + 10.12 + 0.01 = 10037.63 MB
    want, cum = [], 0.0
    for rank, (d, n) in enumerate(diffs, 1):
        cum += abs(d) / whole
        want.append([rank, n, *mb[n], d, abs(d) / whole, cum])
        if cum >= 0.8:
            break
    m = res.memory_contributors
    assert m.columns.tolist() == ["Rank", "Name", "Base(MB)", "Comparison(MB)", "Diff(MB)", "Share",
                                  "Cumulative Share"]
    assert [r[:2] for r in m.values.tolist()] == [w[:2] for w in want] == [[1, "aten::linear"], [2, "aten::matmul"]]
    for got_row, want_row in zip(m.values.tolist(), want, strict=True):
        assert got_row[2:] == pytest.approx(want_row[2:], rel=1e-12, abs=1e-9)
    # 6374.97 / 10037.63 = 0.635105..., (6374.97 + 3652.53) / 10037.63 = 0.998987...
    assert m["Cumulative Share"].round(6).tolist() == [0.635105, 0.998987]


def test_memory_compare_rows_from_the_raw_trace(samples):
    """MemoryCompare of TimeSformer H100 vs MI300X, row by row: each side's compared ops in time order (the sheet's
    rows hold them in that order, an unpaired op's other side blank), each with the KB of the [memory] records
    placed in its subtree by the walk above, and Diff Size(KB) / Diff Ratio by reference-2 §0.1 from those KB
    (an absent side 0). Before, a trace's Diff Ratio on this sheet was pinned only where a side was 0 or both
    alike (the reference pairs); here 968 rows, 4 of them unpaired (cudaDeviceSynchronize against
    hipDeviceSynchronize, twice), ratios from 0.9994 to 75.93."""
    b, c = samples / H100, samples / MI300
    if not (b.exists() and c.exists()):
        pytest.skip("sample absent")
    sheet = compare(str(b), str(c), enable_memory_compare=True).sheet("MemoryCompare")
    walks = [iter(_top_ops(*_gpu(p))) for p in (b, c)]
    kb_of = []
    for row in sheet.itertuples(index=False):
        sizes = []
        for walk, name, size in zip(walks, (row[1], row[6]), (row[5], row[10]), strict=True):
            if pd.isna(name):
                sizes.append(0.0)
                continue
            want_name, kb, _ = next(walk)
            assert (name, size) == (want_name, pytest.approx(kb, rel=1e-12, abs=1e-9))
            sizes.append(kb)
        kb_of.append(sizes)
        assert (row[11], row[12]) == (round(sizes[1] - sizes[0], 2), _ratio(*sizes)), row[:2]
    assert all(next(w, None) is None for w in walks)  # every compared op has its row
    assert len(kb_of) == 968 and sheet[["Operator Name", "Operator Name.1"]].isna().any(axis=1).sum() == 4
    # by hand, the row of largest growth: 78312 KB more (Diff Size(KB)), the largest ratio 75.9268
    assert (sheet["Diff Size(KB)"].max(), sheet["Diff Ratio"].max()) == (78312.0, 75.9268)


def test_memory_totals_from_the_raw_trace(samples):
    """``memory_totals`` (JSON summary.memory, the memory line) of TimeSformer H100 vs MI300X, the one sample pair
    whose operators' memory changed, from the walk above: every name compared on a side is an operator of the
    statistic, the changed ones those whose MB (the sheet's 2 decimals) differ, each side's MB their sum, the peak
    each trace's largest device Total Reserved. Before, the totals of a pair with changes were pinned on the bundled
    BERT pair alone (figures read off its sheet)."""
    b, c = samples / H100, samples / MI300
    if not (b.exists() and c.exists()):
        pytest.skip("sample absent")
    res = compare(str(b), str(c), enable_memory_compare=True, disable_details=True)
    want_b, want_c = _by_name(*_gpu(b)), _by_name(*_gpu(c))
    names = set(want_b) | set(want_c)
    mb = {n: (want_b.get(n, (0, 0.0, 0))[1], want_c.get(n, (0, 0.0, 0))[1]) for n in names}
    base_mb, comp_mb = sum(v[0] for v in mb.values()), sum(v[1] for v in mb.values())
    t = res.memory_totals
    assert (t["operators"], t["changed"], t["base_recorded"], t["comparison_recorded"]) == (
        len(names), sum(round(cm - bm, 2) != 0 for bm, cm in mb.values()), True, True)
    assert (t["base_mb"], t["comparison_mb"], t["diff_mb"]) == pytest.approx(
        (base_mb, comp_mb, comp_mb - base_mb), rel=1e-12)
    assert t["diff_pct"] == pytest.approx((comp_mb / base_mb - 1) * 100, rel=1e-9)
    peaks = [max(e["args"]["Total Reserved"] for e in _events(p) if e.get("name") == "[memory]"
                 and e["args"].get("Device Id", -1) >= 0) / 1024**3 for p in (b, c)]
    assert [t["base_peak_gb"], t["comparison_peak_gb"]] == pytest.approx(peaks, rel=1e-12)
    assert t["peak_diff_gb"] == pytest.approx(peaks[1] - peaks[0], rel=1e-9)
    assert t["peak_diff_pct"] == pytest.approx((peaks[1] - peaks[0]) / peaks[0] * 100, rel=1e-9)
    line = render_memory(res.frames)
    assert f"{base_mb:.2f} MB -> {comp_mb:.2f} MB ({comp_mb - base_mb:+.2f} MB)" in line, line
    # 4.2734375 -> 6.212890625 GB: +1.939453125 GB, +45.3839 %
    assert (f"Peak reserved memory (Mem Usage) {peaks[0]:.2f} GB -> {peaks[1]:.2f} GB ({peaks[1] - peaks[0]:+.2f} GB, "
            f"{(peaks[1] - peaks[0]) / peaks[0] * 100:+.2f}%)") in line, line
