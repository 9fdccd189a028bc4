"""The JSON's Summary texts are one line each (schema version 3), and the Summary sheet writes the notes under the
contributors a row per console line. On reference pair 4 (hta's PARAM AlexNet GPU trace against the NPU level-1
text export): the verdict's idle stretch sentence followed a line break inside ``summary.verdict``, and the note
under the contributors was one 729-character line in the JSON and one wrapped cell on the sheet, where the console
gives it four lines. Every figure below is computed here from the original's workbook of that pair
(reference-outputs/4-gpu-alexnet-vs-npu-text-l1), never read off our reports."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import openpyxl
from test_json_report import SCHEMA, validate
from xlsxutil import read_xlsx

from msprof_compare import cli

PAIR = "4-gpu-alexnet-vs-npu-text-l1"
BASE = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
COMPARISON = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
ACCUMULATE_GRAD = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"


def _ms(x: Decimal, signed: bool = False) -> str:
    """A figure to 0.001 ms, a half away from zero, as the Summary's texts round."""
    q = x.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
    return f"{q:+.3f}" if signed else f"{q:.3f}"


def _expected(book: Path) -> tuple[str, str, list[str]]:
    """(verdict, its idle sentence, the note's console lines), from the original's OverallMetrics (E2E, Free),
    OperatorCompareStatistic (every operator's device time) and CommunicationCompare (the all-reduce's total)."""
    om = read_xlsx(book, sheet_name="OverallMetrics", header=2).set_index("Index")
    e2e = [Decimal(repr(float(v))) for v in om.loc["E2E Time", ["Duration(ms)", "Duration(ms).1"]]]
    free = [Decimal(repr(float(v))) for v in om.loc["\tFree", ["Duration(ms)", "Duration(ms).1"]]]
    change, free_change = e2e[1] - e2e[0], free[1] - free[0]
    pct = (change / e2e[0] * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    ratio = (e2e[0] / e2e[1]).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    verdict = (f"E2E time {_ms(e2e[0])} ms -> {_ms(e2e[1])} ms ({_ms(change, True)} ms, {pct:+}%): the comparison "
               f"is faster than the base, the base takes {ratio}x as long")
    computing = [Decimal(repr(float(v))) for v in om.loc["Computing Time", ["Duration(ms)", "Duration(ms).1"]]]
    c_pct = ((computing[1] - computing[0]) / computing[0] * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    idle = ("Most of that difference is time with no computing, communication or copy (validity check: longest idle "
            f"stretch), so compare Computing Time, {_ms(computing[0])} ms -> {_ms(computing[1])} ms "
            f"({_ms(computing[1] - computing[0], True)} ms, {c_pct:+}%), and its categories")
    ops = read_xlsx(book, sheet_name="OperatorCompareStatistic", header=2)
    diffs = [Decimal(repr(float(c))) - Decimal(repr(float(b))) for b, c in zip(
        ops["Base Device Duration(ms)"], ops["Comparison Device Duration(ms)"], strict=True)]
    comm = read_xlsx(book, sheet_name="CommunicationCompare", header=2)
    allreduce = Decimal(repr(float(comm.loc[comm["Communication OP Name.1"] == "allreduce",
                                            "Total Duration(us).1"].sum()))) / 1000
    # the one-sided wrapper note (tests/test_one_sided_wrapper.py): PARAM's [param|cuda] holds every base op, and
    # the comparison side's aten:: / autograd:: ops, counted off the original's statistic rows
    base_ms = [Decimal(repr(float(v))) for v in ops["Base Device Duration(ms)"]]
    names = ops["Operator Name"].tolist()
    held = base_ms[names.index("[param|cuda]")]
    framework = int(sum(n for name, n in zip(names, ops["Comparison Operator Number"], strict=True)
                        if name.startswith(("aten::", "autograd::"))))
    share = (held / sum(base_ms) * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    wrapper = [
        "Note: the base side's operator device time lies under one top-level op that the comparison side has no op of "
        f"(an annotation around the work is one), against the comparison side's {framework} framework top-level ops "
        "(aten::, autograd::), so the operator level compares that op whole, against nothing, and pairs none of the "
        "ops inside it:",
        f"  - base [param|cuda] {_ms(held)} ms, {share}% of the side's {_ms(sum(base_ms))} ms",
        "The op_name_map and max_kernel_num options compare inside a pair of two ops, and the comparison side has no "
        "op of the same work to pair it with: to compare the ops inside, run again with the transparent_op option, "
        "--transparent_op '[param|cuda]', which compares them in its place, as if its event were removed from the "
        "trace (they are then top-level ops, compared by name)."]
    lines = wrapper + [
             f"All operators together changed by {_ms(sum(diffs), True)} ms, against an E2E change of "
             f"{_ms(change, True)} ms: the E2E change is outside their device time (the waterfall puts all of it in "
             f"Free: Other {_ms(free_change, True)} ms; other steps moved {_ms(change - free_change, True)} ms the "
             "other way; Free: Other is device idle time: the device waited less for work, as where the host was "
             "quicker to launch it or to load its data; ApiCompare times the host calls).",
             f"The Share column is of {_ms(sum(abs(d) for d in diffs))} ms, the sizes of their changes added up "
             "(savings do not cancel growth).",
             f"Most of the change of {ACCUMULATE_GRAD} is collective communication launched inside it: communication "
             f"0.000 ms -> {_ms(allreduce)} ms (the base side's trace holds no NCCL / RCCL or other collective "
             "kernel).",
             "These are HCCL ops (HCCL: the NPU's collective communication library, as NCCL on a GPU), which an NPU "
             "text export links to the operator that launched them; the waterfall counts them as communication, not "
             "computing."]
    return verdict, idle, lines


def test_verdict_and_contributors_note_in_one_line_texts(samples, reference_outputs, tmp_path, capsys):
    verdict, idle, lines = _expected(reference_outputs / PAIR / "performance_comparison_result.xlsx")
    # the figures, by hand from that workbook: E2E 12920.244 -> 136.581009 ms, Free 12854.111 -> 25.744050 ms,
    # the all-reduce's 105991.877719 us
    assert verdict == ("E2E time 12920.244 ms -> 136.581 ms (-12783.663 ms, -98.94%): the comparison is faster than "
                       "the base, the base takes 94.60x as long")
    assert "Free: Other -12828.367 ms; other steps moved +44.704 ms" in lines[3] and "105.992 ms" in lines[5]
    assert lines[1] == "  - base [param|cuda] 66.195 ms, 100.0% of the side's 66.195 ms" and " 91 framework" in lines[0]
    assert cli.execute({"base_profiling_path": str(samples / BASE),
                        "comparison_profiling_path": str(samples / COMPARISON),
                        "output_path": str(tmp_path / "r.json"), "output_format": "xlsx,json"}) == 0
    console = capsys.readouterr().out.splitlines()
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    summary = doc["summary"]
    assert (doc["schema_version"], summary["verdict"], summary["verdict_idle_note"]) == (3, verdict, idle)
    assert summary["contributors_note_lines"] == lines
    # the one-line note keeps its words: the lines joined as they were ("; ", the communication note's why in its
    # parentheses), less "Note: " and the closing period
    # the wrapper's block a sentence again: its opening, the wrapper's figures in parentheses, its advice
    assert summary["contributors_note"] == (
        f"{lines[0][6:-1]} ({lines[1][4:]}): t{lines[2][1:-1]}; a{lines[3][1:-1]}; t{lines[4][1:-1]}; "
        f"m{lines[5][1:].split(': communication')[0]} "
        f"({lines[6][len('These are '):-1]}): communication{lines[5].split(': communication', 1)[1][:-1]}")
    assert summary["module_contributors_note"] is None and summary["module_contributors_note_lines"] == []
    # no text of the Summary holds a line break
    texts = [v for v in summary.values() if isinstance(v, str)] + [t for v in summary.values() if isinstance(v, list)
                                                                   for t in v if isinstance(t, str)]
    assert texts and not [t for t in texts if "\n" in t or "\r" in t]
    # the console and the Summary sheet: the verdict and its idle sentence a line (row) each, then the note's four
    at = console.index(f"{verdict}.")
    assert console[at + 1] == f"{idle}."
    at = console.index(lines[0])
    assert console[at:at + len(lines)] == lines
    ws = openpyxl.load_workbook(tmp_path / "r.xlsx")["Summary"]
    col_a = [c.value for c in ws["A"]]
    at = col_a.index(f"{verdict}.")
    assert col_a[at + 1] == f"{idle}."
    at = col_a.index(lines[0])
    assert col_a[at:at + len(lines) + 1] == [*lines, None]  # the row per line; a blank row before the next table
    assert all(ws.cell(at + 1 + k, 1).alignment.wrap_text for k in range(len(lines)))  # each wraps within the width


def test_readme_json_excerpt_is_that_pair_s(samples):
    """The README's excerpt of ``summary`` (verdict, idle note, the note's lines) is this pair's, word for word but
    where it cuts a line short ("..."): a run of the same pair through the API, whose document the CLI writes."""
    import re

    from msprof_compare import compare
    from msprof_compare.report import json_report

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```json\n(\"verdict\".*?)```", text, re.S)
    shown = json.loads("{" + block + "}")
    summary = json.loads(json_report.dumps(compare(str(samples / BASE), str(samples / COMPARISON))))["summary"]
    assert shown["verdict"] == summary["verdict"] and shown["verdict_idle_note"] == summary["verdict_idle_note"]
    got = summary["contributors_note_lines"]
    assert len(shown["contributors_note_lines"]) == len(got)
    for line, full in zip(shown["contributors_note_lines"], got, strict=True):
        head, cut, tail = line.partition("...")
        assert (full.startswith(head) and full.endswith(tail)) if cut else line == full, (line, full)


def test_wrapper_block_is_a_row_per_line_on_the_sheet(samples, tmp_path, capsys):
    """tracelens' vLLM full-graph decode against its piecewise run: each side's operator time lies under a step
    annotation named after its batch (100-character names), so the console gives the note as a block, its opening,
    a "  - " line per side's wrapper and the advice. The sheet wrote the 772 characters in one cell; now the
    block's lines are its rows, and the JSON's list, word for word."""
    inference = samples / "tracelens" / "tests" / "traces" / "inference"
    base, comp = (inference / d / "graph_execution.json.gz"
                  for d in ("vllm_decode_full", "vllm_prefilldecode_piecewise"))
    assert cli.execute({"base_profiling_path": str(base), "comparison_profiling_path": str(comp),
                        "output_path": str(tmp_path / "r.json"), "output_format": "xlsx,json"}) == 0
    console = capsys.readouterr().out.splitlines()
    summary = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["summary"]
    lines = summary["contributors_note_lines"]
    assert len(lines) == 4 and lines[0].startswith("Note: each side's operator device time lies under one top-level")
    assert [line.split(" ", 4)[:4] for line in lines[1:3]] == [["", "", "-", "base"], ["", "", "-", "comparison"]]
    assert lines[3].startswith("To pair them and compare inside, give the op_name_map option the entry ")
    at = console.index(lines[0])
    assert console[at:at + len(lines)] == lines
    col_a = [c.value for c in openpyxl.load_workbook(tmp_path / "r.xlsx")["Summary"]["A"]]
    at = col_a.index(lines[0])
    # the note's rows, then the module contributors' lead (one sentence here) into their table
    assert col_a[at:at + 5] == [*lines, *summary["module_contributors_note_lines"]]
    assert len(summary["module_contributors_note_lines"]) == 1 and col_a[at + 5] is None
