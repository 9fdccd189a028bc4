"""Native xlsx charts and the Summary sheet layout (report/charts.py)."""

from __future__ import annotations

import logging
import re
import zipfile
from decimal import Decimal
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import xlsxwriter

from msprof_compare.compare.table import Column, Sheet
from msprof_compare.report import charts

NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


@pytest.fixture(scope="module")
def pair1():
    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
    if not (root / NPU_L1).is_dir():
        pytest.skip("sample data not found")
    from msprof_compare.api import compare

    return compare(str(root / NPU_L1), str(root / NPU_L2))


def _chart_parts(path: str) -> dict[str, str]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n).decode() for n in z.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", n)}


def _expected_chart_count(result) -> int:
    n = 0
    for s in result.sheets:
        if s.name in ("Summary", "OverallMetrics"):
            n += 1
        elif s.name in charts.STAT_SPECS and charts.regressions(s) is not None:
            n += 1
    return n


def test_workbook_has_native_charts(pair1, tmp_path):
    path = pair1.to_excel(str(tmp_path))
    parts = _chart_parts(path)
    assert len(parts) == _expected_chart_count(pair1) >= 3
    waterfall = next(x for x in parts.values() if "E2E time: base to comparison" in x)
    # invisible base series (no fill, no line) + increase / decrease / total
    assert waterfall.count("<c:ser>") == 4 and "<c:spPr><a:noFill/><a:ln><a:noFill/></a:ln></c:spPr>" in waterfall
    assert "<c:grouping val=\"stacked\"/>" in waterfall
    overall = next(x for x in parts.values() if "Time by category" in x)
    assert overall.count("<c:ser>") == 2 and "Summary" in overall  # base vs comparison, data on Summary
    with zipfile.ZipFile(path) as z:
        assert not [n for n in z.namelist() if n.startswith("xl/media/")]  # no images


def test_regression_bars_start_at_zero(tmp_path):
    """The bars of a statistic sheet's top regressions are all above 0 and measured from 0: with close values
    (timesformer H100 vs MI300's top 20 modules, 1.25 to 1.37 ms) spreadsheets start an automatic axis near the
    smallest (LibreOffice at 1.18 ms), and the 20th bar looked a third of the first. Rows: 20 operators that
    grew by 1.37 down to 1.256 ms."""
    rows = [[i + 1, f"op{i}", 100.0, 1, 101.37 - 0.006 * i, 1] for i in range(20)]
    cols = [Column("Top", "int", 10), Column("Operator Name", "bold", 30),
            Column("Base Device Duration(ms)", "float", 25), Column("Base Operator Number", "int", 25),
            Column("Comparison Device Duration(ms)", "float", 30), Column("Comparison Operator Number", "int", 30)]
    sheet = Sheet("OperatorCompareStatistic", cols, pd.DataFrame(rows), (2, 3), (4, 5))
    path = tmp_path / "w.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    state = charts._state(wb)
    state.summary, state.summary_name, state.next_row = wb.add_worksheet("Summary"), "Summary", 10
    charts._statistic(wb, wb.add_worksheet(sheet.name), sheet)
    wb.close()
    (chart,) = _chart_parts(str(path)).values()
    assert "Top 20 regressions" in chart
    value_axis = re.search(r"<c:valAx>.*?</c:valAx>", chart, re.S).group(0)
    assert '<c:min val="0"/>' in value_axis

def test_charts_add_no_cells_to_comparator_sheets(pair1, tmp_path):
    path = pair1.to_excel(str(tmp_path))
    for name in pair1.sheet_names[1:]:
        df = pd.read_excel(path, sheet_name=name, header=2)
        expected = pair1.sheet(name)
        assert len(df) == len(expected), name
        assert list(df.columns) == list(expected.columns), name


def test_summary_sheet_layout(pair1, tmp_path):
    path = pair1.to_excel(str(tmp_path))
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames[0] == "Summary"
    ws = wb["Summary"]
    wf = pair1.waterfall
    assert [c.value for c in ws[3][:6]] == ["Step", "Base(ms)", "Comparison(ms)", "Delta(ms)", "Cumulative(ms)",
                                           "Share of E2E Diff"]
    assert [ws.cell(4 + i, 1).value for i in range(len(wf))] == wf["Step"].tolist()
    assert ws.cell(4, 2).value == pytest.approx(136.581009)   # reference OverallMetrics E2E (pair 1)
    col_a = [c.value for c in ws["A"]]
    title = next(i for i, v in enumerate(col_a) if isinstance(v, str) and v.startswith("Top Contributors"))
    names = col_a[title + 2: title + 2 + len(pair1.contributors)]
    assert names == pair1.contributors["Name"].tolist()
    assert ws.cell(title + 3, 4).value == pytest.approx(float(pair1.contributors["Diff(ms)"].iloc[0]))
    assert any(str(v).startswith("Validity checks (warn: are both sides the same workload?") for v in col_a)
    chart_data = col_a.index("Chart data")
    steps = col_a.index("Step", chart_data)
    # helper rows: Invisible / Increase / Decrease / Total reproduce the waterfall levels
    for i, row in enumerate(wf.itertuples(index=False)):
        inv, inc, dec, tot = (ws.cell(steps + 2 + i, j).value for j in range(2, 6))
        if row.Category in ("start", "end"):
            assert tot == pytest.approx(float(row[5])) and inv == inc == dec == 0
        else:
            d = float(row[4])
            assert inc == pytest.approx(max(d, 0)) and dec == pytest.approx(max(-d, 0))
            assert inv == pytest.approx(min(float(row[5]) - d, float(row[5])))


def test_validity_checks_are_typed_cells(pair1, tmp_path, monkeypatch):
    """Rates and counts of the validity table are numbers (they were text such as "100.0%", which
    spreadsheets flag as numbers stored as text); a warned row is filled red, its figures still numbers."""
    guards = pair1.guards.copy()
    guards.loc[len(guards)] = ["operator match rate", "warn", 0.25, 0.5, "synthetic warned row"]
    sheet = next(s for s in pair1.sheets if s.name == "Summary")
    monkeypatch.setattr(sheet, "guards", guards)
    ws = openpyxl.load_workbook(pair1.to_excel(str(tmp_path)))["Summary"]
    col_a = [c.value for c in ws["A"]]
    first = col_a.index("Check") + 1  # 0-based index of the first check's row = its 1-based row - 1
    rows = {ws.cell(first + 1 + i, 1).value + ("!" if ws.cell(first + 1 + i, 2).value == "warn" else ""):
            [ws.cell(first + 1 + i, j) for j in (3, 4)] for i in range(len(guards))}
    # pair 1: every operator matched; of the 10 heaviest, 8 have dims on both sides (the two _foreach_add ops
    # record tensor lists without dims); one ProfilerStep each
    for check, values, fmt in (("operator match rate", [1.0, 1.0], "0.0%"),
                               ("input shapes of top operators", [8, 8], "0"),
                               ("step count", [1, 1], "0"), ("NPU export kind", ["text", "text"], "General"),
                               ("operator match rate!", [0.25, 0.5], "0.0%")):
        assert [c.value for c in rows[check]] == values, check
        assert {c.number_format for c in rows[check]} == {fmt}, check
        assert {c.data_type for c in rows[check]} == ({"s"} if fmt == "General" else {"n"}), check
    assert [c.value for c in rows["world size"]] == ["at least 8", "at least 8"]  # the ranks of the HCCL tasks
    assert {c.data_type for c in rows["world size"]} == {"s"}
    # words wrap in the Base / Comparison columns, 16 and 14 characters wide (a long setting was cut at the
    # cell edge), a word too wide for its column after its separators: LibreOffice broke the setting's
    # "ACL_AICORE_PIPE_U" / "TILIZATION", Excel would too. Arial's widths at 11 points: "ACL_AICORE_" 101.1 px,
    # within the 16.71-character column's 16.71 x 7 - 5 = 112 px, over the 14.71-character one's 98
    settings = rows["NPU profiler settings"]
    assert [c.value for c in settings] == ["Level1 / ACL_AICORE_\nPIPE_\nUTILIZATION",
                                           "Level2 / ACL_\nAICORE_\nPIPE_\nUTILIZATION"]
    assert [c.value.replace("\n", "") for c in settings] == [f"Level{i} / ACL_AICORE_PIPE_UTILIZATION" for i in (1, 2)]
    assert {c.alignment.wrap_text for c in settings + rows["NPU export kind"]} == {True}
    assert {c.alignment.wrap_text for c in rows["step count"] + rows["operator match rate"]} == {None}
    assert ws.cell(first + 1, 5).alignment.wrap_text is True  # Detail wraps within its merged cells
    # the row is as tall as its wrapped words need (LibreOffice's headless conversion keeps the default
    # height): four lines of 12 characters for the Comparison cell, unless the Detail (E:G, 16 + 18 + 8.43
    # characters, lines of 40) needs more
    for check in ("NPU profiler settings", "NPU export kind"):
        row = rows[check][0].row
        detail = charts._wrapped_lines(ws.cell(row, 5).value, 42.43)
        assert ws.row_dimensions[row].height == 15 * max(4 if check == "NPU profiler settings" else 1, detail)
    assert ws.row_dimensions[rows["step count"][0].row].height is None  # its Detail: 34 characters
    assert {c.fill.fgColor.rgb for c in rows["operator match rate!"]} == {"FFFFC7CE"}
    assert {c.fill.fgColor.rgb for c in rows["operator match rate"]} != {"FFFFC7CE"}


def test_summary_sheet_freezes_no_header_of_one_table(pair1, tmp_path):
    """Summary stacks several tables (waterfall, contributors, validity checks, chart data) with headers of
    their own: a frozen row 3 kept the waterfall's "Step | Base(ms) | ... | Share of E2E Diff" above the
    validity checks ("Check | Status | Base | Comparison | Detail") and every table below while scrolling.
    The comparator sheets, one table each, keep their frozen header rows (docs/differences.md), and the columns
    left of the base caption, which name a row (the reference workbook's captions start at B1, F1, E1, C1, C1 and
    D1), so a diff column scrolled into view keeps its name beside it; not a lone Order Id (B1 captions)."""
    path = pair1.to_excel(str(tmp_path))
    wb = openpyxl.load_workbook(path)
    summary = wb["Summary"]
    headers = [[c.value for c in row[:2]] for row in summary.iter_rows()
               if row[0].value in ("Step", "Name", "Check")]
    assert len(headers) >= 4  # the waterfall, contributors, checks and chart-data tables each have a header
    assert summary.freeze_panes is None
    assert {n: wb[n].freeze_panes for n in wb.sheetnames[1:]} == {
        "OverallMetrics": "B4", "CommunicationCompare": "A4", "ModuleCompareStatistic": "F4", "ModuleCompare": "E4",
        "MemoryCompareStatistic": "C4", "MemoryCompare": "A4", "ApiCompare": "C4", "KernelCompare": "D4"}


def test_summary_step_figures_show_the_microsecond(pair1, tmp_path):
    """The waterfall's ms columns show three decimals, as the console's waterfall and verdict do: at two, NPU pair 1's
    Other Computing step (0.005539 -> 0.005685 ms) read 0.01 on both sides. The share column is a percentage."""
    path = pair1.to_excel(str(tmp_path))
    ws = openpyxl.load_workbook(path)["Summary"]
    header = next(r for r in ws.iter_rows(min_row=3, max_row=3))
    assert [c.value for c in header[:6]] == ["Step", "Base(ms)", "Comparison(ms)", "Delta(ms)", "Cumulative(ms)",
                                            "Share of E2E Diff"]
    rows = list(ws.iter_rows(min_row=4, max_row=6))  # Base E2E, then the first steps
    assert rows[0][0].value == "Base E2E"
    for row in rows:
        figures = [c for c in row[1:5] if c.value is not None]
        assert figures and {c.number_format for c in figures} == {"#,##0.000"}, row[0].value
    assert rows[1][5].number_format == "0.00%"


def test_charts_keep_their_size_when_a_filter_hides_rows(pair1, tmp_path):
    """The regression charts sit beside the rows of ApiCompare, KernelCompare and the statistic sheets, whose
    autofilter README suggests (a diff column > 0). An anchor that sizes with its cells (xlsxwriter's default:
    no ``editAs``) shrinks the chart by every row the filter hides under it, down to nothing; a chart that moves
    but keeps its size (``editAs="oneCell"``) stays readable."""
    path = pair1.to_excel(str(tmp_path))
    with zipfile.ZipFile(path) as z:
        drawings = {n: z.read(n).decode() for n in z.namelist() if re.fullmatch(r"xl/drawings/drawing\d+\.xml", n)}
    anchors = [a for x in drawings.values() for a in re.findall(r"<xdr:twoCellAnchor[^>]*>", x)]
    assert len(anchors) == _expected_chart_count(pair1) >= 5  # the API and kernel sheets' charts among them
    assert anchors == ['<xdr:twoCellAnchor editAs="oneCell">'] * len(anchors)


def test_constant_memory_workbook_keeps_charts(pair1, tmp_path, monkeypatch):
    from msprof_compare.report import excel

    monkeypatch.setattr(excel, "CONSTANT_MEMORY_ROWS", 0)
    path = pair1.to_excel(str(tmp_path))
    assert len(_chart_parts(path)) == _expected_chart_count(pair1)
    ws = openpyxl.load_workbook(path)["Summary"]
    assert "Chart data" in [c.value for c in ws["A"]]


def _stat_sheet(rows) -> Sheet:
    cols = [Column(h) for h in ("Top", "Operator Name", "Base Device Duration(ms)", "Base Operator Number",
                                "Comparison Device Duration(ms)", "Comparison Operator Number", "Diff Duration(ms)",
                                "Diff Ratio")]
    return Sheet("OperatorCompareStatistic", cols, pd.DataFrame(rows), (2, 3), (4, 5))


def test_regressions_top_20_positive_only():
    rows = [[i + 1, f"op{i}", 1.0, 1, 1.0 + (i - 5) * 0.5, 1, 0, 1] for i in range(40)]
    top, spec = charts.regressions(_stat_sheet(rows))
    assert spec.unit == "ms" and len(top) == 20
    assert top["Name"].iloc[0] == "op39" and top["Diff"].iloc[0] == pytest.approx(17.0)
    assert (top["Diff"] > 0).all() and top["Diff"].is_monotonic_decreasing
    faster = [[1, "op", 2.0, 1, 1.0, 1, -1.0, 0.5]]
    assert charts.regressions(_stat_sheet(faster)) is None


def test_regression_growth_keeps_the_cells_ns_at_any_size():
    """Two amounts of 100 s in ms (ns precision, 6 decimals) differ by a whole number of ns: the growth is that,
    not the float subtraction's 1e-8-scale noise, which 9 fixed decimals let through at this size."""
    base, comp = 99999999.123456, 100000123.654321  # ms
    assert comp - base != 124.530865  # the float noise this guards against
    top, _ = charts.regressions(_stat_sheet([[1, "op", base, 1, comp, 1, 0, 1]]))
    assert top["Diff"].tolist() == [124.530865]


def test_communication_regressions_are_ops_named_on_either_side():
    """Task rows are parts of their op (no Diff of their own), and an op only the comparison has is
    named from the comparison side (its base name cell is blank)."""
    import numpy as np

    from msprof_compare.compare import communication
    from msprof_compare.compare.table import frame_from_rows

    def fam(ops, **tasks):
        def ns(us):  # side_data's durations: int64 ns
            return (np.array(us, float) * 1000).astype(np.int64)
        return {"ops": ns(ops), "tasks": {k: ns(v) for k, v in tasks.items()}}

    base = {"allreduce": fam([10.0], Notify_Wait=[6.0], Memcpy=[3.0])}
    comp = {"allreduce": fam([14.0], Notify_Wait=[9.0], Memcpy=[4.0]),
            "broadcast": fam([5.0], Notify_Wait=[4.0])}
    rows = communication.comm_rows(base, comp)
    sheet = Sheet("CommunicationCompare", communication.COLUMNS, frame_from_rows(rows, 17), *communication.SPANS)
    top, spec = charts.regressions(sheet)
    assert top.values.tolist() == [["broadcast", 5.0], ["allreduce", 4.0]] and spec.unit == "us"


def test_api_regressions_pair_hip_calls_with_their_cuda_twins():
    """NVIDIA base, AMD comparison: each side holds one runtime's calls, so hipDeviceSynchronize ranked at its
    whole 17.14 ms while cudaDeviceSynchronize (16.27 ms) was a base-only improvement. Twins count together,
    every kernel launch call one (hipExtModuleLaunchKernel with cudaLaunchKernel); a call without a twin keeps its
    own row; one vendor: rows as they are."""
    cols = [Column(h) for h in ("Order Id", "api name", "Total Duration(ms)", "Self Time(ms)", "Avg Duration(ms)",
                                "Calls", "Total Duration(ms)", "Self Time(ms)", "Avg Duration(ms)", "Calls")]

    def sheet(rows):
        return Sheet("ApiCompare", cols, pd.DataFrame(rows), (2, 5), (6, 9))

    rows = [[1, "cudaDeviceSynchronize", 16.27, 0, 0, 1, 0.0, 0, 0, 0],
            [2, "cudaLaunchKernel", 3.06, 0, 0, 1, 0.0, 0, 0, 0],
            [3, "aten::mm", 1.0, 0, 0, 1, 1.5, 0, 0, 1],
            [4, "hipDeviceSynchronize", 0.0, 0, 0, 0, 17.14, 0, 0, 1],
            [5, "hipLaunchKernel", 0.0, 0, 0, 0, 4.08, 0, 0, 1],
            [6, "hipExtModuleLaunchKernel", 0.0, 0, 0, 0, 0.85, 0, 0, 1],
            [7, "hipify_me", 0.0, 0, 0, 0, 0.25, 0, 0, 1]]  # no capital after "hip": no runtime call
    top, _ = charts.regressions(sheet(rows))
    assert top["Name"].tolist() == ["cudaLaunchKernel / hipLaunchKernel / hipExtModuleLaunchKernel",
                                    "cudaDeviceSynchronize / hipDeviceSynchronize", "aten::mm", "hipify_me"]
    assert top["Diff"].tolist() == pytest.approx([1.87, 0.87, 0.5, 0.25])
    same = [[1, "cudaLaunchKernel", 3.0, 0, 0, 1, 3.5, 0, 0, 1], [2, "cudaMalloc", 1.0, 0, 0, 1, 0.5, 0, 0, 1],
            [3, "cudaLaunchKernelExC", 1.0, 0, 0, 1, 0.25, 0, 0, 1]]  # one vendor: launch calls stay apart
    top, _ = charts.regressions(sheet(same))
    assert top.values.tolist() == [["cudaLaunchKernel", 0.5]]


def test_api_regressions_pair_hip_memcpy_with_stream_with_cuda_memcpy_async():
    """PyTorch's synchronous copy (``memcpy_and_sync``) calls cudaMemcpyAsync + cudaStreamSynchronize on CUDA and
    hipMemcpyWithStream on ROCm: a twin by role, not by name. The H100-vs-MI300X TimeSformer traces (tracelens)
    hold 2 cudaMemcpyAsync calls (129.56 ms) against 2 hipMemcpyWithStream calls (96.13 ms), so the ApiCompare
    chart ranked the whole 96.13 ms as the top regression of copies that got 33.43 ms faster."""
    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "tracelens" / "tests" / "traces"
    name = "facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    if not (root / "h100" / name).is_file():
        pytest.skip("sample data not found")
    from msprof_compare.api import compare

    result = compare(str(root / "h100" / name), str(root / "mi300" / name), enable_api_compare=True)
    api = result.sheet("ApiCompare").set_index("api name")
    # the sheet keeps the original's rows, one per name: each side's copies on their own row
    assert api.loc["cudaMemcpyAsync"].iloc[1] == pytest.approx(129.56)  # base Total Duration(ms)
    assert api.loc["hipMemcpyWithStream"].iloc[5] == pytest.approx(96.13)  # comparison Total Duration(ms)
    top, _ = charts.regressions(next(s for s in result.sheets if s.name == "ApiCompare"))
    assert not [n for n in top["Name"] if "Memcpy" in n]  # 129.56 -> 96.13 ms: no regression
    assert top["Name"].iloc[0] == "aten::bmm" and top["Diff"].iloc[0] == pytest.approx(0.83)
    # two AMD runs (SGLang Qwen3-8B decode against prefill+decode, both MI300X): each call keeps its own row, as
    # by name; a twin by role joined hipMemcpyAsync with hipMemcpyWithStream there
    inference = root / "inference"
    amd = compare(str(inference / "sglang_decode/sglang_Qwen3-8B_decode.json.gz"),
                  str(inference / "sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz"),
                  enable_api_compare=True)
    api = amd.sheet("ApiCompare").set_index("api name")
    assert api.loc["hipMemcpyWithStream"].iloc[[1, 5]].tolist() == pytest.approx([463.06, 493.29])
    top, _ = charts.regressions(next(s for s in amd.sheets if s.name == "ApiCompare"))
    memcpy = top[top["Name"].str.contains("Memcpy")]
    assert memcpy["Name"].tolist() == ["hipMemcpyWithStream"] and memcpy["Diff"].tolist() == pytest.approx([30.23])
    # an op of the AMD runs named "cuda..." that is no CUDA runtime call (an annotation, a function: the sheet
    # holds every op) does not make them a cross-vendor pair (found by the session-43 review: it joined the copies)
    import dataclasses

    sheet = next(s for s in amd.sheets if s.name == "ApiCompare")
    extra = sheet.data.iloc[[0]].copy()
    extra.iloc[0, 1] = "cudagraph_replay"
    odd = dataclasses.replace(sheet, data=pd.concat([sheet.data, extra], ignore_index=True))
    top, _ = charts.regressions(odd)
    memcpy = top[top["Name"].str.contains("Memcpy")]
    assert memcpy["Name"].tolist() == ["hipMemcpyWithStream"] and memcpy["Diff"].tolist() == pytest.approx([30.23])


def test_api_regressions_count_each_vendors_kernel_launch_calls_as_one():
    """A library launches its kernels through another runtime call on each vendor (the GEMMs: cuBLAS's
    cudaLaunchKernelExC on the H100, hipBLASLt's hipExtModuleLaunchKernel on the MI300X; aotriton's attention
    hipModuleLaunchKernel), so ranked by name the AMD side's extra launch calls were regressions of their whole
    time. The tracelens TimeSformer pair ranked hipExtModuleLaunchKernel (0.68 ms) second, where its launch calls
    together took less time than the H100's; the Qwen pair listed three launch rows (+2.01 ms) for a +0.98 ms
    change. The expected figures are the raw traces' launch-call durations, per name rounded as ApiCompare's
    cells (2 decimals of a ms), summed per side."""
    import gzip
    import json

    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "tracelens" / "tests" / "traces"
    from msprof_compare.api import compare

    launches = {"cudaLaunchKernel", "cudaLaunchKernelExC", "hipLaunchKernel", "hipExtModuleLaunchKernel",
                "hipModuleLaunchKernel"}  # the runtime launch calls of these traces

    def launch_ms(path: Path) -> dict[str, float]:
        with gzip.open(path, "rt") as f:
            events = json.load(f)["traceEvents"]
        us: dict[str, float] = {}
        for e in events:
            if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and e["name"] in launches:
                us[e["name"]] = us.get(e["name"], 0.0) + e["dur"]
            if e.get("ph") == "X" and e.get("cat") == "cuda_driver" and e["name"].startswith("cuLaunch"):
                us["driver"] = us.get("driver", 0.0) + e["dur"]  # launches through the driver: no sheet row
        return {n: round(v / 1000, 2) for n, v in us.items()}

    for name, grew in (("facebook_timesformer-base-finetuned-k400__1016002.json.gz", False),
                       ("Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", True)):
        h100, mi300 = root / "h100" / name, root / "mi300" / name
        if not (h100.is_file() and mi300.is_file()):
            pytest.skip("sample data not found")
        base, comp = launch_ms(h100), launch_ms(mi300)
        # cuLaunchKernel is a driver call: no sheet row, joined with the runtime's launch calls (0.01 and 0.18 ms)
        assert set(base) == {"cudaLaunchKernel", "cudaLaunchKernelExC", "driver"}
        assert {"hipLaunchKernel", "hipExtModuleLaunchKernel"} <= set(comp)
        diff = round(sum(comp.values()) - sum(base.values()), 2)
        assert (diff > 0) is grew
        result = compare(str(h100), str(mi300), enable_api_compare=True)
        top, _ = charts.regressions(next(s for s in result.sheets if s.name == "ApiCompare"))
        launch = top[top["Name"].str.contains("LaunchKernel")]
        if grew:  # Qwen: 4.10 -> 5.07 ms, one row naming every launch call of both sides, the driver's last
            assert launch["Name"].tolist() == [" / ".join([*(n for n in api_order(result) if n in launches),
                                                           "cuLaunchKernel"])]
            assert launch["Diff"].tolist() == pytest.approx([diff]) and diff == pytest.approx(0.97)
        else:  # TimeSformer: 2.67 -> 2.26 ms, no launch regression
            assert launch.empty and diff == pytest.approx(-0.41)


def _gz_launches(path: Path) -> dict[str, tuple[int, Decimal]]:
    """{launch call: (calls, us)} of a gzip Kineto trace's runtime and driver launch calls, from the raw events
    (the json module, Decimal durations): the oracle of the launch row's tests."""
    import gzip
    import json

    with gzip.open(path, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    out: dict[str, tuple[int, Decimal]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "LaunchKernel" in e["name"]:
            n, us = out.get(e["name"], (0, Decimal(0)))
            out[e["name"]] = (n + 1, us + Decimal(e["dur"]))
    return out


def test_api_regressions_count_the_h100s_driver_launches_with_its_runtime_launches():
    """The bundled pair (sample_data/): the H100 trace launches 22 of its 60 kernels through the CUDA driver
    (cuLaunchKernel, cat cuda_driver, 136.221 us), a call ApiCompare has no row of, the MI300X all 60 through the
    HIP runtime. Its runtime launch calls alone (0.16 + 0.03 ms) against the MI300X's (0.13 + 0.11 + 0.02 ms) ranked
    a +0.07 ms launch regression first among the API regressions, where the launches took 0.071 ms less: 324.734 us
    against 253.343 us, summed here from the raw events. The driver's launches join the launch row, which leaves
    the ranking (-0.07 ms); the sheet keeps its rows."""

    from msprof_compare.api import compare

    repo = Path(__file__).resolve().parents[1]
    h100, mi300 = repo / "sample_data" / "bert-small_h100.json.gz", repo / "sample_data" / "bert-small_mi300.json.gz"

    base, comp = _gz_launches(h100), _gz_launches(mi300)
    assert {k: v[0] for k, v in base.items()} == {"cudaLaunchKernel": 34, "cuLaunchKernel": 22,
                                                  "cudaLaunchKernelExC": 4}
    assert sum(v[0] for v in comp.values()) == 60 and not any(k.startswith("cu") for k in comp)
    assert sum(v[1] for v in base.values()) == Decimal("324.734") and sum(v[1] for v in comp.values()) == Decimal(
        "253.343")
    result = compare(str(h100), str(mi300), enable_api_compare=True)
    sheet = next(s for s in result.sheets if s.name == "ApiCompare")
    assert sheet.driver_launches == ({"cuLaunchKernel": (22, int(base["cuLaunchKernel"][1] * 1000))}, {})
    assert "cuLaunchKernel" not in api_order(result)
    top, _ = charts.regressions(sheet)
    assert not top["Name"].str.contains("LaunchKernel").any()
    # the joined row, as the ranking reads it: every name's cells (2 decimals of a ms) added per side
    cells = {n: round(float(us) / 1000, 2) for n, (_, us) in {**base, **comp}.items()}
    assert round(sum(cells[n] for n in comp) - sum(cells[n] for n in base), 2) == -0.07


def test_api_regressions_name_each_driver_launch_call_in_the_launch_row():
    """The tracelens B200 trace launches 221 kernels through the CUDA driver: 220 by cuLaunchKernelEx (1,847.970 us)
    and 1 by cuLaunchKernel (24.750 us), summed here from the raw events. The joined launch row named them all
    cuLaunchKernel, a call the user finds once in the trace; it names each call, and counts only kernel launches
    (a driver call of another name, as cuLaunchHostFunc, launches none). Against the MI300X bert-small trace (all 60
    launches through the HIP runtime) the row's change is the raw cells' (each name's us to 2 decimals of a ms),
    summed per side."""

    from msprof_compare.api import compare

    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "tracelens" / "tests" / "traces"
    b200 = root / "b200" / "eager_trace.json.gz"
    mi300 = root / "mi300" / "gaunernst_bert-small-uncased__1016001.json.gz"
    if not (b200.is_file() and mi300.is_file()):
        pytest.skip("sample data not found")

    base, comp = _gz_launches(mi300), _gz_launches(b200)
    driver = {n: v for n, v in comp.items() if n.startswith("cuLaunch")}
    assert driver == {"cuLaunchKernelEx": (220, Decimal("1847.970")), "cuLaunchKernel": (1, Decimal("24.750"))}
    result = compare(str(mi300), str(b200), enable_api_compare=True)
    sheet = next(s for s in result.sheets if s.name == "ApiCompare")
    assert sheet.driver_launches == ({}, {n: (k, int(us * 1000)) for n, (k, us) in driver.items()})
    top, _ = charts.regressions(sheet)
    launch = top[top["Name"].str.contains("LaunchKernel")]
    runtime = [n for n in api_order(result) if n in base or n in comp]
    assert launch["Name"].tolist() == [" / ".join([*runtime, "cuLaunchKernel", "cuLaunchKernelEx"])]
    cells = {n: round(float(us) / 1000, 2) for n, (_, us) in {**base, **comp}.items()}
    assert launch["Diff"].tolist() == pytest.approx([round(sum(cells[n] for n in comp) - sum(cells[n] for n in base),
                                                           2)])


def test_api_regressions_count_the_drivers_launch_calls_of_every_name():
    """The H200 GPT excerpt (tests/data/kineto) launches 7 kernels through cuLaunchKernelEx (cat cuda_driver), the
    driver's launch call for kernels with launch attributes, beside 4 cudaLaunchKernel calls; the MI300X excerpt
    launches through hipExtLaunchKernel. Every kernel launch call of the driver counts in the side's driver launches
    (count and ns summed here from the raw events), and the launch row of the API regressions, MI300X -> H200,
    joins them: +0.08 ms by the cells (2 decimals of a ms per name and side), where the runtime calls alone read
    +0.01 ms. Between two NVIDIA traces they join nothing and make no row. The row names the driver's call as
    written (cuLaunchKernelEx)."""
    import json
    from collections import defaultdict

    from msprof_compare.api import compare

    data = Path(__file__).parent / "data" / "kineto"
    mi300 = data / "mi300_rccl_generic_excerpt.pt.trace.json"
    h200 = data / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"

    def launches(path: Path) -> dict[tuple[str, str], list]:
        out: dict[tuple[str, str], list] = defaultdict(lambda: [0, Decimal(0)])
        for e in json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)["traceEvents"]:
            if e.get("ph") == "X" and "LaunchKernel" in e.get("name", ""):
                out[(e["cat"], e["name"])][0] += 1
                out[(e["cat"], e["name"])][1] += Decimal(e["dur"])
        return dict(out)

    base, comp = launches(mi300), launches(h200)
    assert {k: v[0] for k, v in base.items()} == {("cuda_runtime", "hipExtLaunchKernel"): 3}
    assert {k: v[0] for k, v in comp.items()} == {("cuda_runtime", "cudaLaunchKernel"): 4,
                                                  ("cuda_driver", "cuLaunchKernelEx"): 7}
    n, us = comp[("cuda_driver", "cuLaunchKernelEx")]
    result = compare(str(mi300), str(h200), enable_api_compare=True)
    sheet = next(s for s in result.sheets if s.name == "ApiCompare")
    assert sheet.driver_launches == ({}, {"cuLaunchKernelEx": (n, int(us * 1000))}) == \
        ({}, {"cuLaunchKernelEx": (7, 65_756)})
    top, _ = charts.regressions(sheet)
    (row,) = [r for r in top.itertuples() if "LaunchKernel" in r.Name]
    cells = [sum(round(float(u) / 1000, 2) for _, u in side.values()) for side in (base, comp)]
    assert row.Name == "hipExtLaunchKernel / cudaLaunchKernel / cuLaunchKernelEx"
    assert row.Diff == round(cells[1] - cells[0], 2) == 0.08
    # two NVIDIA traces join no launch calls, so the driver's are no row of theirs (ApiCompare has none): the
    # bundled H100 trace's 22 (0.14 ms) against the H200's 7 (0.07 ms) is no regression of a call named cuLaunchKernel
    bert = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
    sheet = next(s for s in compare(str(h200), str(bert), enable_api_compare=True).sheets if s.name == "ApiCompare")
    assert [sum(k for k, _ in side.values()) for side in sheet.driver_launches] == [7, 22]
    top, _ = charts.regressions(sheet)
    assert not top["Name"].str.contains("cuLaunch").any()


def test_api_regressions_leave_out_one_vendors_own_calls(tmp_path):
    """The TimeSformer traces, H100 against MI300X (tracelens): ROCm's PyTorch calls hipGetDevicePropertiesR0600 400
    times (168.230 us, summed here from the raw events), a call the CUDA stack never makes, and it ranked second
    among the API regressions, as if an API both sides call had grown. It is left out of the ranking and named in
    the title; the sheet keeps its row. cuDNN's and MIOpen's convolution ops are one op of PyTorch on each vendor
    (aten::cudnn_convolution 196.403 us, aten::miopen_convolution 275.138 us): one row, +0.08 ms, where the MIOpen
    one ranked +0.28 ms. aten::resize_, an op of no vendor's library made on the MI300X alone, stays ranked."""
    import gzip
    import json

    import openpyxl

    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "tracelens" / "tests" / "traces"
    name = "facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    if not (root / "h100" / name).is_file():
        pytest.skip("sample data not found")
    from msprof_compare.api import compare

    def calls(path: Path) -> dict[str, tuple[int, float]]:
        with gzip.open(path, "rt") as f:
            events = json.load(f)["traceEvents"]
        out: dict[str, tuple[int, float]] = {}
        for e in events:
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime"):
                n, d = out.get(e["name"], (0, 0.0))
                out[e["name"]] = (n + 1, d + e["dur"])
        return out

    h100, mi300 = calls(root / "h100" / name), calls(root / "mi300" / name)
    assert "hipGetDevicePropertiesR0600" not in h100 and not [n for n in h100 if "GetDeviceProperties" in n]
    n, us = mi300["hipGetDevicePropertiesR0600"]
    assert n == 400 and round(us / 1000, 2) == 0.17
    conv = round(mi300["aten::miopen_convolution"][1] / 1000, 2) - round(h100["aten::cudnn_convolution"][1] / 1000, 2)
    result = compare(str(root / "h100" / name), str(root / "mi300" / name), enable_api_compare=True,
                     enable_profiling_compare=True)
    sheet = next(s for s in result.sheets if s.name == "ApiCompare")
    top, _ = charts.regressions(sheet)
    assert "hipGetDevicePropertiesR0600" not in top["Name"].tolist()
    assert top.attrs[charts.VENDOR_ONLY] == [("hipGetDevicePropertiesR0600", pytest.approx(0.17))]
    joined = top.set_index("Name")
    assert joined.loc["aten::cudnn_convolution / aten::miopen_convolution", "Diff"] == pytest.approx(conv)
    assert conv == pytest.approx(0.08) and "aten::miopen_convolution" not in joined.index
    assert joined.loc["aten::resize_", "Diff"] == pytest.approx(round(mi300["aten::resize_"][1] / 1000, 2))
    api = result.sheet("ApiCompare").set_index("api name")  # the sheet keeps the original's row
    assert api.loc["hipGetDevicePropertiesR0600"].iloc[5] == pytest.approx(0.17)
    # the Summary sheet's table of the regressions says what it left out, in its title
    ws = openpyxl.load_workbook(result.to_excel(str(tmp_path / "t.xlsx")), read_only=True)["Summary"]
    (title,) = [r[0] for r in ws.iter_rows(values_only=True) if str(r[0]).startswith("ApiCompare: top ")]
    assert title.endswith("; left out as vendor-only (calls the other vendor's stack never makes; ApiCompare keeps "
                          "their rows): hipGetDevicePropertiesR0600 +0.17 ms")


def test_vendor_only_calls_are_judged_across_vendors_alone():
    """Hand-built ApiCompare rows (Calls in columns 5 and 9): across vendors a comparison-only HIP runtime call or
    MIOpen op without a cuDNN twin is left out, a base-only CUDA one is no regression anyway, a call both sides make
    and a framework op of one side stay; two NVIDIA runs keep a new CUDA call in the ranking (a call the code
    started to make); more than three left out are named "and N more"."""
    cols = charts.STAT_SPECS["ApiCompare"]

    def sheet(rows):
        return Sheet("ApiCompare", [], pd.DataFrame(rows), (2, 5), (6, 9))

    across = [[1, "cudaLaunchKernel", 1.0, 0, 0, 2, 0.0, 0, 0, 0],
              [2, "cudaGetDeviceCount", 0.5, 0, 0, 1, 0.0, 0, 0, 0],
              [3, "hipLaunchKernel", 0.0, 0, 0, 0, 1.5, 0, 0, 2],
              [4, "hipGetDevicePropertiesR0600", 0.0, 0, 0, 0, 0.17, 0, 0, 400],
              [5, "aten::miopen_batch_norm", 0.0, 0, 0, 0, 0.3, 0, 0, 1],
              [6, "aten::resize_", 0.0, 0, 0, 0, 0.01, 0, 0, 3]]
    top, spec = charts.regressions(sheet(across))
    assert spec is cols
    assert top.values.tolist() == [["cudaLaunchKernel / hipLaunchKernel", 0.5], ["aten::resize_", 0.01]]
    assert top.attrs[charts.VENDOR_ONLY] == [("aten::miopen_batch_norm", 0.3), ("hipGetDevicePropertiesR0600", 0.17)]
    nvidia = [[1, "cudaLaunchKernel", 1.0, 0, 0, 2, 1.0, 0, 0, 2],
              [2, "cudaGetDeviceProperties", 0.0, 0, 0, 0, 0.2, 0, 0, 4]]
    top, _ = charts.regressions(sheet(nvidia))
    assert top.values.tolist() == [["cudaGetDeviceProperties", 0.2]] and top.attrs[charts.VENDOR_ONLY] == []
    left = [(f"hipCall{i}", 0.1 * (5 - i)) for i in range(5)]
    assert charts.vendor_only_note(left, "ms").endswith(
        "hipCall0 +0.50 ms, hipCall1 +0.40 ms, hipCall2 +0.30 ms and 2 more")
    assert charts.vendor_only_note([], "ms") == ""


def api_order(result) -> list[str]:
    """ApiCompare's api names in row order (the order a joined chart row names its calls in)."""
    return result.sheet("ApiCompare")["api name"].tolist()


def test_regressions_read_odd_cells_as_pandas_does():
    """Cells a hand-built or API-edited sheet may hold: missing names (None, NaN), a number or padded text as a
    name, amounts as numeric text, blanks and words. Expected from the pandas reading of each cell
    (``fillna("").astype(str).str.strip()``, ``to_numeric(errors="coerce")`` with 0 for no number)."""
    import numpy as np

    rows = [[1, " padded ", "1.5", 1, "4", 1, 0, 1],
            [2, None, 1.0, 1, 3.0, 1, 0, 1],
            [3, np.nan, 0.0, 1, 2.5, 1, 0, 1],
            [4, 42, "", 1, 2.0, 1, 0, 1],
            [5, "words", "n/a", 1, None, 1, 0, 1],
            [6, "neg", 5, 1, "1e0", 1, 0, 1]]
    top, _ = charts.regressions(_stat_sheet(rows))
    f = pd.DataFrame(rows)
    name = f[1].fillna("").astype(str).str.strip()
    diff = pd.to_numeric(f[4], errors="coerce").fillna(0.0) - pd.to_numeric(f[2], errors="coerce").fillna(0.0)
    want = sorted(((n, d) for n, d in zip(name, diff, strict=True) if d > 0), key=lambda t: -t[1])
    assert list(zip(top["Name"], top["Diff"], strict=True)) == want
    assert want == [("padded", 2.5), ("", 2.5), ("", 2.0), ("42", 2.0)]  # by hand: ties keep row order


def test_failing_chart_is_logged_not_raised(caplog):
    class Boom:
        def add_chart(self, *_a, **_k):
            raise RuntimeError("boom")

    sheet = Sheet("OverallMetrics", [Column("Index")], pd.DataFrame({"a": ["x", "y", "z"]}), (1, 1), (2, 2))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        charts.draw_charts(Boom(), object(), sheet)
    assert "Chart for sheet OverallMetrics skipped: boom" in caplog.text


def test_a_failed_summary_chart_leaves_the_summary_table_whole(pair1, tmp_path, monkeypatch, caplog):
    """Where the Summary's part below its waterfall fails (the chart skipped, as any failing chart), the statistic
    sheets' chart data, which goes under the Summary's, is not written over the Summary: with the chart data row
    still 0, pair 1's ModuleCompareStatistic regressions replaced the captions and the waterfall rows."""
    def boom(*_a, **_k):
        raise RuntimeError("boom")

    monkeypatch.setattr(charts, "_validity_checks", boom)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        path = pair1.to_excel(str(tmp_path))
    assert "Chart for sheet Summary skipped: boom" in caplog.text
    ws = openpyxl.load_workbook(path)["Summary"]
    assert [ws.cell(1, 1).value, ws.cell(1, 2).value] == [None, f"Base Profiling: {pair1.base.path}"]  # column B
    assert [ws.cell(2, 1).value, ws.cell(2, 2).value] == [None, f"Comparison Profiling: {pair1.comparison.path}"]
    assert [c.value for c in ws[3][:2]] == ["Step", "Base(ms)"]
    assert [ws.cell(4 + i, 1).value for i in range(len(pair1.waterfall))] == pair1.waterfall["Step"].tolist()
    assert not [v for v in (c.value for c in ws["A"]) if isinstance(v, str) and ": top " in v]
    assert len(_chart_parts(path)) == 1  # OverallMetrics' bars, on its own rows; no bars without their data


def test_render_script_usage():
    import subprocess

    script = Path(__file__).resolve().parents[1] / "tools" / "render_workbook.sh"
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "usage:" in proc.stderr


# Independent of charts.STAT_SPECS: each sheet's name and amount columns by their display headers.
_AMOUNTS = {
    "ModuleCompareStatistic": (["Module Name"], "Device Total Time(ms)", "Device Total Time(ms).1"),
    "MemoryCompareStatistic": (["Operator Name"], "Base Allocated Memory(MB)", "Comparison Allocated Memory(MB)"),
    "ApiCompare": (["api name"], "Total Duration(ms)", "Total Duration(ms).1"),
    "KernelCompare": (["Kernel", "Input Shape"], "Total Duration(us)", "Total Duration(us).1"),
}


def test_regression_chart_data_recomputed_from_the_sheets(pair1):
    """The top-20 regressions charted per statistic sheet: comparison minus base of the sheet's own
    columns (found by header), only rows that grew, largest first, full names."""
    for s in pair1.sheets:
        if s.name not in _AMOUNTS:
            continue
        names, base, comp = _AMOUNTS[s.name]
        f = s.frame()
        if s.name == "ModuleCompareStatistic":
            f = f[f["Operator Name"] == "[ TOTAL ]"]
        # exact decimal differences of the cells (ties then keep the sheet's row order, as a stable sort)
        bs, cs = (pd.to_numeric(f[col], errors="coerce").fillna(0).tolist() for col in (base, comp))
        diff = [Decimal(repr(float(c))) - Decimal(repr(float(b))) for b, c in zip(bs, cs, strict=True)]
        label = f[names[0]].astype(str).str.strip()
        for extra in names[1:]:
            label = label + " " + f[extra].astype(str)
        expected = sorted(zip(diff, label.tolist(), strict=True), key=lambda t: -t[0])
        expected = [(n, d) for d, n in expected if d > 0]
        if s.name == "ModuleCompareStatistic":
            # a module one of its grown submodules explains (>= 90 %) is left out: pairwise, by path prefix
            expected = [(n, d) for n, d in expected
                        if not any(o.startswith(n + "/") and od >= Decimal("0.9") * d for o, od in expected)]
        expected = expected[:charts.TOP_REGRESSIONS]
        got = charts.regressions(s)
        got_rows = [] if got is None else list(zip(got[0]["Name"].tolist(), got[0]["Diff"].tolist(), strict=True))
        assert [n for n, _ in got_rows] == [n for n, _ in expected], s.name
        assert [Decimal(repr(d)) for _, d in got_rows] == [d for _, d in expected], s.name


def _table_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]


def test_console_waterfall_and_contributors_recomputed(pair1):
    """The console tables' numbers from the result frames: Delta signed, Share = Delta / E2E change,
    contributors' Diff = Comparison - Base."""
    from msprof_compare.report.summary_console import render_contributors, render_waterfall

    wf = pair1.waterfall
    steps = wf[~wf["Category"].isin(["start", "end"])]
    total = int(steps["Delta(ns)"].astype("int64").sum())
    rows = {r[0]: r for r in (line for line in _table_rows(render_waterfall(wf)) if len(line) == 6)}
    for r in steps.itertuples(index=False):
        d = int(r[9])  # Delta(ns)
        assert rows[r.Step][1:4] == [f"{float(r[2]):.3f}", f"{float(r[3]):.3f}", f"{d / 1e6:+.3f}"], r.Step
        share = f"{d / total:.1%}"
        assert rows[r.Step][5] == ("0.0%" if share == "-0.0%" else share), r.Step  # no negative zero
    c = pair1.contributors
    shown = [line for line in _table_rows(render_contributors(c)) if len(line) == 7 and line[0].isdigit()]
    assert len(shown) == min(len(c), 10)
    for line, r in zip(shown, c.itertuples(index=False), strict=False):
        base, comp = float(r[3]), float(r[4])
        assert line[2:5] == [f"{base:.3f}", f"{comp:.3f}", f"{comp - base:+.3f}"]
        assert line[5] == f"{float(r.Share):.1%}"


def test_console_waterfall_shows_no_negative_zero():
    """The AlexNet GPU side's "Other Computing" residual is -127 ns (kernels of two categories overlap):
    shown as 0.000, like its +0.000 delta, never "-0.000"; real negatives keep their sign."""
    from msprof_compare.report.summary_console import render_waterfall

    wf = pd.DataFrame({"Step": ["Other Computing", "Free"], "Category": ["computing", "free"],
                       "Base(ms)": [-0.000127, 1.0], "Comparison(ms)": [0.0, 0.9994],
                       "Delta(ms)": [0.000127, -0.0006], "Cumulative(ms)": [0.0, -0.0006],
                       "Share of E2E Diff": [-0.00004, -0.0006]})
    rows = {r[0]: r[1:] for r in _table_rows(render_waterfall(wf)) if len(r) == 6}
    assert rows["Other Computing"] == ["0.000", "0.000", "+0.000", "0.000", "0.0%"]
    assert rows["Free"] == ["1.000", "0.999", "-0.001", "-0.001", "-0.1%"]


@pytest.mark.parametrize(("text", "width", "lines"), [
    ("text", 14, 1), ("", 14, 1),
    # lines of (14 x 7 - 5) / 1.03 = 90.3 px (3 % to spare); by hand from Helvetica's widths (1/1000 em) at 14.667
    # px an em: "Level2 /" 3,502 = 51.4 px, then the word of 15,787 (231.5 px) alone, broken where lines end: 3
    ("Level2 / ACL_AICORE_PIPE_UTILIZATION", 14, 4),
    ("Level1 / ACL_AICORE_PIPE_UTILIZATION", 16, 4),   # 103.9-px lines: the 231.5 px still take 3
    # 35.9-px lines (a, b, d, e, g, h 8.15 px; c, k 7.33; f 4.08; i, j, l 3.26; a space 4.08): "a b c" 31.8,
    # "d e f" 28.5, "g h i j" 35.1, "k l" 14.7 (counted in characters, 4 a line: 6 lines)
    ("a b c d e f g h i j k l", 6, 4),
    ("x" * 24, 14, 2),                                   # 7.33 px each: 12 a line
    ("a\nb\nc\nd", 20, 4),                             # line breaks count, empty lines too
    ("a\n\nb", 20, 3),
    ("测试" * 10, 14, 4),                                 # wide characters take an em, 14.67 px: 6 a line
    ("Ａ" * 12, 14, 2),                                   # full-width ones too
    ("ab cd", 7, 1),                                     # 35.9 px on a 42.7-px line
    ("x" * 12 + " y", 14, 2),                            # 88 px: the space and y (4.08 + 7.33) would pass 90.3
    ("ab", 2, 2),                                        # an 8.7-px line: a character a line, no zero
])
def test_wrapped_lines_wrap_at_spaces_then_inside_long_words(text, width, lines):
    assert charts._wrapped_lines(text, width) == lines


@pytest.mark.parametrize(("text", "width", "broken"), [
    # by hand from Helvetica's widths (1/1000 em) at 14.667 px an em: "ACL_" 2501 = 36.7 px, "AICORE_" 4390 =
    # 64.4 px, "PIPE_" 2835 = 41.6 px, "UTILIZATION" 6061 = 88.9 px, "ACL_AICORE_" 6891 = 101.1 px
    ("Level1 / ACL_AICORE_PIPE_UTILIZATION", 16.7109375, "Level1 / ACL_AICORE_\nPIPE_\nUTILIZATION"),  # 112 px
    ("Level2 / ACL_AICORE_PIPE_UTILIZATION", 14.7109375, "Level2 / ACL_\nAICORE_\nPIPE_\nUTILIZATION"),  # 98 px
    ("ACL_AICORE_PIPE_UTILIZATION", 40, "ACL_AICORE_PIPE_UTILIZATION"),   # 232.3 px, within 40 x 7 - 5 = 275
    ("NVIDIA H100 80GB HBM3", 14.7109375, "NVIDIA H100 80GB HBM3"),          # spaces: the spreadsheet wraps there
    ("x" * 40, 10, "x" * 40),                                                  # no separator: left to the cell
    # 23 px a line: "a," 12.2 px, "b,c" 19.6; "level_" 38.3 alone (a part wider than a line stays whole), "one_"
    # 32.6, "two_" 31.0; the text's own line break kept
    ("a,b,c\nlevel_one_two_three", 4, "a,\nb,c\nlevel_\none_\ntwo_\nthree"),
    ("", 14, "")])
def test_long_words_break_after_their_separators(text, width, broken):
    assert charts._break_long_words(text, width) == broken
    assert broken.replace("\n", "") == text.replace("\n", "")


def _summary_chart_rows(path: str) -> tuple[int, int]:
    """The 0-based first row of the Summary's chart and the first row wholly below it, from the drawing's anchor."""
    with zipfile.ZipFile(path) as z:
        names = re.findall(r'<sheet name="([^"]+)"', z.read("xl/workbook.xml").decode())
        rels = z.read(f"xl/worksheets/_rels/sheet{names.index('Summary') + 1}.xml.rels").decode()
        drawing = re.search(r'Target="../drawings/(drawing\d+\.xml)"', rels).group(1)
        xml = z.read(f"xl/drawings/{drawing}").decode()
    (top,) = re.findall(r"<xdr:from><xdr:col>\d+</xdr:col><xdr:colOff>\d+</xdr:colOff><xdr:row>(\d+)</xdr:row>", xml)
    ((bottom, off),) = re.findall(r"<xdr:to><xdr:col>\d+</xdr:col><xdr:colOff>\d+</xdr:colOff>"
                                  r"<xdr:row>(\d+)</xdr:row><xdr:rowOff>(\d+)</xdr:rowOff>", xml)
    return int(top), int(bottom) + (int(off) > 0)


def test_the_chart_sits_under_the_waterfall_within_the_tables(pair1, tmp_path):
    """The waterfall chart is under the waterfall table and its verdict, in column A, no wider than the tables
    (A:G, 1,144 px here: it keeps its 820), and the contributors follow it after a blank row: beside the tables
    (column H on) it made the printed Summary 1,530 pt wide, 45 % on one page."""
    path = pair1.to_excel(str(tmp_path))
    top, below = _summary_chart_rows(path)
    ws = openpyxl.load_workbook(path)["Summary"]
    col_a = [c.value for c in ws["A"]]
    verdict = next(i for i, v in enumerate(col_a) if isinstance(v, str) and v.startswith("E2E time "))
    contributors = next(i for i, v in enumerate(col_a) if isinstance(v, str) and v.startswith("Top Contributors"))
    assert top == verdict + 1 and contributors == below + 1  # 0-based rows
    with zipfile.ZipFile(path) as z:
        drawing = z.read("xl/drawings/drawing1.xml").decode()
    assert "<xdr:from><xdr:col>0</xdr:col><xdr:colOff>0</xdr:colOff>" in drawing
    # 820 px wide: A (70 characters, 495 px), B and C (16, 117 px each) and 91 px into D (EMU: 9525 a pixel)
    assert "<xdr:to><xdr:col>3</xdr:col><xdr:colOff>866775</xdr:colOff>" in drawing and 866775 == 91 * 9525
    assert [c.width for c in next(s for s in pair1.sheets if s.name == "Summary").columns] == [70, 16, 16, 14, 16, 18]


def test_module_chart_leaves_out_a_module_one_submodule_explains(tmp_path):
    """bert-small H100 -> MI300X (sample_data): one attention growth filled four bars of the module chart
    (BertLMHeadModel_0 > BertModel_0 > BertEncoder_0 ...). A module goes where one grown submodule holds >= 90 %
    of its growth; one whose growth several submodules share stays. Figures: the sheet's TOTAL rows."""
    from msprof_compare.api import compare

    repo = Path(__file__).resolve().parents[1]
    result = compare(str(repo / "sample_data" / "bert-small_h100.json.gz"),
                     str(repo / "sample_data" / "bert-small_mi300.json.gz"))
    sheet = next(s for s in result.sheets if s.name == "ModuleCompareStatistic")
    f = sheet.frame()
    f = f[f["Operator Name"] == "[ TOTAL ]"]
    grew = dict(zip(f["Module Name"].str.strip(),
                    (f["Device Total Time(ms).1"].astype(float) - f["Device Total Time(ms)"].astype(float)).round(6),
                    strict=True))
    top = "/ BertLMHeadModel_0"
    enc = f"{top}/ BertModel_0/ BertEncoder_0"
    # the hand reading of the sheet the rule rests on
    assert grew[f"{top}/ BertModel_0"] == 0.095486 and grew[enc] == 0.090789            # 95.1 %: left out
    assert grew[top] == 0.081311                                                       # below its child's: left out
    assert max(grew[f"{enc}/ BertLayer_{i}"] for i in range(4)) == 0.026456            # 29 % of enc: enc stays
    assert grew[f"{enc}/ BertLayer_0/ BertAttention_0"] == 0.021474
    assert grew[f"{enc}/ BertLayer_0/ BertAttention_0/ BertSdpaSelfAttention_0"] == 0.019906  # 92.7 %: left out
    assert grew[f"{enc}/ BertLayer_2/ BertIntermediate_2"] == 0.007979
    assert grew[f"{enc}/ BertLayer_2/ BertIntermediate_2/ Linear_16"] == 0.006163       # 77.2 %: both stay

    top_rows, spec = charts.regressions(sheet)
    charted = top_rows["Name"].tolist()
    assert len(charted) == charts.TOP_REGRESSIONS and charted[0] == enc
    for gone in (top, f"{top}/ BertModel_0", *(f"{enc}/ BertLayer_{i}/ BertAttention_{i}" for i in range(4))):
        assert gone not in charted
    for kept in (f"{enc}/ BertLayer_0/ BertAttention_0/ BertSdpaSelfAttention_0",
                 f"{enc}/ BertLayer_2/ BertIntermediate_2", f"{enc}/ BertLayer_2/ BertIntermediate_2/ Linear_16"):
        assert kept in charted
    assert top_rows["Diff"].tolist() == sorted(top_rows["Diff"].tolist(), reverse=True)

    path = result.to_excel(str(tmp_path))
    module_chart = next(x for x in _chart_parts(path).values() if "module device total time" in x)
    assert "ms; a module whose growth one submodule holds (&gt;= 90%) is left out for it" in module_chart
    book = openpyxl.load_workbook(path, read_only=True)  # read-only: the file stays open until close()
    summary = book["Summary"]
    assert any(c == ("ModuleCompareStatistic: top 20 regressions (module device total time, ms); a module whose "
                     "growth one submodule holds (>= 90%) is left out for it")
               for row in summary.iter_rows(values_only=True) for c in row if c)
    book.close()


def test_a_row_of_many_wrapped_lines_stops_at_excels_tallest_row(pair1, tmp_path, monkeypatch):
    """A validity check's detail of 40 lines would need 600 points; Excel allows no row over 409 points, so
    the row stops there and the text scrolls within it."""
    guards = pair1.guards.copy()
    guards.loc[len(guards)] = ["tall check", "warn", 1, 2, "\n".join(f"line {i}" for i in range(40))]
    sheet = next(s for s in pair1.sheets if s.name == "Summary")
    monkeypatch.setattr(sheet, "guards", guards)
    ws = openpyxl.load_workbook(pair1.to_excel(str(tmp_path)))["Summary"]
    row = next(c.row for c in ws["A"] if c.value == "tall check")
    assert ws.row_dimensions[row].height == 408.75  # 409 points, as xlsxwriter rounds it to whole pixels
    assert ws.cell(row, 5).value.count("\n") == 39  # the text itself is whole


def test_a_wrapped_summary_line_of_many_lines_stops_at_excels_tallest_row(pair1, tmp_path, monkeypatch):
    """The Summary's wrapped lines (the verdict under the waterfall, the notes) take the same cap as the validity
    table's rows: a verdict sentence of 2,000 words wraps to far over the 409 points Excel allows (its line breaks
    part sentences, a row each: test_idle_stretch.py::test_hta_alexnet_against_npu)."""
    sheet = next(s for s in pair1.sheets if s.name == "Summary")
    verdict = " ".join(f"word{i}" for i in range(2000))
    monkeypatch.setattr(sheet, "verdict", verdict)
    ws = openpyxl.load_workbook(pair1.to_excel(str(tmp_path)))["Summary"]
    row = next(c.row for c in ws["A"] if isinstance(c.value, str) and c.value.startswith("word0 word1 "))
    assert ws.row_dimensions[row].height == 408.75  # 409 points, as xlsxwriter rounds it to whole pixels
    assert ws.cell(row, 1).value == f"{verdict}."


def test_api_regressions_join_three_rows_of_one_twin_in_sheet_order():
    """cudaMemcpyAsync, hipMemcpyAsync and hipMemcpyWithStream are one call across vendors: one bar, named by the
    three in the sheet's order, its sides' sums (by hand: base 0.5 + 0 + 0, comparison 0 + 0.25 + 1.0)."""
    cols = [Column(h) for h in ("Order Id", "api name", "Total Duration(ms)", "Self Time(ms)", "Avg Duration(ms)",
                                "Calls", "Total Duration(ms)", "Self Time(ms)", "Avg Duration(ms)", "Calls")]
    rows = [[1, "hipMemcpyWithStream", 0.0, 0, 0, 0, 1.0, 0, 0, 1],
            [2, "cudaMemcpyAsync", 0.5, 0, 0, 1, 0.0, 0, 0, 0],
            [3, "aten::mm", 1.0, 0, 0, 1, 1.0, 0, 0, 1],
            [4, "hipMemcpyAsync", 0.0, 0, 0, 0, 0.25, 0, 0, 1]]
    top, _ = charts.regressions(Sheet("ApiCompare", cols, pd.DataFrame(rows), (2, 5), (6, 9)))
    assert top.values.tolist() == [["hipMemcpyWithStream / cudaMemcpyAsync / hipMemcpyAsync", 0.75]]


def test_no_memory_regression_chart_where_a_side_recorded_no_memory(tmp_path):
    """HTA's A100 AlexNet trace (recorded without profile_memory: no ``[memory]`` event, checked in the raw file)
    against the msinsight Level1 NPU export: MemoryCompareStatistic holds the NPU side's allocations against a
    base 0 that is no reading, as the Summary's memory line says ("base not recorded ..., so no memory
    contributor"). Its chart ranked every NPU operator's whole allocation as a regression ("MemoryCompareStatistic:
    top 18 regressions"); the workbook now has no memory chart, while the other statistic sheets keep theirs."""
    import gzip
    import json

    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
    gpu = root / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
    if not gpu.is_file() or not (root / NPU_L1).is_dir():
        pytest.skip("sample data not found")
    events = json.loads(gzip.decompress(gpu.read_bytes()))["traceEvents"]
    assert events and not [e for e in events if e.get("cat") == "[memory]"]
    from msprof_compare.api import compare

    result = compare(str(gpu), str(root / NPU_L1))
    memory = result.sheet("MemoryCompareStatistic")
    assert (memory["Base Allocated Memory(MB)"] == 0).all() and (memory["Comparison Allocated Memory(MB)"] > 0).any()
    book = openpyxl.load_workbook(result.to_excel(str(tmp_path)))
    summary = [c.value for c in book["Summary"]["A"] if isinstance(c.value, str)]
    assert any("base not recorded (its 0 MB in MemoryCompareStatistic is no reading)" in v for v in summary)
    assert not [v for v in summary if v.startswith("MemoryCompareStatistic: top")]
    assert len(book["MemoryCompareStatistic"]._charts) == 0
    assert [v for v in summary if v.startswith("OperatorCompareStatistic: top")]  # the others are still charted
    assert len(book["OperatorCompareStatistic"]._charts) == 1


def test_no_communication_regression_chart_where_a_side_has_no_op_type(tmp_path):
    """msinsight's Level0 DB export (rank 0) against its Level1 one: the Level0 COMMUNICATION_OP rows' opType is
    "N/A" (4 rows, read from the database here), so CommunicationCompare has no row of the base side and the Summary
    says "base no row" (the comparison's figure: its COMMUNICATION_OP rows' end - start, summed); its chart ranked
    the Level1 allreduce's whole time as a regression. No chart now."""
    from tests.dbutil import sql  # read-only and immutable: nothing is written beside the shared samples

    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "msinsight/test/data/pytorch/db"
    base, comparison = root / "level0/rank0_ascend_pt", root / "level1/rank0_ascend_pt"
    if not base.is_dir() or not comparison.is_dir():
        pytest.skip("sample data not found")
    assert sql(base / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
               "SELECT s.value, count(*) FROM COMMUNICATION_OP o JOIN STRING_IDS s ON s.id = o.opType GROUP BY 1"
               ) == [("N/A", 4)]
    # the Level1 side's 4 allreduce ops, end - start summed
    (ns,), = sql(comparison / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                 "SELECT sum(endNs - startNs) FROM COMMUNICATION_OP")
    from msprof_compare.api import compare

    result = compare(str(base), str(comparison))
    book = openpyxl.load_workbook(result.to_excel(str(tmp_path)))
    summary = [c.value for c in book["Summary"]["A"] if isinstance(c.value, str)]
    assert (f"Communication time (CommunicationCompare's op rows): base no row, comparison {ns / 1e6:.3f} ms."
            in summary)
    assert not [v for v in summary if v.startswith("CommunicationCompare: top")]
    assert len(book["CommunicationCompare"]._charts) == 0


def test_chart_data_levels_hold_no_float_residue():
    """The waterfall's Invisible cells are levels to the ns, as the sheet's Cumulative(ms): reference pair 5's
    (ResNet-50, two runs) Cube (other) step, +0.044 ms up to 993.777 ms, stands on 993.733 ms, which the float
    difference 993.777 - 0.044 wrote as 993.7330000000001 in the chart data."""
    from msprof_compare.report.charts import _waterfall_levels

    wf = pd.DataFrame({"Step": ["Base E2E", "Vector", "Cube (other)", "Comparison E2E"],
                       "Category": ["start", "computing", "computing", "end"],
                       "Delta(ms)": [0.0, -0.248, 0.044, 0.0],
                       "Cumulative(ms)": [993.981, 993.733, 993.777, 993.777]})
    levels, low = _waterfall_levels(wf)
    assert [vals for _, vals in levels] == [[0.0, 0.0, 0.0, 993.981], [993.733, 0.0, 0.248, 0.0],
                                            [993.733, 0.044, 0.0, 0.0], [0.0, 0.0, 0.0, 993.777]]
    assert low == 993.733
