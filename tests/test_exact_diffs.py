"""Duration diffs of every sheet are the exact change of whole ns, to 0.01, a half away from zero
(docs/differences.md, "Duration diffs of every sheet are the exact change"), shown on real traces with planted
changes lying exactly on a half of the displayed 0.01: the float cells' rounded difference read one change as
0.01 on one sheet and 0.02 on another, or as no change at all."""

from __future__ import annotations

import math
import shutil
from decimal import ROUND_HALF_UP, Decimal

import pytest
from test_injected_regressions import (  # tests/ is on sys.path (rootdir import mode)
    NPU_TEXT,
    _first_kernel,
    _rows,
    _text_kernel_lengthened,
)
from test_injected_regressions_amd import (
    _ALLREDUCE,
    _ATTN,
    _DEVICE,
    _GEMM,
    BERT,
    RESNET,
    _cells,
    _device,
    _edited,
    _figures,
    _idle_after,
    _launch,
    _ops_around,
    _pristine,
)
from test_injected_regressions_gpu import _load, _save

from msprof_compare.api import compare
from msprof_compare.report.summary_console import render_explain, render_waterfall


def _half_up(us: Decimal) -> float:
    """By hand: a change in the sheet's unit to 0.01, a half away from zero."""
    return float(us.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _moved(sheet, column: str) -> list[float]:
    """The non-zero cells of a diff column (blank cells left out)."""
    return [v for v in sheet[column].tolist() if v == v and v is not None and v != 0]


def _planted(samples, tmp_path, corr: int, us: str):
    """The MI300X BERT trace with the device event of ``corr`` ``us`` µs longer; the compared results with
    module sheets and with operator sheets (--disable_module)."""
    src = samples / BERT
    doc = _load(src)
    kernel = _device(doc["traceEvents"], corr)
    kernel["dur"] += Decimal(us)
    path = str(_save(doc, tmp_path / f"planted_{corr}.json"))
    return compare(str(src), path), compare(str(src), path, disable_module=True)


@pytest.mark.parametrize(("corr", "us", "ms"), [(_ATTN, "15", "0.02"), (_GEMM, "25", "0.03")])
def test_a_half_of_0_01_ms_reads_alike_on_every_ms_sheet(samples, tmp_path, corr, us, ms):
    """attn_fwd 15 us longer (55 us of idle time after it) and a Cijk GEMM 25 us longer: 0.015 / 0.025 ms, by
    hand 0.02 / 0.03 ms. The float rule read attn's 15 us as 0.02 on OverallMetrics (exact since commit
    01aca0a) but 0.01 on OperatorCompareStatistic and ModuleCompareStatistic, and the GEMM's 25 us as 0.02 on
    OperatorCompareStatistic and 0.03 on ModuleCompareStatistic."""
    before = _pristine(samples / BERT)
    want = _half_up(Decimal(us) / 1000)
    assert str(want) == ms
    top = _ops_around(before, _launch(before, corr))[0]["name"]  # the top-level op that launched the kernel
    with_modules, with_ops = _planted(samples, tmp_path, corr, us)

    stat = with_ops.sheet("OperatorCompareStatistic")
    assert stat.loc[stat["Diff Duration(ms)"] != 0, ["Operator Name", "Diff Duration(ms)"]].values.tolist() == [
        [top, want]]
    mod = with_modules.sheet("ModuleCompareStatistic")
    # the module that holds the op: its TOTAL row's self time and the op's row; nothing else
    assert _moved(mod, "Device Self Time Diff(ms)") == [want, want]
    assert set(_moved(mod, "Device Total Time Diff(ms)")) <= {want}
    if _idle_after(before, _device(before, corr)) > Decimal(us):  # the growth takes idle time only
        om = _rows(with_ops.sheet("OverallMetrics"))
        assert {abs(r[7]) for r in om.values() if r[7]} == {want}


@pytest.mark.parametrize(("us", "want"), [("0.005", 0.01), ("0.015", 0.02)])
def test_a_half_of_0_01_us_reads_alike_on_every_us_sheet(samples, tmp_path, us, want):
    """The Cijk GEMM (7.416 us) 5 ns and 15 ns longer: by hand 0.01 and 0.02 us on OperatorCompare and
    ModuleCompare; the float rule read 5 ns as no change (0.0 on both sheets) and 15 ns as 0.01."""
    assert _half_up(Decimal(us)) == want
    with_modules, with_ops = _planted(samples, tmp_path, _GEMM, us)
    assert _moved(with_ops.sheet("OperatorCompare"), "Diff Duration(us)") == [want]
    assert _moved(with_modules.sheet("ModuleCompare"), "Device Self Time Diff(us)") == [want, want]


@pytest.mark.parametrize(("ns", "want"), [(5, 0.01), (15, 0.02)])
def test_communication_total_diff_on_a_half(samples, tmp_path, ns, want):
    """The MI300X ResNet trace's last RCCL all-reduce 5 ns and 15 ns longer: CommunicationCompare's allreduce
    total moves by exactly that (its other rows not), so its Diff Duration(us) reads by hand 0.01 and 0.02; the
    float rule on the totals (47137.038 -> 47137.043 us) read 0.0 and 0.01."""
    src = samples / RESNET
    kernel = _device(_pristine(src), _ALLREDUCE)
    longer = kernel["dur"] + Decimal(ns) / 1000
    _edited(src, tmp_path / "rccl.json", f'"ts": {kernel["ts"]}, "dur": {kernel["dur"]},',
            f'"ts": {kernel["ts"]}, "dur": {longer},')
    comm = compare(str(src), str(tmp_path / "rccl.json"), enable_communication_compare=True).sheet(
        "CommunicationCompare")
    totals = comm.iloc[:, [1, 4, 11]].values.tolist()
    moved = [(name, Decimal(repr(c)) - Decimal(repr(b))) for name, b, c in totals if b != c]
    assert moved == [("allreduce", Decimal(ns) / 1000)]
    assert comm.loc[comm["Diff Duration(us)"].fillna(0) != 0, "Diff Duration(us)"].tolist() == [want]


@pytest.mark.parametrize(("e2e_us", "cell"), [("3500", "0.004s"), ("4500", "0.005s"), ("5500", "0.006s")])
def test_console_seconds_on_a_half_round_away_from_zero(samples, tmp_path, e2e_us, cell):
    """The console table's seconds are whole ns to 0.001 s, a half away from zero: the MI300X BERT trace's last
    device event (a Cijk GEMM) made longer so that E2E (3495.976 us by hand) is exactly 3.5, 4.5 and 5.5 ms reads
    0.004s, 0.005s and 0.006s; ``ns / 1e9`` formatted by its binary value read 0.004s, 0.004s and 0.005s (4.5 ms
    is 0.00449999... s as a float, 3.5 ms 0.00350000...)."""
    src = samples / BERT
    doc = _load(src)
    events = doc["traceEvents"]
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE]
    last = max(dev, key=lambda e: e["ts"] + e["dur"])
    lo = min(e["ts"] for e in dev)
    last["dur"] = lo + Decimal(e2e_us) - last["ts"]
    assert _figures(events)["E2E"] == Decimal(e2e_us)
    res = compare(str(src), str(_save(doc, tmp_path / "e2e.json")), enable_profiling_compare=True)
    assert _cells(res, "E2E Time") == ["0.003s", cell]


@pytest.mark.parametrize("us", ["2.5", "4.5", "5.5"])
def test_verdict_ms_on_a_half_round_away_from_zero(samples, tmp_path, us):
    """The verdict's ms (3 decimals) are whole ns to the us, a half away from zero: the BERT trace's last device
    event ``us`` longer moves E2E by exactly that, so the change reads by hand +0.003, +0.005 and +0.006 ms;
    ``ns / 1e6`` formatted by its binary value read +0.003, +0.004 and +0.005 (0.0045 and 0.0055 are just below
    the half as floats)."""
    src = samples / BERT
    doc = _load(src)
    events = doc["traceEvents"]
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in _DEVICE]
    last = max(dev, key=lambda e: e["ts"] + e["dur"])
    base_e2e = _figures(events)["E2E"]
    last["dur"] += Decimal(us)
    assert _figures(events)["E2E"] - base_e2e == Decimal(us)

    def ms(v: Decimal) -> str:
        return str((v / 1000).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))

    res = compare(str(src), str(_save(doc, tmp_path / "e2e.json")))
    assert res.verdict.startswith(
        f"E2E time {ms(base_e2e)} ms -> {ms(base_e2e + Decimal(us))} ms (+{ms(Decimal(us))} ms, ")
    # the console's contributor tables and waterfall show the change as the verdict does (round() of the float
    # 0.0045 read +0.004 there)
    explain = render_explain(res.frames, res.verdict)
    shown = {line.split("|")[5].strip() for line in explain.splitlines()
             if line.startswith("| ") and "aten::linear" in line}
    assert shown == {f"+{ms(Decimal(us))}"}
    (matmul,) = [line for line in explain.splitlines() if line.startswith("| Matmul ")]
    assert matmul.split("|")[4].strip() == f"+{ms(Decimal(us))}"


@pytest.mark.parametrize(("us", "unit"), [("15", "ms"), ("0.015", "us")])
def test_npu_text_change_on_a_half_reads_alike_on_every_row(samples, tmp_path, us, unit):
    """The L1 text export's first MaxPoolWithArgmaxV1 kernel 15 us (0.015 ms) and 15 ns (0.015 us) longer: by hand
    0.02 of the sheet's unit on every row that holds it. The float rule read the 15 us as 0.01, 0.01, 0.01 and 0.02
    ms on ModuleCompareStatistic's Device Total Time Diff of the nested modules around it (0.02 on its Self Time
    Diff) and 0.01 on OperatorCompareStatistic; the 15 ns as 0.01, 0.01, 0.02, 0.02 us on ModuleCompare's totals."""
    base, slow = tmp_path / "base", tmp_path / "slow"
    shutil.copytree(samples / NPU_TEXT, base)
    shutil.copytree(samples / NPU_TEXT, slow)
    start, _ = _first_kernel(base, "MaxPoolWithArgmaxV1")
    _text_kernel_lengthened(slow, start, Decimal(us))
    want = _half_up(Decimal(us) / (1000 if unit == "ms" else 1))
    assert want == 0.02
    res = compare(str(base), str(slow))
    ops = compare(str(base), str(slow), disable_module=True)
    if unit == "ms":
        mod, op = res.sheet("ModuleCompareStatistic"), ops.sheet("OperatorCompareStatistic")
        assert _moved(op, "Diff Duration(ms)") == [want]
    else:
        mod, op = res.sheet("ModuleCompare"), ops.sheet("OperatorCompare")
        assert _moved(op, "Diff Duration(us)") == [want]
    total, own = _moved(mod, f"Device Total Time Diff({unit})"), _moved(mod, f"Device Self Time Diff({unit})")
    assert len(total) > 1 and set(total) == {want}  # the module around the kernel and the modules around it
    assert own == [want, want]  # its module's TOTAL row and the op's row


@pytest.mark.parametrize("kind", ["text", "db"])
def test_a_small_decrease_reads_plus_zero(samples, kind):
    """A row whose comparison cell is under the base's by less than half of 0.01 ms rounds to 0.00, never -0.00:
    on the L1 -> L2 exports many such rows (the OverallMetrics Cube row, 0.723434 -> 0.721854 ms, -0.00158 ms;
    Conv2d_0's module totals, 0.401247 -> 0.401028 ms). Without the exact diff's ``+ 0.0`` those cells were the
    float -0.0, which the API's sheets and a spreadsheet show as "-0" / "-0.00"."""
    root = samples / "msinsight/test/data/pytorch" / kind
    res = compare(str(root / "level1/rank0_ascend_pt"), str(root / "level2/rank0_ascend_pt"))
    checked = 0
    for sheet, pairs in (("OverallMetrics", [("Duration(ms)", "Duration(ms).1", "Diff Duration(ms)")]),
                         ("ModuleCompareStatistic", [
                             ("Device Total Time(ms)", "Device Total Time(ms).1", "Device Total Time Diff(ms)"),
                             ("Device Self Time(ms)", "Device Self Time(ms).1", "Device Self Time Diff(ms)")])):
        frame = res.sheet(sheet)
        for b_col, c_col, d_col in pairs:
            for b, c, d in zip(frame[b_col], frame[c_col], frame[d_col], strict=True):
                if b is None or c is None or b != b or c != c:
                    continue
                change = Decimal(repr(float(c))) - Decimal(repr(float(b)))
                if Decimal("-0.005") < change < 0:
                    checked += 1
                    assert d == 0 and math.copysign(1.0, d) == 1.0, (sheet, d_col, b, c, d)
    assert checked >= 20  # counted by hand above: dozens of rows per export


def test_console_waterfall_shows_a_small_decrease_as_plus_zero(samples, reference_outputs):
    """NPU text L2 -> L1 (reference pair 1 reversed): Other Computing is the original's OverallMetrics "\\tOther",
    0.005685 -> 0.005539 ms (reference-outputs README, pair 1), a change of -0.000146 ms, which the console's 3
    decimals show as +0.000, never "-0.000" (a mutant dropping ``_ms``'s ``+ 0.0`` printed it and survived)."""
    readme = (reference_outputs / "README.md").read_text()
    assert "| \\tOther | 0.005539000000002403 | 4.055468648648219e-05 | / | 0.005685000000003382 |" in readme
    root = samples / "msinsight/test/data/pytorch/text"
    res = compare(str(root / "level2/rank0_ascend_pt"), str(root / "level1/rank0_ascend_pt"),
                  enable_profiling_compare=True)
    rows = [line for line in render_waterfall(res.waterfall).splitlines() if line.startswith("| Other Computing ")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[1:4] == ["0.006", "0.006", "+0.000"]
    assert "-0.000" not in render_waterfall(res.waterfall)


def test_op_name_map_note_rounds_its_ms_as_the_tables():
    """The --op_name_map note's ms (a pair's sums and their change) rounded the float: 1.0045 ms read 1.004 (the
    float is 1.00449999...) and its +0.0045 ms change +0.004, where the tables and the verdict beside it round the
    decimal the cell stands for a half away from zero (1.005, +0.005). MB keep the memory sheet's round()."""
    from msprof_compare.compare.summary_notes import name_map_text

    text = name_map_text([(["a", "b"], 1.0045, 1.009)], "ms", 3)
    assert text.endswith("a with b 1.005 ms -> 1.009 ms together (+0.005 ms)")
    assert name_map_text([(["a", "b"], 2.0, 1.9999999)], "ms", 3).endswith("(+0.000 ms)")  # not "-0.000"
    assert name_map_text([(["a", "b"], 2.485, 2.485)], "MB", 2).endswith("2.48 MB -> 2.48 MB together (+0.00 MB)")
