"""OperatorCompare's Kernel Details lines of HCCL ops carry no input shapes (docs/differences.md, "HCCL ops take no
input shapes in Kernel Details"): reference-2 §2.1 gives each linked kernel the Input Shapes of the kernel_details.csv
row starting at its instant, but the original looks them up for the Ascend Hardware lane's kernels alone, and so do
we. Data: msinsight's text level-1 export (reference pair 8b's comparison side)."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

from refpairs import PAIRS

from msprof_compare.api import compare


def _lines(cell: object) -> list[str]:
    """A Kernel Details cell's lines without their duration (ours is to the ns, the original's a float of us)."""
    return [ln.rsplit(" [duration", 1)[0] for ln in str(cell).split("\n") if ln] if isinstance(cell, str) else []


def test_an_hccl_op_line_takes_no_input_shapes_at_its_kernel_details_rows_instant(samples, reference_outputs):
    """The export's four all-reduce ops are HCCL ops linked to AccumulateGrad; kernel_details.csv lists each of them
    too (Input Shapes N/A), and hcom_allReduce__586_1_1 starts at the same instant there as on the trace's HCCL lane
    (1736408883811334.844 us, read by hand), so a lookup by instant would give its line ", [input shapes: N/A]". Its
    line, as each HCCL op's, is "name, None, None" (no task id, no task type, no shapes), as in the original's
    workbook of pair 8b, while the compute kernels of the same cells keep theirs."""
    base, comp = PAIRS["8b-npu-traceview-file-vs-dir"]
    out = samples / comp / "ASCEND_PROFILER_OUTPUT"
    with open(out / "kernel_details.csv", newline="", encoding="utf-8") as f:
        kd = {r["Name"]: r for r in csv.DictReader(f) if r["Name"].startswith("hcom_")}
    with open(out / "trace_view.json", encoding="utf-8") as f:
        events = json.load(f, parse_float=Decimal)
    hccl = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"] in ("HCCL", "Communication")}
    ops = {e["name"]: Decimal(e["ts"]) for e in events if e.get("ph") == "X" and e["pid"] in hccl
           and e["name"].startswith("hcom_")}
    names = [f"hcom_allReduce__586_{i}_1" for i in range(4)]
    assert sorted(ops) == sorted(kd) == names
    assert {kd[n]["Input Shapes"] for n in names} == {"N/A"}
    same = [n for n in names if Decimal(kd[n]["Start Time(us)"].strip()) == ops[n]]
    assert same == ["hcom_allReduce__586_1_1"]

    res = compare(str(samples / base), str(samples / comp), enable_operator_compare=True)
    ours = [ln for cell in res.sheet("OperatorCompare")["Kernel Details.1"] for ln in _lines(cell)]
    assert sorted(ln for ln in ours if ln.startswith("hcom_")) == [f"{n}, None, None" for n in names]
    # the line docs/differences.md quotes, its duration too: the trace's 2281.1055625 us to the ns (half to even),
    # shown to 0.001 us (the original's cell keeps the float)
    dur = next(e["dur"] for e in events if e.get("ph") == "X" and e["name"] == names[1])
    ns = int((dur * 1000).to_integral_value(rounding="ROUND_HALF_EVEN"))
    assert (dur, ns) == (Decimal("2281.1055625"), 2_281_106)
    line = f"{names[1]}, None, None [duration: {Decimal(ns) / 1000:.3f}]"
    assert line in [ln for cell in res.sheet("OperatorCompare")["Kernel Details.1"] if isinstance(cell, str)
                    for ln in cell.split("\n")]
    assert f"`{line}`" in (Path(__file__).parents[1] / "docs" / "differences.md").read_text(encoding="utf-8")
    # the compute kernels of those cells keep theirs: the shapes were looked up, just not for an HCCL op
    cells = [c for c in res.sheet("OperatorCompare")["Kernel Details.1"] if isinstance(c, str) and "hcom_" in c]
    assert cells and all("[input shapes: " in c for c in cells)
    # the original's workbook: the same lines
    import openpyxl

    wb = openpyxl.load_workbook(reference_outputs / "8b-npu-traceview-file-vs-dir/performance_comparison_result.xlsx",
                                read_only=True)
    try:
        ref = [ln for row in wb["OperatorCompare"].iter_rows(min_row=2, values_only=True) for ln in _lines(row[9])]
    finally:
        wb.close()
    assert sorted(ln for ln in ref if ln.startswith("hcom_")) == [f"{n}, None, None" for n in names]
