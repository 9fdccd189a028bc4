"""Option rules of the command-line faces and of the API that no other test pinned down: the bounds of each
option, the spellings the faces accept, which text the error line carries, and what each face prints or
leaves out (mutation audit of cli.py, options.py and entry.py)."""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest
from cliutil import error_lines, run_inproc, signal_mid_write, slow_writer_child
from xlsxutil import read_xlsx

from msprof_compare import cli, compare, compare_ranks
from msprof_compare.errors import UsageError
from msprof_compare.options import build_options

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SAMPLE_BASE = REPO / "sample_data" / "bert-small_h100.json.gz"   # E2E 3907825 ns (test_cli.py)
SAMPLE_COMP = REPO / "sample_data" / "bert-small_mi300.json.gz"  # E2E 3495976 ns
SMALL = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
NPU = DATA / "npu" / "rank0_ascend_pt"  # kernel_details.csv: 20 kernels, all of step 50
L1_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
HEATMAP = "msinsight/server/src/test/test_data/heatMap/trace_view.json"  # 6 events, no E2E time


def json_report(folder: Path) -> dict:
    (path,) = folder.glob("*.json")
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- bounds and types of the options


@pytest.mark.parametrize(("flag", "value", "recorded"), [
    ("--max_kernel_num", "4", 4),                                  # "must be > 3": 4 is the smallest N
    ("--op_name_map", "{'aten::mm': '" + "v" * 200 + "'}", {"aten::mm": "v" * 200}),  # 200 is the maximum
    ("--gpu_flow_cat", "f" * 20, "f" * 20),                        # at most 20 characters
])
def test_largest_or_smallest_accepted_value_runs(flag: str, value: str, recorded: object,
                                                 capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """reference-1 §1.3 rules 1, 4 and 5 refuse only values beyond the bound: the bound itself runs (exit 0)
    and reaches the options the JSON report records."""
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--enable_api_compare", flag, value,
                              "--output_format", "json", "-o", str(tmp_path))
    assert code == 0 and not error_lines(err), err
    assert json_report(tmp_path)["options"][flag[2:]] == recorded


def test_op_name_map_key_that_is_not_text(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Rule 3 covers keys as well as values: {1: 'aclnnMm'} is a usage error (exit 2), not an internal one."""
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--op_name_map", "{1: 'aclnnMm'}",
                                "-o", str(tmp_path / "never"))
    assert (code, out) == (2, "")
    assert error_lines(err) == ["error: Invalid param, key/value in --op_name_map must be string"]
    assert not (tmp_path / "never").exists()


def test_op_name_map_type_rule_comes_before_the_length_rule(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """reference-1 §1.3: rule 3 (every key and value is text) is checked over the whole map before rule 4 (none
    over 200 characters), as the original's two ``any(...)`` passes do. A map whose first key is 201 characters
    and whose second key is the int 1 breaks both: rule 3's message, not rule 4's (a per-item loop gave rule 4's)."""
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL),
                                "--op_name_map", "{'" + "k" * 201 + "': 'v', 1: 'aclnnMm'}",
                                "-o", str(tmp_path / "never"))
    assert (code, out) == (2, "")
    assert error_lines(err) == ["error: Invalid param, key/value in --op_name_map must be string"]
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max_kernel_num", "3", "Invalid param, --max_kernel_num has to be greater than 3"),          # rule 1
    ("--op_name_map", "[1]", "Invalid param, --op_name_map must be dict, for example: --op_name_map={'name1':'name2'}"),
    ("--gpu_flow_cat", "f" * 21, "Invalid param, --gpu_flow_cat exceeded the maximum value 20"),    # rule 5
    # blank ("$MAP" of a space or a line break): literal_eval's "invalid syntax" named nothing (found by fuzzing)
    ("--op_name_map", " \n", "Invalid param, --op_name_map is blank (got $' \\n'); leave it out or write a literal "
                              "dict such as \"{'aten::mm': 'aclnnMm'}\""),
    ("--base_step", "50", "Invalid param, --base_step and --comparison_step must be set at the same time."),  # rule 8
])
def test_option_rules_come_before_the_output_target(option: str, value: str, message: str,
                                                    capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """reference-1 §1.3: rules 1-8 (the options) are checked before rule 10 (the output path); we check the
    output target before loading the inputs (docs/differences.md), not before the options. An -o that is a
    file (refused, exit 2) together with a bad option: the option's message, not the output path's."""
    taken = tmp_path / "afile"
    taken.write_text("x")
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "-o", str(taken), option, value)
    assert (code, out) == (2, "")
    assert error_lines(err) == [f"error: {message}"]
    assert taken.read_text() == "x"


def test_comparison_step_alone_is_refused(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Rule 8: exactly one step given is an error whichever one it is (only --base_step was tested)."""
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--comparison_step", "1",
                              "-o", str(tmp_path / "never"))
    assert code == 2
    assert error_lines(err) == ["error: Invalid param, --base_step and --comparison_step must be set at the same time."]
    assert not (tmp_path / "never").exists()


def test_negative_steps_from_the_api_are_no_number() -> None:
    """Only the int -1 (what Options and the JSON report's "options" record for "every step") means all
    steps; any other negative int is no step number (rule 8: "-1", "+1" are refused on the command line)."""
    assert (build_options(base_step=-1, comparison_step=-1)[0].base_step,
            build_options(base_step=-1, comparison_step=-1)[0].step_given) == (-1, False)
    with pytest.raises(UsageError) as info:
        build_options(base_step=-2, comparison_step=-2)
    assert str(info.value) == ("Invalid param, --base_step and --comparison_step must be a number. (got --base_step "
                               "'-2' and --comparison_step '-2': a step id is a whole number >= 0, the N of "
                               "ProfilerStep#N)")
    with pytest.raises(UsageError) as info:  # only the bad one is named
        build_options(base_step="50", comparison_step="5x")
    assert str(info.value).endswith("(got --comparison_step '5x': a step id is a whole number >= 0, the N of "
                                    "ProfilerStep#N)")


def test_huge_option_values_are_refused_in_a_short_line(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A step past int()'s 4,300 digits was an internal error (exit 1, "Exceeds the limit (4300 digits)"), and a
    5,000-digit --max_kernel_num or --fail_on_regression was quoted whole in a 5,100-character line; a step past
    int64 (no profile records one) is refused before the load. Found by option fuzzing (optfuzz63)."""
    huge = "9" * 5000
    cut = "'" + "9" * 36 + "..."  # textsafe.short_repr: 40 characters
    step = ("Invalid param, --base_step and --comparison_step must be a number. (got --{} {}: a step id is a whole "
            "number from 0 to 9223372036854775807 (int64), the N of ProfilerStep#N)")
    cases = [
        (["--base_step", huge, "--comparison_step", "1"], step.format("base_step", cut)),
        (["--base_step", "1", "--comparison_step", "9223372036854775808"],
         step.format("comparison_step", "'9223372036854775808'")),
        (["--base_step", "0" * 30 + "1", "--comparison_step", "-" + huge],  # the non-number first, leading 0s taken
         "Invalid param, --base_step and --comparison_step must be a number. (got --comparison_step '-"
         + "9" * 35 + "...: a step id is a whole number >= 0, the N of ProfilerStep#N)"),
        (["--max_kernel_num", huge], f"Invalid value for '--max_kernel_num': {cut} is not a valid int (5,000 digits)."),
        (["--fail_on_regression", huge], f"Invalid param, --fail_on_regression must be a finite percentage >= 0 "
                                         f"(got {cut})"),
    ]
    for args, message in cases:
        code, out, err = run_inproc(capsys, "-d", str(NPU), "-bp", str(NPU), *args, "-o", str(tmp_path / "never"))
        assert code == 2 and error_lines(err) == [f"error: {message} (see 'msprof-analyze compare --help')"
                                                  if message.startswith("Invalid value") else f"error: {message}"], err
        assert out == "" and not (tmp_path / "never").exists()
    # the largest int64 is a step id: on to the data, which holds step 50 only
    code, _, err = run_inproc(capsys, "-d", str(NPU), "-bp", str(NPU), "--base_step", "9223372036854775807",
                              "--comparison_step", "9223372036854775807", "-o", str(tmp_path / "never"))
    assert code == 2 and "Invalid step id: 9223372036854775807" in error_lines(err)[0], err
    # the script's argparse quoted the text whole too
    with pytest.raises(SystemExit) as info:
        cli.script_main([str(NPU), str(NPU), "--max_kernel_num", huge])
    assert info.value.code == 2
    assert error_lines(capsys.readouterr().err) == [f"error: argument --max_kernel_num: invalid int value: {cut} "
                                                    "(5,000 digits) (see 'performance_compare.py --help')"]


def test_forced_input_link_to_nothing_is_named_a_broken_link(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """-d LINK --force where the link leads nowhere (a missing target, or a loop of links) read "LINK: no such file
    or directory", of a path ``ls`` shows; it is a broken symbolic link, as the loader names a side file's (found by
    option fuzzing, optfuzz63). Without --force the link is refused as any link is."""
    (tmp_path / "gone").symlink_to(tmp_path / "missing.json")
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    for name, why in (("gone", "No such file or directory"), ("loop_a", "Too many levels of symbolic links")):
        link = str(tmp_path / name)
        code, _, err = run_inproc(capsys, "-d", link, "-bp", str(SMALL), "--force", "-o", str(tmp_path / "never"))
        assert code == 1 and error_lines(err) == [f"error: {link}: broken symbolic link: {why} (comparison side)"], err
        code, _, err = run_inproc(capsys, "-d", link, "-bp", str(SMALL), "-o", str(tmp_path / "never"))
        assert code == 1 and error_lines(err)[0].startswith(f"error: {link}: is a symbolic link; refusing"), err
    assert not (tmp_path / "never").exists()


def test_flags_given_as_0_or_1_through_the_api() -> None:
    """The API takes 0 / 1 for a flag as well as False / True (numpy and C callers pass ints): 0 is off."""
    res = compare(str(SMALL), str(SMALL), enable_api_compare=1, enable_kernel_compare=0, force=0, disable_module=0)
    assert res.sheet_names == ["ApiCompare"]
    assert (res.options.enable_kernel_compare, res.options.force, res.options.disable_module) == (False, False, False)


def test_unknown_options_are_listed_in_sorted_order() -> None:
    """The message names every unknown keyword in one fixed (sorted) order, not a set's hash order."""
    names = ["zeta", "enable_everything", "output", "alpha", "max_kernels", "step", "gpu_flow", "debug_mode"]
    with pytest.raises(UsageError) as info:
        build_options(**{n: True for n in names})
    assert str(info.value).startswith("unknown option(s): alpha, debug_mode, enable_everything, gpu_flow, "
                                      "max_kernels, output, step, zeta (")


@pytest.mark.parametrize(("given", "hint"), [
    ({"enable_profilng_compare": True}, "(did you mean enable_profiling_compare?)"),
    ({"basestep": 1, "comparison_step": 1}, "(did you mean base_step?)"),
    ({"output_path": "out"}, "(compare() writes no report: pass the output target to the result's to_excel() / "
                             "to_json())"),
    ({"gpu_flow": "ac2g", "max_kernels": 5, "output": "o", "zeta": 1},
     "(did you mean gpu_flow_cat for gpu_flow, max_kernel_num for max_kernels? compare() writes no report: pass "
     "the output target to the result's to_excel() / to_json())"),
    ({"zeta": 1}, ""),
])
def test_unknown_api_keywords_say_what_to_do(given: dict, hint: str) -> None:
    """Only the API can pass an unknown keyword (the CLI parser names the options near a mistyped flag): a
    near miss got "unknown option(s): enable_profilng_compare" with no word of the option meant, and
    ``output_path``, the CLI's -o, no word of where the target goes."""
    with pytest.raises(UsageError) as info:
        build_options(**given)
    text = str(info.value)
    assert text == f"unknown option(s): {', '.join(sorted(set(given) - {'comparison_step'}))}" + \
        (f" {hint}" if hint else "")


PATHS_HINT = ("compare() takes the two paths without -d / -bp, as its first two arguments, base first: "
              "compare(BASE, COMPARISON, ...)")


@pytest.mark.parametrize("given", [{"d": str(SMALL)}, {"bp": str(SMALL)}, {"base_profiling_path": str(SMALL)},
                                   {"comparison_profiling_path": str(SMALL)}, {"benchmark_path": str(SMALL)}])
def test_cli_path_flags_as_api_keywords_say_where_the_paths_go(given: dict) -> None:
    """A user typing the CLI's -d / -bp as keywords got "did you mean debug, disable_details or disable_module?"
    for ``d`` and no word at all for ``bp``: the paths are compare()'s two arguments, as the CLI says of the script."""
    with pytest.raises(UsageError) as info:
        compare(SMALL, SMALL, **given)
    assert str(info.value) == f"unknown option(s): {next(iter(given))} ({PATHS_HINT})"


def test_cli_path_flags_as_compare_ranks_keywords_name_compare_ranks(tmp_path: Path) -> None:
    """``compare_ranks(B, C, d=...)`` was told "compare() takes the two paths ... compare(BASE, COMPARISON, ...)",
    and of ``output_path`` "compare() writes no report": its hints name the function called."""
    from msprof_compare import compare_ranks

    with pytest.raises(UsageError) as info:
        compare_ranks(tmp_path, tmp_path, d="x", output_path="o")
    assert str(info.value) == (
        "unknown option(s): d, output_path (compare_ranks() takes the two paths without -d / -bp, as its first two "
        "arguments, base first: compare_ranks(BASE, COMPARISON, ...); compare_ranks() writes no report: pass the "
        "output target to each result's to_excel() / to_json())")


def test_several_api_hints_are_separated() -> None:
    """Hints that end without a question mark ran into the next one ("...two folders of ranks compare() writes")."""
    with pytest.raises(UsageError) as info:
        compare(SMALL, SMALL, bp="b", output="o", rank_list="0", debugg=True)
    assert str(info.value) == (
        "unknown option(s): bp, debugg, output, rank_list (did you mean debug for debugg? rank_list selects ranks of "
        f"compare_ranks(), which compares two folders of ranks; {PATHS_HINT}; compare() writes no report: pass the "
        "output target to the result's to_excel() / to_json())")


def test_different_steps_on_the_two_sides(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """--base_step picks the base's step and --comparison_step the comparison's. The comparison is the NPU
    excerpt with its Step Id edited from 50 to 7 (no sample holds two different step ids with a trace)."""
    comp = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU, comp)
    kd = comp / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = kd.read_text(encoding="utf-8").splitlines(keepends=True)
    assert sum(r.startswith("50,") for r in rows[1:]) == len(rows) - 1 == 20
    kd.write_text(rows[0] + "".join("7," + r[3:] for r in rows[1:]), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(NPU), "-d", str(comp), "--enable_kernel_compare",
                              "--base_step", "50", "--comparison_step", "7", "-o", str(out))
    assert code == 0 and not error_lines(err), err
    (book,) = out.glob("*.xlsx")
    sheet = read_xlsx(book, sheet_name="KernelCompare", header=2)
    # every one of the 20 kernel rows on each side (the csv's row count)
    assert (sheet["Calls"].sum(), sheet["Calls.1"].sum()) == (20, 20)
    code, _, err = run_inproc(capsys, "-bp", str(NPU), "-d", str(comp), "--enable_kernel_compare",
                              "--base_step", "7", "--comparison_step", "50", "-o", str(tmp_path / "never"))
    assert code == 2
    (line,) = error_lines(err)
    kd = NPU / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    assert line.startswith(f"error: {kd}: There is no kernel details information for step 7"), line


# --------------------------------------------------------------------------- --output_format and --fail_on_regression


@pytest.mark.parametrize(("value", "suffixes", "recorded"), [
    ("json xlsx", [".json", ".xlsx"], "xlsx,json"),   # a space separates as a comma does; order as canonical
    ("json,xlsx", [".json", ".xlsx"], "xlsx,json"),
    ("JSON", [".json"], "json"),                       # any case
])
def test_output_format_spellings(value: str, suffixes: list[str], recorded: str, capsys: pytest.CaptureFixture,
                                 tmp_path: Path) -> None:
    """--output_format takes the two formats in any order, separated by a comma or a space, in any case;
    the JSON's options record the canonical "xlsx,json"."""
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--enable_api_compare",
                              "--output_format", value, "-o", str(tmp_path))
    assert code == 0 and not error_lines(err), err
    assert sorted(p.suffix for p in tmp_path.iterdir()) == suffixes
    assert json_report(tmp_path)["options"]["output_format"] == recorded


def _cli_refuses_output_format(capsys: pytest.CaptureFixture, tmp_path: Path, value: str, why: str) -> None:
    """The CLI's refusal of ``--output_format value``: exit 2, one line ending in ``why``, nothing written."""
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--output_format", value,
                                "-o", str(tmp_path / "never"))
    assert (code, out) == (2, "")
    assert error_lines(err) == [
        f"error: Invalid param, --output_format must be xlsx, json or xlsx,json (got {value!r}{why})"]
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize(("value", "why"), [(",", ": an empty item"), (" , ", ": an empty item"), (" ", ""),
                                          # found by fuzzing: "xlsx," ran with the workbook alone, while "," and
                                          # --rank_list 0,,1 were refused for their empty items
                                          ("xlsx,", ": an empty item"), (",json", ": an empty item"),
                                          ("xlsx,,json", ": an empty item"), ("xlsx, ,json", ": an empty item")])
def test_output_format_naming_no_format_is_refused(value: str, why: str, capsys: pytest.CaptureFixture,
                                                   tmp_path: Path) -> None:
    """Separators alone name no report, and an empty item between commas is refused as --rank_list's is (a list
    built from an unset variable): a usage error before anything is loaded, nothing written."""
    _cli_refuses_output_format(capsys, tmp_path, value, why)


@pytest.mark.parametrize(("value", "recorded"), [("xlsx, json", "xlsx,json"), (" json ", "json"),
                                                 ("json\txlsx", "xlsx,json"), (["json", " xlsx"], "xlsx,json")])
def test_output_format_blanks_around_an_item_are_no_item(value: object, recorded: str) -> None:
    """Blanks around an item (``xlsx, json``, as ``--rank_list "0, 3"``) separate, they make no empty item; the API's
    list takes one format per item."""
    assert build_options(output_format=value)[0].output_format == recorded
    with pytest.raises(UsageError, match=r"\(got \['xlsx', ''\]: an empty item\)$"):
        build_options(output_format=["xlsx", ""])


@pytest.mark.parametrize(("value", "why"), [("json,json", ": a repeated item, json"),
                                          ("xlsx,xlsx", ": a repeated item, xlsx"),
                                          ("JSON json", ": a repeated item, json"),
                                          ("xlsx,json,XLSX", ": a repeated item, xlsx")])
def test_output_format_repeating_a_format_is_refused(value: str, why: str, capsys: pytest.CaptureFixture,
                                                    tmp_path: Path) -> None:
    """A format named twice (a list built by hand, the other format likely meant) ran as the one format named:
    refused as an empty item is, a usage error before anything is loaded, nothing written; compare()'s string and
    list alike."""
    _cli_refuses_output_format(capsys, tmp_path, value, why)
    with pytest.raises(UsageError) as refused:
        compare(str(SMALL), str(SMALL), output_format=value)
    assert str(refused.value) == f"Invalid param, output_format must be xlsx, json or xlsx,json (got {value!r}{why})"
    with pytest.raises(UsageError, match=r"\(got \['json', ' JSON'\]: a repeated item, json\)$"):
        build_options(output_format=["json", " JSON"])


@pytest.mark.parametrize("face", ["cli", "script"])
def test_stdout_with_a_format_without_json_is_a_usage_error(face: str, capsys: pytest.CaptureFixture,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o - --output_format xlsx`` streamed a JSON document nobody asked for (and wrote the workbook into the
    working directory): the conflict is a usage error naming both flags, before anything is loaded or written."""
    monkeypatch.chdir(tmp_path)
    if face == "cli":
        code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--enable_api_compare", "-o", "-",
                                    "--output_format", "XLSX")
    else:
        code = cli.script_main([str(SMALL), str(SMALL), "--enable_api_compare", "-o", "-", "--output_format", "xlsx"])
        out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert error_lines(err) == [
        "error: -o - writes the JSON report to standard output, but --output_format xlsx asks for no JSON: use "
        "--output_format xlsx,json (the workbook then goes into the current directory), or -o DIRECTORY for the "
        "workbook alone"]
    assert list(tmp_path.iterdir()) == []


#: Each option whose empty value is refused, and what its line asks for instead (by hand, from the options' help).
_EMPTY_REFUSED = {
    "max_kernel_num": "an integer greater than 3",
    "op_name_map": "a literal dict such as \"{'aten::mm': 'aclnnMm'}\"",
    "output_format": "xlsx, json or xlsx,json",
    "fail_on_regression": "a percentage such as 5",
    "rank_list": "all or rank ids such as 0,3",
}


@pytest.mark.parametrize("option", list(_EMPTY_REFUSED))
def test_an_empty_value_is_refused_on_every_face(option: str, capsys: pytest.CaptureFixture, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """One rule: an empty value (``--output_format "$FMT"`` with FMT unset) is refused, on every face, before
    anything is read or written. It was refused for --max_kernel_num and --rank_list but counted as not given for
    --output_format and --fail_on_regression: a CI job whose "$PCT" was unset passed an +11.78 % regression (exit
    0, a warning alone), and one whose "$FMT" was unset wrote the workbook where JSON was meant."""
    monkeypatch.chdir(tmp_path)
    line = (f"error: Invalid param, --{option} is empty (a shell variable that expanded to nothing?); leave it out "
            f"or give {_EMPTY_REFUSED[option]}")
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_BASE), "-bp", str(SAMPLE_COMP), f"--{option}", "")
    assert (code, out, error_lines(err)) == (2, "", [line])
    assert cli.script_main([str(SAMPLE_COMP), str(SAMPLE_BASE), f"--{option}", ""]) == 2
    assert error_lines(capsys.readouterr().err) == [line]
    assert list(tmp_path.iterdir()) == []
    call = compare_ranks if option == "rank_list" else compare
    with pytest.raises(UsageError) as info:
        call(str(SAMPLE_COMP), str(SAMPLE_BASE), **{option: ""})
    assert str(info.value) == (f"Invalid param, {option} is empty (got ''); leave it out or give "
                               f"{_EMPTY_REFUSED[option]}")


def test_an_empty_value_of_an_option_the_original_defaults_to_empty_is_that_default(
        capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """-o, --base_step, --comparison_step and --gpu_flow_cat default to "" in the original, which reads an empty
    value as not given: so does ours (a drop-in script's "$STEP" left unset compares every step)."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_inproc(capsys, "-d", str(SAMPLE_BASE), "-bp", str(SAMPLE_COMP), "--enable_api_compare",
                              "-o", "", "--base_step", "", "--comparison_step", "", "--gpu_flow_cat", "")
    assert (code, error_lines(err)) == (0, []), err
    assert [p.suffix for p in tmp_path.iterdir()] == [".xlsx"]  # into the current directory


@pytest.mark.parametrize(("pct", "code", "said"), [
    # MI300 3495976 ns -> H100 3907825 ns: +411849 ns (+0.412 ms), (3907825 - 3495976) / 3495976 = +11.78 %
    ("5% ", 3, "Performance regression: E2E time 3.496 ms -> 3.908 ms (+0.412 ms, +11.78%), threshold +5%"),
    (" 12 %", 0, "No regression: E2E time 3.496 ms -> 3.908 ms (+0.412 ms, +11.78%), threshold +12%"),
    ("-0", 3, "(+0.412 ms, +11.78%), threshold +0%"),  # read "threshold +-0%"
], ids=["trailing space", "spaces", "minus zero"])
def test_fail_on_regression_spellings(pct: str, code: int, said: str, capsys: pytest.CaptureFixture,
                                      tmp_path: Path) -> None:
    """Spaces around the percentage and its percent sign are allowed (an empty one is refused:
    ``test_an_empty_value_is_refused_on_every_face``). Base MI300X, comparison H100."""
    got, _, err = run_inproc(capsys, "-d", str(SAMPLE_BASE), "-bp", str(SAMPLE_COMP), "--enable_api_compare",
                             "--fail_on_regression", pct, "-o", str(tmp_path))
    assert got == code, err
    assert not error_lines(err)
    assert said in err


@pytest.mark.parametrize("pct", ["1_0", "1_0%", "0_5"])
def test_fail_on_regression_refuses_digit_separators(pct: str, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Python's float() reads "1_0" as 10: a gate meant at 1.0 % passed every regression up to 10 %. A digit
    separator is no percentage: a usage error as "ten" is, before anything is loaded or written, from the CLI
    and the API (str and bytes). Pair: MI300X base, H100 comparison (+11.78 %)."""
    from msprof_compare.errors import UsageError

    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_BASE), "-bp", str(SAMPLE_COMP), "--enable_api_compare",
                                "--fail_on_regression", pct, "-o", str(tmp_path / "never"))
    assert (code, out) == (2, "")
    assert error_lines(err) == [f"error: Invalid param, --fail_on_regression must be a number of percent (got {pct!r})"]
    assert not (tmp_path / "never").exists()
    with pytest.raises(UsageError, match="fail_on_regression"):
        compare(str(SAMPLE_COMP), str(SAMPLE_BASE), enable_api_compare=True, fail_on_regression=pct)
    with pytest.raises(UsageError, match="fail_on_regression"):
        compare(str(SAMPLE_COMP), str(SAMPLE_BASE), enable_api_compare=True, fail_on_regression=pct.encode())


ARABIC_TEN, FULL_WIDTH_TEN = "\u0661\u0660", "\uff11\uff10"  # int() and float() read both as 10


def _script_exit(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    """``performance_compare.py ARGS`` in this process: its parser's errors exit (2) from inside."""
    try:
        code = cli.script_main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("option", "value", "cli_says", "script_says"), [
    ("--max_kernel_num", "1_0",
     "Invalid value for '--max_kernel_num': '1_0' is not a valid int (digits 0-9 only). (see "
     "'msprof-analyze compare --help')",
     "argument --max_kernel_num: invalid int value: '1_0' (digits 0-9 only) (see 'performance_compare.py --help')"),
    ("--max_kernel_num", ARABIC_TEN,
     f"Invalid value for '--max_kernel_num': '{ARABIC_TEN}' is not a valid int (digits 0-9 only). (see "
     "'msprof-analyze compare --help')",
     f"argument --max_kernel_num: invalid int value: '{ARABIC_TEN}' (digits 0-9 only) (see "
     "'performance_compare.py --help')"),
    ("--max_kernel_num", FULL_WIDTH_TEN,
     f"Invalid value for '--max_kernel_num': '{FULL_WIDTH_TEN}' is not a valid int (digits 0-9 only). (see "
     "'msprof-analyze compare --help')",
     f"argument --max_kernel_num: invalid int value: '{FULL_WIDTH_TEN}' (digits 0-9 only) (see "
     "'performance_compare.py --help')"),
    ("--fail_on_regression", ARABIC_TEN, f"Invalid param, --fail_on_regression must be a number of percent (got "
                                         f"'{ARABIC_TEN}')", None),
    ("--fail_on_regression", FULL_WIDTH_TEN + "%", f"Invalid param, --fail_on_regression must be a number of "
                                                   f"percent (got '{FULL_WIDTH_TEN}%')", None),
], ids=["max_kernel_num separator", "max_kernel_num arabic-indic", "max_kernel_num full-width",
        "fail_on_regression arabic-indic", "fail_on_regression full-width"])
def test_numbers_take_ascii_digits_only(option: str, value: str, cli_says: str, script_says: str | None,
                                        capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """int() and float() read "1_0", the Arabic-Indic "\u0661\u0660" and the full-width "\uff11\uff10" as 10:
    ``--max_kernel_num 1_0`` ran with 10 (1 or 10 meant?), and ``--fail_on_regression`` in another script's
    digits set a gate nobody typed. Each face refuses them as it refuses "abc" (exit 2, one line, nothing
    written), with the reason; the API too (text, bytes). Pair: bert-small H100 / MI300X samples."""
    never = tmp_path / "never"
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_BASE), "-bp", str(SAMPLE_COMP), "--enable_api_compare",
                                option, value, "-o", str(never))
    assert (code, out, error_lines(err)) == (2, "", [f"error: {cli_says}"])
    code, out, err = _script_exit(capsys, str(SAMPLE_COMP), str(SAMPLE_BASE), "--enable_api_compare", option, value,
                                  "-o", str(never))
    assert (code, out, error_lines(err)) == (2, "", [f"error: {script_says or cli_says}"])
    assert not never.exists()
    for raw in (value, value.encode()):
        with pytest.raises(UsageError, match=option[2:]):
            build_options(**{option[2:]: raw})


def test_max_kernel_num_text_from_the_api_takes_ascii_digits_only() -> None:
    """The API validates a text ``max_kernel_num`` itself (the faces' parsers hand it an int): "1_0" and other
    scripts' digits are no integer there either, while ASCII digits, with a sign or blanks, are as before."""
    for raw in ("1_0", b"1_0", bytearray(b"1_0"), memoryview(b"1_0"), ARABIC_TEN, FULL_WIDTH_TEN):
        with pytest.raises(UsageError, match=r"--max_kernel_num has to be an integer greater than 3 \(got "):
            build_options(max_kernel_num=raw)
    assert [build_options(max_kernel_num=v)[0].max_kernel_num for v in ("10", " +10 ", b"10", 10, 10.0)] == [10] * 5


@pytest.mark.parametrize("step", ["5_0", "\uff15", "\u0665"])
def test_step_options_take_ascii_digits_only(step: str, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The step options were already strict (``str.isascii() and str.isdigit()``): pinned for both faces, as the
    other numeric options now are."""
    said = (f"error: Invalid param, --base_step and --comparison_step must be a number. (got --base_step {step!r}: "
            "a step id is a whole number >= 0, the N of ProfilerStep#N)")
    code, _, err = run_inproc(capsys, "-d", str(NPU), "-bp", str(NPU), "--base_step", step, "--comparison_step", "50",
                              "-o", str(tmp_path / "never"))
    assert (code, error_lines(err)) == (2, [said])
    code, _, err = _script_exit(capsys, str(NPU), str(NPU), "--base_step", step, "--comparison_step", "50",
                                "-o", str(tmp_path / "never"))
    assert (code, error_lines(err)) == (2, [said])
    assert not (tmp_path / "never").exists()


# --------------------------------------------------------------------------- what the faces print


def test_api_comparison_reads_the_input_shapes(caplog: pytest.LogCaptureFixture) -> None:
    """Input shapes are loaded with the operator, memory or API comparison on (the guard's own words): with
    the API comparison the Summary's input-shape guard checks the pair; without it, it says it could not."""
    def events(path: Path) -> list[dict]:
        return [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("cat") == "cpu_op"]

    def heaviest(ops: list[dict]) -> list[str]:
        # the 10 operator names with the largest total duration among ops that recorded Input Dims
        total: dict[str, float] = {}
        for e in ops:
            if e["args"].get("Input Dims") and not e["name"].startswith("ProfilerStep#"):
                total[e["name"]] = total.get(e["name"], 0) + e["dur"]
        return sorted(total, key=lambda n: -total[n])[:10]

    def with_digits(ops: list[dict]) -> set[str]:
        return {e["name"] for e in ops if any(ch.isdigit() for ch in json.dumps(e["args"].get("Input Dims", [])))}

    b, c = events(SAMPLE_BASE), events(SAMPLE_COMP)
    names_b, names_c = {e["name"] for e in b}, {e["name"] for e in c}
    asked = {n for n in heaviest(b) if n in names_c} | {n for n in heaviest(c) if n in names_b}
    checked = len(asked & with_digits(b) & with_digits(c))
    assert checked == 10  # 11 names asked; aten::empty records only [[], ...]: no shape to compare
    with caplog.at_level(logging.ERROR, logger="msprof-analyze"):
        guards = compare(SAMPLE_BASE, SAMPLE_COMP, enable_profiling_compare=True, enable_api_compare=True).guards
        row = guards[guards["Check"] == "input shapes of top operators"].iloc[0]
        assert (row["Status"], row["Base"], row["Comparison"]) == ("ok", checked, checked)
        guards = compare(SAMPLE_BASE, SAMPLE_COMP, enable_profiling_compare=True).guards
    row = guards[guards["Check"] == "input shapes of top operators"].iloc[0]
    assert (row["Status"], row["Base"], row["Detail"]) == ("unknown", 0, "no input shapes on either side (not read: "
                                                           "shapes are loaded only with the operator, memory or API "
                                                           "comparison on)")


def test_no_workbook_hint_when_the_overall_sheet_is_left_out(samples: Path, capsys: pytest.CaptureFixture,
                                                             tmp_path: Path) -> None:
    """A side without E2E time prints the console table but gets no OverallMetrics sheet (reference-1 §9.1):
    the INFO line pointing at that sheet of the workbook is then not printed, though a workbook is written."""
    code, out, err = run_inproc(capsys, "-bp", str(samples / L1_TEXT), "-d", str(samples / HEATMAP),
                                "--enable_profiling_compare", "--enable_api_compare", "-o", str(tmp_path))
    assert code == 0, err
    assert "Model Profiling Time Distribution" in out
    (book,) = tmp_path.glob("*.xlsx")
    assert list(read_xlsx(book, sheet_name=None)) == ["ApiCompare"]
    assert cli.OVERALL_HINT not in err


def test_error_line_keeps_the_hint(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A data error's hint (how to go on) ends its one error line, in parentheses."""
    link = tmp_path / "link.pt.trace.json"
    link.symlink_to(SMALL)
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(link), "-o", str(tmp_path / "never"))
    assert code == 1
    assert error_lines(err) == [f"error: {link}: is a symbolic link; refusing to follow it (base side: add --force "
                                f"to accept it)"]


def test_empty_path_error_names_no_file(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """``-bp ""``: the original's message, without a ": " for a file name that is not there, and which side it is."""
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", "", "-o", str(tmp_path / "never"))
    assert code == 1
    assert error_lines(err) == ["error: The path is empty. Please enter a valid path. (the base path: -bp, or the "
                                "first path of performance_compare.py)"]


def test_out_of_memory_on_a_small_pair_gives_no_estimate(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The "(this pair: about N MB)" estimate is left out under 1 MB, where it would read "about 0 MB":
    the 12 KB excerpt twice needs (5 + 1) * 12113 bytes = 0.07 MB."""
    import msprof_compare.api as api

    def hungry(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(api, "cli_compare", hungry)
    assert (5 + 1) * SMALL.stat().st_size / 1e6 < 1
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "-o", str(tmp_path))
    assert code == 1
    assert error_lines(err) == [
        "error: out of memory: a comparison needs roughly 5 times the larger input plus the size of the other; "
        "free memory, or compare less, e.g. --enable_profiling_compare alone"]


# --------------------------------------------------------------------------- the script face


def test_script_does_not_warn_about_root(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                         tmp_path: Path) -> None:
    """reference-1 §1.1: the root warning is msprof-analyze's; the script (§1.2) has none."""
    if not hasattr(os, "geteuid"):
        pytest.skip("no user ids here")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert cli.script_main([str(SMALL), str(SMALL), "--enable_api_compare", "--force", "-o", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "has been completed" in err and cli.ROOT_WARNING not in err


def test_script_does_not_say_completed_after_a_usage_error(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """docs/differences.md: the "completed in a total time" line is logged on success only (a usage error is
    exit 2, not 1, and was not covered)."""
    assert cli.script_main([str(SMALL), str(SMALL), "--base_step", "1", "-o", str(tmp_path / "never")]) == 2
    err = capsys.readouterr().err
    assert error_lines(err) == ["error: Invalid param, --base_step and --comparison_step must be set at the same time."]
    assert "has been completed" not in err


def test_script_ambiguous_prefix_lists_every_match(capsys: pytest.CaptureFixture) -> None:
    """A prefix that was ambiguous already in the original's parser ("--d": --disable_details,
    --disable_module) names our added --debug too: the script accepts it, so it is a possible meaning."""
    with pytest.raises(SystemExit) as info:
        cli.build_script_parser().parse_args(["a", "b", "--d"])
    assert info.value.code == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert "ambiguous option: --d could match --disable_details, --disable_module, --debug" in line, line


# --------------------------------------------------------------------------- the console-script entry points

_SLOW_ENTRY_CHILD = slow_writer_child("msprof_compare.entry:compare_main")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_mid_write_through_the_console_script_cleans_up(tmp_path: Path) -> None:
    """The entry points hand Ctrl-C back to Python once the CLI is imported: Ctrl-C while the workbook is
    written is then the CLI's KeyboardInterrupt, which removes the temporary file and the folder the run made
    (the quick exit of the import-time handler would leave them). test_output_safety.py runs cli directly."""
    from msprof_compare.report import excel

    if not hasattr(excel, "_write_sheet"):
        pytest.skip("writer has no _write_sheet hook")
    out, marker = tmp_path / "out", tmp_path / "writing"
    env = dict(os.environ, MSPROF_ANALYZE_LOG_LEVEL="WARNING", PYTHONPATH=str(REPO))
    code, err = signal_mid_write(_SLOW_ENTRY_CHILD, marker, ["-bp", str(SMALL), "-d", str(SMALL),
                                 "--enable_api_compare", "-o", str(out)], env, signal.SIGINT)
    assert code == 130 and error_lines(err) == ["error: interrupted"], err
    assert not out.exists(), sorted(p.name for p in out.rglob("*"))


def test_options_no_enabled_comparison_reads_are_said_to_be_ignored() -> None:
    """``--enable_api_compare --max_kernel_num 10`` changed nothing without a word: each option that only the
    operator (and memory) comparison reads gets the original's use_kernel_type-style warning when neither runs;
    with every comparison on (no --enable_* flag) or the one that reads it, none."""
    both = "enable_operator_compare or enable_memory_compare"
    _opts, warnings = build_options(enable_api_compare=True, max_kernel_num=10, use_input_shape=True,
                                    op_name_map="{'a': 'b'}", disable_module=True)
    assert warnings == [f"The max_kernel_num parameter is ignored: it only takes effect when {both} is enabled.",
                        f"The use_input_shape parameter is ignored: it only takes effect when {both} is enabled.",
                        f"The op_name_map parameter is ignored: it only takes effect when {both} is enabled.",
                        "The disable_module parameter is ignored: it only takes effect when enable_operator_compare "
                        "is enabled."]
    assert build_options(enable_memory_compare=True, max_kernel_num=10, disable_module=True)[1] == [
        "The disable_module parameter is ignored: it only takes effect when enable_operator_compare is enabled."]
    assert build_options(max_kernel_num=10, use_input_shape=True, disable_module=True, op_name_map="{'a': 'b'}")[1] \
        == []


def test_disable_details_without_the_comparisons_it_hides_is_said_to_be_ignored(capsys: pytest.CaptureFixture) -> None:
    """``--enable_profiling_compare --disable_details`` changed nothing without a word: the flag hides the
    ModuleCompare / OperatorCompare / MemoryCompare sheets and stops their matching (reference-1 §1.5), and has
    no effect on OverallMetrics, CommunicationCompare, ApiCompare or KernelCompare. With operator or memory
    comparison on (or every comparison, no --enable_* flag) it is read, and nothing is said."""
    both = "enable_operator_compare or enable_memory_compare"
    ignored = f"The disable_details parameter is ignored: it only takes effect when {both} is enabled."
    for flags in ({"enable_profiling_compare": True}, {"enable_api_compare": True, "enable_kernel_compare": True},
                  {"enable_communication_compare": True}):
        assert build_options(disable_details=True, **flags)[1] == [ignored], flags
    for flags in ({}, {"enable_operator_compare": True}, {"enable_memory_compare": True}):
        assert build_options(disable_details=True, **flags)[1] == [], flags
    code, _out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--enable_api_compare",
                                 "--disable_details", "-o", "-")
    assert code == 0 and ignored in err, err


def test_op_name_map_under_disable_details_changes_nothing(samples: Path) -> None:
    """The premise of its "ignored" warning, on real data: TimeSformer against ViT (tracelens H100 traces, roots
    ``TimesformerForVideoClassification_0`` and ``ViTModel_0``): a map that pairs the two roots changes
    ModuleCompare in a default run, and no sheet (the Summary included) under --disable_details."""
    root = samples / "tracelens/tests/traces/h100"
    a, b = (str(root / f"{m}.json.gz") for m in ("facebook_timesformer-base-finetuned-k400__1016002",
                                                  "Falconsai_nsfw_image_detection__1016002"))
    name_map = {"TimesformerForVideoClassification": "ViTModel"}
    plain, mapped = compare(a, b, enable_operator_compare=True), compare(a, b, enable_operator_compare=True,
                                                                        op_name_map=name_map)
    assert len(plain.sheet("ModuleCompare")) != len(mapped.sheet("ModuleCompare"))
    for flat in (False, True):
        plain, mapped = (compare(a, b, disable_details=True, disable_module=flat, **extra)
                         for extra in ({}, {"op_name_map": name_map}))
        assert plain.sheet_names == mapped.sheet_names and "Summary" in plain.sheet_names
        assert all(plain.sheet(n).equals(mapped.sheet(n)) for n in plain.sheet_names), flat


def test_matching_options_under_disable_details_are_said_to_be_ignored() -> None:
    """``--disable_details`` pairs no operator (reference-1 §1.5; the statistic sheets group by name, and
    reference-2 §4's row counts are the same with --use_input_shape and --max_kernel_num=10): the three options
    that act on the matching changed nothing, without a word (--op_name_map renames the matching keys of ops and
    module paths, and no op or module is matched). Measured on NPU pair 1 (operator and memory sheets): the sheets
    are identical with and without them under --disable_details; --op_name_map: see
    ``test_op_name_map_under_disable_details_changes_nothing``. --disable_module still chooses the sheets."""
    matched = "it only takes effect when operators are matched, which disable_details turns off."
    for flags in ({}, {"enable_operator_compare": True}, {"enable_memory_compare": True}):
        assert build_options(disable_details=True, use_input_shape=True, max_kernel_num=10, **flags)[1] == [
            f"The max_kernel_num parameter is ignored: {matched}",
            f"The use_input_shape parameter is ignored: {matched}"], flags
        assert [w for w in build_options(disable_details=True, op_name_map="{'a': 'b'}", disable_module=True,
                                         **flags)[1] if matched in w] == [
            f"The op_name_map parameter is ignored: {matched}"], flags
        assert build_options(use_input_shape=True, max_kernel_num=10, op_name_map="{'a': 'b'}", **flags)[1] == []
    both = "enable_operator_compare or enable_memory_compare"  # neither comparison on: the one warning each
    assert build_options(enable_api_compare=True, disable_details=True, max_kernel_num=10)[1] == [
        f"The max_kernel_num parameter is ignored: it only takes effect when {both} is enabled.",
        f"The disable_details parameter is ignored: it only takes effect when {both} is enabled."]


# --------------------------------------------------------------------------- an option given more than once


def _warnings(err: str, word: str) -> list[str]:
    return [line.split("[WARNING] ", 1)[1] for line in err.splitlines() if "[WARNING]" in line and word in line]


def test_repeated_short_path_options_are_warned_of_as_they_are_read(capsys: pytest.CaptureFixture,
                                                                       tmp_path: Path) -> None:
    """``-d=RUN`` is RUN (clean_path drops the "="), but the repeat warning quoted '=RUN': ``-d=RUN -d RUN`` was
    warned of as two values, and ``-o=a -o b`` named '=a', a path never used (found by option fuzzing, optfuzz63)."""
    a, b = tmp_path / "a", tmp_path / "b"
    code, _, err = run_inproc(capsys, f"-d={SMALL}", "-d", str(SMALL), "-bp", str(SMALL), "--enable_api_compare",
                              f"-o={a}", "-o", str(b))
    assert code == 0, err
    assert _warnings(err, " is given ") == [f"-o is given 2 times ('{a}', '{b}'): the last value, '{b}', is used"]
    assert not a.exists() and len(list(b.glob("*.xlsx"))) == 1


def test_script_reads_the_last_max_kernel_num_alone_as_the_cli_faces(capsys: pytest.CaptureFixture,
                                                                      tmp_path: Path) -> None:
    """``--max_kernel_num 5.0 --max_kernel_num 7``: click reads the last value alone, so the CLI faces warned and
    ran with 7, while the script's argparse converted each value and refused '5.0' (exit 2): the same command
    line on two faces ended apart (found by option fuzzing, optfuzz66). The script reads the last value alone
    too; a bad last value is refused in argparse's words, as before."""
    given = ["--enable_api_compare", "--max_kernel_num", "5.0", "--max_kernel_num", "7"]
    said = "--max_kernel_num is given 2 times ('5.0', '7'): the last value, '7', is used"
    code, _, err = run_inproc(capsys, "-bp", str(SMALL), "-d", str(SMALL), *given, "-o", str(tmp_path / "cli"))
    assert code == 0 and _warnings(err, " is given ") == [said], err
    code = cli.script_main([str(SMALL), str(SMALL), *given, "-o", str(tmp_path / "script")])
    err = capsys.readouterr().err
    assert code == 0 and _warnings(err, " is given ") == [said], err
    assert len(list((tmp_path / "script").glob("*.xlsx"))) == len(list((tmp_path / "cli").glob("*.xlsx"))) == 1
    with pytest.raises(SystemExit) as info:
        cli.script_main([str(SMALL), str(SMALL), "--max_kernel_num", "7", "--max_kernel_num", "5.0"])
    assert info.value.code == 2
    assert error_lines(capsys.readouterr().err) == [
        "error: argument --max_kernel_num: invalid int value: '5.0' (see 'performance_compare.py --help')"]


def test_rank_gate_line_names_the_threshold_without_its_blanks(capsys: pytest.CaptureFixture, samples: Path,
                                                               tmp_path: Path) -> None:
    """``--fail_on_regression " 20 "`` is 20 (blanks around a number are read past, as by every face), but the rank
    job's gate line quoted it raw: "--fail_on_regression  20 : rank 1 regressed ..." (found by option fuzzing,
    optfuzz66). Text level 0 -> level 1: rank 0 +17.49 %, rank 1 +31.12 % (step_trace_time.csv, test_ranks.py)."""
    text = samples / "msinsight/test/data/pytorch/text"
    code, _, err = run_inproc(capsys, "-bp", str(text / "level0"), "-d", str(text / "level1"), "-o", str(tmp_path),
                              "--enable_profiling_compare", "--fail_on_regression", " 20 ")
    assert code == 3 and error_lines(err) == [
        "error: --fail_on_regression 20: rank 1 regressed beyond the threshold; the job (slowest rank per side) "
        "+20.330 ms, +17.49%, within it"], err


def test_option_given_twice_with_different_values_is_warned(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The parsers keep an option's last value without a word (as the original's argparse does): ``-o a -o b``
    wrote into b alone, and ``-bp run1 ... -bp run2`` (a base appended to a command kept in a script) compared
    run2. Each face now warns, naming the option as typed and every value; the last one is still used. A value
    repeated as it was, or a flag given twice, says nothing. Found by fuzzing the options."""
    first, last = tmp_path / "first", tmp_path / "last"
    code, _, err = run_inproc(capsys, "-bp", str(SMALL), "-d", str(SMALL), "--enable_api_compare", "--force",
                              "--force", "-o", str(first), f"--output_path={last}", "--max_kernel_num", "4",
                              "--max_kernel_num=4")
    assert code == 0, err
    assert _warnings(err, " is given ") == [f"-o / --output_path is given 2 times ('{first}', '{last}'): the last "
                                            f"value, '{last}', is used"]
    assert not first.exists() and len(list(last.glob("*.xlsx"))) == 1
    missing = tmp_path / "no_such_run.json"
    # -oVALUE and -bp=VALUE as click reads them; the error that follows is the last base's
    code, _, err = run_inproc(capsys, "-bp", str(SMALL), "-d", str(SMALL), f"-bp={missing}", f"-o{tmp_path}",
                              "--gpu_flow_cat", "ac2g", "--gpu_flow_cat", "a c")
    assert code == 1 and error_lines(err) == [f"error: {missing}: no such file or directory (base side)"], err
    assert _warnings(err, " is given ") == [
        f"-bp is given 2 times ('{SMALL}', '{missing}'): the last value, '{missing}', is used",
        "--gpu_flow_cat is given 2 times ('ac2g', 'a c'): the last value, 'a c', is used"]
    # the script: its options (an abbreviation is the option it abbreviates), the values as typed
    code = cli.script_main([str(missing), str(missing), "--max_kernel_num", "4", "--max_kernel", "5", "-o",
                            str(tmp_path), "--output_format", "json", "--output_format", "json"])
    err = capsys.readouterr().err
    assert code == 1 and _warnings(err, " is given ") == [
        "--max_kernel_num is given 2 times ('4', '5'): the last value, '5', is used"], err
