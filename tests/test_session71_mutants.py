"""Session 71's hand mutants of the memory line's drill-down words that the suite let live.

Data as ``tests/test_drill_memory.py``: the H200 AlexNet excerpt (``tests/data/kineto/alexnet_h200_rank0.*``, see
tests/data/PROVENANCE) against NPU pair 1's level-1 text export (`../shared/samples`). The MB the drill-down leaves
out is read from the raw JSON by that file's own span nesting (``_own_allocations_mb``), not from this package."""

from __future__ import annotations

import pytest
from test_drill_memory import NPU, _gpu, _own_allocations_mb

from msprof_compare.api import compare
from msprof_compare.report.summary_console import render_memory


@pytest.fixture(scope="module")
def swapped():
    """The NPU export as the base, the H200 trace as the comparison: the ops the drill-down opens are then the
    comparison side's."""
    from conftest import SAMPLES

    if not (SAMPLES / NPU).is_dir():
        pytest.skip("samples not present")
    gpu, npu = str(_gpu()), str(SAMPLES / NPU)
    return compare(npu, gpu), compare(npu, gpu, max_kernel_num=4)


def _memory_line(result) -> str:
    return next(x for x in render_memory(result.frames).splitlines() if x.startswith("Memory allocated"))


def test_drill_down_left_out_on_the_comparison_side_alone_is_said(swapped):
    """Kills md_first (the words only where the base side lost memory): here the base loses none."""
    plain, drilled = swapped
    own = _own_allocations_mb(_gpu(), "aten::convolution_backward")  # 243.1621 MB, test_drill_memory's figure
    left = drilled.memory_totals["drill_left_out"]
    assert left is not None
    assert left["base_mb"] == pytest.approx(0.0, abs=1e-9)
    assert left["comparison_mb"] == pytest.approx(own, abs=1e-6)
    assert left["base_mb_undrilled"] == pytest.approx(plain.memory_totals["base_mb"], abs=1e-6)
    assert left["comparison_mb_undrilled"] == pytest.approx(plain.memory_totals["comparison_mb"], abs=1e-6)
    # test_drill_memory's line with the sides swapped: 1426.02 MB (NPU), 1018.51 MB (H200) less 243.16 = 775.35 MB;
    # 775.35 - 1426.02 = -650.67, 1018.51 - 1426.02 = -407.51
    assert _memory_line(drilled) == (
        "Memory allocated inside operators (a sum of allocations, not memory held at once) 1426.02 MB -> 775.35 MB "
        "(-650.67 MB); the max_kernel_num drill-down leaves out what an op it opens allocates outside the ops inside "
        "it (base 0.00 MB, comparison 243.16 MB): 1426.02 MB -> 1018.51 MB (-407.51 MB) without the option.")


def test_drill_down_that_opens_nothing_says_nothing(swapped):
    """Kills md_ge (words where 0.00 MB is left out): a limit above every op's kernel count opens no op, so the
    memory line is the run's without the option, and the JSON has no drill_left_out."""
    plain, _ = swapped
    from conftest import SAMPLES

    wide = compare(str(SAMPLES / NPU), str(_gpu()), max_kernel_num=10**9)
    assert wide.memory_totals["drill_left_out"] is None
    assert wide.memory_totals["base_mb"] == pytest.approx(plain.memory_totals["base_mb"], abs=1e-9)
    assert "drill-down" not in render_memory(wide.frames)
    assert _memory_line(wide) == _memory_line(plain)


@pytest.mark.parametrize("name", ("ConvolutionBackward0", "aten::linear"))
def test_comparison_side_nested_op_is_opened_by_the_drill_down(tmp_path, name):
    """Kills dd_onlya (the drill-down opening the base side's named ops alone): test_transparent_op's nested-op
    check with the sides swapped, the H200 excerpt as the comparison: each pair-holding sheet equals the run on the
    copy of the trace without that op's events, and no row names the op."""
    from test_transparent_op import H200, PAIRED, _load, _without_all

    edited = _without_all(_load(H200), name, tmp_path)
    kw = {"max_kernel_num": 4, "disable_module": True}
    opened = compare(str(edited), str(H200), transparent_op=name, **kw)
    removed = compare(str(edited), str(edited), **kw)
    for sheet in PAIRED:
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    assert name not in opened.sheet("OperatorCompare").iloc[:, 6].tolist()


def _without_events(folder, name: str, into) -> str:
    """A copy of a text export whose trace_view.json (a JSON list) lacks the complete events called ``name``."""
    import json
    import shutil

    out = into / folder.parent.parent.name / folder.name
    shutil.copytree(folder, out)
    view = out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(view.read_text())
    kept = [e for e in events if not (e.get("ph") == "X" and e.get("name") == name)]
    assert len(events) - len(kept) == 1  # the one forward of step 50
    view.write_text(json.dumps(kept))
    return str(out)


def test_text_export_module_trees_at_a_step_open_the_named_op(tmp_path):
    """Kills mo_transp_text (a text export's module trees at a step built without --transparent_op): NPU pair 1's
    level-1 and level-2 text exports at step 50, ``DistributedDataParallel.forward`` (one event a side, under the
    DistributedDataParallel_0 module) named: the module sheets equal the run on the copies without its event, and
    differ from the run without the option."""
    from conftest import SAMPLES

    text = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
    sides = [SAMPLES / text.format(n) for n in (1, 2)]
    if not all(p.is_dir() for p in sides):
        pytest.skip("samples not present")
    name = "DistributedDataParallel.forward"
    step = {"base_step": "50", "comparison_step": "50"}
    opened = compare(*map(str, sides), transparent_op=name, **step)
    removed = compare(*(_without_events(p, name, tmp_path / str(i)) for i, p in enumerate(sides)), **step)
    plain = compare(*map(str, sides), **step)
    for sheet in ("ModuleCompare", "ModuleCompareStatistic"):
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
        assert not opened.sheet(sheet).equals(plain.sheet(sheet)), sheet
    assert name in plain.sheet("ModuleCompare")["Operator Name"].tolist()
    assert name not in opened.sheet("ModuleCompare")["Operator Name"].tolist()


def test_two_child_ops_nested_in_module_ops_are_named_together() -> None:
    """The module contributors' nested-op rule with two names (last pass's survivors on the plural and the list):
    the level-1 / level-2 DB pair (tests/data/db, see test_overall_db) with --max_kernel_num 8 lists
    Conv2DBackpropInput and Conv2DBackpropFilter, child ops of aten::convolution_backward, as contributors. Every
    one of their spans lies inside an aten::convolution_backward span of the same thread on both sides (SQL on the
    raw DBs), so the line names both as run inside it, in the plural, and neither as outside every module."""
    from pathlib import Path

    from test_overall_db import L1, L2, _outside_line, sql

    from msprof_compare import api

    def spans(db: str, name: str) -> list[tuple[int, int, int]]:
        return sql(Path(db), "SELECT CAST(a.startNs AS INTEGER), CAST(a.endNs AS INTEGER), a.globalTid FROM "
                   "PYTORCH_API a JOIN STRING_IDS s ON s.id = a.name WHERE s.value = ?", (name,))

    for db in (L1, L2):
        parents = spans(db, "aten::convolution_backward")
        for child in ("Conv2DBackpropInput", "Conv2DBackpropFilter"):
            found = spans(db, child)
            assert found and all(any(t == pt and ps <= s <= e <= pe for ps, pe, pt in parents)
                                 for s, e, t in found), (db, child)
    res = api.compare(L1, L2, enable_operator_compare=True, max_kernel_num=8)
    listed = res.contributors["Name"].tolist()
    assert "Conv2DBackpropInput" in listed and "Conv2DBackpropFilter" in listed
    outside, _, nested = _outside_line(res).partition("not on the module sheets by name: ")
    assert "Conv2DBackprop" not in outside
    names, _, rest = nested.partition(" (")
    assert sorted(names.split(", ")) == ["Conv2DBackpropFilter", "Conv2DBackpropInput"]
    assert rest.startswith("they run inside aten::convolution_backward, whose module rows hold their time: ")
