"""Every cell of every sheet the original wrote for the reference pairs (shared/reference-outputs), and its console
table, against ours for the same inputs: one check over whole workbooks, where the other reference tests take a
sheet or a figure each; and the same for the original's `--enable_profiling_compare` runs (OverallMetrics alone).

A cell passes when it equals the original's (numbers as floats: 185 == 185.0) or, both numbers, lies within the
parity bound: 0.5 % of the original's value or one unit of its column, 0.01 of a figure (ms, us, MB, KB) and 0.0001
of a ratio (the sheets round ratios to 4 decimals; 0.01 would let 0.9798 pass for 0.9886); counts (Number, Calls,
Order Id, Top, Module Level) must be equal, as 0.5 % would let a count of 200 be off by one. Any other cell must
belong to a deliberate difference that docs/differences.md explains, named by its section title and checked by a
rule of its own, and the number of such cells per pair, sheet and section is pinned: a cell that leaves the bound,
or comes back within it, fails here with the table of what changed. Data rows are paired by their name columns
(difflib; OperatorCompare and MemoryCompare by which occurrence of each side's op a row holds), so a row that one
side has alone counts its own cells and shifts no other row. Row 1 holds the input paths: ours are the paths given,
the original's those of the gunzipped copies it was run on, so only the labels before them are compared."""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import openpyxl
import pytest
from refpairs import PAIRS

from msprof_compare.api import compare

DOCS = Path(__file__).resolve().parents[1] / "docs" / "differences.md"

# The sections of docs/differences.md that the differing cells belong to.
NS = "Kernel durations in detail text have nanosecond resolution"
API = "ApiCompare Self Time subtracts a call's callees on its own thread"
STACK = "Module call stacks keep to one thread"
FAMILY = "GPU: RCCL and other libraries' collective kernels are communication; families name the collective"
UNION = "GPU computing / uncovered communication are exact unions (not 1-µs ticks)"
GROUPS = "DB communication groups of two runs pair in OverallMetrics"
DB_OPS = "DB torch ops: one row per API call (not one per CANN connection id)"
DB_STACKS = "DB op call stacks are read from PYTORCH_CALLCHAINS"
DB_SHAPES = "DB ops without input shapes read `N/A`; DB memory durations are exact"
DB_KB = "DB operator memory sizes are in KB, times exact"
LCS = "Operator and module matching is a true maximum matching (LCS)"
NO_MEMORY = "Sheets pairing ops are left out when one side has no op; memory sheets when no side recorded memory"
NO_ROWS = "The workbook is written atomically, never overwrites, and is not written when empty"

DURATION = re.compile(r"\[duration: (-?[0-9.]+)\]")
KEY_WORDS = ("Index", "Name", "Kernel", "api name", "Input Shape", "Task Name", "Module Class", "Module Level",
             "Top")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(column: str) -> bool:
    """A column of counts, which must equal the original's."""
    return column.endswith("Number") or column in ("Calls", "Order Id", "Top", "Module Level")


def _passes(ref: Any, ours: Any, column: str) -> bool:
    """Equal, or numbers within the parity bound: 0.5 % or one unit of the column (0.01, a ratio's 0.0001; the
    1e-9 lets a cell one rounding unit off pass whatever its float holds: 0.03 against 0.04), counts exact."""
    if _number(ref) and _number(ours):
        if ref == ours or (math.isnan(ref) and math.isnan(ours)):
            return True
        if math.isinf(ref) or math.isinf(ours) or _count(column):
            return False
        return abs(ref - ours) <= max(0.0001 if "Ratio" in column else 0.01, 0.005 * abs(ref)) + 1e-9
    return ref == ours and type(ref) is type(ours)


def _ns_lists(ref: Any, ours: Any) -> bool:
    """Kernel lists equal but for durations, each the original's to the nanosecond (0.0005 us)."""
    if not (isinstance(ref, str) and isinstance(ours, str)) or DURATION.sub("", ref) != DURATION.sub("", ours):
        return False
    a, b = DURATION.findall(ref), DURATION.findall(ours)
    return len(a) == len(b) and all(abs(float(x) - float(y)) <= 0.0005 + 1e-9 for x, y in zip(a, b, strict=True))


class Cell(NamedTuple):
    """A cell outside the parity bound; ``alone``: its row has no partner on the other side."""

    sheet: str
    column: str
    label: Any  # the row's Index (OverallMetrics) or its second cell (the first name)
    ref: Any
    ours: Any
    alone: bool


DB = "3-npu-db-l1-vs-l2"
KINETO = ("4-gpu-alexnet-vs-npu-text-l1", "5-gpu-kineto-resnet50", "7-gpu-hta-dfindex-vs-nsres")  # two threads
IDENTITY = ("Order Id", "Module Class", "Module Level", "Module Name", "Operator Name", "api name")
SHAPES = ("Input Shape", "Input Type")
#: section -> does the cell of that pair belong to it
RULES: dict[str, Callable[[str, Cell], bool]] = {
    NS: lambda pair, c: "Kernel Details" in c.column and _ns_lists(c.ref, c.ours),
    API: lambda pair, c: (
        c.sheet == "ApiCompare" and pair in KINETO and c.column in ("Self Time(ms)", "Diff Self Ratio")
        and (_number(c.ref) or c.ref == "INF") and _number(c.ours)),
    # the original's stack starts with another thread's frames (tqdm's monitor), then holds ours
    STACK: lambda pair, c: (
        c.column.endswith("Call Stack") and isinstance(c.ref, str) and isinstance(c.ours, str)
        and c.ref.endswith(";\n" + c.ours) and "threading.py(" in c.ref[: -len(c.ours)]),
    FAMILY: lambda pair, c: c.column == "Communication OP Name" and (c.ref, c.ours) == ("ncclkernel", "allreduce"),
    # the 1-us ticks' artefact row, the original's alone
    UNION: lambda pair, c: pair.startswith("7-") and c.sheet == "OverallMetrics" and c.alone and c.label == "\tOther",
    GROUPS: lambda pair, c: (
        pair == DB and c.sheet == "OverallMetrics"
        and (str(c.label).startswith("\t90.91.105.46%") or c.label in ("\t\tWait", "\t\tTransmit"))),
    # an op cell's stack where the original, reading no PYTORCH_CALLCHAINS, shows none
    DB_STACKS: lambda pair, c: (
        pair == DB and c.sheet == "ModuleCompare" and c.column.endswith("Call Stack") and c.ref in ("N/A", None)
        and isinstance(c.ours, str) and re.match(r"\S.*\(\d+\): ", c.ours) is not None),
    DB_OPS: lambda pair, c: (
        pair == DB and c.sheet in ("ModuleCompareStatistic", "ModuleCompare", "ApiCompare")
        and c.column not in IDENTITY),
    DB_SHAPES: lambda pair, c: pair == DB and c.sheet == "MemoryCompare" and c.column in SHAPES,
    # sizes in KB and CANN's allocations placed apart reorder the statistic's rows, so any of its cells
    DB_KB: lambda pair, c: (
        pair == DB and (c.sheet == "MemoryCompareStatistic"
                        or (c.sheet == "MemoryCompare" and c.column not in IDENTITY + SHAPES))),
    # pairs 8 / 8b: rows that pair other occurrences of an op (one forward segment), and the Order Ids after them
    LCS: lambda pair, c: (
        pair.startswith("8") and c.sheet in ("OperatorCompare", "MemoryCompare")
        and (c.alone or c.column == "Order Id")),
}

#: Pinned counts of differing cells: pair -> {(sheet, section): cells}; a missing sheet counts 1.
EXPECTED: dict[str, dict[tuple[str, str], int]] = {
    "1-npu-text-l1-vs-l2": {("ModuleCompare", NS): 103},
    "2-npu-text-l0-rank0-vs-rank1": {("ModuleCompare", NS): 104},
    DB: {("OverallMetrics", GROUPS): 55, ("ModuleCompareStatistic", DB_OPS): 222, ("ModuleCompare", DB_OPS): 383,
         ("ModuleCompare", DB_STACKS): 14,
         ("ApiCompare", DB_OPS): 50, ("MemoryCompareStatistic", DB_KB): 200, ("MemoryCompare", DB_SHAPES): 358,
         ("MemoryCompare", DB_KB): 198},
    "4-gpu-alexnet-vs-npu-text-l1": {("OperatorCompare", NS): 68, ("ApiCompare", API): 17},
    "5-gpu-kineto-resnet50": {("ApiCompare", API): 5},
    "6b-gpu-timesformer-h100-self": {("ModuleCompareStatistic", STACK): 668, ("ModuleCompare", STACK): 716},
    "7-gpu-hta-dfindex-vs-nsres": {("OverallMetrics", UNION): 9, ("CommunicationCompare", FAMILY): 1,
                                   ("ApiCompare", API): 8},
    "8-npu-traceview-file-vs-file": {("OperatorCompare", NS): 83, ("OperatorCompare", LCS): 272,
                                     ("MemoryCompareStatistic", NO_MEMORY): 1, ("MemoryCompare", NO_MEMORY): 1},
    "8b-npu-traceview-file-vs-dir": {("OperatorCompare", NS): 83, ("OperatorCompare", LCS): 272,
                                     ("MemoryCompare", LCS): 272},
    "9c-mindspore-legacy-timeline-display-files": {("Sheet1", NO_ROWS): 1},
    "9d-mindspore-legacy-msprof-timeline-files": {},
}


def _sheets(path: Path | str) -> dict[str, list[list[Any]]]:
    """Every sheet's rows of cell values, in workbook order ({} for no workbook)."""
    if not path:
        return {}
    book = openpyxl.load_workbook(path, read_only=True)
    try:
        return {ws.title: [list(r) for r in ws.iter_rows(values_only=True)] for ws in book.worksheets}
    finally:
        book.close()


def _occurrences(rows: list[list[Any]]) -> dict[tuple[Any, Any], list[Any]]:
    """The rows of an op-pairing sheet by (n-th base op, n-th comparison op), None for a side without one."""
    seen, out = [0, 0], {}
    for row in rows:
        out[tuple(n if row[c] is not None else None for n, c in zip(seen, (1, 6), strict=True))] = row
        seen = [n + (row[c] is not None) for n, c in zip(seen, (1, 6), strict=True)]
    return out


def _aligned(sheet: str, ref: list[list[Any]], ours: list[list[Any]], header: list[Any]) -> list[tuple[Any, Any]]:
    """Data rows paired: rows of two op columns (OperatorCompare, MemoryCompare) by which occurrence of each
    side's op they hold, other sheets by their name columns (difflib); a row without a partner pairs with None."""
    if sheet in ("OperatorCompare", "MemoryCompare"):
        r, o = _occurrences(ref), _occurrences(ours)
        return [(r.get(k), o.get(k)) for k in r | o]
    cols = [j for j, h in enumerate(header) if isinstance(h, str) and any(k in h for k in KEY_WORDS)
            and "Kernel Details" not in h and "Call Stack" not in h]

    def key(row: list[Any]) -> tuple[Any, ...]:
        return tuple(row[j] if j < len(row) else None for j in cols)

    out: list[tuple[Any, Any]] = []
    matcher = difflib.SequenceMatcher(None, [key(r) for r in ref], [key(r) for r in ours], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            out += zip(ref[i1:i2], ours[j1:j2], strict=True)
        else:
            out += [(r, None) for r in ref[i1:i2]] + [(None, o) for o in ours[j1:j2]]
    return out


def _differences(sheet: str, ref: list[list[Any]], ours: list[list[Any]], captions: list[str]) -> list[Cell]:
    """Every cell outside the parity bound, after the header rows have been checked: row 1 holds ``captions``
    where the original's holds the same labels, row 2 is empty, row 3 holds the original's headers."""
    header = ref[2]
    assert ours[2] == header, (sheet, ours[2])
    assert not any(ref[1]) and not any(ours[1])
    # each caption in its half: where the original's starts, or further in where a sheet printed several pages
    # across merges it over the part of its half that prints on one page (excel.caption_range)
    ours_at, ref_at = ([j for j, c in enumerate(row) if c is not None] for row in (ours[0], ref[0]))
    assert len(ours_at) == len(ref_at) and all(a <= b < c for a, b, c in zip(
        ref_at, ours_at, [*ref_at[1:], len(header)], strict=True)), (sheet, ours[0])
    assert [c for c in ours[0] if c] == captions, sheet
    assert [c.split(": ")[0] for c in ref[0] if c] == [c.split(": ")[0] for c in captions], sheet
    out = []
    for r, o in _aligned(sheet, ref[3:], ours[3:], header):
        row = r or o
        for j, col in enumerate(header):
            a = r[j] if r is not None and j < len(r) else None
            b = o[j] if o is not None and j < len(o) else None
            if (a is not None or b is not None) and (r is None or o is None or not _passes(a, b, col)):
                out.append(Cell(sheet, col, row[0] if header[0] == "Index" else row[1], a, b, r is None or o is None))
    return out


def _zero_sheet(rows: list[list[Any]]) -> bool:
    """A memory sheet of the original without any memory: every size and duration 0, every ratio 1."""
    header = rows[2]
    for row in rows[3:]:
        for col, v in zip(header, row, strict=False):
            if _number(v) and col not in ("Order Id", "Top") and "Number" not in col:
                if v != (1 if "Ratio" in col else 0):
                    return False
            elif col and "Details" in col and v:
                return False
    return True


def _section(reference_outputs: Path, pair: str) -> str:
    """The pair's section of the reference README."""
    text = (reference_outputs / "README.md").read_text(encoding="utf-8")
    return text.split(f"\n## {pair.split('-')[0]}. ", 1)[1].split("\n## ", 1)[0]


def _console(reference_outputs: Path, pair: str) -> str:
    block = _section(reference_outputs, pair).split("Console output (stdout, verbatim):\n\n```\n", 1)[1]
    return "\n".join(line for line in block.split("\n```", 1)[0].splitlines() if line.startswith(("+", "|")))


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_cell_of_the_original_workbook(samples: Path, reference_outputs: Path, tmp_path: Path,
                                             pair: str) -> None:
    """Same sheets in the same order (ours adds the Summary first), same headers, and every cell the original's
    within the bound or a counted, documented difference; the console table is the original's verbatim."""
    base, comparison = (str(samples / p) for p in PAIRS[pair])
    result = compare(base, comparison)
    written = result.to_excel(tmp_path)
    assert result.console_table() == _console(reference_outputs, pair)
    ref_sheets = _sheets(reference_outputs / pair / "performance_comparison_result.xlsx")
    ours_sheets = _sheets(written)
    assert [s for s in ours_sheets if s != "Summary"] == [s for s in ref_sheets if s in ours_sheets]
    captions = [f"Base Profiling: {base}", f"Comparison Profiling: {comparison}"]
    found: Counter[tuple[str, str]] = Counter()
    unexplained = []
    for sheet, ref in ref_sheets.items():
        if sheet not in ours_sheets:
            why = NO_ROWS if not written and not any(map(any, ref)) else NO_MEMORY if (
                sheet.startswith("Memory") and _zero_sheet(ref)) else "UNEXPLAINED"
            found[sheet, why] += 1
            continue
        for cell in _differences(sheet, ref, ours_sheets[sheet], captions):
            why = next((name for name, rule in RULES.items() if rule(pair, cell)), "UNEXPLAINED")
            found[sheet, why] += 1
            if why == "UNEXPLAINED":
                unexplained.append(cell)
    assert not unexplained, unexplained[:10]
    assert dict(found) == EXPECTED[pair]
    for sheet in [s for s in ("OperatorCompare", "MemoryCompare") if (found[s, LCS])]:
        # the original pairs 33 ops, we pair 34, 30 of them the original's own pairs
        ref, ours = (set(k for k in _occurrences(book[sheet][3:]) if None not in k)
                     for book in (ref_sheets, ours_sheets))
        assert (len(ref), len(ours), len(ref & ours)) == (33, 34, 30)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_profiling_compare_alone(samples: Path, reference_outputs: Path, tmp_path: Path, pair: str) -> None:
    """The original's ``--enable_profiling_compare`` run of each pair (reference README) wrote OverallMetrics alone,
    equal to its run of all comparisons, and the same console table: ours writes the Summary and OverallMetrics,
    whose cells differ from the original's only as counted for the run of all comparisons."""
    base, comparison = (str(samples / p) for p in PAIRS[pair])
    result = compare(base, comparison, enable_profiling_compare=True)
    written = result.to_excel(tmp_path)
    assert result.console_table() == _console(reference_outputs, pair)
    run = re.search(r"^- `--enable_profiling_compare` only: .*; sheets: ([^;]+); OverallMetrics identical to the "
                    r"all-comparisons run: yes; console table identical: yes$", _section(reference_outputs, pair), re.M)
    ref_sheets = _sheets(reference_outputs / pair / "performance_comparison_result.xlsx")
    ours_sheets = _sheets(written)
    if "OverallMetrics" not in ref_sheets:  # pair 9c: the original's blank Sheet1, ours no workbook
        assert (run[1], bool(written), list(ref_sheets)) == ("Sheet1", False, ["Sheet1"])
        return
    assert (run[1], list(ours_sheets)) == ("OverallMetrics", ["Summary", "OverallMetrics"])
    found = Counter(next((name for name, rule in RULES.items() if rule(pair, cell)), "UNEXPLAINED")
                    for cell in _differences("OverallMetrics", ref_sheets["OverallMetrics"],
                                             ours_sheets["OverallMetrics"],
                                             [f"Base Profiling: {base}", f"Comparison Profiling: {comparison}"]))
    assert found == Counter({why: n for (sheet, why), n in EXPECTED[pair].items() if sheet == "OverallMetrics"})


def test_sections_named_here_exist() -> None:
    """Each difference the workbook check allows is a section of docs/differences.md, titled as here."""
    titles = set(re.findall(r"^## (.+)$", DOCS.read_text(encoding="utf-8"), re.M))
    assert set(RULES) | {NO_MEMORY, NO_ROWS} <= titles
