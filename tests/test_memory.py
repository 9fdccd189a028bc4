"""Memory records (GPU address pairing, NPU queue placement) and the two memory sheets."""

from __future__ import annotations

import csv
import json
import logging
import math
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dbutil import edited_copy, sql
from frameutil import npu_records
from xlsxutil import read_xlsx

from msprof_compare.api import RunContext, compare
from msprof_compare.compare import memory
from msprof_compare.loaders import load_profile
from msprof_compare.loaders.ascend_text import read_operator_memory
from msprof_compare.model import Profile, frame
from msprof_compare.options import Options, build_options
from msprof_compare.report.summary_console import memory_line

L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def gpu_mem(events, ops=()) -> Profile:
    """events: (ts_us, bytes, addr) or (ts_us, bytes, addr, device id); ops: (name, ts_us, dur_us)."""
    p = Profile(path="g.json", kind="GPU", source="kineto")
    p.memory = frame("memory", {"ts": [e[0] * 1000 for e in events], "bytes": [e[1] for e in events],
                                "addr": [e[2] for e in events],
                                "device_id": [e[3] if len(e) > 3 else 0 for e in events]})
    p.ops = frame("ops", {"name": [o[0] for o in ops], "cat": ["cpu_op"] * len(ops),
                          "ts": [o[1] * 1000 for o in ops], "dur": [o[2] * 1000 for o in ops],
                          "input_dims": ["N/A"] * len(ops), "input_type": ["N/A"] * len(ops)})
    return p


def test_gpu_address_pairing_unit_fact():
    p = gpu_mem([(0, 512, 3), (1, 512, 1), (2, -512, 1), (3, -512, 1), (4, 512, 2), (5, -512, 2)])
    rec = memory.gpu_records(p)
    assert len(rec) == 3
    first = rec.iloc[0]
    assert f"{first['name']}, ({first['alloc_text']}, {first['release_text']}), " \
           f"[duration: {first['dur_ns'] / 1000}], [size: {first['size_kb']}]\n" == \
           ", (1, 2), [duration: 1.0], [size: 0.5]\n"
    # the unfreed allocation at address 3 comes last, without release
    assert rec.iloc[-1][["alloc_text", "release_text", "dur_ns"]].tolist() == ["0", "None", 0]


def test_gpu_size_mismatch_discards_and_realloc_emits():
    p = gpu_mem([(0, 1024, 7), (1, -2048, 7), (2, 1024, 8), (3, 2048, 8), (4, -2048, 8), (5, 0, 9),
                 (6, -1024, 10)])
    rec = memory.gpu_records(p)
    # addr 7 dropped (size mismatch), addr 8: first emitted unreleased, second released
    assert rec[["alloc_text", "release_text", "size_kb"]].values.tolist() == [["2", "None", 1.0], ["3", "4", 2.0]]


def _walk_records(events) -> list[tuple[int, int, int]]:
    """The address walk of reference-1 §4.4 written as a plain loop: (alloc us, bytes, release us or -1), each
    device's addresses apart (ours: the original pairs by address alone) and host memory (device < 0) left out."""
    open_: dict[tuple[int, int], tuple[int, int]] = {}
    out = []
    for e in sorted(events, key=lambda e: e[0]):  # stable: equal times keep file order
        t, size, dev = e[0], e[1], e[3] if len(e) > 3 else 0
        addr = (dev, e[2])
        if dev < 0:
            continue
        if size > 0:
            old = open_.pop(addr, None)
            if old is not None:
                out.append((old[0], old[1], -1))
            open_[addr] = (t, size)
        elif size < 0:
            old = open_.pop(addr, None)
            if old is not None and -size == old[1]:
                out.append((old[0], old[1], t))
    return out + [(t, size, -1) for t, size in open_.values()]


def test_gpu_pairing_equals_the_sequential_walk():
    """The vectorised pairing against the walk, on random event streams (reused addresses, equal
    times, size mismatches, zero sizes, one address on two devices, host memory)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    event = st.tuples(st.integers(0, 5), st.sampled_from([-2048, -1024, 0, 1024, 2048]), st.integers(0, 3),
                      st.sampled_from([0, 0, 1, -1]))

    @settings(max_examples=400, deadline=None)
    @given(st.lists(event, max_size=30))
    def check(events):
        rec = memory.gpu_records(gpu_mem(events))
        got = list(zip((rec["ts"] // 1000).tolist(), (rec["size_kb"] * 1024).astype(int).tolist(),
                       [-1 if r == "None" else int(r) for r in rec["release_text"]], strict=True)) if len(rec) else []
        assert got == _walk_records(events)

    check()


def test_gpu_float_style_times():
    p = gpu_mem([(0, 512, 1)])
    p.memory["ts"] = [1420179719522000]
    p.ops = frame("ops", {"name": ["a"], "cat": ["cpu_op"], "ts": [1420179719508490], "dur": [10]})
    assert memory.gpu_records(p)["alloc_text"].tolist() == ["1420179719522.0"]


def test_us_text_of_negative_times():
    # divmod floors: -1500 ns once read "-2.5" (us); written out by hand
    assert memory._us_texts(np.array([-1500, -250, -3000, -1, 1500, 0])).tolist() == \
        ["-1.5", "-0.25", "-3", "-0.001", "1.5", "0"]
    assert memory._us_texts(np.array([-3000]), float_style=True).tolist() == ["-3.0"]


def test_npu_cann_rows_placed_at_enqueue():
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    # dequeues [0,10]#1, [10,20]#2, [20,30]#3 (us); enqueues of those ids at 100, 200, 300
    p.queue = frame("queue", {"cat": ["dequeue"] * 3 + ["enqueue"] * 3, "ts": [0, 10000, 20000, 100000, 200000, 300000],
                              "dur": [10000] * 3 + [1000] * 3, "correlation_id": [1, 2, 3, 1, 2, 3]})
    p.operator_memory = pd.DataFrame({
        "Name": ["cann::a", "cann::b", "aten::c", "aten::d"], "Size(KB)": [1.0, 2.0, 3.0, 4.0],
        "Allocation Time(us)": ["5.000", "35.000", "7.500", ""], "Release Time(us)": ["9.000", "", "N/A", ""],
        "alloc_ns": [5000, 35000, 7500, 0], "release_ns": [9000, 0, 0, 0]})
    rec = npu_records(p)
    assert rec["ts"].tolist() == [100000, 7500]          # 35 us is in no dequeue window; no-alloc row skipped
    assert rec["name"].tolist() == ["cann::a", ""]
    assert rec["release_text"].tolist() == ["9.000", "0"]
    assert rec["dur_ns"].tolist() == [4000, 0]


def test_npu_cann_row_allocated_at_dequeue_end_is_matched():
    """reference-2 §5.1: a cann:: row matches the dequeue with start <= allocation <= end (the end inclusive)."""
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    # dequeues [0,10]#1, [20,30]#2 (us); enqueues of those ids at 100, 200
    p.queue = frame("queue", {"cat": ["dequeue", "dequeue", "enqueue", "enqueue"], "ts": [0, 20000, 100000, 200000],
                              "dur": [10000, 10000, 1000, 1000], "correlation_id": [1, 2, 1, 2]})
    p.operator_memory = pd.DataFrame({
        "Name": ["cann::at_end", "cann::after_end"], "Size(KB)": [1.0, 2.0],
        "Allocation Time(us)": ["10.000", "10.001"], "Release Time(us)": ["", ""],
        "alloc_ns": [10000, 10001], "release_ns": [0, 0]})
    rec = npu_records(p)
    assert rec["name"].tolist() == ["cann::at_end"]
    assert rec["ts"].tolist() == [100000]                 # placed at enqueue #1


def _pairs_ctx(base: Profile, comp: Profile) -> RunContext:
    return RunContext(base, comp, Options(enable_memory_compare=True))


def test_statistic_unit_fact():
    # each matmul op owns two records of 10240 KB lasting 2000 us; base 2 ops vs comparison 1 op
    def side(n_ops):
        events, ops = [], []
        for i in range(n_ops):
            t0 = i * 10000
            ops.append(("matmul", t0, 5000))
            for j in range(2):
                events += [(t0 + 1 + j, 10240 * 1024, 100 * i + j), (t0 + 2001 + j, -10240 * 1024, 100 * i + j)]
        return gpu_mem(events, ops)

    ctx = _pairs_ctx(side(2), side(1))
    sheets = memory.build(ctx)
    assert [s.name for s in sheets] == ["MemoryCompareStatistic", "MemoryCompare"]
    assert sheets[0].data.iloc[0].tolist() == [1, "matmul", 8.0, 40.0, 2, 4.0, 20.0, 1, -20.0, 0.5]
    detail = sheets[1].data
    # as the original's DP does, the one comparison matmul pairs with the later base matmul
    assert detail.iloc[0].tolist()[6:] == [None, None, None, "", 0, -20480.0, 0.0]
    assert detail.iloc[1, 5] == 20480.0 and detail.iloc[1, 10] == 20480.0
    assert detail.iloc[0, 4].count("\n") == 2 and detail.iloc[0, 4].startswith("matmul, (1, 2001), [duration: 2000.0]")
    assert detail.iloc[1, 4].startswith("matmul, (10001, 12001), [duration: 2000.0]")


def test_no_operator_memory_logs(caplog):
    a = gpu_mem([], [("op", 0, 10)])
    b = gpu_mem([], [("op", 0, 10)])
    b.path = "/dir/x"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        sheets = memory.build(_pairs_ctx(a, b))
    assert "Can't find any memory event in the file: /dir/x (comparison side" in caplog.text
    assert sheets == []  # neither side recorded memory: every cell would be 0 (the original writes them)


def test_one_side_without_memory_is_named(caplog):
    """profile_memory is off by default: a run recorded with it against one without shows the latter at 0 MB,
    as the original does, with a warning naming that side (reference pair 4's GPU base has no memory event)."""
    a = gpu_mem([(0, 1024, 5)], [("op", 0, 10)])
    b = gpu_mem([], [("op", 0, 10)])
    b.path = "/dir/x"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        sheets = memory.build(_pairs_ctx(a, b))
    assert [s.name for s in sheets] == ["MemoryCompareStatistic", "MemoryCompare"]
    # one line per side without records, the original's words first (the log audit saw two lines for it)
    assert [m for m in caplog.messages if "memory" in m] == [
        "Can't find any memory event in the file: /dir/x (comparison side: no memory was recorded: profile_memory=True "
        "records it)"]


def test_side_with_host_memory_only_is_not_told_to_record_memory(caplog):
    """A GPU side whose [memory] events are all host memory (Device Id -1) was recorded with profile_memory on:
    telling its user that profile_memory=True records memory sent them to re-record a run that already had it.
    The line says that its events are host memory, which the memory comparison does not read (review)."""
    a = gpu_mem([(0, 1024, 5)], [("op", 0, 10)])
    b = gpu_mem([(1, 1024, 5), (2, -1024, 5)], [("op", 0, 10)])
    b.memory["device_id"] = -1
    b.path = "/dir/x"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        sheets = memory.build(_pairs_ctx(a, b))
    assert [s.name for s in sheets] == ["MemoryCompareStatistic", "MemoryCompare"]
    assert [m for m in caplog.messages if "memory" in m] == [
        "Can't find any memory event in the file: /dir/x (comparison side: its [memory] events are all host memory, "
        "Device Id < 0, which the memory comparison does not read)"]
    # device events that open no allocation (a free whose allocation came before the capture) say that instead
    c = gpu_mem([(1, -1024, 5), (2, 0, 6)], [("op", 0, 10)])
    c.path = "/dir/y"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        memory.build(_pairs_ctx(a, c))
    assert [m for m in caplog.messages if "memory" in m] == [
        "Can't find any memory event in the file: /dir/y (comparison side: its [memory] events open no device "
        "allocation (frees or zero sizes only))"]


def test_memory_sheets_match_reference_pair1(samples, reference_outputs):
    res = compare(str(samples / L1), str(samples / L2), enable_memory_compare=True)
    book = reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx"
    for name, rows in (("MemoryCompareStatistic", 35), ("MemoryCompare", 115)):
        ours = res.sheet(name)
        ref = read_xlsx(book, sheet_name=name, header=2)
        assert list(ours.columns) == list(ref.columns) and len(ours) == len(ref) == rows
        for col in ref.columns:
            if ref[col].dtype.kind in "if":
                # equal to the original's cells but for the order of float additions (1e-12 relative)
                assert np.allclose(ours[col].astype(float), ref[col].astype(float), rtol=1e-12, atol=0), col
            else:
                got = ours[col].fillna("").astype(str).str.replace("\r", "_x000D_")
                assert got.tolist() == ref[col].fillna("").astype(str).tolist(), col
    assert math.isclose(res.sheet("MemoryCompareStatistic")["Base Allocated Duration(ms)"].iloc[2], 411.86365)


PAIR4_BASE = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
PAIR8_BASE = "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json"


@pytest.mark.parametrize(("base", "why"), [
    (PAIR4_BASE, "no memory was recorded: profile_memory=True records it"),
    (PAIR8_BASE, "a trace file given without its profiling directory has no operator_memory.csv"),
])
def test_side_without_memory_beside_one_with_it_is_named(samples, caplog, base, why):
    """Pair 4's GPU base was traced without profile_memory; pair 8b's base is a trace_view.json given alone,
    which never has operator_memory.csv, whatever profile_memory was. The sheets stay (the other side's
    memory is real, as the original writes them), with one warning naming that side and why; its cells are 0."""
    path = samples / base
    if not path.exists():
        pytest.skip("reference pair sample absent")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(path), str(samples / L1), enable_memory_compare=True)
    assert [m for m in caplog.messages if "memory event" in m] == [
        f"Can't find any memory event in the file: {path} (base side: {why})"]
    assert float(res.sheet("MemoryCompareStatistic")["Base Allocated Memory(MB)"].abs().sum()) == 0.0


def test_pair4_gpu_memory_is_said_once_where_each_figure_is(samples, reference_outputs, caplog):
    """Reference pair 4's GPU base recorded no memory. It was said four times: the original's INFO line, our
    warning ("so the memory sheets show this side's operators at 0 MB"), the note under the console table and
    the memory line ("its 0 MB ... means not recorded"). Each place now says what the others do not: the
    original's line (kept, the drop-in's), the warning why and how to record it, the note the Mem Usage cell,
    the memory line (console and Summary sheet) the sheets' 0 MB and each side's figures. The comparison's
    figures are the reference workbook's MemoryCompareStatistic column, summed, and its console Mem Usage. The
    original's line and the warning said one fact twice: the warning, which says why and what to do, is said
    where the memory comparison runs, the original's line where it does not (test_user_walk_leftovers)."""
    path = samples / PAIR4_BASE
    if not path.exists():
        pytest.skip("reference pair sample absent")
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(path), str(samples / L1))
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [(lv, m) for lv, m in said if "memory" in m and str(path) in m] == [
        ("WARNING", f"Can't find any memory event in the file: {path} (base side: no memory was recorded: "
                    "profile_memory=True records it)")]
    assert [n for n in res.summary["notes"] if "Mem" in n] == [
        "Base row: no peak reserved memory recorded, so its Mem Usage 0.00G is not a measurement."]
    ref = read_xlsx(reference_outputs / "4-gpu-alexnet-vs-npu-text-l1" / "performance_comparison_result.xlsx",
                    sheet_name="MemoryCompareStatistic", header=2)
    assert f"{ref['Comparison Allocated Memory(MB)'].sum():.2f}" == "1426.02"
    assert memory_line(res.frames["memory"]) == (
        "Peak reserved memory (Mem Usage): base not recorded, comparison 2.06 GB.\nMemory allocated inside "
        "operators (a sum of allocations, not memory held at once): base not recorded (its 0 MB in "
        "MemoryCompareStatistic is no reading), comparison 1426.02 MB, so no memory contributor.")
    assert res.summary["rows"][1][res.summary["headers"].index("Mem Usage")] == "2.06G"  # the reference console's


def test_npu_side_without_memory_names_the_file_not_the_option(samples, caplog, tmp_path):
    """An NPU export without operator_memory.csv (or a DB without OP_MEMORY) was told "no memory was recorded:
    profile_memory=True records it", although its profiler_info said profile_memory was on and re-recording
    would not bring the file back (the message audit): it names what the export lacks, and adds the advice
    only where profiler_info does not say profile_memory was on (off, or no profiler_info: a DB given alone),
    as torch_npu writes the file only with it (review). One whose file holds no row the comparison can place
    says that."""
    other = samples / L1
    if not other.exists():
        pytest.skip("sample absent")
    fixture = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"  # has no operator_memory.csv
    assert not (fixture / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").exists()
    unplaced = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixture, unplaced)
    (unplaced / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").write_text(
        "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
        "Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total "
        "Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,"
        "Device Type\naten::empty_strided,18816.5,,,,,,954.37,1452.0,954.37,,,,897357296,NPU:0\n",
        encoding="utf-8")  # a row without an allocation time, which no op can take
    off = tmp_path / "off" / "rank0_ascend_pt"
    shutil.copytree(fixture, off)
    info = off / "profiler_info_0.json"
    assert '"profile_memory": true' in info.read_text(encoding="utf-8")
    info.write_text(info.read_text(encoding="utf-8").replace('"profile_memory": true', '"profile_memory": false'),
                    encoding="utf-8")
    db = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    no_table = edited_copy(db, tmp_path / db.name, "DROP TABLE OP_MEMORY")
    for side, why in ((fixture, "the export has no operator_memory.csv"),
                      (off, "the export has no operator_memory.csv: profile_memory=True records it"),
                      (unplaced, "its operator_memory.csv holds no allocation the comparison can place"),
                      (no_table, "the export has no OP_MEMORY table: profile_memory=True records it")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(str(side), str(other), enable_memory_compare=True)
        assert [m for m in caplog.messages if "memory event" in m] == [
            f"Can't find any memory event in the file: {side} (base side: {why})"]


@pytest.mark.parametrize(("name", "kind"), [("ascend_mindspore_profiler_0.db", "a MindSpore DB export's"),
                                           ("msmonitor_0.db", "an msmonitor DB's")])
def test_mindspore_db_without_memory_read_is_not_told_to_record_it(tmp_path, caplog, name, kind):
    """reference-1 §6: the memory of a MindSpore (or msmonitor) DB is not read, as in the original, whatever it
    holds. Its side was told "the export has no OP_MEMORY table: profile_memory=True records it", which sent a
    MindSpore user to record again what the file held, with the option that was on. The DB excerpt of the
    level-1 sample (its OP_MEMORY rows kept) under the MindSpore and msmonitor names, against the MindSpore-layout
    fixture, a memory-only run (its notices are warnings)."""
    db = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    assert sql(db, "SELECT count(*) FROM OP_MEMORY")[0][0] > 0
    named = tmp_path / name
    shutil.copyfile(db, named)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(named), str(MS_FIXTURE), enable_memory_compare=True)
    assert [m for m in caplog.messages if m.startswith(f"Can't find any memory event in the file: {named}")] == [
        f"Can't find any memory event in the file: {named} (base side: {kind} operator memory is not read, as in the "
        "original)"]


def test_memory_sheets_of_reference_pair4(samples, reference_outputs):
    """As the original writes them: 37 and 117 rows, the NPU side's totals (the GPU base has no memory event)."""
    base = samples / PAIR4_BASE
    if not base.exists():
        pytest.skip("pair 4 sample absent")
    res = compare(str(base), str(samples / L1), enable_memory_compare=True)
    book = reference_outputs / "4-gpu-alexnet-vs-npu-text-l1" / "performance_comparison_result.xlsx"
    for name, rows in (("MemoryCompareStatistic", 37), ("MemoryCompare", 117)):
        assert len(res.sheet(name)) == len(read_xlsx(book, sheet_name=name, header=2)) == rows, name
    stat, ref = res.sheet("MemoryCompareStatistic"), read_xlsx(book, sheet_name="MemoryCompareStatistic", header=2)
    assert math.isclose(stat["Comparison Allocated Memory(MB)"].sum(), ref["Comparison Allocated Memory(MB)"].sum())


def test_two_bare_trace_files_have_no_memory_sheet(samples, caplog):
    """Reference pair 8: neither trace_view.json has operator memory; the original's sheets were all zeros,
    ours are left out, and each side's line says why (at INFO in a default run)."""
    base, other = samples / PAIR8_BASE, samples / L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    if not base.exists():
        pytest.skip("pair 8 sample absent")
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(base), str(other))
    assert [m for m in caplog.messages if "memory event" in m] == [
        f"Can't find any memory event in the file: {p} ({side}: a trace file given without its profiling directory "
        "has no operator_memory.csv)" for p, side in ((base, "base side"), (other, "comparison side"))]
    assert not [n for n in res.sheet_names if n.startswith("Memory")]


def _operator_memory(tmp_path: Path, rows: list[str]) -> tuple[Path, pd.DataFrame, list[str]]:
    """operator_memory.csv holding ``rows`` under its real header: (file, what the loader read, its warnings)."""
    f = tmp_path / "operator_memory.csv"
    f.write_text("Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Device Type\r\n"
                 + "".join(r + "\r\n" for r in rows))
    warnings: list[str] = []
    return f, read_operator_memory(str(f), warnings), warnings


def _records(om: pd.DataFrame) -> pd.DataFrame:
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    p.operator_memory = om
    return npu_records(p)


def test_db_memory_records_without_size_are_said(tmp_path):
    """An OP_MEMORY size of NULL read as 0 without a word (a negative one is named). Three sizes of the tests/data
    DB l1 export set to NULL: one warning, and the operators' memory, by SQL on the edited copy, sums the others."""
    (tmp_path / "db").mkdir()
    db = edited_copy(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db",
                     tmp_path / "db" / "ascend_pytorch_profiler_0.db",
                     "UPDATE OP_MEMORY SET size = NULL WHERE rowid IN (SELECT rowid FROM OP_MEMORY WHERE size > 0 "
                     "LIMIT 3)")
    prof = load_profile(str(db), build_options(enable_memory_compare=True)[0])
    assert [w for w in prof.warnings if "OP_MEMORY" in w] == [
        f"{db}: 3 OP_MEMORY size value(s) missing (NULL) read as 0"]
    ((kb,),) = sql(db, "SELECT total(size) / 1024.0 FROM OP_MEMORY")
    assert prof.operator_memory["Size(KB)"].sum() == pytest.approx(kb) and kb > 0


def test_memory_records_with_negative_size_or_release_before_allocation(tmp_path):
    """A negative size reads as 0 and a block released before its allocation lasts 0, with one warning per
    file (MemoryCompareStatistic showed -170.36 MB, details "[duration: -5000.0]"). Rows cut from
    operator_memory.csv of msinsight text level1 rank0, two of them edited."""
    f, om, warnings = _operator_memory(tmp_path, [
        "aten::empty_strided,-18816.5,1736408883694624.810\t,,,NPU:0",
        "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0",
        "aten::_convolution,512.0,1736408883736793.940\t,1736408883702735.700\t,-34058.240\t,NPU:0"])
    assert om["Size(KB)"].tolist() == [0.0, 25009.5, 512.0]
    assert warnings == [f"{f}: 1 negative Size(KB) value(s) read as 0; 1 block(s) released before their "
                        "allocation (duration read as 0)"]
    rec = _records(om)
    assert rec["dur_ns"].tolist() == [0, 34058240, 0] and (rec["size_kb"] >= 0).all()
    # the DB loader: OP_MEMORY sizes in bytes, times in ns
    (tmp_path / "db").mkdir()
    db = edited_copy(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db",
                     tmp_path / "db" / "ascend_pytorch_profiler_0.db",
                     "UPDATE OP_MEMORY SET size = -size WHERE rowid = "
                     "(SELECT min(rowid) FROM OP_MEMORY WHERE size > 0)",
                     "UPDATE OP_MEMORY SET releaseTime = allocationTime - 5000000 WHERE rowid = "
                     "(SELECT max(rowid) FROM OP_MEMORY WHERE releaseTime > 0)")
    prof = load_profile(str(db), build_options(enable_memory_compare=True)[0])
    assert f"{db}: 1 negative OP_MEMORY size value(s) read as 0; 1 block(s) released before their allocation " \
           "(duration read as 0)" in prof.warnings
    assert (prof.operator_memory["Size(KB)"] >= 0).all() and (prof.operator_memory["Duration(us)"] >= 0).all()
    # the figures, by SQL on the edited copy: the negated size counts 0 (not its magnitude), the block released
    # 5 ms before its allocation lasts 0 (not 5000 us); ``>= 0`` alone held for abs() as well
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    kb, us, n = con.execute(
        "SELECT sum(max(size, 0)) / 1024.0, sum(CASE WHEN allocationTime > 0 AND releaseTime > allocationTime "
        "THEN releaseTime - allocationTime ELSE 0 END) / 1000.0, count(*) FROM OP_MEMORY").fetchone()
    con.close()
    assert len(prof.operator_memory) == n
    assert prof.operator_memory["Size(KB)"].sum() == pytest.approx(kb, abs=1e-6)
    assert prof.operator_memory["Duration(us)"].sum() == pytest.approx(us, abs=1e-6)


def test_memory_blocks_released_over_a_week_late_read_as_never_released(tmp_path):
    """A release time of 2**62 ns (4611686018427387.904 us) showed a block held 2.9e12 ms in Allocated Details and
    the Allocated Duration(ms) figures. No block of a profile is held a week: such a release is a damaged time,
    read as never released (duration 0, as the spec's missing release), with one warning naming the first.
    Rows cut from operator_memory.csv of msinsight text level1 rank0, the second's release edited; then the
    tests/data DB l1 excerpt with its longest-held block's releaseTime so edited, compared against itself."""
    f, om, warnings = _operator_memory(tmp_path, [
        "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,34058.240\t,NPU:0",
        "aten::_convolution,512.0,1736408883736793.940\t,4611686018427387.904\t,2875277134690594.0\t,NPU:0"])
    assert warnings == [f"{f}: 1 Release Time(us) value(s) come over a week after the block's allocation (a damaged "
                        "time?; the first: allocated at 1736408883736793.940 us, released at 4611686018427387.904 us); "
                        "read as never released (duration 0)"]
    assert om["release_ns"].tolist() == [1736408883736793940, 0] and om["Release Time(us)"].tolist()[1] == ""
    rec = _records(om)
    assert rec["dur_ns"].tolist() == [34058240, 0] and rec["release_text"].tolist()[1] == "0"
    # a week exactly is kept (the bound is "over"): 604800 s after the allocation
    _, om, warnings = _operator_memory(tmp_path, [
        "aten::_convolution,512.0,1736408883736793.940\t,1737013683736793.940\t,604800000000.0\t,NPU:0"])
    assert warnings == [] and _records(om)["dur_ns"].tolist() == [604800 * 10**9]
    # the DB export: the sheet's total falls by that block's duration (SQL), where it rose by 2.9e12 ms
    l1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    longest = "SELECT rowid FROM OP_MEMORY WHERE releaseTime > 0 ORDER BY releaseTime - allocationTime DESC LIMIT 1"
    (alloc, held_ns), = sql(l1, f"SELECT allocationTime, releaseTime - allocationTime FROM OP_MEMORY "
                                f"WHERE rowid = ({longest})")
    (tmp_path / "db").mkdir()
    db = edited_copy(l1, tmp_path / "db" / "ascend_pytorch_profiler_0.db",
                     f"UPDATE OP_MEMORY SET releaseTime = {2**62} WHERE rowid = ({longest})")
    prof = load_profile(str(db), build_options(enable_memory_compare=True)[0])
    assert [w for w in prof.warnings if "over a week" in w] == [
        f"{db}: 1 OP_MEMORY releaseTime value(s) come over a week after the block's allocation (a damaged time?; "
        f"the first: allocated at {alloc // 1000}.{alloc % 1000:03d} us, released at 4611686018427387.904 us); "
        "read as never released (duration 0)"]
    col = "Comparison Allocated Duration(ms)"
    whole = compare(str(l1), str(l1), enable_memory_compare=True).sheet("MemoryCompareStatistic")[col].sum()
    edited = compare(str(l1), str(db), enable_memory_compare=True).sheet("MemoryCompareStatistic")[col].sum()
    assert held_ns == 34807090 and edited == pytest.approx(whole - held_ns / 1e6, abs=1e-6)


def test_operator_memory_sizes_over_a_petabyte(samples, caplog, tmp_path):
    """A Size(KB) over 1 PB (no reserved total is larger) is no size: read as 0, counted in the negative-size
    warning's line. At 1e308 KB the sizes summed per operator reached inf and a subtree's memory inf - inf = NaN:
    the base's Allocated Memory(MB) cells were blank, numpy's RuntimeWarnings on stderr. Input: L1's export with
    every Size(KB) of operator_memory.csv made 1e308 (synthetic), against L1 unedited."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")
    base = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / L1, base)
    f = base / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
    rows = list(csv.reader(f.read_text(encoding="utf-8").splitlines()))
    col = rows[0].index("Size(KB)")
    for r in rows[1:]:
        r[col] = "1e308"
    f.chmod(0o644)
    with f.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(base), str(samples / L1), enable_memory_compare=True)
    stat = res.sheet("MemoryCompareStatistic")
    assert not stat["Base Allocated Memory(MB)"].isna().any() and stat["Base Allocated Memory(MB)"].sum() == 0
    assert stat["Comparison Allocated Memory(MB)"].sum() > 0
    assert f"{f}: {len(rows) - 1} Size(KB) value(s) over 1 PB read as 0 (base side)" in caplog.messages


def test_db_operator_memory_sizes_over_a_petabyte(tmp_path):
    """An OP_MEMORY size over 1 PB (synthetic: 2**62 bytes in the level-1 excerpt's first three blocks) is no size,
    as operator_memory.csv's: read as 0 and counted, where it moved the memory figures without a word (351 of the
    level-2 sample's, dbfuzz63). The sizes, by SQL on the copy: every other block's, in KB."""
    first3 = "SELECT rowid FROM OP_MEMORY ORDER BY rowid LIMIT 3"
    db = edited_copy(Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db",
                     tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE OP_MEMORY SET size = 4611686018427387904 WHERE rowid IN ({first3})")
    prof = load_profile(str(db), build_options(enable_memory_compare=True)[0])
    assert f"{db}: 3 OP_MEMORY size value(s) over 1 PB read as 0" in prof.warnings
    (kb,) = sql(db, f"SELECT sum(size) / 1024.0 FROM OP_MEMORY WHERE rowid NOT IN ({first3})")[0]
    assert prof.operator_memory["Size(KB)"].sum() == pytest.approx(kb, abs=1e-6)
    assert int((prof.operator_memory["Size(KB)"] == 0).sum()) >= 3


def test_operator_memory_times_that_are_not_times(tmp_path):
    """An Allocation / Release Time cell that is neither a number nor a "no value" text is read as missing (the
    row is not placed / the block is never released) and counted in one warning; "" and N/A are no junk, but an
    allocation without a time leaves its block out of the comparison, which is said (as a DB export's NULL
    allocationTime is, since session 60); an empty release is a block never released, said of none.
    Rows cut from operator_memory.csv of msinsight text level1 rank0, times edited."""
    f, om, warnings = _operator_memory(tmp_path, [
        "aten::empty_strided,18816.5,1736408883694624.810\t,,,NPU:0",
        "aten::_convolution,25009.5,abc\t,1736408883736793.940\t,34058.240\t,NPU:0",
        "aten::_convolution,512.0,1736408883702735.700\t,null\t,N/A,NPU:0",
        "aten::add,2.0,N/A,N/A,N/A,NPU:0"])
    assert om["alloc_ns"].tolist() == [1736408883694624810, 0, 1736408883702735700, 0]
    assert om["release_ns"].tolist() == [0, 1736408883736793940, 0, 0]
    assert warnings == [f"{f}: 1 Allocation Time(us) and 1 Release Time(us) value(s) are not times; read as missing",
                        f"{f}: 1 Allocation Time(us) value(s) are empty, N/A, 0 or negative (no time); the memory "
                        "comparison leaves those blocks out"]
    assert len(_records(om)) == 2  # the rows with an allocation time


def test_max_kernel_num_drills_down_into_the_statistic_sheet(samples):
    """The statistic sheets group the pair list after the --max_kernel_num drill-down, as the original's do (an
    op with more kernels is counted as its children); with --disable_details no drill-down happens. NPU pair 1."""
    n = samples / "msinsight" / "test" / "data" / "pytorch" / "text"
    base, comp = str(n / "level1" / "rank0_ascend_pt"), str(n / "level2" / "rank0_ascend_pt")

    def rows(**kw) -> pd.DataFrame:
        return compare(base, comp, enable_memory_compare=True, **kw).sheet("MemoryCompareStatistic")

    plain, drilled = rows(), rows(max_kernel_num=4)
    assert (len(plain), len(drilled)) == (35, 48)
    # the same memory, spread over more (child) operator names
    for col in ("Base Allocated Memory(MB)", "Comparison Allocated Memory(MB)"):
        assert math.isclose(plain[col].sum(), drilled[col].sum(), rel_tol=1e-12)
    assert len(rows(disable_details=True, max_kernel_num=4)) == len(rows(disable_details=True)) == 35


def test_db_cann_allocations_are_placed_as_the_text_exports_are(samples, tmp_path):
    """OP_MEMORY names CANN's own allocations by their graph node alone (``ReduceSum7``), where
    operator_memory.csv writes ``cann::ReduceSum7``: the DB loader marks a name no torch op has, so they are
    placed at the launch they belong to, not under whatever op ran at allocation (124 MB under aten::item).
    The text and DB exports of the same workload (separate runs) then agree row for row, at every level."""
    db = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    want = sql(db, "SELECT count(*) FROM OP_MEMORY m JOIN STRING_IDS s ON s.id = m.name WHERE s.value NOT IN "
                   "(SELECT t.value FROM PYTORCH_API p JOIN STRING_IDS t ON t.id = p.name)")[0][0]
    om = load_profile(str(db), build_options(enable_memory_compare=True)[0]).operator_memory
    marked = om["Name"].str.startswith("cann::")
    assert marked.sum() == want == 57
    assert set(om.loc[marked, "Name"]) >= {"cann::ReduceSum7", "cann::trans_TransData_16", "cann::Conv2D4"}
    pt = samples / "msinsight" / "test" / "data" / "pytorch"
    for level in ("level0/rank0", "level0/rank1", "level1/rank0", "level1/rank1", "level2/rank0"):
        res = compare(str(pt / "text" / f"{level}_ascend_pt"), str(pt / "db" / f"{level}_ascend_pt"),
                      enable_memory_compare=True)
        st = res.sheet("MemoryCompareStatistic")
        assert len(st) == 35, level
        assert st["Base Allocated Memory(MB)"].tolist() == st["Comparison Allocated Memory(MB)"].tolist(), level
        assert math.isclose(st["Base Allocated Memory(MB)"].sum(), 1426.01904296875), level
        detail = res.sheet("MemoryCompare")
        assert detail["Size(KB)"].tolist() == detail["Size(KB).1"].tolist(), level


def test_gpu_duration_is_zero_only_for_a_zero_time():
    """reference-2 §5.1: duration = release - allocation, 0.0 when either time is zero. Times in ns: an
    allocation at 0 lasts 0.0; one at 1 ns released at 2001 ns lasts 2.0 us (written out by hand)."""
    p = gpu_mem([(0, 512, 1), (2, -512, 1), (0, 512, 2), (2, -512, 2)])
    p.memory["ts"] = [0, 2000, 1, 2001]
    rec = memory.gpu_records(p)
    assert rec[["alloc_text", "release_text", "dur_ns"]].values.tolist() == [
        ["0.0", "2.0", 0], ["0.001", "2.001", 2000]]


def test_gpu_one_byte_blocks_pair_like_any_other():
    """A 1-byte block opens, reopens and releases like a large one (checked against the plain walk)."""
    events = [(0, 1, 5), (1, -1, 5), (2, 1, 6), (3, 1, 6), (4, 2048, 7), (5, -1, 7)]
    rec = memory.gpu_records(gpu_mem(events))
    got = list(zip((rec["ts"] // 1000).tolist(), (rec["size_kb"] * 1024).astype(int).tolist(),
                   [-1 if r == "None" else int(r) for r in rec["release_text"]], strict=True))
    assert got == _walk_records(events) == [(0, 1, 1), (2, 1, -1), (3, 1, -1)]


def test_npu_records_edge_times_and_a_dequeue_without_enqueue():
    """reference-2 §5.1: a cann:: row whose dequeue has no enqueue of its correlation id is placed at 0; only
    a zero allocation time skips a row (1 ns does not), and its duration is release - allocation."""
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    p.queue = frame("queue", {"cat": ["dequeue"], "ts": [0], "dur": [10000], "correlation_id": [9]})
    p.operator_memory = pd.DataFrame({
        "Name": ["cann::a", "aten::b"], "Size(KB)": [1.0, 2.0],
        "Allocation Time(us)": ["5.000", "0.001"], "Release Time(us)": ["", "2.001"],
        "alloc_ns": [5000, 1], "release_ns": [0, 2001]})
    rec = npu_records(p)
    assert rec[["ts", "name", "dur_ns", "release_text"]].values.tolist() == [
        [0, "cann::a", 0, "0"], [1, "", 2000, "2.001"]]


def test_npu_records_without_operator_memory():
    assert len(npu_records(Profile(path="npu", kind="NPU", source="ascend_text"))) == 0


def test_texts_of_missing_values():
    """None and NaN cells read as ""; any other value (a float too) as its text."""
    got = memory._texts(np.array([None, float("nan"), " a ", 1.5], dtype=object), strip=True)
    assert got.tolist() == ["", "", "a", "1.5"]


def test_one_sided_names_in_both_sheets():
    """reference-2 §5.3/§5.4 UT facts: a name only one side has shows 0 / 0 / 0 on the other side of the
    statistic, and an absent op shows Size 0 and empty details. Base: two matmul ops with two 10240 KB,
    2000 us records each; comparison: one conv op with one such record (the first op of its tree)."""
    def side(name, n_ops, n_rec):
        events, ops = [], []
        for i in range(n_ops):
            t0 = i * 10000
            ops.append((name, t0, 5000))
            for j in range(n_rec):
                events += [(t0 + 1 + j, 10240 * 1024, 100 * i + j), (t0 + 2001 + j, -10240 * 1024, 100 * i + j)]
        return gpu_mem(events, ops)

    stat, detail = (s.data for s in memory.build(_pairs_ctx(side("matmul", 2, 2), side("conv", 1, 1))))
    # sorted by Diff Memory(MB) descending: conv +10 MB, then matmul -40 MB
    assert stat.values.tolist() == [[1, "conv", 0, 0, 0, 2.0, 10.0, 1, 10.0, math.inf],
                                    [2, "matmul", 8.0, 40.0, 2, 0, 0, 0, -40.0, 0.0]]
    rows = detail.values.tolist()
    conv = [r for r in rows if r[6] == "conv"]
    assert len(conv) == 1 and conv[0][1:6] == [None, None, None, "", 0]
    assert conv[0][9:] == ["conv, (1, 2001), [duration: 2000.0], [size: 10240.0]\n", 10240.0, 10240.0, math.inf]


NPU_FIXTURE = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"  # a 3 ms window of L1's trace
MS_FIXTURE = Path(__file__).parent / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"


def _with_operator_memory(src: Path, dst: Path, lines: list[str]) -> Path:
    """A copy of the export ``src`` whose operator_memory.csv holds ``lines`` (L1's header first)."""
    shutil.copytree(src, dst)
    (dst / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").write_text("".join(lines), encoding="utf-8")
    return dst


def test_side_whose_allocations_all_lie_outside_its_ops_still_recorded_memory(samples, caplog, tmp_path):
    """The original's "Can't find any memory event" means no memory record was read, not that none landed on
    an op: a side whose operator_memory.csv rows all fall outside its ops gets no such line but one that says
    so, and shows 0 MB beside the other side's placed allocations. Inputs: the NPU fixture (a 3 ms window
    of L1's trace) with the rows of L1's own operator_memory.csv allocated outside that window (base: no op is
    open then) or inside it (comparison)."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")
    lines = (samples / L1 / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").read_text(
        encoding="utf-8").splitlines(keepends=True)
    events = json.loads((NPU_FIXTURE / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    ops = [(Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"])))
           for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    lo, hi = min(s for s, _ in ops), max(e for _, e in ops)
    rows = list(csv.reader(lines[1:]))
    alloc = [Decimal(r[2].strip()) for r in rows]
    inside = [i for i, t in enumerate(alloc) if lo <= t <= hi]
    outside = [i for i, t in enumerate(alloc) if not lo <= t <= hi]
    assert (len(inside), len(outside)) == (25, 159)
    base = _with_operator_memory(NPU_FIXTURE, tmp_path / "b" / "rank0_ascend_pt",
                                 [lines[0]] + [lines[1 + i] for i in outside])
    comp = _with_operator_memory(NPU_FIXTURE, tmp_path / "c" / "rank0_ascend_pt",
                                 [lines[0]] + [lines[1 + i] for i in inside])
    # the comparison's rows that some op encloses (24 of the 25: an aten::sum row at 731018.83 us falls between
    # two ops), no cann:: row among them: 315310.0 KB
    placed_kb = sum(float(rows[i][1]) for i in inside if any(s <= alloc[i] <= e for s, e in ops))
    assert placed_kb == 315310.0
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(base), str(comp), enable_memory_compare=True)
    assert [m for m in caplog.messages if "memory event" in m] == []
    # said once, as what it means for the sheets (the original writes the zeros without a word)
    assert [m for m in caplog.messages if "memory record" in m] == [
        f"{base}: none of its memory records falls inside a torch op, so the memory sheets show this side's operators "
        "at 0 MB (base side)"]
    stat, detail = res.sheet("MemoryCompareStatistic"), res.sheet("MemoryCompare")
    assert float(stat["Base Allocated Memory(MB)"].abs().sum()) == 0.0
    assert float(detail["Size(KB)"].abs().sum()) == 0.0  # the base side's column
    assert math.isclose(stat["Comparison Allocated Memory(MB)"].sum(), placed_kb / 1024, rel_tol=1e-12)
    # neither side with a record inside an op: every cell would be 0, so no memory sheet, each side said
    caplog.clear()
    comp2 = _with_operator_memory(NPU_FIXTURE, tmp_path / "c2" / "rank0_ascend_pt",
                                  [lines[0]] + [lines[1 + i] for i in outside[:7]])
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(base), str(comp2), enable_memory_compare=True)
    assert not [n for n in res.sheet_names if n.startswith("Memory")]
    assert [m for m in caplog.messages if "memory" in m] == [
        f"{path}: none of its memory records falls inside a torch op, so no operator has memory to compare and the "
        f"memory sheets are left out ({side})" for path, side in ((base, "base side"), (comp2, "comparison side"))]


def test_memory_line_without_paired_ops_keeps_the_original_words(samples, caplog, tmp_path):
    """Neither side has a torch op (two MindSpore exports), so no op pairs and no memory sheet, even where one
    side recorded memory: the other side's line is the original's with why, not the warning that "the memory
    sheets show this side's operators at 0 MB", sheets that are not written. Base: the MindSpore fixture with
    the operator_memory.csv of the run it was cut from (L1) added; its profiler_info says profile_memory was on."""
    src = samples / L1 / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
    if not src.exists():
        pytest.skip("sample absent")
    base = _with_operator_memory(MS_FIXTURE, tmp_path / "profiler" / "rank-0_20250101000000001_ascend_ms",
                                 src.read_text(encoding="utf-8").splitlines(keepends=True))
    assert '"profile_memory": true' in (MS_FIXTURE / "profiler_info_0.json").read_text(encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(base), str(MS_FIXTURE), enable_memory_compare=True)
    assert [m for m in caplog.messages if "memory event" in m] == [
        f"Can't find any memory event in the file: {MS_FIXTURE} (comparison side: the export has no "
        "operator_memory.csv)"]
    assert not [n for n in res.sheet_names if n.startswith("Memory")]


def test_index_of_record_columns_is_the_index_of_the_frame(samples) -> None:
    """``MemoryIndex`` takes an NPU side's records as columns (``_npu_columns``), a GPU side's as a frame: the
    same totals, counts and detail text of every node from either (NPU pair 1, both sides)."""
    from msprof_compare.compare.optree import build_tree

    for path in (L1, L2):
        p = load_profile(str(samples / path), build_options()[0])
        tree = build_tree(p, with_comm=True)
        cols, frame_ = memory._npu_columns(p), npu_records(p)
        assert cols is not None and list(cols) == list(frame_.columns)
        a, b = memory.MemoryIndex(tree, cols), memory.MemoryIndex(tree, frame_)
        assert a.placed == b.placed > 100 and a.recorded == b.recorded == len(frame_)
        assert a.lines() == b.lines()
        for x, y in ((a.kb, b.kb), (a.dur_ns, b.dur_ns), (a.count, b.count)):
            assert x.tolist() == y.tolist()
        assert a.details_of(np.arange(tree.n)) == b.details_of(np.arange(tree.n))


def test_details_of_a_sheet_column_are_each_node_details(samples) -> None:
    """``details_of`` (the MemoryCompare sheet's column, all pairs of a side at once) gives each node's own records'
    lines then its descendants' (breadth-first), worked out from the parent links, ``""`` for -1 and for a subtree
    without records: every node of both sides of NPU pair 1 and of the shared
    timesformer H100 trace, in a shuffled order with repeats and -1s, as a sheet's pairs ask them."""
    from msprof_compare.compare.optree import build_tree

    gpu = "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    for path in (L1, L2, gpu):
        p = load_profile(str(samples / path), build_options()[0])
        tree = build_tree(p, with_comm=True)
        idx = memory.MemoryIndex(tree, memory._index_records(p))
        nodes = np.random.default_rng(0).permutation(np.concatenate([np.arange(-1, tree.n), np.arange(tree.n)]))
        # by hand, from the parent links (not the start-order ranges details_of searches): each owner's own lines
        # go to itself and every ancestor, then a node's are read breadth-first (depth, then start order)
        lines, ptr, parent, depth = idx.lines(), idx.ptr.tolist(), tree.parent.tolist(), tree.depth.tolist()
        below: dict[int, list[int]] = {}
        for o in idx.owners.tolist():
            x = o
            while x >= 0:
                below.setdefault(x, []).append(o)
                x = parent[x]
        text = {x: "".join("".join(lines[ptr[o]:ptr[o + 1]]) for o in sorted(held_by, key=lambda o: (depth[o], o)))
                for x, held_by in below.items()}
        want = [text.get(x, "") if x >= 0 else "" for x in nodes.tolist()]
        # owners' subtrees of one owner, of several (breadth-first text) and none all asked
        owners = idx.owners.tolist()
        held = [sum(x <= o < x + tree.size[x] for o in owners) for x in range(tree.n)]
        assert held.count(0) > tree.n // 4 and held.count(1) > 10 and sum(h > 1 for h in held) > 10
        assert memory.MemoryIndex(tree, memory._index_records(p)).details_of(nodes) == want
        assert idx.details_of(np.zeros(0, np.int64)) == [] and idx.details_of(np.array([-1, -1])) == ["", ""]


def test_allocated_durations_are_whole_nanoseconds_without_float_noise(samples) -> None:
    """Record durations are whole ns; their per-name totals were float running sums and differences
    (4.067431999999998 ms on the bundled bert pair for 4.067432). Every Allocated Duration(ms) cell is now the
    double nearest a whole number of ns (``round(v, 6) == v``), on a GPU pair and an NPU text pair."""
    repo = Path(__file__).resolve().parent.parent / "sample_data"
    text = samples / "msinsight/test/data/pytorch/text"
    pairs = [(repo / "bert-small_h100.json.gz", repo / "bert-small_mi300.json.gz"),
             (text / "level1/rank0_ascend_pt", text / "level2/rank0_ascend_pt")]
    for base, comparison in pairs:
        sheet = compare(str(base), str(comparison), enable_memory_compare=True).sheet("MemoryCompareStatistic")
        for side in ("Base", "Comparison"):
            values = sheet[f"{side} Allocated Duration(ms)"].astype(float).tolist()
            assert sum(v > 0 for v in values) >= 5
            assert [v for v in values if round(v, 6) != v] == [], (base, side)
