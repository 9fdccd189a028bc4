"""JSON output (report/json_report.py) against msprof_compare/schemas/result.schema.json, and API == JSON."""

from __future__ import annotations

import functools
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from openpyxl.utils import get_column_letter
from xlsxutil import caption_bands

from msprof_compare.report import json_report

SCHEMA = Path(__file__).resolve().parents[1] / "msprof_compare" / "schemas" / "result.schema.json"
NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


# --------------------------------------------------------------------------- a validator for the subset we use


def validate(instance, schema, root=None, path="$") -> list[str]:
    """JSON Schema 2020-12 subset: type, enum, const, properties, required, additionalProperties,
    items, prefixItems, minItems, maxItems, minimum, maximum, exclusiveMinimum, pattern, anyOf, $ref (local)."""
    root = root if root is not None else schema
    if schema is True or schema == {} or (isinstance(schema, dict) and set(schema) <= {"description"}):
        return []
    if schema is False:
        return [f"{path}: not allowed"]
    errs: list[str] = []
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        errs += validate(instance, target, root, path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        checks = {
            "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str), "null": lambda v: v is None,
            "boolean": lambda v: isinstance(v, bool),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        }
        if not any(checks[t](instance) for t in types):
            return errs + [f"{path}: {instance!r:.60} is not {types}"]
    if "enum" in schema and instance not in schema["enum"]:
        errs.append(f"{path}: {instance!r} not in {schema['enum']}")
    if "const" in schema and instance != schema["const"]:
        errs.append(f"{path}: {instance!r} != {schema['const']!r}")
    if "anyOf" in schema and all(validate(instance, s, root, path) for s in schema["anyOf"]):
        errs.append(f"{path}: matches no anyOf branch")
    if isinstance(instance, (int, float)) and not isinstance(instance, bool):
        if "minimum" in schema and instance < schema["minimum"]:
            errs.append(f"{path}: {instance} < {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            errs.append(f"{path}: {instance} > {schema['maximum']}")
        if "exclusiveMinimum" in schema and instance <= schema["exclusiveMinimum"]:
            errs.append(f"{path}: {instance} <= {schema['exclusiveMinimum']}")
    if isinstance(instance, str) and "pattern" in schema and not re.search(schema["pattern"], instance):
        errs.append(f"{path}: {instance!r} does not match {schema['pattern']}")
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                errs.append(f"{path}: missing {key}")
        props = schema.get("properties", {})
        for key, value in instance.items():
            if key in props:
                errs += validate(value, props[key], root, f"{path}.{key}")
            elif "additionalProperties" in schema:
                errs += validate(value, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(instance, list):
        if len(instance) < schema.get("minItems", 0):
            errs.append(f"{path}: fewer than {schema['minItems']} items")
        if len(instance) > schema.get("maxItems", len(instance)):
            errs.append(f"{path}: more than {schema['maxItems']} items")
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(instance):
            if i < len(prefix):
                errs += validate(item, prefix[i], root, f"{path}[{i}]")
            elif "items" in schema:
                errs += validate(item, schema["items"], root, f"{path}[{i}]")
    return errs


def _strict_loads(text: str):
    def bad(name):
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=bad)


def test_validator_rejects_what_it_should():
    schema = json.loads(SCHEMA.read_text())
    assert validate({"schema_version": 3}, schema)  # missing keys
    wf = {"Step": "x", "Category": "sideways", "Base(ms)": None, "Comparison(ms)": None, "Delta(ms)": None,
          "Cumulative(ms)": 1.0, "Share of E2E Diff": None, "Base(ns)": None, "Comparison(ns)": None,
          "Delta(ns)": 1.5}
    errs = validate(wf, schema["$defs"]["waterfall_step"], schema)
    assert any("sideways" in e for e in errs) and any("Delta(ns)" in e for e in errs)


def test_clean_cells():
    assert json_report.clean(float("nan")) is None
    assert json_report.clean(float("inf")) == "INF" and json_report.clean(-math.inf) == "-INF"
    assert json_report.clean(np.int64(3)) == 3 and isinstance(json_report.clean(np.int64(3)), int)
    assert json_report.clean(pd.NA) is None and json_report.clean(np.bool_(True)) is True
    assert json_report.records(pd.DataFrame({"a": [1.5, np.nan], "a.1": ["x", None]})) == [
        {"a": 1.5, "a.1": "x"}, {"a": None, "a.1": None}]


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def pair1():
    root = Path(__file__).resolve().parents[1].parent / "shared" / "samples"
    if not (root / NPU_L1).is_dir():
        pytest.skip("sample data not found")
    from msprof_compare.api import compare

    return compare(str(root / NPU_L1), str(root / NPU_L2), output_format="xlsx,json")


def test_json_file_validates_against_schema(pair1, tmp_path):
    path = pair1.to_json(str(tmp_path))
    assert re.fullmatch(r"performance_comparison_result_\d{14}\.json", Path(path).name)
    doc = _strict_loads(Path(path).read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA.read_text())
    assert validate(doc, schema) == []
    # the keys every document holds are the schema's required ones (contributors_note, null or a text, was
    # written always but not required, so a consumer could not rely on it)
    assert set(schema["required"]) == set(doc)
    # contributors_net_of_communication too: null where the note names no operator net of communication
    summary = schema["properties"]["summary"]
    assert set(summary["required"]) == set(doc["summary"]) == set(summary["properties"])
    assert doc["summary"]["contributors_net_of_communication"] is None  # pair 1: noise beside AccumulateGrad's change
    # every text of the summary is one line (version 3): a verdict with its idle sentence after a line break, as
    # version 2 wrote it, or a note's line holding one, is refused
    two = "E2E time 2.000 ms -> 1.000 ms (-1.000 ms, -50.00%): the comparison is faster.\nMost of that difference is"
    for key, value in (("verdict", two), ("verdict_idle_note", two), ("contributors_note_lines", [two]),
                       ("module_contributors_note_lines", ["Operators that run inside modules:", two])):
        errs = validate({**doc, "summary": {**doc["summary"], key: value}}, schema)
        assert len(errs) == 1 and errs[0].startswith(f"$.summary.{key}") and "does not match" in errs[0], errs
    assert [s["name"] for s in doc["sheets"]] == pair1.sheet_names
    for s in doc["sheets"]:
        assert len(s["rows"]) == len(pair1.sheet(s["name"]))
        assert list(s["rows"][0]) == s["columns"] == list(pair1.sheet(s["name"]).columns)
    # a second write never replaces the first
    again = pair1.to_json(str(tmp_path / Path(path).name))
    assert again != path and Path(again).name.endswith("_1.json")


def test_json_spans_are_the_workbook_captions(pair1, tmp_path):
    """Each sheet's base / comparison spans are the row-1 caption halves of the workbook (merged under the
    caption, or where a page break may split a half, filled as its caption: excel.caption_range)."""
    import openpyxl

    doc = _strict_loads(json_report.dumps(pair1))
    wb = openpyxl.load_workbook(pair1.to_excel(str(tmp_path)))
    try:
        for s in doc["sheets"]:
            ws = wb[s["name"]]
            base, comp = s["base_span"][0] + 1, s["comparison_span"][0] + 1
            if s["name"] == "Summary":  # one narrow column per span: the captions are stacked in column B
                assert ws.cell(1, base).value.startswith("Base Profiling: ")
                assert (base, comp) == (2, 3) and ws.cell(2, base).value.startswith("Comparison Profiling: ")
                continue
            bands = caption_bands(ws)
            for key, label in (("base_span", "Base Profiling: "), ("comparison_span", "Comparison Profiling: ")):
                first, last = s[key]
                half = [ws.cell(1, j + 1).value for j in range(first, last + 1)]
                assert [v[:len(label)] for v in half if v is not None] == [label], (s["name"], key)
                span = f"{get_column_letter(first + 1)}1:{get_column_letter(last + 1)}1"
                assert first == last or span in bands, (s["name"], key)
    finally:
        wb.close()


def test_json_has_inf_strings_not_nan(pair1):
    text = json_report.dumps(pair1)
    assert "NaN" not in text and "Infinity" not in text
    doc = _strict_loads(text)
    kernel = next(s for s in doc["sheets"] if s["name"] == "KernelCompare")
    ratios = [r["Diff Total Ratio"] for r in kernel["rows"]]
    frame_ratios = pair1.sheet("KernelCompare")["Diff Total Ratio"].tolist()
    assert ratios == ["INF" if isinstance(v, float) and math.isinf(v) else v for v in frame_ratios]


def test_dumps_is_the_json_module_document(pair1):
    """The fast encoder writes the document the json module writes: same values, keys, order and indent;
    only exponents are spelt differently (1e-6, json: 1e-06)."""
    import datetime as dt

    now = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    text = json_report.dumps(pair1)
    reference = json.dumps(json_report.to_document(pair1, now), ensure_ascii=False, allow_nan=False, indent=1)
    doc = _strict_loads(text)
    doc["generated_at"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert json.dumps(doc, ensure_ascii=False, indent=1) == reference
    head = ["{", ' "$schema": "urn:msprof-compare:result-schema:3",', ' "schema_version": 3,']
    assert text.splitlines()[:3] == reference.splitlines()[:3] == head
    assert json_report.dumps(pair1, ascii_only=True).isascii()


def test_dumps_writes_numpy_and_other_str_subclasses(pair1, monkeypatch):
    """A text cell may be a ``numpy.str_`` (a value indexed from a numpy text array, kept as such by a frame
    built from rows) or another str subclass: json wrote them as text; msgspec refuses any type but str,
    so ``clean`` makes them plain str (the run used to end in a TypeError traceback)."""

    class Name(str):
        pass

    frame = pd.DataFrame([[np.str_("aten::mm"), Name("aten::add"), 1]], columns=["a", "b", "c"])
    assert type(frame.iloc[0, 0]) is np.str_
    monkeypatch.setattr(pair1, "frames", {**(pair1.frames or {}), "odd_texts": frame})
    doc = _strict_loads(json_report.dumps(pair1))
    assert doc["frames"]["odd_texts"] == [{"a": "aten::mm", "b": "aten::add", "c": 1}]
    assert type(json_report.clean(np.str_("x"))) is str and type(json_report.clean(Name("y"))) is str


def test_dumps_keeps_a_path_that_is_not_utf8(pair1, monkeypatch):
    """A path with a byte that is not UTF-8 holds a lone surrogate, which msgspec refuses: json writes it, the
    other non-ASCII text unescaped as msgspec would."""
    bad = "/data/run\udcff/trace.json"
    monkeypatch.setattr(json_report, "_profile", lambda p: {"path": bad, "kind": "NPU", "source": "s", "level": ""})
    monkeypatch.setattr(pair1, "frames", {**(pair1.frames or {}), "odd_texts": pd.DataFrame({"a": ["é中文"]})})
    text = json_report.dumps(pair1)
    assert json.loads(text)["base"]["path"] == bad
    assert '"a": "é中文"' in text


def test_ascii_only_escapes_every_non_ascii_text(pair1, monkeypatch):
    """``ascii_only`` (a console that cannot print the text): every non-ASCII character is escaped, the values
    unchanged; without it the text is written as it is."""
    frame = pd.DataFrame({"name": ["aten::é中文", "\U0001F600 op"], "v": [1e-6, 2.5]})
    monkeypatch.setattr(pair1, "frames", {**(pair1.frames or {}), "odd_texts": frame})
    ascii_text, text = json_report.dumps(pair1, ascii_only=True), json_report.dumps(pair1)
    assert ascii_text.isascii() and "\\u00e9\\u4e2d\\u6587" in ascii_text and "\\ud83d\\ude00" in ascii_text
    assert "aten::é中文" in text and "\U0001F600 op" in text
    want = [{"name": "aten::é中文", "v": 1e-6}, {"name": "\U0001F600 op", "v": 2.5}]
    assert _strict_loads(ascii_text)["frames"]["odd_texts"] == _strict_loads(text)["frames"]["odd_texts"] == want


def test_api_frames_equal_json(pair1):
    doc = _strict_loads(json_report.dumps(pair1))
    s = doc["summary"]
    wf = pair1.waterfall
    assert [r["Delta(ns)"] for r in s["waterfall"]] == [None if pd.isna(v) else int(v) for v in wf["Delta(ns)"]]
    assert [r["Step"] for r in s["waterfall"]] == wf["Step"].tolist()
    assert s["e2e"]["base_ns"] == int(wf["Base(ns)"].iloc[0])
    assert s["e2e"]["diff_ns"] == sum(r["Delta(ns)"] for r in s["waterfall"][1:-1])
    assert s["e2e"]["base_ms"] == pytest.approx(136.581009, abs=1e-6)      # reference OverallMetrics E2E
    assert s["e2e"]["comparison_ms"] == pytest.approx(129.862875, abs=1e-6)
    # the reference's E2E times (136.581009 / 129.862875 ms): -6.718134 ms, -4.91879 %
    assert s["e2e"]["diff_ms"] == pytest.approx(-6.718134, abs=1e-6)
    assert s["e2e"]["diff_pct"] == pytest.approx(-6.718134 / 136.581009 * 100, abs=1e-6)
    c = pair1.contributors
    assert [r["Name"] for r in s["contributors"]] == c["Name"].tolist()
    assert [r["Diff(ms)"] for r in s["contributors"]] == pytest.approx(c["Diff(ms)"].astype(float).tolist())
    assert [r["Status"] for r in s["guards"]] == pair1.guards["Status"].tolist()
    assert doc["console_summary"]["headers"] == pair1.summary["headers"]
    assert doc["options"]["output_format"] == "xlsx,json"
    # the Summary results live under "summary" only; "frames" holds the other result frames
    summary_frames = {"waterfall", "contributors", "guards", "e2e", "communication_contributors", "communication",
                      "memory_contributors", "memory"}
    assert not set(doc["frames"]) & summary_frames
    assert set(doc["frames"]) == set(pair1.frames) - summary_frames
    # no operator's memory changed in this pair: its 35 rows allocate 1426.019043 MB on both sides
    assert s["memory"] == pair1.memory_totals and s["memory"]["base_mb"] == pytest.approx(1426.019043, abs=1e-6)
    assert s["memory_contributors"] == json_report.records(pair1.memory_contributors) == []


def test_cli_streams_json_to_stdout(samples, tmp_path, monkeypatch, capsys):
    from msprof_compare import cli

    monkeypatch.chdir(tmp_path)
    code = cli.execute({"base_profiling_path": str(samples / NPU_L1),
                        "comparison_profiling_path": str(samples / NPU_L2),
                        "output_path": "-", "enable_profiling_compare": True})
    out, err = capsys.readouterr()
    assert code == 0
    doc = _strict_loads(out)
    assert doc["summary"]["e2e"]["diff_ns"] == 129_862_875 - 136_581_009
    assert "Model Profiling Time Distribution" in err and "Waterfall" in err
    assert list(tmp_path.iterdir()) == []  # no xlsx unless asked
    code = cli.execute({"base_profiling_path": str(samples / NPU_L1),  # an empty value is refused, nothing written
                        "comparison_profiling_path": str(samples / NPU_L2), "output_format": "",
                        "output_path": "-", "enable_profiling_compare": True})
    assert code == 2 and capsys.readouterr().out == ""
    assert list(tmp_path.iterdir()) == []
    code = cli.execute({"base_profiling_path": str(samples / NPU_L1),  # asked: into the current directory
                        "comparison_profiling_path": str(samples / NPU_L2), "output_format": "xlsx,json",
                        "output_path": "-", "enable_profiling_compare": True})
    out, err = capsys.readouterr()
    assert code == 0 and _strict_loads(out)["summary"]["e2e"]["diff_ns"] == 129_862_875 - 136_581_009
    assert [p.suffix for p in tmp_path.iterdir()] == [".xlsx"]


def test_cli_writes_both_formats(samples, tmp_path, capsys):
    from msprof_compare import cli

    code = cli.execute({"base_profiling_path": str(samples / NPU_L1),
                        "comparison_profiling_path": str(samples / NPU_L2),
                        "output_path": str(tmp_path), "enable_profiling_compare": True,
                        "output_format": "xlsx,json"})
    assert code == 0
    names = sorted(p.suffix for p in tmp_path.iterdir())
    assert names == [".json", ".xlsx"]
    out = capsys.readouterr().out
    assert "E2E Time Difference" in out and "Top Contributors" in out


def test_run_without_rows_writes_the_json_but_no_workbook(tmp_path, capsys):
    """README / differences.md: a run whose comparisons make no row writes no workbook (a warning says so), while
    the JSON report asked for is still written, with no sheets: kernel compare alone on the bundled GPU pair."""
    from msprof_compare import cli

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    code = cli.execute({"base_profiling_path": str(sample / "bert-small_h100.json.gz"),
                        "comparison_profiling_path": str(sample / "bert-small_mi300.json.gz"),
                        "output_path": str(tmp_path), "enable_kernel_compare": True, "output_format": "xlsx,json"})
    assert code == 0
    written = list(tmp_path.iterdir())
    assert [p.suffix for p in written] == [".json"]
    doc = json.loads(written[0].read_text(encoding="utf-8"))
    assert doc["sheets"] == [] and doc["summary"]["guards"]
    assert "no workbook was written" in capsys.readouterr().err


def test_write_json_to_stream(monkeypatch):
    class R:  # the smallest object to_document accepts
        base = comparison = type("P", (), {"path": "a", "kind": "GPU", "source": "kineto", "level": ""})()
        options = None
        sheets: list = []
        summary = None
        frames: dict = {}
        verdict = ""

    from dataclasses import dataclass

    @dataclass
    class Opts:
        output_format: str = "json"
        fail_on_regression: float | None = None  # no gate: the document's gate is null

    R.options = Opts()
    buf = io.StringIO()
    monkeypatch.setattr("sys.stdout", buf)
    assert json_report.write_json(R(), "-") == "-"
    doc = _strict_loads(buf.getvalue())
    assert doc["summary"] == {"e2e": None, "waterfall": [], "contributors": [], "guards": [], "contributors_note": None,
                              "contributors_note_lines": [], "contributors_net_of_communication": None,
                              "module_contributors": [],
                              "module_contributors_note": None, "module_contributors_note_lines": [],
                              "outside_modules_note": None, "verdict": None, "verdict_idle_note": None,
                              "communication_contributors": [], "communication": None,
                              "memory_contributors": [], "memory": None, "memory_contributors_note": None}
    assert validate(doc, json.loads(SCHEMA.read_text())) == []


def _minimal_result(frames: dict | None = None):
    """The smallest object to_document accepts (as in test_write_json_to_stream), with ``frames``."""
    from dataclasses import dataclass

    @dataclass
    class Opts:
        output_format: str = "json"
        fail_on_regression: float | None = None  # no gate: the document's gate is null

    class R:
        base = comparison = type("P", (), {"path": "a", "kind": "GPU", "source": "kineto", "level": ""})()
        options = Opts()
        sheets: list = []
        summary = None
        verdict = ""

    r = R()
    r.frames = frames or {}
    return r


def test_write_json_to_a_console_of_another_encoding(monkeypatch):
    """``-o -`` on a console whose encoding is not UTF-8: a document it can show (Latin-1 and "é") is the
    usual one (msgspec's: 1e-6); one it cannot (ASCII) is the json module's with \\u escapes (1e-06)."""
    r = _minimal_result({"odd": pd.DataFrame({"name": ["é"], "v": [1e-6]})})
    for encoding, escaped in (("latin-1", False), ("ascii", True)):
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding=encoding)
        monkeypatch.setattr("sys.stdout", stream)
        assert json_report.write_json(r, "-") == "-"
        text = raw.getvalue().decode(encoding)
        assert _strict_loads(text)["frames"]["odd"] == [{"name": "é", "v": 1e-6}]
        assert ('"name": "\\u00e9"' in text and '"v": 1e-06' in text) == escaped
        assert ('"name": "é"' in text and '"v": 1e-6' in text) == (not escaped)


def test_write_json_to_a_closed_stdout(monkeypatch):
    """The API's ``to_json("-")`` in a process started without stdout (``>&-``, a service): one data error."""
    import sys

    from msprof_compare.errors import ProfileError

    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(ProfileError) as info:
        json_report.write_json(_minimal_result(), "-")
    assert (info.value.path, info.value.message) == (
        "<stdout>", "standard output is closed; nowhere to write the JSON result")


def test_the_json_file_is_made_after_the_workbook_and_holds_dumps_text(pair1, tmp_path, monkeypatch):
    """``--output_format xlsx,json``: the JSON file is ``dumps``'s text of the run's instant and one line break, and
    its document is made only once the workbook is rendered. Made first, the document's text was held through the
    render, the run's peak: +290 MiB of peak RSS on the 2 x 516 MB DB pair."""
    import datetime as dt

    from msprof_compare.report import deliver, excel

    order: list[str] = []
    render, to_document = excel.render, json_report.to_document
    monkeypatch.setattr(excel, "render", lambda *a, **k: (order.append("render"), render(*a, **k))[1])
    monkeypatch.setattr(json_report, "to_document",
                        lambda *a, **k: (order.append("document"), to_document(*a, **k))[1])
    now = dt.datetime(2026, 12, 7, 22, 10, 5, tzinfo=dt.timezone.utc)
    written = deliver.write_reports(pair1, str(tmp_path), now=now)
    assert order == ["render", "document"]
    assert [Path(p).suffix for p in written] == [".xlsx", ".json"]
    data = Path(written[1]).read_bytes()
    assert data == (json_report.dumps(pair1, generated_at=now) + "\n").encode("utf-8")
    assert json.loads(data)["generated_at"] == "2026-12-07T22:10:05Z"


def test_the_file_written_a_piece_at_a_time_is_document_text(pair1, tmp_path, monkeypatch):
    """``write_document_file`` writes ``document_text``'s text (msgspec's, formatted whole) a piece at a time:
    pair 1's document, lists longer than a piece at each depth (their last piece short or full), empty containers,
    escaped and non-ASCII texts. A document msgspec refuses (a lone surrogate of a path that is not UTF-8) is
    ``json``'s text, as ``document_text`` gives it, and the text write refuses it as it did."""
    monkeypatch.setattr(json_report, "PIECE_ROWS", 3)
    rows = [{"a": i, "b": [i, {"c": None}], "d": "x\ny é中文", "e": {}, "f": []} for i in range(7)]
    docs = [json_report.to_document(pair1), {"k": list(range(6))}, {"a": {"b": {"c": {"d": rows[:4]}}}},
            {"sheets": [{"name": "S", "rows": rows}, {"name": "T", "rows": rows[:3]}], "frames": {"f": rows[:6]},
             "e": {}, "l": [], "n": None, "s": "\u2028\"", "x": 1e-6, "rows": rows, "nest": [[rows[:2], []], {}]},
            {}, {"x": [{}]}]
    for i, doc in enumerate(docs):
        json_report.write_document_file(str(tmp_path / f"{i}.json"), doc)
        assert (tmp_path / f"{i}.json").read_bytes() == (json_report.document_text(doc) + "\n").encode("utf-8"), i
    odd = {"path": "/data/run\udcff/trace.json", "rows": rows}
    with pytest.raises(UnicodeEncodeError):
        json_report.write_document_file(str(tmp_path / "odd.json"), odd)
    with pytest.raises(UnicodeEncodeError):  # what the text write of document_text's text did
        json_report.write_document(str(tmp_path / "odd2.json"), json_report.document_text(odd))
    assert (tmp_path / "odd.json").read_bytes() == (tmp_path / "odd2.json").read_bytes()


@pytest.mark.parametrize("piece", [50, 4096])
def test_the_sheets_and_frames_made_a_piece_at_a_time_as_written(pair1, tmp_path, monkeypatch, piece):
    """The JSON file's document leaves its sheets and frames to be made as they are written (``pieces``): a sheet's
    record when it is reached, its rows and a frame's ``PIECE_ROWS`` at a time, never a whole long sheet's
    records at once. The bytes are those of the whole document's text; a cell msgspec refuses (a lone surrogate)
    gives ``json``'s text of the whole document, as before."""
    import datetime as dt

    monkeypatch.setattr(json_report, "PIECE_ROWS", piece)
    now = dt.datetime(2026, 12, 7, 23, 50, 5, tzinfo=dt.timezone.utc)
    made: list[int] = []
    real = json_report.records
    monkeypatch.setattr(json_report, "records", lambda f: made.append(0 if f is None else len(f)) or real(f))
    whole = json_report.to_document(pair1, now)
    eager, made[:] = list(made), []
    doc = json_report.to_document(pair1, now, pieces=True)
    later = [len(s) for s in pair1.sheets if len(s)] + [
        len(f) for n, f in pair1.frames.items() if n not in json_report.SUMMARY_FRAMES
        and n not in json_report.SUMMARY_OBJECTS and isinstance(f, pd.DataFrame)]
    assert sum(eager) - sum(made) == sum(later) and max(later) > 3  # the sheets' and frames' rows left to the write
    made.clear()
    json_report.write_document_file(str(tmp_path / "pieces.json"), doc)
    assert (tmp_path / "pieces.json").read_bytes() == (json_report.document_text(whole) + "\n").encode("utf-8")
    assert sum(made) == sum(later) and max(made) == min(piece, max(later))
    frame = pd.DataFrame({"a": ["x", "\udcff y", None] * 3, "b": [1.5, float("nan"), 2] * 3})
    lazy = {"frames": {"f": json_report._Rows(frame)}, "sheets": [functools.partial(lambda: {"r": 1})]}
    with pytest.raises(UnicodeEncodeError):
        json_report.write_document_file(str(tmp_path / "odd.json"), lazy)
    want = {"frames": {"f": json_report.records(frame)}, "sheets": [{"r": 1}]}
    with pytest.raises(UnicodeEncodeError):  # what the text write of the whole document's text did
        json_report.write_document(str(tmp_path / "odd2.json"), json_report.document_text(want))
    assert (tmp_path / "odd.json").read_bytes() == (tmp_path / "odd2.json").read_bytes()


def test_the_file_written_a_piece_at_a_time_gets_the_platform_line_breaks(tmp_path, monkeypatch):
    """The lines get the line breaks a text file's write gives (``\\r\\n`` on Windows), so the file is the one
    the text write of ``document_text``'s text made; an escaped line break in a text stays as it is."""
    doc = {"a": [1, "x\ny"], "b": {}}
    want = b'{\n "a": [\n  1,\n  "x\\ny"\n ],\n "b": {}\n}\n'
    json_report.write_document_file(str(tmp_path / "unix.json"), doc)
    assert (tmp_path / "unix.json").read_bytes() == want
    monkeypatch.setattr(json_report.os, "linesep", "\r\n")
    json_report.write_document_file(str(tmp_path / "win.json"), doc)
    assert (tmp_path / "win.json").read_bytes() == want.replace(b"\n", b"\r\n")


# --------------------------------------------------------------------------- JSON == xlsx, the schema's notes

NPU_DB_L1 = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
NPU_DB_L2 = "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"


def test_schema_names_the_note_checks_of_a_text_vs_db_step_run(samples):
    """The guard Status description of the result schema names the checks whose failure is a "note". The
    text export of msinsight's level1 rank0 run against the DB export of the same script (level1 rank0), step 50,
    gives two notes (docs/differences.md, Additions): "NPU export kind" (text vs db) and "time breakdown of the
    steps" (a text export's breakdown covers the whole profile, a DB export's the step). The description named
    only GPU vendor, NPU export kind and NPU profiler settings."""
    from msprof_compare.api import compare

    result = compare(str(samples / NPU_L1), str(samples / NPU_DB_L1), base_step=50, comparison_step=50,
                     enable_profiling_compare=True, enable_operator_compare=True)
    doc = _strict_loads(json_report.dumps(result))
    notes = {g["Check"] for g in doc["summary"]["guards"] if g["Status"] == "note"}
    assert notes == {"NPU export kind", "time breakdown of the steps"}
    described = json.loads(SCHEMA.read_text())["$defs"]["guard"]["properties"]["Status"]["description"]
    assert [check for check in sorted(notes) if check not in described] == []


CELL_LIMIT = 32767  # characters an xlsx cell holds


def _same_cell(value, cell) -> bool:
    """A JSON value against the openpyxl value of its xlsx cell: null and "" are blank cells, numbers are kept
    to 16 significant digits in the xlsx, "INF" / "-INF" are texts in both; the xlsx escapes a control character
    as ``_xHHHH_`` (a call stack's \\r: ``_x000D_``), which openpyxl leaves in the text; a text over Excel's
    32,767 characters is whole in the JSON and its first 32,767 in the cell (docs/differences.md, "Long detail
    texts are not cut short in the data": pair 5's aten::add_ kernels, 96,952 characters; ASCII, so characters
    and Excel's UTF-16 units agree)."""
    if isinstance(cell, str):
        cell = re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m.group(1), 16)), cell)
    if value is None or value == "":
        return cell is None
    if isinstance(value, bool) or isinstance(cell, bool):
        return value is cell
    if isinstance(value, (int, float)):
        return isinstance(cell, (int, float)) and float(cell) == float(f"{float(value):.16G}")
    if isinstance(value, str) and len(value) > CELL_LIMIT and value.isascii():
        return cell == value[:CELL_LIMIT]
    return cell == value


KINETO_RESNET = "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.{}.pt.trace.json.gz"
MSPROF = "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704{}"


@pytest.mark.parametrize("pair", [
    (NPU_L1, NPU_L2), (NPU_DB_L1, NPU_DB_L2),
    (KINETO_RESNET.format("1623143089861"), KINETO_RESNET.format("1623143566756")),
    (MSPROF.format("322_COJGGGCANRMICFBC/device_0/timeline/msprof_0_2_1.json"),
     MSPROF.format("567_GQFAMHBKGODKJMLA/device_1/timeline/msprof_1_0_1.json")),
], ids=["text-l1-l2", "db-l1-l2", "kineto-resnet50", "mindspore-msprof"])
def test_every_json_figure_is_the_workbook_cell(samples, tmp_path, pair):
    """Every cell of every sheet, the Summary's contributor and check tables (and its note) are in the JSON as
    in the xlsx of the same run, and summary.e2e / the waterfall's category totals are OverallMetrics' E2E,
    Computing, Uncovered Communication and Free Time (ms) of that workbook. Pairs 1, 3, 5 and 9d of
    reference-outputs (text and DB exports, level1 -> level2; two Kineto traces; MindSpore's CANN timelines,
    category-level contributors); the DB pair has a contributors note and module contributors."""
    import openpyxl

    from msprof_compare.api import compare

    result = compare(str(samples / pair[0]), str(samples / pair[1]))
    doc = _strict_loads(json_report.dumps(result))
    wb = openpyxl.load_workbook(result.to_excel(str(tmp_path)))
    try:
        assert wb.sheetnames == [s["name"] for s in doc["sheets"]]
        for s in doc["sheets"]:
            ws = wb[s["name"]]
            assert [c.value for c in ws[3]][:len(s["headers"])] == s["headers"]
            for i, row in enumerate(s["rows"]):
                cells = [ws.cell(4 + i, j + 1).value for j in range(len(s["columns"]))]
                bad = [(k, row[k], c) for k, c in zip(s["columns"], cells, strict=True) if not _same_cell(row[k], c)]
                assert bad == [], (s["name"], i)
            if s["name"] != "Summary":
                assert ws.max_row == 3 + len(s["rows"]), s["name"]
        ws, summary = wb["Summary"], doc["summary"]
        titles = {str(c.value).split(" (")[0]: c.row for c in ws["A"] if isinstance(c.value, str)}
        first = titles["Top Contributors"] + 2
        keys = ["Name", "Base(ms)", "Comparison(ms)", "Diff(ms)", "Share", "Cumulative Share", "Rank"]
        for i, row in enumerate(summary["contributors"]):
            assert all(_same_cell(row[k], ws.cell(first + i, j + 1).value) for j, k in enumerate(keys)), i
        # under the table, a row each: the note's lines, the row on contributors no module row names, the module
        # contributors' lead
        said = [*summary["contributors_note_lines"], summary["outside_modules_note"],
                *summary["module_contributors_note_lines"]]
        said = [s for s in said if s]
        assert bool(summary["contributors_note"]) == bool(summary["contributors_note_lines"])
        under = [ws.cell(first + len(summary["contributors"]) + k, 1).value for k in range(len(said))]
        assert under == said
        # the module contributors (DB pair: 19, the sheet shows the first 10, as the console) and their lead
        modules = summary["module_contributors"]
        assert ("Top Module Contributors" in titles) == bool(modules) == bool(summary["module_contributors_note"]) \
            == bool(summary["module_contributors_note_lines"])
        if modules:
            first = titles["Top Module Contributors"] + 2
            assert ws.cell(first - 4, 1).value == summary["module_contributors_note_lines"][-1]
            for i, row in enumerate(modules[:10]):
                assert all(_same_cell(row[k], ws.cell(first + i, j + 1).value) for j, k in enumerate(keys)), i
            assert ws.cell(first + min(len(modules), 10), 1).value is None
        first = titles["Validity checks"] + 2
        keys = ["Check", "Status", "Base", "Comparison", "Detail"]
        for i, row in enumerate(summary["guards"]):
            # a Base / Comparison word too wide for its column breaks after its separators in the sheet (the
            # settings' ACL_AICORE_ / PIPE_ / UTILIZATION): the JSON's text less those breaks
            cells = [ws.cell(first + i, j + 1).value for j in range(5)]
            cells[2:4] = [v.replace("\n", "") if isinstance(v, str) else v for v in cells[2:4]]
            assert all(_same_cell(row[k], c) for k, c in zip(keys, cells, strict=True)), i
        assert ws.cell(first + len(summary["guards"]), 1).value is None
        om = {r["Index"]: r for r in next(s for s in doc["sheets"] if s["name"] == "OverallMetrics")["rows"]}
        e2e, steps = summary["e2e"], summary["waterfall"][1:-1]
        assert (om["E2E Time"]["Duration(ms)"], om["E2E Time"]["Duration(ms).1"]) == (e2e["base_ms"],
                                                                                     e2e["comparison_ms"])
        for index, category in (("Computing Time", "computing"), ("Uncovered Communication Time", "communication"),
                                ("Free Time", "free")):
            ns = [sum(w[side] for w in steps if w["Category"] == category) for side in ("Base(ns)", "Comparison(ns)")]
            if index not in om:  # a row neither side has (pair 5 communicates not at all): no step of it
                assert ns == [0, 0], index
                continue
            assert [om[index]["Duration(ms)"], om[index]["Duration(ms).1"]] == pytest.approx(
                [v / 1e6 for v in ns], abs=1e-9), index
    finally:
        wb.close()


def test_tool_version_is_the_package_version():
    """The report names the running package's version, which is the one pyproject.toml declares (two places
    hold it: a release that bumps one must bump the other)."""
    import re

    from msprof_compare import __version__
    from msprof_compare.report.json_report import _version

    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    assert _version() == __version__ == declared
