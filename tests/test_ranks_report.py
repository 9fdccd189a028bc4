"""The job overview file of a rank-by-rank compare (``performance_comparison_result_ranks_{ts}.xlsx`` / ``.json``).

Expected figures are the profiler's own, as in test_ranks.py: each rank's ``step_trace_time.csv`` (Stage = the
step's E2E time, Computing, Communication(Not Overlapped), Free, in us), a file the time breakdown does not read;
and, for rank 1, the figures of its pair compared alone.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import weakref
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from unittest.mock import ANY

import openpyxl
import pytest

import msprof_compare
from msprof_compare import RankCycle, api
from msprof_compare.errors import ProfileError
from tests.cliutil import error_lines, run_inproc
from tests.test_json_report import validate
from tests.test_ranks import ANALYZE, KINETO, PT, TEXT0, TEXT1, TEXT2, ms, stage, table_rows
from tests.xlsxutil import caption_bands, within

OVERVIEW = re.compile(r"performance_comparison_result_ranks_(\d{14})\.(xlsx|json)$")
RANK_REPORT = re.compile(r"performance_comparison_result_rank(\d)_(\d{14})\.(xlsx|json)$")
#: step_trace_time.csv's columns, by the overview's metrics
STAGE = {"e2e": "Stage", "computing": "Computing", "uncovered_communication": "Communication(Not Overlapped)",
         "free": "Free"}
HEADERS = ["Rank", "E2E Time(ms)", "Computing Time(ms)", "Uncovered Communication Time(ms)", "Free Time(ms)",
           "E2E Time(ms)", "Computing Time(ms)", "Uncovered Communication Time(ms)", "Free Time(ms)", "E2E Diff(ms)",
           "E2E Diff Ratio", "Computing Diff(ms)", "Uncovered Communication Diff(ms)", "Free Diff(ms)"]

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "msprof_compare" / "schemas" / "ranks.schema.json")
                    .read_text())

pytestmark = pytest.mark.skipif(not PT.is_dir(), reason="sample data not found")


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory):
    """``-bp text/level0 -d text/level1`` (two ranks each), both reports, the gate at 20 %: (process, -o folder,
    the overview's workbook, its JSON document)."""
    out = tmp_path_factory.mktemp("overview")
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT0), "-d", str(TEXT1), "-o",
                           str(out), "--output_format", "xlsx,json", "--fail_on_regression", "20"],
                          capture_output=True, text=True, timeout=300)
    book = openpyxl.load_workbook(next(out.glob("performance_comparison_result_ranks_*.xlsx")))
    doc = json.loads(next(out.glob("performance_comparison_result_ranks_*.json")).read_text())
    return proc, out, book, doc


@pytest.fixture(scope="module")
def gate_only(tmp_path_factory: pytest.TempPathFactory):
    """``-bp text/level0 -d text/level1`` with ``--enable_api_compare --fail_on_regression 20``: no profiling
    compare, so the gate makes the breakdown; (process, the overview's workbook, its JSON document)."""
    out = tmp_path_factory.mktemp("gate_only")
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT0), "-d", str(TEXT1), "-o",
                           str(out), "--output_format", "xlsx,json", "--enable_api_compare", "--fail_on_regression",
                           "20"], capture_output=True, text=True, timeout=300)
    book = openpyxl.load_workbook(next(out.glob("performance_comparison_result_ranks_*.xlsx")))
    doc = json.loads(next(out.glob("performance_comparison_result_ranks_*.json")).read_text())
    return proc, book, doc


def profiler_ns(folder: Path, rank: int) -> dict[str, int]:
    """step_trace_time.csv's figures in whole ns (its us carry float noise: 8827.472999999998), E2E their sum."""
    us = stage(folder, rank)
    out = {m: int(us[STAGE[m]].quantize(Decimal("0.001")) * 1000) for m in STAGE if m != "e2e"}
    return {"e2e": sum(out.values()), **out}


def ranks_rows(book: openpyxl.Workbook) -> list[list]:
    """The Ranks sheet's data rows (row 4 on)."""
    return [list(r) for r in book["Ranks"].iter_rows(min_row=4, values_only=True)]


def test_written_beside_the_rank_reports_with_their_timestamp(gated):
    proc, out, book, _ = gated
    assert proc.returncode == 3, proc.stderr  # the gate failed: the run is complete, the overview written
    names = sorted(p.name for p in out.iterdir())
    overview = [OVERVIEW.match(n) for n in names if OVERVIEW.match(n)]
    ranks = [RANK_REPORT.match(n) for n in names if RANK_REPORT.match(n)]
    assert len(names) == 6 and sorted(m[2] for m in overview) == ["json", "xlsx"] and len(ranks) == 4
    assert {m[1] for m in overview} == {m[2] for m in ranks}  # one timestamp for the job
    paths = [str(out / m[0]) for m in sorted(overview, key=lambda m: m[2] == "json")]  # the workbook first
    assert f"\nRanks overview: {', '.join(paths)}\n" in proc.stdout
    for path in paths:  # logged as a rank's reports are, with no rank before it
        assert f"[INFO] The comparison result file has been generated: {path}\n" in proc.stderr
    # the gate's line stays the last
    assert error_lines(proc.stderr)[-1] == (
        "error: --fail_on_regression 20: rank 1 regressed beyond the threshold; the job (slowest rank per side) "
        f"+{(profiler_ns(TEXT1, 0)['e2e'] - profiler_ns(TEXT0, 0)['e2e']) / 1e6:.3f} ms, +17.49%, within it")
    assert book.sheetnames == ["Ranks"]
    # the header rows and the Rank column, which names each row, stay in view while the table scrolls right
    assert book["Ranks"].freeze_panes == "B4"


def test_figures_are_the_profilers_and_each_ranks_own(gated):
    """Every figure of both files against the profiler's step_trace_time.csv, whose columns are us to the ns (with
    float noise): E2E is the sum of its Computing, Communication(Not Overlapped) and Free (README's rank 0: E2E
    116.251 -> 136.581 ms, 116251.182 -> 136581.009 us; its Stage, 116251.25 us, rounds to the same ms); rank 1's
    against its pair compared alone."""
    _, _, book, doc = gated
    rows = ranks_rows(book)
    assert [r[0] for r in rows] == [0, 1] and [r["rank"] for r in doc["ranks"]] == [0, 1]
    for rank, row, record in zip((0, 1), rows, doc["ranks"], strict=True):
        b, c = (profiler_ns(folder, rank) for folder in (TEXT0, TEXT1))
        for k, metric in enumerate(STAGE):
            base_ns, comp_ns = b[metric], c[metric]
            assert record[metric]["base_ns"] == base_ns and record[metric]["comparison_ns"] == comp_ns
            assert record[metric]["diff_ns"] == comp_ns - base_ns  # exact
            # the workbook: ms as the JSON's, each the ns over 1e6
            assert row[1 + k] == record[metric]["base_ms"] == base_ns / 1e6
            assert row[5 + k] == record[metric]["comparison_ms"] == comp_ns / 1e6
            assert row[9 + k + (k > 0)] == record[metric]["diff_ms"] == (comp_ns - base_ns) / 1e6
        e2e = Decimal(c["e2e"] - b["e2e"]) / b["e2e"]
        assert round(record["e2e"]["diff_pct"], 10) == round(float(e2e * 100), 10)
        assert row[10] == record["e2e"]["diff_ratio"] == float((1 + e2e).quantize(Decimal("0.0001")))
        for ns, us in ((b["e2e"], stage(TEXT0, rank)["Stage"]), (c["e2e"], stage(TEXT1, rank)["Stage"])):
            assert ms(Decimal(ns) / 1000) == ms(us)  # the console's 3 decimals
    assert doc["ranks"][0]["e2e"]["base_ms"] == 116.251182 and doc["ranks"][0]["e2e"]["comparison_ms"] == 136.581009
    single = api.compare(TEXT0 / "rank1_ascend_pt", TEXT1 / "rank1_ascend_pt", enable_profiling_compare=True)
    frame = single.frames["overall"].set_index(["side", "metric"])["ns"]
    for metric in STAGE:
        assert (doc["ranks"][1][metric]["base_ns"], doc["ranks"][1][metric]["comparison_ns"]) == \
            (frame[("base", metric)], frame[("comparison", metric)])
    sheet = single.sheet("OverallMetrics")
    assert rows[1][10] == sheet.loc[sheet["Index"] == "E2E Time", "Diff Ratio"].item()  # its workbook's ratio


def test_job_figures_and_verdicts(gated):
    """The slowest rank of each side (step_trace_time.csv's largest Stage), its change, the console's job line in
    row 2; each rank's verdict against 20 %: rank 0 +17.49 %, rank 1 +31.12 %."""
    proc, _, book, doc = gated
    slow = [max((0, 1), key=lambda r: profiler_ns(folder, r)["e2e"]) for folder in (TEXT0, TEXT1)]
    b_ns, c_ns = (profiler_ns(folder, r)["e2e"] for folder, r in zip((TEXT0, TEXT1), slow, strict=True))
    job = doc["job"]
    assert (job["base_rank"], job["comparison_rank"]) == tuple(slow)
    assert (job["base_ns"], job["comparison_ns"], job["diff_ns"]) == (b_ns, c_ns, c_ns - b_ns)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("Job (slowest rank per side)"))
    # beside column A, which each printed page repeats; then the job's gate (rank 1 alone regressed at 20 %)
    assert book["Ranks"]["B2"].value == (f"{line}\n--fail_on_regression 20 (exit code 3): rank 1 regressed beyond "
                                         "the threshold")
    assert doc["job_line"] == line
    assert doc["fail_on_regression"] == 20.0
    assert [r["regressed"] for r in doc["ranks"]] == [False, True]
    ws = book["Ranks"]
    assert ws["O3"].value == "Regressed (> 20%)" and [r[14] for r in ranks_rows(book)] == ["no", "yes"]


def test_gate_alone_shows_the_e2e_times_it_judged(gate_only, gated):
    """Without the profiling compare the gate's breakdown gives E2E alone: each rank's times in the JSON, the
    sheet, the rank line, the table and the job line are step_trace_time.csv's, and those of the same ranks
    compared with the profiling compare (``gated``: its rank lines, table cells, job line and E2E records); the
    verdicts stand beside them (rank 0 +17.49 %, rank 1 +31.12 % against 20 %); no other metric is shown."""
    proc, book, doc = gate_only
    full, _, _, full_doc = gated
    assert proc.returncode == 3, proc.stderr
    assert validate(doc, SCHEMA) == []
    for record, other in zip(doc["ranks"], full_doc["ranks"], strict=True):
        rank = record["rank"]
        assert set(record) == {"rank", "base_path", "comparison_path", "reports", "regressed", "e2e"}
        assert (record["e2e"]["base_ns"], record["e2e"]["comparison_ns"]) == \
            (profiler_ns(TEXT0, rank)["e2e"], profiler_ns(TEXT1, rank)["e2e"])
        assert record["e2e"] == other["e2e"] and record["regressed"] == other["regressed"]
    assert [r["regressed"] for r in doc["ranks"]] == [False, True]
    assert doc["job"] == full_doc["job"] and doc["job_line"] == full_doc["job_line"]
    ws = book["Ranks"]
    assert [c.value for c in ws[3]] == ["Rank", "E2E Time(ms)", "E2E Time(ms)", "E2E Diff(ms)", "E2E Diff Ratio",
                                        "Regressed (> 20%)", "Workbook", "JSON Report", "Base Input",
                                        "Comparison Input"]
    assert [r[:6] for r in ranks_rows(book)] == [
        [r["rank"], r["e2e"]["base_ms"], r["e2e"]["comparison_ms"], r["e2e"]["diff_ms"], r["e2e"]["diff_ratio"],
         "yes" if r["regressed"] else "no"] for r in full_doc["ranks"]]
    # then the job's verdict (rank 1 alone regressed at 20 %: _regressed_by_hand)
    assert ws["B2"].value == (f"{full_doc['job_line']}\n--fail_on_regression 20 (exit code 3): rank 1 regressed "
                              "beyond the threshold")
    assert (ws["B1"].value, ws["C1"].value) == (f"Base Profiling: {TEXT0}", f"Comparison Profiling: {TEXT1}")

    def console(text: str) -> tuple[list[str], list[list[str]], list[str]]:
        """The rank lines up to their reports, the table's first five cells, the job line."""
        lines = text.splitlines()
        return ([re.sub(r"\), \S*performance_comparison.*", ")", x) for x in lines if x.startswith("rank ")],
                [row[:5] for row in table_rows(text).values()], [x for x in lines if x.startswith("Job (")])

    mine, theirs = console(proc.stdout), console(full.stdout)
    assert mine == theirs and len(mine[0]) == 2 and len(mine[2]) == 1
    assert mine[0][1] == "rank 1: E2E 100.602 ms -> 131.913 ms (+31.310 ms, +31.12%)"
    assert all(len(row) == 5 for row in table_rows(proc.stdout).values())  # no Computing, ... Diff


def test_gate_breakdown_is_made_once_per_rank(capsys, tmp_path, monkeypatch):
    """The figures are the gate's own breakdown's (``frames["e2e"]``), not a second one: two sides' breakdowns per
    rank; each folder of ranks is read once, the one-sided ranks included."""
    from msprof_compare.compare import overall
    from msprof_compare.loaders import ranks

    made: list[str] = []
    read: list[str] = []
    real_breakdown, real_discover = overall.breakdown_of, ranks.discover
    monkeypatch.setattr(overall, "breakdown_of", lambda profile, *a: made.append(profile.path) or
                        real_breakdown(profile, *a))
    monkeypatch.setattr(ranks, "discover", lambda folder, *a: read.append(str(folder)) or real_discover(folder, *a))
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                                "--enable_api_compare", "--fail_on_regression", "20", "--output_format", "json")
    assert code == 3, err
    assert sorted(made) == sorted(str(f / f"rank{r}_ascend_pt") for f in (TEXT0, TEXT1) for r in (0, 1))
    assert read == [str(TEXT0), str(TEXT1)]
    assert "rank 0: E2E 116.251 ms -> 136.581 ms" in out


def test_layout_and_formats(gated):
    """Headers, number formats (ms to the us as the Summary's, the ratio as OverallMetrics'), frozen header rows
    and Rank column, a filter, the job's folders as the captions, the rank workbooks linked by their names beside
    the file."""
    _, out, book, doc = gated
    ws = book["Ranks"]
    headers = [c.value for c in ws[3]]
    assert headers == [*HEADERS, "Regressed (> 20%)", "Largest Step", "Largest Step Diff(ms)",
                       "Workbook", "JSON Report", "Base Input", "Comparison Input"]
    assert ws.freeze_panes == "B4" and ws.auto_filter.ref == "A3:U5"  # the headers and Rank stay in view
    # the job line and the job's gate, in B2 (not in column A, which each printed page repeats), wrap in the first
    # printed page's columns, as they are longer than those (test_printed_pages_cut_no_repeated_row)
    assert ws["A2"].value is None
    assert ws["B2"].font.b and ws["B2"].border.bottom.style is None and ws["B2"].alignment.wrap_text
    assert (ws["B1"].value, ws["F1"].value) == (f"Base Profiling: {TEXT0}", f"Comparison Profiling: {TEXT1}")
    # each caption fills its half; its merge may be the part of the half that prints on one page, which depends on
    # the columns' widths and so on the inputs' paths (excel.caption_range)
    assert caption_bands(ws) == ["B1:E1", "F1:I1"] and "B2:I2" in {str(r) for r in ws.merged_cells.ranges}
    assert all(any(within(str(m), band) for band in caption_bands(ws))
               for m in ws.merged_cells.ranges if str(m) != "B2:I2")
    for row in ws.iter_rows(min_row=4, max_row=5):
        assert {c.number_format for c in row[1:10] + row[11:14] + (row[16],)} == {"#,##0.000"}
        assert row[10].number_format == "0.00##########%" and row[10].fill.fgColor.rgb.endswith("FF0000")  # worse: red
        assert row[0].number_format == "#,##0" and all(c.data_type == "s" for c in row[14:16] + row[17:])
        rank = row[0].value
        step = doc["ranks"][rank]["largest_step"]  # what drove the rank's change: test_ranks' figures
        assert (row[15].value, row[16].value) == (step["step"], step["diff_ms"])
        assert row[17].hyperlink.target == row[17].value == doc["ranks"][rank]["reports"][0]
        assert (row[17].font.u, row[17].font.color.rgb) == ("single", "FF0000FF")  # shown as a link
        assert (out / row[17].value).is_file() and RANK_REPORT.match(row[17].value)[1] == str(rank)
        assert row[18].value == doc["ranks"][rank]["reports"][1] and row[18].hyperlink is None
        assert (row[19].value, row[20].value) == (str(TEXT0 / f"rank{rank}_ascend_pt"),
                                                  str(TEXT1 / f"rank{rank}_ascend_pt"))
    assert doc["$schema"] == "urn:msprof-compare:ranks-schema:2" and doc["schema_version"] == 2
    assert validate(doc, SCHEMA) == []  # msprof_compare/schemas/ranks.schema.json
    # version 1 wrote "INF" where a side had no E2E time (now null, test_a_side_without_time): a version 1 document
    # is no version 2 one, and says so by its version
    one = {**doc, "$schema": "urn:msprof-compare:ranks-schema:1", "schema_version": 1,
           "ranks": [{**doc["ranks"][0], "e2e": {**doc["ranks"][0]["e2e"], "diff_ratio": "INF"}}]}
    assert validate(one, SCHEMA) == ["$.$schema: 'urn:msprof-compare:ranks-schema:1' != "
                                     "'urn:msprof-compare:ranks-schema:2'", "$.schema_version: 1 != 2",
                                     "$.ranks[0].e2e.diff_ratio: 'INF' is not ['number', 'null']"]
    broken = {**doc, "ranks": [{**doc["ranks"][0], "e2e": {**doc["ranks"][0]["e2e"], "diff_ratio": "1.17"}}],
              "extra": 1}
    assert validate(broken, SCHEMA) == ["$.ranks[0].e2e.diff_ratio: '1.17' is not ['number', 'null']",
                                        "$.extra: not allowed"]
    assert doc["not_compared"] == []  # both folders hold ranks 0 and 1
    assert validate({k: v for k, v in doc.items() if k != "not_compared"}, SCHEMA) == ["$: missing not_compared"]
    alone = {"rank": 2, "only_in": "base", "base_path": "b/2", "comparison_path": None}
    assert validate({**doc, "not_compared": [alone, {**alone, "only_in": "comparison", "base_path": None,
                                                     "comparison_path": "c/2"}]}, SCHEMA) == []
    assert validate({**doc, "not_compared": [{**alone, "comparison_path": "c/2"}]}, SCHEMA) == \
        ["$.not_compared: matches no anyOf branch"]  # a rank of both sides was compared
    assert (doc["base_path"], doc["comparison_path"]) == (str(TEXT0), str(TEXT1))


def column_width(ws, index: int) -> float:
    """The width of column ``index`` (1-based), of the column range that holds it."""
    return next(d.width for d in ws.column_dimensions.values() if d.min <= index <= d.max)


def test_input_columns_fit_their_paths(gated):
    """The Base / Comparison Input columns were 60 characters wide: the cell beside cut the samples' 71-character
    paths to ".../level0/rank0_ascend" (where a run's paths differ, at their end). They fit the longest path, up
    to `INPUT_MAX_WIDTH`, beside which each printed page still repeats the Rank column."""
    from msprof_compare.report.excel import _print_across
    from msprof_compare.report.ranks_report import INPUT_MAX_WIDTH, sheet

    _, _, book, doc = gated
    ws = book["Ranks"]
    inputs = [c.column for c in ws[3] if c.value in ("Base Input", "Comparison Input")]
    for row in ws.iter_rows(min_row=4, max_row=5):
        for j in inputs:
            path = row[j - 1].value
            assert len(path) > 60 and column_width(ws, j) >= len(path) + 2
    long = {**doc, "ranks": [{**doc["ranks"][0], "base_path": "/run" * 100}]}
    table = sheet(long)
    assert [c.width for c in table.columns if c.header.endswith("Input")] == \
        [INPUT_MAX_WIDTH, len(doc["ranks"][0]["comparison_path"]) + 2]
    assert _print_across(table)[1] == 1  # the Rank column repeats on each page
    wider = [replace(c, width=c.width + 10) if c.header == "Base Input" else c for c in table.columns]
    assert _print_across(replace(table, columns=wider))[1] == 0  # wider, no page would repeat it


def test_profiling_off_lists_ranks_and_reports(capsys, tmp_path):
    """--enable_operator_compare alone, text/level1 (ranks 0, 1) against text/level2 (rank 0), JSON only: the
    overview's JSON alone, with the compared rank, its report and inputs, no figures and no job."""
    code, out, err = run_inproc(capsys, "-bp", str(TEXT1), "-d", str(TEXT2), "-o", str(tmp_path),
                                "--enable_operator_compare", "--output_format", "json")
    assert code == 0, err
    names = sorted(p.name for p in tmp_path.iterdir())
    assert [bool(OVERVIEW.match(n)) for n in names] == [False, True], names  # rank0_... sorts first
    doc = json.loads((tmp_path / names[1]).read_text())
    assert doc["ranks"] == [{"rank": 0, "base_path": str(TEXT1 / "rank0_ascend_pt"),
                             "comparison_path": str(TEXT2 / "rank0_ascend_pt"), "reports": [names[0]],
                             "regressed": None}]
    assert doc["job"] is None and doc["job_line"] is None and doc["fail_on_regression"] is None
    assert doc["not_compared"] == [{"rank": 1, "only_in": "base", "base_path": str(TEXT1 / "rank1_ascend_pt"),
                                    "comparison_path": None}]
    assert validate(doc, SCHEMA) == []
    assert f"Ranks overview: {tmp_path / names[1]}\n" in out
    # the table of report names says why it holds no figure, and what makes them
    assert f"| {names[0]} |\n" in out and "\nNo E2E time per rank: --enable_profiling_compare (or " \
        "--fail_on_regression) makes the time breakdown; the rank reports hold what was compared\n" in out


def _hccl_ns(folder: Path, rank: int) -> int:
    """The rank's communication time from its raw trace_view.json: the HCCL lane's hcom_ ops' durations summed (us,
    exact decimals), in whole ns."""
    events = json.loads((folder / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_bytes(),
                        parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    us = sum(Decimal(str(e["dur"])) for e in events if e.get("ph") == "X" and process.get(e["pid"]) == "HCCL"
             and e["name"].startswith("hcom_"))
    return int((us * 1000).quantize(Decimal(1), ROUND_HALF_UP))


def test_only_communication_compare_shows_each_ranks_communication_and_says_why_no_time(capsys, tmp_path):
    """--enable_communication_compare alone, text level0 -> level1: no time breakdown, so each rank's line, the table
    and the overview hold its communication time (the sums CommunicationCompare made), which the raw traces' HCCL
    ops give (rank 0 85.517 -> 105.992 ms), then once the line saying why there is no time; with the gate too (its
    own breakdown: E2E figures and the job line) neither."""
    out_dir = tmp_path / "comm"
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(out_dir),
                                "--enable_communication_compare", "--output_format", "json")
    assert code == 0, err
    assert out.count("No E2E time per rank: ") == 1 and "Job (" not in out
    assert "Ranks: Communication Time and Diff (ms)" in out
    (overview_path,) = out_dir.glob("performance_comparison_result_ranks_*.json")
    doc = json.loads(overview_path.read_text())
    assert validate(doc, SCHEMA) == []
    for rank in (0, 1):
        b, c = _hccl_ns(TEXT0, rank), _hccl_ns(TEXT1, rank)
        record = doc["ranks"][rank]
        # the op rows' sums, to the ns: within 1 ns of the raw traces' exact ones (rank 1's base 68605711 ns of
        # 68605.71078125 us reads 68605712, the sum of the rows' rounded totals)
        got = record["communication"]
        assert abs(got["base_ns"] - b) <= 1 and abs(got["comparison_ns"] - c) <= 1, (got, b, c)
        assert got["diff_ns"] == got["comparison_ns"] - got["base_ns"] and "e2e" not in record
        cells = [f"{b / 1e6:.3f}", f"{c / 1e6:.3f}", f"{(c - b) / 1e6:+.3f}", f"{(c - b) / b * 100:+.2f}%",
                 record["reports"][0]]
        assert f"| {rank:^4} | " in out and any(
            [x.strip() for x in ln.strip("|").split("|")] == [str(rank), *cells] for ln in out.splitlines())
        assert f"rank {rank}: communication {cells[0]} ms -> {cells[1]} ms ({cells[2]} ms, {cells[3]}), " in out
    assert (_hccl_ns(TEXT0, 0), _hccl_ns(TEXT1, 0)) == (85_516_889, 105_991_878)  # the figures the docs quote
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path / "gate"),
                                "--enable_communication_compare", "--fail_on_regression", "50")
    assert code == 0, err
    assert "No E2E time per rank" not in out and "Communication Time and Diff" not in out
    assert "Job (slowest rank per side): " in out


def test_a_rank_one_folder_alone_holds_is_listed_not_compared(tmp_path):
    """text/level1 (ranks 0, 1) against text/level2 (rank 0), the gate alone: rank 0's E2E times are
    step_trace_time.csv's; rank 1, only in the base, follows it in the sheet, its figures and verdict blank, the
    Compared column saying so (sortable by Rank, filterable by Compared), its input named; the JSON lists it."""
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT1), "-d", str(TEXT2), "-o",
                           str(tmp_path), "--output_format", "xlsx,json", "--enable_api_compare",
                           "--fail_on_regression", "20"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"Rank only in the base {TEXT1}, not compared: 1" in proc.stderr
    doc = json.loads(next(tmp_path.glob("performance_comparison_result_ranks_*.json")).read_text())
    assert validate(doc, SCHEMA) == []
    assert doc["not_compared"] == [{"rank": 1, "only_in": "base", "base_path": str(TEXT1 / "rank1_ascend_pt"),
                                    "comparison_path": None}]
    b_ns, c_ns = profiler_ns(TEXT1, 0)["e2e"], profiler_ns(TEXT2, 0)["e2e"]  # 136.581009 -> 129.862875 ms
    assert (doc["ranks"][0]["e2e"]["base_ns"], doc["ranks"][0]["e2e"]["comparison_ns"]) == (b_ns, c_ns)
    book = openpyxl.load_workbook(next(tmp_path.glob("performance_comparison_result_ranks_*.xlsx")))
    ws = book["Ranks"]
    assert [c.value for c in ws[3]] == ["Rank", "E2E Time(ms)", "E2E Time(ms)", "E2E Diff(ms)", "E2E Diff Ratio",
                                        "Regressed (> 20%)", "Workbook", "JSON Report", "Compared", "Base Input",
                                        "Comparison Input"]
    reports = doc["ranks"][0]["reports"]
    assert ranks_rows(book) == [
        [0, b_ns / 1e6, c_ns / 1e6, (c_ns - b_ns) / 1e6, 0.9508, "no", *reports, "yes",
         str(TEXT1 / "rank0_ascend_pt"), str(TEXT2 / "rank0_ascend_pt")],
        [1, None, None, None, None, None, None, None, "no (base only)", str(TEXT1 / "rank1_ascend_pt"), None]]
    assert ws["A5"].data_type == "n" and ws.auto_filter.ref == "A3:K5"


def test_api_overview_names_the_ranks_compare_ranks_left_out(tmp_path):
    """``compare_ranks`` of text/level2 (rank 0) against text/level1 (ranks 0, 1): its iterator carries rank 1, only
    in the comparison, which ``ranks_overview`` of the iterator itself names, as of a generator of the caller's
    given ``not_compared``; the sheet's row says "comparison only" and leaves the base input blank. Results paired by
    hand leave it unknown (null); a rank both compared and not is refused. Slim results of the gate alone give the
    E2E times of its breakdown (step_trace_time.csv's)."""
    from msprof_compare.report.ranks_report import write_overview

    results = msprof_compare.compare_ranks(TEXT2, TEXT1, enable_api_compare=True)
    want = {1: (None, str(TEXT1 / "rank1_ascend_pt"))}
    assert results.not_compared == want
    doc = msprof_compare.ranks_overview(results)
    assert doc["not_compared"] == [{"rank": 1, "only_in": "comparison", "base_path": None,
                                    "comparison_path": str(TEXT1 / "rank1_ascend_pt")}]
    assert validate(doc, SCHEMA) == []
    (path,) = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))
    assert ranks_rows(openpyxl.load_workbook(path)) == [  # no report was named: no report column
        [0, "yes", str(TEXT2 / "rank0_ascend_pt"), str(TEXT1 / "rank0_ascend_pt")],
        [1, "no (comparison only)", None, str(TEXT1 / "rank1_ascend_pt")]]
    results = msprof_compare.compare_ranks(TEXT2, TEXT1, enable_api_compare=True)

    def each():
        for rank, result in results:
            yield rank, result
            del result

    assert msprof_compare.ranks_overview(each())["not_compared"] is None  # a generator of the caller's: not known
    results = msprof_compare.compare_ranks(TEXT2, TEXT1, enable_api_compare=True)
    assert msprof_compare.ranks_overview((x for x in results), not_compared=results.not_compared) == \
        {**doc, "generated_at": ANY}
    # slim results (as pickled back from workers) of the gate alone keep the E2E times its breakdown made
    results = msprof_compare.compare_ranks(TEXT2, TEXT1, enable_api_compare=True, fail_on_regression=20)
    slim = [(rank, result.slim()) for rank, result in results]
    gated = msprof_compare.ranks_overview(slim, not_compared=results.not_compared)
    assert (gated["ranks"][0]["e2e"]["base_ns"], gated["ranks"][0]["e2e"]["comparison_ns"]) == \
        (profiler_ns(TEXT2, 0)["e2e"], profiler_ns(TEXT1, 0)["e2e"])
    assert gated["ranks"][0]["regressed"] is False and gated["not_compared"] == doc["not_compared"]
    with pytest.raises(msprof_compare.UsageError, match=r"^ranks_overview: rank 1 is given both compared and not"):
        msprof_compare.ranks_overview(msprof_compare.compare_ranks(TEXT1, TEXT1, enable_api_compare=True),
                                      not_compared=want)


def test_workbook_without_figures(tmp_path):
    """The Ranks sheet of a compare without the time breakdown: ranks, the gate's verdicts (rank 0 not judged),
    reports, inputs; the captions over the inputs."""
    from msprof_compare.report.ranks_report import overview, write_overview

    doc = overview([(0, None, ["d/r0.xlsx"]), (2, None, [])], {0: ("b/0", "c/0"), 2: ("b/2", "c/2")}, ("b", "c"),
                   gates={0: 1, 2: 0}, pct=2.5)
    (path,) = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))
    ws = openpyxl.load_workbook(path)["Ranks"]
    assert [c.value for c in ws[3]] == ["Rank", "Regressed (> 2.5%)", "Workbook", "Base Input", "Comparison Input"]
    assert ranks_rows(ws.parent) == [[0, "not judged (no E2E time)", "r0.xlsx", "b/0", "c/0"],
                                     [2, "no", None, "b/2", "c/2"]]
    # no job line without figures: row 2 states the job's gate alone (rank 0 not judged, 2 within: exit code 1), in
    # column A, as the sheet prints one page wide
    assert (ws["D1"].value, ws["E1"].value, ws["A2"].value) == (
        "Base Profiling: b", "Comparison Profiling: c",
        "--fail_on_regression 2.5 (exit code 1): rank 0 could not be judged (no E2E time)")
    assert [r["regressed"] for r in doc["ranks"]] == [None, False] and doc["job"] is None
    assert validate(doc, SCHEMA) == []


@pytest.mark.skipif(shutil.which("soffice") is None or shutil.which("pdftotext") is None,
                    reason="needs soffice and pdftotext (apt-get install libreoffice-calc poppler-utils)")
def test_printed_pages_cut_no_repeated_row(tmp_path):
    """LibreOffice prints a 150-rank overview three pages across and three down, each page repeating column A
    (Rank) and rows 1-3. Row 2 (the ranks selected, the job line, the gate's verdict) lies over the first page's
    columns that are not repeated, wrapped: in A2 it printed cut at column A's edge ("Job (slowe") on every page
    across, and it ran on past the first page's last column. Its pages down carry it whole, its pages across none
    of it."""
    import subprocess

    from msprof_compare.report.ranks_report import overview, write_overview

    n = 150
    rows = [(r, {"e2e": (100_000_000 + r * 1000, 130_000_000 + r), "computing": (50_000_000, 50_000_100),
                 "uncovered_communication": (40_000_000, 70_000_000), "free": (10_000_000 + r * 1000, 9_999_900)},
             [f"performance_comparison_result_rank{r}_20260101000000.xlsx"]) for r in range(n)]
    inputs = {r: (f"/jobs/base/rank{r}_ascend_pt", f"/jobs/comparison/rank{r}_ascend_pt") for r in range(n)}
    doc = overview(rows, inputs, ("/jobs/base", "/jobs/comparison"), {r: 3 for r in range(n)}, 20.0,
                   rank_list=tuple(range(n + 1)))
    (path,) = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))
    ws = openpyxl.load_workbook(path)["Ranks"]
    note = " ".join(map(str, range(32))).replace(" ", ", ")
    # rank 150, selected, has no row (compared or not): row 2 names it, as the console's job line would
    note = f"Ranks selected: {note}, ... (151 in all) (rank 150 not compared)\n{doc['job_line']}"
    # every compared rank is 30 % slower, past the 20 % gate: the verdict names the first 32, as "Ranks selected"
    first = ", ".join(map(str, range(32)))
    note += f"\n--fail_on_regression 20 (exit code 3): ranks {first}, ... (150 in all) regressed beyond the threshold"
    assert ws["B2"].value == note and ws["A2"].value is None and ws["B2"].alignment.wrap_text
    # each caption fills its half; its merge may be the part of the half that prints on one page, which depends on
    # the columns' widths and so on the inputs' paths (excel.caption_range)
    assert caption_bands(ws) == ["B1:E1", "F1:I1"] and "B2:I2" in {str(r) for r in ws.merged_cells.ranges}
    assert all(any(within(str(m), band) for band in caption_bands(ws))
               for m in ws.merged_cells.ranges if str(m) != "B2:I2")
    profile = tmp_path / "profile"
    subprocess.run(["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{profile}",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), path], check=True, capture_output=True,
                   timeout=300)
    text = subprocess.run(["pdftotext", "-layout", str(Path(path).with_suffix(".pdf")), "-"], check=True,
                          capture_output=True, text=True).stdout
    # three pages across; how many bands of rows down depends on the scale, which depends on the font LibreOffice
    # puts for Calibri (9 pages with DejaVu Sans, 12 with the metric-compatible Carlito)
    pages = [p for p in text.split("\f") if re.search(r"Ranks\s+Page \d+ of \d+", p)]
    assert len(pages) % 3 == 0 and len(pages) >= 6
    heads = [c.value for c in ws[3]]
    for k, page in enumerate(pages):
        header = next(line.split() for line in page.splitlines() if line.startswith("Rank "))
        across = k % 3  # pages over, then down: each band of rows on three pages
        if across == 0:  # the merge ends with the first page's last column, as LibreOffice broke the page
            assert " ".join(header).endswith(f"Time(ms) {heads[8]}") and heads[8] == "Free Time(ms)"
            assert " ".join(note.split()) in " ".join(page.split()), k
        else:
            assert "Job (" not in page and "Ranks selected" not in page, k
        if across == 1:
            assert header[:3] == ["Rank", *heads[9].split()]  # the next page starts with I's neighbour, J


def test_never_overwrites_and_keeps_text_as_text(tmp_path):
    """A taken name gets the first ``_N`` free for both files; a path that reads as a formula stays text."""
    from msprof_compare.report.ranks_report import overview, write_overview

    figures = {m: (1_000_000, 2_000_000) for m in STAGE}
    doc = overview([(0, figures, ["=HYPERLINK(\"x\").xlsx"])], {0: ("=1+1", "@SUM(A1)")}, ("+b", "-c"),
                   gates={0: 3}, pct=50.0)
    stem = "performance_comparison_result_ranks_20260101000000"
    (tmp_path / f"{stem}.json").write_text("kept")
    paths = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx", "json"))
    assert [Path(p).name for p in paths] == [f"{stem}_1.xlsx", f"{stem}_1.json"]
    assert (tmp_path / f"{stem}.json").read_text() == "kept" and not (tmp_path / f"{stem}.xlsx").exists()
    for name in (f"{stem}.xlsx", f"{stem}_2.xlsx"):  # the workbook alone: the first name free for it
        assert [Path(p).name for p in write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))] == [name]
    ws = openpyxl.load_workbook(paths[0])["Ranks"]
    row = list(ws[4])
    assert [c.value for c in row[14:]] == ["yes", "=HYPERLINK(\"x\").xlsx", "=1+1", "@SUM(A1)"]
    assert all(c.data_type == "s" for c in row[14:]) and ws["B1"].data_type == "s"
    assert ws["B1"].value == "Base Profiling: +b"
    assert json.loads(Path(paths[1]).read_text())["ranks"][0]["base_path"] == "=1+1"
    assert validate(doc, SCHEMA) == []


def test_not_written_when_a_rank_fails(capsys, tmp_path, monkeypatch):
    """A bad rank stops the job (exit 1): rank 0's reports stay, no overview is written."""
    real = api._compare_inputs

    def failing(base, comparison, *rest):
        if "rank1" in base:
            raise ProfileError(base, "broken")
        return real(base, comparison, *rest)

    monkeypatch.setattr(api, "_compare_inputs", failing)
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                                "--enable_profiling_compare")
    assert code == 1 and error_lines(err)[-1].endswith("rank1_ascend_pt: broken"), err
    assert [RANK_REPORT.match(p.name)[1] for p in tmp_path.iterdir()] == ["0"]
    assert "Ranks overview" not in out


def test_api_overview_of_kineto_ranks_is_the_single_compares(monkeypatch):
    """``ranks_overview`` over ``compare_ranks``' iterator (hta's two sampled Kineto traces against themselves),
    through a generator as README's: each rank's figures are its pair's compared alone, every change zero, the
    gate's verdict no regression; no earlier result is alive when a rank loads (README's ``del`` after ``yield``)."""
    written: dict[int, list[str]] = {}
    results: list[weakref.ref] = []
    alive: list[int] = []
    real = api._compare_inputs

    def counted(*args):
        gc.collect()
        alive.append(sum(r() is not None for r in results))
        result = real(*args)
        results.append(weakref.ref(result))
        return result

    monkeypatch.setattr(api, "_compare_inputs", counted)

    def each():
        for rank, result in msprof_compare.compare_ranks(KINETO, KINETO, enable_profiling_compare=True,
                                                         fail_on_regression=0):
            written[rank] = [f"out/rank{rank}.xlsx"]
            yield rank, result
            del result

    doc = msprof_compare.ranks_overview(each(), written)
    assert alive == [0, 0] and results[0]() is None
    assert [r["rank"] for r in doc["ranks"]] == [0, 1] and doc["fail_on_regression"] == 0.0
    assert validate(doc, SCHEMA) == []
    assert (doc["base_path"], doc["comparison_path"]) == (str(KINETO), str(KINETO))
    for record in doc["ranks"]:
        trace = KINETO / f"sampled_rank-{record['rank']}.json.gz"
        single = api.compare(trace, trace, enable_profiling_compare=True).frames["overall"]
        ns = single.set_index(["side", "metric"])["ns"]
        for metric in STAGE:
            assert record[metric]["base_ns"] == record[metric]["comparison_ns"] == ns[("base", metric)]
            assert record[metric]["diff_ns"] == 0
        assert record["e2e"]["base_ns"] > 0 and record["e2e"]["diff_ratio"] == 1.0
        assert record["regressed"] is False and record["reports"] == [f"rank{record['rank']}.xlsx"]
        assert record["base_path"] == str(trace)


def test_api_overview_refuses_an_iterator_a_loop_has_taken_ranks_of():
    """A notebook loops over ``compare_ranks``' iterator to read each verdict, then passes that iterator to
    ``ranks_overview``: it was told "no (rank, CompareResult) pair was given", and one that had taken rank 0 with
    ``next`` got a job of rank 1 alone, rank 0 neither a record nor in ``not_compared``. Both are refused, naming
    what was taken and what to pass instead; a fresh call gives both ranks. A used-up generator of the caller's is
    named as a possible cause."""
    from msprof_compare.errors import UsageError

    peeked = msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True)
    assert next(peeked)[0] == 0
    with pytest.raises(UsageError, match=r"^ranks_overview: this compare_ranks iterator has given rank 0 already "
                                         r"\(1 of its 2; it gives each once\).*pass a new compare_ranks\(\.\.\.\) "
                                         r"call, or pass the pairs kept while looping"):
        msprof_compare.ranks_overview(peeked)
    looped = msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True)
    assert [rank for rank, _ in looped] == [0, 1]
    with pytest.raises(UsageError, match=r"has given ranks 0, 1 already \(2 of its 2;"):
        msprof_compare.ranks_overview(looped)
    fresh = msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True)
    assert [r["rank"] for r in msprof_compare.ranks_overview(fresh)["ranks"]] == [0, 1]
    with pytest.raises(UsageError) as info:
        msprof_compare.ranks_overview(x for x in [])
    assert str(info.value) == ("ranks_overview: no (rank, CompareResult) pair was given (an iterator or generator "
                               "gives its pairs once: was it used up by a loop?)")
    with pytest.raises(UsageError) as info:
        msprof_compare.ranks_overview([])
    assert str(info.value) == "ranks_overview: no (rank, CompareResult) pair was given"


def test_api_overview_refuses_what_is_no_rank_result_pair():
    """``ranks_overview`` of something other than ``(rank, CompareResult)`` pairs raised AttributeError, TypeError or
    ValueError from inside it ("cannot unpack non-iterable int object" for a dict of rank -> result, the shape of
    its ``reports``); each is a ``UsageError`` naming what was given. A NumPy rank is an int in the document."""
    import numpy as np

    from msprof_compare.errors import UsageError

    trace = KINETO / "sampled_rank-0.json.gz"
    result = msprof_compare.compare(trace, trace, enable_profiling_compare=True)
    refused = {
        "results must be (rank, CompareResult) pairs, not a mapping: pass its .items()": {0: result},
        "results must be an iterable of (rank, CompareResult) pairs, not NoneType": None,
        "results must be an iterable of (rank, CompareResult) pairs, not str": "0",
        "each result must be a (rank, CompareResult) pair (got 0)": [0],
        "each result must be a (rank, CompareResult) pair (got (0, 1, 2))": [(0, 1, 2)],
        "a rank is a whole number >= 0 or a RankCycle (got 'a')": [("a", result)],
        "a rank is a whole number >= 0 or a RankCycle (got -1)": [(-1, result)],
        "a rank is a whole number >= 0 or a RankCycle (got True)": [(True, result)],
        "rank 0's result must be a CompareResult (got str)": [(0, "out/rank0.xlsx")],
    }
    for message, given in refused.items():
        with pytest.raises(UsageError) as info:
            msprof_compare.ranks_overview(given)
        assert str(info.value) == f"ranks_overview: {message}"
    # reports and not_compared, read once every rank is done, raised AttributeError, TypeError or IndexError there
    pair = [(0, result)]
    for message, kw in {
        "reports must be a mapping of rank -> report paths, not list": {"reports": ["out/rank0.xlsx"]},
        "a rank's reports are a path or a list of paths (got 5)": {"reports": {0: 5}},
        "not_compared must be a mapping of rank -> (base input, comparison input), not list": {"not_compared": [1]},
        "not_compared[1] must be (base input, comparison input), None on the side without the rank (got 'x')":
            {"not_compared": {1: "x"}},
        "not_compared[1] must be (base input, comparison input), None on the side without the rank (got (5, None))":
            {"not_compared": {1: (5, None)}},
    }.items():
        with pytest.raises(UsageError) as info:
            msprof_compare.ranks_overview(pair, **kw)
        assert str(info.value) == f"ranks_overview: {message}"
    doc = msprof_compare.ranks_overview([(np.int64(0), result)])
    assert [type(r["rank"]) for r in doc["ranks"]] == [int] and validate(doc, SCHEMA) == []
    cycle = msprof_compare.ranks_overview([(msprof_compare.RankCycle(0, 2), result)])  # a unit of folders of cycles
    assert [(r["rank"], r["cycle"]) for r in cycle["ranks"]] == [(0, 2)]


def test_api_overview_checks_not_compared_as_it_checks_results():
    """``not_compared`` given by hand: its ranks are checked as the results' are, and a rank is held by one side
    alone (one input None). "1", -1 and True were written as the document's ranks, and two paths as a record
    "only_in" the comparison of a rank both sides hold. A side's input may be a path object, as ``compare_ranks``
    and ``reports`` take them: the document holds its text (a PosixPath was refused). None on both sides is a rank
    of ``rank_list`` that neither folder holds, as ``compare_ranks``' own ``not_compared`` has it."""
    from msprof_compare.errors import UsageError

    trace = KINETO / "sampled_rank-0.json.gz"
    pair = [(0, msprof_compare.compare(trace, trace, enable_profiling_compare=True))]
    refused = {
        "a rank is a whole number >= 0 or a RankCycle (got '1')": {"1": (None, "x")},
        "a rank is a whole number >= 0 or a RankCycle (got -1)": {-1: (None, "x")},
        "a rank is a whole number >= 0 or a RankCycle (got True)": {True: (None, "x")},
        "not_compared[1] must be (base input, comparison input), None on the side without the rank (got ('a', 'b'))":
            {1: ("a", "b")},
    }
    for message, given in refused.items():
        with pytest.raises(UsageError) as info:
            msprof_compare.ranks_overview(pair, not_compared=given)
        assert str(info.value) == f"ranks_overview: {message}"
    doc = msprof_compare.ranks_overview(pair, not_compared={1: (None, Path("runs") / "rank1")})
    assert doc["not_compared"] == [{"rank": 1, "only_in": "comparison", "base_path": None,
                                    "comparison_path": os.path.join("runs", "rank1")}]
    assert validate(doc, SCHEMA) == [] and json.loads(json.dumps(doc)) == doc
    base_only = msprof_compare.ranks_overview(pair, not_compared={2: (Path("runs") / "rank2", None)})
    assert base_only["not_compared"] == [{"rank": 2, "only_in": "base", "base_path": os.path.join("runs", "rank2"),
                                          "comparison_path": None}]
    neither = msprof_compare.ranks_overview(pair, not_compared={7: (None, None)})["not_compared"]
    assert neither == [{"rank": 7, "only_in": None, "base_path": None, "comparison_path": None}]


def test_api_overview_takes_bytes_paths_as_every_path_argument():
    """``compare``, ``ranks``, ``compare_ranks`` and the result's ``to_excel`` / ``to_json`` take a path as bytes
    (``os.fsencode``), but ``ranks_overview(reports={0: b'p'})`` refused it ("a rank's reports are a path or a list
    of paths": bytes were read as a list of numbers) and ``not_compared`` likewise: each path argument of the API now
    takes the same (str, bytes, a path object), and the document holds its text; what is no path is refused alike.
    Found by fuzzing the API's paths."""
    from msprof_compare.errors import UsageError

    trace = KINETO / "sampled_rank-0.json.gz"
    pair = [(0, msprof_compare.compare(os.fsencode(trace), trace, enable_profiling_compare=True))]
    doc = msprof_compare.ranks_overview(pair, reports={0: b"out/rank0.xlsx"}, not_compared={1: (None, b"runs/r1")})
    assert doc["ranks"][0]["reports"] == ["rank0.xlsx"]  # the file names, as of a path given as text
    assert doc["ranks"][0]["base_path"] == str(trace)
    assert doc["not_compared"][0]["comparison_path"] == "runs/r1"
    assert validate(doc, SCHEMA) == [] and json.loads(json.dumps(doc)) == doc
    listed = msprof_compare.ranks_overview(pair, reports={0: [b"a.xlsx", Path("a.json"), "b.json"]})
    assert listed["ranks"][0]["reports"] == ["a.xlsx", "a.json", "b.json"]
    with pytest.raises(UsageError, match=r"^ranks_overview: a rank's reports are a path or a list of paths \(got "
                                         r"bytearray\(b'x'\)\)$"):
        msprof_compare.ranks_overview(pair, reports={0: bytearray(b"x")})  # no path for compare() either
    with pytest.raises(UsageError, match=r"^ranks_overview: not_compared\[1\] must be"):
        msprof_compare.ranks_overview(pair, not_compared={1: (None, bytearray(b"x"))})


def test_api_overview_checks_the_reports_keys():
    """``reports``' keys are the compared units: a key no result gives (rank 2 of a job of ranks 0 and 1, a rank id
    of a job of cycles, a rank only not compared, which has no report) was silently left out, and True was rank 1's
    key (True == 1). Each error names the bad key, and the accepted ones."""
    from msprof_compare.errors import UsageError

    trace = KINETO / "sampled_rank-0.json.gz"
    plain = msprof_compare.compare(trace, trace, enable_profiling_compare=True)
    pair = [(0, plain), (1, plain)]
    refused = {
        "reports key 2 is no compared unit (its keys are the compared units: ranks 0, 1)": (pair, {2: "r2.xlsx"}, {}),
        "reports key 3 is no compared unit (its keys are the compared units: ranks 0, 1)":
            (pair, {3: "r3.xlsx"}, {"not_compared": {3: ("b3", None)}}),
        "reports key 0 is no compared unit (its keys are the compared units: rank 0 cycle 1)":
            ([(RankCycle(0, 1), plain)], {0: "r0.xlsx"}, {}),
    }
    for message, (results, reports, kw) in refused.items():
        with pytest.raises(UsageError) as info:
            msprof_compare.ranks_overview(results, reports, **kw)
        assert str(info.value) == f"ranks_overview: {message}"
    for key in (True, "1", -1, (0, 1)):
        with pytest.raises(UsageError) as info:
            msprof_compare.ranks_overview(pair, {key: "r.xlsx"})
        assert str(info.value) == (f"ranks_overview: reports key {key!r} is no rank: a whole number >= 0 or a "
                                   "RankCycle, as the results' units")
    doc = msprof_compare.ranks_overview(pair, {1: "r1.xlsx"})  # a compared unit without reports: none
    assert [r["reports"] for r in doc["ranks"]] == [[], ["r1.xlsx"]]
    import numpy as np

    doc = msprof_compare.ranks_overview([(RankCycle(0, 1), plain)], {RankCycle(0, 1): "c1.xlsx"})
    assert doc["ranks"][0]["reports"] == ["c1.xlsx"]
    assert msprof_compare.ranks_overview(pair, {np.int64(0): "r0.xlsx"})["ranks"][0]["reports"] == ["r0.xlsx"]


def test_db_ranks_overview_against_the_profilers_step_trace_time(capsys, tmp_path):
    """DB exports: each rank's Computing and Uncovered Communication in the overview JSON are the profiler's own
    analysis.db StepTraceTime (us, to the ns), a table the time breakdown does not read."""
    import contextlib
    import sqlite3

    def step(level: str, rank: int) -> tuple[int, int]:
        db = PT / "db" / level / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "analysis.db"
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)) as con:
            row = con.execute("SELECT CAST(computing AS TEXT), CAST(communication_not_overlapped AS TEXT) "
                              "FROM StepTraceTime").fetchone()
        return tuple(int(Decimal(v).quantize(Decimal("0.001")) * 1000) for v in row)

    code, _, err = run_inproc(capsys, "-bp", str(PT / "db" / "level0"), "-d", str(PT / "db" / "level1"), "-o",
                              str(tmp_path), "--enable_profiling_compare", "--output_format", "json")
    assert code == 0, err
    doc = json.loads(next(tmp_path.glob("performance_comparison_result_ranks_*.json")).read_text())
    assert [r["rank"] for r in doc["ranks"]] == [0, 1] and validate(doc, SCHEMA) == []
    for record in doc["ranks"]:
        base, comp = step("level0", record["rank"]), step("level1", record["rank"])
        got = [(record[m]["base_ns"], record[m]["comparison_ns"]) for m in ("computing", "uncovered_communication")]
        assert got == list(zip(base, comp, strict=True)), record


def test_a_relative_output_folder_is_named_absolute_as_the_rank_reports(tmp_path):
    """``-o out`` (relative): the overview's line names its files by their absolute paths, as each rank's line and
    log name the rank reports (the folder is resolved by the same check)."""
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT0), "-d", str(TEXT1), "-o", "out",
                           "--enable_api_compare"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (overview,) = (tmp_path / "out").glob("performance_comparison_result_ranks_*.xlsx")
    assert f"\nRanks overview: {overview}\n" in proc.stdout
    assert f"[INFO] The comparison result file has been generated: {overview}\n" in proc.stderr
    assert f"rank 0: {tmp_path / 'out'}{os.sep}performance_comparison_result_rank0_" in proc.stdout


def test_api_overview_of_results_paired_by_hand(tmp_path):
    """``ranks_overview`` of plain ``compare`` results given ranks by hand: each judged by the gate it was compared
    with; the job's folder only where one holds a side's every input; a single report path is one path (not its
    letters); no pair, a rank given twice, or results judged by different thresholds, are refused by name."""
    trace = KINETO / "sampled_rank-0.json.gz"
    plain = api.compare(trace, trace, enable_profiling_compare=True)
    gated = api.compare(trace, trace, enable_profiling_compare=True, fail_on_regression=0.5)
    slower = api.compare(trace, KINETO / "sampled_rank-1.json.gz", enable_profiling_compare=True,
                         fail_on_regression=0.5)
    e2e = slower.frames["overall"].set_index(["side", "metric"])["ns"]
    assert e2e[("comparison", "e2e")] > e2e[("base", "e2e")] * 1.005  # rank 1's trace: 0.68 % slower
    doc = msprof_compare.ranks_overview([(0, gated), (1, slower)])
    assert [r["regressed"] for r in doc["ranks"]] == [False, True] and doc["fail_on_regression"] == 0.5
    inputs = [(r["base_path"], r["comparison_path"]) for r in doc["ranks"]]
    assert inputs == [(str(trace), str(trace)), (str(trace), str(KINETO / "sampled_rank-1.json.gz"))]
    moved = tmp_path / "sampled_rank-0.json.gz"  # rank 1's comparison in another folder: the job has none
    shutil.copy(trace, moved)
    doc = msprof_compare.ranks_overview([(0, plain), (1, api.compare(trace, moved, enable_profiling_compare=True))])
    assert (doc["base_path"], doc["comparison_path"]) == (str(KINETO), None)
    doc = msprof_compare.ranks_overview([(0, plain), (3, plain)], {0: "out/rank0.xlsx", 3: [Path("out/r3.json")]})
    assert [r["reports"] for r in doc["ranks"]] == [["rank0.xlsx"], ["r3.json"]]
    assert [r["regressed"] for r in doc["ranks"]] == [None, None] and validate(doc, SCHEMA) == []
    assert doc["not_compared"] is None  # no folder was read: not known
    with pytest.raises(msprof_compare.UsageError, match=r"^ranks_overview: no \(rank, CompareResult\) pair"):
        msprof_compare.ranks_overview(x for x in [(0, plain)] if x[0])  # a filter that kept none
    with pytest.raises(msprof_compare.UsageError, match=r"^ranks_overview: rank 0 is given twice"):
        msprof_compare.ranks_overview([(0, plain), (0, plain)])
    for pair in ([(0, plain), (1, gated)], [(0, gated), (1, plain)]):
        with pytest.raises(msprof_compare.UsageError, match=r"different fail_on_regression values \(0.5, None\)"):
            msprof_compare.ranks_overview(pair)


def test_an_overview_that_cannot_be_written_leaves_the_rank_reports(capsys, tmp_path, monkeypatch):
    """A full disk as the overview is written (every rank compared): exit 1 naming the overview, nothing of it left,
    and the user told the rank reports are whole, as when a rank stops the run."""
    from msprof_compare.report import ranks_report

    real = ranks_report.write_new_files

    def full(directory, stem, parts, **kwargs):
        def fill(tmp):
            raise OSError(errno.ENOSPC, "No space left on device")

        return real(directory, stem, [(parts[0][0], fill, parts[0][2]), *parts[1:]], **kwargs)

    monkeypatch.setattr(ranks_report, "write_new_files", full)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path), "--enable_api_compare",
                              "--output_format", "xlsx,json")
    assert code == 1 and error_lines(err) == [
        f"error: {tmp_path}: cannot write the job overview workbook: No space left on device"], err
    assert "The reports of ranks 0, 1 are complete and stay." in err
    assert sorted(RANK_REPORT.match(p.name)[1] for p in tmp_path.iterdir()) == ["0", "0", "1", "1"]


def test_a_side_without_time(tmp_path):
    """A rank whose base has no E2E time and one whose comparison has none (by hand): no E2E change is stated (an
    unknown time, as the result JSON's summary.e2e), nor its Diff Ratio, a blank cell as the Diff beside it (it
    read INF, red, and 0.00 %, a comparison that took no time; OverallMetrics, whose rule it is, is not written
    where a side has no E2E time); a Free or Uncovered Communication time of 0 is a time, its change stated, its
    percent not (no base to divide by)."""
    from msprof_compare.report.ranks_report import overview, write_overview

    rows = [(0, {"e2e": (0, 5_000_000), "computing": (0, 1_000), "uncovered_communication": (0, 0),
                 "free": (0, 4_000)}, []),
            (1, {"e2e": (3_000_000, 0), "computing": (2_000, 0), "uncovered_communication": (5, 5),
                 "free": (1_000, 0)}, [])]
    doc = overview(rows, {0: ("b/0", "c/0"), 1: ("b/1", "c/1")}, ("b", "c"))
    first, second = doc["ranks"]
    assert (first["e2e"]["diff_ns"], first["e2e"]["diff_pct"], first["e2e"]["diff_ratio"]) == (None, None, None)
    assert (second["e2e"]["diff_ns"], second["e2e"]["diff_pct"], second["e2e"]["diff_ratio"]) == (None, None, None)
    assert [(first[m]["diff_ns"], first[m]["diff_pct"]) for m in ("computing", "uncovered_communication", "free")] \
        == [(1_000, None), (0, None), (4_000, None)]
    assert (second["free"]["diff_ns"], second["free"]["diff_pct"]) == (-1_000, -100.0)
    assert validate(doc, SCHEMA) == []
    (path,) = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))
    ws = openpyxl.load_workbook(path)["Ranks"]
    assert [[c.value for c in row[9:12]] for row in ws.iter_rows(min_row=4)] == [[None, None, 0.001],
                                                                                [None, None, -0.002]]
    assert ws["J3"].value == "E2E Diff(ms)" and ws["K3"].value == "E2E Diff Ratio"
    assert not any(ws[c].fill.fgColor.rgb.endswith("FF0000") for c in ("K4", "K5"))


@pytest.mark.parametrize(("pct", "header"), [
    (20.0, "Regressed (> 20%)"), (5.173252, "Regressed (> 5.173252%)"), (0.00001, "Regressed (> 0.00001%)"),
    (1234567.5, "Regressed (> 1234567.5%)")])
def test_regressed_header_states_the_threshold_the_verdicts_judge_by(tmp_path, pct, header):
    """The Regressed column's header states the threshold as written, as the gate's line does and as each verdict
    judges the rank's exact E2E change by (``regression_gate``): ``{pct:g}`` rounded it to six digits, "> 5.17325%"
    for 5.173252 (a rank at +5.17325217 % is "yes" beside it), "> 1.23457e+06%" for 1234567.5."""
    from msprof_compare.report.ranks_report import overview, write_overview

    doc = overview([(0, {"e2e": (100_000, 105_173)}, [])], {0: ("b/0", "c/0")}, ("b", "c"), gates={0: 0}, pct=pct)
    (path,) = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))
    ws = openpyxl.load_workbook(path)["Ranks"]
    assert [c.value for c in ws[3]][-3:-2] == [header]


@pytest.mark.parametrize(("pct", "verdict", "cell"), [
    (5.173252, 3, 1.051733),  # the gate's line: "(+5.1733%), threshold +5.173252%"
    (5.17, 3, 1.05173),       # "(+5.173%), threshold +5.17%"
    (5.174, 0, 1.0517),       # "(+5.17%), threshold +5.174%": 5.17 <= 5.174, the 4 places say it
    (20.0, 0, 1.0517)])
def test_e2e_diff_ratio_shows_the_side_of_the_threshold(tmp_path, pct, verdict, cell):
    """Rank 0 of text/level2 -> text/level1: E2E 129862875 -> 136581009 ns (OverallMetrics' E2E Time rows,
    tests/test_gate.py), +5.1732521708 %. Its E2E Diff Ratio cell read 105.17 % (4 places, 0.00 %) beside
    "Regressed (> 5.173252%)" and a "yes", which the figures shown could not explain; it now holds as many more
    places as it takes to stand on the verdict's side, as the gate's line shows the change, in a format that shows
    them (0.00 % and up to 10 more). A rank at exactly +5.169 % is within a 5.169 % threshold, which the 4 places
    (105.17 %) put above it: 5 places. Where 4 places say it, the cell is OverallMetrics' ratio, as without the
    gate; the JSON keeps the 4 places."""
    from msprof_compare.report.ranks_report import overview, write_overview

    rows = [(0, {"e2e": (129_862_875, 136_581_009)}, []), (1, {"e2e": (100_000_000, 105_169_000)}, [])]
    doc = overview(rows, {0: ("b/0", "c/0"), 1: ("b/1", "c/1")}, ("b", "c"), gates={0: verdict, 1: 0}, pct=pct)
    assert [r["e2e"]["diff_ratio"] for r in doc["ranks"]] == [1.0517, 1.0517]
    (path,) = write_overview(doc, str(tmp_path), "20260101000000", ("xlsx",))
    ws = openpyxl.load_workbook(path)["Ranks"]
    assert [ws["E3"].value, ws["E4"].value, ws["F3"].value, ws["F4"].value] == \
        ["E2E Diff Ratio", cell, f"Regressed (> {str(pct).removesuffix('.0')}%)", "yes" if verdict else "no"]
    assert ws["E4"].number_format == ws["E5"].number_format == "0.00##########%"
    assert ws["E5"].value == 1.0517  # +5.169 %: within each threshold, as 105.17 % says
    (path,) = write_overview(overview(rows[1:], {1: ("b/1", "c/1")}, ("b", "c"), gates={1: 0}, pct=5.169),
                             str(tmp_path), "20260101000001", ("xlsx",))
    assert openpyxl.load_workbook(path)["Ranks"]["E4"].value == 1.05169  # 105.169 %, within "> 5.169%"


@pytest.mark.parametrize(("pct", "text"), [
    (1e-300, "1e-300"), (1e300, "1e+300"), (1e-20, "1e-20"), (0.00001, "0.00001"), (1e16, "10000000000000000"),
    (5.173252, "5.173252"), (20.0, "20"), (0.0, "0")])
def test_threshold_text_is_bounded(pct, text):
    """The threshold as written, in plain decimals up to 20 characters (0.00001, as the user typed it, not 1e-05);
    beyond, the same decimal with an exponent: 1e-300 was written with 300 zeros in the gate's line and the Ranks
    sheet's header. The gate judges by the decimal shown, the same either way."""
    from fractions import Fraction

    from msprof_compare.compare.gate import threshold_text

    assert threshold_text(pct) == text and Fraction(text) == Fraction(repr(pct))


def test_written_with_force_where_the_rank_reports_were(tmp_path):
    """A folder every user may write to (no sticky bit) takes the rank reports with --force: the overview too."""
    from msprof_compare.report.ranks_report import overview, write_overview

    tmp_path.chmod(0o777)
    doc = overview([(0, None, [])], {0: ("b/0", "c/0")}, ("b", "c"))
    with pytest.raises(msprof_compare.UsageError, match="can be written by every user"):
        write_overview(doc, str(tmp_path), "20260101000000", ("json",))
    assert [Path(p).name for p in write_overview(doc, str(tmp_path), "20260101000000", ("json",), force=True)] == \
        ["performance_comparison_result_ranks_20260101000000.json"]


def test_force_takes_the_overview_where_the_rank_reports_go(capsys, tmp_path):
    """--force into a folder every user may write to (no sticky bit): the overview is written beside the rank
    reports, not refused once they are (the folder check is made again for it)."""
    tmp_path.chmod(0o777)
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path), "--force",
                                "--enable_api_compare", "--output_format", "json")
    assert code == 0, err
    assert sorted(bool(OVERVIEW.match(p.name)) for p in tmp_path.iterdir()) == [False, False, True]


def test_straggler_and_largest_step_records_per_cycle_follow_the_schema():
    """The overview of a schedule's cycles of ranks, made from figures by hand: cycle 1's rank 1 computes 1 ms longer
    while rank 0 waits as long (a straggler record with its cycle), cycle 2 moves nothing (no record, its ranks'
    largest_step null); the row-2 note carries the straggler line after the job lines."""
    from msprof_compare.report.ranks_report import overview, sheet

    def figures(computing: int, waiting: int, step: tuple[str, int] | None) -> dict:
        return {"e2e": (100_000_000, 100_000_000 + computing + waiting), "computing": (10, 10 + computing),
                "uncovered_communication": (50, 50 + waiting), "free": (40, 40), "step": step}

    ms = 1_000_000
    rows = [(RankCycle(0, 1), figures(0, ms, ("Group 0 Communication (uncovered)", ms)), []),
            (RankCycle(1, 1), figures(ms, 0, ("Matmul", ms)), []),
            (RankCycle(0, 2), figures(0, 0, None), []), (RankCycle(1, 2), figures(0, 0, None), [])]
    doc = overview(rows, {u: ("b", "c") for u, _, _ in rows}, ("B", "C"))
    assert validate(doc, SCHEMA) == []
    assert doc["straggler"] == [{"cycle": 1, "rank": 1, "computing_diff_ns": ms, "computing_diff_ms": 1.0,
                                 "other_ranks": [0], "others_uncovered_communication_diff_ms": 1.0}]
    assert [r["largest_step"] for r in doc["ranks"]] == [
        {"step": "Group 0 Communication (uncovered)", "diff_ns": ms, "diff_ms": 1.0},
        {"step": "Matmul", "diff_ns": ms, "diff_ms": 1.0}, None, None]
    line = ("Likely straggler of cycle 1: rank 1, Computing +1.000 ms; rank 0's Uncovered Communication +1.000 ms "
            "(waiting on it)")
    assert doc["straggler_line"] == line and sheet(doc).note.endswith(f"\n{line}")


# --------------------------------------------------------------------------- the job's gate


def _regressed_by_hand(pct: Decimal) -> list[int]:
    """The ranks of text level0 -> level1 whose E2E (step_trace_time.csv) grew by more than ``pct`` percent."""
    out = []
    for rank in (0, 1):
        b, c = profiler_ns(TEXT0, rank)["e2e"], profiler_ns(TEXT1, rank)["e2e"]
        if (c - b) * 100 > pct * b:
            out.append(rank)
    return out


def test_job_gate_is_the_runs_exit_code(gated, gate_only):
    """The overview's ``gate`` states the job's verdict, the one that set the run's exit code: at 20 % rank 1
    (+31.12 % by step_trace_time.csv) regressed and rank 0 (+17.49 %) did not, so the job failed (3), as the
    ranks' own records say; alike where the gate made the breakdown alone."""
    assert _regressed_by_hand(Decimal(20)) == [1]
    for proc, doc in ((gated[0], gated[3]), (gate_only[0], gate_only[2])):
        assert proc.returncode == 3, proc.stderr
        assert doc["gate"] == {"threshold_pct": 20.0, "threshold": "20", "exit_code": 3, "regressed": True,
                               "ranks_regressed": [{"rank": 1}], "ranks_not_judged": []}
        assert [r["rank"] for r in doc["ranks"] if r["regressed"]] == [1]
        assert validate(doc, SCHEMA) == []
    # the Ranks sheet states it where it states the job, row 2, after the job's line
    for book in (gated[2], gate_only[1]):
        assert book["Ranks"]["B2"].value.endswith(
            "\n--fail_on_regression 20 (exit code 3): rank 1 regressed beyond the threshold")


def test_job_gate_of_a_job_within_the_threshold():
    """At 40 % neither rank regressed (+17.49 %, +31.12 % by step_trace_time.csv): the job's gate passes (0), and
    the API's overview of ``compare_ranks`` says so as the CLI's does, its Ranks sheet's row 2 too; without the gate
    it is null, and row 2 says nothing of it."""
    from msprof_compare.report.ranks_report import sheet

    assert _regressed_by_hand(Decimal(40)) == [] and _regressed_by_hand(Decimal("31.1")) == [1]
    doc = msprof_compare.ranks_overview(msprof_compare.compare_ranks(TEXT0, TEXT1, fail_on_regression=40))
    assert doc["gate"] == {"threshold_pct": 40.0, "threshold": "40", "exit_code": 0, "regressed": False,
                           "ranks_regressed": [], "ranks_not_judged": []}
    assert validate(doc, SCHEMA) == []
    assert sheet(doc).note.endswith("\n--fail_on_regression 40 (exit code 0): no regression beyond the threshold")
    doc = msprof_compare.ranks_overview(msprof_compare.compare_ranks(TEXT0, TEXT1, enable_api_compare=True))
    assert doc["gate"] is None and validate(doc, SCHEMA) == []
    assert "fail_on_regression" not in sheet(doc).note  # no gate, no verdict in row 2


@pytest.mark.parametrize("codes", [
    {0: 0, 1: 0}, {0: 3, 1: 0}, {0: 1, 1: 0}, {0: 1, 1: 3, 2: 0, 3: 3}, {0: 1, 1: 0, 2: 1}, {2: 3}],
    ids=["all within", "one regressed", "one not judged", "regressed and not judged", "two not judged", "one rank"])
def test_job_gate_agrees_with_the_clis_exit_code(codes, capsys):
    """Each rank's status (3 regressed, 0 within, 1 not judged): the overview's gate and the CLI's exit code of the
    same ranks are one, 3 where any rank regressed, else 1 where any was not judged, else 0 (a job with a rank not
    judged must not pass), and the ranks it names are those of each status."""
    from msprof_compare.cli import _ranks_gate
    from msprof_compare.report.ranks_report import overview

    rows = [(rank, None, []) for rank in codes]
    doc = overview(rows, {r: (f"b/{r}", f"c/{r}") for r in codes}, ("b", "c"), gates=codes, pct=5.0)
    want = 3 if 3 in codes.values() else 1 if 1 in codes.values() else 0
    assert doc["gate"]["exit_code"] == _ranks_gate(list(codes.items()), "5") == want
    assert doc["gate"]["regressed"] == {3: True, 0: False, 1: None}[want]
    assert doc["gate"]["ranks_regressed"] == [{"rank": r} for r, c in codes.items() if c == 3]
    assert doc["gate"]["ranks_not_judged"] == [{"rank": r} for r, c in codes.items() if c == 1]
    assert [r["regressed"] for r in doc["ranks"]] == [{3: True, 0: False, 1: None}[c] for c in codes.values()]
    assert validate(doc, SCHEMA) == []
    capsys.readouterr()


@pytest.mark.parametrize(("codes", "text"), [
    ({0: 0, 1: 0}, "(exit code 0): no regression beyond the threshold"),
    ({0: 3, 1: 0}, "(exit code 3): rank 0 regressed beyond the threshold"),
    ({0: 1, 1: 0}, "(exit code 1): rank 0 could not be judged (no E2E time)"),
    ({0: 1, 1: 3, 2: 0, 3: 3}, "(exit code 3): ranks 1, 3 regressed beyond the threshold; rank 0 could not be judged"),
    ({0: 1, 1: 0, 2: 1}, "(exit code 1): ranks 0, 2 could not be judged (no E2E time)"),
    ({2: 3}, "(exit code 3): rank 2 regressed beyond the threshold")],
    ids=["all within", "one regressed", "one not judged", "regressed and not judged", "two not judged", "one rank"])
def test_ranks_sheet_states_the_jobs_gate(codes, text, capsys):
    """Row 2 of the Ranks sheet ends with the job's verdict, the overview's ``gate``: its exit code and the ranks
    that set it, in the words of the CLI's line where the gate fails it (the line after "error: ")."""
    from msprof_compare.cli import _ranks_gate
    from msprof_compare.report.ranks_report import overview, sheet

    rows = [(rank, None, []) for rank in codes]
    doc = overview(rows, {r: (f"b/{r}", f"c/{r}") for r in codes}, ("b", "c"), gates=codes, pct=5.0)
    note = sheet(doc).note
    assert note == f"--fail_on_regression 5 {text}"  # no job line of ranks without figures: the verdict alone
    code = _ranks_gate(list(codes.items()), "5")
    err = capsys.readouterr().err.strip()
    if code:
        assert err == f"error: --fail_on_regression 5: {text.partition(': ')[2]}"


@pytest.mark.parametrize(("regressed", "unjudged", "text"), [
    (32, 0, "ranks 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, "
            "27, 28, 29, 30, 31 regressed beyond the threshold"),
    (33, 0, "ranks 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, "
            "27, 28, 29, 30, 31, ... (33 in all) regressed beyond the threshold"),
    (1, 40, "rank 0 regressed beyond the threshold; ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, "
            "18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, ... (40 in all) could not be judged")],
    ids=["32 whole", "33 capped", "not judged capped"])
def test_ranks_sheet_verdict_lists_32_units_then_the_count(regressed, unjudged, text, capsys):
    """Row 2's verdict names 32 units of a list at most, then how many in all, as its "Ranks selected" line: a
    150-rank job's verdict listed all 150 ranks. The JSON's gate record and the CLI's error line keep every rank."""
    from msprof_compare.cli import _ranks_gate
    from msprof_compare.report.ranks_report import overview, sheet

    codes = {r: 3 if r < regressed else 1 for r in range(regressed + unjudged)}
    doc = overview([(r, None, []) for r in codes], {r: (f"b/{r}", f"c/{r}") for r in codes}, ("b", "c"),
                   gates=codes, pct=5.0)
    assert sheet(doc).note == f"--fail_on_regression 5 (exit code 3): {text}"
    assert doc["gate"]["ranks_regressed"] == [{"rank": r} for r in range(regressed)]
    assert doc["gate"]["ranks_not_judged"] == [{"rank": r} for r in range(regressed, regressed + unjudged)]
    assert _ranks_gate(list(codes.items()), "5") == 3
    err = capsys.readouterr().err  # the console's line, whole
    assert f"{'ranks' if regressed > 1 else 'rank'} {', '.join(map(str, range(regressed)))} regressed" in err
    assert not unjudged or f"ranks {', '.join(map(str, range(regressed, regressed + unjudged)))} could not" in err


def test_job_gate_names_cycles():
    """Folders of a schedule's cycles: the ranks the job's gate names carry their cycle, as their records do."""
    from msprof_compare.report.ranks_report import overview, sheet

    units = [RankCycle(0, 1), RankCycle(1, 1), RankCycle(0, 2), RankCycle(1, 2)]
    codes = dict(zip(units, (0, 3, 1, 0), strict=True))
    doc = overview([(u, None, []) for u in units], {u: ("b", "c") for u in units}, ("b", "c"), gates=codes,
                   pct=2.5)
    assert doc["gate"]["exit_code"] == 3 and doc["gate"]["threshold"] == "2.5"
    assert doc["gate"]["ranks_regressed"] == [{"rank": 1, "cycle": 1}]
    assert doc["gate"]["ranks_not_judged"] == [{"rank": 0, "cycle": 2}]
    assert validate(doc, SCHEMA) == []
    assert sheet(doc).note.endswith("--fail_on_regression 2.5 (exit code 3): rank 1 cycle 1 regressed beyond the "
                                    "threshold; rank 0 cycle 2 could not be judged")


def test_row_2_gives_each_cycles_straggler_a_line_of_its_own():
    """Two cycles with a straggler each, made from figures by hand: the document's straggler line joins them with
    "; ", as it joins a rank's computing to the others' waiting within one; row 2 cuts it before each cycle's
    line alone, so each job line and each straggler line is a line of its own and "; rank 0's ..." stays on its
    cycle's line (kills r_strag_split, r_re_strag and r_cycle_split)."""
    from msprof_compare.report.ranks_report import overview, sheet

    def figures(computing: int, waiting: int) -> dict:
        return {"e2e": (100_000_000, 100_000_000 + computing + waiting), "computing": (10, 10 + computing),
                "uncovered_communication": (50, 50 + waiting), "free": (40, 40), "step": None}

    ms = 1_000_000
    rows = [(RankCycle(0, 1), figures(0, ms), []), (RankCycle(1, 1), figures(ms, 0), []),
            (RankCycle(0, 2), figures(2 * ms, 0), []), (RankCycle(1, 2), figures(0, 2 * ms), [])]
    doc = overview(rows, {u: ("b", "c") for u, _, _ in rows}, ("B", "C"))
    one = ("Likely straggler of cycle 1: rank 1, Computing +1.000 ms; rank 0's Uncovered Communication +1.000 ms "
           "(waiting on it)")
    two = ("Likely straggler of cycle 2: rank 0, Computing +2.000 ms; rank 1's Uncovered Communication +2.000 ms "
           "(waiting on it)")
    assert doc["straggler_line"] == f"{one}; {two}"
    lines = sheet(doc).note.split("\n")
    assert [line[:11] for line in lines[:2]] == ["Job cycle 1", "Job cycle 2"] and lines[2:] == [one, two]
