"""GPU computing kernels no launch flow links to their op: the "kernels without a launch flow" validity check
(session 66, left66f).

The time breakdown files a kernel launched inside a Matmul / Conv / Flash Attention op under that op's category; one
no launch flow ends at is filed by its name alone, as Cube (other) or Vector (reference-1 §3.7). A trace that lost
some launch flows (hta's negative_queue sample: 694 such kernels mid-trace) or holds none (hta's trace_filter
samples) moved that time out of Matmul, Conv and Flash Attention without a word where no operator sheet was built:
the "kernels linked to no operator" note is given only beside those sheets. Each test cuts the flows of a real
excerpt and checks the count and time the row gives against figures computed here from the JSON itself.

An NPU text export's side alike (left66g): its compute tasks no async_npu flow ends at are filed by their Type
(MatMul, Conv, FlashAttention: that category's Cube), else their PMU figures, so their vector tasks leave Matmul /
Conv / Flash Attention; counted against kernel_details.csv.
"""

from __future__ import annotations

import gzip
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from noteutil import Note

from msprof_compare.api import compare

KINETO = Path(__file__).parent / "data" / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
CHECK = "kernels without a launch flow"
NOTE = "The time breakdown's categories read computing kernels no launch flow links to their op by their names alone"
LEAD = ("computing kernels that no launch flow links to their op (besides the previous step's tail and graph replays, "
        "which their own checks state), so the time breakdown reads them by their names alone, as Cube (other) or "
        "Vector, where one launched inside a Matmul, Conv or Flash Attention op counts in that op's category: ")
TAIL = ("; Matmul, Conv and Flash Attention miss up to that much of the side's time, which Cube (other) and Vector "
        "hold: read those categories with this in mind, or compare traces that keep their launch flows (ac2g), as "
        "torch.profiler writes them")


def _ns(us: object) -> int:
    """A trace time in us (number or text) as integer ns, rounded to nearest."""
    return int((Decimal(str(us)) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def _ms(ns: int) -> str:
    """ns as ms to 3 decimals, a half away from zero (as every ms of the Summary)."""
    return str((Decimal(ns) / 1_000_000).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


_NOTE = Note(CHECK, NOTE, LEAD, TAIL, lambda m: "launch flow links" in m)


def _row(base: Path, comparison: Path, out: Path, caplog: pytest.LogCaptureFixture,
         **options: Any) -> dict[str, Any] | None:
    """The row of a profiling compare once its faces agree (``noteutil.Note.row``: guards frame, JSON, Summary
    sheet, console block); None where there is none (and the console says nothing of it)."""
    return _NOTE.row(base, comparison, out, caplog, **{"enable_profiling_compare": True, **options})


def _kernels(events: list) -> dict[tuple, dict]:
    """The excerpt's kernels by (pid, tid, ns start)."""
    return {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"}


def _matmul_ms(res: Any) -> tuple[float, float]:
    """OverallMetrics' Matmul time (ms) of both sides."""
    om = res.sheet("OverallMetrics")
    row = om[om["Index"].str.strip() == "Matmul"].iloc[0]
    return row["Duration(ms)"], row["Duration(ms).1"]


def test_kernels_that_lost_their_launch_flow_are_said_in_a_profiling_run(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The H200 excerpt with the ac2g flows (both ends) of its addmm nvjet GEMM and its cuDNN flash-attention
    forward kernel taken out: the GEMM leaves Matmul (its 24.704 us), and a profiling-only run, which builds no
    operator sheet, said nothing. The row gives the two kernels and their summed durations; the unmodified pair
    has no row, nor has a run with the operator sheets, whose "kernels linked to no operator" note states them."""
    doc = json.loads(KINETO.read_text())
    events = doc["traceEvents"]
    kernels = _kernels(events)
    picked = [k for k, e in kernels.items() if e["name"].startswith(("nvjet_sm90_tst_192x192",
                                                                     "cudnn_generated_fort_native_sdpa_sm90_flash_fprop"))]
    assert len(picked) == 2 and min(kernels) not in picked  # the first kernel keeps its flow: no previous step's tail
    cut = {e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
           and (e["pid"], e["tid"], _ns(e["ts"])) in picked}
    assert len(cut) == 2
    doc["traceEvents"] = [e for e in events if not (e.get("cat") == "ac2g" and e.get("id") in cut)]
    assert len(events) - len(doc["traceEvents"]) == 4
    trace = tmp_path / KINETO.name
    trace.write_text(json.dumps(doc))
    ns = sum(_ns(kernels[k]["dur"]) for k in picked)
    assert ns == 24_704 + 18_655

    assert _row(KINETO, KINETO, tmp_path / "same", caplog) is None
    row = _row(trace, KINETO, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (2, 0)
    assert row["Detail"] == f"{LEAD}base 2 kernels, {_ms(ns)} ms{TAIL}"
    # what the note warns of: the GEMM's time left Matmul
    base_mm, comparison_mm = _matmul_ms(compare(str(trace), str(KINETO), enable_profiling_compare=True))
    assert comparison_mm - base_mm == pytest.approx(0.024704, abs=1e-9)
    # beside the operator sheets the "kernels linked to no operator" note states them: no second row
    assert _row(trace, KINETO, tmp_path / "ops", caplog, enable_operator_compare=True) is None


def test_a_trace_without_any_launch_flow_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The H200 excerpt without any ac2g flow: every computing kernel is filed by its name (its Matmul reads 0),
    which the row says of all 11 of them, and that the trace holds no launch flow; in a run with the operator
    sheets as well."""
    doc = json.loads(KINETO.read_text())
    events = doc["traceEvents"]
    kernels = _kernels(events)
    assert len(kernels) == 11 and not any("nccl" in e["name"].lower() for e in kernels.values())
    flowless = tmp_path / KINETO.name
    flowless.write_text(json.dumps({**doc, "traceEvents": [e for e in events if e.get("cat") != "ac2g"]}))
    ns = sum(_ns(e["dur"]) for e in kernels.values())
    row = _row(KINETO, flowless, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (0, 11)
    assert row["Detail"] == f"{LEAD}comparison 11 kernels, {_ms(ns)} ms (the trace holds no launch flow){TAIL}"
    assert _matmul_ms(compare(str(KINETO), str(flowless), enable_profiling_compare=True))[1] == 0
    # beside the operator sheets too: the "kernels linked to no operator" row leaves a flowless side to its "Can't
    # find any flow event" warning, which says no op gets a kernel, not where their time goes; the base side, which
    # that row counts, is n/a here
    ops = _row(KINETO, flowless, tmp_path / "ops", caplog, enable_operator_compare=True)
    assert (ops["Base"], ops["Comparison"], ops["Detail"]) == (None, 11, row["Detail"])
    assert any("Can't find any flow event" in m for m in caplog.messages)


def test_hta_trace_filter_sample_without_flows(samples: Path, tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """hta's trace_filter rank 0 (a sampled trace that kept no flow) holds aten::mm / addmm ops: its 1,144
    computing kernels (kernel events, none a collective) are all filed by name, so its Matmul reads 0."""
    trace = samples / "hta/tests/data/trace_filter/sampled_rank-0.json.gz"
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    assert not any(e.get("ph") in ("s", "f", "t") for e in events)
    assert any(e.get("cat") == "cpu_op" and e.get("name") in ("aten::mm", "aten::addmm") for e in events)
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events
               if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" not in e["name"].lower()}
    ns = sum(_ns(e["dur"]) for e in kernels.values())
    row = _row(trace, trace, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (len(kernels), len(kernels)) == (1144, 1144)
    part = f"1,144 kernels, {_ms(ns)} ms (the trace holds no launch flow)"
    assert row["Detail"] == f"{LEAD}base {part}; comparison {part}{TAIL}"


def test_a_gpu_flow_cat_that_names_no_flow_is_said_as_such(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The H200 excerpt with ``--gpu_flow_cat foo``: no flow of that category, so every computing kernel (11, from
    the JSON) is filed by its name. The row said "the trace holds no launch flow" beside the warning that names its
    ac2g flows (review66e); it names the category given."""
    events = json.loads(KINETO.read_text())["traceEvents"]
    kernels = _kernels(events)
    assert len(kernels) == 11 and any(e.get("cat") == "ac2g" for e in events)
    ns = sum(_ns(e["dur"]) for e in kernels.values())
    row = _row(KINETO, KINETO, tmp_path / "out", caplog, gpu_flow_cat="foo")
    part = f"11 kernels, {_ms(ns)} ms (the trace holds no flow of category 'foo', which the gpu_flow_cat option names)"
    assert (row["Base"], row["Comparison"]) == (11, 11)
    assert row["Detail"] == f"{LEAD}base {part}; comparison {part}{TAIL}"
    assert any("none of category 'foo'" in m and "it holds flows of category 'ac2g'" in m for m in caplog.messages)


def test_hta_negative_queue_sample_that_lost_launch_flows(samples: Path, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """hta's negative_queue rank 0 (docs/differences.md and README cite it): 35,071 ac2g flow ends, 6,600 starts.
    Counted from the JSON by the breakdown's rules: a computing kernel (kernel event, no NCCL name; a later one of
    the same pid / tid / ts replaces it) is linked where a started launch flow that is no graph replay ends at its
    start time (any lane: the original keys flow ends by time alone, so a kernel whose own flow lost its start but
    shares its ts with another stream's launched memcpy counts as linked, as the categories read it); graph replays
    (a flow started on cudaGraphLaunch ending at it) and the kernels before the first launched one are left out,
    as their rows state them: 694 kernels, 31.074 ms. With the operator sheets the "kernels linked to no operator"
    row states them, and this row is gone."""
    trace = samples / "hta/tests/data/negative_queue_length_values_check/rank0.json.gz"
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]

    def key(e: dict) -> tuple:
        return e["pid"], e["tid"], _ns(e["ts"])

    starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    graph_calls = {key(e) for e in events
                   if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "GraphLaunch" in e["name"]}
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g" and e["id"] in starts]
    replayed = {key(e) for e in ends if key(starts[e["id"]]) in graph_calls}
    plain_ts = {_ns(e["ts"]) for e in ends if key(starts[e["id"]]) not in graph_calls}
    kernels = {key(e): e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"}
    launched = {key(e) for e in ends}
    first = min(k[2] for k in kernels if k in launched)
    computing = {k: e for k, e in kernels.items() if "nccl" not in e["name"].lower()}
    free = [e for k, e in computing.items() if k[2] >= first and k[2] not in plain_ts and k not in replayed]
    ns = sum(_ns(e["dur"]) for e in free)
    assert (len(free), ns) == (694, 31_074_000) and len(replayed.intersection(computing)) == 135
    row = _row(trace, trace, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (694, 694)
    part = f"694 kernels, {_ms(ns)} ms"
    assert row["Detail"] == f"{LEAD}base {part}; comparison {part}{TAIL}"
    assert _row(trace, trace, tmp_path / "ops", caplog, enable_operator_compare=True) is None


NPU = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
NPU_TAIL = TAIL.replace("(ac2g), as torch.profiler writes them", "(ac2g, async_npu), as torch.profiler and torch_npu "
                                                                 "write them")
#: the note's title and lead where the sides it counts are NPU exports: their words, not a GPU trace's
NPU_NOTE = ("The time breakdown's categories read compute tasks no async_npu flow links to their op by their Type and "
            "PMU figures alone")
NPU_LEAD = ("compute tasks that no async_npu flow links to their op (besides those before the first linked one, the "
            "previous step's tail), so the time breakdown reads them by their Type and PMU figures alone, where one "
            "launched inside a Matmul, Conv or Flash Attention op counts in that op's category: ")
_NPU_NOTE = Note(CHECK, NPU_NOTE, NPU_LEAD, NPU_TAIL, lambda m: "flow links to their op" in m)
NPU_RULE = ("read by their Type (a MatMul, Conv or FlashAttention one stays in that category as Cube), else their PMU "
            "figures")


def _npu_row(base: Path, comparison: Path, out: Path, caplog: pytest.LogCaptureFixture,
             **options: Any) -> dict[str, Any] | None:
    """``_row`` of a pair whose note names an NPU side, so its reading names async_npu too."""
    return _NPU_NOTE.row(base, comparison, out, caplog, **{"enable_profiling_compare": True, **options})


def _npu_copy(tmp_path: Path, keep: Any) -> tuple[Path, list[dict]]:
    """The NPU excerpt (tests/data/npu) copied with only the trace events ``keep`` passes; its kernel_details.csv
    rows (as the csv module reads them)."""
    import csv
    import shutil

    d = tmp_path / "cut" / NPU.name
    shutil.copytree(NPU, d)
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    tv.write_text(json.dumps([e for e in events if keep(e)]))
    with open(d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        return d, list(csv.DictReader(fh))


def _npu_sheet_row(res: Any, index: str) -> tuple[float, float]:
    """OverallMetrics' Duration(ms) of a row, both sides."""
    om = res.sheet("OverallMetrics")
    row = om[om["Index"].str.strip() == index].iloc[0]
    return row["Duration(ms)"], row["Duration(ms).1"]


def test_npu_text_tasks_that_lost_their_async_npu_flow_are_said(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The NPU text excerpt with the async_npu flow ends at its three MemSet tasks inside aten::mm ops after the
    first linked task taken out: their Matmul (Vector) time (10.94 + 25.46 + 10.1 us, kernel_details.csv) moves to
    Vector, unsaid in a profiling-only run. The row counts them as compute tasks with no async_npu flow; the 4
    tasks that open the excerpt's window, whose flows start before it (launched before the profile, as a GPU
    trace's previous step's tail), are not counted, so the excerpt as cut has no row."""
    memsets = {"1736408883732533.430", "1736408883732773.995", "1736408883733553.670"}
    d, rows = _npu_copy(tmp_path, lambda e: not (e.get("cat") == "async_npu" and e.get("ph") == "f"
                                                 and e.get("ts") in memsets))
    picked = [r for r in rows if r["Start Time(us)"].strip() in memsets]
    assert [r["Name"] for r in picked] == ["aclnnMm_MatMulCommon_MemSet"] * 3
    ns = sum(_ns(r["Duration(us)"]) for r in picked)
    assert ns == 46_500
    assert _row(NPU, NPU, tmp_path / "same", caplog) is None
    row = _npu_row(NPU, d, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (0, 3)
    assert row["Detail"] == (f"{NPU_LEAD}comparison 3 compute tasks, {_ms(ns)} ms, no async_npu flow, "
                             f"{NPU_RULE}{NPU_TAIL}")
    res = compare(str(NPU), str(d), enable_profiling_compare=True)
    assert _npu_sheet_row(res, "Matmul (Vector)") == (pytest.approx(0.0465, abs=1e-9), 0)
    base_v, comparison_v = _npu_sheet_row(res, "Vector")
    assert comparison_v - base_v == pytest.approx(0.0465, abs=1e-9)
    # beside the operator sheets the "kernels linked to no operator" note states them: no second row
    assert _npu_row(NPU, d, tmp_path / "ops", caplog, enable_operator_compare=True) is None


def test_npu_text_trace_without_async_npu_flows_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The NPU text excerpt without any async_npu flow: each of its computing tasks (kernel_details.csv rows with a
    PMU value, HCCL's hcom_allReduce aside: 19 of 20) is filed by its Type or PMU figures, which the row says, and
    that the trace holds none; the MatMulV2 tasks stay in Matmul (by their Type), their MemSets leave it."""
    d, rows = _npu_copy(tmp_path, lambda e: e.get("cat") != "async_npu")
    computing = [r for r in rows if (r["aiv_vec_time(us)"] != "N/A" or r.get("mac_time(us)", "N/A") != "N/A")
                 and r["Accelerator Core"] != "HCCL"]
    assert len(computing) == 19 and len(rows) == 20
    ns = sum(_ns(r["Duration(us)"]) for r in computing)
    row = _npu_row(NPU, d, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (0, 19)
    assert row["Detail"] == (f"{NPU_LEAD}comparison 19 compute tasks, {_ms(ns)} ms, no async_npu flow (the trace holds "
                             f"none), {NPU_RULE}{NPU_TAIL}")
    res = compare(str(NPU), str(d), enable_profiling_compare=True)
    matmul = sum(_ns(r["Duration(us)"]) for r in computing if r["Type"] == "MatMulV2")
    assert matmul == 402_768
    assert _npu_sheet_row(res, "Matmul") == (pytest.approx((matmul + 46_500) / 1e6, abs=1e-9),
                                             pytest.approx(matmul / 1e6, abs=1e-9))
    # beside the operator sheets too: the "kernels linked to no operator" row leaves a side without flows to its
    # "Can't find any flow event" warning
    ops = _npu_row(NPU, d, tmp_path / "ops", caplog, enable_operator_compare=True)
    assert (ops["Base"], ops["Comparison"], ops["Detail"]) == (None, 19, row["Detail"])


def test_npu_level1_sample_without_async_npu_flows(samples: Path, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """msinsight text level1 rank0 (all 185 computing tasks linked: no row against itself) without its async_npu
    flows: the row counts every computing task (kernel_details.csv rows with a PMU value, HCCL's aside), and what it
    warns of is there: its Conv and Matmul Vector rows (57 tasks, by the sheet) empty into Vector, while their Cube
    rows keep their tasks by Type."""
    import csv
    import shutil

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    d = tmp_path / "cut" / src.name
    shutil.copytree(src, d)
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    kept = [e for e in events if e.get("cat") != "async_npu"]
    assert len(events) - len(kept) == 2 * 210
    tv.write_text(json.dumps(kept))
    with open(d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    computing = [r for r in rows if (r["aiv_vec_time(us)"] != "N/A" or r["aic_mac_time(us)"] != "N/A")
                 and r["Accelerator Core"] != "HCCL" and not r["Name"].startswith("hcom_")]
    ns = sum(_ns(r["Duration(us)"]) for r in computing)
    assert _row(src, src, tmp_path / "same", caplog) is None
    row = _npu_row(src, d, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (0, len(computing)) == (0, 185)
    assert row["Detail"] == (f"{NPU_LEAD}comparison 185 compute tasks, {_ms(ns)} ms, no async_npu flow (the trace "
                             f"holds none), {NPU_RULE}{NPU_TAIL}")
    om = compare(str(src), str(d), enable_profiling_compare=True).sheet("OverallMetrics")
    index = om["Index"].str.strip()
    moved = om[index.isin(["Conv (Forward) (Vector)", "Conv (Backward) (Vector)", "Matmul (Vector)"])]
    assert moved["Number"].sum() == 57 and moved["Number.1"].sum() == 0
    vector = om[index == "Vector"].iloc[0]
    assert vector["Number.1"] - vector["Number"] == 57
    cube = om[index.isin(["Conv (Forward) (Cube)", "Conv (Backward) (Cube)", "Matmul (Cube)"])]
    assert (cube["Number"].to_numpy() == cube["Number.1"].to_numpy()).all() and cube["Number"].sum() > 0


def test_a_gpu_side_and_an_npu_side_open_in_both_families_words(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The H200 excerpt without its ac2g flows against the NPU text excerpt without its async_npu flows: each side
    counts (11 kernels; 19 compute tasks), and the note's title and Detail opened with a GPU trace's words alone,
    "computing kernels ... by their names alone", untrue of the NPU side's tasks, which are read by their Type
    and PMU figures. They now name both families; each side's part keeps its own words. An NPU side alone opens
    in its own (the tests above), a GPU side alone as before."""
    doc = json.loads(KINETO.read_text())
    events = doc["traceEvents"]
    flowless = tmp_path / KINETO.name
    flowless.write_text(json.dumps({**doc, "traceEvents": [e for e in events if e.get("cat") != "ac2g"]}))
    gpu_ns = sum(_ns(e["dur"]) for e in _kernels(events).values())
    d, rows = _npu_copy(tmp_path, lambda e: e.get("cat") != "async_npu")
    npu_ns = sum(_ns(r["Duration(us)"]) for r in rows
                 if (r["aiv_vec_time(us)"] != "N/A" or r.get("mac_time(us)", "N/A") != "N/A")
                 and r["Accelerator Core"] != "HCCL")
    title = ("The time breakdown's categories read GPU kernels and NPU compute tasks no launch flow links to their op "
             "without it")
    lead = ("GPU kernels and NPU compute tasks that no launch flow links to their op (besides the previous step's tail "
            "and GPU graph replays), so the time breakdown reads them without it, where one launched inside a "
            "Matmul, Conv or Flash Attention op counts in that op's category: ")
    row = Note(CHECK, title, lead, NPU_TAIL, lambda m: "flow links to their op" in m).row(
        flowless, d, tmp_path / "out", caplog, enable_profiling_compare=True)
    assert (row["Base"], row["Comparison"]) == (11, 19)
    assert row["Detail"] == (f"{lead}base 11 kernels, {_ms(gpu_ns)} ms (the trace holds no launch flow); comparison "
                             f"19 compute tasks, {_ms(npu_ns)} ms, no async_npu flow (the trace holds none), "
                             f"{NPU_RULE}{NPU_TAIL}")
