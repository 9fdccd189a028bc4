"""The Summary's three faces (console, the workbook's Summary sheet, the JSON report) say each fact in one wording:
on real pairs, every contributor table title and every sentence the console prints under the waterfall is found,
word for word, in the Summary sheet, and the JSON's notes are the console's. The sheet may add rows the console
has no room for (the validity checks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from logutil import note_lines, split_idle

TEXT = "msinsight/test/data/pytorch/text"
DB = "msinsight/test/data/pytorch/db"
XDIT = "tracelens/tests/traces/inference"
REPO = Path(__file__).resolve().parents[1]
PAIRS = {
    "npu-text-level1-level2": (f"{TEXT}/level1/rank0_ascend_pt", f"{TEXT}/level2/rank0_ascend_pt"),
    "npu-db-level2-level1": (f"{DB}/level2/rank0_ascend_pt", f"{DB}/level1/rank0_ascend_pt"),
    "bundled-h100-mi300": ("sample_data/bert-small_h100.json.gz", "sample_data/bert-small_mi300.json.gz"),
    # two operators that run modules, 367 operators that run in another module on each side: the module lead is a
    # block on the console (it was one line of 981 characters)
    "xdit-flux-sd35": (f"{XDIT}/xdit_flux.1_aiter_sage/profile_trace_rank_0.json.gz",
                       f"{XDIT}/xdit_sd_3.5/profile_trace_rank_0.json.gz"),
}
#: The titles of the module lead's lists on the console (``module_contributors_lines``), which the one-line note of
#: the sheet and the JSON words as a sentence around the list.
LIST_TITLES = ("The module rows hold this much of the time of the operators that run modules:",
               "Operators that run inside modules:",
               "Operators that run in another module on each side (each one's two module rows count as one, under "
               "its comparison module):")


def _faces(samples: Path, tmp_path: Path, pair: str) -> tuple[list[str], list[str], dict]:
    """(console lines, the Summary sheet's column A texts, the JSON document) of one run writing both reports."""
    base, comp = ((REPO if p.startswith("sample_data") else samples) / p for p in PAIRS[pair])
    if not (base.exists() and comp.exists()):
        pytest.skip("sample data not found")
    proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", str(base), "-d", str(comp),
                           "-o", str(tmp_path / "r.json"), "--output_format", "xlsx,json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sheet = pd.read_excel(tmp_path / "r.xlsx", sheet_name="Summary", header=None)
    col_a = [v for v in sheet[0].tolist() if isinstance(v, str)]
    return proc.stdout.splitlines(), col_a, json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))


def _module_lead(lines: list[str]) -> list[str]:
    """The console's module lead: the lines above the "Top Module Contributors" table back to the last line that
    is neither a "  - " item nor a list's title ([] without that table)."""
    top = next((i for i, line in enumerate(lines) if line.startswith("| Top Module Contributors")), None)
    if top is None:
        return []
    start = end = top - 2  # the line above the table's top border
    while start > 0 and (lines[start - 1].startswith("  - ") or lines[start - 1] in LIST_TITLES):
        start -= 1
    return lines[start:end + 1]


def _lead_says_the_note(lead: list[str], note: str) -> None:
    """The console's module lead says what the one-line ``note`` of the sheet and the JSON says: the note itself
    (then a colon, into the table), or a block whose every listed operator (with its figures) the note names, in
    the note's order, and whose last sentence (then the colon) the note holds."""
    if len(lead) == 1:
        assert lead == [f"{note}:"]
        return
    assert lead[0] in LIST_TITLES and lead[-1].endswith(":"), lead
    at = 0
    for line in lead[:-1]:
        if line.startswith("  - "):
            at = note.index(line[4:], at) + len(line) - 4  # ValueError: an item the note does not name, or out of order
        else:
            assert line in LIST_TITLES, line
    last = lead[-1][:-1]
    assert last in note or (last[0].lower() + last[1:]) in note, (last, note)


def _note_block(lines: list[str]) -> list[str]:
    """The console's note under the contributors where it is a block (each side's wrapper a "  - " line:
    ``contributors_note_lines``): its "Note: ...:" line, the items and the line after them; [] otherwise."""
    at = next((i for i, line in enumerate(lines[:-1]) if line.startswith("Note: ") and line.endswith(":")
               and lines[i + 1].startswith("  - ")), None)
    if at is None:
        return []
    end = at + 1
    while lines[end].startswith("  - "):
        end += 1
    return lines[at:end + 1]


def _note_says_the_note(block: list[str], note: str) -> None:
    """The block says the one-line ``note`` of the sheet and the JSON word for word: the note opens the opening's
    parenthesis with the two sides' wrappers ("(base NAME 10.718 ms, comparison NAME 156.086 ms; an annotation
    ..."), then gives the closing sentence after a colon (first letter as the note writes it, less the period)."""
    opening, items, last = block[0][len("Note: "):-1], [line[4:] for line in block[1:-1]], block[-1][:-1]
    assert len(items) == 2 and opening.count("(an annotation around the step") == 1, block
    said = opening.replace("(an annotation", f"({items[0]}, {items[1]}; an annotation") + ": " + last[0].lower() + \
        last[1:]
    assert said == note


def _console_titles(lines: list[str]) -> list[str]:
    """The titles of the console's contributor tables (a title line is "|  Top ... |", centred)."""
    cells = [line.strip("|").strip() for line in lines if line.startswith("|")]
    return [c for c in cells if c.startswith("Top ") and "|" not in c]


@pytest.mark.parametrize("pair", list(PAIRS))
def test_titles_and_sentences_read_alike_on_every_face(samples, tmp_path, pair):
    lines, col_a, doc = _faces(samples, tmp_path, pair)
    titles = _console_titles(lines)
    sheet_titles = [v for v in col_a if v.startswith("Top ")]
    assert titles and len(titles) == len(sheet_titles)
    # the sheet lists every time contributor, the console the first 10 (its title says so): else word for word
    assert [t.replace("; the first 10 shown)", ")") if t.startswith("Top Contributors") else t for t in titles] == \
        [t for t in sheet_titles]
    # every sentence under the waterfall (verdict, notes, the module lead, communication and memory lines)
    start = next(i for i, line in enumerate(lines) if "E2E Time Difference" in line)
    lead = _module_lead(lines)  # a block where the note lists several operators: checked against the note below
    block = _note_block(lines)  # the note under the contributors, where it names each side's wrapper
    summary = doc["summary"]
    # the note under the contributors without wrappers: its sentences, a line each on the console, the sheet's one line
    said_note = note_lines(summary["contributors_note"]) if summary["contributors_note"] and not block else []
    # every line under the waterfall is a row of the sheet, the notes' lines and the module lead's too (the sheet
    # gave each note one wrapped cell, as the JSON one line)
    sentences = [line for line in lines[start:] if line and line[0] not in "+|["]
    assert sentences and [s for s in sentences if s not in col_a] == []
    assert f"{summary['verdict']}." in sentences
    note_rows = summary["contributors_note_lines"]
    # after a block, the note on a Free: Other change is a sentence of its own
    rest, idle = split_idle(summary["contributors_note"] or "")
    assert note_rows == ([*block, *([idle] if idle else [])] if block else said_note)
    assert bool(note_rows) == bool(summary["contributors_note"])
    if note_rows:  # the same lines, in a row each, on the console and the sheet
        at, row = lines.index(note_rows[0]), col_a.index(note_rows[0])
        assert lines[at:at + len(note_rows)] == col_a[row:row + len(note_rows)] == note_rows
    if summary["memory_contributors_note"]:
        assert f"Note: {summary['memory_contributors_note']}." in sentences
    if block:
        _note_says_the_note(block, rest)
        # each side's wrapper with its figure: the contributors' rows of the two (their one-sided time)
        rows = {r["Name"]: r for r in summary["contributors"]}
        base, comp = (line[4:].split(" ", 1)[1].rsplit(" ", 2) for line in block[1:3])
        assert [block[1][4:9], block[2][4:14]] == ["base ", "comparison"]
        assert f"{rows[base[0]]['Base(ms)']:.3f}" == base[1] and f"{rows[comp[0]]['Comparison(ms)']:.3f}" == comp[1]
    note = summary["module_contributors_note"]
    assert bool(note) == bool(lead) and lead == summary["module_contributors_note_lines"]
    if note:
        _lead_says_the_note(lead, note)
        row = col_a.index(lead[0])
        assert col_a[row:row + len(lead)] == lead  # a row per line, as the console
    if summary["outside_modules_note"]:
        assert summary["outside_modules_note"] in sentences
    # in the sheet's order: the note on the contributors, the line on those off the module sheets, the module lead
    said = [s for s in ((block[0] if block else said_note[0]) if summary["contributors_note"] else None,
                        summary["outside_modules_note"], lead[0] if lead else None) if s]
    assert [line for line in lines[start:] if line in said] == said  # each a console line (a block's first)
    assert [v for v in col_a if v in said] == said


def test_contributors_off_the_module_sheets_are_named_on_every_face(samples, tmp_path):
    """The DB pair level2 -> level1 lists torch.distributed.ddp.reducer::copy_bucket_to_grad (#5), which no row of
    ModuleCompareStatistic names (it runs outside every module): the Summary sheet said so under the contributors,
    the console and the JSON did not, and a console reader looked for it in that sheet in vain."""
    lines, col_a, doc = _faces(samples, tmp_path, "npu-db-level2-level1")
    name = "torch.distributed.ddp.reducer::copy_bucket_to_grad"
    # independent of the tool's words: the workbook's ModuleCompareStatistic has no row naming it
    stat = pd.read_excel(tmp_path / "r.xlsx", sheet_name="ModuleCompareStatistic", header=None)
    assert not (stat.astype(str) == name).any().any()
    assert name in [r["Name"] for r in doc["summary"]["contributors"]]
    line = (f"Not on the module sheets: {name} (it is outside every module); the disable_module option writes every "
            "operator's row (OperatorCompareStatistic).")
    assert doc["summary"]["outside_modules_note"] == line
    assert line in lines and line in col_a
    # under the contributors' note, above the module contributors' lead, on the console as on the sheet
    i = lines.index(line)
    said = note_lines(doc["summary"]["contributors_note"])  # its sentences, the last just above
    assert lines[i - len(said):i] == said
    lead = _module_lead(lines)  # two operators that run modules (and three more): a block
    assert lines[i + 1:i + 1 + len(lead)] == lead and lead[0] == LIST_TITLES[0]
    _lead_says_the_note(lead, doc["summary"]["module_contributors_note"])


def test_contributors_all_on_the_module_sheets_say_nothing_of_them(samples, tmp_path):
    """The bundled BERT-small pair makes ModuleCompareStatistic and its three contributors (attention, linear, gelu)
    all have rows there: no face has a line on contributors off the module sheets, and the JSON's field is null."""
    lines, col_a, doc = _faces(samples, tmp_path, "bundled-h100-mi300")
    stat = pd.read_excel(tmp_path / "r.xlsx", sheet_name="ModuleCompareStatistic", header=None)
    names = [r["Name"] for r in doc["summary"]["contributors"]]
    assert names and all((stat.astype(str) == n).any().any() for n in names)
    assert doc["summary"]["outside_modules_note"] is None
    # (the API chart's sync note names "the operator or module sheets" as where to read device time: not this line)
    assert [v for v in [*lines, *col_a]
            if "Not on the module sheets" in v or v.startswith("Outside every module")] == []


def test_the_text_pairs_accumulate_grad_is_named_alike_on_every_face(samples, tmp_path):
    """The text pair level1 -> level2's one contributor, AccumulateGrad (the all-reduce it launched), is outside
    every module: the console prints the sheet's row and the JSON holds it."""
    lines, col_a, doc = _faces(samples, tmp_path, "npu-text-level1-level2")
    name = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    stat = pd.read_excel(tmp_path / "r.xlsx", sheet_name="ModuleCompareStatistic", header=None)
    assert [r["Name"] for r in doc["summary"]["contributors"]] == [name]
    assert not (stat.astype(str) == name).any().any()
    line = (f"Not on the module sheets: {name} (it is outside every module); the disable_module option writes every "
            "operator's row (OperatorCompareStatistic).")
    assert doc["summary"]["outside_modules_note"] == line and line in lines and line in col_a


def test_time_contributors_title_says_what_the_shares_are_of_on_the_console(samples, tmp_path):
    """The DB pair: its operators changed by +0.003 ms net against an E2E change of +8.713 ms; the console's title
    said what the shares were of, but only the sheet added that it is not the E2E change printed above it."""
    lines, col_a, _doc = _faces(samples, tmp_path, "npu-db-level2-level1")
    title = next(t for t in _console_titles(lines) if t.startswith("Top Contributors"))
    assert title.startswith("Top Contributors (operator level: ")
    assert title.endswith(" of the operators' device-time change, not of the E2E change)") and title in col_a


def test_time_contributors_title_without_e2e_names_no_e2e_change(samples, tmp_path):
    """NPU level 1 -> level 2 with --enable_operator_compare alone: the run makes no time breakdown and prints no
    E2E time, yet the title said its shares were "not of the E2E change". It says what they are of; with the
    E2E change on the console (the --fail_on_regression gate makes the breakdown) the clause stays."""
    base, comp = (samples / p for p in PAIRS["npu-text-level1-level2"])
    if not (base.exists() and comp.exists()):
        pytest.skip("sample data not found")

    def console(*flags: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", str(base), "-d", str(comp),
                               "-o", str(tmp_path), "--enable_operator_compare", *flags],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    alone = console()
    (title,) = [t for t in _console_titles(alone) if t.startswith("Top Contributors")]
    # one operator, AccumulateGrad's all-reduce: 106.247 -> 100.224 ms of the 6.090 ms summed |change|
    assert title == "Top Contributors (operator level: 1 row covers 98.9% of the operators' device-time change)"
    assert not [line for line in alone if "E2E" in line]  # no waterfall, no E2E line: nothing to set shares against
    gated = console("--fail_on_regression", "50")
    assert any(line.startswith("E2E time 136.581 ms -> 129.863 ms") for line in gated)
    (title,) = [t for t in _console_titles(gated) if t.startswith("Top Contributors")]
    assert title == ("Top Contributors (operator level: 1 row covers 98.9% of the operators' device-time change, "
                     "not of the E2E change)")


def test_the_line_keeps_names_as_they_are_and_the_console_escapes_them(samples):
    """The line goes to the sheet and the JSON as well as the console, so, as the module contributors' lead, it
    keeps its names as they are and the console escapes what it prints: it escaped them itself, so the JSON and
    the sheet read "\\x1b" for an escape character. The DB pair's copy_bucket_to_grad, renamed to hold one."""
    from msprof_compare import compare
    from msprof_compare.compare.module_contributors import outside_modules_note
    from msprof_compare.report.summary_console import render_explain

    base, comp = (samples / p for p in PAIRS["npu-db-level2-level1"])
    if not (base.exists() and comp.exists()):
        pytest.skip("sample data not found")
    res = compare(str(base), str(comp))
    old, new = "torch.distributed.ddp.reducer::copy_bucket_to_grad", "copy\x1b[31m_bucket"
    contrib = res.frames["contributors"].copy()
    assert old in contrib.attrs["outside_modules"]  # with the four the module contributors open up
    contrib["Name"] = contrib["Name"].replace(old, new)
    contrib.attrs["outside_modules"] = [new if n == old else n for n in contrib.attrs["outside_modules"]]
    line = outside_modules_note(contrib, res.frames["module_contributors"])
    assert line.startswith("Not on the module sheets: copy\x1b[31m_bucket (it is outside every module); ")
    shown = render_explain({**res.frames, "contributors": contrib}, res.verdict).splitlines()
    assert line.replace("\x1b", "\\x1b") in shown and not [s for s in shown if "\x1b" in s]
