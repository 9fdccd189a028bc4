"""Summary rules the other Summary tests left open (a mutation audit of compare/summary.py and
report/summary_console.py): the order and count of the contributors, the gate's step and contributor lines,
the validity guards' verdicts and figures on real pairs, and the boundaries of the thresholds.

Expected figures come from the raw files (json / sqlite walks), from the original tool's reference outputs
(literals, with where they come from), or from a few lines of plain pandas over the result frames that do not
call the function under test.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
from dbutil import edited_copy, sql

from msprof_compare.api import compare
from msprof_compare.compare import summary
from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.loaders import load_profile
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


def test_console_category_contributors_count_rows_and_accumulate_shares():
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
    assert "(category level: 2 rows cover 91.6% of the waterfall steps' change)" in text
    rows = [_cells(line) for line in text.splitlines() if line.startswith("|") and _cells(line)[0] in ("1", "2")]
    assert [(c[1], c[5], c[6]) for c in rows] == [("Free: Other", want[0], want[0]),
                                                   ("Flash Attention (Forward)", want[1], want[2])]


def test_contributors_stop_where_the_shares_reach_exactly_80_percent():
    """Diffs of +1.2, -0.2 and +0.1 ms: the first row alone is 80 % of the 1.5 ms summed |change| (1.2 / 1.5),
    although the float quotient is 0.7999999999999999, so the list stops after it. No sample's changes reach
    80 % exactly (checked over the kernel sheets of every pair of NPU samples), so the rows are hand-made."""
    assert 1.2 / 1.5 < 0.8  # what the code meets
    rows = pd.DataFrame({"Name": ["a", "b", "c"], "Base(ms)": [0.0, 0.2, 0.0], "Comparison(ms)": [1.2, 0.0, 0.1]})
    top = summary.top_contributors(rows, "kernel")
    assert top["Name"].tolist() == ["a"]
    assert summary.coverage_text(top) == "1 row covers 80.0%"


def test_console_title_share_and_a_name_of_seventy_characters():
    """The title's share is rounded as the last row's cell is (0.8995 shows 89.9 % there; formatting the
    float alone gives 90.0 %), and a name of exactly 70 characters is shown whole (only longer ones are cut
    to 67 + '...'). Hand-made rows: no sample has such a share or name among its contributors."""
    name = "aten::" + "x" * 64
    assert len(name) == 70
    rows = pd.DataFrame({"Name": [name, "b"], "Base(ms)": [0.0, 0.0], "Comparison(ms)": [0.8995, 0.1005]})
    top = summary.top_contributors(rows, "operator")
    assert top["Name"].tolist() == [name] and float(top["Cumulative Share"].iloc[0]) == pytest.approx(0.8995)
    assert summary.coverage_text(top) == "1 row covers 89.9%"
    text = render_contributors(top)
    assert "(operator level: 1 row covers 89.9% of the operators' device-time change)" in text
    row = next(_cells(line) for line in text.splitlines() if line.startswith("|") and _cells(line)[0] == "1")
    assert row[1] == name and row[5:] == ["89.9%", "89.9%"]


# --------------------------------------------------------------------------- the gate


def test_gate_names_the_three_largest_grown_steps_and_counts_the_grown_contributors():
    """DB excerpts l2 -> l1 (the reverse of reference pair 3) with the operator comparison: the gate lists the
    three steps that grew most and "Top 4 contributors" for the four listed operators that grew. The steps'
    figures from the original's OverallMetrics of pair 3 (l1 / l2, ms): Uncovered Communication Time
    98.071947 / 90.080699 (+7.991), Free Time 30.943917 / 30.225247 (+0.719), Conv (Backward) 1.970891 /
    1.957882 (+0.013); the next growth, Conv (Forward) 1.114784 / 1.108784 (+0.006), is the fourth."""
    r = compare(str(DB_L2), str(DB_L1), enable_profiling_compare=True, enable_operator_compare=True)
    code, message = r.regression_gate(5)
    lines = message.splitlines()
    assert code == 3 and lines[0].startswith("Performance regression: E2E time 129.206 ms -> 137.919 ms (+6.74%)")
    assert ("Largest waterfall steps: 90.91.105.46%enp189s0f0_60000_0 (uncovered) +7.991 ms, Free: Other "
            "+0.719 ms, Conv (Backward) +0.013 ms") in lines
    grown = r.contributors[r.contributors["Diff(ms)"].astype(float) > 0]
    assert len(grown) == 4
    i = lines.index("Top 4 contributors (operator level):")
    assert [line.split(": +")[0].strip() for line in lines[i + 1:i + 5]] == grown["Name"].tolist()


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
    assert summary.EXPORT_CHECK not in g["Check"].tolist()
    g = compare(str(NPU_EXCERPT), str(NPU_EXCERPT), enable_operator_compare=True).guards.set_index("Check")
    assert g.loc[summary.EXPORT_CHECK, ["Status", "Base", "Comparison"]].tolist() == ["ok", "text", "text"]


def test_db_step_zero_is_the_scope_of_the_breakdown(tmp_path):
    """A DB export limits its time breakdown to the step asked for, step 0 included (a run profiled from its
    first iteration): the check shows "step 0", not "whole profile". No sample numbers a step 0: the l1 DB
    excerpt with its step renamed 0 (STEP_TIME id and the ProfilerStep#50 marker)."""
    db = edited_copy(DB_L1, tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE STEP_TIME SET id = 0",
                     "UPDATE STRING_IDS SET value = 'ProfilerStep#0' WHERE value = 'ProfilerStep#50'")
    assert sql(db, "SELECT id FROM STEP_TIME") == [(0,)]
    g = compare(str(db), str(db), base_step="0", comparison_step="0",
                enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc[summary.STEP_CHECK, ["Status", "Base", "Comparison"]].tolist() == ["ok", "step 0", "step 0"]


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
    before = summary.waterfall(b, c).set_index("Step")
    assert "Other Computing" not in before.index and "Other Communication (uncovered)" not in before.index
    b.computing_ns += 1000
    b.uncovered_comm_ns += 1000
    b.e2e_ns += 2000
    wf = summary.waterfall(b, c).set_index("Step")
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
    wf = summary.waterfall(b, c)
    comm = wf.loc[wf["Category"] == "communication", "Step"].tolist()
    assert comm == ["90.91.105.46%enp189s0f0_60000_0 (uncovered)", "Group 9 Communication (uncovered)"]


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
    early = summary._early_row((b, c))
    assert (early["Status"], early["Base"], early["Comparison"]) == ("note", 0.1, 0.0)
    b.longest_idle = Stretch(b.longest_idle.start_ns, 2_500_000, 0)
    c.longest_idle = Stretch(c.longest_idle.start_ns, 2_294_075, 0)
    idle = summary._idle_row((b, c))
    assert idle["Status"] == "note"
    assert "both sides' E2E and Free Time mostly measure that stretch, and so does the E2E difference" in idle["Detail"]
