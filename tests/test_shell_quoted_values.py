"""The values a CLI message quotes from its command line (a step, a repeated option's values, --gpu_flow_cat,
--rank_list) are quoted for a POSIX shell, so that one pastes back into bash as typed; compare()'s messages quote the
same values as Python. Python's quoting on the CLI doubled a backslash and escaped a quote mark (``'a\\\\b\\'c'``),
which bash read as other characters. Each value here holds a backslash and a quote mark: ``a\\b'c``; the expected
texts are written by hand (bash: ``'a\\b'"'"'c'``; Python: ``"a\\\\b'c"``)."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc

from msprof_compare.api import compare
from msprof_compare.cli import repeated
from msprof_compare.errors import UsageError

SMALL = Path(__file__).parent / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
L1_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
VALUE = "a\\b'c"
SHELL = "'a\\b'\"'\"'c'"   # 'a\b'"'"'c'
PYTHON = '"a\\\\b\'c"'     # "a\\b'c"


def _bash_reads(word: str) -> str:
    """What bash makes of ``word`` pasted as one argument."""
    return subprocess.run(["bash", "-c", f"printf '%s' {word}"], capture_output=True, text=True, check=True).stdout


def test_the_quotes_written_by_hand_are_bash_and_python_quoting_of_the_value() -> None:
    assert _bash_reads(SHELL) == VALUE and eval(PYTHON) == VALUE  # noqa: S307 - a literal written here


def test_step_refusal_quotes_the_step_for_the_shell_and_for_python(capsys: pytest.CaptureFixture,
                                                                   tmp_path: Path) -> None:
    code, _, err = run_inproc(capsys, "-bp", str(SMALL), "-d", str(SMALL), "--base_step", VALUE,
                              "--comparison_step", "1", "-o", str(tmp_path / "never"))
    assert code == 2 and error_lines(err) == [
        f"error: Invalid param, --base_step and --comparison_step must be a number. (got --base_step {SHELL}: a step "
        "id is a whole number >= 0, the N of ProfilerStep#N)"]
    with pytest.raises(UsageError) as refused:
        compare(str(SMALL), str(SMALL), base_step=VALUE, comparison_step=1)
    assert str(refused.value) == (f"Invalid param, base_step and comparison_step must be a number. (got "
                                  f"base_step={PYTHON}: a step id is a whole number >= 0, the N of ProfilerStep#N)")


def test_option_given_twice_quotes_its_values_for_the_shell() -> None:
    said = repeated({"gpu_flow_cat": [("--gpu_flow_cat", VALUE), ("--gpu_flow_cat", "x y")]})
    assert said == [f"--gpu_flow_cat is given 2 times ({SHELL}, 'x y'): the last value, 'x y', is used"]
    assert _bash_reads(SHELL) == VALUE


def test_rank_list_refusal_quotes_for_the_shell_and_for_python(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    code, _, err = run_inproc(capsys, "-bp", str(SMALL), "-d", str(SMALL), "--rank_list", VALUE,
                              "-o", str(tmp_path / "never"))
    assert code == 2 and error_lines(err) == [
        f"error: Invalid param, --rank_list must be all or rank ids (integers from 0 to 2147483647) separated by "
        f"commas or blanks (got {SHELL}: {SHELL} is not a rank id)"]
    from msprof_compare.api import compare_ranks

    with pytest.raises(UsageError) as refused:
        list(compare_ranks(str(SMALL), str(SMALL), rank_list=VALUE))
    assert str(refused.value) == (f"Invalid param, rank_list must be all or rank ids (integers from 0 to 2147483647) "
                                  f"separated by commas or blanks (got {PYTHON}: {PYTHON} is not a rank id)")


def test_gpu_flow_cat_of_npu_data_quotes_it_for_the_shell_and_for_python(capsys: pytest.CaptureFixture,
                                                                         caplog: pytest.LogCaptureFixture,
                                                                         samples: Path, tmp_path: Path) -> None:
    """The warning that --gpu_flow_cat is ignored for two NPU inputs (the level1 text export on both sides)."""
    npu = str(samples / L1_TEXT)
    rest = (" is ignored: it names the flow category of GPU traces, and both inputs are NPU data (their ops and "
            "kernels are linked by the profiler's own flows).")
    code, _, err = run_inproc(capsys, "-bp", npu, "-d", npu, "-o", str(tmp_path), "--gpu_flow_cat", VALUE,
                              "--enable_api_compare")
    assert code == 0
    assert [line.split("] ", 1)[1] for line in err.splitlines() if "is ignored" in line] == [
        f"--gpu_flow_cat {SHELL}{rest}"]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(npu, npu, gpu_flow_cat=VALUE, enable_api_compare=True)
    assert [m for m in caplog.messages if "is ignored" in m] == [f"gpu_flow_cat={PYTHON}{rest}"]


@pytest.mark.parametrize("flag", ["--enable_profiling_compare", "--enable_operator_compare"])
def test_unmatched_gpu_flow_cat_quotes_it_and_the_trace_categories_for_the_shell_and_for_python(
        flag: str, capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    """--gpu_flow_cat naming no flow of the H100 timesformer excerpt (whose launch flows are of category ac2g, read
    here from the raw JSON): the line of the time breakdown (``flag``: the breakdown alone) and the op tree's quote
    the value given and the categories to pass instead for the shell on the CLI, as Python in compare()."""
    import json

    trace = Path(__file__).parent / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
    held = sorted({e["cat"] for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") in ("s", "f")}
                  - {"fwdbwd"})
    assert held == ["ac2g"]
    line = (f"Can't find any flow event in the file: {trace} (both sides: none of category {{}}, the {{}} given, so "
            "no op gets a kernel; it holds flows of category 'ac2g')")
    code, _, err = run_inproc(capsys, "-bp", str(trace), "-d", str(trace), "--gpu_flow_cat", VALUE, flag,
                              "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert [x.split("] ", 1)[1] for x in err.splitlines() if "flow event" in x] == [
        line.format(SHELL, "--gpu_flow_cat")]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(trace), str(trace), gpu_flow_cat=VALUE, **{flag.removeprefix("--"): True})
    assert [m for m in caplog.messages if "flow event" in m] == [line.format(PYTHON, "gpu_flow_cat")]


@pytest.mark.parametrize(("value", "word"), [
    ("a\nb", "$'a\\nb'"),                   # a line break typed with $'a\nb'
    ("it's\t1", "$'it\\'s\\t1'"),           # a quote mark and a tab
    ("\x1b[31mx", "$'\\x1b[31mx'"),         # an escape sequence: shown, never sent to the terminal
    ("x\x85\u202ey\\", "$'x\\u0085\\u202ey\\\\'"),  # C1 next-line and a bidi override, a trailing backslash
])
def test_a_value_with_a_control_character_is_quoted_so_that_bash_reads_it_back(value: str, word: str) -> None:
    """Single quotes around the terminal-safe form (``'a\\nb'``) pasted as a backslash and a letter: a value holding
    a control character is written in bash's ``$'...'`` quoting (review73b), which reads back as the value typed and
    holds no control character of its own (the terminal shows it as it is)."""
    from msprof_compare.textsafe import shell_word, short_shell_word, term_safe

    assert shell_word(value) == word
    assert term_safe(word) == word and short_shell_word(value) == word
    assert _bash_reads(word) == value


def test_a_blank_value_of_a_line_break_is_refused_in_a_form_bash_reads_back(capsys: pytest.CaptureFixture,
                                                                            tmp_path: Path) -> None:
    code, _, err = run_inproc(capsys, "-bp", str(SMALL), "-d", str(SMALL), "--rank_list", "\n",
                              "-o", str(tmp_path / "never"))
    assert code == 2 and "(got $'\\n'" in error_lines(err)[0] and not (tmp_path / "never").exists()
