"""The "NPU profiler settings" row where a side's profiler_info.json names no profiler level (session 66,
left66f): the row went missing without a word, so two runs of other profiler levels read as compared. It is now an
"unknown" row whose blank figure says why, as the step and device counts' rows do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from msprof_compare.api import compare

#: tests/data/npu/rank0_ascend_pt: an excerpt of msinsight's text level1 rank0 export (its README), Level1 /
#: ACL_AICORE_PIPE_UTILIZATION in its profiler_info_0.json
EXPORT = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
CHECK = "NPU profiler settings"
LEAD = "profiler level / AI Core metrics of profiler_info.json: "
KEYS = ("(torch_npu writes it as config.experimental_config._profiler_level, MindSpore as "
        "profiler_parameters.profiler_level)")


def _settings(base: Path, comparison: Path) -> dict[str, Any] | None:
    """The settings row of a profiling compare (the JSON's and the Summary's guards are the same frame)."""
    g = compare(str(base), str(comparison), enable_profiling_compare=True).guards
    rows = g[g["Check"] == CHECK].to_dict("records")
    return rows[0] if rows else None


def _copy(tmp_path: Path, name: str, edit: Any) -> Path:
    """A copy of the excerpt whose profiler_info_0.json ``edit`` rewrites (a dict in, a dict out)."""
    side = tmp_path / name
    shutil.copytree(EXPORT, side)
    info = side / "profiler_info_0.json"
    info.write_text(json.dumps(edit(json.loads(info.read_text()))))
    return side


def _without(*keys: str) -> Any:
    """An edit that drops the nested key ``keys`` (config, then experimental_config, ...)."""
    def edit(doc: dict) -> dict:
        inner = doc
        for k in keys[:-1]:
            inner = inner[k]
        del inner[keys[-1]]
        return doc
    return edit


@pytest.mark.parametrize("keys", [("config",), ("config", "experimental_config"),
                                  ("config", "experimental_config", "_profiler_level")])
def test_a_profiler_info_without_a_level_is_said(tmp_path: Path, keys: tuple[str, ...]) -> None:
    """The excerpt against a copy whose profiler_info_0.json lacks ``config``, its ``experimental_config`` or that
    one's ``_profiler_level``: an "unknown" row, the comparison's figure blank and the Detail naming why and where
    the level is written; the unmodified pair keeps its "ok" row."""
    assert _settings(EXPORT, EXPORT)["Status"] == "ok"
    side = _copy(tmp_path, "side", _without(*keys))
    row = _settings(EXPORT, side)
    info = json.loads((EXPORT / "profiler_info_0.json").read_text())
    level = info["config"]["experimental_config"]["_profiler_level"]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("unknown", level, None) == ("unknown", "Level1", None)
    assert row["Detail"] == (f"{LEAD}not compared; blank: the comparison's profiler_info.json names no profiler "
                             f"level {KEYS}")


def test_both_sides_without_a_level_and_a_side_without_the_file(tmp_path: Path) -> None:
    """Both copies without ``experimental_config``: both figures blank, both said at once. A copy without
    profiler_info_0.json against one whose file names no level: that side is said to have none readable (as is one
    whose file holds an empty object); against the unmodified excerpt (Level1), or itself, no row, as before (no
    profiler_info.json names no level)."""
    one = _copy(tmp_path, "one", _without("config", "experimental_config"))
    two = _copy(tmp_path, "two", _without("config", "experimental_config"))
    row = _settings(one, two)
    assert (row["Status"], row["Base"], row["Comparison"]) == ("unknown", None, None)
    assert row["Detail"] == (f"{LEAD}not compared; blank: neither side's profiler_info.json names a profiler level "
                             f"{KEYS}")
    bare = tmp_path / "bare"
    shutil.copytree(EXPORT, bare)
    (bare / "profiler_info_0.json").unlink()
    row = _settings(bare, two)
    assert (row["Base"], row["Comparison"]) == (None, None)
    assert row["Detail"] == (f"{LEAD}not compared; blank: the base has no readable profiler_info.json and the "
                             f"comparison's profiler_info.json names no profiler level {KEYS}")
    assert _settings(bare, bare) is None and _settings(bare, EXPORT) is None
    # a file there that holds no object is read as none ("Invalid profiler info." in this run): "no readable", not
    # "no file"
    (bare / "profiler_info_0.json").write_text("{}")
    assert _settings(bare, two)["Detail"] == row["Detail"]


def test_a_level_of_the_wrong_type_beside_a_file_without_a_level(tmp_path: Path) -> None:
    """A level written as the number 5 against a profiler_info.json that names none (review66e): the side of the 5
    was said to name no level, then that its level 5 is of the wrong type, and its figure was blank; it is now
    "unread", as in the row of two such sides, and named once, by the wrong-type words."""
    five = _copy(tmp_path, "five", lambda d: {**d, "config": {**d["config"], "experimental_config": {
        **d["config"]["experimental_config"], "_profiler_level": 5}}})
    none = _copy(tmp_path, "none", _without("config", "experimental_config"))
    wrong = "the base's _profiler_level 5 in profiler_info.json: of the wrong type, read as not written"
    row = _settings(five, none)
    assert (row["Status"], row["Base"], row["Comparison"]) == ("unknown", "unread", None)
    assert row["Detail"] == (f"{LEAD}not compared; blank: the comparison's profiler_info.json names no profiler "
                             f"level {KEYS}; {wrong}")
    assert _settings(five, EXPORT)["Detail"] == f"{LEAD}not compared, {wrong}"
