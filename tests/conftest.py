"""Shared test fixtures: make the package importable and locate ../shared/samples."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# No per-example time limit (hypothesis's 200 ms default): on a loaded 2-core machine an exact-decimal
# property failed a run on time alone; a slow example is still caught by the suite's own time budget.
settings.register_profile("msprof-compare", deadline=None)
settings.load_profile("msprof-compare")

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

SAMPLES = REPO_ROOT.parent / "shared" / "samples"
REFERENCE_OUTPUTS = REPO_ROOT.parent / "shared" / "reference-outputs"


TEST_DATA = REPO_ROOT / "tests" / "data"


def _read_only_books_hold_no_file() -> None:
    """A read-only openpyxl workbook keeps its zip file open until ``close()``, and ~20 tests index a sheet of
    one they never hold. Freed in a reference cycle, the file's finalizer may then run inside a later test (whose
    ``gc.collect()`` finds it) as a ResourceWarning, which this suite makes an error: a failure in an unrelated
    test. Read-only books of a path are therefore opened from the file's bytes in memory: no file stays open."""
    import io
    import os

    import openpyxl
    import openpyxl.reader.excel

    load = openpyxl.reader.excel.load_workbook

    def load_workbook(filename, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - openpyxl's signature
        if kwargs.get("read_only") and isinstance(filename, (str, os.PathLike)):
            filename = io.BytesIO(Path(filename).read_bytes())
        return load(filename, *args, **kwargs)

    openpyxl.load_workbook = openpyxl.reader.excel.load_workbook = load_workbook


_read_only_books_hold_no_file()


def pytest_configure(config: pytest.Config) -> None:
    """Cyclic GC tuned for the test process only: collection builds hundreds of thousands of AST nodes, and the
    oracles parse whole traces with the json module (millions of dicts); at the default thresholds (700, 10, 10)
    that made thousands of collections, a third of the CPU time of some files. Young objects are collected every
    50,000 allocations instead. No test reads these settings (the product's own GC pause toggles
    ``gc.isenabled`` only; subprocesses start with the defaults)."""
    gc.set_threshold(50_000, 10, 10)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collected tests, modules and ASTs live to the end: freeze them out of the collector, so that no full
    collection walks them again."""
    gc.collect()
    gc.freeze()


def _sample_files() -> set[str]:
    return {str(p) for p in SAMPLES.rglob("*")} if SAMPLES.is_dir() else set()


def _folder_times() -> dict[str, int]:
    """Modification times of the input folders: a file created and removed again (the -wal / -shm files of a
    database opened read-write) leaves no file behind, but changes its folder's time."""
    roots = [r for r in (SAMPLES, TEST_DATA) if r.is_dir()]
    return {str(d): d.stat().st_mtime_ns for r in roots for d in (r, *r.rglob("*")) if d.is_dir()}


@pytest.fixture(scope="session", autouse=True)
def samples_stay_untouched():
    """The shared samples and tests/data are inputs: no test (and no code under test) may create files among
    them, not even for a moment (open a database there with ``dbutil.sql``, or a copy)."""
    before, times = _sample_files(), _folder_times()
    yield
    added = sorted(_sample_files() - before)
    if added:
        raise AssertionError(f"tests created files under {SAMPLES}: {added[:5]}")
    touched = sorted(d for d, t in _folder_times().items() if times.get(d, t) != t)
    if touched:
        raise AssertionError(f"tests created or removed files in input folders: {touched[:5]}")


@pytest.fixture(autouse=True)
def utf8_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text that is not UTF-8 is read in the locale's encoding when that is another (``traceio.as_utf8``): the
    tests read it as on a UTF-8 host, whatever the machine's locale; a test of the locale rule patches it."""
    from msprof_compare.loaders import traceio

    monkeypatch.setattr(traceio, "_locale_encoding", lambda: "utf-8")
    monkeypatch.setenv("PYTHONUTF8", "1")  # the same for the CLI runs in subprocesses


@pytest.fixture
def samples() -> Path:
    """The real sample profiles beside the checkout; skip the test when they are absent."""
    if not SAMPLES.is_dir():
        pytest.skip(f"sample data not found at {SAMPLES}")
    return SAMPLES


@pytest.fixture
def reference_outputs() -> Path:
    """What the original tool produced for some sample pairs; skip when absent."""
    if not REFERENCE_OUTPUTS.is_dir():
        pytest.skip(f"reference outputs not found at {REFERENCE_OUTPUTS}")
    return REFERENCE_OUTPUTS


@pytest.fixture
def dlrm_rank(samples: Path, tmp_path: Path):
    """``dlrm_rank(i)``: rank i's Kineto trace of param's 8-rank DLRM job (PyTorch 2.1, V100, NCCL all_to_all and
    all_reduce), taken out of the sample's tarball into ``tmp_path``; skip when the tarball is absent."""
    import tarfile

    tarball = samples / "param/et_replay/tests/inputs/dlrm_kineto.tar.gz"
    if not tarball.is_file():
        pytest.skip("sample absent")

    def extract(rank: int) -> Path:
        with tarfile.open(tarball) as tar:
            member = next(m for m in tar.getmembers() if Path(m.name).name.startswith(f"worker{rank}_"))
            path = tmp_path / Path(member.name).name
            path.write_bytes(tar.extractfile(member).read())
        return path

    return extract


@pytest.fixture
def tmp_out(tmp_path: Path) -> Path:
    """A fresh, empty output directory for one test."""
    out = tmp_path / "out"
    out.mkdir()
    return out


@pytest.fixture(autouse=True)
def environment_kept():
    """A test that leaves an environment variable changed fails: the fuzz module once left
    MSPROF_ANALYZE_LOG_LEVEL=WARNING set, and a later module's gate tests lost their INFO line, in the whole
    suite only (monkeypatch.setenv restores itself and passes)."""
    import os

    before = dict(os.environ)  # PYTEST_CURRENT_TEST changes with the phase (setup, call)
    yield
    after = dict(os.environ)
    changed = sorted(k for k in before.keys() | after.keys()
                     if before.get(k) != after.get(k) and not k.startswith("PYTEST_"))
    if changed:
        os.environ.clear()
        os.environ.update(before)
        pytest.fail(f"the test left environment variables changed: {', '.join(changed)}")


@pytest.fixture(autouse=True)
def logger_state_kept():
    """Each test starts with the ``msprof-analyze`` logger as the one before it found it: the bench's in-process
    functions quiet it to ERROR for the rest of their (script) process, and a test that calls ``setup_logging``
    keeps its handler, which later ``caplog`` tests then did not see."""
    import logging

    logger = logging.getLogger("msprof-analyze")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]
