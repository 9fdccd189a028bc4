"""Typos a user makes on the command line, each told in one line with the option meant (exit 2), on every face:
one dash where two go (``-hlep``, ``-enable_api_compare``), which click reads as a cluster of one-letter options
and named by one letter ("No such option: -l", "-e") that neither showed what was typed nor led to the option."""

from __future__ import annotations

from pathlib import Path

import pytest
from cliutil import run_entry as _run

from msprof_compare import cli

REPO = Path(__file__).resolve().parents[1]
BASE, COMPARISON = (str(REPO / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))


@pytest.mark.parametrize(("typed", "meant"), [
    ("-hlep", "--help"),  # -h, then -l: click named -l
    ("-help", "--help"),  # -h, then -e
    ("-Hlep", "--help"),
    ("-enable_api_compare", "--enable_api_compare"),  # a "_" in it: click named -e
    ("-fail_on_regression=5", "--fail_on_regression"),  # the name before "=", as a long option's
    ("-benchmark_profiling_path", "--benchmark_profiling_path"),
])
def test_one_dash_where_two_go_names_the_option_as_typed(capsys: pytest.CaptureFixture, typed: str,
                                                         meant: str) -> None:
    """The word as typed, as ``--hlep`` is named, and the option it may mean (``options.close_names``)."""
    name = typed.split("=", 1)[0]
    for main, args, where in ((cli.analyze_main, ["compare", "-bp", BASE, typed], "msprof-analyze compare"),
                              (cli.compare_main, ["-bp", BASE, typed], "msprof-compare")):
        assert _run(capsys, main, args) == (
            2, "", f"error: No such option: {name} (Possible options: {meant}) (see '{where} --help')\n")


def test_a_group_option_with_one_dash_is_named_as_typed(capsys: pytest.CaptureFixture) -> None:
    """``msprof-analyze -hlep``: the group's own help, as ``msprof-analyze --hlep`` is told of it."""
    assert _run(capsys, cli.analyze_main, ["-hlep"]) == (
        2, "", "error: No such option: -hlep (Possible options: --help) (see 'msprof-analyze --help')\n")


@pytest.mark.parametrize(("typed", "meant"), [
    (["-output_path", "out"], "--output_path"),  # read as -o utput_path, and "out" an extra argument
    (["-output_path=out"], "--output_path"),  # wrote into a folder named utput_path=out
    (["-output-format", "json"], "--output_format"),
    (["-op_name_map", "{}"], "--op_name_map"),
    # the start of a long option (the script's argparse takes --output as an abbreviation): a folder named utput
    (["-output", "--enable_api_compare"], "--output_format, --output_path"),
    (["-output_form", "--enable_api_compare"], "--output_format"),
    (["-out", "x"], "--output_format, --output_path"),  # no near spelling: the options its two-dash form starts
    (["-dis"], "--disable_details, --disable_module"),
])
def test_a_long_option_with_one_dash_is_no_short_option_with_its_value(capsys: pytest.CaptureFixture,
                                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      typed: list[str], meant: str) -> None:
    """A long option typed with one dash (``_`` or ``-`` in it) was read by both faces' parsers as ``-o`` with
    the rest as its value: the run wrote into a folder named ``utput_path``. Refused as an unknown option, with the
    option meant, on every face, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    name = typed[0].split("=", 1)[0]
    for main, args, head, where in (
            (cli.analyze_main, ["compare", "-bp", BASE, "-d", COMPARISON, *typed], "No such option",
             "msprof-analyze compare"),
            (cli.compare_main, ["-bp", BASE, "-d", COMPARISON, *typed], "No such option", "msprof-compare"),
            (cli.script_main, [BASE, COMPARISON, *typed], "unrecognized arguments", "performance_compare.py")):
        assert _run(capsys, main, args) == (
            2, "", f"error: {head}: {name} (Possible options: {meant}) (see '{where} --help')\n")
    assert list(tmp_path.iterdir()) == []


def test_debug_with_one_dash_is_no_comparison_path(capsys: pytest.CaptureFixture) -> None:
    """``-debug`` read as ``-d ebug`` on the CLI: a comparison path named ``ebug`` (not found, exit 1), the -d given
    before it dropped without a word."""
    code, out, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, "-debug"])
    assert (code, out, err) == (2, "", "error: No such option: -debug (Possible options: --debug) (see "
                                       "'msprof-compare --help')\n")


def test_a_one_dash_name_given_with_equals_is_a_value(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal leaves values alone: ``-o=-debug`` is a folder named ``-debug`` (the way the value-left-out line
    gives), on both faces."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, "-o=-debug", "--enable_api_compare"])
    assert code == 0, err
    assert cli.script_main([BASE, COMPARISON, "-o=-debug", "--enable_api_compare"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["-debug"]
    assert len(list((tmp_path / "-debug").glob("*.xlsx"))) >= 1



def test_a_one_dash_name_after_an_option_that_takes_a_value_is_its_value_left_out(capsys: pytest.CaptureFixture):
    """``-o -debug``: the word after ``-o`` is the value it lacks (a folder, which ``-o=-debug`` gives), not an
    unknown option meaning --debug; each face says the value is missing, the script as argparse does."""
    assert _run(capsys, cli.script_main, [BASE, COMPARISON, "-o", "-debug"]) == (
        2, "", "error: argument -o/--output_path: expected one argument (see 'performance_compare.py --help')\n")
    assert _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, "-o", "-debug"]) == (
        2, "", "error: Option '-o' requires an argument: '-debug', after it, reads as an option (a value that reads "
               "as one: '-o=-debug') (see 'msprof-compare --help')\n")


@pytest.mark.parametrize(("args", "typed"), [(["-hlep"], "-hlep"), ([BASE, COMPARISON, "-Hlep"], "-Hlep")])
def test_script_names_a_help_letter_cluster_as_typed(capsys: pytest.CaptureFixture, args: list[str],
                                                     typed: str) -> None:
    """The script's argparse said "argument -h/-H/--help: ignored explicit argument 'lep'" for ``-hlep``: the word
    is unknown as typed, with --help meant, as on the CLI faces; a flag given a value (``--force=1``) keeps
    argparse's line, which names the option."""
    assert _run(capsys, cli.script_main, args) == (
        2, "", f"error: unrecognized arguments: {typed} (Possible options: --help) (see 'performance_compare.py "
               "--help')\n")
    assert _run(capsys, cli.script_main, [BASE, COMPARISON, "--force=1"]) == (
        2, "", "error: argument --force: ignored explicit argument '1' (see 'performance_compare.py --help')\n")


@pytest.mark.parametrize("flag", ["--benchmark-profiling-path", "--profiling-path", "--bp"])
def test_script_given_a_path_flag_misspelt_says_its_paths_are_positional(capsys: pytest.CaptureFixture,
                                                                         flag: str) -> None:
    """A CLI path option in a spelling the CLI names it for (dashes for ``_``, ``--bp``) given to the script got
    argparse's "unrecognized arguments" alone, where ``--benchmark_profiling_path`` is told that the script takes
    its two paths without -d / -bp."""
    assert _run(capsys, cli.script_main, [BASE, COMPARISON, flag, "x"]) == (
        2, "", f"error: unrecognized arguments: {flag} x; performance_compare.py takes the two paths without -d / -bp, "
               "base first: performance_compare.py BASE COMPARISON [options] (see 'performance_compare.py --help')\n")


def test_script_given_its_own_positionals_as_options_says_its_paths_are_positional(
        capsys: pytest.CaptureFixture) -> None:
    """The script's help names its paths ``base_profiling_path`` and ``comparison_profiling_path``: given as options
    they got argparse's "unrecognized arguments" alone, where ``-bp`` is told that the two paths go without option
    names (the names ``compare()`` tells of too)."""
    assert _run(capsys, cli.script_main, ["--base_profiling_path", BASE, "--comparison_profiling_path",
                                          COMPARISON]) == (
        2, "", "error: unrecognized arguments: --base_profiling_path --comparison_profiling_path; "
               "performance_compare.py takes the two paths without -d / -bp, base first: performance_compare.py BASE "
               "COMPARISON [options] (see 'performance_compare.py --help')\n")


@pytest.mark.parametrize("paths", [["-d=c", "-bp=b"], ["--profiling_path=c", "--benchmark_profiling_path=b"],
                                   ["-bp=b", "c"]])
def test_script_given_path_options_with_equals_says_its_paths_are_positional(capsys: pytest.CaptureFixture,
                                                                             paths: list[str]) -> None:
    """``-d=C -bp=B`` (msprof-analyze's paths, each after ``=``) leaves the script's positionals empty: argparse
    said only that they are required, where ``-d C -bp B`` is told that the two paths go without -d / -bp."""
    code, out, err = _run(capsys, cli.script_main, paths)
    assert (code, out) == (2, "")
    assert err.startswith("error: the following arguments are required: "), err
    assert err.endswith("; performance_compare.py takes the two paths without -d / -bp, base first: "
                        "performance_compare.py BASE COMPARISON [options] (see 'performance_compare.py --help')\n"), err
    code, _, err = _run(capsys, cli.script_main, ["--enable_api_compare"])  # no path option: argparse's line alone
    assert (code, err) == (2, "error: the following arguments are required: base_profiling_path, "
                              "comparison_profiling_path (see 'performance_compare.py --help')\n")


def test_a_short_option_with_its_value_attached_is_still_read_so(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-dash refusal takes a word whose two-dash form is (the start of) a long option, three letters or more
    after the dash: ``-oruns`` and ``-op`` (``--op`` is the start of --op_name_map, two letters) stay -o with its value
    attached, as click and argparse read them, on both faces."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, "-oruns", "--enable_api_compare"])
    assert code == 0, err
    assert cli.script_main([BASE, COMPARISON, "-op", "--enable_api_compare"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p", "runs"]
