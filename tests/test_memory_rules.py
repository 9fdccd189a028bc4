"""Memory sheet rules the mutation audit found unguarded: record order inside an op, the statistic's row order,
``cann::`` placement edge cases, the time texts, and the one-side lines' words and levels."""

from __future__ import annotations

import gzip
import json
import logging
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from frameutil import npu_records
from test_memory_record_reads import LOST
from test_mindspore_user_leftovers import MS_NONE
from xlsxutil import read_xlsx

from msprof_compare.api import compare
from msprof_compare.compare import memory
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).resolve().parent / "data"
TEXT = "msinsight/test/data/pytorch/text"
L1, L2 = f"{TEXT}/level1/rank0_ascend_pt", f"{TEXT}/level2/rank0_ascend_pt"
PAIR1_BOOK = "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx"
MS_FIXTURE = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
TIMESFORMER = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
GPU_WITHOUT_MEMORY = (DATA / "kineto" / "b200_vllm_moe_excerpt.pt.trace.json",
                      DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json")


def _assert_cells_equal(ours, ref, name: str) -> None:
    """Every cell of our sheet as the original wrote it (floats to 1e-12 relative: order of additions)."""
    assert list(ours.columns) == list(ref.columns) and len(ours) == len(ref), name
    for col in ref.columns:
        if ref[col].dtype.kind in "if" and ours[col].dtype.kind in "if":
            assert np.allclose(ours[col].astype(float), ref[col].astype(float), rtol=1e-12, atol=0), (name, col)
        else:
            got = ours[col].fillna("").astype(str).str.replace("\r", "_x000D_").tolist()
            assert got == ref[col].astype(object).where(ref[col].notna(), "").astype(str).tolist(), (name, col)


def _copy_tree(src: Path, dst: Path) -> Path:
    """A writable copy of a sample directory (the samples are read-only)."""
    for f in src.rglob("*"):
        if f.is_file():
            (dst / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (dst / f.relative_to(src)).write_bytes(f.read_bytes())
    return dst


PAIR4_BASE = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
H100_TIMESFORMER = "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"


@pytest.mark.parametrize(("book", "base", "comparison"), [
    ("4-gpu-alexnet-vs-npu-text-l1", PAIR4_BASE, L1),
    ("6b-gpu-timesformer-h100-self", H100_TIMESFORMER, H100_TIMESFORMER),
])
def test_memory_sheets_match_the_original_cell_for_cell(samples, reference_outputs, book, base, comparison):
    """Both memory sheets of reference pairs 4 and 6b, every cell as the original wrote it. Pair 4 (a GPU base
    without memory) fixes the statistic's row order: Diff Memory(MB) descending, ties in first-appearance order,
    base names first (most rows tie at 0.00 or share a ratio of inf); pair 6b fixes the order of an op's own
    records in Allocated Details: by allocation time, not by when the walk emitted them (at their release)."""
    if not (samples / base).exists():
        pytest.skip("reference pair sample absent")
    res = compare(str(samples / base), str(samples / comparison), enable_memory_compare=True)
    wb = reference_outputs / book / "performance_comparison_result.xlsx"
    for name in ("MemoryCompareStatistic", "MemoryCompare"):
        _assert_cells_equal(res.sheet(name), read_xlsx(wb, sheet_name=name, header=2), name)
    if book.startswith("4"):
        # the original's first rows: the comparison's largest allocators, then the base-only names at 0.00
        stat = res.sheet("MemoryCompareStatistic")
        assert stat["Operator Name"].tolist()[:3] == [
            "DistributedDataParallel.forward", "autograd::engine::evaluate_function: ConvolutionBackward0",
            "autograd::engine::evaluate_function: AddmmBackward0"]
        assert stat["Diff Memory(MB)"].tolist()[:3] == [360.85, 318.03, 246.65]
        return
    # Order Id 6 (aten::conv2d): the aten::cudnn_convolution under it owns two blocks; the one allocated first is
    # released last
    events = json.loads(gzip.decompress((samples / base).read_bytes()))["traceEvents"]
    mem = {(str(e["ts"]), e["args"]["Bytes"]) for e in events if e.get("name") == "[memory]"}
    # (alloc us, release us, bytes) of the two blocks, read off the trace's [memory] events by hand
    blocks = [("1420179707195.452", "1420179707724.69", 38535168),
              ("1420179707243.293", "1420179707373.085", 144703488)]
    assert all((a, b) in mem and (r, -b) in mem for a, r, b in blocks)
    want = "".join(f"aten::cudnn_convolution, ({a}, {r}), [duration: {float(Decimal(r) - Decimal(a))}], "
                   f"[size: {b / 1024}]\n" for a, r, b in blocks)
    row = res.sheet("MemoryCompare").iloc[5]
    assert (row["Order Id"], row["Operator Name"], row["Allocated Details"]) == (6, "aten::conv2d", want)


def _l1_with(tmp_path: Path, samples: Path, trace=None, memory_rows=None) -> Path:
    """A copy of L1 whose trace_view.json events / operator_memory.csv rows are edited by the given functions."""
    dst = _copy_tree(samples / L1, tmp_path / "b" / "rank0_ascend_pt")
    out = dst / "ASCEND_PROFILER_OUTPUT"
    if trace is not None:
        f = out / "trace_view.json"
        f.write_text(json.dumps(trace(json.loads(f.read_text(encoding="utf-8")))), encoding="utf-8")
    if memory_rows is not None:
        f = out / "operator_memory.csv"
        lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
        f.write_text("".join(memory_rows(lines)), encoding="utf-8")
    return dst


def test_cann_placement_does_not_depend_on_the_event_order_of_the_trace(samples, reference_outputs, tmp_path):
    """trace_view.json promises no event order: with L1's 159 Dequeue events written in reverse order (in the
    places the file had them, contents unchanged; a synthetic edit) every cann:: block still finds the dequeue that was
    running at its allocation, so both memory sheets stay the original's for pair 1."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")

    def reverse_dequeues(events):
        slots = [i for i, e in enumerate(events) if e.get("cat") == "dequeue"]
        assert len(slots) == 159
        taken = [events[i] for i in slots]
        for i, e in zip(slots, reversed(taken), strict=True):
            events[i] = e
        return events

    base = _l1_with(tmp_path, samples, trace=reverse_dequeues)
    res = compare(str(base), str(samples / L2), enable_memory_compare=True)
    for name in ("MemoryCompareStatistic", "MemoryCompare"):
        _assert_cells_equal(res.sheet(name), read_xlsx(reference_outputs / PAIR1_BOOK, sheet_name=name, header=2),
                            name)


def test_cann_block_allocated_at_a_dequeue_start_belongs_to_that_dequeue(samples, reference_outputs, tmp_path):
    """reference-2 §5.1: a cann:: row takes the dequeue with the largest start <= its allocation, so one
    allocated at the very start of a dequeue belongs to it. L1's cann::trans_TransData_0 (50240 KB, allocated
    at 1736408883704614.040 inside the dequeue of correlation id 8228, which starts at 1736408883702967.720)
    is moved to that start (a synthetic edit): it stays under the op of enqueue 8228, so every MB figure is the
    original's for pair 1, and only its duration grows, by 704614.040 - 702967.720 us = 1.64632 ms."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")
    old, new = "1736408883704614.040", "1736408883702967.720"
    trace = json.loads((samples / L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    deq = [e for e in trace if e.get("cat") == "dequeue" and e["args"]["correlation_id"] == 8228]
    assert [Decimal(str(e["ts"])) for e in deq] == [Decimal(new)]
    assert Decimal(new) < Decimal(old) <= Decimal(new) + Decimal(str(deq[0]["dur"]))

    def move(lines):
        hit = [i for i, line in enumerate(lines) if line.startswith("cann::trans_TransData_0,")]
        assert len(hit) == 1 and f",{old}\t," in lines[hit[0]]
        lines[hit[0]] = lines[hit[0]].replace(f",{old}\t,", f",{new}\t,")
        return lines

    base = _l1_with(tmp_path, samples, memory_rows=move)
    res = compare(str(base), str(samples / L2), enable_memory_compare=True)
    ours = res.sheet("MemoryCompareStatistic")
    ref = read_xlsx(reference_outputs / PAIR1_BOOK, sheet_name="MemoryCompareStatistic", header=2)
    dur = "Base Allocated Duration(ms)"
    _assert_cells_equal(ours.drop(columns=[dur]), ref.drop(columns=[dur]), "MemoryCompareStatistic")
    grown = ours[dur].to_numpy(dtype=float) - ref[dur].to_numpy(dtype=float)
    assert np.count_nonzero(np.abs(grown) > 1e-9) == 1 and np.isclose(grown.sum(), 1.64632, rtol=1e-9, atol=0)
    # the release time 1736408883704720.470 is the row's own; 704720.470 - 702967.720 = 1752.75 us
    line = ("cann::trans_TransData_0, (1736408883702967.720, 1736408883704720.470), [duration: 1752.75], "
            "[size: 50240.0]\n")
    assert sum(line in d for d in res.sheet("MemoryCompare")["Allocated Details"].tolist()) == 1


#: L1's cann::trans_TransData_0 (operator_memory.csv): allocated inside the dequeue of correlation id 8228, whose
#: one enqueue (trace_view.json) starts at 1736408883702948.130
TRANSDATA_ALLOC = "1736408883704614.040"


def _transdata_record(base: Path) -> tuple[int, str]:
    """(placement ts in ns, record name) of the block allocated at TRANSDATA_ALLOC in a copy of L1."""
    rec = npu_records(load_profile(str(base), build_options(enable_memory_compare=True)[0]))
    (i,) = np.flatnonzero(rec["alloc_text"].to_numpy(dtype=object) == TRANSDATA_ALLOC)
    return int(rec["ts"].iloc[i]), rec["name"].iloc[i]


def test_a_later_enqueue_of_one_correlation_id_places_the_cann_block(samples, tmp_path):
    """reference-1 §5.2 builds the enqueue starts as a map from correlation_id to start, so when two enqueues
    carry one id the later one's start is kept. No exporter writes an id twice: L1 with a copy of the enqueue of
    id 8228 written right after it (in the file and in time: at 702960.000 instead of 702948.130, still before
    its dequeue's start 702967.720); cann::trans_TransData_0 is placed at 1736408883702960.000 us."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")

    def twice(events):
        (i,) = [k for k, e in enumerate(events) if e.get("cat") == "enqueue" and e["args"]["correlation_id"] == 8228]
        assert events[i]["ts"] == "1736408883702948.130"
        events.insert(i + 1, {**events[i], "ts": "1736408883702960.000"})
        return events

    assert _transdata_record(_l1_with(tmp_path, samples, trace=twice)) == (
        1736408883702960000, "cann::trans_TransData_0")


def test_only_a_lower_case_cann_mark_is_a_cann_block(samples, tmp_path):
    """reference-1 §5.12: rows whose Name contains ``cann::`` are placed through the task queue, other rows at
    their allocation time and under the op that owns them (no name of their own). The text is matched as
    written: L1 with cann::trans_TransData_0 renamed CANN::trans_TransData_0 (no exporter writes it) is placed
    at its allocation time, 1736408883704614.040 us, not at its enqueue (702948.130)."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")

    def upper(lines):
        hit = [i for i, line in enumerate(lines) if line.startswith("cann::trans_TransData_0,")]
        assert len(hit) == 1 and f",{TRANSDATA_ALLOC}\t," in lines[hit[0]]
        lines[hit[0]] = "CANN" + lines[hit[0]][4:]
        return lines

    assert _transdata_record(_l1_with(tmp_path, samples)) == (1736408883702948130, "cann::trans_TransData_0")
    assert _transdata_record(_l1_with(tmp_path / "upper", samples, memory_rows=upper)) == (1736408883704614040, "")


def test_a_plus_sign_on_operator_memory_times_is_dropped(samples, reference_outputs, tmp_path, caplog):
    """A time written with a leading ``+`` is the time without it: Allocated Details showed it as written
    (``(+1736408883694624.810, 0)``), one block's times unlike every other's. L1 with a ``+`` before every
    non-empty Allocation Time(us) and Release Time(us) (all 184 and 160 of them; a synthetic edit: no exporter
    writes the sign) gives both memory sheets of pair 1 cell for cell as the original wrote them for the file
    without the signs, without a warning."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")
    signed = [0, 0]

    def plus(lines):
        out = [lines[0]]
        for line in lines[1:]:
            cells = line.split(",")
            for k, col in ((0, 2), (1, 3)):
                if cells[col]:
                    cells[col] = "+" + cells[col]
                    signed[k] += 1
            out.append(",".join(cells))
        return out

    base = _l1_with(tmp_path, samples, memory_rows=plus)
    assert signed == [184, 160]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(samples / L2), enable_memory_compare=True)
    assert not [m for m in caplog.messages if "operator_memory.csv" in m]
    for name in ("MemoryCompareStatistic", "MemoryCompare"):
        _assert_cells_equal(res.sheet(name), read_xlsx(reference_outputs / PAIR1_BOOK, sheet_name=name, header=2),
                            name)


def test_whole_microsecond_times_of_a_float_trace_keep_their_point_zero(tmp_path):
    """A trace that writes its times as floats prints a whole time as ``X.0`` (the original prints the float it
    read). The timesformer excerpt with every time rounded to 0.1 us (a synthetic edit: a trace of 100 ns
    resolution) still writes floats, so the aten::linear block allocated at 1420179718368.753 (now 368.8) and
    freed at 1420179718493.035 (now 493.0) reads "(1420179718368.8, 1420179718493.0)", lasting 124.2 us."""
    doc = json.loads(TIMESFORMER.read_text(encoding="utf-8"))
    for e in doc["traceEvents"]:
        for key in ("ts", "dur"):
            if isinstance(e.get(key), float):
                e[key] = round(e[key], 1)
    edited = tmp_path / "rounded.pt.trace.json"
    edited.write_text(json.dumps(doc), encoding="utf-8")
    details = compare(str(edited), str(edited), enable_memory_compare=True).sheet("MemoryCompare")["Allocated Details"]
    assert "aten::addmm, (1420179718368.8, 1420179718493.0), [duration: 124.2], [size: 37633.5]\n" in \
        "".join(details.tolist())


def test_gpu_block_released_at_time_zero_is_released():
    """A free at ts 0 is a release like any other: its text is the time, not "None" (which means "never
    released"). The timesformer excerpt's times shifted so that the aten::empty block of aten::layer_norm
    (100864 bytes at 1420179718144.56, freed at 1420179718161.73) is freed at 0 (a synthetic edit); its
    duration is 0.0, as for any zero time (reference-2 §5.1)."""
    p = load_profile(str(TIMESFORMER), build_options(enable_memory_compare=True)[0])
    shift = 1420179718161730  # ns
    p.memory["ts"] = p.memory["ts"] - shift
    p.ops["ts"] = p.ops["ts"] - shift
    rec = memory.gpu_records(p)
    row = rec[rec["alloc_text"] == "-17.17"]
    assert row[["release_text", "dur_ns", "size_kb"]].values.tolist() == [["0.0", 0, 98.5]]


def test_side_without_ops_leaves_the_memory_sheets_out_when_memory_alone_is_asked(samples, caplog):
    """With --enable_memory_compare alone, L1 (torch ops, memory) against a MindSpore export (no torch op) writes
    no memory sheet, and says why, as when the operator comparison runs too: one side's ops paired with
    nothing would show every op "100 %" above the other side."""
    if not (samples / L1).exists():
        pytest.skip("sample absent")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(samples / L1), str(MS_FIXTURE), enable_memory_compare=True)
    assert not [n for n in res.sheet_names if n.startswith("Memory")]
    assert [m for m in caplog.messages if "torch op" in m] == [
        f"Can't find any torch op in the file: {MS_FIXTURE} (comparison side), so the sheets that pair the ops of both "
        f"sides (operator, module, memory, API) are left out; only the other side has ops ({MS_NONE}): "
        "none of this run's other comparisons applies; enable_profiling_compare=True, "
        "enable_communication_compare=True and enable_kernel_compare=True would add the overall, communication and "
        "kernel comparisons"]  # as a default
    # run of the pair writes them (test_summary.py::test_one_sided_warning_names_the_comparisons_that_apply)


def test_records_without_any_op_pair_get_no_line(samples, caplog, tmp_path):
    """Two MindSpore exports pair no op, so no memory sheet is written: a side whose operator_memory.csv rows
    no op can take is then not told that "no operator has memory to compare" (there is no operator at all);
    only the side without the file gets the original's line. Base: the MindSpore fixture with L1's
    operator_memory.csv added."""
    src = samples / L1 / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"
    if not src.exists():
        pytest.skip("sample absent")
    base = _copy_tree(MS_FIXTURE, tmp_path / "profiler" / "rank-0_20250101000000001_ascend_ms")
    (base / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").write_bytes(src.read_bytes())
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(base), str(MS_FIXTURE), enable_memory_compare=True)
    assert not [n for n in res.sheet_names if n.startswith("Memory")]
    # the one memory line of that side: the fixture has no memory_record.csv, which the peak line reads
    assert [m for m in caplog.messages if "memory" in m and str(base) in m] == [
        f"{base / 'ASCEND_PROFILER_OUTPUT'}: The file memory_record.csv does not exist. (base side: {LOST})"]


@pytest.mark.parametrize(("asked", "level"), [(False, "INFO"), (True, "WARNING")])
def test_two_gpu_traces_without_memory_get_the_original_line(caplog, asked, level):
    """Neither GPU excerpt holds a [memory] event: each side gets the original's line, at INFO without the
    profile_memory advice in a default run, and as a warning with it when the memory comparison was asked
    for (its only hint: no workbook follows); no memory sheet."""
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(*(str(p) for p in GPU_WITHOUT_MEMORY), **({"enable_memory_compare": True} if asked else {}))
    assert not [n for n in res.sheet_names if n.startswith("Memory")]
    why = ": no memory was recorded: profile_memory=True records it" if asked else ""
    assert [(r.levelname, r.getMessage()) for r in caplog.records if "memory event" in r.getMessage()] == [
        (level, f"Can't find any memory event in the file: {p} ({side}{why})")
        for p, side in zip(GPU_WITHOUT_MEMORY, ("base side", "comparison side"), strict=True)]


def test_an_address_on_two_devices_pairs_within_each_device(tmp_path):
    """Allocations and frees pair by (Device Id, Addr): the original pairs by address alone, so where two devices
    hold one address (processes merged into one trace: CUDA's unified address space keeps one process's devices
    apart) a free on device 0 closed device 1's block. The timesformer excerpt (one device) with each [memory]
    event written again 1 ns later on Device Id 1 (a synthetic edit: no sample records two devices) holds each
    of its 15 records twice, device 1's 1 ns later: the aten::linear block allocated at 1420179718368.753 and
    freed at 1420179718493.035 (124.282 us, 37633.5 KB, read off the excerpt) is also 368.754 -> 493.036 on
    device 1, where address pairing read device 0's copy as never released and device 1's as freed by device
    0's free, 1 ns early (124.281 us)."""
    doc = json.loads(TIMESFORMER.read_text(encoding="utf-8"))
    twins = []
    for e in doc["traceEvents"]:
        if e.get("name") == "[memory]":
            assert e["args"]["Device Id"] == 0
            twins.append({**e, "ts": round(e["ts"] + 0.001, 3), "args": {**e["args"], "Device Id": 1}})
    assert len(twins) == 37
    doc["traceEvents"] += twins
    edited = tmp_path / "two_devices.pt.trace.json"
    edited.write_text(json.dumps(doc), encoding="utf-8")
    opts = build_options(enable_memory_compare=True)[0]
    one = memory.gpu_records(load_profile(str(TIMESFORMER), opts))
    two = memory.gpu_records(load_profile(str(edited), opts))
    assert len(one) == 15 and len(two) == 30
    block = two[two["size_kb"] == 37633.5].sort_values("ts")
    assert ["1420179718368.753", "1420179718493.035", 124282] in \
        block[["alloc_text", "release_text", "dur_ns"]].values.tolist()
    assert ["1420179718368.754", "1420179718493.036", 124282] in \
        block[["alloc_text", "release_text", "dur_ns"]].values.tolist()
    # every record of the one-device trace, on each device (device 1's 1 ns later), none other
    late = one.assign(ts=one["ts"] + 1, dur_ns=one["dur_ns"])
    key = ["ts", "size_kb", "dur_ns"]
    expected = sorted(map(tuple, pd.concat([one, late])[key].values.tolist()))
    assert sorted(map(tuple, two[key].values.tolist())) == expected
    assert (two["release_text"] == "None").sum() == 2 * (one["release_text"] == "None").sum() == 4


def test_a_plus_sign_is_dropped_from_read_times_alone(samples, tmp_path):
    """Only a time read loses its ``+``: a cell that is no time keeps its text, so "+N/A" (a synthetic edit of L1's
    first Allocation Time(us)) is named as no time, not taken for the "N/A" an exporter writes for none (which
    the "empty, N/A, 0 or negative" warning counts)."""
    from msprof_compare.loaders.ascend_text import read_operator_memory

    if not (samples / L1).exists():
        pytest.skip("sample absent")

    def first_plus_na(lines):
        cells = lines[1].split(",")
        assert cells[2] == "1736408883694624.810\t"
        cells[2] = "+N/A"
        return [lines[0], ",".join(cells), *lines[2:]]

    base = _l1_with(tmp_path, samples, memory_rows=first_plus_na)
    warnings: list[str] = []
    read_operator_memory(str(base / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv"), warnings)
    said = [w.split(": ", 1)[1] for w in warnings]
    assert said == ["1 Allocation Time(us) value(s) are not times; read as missing"]
