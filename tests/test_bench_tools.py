"""The bench scripts read the shared samples: they must leave them as they are and write what they say."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sqlite3
import sys
import urllib.parse
from pathlib import Path

import pytest
from conftest import REPO_ROOT

LEVEL1_DB = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"


def _bench(name: str):
    """A bench script as a module (bench/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _make_large_db():
    return _bench("make_large_db")


def _count(db: Path, sql: str) -> int:
    con = sqlite3.connect(f"file:{urllib.parse.quote(str(db))}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def test_make_large_db_leaves_a_wal_mode_source_alone(samples: Path, tmp_path: Path) -> None:
    # The level1 export is in WAL mode (header bytes 18-19 are 2): a plain read-only open left an empty -wal
    # and a 32 KiB -shm beside it. The folder name also holds characters a URI must escape.
    src_dir = tmp_path / "src ?#%"
    src_dir.mkdir()
    src = src_dir / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(samples / LEVEL1_DB, src)
    assert src.read_bytes()[18:20] == b"\x02\x02"
    src.chmod(0o444)
    out = tmp_path / "out" / "ascend_pytorch_profiler_0.db"
    out.parent.mkdir()
    facts = _make_large_db().build(str(src), str(out), size_mb=2)
    assert sorted(p.name for p in src_dir.iterdir()) == [src.name]
    tasks = _count(src, "SELECT count(*) FROM TASK")
    assert facts["replicas"] >= 2
    assert _count(out, "SELECT count(*) FROM TASK") == facts["replicas"] * tasks
    # every replica gets fresh task ids
    assert _count(out, "SELECT count(DISTINCT globalTaskId) FROM TASK") == \
        facts["replicas"] * _count(src, "SELECT count(DISTINCT globalTaskId) FROM TASK")


def test_make_large_db_replicates_the_call_chains_with_fresh_ids(samples: Path, tmp_path: Path) -> None:
    """A with_stack export's PYTORCH_CALLCHAINS grows with its ops, each replica's chains under fresh ids that its
    own ops name (the table was copied once and every replica's ops named the source's chains, so a large DB paid
    for the stacks of one replica): frames, chains and the frames of each op's chain scale with the replicas."""
    out = tmp_path / "ascend_pytorch_profiler_0.db"
    facts = _make_large_db().build(str(samples / LEVEL1_DB), str(out), size_mb=2)
    n = facts["replicas"]
    src = samples / LEVEL1_DB
    frames, chains = (_count(src, sql) for sql in ("SELECT count(*) FROM PYTORCH_CALLCHAINS",
                                                   "SELECT count(DISTINCT callchainId) FROM PYTORCH_API"))
    assert n >= 2 and frames > chains > 0
    assert _count(out, "SELECT count(*) FROM PYTORCH_CALLCHAINS") == n * frames
    assert _count(out, "SELECT count(DISTINCT callchainId) FROM PYTORCH_API") == n * chains
    joined = "SELECT count(*) FROM PYTORCH_API p JOIN PYTORCH_CALLCHAINS c ON c.id = p.callchainId"
    assert _count(out, joined) == n * _count(src, joined)


def test_compare_bench_ratios_need_a_json_trace() -> None:
    """DB inputs have no JSON trace: (a) timed an empty loop and b/a read ~700; the ratios are now None
    (printed "n/a"), also for a pair with one DB side ((a) decoded only the other side's trace, while (b)
    loaded both), and still figures for inputs with a trace."""
    mod = _bench("compare_bench")
    db = next((REPO_ROOT / "tests" / "data" / "db").rglob("ascend_pytorch_profiler_*.db"))
    npu = REPO_ROOT / "tests" / "data" / "npu" / "rank0_ascend_pt"
    for base, comp, traced in ((db, db, False), (npu, npu, True), (db, npu, False)):
        got = mod.ratio_mode(str(base), str(comp), 1, False)
        for k in ("wall", "cpu"):
            ratios = [got[k][r] for r in ("ratio_compare", "ratio_compare_xlsx", "ratio_floor")]
            assert all((r is not None and r > 0) if traced else r is None for r in ratios), (base, k, ratios)
    assert mod._ratio(None) == "n/a" and mod._ratio(2.345) == "2.35"


def test_make_large_db_names_each_replicas_step_after_its_id(samples: Path, tmp_path: Path) -> None:
    """Each replica's ProfilerStep#N op is named after its STEP_TIME id, as a real export names them: the
    replicas kept the source's ProfilerStep#50, so a compare of any other step found no operator of it."""
    from msprof_compare.api import compare

    out = tmp_path / "big_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    out.parent.mkdir(parents=True)
    facts = _make_large_db().build(str(samples / LEVEL1_DB), str(out), size_mb=2)
    con = sqlite3.connect(out)
    try:
        steps = [r[0] for r in con.execute("SELECT id FROM STEP_TIME ORDER BY startNs")]
        names = [r[0] for r in con.execute("SELECT s.value FROM PYTORCH_API p JOIN STRING_IDS s ON p.name = s.id "
                                          "WHERE s.value LIKE 'ProfilerStep#%' ORDER BY CAST(p.startNs AS INTEGER)")]
        assert con.execute("SELECT count(*) - count(DISTINCT id) FROM STRING_IDS").fetchone()[0] == 0
    finally:
        con.close()
    assert len(steps) == facts["replicas"] >= 2 and len(set(steps)) == len(steps)
    assert names == [f"ProfilerStep#{s}" for s in steps]
    res = compare(str(out.parent.parent), str(out.parent.parent), base_step=steps[1], comparison_step=steps[-1])
    assert "ApiCompare" in res.sheet_names and len(res.sheet("ApiCompare")) > 0


LEVEL1_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def test_make_large_text_export_replicates_the_csvs_and_numbers_each_copys_step(samples: Path,
                                                                                tmp_path: Path) -> None:
    """The copies of a text export are steps of one longer run: kernel_details.csv, operator_memory.csv and
    memory_record.csv grow with the trace (memory_record.csv was copied once, so a 1 GB benchmark read a 79 KB
    memory file), and copy k's ProfilerStep#50 and Step Id are 50 + k (all copies were step 50), so a step of
    the copy compares equal to the source's step."""
    from msprof_compare.api import compare

    src = samples / LEVEL1_TEXT
    out = tmp_path / "big_ascend_pt"
    copies = _bench("make_large").scale_npu_dir(str(src), str(out), 5)
    assert copies >= 2

    def rows(root: Path, name: str) -> list[str]:
        return (root / "ASCEND_PROFILER_OUTPUT" / name).read_text(encoding="utf-8").splitlines()[1:]

    for name in ("kernel_details.csv", "operator_memory.csv", "memory_record.csv"):
        assert len(rows(out, name)) == copies * len(rows(src, name)), name
    trace = (out / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8")
    assert [trace.count(f'"ProfilerStep#{50 + k}"') for k in range(copies)] == [1] * copies
    result = compare(str(src), str(out), base_step=50, comparison_step=50 + copies - 1,
                     enable_kernel_compare=True)
    kernels = next(s for s in result.sheets if s.name == "KernelCompare").frame()
    assert kernels["Calls"].sum() == kernels["Calls.1"].sum() > 0
    assert kernels["Total Duration(us)"].sum() == kernels["Total Duration(us).1"].sum()


@pytest.mark.skipif(sys.platform != "linux", reason="the bench reads VmHWM of /proc/self/status on Linux only")
def test_compare_bench_peak_rss_is_the_fresh_process_own() -> None:
    """README: ratio mode prints "the peak RSS of a fresh run". The fresh process read ru_maxrss, which Linux
    starts at the spawning process's resident size (carried over fork and exec), so after the in-process
    rounds it printed the bench process's size whenever that was the larger (a 70 MB GPU trace: 320.5 MiB
    against the child's own 296.3). A fresh run of the NPU excerpt spawned by a process holding 256 MiB more
    must read its own peak, well under that."""
    mod = _bench("compare_bench")
    npu = REPO_ROOT / "tests" / "data" / "npu" / "rank0_ascend_pt"
    held = b"\x01" * (256 * 1024 * 1024)  # resident in this process while the fresh run starts
    try:
        info = mod.spawn("rss", str(npu), str(npu), False, "sequential")
    finally:
        del held
    assert 0 < info["maxrss_mib"] < 200, info


def test_compare_bench_stages_give_each_stage_its_cpu_seconds() -> None:
    """Stage mode times each stage in CPU seconds beside wall-clock (``cpu_by_stage``), so runs on a shared
    machine compare by CPU: every timed stage has its CPU figure, none negative, and the stages' CPU adds up to
    no more than the pipeline's total, itself within the whole process's (imports included)."""
    mod = _bench("compare_bench")
    npu = REPO_ROOT / "tests" / "data" / "npu" / "rank0_ascend_pt"
    info = mod.spawn("stages", str(npu), str(npu), True, "sequential")
    cpu = info["cpu_by_stage"]
    timed = {k for k, v in info.items() if k not in ("rows", "maxrss_mib", "child_maxrss_mib", "cpu_s", "cpu_by_stage")}
    assert set(cpu) == timed and "comparator: summary" in cpu and "base: decode" in cpu
    assert min(cpu.values()) >= 0
    assert sum(v for k, v in cpu.items() if k != "total") <= cpu["total"] + 1e-3
    assert 0 < cpu["total"] <= info["cpu_s"]


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="the sampler needs setitimer (SIGPROF)")
def test_where_bench_charges_samples_to_the_package_stack(tmp_path: Path) -> None:
    """bench/where_bench.py (session 68): warm compares sampled on CPU time, each sample charged to every function
    of the package on the stack and to the innermost line. Every sample falls inside a compare, so ``api.py
    compare`` holds (nearly) all of them; the NPU excerpt's load and its time breakdown are each a part of it; a
    function holds at least the samples of any one of its lines; no line of another package is named; the
    process's SIGPROF handler is its own again afterwards; and the command line writes what it printed as JSON."""
    import json
    import signal

    mod = _bench("where_bench")
    npu = REPO_ROOT / "tests" / "data" / "npu" / "rank0_ascend_pt"
    before = signal.getsignal(signal.SIGPROF)
    got = mod.sample(str(npu), str(npu), 20, False, interval_us=100)
    assert signal.getsignal(signal.SIGPROF) is before
    # the kernel's profiling timer ticks far coarser than 100 us here (~4 ms: 50-53 samples for 20 compares of
    # 12 ms CPU each, alone), so "> 50" failed at 47 in a loaded suite; 20 still gives every share below meaning
    assert got["rounds"] == 20 and got["samples"] >= 20 and got["cpu_per_compare_s"] > 0
    share = {(r["file"], r["function"]): r["share"] for r in got["functions"]}
    # a sample or two of ~50 may land between the rounds (the bench's own loop) on a loaded machine: 0.938 in a
    # suite run beside a drift check at load ~8, >= 0.95 alone
    assert share[("api.py", "compare")] >= 0.9
    assert 0.1 < share[("loaders/ascend_text.py", "load")] < share[("api.py", "compare")]
    assert 0 < share[("compare/overall.py", "build")] < share[("api.py", "compare")]
    assert all(share[(r["file"], r["function"])] >= r["share"] for r in got["lines"])
    assert abs(sum(r["share"] for r in got["lines"]) - share[("api.py", "compare")]) < 0.05  # one line a sample
    assert all(not r["file"].startswith(("/", "pandas", "numpy")) and r["file"].endswith(".py") for r in got["lines"])
    assert mod._where(f"{os.sep}x{os.sep}msprof_compare{os.sep}loaders{os.sep}a.py") == "loaders/a.py"
    assert mod._where(f"{os.sep}x{os.sep}pandas{os.sep}core{os.sep}frame.py") is None

    out = tmp_path / "where.json"
    assert mod.main([str(npu), str(npu), "--rounds", "2", "--top", "3", "--json", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["rounds"] == 2 and written["functions"][0]["file"] == "api.py"
