"""The GPU vendor of a Kineto trace without deviceProperties (the rest of this file: the same trace as other
versions and tools write it)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from msprof_compare.compare import checks
from msprof_compare.loaders import load_profile
from msprof_compare.options import Options


@pytest.mark.parametrize(("sample", "vendor", "call"), [
    ("tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz", "AMD", "hipLaunchKernel"),
    ("tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", "NVIDIA", "cudaLaunchKernel"),
    # no deviceProperties as written: PyTorch 1.8-era cats (Kernel, Runtime) and async_gpu flows
    ("hta/tests/data/trace_file_list/inference_rank_1.json.gz", "NVIDIA", "cudaLaunchKernel"),
])
def test_gpu_vendor_without_device_properties_comes_from_the_launch_calls(samples, sample, vendor, call):
    """Without deviceProperties the GPU vendor check read "unknown" beside the unedited trace; the runtime calls
    name their API (ROCm's Kineto files HIP's hip* calls as cuda_runtime too)."""
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
