"""The DB breakdown's wait rule reads, per communication group, the plane of least wait-candidate time, the first
in the table on a tie (reference-1 §7.3 7; ``breakdown_db.least_lanes``, a sort of the lanes' summed times since
session 78, where a pandas group-by summed them). Checked against that group-by, computed here as the rule reads:
random tables with ties, one-plane groups and missing group or plane names, and the real level-2 DB export's
HCCL tasks (reference pair 3's comparison side)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare.columns import col_of
from msprof_compare.compare.breakdown_db import _lanes, least_lanes
from msprof_compare.loaders import load_profile
from msprof_compare.model import factorize
from msprof_compare.options import Options

LEVEL2 = "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"


def _by_group_by(group: list, plane: list, dur: list) -> dict:
    """group -> plane of least summed time, the first (group, plane) in the table on a tie; a missing name left
    out (pandas' group-by)."""
    sums = pd.DataFrame({"group": group, "plane": plane, "d": dur}).groupby(["group", "plane"], sort=False)["d"].sum()
    least: dict = {}
    for (g, p), d in zip(sums.index.tolist(), sums.tolist(), strict=True):
        if g not in least or d < least[g][1]:
            least[g] = (p, d)
    return {g: p for g, (p, _) in least.items()}


def _least(group: list, plane: list, dur: list) -> dict:
    """``least_lanes`` of the table, as ``_groups`` calls it, its lane keys turned back into names."""
    g_codes, g_uniq = factorize(np.array(group, dtype=object))
    p_codes, p_uniq = factorize(np.array(plane, dtype=object))
    key = g_codes.astype(np.int64) * max(len(p_uniq), 1) + p_codes
    by_lane = np.argsort(key, kind="stable")
    got = least_lanes(key[by_lane], by_lane, np.array(dur, dtype=np.int64), g_uniq, p_uniq)
    return {g_uniq[g]: p_uniq[k % max(len(p_uniq), 1)] for g, k in got.items()}


@pytest.mark.parametrize("seed", range(40))
def test_each_groups_plane_is_the_group_bys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    groups = ["g0", "g1", "g2", "g3", None] if seed % 4 == 0 else ["g0", "g1", "g2", "g3"]
    planes = ["0", "1", "2", None] if seed % 5 == 0 else ["0", "1", "2"]
    group = [groups[i] for i in rng.integers(0, len(groups), n)]
    plane = [planes[i] for i in rng.integers(0, len(planes), n)]
    dur = rng.integers(0, 4, n).tolist()  # few values: ties among the sums
    assert _least(group, plane, dur) == _by_group_by(group, plane, dur)


def test_no_candidate_has_no_plane() -> None:
    assert _least([], [], []) == {}


def test_the_level2_exports_hccl_tasks(samples: Path) -> None:
    """Every HCCL task of the export as a candidate (the rule picks among its wait tasks: the lanes' sums are the
    same arithmetic)."""
    p = load_profile(str(samples / LEVEL2), Options(enable_profiling_compare=True))
    tasks = _lanes(p)[1]
    args = [col_of(tasks, c, object).tolist() for c in ("group", "plane")]
    dur = col_of(tasks, "dur", np.int64).tolist()
    assert len(dur) > 200 and len(set(args[1])) > 1
    assert _least(*args, dur) == _by_group_by(*args, dur)
