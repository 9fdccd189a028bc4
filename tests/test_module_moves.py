"""An operator that runs in another module on the comparison side (same op, a different parent module) is one
module contributor with its net change, not a base-only row in its old module and a comparison-only row in its
new one, whose |change| summed twice its time: the NPU level-1 text export against a copy of itself in which the
first aten::relu_ runs inside Conv2d_0 (its ReLU_0 module event removed, Conv2d_0's extended over it) and the
first MaxPool2d kernel runs 5 µs longer. The two rows of the move (-t and +t) held 86% of the summed change and
the module contributors named only them, not the MaxPool2d row that changed."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.report.json_report import to_document
from msprof_compare.report.summary_console import render_explain

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
PATH = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/"
#: the first MaxPool2dWithMask kernel (row 8 of kernel_details.csv): MaxPool2d_0's, under aten::max_pool2d
POOL_KERNEL = "aclnnMaxPool2dWithMask_MaxPoolWithArgmaxV1AiCore_MaxPoolWithArgmaxV1"
LONGER_US = Decimal(5)
RELU_KERNEL = "aclnnInplaceRelu_Relu_Relu"
#: the one op around the model's forward (DDP's), which runs the modules
WRAPPER = "DistributedDataParallel.forward"


def _moved_copy(src: Path, dst: Path, k: int = 0, longer: str = POOL_KERNEL, drop: str = "") -> Decimal:
    """Copy the export to ``dst`` with the ``k``-th relu (ReLU_k) moved into Conv2d_k and the first ``longer``
    kernel (MaxPool2d_0's) 5 µs longer, without the events named ``drop``; returns the relu kernel's µs as the
    export has it (its only kernel: the k-th relu kernel of kernel_details.csv, which lists them in start
    order)."""
    shutil.copytree(src, dst)
    out = dst / "ASCEND_PROFILER_OUTPUT"
    (out / "trace_view.json").chmod(0o644)
    (out / "kernel_details.csv").chmod(0o644)
    events = [e for e in json.loads((out / "trace_view.json").read_text()) if not drop or e.get("name") != drop]
    conv = next(e for e in events if e.get("name") == f"nn.Module: Conv2d_{k}")
    relu = next(e for e in events if e.get("name") == f"nn.Module: ReLU_{k}")
    conv["dur"] = float(Decimal(relu["ts"]) + Decimal(str(relu["dur"])) - Decimal(conv["ts"]))
    events.remove(relu)
    lines = (out / "kernel_details.csv").read_text().split("\n")
    head = lines[0].split(",")
    at_name, at_ts, at_dur = head.index("Name"), head.index("Start Time(us)"), head.index("Duration(us)")
    relu_rows = [line.split(",") for line in lines if line and line.split(",")[at_name] == RELU_KERNEL]
    starts = [Decimal(r[at_ts]) for r in relu_rows]
    assert starts == sorted(starts)
    pool = next(i for i, line in enumerate(lines) if line.split(",")[at_name] == longer)
    cells = lines[pool].split(",")
    cells[at_dur] = str(Decimal(cells[at_dur]) + LONGER_US)
    lines[pool] = ",".join(cells)
    ts = cells[at_ts].strip()
    kernel = next(e for e in events if e.get("ph") == "X" and e["name"] == longer and str(e["ts"]) == ts)
    kernel["dur"] = float(Decimal(str(kernel["dur"])) + LONGER_US)
    (out / "kernel_details.csv").write_text("\n".join(lines))
    (out / "trace_view.json").write_text(json.dumps(events))
    return Decimal(relu_rows[k][at_dur])


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    src = SAMPLES / TEXT
    if not src.is_dir():
        pytest.skip("sample data not found")
    dst = tmp_path_factory.mktemp("moved") / "rank0_ascend_pt"
    relu_us = _moved_copy(src, dst)
    return compare(str(src), str(dst)), relu_us


def test_the_moved_operator_is_one_row_and_the_changed_one_is_named(moved):
    res, relu_us = moved
    mods = res.module_contributors
    names = mods["Name"].tolist()
    # the op that changed: MaxPool2d_0's max_pool2d, 5 µs longer
    pool = f"{PATH} MaxPool2d_0 > aten::max_pool2d"
    assert pool in names
    row = mods[mods["Name"] == pool].iloc[0]
    assert row["Diff(ms)"] == pytest.approx(float(LONGER_US / 1000), abs=1e-9)
    # the relu that moved with its time unchanged is no contributor: neither its old nor its new module's row
    assert not [n for n in names if n.endswith("aten::relu_") and ("ReLU_0" in n or "Conv2d_0" in n)]
    # the lead says the move, on the console and in the JSON alike
    lead = res.frames["module_contributors"].attrs.get("moved")
    assert lead == [("aten::relu_", f"{PATH} ReLU_0".strip(), f"{PATH} Conv2d_0".strip(), float(relu_us / 1000),
                     float(relu_us / 1000))]
    text = render_explain(res.frames, res.verdict)
    note = to_document(res)["summary"]["module_contributors_note"]
    assert f"{note}:" in text.splitlines()
    assert "aten::relu_ runs in another module on each side" in note


def test_a_later_move_pairs_the_one_sided_rows_only(tmp_path):
    """The second relu (ReLU_1) moved into Conv2d_1: aten::relu_ also has a row both sides hold before it (ReLU_0),
    which must not be taken for the base half of the move (pairing every base row of the operator with the
    comparison-only one named ReLU_0, with its time, as the moved row)."""
    src = SAMPLES / TEXT
    if not src.is_dir():
        pytest.skip("sample data not found")
    dst = tmp_path / "rank0_ascend_pt"
    relu_us = _moved_copy(src, dst, 1)
    res = compare(str(src), str(dst))
    assert res.frames["module_contributors"].attrs.get("moved") == [
        ("aten::relu_", f"{PATH} ReLU_1".strip(), f"{PATH} Conv2d_1".strip(), float(relu_us / 1000),
         float(relu_us / 1000))]
    assert not [n for n in res.module_contributors["Name"].tolist() if n.endswith("aten::relu_")]


def test_two_moves_are_each_named_in_the_lead(tmp_path):
    """ReLU_0 moved into Conv2d_0 and ReLU_1 into Conv2d_1 (two copies: each also makes MaxPool2d_0's kernel 5 µs
    longer): both moves are paired, in the sheet's order, and the lead names both, not the first alone."""
    src = SAMPLES / TEXT
    if not src.is_dir():
        pytest.skip("sample data not found")
    once, twice = tmp_path / "once" / "rank0_ascend_pt", tmp_path / "twice" / "rank0_ascend_pt"
    relu0 = _moved_copy(src, once, 0)
    relu1 = _moved_copy(once, twice, 1)
    res = compare(str(src), str(twice))
    moves = [("aten::relu_", f"{PATH} ReLU_{k}".strip(), f"{PATH} Conv2d_{k}".strip(), float(us / 1000),
              float(us / 1000)) for k, us in ((0, relu0), (1, relu1))]
    assert res.frames["module_contributors"].attrs.get("moved") == moves
    note = to_document(res)["summary"]["module_contributors_note"]
    named = ", ".join(f"aten::relu_ (base {b}, comparison {c})" for _, b, c, _, _ in moves)
    assert note.endswith(f"; {named} run in another module on each side: each one's two module rows count as one, "
                         "under its comparison module")


def test_a_moved_operator_that_changed_is_one_row_where_no_operator_runs_modules(tmp_path):
    """Both sides without DDP's forward op, so no listed operator runs the modules: the module contributors are the
    module rows of the listed operators themselves (``_module_rows_of``). The first relu moved into Conv2d_0 and
    its kernel 5 µs longer: aten::relu_ is the one operator that changed, and its two module rows (ReLU_0 -t,
    Conv2d_0 +t+5 µs) are one row of +5 µs under Conv2d_0, the move said, not two rows that hid the 5 µs."""
    src = SAMPLES / TEXT
    if not src.is_dir():
        pytest.skip("sample data not found")
    base, comp = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "comp" / "rank0_ascend_pt"
    shutil.copytree(src, base)
    trace = base / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.chmod(0o644)
    events = json.loads(trace.read_text())
    assert [e.get("ph") for e in events if e.get("name") == WRAPPER] == ["X"]
    trace.write_text(json.dumps([e for e in events if e.get("name") != WRAPPER]))
    relu_us = _moved_copy(src, comp, longer=RELU_KERNEL, drop=WRAPPER)
    res = compare(str(base), str(comp))
    assert res.contributors["Name"].tolist() == ["aten::relu_"]
    frame = res.frames["module_contributors"]
    assert frame.attrs.get("module_rows_of") == ["aten::relu_"]
    assert frame.attrs.get("moved") == [("aten::relu_", f"{PATH} ReLU_0".strip(), f"{PATH} Conv2d_0".strip(),
                                         float(relu_us / 1000), float((relu_us + LONGER_US) / 1000))]
    mods = res.module_contributors
    assert mods["Name"].tolist() == [f"{PATH} Conv2d_0 > aten::relu_"]
    assert mods["Diff(ms)"].tolist() == pytest.approx([float(LONGER_US / 1000)], abs=1e-9)
    assert "aten::relu_ runs in another module on each side" in to_document(res)["summary"]["module_contributors_note"]
