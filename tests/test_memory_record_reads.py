"""memory_record.csv is read, and a missing one warned of, only by the runs that use it: OverallMetrics' Mem Usage
and the memory comparison's peak line (``ascend_text.side_files_read``; mutation audit mut65b). On the torch_npu
text fixture, which holds one, and the MindSpore-layout fixture, which holds none (tests/data/npu)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data" / "npu"
MS = DATA / "profiler" / "rank-0_20250101000000000_ascend_ms"
PT = DATA / "rank0_ascend_pt"
#: What a missing memory_record.csv's line says after its side where the export's profiler_info says profile_memory
#: was on (every fixture and sample export: the file was left out of the copy made for the test)
LOST = ("no peak reserved memory to compare; profile_memory was on (its profiler_info), so the run recorded no "
        "memory or a copy left the file out: copy the export again in full")


def test_a_run_without_memory_figures_neither_reads_nor_misses_memory_record() -> None:
    """An operator comparison alone: the torch_npu fixture's memory_record.csv is not read, and the MindSpore
    fixture's missing one is not warned of; a memory comparison reads the first and warns of the second."""
    assert (PT / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").is_file()
    assert not (MS / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").exists()
    pt = load_profile(str(PT), Options(enable_operator_compare=True))
    assert pt.memory_record is None and "memory_record.csv" not in pt.files
    ms = load_profile(str(MS), Options(enable_operator_compare=True))
    assert not [w for w in ms.warnings if "memory_record.csv" in w]
    pt = load_profile(str(PT), Options(enable_memory_compare=True))
    assert pt.memory_record is not None and "memory_record.csv" in pt.files
    ms = load_profile(str(MS), Options(enable_memory_compare=True))
    assert [w for w in ms.warnings if "memory_record.csv" in w] == [
        f"{MS / 'ASCEND_PROFILER_OUTPUT'}: The file memory_record.csv does not exist. ({LOST})"]
    said = next(w for w in ms.warnings if "memory_record.csv" in w)
    assert said.of_side("comparison side").endswith(f" does not exist. (comparison side: {LOST})")


@pytest.mark.parametrize("framework", ["MindSpore", "torch_npu"])
def test_a_missing_memory_record_says_the_profiler_writes_it_only_with_profile_memory(tmp_path, framework):
    """MindSpore writes no memory_record.csv unless profile_memory=True (off by default), and its side got the
    original's "The file memory_record.csv does not exist." alone, as if the export were damaged; so did torch_npu's.
    The line now says, after the side, what it costs and what to do, naming the profiler the export is of (its
    folder's name), where its profiler_info does not say profile_memory was on; where it says so, the file was lost."""
    name = "rank-0_20250101000000001_ascend_ms" if framework == "MindSpore" else "rank0_ascend_pt"
    side = tmp_path / name
    shutil.copytree(MS if framework == "MindSpore" else PT, side)
    (side / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").unlink(missing_ok=True)
    info = next(side.glob("profiler_info*.json"))
    if framework == "MindSpore":  # MindSpore 2.5's layout, without profile_memory: its default, off
        info.write_text(json.dumps({"profiler_parameters": {"profiler_level": "Level1"}, "ms_version": "2.5.0"}))
    else:  # torch_npu's, with profile_memory off
        doc = json.loads(info.read_text())
        doc["config"]["common_config"]["profile_memory"] = False
        info.write_text(json.dumps(doc))
    for run in ("enable_profiling_compare", "enable_memory_compare"):
        p = load_profile(str(side), Options(**{run: True}))
        said = [w for w in p.warnings if "memory_record.csv" in w]
        assert [w.of_side("base side") for w in said] == [
            f"{side / 'ASCEND_PROFILER_OUTPUT'}: The file memory_record.csv does not exist. (base side: no peak "
            f"reserved memory to compare; {framework} writes it only where profile_memory=True recorded memory: "
            "profile with it)"], run


@pytest.mark.parametrize("framework", ["MindSpore", "torch_npu"])
@pytest.mark.parametrize("recorded", [True, False], ids=["profile_memory-on", "profile_memory-off"])
def test_a_missing_operator_memory_says_what_it_costs_and_what_to_do(tmp_path, framework, recorded):
    """operator_memory.csv, the memory comparison's only records of a text export (neither fixture holds one), got
    "(base side)" alone right below memory_record.csv's line with its cost and advice: it now says the same of
    itself, what it costs (MemoryCompare's memory inside operators) and what to do: copy the export again where
    profiler_info says profile_memory was on (the fixtures'), else profile with it, naming the profiler."""
    name = "rank-0_20250101000000001_ascend_ms" if framework == "MindSpore" else "rank0_ascend_pt"
    side = tmp_path / name
    shutil.copytree(MS if framework == "MindSpore" else PT, side)
    assert not (side / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").exists()
    info = next(side.glob("profiler_info*.json"))
    doc = json.loads(info.read_text())
    if not recorded and framework == "MindSpore":  # MindSpore 2.5's layout, without profile_memory: off
        info.write_text(json.dumps({"profiler_parameters": {"profiler_level": "Level1"}, "ms_version": "2.5.0"}))
    elif not recorded:
        doc["config"]["common_config"]["profile_memory"] = False
        info.write_text(json.dumps(doc))
    advice = ("profile_memory was on (its profiler_info), so the run recorded no memory or a copy left the file out: "
              "copy the export again in full" if recorded else
              f"{framework} writes it only where profile_memory=True recorded memory: profile with it")
    p = load_profile(str(side), Options(enable_memory_compare=True))
    said = [w.of_side("base side") for w in p.warnings if "operator_memory.csv" in w]
    assert said == [f"{side / 'ASCEND_PROFILER_OUTPUT'}: The file operator_memory.csv does not exist. (base side: no "
                    f"memory allocated inside operators to compare (MemoryCompare); {advice})"]
    # a run without the memory comparison reads no operator_memory.csv and misses none
    assert not [w for w in load_profile(str(side), Options(enable_profiling_compare=True)).warnings
                if "operator_memory.csv" in w]
