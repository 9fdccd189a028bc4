"""A PyTorch job moved from an NVIDIA GPU to an Ascend NPU: a Kineto trace as the base, the NPU's exports as the
comparison. Each expected figure is read here from the raw files (json, csv), not from the tool."""

from __future__ import annotations

import csv
import gzip
import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import openpyxl
import pytest
from conftest import TEST_DATA
from dbutil import sql
from test_json_report import SCHEMA, validate

from msprof_compare import api
from msprof_compare.report.summary_console import memory_line

H100_BERT = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
NPU_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def _gpu_peak_gb(trace: Path) -> float:
    """The largest Total Reserved of the trace's [memory] events (the caching allocator's reservation), in GB."""
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    return max(e["args"]["Total Reserved"] for e in events if e.get("name") == "[memory]") / 1024**3


def _text_peaks_gb(export: Path) -> tuple[float, float]:
    """memory_record.csv's largest Total Reserved(MB), with and without its APP rows (the whole process), in GB."""
    with open(export / "ASCEND_PROFILER_OUTPUT/memory_record.csv", newline="", encoding="utf-8") as f:
        rows = [(r["Component"].strip(), float(r["Total Reserved(MB)"])) for r in csv.DictReader(f)
                if r["Total Reserved(MB)"].strip()]
    return max(v for _, v in rows) / 1024, max(v for c, v in rows if c != "APP") / 1024


def test_memory_line_says_a_text_peak_counts_app_beside_a_gpu_trace(samples: Path, tmp_path: Path) -> None:
    """A GPU trace's peak is its caching allocator's reservation; the NPU text export's counts memory_record.csv's
    APP component, the whole process's device memory. The same AlexNet loop on an H200 (tests/data/kineto) and on
    the NPU read "1.66 GB -> 2.06 GB (+0.41 GB, +24.48%)", a growth, where without APP the NPU side reserves 1.49
    GB (as the DB export of that NPU run reads), less than the GPU; the line now says so, as it does beside a DB
    export."""
    gpu, text = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz")), samples / NPU_TEXT
    gpu_peak = _gpu_peak_gb(gpu)
    text_peak, text_without = _text_peaks_gb(text)
    assert (f"{gpu_peak:.2f}", f"{text_peak:.2f}", f"{text_without:.2f}") == ("1.66", "2.06", "1.49")
    pct = (text_peak - gpu_peak) / gpu_peak * 100
    res = api.compare(str(gpu), str(text), enable_memory_compare=True)
    line = memory_line(res.frames["memory"]).splitlines()
    assert line[0] == (f"Peak reserved memory (Mem Usage) {gpu_peak:.2f} GB -> {text_peak:.2f} GB "
                       f"({text_peak - gpu_peak:+.2f} GB, {pct:+.2f}%): the comparison side's, a text export's, "
                       f"counts memory_record.csv's APP component ({text_without:.2f} GB without it), which a GPU "
                       "trace's [memory] events (its caching allocator's reservation) do not hold.")
    # the JSON report (schema-valid) and the API hold it as data: the side, its peak without APP, the other's kind
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    app = doc["summary"]["memory"]["peak_app"]
    assert app == res.memory_totals["peak_app"] and (app["side"], app["beside"]) == ("comparison", "gpu")
    assert app["peak_without_app_gb"] == pytest.approx(text_without, abs=1e-9)
    # the other way round names the base side; so does another GPU trace (the H100 BERT one, 0.11 GB)
    swapped = memory_line(api.compare(str(text), str(gpu), enable_memory_compare=True).frames["memory"])
    assert "the base side's, a text export's, counts memory_record.csv's APP component (1.49 GB" in swapped
    bert = samples / H100_BERT
    assert f"{_gpu_peak_gb(bert):.2f}" == "0.11"
    assert "Peak reserved memory (Mem Usage) 0.11 GB -> 2.06 GB (+1.95 GB, " in memory_line(
        api.compare(str(bert), str(text), enable_memory_compare=True).frames["memory"])
    # a GPU trace beside another GPU trace gets no such words
    mi300 = samples / H100_BERT.replace("h100", "mi300")
    two_gpus = api.compare(str(bert), str(mi300), enable_memory_compare=True)
    assert "APP" not in memory_line(two_gpus.frames["memory"]) and two_gpus.memory_totals["peak_app"] is None
    # beside a DB export of the same NPU run, as its line said before: the JSON now holds that too
    db = samples / NPU_TEXT.replace("text/", "db/")
    app = api.compare(str(text), str(db), enable_memory_compare=True).memory_totals["peak_app"]
    assert (app["side"], app["beside"]) == ("base", "db")
    assert app["peak_without_app_gb"] == pytest.approx(text_without, abs=1e-9)


def test_communication_held_inside_a_contributor_is_named_by_the_side_that_holds_it(samples: Path,
                                                                                   tmp_path: Path) -> None:
    """B200 vLLM inference (one NCCL all-reduce family, under its step annotation) against the level-2 NPU
    training export, whose all-reduce HCCL ops lie under AccumulateGrad: the one contributor is AccumulateGrad,
    0 ms on the GPU side, which has no such op. Its note said "These are HCCL ops and collective kernels (NCCL /
    RCCL), which an NPU text export and a GPU trace's launch flows link ...", because the GPU side links collective
    kernels to some operator; the communication inside the contributor is the NPU's HCCL ops alone."""
    gpu = samples / "tracelens/tests/traces/b200/eager_trace.json.gz"
    npu = samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
    with gzip.open(gpu, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    accumulate = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    assert any(e.get("cat") == "kernel" and "nccl" in e["name"].lower() for e in events)
    assert not [e for e in events if e.get("cat") == "cpu_op" and "AccumulateGrad" in e["name"]]
    with open(npu / "ASCEND_PROFILER_OUTPUT/trace_view.json", encoding="utf-8") as f:
        trace = json.load(f)
    process = {e["pid"]: e["args"]["name"] for e in trace if e.get("ph") == "M" and e.get("name") == "process_name"}
    # the HCCL lane's all-reduce ops (4, 99.973 ms), which the export links to AccumulateGrad
    hccl = sum(float(e["dur"]) for e in trace if e.get("ph") == "X" and e["name"].startswith("hcom_allReduce_")
               and process.get(e["pid"]) == "HCCL")
    res = api.compare(str(gpu), str(npu))
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    lines = doc["summary"]["contributors_note_lines"]
    said = [i for i, line in enumerate(lines) if line.startswith(f"Most of the change of {accumulate} is collective")]
    assert len(said) == 1 and lines[said[0]].endswith(f"communication 0.000 ms -> {hccl / 1000:.3f} ms.")
    # beside a GPU trace the note says what HCCL is: a GPU user knows NCCL
    assert lines[said[0] + 1] == ("These are HCCL ops (HCCL: the NPU's collective communication library, as NCCL on "
                                  "a GPU), which an NPU text export links to the operator that launched them; the "
                                  "waterfall counts them as communication, not computing.")


def test_gpu_vs_npu_note_says_mem_usage_counts_app_beside_the_console_table_alone(samples: Path) -> None:
    """The console table alone (--enable_profiling_compare) shows Mem Usage 1.66G against 2.06G for the same AlexNet
    loop on an H200 and on the NPU, with no memory line to say that the NPU text export's peak counts the whole
    process (memory_record.csv's APP rows): the "GPU vs NPU categories" note now says it, with the peak without
    APP, after the Cube / Vector rule. A GPU trace without memory records (PARAM AlexNet) or a DB export (no APP
    rows) gets no such part."""
    gpu, text = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz")), samples / NPU_TEXT
    text_peak, text_without = _text_peaks_gb(text)
    part = (f"an NPU text export's Mem Usage counts memory_record.csv's APP component, the whole process's device "
            f"memory, a GPU's its caching allocator's reservation alone (comparison: {text_peak:.2f}G, "
            f"{text_without:.2f}G without APP): compare the peak without APP")

    def detail(base: Path, comparison: Path) -> str:
        guards = api.compare(str(base), str(comparison), enable_profiling_compare=True).guards.set_index("Check")
        return guards.loc["GPU vs NPU categories", "Detail"]

    assert detail(gpu, text).endswith(f"before its Cube / Vector split; {part}")
    swapped = part.replace("(comparison: ", "(base: ")
    assert detail(text, gpu).endswith(swapped)
    param = samples / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    with gzip.open(param, "rt", encoding="utf-8") as f:
        assert not [e for e in json.load(f)["traceEvents"] if e.get("name") == "[memory]"]
    assert "APP" not in detail(param, text)
    assert "APP" not in detail(gpu, samples / NPU_TEXT.replace("text/", "db/"))


def _text_copies(export: Path) -> tuple[int, Decimal]:
    """The Ascend Hardware lane's DMA copy tasks of a text export (task types SDMA_SQE, PCIE_DMA_SQE): count and
    total duration in us, read from trace_view.json."""
    with open(export / "ASCEND_PROFILER_OUTPUT/trace_view.json", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)
    hardware = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "Ascend Hardware"}
    copies = [e for e in events if e.get("ph") == "X" and e["pid"] in hardware
              and e["args"].get("Task Type") in ("SDMA_SQE", "PCIE_DMA_SQE")]
    durs = [Decimal(e["dur"]) for e in copies]
    return len(durs), sum(durs, Decimal(0)), sorted({e["args"]["Task Type"] for e in copies})


def _db_copies(export: Path) -> tuple[int, Decimal, list[str]]:
    """A DB export's copy tasks (SQL on TASK: MEMCPY_ASYNC, SDMA_SQE, PCIE_DMA_SQE): count, total duration in us and
    the task types found."""
    (db,) = export.glob("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_*.db")
    rows = sql(db, "SELECT s.value, count(*), sum(t.endNs - t.startNs) FROM TASK t JOIN STRING_IDS s "
                   "ON s.id = t.taskType WHERE s.value IN ('MEMCPY_ASYNC', 'SDMA_SQE', 'PCIE_DMA_SQE') GROUP BY 1")
    return sum(n for _, n, _ in rows), Decimal(sum(ns for _, _, ns in rows)) / 1000, sorted(t for t, _, _ in rows)


def test_gpu_vs_npu_note_gives_the_npu_copies_no_sdma_row_counts(samples: Path) -> None:
    """The "GPU vs NPU categories" note sent the user to SDMA Time, "which adds both" kinds of copy: the H200
    AlexNet trace's 21 memory copies (0.488 ms) against the NPU's 11 TensorMove kernels (0.574 ms). The NPU's own
    DMA copies (MEMCPY_ASYNC: the input batch's 840 us host-to-device copy among them) are in no SDMA row, as the
    original reads current exports (docs/differences.md, "Physic Stream Id"), and were said nowhere. The note now
    gives their count and time, per NPU side, for a text and a DB export; not where they are noise. It names their
    task types as each export does: a text export's are SDMA_SQE and PCIE_DMA_SQE tasks (10 + 14), which the note
    called MEMCPY_ASYNC, a DB export's task type; and what the original's rule reads that the export names
    otherwise (a text export's Physic Stream Id, a DB export's MEMCPY_ASYNC), where it said "a stream argument and
    task types that current exports name otherwise" of both."""
    gpu = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz"))
    with gzip.open(gpu, "rt", encoding="utf-8") as f:
        memcpy = [e["dur"] for e in json.load(f, parse_float=Decimal)["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    assert (len(memcpy), f"{sum(memcpy) / 1000:.3f}") == (21, "0.488")

    def detail(base: Path, comparison: Path) -> str:
        guards = api.compare(str(base), str(comparison), enable_profiling_compare=True).guards.set_index("Check")
        return guards.loc["GPU vs NPU categories", "Detail"]

    # what the original's rule reads that each export names otherwise (reference-1 §3.1, §7.3): the text export's
    # copies carry no Stream Id, their stream is "Physic Stream Id"; the DB export's copies are MEMCPY_ASYNC tasks
    with open(samples / NPU_TEXT / "ASCEND_PROFILER_OUTPUT/trace_view.json", encoding="utf-8") as f:
        args = [e["args"] for e in json.load(f) if e.get("ph") == "X"
                and (e.get("args") or {}).get("Task Type") in ("SDMA_SQE", "PCIE_DMA_SQE")]
    assert len(args) == 24 and all("Physic Stream Id" in a and "Stream Id" not in a for a in args)
    why = {"text": "each task's stream from its Stream Id, which a current text export names Physic Stream Id",
           "db": "copy tasks of type SDMA_SQE / PCIE_DMA_SQE, which a current DB export names MEMCPY_ASYNC"}

    def part(side: str, n: int, us: Decimal, types: list[str]) -> str:
        reads = why["db"] if types == ["MEMCPY_ASYNC"] else why["text"]
        return (f"an NPU's DMA copies ({' / '.join(types)} tasks; {side}: {n} copies, {us / 1000:.3f} ms) count in "
                f"no SDMA row, as in the original, whose rule reads {reads}: SDMA Time leaves them out, where it "
                "holds a GPU's memory copies; add them to the NPU side's SDMA Time to compare the copies")

    text, level0 = samples / NPU_TEXT, samples / NPU_TEXT.replace("level1", "level0")
    db = samples / NPU_TEXT.replace("text/", "db/")
    figures = {p: (_text_copies(p) if p is not db else _db_copies(p)) for p in (text, level0, db)}
    assert {p.parent.parent.name + "/" + p.parent.name: (n, f"{us / 1000:.3f}", types)
            for p, (n, us, types) in figures.items()} == {
        "text/level1": (24, "0.879", ["PCIE_DMA_SQE", "SDMA_SQE"]),
        "text/level0": (24, "1.035", ["PCIE_DMA_SQE", "SDMA_SQE"]), "db/level1": (24, "0.867", ["MEMCPY_ASYNC"])}
    for npu, (n, us, types) in figures.items():
        said = detail(gpu, npu)
        assert part("comparison", n, us, types) in said, said
        # after the TensorMove part it qualifies, where that part is given
        assert said.index("SDMA Time, which adds both") < said.index("an NPU's DMA copies")
    n, us, types = figures[text]
    assert part("base", n, us, types) in detail(text, gpu)
    # between two NPU exports the GPU-vs-NPU note is not given at all; two GPU traces neither
    guards = api.compare(str(text), str(db), enable_profiling_compare=True).guards
    assert "GPU vs NPU categories" not in guards["Check"].tolist()


def test_gpu_vs_npu_note_leaves_npu_copies_under_the_noise_share_unsaid() -> None:
    """The copies are named from 0.1% of the side's E2E time on, as the other copies of the note are (the bundled
    BERT-small H100 trace's 0.002 ms of SDMA beside its 3.908 ms E2E was noise): 136 us of copies in a 136.581 ms
    E2E is under it, 137 us is not."""
    from msprof_compare.compare import checks
    from msprof_compare.compare.breakdown import Breakdown
    gpu_bd, npu_bd = Breakdown("GPU"), Breakdown("NPU")
    gpu_bd.e2e_ns, npu_bd.e2e_ns = 11_772_586, 136_581_009
    npu_bd.unread_copies.add(136_000, 3)
    assert "DMA copies" not in checks._kinds_row((gpu_bd, npu_bd))["Detail"]
    npu_bd.unread_copies.add(1_000, 1)
    assert "DMA copies (comparison: 4 copies, 0.137 ms)" in checks._kinds_row((gpu_bd, npu_bd))["Detail"]
    npu_bd.unread_copy_types = ("MEMCPY_ASYNC",)  # as a DB export's load sets them
    assert "(MEMCPY_ASYNC tasks; comparison: 4 copies, 0.137 ms)" in checks._kinds_row((gpu_bd, npu_bd))["Detail"]
    # a GPU side has no such copies: the bucket of a GPU breakdown is never read
    gpu_bd.unread_copies.add(5_000_000, 9)
    assert "base:" not in checks._kinds_row((gpu_bd, npu_bd))["Detail"].split("DMA copies")[1].split(")")[0]


def test_level0_npu_sdma_time_beside_gpu_copies_is_no_measurement(samples: Path) -> None:
    """A Level0 text export files no kernel in a category (no PMU figures), so its 11 TensorMove copies sit in Other
    Time and its SDMA Time reads 0.000s(0); beside the H200 AlexNet trace's 0.000s(21) (its memory copies, which the
    "GPU vs NPU categories" note compares with TensorMove: "compare SDMA Time, which adds both") that read as an NPU
    run without copies, and the line under the table named only the Conv cells. Beside a level-1 export it named
    SDMA Time already. Counts from the trace and kernel_details.csv."""
    gpu = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz"))
    with gzip.open(gpu, "rt", encoding="utf-8") as f:
        memcpy = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    level0 = samples / NPU_TEXT.replace("level1", "level0")
    with open(level0 / "ASCEND_PROFILER_OUTPUT/kernel_details.csv", newline="", encoding="utf-8") as f:
        moves = [r for r in csv.DictReader(f) if r["Name"].endswith("_TensorMove")]
    assert (len(memcpy), len(moves)) == (21, 11)
    res = api.compare(str(gpu), str(level0), enable_profiling_compare=True)
    headers, rows = res.summary["headers"], res.summary["rows"]
    assert [row[headers.index("SDMA Time(Num)")] for row in rows] == [f"0.000s({len(memcpy)})", "0.000s(0)"]
    assert [n for n in res.summary["notes"] if "not split" in n] == [
        "Comparison row: its computing time is not split into categories (see the validity checks), so its Conv "
        "Time(Forward)(Num), Conv Time(Backward)(Num) and SDMA Time(Num) 0.000s(0) are not measurements: its "
        "Computing Time is all Other Time."]


def test_breakdown_buckets_of_npu_copies_match_the_raw_files(samples: Path) -> None:
    """The figures the two notes rest on, per export, against the raw files: the DMA copies no SDMA row counts
    (text: trace_view.json's SDMA_SQE / PCIE_DMA_SQE tasks, each rounded to the nearest ns, ties to even; DB:
    the TASK table's MEMCPY_ASYNC rows, integer ns), and a Level0 text export's TensorMove kernels
    (kernel_details.csv), which it files in no category; an export with categories holds those in SDMA (Tensor
    Move) and no unsplit ones."""
    from msprof_compare.compare.overall import breakdown_of
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    opts = Options()

    def bd(path: Path):
        return breakdown_of(load_profile(str(path), opts), opts)

    def us_to_ns(us: Decimal) -> int:  # to the nearest ns, a half-ns tie to the even ns (docs/differences.md)
        return int((us * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))

    text, level0 = samples / NPU_TEXT, samples / NPU_TEXT.replace("level1", "level0")
    db = samples / NPU_TEXT.replace("text/", "db/")
    with open(text / "ASCEND_PROFILER_OUTPUT/trace_view.json", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)
    hardware = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "Ascend Hardware"}
    copies = [us_to_ns(Decimal(e["dur"])) for e in events if e.get("ph") == "X" and e["pid"] in hardware
              and e["args"].get("Task Type") in ("SDMA_SQE", "PCIE_DMA_SQE")]
    got = bd(text)
    assert (got.unread_copies.count, got.unread_copies.ns) == (len(copies), sum(copies)) == (24, 878_857)
    assert got.unread_copy_types == ("PCIE_DMA_SQE", "SDMA_SQE")
    assert got.sdma_stream.count == 0 and got.unsplit_moves.count == 0 and got.b("sdma_tm").count == 11
    n, us, types = _db_copies(db)
    got = bd(db)
    assert (got.unread_copies.count, got.unread_copies.ns) == (n, int(us * 1000)) == (24, 866_699)
    assert got.unread_copy_types == tuple(types) == ("MEMCPY_ASYNC",)
    with open(level0 / "ASCEND_PROFILER_OUTPUT/kernel_details.csv", newline="", encoding="utf-8") as f:
        moves = [us_to_ns(Decimal(r["Duration(us)"])) for r in csv.DictReader(f)
                 if r["Name"].startswith("aclnnInplaceCopy") and r["Name"].endswith("_TensorMove")]
    got = bd(level0)
    assert (got.unsplit_moves.count, got.unsplit_moves.ns) == (len(moves), sum(moves))
    assert len(moves) == 11 and got.b("sdma_tm").count == 0


def _npu_conversions(export: Path) -> tuple[list[tuple[str, int]], int]:
    """kernel_details.csv's conversion kernels by their Type (TransData, Transpose, Cast): (name, ns) each, and the
    ns of the kernels that TRANS_MASK's name words (cast, transdata, transpose) pick beside them (BroadcastTo)."""
    with open(export / "ASCEND_PROFILER_OUTPUT/kernel_details.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))

    def ns(r: dict) -> int:
        return int(Decimal(r["Duration(us)"]) * 1000)

    conv = [(r["Name"], ns(r)) for r in rows if r["Type"] in ("TransData", "Transpose", "Cast")]
    by_name = sum(ns(r) for r in rows if r["Type"] not in ("TransData", "Transpose", "Cast")
                  and any(w in r["Name"].lower() for w in ("cast", "transdata", "transpose")))
    # what makes them conversions: every TransData changes the format, every Cast the data type
    for r in rows:
        if r["Type"] == "TransData":
            assert r["Input Formats"] != r["Output Formats"], r
        if r["Type"] == "Cast":
            assert r["Input Data Types"] != r["Output Data Types"], r
    return conv, by_name


def test_gpu_vs_npu_note_gives_the_conversion_kernels_whole(samples: Path, tmp_path: Path) -> None:
    """The "GPU vs NPU categories" note quoted Vector (Trans) alone, 0.477 ms of the NPU level-1 AlexNet run, where
    its 66 TransData / Transpose / Cast kernels (by kernel_details.csv's Type) took 1.548 ms, 17.4 % of its
    Computing Time: the rest sit in Conv's Vector rows (all 15 kernels of Conv (Forward) (Vector), 0.393006 ms as the
    original's OverallMetrics reads too). The H200 run of the same loop has its own layout transforms, cuDNN's
    nchwToNhwc / nhwcToNchw kernels. The note now gives both sides' whole count, time and rows, and the difference.
    Figures from kernel_details.csv and the trace JSON."""
    gpu = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz"))
    with gzip.open(gpu, "rt", encoding="utf-8") as f:
        layout = [int(Decimal(str(e["dur"])) * 1000) for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"
                  and ("nchwToNhwc" in e["name"] or "nhwcToNchw" in e["name"])]
    assert (len(layout), sum(layout)) == (39, 272_032)
    text = samples / NPU_TEXT
    conv, by_name = _npu_conversions(text)
    total = sum(n for _, n in conv)
    assert (len(conv), total, by_name) == (66, 1_547_946, 1_960)

    res = api.compare(str(gpu), str(text), enable_profiling_compare=True)
    overall = res.frames["overall"].set_index(["side", "metric"])
    computing = [int(overall.loc[(side, "computing"), "ns"]) for side in ("base", "comparison")]
    trans = int(overall.loc[("comparison", "vector_trans"), "ns"])
    fwd = tuple(int(overall.loc[("comparison", "conv_fwd_vector"), c]) for c in ("ns", "count"))
    assert fwd == (393_006, 15) and trans == 477_370
    # Vector (Trans) holds the conversions the name words reach outside Conv and BroadcastTo (a name holding "cast")
    in_trans = trans - by_name
    # Conv (Forward) (Vector) is conversions alone; Conv (Backward) (Vector) holds the rest
    bwd = total - in_trans - fwd[0]

    def ms(ns: int) -> str:
        return f"{Decimal(ns) / 10**6:.3f}"

    detail = res.guards.set_index("Check").loc["GPU vs NPU categories", "Detail"]
    assert (f"(base: {len(layout)} kernels, {ms(sum(layout))} ms, {sum(layout) / computing[0]:.1%} of its Computing "
            f"Time, in Conv (Backward) (Vector) 27 (0.214 ms) and Conv (Forward) (Vector) 12 (0.058 ms); comparison: "
            f"{len(conv)} kernels, {ms(total)} ms, {total / computing[1]:.1%} of its Computing Time, in Conv "
            f"(Backward) (Vector) 27 ({ms(bwd)} ms), Vector (Trans) 24 ({ms(in_trans)} ms) and Conv (Forward) "
            f"(Vector) 15 ({ms(fwd[0])} ms)): the NPU side's take {ms(total - sum(layout))} ms more than the GPU "
            "side's") in detail
    assert "7.9% of its Computing Time" in detail and "17.4% of its Computing Time" in detail
    # the JSON report carries the same note
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    (row,) = [g for g in doc["summary"]["guards"] if g["Check"] == "GPU vs NPU categories"]
    assert row["Detail"] == detail
    # swapped, the NPU side is the base one
    swapped = api.compare(str(text), str(gpu), enable_profiling_compare=True).guards.set_index("Check")
    assert f"(base: {len(conv)} kernels, {ms(total)} ms" in swapped.loc["GPU vs NPU categories", "Detail"]


def test_conversion_buckets_of_a_db_export_match_its_task_types(samples: Path) -> None:
    """A DB export files the same conversions by COMPUTE_TASK_INFO's opType: count and time from SQL, each row of
    the breakdown adding up to them."""
    from msprof_compare.compare.overall import breakdown_of
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    db = samples / NPU_TEXT.replace("text/", "db/")
    (path,) = db.glob("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_*.db")
    ((n, ns),) = sql(path, "SELECT count(*), sum(t.endNs - t.startNs) FROM COMPUTE_TASK_INFO c JOIN TASK t "
                           "ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS s ON s.id = c.opType "
                           "WHERE s.value IN ('TransData', 'Transpose', 'Cast')")
    opts = Options()
    bd = breakdown_of(load_profile(str(db), opts), opts)
    assert (sum(b.count for b in bd.conversions.values()), sum(b.ns for b in bd.conversions.values())) == (n, ns)
    assert n == 66


def test_gpu_vs_npu_note_leaves_conversions_under_the_noise_share_unsaid() -> None:
    """The conversions are named from 0.1% of the NPU side's E2E time on, as the note's copies are: 136 us in a
    136.581 ms E2E is under it, 137 us is not; the GPU side without any reads "none"."""
    from msprof_compare.compare import checks
    from msprof_compare.compare.breakdown import Breakdown, Bucket
    gpu_bd, npu_bd = Breakdown("GPU"), Breakdown("NPU")
    gpu_bd.e2e_ns, npu_bd.e2e_ns = 11_772_586, 136_581_009
    npu_bd.computing_ns = 1_000_000
    npu_bd.conversions["vector_trans"] = Bucket(136_000, 3)
    assert "conversions" not in checks._kinds_row((gpu_bd, npu_bd))["Detail"]
    npu_bd.conversions["conv_bwd_vector"] = Bucket(1_000, 1)
    said = checks._kinds_row((gpu_bd, npu_bd))["Detail"]
    assert ("(base: none; comparison: 4 kernels, 0.137 ms, 13.7% of its Computing Time, in Vector (Trans) 3 "
            "(0.136 ms) and Conv (Backward) (Vector) 1 (0.001 ms)): the NPU side's take 0.137 ms more") in said


def _union_ns(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merged (start, end) spans, sorted."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _gpu_idle(trace: Path) -> tuple[int, int, int, list[str], int, int]:
    """The trace's idle stretches (count, total ns, longest ns) in its E2E window (its kernels' and copies' span),
    where no kernel, memcpy or memset runs, and its host sync calls starting in that window: names (first start
    first), calls and the host ns their union covers."""
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]

    def span(e: dict) -> tuple[int, int]:
        s = int(Decimal(e["ts"]) * 1000)
        return s, s + int(Decimal(e["dur"]) * 1000)

    device = [span(e) for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    lo, hi = min(s for s, _ in device), max(e for _, e in device)
    busy = _union_ns([span(e) for e in events if e.get("ph") == "X" and e.get("cat") in (
        "kernel", "gpu_memcpy", "gpu_memset")])
    edges = [lo, *[x for s, e in busy for x in (s, e)], hi]
    gaps = [b - a for a, b in zip(edges[0::2], edges[1::2], strict=True) if b > a]
    # host calls: operators and runtime calls (a python_function event is a Python stack frame, no call of its own)
    syncs = sorted((span(e), e["name"]) for e in events if e.get("cat") in ("cpu_op", "cuda_runtime")
                   and lo <= span(e)[0] < hi and (e["name"] in ("aten::item", "aten::_local_scalar_dense")
                                                  or "synchronize" in e["name"].lower()))
    host = sum(e - s for s, e in _union_ns([sp for sp, _ in syncs]))
    return len(gaps), sum(gaps), max(gaps), list(dict.fromkeys(n for _, n in syncs)), len(syncs), host


def _text_idle(export: Path) -> tuple[int, int, int, int, int]:
    """A text export's idle stretches from trace_view.json's Overlap Analysis Free lane less its DMA copy tasks
    (Task Type SDMA_SQE, PCIE_DMA_SQE) (count, total ns, longest ns: each event's us to the ns) and its host sync
    calls (aten::item, aten::_local_scalar_dense) starting in the lanes' span, and the host ns their union covers."""
    with open(export / "ASCEND_PROFILER_OUTPUT/trace_view.json", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)
    (pid,) = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
              and e["args"]["name"] == "Overlap Analysis"}
    free_tid = next(e["tid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
                    and e["pid"] == pid and e["args"]["name"] == "Free")
    lanes = [e for e in events if e.get("ph") == "X" and e["pid"] == pid]
    lo = min(Decimal(e["ts"]) for e in lanes)
    hi = max(Decimal(e["ts"]) + Decimal(e["dur"]) for e in lanes)
    ns = [(int(Decimal(e["ts"]) * 1000), int((Decimal(e["ts"]) + Decimal(e["dur"])) * 1000)) for e in lanes
          if e["tid"] == free_tid]
    copies = _union_ns([(int(Decimal(e["ts"]) * 1000), int((Decimal(e["ts"]) + Decimal(e["dur"])) * 1000))
                        for e in events if e.get("ph") == "X"
                        and e.get("args", {}).get("Task Type") in ("SDMA_SQE", "PCIE_DMA_SQE")])
    free = []
    for s, e in _union_ns(ns):  # each free run less the copies in it
        for cs, ce in copies:
            if cs < e and ce > s:
                free.append(cs - s)
                s = max(s, ce)
        free.append(e - s)
    free = [f for f in free if f > 0]
    syncs = [e for e in events if e.get("ph") == "X" and e.get("name") in ("aten::item", "aten::_local_scalar_dense")
             and lo <= Decimal(e["ts"]) < hi]
    spans = [(int(Decimal(e["ts"]) * 1000), int((Decimal(e["ts"]) + Decimal(e["dur"])) * 1000)) for e in syncs]
    return len(free), sum(free), max(free), len(syncs), sum(e - s for s, e in _union_ns(spans))


def test_free_other_growth_is_said_with_what_the_profiles_hold_on_it(samples: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The H200 AlexNet against the NPU level-1 export: Free: Other grows by 17.902 ms, the waterfall's second step
    after the all-reduce, and no line said what it was (the idle note came only where the operators explain under
    half of the E2E change; here the all-reduce inside AccumulateGrad explains most). The note under the
    contributors now says it is device idle time and what each profile holds on it: its idle stretches (count,
    mean, longest: 188 short gaps against 101 longer ones, no one stall; a memcpy, memset or DMA copy task is no
    idle time) and the host's sync calls (the NPU host's 48 aten::item / _local_scalar_dense calls wait for the
    all-reduce). Figures from the trace JSON and trace_view.json; console, JSON and the Summary sheet say it alike."""
    gpu, text = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz")), samples / NPU_TEXT
    b_n, b_idle, b_long, b_names, b_calls, b_host = _gpu_idle(gpu)
    c_n, c_idle, c_long, c_calls, c_host = _text_idle(text)
    assert (b_n, c_n, b_calls, c_calls) == (188, 101, 9, 48)
    assert b_names == ["aten::item", "aten::_local_scalar_dense", "cudaStreamSynchronize"]

    def ms(ns: int) -> str:
        return f"{Decimal(ns) / 10**6:.3f}"

    res = api.compare(str(gpu), str(text))
    free = int(res.waterfall.set_index("Step").loc["Free: Other", "Delta(ns)"])
    e2e = int(res.waterfall["Delta(ns)"].iloc[-1])
    assert (ms(free), round(free / e2e * 100)) == ("17.902", 14)
    said = (f"Free: Other +{ms(free)} ms (14% of the E2E change) is device idle time: the device waited longer for "
            "work, as where the host was slower to launch it or to load its data; ApiCompare times the host calls; in "
            f"the profiles: stretches with no computing, communication or copy {b_n} -> {c_n}, {ms(b_idle // b_n)} ms "
            f"-> {ms(c_idle // c_n)} ms long on average, the longest {ms(b_long)} ms -> {ms(c_long)} ms (validity "
            "check: longest idle stretch): spread over the gaps between kernels, not one stall; host sync calls "
            f"(aten::item, aten::_local_scalar_dense and cudaStreamSynchronize) {b_calls} -> {c_calls}, {ms(b_host)} "
            f"ms -> {ms(c_host)} ms of host time: each waits for the device work queued before it, and the device "
            "idles after it until the host launches more")
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    note = doc["summary"]["contributors_note"]
    assert note.startswith("most of the change of autograd::engine::evaluate_function: torch::autograd::"
                           "AccumulateGrad is collective communication") and note.endswith(f"; {said}")
    # the console's last line of the note, and a row of the Summary sheet, word for word
    last = doc["summary"]["contributors_note_lines"][-1]
    assert last == f"{said}."
    book = openpyxl.load_workbook(res.to_excel(tmp_path), read_only=True)
    cells = [c for row in book["Summary"].iter_rows(values_only=True) for c in row if isinstance(c, str)]
    book.close()
    assert last in cells
    # the note's parts are worked out once for its lines and the idle note's "said already" test, which read a second
    # copy of them
    from msprof_compare.compare import summary_notes
    from msprof_compare.report.json_report import note_lines

    calls, parts = [], summary_notes._unexplained_parts
    monkeypatch.setattr(summary_notes, "_unexplained_parts", lambda *a, **k: calls.append(a) or parts(*a, **k))
    assert note_lines(res.frames) == doc["summary"]["contributors_note_lines"] and len(calls) == 1


def test_the_gate_s_message_leaves_the_free_other_note_to_the_summary(samples: Path) -> None:
    """The H200 AlexNet against the NPU level-1 export, whose Summary note ends with the Free: Other idle note: the
    gate's message lists what it judges (the contributors and their caveat), not that note, which judges nothing
    (``contributors_note_lines(computing=False)``)."""
    gpu, text = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz")), samples / NPU_TEXT
    from msprof_compare.report.json_report import note_lines

    res = api.compare(str(gpu), str(text))
    idle = note_lines(res.frames)[-1]  # the JSON's contributors_note_lines, the console's note
    assert idle.startswith("Free: Other +17.902 ms (14% of the E2E change) is device idle time")
    gate = res.regression_gate(5)
    assert gate.code == 3 and gate.lines[0].startswith("Performance regression: ")
    assert not any("device idle time" in line for line in gate.lines), gate.lines


def test_free_other_note_is_given_only_where_free_other_leads_the_change() -> None:
    """The note on Free: Other, on made-up waterfalls: among the two largest steps, from 10% of the E2E change on
    and with it (a Free: Other that shrank while E2E grew explains none of it); not where another note calls it idle
    time already, nor where the verdict says an idle stretch makes most of the difference, nor beside a DB export's
    window tasks; from 5% of the longer E2E; one stretch that holds half of the change or more is a stall."""
    import pandas as pd

    from msprof_compare.compare.summary_notes import idle_growth_note

    def wf(steps: list[tuple[str, str, int]], base: int = 20_000_000) -> pd.DataFrame:
        delta = sum(d for _, _, d in steps)
        rows = [("Base E2E", "start", None), *steps, ("Comparison E2E", "end", delta)]
        return pd.DataFrame({"Step": [r[0] for r in rows], "Category": [r[1] for r in rows],
                             "Delta(ns)": pd.array([r[2] for r in rows], dtype="Int64"),
                             "Base(ns)": pd.array([base] + [None] * (len(rows) - 1), dtype="Int64"),
                             "Comparison(ns)": pd.array([None] * (len(rows) - 1) + [base + delta], dtype="Int64")})

    contrib = pd.DataFrame({"Name": ["op"]})
    contrib.attrs["idle_evidence"] = {"stretches": ((100, 5_000_000), (100, 9_000_000)),
                                      "longest": (1_000_000, 1_200_000), "syncs": (([], 0), ([], 0))}
    second_steps = [("Uncovered Communication", "communication", 20_000_000), ("Free: Other", "free", 4_000_000),
                    ("Vector", "computing", 1_000_000)]
    second = wf(second_steps)
    said = idle_growth_note(contrib, second)
    assert said.startswith("Free: Other +4.000 ms (16% of the E2E change) is device idle time: the device waited "
                           "longer for work")
    assert ("in the profiles: stretches with no computing, communication or copy 100 -> 100, 0.050 ms -> 0.090 ms long "
            "on average, the longest 1.000 ms -> 1.200 ms (validity check: longest idle stretch): spread over the gaps "
            "between kernels, not one stall") in said and "host sync calls" not in said
    # third by size, under 10%, or against the E2E change: none
    third = wf([("Uncovered Communication", "communication", 20_000_000), ("Vector", "computing", 5_000_000),
                ("Free: Other", "free", 4_000_000)])
    small = wf([("Uncovered Communication", "communication", 40_000_000), ("Free: Other", "free", 4_000_000)])
    against = wf([("Uncovered Communication", "communication", 40_000_000), ("Free: Other", "free", -10_000_000)])
    assert [idle_growth_note(contrib, w) for w in (third, small, against)] == ["", "", ""]
    # under 5% of the longer E2E (4 ms of 20 + 25 ms is 8.9%; of 80 + 25 ms, 3.8%): two runs of one job, no finding
    assert idle_growth_note(contrib, wf([*second_steps], base=80_000_000)) == ""
    # beside a DB export's window tasks, which Free: Other holds too: none (the other note nets them out)
    contrib.attrs["export_window"] = ("comparison", 3_000_000)
    assert idle_growth_note(contrib, second) == ""
    contrib.attrs["export_window"] = None
    # said already, or the verdict's idle aside: none
    assert idle_growth_note(contrib, second, ["the waterfall puts most of it in Free: Other +4.000 ms; Free: Other "
                                              "is device idle time: ..."]) == ""
    contrib.attrs["idle_explained"] = True
    assert idle_growth_note(contrib, second) == ""
    contrib.attrs["idle_explained"] = False
    # the longest stretch grew by half the change or more: a stall; syncs named
    contrib.attrs["idle_evidence"] = {"stretches": ((100, 5_000_000), (90, 9_000_000)),
                                      "longest": (1_000_000, 3_000_000),
                                      "syncs": (([("aten::item", 2)], 1_000), ([("aten::item", 3)], 2_500_000))}
    said = idle_growth_note(contrib, second)
    assert ": most of it one stretch, a stall; host sync calls (aten::item) 2 -> 3, 0.001 ms -> 2.500 ms of host " \
           "time" in said
