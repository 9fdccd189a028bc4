"""Swapping base and comparison swaps the two sides of every keyed sheet and negates its differences.

A metamorphic check on real excerpts: compare(A, B) and compare(B, A) must hold the same rows with the
base and comparison cells traded (and "Base X" / "Comparison X" key columns with them), and each
difference column negated. Left out, by design: the detail sheets whose pairs come from the original's
sequence matching (OperatorCompare, MemoryCompare, ModuleCompare: its DP is not symmetric, reference-2
§0.5), operator call stacks (shown for regressions only, §3.8), and ratio columns (rounded quotients).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.compare.table import Sheet

DATA = Path(__file__).resolve().parent / "data"
H200_ALEXNET = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
PAIRS = {
    "gpu-vs-npu-text": (H200_ALEXNET, DATA / "npu" / "rank0_ascend_pt"),
    "kineto": (DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json",
               DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"),
    "npu-db": (DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db",
               DATA / "db" / "l2" / "ascend_pytorch_profiler_0.db"),
}
PAIRED_BY_SEQUENCE = {"Summary", "OperatorCompare", "MemoryCompare", "ModuleCompare"}


def _cell(v: object) -> object:
    """Cells as comparable values: NaN and None alike, floats to 9 decimals (a diff is c - b rounded)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float):
        return round(v, 9) + 0.0  # -0.0 and 0.0 alike
    return v


def _rows(sheet: Sheet, swapped: bool) -> Counter:
    df = sheet.frame().reset_index(drop=True)
    names = [str(c) for c in df.columns]
    (b0, b1), (c0, c1) = sheet.base_span, sheet.comparison_span
    base, comp = list(range(b0, b1 + 1)), list(range(c0, c1 + 1))
    rest = [j for j in range(len(names)) if j not in base and j not in comp
            and names[j] not in ("Order Id", "Top") and "Call Stack" not in names[j] and "Ratio" not in names[j]]
    diffs = [j for j in rest if "Diff" in names[j]]
    keys = [j for j in rest if j not in diffs]
    if swapped:  # "Base X" / "Comparison X" key columns trade places too
        pos = {names[j]: n for n, j in enumerate(keys)}
        for name, n in list(pos.items()):
            if name.startswith("Base ") and "Comparison " + name[5:] in pos:
                m = pos["Comparison " + name[5:]]
                keys[n], keys[m] = keys[m], keys[n]
    out: Counter = Counter()
    for r in df.itertuples(index=False):
        k = tuple(_cell(r[j]) for j in keys)
        b, c = tuple(_cell(r[j]) for j in base), tuple(_cell(r[j]) for j in comp)
        d = tuple(_cell(-r[j] if swapped and isinstance(r[j], (int, float)) else r[j]) for j in diffs)
        out[(k, c, b, d) if swapped else (k, b, c, d)] += 1
    return out


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_swapping_sides_swaps_every_keyed_sheet(pair):
    a, b = (str(p) for p in PAIRS[pair])
    ab, ba = compare(a, b), compare(b, a)
    assert ab.sheet_names == ba.sheet_names
    checked = [s.name for s in ab.sheets if s.name not in PAIRED_BY_SEQUENCE]
    assert "OverallMetrics" in checked and len(checked) >= 3, checked
    other = {s.name: s for s in ba.sheets}
    for sheet in ab.sheets:
        if sheet.name in checked:
            assert _rows(sheet, False) == _rows(other[sheet.name], True), sheet.name
    # the waterfall's end points trade places and its change flips sign
    assert ab.summary is not None and ba.summary is not None
    assert (ab.waterfall["Base(ns)"].iloc[0], ab.waterfall["Comparison(ns)"].iloc[-1]) == \
        (ba.waterfall["Comparison(ns)"].iloc[-1], ba.waterfall["Base(ns)"].iloc[0])
