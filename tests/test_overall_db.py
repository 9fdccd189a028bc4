"""OverallMetrics of DB inputs against the original's output (reference pair 3) and the text export.

Pair 3 = base msinsight/.../db/level1/rank0_ascend_pt, comparison .../db/level2/rank0_ascend_pt; the tests
run on the excerpts in tests/data/db (same figures, see its README) and read the reference xlsx.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from dbutil import edited_copy, sql, string_id
from spans import minus, overlap_walk, union
from test_json_report import SCHEMA, validate
from test_overall_npu import BASE_ZERO
from xlsxutil import read_xlsx

from msprof_compare import api, timeline
from msprof_compare.compare import breakdown_db as BD
from msprof_compare.compare.breakdown import Breakdown
from msprof_compare.compare.breakdown_db import db_breakdown
from msprof_compare.compare.breakdown_npu import npu_breakdown, wait_candidates
from msprof_compare.errors import StepError
from msprof_compare.loaders import load_profile
from msprof_compare.model import Profile, frame
from msprof_compare.options import build_options
from msprof_compare.report import json_report
from msprof_compare.report.summary_console import memory_line

DATA = Path(__file__).parent / "data" / "db"
L1 = str(DATA / "l1" / "ascend_pytorch_profiler_0.db")
L2 = str(DATA / "l2" / "ascend_pytorch_profiler_0.db")


def _without_wait_note(notes: list[str]) -> list[str]:
    """The notes under the table but a text export's zero Wait Time line (tests/test_mindspore_user_leftovers.py
    pins it), which every level-1/2 text side has and which is no part of what this file checks."""
    return [n for n in notes if "is that of the HCCL plane that waits least" not in n]


def reference(reference_outputs: Path) -> pd.DataFrame:
    f = reference_outputs / "3-npu-db-l1-vs-l2" / "performance_comparison_result.xlsx"
    return read_xlsx(f, sheet_name="OverallMetrics", header=2)


def ours(**kw) -> pd.DataFrame:
    return api.compare(L1, L2, enable_profiling_compare=True, **kw).sheet("OverallMetrics")


def _group_rows(df: pd.DataFrame) -> np.ndarray:
    """The group blocks: the rows between Uncovered Communication Time and Free Time (pair 3 has no overlap rows)."""
    idx = df["Index"].tolist()
    mask = np.zeros(len(df), dtype=bool)
    mask[idx.index("Uncovered Communication Time") + 1:idx.index("Free Time")] = True
    return mask


def test_pair3_rows_and_figures(reference_outputs: Path) -> None:
    ref = reference(reference_outputs)
    got = ours()
    rg, gg = _group_rows(ref), _group_rows(got)
    assert got.loc[~gg, "Index"].tolist() == ref.loc[~rg, "Index"].tolist()
    for col in ("Duration(ms)", "Duration(ms).1"):
        r = ref.loc[~rg, col].to_numpy(dtype=float)
        g = got.loc[~gg, col].to_numpy(dtype=float)
        assert np.allclose(g, r, rtol=0.005, atol=1e-9), col
    for col in ("Number", "Number.1"):
        assert got.loc[~gg, col].astype(str).tolist() == ref.loc[~rg, col].astype(str).tolist()


def test_pair3_group_of_two_runs_is_one_block(reference_outputs: Path) -> None:
    """The group's HCCL name ends in its creation time, which differs between the two runs: the original shows
    it leaving (Diff Ratio 0) and another arriving (INF), six rows in which no Wait or Transmit change can be
    read. Ours pairs them under the name without the time (the figures are those of
    test_group_rows_differ_only_by_the_documented_defect)."""
    ref = reference(reference_outputs)
    got = ours()
    rows = ref.loc[_group_rows(ref)]
    assert rows["Index"].tolist() == ["\t90.91.105.46%enp189s0f0_60000_0_1736410538306028", "\t\tWait", "\t\tTransmit",
                                      "\t90.91.105.46%enp189s0f0_60000_0_1736414082311975", "\t\tWait", "\t\tTransmit"]
    mine = got.loc[_group_rows(got)]
    assert mine["Index"].tolist() == ["\t90.91.105.46%enp189s0f0_60000_0", "\t\tWait", "\t\tTransmit"]
    # one group per side, so it carries all of the side's uncovered communication (the reference's falls short)
    total = got.set_index("Index").loc["Uncovered Communication Time"]
    assert mine["Duration(ms)"].iloc[0] == total["Duration(ms)"]
    assert mine["Duration(ms).1"].iloc[0] == total["Duration(ms).1"]
    assert mine["Duration(ms)"].iloc[1] + mine["Duration(ms)"].iloc[2] == pytest.approx(mine["Duration(ms)"].iloc[0])
    # in the reference each block holds one side only
    assert (ref.loc[rows.index[3:], "Duration(ms)"] == 0).all()
    assert (ref.loc[rows.index[:3], "Duration(ms).1"] == 0).all()
    # a pair of figures, so a change per row, not 0 and INF
    assert mine["Diff Ratio"].tolist() == [round(c / b, 4) for b, c in zip(mine["Duration(ms)"],
                                                                           mine["Duration(ms).1"], strict=True)]


def test_pair3_exact_non_group_values(reference_outputs: Path) -> None:
    """Every figure the DB fully determines is equal to the reference to the ns (values are ms)."""
    ref = reference(reference_outputs)
    got = ours()
    rg, gg = _group_rows(ref), _group_rows(got)
    for col in ("Duration(ms)", "Duration(ms).1"):
        assert np.allclose(got.loc[~gg, col].to_numpy(float), ref.loc[~rg, col].to_numpy(float),
                           rtol=0, atol=1e-6)
    # and the figures derived from them: ratios to E2E, and the diffs (exact: both round the same ms)
    for col in ("Duration Ratio", "Duration Ratio.1"):
        assert np.allclose(got.loc[~gg, col].to_numpy(float), ref.loc[~rg, col].to_numpy(float),
                           rtol=1e-9, atol=0), col
    for col in ("Diff Duration(ms)", "Diff Ratio"):
        assert got.loc[~gg, col].astype(float).tolist() == ref.loc[~rg, col].astype(float).tolist(), col


def _quirk_windows(profile) -> timeline.Intervals:
    """The original's windows: only busy intervals that begin with a communication op (its defect)."""
    k, c = profile.kernels, profile.comm[profile.comm["lane"] == "op"]
    ks, ke = k["ts"].to_numpy(), (k["ts"] + k["dur"]).to_numpy()
    cs, ce = c["ts"].to_numpy(), (c["ts"] + c["dur"]).to_numpy()
    busy = timeline.union(np.r_[ks, cs], np.r_[ke, ce])
    opened_by_comm = np.isin(busy[0], cs) & ~np.isin(busy[0], ks)
    return timeline.subtract((busy[0][opened_by_comm], busy[1][opened_by_comm]), timeline.union(ks, ke))


def _independent_groups(profile, windows: timeline.Intervals, walk: bool) -> tuple[int, int]:
    """(wait, uncovered) of the single group, computed here from the tables."""
    c = profile.comm
    ops = c[c["lane"] == "op"]
    tasks = c[c["lane"] == "task"].sort_values("ts", kind="stable")
    lane = pd.factorize(pd.Series(list(zip(tasks["group"], tasks["plane"], strict=True))))[0]
    cand = tasks[wait_candidates(pd.DataFrame({"name": tasks["name"].to_numpy(), "tid": lane}))]
    best = cand.groupby("plane", sort=False)["dur"].sum().idxmin()
    sel = cand[cand["plane"] == best]

    def measure(df: pd.DataFrame) -> int:
        s, e = df["ts"].to_numpy(), (df["ts"] + df["dur"]).to_numpy()
        if walk:
            return overlap_walk(windows[0], windows[1], s, e)
        return timeline.length(timeline.intersect((s, e), windows))

    return measure(sel), measure(ops)


@pytest.mark.parametrize("path,col", [(L1, "Duration(ms)"), (L2, "Duration(ms).1")])
def test_group_rows_differ_only_by_the_documented_defect(reference_outputs: Path, path: str, col: str) -> None:
    """The original's group rows equal our reconstruction of its defect; ours are the exact figures.

    With one group, its uncovered communication must equal "Uncovered Communication Time"; the original's
    falls short because it drops windows of busy intervals that start with a kernel (docs/differences.md).
    """
    opts, _ = build_options(enable_profiling_compare=True)
    profile = load_profile(path, opts)
    ref = reference(reference_outputs)
    rows = ref.loc[_group_rows(ref), ["Index", col]]
    rows = rows[rows[col] != 0]
    ref_total, ref_wait = rows[col].iloc[0], rows[col].iloc[1]
    q_wait, q_unc = _independent_groups(profile, _quirk_windows(profile), walk=True)
    assert q_unc / 1e6 == pytest.approx(ref_total, abs=1e-6)
    assert q_wait / 1e6 == pytest.approx(ref_wait, abs=1e-6)
    bd = db_breakdown(profile)
    (g,) = bd.groups
    windows = timeline.subtract(
        timeline.union(np.r_[profile.kernels["ts"], profile.comm.loc[profile.comm["lane"] == "op", "ts"]],
                       np.r_[profile.kernels["ts"] + profile.kernels["dur"],
                             (profile.comm["ts"] + profile.comm["dur"])[profile.comm["lane"] == "op"]]),
        timeline.union(profile.kernels["ts"], profile.kernels["ts"] + profile.kernels["dur"]))
    wait, unc = _independent_groups(profile, windows, walk=False)
    assert bd.groups[g] == {"wait": wait, "transmit": unc - wait}
    assert unc == bd.uncovered_comm_ns  # one group: it carries all uncovered communication


def test_step_50_gives_that_steps_figures() -> None:
    """The samples hold one step (STEP_TIME id 50) spanning everything: the step run equals the plain run."""
    plain = ours()
    step = ours(base_step=50, comparison_step=50)
    pd.testing.assert_frame_equal(plain, step)


def test_absent_step_exits_2() -> None:
    with pytest.raises(StepError, match="please choose from the valid steps: 50") as e:
        ours(base_step=7, comparison_step=50)
    assert e.value.exit_code == 2


def test_cli_absent_step_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cli = pytest.importorskip("msprof_compare.cli")
    with pytest.raises(SystemExit) as e:
        cli.compare_main(["-bp", L1, "-d", L2, "--enable_profiling_compare", "--base_step", "50",
                          "--comparison_step", "3", "-o", str(tmp_path)])
    assert e.value.code == 2
    assert "valid steps: 50" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_text_and_db_export_of_the_same_workload(samples: Path) -> None:
    """Level-1 text vs DB export of the same AlexNet script: two separate runs, so only stable facts match.

    Comparable: the kernel population of one training step (same model and batch) -> Conv / Matmul / SDMA
    (Tensor Move) counts equal, and computing time within 2% (run-to-run noise of the same kernels).
    Not comparable: communication and E2E (they depend on when the other rank arrives: allreduce wait),
    Mem Usage (the text memory_record.csv also lists the APP component, the DB MEMORY_RECORD only GE/PTA),
    and the Vector count: kernel_details.csv lists the two DSAGenBitMask tasks (Accelerator Core DSA_SQE) that
    COMPUTE_TASK_INFO holds, but with no PMU value, so the text export leaves them to Other (reference-1 §5.3)
    where the DB export files them under Vector (No Trans) (§7.3.2); read from the CSV below.
    """
    base = samples / "msinsight/test/data/pytorch"
    opts, _ = build_options(enable_profiling_compare=True)
    text = npu_breakdown(load_profile(str(base / "text/level1/rank0_ascend_pt"), opts))
    db = db_breakdown(load_profile(str(base / "db/level1/rank0_ascend_pt"), opts))
    for name in ("conv_fwd_cube", "conv_fwd_vector", "conv_bwd_cube", "conv_bwd_vector", "matmul_cube",
                 "matmul_vector", "vector_trans", "sdma_tm"):
        assert text.b(name).count == db.b(name).count, name
    with open(base / "text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", newline="") as f:
        dsa = [r for r in csv.DictReader(f) if r["Accelerator Core"] == "DSA_SQE"]
    assert [r["aiv_vec_time(us)"] for r in dsa] == ["N/A", "N/A"]  # no PMU value: an invalid row of the text export
    dsa_ns = sum(round(float(r["Duration(us)"]) * 1000) for r in dsa)  # 3.4 + 2.12 us
    assert (text.no_pmu_kernels.count, text.no_pmu_kernels.ns) == (len(dsa), dsa_ns) == (2, 5520)
    assert db.b("vector_notrans").count - text.b("vector_notrans").count == len(dsa)
    assert db.computing_count - text.computing_count == 2
    assert db.computing_ns == pytest.approx(text.computing_ns, rel=0.02)
    for name in ("conv_fwd_cube", "conv_bwd_cube", "matmul_cube"):
        assert db.b(name).ns == pytest.approx(text.b(name).ns, rel=0.05), name


def test_db_side_bandwidth_of_zero_is_explained(samples: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A user switching from the text export to the DB export of one job (level-1 samples) saw SDMA Bandwidth
    fall from 15.654GB/s to 0.000GB/s without a word: a DB holds no communication.json. The DB side is now
    named in one warning; a DB-vs-DB run, whose console has no bandwidth column, gets none. The line said "a DB
    export holds no bandwidth figures", but its analysis.db does (per op), which compare never reads: it says so.
    It is a note under the console table now, where the cell is, as the Mem Usage note (it was a log line)."""
    base = samples / "msinsight/test/data/pytorch"
    text, db = base / "text/level1/rank0_ascend_pt", base / "db/level1/rank0_ascend_pt"
    comm = json.loads((text / "ASCEND_PROFILER_OUTPUT/communication.json").read_text(encoding="utf-8"))
    sdma = comm["step50"]["collective"]["Total Op Info"]["Communication Bandwidth Info"]["SDMA"]
    expected = f"{sdma['Transit Size(MB)'] / sdma['Transit Time(ms)']:.3f}GB/s"
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = api.compare(str(text), str(db), enable_profiling_compare=True)
    headers = res.summary["headers"]
    assert [row[headers.index("SDMA Bandwidth")] for row in res.summary["rows"]] == [expected, "0.000GB/s"]
    assert _without_wait_note(res.summary["notes"]) == [
        "Comparison row: a DB export writes its bandwidth to analysis.db, which the comparison does not read (as the "
        "original), so its SDMA Bandwidth 0.000GB/s is not a measurement."]
    assert not [r for r in caplog.records if "andwidth" in r.getMessage()]
    # the premise of that line, by SQL: the export's analysis.db has the per-op bandwidth rows, SDMA among them
    analysis = db / "ASCEND_PROFILER_OUTPUT" / "analysis.db"
    assert sql(analysis, "SELECT count(*) FROM CommAnalyzerBandwidth WHERE transport_type = 'SDMA'")[0][0] == 4
    caplog.clear()
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = api.compare(str(db), str(base / "db/level2/rank0_ascend_pt"), enable_profiling_compare=True)
    assert "SDMA Bandwidth" not in res.summary["headers"]
    assert res.summary["notes"] == [] and not [r for r in caplog.records if "andwidth" in r.getMessage()]


def test_mc2_from_db(tmp_path: Path) -> None:
    """MC2 kernels of a DB export (no sample has one): one compute task of the level-1 excerpt renamed
    MatmulAllReduce, four C_CORE_SQE tasks written inside it and its PMU values set here; the expected
    figures follow from those rows (reference-1 §5.6), as the text path's ``test_mc2_sqe_pairing``."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(L1, db)
    con = sqlite3.connect(db)
    try:
        gid, start, end = con.execute(
            "SELECT t.globalTaskId, t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
            "WHERE t.endNs - t.startNs > 1000 ORDER BY t.startNs LIMIT 1").fetchone()
        con.execute("UPDATE COMPUTE_TASK_INFO SET name = ? WHERE globalTaskId = ?",
                    (string_id(con, "MatmulAllReduce"), gid))
        span = end - start
        ends = [start + span // 8, start + span // 4, start + span // 2, start + 3 * span // 4]
        before = start - 50  # ends before the kernel: skipped by the pairing pointer
        for k, e in enumerate([before, *ends]):
            con.execute("INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, "
                        "streamId, taskId) VALUES (?, ?, 0, -1, ?, 0, ?, 99, ?)",
                        (e - 10, e, 10**9 + k, string_id(con, "C_CORE_SQE"), 10**6 + k))
        con.execute("DELETE FROM TASK_PMU_INFO WHERE globalTaskId = ?", (gid,))
        for name, v in (("aic_total_time", 5.0), ("aic_mac_time", 300.4), ("aic_mte2_time", 120.0),
                        ("aiv_total_time", 50.3)):
            con.execute("INSERT INTO TASK_PMU_INFO VALUES (?, ?, ?)", (gid, string_id(con, name), v))
        con.commit()
    finally:
        con.close()
    bd = db_breakdown(load_profile(str(db), build_options(enable_profiling_compare=True)[0]))
    assert list(bd.mc2) == ["MatmulAllReduce"]
    m = bd.mc2["MatmulAllReduce"]
    assert (m.ns, m.count) == (end - start, 1)
    assert m.communication_ns == (ends[1] - ends[0]) + (ends[3] - ends[2])
    assert m.computing_ns == 351  # max(aic_mac_time, aic_mte2_time) + aiv_time = 350.7 ns, rounded
    sheet = api.compare(str(db), L1, enable_profiling_compare=True).sheet("OverallMetrics")
    idx = sheet["Index"].tolist()
    i = idx.index("\tMatmulAllReduce")
    assert idx[i - 1] == "Computing Time" and idx[i + 1:i + 3] == ["\t\tComputing", "\t\tCommunication"]
    assert sheet["Number"].iloc[i] == 1 and sheet["Duration(ms)"].iloc[i] == pytest.approx((end - start) / 1e6)
    assert sheet["Duration(ms)"].iloc[i + 2] == pytest.approx(m.communication_ns / 1e6)
    assert (sheet["Duration(ms).1"].iloc[i], sheet["Number.1"].iloc[i]) == (0.0, "/")  # absent on that side


def _db_profile(kernels: list[tuple], ops: list[tuple], summary: list[tuple]) -> Profile:
    """A DB-side profile: compute tasks (ts, end, stream), communication ops (name, ts, end, group) and the
    TASK summary rows (rts type, stream, count, total ns)."""
    p = Profile(path="synthetic.db", kind="NPU", source="ascend_db")
    p.kernels = frame("kernels", {"name": ["k"] * len(kernels), "ts": [k[0] for k in kernels],
                                  "dur": [k[1] - k[0] for k in kernels], "stream": [k[2] for k in kernels]})
    p.comm = frame("comm", {"name": [o[0] for o in ops], "ts": [o[1] for o in ops], "dur": [o[2] - o[1] for o in ops],
                            "lane": ["op"] * len(ops), "group": [o[3] for o in ops], "plane": [""] * len(ops)})
    p.extra["task_summary"] = pd.DataFrame({
        "rts_type": [r[0] for r in summary], "stream": [r[1] for r in summary], "count": [r[2] for r in summary],
        "total_ns": [r[3] for r in summary], "first_start": [0] * len(summary), "last_end": [0] * len(summary)})
    return p


def test_db_lccl_sdma_and_overlapping_groups() -> None:
    """reference-1 §7.3.3-§7.3.8 on a hand-made DB profile (no DB sample has Lccl, SDMA or overlapping groups):
    Lccl ops by name, SDMA time on compute streams (stream 0 counts in DB mode), and two groups whose
    uncovered ops overlap."""
    p = _db_profile(kernels=[(0, 50, 0), (60, 90, 2)],
                    ops=[("KERNEL_AIVEC", 100, 500, "g1"), ("hcom_broadcast_", 300, 800, "g2")],
                    summary=[("EVENT_WAIT_SQE", 0, 1, 5), ("EVENT_WAIT_SQE", 4, 1, 5), ("SDMA_SQE", 0, 2, 70),
                             ("PCIE_DMA_SQE", 2, 1, 30), ("SDMA_SQE", 4, 3, 90)])
    bd = Breakdown(kind="NPU")
    BD._lccl(p, bd)
    assert (bd.lccl.ns, bd.lccl.count) == (400, 1)
    BD._sdma_stream(p, bd)
    # event-wait streams {0, 4} & compute streams {0, 2} = {0}: only stream 0's SDMA tasks count
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (70, 2)
    windows = BD._intervals(p, bd)
    # busy = [0, 50) + [60, 90) + [100, 800); computing 80; windows = [100, 800)
    assert (bd.computing_ns, bd.uncovered_comm_ns, bd.e2e_ns) == (80, 700, 800)
    BD._groups(p, bd, windows)
    assert bd.groups == {"g1": {"wait": 0, "transmit": 400}, "g2": {"wait": 0, "transmit": 500}}
    assert bd.group_pairs == {("g1", "g2"): 200}
    p.extra["task_summary"] = p.extra["task_summary"].iloc[2:]  # no event wait: every compute stream
    bd = Breakdown(kind="NPU")
    BD._sdma_stream(p, bd)
    assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (70 + 30, 3)


def test_db_mc2_walks_sqe_tasks_in_start_order() -> None:
    """Overlapping C_CORE_SQE tasks (10-120, 20-40, 50-60 ns) under an MC2 kernel 0-100 ns: in start order
    the first task ends after the kernel, so the pointer takes none (communication 0), as the text path
    (reference-1 §5.6, §7.3.2). Walked in end order it paired 40 and 60 (20 ns)."""
    p = Profile(path="synthetic.db", kind="NPU", source="ascend_db")
    p.extra["c_core_sqe"] = pd.DataFrame({"ts": np.array([10, 20, 50]), "end": np.array([120, 40, 60])})
    bd = Breakdown("NPU")
    BD._mc2(p, bd, np.array([0]), np.array(["MatmulAllReduce"], dtype=object), np.array([0]),
                      np.array([100]), np.array([60]))
    m = bd.mc2["MatmulAllReduce"]
    assert (m.ns, m.computing_ns, m.communication_ns, m.count) == (100, 60, 0, 1)


def test_groups_each_read_as_alone() -> None:
    """Each group's waiting plane's candidates come from one stable sort by (group, plane), and the groups with
    candidates are a dict, where a list scanned and a mask over every candidate per group grew with the square
    of the groups (4,000 groups 3.2 s -> 1.1 s CPU). No sample has more than one group: three copies of the l1
    excerpt's group 1 s apart, each its own group, the second without the tasks of the plane the first waits
    on least (another plane then decides), each read as that copy alone by the plain-pandas reading above."""
    profile = load_profile(L1, build_options(enable_profiling_compare=True)[0])
    c = profile.comm
    ops = c["lane"] == "op"
    windows = timeline.subtract(
        timeline.union(np.r_[profile.kernels["ts"], c.loc[ops, "ts"]],
                       np.r_[profile.kernels["ts"] + profile.kernels["dur"], (c["ts"] + c["dur"])[ops]]),
        timeline.union(profile.kernels["ts"], profile.kernels["ts"] + profile.kernels["dur"]))
    (group,) = set(c["group"])
    tasks = c[c["lane"] == "task"].sort_values("ts", kind="stable")
    lane = pd.factorize(pd.Series(list(zip(tasks["group"], tasks["plane"], strict=True))))[0]
    cand = tasks[wait_candidates(pd.DataFrame({"name": tasks["name"].to_numpy(), "tid": lane}))]
    best = cand.groupby("plane", sort=False)["dur"].sum().idxmin()
    copies = [c, c[~((c["lane"] == "task") & (c["plane"] == best))], c]
    span = 1_000_000_000
    assert int((c["ts"] + c["dur"]).max() - c["ts"].min()) < span
    want, parts, starts, ends = {}, [], [], []
    for k, d in enumerate(copies):
        d = d.assign(ts=d["ts"] + k * span, group=f"{group}_{k}")
        w = (windows[0] + k * span, windows[1] + k * span)
        wait, unc = _independent_groups(dataclasses.replace(profile, comm=d.reset_index(drop=True)), w, walk=False)
        want[f"{group}_{k}"] = {"wait": wait, "transmit": unc - wait}
        parts.append(d)
        starts.append(w[0])
        ends.append(w[1])
    assert want[f"{group}_0"] == want[f"{group}_2"] != want[f"{group}_1"] and want[f"{group}_0"]["wait"] > 0
    bd = Breakdown(kind="NPU")
    many = dataclasses.replace(profile, comm=pd.concat(parts, ignore_index=True))
    BD._groups(many, bd, (np.concatenate(starts), np.concatenate(ends)))
    assert bd.groups == want
    assert bd.wait_ns == sum(g["wait"] for g in want.values())


def test_group_wait_never_exceeds_its_uncovered_time(tmp_path: Path) -> None:
    """Wait is measured within the group's own uncovered op time. While tasks lie inside their ops that is
    the windows' figure (the real excerpt is unchanged); tasks whose group name is lost (NULL) form a group
    without ops, whose Transmit read -2.68 ms (uncovered 0 minus its wait)."""
    clean = db_breakdown(load_profile(L1, build_options()[0]))
    assert clean.groups and all(v["wait"] >= 0 and v["transmit"] >= 0 for v in clean.groups.values())
    copy = tmp_path / "ascend_pytorch_profiler_0.db"
    edited_copy(L1, copy, "UPDATE COMMUNICATION_TASK_INFO SET groupName = NULL")
    bd = db_breakdown(load_profile(str(copy), build_options()[0]))
    assert all(v["transmit"] >= 0 for v in bd.groups.values()), bd.groups
    assert bd.groups[""] == {"wait": 0, "transmit": 0}  # the nameless tasks' group has no op time
    named = [g for g in clean.groups if g]
    assert all(bd.groups[g]["wait"] == 0 for g in named)  # no task is left in the named groups
    assert sum(v["wait"] + v["transmit"] for v in bd.groups.values()) == \
        sum(v["wait"] + v["transmit"] for v in clean.groups.values())


# --------------------------------------------------------------------------- edge rules (mutation audit)


def test_pair3_console_matches_reference(reference_outputs: Path) -> None:
    """The console table of the excerpts (Mem Usage from MEMORY_RECORD's peak totalReserved included) is the
    original's stdout of pair 3, verbatim (reference-outputs/README.md)."""
    readme = (reference_outputs / "README.md").read_text(encoding="utf-8")
    block = readme.split("\n## 3. ", 1)[1].split("\n## ", 1)[0].split("Console output (stdout, verbatim):", 1)[1]
    want = block.split("```", 2)[1].strip("\n")
    assert "1.49G" in want
    assert api.compare(L1, L2, enable_profiling_compare=True).console_table().strip("\n") == want


def test_db_cube_and_vector_hidden_beside_a_level0_text_export_are_given_under_the_table(
        samples: Path, reference_outputs: Path) -> None:
    """A Level0 text export has no PMU columns, so the original's table leaves out Cube Time(Num) and Vector
    Time(Num) on both rows: beside it the level-1 DB side's Matmul and Vector time sat in no column (Computing
    0.009s against Conv 0.001s + 0.002s and Other 0.000s) without a word. A note gives that side's two cells;
    their values are the original's own cells for the same DB (pair 3's console, base row)."""
    level0 = samples / "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
    readme = (reference_outputs / "README.md").read_text(encoding="utf-8")
    block = readme.split("\n## 3. ", 1)[1].split("Console output (stdout, verbatim):", 1)[1].split("```", 2)[1]
    lines = [ln for ln in block.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[1].split("|")]
    base_row = [c.strip() for c in lines[2].split("|")]
    cube, vector = (base_row[header.index(h)] for h in ("Cube Time(Num)", "Vector Time(Num)"))
    assert (cube, vector) == ("0.001s(14)", "0.004s(96)")
    res = api.compare(str(level0), L1, enable_profiling_compare=True)
    assert "Cube Time(Num)" not in res.summary["headers"]
    assert [n for n in res.summary["notes"] if "Cube Time(Num)" in n] == [
        f"Comparison row: its Cube Time(Num) {cube} and Vector Time(Num) {vector} have no column here, as in the "
        "original, which leaves both out where a side has no PMU figures to split its computing by; the "
        "OverallMetrics sheet holds them, by category (the base side: kernel_details.csv has no PMU columns (a "
        "Level0 export records none: Level1 or Level2 with aic_metrics PipeUtilization does))."]
    # the same run the other way round names the other row and side
    swapped = api.compare(L1, str(level0), enable_profiling_compare=True)
    assert [n[:60] for n in swapped.summary["notes"] if "Cube Time(Num)" in n] == [
        f"Base row: its Cube Time(Num) {cube} and Vector Time(Num) {vector} have no"[:60]]
    # two split sides keep both columns and need no note
    assert not [n for n in api.compare(L1, L2, enable_profiling_compare=True).summary["notes"] if "Cube" in n]


def test_memory_line_says_a_text_peak_counts_app_beside_a_db_export(samples: Path) -> None:
    """The level-1 text export's peak reserved memory counts memory_record.csv's APP rows (the whole process),
    which the DB export of the same script does not hold: the console's memory line read a 27.77% saving between
    the two kinds of export, the reason in a log line alone. The line now says it, as the E2E verdict names its
    own export difference; figures from memory_record.csv and MEMORY_RECORD read here (csv, SQL)."""
    text = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    db = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    with open(text / "ASCEND_PROFILER_OUTPUT/memory_record.csv", newline="", encoding="utf-8") as f:
        rows = [(r["Component"].strip(), float(r["Total Reserved(MB)"])) for r in csv.DictReader(f)
                if r["Total Reserved(MB)"].strip()]
    text_peak = max(v for _, v in rows) / 1024
    text_without = max(v for c, v in rows if c != "APP") / 1024
    (db_peak,), = sql(db / "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
                      "SELECT max(totalReserved) FROM MEMORY_RECORD")
    db_peak /= 1024**3
    assert (f"{text_peak:.2f}", f"{text_without:.2f}", f"{db_peak:.2f}") == ("2.06", "1.49", "1.49")
    pct = (db_peak - text_peak) / text_peak * 100
    res = api.compare(str(text), str(db), enable_memory_compare=True)
    line = memory_line(res.frames["memory"]).splitlines()[0]
    assert line == (f"Peak reserved memory (Mem Usage) {text_peak:.2f} GB -> {db_peak:.2f} GB "
                    f"({db_peak - text_peak:+.2f} GB, {pct:+.2f}%): the base side's, a text export's, counts "
                    f"memory_record.csv's APP component ({text_without:.2f} GB without it), which a DB export's "
                    "MEMORY_RECORD does not hold.")
    # the JSON (summary.memory) has the figure the line gives, for the text export's side (it gave the change bare)
    assert res.memory_totals["peak_app"] == {"side": "base", "peak_without_app_gb": pytest.approx(text_without),
                                         "beside": "db"}
    # the other way round names the comparison side; two exports of one kind need no such words
    other = api.compare(str(db), str(text), enable_memory_compare=True)
    swapped = memory_line(other.frames["memory"])
    assert "the comparison side's, a text export's, counts memory_record.csv's APP component" in swapped
    assert other.memory_totals["peak_app"] == {"side": "comparison", "peak_without_app_gb": pytest.approx(text_without),
                                           "beside": "db"}
    level2 = samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt"
    alike = api.compare(str(level2), str(text), enable_memory_compare=True)
    assert "APP" not in memory_line(alike.frames["memory"]) and alike.memory_totals["peak_app"] is None


def test_level0_db_wait_time_of_zero_is_said_to_be_no_reading(samples: Path) -> None:
    """A Level0 DB export types every HCCL task N/A (SQL below), so no task reads as Notify_Wait and its Wait Time
    is 0 whatever the ranks waited: beside the level-1 DB's 0.003s (pair 3's console, the original's) the
    comparison row's (0.000s) read as the wait gone. A line under the table says it is no reading; the level-1
    side, whose tasks are typed, gets none."""
    db0 = samples / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"
    (n, typed), = sql(db0 / "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
                      "SELECT count(*), sum(s.value NOT IN ('N/A', '')) FROM COMMUNICATION_TASK_INFO c "
                      "JOIN STRING_IDS s ON s.id = c.taskType")
    assert (n, typed) == (296, 0)
    res = api.compare(L1, str(db0), enable_profiling_compare=True)
    cells = [row[res.summary["headers"].index("Uncovered Communication Time(Wait Time)")].strip()
             for row in res.summary["rows"]]
    assert cells[0].endswith("(0.003s)") and cells[1].endswith("(0.000s)")
    assert [x for x in res.summary["notes"] if "Wait Time" in x] == [
        f"Comparison row: its Wait Time 0.000s is not a measurement: its {n} HCCL tasks have no task type (N/A: a "
        "Level0 export records none; Level1 or Level2 records them), so none reads as Notify_Wait."]
    swapped = api.compare(str(db0), L1, enable_profiling_compare=True)
    assert [x for x in swapped.summary["notes"] if "Wait Time" in x] == [
        f"Base row: its Wait Time {BASE_ZERO} is not a measurement: its {n} HCCL tasks have no task type (N/A: a "
        "Level0 export records none; Level1 or Level2 records them), so none reads as Notify_Wait."]


def test_max_kernel_num_child_ops_are_not_called_outside_every_module() -> None:
    """--max_kernel_num 4 splits aten::convolution_backward (11 kernels, over the bound) into its child ops on the
    operator level, so Conv2DBackpropInput becomes a contributor while the module sheets keep the op that launches
    it: the note said "(they are outside every module)" of it, though every Conv2DBackpropInput op runs inside an
    aten::convolution_backward (SQL: same thread, inside its span), which the backward Conv2d module rows list."""
    def spans(name: str) -> list[tuple[int, int, int]]:
        return sql(Path(L1), "SELECT CAST(a.startNs AS INTEGER), CAST(a.endNs AS INTEGER), a.globalTid FROM "
                   "PYTORCH_API a JOIN STRING_IDS s ON s.id = a.name WHERE s.value = ?", (name,))

    parents = spans("aten::convolution_backward")
    children = spans("Conv2DBackpropInput")
    assert len(children) == 4 and all(any(t == pt and ps <= s <= e <= pe for ps, pe, pt in parents)
                                      for s, e, t in children)
    res = api.compare(L1, L2, enable_operator_compare=True, max_kernel_num=4)
    stat = res.sheet("ModuleCompareStatistic")
    assert "aten::convolution_backward" in set(stat["Operator Name"].tolist())
    assert "Conv2DBackpropInput" not in set(stat["Operator Name"].tolist())
    assert "Conv2DBackpropInput" in res.contributors["Name"].tolist()
    line = _outside_line(res)
    outside, _, nested = line.partition("not on the module sheets by name: ")
    assert "Conv2DBackpropInput" not in outside and "(it is outside every module)" in outside
    assert nested.startswith("Conv2DBackpropInput") and "inside aten::convolution_backward, whose module rows hold" \
        in nested
    # without the option no child op is listed, and the op outside every module is still said to be
    plain = _outside_line(api.compare(L1, L2, enable_operator_compare=True))
    assert "by name" not in plain and "(it is outside every module)" in plain


def _outside_line(res) -> str:
    from msprof_compare.compare.module_contributors import outside_modules_note

    return outside_modules_note(res.frames["contributors"], res.frames.get("module_contributors"))


def test_no_memory_peak_is_no_mem_usage() -> None:
    """Without a MEMORY_RECORD peak (key absent or None) Mem Usage is 0, so the console leaves the column out."""
    p = load_profile(L1, build_options(enable_profiling_compare=True)[0])
    assert db_breakdown(p).memory_gb == pytest.approx(1.49, abs=0.005)
    p.extra["memory_peak_bytes"] = None
    assert db_breakdown(p).memory_gb == 0.0
    del p.extra["memory_peak_bytes"]
    assert db_breakdown(p).memory_gb == 0.0


#: compute tasks of the level-1 excerpt and those whose TASK.taskType is a cube kernel's (CUBE_RTS_TYPES), by SQL
_COMPUTE_TYPES = ("SELECT count(*), sum(s.value IN ('KERNEL_AICORE', 'KERNEL_MIX_AIC')) FROM TASK t JOIN "
                  "COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS s ON s.id = t.taskType")


@pytest.mark.parametrize(("edit", "state"), [("DROP TABLE TASK_PMU_INFO", "absent"),
                                             ("DELETE FROM TASK_PMU_INFO", "empty")])
def test_no_pmu_rows_say_the_cube_rule(tmp_path: Path, caplog: pytest.LogCaptureFixture, edit: str,
                                       state: str) -> None:
    """Without PMU rows a DB export's cube kernels go by task type (reference-1 §7.3.2), which split the level-1
    excerpt's computing otherwise without a word (Cube Time 14 -> 22 kernels, Vector 96 -> 88): a warning
    says it, as a text export's kernel_details.csv without PMU columns is said, for an absent and an empty table
    alike, with the count the rule takes (31 of 187 compute tasks, SQL). The side with PMU rows says nothing."""
    db = edited_copy(Path(L1), tmp_path / "ascend_pytorch_profiler_0.db", edit)
    (n, cube), = sql(Path(L1), _COMPUTE_TYPES)
    with caplog.at_level("WARNING", logger="msprof-analyze"):
        res = api.compare(L1, str(db), enable_profiling_compare=True)
    assert [m for m in caplog.messages if "TASK_PMU_INFO" in m] == [
        f"{db}: TASK_PMU_INFO is {state} (an export recorded without AI Core metrics: Level0, or aic_metrics "
        f"AiCoreNone), so Cube kernels are told by task type (KERNEL_AICORE / KERNEL_MIX_AIC), not by PMU figures: "
        f"{cube} of its {n} computing tasks count as cube kernels by that rule, which PMU figures may split "
        "otherwise (comparison side)"]
    assert (n, cube) == (187, 31)
    cubes = [row[res.summary["headers"].index("Cube Time(Num)")] for row in res.summary["rows"]]
    assert cubes[0].endswith("(14)") and cubes[1].endswith("(22)")


def test_level0_db_sample_has_no_pmu_table_and_says_so(samples: Path) -> None:
    """The real Level0 DB export has no TASK_PMU_INFO table: its breakdown says the cube rule it falls back to."""
    db = samples / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/" \
                   "ascend_pytorch_profiler_0.db"
    assert not sql(db, "SELECT 1 FROM sqlite_master WHERE name = 'TASK_PMU_INFO'")
    (n, cube), = sql(db, _COMPUTE_TYPES)
    bd = db_breakdown(load_profile(str(db), build_options(enable_profiling_compare=True)[0]))
    assert [m for m in bd.missing if "TASK_PMU_INFO is absent" in m and f": {cube} of its {n} computing" in m]


def test_no_pmu_line_reads_the_reason_from_profiler_info(samples: Path, tmp_path: Path) -> None:
    """Given its profiling directory, the real Level0 DB export's profiler_info_0.json says Level0: the TASK_PMU_INFO
    line says so, and how PMU figures are recorded, as a text export's line does (it guessed "Level0, or aic_metrics
    AiCoreNone"). The level-1 excerpt without PMU rows beside a profiler_info_0.json naming other AI Core metrics
    names them; the bare .db (no profiler_info read) keeps the guess."""
    rank = samples / "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"
    assert json.loads((rank / "profiler_info_0.json").read_text())["config"]["experimental_config"][
        "_profiler_level"] == "Level0"
    (n, cube), = sql(rank / "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db", _COMPUTE_TYPES)
    bd = db_breakdown(load_profile(str(rank), build_options(enable_profiling_compare=True)[0]))
    assert [m for m in bd.missing if "TASK_PMU_INFO" in m] == [
        f"{rank}: TASK_PMU_INFO is absent (a Level0 export records none: Level1 or Level2 with aic_metrics "
        "PipeUtilization does), so Cube kernels are told by task type (KERNEL_AICORE / KERNEL_MIX_AIC), not by PMU "
        f"figures: {cube} of its {n} computing tasks count as cube kernels by that rule, which PMU figures may split "
        "otherwise"]
    out = tmp_path / "rank0_ascend_pt"
    (out / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    edited_copy(Path(L1), out / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db", "DELETE FROM TASK_PMU_INFO")
    info = json.loads((samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt/profiler_info_0.json")
                      .read_text())
    info["config"]["experimental_config"]["_aic_metrics"] = "ACL_AICORE_MEMORY_BANDWIDTH"
    (out / "profiler_info_0.json").write_text(json.dumps(info))
    bd = db_breakdown(load_profile(str(out), build_options(enable_profiling_compare=True)[0]))
    assert [m for m in bd.missing if "TASK_PMU_INFO" in m] == [
        f"{out}: TASK_PMU_INFO is empty (recorded with aic_metrics ACL_AICORE_MEMORY_BANDWIDTH: PipeUtilization "
        "records them), so Cube kernels are told by task type (KERNEL_AICORE / KERNEL_MIX_AIC), not by PMU figures: "
        "31 of its 187 computing tasks count as cube kernels by that rule, which PMU figures may split otherwise"]


@pytest.mark.parametrize(("edit", "why"), [
    ("DROP TABLE MEMORY_RECORD", "its DB has no MEMORY_RECORD table (profile_memory=True records it)"),
    ("DELETE FROM MEMORY_RECORD", "its MEMORY_RECORD table is empty"),
    ("UPDATE MEMORY_RECORD SET totalReserved = NULL", "its MEMORY_RECORD holds no usable totalReserved value"),
    ("UPDATE MEMORY_RECORD SET timestamp = timestamp + 1000000000000", "none of its MEMORY_RECORD readings is placed "
     "in step 50"),
])
def test_no_memory_peak_says_why_under_the_table(tmp_path: Path, edit: str, why: str) -> None:
    """A DB side without a Mem Usage figure: the note under the console table said "no peak reserved memory
    recorded" of an absent table, an empty one and readings all outside the step alike, where the cause (and
    what to do) differ; it says which now. Readings moved 1000 s later lie outside step 50 (the excerpt's only
    step), which the whole run still holds."""
    db = edited_copy(Path(L1), tmp_path / "ascend_pytorch_profiler_0.db", edit)
    steps = {"base_step": 50, "comparison_step": 50} if "timestamp" in edit else {}
    res = api.compare(L1, str(db), enable_profiling_compare=True, **steps)
    assert [n for n in res.summary["notes"] if "Mem Usage" in n] == [
        f"Comparison row: {why}, so its Mem Usage 0.00G is not a measurement."]
    mem = [row[res.summary["headers"].index("Mem Usage")] for row in res.summary["rows"]]
    assert mem == ["1.49G", "0.00G"]


@pytest.mark.parametrize("step", [-1, 50])
def test_memory_readings_all_zero_are_said_as_such(tmp_path: Path, step: int) -> None:
    """A MEMORY_RECORD whose every totalReserved is 0 was said to hold "no usable totalReserved value" (whole run)
    or "none ... placed in step 50", of readings that were there and in the step: the note now counts them (SQL:
    the excerpt's readings, all in step 50, its only step, and 2 of them copied 1000 s later, outside it) and says
    Mem Usage shows their largest, 0.00G."""
    db = edited_copy(Path(L1), tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE MEMORY_RECORD SET totalReserved = 0",
                     "INSERT INTO MEMORY_RECORD SELECT * FROM MEMORY_RECORD ORDER BY rowid LIMIT 2",
                     "UPDATE MEMORY_RECORD SET timestamp = timestamp + 1000000000000 "
                     "WHERE rowid > (SELECT max(rowid) - 2 FROM MEMORY_RECORD)")
    (total, zero), = sql(db, "SELECT count(*), count(*) FILTER (WHERE totalReserved = 0) FROM MEMORY_RECORD")
    (in_step,), = sql(db, "SELECT count(*) FROM MEMORY_RECORD r, STEP_TIME s WHERE s.id = 50 "
                          "AND r.timestamp BETWEEN s.startNs AND s.endNs")
    assert total == zero == in_step + 2 and in_step > 1
    steps = {"base_step": step, "comparison_step": step} if step >= 0 else {}
    res = api.compare(L1, str(db), enable_profiling_compare=True, **steps)
    where = " in step 50" if step >= 0 else ""
    assert [n for n in res.summary["notes"] if "Mem Usage" in n] == [
        f"Comparison row: its {in_step if step >= 0 else total} MEMORY_RECORD totalReserved readings{where} are all 0, "
        "so its Mem Usage "
        "shows 0.00G, the largest of them."]
    mem = [row[res.summary["headers"].index("Mem Usage")] for row in res.summary["rows"]]
    assert mem == ["1.49G", "0.00G"]


@pytest.mark.parametrize("memory_only", [False, True], ids=["with-breakdown", "memory-only"])
def test_summary_memory_line_names_readings_all_zero(tmp_path: Path, memory_only: bool) -> None:
    """The Summary's memory line showed a side whose MEMORY_RECORD readings are all 0 as "not recorded" (JSON
    peak null), under the OverallMetrics note that its readings are all 0: its peak is 0.00 GB, their largest,
    and the line names the readings in the note's words (count by SQL); no percentage of a 0 base. Alike with
    the time breakdown (its Mem Usage) and without it (the reading alone)."""
    db = edited_copy(Path(L1), tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE MEMORY_RECORD SET totalReserved = 0")
    (n,), = sql(db, "SELECT count(*) FROM MEMORY_RECORD WHERE totalReserved = 0")
    (peak,), = sql(L1, "SELECT max(totalReserved) FROM MEMORY_RECORD")
    gb = peak / 1024**3
    zeros = f"its {n} MEMORY_RECORD totalReserved readings are all 0"
    opts = {"enable_memory_compare": True} if memory_only else {}
    down = api.compare(L1, str(db), **opts)
    line = memory_line(down.frames["memory"])
    assert line.startswith(f"Peak reserved memory (Mem Usage; comparison: {zeros}) {gb:.2f} GB -> 0.00 GB "
                           f"(-{gb:.2f} GB, -100.00%).\n")
    t = down.memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"], t["peak_diff_pct"]) == (gb, 0.0, -100.0)
    # the JSON says why that 0 is a reading, as the line does (it gave a bare 0 peak)
    assert t["peak_zero"] == {"comparison": zeros}
    doc = json.loads(json_report.dumps(down))
    assert doc["summary"]["memory"]["peak_zero"] == {"comparison": zeros}
    assert validate(doc, json.loads(SCHEMA.read_text())) == []
    up = api.compare(str(db), L1, **opts)
    assert memory_line(up.frames["memory"]).startswith(
        f"Peak reserved memory (Mem Usage; base: {zeros}) 0.00 GB -> {gb:.2f} GB (+{gb:.2f} GB).\n")
    assert (up.memory_totals["base_peak_gb"], up.memory_totals["peak_diff_pct"]) == (0.0, None)
    assert up.memory_totals["peak_zero"] == {"base": zeros}
    # readings above 0 on both sides: nothing to say
    assert api.compare(L1, L1, **opts).memory_totals["peak_zero"] == {}


def test_summary_memory_line_names_readings_all_zero_once_for_both_sides(tmp_path: Path) -> None:
    """Both sides' MEMORY_RECORD readings all 0: the memory line gave the note's words twice, "base: its 20 ...;
    comparison: its 20 ..."; the same words are said once for each side, different counts per side (one copy
    without its first 5 readings; counts by SQL)."""
    zero = "UPDATE MEMORY_RECORD SET totalReserved = 0"
    for d in "abc":
        (tmp_path / d).mkdir()
    a = edited_copy(Path(L1), tmp_path / "a" / "ascend_pytorch_profiler_0.db", zero)
    b = edited_copy(Path(L1), tmp_path / "b" / "ascend_pytorch_profiler_0.db", zero)
    fewer = edited_copy(Path(L1), tmp_path / "c" / "ascend_pytorch_profiler_0.db", zero,
                        "DELETE FROM MEMORY_RECORD WHERE rowid IN (SELECT rowid FROM MEMORY_RECORD ORDER BY rowid "
                        "LIMIT 5)")
    (n,), = sql(a, "SELECT count(*) FROM MEMORY_RECORD")
    (m,), = sql(fewer, "SELECT count(*) FROM MEMORY_RECORD")
    assert (n, m) == (n, n - 5) and n > 5
    words = "its {} MEMORY_RECORD totalReserved readings are all 0"
    both = api.compare(str(a), str(b), enable_memory_compare=True)
    same = memory_line(both.frames["memory"])
    # the JSON keeps each side's words (the line says them once for both)
    assert both.memory_totals["peak_zero"] == {"base": words.format(n), "comparison": words.format(n)}
    assert same.startswith(f"Peak reserved memory (Mem Usage; each side: {words.format(n)}) 0.00 GB on both sides.\n")
    apart = memory_line(api.compare(str(a), str(fewer), enable_memory_compare=True).frames["memory"])
    assert apart.startswith(f"Peak reserved memory (Mem Usage; base: {words.format(n)}; comparison: "
                            f"{words.format(m)}) 0.00 GB on both sides.\n")


def test_summary_memory_line_says_not_recorded_for_an_empty_memory_record(tmp_path: Path) -> None:
    """A side whose MEMORY_RECORD is empty has no peak, and its Mem Usage cause ("its MEMORY_RECORD table is empty")
    is no reading: the memory line says "not recorded", not 0.00 GB. The level-1 excerpt against a copy with its
    MEMORY_RECORD rows deleted; the base peak by SQL (the largest totalReserved, in GiB)."""
    (tmp_path / "c").mkdir()
    empty = edited_copy(Path(L1), tmp_path / "c" / "ascend_pytorch_profiler_0.db", "DELETE FROM MEMORY_RECORD")
    (peak,), = sql(L1, "SELECT max(totalReserved) FROM MEMORY_RECORD")
    res = api.compare(L1, str(empty), enable_memory_compare=True)
    t = res.memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"], t["peak_diff_gb"]) == (peak / 1024**3, None, None)
    assert memory_line(res.frames["memory"]).startswith(
        f"Peak reserved memory (Mem Usage): base {peak / 1024**3:.2f} GB, comparison not recorded.\n")


def test_tensor_move_needs_both_name_parts() -> None:
    """reference-1 §3.7: a tensor move's name starts with aclnnInplaceCopy and holds TensorMove (any case); one
    part alone is no tensor move. Three compute tasks of the level-1 excerpt renamed."""
    p = load_profile(L1, build_options(enable_profiling_compare=True)[0])
    before = db_breakdown(p).b("sdma_tm").count
    names = p.kernels["name"].to_numpy(dtype=object).copy()
    was = [n.lower().startswith("aclnninplacecopy") and "tensormove" in n.lower() for n in names[:3]]
    names[:3] = ["aclnnInplaceCopy_Cast_1", "Foo_TensorMove_2", "aclnnInplaceCopy_TensorMove_3"]
    p.kernels["name"] = names
    assert db_breakdown(p).b("sdma_tm").count == before - sum(was) + 1


def test_flow_starts_of_connection_ids_zero_and_beyond_the_last() -> None:
    """A task's flow start is the start of the op listing its connection id: 0 is a real id, -1 is none, and
    an id above every op's (or with a single op) finds nothing."""
    p = Profile(path="synthetic.db", kind="NPU", source="ascend_db")
    p.ops = frame("ops", {"name": ["a", "b"], "ts": [1000, 2000], "dur": [10, 10]})
    p.kernels = frame("kernels", {"name": ["k"] * 4, "ts": [0, 1, 2, 3], "dur": [1] * 4,
                                  "connection_id": [0, 5, -1, 7]})
    p.extra["op_connections"] = pd.DataFrame({"op_row": [0, 1], "connection_id": [0, 5]})
    assert BD.flow_starts(p).tolist() == [1000, 2000, 0, 0]
    p.extra["op_connections"] = pd.DataFrame({"op_row": [1], "connection_id": [5]})
    assert BD.flow_starts(p).tolist() == [0, 2000, 0, 0]


def test_cube_mask_without_kernel_extra() -> None:
    p = _db_profile(kernels=[(0, 50, 0)], ops=[], summary=[])
    assert BD.cube_mask(p).tolist() == [False]


def test_db_without_communication_and_lccl_ops_summed() -> None:
    """No communication op: computing is the union of the compute tasks, nothing is uncovered, E2E spans them.
    Two Lccl ops: their times add up."""
    p = _db_profile(kernels=[(0, 50, 0), (40, 90, 2)], ops=[], summary=[])
    p.comm = frame("comm", {})
    bd = Breakdown(kind="NPU")
    BD._intervals(p, bd)
    assert (bd.computing_ns, bd.uncovered_comm_ns, bd.e2e_ns) == (90, 0, 90)
    p = _db_profile(kernels=[], ops=[("KERNEL_AIVEC", 100, 500, "g1"), ("kernel_aivec", 600, 700, "g1")], summary=[])
    BD._lccl(p, bd)
    assert (bd.lccl.ns, bd.lccl.count) == (400 + 100, 2)


def test_db_wait_plane_has_the_smallest_sum_of_candidates() -> None:
    """reference-1 §7.3.7 (§5.7 step 3): the plane with the smallest *sum* of wait-candidate time is the
    group's wait plane: plane a (3 x 100 ns, sum 300) loses to plane b (one 250 ns wait) although its
    longest wait is shorter. One op [0, 1000), no compute task: all of it is uncovered."""
    tasks = [("a", 0, 100), ("a", 200, 300), ("a", 400, 500), ("b", 600, 850)]
    p = Profile(path="synthetic.db", kind="NPU", source="ascend_db")
    p.kernels = frame("kernels", {"name": [], "ts": [], "dur": []})
    p.comm = frame("comm", {
        "name": ["hcom_allReduce_"] + ["Notify_Wait"] * 4, "ts": [0] + [t[1] for t in tasks],
        "dur": [1000] + [t[2] - t[1] for t in tasks], "lane": ["op"] + ["task"] * 4, "group": ["g"] * 5,
        "plane": [""] + [t[0] for t in tasks]})
    bd = Breakdown(kind="NPU")
    BD._groups(p, bd, BD._intervals(p, bd))
    assert bd.groups == {"g": {"wait": 250, "transmit": 750}}


# --------------------------------------------------------------------------- coverage audit


def test_db_mc2_without_c_core_sqe_tasks() -> None:
    """An MC2 kernel of a DB without C_CORE_SQE tasks (the key absent, or no row): no communication part is
    found, so all of its time is the kernel's, its computing part the PMU figure (reference-1 §5.6)."""
    for sqe in (None, pd.DataFrame({"ts": np.zeros(0, np.int64), "end": np.zeros(0, np.int64)})):
        p = Profile(path="synthetic.db", kind="NPU", source="ascend_db")
        if sqe is not None:
            p.extra["c_core_sqe"] = sqe
        bd = Breakdown("NPU")
        BD._mc2(p, bd, np.array([0]), np.array(["MatmulAllReduce"], dtype=object), np.array([0]),
                np.array([100]), np.array([60]))
        m = bd.mc2["MatmulAllReduce"]
        assert (m.ns, m.computing_ns, m.communication_ns, m.count) == (100, 60, 0, 1)


def test_db_breakdown_parts_without_their_rows() -> None:
    """A single-device DB (no communication op or task): no Lccl, no group, no wait; no TASK summary (absent or
    empty): no SDMA on compute streams; device tasks but no compute task or communication op: E2E spans the
    tasks of the types that are no kernel; only kernel-type tasks: no E2E, said in one line."""
    p = _db_profile(kernels=[(0, 50, 0), (40, 90, 2)], ops=[], summary=[])
    p.comm = frame("comm", {})
    bd = Breakdown(kind="NPU")
    BD._lccl(p, bd)
    BD._groups(p, bd, BD._intervals(p, bd))
    assert (bd.lccl.ns, bd.lccl.count, bd.groups, bd.group_pairs, bd.wait_ns) == (0, 0, {}, {}, 0)
    assert (bd.computing_ns, bd.uncovered_comm_ns, bd.e2e_ns) == (90, 0, 90)
    for summary in (None, p.extra["task_summary"].iloc[:0]):
        if summary is None:
            del p.extra["task_summary"]
        else:
            p.extra["task_summary"] = summary
        bd = Breakdown(kind="NPU")
        BD._sdma_stream(p, bd)
        assert (bd.sdma_stream.ns, bd.sdma_stream.count) == (0, 0)
    p = _db_profile(kernels=[], ops=[], summary=[("EVENT_RECORD", 1, 2, 20), ("KERNEL_AIVEC", 1, 3, 600)])
    p.comm = frame("comm", {})
    p.extra["task_summary"] = p.extra["task_summary"].assign(first_start=[100, 0], last_end=[400, 1000])
    bd = Breakdown(kind="NPU")
    BD._intervals(p, bd)
    assert (bd.computing_ns, bd.uncovered_comm_ns, bd.e2e_ns, bd.free_ns, bd.missing) == (0, 0, 300, 300, [])
    p.extra["task_summary"] = p.extra["task_summary"].iloc[1:]  # KERNEL_AIVEC only: excluded from the span
    bd = Breakdown(kind="NPU")
    BD._intervals(p, bd)
    assert bd.e2e_ns == 0
    assert bd.missing == ["synthetic.db: no computing task, communication op or device task in range"]


def _union_ns(rows: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for s, e in sorted(rows):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def test_single_device_db_overall_metrics(tmp_path: Path) -> None:
    """The level-1 excerpt without its communication tables (a single-device export): OverallMetrics has no
    group rows and no Uncovered Communication Time row (zero on both sides: left out, reference-1 §9.3);
    Computing Time is the union of the compute tasks and E2E the span of them and of the TASK rows whose type is
    no kernel type, both computed here from the tables by SQL; Free Time is the rest."""
    folder = tmp_path / "single"
    folder.mkdir()
    db = edited_copy(Path(L1), folder / "ascend_pytorch_profiler_0.db", "DROP TABLE COMMUNICATION_OP",
                     "DROP TABLE COMMUNICATION_TASK_INFO")
    from dbutil import sql

    compute = sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c ON t.globalTaskId = "
                      "c.globalTaskId")
    excluded = ", ".join(f"'{t}'" for t in sorted(BD.E2E_EXCLUDED))
    lo, hi = sql(db, f"SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON t.taskType = s.id "
                     f"WHERE s.value NOT IN ({excluded})")[0]
    e2e = max(hi, max(e for _, e in compute)) - min(lo, min(s for s, _ in compute))
    sheet = api.compare(str(db), str(db), enable_profiling_compare=True).sheet("OverallMetrics").set_index("Index")
    assert not [i for i in sheet.index if "Communication" in i or "Wait" in i or "Transmit" in i or "%" in i]
    for col in ("Duration(ms)", "Duration(ms).1"):
        assert sheet.loc["Computing Time", col] == pytest.approx(_union_ns(compute) / 1e6, abs=1e-9)
        assert sheet.loc["E2E Time", col] == pytest.approx(e2e / 1e6, abs=1e-9)
        assert sheet.loc["Free Time", col] == pytest.approx((e2e - _union_ns(compute)) / 1e6, abs=1e-9)


def test_hccl_aicpu_kernel_is_no_computing(tmp_path: Path) -> None:
    """HCCL's AI-CPU kernels (``*AicpuKernel``) are communication, as its AIV ones are: msprof's Overlap Analysis
    leaves tasks with either name ending out of Computing. Older msprof lists them in COMPUTE_TASK_INFO (newer
    in COMMUNICATION_SCHEDULE_TASK_INFO). No sample holds one: the l1 excerpt with its longest compute task that
    runs inside a communication op (a Conv2DBackpropFilter of 328927 ns, a Conv (Backward) (Cube) task) renamed
    ``HcclAllReduceAicpuKernel``. Expected, by SQL and interval arithmetic: Computing Time is the union of the
    other 186 tasks; the category row is the unedited excerpt's (the original's figure in reference pair 3:
    1.101161 ms, 9 calls) less that task; the task's time not under another task moves to Uncovered
    Communication Time (the reference's 98.071947 ms)."""
    from dbutil import sql

    gid, s0, e0 = sql(L1, "SELECT c.globalTaskId, t.startNs, t.endNs FROM COMPUTE_TASK_INFO c "
                          "JOIN TASK t USING (globalTaskId) WHERE EXISTS (SELECT 1 FROM COMMUNICATION_OP o "
                          "WHERE o.startNs <= t.startNs AND t.endNs <= o.endNs) "
                          "ORDER BY t.endNs - t.startNs DESC LIMIT 1")[0]
    assert e0 - s0 == 328927
    folder = tmp_path / "aicpu"
    folder.mkdir()
    db = edited_copy(Path(L1), folder / "ascend_pytorch_profiler_0.db",
                     "INSERT INTO STRING_IDS VALUES (990001, 'HcclAllReduceAicpuKernel')",
                     f"UPDATE COMPUTE_TASK_INFO SET name = 990001 WHERE globalTaskId = {gid}")
    others = sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) "
                     "WHERE c.globalTaskId <> ?", (gid,))
    assert len(others) == 186
    covered = _union_ns(others + [(s0, e0)]) - _union_ns(others)
    sheet = api.compare(str(db), L2, enable_profiling_compare=True).sheet("OverallMetrics").set_index("Index")
    assert sheet.loc["Computing Time", "Duration(ms)"] == pytest.approx(_union_ns(others) / 1e6, abs=1e-9)
    assert sheet.loc["Computing Time", "Number"] == 186
    cube = sheet.loc["\t\tConv (Backward) (Cube)"]
    assert [cube["Duration(ms)"], cube["Number"]] == [pytest.approx(1.101161 - (e0 - s0) / 1e6, abs=1e-9), 8]
    assert sheet.loc["Uncovered Communication Time", "Duration(ms)"] == pytest.approx(
        98.071947 + covered / 1e6, abs=1e-9)


# --------------------------------------------------------------------------- SQL oracle on the real DB samples


def _gaps(s: int, e: int, merged: list[list[int]]) -> list[list[int]]:
    """[s, e) minus the merged intervals"""
    out, cur = [], s
    for a, b in merged:
        if b <= cur or a >= e:
            continue
        if a > cur:
            out.append([cur, a])
        cur = max(cur, b)
    return out + ([[cur, e]] if cur < e else [])


def _overlap(a: list[list[int]], b: list[list[int]]) -> int:
    """ns the merged lists ``a`` and ``b`` share"""
    return sum(max(0, min(e, f) - max(s, g)) for s, e in a for g, f in b)


def _sql_oracle(db: Path) -> tuple[dict[str, tuple[float, object]], str]:
    """OverallMetrics rows of one side (label -> (ms, number)) by plain SQL and the rules of reference-1 §7.3,
    §8, §9.4 as docs/differences.md applies them (every not-overlapped window counts; Wait measured within the
    group's uncovered op time). Reduced to what the five DB samples hold: no MC2, Page Attention, Lccl,
    SDMA_SQE or HCCL kernel (checked below), one group, no step."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    s_ = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    tasks = [(st, en, s_[tt]) for st, en, tt in con.execute("SELECT startNs, endNs, taskType FROM TASK")]
    assert not {t for *_, t in tasks} & {"C_CORE_SQE", "SDMA_SQE", "PCIE_DMA_SQE", "EVENT_WAIT_SQE"}
    kern = [(st, en, cid, s_[n], s_[ty].lower(), s_[rts], g) for st, en, cid, n, ty, rts, g in con.execute(
        "SELECT t.startNs, t.endNs, t.connectionId, c.name, c.opType, t.taskType, c.globalTaskId "
        "FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)")]
    assert not [k for k in kern if k[3].lower() in ("kernel_aivec", "matmulallreduce") or "paged" in k[4]]
    pmu: dict[int, dict[str, float]] = {}
    for g, n, v in con.execute("SELECT globalTaskId, name, value FROM TASK_PMU_INFO") if con.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'TASK_PMU_INFO'").fetchone() else []:
        pmu.setdefault(g, {})[s_[n]] = v
    flow, cube_ops = {}, []
    for st, en, name, cid in con.execute(
            "SELECT p.startNs, p.endNs, p.name, c.connectionId FROM PYTORCH_API p JOIN ENUM_API_TYPE e "
            "ON p.type = e.id AND e.name = 'op' LEFT JOIN CONNECTION_IDS c ON c.id = p.connectionId"):
        flow.setdefault(cid, int(st))
        if any(w in s_[name].lower() for w in ("aten::addmm", "aten::bmm", "aten::mm", "aten::matmul", "aten::conv")):
            cube_ops.append((int(st), int(en), s_[name].lower()))
    cube_ops = sorted(set(cube_ops))
    acc: dict[str, list[int]] = {}
    ptr = 0
    by_conn = sorted(kern, key=lambda k: k[2])  # §7.3.2: by connectionId, then (stably) by flow start
    for f, (st, en, _cid, name, ty, rts, g) in sorted(((flow.get(k[2], 0), k) for k in by_conn), key=lambda p: p[0]):
        cube = bool(pmu.get(g, {}).get("aic_total_time") or pmu.get(g, {}).get("aic_mac_time")) if pmu \
            else rts in ("KERNEL_AICORE", "KERNEL_MIX_AIC")
        cat = None
        if name.lower().startswith("aclnninplacecopy") and "tensormove" in name.lower():
            cat = "\tSDMA (Tensor Move)"
        elif f:
            while ptr < len(cube_ops) and cube_ops[ptr][1] < f:
                ptr += 1
            if ptr < len(cube_ops) and cube_ops[ptr][0] <= f:
                op = cube_ops[ptr][2]
                kind = "Conv (Backward)" if "aten::conv" in op and any(w in op for w in ("bwd", "back", "grad")) \
                    else "Conv (Forward)" if "aten::conv" in op else "Matmul"
                cat = f"\t\t{kind} ({'Cube' if cube else 'Vector'})"
        if cat is None:
            cat = ("\t\tConv (Backward) (Cube)" if any(w in ty for w in ("bwd", "back", "grad")) else
                   "\t\tConv (Forward) (Cube)") if ty.startswith("conv") else "\t\tMatmul (Cube)" if "matmul" in ty \
                else "\tCube" if cube else "\t\tVector (Trans)" if any(w in name.lower() for w in (
                    "cast", "transdata", "transpose")) else "\t\tVector (No Trans)"
        a = acc.setdefault(cat, [0, 0])
        a[0], a[1] = a[0] + en - st, a[1] + 1
    ops = [(st, en, s_[grp]) for st, en, grp in con.execute("SELECT startNs, endNs, groupName FROM COMMUNICATION_OP")]
    comp = union([(k[0], k[1]) for k in kern])
    busy = union([(k[0], k[1]) for k in kern] + [(o[0], o[1]) for o in ops])
    computing = sum(e - s for s, e in comp)
    uncovered = sum(e - s for s, e in busy) - computing
    other = [t for t in tasks if t[2] not in ("KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC",
                                              "KERNEL_MIX_AIV", "PROFILING_ENABLE", "PROFILING_DISABLE")]
    e2e = max([busy[-1][1]] + [t[1] for t in other]) - min([busy[0][0]] + [t[0] for t in other])
    (group,) = {o[2] for o in ops}
    hist: dict[int, str] = {}
    cands: dict[int, list[tuple[int, int]]] = {}
    for st, en, name, plane in sorted((st, en, s_[n], p) for st, en, n, p in con.execute(
            "SELECT t.startNs, t.endNs, c.taskType, c.planeId FROM COMMUNICATION_TASK_INFO c JOIN TASK t "
            "USING (globalTaskId)")):
        h = hist.get(plane)
        if name == "Notify_Wait" and not (h and (h == "RRNR" or h[-2:] == "RR")):
            cands.setdefault(plane, []).append((st, en))
        letter = "R" if name == "RDMASend" else "N" if name == "Notify_Wait" else "O"
        hist[plane] = h[1:] + letter if h else "OOO" + letter
    con.close()
    # the group's uncovered op time: its ops outside the compute tasks (= inside the not-overlapped windows)
    group_unc = [iv for s, e in union([(o[0], o[1]) for o in ops]) for iv in _gaps(s, e, comp)]
    best = min(cands.values(), key=lambda c: sum(e - s for s, e in c)) if cands else []  # first plane wins ties
    wait = _overlap(union(best), group_unc)
    unc_g = sum(e - s for s, e in group_unc)
    rows = {"Computing Time": (computing / 1e6, sum(a[1] for a in acc.values()))}
    for parent, kids in (("\tConv (Forward)", ("Cube", "Vector")), ("\tConv (Backward)", ("Cube", "Vector")),
                         ("\tMatmul", ("Cube", "Vector")), ("\tVector", ("Trans", "No Trans"))):
        sub = [acc.get(f"\t{parent} ({k})", [0, 0]) for k in kids]
        rows[parent] = (sum(s[0] for s in sub) / 1e6, sum(s[1] for s in sub))
        rows.update({f"\t{parent} ({k})": (s[0] / 1e6, s[1]) for k, s in zip(kids, sub, strict=True)})
    for lab in ("\tCube", "\tSDMA (Tensor Move)"):
        rows[lab] = (acc.get(lab, [0, 0])[0] / 1e6, acc.get(lab, [0, 0])[1])
    rows["\tOther"] = (max(0.0, computing / 1e6 - sum(a[0] for a in acc.values()) / 1e6), "/")
    rows["Uncovered Communication Time"] = (uncovered / 1e6, "/")
    rows[f"\t{group}"] = (unc_g / 1e6, "/")
    rows[f"\t{group}\t\tWait"], rows[f"\t{group}\t\tTransmit"] = (wait / 1e6, "/"), ((unc_g - wait) / 1e6, "/")
    free = e2e - computing - uncovered  # no Lccl, no SDMA_SQE on these samples: \tFree = Free Time
    rows.update({"Free Time": (free / 1e6, "/"), "\tFree": (free / 1e6, "/"), "E2E Time": (e2e / 1e6, "/")})
    return rows, f"\t{group}"


# every aic_mac_time of a copy made 0 (synthetic): in the samples no task has aic_total_time without
# aic_mac_time, so a cube test on aic_mac_time alone (the aic_total_time half dropped) gave the same sheet
MAC_ZERO = ("UPDATE TASK_PMU_INFO SET value = 0 WHERE name = "
            "(SELECT id FROM STRING_IDS WHERE value = 'aic_mac_time')")


@pytest.mark.parametrize("base, comp, edit", [("level0/rank0", "level0/rank1", ""),
                                              ("level1/rank1", "level2/rank0", ""),
                                              ("level1/rank1", "level2/rank0", MAC_ZERO)])
def test_db_samples_match_an_sql_oracle(samples: Path, tmp_path: Path, base: str, comp: str, edit: str) -> None:
    """Every OverallMetrics figure of DB samples that no reference output covers (the level-0 DBs: no PMU, so
    cube = rts type KERNEL_AICORE / KERNEL_MIX_AIC; level-1 rank 1) against an independent computation by SQL on a
    copy of each file. Group rows: one HCCL group per side, labelled by its group name (no Wait row at level 0:
    its COMMUNICATION_TASK_INFO task names are N/A); rows whose two durations are 0 are left out (§9.3).
    ``edit``: SQL applied to both copies first (MAC_ZERO: cube by aic_total_time alone)."""
    side = {}
    for key in (base, comp):
        lvl, rank = key.split("/")
        src = samples / f"msinsight/test/data/pytorch/db/{lvl}/{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"
        (tmp_path / lvl).mkdir(exist_ok=True)
        name = f"ascend_pytorch_profiler_{rank[-1]}.db"
        side[key] = edited_copy(src / name, tmp_path / lvl / name, *([edit] if edit else []))
    df = api.compare(str(side[base]), str(side[comp]), enable_profiling_compare=True).sheet("OverallMetrics")
    (want_b, group_b), (want_c, group_c) = _sql_oracle(side[base]), _sql_oracle(side[comp])
    created = re.compile(r"_\d{13,}$")  # HCCL's group name ends in its creation time, which differs between runs
    if group_b != group_c and created.sub("", group_b) == created.sub("", group_c):  # one group: one block
        want_b, want_c = ({created.sub("", k[:len(g)]) + k[len(g):] if k.startswith(g) else k: v
                           for k, v in w.items()} for w, g in ((want_b, group_b), (want_c, group_c)))
        group_b = group_c = created.sub("", group_b)
    fixed = {k for k in (*want_b, *want_c) if not k.startswith((group_b, group_c))}
    got, group = {}, ""
    for row in df.itertuples(index=False):
        label = row[0]
        if label not in fixed and not label.startswith("\t\t"):
            group = label  # a group's description row; its Wait / Transmit rows follow
        elif label in ("\t\tWait", "\t\tTransmit"):
            label = group + label
        got.setdefault(label, []).append((row[1], row[3], row[4], row[6]))
    expected = {}
    for lab in list(want_b) + [k for k in want_c if k not in want_b]:
        b, c = want_b.get(lab, (0, "/")), want_c.get(lab, (0, "/"))
        if b[0] or c[0]:
            expected[lab] = [(b[0], b[1] if lab in want_b else "/", c[0], c[1] if lab in want_c else "/")]
    assert set(got) == set(expected)
    for lab, [(bd, bn, cd, cn)] in expected.items():
        [(gbd, gbn, gcd, gcn)] = got[lab]
        assert (gbd, gcd) == (pytest.approx(bd, abs=1e-6), pytest.approx(cd, abs=1e-6)), lab
        assert (gbn, gcn) == (bn, cn), lab


def _regrouped(src: str, dest: Path, first: str, last: str) -> str:
    """A copy of the excerpt ``src`` whose first two HCCL ops (and their tasks) belong to group ``first``, the last
    two to ``last``: a job that re-created its group between the steps."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    con = sqlite3.connect(dest)
    try:
        ops = [r[0] for r in con.execute("SELECT opId FROM COMMUNICATION_OP ORDER BY startNs")]
        assert len(ops) == 4
        for key, ids in ((first, ops[:2]), (last, ops[2:])):
            sid = string_id(con, key)
            marks = ",".join("?" * len(ids))
            for table in ("COMMUNICATION_OP", "COMMUNICATION_TASK_INFO"):
                con.execute(f"UPDATE {table} SET groupName = ? WHERE opId IN ({marks})", (sid, *ids))
        con.commit()
    finally:
        con.close()
    return str(dest)


def test_stem_shared_by_two_groups_of_a_side_pairs_nothing(tmp_path: Path) -> None:
    """Base groups S_t1 + S_t2, comparison S_t1 + S_t3 (one HCCL name, three creation times; edited copies of the
    l1 / l2 excerpts). S_t1 pairs by its equal key; the stem S is shared by two groups of each side, so S_t2 and
    S_t3 are no pair, as the Summary's waterfall keeps them apart. OverallMetrics counted stems only among the
    keys left unpaired, so it paired S_t2 with S_t3 under the bare stem, beside the waterfall's two rows."""
    stem = "90.91.105.46%enp189s0f0_60000_0"
    t1 = f"{stem}_1736410538306028"
    b = _regrouped(L1, tmp_path / "b" / "ascend_pytorch_profiler_0.db", t1, f"{stem}_1736410538399999")
    c = _regrouped(L2, tmp_path / "c" / "ascend_pytorch_profiler_0.db", t1, f"{stem}_1736414082399999")
    res = api.compare(b, c, enable_profiling_compare=True)
    df = res.sheet("OverallMetrics")
    idx = df["Index"].tolist()
    groups = [i for i in idx[idx.index("Uncovered Communication Time") + 1:idx.index("Free Time")]
              if not i.startswith("\t\t")]
    assert groups == [f"\t{t1}", f"\t{stem}_1736410538399999", f"\t{stem}_1736414082399999"]
    steps = res.frames["waterfall"]["Step"].tolist()
    assert [s for s in steps if stem in s] == [f"Group {k} Communication (uncovered)" for k in
                                               (t1, f"{stem}_1736410538399999", f"{stem}_1736414082399999")]


def test_index_column_fits_a_db_group_name(samples: Path, tmp_path: Path) -> None:
    """The level-1 text export against the DB export of the same job: the DB side's communication group keeps
    its HCCL name, which does not pair with the text side's "Group 0 Communication". At the original's width
    of 40 the indented name was cut at "..._173641053", in the creation time that tells two runs' groups apart;
    the column now fits it (2 characters for its indent level), and stays 40 where every label fits."""
    base = samples / "msinsight/test/data/pytorch"
    text, db = base / "text/level1/rank0_ascend_pt", base / "db/level1/rank0_ascend_pt"
    (group,) = {g for (g,) in sql(db / "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
                                  "SELECT s.value FROM COMMUNICATION_OP c JOIN STRING_IDS s ON s.id = c.groupName")}
    assert len(group) == 48  # 90.91.105.46%enp189s0f0_60000_0_1736410538306028
    res = api.compare(str(text), str(db), enable_profiling_compare=True)
    book = openpyxl.load_workbook(res.to_excel(str(tmp_path)))
    ws = book["OverallMetrics"]
    assert f"\t{group}" in [c.value for c in ws["A"]]
    assert ws.column_dimensions["A"].width >= len(group) + 2 + 2
    alike = api.compare(str(text), str(base / "text/level2/rank0_ascend_pt"), enable_profiling_compare=True)
    book = openpyxl.load_workbook(alike.to_excel(str(tmp_path)))
    assert round(book["OverallMetrics"].column_dimensions["A"].width) == 41  # 40 characters, as Excel stores it


def test_index_column_stops_at_its_widest() -> None:
    """The Index column fits a label up to ``INDEX_MAX_WIDTH`` characters and no wider (a 150-character group name
    would push the figures off the printed page); 40 where every label fits."""
    from msprof_compare.compare.overall import COLUMNS, INDEX_MAX_WIDTH, index_column

    assert index_column(["\t" + "g" * 150]).width == INDEX_MAX_WIDTH == 100
    assert index_column(["\t\t" + "g" * 60]).width == 60 + 2 * 2 + 2
    assert index_column(["Computing Time", 3]).width == COLUMNS[0].width == 40

def _covered(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """ns of the union of ``a`` that the union of ``b`` covers."""
    a, b, i, j, total = union(a), union(b), 0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _sql_group_figures(db: str) -> dict[str, int]:
    """The one group's uncovered, Wait and Transmit (ns) of a DB export by SQL and plain Python, reference-1 §5.7:
    Notify_Wait tasks are wait candidates unless their plane's 4-letter history (R RDMASend, N Notify_Wait, O other)
    is RRNR or ends RR; the plane with the smallest candidate sum is the wait plane; measured within the not-overlapped
    windows, every window (busy - compute tasks: docs/differences.md, "DB not-overlapped windows: every window
    counts") and, as the original takes them, only the busy intervals a communication op opens (walked with its
    OVERLAP routine)."""
    kernels = sql(Path(db), "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId)")
    ops = sql(Path(db), "SELECT startNs, endNs FROM COMMUNICATION_OP")
    tasks = sql(Path(db), "SELECT t.startNs, t.endNs, s.value, c.planeId FROM TASK t JOIN COMMUNICATION_TASK_INFO c "
                          "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType ORDER BY t.startNs")
    history: dict[int, str] = {}
    candidates = []
    for s, e, kind, plane in tasks:
        h = history.get(plane)
        if kind == "Notify_Wait" and not (h and (h == "RRNR" or h.endswith("RR"))):
            candidates.append((s, e, plane))
        letter = "R" if kind == "RDMASend" else "N" if kind == "Notify_Wait" else "O"
        history[plane] = h[1:] + letter if h else "OOO" + letter
    sums: dict[int, int] = {}
    for s, e, plane in candidates:
        sums[plane] = sums.get(plane, 0) + e - s
    plane = min(sums, key=lambda p: sums[p])  # no ties in the samples
    waits = [(s, e) for s, e, p in candidates if p == plane]
    windows = minus(ops + kernels, kernels)
    starts_of_kernels = {s for s, _ in kernels}
    opened = [(s, e) for s, e in union(ops + kernels) if s not in starts_of_kernels]
    original = minus(opened, kernels)

    def walk(events: list[tuple[int, int]]) -> int:
        ws, we = (np.array(x, dtype=np.int64) for x in zip(*original, strict=True))
        es, ee = (np.array(x, dtype=np.int64) for x in zip(*sorted(events), strict=True))
        return overlap_walk(ws, we, es, ee)

    return {"uncovered": _covered(ops, windows), "wait": _covered(waits, windows),
            "original uncovered": walk(ops), "original wait": walk(waits)}


def test_db_group_wait_and_transmit_by_sql(reference_outputs: Path) -> None:
    """The DB group rows (Wait, Transmit) and the console's Wait Time of pair 3, which the workbook check allows to
    differ from the original's (the original loses the windows of busy intervals a kernel opens) and which
    test_group_rows_differ_only_by_the_documented_defect computes on our loader's tables with our wait-candidate
    rule: here from the DB's tables by SQL and plain Python. The same rule on the original's windows gives its four
    figures to the ns, so the reading is the original's; on every window, ours."""
    ref = reference(reference_outputs)
    got = ours().set_index("Index")
    rows = ref.loc[_group_rows(ref)]
    for db, col, block in ((L1, "Duration(ms)", rows.iloc[:3]), (L2, "Duration(ms).1", rows.iloc[3:])):
        want = _sql_group_figures(db)
        assert (want["original uncovered"] / 1e6, want["original wait"] / 1e6) == pytest.approx(
            (block[col].iloc[0], block[col].iloc[1]), abs=1e-9)
        assert want["uncovered"] / 1e6 == pytest.approx(got.loc["Uncovered Communication Time", col], abs=1e-9)
        assert [got.loc["\t\tWait", col], got.loc["\t\tTransmit", col]] == pytest.approx(
            [want["wait"] / 1e6, (want["uncovered"] - want["wait"]) / 1e6], abs=1e-9)
    console = api.compare(L1, L2, enable_profiling_compare=True).summary
    column = console["headers"].index("Uncovered Communication Time(Wait Time)")
    waits = [_sql_group_figures(db)["wait"] / 1e9 for db in (L1, L2)]
    uncovered = [got.loc["Uncovered Communication Time", c] / 1e3 for c in ("Duration(ms)", "Duration(ms).1")]
    assert [r[column].strip() for r in console["rows"]] == [f"{u:.3f}s({w:.3f}s)" for u, w in zip(uncovered, waits,
                                                                                          strict=True)]


def test_db_wait_plane_tie_goes_to_the_plane_first_in_the_table(tmp_path: Path) -> None:
    """Two planes with the same candidate time: the wait plane is the one whose candidates come first (by start),
    as the SQL oracle's ``min`` over planes in that order takes it (mutant: '<=' keeps the last). The l1 excerpt
    has none (its seven planes' sums differ): the last candidate of the least plane is lengthened (synthetic) by
    the gap to the next least, which comes later, so the two tie and their waits differ."""
    tasks = sql(Path(L1), "SELECT t.globalTaskId, t.startNs, t.endNs, s.value, c.planeId FROM TASK t JOIN "
                          "COMMUNICATION_TASK_INFO c USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.taskType "
                          "ORDER BY t.startNs")
    history: dict[int, str] = {}
    cands: dict[int, list[tuple[int, int, int]]] = {}  # plane -> its candidates (id, start, end), in start order
    for g, s, e, kind, plane in tasks:
        h = history.get(plane)
        if kind == "Notify_Wait" and not (h and (h == "RRNR" or h.endswith("RR"))):
            cands.setdefault(plane, []).append((g, s, e))
        history[plane] = (h[1:] if h else "OOO") + ("R" if kind == "RDMASend" else "N" if kind == "Notify_Wait"
                                                    else "O")
    sums = {p: sum(e - s for _, s, e in c) for p, c in cands.items()}
    least, second = sorted(sums, key=sums.get)[:2]
    assert sums[least] < sums[second]
    assert list(cands).index(least) < list(cands).index(second)  # the least comes first: it stays the pick
    g, s, e = cands[least][-1]
    (tmp_path / "db").mkdir()
    db = str(edited_copy(Path(L1), tmp_path / "db" / "ascend_pytorch_profiler_0.db",
                         f"UPDATE TASK SET endNs = {e + sums[second] - sums[least]} WHERE globalTaskId = {g}"))
    want = _sql_group_figures(db)
    sheet = api.compare(db, db, enable_profiling_compare=True).sheet("OverallMetrics").set_index("Index")
    assert sheet.loc["\t\tWait", "Duration(ms)"] == pytest.approx(want["wait"] / 1e6, abs=1e-9)
    # the other tied plane's wait differs, so the pick is seen
    other = sql(Path(db), f"SELECT startNs, endNs FROM TASK WHERE globalTaskId IN "
                          f"({', '.join(str(c[0]) for c in cands[second])}) ORDER BY startNs")
    windows = minus(sql(Path(db), "SELECT startNs, endNs FROM COMMUNICATION_OP") + sql(
        Path(db), "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId)"),
        sql(Path(db), "SELECT t.startNs, t.endNs FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId)"))
    assert _covered(other, windows) != want["wait"]


def test_json_names_where_a_db_path_pointed_and_the_app_peak(samples: Path) -> None:
    """JSON base.level / comparison.level read "" for every DB side, where a text export's say where its path
    pointed: a DB export's now say it alike, profiling for the *_ascend_pt folder, ascend_output for its
    ASCEND_PROFILER_OUTPUT, database for the .db file itself. The level-1 text export against the level-1 DB
    export: summary.memory gives the text side's peak without memory_record.csv's APP component (1.49 GB, read
    from the CSV here) beside the console line that says it; the document validates against the schema."""
    text = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    folder = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    out = folder / "ASCEND_PROFILER_OUTPUT"
    with open(text / "ASCEND_PROFILER_OUTPUT/memory_record.csv", newline="", encoding="utf-8") as f:
        without = max(float(r["Total Reserved(MB)"]) for r in csv.DictReader(f)
                      if r["Total Reserved(MB)"].strip() and r["Component"].strip() != "APP") / 1024
    schema = json.loads(SCHEMA.read_text())
    for given, level in ((folder, "profiling"), (out, "ascend_output"), (out / "ascend_pytorch_profiler_0.db",
                                                                         "database")):
        doc = json.loads(json_report.dumps(api.compare(str(text), str(given), enable_memory_compare=True)))
        assert (doc["base"]["level"], doc["comparison"]["level"]) == ("profiling", level)
        assert doc["summary"]["memory"]["peak_app"] == {"side": "base", "peak_without_app_gb": pytest.approx(without),
                                                  "beside": "db"}
        assert f"{without:.2f}" == "1.49"
        assert validate(doc, schema) == []
