"""Typos a user makes on the command line, each told in one line with the option meant (exit 2), on every face:
one dash where two go (``-hlep``, ``-enable_api_compare``), which click reads as a cluster of one-letter options
and named by one letter ("No such option: -l", "-e") that neither showed what was typed nor led to the option."""

from __future__ import annotations

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
