"""The operators net of collective communication between two NPU text exports of one job: the msinsight level-1
exports of rank 1 (base) and rank 0 (comparison), AlexNet step 50. AccumulateGrad, whose DDP hook launches the
all-reduce, is the one top contributor (+5.613 ms, 92%), nearly all of it HCCL ops; net of them the operator
that changed most is aten::to, whose host-to-device copy took 0.432 ms less. The note named it as "the operators
whose device time changed most are aten::to -0.432 ms", a list of one in the plural.

Figures are the raw trace_view.json files' (test_gpu_alexnet's own reading of the flows), never read back from
this package."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

from test_gpu_alexnet import _device_ns_by_top_op, net_cut

from msprof_compare.api import compare

#: the level-1 text exports, under the samples
TEXT = "msinsight/test/data/pytorch/text/level1"


def _net_device_ns(export: Path) -> Counter:
    """ns of device time per top-layer torch op of a text export, net of the HCCL ops inside it: the Ascend
    Hardware tasks the async_npu flows link to it (the HCCL lane's ops, which the flows link too, left out)."""
    events = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}

    def ns(v) -> int:
        return int((Decimal(str(v)) * 1000).to_integral_value())

    hardware = {(e["pid"], e["tid"], ns(e["ts"])): ns(e["dur"]) for e in events
                if e.get("ph") == "X" and procs.get(e["pid"]) == "Ascend Hardware"}
    return _device_ns_by_top_op(events, ("cpu_op",), "async_npu", hardware)


def _ranking(base_dir: Path, comparison_dir: Path) -> list[tuple[str, int]]:
    """The operators by their net change (ns), largest first, those explaining 80% of its summed size, at most 5
    (summary.net_changes' cut, by hand)."""
    base, comp = _net_device_ns(base_dir), _net_device_ns(comparison_dir)
    net = sorted(((n, comp[n] - base[n]) for n in set(base) | set(comp) if comp[n] != base[n]),
                 key=lambda r: -abs(r[1]))
    return net_cut(net, sum(abs(d) for _, d in net))


def test_one_operator_net_of_communication_is_named_in_the_singular(samples: Path, tmp_path: Path) -> None:
    base_dir, comparison_dir = samples / TEXT / "rank1_ascend_pt", samples / TEXT / "rank0_ascend_pt"
    want = _ranking(base_dir, comparison_dir)
    assert [n for n, _ in want] == ["aten::to"]  # the raw files' ranking: one operator
    res = compare(str(base_dir), str(comparison_dir))
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text(encoding="utf-8"))
    summary = doc["summary"]
    assert [(r["name"], round(r["diff_ms"] * 10**6)) for r in summary["contributors_net_of_communication"]] == want
    (name, d), = want
    shown = f"{name} {Decimal(d) / 10**6:+.3f} ms"
    assert shown == "aten::to -0.432 ms"
    assert summary["contributors_note"].endswith(
        "net of the collective communication inside them, the operator whose device time changed most is " + shown)
    assert f"Net of the collective communication inside them, the operator whose device time changed most is {shown}." \
        in summary["contributors_note_lines"]
