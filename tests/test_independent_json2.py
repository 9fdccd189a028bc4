"""The JSON report's match-rate figures on real data: ``frames.match_rate`` (matched, each side's total and rate
of the operator or module matching) and the Summary's "operator match rate" check built from it. Before, they were
checked on synthetic inputs and against the length of the tool's own detail sheet. Here each count is read from
the original's workbook of the reference pair: the OperatorCompare rows with an operator on the base side, on the
comparison side and on both (pairs 4 and 8; pair 7, 6 of 2056 / 26, is left out for its 2 s run), and for the
module sheets the TOTAL rows and the module numbers of ModuleCompareStatistic (pairs 1 and 2, where every module
pairs, so a module count that took unpaired modules for paired ones would go unseen here). Also ``frames.overall`` of
the Kineto pairs 4 and 5 against the original's OverallMetrics cells (test_independent_json.py: NPU text and DB)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_independent_json import ROWS
from xlsxutil import read_xlsx

from msprof_compare.api import compare
from msprof_compare.report import json_report

TEXT = "msinsight/test/data/pytorch/text"
L1 = f"{TEXT}/level1/rank0_ascend_pt"
PAIRS = {
    "1-npu-text-l1-vs-l2": (L1, f"{TEXT}/level2/rank0_ascend_pt"),
    "2-npu-text-l0-rank0-vs-rank1": (f"{TEXT}/level0/rank0_ascend_pt", f"{TEXT}/level0/rank1_ascend_pt"),
    "4-gpu-alexnet-vs-npu-text-l1": (
        "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", L1),
    "8-npu-traceview-file-vs-file": ("mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json",
                                     f"{L1}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
}
LOW, GUARD = 0.5, 0.6  # the "low" flag of the log line and frame; the Summary check's threshold (its Detail says)


def _counts(reference_outputs: Path, pair: str) -> tuple[str, int, int, int]:
    """(what, matched, base total, comparison total) from the original's cells."""
    book = reference_outputs / pair / "performance_comparison_result.xlsx"
    if pair[0] in "12":  # module sheets: one TOTAL row per pair of modules; the Numbers count each side's
        detail = read_xlsx(book, sheet_name="ModuleCompare", header=None, skiprows=3)
        stat = read_xlsx(book, sheet_name="ModuleCompareStatistic", header=None, skiprows=3)
        rows = int((detail[4] == "TOTAL").sum())
        total = stat[stat[4] == "[ TOTAL ]"]
        nb, nc = int(total[7].sum()), int(total[11].sum())
        # every module paired: as many pairs as modules on either side
        assert rows == nb == nc
        return "modules", rows, nb, nc
    ref = read_xlsx(book, sheet_name="OperatorCompare", header=2)
    b, c = ref["Operator Name"].notna(), ref["Operator Name.1"].notna()
    return "operators", int((b & c).sum()), int(b.sum()), int(c.sum())


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_match_rate_frame_and_summary_check(samples: Path, reference_outputs: Path, pair: str) -> None:
    """Pair 8: the original pairs 33 top-layer ops where a maximum matching pairs 34 (docs/differences.md,
    "Operator and module matching is a true maximum matching"), so ours is one more there."""
    base, comparison = (samples / p for p in PAIRS[pair])
    for p in (base, comparison):
        if not p.exists():
            pytest.skip(f"{p} not in samples")
    what, matched, nb, nc = _counts(reference_outputs, pair)
    if pair.startswith("8"):
        assert matched == 33
        matched += 1
    doc = json.loads(json_report.dumps(compare(str(base), str(comparison), enable_operator_compare=True)))
    (row,) = doc["frames"]["match_rate"]
    rb, rc = matched / nb, matched / nc
    assert row == {"what": what, "matched": matched, "base_total": nb, "comparison_total": nc,
                   "base_rate": pytest.approx(rb, rel=1e-15), "comparison_rate": pytest.approx(rc, rel=1e-15),
                   "low": min(rb, rc) < LOW}
    (check,) = [g for g in doc["summary"]["guards"] if g["Check"] == "operator match rate"]
    assert (check["Base"], check["Comparison"]) == pytest.approx((rb, rc), rel=1e-15)
    assert check["Status"] == ("ok" if min(rb, rc) >= GUARD else "warn")
    assert what in check["Detail"]
    # the figures, to read: pair 8 pairs 34 of 69 / 115 operators, pair 4 none of 2 / 115
    want = {"4": (0, 2, 115), "8": (34, 69, 115)}.get(pair[0], (55, 55, 55))
    assert (matched, nb, nc) == want


#: frames.overall metric -> OverallMetrics Index (reference-1 §9.4) of the rows the GPU pairs 4 and 5 show: the NPU
#: pairs' (test_independent_json.ROWS) and the Cube and SDMA rows
OVERALL = {**ROWS, "other_cube": "\tCube", "sdma_stream": "\tSDMA"}


@pytest.mark.parametrize("pair", ["4-gpu-alexnet-vs-npu-text-l1", "5-gpu-kineto-resnet50"])
def test_json_overall_frame_of_gpu_pairs(samples: Path, reference_outputs: Path, pair: str) -> None:
    """``frames.overall`` of Kineto sides (test_independent_json.py covers NPU text and DB pairs): every figure the
    original's OverallMetrics shows, to the ns, with its count; a metric without a row is 0 on both sides (a row
    of zeros is left out, reference-1 §9.3)."""
    paths = {"4-gpu-alexnet-vs-npu-text-l1": PAIRS["4-gpu-alexnet-vs-npu-text-l1"],
             "5-gpu-kineto-resnet50": (
                 "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
                 "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz")}[pair]
    base, comparison = (samples / p for p in paths)
    if not (base.exists() and comparison.exists()):
        pytest.skip("samples absent")
    doc = json.loads(json_report.dumps(compare(str(base), str(comparison), enable_profiling_compare=True)))
    ref = read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx", sheet_name="OverallMetrics",
                    header=2).set_index("Index")
    got = {(r["side"], r["metric"]): (r["ns"], r["count"]) for r in doc["frames"]["overall"]}
    checked = 0
    for (side, metric), (ns, count) in got.items():
        index = OVERALL.get(metric)
        if index is None or index not in ref.index:
            assert ns == 0, (side, metric)
            continue
        sfx = "" if side == "base" else ".1"
        assert isinstance(ns, int) and abs(ns / 1e6 - float(ref.at[index, "Duration(ms)" + sfx])) < 1e-9, \
            (metric, side)
        number = ref.at[index, "Number" + sfx]
        if metric == "sdma_stream":
            # the sheet shows "/" but the frame keeps the count, the console's SDMA Time(Num) (reference-1 §8.4):
            # pair 4's GPU side has 16 copies named HtoD / DtoH / DtoD, all on stream 7 (55.503 ms in all)
            assert count == (16 if (pair[0], side) == ("4", "base") else 0), (metric, side)
        else:
            assert count == (-1 if number == "/" else int(number)), (metric, side)
        checked += 1
    assert checked == {"4": 30, "5": 18}[pair[0]]
