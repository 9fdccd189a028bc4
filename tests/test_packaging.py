"""What ``pip install .`` builds from ``pyproject.toml``: setuptools must read it without a deprecation, since a
deprecated form stops building on the date setuptools gives (``project.license`` as a table: 2027-02-18)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest depends on tomli below 3.11
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The first setuptools that reads ``project.license`` as an SPDX string (older ones reject the string).
SPDX_LICENSE_SETUPTOOLS = 77


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _setuptools_floor(requires: list[str]) -> int:
    """The major version of the lowest setuptools a build may get, 0 if unbounded."""
    for req in requires:
        m = re.fullmatch(r"setuptools\s*>=\s*(\d+)(\.[\d.]+)?", req.strip())
        if m:
            return int(m.group(1))
    return 0


def test_license_is_an_spdx_string_and_the_build_gets_a_setuptools_that_reads_it() -> None:
    """setuptools 77+ warns on the table form (``{ text = ... }``) and will stop building it; the string form
    needs setuptools 77, so ``[build-system] requires`` must not let an older one build."""
    data = _pyproject()
    assert data["project"]["license"] == "Apache-2.0"
    assert _setuptools_floor(data["build-system"]["requires"]) >= SPDX_LICENSE_SETUPTOOLS


def test_setuptools_applies_pyproject_without_warnings(tmp_path: Path) -> None:
    """The configuration step of the wheel build, as the installed setuptools runs it, with every warning an
    error. Runs where a setuptools the build could get is installed (a 3.12+ venv has none)."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < SPDX_LICENSE_SETUPTOOLS:
        pytest.skip(f"setuptools {setuptools.__version__} is older than any build of pyproject.toml gets")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    for name in ("pyproject.toml", "README.md"):  # the readme is read into the metadata
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist = apply_configuration(Distribution(), str(tmp_path / "pyproject.toml"))
    assert dist.metadata.license_expression == "Apache-2.0"
    assert dist.metadata.name == "msprof-compare"



def test_the_package_ships_its_py_typed_marker() -> None:
    """The public API has type hints (``compare`` -> ``CompareResult``); without the PEP 561 marker in the wheel,
    mypy reads ``import msprof_compare`` as untyped ("missing library stubs or py.typed marker") and checks
    nothing of a script's calls. The marker is package data, so pyproject.toml must name it."""
    import fnmatch

    patterns = _pyproject()["tool"]["setuptools"]["package-data"]["msprof_compare"]
    assert any(fnmatch.fnmatch("py.typed", p) for p in patterns), patterns
    assert (REPO_ROOT / "msprof_compare" / "py.typed").is_file()


def _venv_can_build() -> str | None:
    """Why the running interpreter cannot build the wheel without pip's isolated build (None if it can): each
    ``[build-system] requires`` installed at a version it allows, and a setuptools that writes wheels itself
    (70.1+) or the ``wheel`` package beside an older one."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement
    from packaging.version import Version

    for req in map(Requirement, _pyproject()["build-system"]["requires"]):
        try:
            have = version(req.name)
        except PackageNotFoundError:
            return f"{req.name} is not installed"
        if not req.specifier.contains(have, prereleases=True):
            return f"{req.name} {have} does not satisfy {req}"
    if Version(version("setuptools")) < Version("70.1"):
        try:
            version("wheel")
        except PackageNotFoundError:
            return f"setuptools {version('setuptools')} writes no wheel without the wheel package"
    return None


def test_the_wheel_holds_the_json_schemas(tmp_path: Path) -> None:
    """``msprof_compare.schema`` reads package data: a wheel without the schema files installs a package whose
    ``schema()`` fails. Built by pip from a copy of the tree (the checkout stays clean), the wheel holds both,
    byte for byte the tree's. Where the venv's setuptools satisfies ``[build-system]`` the build uses it
    (``--no-build-isolation``: no index needed); otherwise (65.5 in a 3.11 venv) pip's isolated build fetches the
    setuptools it asks for, as ``pip install .`` does, and the test is skipped only when no index can supply it."""
    import subprocess
    import zipfile

    src = tmp_path / "src"
    shutil.copytree(REPO_ROOT / "msprof_compare", src / "msprof_compare",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, src / name)
    why_isolated = _venv_can_build()
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check",
                          *(["--no-build-isolation"] if why_isolated is None else []),
                          "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    unfetched = re.search(r"No matching distribution found for (\S+)", run.stderr)
    if (run.returncode != 0 and why_isolated is not None and unfetched
            and "install build dependencies did not run successfully" in run.stderr):
        pytest.skip(f"no wheel can be built here: {why_isolated}, and pip's index has no {unfetched[1]} for "
                    "the isolated build")
    assert run.returncode == 0, run.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("msprof_compare-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        held = {n: zf.read(n) for n in zf.namelist() if n.endswith(".schema.json")}
        zf.extractall(tmp_path / "site")
    assert held == {f"msprof_compare/schemas/{n}.schema.json":
                    (REPO_ROOT / "msprof_compare" / "schemas" / f"{n}.schema.json").read_bytes()
                    for n in ("result", "ranks")}
    # the README's command, run against the unpacked wheel (not the checkout), writes the result schema
    code = ("import json, msprof_compare; print(json.dumps(msprof_compare.schema('result'))); "
            "print(msprof_compare.__file__)")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    printed, where = run.stdout.splitlines()
    assert Path(where).parent == tmp_path / "site" / "msprof_compare"
    assert json.loads(printed) == json.loads(held["msprof_compare/schemas/result.schema.json"])
    # the help's pointer for a pip user, who has no README.md file: the wheel's metadata holds it, as Python reads it
    from msprof_compare.cli import HELP_EPILOG

    (expr,) = re.findall(r"in Python (importlib\.metadata\.\S+)\. ", HELP_EPILOG)
    run = subprocess.run([sys.executable, "-c", f"import importlib.metadata; print({expr}, end='')"],
                         capture_output=True, encoding="utf-8", cwd=tmp_path,
                         env={**env, "PYTHONIOENCODING": "utf-8"}, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == (REPO_ROOT / "README.md").read_text(encoding="utf-8").strip()
