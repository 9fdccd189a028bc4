"""A torch_npu user whose export type changed between two runs: the text export of one run against the DB export
of the other (the msinsight AlexNet samples, separate runs of one script). The "NPU export kind" note must name
the figures of the run that the two kinds define differently, with the measures the raw files give, and nothing
the run does not show; every expected figure here is computed from the raw files, not by the loaders."""

from __future__ import annotations

import csv
import logging
import shutil
from pathlib import Path

import pytest
from dbutil import edited_copy, sql
from test_overall_npu import BASE_ZERO

from msprof_compare import compare
from msprof_compare.compare import checks

TEXT_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
DB_L1 = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
TEXT_L0 = "msinsight/test/data/pytorch/text/level0/rank0_ascend_pt"
DB_L0 = "msinsight/test/data/pytorch/db/level0/rank0_ascend_pt"
#: TASK types the DB's E2E window leaves out (reference-1 §7.3.6)
KERNEL_TASKS = ("KERNEL_AICORE", "KERNEL_AIVEC", "FFTS_PLUS", "KERNEL_MIX_AIC", "KERNEL_MIX_AIV",
                "PROFILING_ENABLE", "PROFILING_DISABLE")


def _db_file(root: Path) -> Path:
    return next((root / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db"))


def _db_window(db: Path) -> tuple[int, int]:
    """(E2E, the part of it outside the first computing / communication start and the last end), ns, by SQL."""
    busy = sql(db, "SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
                   " UNION ALL SELECT startNs, endNs FROM COMMUNICATION_OP")
    marks = ",".join("?" * len(KERNEL_TASKS))
    lo, hi = sql(db, "SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                     f"WHERE s.value NOT IN ({marks})", KERNEL_TASKS)[0]
    b_lo, b_hi = min(s for s, _ in busy), max(e for _, e in busy)
    e2e = max(hi, b_hi) - min(lo, b_lo)
    return e2e, e2e - (b_hi - b_lo)


def _db_held(db: Path) -> str:
    """What the verdict says the DB side's time outside its computing and communication holds, by SQL: where it lies
    and the copy tasks (MEMCPY_ASYNC, SDMA_SQE, PCIE_DMA_SQE) in it, the rest idle time ("5.686 ms before its first
    computing or communication (2 copies, 0.831 ms, and 4.855 ms of idle time)" of the level-1 sample)."""
    from decimal import Decimal

    from spans import minus, union

    busy = sql(db, "SELECT t.startNs, t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId"
                   " UNION ALL SELECT startNs, endNs FROM COMMUNICATION_OP")
    b_lo, b_hi = min(s for s, _ in busy), max(e for _, e in busy)
    marks = ",".join("?" * len(KERNEL_TASKS))
    t_lo, t_hi = sql(db, "SELECT min(t.startNs), max(t.endNs) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                         f"WHERE s.value NOT IN ({marks})", KERNEL_TASKS)[0]
    lo, hi = min(t_lo, b_lo), max(t_hi, b_hi)
    outside, after = (hi - lo) - (b_hi - b_lo), hi - b_hi
    copies = sql(db, "SELECT t.startNs, t.endNs FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType WHERE s.value IN "
                     "('MEMCPY_ASYNC', 'SDMA_SQE', 'PCIE_DMA_SQE')")
    held = [iv for iv in union([(max(s, lo), min(e, hi)) for s, e in copies]) if iv[1] > iv[0]]
    held = minus(held, [(b_lo, b_hi)])
    n = sum(1 for s, e in copies if (e > lo and s < b_lo) or (e > b_hi and s < hi))
    ns = sum(e - s for s, e in held)
    where = ("before its first and after its last" if after and outside - after else
             "after its last" if after else "before its first")
    ms = [f"{Decimal(v) / 10**6:.3f}" for v in (outside, ns, outside - ns)]
    what = (f"{n} {'copy' if n == 1 else 'copies'}, {ms[1]} ms" + (f", and {ms[2]} ms of idle time" if outside - ns
                                                                   else "")) if n else "idle time"
    return f"{ms[0]} ms {where} computing or communication ({what})"


def _peaks_gb(text: Path) -> tuple[float, float]:
    """memory_record.csv's largest Total Reserved(MB), of every row and of the rows outside APP, in GB."""
    with open(text / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", newline="") as f:
        rows = [(r["Component"].strip(), float(r["Total Reserved(MB)"])) for r in csv.DictReader(f)]
    return max(v for _, v in rows) / 1024, max(v for c, v in rows if c != "APP") / 1024


def _hccl_rows(text: Path) -> int:
    """kernel_details.csv rows of HCCL ops that have a Type (KernelCompare rows)."""
    with open(text / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as f:
        return sum(1 for r in csv.DictReader(f)
                   if r["Type"].strip() not in ("", "N/A") and r["Accelerator Core"].strip() == "HCCL")


def _no_pmu(text: Path) -> tuple[int, float]:
    """kernel_details.csv kernels without PMU values (aiv_vec_time N/A), HCCL ops aside: (count, total us)."""
    with open(text / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["aiv_vec_time(us)"].strip() in ("", "N/A")
                and r["Accelerator Core"].strip() != "HCCL"]
    return len(rows), sum(float(r["Duration(us)"]) for r in rows)


def _note(res) -> dict:
    g = res.guards.set_index("Check")
    assert checks.EXPORT_CHECK in g.index
    return g.loc[checks.EXPORT_CHECK].to_dict()


def test_the_export_kind_note_says_how_to_compare_the_job_alone(samples):
    """The note told a user whose export type changed that the figures are partly the export's, and not how to
    leave that part out: it now says to collect both runs with one export_type (torch_npu's experimental_config,
    shared/spec/ascend-profiler-collection-zh.txt), as the profiler-settings note says to collect both alike."""
    res = compare(str(samples / TEXT_L1), str(samples / DB_L1), enable_profiling_compare=True)
    assert _note(res)["Detail"].startswith(
        "the two kinds define these figures differently (the original's rules), so their difference is partly the "
        "export's, not the job's (to compare the job alone, collect both runs with one torch_npu export_type): E2E "
        "and Free Time: ")


def test_the_kernel_compare_part_names_what_marks_the_hccl_ops(samples, tmp_path):
    """The note's KernelCompare part said the text side's HCCL ops are "(hcom_*)", a search for its KernelCompare
    rows (named by Type). An Accelerator Core of COMMUNICATION (newer torch_npu) marks one whatever its name
    (``model.hccl_core``): a copy of text level 1 whose 4 HCCL ops read that core and lose the hcom_ prefix of Name
    and Type is counted all the same, and the part names the cores, not a prefix no row of them holds. The sample
    itself keeps "(hcom_*)"."""
    import io

    plain = compare(str(samples / TEXT_L1), str(samples / DB_L1), enable_kernel_compare=True)
    assert "kernel_details.csv lists 4 HCCL op(s) (hcom_*), which" in _note(plain)["Detail"]
    dest = shutil.copytree(samples / TEXT_L1, tmp_path / "rank0_ascend_pt")
    kd = dest / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.reader(io.StringIO(kd.read_text(encoding="utf-8"), newline="")))
    core, name, kind = (rows[0].index(c) for c in ("Accelerator Core", "Name", "Type"))
    hand = [r for r in rows[1:] if r[core] == "HCCL"]
    assert len(hand) == 4 and all(r[name].startswith("hcom_") and r[kind].startswith("hcom_") for r in hand)
    for r in hand:
        r[core], r[name], r[kind] = "COMMUNICATION", r[name][len("hcom_"):], r[kind][len("hcom_"):]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    kd.write_text(out.getvalue(), encoding="utf-8")
    res = compare(str(dest), str(samples / DB_L1), enable_kernel_compare=True)
    assert ("KernelCompare: the base side's kernel_details.csv lists 4 HCCL op(s) (hcom_* or Accelerator Core HCCL "
            "/ COMMUNICATION), which a DB export's compute tasks do not hold") in _note(res)["Detail"]
    assert len(res.sheet("KernelCompare").query("Kernel == 'allReduce_'")) == 1


@pytest.mark.parametrize("swap", [False, True])
def test_time_breakdown_run_names_the_e2e_window_and_mem_usage(samples, caplog, swap):
    """A profiling-only run (the CI gate's) of a text against a DB export had no note at all, while the old one
    of a full run said "OverallMetrics compares". But the DB side's E2E window also spans its non-kernel tasks
    (5.686 ms of MEMCPY_ASYNC before the first kernel in level-1 rank 0, by SQL), which turned a 4.35 ms faster
    run into a "slower" verdict (text 136.581 ms against 137.919 ms, 132.234 ms on the text's terms), and the text
    side's Mem Usage counts memory_record.csv's APP rows, which MEMORY_RECORD lacks (2.06G against 1.49G), and
    leaves its 2 kernels without PMU values to Other (Vector 94 against 96). The note now names them, with those
    figures, on either side; it names no operator sheet this run does not make."""
    text, db = samples / TEXT_L1, samples / DB_L1
    e2e, outside = _db_window(_db_file(db))
    assert round(outside / 1e6, 3) == 5.686  # the premise, by SQL
    peak, without = _peaks_gb(text)
    base, comparison = (db, text) if swap else (text, db)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(comparison), enable_profiling_compare=True)
    row = _note(res)
    db_side, text_side = ("base", "comparison") if swap else ("comparison", "base")
    assert (row["Status"], row["Base"], row["Comparison"]) == (("note", "db", "text") if swap else
                                                               ("note", "text", "db"))
    detail = row["Detail"]
    assert (f"the {db_side} side's {e2e / 1e6:.3f} ms hold {outside / 1e6:.3f} ms outside them "
            f"({(e2e - outside) / 1e6:.3f} ms as a text export measures it)") in detail
    assert f"Mem Usage: the {text_side} side's {peak:.2f}G counts memory_record.csv's APP component " \
           f"({without:.2f}G without it)" in detail
    assert (f"{peak:.2f}", f"{without:.2f}") == ("2.06", "1.49")
    # the E2E the note gives is the OverallMetrics figure of that side
    e2e_col = "Duration(ms).1" if db_side == "comparison" else "Duration(ms)"
    om = res.sheet("OverallMetrics").set_index("Index")
    assert om.loc["E2E Time", e2e_col] == pytest.approx(e2e / 1e6, abs=1e-6)
    # the text side's kernels without PMU values go to Other, the DB side's to Vector: 2 DSAGenBitMask kernels
    n, us = _no_pmu(text)
    assert (n, round(us, 2)) == (2, 5.52)
    assert (f"the {text_side} side's kernel_details.csv has {n} kernel(s) without PMU values (N/A), "
            f"{us / 1e3:.3f} ms, which a text export leaves to Other") in detail
    cols = ["Number.1", "Number"] if swap else ["Number", "Number.1"]
    text_n, db_n = om.loc["\tVector", cols]
    assert db_n - text_n == n
    assert "Wait Time: a text export picks the plane that waits least" in detail
    assert "the communication group rows: a text export names a group 'Group N Communication'" in detail
    assert "operator and module" not in detail and "KernelCompare" not in detail
    assert "OverallMetrics compares" not in detail
    # the log: the lead on one line, then a line per figure (one line of ~1,500 characters before), which
    # together say the Detail cell's text
    msgs = caplog.messages
    warned = [i for i, m in enumerate(msgs) if m.startswith(checks.NOTE_CHECKS[checks.EXPORT_CHECK])]
    assert len(warned) == 1
    first = warned[0]
    assert msgs[first].endswith(checks.EXPORT_LEAD[:-2] + ":")
    bullets = []
    for m in msgs[first + 1:]:
        if not m.startswith("  - "):
            break
        bullets.append(m[4:])
    # E2E and Free Time, Computing Time's Number, Wait Time, the group rows, Mem Usage
    assert [b.split(":")[0] for b in bullets] == ["E2E and Free Time", "Computing Time's Number and categories",
                                                 "Wait Time", "the communication group rows", "Mem Usage"]
    assert checks.EXPORT_LEAD + "; ".join(bullets) == detail


def test_db_window_without_tasks_outside_its_busy_span_names_no_e2e_part(samples, tmp_path):
    """The level-1 DB export with every task clamped into the span of its computing and communication (by SQL) has
    no device time outside it, its E2E the 132.234 ms a text export would measure: the note then names no E2E
    window (it said "hold 0.000 ms outside them" nowhere, as no sample lacks such tasks); its other figures stay."""
    db = _db_file(samples / DB_L1)
    e2e, outside = _db_window(db)
    lo, hi = sql(db, "SELECT min(lo), max(hi) FROM (SELECT t.startNs lo, t.endNs hi FROM COMPUTE_TASK_INFO c "
                     "JOIN TASK t ON t.globalTaskId = c.globalTaskId "
                     "UNION ALL SELECT startNs, endNs FROM COMMUNICATION_OP)")[0]
    inside = edited_copy(db, tmp_path / db.name, f"UPDATE TASK SET startNs = MIN(MAX(startNs, {lo}), {hi}), "
                         f"endNs = MAX(MIN(endNs, {hi}), {lo})")
    assert _db_window(inside) == (e2e - outside, 0) == (132_233_522, 0)
    detail = _note(compare(str(samples / TEXT_L1), str(inside), enable_profiling_compare=True))["Detail"]
    assert "E2E and Free Time" not in detail
    assert detail.startswith(checks.EXPORT_LEAD + "Computing Time's Number and categories: the base side's")


def test_mem_usage_part_needs_a_difference_the_figures_show(samples, tmp_path):
    """The Mem Usage part compares the text side's peak with and without the APP rows as the note writes them (GB to
    2 decimals): the level-1 text export with its APP rows' Total Reserved set 2 MB above the other rows' peak
    (1526.75 MB) reads 1.49G either way, so the note has no Mem Usage part beside the figures it still names."""
    text = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / TEXT_L1, text)
    record = text / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    record.chmod(0o644)
    lines = record.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("APP,"):
            cells = line.split(",")
            cells[3] = "1528.75"
            lines[i] = ",".join(cells)
    record.write_text("\n".join(lines))
    peak, without = _peaks_gb(text)
    assert without * 1024 == 1526.75 and peak * 1024 == 1528.75 and f"{peak:.2f}" == f"{without:.2f}" == "1.49"
    detail = _note(compare(str(text), str(samples / DB_L1), enable_profiling_compare=True))["Detail"]
    assert "Mem Usage" not in detail and "Wait Time" in detail


def test_memory_only_run_names_mem_usage_alone(samples):
    """A memory-only run of a text against a DB export makes no time breakdown, but its memory line reads the
    same peaks as Mem Usage: the note gives the text side's APP component (memory_record.csv, by csv) and no
    figure of the time breakdown or the operator sheets."""
    text, db = samples / TEXT_L1, samples / DB_L1
    peak, without = _peaks_gb(text)
    res = compare(str(text), str(db), enable_memory_compare=True)
    assert _note(res)["Detail"] == (checks.EXPORT_LEAD + f"Mem Usage: the base side's {peak:.2f}G counts "
                                    f"memory_record.csv's APP component ({without:.2f}G without it), which a DB "
                                    "export's MEMORY_RECORD does not hold")


def test_kernel_compare_run_names_the_hccl_rows_only_where_they_have_a_type(samples):
    """A text export's kernel_details.csv lists the HCCL ops, which KernelCompare shows with nothing beside them
    on a DB side (COMPUTE_TASK_INFO holds no HCCL op): the note counts them (4 in level 1, from the CSV). A
    Level0 export writes their Type N/A, so they make no KernelCompare row there and the note says nothing of
    them."""
    n = _hccl_rows(samples / TEXT_L1)
    assert n == 4
    res = compare(str(samples / TEXT_L1), str(samples / DB_L1), enable_kernel_compare=True)
    assert f"KernelCompare: the base side's kernel_details.csv lists {n} HCCL op(s)" in _note(res)["Detail"]
    assert len(res.sheet("KernelCompare").query("Kernel == 'hcom_allReduce_'")) == 1
    assert _hccl_rows(samples / TEXT_L0) == 0
    res0 = compare(str(samples / TEXT_L0), str(samples / DB_L0), enable_kernel_compare=True,
                   enable_profiling_compare=True)
    detail0 = _note(res0)["Detail"]
    assert "KernelCompare" not in detail0
    # level 0 has no Notify_Wait task on either side (the DB's task types are N/A, by SQL), so no Wait Time to
    # differ by the plane rule; the group rows still do not pair
    assert sql(_db_file(samples / DB_L0), "SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN STRING_IDS s "
               "ON s.id = c.taskType WHERE s.value = 'Notify_Wait'")[0][0] == 0
    trace = (samples / TEXT_L0 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8")
    assert '"Notify_Wait"' not in trace
    assert "Wait Time" not in detail0 and "the communication group rows" in detail0
    # a Level0 kernel_details.csv has no PMU column at all, so the breakdown shows no Computing Time's Number to
    # differ by the N/A rows; --use_kernel_type makes no KernelCompare, whose HCCL rows were the one figure to name
    assert "Computing Time's Number" not in detail0
    kt = compare(str(samples / TEXT_L1), str(samples / DB_L1), enable_kernel_compare=True, use_kernel_type=True)
    assert checks.EXPORT_CHECK not in kt.guards["Check"].tolist()


@pytest.mark.parametrize("swap", [False, True])
def test_verdict_and_gate_say_what_the_db_window_holds(samples, swap):
    """The verdict and the --fail_on_regression line of text level 1 against DB level 1 read "+1.338 ms,
    slower" with no word that 5.686 ms (SQL) of the DB side's E2E are MEMCPY_ASYNC before its first kernel,
    which the text side's E2E leaves out: both now say so, for the DB side on either side, also with a step
    (after the figures: between "E2E time (" and them its ~150 characters, ~230 with the step's words, parted the
    words from their figures); a pair of one kind says nothing of it."""
    text, db = samples / TEXT_L1, samples / DB_L1
    _, outside = _db_window(_db_file(db))
    base, comparison = (db, text) if swap else (text, db)
    side = "base" if swap else "comparison"
    assert _db_held(_db_file(db)) == (f"{outside / 1e6:.3f} ms before its first computing or communication (2 "
                                      "copies, 0.831 ms, and 4.855 ms of idle time)")
    said = f"the {side} side's E2E, a DB export's, holds {_db_held(_db_file(db))}, which a text export's leaves out"
    res = compare(str(base), str(comparison), enable_profiling_compare=True)
    assert res.verdict.startswith("E2E time 1") and res.verdict.endswith(f" than the base; {said}")
    code, message = res.regression_gate(1000)
    assert code == 0 and message.startswith("No regression: E2E time 1") and message.endswith(
        f"threshold +1000%; {said}")
    # compared without the time breakdown: the gate makes its own, the copy tasks read as in the run above (they were
    # read only with the breakdown, and the gate said the time and where it lay without the brackets' copies)
    bare = compare(str(base), str(comparison), enable_api_compare=True).regression_gate(1000)
    assert bare.lines == res.regression_gate(1000).lines and bare[1].endswith(f"threshold +1000%; {said}")
    step = compare(str(base), str(comparison), enable_profiling_compare=True, enable_memory_compare=True,
                   base_step=50, comparison_step=50)
    text_side = "comparison" if swap else "base"
    assert step.verdict.startswith(f"E2E time (whole profile on the {text_side} side: a text export's E2E ignores "
                                   "the step) 1") and step.verdict.endswith(f" than the base; {said}")
    # the peak likewise: the text side's memory_record.csv ignores the step, the DB side's peak is the step's
    from msprof_compare.report.summary_console import memory_line

    assert (f"Peak reserved memory (Mem Usage, whole profile on the {text_side} side: a text export's "
            "memory_record.csv ignores the step) ") in memory_line(step.frames["memory"])
    same = compare(str(text), str(samples / TEXT_L1.replace("level1", "level2")), enable_profiling_compare=True)
    assert "DB export" not in same.verdict


def test_a_folder_holding_both_exports_says_its_text_export_is_not_read(samples, tmp_path, caplog):
    """torch_npu's export_type text and db at once writes both into one ASCEND_PROFILER_OUTPUT; a folder's DB is
    read first (the original's rule), so against a text-only side the run warned of two kinds of export while the
    user holds a text export on both sides, and nothing said that the base folder's text export was passed over.
    The note now says so first, with the way out, which works: the same copy without its .db compares text with
    text (no export-kind note)."""
    both = tmp_path / "both_ascend_pt"
    shutil.copytree(samples / TEXT_L1, both)
    db = _db_file(samples / DB_L1)
    shutil.copyfile(db, both / "ASCEND_PROFILER_OUTPUT" / db.name)
    text = samples / TEXT_L1.replace("level1", "level2")
    said = ("which export was read: the base side's folder holds a text export too (trace_view.json beside "
            f"{db.name}), and a folder's DB export is read first, as in the original; a copy of the folder without "
            "the .db compares text with text")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(both), str(text), enable_profiling_compare=True)
    note = _note(res)
    assert (note["Base"], note["Comparison"]) == ("db", "text")
    assert note["Detail"].startswith(checks.EXPORT_LEAD + said + "; E2E and Free Time: ")
    assert f"  - {said}" in caplog.messages
    # the .db given as a file is the user's choice: no such words
    assert said not in _note(compare(str(both / "ASCEND_PROFILER_OUTPUT" / db.name), str(text),
                                     enable_profiling_compare=True))["Detail"]
    (both / "ASCEND_PROFILER_OUTPUT" / db.name).unlink()
    res = compare(str(both), str(text), enable_profiling_compare=True)
    assert res.base.source == "ascend_text"
    assert checks.EXPORT_CHECK not in res.guards["Check"].tolist()


def test_a_folder_holding_both_exports_under_a_name_not_utf8_says_so_too(samples, tmp_path):
    """The folder holding both exports inside one whose name is not UTF-8 (``bad\\xff/both_ascend_pt``): its note
    said nothing of the text export passed over, as it looked for the folder by the path's text (\\xNN escapes),
    which names no file; the same part as under a UTF-8 name now. Run as a user would, in a fresh interpreter (the
    loader's notes hold the name's bytes as lone surrogates, which a test log holding them fails pytest-xdist's
    report with)."""
    import os
    import subprocess
    import sys

    folder = os.fsencode(tmp_path) + b"/bad\xff"
    try:
        os.mkdir(folder)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    both = Path(os.fsdecode(folder + b"/both_ascend_pt"))
    shutil.copytree(samples / TEXT_L1, both)
    db = _db_file(samples / DB_L1)
    shutil.copyfile(db, both / "ASCEND_PROFILER_OUTPUT" / db.name)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    base = os.fsdecode(b"bad\xff/both_ascend_pt")
    proc = subprocess.run([sys.executable, "-m", "msprof_compare", "compare", "-bp", base,
                           "-d", str(samples / TEXT_L1.replace("level1", "level2")), "--enable_profiling_compare",
                           "-o", "out"], cwd=tmp_path, env=env, capture_output=True, text=True, errors="replace",
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    said = ("which export was read: the base side's folder holds a text export too (trace_view.json beside "
            f"{db.name}), and a folder's DB export is read first, as in the original; a copy of the folder without "
            "the .db compares text with text")
    assert [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "which export was read" in line] == [
        f"  - {said}"]


def test_level0_text_wait_of_zero_is_not_put_down_to_the_plane_rule(samples):
    """The export-kind note's Wait part says a text export's zero is its least-waiting plane's; a Level0 text
    export has no HCCL task at all (no Notify_Wait in its trace_view.json: read here), so its zero is no plane's
    pick but no reading, which the line under the console table says; the part is left out there and kept for the
    level-1 text export, whose planes do wait."""
    text0 = samples / TEXT_L0
    raw = (text0 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8")
    assert "Notify_Wait" not in raw
    part = "Wait Time: a text export picks the plane that waits least"
    res = compare(str(text0), str(samples / DB_L1), enable_profiling_compare=True)
    assert part not in _note(res)["Detail"]
    assert [n for n in res.summary["notes"] if "Wait Time" in n] == [
        f"Base row: its Wait Time {BASE_ZERO} is not a measurement: its trace_view.json holds the HCCL communication "
        "ops but no HCCL task (a Level0 export records none; Level1 or Level2 records them), so none reads as "
        "Notify_Wait."]
    assert part in _note(compare(str(samples / TEXT_L1), str(samples / DB_L1), enable_profiling_compare=True))["Detail"]


def _overlap_lanes(trace_view: Path) -> dict[str, int]:
    """A text export's Overlap Analysis lanes (Computing, Communication, Communication(Not Overlapped), Free) summed
    from trace_view.json as exact decimals of us, in ns, and their span under "E2E"."""
    import json
    from decimal import Decimal

    with open(trace_view) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e.get("args", {}).get("name") == "Overlap Analysis"}
    lanes: dict[str, Decimal] = {}
    lo = hi = None
    for e in events:
        if e.get("ph") == "X" and e.get("pid") in pids:
            ts, dur = Decimal(str(e["ts"])), Decimal(str(e["dur"]))
            lanes[e["name"]] = lanes.get(e["name"], Decimal(0)) + dur
            lo, hi = min(lo or ts, ts), max(hi or ts + dur, ts + dur)
    return {**{k: int(v * 1000) for k, v in lanes.items()}, "E2E": int((hi - lo) * 1000)}


def test_free_other_of_text_against_db_is_the_db_window_less_the_runs_idle_time(samples):
    """The waterfall's "Free: Other +5.200 ms" of text level 1 against DB level 1, taken apart on the raw files.
    MindStudio Insight wrote its own Overlap Analysis into the level-1 rank-0 DB sample (OVERLAP_ANALYSIS, type 0
    computing, 1 communication ops, 2 communication not overlapped, 3 free: the text export's four lanes, made by
    another tool from the same tables), so the DB run's breakdown on a text export's terms is there to read. Our DB
    breakdown equals it on computing and uncovered communication to the ns, and its Free Time is the lanes' free
    plus the part of the E2E window the original's DB rule adds (reference-1 §7.3.6: two MEMCPY_ASYNC, 5.686 ms
    before the first kernel, by SQL). So the +5.200 ms is +5.686 ms of that rule (the export's definition, said by
    the "NPU export kind" note) less 0.486 ms by which the DB run idled less than the text run (separate runs of
    one script, PROVENANCE.md): no figure of ours, and no data of the DB that its own lanes contradict."""
    from msprof_compare.compare.breakdown_db import db_breakdown
    from msprof_compare.compare.breakdown_npu import npu_breakdown
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    text, db = samples / TEXT_L1, samples / DB_L1
    lanes = {t: (n, ns) for t, n, ns in sql(_db_file(db), "SELECT type, count(*), sum(endNs - startNs) FROM "
                                                        "OVERLAP_ANALYSIS GROUP BY type")}
    (span,), = sql(_db_file(db), "SELECT max(endNs) - min(startNs) FROM OVERLAP_ANALYSIS")
    e2e, outside = _db_window(_db_file(db))
    # the premises, by SQL: 187 computing windows, the 4 allreduce ops (CommunicationCompare's 102.108100 ms), and
    # the four lanes tile their span
    assert (lanes[0], lanes[1]) == ((187, 8_903_431), (4, 102_108_100))
    assert lanes[0][1] + lanes[2][1] + lanes[3][1] == span == e2e - outside
    opts, _ = build_options(enable_profiling_compare=True)
    bd = db_breakdown(load_profile(str(db), opts))
    assert (bd.computing_ns, bd.uncovered_comm_ns) == (lanes[0][1], lanes[2][1])
    assert (bd.e2e_ns, bd.outside_busy_ns) == (e2e, outside)
    assert bd.free_ns - outside == lanes[3][1]  # 30.943917 - 5.685773 = 25.258144 ms
    t_lanes = _overlap_lanes(text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    t_bd = npu_breakdown(load_profile(str(text), opts))
    assert (t_bd.free_ns, t_bd.e2e_ns) == (t_lanes["Free"], t_lanes["E2E"])  # 25.744050 of 136.581009 ms
    idle_less = t_lanes["Free"] - lanes[3][1]
    assert (outside, idle_less) == (5_685_773, 485_906)
    wf = compare(str(text), str(db), enable_profiling_compare=True).waterfall.set_index("Step")
    free = wf.loc["Free: Other"]
    assert (free["Base(ns)"], free["Comparison(ns)"]) == (t_lanes["Free"], lanes[3][1] + outside)
    assert free["Comparison(ns)"] - free["Base(ns)"] == outside - idle_less == 5_199_867
