"""The command-line faces: flags, exit codes, the one-line error path, and end-to-end runs."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from cliutil import error_lines, finish, run_inproc, unraisable
from test_memory_record_reads import LOST
from xlsxutil import read_xlsx

from msprof_compare import cli
from msprof_compare.errors import ProfileError, UsageError

REPO = Path(__file__).resolve().parents[1]
SAMPLE_BASE = REPO / "sample_data" / "bert-small_h100.json.gz"
SAMPLE_COMP = REPO / "sample_data" / "bert-small_mi300.json.gz"
LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]\[(DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ")
ANALYZE = "from msprof_compare.entry import analyze_main; analyze_main()"  # the console scripts
COMPARE = "from msprof_compare.entry import compare_main; compare_main()"



def run_face(code: str, *args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run a face in a fresh interpreter, as a user would (package importable from the checkout)."""
    return finish(start_face(code, *args, env=env, cwd=cwd))


def run_faces(*runs: tuple) -> list[subprocess.CompletedProcess]:
    """Several independent ``run_face`` runs at once, each ``(code, *args)`` or ``(code, *args, {env})``: the
    interpreter start and the package import, most of a short run, overlap on a second core."""
    procs: list[subprocess.Popen] = []
    try:
        for run in runs:
            env = run[-1] if isinstance(run[-1], dict) else None
            procs.append(start_face(*(run[:-1] if env is not None else run), env=env))
        return [finish(proc) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def start_face(code: str, *args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.Popen:
    """``run_face`` started, not waited for (``finish`` waits)."""
    full_env = {k: v for k, v in os.environ.items() if k != "MSPROF_ANALYZE_LOG_LEVEL"}
    full_env["PYTHONPATH"] = str(REPO)
    full_env.update(env or {})
    if code == "script":
        cmd = [sys.executable, str(REPO / "performance_compare.py"), *args]
    else:
        cmd = [sys.executable, "-c", code, *args]
    # as from a terminal: Ctrl-C at its default even when the test run itself ignores it (nohup, `cmd &`),
    # since the CLI leaves an ignored SIGINT ignored
    restore = None if os.name == "nt" else (lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                            cwd=cwd or REPO, preexec_fn=restore)


def assert_one_error(stderr: str) -> str:
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for line in stderr.splitlines():
        assert line.startswith("error:") or LOG_LINE.match(line), line
    return lines[0]


# --------------------------------------------------------------------------- option parsing


def test_help_lists_the_original_flags(capsys: pytest.CaptureFixture) -> None:
    for flag in ("-h", "-H", "--help"):
        code, out, _ = run_inproc(capsys, flag)
        assert code == 0
        for text in ("-bp, --benchmark_profiling_path", "-d, --profiling_path", "-o, --output_path",
                     "--enable_profiling_compare", "--enable_kernel_compare", "--disable_details",
                     "--disable_module", "--max_kernel_num", "--op_name_map", "--use_input_shape",
                     "--gpu_flow_cat", "--base_step", "--comparison_step", "--force", "--use_kernel_type", "--debug",
                     "Path of the benchmark data", "Enable operator memory comparison", "Hide module comparison"):
            assert text in out, text
        assert "\\[" not in out  # typer < 0.22 escaped the brackets: "\[required]" (docs audit)
        flat = " ".join(out.split())  # the help says which side each path is and what -o may name (user audit)
        for text in ("Path of the profiling data (the comparison side", "Path of the benchmark data (the base side",
                     # the rank-by-rank compare, found from --help
                     "(the comparison side; folders of a multi-rank run's profiles on both sides compare rank by "
                     "rank, and a profiler schedule's cycles cycle by cycle)",
                     "(the base side; folders of a multi-rank run's profiles on both sides compare rank by rank, and "
                     "a profiler schedule's cycles cycle by cycle)",
                     "a name ending in .xlsx or .json names the report file, whose extension follows --output_format",
                     "symbolic links",
                     # what the original's texts leave unsaid, which users asked about (docs audit)
                     "(the ModuleCompare, OperatorCompare and MemoryCompare sheets; no operator or module is paired "
                     "then)",
                     "(an integer above 3: a matched op with more kernels than that is compared through its "
                     "child ops)",
                     # "in the form of dictionaries" gave no example of the quoting a shell needs (user walk)
                     "(a dict literal: \"{'name on one side': 'its name on the other'}\")",
                     "(NPU data only; give both step options;",
                     # GPU users enabled it and got no workbook, with only a warning to say why (user walk)
                     "NPU data on both sides; with a GPU side it is skipped",
                     # the memory, communication and kernel helps named no sheet, as the others did (user walk,
                     # session 68)
                     "Enable operator memory comparison (MemoryCompareStatistic and MemoryCompare: the memory "
                     "allocated inside each operator, which profile_memory=True records)",
                     "Enable communication performance comparison (CommunicationCompare: the time of each "
                     "collective op type and, on NPU data, of its tasks)",
                     "Enable kernel performance comparison (KernelCompare: each kernel's time by name and input "
                     "shape, or KernelTypeCompare with --use_kernel_type;",
                     "(KernelTypeCompare: kernels by op type; a DB export's from its task rows)",
                     "it also runs the time breakdown, and exits 1 when a side has no E2E time",
                     # the original's one-liners left a first-time reader guessing (session 61 help review)
                     "Enable overall performance comparison (the console table and the OverallMetrics sheet, "
                     "and the E2E waterfall of the console and the Summary sheet)",
                     "(the module sheets where both sides have module data, else the operator sheets)",
                     "(ApiCompare: the host time of each torch op, annotation and runtime call, by name)",
                     "Enable precise matching of operators (by name and input shape, not by name alone)",
                     "give both step options; the N of ProfilerStep#N; a text export's OverallMetrics and "
                     "waterfall cover the whole profile even so, as in the original)",
                     # every category it replaces (optree.GPU_FLOW_CATS), not two of the four
                     "(the flow category linking ops to kernels, in place of the usual ac2g, async, async_gpu and "
                     "async_cpu_to_gpu; at most 20 characters)",
                     "With no --enable_* option, every comparison runs."):
            assert text in flat, text
    from msprof_compare.compare.optree import GPU_FLOW_CATS

    # the help names every category --gpu_flow_cat replaces (it named two of the four)
    assert [c for c in sorted(GPU_FLOW_CATS) if not re.search(rf"\b{c}\b", cli.HELP["gpu_flow_cat"])] == []
    parser = cli.build_script_parser()
    flat = " ".join(parser.format_help().split())  # argparse formats help with %: the texts must hold none
    assert "exits 1 when a side has no E2E time" in flat and "(NPU data only; give both step options" in flat
    assert "(by name and input shape, not by name alone)" in flat
    assert "(MemoryCompareStatistic and MemoryCompare: the memory allocated inside each operator" in flat
    assert "(CommunicationCompare: the time of each collective op type and, on NPU data, of its tasks)" in flat
    assert "(KernelCompare: each kernel's time by name and input shape, or KernelTypeCompare with" in flat
    assert "With no --enable_* option, every comparison runs. Exit status: 0 done" in flat
    assert "(an integer above 3: a matched op with more kernels than that" in flat
    assert parser.description == "Compare trace of GPU and NPU"


def test_help_gives_the_exit_statuses_and_where_the_json_is_described(capsys: pytest.CaptureFixture) -> None:
    """A CI script's author found in --help neither the exit statuses (3 for --fail_on_regression alone) nor where
    the JSON report is described (user walk 73): every face's help names each status of README's "Errors and exit
    codes" table that a run sets itself (not 143 / 129, a signal's), as that table reads it, and the files it
    points at exist."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Errors and exit codes", 1)[1].split("\n## ", 1)[0]
    statuses = {int(m) for m in re.findall(r"^\| (\d+) \|", table, flags=re.M)}
    assert statuses == {0, 1, 2, 3, 130}  # the rows of one code each; "| 143, 129 |" is the signals' row
    words = {0: "0 done", 1: "1 unreadable or invalid data", 2: "2 bad usage",
             3: "3 a regression beyond --fail_on_regression", 130: "130 interrupted"}
    assert (UsageError.exit_code, ProfileError.exit_code) == (2, 1)  # the codes the words go with
    faces = [" ".join(run_inproc(capsys, "--help")[1].split()),
             " ".join(cli.build_script_parser().format_help().split())]
    for flat in faces:
        assert [words[c] for c in sorted(statuses) if words[c] not in flat] == [], flat
        assert "README.md (Errors and exit codes; CI regression gate)" in flat
        assert ("The JSON report's schema ships with the package: msprof_compare/schemas/result.schema.json, in "
                "Python msprof_compare.schema('result').") in flat
    root = Path(__file__).resolve().parents[1]
    assert (root / "msprof_compare" / "schemas" / "result.schema.json").is_file()
    assert "\n## Errors and exit codes\n" in readme and "\n## CI regression gate\n" in readme


def test_parsed_values_reach_the_api(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                     tmp_out: Path) -> None:
    seen = {}

    def fake_execute(params: dict) -> int:
        seen.update(params)
        return 0

    monkeypatch.setattr(cli, "execute", fake_execute)
    monkeypatch.setenv("HOME", str(tmp_out))
    code, _, _ = run_inproc(capsys, "-d", "==~/comp", "-bp", "=base", "-o", "~/out", "--enable_kernel_compare",
                            "--max_kernel_num", "10", "--op_name_map", "{'a':'b'}", "--base_step", "1",
                            "--comparison_step", "2", "--force", "--use_input_shape", "--gpu_flow_cat", "x")
    assert code == 0
    assert seen["comparison_profiling_path"] == "~/comp"  # expanded where it is read: named as typed
    assert seen["base_profiling_path"] == "base"
    assert seen["output_path"] == "~/out"  # expanded by the run (execute): named as typed
    assert seen["enable_kernel_compare"] and not seen["enable_api_compare"]
    assert seen["max_kernel_num"] == 10 and seen["op_name_map"] == "{'a':'b'}"
    assert (seen["base_step"], seen["comparison_step"]) == ("1", "2")
    assert seen["force"] and seen["use_input_shape"] and seen["gpu_flow_cat"] == "x" and not seen["debug"]
    # the user guide's long name of -bp
    seen.clear()
    assert run_inproc(capsys, "-d", "c", "--benchmark_path", "b")[0] == 0
    assert (seen["comparison_profiling_path"], seen["base_profiling_path"]) == ("c", "b")


def test_api_paths_expand_home_and_drop_a_leading_equals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """compare() reads a path as the CLI's clean_path does: "~" is the home directory and a leading "=" (``-d=X``
    typed ``-d =X``) is dropped, in the loaders and in the same-input check alike."""
    from msprof_compare.api import compare

    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    os.link(SAMPLE_BASE, home / SAMPLE_BASE.name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)  # no "~" folder relative to the working directory
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(f"~/{SAMPLE_BASE.name}", f"=~/{SAMPLE_BASE.name}")
    assert len(res.sheets) and [m for m in caplog.messages if "same input" in m]


def test_clean_path() -> None:
    assert cli.clean_path(None) is None
    assert cli.clean_path("==a/b") == "a/b"
    assert cli.clean_path("~/x") == "~/x"  # expanded where it is used (loaders.paths.typed_path)


@pytest.mark.parametrize("face", ["cli", "script"])
def test_an_input_with_a_tilde_is_named_as_typed(face: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture) -> None:
    """A ``~`` the shell left (quoted, or after ``-d=``) is the home directory, as in the original, but the error
    named the path expanded ("/home/me/nope.json: no such file or directory"), which the user never typed; it names
    it as typed now, as ``compare()`` did, and a file inside a typed folder likewise. A run reads the same files and
    its reports name the input as typed (as a relative path is)."""
    home = tmp_path / "home"
    (home / "run").mkdir(parents=True)
    os.link(SAMPLE_BASE, home / SAMPLE_BASE.name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)  # no "~" folder in the working directory

    def run(*args: str) -> tuple[int, list[str]]:  # args: -bp BASE -d COMPARISON [options]
        if face == "cli":
            code, _, err = run_inproc(capsys, *args)
        else:
            code = cli.script_main([args[1], args[3], *args[4:]])
            err = capsys.readouterr().err
        return code, [line for line in err.splitlines() if line.startswith("error:")]

    assert run("-bp", "~/nope.json", "-d", f"~/{SAMPLE_BASE.name}") == (
        1, ["error: ~/nope.json: no such file or directory (base side)"])
    assert run("-bp", f"=~/{SAMPLE_BASE.name}", "-d", "~/run") == (
        1, ["error: ~/run: The data is not collected by PyTorch or Mindspore mode or the data is not parsed: no "
            "trace_view.json, profiler *.db or *.pt.trace.json found (comparison side)"])
    code, errors = run("-bp", f"~/{SAMPLE_BASE.name}", "-d", f"=~/{SAMPLE_BASE.name}", "--enable_api_compare",
                       "-o", "~/out", "--output_format", "json")
    assert (code, errors) == (0, [])
    doc = json.loads(next((home / "out").iterdir()).read_text())  # -o's "~" is expanded as before
    assert doc["base"]["path"] == doc["comparison"]["path"] == f"~/{SAMPLE_BASE.name}"


@pytest.mark.parametrize("face", ["cli", "script"])
def test_an_output_with_a_tilde_is_named_as_typed(face: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    """``-o "~/x"`` is the home directory's x, as in the original, but its errors and notices named the expanded
    path ("error: output path /home/me/x is a file, not a directory"), while an input is named as typed: they name
    ``~/x`` now, and a ``.json`` name's workbook ``~/run.xlsx``; a longer path that starts with it (a file inside
    it, as the "has been generated" lines name the reports, absolute as in the original) is left alone."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "file").touch()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str]:
        if face == "cli":
            code, _, err = run_inproc(capsys, "-bp", str(SAMPLE_BASE), "-d", str(SAMPLE_BASE), *args)
        else:
            code = cli.script_main([str(SAMPLE_BASE), str(SAMPLE_BASE), *args])
            err = capsys.readouterr().err
        return code, err

    for args, said in ((["-o", "~/file"], "error: output path ~/file is a file, not a directory; give a directory, "
                                          "or a name ending in .xlsx for the report file itself"),
                       (["-o", "=~/file/x"], f"error: cannot create output directory ~/file/x: {home / 'file'} is "
                                             "not a directory"),
                       (["-o", "~/file/.json"], "error: -o ~/file/.json names no file before .json; give a name such "
                                                "as run.json, or a directory")):
        code, err = run(*args)
        assert (code, assert_one_error(err)) == (2, said), args
    code, err = run("-o", "~/run.json", "--enable_api_compare")
    warned = [line.split("[WARNING] ", 1)[1] for line in err.splitlines() if "names a .json file" in line]
    written = [line.split(": ", 1)[1] for line in err.splitlines() if "has been generated" in line]
    assert code == 0 and warned == [
        "-o ~/run.json names a .json file but --output_format is xlsx (the default), so the report is written as "
        "~/run.xlsx; add --output_format json (or xlsx,json) for the JSON report."]
    assert written == [str(home / "run.xlsx")] and (home / "run.xlsx").is_file()
    code, err = run("-o", "~", "--enable_api_compare", "--output_format", "json")  # the folder itself
    written = [line.split(": ", 1)[1] for line in err.splitlines() if "has been generated" in line]
    assert code == 0 and len(written) == 1 and written[0].startswith(f"{home}{os.sep}performance_comparison_")


# --------------------------------------------------------------------------- error path

USAGE_CASES = {
    "missing -bp": ["-d", "{comp}"],
    "max_kernel_num 3": ["-d", "{comp}", "-bp", "{base}", "--max_kernel_num", "3"],
    "max_kernel_num text": ["-d", "{comp}", "-bp", "{base}", "--max_kernel_num", "abc"],
    "op_name_map not literal": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "abc"],
    "op_name_map syntax": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "{'a':"],
    "op_name_map not dict": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "[1]"],
    "op_name_map non-str": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "{'a': 1}"],
    "op_name_map value over 200": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "{'a': '" + "v" * 201 + "'}"],
    "op_name_map call": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "dict(a='b')"],
    "op_name_map key over 200": ["-d", "{comp}", "-bp", "{base}", "--op_name_map", "{'" + "k" * 201 + "': 'v'}"],
    "only base_step": ["-d", "{comp}", "-bp", "{base}", "--base_step", "1"],
    "step not a number": ["-d", "{comp}", "-bp", "{base}", "--base_step", "-1", "--comparison_step", "1"],
    "step superscript digit": ["-d", "{comp}", "-bp", "{base}", "--base_step", "\u00b2", "--comparison_step", "\u00b2"],
    "fail_on_regression inf": ["-d", "{comp}", "-bp", "{base}", "--fail_on_regression", "inf"],
    "gpu_flow_cat too long": ["-d", "{comp}", "-bp", "{base}", "--gpu_flow_cat", "x" * 21],
    "unknown option": ["-d", "{comp}", "-bp", "{base}", "--no_such_flag"],
    "output is a file": ["-d", "{comp}", "-bp", "{base}", "-o", "{file}"],
}


@pytest.mark.parametrize("case", sorted(USAGE_CASES))
def test_usage_errors_exit_2(case: str, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    out_dir = tmp_path / "never"
    slots = {"{comp}": str(SAMPLE_COMP), "{base}": str(SAMPLE_BASE), "{file}": str(a_file)}
    args = [slots.get(a, a) for a in USAGE_CASES[case]]
    if "-o" not in args:
        args += ["-o", str(out_dir)]
    code, out, err = run_inproc(capsys, *args)
    assert code == 2, err
    assert_one_error(err)
    assert " object at 0x" not in err  # a parser's node repr is no message ("op_name_map call")
    assert not out_dir.exists()


def _kineto(events: list[dict]) -> bytes:
    return json.dumps({"schemaVersion": 1, "traceEvents": events}).encode()


def _make_bad_inputs(root: Path) -> dict[str, Path]:
    """Broken inputs, each made from nothing but a few bytes (or a cut of the real sample)."""
    root.mkdir()
    real = gzip.decompress(SAMPLE_BASE.read_bytes())
    cases = {}
    (root / "empty.json").write_bytes(b"")
    cases["empty file"] = root / "empty.json"
    (root / "truncated.json").write_bytes(real[: len(real) // 2])
    cases["truncated JSON"] = root / "truncated.json"
    (root / "list.json").write_bytes(b"[1, 2, 3]")
    cases["JSON list that is no trace"] = root / "list.json"
    (root / "notrace").mkdir()
    (root / "notrace" / "readme.txt").write_text("hello")
    cases["directory without a trace"] = root / "notrace"
    (root / "two").mkdir()
    (root / "two" / "a.pt.trace.json").write_bytes(real)
    (root / "two" / "b.pt.trace.json").write_bytes(real)
    cases["directory with two traces"] = root / "two"
    (root / "nokernels.json").write_bytes(_kineto([
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0, "args": {}},
    ]))
    cases["trace without kernels"] = root / "nokernels.json"
    (root / "bad.gz.json").write_bytes(b"\x1f\x8b\x08\x00garbage")
    cases["corrupt gzip"] = root / "bad.gz.json"
    (root / "x.txt").write_text("{}")
    cases["unknown suffix"] = root / "x.txt"
    cases["missing path"] = root / "does-not-exist.json"
    return cases


BAD_CASES = ["empty file", "truncated JSON", "JSON list that is no trace", "directory without a trace",
             "directory with two traces", "trace without kernels", "corrupt gzip", "unknown suffix", "missing path"]


@pytest.mark.parametrize("case", BAD_CASES)
@pytest.mark.parametrize("side", ["base", "comparison"])
def test_data_errors_exit_1(case: str, side: str, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    bad = _make_bad_inputs(tmp_path / "in")[case]
    out_dir = tmp_path / "out"
    base, comp = (bad, SAMPLE_COMP) if side == "base" else (SAMPLE_BASE, bad)
    code, out, err = run_inproc(capsys, "-d", str(comp), "-bp", str(base), "-o", str(out_dir))
    assert code == 1, err
    line = assert_one_error(err)
    assert bad.name in line, line  # names the offending file
    assert "internal error" not in line
    assert not out_dir.exists()
    assert out == ""


def test_a_dash_for_a_profile_says_stdin_is_not_read(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``-d -`` (standard input in many tools; ``-o -`` writes the JSON there) read only ``-: no such file or
    directory``; it now says a profile is a path. A file named "-" is still read as that file."""
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_inproc(capsys, "-d", "-", "-bp", str(SAMPLE_BASE), "-o", str(tmp_path / "o"))
    assert code == 1 and assert_one_error(err) == ("error: -: no such file or directory (comparison side: a profile "
                                                   "is not read "
                                                   "from standard input: pass its file or directory)"), err
    (tmp_path / "-").write_bytes(b"[]")
    code, _out, err = run_inproc(capsys, "-d", "-", "-bp", str(SAMPLE_BASE), "-o", str(tmp_path / "o"))
    assert code == 1 and "standard input" not in err and "Invalid profiling path suffix" in err, err
    assert not (tmp_path / "o").exists()


def test_missing_trace_names_its_gz_twin(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A new user who typed ``-bp bert-small_h100.json`` for the bundled ``bert-small_h100.json.gz`` (or
    ``.json.gz`` for a trace unpacked to ``.json``) read only ``no such file or directory`` beside a file that
    differs by ``.gz``; the line now names that file, as typed, and nothing is written."""
    packed = tmp_path / "h100.json.gz"
    shutil.copyfile(SAMPLE_BASE, packed)
    plain = tmp_path / "mi300.json"
    plain.write_bytes(gzip.decompress(SAMPLE_COMP.read_bytes()))
    out = tmp_path / "o"
    code, _out, err = run_inproc(capsys, "-d", str(plain), "-bp", str(tmp_path / "h100.json"), "-o", str(out))
    assert code == 1 and assert_one_error(err) == (f"error: {tmp_path / 'h100.json'}: no such file or directory "
                                                   f"(base side: did you mean {packed}? that file exists)"), err
    code, _out, err = run_inproc(capsys, "-d", f"{plain}.gz", "-bp", str(packed), "-o", str(out))
    assert code == 1 and assert_one_error(err) == (f"error: {plain}.gz: no such file or directory "
                                                   f"(comparison side: did you mean {plain}? that file exists)"), err
    code, _out, err = run_inproc(capsys, "-d", str(tmp_path / "other.json.gz"), "-bp", str(packed), "-o", str(out))
    assert code == 1 and assert_one_error(err) == (f"error: {tmp_path / 'other.json.gz'}: no such file or "
                                                   "directory (comparison side)")
    assert not out.exists()
    code, _out, err = run_inproc(capsys, "-d", str(plain), "-bp", str(packed), "-o", str(out),
                                 "--enable_profiling_compare")
    assert code == 0, err  # the files named are the ones to pass


def test_gz_twin_is_named_as_typed_and_only_a_file(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative paths (the usual way to type them): the twin is named as typed, not as the absolute path; a
    directory that differs by .gz is no trace to suggest."""
    shutil.copyfile(SAMPLE_BASE, tmp_path / "h100.json.gz")
    (tmp_path / "runs.json.gz").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_inproc(capsys, "-d", "h100.json.gz", "-bp", "h100.json", "-o", "o")
    assert code == 1 and assert_one_error(err) == (
        "error: h100.json: no such file or directory (base side: did you mean h100.json.gz? that file exists)"), err
    code, _out, err = run_inproc(capsys, "-d", "h100.json.gz", "-bp", "runs.json", "-o", "o")
    assert code == 1 and assert_one_error(err) == "error: runs.json: no such file or directory (base side)", err
    assert not (tmp_path / "o").exists()


def test_a_mistyped_input_names_the_near_name_its_folder_holds(tmp_path: Path) -> None:
    """A letter left out of the bundled trace's name (``-bp sample_data/bert-smal_h100.json.gz``, a new user's
    first typo) read only ``no such file or directory``; the line now names the near name the folder holds, as
    typed, and the name pasted back compares. A name that differs by digits alone is no typo: ``h200`` beside
    ``h100`` (or ``rank2_ascend_pt`` beside ``rank1_ascend_pt``) names nothing, where the next nearest name would
    be the other run's. Through ``python -m msprof_compare`` from a folder holding the bundled pair."""
    (tmp_path / "sample_data").symlink_to(REPO / "sample_data")
    (tmp_path / "runs" / "rank1_ascend_pt").mkdir(parents=True)
    comp = "sample_data/bert-small_mi300.json.gz"
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(base: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", base, "-d", comp, "-o", "o",
                               "--enable_profiling_compare"], capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=300)

    for typed, meant in (("sample_data/bert-smal_h100.json.gz", "sample_data/bert-small_h100.json.gz"),
                         ("sample_data/bert_small_h100.json.gz", "sample_data/bert-small_h100.json.gz"),
                         ("runs/rank1_ascend", "runs/rank1_ascend_pt"),
                         # a folder's name typed with its slash: matched among folders, named with the slash; a
                         # file's near name is none (it read no hint at all, the name's tail being empty)
                         ("runs/rank1_ascend/", "runs/rank1_ascend_pt/"), ("sample_data/bert-smal_h100.json.gz/", None),
                         ("sample_data/bert-small_h200.json.gz", None), ("runs/rank2_ascend_pt", None),
                         ("sample_data/other.json.gz", None)):
        proc = run(typed)
        hint = f": did you mean {meant}? that exists" if meant else ""
        assert proc.returncode == 1 and error_lines(proc.stderr) == [
            f"error: {typed}: no such file or directory (base side{hint})"], proc.stderr
        assert proc.stdout == "" and not (tmp_path / "o").exists()
    proc = run("sample_data/bert-small_h100.json.gz")  # the name offered, pasted back
    assert proc.returncode == 0 and "E2E time 3.908 ms -> 3.496 ms" in proc.stdout, proc.stderr


def test_a_mistyped_input_with_a_leading_equals_names_the_near_name_without_it(tmp_path: Path) -> None:
    """compare() reads ``=PATH`` as PATH, as the loaders drop a leading ``=`` (what ``-bp =PATH`` leaves): the line
    names the path without it, and so must the near name it offers, a path to pass."""
    from msprof_compare import api

    (tmp_path / "bert-small_h100.json.gz").symlink_to(REPO / "sample_data" / "bert-small_h100.json.gz")
    typed = tmp_path / "bert-smal_h100.json.gz"
    with pytest.raises(ProfileError) as info:
        api.compare(f"={typed}", str(REPO / "sample_data" / "bert-small_mi300.json.gz"))
    assert str(info.value) == (f"{typed}: no such file or directory (base side: did you mean "
                               f"{tmp_path / 'bert-small_h100.json.gz'}? that exists)")


def test_a_typo_higher_up_the_path_names_the_near_folder(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo in a folder in the middle of the path (``runs/bert-smal/h100.json.gz``), or two levels above a job's
    rank folders, read only ``no such file or directory``: the last name's typo alone got "did you mean". The
    first missing name is matched among the folders where it is missing, the whole path named with it mended
    (``that exists``, or the mended folder where the rest is missing too), as typed; a name that differs by digits
    alone (``job8`` beside ``job7``), or a file of that name, mends nothing. The path offered, pasted back,
    compares."""
    runs = tmp_path / "runs"
    (runs / "bert-small").mkdir(parents=True)
    shutil.copy(SAMPLE_BASE, runs / "bert-small" / "h100.json.gz")
    (runs / "job7" / "level0" / "rank0_ascend_pt").mkdir(parents=True)
    (runs / "bert-smol").write_text("")  # a file: no folder for a path to go on through
    monkeypatch.chdir(tmp_path)
    for typed, hint in (
            ("runs/bert-smal/h100.json.gz", "did you mean runs/bert-small/h100.json.gz? that exists"),
            ("=runs/bert-smal/h100.json.gz", "did you mean runs/bert-small/h100.json.gz? that exists"),
            ("./runs/bert-smal/h100.json", "did you mean ./runs/bert-small/h100.json? ./runs/bert-small exists"),
            (f"{runs}/bert-smal/h100.json.gz", f"did you mean {runs}/bert-small/h100.json.gz? that exists"),
            ("runs/jobb7/level0/", "did you mean runs/job7/level0/? that exists"),
            ("runs/jobb7/level0/rank0_ascend_pt", "did you mean runs/job7/level0/rank0_ascend_pt? that exists"),
            ("runs/job7/levle0/rank0_ascend_pt", "did you mean runs/job7/level0/rank0_ascend_pt? that exists"),
            # two neighbouring letters swapped in a short name: one slip (``loaders._near_entry``), where difflib's
            # ratio, 0.75, named nothing
            ("rnus/job7/level0", "did you mean runs/job7/level0? that exists"),
            ("runs/job8/level0", None), ("runs/bert-smok/h100.json.gz", None)):
        code, _, err = run_inproc(capsys, "-bp", typed, "-d", str(SAMPLE_BASE), "-o", "o")
        aside = f"base side: {hint}" if hint else "base side"
        assert (code, error_lines(err)) == (1, [f"error: {typed.lstrip('=')}: no such file or directory ({aside})"])
    code, out, err = run_inproc(capsys, "-bp", "runs/bert-small/h100.json.gz", "-d", str(SAMPLE_BASE), "-o", "o",
                                "--enable_profiling_compare")
    assert code == 0 and "E2E time" in out, err


def test_blank_or_empty_path_says_which_and_what(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A path of blanks read ``error:  : no such file or directory``, a path with a stray trailing space looked
    like the existing folder it names, and an empty path (``-d "$UNSET"``) did not say which of the two it was.
    The line keeps the path as it is (a path copied from it must exist) and says what cannot be seen."""
    code, _out, err = run_inproc(capsys, "-d", " ", "-bp", str(SAMPLE_BASE), "-o", str(tmp_path))
    assert code == 1 and assert_one_error(err) == ("error:  : no such file or directory (comparison side: the path "
                                                   "is only whitespace: ' ')"), err
    code, _out, err = run_inproc(capsys, "-d", f"{SAMPLE_COMP} ", "-bp", str(SAMPLE_BASE), "-o", str(tmp_path))
    assert code == 1 and assert_one_error(err) == (f"error: {SAMPLE_COMP} : no such file or directory (comparison "
                                                   f"side: the path "
                                                   f"ends with whitespace: '{SAMPLE_COMP} ')"), err
    code, _out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", " x.json ", "-o", str(tmp_path))
    assert code == 1 and assert_one_error(err) == ("error:  x.json : no such file or directory (base side: the path "
                                                   "starts and "
                                                   "ends with whitespace: ' x.json ')"), err
    code, _out, err = run_inproc(capsys, "-d", str(tmp_path / "missing"), "-bp", str(SAMPLE_BASE))
    assert code == 1 and assert_one_error(err) == (f"error: {tmp_path / 'missing'}: no such file or directory "
                                                   "(comparison side)"), err
    code, _out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", "", "-o", str(tmp_path))
    assert code == 1 and assert_one_error(err) == ("error: The path is empty. Please enter a valid path. (the base "
                                                   "path: -bp, or the first path of performance_compare.py)"), err
    code, _out, err = run_inproc(capsys, "-d", "=", "-bp", str(SAMPLE_BASE), "-o", str(tmp_path))
    assert code == 1 and assert_one_error(err) == ("error: The path is empty. Please enter a valid path. (the "
                                                   "comparison path: -d, or the second path of "
                                                   "performance_compare.py)"), err
    assert list(tmp_path.iterdir()) == []


def test_refused_suffix_says_why(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A trace whose suffix is in upper case (``T.JSON.GZ``, copied through another system) or an archive
    (``dlrm_kineto.tar.gz``, as param ships its traces) read only "Invalid profiling path suffix ... (expected a
    *.json / *.json.gz trace, ...)", which the file seems to be. Suffixes stay case-sensitive, as in the
    original; the hint says so, or that the archive must be unpacked."""
    generic = "(expected a *.json / *.json.gz trace, a profiler *.db or a profiling directory)"
    cases = {"T.JSON.GZ": "(the suffix is case-sensitive: rename it to end in .json, .json.gz or .db in lower case)",
             "trace.Json": "(the suffix is case-sensitive: rename it to end in .json, .json.gz or .db in lower case)",
             "ascend_pytorch_profiler_0.DB": "(the suffix is case-sensitive: rename it to end in .json, .json.gz or "
                                             ".db in lower case)",
             "dlrm_kineto.tar.gz": "(an archive: unpack it and pass the trace file, or the profiling directory, it "
                                   "holds)",
             "traces.zip": "(an archive: unpack it and pass the trace file, or the profiling directory, it holds)",
             "x.txt": generic, "trace.json.bak": generic}
    for name, hint in cases.items():
        bad = tmp_path / name
        bad.write_bytes(SAMPLE_BASE.read_bytes())
        code, _out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(bad), "-o", str(tmp_path / "o"))
        assert code == 1 and assert_one_error(err) == (f"error: {bad}: Invalid profiling path suffix: {name} "
                                                       f"(base side: {hint[1:]}")
    assert not (tmp_path / "o").exists()


def test_a_file_of_an_npu_export_names_its_profiling_directory(capsys: pytest.CaptureFixture,
                                                              tmp_path: Path) -> None:
    """``-d .../ASCEND_PROFILER_OUTPUT/kernel_details.csv`` (the file a new user opens first) read "expected a
    *.json / *.json.gz trace, a profiler *.db or a profiling directory", and its communication.json or the
    export's profiler_info_0.json "a profiler side file? pass the trace, or the profiling directory it belongs
    to", neither saying which directory; the hint now names the export's profiling directory, which compares. A
    JSON object elsewhere keeps the question."""
    npu = REPO / "tests" / "data" / "npu" / "rank0_ascend_pt"
    hint = f"(comparison side: a file of an NPU profiling export: pass the profiling directory it belongs to, {npu})"
    for name in ("kernel_details.csv", "memory_record.csv"):
        given = npu / "ASCEND_PROFILER_OUTPUT" / name
        code, _out, err = run_inproc(capsys, "-d", str(given), "-bp", str(npu), "-o", str(tmp_path / "o"))
        assert code == 1 and assert_one_error(err) == (
            f"error: {given}: Invalid profiling path suffix: {name} {hint}"), err
    for given in (npu / "ASCEND_PROFILER_OUTPUT" / "communication.json", npu / "profiler_info_0.json",
                  npu / "profiler_metadata.json"):
        code, _out, err = run_inproc(capsys, "-d", str(given), "-bp", str(npu), "-o", str(tmp_path / "o"))
        assert code == 1 and assert_one_error(err) == (
            f"error: {given}: not a trace: a JSON object without traceEvents {hint}"), err
    alone = tmp_path / "profiler_info_0.json"
    shutil.copyfile(npu / "profiler_info_0.json", alone)
    code, _out, err = run_inproc(capsys, "-d", str(alone), "-bp", str(npu), "-o", str(tmp_path / "o"))
    assert code == 1 and assert_one_error(err) == (
        f"error: {alone}: not a trace: a JSON object without traceEvents (comparison side: a profiler side file? "
        f"pass the trace, or "
        "the profiling directory it belongs to)"), err
    assert not (tmp_path / "o").exists()
    code, _out, err = run_inproc(capsys, "-d", str(npu), "-bp", str(npu), "-o", str(tmp_path / "o"),
                                 "--enable_profiling_compare")
    assert code == 0, err  # the directory named is the input to pass


def test_error_line_names_the_path_as_it_is(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Runs of spaces in a path stay in the error line (a path copied from it must exist); only line
    breaks of a message are joined."""
    folder = tmp_path / "two  spaces   here"
    folder.mkdir()
    bad = folder / "truncated.json"
    bad.write_bytes(gzip.decompress(SAMPLE_BASE.read_bytes())[:5000])
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(bad), "-o", str(tmp_path / "out"))
    assert code == 1, err
    line = assert_one_error(err)
    assert str(bad) in line, line
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "--gpu_flow_cat", "  ")
    assert code == 2, err
    assert "'  '" in assert_one_error(err)
    # a leading space is part of the name (" x.json" is not "x.json"); a line break in a name is escaped
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", " x.json")
    assert code == 1 and assert_one_error(err).startswith("error:  x.json: "), err
    odd = tmp_path / "a\nb\u2028c"
    odd.mkdir()
    (odd / "t.json").write_bytes(b"")
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(odd / "t.json"), "--force")
    assert code == 1, err
    assert "a\\nb\\u2028c/t.json: " in assert_one_error(err), err
    # a file found inside a given folder is named by the loader, not by the path check: escaped there too
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "a\nb.pt.trace.json").write_bytes(b'{"traceEvents": [')
    code, out, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(folder))
    assert code == 1 and f"error: {folder}/a\\nb.pt.trace.json: truncated JSON" in assert_one_error(err), err


def test_one_line_joins_line_breaks_only() -> None:
    from msprof_compare.textsafe import one_line

    assert one_line("a  b\n   c\r\n\n d\te \n") == "a  b c d\te "
    assert one_line("x\u2028y") == "x\u2028y"  # escaped when written, as any control character
    assert one_line(ValueError("  lead  ")) == "  lead  "


def test_internal_error_traceback_only_with_debug(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                                  tmp_out: Path) -> None:
    import msprof_compare.api as api

    def boom(*_a, **_k):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(api, "cli_compare", boom)
    args = ["-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(tmp_out)]
    code, _, err = run_inproc(capsys, *args)
    assert code == 1
    # the line says how to get the traceback; with --debug, which prints it, it does not
    assert assert_one_error(err) == "error: internal error: kaboom second line (run with --debug for the traceback)"
    code, _, err = run_inproc(capsys, *args, "--debug")
    assert code == 1 and "Traceback" in err and "RuntimeError: kaboom" in err
    assert error_lines(err) == ["error: internal error: kaboom second line"]
    assert list(tmp_out.iterdir()) == []


def test_out_of_memory_names_the_input_or_the_folder(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                                     tmp_out: Path) -> None:
    """Memory running out while one input is decompressed names that input; while the workbook is written, the
    output folder (which is left empty); both were the bare "out of memory" line, which said neither."""
    from msprof_compare.loaders import traceio
    from msprof_compare.report import excel

    real_gunzip = traceio._gunzip

    def gunzip(path: str, *args):
        if path == str(SAMPLE_COMP):
            raise MemoryError
        return real_gunzip(path, *args)

    monkeypatch.setattr(traceio, "_gunzip", gunzip)
    args = ("-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(tmp_out))
    advice = "; a comparison needs roughly 5 times the larger input plus the size of the other (this pair: about "
    code, _, err = run_inproc(capsys, *args)
    assert code == 1 and assert_one_error(err).startswith(f"error: {SAMPLE_COMP}: out of memory while loading it "
                                                          f"(comparison side)"
                                                          + advice), err
    monkeypatch.setattr(traceio, "_gunzip", real_gunzip)

    def hungry(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(excel, "_write_sheet", hungry)
    code, _, err = run_inproc(capsys, *args)
    assert code == 1 and assert_one_error(err).startswith(f"error: {tmp_out}: out of memory while writing the "
                                                          f"workbook{advice}"), err
    assert list(tmp_out.iterdir()) == []


@pytest.mark.parametrize(("text", "oom"), [
    ("/venv/pandas/_libs/tslibs/dtypes.cpython-311-x86_64-linux-gnu.so: failed to map segment from shared object",
     True),
    ("libgomp.so.1: cannot allocate memory in static TLS block", False),
    ("No module named 'pandas'", False)])
def test_a_library_that_cannot_be_mapped_is_out_of_memory(text: str, oom: bool, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture, tmp_out: Path) -> None:
    """Under ``ulimit -v`` pandas' extension modules (imported on first use) fail with the dynamic loader's
    ImportError (first text, seen at ulimit -v 150000): that is out of memory, not an internal error."""
    import msprof_compare.api as api

    def unmappable(*_a, **_k):
        raise ImportError(text)

    monkeypatch.setattr(api, "cli_compare", unmappable)
    code, _, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(tmp_out))
    line = assert_one_error(err)
    assert code == 1 and line.startswith("error: out of memory: " if oom else f"error: internal error: {text}"), err


def test_out_of_memory_is_one_line_with_advice(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                               tmp_out: Path) -> None:
    import msprof_compare.api as api

    def hungry(*_a, **_k):
        raise MemoryError

    from msprof_compare.loaders import pair

    monkeypatch.setattr(api, "cli_compare", hungry)
    args = ("-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(tmp_out))
    head = "error: out of memory: a comparison needs roughly 5 times the larger input plus the size of the other"
    tail = "; free memory, or compare less, e.g. --enable_profiling_compare alone"
    code, _, err = run_inproc(capsys, *args)  # the bundled .json.gz pair counts decompressed (1.1 + 1.2 MB)
    small, large = sorted(len(gzip.decompress(p.read_bytes())) for p in (SAMPLE_BASE, SAMPLE_COMP))
    estimate = f" (this pair: about {(5 * large + small) / 1e6:,.0f} MB)"
    assert code == 1 and assert_one_error(err) == head + estimate + tail
    sizes = {str(SAMPLE_BASE): 1_000_000_000, str(SAMPLE_COMP): 400_000_000}
    monkeypatch.setattr(pair, "input_bytes", lambda path, **_: sizes[path])
    code, _, err = run_inproc(capsys, *args)
    assert code == 1 and assert_one_error(err) == head + " (this pair: about 5,400 MB)" + tail
    code, _, err = run_inproc(capsys, *args, "--debug")  # the advice still, after the traceback
    assert code == 1 and "Traceback" in err and "MemoryError" in err
    assert error_lines(err) == [head + " (this pair: about 5,400 MB)" + tail]
    assert list(tmp_out.iterdir()) == []


def test_out_of_memory_estimate_counts_the_side_files_the_run_reads(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture, samples: Path,
                                                                   tmp_path: Path) -> None:
    """The estimate follows the README's budget rule: an NPU text export counts trace_view.json and the side files
    the run's comparisons read, as the loading notice does. It counted all five whatever the run: here 5 MB
    added to operator_memory.csv, which an --enable_profiling_compare run never reads, made it 30 MB larger.
    Sizes by os.path.getsize."""
    import msprof_compare.api as api

    npu = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", npu)
    for root, dirs, _ in os.walk(npu):  # the samples are read-only, and copytree copies their modes
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
    out = npu / "ASCEND_PROFILER_OUTPUT"
    (out / "operator_memory.csv").unlink()
    (out / "operator_memory.csv").write_bytes(b"x" * 5_000_000)

    def hungry(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(api, "cli_compare", hungry)
    read = sum(os.path.getsize(out / n) for n in ("trace_view.json", "kernel_details.csv", "memory_record.csv",
                                                    "communication.json"))
    code, _, err = run_inproc(capsys, "-d", str(npu), "-bp", str(npu), "--enable_profiling_compare",
                              "-o", str(tmp_path / "out"))
    assert code == 1 and f"(this pair: about {6 * read / 1e6:,.0f} MB)" in assert_one_error(err), err


def test_other_msprof_analyze_commands_are_named_as_absent(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["cluster", "-d", "x"])
    line = assert_one_error(capsys.readouterr().err)
    assert info.value.code == 2
    assert line == ("error: No such command 'cluster'. This msprof-analyze provides only 'compare'; the original's "
                    "other commands (cluster, advisor, ...) are not part of it (see 'msprof-analyze --help')")
    with pytest.raises(SystemExit) as info:  # python -m msprof_compare is msprof-analyze under another name
        cli.analyze_main(["advisor"], prog="python -m msprof_compare")
    line = assert_one_error(capsys.readouterr().err)
    assert info.value.code == 2 and "This msprof-analyze provides only 'compare'" in line


def test_subprocess_exit_codes_and_single_error_line(tmp_path: Path) -> None:
    usage, missing, script = run_faces(
        (ANALYZE, "compare", "-d", str(SAMPLE_COMP)),
        (COMPARE, "-d", str(SAMPLE_COMP), "-bp", str(tmp_path / "nope.json"), "-o", str(tmp_path / "o")),
        ("script", str(tmp_path / "nope.json")))
    assert usage.returncode == 2 and assert_one_error(usage.stderr).startswith(
        "error: Missing option '--benchmark_profiling_path' / '-bp'.")  # the original's text (reference-1 §1.3)
    assert missing.returncode == 1 and "nope.json" in assert_one_error(missing.stderr)
    assert not (tmp_path / "o").exists()
    assert script.returncode == 2
    assert_one_error(script.stderr)


# --------------------------------------------------------------------------- end to end


def _read_sheets(path: str) -> dict[str, pd.DataFrame]:
    return read_xlsx(path, sheet_name=None, header=2)


def _generated(stderr: str) -> str:
    found = re.findall(r"\[INFO\] The comparison result file has been generated: (.+)$", stderr, re.M)
    assert len(found) == 1, stderr
    return found[0]


def test_sample_pair_api_and_kernel_sheets_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "o"
    proc = run_face(ANALYZE, "compare", "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(out),
                    "--enable_api_compare")
    assert proc.returncode == 0, proc.stderr
    assert not error_lines(proc.stderr) and "Traceback" not in proc.stderr
    for line in proc.stderr.splitlines():
        assert LOG_LINE.match(line), line
    path = _generated(proc.stderr)
    assert Path(path).parent == out and re.fullmatch(r"performance_comparison_result_\d{14}\.xlsx", Path(path).name)
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o640)
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["ApiCompare"]
    ws = wb["ApiCompare"]
    assert ws["C1"].value == f"Base Profiling: {SAMPLE_BASE}"
    assert ws["G1"].value == f"Comparison Profiling: {SAMPLE_COMP}"
    frame = _read_sheets(path)["ApiCompare"]
    assert list(frame.columns)[:6] == ["Order Id", "api name", "Total Duration(ms)", "Self Time(ms)",
                                       "Avg Duration(ms)", "Calls"]
    assert len(frame) > 10


def test_script_face_matches_cli(tmp_path: Path) -> None:
    a, b = tmp_path / "cli", tmp_path / "script"
    cli_run, script_run = run_faces(
        (COMPARE, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(a), "--enable_api_compare"),
        ("script", str(SAMPLE_BASE), str(SAMPLE_COMP), "-o", str(b), "--enable_api_compare"))
    assert cli_run.returncode == 0 and script_run.returncode == 0, script_run.stderr
    assert "The comparison task has been completed in a total time of" in script_run.stderr
    x, y = _read_sheets(_generated(cli_run.stderr)), _read_sheets(_generated(script_run.stderr))
    assert x.keys() == y.keys()
    for name in x:
        pd.testing.assert_frame_equal(x[name], y[name])


def test_log_level_from_environment(tmp_path: Path) -> None:
    proc, bad = run_faces(  # at once: the script's workbook goes to a folder of its own
        (COMPARE, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(tmp_path), "--enable_api_compare",
         {"MSPROF_ANALYZE_LOG_LEVEL": "ERROR"}),
        ("script", str(SAMPLE_BASE), str(SAMPLE_COMP), "-o", str(tmp_path / "script"), "--enable_api_compare",
         {"MSPROF_ANALYZE_LOG_LEVEL": "LOUD"}))
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(list(tmp_path.glob("performance_comparison_result_*.xlsx"))) == 1
    assert bad.returncode == 0 and bad.stderr.count("Ignoring MSPROF_ANALYZE_LOG_LEVEL='LOUD'") == 1


def test_sample_pair_full_run(tmp_path: Path) -> None:
    """The README's command: all comparisons on the bundled GPU pair (H100 base, MI300X comparison)."""
    proc = run_face(ANALYZE, "compare", "-d", "sample_data/bert-small_mi300.json.gz",
                    "-bp", "sample_data/bert-small_h100.json.gz", "-o", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and not error_lines(proc.stderr)
    assert "Model Profiling Time Distribution" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| GPU")]
    assert len(rows) == 2
    sheets = _read_sheets(_generated(proc.stderr))
    assert "OverallMetrics" in sheets
    ws = openpyxl.load_workbook(_generated(proc.stderr))["OverallMetrics"]
    assert ws["B1"].value == "Base Profiling: sample_data/bert-small_h100.json.gz"
    assert [str(r) for r in ws.merged_cells.ranges] and ws.freeze_panes == "B4"
    # the README shows this run's console output verbatim
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\n(\+-{10,}.*?)\n```", readme, re.S)
    assert block and block.group(1) == proc.stdout.rstrip("\n")


def _non_ascii_pair(root: Path) -> tuple[Path, Path, list[str]]:
    """The timesformer excerpt, and a copy whose operator names gain CJK / Cyrillic / Latin-1 letters."""
    base = REPO / "tests" / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
    doc = json.loads(base.read_text())
    names = []
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op" and e.get("name") in ("aten::linear", "aten::cat"):
            e["name"] += "_数据é_ядро"
            names.append(e["name"])
    comp = root / "non_ascii.json"
    comp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return base, comp, sorted(set(names))


#: The C locale without UTF-8 mode: Python's stdout is ASCII with errors="surrogateescape", which fails on
#: other letters just as "strict" does.
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "C locale"])
def test_console_encoding_without_those_letters(encoding: str, tmp_path: Path) -> None:
    """A console that cannot show a name (ASCII, C or Latin-1 locale, a Windows code page when redirected)
    gets it escaped; the run still succeeds and writes the workbook, and JSON on stdout stays valid JSON."""
    base, comp, names = _non_ascii_pair(tmp_path)
    assert names == ["aten::cat_数据é_ядро", "aten::linear_数据é_ядро"]
    env = C_LOCALE if encoding == "C locale" else {"PYTHONIOENCODING": encoding}
    encoding = "ascii" if encoding == "C locale" else encoding
    # both runs at once (the second writes JSON to stdout, no file): their starts overlap on a second core
    console, doc_run = (subprocess.Popen([sys.executable, "-c", COMPARE, "-d", str(comp), "-bp", str(base), *args],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env={**os.environ, "PYTHONPATH": str(REPO), **env}, cwd=REPO)
                        for args in (["-o", str(tmp_path)],
                                     ["-o", "-", "--output_format", "json", "--enable_operator_compare"]))
    proc, doc_proc = finish(console), finish(doc_run)
    stdout, stderr = proc.stdout.decode(encoding), proc.stderr.decode(encoding)
    assert proc.returncode == 0, stderr
    assert not error_lines(stderr) and "Traceback" not in stderr
    assert "aten::linear_\\u6570\\u636e" in stdout  # escaped, not dropped
    assert len(list(tmp_path.glob("performance_comparison_result_*.xlsx"))) == 1
    proc = doc_proc
    assert proc.returncode == 0, proc.stderr.decode(encoding)
    proc.stdout.decode("ascii")  # every non-ASCII letter went out as a JSON escape
    doc = json.loads(proc.stdout)
    assert all(name in json.dumps(doc, ensure_ascii=False) for name in names)


def test_npu_text_pair_console_matches_reference(samples: Path, reference_outputs: Path, tmp_path: Path) -> None:
    """Pair 1 of the reference outputs: our console table must be the original's, character for character."""
    base = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    comp = samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
    proc = run_face(ANALYZE, "compare", "-d", str(comp), "-bp", str(base), "-o", str(tmp_path),
                    "--enable_profiling_compare")
    assert proc.returncode == 0, proc.stderr
    text = (reference_outputs / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## 1\. npu-text-l1-vs-l2.*?Console output \(stdout, verbatim\):\n\n```\n(.*?)\n```", text, re.S)
    assert block is not None
    # The first table printed (title, header, base and comparison rows: 8 lines); more may follow it.
    table = [line for line in proc.stdout.splitlines() if line.startswith(("+", "|"))][:8]
    assert "\n".join(table) == block.group(1)
    ours = _read_sheets(_generated(proc.stderr))["OverallMetrics"]
    ref = read_xlsx(reference_outputs / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx",
                        sheet_name="OverallMetrics", header=2)
    assert ours["Index"].tolist() == ref["Index"].tolist()
    for col in ("Duration(ms)", "Duration(ms).1", "Diff Duration(ms)"):
        assert ours[col].tolist() == pytest.approx(ref[col].tolist(), abs=1e-3), col


def test_api_option_checks() -> None:
    """What the Python API accepts that the CLI parser would have refused before (reference-1 §1.3 messages)."""
    from msprof_compare.errors import UsageError
    from msprof_compare.options import build_options

    with pytest.raises(UsageError, match="unknown option"):
        build_options(enable_everything=True)
    with pytest.raises(UsageError, match="--max_kernel_num has to be an integer greater than 3 \\(got 'many'\\)"):
        build_options(max_kernel_num="many")
    with pytest.raises(UsageError, match="an integer greater than 3 \\(got 5.5\\)"):
        build_options(max_kernel_num=5.5)
    with pytest.raises(UsageError, match="an integer greater than 3 \\(got True\\)"):
        build_options(max_kernel_num=True)
    with pytest.raises(UsageError, match="--max_kernel_num has to be greater than 3"):
        build_options(max_kernel_num=3)
    with pytest.raises(UsageError, match="--max_kernel_num has to be greater than 3"):
        build_options(max_kernel_num=3, op_name_map="[1]")  # parses; rule 1 comes before rule 2
    # a literal that does not parse fails at argument-parsing time in the original, before rule 1
    with pytest.raises(UsageError, match="Invalid value for '--op_name_map'"):
        build_options(max_kernel_num=2, op_name_map="abc")
    # a Python value the API got is no literal to parse: rule 1, then rule 2
    with pytest.raises(UsageError, match="--max_kernel_num has to be greater than 3"):
        build_options(max_kernel_num=2, op_name_map=[1])
    with pytest.raises(UsageError, match="--op_name_map must be dict"):
        build_options(op_name_map=[1])
    assert build_options(max_kernel_num=5.0)[0].max_kernel_num == 5
    assert build_options(max_kernel_num="5")[0].max_kernel_num == 5
    with pytest.raises(UsageError, match="use_input_shape must be True or False \\(got 'no'\\)"):
        build_options(use_input_shape="no")  # a truthy string must not switch a flag on
    with pytest.raises(UsageError, match="force must be True or False \\(got 2\\)"):
        build_options(force=2)
    with pytest.raises(UsageError, match="--gpu_flow_cat must be text \\(got 5\\)"):
        build_options(gpu_flow_cat=5)
    np_true = build_options(enable_api_compare=np.bool_(True), disable_module=1, debug=None)[0]
    assert (np_true.enable_api_compare, np_true.disable_module, np_true.debug, np_true.enable_kernel_compare) \
        == (True, True, False, False)
    with pytest.raises(UsageError, match="exceeded the maximum value 200"):
        build_options(op_name_map={"a" * 201: "b"})
    assert build_options(op_name_map={"a" * 200: "b"})[0].op_name_map == {"a" * 200: "b"}
    # an empty --op_name_map (``--op_name_map "$MAP"`` with MAP unset) is refused, as every option's empty value
    # but those the original defaults to "" (test_cli_option_rules.py::test_an_empty_value_is_refused_on_every_face)
    assert build_options(op_name_map=None)[0].op_name_map == {}
    with pytest.raises(UsageError, match=r"^Invalid param, --op_name_map is empty \("):
        build_options(op_name_map="")
    opts, warnings = build_options(use_kernel_type=True, enable_profiling_compare=True)
    assert warnings == ["The use_kernel_type parameter is invalid because it only takes effect when "
                        "enable_kernel_compare is enabled."]
    assert build_options(use_kernel_type=True)[1] == []  # no --enable_*: every comparison, kernel compare included


def test_api_takes_path_objects(tmp_path: Path) -> None:
    """``compare`` and the writers take ``pathlib.Path`` (and bytes) as well as text; anything else is a
    usage error, not an AttributeError."""
    from msprof_compare import compare
    from msprof_compare.errors import UsageError

    by_text = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_profiling_compare=True)
    by_path = compare(SAMPLE_BASE, os.fsencode(SAMPLE_COMP), enable_profiling_compare=True)
    assert by_path.base.path == str(SAMPLE_BASE) and by_path.comparison.path == str(SAMPLE_COMP)
    assert by_path.sheet_names == by_text.sheet_names == ["Summary", "OverallMetrics"]
    for name in by_text.sheet_names:
        pd.testing.assert_frame_equal(by_path.sheet(name), by_text.sheet(name))
    assert Path(by_path.to_excel(tmp_path / "x")).parent == tmp_path / "x"
    assert by_path.to_json(tmp_path / "r.json") == str(tmp_path / "r.json")
    with pytest.raises(UsageError, match="base must be a path .* not NoneType"):
        compare(None, SAMPLE_COMP)
    with pytest.raises(UsageError, match="comparison must be a path .* not int"):
        compare(SAMPLE_BASE, 3)


def test_api_is_safe_across_threads() -> None:
    """Comparisons running at once in threads (a service, a notebook fanning out ranks) give the same
    sheets as one after another: no module-level state is shared between runs."""
    from concurrent.futures import ThreadPoolExecutor

    from msprof_compare import compare

    npu = REPO / "tests" / "data" / "npu" / "rank0_ascend_pt"
    db1, db2 = REPO / "tests" / "data" / "db" / "l1", REPO / "tests" / "data" / "db" / "l2"
    pairs = [(SAMPLE_BASE, SAMPLE_COMP), (npu, npu), (SAMPLE_BASE, npu), (db1, db2), (db2, npu)] * 2
    one_by_one = [compare(b, c) for b, c in pairs]
    with ThreadPoolExecutor(len(pairs)) as pool:
        at_once = list(pool.map(lambda p: compare(*p), pairs))
    for a, b in zip(one_by_one, at_once, strict=True):
        assert a.sheet_names == b.sheet_names and a.console_table() == b.console_table()
        for name in a.sheet_names:
            pd.testing.assert_frame_equal(a.sheet(name), b.sheet(name))


def test_path_that_is_not_utf8(tmp_path: Path) -> None:
    """A file name with bytes that are not UTF-8 (Linux allows them) is read, and shown in the reports
    with \\xNN escapes instead of failing the workbook or JSON writer."""
    d = os.fsencode(tmp_path) + b"/bad\xffname"
    try:
        os.mkdir(d)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    base = os.fsdecode(d + b"/base.json.gz")
    Path(base).write_bytes(SAMPLE_BASE.read_bytes())
    out = tmp_path / "out"
    proc = run_face(COMPARE, "-bp", base, "-d", str(SAMPLE_COMP), "-o", str(out), "--enable_profiling_compare",
                    "--output_format", "xlsx,json")
    assert proc.returncode == 0, proc.stderr
    shown = f"{tmp_path}/bad\\xffname/base.json.gz"
    ws = openpyxl.load_workbook(next(out.glob("*.xlsx")))["OverallMetrics"]
    assert ws["B1"].value == f"Base Profiling: {shown}"
    doc = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    assert doc["base"]["path"] == shown


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "console table"])
def test_a_reader_that_stops_early(json_out: bool, tmp_path: Path) -> None:
    """``-o - | head`` or ``... | head -0``: the reader closing the pipe is not an error (exit 0, no error
    line, no traceback), and the workbook of a console run is still written."""
    env = {k: v for k, v in os.environ.items() if k != "MSPROF_ANALYZE_LOG_LEVEL"}
    env["PYTHONPATH"] = str(REPO)
    out = "-" if json_out else str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", COMPARE, "-bp", str(SAMPLE_BASE), "-d", str(SAMPLE_COMP), "-o", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    if json_out:
        assert proc.stdout.read(50)  # the document is larger than a pipe buffer: the writer is blocked now
    proc.stdout.close()  # the console table has not been printed yet: the compare takes longer
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=300) == 0, err
    assert not error_lines(err) and "Traceback" not in err and "Exception ignored" not in err
    assert "Cannot print" not in err  # a reader that stopped wants no more: no warning about the table either
    if not json_out:
        assert len(list(tmp_path.glob("performance_comparison_result_*.xlsx"))) == 1


# --------------------------------------------------------------------------- output targets, both reports


def _pair_args(*extra: str) -> list[str]:
    return ["-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "--enable_profiling_compare", *extra]


def test_json_target_symlink_refused_before_loading(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A symlinked .json target is refused like a symlinked .xlsx (it wrote lnk_1.json), and so is the
    workbook's derived name of -o run.json: before the load, so no console table is printed first."""
    (tmp_path / "target.json").write_text("{}")
    (tmp_path / "lnk.json").symlink_to(tmp_path / "target.json")
    code, out, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "lnk.json"), "--output_format", "json"))
    assert code == 2 and "symbolic link" in assert_one_error(err) and out == ""
    (tmp_path / "run.xlsx").symlink_to(tmp_path / "target.json")
    code, out, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "run.json")))
    assert code == 2 and "run.xlsx is a symbolic link" in assert_one_error(err) and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lnk.json", "run.xlsx", "target.json"]


def test_both_reports_share_one_name(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """-o run.json with an existing run.xlsx: run_1.xlsx and run_1.json (they were run_1.xlsx and run.json);
    a directory target gives both files one timestamp."""
    (tmp_path / "run.xlsx").write_text("x")
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "run.json"), "--output_format", "xlsx,json"))
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.xlsx", "run_1.json", "run_1.xlsx"]
    out_dir = tmp_path / "d"
    assert run_inproc(capsys, *_pair_args("-o", str(out_dir), "--output_format", "xlsx,json"))[0] == 0
    stems = {p.stem for p in out_dir.iterdir()}
    assert len(stems) == 1 and len(list(out_dir.iterdir())) == 2


def test_api_targets_options_and_gate(tmp_path: Path, capsys: pytest.CaptureFixture,
                                      caplog: pytest.LogCaptureFixture) -> None:
    """A target naming the other report writes this report of its stem with a warning, as the CLI's -o does
    (``to_excel("run.json")`` was refused while ``-o run.json`` wrote run.xlsx): one path serves ``to_excel`` and
    ``to_json`` as it serves -o with both formats, which writes the same two names. The API takes back the options
    its JSON recorded, and checks the gate's percentage; the gate works whichever comparisons ran."""
    from msprof_compare import compare
    from msprof_compare.errors import UsageError

    r = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_api_compare=True)
    api, cli_dir = tmp_path / "api", tmp_path / "cli"
    api.mkdir()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert r.to_excel(str(api / "c.json")) == str(api / "c.xlsx")
        assert r.to_json(api / "c.json") == str(api / "c.json")
        assert r.to_json(str(api / "d.XLSX")) == str(api / "d.json")
    assert [m for m in caplog.messages if "names a" in m] == [
        f"to_excel: {api / 'c.json'} names a .json file, so the workbook is written as {api / 'c.xlsx'}; to_json "
        "writes the JSON report.",
        f"to_json: {api / 'd.XLSX'} names a .xlsx file, so the JSON report is written as {api / 'd.json'}; to_excel "
        "writes the workbook."]
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(cli_dir / "c.json"), "--output_format", "xlsx,json"))
    assert code == 0, err
    assert sorted(p.name for p in cli_dir.iterdir()) == ["c.json", "c.xlsx"]
    assert sorted(p.name for p in api.iterdir()) == ["c.json", "c.xlsx", "d.json"]
    # a folder named like a report is a folder; ".json" names no file
    (tmp_path / "box.json").mkdir()
    assert Path(r.to_excel(tmp_path / "box.json")).parent == tmp_path / "box.json"
    with pytest.raises(UsageError, match="names a .json file"):
        r.to_excel(str(tmp_path / ".json"))
    doc = json.loads(Path(r.to_json(str(tmp_path))).read_text())
    again = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), **doc["options"])
    assert again.sheet_names == r.sheet_names
    for bad in (float("nan"), "3%%", None, -5, True):
        with pytest.raises(UsageError):
            r.regression_gate(bad)
    assert r.regression_gate("3%") == r.regression_gate(3)  # a percent sign is allowed, as on the command line
    with pytest.raises(UsageError, match="fail_on_regression"):
        compare(str(SAMPLE_BASE), str(SAMPLE_COMP), fail_on_regression=True)
    # H100 -> MI300 is 10.5 % faster: the same answer as a run made for the gate
    gated = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_api_compare=True, fail_on_regression="3")
    assert r.regression_gate(3)[0] == gated.regression_gate(3)[0] == 0
    assert r.regression_gate(3)[1] == gated.regression_gate(3)[1]


def test_api_result_frames_and_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The result's frames are the caller's to change (the Summary sheet and the JSON read their own);
    to_excel takes bytes paths as compare() does, and refuses "-" (stdout is for JSON) without making a
    folder named "-"."""
    from msprof_compare import compare
    from msprof_compare.errors import UsageError

    r = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_profiling_compare=True)
    def document(name: str) -> dict:  # the time it was written aside: the two may straddle a second
        doc = json.loads(Path(r.to_json(str(tmp_path / name))).read_text())
        assert doc.pop("generated_at")
        return doc

    before = document("a.json")
    for frame in (r.waterfall, r.contributors, r.guards):
        del frame[frame.columns[-1]]
        frame.columns = [str(c).upper() for c in frame.columns]
    assert len(r.waterfall) and "Step" in r.waterfall.columns
    assert document("b.json") == before
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="standard output"):
        r.to_excel("-")
    assert not (tmp_path / "-").exists()
    written = r.to_excel(os.fsencode(tmp_path / "c.xlsx"))
    assert written == str(tmp_path / "c.xlsx") and Path(written).is_file()


def test_api_bad_paths_raise_the_documented_errors(tmp_path: Path) -> None:
    """compare() promises ProfileError for bad data and UsageError for bad options: a NUL in a path (no
    command line can hold one, a caller's string can) raised a bare ValueError from the size probe, and
    to_excel / to_json of a NUL path, None or a number a ValueError or TypeError. Nothing is written."""
    from msprof_compare import compare
    from msprof_compare.errors import ProfileError, UsageError

    for pair in (("a\0b", str(SAMPLE_COMP)), (str(SAMPLE_BASE), "a\0b")):
        with pytest.raises(ProfileError, match="control characters"):
            compare(*pair)
    r = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_profiling_compare=True)
    for write in (r.to_excel, r.to_json):
        with pytest.raises(UsageError, match="contains a NUL character"):
            write(str(tmp_path / "x\0y"))
        # after a "~" the NUL is in a user name: expanding it raises ValueError (pwd), which the scan of the
        # target's new names (for a blank-edged name) stops at, so the refusal is still output_target's one line
        for home in ("~zz\0q", "~zz\0q/r.xlsx"):
            with pytest.raises(UsageError) as info:
                write(home)
            assert str(info.value).endswith(": the path contains a NUL character"), info.value
        for bad in (None, 123):
            with pytest.raises(UsageError, match=f"output must be a path .*not {type(bad).__name__}$"):
                write(bad)
    assert list(tmp_path.iterdir()) == []


def test_api_gate_leaves_the_result_as_compared(tmp_path: Path) -> None:
    """The gate of a result compared without the time breakdown makes one for its verdict only: it used to
    store its E2E frame in the result, so a later to_json wrote E2E figures (3907825 -> 3495976 ns) beside an
    empty waterfall, a document no run writes."""
    from msprof_compare import compare

    r = compare(str(SAMPLE_BASE), str(SAMPLE_COMP), enable_api_compare=True)

    def document(name: str) -> dict:
        doc = json.loads(Path(r.to_json(str(tmp_path / name))).read_text())
        doc.pop("generated_at")
        return doc

    before = document("a.json")
    assert before["summary"]["e2e"] is None
    code, message = r.regression_gate(5)
    # H100 3907825 ns, MI300 3495976 ns: -411849 ns
    assert code == 0 and "3.908 ms -> 3.496 ms (-0.412 ms, -10.54%)" in message
    assert "e2e" not in r.frames and document("b.json") == before


def test_help_option_names_in_a_fixed_order() -> None:
    """click keeps the help option names in a set: --help listed "-h, -H" or "-H, -h" by the hash seed."""
    # one interpreter per hash seed (the seed is read at start-up) runs the three helps one after another
    faces = [("analyze_main", ["compare", "--help"]), ("analyze_main", ["--help"]), ("compare_main", ["--help"])]
    code = f"""
import sys
from msprof_compare import entry
for face, args in {faces!r}:
    sys.argv = [sys.argv[0], *args]
    try:
        getattr(entry, face)()
    except SystemExit as exc:
        assert exc.code in (0, None), (face, args, exc.code)
    print("-- end of help --", flush=True)
"""
    outs = []
    for seed in ("1", "2", "3", "4"):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                              env=dict(os.environ, PYTHONHASHSEED=seed))
        assert proc.returncode == 0, proc.stderr
        helps = proc.stdout.split("-- end of help --\n")
        assert len(helps) == len(faces) + 1 and helps[-1] == "", proc.stdout[-2000:]
        outs += [next(line.split()[0:3] == ["-h,", "-H,", "--help"] for line in text.splitlines() if "--help" in line)
                 for text in helps[:-1]]
    assert outs == [True] * 12


def test_script_help_with_capital_h() -> None:
    proc = run_face("script", "-H")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: performance_compare.py")


CTRL_C_DURING_IMPORT = """
import os, signal, sys

class CtrlCWhileLoading:  # Ctrl-C arrives while the CLI (typer, pandas, numpy) is being imported
    def find_spec(self, name, path, target=None):
        if name == "msprof_compare.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCWhileLoading())
from msprof_compare.entry import {face}
{face}()
"""


@pytest.mark.parametrize("face", ["analyze_main", "compare_main", "script_main"])
def test_ctrl_c_while_starting_is_one_line(face: str) -> None:
    """The entry points install their Ctrl-C handling before the heavy imports (README: no traceback)."""
    proc = run_face(CTRL_C_DURING_IMPORT.format(face=face), "-d", "x", "-bp", "y")
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")


CTRL_C_IN_THE_PACKAGE = """
import os, runpy, signal, sys

class CtrlCInThePackage:  # Ctrl-C while the package's own __init__ is imported, before the entry point's handler
    def find_spec(self, name, path, target=None):
        if name == "msprof_compare.errors":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCInThePackage())
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_ctrl_c_while_the_script_imports_the_package_is_one_line() -> None:
    """performance_compare.py puts its own quiet handler in place before it imports the package (whose __init__ runs
    before the entry point can), and the entry point still hands Ctrl-C back to the CLI after it (a later Ctrl-C
    is the CLI's, which cleans up a half-written report: test_ctrl_c_during_the_compare_is_130)."""
    proc = run_face(CTRL_C_IN_THE_PACKAGE, str(REPO / "performance_compare.py"), "x", "y")
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n")


CTRL_C_AT = """
import atexit, os, signal, sys
from msprof_compare import cli
if {where!r} == "logging":  # the script face sets up its logging before its argument parsing and its run
    real = cli.run_logging
    def run_logging(*a, **k):
        os.kill(os.getpid(), signal.SIGINT)
        return real(*a, **k)
    cli.run_logging = run_logging
else:  # after the run, while Python shuts down
    atexit.register(os.kill, os.getpid(), signal.SIGINT)
from msprof_compare.entry import script_main
sys.exit(script_main())
"""


@pytest.mark.parametrize("where", ["logging", "exit"])
def test_ctrl_c_outside_the_run_is_one_line(where: str, tmp_path: Path) -> None:
    """Ctrl-C after the entry point handed Ctrl-C back to the CLI but before the CLI's own handling (the script's
    logging set-up and argument parsing), or once the run is over, printed a traceback."""
    proc = run_face(CTRL_C_AT.format(where=where), str(SAMPLE_BASE), str(SAMPLE_COMP), "--enable_profiling_compare",
                    "-o", str(tmp_path / "out"))
    assert "Traceback" not in proc.stderr and proc.returncode == 130, proc.stderr
    assert proc.stderr.endswith("error: interrupted\n"), proc.stderr
    assert where == "exit" or not (tmp_path / "out").exists()


CTRL_C_ANY_TIME = """
import os, sys

class Ready:  # says when the entry point starts importing the CLI: its Ctrl-C handling is in place
    def find_spec(self, name, path, target=None):
        if name == "msprof_compare.cli":
            os.write(int(sys.argv.pop(1)), b"r")
            sys.meta_path.remove(self)
        return None

sys.meta_path.insert(0, Ready())
from msprof_compare.entry import {face}
sys.exit({face}())
"""


def test_ctrl_c_at_any_time_is_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C at several moments of a whole run (imports, parsing, loading, writing, exit): never a traceback,
    only status 130 with the one line or a finished run (the moments are not pinned: the machine sets them).
    In the last microseconds of interpreter shutdown Python has put SIGINT back to the default action, so a
    Ctrl-C there ends the finished run by the signal: silent, and status 130 to a shell as well (seen under load)."""
    pair = [str(SAMPLE_BASE), str(SAMPLE_COMP)]
    env = {k: v for k, v in os.environ.items() if k != "MSPROF_ANALYZE_LOG_LEVEL"}
    env["PYTHONPATH"] = str(REPO)
    for n, delay in enumerate((0.0, 0.02, 0.08, 0.2, 0.4, 0.8)):
        face, args = (("script_main", pair) if n % 2 else
                      ("compare_main", ["-d", pair[1], "-bp", pair[0]]))
        read, write = os.pipe()
        proc = subprocess.Popen([sys.executable, "-c", CTRL_C_ANY_TIME.format(face=face), str(write), *args,
                                 "--enable_profiling_compare", "-o", str(tmp_path / str(n))],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, pass_fds=[write],
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        os.close(write)
        try:
            assert os.read(read, 1) == b"r", proc.communicate(timeout=60)[1]
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        finally:
            os.close(read)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert "Traceback" not in err and "Exception ignored" not in err, (delay, err)
        if proc.returncode == -signal.SIGINT:  # the run had finished; nothing printed after it
            assert not err.endswith("error: interrupted\n"), err
            assert list((tmp_path / str(n)).glob("performance_comparison_result_*.xlsx")), err
            continue
        assert proc.returncode in (0, 130) and (proc.returncode == 0) != err.endswith("error: interrupted\n"), err


def test_package_import_is_light() -> None:
    proc = run_face("import sys, msprof_compare, msprof_compare.entry; print('pandas' in sys.modules)")
    assert proc.stdout.strip() == "False", proc.stderr


TYPE_HINTS = """
import inspect, sys, typing
import msprof_compare
from msprof_compare.entry import analyze_main
sys.argv = ["msprof-analyze", "compare", "--help"]
try:
    analyze_main()
except SystemExit:
    pass
print("pandas after --help:", "pandas" in sys.modules)
hints = typing.get_type_hints(msprof_compare.compare)
from msprof_compare import api
assert hints["return"] is api.CompareResult, hints
objs = [getattr(api, n) for n in dir(api) if getattr(getattr(api, n), "__module__", "") == api.__name__]
objs += [f.fget if isinstance(f, property) else f for c in (api.CompareResult, api.RunContext)
         for f in vars(c).values() if inspect.isfunction(f) or isinstance(f, property)]
assert len(objs) > 15, objs
for obj in objs:
    typing.get_type_hints(obj)
print("hints resolve")
"""


def test_type_hints_resolve_in_a_fresh_interpreter() -> None:
    """typing.get_type_hints(msprof_compare.compare) failed before the first call: its return type named
    CompareResult, which the package imports only on first use (so --help loads no pandas, checked too)."""
    proc = run_face(TYPE_HINTS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-2:] == ["pandas after --help: False", "hints resolve"], proc.stdout


def test_output_target_edge_cases(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """'-o run.json/' is a directory (it was refused as naming a JSON file); a number cell that only
    float() reads ("1_5", full-width digits) is junk for the float column too, counted in the warning."""
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "d1.json") + "/"))
    assert code == 0, err
    assert [p.name for p in (tmp_path / "d1.json").iterdir()][0].endswith(".xlsx")
    assert run_inproc(capsys, *_pair_args("-o", str(tmp_path / "d2.json") + "/."))[0] == 0
    assert (tmp_path / "d2.json").is_dir()
    from msprof_compare.loaders.ascend_text import read_kernel_details

    f = tmp_path / "kernel_details.csv"
    f.write_text("Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n"
                 "50,a,Add,AI_CORE,1736408883732241.5\t,\uff11\uff12\n50,b,Add,AI_CORE,1736408883732242.5\t,1_5\n"
                 "50,c,Add,AI_CORE,1736408883732243.5\t,2.5\n")
    warnings: list[str] = []
    kd = read_kernel_details(str(f), warnings)
    assert kd["Duration(us)"].tolist()[2] == 2.5 and np.isnan(kd["Duration(us)"].tolist()[:2]).all()
    assert kd["dur"].tolist() == [0, 0, 2500] and "2 Duration(us) value(s) are not numbers" in warnings[0]


def test_ignored_ctrl_c_stays_ignored() -> None:
    """A background job inherits Ctrl-C ignored: the entry points leave it so while they load."""
    code = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            + CTRL_C_DURING_IMPORT.format(face="compare_main"))
    proc = run_face(code, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "--enable_profiling_compare",
                    "-o", "-")
    assert proc.returncode == 0 and proc.stdout.startswith("{"), proc.stderr


def test_workbook_hint_only_when_a_workbook_is_written(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The INFO line pointing at the xlsx's OverallMetrics is not printed when only JSON is written."""
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "a")))
    assert code == 0 and cli.OVERALL_HINT in err
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "b"), "--output_format", "json"))
    assert code == 0 and cli.OVERALL_HINT not in err and [p.suffix for p in (tmp_path / "b").iterdir()] == [".json"]


@pytest.mark.parametrize(("target", "written"), [("run.json", "run.xlsx"), ("Run.XLSX", "Run.XLSX")])
def test_workbook_hint_names_the_file_o_names(capsys: pytest.CaptureFixture, tmp_path: Path, target: str,
                                              written: str) -> None:
    """With -o naming the file, the hint sent the user to look for performance_comparison_result_*.xlsx, which was
    not written (user walk: -o run.json writes run.xlsx)."""
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / target)))
    assert code == 0 and [p.name for p in tmp_path.iterdir()] == [written]
    assert cli.OVERALL_HINT not in err and "performance_comparison_result_" not in err
    assert cli.OVERALL_HINT.replace("performance_comparison_result_*.xlsx", written) in err


@pytest.mark.parametrize("target", ["run.xlsx", "run.json"])
def test_workbook_hint_names_the_free_name_beside_a_taken_one(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                              target: str) -> None:
    """-o run.xlsx (or run.json) beside an older run.xlsx writes run_1.xlsx; the hint named run.xlsx, the old
    report, and only the "has been generated" line after it gave the new one."""
    (tmp_path / "run.xlsx").write_text("old")
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / target)))
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["run.xlsx", "run_1.xlsx"]
    assert cli.OVERALL_HINT.replace("performance_comparison_result_*.xlsx", "run_1.xlsx") in err


@pytest.mark.parametrize("target", ["run.xlsx", "run.json"])
def test_workbook_hint_names_the_name_free_for_both_reports(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                            target: str) -> None:
    """-o run.xlsx (or run.json) --output_format xlsx,json beside an older run.json: the two reports keep one stem,
    so run_1.xlsx and run_1.json are written; the hint named run.xlsx, free for the workbook alone (user walk)."""
    (tmp_path / "run.json").write_text("{}")
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / target), "--output_format", "xlsx,json"))
    assert code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "run_1.json", "run_1.xlsx"]
    assert cli.OVERALL_HINT.replace("performance_comparison_result_*.xlsx", "run_1.xlsx") in err


def test_workbook_hint_names_the_default_name_in_a_folder_ending_in_json(capsys: pytest.CaptureFixture,
                                                                         tmp_path: Path) -> None:
    """-o reports.json naming an existing folder: the workbook goes into it under the default name, which the hint
    gives (naming "reports.json" sent the user to the folder as the workbook)."""
    (tmp_path / "reports.json").mkdir()
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "reports.json")))
    assert code == 0 and [p.name[:30] for p in (tmp_path / "reports.json").iterdir()] == [
        "performance_comparison_result_"]
    assert cli.OVERALL_HINT in err


def test_root_warning_only_for_root(capsys: pytest.CaptureFixture, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The original's security warning is printed when running as root (uid 0), and only then."""
    if not hasattr(os, "geteuid"):
        pytest.skip("no user ids here")
    for uid, shown in ((0, True), (1000, False)):
        monkeypatch.setattr(os, "geteuid", lambda uid=uid: uid)
        # --force: the inputs belong to the real user, which the owner check would refuse for uid 1000
        code, _, err = run_inproc(capsys, *_pair_args("--force", "-o", str(tmp_path / str(uid))))
        assert code == 0 and (cli.ROOT_WARNING in err) == shown, err


def test_ctrl_c_during_the_compare_is_130(capsys: pytest.CaptureFixture, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while comparing: exit 130 with 'error: interrupted', no traceback, nothing written."""
    import msprof_compare.api as api

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "cli_compare", interrupted)
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "out")))
    assert (code, assert_one_error(err)) == (130, "error: interrupted")
    assert not (tmp_path / "out").exists()


def test_ctrl_c_python_swallows_still_ends_the_run(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C landing in a weakref callback (Python 3.10, a library's first import during the compare) was
    printed as "Exception ignored" and a traceback, and the run wrote its workbook: now 130, one line, nothing
    written. Any other unraisable exception still reaches the hook that was in place."""
    import msprof_compare.api as api

    real = api.cli_compare
    seen: list[type[BaseException]] = []

    def swallowing(exc: BaseException):
        def compare(*a, **k):
            result = real(*a, **k)
            unraisable(exc)
            return result
        return compare

    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type))
    monkeypatch.setattr(api, "cli_compare", swallowing(KeyboardInterrupt()))
    code, out, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "out")))
    assert (code, assert_one_error(err)) == (130, "error: interrupted")
    assert "Exception ignored" not in err and "Traceback" not in err and not out
    assert not (tmp_path / "out").exists() and seen == []

    monkeypatch.setattr(api, "cli_compare", swallowing(ValueError("not a Ctrl-C")))
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "other")))
    assert code == 0 and error_lines(err) == [] and seen == [ValueError]
    assert len(list((tmp_path / "other").glob("performance_comparison_result_*.xlsx"))) == 1
    seen.clear()
    unraisable(KeyboardInterrupt())
    assert seen == [KeyboardInterrupt]


def test_step_zero_is_a_step() -> None:
    """--base_step 0 / --comparison_step 0 ask for ProfilerStep#0 (only a negative id means all steps)."""
    from msprof_compare.options import build_options

    opts, _ = build_options(base_step=0, comparison_step=0)
    assert opts.step_given and (opts.base_step, opts.comparison_step) == (0, 0)


def test_script_face_keeps_the_original_abbreviations() -> None:
    """argparse takes unique prefixes; our added options must not make the original's ones ambiguous."""
    parser = cli.build_script_parser()
    for flag in ("--output", "--out", "--output_p"):
        assert parser.parse_args(["a", "b", flag, "dir"]).output_path == "dir"
    assert parser.parse_args(["a", "b", "--f"]).force is True
    assert parser.parse_args(["a", "b", "--fail", "5"]).fail_on_regression == "5"
    assert parser.parse_args(["a", "b", "--output_f", "json"]).output_format == "json"


@pytest.mark.parametrize("module", ["msprof_compare.entry", "msprof_compare"])
def test_python_m_entry_runs_the_cli(tmp_path: Path, module: str) -> None:
    """``python -m msprof_compare compare ...`` is msprof-analyze where the scripts directory is not on PATH."""
    proc = subprocess.run([sys.executable, "-m", module, "compare", "-d", str(SAMPLE_COMP),
                           "-bp", str(SAMPLE_BASE), "-o", str(tmp_path), "--enable_api_compare"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(list(tmp_path.glob("performance_comparison_result_*.xlsx"))) == 1


@pytest.mark.parametrize("module", ["msprof_compare.entry", "msprof_compare"])
def test_python_m_errors_name_the_command_typed(tmp_path: Path, module: str) -> None:
    """A usage error of ``python -m msprof_compare`` points at that command's help: it named
    ``msprof-analyze``, which is not on PATH where the module form is the way to run the tool."""
    proc = subprocess.run([sys.executable, "-m", module, "compare", "-d", "x"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert assert_one_error(proc.stderr).endswith(f"(see 'python -m {module} compare --help')")


def test_option_errors_point_at_the_sub_command_help(capsys: pytest.CaptureFixture) -> None:
    code, _, err = run_inproc(capsys, "-d", "x", "-bp", "y", "--enable_profiling_compare=true")
    assert code == 2
    assert assert_one_error(err).endswith("(see 'msprof-analyze compare --help')")


def test_output_folder_that_is_a_file_is_named(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    code, _, err = run_inproc(capsys, *_pair_args("-o", str(tmp_path / "afile" / "r.xlsx")))
    assert code == 2
    line = assert_one_error(err)
    assert f"output path {tmp_path / 'afile'} (the folder of " in line and "is a file, not a directory" in line


@pytest.mark.skipif(not os.path.exists("/dev/full") or os.name == "nt", reason="needs /dev/full and a POSIX shell")
def test_closed_or_full_streams_keep_the_exit_status(tmp_path: Path) -> None:
    """The exit status is what CI reads: a usage error stays 2 with stderr closed, a regression stays 3 with
    stderr full, and help sent to a full stdout is one error line and 1, not a traceback."""
    def shell(redirect: str, *args: str) -> subprocess.Popen:
        cmd = " ".join([sys.executable, "-c", f'"{ANALYZE}"', "compare", *args, redirect])
        return subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)

    bogus, gate, helped = map(finish, [  # at once: only the gate run writes a file
        shell("2>&-", "--bogus"),
        shell("2>/dev/full", "-d", str(SAMPLE_BASE), "-bp", str(SAMPLE_COMP), "-o", str(tmp_path),
              "--enable_operator_compare", "--fail_on_regression", "1"),
        shell(">/dev/full", "--help")])
    assert bogus.returncode == 2
    assert gate.returncode == 3
    assert len(list(tmp_path.glob("performance_comparison_result_*.xlsx"))) == 1
    assert helped.returncode == 1
    assert assert_one_error(helped.stderr) == "error: cannot write to standard output: No space left on device"


def test_warnings_before_a_usage_error_are_still_said(capsys: pytest.CaptureFixture) -> None:
    """reference-1 §1.3: rule 7's use_kernel_type warning is logged before rule 8 fails on the steps."""
    code, _, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "--use_kernel_type",
                              "--enable_api_compare", "--base_step", "1")
    assert code == 2
    lines = err.splitlines()
    warn = next(i for i, line in enumerate(lines) if "The use_kernel_type parameter is invalid" in line)
    error = next(i for i, line in enumerate(lines) if line.startswith("error: "))
    assert warn < error and "must be set at the same time" in lines[error]


def test_the_command_line_checks_its_flags_with_build_options(capsys: pytest.CaptureFixture,
                                                              caplog: pytest.LogCaptureFixture,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line turns its flags into options in one place, ``options.build_options``, which tests build
    options with too: the CLI called ``api.checked_options`` itself, and build_options, the tests' alone, did not log
    the warnings before a usage error (reference-1 §1.3, rule 7 before rule 8)."""
    from msprof_compare import options

    warning = ("The use_kernel_type parameter is invalid because it only takes effect when enable_kernel_compare is "
               "enabled.")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"), \
            pytest.raises(UsageError, match="--base_step and --comparison_step must be set at the same time"):
        options.build_options(use_kernel_type=True, enable_api_compare=True, base_step=1)
    assert caplog.messages == [warning]
    seen: list[dict] = []
    built = options.build_options
    monkeypatch.setattr(options, "build_options", lambda **raw: seen.append(raw) or built(**raw))
    code, _, err = run_inproc(capsys, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "--use_kernel_type",
                              "--enable_api_compare", "--base_step", "1")
    assert code == 2 and warning in err and "must be set at the same time" in err
    (flags,) = seen
    assert (flags["use_kernel_type"], flags["enable_api_compare"], flags["base_step"]) == (True, True, "1")


def test_script_given_the_cli_path_flags_says_how_it_takes_paths(capsys: pytest.CaptureFixture) -> None:
    """`python performance_compare.py -d COMP -bp BASE` (the CLI's command line, as the README shows it) read
    only "unrecognized arguments: -d -bp": nothing said that the script takes the paths positionally and base
    first, while argparse had taken COMP as the base. Other unknown options read as before."""
    parser = cli.build_script_parser()
    for argv, hinted in ((["-d", "c", "-bp", "b"], True), (["a", "b", "--benchmark_path", "x"], True),
                         (["a", "b", "--profiling_path=x"], True), (["a", "b", "-bp=x"], True),
                         (["a", "b", "--bogus"], False), (["a", "b", "--bogus=-d"], False)):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        assert exc.value.code == 2
        line = assert_one_error(capsys.readouterr().err)
        assert line.startswith("error: unrecognized arguments: ")
        assert ("takes the two paths without -d / -bp, base first: performance_compare.py BASE COMPARISON"
                in line) is hinted
        assert line.endswith("(see 'performance_compare.py --help')")


def test_script_given_the_compare_word_says_it_has_no_sub_command(capsys: pytest.CaptureFixture) -> None:
    """`python performance_compare.py compare BASE COMPARISON` (msprof-analyze's sub-command word, out of habit)
    read "unrecognized arguments: COMPARISON": argparse took 'compare' as the base and the base as the comparison,
    and named the comparison, a path the user gave right, as the stray (found by option fuzzing, optfuzz63).
    msprof-compare passes the word over; the script, whose paths are positional, says to leave it out. The word
    elsewhere, or the CLI's path flags after it, read as before."""
    parser = cli.build_script_parser()
    hint = "; performance_compare.py has no sub-command: leave out 'compare' (performance_compare.py BASE COMPARISON"
    for argv, stray, hinted in ((["compare", "b", "c"], "c", True), (["compare", "b", "c", "--force"], "c", True),
                                (["b", "c", "compare"], "compare", False)):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        assert exc.value.code == 2
        line = assert_one_error(capsys.readouterr().err)
        assert line.startswith(f"error: unrecognized arguments: {stray}" + (hint if hinted else "")), line
        assert line.endswith("(see 'performance_compare.py --help')")
    # msprof-analyze's whole command line: both hints in one, where the -d / -bp one alone left 'compare' in
    for argv, stray in ((["compare", "-d", "c", "-bp", "b"], "-d -bp b"),
                        (["compare", "-d=c", "-bp=b"], None)):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        line = assert_one_error(capsys.readouterr().err)
        assert exc.value.code == 2
        said = f"unrecognized arguments: {stray}" if stray else "the following arguments are required: " \
            "comparison_profiling_path"
        assert line == (f"error: {said}; performance_compare.py has no sub-command and "
                        "takes the two paths without -d / -bp: leave out 'compare' and give the paths base first: "
                        "performance_compare.py BASE COMPARISON [options] (see 'performance_compare.py --help')"), line


def test_script_base_folder_named_compare_gets_no_sub_command_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """A base folder named ``compare`` in the working directory is a path, not msprof-analyze's word: an unknown flag
    after it (``performance_compare.py compare b --bogus``) read "leave out 'compare'", which would drop the base.
    The same command line without such a folder keeps the hint."""
    monkeypatch.chdir(tmp_path)
    parser = cli.build_script_parser()
    for folder, hinted in ((False, True), (True, False)):
        if folder:
            (tmp_path / "compare").mkdir()
        with pytest.raises(SystemExit):
            parser.parse_args(["compare", "b", "--bogus"])
        line = assert_one_error(capsys.readouterr().err)
        assert line.startswith("error: unrecognized arguments: --bogus")
        assert ("leave out 'compare'" in line) is hinted, line


def test_cli_given_the_script_paths_says_where_paths_go(capsys: pytest.CaptureFixture) -> None:
    """`msprof-compare BASE COMPARISON` (the script's command line) read only "Missing option '--profiling_path'",
    as click reports the missing option before the extra arguments: the reverse of the script's hint above. A
    missing option without a stray argument (option values and flags are no strays) reads as before. After ``--``
    every word is an argument, one that starts with ``-`` too (a file named -c.json)."""
    hint = ("The paths are options here: {face} -d COMPARISON -bp BASE (performance_compare.py takes them without "
            "-d / -bp, base first)")
    runs = ((cli.analyze_main, ["compare", "a", "b"], "msprof-analyze compare", True),
            (cli.compare_main, ["a", "b"], "msprof-compare", True),
            (cli.compare_main, ["compare", "-d", "c", "b", "--enable_api_compare"], "msprof-compare", True),
            (cli.compare_main, ["-bp", "b", "-o", "-", "--op_name_map", "{}", "--force"], "msprof-compare", False),
            (cli.analyze_main, ["compare", "-bp", "b", "--output_path=x"], "msprof-analyze compare", False),
            (cli.analyze_main, ["compare", "-bp", "b", "--", "-c.json"], "msprof-analyze compare", True),
            (cli.compare_main, ["-bp", "b", "--"], "msprof-compare", False))
    for main, argv, face, hinted in runs:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        line = assert_one_error(capsys.readouterr().err)
        assert line.startswith("error: Missing option '--"), line
        assert (hint.format(face=face) in line) is hinted, line
        # one sentence, which "(see ...)" ends: "base first). (see" closed it twice
        assert line.endswith(f"{hint.format(face=face) if hinted else ''} (see '{face} --help')"), line


def test_same_input_on_both_sides_is_warned(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Passing one path twice (a mistyped command line) compared a profile with itself without a word;
    it is now warned, whatever the spelling of the two paths. Two steps of one profile are a real
    comparison: no warning."""
    from msprof_compare.api import compare
    from msprof_compare.errors import ProfileError, UsageError

    trace = REPO / "sample_data" / "bert-small_h100.json.gz"
    link = tmp_path / "same.json.gz"
    os.link(trace, link)  # a hard link is the same file under another name
    dotted = f"{trace.parent}/../sample_data/{trace.name}"
    for base, comparison in ((trace, trace), (trace, link), (f"={trace}", dotted)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(str(base), str(comparison), enable_profiling_compare=True)
        assert [m for m in caplog.messages if "same input" in m] == [
            f"Base and comparison are the same input ({trace}): every difference will be zero."]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(trace), str(REPO / "sample_data" / "bert-small_mi300.json.gz"), enable_profiling_compare=True)
    assert not [m for m in caplog.messages if "same input" in m]
    symlink = tmp_path / "link.json.gz"  # refused without --force: its error alone, no warning before it
    symlink.symlink_to(trace)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"), pytest.raises(ProfileError, match="symbolic"):
        compare(str(symlink), str(trace), enable_profiling_compare=True)
    assert not [m for m in caplog.messages if "same input" in m]
    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    for steps, warned in (((None, None), True), ((1, 2), False)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            try:  # the excerpt holds one step: the second is refused after the check under test
                compare(str(npu), str(npu), enable_profiling_compare=True, base_step=steps[0],
                        comparison_step=steps[1])
            except UsageError:
                assert not warned
        assert bool([m for m in caplog.messages if "same input" in m]) == warned, steps


def test_profile_folder_and_its_output_folder_are_warned(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A ``*_ascend_pt`` folder on one side and its ASCEND_PROFILER_OUTPUT on the other are two paths of one
    export: every figure came out equal without a word (the same-input check compared the paths). Either order is
    warned; a bare trace_view.json beside its folder is not (the folder's side reads the CSVs, its figures differ),
    nor are two steps of the export."""
    from msprof_compare.api import compare
    from msprof_compare.errors import UsageError

    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    out = npu / "ASCEND_PROFILER_OUTPUT"
    want = (f"Base and comparison read the same export ({out} is the output folder of {npu}): every difference "
            "will be zero.")
    for base, comparison in ((npu, out), (out, npu)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(base), str(comparison), enable_profiling_compare=True)
        assert [m for m in caplog.messages if "same" in m] == [want]
        metrics = res.sheet("OverallMetrics")
        assert len(metrics) > 10 and (pd.to_numeric(metrics["Diff Duration(ms)"]).fillna(0) == 0).all()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(npu), str(out / "trace_view.json"), enable_profiling_compare=True)
        # two steps: the excerpt holds one, so the second is refused, after the check under test
        with pytest.raises(UsageError):
            compare(str(npu), str(out), enable_profiling_compare=True, base_step=1, comparison_step=2)
    assert not [m for m in caplog.messages if "same" in m]


def test_notices_of_comparisons_not_asked_for_are_info(caplog: pytest.LogCaptureFixture) -> None:
    """The README's first command (no --enable_* flag: every comparison on by default) printed three WARNINGs
    about comparisons a single-GPU pair cannot serve; they are INFO there, and WARNINGs when asked for."""
    from msprof_compare.api import compare
    from msprof_compare.compare.kernels import GPU_MESSAGE

    def levels(**flags) -> dict[str, str]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            compare(str(SAMPLE_BASE), str(SAMPLE_COMP), **flags)
        return {r.getMessage(): r.levelname for r in caplog.records}

    comm = f"Can't find any communication op in the file: {SAMPLE_BASE} (base side)"
    gpu = f"{GPU_MESSAGE} (both sides are GPU traces)"
    got = levels()
    assert got[gpu] == "INFO" and got[comm] == "INFO"
    got = levels(enable_kernel_compare=True, enable_communication_compare=True)
    assert got[gpu] == "WARNING" and got[comm] == "WARNING"


def test_use_kernel_type_on_gpu_data_is_said_to_be_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """``--use_kernel_type`` asks for KernelTypeCompare; on the GPU sample pair without ``--enable_*`` flags the only
    word was an INFO line among the routine ones, that kernel compare needs NPU data on both sides: the option passed
    as if it had done something. A warning says it is ignored, once; without the option, or with
    ``--enable_kernel_compare`` (whose own notice is then a warning), there is no such line."""
    from msprof_compare.api import compare

    said = ("The use_kernel_type parameter is ignored: it only takes effect when both sides are NPU data, which the "
            "kernel comparison needs.")

    def warned(**flags) -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(str(SAMPLE_BASE), str(SAMPLE_COMP), **flags)
        return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "use_kernel_type" in
                r.getMessage()]

    assert warned(use_kernel_type=True) == [said]
    assert warned() == []
    assert warned(use_kernel_type=True, enable_kernel_compare=True) == []


# --------------------------------------------------------------------------- coverage audit

SMALL = Path(__file__).resolve().parent / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"


def test_data_and_usage_errors_print_the_traceback_with_debug(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """--debug adds the traceback to a data error (exit 1) and a usage error (exit 2) too, before their one
    error line (docs/differences.md: "the traceback only with --debug")."""
    missing = tmp_path / "absent.json"
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(missing), "-o", str(tmp_path), "--debug")
    assert code == 1 and out == ""
    assert "Traceback" in err and "ProfileError" in err
    assert error_lines(err) == [f"error: {missing}: no such file or directory (base side)"]
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--base_step", "1", "--debug")
    assert code == 2 and "Traceback" in err and "UsageError" in err
    assert error_lines(err) == ["error: Invalid param, --base_step and --comparison_step must be set at the same time."]
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(missing), "-o", str(tmp_path))
    assert code == 1 and "Traceback" not in err


def test_use_kernel_type_warning_in_a_run_that_succeeds(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """reference-1 §1.3 rule 7: --use_kernel_type without the kernel comparison is a warning, also in a run
    that then succeeds (it was tested only before a usage error and in build_options)."""
    code, _, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--use_kernel_type", "--enable_api_compare",
                              "-o", str(tmp_path))
    assert code == 0, err
    warned = [line for line in err.splitlines() if "The use_kernel_type parameter is invalid" in line]
    assert len(warned) == 1 and warned[0].startswith("[") and "][WARNING] " in warned[0]
    assert len(list(tmp_path.glob("performance_comparison_result_*.xlsx"))) == 1


def test_help_to_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """``msprof-analyze compare --help | head -0``: the reader has gone before the help is written; the
    help is dropped (exit 0, nothing on stderr), as for the console table and the JSON on stdout."""
    r, w = os.pipe()
    os.close(r)  # nobody reads: the first write fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "--help"], stdout=w, stderr=subprocess.PIPE,
                              text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


def test_help_to_a_closed_pipe_on_windows_is_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows often reports a write to a closed pipe as EINVAL, which click re-raises: exit 0 there too, as
    for the console table and the JSON (report.output.closed_pipe)."""
    import errno
    import io
    import types

    from msprof_compare.report import output

    class ClosedPipeOnWindows(io.TextIOBase):
        def writable(self) -> bool:
            return True

        def write(self, s: str) -> int:
            raise OSError(errno.EINVAL, "Invalid argument")

        def fileno(self) -> int:
            return os.open(os.devnull, os.O_WRONLY)

    windows = types.SimpleNamespace(**{**os.__dict__, "name": "nt"})
    monkeypatch.setattr(output, "os", windows)  # closed_pipe() sees Windows; nothing else does
    monkeypatch.setattr(sys, "stdout", ClosedPipeOnWindows())
    assert cli._run_typer(cli._analyze_app(), ["compare", "--help"], "msprof-analyze") == 0
    monkeypatch.setattr(output, "os", os)  # on POSIX, EINVAL is no closed pipe: an error, exit 1
    assert cli._run_typer(cli._analyze_app(), ["compare", "--help"], "msprof-analyze") == 1


def test_click_82_env_var_none_is_left_out(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """click 8.2.0 and 8.2.1 (which typer 0.18-0.27 accept) end a missing option's message with
    "(env var: 'None')"; the message is the original's without it."""
    usage, _ = cli._click_exception_types()

    class Command:
        def main(self, **_kw: object) -> None:
            raise usage("Missing option '--benchmark_profiling_path' / '-bp' (env var: 'None').")

    monkeypatch.setattr(cli.typer.main, "get_command", lambda _app: Command())
    assert cli._run_typer(cli._analyze_app(), ["compare", "-d", "x"], "msprof-analyze") == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: Missing option '--benchmark_profiling_path' / '-bp'. (see 'msprof-analyze --help')")


def test_ctrl_c_while_parsing_the_arguments(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Ctrl-C while click parses the command line (click turns it into Abort) is "error: interrupted", 130."""
    def interrupt(_path: str) -> str:
        raise KeyboardInterrupt

    from msprof_compare import options

    monkeypatch.setattr(options, "strict_int", interrupt)  # _cli_int, --max_kernel_num's parser, calls it
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--max_kernel_num", "5")
    assert code == 130 and out == ""
    assert assert_one_error(err) == "error: interrupted"


@pytest.mark.parametrize("face", ["analyze_main", "compare_main"])
def test_ctrl_c_while_the_command_is_built(face: str, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture) -> None:
    """Ctrl-C while typer builds the click command (it reads every option's annotations: about 0.2 s of a loaded
    machine's start, after the entry points hand Ctrl-C back) is "error: interrupted", 130, not a traceback."""
    def interrupt(_app: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.typer.main, "get_command", interrupt)
    with pytest.raises(SystemExit) as exc:
        getattr(cli, face)(["compare", "-d", str(SMALL), "-bp", str(SMALL)])
    assert exc.value.code == 130
    assert assert_one_error(capsys.readouterr().err) == "error: interrupted"



def test_script_says_completed_only_after_success(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """performance_compare.py logs "The comparison task has been completed" for a run that succeeded only."""
    missing = tmp_path / "absent.json"
    assert cli.script_main([str(missing), str(SMALL), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert assert_one_error(err) == f"error: {missing}: no such file or directory (base side)"
    assert "has been completed" not in err
    assert cli.script_main([str(SMALL), str(SMALL), "--enable_api_compare", "-o", str(tmp_path)]) == 0
    assert "The comparison task has been completed in a total time of " in capsys.readouterr().err


def test_api_result_errors(tmp_path: Path) -> None:
    """The Python API: a sheet the result does not hold is a KeyError naming it and the sheets it holds; an
    empty path is the original's "The path is empty" error (exit 1 on the faces); a step written as a bool is
    refused as no number (True is an int in Python, and would have read as step 1)."""
    from msprof_compare import compare
    from msprof_compare.errors import ProfileError, UsageError
    from msprof_compare.options import build_options

    res = compare(str(SMALL), str(SMALL), enable_api_compare=True)
    assert res.sheet_names == ["ApiCompare"]
    with pytest.raises(KeyError, match=r"^\"no sheet 'OverallMetrics' in this result; it holds ApiCompare\"$"):
        res.sheet("OverallMetrics")
    with pytest.raises(ProfileError, match=r"^The path is empty. Please enter a valid path. \(the base path: the "
                                           r"first argument of compare\(\)\)$"):
        compare("", str(SMALL), enable_api_compare=True)
    for steps, named in (((True, 1), "--base_step True"), ((1, False), "--comparison_step False")):
        with pytest.raises(UsageError, match=rf"must be a number\. \(got {named}: a step id is a whole number >= 0, "
                                             r"the N of ProfilerStep#N\)$"):  # which step
            build_options(base_step=steps[0], comparison_step=steps[1])


def test_gpu_step_refused_when_the_trace_starts_after_4_kib_of_blanks(tmp_path: Path) -> None:
    """A step on GPU data is refused before loading when a trace's first 4 KiB show it is Kineto; a trace whose
    JSON starts later (blanks first) is told only once loaded, and is refused then, with the same message."""
    from msprof_compare import compare
    from msprof_compare.compare.steps import GPU_STEP_MESSAGE
    from msprof_compare.errors import UsageError

    padded = tmp_path / "padded.pt.trace.json"
    padded.write_bytes(b" " * 5000 + SMALL.read_bytes())
    # the error names a GPU side: the padded base once loaded; SMALL, told by its first bytes, before loading
    for base, comp, named in ((padded, padded, padded), (padded, SMALL, SMALL)):
        with pytest.raises(UsageError) as info:
            compare(str(base), str(comp), enable_api_compare=True, base_step=1, comparison_step=1)
        assert str(info.value).startswith(f"{named}: {GPU_STEP_MESSAGE} (")
    assert compare(str(padded), str(SMALL), enable_api_compare=True).sheet_names == ["ApiCompare"]


def test_stdout_json_with_an_asked_workbook_but_no_sheet(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o - --output_format xlsx,json`` where no sheet has a row (kernel compare on GPU data): the JSON goes
    to stdout and no workbook is written into the working directory, nor announced."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "--enable_kernel_compare", "-o", "-",
                                "--output_format", "xlsx,json")
    assert code == 0, err
    assert json.loads(out)["sheets"] == []
    assert list(tmp_path.iterdir()) == []
    assert "has been generated" not in err


def test_msprof_compare_takes_the_sub_command_word_typed_out_of_habit(tmp_path: Path) -> None:
    """``msprof-compare compare -d ... -bp ...`` (msprof-analyze's word) runs as without it: the command has no
    positional argument the word could be; it was 'Got unexpected extra argument(s) (compare)'."""
    for argv, out in ((["compare"], tmp_path / "with"), ([], tmp_path / "without")):
        with pytest.raises(SystemExit) as done:
            cli.compare_main([*argv, "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "-o", str(out),
                              "--enable_api_compare"])
        assert done.value.code == 0
        assert len(list(out.glob("performance_comparison_result_*.xlsx"))) == 1


def test_a_cli_run_in_process_leaves_the_logger_to_the_host(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A program that runs the CLI in its own process and then calls compare() gets the API's notices through its
    own logging again (README: the API's notices go to the standard logger): the run's stderr handler and
    propagate=False were left behind, so a host's handlers never saw a later notice."""
    from msprof_compare import api
    from msprof_compare.logs import LOGGER_NAME

    logger = logging.getLogger(LOGGER_NAME)
    before = (list(logger.handlers), logger.level, logger.propagate)
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-d", str(SAMPLE_COMP), "-bp", str(SAMPLE_BASE), "--enable_profiling_compare",
                          "-o", str(tmp_path / "out")])
    assert info.value.code == 0
    assert (list(logger.handlers), logger.level, logger.propagate) == before
    with caplog.at_level(logging.WARNING, logger=LOGGER_NAME):
        api.compare(SAMPLE_BASE, SAMPLE_BASE, enable_profiling_compare=True)
    assert "Base and comparison are the same input" in caplog.text


_SIDES = ("base", "comparison")


def test_a_self_compare_says_each_notice_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """One input on both sides lacks each file twice: its notices ("The file ... does not exist.", the
    absent rows, the kernel refusal) were each printed twice, word for word. Each text is now said once per
    compare (of both sides); two inputs that lack the same file still get a notice each (each names its own path
    and side), and the next compare says it again."""
    from msprof_compare.api import compare

    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    sides = []
    for name in ("a", "b"):
        side = tmp_path / name / "rank0_ascend_pt"
        shutil.copytree(npu, side)
        (side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").unlink()
        sides.append(str(side))

    def warnings(base: str, comparison: str) -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            compare(base, comparison)
        return [m for m in caplog.messages if "memory_record.csv does not exist" in m]

    said = warnings(sides[0], sides[0])
    assert said == [f"{sides[0]}/ASCEND_PROFILER_OUTPUT: The file memory_record.csv does not exist. (both sides: "
                    f"{LOST})"]
    assert len(caplog.messages) == len(set(caplog.messages)), caplog.messages
    assert warnings(sides[0], sides[0]) == said  # the next compare says it again
    assert warnings(sides[0], sides[1]) == [f"{s}/ASCEND_PROFILER_OUTPUT: The file memory_record.csv does not exist. "
                                            f"({side} side: {LOST})" for s, side in zip(sides, _SIDES, strict=True)]


def test_workbook_hint_name_is_free_for_the_json_only_where_one_is_written(tmp_path, monkeypatch):
    """``deliver.workbook_name``: an older run.json takes run.xlsx's stem only where the JSON is written too
    (``--output_format xlsx,json``); writing the workbook alone, run.xlsx is free and is the name."""
    from msprof_compare.report.deliver import workbook_name

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text("{}")
    assert workbook_name("run.xlsx", ("xlsx",)) == "run.xlsx"
    assert workbook_name("run.xlsx", ("xlsx", "json")) == "run_1.xlsx"
    (tmp_path / "reports.xlsx").mkdir()  # a folder whose name ends in .xlsx: the default name goes inside
    assert workbook_name("reports.xlsx", ("xlsx",)) == ""


def _declared_version_line() -> str:
    """``--version``'s line worked out apart from the package: the name the JSON report's ``tool`` gives and the
    version pyproject.toml declares."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    return "msprof-compare " + re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) + "\n"


@pytest.mark.parametrize("face, args", [
    (cli.analyze_main, ["--version"]),
    (cli.analyze_main, ["compare", "--version"]),
    (cli.analyze_main, ["compare", "-d", "nowhere", "--version"]),  # eager: the missing -bp is not looked for
    (cli.compare_main, ["--version"]),
    (cli.compare_main, ["compare", "--version"]),
    (cli.script_main, ["--version"]),
    (cli.script_main, ["base", "--version"]),  # the missing COMPARISON is not looked for either
])
def test_version_prints_one_line_and_exits_0(face, args: list[str], capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as info:
        face(args)
    out, err = capsys.readouterr()
    assert (info.value.code or 0, out, err) == (0, _declared_version_line(), "")


def test_version_as_a_value_is_the_value(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Adding --version changes no other flag: "-o=--version" still names the output folder "--version" on every
    face, and a run's parsed options hold no ``version``. "-o --version" is refused on the CLI faces as the
    script's argparse refuses it (it takes no word that begins with a dash as a value): an option name after an
    option that takes a value is a value left out (``tests/test_cli_option_as_value.py``)."""
    seen: list[dict] = []
    monkeypatch.setattr(cli, "execute", lambda params, **_kw: seen.append(params) or 0)
    code, out, err = run_inproc(capsys, "-d", "c", "-bp", "b", "-o", "--version")
    assert (code, out) == (2, "") and err.startswith("error: Option '-o' requires an argument")
    code, out, _ = run_inproc(capsys, "-d", "c", "-bp", "b", "-o=--version")
    assert (code, out) == (0, "")
    with pytest.raises(SystemExit):
        cli.compare_main(["-d", "c", "-bp", "b", "--output_path=--version"])
    assert cli.script_main(["b", "c", "-o=--version"]) == 0
    assert capsys.readouterr().out == ""
    assert [p["output_path"] for p in seen] == ["--version"] * 3
    assert all("version" not in p for p in seen)


def test_version_of_the_module_and_the_script(tmp_path: Path) -> None:
    """``python -m msprof_compare --version`` and ``python performance_compare.py --version``, as a user runs them."""
    for command in ([sys.executable, "-m", "msprof_compare", "--version"],
                    [sys.executable, str(REPO / "performance_compare.py"), "--version"]):
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == (0, _declared_version_line(), ""), command


LOST_CTRL_C = """
import sys, time, weakref
from msprof_compare import entry
import msprof_compare.cli as cli

def main():  # a Ctrl-C raised inside a weakref callback, as one landing in importlib's module-lock callback is
    class Held:
        pass
    held = Held()
    def callback(_ref):
        raise KeyboardInterrupt
    ref = weakref.ref(held, callback)
    del held
    until = time.monotonic() + 30  # the re-sent Ctrl-C comes from a timer thread: on a loaded machine it may be late
    while time.monotonic() < until:
        time.sleep(0.001)
    print("ran on")

cli.compare_main = main
entry.compare_main()
"""


def test_ctrl_c_inside_a_callback_stops_the_run_without_a_traceback() -> None:
    """A Ctrl-C that lands in a callback Python cannot raise from (seen in CI: importlib's module-lock callback
    during a lazy import, 0.08 s into a run) printed "Exception ignored in: <function _get_module_lock.<locals>.cb
    ...> Traceback ... KeyboardInterrupt" and was lost: the run went on and wrote its workbook. The entry point
    raises it again where the run takes it: the one line, status 130, the run stopped."""
    proc = run_face(LOST_CTRL_C)
    assert (proc.returncode, proc.stdout) == (130, ""), proc.stderr
    assert proc.stderr == "error: interrupted\n"


def test_an_empty_path_is_said_empty_when_run_from_a_folder_of_node_folders(
        capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty path (``-bp ""``, ``-d =``) was made absolute before the compare said it is empty: the current
    folder. Run from a folder of node-like folders (``node0/`` holding a rank, ``node1/`` none: /tmp beside the
    session folders of a machine), the rank-folder look refused that folder's ``node1`` as a node copied in part,
    naming a folder the user never typed. The empty path is said empty, wherever the run starts from."""
    import shutil

    rank = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt"
    shutil.copytree(rank, tmp_path / "node0" / "rank0_ascend_pt")
    (tmp_path / "node1").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_inproc(capsys, "-bp", ".", "-d", str(SAMPLE_COMP), "-o", "o")  # the premise: "." refused
    assert code == 1 and assert_one_error(err).startswith("error: ./node1: holds no rank's profile"), err
    for args, role, flag, place in ((("-bp", "", "-d", str(SAMPLE_COMP)), "base", "-bp", "first"),
                                    (("-bp", str(SAMPLE_BASE), "-d", "="), "comparison", "-d", "second")):
        code, _out, err = run_inproc(capsys, *args, "-o", "o")
        assert code == 1 and assert_one_error(err) == (f"error: The path is empty. Please enter a valid path. (the "
                                                       f"{role} path: {flag}, or the {place} path of "
                                                       "performance_compare.py)"), err
    assert not (tmp_path / "o").exists()
