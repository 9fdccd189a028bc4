"""The Kineto loader writes the Python frames' ts, dur and tid into the rows of one int64 block that their table
holds as it is (``model.block_frame``), and converts float times in place (``traceio._float_us_to_ns``): a 1 GB
trace's 4.1M frames held their columns twice at the load's peak (docs/performance.md, session 64).

Inputs: the real AlexNet H200 excerpt of tests/data/kineto (892 python_function events, README there), its figures
recomputed from the JSON with plain Python; float times beyond one span of the conversion, checked against the exact
decimal parser of the same texts."""

from __future__ import annotations

import gzip
import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from msprof_compare.loaders import kineto, load_profile, traceio
from msprof_compare.loaders.numparse import decimal_us_to_ns
from msprof_compare.model import block_frame, frame
from msprof_compare.options import build_options

ALEXNET = Path(__file__).resolve().parent / "data" / "kineto" / \
    "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
_OPS = build_options(enable_operator_compare=True)[0]


def _ns(us: float) -> int:
    """Microseconds as written (``json`` reads the shortest repr back) -> ns, rounded half to even."""
    return int((Decimal(repr(us)) * 1000).to_integral_value(ROUND_HALF_EVEN))


def test_python_frames_equal_the_json_and_the_table_holds_the_loaders_block(monkeypatch):
    blocks: list[np.ndarray] = []

    def probe(table, block, ints, others):
        blocks.append(block)
        return block_frame(table, block, ints, others)

    monkeypatch.setattr(kineto, "block_frame", probe)
    got = load_profile(str(ALEXNET), _OPS).python_functions
    events = [e for e in json.loads(gzip.open(ALEXNET).read())["traceEvents"]
              if e.get("cat") == "python_function" and e.get("ph") == "X"]
    assert len(events) == len(got) == 892
    assert got["name"].tolist() == [e["name"] for e in events]
    assert got["ts"].tolist() == [_ns(e["ts"]) for e in events]
    assert got["dur"].tolist() == [_ns(e["dur"]) for e in events]
    assert got["tid"].tolist() == [e["tid"] for e in events]
    assert list(got.columns) == ["name", "ts", "dur", "tid"] and got["name"].dtype == object
    (block,) = blocks  # no copy: each int column is a row of the block the loader filled
    for i, col in enumerate(("ts", "dur", "tid")):
        assert np.shares_memory(got[col].to_numpy(), block[i])


def test_block_frame_equals_frame_and_refuses_other_columns():
    block = np.arange(12, dtype=np.int64).reshape(3, 4)
    names = np.array(["a", "b", "a", ""], dtype=object)
    got = block_frame("python_functions", block, ("ts", "dur", "tid"), {"name": names})
    pd.testing.assert_frame_equal(got, frame("python_functions", {"name": names, "ts": block[0], "dur": block[1],
                                                                  "tid": block[2]}))
    assert got["dur"].tolist() == [4, 5, 6, 7]
    with pytest.raises(ValueError, match="not those of the python_functions table"):
        block_frame("python_functions", block, ("dur", "ts", "tid"), {"name": names})  # not in schema order
    with pytest.raises(ValueError, match="not those of the python_functions table"):
        block_frame("python_functions", block[:2], ("ts", "dur"), {"name": names})  # a column missing
    with pytest.raises(ValueError, match="not those of the python_functions table"):  # the text column as int64
        block_frame("python_functions", np.arange(16, dtype=np.int64).reshape(4, 4), ("name", "ts", "dur", "tid"), {})
    with pytest.raises(ValueError, match="not those of the python_functions table"):  # an int column as object
        block_frame("python_functions", block[:2], ("ts", "dur"), {"name": names, "tid": block[2].astype(object)})


@pytest.mark.parametrize("n", [traceio._SPAN - 1, 2 * traceio._SPAN + 3])
def test_float_times_converted_in_place_equal_the_exact_parse_of_their_text(n):
    """Whole-ns times and half-ns ties (which the float alone rounds wrong about once in a hundred) on both sides
    of a span's edge: the same ns as the decimal parser of the very texts."""
    rng = np.random.default_rng(n)
    whole = rng.integers(0, 4 * 10**15, n) // 1000  # us with 3 decimals, below 2**42 us
    texts = [f"{w / 1000:.3f}" for w in whole.tolist()]
    for i in rng.choice(n, n // 50, replace=False).tolist():  # ties: a 4th decimal 5
        texts[i] += "5"
    us = np.array([float(t) for t in texts])
    got = traceio._float_us_to_ns(us)
    assert got.dtype == np.int64 and got.flags.writeable
    assert np.array_equal(got, decimal_us_to_ns(texts))
    assert np.array_equal(us, np.array([float(t) for t in texts]))  # its input left as it was
