"""The hint for an export nested in a folder of its own name (``loaders._nested_output_hint``) of a DB export
(mutation audit mut65b): the MindSpore-layout fixture (tests/data/npu/profiler) with the l1 DB excerpt
(tests/data/db) in place of its trace, moved as ``cp -r`` onto an existing copy moves it (synthetic)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from msprof_compare.errors import ProfileError
from msprof_compare.loaders import detect

DATA = Path(__file__).resolve().parent / "data"
MS = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"


def _nested(tmp_path: Path) -> tuple[Path, Path]:
    """The fixture with its ASCEND_PROFILER_OUTPUT moved into a new one: (the profiling folder, the outer one)."""
    d = tmp_path / "rank-0_ascend_ms"
    shutil.copytree(MS, d)
    out = d / "ASCEND_PROFILER_OUTPUT"
    out.rename(tmp_path / "moved")
    out.mkdir()
    (tmp_path / "moved").rename(out / "ASCEND_PROFILER_OUTPUT")
    return d, out


def _hint(db_or_trace: str, out: Path) -> str:
    return (f"it holds ASCEND_PROFILER_OUTPUT{os.sep}{db_or_trace} a level down, a copy nested in a folder of its own "
            f"name (as cp -r onto an existing ASCEND_PROFILER_OUTPUT makes): move that folder's files up into {out}")


def test_a_nested_db_export_is_named(tmp_path: Path) -> None:
    """The nested copy holding the DB export in place of its trace_view.json: the database is named a level down."""
    d, out = _nested(tmp_path)
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    shutil.copyfile(DB, out / "ASCEND_PROFILER_OUTPUT" / DB.name)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.hint) == (str(out), _hint(DB.name, out))

