"""A ``record_function`` opened around the profiled loop: every ``ProfilerStep#N`` marker is then a child of that
op, not a top-level op. The wrapper is a container, not an operator (``OpTree.top_layer``): with a step, the step's
ops are compared (the original finds none, "There is no operator infomation for step 50", and its ApiCompare stops
the run); without one, the ops inside the wrapper (the original compares the wrapper as one operator holding the
whole loop, matching nothing on a side without it).

Inputs made at test time, each a copy with one event added and none touched: the text exports of reference pair 1
(shared samples, msinsight level1 / level2 rank 0), the DB excerpts of tests/data/db (the same runs' DB exports,
README there) and the AlexNet H200 Kineto trace of tests/data/kineto (README there). The expected sheets are those
of the unwrapped inputs (pair 1's are pinned against the original's workbook by the reference tests), and the
wrapper's own ApiCompare row is computed from its event.
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from stepcopy import with_step_event

from msprof_compare.api import compare

TEXT = "msinsight/test/data/pytorch/text"
DATA = Path(__file__).parent / "data"
DB = DATA / "db"
ALEXNET = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def wrap_text_step(src: Path, dest: Path) -> Path:
    """A copy of the text export ``src`` at ``dest`` whose ``ProfilerStep#50`` runs inside a cpu_op "train_loop"
    (1 us longer at each end), as a record_function opened around the profiled loop writes it: the step marker is
    no longer a top-level op."""
    return with_step_event(src, dest, "train_loop", -1, 2, args={})


@pytest.fixture(scope="module")
def pair1(tmp_path_factory) -> tuple[tuple[str, str], tuple[str, str], dict[str, float]]:
    """(the unwrapped pair, the wrapped pair, each side's step duration in us as the JSON writes it)."""
    from conftest import SAMPLES

    text = SAMPLES / TEXT
    if not text.is_dir():
        pytest.skip(f"sample data not found at {text}")
    tmp = tmp_path_factory.mktemp("wrapped")
    plain = (text / "level1/rank0_ascend_pt", text / "level2/rank0_ascend_pt")
    wrapped = tuple(wrap_text_step(p, tmp / side / "rank0_ascend_pt") for p, side in zip(plain, ("l1", "l2"),
                                                                                          strict=True))
    dur = {}
    for side, p in zip(("base", "comparison"), plain, strict=True):
        events = json.loads((p / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
        (step,) = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "ProfilerStep#50"]
        dur[side] = float(step["dur"])
    return tuple(map(str, plain)), tuple(map(str, wrapped)), dur  # type: ignore[return-value]


def _same_sheets(got, want, but: tuple[str, ...] = ()) -> None:
    assert got.sheet_names == want.sheet_names
    for name in got.sheet_names:
        if name not in but:
            assert got.sheet(name).equals(want.sheet(name)), name
    assert got.contributors.equals(want.contributors)
    a, b = got.module_contributors, want.module_contributors
    assert a is b is None if a is None or b is None else a.equals(b)


def _without_wrapper_row(api: pd.DataFrame, name: str) -> tuple[list, pd.DataFrame]:
    """(the wrapper's ApiCompare row, the other rows numbered as without it): the wrapper starts first, so it is
    Order Id 1 of a side that has it and moves every later row down one."""
    (i,) = api.index[api["api name"] == name]
    row = api.loc[i].tolist()
    rest = api.drop(index=i).reset_index(drop=True)
    if row[0] == 1:
        rest["Order Id"] = rest["Order Id"] - 1
    return row, rest


@pytest.mark.parametrize("modules", [True, False], ids=["module sheets", "operator sheets"])
def test_wrapped_pair1_with_a_step_is_the_unwrapped_pair(pair1, modules: bool) -> None:
    """Step 50 of pair 1 wrapped: every sheet (OperatorCompare or the module sheets, MemoryCompare, ApiCompare,
    KernelCompare, CommunicationCompare, OverallMetrics, the Summary) and the contributors are those of the
    unwrapped pair, where the run stopped with exit 1 (ApiCompare: "There is no operator event data for step
    50") and, without ApiCompare, had no operator row."""
    plain, wrapped, _ = pair1
    flags = {"base_step": 50, "comparison_step": 50, "disable_module": not modules}
    got, want = compare(*wrapped, **flags), compare(*plain, **flags)
    assert ("OperatorCompare" in got.sheet_names) is not modules and "ApiCompare" in got.sheet_names
    _same_sheets(got, want)
    assert got.contributors["Level"].tolist() == ["operator"]


def test_wrapped_pair1_without_a_step_compares_the_ops_inside(pair1) -> None:
    """Pair 1 wrapped, no step: the operators are the unwrapped pair's (the wrapper was the one operator, holding
    the whole loop's device time, 115.731 -> 109.695 ms, and the one contributor); ApiCompare
    lists every op but the step markers (reference-2 §7), so the wrapper is one more row, first in start order,
    its figures from its event: the step's duration + 2 us, one call, self time 2 us."""
    plain, wrapped, dur = pair1
    for flags in ({}, {"disable_module": True}):
        got, want = compare(*wrapped, **flags), compare(*plain, **flags)
        _same_sheets(got, want, but=("ApiCompare",))
        row, rest = _without_wrapper_row(got.sheet("ApiCompare"), "train_loop")
        assert rest.equals(want.sheet("ApiCompare"))
        base, comp = (round((dur[s] + 2) / 1000, 2) for s in ("base", "comparison"))
        assert (base, comp) == (155.99, 148.79)
        assert row[:10] == [1, "train_loop", base, 0.0, base, 1, comp, 0.0, comp, 1]
    assert got.contributors["Name"].tolist() == [
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"]
    # the ops inside hold what the wrapper's one row held (docs/differences.md: 115.731 -> 109.695 ms)
    stat = got.sheet("OperatorCompareStatistic")
    assert [round(stat[f"{s} Device Duration(ms)"].sum(), 3) for s in ("Base", "Comparison")] == [115.731, 109.695]


def test_wrapped_db_export_compares_the_ops_inside(tmp_path: Path) -> None:
    """The DB excerpts of pair 3 with a PYTORCH_API op "train_loop" around ProfilerStep#50 (1 us longer at each
    end, its thread): without a step the operators are those of the excerpts as they are (the wrapper was the one
    operator, and the one contributor); ApiCompare has the wrapper's row besides, 0.002 ms longer than the
    STEP_TIME range. With step 50 the loader keeps the ops that start in the step, which leaves the wrapper out:
    the sheets were the plain ones already, and stay so."""
    plain, wrapped, span = [], [], {}
    for side, level in (("base", "l1"), ("comparison", "l2")):
        src = DB / level / "ascend_pytorch_profiler_0.db"
        dest = tmp_path / level / src.name
        dest.parent.mkdir()
        shutil.copy(src, dest)
        with sqlite3.connect(dest) as db:
            (sid,) = db.execute("SELECT max(id) + 1 FROM STRING_IDS").fetchone()
            db.execute("INSERT INTO STRING_IDS (id, value) VALUES (?, 'train_loop')", (sid,))
            start, end, tid, kind = db.execute(
                "SELECT p.startNs, p.endNs, p.globalTid, p.type FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name"
                " WHERE s.value = 'ProfilerStep#50'").fetchone()
            db.execute("INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type) VALUES (?, ?, ?, ?, ?)",
                       (str(int(start) - 1000), str(int(end) + 1000), tid, sid, kind))
            (lo, hi), = db.execute("SELECT startNs, endNs FROM STEP_TIME WHERE id = 50").fetchall()
        db.close()
        span[side] = round((hi - lo + 2000) / 1e6, 2)
        plain.append(str(src))
        wrapped.append(str(dest))
    for flags in ({}, {"disable_module": True}):
        got, want = compare(*wrapped, **flags), compare(*plain, **flags)
        _same_sheets(got, want, but=("ApiCompare",))
        row, rest = _without_wrapper_row(got.sheet("ApiCompare"), "train_loop")
        assert rest.equals(want.sheet("ApiCompare"))
        assert row[:10] == [1, "train_loop", span["base"], 0.0, span["base"], 1, span["comparison"], 0.0,
                            span["comparison"], 1]
    step = {"base_step": 50, "comparison_step": 50}
    _same_sheets(compare(*wrapped, **step), compare(*plain, **step))


def test_wrapped_kineto_trace_compares_the_ops_inside(tmp_path: Path) -> None:
    """The AlexNet H200 trace with a user_annotation "train_loop" around its ProfilerStep#50 (as record_function
    writes it on the host, 1 us longer at each end) against the trace as it is: every sheet but ApiCompare is the
    trace's against itself (the wrapper was one operator holding 3.930 ms of device time against none, every
    other operator gone, and the one contributor); ApiCompare has the wrapper's row, on the comparison side
    alone, after the base's rows: 11925.797 + 2 us, one call, self time 2 us."""
    top = json.loads(gzip.decompress(ALEXNET.read_bytes()))
    (step,) = [e for e in top["traceEvents"] if e.get("cat") == "user_annotation" and e["name"] == "ProfilerStep#50"]
    assert step["dur"] == 11925.797
    wrapper = copy.deepcopy(step)
    wrapper.update(name="train_loop", ts=step["ts"] - 1, dur=step["dur"] + 2, args={})
    top["traceEvents"].append(wrapper)
    path = tmp_path / "wrapped.pt.trace.json"
    path.write_text(json.dumps(top), encoding="utf-8")
    got, want = compare(str(ALEXNET), str(path)), compare(str(ALEXNET), str(ALEXNET))
    _same_sheets(got, want, but=("ApiCompare",))
    api = got.sheet("ApiCompare")
    row, rest = _without_wrapper_row(api, "train_loop")
    assert rest.equals(want.sheet("ApiCompare"))
    assert row[:10] == [len(api), "train_loop", 0.0, 0.0, 0.0, 0, 11.93, 0.0, 11.93, 1]
