"""Summary rules the other Summary tests left open (a mutation audit of compare/summary.py and
report/summary_console.py): the order and count of the contributors, the gate's step and contributor lines,
the validity guards' verdicts and figures on real pairs, and the boundaries of the thresholds.

Expected figures come from the raw files (json / sqlite walks), from the original tool's reference outputs
(literals, with where they come from), or from a few lines of plain pandas over the result frames that do not
call the function under test.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dbutil import edited_copy, sql, string_id

from msprof_compare.api import compare
from msprof_compare.compare import (
    checks,
    communication_summary,
    contributors,
    module_contributors,
    summary_notes,
    table,
    waterfall,
)
from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.compare.gate import judge
from msprof_compare.loaders import load_profile
from msprof_compare.model import object_array
from msprof_compare.options import Options
from msprof_compare.report.summary_console import render_contributors

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
DB_L1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
DB_L2 = DATA / "db" / "l2" / "ascend_pytorch_profiler_0.db"
BERT_H100 = REPO / "sample_data" / "bert-small_h100.json.gz"
BERT_MI300 = REPO / "sample_data" / "bert-small_mi300.json.gz"
ALEXNET_H200 = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
NPU_EXCERPT = DATA / "npu" / "rank0_ascend_pt"
MS_EXCERPT = DATA / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
NPU_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
HTA_BASE = "hta/tests/data/trace_compare/base/base.json.gz"
HTA_TEST = "hta/tests/data/trace_compare/test/test.json.gz"
HTA_TRITON = "hta/tests/data/triton_example/triton_example.json.gz"
NO_RANK = 4294967295  # HCCL's "no peer" rank id


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as fh:
        data = json.load(fh)
    return data["traceEvents"] if isinstance(data, dict) else data


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("|")[1:-1]]


# --------------------------------------------------------------------------- contributors


def test_tied_contributors_keep_the_kernel_sheet_order():
    """Two kernels of the l1 -> l2 DB excerpts changed by the same 1.18 us (KernelCompare cells: Relu
    "32,256,13,13" 15.58 -> 14.40 us, DropOutDoMask "32,4096;16384;1" 19.94 -> 18.76 us). Tied contributors
    are listed in the sheet's order, as a stable sort keeps them: numpy's default sort swapped these two on an
    AVX-512 host, so one input could give two tables."""
    r = compare(str(DB_L1), str(DB_L2), enable_kernel_compare=True)
    k = r.sheet("KernelCompare")
    rows = {(str(t), str(s)): i for i, (t, s) in enumerate(zip(k.iloc[:, 1], k.iloc[:, 2], strict=True))}
    relu, mask = rows[("Relu", '"32,256,13,13"')], rows[("DropOutDoMask", '"32,4096;16384;1"')]
    assert [float(k.iloc[relu, 3]), float(k.iloc[relu, 8])] == [15.58, 14.40]
    assert [float(k.iloc[mask, 3]), float(k.iloc[mask, 8])] == [19.94, 18.76]
    assert relu < mask  # the sheet's order
    names = r.contributors["Name"].tolist()
    i = names.index('Relu "32,256,13,13"')
    assert names[i + 1] == 'DropOutDoMask "32,4096;16384;1"'


def test_console_category_contributors_count_rows_and_accumulate_shares(tmp_path):
    """bert-small MI300X -> H100 with the time breakdown only: the contributors are the waterfall steps, and
    two of them reach 80 % of the steps' summed |change|. The title says "2 rows cover" (plural from 2 on) and
    the Cumulative Share column runs on from row to row (it is not the row's Share). Expected from the
    waterfall's step deltas with plain pandas."""
    r = compare(str(BERT_MI300), str(BERT_H100), enable_profiling_compare=True)
    wf = r.waterfall
    d = wf[~wf["Category"].isin(["start", "end"])].set_index("Step")["Delta(ns)"].astype("int64")
    order = d.abs().sort_values(ascending=False, kind="stable")
    shares = order / order.sum()
    cum = shares.cumsum()
    assert list(order.index[:2]) == ["Free: Other", "Flash Attention (Forward)"]
    assert cum.iloc[0] < 0.8 <= cum.iloc[1]  # two rows reach 80 %
    want = [f"{round(float(x), 3) + 0.0:.1%}" for x in (shares.iloc[0], shares.iloc[1], cum.iloc[1])]
    assert want == ["79.4%", "12.3%", "91.6%"]
    text = render_contributors(r.contributors)
    assert "(category level: 2 rows cover 91.6% of the waterfall steps' change, not of the E2E change)" in text
    rows = [_cells(line) for line in text.splitlines() if line.startswith("|") and _cells(line)[0] in ("1", "2")]
    assert [(c[1], c[5], c[6]) for c in rows] == [("Free: Other", want[0], want[0]),
                                                   ("Flash Attention (Forward)", want[1], want[2])]
    # the steps moved both ways (their summed |change| is not the E2E change), so the Summary sheet says the
    # shares are not of the E2E change
    assert round(abs(int(d.sum())) - int(d.abs().sum())) != 0
    book = r.to_excel(str(tmp_path))
    assert "Top Contributors (category level: 2 rows cover 91.6% of the waterfall steps' change, not of the E2E " \
        "change)" in pd.read_excel(book, sheet_name="Summary", header=None)[0].tolist()


def test_contributors_stop_where_the_shares_reach_exactly_80_percent():
    """Diffs of +1.2, -0.2 and +0.1 ms: the first row alone is 80 % of the 1.5 ms summed |change| (1.2 / 1.5),
    although the float quotient is 0.7999999999999999, so the list stops after it. No sample's changes reach
    80 % exactly (checked over the kernel sheets of every pair of NPU samples), so the rows are hand-made."""
    assert 1.2 / 1.5 < 0.8  # what the code meets
    rows = pd.DataFrame({"Name": ["a", "b", "c"], "Base(ms)": [0.0, 0.2, 0.0], "Comparison(ms)": [1.2, 0.0, 0.1]})
    top = contributors.top_contributors(rows, "kernel")
    assert top["Name"].tolist() == ["a"]
    assert contributors.coverage_text(top) == "1 row covers 80.0%"


def test_console_title_share_and_a_name_of_seventy_characters():
    """The title's share is rounded as the last row's cell is (0.8995 shows 89.9 % there; formatting the
    float alone gives 90.0 %), and a name of exactly 70 characters is shown whole (only longer ones are cut
    to 67 + '...'). Hand-made rows: no sample has such a share or name among its contributors."""
    name = "aten::" + "x" * 64
    assert len(name) == 70
    rows = pd.DataFrame({"Name": [name, "b"], "Base(ms)": [0.0, 0.0], "Comparison(ms)": [0.8995, 0.1005]})
    top = contributors.top_contributors(rows, "operator")
    assert top["Name"].tolist() == [name] and float(top["Cumulative Share"].iloc[0]) == pytest.approx(0.8995)
    assert contributors.coverage_text(top) == "1 row covers 89.9%"
    text = render_contributors(top)
    assert "(operator level: 1 row covers 89.9% of the operators' device-time change, not of the E2E change)" in text
    row = next(_cells(line) for line in text.splitlines() if line.startswith("|") and _cells(line)[0] == "1")
    assert row[1] == name and row[5:] == ["89.9%", "89.9%"]


# --------------------------------------------------------------------------- the gate


def test_gate_names_the_three_largest_steps_and_counts_the_grown_contributors():
    """DB excerpts l2 -> l1 (the reverse of reference pair 3) with the operator comparison: the gate lists the
    three largest steps by size, with their signs, and "Top 4 contributors" for the four listed operators that
    grew. The steps' figures from the original's OverallMetrics of pair 3 (l1 / l2, ms): Uncovered Communication
    Time 98.071947 / 90.080699 (+7.991), Free Time 30.943917 / 30.225247 (+0.719), Vector 4.13018 / 4.145077
    (-0.015); the largest growth after those, Conv (Backward) 1.970891 / 1.957882 (+0.013), is the fourth."""
    r = compare(str(DB_L2), str(DB_L1), enable_profiling_compare=True, enable_operator_compare=True)
    code, message = r.regression_gate(5)
    lines = message.splitlines()
    # the original's E2E Time cells of pair 3: 129.206402 (l2) -> 137.919295 ms (l1), +8.713 ms
    assert code == 3 and lines[0].startswith("Performance regression: E2E time 129.206 ms -> 137.919 ms (+8.713 ms, "
                                             "+6.74%)")
    assert ("Largest waterfall steps: Group 90.91.105.46%enp189s0f0_60000_0 Communication (uncovered) +7.991 ms, "
            "Free: Other +0.719 ms, Vector -0.015 ms") in lines
    grown = r.contributors[r.contributors["Diff(ms)"].astype(float) > 0]
    assert len(grown) == 4
    i = lines.index("Top 4 contributors (operator level):")
    assert [line.split(": +")[0].strip() for line in lines[i + 1:i + 5]] == grown["Name"].tolist()
    # two of the four shown: in the plural, as two (the singular is for one alone)
    lines = judge(r, 5.0, top=2).message.splitlines()
    i = lines.index("Top 2 contributors (operator level):")
    assert [line.split(": +")[0].strip() for line in lines[i + 1:i + 3]] == grown["Name"].tolist()[:2]


def test_export_aside_needs_time_outside_the_db_sides_computing_and_communication() -> None:
    """``verdict.export_aside`` on the E2E figures of the level-1 text -> DB pair (136581009 / 137919295 ns, the DB
    side's 5685773 ns outside its computing and communication, from ``compare``): said with that time; a DB side
    with none outside says nothing (not "holds 0.000 ms"), and nor does a pair of one export kind."""
    from types import SimpleNamespace

    from msprof_compare.compare import verdict

    def e2e(outside: int, after: int = 0, copies_ns: int = 830_617, copies: int = 2) -> pd.DataFrame:
        return pd.DataFrame({"base_ns": [136_581_009], "comparison_ns": [137_919_295], "base_outside_busy_ns": [0],
                             "comparison_outside_busy_ns": [outside], "base_outside_after_ns": [0],
                             "comparison_outside_after_ns": [after], "base_outside_copies_ns": [0],
                             "comparison_outside_copies_ns": [copies_ns], "base_outside_copies": [0],
                             "comparison_outside_copies": [copies]})

    ctx = SimpleNamespace(base=SimpleNamespace(source="ascend_text"), comparison=SimpleNamespace(source="ascend_db"))
    # the level-1 sample's: two MEMCPY_ASYNC (0.831 ms by SQL, test_export_switch._db_held), the rest no task
    assert verdict.export_aside(ctx, e2e(5_685_773)) == (
        "the comparison side's E2E, a DB export's, holds 5.686 ms before its first computing or communication (2 "
        "copies, 0.831 ms, and 4.855 ms of idle time), which a text export's leaves out")
    # where it lies, and what it holds, each way: after, on both ends, one copy, no copy, copies alone, not read
    said = {(5_685_773, 5_685_773, 830_617, 1): "after its last computing or communication (1 copy, 0.831 ms, and "
                                                 "4.855 ms of idle time)",
            (5_685_773, 1_000_000, 0, 0): "before its first and after its last computing or communication (idle time)",
            (5_685_773, 0, 5_685_773, 3): "before its first computing or communication (3 copies, 5.686 ms)",
            (5_685_773, 0, 0, -1): "before its first computing or communication, which"}
    for args, words in said.items():
        assert f"holds 5.686 ms {words}" in verdict.export_aside(ctx, e2e(*args)), args
    assert verdict.export_aside(ctx, e2e(0)) == ""
    same = SimpleNamespace(base=SimpleNamespace(source="ascend_db"), comparison=SimpleNamespace(source="ascend_db"))
    assert verdict.export_aside(same, e2e(5_685_773)) == ""


def test_communication_inside_the_first_op_of_the_tree_is_counted() -> None:
    """``summary._communication_ns`` over the top-layer nodes an operator pairing gives (-1: unmatched): node 0, the
    MI300 excerpt's ProfilerStep#15 (its first op), holds the RCCL kernels launched inside it. By hand from the raw
    JSON: the three ncclDevKernel_Generic kernels whose hipExtLaunchKernel lies in the step's span, 14.319 + 6.279 +
    6911.678 us (the fourth, 8530.789 us, has no launch in the excerpt)."""
    from decimal import Decimal

    from msprof_compare.compare.optree import build_tree
    from msprof_compare.compare.summary import _communication_ns

    path = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
    events = json.loads(path.read_text())["traceEvents"]
    (step,) = [e for e in events if e.get("name", "").startswith("ProfilerStep#")]
    lo, hi = Decimal(str(step["ts"])), Decimal(str(step["ts"])) + Decimal(str(step["dur"]))
    launch = {e["args"]["correlation"]: Decimal(str(e["ts"])) for e in events
              if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"}
    us = sum(Decimal(str(e["dur"])) for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
             and e["name"].startswith("ncclDevKernel") and lo <= launch.get(e["args"]["correlation"], lo - 1) <= hi)
    assert us == Decimal("6932.276")
    tree = build_tree(load_profile(str(path), Options()))
    assert tree.ops["name"].iloc[0] == step["name"]
    assert _communication_ns(tree, np.array([0, -1]), [step["name"]]) == {step["name"]: int(us * 1000)}


def test_gate_leaves_an_unchanged_step_out_of_the_largest_steps(samples):
    """HTA's trace_compare pair: base.json.gz is test.json.gz plus one 4 us kernel at the end (raw events), so
    test -> base grows Vector by 4 us and the E2E window by 145 us (274353 -> 274498 us), Free: Other by the
    other 141 us; the memcpy / memset events are the same, so "Free: SDMA" (19 us on both sides) did not
    change and is not named among the steps that grew."""
    def device(path):
        return {(e["cat"], e["name"], e["ts"], e["dur"]) for e in _events(path)
                if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}

    small, big = device(samples / HTA_TEST), device(samples / HTA_BASE)
    extra = big - small
    assert small < big and [(c, dur) for c, _, _, dur in extra] == [("kernel", 4)]
    spans = [max(ts + dur for _, _, ts, dur in s) - min(ts for _, _, ts, _ in s) for s in (small, big)]
    assert spans == [274_353, 274_498]
    r = compare(str(samples / HTA_TEST), str(samples / HTA_BASE), enable_profiling_compare=True)
    sdma = r.waterfall.set_index("Step").loc["Free: SDMA"]
    assert int(sdma["Base(ns)"]) == int(sdma["Comparison(ns)"]) > 0
    code, message = r.regression_gate(0)
    assert code == 3
    assert "Largest waterfall steps: Free: Other +0.141 ms, Vector +0.004 ms" in message.splitlines()


# --------------------------------------------------------------------------- guards


def _kineto_shapes(path: Path, name: str) -> set:
    return {tuple(tuple(d) for d in e["args"]["Input Dims"]) for e in _events(path)
            if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e.get("name") == name}


def _npu_shapes(path: Path, name: str) -> set:
    events = json.loads((path / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    return {tuple(tuple(int(x) for x in part.split(",")) if part else () for part in
                  e["args"]["Input Dims"].split(";\r\n"))
            for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e.get("name") == name}


def test_shape_guard_accepts_operators_that_share_some_input_shapes(samples):
    """The H200 AlexNet run against the NPU run of the same script: aten::copy_ (one of the heaviest
    operators) has 18 input-shape lists on the GPU and 17 on the NPU, 16 of them common (the rest differ by
    device-side bookkeeping tensors); sharing shapes is the same workload, so the check is "ok", not a
    warning that needs identical sets."""
    gpu, npu = _kineto_shapes(ALEXNET_H200, "aten::copy_"), _npu_shapes(samples / NPU_L1, "aten::copy_")
    assert (len(gpu), len(npu), len(gpu & npu)) == (18, 17, 16)
    g = compare(str(ALEXNET_H200), str(samples / NPU_L1), enable_operator_compare=True).guards.set_index("Check")
    row = g.loc["input shapes of top operators"]
    assert row["Status"] == "ok" and row["Detail"].endswith("heaviest operators found on both sides")


def _step_names(path: Path) -> set[str]:
    return {e["name"] for e in _events(path) if str(e.get("name", "")).startswith("ProfilerStep#")}


def test_step_count_warns_when_the_base_has_fewer_steps(samples):
    """HTA's triton example holds one ProfilerStep, its trace_compare test trace two (raw events): the check
    warns whichever side has fewer."""
    one, two = samples / HTA_TRITON, samples / HTA_TEST
    assert (len(_step_names(one)), len(_step_names(two))) == (1, 2)
    for base, comparison, want in ((one, two, ["warn", 1, 2]), (two, one, ["warn", 2, 1])):
        g = compare(str(base), str(comparison), enable_operator_compare=True).guards.set_index("Check")
        assert g.loc["step count", ["Status", "Base", "Comparison"]].tolist() == want


def test_export_kind_note_needs_torch_ops_on_both_sides():
    """The "NPU export kind" row is about the operator and module sheets, which need torch ops on both sides:
    the torch_npu text excerpt against its MindSpore-layout copy (no cpu_op event, tests/data/npu/README.md)
    has no such row; the excerpt against itself has one ("ok")."""
    def cpu_ops(path):
        tv = next(path.rglob("trace_view.json"))
        return sum(1 for e in json.loads(tv.read_text()) if e.get("cat") == "cpu_op")

    assert cpu_ops(NPU_EXCERPT) > 0 and cpu_ops(MS_EXCERPT) == 0
    g = compare(str(NPU_EXCERPT), str(MS_EXCERPT), enable_operator_compare=True).guards
    assert checks.EXPORT_CHECK not in g["Check"].tolist()
    g = compare(str(NPU_EXCERPT), str(NPU_EXCERPT), enable_operator_compare=True).guards.set_index("Check")
    assert g.loc[checks.EXPORT_CHECK, ["Status", "Base", "Comparison"]].tolist() == ["ok", "text", "text"]


def test_db_step_zero_is_the_scope_of_the_breakdown(tmp_path):
    """A DB export limits its time breakdown to the step asked for, step 0 included (a run profiled from its
    first iteration): the check shows "step 0", not "whole profile". No sample numbers a step 0: the l1 DB
    excerpt with its step renamed 0 (STEP_TIME id and the ProfilerStep#50 marker)."""
    db = edited_copy(DB_L1, tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE STEP_TIME SET id = 0",
                     "UPDATE STRING_IDS SET value = 'ProfilerStep#0' WHERE value = 'ProfilerStep#50'")
    assert sql(db, "SELECT id FROM STEP_TIME") == [(0,)]
    g = compare(str(db), str(db), base_step="0", comparison_step="0",
                enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc[checks.STEP_CHECK, ["Status", "Base", "Comparison"]].tolist() == ["ok", "step 0", "step 0"]


def test_text_step_zero_is_the_whole_profile(samples, tmp_path):
    """A text export's time breakdown ignores the step, step 0 included: against the DB excerpt on its step 0 (as
    above) the check reads "whole profile" for the text side, "step 0" for the DB side. The level-1 text sample
    with its ProfilerStep#50 marker renamed ProfilerStep#0 (no sample numbers a step 0)."""
    text = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_L1, text)
    trace = text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.chmod(0o644)
    raw = trace.read_text()
    assert raw.count('"ProfilerStep#50"') == 1
    trace.write_text(raw.replace('"ProfilerStep#50"', '"ProfilerStep#0"'))
    db = edited_copy(DB_L1, tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE STEP_TIME SET id = 0",
                     "UPDATE STRING_IDS SET value = 'ProfilerStep#0' WHERE value = 'ProfilerStep#50'")
    g = compare(str(text), str(db), base_step="0", comparison_step="0",
                enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc[checks.STEP_CHECK, ["Status", "Base", "Comparison"]].tolist() == ["note", "whole profile", "step 0"]


def test_one_rank_of_communication_tasks_bounds_no_world_size(tmp_path):
    """Without a world size in the metadata, the ranks the HCCL tasks name bound it from below only from 2 on:
    tasks of a rank with itself (rank 0 alone) say nothing, so the figure stays unknown (n/a), not "at least
    1". No sample is a one-rank NPU run: the l1 DB excerpt (ranks 0-7) with every rank id set to 0."""
    assert sql(DB_L1, f"SELECT max(srcRank), max(dstRank) FROM COMMUNICATION_TASK_INFO WHERE dstRank < {NO_RANK}") \
        == [(0, 7)]
    db = edited_copy(DB_L1, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE COMMUNICATION_TASK_INFO SET dstRank = 0 WHERE dstRank < {NO_RANK}",
                     f"UPDATE COMMUNICATION_TASK_INFO SET srcRank = 0 WHERE srcRank < {NO_RANK}")
    g = compare(str(ALEXNET_H200), str(db), enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc["world size", ["Status", "Base", "Comparison"]].tolist() == ["unknown", 1, None]
    g = compare(str(ALEXNET_H200), str(DB_L1), enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc["world size", ["Status", "Base", "Comparison"]].tolist() == ["warn", 1, "at least 8"]


# --------------------------------------------------------------------------- waterfall thresholds


def test_residuals_of_one_microsecond_are_steps_of_their_own():
    """Residuals under 1 us are rounding and fold into the largest category / group; one of exactly 1 us is
    time and stays a step. The l1 / l2 DB excerpts' breakdowns (all computing in categories, all uncovered
    communication in their one group) with 1000 ns added to the base's computing and uncovered communication:
    no sample has a residual of exactly 1 us."""
    opts = Options(enable_profiling_compare=True)
    b, c = (db_breakdown(load_profile(str(p), opts), opts) for p in (DB_L1, DB_L2))
    before = waterfall.waterfall(b, c).set_index("Step")
    assert "Other Computing" not in before.index and "Other Communication (uncovered)" not in before.index
    b.computing_ns += 1000
    b.uncovered_comm_ns += 1000
    b.e2e_ns += 2000
    wf = waterfall.waterfall(b, c).set_index("Step")
    assert wf.loc["Other Computing", ["Base(ns)", "Comparison(ns)"]].tolist() == [1000, 0]
    assert wf.loc["Other Communication (uncovered)", ["Base(ns)", "Comparison(ns)"]].tolist() == [1000, 0]
    assert wf.loc["Vector", "Base(ns)"] == before.loc["Vector", "Base(ns)"]  # the largest category is as it was


def test_communication_steps_follow_the_base_groups_then_the_comparison_only_ones():
    """The waterfall lists the communication groups as OverallMetrics does: the base's groups in the base's
    order, then the groups only the comparison has, whatever order the comparison met them in. The l1 / l2 DB
    excerpts' breakdowns (one HCCL group each, paired by name) with a second, comparison-only group of 5 us
    met first on the comparison side: no sample has two groups on a side."""
    opts = Options(enable_profiling_compare=True)
    b, c = (db_breakdown(load_profile(str(p), opts), opts) for p in (DB_L1, DB_L2))
    c.groups = {"Group 9 Communication": {"wait": 0, "transmit": 5_000}, **c.groups}
    c.uncovered_comm_ns += 5_000
    c.e2e_ns += 5_000
    wf = waterfall.waterfall(b, c)
    comm = wf.loc[wf["Category"] == "communication", "Step"].tolist()
    assert comm == ["Group 90.91.105.46%enp189s0f0_60000_0 Communication (uncovered)",
                    "Group 9 Communication (uncovered)"]


def test_note_thresholds_hold_at_exactly_their_share():
    """"kernels launched before the profile" is a note from 10 % of E2E and the idle-stretch note adds "and so
    does the E2E difference" where the stretches differ by half of it or more: both at exactly the threshold.
    bert-small H100 / MI300X breakdowns, edited to the boundary (no sample sits on it): E2E times cut to
    3907820 / 3495970 ns (a change of 411850 ns), an early stretch of 390782 ns on the base (10.0 %), and
    longest idle stretches of 2500000 / 2294075 ns, 205925 ns apart: half of the E2E change."""
    from msprof_compare.compare.breakdown import Stretch
    from msprof_compare.compare.breakdown_gpu import gpu_breakdown

    opts = Options(enable_profiling_compare=True)
    b, c = (gpu_breakdown(load_profile(str(p), opts), opts) for p in (BERT_H100, BERT_MI300))
    assert (b.e2e_ns, c.e2e_ns, b.has_launches, c.has_launches) == (3_907_825, 3_495_976, True, True)
    b.e2e_ns, c.e2e_ns = 3_907_820, 3_495_970
    b.early_ns, c.early_ns = 390_782, 0
    early, told = checks._early_row((b, c))
    assert (early["Status"], early["Base"], early["Comparison"]) == ("note", 0.1, 0.0)
    assert told == []  # no operator sheets: no unlinked kernel to state
    b.longest_idle = Stretch(b.longest_idle.start_ns, 2_500_000, 0)
    c.longest_idle = Stretch(c.longest_idle.start_ns, 2_294_075, 0)
    idle = checks._idle_row((b, c))
    assert idle["Status"] == "note"
    assert "both sides' E2E and Free Time mostly measure that stretch, and so does the E2E difference" in idle["Detail"]


# --------------------------------------------------------------------------- edge rules (session 29 audit)
# Cases no sample has, made by editing copies of real exports in tmp_path (each docstring names the edit).

NPU_L0 = "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"


def _npu_excerpt_copy(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name / "rank0_ascend_pt"
    shutil.copytree(NPU_EXCERPT, d)
    return d


def test_sub_microsecond_computing_of_a_side_without_categories_is_other_computing(samples):
    """The computing residual is folded into a side's largest category only where the side has one: a side whose
    computing has no category (Level0) keeps even a sub-us total as "Other Computing", since it is that side's
    whole computing, not rounding (folding it made a 0.6 us "Flash Attention (Forward)" step, the first of the
    all-zero categories). The NPU excerpt (its 1 ns residual goes to Matmul) against the Level0 text sample's
    breakdown (no category) with its computing cut to 600 ns: no sample has a sub-us computing time."""
    from msprof_compare.compare.breakdown_npu import npu_breakdown

    opts = Options(enable_profiling_compare=True)
    b = npu_breakdown(load_profile(str(NPU_EXCERPT), opts), opts)
    c = npu_breakdown(load_profile(str(samples / NPU_L0), opts), opts)
    assert c.categorised_ns == 0
    c.computing_ns = 600
    # beside a split side, computing is one step (``waterfall.unsplit``): nothing to fold
    steps = waterfall.waterfall(b, c).set_index("Step")
    assert steps.loc["Computing", ["Base(ns)", "Comparison(ns)"]].tolist() == [b.computing_ns, 600]
    assert "Flash Attention (Forward)" not in steps.index and "Other Computing" not in steps.index
    # beside another side without categories (both Level0): the sub-us total is that side's Other Computing
    b = npu_breakdown(load_profile(str(samples / NPU_L0), opts), opts)
    steps = waterfall.waterfall(b, c).set_index("Step")
    assert steps.loc["Other Computing", ["Base(ns)", "Comparison(ns)"]].tolist() == [b.computing_ns, 600]
    assert "Flash Attention (Forward)" not in steps.index and "Computing" not in steps.index



def test_a_side_without_computing_keeps_the_category_steps(samples):
    """Computing is one waterfall step only where both sides have computing and one alone lies in no category
    (``waterfall.unsplit``): beside a side with no computing at all (the Level0 sample's breakdown with its computing
    cut to 0: it launched no kernel), the split side's categories are its own steps, the other side's 0 is its
    real computing, not a lack of data to split it by."""
    from msprof_compare.compare.breakdown_npu import npu_breakdown

    opts = Options(enable_profiling_compare=True)
    b = npu_breakdown(load_profile(str(NPU_EXCERPT), opts), opts)
    c = npu_breakdown(load_profile(str(samples / NPU_L0), opts), opts)
    c.computing_ns = 0
    assert b.categorised_ns > 0 and not waterfall.unsplit(b, c)
    steps = waterfall.waterfall(b, c).set_index("Step")
    assert "Computing" not in steps.index
    # the excerpt's Matmul: 402,768 ns of cube and 46,500 of vector kernels, and its 1 ns residual; Vector 132,181
    assert steps.loc[["Matmul", "Vector"], ["Base(ns)", "Comparison(ns)"]].values.tolist() == [[449_269, 0],
                                                                                             [132_181, 0]]


def _rename_kernels(d: Path, old: str, new: str) -> list[float]:
    """Rename kernel ``old`` to ``new`` in kernel_details.csv and trace_view.json; the renamed rows' Duration(us)."""
    out = d / "ASCEND_PROFILER_OUTPUT"
    kd = out / "kernel_details.csv"
    with kd.open(newline="") as fh:
        rows = list(csv.reader(fh))
    name, dur = rows[0].index("Name"), rows[0].index("Duration(us)")
    got = [float(r[dur]) for r in rows[1:] if r[name] == old]
    for r in rows[1:]:
        if r[name] == old:
            r[name] = new
    with kd.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    tv = out / "trace_view.json"
    tv.write_text(tv.read_text().replace(f'"{old}"', f'"{new}"'))
    return got


def test_a_sub_microsecond_residual_folds_into_mc2_where_it_is_the_largest_category(tmp_path):
    """MC2 is one of the categories a sub-us computing residual may fold into. No sample has MC2 kernels: the NPU
    excerpt with its five MatMulV2 kernels renamed MatmulAllReduce (an MC2_KERNEL name, exact lower-case
    match). By hand from its files: the renamed rows last 21.98 + 16.54 + 45.921 + 30.661 + 287.666 =
    402.768 us, the largest category of that side; the excerpt's other non-HCCL kernels 581.449 - 402.768 =
    178.681 us; the Overlap Analysis "Computing" lane 581.450 us, so the residual is 1 ns and MC2 shows
    402769 ns, Matmul + Vector keep 178681 ns, and no Other Computing step is left."""
    d = _npu_excerpt_copy(tmp_path, "mc2")
    got = _rename_kernels(d, "aclnnMm_MatMulCommon_MatMulV2", "MatmulAllReduce")
    assert got == [21.98, 16.54, 45.921, 30.661, 287.666]
    r = compare(str(NPU_EXCERPT), str(d), enable_profiling_compare=True)
    steps = r.waterfall.set_index("Step")
    assert steps.loc["MC2", ["Base(ns)", "Comparison(ns)"]].tolist() == [0, 402_769]
    assert int(steps.loc["Matmul", "Comparison(ns)"]) + int(steps.loc["Vector", "Comparison(ns)"]) == 178_681
    assert "Other Computing" not in steps.index


def _with_process_group(d: Path, group: int, pg: str) -> Path:
    """The excerpt's one HCCL lane renamed "Group {group} Communication" and named ``pg`` in parallel_group_info."""
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = tv.read_text()
    assert text.count('"Group 0 Communication"') == 1
    tv.write_text(text.replace('"Group 0 Communication"', f'"Group {group} Communication"'))
    meta = json.loads((d / "profiler_metadata.json").read_text())
    meta["parallel_group_info"] = {str(group): {"group_name": pg, "group_rank": 0, "global_ranks": [0, 1]}}
    (d / "profiler_metadata.json").write_text(json.dumps(meta))
    return d


def test_a_process_group_named_unknown_pairs_no_groups_across_the_runs(tmp_path):
    """Groups pair across the runs by process-group name, except the name "unknown", which stands for groups
    without one (reference-1 §9.4 item 26a): OverallMetrics keeps "unknown: Group 0 Communication" and
    "unknown: Group 1 Communication" apart, and so must the waterfall, which then shows one "Uncovered
    Communication" step. With the pg name "tp" the two groups pair (one "tp: Communication" step). No sample
    names a group "unknown": copies of the NPU excerpt with its HCCL lane renumbered (0 on the base, 1 on the
    comparison) and a parallel_group_info naming it."""
    for pg, want_steps, want_rows in (
            ("unknown", ["Uncovered Communication"],
             ["\tunknown: Group 0 Communication", "\tunknown: Group 1 Communication"]),
            ("tp", ["tp: Communication (uncovered)"], ["\ttp: Communication"])):
        b = _with_process_group(_npu_excerpt_copy(tmp_path, f"{pg}_b"), 0, pg)
        c = _with_process_group(_npu_excerpt_copy(tmp_path, f"{pg}_c"), 1, pg)
        r = compare(str(b), str(c), enable_profiling_compare=True)
        labels = [str(x) for x in r.sheet("OverallMetrics").iloc[:, 0] if str(x).startswith(f"\t{pg}:")]
        assert labels == want_rows, pg
        wf = r.waterfall
        comm = wf[wf["Category"] == "communication"]
        assert comm["Step"].tolist() == want_steps, pg
        assert int(comm["Base(ns)"].iloc[0]) == int(comm["Comparison(ns)"].iloc[0]) > 0  # the same lane


def _heaviest_checked(events: list[dict], n: int = 10) -> tuple[list[str], int]:
    """By hand from raw Kineto events: the n cpu_op names of largest total dur among events whose Input Dims is
    a non-empty list, and how many of them recorded some dimension (a digit)."""
    total: dict[str, int] = {}
    digits: set[str] = set()
    for e in events:
        dims = (e.get("args") or {}).get("Input Dims")
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and isinstance(dims, list) and dims:
            total[e["name"]] = total.get(e["name"], 0) + e["dur"]
            if any(ch.isdigit() for ch in json.dumps(dims)):
                digits.add(e["name"])
    top = sorted(total, key=lambda k: -total[k])[:n]
    return top, sum(k in digits for k in top)


def test_shape_guard_skips_operators_recorded_without_inputs(tmp_path):
    """An op recorded without inputs ("Input Dims": [], as the kineto tb_plugin resnet50 samples write for their
    scopes) has no shape to compare, so it must not take one of the ten slots of the heaviest operators. The
    bert-small H100 trace with aten::linear (its heaviest op) written so: by hand from the raw events, the ten
    heaviest ops with inputs are then aten::addmm ... aten::t, of which 9 recorded a dimension (aten::empty's
    inputs are all []), so the check counts 9 (it counted 8 when the [] op kept its slot)."""
    with gzip.open(BERT_H100, "rt") as fh:
        data = json.load(fh)
    linear = [e for e in data["traceEvents"] if e.get("cat") == "cpu_op" and e.get("name") == "aten::linear"]
    assert linear
    for e in linear:
        e["args"]["Input Dims"] = []
    path = tmp_path / "bert-small_h100_no_linear_dims.json"
    path.write_text(json.dumps(data))
    top, want = _heaviest_checked(data["traceEvents"])
    assert "aten::linear" not in top and top[-1] == "aten::t" and want == 9
    opts = Options(enable_operator_compare=True)
    ops = load_profile(str(path), opts).ops
    names = checks._op_names(ops)
    assert checks._shape_mismatches(ops, ops, names, names) == (9, [])


def test_shape_guard_leaves_the_profiler_step_out(tmp_path):
    """A ProfilerStep#N range is no operator (its host time is the whole step, so it would always rank first):
    the shape check leaves it out even where a shape is recorded for it. Every export records none for it (N/A),
    so the l1 / l2 DB excerpts are edited to give their ProfilerStep#50 different shapes ("1,2" / "3,4"; the
    exports keep shapes in inputDtypes): the verdict is that of the unedited pair (9 checked, none differs);
    counted, the step was a mismatch."""
    def edit(src: Path, dest: Path, shape: str) -> Path:
        dest.parent.mkdir(parents=True)
        shutil.copyfile(src, dest)
        con = sqlite3.connect(dest)
        try:
            con.execute("UPDATE PYTORCH_API SET inputDtypes = ?, inputShapes = ? WHERE name = ?",
                        (string_id(con, shape), string_id(con, "float"), string_id(con, "ProfilerStep#50")))
            con.commit()
        finally:
            con.close()
        return dest

    opts = Options(enable_operator_compare=True)
    b = load_profile(str(edit(DB_L1, tmp_path / "b" / DB_L1.name, "1,2")), opts).ops
    c = load_profile(str(edit(DB_L2, tmp_path / "c" / DB_L2.name, "3,4")), opts).ops
    assert b.loc[b["name"] == "ProfilerStep#50", "input_dims"].tolist() == ["1,2"]
    assert c.loc[c["name"] == "ProfilerStep#50", "input_dims"].tolist() == ["3,4"]
    b0, c0 = (load_profile(str(p), opts).ops for p in (DB_L1, DB_L2))
    before = checks._shape_mismatches(b0, c0, checks._op_names(b0), checks._op_names(c0))
    assert before == (9, [])
    assert checks._shape_mismatches(b, c, checks._op_names(b), checks._op_names(c)) == before


def test_kernel_type_contributors_are_named_as_op_statistic_keys_them(samples, tmp_path):
    """With --use_kernel_type and no operator comparison the contributors are KernelTypeCompare rows, named
    "{OP Type}-{Core Type}" as the original keys op_statistic.csv rows (a kernel row is "{name} {shapes}").
    Expected by hand from the two samples' op_statistic.csv (Total Time(us), level 1 -> level 2): TransData on
    the AI vector core changed most (1423.208 -> 1393.328 us), then Conv2DBackpropFilter (+17.700 us) and
    MatMulV2 (+16.801 us) on the AI core. A base without torch ops (level 1 with its cpu_op events taken out, as a
    MindSpore export has none) has no operator level: its kernel types are the contributors all the same."""
    def totals(side: Path) -> dict[str, float]:
        with (side / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv").open(newline="") as fh:
            return {f"{r['OP Type']}-{r['Core Type']}": float(r["Total Time(us)"]) for r in csv.DictReader(fh)}

    l1, l2 = samples / NPU_L1, samples / NPU_L1.replace("level1", "level2")
    b, c = totals(l1), totals(l2)
    diff = {k: c.get(k, 0.0) - b.get(k, 0.0) for k in list(b) + [k for k in c if k not in b]}
    want = sorted(diff, key=lambda k: -abs(diff[k]))[:3]
    assert want == ["TransData-AI_VECTOR_CORE", "Conv2DBackpropFilter-AI_CORE", "MatMulV2-AI_CORE"]
    top = compare(str(l1), str(l2), enable_kernel_compare=True, use_kernel_type=True).contributors
    assert set(top["Level"]) == {"kernel type"}
    assert top["Name"].tolist()[:3] == want
    assert top["Diff(ms)"].tolist()[:3] == pytest.approx([diff[k] / 1000 for k in want])
    bare = tmp_path / "rank0_ascend_pt"
    shutil.copytree(l1, bare)
    trace = bare / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.chmod(0o644)
    trace.write_text(json.dumps([e for e in json.loads(trace.read_text()) if e.get("cat") != "cpu_op"]))
    res = compare(str(bare), str(l2), enable_kernel_compare=True, use_kernel_type=True)
    assert not len(res.base.ops) and len(res.comparison.ops)
    assert set(res.contributors["Level"]) == {"kernel type"}
    assert res.contributors["Name"].tolist()[:3] == want


def test_heavy_ops_break_ties_by_first_appearance() -> None:
    """``_heavy_ops`` ranks names by total duration, and names of equal totals in the order they first appear (as
    ``nlargest`` keeps the first), so the cut at ``n`` keeps the earlier one: a (2 + 3 us), b and c of 5 us each
    give a, b; with c at 7 us, c, a."""
    ops = pd.DataFrame({"name": ["a", "b", "c", "a"], "cat": ["cpu_op"] * 4, "input_dims": ["[[2]]"] * 4,
                        "dur": [2, 5, 5, 3]})
    assert checks._heavy_ops(ops, 2) == ["a", "b"]
    ops.loc[2, "dur"] = 7
    assert checks._heavy_ops(ops, 2) == ["c", "a"]


def test_shape_guard_reads_traces_whose_operators_are_not_tagged_cpu_op(samples):
    """PyTorch 1.9's Kineto traces tag operators "Operator", not "cpu_op" (kineto tb_plugin's resnet50_num_workers_0
    runs): the shape check then ranks every op with shapes instead of finding none. By hand from the raw events
    (total dur of the events with a non-empty Input Dims list): the ten heaviest of each side, found on the
    other, are 11 names (CudnnConvolutionBackward ... aten::_convolution), of which aten::empty recorded no
    dimension; the other 10 share their shapes (12 to 32 shape lists each, the same on both runs)."""
    runs = sorted((samples / "kineto/tb_plugin/samples/resnet50_num_workers_0").glob("*.pt.trace.json.gz"))
    sides = []
    for path in runs:
        total: dict[str, int] = {}
        shapes: dict[str, set[str]] = {}
        cats = set()
        for e in _events(path):
            if e.get("ph") != "X":
                continue
            cats.add(e.get("cat"))
            dims = (e.get("args") or {}).get("Input Dims")
            shapes.setdefault(e["name"], set())
            if isinstance(dims, list) and dims:
                total[e["name"]] = total.get(e["name"], 0) + e["dur"]
                text = json.dumps(dims)
                if any(ch.isdigit() for ch in text):
                    shapes[e["name"]].add(text)
        assert "Operator" in cats and "cpu_op" not in cats
        sides.append((sorted(total, key=lambda k: -total[k])[:10], shapes))
    (top_b, shapes_b), (top_c, shapes_c) = sides
    both = list(dict.fromkeys([n for n in top_b if n in shapes_c] + [n for n in top_c if n in shapes_b]))
    checked = [n for n in both if shapes_b[n] and shapes_c[n]]
    assert len(both) == 11 and len(checked) == 10 and "aten::empty" not in checked
    assert all(shapes_b[n] & shapes_c[n] for n in checked)
    opts = Options(enable_operator_compare=True)
    b, c = (load_profile(str(p), opts).ops for p in runs)
    assert checks._shape_mismatches(b, c, checks._op_names(b), checks._op_names(c)) == (10, [])


def test_match_rate_check_names_what_the_operator_comparison_matched():
    """The match-rate row says what the operator comparison matched: modules where the module sheets replace the
    operator ones (the DB excerpts were recorded with_modules, samples/PROVENANCE.md), not "operators"."""
    g = compare(str(DB_L1), str(DB_L2), enable_operator_compare=True).guards.set_index("Check")
    row = g.loc["operator match rate"]
    assert row["Detail"] == "matched / compared modules per side (operator comparison); warn below 60%"
    g = compare(str(NPU_EXCERPT), str(NPU_EXCERPT), enable_operator_compare=True).guards.set_index("Check")
    assert g.loc["operator match rate", "Detail"].startswith("matched / compared top-level operators per side")


@pytest.mark.parametrize("dims", [["N/A", "N/A"], ["N/A", ""], ["N/A", None], ["", float("nan")], ["N/A", "8,3"],
                                  [None], ["N/A"] * 3 + ["[[2, 3]]"]])
def test_has_shapes_is_some_cell_other_than_empty_or_na(dims):
    """``_has_shapes`` by a set of the cells, as pandas' ``isin(["", "N/A"])`` over the column says (a None or
    NaN cell is no "N/A": it counts as a recorded shape, as before)."""
    ops = pd.DataFrame({"input_dims": pd.Series(dims, dtype=object)})
    assert checks._has_shapes(ops) == (not pd.Series(dims, dtype=object).isin(["", "N/A"]).all())


def test_guard_columns_keep_each_figure_as_it_is():
    """The guard frame's columns are object columns of the figures themselves (a count an int, a rate a float,
    a word a str, an unknown None), not pandas' inference over them."""
    rows = [checks._guard("step count", True, 3, 3, "x"), checks._guard("operator match rate", None, 0.5, None, "y")]
    frame = table.plain_frame({c: pd.Series(object_array([r[c] for r in rows]), dtype=object, copy=False)
                               for c in checks.GUARD_COLUMNS})
    assert all(frame[c].dtype == object for c in checks.GUARD_COLUMNS)
    assert [type(v) for v in frame["Base"].tolist()] == [int, float]
    assert frame["Comparison"].tolist() == [3, None]


# --------------------------------------------------------------------------- unchanged_why's choice of reading

def _why_of(*steps: tuple[str, str, int]) -> str:
    """``unchanged_why`` over operator rows that hold device time (1 ms on each side, unchanged) and a waterfall
    of ``steps`` (name, category, change in ns) between its two E2E rows."""
    names = ["Base E2E", *(s[0] for s in steps), "Comparison E2E"]
    cats = ["start", *(s[1] for s in steps), "end"]
    deltas = [0, *(s[2] for s in steps), sum(s[2] for s in steps)]
    wf = pd.DataFrame({"Step": names, "Category": cats, "Delta(ns)": deltas})
    rows = pd.DataFrame({"Base(ms)": [1.0], "Comparison(ms)": [1.0]})
    return summary_notes.unchanged_why(rows, wf)


def test_unchanged_rows_under_a_gpu_flow_cat_that_links_nothing_name_the_category() -> None:
    """The bert pair under ``--gpu_flow_cat foo``: no flow of that category (its launch flows are ``ac2g``, counted
    here from the raw events), so no kernel is linked to an operator and the contributors are the waterfall steps.
    The note said "as where no kernel is linked to an operator: a trace without launch flows", which these traces
    are not; it names the category given. Without the option the operators hold their kernels (no such note)."""
    base, comp = str(BERT_H100), str(BERT_MI300)
    for path in (base, comp):
        cats = {e.get("cat") for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") in ("s", "f")}
        assert "ac2g" in cats and "foo" not in cats
    res = compare(base, comp, gpu_flow_cat="foo")
    assert res.contributors["Level"].unique().tolist() == ["category"]
    # the option named bare, as the ignored-option warnings name it: this is compare()'s result, whose caller wrote
    # gpu_flow_cat="foo", and the CLI's JSON and workbook carry the same words ("--gpu_flow_cat" read as a flag)
    assert res.contributors.attrs["fallback"] == (
        "no operator changed its device time (no kernel is linked to an operator: no launch flow of category "
        "'foo', the gpu_flow_cat given); the contributors are the waterfall steps")
    assert "fallback" not in compare(base, comp).contributors.attrs
    # no category given: the reading of a trace without launch flows, as before
    wf = pd.DataFrame({"Step": ["Base E2E", "Vector", "Comparison E2E"], "Category": ["start", "computing", "end"],
                       "Delta(ns)": [0, 10, 10]})
    assert summary_notes.unchanged_why(pd.DataFrame({"Base(ms)": [0.0], "Comparison(ms)": [0.0]}), wf) == (
        "as where no kernel is linked to an operator: a trace without launch flows")


def test_unchanged_why_reads_each_case_by_its_own_rule() -> None:
    """Each reading of "no operator changed" on the figures that pick it, and those next to them that do not (a
    mutation audit of the session's rules: the regrouped sum, the Lccl reading beside communication, the
    quarter-of-the-largest-step edge, a small SDMA move, an idle time that shrank)."""
    # computing steps that moved against each other (sum 0): the same kernels regrouped; both grown: not that
    assert "the same kernel time in other computing categories" in _why_of(
        ("Vector", "computing", 10_000), ("Matmul", "computing", -10_000))
    assert _why_of(("Vector", "computing", 10_000), ("Matmul", "computing", 5_000)).endswith(
        "time no operator's kernels hold")
    # Lccl from Free: Other alone; with uncovered communication moved too, the communication reading decides
    assert "Lccl time (kernels named kernel_aivec) that Free Time gave up" in _why_of(
        ("Lccl", "lccl", 15_000), ("Free: Other", "free", -15_000))
    assert "overlaps less of the communication" in _why_of(
        ("Uncovered Communication", "communication", 8_000), ("Lccl", "lccl", 15_000),
        ("Free: Other", "free", -15_000))
    # communication moved exactly a quarter of the largest step (OVERLAP_SHIFT_SHARE): it decides
    assert communication_summary.OVERLAP_SHIFT_SHARE * 2_000_000 == 500_000
    assert "overlaps less of the communication" in _why_of(
        ("Uncovered Communication", "communication", 500_000), ("Free: Other", "free", 2_000_000))
    assert "the device waited longer for work" in _why_of(
        ("Uncovered Communication", "communication", 499_999), ("Free: Other", "free", 2_000_000))
    # a copy on a compute stream that moved under a quarter of the idle time's change: the idle time decides
    assert "copy time on a compute stream" in _why_of(("Free: SDMA", "free", -500_000), ("Free: Other", "free",
                                                                                         2_000_000))
    assert "the device waited longer for work" in _why_of(("Free: SDMA", "free", 10_000),
                                                          ("Free: Other", "free", 2_000_000))
    assert "the device waited less for work, as where the host was quicker" in _why_of(("Free: Other", "free",
                                                                                         -2_000_000))


def test_unchanged_why_reads_idle_time_only_where_free_time_moved_most() -> None:
    """The idle-time reading needs a Free step to be the one that moved most: two communication groups that moved
    against each other (uncovered communication unchanged in all) or Lccl beside a smaller Free change that does
    not offset it is time no operator's kernels hold, not the device waiting for the host."""
    assert _why_of(("Group A Communication", "communication", 1_000_000),
                   ("Group B Communication", "communication", -1_000_000),
                   ("Free: Other", "free", 10_000)).endswith("time no operator's kernels hold")
    assert _why_of(("Lccl", "lccl", 15_000), ("Free: Other", "free", -10_000)).endswith(
        "time no operator's kernels hold")


def test_name_map_text_joins_a_group_of_three_and_counts_groups_past_three() -> None:
    """``name_map_text``: a group of three names reads "a with b and c" (all three named), four "a with b, c and d";
    three groups are all shown with no count, a fourth is left off for "; ... (4 in all)". Figures by hand:
    1.0 -> 2.5 ms is +1.500 ms, 0.5 -> 0.25 ms is -0.250 ms."""
    lead = "the op_name_map option pairs names that the statistic sheets, and so these rows, keep apart: "
    three = (["a", "b", "c"], 1.0, 2.5)
    assert summary_notes.name_map_text([three], "ms", 3) == (
        lead + "a with b and c 1.000 ms -> 2.500 ms together (+1.500 ms)")
    four = (["a", "b", "c", "d"], 0.5, 0.25)
    assert summary_notes.name_map_text([four], "ms", 3) == (
        lead + "a with b, c and d 0.500 ms -> 0.250 ms together (-0.250 ms)")
    pairs = [([f"x{i}", f"y{i}"], 1.0, 1.0) for i in range(4)]
    shown = "; ".join(f"x{i} with y{i} 1.000 ms -> 1.000 ms together (+0.000 ms)" for i in range(3))
    assert summary_notes.name_map_text(pairs[:3], "ms", 3) == lead + shown
    assert summary_notes.name_map_text(pairs, "ms", 3) == lead + shown + "; ... (4 in all)"


def test_step_wrappers_need_time_on_both_sides() -> None:
    """``step_wrappers``: a side whose operators hold no time has no wrapper, even where the other side's one op
    holds all of its time under a name the first side lacks (base: "w" 0 ms, comparison: "x" 5 ms, each name on
    one side only); with 1 ms under "w" the two are the wrappers, and so they are at exactly 90 % of a side."""
    names = ["w", "x"]
    counts = (np.array([1, 0]), np.array([0, 1]))
    assert summary_notes.step_wrappers(names, (np.array([0.0, 0.0]), np.array([0.0, 5.0])), counts) is None
    assert summary_notes.step_wrappers(names, (np.array([1.0, 0.0]), np.array([0.0, 5.0])), counts) == (
        "w", 1.0, "x", 5.0)
    # exactly WRAPPER_SHARE (9 of 10 ms, "y" on both sides holding the rest) is a wrapper
    counts = (np.array([1, 0, 1]), np.array([0, 1, 1]))
    assert summary_notes.step_wrappers(["w", "x", "y"], (np.array([9.0, 0.0, 1.0]), np.array([0.0, 5.0, 0.0])),
                                       counts) == ("w", 9.0, "x", 5.0)


#: A waterfall whose E2E change is 0: the note under the contributors says nothing of how much of it they explain
#: (``_unexplained``), so of contributors holding communication it is the communication part alone (frames without
#: ``attrs["net"]`` add no "net of the collective communication" part)
NO_CHANGE = pd.DataFrame({"Delta(ns)": [0]})


def test_communication_note_names_each_of_two_contributors_holding_communication() -> None:
    """The note under the contributors (``unexplained_note``) with two listed contributors whose change is mostly
    communication (a: +2 ms, +1.5 of it communication; b: -1 ms, all of it): both are named with their figures,
    under the plural wording; with a alone, the singular one. A GPU side without collective kernels adds no kind to
    what the figures hold."""
    comm = pd.DataFrame({"Name": ["a", "b"], "Base(ms)": [1.0, 2.0], "Comparison(ms)": [2.5, 1.0]})
    why = ("(HCCL ops, which an NPU text export links to the operator that launched them; the waterfall counts them "
           "as communication, not computing)")
    two = pd.DataFrame({"Name": ["a", "b"], "Diff(ms)": [2.0, -1.0]})
    assert summary_notes.unexplained_note(two, NO_CHANGE, comm) == (
        f"most of the change of 2 listed contributors is collective communication launched inside them {why}: "
        "a: communication 1.000 ms -> 2.500 ms, b: communication 2.000 ms -> 1.000 ms")
    assert summary_notes.unexplained_note(two.iloc[:1], NO_CHANGE, comm) == (
        f"most of the change of a is collective communication launched inside it {why}: "
        "communication 1.000 ms -> 2.500 ms")
    # a GPU base that ran no collective (0 ms, a reading) beside an NPU comparison: only HCCL ops are held
    gpu = pd.DataFrame({"Name": ["a"], "Base(ms)": [0.0], "Comparison(ms)": [2.0]})
    gpu.attrs.update(kinds=("GPU", "NPU"), held=(False, True))
    # and says what HCCL is, for the GPU user (NPU-only runs do not)
    glossed = why.replace("HCCL ops", "HCCL ops (HCCL: the NPU's collective communication library, as NCCL on a GPU)")
    assert summary_notes.unexplained_note(two.iloc[:1], NO_CHANGE, gpu) == (
        f"most of the change of a is collective communication launched inside it {glossed}: communication 0.000 ms "
        "-> 2.000 ms (the base side's trace holds no NCCL / RCCL or other collective kernel)")


def test_step_wrapper_and_communication_note_edges() -> None:
    """Two edges by hand. ``step_wrappers``: a side's top op is no wrapper where the other side has an op of its
    name, even one holding 0 ms (base "w" 10 ms, comparison "x" 5 ms and one "w" of 0 ms). The communication note:
    a contributor is named from exactly half of its change being communication (+2 ms, communication 1 -> 2 ms),
    not under it (1 -> 1.999 ms: 0.4995 of it)."""
    names = ["w", "x"]
    amounts = (np.array([10.0, 0.0]), np.array([0.0, 5.0]))
    assert summary_notes.step_wrappers(names, amounts, (np.array([1, 0]), np.array([0, 1]))) == ("w", 10.0, "x", 5.0)
    assert summary_notes.step_wrappers(names, amounts, (np.array([1, 0]), np.array([1, 1]))) is None
    assert summary_notes.step_wrappers(names, amounts, (np.array([1, 1]), np.array([0, 1]))) is None
    one = pd.DataFrame({"Name": ["a"], "Diff(ms)": [2.0]})
    half = pd.DataFrame({"Name": ["a"], "Base(ms)": [1.0], "Comparison(ms)": [2.0]})
    assert summary_notes.unexplained_note(one, NO_CHANGE, half) == (
        "most of the change of a is collective communication launched inside it (HCCL ops, which an NPU text export "
        "links to the operator that launched them; the waterfall counts them as communication, not computing): "
        "communication 1.000 ms -> 2.000 ms")
    under = pd.DataFrame({"Name": ["a"], "Base(ms)": [1.0], "Comparison(ms)": [1.999]})
    assert summary_notes.unexplained_note(one, NO_CHANGE, under) == ""


def test_communication_note_takes_the_sign_of_the_change_and_says_the_waterfall_only_with_one() -> None:
    """Two more edges by hand. A contributor is named where its communication moved with its change, by half of it
    or more: +2 ms with communication 3 -> 1 ms (-2 ms, against it) is not, -2 ms with the same fall is. A run
    without a waterfall (operators alone: ``unexplained_note`` given none) is not told what its waterfall counts.
    A contributor the communication frame does not hold, listed first, leaves the next one to be read."""
    fell = pd.DataFrame({"Name": ["a"], "Base(ms)": [3.0], "Comparison(ms)": [1.0]})
    assert summary_notes.unexplained_note(pd.DataFrame({"Name": ["a"], "Diff(ms)": [2.0]}), NO_CHANGE, fell) == ""
    down = pd.DataFrame({"Name": ["a"], "Diff(ms)": [-2.0]})
    said = ("most of the change of a is collective communication launched inside it (HCCL ops, which an NPU text "
            "export links to the operator that launched them{}): communication 3.000 ms -> 1.000 ms")
    assert summary_notes.unexplained_note(down, NO_CHANGE, fell) == said.format(
        "; the waterfall counts them as communication, not computing")
    assert summary_notes.unexplained_note(down, None, fell) == said.format("")
    # a contributor that holds no communication (not in the frame) listed first leaves the next one to be read
    two = pd.DataFrame({"Name": ["b", "a"], "Diff(ms)": [5.0, -2.0]})
    assert summary_notes.unexplained_note(two, None, fell) == said.format("")


def test_module_coverage_share_is_at_most_the_whole() -> None:
    """``_module_row``: level-1 module rows holding more than the operators' device time (12 of 10 ms) read a share
    of 1.0, not 1.2, beside the other side's 0.1 (a level-2 row is no part of it); the Detail keeps both figures as
    they are."""
    from msprof_compare.compare.table import Sheet

    cells = [[None] * 13 for _ in range(2)]
    for row, (level, base, comp) in zip(cells, (("1", 12.0, 1.0), ("2", 5.0, 5.0)), strict=True):
        row[2], row[4], row[8], row[12] = level, "[ TOTAL ]", base, comp
    op_rows = [[0, "op", 10.0, 1, 10.0, 1]]
    got = checks._module_row(op_rows, [Sheet("ModuleCompareStatistic", [], pd.DataFrame(cells), (0, 0), (0, 0))])
    assert (got["Status"], got["Base"], got["Comparison"]) == ("note", 1.0, 0.1)
    assert "base 12.000 of 10.000 ms, comparison 1.000 of 10.000 ms" in got["Detail"]


def test_module_rows_of_needs_one_row_holding_half_and_names_three_operators(monkeypatch) -> None:
    """``_module_rows_of`` at ``LOCALIZED_SHARE``: an operator's change split evenly over two module rows (each
    exactly half) ranks them, over three rows (a third each) does not; ``module_contributors_note`` names three
    operators, then how many in all and what the one left off holds."""
    rows = pd.DataFrame({"Name": ["/ A_0 > op", "/ B_0 > op", "/ A_0 > op3", "/ B_0 > op3", "/ C_0 > op3"],
                         "Base(ms)": [1.0, 1.0, 1.0, 1.0, 1.0], "Comparison(ms)": [1.5, 1.5, 1.25, 1.25, 1.25]})
    monkeypatch.setattr(module_contributors, "_module_rows", lambda sheets: ("module operator", rows))
    contrib = pd.DataFrame({"Name": ["op"]})
    frame = module_contributors._module_rows_of(contrib, [])
    assert frame["Name"].tolist() == ["/ A_0 > op", "/ B_0 > op"] and frame.attrs["module_rows_of"] == ["op"]
    assert module_contributors._module_rows_of(pd.DataFrame({"Name": ["op3"]}), []) is None
    frame.attrs["module_rows_of"] = ["a", "b", "c", "d"]
    assert module_contributors.module_contributors_note(frame).startswith(
        "a, b, c, ... (4 in all; the other one wholly) run inside modules")
    frame.attrs["module_rows_of"] = ["a", "b", "c"]
    assert module_contributors.module_contributors_note(frame).startswith("a, b, c run inside modules")


def test_around_modules_weighs_the_change_and_names_only_sides_whose_modules_hold_time() -> None:
    """``_around_modules`` on the SGLang qk-norm op's figures (its own rows 3.389917 ms, the RMSNorm rows inside it
    17.487 ms more, test_injected_regressions): a contributor whose own rows and inner module rows both kept their
    time (the change elsewhere) is not "run around modules" (the inner rows hold no more of the change than its own,
    0 against 0); where the inner rows moved, only a side whose module rows inside it hold time is named (a side
    where it holds its own rows alone, 0 ms inside, is no figure: "base 0.000 of its ... ms")."""
    own, nested = 3.389917, 17.487
    flat = {"op": (own, own)}
    assert module_contributors._around_modules(flat, {"op": [("base", own + nested, own + nested),
                                                               ("comparison", own + nested, own + nested + 0.1)]}) == {}
    grew = module_contributors._around_modules(flat, {"op": [("base", own, own),
                                                             ("comparison", own + nested, own + nested)]})
    assert grew == {"op": [("comparison", round(nested, 6), own + nested)]}


def test_subtrees_marks_each_node_in_a_subtree_once() -> None:
    """``_subtrees`` over an op tree's pre-order layout (``size``: the node and its descendants): node 0 with
    children 1 and 2, node 3 with child 4. The subtree of 3 is nodes 3-4; of 0 and its child 1, nodes 0-2 once."""
    from types import SimpleNamespace

    tree = SimpleNamespace(n=5, size=np.array([3, 1, 1, 2, 1]))
    assert module_contributors._subtrees(tree, np.array([3])).tolist() == [False, False, False, True, True]
    assert module_contributors._subtrees(tree, np.array([0, 1])).tolist() == [True, True, True, False, False]
    assert module_contributors._subtrees(tree, np.array([2])).tolist() == [False, False, True, False, False]


def test_module_note_keeps_names_as_they_are_for_the_sheet_and_json() -> None:
    """The note on operators that run inside modules goes to the sheet and the JSON as well as the console, so
    its names are not escaped there (the console escapes what it prints; ``short_list(..., escape=False)``): a
    name holding an escape character read ``\\x1b`` in the sheet. Four names: three shown, "(4 in all; ...)"."""
    from msprof_compare.compare import module_contributors

    frame = pd.DataFrame({"Name": ["/ A_0 > op"]})
    frame.attrs["module_rows_of"] = ["op\x1b[31m", "b", "c", "d"]
    assert module_contributors.module_contributors_note(frame) == (
        "op\x1b[31m, b, c, ... (4 in all; the other one wholly) run inside modules: the module contributors rank "
        "their module rows by their change")


def test_a_side_without_categories_makes_computing_one_waterfall_step(samples):
    """NPU Level0 (no kernel types or PMU counters: all computing in no category) against Level1 (split): the
    waterfall's category steps read the Level0 side's absence of data as work moved (Vector +4.146 ms, Other
    Computing -8.822 ms, named by the contributors and the gate while computing changed +0.046 ms). Computing is
    one step, of each side's Computing Time (OverallMetrics' first row, in ms to the ns), and the E2E identity
    holds; the contributors and the gate name no category."""
    l0, l1 = samples / NPU_L1.replace("level1", "level0"), samples / NPU_L1
    res = compare(str(l0), str(l1), enable_profiling_compare=True)
    wf = res.waterfall
    assert wf["Step"].tolist() == ["Base E2E", "Computing", "Group 0 Communication (uncovered)", "Free: Other",
                                   "Comparison E2E"]
    overall = res.sheet("OverallMetrics").set_index("Index")
    computing = wf.set_index("Step").loc["Computing"]
    assert [computing["Base(ns)"] / 1e6, computing["Comparison(ns)"] / 1e6] == \
        overall.loc["Computing Time", ["Duration(ms)", "Duration(ms).1"]].tolist() == [8.827473, 8.873756]
    steps = wf["Delta(ns)"].iloc[1:-1].sum()
    assert steps == wf["Delta(ns)"].iloc[-1] == 136_581_009 - 116_251_182
    assert res.contributors["Name"].tolist() == ["Group 0 Communication (uncovered)"]
    text = res.regression_gate(5)[1]
    assert "Computing +0.046 ms" in text and not any(c in text for c in ("Vector", "Conv", "Other Computing"))
    # the other way round too; and the split pair (Level1 vs Level2) keeps its categories
    back = compare(str(l1), str(l0), enable_profiling_compare=True).waterfall
    assert back.set_index("Step").loc["Computing", ["Base(ns)", "Comparison(ns)"]].tolist() == [8_873_756, 8_827_473]
    split = compare(str(l1), str(samples / NPU_L1.replace("level1", "level2")), enable_profiling_compare=True)
    assert "Computing" not in split.waterfall["Step"].tolist() and "Vector" in split.waterfall["Step"].tolist()


def test_one_computing_step_holds_a_split_sides_mc2(samples):
    """Beside a side without categories, the Computing step is each side's whole Computing Time, MC2 (fused compute +
    communication kernels, a category of their own) included: the steps still add up to the E2E difference."""
    from msprof_compare.compare.breakdown import MC2
    from msprof_compare.compare.breakdown_npu import npu_breakdown

    opts = Options(enable_profiling_compare=True)
    b = npu_breakdown(load_profile(str(samples / NPU_L1.replace("level1", "level0")), opts), opts)
    c = npu_breakdown(load_profile(str(samples / NPU_L1), opts), opts)
    c.mc2 = {"MatmulAllReduce": MC2(ns=700_000, computing_ns=500_000, communication_ns=200_000, count=2)}
    c.computing_ns += 700_000
    c.e2e_ns += 700_000
    steps = waterfall.waterfall(b, c).set_index("Step")
    assert steps.loc["Computing", ["Base(ns)", "Comparison(ns)"]].tolist() == [b.computing_ns, c.computing_ns]
    assert "MC2" not in steps.index
    inner = steps.drop(index=["Base E2E", "Comparison E2E"])
    assert int(inner["Delta(ns)"].sum()) == c.e2e_ns - b.e2e_ns == int(steps.loc["Comparison E2E", "Delta(ns)"])


def test_module_notes_name_the_operators_held_in_part_before_a_cut() -> None:
    """The module notes name three operators, then "... (N in all)": cut by rank, pair 3's lead hid the one
    whose module rows hold part of its time (AddmmBackward0, fourth of five) behind three "(all of it)". The three
    named are now those held in part first, then by rank, shown in rank order; the cut says what the others hold.
    Figures: pair 3's (test_module_contributors_db), a hidden partial one made up."""
    from msprof_compare.compare import module_contributors as mc

    full = [("base", 1.0, 1.0), ("comparison", 2.0, 2.0)]
    addmm = [("base", 0.560232, 0.612633), ("comparison", 0.549771, 0.605671)]
    part = "base 0.560 of its 0.613 ms, comparison 0.550 of its 0.606 ms"
    runners = [("conv", full), ("relu", full), ("ddp", full), ("addmm", addmm), ("nll", full)]
    assert mc._held_list(runners) == (
        f"conv (all of it), relu (all of it), addmm ({part}), ... (5 in all; the other 2: all of it)")
    # three or fewer: all named in rank order, as before
    assert mc._held_list(runners[2:]) == f"ddp (all of it), addmm ({part}), nll (all of it)"
    # four held in part: the first three of them, and how many of the others are held in part
    assert mc._held_list([("a", addmm), ("b", full), ("c", addmm), ("d", addmm), ("e", addmm)]) == (
        f"a ({part}), c ({part}), d ({part}), ... (5 in all; the other 2: 1 of them in part)")
    # the lead on operators whose module rows the contributors rank (module_rows_of): bare names hold all of it
    frame = pd.DataFrame({"Name": ["/ A_0 > op"]})
    frame.attrs["module_rows_of"] = ["a", "b", "c", "d", "e"]
    frame.attrs["module_rows_held"] = {"d": addmm}
    assert mc.module_contributors_note(frame) == (
        f"a, b, d (its module rows hold {part}), ... (5 in all; the other 2 wholly) run inside modules: the module "
        "contributors rank their module rows by their change")
    frame.attrs["module_rows_held"] = {n: addmm for n in "abcd"}
    assert mc.module_contributors_note(frame).startswith(
        f"a (its module rows hold {part}), b (its module rows hold {part}), c (its module rows hold {part}), ... "
        "(5 in all; the other 2, 1 of them in part) run inside modules")


def test_module_lead_on_the_console_lists_several_operators_a_line_each() -> None:
    """``module_contributors_lines``: the console's module lead. Where the note lists several operators (those that
    run modules, those the rows run inside, those moved), each list is a title and a "  - " line per operator, the
    sentence on what the contributors rank last (it leads into the table); one operator of each kind keeps the
    note's one line. The xdit pair's note was one line of 981 characters. Figures: pair 3's (as above)."""
    from msprof_compare.compare import module_contributors as mc

    full = [("base", 1.0, 1.0), ("comparison", 2.0, 2.0)]
    addmm = [("base", 0.560232, 0.612633), ("comparison", 0.549771, 0.605671)]
    part = "base 0.560 of its 0.613 ms, comparison 0.550 of its 0.606 ms"
    frame = pd.DataFrame({"Name": ["/ A_0 > op"]})
    assert mc.module_contributors_lines(None) == [] == mc.module_contributors_lines(frame)
    frame.attrs["runs_modules"] = [("ddp", addmm)]
    one = mc.module_contributors_note(frame)
    assert mc.module_contributors_lines(frame) == [one] and one == (
        f"The module rows hold part of the time of ddp ({part}), which runs modules: the module contributors rank "
        "the module rows inside it by their change")
    frame.attrs["moved"] = [("relu", "/ A_0/ ReLU_0", "/ A_0/ Conv_0", 1.0, 1.0)]
    assert mc.module_contributors_lines(frame) == [mc.module_contributors_note(frame)]  # one of each: one line
    frame.attrs["runs_modules"] = [("conv", full), ("relu", full), ("ddp", full), ("addmm", addmm), ("nll", full)]
    assert mc.module_contributors_lines(frame) == [
        "The module rows hold this much of the time of the operators that run modules:",
        "  - conv (all of it)", "  - relu (all of it)", f"  - addmm ({part})",
        "  - ... (5 in all; the other 2: all of it)",
        "relu runs in another module on each side (base / A_0/ ReLU_0, comparison / A_0/ Conv_0): its two module "
        "rows count as one, under its comparison module.",
        "The module contributors rank the module rows inside them by their change"]
    # one operator that runs modules, four moved: the operator's sentence leads into the table, after the moves
    frame.attrs["runs_modules"] = [("ddp", full)]
    frame.attrs["moved"] = [(f"op{k}", f"/ A_{k}", f"/ B_{k}", 1.0, 1.0) for k in range(4)]
    assert mc.module_contributors_lines(frame) == [
        "Operators that run in another module on each side (each one's two module rows count as one, under its "
        "comparison module):",
        "  - op0 (base / A_0, comparison / B_0)", "  - op1 (base / A_1, comparison / B_1)",
        "  - op2 (base / A_2, comparison / B_2)", "  - ... (4 in all)",
        "The module rows hold all of the time of ddp, which runs modules: the module contributors rank the module "
        "rows inside it by their change"]
    # the operators the rows run inside (no operator runs modules)
    inside = pd.DataFrame({"Name": ["/ A_0 > a"]})
    inside.attrs["module_rows_of"] = ["a", "b"]
    inside.attrs["module_rows_held"] = {"b": addmm}
    assert mc.module_contributors_lines(inside) == [
        "Operators that run inside modules:", "  - a", f"  - b (its module rows hold {part})",
        "The module contributors rank their module rows by their change"]
    inside.attrs["module_rows_of"] = ["a"]
    assert mc.module_contributors_lines(inside) == [mc.module_contributors_note(inside)]


def test_wrapper_note_on_the_console_gives_each_sides_wrapper_a_line() -> None:
    """``contributors_note_lines``: where the note under the contributors names each side's wrapper (the tracelens
    vLLM pair's 100-character batch names made one console line of 772 characters), the console gives the opening,
    a "  - " line per side's wrapper and figure, then the advice and any parts after it; the one-line note of the
    sheet and the JSON keeps its words. A note without wrappers stays one line. Names and figures made up."""
    from msprof_compare.compare import summary_notes as sn

    contrib = pd.DataFrame({"Name": ["A", "B"], "Base(ms)": [1.0, 0.0], "Comparison(ms)": [0.0, 2.0],
                            "Diff(ms)": [-1.0, 2.0]})
    assert sn.contributors_note_lines(contrib, None) == [] == sn.contributors_note_lines(None, None)
    contrib.attrs["wrappers"] = ("A", 1.0, "B", 2.0)
    opening = ("each side's operator device time lies under one top-level op that the other side has no op of (an "
               "annotation around the step, named after its batch, is one), so the operator level compares these two, "
               "not the ops inside them")
    advice = ("to pair them and compare inside, give the op_name_map option the entry 'A': 'B' (beside any it holds) "
              "and set the max_kernel_num option to 10")
    assert sn.unexplained_note(contrib, None) == opening.replace(
        "(an annotation", "(base A 1.000 ms, comparison B 2.000 ms; an annotation") + f": {advice}"
    assert sn.contributors_note_lines(contrib, None) == [
        f"Note: {opening}:", "  - base A 1.000 ms", "  - comparison B 2.000 ms", f"T{advice[1:]}."]
    # the map pairs them already, under --disable_details: the advice's other words, capitalised as a sentence
    contrib.attrs.update(wrappers_mapped=True, details_off=True)
    assert sn.contributors_note_lines(contrib, None)[-1] == (
        "The op_name_map option pairs them already, in the detail sheets only (the statistic sheets, which these rows "
        "come from, keep a row per name): to compare inside, set the max_kernel_num option to 10 in a run without "
        "the disable_details option (which pairs no operator, so neither option changes a sheet).")
