"""What the NPU text loader no longer holds while a 1 GB trace_view.json is loaded (docs/performance.md, session 65),
with the same figures: the HCCL tasks' rank texts are copied out of their args batch (a ``msgspec.Raw`` kept the
whole batch), the kept events' durations are split by the mask's bytes, and the times' chunks are parsed into
one column.

Inputs: the real NPU text excerpt of tests/data/npu/rank0_ascend_pt (README there: a 3 ms window of msinsight's
level-1 trace, 16 HCCL tasks with src / dst ranks), its figures read from the JSON with the json module; made-up
columns of times for the chunk and mask edges, checked against the per-value exact parser."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np
import pytest

from msprof_compare.loaders import ascend_text, load_profile, numparse, traceio
from msprof_compare.model import NO_RANK
from msprof_compare.options import build_options
from msprof_compare.units import MAX_RANK

NPU = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"


def test_hccl_rank_texts_are_copied_out_of_every_args_batch(monkeypatch):
    monkeypatch.setattr(traceio, "ARGS_BATCH_BYTES", 512)  # a few HCCL tasks' args a batch: several batches
    comm_args: list = []
    real = ascend_text._decoded_args

    def probe(path, raws, struct):
        got = real(path, raws, struct)
        if struct is ascend_text._CommArgs:
            comm_args.append(got)
        return got

    monkeypatch.setattr(ascend_text, "_decoded_args", probe)
    prof = load_profile(str(NPU), build_options()[0])
    events = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    (pid,) = [e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"
              and e["args"]["name"] == "HCCL"]
    hccl = [e for e in events if e.get("ph") == "X" and e["pid"] == pid]  # 16 tasks on planes, 1 op on its group lane
    ((types, batches),) = comm_args
    assert len(types) == len(hccl) == len(prof.comm) == 17
    assert len(batches) > 1
    # no struct is kept and every rank text is a bytes copy (no Raw view keeps a batch): the plain ones of a batch
    # joined by commas, as written in the JSON, src then dst of each task
    assert all(type(b) is bytes for b in batches)
    assert b",".join(batches).split(b",") == \
        [json.dumps(e["args"].get(k)).encode() for e in hccl for k in ("src rank", "dst rank")]
    assert prof.comm["task_type"].tolist() == [e["args"].get("task type", "") for e in hccl]
    ranks = [r for e in hccl for r in (e["args"].get("src rank"), e["args"].get("dst rank"))
             if r is not None and r != NO_RANK and r <= MAX_RANK]
    assert prof.rank_span == max(ranks) + 1


def test_hccl_rank_texts_of_another_form_are_each_copied(monkeypatch):
    """A batch holding a rank text that is no plain integer or null keeps each of its texts, copied out of the
    batch, for ``_rank_span``'s value-by-value reading; the plain batches beside it stay joined. Made-up args."""
    monkeypatch.setattr(traceio, "ARGS_BATCH_BYTES", 64)  # one task's args a batch
    args = [b'{"task type": "Memcpy", "src rank": 3, "dst rank": null}', b'{"task type": "Notify_Wait", '
            b'"src rank": "7", "dst rank": 1e400}', b'{"task type": "Reduce_Inline"}']
    raws = np.fromiter(map(msgspec.Raw, args), dtype=object, count=len(args))
    types, batches = ascend_text._comm_args("t.json", raws)
    assert types == ["Memcpy", "Notify_Wait", "Reduce_Inline"]
    assert batches == [b"3,null", [b'"7"', b"1e400"], b"null,null"]
    warnings: list[str] = []
    assert ascend_text._rank_span(batches, "t.json", warnings) == 8  # "7" counts; 1e400 is no rank id
    assert len(warnings) == 1 and "1e400" in warnings[0]


def test_other_args_are_decoded_as_they_were():
    raws = np.fromiter([msgspec.Raw(b'{"Task Type": "AI_CORE", "Stream Id": 7, "Task Id": 12}')], dtype=object, count=1)
    (a,) = ascend_text._decoded_args("t.json", raws, ascend_text._TaskArgs)
    assert (a.task_type, a.stream, a.task_id) == ("AI_CORE", 7, 12)


def test_durations_of_the_timed_events_split_by_the_masks_bytes():
    absent = msgspec.UNSET
    values = [1.5, absent, 2.0, absent, 0.0005, 7]  # complete events at 0, 2, 4, 5; flows (no dur) at 1, 3
    timed = np.array([True, False, True, False, True, True])
    ns, inexact, missing = traceio.durs_to_ns(values, lambda v: traceio.times_to_ns(v, "t.json", "dur"), timed)
    assert ns.tolist() == [1500, 0, 2000, 0, 0, 7000] and not inexact and missing is None
    values[2] = absent  # a complete event without its dur: read as 0, and marked
    ns, _, missing = traceio.durs_to_ns(values, lambda v: traceio.times_to_ns(v, "t.json", "dur"), timed)
    assert ns.tolist() == [1500, 0, 0, 0, 0, 7000] and missing.tolist() == [False, False, True, False, False, False]
    values[1] = 3.0  # an untimed event with a dur: read as written
    ns, _, _ = traceio.durs_to_ns(values, lambda v: traceio.times_to_ns(v, "t.json", "dur"), timed)
    assert ns.tolist() == [1500, 3000, 0, 0, 0, 7000]


@pytest.mark.parametrize("chunk", [1, 3, 4, 100])
def test_time_chunks_are_parsed_into_one_column(monkeypatch, chunk):
    texts = ["1736408883732241.564", "1736408883732241.5645", "  12.5 ", "x", "", "-0.001", "7", "1.0005", "99.9995"]
    monkeypatch.setattr(numparse, "_CHUNK", chunk)
    ns, ok = numparse.lenient_us_to_ns(texts)
    assert ok.tolist() == [True, True, True, False, False, True, True, True, True]
    want = [numparse.text_us_to_ns(t.strip()) if k else 0 for t, k in zip(texts, ok.tolist(), strict=True)]
    assert ns.tolist() == want
    assert want[:3] == [1736408883732241564, 1736408883732241564, 12500] and want[5:] == [-1, 7000, 1000, 100000]
