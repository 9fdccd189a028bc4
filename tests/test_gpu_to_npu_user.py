"""A PyTorch job moved from an NVIDIA GPU to an Ascend NPU: a Kineto trace as the base, the NPU's exports as the
comparison. Each expected figure is read here from the raw files (json, csv), not from the tool."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

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


def test_memory_line_says_a_text_peak_counts_app_beside_a_gpu_trace(samples: Path) -> None:
    """A GPU trace's peak is its caching allocator's reservation; the NPU text export's counts memory_record.csv's
    APP component, the whole process's device memory. The line read 0.11 GB -> 2.06 GB, a growth of 1.95 GB of
    which 0.57 GB is memory the GPU's figure never counts (the DB export of the same NPU run reads 1.49 GB); it
    now says so, as it does beside a DB export."""
    gpu, text = samples / H100_BERT, samples / NPU_TEXT
    gpu_peak = _gpu_peak_gb(gpu)
    text_peak, text_without = _text_peaks_gb(text)
    assert (f"{gpu_peak:.2f}", f"{text_peak:.2f}", f"{text_without:.2f}") == ("0.11", "2.06", "1.49")
    pct = (text_peak - gpu_peak) / gpu_peak * 100
    line = memory_line(api.compare(str(gpu), str(text), enable_memory_compare=True).frames["memory"]).splitlines()
    assert line[0] == (f"Peak reserved memory (Mem Usage) {gpu_peak:.2f} GB -> {text_peak:.2f} GB "
                       f"({text_peak - gpu_peak:+.2f} GB, {pct:+.2f}%): the comparison side's, a text export's, "
                       f"counts memory_record.csv's APP component ({text_without:.2f} GB without it), which a GPU "
                       "trace's [memory] events (its caching allocator's reservation) do not hold.")
    # the other way round names the base side
    swapped = memory_line(api.compare(str(text), str(gpu), enable_memory_compare=True).frames["memory"])
    assert "the base side's, a text export's, counts memory_record.csv's APP component" in swapped
    # a GPU trace beside another GPU trace gets no such words
    mi300 = samples / H100_BERT.replace("h100", "mi300")
    assert "APP" not in memory_line(api.compare(str(gpu), str(mi300), enable_memory_compare=True).frames["memory"])
