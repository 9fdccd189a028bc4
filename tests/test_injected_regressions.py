"""Known regressions, injected into copies of real profiles, are attributed where they were put and nowhere else.

Each test edits one thing of a real input (in ``tmp_path``; the originals are never written), in every file that
records it, as the profiler would have written it, and compares the untouched input (base) with the edited copy:

* a GPU kernel lengthened into the idle time after it (AlexNet on an H200, MaxPool2d's forward kernel, three
  launches, each +30 us).

The expected figures are the raw files' own plus the injected amount: the injected delta must appear on the
sheets, the waterfall and the contributors of what was edited, and every other figure must stay unchanged.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.compare.summary import outside_modules_line

ALEXNET = Path(__file__).resolve().parent / "data" / "kineto" / \
    "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
_MAXPOOL = "max_pool_forward_nchw"


def _rows(frame, column: str = "Index") -> dict:
    return {str(k).strip(): r for k, r in zip(frame[column], frame.itertuples(index=False), strict=True)}


# --------------------------------------------------------------------------- GPU: one kernel, longer

def _lengthened_alexnet(tmp_path: Path, us: int) -> tuple[Path, list[dict]]:
    """The AlexNet trace with each launch of MaxPool2d's forward kernel ``us`` longer, where the idle time after it
    allows (nothing else on the device moves); returns the copy and the kernels as they were."""
    raw = gzip.decompress(ALEXNET.read_bytes()).decode()
    events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                    key=lambda e: e["ts"])
    pools = [i for i, e in enumerate(device) if _MAXPOOL in e["name"]]
    assert len(pools) == 3
    for i in pools:  # the idle time after each is longer than the injection: no overlap is created
        assert device[i + 1]["ts"] - (device[i]["ts"] + device[i]["dur"]) > us
        old = f'"ts": {device[i]["ts"]:f}, "dur": {device[i]["dur"]:f},'
        assert raw.count(old) == 1
        raw = raw.replace(old, f'"ts": {device[i]["ts"]:f}, "dur": {device[i]["dur"] + us:f},')
    out = tmp_path / "alexnet_maxpool_slower.pt.trace.json"
    out.write_text(raw)
    return out, [device[i] for i in pools]


def test_gpu_kernel_made_longer_is_attributed_to_its_category_operator_and_module(tmp_path):
    """+30 us on each of MaxPool2d's three forward kernels: Vector and Computing +0.090 ms, Free -0.090 ms, E2E
    unchanged; the three MaxPool2d modules and their aten::max_pool2d rows +0.030 ms each (their ancestors' TOTAL
    rows +0.090 ms) and no other row. The operator-level contributor is DistributedDataParallel.forward (the top-layer
    op holding the forward); its own ModuleCompareStatistic row reads 0 -> 0 (it is in DistributedDataParallel_0
    and AlexNet_0 runs inside it), so the Summary says the module rows inside it hold its time: before, nothing
    pointed from the contributor to the rows that changed. Swapped sides give the opposite signs."""
    slower, pools = _lengthened_alexnet(tmp_path, 30)
    res = compare(str(ALEXNET), str(slower))
    om = _rows(res.sheet("OverallMetrics"))
    assert {k: r[7] for k, r in om.items() if r[7]} == {"Computing Time": 0.09, "Vector": 0.09,
                                                        "Vector (No Trans)": 0.09, "Free Time": -0.09, "Free": -0.09}
    assert om["E2E Time"][1] == om["E2E Time"][4]
    wf = res.waterfall.set_index("Step")["Delta(ns)"].dropna()
    assert {k: int(v) for k, v in wf.items() if v} == {"Vector": 90_000, "Free: Other": -90_000}

    stat = res.sheet("ModuleCompareStatistic")
    ops = stat[stat["Operator Name"] != "[ TOTAL ]"]
    moved = ops[ops["Device Self Time Diff(ms)"] != 0]
    assert moved["Operator Name"].tolist() == ["aten::max_pool2d"] * 3
    assert moved["Device Self Time Diff(ms)"].tolist() == [0.03] * 3
    base_kernels = [float(k["dur"]) / 1000 for k in pools]  # each op holds exactly its kernel
    assert moved["Device Self Time(ms)"].tolist() == pytest.approx(base_kernels, abs=1e-9)
    totals = stat[stat["Operator Name"] == "[ TOTAL ]"]
    grew = totals[totals["Device Total Time Diff(ms)"] != 0]
    assert sorted(grew["Device Total Time Diff(ms)"].tolist()) == [0.03] * 3 + [0.09] * 3  # 3 MaxPool2d; 3 ancestors
    assert set(grew["Module Class"]) == {"nn.Module: MaxPool2d", "nn.Module: Sequential", "nn.Module: AlexNet",
                                         "nn.Module: DistributedDataParallel"}

    contrib = res.contributors
    assert contrib[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", 0.09]]
    (own,) = ops[ops["Operator Name"] == "DistributedDataParallel.forward"].itertuples(index=False)
    assert (own[6], own[10]) == (0, 0)  # its own row: the time is in the modules run inside it
    (summary,) = [s for s in res.sheets if s.name == "Summary"]
    assert summary.outside_modules == [] and summary.around_modules == ["DistributedDataParallel.forward"]
    assert outside_modules_line(summary.outside_modules, summary.outside_held, summary.around_modules) == (
        "Run around modules from inside one (so its own row on the module sheets holds only the kernels launched "
        "outside those modules), whose rows hold this much of its time: DistributedDataParallel.forward (all of "
        "it); --disable_module writes every operator's row (OperatorCompareStatistic).")
    assert not res.memory_contributors.shape[0] and res.sheet("ApiCompare")["Total Duration(ms)"].equals(
        res.sheet("ApiCompare")["Total Duration(ms).1"])

    back = compare(str(slower), str(ALEXNET))
    assert back.contributors[["Name", "Diff(ms)"]].values.tolist() == [["DistributedDataParallel.forward", -0.09]]
    wf = back.waterfall.set_index("Step")["Delta(ns)"].dropna()
    assert {k: int(v) for k, v in wf.items() if v} == {"Vector": -90_000, "Free: Other": 90_000}
