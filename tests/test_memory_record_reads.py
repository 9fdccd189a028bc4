"""memory_record.csv is read, and a missing one warned of, only by the runs that use it: OverallMetrics' Mem Usage
and the memory comparison's peak line (``ascend_text.side_files_read``; mutation audit mut65b). On the torch_npu
text fixture, which holds one, and the MindSpore-layout fixture, which holds none (tests/data/npu)."""

from __future__ import annotations

from pathlib import Path

from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

DATA = Path(__file__).resolve().parent / "data" / "npu"
MS = DATA / "profiler" / "rank-0_20250101000000000_ascend_ms"
PT = DATA / "rank0_ascend_pt"


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
        f"{MS / 'ASCEND_PROFILER_OUTPUT'}: The file memory_record.csv does not exist."]
