"""The longest stretch with no computing, communication or copy (Breakdown.longest_idle) and the Summary's
"longest idle stretch" note.

Each side's figure is recomputed here from the raw data (json module walk, Decimal µs -> ns, a plain sorted
sweep), not with msprof_compare.timeline.
"""

from __future__ import annotations

import gzip
import json
import logging
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest
from dbutil import sql
from logutil import blocks
from refpairs import PAIRS as REF_PAIRS
from spans import longest_free, minus

from msprof_compare import cli
from msprof_compare.api import compare
from msprof_compare.compare import checks, verdict
from msprof_compare.compare.breakdown import Breakdown, Stretch
from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.compare.breakdown_gpu import gpu_breakdown
from msprof_compare.compare.breakdown_npu import npu_breakdown
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options
from msprof_compare.report.json_report import to_document
from msprof_compare.report.summary_console import render_explain

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[1]
OPTS = Options(enable_profiling_compare=True)
SGLANG_DECODE = "tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz"
SGLANG_PREFILL = "tracelens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"
HTA_ALEXNET = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"


def _ns(v) -> int:
    return int(Decimal(str(v)) * 1000)


def _kineto(events: list[dict]) -> tuple[tuple[int, int], int]:
    """(longest stretch, E2E). Busy: every kernel (computing and nccl), memcpy and memset (a copy is no idle
    time); window: kernels and memcpys with a stream (reference-1 §4.3)."""
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    timed = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in dev if "stream" in e.get("args", {})]
    busy = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
            if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    lo, hi = min(s for s, _ in timed), max(e for _, e in timed)
    return longest_free(busy, lo, hi), hi - lo


def _copies_ns(events: list[dict]) -> int:
    """The time memcpys and memsets take outside every kernel in the E2E window (kernels and memcpys with a
    stream), which Free Time holds and the idle stretches leave out."""
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    iv = [(e["cat"], _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), "stream" in e.get("args", {})) for e in dev]
    lo = min(s for c, s, _, st in iv if st and c != "gpu_memset")
    hi = max(e for c, _, e, st in iv if st and c != "gpu_memset")
    out = minus([(max(s, lo), min(e, hi)) for c, s, e, _ in iv if c != "kernel"],
                [(s, e) for c, s, e, _ in iv if c == "kernel"])
    return sum(e - s for s, e in out)


def test_timesformer_h100_copies_are_no_idle_time(samples):
    """TimeSformer on an H100 (TraceLens): the E2E window opens with 3.46 ms of HtoD copies; counted idle, they made
    the longest stretch 4.069 ms at the window's start, and a user looked for a host stall that was not there. The
    longest stretch with no kernel, memcpy or memset is 0.573 ms, 3.461 ms in, and the check says the copies' time
    beside it; the figures recomputed from the raw events."""
    path = samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    events = json.load(gzip.open(path))["traceEvents"]
    (start, length), e2e = _kineto(events)
    lo = _window_lo(path)
    kernels = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
               if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert longest_free(kernels, lo, lo + e2e) == (lo, 4_068_522)  # what the check said before
    copies = _copies_ns(events)
    assert (length, start - lo, copies) == (573_341, 3_461_358, 3_577_579)
    bd = gpu_breakdown(load_profile(str(path), OPTS), OPTS)
    assert bd.longest_idle == Stretch(start, length, start - lo) and bd.free_copies_ns == copies
    # the stretches and the copies make Free Time (no communication here)
    assert bd.idle_stretches.ns + copies == bd.free_ns
    row = checks._idle_row((bd, bd))
    assert (f"base 0.573 ms long, 3.461 ms into the E2E window (ts {Decimal(start) / 1000:.3f} us; not counting "
            "3.578 ms of copies)") in row["Detail"]


def _v18_events(path: Path) -> tuple[list[tuple[str, int, int]], list[tuple[int, int]], int, int]:
    """A PyTorch 1.8 trace's device events from the raw file (Decimal us): (cat, start, end) of its kernels and
    "Memcpy" / "Memset" copies, its kernels' (start, end), and its E2E window (its kernels with a stream)."""
    events = json.load(gzip.open(path), parse_float=Decimal)["traceEvents"]
    timed = [(e["cat"].lower(), _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e.get("args", {}).get("stream", -1))
             for e in events if e.get("ph") == "X" and e.get("cat", "").lower() in ("kernel", "memcpy", "memset")]
    lo = min(s for c, s, _, st in timed if c == "kernel" and st >= 0)
    hi = max(e for c, _, e, st in timed if c == "kernel" and st >= 0)
    return [t[:3] for t in timed], [(s, e) for c, s, e, _ in timed if c == "kernel"], lo, hi


def test_pytorch_18_memcpy_and_memset_events_are_copies(samples):
    """tb_plugin's ResNet-50 sample, a PyTorch 1.8 trace: its copies are cat "Memcpy" / "Memset", which the E2E window
    leaves out (it reads "gpu_memcpy" as written, the original's rule); they are device work all the same. Recomputed
    from the raw events (Decimal us; an event of 0 ns is no busy time and splits no stretch): E2E 994.100 ms, the
    longest stretch 62.339 ms, 645.945 ms in, 8,283 stretches, 10.085 ms of copies outside the kernels."""
    path = samples / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
    timed, kernels, lo, hi = _v18_events(path)
    busy = [(s, e) for _, s, e in timed if e > s]
    start, length = longest_free(busy, lo, hi)
    free = [(s, e) for s, e in minus([(lo, hi)], busy) if e > s]
    copies = sum(e - s for s, e in minus([(lo, hi)], kernels)) - sum(e - s for s, e in free)
    assert (hi - lo, length, start - lo, len(free), copies) == (994_100_000, 62_339_000, 645_945_000, 8_283,
                                                                10_085_000)
    bd = gpu_breakdown(load_profile(str(path), OPTS), OPTS)
    assert (bd.e2e_ns, bd.longest_idle, bd.free_copies_ns) == (hi - lo, Stretch(start, length, start - lo), copies)
    assert (bd.idle_stretches.count, bd.idle_stretches.ns) == (len(free), sum(e - s for s, e in free))


def test_gpu_excerpt():
    path = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
    want, e2e = _kineto(json.loads(path.read_text())["traceEvents"])
    bd = gpu_breakdown(load_profile(str(path), OPTS), OPTS)
    assert bd.longest_idle[:2] == want and bd.e2e_ns == e2e and 0 < want[1] <= bd.free_ns
    # the offset is from the E2E window's start, the first kernel or memcpy with a stream
    assert bd.longest_idle.start_ns - bd.longest_idle.offset_ns == min(
        _ns(e["ts"]) for e in json.loads(path.read_text())["traceEvents"]
        if e.get("cat") in ("kernel", "gpu_memcpy") and "stream" in e.get("args", {}))


def _overlap_lane_of(path: Path) -> list[tuple[str, int, int]]:
    """The Overlap Analysis events of a trace-event list (trace_view.json, a CANN msprof_*.json timeline)."""
    raw = json.loads(path.read_text())
    pid = next(e["pid"] for e in raw if e.get("ph") == "M" and e["name"] == "process_name"
               and e["args"]["name"] == "Overlap Analysis")
    return [(e["name"], _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]))
            for e in raw if e.get("ph") == "X" and e["pid"] == pid]


def _overlap_lane(pt: Path) -> list[tuple[str, int, int]]:
    return _overlap_lane_of(pt / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")


def _copies(pt: Path) -> list[tuple[int, int]]:
    """The DMA copy tasks of an export's trace_view.json (Task Type SDMA_SQE or PCIE_DMA_SQE): no idle time."""
    raw = json.loads((pt / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    return [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in raw if e.get("ph") == "X"
            and e.get("args", {}).get("Task Type") in ("SDMA_SQE", "PCIE_DMA_SQE")]


def _npu_idle(ov: list[tuple[str, int, int]], copies: list[tuple[int, int]] = ()) -> tuple[int, int]:
    """Busy: the Overlap Analysis lane's Computing and Communication(Not Overlapped) events (what Free Time
    leaves out) and the ``copies``; window: the whole lane."""
    busy = [(s, e) for n, s, e in ov if n in ("Computing", "Communication(Not Overlapped)")] + list(copies)
    return longest_free(busy, min(s for _, s, _ in ov), max(e for _, _, e in ov))


def test_npu_text_excerpt():
    """The excerpt keeps one long Communication event and not all the Not Overlapped parts after the last
    computing task, so its longest stretch (77.300 ms) is at the end of the window."""
    pt = DATA / "npu" / "rank0_ascend_pt"
    want = _npu_idle(_overlap_lane(pt), _copies(pt))
    idle = npu_breakdown(load_profile(str(pt), OPTS), OPTS).longest_idle
    assert idle[:2] == want and want[1] == 77_299_624
    assert idle.offset_ns == want[0] - min(s for _, s, _ in _overlap_lane(pt))


def test_npu_text_sample_is_the_longest_free_run(samples):
    """On a whole export the Free events fill exactly the rest of the lane: the stretch is the longest run of
    touching Free events (1.319 ms of AlexNet's 136.581 ms level-1 step), where no copy task runs."""
    pt = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    ov = _overlap_lane(pt)
    want = _npu_idle(ov, _copies(pt))
    assert npu_breakdown(load_profile(str(pt), OPTS), OPTS).longest_idle[:2] == want
    runs: list[list[int]] = []
    for s, e in sorted((s, e) for n, s, e in ov if n == "Free"):
        if runs and s <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], e)
        else:
            runs.append([s, e])
    assert max(e - s for s, e in runs) == want[1] == 1_318_826


def test_db_excerpt():
    """DB: busy are the computing tasks and communication ops the loader read and the copy tasks (MEMCPY_ASYNC,
    read here with SQL); the window also spans the TASK rows of other types (memcpy, event waits: reference-1
    §7.3). On the level-1 excerpt the window opens with a 0.828 ms MEMCPY_ASYNC, 5.686 ms before the first
    computing task: counted idle, the copy made that whole span the longest stretch; the longest is the 4.339 ms
    after the second copy (1.345 ms in, 2.3 us long)."""
    db = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    p = load_profile(str(db), OPTS)
    bd = db_breakdown(p, OPTS)
    ops = p.comm[p.comm["lane"] == "op"]
    spans = [(int(s), int(s + d)) for f in (p.kernels, ops) for s, d in zip(f["ts"], f["dur"], strict=True)]
    excluded = ("KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV",
                "PROFILING_ENABLE", "PROFILING_DISABLE")
    ((lo, hi),) = sql(db, "SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                          f"WHERE s.value NOT IN ({','.join('?' * len(excluded))})", excluded)
    lo, hi = min(lo, *(s for s, _ in spans)), max(hi, *(e for _, e in spans))
    copies = sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                     "WHERE s.value = 'MEMCPY_ASYNC'")
    want = longest_free(spans + [tuple(c) for c in copies], lo, hi)
    assert bd.e2e_ns == hi - lo and bd.longest_idle == Stretch(want[0], want[1], want[0] - lo)
    assert (want[1], want[0] - lo) == (4_339_026, 1_346_747) and want[0] + want[1] == min(s for s, _ in spans)
    # counted idle, the copies made the span before the first computing task one 5.686 ms stretch
    assert longest_free(spans, lo, hi) == (lo, 5_685_773)


def test_sglang_decode_note(samples, caplog):
    """SGLang decode on an MI300X: one arange kernel runs 463 ms before the rest of the step, so one idle stretch
    is 97.8 % of E2E; the prefill + decode trace's longest stretch is 49.96 %, under the threshold."""
    base, comp = samples / SGLANG_DECODE, samples / SGLANG_PREFILL
    want_b, e2e_b = _kineto(json.load(gzip.open(base))["traceEvents"])
    want_c, e2e_c = _kineto(json.load(gzip.open(comp))["traceEvents"])
    assert (want_b[1], e2e_b) == (463_295_405, 473_749_943)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(comp), enable_profiling_compare=True)
    row = res.guards.set_index("Check").loc[checks.IDLE_CHECK]
    assert row["Status"] == "note"
    assert (row["Base"], row["Comparison"]) == (want_b[1] / e2e_b, want_c[1] / e2e_c)
    assert row["Comparison"] < checks.IDLE_SHARE <= row["Base"]
    for side, (start, length), e2e_lo in (("base", want_b, _window_lo(base)), ("comparison", want_c, _window_lo(comp))):
        assert (f"{side} {length / 1e6:.3f} ms long, {(start - e2e_lo) / 1e6:.3f} ms into the E2E window "
                f"(ts {Decimal(start) / 1000:.3f} us)") in row["Detail"]
    assert "the base side's E2E and Free Time mostly measure that stretch" in row["Detail"]
    assert "so does the E2E difference" not in row["Detail"]  # 463.3 vs 493.3 ms: the difference is computing
    assert verdict.IDLE_ASIDE not in res.verdict  # the verdict points to the stretch only where it is the change
    notes = blocks(caplog.messages, checks.NOTE_CHECKS[checks.IDLE_CHECK])
    # 49.96 % read "comparison 50.0%" beside "is half or more of a side's E2E time", which holds for the base alone:
    # a share under the threshold that one decimal rounds up to it is cut at two
    assert 0.4996 <= want_c[1] / e2e_c < 0.4997
    assert len(notes) == 1 and "(base 97.8%, comparison 49.96%)" in notes[0][0]
    # the log's note says once what the shares are (it repeated it, then gave a length under "as a share of E2E"),
    # then a line per side's stretch and one on how to read them
    assert notes[0][0].endswith("(base 97.8%, comparison 49.96%): its length and start:")
    assert notes[0][1].startswith(f"base {want_b[1] / 1e6:.3f} ms long, ") and notes[0][2].startswith("comparison ")
    assert notes[0][3].startswith("the base side's E2E and Free Time mostly measure that stretch")
    assert len(notes[0]) == 4 and row["Detail"].startswith(checks.IDLE_LEAD)
    assert not [line for line in notes[0] if "as a share of E2E" in line]


def _window_lo(path: Path) -> int:
    return min(_ns(e["ts"]) for e in json.load(gzip.open(path))["traceEvents"]
               if e.get("cat") in ("kernel", "gpu_memcpy") and "stream" in e.get("args", {}))


def _bd(e2e: int, idle: int) -> Breakdown:
    bd = Breakdown("GPU")
    bd.e2e_ns, bd.longest_idle = e2e, Stretch(1_000, idle, 10)
    return bd


def test_one_input_says_its_idle_stretch_once(samples, caplog):
    """SGLANG decode against itself (one input on both sides, ``api.one_input``): the note read "(base 97.8%,
    comparison 97.8%)" over a "base" and a "comparison" line of one stretch; it says the share and the stretch
    once, "both sides", as the early-kernels note does. The Summary's Base and Comparison keep each side's share."""
    path = samples / SGLANG_DECODE
    (start, length), e2e = _kineto(json.load(gzip.open(path))["traceEvents"])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(path), str(path), enable_profiling_compare=True)
    row = res.guards.set_index("Check").loc[checks.IDLE_CHECK]
    assert (row["Base"], row["Comparison"]) == (length / e2e, length / e2e)
    (note,) = blocks(caplog.messages, checks.NOTE_CHECKS[checks.IDLE_CHECK])
    # its copies (0.013 ms outside the kernels) cut no stretch: the row does not say them
    events = json.load(gzip.open(path))["traceEvents"]
    kernels = [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events
               if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert longest_free(kernels, _window_lo(path), _window_lo(path) + e2e)[1] == length
    assert _copies_ns(events) == 13_177
    where = (f"both sides {length / 1e6:.3f} ms long, {(start - _window_lo(path)) / 1e6:.3f} ms into the E2E window "
             f"(ts {Decimal(start) / 1000:.3f} us)")
    assert note == [f"{checks.NOTE_CHECKS[checks.IDLE_CHECK]} (both sides {length / e2e:.1%}): its length and start:",
                    where, "both sides' E2E and Free Time mostly measure that stretch (a profile opened long before "
                    "the work, a stall, a host-side wait): compare Computing Time and its categories"]
    assert where in row["Detail"] and "comparison" not in row["Detail"]


@pytest.mark.parametrize("sides, status, whose", [
    (((100, 49), (200, 99)), "ok", None),                     # under half on both sides
    (((100, 50), (200, 10)), "note", "the base side's"),      # exactly half on one side
    (((100, 10), (200, 150)), "note", "the comparison side's"),
    (((100, 60), (200, 150)), "note", "both sides'"),
    (((0, 0), (200, 150)), "note", "the comparison side's"),  # the base side has no E2E window
    (((0, 0), (200, 50)), "unknown", None),                   # ... and the other is under half
])
def test_row_status(sides, status, whose):
    row = checks._idle_row(tuple(_bd(*s) for s in sides))
    assert row["Check"] == checks.IDLE_CHECK and row["Status"] == status
    b, c = (s[1] / s[0] if s[0] else None for s in sides)
    assert (row["Base"], row["Comparison"]) == (b, c)
    assert ("mostly measure that stretch" in row["Detail"]) == (status == "note")
    if whose:
        assert f"; {whose} E2E and Free Time" in row["Detail"]
    # a side without E2E is not described, only said to have no time breakdown where the other side's is a note
    described = row["Detail"].replace("the base side has no time breakdown", "")
    assert ("base" in described) == bool(sides[0][0])
    assert ("the base side has no time breakdown" in row["Detail"]) == (not sides[0][0] and status == "note")


def test_row_names_the_difference_only_when_the_stretches_make_it():
    """Base 60 of 100 idle, comparison 160 of 200: the +100 of idle is the whole +100 of E2E. Base 60 of 100,
    comparison 150 of 400: +90 of idle against +300 of E2E, so only the base side's figures are the stretch."""
    clause = "mostly measure that stretch, and so does the E2E difference ("
    assert clause in checks._idle_row((_bd(100, 60), _bd(200, 160)))["Detail"]
    assert clause not in checks._idle_row((_bd(100, 60), _bd(400, 150)))["Detail"]
    assert clause not in checks._idle_row((_bd(100, 60), _bd(100, 10)))["Detail"]   # no E2E difference
    assert clause in checks._idle_row((_bd(200, 160), _bd(100, 60)))["Detail"]      # -100 of idle, -100 of E2E


def test_row_names_no_difference_that_the_stretches_moved_against():
    """Base 60 of 100 idle, comparison 40 of 120: the E2E grew by 20 while the stretch shrank by 20 (computing
    grew by 40), so the stretches make none of the E2E difference; the row and the verdict's aside said they made
    most of it, as |-20| is half of |+20| or more. Likewise base 40 of 120, comparison 60 of 100."""
    for sides in (((100, 60), (120, 40)), ((120, 40), (100, 60))):
        row = checks._idle_row(tuple(_bd(*s) for s in sides))
        assert row["Status"] == "note" and "mostly measure that stretch (" in row["Detail"]
        assert checks.IDLE_DIFF not in row["Detail"]


def test_a_stretch_moving_against_the_e2e_change_is_not_said_to_make_it():
    """bert-small H100 -> MI300X (sample_data): E2E 3,907,825 -> 3,495,976 ns, 411,849 ns shorter (read here from
    the real breakdowns), longest idle stretches edited to 2,000,000 ns (51 % of the base E2E: the note) and
    2,300,000 ns: the idle stretch grew by 300,000 ns, over half of the change, while E2E shrank. Compared by size
    alone, the note said "and so does the E2E difference" and the verdict "most of that difference is time with no
    computing and no communication", where the comparison is faster in spite of idling longer (its computing holds
    the change). With the stretch 300,000 ns shorter instead (the E2E change's way) both still say it."""
    import pandas as pd

    sample = REPO / "sample_data"
    b, c = (gpu_breakdown(load_profile(str(sample / name), OPTS), OPTS)
            for name in ("bert-small_h100.json.gz", "bert-small_mi300.json.gz"))
    assert (b.e2e_ns, c.e2e_ns) == (3_907_825, 3_495_976)
    b.longest_idle = Stretch(b.longest_idle.start_ns, 2_000_000, 0)
    for comp_idle, said in ((2_300_000, False), (1_700_000, True)):
        c.longest_idle = Stretch(c.longest_idle.start_ns, comp_idle, 0)
        row = checks._idle_row((b, c))
        assert row["Status"] == "note"
        assert "E2E and Free Time mostly measure that stretch" in row["Detail"]
        assert (checks.IDLE_DIFF in row["Detail"]) is said
        assert verdict.idle_aside(checks.guard_frame([row])) == (verdict.IDLE_ASIDE if said else "")
        assert verdict.idle_aside(pd.DataFrame([row])) == ""  # a frame without the guards' flags says nothing


#: Reference pair 4's Computing Time (the original's OverallMetrics: PARAM AlexNet's GPU 10.63 ms, the level-1 NPU
#: step's 8.873756 ms), as the idle sentence gives it: -1.756244 ms, -16.5216 % (and, the other way, +19.7914 %)
AFTER_IDLE = "10.630 ms -> 8.874 ms (-1.756 ms, -16.52%)"


VLLM_CAPTURES = tuple(f"tracelens/tests/traces/inference/{run}/capture_traces/graph_capture_rank_0.{ts}"
                      ".pt.trace.json.gz" for run, ts in (("vllm_decode_full", "1773709742341309550"),
                                      ("vllm_prefilldecode_piecewise", "1773709679453551615")))


def test_difference_is_said_to_measure_the_stretches_only_within_half_of_it():
    """The E2E difference "so does" mostly measure the stretches only where their change is it to within half of
    it (0.5 to 1.5 times it); the verdict's aside keeps its rule (half of it or more, the same way). Base 50 of
    100 idle, comparison E2E 110 (+10): a stretch change of +15 or +5 is said, +16 or +4 not; +16 still makes the
    verdict's aside."""
    for comp_idle, said, aside in ((65, True, True), (66, False, True), (55, True, True), (54, False, False)):
        row = checks._idle_row((_bd(100, 50), _bd(110, comp_idle)))
        assert row["Status"] == "note" and (checks.IDLE_DIFF in row["Detail"]) is said, comp_idle
        assert row[checks.IDLE_EXPLAINS] is aside


def test_vllm_capture_traces_difference_is_not_said_to_be_the_stretch(samples):
    """The vLLM capture traces (decode full graph against prefill+decode piecewise), recomputed from the raw
    events: E2E 57.795 -> 55.172 ms (-2.623), longest stretches 56.138 -> 2.595 ms (-53.543), twenty times the E2E
    difference, whose rest (+50.920 ms: the comparison idles in shorter stretches) is far over half of it. The
    note said "and so does the E2E difference"; the verdict's aside (most of the difference is idle time: Free
    Time -3.438 ms) stays."""
    want = [_kineto(json.load(gzip.open(samples / name))["traceEvents"]) for name in VLLM_CAPTURES]
    assert [(e2e, idle[1]) for idle, e2e in want] == [(57_795_418, 56_138_430), (55_172_404, 2_595_064)]
    res = compare(*(str(samples / name) for name in VLLM_CAPTURES), enable_profiling_compare=True)
    (row,) = res.guards.loc[res.guards["Check"] == checks.IDLE_CHECK].to_dict("records")
    assert row["Status"] == "note" and "the base side's E2E and Free Time mostly measure that stretch (" in row[
        "Detail"] and checks.IDLE_DIFF not in row["Detail"]
    idle = res.verdict.split(".\n")[1]
    assert idle.startswith("Most of that difference is time with no computing, communication or copy (validity check: "
                           "longest idle stretch), so compare Computing Time, ")
    assert idle.endswith(", and its categories")


def test_row_without_e2e_on_either_side():
    row = checks._idle_row((_bd(0, 0), _bd(0, 0)))
    assert (row["Status"], row["Base"], row["Comparison"], row["Detail"]) == (
        "unknown", None, None, "no E2E time on either side")


def test_no_row_without_the_time_breakdown():
    """The stretch comes from the time breakdown: a run without it (no profiling comparison, no gate) has no such
    row."""
    path = str(DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json")
    assert checks.IDLE_CHECK not in compare(path, path, enable_operator_compare=True).guards["Check"].tolist()
    g = compare(path, path, enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc[checks.IDLE_CHECK, "Status"] == "ok"
    # the CI gate computes the breakdown without OverallMetrics: the check is made there too
    g = compare(path, path, enable_operator_compare=True, fail_on_regression=5.0).guards.set_index("Check")
    assert g.loc[checks.IDLE_CHECK, "Status"] == "ok"


def test_hta_alexnet_against_npu(samples, tmp_path):
    """Reference pair 4's GPU side (hta's PARAM AlexNet benchmark) idles 10.034 of its 12.920 s E2E in one
    stretch (a 4 us memset, device work, ends the 10.858 s without a kernel 0.824 s in): its E2E against the NPU
    training step is mostly that stretch."""
    path = samples / HTA_ALEXNET
    want, _ = _kineto(json.load(gzip.open(path))["traceEvents"])
    res = compare(str(path), str(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"),
                  enable_profiling_compare=True)
    row = res.guards.set_index("Check").loc[checks.IDLE_CHECK]
    assert row["Status"] == "note" and want[1] // 1_000_000 == 10_033
    assert "the base side's E2E and Free Time mostly measure that stretch, and so does the E2E difference" in \
        row["Detail"]
    assert f"base {want[1] / 1e6:.3f} ms" in row["Detail"]
    # the verdict and the gate's line say it too: "the base takes 94.60x as long" alone read as the NPU's speed.
    # By hand: the NPU step's E2E is 136.581009 ms (reference pair 1's OverallMetrics), so its stretch is at most
    # that, and the stretches differ by over 10,721 ms, over half of the E2E change (under 12,920 ms).
    e2e_gpu = _kineto(json.load(gzip.open(path))["traceEvents"])[1]
    assert 2 * (want[1] - 136_581_009) >= e2e_gpu
    # The E2E figures by hand: the GPU's from its events (_kineto), the NPU's 136.581009 ms; the idle words a
    # sentence of their own after a line break (one line of 289 characters), a console line and a Summary row each
    said = [f"E2E time {e2e_gpu / 1e6:.3f} ms -> 136.581 ms ({(136_581_009 - e2e_gpu) / 1e6:.3f} ms, "
            f"{(136_581_009 - e2e_gpu) / e2e_gpu:.2%}): the comparison is faster than the base, the base takes "
            f"{e2e_gpu / 136_581_009:.2f}x as long.",
            "Most of that difference is time with no computing, communication or copy (validity check: longest idle "
            f"stretch), so compare Computing Time, {AFTER_IDLE}, and its categories"]
    assert said[0] == ("E2E time 12920.244 ms -> 136.581 ms (-12783.663 ms, -98.94%): the comparison is faster than "
                       "the base, the base takes 94.60x as long.")
    # (the idle sentence, with Computing Time's change, is 200 characters: under the contributors note's 240)
    assert res.verdict == "\n".join(said) and max(map(len, said)) < 210
    # the gate's line alike: the idle words a sentence and a line of their own (one line of 232 characters), each
    # line closed by a stop as the console closes the verdict's; the change in percent by hand, to 2 decimals
    assert res.regression_gate(5.0) == (0, (
        f"No regression: E2E time {e2e_gpu / 1e6:.3f} ms -> 136.581 ms ({(136_581_009 - e2e_gpu) / 1e6:.3f} ms, "
        f"{(136_581_009 - e2e_gpu) / e2e_gpu:+.2%}), threshold +5%.\n{said[1]}."))
    assert res.regression_gate(5.0)[1].startswith("No regression: E2E time 12920.244 ms -> 136.581 ms (-12783.663 ms, "
                                                  "-98.94%)")
    lines = render_explain(res.frames, res.verdict).split("\n")
    assert lines[lines.index(said[0]) + 1] == said[1] + "."
    out = tmp_path / "out.xlsx"
    res.to_excel(out)
    rows = [r[0] for r in openpyxl.load_workbook(out)["Summary"].iter_rows(max_col=1, values_only=True)]
    assert rows[rows.index(said[0]) + 1] == said[1] + "."
    # the result schema quotes the sentence as the run words it (it still read "no computing and no communication")
    schema = json.loads((REPO / "msprof_compare/schemas/result.schema.json").read_text(encoding="utf-8"))
    assert f'"{said[1]}"' in schema["properties"]["summary"]["properties"]["verdict_idle_note"]["description"]


def test_gate_says_the_idle_stretch_on_a_line_of_its_own(samples, tmp_path, capsys):
    """Reference pair 4 through the CLI's --fail_on_regression, both ways: the gate's line and the idle words are two
    sentences on two lines, on stderr, in the log (a line break in one log record was written as "\\n") and in the
    JSON's gate.lines; the exit code is the gate's. The E2E times by hand: the GPU's from its events, the NPU
    step's 136.581009 ms (reference pair 1's OverallMetrics)."""
    gpu, npu = samples / HTA_ALEXNET, samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    e2e_gpu = _kineto(json.load(gzip.open(gpu))["traceEvents"])[1]
    idle = ("Most of that difference is time with no computing, communication or copy (validity check: longest idle "
            "stretch), so compare Computing Time, {}, and its categories.")
    for base, comp, code, head in (
            (npu, gpu, 3, f"Performance regression: E2E time 136.581 ms -> {e2e_gpu / 1e6:.3f} ms "
                          f"({(e2e_gpu - 136_581_009) / 1e6:+.3f} ms, {(e2e_gpu - 136_581_009) / 136_581_009:+.2%}), "
                          "threshold +5%."),
            (gpu, npu, 0, f"No regression: E2E time {e2e_gpu / 1e6:.3f} ms -> 136.581 ms "
                          f"({(136_581_009 - e2e_gpu) / 1e6:+.3f} ms, {(136_581_009 - e2e_gpu) / e2e_gpu:+.2%}), "
                          "threshold +5%.")):
        out = tmp_path / str(code)
        assert cli.execute({"base_profiling_path": str(base), "comparison_profiling_path": str(comp),
                            "output_path": str(out), "output_format": "json", "fail_on_regression": "5"}) == code
        err = [line.split("] ", 1)[-1] for line in capsys.readouterr().err.splitlines()]
        said = idle.format(AFTER_IDLE if base == gpu else "8.874 ms -> 10.630 ms (+1.756 ms, +19.79%)")
        assert err[err.index(head) + 1] == said
        gate = json.loads(next(out.glob("*.json")).read_text())["gate"]
        assert gate["lines"][:2] == [head, said] and gate["exit_code"] == code
    assert head == "No regression: E2E time 12920.244 ms -> 136.581 ms (-12783.663 ms, -98.94%), threshold +5%."


def test_idle_start_is_shown_exactly():
    """An epoch start in ns is shown from the integer: as a float of us, 1736408883707769235 ns read
    ...769.250 (a float that large holds quarters of a us only)."""
    assert f"{1736408883707769235 / 1e3:.3f}" == "1736408883707769.250"  # what the float gave
    late = Breakdown("GPU")
    late.e2e_ns, late.longest_idle = 100, Stretch(1736408883707769235, 60, 10)
    assert "(ts 1736408883707769.235 us)" in checks._idle_row((_bd(100, 60), late))["Detail"]
    assert "(ts 1.000 us)" in checks._idle_row((_bd(100, 60), late))["Detail"]  # _bd's start: 1,000 ns


def test_idle_detail_rounds_its_ms_as_the_verdict():
    """The check's Detail gives ms a half away from zero, as the verdict and the waterfall: a stretch 1,002,500 ns
    into the E2E window reads 1.003 ms (by the float 1.0025, 1.00249999... in binary, it read 1.002, while a
    12,004,500 ns stretch read 12.005: a half went either way)."""
    from types import SimpleNamespace

    from msprof_compare.compare.checks import _idle_row

    def side(length: int) -> SimpleNamespace:
        idle = SimpleNamespace(length_ns=length, offset_ns=1_002_500, start_ns=5_000_000)
        return SimpleNamespace(e2e_ns=20_000_000, longest_idle=idle, computing_ns=0, categorised_ns=0,
                               longest_with_copies_ns=0)

    detail = _idle_row((side(12_004_500), side(12_004_500)))["Detail"]
    assert "base 12.005 ms long, 1.003 ms into the E2E window" in detail


def test_a_side_without_idle_time_has_no_stretch_placed(samples, caplog):
    """hta's MI250 minitoy (base) idles 74.4 % of its E2E in one stretch; hta's triton_example (comparison) is one
    kernel, so computing fills its whole E2E window (recomputed here: the longest free run is 0 ns). The row and the
    log's note said "comparison 0.000 ms long, 0.000 ms into the E2E window (ts ...)", a stretch that does not
    exist; they say the side has none."""
    base = samples / "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    comp = samples / "hta/tests/data/triton_example/triton_example.json.gz"
    (_, free_c), e2e_c = _kineto(json.load(gzip.open(comp))["traceEvents"])
    (start_b, free_b), e2e_b = _kineto(json.load(gzip.open(base))["traceEvents"])
    assert free_c == 0 < e2e_c and 2 * free_b >= e2e_b
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(comp), enable_profiling_compare=True)
    row = res.guards.set_index("Check").loc[checks.IDLE_CHECK]
    assert (row["Status"], row["Comparison"]) == ("note", 0.0)
    none = "comparison none (computing, communication and copies fill its E2E window)"
    assert f"base {free_b / 1e6:.3f} ms long, " in row["Detail"] and f", {none};" in row["Detail"]
    assert "comparison 0.000 ms long" not in row["Detail"]
    notes = blocks(caplog.messages, checks.NOTE_CHECKS[checks.IDLE_CHECK])
    assert len(notes) == 1 and notes[0][2] == none and "0.000 ms into the E2E window" not in "".join(notes[0])


def test_a_stretch_of_one_ns_is_a_stretch():
    """Only a side with no idle time at all has "none": a 1 ns stretch is placed (its start is where it is)."""
    from types import SimpleNamespace

    one = SimpleNamespace(longest_idle=Stretch(start_ns=2_000_000, length_ns=1, offset_ns=1_000),
                          longest_with_copies_ns=0)
    assert checks._idle_where("base", one) == "base 0.000 ms long, 0.001 ms into the E2E window (ts 2000.000 us)"
    assert checks._idle_where("base", SimpleNamespace(longest_idle=Stretch(), longest_with_copies_ns=0)) == (
        "base none (computing, communication and copies fill its E2E window)")


def test_sglang_workbook_share_under_the_threshold_keeps_two_decimals(samples, tmp_path):
    """The Summary sheet's validity checks show the SGLang prefill + decode stretch, 49.96 % of E2E, as the log does:
    its 0.0% format showed "50.0%" beside the note "from 50%" that holds for the base side alone."""
    import openpyxl

    res = compare(str(samples / SGLANG_DECODE), str(samples / SGLANG_PREFILL), enable_profiling_compare=True)
    ws = openpyxl.load_workbook(res.to_excel(str(tmp_path / "s.xlsx")))["Summary"]
    row = next(r for r in ws.iter_rows() if r[0].value == checks.IDLE_CHECK)
    base, comp = row[2], row[3]
    assert 0.4996 <= comp.value < 0.4997 and base.value >= checks.IDLE_SHARE
    assert comp.number_format == "0.00%"  # 49.96%, as the log's note: one decimal read 50.0%
    assert base.number_format == "0.0%"  # 97.8%: one decimal says it


MS_TIMELINE = ("mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/"
               "timeline/msprof_0_2_1.json")


def test_idle_advice_agrees_with_the_category_note_where_one_side_has_no_categories(samples):
    """PARAM AlexNet (GPU) against a MindSpore run's CANN timeline, a lone file without kernel_details.csv: the
    NPU side's computing (5.91458 ms, the sum of its Overlap Analysis "Computing" events, read here) has no
    categories, and the "computing split into categories" note says "compare Computing Time, not its categories".
    The idle note and the verdict said "compare Computing Time and its categories" beside it; they now ask for
    Computing Time alone. Both ways round."""
    timeline = json.loads((samples / MS_TIMELINE).read_text())
    overlap = {e["pid"] for e in timeline if e.get("ph") == "M" and e.get("name") == "process_name"
               and e["args"]["name"] == "Overlap Analysis"}
    computing = sum(Decimal(str(e["dur"])) for e in timeline
                    if e.get("pid") in overlap and e.get("ph") == "X" and e["name"] == "Computing")
    assert computing == Decimal("5914.58")
    for sides in ((HTA_ALEXNET, MS_TIMELINE), (MS_TIMELINE, HTA_ALEXNET)):
        res = compare(*(str(samples / s) for s in sides), enable_profiling_compare=True)
        g = res.guards.set_index("Check")
        assert g.loc[checks.CATEGORY_CHECK, "Status"] == "note"
        assert "compare Computing Time, not its categories" in g.loc[checks.CATEGORY_CHECK, "Detail"]
        idle = g.loc[checks.IDLE_CHECK, "Detail"]
        assert idle.endswith(": " + checks.IDLE_ADVICE_UNSPLIT) and checks.IDLE_ADVICE not in idle
        computing = ("10.630 ms -> 5.915 ms (-4.715 ms, -44.36%)" if sides[0] == HTA_ALEXNET else
                     "5.915 ms -> 10.630 ms (+4.715 ms, +79.73%)")
        assert res.verdict.endswith(f".\nMost of that difference is time with no computing, communication or copy "
                                    f"(validity check: longest idle stretch), so compare Computing Time, {computing} "
                                    "(one side's is not split into categories)")
        assert "its categories" not in res.verdict.replace("not split into categories", "")
    # both sides split (reference pair 4's NPU step has kernel_details.csv): the categories are still asked for
    res = compare(str(samples / HTA_ALEXNET), str(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"),
                  enable_profiling_compare=True)
    assert res.verdict.endswith(f", so compare Computing Time, {AFTER_IDLE}, and its categories")


MS1_TIMELINE_DISPLAY = "mindinsight/tests/utils/resource/run_2/normal_run/profiler/ascend_timeline_display_1.json"


def test_idle_advice_beside_a_side_without_time_breakdown_compares_nothing(samples, caplog):
    """PARAM AlexNet (GPU) against a MindSpore 1.x ascend_timeline_display file, which holds no Overlap Analysis
    process (checked here), so that side has no time breakdown (no E2E time, "n/a"): the GPU side's stretch is
    77.7 % of its E2E, and the note asked to "compare Computing Time and its categories", a comparison that cannot
    be made. It now says the other side has nothing to compare with and to read this side's Computing Time alone,
    both ways round; the GPU side's figure is its own (10,033.725 ms of 12,920.244: ``test_hta_alexnet_against_npu``
    recomputes them)."""
    events = json.loads((samples / MS1_TIMELINE_DISPLAY).read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert not [e for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                and e.get("args", {}).get("name") == "Overlap Analysis"]
    for sides, gpu in (((HTA_ALEXNET, MS1_TIMELINE_DISPLAY), "base"),
                       ((MS1_TIMELINE_DISPLAY, HTA_ALEXNET), "comparison")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(*(str(samples / s) for s in sides), enable_profiling_compare=True)
        row = res.guards.set_index("Check").loc[checks.IDLE_CHECK]
        other = "base" if gpu == "comparison" else "comparison"
        assert row["Status"] == "note" and row[other.capitalize()] is None and f"{row[gpu.capitalize()]:.1%}" == "77.7%"
        advice = (f"(a profile opened long before the work, a stall, a host-side wait): the {other} side has no time "
                  f"breakdown (no E2E time) to compare with: read the {gpu} side's Computing Time and its categories "
                  "alone")
        assert row["Detail"].endswith(advice) and checks.IDLE_ADVICE not in row["Detail"]
        line = blocks(caplog.messages, checks.NOTE_CHECKS[checks.IDLE_CHECK])
        shares = "(base 77.7%, comparison n/a)" if gpu == "base" else "(base n/a, comparison 77.7%)"
        assert len(line) == 1 and line[0][-1].endswith(advice) and shares in line[0][0]
        assert len(line[0]) == 3 and line[0][1].startswith(f"{gpu} 10033.725 ms long")  # the side with E2E time
        assert not res.verdict  # no E2E on one side: no verdict, so no aside either
    # a side alone whose computing has no categories is not asked for them (figures exact in binary)
    split = _bd(100, 60)
    split.computing_ns = 40
    row = checks._idle_row((split, _bd(0, 0)))
    assert row["Detail"].endswith("the comparison side has no time breakdown (no E2E time) to compare with: read the "
                                  "base side's Computing Time alone")


def test_mindspore_msprof_timelines(samples):
    """Reference pair 9d (MindSpore's CANN msprof_*.json timelines, as bare trace_view.json files): each side's
    stretch, its offset into the E2E window and the validity check's share of E2E from the Overlap Analysis lane
    (busy: Computing and Communication(Not Overlapped); window: the lane), as for a text export. Before, the
    stretch was checked on Kineto, NPU text and DB inputs only: base 40.550 us of 47.563 ms."""
    base, comparison = (samples / p for p in REF_PAIRS["9d-mindspore-legacy-msprof-timeline-files"])
    want = []
    for path in (base, comparison):
        ov = _overlap_lane_of(path)
        lo, hi = min(s for _, s, _ in ov), max(e for _, _, e in ov)
        start, length = _npu_idle(ov)
        bd = npu_breakdown(load_profile(str(path), OPTS), OPTS)
        assert (bd.longest_idle, bd.e2e_ns) == (Stretch(start, length, start - lo), hi - lo)
        want.append(length / (hi - lo))
    row = compare(str(base), str(comparison), enable_profiling_compare=True).guards.set_index("Check").loc[
        "longest idle stretch"]
    assert [row["Base"], row["Comparison"]] == pytest.approx(want, rel=1e-12)
    assert want[0] == pytest.approx(40_550 / 47_562_510, rel=1e-12)


def _v18_copies(path: Path) -> int:
    """A PyTorch 1.8 trace's copies ("Memcpy" / "Memset" events, of no SDMA row) outside its kernels in its E2E window
    (its kernels with a stream), from the raw events (Decimal us)."""
    timed, kernels, lo, hi = _v18_events(path)
    copies = [(max(s, lo), min(e, hi)) for c, s, e in timed if c != "kernel" and min(e, hi) > max(s, lo)]
    return sum(e - s for s, e in minus(minus([(lo, hi)], kernels), minus(minus([(lo, hi)], kernels), copies)))


def test_free_other_read_as_idle_time_names_the_copies_it_holds(samples):
    """The idle check leaves copies out of idle time, so Free: Other, which holds the copies no SDMA row counts, is
    no longer all idle time: tb_plugin's two ResNet-50 runs (PyTorch 1.8, whose Memcpy events count in no SDMA row)
    differ by -119.8 ms of Free: Other, and the note read it all as "device idle time" beside 10.085 -> 9.282 ms of
    copies in it. The copies' figures are recomputed from the raw events; the Free Time they and the idle stretches
    make is the step's."""
    folder = samples / "kineto/tb_plugin/samples/resnet50_num_workers_0"
    base, comp = (folder / f"worker0.{t}.pt.trace.json.gz" for t in ("1623143089861", "1623143566756"))
    copies = tuple(_v18_copies(p) for p in (base, comp))
    assert copies == (10_085_000, 9_282_000)
    res = compare(str(base), str(comp))
    words = (f"Free: Other is device idle time and copies that no SDMA row counts ({copies[0] / 1e6:.3f} ms -> "
             f"{copies[1] / 1e6:.3f} ms): the device waited less for work")
    doc = to_document(res)["summary"]
    assert words in doc["contributors_note"] and [line for line in doc["contributors_note_lines"] if words in line]
    # the step holds the idle stretches and the copies, to the ns (no SDMA row, no communication)
    bds = [gpu_breakdown(load_profile(str(p), OPTS), OPTS) for p in (base, comp)]
    assert [bd.free_ns - bd.idle_stretches.ns for bd in bds] == list(copies)


def test_free_other_copies_are_said_from_a_hundredth_of_a_sides_free_other_where_they_changed():
    """Copies under 1 % of each side's Free: Other (the H200 AlexNet's 0.015 ms of 7.842 ms against the NPU text
    export's 0.011 ms of 25.744 ms), or that changed by under 0.001 ms (the step's change is then idle time), are not
    named: they only lengthened the note."""
    from msprof_compare.compare.summary_notes import free_other_copies, free_other_is

    def side(free: int, idle: int) -> Breakdown:
        bd = Breakdown("GPU")
        bd.e2e_ns = bd.computing_ns = 10**9
        bd.e2e_ns += free
        bd.idle_stretches.add(idle, 1)
        return bd

    assert free_other_copies((side(7_842_279, 7_827_279), side(25_744_050, 25_733_050))) is None
    assert free_other_copies((side(1_000_000, 990_000), side(1_000_000, 1_000_000))) == (10_000, 0)
    assert free_other_copies((side(1_000_000, 990_001), side(1_000_000, 1_000_000))) is None
    assert free_other_copies((side(1_000_000, 990_000), side(2_000_000, 1_990_000))) is None
    assert free_other_copies(None) is None and free_other_is(None) == "device idle time"
    assert free_other_is((841_618, 889_339)) == ("device idle time and copies that no SDMA row counts (0.842 ms -> "
                                                 "0.889 ms)")
