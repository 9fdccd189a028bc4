"""Session 77's small leftovers (session 78): imports said twice, the help's pointer to the README, and the
wording of a few lines. Each expected text here is built from the data or the package's files, not read from the
code's output."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "msprof_compare"


def _imported_again(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of each import inside a function of a name the module already imports at its top, as it
    imports it there (the same module, or the same name from the same module, under the same alias)."""
    def names(node: ast.stmt) -> set[tuple[str, str, str | None]]:
        if isinstance(node, ast.Import):
            return {("", a.name, a.asname) for a in node.names}
        if isinstance(node, ast.ImportFrom):
            return {("." * node.level + (node.module or ""), a.name, a.asname) for a in node.names}
        return set()

    top = set().union(*(names(n) for n in tree.body))
    return sorted((inner.lineno, ".".join(filter(None, got[:2])))
                  for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for inner in ast.walk(fn) for got in names(inner) if got in top)


def test_no_function_imports_what_its_module_imports_at_the_top():
    """cli.py's ``_output_as_typed`` imported ``re`` again after the module had come to import it at its top, and
    api.py three names of its loaders: a second import says the name was missing there, which it was not."""
    found = [f"{path.relative_to(PACKAGE)}:{line}: {name}" for path in sorted(PACKAGE.rglob("*.py"))
             for line, name in _imported_again(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_the_import_check_finds_each_form():
    """The check above can fail: a plain import, a from-import and a relative one said again in a function are
    found; one under another alias, or of another name, is not."""
    source = ("import re\nfrom .loaders import detect\nfrom os import path as p\n"
              "def f():\n    import re\n    from .loaders import detect\n    from os import path as p\n"
              "    import re as regex\n    from .loaders import load_profile\n    from os import path\n")
    assert _imported_again(ast.parse(source)) == [(5, "re"), (6, ".loaders.detect"), (7, "os.path")]


def test_the_help_points_a_pip_user_at_the_readme_in_the_installed_metadata(capsys: pytest.CaptureFixture) -> None:
    """--help ended "README.md (Errors and exit codes; CI regression gate) says more", a file a pip install does not
    put on disk; pyproject's ``readme`` makes it the installed metadata's description. Every face's help names the
    Python that reads it, and that Python gives the README with both sections (test_packaging runs it against a
    built wheel)."""
    import importlib.metadata

    from cliutil import run_inproc
    from test_packaging import _pyproject

    from msprof_compare import cli

    assert _pyproject()["project"]["readme"] == "README.md"
    faces = [" ".join(run_inproc(capsys, "--help")[1].split()),
             " ".join(cli.build_script_parser().format_help().split())]
    exprs = []
    for flat in faces:
        assert "README.md (Errors and exit codes; CI regression gate) says more; pip installs it as the package's " \
               "description, in Python importlib.metadata" in flat, flat
        exprs += re.findall(r"in Python (importlib\.metadata\.\S+)\. ", flat)
    assert len(exprs) == len(faces)
    try:
        importlib.metadata.distribution("msprof_compare")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout on PYTHONPATH (the floors' venv)
        pytest.skip("msprof_compare is not installed here; test_packaging runs the help's words on a built wheel")
    for expr in exprs:
        text = eval(expr, {"importlib": importlib})  # the help's own words, run as a user would paste them
        assert "\n## Errors and exit codes\n" in text and "\n## CI regression gate\n" in text


def test_the_export_note_says_which_kernel_rows_it_counts_as_hccl_ops(samples: Path, tmp_path: Path) -> None:
    """The NPU export kind note counted the HCCL ops of a text export's kernel_details.csv by name (hcom_*) and by
    Accelerator Core (HCCL, or COMMUNICATION where newer torch_npu writes it), yet gave "(hcom_*)" as what it
    counts. The level-1 text export with its last HCCL op written as newer torch_npu may write one (core
    COMMUNICATION, no hcom_ name): the count, from the CSV here, holds it, and the words say so."""
    import csv
    import shutil

    from test_export_switch import DB_L1, TEXT_L1, _note

    from msprof_compare import compare

    text = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / TEXT_L1, text)
    csv_path = text / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    was = csv_path.read_text(encoding="utf-8")
    row = ",hcom_allReduce__586_3_1,hcom_allReduce_,N/A,HCCL,"
    assert was.count(row) == 1
    csv_path.write_text(was.replace(row, ",allReduce__586_3_1,allReduce_,N/A,COMMUNICATION,"), encoding="utf-8")
    with open(csv_path, newline="", encoding="utf-8") as f:
        n = sum(1 for r in csv.DictReader(f) if r["Type"].strip() not in ("", "N/A")
                and (r["Name"].startswith("hcom_") or r["Accelerator Core"].strip() in ("HCCL", "COMMUNICATION")))
    assert n == 4
    res = compare(str(text), str(samples / DB_L1), enable_kernel_compare=True)
    assert (f"KernelCompare: the base side's kernel_details.csv lists {n} HCCL op(s) (hcom_* or "
            "Accelerator Core HCCL / COMMUNICATION), which a DB export's compute tasks do not hold") \
        in _note(res)["Detail"]


@pytest.mark.parametrize("relative", [True, False], ids=["as-typed", "absolute"])
def test_a_full_disk_under_a_missing_report_folder_reads_with_one_bracket(relative: bool, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``-o new/run.xlsx``, new not there yet, on a full disk read "new (/abs/new, the folder of new/run.xlsx) (its
    nearest existing folder, /abs)": two brackets in a row, as if two things were named. One bracket holds both."""
    from cliutil import error_lines, run_inproc
    from test_output_safety import _statvfs

    from msprof_compare import api

    trace = PACKAGE.parent / "sample_data" / "bert-small_h100.json.gz"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "statvfs", _statvfs(0, 0))
    monkeypatch.setattr(api, "cli_compare", lambda *a, **k: pytest.fail("compared on a full disk"))
    target = "new/run.xlsx" if relative else f"{tmp_path}/new/run.xlsx"
    code, _, err = run_inproc(capsys, "-bp", str(trace), "-d", str(trace), "-o", target)
    named = (f"new ({tmp_path}/new, the folder of new/run.xlsx" if relative
             else f"{tmp_path}/new (the folder of {tmp_path}/new/run.xlsx")
    assert (code, error_lines(err)) == (2, [
        f"error: output directory {named}; its nearest existing folder, {tmp_path}): no space left on its file "
        "system (0 bytes free); free some space or write the reports elsewhere"])
    assert list(tmp_path.iterdir()) == []


BERT_H100 = str(PACKAGE.parent / "sample_data" / "bert-small_h100.json.gz")
#: an MI300 excerpt without nn.Module events (its python functions hold none)
NO_MODULES = str(PACKAGE.parent / "tests" / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json")
MODULE_KEYS = "{'BertLayer': 'L', 'Dropout': 'D', 'zzz': 'y'}"


def _module_premises() -> None:
    """What the raw traces hold: 'BertLayer' and 'Dropout' are parts of the BERT trace's nn.Module names and no op's
    name there or in the excerpt, which holds no nn.Module event; 'zzz' is in no name of either."""
    from test_op_name_map_whole_name import _names

    bert, bare = _names(BERT_H100), _names(NO_MODULES)
    modules = {n for n in bert if n.startswith("nn.Module:")}
    assert all(any(k in n for n in modules) for k in ("BertLayer", "Dropout"))
    assert not {"BertLayer", "Dropout", "zzz"} & (bert | bare)
    assert not any("zzz" in n for n in bert | bare) and not any(n.startswith("nn.Module") for n in bare)


@pytest.mark.parametrize(("pair", "flags", "said"), [
    ([BERT_H100, BERT_H100], ["--enable_operator_compare", "--disable_module"], [
        "--op_name_map: 'BertLayer', 'Dropout', 'zzz' name no operator of either side and could rename only module "
        "paths, which this run does not compare (--disable_module), so they rename nothing (names are "
        "case-sensitive: copy them from the OperatorCompare sheet)."]),
    ([BERT_H100, BERT_H100], ["--enable_memory_compare"], [
        "--op_name_map: 'BertLayer', 'Dropout', 'zzz' name no operator of either side and could rename only module "
        "paths, which this run does not compare (only --enable_operator_compare compares them), so they rename "
        "nothing (names are case-sensitive: copy them from the MemoryCompare sheet)."]),
    ([BERT_H100, NO_MODULES], ["--enable_operator_compare"], [
        "--op_name_map: 'zzz' names no operator of either side and appears in no module name, so it renames nothing "
        "(names are case-sensitive: copy them from the OperatorCompare sheet).",
        "--op_name_map: 'BertLayer', 'Dropout' name no operator of either side and could rename only module paths, "
        "which this run does not compare (the comparison side has no nn.Module events), so they rename nothing."]),
], ids=["disable-module", "memory-only", "side-without-modules"])
def test_a_module_key_in_a_run_that_compares_no_modules_is_said_to_rename_nothing(
        pair: list[str], flags: list[str], said: list[str], capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A key that could rename only module paths renamed nothing, without a word, where the run matches no module:
    under --disable_module, without the operator comparison (which alone matches modules; the loaders then read
    no module name, so whether a key is in one is not known, and the case hint stays), or beside a side without
    nn.Module events. A key in no module name of a run that read them keeps its own line."""
    from msprof_compare import cli

    _module_premises()
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", pair[0], "-d", pair[1], "-o", str(tmp_path), *flags,
                          "--op_name_map", MODULE_KEYS])
    assert info.value.code == 0
    lines = [line.split("] ", 1)[1] for line in capsys.readouterr().err.splitlines() if "--op_name_map:" in line]
    assert lines == said


def test_a_key_inside_a_longer_key_is_not_counted_in_the_paths_the_longer_one_renames(
        capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The bundled BERT pair: every nn.Module name holding 'Drop' holds it inside 'Dropout', which the map
    replaces first (longest key at a place), so 'Drop' renames no module path. Its idle-entry words said it renamed
    the 9 base and 9 comparison paths holding it alike, the Dropout paths, which it does not rename; they are said
    of 'Dropout' alone, and 'Drop' is said to rename none (test_op_name_map_idle counts them against a matching run
    again)."""
    from test_op_name_map_whole_name import BERT, _names

    from msprof_compare import cli

    names = _names(BERT[0]) | _names(BERT[1])
    holding = [n for n in names if "Drop" in n]
    assert holding and all(n.startswith("nn.Module:") and n.count("Drop") == n.count("Dropout") for n in holding)
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", BERT[0], "-d", BERT[1], "-o", str(tmp_path), "--enable_operator_compare",
                          "--op_name_map", "{'Drop': 'X', 'Dropout': 'Y'}"])
    assert info.value.code == 0
    lines = [line.split("] ", 1)[1] for line in capsys.readouterr().err.splitlines() if "--op_name_map:" in line]
    assert len(lines) == 1
    said = dict(part.split(" renames ", 1) for part in lines[0].removeprefix("--op_name_map: ").split("; "))
    assert said["the entry 'Dropout': 'Y'"].startswith("the 9 base and 9 comparison module paths holding 'Dropout'")
    assert said["the entry 'Drop': 'X'"].startswith("no module path: where one holds 'Drop', the text of another key")
