"""Rules of the two-side loader (``loaders.pair``), the model helpers, the sheet table and the breakdown record
that a mutation audit found unchecked: the bounds of the parallel-load choice, the CPU and memory readings it
rests on, the size estimate, what a loader child's error keeps, and the figures these modules derive."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from dbutil import sql

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import pair
from msprof_compare.model import SCHEMAS, Profile, empty, frame, step_marks, threads_in_order, us_text, us_text_of

DATA = Path(__file__).resolve().parent / "data"
KINETO = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"
ALEXNET_GZ = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
GPT = DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
NPU_TRACE = DATA / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
L1_DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
HTA_MULTI_STREAM = "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz"


# --------------------------------------------------------------------------- the parallel-load choice


def test_parallel_load_starts_at_the_size_threshold_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PARALLEL_MIN_BYTES`` is the combined size *from which* the sides load in parallel: an input pair of
    exactly that size forks, one byte less does not; a size the caller passes (the API's own ``input_bytes``
    sum) is the one judged."""
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "1")
    size = 2 * KINETO.stat().st_size  # a plain JSON trace counts at its file size, given twice
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", size)
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    assert pair.parallel_wanted(str(KINETO), str(KINETO), size=size)
    assert not pair.parallel_wanted(str(KINETO), str(KINETO), size=size - 1)
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", size + 1)
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))


def test_auto_mode_bounds_and_the_off_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """"auto" forks with two idle CPUs (not only with more) and with exactly the memory both loaded sides need
    (6 bytes per input byte); "0" never forks, even on an idle machine with unknown memory."""
    monkeypatch.delenv("MSPROF_COMPARE_PARALLEL", raising=False)
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    size = 2 * KINETO.stat().st_size
    monkeypatch.setattr(pair, "idle_cpus", lambda: 2.0)
    monkeypatch.setattr(pair, "available_memory", lambda: 6 * size)
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    monkeypatch.setattr(pair, "idle_cpus", lambda: 1.99)
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))
    monkeypatch.setattr(pair, "idle_cpus", lambda: 8.0)
    monkeypatch.setattr(pair, "available_memory", lambda: None)
    assert pair.parallel_wanted(str(KINETO), str(KINETO))
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "0")
    assert not pair.parallel_wanted(str(KINETO), str(KINETO))


def test_idle_cpus_takes_the_one_minute_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Usable CPUs minus the 1-minute load average (not the 5- or 15-minute one); without a load average one
    CPU is taken as busy; without an affinity mask the CPU count is the usable number."""
    monkeypatch.setattr(pair.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(pair.os, "getloadavg", lambda: (1.25, 3.0, 3.5))
    assert pair.idle_cpus() == 4 - 1.25

    def no_load() -> tuple:
        raise OSError("no load average")

    monkeypatch.setattr(pair.os, "getloadavg", no_load)
    assert pair.idle_cpus() == 4 - 1
    monkeypatch.delattr(pair.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(pair.os, "cpu_count", lambda: 6)
    assert pair.idle_cpus() == 6 - 1


# --------------------------------------------------------------------------- available memory


def _fake_meminfo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    """``pair``'s ``open`` reads ``text`` for /proc/meminfo, every other file as usual."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(text)
    real_open = open

    def fake_open(file, *args, **kwargs):
        return real_open(meminfo if file == "/proc/meminfo" else file, *args, **kwargs)

    monkeypatch.setattr(pair, "open", fake_open, raising=False)


def test_available_memory_reads_meminfo_in_kib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/meminfo gives kB meaning KiB (proc(5)): MemAvailable, not MemFree, times 1024."""
    _fake_meminfo(monkeypatch, tmp_path, "MemTotal:       16318480 kB\nMemFree:          734512 kB\n"
                                         "MemAvailable:    8123456 kB\nBuffers:          102400 kB\n")
    monkeypatch.setattr(pair, "_cgroup_left", lambda: None)
    assert pair.available_memory() == 8123456 * 1024


def _cgroup(d: Path, limit: str, usage: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "memory.max").write_text(limit + "\n")
    (d / "memory.current").write_text(f"{usage}\n")


def test_cgroup_limit_at_the_root_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A container that mounts its own cgroup as the root (/proc/self/cgroup says "0::/") has its limit in the
    root's memory.max: 2 GiB limit - 0.5 GiB used leaves 1.5 GiB."""
    _cgroup(tmp_path, "2147483648", 536870912)
    monkeypatch.setattr(pair, "_CGROUP_ROOT", str(tmp_path))
    monkeypatch.setattr(pair, "_cgroup_paths", lambda: {"": "/"})
    assert pair._cgroup_left() == 2147483648 - 536870912


def test_cgroup_left_is_the_tightest_and_never_negative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Limits on the way up from the own cgroup: the least left wins (own: 2 GiB - 1 GiB = 1 GiB; parent:
    4 GiB - 3.5 GiB = 0.5 GiB); usage above a lowered limit leaves 0, not a negative size."""
    monkeypatch.setattr(pair, "_CGROUP_ROOT", str(tmp_path))
    monkeypatch.setattr(pair, "_cgroup_paths", lambda: {"": "/job/step"})
    _cgroup(tmp_path / "job", "4294967296", 3758096384)
    _cgroup(tmp_path / "job" / "step", "2147483648", 1073741824)
    assert pair._cgroup_left() == 4294967296 - 3758096384
    _cgroup(tmp_path / "job", "1073741824", 1073741824 + 4096)  # the parent's limit lowered under its usage
    assert pair._cgroup_left() == 0
    _fake_meminfo(monkeypatch, tmp_path, "MemAvailable:    8123456 kB\n")
    assert pair.available_memory() == 0


# --------------------------------------------------------------------------- the size estimate


def test_a_gzip_head_shorter_than_a_gzip_counts_at_its_size(tmp_path: Path) -> None:
    """A gzip member is at least 18 bytes (10 header + 8 trailer, RFC 1952): the first 17 bytes of a real
    .json.gz trace have no trailer to read an ISIZE from, so they count as 17 bytes."""
    head = tmp_path / "cut.pt.trace.json.gz"
    head.write_bytes(ALEXNET_GZ.read_bytes()[:17])
    assert pair.input_bytes(str(head)) == 17


def test_input_bytes_counts_only_what_loading_reads(tmp_path: Path) -> None:
    """A folder counts the files its detected layout leads to: a raw ``*_ascend_pt`` also holds CANN's own
    timeline and summaries (``PROF_*/mindstudio_profiler_output``, often as large again as trace_view.json)
    and CSVs no comparison reads, which inflated the "Loading N MB" notice and the parallel-load memory
    check. Input: the torch_npu excerpt, with such files added (synthetic); expected: trace_view.json plus
    the three side files the excerpt has, summed with os.path.getsize."""
    npu = tmp_path / "rank0_ascend_pt"
    shutil.copytree(DATA / "npu" / "rank0_ascend_pt", npu)
    out = npu / "ASCEND_PROFILER_OUTPUT"
    read = ("trace_view.json", "kernel_details.csv", "memory_record.csv", "communication.json")
    expected = sum(os.path.getsize(out / n) for n in read)
    assert pair.input_bytes(str(npu)) == pair.input_bytes(str(out)) == expected
    (out / "operator_details.csv").write_text("Name,Input Shapes\n" + "aten::mm,\"1,2\"\n" * 1000)
    raw = npu / "PROF_000001_20250109153446538_LJOGPMAKHOLQAOEB" / "mindstudio_profiler_output"
    raw.mkdir(parents=True)
    shutil.copyfile(out / "trace_view.json", raw / "msprof_20250109153446.json")
    assert pair.input_bytes(str(npu)) == expected
    db = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
    assert pair.input_bytes(str(db.parent)) == os.path.getsize(db)
    # a folder detection refuses (a MindSpore legacy PROF folder: no trace_view.json) is "unknown"
    assert pair.input_bytes(str(tmp_path / "rank0_ascend_pt" / "PROF_000001_20250109153446538_LJOGPMAKHOLQAOEB")) == 0


L1_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
#: What each run reads beside trace_view.json, from the loader's rules (ascend_text._side_files), written out here
RUN_READS = {
    "profiling": ("kernel_details.csv", "memory_record.csv", "communication.json"),
    "memory": ("kernel_details.csv", "memory_record.csv", "operator_memory.csv"),
    "kernel_type": ("kernel_details.csv", "op_statistic.csv"),
    "all": ("kernel_details.csv", "memory_record.csv", "operator_memory.csv", "communication.json"),
}
RUN_FLAGS = {"profiling": {"enable_profiling_compare": True}, "memory": {"enable_memory_compare": True},
             "kernel_type": {"enable_kernel_compare": True, "use_kernel_type": True}, "all": {}}


def _l1_copy(samples: Path, dest: Path) -> Path:
    """NPU pair 1's level1 text export (all five side files), copied writable."""
    shutil.copytree(samples / L1_TEXT, dest)
    for root, dirs, files in os.walk(dest):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return dest


def test_input_bytes_counts_the_side_files_the_run_reads(samples: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """With the run's options, an Ascend text export counts trace_view.json and the side files those
    comparisons read: operator_memory.csv (30.6 kB here) only with the memory comparison, communication.json
    only with OverallMetrics, op_statistic.csv only with --use_kernel_type (before, all five, whatever the run).
    The files the loader records as read are the same ones (the two lists must not drift apart); the API passes
    its options. Sizes by os.path.getsize."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ascend_text import SIDE_FILES
    from msprof_compare.options import build_options

    npu = _l1_copy(samples, tmp_path / "rank0_ascend_pt")
    out = npu / "ASCEND_PROFILER_OUTPUT"
    trace = os.path.getsize(out / "trace_view.json")
    assert pair.input_bytes(str(npu)) == trace + sum(os.path.getsize(out / n) for n in SIDE_FILES)  # no options
    for run, names in RUN_READS.items():
        opts = build_options(**RUN_FLAGS[run])[0]
        want = trace + sum(os.path.getsize(out / n) for n in names)
        assert pair.input_bytes(str(npu), opts=opts) == want, run
        assert {n for n in load_profile(str(npu), opts).files if n in SIDE_FILES} == set(names), run
    sizes: list[int | None] = []
    real = pair.load_pair

    def load_pair(*args, **kwargs):
        sizes.append(args[6] if len(args) > 6 else kwargs.get("size"))
        return real(*args, **kwargs)

    monkeypatch.setattr(pair, "load_pair", load_pair)
    compare(str(npu), str(npu), enable_profiling_compare=True)
    assert sizes == [2 * (trace + sum(os.path.getsize(out / n) for n in RUN_READS["profiling"]))]


def test_side_files_a_run_does_not_read_are_not_looked_at(samples: Path, tmp_path: Path) -> None:
    """A side file the run does not read changes nothing, whatever it is: a broken link named operator_memory.csv
    made a profiling-only run's size "unknown" (0: the parallel-load choice and the loading notice went by it),
    as one the run reads still does. A FIFO is never opened (an open waits for a writer): a profiling-only
    compare with FIFOs named operator_memory.csv and op_statistic.csv, and a memory-only one with a FIFO named
    communication.json, finish (under a timeout, in a child process) with the reports of the regular files."""
    import subprocess
    import sys

    from msprof_compare.options import build_options

    npu = _l1_copy(samples, tmp_path / "rank0_ascend_pt")
    out = npu / "ASCEND_PROFILER_OUTPUT"
    profiling = build_options(enable_profiling_compare=True)[0]
    want = sum(os.path.getsize(out / n) for n in ("trace_view.json", *RUN_READS["profiling"]))
    saved = {n: (out / n).read_bytes() for n in ("operator_memory.csv", "op_statistic.csv", "communication.json")}
    (out / "operator_memory.csv").unlink()
    (out / "operator_memory.csv").symlink_to(tmp_path / "gone.csv")
    assert pair.input_bytes(str(npu), opts=profiling) == want
    assert pair.input_bytes(str(npu), opts=build_options(enable_memory_compare=True)[0]) == 0  # read: unknown
    (out / "operator_memory.csv").unlink()

    def report(flag: str, name: str) -> dict:
        target = tmp_path / f"{name}.json"
        run = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-d", str(npu), "-bp", str(npu),
                              flag, "--output_format", "json", "-o", str(target)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        doc = json.loads(target.read_text())
        doc.pop("generated_at")
        return doc

    for flag, fifos in (("--enable_profiling_compare", ("operator_memory.csv", "op_statistic.csv")),
                        ("--enable_memory_compare", ("communication.json",))):
        for n in fifos:
            (out / n).unlink(missing_ok=True)
            (out / n).write_bytes(saved[n])
        regular = report(flag, "regular")
        for n in fifos:
            (out / n).unlink()
            os.mkfifo(out / n)
        assert report(flag, "fifo") == regular, flag
        for n in fifos:
            (out / n).unlink()
            (out / n).write_bytes(saved[n])


# --------------------------------------------------------------------------- errors of the loader child


def test_loader_child_error_keeps_its_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A base side refused in the forked loader (a symbolic link without --force) reads as in a sequential
    run: the path, the message and the hint that says what to do."""
    link = tmp_path / "link.pt.trace.json"
    link.symlink_to(KINETO)
    other = tmp_path / "other.pt.trace.json"
    shutil.copyfile(KINETO, other)
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    texts = []
    for mode in ("1", "0"):
        monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", mode)
        assert pair.parallel_wanted(str(link), str(other)) == (mode == "1")
        with pytest.raises(ProfileError) as err:
            compare(str(link), str(other), enable_profiling_compare=True)
        assert (err.value.path, err.value.hint) == (str(link), "add force=True to accept it")
        texts.append(str(err.value))
    assert texts[0] == texts[1] == (f"{link}: is a symbolic link; refusing to follow it (base side: add force=True "
                                    "to accept it)")



def test_a_cpu_only_base_is_refused_after_a_parallel_load_too(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base side loaded in the forked child is checked like a sequentially loaded one: hta's CPU-only capture
    (no kernel, memcpy or memset event) is refused with the advice to record CUDA activity, whichever way the
    sides loaded, before the comparison side (an H100 excerpt, which passes) is looked at."""
    cpu_only = samples / "hta" / "tests" / "data" / "cpu_only" / "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
    if not cpu_only.is_file():
        pytest.skip("hta cpu_only sample absent")
    monkeypatch.setattr(pair, "PARALLEL_MIN_BYTES", 0)
    for mode in ("1", "0"):
        monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", mode)
        assert pair.parallel_wanted(str(cpu_only), str(KINETO)) == (mode == "1")
        with pytest.raises(ProfileError) as err:
            compare(str(cpu_only), str(KINETO), enable_profiling_compare=True)
        assert (err.value.path, err.value.message, err.value.hint) == (
            str(cpu_only), "no GPU kernel, memcpy or memset events in the trace",
            "record it with torch.profiler.ProfilerActivity.CUDA")


def test_a_path_with_a_nul_is_refused_by_the_loader_not_the_size_probe(tmp_path: Path) -> None:
    """An API caller's path with a NUL in it: the size probe (run before loading, for the loading notice and the
    parallel choice) reads it as unknown (0), so the error the caller gets is the loader's, naming the path."""
    bad = str(tmp_path / "prof\x00.json")
    assert pair.input_bytes(bad) == 0
    with pytest.raises(ProfileError) as err:
        compare(bad, str(KINETO), enable_profiling_compare=True)
    # the NUL shown escaped
    assert str(err.value) == f"{tmp_path}/prof\\x00.json: the path contains control characters (base side)"


# --------------------------------------------------------------------------- model helpers


def test_empty_tables_are_fresh_copies() -> None:
    """Every ``Profile`` starts with empty tables copied from one cached prototype per table: a column a caller
    adds to one profile's empty table (here ``ops``) is not in the next profile's."""
    first = Profile(path="a", kind="NPU", source="ascend_text")
    first.ops["extra"] = np.zeros(0, np.int64)
    assert list(Profile(path="b", kind="NPU", source="ascend_text").ops.columns) == list(SCHEMAS["ops"])
    assert list(empty("ops").columns) == list(SCHEMAS["ops"])


def test_us_text_of_real_release_times_a_zero_and_a_negative() -> None:
    """``us_text`` writes epoch ns as the text export's microseconds, three decimals always; ``unset`` stands for 0
    only (a block never released), not for a negative time. The level-1 DB excerpt's OP_MEMORY release times
    (NULL read as 0) and one negative time added (synthetic: no export has one), expected with plain divmod."""
    ns = [v for (v,) in sql(L1_DB, "SELECT COALESCE(releaseTime, 0) FROM OP_MEMORY ORDER BY rowid")] + [-5]
    assert ns.count(0) == 24 and any(0 < v % 1000 < 100 for v in ns)  # never released; a value needing zeros

    def text(v: int) -> str:
        return "" if v == 0 else ("-" if v < 0 else "") + f"{abs(v) // 1000}.{abs(v) % 1000:03d}"

    assert us_text(np.array(ns, dtype=np.int64), "").tolist() == [text(v) for v in ns]
    assert us_text(np.array([0, -5, -1500, 1736410576435752060], dtype=np.int64)).tolist() == [
        "0.000", "-0.005", "-1.500", "1736410576435752.060"]


def test_us_text_of_one_time_is_us_text() -> None:
    """``us_text_of`` (one time: the idle-stretch check's start, a late release's times) writes what ``us_text``
    writes for it: the same releases, the negative times and the int64 ends, expected with plain divmod above."""
    ns = [v for (v,) in sql(L1_DB, "SELECT COALESCE(releaseTime, 0) FROM OP_MEMORY ORDER BY rowid")]
    ns += [-5, -1500, -(2**63) + 1, 2**63 - 1, 999, 1000]
    assert [us_text_of(v) for v in ns] == us_text(np.array(ns, dtype=np.int64)).tolist()
    assert [us_text_of(v) for v in (0, -5, 1736410576435752060)] == ["0.000", "-0.005", "1736410576435752.060"]


def test_step_marks_are_text_holding_the_marker() -> None:
    """A value that is no text (an event without a name, a number: synthetic additions to the H200 GPT excerpt's
    event names) is no step marker; text holding "ProfilerStep#" anywhere is one."""
    events = json.loads(GPT.read_text())["traceEvents"]
    names = [e.get("name") for e in events] + [None, 50, float("nan")]
    want = [isinstance(n, str) and "ProfilerStep#" in n for n in names]
    assert sum(want) == 1 and None in names
    assert step_marks(names).tolist() == want


def test_threads_in_order_keeps_the_file_order_on_ties() -> None:
    """Lanes with equal sort indices keep the order the trace lists them in (a trace viewer's order). The NPU
    excerpt's nine HCCL lanes, their sort indices edited (synthetic: exports number them apart) to put the group
    lane after its planes and every plane on index 0; expected with Python's stable ``sorted``."""
    events = json.loads(NPU_TRACE.read_text())
    hccl = next(e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
                and e["args"]["name"] == "HCCL")
    lanes = [(e["tid"], e["args"]["name"]) for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == hccl]
    assert len(lanes) == 9 and lanes[0][1] == "Group 0 Communication"
    sort_index = [1 if "Communication" in name else 0 for _, name in lanes]
    threads = frame("threads", {"pid": [hccl] * 9, "tid": [t for t, _ in lanes], "name": [n for _, n in lanes],
                                "sort_index": sort_index})
    order = sorted(range(9), key=lambda i: sort_index[i])
    assert threads_in_order(threads, hccl) == ([lanes[i][0] for i in order], [lanes[i][1] for i in order])
    assert threads_in_order(threads, hccl)[1] == [f"Plane {i}" for i in range(8)] + ["Group 0 Communication"]


# --------------------------------------------------------------------------- the breakdown's kernel keys


def _hta_multi_stream(samples: Path) -> dict:
    path = samples / HTA_MULTI_STREAM
    if not path.is_file():
        pytest.skip(f"{HTA_MULTI_STREAM} absent")
    return json.loads(gzip.decompress(path.read_bytes()))


def _device_events(doc: dict, cat: str) -> dict[int, dict]:
    return {e["args"]["stream"]: e for e in doc["traceEvents"] if e.get("cat") == cat}


def _overall_of(tmp_path: Path, doc: dict):
    p = tmp_path / "t.pt.trace.json"
    p.write_text(json.dumps(doc))
    return compare(str(p), str(p), enable_profiling_compare=True).sheet("OverallMetrics").set_index("Index")


def test_kernels_starting_together_on_two_streams_both_count(samples: Path, tmp_path: Path) -> None:
    """Kernels are keyed by (pid, tid, ts): two streams starting a kernel in the same microsecond are two kernels.
    hta's multi-stream trace (one 123-us sgemm on each of streams 20, 28 and 24), the stream-24 sgemm moved to
    the stream-20 one's start (synthetic: the sample's streams start apart). By hand: 3 kernels, Matmul 3 x
    0.123 ms, Computing Time the union 0.123 (20 and 24 together) + 0.123 (28) = 0.246 ms."""
    doc = _hta_multi_stream(samples)
    sgemm = _device_events(doc, "kernel")
    assert sorted(sgemm) == [20, 24, 28] and {e["dur"] for e in sgemm.values()} == {123}
    sgemm[24]["ts"] = sgemm[20]["ts"]
    om = _overall_of(tmp_path, doc)
    assert om.loc["Computing Time", ["Duration(ms)", "Number"]].tolist() == [0.246, 3]
    assert om.loc["\tMatmul", ["Duration(ms)", "Number"]].tolist() == [0.369, 3]


def test_compute_stream_tie_goes_to_the_first_stream_in_the_file(samples: Path, tmp_path: Path) -> None:
    """The compute stream is the most common stream of the computing kernels, the first in file order on a tie
    (reference-1 §4.2), not the lowest stream number. hta's multi-stream trace (one sgemm each on streams 20,
    28 and 24, in that file order) with stream 20 renumbered 30 (synthetic, so that file order and number order
    differ) and its 1-us memset made a memcpy: stream 30 leads the tie, so its copy is SDMA (0.001 ms)."""
    doc = _hta_multi_stream(samples)
    for cat in ("kernel", "gpu_memset"):
        e = _device_events(doc, cat)[20]
        e["tid"] = e["args"]["stream"] = 30
    memset = _device_events(doc, "gpu_memset")[30]
    assert memset["dur"] == 1
    memset.update(cat="gpu_memcpy", name="Memcpy HtoD (Pinned -> Device)")
    assert [e["args"]["stream"] for e in doc["traceEvents"] if e.get("cat") == "kernel"] == [30, 28, 24]
    om = _overall_of(tmp_path, doc)
    assert om.loc["\tSDMA", "Duration(ms)"] == 0.001


def test_side_files_counted_are_the_files_the_text_loader_reads(samples) -> None:
    """The input size counts ``ascend_text.SIDE_FILES``: with every comparison on (and --use_kernel_type, the only
    reader of op_statistic.csv) the level1 text sample's loader reads exactly those data files beside
    trace_view.json (profile.files, minus trace_view.json and the small metadata / info files), no other."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ascend_text import SIDE_FILES
    from msprof_compare.options import build_options

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    if not src.is_dir():
        pytest.skip(f"{src} not in samples")
    p = load_profile(str(src), build_options(use_kernel_type=True)[0])
    read = {k for k in p.files if k not in ("trace_view.json", "profiler_metadata.json", "profiler_info")}
    assert read == set(SIDE_FILES)
