"""Vectorised replacements of per-row loops give exactly what the scalar code gave.

Each test runs the array version and the scalar rule it replaced (kept in the package, or restated
here where the package no longer has it) on edge cases and random data, and compares bit for bit.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal

import msgspec
import numpy as np
import pytest

from msprof_compare.compare import memory
from msprof_compare.compare.table import diff_ratio, diff_ratios, py_round
from msprof_compare.loaders import kineto, traceio
from msprof_compare.model import Profile, frame
from msprof_compare.options import build_options

#: Values where a scaled float rounds differently from Python's round (ties on the decimal value,
#: binary values just off a tie), and the special values.
EDGE = [0.0, -0.0, 0.005, -0.005, 0.015, 0.025, 0.125, -0.125, 0.285, 1.005, 2.675, 0.5, 1.5, 2.5, -2.5,
        0.00005, 0.00015, 1.00005, 5e-324, -5e-324, 1e-300, 2.0 ** 52, 2.0 ** 52 + 0.5, 2.0 ** 53 + 2, 1e16,
        1e300, 1.7e308, -1.7e308, math.inf, -math.inf, math.nan, 123456.785, 0.1 + 0.2, 1 / 3]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal as IEEE bit patterns (so -0.0 != 0.0), any NaN equal to any NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    nan = np.isnan(a) & np.isnan(b)
    return a.shape == b.shape and bool(((a.view(np.int64) == b.view(np.int64)) | nan).all())


def _random_floats(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    return [
        rng.random(n) * 1000,
        np.round(rng.random(n) * 1000, 3),                        # x.xx5 decimal ties
        (rng.integers(-100_000, 100_000, n) + 0.5) / 100,         # ties at the second place
        (rng.integers(-100_000, 100_000, n) + 0.5) / 10_000,      # ties at the fourth place
        rng.integers(-64, 64, n) / 16.0,                          # exact binary ties
        rng.integers(0, 3, n).astype(float),                      # zeros
        rng.normal(size=n) * 10.0 ** rng.integers(-30, 300, n),   # all magnitudes
    ]


@pytest.mark.parametrize("ndigits", [2, 4])
def test_py_round_is_round(ndigits):
    rng = np.random.default_rng(ndigits)
    for k, x in enumerate([np.array(EDGE), *_random_floats(rng, 20_000)]):
        expected = [round(v, ndigits) for v in x.tolist()]
        assert _same_bits(py_round(x, ndigits), expected)
        if k == {2: 3, 4: 4}[ndigits]:  # the ties at this place: numpy's scale-and-round differs on some
            assert not _same_bits(np.round(x, ndigits), expected)
    assert py_round(np.zeros(0), 2).shape == (0,)


def test_diff_ratios_is_diff_ratio():
    rng = np.random.default_rng(7)
    edge = np.array(EDGE)
    pairs = [(edge, edge), (edge, edge[::-1]), (np.repeat(edge, len(edge)), np.tile(edge, len(edge)))]
    data = _random_floats(rng, 5_000)
    pairs += [(a, data[k - 1]) for k, a in enumerate(data)] + [(data[k - 1], a) for k, a in enumerate(data)]
    for base, comp in pairs:
        diff, ratio = diff_ratios(base, comp)
        expected = [diff_ratio(b, c) for b, c in zip(base.tolist(), comp.tolist(), strict=True)]
        assert _same_bits(diff, [e[0] for e in expected])
        assert _same_bits(ratio, [e[1] for e in expected])
    diff, ratio = diff_ratios(np.zeros(0), np.zeros(0))
    assert diff.shape == ratio.shape == (0,)


def _us_text(ns: int, float_style: bool) -> str:
    """The rule written independently: the exact decimal quotient, plus ".0" for a whole value in float style."""
    text = format(Decimal(ns) / 1000, "f")
    return text + ".0" if float_style and "." not in text else text


def test_us_texts_is_the_exact_decimal():
    rng = np.random.default_rng(3)
    ns = np.concatenate([
        np.array([0, 1, -1, 10, 100, 999, 1000, -1000, 1500, -1500, -250, 120, 1020, 1002, 1200,
                  2 ** 63 - 1, -(2 ** 63 - 1), -(2 ** 63)], dtype=np.int64),
        rng.integers(-10 ** 17, 10 ** 17, 5000), rng.integers(-3000, 3000, 5000),
        rng.integers(-10 ** 6, 10 ** 6, 2000) * 1000, rng.integers(0, 10 ** 6, 2000) * 10,
    ])
    for float_style in (False, True):
        got = memory._us_texts(ns, float_style)
        assert got.dtype == object
        assert got.tolist() == [_us_text(v, float_style) for v in ns.tolist()]
    assert memory._us_texts(np.zeros(0, np.int64)).shape == (0,)


def _flows_scalar(events: list, cats: set, kernel_at: frozenset = frozenset()) -> tuple[list[tuple], int]:
    """The dict pairing ``kineto._load_flows`` replaced: (id, cat, s_ts, s_pid, s_tid, f_ts, f_pid, f_tid,
    replay) rows and the backward tid; then each other launch-flow end (not fwdbwd) at a kernel start
    (``kernel_at``: (pid, tid, ts ns) of the kernels, lane and time):
    linked to its key's start, or without one, to the launch call whose correlation arg is the end's id (a
    whole number >= 0, ``traceio.whole_int``) when exactly one call has it; a copy of an end (same key, lane and
    time) links nothing more; a key's one end linked so to a call that is no graph launch is a pair that lost
    its start (``kineto.LOST_START``). Rows go by key (first appearance), the ends of one key by time."""
    sub = [e for e in events if e.cat.lower() in cats and e.ph in ("s", "f")]
    starts: dict = {}
    ends: dict = {}
    seen: dict = {}
    backward_tid = -1
    for i, e in enumerate(sub):
        c, fid = e.cat.lower(), e.id
        if e.ph == "s":
            if fid is not None:
                starts[(c, fid)] = i
                seen.setdefault((c, fid), None)
        else:
            if backward_tid < 0 and c == "fwdbwd":
                backward_tid = e.tid
            if fid is not None:
                ends[(c, fid)] = i
                seen.setdefault((c, fid), None)
    rows = []
    rank = {k: i for i, k in enumerate(seen)}
    for k in seen:
        if k in starts and k in ends:
            s, f = sub[starts[k]], sub[ends[k]]
            rows.append((str(k[1]), k[0], s.ts * 1000, s.pid, s.tid, f.ts * 1000, f.pid, f.tid, 0, rank[k]))
    calls: dict = {}
    for e in events:
        if e.ph == "X" and e.cat.lower() in kineto.LAUNCH_CATS:
            corr = json.loads(bytes(e.args)).get("correlation") if len(e.args) else None
            calls.setdefault(traceio.whole_int(corr), []).append(e)
    linked: set = set()  # (key, lane, time) of the ends linked so far: a copy of one links nothing more
    lone: dict = {}  # key without a start -> its rows linked to a launch call
    for e in sub:
        k = (e.cat.lower(), e.id)
        if e.ph != "f" or k not in ends or (e.pid, e.tid, e.ts * 1000) not in kernel_at or k[0] == "fwdbwd":
            continue
        if (k, e.pid, e.tid, e.ts) in linked:
            continue
        if k in starts:
            paired = sub[ends[k]]
            if (e.pid, e.tid, e.ts) != (paired.pid, paired.tid, paired.ts):  # not (a copy of) the paired end:
                c = sub[starts[k]]  # linked to the key's (last) start
                rows.append((str(e.id), k[0], c.ts * 1000, c.pid, c.tid, e.ts * 1000, e.pid, e.tid, 1, rank[k]))
                linked.add((k, e.pid, e.tid, e.ts))
        elif (i := traceio.whole_int(e.id)) is not None and i >= 0 and len(calls.get(i, ())) == 1:
            c = calls[i][0]
            lone.setdefault(k, []).append(len(rows))
            rows.append((str(e.id), k[0], c.ts * 1000, c.pid, c.tid, e.ts * 1000, e.pid, e.tid, 1, rank[k]))
            linked.add((k, e.pid, e.tid, e.ts))
    for k, at in lone.items():  # the one end of a plain launch call (no graph launch) without its start: a pair
        call = calls[traceio.whole_int(k[1])][0]
        if len(at) == 1 and "graphlaunch" not in str(call.name).lower():
            rows[at[0]] = (*rows[at[0]][:8], kineto.LOST_START, rows[at[0]][9])
    # by key (first appearance), then the ends of one key by time (stable: the pair before the others)
    rows.sort(key=lambda r: (r[-1], r[5]))
    return [r[:-1] for r in rows], backward_tid


@pytest.mark.parametrize("seed", range(6))
def test_load_flows_is_the_dict_pairing(seed):
    """Pairs by (lower-cased cat, id) with 5 and "5" distinct, later starts / ends overwrite earlier
    ones, order of each key's first appearance, backward tid of the first fwdbwd end; then the graph
    replays (ends without a start, at a kernel, whose id one launch call carries as its correlation id)."""
    rng = np.random.default_rng(seed)
    cats = ["ac2g", "AC2G", "fwdbwd", "FwdBwd", "async_gpu", "my_flow", "cpu_op", "cuda_runtime", "Runtime"]
    ids: list = [None, *range(8), *map(str, range(8)), 2 ** 70, "x"]
    # launch calls' args: correlation ids (also as text or a float), none, or none at all
    corrs = [b"", b'{"correlation": null}', b'{"cbid": 1}', b'{"correlation": "6"}', b'{"correlation": 7.0}',
             *(b'{"correlation": %d}' % i for i in range(-1, 40))]
    n = int(rng.integers(1, 400))
    names = ["cudaLaunchKernel", "hipLaunchKernel", "cudaGraphLaunch", "hipGraphLaunch", "hipMemsetAsync"]
    events = []
    for _ in range(n):
        ph = "sffsXX"[int(rng.integers(0, 6))]
        args = msgspec.Raw(corrs[int(rng.integers(0, len(corrs)))] if ph == "X" else b"")
        events.append(traceio.Event(ph=ph, cat=cats[int(rng.integers(0, len(cats)))],
                                    id=ids[int(rng.integers(0, len(ids)))], pid=int(rng.integers(0, 3)),
                                    tid=int(rng.integers(1, 50)), ts=int(rng.integers(0, 10 ** 6)), dur=0, args=args,
                                    name=names[int(rng.integers(0, len(names)))]))
    # copies of some flow ends (a merged or rewritten trace), anywhere after their original
    for i in [i for i, e in enumerate(events) if e.ph == "f" and rng.random() < 0.15]:
        events.insert(int(rng.integers(i + 1, len(events) + 1)), events[i])
    # kernels at flow ends, and some at an end's time on another lane (which is no kernel at that end)
    kernel_at = frozenset((e.pid + int(rng.random() < 0.2), e.tid, e.ts * 1000) for e in events
                          if e.ph == "f" and rng.random() < 0.7)
    flow_cat = "my_flow" if seed % 2 else None
    opts = build_options(gpu_flow_cat=flow_cat)[0] if flow_cat else build_options()[0]
    prof = Profile(path="t.json", kind="GPU", source="kineto")
    at = sorted(kernel_at)
    prof.kernels = frame("kernels", {"pid": [a[0] for a in at], "tid": [a[1] for a in at], "ts": [a[2] for a in at]})
    kineto._load_flows(prof, kineto._Events("t.json", events), opts)
    want = set(kineto.FLOW_CATS) | ({flow_cat} if flow_cat else set())
    rows, backward_tid = _flows_scalar(events, want, kernel_at)
    got = list(zip(*(prof.flows[c].tolist()
                     for c in ("id", "cat", "s_ts", "s_pid", "s_tid", "f_ts", "f_pid", "f_tid", "replay")),
                   strict=True))
    assert got == rows
    assert prof.backward_tid == backward_tid
    assert seed == 1 or sum(r[-1] for r in rows) > 0  # the mix makes replays (seed 1 draws none)
