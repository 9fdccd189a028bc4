"""The Kineto loader reads the fields it needs from each batch of op args as it is decoded
(``traceio.decode_args``'s ``each``), keeping no batch's structs, whose ``msgspec.Raw`` fields hold the batch's whole
args text (a 1 GB trace's 400k ops: ~165 MiB alive at once, much of it left as free heap; docs/performance.md,
session 64). Many small batches must give the one-batch table.

Inputs: the real AlexNet H200 excerpt (484 cpu_op, 348 cuda_runtime events; record_shapes on) and the MI300 RCCL
excerpt (``record_param_comms`` ops naming collectives) of tests/data/kineto (README there); Input Dims / Input type
recomputed from the AlexNet JSON with plain Python."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd
import pytest

from msprof_compare.loaders import kineto, load_profile, traceio
from msprof_compare.model import LAUNCH_CATS
from msprof_compare.options import ENABLE_FLAGS, build_options

DATA = Path(__file__).resolve().parent / "data" / "kineto"
ALEXNET = DATA / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
RCCL = DATA / "mi300_rccl_generic_excerpt.pt.trace.json"
_ALL = build_options(**dict.fromkeys(ENABLE_FLAGS, True))[0]


def _load(path: Path, monkeypatch: pytest.MonkeyPatch, batch: int | None) -> tuple[pd.DataFrame, list[int]]:
    sizes: list[int] = []
    real = traceio._decode_batch
    with monkeypatch.context() as m:
        if batch is not None:
            m.setattr(traceio, "ARGS_BATCH_BYTES", batch)
        m.setattr(traceio, "_decode_batch", lambda *a: sizes.append(len(a[1])) or real(*a))
        return load_profile(str(path), _ALL).ops, sizes


@pytest.mark.parametrize("path", [ALEXNET, RCCL], ids=["alexnet", "rccl"])
def test_op_args_read_in_many_batches_give_the_one_batch_table(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, one_sizes = _load(path, monkeypatch, None)
    many, sizes = _load(path, monkeypatch, 256)
    assert len(sizes) > len(one_sizes) + 10  # the op args went in many batches
    pd.testing.assert_frame_equal(many, one)
    if path == RCCL:  # the collective names of record_param_comms, read from the batches too
        assert (one["collective"] != "").sum() > 0


def test_op_input_dims_and_types_equal_the_json() -> None:
    """Input Dims / Input type of every host op as str() of the JSON value ("N/A" where absent), in file order."""
    with gzip.open(ALEXNET, "rt") as f:
        events = json.load(f)["traceEvents"]
    cats = {"cpu_op", "user_annotation", "operator", "runtime"} | LAUNCH_CATS
    ops = [e for e in events if str(e.get("cat", "")).lower() in cats and e.get("ph") == "X"]
    got = load_profile(str(ALEXNET), _ALL).ops
    assert len(got) == len(ops) > 800

    def text(e: dict, key: str) -> str:
        v = e.get("args", {}).get(key)
        return "N/A" if v is None else v if isinstance(v, str) else str(v)

    assert got["input_dims"].tolist() == [text(e, "Input Dims") for e in ops]
    assert got["input_type"].tolist() == [text(e, "Input type") for e in ops]
    assert sum(d != "N/A" for d in got["input_dims"]) > 400


def test_decode_args_each_gets_every_batch_in_order_and_keeps_none(monkeypatch: pytest.MonkeyPatch) -> None:
    class A(msgspec.Struct):
        x: int = -1

    raws = np.fromiter((msgspec.Raw(b'{"x": %d}' % i) for i in range(300)), dtype=object, count=300)
    for batch in (1 << 20, 64):
        monkeypatch.setattr(traceio, "ARGS_BATCH_BYTES", batch)
        got: list[list[int]] = []
        assert traceio.decode_args("t.json", raws, A, lambda b, got=got: got.append([a.x for a in b])) == []
        assert [x for b in got for x in b] == list(range(300))
        assert (len(got) == 1) == (batch == 1 << 20)


def test_raw_texts_fed_in_batches_equal_one_feed() -> None:
    raws = [msgspec.Raw(t) for t in (b"[[1, 2], []]", b"", b'"x"', b"[[1, 2], []]", b"null", b'"x"', b"")]
    one = kineto._RawTexts()
    one.add(raws)
    whole = one.values("t.json")
    texts = kineto._RawTexts()
    for a, b in ((0, 2), (2, 3), (3, 7)):
        texts.add(raws[a:b])
    assert texts.values("t.json").tolist() == whole.tolist() == ["[[1, 2], []]", "N/A", "x", "[[1, 2], []]", "N/A",
                                                                  "x", "N/A"]
