"""Session 75's hand mutants of session 74's source changes (74495f0e..1759544b) that the suite let live (mut75).

Each test names the mutants it kills; each fails under them and passes on the real code. Expected figures come
from the raw sample files (SQL on the DB exports, the CSV and JSON of the text exports), never read back from this
package. Where a branch of a note's wording no sample reaches (two HCCL kernel types, a Level0 side beside a side
that is not), the sides' attrs are set by hand on a real run's frames, as test_summary_communication does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbutil import sql
from test_export_switch import _db_file, _db_window

from msprof_compare import compare
from msprof_compare.compare.summary_notes import unexplained_note, unsplit_communication_note, wait_split_note
from msprof_compare.compare.verdict import ExportWindow

DB = "msinsight/test/data/pytorch/db"


def _note(res) -> str:
    """The note under the contributors, as the console, the Summary sheet and the JSON give it."""
    return unexplained_note(res.frames["contributors"], res.frames["waterfall"],
                            res.frames.get("contributor_communication"))


def test_an_export_against_itself_says_no_change_of_communication(samples: Path) -> None:
    """Kills sn_wait_always, sn_moved_no500 (the Wait / Transmit sentence said of a change of 0 ns) and
    sn_uns_no500 (the Level0 pair's "no sheet breaks it down" sentence said of +0.000 ms): one export on both sides
    moves no communication, so neither sentence is said, though both sides measure Wait (DB level 1) and no
    communication op has a family (DB Level0: 4 ops of op type N/A each, by SQL)."""
    l1 = str(samples / DB / "level1/rank0_ascend_pt")
    res = compare(l1, l1)
    (wb, wc), (tb, tc) = res.frames["contributors"].attrs["wait_split"]  # both sides measure Wait
    assert (wb, tb) == (wc, tc)
    assert "Wait (" not in _note(res)
    l0 = samples / DB / "level0/rank0_ascend_pt"
    assert sql(_db_file(l0), "SELECT s.value, count(*) FROM COMMUNICATION_OP o JOIN STRING_IDS s "
                             "ON s.id = o.opType GROUP BY s.value") == [("N/A", 4)]
    res = compare(str(l0), str(l0))
    assert res.frames["contributors"].attrs["communication_unsplit"] == ((4, "an op type of N/A", True),) * 2
    assert "no sheet breaks" not in _note(res)


def test_the_wait_split_is_said_from_a_tenth_of_the_e2e_change_and_0_001_ms(samples: Path) -> None:
    """Kills sn_moved_noshare (the tenth of the E2E change dropped), sn_moved_signed (a tenth of a negative change,
    under 500 ns), sn_moved_gt (exactly 500 ns left out) and sn_moved_no500 (under 0.001 ms said): on the real
    waterfalls of DB level 2 -> level 1 (E2E +8.712893 ms by SQL, both ways round) and of level 1 against itself
    (E2E change 0), a Wait / Transmit change is said from a tenth of the E2E change, and never under 500 ns, the
    0.001 ms the note writes. Also kills sn_wait_nowf: no waterfall, no sentence."""
    l2, l1 = samples / DB / "level2/rank0_ascend_pt", samples / DB / "level1/rank0_ascend_pt"
    e2e = _db_window(_db_file(l1))[0] - _db_window(_db_file(l2))[0]
    assert e2e == 8_712_893
    tenth = -(-e2e // 10)  # the fewest whole ns that are a tenth of the change or more: 871_290
    for base, comp, sign in ((l2, l1, 1), (l1, l2, -1)):
        res = compare(str(base), str(comp), enable_profiling_compare=True)
        contrib, wf = res.frames["contributors"].copy(), res.frames["waterfall"]
        assert int(wf["Delta(ns)"].iloc[-1]) == sign * e2e
        for moved, said in ((tenth, True), (-tenth, True), (tenth - 1, False), (600, False), (-600, False)):
            contrib.attrs["wait_split"] = ((1_000, 1_000), (90_000_000, 90_000_000 + moved))
            assert bool(wait_split_note(contrib, wf)) is said, (sign, moved)
        assert wait_split_note(contrib, None) == ""
    res = compare(str(l1), str(l1))
    contrib, wf = res.frames["contributors"].copy(), res.frames["waterfall"]
    assert int(wf["Delta(ns)"].iloc[-1]) == 0
    for moved, said in ((500, True), (-500, True), (499, False), (-499, False)):
        contrib.attrs["wait_split"] = ((0, moved), (5_000, 5_000))
        note = wait_split_note(contrib, wf)
        assert bool(note) is said, moved
        if said:
            assert note.startswith(f"of the communication groups' uncovered time ({moved / 1e6:+.3f} ms)")


def test_the_unsplit_note_says_level0_only_of_level0_exports(samples: Path) -> None:
    """Kills sn_uns_anylevel0 and sn_uns_nolevel0: "(a Level0 export records no op type)" explains an op type of N/A
    only where every side that holds such ops is a Level0 export; an export of another level whose ops read N/A
    (or one Level0 side beside such a one) gets no such words. The sides are set by hand on the real Level0 pair's
    frames (rank 0 -> rank 1), which no sample of another level reaches."""
    res = compare(str(samples / DB / "level0/rank0_ascend_pt"), str(samples / DB / "level0/rank1_ascend_pt"))
    contrib, wf = res.frames["contributors"].copy(), res.frames["waterfall"]
    na = "an op type of N/A"
    for sides, level0 in ((((4, na, True), (4, na, True)), True), (((4, na, True), (4, na, False)), False),
                          (((4, na, False), (4, na, False)), False), (((4, na, False), (0, "", False)), False)):
        contrib.attrs["communication_unsplit"] = sides
        note = unsplit_communication_note(contrib, wf)
        assert "which no sheet breaks down by op" in note
        assert ("(a Level0 export records no op type)" in note) is level0, sides


def test_two_hccl_kernel_contributors_are_named_in_the_plural(samples: Path) -> None:
    """Kills sn_ker_one (every list worded as one op) and sn_ker_what (the names out of their order): where two
    kernel contributors are HCCL ops, the note names both, in the contributors' order, in the plural. The samples'
    kernel runs hold one HCCL type (hcom_allReduce_), so a second name is set by hand on the text level 2 -> level 1
    run's frames."""
    from msprof_compare.compare.summary_notes import communication_kernels_note

    text = "msinsight/test/data/pytorch/text"
    res = compare(str(samples / text / "level2/rank0_ascend_pt"), str(samples / text / "level1/rank0_ascend_pt"),
                  enable_kernel_compare=True, enable_profiling_compare=True, enable_communication_compare=True)
    contrib = res.frames["contributors"].copy()
    assert contrib.attrs["communication_kernels"] == ["hcom_allReduce_"] and contrib.attrs["communication_sheets"] == []
    assert communication_kernels_note(contrib).startswith("hcom_allReduce_ is collective communication, not "
                                                          "computing: an HCCL op, which")
    contrib.attrs["communication_kernels"] = ["hcom_allReduce_", "hcom_broadcast_"]
    assert communication_kernels_note(contrib) == (
        "hcom_allReduce_ and hcom_broadcast_ are collective communication, not computing: HCCL ops, which "
        "kernel_details.csv lists among the kernels (Accelerator Core HCCL); the time breakdown (OverallMetrics, the "
        "waterfall) counts them as communication and CommunicationCompare breaks them down by task")
    contrib.attrs["communication_kernels"] = ["hcom_allReduce_", "hcom_broadcast_", "hcom_allGather_"]
    assert communication_kernels_note(contrib).startswith("hcom_allReduce_, hcom_broadcast_ and hcom_allGather_ are ")


def test_free_other_all_window_tasks_reads_as_idle_time_unchanged(samples: Path) -> None:
    """Kills sn_idle_zero ("the idle time changed by -0.000 ms: the device waited less"): text level 1 -> DB level 1,
    rank 0, whose Free: Other step is +5.199867 ms by the raw files (the DB run's free lane less the text run's,
    plus the DB side's window tasks). Where the window tasks are that step, to under 0.001 ms (set by hand: no sample
    pair comes so close), the note says the device idled as long as before."""
    from test_export_switch import DB_L1, TEXT_L1
    from test_export_switch_idle import _idle_change_ns

    outside, idle = _idle_change_ns(samples)
    free = idle + outside
    assert free == 5_199_867
    res = compare(str(samples / TEXT_L1), str(samples / DB_L1))
    contrib = res.frames["contributors"]
    assert contrib.attrs["export_window"] == ("comparison", outside, 0, 830_617, 2)
    for window in (free + 400, free - 400, free):
        contrib.attrs["export_window"] = ExportWindow("comparison", window, 0, 830_617, 2)
        note = _note(res)
        assert "; net of that time, the device idled as long as before)" in note, window
        assert "idle time changed by" not in note
    contrib.attrs["export_window"] = ExportWindow("comparison", free - 600, 0, 830_617, 2)  # 0.001 ms more idle time
    assert "; net of that time, the idle time changed by +0.001 ms: the device waited longer for work" in _note(res)


def test_free_other_leading_most_of_an_export_switch_is_read_net_of_the_window(samples: Path) -> None:
    """Kills sn_idle_most (the window left out where Free: Other leads the steps that hold most of the change, not
    all): text level 1 rank 1 -> DB level 1 rank 0 puts most of the change in Free: Other and Uncovered
    Communication; 5.686 ms of the DB side's Free: Other are its window tasks (SQL), so the device idled less by the
    DB run's free lane (OVERLAP_ANALYSIS type 3) less the text run's (trace_view.json's Free lane)."""
    from test_export_switch import _db_held, _overlap_lanes

    text = samples / "msinsight/test/data/pytorch/text/level1/rank1_ascend_pt"
    db = samples / DB / "level1/rank0_ascend_pt"
    (free_lane,), = sql(_db_file(db), "SELECT sum(endNs - startNs) FROM OVERLAP_ANALYSIS WHERE type = 3")
    idle = free_lane - _overlap_lanes(text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")["Free"]
    _, outside = _db_window(_db_file(db))
    assert outside == 5_685_773 and idle < -500
    note = _note(compare(str(text), str(db)))
    assert "the waterfall puts most of it in Free: Other " in note
    assert (f"; Free: Other is device idle time and, on the comparison side (a DB export), also its "
            f"{_db_held(_db_file(db))}, which a text export's E2E leaves out; net of that time, the idle time changed "
            f"by {idle / 1e6:+.3f} ms: the device waited less for work") in note
    assert f"{outside / 1e6:.3f} ms before its first computing or communication (2 copies, " in note


def test_a_gpu_side_measures_no_wait_so_no_split_is_said(samples: Path) -> None:
    """Kills ov_wm_groups (a side without communication groups read as measuring Wait): the H200 AlexNet trace (no
    HCCL group: a GPU side has no Wait) against the DB level-1 export of the script, whose one group waits 2.676 ms.
    The split would say "Wait changed by +2.676 ms, 0.000 ms -> 2.676 ms", a GPU Wait of 0 that reads nothing."""
    from conftest import TEST_DATA

    gpu = next(TEST_DATA.glob("kineto/alexnet_h200_rank0.*.pt.trace.json.gz"))
    db = samples / DB / "level1/rank0_ascend_pt"
    assert sql(_db_file(db), "SELECT count(DISTINCT groupName) FROM COMMUNICATION_OP") == [(1,)]
    for base, comp in ((gpu, db), (db, gpu)):
        res = compare(str(base), str(comp), enable_profiling_compare=True)
        assert res.frames["contributors"].attrs["wait_split"] is None
        assert "Wait (" not in _note(res)


def test_one_gpu_trace_given_twice_with_a_step_is_refused_for_both_sides() -> None:
    """Kills ap_oneinput (one input under two paths read as two): the GPU step refusal of one trace given as
    ``x`` and ``./x`` names both sides once, as the gate and the loaders' notes do (``api.one_input``)."""
    from conftest import TEST_DATA

    from msprof_compare.errors import UsageError

    trace = TEST_DATA / "kineto" / "legacy_resnet50_excerpt.pt.trace.json"
    rel = os.path.relpath(trace)
    for comparison in (str(trace), os.path.join(".", rel)):
        with pytest.raises(UsageError) as info:
            compare(str(trace), comparison, base_step=1, comparison_step=1)
        assert "(both sides: a GPU trace, where the step options do not apply" in str(info.value)
        assert "base side" not in str(info.value)


def test_a_ranks_gate_names_its_rank_on_every_stderr_line(samples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Kills dl_noreplace (the steps and contributors under "rank 1: Performance regression" written without their
    rank) and dl_noerror (a rank the gate cannot judge written without "error: "): text level 0 -> level 1, rank 1,
    at 20 %: +31.12 % by step_trace_time.csv (test_ranks' figures), so the gate lists its reasons, each line named
    "rank 1: "; heatMap's trace holds no E2E time, so the gate exits 1 with "error: rank 1: ...", as the CLI's
    other exit-1 lines begin."""
    from cliutil import error_lines
    from test_gate_result import HEATMAP, NPU_L1

    from msprof_compare.report.deliver import apply_gate

    text = samples / "msinsight/test/data/pytorch/text"
    res = compare(str(text / "level0/rank1_ascend_pt"), str(text / "level1/rank1_ascend_pt"),
                  enable_profiling_compare=True, fail_on_regression=20)
    capsys.readouterr()
    assert apply_gate(res, 1) == 3
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("rank 1: Performance regression: E2E time 100.602 ms -> 131.913 ms (+31.310 ms, "
                               "+31.12%)")
    assert len(lines) >= 2 and all(line.startswith("rank 1: ") for line in lines), lines
    assert lines[1].startswith("rank 1: Largest waterfall steps: ")
    res = compare(str(samples / NPU_L1), str(samples / HEATMAP), enable_profiling_compare=True, fail_on_regression=5)
    capsys.readouterr()
    assert apply_gate(res, 1) == 1
    err = capsys.readouterr().err
    assert error_lines(err) == err.splitlines() and err.startswith("error: rank 1: ")
    assert "no E2E time" in err


def test_db_call_stacks_are_read_only_for_the_module_detail_sheet(samples: Path) -> None:
    """Kills adb_details (PYTORCH_CALLCHAINS read under disable_details, which writes no ModuleCompare, the one sheet
    that shows a stack: ~1 us a frame, 0.5 s at 470k): the DB level-1 export's ops read "N/A" with disable_details,
    and 316 stacks without it (its text export's count, test_export_parity)."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    db = samples / DB / "level1/rank0_ascend_pt"
    (chained,), = sql(_db_file(db), "SELECT count(*) FROM PYTORCH_API WHERE type = 50001 AND callchainId IN "
                                    "(SELECT id FROM PYTORCH_CALLCHAINS)")
    assert chained == 316
    ops = load_profile(str(db), build_options(enable_operator_compare=True)[0]).ops
    assert (ops["call_stack"] != "N/A").sum() == chained
    ops = load_profile(str(db), build_options(enable_operator_compare=True, disable_details=True)[0]).ops
    assert set(ops["call_stack"]) == {"N/A"}


def test_db_call_stacks_of_a_chain_table_without_its_frame_depth_are_said(samples: Path, tmp_path: Path) -> None:
    """Kills adb_nonote (the ops' stacks read "N/A" without a word where PYTORCH_CALLCHAINS lacks a column it needs):
    a copy of the DB level-1 export whose chain table has no stackDepth column (the frames cannot be ordered) warns
    once, naming the DB, the table and the column, and every op reads "N/A"."""
    from dbutil import edited_copy

    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    src = _db_file(samples / DB / "level1/rank0_ascend_pt")
    db = edited_copy(src, tmp_path / "ascend_pytorch_profiler_0.db",
                     "ALTER TABLE PYTORCH_CALLCHAINS DROP COLUMN stackDepth")
    p = load_profile(str(db), build_options(enable_operator_compare=True)[0])
    assert set(p.ops["call_stack"]) == {"N/A"}
    said = [w for w in p.warnings if "PYTORCH_CALLCHAINS" in w]
    assert said == [f"{db}: table PYTORCH_CALLCHAINS lacks column(s) stackDepth: the torch ops' call stacks read N/A"]


def test_a_db_export_without_window_tasks_has_no_window_to_take_out(samples: Path, tmp_path: Path) -> None:
    """Kills vd_ge0 (a window of 0 ns kept): a copy of the DB level-1 export without its non-compute tasks outside
    the first computing / communication start and the last end (SQL: its E2E 137.919 -> 132.234 ms, 0 ns outside)
    beside the text level-1 export has no window tasks, so neither the verdict's aside nor the note on Free: Other
    speaks of "0.000 ms before its first computing or communication"."""
    import shutil

    from dbutil import edited_copy
    from test_export_switch import DB_L1, TEXT_L1

    from msprof_compare.compare.verdict import export_window

    src = samples / DB_L1
    db = _db_file(src)
    busy = sql(db, "SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
                   " UNION ALL SELECT startNs, endNs FROM COMMUNICATION_OP")
    lo, hi = min(s for s, _ in busy), max(e for _, e in busy)
    copy = tmp_path / src.name
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("*.db"))
    edited = edited_copy(db, copy / "ASCEND_PROFILER_OUTPUT" / db.name,
                         f"DELETE FROM TASK WHERE (startNs < {lo} OR endNs > {hi}) AND globalTaskId NOT IN "
                         "(SELECT globalTaskId FROM COMPUTE_TASK_INFO)")
    assert _db_window(db) == (137_919_295, 5_685_773) and _db_window(edited) == (132_233_522, 0)
    res = compare(str(samples / TEXT_L1), str(copy))
    assert int(res.frames["e2e"]["comparison_ns"].iloc[0]) == 132_233_522
    assert export_window(res, res.frames["e2e"]) is None
    assert "computing or communication (" not in _note(res) and "a DB export's, holds" not in res.verdict


def test_db_copies_the_sdma_rule_counts_are_not_said_again_as_unread(samples: Path, tmp_path: Path) -> None:
    """Kills bdb_minus (a DB export's copies that SDMA Time counts also counted among those it leaves out): a copy of
    the DB level-1 export whose 22 MEMCPY_ASYNC tasks on compute stream 2 are typed SDMA_SQE, as an older export
    types them (no stream waits on an EVENT_WAIT_SQE task, so every compute stream counts): SDMA Time holds those
    22 and the copies left out are the 2 MEMCPY_ASYNC tasks on stream 3 alone (SQL)."""
    from dbutil import edited_copy

    from msprof_compare.compare.overall import breakdown_of
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import Options

    src = samples / DB / "level1/rank0_ascend_pt"
    db = _db_file(src)
    memcpy = ("SELECT t.streamId, count(*), sum(t.endNs - t.startNs) FROM TASK t JOIN STRING_IDS s "
              "ON s.id = t.taskType WHERE s.value = 'MEMCPY_ASYNC' GROUP BY t.streamId ORDER BY t.streamId")
    (s2, n2, ns2), (s3, n3, ns3) = sql(db, memcpy)
    assert (s2, n2, ns2, s3, n3, ns3) == (2, 22, 861_839, 3, 2, 4_860)
    assert sql(db, "SELECT count(*) FROM STRING_IDS WHERE value IN ('SDMA_SQE', 'EVENT_WAIT_SQE')") == [(0,)]
    copy = tmp_path / src.name
    (copy / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    edited = edited_copy(db, copy / "ASCEND_PROFILER_OUTPUT" / db.name,
                         "INSERT INTO STRING_IDS (id, value) VALUES ((SELECT max(id) + 1 FROM STRING_IDS), 'SDMA_SQE')",
                         "UPDATE TASK SET taskType = (SELECT id FROM STRING_IDS WHERE value = 'SDMA_SQE') WHERE "
                         "streamId = 2 AND taskType = (SELECT id FROM STRING_IDS WHERE value = 'MEMCPY_ASYNC')")
    assert sql(edited, memcpy) == [(3, 2, 4_860)]
    opts = Options()
    bd = breakdown_of(load_profile(str(copy), opts), opts)
    assert (bd.sdma_stream.count, bd.sdma_stream.ns) == (n2, ns2)
    assert (bd.unread_copies.count, bd.unread_copies.ns) == (n3, ns3)
