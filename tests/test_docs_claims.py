"""What README.md and msprof_compare/schemas/result.schema.json tell a user, checked against runs of the tool.

The JSON schema is checked on three kinds of pair (GPU-GPU, NPU text, NPU DB), each run through the command line
with every option given, so that an option's value (``op_name_map``'s dict, the steps, the gate's float) or a
sheet only an option makes (``KernelTypeCompare``, the operator sheets of ``--disable_module``) cannot leave the
schema behind. ``--disable_details`` is on for the DB pair only: it drops the detail sheets the other two check.
The README's option tables are checked against the ``--help`` of every face, its code layout against the package's
modules, and the schema's description of ``summary.contributors_note`` against the notes of real runs. The README's
first command is run as it stands there, in a folder of its own: its console block is the run's stdout, character
for character, and its log ends as the README says (``tests/test_cli.py::test_sample_pair_full_run`` checks the
workbook of that run). Its Python blocks run as they stand too, and the API calls it quotes name the real
parameters.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from cliutil import run_inproc
from test_json_report import SCHEMA, _strict_loads, validate

from msprof_compare import api, cli

REPO = Path(__file__).resolve().parents[1]
#: The JSON reports' schemas, package data (``msprof_compare.schema``)
SCHEMAS = REPO / "msprof_compare" / "schemas"
SAMPLES = REPO.parent / "shared" / "samples"
NPU_TEXT = SAMPLES / "msinsight" / "test" / "data" / "pytorch" / "text"

# the options every run below gives (besides its paths, -o and the ones a pair adds)
COMMON = ["--enable_profiling_compare", "--enable_operator_compare", "--enable_memory_compare",
          "--enable_communication_compare", "--enable_api_compare", "--enable_kernel_compare", "--disable_module",
          "--max_kernel_num", "10", "--use_input_shape", "--gpu_flow_cat", "ac2g", "--force", "--use_kernel_type",
          "--debug", "--output_format", "xlsx,json"]
NPU_STEPS = ["--base_step", "50", "--comparison_step", "50"]

PAIRS = {
    # bert-small H100 -> MI300X (sample_data): the comparison is faster, the gate passes
    "gpu": (REPO / "sample_data" / "bert-small_h100.json.gz", REPO / "sample_data" / "bert-small_mi300.json.gz",
            ["--op_name_map", "{'cudaDeviceSynchronize':'hipDeviceSynchronize'}", "--fail_on_regression", "5%"], 0),
    # NPU pair 1 (text exports, level1 -> level2), step 50 on both sides
    "npu_text": (NPU_TEXT / "level1" / "rank0_ascend_pt", NPU_TEXT / "level2" / "rank0_ascend_pt",
                 [*NPU_STEPS, "--op_name_map", "{'aten::mul':'aten::mul'}", "--fail_on_regression", "5"], 0),
    # the DB excerpts, level2 as the base: the comparison is 6.7 % slower, so the gate fails (exit 3)
    "npu_db": (REPO / "tests" / "data" / "db" / "l2", REPO / "tests" / "data" / "db" / "l1",
               [*NPU_STEPS, "--disable_details", "--op_name_map", "{'aten::mul':'aten::mul'}",
                "--fail_on_regression", "1"], 3),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_json_of_every_option_validates_against_the_schema(pair: str, capsys: pytest.CaptureFixture,
                                                          tmp_path: Path) -> None:
    base, comparison, extra, status = PAIRS[pair]
    if not base.exists():
        pytest.skip(f"sample data not found at {base}")
    out = tmp_path / "out"
    code, stdout, _ = run_inproc(capsys, "-bp", str(base), "-d", str(comparison), "-o", str(out), *COMMON, *extra)
    assert code == status
    written = sorted(out.iterdir())
    assert [p.suffix for p in written] == [".json", ".xlsx"]  # reports are written also when the gate fails
    doc = _strict_loads(written[0].read_text(encoding="utf-8"))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert validate(doc, schema) == []
    # the options are recorded by flag name, as given (README: the API's options are the long names); rank_list
    # selects the compares of a rank-by-rank run, no option of one compare; version prints and exits, running none
    assert set(doc["options"]) == readme_option_names() - {"profiling_path", "benchmark_profiling_path",
                                                           "output_path", "rank_list", "version"}
    assert doc["options"]["max_kernel_num"] == 10 and doc["options"]["disable_module"] is True
    assert doc["options"]["base_step"] == (-1 if pair == "gpu" else 50)  # -1: no step given (schema)
    assert doc["options"]["op_name_map"] == json.loads(extra[extra.index("--op_name_map") + 1].replace("'", '"'))
    assert doc["options"]["output_format"] == "xlsx,json" and isinstance(doc["options"]["fail_on_regression"], float)
    names = [s["name"] for s in doc["sheets"]]
    assert names[:2] == ["Summary", "OverallMetrics"] and "ModuleCompareStatistic" not in names
    assert ("KernelTypeCompare" in names) == (pair != "gpu")  # kernel comparison: NPU data only
    assert ("OperatorCompare" in names) == (pair != "npu_db")  # --disable_details
    assert ("match_rate" in doc["frames"]) == (pair != "npu_db")
    # the verdict is the console's sentence without its final period
    verdict = doc["summary"]["verdict"]
    assert verdict and not verdict.endswith(".")
    assert f"{verdict}." in stdout.splitlines()


def readme_tables() -> dict[str, list[str]]:
    """The README's two option tables: each row's option spellings (``-d``, ``--profiling_path``, ...)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    tables = {}
    for key, head in (("original", "Options (the original's names"), ("ours", "Additions of ours")):
        block = text[text.index(head):]
        rows = [line for line in block.split("\n\n", 2)[1].splitlines() if line.startswith("| `")]
        # the option column, and the spelling its meaning gives as "also `--...`" (-bp's --benchmark_path)
        tables[key] = [name for row in rows
                       for name in re.findall(r"(?<![\w-])(--?[a-z][a-z_]*)", row.split("|")[1])
                       + re.findall(r"also `(--[a-z_]+)`", row.split("|")[2])]
    return tables


def readme_option_names() -> set[str]:
    """The long option names of the README's tables without their dashes (the API's keywords)."""
    tables = readme_tables()
    return {n[2:] for names in tables.values() for n in names if n.startswith("--")} - {"benchmark_path"}


def help_options(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z_]*)", text)) - {"-h", "-H", "--help"}


def test_readme_first_command_prints_its_console_block(tmp_path: Path) -> None:
    """README "Install and compare the bundled sample pair": the command of its bash block, run in a folder that
    holds ``sample_data`` (so the workbook goes there, the current directory), prints the console block below it
    on stdout and nothing else, and "ends its log with [...][INFO] The comparison result file has been generated:
    <absolute path of the xlsx>"."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install and compare the bundled sample pair", 1)[1].split("\n## ", 1)[0]
    (command,) = [line for line in re.search(r"```bash\n(.*?)```", section, re.S).group(1).splitlines()
                  if line.startswith("msprof-analyze ")]
    block = re.search(r"```\n(\+-{10,}.*?\n)```", section, re.S).group(1)
    (tmp_path / "sample_data").symlink_to(REPO / "sample_data")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "MSPROF_ANALYZE_LOG_LEVEL")}
    proc = subprocess.run([sys.executable, "-c", "from msprof_compare.entry import analyze_main; analyze_main()",
                           *shlex.split(command)[1:]], capture_output=True, text=True, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(REPO)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == block
    (xlsx,) = tmp_path.glob("performance_comparison_result_*.xlsx")
    last = proc.stderr.rstrip("\n").split("\n")[-1]
    named = Path(re.fullmatch(r"\[[-0-9: ]+\]\[INFO\] The comparison result file has been generated: (.+)",
                              last).group(1))
    assert named.is_absolute() and named.resolve() == xlsx.resolve()
    # "Its one warning, `...`": the run's warnings but the root one (quoted apart) are that one, which it begins
    said = re.search(r"Its one warning but the root one below, `(.+?) \.\.\.`", " ".join(section.split())).group(1)
    warned = [line.split("][WARNING] ", 1)[1] for line in proc.stderr.splitlines() if "][WARNING] " in line]
    warned = [w for w in warned if not w.startswith("Security Warning: Do not run this tool as root.")]
    assert len(warned) == 1 and warned[0].startswith(said) and "compare the Flash Attention totals first" in warned[0]


def test_readme_install_line_runs_without_a_python_command_and_states_pyprojects_floor() -> None:
    """README's install block: a fresh Debian or Ubuntu has ``python3`` but no ``python`` command (PEP 394), so
    the block's ``python -m venv`` failed there before anything was installed; the venv is made with ``python3``,
    and the Python version the README asks for is pyproject's ``requires-python`` (a user on 3.8 learnt it from
    pip's refusal)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install and compare the bundled sample pair", 1)[1].split("\n## ", 1)[0]
    first = re.search(r"```bash\n(.*?)```", section, re.S).group(1).splitlines()[0]
    assert first.startswith("python3 -m venv .venv && . .venv/bin/activate && ")
    floor = re.search(r'requires-python = ">=(\d+\.\d+)"', (REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert f"It needs Python {floor.group(1)} or later" in " ".join(section.split())


def test_readme_multi_rank_commands_print_their_console_blocks(samples: Path, tmp_path: Path) -> None:
    """README "Multi-rank runs": each command of its bash blocks (continuation lines joined), run from a checkout
    folder whose ``../shared/samples`` are the samples, prints the text block under it on stdout, with the README's
    ``/home/me/msprof-compare`` and timestamp in place of this run's. The ``--rank_list 1`` block showed the rank's
    line alone, where the run prints the table over the ranks, the job's line and the overview's name too. The
    commands ran from inside the samples folder (``cd ../shared/samples/...``), so ``-o out`` wrote among the
    samples, or failed where they are read-only: the reports go to the checkout's ``out`` and no command changes
    folder."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Multi-rank runs: compare rank by rank", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"```bash\n(.*?)```\n *```text\n(.*?) *```", section, re.S)
    assert len(pairs) == 2
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "MSPROF_ANALYZE_LOG_LEVEL")}
    for i, (commands, block) in enumerate(pairs):
        # a folder each: two runs in one second would share a timestamp, the second "_1"
        cwd = tmp_path / str(i) / "msprof-compare"
        cwd.mkdir(parents=True)
        (tmp_path / str(i) / "shared").mkdir()
        (tmp_path / str(i) / "shared" / "samples").symlink_to(samples)
        lines = [line.strip() for line in re.sub(r"\\\n", " ", commands).splitlines()]
        assert not [line for line in lines if line.startswith("cd ")]
        (command,) = [line for line in lines if line.startswith("msprof-analyze ")]
        proc = subprocess.run([sys.executable, "-c", "from msprof_compare.entry import analyze_main; analyze_main()",
                               *shlex.split(command)[1:]], capture_output=True, text=True, cwd=cwd,
                              env={**env, "PYTHONPATH": str(REPO)}, timeout=300)
        assert proc.returncode == 0, proc.stderr
        want = "\n".join(line.strip() for line in block.strip("\n").splitlines()) + "\n"
        got = re.sub(r"_\d{14}\.xlsx", "_20261205110230.xlsx",
                     proc.stdout.replace(str(cwd), "/home/me/msprof-compare"))
        assert got == want
        assert [p.name for p in cwd.iterdir()] == ["out"]


def test_readme_option_tables_are_the_help_of_every_face(capsys: pytest.CaptureFixture) -> None:
    tables = readme_tables()
    documented = set(tables["original"]) | set(tables["ours"])
    assert {"-d", "-bp", "-o", "--benchmark_path", "--output_format", "--fail_on_regression", "--rank_list"} <= \
        documented
    for face in (lambda: cli.analyze_main(["compare", "--help"]), lambda: cli.compare_main(["--help"])):
        with pytest.raises(SystemExit):
            face()
        options = [line for line in capsys.readouterr().out.splitlines()[1:] if line.startswith("  -")]
        assert help_options("\n".join(line.split("  ")[1] for line in options)) == documented
    # the script takes the two paths as positional arguments (base first): every other option is the same
    usage = cli.build_script_parser().format_usage()
    assert help_options(usage) == documented - {"-d", "--profiling_path", "-bp", "--benchmark_profiling_path",
                                                "--benchmark_path", "--output_path"} | {"-o"}


def test_a_database_under_a_trace_suffix_is_not_told_to_unpack(capsys: pytest.CaptureFixture,
                                                               tmp_path: Path) -> None:
    """docs/differences.md: a file under a trace's suffix is named by its first bytes, an archive with "unpack
    it". An SQLite database has nothing to unpack: it is told the names a profiler database is read under (the
    DB excerpt of tests/data, renamed as a trace)."""
    renamed = tmp_path / "rank0.pt.trace.json"
    renamed.write_bytes((REPO / "tests" / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db").read_bytes())
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(renamed), "-d", str(renamed), "-o", str(out))
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and lines == [
        f"error: {renamed}: not a JSON trace: the file is an SQLite database (both sides: a profiler database is "
        f"read under "
        "its own name, ascend_pytorch_profiler_*.db, ascend_mindspore_profiler_*.db or msmonitor_*.db, or from its "
        "profiling directory)"], err
    assert not out.exists()


def test_readme_code_layout_names_every_module() -> None:
    """README "Code layout" is where a contributor looks a module up: every module of the package is named in
    its table, and every name there is a module (``compare/breakdown.py``, the record the three breakdowns fill,
    was missing)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Code layout"):text.index("## Commands")]
    named = set(re.findall(r"`([\w/]+\.py)`", table))
    package = REPO / "msprof_compare"
    modules = {p.name for p in package.rglob("*.py")} | {"performance_compare.py"}
    assert {Path(n).name for n in named} - modules == set()
    assert modules - {Path(n).name for n in named} == set()


def test_schema_says_every_part_of_the_contributors_note(samples: Path, dlrm_rank, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """The result schema's ``summary.contributors_note`` names each part the note can hold. Two of them were
    left out: the step wrappers (tracelens' vLLM full-graph decode against its piecewise run, whose note starts
    with them) and the collective kernels of a GPU trace (rank 1 of param's DLRM job against rank 0)."""
    schema = json.loads((SCHEMAS / "result.schema.json").read_text(encoding="utf-8"))
    desc = schema["properties"]["summary"]["properties"]["contributors_note"]["description"]
    inference = samples / "tracelens" / "tests" / "traces" / "inference"
    runs = {"wrapper": (inference / "vllm_decode_full" / "graph_execution.json.gz",
                        inference / "vllm_prefilldecode_piecewise" / "graph_execution.json.gz"),
            "gpu collectives": (dlrm_rank(0), dlrm_rank(1))}
    notes = {}
    for what, (base, comp) in runs.items():
        out = tmp_path / f"{what.replace(' ', '_')}.json"
        code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "--output_format", "json", "-o", str(out))
        assert code == 0, err
        notes[what] = json.loads(out.read_text())["summary"]["contributors_note"]
    assert notes["wrapper"].startswith("each side's operator device time lies under one top-level op that the other "
                                       "side has no op of")
    assert "collective kernels (NCCL / RCCL), which the trace's launch flows link" in notes["gpu collectives"]
    assert "under one top-level op of a name the other side has no op of" in desc
    assert "collective kernels a GPU trace's launch flows link to it" in desc
    assert "HCCL ops of an NPU text export" in desc


def test_schema_gives_the_overlap_clause_in_the_consoles_words() -> None:
    """``summary.communication.uncovered_diff_ms`` tells what the console adds; since the line and the Summary's note
    share ``overlap_words`` (collectives beside one another move that part too), the schema still said "computing
    overlaps less (or more)" alone."""
    from msprof_compare.compare.communication_summary import overlap_words

    schema = json.loads((SCHEMAS / "result.schema.json").read_text())
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "uncovered_diff_ms" in node and isinstance(node["uncovered_diff_ms"], dict):
                found.append(node["uncovered_diff_ms"]["description"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert len(found) == 1 and overlap_words("less (or more)") in found[0]


# --- the references README.md, docs/*.md and the tests/data READMEs make to tests, fixtures and headings ---

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "tests" / "data").rglob("README.md"))]
# a path that starts at one of the repository's folders (tests/, tools/, bench/, ...): not the tail of a
# longer path (`hta/tests/data/...`, `samples/tracelens/tests/traces/...` in the tests/data READMEs name files
# of the samples)
REPO_PATH = re.compile(r"(?<![\w./-])(?:tests|tools|bench|docs|sample_data|msprof_compare|\.ci)/[\w./*-]*[\w*]")
TEST_REF = re.compile(r"(?<![\w./-])(tests/[\w/]+\.py)::(\w+\*?)")
TEST_FILE = re.compile(r"(?<![\w./-])tests/[\w/]+\.py")
FOLLOW_UP = re.compile(r"`::((?:test_|Test)\w*\*?)`")  # `::test_x`: a test of the file last named before it
BARE = re.compile(r"`((?:test_|Test)\w*\*?)`")  # `test_x` alone in backticks
# `test_ranks.py::test_x` or `compare/modules.py::_module_keyer`: a file named without tests/ (or the package)
SHORT_REF = re.compile(r"(?<![\w./-])((?!tests/)(?:\w+/)*\w+\.py)::(\w+\*?)")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _where(doc: Path, text: str, pos: int) -> str:
    return f"{doc.relative_to(REPO)}:{_line(text, pos)}"


def _test_names(path: Path) -> set[str]:
    """The functions and classes a test file defines (methods of its test classes included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _names_a_test(name: str, defined: set[str]) -> bool:
    """A name ending in ``*`` (``test_replayed_*``) or ``_`` is a prefix: some test must start with it."""
    stem = name.rstrip("*")
    if name.endswith("*") or stem.endswith("_"):
        return any(d.startswith(stem) for d in defined)
    return name in defined


def test_test_names_in_the_docs_exist() -> None:
    """Every test the docs name is a function or class of the file they name, so a renamed test cannot leave its
    citation behind. Three ways of naming one are read: ``tests/<file>.py::<name>``; a following ``::<name>`` in
    backticks, which the docs use for another test of the file named last before it; and a bare ``test_<name>``
    in backticks, which must be defined in some file under tests/ (prose does not always say which)."""
    known: dict[Path, set[str]] = {}

    def names(rel: str) -> set[str]:
        path = REPO / rel
        if path not in known:
            known[path] = _test_names(path) if path.is_file() else set()
        return known[path]

    everywhere = set().union(*(names(str(p.relative_to(REPO))) for p in (REPO / "tests").rglob("*.py")))
    stale, counts = [], {"full": 0, "follow-up": 0, "bare": 0}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in TEST_REF.finditer(text):
            counts["full"] += 1
            if not _names_a_test(m.group(2), names(m.group(1))):
                stale.append(f"{_where(doc, text, m.start())}: {m.group(0)}")
        for m in FOLLOW_UP.finditer(text):
            counts["follow-up"] += 1
            files = TEST_FILE.findall(text, 0, m.start())
            if not files or not _names_a_test(m.group(1), names(files[-1])):
                stale.append(f"{_where(doc, text, m.start())}: ::{m.group(1)} (after {files[-1:]})")
        for m in BARE.finditer(text):
            counts["bare"] += 1
            if not _names_a_test(m.group(1), everywhere):
                stale.append(f"{_where(doc, text, m.start())}: {m.group(1)} (in no file under tests/)")
    assert stale == []
    # the patterns still find what the docs write (an empty count would make this test pass on anything)
    assert counts["full"] >= 100 and counts["follow-up"] >= 10 and counts["bare"] >= 10, counts


def test_code_named_by_a_short_path_exists() -> None:
    """A name the docs give after a file named without ``tests/`` (``test_ranks.py::test_...``, a test file found
    under tests/; ``compare/modules.py::_module_keyer``, a module of the package) is defined in that file: the
    pattern of the test above starts at ``tests/``, so these were read by none."""
    package, stale, count = REPO / "msprof_compare", [], 0
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in SHORT_REF.finditer(text):
            count += 1
            rel = m.group(1)
            found = sorted((REPO / "tests").rglob(rel)) if Path(rel).name.startswith("test_") else \
                [package / rel] if (package / rel).is_file() else []
            if len(found) != 1 or not _names_a_test(m.group(2), _test_names(found[0])):
                stale.append(f"{_where(doc, text, m.start())}: {m.group(0)}")
    assert stale == []
    assert count >= 3


def test_paths_under_tests_in_the_docs_exist() -> None:
    """Every path the docs give under the repository's tests/ (and tools/, bench/, docs/, sample_data/, the package
    and .ci/: the scripts a user is told to run) exists (a glob such as
    ``tests/data/kineto/alexnet_h200_rank0.*.pt.trace.json.gz`` matches a file). A path counts when ``tests/``
    starts it: one that follows a path character (``hta/tests/data/...``, ``samples/tracelens/tests/...``) is a
    file of the samples, which the tests/data READMEs name as the source of an excerpt."""
    stale, count = [], 0
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in REPO_PATH.finditer(text):
            count += 1
            path = m.group(0)
            if not (any(REPO.glob(path)) if "*" in path else (REPO / path).exists()):
                stale.append(f"{_where(doc, text, m.start())}: {path}")
    assert stale == []
    assert count >= 150


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown text: lower case, every character but letters, digits,
    ``_``, ``-`` and spaces dropped, spaces turned to ``-``; a repeated anchor gets ``-1``, ``-2``, ... Lines in
    fenced code blocks are no headings."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r" {0,3}#{1,6} +(.*?)(?: +#+)? *$", line)
        if fenced or not heading:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))  # a link's text only
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def test_github_anchor_rules() -> None:
    """The slug rules on headings of differences.md and README.md, written out by hand."""
    doc = ("# Top\n## Exit codes and the one-line error path (CLI, script)\n"
           "## GPU computing / uncovered communication are exact unions (not 1-µs ticks)\n"
           "## `--max_kernel_num` changes the operator sheets\n## Memory\n```\n# a comment\n```\n## Memory\n")
    assert github_anchors(doc) == {"top", "exit-codes-and-the-one-line-error-path-cli-script",
                                   "gpu-computing--uncovered-communication-are-exact-unions-not-1-µs-ticks",
                                   "--max_kernel_num-changes-the-operator-sheets", "memory", "memory-1"}


@pytest.mark.parametrize("name", ["README.md", "docs/differences.md", "docs/performance.md"])
def test_anchor_links_point_at_a_heading(name: str) -> None:
    """Every ``(#anchor)`` link of the file names one of its headings, and a link to another Markdown file's
    anchor (``docs/differences.md#...``) one of that file's."""
    doc = REPO / name
    text = doc.read_text(encoding="utf-8")
    stale = []
    for m in re.finditer(r"\]\(([^)\s#]*)#([^)\s]+)\)", text):
        target = (doc.parent / m.group(1)).resolve() if m.group(1) else doc
        if not target.is_file() or m.group(2) not in github_anchors(target.read_text(encoding="utf-8")):
            stale.append(f"{_where(doc, text, m.start())}: {m.group(1)}#{m.group(2)}")
    assert stale == []


def test_differences_at_a_glance_links_every_section_once() -> None:
    """docs/differences.md's overview ("Differences at a glance") gives each of the file's sections one line, so a
    section added (or retitled) below must be added to it too."""
    text = (REPO / "docs" / "differences.md").read_text(encoding="utf-8")
    glance = text.split("## Differences at a glance\n", 1)[1].split("\n## ", 1)[0]
    sections = [line[3:] for line in text.splitlines() if line.startswith("## ")][1:]
    linked = re.findall(r"^- \[[^\]]+\]\(#([^)]+)\): \S", glance, re.M)
    assert sorted(linked) == sorted(github_anchors("\n".join(f"## {s}" for s in sections)))
    assert len(sections) >= 60  # the split found the sections
    # "Four record where we keep the original's rule": as many lines as say "no difference"
    said = re.search(r"(\w+)\s+record\s+where\s+we\s+keep", glance).group(1).lower()
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    assert words.index(said) == len(re.findall(r"\): no difference", glance))


def test_script_help_section_names_every_option_of_ours_the_script_takes() -> None:
    """docs/differences.md "Script help texts" lists what the script accepts beyond the original's (its section and
    its line in the overview): each of the README's "Additions of ours" that the script's parser takes is named in
    both (``--rank_list`` was added to the script without a word there)."""
    text = (REPO / "docs" / "differences.md").read_text(encoding="utf-8")
    section = text.split("\n## Script help texts\n", 1)[1].split("\n## ", 1)[0]
    said = re.search(r"The script also accepts (.*?) besides", section, re.S).group(1)
    glance = re.search(r"the script also takes (.*?)\.\n", text).group(1)
    usage = help_options(cli.build_script_parser().format_usage())
    ours = {n for n in readme_tables()["ours"] if n in usage}
    assert ours >= {"--output_format", "--fail_on_regression"}
    for words in (said, glance):
        assert ours <= set(re.findall(r"`(--[a-z_]+)`", words)), words


def test_readme_repeated_option_warning_and_exit_table_refusals(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The README quotes the warning for an option given twice and lists in its exit-code table refusals this
    tool adds (session 58): each quoted line is the tool's, each listed case exits with its row's status."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    warning = re.search(r"\(`(-o is given 2 times \('a', 'b'\): [^`]+)`\)", readme).group(1)
    rows = {line.split(" | ", 1)[0].lstrip("| "): line for line in readme.splitlines() if line.startswith("| ")}
    small = str(REPO / "tests" / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_inproc(capsys, "-bp", small, "-d", small, "--enable_api_compare", "-o", "a", "-o", "b")
    assert code == 0 and f"[WARNING] {warning}\n" in err, err
    assert not (tmp_path / "a").exists() and list((tmp_path / "b").glob("*.xlsx"))
    for listed, output in (('`-o " "`', " "), ("`-o .xlsx`", ".xlsx"), ("a control character", "a\tb")):
        assert listed in rows["2"]
        code, _, err = run_inproc(capsys, "-bp", small, "-d", small, "-o", output)
        assert code == 2 and err.count("error:") == 1, (output, err)
    assert "a file named with a trailing `/`" in rows["1"]
    code, _, err = run_inproc(capsys, "-bp", small + "/", "-d", small)
    assert code == 1 and "a path ending in '/' names a folder" in err, err


def test_readme_errors_name_an_input_as_typed_and_its_side(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Errors and exit codes": "an input's error ... also says which side it was given as (`error: ...`: `-d`,
    or the `comparison` argument of `compare()`, whose `ProfileError` carries it as `.side`)", and a quoted
    `-d "~/run"` is named `~/run`. The quoted line is the tool's for a missing run1/trace.json given as -d (the
    bundled H100 trace the base), run from a folder without it; compare() names the same path and side."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    line, flag = re.search(r"given as \(`(error: [^`]+)`: `(-[a-z]+)`, or the `comparison` argument", readme).groups()
    missing = re.fullmatch(r"error: (\S+): no such file or directory \(comparison side\)", line).group(1)
    typed = re.search(r'a quoted `-d "(~/[a-z]+)"` -> `(~/[a-z]+)`', readme).groups()
    assert flag == "-d" and typed[0] == typed[1]
    base = str(REPO / "sample_data" / "bert-small_h100.json.gz")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for given in (missing, typed[0]):
        code, out, err = run_inproc(capsys, flag, given, "-bp", base)
        assert code == 1 and out == "" and [x for x in err.splitlines() if x.startswith("error:")] == [
            f"error: {given}: no such file or directory (comparison side)"], err
    with pytest.raises(api.ProfileError) as info:
        api.compare(base, missing)
    assert info.value.side == "comparison side" and info.value.path == missing
    assert list(tmp_path.iterdir()) == []


def test_schema_names_every_note_check():
    """The result schema's guards Status description lists the checks whose failure is a note; each of
    ``checks.NOTE_CHECKS`` is named there (the NPU-vs-NPU "categories without framework ops" check was added)."""
    from msprof_compare.compare import checks

    text = SCHEMA.read_text()
    lead = "note: a difference that holds for the same workload too and changes how the figures compare ("
    listed = text[text.index(lead) + len(lead):].split(")")[0].split(", ")
    assert sorted(listed) == sorted(checks.NOTE_CHECKS)


def _rendered_parameters(function: object) -> list[str]:
    """A function's parameters as a call's text quotes them: ``name``, ``name=None`` (its default's repr),
    ``*args``, ``**options``."""
    import inspect

    out = []
    for p in inspect.signature(function).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}")
        elif p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}")
        else:
            out.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    return out


def test_readme_api_calls_name_the_real_parameters() -> None:
    """The README quotes calls of the Python API with their parameters (`msprof_compare.compare(base, comparison,
    **options)`); a caller copies those names as keywords. `compare_ranks(base_folder, comparison_folder, ...)` named
    two the function does not take (it takes ``base``, ``comparison``): each quoted call lists the function's own
    parameters in order, and leaves out only trailing ones with a default (`ranks(folder)`: ``force`` said apart)."""
    import inspect

    import msprof_compare

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    calls = re.findall(r"`msprof_compare\.(\w+)\(([^)`]*)\)`", readme)
    assert {name for name, _ in calls} >= {"compare", "compare_ranks", "ranks_overview", "ranks"}, calls
    for name, args in calls:
        function = getattr(msprof_compare, name)
        quoted = [a.strip() for a in args.split(",") if a.strip()]
        real = _rendered_parameters(function)
        rest = list(inspect.signature(function).parameters.values())[len(quoted):]
        assert real[:len(quoted)] == quoted and all(p.default is not p.empty for p in rest), (name, quoted, real)


def test_readme_python_blocks_run_and_print_the_ranks_figures(samples: Path, tmp_path: Path) -> None:
    """README "Multi-rank runs": its two Python blocks (``compare_ranks`` in a loop, ``ranks_overview`` through a
    generator of one's own) were run by no test. Each runs as it stands, from a folder whose ``text`` is the samples'
    ``pytorch/text`` and that holds ``out/``: it writes each rank's workbook there, and what it prints is the
    figures of the README's rank table above it (the CLI's run of the same folders): the first block each rank's
    verdict with its E2E figures, the second the ranks by E2E change, largest first, with their E2E and
    Uncovered Comm. changes."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Multi-rank runs: compare rank by rank", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    table = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    rows = {int(cells[0]): cells for line in table.splitlines() if re.match(r"\|\s+\d+\s+\|", line)
            for cells in [[c.strip() for c in line.strip("|").split("|")]]}
    assert sorted(rows) == [0, 1]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "MSPROF_ANALYZE_LOG_LEVEL")}
    printed = []
    for i, block in enumerate(blocks):
        cwd = tmp_path / str(i)
        (cwd / "out").mkdir(parents=True)
        (cwd / "text").symlink_to(samples / "msinsight" / "test" / "data" / "pytorch" / "text")
        proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, cwd=cwd,
                              env={**env, "PYTHONPATH": str(REPO)}, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert sorted(p.name for p in (cwd / "out").iterdir()) == ["rank0.xlsx", "rank1.xlsx"]
        printed.append(proc.stdout.splitlines())
    # Rank | Base | Comparison | Diff | Diff % | Computing | Uncovered Comm. | Free | Largest Step
    assert [line.split(": the comparison")[0] for line in printed[0]] == [
        f"{rank} E2E time {c[1]} ms -> {c[2]} ms ({c[3]} ms, {c[4]})" for rank, c in sorted(rows.items())]
    assert printed[1][0].split() == ["rank", "e2e.diff_ms", "uncovered_communication.diff_ms"]
    shown = [line.split()[1:] for line in printed[1][1:]]
    assert [int(rank) for rank, _, _ in shown] == sorted(rows, key=lambda r: -float(rows[r][3]))
    for rank, diff, uncovered in shown:
        assert (f"{float(diff):+.3f}", f"{float(uncovered):+.3f}") == (rows[int(rank)][3], rows[int(rank)][6])


def test_readme_figures_of_the_tracelens_traces_are_todays(samples: Path, capsys: pytest.CaptureFixture,
                                                          tmp_path: Path) -> None:
    """README's memory and communication sections quote three runs of tracelens' traces that no test made: each
    figure they give is the run's (read from the README's words, so an edit of either side is caught)."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    traces = samples / "tracelens" / "tests" / "traces"

    def run(name: str, base: Path, comparison: Path, *flags: str) -> str:
        code, out, err = run_inproc(capsys, "-bp", str(base), "-d", str(comparison), *flags, "-o", str(tmp_path / name))
        assert code == 0, err
        return " ".join(out.split())

    # "TimeSformer on an H100 vs an MI300X allocates 6,259.77 vs 12,634.74 MB in its 85 `aten::linear` calls,
    # while `Mem Usage` reads 4.27G vs 6.21G"
    said = re.search(r"TimeSformer on an H100 vs an MI300X allocates ([\d,.]+) vs ([\d,.]+) MB in its (\d+) "
                     r"`aten::linear` calls, while `Mem Usage` reads ([\d.]+G) vs ([\d.]+G)", readme).groups()
    tf = "facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    out = run("tf", traces / "h100" / tf, traces / "mi300" / tf, "--enable_profiling_compare",
              "--enable_memory_compare")
    (stat,) = list((tmp_path / "tf").glob("*.xlsx"))
    import openpyxl

    book = openpyxl.load_workbook(stat, read_only=True)
    try:  # a read-only book holds its file open until closed (a ResourceWarning that -W error turns into a failure)
        rows = list(book["MemoryCompareStatistic"].iter_rows(values_only=True))
    finally:
        book.close()
    (linear,) = [r for r in rows if r[1] == "aten::linear"]  # Top, Operator Name, Base Allocated Duration(ms), ...
    assert (f"{linear[3]:,.2f}", f"{linear[6]:,.2f}", str(linear[4]), str(linear[7])) == \
        (said[0], said[1], said[2], said[2])
    assert re.findall(r"\| GPU \|[^G]*?\| +([\d.]+G) +\|", out) == [said[3], said[4]]  # the rows' Mem Usage

    # the B200 eager rank against vLLM's one-GPU decode: "2.142 ms -> 0.000 ms (-2.142 ms, -100.00%)." then "The
    # comparison side's trace holds no collective kernel (NCCL / RCCL or other), so its 0 ms is a reading: ..."
    said = re.search(r"the B200 eager rank against vLLM's one-GPU decode: \"(.+?)\" then \"(.+?) \.\.\.\"\)",
                     readme).groups()
    out = run("comm", traces / "b200" / "eager_trace.json.gz",
              traces / "inference" / "vllm_decode_full" / "graph_execution.json.gz", "--enable_communication_compare")
    assert f"Communication time (CommunicationCompare's op rows) {said[0]} {said[1]}" in out

    # "vLLM's capture traces hold `capture_32_FULL` 513.54 MB against `capture_8192_PIECEWISE` 20764.11 MB, and the
    # table lists only the second"
    said = re.search(r"vLLM's capture traces hold `(\w+)` ([\d.]+) MB against `(\w+)` ([\d.]+) MB, and the table "
                     r"lists only the second", readme).groups()
    out = run("mem", *[next((traces / "inference" / f / "capture_traces").glob("*.pt.trace.json.gz"))
                       for f in ("vllm_decode_full", "vllm_prefilldecode_piecewise")], "--enable_memory_compare")
    table = out.split("Top Memory Contributors", 1)[1].split("Note:", 1)[0]
    assert re.findall(r"\| 1 \| (\w+) +\| +0\.00 \| +([\d.]+) \|", table) == [(said[2], said[3])]
    assert "| 2 |" not in table
    assert f"(base {said[0]} {said[1]} MB, comparison {said[2]} {said[3]} MB;" in out


def test_readme_exit_table_usage_row_each_case_exits_2(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's exit-code table lists, in its row for status 2, what counts as bad usage; the test above runs
    three of its cases (session 58). Each other case it names runs here and exits 2 with one `error:` line, so a
    refusal moved to another status (or dropped) cannot leave the row behind. Not run: "not writable" (the suite may
    run as root, whom no mode stops)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| 2 | bad usage")]
    small = str(REPO / "tests" / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json")
    db = str(REPO / "tests" / "data" / "db" / "l1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "open").mkdir(mode=0o777)
    os.chmod(tmp_path / "open", 0o777)
    (tmp_path / "link").symlink_to(tmp_path / "open")
    cases = {
        "a missing or unknown option": [["-d", small], ["-bp", small, "-d", small, "--no_such_flag"]],
        "an option's value left out before the next option, a word that reads as one, or `--`": [
            ["-o", "--enable_api_compare"], ["-o", "--foo"], ["-o", "--"]],
        "an `-o` directory every user may write to without the sticky bit": [["-o", "open"]],
        "`--max_kernel_num` ≤ 3": [["--max_kernel_num", "3"]],
        "a malformed `--op_name_map`": [["--op_name_map", "{'a':"]],
        "or one with a name over 200 characters": [["--op_name_map", str({"a": "b" * 201})]],
        "an unknown `--output_format`": [["--output_format", "csv"]],
        "`-o -` with an `--output_format` without `json`": [["-o", "-", "--output_format", "xlsx"]],
        "a `--fail_on_regression` that is no percentage ≥ 0": [["--fail_on_regression", "-1"],
                                                                ["--fail_on_regression", "abc"]],
        "a `--gpu_flow_cat` that is blank": [["--gpu_flow_cat", "  "]],
        "or over 20 characters": [["--gpu_flow_cat", "x" * 21]],
        "only one of the step options": [["--base_step", "1"]],
        "a step that is no integer": [["--base_step", "x", "--comparison_step", "1"]],
        "a step with GPU data": [["--base_step", "1", "--comparison_step", "1"]],
        "or one the data does not hold": [["-bp", db, "-d", db, "--base_step", "1", "--comparison_step", "1"]],
        "an `-o` that is a file, a symbolic link": [["-o", "a_file"], ["-o", "link"]],
        "names a file over 255 bytes": [["-o", "r" * 256 + ".xlsx"]],
        "an empty value of an option other than": [["--output_format", ""], ["--max_kernel_num", ""]],
        "a `--transparent_op` that is blank or over 200 characters": [["--transparent_op", " "],
                                                                       ["--transparent_op", "t" * 201]],
        "cannot be created": [["-o", "a_file/sub"]],
        "a path too long for the system to hold the reports in it (PATH_MAX)": [
            ["-o", "/".join(c * 250 for c in "abcdefghijklmnopq")]],
        "a name of blanks alone (`-o \" \"`)": [["-o", " "]],
        "no name before the extension (`-o .xlsx`)": [["-o", ".xlsx"]],
        "or a control character": [["-o", "a\tb"]],
    }
    for listed, runs in cases.items():
        assert listed in row, listed
        for args in runs:
            given = args if "-d" in args else ["-bp", small, "-d", small, *args]
            code, _, err = run_inproc(capsys, *given)
            lines = [line for line in err.splitlines() if line.startswith("error: ")]
            assert code == 2 and len(lines) == 1, (listed, args, err)
            if listed == "or one the data does not hold":  # "starts with the input's path": the .db here
                assert lines[0].startswith(f"error: {db}/ascend_pytorch_profiler_0.db: "), err
    # a file system without a free block is found before the compare, so it is bad usage (2), where a disk that fills
    # while writing is the data row's (1); this file system, its free counts zeroed
    listed = "lies on a file system with no free space left (found before anything is read)"
    assert listed in row and "a disk that fills while the reports are written" in readme
    real = os.statvfs
    monkeypatch.setattr(os, "statvfs", lambda path: os.statvfs_result((*real(path)[:3], 0, 0, *real(path)[5:])))
    monkeypatch.setattr(api, "cli_compare", lambda *a, **k: pytest.fail("compared on a full disk"))
    code, _, err = run_inproc(capsys, "-bp", small, "-d", small, "-o", "full")
    assert code == 2 and [line for line in err.splitlines() if line.startswith("error: ")] == [
        f"error: output directory full (its nearest existing folder, {tmp_path}): no space left on its file system "
        "(0 bytes free); free some space or write the reports elsewhere"], err  # "-o full" as typed
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    # with --force the open folder is written into
    code, _, err = run_inproc(capsys, "-bp", small, "-d", small, "--enable_api_compare", "-o", "open", "--force")
    assert code == 0 and list((tmp_path / "open").glob("*.xlsx")), err
    assert "an unknown sub-command (`msprof-analyze cluster`)" in row
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["cluster", "-d", small])
    assert info.value.code == 2 and capsys.readouterr().err.count("error: ") == 1
    assert "or none (`msprof-analyze` alone: the line names `compare` and its usage)" in row
    with pytest.raises(SystemExit) as info:
        cli.analyze_main([])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("error: ") == 1 and "msprof-analyze compare -d COMPARISON" in err


def test_readme_exit_table_data_row_each_case_exits_1(samples: Path, capsys: pytest.CaptureFixture,
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's exit-code row for status 1: each kind of bad input it names (and a side without E2E time under
    the gate) exits 1 with one `error:` line that names the input, and the size cap and the link are lifted by
    ``--force``. A full disk, running out of memory and internal errors have their own tests
    (tests/test_output_safety.py, tests/test_cli.py)."""
    import gzip

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| 1 | unreadable or invalid data")]
    sample = REPO / "sample_data" / "bert-small_h100.json.gz"
    real = gzip.decompress(sample.read_bytes())
    monkeypatch.chdir(tmp_path)
    Path("empty.json").write_bytes(b"")
    Path("cut.json").write_bytes(real[: len(real) // 2])
    Path("list.json").write_bytes(b"[1, 2, 3]")
    Path("none").mkdir()
    Path("two").mkdir()
    Path("two/a.pt.trace.json").write_bytes(real)
    Path("two/b.pt.trace.json").write_bytes(real)
    Path("cpu.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5}]}))
    Path("link.json.gz").symlink_to(sample)
    legacy = samples / "mindinsight/tests/utils/resource/run_1/normal_run/profiler/timeline_display_1.json"
    cases = {
        "missing path": ["-bp", "no_such.json"],
        "a symbolic link": ["-bp", "link.json.gz"],
        "an input over its size cap without `--force`": ["-bp", str(sample), "@cap"],
        "empty or truncated JSON": ["-bp", "empty.json"],
        "truncated JSON": ["-bp", "cut.json"],
        "a JSON that is no trace": ["-bp", "list.json"],
        "a directory with no or several traces": ["-bp", "none"],
        "several traces": ["-bp", "two"],
        "a GPU trace without kernels": ["-bp", "cpu.json"],
        "a file named with a trailing `/`": ["-bp", f"{sample}/"],
        "a side without E2E time under `--fail_on_regression`": ["-bp", str(legacy), "-d", str(legacy),
                                                                 "--fail_on_regression", "5"],
    }
    for listed, args in cases.items():
        assert listed in row, listed
        if "@cap" in args:
            args = args[:-1]
            monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "1000")
        given = args if "-d" in args else [*args, "-d", str(sample)]
        code, _, err = run_inproc(capsys, *given, "-o", str(tmp_path / "out"))
        monkeypatch.delenv("MSPROF_COMPARE_MAX_TRACE_BYTES", raising=False)
        lines = [line for line in err.splitlines() if line.startswith("error: ")]
        assert code == 1 and len(lines) == 1, (listed, err)
        if listed != "a side without E2E time under `--fail_on_regression`":
            assert lines[0].startswith(f"error: {args[1]}"), (listed, lines)
        else:  # "(the side of the input the file belongs to: ... `both sides` for one input given twice)"
            assert lines[0].startswith(f"error: {legacy}: ") and lines[0].endswith(" (both sides)"), lines
    # a --transparent_op name of no op of either side: exit 1, nothing written, the error names the option and both
    # inputs (no file of one input is to blame)
    listed = "a `--transparent_op` name of no op of either side"
    assert listed in row
    code, _, err = run_inproc(capsys, "-bp", str(sample), "-d", str(sample), "--transparent_op", "no_such_op",
                              "-o", str(tmp_path / "none_of_them"))
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: --transparent_op 'no_such_op' "), err
    assert not (tmp_path / "none_of_them").exists() or not any((tmp_path / "none_of_them").iterdir())
    # --force accepts the link and the input over its cap
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "1000")
    code, _, err = run_inproc(capsys, "-bp", "link.json.gz", "-d", str(sample), "--force", "--enable_api_compare",
                              "-o", str(tmp_path / "forced"))
    assert code == 0, err



def test_readme_a_setting_of_the_run_that_is_wrong_is_the_runs_error_not_an_inputs(
        samples: Path, capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Commands": a size-cap variable that is no whole number of bytes "is an error (exit 1), whichever kinds
    of file the inputs hold (`--force` reads no cap)"; the exit-1 row: a file of neither input gets `(<hint>)`, no
    side. The variable was read inside the base side's load, so the line said "(base side: e.g. ...)" and, between
    two folders of ranks, "rank 0: ..." of a setting of the whole run. Two Kineto traces (no DB is read, so the DB
    cap is no cap of theirs) and the two-rank text runs, on the CLI, the script and compare(); and a keyword file
    (MSPROF_COMPARE_CONFIG) of a rank-by-rank run, which rank 0's compare named "rank 0: ..." ("A rank whose input
    is bad stops the run with its error prefixed by `rank N:`": the file is no rank's input)."""
    from msprof_compare import compare

    sample = REPO / "sample_data"
    pair = [str(sample / "bert-small_h100.json.gz"), str(sample / "bert-small_mi300.json.gz")]
    text = samples / "msinsight" / "test" / "data" / "pytorch" / "text"
    folders = [str(text / "level0"), str(text / "level1")]
    monkeypatch.setenv("MSPROF_COMPARE_MAX_DB_BYTES", "12 GB")
    hint = "(e.g. MSPROF_COMPARE_MAX_DB_BYTES=21474836480 for 20 GiB; unset it for 8589934592)"
    expected = f"error: MSPROF_COMPARE_MAX_DB_BYTES: '12 GB' is not a whole number of bytes {hint}"
    for base, comparison in (pair, folders):
        code, out, err = run_inproc(capsys, "-bp", base, "-d", comparison, "-o", str(tmp_path / "out"))
        assert code == 1 and [line for line in err.splitlines() if line.startswith("error: ")] == [expected], err
        assert not (tmp_path / "out").exists() and "rank 0" not in out + err
        assert cli.script_main([base, comparison, "-o", str(tmp_path / "out")]) == 1
        assert expected in capsys.readouterr().err.splitlines()
    with pytest.raises(api.ProfileError) as raised:
        compare(*pair)
    assert str(raised.value) == expected.removeprefix("error: ") and raised.value.side is None
    # --force reads no cap: the same run goes on
    code, _, err = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--enable_api_compare", "--force",
                              "-o", str(tmp_path / "forced"))
    assert code == 0, err
    # a keyword file that lacks a key of the original's (README: "an error, exit 1, when a run reads the lists") is
    # the run's too: its line, "(named by MSPROF_COMPARE_CONFIG; ...)", without rank 0's name or a report written
    monkeypatch.delenv("MSPROF_COMPARE_MAX_DB_BYTES")
    ini = tmp_path / "keywords.ini"
    ini.write_text("[OP_MASK]\n", encoding="utf-8")
    monkeypatch.setenv("MSPROF_COMPARE_CONFIG", str(ini))
    code, out, err = run_inproc(capsys, "-bp", folders[0], "-d", folders[1], "--enable_profiling_compare",
                                "-o", str(tmp_path / "ranks"))
    assert code == 1 and [line for line in err.splitlines() if line.startswith("error: ")] == [
        f"error: {ini}: Missing required key 'FA_MASK' in section 'OP_MASK'. (named by MSPROF_COMPARE_CONFIG; unset "
        "it to use the packaged lists)"], err
    assert not (tmp_path / "ranks").exists() and "rank 0" not in out + err

def test_readme_idle_sentence_under_the_verdict_is_the_runs() -> None:
    """README, under the bundled pair's run, quotes the verdict's second sentence by its opening words: they open
    the sentence of the CI gate section's JSON example, which ``test_one_line_texts.py::
    test_readme_json_excerpt_is_that_pair_s`` holds to a run of reference pair 4 word for word. The quote read "time
    with no computing and no communication ...", words the tool had left for "no computing, communication or
    copy"."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    (opening,) = re.findall(r'A second sentence follows, "(Most of that difference [^"]*?) \.\.\.", where', readme)
    (whole,) = re.findall(r'"verdict_idle_note": "([^"]+)"', readme)
    assert whole.startswith(opening) and len(opening) > len("Most of that difference is time with no")


def test_readme_reading_the_time_table_figures_are_the_profiles(samples: Path) -> None:
    """README "Reading the time table and the waterfall" answers "why is my E2E not my step time?" and "what is
    Free time?" with figures of two real profiles. Each is read here apart from the tool where it can be: the
    ``ProfilerStep#N`` ranges' durations from the trace files, the NPU export's Stage and Preparing from
    step_trace_time.csv (Stage is the E2E the run reports), and the waterfall's shares as each Delta over the E2E
    change of the run's own ns figures."""
    import csv
    import gzip
    from decimal import ROUND_HALF_UP, Decimal

    from msprof_compare import compare

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    text = " ".join(readme.split("### Reading the time table and the waterfall", 1)[1].split("\n## ", 1)[0].split())

    def said(pattern: str) -> tuple[str, ...]:
        match = re.search(pattern, text)
        assert match, pattern
        return match.groups()

    def step_ms(events: list, name: str) -> str:  # the host range of the step (user_annotation / cpu_op)
        (dur,) = [e["dur"] for e in events if e.get("name") == name and e.get("cat") != "gpu_user_annotation"]
        return f"{float(dur) / 1000:.3f}"

    # the bundled H100 trace
    h100, mi300 = REPO / "sample_data" / "bert-small_h100.json.gz", REPO / "sample_data" / "bert-small_mi300.json.gz"
    with gzip.open(h100, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    step, e2e = said(r"bundled H100 trace's `ProfilerStep#6` spans (\S+) ms, its E2E Time (\S+) ms")
    result = compare(h100, mi300, enable_profiling_compare=True)
    wf = result.waterfall.set_index("Step")
    assert (step, e2e) == (step_ms(events, "ProfilerStep#6"), f"{wf.loc['Base E2E', 'Base(ns)'] / 1e6:.3f}")
    # Free: Other of E2E, and the shares of the two steps the README names
    free, of = said(r"`Free: Other` (\S+) of (\S+) ms\)")
    assert (free, of) == (f"{wf.loc['Free: Other', 'Base(ns)'] / 1e6:.3f}", e2e)
    total = int(wf.loc["Comparison E2E", "Comparison(ns)"]) - int(wf.loc["Base E2E", "Base(ns)"])
    change, fa, fa_share, fo, fo_share = said(r"bundled pair got (\S+) ms faster while its Flash Attention grew by "
                                              r"(\S+) ms: (\S+) %, and its `Free: Other` shrank by (\S+) ms: (\S+) %")
    assert change == f"{-total / 1e6:.3f}"
    for step_name, delta, share in (("Flash Attention (Forward)", fa, fa_share), ("Free: Other", fo, fo_share)):
        d = int(wf.loc[step_name, "Delta(ns)"])
        assert (delta, share) == (f"{abs(d) / 1e6:.3f}", f"{100 * d / total:.1f}"), step_name
    # Flash Attention grew while E2E shrank: a negative share
    assert total < 0 < int(wf.loc["Flash Attention (Forward)", "Delta(ns)"]) and float(fa_share) < 0

    # the msinsight level-1 NPU text export, rank 0
    rank0 = samples / "msinsight" / "test" / "data" / "pytorch" / "text" / "level1" / "rank0_ascend_pt"
    out = rank0 / "ASCEND_PROFILER_OUTPUT"
    trace = json.loads((out / "trace_view.json").read_text(encoding="utf-8"))
    with open(out / "step_trace_time.csv", newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    step, e2e, preparing = said(r"rank 0 `ProfilerStep#50` spans (\S+) ms, its E2E Time (\S+) ms \(step_trace_time"
                                r"\.csv's `Stage`; (\S+) ms of the step pass before its first device task")
    npu = compare(rank0, rank0, enable_profiling_compare=True).waterfall.set_index("Step")
    assert step == step_ms(trace if isinstance(trace, list) else trace["traceEvents"], "ProfilerStep#50")
    assert e2e == f"{float(row['Stage']) / 1000:.3f}" == f"{npu.loc['Base E2E', 'Base(ns)'] / 1e6:.3f}"
    # Preparing 17902.5 us: a half rounds away from zero, as every figure the tool writes
    assert preparing == str((Decimal(row["Preparing"]) / 1000).quantize(Decimal("0.001"), ROUND_HALF_UP))


def test_readme_api_example_runs_and_prints_what_its_comments_say(tmp_path: Path) -> None:
    """README "Commands": the Python example of ``compare()`` on the bundled pair runs as it stands from a folder
    holding ``sample_data`` (the top of the checkout), prints the verdict its comment quotes, which is the console
    block's sentence under the waterfall without its period, the top contributor its comment names with that
    diff, and the path of the workbook it wrote into ``out/``, which it makes."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Commands", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    comments = [line.split("# ", 1)[1] for line in block.splitlines() if line.startswith("print(")]
    console = readme.split("## Install and compare the bundled sample pair", 1)[1]
    (sentence,) = re.findall(r"^(E2E time .*)\.$", console.split("\n## ", 1)[0], re.M)
    (tmp_path / "sample_data").symlink_to(REPO / "sample_data")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "MSPROF_ANALYZE_LOG_LEVEL")}
    proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(REPO)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    verdict, header, first, *_, written = proc.stdout.splitlines()
    assert comments[0].endswith("...") and verdict.startswith(comments[0][:-3].rstrip()) and verdict == sentence
    assert header.split() == ["Name", "Diff(ms)", "Share"]
    assert first.split()[1:3] == comments[1].split()[:2]
    (xlsx,) = (tmp_path / "out").glob("performance_comparison_result_*.xlsx")
    assert Path(written) == xlsx.resolve() and "/out/performance_comparison_result_<UTC timestamp>.xlsx" in comments[2]


def test_schema_says_what_the_signed_shares_are_of() -> None:
    """The result schema describes the two signed shares a reader of the JSON meets beside ``Share``: a
    waterfall step's "Share of E2E Diff" (its delta over the E2E difference; the 'end' row 1.0, the 'start' row
    null) and a contributor's "Share of Net Diff" (its diff over the net change of its level's rows, listed or
    not). On the bundled pair each is recomputed from the figures apart: the steps' ns deltas, and the net of the
    OperatorCompareStatistic sheet's device durations (every operator row, ``--disable_module`` writing them)."""
    import pandas as pd

    from msprof_compare import compare

    schema = json.loads((SCHEMAS / "result.schema.json").read_text(encoding="utf-8"))["$defs"]
    said_e2e = schema["waterfall_step"]["properties"]["Share of E2E Diff"]["description"]
    said_net = schema["contributor"]["properties"]["Share of Net Diff"]["description"]
    assert "Delta(ns) over the E2E difference" in said_e2e and "'end' row holds 1.0" in said_e2e
    assert "net change of every row of its level, listed or not" in said_net
    h100, mi300 = REPO / "sample_data" / "bert-small_h100.json.gz", REPO / "sample_data" / "bert-small_mi300.json.gz"
    result = compare(h100, mi300, enable_profiling_compare=True, enable_operator_compare=True, disable_module=True)
    wf = result.waterfall
    total = int(wf["Comparison(ns)"].iloc[-1]) - int(wf["Base(ns)"].iloc[0])
    shares = wf["Share of E2E Diff"].tolist()
    assert pd.isna(shares[0]) and shares[-1] == 1.0
    assert shares[1:-1] == pytest.approx([int(d) / total for d in wf["Delta(ns)"].iloc[1:-1]], rel=1e-12)
    assert min(shares[1:-1]) < 0 and max(shares[1:-1]) > 1  # signed: growth against a faster E2E, over 100 %
    stat = result.sheet("OperatorCompareStatistic")
    net = (stat["Comparison Device Duration(ms)"] - stat["Base Device Duration(ms)"]).sum()
    contrib = result.contributors
    assert (contrib["Level"] == "operator").all() and len(contrib) < len(stat)
    assert contrib["Share of Net Diff"].tolist() == pytest.approx((contrib["Diff(ms)"] / net).tolist(), rel=1e-6)
    assert (contrib["Share of Net Diff"] < 0).any() and (contrib["Share"] >= 0).all()


def test_schemas_say_whether_a_share_or_a_pct_is_a_fraction_or_a_percent(samples: Path, tmp_path: Path) -> None:
    """A CI script posting "the largest regressions" to a chat met ``Share`` (0.989) beside ``diff_pct`` (+6.02)
    with neither's unit in either schema (user walk 73): every ``*_pct`` field of both schemas says it is in %, and
    every contributor's ``Share`` / ``Cumulative Share`` that it is a fraction. On NPU pair 1 (text, level1 ->
    level2) the JSON's figures are those words: ``summary.e2e.diff_pct`` recomputed from the E2E times of the
    original's workbook (reference-outputs pair 1), and the Shares from the contributors' own Diff(ms) over the
    summed absolute change of OperatorCompareStatistic's rows (``--disable_module`` writes every operator)."""
    import openpyxl

    from msprof_compare import compare

    def fields(node: object, name: str = "") -> list[tuple[str, dict]]:
        out: list[tuple[str, dict]] = []
        if isinstance(node, dict):
            out += [(k, v) for k, v in node.get("properties", {}).items() if isinstance(v, dict)]
            for v in node.values():
                out += fields(v)
        elif isinstance(node, list):
            for v in node:
                out += fields(v)
        return out

    for schema in ("result.schema.json", "ranks.schema.json"):
        said = fields(json.loads((SCHEMAS / schema).read_text(encoding="utf-8")))
        pcts = [(k, v.get("description", "")) for k, v in said if k.endswith("_pct")]
        assert pcts and [k for k, d in pcts if not re.search(r"\bin %|, percent\b|\bpercent\b", d)] == [], schema
        shares = [(k, v.get("description", "")) for k, v in said if k in ("Share", "Cumulative Share")]
        assert [k for k, d in shares if "a fraction" not in d] == [], schema
    ref = openpyxl.load_workbook(samples.parent / "reference-outputs" / "1-npu-text-l1-vs-l2"
                                 / "performance_comparison_result.xlsx", read_only=True)
    e2e = next(r for r in ref["OverallMetrics"].iter_rows(values_only=True) if r[0] == "E2E Time")
    base_ms, comp_ms = e2e[1], e2e[4]  # Duration(ms) of the base (level1) and of the comparison (level2)
    result = compare(NPU_TEXT / "level1" / "rank0_ascend_pt", NPU_TEXT / "level2" / "rank0_ascend_pt",
                     enable_profiling_compare=True, enable_operator_compare=True, disable_module=True)
    doc = json.loads(Path(result.to_json(str(tmp_path / "run.json"))).read_text(encoding="utf-8"))
    assert doc["summary"]["e2e"]["diff_pct"] == pytest.approx((comp_ms - base_ms) / base_ms * 100, rel=1e-9)
    assert -5 < doc["summary"]["e2e"]["diff_pct"] < -4.9  # -4.92 %, in percent, not -0.0492
    stat = result.sheet("OperatorCompareStatistic")
    gross = (stat["Comparison Device Duration(ms)"] - stat["Base Device Duration(ms)"]).abs().sum()
    rows = doc["summary"]["contributors"]
    assert rows and [r["Share"] for r in rows] == pytest.approx([abs(r["Diff(ms)"]) / gross for r in rows],
                                                                rel=1e-6)
    running = 0.0
    for r in rows:
        running += r["Share"]
        assert r["Cumulative Share"] == pytest.approx(running, rel=1e-12)


def test_readme_gate_in_a_pipe_keeps_its_status_with_pipefail(tmp_path: Path) -> None:
    """README's CI section pipes ``-o -`` into jq; a nightly gate written that way passed every regression, as the
    pipe's status is jq's (user walk 73). README says so and gives ``set -o pipefail``: run as it says (a Python
    reader of stdin in jq's place), on the bundled pair the other way round, whose E2E README's example gives as
    3.908 ms -> 3.496 ms, so 3.496 -> 3.908 ms here: +11.78 %, over 5."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    said = "`set -o pipefail; msprof-compare -bp A -d B -o - --fail_on_regression 5 | jq .gate` exits 3"
    assert "In a pipe the shell's status is the last command's" in readme and said in readme
    assert (3.908 - 3.496) / 3.496 * 100 > 5
    mi300, h100 = REPO / "sample_data" / "bert-small_mi300.json.gz", REPO / "sample_data" / "bert-small_h100.json.gz"
    tool = [sys.executable, "-m", "msprof_compare", "compare", "-bp", str(mi300), "-d", str(h100),
            "--enable_profiling_compare", "-o", "-", "--fail_on_regression", "5"]
    reader = [sys.executable, "-c", "import json, sys; print(json.load(sys.stdin)['gate']['exit_code'])"]
    pipe = f"{shlex.join(tool)} 2>/dev/null | {shlex.join(reader)}"
    for options, status in (("", 0), ("set -o pipefail; ", 3)):
        run = subprocess.run(["bash", "-c", options + pipe], capture_output=True, text=True, cwd=tmp_path,
                             timeout=300)
        assert (run.returncode, run.stdout) == (status, "3\n"), (options, run.stderr)


def test_readme_reading_overallmetrics_holds_for_a_gpu_against_an_npu_run(samples: Path, tmp_path: Path) -> None:
    """README "Reading the OverallMetrics sheet" on the AlexNet H200 trace against the NPU level-1 rank 0 export:
    each side's Duration Ratio is its Duration over its own E2E Time, Diff Duration comparison minus base (to 0.01),
    Diff Ratio comparison over base (4 places), written ``INF`` where the base is 0 (the quoted Uncovered
    Communication row), and the tree adds up: Free Time = SDMA + Free, a group = Wait + Transmit, E2E Time =
    Computing + Uncovered Communication + Free Time."""
    import openpyxl

    from msprof_compare import compare

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    text = " ".join(readme.split("### Reading the OverallMetrics sheet", 1)[1].split("\n### ", 1)[0].split())
    (quoted,) = re.findall(r"`Uncovered Communication Time` against the NPU run's (\S+) ms", text)
    (gpu,) = (REPO / "tests" / "data" / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")
    npu = samples / "msinsight" / "test" / "data" / "pytorch" / "text" / "level1" / "rank0_ascend_pt"
    result = compare(gpu, npu, enable_profiling_compare=True)
    ws = openpyxl.load_workbook(result.to_excel(tmp_path))["OverallMetrics"]
    rows = {r[0]: r[1:] for r in ws.iter_rows(min_row=4, values_only=True)}
    e2e = rows["E2E Time"]
    for index, (b, b_ratio, _, c, c_ratio, _, diff, ratio) in rows.items():
        assert (b_ratio, c_ratio) == (pytest.approx(b / e2e[0]), pytest.approx(c / e2e[3])), index
        assert diff == pytest.approx(c - b, abs=0.005 + 1e-9), index
        assert ratio == ("INF" if b == 0 else pytest.approx(round(c / b, 4), abs=1e-4)), index
    uncovered = rows["Uncovered Communication Time"]
    assert (uncovered[0], f"{uncovered[3]:.3f}", uncovered[7]) == (0, quoted, "INF")
    for side in (0, 3):
        assert rows["Free Time"][side] == pytest.approx(rows.get("\tSDMA", (0,) * 8)[side] + rows["\tFree"][side])
        assert rows["\tGroup 0 Communication"][side] == pytest.approx(
            rows.get("\t\tWait", (0,) * 8)[side] + rows["\t\tTransmit"][side])
        assert e2e[side] == pytest.approx(rows["Computing Time"][side] + uncovered[side] + rows["Free Time"][side])


def test_readme_script_logs_as_the_originals_script(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """README, under the bundled pair's run: the script gives no root warning (a user running it as root in a
    container looked for the warning the README promised) and its last line, after the file's, is the one the
    README quotes, with the run's time; the commands' face, as root, gives the warning."""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    (last,) = re.findall(r"no root warning, and a last line `\[\.\.\.\]\[INFO\] ([^`<]*)<h:mm:ss\.ffffff>`", readme)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    pair = [str(REPO / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300")]
    assert cli.script_main([*pair, "--enable_profiling_compare", "-o", str(tmp_path / "script")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert cli.ROOT_WARNING not in "\n".join(err)
    assert re.fullmatch(r"\[[-0-9: ]+\]\[INFO\] " + re.escape(last) + r"\d+:\d\d:\d\d(\.\d{6})?", err[-1]), err[-1]
    assert "The comparison result file has been generated: " in err[-2]
    code, _, face = run_inproc(capsys, "-bp", pair[0], "-d", pair[1], "--enable_profiling_compare",
                               "-o", str(tmp_path / "face"))
    assert code == 0 and cli.ROOT_WARNING in face.splitlines()[0]


def test_readme_root_warning_and_its_skipped_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README, under the bundled pair's run: as root the log starts with the original's warning, quoted there by
    its opening words, and the owner check that ``--force`` skips is skipped: a file of another user's (here: a
    process uid that is not the file's) is refused without ``--force`` unless the process is root."""
    from msprof_compare.errors import ProfileError
    from msprof_compare.loaders import paths

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    (quoted,) = re.findall(r"the log starts with the original's warning `([^`]*) \.\.\.`", readme)
    assert cli.ROOT_WARNING.startswith(quoted)
    trace = tmp_path / "trace.json"
    trace.write_text("{}", encoding="utf-8")
    if os.geteuid() == 0:  # a file of root's would pass the owner check of a root process anyway
        os.chown(trace, 12345, -1)
    owner = trace.stat().st_uid
    assert owner != 0
    monkeypatch.setattr(paths.os, "geteuid", lambda: owner + 1)
    with pytest.raises(ProfileError, match="does not belong to you"):
        paths.check_input(str(trace), force=False)
    paths.check_input(str(trace), force=True)
    monkeypatch.setattr(paths.os, "geteuid", lambda: 0)
    paths.check_input(str(trace), force=False)


def test_readme_contents_links_every_section_once() -> None:
    """README's "Contents" line, under its opening, links each of its ``##`` and ``###`` headings once, in the
    headings' order, so that a section added (or retitled) below must be added to it too."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    contents = readme.split("\nContents: ", 1)[1].split("\n\n", 1)[0]
    linked = re.findall(r"\]\(#([^)]+)\)", contents)
    headings = "\n".join(line for line in readme.split("\nContents: ", 1)[1].splitlines()
                         if re.match(r"#{2,3} ", line))
    in_order = [github_anchors(line) for line in headings.splitlines()]
    assert linked == [next(iter(a)) for a in in_order]


def test_readme_mindspore_profiler_folder_of_one_device_compares_rank_by_rank(capsys: pytest.CaptureFixture,
                                                                               tmp_path: Path) -> None:
    """README "MindSpore profiles": MindSpore's ``profiler/`` folder is a folder of ranks, compared rank by rank
    even for a run on one device (the MindSpore-shaped fixture: ``profiler/`` holding one ``rank-0_..._ascend_ms``):
    a rank table and a report per rank, no time table; its ``*_ascend_ms`` folder gives the single comparison's
    console tables."""
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("a run on one device too: its rank table and a report per rank, without the time table; pass the "
            "`*_ascend_ms` folder for the single comparison's console tables") in text
    profiler = REPO / "tests" / "data" / "npu" / "profiler"
    (rank,) = profiler.glob("*_ascend_ms")
    code, out, _ = run_inproc(capsys, "-bp", str(profiler), "-d", str(profiler), "-o", str(tmp_path / "ranks"))
    assert code == 0 and "Ranks: E2E Time and Diff" in out and "Model Profiling Time Distribution" not in out
    assert [p.name.split("_2")[0] for p in sorted((tmp_path / "ranks").glob("*.xlsx"))] == [
        "performance_comparison_result_rank0", "performance_comparison_result_ranks"]
    code, out, _ = run_inproc(capsys, "-bp", str(rank), "-d", str(rank), "-o", str(tmp_path / "one"))
    assert code == 0 and "Model Profiling Time Distribution" in out and "Ranks:" not in out


def test_readme_overlap_step_of_the_waterfall() -> None:
    """README's account of "Other Computing (minus overlap of categories)": the categories' excess over Computing
    Time, 0 or negative, per side by its sign, and a residual under the quoted 1 µs folded into the largest
    category. Figures by hand: Matmul 600 us + Vector 500 us of kernels, Computing Time the union, short of their
    1,100 us by the time they overlap."""
    from msprof_compare.compare import waterfall
    from msprof_compare.compare.breakdown import Breakdown

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    bullet = " ".join(readme[readme.index("* **The waterfall**"):readme.index("* **Top Contributors**")].split())
    name = re.search(r"the step `(Other Computing \(minus[^`]*)`", bullet)
    assert name and name.group(1) == waterfall.OVERLAP_STEP, bullet
    assert "whose Base and Comparison are 0 or negative" in bullet
    assert "one under 1 µs is added to that side's largest category" in bullet

    def side(matmul: int, vector: int, computing: int) -> Breakdown:
        bd = Breakdown("GPU")
        bd.buckets["matmul_cube"].add(matmul, 1)
        bd.buckets["vector_notrans"].add(vector, 1)
        bd.computing_ns, bd.e2e_ns = computing, 10_000_000
        return bd

    def steps(base: Breakdown, comparison: Breakdown) -> dict[str, tuple[int, int]]:
        wf = waterfall.waterfall(base, comparison)
        inner = wf[~wf["Category"].isin(["start", "end"])]
        return {s: (int(b), int(c)) for s, b, c in zip(inner["Step"], inner["Base(ns)"], inner["Comparison(ns)"],
                                                      strict=True)}

    # base: 600 + 500 us of kernels overlapping by 50 us (Computing 1,050 us); comparison: 20 us in no category
    got = steps(side(600_000, 500_000, 1_050_000), side(600_000, 500_000, 1_120_000))
    assert got[waterfall.OVERLAP_STEP] == (-50_000, 0) and got["Other Computing"] == (0, 20_000)
    assert got["Matmul"] == (600_000, 600_000) and got["Vector"] == (500_000, 500_000)
    # an overlap of exactly 1 us is a step; one of 999 ns is folded into Matmul, the larger category
    assert steps(side(600_000, 500_000, 1_099_000), side(600_000, 500_000, 1_100_000))[
        waterfall.OVERLAP_STEP] == (-1_000, 0)
    folded = steps(side(600_000, 500_000, 1_099_001), side(600_000, 500_000, 1_100_000))
    assert waterfall.OVERLAP_STEP not in folded and "Other Computing" not in folded
    assert folded["Matmul"] == (599_001, 600_000) and folded["Vector"] == (500_000, 500_000)


def _kernel_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _computing(rows: list[dict[str, str]]) -> list[tuple[Decimal, Decimal, dict[str, str]]]:
    """(start, end, row) in us of kernel_details.csv's kernels that are no HCCL op, exactly as written."""
    out = []
    for r in rows:
        if r["Accelerator Core"] == "HCCL" or r["Name"].lower().startswith("hcom"):
            continue
        start = Decimal(r["Start Time(us)"].strip())
        out.append((start, start + Decimal(r["Duration(us)"].strip()), r))
    return out


def _overlaps(kernels: list) -> list[tuple[dict, dict, Decimal]]:
    return [(a[2], b[2], min(a[1], b[1]) - max(a[0], b[0])) for i, a in enumerate(kernels)
            for b in kernels[i + 1:] if min(a[1], b[1]) > max(a[0], b[0])]


def test_readme_npu_causes_of_the_overlap_step(samples: Path, tmp_path: Path) -> None:
    """README's account of the computing residual on NPU exports, from the raw files: the level-1 text export's
    rank 0 runs no two of its 187 computing kernels (kernel_details.csv less the 4 HCCL ops) at once; its two
    DSA_SQE kernels without PMU figures (N/A) last 3.400 + 2.120 us; its Overlap Analysis "Computing" spans (one
    per kernel, each starting where its kernel_details.csv row does) are 33 x 1 ns longer and 14 x 1 ns shorter
    than the rows' Duration(us). So its Other Computing is 5,520 + 19 ns and no overlap step; the DB exports'
    residual is 0 (each compute task categorised, none overlapping: their union is their sum, by SQL). The advisor
    kernel_details.csv: 7 pairs of kernels overlap, 73.74 + 105.6 + 395.74 + 92.7 + 99.54 + 73.96 + 395.44 us, each
    an AI_CPU or DSA_SQE task without PMU figures beside an AI Core kernel. A DSA task of the DB excerpt l1 moved
    to start with the kernel before it (3.340 us inside trans_TransData_11's 21.461 us) makes the DB's overlap
    step -3,340 ns."""
    from dbutil import edited_copy, sql

    from msprof_compare.api import Options, load_profile
    from msprof_compare.compare import waterfall
    from msprof_compare.compare.breakdown_db import db_breakdown
    from msprof_compare.compare.breakdown_npu import npu_breakdown

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    bullet = " ".join(readme[readme.index("* **The waterfall**"):readme.index("* **Top Contributors**")].split())
    for claim in ("no NPU sample runs two computing kernels at once",
                  "rank 0 reads `Other Computing` 0.006 ms, its two DSA dropout-mask kernels (5.520 µs",
                  "19 ns of rounding", "33 of its 187 computing kernels are 1 ns longer in the lane, 14 shorter",
                  "put such kernels in a category (Vector) and read 0", "7 overlaps, 1.237 ms",
                  "a text export leaves them in no category, so they shorten `Other Computing`",
                  "a DB export categorises them, and the time they share with another kernel shows in this step"):
        assert claim in bullet, claim

    out = NPU_TEXT / "level1" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    kernels = _computing(_kernel_rows(out / "kernel_details.csv"))
    assert len(kernels) == 187 and not _overlaps(kernels)
    no_pmu = [(r["Accelerator Core"], Decimal(r["Duration(us)"])) for _, _, r in kernels
              if r["aiv_vec_time(us)"] == "N/A" and r["aicore_time(us)"] == "N/A"]
    assert no_pmu == [("DSA_SQE", Decimal("3.4")), ("DSA_SQE", Decimal("2.12"))]
    trace = json.loads((out / "trace_view.json").read_text(encoding="utf-8"), parse_float=Decimal)
    lane = next(e["pid"] for e in trace if e.get("ph") == "M" and e.get("name") == "process_name"
                and e["args"]["name"] == "Overlap Analysis")
    spans = {Decimal(str(e["ts"])): Decimal(str(e["dur"])) for e in trace
             if e.get("ph") == "X" and e["pid"] == lane and e["name"] == "Computing"}
    assert len(spans) == 187
    longer = sorted(spans[start] - (end - start) for start, end, _ in kernels)
    ns = Decimal("0.001")
    assert (longer.count(ns), longer.count(-ns), longer.count(0)) == (33, 14, 140)
    bd = npu_breakdown(load_profile(str(out.parent), Options()))
    assert bd.computing_ns - bd.categorised_ns == 5_520 + 33 - 14
    steps = waterfall.waterfall(bd, bd).set_index("Step")["Base(ns)"]
    assert steps["Other Computing"] == 5_539 and waterfall.OVERLAP_STEP not in steps

    join = "FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
    for level in ("level0", "level1", "level2"):
        db = next((samples / "msinsight" / "test" / "data" / "pytorch" / "db" / level / "rank0_ascend_pt").rglob(
            "ascend_pytorch_profiler_*.db"))
        tasks = sql(db, f"SELECT t.startNs, t.endNs {join} ORDER BY t.startNs")
        assert all(b[0] >= a[1] for a, b in zip(tasks[:-1], tasks[1:], strict=True))  # union = sum
        bd = db_breakdown(load_profile(str(db.parent.parent), Options()))
        assert bd.computing_ns == bd.categorised_ns == sum(e - s for s, e in tasks), level

    advisor = samples / "mstt" / "profiler" / "msprof_analyze" / "test" / "ut" / "advisor" / "advisor_backend" / \
        "compute_advice" / "kernel_details.csv"
    pairs = _overlaps(_computing(_kernel_rows(advisor)))
    assert sum(d for _, _, d in pairs) == Decimal("1236.72") and len(pairs) == 7
    for a, b, _ in pairs:
        assert {a["Accelerator Core"], b["Accelerator Core"]} & {"AI_CPU", "DSA_SQE"}
        assert {a["Accelerator Core"], b["Accelerator Core"]} & {"AI_CORE", "AI_VECTOR_CORE"}
        assert a["Stream ID"] != b["Stream ID"]
        assert [r["aiv_time(us)"] for r in (a, b) if r["Accelerator Core"] in ("AI_CPU", "DSA_SQE")] == ["N/A"]

    excerpt = REPO / "tests" / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    start, end, kind = sql(excerpt, f"SELECT t.startNs, t.endNs, c.taskType {join} WHERE c.globalTaskId = 34")[0]
    prev = sql(excerpt, f"SELECT t.startNs, t.endNs {join} WHERE t.endNs <= ? ORDER BY t.startNs DESC LIMIT 1",
               (start,))[0]
    assert sql(excerpt, "SELECT value FROM STRING_IDS WHERE id = ?", (kind,)) == [("DSA_SQE",)]
    assert (end - start, prev[1] - prev[0]) == (3_340, 21_461)
    (tmp_path / "moved").mkdir()
    moved = edited_copy(excerpt, tmp_path / "moved" / excerpt.name,
                        f"UPDATE TASK SET startNs = {prev[0]}, endNs = {prev[0] + 3_340} WHERE globalTaskId = 34")
    bd = db_breakdown(load_profile(str(moved.parent), Options()))
    assert bd.computing_ns - bd.categorised_ns == -3_340
    assert waterfall.waterfall(bd, bd).set_index("Step")["Base(ns)"][waterfall.OVERLAP_STEP] == -3_340


def test_a_step_50_run_of_the_npu_samples_is_the_whole_profiles(samples: Path) -> None:
    """docs/differences.md: the msinsight AlexNet exports hold one step, ProfilerStep#50 (STEP_TIME 50), with every
    kernel_details.csv row and compute task inside it, so each sheet of a step-50 run is the whole profile's but
    ApiCompare's row order. By the raw files: the trace's one marker spans every kernel_details.csv start; STEP_TIME's
    one row every compute task's start (SQL)."""
    from dbutil import sql

    from msprof_compare.api import compare

    doc = " ".join((REPO / "docs" / "differences.md").read_text(encoding="utf-8").split())
    assert ("every kernel_details.csv row and compute task inside it (only the PROFILING_ENABLE / PROFILING_DISABLE "
            "tasks lie outside), so each sheet of a step-50 run is the whole profile's, ApiCompare's row order aside"
            ) in doc
    root = samples / "msinsight" / "test" / "data" / "pytorch"
    out = root / "text" / "level1" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    trace = json.loads((out / "trace_view.json").read_text(encoding="utf-8"), parse_float=Decimal)
    (marker,) = [e for e in trace if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    lo = Decimal(str(marker["ts"]))
    starts = [Decimal(r["Start Time(us)"].strip()) for r in _kernel_rows(out / "kernel_details.csv")]
    assert marker["name"] == "ProfilerStep#50" and lo <= min(starts) and max(starts) <= lo + Decimal(str(marker["dur"]))
    db = next((root / "db" / "level1" / "rank0_ascend_pt").rglob("ascend_pytorch_profiler_*.db"))
    assert sql(db, "SELECT id, count(*) FROM STEP_TIME") == [(50, 1)]
    assert sql(db, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId, "
                   "STEP_TIME s WHERE t.startNs < s.startNs OR t.startNs > s.endNs") == [(0,)]
    every = {"enable_profiling_compare": True, "enable_operator_compare": True, "enable_memory_compare": True,
             "enable_communication_compare": True, "enable_api_compare": True, "enable_kernel_compare": True}
    for kind in ("text", "db"):
        base, comparison = (str(root / kind / level / "rank0_ascend_pt") for level in ("level1", "level2"))
        whole = compare(base, comparison, **every)
        step = compare(base, comparison, base_step=50, comparison_step=50, **every)
        assert step.sheet_names == whole.sheet_names and "ApiCompare" in whole.sheet_names
        for name in whole.sheet_names:
            a, b = whole.sheet(name), step.sheet(name)
            if name == "ApiCompare":  # the same rows, in another order
                a, b = (x.drop(columns="Order Id").sort_values("api name").reset_index(drop=True) for x in (a, b))
            assert a.equals(b), (kind, name)


def test_readme_slim_pickle_sizes_are_the_bundled_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """README "Commands", ``.slim()``: the pickle sizes it quotes for the bundled pair (KB of 1,000 bytes, the
    default protocol) are this tree's, within 1 % (pickle framing and library versions move a few hundred bytes;
    the figures drifted from 356 / 619 KB to 348 / 610 KB between session 54 and session 71 unseen)."""
    import pickle

    from msprof_compare.api import compare

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    ((slim_kb, full_kb),) = re.findall(r"the bundled pair pickles to (\d+) KB instead of (\d+) KB", readme)
    monkeypatch.chdir(REPO)  # the paths of the README's example, as a result keeps them
    result = compare("sample_data/bert-small_h100.json.gz", "sample_data/bert-small_mi300.json.gz")
    full, slim = len(pickle.dumps(result)) / 1000, len(pickle.dumps(result.slim())) / 1000
    assert slim == pytest.approx(int(slim_kb), rel=0.01) and full == pytest.approx(int(full_kb), rel=0.01), (slim, full)


def test_a_sheet_over_excels_rows_is_cut_with_a_warning_not_in_the_json(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    """docs/differences.md, "Long detail texts are not cut short in the data": a sheet of more rows than Excel holds
    gets those that fit below its 3 header rows, with the warning the section quotes (its figures this run's), and
    the JSON report keeps every row. Excel's 1,048,576 rows are lowered to OverallMetrics' rows of the bundled pair
    (a sheet that large takes minutes to build); the section's own figures are checked against that limit."""
    import logging

    import openpyxl

    from msprof_compare.api import compare
    from msprof_compare.report import excel

    doc = " ".join((REPO / "docs" / "differences.md").read_text(encoding="utf-8").split())
    quoted = re.search(r"with a warning, `(Sheet \S+ has ([\d,]+) rows; Excel holds at most ([\d,]+), the rest are "
                       r"not written\.)`, and the JSON report and the API keep every row", doc)
    assert quoted and int(quoted.group(3).replace(",", "")) == excel.MAX_ROWS - excel.HEADER_ROWS == 1_048_573
    result = compare(str(REPO / "sample_data" / "bert-small_h100.json.gz"),
                     str(REPO / "sample_data" / "bert-small_mi300.json.gz"), enable_profiling_compare=True)
    rows = len(result.sheet("OverallMetrics"))
    monkeypatch.setattr(excel, "MAX_ROWS", excel.HEADER_ROWS + rows - 2)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        xlsx = result.to_excel(str(tmp_path))
    said = quoted.group(1).replace("OperatorCompare", "OverallMetrics").replace(quoted.group(2), str(rows), 1)
    assert said.replace(quoted.group(3), str(rows - 2)) in caplog.messages
    ws = openpyxl.load_workbook(xlsx, read_only=True)["OverallMetrics"]
    assert sum(1 for row in ws.iter_rows(min_row=excel.HEADER_ROWS + 1) if any(c.value is not None for c in row)) \
        == rows - 2
    (sheet,) = [s for s in json.loads(Path(result.to_json(str(tmp_path))).read_text())["sheets"]
                if s["name"] == "OverallMetrics"]
    assert len(sheet["rows"]) == rows


def test_readme_log_levels_and_an_unknown_one(tmp_path: Path) -> None:
    """README "Commands": the levels `MSPROF_ANALYZE_LOG_LEVEL` takes are the tool's, and another value "is warned
    about and read as `INFO`": a fresh process (the warning is said once per process) warns, naming the value and
    the levels, and then logs the INFO lines of a run."""
    from msprof_compare import logs

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    said = re.search(r"read from `MSPROF_ANALYZE_LOG_LEVEL` \((.+?); `DEBUG` adds only (.+?); another value is "
                     r"warned about and read as `INFO`\)", readme)
    assert said and re.findall(r"`([A-Z]+)`", said.group(1)) == list(logs._LEVELS)
    small = str(REPO / "tests" / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", small, "-d", small,
                           "--enable_api_compare", "-o", str(tmp_path)], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(REPO), "MSPROF_ANALYZE_LOG_LEVEL": "verbose"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert [line.split("][WARNING] ", 1)[1] for line in lines if "[WARNING] Ignoring" in line] == [
        f"Ignoring MSPROF_ANALYZE_LOG_LEVEL='verbose': expected one of {', '.join(logs._LEVELS)}."]
    assert any("][INFO] The comparison result file has been generated: " in line for line in lines)


def test_readme_rank_communication_line_and_memory_percentage_are_the_runs(samples: Path, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    """Two README figures no other test read: the rank line of a run of two folders of ranks without the time
    breakdown (`rank 0: communication 85.517 ms -> 105.992 ms (+20.475 ms, +23.94%), ...`: the level0 and level1
    text exports' rank 0, their HCCL ops summed by hand from trace_view.json) and the percentage the memory line
    leaves out for the bundled pair (`+1950.00 MB read +4308.24%`: the JSON's ``summary.memory.diff_pct``, from the
    two `Allocated Memory(MB)` columns of its MemoryCompareStatistic sheet)."""
    from test_communication_console import hccl_by_hand

    from msprof_compare.api import compare

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    line = re.search(r"`(rank 0: communication (\S+) ms -> (\S+) ms \((\S+) ms, (\S+)\)), \.\.\.`", readme)
    base, _ = hccl_by_hand(NPU_TEXT / "level0" / "rank0_ascend_pt")
    comparison, _ = hccl_by_hand(NPU_TEXT / "level1" / "rank0_ascend_pt")
    assert line.groups()[1:] == (f"{base:.3f}", f"{comparison:.3f}", f"{comparison - base:+.3f}",
                                 f"{(comparison - base) / base * 100:+.2f}%")
    code, out, err = run_inproc(capsys, "-bp", str(NPU_TEXT / "level0"), "-d", str(NPU_TEXT / "level1"),
                                "--enable_communication_compare", "--rank_list", "0", "-o", str(tmp_path))
    assert code == 0 and out.startswith(line.group(1) + ", "), err
    said = re.search(r"the bundled pair's \+(\S+) MB read \+(\S+)% beside a peak that grew \+(\S+)%", readme)
    result = compare(str(REPO / "sample_data" / "bert-small_h100.json.gz"),
                     str(REPO / "sample_data" / "bert-small_mi300.json.gz"), enable_memory_compare=True)
    stat = result.sheet("MemoryCompareStatistic")
    b, c = (stat[f"{side} Allocated Memory(MB)"].sum() for side in ("Base", "Comparison"))
    assert said.groups()[:2] == (f"{c - b:.2f}", f"{(c - b) / b * 100:.2f}")
    assert f"{result.memory_totals['diff_pct']:.2f}" == said.group(2)


def test_readme_reading_sections_name_the_workbooks_rows_and_headers(samples: Path) -> None:
    """README "Reading the OverallMetrics sheet", "... the communication sheet" and "... the memory sheets" name
    OverallMetrics' rows and the sheets' column headers in backticks: each row it names is an `Index` of one of
    four runs (the bundled pair, NPU pair 1 text and DB, vLLM's B200 eager trace for the `Cube` row; the
    overlap of two groups, `Uncovered Communication Overlapped`, which no sample holds, is the name overall.py
    writes), `(Cube)` and the like the end of one, `Flash Attention` / `Conv` the start of one; each header
    with a unit, a ratio, a count or details is a header of those runs' sheets (as written, or after `Base ` /
    `Comparison `)."""
    from msprof_compare.api import compare

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    overall = readme.split("### Reading the OverallMetrics sheet", 1)[1].split("\n### ", 1)[0]
    tree = " ".join(overall.split()).split("Each side has", 1)[0]
    reading = readme.split("### Reading the OverallMetrics sheet", 1)[1].split("\n## ", 1)[0]
    headers = {x for x in re.findall(r"`([^`]+)`", reading)
               if re.search(r"\((ms|MB|KB|us)\)|Ratio|Number|Details", x)}
    assert {"Duration(ms)", "Diff Ratio", "Total Duration(us)", "Allocated Memory(MB)", "Size(KB)",
            "Allocated Details", "Operator Number"} <= headers
    npu = samples / "msinsight" / "test" / "data" / "pytorch"
    pairs = [(REPO / "sample_data" / "bert-small_h100.json.gz", REPO / "sample_data" / "bert-small_mi300.json.gz"),
             (npu / "text" / "level1" / "rank0_ascend_pt", npu / "text" / "level2" / "rank0_ascend_pt"),
             (npu / "db" / "level1" / "rank0_ascend_pt", npu / "db" / "level2" / "rank0_ascend_pt")]
    b200 = samples / "tracelens" / "tests" / "traces" / "b200" / "eager_trace.json.gz"
    index, written = set(), set()
    for base, comparison in [*pairs, (b200, b200)]:
        result = compare(str(base), str(comparison))
        index |= {x.strip() for x in result.sheet("OverallMetrics")["Index"]}
        written |= {h for sheet in result.sheets for h in sheet.frame().columns}
    index.add("Uncovered Communication Overlapped")
    assert "Uncovered Communication Overlapped" in (REPO / "msprof_compare" / "compare" / "overall.py").read_text()
    rows = re.findall(r"`([^`]+)`", tree.split("indented as a tree", 1)[1])
    assert len(rows) >= 18 and "Group 0 Communication" in rows and rows[-1] == "E2E Time", rows
    for row in rows:
        if row.startswith("("):
            assert any(x.endswith(" " + row) for x in index), row
        elif row in ("Flash Attention", "Conv"):
            assert any(x.startswith(row + " (") for x in index), row
        elif row not in ("Index", "Free: SDMA", "Free: Other"):  # the column, and the waterfall's steps
            assert row in index, row
    for header in headers:
        assert header in written or f"Base {header}" in written, header


def test_readme_sheets_come_in_the_order_it_gives(samples: Path, tmp_path: Path) -> None:
    """README "What the workbook holds": the sheets in the original's order, `Summary` first. NPU pair 1 (text
    exports, every comparison writes a sheet) is run by default and with the options that write the other sheet of
    each "(or ...)" pair (``disable_module``, ``use_kernel_type``): each run's sheets follow the README's order, and
    the two runs together write every sheet it names. Each workbook read with pandas as the README shows
    (``header=2``: a user's plain ``pd.read_excel`` got the captions as headers, ``Unnamed: 0``, ...) gives every
    comparator sheet the columns and rows of ``.sheet(name)``, and Summary its waterfall's header row."""
    import pandas as pd

    from msprof_compare.api import compare

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    listed = re.search(r"Sheets in the original's order — (.+?) — with", readme).group(1)
    order = re.findall(r"`([A-Za-z]+)`", listed)
    assert re.search(r"Ours adds a first sheet, `Summary`", readme)
    assert 'pd.read_excel(xlsx, sheet_name="OverallMetrics", header=2)' in readme
    npu = samples / "msinsight" / "test" / "data" / "pytorch" / "text"
    base, comparison = (str(npu / level / "rank0_ascend_pt") for level in ("level1", "level2"))
    seen = set()
    for i, options in enumerate(({}, {"disable_module": True, "use_kernel_type": True})):
        result = compare(base, comparison, **options)
        names = result.sheet_names
        assert names[0] == "Summary" and all(n in order for n in names[1:]), names
        assert [order.index(n) for n in names[1:]] == sorted(order.index(n) for n in names[1:]), names
        seen |= set(names[1:])
        read = pd.read_excel(result.to_excel(str(tmp_path / str(i))), sheet_name=None, header=2)
        assert list(read) == names
        for name in names[1:]:
            assert (list(read[name].columns), len(read[name])) == (list(result.sheet(name).columns),
                                                                   len(result.sheet(name))), name
        assert list(read["Summary"].columns[:6]) == ["Step", "Base(ms)", "Comparison(ms)", "Delta(ms)",
                                                     "Cumulative(ms)", "Share of E2E Diff"]
    assert seen == set(order) and len(order) == 11, order


def test_readme_disable_details_row_names_the_options_it_leaves_idle(capsys: pytest.CaptureFixture,
                                                                     tmp_path: Path) -> None:
    """README's `--disable_details` row said only which sheets it hides, where it also pairs no operator, so the
    options that act on the pairing did nothing, each with a warning a user could not foresee from the row or
    --help (readme74): each option the row names is said to be ignored under it (and not without it, on the
    bundled pair), `--transparent_op`, which still opens the ops it names, is not, and every face's help says
    that nothing is paired."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| `--disable_details` |")]
    assert "pair no operator or module" in row
    named = re.findall(r"`(--[a-z_]+)`", row.split("are said to be ignored")[0].split(" so ", 1)[1])
    assert set(named) == {"--op_name_map", "--use_input_shape", "--max_kernel_num"}, row
    values = {"--op_name_map": ["{'aten::gelu':'aten::gelu'}"], "--use_input_shape": [], "--max_kernel_num": ["5"]}
    given = [part for name in named for part in (name, *values[name])]
    pair = ("-bp", str(REPO / "sample_data" / "bert-small_h100.json.gz"),
            "-d", str(REPO / "sample_data" / "bert-small_mi300.json.gz"))
    ignored = {}
    for details in ([], ["--disable_details"]):
        code, _, err = run_inproc(capsys, *pair, "--enable_operator_compare", *given, *details,
                                  "--transparent_op", "aten::linear", "-o", str(tmp_path / f"out{len(details)}"))
        assert code == 0, err
        ignored[bool(details)] = re.findall(r"\[WARNING\] The (\w+) parameter is ignored: it only takes effect when "
                                            r"operators are matched, which disable_details turns off\.", err)
    assert ignored[False] == [] and sorted(ignored[True]) == sorted(n.lstrip("-") for n in named)
    for face in (lambda: cli.analyze_main(["compare", "--help"]), lambda: cli.compare_main(["--help"])):
        with pytest.raises(SystemExit):
            face()
        assert "no operator or module is paired then" in " ".join(capsys.readouterr().out.split())
    assert "no operator or module is paired then" in " ".join(cli.build_script_parser().format_help().split())


def test_readme_frozen_name_columns_are_the_workbooks(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """README "What the workbook holds" said the columns naming a row stay frozen, "the module and operator
    names", where OperatorCompare, MemoryCompare and CommunicationCompare freeze no column (their name opens the
    base half; readme74): each sheet the README names so freezes its header rows alone, and each name column it
    lists stays in view on every sheet that has it left of the base half (the bundled pair with and without
    modules, the RCCL excerpt's communication, the DB excerpts' kernels)."""
    import openpyxl
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    said = re.search(r"stay frozen, and so do the columns left of the base half that name a row \((.+?); on "
                     r"(\w+), (\w+) and (\w+) the name opens the base half, so only the header rows stay\)", text)
    assert said, "the README's frozen-columns sentence"
    names = re.findall(r"`([^`]+)`", said.group(1))
    assert names == ["api name", "Kernel", "Operator Name"] and "the module names" in said.group(1)
    bert = ("-bp", str(REPO / "sample_data" / "bert-small_h100.json.gz"),
            "-d", str(REPO / "sample_data" / "bert-small_mi300.json.gz"))
    rccl = str(REPO / "tests" / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json")
    runs = [(*bert, "--enable_operator_compare", "--enable_memory_compare", "--enable_api_compare"),
            (*bert, "--enable_operator_compare", "--disable_module"),
            ("-bp", rccl, "-d", rccl, "--enable_communication_compare"),
            ("-bp", str(REPO / "tests" / "data" / "db" / "l2"), "-d", str(REPO / "tests" / "data" / "db" / "l1"),
             "--enable_kernel_compare")]
    frozen = {}
    for i, args in enumerate(runs):
        code, _, err = run_inproc(capsys, *args, "-o", str(tmp_path / str(i)))
        assert code == 0, err
        (book,) = (tmp_path / str(i)).glob("*.xlsx")
        for ws in openpyxl.load_workbook(book, read_only=False):
            letter, row = coordinate_from_string(ws.freeze_panes)
            assert row == 4, (ws.title, ws.freeze_panes)
            frozen[ws.title] = [c.value for c in ws[3]][:column_index_from_string(letter) - 1]
    for sheet in said.group(2, 3, 4):
        assert frozen[sheet] == [], (sheet, frozen[sheet])
    assert "api name" in frozen["ApiCompare"] and "Kernel" in frozen["KernelCompare"]
    for sheet in ("ModuleCompareStatistic", "ModuleCompare"):
        assert "Module Name" in frozen[sheet], (sheet, frozen[sheet])
    for sheet in ("OperatorCompareStatistic", "MemoryCompareStatistic"):
        assert "Operator Name" in frozen[sheet], (sheet, frozen[sheet])


def test_readme_version_lines_and_the_statuses_help_gives(capsys: pytest.CaptureFixture) -> None:
    """README quotes `--version`'s line in its row ("as the JSON report's `tool` names them") and says which exit
    statuses the help's last lines give (readme74): each quote is the line every face prints, the JSON report's
    `tool` is the same name and version, the statuses the help leaves out are the ones the README says, and
    docs/differences.md ("Script help texts") lists the ones it gives."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quoted = set(re.findall(r"`(msprof-compare \d[^`]*)`", readme))
    with pytest.raises(SystemExit):
        cli.analyze_main(["--version"])
    line = capsys.readouterr().out
    assert quoted == {line.strip()}, quoted
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    name, version = line.split()
    assert version == re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    tool = json.loads((SCHEMAS / "result.schema.json").read_text(encoding="utf-8"))["properties"]["tool"]
    assert tool["properties"]["name"]["const"] == name
    table = readme.split("## Errors and exit codes", 1)[1].split("\n## ", 1)[0]
    rows = {int(c) for row in re.findall(r"^\| ([\d, ]+) \|", table, flags=re.M) for c in row.split(",")}
    aside = {int(c) for c in re.search(r"whose last lines give the exit statuses of \[Errors and exit codes\]"
                                       r"\(#errors-and-exit-codes\) \(but a signal's ([\d /]+)\)",
                                       readme).group(1).split("/")}
    epilog = " ".join(cli.HELP_EPILOG.split())
    given = {c for c in rows if re.search(rf"(?<![\d.]){c} [a-z]", epilog)}
    assert given == rows - aside and aside == {143, 129}, (given, aside)
    differences = " ".join((REPO / "docs" / "differences.md").read_text(encoding="utf-8").split())
    listed = re.search(r"give the exit statuses a run sets \(([\d, ]+)\)", differences).group(1)
    assert {int(c) for c in listed.split(",")} == given, listed


def test_readme_gpu_against_npu_block_runs_and_gives_its_figures(samples: Path, capsys: pytest.CaptureFixture,
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    """README's same-workload GPU-vs-NPU command (the AlexNet H200 trace of tests/data against the NPU level-1
    export), run as its bash block stands, from the top of the checkout, into a folder of its own (readme74): it
    exits 0, the "world size" check warns, the "GPU vs NPU categories" note names the rows the paragraph lists, and
    the three Mem Usage figures it quotes are the console's and the note's."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    part = readme.split("A same-workload GPU-vs-NPU pair ships with the tests", 1)[1]
    text, block = part.split("```bash\n", 1)
    words = shlex.split(block.split("```", 1)[0].replace("\\\n", " "))
    assert words[:2] == ["msprof-analyze", "compare"], words
    said = re.search(r"the NPU side's Mem Usage, ([\d.]+)G, counts the whole process \(memory_record\.csv's APP "
                     r"component\): ([\d.]+)G without it, against the GPU caching allocator's ([\d.]+)G",
                     " ".join(text.split()))
    npu_peak, npu_without_app, gpu_peak = said.groups()
    monkeypatch.chdir(REPO)
    args = [str(next(REPO.glob(w))) if "*" in w else w for w in words[2:]]
    assert Path(args[args.index("-d") + 1]).resolve() == (samples / "msinsight" / "test" / "data" / "pytorch" / "text"
                                                          / "level1" / "rank0_ascend_pt").resolve()
    code, out, err = run_inproc(capsys, *args, "-o", str(tmp_path), "--output_format", "xlsx,json")
    assert code == 0, err
    row = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith(("| GPU ", "| NPU "))}
    assert f" {gpu_peak}G " in row["GPU"] and f" {npu_peak}G " in row["NPU"], row
    assert "][WARNING]   - world size (base 1, comparison at least 8)" in err
    (report,) = tmp_path.glob("*.json")
    guards = {g["Check"]: g for g in json.loads(report.read_text(encoding="utf-8"))["summary"]["guards"]}
    assert guards["world size"]["Status"] == "warn"
    note = guards["GPU vs NPU categories"]["Detail"]
    for named in ("Vector (Trans)", "SDMA (Tensor Move)", "SDMA in Free Time", "APP",
                  f"{npu_peak}G, {npu_without_app}G without APP"):
        assert named in note, named


def test_readme_sdma_entry_says_which_copies_run_on_a_core(samples: Path) -> None:
    """README's SDMA entry against the rows it defines: it said SDMA is "copies by the DMA engine, which use no
    compute core", then filed TensorMove there, whose kernels kernel_details.csv puts on AI_VECTOR_CORE. The
    SDMA (Tensor Move) row is those kernels (their count and time, read from the CSV), in Computing Time; Free
    Time's SDMA row the GPU trace's memory copy events (gpu_memcpy, no kernel), counted from the raw trace."""
    import csv
    import gzip

    from msprof_compare import compare

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    entry = " ".join(readme.split("\n* **SDMA**: ", 1)[1].split("\n* ", 1)[0].split())
    moves, free_row = entry.split("Free Time's **SDMA** row", 1)
    assert "**SDMA (Tensor Move)**" in moves and "no compute core" not in entry and "DMA engine" not in entry
    assert "run on the vector cores (`AI_VECTOR_CORE` in kernel_details.csv)" in moves
    assert "counts in Computing Time" in moves and free_row.startswith(" (the waterfall's `Free: SDMA`) holds copies "
                                                                       "on a compute stream that are no kernel")
    npu = NPU_TEXT / "level1" / "rank0_ascend_pt"
    with open(npu / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as f:
        tm = [r for r in csv.DictReader(f) if r["Name"].lower().startswith("aclnninplacecopy")
              and "tensormove" in r["Name"].lower()]  # reference-1 §3.7's rule
    assert {r["Accelerator Core"] for r in tm} == {"AI_VECTOR_CORE"} and len(tm) == 11
    tm_us = sum(Decimal(r["Duration(us)"]) for r in tm)
    (gpu,) = (REPO / "tests" / "data" / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")
    events = json.loads(gzip.decompress(gpu.read_bytes()))["traceEvents"]
    copies = [e for e in events if e.get("cat") == "gpu_memcpy"]
    # the names the entry quotes, and none of them a kernel
    assert {e["name"].split(" (")[0] for e in copies} == {"Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD"}
    rows = compare(gpu, npu, enable_profiling_compare=True).sheet("OverallMetrics").set_index("Index")
    move, sdma = rows.loc["\tSDMA (Tensor Move)"], rows.loc["\tSDMA"]
    assert (move["Number"], move["Number.1"], move["Duration(ms).1"]) == (0, 11, pytest.approx(float(tm_us) / 1000))
    # the row has no count ("/"): its time is the 21 copies' (all on the trace's one compute stream), 0.488 ms
    assert len({e["args"]["stream"] for e in copies}) == 1 and len(copies) == 21
    assert sdma["Duration(ms)"] == pytest.approx(float(sum(Decimal(str(e["dur"])) for e in copies)) / 1000)
    assert rows.index.tolist().index("\tSDMA (Tensor Move)") < rows.index.tolist().index("Uncovered Communication Time")
