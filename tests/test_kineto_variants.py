"""One Kineto trace written as different PyTorch / Kineto versions write it, or as tools rewrite it: the category
spellings (PyTorch 1.8's Kernel / Operator / Runtime / Memset and ``async`` flows, the ``async_gpu`` /
``async_cpu_to_gpu`` flows of later 1.x, any case), and the top-level keys (``displayTimeUnit`` "ns" or "ms" or
none, ``baseTimeNanoseconds`` changed or absent, ``traceEvents`` first or last, no ``deviceProperties``).

Each edited copy of the H100 timesformer excerpt (tests/data/kineto/README.md) must give every sheet cell and every
validity check of its comparison against the unedited excerpt that the unedited excerpt gives against itself:
Chrome's trace format keeps ``ts`` / ``dur`` in microseconds whatever ``displayTimeUnit`` says (hta's
ns_resolution trace, displayTimeUnit "ns", writes ts 1712195495519689.0 and dur 63.813), and the other keys feed
no figure. A category spelling the loader does not read is refused naming it, not as a trace whose kernels were
lost."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare.api import compare
from msprof_compare.compare import checks
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options

H100 = Path(__file__).parent / "data" / "kineto" / "h100_timesformer_excerpt.pt.trace.json"

#: Kineto's cats -> PyTorch 1.8's (tb_plugin's resnet50 samples: Operator, Runtime, Kernel, Memcpy, Memset, async).
LEGACY_18 = {"cpu_op": "Operator", "cuda_runtime": "Runtime", "kernel": "Kernel", "gpu_memset": "Memset",
             "ac2g": "async"}
SPELLINGS = {
    "legacy_18": LEGACY_18,
    "flows_async_gpu": {"ac2g": "async_gpu"},  # hta's trace_file_list/inference_rank_1 (legacy cats)
    "flows_async_cpu_to_gpu": {"ac2g": "async_cpu_to_gpu"},
    "upper_case": {"cpu_op": "CPU_OP", "cuda_runtime": "CUDA_Runtime", "kernel": "KERNEL", "gpu_memset": "GPU_MEMSET",
                   "ac2g": "AC2G", "cpu_instant_event": "CPU_Instant_Event"},
}


def _doc() -> dict:
    return json.loads(H100.read_text())


def _respelled(doc: dict, names: dict[str, str]) -> dict:
    return dict(doc, traceEvents=[dict(e, cat=names[e["cat"]]) if e.get("cat") in names else e
                                  for e in doc["traceEvents"]])


def _headers(doc: dict) -> dict[str, dict]:
    without = lambda *keys: {k: v for k, v in doc.items() if k not in keys}  # noqa: E731
    events_first = {"traceEvents": doc["traceEvents"], **without("traceEvents")}
    return {
        "unit_ns": dict(doc, displayTimeUnit="ns"),
        "unit_ms": dict(doc, displayTimeUnit="ms"),
        "no_unit": without("displayTimeUnit"),
        "base_time_moved": dict(doc, baseTimeNanoseconds=10**18),
        "no_base_time": without("baseTimeNanoseconds"),
        "events_first": events_first,
        "events_last": {**without("traceEvents"), "traceEvents": doc["traceEvents"]},
        "no_device_properties": without("deviceProperties"),
        "events_alone": {"traceEvents": doc["traceEvents"]},
    }


def _cells(res, path: str) -> dict[str, list]:
    """Every sheet's cells and the validity checks, the compared file's path written as "P"."""
    out = {}
    for name in res.sheet_names:
        frame = res.sheet(name).astype(object)
        out[name] = [[("P" if isinstance(v, str) and path in v else v) for v in row]
                     for row in frame.where(pd.notna(frame), None).to_numpy().tolist()]
    g = res.guards.astype(object)
    out["guards"] = g.where(pd.notna(g), None).to_numpy().tolist()
    # less the check that both sides are one profile: the same input (the unedited run) or, where the variant's
    # tables came out equal to the excerpt's, the same events (some variants' tables keep their own spellings)
    return {name: [row for row in rows if not (row and row[0] == "one profile on both sides")]
            for name, rows in out.items()}


@pytest.fixture(scope="module")
def unedited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    """The excerpt against an unedited copy of itself: two inputs, as each variant's run has, where one input given
    twice has its notes' figures said once for both sides."""
    copy = tmp_path_factory.mktemp("unedited") / H100.name
    shutil.copyfile(H100, copy)
    return _cells(compare(str(H100), str(copy)), str(copy))


def test_the_excerpt_holds_what_the_variants_edit():
    """The edits reach something: the excerpt holds each category respelled and each top-level key changed."""
    doc = _doc()
    cats = {e.get("cat") for e in doc["traceEvents"]}
    assert {c for names in SPELLINGS.values() for c in names} <= cats
    assert (doc["displayTimeUnit"], next(iter(doc))) == ("ms", "metadata")  # traceEvents is not first
    assert doc["baseTimeNanoseconds"] == 1751410836000000000 and doc["deviceProperties"][0]["name"].startswith(
        "NVIDIA H100")


@pytest.mark.parametrize("variant", sorted(SPELLINGS) + sorted(_headers(_doc())))
def test_a_respelled_or_rewritten_trace_gives_the_unedited_figures(variant, unedited, tmp_path):
    doc = _doc()
    edited = _respelled(doc, SPELLINGS[variant]) if variant in SPELLINGS else _headers(doc)[variant]
    path = tmp_path / f"{variant}.pt.trace.json"
    path.write_text(json.dumps(edited))
    got = _cells(compare(str(H100), str(path)), str(path))
    assert got.keys() == unedited.keys()
    for name, rows in unedited.items():
        assert got[name] == [[("P" if isinstance(v, str) and str(H100) in v else v) for v in row] for row in rows], name


def test_legacy_spellings_load_the_same_tables(tmp_path):
    """PyTorch 1.8's spellings read as Kineto's: the same ops (cat lower-cased), kernels (cat normalised, the one
    written kept as task_type) and flows; 62 Kernel and 13 Memset, 73 Operator and 20 Runtime events, 95 async flow
    events by the raw JSON."""
    legacy = _respelled(_doc(), LEGACY_18)
    count = lambda *cats: sum(e.get("cat") in cats for e in legacy["traceEvents"])  # noqa: E731
    assert (count("Kernel"), count("Memset"), count("Operator"), count("Runtime"), count("async")) == (
        62, 13, 73, 20, 95)
    path = tmp_path / "legacy.pt.trace.json"
    path.write_text(json.dumps(legacy))
    new, old = load_profile(str(H100), Options()), load_profile(str(path), Options())
    assert len(old.kernels) == 75 and len(old.ops) == 93
    assert old.kernels.drop(columns="task_type").equals(new.kernels.drop(columns="task_type"))
    assert set(old.kernels["task_type"]) == {"Kernel", "Memset"}
    assert old.ops.drop(columns="cat").equals(new.ops.drop(columns="cat"))
    assert set(old.ops["cat"]) == {"operator", "runtime"}
    assert old.flows.drop(columns="cat").equals(new.flows.drop(columns="cat")) and set(old.flows["cat"]) == {"async"}


def test_kernels_under_an_unread_category_are_named_in_the_refusal(tmp_path, caplog):
    """A trace whose kernels and memsets are written under categories no reader knows (``gpu_kernel``,
    ``gpu_memset_v2``) was refused as one whose "kernel events were lost or cut from the file; record it again":
    the refusal names those categories and their complete events (62 and 13, counted in the raw JSON), and the ones
    it reads. Ops so written (``cpu_operator``, 73) leave the side op-less, and the reason says which category."""
    doc = _doc()
    raw = {c: sum(e.get("cat") == c and e.get("ph") == "X" for e in doc["traceEvents"]) for c in ("kernel",
                                                                                                  "gpu_memset")}
    assert raw == {"kernel": 62, "gpu_memset": 13}
    path = tmp_path / "renamed.pt.trace.json"
    renamed = _respelled(doc, {"kernel": "gpu_kernel", "gpu_memset": "gpu_memset_v2"})
    # an instant event of such a category is no complete event: the count stays the complete events'
    first = next(e for e in renamed["traceEvents"] if e.get("cat") == "gpu_kernel")
    renamed["traceEvents"].append({"ph": "i", "s": "t", "cat": "gpu_kernel", "name": "mark", "pid": first["pid"],
                                   "tid": first["tid"], "ts": first["ts"]})
    path.write_text(json.dumps(renamed))
    with pytest.raises(ProfileError) as err:
        compare(str(H100), str(path))
    assert (err.value.path, err.value.message) == (str(path), "no GPU kernel, memcpy or memset events in the trace")
    assert err.value.hint == ("it holds complete events of categories that are not read: 'gpu_kernel' (62), "
                              "'gpu_memset_v2' (13); GPU work is read from the categories kernel, gpu_memcpy and "
                              "gpu_memset (PyTorch 1.8: Kernel, Memcpy, Memset) alone, so a trace that names its "
                              "kernels otherwise is not supported")
    # ops under an unread category: the side is op-less, and the one-sided warning's reason names the category
    assert sum(e.get("cat") == "cpu_op" and e.get("ph") == "X" for e in doc["traceEvents"]) == 73
    path.write_text(json.dumps(_respelled(doc, {"cpu_op": "cpu_operator"})))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(H100), str(path))
    assert not {"OperatorCompare", "OperatorCompareStatistic", "ApiCompare"} & set(res.sheet_names)
    assert ("only the other side has ops (a GPU trace without cpu_op events has none; it holds complete events of "
            "categories that are not read: 'cpu_operator' (73)): the overall comparison applies") in caplog.text
    # Kineto's own categories of no GPU work are no such category: the launch calls' hint stands
    path.write_text(json.dumps(_respelled(doc, {"kernel": "cuda_sync", "gpu_memset": "overhead"})))
    with pytest.raises(ProfileError) as err:
        compare(str(H100), str(path))
    assert err.value.hint.startswith("it holds 10 kernel launch call(s): the CUDA activity was recorded")


@pytest.mark.parametrize(("sample", "vendor", "call"), [
    ("tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz", "AMD", "hipLaunchKernel"),
    ("tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", "NVIDIA", "cudaLaunchKernel"),
    # no deviceProperties as written: PyTorch 1.8-era cats (Kernel, Runtime) and async_gpu flows
    ("hta/tests/data/trace_file_list/inference_rank_1.json.gz", "NVIDIA", "cudaLaunchKernel"),
])
def test_gpu_vendor_without_device_properties_comes_from_the_launch_calls(samples, sample, vendor, call):
    """Without deviceProperties the GPU vendor check read "unknown" beside the unedited trace; the runtime calls
    name their API (ROCm's Kineto files HIP's hip* calls as cuda_runtime too)."""
    import gzip

    path = samples / sample
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    runtime = {e["name"] for e in events if str(e.get("cat", "")).lower() in ("cuda_runtime", "runtime")}
    assert call in runtime and all(n.startswith("hip" if vendor == "AMD" else "cuda") for n in runtime)
    prof = load_profile(str(path), Options())
    prof.device_properties = []
    assert checks._gpu_vendor(prof) == vendor
    # calls of both APIs (or of none) tell nothing
    prof.ops = prof.ops.assign(name=np.where(prof.ops["name"] == call, "hipMemcpyAsync" if vendor == "NVIDIA"
                                             else "cudaMemcpyAsync", prof.ops["name"]))
    assert checks._gpu_vendor(prof) is None


def test_pytorch_18_step_markers_are_no_framework_op(samples, tmp_path):
    """PyTorch 1.8 writes its ProfilerStep# markers as cat Operator (tb_plugin's resnet50 sample: 6 of its 23,646
    Operator events), where later versions write user_annotation: the 1.8 trace cut to its Runtime calls and markers
    has no framework op, as the same cut of a later trace has (test_summary's runtime-only test); one aten Operator
    kept makes it have one. (Its kernels are left out too: whether a side has framework ops reads its ops alone.)"""
    import gzip

    path = samples / "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
    doc = json.loads(gzip.decompress(path.read_bytes()))
    ops = [e for e in doc["traceEvents"] if e.get("cat") == "Operator"]
    markers = [e for e in ops if e["name"].startswith("ProfilerStep#")]
    assert (len(ops), len(markers)) == (23646, 6)
    aten = next(e for e in ops if e["name"].startswith("aten::"))
    for kept, framework in (([], False), ([aten], True)):
        cut = dict(doc, traceEvents=[e for e in doc["traceEvents"] if e.get("cat") == "Runtime"] + markers + kept)
        trace = tmp_path / "cut.pt.trace.json"
        trace.write_text(json.dumps(cut))
        prof = load_profile(str(trace), Options())
        assert prof.has_ops and prof.has_framework_ops is framework
        assert set(prof.ops["cat"]) == {"runtime", "operator"}


def test_no_category_of_a_real_trace_is_named_unread():
    """Every category the bundled excerpts hold (PyTorch 1.8 to 2.11, CUDA and ROCm, vLLM graphs) is read or known
    as Kineto's own: the unread-categories clause never names one of theirs."""
    traces = sorted(p for p in H100.parent.iterdir() if ".json" in p.name)
    assert len(traces) >= 8
    for path in traces:
        assert load_profile(str(path), Options()).extra["unread_cats"] == {}, path.name
