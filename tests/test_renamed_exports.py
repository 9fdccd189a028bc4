"""An NPU export copied to a folder whose name says no framework (no ``*_ascend_pt`` / ``*_ascend_ms``): its
framework is named only where its files or lanes tell (``model.npu_framework``). A copy of the level-1 torch_npu
export (msinsight, samples/PROVENANCE.md) without its cpu_op events was called "MindSpore exports have none"."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.loaders import load_profile
from msprof_compare.model import npu_framework

L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
L2 = "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"


def _renamed(samples: Path, tmp_path: Path, info: bool, python_lane: bool) -> Path:
    """The level-1 export copied to ``run_a`` without its cpu_op events (a run recorded without torch ops), with or
    without its profiler_info_0.json and its Python process lane (every event of that pid, its metadata too)."""
    folder = tmp_path / "run_a"
    shutil.copytree(samples / L1, folder)
    trace = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.chmod(0o644)
    events = json.loads(trace.read_text(encoding="utf-8"))
    lanes = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert "MindSpore" not in lanes.values()
    python = [pid for pid, name in lanes.items() if name == "Python"]
    assert len(python) == 1
    kept = [e for e in events if e.get("cat") != "cpu_op" and (python_lane or e.get("pid") != python[0])]
    assert len([e for e in events if e.get("cat") == "cpu_op"]) == 860
    trace.write_text(json.dumps(kept), encoding="utf-8")
    info_file = folder / "profiler_info_0.json"
    settings = json.loads(info_file.read_text(encoding="utf-8"))
    assert isinstance(settings["config"]["experimental_config"], dict)  # torch_npu's layout
    if not info:
        info_file.unlink()
    return folder


def _reason(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path) -> str:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(base), str(comparison), enable_operator_compare=True)
    said = [m for m in caplog.messages if m.startswith("Can't find any torch op in the file")]
    assert len(said) == 1, caplog.messages
    return said[0].split("only the other side has ops (", 1)[1].split(")", 1)[0]


@pytest.mark.parametrize("info, python_lane, framework, reason", [
    (True, False, "torch_npu", "a torch_npu export without cpu_op events has none"),  # its profiler_info.json
    (False, True, "torch_npu", "a torch_npu export without cpu_op events has none"),  # its Python lane
    (True, True, "torch_npu", "a torch_npu export without cpu_op events has none"),
    (False, False, "", "an NPU export without cpu_op events has none"),  # nothing tells
])
def test_a_renamed_export_is_named_by_its_files_or_lanes(samples: Path, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture, info: bool,
                                                        python_lane: bool, framework: str, reason: str) -> None:
    """Before: every case read "MindSpore exports have none", the folder's name being the only evidence read
    beside a MindSpore lane (which torch_npu does not write)."""
    folder = _renamed(samples, tmp_path, info, python_lane)
    from msprof_compare.options import Options
    assert npu_framework(load_profile(str(folder), Options())) == framework
    assert _reason(caplog, folder, samples / L2) == reason
