"""What session 66's user walk (``test_user_walk_wording.py``) left: the words that still left a new user guessing,
each pinned on a real sample, with what they say checked there."""

from __future__ import annotations

import pytest
from cliutil import error_lines, run_inproc

from msprof_compare import cli, compare
from msprof_compare.errors import UsageError

PYTORCH = "msinsight/test/data/pytorch"
TEXT = PYTORCH + "/text/level{}/rank0_ascend_pt"


def test_step_that_is_no_number_is_named_as_each_face_takes_it(capsys, samples, tmp_path):
    """``--base_step x --comparison_step 50`` on two NPU text exports: the CLI said "Invalid param, base_step and
    comparison_step must be a number. (got --base_step 'x': ...)", the options bare before the flag it quoted,
    where "must be set at the same time" names the flags (test_user_walk_wording). The CLI and the script now name
    the flags in the original's sentence too, a step past int64 likewise; compare() keeps its keywords, the
    original's words. Nothing is written. Step 50 is in both exports: with a number the compare goes on."""
    pair = [str(samples / TEXT.format(n)) for n in (1, 2)]
    out = tmp_path / "never"
    said = ("Invalid param, --base_step and --comparison_step must be a number. (got --base_step 'x': a step id is "
            "a whole number >= 0, the N of ProfilerStep#N)")
    code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--base_step", "x", "--comparison_step", "50",
                              "-o", str(out))
    assert code == 2 and error_lines(err) == [f"error: {said}"]
    assert cli.script_main([*pair, "--base_step", "x", "--comparison_step", "50", "-o", str(out)]) == 2
    assert error_lines(capsys.readouterr().err) == [f"error: {said}"]
    big = str(2**63)  # one past the largest step id a profile can record (int64)
    code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--base_step", "50", "--comparison_step", big,
                              "-o", str(out))
    assert code == 2 and error_lines(err) == [
        f"error: Invalid param, --base_step and --comparison_step must be a number. (got --comparison_step '{big}': "
        f"a step id is a whole number from 0 to {2**63 - 1} (int64), the N of ProfilerStep#N)"]
    assert not out.exists()
    with pytest.raises(UsageError) as info:
        compare(*pair, base_step="x", comparison_step=50)
    assert str(info.value) == ("Invalid param, base_step and comparison_step must be a number. (got base_step='x': "
                               "a step id is a whole number >= 0, the N of ProfilerStep#N)")
    with pytest.raises(UsageError, match=r"^Invalid param, base_step and comparison_step must be a number \(got "
                                         r"comparison_step=True\)$"):
        compare(*pair, base_step=50, comparison_step=True)
    assert compare(*pair, base_step=50, comparison_step=50, enable_api_compare=True).sheet_names == ["ApiCompare"]
