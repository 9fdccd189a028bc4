"""The list of valid steps a refused step names ("please choose from the valid steps: ..."): a long job's
thousands of steps are named as ranges ("1-4000"), and past a dozen pieces as the first ones, "...", the last
and the count, on the DB and text exports and the kernel_details refusal (left64g, session 64). The words are
the original's; only the list is shorter (docs/differences.md, "A step without data stops the run")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dbutil import edited_copy, sql
from test_bad_corpus import run_cli

from msprof_compare.errors import StepError
from msprof_compare.loaders import load_profile
from msprof_compare.options import build_options
from msprof_compare.textsafe import id_ranges

L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
TEXT_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
OPTS, _ = build_options()


def test_id_ranges_by_hand() -> None:
    """Runs of three or more consecutive ids become "first-last"; two in a row stay "4, 5"; ids that are not plain
    non-negative integers ("x", "007", "-1") stay as they are and break a run; the order given is kept."""
    assert id_ranges([4, 5]) == "4, 5"
    assert id_ranges(list(range(1, 4001))) == "1-4000"
    assert id_ranges([50, 49]) == "50, 49"
    assert id_ranges(["4", "5", "6", "x", "7", "007", "-1", "0", "1", "2"]) == "4-6, x, 7, 007, -1, 0-2"
    # 4,000 even ids: no run, so the first 11, "...", the last and the count
    assert id_ranges(list(range(0, 8000, 2))) == "0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, ..., 7998 (4,000 in all)"
    assert id_ranges(["a\x1bb"]) == "a\\x1bb" and id_ranges(["a\x1bb"], escape=False) == "a\x1bb"


def test_id_ranges_edges_by_hand() -> None:
    """Exactly ``limit`` pieces are all shown; past it the count is of the ids, not of the pieces; a zero-padded
    id ("007") does not extend a run of plain ones; ids written with spaces (text exports) are read stripped."""
    twelve = [3 * i for i in range(12)]  # 12 ids, none consecutive: 12 pieces
    assert id_ranges(twelve) == ", ".join(str(i) for i in twelve)
    runs = [i for r in range(13) for i in (10 * r, 10 * r + 1, 10 * r + 2)]  # 13 runs of three: 39 ids
    assert id_ranges(runs) == ("0-2, 10-12, 20-22, 30-32, 40-42, 50-52, 60-62, 70-72, 80-82, 90-92, 100-102, ..., "
                               "120-122 (39 in all)")
    assert id_ranges(["5", "6", "007"]) == "5, 6, 007"
    assert id_ranges([" 4", "5 ", "6"]) == "4-6"


def test_db_refusal_names_thousands_of_steps_as_ranges(tmp_path: Path) -> None:
    """The l1 DB excerpt (step 50) with 4,000 STEP_TIME rows 1001..5000 added before it (synthetic, 10 ns each,
    disjoint): step 7 was refused with every id, a line of some 24 KB; now "50, 1001-5000" in table order, through
    the API and as the CLI's one error line (exit 2)."""
    (start,), = sql(L1, "SELECT startNs FROM STEP_TIME WHERE id = 50")
    rows = ", ".join(f"({i}, {start - 100_000 + 20 * (i - 1000)}, {start - 100_000 + 20 * (i - 1000) + 10})"
                     for i in range(1001, 5001))
    (tmp_path / "db").mkdir()
    db = edited_copy(L1, tmp_path / "db" / "ascend_pytorch_profiler_0.db", f"INSERT INTO STEP_TIME VALUES {rows}")
    assert [r[0] for r in sql(db, "SELECT id FROM STEP_TIME ORDER BY rowid")] == [50, *range(1001, 5001)]
    want = f"{db}: Invalid Step Id: 7, please choose from the valid steps: 50, 1001-5000"
    with pytest.raises(StepError) as info:
        load_profile(str(db), OPTS, step=7)
    assert str(info.value) == want
    code, _, err = run_cli(["-bp", str(db), "-d", str(db), "--base_step", "50", "--comparison_step", "7",
                            "-o", str(tmp_path / "out")])
    # one input on both sides, its step 7 asked by --comparison_step alone: the side the step was refused for
    assert code == 2 and [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: {want} (comparison side)"]


def test_text_refusal_names_thousands_of_markers_shortly(samples: Path, tmp_path: Path) -> None:
    """The level1 text sample (one marker, ProfilerStep#50) with 3,000 markers #1..#5999 (odd ids, no run)
    appended after its last event (synthetic): the list keeps the markers' order, 50 first, then the first
    odd ones, "...", the last (5999) and the count of distinct steps, 3,001."""
    src = samples / TEXT_L1
    dest = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dest)
    trace = dest / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text(encoding="utf-8"))
    mark = next(e for e in events if e.get("name") == "ProfilerStep#50")
    end = max(float(e["ts"]) + float(e.get("dur", 0)) for e in events if "ts" in e)
    events += [dict(mark, name=f"ProfilerStep#{i}", ts=f"{end + 10 * i:.3f}", dur=1.0) for i in range(1, 6000, 2)]
    trace.write_text(json.dumps(events), encoding="utf-8")
    want = (f"{trace}: Invalid step id: 8, please choose from the valid steps: 50, 1, 3, 5, 7, 9, 11, 13, 15, 17, "
            "19, ..., 5999 (3,001 in all)")
    code, _, err = run_cli(["-bp", str(dest), "-d", str(dest), "--base_step", "50", "--comparison_step", "8",
                            "-o", str(tmp_path / "out")])
    # one input on both sides, its step 7 asked by --comparison_step alone: the side the step was refused for
    assert code == 2 and [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: {want} (comparison side)"]
