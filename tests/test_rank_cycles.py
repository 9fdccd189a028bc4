"""Folders of a profiler schedule's cycles (``repeat`` > 1: one profile per rank and cycle in one folder) compare
cycle k with cycle k, rank by rank. The folders are copies of the real text/level0 and text/level1 rank profiles,
their ``collectionTimeEnd`` edited so that the recorded order differs from the names' order; every expectation is
the profiler's own step figures (step_trace_time.csv) or a single compare of the same two inputs."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import logging
import re
import shutil
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

import msprof_compare
from msprof_compare import RankCycle, api, cli
from msprof_compare.errors import ProfileError, UsageError
from tests.cliutil import error_lines, run_inproc
from tests.test_json_report import validate
from tests.test_ranks import PT, REPO, TEXT0, TEXT1, cyc_name, cycle, ms, stage
from tests.test_ranks_report import SCHEMA, profiler_ns

END = 1736408884023552840
#: torch_npu's names, ``{worker}_{timestamp}_ascend_pt``: one worker per rank (host_{r}), its cycles' timestamps
NAME = "host_{r}_2025010100000000%d_ascend_pt"
#: {side: [(cycle, source folder, name), ...]}: names sort against the recorded order (the ends ``_profile`` sets)
LAYOUT = {"base": [(1, TEXT0, NAME % 2), (2, TEXT1, NAME % 1)],
          "comp": [(1, TEXT1, NAME % 3), (2, TEXT0, NAME % 2), (3, TEXT1, NAME % 1)]}
UNIT_REPORT = re.compile(r"performance_comparison_result_rank(\d)_cycle(\d)_(\d{14})\.(xlsx|json)$")

pytestmark = pytest.mark.skipif(not PT.is_dir(), reason="sample data not found")


def _profile(folder: Path, name: str, source: Path, rank: int, end: int, single: bool = False) -> Path:
    """A copy of ``source``'s rank ``rank`` profile as one schedule cycle ending at ``end`` ns; ``single``: as a
    single-device run writes it (``profiler_info.json``)."""
    path = folder / name
    shutil.copytree(source / f"rank{rank}_ascend_pt", path)
    info_path = path / f"profiler_info_{rank}.json"
    info = json.loads(info_path.read_text())
    info["end_info"]["collectionTimeEnd"] = end
    info_path.unlink()
    (path / ("profiler_info.json" if single else info_path.name)).write_text(json.dumps(info))
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """base: 2 cycles of ranks 0 and 1 (level0, then level1); comp: 3 cycles (level1, level0, level1)."""
    root = tmp_path_factory.mktemp("cycles")
    for side, cycles in LAYOUT.items():
        for k, source, name in cycles:
            for r in (0, 1):
                _profile(root / side, name.format(r=r), source, r, END + 10 * k)
    return {side: root / side for side in LAYOUT}


def source_of(side: str, k: int) -> Path:
    return next(src for cycle, src, _ in LAYOUT[side] if cycle == k)


def input_of(folders: dict[str, Path], side: str, r: int, k: int) -> Path:
    return folders[side] / next(name for cycle, _, name in LAYOUT[side] if cycle == k).format(r=r)


@pytest.fixture(scope="module")
def gated(folders, tmp_path_factory):
    """The CLI over both folders, both report formats, the profiling compare alone, the gate at 20 %."""
    out = tmp_path_factory.mktemp("out")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", str(folders["base"]), "-d", str(folders["comp"]), "-o", str(out),
                          "--output_format", "xlsx,json", "--enable_profiling_compare", "--fail_on_regression", "20"])
    return info.value.code, stdout.getvalue(), stderr.getvalue(), out


def pct(b: Decimal, c: Decimal) -> str:
    return f"{(c - b) / b * 100:+.2f}%"


def test_each_unit_compares_cycle_k_of_its_rank(gated, folders, capsys, tmp_path):
    """Rank R cycle k against rank R cycle k: each unit's JSON report is a single compare's of those two inputs
    (but its time of writing); reports named rank{R}_cycle{k}, one timestamp for the job."""
    code, out, err, folder = gated
    names = sorted(p.name for p in folder.iterdir() if "_ranks_" not in p.name)
    found = [UNIT_REPORT.match(n) for n in names]
    assert all(found) and len(found) == 8, names
    assert sorted({(int(m[1]), int(m[2])) for m in found}) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert len({m[3] for m in found}) == 1
    for r, k in ((0, 1), (1, 1), (0, 2), (1, 2)):
        single = tmp_path / f"single_{r}_{k}"
        single.mkdir()
        code1, _, _ = run_inproc(capsys, "-bp", str(input_of(folders, "base", r, k)), "-d",
                                 str(input_of(folders, "comp", r, k)), "-o", str(single), "--output_format",
                                 "xlsx,json", "--enable_profiling_compare", "--fail_on_regression", "20")
        assert code1 in (0, 3)
        mine = json.loads(next(folder.glob(f"performance_comparison_result_rank{r}_cycle{k}_*.json")).read_text())
        theirs = json.loads(next(single.glob("*.json")).read_text())
        mine.pop("generated_at"), theirs.pop("generated_at")
        assert mine == theirs, (r, k)


def test_console_lines_table_and_job_lines(gated, folders):
    """Per unit a line ``rank R cycle k: E2E ...``, in cycle order; the table with a Cycle column; a job line per
    cycle: the slowest rank of each side of that cycle (by the profiler's step figures)."""
    _, out, _, folder = gated
    lines = [line for line in out.splitlines() if re.match(r"rank \d cycle \d: ", line)]
    assert [line[:14] for line in lines] == ["rank 0 cycle 1", "rank 1 cycle 1", "rank 0 cycle 2", "rank 1 cycle 2"]
    assert ("| Rank | Cycle |   Base  | Comparison |   Diff  |  Diff % | Computing | Uncovered Comm. |  Free  "
            "| Largest Step |") in out
    assert re.search(r"\n\|\s+Ranks: E2E Time and Diff, Diff of Its Parts \(ms\)\s+\|\n", out)
    table = [line for line in out.splitlines() if line[:1] in "+|"]
    assert len(table) == 10 and max(map(len, table)) == 113  # fits a 120-column terminal (it was 126)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
            if re.match(r"\|\s+\d\s+\|\s+\d\s+\|", line)]
    assert [(int(row[0]), int(row[1])) for row in rows] == [(0, 1), (1, 1), (0, 2), (1, 2)]
    for row in rows:
        r, k = int(row[0]), int(row[1])
        b, c = stage(source_of("base", k), r), stage(source_of("comp", k), r)
        assert row[2:6] == [ms(b["Stage"]), ms(c["Stage"]), ms(c["Stage"] - b["Stage"], "+"),
                            pct(b["Stage"], c["Stage"])]
        assert row[6:9] == [ms(c[key] - b[key], "+") for key in ("Computing", "Communication(Not Overlapped)", "Free")]
        written = ", ".join(str(p) for p in sorted(folder.glob(f"performance_comparison_result_rank{r}_cycle{k}_*"),
                                                   key=lambda p: p.suffix == ".json"))
        assert f"rank {r} cycle {k}: E2E {row[2]} ms -> {row[3]} ms ({row[4]} ms, {row[5]}), {written}" in lines
    jobs = [line for line in out.splitlines() if line.startswith("Job")]
    expected = []
    for k in (1, 2):
        b = {r: stage(source_of("base", k), r)["Stage"] for r in (0, 1)}
        c = {r: stage(source_of("comp", k), r)["Stage"] for r in (0, 1)}
        br, cr = max(b, key=b.get), max(c, key=c.get)
        expected.append(f"Job cycle {k} (slowest rank per side): base rank {br} {ms(b[br])} ms -> comparison rank "
                        f"{cr} {ms(c[cr])} ms ({ms(c[cr] - b[br], '+')} ms, {pct(b[br], c[cr])})")
    assert jobs == expected


def test_log_prefixes_unequal_cycles_and_the_gate(gated, folders):
    """Log lines begin with their unit; the comparison's third cycle is warned about once; the gate names the
    units beyond 20 % (by the profiler's figures) and exits 3."""
    code, _, err, _ = gated
    assert (f"[WARNING] Cycle only in the comparison {folders['comp']} (3 cycles against 2), not compared: 3\n"
            in err)
    for r, k in ((0, 1), (1, 1), (0, 2), (1, 2)):
        assert (f"[INFO] rank {r} cycle {k}: comparing {input_of(folders, 'base', r, k)} with "
                f"{input_of(folders, 'comp', r, k)}\n") in err
    assert "rank 0 cycle 1: The comparison result file has been generated: " in err
    assert ("of later rank cycles, each the same as an earlier rank cycle's but for its paths; a rank cycle's two "
            "inputs compared alone show all its notices.") in err
    regressed = [f"rank {r} cycle {k}" for k in (1, 2) for r in (0, 1)
                 if (lambda b, c: (c - b) / b * 100 > 20)(stage(source_of("base", k), r)["Stage"],
                                                           stage(source_of("comp", k), r)["Stage"])]
    assert regressed == ["rank 1 cycle 1"]
    assert code == 3
    assert error_lines(err)[-1] == (f"error: --fail_on_regression 20: {', '.join(regressed)} regressed beyond the "
                                    "threshold")


def test_overview_rows_and_json(gated, folders):
    """The overview: a record per unit with its cycle, the comparison's third cycle not compared, the job per
    cycle; schema-valid. The sheet: Rank, Cycle, the Compared column, row 2 the job lines."""
    _, out, _, folder = gated
    doc = json.loads(next(folder.glob("performance_comparison_result_ranks_*.json")).read_text())
    assert validate(doc, SCHEMA) == []
    assert [(r["rank"], r["cycle"], r["regressed"]) for r in doc["ranks"]] == [
        (0, 1, False), (1, 1, True), (0, 2, False), (1, 2, False)]
    for record in doc["ranks"]:
        r, k = record["rank"], record["cycle"]
        assert (record["base_path"], record["comparison_path"]) == (str(input_of(folders, "base", r, k)),
                                                                    str(input_of(folders, "comp", r, k)))
        b, c = profiler_ns(source_of("base", k), r), profiler_ns(source_of("comp", k), r)
        assert {m: (record[m]["base_ns"], record[m]["comparison_ns"]) for m in b} == {m: (b[m], c[m]) for m in b}
    assert doc["not_compared"] == [{"rank": r, "cycle": 3, "only_in": "comparison", "base_path": None,
                                    "comparison_path": str(input_of(folders, "comp", r, 3))} for r in (0, 1)]
    jobs = []
    for k in (1, 2):
        b = {r: profiler_ns(source_of("base", k), r)["e2e"] for r in (0, 1)}
        c = {r: profiler_ns(source_of("comp", k), r)["e2e"] for r in (0, 1)}
        br, cr = max(b, key=b.get), max(c, key=c.get)
        jobs.append((k, br, cr, b[br], c[cr]))
    assert [(j["cycle"], j["base_rank"], j["comparison_rank"], j["base_ns"], j["comparison_ns"])
            for j in doc["job"]] == jobs
    job_lines = [line for line in out.splitlines() if line.startswith("Job")]
    assert doc["job_line"] == "; ".join(job_lines)
    ws = openpyxl.load_workbook(next(folder.glob("performance_comparison_result_ranks_*.xlsx")))["Ranks"]
    rows = [list(r) for r in ws.iter_rows(min_row=3, values_only=True)]
    assert rows[0][:3] == ["Rank", "Cycle", "E2E Time(ms)"]
    compared = rows[0].index("Compared")
    assert [(r[0], r[1], r[compared]) for r in rows[1:]] == [
        (0, 1, "yes"), (1, 1, "yes"), (0, 2, "yes"), (1, 2, "yes"), (0, 3, "no (comparison only)"),
        (1, 3, "no (comparison only)")]
    # the captions over each side's times, row 2 after the columns naming the unit (repeated on printed pages)
    assert (ws["C1"].value, ws["G1"].value) == (f"Base Profiling: {folders['base']}",
                                                f"Comparison Profiling: {folders['comp']}")
    # then the job's gate: rank 1 cycle 1 alone regressed at 20 % (worked out from step_trace_time.csv above)
    assert ws["C2"].value == ("\n".join(job_lines) + "\n--fail_on_regression 20 (exit code 3): rank 1 cycle 1 "
                              "regressed beyond the threshold") and ws.print_title_cols == "$A:$B"


def test_gated_row_2_holds_a_line_per_statement_in_a_row_as_tall(gated):
    """Row 2 of the gated overview ran the two cycles' job lines and the gate's verdict together with "; " (about
    300 characters wrapped over merged C2:J2 in a row of two lines), the verdict that sets the exit code starting
    mid-line. Each is now a line of its own: each under 120 characters, short of one line of C:J (180 characters
    of Calibri's digits), so the row is one line of 15 points per statement, at default zoom and in print."""
    _, out, _, folder = gated
    ws = openpyxl.load_workbook(next(folder.glob("performance_comparison_result_ranks_*.xlsx")))["Ranks"]
    job_lines = [line for line in out.splitlines() if line.startswith("Job cycle")]
    lines = ws["C2"].value.split("\n")
    assert lines == [*job_lines, "--fail_on_regression 20 (exit code 3): rank 1 cycle 1 regressed beyond the threshold"]
    assert all(len(line) < 120 for line in lines)
    assert sum(ws.column_dimensions[c].width for c in "CDEFGHIJ") > 170
    assert ws.row_dimensions[2].height == 15 * len(lines) == 45
    assert ws["C2"].alignment.wrap_text and "C2:J2" in {str(r) for r in ws.merged_cells.ranges}


def test_api_units_rank_list_and_overview(folders, caplog):
    """compare_ranks yields RankCycle units (the package exports the type); rank_list selects ranks in every
    cycle; ranks_overview takes them; ranks and RankCycle units mixed are refused."""
    assert msprof_compare.RankCycle is RankCycle and "RankCycle" in msprof_compare.__all__
    found = msprof_compare.ranks(folders["comp"])
    assert list(found) == [RankCycle(r, k) for k in (1, 2, 3) for r in (0, 1)]
    assert found[RankCycle(1, 2)] == str(input_of(folders, "comp", 1, 2))
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        results = msprof_compare.compare_ranks(folders["base"], folders["comp"], rank_list="1",
                                               enable_profiling_compare=True)
        assert results.not_compared == {RankCycle(1, 3): (None, str(input_of(folders, "comp", 1, 3)))}
        alone = api.compare_ranks(folders["base"], folders["comp"], rank_list=[1, 5]).not_compared  # 5: neither
        assert alone == {RankCycle(1, 3): (None, str(input_of(folders, "comp", 1, 3))),
                         **{RankCycle(5, k): (None, None) for k in (1, 2, 3)}}
        got = []
        for unit, result in results:
            assert type(unit) is RankCycle
            got.append((unit, str(result.base.path), str(result.comparison.path)))
            del result
    assert got == [(RankCycle(1, k), str(input_of(folders, "base", 1, k)), str(input_of(folders, "comp", 1, k)))
                   for k in (1, 2)]
    assert any(m.startswith("rank 1 cycle 2: ") for m in caplog.messages)
    doc = msprof_compare.ranks_overview(msprof_compare.compare_ranks(folders["base"], folders["comp"], rank_list=[1],
                                                                     enable_profiling_compare=True))
    assert validate(doc, SCHEMA) == []
    assert doc["rank_list"] == [1]
    assert [(r["rank"], r["cycle"]) for r in doc["ranks"]] == [(1, 1), (1, 2)]
    assert [(r["rank"], r["cycle"]) for r in doc["not_compared"]] == [(1, 3)]
    one = next(iter(msprof_compare.compare_ranks(folders["base"], folders["comp"], enable_profiling_compare=True)))
    with pytest.raises(UsageError, match=r"ranks and cycles of ranks \(RankCycle\) are given together"):
        msprof_compare.ranks_overview([one, (5, one[1])])


def test_refusals(folders, capsys, tmp_path):
    """Cycles against one profile per rank: exit 1 saying which side holds what; ranks held different numbers of
    times in one folder: exit 1 naming the counts."""
    code, _, err = run_inproc(capsys, "-bp", str(folders["base"]), "-d", str(TEXT1), "-o", str(tmp_path))
    assert (code, error_lines(err)) == (1, [
        f"error: {folders['base']}: holds 2 cycles per rank (a profiler schedule's), but the comparison {TEXT1} "
        "holds one profile per rank (cycles compare cycle by cycle only against a folder of cycles of the same "
        "kind: pass one cycle's folder (split by the timestamps in the names), or both folders of cycles)"])
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(folders["comp"]), "-o", str(tmp_path))
    assert code == 1 and error_lines(err)[0].startswith(f"error: {folders['comp']}: holds 3 cycles per rank ")
    odd = tmp_path / "odd"
    shutil.copytree(folders["base"], odd, symlinks=True)
    shutil.rmtree(odd / cyc_name(1, 1))
    code, _, err = run_inproc(capsys, "-bp", str(odd), "-d", str(folders["comp"]), "-o", str(tmp_path))
    assert (code, error_lines(err)) == (1, [
        f"error: {odd}: holds its ranks different numbers of times (a profiler schedule's cycles per rank): rank 0 "
        "2 times, rank 1 1 time (base side: keep the same cycles of every rank in the folder: which cycle a rank "
        "lacks cannot "
        "be told)"])
    assert not list(tmp_path.glob("*.xlsx"))
    bad = tmp_path / "bad"
    shutil.copytree(folders["base"], bad)
    (bad / cyc_name(1, 1) / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text("{")  # cycle 2 of rank 1
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = run_inproc(capsys, "-bp", str(bad), "-d", str(folders["comp"]), "-o", str(out),
                              "--enable_profiling_compare")
    assert code == 1 and error_lines(err)[0].startswith(f"error: rank 1 cycle 2: {bad / cyc_name(1, 1)}")
    assert "[INFO] The reports of rank 0 cycle 1, rank 1 cycle 1, rank 0 cycle 2 are complete and stay.\n" in err


@pytest.fixture(scope="module")
def single(tmp_path_factory) -> dict[str, Path]:
    """Single-device folders (profiler_info.json): base level0 then level1 of rank 0, comp the other way round."""
    root = tmp_path_factory.mktemp("single")
    for side, order in (("base", (TEXT0, TEXT1)), ("comp", (TEXT1, TEXT0))):
        for k, source in enumerate(order, 1):
            _profile(root / side, f"host_7_2025010100000000{3 - k}_ascend_pt", source, 0, END + k,
                     single=True)  # names against order
    return {side: root / side for side in ("base", "comp")}


def test_single_device_cycles(single, capsys, tmp_path):
    """A single device's cycles: units ``cycle k``, reports ``cycle{k}``, a Cycle column alone, no job line; the
    overview's records rank null, no job; --rank_list refused (no ranks). The job is named by its cycles, as it has
    no rank: the table's title, the overview's file, sheet and line (they read "Ranks")."""
    code, out, err = run_inproc(capsys, "-bp", str(single["base"]), "-d", str(single["comp"]), "-o", str(tmp_path),
                                "--output_format", "xlsx,json", "--enable_profiling_compare")
    assert code == 0, err
    assert sorted(re.sub(r"_\d{14}", "", p.name) for p in tmp_path.iterdir()) == [
        f"performance_comparison_result_{name}" for name in ("cycle1.json", "cycle1.xlsx", "cycle2.json",
                                                             "cycle2.xlsx", "cycles.json", "cycles.xlsx")]
    assert re.search(r"\n\|\s+Cycles: E2E Time and Diff, Diff of Its Parts \(ms\)\s+\|\n", out) and "Ranks" not in out
    overview = sorted(tmp_path.glob("performance_comparison_result_cycles_*"), key=lambda p: p.suffix == ".json")
    assert f"\nCycles overview: {', '.join(map(str, overview))}\n" in out
    ws = openpyxl.load_workbook(overview[0]).worksheets[0]
    assert (ws.title, ws["A3"].value, ws["A2"].value, ws["B2"].value) == ("Cycles", "Cycle", None, None)
    assert f"[INFO] cycle 1: comparing {single['base'] / cyc_name(7, 2)} with {single['comp'] / cyc_name(7, 2)}\n" \
        in err
    assert "| Cycle |   Base  | Comparison |" in out and "| Rank |" not in out
    assert not [line for line in out.splitlines() if line.startswith("Job")]
    b, c = stage(TEXT1, 0), stage(TEXT0, 0)  # cycle 2: level1 against level0
    assert (f"cycle 2: E2E {ms(b['Stage'])} ms -> {ms(c['Stage'])} ms ({ms(c['Stage'] - b['Stage'], '+')} ms, "
            f"{pct(b['Stage'], c['Stage'])}), ") in out
    doc = json.loads(overview[1].read_text())
    assert validate(doc, SCHEMA) == []
    assert [(r["rank"], r["cycle"], r["base_path"]) for r in doc["ranks"]] == [
        (None, 1, str(single["base"] / cyc_name(7, 2))), (None, 2, str(single["base"] / cyc_name(7, 1)))]
    assert (doc["job"], doc["job_line"], doc["not_compared"]) == (None, None, [])
    assert [u for u, _ in api.compare_ranks(single["base"], single["comp"], enable_profiling_compare=True)] == [
        RankCycle(None, 1), RankCycle(None, 2)]
    code, _, err = run_inproc(capsys, "-bp", str(single["base"]), "-d", str(single["comp"]), "-o", str(tmp_path),
                              "--rank_list", "0")
    assert code == 2 and "--rank_list selects ranks" in error_lines(err)[0]
    sheet = api.ranks_overview(api.compare_ranks(single["base"], single["comp"], enable_profiling_compare=True))
    from msprof_compare.report.ranks_report import sheet as ranks_sheet

    assert [c.header for c in ranks_sheet(sheet).columns][:2] == ["Cycle", "E2E Time(ms)"]
    from msprof_compare.report.ranks_console import render_ranks

    untimed = render_ranks([(RankCycle(None, k), None, [f"c{k}.xlsx"]) for k in (1, 2)])  # no breakdown: the title
    assert untimed.splitlines()[1].strip("| ") == "Cycles"
    assert render_ranks([(RankCycle(0, 1), None, ["r.xlsx"])]).splitlines()[1].strip("| ") == "Ranks"


def test_single_device_cycles_are_named_cycles_in_the_no_time_and_gate_lines(single, capsys, tmp_path):
    """Without a time breakdown the line under the table read "No E2E time per rank: ...; the rank reports hold
    what was compared" under a Cycle table of cycle{k} reports: it names cycles, as the gate's lines do. Cycle 1
    (level0 -> level1) is +17.49 % (test_single_device_cycles' figures), cycle 2 -14.88 %: at 10 % cycle 1 alone
    regressed."""
    code, out, err = run_inproc(capsys, "-bp", str(single["base"]), "-d", str(single["comp"]), "-o",
                                str(tmp_path / "comm"), "--enable_communication_compare")
    assert code == 0, err
    assert ("\nNo E2E time per cycle: --enable_profiling_compare (or --fail_on_regression) makes the time breakdown; "
            "the cycle reports hold what was compared\n") in out and "rank" not in out.lower().replace("ranks_", "")
    code, out, err = run_inproc(capsys, "-bp", str(single["base"]), "-d", str(single["comp"]), "-o",
                                str(tmp_path / "gate"), "--enable_communication_compare", "--fail_on_regression", "10")
    assert code == 3, err
    assert error_lines(err)[-1] == "error: --fail_on_regression 10: cycle 1 regressed beyond the threshold"
    assert "cycle 1: Performance regression: E2E time " in err and "No E2E time per" not in out
    assert not [line for line in out.splitlines() + error_lines(err) if re.search(r"\brank\b", line)]


def test_kineto_cycles_of_one_gpu(tmp_path):
    """tensorboard_trace_handler's cycles on one GPU (``w.<ms>.pt.trace.json.gz``, one worker, no rank): cycle k by
    the names' timestamps, as numbers."""
    for side, traces in (("a", ("bert-small_h100", "bert-small_mi300")),
                         ("b", ("bert-small_mi300", "bert-small_h100"))):
        (tmp_path / side).mkdir()
        for ms_, trace in zip((900, 1000), traces, strict=True):  # by the names' numbers: w.900 before w.1000
            shutil.copy(REPO / "sample_data" / f"{trace}.json.gz", tmp_path / side / f"w.{ms_}.pt.trace.json.gz")
    got = [(u, Path(result.base.path).name, Path(result.comparison.path).name) for u, result in
           api.compare_ranks(tmp_path / "a", tmp_path / "b", enable_profiling_compare=True)]
    assert got == [(RankCycle(None, 1), "w.900.pt.trace.json.gz", "w.900.pt.trace.json.gz"),
                   (RankCycle(None, 2), "w.1000.pt.trace.json.gz", "w.1000.pt.trace.json.gz")]
    # another worker's trace beside them (unrelated runs side by side): no cycles, the folder named with its traces
    shutil.copy(REPO / "sample_data" / "bert-small_h100.json.gz", tmp_path / "b" / "v.950.pt.trace.json.gz")
    with pytest.raises(ProfileError, match=r"b: holds 3 Kineto traces that record no rank \(no distributedInfo\.rank "
                                           r"in the first or last 64 KiB\), by name: v\.950\.pt\.trace\.json\.gz, "
                                           r"w\.900\.pt\.trace\.json\.gz, w\.1000\.pt\.trace\.json\.gz \(pass one"):
        api.ranks(tmp_path / "b")
    with pytest.raises(ProfileError, match="holds 2 cycles of a single device"):
        api.compare_ranks(tmp_path / "a", TEXT1)


def test_out_of_memory_keeps_its_unit_when_pickled(folders, monkeypatch):
    """A unit's out-of-memory error, pickled back from a worker process as a cluster task sends it, keeps its unit
    and its line (``rank 1 cycle 2: <input>: out of memory while loading it``) as a ProfileError does."""
    import pickle

    from msprof_compare.errors import OutOfMemory

    failing = input_of(folders, "base", 1, 2)
    real = api._compare_inputs

    def compare(base, comparison, *rest):
        if base == str(failing):
            raise OutOfMemory(base, "loading it")
        return real(base, comparison, *rest)

    monkeypatch.setattr(api, "_compare_inputs", compare)
    results = api.compare_ranks(folders["base"], folders["comp"], rank_list=[1], enable_profiling_compare=True)
    assert next(results)[0] == RankCycle(1, 1)
    with pytest.raises(OutOfMemory) as info:
        next(results)
    assert (info.value.rank, str(info.value)) == (RankCycle(1, 2), f"rank 1 cycle 2: {failing}: out of memory "
                                                                   "while loading it")
    back = pickle.loads(pickle.dumps(info.value))
    assert (type(back), back.rank, str(back), back.path) == (OutOfMemory, RankCycle(1, 2), str(info.value),
                                                             str(failing))


def test_single_device_gate_and_left_out_line(single, capsys, tmp_path):
    """A single device's cycles name their units as cycles in the job's lines too: the gate names the one cycle
    beyond the threshold by the profiler's step figures ("cycle 1", not "cycles 1"), and the line counting the
    notices left out speaks of cycles, not rank cycles. Both folders hold 2 cycles: no one-sided cycle is warned
    about."""
    code, _, err = run_inproc(capsys, "-bp", str(single["base"]), "-d", str(single["comp"]), "-o", str(tmp_path),
                              "--output_format", "json", "--fail_on_regression", "5")
    regressed = [k for k, (b, c) in enumerate(((TEXT0, TEXT1), (TEXT1, TEXT0)), 1)
                 if (stage(c, 0)["Stage"] - stage(b, 0)["Stage"]) / stage(b, 0)["Stage"] * 100 > 5]
    assert regressed == [1]
    assert code == 3
    assert error_lines(err)[-1] == "error: --fail_on_regression 5: cycle 1 regressed beyond the threshold"
    # the overview lists the cycles under the ranks keys (README: one reader for both files, no schema version)
    doc = json.loads(next(tmp_path.glob("performance_comparison_result_cycles_*.json")).read_text())
    assert validate(doc, SCHEMA) == []
    assert (doc["gate"]["ranks_regressed"], doc["gate"]["ranks_not_judged"]) == ([{"rank": None, "cycle": 1}], [])
    assert "cycles against" not in err  # as many cycles on both sides: none is one-sided
    left = [line for line in err.splitlines() if "Left out" in line]
    assert len(left) == 1 and left[0].endswith(" notices of later cycles, each the same as an earlier cycle's but "
                                               "for its paths; a cycle's two inputs compared alone show all its "
                                               "notices."), left


def test_overview_lists_units_not_compared_cycle_by_cycle(folders):
    """The units not compared, in the document as in the console's order: cycle by cycle, ranks in rank order
    within a cycle (a listed rank neither folder holds in each of the longer side's cycles, the comparison's third
    cycle of rank 1)."""
    doc = msprof_compare.ranks_overview(api.compare_ranks(folders["base"], folders["comp"], rank_list=[1, 5],
                                                          enable_profiling_compare=True))
    assert validate(doc, SCHEMA) == []
    assert [(r["rank"], r["cycle"], r["only_in"]) for r in doc["not_compared"]] == [
        (5, 1, None), (5, 2, None), (1, 3, "comparison"), (5, 3, None)]


def test_mindspore_cycles_by_their_recorded_ends(tmp_path):
    """MindSpore names a schedule's cycles ``{worker}_{timestamp}_ascend_ms``: each rank's are its cycles, in the
    order of the collection ends profiler_info records, here written as text (as a number in a string): the
    second name ended first."""
    fixture = REPO / "tests" / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
    info = json.loads((fixture / "profiler_info_0.json").read_text())
    folder = tmp_path / "ms"
    for r in (0, 1):
        for k, end in ((1, END + 10), (2, END)):
            path = folder / f"rank-{r}_2025010100000000{k}_ascend_ms"
            shutil.copytree(fixture / "ASCEND_PROFILER_OUTPUT", path / "ASCEND_PROFILER_OUTPUT")
            (path / f"profiler_info_{r}.json").write_text(json.dumps(
                {**info, "rank_id": r, "end_info": {**info["end_info"], "collectionTimeEnd": str(end)}}))
    expected = {RankCycle(r, k): str(folder / f"rank-{r}_2025010100000000{3 - k}_ascend_ms")
                for k in (1, 2) for r in (0, 1)}
    assert list(api.ranks(folder).items()) == list(expected.items())
    got = [(unit, str(result.base.path)) for unit, result in api.compare_ranks(folder, folder)]
    assert got == list(expected.items())


def test_compare_of_two_folders_of_single_device_cycles_names_compare_ranks(single):
    """compare() of two folders of a single device's cycles points to compare_ranks(), as for folders of ranks:
    the loader's error told to pass "one rank per side" of a device without ranks. Against one profile, it is said
    to be cycles and how they compare, with one of its profiles as the example (the loader's error read "pass one of
    them, one rank per side"; a Kineto folder's "holds 2 traces (pass the trace file itself)")."""
    with pytest.raises(ProfileError) as info:
        api.compare(single["base"], single["comp"])
    assert str(info.value) == (f"{single['base']}: is a folder of a single device's cycles, and so is the "
                               "comparison (compare_ranks() compares them cycle by cycle; or pass one profile per "
                               "side)")
    for base, comp, role in ((single["base"], TEXT1 / "rank0_ascend_pt", "comparison"),
                             (TEXT1 / "rank0_ascend_pt", single["base"], "base")):
        with pytest.raises(ProfileError) as info:
            api.compare(base, comp)
        other = comp if role == "comparison" else base
        assert str(info.value) == (
            f"{single['base']}: is a folder of a single device's cycles, but the {role} {other} is one profile "
            "(compare_ranks() compares two folders of a single device's cycles cycle by cycle, or one profile per "
            f"side, such as {Path(single['base']) / cyc_name(7, 1)})")


def test_single_device_profiles_of_two_workers_by_name_where_one_records_no_end(tmp_path):
    """Two workers' single-device profiles (unrelated runs: no cycles) are named by name where one records no
    collection end, as a folder's order is one for all its profiles."""
    folder = tmp_path / "two"
    cycle(folder, "host_8_20250101000000001_ascend_pt", None, END)
    cycle(folder, "host_7_20250101000000002_ascend_pt", None, None)
    with pytest.raises(ProfileError) as info:
        api.ranks(folder)
    assert str(info.value).startswith(f"{folder}: holds 2 profiles of single-device runs (no rank ids), by name: "
                                      "host_7_20250101000000002_ascend_pt, host_8_20250101000000001_ascend_pt (")


def test_single_device_cycles_against_cycles_of_ranks(single, folders, capsys, tmp_path):
    """A single device's cycles against a job's cycles of ranks: exit 1 saying what each side holds, before a
    compare (not "no rank in common")."""
    code, _, err = run_inproc(capsys, "-bp", str(single["base"]), "-d", str(folders["comp"]), "-o", str(tmp_path))
    assert (code, error_lines(err)) == (1, [
        f"error: {single['base']}: holds 2 cycles of a single device (a profiler schedule's), but the comparison "
        f"{folders['comp']} holds 3 cycles per rank (cycles compare cycle by cycle only against a folder of cycles "
        "of the same kind: pass one cycle's folder (split by the timestamps in the names), or both folders of "
        "cycles)"])
    assert not list(tmp_path.iterdir())


def test_overview_refuses_a_single_devices_cycles_beside_cycles_of_ranks(single, folders):
    """Results gathered by hand from a single device's cycles and from cycles of ranks are two jobs: the overview
    refuses them together, as ranks beside RankCycle units (its sheet dropped the Rank column of rank 0's row, its
    job the cycle of ranks)."""
    lone = next(iter(api.compare_ranks(single["base"], single["comp"], enable_profiling_compare=True)))
    ranked = next(iter(api.compare_ranks(folders["base"], folders["comp"], enable_profiling_compare=True)))
    assert (lone[0], ranked[0]) == (RankCycle(None, 1), RankCycle(0, 1))
    with pytest.raises(UsageError, match=r"cycles of ranks \(RankCycle\) and a single device's cycles \(RankCycle, "
                                         r"rank None\) are given together \(one kind per job\)"):
        msprof_compare.ranks_overview([lone, ranked])
    assert [r["cycle"] for r in msprof_compare.ranks_overview([lone])["ranks"]] == [1]


#: tb_plugin's two real runs of one worker's profiler schedule (tensorboard_trace_handler's ``worker0.<ms>`` cycles)
TB = REPO.parent / "shared" / "samples" / "kineto" / "tb_plugin" / "samples"
TB_RUNS = ("resnet50_num_workers_0", "resnet50_num_workers_4")


def _ranked(src: Path, dst: Path, rank: int) -> None:
    """A copy of a real Kineto trace as rank ``rank`` of a distributed run writes it: ``distributedInfo`` first."""
    body = gzip.decompress(src.read_bytes())
    at = body.index(b"{") + 1
    info = b'\n  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 2},' % rank
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(gzip.compress(body[:at] + info + body[at:], compresslevel=1))


@pytest.fixture(scope="module")
def kineto_jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders of two Kineto rank subfolders, each holding its rank's two cycles as tensorboard_trace_handler writes
    them: in ``a`` rank 0 is tb_plugin's num_workers_0 run (in node1/: the names' order is not the ranks') and rank 1
    its num_workers_4 run (in node0/); in ``b`` the other way round."""
    root = tmp_path_factory.mktemp("kineto_cycles")
    for side, runs in (("a", TB_RUNS), ("b", TB_RUNS[::-1])):
        for rank, run in enumerate(runs):
            for src in (TB / run).iterdir():
                _ranked(src, root / side / f"node{1 - rank}" / src.name, rank)
    return {side: root / side for side in ("a", "b")}


def test_kineto_rank_subfolders_of_cycles(kineto_jobs):
    """A Kineto rank subfolder holding its rank's cycles (one worker's ``worker0.<ms>.pt.trace.json.gz``) is that
    rank's cycles, as an NPU rank's cycles side by side are: it was refused ("node0: holds 2 traces: a rank's folder
    holds one"). Cycle k is the k-th by the names' timestamps; each unit compares its two traces as compare() does."""
    def trace(side: str, rank: int, k: int) -> str:
        run = TB_RUNS[rank if side == "a" else 1 - rank]
        return str(kineto_jobs[side] / f"node{1 - rank}" / sorted(p.name for p in (TB / run).iterdir())[k - 1])

    assert list(api.ranks(kineto_jobs["a"]).items()) == [(RankCycle(r, k), trace("a", r, k))
                                                           for k in (1, 2) for r in (0, 1)]
    got = [(unit, str(result.base.path), str(result.comparison.path), result.frames["overall"])
           for unit, result in api.compare_ranks(kineto_jobs["a"], kineto_jobs["b"], rank_list=[1],
                                                 enable_profiling_compare=True)]
    assert [g[:3] for g in got] == [(RankCycle(1, k), trace("a", 1, k), trace("b", 1, k)) for k in (1, 2)]
    for (unit, base, comp, frame) in got:
        single = api.compare(base, comp, enable_profiling_compare=True).frames["overall"]
        assert frame.equals(single) and frame["ns"].any(), unit
    # the job's folders are those given, not the subfolder of a rank's cycles; against one profile, the example
    # of a rank to pass is one of the folder's
    doc = msprof_compare.ranks_overview(api.compare_ranks(kineto_jobs["a"], kineto_jobs["b"], rank_list=[0],
                                                          enable_profiling_compare=True))
    assert (doc["base_path"], doc["comparison_path"]) == (str(kineto_jobs["a"]), str(kineto_jobs["b"]))
    assert validate(doc, SCHEMA) == []
    with pytest.raises(ProfileError, match=re.escape(f"one rank per side, such as {trace('a', 1, 1)})")):
        api.compare(kineto_jobs["a"], trace("b", 0, 1))


def test_kineto_subfolders_of_no_ones_cycles_stay_errors(kineto_jobs, tmp_path):
    """Traces in a rank subfolder are its cycles only where their names are one worker's; traces of one worker in two
    folders are two runs (tb_plugin's samples: both runs' worker0): errors naming the traces from the folder."""
    job = tmp_path / "job"
    shutil.copytree(kineto_jobs["a"], job)
    first = sorted((job / "node0").iterdir())[0]
    first.rename(first.with_name("worker1" + first.name.removeprefix("worker0")))  # another worker's
    with pytest.raises(ProfileError, match=r"node0: holds 2 traces: a rank's folder holds one \(or a profiler "
                                           r"schedule's cycles, named as tensorboard_trace_handler names them: "
                                           r"<worker>\.<ms>\.pt\.trace\.json, one worker's; or pass one trace per "
                                           r"side, such as \S+/node0/worker\S+\)$"):
        api.ranks(job)
    runs = tmp_path / "runs"
    for run in TB_RUNS:
        shutil.copytree(TB / run, runs / run)
    with pytest.raises(ProfileError) as info:
        api.ranks(runs)
    names = [f"{run}/{p.name}" for run in TB_RUNS for p in sorted((TB / run).iterdir())]
    assert str(info.value).startswith(f"{runs}: holds 4 Kineto traces that record no rank (no distributedInfo.rank "
                                      f"in the first or last 64 KiB), by name: {', '.join(names)} (pass one of them")
    shutil.rmtree(runs / TB_RUNS[1])  # one run's cycles in its folder: a single device's cycles
    assert api.ranks(runs) == {RankCycle(None, k): str(runs / name) for k, name in enumerate(names[:2], 1)}


def test_kineto_cycles_folder_against_one_trace_on_the_command_line(tmp_path, capsys):
    """tb_plugin's num_workers_0 run (a single device's two real cycles, ``worker0.<ms>``) against one trace of the
    num_workers_4 run: exit 1, one line saying the folder holds a single device's cycles and how they compare
    (it read "directory holds 2 traces (...) (pass the trace file itself)"), nothing written."""
    folder, trace = TB / TB_RUNS[0], sorted((TB / TB_RUNS[1]).iterdir())[0]
    first = sorted(folder.iterdir())[0]
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", str(folder), "-d", str(trace), "-o", str(out)])
    err = [line for line in capsys.readouterr().err.splitlines() if "Security Warning" not in line]
    assert info.value.code == 1
    assert err == [f"error: {folder}: is a folder of a single device's cycles, but the comparison {trace} is one "
                   "profile (pass a folder of a single device's cycles on both sides (-bp and -d, or both paths of "
                   f"performance_compare.py) to compare cycle by cycle, or one profile per side, such as {first})"]
    assert not out.exists() or not any(out.iterdir())
