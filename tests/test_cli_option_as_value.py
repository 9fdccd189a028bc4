"""An option of the CLI given without its value, before another option (``-o --enable_api_compare``): click
took the next option as the value, so the run wrote into a folder named ``--enable_api_compare`` with every
comparison on, ``-o -h`` into ``-h/``, and ``-bp BASE -d -o out`` read ``-o`` as the comparison's path and
then said "Got unexpected extra argument(s) (out)". The script's argparse refuses all of them ("expected one
argument"); the CLI now does too, exit 2, one line naming the option, and nothing is read or written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cliutil import run_entry as _run

from msprof_compare import cli

REPO = Path(__file__).resolve().parents[1]
BASE, COMPARISON = (str(REPO / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))


@pytest.mark.parametrize(("args", "option", "taken"), [
    (["-o", "--enable_api_compare"], "-o", "--enable_api_compare"),
    (["-o", "-h"], "-o", "-h"),
    (["--output_path", "--force"], "--output_path", "--force"),
    (["--gpu_flow_cat", "--enable_api_compare"], "--gpu_flow_cat", "--enable_api_compare"),
    (["--transparent_op", "--enable_operator_compare"], "--transparent_op", "--enable_operator_compare"),
    (["--op_name_map", "--use_input_shape"], "--op_name_map", "--use_input_shape"),
    (["--base_step", "--comparison_step", "1"], "--base_step", "--comparison_step"),
    (["--max_kernel_num", "--max_kernel_num=5"], "--max_kernel_num", "--max_kernel_num=5"),
    # a short option with its value after "=", the form the message gives: click reads it as that option
    (["-o", "-d=x"], "-o", "-d=x"),
    (["--rank_list", "-bp=0"], "--rank_list", "-bp=0"),
])
def test_option_after_an_option_that_takes_a_value_is_refused(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                              option: str, taken: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.analyze_main, ["compare", "-bp", BASE, "-d", COMPARISON, *args])
    assert code == 2
    assert err == (f"error: Option '{option}' requires an argument: '{taken}', after it, is an option (a value "
                   f"that reads as one: '{option}={taken}') (see 'msprof-analyze compare --help')\n")
    assert os.listdir(tmp_path) == []  # no folder named after the option, no report


def test_path_option_before_another_is_named(capsys: pytest.CaptureFixture, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``-d`` without its path before ``-o``: named as such, where click said the folder was an extra argument;
    the same on ``msprof-compare``, whose messages name that command."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", "-o", "out"])
    assert (code, err) == (2, "error: Option '-d' requires an argument: '-o', after it, is an option (a value that "
                              "reads as one: '-d=-o') (see 'msprof-compare --help')\n")
    assert os.listdir(tmp_path) == []


def test_path_option_before_a_short_option_with_equals_is_named(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``-bp`` without its path before ``-d=C`` (the ``-x=value`` form the messages give): click took ``-d=C`` as
    the base path and then said that -d was missing, an option the user had given."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.compare_main, ["-bp", f"-d={COMPARISON}", "-o", "out"])
    assert (code, err) == (2, f"error: Option '-bp' requires an argument: '-d={COMPARISON}', after it, is an option "
                              f"(a value that reads as one: '-bp=-d={COMPARISON}') (see 'msprof-compare --help')\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("args", [["-o", "--"], ["-o", "--", "out"]])
def test_end_of_options_after_an_option_that_takes_a_value_is_refused(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      args: list[str]) -> None:
    """``-o --``: click took the end-of-options marker as the folder, and the run wrote into one named ``--`` (with
    a word after it, said that word was an extra argument); the script's argparse refuses it as a value left out."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.analyze_main, ["compare", "-bp", BASE, "-d", COMPARISON, *args])
    assert (code, err) == (2, "error: Option '-o' requires an argument: '--', after it, ends the options (a value "
                              "that reads as one: '-o=--') (see 'msprof-analyze compare --help')\n")
    assert os.listdir(tmp_path) == []


def test_a_value_that_reads_as_an_option_is_taken_with_equals(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The way out the message gives works: ``-o=-h`` writes into a folder named ``-h`` (the leading ``=`` of a
    path option is stripped, as the original does), and a value that is no option name (``-o -``: the JSON on
    stdout) is not refused."""
    monkeypatch.chdir(tmp_path)
    code, _, _ = _run(capsys, cli.analyze_main, ["compare", "-bp", BASE, "-d", COMPARISON, "-o=-h",
                                                 "--enable_api_compare"])
    assert code == 0
    assert [p.suffix for p in (tmp_path / "-h").iterdir()] == [".xlsx"]
    code, out, _ = _run(capsys, cli.analyze_main, ["compare", "-bp", BASE, "-d", COMPARISON, "-o", "-",
                                                   "--enable_api_compare"])
    assert code == 0 and out.startswith("{")


@pytest.mark.parametrize(("main", "args", "shown"), [
    (cli.analyze_main, ["compare", "--help", "-o", "--force"], "Usage: msprof-analyze compare [OPTIONS]"),
    (cli.compare_main, ["-o", "--force", "-h"], "Usage: msprof-compare [OPTIONS]"),
    (cli.compare_main, ["-bp", "b", "--bogus", "-H"], "Usage: msprof-compare [OPTIONS]"),
    (cli.analyze_main, ["compare", "-bp", "b", "--version", "-d", "--force"], "msprof-compare "),
    # a group's own --help asks for the group's help, wherever its command's word stands
    (cli.analyze_main, ["-h", "compare", "-o", "--force"], "Usage: msprof-analyze [OPTIONS] COMMAND"),
    (cli.analyze_main, ["--bogus", "--help"], "Usage: msprof-analyze [OPTIONS] COMMAND"),
])
def test_help_anywhere_wins_over_a_usage_error(capsys: pytest.CaptureFixture, main: Callable[[list[str]], None],
                                               args: list[str], shown: str) -> None:
    """``--help`` (``-h``, ``-H``, ``--version``) standing as an option anywhere answers, exit 0, as the script's
    argparse answers ``--help -o --force``: the CLI refused the ``-o`` with no value first (and click an unknown
    option before it)."""
    code, out, err = _run(capsys, main, args)
    assert (code, err) == (0, "")
    assert out.startswith(shown), out


@pytest.mark.parametrize("args", [["cluster", "--help"], ["advisor", "-h"], ["cluster", "-d", "x", "--help"]])
def test_help_after_a_command_this_package_lacks_is_that_commands(capsys: pytest.CaptureFixture,
                                                                  args: list[str]) -> None:
    """``msprof-analyze cluster --help`` asks for the help of the original's ``cluster`` command, which this package
    lacks: the line that says so, exit 2, as without ``--help``; the help-anywhere rule showed msprof-analyze's own
    help, exit 0, where a group's options stand before its command's word (``--help cluster``: the group's)."""
    code, out, err = _run(capsys, cli.analyze_main, args)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: No such command '{args[0]}'. This msprof-analyze provides only 'compare'"), err
    code, out, err = _run(capsys, cli.analyze_main, ["--help", "cluster"])
    assert (code, err) == (0, "") and out.startswith("Usage: msprof-analyze [OPTIONS] COMMAND")


def test_script_help_before_a_value_left_out_wins(capsys: pytest.CaptureFixture) -> None:
    """The script's argparse, which the CLI faces now follow: ``--help -o --force`` prints the help."""
    code, out, err = _run(capsys, cli.script_main, ["--help", "-o", "--force"])
    assert (code, err) == (0, "") and out.startswith("usage: performance_compare.py")


@pytest.mark.parametrize(("args", "taken"), [(["-o", "--help"], "--help"), (["--rank_list", "-h"], "-h")])
def test_help_where_a_value_goes_is_a_value_left_out(capsys: pytest.CaptureFixture, args: list[str],
                                                     taken: str) -> None:
    """``-o --help``: the help word where the option's value goes is refused as a value left out, as the script's
    argparse refuses it ("expected one argument"), and ``-o=--help`` names a folder ``--help``; after ``--`` it is
    an argument."""
    code, out, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, *args])
    assert (code, out) == (2, "")
    assert err.startswith(f"error: Option '{args[0]}' requires an argument: '{taken}', after it, is an option"), err
    code, out, err = _run(capsys, cli.compare_main, ["-bp", "b", "--", "--help"])
    assert code == 2 and out == "" and "Missing option '--profiling_path'" in err


@pytest.mark.parametrize("main", [cli.compare_main, cli.script_main])
def test_help_after_the_end_of_the_options_is_no_help_where_a_value_goes(capsys: pytest.CaptureFixture,
                                                                          main: Callable[[list[str]], None]) -> None:
    """``-o -- --help``: the ``--`` where -o's value goes ends the options (the value left out, refused), so the
    ``--help`` after it is an argument, as after any ``--``: the CLI skipped the ``--`` as -o's value and printed
    the help, where its own value-left-out rule and the script's argparse ("expected one argument") refuse it."""
    paths = ["-bp", BASE, "-d", COMPARISON] if main is cli.compare_main else [BASE, COMPARISON]
    code, out, err = _run(capsys, main, [*paths, "-o", "--", "--help"])
    assert (code, out) == (2, ""), out[:80]
    option = "'-o' requires an argument: '--', after it, ends the options" if main is cli.compare_main else (
        "argument -o/--output_path: expected one argument")
    assert option in err, err


@pytest.mark.parametrize(("args", "taken"), [
    (["-o", "--enable_api"], "--enable_api"),  # an abbreviation the script's argparse takes; click takes none
    (["-o", "--foo"], "--foo"),
    (["-o", "-ofoo"], "-ofoo"),
    (["--transparent_op", "-x"], "-x"),
    (["--fail_on_regression", "-5%"], "-5%"),
])
def test_a_word_that_reads_as_an_option_is_no_value(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                    taken: str) -> None:
    """A word after an option that takes a value, which is no option name of the command but reads as one
    (argparse's rule: a ``-`` and more, no negative number, no blank), is refused as the value left out: the run
    wrote into folders named ``--enable_api``, ``--foo`` and ``-ofoo``, where the script refuses each ("expected
    one argument"). The line gives the way to pass such a value."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, cli.analyze_main, ["compare", "-bp", BASE, "-d", COMPARISON, *args])
    option = args[0]
    assert (code, err) == (2, f"error: Option '{option}' requires an argument: '{taken}', after it, reads as an "
                              f"option (a value that reads as one: '{option}={taken}') (see 'msprof-analyze compare "
                              "--help')\n")
    code, _, err = _run(capsys, cli.script_main, [BASE, COMPARISON, *args])
    assert (code, err) == (2, f"error: argument {'-o/--output_path' if option == '-o' else option}: expected one "
                              "argument (see 'performance_compare.py --help')\n")
    assert os.listdir(tmp_path) == []


def test_a_negative_number_or_a_word_with_a_blank_is_a_value(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """What argparse reads as a value the CLI takes too, for the option's own check: a negative number (its line
    names the value) and a word with a blank in it (a folder ``-my run``)."""
    monkeypatch.chdir(tmp_path)
    for value in ("-5", "-2.5", "-.5"):  # argparse's negative numbers: integers and decimals
        code, _, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, "--fail_on_regression", value])
        assert code == 2 and f"--fail_on_regression must be a finite percentage >= 0 (got '{value}')" in err, err
    code, _, err = _run(capsys, cli.compare_main, ["-bp", BASE, "-d", COMPARISON, "-o", "-my run",
                                                   "--enable_api_compare"])
    assert code == 0, err
    assert [p.suffix for p in (tmp_path / "-my run").iterdir()] == [".xlsx"]
