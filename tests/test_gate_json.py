"""The JSON report's ``gate`` (schema version 2): the regression gate's verdict and reasons, which a CI job that
kept the JSON could read only from the exit code and stderr. Each document is validated against the
result schema (msprof_compare/schemas/); its lines are the ones the CLI wrote to stderr (or logged) in the same
run, and its figures are checked against E2E times of the original's reference workbook (reference pair 1) and the
waterfall computed from them by hand."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from test_json_report import SCHEMA, validate

from msprof_compare import cli
from msprof_compare.api import compare

NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"  # E2E 136.581009 ms (reference pair 1)
NPU_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"  # E2E 129.862875 ms
HEATMAP = "msinsight/server/src/test/test_data/heatMap/trace_view.json"  # 6 events, no Overlap Analysis lane


def _reference_e2e_ns(reference_outputs: Path) -> tuple[int, int]:
    """Reference pair 1's E2E times (level 1, level 2) in ns, from the OverallMetrics E2E row of the workbook the
    original wrote (its ms figures, exact to the ns)."""
    import openpyxl

    wb = openpyxl.load_workbook(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                                read_only=True)
    try:
        row = next(r for r in wb["OverallMetrics"].iter_rows(values_only=True) if r[0] == "E2E Time")
    finally:
        wb.close()
    return int(Decimal(str(row[1])) * 1_000_000), int(Decimal(str(row[4])) * 1_000_000)


def _own_e2e_ns(doc: dict) -> tuple[int, int]:
    """The document's own E2E times in ns: its OverallMetrics sheet's E2E row (ms), which the gate does not read."""
    (row,) = [r for s in doc["sheets"] if s["name"] == "OverallMetrics" for r in s["rows"] if r["Index"] == "E2E Time"]
    return int(Decimal(str(row["Duration(ms)"])) * 1_000_000), int(Decimal(str(row["Duration(ms).1"])) * 1_000_000)


def _run(samples: Path, out: Path, base: str, comparison: str, *options: str, **params) -> tuple[int, dict]:
    """One CLI run writing JSON alone into ``out``: its exit code and its document, validated."""
    out.mkdir()
    code = cli.execute({"base_profiling_path": str(samples / base),
                        "comparison_profiling_path": str(samples / comparison), "output_path": str(out),
                        "output_format": "json", **dict.fromkeys(options, True), **params})
    (path,) = out.glob("*.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    assert (doc["$schema"], doc["schema_version"]) == ("urn:msprof-compare:result-schema:3", 3)
    return code, doc


def test_regression_records_the_verdict_and_the_reasons_stderr_gives(samples, reference_outputs, tmp_path, capsys):
    """Pair 1 reversed (level 2 -> level 1) is (136581009 - 129862875) / 129862875 = +5.17 % slower: at 1 % the gate
    fails the run (3), and the document says so with the lines stderr got, the contributors it listed (those that
    grew, AccumulateGrad first, each Diff(ms) as the contributors table holds it) and the waterfall steps it
    named, whose changes are those of the summary's waterfall."""
    code, doc = _run(samples, tmp_path / "out", NPU_L2, NPU_L1, "enable_profiling_compare", "enable_operator_compare",
                     fail_on_regression="1")
    err = capsys.readouterr().err
    gate = doc["gate"]
    assert code == gate["exit_code"] == 3 and gate["regressed"] is True
    assert (gate["threshold_pct"], gate["threshold"]) == (1.0, "1")
    change = (Decimal(136581009) - Decimal(129862875)) / Decimal(129862875) * 100
    assert f"{change:.2f}" == "5.17"
    # the change in ms beside the percent: 136581009 - 129862875 = 6718134 ns, +6.718 ms
    assert gate["lines"][0] == ("Performance regression: E2E time 129.863 ms -> 136.581 ms (+6.718 ms, +5.17%), "
                                "threshold +1%")
    assert (gate["diff_ns"], gate["diff_ms"]) == (6718134, 6.718134)
    assert (gate["diff_ns"], gate["diff_ms"]) == (doc["summary"]["e2e"]["diff_ns"], doc["summary"]["e2e"]["diff_ms"])
    # the two times the first line states, so that the record alone restates it (they were RegressionGate's only):
    # the original's E2E times of the pair (reversed here), and the document's own OverallMetrics E2E row
    l1, l2 = _reference_e2e_ns(reference_outputs)
    assert (gate["base_ns"], gate["comparison_ns"]) == (l2, l1) == _own_e2e_ns(doc) == (129862875, 136581009)
    assert "\n".join(gate["lines"]) in err  # as written, one item a line
    contrib = {r["Name"]: r for r in doc["summary"]["contributors"]}
    assert gate["contributors"] and gate["contributors"][0]["name"].endswith("AccumulateGrad")
    for listed in gate["contributors"]:
        row = contrib[listed["name"]]
        assert (listed["diff_ms"], listed["share"], listed["level"]) == (row["Diff(ms)"], row["Share"], row["Level"])
        assert listed["diff_ms"] > 0 and f"  {listed['name']}: +" in err
    steps = {r["Step"]: r["Delta(ns)"] for r in doc["summary"]["waterfall"]}
    named = [s["step"] for s in gate["waterfall_steps"]]
    assert "Group 0 Communication (uncovered)" in named
    assert [s["delta_ns"] for s in gate["waterfall_steps"]] == [steps[n] for n in named]
    assert all(s["delta_ms"] == s["delta_ns"] / 1e6 for s in gate["waterfall_steps"])
    # the waterfall's steps add up to the E2E change of the reference's E2E times
    total = steps.pop("Comparison E2E")
    assert total == sum(v for v in steps.values() if v is not None) == 136581009 - 129862875


def test_kernel_type_contributors_fit_the_schema(samples, tmp_path):
    """With --use_kernel_type the contributors are KernelTypeCompare's rows (Level "kernel type"): the gate lists
    them, and the schema's level list ("operator", "module", "kernel", "category") refused the document the tool
    wrote (``_run`` validates it). Its names are the sheet's Kernel Type rows, their figures the summary's."""
    code, doc = _run(samples, tmp_path / "out", NPU_L2, NPU_L1, "enable_kernel_compare", "use_kernel_type",
                     fail_on_regression="1")
    listed = doc["gate"]["contributors"]
    assert code == doc["gate"]["exit_code"] == 3 and listed
    rows = {r["Name"]: r for r in doc["summary"]["contributors"]}
    sheet = next(s for s in doc["sheets"] if s["name"] == "KernelTypeCompare")
    kinds = {f"{r['Kernel Type']}-{r['Core Type']}" for r in sheet["rows"]}
    for c in listed:
        assert c["level"] == rows[c["name"]]["Level"] == "kernel type" and c["name"] in kinds
        assert c["diff_ms"] == rows[c["name"]]["Diff(ms)"] > 0


def test_no_regression_and_no_gate(samples, tmp_path, capsys):
    """Pair 1 as given (level 1 -> level 2, 4.92 % faster): exit 0, "regressed" false, the line the run logged,
    no reasons listed. Without the option the key is null."""
    code, doc = _run(samples, tmp_path / "within", NPU_L1, NPU_L2, "enable_profiling_compare", fail_on_regression="0")
    gate = doc["gate"]
    assert (code, gate["exit_code"], gate["regressed"], gate["contributors"], gate["waterfall_steps"]) == (
        0, 0, False, [], [])
    change = (Decimal(129862875) - Decimal(136581009)) / Decimal(136581009) * 100
    assert gate["lines"] == [f"No regression: E2E time 136.581 ms -> 129.863 ms (-6.718 ms, {change:+.2f}%), "
                             "threshold +0%"]
    assert (gate["diff_ns"], gate["diff_ms"]) == (129862875 - 136581009, -6.718134)
    assert gate["lines"][0] in capsys.readouterr().err  # the INFO line
    code, doc = _run(samples, tmp_path / "none", NPU_L1, NPU_L2, "enable_profiling_compare")
    assert code == 0 and doc["gate"] is None and doc["options"]["fail_on_regression"] is None


def test_a_side_without_e2e_time_is_not_judged(samples, reference_outputs, tmp_path, capsys):
    """heatMap's trace_view.json holds no E2E time: the gate cannot judge the run (exit 1, "regressed" null), and
    the document holds the error line stderr got."""
    code, doc = _run(samples, tmp_path / "out", NPU_L1, HEATMAP, "enable_profiling_compare", fail_on_regression="5")
    err = capsys.readouterr().err
    gate = doc["gate"]
    assert (code, gate["exit_code"], gate["regressed"]) == (1, 1, None)
    (line,) = gate["lines"]
    assert line.startswith("error: ") and "heatMap/trace_view.json: no E2E time" in line and line in err
    # the CLI's flag, as stderr says, and the side of the input (the base is the level-1 export, which has one)
    assert line.endswith(", so --fail_on_regression cannot judge the run (comparison side)")
    assert (gate["diff_ns"], gate["diff_ms"]) == (None, None)  # the comparison's E2E is unknown: no change
    # the base's the original's level-1 E2E time; 0 for no E2E time, as summary.e2e reads it: the trace's events
    # name no Overlap Analysis process, whose lane is an NPU trace's E2E window
    events = json.loads((samples / HEATMAP).read_text())
    assert len(events) == 6 and not [e for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                                     and (e.get("args") or {}).get("name") == "Overlap Analysis"]
    assert (gate["base_ns"], gate["comparison_ns"]) == (_reference_e2e_ns(reference_outputs)[0], 0)
    assert (doc["summary"]["e2e"]["base_ns"], doc["summary"]["e2e"]["comparison_ns"]) == (136581009, 0)


def test_gate_times_are_optional_in_the_schema(samples, tmp_path):
    """``gate.base_ns`` / ``comparison_ns`` came into schema version 3 after its first documents: one written
    without them still validates, and the keys, where present, are whole ns or null."""
    _, doc = _run(samples, tmp_path / "out", NPU_L2, NPU_L1, "enable_profiling_compare", fail_on_regression="1")
    schema = json.loads(SCHEMA.read_text())
    earlier = {**doc, "gate": {k: v for k, v in doc["gate"].items() if k not in ("base_ns", "comparison_ns")}}
    assert validate(earlier, schema) == []
    assert validate({**doc, "gate": {**doc["gate"], "base_ns": None}}, schema) == []
    assert validate({**doc, "gate": {**doc["gate"], "base_ns": 129.862875}}, schema) != []


def test_gate_refusal_of_one_input_under_two_paths_names_both_sides(samples):
    """The heatMap excerpt (no Overlap Analysis lane, so no E2E time) given as ``heatMap/trace_view.json`` and
    ``heatMap/./trace_view.json`` is one file on both sides: the refusal said "(base side)", where the loaders'
    notes of the same run say "(both sides)"; under one path it said "(both sides)" already."""
    path = samples / HEATMAP
    res = compare(str(path), f"{path.parent}/./{path.name}", enable_profiling_compare=True)
    code, message = res.regression_gate(5)
    assert code == 1 and message == (f"error: {path}: no E2E time (no device activity or Overlap Analysis data), so "
                                     "regression_gate() cannot judge the run (both sides)")


def test_api_document_names_the_gate_as_compare_takes_it(samples, tmp_path):
    """A document ``to_json`` writes names the option as the caller gave it to ``compare()``, the keyword
    ``fail_on_regression``, not the CLI's flag (its lines said "--fail_on_regression", a flag never typed);
    ``regression_gate()``'s message, the method the caller did not call here, names the method."""
    base, comparison = samples / NPU_L1, samples / HEATMAP
    res = compare(str(base), str(comparison), enable_profiling_compare=True, fail_on_regression=5)
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text(encoding="utf-8"))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    assert (doc["gate"]["exit_code"], doc["gate"]["regressed"]) == (1, None)
    assert doc["gate"]["lines"] == [f"error: {comparison}: no E2E time (no device activity or Overlap Analysis "
                                    "data), so fail_on_regression cannot judge the run (comparison side)"]
    code, message = res.regression_gate(5)
    assert code == 1 and message == doc["gate"]["lines"][0].replace("fail_on_regression", "regression_gate()")


def test_api_document_records_the_gate_of_its_option(samples, tmp_path):
    """``compare(..., fail_on_regression=...)`` keeps the option; its to_json records the gate as the CLI would,
    the verdict ``regression_gate()`` returns (a line naming the option names it as compare() takes it: below)."""
    res = compare(str(samples / NPU_L2), str(samples / NPU_L1), fail_on_regression=5.2)
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text(encoding="utf-8"))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    code, message = res.regression_gate(5.2)
    assert doc["gate"]["exit_code"] == code == 0 and doc["gate"]["regressed"] is False
    assert doc["gate"]["lines"] == message.split("\n")
    assert doc["gate"]["threshold"] == "5.2"


def test_a_run_judges_once(samples, tmp_path, capsys, monkeypatch):
    """The CLI writes the JSON report (its ``gate``) and then applies the gate: both judged the result, each
    time (~2 ms; a whole time breakdown where the run made none). One judgement per run now, with and without
    the time breakdown, the document's lines those stderr got; a second threshold is judged on its own."""
    from msprof_compare.compare import gate

    calls: list[float] = []
    judge = gate.judge

    def counted(result, pct, *args, **kwargs):
        calls.append(pct)
        return judge(result, pct, *args, **kwargs)

    monkeypatch.setattr(gate, "judge", counted)
    for n, options in enumerate((("enable_profiling_compare",), ("enable_operator_compare",))):
        calls.clear()
        code, doc = _run(samples, tmp_path / str(n), NPU_L2, NPU_L1, *options, fail_on_regression="1")
        assert code == doc["gate"]["exit_code"] == 3 and calls == [1.0]
        assert "\n".join(doc["gate"]["lines"]) in capsys.readouterr().err
    res = compare(str(samples / NPU_L2), str(samples / NPU_L1), enable_profiling_compare=True)
    calls.clear()
    assert [res.regression_gate(p)[0] for p in (1, 1, 10)] == [3, 3, 0] and calls == [1.0, 10.0]


def test_the_gate_breakdown_is_made_once_per_result(samples, monkeypatch):
    """A result compared without the time breakdown: the gate makes one for itself (``gate.gate_frames``, a whole
    breakdown of both sides). Each new threshold made it again, and so did ``slim()`` after the gate; it is made
    once now, and each threshold's verdict is a fresh result's (E2E 129.863 -> 136.581 ms: +5.17 %, so 3 at 1 %
    and 0 at 10 %)."""
    from msprof_compare.compare import gate

    made: list[int] = []
    gate_frames = gate.gate_frames

    def counted(result):
        made.append(1)
        return gate_frames(result)

    monkeypatch.setattr(gate, "gate_frames", counted)
    args = (str(samples / NPU_L2), str(samples / NPU_L1))
    res = compare(*args, enable_operator_compare=True)
    assert "e2e" not in res.frames
    verdicts = [res.regression_gate(p) for p in (1, 10)]
    res.slim()
    assert len(made) == 1 and [code for code, _ in verdicts] == [3, 0]
    assert verdicts == [compare(*args, enable_operator_compare=True).regression_gate(p) for p in (1, 10)]
