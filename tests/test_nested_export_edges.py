"""Edges of the hints for an export's files where the lookup misses them (mutation audit mut65b): an export nested
in a folder of its own name (``loaders._nested_output_hint``: a DB export so nested, a nested folder that cannot be
listed) and a side file in another case (``ascend_text._other_case``: a folder of that name, two files). On the
MindSpore-layout fixture (tests/data/npu/profiler) and the l1 DB excerpt (tests/data/db), moved and renamed as a
``cp -r`` onto an existing copy or a case-changing tool leaves them (synthetic)."""

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


def nested_export(tmp_path: Path) -> tuple[Path, Path]:
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
    d, out = nested_export(tmp_path)
    (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    shutil.copyfile(DB, out / "ASCEND_PROFILER_OUTPUT" / DB.name)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.hint) == (str(out), _hint(DB.name, out))



def test_an_unreadable_nested_folder_keeps_the_plain_error(tmp_path: Path, monkeypatch) -> None:
    """A nested ASCEND_PROFILER_OUTPUT that cannot be listed (no permission, simulated: the tests run as root) says
    nothing of a copy in it: the folder gets the line it had, with no hint, not a traceback."""
    d, out = nested_export(tmp_path)
    inner = str(out / "ASCEND_PROFILER_OUTPUT")
    real = os.listdir

    def listdir(path="."):
        if os.fspath(path) == inner:
            raise PermissionError(13, "Permission denied", inner)
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    with pytest.raises(ProfileError) as err:
        detect(str(d))
    assert (err.value.path, err.value.hint) == (str(out), None)
    assert err.value.message.startswith("The data is not collected by PyTorch or Mindspore mode")


def test_a_folder_named_as_a_side_file_in_another_case_is_not_named(tmp_path: Path) -> None:
    """The fixture's kernel_details.csv gone and a folder named Kernel_Details.csv in its place: the original's
    "The file kernel_details.csv does not exist." alone, no "is there: rename it" of a folder."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    ms = tmp_path / "rank-0_ascend_ms"
    shutil.copytree(MS, ms)
    out = ms / "ASCEND_PROFILER_OUTPUT"
    (out / "kernel_details.csv").unlink()
    (out / "Kernel_Details.csv").mkdir()
    warnings = load_profile(str(ms), Options()).warnings
    assert [w for w in warnings if "kernel_details.csv does not exist" in w] == [
        f"{out}: The file kernel_details.csv does not exist."]


def test_two_side_files_in_other_cases_name_the_first_by_name(tmp_path: Path, monkeypatch) -> None:
    """KERNEL_DETAILS.CSV and Kernel_Details.csv both there (listed in that order): the first by name is named,
    'KERNEL_DETAILS.CSV' (upper case sorts first), whatever the folder's listing order."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    ms = tmp_path / "rank-0_ascend_ms"
    shutil.copytree(MS, ms)
    out = ms / "ASCEND_PROFILER_OUTPUT"
    shutil.copy(out / "kernel_details.csv", out / "KERNEL_DETAILS.CSV")
    (out / "kernel_details.csv").rename(out / "Kernel_Details.csv")
    real = os.listdir

    def listdir(path="."):
        names = real(path)
        return sorted(names, reverse=True) if os.fspath(path) == str(out) else names

    monkeypatch.setattr(os, "listdir", listdir)
    warnings = load_profile(str(ms), Options()).warnings
    assert [w for w in warnings if "kernel_details.csv does not exist" in w] == [
        f"{out}: The file kernel_details.csv does not exist. (KERNEL_DETAILS.CSV is there: the name is "
        "case-sensitive; rename it to kernel_details.csv)"]
