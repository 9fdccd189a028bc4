"""Figures the JSON report carries beyond the sheets: ``frames.overall``, each side's breakdown in integer ns with
its count. test_overall_npu.py compares that frame with the breakdown objects it is built from (the tool itself);
here each figure is the original's OverallMetrics cell of reference pairs 1 (NPU text exports), 3 (DB exports,
from the excerpts in tests/data/db) and 9d (MindSpore's CANN timelines), to the ns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from refpairs import PAIRS
from xlsxutil import read_xlsx

from msprof_compare.api import compare
from msprof_compare.report import json_report

TEXT = "msinsight/test/data/pytorch/text"
DB = Path(__file__).parent / "data" / "db"
#: frames.overall metric -> OverallMetrics Index (reference-1 §9.2)
ROWS = {
    "computing": "Computing Time", "conv_fwd_cube": "\t\tConv (Forward) (Cube)",
    "conv_fwd_vector": "\t\tConv (Forward) (Vector)", "conv_bwd_cube": "\t\tConv (Backward) (Cube)",
    "conv_bwd_vector": "\t\tConv (Backward) (Vector)", "matmul_cube": "\t\tMatmul (Cube)",
    "matmul_vector": "\t\tMatmul (Vector)", "vector_trans": "\t\tVector (Trans)",
    "vector_notrans": "\t\tVector (No Trans)", "sdma_tm": "\tSDMA (Tensor Move)", "other": "\tOther",
    "uncovered_communication": "Uncovered Communication Time", "free": "Free Time", "e2e": "E2E Time",
}


@pytest.mark.parametrize("pair", ["1-npu-text-l1-vs-l2", "3-npu-db-l1-vs-l2",
                                  "9d-mindspore-legacy-msprof-timeline-files"])
def test_json_overall_frame_is_the_originals_overall_metrics(samples: Path, reference_outputs: Path,
                                                             pair: str) -> None:
    if pair.startswith("1"):
        base, comparison = samples / f"{TEXT}/level1/rank0_ascend_pt", samples / f"{TEXT}/level2/rank0_ascend_pt"
    elif pair.startswith("9"):  # MindSpore's CANN timelines: computing all Other, no category row
        base, comparison = (samples / p for p in PAIRS[pair])
    else:
        base, comparison = DB / "l1" / "ascend_pytorch_profiler_0.db", DB / "l2" / "ascend_pytorch_profiler_0.db"
    doc = json.loads(json_report.dumps(compare(str(base), str(comparison), enable_profiling_compare=True)))
    ref = read_xlsx(reference_outputs / pair / "performance_comparison_result.xlsx", sheet_name="OverallMetrics",
                    header=2).set_index("Index")
    got = {(r["side"], r["metric"]): (r["ns"], r["count"]) for r in doc["frames"]["overall"]}
    checked = 0
    for metric, index in ROWS.items():
        if index not in ref.index:  # pair 3 has no Other row, 9d no category row (0 on both sides: left out,
            # reference-1 §9.3)
            assert got[("base", metric)][0] == got[("comparison", metric)][0] == 0, metric
            continue
        for side, sfx in (("base", ""), ("comparison", ".1")):
            ns, count = got[(side, metric)]
            assert isinstance(ns, int) and abs(ns / 1e6 - float(ref.at[index, "Duration(ms)" + sfx])) < 1e-9, \
                (metric, side)
            number = ref.at[index, "Number" + sfx]
            assert count == (-1 if number == "/" else int(number)), (metric, side)
            checked += 1
    assert checked == {"1": 28, "3": 26, "9": 10}[pair[0]]
