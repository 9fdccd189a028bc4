"""The memory line under --max_kernel_num says what the drill-down leaves out of the memory sheets.

Data: ``tests/data/kineto/alexnet_h200_rank0.*.pt.trace.json.gz`` (the H200 AlexNet excerpt, see
tests/data/PROVENANCE) against NPU pair 1's level-1 text export (`../shared/samples`). The drill-down with a limit
of 4 opens the five ``aten::convolution_backward`` ops of the base's backward pass, whose own allocations (inside
each op, outside every op it holds) are then in no MemoryCompareStatistic row."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.report.summary_console import render_memory

DATA = Path(__file__).parent / "data"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def _gpu() -> Path:
    return next(DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz"))


def _own_allocations_mb(path: Path, name: str) -> float:
    """MB the ops called ``name`` allocate themselves: device ``[memory]`` events of positive Bytes inside an op
    and inside none of its child ops, with ops nested by their spans alone (an independent reading of the JSON)."""
    ev = json.loads(gzip.open(path).read())["traceEvents"]
    ops = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")),
                 key=lambda e: (e["ts"], -e["dur"]))
    mem = [(e["ts"], e["args"]["Bytes"]) for e in ev if e.get("name") == "[memory]"
           and e["args"].get("Bytes", 0) > 0 and e["args"].get("Device Id", -1) >= 0]
    stack: list[int] = []
    kids: dict[int, list[int]] = {}
    for i, e in enumerate(ops):
        while stack and ops[stack[-1]]["ts"] + ops[stack[-1]]["dur"] < e["ts"]:
            stack.pop()
        if stack:
            kids.setdefault(stack[-1], []).append(i)
        stack.append(i)

    def inside(e: dict) -> int:
        return sum(b for t, b in mem if e["ts"] <= t <= e["ts"] + e["dur"])

    own = sum(inside(e) - sum(inside(ops[k]) for k in kids.get(i, [])) for i, e in enumerate(ops)
              if e["name"] == name)
    return own / 2**20


@pytest.fixture(scope="module")
def runs():
    from conftest import SAMPLES

    if not (SAMPLES / NPU).is_dir():
        pytest.skip("samples not present")
    gpu, npu = str(_gpu()), str(SAMPLES / NPU)
    return compare(gpu, npu), compare(gpu, npu, max_kernel_num=4)


def test_drill_down_memory_left_out_is_the_opened_ops_own(runs):
    plain, drilled = runs
    own = _own_allocations_mb(_gpu(), "aten::convolution_backward")
    assert own == pytest.approx(243.1621, abs=1e-4)
    left = drilled.memory_totals["drill_left_out"]
    whole = plain.memory_totals
    assert left["base_mb"] == pytest.approx(own, abs=1e-6)
    assert left["comparison_mb"] == pytest.approx(0.0, abs=1e-9)
    # without the drill-down: the run without the option
    assert left["base_mb_undrilled"] == pytest.approx(whole["base_mb"], abs=1e-6)
    assert left["comparison_mb_undrilled"] == pytest.approx(whole["comparison_mb"], abs=1e-6)
    assert drilled.memory_totals["base_mb"] == pytest.approx(whole["base_mb"] - own, abs=1e-4)
    assert plain.memory_totals["drill_left_out"] is None


def test_drill_down_memory_line_says_what_it_leaves_out(runs):
    plain, drilled = runs
    line = next(x for x in render_memory(drilled.frames).splitlines() if x.startswith("Memory allocated"))
    assert line == (
        "Memory allocated inside operators (a sum of allocations, not memory held at once) 775.35 MB -> 1426.02 MB "
        "(+650.67 MB); the max_kernel_num drill-down leaves out what an op it opens allocates outside the ops inside "
        "it (base 243.16 MB, comparison 0.00 MB): 1018.51 MB -> 1426.02 MB (+407.51 MB) without the option.")
    assert "drill-down" not in render_memory(plain.frames)
