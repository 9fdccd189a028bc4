"""The note under the contributors where Free: Other holds a text -> DB export switch's E2E change: text level 1
against DB level 1, rank 0 (the msinsight AlexNet samples, separate runs of one script). The waterfall puts the
change in Free: Other +5.200 ms, and the note read it as idle time, "the device waited longer for work, as where the
host was slower to launch it"; but 5.686 ms of the DB side's Free: Other are its non-kernel device tasks
(MEMCPY_ASYNC) in the window the original's DB rule spans and a text export's leaves out, so the device idled
0.486 ms less (test_export_switch's raw reckoning, whose figures this reuses: SQL on the DB, the text export's
Overlap Analysis lanes, and the DB's own OVERLAP_ANALYSIS lanes that MindStudio Insight wrote)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from dbutil import sql
from test_export_switch import DB_L1, TEXT_L1, _db_file, _db_window, _overlap_lanes

from msprof_compare import compare
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.compare.verdict import export_window


def _idle_change_ns(samples) -> tuple[int, int]:
    """(the DB side's window tasks outside its computing and communication, the DB run's free lane less the text
    run's), ns, by the raw files."""
    text, db = samples / TEXT_L1, samples / DB_L1
    (free_lane,), = sql(_db_file(db), "SELECT sum(endNs - startNs) FROM OVERLAP_ANALYSIS WHERE type = 3")
    _, outside = _db_window(_db_file(db))
    return outside, free_lane - _overlap_lanes(text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")["Free"]


def _note(res) -> str:
    """The note under the contributors (the console's, the Summary sheet's and the JSON's)."""
    return unexplained_note(res.frames["contributors"], res.frames["waterfall"],
                            res.frames.get("contributor_communication"))


def _ms(ns: int) -> str:
    return f"{Decimal(ns) / 10**6:.3f}"


@pytest.mark.parametrize("db_side", ["comparison", "base"])
def test_free_other_of_an_export_switch_is_read_net_of_the_db_window(samples, db_side):
    """Both ways round: the DB side's window tasks are said with their figure, and the idle time's change net of
    them, -0.486 ms where the DB run is the comparison (it waited less), +0.486 ms the other way."""
    outside, idle = _idle_change_ns(samples)
    assert (outside, idle) == (5_685_773, -485_906)  # test_export_switch's figures
    text, db = str(samples / TEXT_L1), str(samples / DB_L1)
    res = compare(text, db) if db_side == "comparison" else compare(db, text)
    note = _note(res)
    free = 5_199_867 if db_side == "comparison" else -5_199_867
    sign = 1 if db_side == "comparison" else -1
    assert f"the waterfall puts all of it in Free: Other {sign * 5.199867:+.3f} ms" in note
    assert (f"Free: Other is device idle time and, on the {db_side} side (a DB export), also its {_ms(outside)} ms "
            "of device tasks outside its computing and communication, which a text export's E2E leaves out; net of "
            f"them, the idle time changed by {sign * idle / 10**6:+.3f} ms: the device waited "
            f"{'less' if db_side == 'comparison' else 'longer'} for work, as where the host was "
            f"{'quicker' if db_side == 'comparison' else 'slower'} to launch it or to load its data; ApiCompare "
            "times the host calls") in note
    assert sign * idle == free - sign * outside  # the waterfall's step less the window, the raw files' idle change


def test_only_a_text_export_beside_a_db_export_has_a_window_taken_out(samples):
    """The window is the DB side's, and only beside a text export: two DB exports both span their window tasks (level
    2 -> level 1: 4.987 and 5.686 ms), two text exports none, so Free: Other is idle time alone for them."""
    db2 = str(samples / "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt")
    text2 = str(samples / "msinsight/test/data/pytorch/text/level2/rank0_ascend_pt")
    text, db = str(samples / TEXT_L1), str(samples / DB_L1)
    outside, _ = _idle_change_ns(samples)
    for base, comparison, want in ((text, db, ("comparison", outside)), (db, text, ("base", outside)),
                                   (db2, db, None), (text2, text, None)):
        res = compare(base, comparison, enable_profiling_compare=True)
        assert export_window(res, res.frames["e2e"]) == want
