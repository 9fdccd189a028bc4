"""The gate of a result compared without the time breakdown (``compare(...).regression_gate()`` after a compare
without ``fail_on_regression``) makes a breakdown for itself (``gate.gate_frames``); the notes under its contributors
must read it as the Summary reads the breakdown of a run that makes one (the CLI's ``--fail_on_regression`` run).
The msinsight AlexNet samples (PROVENANCE.md); figures from the raw files by the reckonings of test_export_switch
and test_summary_communication (SQL on the DBs, the text export's Overlap Analysis lanes)."""

from __future__ import annotations

from decimal import Decimal

from test_export_switch import DB_L1, TEXT_L1, _db_file, _db_held
from test_export_switch_idle import _idle_change_ns
from test_summary_communication import DB, _raw_split

from msprof_compare import compare
from msprof_compare.report.json_report import to_document


def _gates(base: str, comparison: str) -> tuple[str, str]:
    """The gate's message at 0 % of an operator comparison judged after the compare (no breakdown made by the run),
    and of the same comparison run with the gate (a breakdown made by the Summary, as the CLI's run makes it)."""
    alone = compare(base, comparison, enable_operator_compare=True)
    assert "e2e" not in alone.frames  # the gate makes its own breakdown
    gated = compare(base, comparison, enable_operator_compare=True, fail_on_regression=0)
    assert "e2e" in gated.frames
    return alone.regression_gate(0).message, gated.regression_gate(0).message


def test_free_other_of_an_export_switch_is_read_net_of_the_db_window_by_the_gate_alone(samples):
    """Text level 1 -> DB level 1: Free: Other +5.200 ms, 5.686 ms of it the DB side's window tasks, so the device
    idled 0.486 ms less. The gate judged after the compare read the +5.200 ms as idle time, "the device waited
    longer for work", where the run with the gate said "less"."""
    outside, idle = _idle_change_ns(samples)
    assert (outside, idle) == (5_685_773, -485_906)
    alone, gated = _gates(str(samples / TEXT_L1), str(samples / DB_L1))
    # under the gate's E2E line, which says what the window tasks are, the note gives their figure alone
    said = (f"also the comparison side's {Decimal(outside) / 10**6:.3f} ms before its first computing or "
            "communication, which the E2E line names; net of that time, the idle time changed by "
            f"{Decimal(idle) / 10**6:+.3f} ms: the device waited less for work")
    assert (f"the comparison side's E2E, a DB export's, holds {Decimal(outside) / 10**6:.3f} ms before its first "
            "computing or communication") in gated.splitlines()[0]
    assert said in gated
    assert said in alone and "waited longer" not in alone
    # the gate judged after a run without the time breakdown reads the copy tasks too (the loader reads them in every
    # run; it gave that time and its place alone), so it says what the time holds (test_export_switch._db_held: SQL)
    held = _db_held(_db_file(samples / DB_L1))
    assert f"holds {held}, which" in gated and f"holds {held}, which" in alone
    assert alone == gated


def test_wait_and_transmit_are_split_by_the_gate_alone(samples):
    """DB level 2 -> level 1: the communication groups' +7.991 ms is Wait +2.670 ms and Transmit +5.321 ms by the raw
    DBs; the gate judged after the compare left that sentence out."""
    l2, l1 = samples / DB / "level2/rank0_ascend_pt", samples / DB / "level1/rank0_ascend_pt"
    (wb, tb), (wc, tc) = _raw_split(l2), _raw_split(l1)
    alone, gated = _gates(str(l2), str(l1))
    said = (f"Wait changed by {Decimal(wc - wb) / 10**6:+.3f} ms, "
            f"{Decimal(wb) / 10**6:.3f} ms -> {Decimal(wc) / 10**6:.3f} ms, and Transmit by "
            f"{Decimal(tc - tb) / 10**6:+.3f} ms")
    assert said in gated
    assert said in alone
    assert alone == gated


def test_notes_that_send_the_reader_to_overall_metrics_say_where_the_run_writes_none(samples):
    """A run with the gate and without the time-breakdown comparison makes a breakdown for the gate, but writes no
    OverallMetrics: the Wait / Transmit note (DB level 2 -> level 1, operators compared) and the note on
    communication no sheet breaks down by op (two Level0 DB exports, communication compared) sent the reader to
    OverallMetrics' rows all the same. They now say the run writes none and which option adds it, as the note on a
    kernel contributor that is an HCCL op does; a run that writes OverallMetrics says nothing more."""
    absent = "; this run writes no OverallMetrics: the enable_profiling_compare option adds it"
    l2, l1 = samples / DB / "level2/rank0_ascend_pt", samples / DB / "level1/rank0_ascend_pt"
    r0, r1 = samples / DB / "level0/rank0_ascend_pt", samples / DB / "level0/rank1_ascend_pt"
    for (base, comparison), option, said in (
            ((l2, l1), "enable_operator_compare", f"(OverallMetrics' Wait and Transmit rows{absent})."),
            ((r0, r1), "enable_communication_compare", f"OverallMetrics gives it by communication group{absent}.")):
        gated = compare(str(base), str(comparison), fail_on_regression=0, **{option: True})
        assert "OverallMetrics" not in gated.sheet_names
        lines = to_document(gated)["summary"]["contributors_note_lines"]
        assert [line for line in lines if line.endswith(said)], lines
        assert [line for line in gated.regression_gate(0).lines if line.endswith(said)]
        full = compare(str(base), str(comparison), fail_on_regression=0, enable_profiling_compare=True,
                       **{option: True})
        assert "OverallMetrics" in full.sheet_names
        assert absent not in " ".join(to_document(full)["summary"]["contributors_note_lines"])
