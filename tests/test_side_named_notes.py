"""Every loading note names its side (session 69, left69a): memory_record.csv's, communication.json's and
profiler_metadata.json's lines ended "(base side)" / "(comparison side)" / "(both sides)", but a CSV's, a
trace's or a DB's notes named the file alone, and two inputs whose paths differ by a digit (rank 0 against rank 1
of one job) gave lines that did not say which side they were about. Pinned on real samples, edited in one cell."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from cliutil import run_inproc
from dbutil import edited_copy, sql

LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank{}_ascend_pt"
DB_L1 = Path(__file__).parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
ALEXNET = Path(__file__).parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


def _said(err: str, words: str) -> list[str]:
    """The log lines of ``err`` (after ``[time][LEVEL] ``) holding ``words``."""
    return [line.split("] ", 1)[1] for line in err.splitlines() if words in line and "] " in line]


def test_a_kernel_details_note_names_its_side(capsys, samples, tmp_path):
    """Ranks 0 and 1 of the msinsight level1 text job, copied, row 1 of the comparison's kernel_details.csv given
    "abc" for its Duration(us) (the 10th field; no quote before it in that row): one value that is no number,
    said with "(comparison side)"; the same folder on both sides, "(both sides)"; the sides swapped, "(base
    side)"."""
    base, comp = tmp_path / "b" / "rank0_ascend_pt", tmp_path / "c" / "rank1_ascend_pt"
    shutil.copytree(samples / LEVEL1.format(0), base)
    shutil.copytree(samples / LEVEL1.format(1), comp)
    kd = comp / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = kd.read_bytes().split(b"\n")
    assert lines[0].split(b",")[9] == b"Duration(us)" and b'"' not in lines[1].split(b",", 10)[9]
    cells = lines[1].split(b",")
    cells[9] = b"abc"
    lines[1] = b",".join(cells)
    kd.write_bytes(b"\n".join(lines))
    note = f"{kd}: 1 Duration(us) value(s) are not numbers; read as missing."
    for (b, c), side in (((base, comp), "comparison side"), ((comp, comp), "both sides"),
                         ((comp, base), "base side")):
        code, _, err = run_inproc(capsys, "-bp", str(b), "-d", str(c), "-o", str(tmp_path / side[:4]))
        assert code == 0 and _said(err, "not numbers") == [f"{note} ({side})"], err


def test_a_db_note_names_its_side(capsys, tmp_path):
    """The l1 DB excerpt against a copy with a step 51 added from the middle of its step 50 (synthetic row): the
    STEP_TIME overlap note ends "(comparison side)"."""
    start, end = sql(DB_L1, "SELECT startNs, endNs FROM STEP_TIME WHERE id = 50")[0]
    (tmp_path / "c").mkdir()
    db = edited_copy(DB_L1, tmp_path / "c" / DB_L1.name,
                     f"INSERT INTO STEP_TIME VALUES (51, {(start + end) // 2}, {end})")
    code, _, err = run_inproc(capsys, "-bp", str(DB_L1), "-d", str(db), "-o", str(tmp_path / "out"))
    assert code == 0 and _said(err, "STEP_TIME") == [
        f"{db}: STEP_TIME step(s) 51 start before an earlier step ends; a task in two steps is in each when a step "
        "is asked for, and counted once without one (comparison side)"], err


def test_a_kineto_note_names_its_side(capsys, tmp_path):
    """The AlexNet H200 trace against a copy whose first kernel lasts -1 us: the negative-duration note ends
    "(base side)" with the copy as the base."""
    doc = json.loads(gzip.decompress(ALEXNET.read_bytes()))
    first = next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")
    first["dur"] = -1
    trace = tmp_path / "b" / "rank0.pt.trace.json"
    trace.parent.mkdir()
    trace.write_text(json.dumps(doc))
    code, _, err = run_inproc(capsys, "-bp", str(trace), "-d", str(ALEXNET), "-o", str(tmp_path / "out"))
    said = _said(err, "negative")
    assert code == 0 and len(said) == 1 and said[0].startswith(f"{trace}: 1 ") and said[0].endswith(" (base side)"), \
        err
