"""Edges of the world-size check's Detail (``checks._world_sources`` / ``_world_reading``): a side whose HCCL tasks
name exactly two ranks, and a metadata whose two world groups agree (mutation audit mut65b)."""

from __future__ import annotations

import json
from pathlib import Path

from test_summary import _Ctx, _profile

from msprof_compare.compare import checks


def test_a_side_whose_tasks_name_two_ranks_is_said_by_its_tasks_alone() -> None:
    """HCCL tasks naming ranks 0 and 1 (a rank span of 2) are a world of at least 2, said by the tasks: that side
    is not also said to have "no HCCL task [that] names another rank"; the other side (span 0, no metadata) is."""
    made = []
    for path, span in (("a", 2), ("b", 0)):
        p = _profile(["ProfilerStep#1", "aten::mm"], ["N/A", "[[2, 3]]"], {})
        p.source, p.path, p.rank_span = "ascend_text", path, span
        made.append(p)
    row = checks.guards(_Ctx(*made)).set_index("Check").loc["world size"]
    assert row.tolist() == [
        "unknown", "at least 2", None,
        "comparison side: profiler_metadata.json records no world size (distributed_args.world_size, the default "
        "group) and no HCCL task names another rank; base side: trace_view.json's HCCL tasks (src rank / dst rank) "
        "name rank ids up to 1 and the metadata records no world size"]


def test_two_world_groups_of_one_size_are_both_named() -> None:
    """tests/data/npu/profiler_metadata_pg.json (a real torch_npu metadata, its default_group of 8 ranks) with a
    hccl_world_group of the same 8 ranks and no usable distributed_args.world_size: 8, read from both groups."""
    meta = json.loads((Path(__file__).parent / "data/npu/profiler_metadata_pg.json").read_text())
    meta["distributed_args"]["world_size"] = 0
    groups = meta["parallel_group_info"]
    (default,) = [g for g in groups.values() if g["group_name"] == "default_group"]
    assert len(default["global_ranks"]) == 8
    groups["world"] = {**default, "group_name": "hccl_world_group"}
    assert checks._world_reading(meta) == (
        8, "distributed_args.world_size 0", "parallel_group_info (default_group / hccl_world_group's global_ranks)")
