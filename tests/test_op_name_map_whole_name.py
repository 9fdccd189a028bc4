"""An ``--op_name_map`` key renames an operator by its whole name (reference-2 §0.4), and a module path by
substring (docs/differences.md): a key that is only part of an op's name (``aten::linea`` of ``aten::linear``,
``aten::relu`` of the ResNet-50 trace's ``aten::relu_``) renames nothing and is said to, as a misspelt key is.
It passed without a word when the unused-key check read op names by substring, as it reads module names. The
premises (which names the traces hold) are read from the raw JSON here, not from the loader."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from msprof_compare import cli

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples"
BERT = [str(REPO / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300")]
RESNET = [str(SAMPLES / "kineto/tb_plugin/samples/resnet50_num_workers_0" / f"worker0.{t}.pt.trace.json.gz")
          for t in ("1623143089861", "1623143566756")]
NPU = [str(SAMPLES / f"msinsight/test/data/pytorch/text/{level}/rank0_ascend_pt") for level in ("level1", "level2")]


def _events(path: str) -> list[dict]:
    """The events of a Kineto trace or an NPU export's trace_view.json, read with the json module."""
    p = Path(path)
    if p.is_dir():
        p = p / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    with gzip.open(p, "rt", encoding="utf-8") if p.suffix == ".gz" else p.open(encoding="utf-8") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _names(path: str, cat: str | None = None) -> set[str]:
    """Names of the complete events of a Kineto trace or an NPU export's trace_view.json (of category ``cat``)."""
    return {e["name"] for e in _events(path) if e.get("ph") == "X" and isinstance(e.get("name"), str)
            and cat in (None, e.get("cat"))}


def _map_lines(capsys: pytest.CaptureFixture, tmp_path: Path, pair: list[str], mapping: str) -> list[str]:
    """The run's ``--op_name_map:`` warning lines, without their time stamps."""
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", pair[0], "-d", pair[1], "-o", str(tmp_path),
                          "--enable_operator_compare", "--op_name_map", mapping])
    assert info.value.code == 0
    return [line.split("] ", 1)[1] for line in capsys.readouterr().err.splitlines() if "--op_name_map:" in line]


def test_key_that_is_part_of_an_op_name_is_named(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The bundled BERT pair: 'aten::linea' and 'aten::_flash_attention' are parts of op names only; 'BertLayer'
    is part of a module name ('nn.Module: BertLayer_0'), which the map renames, and 'aten::linear' an op's name."""
    names = _names(BERT[0]) | _names(BERT[1])
    assert {"aten::linear", "aten::_flash_attention_forward"} <= names
    assert not {"aten::linea", "aten::_flash_attention"} & names
    assert any("BertLayer" in n and n.startswith("nn.Module:") for n in names)
    lines = _map_lines(capsys, tmp_path, BERT, "{'aten::linea': 'aten::mm', 'aten::_flash_attention': 'x', "
                                               "'BertLayer': 'Layer', 'aten::linear': 'aten::addmm'}")
    assert lines[0] == ("--op_name_map: 'aten::linea', 'aten::_flash_attention' name no operator of either side "
                        "and appear in no module name, so they rename nothing (names are case-sensitive: copy "
                        "them from the OperatorCompare or ModuleCompare sheet).")
    assert not [line for line in lines[1:] if "'aten::linea'" in line or "'aten::_flash_attention'" in line]


def test_key_that_is_part_of_a_call_stack_frame_only_is_named(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The bundled BERT pair: 'linear' is part of the python function '<built-in function linear>', a call-stack
    frame, and of no op's or nn.Module's name: module paths are made of nn.Module names (and optimizer ops) alone,
    so it renames nothing. It passed without a word while every python function's name counted as a module's."""
    names = _names(BERT[0]) | _names(BERT[1])
    frames = _names(BERT[0], "python_function") | _names(BERT[1], "python_function")
    assert "<built-in function linear>" in frames and "linear" not in names
    assert not any("linear" in n for n in names if n.startswith("nn.Module") or n.lower().startswith("optimizer"))
    assert _map_lines(capsys, tmp_path, BERT, "{'linear': 'aten::mm'}") == [
        "--op_name_map: 'linear' names no operator of either side and appears in no module name, so it renames "
        "nothing (names are case-sensitive: copy them from the OperatorCompare or ModuleCompare sheet)."]


@pytest.mark.skipif(not Path(RESNET[0]).is_file(), reason="shared samples not staged")
def test_relu_for_relu_underscore_is_named(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The tb_plugin ResNet-50 pair (no module data) runs ``aten::relu_`` only: the key 'aten::relu' (the
    reference-2 example's name) renames nothing. It got no line at all: not the unused key's, and not the idle
    entry's, which counts ops by whole name and found none. Neither trace holds nn.Module events, so the run writes
    OperatorCompare, the sheet the hint names (it named "OperatorCompare or ModuleCompare", a sheet no such run
    writes)."""
    names = _names(RESNET[0]) | _names(RESNET[1])
    assert "aten::relu_" in names and "aten::relu" not in names
    assert not any(n.startswith("nn.Module") for n in names)
    assert _map_lines(capsys, tmp_path, RESNET, "{'aten::relu': 'aten::mul'}") == [
        "--op_name_map: 'aten::relu' names no operator of either side and appears in no module name, so it renames "
        "nothing (names are case-sensitive: copy them from the OperatorCompare sheet)."]


@pytest.mark.skipif(not Path(NPU[0]).is_dir(), reason="shared samples not staged")
def test_part_of_an_optimizer_op_renames_its_module_path(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """NPU pair 1 (module data on both sides): an optimizer op is a pseudo-module, so 'SGD' renames the module
    path part 'Optimizer.step#SGD.step' and is no unused key; 'aten::conv' is part of op names alone."""
    names = _names(NPU[0]) | _names(NPU[1])
    assert "Optimizer.step#SGD.step" in names and "aten::conv" not in names
    assert any(n.startswith("aten::conv") for n in names)
    assert not any("SGD" in n for n in names if not n.startswith("Optimizer."))
    lines = _map_lines(capsys, tmp_path, NPU, "{'SGD': 'FusedSGD', 'aten::conv': 'x'}")
    assert lines[0] == ("--op_name_map: 'aten::conv' names no operator of either side and appears in no module "
                        "name, so it renames nothing (names are case-sensitive: copy them from the OperatorCompare "
                        "or ModuleCompare sheet).")
    # no unused key: it renames both sides' 2 optimizer pseudo-modules (Optimizer.zero_grad#SGD.zero_grad and
    # Optimizer.step#SGD.step, one complete event each), alike, which is said as of an op entry renaming alike
    assert [line for line in lines if "'SGD'" in line] == [
        "--op_name_map: the entry 'SGD': 'FusedSGD' renames the 2 base and 2 comparison module paths holding 'SGD' "
        "alike, so they pair as without it (an entry pairs a name of one side with another name of the other)."]


def _fwdbwd_flows(path: str) -> int:
    """The fwdbwd flow starts of a Kineto trace or an NPU export's trace_view.json: one backward module each."""
    return sum(e.get("cat") == "fwdbwd" and e.get("ph") == "s" for e in _events(path))


@pytest.mark.skipif(not Path(NPU[0]).is_dir(), reason="shared samples not staged")
def test_a_key_of_the_backward_prefix_renames_backward_module_paths(capsys: pytest.CaptureFixture,
                                                                    tmp_path: Path) -> None:
    """A backward module's path begins ``/[ BACKWARD ]`` (reference-2 §3.2-3.3), and the map renames module paths by
    substring: NPU pair 1 holds 27 fwdbwd flows a side, so 'BACKWARD' renames its 27 backward module paths, alike.
    It was called a key that renames nothing, in the line before the one saying what it renamed. The bundled BERT
    pair (inference: no fwdbwd flow) has no backward module, where the key renames nothing."""
    assert [_fwdbwd_flows(p) for p in NPU] == [27, 27] and [_fwdbwd_flows(p) for p in BERT] == [0, 0]
    for key in ("BACKWARD", "[ BACKWARD ]"):
        assert _map_lines(capsys, tmp_path, NPU, f"{{{key!r}: 'X'}}") == [
            f"--op_name_map: the entry {key!r}: 'X' renames the 27 base and 27 comparison module paths holding "
            f"{key!r} alike, so they pair as without it (an entry pairs a name of one side with another name of the "
            "other)."]
    assert _map_lines(capsys, tmp_path, BERT, "{'[ BACKWARD ]': 'X'}") == [
        "--op_name_map: '[ BACKWARD ]' names no operator of either side and appears in no module name, so it "
        "renames nothing (names are case-sensitive: copy them from the OperatorCompare or ModuleCompare sheet)."]


def test_a_key_of_a_path_that_no_module_path_holds_is_named(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """A key holding "/" could span two levels of a module path, so the unused-key warning, made before the module
    trees are, leaves it out: a misspelt path (``'/nn.Module: BertEmbedings_0'``, a 'd' short of the bundled pair's
    ``BertEmbeddings_0``) renamed nothing without a word. The trees tell: no path holds it, and the run says so. A
    key spanning two levels the pair holds (``BertModel_0/nn.Module: BertEncoder_0``) renames paths and gets the
    modules' line instead; one equal to its value that no path holds is named all the same, as the unused-key
    warning names such a key."""
    names = _names(BERT[0]) | _names(BERT[1])
    assert "nn.Module: BertEmbeddings_0" in names and not any("BertEmbedings" in n for n in names)
    assert {"nn.Module: BertModel_0", "nn.Module: BertEncoder_0"} <= names and not any("a/b" in n for n in names)
    lines = _map_lines(capsys, tmp_path, BERT, "{'/nn.Module: BertEmbedings_0': 'x', 'a/b': 'a/b', "
                                               "'BertModel_0/nn.Module: BertEncoder_0': 'E'}")
    assert ("--op_name_map: '/nn.Module: BertEmbedings_0', 'a/b' name no operator of either side and are part of no "
            "module path, so they rename nothing (names are case-sensitive: copy them from the ModuleCompare sheet)."
            in lines)
    held = []  # the encoder and the modules inside it, from the raw JSON
    for path in BERT:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            mods = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"
                    and str(e.get("name")).startswith("nn.Module:")]
        (enc,) = [e for e in mods if e["name"] == "nn.Module: BertEncoder_0"]
        held.append(sum(e["tid"] == enc["tid"] and enc["ts"] <= e["ts"] and e["ts"] + e["dur"] <= enc["ts"] + enc["dur"]
                        for e in mods))
    assert held == [69, 69]
    assert [line for line in lines if "BertEncoder_0'" in line] == [
        f"--op_name_map: the entry 'BertModel_0/nn.Module: BertEncoder_0': 'E' renames the {held[0]} base and "
        f"{held[1]} comparison module paths holding 'BertModel_0/nn.Module: BertEncoder_0' alike, so they pair as "
        "without it (an entry pairs a name of one side with another name of the other)."]
