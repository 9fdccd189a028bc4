"""Property-based fuzz of the two trace JSON loaders (Kineto and Ascend trace_view).

Property: for any bytes, a loader returns a ``Profile`` or raises a typed error
(``ProfileError`` / ``UsageError``), never anything else. Loaders are called
directly on bytes (no file, no CLI) so thousands of examples fit in seconds;
``tools/fuzz_long.py`` runs the same properties with a long budget.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msprof_compare.compare import classify, communication
from msprof_compare.errors import ProfileError, UsageError
from msprof_compare.loaders import Layout, ascend_text, kineto
from msprof_compare.model import Profile
from msprof_compare.options import build_options

SRC = Path(__file__).resolve().parent / "data" / "bad" / "_src"
OPTS, _ = build_options()  # every comparison on: every table is built
KEYWORDS = classify.load_keywords(classify._DEFAULT_INI)
#: CI budget (reproducible): issue 7 asks for >= 2000 examples in CI. The random-event property draws slowly (its
#: examples serve both loaders); the cheap cuts of real traces (~4 ms an example) make up the rest.
#: tools/fuzz_long.py raises every budget via MSPROF_FUZZ_EXAMPLES.
_LONG = int(os.environ.get("MSPROF_FUZZ_EXAMPLES", "0") or 0)
CI_EXAMPLES = {"random_events": 650, "truncation": 1200, "arbitrary_bytes": 150}
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
FAST = settings(max_examples=_LONG or CI_EXAMPLES["random_events"], deadline=None, derandomize=not _LONG,
                database=None, suppress_health_check=_HEALTH)
CUTS = settings(FAST, max_examples=_LONG or CI_EXAMPLES["truncation"])
BYTES = settings(max_examples=_LONG or CI_EXAMPLES["arbitrary_bytes"], deadline=None, derandomize=not _LONG,
                 database=None)

# ---------------------------------------------------------------- strategies

_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["1736408883732241.564", "  12.5\t", "1e3", "-0", "", "N/A", "0x10", "1.2.3"]),
)
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
_PH = st.sampled_from(["X", "M", "s", "f", "t", "i", "C", "B", "E", "", "Z"])
_CAT = st.sampled_from(["kernel", "cpu_op", "cuda_runtime", "gpu_memcpy", "gpu_memset", "ac2g", "fwdbwd",
                        "user_annotation", "python_function", "async_npu", "HostToDevice", "enqueue",
                        "dequeue", "Kernel", "Operator", "Runtime", "", "odd"])
_NAME = st.sampled_from(["process_name", "thread_name", "process_sort_index", "aten::mm", "ProfilerStep#5",
                         "[memory]", "hcom_allReduce__1", "Notify_Wait", "Computing", "Communication",
                         "Communication(Not Overlapped)", "Free", "sgemm", "Memcpy HtoD", "=cmd|'/C calc'!A0",
                         "nccl:all_reduce", "ncclKernel_AllReduce", "ncclDevKernel_Generic", "record_param_comms",
                         "void ns::multimem_all_reduce_kernel<float>(float*)", "f<(a)>(b)) [clone"])
_ARGS_KEYS = st.sampled_from(["name", "stream", "device", "correlation", "External id", "Sequence number",
                              "Fwd thread id", "Input Dims", "Input type", "Call stack", "Bytes", "Addr",
                              "Total Allocated", "Total Reserved", "Device Id", "Device Type", "Python id",
                              "Python parent id", "sort_index", "Task Type", "connection_id", "labels",
                              "Collective name"])
_ARGS = st.one_of(st.dictionaries(_ARGS_KEYS, _JSON, max_size=5), _JSON)


#: built once: strategies made inside ``events`` were rebuilt and validated on every draw (most of the time
#: of the two random-event properties, not the loaders)
_FIELDS = {
    "ph": st.one_of(_PH, _SCALARS), "cat": st.one_of(_CAT, _SCALARS), "name": st.one_of(_NAME, _SCALARS),
    "pid": st.one_of(st.integers(0, 5), _SCALARS), "tid": st.one_of(st.integers(0, 5), _SCALARS),
    "ts": st.one_of(st.integers(0, 10**6), st.floats(0, 1e6), st.sampled_from(["100.5", "1736408883732241.564"]),
                    _SCALARS),
    "dur": st.one_of(st.integers(-5, 10**4), st.floats(-1, 1e4), _SCALARS),
    "id": st.one_of(st.integers(0, 20), _SCALARS), "args": _ARGS, "bp": st.just("e"), "s": st.just("t"),
}
_PRESENCE = st.integers(0, 9)


@st.composite
def events(draw: st.DrawFn) -> dict:
    """One trace event: plausible fields, each possibly missing or of a wrong type."""
    ev: dict = {}
    for key, strat in _FIELDS.items():
        if draw(_PRESENCE) < 8:  # most fields present
            ev[key] = draw(strat)
    return ev


def _layout(name: str, level: str) -> Layout:
    return Layout(given=name, profiling_path=name, level=level, trace_path=name)


def load_kineto(data: bytes) -> None:
    profile = _check(lambda: kineto.load(_layout("fuzz.pt.trace.json", "file"), OPTS, data=data))
    if profile is not None:  # the GPU collectives' families read kernels, flows and the records' args
        communication.side_data(profile, None, KEYWORDS)


def load_trace_view(data: bytes) -> None:
    _check(lambda: ascend_text.load(_layout("trace_view.json", "trace"), OPTS, data=data))


def _check(run) -> Profile | None:
    try:
        profile = run()
    except (ProfileError, UsageError) as exc:
        assert str(exc).strip()  # a message to print on the one error line
        return None
    assert isinstance(profile, Profile)
    return profile


# ---------------------------------------------------------------- properties


@FAST
@given(st.lists(events(), max_size=12), st.dictionaries(st.sampled_from(["deviceProperties", "distributedInfo",
                                                                         "schemaVersion", "metadata"]), _JSON))
def test_random_events_kineto_and_trace_view(evs: list, top: dict) -> None:
    """One drawn event list, read by both loaders: as a Kineto document (with the drawn top-level keys) and as an
    Ascend trace_view.json (the bare list). Drawing the events is nearly all of this property's time (the loaders
    take ~5 %), so each example serves both, as many examples per loader as when each had its own property."""
    load_kineto(json.dumps(dict(top, traceEvents=evs)).encode())
    load_trace_view(json.dumps(evs).encode())


def _good(name: str) -> bytes:
    p = SRC / name
    if not p.is_file():
        pytest.skip(f"{p} missing (run tools/make_bad_corpus.py)")
    return p.read_bytes()


@CUTS
@given(st.data())
def test_truncation_and_byte_edits(data: st.DataObject) -> None:
    """Cut a real trace anywhere, flip or insert a few bytes: still a typed outcome."""
    which = data.draw(st.sampled_from(["kineto.json", "trace_view.json"]))
    raw = bytearray(_good(which))
    for _ in range(data.draw(st.integers(0, 3))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        byte = data.draw(st.integers(0, 255))
        if op == "flip":
            raw[pos] = byte
        elif op == "insert":
            raw.insert(pos, byte)
        else:
            del raw[pos]
    cut = data.draw(st.integers(0, len(raw)))
    blob = bytes(raw[:cut])
    (load_kineto if which == "kineto.json" else load_trace_view)(blob)


@BYTES
@given(st.binary(max_size=300))
def test_arbitrary_bytes(blob: bytes) -> None:
    load_kineto(blob)
    load_trace_view(blob)


def test_ci_budget_is_at_least_2000_examples() -> None:
    """Issue 7's floor: the properties above run >= 2000 generated inputs in CI (it fell to 1450 when the two
    random-event properties became one, each example serving both loaders)."""
    budgets = [FAST.max_examples, CUTS.max_examples, BYTES.max_examples]
    if not _LONG:
        assert budgets == list(CI_EXAMPLES.values())
    assert sum(budgets) >= 2000
