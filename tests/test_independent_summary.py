"""The Summary's top-contributor table (sheet and JSON: test_json_report.py shows both hold the same cells) against
the original's workbooks: at the operator level its rows are OperatorCompareStatistic's, ranked by |diff| until
80 % of the summed |diff| is covered (docs/differences.md, "Additions"). The expected rows are computed here, in
plain Python, from the original's OperatorCompareStatistic of pairs 4 (a GPU trace against an NPU text export),
5 (two GPU traces) and 8b (a bare trace_view.json against its directory), not from our sheets; at the kernel level
(the kernel comparison alone) from the original's KernelCompare of pair 3, at the kernel-type level
(--use_kernel_type) from the two exports' op_statistic.csv."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from xlsxutil import read_xlsx

from msprof_compare.api import compare
from msprof_compare.report import json_report

TEXT = "msinsight/test/data/pytorch/text"
PAIRS = {
    "4-gpu-alexnet-vs-npu-text-l1": (
        "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        f"{TEXT}/level1/rank0_ascend_pt"),
    "5-gpu-kineto-resnet50": (
        "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"),
    "8b-npu-traceview-file-vs-dir": ("mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice/trace_view.json",
                                     f"{TEXT}/level1/rank0_ascend_pt"),
}


def _expected(rows: list[tuple[str, float, float]]) -> list[tuple]:
    """(name, base, comparison, diff, share, cumulative share, share of net diff) of the listed contributors."""
    changed = [(n, b, c, c - b) for n, b, c in rows if c - b != 0]
    gross = sum(abs(d) for *_, d in changed)
    net = sum(d for *_, d in changed)
    out, cum = [], 0.0
    for n, b, c, d in sorted(changed, key=lambda r: -abs(r[3])):  # sorted() is stable: ties keep sheet order
        cum += abs(d) / gross
        out.append((n, b, c, d, abs(d) / gross, cum, d / net))
        if cum >= 0.8 - 1e-12:
            break
    return out


def _expected_exact(rows: list[tuple[str, Decimal, Decimal]]) -> list[tuple]:
    """``_expected`` in exact decimal arithmetic, for figures of whole ns (or 0.01 us) read as decimals."""
    changed = [(n, b, c, c - b) for n, b, c in rows if c - b != 0]
    gross = sum(abs(d) for *_, d in changed)
    net = sum(d for *_, d in changed)
    out, cum = [], Decimal(0)
    for n, b, c, d in sorted(changed, key=lambda r: -abs(r[3])):  # stable: ties keep the sheet's order
        cum += abs(d) / gross
        out.append((n, b, c, d, abs(d) / gross, cum, d / net))
        if cum >= Decimal("0.8"):
            break
    return out


def _reference_rows(book: Path) -> list[tuple[str, float, float]]:
    st = read_xlsx(book, sheet_name="OperatorCompareStatistic", header=2)
    return list(zip(st["Operator Name"].astype(str), st["Base Device Duration(ms)"].astype(float),
                    st["Comparison Device Duration(ms)"].astype(float), strict=True))


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_contributors_from_the_originals_statistic_sheet(samples: Path, reference_outputs: Path, pair: str) -> None:
    base, comparison = PAIRS[pair]
    for p in (base, comparison):
        if not (samples / p).exists():
            pytest.skip(f"{p} not in samples")
    want = _expected(_reference_rows(reference_outputs / pair / "performance_comparison_result.xlsx"))
    got = compare(str(samples / base), str(samples / comparison)).contributors
    assert (got["Level"] == "operator").all()
    assert got["Rank"].tolist() == list(range(1, len(want) + 1))
    assert got["Name"].tolist() == [w[0] for w in want]
    cols = ["Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share", "Share of Net Diff"]
    for k, col in enumerate(cols, start=1):
        # the sheets' times equal the original's to 0.5 % (ns resolution, docs/differences.md)
        assert got[col].astype(float).tolist() == pytest.approx([w[k] for w in want], rel=5e-3, abs=1e-6), col
    # AccumulateGrad (the NPU side's all-reduce) first in pairs 4 and 8b; four backward / conv ops in pair 5
    assert len(want) == {"4-gpu-alexnet-vs-npu-text-l1": 2, "5-gpu-kineto-resnet50": 4,
                         "8b-npu-traceview-file-vs-dir": 1}[pair]


def _op_statistic_ms(path: Path) -> dict[str, float]:
    """'{OP Type}-{Core Type}' -> Total Time(us) / 1000 of an op_statistic.csv, a repeated key's later row kept
    (reference-2 §6.2), read with the csv module."""
    with open(path, newline="", encoding="utf-8") as fh:
        return {f"{r['OP Type']}-{r['Core Type']}": float(Decimal(r["Total Time(us)"]) / 1000)
                for r in csv.DictReader(fh)}


def test_kernel_type_contributors_from_op_statistic(samples: Path) -> None:
    """Without operator or module sheets and with --use_kernel_type, the contributors are kernel types: every figure
    of the 11 listed rows of the level-1 / level-2 text pair (Name, Base / Comparison / Diff ms, Share, Cumulative
    Share, Share of Net Diff, Rank) from the two op_statistic.csv files, a type one side lacks at 0 ms there.
    Before, the kernel-type level was checked on synthetic rows only. TransData (AI_VECTOR_CORE) leads:
    1423.208 -> 1393.328 us, -0.02988 ms."""
    sides = [samples / TEXT / level / "rank0_ascend_pt" for level in ("level1", "level2")]
    if not all(s.exists() for s in sides):
        pytest.skip("NPU samples absent")
    b, c = (_op_statistic_ms(s / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv") for s in sides)
    want = _expected([(n, b.get(n, 0.0), c.get(n, 0.0)) for n in {**b, **c}])
    got = compare(*(str(s) for s in sides), enable_kernel_compare=True, use_kernel_type=True).contributors
    assert (got["Level"] == "kernel type").all()
    assert got["Rank"].tolist() == list(range(1, len(want) + 1)) and len(want) == 11
    assert got["Name"].tolist() == [w[0] for w in want]
    cols = ["Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share", "Share of Net Diff"]
    for k, col in enumerate(cols, start=1):
        assert got[col].astype(float).tolist() == pytest.approx([w[k] for w in want], rel=1e-9, abs=1e-12), col
    assert want[0][:4] == ("TransData-AI_VECTOR_CORE", 1.423208, 1.393328, pytest.approx(-0.02988, abs=1e-12))


def test_kernel_contributors_from_the_originals_kernel_sheet(reference_outputs: Path) -> None:
    """With the kernel comparison alone the contributors are KernelCompare's rows (a kernel type and its input
    shapes, a shape of N/A left out of the name): the DB excerpts of tests/data/db (reference pair 3's inputs, whose
    KernelCompare equals the original's: test_independent_db_sheets.py) list 40 kernels, every figure computed
    here from the original's pair-3 KernelCompare cells (Total Duration(us) / 1000), but for its one rounding tie,
    which ours rounds half up (TensorMove "4096,9216", 254.385 us: 254.39, the original's 254.38). Before, only a
    row's ms were pinned at the kernel level."""
    ref = read_xlsx(reference_outputs / "3-npu-db-l1-vs-l2" / "performance_comparison_result.xlsx",
                    sheet_name="KernelCompare", header=2)
    names = [k if s == "N/A" else f"{k} {s}" for k, s in zip(ref["Kernel"], ref["Input Shape"], strict=True)]
    # the cells in exact decimals (0.01 us), so that two changes of one size tie (TransData "32,64,55,55" +2.16 us
    # and Mul "1000,4096;" -2.16 us: as floats, 0.09710 - 0.09494 and 0.01494 - 0.01710 ms differ in the 18th
    # place) and keep the sheet's order, TransData first
    ms = [[Decimal(repr(float(v))) / 1000 for v in ref[col]] for col in ("Total Duration(us)", "Total Duration(us).1")]
    # the original's one float-rounded cell, 254.385 us by SQL (test_independent_db_sheets.py), taken half up
    tie = names.index('TensorMove "4096,9216"')
    assert ms[1][tie] == Decimal("0.25438")
    ms[1][tie] = Decimal("0.25439")
    want = [tuple(float(v) if isinstance(v, Decimal) else v for v in w)
            for w in _expected_exact(list(zip(names, *ms, strict=True)))]
    db = Path(__file__).parent / "data" / "db"
    got = compare(str(db / "l1"), str(db / "l2"), enable_kernel_compare=True).contributors
    assert (got["Level"] == "kernel").all() and len(want) == 40
    assert got["Rank"].tolist() == list(range(1, 41))
    assert got["Name"].tolist() == [w[0] for w in want]
    cols = ["Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share", "Share of Net Diff"]
    for k, col in enumerate(cols, start=1):
        assert got[col].astype(float).tolist() == pytest.approx([w[k] for w in want], rel=1e-12, abs=1e-12), col
    # MatMulV2 "32,9216;4096,9216;4096" first: 358.25 -> 372.93 us, +0.01468 ms
    assert want[0][:4] == ('MatMulV2 "32,9216;4096,9216;4096"', 0.35825, 0.37293, pytest.approx(0.01468))


# pair 4's note opens with the one-sided wrapper note (tests/test_one_sided_wrapper.py)
NOTE = re.compile(r"^(?:the base side's operator device time lies under one top-level op .*?; )?"
                  r"all operators together changed by ([+-][0-9.]+) ms, (?:against an E2E change of |under 1% of the "
                  r"E2E change \()([+-][0-9.]+) ms.*?; the Share column is of ([0-9.]+) ms, the sizes of their changes")


@pytest.mark.parametrize("pair", ["4-gpu-alexnet-vs-npu-text-l1", "5-gpu-kineto-resnet50"])
def test_contributors_note_figures_from_the_originals_sheets(samples: Path, reference_outputs: Path,
                                                             pair: str) -> None:
    """The note under the operator contributors where they do not explain the E2E change (JSON
    summary.contributors_note, the console, the Summary sheet): all operators' change (their statistic rows'
    comparison - base, summed), the E2E change and the sum of the changes' sizes the Share column divides by, from
    the original's OperatorCompareStatistic and OverallMetrics (to their last digit, a figure within the parity
    bound: 0.002 ms). Before, they were read off our own OperatorCompareStatistic (test_gate.py, a DB pair)
    or synthetic input."""
    base, comparison = PAIRS[pair]
    for p in (base, comparison):
        if not (samples / p).exists():
            pytest.skip(f"{p} not in samples")
    book = reference_outputs / pair / "performance_comparison_result.xlsx"
    rows = _reference_rows(book)
    e2e = read_xlsx(book, sheet_name="OverallMetrics", header=2).set_index("Index").loc["E2E Time"]
    want = (sum(c - b for _, b, c in rows), float(e2e["Duration(ms).1"]) - float(e2e["Duration(ms)"]),
            sum(abs(c - b) for _, b, c in rows))
    doc = json.loads(json_report.dumps(compare(str(samples / base), str(samples / comparison))))
    note = doc["summary"]["contributors_note"]
    m = NOTE.match(note)
    assert m, note
    assert [float(x) for x in m.groups()] == pytest.approx(want, abs=0.002)
    # pair 5: -0.323 ms of -120.132 ms, 0.439 ms gross; pair 4 (GPU against NPU): +49.536 of -12783.663, 181.926
    assert [round(x, 3) for x in want] == pytest.approx(
        {"4": [49.536, -12783.663, 181.926], "5": [-0.323, -120.132, 0.439]}[pair[0]], abs=0.0015)
