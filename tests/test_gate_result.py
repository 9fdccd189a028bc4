"""``CompareResult.regression_gate()`` returns a ``RegressionGate``: still the ``(code, message)`` tuple, with the
verdict's figures as typed attributes named as the JSON report's ``gate`` keys, so that a script posting which
metric tripped the gate and by how much does not parse the message. Expected figures come from the original's
reference workbook of NPU pair 1 (level 1 -> level 2; compared here reversed, level 2 as the base)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import openpyxl
import pytest
from test_json_report import SCHEMA, validate

import msprof_compare
from msprof_compare import GateContributor, GateStep, RegressionGate, compare

NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
NPU_L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
HEATMAP = "msinsight/server/src/test/test_data/heatMap/trace_view.json"  # no Overlap Analysis lane: no E2E time
REFERENCE = Path("reference-outputs") / "1-npu-text-l1-vs-l2" / "performance_comparison_result.xlsx"


def _reference(samples: Path) -> tuple[dict[str, tuple[float, float]], list[tuple]]:
    """The reference workbook's OverallMetrics {index: (level1 ms, level2 ms)} and KernelCompare data rows."""
    wb = openpyxl.load_workbook(samples.parent / REFERENCE, read_only=True)
    overall = {str(r[0]).strip(): (r[1], r[4]) for r in wb["OverallMetrics"].iter_rows(min_row=4, values_only=True)
               if r[0]}
    kernels = [r for r in wb["KernelCompare"].iter_rows(min_row=4, values_only=True) if r[1]]
    wb.close()
    return overall, kernels


def test_the_gate_is_the_tuple_it_was_with_the_figures_of_the_json_gate(samples: Path, tmp_path: Path) -> None:
    """Level 2 -> level 1 with the kernel comparison at 1 %: a regression. The E2E times, the one kernel that grew
    (hcom_allReduce_: its KernelCompare totals, its share of the summed absolute change of every kernel row) and
    the three largest waterfall steps (OverallMetrics' Group 0 Communication, Free and Matmul rows) are the
    reference workbook's, level 1 less level 2; the tuple still unpacks and compares as (code, message)."""
    overall, kernels = _reference(samples)
    ns = {k: (round(v[0] * 1e6), round(v[1] * 1e6)) for k, v in overall.items()}  # ms to whole ns
    (allreduce,) = [r for r in kernels if r[1] == "hcom_allReduce_"]
    diff_us = allreduce[3] - allreduce[8]  # level 1 (the comparison here) less level 2
    share = abs(diff_us) / sum(abs((r[3] or 0) - (r[8] or 0)) for r in kernels)

    result = compare(str(samples / NPU_L2), str(samples / NPU_L1), enable_kernel_compare=True, fail_on_regression=1)
    gate = result.regression_gate()
    assert isinstance(gate, RegressionGate) and isinstance(gate, tuple) and len(gate) == 2
    code, message = gate
    assert (code, message) == gate == (3, gate.message) and gate[0] == gate.code == 3
    assert gate.regressed is True and (gate.threshold_pct, gate.threshold) == (1.0, "1")
    base, comp = ns["E2E Time"][1], ns["E2E Time"][0]
    assert (gate.base_ns, gate.comparison_ns) == (base, comp) == (129862875, 136581009)
    assert (gate.diff_ns, gate.diff_ms) == (comp - base, (comp - base) / 1e6)
    (listed,) = gate.contributors
    assert isinstance(listed, GateContributor)
    assert (listed.name, listed.level, listed.share_of) == ("hcom_allReduce_", "kernel",
                                                            "the kernels' device-time change")
    assert listed.diff_ms == pytest.approx(diff_us / 1e3, abs=1e-9)
    assert listed.share == pytest.approx(share, abs=1e-5)  # the workbook's totals are rounded to 0.01 us
    steps = [("Group 0 Communication (uncovered)", "Group 0 Communication"), ("Free: Other", "Free"),
             ("Matmul", "Matmul")]
    assert gate.waterfall_steps == tuple(GateStep(step, ns[row][0] - ns[row][1], (ns[row][0] - ns[row][1]) / 1e6)
                                         for step, row in steps)
    # the verdict, the steps, the contributor's two lines and the note marking it as an HCCL op (communication)
    assert gate.lines == message.split("\n") and len(gate.lines) == 5
    assert gate.lines[-1].startswith("  Note: hcom_allReduce_ is collective communication, not computing")
    # the JSON report's gate is this gate, key for key
    doc = json.loads(Path(result.to_json(tmp_path / "r.json")).read_text(encoding="utf-8"))
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    assert doc["gate"] == gate.to_dict()
    # immutable, and a pickled copy (a dask / ray task's) keeps its figures
    with pytest.raises(AttributeError, match="cannot be changed"):
        gate.diff_ns = 0  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot be changed"):
        del gate.diff_ns
    assert gate.diff_ns == comp - base
    again = pickle.loads(pickle.dumps(gate))
    assert again == gate and again.to_dict() == gate.to_dict() and type(again) is RegressionGate
    assert result.slim().regression_gate().to_dict() == gate.to_dict()
    assert gate._replace(message="x").diff_ns == gate.diff_ns


def test_a_gate_that_cannot_judge_has_no_change(samples: Path) -> None:
    """heatMap's trace holds no E2E time: code 1, regressed None, no change, nothing listed; the base's E2E is
    the reference workbook's level-1 figure."""
    overall, _ = _reference(samples)
    gate = compare(str(samples / NPU_L1), str(samples / HEATMAP), enable_profiling_compare=True).regression_gate(5)
    assert (gate.code, gate.regressed, gate.diff_ns, gate.diff_ms) == (1, None, None, None)
    assert gate.base_ns == round(overall["E2E Time"][0] * 1e6) and gate.comparison_ns == 0
    assert gate.contributors == () and gate.waterfall_steps == ()
    assert gate.lines == [gate.message] and gate.message.startswith("error: ")


def test_the_gate_types_are_the_packages() -> None:
    """A script annotates with ``msprof_compare.RegressionGate`` (and its records' types) as with CompareResult."""
    from msprof_compare import api

    assert (msprof_compare.RegressionGate, msprof_compare.GateContributor, msprof_compare.GateStep) == (
        api.RegressionGate, api.GateContributor, api.GateStep)
    assert GateContributor._fields == ("name", "level", "diff_ms", "share", "share_of")
    assert GateStep._fields == ("step", "delta_ns", "delta_ms")


def test_a_gate_made_of_code_and_message_alone_has_no_figures() -> None:
    """A script's test double, ``RegressionGate(3, "...")`` or ``_make``, is a gate without figures: its repr and
    attributes raised AttributeError (no figure was set). ``regressed`` is of the code, also in a
    ``_replace(code=...)`` copy, which kept the True of the code it replaced."""
    message = "Performance regression: comparison E2E 2.000 ms exceeds base 1.000 ms"
    for gate in (RegressionGate(3, message), RegressionGate._make((3, message))):
        assert (gate.code, gate.regressed, gate.threshold_pct, gate.threshold, gate.diff_ns, gate.diff_ms,
                gate.base_ns, gate.comparison_ns) == (3, True, None, None, None, None, None, None)
        assert (gate.contributors, gate.waterfall_steps, gate.lines) == ((), (), [message])
        assert repr(gate) == ("RegressionGate(code=3, regressed=True, threshold=None, diff_ms=None, contributors=0, "
                              f"waterfall_steps=0, message={message!r})")
        assert (gate._replace(code=0).regressed, gate._replace(code=1).regressed) == (False, None)
