"""Module sheets of a GPU trace against an NPU export with figures that differ on the two sides: the AlexNet H200
trace (tests/data/kineto, recorded by this project) against the msinsight level-1 NPU run of the same training loop.
The only other GPU module figures checked against something outside the tool come from a trace compared with
itself (reference pair 6b), where every diff is 0. Expected here: the base side's forward modules from the raw
Kineto JSON in plain Python (kernels whose ac2g flow starts inside an nn.Module frame, reference-2 §3.2), the
comparison side's from the original's workbook of reference pair 1 (whose base is that NPU run), the diff cells
by reference-2 §0.1."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from spans import module_times
from xlsxutil import read_xlsx

from msprof_compare.api import compare

GPU = Path(__file__).resolve().parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def _ns(v) -> int:
    return int(Decimal(v) * 1000)


def _forward_modules(path: Path) -> dict[str, tuple[int, int]]:
    """Row name ("/ A_0/ B_0") -> (total, self ns) of every nn.Module frame of a Kineto trace (``module_times``)."""
    with gzip.open(path, "rt") as fh:
        events = json.load(fh, parse_float=Decimal)["traceEvents"]
    frames = sorted((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e["name"]) for e in events
                    if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "python_function"
                    and e["name"].lower().startswith("nn.module:"))
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])): _ns(e["dur"]) for e in events
               if e.get("ph") == "X" and str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy")}
    starts = {e["id"]: _ns(e["ts"]) for e in events if e.get("cat") == "ac2g" and e.get("ph") == "s"}
    launched = [(starts[e["id"]], kernels[(e["pid"], e["tid"], _ns(e["ts"]))]) for e in events
                if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in starts
                and (e["pid"], e["tid"], _ns(e["ts"])) in kernels]
    return module_times(frames, launched)


def test_gpu_against_npu_forward_module_times(samples: Path, reference_outputs: Path) -> None:
    if not (samples / NPU).exists():
        pytest.skip("NPU sample absent")
    base = _forward_modules(GPU)
    assert len(base) == 26
    ref = read_xlsx(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                    sheet_name="ModuleCompare", header=None, skiprows=3)
    ref = ref[(ref[4] == "TOTAL") & ref[1].astype(str).str.startswith("nn.Module:")
              & ~ref[3].astype(str).str.startswith("/[ BACKWARD ]")].set_index(3)
    res = compare(str(GPU), str(samples / NPU), enable_operator_compare=True)
    detail = res.sheet("ModuleCompare").copy()
    detail.columns = range(detail.shape[1])
    rows = detail[(detail[4] == "TOTAL") & detail[1].str.startswith("nn.Module:")
                  & ~detail[3].str.startswith("/[ BACKWARD ]")].set_index(3)
    assert sorted(rows.index) == sorted(base) == sorted(ref.index)
    for name, row in rows.iterrows():
        b_total, b_self = (v / 1000 for v in base[name])
        c_self, c_total = float(ref.at[name, 6]), float(ref.at[name, 7])  # the NPU run as pair 1's base
        assert (row[6], row[7]) == pytest.approx((b_self, b_total), abs=1e-9), name
        assert (row[10], row[11]) == pytest.approx((c_self, c_total), rel=5e-3, abs=1e-3), name
        assert row[12] == pytest.approx(round(c_total - b_total, 2), abs=0.0101), name
        assert row[13] == pytest.approx(round(c_self - b_self, 2), abs=0.0101), name
        want = 1.0 if not b_total and not c_total else (np.inf if not b_total else round(c_total / b_total, 4))
        assert float(row[14]) == pytest.approx(want, rel=5e-3), name
    conv = rows.loc["/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ Conv2d_0"]
    assert conv[7] > 0 and conv[11] > 0 and conv[12] != 0
