"""``--rank_list`` (``compare_ranks(rank_list=...)``): the ranks of two folders of ranks to compare, as
msprof-analyze's cluster modes take it (README "Multi-rank runs").

Samples: text/level0 and text/level1 hold ranks 0 and 1 each, text/level2 rank 0 alone; hta's trace_filter two
Kineto ranks (0, 1). Expected figures are the profiler's own step_trace_time.csv (``test_ranks.stage``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import openpyxl
import pytest

import msprof_compare
from msprof_compare import api, cli
from msprof_compare.errors import ProfileError, UsageError
from msprof_compare.options import parse_rank_list
from tests.cliutil import error_lines, finish, run_inproc
from tests.test_json_report import validate
from tests.test_ranks import ANALYZE, KINETO, PT, REPO, STAMPED, TEXT0, TEXT1, TEXT2, ms, stage, table_rows

SCHEMA = json.loads((REPO / "msprof_compare" / "schemas" / "ranks.schema.json").read_text())
BAD = ("error: Invalid param, --rank_list must be all or rank ids (integers from 0 to 2147483647) separated by commas "
       "or blanks (got ")

pytestmark = pytest.mark.skipif(not PT.is_dir(), reason="sample data not found")


def reports(out: Path) -> dict[tuple[int, str], dict | Path]:
    """{(rank, extension): the JSON report's document, or the workbook's path} of a rank-by-rank run's folder."""
    found = {}
    for path in out.iterdir():
        m = STAMPED.match(path.name)
        if m:
            found[int(m[1]), m[3]] = json.loads(path.read_text()) if m[3] == "json" else path
    return found


def overview(out: Path) -> dict:
    (path,) = out.glob("performance_comparison_result_ranks_*.json")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """text/level0 against text/level1 with the profiling compare and both reports: every rank, ``--rank_list 1``
    and ``--rank_list 0,1,7`` (the three at once)."""
    root = tmp_path_factory.mktemp("rank_list")
    started = {}
    for name, extra in (("all", []), ("one", ["--rank_list", "1"]), ("seven", ["--rank_list", " 0 7 ,1"])):
        started[name] = subprocess.Popen(
            [sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(root / name),
             "--enable_profiling_compare", "--output_format", "xlsx,json", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return {name: (finish(proc), root / name) for name, proc in started.items()}


def without_volatile(doc: dict) -> dict:
    """A report but for the time it was made and its inputs' paths (as test_ranks' single-compare check)."""
    doc = {k: v for k, v in doc.items() if k != "generated_at"}
    return {**doc, **{side: {k: v for k, v in doc[side].items() if k != "path"} for side in ("base", "comparison")}}


def test_parse_rank_list():
    assert parse_rank_list(None) is None and parse_rank_list("all") is None and parse_rank_list(" ALL ") is None
    assert parse_rank_list(" 3, 0 ") == (0, 3) and parse_rank_list("8,1") == (1, 8)  # in rank order
    # blanks separate ids as they separate --output_format's items ("json xlsx"): "0 3" was refused
    assert parse_rank_list("0 3") == parse_rank_list("3\t0") == parse_rank_list("0 ,3") == (0, 3)
    assert parse_rank_list(["0", " 3 "]) == (0, 3)  # a list's item is one id
    assert parse_rank_list([np.int64(2), 0, 3.0]) == (0, 2, 3) and parse_rank_list(5) == (5,)
    assert parse_rank_list({3, 1}) == (1, 3) and parse_rank_list(np.array([4, 2])) == (2, 4)
    for bad, why in (("a,1", "'a' is not a rank id"), ("-1", "'-1' is not a rank id"), ("1,,2", "an empty item"),
                     ("1.0", "'1.0' is not a rank id"), ("1_0", "'1_0' is not a rank id"),
                     ("\u0661", "'\u0661' is not a rank id"), ([], "no rank id"), ([True], "True is not a rank id"),
                     ([-1], "-1 is not a rank id"), ([1.5], "1.5 is not a rank id"),
                     ("2147483648", "'2147483648' is not a rank id"), ([2**31], "2147483648 is not a rank id"),
                     ("0 x", "'x' is not a rank id"), (["0 3"], "'0 3' is not a rank id"), ("0 ,,3", "an empty item"),
                     # a repeated id was dropped silently (as --output_format json,json was taken): refused, named
                     # as the id it reads; a bad item is named first
                     ("0,0", "a repeated item, 0"), (" 3, 0 ,3", "a repeated item, 3"), ("1,01", "a repeated item, 1"),
                     ("0 ,3 3", "a repeated item, 3"), ([np.int64(2), 0, 2.0], "a repeated item, 2"),
                     ("0,0,x", "'x' is not a rank id")):
        with pytest.raises(UsageError) as info:
            parse_rank_list(bad, "rank_list")
        assert str(info.value) == ("Invalid param, rank_list must be all or rank ids (integers from 0 to 2147483647) "
                                   f"separated by commas or blanks (got {bad!r}: {why})"), bad
    # 5,000 digits: int() raised ValueError past its 4,300-digit limit (an internal error), and the line quoted them
    # all; leading zeros are no digits of the id
    cut = repr("9" * 5000)[:37] + "..."
    for bad, got, why in (("9" * 5000, cut, cut), ([10**5000], "<too long to show>", "<too long to show>")):
        with pytest.raises(UsageError) as info:
            parse_rank_list(bad, "rank_list")
        assert str(info.value) == ("Invalid param, rank_list must be all or rank ids (integers from 0 to 2147483647) "
                                   f"separated by commas or blanks (got {got}: {why} is not a rank id)")
    assert parse_rank_list("0" * 5000 + "7") == (7,) and parse_rank_list("2147483647") == (2147483647,)


def test_one_rank_listed_is_its_report_of_the_full_run(runs):
    """``--rank_list 1``: rank 1 alone is compared; its reports are rank 1's of the full run but for the time and
    paths, its options recording no rank_list (a rank's report is that rank compared alone); the table, the job
    line and the overview hold rank 1 alone, with the profiler's figures."""
    (full, full_out), (one, one_out) = runs["all"], runs["one"]
    assert full.returncode == one.returncode == 0, one.stderr
    got, want = reports(one_out), reports(full_out)
    assert sorted(got) == [(1, "json"), (1, "xlsx")]
    assert sorted(want) == [(r, e) for r in (0, 1) for e in ("json", "xlsx")]
    assert without_volatile(got[1, "json"]) == without_volatile(want[1, "json"])
    assert "rank_list" not in got[1, "json"]["options"]
    b, c = stage(TEXT0, 1), stage(TEXT1, 1)
    assert table_rows(one.stdout) == {1: table_rows(full.stdout)[1]}
    assert table_rows(one.stdout)[1][1:4] == [ms(b["Stage"]), ms(c["Stage"]), ms(c["Stage"] - b["Stage"], "+")]
    # the job line says its slowest ranks are of those selected (the full run's slowest may be one left out)
    assert f"Job (slowest rank per side of rank 1 selected): base rank 1 {ms(b['Stage'])} ms -> comparison rank 1 " \
        f"{ms(c['Stage'])} ms" in one.stdout
    assert "rank 0" not in one.stderr and "not compared" not in one.stderr  # rank 0 is held, not listed: no word
    doc = overview(one_out)
    assert validate(doc, SCHEMA) == []
    assert doc["rank_list"] == [1] and [r["rank"] for r in doc["ranks"]] == [1] and doc["not_compared"] == []
    assert overview(full_out)["rank_list"] is None


def test_listed_rank_neither_folder_holds_is_warned_and_recorded(runs):
    """``--rank_list " 0 7 ,1"`` (blanks separate as commas do): ranks 0 and 1 compared as in the full run, 7
    named once in one warning and recorded not compared (in neither folder); the overview's list is the parsed one."""
    (full, _), (seven, out) = runs["all"], runs["seven"]
    assert seven.returncode == 0, seven.stderr
    said = [line for line in seven.stderr.splitlines() if "not compared" in line]
    assert len(said) == 1 and said[0].endswith(f"[WARNING] Rank of --rank_list in neither the base {TEXT0} nor the "
                                               f"comparison {TEXT1}, not compared: 7")
    assert table_rows(seven.stdout) == table_rows(full.stdout)
    doc = overview(out)
    assert validate(doc, SCHEMA) == []
    assert doc["rank_list"] == [0, 1, 7] and [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert doc["not_compared"] == [{"rank": 7, "only_in": None, "base_path": None, "comparison_path": None}]
    (book,) = out.glob("performance_comparison_result_ranks_*.xlsx")
    ws = openpyxl.load_workbook(book)["Ranks"]
    heads = [c.value for c in ws[3]]
    last = [c.value for c in ws[6]]  # rows 4 and 5: ranks 0 and 1
    assert last[0] == 7 and last[heads.index("Compared")] == "no (in neither folder)"
    e2e = [{r: stage(folder, r)["Stage"] for r in (0, 1)} for folder in (TEXT0, TEXT1)]
    (rb, b), (rc, c) = (max(side.items(), key=lambda kv: kv[1]) for side in e2e)
    job = f"Job (slowest rank per side): base rank {rb} {ms(b)} ms -> comparison rank {rc} {ms(c)} ms ("
    # the console's job line names the selection as given and says which of it was not compared
    assert job.replace("per side)", "per side of ranks 0, 1, 7 selected, rank 7 not compared)") in seven.stdout
    # the workbook alone says ranks were selected, and which of them were not compared, as the job line does
    assert row2(ws).startswith(f"Ranks selected: 0, 1, 7 (rank 7 not compared)\n{job}")
    (book,) = runs["all"][1].glob("performance_comparison_result_ranks_*.xlsx")
    assert row2(openpyxl.load_workbook(book)["Ranks"]).startswith(job)


def row2(ws) -> str:
    """The Ranks sheet's row 2: its one text."""
    (text,) = [c.value for c in ws[2] if c.value is not None]
    return text


def test_many_ranks_selected_are_named_a_few():
    """A long rank_list: row 2 names 32 of its ids and the count (every listed rank has its row); the JSON all."""
    from msprof_compare.report.ranks_report import overview, sheet

    figures = {"e2e": (2_000_000, 3_000_000)}
    ranks = range(0, 80, 2)  # each compared, alike: the slowest per side is the lowest, rank 0
    doc = overview([(r, figures, []) for r in ranks], {r: (f"b/{r}", f"c/{r}") for r in ranks}, ("b", "c"),
                   rank_list=tuple(ranks))
    assert doc["rank_list"] == list(range(0, 80, 2))
    ids = ", ".join(map(str, range(0, 64, 2)))
    assert sheet(doc).note == (f"Ranks selected: {ids}, ... (40 in all)\nJob (slowest rank per side): base rank 0 "
                               "2.000 ms -> comparison rank 0 3.000 ms (+1.000 ms, +50.00%)")
    assert sheet({**doc, "job_line": None, "rank_list": [2]}).note == "Ranks selected: 2"
    assert sheet({**doc, "rank_list": None}).note == doc["job_line"]


def test_row_2_names_the_selected_ranks_not_compared():
    """Row 2 listed the ranks of --rank_list alike, compared or not ("Ranks selected: 0, 1, 7"): those without a
    compared record are named after them, as the console's job line names them; a rank one folder alone holds
    counts as not compared too. A schedule's cycles: ranks compared in no cycle, then per cycle those compared in
    another only. A few of many with the count."""
    from msprof_compare.report.ranks_report import overview, sheet
    from msprof_compare.units import RankCycle

    figures = {"e2e": (2_000_000, 3_000_000)}
    job = "Job (slowest rank per side): base rank 0 2.000 ms -> comparison rank 0 3.000 ms (+1.000 ms, +50.00%)"
    inputs = {0: ("b/0", "c/0"), 1: ("b/1", "c/1")}
    doc = overview([(0, figures, [])], inputs, ("b", "c"), rank_list=(0, 7, 1),
                   not_compared={7: (None, None), 1: ("b/1", None)})
    assert sheet(doc).note == f"Ranks selected: 0, 7, 1 (ranks 7, 1 not compared)\n{job}"
    assert sheet({**doc, "rank_list": [0]}).note == f"Ranks selected: 0\n{job}"
    many = overview([(0, figures, [])], inputs, ("b", "c"), rank_list=tuple(range(40)))
    listed, missing = ", ".join(map(str, range(32))), ", ".join(map(str, range(1, 33)))
    assert sheet(many).note.startswith(f"Ranks selected: {listed}, ... (40 in all) (ranks {missing}, ... (39 in all) "
                                       "not compared)\nJob (")
    cycles = [(RankCycle(0, 1), figures, []), (RankCycle(0, 2), figures, []), (RankCycle(1, 2), figures, [])]
    inputs = {u: ("b", "c") for u, _, _ in cycles}
    doc = overview(cycles, inputs, ("b", "c"), rank_list=(0, 1, 5))
    assert sheet(doc).note.startswith("Ranks selected: 0, 1, 5 (rank 5 not compared; rank 1 not compared in cycle 1)"
                                      "\nJob cycle 1 (")


def test_job_line_names_the_selected_ranks_not_compared():
    """The job's line named the ranks of --rank_list as given ("of ranks 0, 7 selected") where rank 7 was in
    neither folder: it says which were not compared (no row), in order, a few of many with the count; per cycle
    of a schedule's cycles, of that cycle's rows."""
    from msprof_compare.report.ranks_console import job_line, job_lines
    from msprof_compare.units import RankCycle

    figs = {"e2e": (2_000_000, 3_000_000)}
    tail = "): base rank 0 2.000 ms -> comparison rank 0 3.000 ms (+1.000 ms, +50.00%)"
    assert job_line([(0, figs, [])], selected=(0, 7)) == (
        f"Job (slowest rank per side of ranks 0, 7 selected, rank 7 not compared{tail}")
    assert job_line([(0, figs, [])], selected=(0,)) == f"Job (slowest rank per side of rank 0 selected{tail}"
    assert job_line([(0, figs, [])]) == f"Job (slowest rank per side{tail}"
    many = tuple(range(0, 20))
    assert job_line([(0, figs, [])], selected=many) == (
        "Job (slowest rank per side of ranks 0, 1, 2, 3, 4, 5, 6, 7, ... (20 in all) selected, ranks 1, 2, 3, 4, "
        f"5, 6, 7, 8, ... (19 in all) not compared{tail}")
    rows = [(RankCycle(0, 1), figs, []), (RankCycle(0, 2), figs, []), (RankCycle(1, 2), figs, [])]
    assert job_lines(rows, (0, 1)) == [
        f"Job cycle 1 (slowest rank per side of ranks 0, 1 selected, rank 1 not compared{tail}",
        f"Job cycle 2 (slowest rank per side of ranks 0, 1 selected{tail}"]


def test_one_sided_ranks_concern_the_listed_ones(capsys, tmp_path):
    """text/level1 (ranks 0, 1) against text/level2 (rank 0): with ``--rank_list 0`` rank 1 is not selected, so
    no "only in the base" warning and nothing not compared; listed, rank 1 is the one-sided rank it is today;
    ``--rank_list 1`` alone has no rank in common: exit 1 naming the list and what each folder holds."""
    code, out, err = run_inproc(capsys, "-bp", str(TEXT1), "-d", str(TEXT2), "-o", str(tmp_path / "zero"),
                                "--output_format", "json", "--rank_list", "0")
    assert code == 0, err
    assert "not compared" not in err and table_rows(out).keys() == {0}
    assert overview(tmp_path / "zero")["not_compared"] == []
    code, out, err = run_inproc(capsys, "-bp", str(TEXT1), "-d", str(TEXT2), "-o", str(tmp_path / "both"),
                                "--output_format", "json", "--rank_list", "1,0")
    assert code == 0, err
    assert f"[WARNING] Rank only in the base {TEXT1}, not compared: 1\n" in err
    assert "Job (slowest rank per side of ranks 0, 1 selected, rank 1 not compared): base rank 0 " in out
    doc = overview(tmp_path / "both")
    assert doc["rank_list"] == [0, 1] and doc["not_compared"] == [
        {"rank": 1, "only_in": "base", "base_path": str(TEXT1 / "rank1_ascend_pt"), "comparison_path": None}]
    code, out, err = run_inproc(capsys, "-bp", str(TEXT1), "-d", str(TEXT2), "-o", str(tmp_path / "none"),
                                "--rank_list", "1")
    assert code == 1
    assert error_lines(err) == [f"error: no rank of --rank_list '1' in common: the base {TEXT1} holds ranks 0, 1, "
                                f"the comparison {TEXT2} holds rank 0"]
    assert not (tmp_path / "none").exists()
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path / "seven"),
                              "--rank_list", "7")
    assert code == 1 and error_lines(err) == [f"error: no rank of --rank_list '7' in common: the base {TEXT0} holds "
                                              f"ranks 0, 1, the comparison {TEXT1} holds ranks 0, 1"]


@pytest.mark.parametrize("given", ["a,1", "-1", "1,,2", "", "0,0"])
def test_bad_list_is_a_usage_error_before_a_folder_is_read(given, capsys, tmp_path, monkeypatch):
    from msprof_compare.loaders import ranks

    monkeypatch.setattr(ranks, "rank_inputs", lambda *a: pytest.fail("a folder was read"))
    why = {"1,,2": "an empty item", "0,0": "a repeated item, 0"}.get(given, f"{given.split(',')[0]!r} is not a rank id")
    line = f"{BAD}{given!r}: {why})" if given else (  # empty: the line of every option's empty value
        "error: Invalid param, --rank_list is empty (a shell variable that expanded to nothing?); leave it out or "
        "give all or rank ids such as 0,3")
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                              f"--rank_list={given}")
    assert code == 2 and error_lines(err) == [line]
    assert cli.script_main([str(TEXT0), str(TEXT1), "-o", str(tmp_path), "--rank_list", given]) == 2
    assert error_lines(capsys.readouterr().err) == [line]
    assert not list(tmp_path.iterdir())


def test_single_compare_refuses_a_rank_list(capsys, tmp_path):
    """A single compare: --rank_list other than all is a usage error of both faces; all is the default. A folder of
    ranks against one profile keeps its refusal, which says what to pass."""
    one0, one1 = TEXT0 / "rank0_ascend_pt", TEXT1 / "rank0_ascend_pt"
    # the script's paths named too: it has no -bp / -d (found by option fuzzing, optfuzz63)
    said = ("error: --rank_list '0' selects ranks of two folders of ranks (-bp and -d, or both paths of "
            "performance_compare.py, each holding rank0_ascend_pt, ... or one Kineto trace per rank); these inputs are "
            "one profile each: leave it out")
    code, _, err = run_inproc(capsys, "-bp", str(one0), "-d", str(one1), "-o", str(tmp_path), "--rank_list", "0")
    assert code == 2 and error_lines(err) == [said]
    assert cli.script_main([str(one0), str(one1), "-o", str(tmp_path), "--rank_list", "0"]) == 2
    assert error_lines(capsys.readouterr().err) == [said]
    assert not list(tmp_path.iterdir())
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(one1), "-o", str(tmp_path), "--rank_list", "0")
    assert code == 1 and error_lines(err)[0].startswith(f"error: {TEXT0}: is a folder of ranks, but the comparison")
    code, _, err = run_inproc(capsys, "-bp", str(one0), "-d", str(one1), "-o", str(tmp_path), "--rank_list", "all",
                              "--enable_api_compare")
    assert code == 0, err


def test_script_face_selects_ranks(tmp_path):
    """``performance_compare.py BASE COMPARISON --rank_list 1`` on Kineto ranks: rank 1's report alone."""
    proc = subprocess.run([sys.executable, str(REPO / "performance_compare.py"), str(KINETO), str(KINETO),
                           "--enable_api_compare", "--rank_list", "1", "-o", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert [STAMPED.match(p.name)[1] for p in tmp_path.iterdir() if "_ranks_" not in p.name] == ["1"]
    assert table_rows(proc.stdout).keys() == {1}


def test_api_rank_list():
    """``compare_ranks(..., rank_list=...)`` as the CLI's flag: a list or its text; the iterator's rank_list and
    not_compared reach ``ranks_overview``; bad values name the keyword; ``compare()`` points at compare_ranks."""
    results = msprof_compare.compare_ranks(KINETO, KINETO, enable_profiling_compare=True, rank_list=[1, 9])
    assert results.rank_list == (1, 9) and results.not_compared == {9: (None, None)}
    doc = msprof_compare.ranks_overview(results)
    assert [r["rank"] for r in doc["ranks"]] == [1] and doc["rank_list"] == [1, 9]
    assert validate(doc, SCHEMA) == []
    single = api.compare(KINETO / "sampled_rank-1.json.gz", KINETO / "sampled_rank-1.json.gz",
                         enable_profiling_compare=True)
    assert doc["ranks"][0]["e2e"]["base_ns"] == int(single.frames["e2e"]["base_ns"].iloc[0])
    assert [r for r, _ in msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True,
                                                       rank_list="0")] == [0]
    assert [r for r, _ in msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True,
                                                       rank_list="all")] == [0, 1]
    with pytest.raises(UsageError, match=r"^Invalid param, rank_list must be .* \(got 'x': 'x' is not a rank id\)"):
        msprof_compare.compare_ranks(KINETO, KINETO, rank_list="x")
    with pytest.raises(UsageError, match=r"^Invalid param, rank_list must be .* \(got \[1, 1\]: a repeated item, 1\)$"):
        msprof_compare.compare_ranks(KINETO, KINETO, rank_list=[1, 1])
    with pytest.raises(ProfileError, match=r"^no rank of rank_list=\[5, 9\] in common: "):  # as Python takes it
        msprof_compare.compare_ranks(KINETO, KINETO, rank_list=[9, 5])
    with pytest.raises(UsageError, match=r"unknown option\(s\): rank_list \(rank_list selects ranks of "
                                         r"compare_ranks\(\), which compares two folders of ranks\)"):
        api.compare(KINETO / "sampled_rank-1.json.gz", KINETO / "sampled_rank-1.json.gz", rank_list=[1])


def test_ranks_overview_takes_the_rank_list():
    """Results gathered by hand (a list, a caller's generator) record no rank_list: ``ranks_overview(...,
    rank_list=)`` gives it, as compare_ranks takes it, over the iterator's own; a bad value is refused before a
    result is taken, a rank given that the list leaves out is refused."""
    kept = list(msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True, rank_list=[1]))
    assert [r for r, _ in kept] == [1] and msprof_compare.ranks_overview(kept)["rank_list"] is None
    for given in ("9, 1", [9, 1], np.array([1, 9]), range(1, 10, 8)):
        doc = msprof_compare.ranks_overview(kept, rank_list=given)
        assert doc["rank_list"] == [1, 9] and validate(doc, SCHEMA) == []
    assert msprof_compare.ranks_overview(kept, rank_list=1)["rank_list"] == [1]
    selected = msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True, rank_list=[1, 9])
    assert msprof_compare.ranks_overview(selected, rank_list="all")["rank_list"] is None  # given: it wins
    selected = msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True, rank_list=[1, 9])
    assert msprof_compare.ranks_overview(selected, rank_list=[1, 2, 9])["rank_list"] == [1, 2, 9]

    def untouched():
        pytest.fail("a result was taken")
        yield

    with pytest.raises(UsageError, match=r"^Invalid param, rank_list must be .* \(got '1,x': 'x' is not a rank id\)"):
        msprof_compare.ranks_overview(untouched(), rank_list="1,x")
    with pytest.raises(UsageError, match=r"^ranks_overview: rank 1 is given, but not in rank_list \[0, 3\]$"):
        msprof_compare.ranks_overview(kept, rank_list="3,0")
    selected = msprof_compare.compare_ranks(KINETO, KINETO, enable_api_compare=True, rank_list=[1, 9])
    with pytest.raises(UsageError, match=r"^ranks_overview: rank 9 is given, but not in rank_list \[1\]$"):
        msprof_compare.ranks_overview(selected, rank_list=[1])  # 9, not compared, was selected


def test_help_names_the_flag(capsys):
    code, out, _ = run_inproc(capsys, "--help")
    flat = " ".join(out.split())
    text = ("--rank_list LIST Ranks to compare when both inputs are folders of ranks (-bp and -d, or both paths of "
            "performance_compare.py): all (default) or rank ids separated by commas or blanks, e.g. 0,3")
    assert code == 0 and text in flat
    assert text.replace("--rank_list LIST ", "") in " ".join(cli.build_script_parser().format_help().split())
