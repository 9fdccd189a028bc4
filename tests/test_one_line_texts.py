"""The JSON's verdict is one line (schema version 3). On reference pair 4 (hta's PARAM AlexNet GPU trace against
the NPU level-1 text export) the idle stretch's sentence followed a line break inside ``summary.verdict``, which a
dashboard or a CI bot showing the text on one line ran together. Every figure below is computed here from the
original's workbook of that pair (reference-outputs/4-gpu-alexnet-vs-npu-text-l1), never read off our reports."""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import openpyxl
from test_json_report import SCHEMA, validate
from xlsxutil import read_xlsx

from msprof_compare import cli

PAIR = "4-gpu-alexnet-vs-npu-text-l1"
BASE = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
COMPARISON = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
IDLE = ("Most of that difference is time with no computing and no communication (validity check: longest idle "
        "stretch), so compare Computing Time and its categories")


def _ms(x: Decimal, signed: bool = False) -> str:
    """A figure to 0.001 ms, a half away from zero, as the Summary's texts round."""
    q = x.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
    return f"{q:+.3f}" if signed else f"{q:.3f}"


def _verdict(book: Path) -> str:
    """The verdict from the original's OverallMetrics E2E times."""
    om = read_xlsx(book, sheet_name="OverallMetrics", header=2).set_index("Index")
    e2e = [Decimal(repr(float(v))) for v in om.loc["E2E Time", ["Duration(ms)", "Duration(ms).1"]]]
    change = e2e[1] - e2e[0]
    pct = (change / e2e[0] * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    ratio = (e2e[0] / e2e[1]).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return (f"E2E time {_ms(e2e[0])} ms -> {_ms(e2e[1])} ms ({_ms(change, True)} ms, {pct:+}%): the comparison is "
            f"faster than the base, the base takes {ratio}x as long")


def test_verdict_and_its_idle_sentence_are_two_one_line_texts(samples, reference_outputs, tmp_path, capsys):
    verdict = _verdict(reference_outputs / PAIR / "performance_comparison_result.xlsx")
    # by hand from that workbook: E2E 12920.244 -> 136.581009 ms
    assert verdict == ("E2E time 12920.244 ms -> 136.581 ms (-12783.663 ms, -98.94%): the comparison is faster than "
                       "the base, the base takes 94.60x as long")
    assert cli.execute({"base_profiling_path": str(samples / BASE),
                        "comparison_profiling_path": str(samples / COMPARISON),
                        "output_path": str(tmp_path / "r.json"), "output_format": "xlsx,json"}) == 0
    console = capsys.readouterr().out.splitlines()
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    summary = doc["summary"]
    assert (doc["schema_version"], summary["verdict"], summary["verdict_idle_note"]) == (3, verdict, IDLE)
    # the console and the Summary sheet as before: the verdict and its idle sentence a line (row) each
    at = console.index(f"{verdict}.")
    assert console[at + 1] == f"{IDLE}."
    col_a = [c.value for c in openpyxl.load_workbook(tmp_path / "r.xlsx")["Summary"]["A"]]
    at = col_a.index(f"{verdict}.")
    assert col_a[at + 1] == f"{IDLE}."


def test_readme_json_excerpt_is_that_pair_s(samples):
    """The README's excerpt of ``summary`` is this pair's, word for word (a run of the same pair through the API,
    whose document the CLI writes)."""
    from msprof_compare import compare
    from msprof_compare.report import json_report

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```json\n(\"verdict\".*?)```", text, re.S)
    shown = json.loads("{" + block + "}")
    summary = json.loads(json_report.dumps(compare(str(samples / BASE), str(samples / COMPARISON))))["summary"]
    assert shown == {"verdict": summary["verdict"], "verdict_idle_note": summary["verdict_idle_note"]}
