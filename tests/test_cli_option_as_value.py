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

from msprof_compare import cli

REPO = Path(__file__).resolve().parents[1]
BASE, COMPARISON = (str(REPO / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))


def _run(capsys: pytest.CaptureFixture, main: Callable[[list[str]], None], args: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of an entry point."""
    with pytest.raises(SystemExit) as info:
        main(args)
    out, err = capsys.readouterr()
    return info.value.code, out, err


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
