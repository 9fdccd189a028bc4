"""Edges of the step count check's reading of marker names (``checks._step_count`` / ``_idless_words``) and of a
Step Id header in another case (``ascend_text._header_names``), on real traces with markers renamed (synthetic
edits, each expected figure counted by hand from the names written)."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

from msprof_compare.api import compare
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

ALEXNET = Path(__file__).parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def _renamed_copies(tmp_path: Path, names: list[str]) -> Path:
    """The recorded AlexNet H200 trace (one user_annotation ProfilerStep#50) with a copy of that marker for each
    of ``names``."""
    top = json.loads(gzip.decompress(ALEXNET.read_bytes()))
    events = top["traceEvents"]
    (step,) = [e for e in events if e.get("name") == "ProfilerStep#50" and e["cat"] == "user_annotation"]
    events += [{**step, "name": name} for name in names]
    path = tmp_path / "renamed.pt.trace.json"
    path.write_text(json.dumps(top))
    return path


def _step_count_row(path: Path):
    return compare(str(ALEXNET), str(path), enable_profiling_compare=True).guards.set_index("Check").loc["step count"]


def test_a_marker_holding_the_mark_inside_its_name_is_a_step(tmp_path: Path) -> None:
    """A step marker holds ``ProfilerStep#`` (reference-1 §3.5: "contains"), as the step options read it: a copy
    named "Train ProfilerStep#51" is step 51, so the comparison side counts 2 steps (50, 51), the base 1."""
    from msprof_compare.compare.steps import step_ops

    path = _renamed_copies(tmp_path, ["Train ProfilerStep#51"])
    ops = load_profile(str(path), Options(enable_profiling_compare=True)).ops
    assert sorted(set(step_ops(ops)["step"].tolist())) == [50, 51]
    row = _step_count_row(path)
    assert (row["Base"], row["Comparison"]) == (1, 2)


def test_three_markers_without_an_id_are_all_named_with_no_count(tmp_path: Path) -> None:
    """The Detail names up to three markers that hold no step id and counts the rest: exactly three are named, with
    no "0 more"."""
    row = _step_count_row(_renamed_copies(tmp_path, ["ProfilerStep#", "ProfilerStep#1.5", "ProfilerStep#x0"]))
    assert (row["Base"], row["Comparison"]) == (1, 1)
    assert row["Detail"].endswith("not counted, no step id after '#': comparison side 'ProfilerStep#', "
                                  "'ProfilerStep#1.5' and 'ProfilerStep#x0'")


def test_a_step_header_in_another_case_is_named_without_its_blanks(samples: Path, tmp_path: Path) -> None:
    """kernel_details.csv's header " step id " (another case, blanks around it) is named as the column it is,
    'step id', as the names are matched (stripped)."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[0][rows[0].index("Step Id")] = " step id "
    with open(kd, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    said = [w for w in load_profile(str(side), Options(base_step=50, comparison_step=50)).warnings
            if "read as no column" in w]
    assert said == [f"{kd}: column 'step id' read as no column: column names are matched with their case (rename it "
                    "to Step Id or Step ID)"]
