"""NPU text breakdown and OverallMetrics / console rules a mutation audit found untested: the MC2 SQE window's
end bound, its PMU rounding, the Tensor Move name rule, the wait history "RRNR", and OverallMetrics / console
rows on hand-made breakdowns (SDMA under Free Time, MC2 in Cube Time, group and pair labels, row order)."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd

from msprof_compare.compare import breakdown_npu as B
from msprof_compare.compare import overall
from msprof_compare.compare.breakdown import MC2, Breakdown
from msprof_compare.model import Profile, frame
from msprof_compare.options import Options

OPTS = Options(enable_profiling_compare=True)


def _npu(e2e_ns: int = 10_000_000, kind: str = "NPU") -> Breakdown:
    bd = Breakdown(kind)
    bd.e2e_ns, bd.computing_ns = e2e_ns, 4_000_000
    return bd


def _by_label(base: Breakdown, comp: Breakdown) -> dict:
    rows, _ = overall.overall_rows(base, comp)
    return {r[0]: r for r in rows}


# --------------------------------------------------------------------------- breakdown_npu


def test_mc2_sqe_ending_at_the_kernel_end_is_collected():
    """reference-1 §5.6: an SQE whose end equals the kernel's end (ts + dur) is inside it (``<= end``)."""
    bd = Breakdown("NPU")
    # kernel [0, 20): SQE ends 5, 12, 15, 20 all inside -> pairs (12-5) + (20-15) = 12
    B.add_mc2(bd, np.array([5, 12, 15, 20]), np.array([0]), np.array(["M"], dtype=object),
              np.array([0]), np.array([20]), np.array([0]))
    assert bd.mc2["M"].communication_ns == (12 - 5) + (20 - 15)


def _mc2_profile(aic_mac_us: float) -> Profile:
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="ascend_output")
    p.kernels = frame("kernels", {"name": ["C_CORE_SQE"] * 2, "ts": [0, 5], "dur": [5, 5],
                                  "pid": [1] * 2, "tid": [2] * 2, "stream": [2] * 2, "task_type": ["X"] * 2})
    p.kernel_details = pd.DataFrame({
        "Name": ["MatmulAllReduce"], "Type": ["MatmulAllReduce"], "ts": [0], "dur": [25],
        "Duration(us)": [0.025], "aiv_vec_time(us)": [1.0], "aic_mac_time(us)": [aic_mac_us],
        "aic_mte2_time(us)": [0.0], "aiv_time(us)": [0.0]})
    return p


def test_mc2_computing_rounds_us_to_the_nearest_ns():
    """MC2 Computing is the PMU time in us turned to ns by rounding, not truncating: 0.0027 us -> 3 ns
    (0.0027 * 1000 = 2.7), 0.0021 us -> 2 ns. Synthetic kernel_details row (no sample has an MC2 kernel)."""
    assert B.npu_breakdown(_mc2_profile(0.0027), OPTS).mc2["MatmulAllReduce"].computing_ns == 3
    assert B.npu_breakdown(_mc2_profile(0.0021), OPTS).mc2["MatmulAllReduce"].computing_ns == 2


def test_an_mc2_kernel_without_a_start_takes_no_sqe_task():
    """An MC2 kernel whose Start Time was no number (ts -1, start_read False) was walked as starting at -1 ns: in a
    trace whose times start near 0 it took the C_CORE_SQE tasks (ends 5, 10) of the kernel that does start there,
    and moved the shared pointer past them. Its time and count still go to its MC2 row; the SQE pair is the
    read kernel's (10 - 5). Synthetic rows (no sample has an MC2 kernel)."""
    p = _mc2_profile(0.0)
    p.kernel_details = pd.DataFrame({
        "Name": ["MatmulAllReduce", "MatmulReduceScatter"], "Type": ["MatmulAllReduce", "MatmulReduceScatter"],
        "ts": [-1, 0], "start_read": [False, True], "dur": [25, 25], "Duration(us)": [0.025, 0.025],
        "aiv_vec_time(us)": [1.0, 1.0], "aic_mac_time(us)": [0.0, 0.0], "aic_mte2_time(us)": [0.0, 0.0],
        "aiv_time(us)": [0.0, 0.0]})
    mc2 = B.npu_breakdown(p, OPTS).mc2
    assert {n: (m.ns, m.count, m.communication_ns) for n, m in mc2.items()} == {
        "MatmulAllReduce": (25, 1, 0), "MatmulReduceScatter": (25, 1, 10 - 5)}


def test_tensor_move_needs_both_the_inplace_copy_prefix_and_the_word():
    """reference-1 §3.7: SDMA (Tensor Move) is an ``aclnnInplaceCopy*`` kernel whose name also says TensorMove
    (the level1 sample's ``aclnnInplaceCopy_TensorMoveAiCore_TensorMove``); a name with only one of the two is
    an ordinary Vector kernel. Rows: that real name plus two edited ones, vector PMU time only."""
    p = Profile(path="synthetic", kind="NPU", source="ascend_text", level="ascend_output")
    names = ["aclnnInplaceCopy_TensorMoveAiCore_TensorMove", "aclnnInplaceCopy_CastAiCore_Cast",
             "aclnnAdd_TensorMoveAiCore_TensorMove"]
    p.kernel_details = pd.DataFrame({
        "Name": names, "Type": ["TensorMove", "Cast", "TensorMove"], "ts": [0, 100, 200], "dur": [7, 11, 13],
        "aiv_vec_time(us)": [0.005, 0.009, 0.010], "mac_time(us)": [0.0, 0.0, 0.0]})
    bd = B.npu_breakdown(p, OPTS)
    assert (bd.buckets["sdma_tm"].ns, bd.buckets["sdma_tm"].count) == (7, 1)
    vector = bd.buckets["vector_trans"].ns + bd.buckets["vector_notrans"].ns
    assert vector == 11 + 13


def test_wait_history_rrnr_needs_all_four_letters():
    """reference-1 §5.7: a Notify_Wait is left out after "RRNR"; after "ORNR" (other, RDMASend, Notify_Wait,
    RDMASend) it still counts as waiting."""
    names = ["Memcpy", "RDMASend", "Notify_Wait", "RDMASend", "Notify_Wait",
             "RDMASend", "RDMASend", "Notify_Wait", "RDMASend", "Notify_Wait"]
    tasks = pd.DataFrame({"name": names, "tid": [1] * len(names), "ts": range(len(names))})
    # index 2: history "OOOR"... counts; 4: "ORNR" counts; 7: after "NRR" ends in RR -> out; 9: "RRNR" -> out
    assert B.wait_candidates(tasks).tolist() == [False, False, True, False, True,
                                                 False, False, False, False, False]


# --------------------------------------------------------------------------- OverallMetrics rows


def test_free_row_leaves_out_sdma_on_compute_streams():
    """reference-1 §9.4: under Free Time, "\\tSDMA" is the stream SDMA time and "\\tFree" the rest:
    free = 10 - 4 = 6 ms, SDMA 1.5 ms -> Free 4.5 ms."""
    b, c = _npu(), _npu()
    b.sdma_stream.add(1_500_000, 3)
    rows = _by_label(b, c)
    assert rows["Free Time"][1] == 6.0 and rows["\tSDMA"][1] == 1.5
    assert rows["\tFree"][1] == 4.5 and rows["\tFree"][4] == 6.0


def test_mc2_rows_follow_base_order_then_comparison_only():
    """MC2 blocks: base's kernels in their order, then those only the comparison has."""
    b, c = _npu(), _npu()
    b.mc2 = {"MatmulAllReduce": MC2(ns=1_000_000, count=1)}
    c.mc2 = {"AllGatherMatmul": MC2(ns=2_000_000, count=2), "MatmulAllReduce": MC2(ns=3_000_000, count=1)}
    rows, _ = overall.overall_rows(b, c)
    labels = [r[0] for r in rows if r[0] in ("\tMatmulAllReduce", "\tAllGatherMatmul")]
    assert labels == ["\tMatmulAllReduce", "\tAllGatherMatmul"]


def test_group_label_with_a_pg_name_that_pairs_by_key():
    """reference-1 §9.4 item 26: a group with a pg name but no pairing by it is shown as "\\t<pg>: <key>"."""
    b, c = _npu(), _npu()
    b.groups = {"Group 1 Communication": {"wait": 0, "transmit": 100_000}}
    b.pg_names = {"Group 1 Communication": "dp"}
    c.groups = {"Group 1 Communication": {"wait": 0, "transmit": 200_000}}
    rows = _by_label(b, c)
    assert rows["\tdp: Group 1 Communication"][1] == 0.1 and rows["\tdp: Group 1 Communication"][4] == 0.2


def test_pg_name_held_by_two_groups_does_not_pair_by_name():
    """Only a pg name held by exactly one group on each side pairs by name; two "tp" groups on the base pair by
    key instead (Group 1 with Group 1), so no "\\ttp: Communication" row."""
    b, c = _npu(), _npu()
    b.groups = {"Group 1 Communication": {"wait": 0, "transmit": 100_000},
                "Group 2 Communication": {"wait": 0, "transmit": 300_000}}
    b.pg_names = {"Group 1 Communication": "tp", "Group 2 Communication": "tp"}
    c.groups = {"Group 1 Communication": {"wait": 0, "transmit": 500_000}}
    c.pg_names = {"Group 1 Communication": "tp"}
    rows = _by_label(b, c)
    assert "\ttp: Communication" not in rows
    assert rows["\ttp: Group 1 Communication"][1] == 0.1 and rows["\ttp: Group 1 Communication"][4] == 0.5


def test_group_pair_rows_base_order_first():
    """Pair rows: the base's pairs first, then the comparison's others."""
    b, c = _npu(), _npu()
    b.group_pairs = {("G1", "G2"): 10_000}
    c.group_pairs = {("G3", "G4"): 20_000, ("G1", "G2"): 30_000}
    rows, _ = overall.overall_rows(b, c)
    labels = [r[0] for r in rows if r[0].startswith("\t\tG")]
    assert labels == ["\t\tG1 & G2", "\t\tG3 & G4"]


# --------------------------------------------------------------------------- console summary


def test_console_cube_time_counts_mc2_kernels():
    """reference-1 §10: Cube Time = Matmul (Cube + Vector) + other Cube + MC2: 1 + 0.5 + 2 = 3.5 s."""
    b, c = _npu(), _npu()
    b.buckets["matmul_cube"].add(1_000_000_000, 1)
    b.buckets["other_cube"].add(500_000_000, 2)
    b.mc2 = {"MatmulAllReduce": MC2(ns=2_000_000_000, count=1)}
    t = overall.summary_table(b, c)
    assert t["rows"][0][t["headers"].index("Cube Time(Num)")] == "3.500s(3)"


def test_console_other_time_is_zero_on_the_gpu_side():
    """reference-1 §8.3: the GPU side never computes Other Time for the console (shown 0.000s)."""
    g, n = _npu(kind="GPU"), _npu()
    g.computing_ns = n.computing_ns = 4_000_000_000
    t = overall.summary_table(g, n)
    col = t["headers"].index("Other Time")
    assert [r[col] for r in t["rows"]] == ["0.000s", "4.000s"]


def test_console_e2e_header_not_minimal_profiling_when_a_side_is_npu():
    """The E2E header says "(Not minimal profiling)" whenever a side is NPU (reference-1 §8.4, §10), on either side."""
    g1, g2, n = _npu(kind="GPU"), _npu(kind="GPU"), _npu()
    assert overall.summary_table(g1, g2)["headers"][-1] == "E2E Time"
    for pair in ((g1, n), (n, g1)):
        assert overall.summary_table(*pair)["headers"][-1] == "E2E Time(Not minimal profiling)"


# --------------------------------------------------------------------------- CommunicationCompare


def test_collective_word_of_gather_scatter_and_alltoallv():
    """PyTorch's Collective names outside NCCL's kernel words still name HCCL families: ``_gather`` ->
    ``gather``, ``scatter`` -> ``scatter``, ``all_to_allv`` -> ``alltoallv``."""
    from msprof_compare.compare.communication import collective_word

    assert [collective_word(t) for t in ("_gather", "scatter", "all_to_allv", "barrier")] == [
        "gather", "scatter", "alltoallv", None]


def test_hccl_events_in_any_file_order_give_the_same_sheets(samples, tmp_path) -> None:
    """CommunicationCompare (and the wait history) walk each plane's tasks in start order; the exporter writes them
    so, and nothing else tells that order. Synthetic edit of the level1 sample: its HCCL process's events written
    in reverse, the rest of the file as it is. Expected: every cell of OverallMetrics and CommunicationCompare as
    for the unedited file, whose figures the reference workbook of pair 1 holds (checked by the reference tests).
    The sample has no wait time, so the wait history's own sort is not exercised here."""
    import json
    import shutil

    import pandas as pd

    from msprof_compare import compare

    level = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
    src = samples / level.format(1)
    copy = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, copy)
    tv = copy / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text(encoding="utf-8"))
    hccl = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "HCCL"}
    at = [i for i, e in enumerate(events) if e.get("pid") in hccl and e.get("ph") == "X"]
    assert len(at) > 100 and len({events[i]["tid"] for i in at}) > 1  # tasks of several planes
    moved = [events[i] for i in at]
    for i, e in zip(at, reversed(moved), strict=True):
        events[i] = e
    tv.write_text(json.dumps(events), encoding="utf-8")
    other = samples / level.format(2)
    want = compare(str(src), str(other), enable_profiling_compare=True, enable_communication_compare=True)
    got = compare(str(copy), str(other), enable_profiling_compare=True, enable_communication_compare=True)
    for name in ("OverallMetrics", "CommunicationCompare"):
        pd.testing.assert_frame_equal(got.sheet(name), want.sheet(name))
    assert len(want.sheet("CommunicationCompare")) > 4


def test_hccl_groups_of_two_runs_pair_with_their_overlaps():
    """A DB export names each group by its HCCL name, which ends in the group's creation time (us): two runs of
    one job (the level-1 / level-2 DB samples: ..._1736410538306028 and ..._1736414082311975) never had an equal
    key, so every group showed as leaving (Diff Ratio 0) and arriving (INF). Groups that differ only by that time
    pair under the name without it, and so do the rows of their overlaps; a stem two groups of one side share
    pairs nothing, and a key present on both sides keeps its pair (one run against itself)."""
    tp, dp = "90.91.105.46%enp189s0f0_60000_0", "90.91.105.46%enp189s0f0_60001_1"
    b, c = _npu(), _npu()
    b.groups = {f"{tp}_1736410538306028": {"wait": 1_000_000, "transmit": 2_000_000},
                f"{dp}_1736410538400000": {"wait": 0, "transmit": 500_000}}
    c.groups = {f"{tp}_1736414082311975": {"wait": 3_000_000, "transmit": 2_000_000},
                f"{dp}_1736414082400000": {"wait": 0, "transmit": 250_000}}
    b.group_pairs = {(f"{tp}_1736410538306028", f"{dp}_1736410538400000"): 400_000}
    c.group_pairs = {(f"{tp}_1736414082311975", f"{dp}_1736414082400000"): 100_000}
    b.uncovered_comm_ns, c.uncovered_comm_ns = 3_500_000, 5_250_000
    rows, _ = overall.overall_rows(b, c)
    labels = [r[0] for r in rows]
    start = labels.index("Uncovered Communication Time") + 1
    assert labels[start:labels.index("Free Time")] == [
        f"\t{tp}", "\t\tWait", "\t\tTransmit", f"\t{dp}", "\t\tTransmit",
        "\tUncovered Communication Overlapped", f"\t\t{tp} & {dp}"]
    block = [(r[1], r[4], r[7], r[8]) for r in rows[start:labels.index("Free Time")]]
    assert block == [(3.0, 5.0, 2.0, 1.6667), (1.0, 3.0, 2.0, 3.0), (2.0, 2.0, 0.0, 1.0), (0.5, 0.25, -0.25, 0.5),
                     (0.5, 0.25, -0.25, 0.5), (0.4, 0.1, -0.3, 0.25), (0.4, 0.1, -0.3, 0.25)]
    # one run against itself: equal keys pair as they are, under their full names
    same = [r[0] for r in overall.overall_rows(b, b)[0]]
    assert f"\t{tp}_1736410538306028" in same and f"\t{tp}" not in same
    # two groups of the base share a stem: that stem pairs nothing, each side keeps its full names
    b.groups[f"{tp}_1736410538999999"] = {"wait": 0, "transmit": 100_000}
    two = [r[0] for r in overall.overall_rows(b, c)[0]]
    assert f"\t{tp}_1736410538306028" in two and f"\t{tp}_1736414082311975" in two and f"\t{dp}" in two


def test_hccl_op_rows_by_name_and_by_core_on_a_real_kernel_details(samples):
    """``hccl_op_rows`` flags a kernel_details.csv row by either rule: a name starting ``hcom_``, or an Accelerator
    Core of HCCL (any case, padded). Text level 1's file holds four HCCL ops, data rows 79, 178, 180 and 182 (its
    lines 81, 180, 182 and 184, read by hand: ``hcom_allReduce__586_N_1``, core HCCL). Each rule alone still
    finds them; a missing core or name, or another core, flags nothing."""
    from msprof_compare.loaders import load_profile

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    with open(src / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as f:
        raw = list(csv.DictReader(f))
    hand = [79, 178, 180, 182]
    assert [raw[i]["Name"] for i in hand] == [f"hcom_allReduce__586_{n}_1" for n in range(4)]
    assert {raw[i]["Accelerator Core"] for i in hand} == {"HCCL"}
    kd = load_profile(str(src), OPTS).kernel_details
    assert len(kd) == len(raw)
    assert np.flatnonzero(B.hccl_op_rows(kd)).tolist() == hand
    by_core = kd.copy()
    by_core["Name"] = by_core["Name"].where(~B.hccl_op_rows(kd), "allReduce")  # the core rule alone
    by_core.loc[hand[1], "Accelerator Core"] = " hccl "
    assert np.flatnonzero(B.hccl_op_rows(by_core)).tolist() == hand
    by_name = kd.copy()
    by_name["Accelerator Core"] = by_name["Accelerator Core"].astype(object).where(
        ~B.hccl_op_rows(kd), None)  # the name rule alone, the core missing
    assert np.flatnonzero(B.hccl_op_rows(by_name)).tolist() == hand
    neither = by_core.copy()
    neither["Accelerator Core"] = neither["Accelerator Core"].astype(object).where(~B.hccl_op_rows(kd), "AI_CORE")
    neither.loc[hand[0], "Name"] = None
    assert not B.hccl_op_rows(neither).any()


def test_a_row_of_core_communication_is_an_hccl_op_whatever_its_name(samples, tmp_path):
    """Newer torch_npu writes an HCCL op's Accelerator Core as COMMUNICATION (msinsight's st/level2: 15 rows on
    rank 0, every one also named ``hcom_``), as its trace names the HCCL process "Communication" or "HCCL"
    (reference-1 §5.1). Where the two signals disagree, the core decides: a copy of text level 1 whose four HCCL ops
    (data rows 79, 178, 180, 182) read core COMMUNICATION and lose the ``hcom_`` prefix are still HCCL ops, so the
    breakdown's kernels without PMU values are its two DSA_SQE rows alone (3.4 + 2.12 us, read by hand), not those
    plus 106 ms of all-reduce."""
    import io
    import shutil

    from msprof_compare.loaders import load_profile

    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    with open(samples / "msinsight/test/st/level2/rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
              newline="", encoding="utf-8") as f:
        st = [(r["Accelerator Core"], r["Name"].startswith("hcom_")) for r in csv.DictReader(f)
              if r["Accelerator Core"] == "COMMUNICATION"]
    assert len(st) == 15 and all(named for _, named in st)
    dest = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dest)
    kd_csv = dest / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(kd_csv.read_text(encoding="utf-8"), newline="")))
    name, core = rows[0].index("Name"), rows[0].index("Accelerator Core")
    hand = [79, 178, 180, 182]
    for i in hand:
        assert rows[i + 1][core] == "HCCL" and rows[i + 1][name].startswith("hcom_")
        rows[i + 1][core], rows[i + 1][name] = "COMMUNICATION", rows[i + 1][name][len("hcom_"):]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    kd_csv.write_text(out.getvalue(), encoding="utf-8")
    profile = load_profile(str(dest), OPTS)
    assert not B.hcom_name(str(profile.kernel_details["Name"].iloc[hand[0]]))
    assert np.flatnonzero(B.hccl_op_rows(profile.kernel_details)).tolist() == hand
    bd = B.npu_breakdown(profile, OPTS)
    assert (bd.no_pmu_kernels.count, bd.no_pmu_kernels.ns) == (2, 3_400 + 2_120)
