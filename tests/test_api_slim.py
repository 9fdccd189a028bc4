"""``CompareResult.slim()``: a copy without the profiles' event tables, for a cluster task to pickle back to its
driver (docs/performance.md, "Beyond one machine"). Every public method of the slim copy, pickled and read back,
answers as the full result's; its pickle is a fraction of the full one; the full result keeps its tables.

Inputs: the bundled sample_data pair (TraceLens' bert-small, H100 and MI300X) and msinsight's torch_npu exports
(../shared/samples): a text -> DB pair (the verdict's words on a DB side's E2E read the sides' sources), a DB step
(its words on the ProfilerStep range read ``extra["step_range"]``), and two runs without the time breakdown,
whose gate makes a breakdown of its own from the tables.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

import msprof_compare
from msprof_compare.api import CompareResult
from msprof_compare.model import Profile

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "sample_data" / "bert-small_h100.json.gz"
MI300 = ROOT / "sample_data" / "bert-small_mi300.json.gz"
PT = ROOT.parent / "shared" / "samples" / "msinsight" / "test" / "data" / "pytorch"
TEXT_L1, TEXT_L2 = PT / "text/level1/rank0_ascend_pt", PT / "text/level2/rank0_ascend_pt"
DB_L0_R1, DB_L2 = PT / "db/level0/rank1_ascend_pt", PT / "db/level2/rank0_ascend_pt"

#: name -> (base, comparison, options)
PAIRS = {
    "gpu": (H100, MI300, {}),
    "npu text -> db": (TEXT_L1, DB_L2, {}),
    "npu db step 50": (DB_L2, DB_L0_R1, {"base_step": 50, "comparison_step": 50}),
    "gpu without breakdown": (MI300, H100, {"enable_operator_compare": True}),
    "npu without breakdown": (TEXT_L2, TEXT_L1, {"enable_api_compare": True}),
}
#: Every frame property of a result.
FRAMES = ("waterfall", "contributors", "module_contributors", "communication_contributors", "memory_contributors",
          "guards")
#: Gate thresholds (%) on both sides of the pairs' E2E changes (-10.5 %, -5.4 %, +0.4 %, +11.8 %, +5.2 %).
PCTS = (0, 0.1, 5, 12.5, 1000)


@pytest.fixture(scope="module", params=list(PAIRS))
def pair(request: pytest.FixtureRequest) -> tuple[str, CompareResult, CompareResult]:
    """(name, full result, its slim copy pickled and read back, as a cluster driver receives it)."""
    base, comparison, options = PAIRS[request.param]
    if not PT.is_dir():
        pytest.skip(f"sample data not found at {PT}")
    full = msprof_compare.compare(base, comparison, **options)
    return request.param, full, pickle.loads(pickle.dumps(full.slim()))


def _cells(path: str) -> dict[str, list[list[object]]]:
    book = openpyxl.load_workbook(path)
    return {ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in book.worksheets}


def _parts(path: str) -> dict[str, bytes]:
    """The workbook's zip parts but docProps (which carry the time of writing)."""
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if not n.startswith("docProps/")}


def _document(path: str) -> dict:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    assert doc.pop("generated_at")  # the time of writing, the one field that differs
    return doc


def test_slim_result_answers_every_method_as_the_full_one(pair, tmp_path):
    name, full, slim = pair
    assert slim.sheet_names == full.sheet_names
    for sheet in full.sheet_names:
        pd.testing.assert_frame_equal(slim.sheet(sheet), full.sheet(sheet))
    for frame in FRAMES:
        pd.testing.assert_frame_equal(getattr(slim, frame), getattr(full, frame))
    assert (slim.communication_totals, slim.memory_totals) == (full.communication_totals, full.memory_totals)
    assert slim.console_table() == full.console_table()
    assert slim.verdict == full.verdict
    # the profiles' reprs list their tables' sizes: a slim copy's are empty, so it lists none
    assert repr(slim) == repr(full).replace(repr(full.base), repr(slim.base)).replace(
        repr(full.comparison), repr(slim.comparison))
    for side in (slim.base, slim.comparison):
        assert repr(side) == repr(Profile(side.path, side.kind, side.source, side.level))
    assert "kernels=" in repr(full.base) + repr(full.comparison)
    gates = [full.regression_gate(p) for p in PCTS]
    assert [slim.regression_gate(p) for p in PCTS] == gates
    assert {code for code, _ in gates} == ({0} if name in ("gpu", "npu text -> db") else {0, 3})
    books = [r.to_excel(tmp_path / side) for side, r in (("full", full), ("slim", slim))]
    assert _cells(books[1]) == _cells(books[0])
    assert _parts(books[1]) == _parts(books[0])
    docs = [_document(r.to_json(tmp_path / side)) for side, r in (("full", full), ("slim", slim))]
    assert docs[1] == docs[0]


def test_the_words_that_read_the_profiles_are_there(pair):
    """The verdict's and the gate's asides read the sides' sources (text vs DB) and a DB step's range, and the gate
    of a run without the time breakdown reads the tables: each pair shows its own, so the comparison above checks
    that the slim copy kept them."""
    name, full, slim = pair
    said = {"npu text -> db": "a DB export's, holds 4.987 ms before its first computing or communication (2 copies, "
                              "0.879 ms, and 4.108 ms of idle time)",
            "npu db step 50": "its ProfilerStep range took 143.742 ms -> 144.964 ms, +1.222 ms"}
    if name in said:
        assert said[name] in slim.verdict and said[name] in slim.regression_gate(0)[1]
    if "without" in name:
        assert "e2e" not in full.frames
        assert slim.regression_gate(0)[1].startswith("Performance regression: E2E time ")


def test_slim_drops_the_tables_and_keeps_the_full_result_whole(pair):
    _name, full, slim = pair
    before, gate = repr(full), full._gate  # the gate input, kept once the gate was applied (an earlier test)
    again = full.slim()
    for side in ("base", "comparison"):
        kept, lean = getattr(full, side), getattr(again, side)
        assert len(kept.kernels) + len(kept.ops) > 0
        for table in ("ops", "kernels", "flows", "python_functions", "memory", "comm", "overlap", "queue"):
            assert len(getattr(lean, table)) == 0, table
        assert lean.kernel_details is None and lean.memory_record is None and not lean.metadata
        assert (lean.path, lean.kind, lean.source, lean.level) == (kept.path, kept.kind, kept.source, kept.level)
    assert full.sheets is not again.sheets and full.frames is not again.frames
    assert repr(full) == before and full._gate is gate  # slim() left the full result as it was
    assert repr(again.slim()) == repr(again)


def test_slim_pickle_is_a_fraction_of_the_full_one():
    """Sizes measured on this machine (pickle protocol 5): the GPU pair 618,889 -> 356,408 bytes (its sheets,
    346,594, are most of what remains), NPU text -> DB 789,224 -> 214,059. What is left is the sheets, frames,
    summary and options, and each profile's empty tables (6,309 bytes for the two GPU profiles)."""
    ratios = {}
    for name in ("gpu", "npu text -> db"):
        base, comparison, options = PAIRS[name]
        if not Path(comparison).exists():
            pytest.skip("sample absent")
        full = msprof_compare.compare(base, comparison, **options)
        size, slim = len(pickle.dumps(full)), len(pickle.dumps(full.slim()))
        kept = len(pickle.dumps((full.sheets, full.frames, full.summary, full.options)))
        assert slim < kept + 8_000, (name, slim, kept)
        ratios[name] = size / slim
    assert ratios["gpu"] > 1.6 and ratios["npu text -> db"] > 3.4, ratios
