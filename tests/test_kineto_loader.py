"""Kineto loader: counts on real excerpts checked against an independent json-module reading."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import detect, kineto, load_profile
from msprof_compare.options import build_options

DATA = Path(__file__).parent / "data" / "kineto"
H100 = DATA / "h100_timesformer_excerpt.pt.trace.json"
LEGACY = DATA / "legacy_resnet50_excerpt.pt.trace.json"

KERNEL_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
OP_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "operator", "runtime"}


def _opts(**kw):
    return build_options(**kw)[0]


def _events(path):
    return json.loads(Path(path).read_text(), parse_float=Decimal)["traceEvents"]


def _cat(e):
    return str(e.get("cat", "")).lower()


@pytest.mark.parametrize("path", [H100, LEGACY])
def test_counts_match_independent_reading(path):
    ev = _events(path)
    prof = load_profile(str(path), _opts())
    kernels = [e for e in ev if e.get("ph") == "X" and _cat(e) in KERNEL_CATS]
    ops = [e for e in ev if e.get("ph") == "X" and _cat(e) in OP_CATS]
    mem = [e for e in ev if e.get("ph") == "i" and e.get("name") == "[memory]"]
    assert len(prof.kernels) == len(kernels) > 0
    assert len(prof.ops) == len(ops) > 0
    assert len(prof.memory) == len(mem)
    # flows: ids having both a start and an end within one launch cat
    fl = [e for e in ev if e.get("ph") in ("s", "f") and _cat(e) in {"ac2g", "async", "async_gpu",
                                                                     "async_cpu_to_gpu", "fwdbwd"}]
    s_ids = {(_cat(e), e["id"]) for e in fl if e["ph"] == "s"}
    f_ids = {(_cat(e), e["id"]) for e in fl if e["ph"] == "f"}
    paired = prof.flows[prof.flows["replay"] == 0]
    assert len(paired) == len(s_ids & f_ids)
    # ends without a start, at a kernel, whose id is the correlation id of one launch call: linked to that call
    calls = {}
    for e in ev:
        if e.get("ph") == "X" and _cat(e) in {"cuda_runtime", "cuda_driver", "runtime"}:
            calls.setdefault(e.get("args", {}).get("correlation"), []).append(e)
    starts = {(e["pid"], e["tid"], e["ts"]) for e in kernels}
    lone = [(calls[e["id"]][0], e) for e in fl if e["ph"] == "f" and (_cat(e), e["id"]) not in s_ids
            and (e["pid"], e["tid"], e["ts"]) in starts and len(calls.get(e["id"], ())) == 1]
    replay = prof.flows[prof.flows["replay"] >= 1]
    assert replay["s_ts"].tolist() == [int(Decimal(c["ts"]) * 1000) for c, _ in lone]
    assert replay["f_ts"].tolist() == [int(Decimal(f["ts"]) * 1000) for _, f in lone]
    assert len(replay) == {H100: 0, LEGACY: 1}[path]  # the excerpt cut one launch's flow start
    # a plain launch call (no graph launch) of one kernel: its cut start is a lost start, read as a pair is
    assert replay["replay"].tolist() == [2 if "graphlaunch" not in c["name"].lower() else 1 for c, _ in lone]
    # times: exact ns of the µs values
    assert prof.kernels["ts"].tolist() == [int(Decimal(e["ts"]) * 1000) for e in kernels]
    assert prof.kernels["dur"].tolist() == [int(Decimal(e["dur"]) * 1000) for e in kernels]
    assert prof.kernels["stream"].tolist() == [e["args"].get("stream", -1) for e in kernels]
    assert prof.kernels["device"].tolist() == [e["args"].get("device", -1) for e in kernels]
    assert prof.ops["name"].tolist() == [e["name"] for e in ops]
    # process names from the M events
    pnames = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    got = dict(zip(prof.processes["pid"].tolist(), prof.processes["name"].tolist(), strict=True))
    for pid, name in pnames.items():
        if isinstance(pid, int):
            assert got[pid] == name
    assert prof.kind == "GPU" and prof.source == "kineto" and prof.path == str(path)


def test_legacy_cats_are_normalised():
    prof = load_profile(str(LEGACY), _opts())
    assert set(prof.kernels["cat"]) <= {"kernel", "gpu_memcpy", "gpu_memset"}
    assert "Kernel" in set(prof.kernels["task_type"])
    assert set(prof.ops["cat"]) <= {"operator", "runtime"}


def test_op_args_rendered_like_the_original():
    ev = _events(H100)
    prof = load_profile(str(H100), _opts(enable_operator_compare=True))
    ops = [e for e in ev if e.get("ph") == "X" and _cat(e) in OP_CATS]
    want = [str(e["args"]["Input Dims"]) if "Input Dims" in e.get("args", {}) else "N/A" for e in ops]
    assert prof.ops["input_dims"].tolist() == want


def test_args_no_comparator_reads_are_not_decoded(tmp_path):
    """Kernel correlation / External id and op Sequence number / Fwd thread id / External id / correlation
    feed no figure, so they are not decoded (each field of an args struct costs decode time on every
    event): a value of any type there no longer stops the load (an array or object was an "invalid
    event args" error), and the tables have no columns for them."""
    odd = [1, 2]
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
           "args": {"Input Dims": [[2, 2]], "Sequence number": odd, "Fwd thread id": {"a": 1},
                    "External id": odd, "correlation": odd}},
          {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 12, "dur": 2,
           "args": {"stream": 7, "device": 0, "correlation": odd, "External id": {"a": 1}, "external id": odd}}]
    path = tmp_path / "t.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    prof = load_profile(str(path), _opts(enable_operator_compare=True))
    assert prof.ops["input_dims"].tolist() == ["[[2, 2]]"]
    assert prof.kernels[["stream", "device"]].values.tolist() == [[7, 0]]
    assert not {"seq", "fwd_tid", "ext_id", "correlation"} & (set(prof.ops.columns) | set(prof.kernels.columns))


def test_python_functions_only_for_operator_compare(samples):
    path = samples / "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    assert len(load_profile(str(path), _opts(enable_profiling_compare=True)).python_functions) == 0
    prof = load_profile(str(path), _opts(enable_operator_compare=True))
    assert len(prof.python_functions) == 42330
    assert list(prof.python_functions.columns) == ["name", "ts", "dur", "tid"]
    # threads counted in the raw trace: 42325 frames on the main thread, 5 on tqdm's monitor thread
    assert prof.python_functions["tid"].value_counts().to_dict() == {17751: 42325, 0: 5}
    assert (prof.python_functions["dur"] >= 0).all()


def test_amd_stream_zero_kept(samples):
    path = samples / "tracelens/tests/traces/mi300/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
    prof = load_profile(str(path), _opts(enable_profiling_compare=True))
    assert (prof.kernels["stream"] == 0).all() and len(prof.kernels) == 449


def _write(tmp_path, events, name="t.pt.trace.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"traceEvents": events}))
    return p


def test_backward_tid_and_memory(tmp_path):
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
        {"ph": "s", "cat": "fwdbwd", "id": 5, "pid": 1, "tid": 1, "ts": 1},
        {"ph": "f", "cat": "fwdbwd", "id": 5, "pid": 1, "tid": 9, "ts": 4, "bp": "e"},
        {"ph": "f", "cat": "fwdbwd", "id": 6, "pid": 1, "tid": 8, "ts": 5, "bp": "e"},
        {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3,
         "args": {"Total Reserved": 2048, "Total Allocated": 1024, "Bytes": 512, "Addr": 77,
                  "Device Id": 0, "Device Type": 1}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 9, "args": {"name": "backward"}},
    ]
    prof = load_profile(str(_write(tmp_path, ev)), _opts())
    assert prof.backward_tid == 9
    m = prof.memory.iloc[0]
    assert (m.ts, m.total_reserved, m.bytes, m.addr, m.device_id) == (3000, 2048, 512, 77, 0)
    assert prof.threads.iloc[0]["name"] == "backward"
    assert len(prof.flows) == 1 and prof.flows.iloc[0]["f_tid"] == 9


def test_memory_events_by_name_in_any_case_and_cat(tmp_path):
    """reference-1 §3.1: a memory event is named ``[memory]`` (any case), whatever its cat or phase."""
    args = {"Total Reserved": 4096, "Bytes": 512, "Addr": 7, "Device Id": 0}
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 9},
        {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2, "args": args},
        {"ph": "i", "name": "[Memory]", "pid": 1, "tid": 1, "ts": 3, "args": args},
        {"ph": "I", "cat": "gpu_mem", "name": "[MEMORY]", "pid": 1, "tid": 1, "ts": 4, "args": args},
        {"ph": "i", "cat": "Memory", "name": "[memory] x", "pid": 1, "tid": 1, "ts": 5, "args": args},
        {"ph": "M", "name": "[memory]", "pid": 1, "tid": 1, "args": args},
    ]
    prof = load_profile(str(_write(tmp_path, ev)), _opts())
    assert prof.memory["ts"].tolist() == [2000, 3000, 4000]


def test_flows_in_order_of_first_appearance(tmp_path):
    """Flows are kept in the order their id first appears, end or start (the original's flow dict):
    Kineto often writes a flow's end before its start. Two flows ending at one instant: the later in that
    order wins the kernel there."""
    ev = [
        {"ph": "f", "cat": "ac2g", "id": 2, "pid": 0, "tid": 7, "ts": 50, "bp": "e"},
        {"ph": "f", "cat": "ac2g", "id": 1, "pid": 1, "tid": 7, "ts": 50, "bp": "e"},
        {"ph": "s", "cat": "ac2g", "id": 1, "pid": 1, "tid": 1, "ts": 10},
        {"ph": "s", "cat": "ac2g", "id": 2, "pid": 1, "tid": 1, "ts": 20},
    ]
    prof = load_profile(str(_write(tmp_path, ev)), _opts())
    assert prof.flows["id"].tolist() == ["2", "1"]
    assert prof.flows["s_ts"].tolist() == [20_000, 10_000]


def test_bad_inputs(tmp_path):
    p = tmp_path / "x.pt.trace.json"
    p.write_text('{"traceEvents": [{"ph": "X", "ts": 1')
    with pytest.raises(ProfileError, match="truncated|malformed"):
        load_profile(str(p), _opts())
    p.write_text('{"traceEvents": 5}')
    with pytest.raises(ProfileError):
        load_profile(str(p), _opts())
    p.write_text('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "abc", "dur": 1}]}')
    with pytest.raises(ProfileError, match="ts"):
        load_profile(str(p), _opts())


def test_side_file_is_not_a_trace(tmp_path):
    """A JSON object without traceEvents (an NPU side file passed by mistake) is named as such,
    not read as an empty trace; an empty or null traceEvents stays a trace-level error."""
    side = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    with pytest.raises(ProfileError, match="not a trace: a JSON object without traceEvents") as err:
        load_profile(str(side), _opts())
    assert err.value.path == str(side)
    p = tmp_path / "x.pt.trace.json"
    p.write_text('{"traceEvents": []}')
    with pytest.raises(ProfileError, match="no GPU kernel"):
        compare(str(p), str(p))
    p.write_text('{"traceEvents": null}')
    with pytest.raises(ProfileError, match="invalid trace: traceEvents is null, where a list of events is due$"):
        load_profile(str(p), _opts())


def test_load_without_data_argument():
    prof = kineto.load(detect(str(H100)), _opts())
    assert len(prof.kernels) and np.issubdtype(prof.kernels["ts"].dtype, np.integer)


#: args.stream values and what they read as: integers within int64 (also as integral floats or text) are
#: streams; the rest are no stream (-1), counted in one warning (they used to read as -1 or be cut silently);
#: no stream arg (None) reads the device lane (tid 7) as the stream
STREAMS = [(7, 7), (0, 0), (None, 7), (7.0, 7), ("8", 8), (2**63 - 1, 2**63 - 1), (-1, -1),
           (2**64, -1), (-(2**63) - 1, -1), (7.5, -1), ("abc", -1), ("", -1), (1e300, -1)]


def test_odd_stream_ids_are_counted(tmp_path):
    ev = [{"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": 10 * i, "dur": 1,
           "args": {} if v is None else {"stream": v}} for i, (v, _) in enumerate(STREAMS)]
    path = _write(tmp_path, ev)
    prof = load_profile(str(path), _opts(enable_profiling_compare=True))
    assert prof.kernels["stream"].tolist() == [want for _, want in STREAMS]
    notes = [w for w in prof.warnings if "stream" in w]
    assert notes == [f"{path}: 6 kernel stream id(s) are not integers within int64 (the first: "
                     f"{2**64}); those kernels read as on no stream"]
    ev = [dict(e, args={"stream": 7}) for e in ev]  # all fine: no warning
    assert not load_profile(str(_write(tmp_path, ev)), _opts()).warnings


def _excerpt_memory(picks: list[int]) -> list[dict]:
    """[memory] events of the H100 excerpt, by position (11-14: two 100,864-byte blocks at two addresses,
    then both freed; 16/17 and 22/23: a 1 MiB block allocated and freed twice at one address)."""
    mem = [e for e in json.loads(H100.read_text())["traceEvents"] if e.get("name") == "[memory]"]
    return [dict(mem[i], args=dict(mem[i]["args"])) for i in picks]


def test_odd_memory_args_are_counted(tmp_path):
    """[memory] Bytes / Addr / Total Reserved / Device Id that are no integer (or, reserved totals, out of 0 - 1 PB)
    read as absent, one warning per arg and file: they used to be cut (512.5 -> 512), read as absent or as a
    negative Mem Usage without a word."""
    from msprof_compare.compare.breakdown_gpu import gpu_breakdown
    from msprof_compare.compare.memory import gpu_records

    ev = _excerpt_memory([11, 12, 13, 14, 16, 17, 22, 23])
    ev[0]["args"]["Bytes"] = "100864.5"            # no size: the block at its address is never opened ...
    ev[2]["args"]["Bytes"] = -100864.5             # ... nor closed
    ev[1]["args"]["Addr"] = ev[3]["args"]["Addr"] = "0x7cb9c1e49e00"  # a key of its own: the pair holds
    ev[2]["args"]["Total Reserved"] = 2**64
    ev[3]["args"]["Total Reserved"] = -1
    ev[5]["args"]["Total Reserved"] = 10**16
    ev[4]["args"]["Device Id"] = "cuda:0"          # host memory: no record, and its reserved total is not read
    ev[4]["args"]["Total Reserved"] = 9 * 2**30
    kernel = next(e for e in json.loads(H100.read_text())["traceEvents"] if _cat(e) == "kernel")
    path = _write(tmp_path, [kernel, *ev])  # a kernel: Mem Usage is part of the time breakdown
    prof = load_profile(str(path), _opts(enable_memory_compare=True))
    assert prof.memory["bytes"].tolist() == [0, 100864, 0, -100864, 1048576, -1048576, 1048576, -1048576]
    addr = prof.memory["addr"].tolist()
    assert addr[1] == addr[3] < -1 and addr[0] == 137137197674496
    assert prof.memory["total_reserved"].tolist() == [4588568576] * 2 + [0, 0] + [9 * 2**30, 0] + [4588568576] * 2
    assert prof.memory["device_id"].tolist() == [0, 0, 0, 0, -1, 0, 0, 0]
    assert prof.warnings == [
        f"{path}: 2 [memory] Bytes value(s) are not integers from -1 PB to 1 PB (the first: '100864.5'); those "
        "events "
        "read as size 0 (they make no memory record)",
        f"{path}: 2 [memory] Addr value(s) are not integers within int64 (the first: '0x7cb9c1e49e00'); each "
        "pairs only with the same value (read as a code below -1)",
        f"{path}: 3 [memory] Total Reserved value(s) are not integers from 0 to 1 PB (the first: {2**64}); Mem "
        "Usage leaves them out",
        f"{path}: 1 [memory] Device Id value(s) are not integers within int64 (the first: 'cuda:0'); those events "
        "read as host memory (Device Id -1)"]
    # 12/14 at the text address, 22/23; 11/13 have no size; 16 is on the host (so 17 frees nothing)
    rec = gpu_records(prof)
    assert rec[["size_kb", "release_text"]].values.tolist() == [[98.5, "1420179718162.31"],
                                                                 [1024.0, "1420179718414.674"]]
    assert gpu_breakdown(prof).memory_gb == 4588568576 / 1024**3
    # the events as recorded: no warning
    assert not load_profile(str(_write(tmp_path, _excerpt_memory(list(range(37))))), _opts()).warnings


@pytest.mark.parametrize("value", [True, [7], {"id": 7}])
def test_odd_int_args_are_counted_not_refused(tmp_path, value):
    """A boolean, an array or an object where an int arg the breakdown reads belongs (kernel ``stream`` /
    ``device``, [memory] ``Device Id`` / ``Total Reserved`` / ``Bytes`` / ``Addr``) reads as absent with one
    warning per arg, as docs/differences.md ("Input path checks, size caps and malformed data") lists them among
    the counted values and as trace_view's ``Stream Id`` does: the typed args decode refused the whole trace
    (``invalid event args: Expected `int | float | str | null`, got `bool``` / ``got `array```). Real events:
    the H100 excerpt's first two kernels and its [memory] events 11-14, edited. Expected by hand: the edited
    kernel is on no stream (-1) and no device (-1), the other keeps stream 7 / device 0; the edited [memory]
    event is host memory (-1), size 0, its own pairing key (below -1) and no reserved total (0); Mem Usage is
    then the largest total of the other device events, 4,588,568,576 B."""
    from msprof_compare.compare.breakdown_gpu import gpu_breakdown

    kernels = [e for e in json.loads(H100.read_text())["traceEvents"] if _cat(e) == "kernel"][:2]
    kernels[0]["args"]["stream"] = value
    kernels[0]["args"]["device"] = value
    mem = _excerpt_memory([11, 12, 13, 14])
    for key in ("Device Id", "Total Reserved", "Bytes", "Addr"):
        mem[0]["args"][key] = value
    path = _write(tmp_path, [*kernels, *mem])
    prof = load_profile(str(path), _opts(enable_memory_compare=True))
    assert prof.kernels["stream"].tolist() == [-1, 7] and prof.kernels["device"].tolist() == [-1, 0]
    assert prof.memory["device_id"].tolist() == [-1, 0, 0, 0]
    assert prof.memory["bytes"].tolist() == [0, 100864, -100864, -100864]
    assert prof.memory["addr"].tolist()[0] < -1
    assert prof.memory["total_reserved"].tolist()[0] == 0
    assert len(prof.warnings) == 6 and all(f"(the first: {value!r})" in w for w in prof.warnings)
    assert gpu_breakdown(prof).memory_gb == 4588568576 / 1024**3


def test_odd_kernel_device_ids_are_counted(tmp_path):
    """A kernel ``device`` that is no integer is on no device (the summary's device count), counted in one
    warning: 2.5 used to count as device 2."""
    from msprof_compare.compare.checks import _device_count

    kernels = [e for e in json.loads(H100.read_text())["traceEvents"] if _cat(e) == "kernel"][:5]
    for e, dev in zip(kernels, [0, "1", 1.0, 2.5, "gpu1"], strict=True):
        e["args"]["device"] = dev
    path = _write(tmp_path, kernels)
    prof = load_profile(str(path), _opts())
    assert prof.kernels["device"].tolist() == [0, 1, 1, -1, -1]
    assert _device_count(prof) == 2
    assert prof.warnings == [f"{path}: 2 kernel device id(s) are not integers within int64 (the first: 2.5); "
                             "those kernels count on no device"]
    assert not load_profile(str(H100), _opts(enable_memory_compare=True)).warnings


def test_sort_indexes_that_are_no_integer_read_as_none(tmp_path):
    """A process / thread sort_index that is no integer within int64 (fractional, junk, absent)
    reads as -1 (none), a whole number in any JSON form as itself: the M events of the H200 GPT excerpt (its
    times beyond 2**42 us: the decode that keeps ts as text) with some of their values replaced."""
    ev = json.loads((DATA / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json").read_text())["traceEvents"]
    odd = {("process", 610, 0): 4.5, ("process", 0, 0): "12", ("thread", 0, 7): 7.0,
           ("thread", 610, 610): "x"}
    want = {}
    for e in ev:
        if e.get("ph") == "M" and e["name"].endswith("_sort_index"):
            kind = e["name"].split("_")[0]
            key = (kind, e["pid"], 0 if kind == "process" else e["tid"])
            if key in odd:
                e["args"]["sort_index"] = odd[key]
            want[key] = e["args"]["sort_index"] if key not in odd else {"12": 12, 7.0: 7}.get(odd[key], -1)
    last = max(k for k in want if k[0] == "thread" and k not in odd)
    for e in ev:
        if e.get("ph") == "M" and e["name"] == "thread_sort_index" and (e["pid"], e["tid"]) == last[1:]:
            e["args"] = {}
    want[last] = -1
    prof = load_profile(str(_write(tmp_path, ev)), _opts())
    got = {("process", p, 0): i for p, i in zip(prof.processes["pid"].tolist(),
                                                prof.processes["sort_index"].tolist(), strict=True)}
    got.update({("thread", p, t): i for p, t, i in zip(prof.threads["pid"].tolist(), prof.threads["tid"].tolist(),
                                                      prof.threads["sort_index"].tolist(), strict=True)})
    assert {k: got[k] for k in want} == want
    assert sorted(want.values()).count(-1) == 3 and want[("process", 610, 0)] == -1


_BERT = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"


@pytest.mark.parametrize("backend", ["xpu", "privateuse1"])
def test_xpu_and_privateuse1_launches(tmp_path, backend):
    """Intel XPU and PrivateUse1 backends write their launch calls as ``<backend>_runtime`` / ``_driver``
    (Kineto's ActivityType names; its JSON output links them as CUDA's) and XPU kernels name a ``sycl queue``
    id and no stream (Kineto's XpuptiActivityHandlers). The bundled H100 bert trace reshaped so: every kernel
    reaches its operator as on the CUDA trace (no kernel did), and the time breakdown reads the queue as the
    stream (it refused the trace: no kernel had a stream). Expected totals by plain json: the device events
    whose launch call (an ac2g flow start) lies inside a cpu_op."""
    import gzip

    top = json.loads(gzip.decompress(_BERT.read_bytes()))  # float repr round-trips Kineto's 3-decimal times
    for e in top["traceEvents"]:
        cat = e.get("cat", "")
        if cat in ("cuda_runtime", "cuda_driver"):
            e["cat"] = cat.replace("cuda", backend)
        elif cat in KERNEL_CATS and backend == "xpu":
            e["args"]["sycl queue"] = e["args"].pop("stream")
    f = tmp_path / f"bert_{backend}.pt.trace.json"
    f.write_text(json.dumps(top))
    ev = _events(f)
    ops = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    launches = {(e["pid"], e["tid"], e["ts"]) for e in ev
                if e.get("cat", "").startswith(backend) and e.get("ph") == "X"
                and any(s <= e["ts"] <= t for s, t in ops)}
    starts = {e["id"] for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "s"
              and (e["pid"], e["tid"], e["ts"]) in launches}
    ends = {(e["pid"], e["tid"], e["ts"]) for e in ev
            if e.get("cat") == "ac2g" and e.get("ph") == "f" and e["id"] in starts}
    device_us = sum(e["dur"] for e in ev if e.get("cat") in KERNEL_CATS and (e["pid"], e["tid"], e["ts"]) in ends)
    assert device_us > 300
    r = compare(str(_BERT), str(f), enable_operator_compare=True, disable_module=True, enable_profiling_compare=True)
    stat = r.sheet("OperatorCompareStatistic")
    base, comp = stat["Base Device Duration(ms)"].to_numpy(), stat["Comparison Device Duration(ms)"].to_numpy()
    assert comp.sum() == pytest.approx(float(device_us) / 1000, abs=1e-9)
    assert comp.tolist() == base.tolist()
    om = r.sheet("OverallMetrics")
    assert om.iloc[:, 1].tolist() == om.iloc[:, 4].tolist() and om.iloc[0, 1] > 0


_MI300 = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_mi300.json.gz"


def test_rocm_kernels_without_a_stream_arg(tmp_path):
    """ROCm builds of PyTorch ~1.13-2.3 wrote device events without a ``stream`` arg (kineto's roctracer
    GpuActivity had no metadata; since kineto PR #922 it writes "stream": queue), while their lane (tid) is
    that queue (``resourceId``). The bundled MI300X bert trace with every device event's stream arg removed:
    each kernel's stream is its tid as before (checked by plain json: stream == tid on every device event),
    and OverallMetrics equals the original trace's; it stopped with "does not contain kernel running data"."""
    import gzip

    top = json.loads(gzip.decompress(_MI300.read_bytes()))
    device = [e for e in top["traceEvents"] if e.get("cat") in KERNEL_CATS and e.get("ph") == "X"]
    assert device and all(e["args"]["stream"] == e["tid"] for e in device)
    for e in device:
        del e["args"]["stream"]
    f = tmp_path / "mi300_nostream.pt.trace.json"
    f.write_text(json.dumps(top))
    got = load_profile(str(f), _opts())
    assert got.kernels["stream"].tolist() == got.kernels["tid"].tolist()
    assert (got.kernels["stream"] >= 0).all()
    want = compare(str(_MI300), str(_MI300), enable_profiling_compare=True).sheet("OverallMetrics")
    sheet = compare(str(_MI300), str(f), enable_profiling_compare=True).sheet("OverallMetrics")
    assert sheet.iloc[:, 4].tolist() == want.iloc[:, 4].tolist() and sheet.iloc[0, 4] > 0
    # a named lane ("stream 7", PyTorch 1.9) is no stream id: such a kernel stays on no stream
    for e in device:
        e["tid"] = f"stream {e['tid']}"
    f.write_text(json.dumps(top))
    assert (load_profile(str(f), _opts()).kernels["stream"] == -1).all()


def test_range_profiler_trace_says_what_it_holds(samples: Path) -> None:
    """A trace recorded with the CUPTI range profiler (``_ExperimentalConfig(profiler_metrics=...)``) holds its
    GPU work as "cuda_profiler_range" counter events, no kernel timeline: refused as a trace without kernels,
    but the message says so instead of telling the user to record with ProfilerActivity.CUDA (which they did)."""
    trace = samples / "hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz"
    import gzip

    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    cats = {e.get("cat") for e in events if e.get("ph") == "X"}
    assert "cuda_profiler_range" in cats and not cats & {"kernel", "gpu_memcpy", "gpu_memset"}
    with pytest.raises(ProfileError) as info:
        compare(str(trace), str(H100))
    assert info.value.path == str(trace)
    assert info.value.message.startswith("no GPU kernel timeline in the trace: its GPU work is in "
                                         "'cuda_profiler_range' events")
    assert "without profiler_metrics" in info.value.hint


def test_mtia_trace_is_named(samples) -> None:
    """hta's MTIA traces hold their device work in mtia_* categories (1,313 mtia_ccp_events in the inference
    trace), no GPU kernel: refused, named as what they are, without the CUDA advice (log audit)."""
    from msprof_compare import compare
    from msprof_compare.errors import ProfileError

    trace = samples / "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz"
    if not trace.exists():
        pytest.skip("hta MTIA sample absent")
    with pytest.raises(ProfileError) as err:
        compare(str(trace), str(trace))
    assert err.value.message == ("no GPU kernel, memcpy or memset events in the trace: it holds an MTIA "
                                 "accelerator's events (mtia_ccp_events, mtia_runtime), which are not supported")
    assert err.value.hint is None


def test_mtia_categories_named_up_to_three(samples, tmp_path: Path) -> None:
    """The refusal names up to three MTIA categories (sorted), then "...": hta's MTIA inference trace (two:
    mtia_ccp_events, mtia_runtime) with its first mtia_ccp_events event given the category mtia_ccp_dma, then
    its second mtia_runtime event mtia_fw_events too (synthetic: no sample holds more than two)."""
    import gzip

    source = samples / "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz"
    if not source.exists():
        pytest.skip("hta MTIA sample absent")
    doc = json.loads(gzip.decompress(source.read_bytes()))
    events = doc["traceEvents"]
    assert sorted({e["cat"] for e in events if str(e.get("cat", "")).startswith("mtia_")}) == [
        "mtia_ccp_events", "mtia_runtime"]
    next(e for e in events if e.get("cat") == "mtia_ccp_events")["cat"] = "mtia_ccp_dma"
    named = "mtia_ccp_dma, mtia_ccp_events, mtia_runtime"
    for extra in (False, True):
        if extra:
            [e for e in events if e.get("cat") == "mtia_runtime"][1]["cat"] = "mtia_fw_events"
            named = "mtia_ccp_dma, mtia_ccp_events, mtia_fw_events, ..."
        trace = tmp_path / f"mtia{int(extra)}.pt.trace.json"
        trace.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(ProfileError) as err:
            compare(str(trace), str(trace))
        assert err.value.message == ("no GPU kernel, memcpy or memset events in the trace: it holds an MTIA "
                                     f"accelerator's events ({named}), which are not supported")


def test_missing_kernels_hint_follows_what_the_trace_holds(samples: Path, tmp_path: Path) -> None:
    """"record it with ProfilerActivity.CUDA" only where the trace shows that activity was off (hta's cpu_only
    capture). A trace holding launch calls or memcpy events recorded it, and then the kernel events were lost or
    cut out (the message audit followed the old advice in circles): bert-small H100 holds 60 launch calls
    (34 cudaLaunchKernel, 4 cudaLaunchKernelExC, 22 cuLaunchKernel) and 1 gpu_memcpy, counted here from the raw
    events."""
    import gzip

    source = samples / "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
    cpu_only = samples / "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
    if not (source.exists() and cpu_only.exists()):
        pytest.skip("samples absent")
    doc = json.loads(gzip.decompress(source.read_bytes()))
    events = doc["traceEvents"]
    launches = sum(1 for e in events if str(e.get("cat", "")).lower() in ("cuda_runtime", "cuda_driver")
                   and "Launch" in e.get("name", ""))
    copies = sum(1 for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset"))
    assert (launches, copies) == (60, 1)
    lost = "the CUDA activity was recorded, but its kernel events were lost or cut from the file; record it again"
    cases = (("no_kernels", {"kernel"}, "no GPU kernels found in the trace",
              f"it holds {launches} kernel launch call(s) and {copies} memcpy / memset event(s): {lost}"),
             ("no_device", {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"},
              "no GPU kernel, memcpy or memset events in the trace",
              f"it holds {launches} kernel launch call(s): {lost}"))
    for name, dropped, message, hint in cases:
        trace = tmp_path / f"{name}.pt.trace.json"
        trace.write_text(json.dumps(dict(doc, traceEvents=[e for e in events if e.get("cat") not in dropped])))
        with pytest.raises(ProfileError) as err:
            compare(str(trace), str(H100))
        assert (err.value.path, err.value.message, err.value.hint) == (str(trace), message, hint)
    with pytest.raises(ProfileError) as err:
        compare(str(cpu_only), str(H100))
    assert err.value.hint == "record it with torch.profiler.ProfilerActivity.CUDA"


def test_an_ascend_timeline_inside_a_json_object_is_named_not_sent_to_cuda(samples: Path, tmp_path: Path) -> None:
    """An Ascend timeline whose event list was put inside an object (``{"traceEvents": [...]}``, as trace viewers
    save one) reads as a GPU trace, as in the original, whose refusal advised recording with the CUDA activity:
    the refusal names the device processes it holds instead. Inputs: the MindSpore-layout fixture's trace_view.json
    (tests/data/npu/README.md) and CANN's msprof_1_0_1.json of reference pair 9d; the lanes expected are read here
    from their raw process_name records."""
    ms = Path(__file__).parent / "data/npu/profiler/rank-0_20250101000000000_ascend_ms/ASCEND_PROFILER_OUTPUT"
    cann = (samples / "mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704567_GQFAMHBKGODKJMLA"
            / "device_1/timeline/msprof_1_0_1.json")
    for source in (ms / "trace_view.json", cann):
        events = json.loads(source.read_text())
        named = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
        lanes = [n for n in ("Ascend Hardware", "HCCL", "Overlap Analysis") if n in named]
        assert lanes == ["Ascend Hardware", "HCCL", "Overlap Analysis"]
        wrapped = tmp_path / f"{source.stem}_wrapped.json"
        wrapped.write_text(json.dumps({"traceEvents": events}))
        with pytest.raises(ProfileError) as err:
            compare(str(wrapped), str(H100))
        assert (err.value.path, err.value.message) == (str(wrapped), "no GPU kernel, memcpy or memset events in "
                                                                     "the trace")
        assert err.value.hint == ("it is an Ascend NPU timeline inside a JSON object (processes 'Ascend Hardware', "
                                  "'HCCL', 'Overlap Analysis'), which is read as a GPU trace: pass the event list as "
                                  "the profiler wrote it: the profiling directory, its trace_view.json, or a CANN "
                                  "msprof_*.json")
    # the list itself, as written, compares (the device lanes read): the hint's advice holds
    assert compare(str(cann), str(cann)).base.kind == "NPU"


def _one_feed(raws: list) -> np.ndarray:
    """The op args texts ``raws`` as the Kineto loader reads them, fed in one batch."""
    texts = kineto._RawTexts()
    texts.add(raws)
    return texts.values("t.json")


def test_raw_args_texts_are_read_once_per_distinct_text() -> None:
    """``kineto._RawTexts`` (op Input Dims / Input type) fed once: str() of each value, "N/A" when absent, equal
    texts alike wherever they stand; a text holding a NUL byte (which no decoded trace has) takes the per-value path
    and is refused as malformed JSON, as before."""
    import msgspec

    raws = [msgspec.Raw(b"[[1, 2], []]"), msgspec.Raw(b""), msgspec.Raw(b'"float"'), msgspec.Raw(b"[[1, 2], []]"),
            msgspec.Raw(b'["float", "", "Scalar"]'), msgspec.Raw(b"")]
    got = _one_feed(raws)
    assert got.dtype == object
    assert got.tolist() == ["[[1, 2], []]", "N/A", "float", "[[1, 2], []]", "['float', '', 'Scalar']", "N/A"]
    assert _one_feed([]).tolist() == []
    with pytest.raises(ProfileError, match="malformed event args"):
        _one_feed([msgspec.Raw(b"[1]"), msgspec.Raw(b'"a\x00b"')])


@pytest.mark.parametrize("trace", [H100, DATA / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"])
def test_times_written_as_digit_text_read_as_their_numbers_without_a_warning(tmp_path, trace):
    """A Kineto trace's ``ts`` and ``dur`` written as text (``"ts": "1727317950946443.254"``, as Ascend's
    trace_view.json writes ts; PyTorch writes numbers) read as the numbers they say, without a warning: the value
    is the one the text says (the original reads ts and dur as exact decimals, strings and numbers alike:
    reference-1 §3.1), so no figure moves and a note would say nothing to act on. The H100 excerpt and the H200
    one (times beyond 2**42 us: the decode that keeps ts as text) with the ts and dur of every other event, then
    of all, written so: the kernels' times are the text's decimals to the ns (computed here with ``Decimal``),
    the warnings and the comparison's frames those of the trace as written."""
    raw = json.loads(trace.read_text())
    doc = json.loads(trace.read_text(), parse_float=Decimal)
    want = [(int(Decimal(str(e["ts"])) * 1000), int(Decimal(str(e["dur"])) * 1000))
            for e in doc["traceEvents"] if e.get("ph") == "X" and _cat(e) in KERNEL_CATS]
    flags = dict(enable_profiling_compare=True, enable_operator_compare=True, enable_api_compare=True,
                 enable_memory_compare=True)
    as_written = compare(trace, trace, **flags)
    numeric = load_profile(str(trace), _opts(**flags))
    for every in (2, 1):
        text = json.loads(json.dumps(raw))
        texts = 0
        for i, e in enumerate(text["traceEvents"]):
            for key in ("ts", "dur"):
                if i % every == 0 and isinstance(e.get(key), int | float):
                    e[key] = json.dumps(e[key])
                    texts += 1
        assert texts > 100 * (3 - every)
        path = tmp_path / f"every{every}.pt.trace.json"
        path.write_text(json.dumps(text))
        prof = load_profile(str(path), _opts(**flags))
        assert list(zip(prof.kernels["ts"].tolist(), prof.kernels["dur"].tolist(), strict=True)) == want
        assert [w.replace(str(path), "P") for w in prof.warnings] == \
            [w.replace(str(trace), "P") for w in numeric.warnings]
        got = compare(path, path, **flags)
        assert got.frames.keys() == as_written.frames.keys()
        # the first check names the input given twice (its path): the rest alike
        same = [f.frames["guards"].iloc[0]["Detail"] for f in (got, as_written)]
        assert same == [f"Base and comparison are the same input ({p}): every difference will be zero"
                        for p in (path, trace)]
        assert got.frames["guards"].iloc[1:].equals(as_written.frames["guards"].iloc[1:])
        assert all(got.frames[k].equals(as_written.frames[k]) for k in got.frames if k != "guards")


def test_a_time_written_as_text_that_is_no_number_is_refused(tmp_path):
    """Text that is no number in a kernel's ``ts`` (hex digits, full-width digits) is refused naming the value,
    where digit text reads as its number (above)."""
    for text in ("0x64", "１００"):
        path = _write(tmp_path, [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": text, "dur": 1,
                                  "args": {"stream": 7, "device": 0}}])
        with pytest.raises(ProfileError) as err:
            load_profile(str(path), _opts())
        assert err.value.message == (f"invalid trace event: event 0 of traceEvents (counting from 0; ph 'X', name "
                                     f"'k') has ts {json.dumps(text)}: not a number")
