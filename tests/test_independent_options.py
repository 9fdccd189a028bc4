"""Figures the options change, or by reference-2 leave alone, against independent values.

The original's reference workbooks (shared/reference-outputs) come from runs without options, but reference-2
says which sheets an option leaves as they are: ``--disable_details`` drops ModuleCompare, OperatorCompare and
MemoryCompare and keeps every other sheet (§8.6: the statistic sheets group each side's ops by name, not by the
pairing); ``--use_kernel_type`` swaps KernelCompare for KernelTypeCompare (§1, step 7); ``--use_input_shape`` and
``--op_name_map`` change the operator key (§0.4), hence the op pairs, but not the statistic sheets (§2.7, §12.3;
the maps here name no module, which ours would rename: docs/differences.md) nor the sheets that pair no ops;
``--max_kernel_num`` drills into op pairs (§2.5), which the module sheets, API, kernel and communication sheets
and OverallMetrics do not read; an ``--enable_*`` flag makes its comparison's sheets alone (§1), each as in the
run of all; and on a text export a step leaves OverallMetrics (reference-1 §1.4) and, where every
kernel_details.csv row is of that step, KernelCompare as they are. So each of those sheets of an option run must
equal the original's cell for cell, within the bound and with the documented differences counted per sheet that
tests/test_reference_workbooks.py applies to the run without options.

The figures an option does change are pinned further down, each against the original's cells or the raw files.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import shutil
from collections import Counter
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from dbutil import sql
from refpairs import PAIRS
from spans import union
from test_independent_api2 import HOST, _walk
from test_injected_regressions import _db_steps_split
from test_reference_workbooks import EXPECTED, RULES, _differences, _sheets
from test_steps import _mindspore_25
from xlsxutil import read_xlsx

from msprof_compare.api import compare

NPU_TEXT = "1-npu-text-l1-vs-l2"
NPU_L0 = "2-npu-text-l0-rank0-vs-rank1"
NPU_DB = "3-npu-db-l1-vs-l2"
GPU_NPU = "4-gpu-alexnet-vs-npu-text-l1"
MINDSPORE = "9d-mindspore-legacy-msprof-timeline-files"
DETAIL = ("ModuleCompare", "OperatorCompare", "MemoryCompare")
STATISTIC = ("ModuleCompareStatistic", "OperatorCompareStatistic", "MemoryCompareStatistic")
NO_OPS = ("OverallMetrics", "CommunicationCompare", "ApiCompare", "KernelCompare")
#: the sheets each --enable_* flag makes (reference-2 §1)
ENABLED = {"enable_profiling_compare": ("OverallMetrics",),
           "enable_operator_compare": ("ModuleCompareStatistic", "ModuleCompare", "OperatorCompareStatistic",
                                       "OperatorCompare"),
           "enable_memory_compare": ("MemoryCompareStatistic", "MemoryCompare"),
           "enable_api_compare": ("ApiCompare",), "enable_kernel_compare": ("KernelCompare",),
           "enable_communication_compare": ("CommunicationCompare",)}
#: pair 4's GPU side has two top-level ops, neither on the NPU side: one paired with the NPU forward by a map
GPU_TOP, NPU_FORWARD = "[param|cuda]", "DistributedDataParallel.forward"

#: (case id, pair, options, the sheets that must equal the original's, the original's sheets the run leaves out)
CASES: list[tuple[str, str, dict[str, Any], tuple[str, ...], tuple[str, ...]]] = []
for _pair in (NPU_TEXT, NPU_L0, NPU_DB, GPU_NPU, MINDSPORE):
    CASES += [
        (f"{_pair}:disable_details", _pair, {"disable_details": True}, STATISTIC + NO_OPS, DETAIL),
        (f"{_pair}:use_kernel_type", _pair, {"use_kernel_type": True},
         STATISTIC + DETAIL + NO_OPS[:3], ("KernelCompare",)),
        (f"{_pair}:use_input_shape", _pair, {"use_input_shape": True}, STATISTIC + NO_OPS, ()),
        (f"{_pair}:max_kernel_num", _pair, {"max_kernel_num": 4},
         ("ModuleCompareStatistic", "ModuleCompare") + NO_OPS, ()),
    ]
    CASES += [(f"{_pair}:{flag}", _pair, {flag: True}, sheets, ())
              for flag, sheets in ENABLED.items() if _pair != MINDSPORE or flag == "enable_communication_compare"]
# two GPU traces (reference pair 5, slower: the two option runs whose sheets of paired ops it checks)
GPU_GPU = "5-gpu-kineto-resnet50"
CASES += [
    (f"{GPU_GPU}:disable_details", GPU_GPU, {"disable_details": True}, STATISTIC + NO_OPS, DETAIL),
    (f"{GPU_GPU}:use_input_shape", GPU_GPU, {"use_input_shape": True}, STATISTIC + NO_OPS, ()),
    (f"{GPU_NPU}:op_name_map", GPU_NPU, {"op_name_map": {GPU_TOP: NPU_FORWARD}}, STATISTIC + NO_OPS, ()),
    (f"{NPU_TEXT}:op_name_map", NPU_TEXT, {"op_name_map": {"aten::relu_": "aten::relu"}}, STATISTIC + NO_OPS, ()),
    (f"{NPU_TEXT}:step", NPU_TEXT, {"base_step": 50, "comparison_step": 50}, ("OverallMetrics", "KernelCompare"), ()),
    (f"{NPU_L0}:step", NPU_L0, {"base_step": 50, "comparison_step": 50}, ("OverallMetrics",), ()),
]


def _paths(samples: Path, pair: str) -> tuple[str, str]:
    paths = [samples / p for p in PAIRS[pair]]
    for p in paths:
        if not p.exists():
            pytest.skip(f"{p} not in samples")
    return str(paths[0]), str(paths[1])


@pytest.mark.parametrize(("pair", "options", "kept", "dropped"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_sheets_an_option_leaves_are_the_originals(samples: Path, reference_outputs: Path, tmp_path: Path,
                                                    pair: str, options: dict[str, Any], kept: tuple[str, ...],
                                                    dropped: tuple[str, ...]) -> None:
    """Each sheet the option leaves as it is (those of ``kept`` the original wrote for the pair) equals the
    original's within the bound of tests/test_reference_workbooks.py, its other cells the documented differences
    counted there for the run without options; a sheet of ``kept`` the original did not write is not written,
    and the sheets of ``dropped`` are left out."""
    base, comparison = _paths(samples, pair)
    ref = _sheets(reference_outputs / pair / "performance_comparison_result.xlsx")
    ours = _sheets(compare(base, comparison, **options).to_excel(tmp_path))
    captions = [f"Base Profiling: {base}", f"Comparison Profiling: {comparison}"]
    # a sheet the original did not write for the pair (no kernel sheet of a Level0 export, of a GPU side) is not
    # written by ours either
    assert [s for s in kept if s in ours] == [s for s in kept if s in ref]
    for sheet in [s for s in kept if s in ref]:
        found = Counter(next((name for name, rule in RULES.items() if rule(pair, cell)), "UNEXPLAINED")
                        for cell in _differences(sheet, ref[sheet], ours[sheet], captions))
        assert found == Counter({why: n for (s, why), n in EXPECTED[pair].items() if s == sheet}), sheet
    assert not [s for s in dropped if s in ours]
    if pair == NPU_TEXT and "base_step" in options:
        # KernelCompare keeps the kernel_details.csv rows of the step (reference-2 §9): all of them here
        for side in (base, comparison):
            with open(Path(side) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as fh:
                assert {r["Step Id"] for r in csv.DictReader(fh)} == {"50"}, side


def _diff_ratio(b: float, c: float) -> tuple[float, float | str]:
    """reference-2 §0.1 by hand, the ratio as the workbook writes it (INF for a base of 0)."""
    return round(c - b, 2), 1.0 if not b and not c else ("INF" if not b else round(c / b, 4))


def _shaped_forward(samples: Path, dst: Path) -> Path:
    """A copy of pair 4's NPU side whose one DistributedDataParallel.forward cpu_op holds "Input Dims" "8,8"
    (it has none: its shape reads N/A)."""
    shutil.copytree(samples / PAIRS[GPU_NPU][1], dst)
    view = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(view.read_text(encoding="utf-8"))
    (op,) = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") == NPU_FORWARD]
    assert "Input Dims" not in op["args"]
    op["args"]["Input Dims"] = "8,8"
    view.write_text(json.dumps(events), encoding="utf-8")
    return dst


@pytest.mark.parametrize("sheet", ["OperatorCompare", "MemoryCompare"])
@pytest.mark.parametrize(("use_input_shape", "shaped"), [(False, False), (True, False), (False, True), (True, True)])
def test_op_name_map_pair_joins_the_originals_two_rows(samples: Path, reference_outputs: Path, tmp_path: Path,
                                                       sheet: str, use_input_shape: bool, shaped: bool) -> None:
    """``--op_name_map`` keys both sides' ops by the mapped name, ``--use_input_shape`` by that name and the
    input shape (reference-2 §0.4). Pair 4's GPU side has two top-level ops, "[param|cuda]" and
    cudaDeviceSynchronize, which the original's run without options leaves unpaired (its rows 116 and 117, after
    the NPU side's 115); mapped onto the NPU's one DistributedDataParallel.forward, "[param|cuda]" pairs with it
    (one op each side: no other pairing can change), its shape N/A as the NPU op's, so with --use_input_shape
    too. The sheet must then be the original's rows with those two joined into one: the base cells of its row
    116 and the comparison cells of its row 4 at row 4, Diff and Ratio by §0.1 from those cells, the later rows
    one Order Id lower; every cell within the bound, the detail texts' nanosecond durations counted as for the
    run without options. Given the NPU op the shape "8,8" (``shaped``), the pair still joins by name alone,
    while with --use_input_shape the two stay apart: the original's sheet as it is, but for that shape cell.
    Before, the map was checked on the pairing's names only (an edited excerpt), the shape key on counts."""
    base, comparison = _paths(samples, GPU_NPU)
    if shaped:
        comparison = str(_shaped_forward(samples, tmp_path / "rank0_ascend_pt"))
    ref = _sheets(reference_outputs / GPU_NPU / "performance_comparison_result.xlsx")[sheet]
    data = ref[3:]
    (alone,) = [i for i, r in enumerate(data) if r[1] == GPU_TOP]
    (partner,) = [i for i, r in enumerate(data) if r[6] == NPU_FORWARD]
    assert (alone, partner, len(data)) == (115, 3, 117) and data[alone][6] is None and data[partner][1] is None
    assert data[alone][2] == data[partner][7] == "N/A"
    if shaped:
        data[partner] = [*data[partner][:7], "8,8", *data[partner][8:]]
    if use_input_shape and shaped:
        want = ref[:3] + data
    else:
        joined = [partner + 1, *data[alone][1:6], *data[partner][6:11],
                  *_diff_ratio(data[alone][5], data[partner][10])]
        want = ref[:3] + data[:partner] + [joined] + data[partner + 1:alone] + [[data[-1][0] - 1, *data[-1][1:]]]
    res = compare(base, comparison, op_name_map={GPU_TOP: NPU_FORWARD}, use_input_shape=use_input_shape)
    ours = _sheets(res.to_excel(tmp_path))[sheet]
    assert len(ours) == len(want) == 3 + (117 if use_input_shape and shaped else 116)
    found = Counter(next((name for name, rule in RULES.items() if rule(GPU_NPU, cell)), "UNEXPLAINED")
                    for cell in _differences(sheet, want, ours, [f"Base Profiling: {base}",
                                                                 f"Comparison Profiling: {comparison}"]))
    assert found == Counter({why: n for (s, why), n in EXPECTED[GPU_NPU].items() if s == sheet})
    row = ours[3 + partner]
    if use_input_shape and shaped:
        assert row[1:2] + row[6:8] == [None, NPU_FORWARD, "8,8"]
        return
    assert row[1:2] + row[6:7] == [GPU_TOP, NPU_FORWARD]
    if sheet == "OperatorCompare":  # 2318.94625 us (the original's; ours to the ns: 2318.938) against 66195 us
        assert (row[5], row[11], row[12]) == (66195, -63876.06, 0.035)
    else:  # no memory on the GPU side
        assert (row[5], row[10], row[11], row[12]) == (0, 369514, 369514, "INF")


# ------------------------------------------------------------------------------------------- ApiCompare of a step

TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"


def _step_apis(view: Path, step: int) -> dict[str, list[int]]:
    """name -> [Σ dur ns, Σ self ns, calls] of the ApiCompare rows of ``step`` (reference-2 §7), from the raw
    trace_view.json with json and Decimal: the cpu_op events sorted by start (stable), nested by the cursor walk
    of §2.2 (a child starts at or before the open op's end, threads ignored); the top-level ``ProfilerStep#<step>``
    node's children and all their descendants breadth-first; self = dur - the direct children's durs."""
    events = json.loads(view.read_text(encoding="utf-8"))
    ops = sorted(((Decimal(str(e["ts"])), Decimal(str(e["dur"])), e["name"]) for e in events
                  if isinstance(e, dict) and str(e.get("cat", "")).lower() == "cpu_op"), key=lambda o: o[0])
    root: dict[str, Any] = {"kids": []}
    cur, up = root, {}
    for ts, dur, name in ops:
        while cur is not root and ts > cur["end"]:
            cur = up[id(cur)]
        node = {"name": name, "dur": int(dur * 1000), "end": ts + dur, "kids": []}
        cur["kids"].append(node)
        up[id(node)], cur = cur, node
    return _api_tally([k for top in root["kids"] if top["name"] == f"ProfilerStep#{step}" for k in top["kids"]])


def _api_tally(queue: list[dict]) -> dict[str, list[int]]:
    """Per API name of the nodes in ``queue`` and below them: [total ns, self ns (its children's time taken out),
    calls]."""
    out: dict[str, list[int]] = {}
    for node in queue:  # the list grows as it is walked: breadth-first
        row = out.setdefault(node["name"], [0, 0, 0])
        row[0] += node["dur"]
        row[1] += node["dur"] - sum(k["dur"] for k in node["kids"])
        row[2] += 1
        queue += node["kids"]
    return out


def _cell(v: Any) -> Any:
    """A sheet cell as the oracles write it: the ratio text INF as inf, a blank (NaN, NA) as None."""
    if isinstance(v, str):
        return math.inf if v == "INF" else v
    return None if pd.isna(v) else v


def _ratio(b: float, c: float) -> float:
    return 1.0 if not b and not c else (math.inf if not b else round(c / b, 4))


def _api_rows(base: dict[str, list[int]], comp: dict[str, list[int]]) -> list[list[Any]]:
    """The sheet's rows (§7): base names first, then comparison-only names; ms rounded to 0.01, Avg of the
    rounded total; the ratios of the rounded cells."""
    rows = []
    for n, name in enumerate(list(base) + [k for k in comp if k not in base], start=1):
        sides = []
        for side in (base, comp):
            dur, own, calls = side.get(name, [0, 0, 0])
            total = round(dur / 1e6, 2)
            sides.append([total, round(own / 1e6, 2), round(total / calls, 2) if calls else 0.0, calls])
        (b, c) = sides
        rows.append([n, name, *b, *c, *(_ratio(x, y) for x, y in zip(b, c, strict=True))])
    return rows


def _split(samples: Path, dst: Path) -> Path:
    """The level-1 export with ProfilerStep#50 cut in two where its loss module starts (tests/test_steps.py's
    split): #50 ends 10 us before nn.Module: CrossEntropyLoss_0, #51 runs from it to the old end."""
    shutil.copytree(samples / TEXT.format(1), dst)
    path = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(path.read_text(encoding="utf-8"))
    step = next(e for e in events if e.get("name") == "ProfilerStep#50")
    loss = next(e for e in events if e.get("name") == "nn.Module: CrossEntropyLoss_0")
    start, end, cut = Decimal(step["ts"]), Decimal(step["ts"]) + Decimal(str(step["dur"])), Decimal(loss["ts"])
    step["dur"] = float(cut - Decimal(10) - start)
    events.append({**step, "name": "ProfilerStep#51", "ts": str(cut), "dur": float(end - cut)})
    path.write_text(json.dumps(events), encoding="utf-8")
    return dst


@pytest.mark.parametrize(("split", "steps"), [(False, (50, 50)), (True, (50, 50)), (True, (51, 50))],
                         ids=["pair1-step50", "split-step50", "split-step51-vs-50"])
def test_api_compare_of_a_step_from_the_raw_traces(samples: Path, reference_outputs: Path, tmp_path: Path,
                                                   split: bool, steps: tuple[int, int]) -> None:
    """ApiCompare with a step holds only the step's ops (reference-2 §7), so no reference workbook has its
    figures in that order (pair 1's default ApiCompare differs from its step-50 run in 2940 cells). Every cell of
    it, from the raw trace_view.json files (``_step_apis``): pair 1 at step 50 (its one step, which holds all
    859 ops: the original's rows of the run without a step, reordered), and the level-1 export split in two
    steps (#50 the forward, 125 calls; #51 the loss, backward and optimizer, 734) at 50 or 51 against the
    level-2 export at 50 (each side its own step id)."""
    dirs = [samples / TEXT.format(n) for n in (1, 2)]
    for d in dirs:
        if not d.exists():
            pytest.skip(f"{d} not in samples")
    if split:
        dirs[0] = _split(samples, tmp_path / "split_ascend_pt")
    want = _api_rows(*(_step_apis(d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", s)
                       for d, s in zip(dirs, steps, strict=True)))
    sheet = compare(str(dirs[0]), str(dirs[1]), enable_api_compare=True, base_step=steps[0],
                    comparison_step=steps[1]).sheet("ApiCompare")
    got = [[_cell(v) for v in r] for r in sheet.astype(object).values.tolist()]
    assert [r[:2] for r in got] == [r[:2] for r in want]
    assert got == want
    calls = (sum(r[5] for r in want), sum(r[9] for r in want))
    assert calls == ((125 if steps[0] == 50 else 734) if split else 859, 859)  # 860 cpu_ops, the marker no API
    if not split:
        # the step holds every op of pair 1 but in breadth-first order: the original's rows (of its run without
        # a step, in start order) by name, each cell within 0.01 (a ratio 0.0001) of ours
        ref = read_xlsx(reference_outputs / NPU_TEXT / "performance_comparison_result.xlsx", sheet_name="ApiCompare",
                        header=2).astype(object).values.tolist()
        assert [r[1] for r in ref] != [r[1] for r in got]
        by_name = {r[1]: [math.inf if v == "INF" else v for v in r[2:]] for r in got}
        assert sorted(by_name) == sorted(r[1] for r in ref)
        for r in ref:
            assert [math.inf if v == "INF" else v for v in r[2:]] == pytest.approx(by_name[r[1]], abs=0.01), r[1]


# ------------------------------------------------------------------------------- OperatorCompareStatistic of a step

def _whole_ns(us: Any) -> Decimal:
    """A raw duration in us held in whole ns, half to even (docs/differences.md, "NPU times are integer
    nanoseconds")."""
    return (Decimal(str(us)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)


def _op_tree(view: Path) -> dict[str, Any]:
    """The op tree of a raw trace_view.json (reference-2 §2.1, §2.2), each node {name, end, kernels (their ns),
    kids, memory (``_memory_records`` placed in it)}: kernels are the Ascend Hardware and HCCL X events
    (docs/differences.md, "NPU collectives always count for the op that launches them"), each listed under the
    start ts of the async_npu flow whose end is at its pid / tid / ts; an op gets the kernels listed under its
    own ts; the cpu_op events and memory records nested by the cursor walk of §2.2 (a record at an op's ts after
    it)."""
    events = [e for e in json.loads(view.read_text(encoding="utf-8")) if isinstance(e, dict)]
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    kernels = {(e["pid"], e["tid"], Decimal(str(e["ts"]))): _whole_ns(e["dur"]) for e in events
               if e.get("ph") == "X" and procs.get(e.get("pid")) in ("Ascend Hardware", "HCCL")}
    flows: dict[str, dict[Any, dict]] = {"s": {}, "f": {}}
    for e in events:
        if str(e.get("cat", "")).lower() == "async_npu" and e.get("ph") in flows:
            flows[e["ph"]][e["id"]] = e
    launched: dict[Decimal, list[Decimal]] = {}
    for fid, s in flows["s"].items():
        f = flows["f"].get(fid)
        if f is not None and (f["pid"], f["tid"], Decimal(str(f["ts"]))) in kernels:
            launched.setdefault(Decimal(str(s["ts"])), []).append(kernels[f["pid"], f["tid"], Decimal(str(f["ts"]))])
    ops = [(Decimal(str(e["ts"])), 0, Decimal(str(e["dur"])), e["name"]) for e in events
           if str(e.get("cat", "")).lower() == "cpu_op"]
    # memory records after the ops of their ts (a stable sort of ops + records)
    items = sorted(ops + [(ts, 1, record) for ts, record in _memory_records(view, events)],
                   key=lambda o: (o[0], o[1]))
    root: dict[str, Any] = {"kids": [], "memory": []}
    cur, up = root, {}
    for item in items:
        while cur is not root and item[0] > cur["end"]:
            cur = up[id(cur)]
        if item[1]:
            cur["memory"].append(item[2])
            continue
        ts, _, dur, name = item
        node = {"name": name, "end": ts + dur, "kernels": launched.get(ts, []), "kids": [], "memory": []}
        cur["kids"].append(node)
        up[id(node)], cur = cur, node
    return root


def _memory_records(view: Path, events: list[dict]) -> list[tuple[Decimal, tuple[Decimal, int]]]:
    """(placement ts, (size KB, duration ns)) of the operator_memory.csv rows beside ``view`` (reference-2 §5.1):
    rows without an allocation time are skipped; a cann:: row is placed at the Enqueue of the Dequeue running at
    its allocation (the last to start at or before it, if it has not ended), else skipped; the others at their
    allocation. The duration is release - allocation in whole ns (0 without a release)."""
    path = view.parent / "operator_memory.csv"
    if not path.exists():
        return []
    dequeues = sorted((Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"])),
                       e["args"]["correlation_id"]) for e in events if e.get("cat") == "dequeue")
    enqueues = {e["args"]["correlation_id"]: Decimal(str(e["ts"])) for e in events if e.get("cat") == "enqueue"}
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            alloc, release = (r[k].strip() for k in ("Allocation Time(us)", "Release Time(us)"))
            if alloc in ("", "N/A") or not Decimal(alloc):
                continue
            at = Decimal(alloc)
            if "cann::" in r["Name"]:
                before = [d for d in dequeues if d[0] <= at]
                if not before or at > before[-1][1]:
                    continue
                ts = enqueues.get(before[-1][2], Decimal(0))
            else:
                ts = at
            ns = 0 if release in ("", "N/A") or not Decimal(release) else _whole_ns(Decimal(release) - at)
            out.append((ts, (Decimal(r["Size(KB)"]), int(ns))))
    return out


def _device_ns(node: dict[str, Any]) -> Decimal:
    """The ns of an op's and its descendants' kernels."""
    return sum(node["kernels"], Decimal(0)) + sum((_device_ns(k) for k in node["kids"]), Decimal(0))


def _memory_of(node: dict[str, Any]) -> list[tuple[Decimal, int]]:
    """The memory records of an op and its descendants (its "total memory", reference-2 §2.2)."""
    return node["memory"] + [m for k in node["kids"] for m in _memory_of(k)]


def _memory_statistic(base: list[dict[str, Any]], comp: list[dict[str, Any]]) -> list[list[Any]]:
    """MemoryCompareStatistic's rows but Top (reference-2 §5.4) of two sides' compared ops: per name the Σ of
    its ops' records' durations (ms) and sizes (MB) and the ops; Diff and Ratio of the MB; sorted stably by Diff,
    largest first."""
    sides = []
    for ops in (base, comp):
        by: dict[str, list[Any]] = {}
        for op in ops:
            row = by.setdefault(op["name"], [Decimal(0), Decimal(0), 0])
            records = _memory_of(op)
            row[0] += sum((Decimal(ns) for _, ns in records), Decimal(0)) / 1_000_000
            row[1] += sum((kb for kb, _ in records), Decimal(0)) / 1024
            row[2] += 1
        sides.append(by)
    rows = []
    for name in list(sides[0]) + [k for k in sides[1] if k not in sides[0]]:
        b, c = (side.get(name, [Decimal(0), Decimal(0), 0]) for side in sides)
        rows.append([name, float(b[0]), float(b[1]), b[2], float(c[0]), float(c[1]), c[2],
                     round(float(c[1]) - float(b[1]), 2), _ratio(float(b[1]), float(c[1]))])
    rows.sort(key=lambda r: -r[7])  # stable
    return rows


def _kernel_num(node: dict[str, Any]) -> int:
    return len(node["kernels"]) + sum(_kernel_num(k) for k in node["kids"])


def _by_name(ops: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """name -> [Σ device ms, ops] in first-appearance order (reference-2 §2.7)."""
    out: dict[str, list[Any]] = {}
    for op in ops:
        row = out.setdefault(op["name"], [Decimal(0), 0])
        row[0] += _device_ns(op) / 1_000_000
        row[1] += 1
    return out


def _step_operators(view: Path, step: int) -> dict[str, list[Any]]:
    """name -> [Σ device ms, ops] of the top-layer ops of ``step`` (reference-2 §2.3, §2.7): the children of the
    top-level ProfilerStep#<step> of ``_op_tree``."""
    root = _op_tree(view)
    return _by_name([k for t in root["kids"] if t["name"] == f"ProfilerStep#{step}" for k in t["kids"]])


@pytest.mark.parametrize("base_step", [50, 51])
def test_operator_statistic_of_a_step_from_the_raw_traces(samples: Path, reference_outputs: Path, tmp_path: Path,
                                                          base_step: int) -> None:
    """OperatorCompareStatistic with a step holds the step's top-layer ops alone (reference-2 §2.3), which no
    reference workbook shows: the level-1 export split in two steps (#50 the forward, #51 the loss, backward and
    optimizer) at step 50 or 51 against the level-2 export at 50, every cell from the raw trace_view.json files
    (``_step_operators``): names, ms, counts, Diff by §0.1, the stable sort by Diff, largest first, and Top; and
    every MemoryCompareStatistic cell from the operator_memory.csv records placed in those ops (§5.1). The
    oracle itself gives the original's comparison columns of reference pair 4 (the level-1 export's whole step)
    to 20 ns (the original sums the kernels' us as written, ours and the oracle whole ns)."""
    dirs = [samples / TEXT.format(n) for n in (1, 2)]
    for d in dirs:
        if not d.exists():
            pytest.skip(f"{d} not in samples")
    views = [d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json" for d in dirs]
    ref = read_xlsx(reference_outputs / GPU_NPU / "performance_comparison_result.xlsx",
                    sheet_name="OperatorCompareStatistic", header=2)
    ref = ref[ref["Comparison Operator Number"] > 0]
    whole = _step_operators(views[0], 50)
    assert sorted(whole) == sorted(ref["Operator Name"]) and len(whole) == 35
    for _, r in ref.iterrows():
        ms, n = whole[r["Operator Name"]]
        assert (float(ms), n) == (pytest.approx(r["Comparison Device Duration(ms)"], abs=2e-5),
                                  r["Comparison Operator Number"]), r["Operator Name"]
    split = _split(samples, tmp_path / "split_ascend_pt")
    base = _step_operators(split / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", base_step)
    comp = _step_operators(views[1], 50)
    assert (len(base), sum(n for _, n in base.values())) == ((3, 4) if base_step == 50 else (33, 111))
    assert len(comp) == 35
    want = []
    for name in list(base) + [k for k in comp if k not in base]:
        (b, nb), (c, nc) = base.get(name, (Decimal(0), 0)), comp.get(name, (Decimal(0), 0))
        want.append([name, float(b), nb, float(c), nc, round(float(c) - float(b), 2), _ratio(float(b), float(c))])
    want.sort(key=lambda r: -r[5])  # stable
    res = compare(str(split), str(dirs[1]), enable_operator_compare=True, enable_memory_compare=True,
                  disable_module=True, base_step=base_step, comparison_step=50)
    got = [[_cell(v) for v in r] for r in res.sheet("OperatorCompareStatistic").astype(object).values.tolist()]
    assert [r[0] for r in got] == list(range(1, len(want) + 1))
    assert [r[1:] for r in got] == want
    # MemoryCompareStatistic of the same top-layer ops: operator_memory.csv's records in them (§5.1)
    tops = [[k for t in _op_tree(v)["kids"] if t["name"] == f"ProfilerStep#{s}" for k in t["kids"]]
            for v, s in ((split / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", base_step), (views[1], 50))]
    rows = _memory_statistic(*tops)
    got = [[_cell(v) for v in r] for r in res.sheet("MemoryCompareStatistic").astype(object).values.tolist()]
    assert got == [[n, *r] for n, r in enumerate(rows, start=1)]


# ------------------------------------------------------------------------------------------ AMD ROCm: ApiCompare

BERT = "tracelens/tests/traces/{}/gaunernst_bert-small-uncased__1016001.json.gz"


def _trace_apis(path: Path) -> dict[str, list[int]]:
    """name -> [Σ dur ns, Σ self ns, calls] of a Kineto trace's ApiCompare rows without a step (reference-2 §7):
    its host events of the categories of §2.1 but the ProfilerStep# markers, by start (file order at a tie);
    self time by test_independent_api2's per-thread walk (docs/differences.md, "ApiCompare Self Time subtracts a
    call's callees on its own thread"). Times read as decimals, in whole ns."""
    with gzip.open(path, "rt") as fh:
        doc = json.load(fh, parse_float=Decimal)
    calls = []
    for e in doc["traceEvents"] if isinstance(doc, dict) else doc:
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in HOST and "ProfilerStep#" not in e["name"]:
            ts = int(Decimal(e["ts"]) * 1000)
            calls.append((ts, ts + int(Decimal(e.get("dur", 0)) * 1000), e["name"], (e.get("pid"), e.get("tid"))))
    calls.sort(key=lambda c: c[0])
    out: dict[str, list[int]] = {}
    threads: dict[tuple, list] = {}
    for ts, end, name, thread in calls:
        row = out.setdefault(name, [0, 0, 0])
        row[0] += end - ts
        row[2] += 1
        threads.setdefault(thread, []).append((ts, end, name))
    own = _walk(threads)  # ms to 0.01 by name
    for name, row in out.items():
        row[1] = own[name]
    return out


def test_amd_api_compare_from_the_raw_traces(samples: Path) -> None:
    """ApiCompare of an AMD MI300X trace (ROCm: hipLaunchKernel / hipExtModuleLaunchKernel runtime calls) against
    the H100 trace of the same bert-small run (CUDA runtime calls; its cuda_driver calls are no APIs), which no
    reference workbook holds: every cell from the raw JSON (``_trace_apis``): names in start order, base first,
    Total / Avg / Calls per §7, Self Time by the per-thread walk, the four ratios of the rounded cells."""
    paths = [samples / BERT.format(gpu) for gpu in ("h100", "mi300")]
    for p in paths:
        if not p.exists():
            pytest.skip(f"{p} not in samples")
    sides = [_trace_apis(p) for p in paths]
    # 39 H100 names, 36 MI300X names, 46 rows; the MI300X launches 30 + 26 kernels (60 kernels and a copy in all)
    assert (len(sides[0]), len(sides[1]), sides[1]["hipLaunchKernel"][2], sides[1]["hipExtModuleLaunchKernel"][2],
            sides[0]["cudaLaunchKernel"][2]) == (39, 36, 30, 26, 34)
    want = []
    for row in _api_rows(*sides):
        for i, self_ms in ((3, sides[0]), (7, sides[1])):  # the walk's self ms in place of the ns sums' rounding
            row[i] = self_ms[row[1]][1] if row[1] in self_ms else 0.0
        row[10:14] = [_ratio(row[j], row[j + 4]) for j in (2, 3, 4, 5)]
        want.append(row)
    sheet = compare(*(str(p) for p in paths), enable_api_compare=True).sheet("ApiCompare")
    got = [[_cell(v) for v in r] for r in sheet.astype(object).values.tolist()]
    assert [r[:2] for r in got] == [r[:2] for r in want]
    assert got == want


# ---------------------------------------------------------------------------------------- KernelCompare of a step

def _half_up(v: Decimal) -> float:
    return float(v.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _step_kernels(path: Path, step: int) -> dict[tuple[str, str], list[Decimal]]:
    """(Type, Input Shapes or N/A) -> the Duration(us) of the kernel_details.csv rows of ``step`` with a type
    (reference-2 §6.1), read with the csv module as decimals; grouped by type, then by shapes within a type,
    each in first-appearance order."""
    by_type: dict[str, dict[str, list[Decimal]]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["Step Id"].strip() == str(step) and r["Type"].strip() not in ("", "N/A"):
                shapes = by_type.setdefault(r["Type"], {})
                shapes.setdefault(r["Input Shapes"] or "N/A", []).append(Decimal(r["Duration(us)"]))
    return {(t, s): durs for t, shapes in by_type.items() for s, durs in shapes.items()}


def _kernel_cells(durs: list[Decimal] | None) -> list[Any]:
    """One side's Total / Avg / Max / Min / Calls (docs/differences.md, "KernelCompare totals are exact decimal
    sums, rounded half up"; the Avg of the rounded total)."""
    if not durs:
        return [0.0, 0.0, None, None, None]
    total = _half_up(sum(durs, Decimal(0)))
    return [total, round(total / len(durs), 2), _half_up(max(durs)), _half_up(min(durs)), len(durs)]


@pytest.mark.parametrize("mindspore", [False, True], ids=["torch_npu", "mindspore"])
@pytest.mark.parametrize("base_step", [50, 51])
def test_kernel_compare_of_a_step_from_kernel_details(samples: Path, tmp_path: Path, base_step: int,
                                                      mindspore: bool) -> None:
    """KernelCompare keeps the kernel_details.csv rows whose Step Id is the step (reference-2 §6.1, §9); no sample
    holds two steps, so the level-1 export split in two (tests' ``_split``) has its kernels from the cut on
    relabelled Step Id 51. Its step 50 or 51 against the level-2 export's step 50, every cell from the two CSV
    files read here: groups by Type, then Input Shapes, in first-appearance order, base keys first, the exact sums
    rounded half up, Avg of the rounded total, the ratios of the rounded Total and Avg. The same split export laid
    out as MindSpore 2.5+ writes it (test_steps' ``_mindspore_25``: no torch op, the step markers among the
    framework events; no real MindSpore export with steps is staged) gives the same cells."""
    split = _split(samples, tmp_path / "split_ascend_pt")
    cut = next(Decimal(e["ts"]) for e in json.loads((split / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
                                                    .read_text(encoding="utf-8"))
               if e.get("name") == "ProfilerStep#51")
    details = split / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(details, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    at = rows[0].index("Start Time(us)")
    for r in rows[1:]:
        if Decimal(r[at].strip()) >= cut:
            r[0] = "51"
    with open(details, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    if mindspore:
        split = _mindspore_25(split, tmp_path / "host1_1_20250301120000001_ascend_ms")
        details = split / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    comp_dir = samples / TEXT.format(2)
    base = _step_kernels(details, base_step)
    comp = _step_kernels(comp_dir / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", 50)
    # 191 typed kernels a side: 46 before the cut (41 groups), 145 from it (102 groups); the comparison's 128
    assert [sum(map(len, side.values())) for side in (base, comp)] == [46 if base_step == 50 else 145, 191]
    want = []
    for n, key in enumerate(list(base) + [k for k in comp if k not in base], start=1):
        b, c = _kernel_cells(base.get(key)), _kernel_cells(comp.get(key))
        want.append([n, *key, *b, *c, _ratio(b[0], c[0]), _ratio(b[1], c[1])])
    sheet = compare(str(split), str(comp_dir), enable_kernel_compare=True, base_step=base_step,
                    comparison_step=50).sheet("KernelCompare")
    got = [[_cell(v) for v in r] for r in sheet.astype(object).values.tolist()]
    assert [r[:3] for r in got] == [r[:3] for r in want]
    assert got == want


# ------------------------------------------------------------------------------------ --max_kernel_num drill-down

def _top_layer(root: dict[str, Any]) -> list[dict[str, Any]]:
    """The top-layer ops without a step (reference-2 §2.3): the root's children, a ProfilerStep# replaced by its."""
    return [k for t in root["kids"] for k in (t["kids"] if "ProfilerStep#" in t["name"] else [t])]


def _drilled(base: list[dict], comp: list[dict], limit: int | None, out: list[tuple[dict, dict]]) -> None:
    """reference-2 §2.5 on two op lists of the same names, so that the matching pairs them in order (asserted):
    a pair whose two ops both have children and whose larger kernel count exceeds ``limit`` is replaced in place
    by the pairs of their children, depth first."""
    assert [o["name"] for o in base] == [o["name"] for o in comp]
    for b, c in zip(base, comp, strict=True):
        if limit is not None and b["kids"] and c["kids"] and max(_kernel_num(b), _kernel_num(c)) > limit:
            _drilled(b["kids"], c["kids"], limit, out)
        else:
            out.append((b, c))


@pytest.mark.parametrize("limit", [None, 10, 4])
def test_max_kernel_num_drill_down_from_the_raw_traces(samples: Path, reference_outputs: Path,
                                                       limit: int | None) -> None:
    """--max_kernel_num replaces a pair of ops with more kernels than the bound by the pairs of their children
    (reference-2 §2.5), and the statistic groups the ops of the pairs that result (§2.7). Pair 1 (level-1 against
    level-2 export of one script, whose op trees hold the same names at every level, asserted) compared op by op:
    OperatorCompare's pairs (115 top-layer ops; 188 with the bound 10, 201 with 4), each op's device time (its and
    its descendants' kernels, ``_op_tree``), Diff and Ratio by §0.1, and every OperatorCompareStatistic cell,
    from the raw trace_view.json files; the memory sheets pair the same ops (§5.2): MemoryCompare's sizes and
    every MemoryCompareStatistic cell (35 rows; 48 with either bound) from operator_memory.csv placed in the op
    trees (§5.1, ``_memory_records``), which without the option gives the original's sheet. Before, the
    drill-down was pinned on one edited op of a GPU trace and on synthetic trees; the statistics after it on
    their row counts and sums."""
    dirs = [samples / TEXT.format(n) for n in (1, 2)]
    for d in dirs:
        if not d.exists():
            pytest.skip(f"{d} not in samples")
    roots = [_op_tree(d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json") for d in dirs]
    pairs: list[tuple[dict, dict]] = []
    _drilled(*(_top_layer(r) for r in roots), limit, pairs)
    assert len(pairs) == {None: 115, 10: 188, 4: 201}[limit]
    res = compare(*(str(d) for d in dirs), enable_operator_compare=True, enable_memory_compare=True,
                  disable_module=True, **({} if limit is None else {"max_kernel_num": limit}))
    detail = [[_cell(v) for v in r] for r in res.sheet("OperatorCompare").astype(object).values.tolist()]
    want = []
    for n, (b, c) in enumerate(pairs, start=1):
        bus, cus = float(_device_ns(b) / 1000), float(_device_ns(c) / 1000)
        want.append([n, b["name"], bus, c["name"], cus, round(cus - bus, 2), _ratio(bus, cus)])
    assert [[r[0], r[1], r[5], r[6], r[10], r[11], r[12]] for r in detail] == want
    stat = [[_cell(v) for v in r] for r in res.sheet("OperatorCompareStatistic").astype(object).values.tolist()]
    sides = [_by_name([p[i] for p in pairs]) for i in (0, 1)]
    rows = []
    for name in list(sides[0]) + [k for k in sides[1] if k not in sides[0]]:
        (b, nb), (c, nc) = (side.get(name, (Decimal(0), 0)) for side in sides)
        rows.append([name, float(b), nb, float(c), nc, round(float(c) - float(b), 2), _ratio(float(b), float(c))])
    rows.sort(key=lambda r: -r[5])  # stable
    assert stat == [[n, *r] for n, r in enumerate(rows, start=1)]
    # the memory sheets pair the same ops (§5.2): each op's records and its descendants'
    memory = [[_cell(v) for v in r] for r in res.sheet("MemoryCompare").astype(object).values.tolist()]
    sizes = [[float(sum((k for k, _ in _memory_of(op)), Decimal(0))) for op in p] for p in pairs]
    assert [[r[1], r[5], r[6], r[10]] for r in memory] == [[b["name"], kb, c["name"], kc]
                                                         for (b, c), (kb, kc) in zip(pairs, sizes, strict=True)]
    rows = _memory_statistic([p[0] for p in pairs], [p[1] for p in pairs])
    got = [[_cell(v) for v in r] for r in res.sheet("MemoryCompareStatistic").astype(object).values.tolist()]
    assert len(got) == {None: 35, 10: 48, 4: 48}[limit]
    assert got == [[n, *r] for n, r in enumerate(rows, start=1)]
    if limit is None:  # the oracle without the option: the original's sheet, to its float sums' noise
        ref = read_xlsx(reference_outputs / NPU_TEXT / "performance_comparison_result.xlsx",
                        sheet_name="MemoryCompareStatistic", header=2).astype(object).values.tolist()
        assert [r[1] for r in ref] == [r[0] for r in rows]
        for r, w in zip(ref, rows, strict=True):
            assert [_cell(v) for v in r[2:]] == pytest.approx(w[1:], rel=1e-12, abs=1e-9), w[0]


# ----------------------------------------------------------------------------- a DB export's step, by SQL

OP_TYPE = 50001  # ENUM_API_TYPE "op" of the samples
DB_L1, DB_L2 = (Path(__file__).parent / "data" / "db" / side / "ascend_pytorch_profiler_0.db" for side in ("l1", "l2"))


def _db_step(db: Path, step: int) -> tuple[int, int]:
    ((start, end),) = sql(db, "SELECT startNs, endNs FROM STEP_TIME WHERE id = ?", (step,))
    return start, end


def _db_step_kernels(db: Path, step: int) -> dict[tuple[str, str], list[Decimal]]:
    """(op type, input shapes) -> us of the compute tasks starting in the step's STEP_TIME range (reference-2 §6.1,
    §9), grouped by type, then shapes, in task start order."""
    lo, hi = _db_step(db, step)
    by_type: dict[str, dict[str, list[Decimal]]] = {}
    for op_type, shapes, ns in sql(db, """SELECT ty.value, sh.value, t.endNs - t.startNs FROM COMPUTE_TASK_INFO c
                                          JOIN TASK t ON t.globalTaskId = c.globalTaskId
                                          JOIN STRING_IDS ty ON ty.id = c.opType
                                          JOIN STRING_IDS sh ON sh.id = c.inputShapes
                                          WHERE t.startNs BETWEEN ? AND ? ORDER BY t.startNs, t.rowid""", (lo, hi)):
        by_type.setdefault(op_type, {}).setdefault(shapes, []).append(Decimal(ns) / 1000)
    return {(t, s): durs for t, shapes in by_type.items() for s, durs in shapes.items()}


def _db_step_apis(db: Path, step: int) -> dict[str, list[int]]:
    """name -> [Σ dur ns, Σ self ns, calls] of a DB export's ApiCompare rows at ``step`` (reference-2 §7, §9): the
    op rows of PYTORCH_API starting in the STEP_TIME range, by start, nested by the cursor walk of §2.2, the
    top-level ProfilerStep# replaced by its children, then breadth-first; one call per row (docs/differences.md,
    "DB torch ops: one row per API call")."""
    lo, hi = _db_step(db, step)
    rows = sql(db, f"""SELECT CAST(p.startNs AS INTEGER), CAST(p.endNs AS INTEGER), s.value FROM PYTORCH_API p
                       JOIN STRING_IDS s ON s.id = p.name WHERE p.type = {OP_TYPE}
                       AND CAST(p.startNs AS INTEGER) BETWEEN ? AND ? ORDER BY 1, p.rowid""", (lo, hi))
    root: dict[str, Any] = {"kids": []}
    cur, up = root, {}
    for start, end, name in rows:
        while cur is not root and start > cur["end"]:
            cur = up[id(cur)]
        node = {"name": name, "dur": end - start, "end": end, "kids": []}
        cur["kids"].append(node)
        up[id(node)], cur = cur, node
    return _api_tally([k for t in root["kids"] for k in (t["kids"] if t["name"].startswith("ProfilerStep#") else [t])])


@pytest.mark.parametrize("base_step", [50, 51])
def test_db_step_kernel_kernel_type_and_api_compare_by_sql(tmp_path: Path, base_step: int) -> None:
    """A DB export limits KernelCompare and KernelTypeCompare to the compute tasks starting in the step and
    ApiCompare to the step's ops (reference-2 §6.1, §6.2, §7, §9); every sample holds one step. The level-1 DB
    excerpt (tests/data/db) cut in two steps where Optimizer.zero_grad starts (test_injected_regressions'
    ``_db_steps_split``: STEP_TIME and the ProfilerStep# rows), at step 50 or 51 against the level-2 excerpt's
    step 50: every cell of the three sheets by SQL (groups, half-up totals and the Avg of the rounded total; each
    type's five figures, the rows by Diff Total Ratio; names breadth-first, ms, self time, calls; the ratios of
    the rounded cells)."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(DB_L1, db)
    ((cut,),) = sql(db, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                        "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    _db_steps_split(db, cut)
    res = compare(str(db), str(DB_L2), enable_kernel_compare=True, enable_api_compare=True, base_step=base_step,
                  comparison_step=50)
    base, comp = _db_step_kernels(db, base_step), _db_step_kernels(DB_L2, 50)
    # 187 compute tasks a side: 67 before the cut, 120 from it
    assert [sum(map(len, side.values())) for side in (base, comp)] == [67 if base_step == 50 else 120, 187]
    want = []
    for n, key in enumerate(list(base) + [k for k in comp if k not in base], start=1):
        b, c = _kernel_cells(base.get(key)), _kernel_cells(comp.get(key))
        want.append([n, *key, *b, *c, _ratio(b[0], c[0]), _ratio(b[1], c[1])])
    got = [[_cell(v) for v in r] for r in res.sheet("KernelCompare").astype(object).values.tolist()]
    assert [r[:3] for r in got] == [r[:3] for r in want]
    assert got == want
    # KernelTypeCompare, built from the step's compute tasks too (§6.2): per (op type, task type) by SQL
    types = []
    for path, step in ((db, base_step), (DB_L2, 50)):
        lo, hi = _db_step(path, step)
        types.append({(op, task): [total / 1000, total / 1000 / n, top / 1000, low / 1000, n]
                      for op, task, n, total, top, low in sql(path, """
                          SELECT ty.value, tt.value, count(*), sum(t.endNs - t.startNs), max(t.endNs - t.startNs),
                                 min(t.endNs - t.startNs) FROM COMPUTE_TASK_INFO c
                          JOIN TASK t ON t.globalTaskId = c.globalTaskId JOIN STRING_IDS ty ON ty.id = c.opType
                          JOIN STRING_IDS tt ON tt.id = c.taskType WHERE t.startNs BETWEEN ? AND ?
                          GROUP BY ty.value, tt.value""", (lo, hi))})
    kt = compare(str(db), str(DB_L2), enable_kernel_compare=True, use_kernel_type=True, base_step=base_step,
                 comparison_step=50).sheet("KernelTypeCompare")
    assert len(kt) == len(types[0].keys() | types[1].keys())
    for row in kt.astype(object).values.tolist():
        b, c = (side.get((row[1], row[2]), [0.0, 0.0, 0.0, 0.0, 0]) for side in types)
        assert row[3:13] == pytest.approx(b + c, rel=1e-12), row[1:3]
        assert [_cell(v) for v in row[13:]] == [_ratio(b[0], c[0]), _ratio(b[1], c[1])], row[1:3]
    assert kt["Diff Total Ratio"].astype(float).tolist() == sorted(kt["Diff Total Ratio"].astype(float), reverse=True)
    apis = [_db_step_apis(db, base_step), _db_step_apis(DB_L2, 50)]
    # 859 op rows a side but the step marker(s): 213 before the cut, 646 from it
    assert [sum(r[2] for r in side.values()) for side in apis] == [213 if base_step == 50 else 646, 859]
    want = _api_rows(*apis)
    got = [[_cell(v) for v in r] for r in res.sheet("ApiCompare").astype(object).values.tolist()]
    assert [r[:2] for r in got] == [r[:2] for r in want]
    assert got == want


#: TASK types that are kernels themselves, left out of a DB export's E2E task span (reference-1 §7.3.6)
KERNEL_TASKS = ("KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV", "PROFILING_ENABLE",
                "PROFILING_DISABLE")
TOP_ROWS = ("Computing Time", "Uncovered Communication Time", "Free Time", "E2E Time")


def _db_step_overall(db: Path, step: int) -> dict[str, tuple[int, int | str]]:
    """Index -> (ns, Number) of a DB export's four top OverallMetrics rows at ``step`` by SQL and plain interval
    arithmetic (reference-1 §7.1, §7.3): the compute tasks and communication ops starting in the STEP_TIME
    range; computing = |∪ compute tasks| (Number: the tasks); uncovered = |∪ (compute tasks, communication
    ops)| - computing; E2E from the earlier of the busy span's start and the first other task's to the later of
    their ends; free = E2E - computing - uncovered."""
    lo, hi = _db_step(db, step)
    compute = sql(db, """SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId =
                         c.globalTaskId WHERE t.startNs BETWEEN ? AND ?""", (lo, hi))
    comm = sql(db, "SELECT startNs, endNs FROM COMMUNICATION_OP WHERE startNs BETWEEN ? AND ?", (lo, hi))
    other = sql(db, f"""SELECT t.startNs, t.endNs FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType
                        WHERE t.startNs BETWEEN ? AND ? AND s.value NOT IN ({', '.join('?' * len(KERNEL_TASKS))})""",
                (lo, hi, *KERNEL_TASKS))
    busy = union(compute + comm)
    computing = sum(e - s for s, e in union(compute))
    uncovered = sum(e - s for s, e in busy) - computing
    e2e = max([busy[-1][1]] + [e for _, e in other]) - min([busy[0][0]] + [s for s, _ in other])
    return {"Computing Time": (computing, len(compute)), "Uncovered Communication Time": (uncovered, "/"),
            "Free Time": (e2e - computing - uncovered, "/"), "E2E Time": (e2e, "/")}


@pytest.mark.parametrize("base_step", [50, 51])
def test_db_step_overall_metrics_by_sql(reference_outputs: Path, tmp_path: Path, base_step: int) -> None:
    """A DB export limits the time breakdown to the step (reference-1 §7.1, where a text export's covers the whole
    profile); the split level-1 DB excerpt's step 50 or 51 against the level-2 excerpt's step 50: the four top
    rows of OverallMetrics (Duration, Duration Ratio of the step's E2E, Number, Diff, Diff Ratio) by SQL
    (``_db_step_overall``), which on the unsplit excerpts gives the original's pair-3 rows. Before, a DB step's
    breakdown was pinned on its E2E and the cells a planted change moved (and on copies whose one step covers
    the whole run)."""
    for side, path in ((0, DB_L1), (1, DB_L2)):
        ref = read_xlsx(reference_outputs / NPU_DB / "performance_comparison_result.xlsx", sheet_name="OverallMetrics",
                        header=2).set_index("Index")
        sfx = ".1" if side else ""
        for index, (ns, number) in _db_step_overall(path, 50).items():
            assert (ns / 1e6, number) == (pytest.approx(ref.loc[index, "Duration(ms)" + sfx], abs=1e-9),
                                          ref.loc[index, "Number" + sfx]), index
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(DB_L1, db)
    ((cut,),) = sql(db, "SELECT CAST(p.startNs AS INTEGER) FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name "
                        "WHERE s.value LIKE 'Optimizer.zero_grad#%'")
    _db_steps_split(db, cut)
    sides = [_db_step_overall(db, base_step), _db_step_overall(DB_L2, 50)]
    sheet = compare(str(db), str(DB_L2), enable_profiling_compare=True, base_step=base_step,
                    comparison_step=50).sheet("OverallMetrics").astype(object).set_index("Index")
    e2e = [side["E2E Time"][0] for side in sides]
    for index in TOP_ROWS:
        (b, nb), (c, nc) = sides[0][index], sides[1][index]
        want = [b / 1e6, b / e2e[0], nb, c / 1e6, c / e2e[1], nc, round(c / 1e6 - b / 1e6, 2), _ratio(b, c)]
        got = [_cell(v) for v in sheet.loc[index].tolist()]
        assert [g for g in got if isinstance(g, str)] == [w for w in want if isinstance(w, str)], index
        assert [g for g in got if not isinstance(g, str)] == pytest.approx(
            [w for w in want if not isinstance(w, str)], rel=1e-12), index
    # step 50 (the forward) holds no collective; step 51 all four all-reduces (98.07 ms uncovered)
    assert (e2e[0], sides[0]["Uncovered Communication Time"][0]) == (
        (29_692_613, 0) if base_step == 50 else (107_131_340, 98_071_947))
