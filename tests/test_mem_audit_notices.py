"""Memory comparison notices a first-time user depends on (session 36 memory audit).

Inputs: the GPU excerpts of tests/data/kineto (provenance in its README).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.compare import memory
from msprof_compare.model import Profile, frame

DATA = Path(__file__).resolve().parent / "data" / "kineto"
NO_MEMORY = (DATA / "b200_vllm_moe_excerpt.pt.trace.json", DATA / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json")


def _memory_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if "memory" in r.getMessage()]


def test_asked_memory_comparison_of_two_traces_without_memory_says_how_to_record_it(caplog):
    """`--enable_memory_compare` on two GPU traces recorded without profile_memory writes no workbook: the
    per-side line was the original's bare "Can't find any memory event", so the user learnt neither why nor
    what to do. Asked for, each side's line now carries the profile_memory advice (a default run does not)."""
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(*(str(p) for p in NO_MEMORY), enable_memory_compare=True)
    assert not [n for n in res.sheet_names if n.startswith("Memory")]
    said = [m for lv, m in _memory_lines(caplog) if lv == "WARNING" and m.startswith("Can't find any memory event")]
    sides = ("base side", "comparison side")
    assert said == [f"Can't find any memory event in the file: {p} ({side}: no memory was recorded: "
                    "profile_memory=True records it)" for p, side in zip(NO_MEMORY, sides, strict=True)]


LEGACY = DATA / "legacy_resnet50_excerpt.pt.trace.json"


def _addr_less_counts(path: Path) -> tuple[int, int, int, int, float]:
    """The original's pairing redone in plain Python over the trace (reference-2 §5.1): every device event
    under the one absent Addr. Returns allocations, released, without release, dropped, dropped MB."""
    events = json.loads(path.read_text())["traceEvents"]
    mem = sorted((e for e in events if str(e.get("name", "")).lower() == "[memory]"
                  and int(e["args"].get("Device Id", -1)) >= 0), key=lambda e: e["ts"])
    assert mem and not any("Addr" in e["args"] for e in mem)
    allocs = released = unreleased = dropped = 0
    dropped_bytes = 0
    open_size = None
    for e in mem:
        b = int(e["args"]["Bytes"])
        if b > 0:
            allocs += 1
            unreleased += open_size is not None
            open_size = b
        elif b < 0 and open_size is not None:
            if -b == open_size:
                released += 1
            else:
                dropped += 1
                dropped_bytes += open_size
            open_size = None
    unreleased += open_size is not None
    return allocs, released, unreleased, dropped, dropped_bytes / 1024 / 1024


def test_trace_without_addr_says_how_its_allocations_paired(caplog):
    """PyTorch 1.8's [memory] events carry no Addr: every free then pairs with the allocation just before it
    (the original's rule, kept), which leaves most allocations without a release (Allocated Duration 0) and
    drops those followed by a free of another size (not in Allocated Memory). The sheets showed such a side's
    figures without a word (resnet50: 1,158 of 4,110 allocations released, 558 = 789.28 MB dropped). One
    warning per such side now gives the counts; the timesformer excerpt, whose events carry Addr, gets none."""
    allocs, released, unreleased, dropped, dropped_mb = _addr_less_counts(LEGACY)
    assert (allocs, released, unreleased, dropped) == (23, 7, 16, 0)  # the excerpt's own figures
    timesformer = DATA / "h100_timesformer_excerpt.pt.trace.json"
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(LEGACY), str(timesformer), enable_memory_compare=True)
    assert "MemoryCompareStatistic" in res.sheet_names
    said = [m for _, m in _memory_lines(caplog) if "carry no Addr" in m]
    assert said == [f"{LEGACY}: its [memory] events carry no Addr, so each free pairs only with the allocation "
                    f"just before it: of {allocs} device allocations {released} are released, {unreleased} have no "
                    f"release (Allocated Duration counts them as 0) and {dropped} ({dropped_mb:.2f} MB) are left "
                    "out of Allocated Memory (base side: a free of another size came next)"]
    stat = res.sheet("MemoryCompareStatistic")
    assert int(stat["Base Operator Number"].sum()) > 0


def test_addr_less_warning_counts_a_dropped_allocation_and_stays_quiet_with_addr(caplog):
    """The dropped branch (a free of another size after an allocation, under the one absent Addr = -1):
    2 MB then a 1 MB free drops the 2 MB; 1 MB + its free is released; the last 512 KB stays open. With real
    addresses the same events pair as they should and no warning is given."""
    def side(addr: list[int]) -> Profile:
        p = Profile(path="old.json", kind="GPU", source="kineto")
        p.memory = frame("memory", {"ts": [0, 1000, 2000, 3000, 4000], "bytes": [2 << 20, -(1 << 20), 1 << 20,
                                                                                   -(1 << 20), 512 << 10],
                                    "addr": addr, "device_id": [0] * 5})
        return p

    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        memory._addr_less_pairing(p := side([-1] * 5), memory.gpu_records(p))
    assert caplog.messages == [
        "old.json: its [memory] events carry no Addr, so each free pairs only with the allocation just before it: "
        "of 3 device allocations 1 are released, 1 have no release (Allocated Duration counts them as 0) and 1 "
        "(2.00 MB) are left out of Allocated Memory (a free of another size came next)"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        memory._addr_less_pairing(p := side([7, 8, 9, 9, 10]), memory.gpu_records(p))
    assert caplog.messages == []


def test_addr_less_counts_of_thousands_carry_separators(tmp_path, caplog):
    """kineto's tb_plugin resnet50 traces (``../shared/samples``, PROVENANCE.md; skipped without them), PyTorch
    1.8 [memory] events without Addr: thousands of allocations each, which the warning wrote as "4140" beside the
    loaders' "1,024". The counts come from the plain-Python pairing above, over the decompressed traces."""
    import gzip

    root = Path(__file__).resolve().parents[2] / "shared" / "samples" / "kineto" / "tb_plugin" / "samples"
    gz = [root / "resnet50_num_workers_4" / "worker0.1623212756351.pt.trace.json.gz",
          root / "resnet50_num_workers_0" / "worker0.1623143566756.pt.trace.json.gz"]
    if not all(p.is_file() for p in gz):
        pytest.skip("the shared samples are absent")
    expected = []
    for p, side in zip(gz, ("base side", "comparison side"), strict=True):
        plain = tmp_path / p.name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(p.read_bytes()))
        allocs, released, unreleased, dropped, dropped_mb = _addr_less_counts(plain)
        assert allocs >= 1000
        expected.append(f"{p}: its [memory] events carry no Addr, so each free pairs only with the allocation just "
                        f"before it: of {allocs:,} device allocations {released:,} are released, {unreleased:,} have "
                        f"no release (Allocated Duration counts them as 0) and {dropped:,} ({dropped_mb:.2f} MB) are "
                        f"left out of Allocated Memory ({side}: a free of another size came next)")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(gz[0]), str(gz[1]), enable_memory_compare=True)
    assert [m for _, m in _memory_lines(caplog) if "carry no Addr" in m] == expected
