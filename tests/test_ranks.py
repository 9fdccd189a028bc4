"""Two multi-rank runs compared rank by rank (``api.ranks`` / ``api.compare_ranks``, the CLI's folders of ranks).

Expected figures are the profiler's own: each rank's ``step_trace_time.csv`` (Stage = the step's E2E time,
Computing, Communication(Not Overlapped), Free, in us), a file the time breakdown does not read.
"""

from __future__ import annotations

import collections
import contextlib
import csv
import gzip
import itertools
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import openpyxl
import pytest

import msprof_compare
from msprof_compare import api, cli
from msprof_compare.errors import ProfileError, UsageError
from msprof_compare.units import RankCycle
from tests.cliutil import error_lines, run_inproc, unraisable
from tests.dbutil import edited_copy, sql
from tests.logutil import blocks

REPO = Path(__file__).resolve().parents[1]
PT = REPO.parent / "shared" / "samples" / "msinsight" / "test" / "data" / "pytorch"
TEXT0, TEXT1, TEXT2 = (PT / "text" / f"level{n}" for n in range(3))
KINETO = REPO.parent / "shared" / "samples" / "hta" / "tests" / "data" / "trace_filter"
ANALYZE = "import sys; from msprof_compare.cli import analyze_main; analyze_main(sys.argv[1:])"
STAMPED = re.compile(r"performance_comparison_result_rank(\d+)_(\d{14})\.(xlsx|json)$")

pytestmark = pytest.mark.skipif(not PT.is_dir(), reason="sample data not found")


def stage(folder: Path, rank: int) -> dict[str, Decimal]:
    """The profiler's step figures (us, exact decimals) of one rank's text export."""
    path = folder / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    with open(path, newline="") as fh:
        row = next(csv.DictReader(fh))
    return {k: Decimal(row[k]) for k in ("Stage", "Computing", "Communication(Not Overlapped)", "Free")}


def ms(us: Decimal, sign: str = "") -> str:
    """us as the console shows ms: 3 decimals, a half away from zero."""
    return f"{(us / 1000).quantize(Decimal('0.001'), ROUND_HALF_UP):{sign}}"


def table_rows(out: str) -> dict[int, list[str]]:
    """The rank table's rows by rank (cells stripped)."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows[int(cells[0])] = cells
    return rows


def misnamed_ranks(folder: Path) -> str:
    """hta's two-rank job copied into ``folder`` under names that lie (rank 0's trace as sampled_rank-7.json.gz, rank
    1's as sampled_rank-0.json.gz), and the discovery's line on it, before any side it ends with."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", folder / "sampled_rank-7.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", folder / "sampled_rank-0.json.gz")
    return (f"{folder}: 2 Kineto traces' names say another rank than their distributedInfo.rank, each taken as the "
            "rank it records: sampled_rank-0.json.gz (rank 0 by its name, rank 1 recorded), sampled_rank-7.json.gz "
            "(rank 7 by its name, rank 0 recorded)")


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory: pytest.TempPathFactory):
    """``-bp text/level0 -d text/level1`` (two ranks each), both reports, the gate at 20 %."""
    out = tmp_path_factory.mktemp("ranks")
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT0), "-d", str(TEXT1), "-o",
                           str(out), "--output_format", "xlsx,json", "--fail_on_regression", "20"],
                          capture_output=True, text=True, timeout=300)
    return proc, out


def test_ranks_found_from_what_the_profiler_recorded():
    assert msprof_compare.ranks(TEXT0) == {0: str(TEXT0 / "rank0_ascend_pt"), 1: str(TEXT0 / "rank1_ascend_pt")}
    assert list(api.ranks(PT / "db" / "level1")) == [0, 1]
    assert list(api.ranks(TEXT2)) == [0]
    assert api.ranks(KINETO) == {r: str(KINETO / f"sampled_rank-{r}.json.gz") for r in (0, 1)}


def test_kineto_rank_from_the_head_not_the_name(tmp_path, monkeypatch, caplog):
    """The rank a Kineto trace records is its rank, whatever its name says; a name saying another rank is said in
    one warning line (left64b, session 64: NPU ranks recording two ranks are refused; a Kineto trace's name is the
    user's, which may count a node's local ranks, so it is said, not refused)."""
    line = misnamed_ranks(tmp_path)  # the names lie
    from msprof_compare.loaders import traceio

    monkeypatch.setattr(traceio, "read_bytes", lambda *a, **k: pytest.fail("a whole trace was read"))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert api.ranks(tmp_path) == {0: str(tmp_path / "sampled_rank-7.json.gz"),
                                       1: str(tmp_path / "sampled_rank-0.json.gz")}
    assert list(api.ranks(tmp_path)) == [0, 1]  # in rank order, not the names' order
    assert caplog.messages[0] == line


def test_kineto_names_saying_another_rank_are_listed_in_name_order(tmp_path, caplog):
    """The traces whose name says another rank are listed by name, digits as numbers (``sampled_rank-9`` before
    ``sampled_rank-10``), not in the order their recorded ranks were gathered (by path text: ``-10`` first); hta's
    two sampled ranks (rank 0 and 1 recorded, their heads read by the test above) renamed to say ranks 10 and 9."""
    shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "sampled_rank-10.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", tmp_path / "sampled_rank-9.json.gz")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert api.ranks(tmp_path) == {0: str(tmp_path / "sampled_rank-10.json.gz"),
                                       1: str(tmp_path / "sampled_rank-9.json.gz")}
    assert caplog.messages == [
        f"{tmp_path}: 2 Kineto traces' names say another rank than their distributedInfo.rank, each taken as "
        "the rank it records: sampled_rank-9.json.gz (rank 9 by its name, rank 1 recorded), "
        "sampled_rank-10.json.gz (rank 10 by its name, rank 0 recorded)"]


def test_a_rank_folder_of_cycles_naming_another_rank_is_said_per_cycle(tmp_path, caplog):
    """A ``rank3/`` folder holding one worker's two cycles (``w.100`` and ``w.200``, each a copy of hta's
    sampled_rank-0, rank 0 recorded) says rank 3 by its folder's name for each cycle's trace, the folder's name read
    with the trace's, as for a folder holding one trace."""
    (tmp_path / "rank3").mkdir()
    for ms in (100, 200):
        shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "rank3" / f"w.{ms}.pt.trace.json.gz")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert sorted(api.ranks(tmp_path).values()) == [str(tmp_path / "rank3" / f"w.{ms}.pt.trace.json.gz")
                                                        for ms in (100, 200)]
    sub = os.path.join("rank3", "w")
    assert caplog.messages == [
        f"{tmp_path}: 2 Kineto traces' names say another rank than their distributedInfo.rank, each taken as "
        f"the rank it records: {sub}.100.pt.trace.json.gz (rank 3 by its name, rank 0 recorded), "
        f"{sub}.200.pt.trace.json.gz (rank 3 by its name, rank 0 recorded)"]


def test_a_thousand_kineto_names_saying_another_rank_are_counted_with_separators(tmp_path, caplog):
    """The count of traces whose name says another rank carries thousands separators, as every count of 1,000+:
    1,000 heads (as the test below writes them) each named one rank above the rank it records, the first ten
    named by name order."""
    for r in range(1000):
        (tmp_path / f"w_rank{r + 1}.pt.trace.json").write_bytes(b'{"distributedInfo": {"rank": %d}, "traceEvents": []}'
                                                                 % r)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert list(api.ranks(tmp_path)) == list(range(1000))
    named = ", ".join(f"w_rank{r + 1}.pt.trace.json (rank {r + 1} by its name, rank {r} recorded)" for r in range(10))
    assert caplog.messages == [f"{tmp_path}: 1,000 Kineto traces' names say another rank than their "
                               f"distributedInfo.rank, each taken as the rank it records: {named}, ... (1,000 in all)"]


def test_kineto_rank_folder_naming_another_rank_is_said(tmp_path, caplog):
    """A rank's subfolder ``rank3/`` whose trace records rank 0 (hta's sampled_rank-0, its head read by hand: rank
    0) is said as a file so named is; names saying no rank, or two, or "rank" inside a word (``frank1``), say none,
    and the samples' folder, whose names say the ranks recorded, gets no line."""
    with gzip.open(KINETO / "sampled_rank-0.json.gz") as fh:
        assert json.loads(fh.read())["distributedInfo"]["rank"] == 0
    for folder in ("rank3", "frank1", "rank_5", "node"):
        (tmp_path / folder).mkdir()
    shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "rank3" / "w.pt.trace.json.gz")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert api.ranks(tmp_path) == {0: str(tmp_path / "rank3")}
        assert caplog.messages == [f"{tmp_path}: 1 Kineto trace's name says another rank than its "
                                   "distributedInfo.rank, taken as the rank it records: rank3 (rank 3 by its name, "
                                   "rank 0 recorded)"]
        caplog.clear()
        for folder, trace, rank in (("frank1", "x.pt.trace.json.gz", 1), ("rank_5", "rank-6.pt.trace.json.gz", 2),
                                    ("node", "y.pt.trace.json.gz", 3)):
            with gzip.open(tmp_path / folder / trace, "wb") as fh:
                fh.write(b'{"distributedInfo": {"rank": %d}, "traceEvents": []}' % rank)
        shutil.rmtree(tmp_path / "rank3")
        assert list(api.ranks(tmp_path)) == [1, 2, 3]
        assert list(api.ranks(KINETO)) == [0, 1]
    assert caplog.messages == []


def test_a_rank_name_of_more_than_ten_digits_says_no_rank(tmp_path, caplog):
    """A name's rank is one to ten digits (a rank id is below 2**31): ``rank12345678901/`` says none, and is not read
    as rank 1234567890 by its first ten digits; its trace (hta's sampled_rank-0) is compared as rank 0, unsaid,
    where ``rank1234567890/`` holding it is said."""
    (tmp_path / "rank12345678901").mkdir()
    shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "rank12345678901" / "w.pt.trace.json.gz")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert api.ranks(tmp_path) == {0: str(tmp_path / "rank12345678901")}
        assert caplog.messages == []
        (tmp_path / "rank12345678901").rename(tmp_path / "rank1234567890")
        assert api.ranks(tmp_path) == {0: str(tmp_path / "rank1234567890")}
    assert caplog.messages == [f"{tmp_path}: 1 Kineto trace's name says another rank than its distributedInfo.rank, "
                               "taken as the rank it records: rank1234567890 (rank 1234567890 by its name, rank 0 "
                               "recorded)"]


def test_kineto_rank_of_the_largest_id_is_a_rank(tmp_path):
    """torch.distributed's rank is a C int: distributedInfo.rank 2147483647 (2**31 - 1, synthetic heads) is a rank,
    beside a rank 1 trace; one more is refused naming it (mutant: the bound taken as '>=')."""
    with gzip.open(tmp_path / "b.pt.trace.json.gz", "wb") as fh:
        fh.write(b'{"distributedInfo": {"rank": 1}, "traceEvents": []}')
    (tmp_path / "a.pt.trace.json").write_bytes(b'{"distributedInfo": {"rank": 2147483647}, "traceEvents": []}')
    assert api.ranks(tmp_path) == {1: str(tmp_path / "b.pt.trace.json.gz"),
                                   2147483647: str(tmp_path / "a.pt.trace.json")}
    (tmp_path / "a.pt.trace.json").write_bytes(b'{"distributedInfo": {"rank": 2147483648}, "traceEvents": []}')
    with pytest.raises(ProfileError, match=r"a\.pt\.trace\.json: distributedInfo\.rank 2147483648 is no rank id"):
        api.ranks(tmp_path)


def test_kineto_name_warning_said_once_for_a_folder_on_both_sides(tmp_path, capsys, caplog):
    """The same folder given on both sides is discovered once per side: its "name says another rank" line was
    printed twice in one run (the CLI and compare_ranks alike). Once now; a second run says it again (hta's
    sampled_rank-0 named rank-7, sampled_rank-1 named rank-0, their ranks read by hand from the heads)."""
    for r in (0, 1):
        with gzip.open(KINETO / f"sampled_rank-{r}.json.gz") as fh:
            assert json.loads(fh.read())["distributedInfo"]["rank"] == r
    folder = tmp_path / "job"
    line = misnamed_ranks(folder)
    code, _, err = run_inproc(capsys, "-bp", str(folder), "-d", str(folder), "-o", str(tmp_path / "out"),
                              "--enable_profiling_compare")
    assert code == 0, err
    assert [x.split("] ", 1)[1] for x in err.splitlines() if "distributedInfo.rank" in x] == [f"{line} (both sides)"]
    for _ in range(2):  # each call a run of its own
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            ranks = api.compare_ranks(folder, folder, enable_profiling_compare=True)
            assert [r for r, _ in ranks] == [0, 1]
        assert [m for m in caplog.messages if "distributedInfo.rank" in m] == [f"{line} (both sides)"]
    # a --rank_list run: once too, naming the file of rank 1 left out (its name says rank 0, the rank listed), the
    # other side (the samples, named as they record) unsaid
    for listed, compared in (("0", [0]), ("0 1", [0, 1])):
        code, out, err = run_inproc(capsys, "-bp", str(folder), "-d", str(KINETO), "-o", str(tmp_path / "out"),
                                    "--rank_list", listed)
        assert code == 0, err
        assert [x.split("] ", 1)[1] for x in err.splitlines() if "distributedInfo.rank" in x] == [f"{line} (base side)"]
        assert [int(r) for r in re.findall(r"^rank (\d+): ", out, re.M)] == compared


def test_a_bad_parallel_setting_is_warned_of_once_a_job(tmp_path, capsys, caplog, monkeypatch):
    """A mistyped MSPROF_COMPARE_PARALLEL (``yes``, read as auto) was read by every rank's load: said as rank 0's
    notice ("rank 0: Ignoring ..."), a setting of the job's read as one rank's, and each later rank's counted among
    the notices left out. The job reads it once, in its own words, before its first rank (the CLI and compare_ranks
    alike; hta's two-rank job against itself); the left-out count is that of a run without it."""
    def run() -> list[str]:
        code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(KINETO), "-o", str(tmp_path / "out"),
                                  "--enable_profiling_compare")
        assert code == 0, err
        return [x.split("] ", 1)[1] for x in err.splitlines() if x.startswith("[")]

    said = "Ignoring MSPROF_COMPARE_PARALLEL='yes': expected 0, 1 or auto."
    monkeypatch.delenv("MSPROF_COMPARE_PARALLEL", raising=False)
    plain = run()
    monkeypatch.setenv("MSPROF_COMPARE_PARALLEL", "yes")
    lines = run()
    assert [x for x in lines if "MSPROF_COMPARE_PARALLEL" in x] == [said]
    assert lines[lines.index(said) + 1].startswith("rank 0: comparing ")
    left = [x for x in lines if x.startswith("Left out ")]
    assert left and left == [x for x in plain if x.startswith("Left out ")]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        assert [r for r, _ in api.compare_ranks(KINETO, KINETO, enable_profiling_compare=True)] == [0, 1]
    assert [m for m in caplog.messages if "MSPROF_COMPARE_PARALLEL" in m] == [said]
    # two inputs, not one twice: each rank's load weighs a parallel load (``parallel_wanted``) by the job's reading
    copy = tmp_path / "copy"
    shutil.copytree(KINETO, copy)
    code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(copy), "-o", str(tmp_path / "out2"),
                              "--enable_profiling_compare")
    assert code == 0, err
    assert [x.split("] ", 1)[1] for x in err.splitlines() if "MSPROF_COMPARE_PARALLEL" in x] == [said]


def test_kineto_rank_beyond_the_head_or_absent_is_named(tmp_path):
    late = b'{"schemaVersion": 1, "pad": "' + b"x" * 70_000 + b'", "distributedInfo": {"rank": 3}, "traceEvents": []}'
    (tmp_path / "a.pt.trace.json").write_bytes(late.replace(b"[]", b'[{"pad": "' + b"y" * 70_000 + b'"}]'))
    with gzip.open(tmp_path / "b.pt.trace.json.gz", "wb") as fh:
        fh.write(b'{"distributedInfo": {"rank": 1}, "traceEvents": []}')
    # neither in its head nor in its tail (between 64 KiB of padding and 64 KiB of events): no rank read
    with pytest.raises(ProfileError, match=r"a\.pt\.trace\.json: no rank id: no distributedInfo\.rank in its first "
                                           r"or last 64 KiB"):
        api.ranks(tmp_path)
    (tmp_path / "a.pt.trace.json").write_bytes(late)  # in its last 64 KiB: read
    assert api.ranks(tmp_path) == {3: str(tmp_path / "a.pt.trace.json"), 1: str(tmp_path / "b.pt.trace.json.gz")}
    for odd in (b"true", b"-1", b'"x3"'):  # no rank id: a bool, a negative number, text of no digits alone
        (tmp_path / "a.pt.trace.json").write_bytes(late.replace(b"x" * 70_000, b"x").replace(b"3}", odd + b"}"))
        shown = "'x3'" if odd == b'"x3"' else odd.decode()  # refused naming it (kfuzz64), not read as no rank
        with pytest.raises(ProfileError, match=rf"a\.pt\.trace\.json: distributedInfo\.rank {shown} is no rank id"):
            api.ranks(tmp_path)
    # its digits as text read as that rank, as a side file's rank is
    (tmp_path / "a.pt.trace.json").write_bytes(late.replace(b"x" * 70_000, b"x").replace(b"3}", b'"3"}'))
    assert api.ranks(tmp_path) == {3: str(tmp_path / "a.pt.trace.json"), 1: str(tmp_path / "b.pt.trace.json.gz")}
    (tmp_path / "a.pt.trace.json").write_bytes(late.replace(b"x" * 70_000, b"x"))
    assert api.ranks(tmp_path) == {3: str(tmp_path / "a.pt.trace.json"), 1: str(tmp_path / "b.pt.trace.json.gz")}


def test_rank_ids_past_the_largest_are_refused(tmp_path, capsys):
    """A rank id over 2**31 - 1 (torch.distributed's rank is a C int) is no rank: a DB rank folder whose
    profiler_info file, rank_id and DB name all said 99999999999999999999 was compared as that rank, its report
    named rank99999999999999999999 and the ranks overview workbook read 1e+20. The folder is refused in one line
    naming the file (2**31 - 1 itself is a rank), as a Kineto trace's distributedInfo.rank and --rank_list are."""
    src = PT / "db" / "level1" / "rank1_ascend_pt"
    for side in ("a", "b"):
        shutil.copytree(PT / "db" / "level1" / "rank0_ascend_pt", tmp_path / side / "rank0_ascend_pt")
    for rank, ok in ((2**31, False), (2**31 - 1, True)):
        for side in ("a", "b"):
            d = tmp_path / side / "rank1_ascend_pt"
            shutil.rmtree(d, ignore_errors=True)
            (d / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
            info = json.loads((src / "profiler_info_1.json").read_text())
            (d / f"profiler_info_{rank}.json").write_text(json.dumps({**info, "rank_id": rank}))
            shutil.copy(src / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db",
                        d / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{rank}.db")
        if ok:
            assert list(api.ranks(tmp_path / "a")) == [0, rank]
            continue
        code, _, err = run_inproc(capsys, "-bp", str(tmp_path / "a"), "-d", str(tmp_path / "b"), "-o",
                                  str(tmp_path / "out"), "--enable_profiling_compare")
        assert code == 1 and not (tmp_path / "out").exists()
        assert error_lines(err) == [
            f"error: {tmp_path / 'a' / 'rank1_ascend_pt'}: profiler_info_{rank}.json names rank {rank}, which is no "
            "rank id (0 to 2147483647) (base side: pass the directory the profiler wrote, unchanged)"]
    # a name of 230 digits (a file name holds 255 bytes) was quoted whole, then its number again: ~480 characters
    # in one line; each is cut to 40 now, as other values quoted in a message are
    huge = "9" * 230
    d = tmp_path / "h" / "rank1_ascend_pt"
    (d / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (d / f"profiler_info_{huge}.json").write_text(json.dumps(info))
    with pytest.raises(ProfileError) as err:
        api.ranks(tmp_path / "h")
    assert str(err.value) == (f"{d}: profiler_info_{'9' * 23}... names rank {'9' * 37}..., which is no rank id (0 to "
                              "2147483647) (pass the directory the profiler wrote, unchanged)")
    # a name of rank 1 written with 220 leading zeros, its rank_id another: the name cut likewise, both times
    shutil.rmtree(d)
    d.mkdir()
    zeros = f"profiler_info_{'0' * 220}1.json"
    (d / zeros).write_text(json.dumps({**info, "rank_id": 2}))
    with pytest.raises(ProfileError) as err:
        api.ranks(tmp_path / "h")
    cut = f"profiler_info_{'0' * 23}..."
    assert str(err.value) == (f"{d}: records two rank ids: rank 1 by the name of {cut}, rank 2 by {cut}'s rank_id "
                              "(pass the directory the profiler wrote, unchanged)")
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "a.pt.trace.json").write_text(f'{{"distributedInfo": {{"rank": {2**31}}}, "traceEvents": []}}')
    (tmp_path / "k" / "b.pt.trace.json").write_text('{"distributedInfo": {"rank": 1}, "traceEvents": []}')
    with pytest.raises(ProfileError, match=r"a\.pt\.trace\.json: distributedInfo\.rank 2147483648 is no rank id "
                                           r"\(0 to 2147483647\)$"):
        api.ranks(tmp_path / "k")
    # a rank of 86 digits is quoted cut to 40 characters; one of 5,000 digits, which int() does not convert (json
    # neither: an internal error at discovery), is refused alike, quoted as too long; 5,000 zeros then 7 is rank 7
    for rank, said in (("9" * 86, "9" * 37 + "..."), ("9" * 5000, "<too long to show>"), ("0" * 5000 + "7", None)):
        (tmp_path / "k" / "a.pt.trace.json").write_text(f'{{"distributedInfo": {{"rank": {rank}}}, "traceEvents": []}}')
        if said is None:
            assert list(api.ranks(tmp_path / "k")) == [1, 7]
            continue
        with pytest.raises(ProfileError) as info:
            api.ranks(tmp_path / "k")
        assert str(info.value) == (f"{tmp_path / 'k' / 'a.pt.trace.json'}: distributedInfo.rank {said} is no rank id "
                                   "(0 to 2147483647)")


def test_kineto_rank_beside_process_groups(tmp_path):
    """torch >= 2.1 nests the process groups (``pg_config``, a list of objects holding ``ranks``) in
    ``distributedInfo``: the rank is its own key. Where the object runs past the head, its ``rank`` before them."""
    real = (REPO / "tests" / "data" / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json").read_bytes()
    assert b'"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "pg_count": 1, "pg_config": [{' in real
    (tmp_path / "a.pt.trace.json").write_bytes(real)
    (tmp_path / "b.pt.trace.json").write_bytes(real.replace(b'"rank": 0, "world_size"', b'"rank": 3, "world_size"', 1))
    assert api.ranks(tmp_path) == {0: str(tmp_path / "a.pt.trace.json"), 3: str(tmp_path / "b.pt.trace.json")}
    groups = ", ".join(f'{{"pg_name": "{n}", "rank": 9, "ranks": [0, 1], "pg_desc": "{{[\\"x"}}' for n in range(2_000))
    for info, rank in ((f'{{"backend": "nccl", "rank": 5, "pg_config": [{groups}]}}', 5),
                       (f'{{"backend": "n{{c}}\\"l", "rank": 7, "pg_config": [{groups}]}}', 7),
                       (f'{{"pg_config": [{groups}], "rank": 5}}', None),  # its rank beyond the head
                       (f'{{"backend": "nccl", "rank": -1, "pg_config": [{groups}]}}', -1)):
        assert len(info) > 64 * 1024
        (tmp_path / "b.pt.trace.json").write_text(f'{{"distributedInfo": {info}, "traceEvents": []}}')
        if rank is None:
            with pytest.raises(ProfileError, match="b.pt.trace.json: no rank id"):
                api.ranks(tmp_path)
        elif rank < 0:  # no rank id, refused naming it
            with pytest.raises(ProfileError, match="b.pt.trace.json: distributedInfo.rank -1 is no rank id"):
                api.ranks(tmp_path)
        else:
            assert list(api.ranks(tmp_path)) == [0, rank]


HTA = REPO.parent / "shared" / "samples" / "hta" / "tests" / "data"


def _rank_last(trace: bytes, rank: bytes) -> bytes:
    """hta's simple_add trace (distributedInfo {"rank": 0} third, before the events) with ``distributedInfo``
    written after the events instead, before ``traceName``, where hta's execution_trace sample of the same
    benchmark (2023, A100) has it, its rank ``rank`` as written."""
    info = b'  "distributedInfo": {"rank": 0},\n'
    assert trace.count(info) == 1 and trace.count(b'  "traceName"') == 1
    trace = trace.replace(info, b"")
    end = trace.index(b'  "traceName"')
    return trace[:end] + b'  "distributedInfo": {"rank": ' + rank + b"},\n" + trace[end:]


def test_kineto_rank_written_after_the_events_is_read(tmp_path, capsys, monkeypatch):
    """The Kineto of hta's 2022-23 samples wrote ``distributedInfo`` after ``traceEvents`` (4 of the 37 sample
    traces that write one: cupti_profiler's, 863,626 bytes, and execution_trace's within their last 100 bytes);
    discovery read the first 64 KiB alone, so such a trace longer than that recorded no rank: a folder of them was
    "holds 2 Kineto traces that record no rank", one beside ranks read elsewhere "no rank id". Its last 64 KiB are
    read too now, where the head holds none (a seek for a plain file; a gzip one inflated to its end, no
    JSON decoded), once per run, its rank read as a head's is (digits written as text, "1", included)."""
    from msprof_compare.loaders import ranks

    cupti = HTA / "cupti_profiler" / "benchmark_result_924719_1679055439_trace.json.gz"
    whole = gzip.decompress(cupti.read_bytes())
    assert len(whole) == 863_626 and whole.endswith(b'"distributedInfo": {\n    "rank": 0\n  }\n}\n')
    job = tmp_path / "cupti"
    job.mkdir()
    shutil.copy(cupti, job / "r0.json.gz")  # the sample itself, unchanged
    (job / "r1.pt.trace.json").write_bytes(whole[:-20] + b'"rank": "1"\n  }\n}\n')  # rank 1 as text, plain
    assert ranks.discover(str(job)) == {0: str(job / "r0.json.gz"), 1: str(job / "r1.pt.trace.json")}
    # compared rank by rank: each rank's figures the single compare's of the same trace with its rank first
    simple = gzip.decompress((HTA / "critical_path" / "simple_add" /
                              "benchmark_result_493459_1694039959_trace.json.gz").read_bytes())
    base, single = tmp_path / "base", tmp_path / "single.json"
    base.mkdir()
    (base / "rank0.pt.trace.json").write_bytes(_rank_last(simple, b"0"))
    (base / "rank1.pt.trace.json.gz").write_bytes(gzip.compress(_rank_last(simple, b'"1"')))
    single.write_bytes(simple)
    want = api.compare(single, single, enable_profiling_compare=True).sheet("OverallMetrics")
    assert len(want) > 3
    opened = _opens_by_caller(monkeypatch, tmp_path)
    got = {rank: result.sheet("OverallMetrics") for rank, result in
           api.compare_ranks(base, base, enable_profiling_compare=True)}
    assert list(got) == [0, 1] and all(frame.equals(want) for frame in got.values())
    # each tail read once in the run (the folder is both sides), the whole file once by its load
    assert {name: (c["tail_bytes"], c["read_bytes"]) for name, c in opened.items()} == {
        "base/rank0.pt.trace.json": (1, 1), "base/rank1.pt.trace.json.gz": (1, 1)}
    code, out, err = run_inproc(capsys, "-bp", str(base), "-d", str(base), "-o", str(tmp_path / "out"),
                                "--enable_profiling_compare")
    assert code == 0, err
    assert re.findall(r"^rank (\d): E2E", out, re.M) == ["0", "1"]


def test_kineto_rank_in_a_head_cut_object_or_tail_as_the_loader_reads_it(tmp_path, monkeypatch):
    """A ``distributedInfo`` the head cuts (its process groups past 64 KiB) had its own ``rank`` read where written
    as an integer alone: "1" read as no rank there ("no distributedInfo.rank"), where a whole object's "1" is rank
    1; 1.0 and true were "no rank id" too, where a whole object's are refused naming them. Any JSON scalar is read
    now, as the whole object is. A tail that cannot be read gets the loader's words: a gzip damaged past the head,
    one inflating past the size cap (``--force`` lifts it, as for the load)."""
    from msprof_compare.loaders import ranks

    groups = ", ".join(f'{{"pg_name": "{n}", "ranks": [0, 1], "pg_desc": "x"}}' for n in range(2_000))
    (tmp_path / "a.pt.trace.json").write_text('{"distributedInfo": {"rank": 0}, "traceEvents": []}')
    for written, said in (('"1"', 1), ('"01"', 1), ("1.0", "1.0"), ("true", "true"), ("1e999", "Infinity"),
                          ('"x"', "'x'"), ("null", None)):
        info = f'{{"backend": "nccl", "rank": {written}, "pg_config": [{groups}]}}'
        assert len(info) > 64 * 1024
        (tmp_path / "b.pt.trace.json").write_text(f'{{"distributedInfo": {info}, "traceEvents": []}}')
        if isinstance(said, int):
            assert list(api.ranks(tmp_path)) == [0, said]
            continue
        with pytest.raises(ProfileError) as e:
            api.ranks(tmp_path)
        assert str(e.value) == (f"{tmp_path / 'b.pt.trace.json'}: " + (
            f"distributedInfo.rank {said} is no rank id (0 to 2147483647)" if said else
            "no rank id: no distributedInfo.rank in its first or last 64 KiB (a Kineto trace of a distributed run "
            "records it; pass such traces, or compare this one as a single profile)"))
    # a gzip whose head records no rank, damaged past its head: the loader's words, not "no rank id"
    late = b'{"traceEvents": [' + b", ".join(b'{"ph": "i", "name": "%d"}' % n for n in range(40_000)) + \
        b'], "distributedInfo": {"rank": 1}}'
    packed = gzip.compress(late)
    (tmp_path / "b.pt.trace.json").unlink()
    (tmp_path / "b.pt.trace.json.gz").write_bytes(packed)
    assert list(api.ranks(tmp_path)) == [0, 1]
    (tmp_path / "b.pt.trace.json.gz").write_bytes(packed[: len(packed) - 100])
    with pytest.raises(ProfileError) as e:
        api.ranks(tmp_path)
    assert str(e.value) == (f"{tmp_path / 'b.pt.trace.json.gz'}: corrupt gzip data: Compressed file ended before the "
                            "end-of-stream marker was reached")
    (tmp_path / "b.pt.trace.json.gz").write_bytes(packed)
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", "100000")
    assert len(late) > 100_000 > 64 * 1024
    with pytest.raises(ProfileError) as e:
        ranks.discover(str(tmp_path))
    assert str(e.value) == (f"{tmp_path / 'b.pt.trace.json.gz'}: decompressed trace is over the 100000 byte limit "
                            f"(its gzip trailer gives {len(late)} bytes) (add --force to read it anyway, or raise the "
                            "limit with MSPROF_COMPARE_MAX_TRACE_BYTES)")
    assert list(ranks.discover(str(tmp_path), force=True)) == [0, 1]


def test_db_export_name_must_agree(tmp_path):
    """A DB rank directory's ``ascend_pytorch_profiler_N.db`` names its rank too: a copy of rank 1's export under
    rank 0's profiler_info is refused, naming both."""
    out = tmp_path / "db" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    source = PT / "db" / "level1" / "rank1_ascend_pt"
    db = "ascend_pytorch_profiler_1.db"
    (out / db).symlink_to(source / "ASCEND_PROFILER_OUTPUT" / db)
    info = json.loads((source / "profiler_info_1.json").read_text())
    (out.parent / "profiler_info_0.json").write_text(json.dumps({**info, "rank_id": 0}))
    with pytest.raises(ProfileError, match="rank 0 by the name of profiler_info_0.json, rank 1 by the name of "
                                           "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db"):
        api.ranks(out.parent.parent)


def test_two_rank_ids_message_cuts_a_long_db_name(tmp_path):
    """A DB export's name of ~240 characters (rank 2 written with 220 leading zeros) was quoted whole in the "records
    two rank ids" message, at discovery (its name against profiler_info_1.json) and after the load (its META_DATA
    rank 0 against the name of rank 1's profiler_info): it is cut to 40 characters as the info file's name is
    (textsafe.short_text: 37 and "..."), its folder kept."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank

    src = PT / "db" / "level0" / "rank1_ascend_pt"
    long_name = f"ascend_pytorch_profiler_{'0' * 220}2.db"
    d = tmp_path / "a" / "rank1_ascend_pt"
    (d / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copy(src / "profiler_info_1.json", d)
    (d / "ASCEND_PROFILER_OUTPUT" / long_name).write_bytes(b"")  # discovery reads the name alone
    cut = f"ascend_pytorch_profiler_{'0' * 13}..."
    assert len(cut) == 40 and long_name.startswith(cut[:-3])
    with pytest.raises(ProfileError) as err:
        api.ranks(d.parent)
    assert str(err.value) == (f"{d}: records two rank ids: rank 1 by the name of profiler_info_1.json, rank 2 by the "
                              f"name of ASCEND_PROFILER_OUTPUT/{cut} (pass the directory the profiler wrote, "
                              "unchanged)")
    # a second profiler_info of that name: both listed, the long one cut alike
    (d / f"profiler_info_{'0' * 220}2.json").write_text("{}")
    with pytest.raises(ProfileError) as err:
        api.ranks(d.parent)
    assert str(err.value) == (f"{d}: holds 2 profiler_info_N.json files (profiler_info_{'0' * 23}..., "
                              "profiler_info_1.json) (a rank's profiling directory holds one "
                              "profiler_info_<rank>.json)")
    # rank 1 by every name (220 zeros then 1), rank 0 by its META_DATA: refused after the load, the name cut too
    e = tmp_path / "b" / "rank1_ascend_pt"
    (e / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copy(src / "profiler_info_1.json", e)
    edited = edited_copy(src / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db", tmp_path / "edited.db",
                         """INSERT INTO META_DATA VALUES ('distributed_args', '{"rank": 0}')""")
    # edited under a short name: SQLite's journal beside a 248-byte name would pass the 255 a name may hold
    edited.rename(e / "ASCEND_PROFILER_OUTPUT" / long_name.replace("2.db", "1.db"))
    assert api.ranks(e.parent) == {1: str(e)}
    profile = load_profile(str(e), api.checked_options({}, api.API_FACE)[0])
    with pytest.raises(ProfileError) as err:
        check_db_rank(1, profile)
    assert str(err.value) == (f"{e}: records two rank ids: rank 1 by the name of profiler_info_1.json, rank 0 by "
                              f"{os.path.join('ASCEND_PROFILER_OUTPUT', cut)}'s META_DATA distributed_args (pass the "
                              "directory the profiler wrote, unchanged)")


def db_ranks(folder: Path, args: dict[int, str]) -> Path:
    """``folder`` holding copies of db/level0's two ranks, rank r's META_DATA given a ``distributed_args`` row of
    the JSON text ``args[r]`` (the real exports hold none: a DDP job without Megatron's arguments)."""
    for rank in (0, 1):
        src = PT / "db" / "level0" / f"rank{rank}_ascend_pt"
        (folder / src.name / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        shutil.copy(src / f"profiler_info_{rank}.json", folder / src.name)
        db = Path(src.name, "ASCEND_PROFILER_OUTPUT", f"ascend_pytorch_profiler_{rank}.db")
        row = args.get(rank)
        edited_copy(src.parent / db, folder / db,
                    *([] if row is None else [f"INSERT INTO META_DATA VALUES ('distributed_args', '{row}')"]))
    return folder


def test_db_meta_data_rank_must_agree(capsys, tmp_path):
    """A DB export's META_DATA ``distributed_args.rank`` is the DB's counterpart of a text export's
    profiler_metadata.json: one that differs from the profiler_info_N.json name is refused in the same words, exit
    1. Discovery opens no DB (the loader reads META_DATA, once): it is refused at its rank, the ranks before it
    compared and kept, as a DB's other faults are."""
    real = PT / "db" / "level0"
    for rank in (0, 1):  # what the real exports hold: no distributed_args, so nothing to check there
        db = real / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{rank}.db"
        assert sorted(n for (n,) in sql(db, "SELECT name FROM META_DATA")) == [
            "ENV_VARIABLES", "SCHEMA_VERSION", "SCHEMA_VERSION_MAJOR", "SCHEMA_VERSION_MICRO", "SCHEMA_VERSION_MINOR"]
    comp = db_ranks(tmp_path / "comp", {0: '{"rank": 0, "world_size": 2}', 1: '{"rank": 0, "world_size": 2}'})
    assert api.ranks(comp) == {0: str(comp / "rank0_ascend_pt"), 1: str(comp / "rank1_ascend_pt")}  # names only
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(real), "-d", str(comp), "-o", str(out), "--enable_profiling_compare")
    said = (f"error: rank 1: {comp / 'rank1_ascend_pt'}: records two rank ids: rank 1 by the name of "
            "profiler_info_1.json, rank 0 by ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db's META_DATA "
            "distributed_args (comparison side: pass the directory the profiler wrote, unchanged)")
    assert (code, error_lines(err)) == (1, [said]), err
    assert "The reports of rank 0 are complete and stay." in err
    assert [STAMPED.match(p.name)[1] for p in out.iterdir()] == ["0"]
    # the text export's words, from its profiler_metadata.json, at discovery: the same but for the file named
    text = tmp_path / "text" / "rank1_ascend_pt"
    (text / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copy(TEXT0 / "rank1_ascend_pt" / "profiler_info_1.json", text)
    (text / "profiler_metadata.json").write_text('{"distributed_args": {"rank": 0, "world_size": 2}}')
    with pytest.raises(ProfileError) as info:
        api.ranks(text.parent)
    assert f"error: rank 1: {info.value}" == said.replace(str(comp), str(text.parent)).replace(
        "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db's META_DATA", "profiler_metadata.json's").replace(
        "(comparison side: ", "(")  # a folder alone: no side
    shutil.rmtree(comp)
    db_ranks(comp, {0: '{"rank": 0, "world_size": 2}', 1: '{"rank": 1, "world_size": 2}'})  # agreeing: compared
    got = [(rank, result.base.metadata["distributed_args"]["rank"]) for rank, result in
           api.compare_ranks(comp, real, enable_profiling_compare=True)]
    assert got == [(0, 0), (1, 1)]


@pytest.mark.parametrize(("args", "refused"), [
    ('{"rank": 2}', True), ('{"rank": 99999999999999999999}', True),  # any other rank id, as the text side
    ('{"rank": ' + "9" * 100 + "}", True),  # quoted cut to 40 characters (textsafe.short_repr), as other values
    # its ASCII digits as text, as world_size is read: a rank "0" in rank 1's folder passed unchecked
    ('{"rank": "2"}', True), ('{"rank": "0"}', True), ('{"rank": "01"}', False),
    ('{"rank": 1}', False), ('{"rank": -1}', False), ('{"rank": true}', False), ('{"rank": "-2"}', False),
    ('{"rank": " 2"}', False), ('{"rank": "\u00b2"}', False), ('{"rank": "2.0"}', False),
    ('{"rank": 2.0}', False), ('{"rank": null}', False), ('{"world_size": 2}', False), ('[2]', False),
    ('{"rank": 2', False)])  # no JSON: a text, as a malformed profiler_metadata.json is read as absent
def test_db_meta_data_rank_by_the_text_side_rule(tmp_path, args, refused):
    """Which distributed_args values are rank ids to check is the text side's rule: an integer from 0 or its ASCII
    digits as text (a bool, a number with a fraction or a sign, other text, a negative one are not compared)."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank

    text = tmp_path / "text" / "rank1_ascend_pt"
    (text / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copy(TEXT0 / "rank1_ascend_pt" / "profiler_info_1.json", text)
    (text / "profiler_metadata.json").write_text(f'{{"distributed_args": {args}}}')
    value = args[len('{"rank": '):-1].strip('"')  # a rank written as text is named as the integer it spells
    value = re.escape(value if len(value) <= 40 else value[:37] + "...")
    if refused:
        with pytest.raises(ProfileError, match=r": records two rank ids: rank 1 by the name of profiler_info_1\.json, "
                                               f"rank {value} by profiler_metadata\\.json's distributed_args"):
            api.ranks(text.parent)
    else:
        assert api.ranks(text.parent) == {1: str(text)}
    profile = load_profile(str(db_ranks(tmp_path / "db", {1: args}) / "rank1_ascend_pt"),
                           api.checked_options({}, api.API_FACE)[0])
    if refused:
        with pytest.raises(ProfileError, match=f"rank 1 by the name of profiler_info_1\\.json, rank {value} by "
                                               "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1\\.db's META_DATA "
                                               "distributed_args"):
            check_db_rank(1, profile)
    else:
        check_db_rank(1, profile)


def test_mindspore_rank_folders(tmp_path):
    """MindSpore writes ``profiler_info_{rank}.json`` in each ``*_ascend_ms`` directory: two ranks built from the
    MindSpore-layout fixture (tests/data/npu/profiler) compare rank by rank."""
    fixture = REPO / "tests" / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
    info = json.loads((fixture / "profiler_info_0.json").read_text())
    for side in ("base", "comp"):
        for rank in (0, 1):
            rank_dir = tmp_path / side / f"rank-{rank}_2025010100000000{rank}_ascend_ms"
            rank_dir.mkdir(parents=True)
            shutil.copytree(fixture / "ASCEND_PROFILER_OUTPUT", rank_dir / "ASCEND_PROFILER_OUTPUT")  # 76 KB
            (rank_dir / f"profiler_info_{rank}.json").write_text(json.dumps({**info, "rank_id": rank}))
    assert list(api.ranks(tmp_path / "base")) == [0, 1]
    got = [(rank, result.sheet("OverallMetrics")) for rank, result in
           api.compare_ranks(tmp_path / "base", tmp_path / "comp", enable_profiling_compare=True)]
    single = api.compare(fixture, fixture, enable_profiling_compare=True).sheet("OverallMetrics")
    assert [rank for rank, _ in got] == [0, 1]
    for _, sheet in got:
        assert sheet.equals(single)


def test_rank_twice_or_disagreeing_ids_are_refused(tmp_path):
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("rank0_ascend_pt", "old_rank0_ascend_pt"):
        (twice / name).symlink_to(TEXT0 / "rank0_ascend_pt")
    # a rank held twice under names that are no one worker's cycles (an old run kept beside): no cycles, an error
    # naming them in recorded order (equal ends here: by path) (a schedule's: test_ranks_of_several_cycles_...)
    with pytest.raises(ProfileError, match=r"twice: holds rank 0 twice, in recorded order: old_rank0_ascend_pt, "
                                           r"rank0_ascend_pt \(keep one profile per rank in the folder; a profiler "
                                           r"schedule's cycles compare cycle by cycle where each rank's are one "
                                           r"worker's, named as the profilers name them: "
                                           r"<worker>_<timestamp>_ascend_pt, <worker>\.<ms>\.pt\.trace\.json\)$"):
        api.ranks(twice, force=True)  # links: followed with force alone, as the loader follows them
    odd = tmp_path / "odd" / "rank0_ascend_pt"
    odd.mkdir(parents=True)
    shutil.copy(TEXT0 / "rank1_ascend_pt" / "profiler_info_1.json", odd / "profiler_info_0.json")  # rank_id 1 inside
    with pytest.raises(ProfileError, match="records two rank ids: rank 0 by the name of profiler_info_0.json, "
                                           "rank 1 by profiler_info_0.json's rank_id"):
        api.ranks(odd.parent)
    info = json.loads((TEXT0 / "rank1_ascend_pt" / "profiler_info_1.json").read_text())
    (odd / "profiler_info_0.json").write_text(json.dumps({**info, "rank_id": 0}))
    assert api.ranks(odd.parent) == {0: str(odd)}
    (odd / "profiler_info_0.json").rename(odd / "profiler_info_1.json")  # rank_id 0, a number read as one
    with pytest.raises(ProfileError, match="rank 1 by the name of profiler_info_1.json, rank 0 by "
                                           "profiler_info_1.json's rank_id"):
        api.ranks(odd.parent)
    (odd / "profiler_info_1.json").write_text(json.dumps({**info, "rank_id": 1}))
    (odd / "profiler_metadata.json").write_text(json.dumps({"distributed_args": {"rank": 2}}))
    with pytest.raises(ProfileError, match="rank 1 by the name of profiler_info_1.json, rank 2 by "
                                           "profiler_metadata.json's distributed_args"):
        api.ranks(odd.parent)
    (odd / "profiler_metadata.json").unlink()
    (odd / "profiler_info_1.json").unlink()
    shutil.copy(TEXT0 / "rank0_ascend_pt" / "profiler_info_0.json", odd / "profiler_info.json")
    with pytest.raises(ProfileError, match="odd: holds 1 profile of a single-device run \\(no rank id\\), in "
                                           "recorded order: rank0_ascend_pt \\(pass it, one profile per side\\)$"):
        api.ranks(odd.parent)
    shutil.rmtree(odd)
    empty = odd.parent / "rank2_ascend_pt"  # named as a profiling directory, holding nothing
    empty.mkdir()
    with pytest.raises(ProfileError, match="rank2_ascend_pt: no rank id: it holds no profiler_info_N.json"):
        api.ranks(empty.parent)
    with pytest.raises(ProfileError, match="rank0_ascend_pt: is one profile, not a folder of ranks"):
        api.ranks(TEXT0 / "rank0_ascend_pt")


def test_trace_beside_its_gzip_copy_is_named_as_one(tmp_path, capsys, monkeypatch):
    """A rank's trace kept beside its gzip copy (r0.pt.trace.json and r0.pt.trace.json.gz, HTA's sampled_rank-0,
    rank 0 recorded in both) is refused as rank 0 held twice, and the hint says which name looks like the other
    compressed, where it told of a profiler schedule's cycles; a worker's cycle beside its copy is no two cycles
    (left65d, session 65: it was compared as cycles 1 and 2 of one trace)."""
    job = tmp_path / "job"
    job.mkdir()
    raw = gzip.decompress((KINETO / "sampled_rank-0.json.gz").read_bytes())
    (job / "r0.pt.trace.json").write_bytes(raw)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "r0.pt.trace.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", job / "r1.pt.trace.json.gz")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_inproc(capsys, "-bp", "job", "-d", "job", "-o", "out")
    assert (code, error_lines(err)) == (1, [
        "error: job: holds rank 0 twice, by name: r0.pt.trace.json, r0.pt.trace.json.gz (both sides: "
        "r0.pt.trace.json.gz looks like r0.pt.trace.json compressed: keep one of the two)"])
    assert not (tmp_path / "out").exists()
    (job / "r0.pt.trace.json.gz").rename(job / "old.pt.trace.json.gz")  # no twin by name: the words as before
    with pytest.raises(ProfileError, match=r"holds rank 0 twice, by name: old.pt.trace.json.gz, r0.pt.trace.json "
                                           r"\(keep one profile per rank in the folder; a profiler schedule's"):
        api.ranks(job)
    shutil.copy(job / "r0.pt.trace.json", job / "r0b.pt.trace.json")  # three: the twin said before the usual hint
    (job / "old.pt.trace.json.gz").rename(job / "r0b.pt.trace.json.gz")
    with pytest.raises(ProfileError, match=r"holds rank 0 3 times, by name: r0.pt.trace.json, r0b.pt.trace.json, "
                                           r"r0b.pt.trace.json.gz \(r0b.pt.trace.json.gz looks like r0b.pt.trace.json "
                                           r"compressed; keep one profile per rank in the folder; a profiler"):
        api.ranks(job)
    cyc = tmp_path / "cyc"  # one worker's cycle and its copy: as profilers name cycles, but no two of them
    cyc.mkdir()
    (job / "r0.pt.trace.json").rename(cyc / "host_1.1700000000000.pt.trace.json")
    shutil.copy(KINETO / "sampled_rank-0.json.gz", cyc / "host_1.1700000000000.pt.trace.json.gz")
    with pytest.raises(ProfileError, match=r"^cyc: holds rank 0 twice, by name: host_1.1700000000000.pt.trace.json, "
                                           r"host_1.1700000000000.pt.trace.json.gz \(host_1.1700000000000.pt.trace"
                                           r".json.gz looks like host_1.1700000000000.pt.trace.json compressed: keep "
                                           r"one of the two\)$"):
        api.ranks("cyc")
    rankless = tmp_path / "rankless"  # no rank recorded: a single GPU's cycle and its copy, no two cycles either
    rankless.mkdir()
    lone = HTA / "distributed_info_unavailable" / "distributed_info_not_found.json.gz"
    shutil.copy(lone, rankless / "w.1700000000000.pt.trace.json.gz")
    (rankless / "w.1700000000000.pt.trace.json").write_bytes(gzip.decompress(lone.read_bytes()))
    with pytest.raises(ProfileError, match=r"^rankless: holds 2 Kineto traces that record no rank .*pass one of them"):
        api.ranks("rankless")
    (cyc / "host_1.1700000000000.pt.trace.json.gz").rename(cyc / "host_1.1700000000001.pt.trace.json.gz")
    assert api.ranks("cyc") == {RankCycle(0, 1): os.path.join("cyc", "host_1.1700000000000.pt.trace.json"),
                                RankCycle(0, 2): os.path.join("cyc", "host_1.1700000000001.pt.trace.json.gz")}


def test_gzip_twin_hint_escapes_the_names_it_gives(tmp_path):
    """The twin hint names the two files as the listing before it does, a control character escaped (HTA's
    sampled_rank-0 kept as ``r<ESC>0.pt.trace.json`` beside its gzip copy, synthetic): the raw ESC went into the
    error line, where the listing beside it showed ``\\x1b``."""
    job = tmp_path / "job"
    job.mkdir()
    raw = gzip.decompress((KINETO / "sampled_rank-0.json.gz").read_bytes())
    (job / "r\x1b0.pt.trace.json").write_bytes(raw)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "r\x1b0.pt.trace.json.gz")
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert (err.value.message, err.value.hint) == (
        "holds rank 0 twice, by name: r\\x1b0.pt.trace.json, r\\x1b0.pt.trace.json.gz",
        "r\\x1b0.pt.trace.json.gz looks like r\\x1b0.pt.trace.json compressed: keep one of the two")


def test_every_rank_held_twice_is_named_with_its_inputs(tmp_path, capsys, monkeypatch):
    """A folder gzipped in place holds each rank's trace beside its copy: the error named rank 0's two files and
    the copy, then "; rank 1 too", which left the user to find rank 1's and to guess the cause there. Each rank
    held twice is named with its inputs (the first three; the others by number) and the hint names every copy,
    "keep one of each two" where copies are all there is (HTA's sampled_rank-0/1, ranks 0 and 1 recorded)."""
    job = tmp_path / "job"
    job.mkdir()
    for rank in (0, 1):
        sample = KINETO / f"sampled_rank-{rank}.json.gz"
        (job / f"r{rank}.pt.trace.json").write_bytes(gzip.decompress(sample.read_bytes()))
        shutil.copy(sample, job / f"r{rank}.pt.trace.json.gz")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_inproc(capsys, "-bp", "job", "-d", "job", "-o", "out")
    assert (code, error_lines(err)) == (1, [
        "error: job: holds rank 0 twice, by name: r0.pt.trace.json, r0.pt.trace.json.gz; rank 1 twice: "
        "r1.pt.trace.json, r1.pt.trace.json.gz (both sides: r0.pt.trace.json.gz looks like r0.pt.trace.json "
        "compressed; "
        "r1.pt.trace.json.gz looks like r1.pt.trace.json compressed: keep one of each two)"])
    assert not (tmp_path / "out").exists()
    many = tmp_path / "many"  # ranks 2 and 3 too (rank 1's trace recording rank 2 or 3): three ranks and copies named
    shutil.copytree(job, many)
    raw = gzip.decompress((KINETO / "sampled_rank-1.json.gz").read_bytes())
    for rank in (2, 3):
        text = raw.replace(b'"rank": 1, "world_size"', f'"rank": {rank}, "world_size"'.encode(), 1)
        assert text != raw
        (many / f"r{rank}.pt.trace.json").write_bytes(text)
        (many / f"r{rank}.pt.trace.json.gz").write_bytes(gzip.compress(text))
    with pytest.raises(ProfileError) as info:
        api.ranks("many")
    assert str(info.value) == (
        "many: holds rank 0 twice, by name: r0.pt.trace.json, r0.pt.trace.json.gz; rank 1 twice: r1.pt.trace.json, "
        "r1.pt.trace.json.gz; rank 2 twice: r2.pt.trace.json, r2.pt.trace.json.gz; rank 3 too (r0.pt.trace.json.gz "
        "looks like r0.pt.trace.json compressed; r1.pt.trace.json.gz looks like r1.pt.trace.json compressed; "
        "r2.pt.trace.json.gz looks like r2.pt.trace.json compressed; ... (4 in all): keep one of each two)")
    (job / "r1.pt.trace.json.gz").rename(job / "old1.pt.trace.json.gz")  # rank 1's is no copy by name: the usual
    with pytest.raises(ProfileError) as info:  # hint follows rank 0's copy
        api.ranks("job")
    assert str(info.value) == (
        "job: holds rank 0 twice, by name: r0.pt.trace.json, r0.pt.trace.json.gz; rank 1 twice: old1.pt.trace.json.gz, "
        "r1.pt.trace.json (r0.pt.trace.json.gz looks like r0.pt.trace.json compressed; keep one profile per rank in "
        "the folder; a profiler schedule's cycles compare cycle by cycle where each rank's are one worker's, named as "
        "the profilers name them: <worker>_<timestamp>_ascend_pt, <worker>.<ms>.pt.trace.json)")
    # five ranks each held by an old run's profile beside the new one (side files of text/level1's rank 0 with
    # rank_id 0..4, one collection end: in recorded order, ties by name): three named with their inputs
    runs = tmp_path / "runs"
    for rank in range(5):
        for name in (f"old_rank{rank}_ascend_pt", f"rank{rank}_ascend_pt"):
            cycle(runs, name, rank, 1736408884023552840)
    with pytest.raises(ProfileError) as info:
        api.ranks("runs")
    assert str(info.value) == (
        "runs: holds rank 0 twice, in recorded order: old_rank0_ascend_pt, rank0_ascend_pt; rank 1 twice: "
        "old_rank1_ascend_pt, rank1_ascend_pt; rank 2 twice: old_rank2_ascend_pt, rank2_ascend_pt; ranks 3, 4 too "
        "(keep one profile per rank in the folder; a profiler schedule's cycles compare cycle by cycle where each "
        "rank's are one worker's, named as the profilers name them: <worker>_<timestamp>_ascend_pt, "
        "<worker>.<ms>.pt.trace.json)")


def test_a_cycles_side_file_past_the_cap_gives_no_end(tmp_path):
    """A profiler_info.json over 1 MiB (``_SIDE_FILE_BYTES``) is no side file torch_npu writes: its
    collectionTimeEnd is not read, so the cycles go by name, as where one records no end. At the cap it is read
    (the cycles in the order their collections ended: 3, 2, 1). The file is the sample's own, its end set, padded
    with blanks after its JSON object."""
    from msprof_compare.loaders import ranks as ranks_mod

    end = json.loads((TEXT1 / "rank0_ascend_pt" / "profiler_info_0.json").read_text())["end_info"]["collectionTimeEnd"]
    cyc = tmp_path / "cyc"
    for name, at in ((cyc_name(7, 2), end), (cyc_name(7, 3), end - 5), (cyc_name(7, 1), end + 5)):
        cycle(cyc, name, None, at)
    info = cyc / cyc_name(7, 2) / "profiler_info.json"
    text = info.read_bytes()
    for size, order in ((ranks_mod._SIDE_FILE_BYTES, (3, 2, 1)), (ranks_mod._SIDE_FILE_BYTES + 1, (1, 2, 3))):
        info.write_bytes(text + b" " * (size - len(text)))
        assert info.stat().st_size == size
        assert list(api.ranks(cyc).values()) == [str(cyc / cyc_name(7, n)) for n in order], size


def cyc_name(worker: int, n: int) -> str:
    """A profiling directory's name as torch_npu writes it, ``{worker}_{timestamp}_ascend_pt``: worker ``host_N``."""
    return f"host_{worker}_2025010100000000{n}_ascend_pt"


def cycle(folder: Path, name: str, rank: int | None, end: int | None) -> Path:
    """A copy of text/level1's rank 0 profile as torch_npu writes one schedule cycle: ``profiler_info.json`` for a
    single-device run (``rank`` None), else ``profiler_info_<rank>.json``; its collection end ``end`` ns (None:
    no end_info). The export is an empty folder: discovery reads the side files alone."""
    path = folder / name
    (path / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    info = json.loads((TEXT1 / "rank0_ascend_pt" / "profiler_info_0.json").read_text())
    if end is None:
        del info["end_info"]
    else:
        info["end_info"]["collectionTimeEnd"] = end
    if rank is not None:
        info["rank_id"] = rank
    (path / ("profiler_info.json" if rank is None else f"profiler_info_{rank}.json")).write_text(json.dumps(info))
    return path


def test_folder_of_single_device_cycles_in_recorded_order(tmp_path):
    """torch_npu's schedule with repeat > 1 (or 0) writes one profile per cycle into on_trace_ready's folder, named
    ``{worker}_{timestamp}_ascend_pt``; a single-device run's hold profiler_info.json. They are a single device's
    cycles, in the order their collections ended (not their names'); by name where one records no end; beside
    ranks, or of two workers, an error naming them."""
    end = json.loads((TEXT1 / "rank0_ascend_pt" / "profiler_info_0.json").read_text())["end_info"]["collectionTimeEnd"]
    assert end == 1736408884023552840
    cyc = tmp_path / "cyc"
    for name, at in ((cyc_name(7, 2), end), (cyc_name(7, 3), end - 5), (cyc_name(7, 1), end + 5)):
        cycle(cyc, name, None, at)
    assert api.ranks(cyc) == {RankCycle(None, k): str(cyc / n)
                              for k, n in enumerate((cyc_name(7, 3), cyc_name(7, 2), cyc_name(7, 1)), 1)}
    (cyc / cyc_name(7, 2) / "profiler_info.json").write_text("{}")  # no end recorded: all by name
    assert list(api.ranks(cyc).values()) == [str(cyc / n) for n in (cyc_name(7, 1), cyc_name(7, 2), cyc_name(7, 3))]
    shutil.rmtree(cyc / cyc_name(7, 2))
    cycle(cyc, cyc_name(7, 2), None, end)
    for rank in (1, 0):  # beside ranks: which are which
        cycle(cyc, f"rank{rank}_ascend_pt", rank, end)
    with pytest.raises(ProfileError) as info:
        api.ranks(cyc)
    assert str(info.value) == (f"{cyc}: holds 3 profiles of single-device runs (no rank ids), in recorded order: "
                               "host_7_20250101000000003_ascend_pt, host_7_20250101000000002_ascend_pt, "
                               "host_7_20250101000000001_ascend_pt; beside profiles of ranks: rank0_ascend_pt "
                               "(rank 0), rank1_ascend_pt (rank 1) (pass one profile per side, or a folder holding "
                               "one profile per rank of a distributed run)")
    many = tmp_path / "many"
    for n in range(12):
        cycle(many, f"host_7_202501010000000{n:02}_ascend_pt", None, end - n)  # the last written ended first
    assert list(api.ranks(many).values()) == [str(many / f"host_7_202501010000000{n:02}_ascend_pt")
                                              for n in range(11, -1, -1)]
    # two workers' profiles (unrelated runs side by side: nothing the profiler recorded pairs them): no cycles
    cycle(many, "host_8_20250101000000099_ascend_pt", None, end)
    with pytest.raises(ProfileError, match=r"many: holds 13 profiles of single-device runs \(no rank ids\), in "
                                           r"recorded order: .* \(pass one of them, one profile per side; a "
                                           r"schedule's cycles compare cycle by cycle where they are named "
                                           r"<worker>_<timestamp>_ascend_pt, one worker's"):
        api.ranks(many)


def test_ranks_held_once_read_no_collection_end(monkeypatch):
    """A folder holding each rank once has no order to read: its profiler_info files are read for the rank ids
    alone, not again for their collection ends (which only order a rank's cycles)."""
    from msprof_compare.loaders import ranks as ranks_mod

    monkeypatch.setattr(ranks_mod, "_collection_end", lambda path: pytest.fail(f"end read: {path}"))
    assert api.ranks(TEXT0) == {r: str(TEXT0 / f"rank{r}_ascend_pt") for r in (0, 1)}


def test_ranks_of_several_cycles_in_recorded_order(tmp_path):
    """A multi-rank run's cycles in one folder: each rank's profiles in recorded order, cycle by cycle; ranks held
    different numbers of times are an error naming each rank's count (which cycle a rank missed cannot be told)."""
    end = 1736408884023552840
    job = tmp_path / "job"
    for name, rank, at in ((cyc_name(0, 2), 0, end), (cyc_name(0, 1), 0, end + 2), (cyc_name(0, 3), 0, end + 1),
                           (cyc_name(1, 1), 1, end), (cyc_name(1, 2), 1, end + 1), ("r2_ascend_pt", 2, end)):
        cycle(job, name, rank, at)
    with pytest.raises(ProfileError, match=r"job: holds its ranks different numbers of times \(a profiler schedule's "
                                           r"cycles per rank\): rank 0 3 times, rank 1 2 times, rank 2 1 time \(keep "
                                           r"the same cycles of every rank in the folder: which cycle a rank lacks "
                                           r"cannot be told\)$"):
        api.ranks(job)
    shutil.rmtree(job / "r2_ascend_pt")
    shutil.rmtree(job / cyc_name(0, 1))
    found = api.ranks(job)
    assert found == {RankCycle(0, 1): str(job / cyc_name(0, 2)), RankCycle(1, 1): str(job / cyc_name(1, 1)),
                     RankCycle(0, 2): str(job / cyc_name(0, 3)), RankCycle(1, 2): str(job / cyc_name(1, 2))}
    assert list(found) == [RankCycle(0, 1), RankCycle(1, 1), RankCycle(0, 2), RankCycle(1, 2)]  # cycle by cycle
    cycle(job, cyc_name(0, 1), 0, end - 1)
    cycle(job, cyc_name(1, 3), 1, None)  # one end missing: every rank by name
    assert list(api.ranks(job).values()) == [str(job / n) for n in (cyc_name(0, 1), cyc_name(1, 1),
                                                                    cyc_name(0, 2), cyc_name(1, 2),
                                                                    cyc_name(0, 3), cyc_name(1, 3))]


def test_cluster_run_files_and_console(cluster_run):
    proc, out = cluster_run
    names = sorted(p.name for p in out.iterdir() if "_ranks_" not in p.name)  # the job overview: test_ranks_report
    found = [STAMPED.match(n) for n in names]
    assert all(found) and len(names) == 4, names
    assert sorted((m[1], m[3]) for m in found) == [("0", "json"), ("0", "xlsx"), ("1", "json"), ("1", "xlsx")]
    assert len({m[2] for m in found}) == 1  # one timestamp for the job
    assert "Model Profiling Time Distribution" not in proc.stdout  # no per-rank tables
    rows = table_rows(proc.stdout)
    assert sorted(rows) == [0, 1]
    for rank, row in rows.items():  # the profiler's own step figures, in ms
        b, c = stage(TEXT0, rank), stage(TEXT1, rank)
        assert row[1:3] == [ms(b["Stage"]), ms(c["Stage"])]
        assert row[3] == ms(c["Stage"] - b["Stage"], "+")
        assert row[4] == f"{(c['Stage'] - b['Stage']) / b['Stage'] * 100:+.2f}%"
        assert row[5:8] == [ms(c[k] - b[k], "+") for k in ("Computing", "Communication(Not Overlapped)", "Free")]
        # the largest waterfall step: the one communication group's uncovered time (the profiler's stage figure)
        uncovered = c["Communication(Not Overlapped)"] - b["Communication(Not Overlapped)"]
        assert row[8] == f"A {ms(uncovered, '+')}"  # its key; the line under the table names it whole
        assert len(row) == 9  # the rank lines name the reports
        reports = [str(out / n) for n in names if n.startswith(f"performance_comparison_result_rank{rank}_")]
        written = ", ".join(sorted(reports, key=lambda n: n.endswith(".json")))  # the workbook first
        assert f"\nrank {rank}: E2E {row[1]} ms -> {row[2]} ms ({row[3]} ms, {row[4]}), {written}\n" in \
            "\n" + proc.stdout
    assert "\nLargest Step A: Group 0 Communication (uncovered)\nJob " in proc.stdout
    slow_b = max((0, 1), key=lambda r: stage(TEXT0, r)["Stage"])
    slow_c = max((0, 1), key=lambda r: stage(TEXT1, r)["Stage"])
    assert f"Job (slowest rank per side): base rank {slow_b} {rows[slow_b][1]} ms -> comparison rank {slow_c} " \
           f"{rows[slow_c][2]} ms" in proc.stdout


def test_cluster_run_says_a_rank_notice_once(cluster_run):
    """Both base ranks are Level0 exports: each lacks communication.json and PMU columns, and each pair's profiler
    settings differ. Rank 0 says so; rank 1's same notices, but for its paths, are left out and counted."""
    proc, _ = cluster_run
    for notice in ("The file communication.json does not exist.", "kernel_details.csv has no PMU columns",
                   "Base and comparison were collected with different NPU profiler settings",
                   "Start to compare performance detail data"):
        assert proc.stderr.count(notice) == 1, notice
    assert f"{TEXT0 / 'rank0_ascend_pt'}/ASCEND_PROFILER_OUTPUT: The file communication.json" in proc.stderr
    left = re.search(r"\[WARNING\] Left out (\d+) notices of later ranks, each the same as an earlier rank's but for "
                     r"its paths; --rank_list N compares rank N alone, with all its notices\.", proc.stderr)
    assert left and int(left[1]) >= 4
    for rank in (0, 1):  # lines that name the rank itself are each said, each beginning with its rank
        assert f"[INFO] rank {rank}: The comparison result file has been generated: {out_name(proc.stderr, rank)}" \
            in proc.stderr
        assert f"[INFO] rank {rank}: comparing {TEXT0 / f'rank{rank}_ascend_pt'} with " \
               f"{TEXT1 / f'rank{rank}_ascend_pt'}\n" in proc.stderr
    assert "[WARNING] rank 0: Base and comparison were collected with different NPU profiler settings" in proc.stderr
    assert "rank 0: rank 0" not in proc.stderr and "rank 1: rank 1" not in proc.stderr


def out_name(stderr: str, rank: int) -> str:
    return re.search(rf"\S*performance_comparison_result_rank{rank}_\d{{14}}\.xlsx", stderr)[0]


def test_cluster_run_gate_names_the_failing_rank(cluster_run):
    proc, _ = cluster_run
    assert proc.returncode == 3, proc.stderr
    # rank 0 +17.49 %, rank 1 +31.12 % (step_trace_time.csv) against a 20 % threshold; rank 1's E2E 100602.230 ->
    # 131912.616 us there, +31.310 ms; the job's slowest ranks, rank 0 both sides, 116251.182 -> 136581.009 us
    assert error_lines(proc.stderr)[-1] == (
        "error: --fail_on_regression 20: rank 1 regressed beyond the threshold; the job (slowest rank per side) "
        "+20.330 ms, +17.49%, within it")
    assert "rank 1: Performance regression: E2E time 100.602 ms -> 131.913 ms (+31.310 ms, +31.12%)" in proc.stderr
    assert "rank 0: No regression" in proc.stderr


def test_cluster_rank_equals_the_single_compare(cluster_run):
    """A rank's report and figures are those of a compare of the same pair given alone."""
    _, out = cluster_run
    single = api.compare(TEXT0 / "rank1_ascend_pt", TEXT1 / "rank1_ascend_pt", enable_profiling_compare=True)
    doc = json.loads(next(out.glob("performance_comparison_result_rank1_*.json")).read_text())
    assert doc["summary"]["verdict"] == single.verdict
    book = openpyxl.load_workbook(next(out.glob("performance_comparison_result_rank1_*.xlsx")), read_only=True)
    assert "OverallMetrics" in book.sheetnames


def test_one_sided_rank_and_profiling_off_script_face(tmp_path):
    """-bp text/level1 (ranks 0, 1) against text/level2 (rank 0): rank 1 is named once; without the profiling
    compare the table lists ranks and reports. The script face, base first."""
    proc = subprocess.run([sys.executable, str(REPO / "performance_compare.py"), str(TEXT1), str(TEXT2),
                           "--enable_operator_compare", "-o", str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("Rank only in the base") == 1
    assert f"Rank only in the base {TEXT1}, not compared: 1" in proc.stderr
    written = [p.name for p in tmp_path.iterdir() if "_ranks_" not in p.name]  # the job overview: test_ranks_report
    assert len(written) == 1 and STAMPED.match(written[0])[1] == "0"
    assert table_rows(proc.stdout) == {0: ["0", written[0]]}
    # no E2E figure nor job line; the line under the table says why
    assert "Base E2E" not in proc.stdout and "Job (" not in proc.stdout
    assert "\nNo E2E time per rank: --enable_profiling_compare" in proc.stdout


def test_output_file_is_refused_before_loading(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(api, "_compare_inputs", lambda *a: pytest.fail("loaded"))
    (tmp_path / "taken").write_text("")
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path / "taken"))
    # a folder of ranks takes no report file's name: the hint names a directory alone
    assert code == 2 and error_lines(err) == [f"error: output path {tmp_path / 'taken'} is a file, not a directory; "
                                              "give a directory"]


@pytest.mark.parametrize("target", ["run.xlsx", "run.json"])
def test_output_must_be_a_folder(capsys, tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(api, "_compare_inputs", lambda *a: pytest.fail("loaded"))
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", target)
    assert code == 2
    assert error_lines(err) == [f"error: -o {target}: two folders of ranks are compared rank by rank, one report per "
                                "rank: pass a folder for them (default: the current one)"]
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("formats", ["json", "xlsx,json"])
def test_a_rank_by_rank_run_streams_nothing(capsys, tmp_path, monkeypatch, formats):
    """``-o -`` streams one JSON document; a rank-by-rank run writes one per rank and the overview: it is refused
    before any rank is compared, stdout left empty (no half stream for a pipe's reader), naming both ways out."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(api, "_compare_inputs", lambda *a: pytest.fail("loaded"))
    code, out, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", "-", "--output_format", formats)
    assert (code, out) == (2, "")
    said = ("error: -o -: two folders of ranks are compared rank by rank, one report per rank, and stdout takes one "
            "document: pass a folder for them (default: the current one), or give one rank's two inputs (-bp <base "
            "rank's folder> -d <comparison rank's folder> -o -, or those two folders as performance_compare.py's "
            "paths) to stream its JSON")
    assert error_lines(err) == [said]
    assert not list(tmp_path.iterdir())
    # the script, which takes no -bp / -d, is told how it streams one rank too
    assert cli.script_main([str(TEXT0), str(TEXT1), "-o", "-", "--output_format", formats]) == 2
    out, err = capsys.readouterr()
    assert (out, error_lines(err)) == ("", [said])


def test_no_common_rank_and_one_folder_against_one_profile(capsys, tmp_path):
    only1 = tmp_path / "only1"
    only1.mkdir()
    (only1 / "rank1_ascend_pt").symlink_to(TEXT1 / "rank1_ascend_pt")  # a link: followed with --force alone
    code, _, err = run_inproc(capsys, "-bp", str(only1), "-d", str(TEXT2), "-o", str(tmp_path / "out"), "--force")
    assert code == 1
    assert error_lines(err) == [f"error: no rank in common: the base {only1} holds rank 1, the comparison {TEXT2} "
                                "holds rank 0"]
    one = TEXT1 / "rank0_ascend_pt"
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(one), "-o", str(tmp_path / "out"))
    assert code == 1
    assert error_lines(err) == [f"error: {TEXT0}: is a folder of ranks, but the comparison {one} is one profile (pass "
                                "a folder of ranks on both sides (-bp and -d, or both paths of performance_compare.py) "
                                f"to compare rank by rank, or one rank per side, such as {TEXT0 / 'rank0_ascend_pt'})"]
    assert not (tmp_path / "out").exists()
    with pytest.raises(ProfileError, match=r"is a folder of ranks, but the base .* is one profile \(compare_ranks\(\)"):
        api.compare(one, TEXT0)
    with pytest.raises(ProfileError, match=r"is a folder of ranks, and so is the comparison \(compare_ranks\(\)"):
        api.compare(TEXT0, TEXT1)


def test_kineto_ranks_compare_as_their_single_compares(caplog):
    """hta's trace_filter folder (two sampled Kineto traces side by side) against itself: each rank's figures are
    its single compare's, and zero changes; a rank's notice about both sides (the same trace) is said once, and
    rank 1's, the same but for its trace, is left out as on the CLI."""
    for rank, result in msprof_compare.compare_ranks(KINETO, KINETO, enable_profiling_compare=True,
                                                     enable_operator_compare=True):
        flows = [r.getMessage() for r in caplog.records if "Can't find any flow event" in r.getMessage()]
        assert len(flows) == 1 - rank
        assert not flows or flows[0].startswith("rank 0: Can't find any flow event in the file: ") and \
            flows[0].endswith("sampled_rank-0.json.gz (both sides: the trace holds no flow linking an op to its "
                              "kernels, so no op gets a kernel)")
        caplog.clear()
        single = api.compare(KINETO / f"sampled_rank-{rank}.json.gz", KINETO / f"sampled_rank-{rank}.json.gz",
                             enable_profiling_compare=True)
        assert result.frames["overall"].equals(single.frames["overall"])
        e2e = result.frames["e2e"]
        assert int(e2e["base_ns"].iloc[0]) == int(e2e["comparison_ns"].iloc[0]) > 0
        del result


def test_a_bad_keyword_file_is_the_jobs_error_for_kineto_communication_alone(capsys, tmp_path, monkeypatch):
    """A rank-by-rank run of Kineto ranks with CommunicationCompare and no time breakdown reads the keyword lists
    (the collective kernels go by them): a MSPROF_COMPARE_CONFIG that cannot be read was rank 0's error, "rank 0:
    /x/gone.ini: ...", as if that rank's data were wrong. It is the job's error, before any rank is compared and
    nothing written, as with the time breakdown; NPU ranks never read the lists, and the run goes on, as does a run
    that reads them nowhere (the API comparison alone)."""
    gone = tmp_path / "gone.ini"
    monkeypatch.setenv("MSPROF_COMPARE_CONFIG", str(gone))
    out = tmp_path / "out"
    said = (f"error: {gone}: cannot read keyword configuration: No such file or directory (named by "
            "MSPROF_COMPARE_CONFIG; unset it to use the packaged lists)")
    for flags in (["--enable_communication_compare"], ["--enable_communication_compare", "--rank_list", "1"],
                  ["--enable_profiling_compare"]):
        code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(KINETO), "-o", str(out), *flags)
        assert (code, error_lines(err)) == (1, [said]), flags
        assert "comparing" not in err and not out.exists()
    # one Kineto side is enough: its ranks against an NPU export's
    code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(TEXT0), "-o", str(out),
                              "--enable_communication_compare")
    assert (code, error_lines(err)) == (1, [said]) and not out.exists()
    with pytest.raises(ProfileError) as info:
        list(msprof_compare.compare_ranks(KINETO, KINETO, enable_communication_compare=True))
    assert info.value.path == str(gone) and "rank" not in str(info.value)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(out),
                              "--enable_communication_compare")
    assert code == 0 and not error_lines(err), err
    # without CommunicationCompare and the time breakdown the lists are read where a compare needs them: the API
    # comparison of these ranks reads none, so the file is not the job's error and the run goes on
    code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(KINETO), "-o", str(tmp_path / "api"),
                              "--enable_api_compare")
    assert code == 0 and not error_lines(err), err


def test_a_bad_keyword_file_a_ranks_compare_reads_is_the_jobs_error(capsys, tmp_path, monkeypatch):
    """A GPU rank whose other side has no torch op reads the keyword lists for the comparisons the warning names
    (CommunicationCompare's collective kernels): hta's trace_filter ranks against copies without their cpu_op and
    user_annotation events, under --enable_api_compare, which reads no list before loading. A MSPROF_COMPARE_CONFIG
    that cannot be read there was said "rank 0: /x/bad.ini: ...", as if rank 0's data were at fault; it is the
    job's error, said once without a rank, by the CLI and compare_ranks alike."""
    bare = tmp_path / "bare"
    bare.mkdir()
    for trace in sorted(KINETO.iterdir()):
        with gzip.open(trace, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        kept = [e for e in doc["traceEvents"] if e.get("cat") not in ("cpu_op", "user_annotation")]
        assert len(kept) < len(doc["traceEvents"]) and not any(e.get("cat") == "cpu_op" for e in kept)
        doc["traceEvents"] = kept
        with gzip.open(bare / trace.name, "wt", encoding="utf-8") as f:
            json.dump(doc, f)
    bad = tmp_path / "bad.ini"
    bad.write_text("[OP_MASK]\n", encoding="utf-8")
    monkeypatch.setenv("MSPROF_COMPARE_CONFIG", str(bad))
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(bare), "-o", str(out), "--enable_api_compare")
    said = (f"error: {bad}: Missing required key 'FA_MASK' in section 'OP_MASK'. (named by MSPROF_COMPARE_CONFIG; "
            "unset it to use the packaged lists)")
    assert (code, error_lines(err)) == (1, [said]), err
    assert "rank 0: comparing" in err and not out.exists()
    with pytest.raises(ProfileError) as info:
        list(msprof_compare.compare_ranks(KINETO, bare, enable_api_compare=True))
    assert info.value.path == str(bad) and info.value.rank is None and not str(info.value).startswith("rank")
    # with the packaged lists the job runs: the error was the file's alone
    monkeypatch.delenv("MSPROF_COMPARE_CONFIG")
    code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(bare), "-o", str(out), "--enable_api_compare")
    assert code == 0 and not error_lines(err), err


def test_bad_rank_keeps_the_earlier_reports(capsys, tmp_path):
    base = tmp_path / "base"
    for r in (0, 1):
        shutil.copytree(TEXT0 / f"rank{r}_ascend_pt", base / f"rank{r}_ascend_pt")
    broken = base / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    broken.chmod(0o644)
    broken.write_text("[{")
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(TEXT1), "-o", str(out),
                              "--enable_profiling_compare")
    assert code == 1
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"error: rank 1: {broken}: "), err
    assert "[INFO] The reports of rank 0 are complete and stay." in err  # a job line: no rank first
    (kept,) = out.iterdir()
    assert STAMPED.match(kept.name)[1] == "0"
    assert "OverallMetrics" in openpyxl.load_workbook(kept, read_only=True).sheetnames


def fail_rank1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, out: Path,
               exc: type[BaseException]) -> tuple[int, str, str]:
    """The CLI on text/level0 -> text/level1 with ``exc`` raised as rank 1 loads."""
    real = api._compare_inputs

    def failing(base, comparison, *rest):
        if "rank1" in base:
            raise exc
        return real(base, comparison, *rest)

    monkeypatch.setattr(api, "_compare_inputs", failing)
    return run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(out), "--enable_profiling_compare")


def test_interrupted_rank_says_the_earlier_reports_stay(capsys, tmp_path, monkeypatch):
    """Ctrl-C while rank 1 loads: exit 130 with its one line, rank 0's report kept and named as complete."""
    code, _, err = fail_rank1(monkeypatch, capsys, tmp_path, KeyboardInterrupt)
    assert (code, error_lines(err)) == (130, ["error: interrupted"])
    assert "The reports of rank 0 are complete and stay." in err
    assert [STAMPED.match(p.name)[1] for p in tmp_path.iterdir()] == ["0"]


def test_ctrl_c_python_swallows_in_a_rank_still_ends_the_job(capsys, tmp_path, monkeypatch):
    """A Ctrl-C Python could not raise (a weakref callback: "Exception ignored") while rank 1 compared: the job
    ends before rank 1's report, as on any Ctrl-C (130, one line), rank 0's report kept and named as complete."""
    real = api._compare_inputs

    def swallowing(base, comparison, *rest):
        result = real(base, comparison, *rest)
        if "rank1" in base:
            unraisable(KeyboardInterrupt())
        return result

    monkeypatch.setattr(api, "_compare_inputs", swallowing)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                              "--enable_profiling_compare")
    assert (code, error_lines(err)) == (130, ["error: interrupted"])
    assert "Exception ignored" not in err and "The reports of rank 0 are complete and stay." in err
    assert [STAMPED.match(p.name)[1] for p in tmp_path.iterdir()] == ["0"]


def test_ctrl_c_python_swallows_while_the_last_rank_writes_leaves_no_overview(capsys, tmp_path, monkeypatch):
    """A Ctrl-C Python could not raise while the last rank's reports were written: those reports are whole and
    stay, and the job ends before its overview, as on any Ctrl-C (130, one line), where it had gone on to write
    the overview of a job the user stopped."""
    from msprof_compare.report import deliver

    real = deliver.write_reports

    def swallowing(result, name, *rest, **kw):
        written = real(result, name, *rest, **kw)
        if "rank1" in os.path.basename(name):
            unraisable(KeyboardInterrupt())
        return written

    monkeypatch.setattr(deliver, "write_reports", swallowing)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                              "--enable_profiling_compare")
    assert (code, error_lines(err)) == (130, ["error: interrupted"])
    assert "Exception ignored" not in err
    assert sorted(m[1] if (m := STAMPED.match(p.name)) else p.name for p in tmp_path.iterdir()) == ["0", "1"]


def test_compare_ranks_is_lazy_and_keeps_one_result(monkeypatch):
    """Nothing loads until the first pair is asked for; the previous result is gone before the next rank loads."""
    loads: list[tuple[str, bool]] = []
    alive: list[weakref.ref] = []
    real = api._compare_inputs

    def watched(base, comparison, *rest):
        loads.append((base, all(ref() is None for ref in alive)))
        return real(base, comparison, *rest)

    monkeypatch.setattr(api, "_compare_inputs", watched)
    results = msprof_compare.compare_ranks(TEXT0, TEXT1, enable_profiling_compare=True)
    assert loads == []
    seen = []
    for rank, result in results:
        seen.append((rank, result.verdict))
        alive.append(weakref.ref(result))
        del result
    assert [r for r, _ in seen] == [0, 1]
    assert loads == [(str(TEXT0 / "rank0_ascend_pt"), True), (str(TEXT0 / "rank1_ascend_pt"), True)]
    assert seen[0][1] == api.compare(TEXT0 / "rank0_ascend_pt", TEXT1 / "rank0_ascend_pt",
                                     enable_profiling_compare=True).verdict


def test_cli_keeps_one_result(capsys, tmp_path, monkeypatch):
    """The CLI's loop drops a rank's result before the next rank loads."""
    dead: list[bool] = []
    alive: list[weakref.ref] = []
    real = api._compare_inputs

    def watched(base, comparison, *rest):
        dead.append(all(ref() is None for ref in alive))
        result = real(base, comparison, *rest)
        alive.append(weakref.ref(result))
        return result

    monkeypatch.setattr(api, "_compare_inputs", watched)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                              "--enable_profiling_compare")
    assert code == 0, err
    assert dead == [True, True]


def test_compare_ranks_error_names_its_rank(tmp_path):
    """A bad rank's ProfileError says its rank first, keeps it in ``.rank``, and keeps both when pickled back from a
    worker; ``ranks`` takes a folder as the CLI does (a leading ``=``)."""
    import pickle

    base = tmp_path / "base"
    for r in (0, 1):
        shutil.copytree(TEXT0 / f"rank{r}_ascend_pt", base / f"rank{r}_ascend_pt")
    broken = base / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    broken.write_text("[{")
    results = msprof_compare.compare_ranks(base, TEXT1, enable_profiling_compare=True)
    assert next(results)[0] == 0
    with pytest.raises(ProfileError) as info:
        next(results)
    assert info.value.rank == 1 and str(info.value).startswith(f"rank 1: {broken}: ")
    # what README's API section says a script reads of it, without parsing the message (user walk 73)
    assert (info.value.path, info.value.side) == (str(broken), "base side")
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split("`ProfileError` keeps the file to blame", 1)[1].split(";", 1)[0].split())
    assert [a for a in ("`.path`", "`.side`", "`.rank`", "`.rank_inputs`") if a not in said] == [], said
    back = pickle.loads(pickle.dumps(info.value))
    assert (back.rank, str(back)) == (1, str(info.value))
    # every attribute the error carries comes back: the rank's pair too (the CLI's memory advice counts its sizes)
    assert info.value.rank_inputs == (str(base / "rank1_ascend_pt"), str(TEXT1 / "rank1_ascend_pt"))
    assert (type(back), back.__dict__, back.args) == (ProfileError, info.value.__dict__, info.value.args)
    assert api.ranks("=" + str(TEXT0)) == msprof_compare.ranks(TEXT0)


def test_errors_pickle_every_attribute():
    """A ProfileError (and a subclass of it) pickled back from a worker keeps every attribute it carries, its
    retyped message too; a UsageError keeps the warnings the options gave."""
    import pickle

    from msprof_compare.loaders.ranks import _RanklessTrace

    for cls in (ProfileError, _RanklessTrace):
        exc = cls("/a/b.json", "bad data", hint="a hint")
        exc.rank, exc.rank_inputs, exc.extra = RankCycle(1, 2), ("/a/b.json", "/c/d.json"), [1]
        exc.args = (str(exc),)
        back = pickle.loads(pickle.dumps(exc))
        assert (type(back), back.__dict__, back.args, str(back)) == (cls, exc.__dict__, exc.args, str(exc))
    usage = UsageError("bad option")
    usage.warnings = ["w"]
    back = pickle.loads(pickle.dumps(usage))
    assert (back.args, back.warnings) == (("bad option",), ["w"])


def test_compare_ranks_errors_on_the_call(tmp_path, monkeypatch):
    monkeypatch.setattr(api, "_compare_inputs", lambda *a: pytest.fail("loaded"))
    (tmp_path / "rank1_ascend_pt").symlink_to(TEXT1 / "rank1_ascend_pt")
    with pytest.raises(ProfileError, match="no rank in common"):
        api.compare_ranks(tmp_path, TEXT2, force=True)
    with pytest.raises(UsageError, match="max_kernel_num"):
        api.compare_ranks(TEXT0, TEXT1, max_kernel_num=2)


def test_compare_ranks_logs_the_warnings_before_its_usage_error(caplog, monkeypatch):
    """reference-1 §1.3, as compare() and the CLI say it: rule 7's use_kernel_type warning is logged before rule 8
    fails on the steps. compare_ranks() checks the options on the call (rank_pairs), which raised the error alone."""
    monkeypatch.setattr(api, "_compare_inputs", lambda *a: pytest.fail("loaded"))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"), \
            pytest.raises(UsageError, match="must be set at the same time"):
        api.compare_ranks(TEXT0, TEXT1, use_kernel_type=True, enable_api_compare=True, base_step=1)
    assert caplog.messages == ["The use_kernel_type parameter is invalid because it only takes effect when "
                               "enable_kernel_compare is enabled."]


def test_out_of_memory_names_the_rank(capsys, tmp_path, monkeypatch):
    code, _, err = fail_rank1(monkeypatch, capsys, tmp_path, MemoryError)
    assert code == 1
    (line,) = error_lines(err)
    assert line.startswith("error: rank 1: out of memory: a comparison needs roughly 5 times"), line
    # the budget of rank 1's pair (5 x the larger input + the other), not of the folders
    from msprof_compare.loaders.pair import input_bytes
    from msprof_compare.options import build_options

    opts = build_options()[0]
    sizes = sorted(input_bytes(str(f / "rank1_ascend_pt"), opts=opts) for f in (TEXT0, TEXT1))
    assert f"(this pair: about {(5 * sizes[1] + sizes[0]) / 1e6:,.0f} MB)" in line, line
    assert [STAMPED.match(p.name)[1] for p in tmp_path.iterdir()] == ["0"]


def test_folder_of_one_trace_stays_one_profile(tmp_path):
    """A folder holding one Kineto trace is that trace's input (as before), even beside a rank-like subfolder."""
    shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "t.pt.trace.json.gz")
    (tmp_path / "rank1_ascend_pt").mkdir()
    from msprof_compare.loaders.ranks import rank_inputs

    assert rank_inputs(str(tmp_path)) is None
    shutil.copy(KINETO / "sampled_rank-1.json.gz", tmp_path / "u.pt.trace.json.gz")
    assert rank_inputs(str(tmp_path)) == [str(tmp_path / n) for n in ("rank1_ascend_pt", "t.pt.trace.json.gz",
                                                                      "u.pt.trace.json.gz")]


def test_one_trace_beside_a_subfolder_gone_or_unreadable_mid_walk(tmp_path, capsys, monkeypatch):
    """A rank1_ascend_pt beside one Kineto trace that cannot be listed when discovery looks into it
    (``ranks._holds_profile``): one gone since the folder was listed holds nothing, and the folder stays its one
    trace's input, compared; one still there but unreadable (no permission) may hold rank 1's profile, and is named
    in one error line, exit 1, nothing written, where it read as no profile and the trace was compared alone, rank 1
    left out without a word (left64b, session 64). The root user reads any folder: the refusal is simulated."""
    from msprof_compare.loaders import ranks

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(KINETO / "sampled_rank-0.json.gz", run / "t.pt.trace.json.gz")
    sub = run / "rank1_ascend_pt"
    sub.mkdir()
    listed = ranks._profiling_dirs

    def gone(directory, heads=None):  # the walk lists the subfolder, then it is removed before it is looked into
        found = listed(directory, heads)
        shutil.rmtree(sub, ignore_errors=True)
        return found

    monkeypatch.setattr(ranks, "_profiling_dirs", gone)
    assert ranks.rank_inputs(str(run)) is None
    sub.mkdir()
    real = os.listdir

    def refused(path="."):
        if os.fspath(path) == str(sub):
            raise PermissionError(13, "Permission denied", str(sub))
        return real(path)

    monkeypatch.setattr(ranks, "_profiling_dirs", listed)
    monkeypatch.setattr(ranks.os, "listdir", refused)
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(run), "-d", str(KINETO / "sampled_rank-1.json.gz"),
                              "--output_path", str(out))
    assert (code, error_lines(err)) == (1, [f"error: {sub}: cannot list directory: Permission denied (base side: it "
                                            "needs read permission for you (chmod u+r), which --force cannot skip)"])
    assert "Traceback" not in err and not out.exists()


def _refusing(monkeypatch, *refused: Path) -> None:
    """``os.listdir`` refusing ``refused`` (no permission), as for a user who cannot read them: the root user the
    tests run as reads any folder."""
    real = os.listdir
    names = {str(p) for p in refused}

    def listdir(path="."):
        if os.fspath(path) in names:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)


@pytest.mark.parametrize(("names", "hint"), [
    (("rank0", "rank1"), "its name says rank 1"),
    (("node0_gpu0", "node0_gpu1"), "its name is rank folder node0_gpu0's but for its digits"),
    (("rank00", "rank01"), "its name says rank 1"),  # the rank as a number, as the rank table shows it
])
def test_an_unreadable_kineto_rank_folder_is_named(tmp_path, capsys, monkeypatch, names, hint):
    """A Kineto rank's subfolder that cannot be listed (no permission) is named in one error line, exit 1, nothing
    written, where ``_profiling_dirs`` read it as holding no trace and the rank it holds was left out of the job,
    its unreadability unsaid: the base's rank 0 alone was compared with the comparison's, rank 1 said "only in the
    comparison" (nothing said where both sides' could not be read). Its name tells it from any other unreadable
    folder: it says a rank, or it is a sibling's holding a trace but for its digits (left64f, session 64; hta's
    sampled_rank-0 / -1 traces, ranks 0 and 1)."""
    from msprof_compare.loaders import ranks

    base, comp = tmp_path / "base", tmp_path / "comp"
    for side in (base, comp):
        for rank, name in enumerate(names):
            (side / name).mkdir(parents=True)
            shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", side / name / "t.pt.trace.json.gz")
    assert ranks.rank_inputs(str(base)) == [str(base / n) for n in names]
    lost = base / names[1]
    _refusing(monkeypatch, lost)
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out))
    assert (code, error_lines(err)) == (1, [f"error: {lost}: cannot list directory: Permission denied (base side: "
                                            f"{hint}, so it may hold a rank's profile: make it readable (chmod u+r), "
                                            "or move it out of the folder)"])
    assert "Traceback" not in err and not out.exists()
    # beside the folder's one trace too, where the trace was compared alone (a name saying a rank: a sibling named
    # so is gone)
    if not hint.startswith("its name says"):
        return
    shutil.rmtree(base / names[0])
    shutil.copy(KINETO / "sampled_rank-0.json.gz", base / "t.pt.trace.json.gz")
    with pytest.raises(ProfileError, match=re.escape(f"{lost}: cannot list directory: Permission denied")):
        ranks.rank_inputs(str(base))


def _unsearchable(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """``folders`` listed but not searched (mode r--: read permission, no execute), as for a user who lacks it: their
    names list, but nothing in them can be looked up (``os.stat``, ``os.lstat``, ``open``: "Permission denied"),
    and ``os.access`` says no X_OK. The root user the tests run as searches any folder (the same runs as a user
    without the permission, setpriv to nobody, gave the lines these tests expect)."""
    import builtins

    refused = {str(f) for f in folders}
    real_access, real_stat, real_lstat, real_open = os.access, os.stat, os.lstat, builtins.open

    def inside(path: object) -> bool:
        return isinstance(path, (str, os.PathLike)) and os.path.dirname(os.path.abspath(path)) in refused

    def denied(path: object) -> PermissionError:
        return PermissionError(13, "Permission denied", os.fspath(path))

    def access(path, mode, *args, **kwargs):
        if inside(path) or (os.fspath(path) in refused and mode & os.X_OK):
            return False
        return real_access(path, mode, *args, **kwargs)

    def stat(path, *args, **kwargs):
        if inside(path):
            raise denied(path)
        return real_stat(path, *args, **kwargs)

    def lstat(path, *args, **kwargs):
        if inside(path):
            raise denied(path)
        return real_lstat(path, *args, **kwargs)

    def opener(path, *args, **kwargs):
        if inside(path):
            raise denied(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(builtins, "open", opener)


def test_a_rank_folder_listed_but_not_searchable_is_named(tmp_path, capsys, monkeypatch):
    """A rank's folder that can be listed but not searched (mode r--: its files cannot be opened, nor told from
    folders) read as holding nothing: a Kineto ``rank1/`` left rank 1 out ("Rank only in the comparison"; without a
    word where both sides' were so), an NPU ``rank1_ascend_pt`` was taken by its profiler_info name and its compare
    refused it ("The path is not executable") after rank 0 was compared and written, and the folder of ranks itself
    was "holds no profiling directory or trace of a rank" (the API). Each is named now, as a folder that cannot be
    listed is, before any rank is compared (hta's sampled_rank-0 / -1 traces, ranks 0 and 1; msinsight's level0 text
    export); an empty one holds nothing to miss."""
    from msprof_compare.loaders import ranks

    base, comp, out = tmp_path / "base", tmp_path / "comp", tmp_path / "out"
    for side in (base, comp):
        for rank in (0, 1):
            (side / f"rank{rank}").mkdir(parents=True)
            shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", side / f"rank{rank}" / "t.pt.trace.json.gz")
    lost = base / "rank1"
    with monkeypatch.context() as m:
        _unsearchable(m, lost)
        code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out))
        assert (code, error_lines(err)) == (1, [
            f"error: {lost}: cannot search directory: Permission denied (base side: its name says rank 1, so it may "
            "hold a rank's profile: make it searchable (chmod u+x), or move it out of the folder)"])
        assert "Traceback" not in err and not out.exists()
    (lost / "t.pt.trace.json.gz").unlink()  # listing nothing: nothing left out
    with monkeypatch.context() as m:
        _unsearchable(m, lost)
        assert list(ranks.discover(str(base))) == [0]
    # an NPU rank folder: refused by discovery in the loader's hint, not by its compare after rank 0's reports
    npu = tmp_path / "npu"
    shutil.copytree(TEXT0, npu)
    with monkeypatch.context() as m:
        _unsearchable(m, npu / "rank1_ascend_pt")
        code, out_text, err = run_inproc(capsys, "-bp", str(npu), "-d", str(TEXT0), "-o", str(out))
        assert (code, error_lines(err)) == (1, [
            f"error: {npu / 'rank1_ascend_pt'}: cannot search directory: Permission denied (base side: a directory "
            "needs search permission to be read (chmod u+x), which --force cannot skip)"])
        assert "rank 0: E2E" not in out_text and not out.exists()
    # its ASCEND_PROFILER_OUTPUT, listed but not searched or not listed: discovery lists it for the DB's name, and
    # read it as holding nothing, the rank's compare refusing it after rank 0's reports were written
    output = npu / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    for simulate, said in ((_unsearchable, "cannot search directory: Permission denied (base side: a directory needs "
                                           "search "
                                           "permission to be read (chmod u+x), which --force cannot skip)"),
                           (_refusing, "cannot list directory: Permission denied (base side: it needs read "
                                       "permission for you "
                                       "(chmod u+r), which --force cannot skip)")):
        with monkeypatch.context() as m:
            simulate(m, output)
            code, out_text, err = run_inproc(capsys, "-bp", str(npu), "-d", str(TEXT0), "-o", str(out))
            assert (code, error_lines(err)) == (1, [f"error: {output}: {said}"])
            assert "rank 0: E2E" not in out_text and not out.exists()
    # the folder of ranks itself, by the API (the CLI's loader checks it first: "The path is not executable")
    with monkeypatch.context() as m:
        _unsearchable(m, npu)
        with pytest.raises(ProfileError) as info:
            msprof_compare.ranks(npu)
        assert str(info.value) == (f"{npu}: cannot search directory: Permission denied (a directory needs search "
                                   "permission to be read (chmod u+x), which force=True cannot skip)")


@pytest.mark.parametrize("trace", ["worker0.pt.trace.json.gz", "worker0.1623143089861.pt.trace.json.gz",
                                   "worker0.json.gz"])
def test_an_unreadable_folder_named_as_a_rank_trace_beside_it_is_named(tmp_path, capsys, monkeypatch, trace):
    """Rank 0's trace in the folder (``worker0.pt.trace.json.gz``, tensorboard_trace_handler's ``{worker}.{ms}``
    name, or a JSON object naming traceEvents) and rank 1's in an unreadable ``worker1/``: the folder's name was
    matched against its sibling folders' alone (node0_gpu1/ beside node0_gpu0/), so the folder read as one profile,
    rank 0's trace, and a rank run was refused as "a folder of ranks against one profile" (both sides so: rank 0
    compared with rank 0 as a single compare, rank 1 left out without a word). A top-level trace is a rank input as
    a subfolder is, so its name but for its digits names the folder as a rank's too; any other unreadable folder
    stays none of the job's (hta's sampled_rank-0 / -1 traces, ranks 0 and 1)."""
    from msprof_compare.loaders import ranks

    base, comp, out = tmp_path / "base", tmp_path / "comp", tmp_path / "out"
    for side in (base, comp):
        (side / "worker1").mkdir(parents=True)
        shutil.copy(KINETO / "sampled_rank-0.json.gz", side / trace)
        shutil.copy(KINETO / "sampled_rank-1.json.gz", side / "worker1" / "t.pt.trace.json.gz")
    assert ranks.discover(str(base)) == {0: str(base / trace), 1: str(base / "worker1")}
    lost = base / "worker1"
    _refusing(monkeypatch, lost)
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out))
    assert (code, error_lines(err)) == (1, [
        f"error: {lost}: cannot list directory: Permission denied (base side: its name is rank trace {trace}'s but "
        "for its digits, so it may hold a rank's profile: make it readable (chmod u+r), or move it out of the "
        "folder)"])
    assert not out.exists()
    # named as typed, as discovery's other errors: the CLI's look for folders of ranks named it by its absolute path
    monkeypatch.chdir(tmp_path)
    code, _, err = run_inproc(capsys, "-bp", "comp", "-d", "./base/", "-o", str(out))
    assert code == 1 and error_lines(err)[0].startswith("error: ./base/worker1: cannot list directory: ")
    lost.rename(base / "lost+found")  # named as no rank: the folder is rank 0's trace, as before
    _refusing(monkeypatch, base / "lost+found")
    assert ranks.rank_inputs(str(base)) is None


def test_a_folder_of_ranks_that_discovery_refuses_against_one_profile_says_why(tmp_path, capsys, monkeypatch):
    """A folder of ranks (rank 0's trace in it, rank 1's in rank1/) against one trace is refused as such; where its
    discovery failed (rank 1's trace recording no rank: hta's distributed_info_not_found, which writes no
    distributedInfo), the refusal fell through and the folder was read as its one top trace: rank 0 compared alone
    with the other side, rank 1 left out without a word (exit 0). A folder holding rank 0 twice (a top trace and
    rank0/) got the loader's "holds no *.pt.trace.json but 2 JSON traces (pass the trace file itself)". Discovery's
    error is said now, named as typed; a folder whose inputs record no rank at all (one process's runs) keeps the
    loader's error (``NoRanks``)."""
    lone = KINETO / "sampled_rank-0.json.gz"
    job = tmp_path / "job"
    (job / "rank1").mkdir(parents=True)
    shutil.copy(lone, job / "worker0.pt.trace.json.gz")
    shutil.copy(HTA / "distributed_info_unavailable" / "distributed_info_not_found.json.gz",
                job / "rank1" / "t.pt.trace.json.gz")
    monkeypatch.chdir(tmp_path)
    said = ("job/rank1/t.pt.trace.json.gz: no rank id: no distributedInfo.rank in its first or last 64 KiB ({}a "
            "Kineto trace of a distributed run records it; pass such traces, or compare this one as a single profile)")
    for sides, side in ((("job", str(lone)), "base side: "), ((str(lone), "job"), "comparison side: ")):
        code, out, err = run_inproc(capsys, "-bp", sides[0], "-d", sides[1], "-o", "out")
        assert (code, error_lines(err)) == (1, [f"error: {said.format(side)}"]) and not (tmp_path / "out").exists()
    with pytest.raises(ProfileError) as info:
        api.compare("job", lone)
    assert str(info.value) == said.format("base side: ")
    shutil.rmtree(job / "rank1")
    (job / "rank0").mkdir()
    shutil.copy(lone, job / "rank0" / "t.pt.trace.json.gz")
    code, _, err = run_inproc(capsys, "-bp", "job", "-d", str(lone), "-o", "out", "--rank_list", "0")
    assert (code, error_lines(err)) == (1, [
        "error: job: holds rank 0 twice, by name: rank0, worker0.pt.trace.json.gz (base side: keep one profile per "
        "rank in the "
        "folder; a profiler schedule's cycles compare cycle by cycle where each rank's are one worker's, named as "
        "the profilers name them: <worker>_<timestamp>_ascend_pt, <worker>.<ms>.pt.trace.json)"])
    # no rank recorded at all: the loader's words for a folder of two traces, as before
    shutil.rmtree(job)
    job.mkdir()
    for name in ("a.pt.trace.json.gz", "b.pt.trace.json.gz"):
        shutil.copy(HTA / "distributed_info_unavailable" / "distributed_info_not_found.json.gz", job / name)
    code, _, err = run_inproc(capsys, "-bp", "job", "-d", str(lone), "-o", "out")
    assert (code, error_lines(err)) == (1, ["error: job: directory holds 2 traces (a.pt.trace.json.gz, "
                                            "b.pt.trace.json.gz) (base side: pass the trace file itself)"])


def test_a_folder_of_ranks_that_cannot_be_listed_is_said_so_by_the_api(tmp_path, monkeypatch):
    """``ranks`` and ``compare_ranks`` of a folder that cannot be listed (no permission) say so, as the CLI's loader
    does ("cannot list directory: Permission denied"), where they said "is one profile, not a folder of ranks" and
    advised to pass the folder of ranks it is (left64f, session 64; hta's sampled_rank-0 / -1 traces in rank0/,
    rank1/, the refusal simulated: the root user reads any folder)."""
    base, comp = tmp_path / "base", tmp_path / "comp"
    for side in (base, comp):
        for rank in (0, 1):
            (side / f"rank{rank}").mkdir(parents=True)
            shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", side / f"rank{rank}" / "t.pt.trace.json.gz")
    assert list(msprof_compare.ranks(base)) == [0, 1]
    _refusing(monkeypatch, base)
    said = (f"{base}: cannot list directory: Permission denied (it needs read permission for you (chmod u+r), which "
            "force=True cannot skip)")  # the loader's hint, which the line lacked, in the API's words
    with pytest.raises(ProfileError) as info:
        msprof_compare.ranks(base)
    assert str(info.value) == said  # a folder alone: no side
    with pytest.raises(ProfileError) as info:
        next(msprof_compare.compare_ranks(base, comp))
    assert str(info.value) == said.replace(" (it needs", " (base side: it needs")


@pytest.mark.parametrize("damage", ["unreadable", "empty", "blank", "no gzip", "cut gzip"])
def test_a_rank_trace_whose_head_cannot_be_read_is_named_for_why(tmp_path, capsys, monkeypatch, damage):
    """A rank's trace whose head reads as nothing gets the loader's words for why (the single compare's: "cannot
    read file: Permission denied", "empty file", "corrupt gzip data: ..."), where discovery said "no rank id: no
    distributedInfo.rank in its first 64 KiB" and advised to pass traces that record one, which it may well do
    (left64f, session 64; hta's sampled_rank-0 / -1 traces in rank0/, rank1/, rank 1's damaged: its first 100
    bytes for the cut gzip; the unreadable one simulated, the root user reads any file). One whose head reads, cut
    past it, reads its rank, the loader naming the damage later."""
    import builtins

    from msprof_compare.loaders import ranks

    base = tmp_path / "base"
    for rank in (0, 1):
        (base / f"rank{rank}").mkdir(parents=True)
        shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", base / f"rank{rank}" / "t.pt.trace.json.gz")
    bad = base / "rank1" / "t.pt.trace.json.gz"
    whole = bad.read_bytes()
    said = {"unreadable": "cannot read file: Permission denied", "empty": "empty file", "blank": "empty file",
            "no gzip": "corrupt gzip data: Unknown compression method",
            "cut gzip": "corrupt gzip data: Compressed file ended before the end-of-stream marker was reached"}[damage]
    if damage == "unreadable":
        real = builtins.open

        def refused(path, *args, **kwargs):
            if os.fspath(path) == str(bad):
                raise PermissionError(13, "Permission denied", str(bad))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", refused)
    else:
        bad.write_bytes({"empty": b"", "blank": b" \n\t", "no gzip": b"\x1f\x8b\x07" + bytes(20),
                         "cut gzip": whole[:100]}[damage])
    with pytest.raises(ProfileError) as info:
        ranks.discover(str(base))
    assert str(info.value) == f"{bad}: {said}"
    with pytest.raises(ProfileError) as info:  # the single compare's words for that file
        api.compare(bad, KINETO / "sampled_rank-1.json.gz")
    assert str(info.value) == f"{bad}: {said} (base side)"
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(base), "-o", str(out))
    assert (code, error_lines(err)) == (1, [f"error: {bad}: {said} (both sides)"]) and not out.exists()
    if damage == "cut gzip":  # cut past the head: its rank is read
        bad.write_bytes(whole[: len(whole) // 2])
        assert list(ranks.discover(str(base))) == [0, 1]


def test_a_rank_trace_whose_head_is_all_blanks_going_on_past_it_is_no_empty_file(tmp_path):
    """A head of blanks that goes on past the 64 KiB read (hta's sampled_rank-1, 65,536 spaces written before its
    JSON) is no empty file: discovery reads no rank in that head and says so, as for any head without
    distributedInfo.rank, where "empty file" would be untrue of it."""
    from msprof_compare.loaders import ranks

    base = tmp_path / "base"
    for rank in (0, 1):
        (base / f"rank{rank}").mkdir(parents=True)
        shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", base / f"rank{rank}" / "t.pt.trace.json.gz")
    bad = base / "rank1" / "t.pt.trace.json.gz"
    bad.write_bytes(gzip.compress(b" " * 65536 + gzip.decompress(bad.read_bytes())))
    with pytest.raises(ProfileError) as info:
        ranks.discover(str(base))
    assert (info.value.path, info.value.message) == (str(bad),
                                                     "no rank id: no distributedInfo.rank in its first or last 64 KiB")


def test_an_unreadable_folder_named_as_no_rank_stays_out_of_a_folder_of_ranks(tmp_path, monkeypatch):
    """An unreadable folder whose name says no rank and is no rank folder's but for its digits (lost+found at a
    volume's root, a .Trash-1000, a cache beside node0_gpu0) is none of the job's: the folder of ranks is its ranks,
    and a folder of one trace beside it that trace's input, as before; a rank folder gone since the folder was
    listed holds nothing."""
    from msprof_compare.loaders import ranks

    for rank in (0, 1):
        (tmp_path / f"rank{rank}").mkdir()
        shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", tmp_path / f"rank{rank}" / "t.pt.trace.json.gz")
    others = [tmp_path / n for n in ("lost+found", ".Trash-1000", "cache", "frank1")]
    for folder in others:
        folder.mkdir()
    _refusing(monkeypatch, *others)
    assert list(ranks.discover(str(tmp_path)).items()) == [(0, str(tmp_path / "rank0")),
                                                           (1, str(tmp_path / "rank1"))]
    shutil.rmtree(tmp_path / "rank1")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", tmp_path / "t.pt.trace.json.gz")
    shutil.rmtree(tmp_path / "rank0")
    assert ranks.rank_inputs(str(tmp_path)) is None
    listed = ranks._profiling_dirs

    def gone(directory, heads=None):  # rank1/ listed by the walk, removed before it is looked into
        found = listed(directory, heads)
        shutil.rmtree(tmp_path / "rank1", ignore_errors=True)
        return found

    (tmp_path / "rank1").mkdir()
    monkeypatch.setattr(ranks, "_profiling_dirs", gone)
    assert ranks.rank_inputs(str(tmp_path)) is None


@pytest.mark.parametrize("held", ["profiler_info_1.json", "ASCEND_PROFILER_OUTPUT"])
def test_one_trace_beside_a_subfolder_holding_either_part_of_an_npu_profile_is_a_folder_of_ranks(tmp_path, held):
    """Beside one Kineto trace, a rank1_ascend_pt holding only its profiler_info_1.json, or only its
    ASCEND_PROFILER_OUTPUT, holds a profile (``ranks._holds_profile`` tests each apart): the folder is one of ranks,
    whose rank 1 then fails to load, not one trace compared alone with rank 1 left out without a word (mutation
    testing, session 63: dropping either test kept the other's case passing). Real files of msinsight's text
    level1 rank 1; an empty rank1_ascend_pt stays no profile (the test above)."""
    from msprof_compare.loaders.ranks import rank_inputs

    shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "t.pt.trace.json.gz")
    sub = tmp_path / "rank1_ascend_pt"
    sub.mkdir()
    src = TEXT1 / "rank1_ascend_pt" / held
    if src.is_dir():
        shutil.copytree(src, sub / held)
    else:
        shutil.copy(src, sub / held)
    assert rank_inputs(str(tmp_path)) == [str(sub), str(tmp_path / "t.pt.trace.json.gz")]


def test_rank_notice_of_the_other_side_is_said(capsys, tmp_path):
    """The Level0 export is the base's rank 0 but the comparison's rank 1: rank 1's notices that its comparison
    lacks communication.json and PMU columns are no repeat of rank 0's about its base (paths stripped alike, they
    read the same), so each is said."""
    base, comp = tmp_path / "base", tmp_path / "comp"
    for folder, level0_rank in ((base, 0), (comp, 1)):
        for r in (0, 1):
            name = f"rank{r}_ascend_pt"
            shutil.copytree((TEXT0 if r == level0_rank else TEXT1) / name, folder / name)
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(tmp_path / "out"),
                              "--enable_profiling_compare")
    assert code == 0, err
    for side, r in ((base, 0), (comp, 1)):
        assert f"{side / f'rank{r}_ascend_pt'}/ASCEND_PROFILER_OUTPUT: The file communication.json does not " \
               "exist." in err
    # each rank's Level0 side lacks categories beside a split one: the category check names it, once per rank
    # (its breakdown line, which said the same, is left out: test_overall_npu's test_level0_..._said_once)
    assert err.count("One side's computing time is not split into categories (base 0.0%, comparison 99.9%)") == 1
    assert err.count("One side's computing time is not split into categories (base 99.9%, comparison 0.0%)") == 1
    assert "the categorised computing rows" not in err
    assert err.count("does not exist.") == 2


def test_rank_notice_block_is_said_once(tmp_path):
    """A text base against a DB comparison logs a block: its line, then an item per figure the two export kinds
    define differently. Rank 1's block repeats rank 0's but for its E2E item (its own figures): it is one line, the
    block's title and that item's figures (the DB export's E2E and its part outside computing and communication,
    from STEP_TIME and TASK: rank 0's are 137.919 and 5.686 ms), not the six lines again."""
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", str(TEXT0), "-d", str(PT / "db" / "level1"),
                           "-o", str(tmp_path), "--enable_profiling_compare"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "][WARNING] " in line]
    head = [i for i, line in enumerate(lines) if "different kinds of NPU export" in line]
    assert lines[head[0]].startswith("rank 0: Base and comparison are different kinds of NPU export (base text, ")
    items = list(itertools.takewhile(lambda i: lines[i].startswith("rank 0:   - "), range(head[0] + 1, len(lines))))
    assert len(items) >= 3  # rank 0's, whole (the category note's block, about the Level0 side, follows it)
    assert not [line for line in lines if line.startswith("  ")]  # every item says its rank
    # read as blocks (tests/logutil): rank 0's whole, rank 1's one line
    whole, condensed = blocks(lines, "Base and comparison are different kinds of NPU export")
    assert whole[0] == lines[head[0]] and whole[1:] == [lines[i][len("rank 0:   - "):] for i in items]
    assert condensed == [lines[head[1]]]
    assert "the comparison side's 137.919 ms hold 5.686 ms outside them" in lines[head[0] + 1]
    assert lines[head[1]] == ("rank 1: Base and comparison are different kinds of NPU export, as for rank 0 but: E2E "
                              "and Free Time: the comparison side's 134.027 ms hold 4.715 ms outside them (129.312 ms "
                              "as a text export measures it)")
    assert len(head) == 2 and lines.count(lines[head[0] + 2]) == 1


def test_ranks_gate_statuses(capsys):
    """3 names the ranks that regressed (and those not judged), else 1 names the ranks not judged, else 0."""
    from msprof_compare.cli import _ranks_gate

    assert _ranks_gate([(0, 0), (1, 0)], 20.0) == 0
    assert _ranks_gate([], 20.0) == 0
    assert _ranks_gate([(0, 1), (1, 3), (2, 0), (3, 3)], 5.0) == 3
    assert _ranks_gate([(0, 1), (1, 0), (2, 1)], 5.0) == 1
    assert error_lines(capsys.readouterr().err) == [
        "error: --fail_on_regression 5.0: ranks 1, 3 regressed beyond the threshold; rank 0 could not be judged",
        "error: --fail_on_regression 5.0: ranks 0, 2 could not be judged (no E2E time)"]


def test_ranks_gate_says_a_job_within_the_threshold(capsys):
    """Ranks that regressed beyond the threshold under a job that did not (its step time is its slowest rank's):
    text level 0 -> level 1 at 20 % fails rank 1 (100.602 -> 131.913 ms, +31.12 %) while the job line reads rank 0
    116.251 -> rank 0 136.581 ms (+17.49 %; step_trace_time.csv's E2E). The error line said the rank alone, which
    read as a contradiction of the job line above it; it now gives the job's change where that is within the
    threshold, and nothing more where the job regressed too (10 %: both ranks, the job +17.49 %)."""
    from msprof_compare.cli import _ranks_gate

    rows = [(0, {"e2e": (116_251_000, 136_581_000)}, []), (1, {"e2e": (100_602_000, 131_913_000)}, [])]
    assert _ranks_gate([(0, 0), (1, 3)], "20", rows) == 3
    assert _ranks_gate([(0, 3), (1, 3)], "10", rows) == 3
    # a job exactly at the threshold is within it, as a rank is (base rank 0 100 ms -> comparison rank 0 117.49 ms);
    # rank 1 90 -> 110 ms (+22.22 %) regressed
    at = [(0, {"e2e": (100_000_000, 117_490_000)}, []), (1, {"e2e": (90_000_000, 110_000_000)}, [])]
    assert _ranks_gate([(0, 0), (1, 3)], "17.49", at) == 3
    # without figures (no time breakdown) nothing is said of the job
    assert _ranks_gate([(1, 3)], "5", [(1, None, ["r1.xlsx"])]) == 3
    assert error_lines(capsys.readouterr().err) == [
        "error: --fail_on_regression 20: rank 1 regressed beyond the threshold; the job (slowest rank per side) "
        "+20.330 ms, +17.49%, within it",
        "error: --fail_on_regression 10: ranks 0, 1 regressed beyond the threshold",
        "error: --fail_on_regression 17.49: rank 1 regressed beyond the threshold; the job (slowest rank per side) "
        "+17.490 ms, +17.49%, within it",
        "error: --fail_on_regression 5: rank 1 regressed beyond the threshold"]
    # a job change under 0.001 ms keeps the decimals that show it, as the gate's line: 999,500 -> 1,000,499 ns (rank 0
    # both sides; rank 1 0.9 -> 1.0 ms, +11.11 %, regressed) reads 0.9995 -> 1.0005 ms, 999 ns = +0.0010 ms (not
    # +0.001), 999 / 999,500 = +0.10 %
    tiny = [(0, {"e2e": (999_500, 1_000_499)}, []), (1, {"e2e": (900_000, 1_000_000)}, [])]
    assert _ranks_gate([(0, 0), (1, 3)], "1", tiny) == 3
    assert error_lines(capsys.readouterr().err) == [
        "error: --fail_on_regression 1: rank 1 regressed beyond the threshold; the job (slowest rank per side) "
        "+0.0010 ms, +0.10%, within it"]


def test_rank_not_judged_is_an_error_line(capsys, tmp_path, monkeypatch):
    """A rank the gate cannot judge (no E2E time) prints its error line, as the single run does; rank 1's
    regression still decides the status."""
    def judged(result, pct, face):
        return (1, "error: no E2E time") if "rank0" in result.base.path else (3, "Performance regression: X")

    monkeypatch.setattr(api, "judge_regression", judged)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(tmp_path),
                              "--enable_operator_compare", "--fail_on_regression", "20")
    assert code == 3
    assert error_lines(err) == ["error: rank 0: no E2E time", "error: --fail_on_regression 20: rank 1 regressed "
                                "beyond the threshold; rank 0 could not be judged"]
    assert "rank 1: Performance regression: X" in err


def test_job_line_ties_and_a_zero_base():
    """The slowest rank of each side is the largest E2E, the lowest rank on a tie; a base of 0 has no percent."""
    from msprof_compare.report.ranks_console import job_line, rank_line, render_ranks

    def figs(b: int, c: int) -> dict[str, tuple[int, int]]:
        return {"e2e": (b, c), "computing": (0, 1_000), "uncovered_communication": (0, 0), "free": (0, 0)}

    rows = [(3, figs(5_000_000, 9_000_000), []), (1, figs(5_000_000, 7_000_000), []),
            (2, figs(4_000_000, 9_000_000), [])]
    assert job_line(rows) == ("Job (slowest rank per side): base rank 1 5.000 ms -> comparison rank 2 9.000 ms "
                              "(+4.000 ms, +80.00%)")
    assert job_line([(0, figs(0, 1_000_000), [])]).endswith("(+1.000 ms, N/A)")
    assert job_line([(0, None, ["r0.xlsx"])]) == ""
    # 999,500 -> 1,000,499 ns read "1.000 ms -> 1.000 ms (+0.001 ms": 4 decimals show them apart (999 ns: 0.0010)
    assert job_line([(0, figs(999_500, 1_000_499), [])]).endswith(
        "base rank 0 0.9995 ms -> comparison rank 0 1.0005 ms (+0.0010 ms, +0.10%)")
    assert rank_line(0, figs(999_500, 1_000_499), ["r0.xlsx"]) == (
        "rank 0: E2E 0.9995 ms -> 1.0005 ms (+0.0010 ms, +0.10%), r0.xlsx")
    table = render_ranks([(0, figs(0, 1_000_000), ["a/r0.xlsx"]), (1, None, ["a/r1.xlsx"])])
    assert table_rows(table) == {0: ["0", "0.000", "1.000", "+1.000", "N/A", "+0.001", "+0.000", "+0.000"],
                                 1: ["1", *["-"] * 7]}
    assert table_rows(render_ranks([(0, None, ["a/r0.xlsx"]), (1, None, [])])) == {0: ["0", "r0.xlsx"],
                                                                                   1: ["1", "-"]}


def test_table_shows_each_ranks_two_times_apart_as_its_line():
    """Rank 0's E2E 1,000,400 -> 1,000,600 ns read "1.000 | 1.001 | +0.000" in the table at 3 decimals, a change
    unsaid under its line's "1.0004 ms -> 1.0006 ms (+0.0002 ms, +0.02%)": the table takes the decimals its ranks
    need to read true (4), for every ms in it, so its columns line up. By hand: 200 ns = +0.0002 ms, 200 / 1,000,400
    = 0.019992 % -> +0.02%; rank 1 100 -> 131.913 ms, +31.913 ms, +31.91%; its computing +65 us = +0.0650, its step
    31,743,000 ns = +31.7430. Alike times (3 ns apart) keep 3."""
    from msprof_compare.report.ranks_console import COMMUNICATION, rank_line, render_ranks

    def figs(e2e: tuple[int, int]) -> dict:
        return {"e2e": e2e, "computing": (0, 65_000), "uncovered_communication": (0, 0), "free": (0, 0),
                "step": ("Matmul", 31_743_000)}

    rows = [(0, figs((1_000_400, 1_000_600)), []), (1, figs((100_000_000, 131_913_000)), [])]
    out = render_ranks(rows)
    assert table_rows(out) == {
        0: ["0", "1.0004", "1.0006", "+0.0002", "+0.02%", "+0.0650", "+0.0000", "+0.0000", "A +31.7430"],
        1: ["1", "100.0000", "131.9130", "+31.9130", "+31.91%", "+0.0650", "+0.0000", "+0.0000", "A +31.7430"]}
    assert rank_line(0, rows[0][1], []).startswith("rank 0: E2E 1.0004 ms -> 1.0006 ms (+0.0002 ms, +0.02%)")
    table = [line for line in out.splitlines() if line[:1] in "+|"]
    assert len({len(line) for line in table}) == 1  # every line of the table as wide: its columns line up
    alike = render_ranks([(0, figs((1_000_000, 1_000_003)), [])])
    assert table_rows(alike)[0][1:4] == ["1.000", "1.000", "+0.000"]
    # 1 ns across the edge of 3 decimals: 1.000 | 1.001 | +0.000 there, 1.0005 | 1.0005 | +0.0000 at 4 (its line
    # writes 1.000499 -> 1.000500); a table of cycles stays within 120 columns (113 at 3 decimals, +3)
    edge = figs((1_000_499, 1_000_500))
    assert table_rows(render_ranks([(0, edge, [])]))[0][1:4] == ["1.0005", "1.0005", "+0.0000"]
    cycles = render_ranks([(RankCycle(r, k), edge if r else figs((100_000_000, 131_913_000)), [])
                           for k in (1, 2) for r in (0, 1)])
    assert max(map(len, cycles.splitlines()[:-1])) == 116
    # communication alone: 999,500 -> 1,000,499 ns read 1.000 and 1.000 (+0.001): 0.9995 -> 1.0005 (+0.0010)
    shown = render_ranks([(0, {COMMUNICATION: (999_500, 1_000_499)}, ["a/r0.xlsx"]),
                          (1, {COMMUNICATION: (2_000_000, 3_000_000)}, ["a/r1.xlsx"])])
    assert table_rows(shown) == {0: ["0", "0.9995", "1.0005", "+0.0010", "+0.10%", "r0.xlsx"],
                                 1: ["1", "2.0000", "3.0000", "+1.0000", "+50.00%", "r1.xlsx"]}


def test_largest_steps_are_keyed_and_named_under_the_table():
    """The table fits a 120-column terminal: each rank's largest step is a key and its change in the table, one
    line per key under it naming the step whole (a communication group's name made the table 160 columns wide and
    was cut at 34); one key per name, in the order the ranks first name them; "-" and no line where none moved."""
    from msprof_compare.report.ranks_console import render_ranks, step_key

    group = "Group 7 Communication hccl_world_group_data_parallel (uncovered)"  # 64 columns

    def figs(step: tuple[str, int] | None) -> dict:
        return {"e2e": (100_000_000, 131_913_000), "computing": (0, 65_000), "uncovered_communication": (0, 0),
                "free": (0, 0), "step": step}

    rows = [(0, figs((group, 31_743_000)), []), (1, figs(("Matmul", -1_500)), []), (2, figs(None), []),
            (3, figs((group, 20_448_000)), [])]
    out = render_ranks(rows)
    lines = out.splitlines()
    assert max(map(len, lines[:-2])) == 105  # 118 with "Computing Diff", "Uncovered Comm. Diff", "Free Diff"
    assert lines[1].strip("| ") == "Ranks: E2E Time and Diff, Diff of Its Parts (ms)"
    assert [row[-1] for row in table_rows(out).values()] == ["A +31.743", "B -0.002", "-", "A +20.448"]
    cycles = render_ranks([(RankCycle(r, k), figs((group, 31_743_000)), []) for k in (1, 2) for r in (0, 1)])
    assert max(map(len, cycles.splitlines()[:-1])) == 113  # a Cycle column adds 8 (it was 126)
    e2e_alone = render_ranks([(0, {"e2e": (100_000_000, 131_913_000)}, [])]).splitlines()  # the gate's breakdown
    assert e2e_alone[1].strip("| ") == "Ranks: E2E Time and Diff (ms)"
    assert [c.strip() for c in e2e_alone[3].strip("|").split("|")] == ["Rank", "Base", "Comparison", "Diff", "Diff %"]
    assert lines[-2:] == [f"Largest Step A: {group}", "Largest Step B: Matmul"]
    assert "Largest Step" not in render_ranks([(2, figs(None), [])]).splitlines()[-1]
    assert [step_key(i) for i in (0, 25, 26, 27, 701, 702)] == ["A", "Z", "AA", "AB", "ZZ", "AAA"]


def test_rank_notice_filter_paths_and_count():
    """The dedupe filter alone: rank10's paths are not read as rank1's plus a "0"; a held block line said with a
    new item is no longer counted as left out; a notice a rank repeats itself is no earlier rank's."""
    import logging

    from msprof_compare.logs import RankNotices

    said: list[str] = []
    logger = logging.getLogger("msprof-analyze.test-ranks-filter")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())
    logger.addHandler(handler)
    pairs = [(f"b/r{r}", f"c/r{r}") for r in (1, 10)]  # Kineto rank folders: b/r1 is a prefix of b/r10/...
    once = RankNotices(pairs)
    logger.addFilter(once)
    try:
        for r in (1, 10):
            once.start(r)
            for _ in range(2):  # both sides alike (a self-compare): no earlier rank's, left to _SaidOnce
                logger.info("Start to compare")
            logger.warning("b/r%s/x.pt.trace.json: no file", r)
            logger.warning("Block (figures alike):")
            logger.warning("  - same item")
            logger.warning("  - E2E: why it differs: %s ms", 100 + r)
            logger.warning("  - item of rank %s", r)
            logger.warning("  - last item")
            logger.warning("Line after")
            logger.warning("  - item of a block said whole")
    finally:
        logger.removeFilter(once)
        logger.removeHandler(handler)
    # each line said begins with its rank, a block's items too (their indent after it); rank 10's block, whose line
    # repeats rank 1's, is its title and first new item (its explanation, said for rank 1, left out), then its other
    # new item
    assert said == ["rank 1: Start to compare", "rank 1: Start to compare", "rank 1: b/r1/x.pt.trace.json: no file",
                    "rank 1: Block (figures alike):", "rank 1:   - same item",
                    "rank 1:   - E2E: why it differs: 101 ms", "rank 1:   - item of rank 1", "rank 1:   - last item",
                    "rank 1: Line after",
                    "rank 1:   - item of a block said whole", "rank 10: Block, as for rank 1 but: E2E: 110 ms",
                    "rank 10:   - item of rank 10"]
    assert once.repeated == 7
    # rank 10's two "Start to compare" (INFO), its "no file" and four items (WARNING): the count is a warning
    assert once.left_out == {logging.INFO: 2, logging.WARNING: 5} and once.level == logging.WARNING
    assert RankNotices(pairs).level == logging.INFO


def test_folder_of_ranks_against_a_folder_of_one_readable_trace(tmp_path):
    """The comparison folder's rank 1 trace is no gzip: the folder is the one trace left, and the error names it."""
    comp = tmp_path / "comp"
    comp.mkdir()
    shutil.copy(KINETO / "sampled_rank-0.json.gz", comp)
    (comp / "sampled_rank-1.json.gz").write_bytes(b"not gzip")
    with pytest.raises(ProfileError, match=r"is a folder of ranks, but the comparison .*comp is one profile, the "
                                           r"trace sampled_rank-0\.json\.gz alone \(compare_ranks\(\)"):
        api.compare(KINETO, comp)


def test_folder_of_traces_without_ranks_is_no_folder_of_ranks(tmp_path):
    """One process's runs (two traces, no distributedInfo) against one trace: not "a folder of ranks". Named as one
    worker's cycles (``worker0.<n>``), they are a single device's cycles, said so; named otherwise, the loader's
    error naming the traces."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for n in (1, 2):
        (runs / f"worker0.{n}.pt.trace.json").write_text('{"schemaVersion": 1, "traceEvents": []}')
    with pytest.raises(ProfileError, match=r"runs: is a folder of a single device's cycles, but the comparison "):
        api.compare(runs, runs / "worker0.1.pt.trace.json")
    for n in (1, 2):
        (runs / f"worker0.{n}.pt.trace.json").rename(runs / f"run{n}.pt.trace.json")
    with pytest.raises(ProfileError, match=r"runs: directory holds 2 traces \(run1\.pt\.trace\.json, "):
        api.compare(runs, runs / "run1.pt.trace.json")


def test_folders_of_one_gpus_traces_are_its_cycles(tmp_path):
    """A scheduler's cycles on one GPU (tensorboard_trace_handler writes ``worker.<ms>.pt.trace.json`` per cycle,
    no distributedInfo): a single device's cycles, by name (a trace records no collection end in its head). One
    such trace alone in a folder of trace folders stays an error. A folder where some trace records a rank keeps
    the per-trace error (``test_kineto_rank_beyond_the_head_or_absent_is_named``)."""
    for ms in (200, 100):
        shutil.copy(REPO / "sample_data" / "bert-small_h100.json.gz", tmp_path / f"w.{ms}.pt.trace.json.gz")
    assert api.ranks(tmp_path) == {RankCycle(None, 1): str(tmp_path / "w.100.pt.trace.json.gz"),
                                   RankCycle(None, 2): str(tmp_path / "w.200.pt.trace.json.gz")}
    one = tmp_path / "one" / "w0"
    one.mkdir(parents=True)
    shutil.copy(REPO / "sample_data" / "bert-small_h100.json.gz", one / "w.1.pt.trace.json.gz")
    (one.parent / "empty").mkdir()
    with pytest.raises(ProfileError, match=r"one: holds 1 Kineto trace that records no rank .*: w0 \(pass it"):
        api.ranks(one.parent)


def test_output_folder_named_as_a_report_and_a_missing_side(capsys, tmp_path, monkeypatch):
    """-o names an existing folder that ends in .xlsx: it is the reports' folder. A folder of ranks against a path
    that does not exist: the missing path is the error, not "one profile"."""
    folder = tmp_path / "runs.xlsx"
    folder.mkdir()

    def stop(*args, **kwargs):
        raise ProfileError(None, "stopped before loading")

    monkeypatch.setattr(api, "rank_pairs", stop)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(TEXT1), "-o", str(folder))
    assert (code, error_lines(err)) == (1, ["error: stopped before loading"])
    missing = tmp_path / "missing"
    code, _, err = run_inproc(capsys, "-bp", str(TEXT0), "-d", str(missing), "-o", str(folder))
    assert code == 1
    assert error_lines(err)[0].startswith(f"error: {missing}: ") and "one profile" not in err


def test_db_ranks_against_the_profilers_step_trace_time(capsys, tmp_path):
    """DB exports, rank by rank: each rank's Computing and Uncovered Communication changes are those of the
    profiler's own analysis.db StepTraceTime (us), a table the time breakdown does not read. (E2E and Free differ
    by design: a DB export's E2E window spans its non-kernel tasks too, docs/differences.md.)"""
    import sqlite3

    def step(level: str, rank: int) -> tuple[Decimal, Decimal]:
        db = PT / "db" / level / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "analysis.db"
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)) as con:
            row = con.execute("SELECT CAST(computing AS TEXT), CAST(communication_not_overlapped AS TEXT) "
                              "FROM StepTraceTime").fetchone()
        return Decimal(row[0]), Decimal(row[1])

    code, out, err = run_inproc(capsys, "-bp", str(PT / "db" / "level0"), "-d", str(PT / "db" / "level1"), "-o",
                                str(tmp_path), "--enable_profiling_compare")
    assert code == 0, err
    rows = table_rows(out)
    assert sorted(rows) == [0, 1]
    for rank in (0, 1):
        (bc, bu), (cc, cu) = step("level0", rank), step("level1", rank)
        assert rows[rank][5:7] == [ms(cc - bc, "+"), ms(cu - bu, "+")], rows[rank]


def test_left_out_line_counts_one_notice_too():
    from msprof_compare.logs import left_out_line

    assert left_out_line(0) == ""
    assert left_out_line(1) == ("Left out 1 notice of a later rank, the same as an earlier rank's but for its paths; "
                                "--rank_list N compares rank N alone, with all its notices.")
    assert left_out_line(9).startswith("Left out 9 notices of later ranks, ")
    assert left_out_line(1, api=True).endswith("; rank_list=N compares rank N alone, with all its notices.")
    assert left_out_line(2, "rank cycle") == ("Left out 2 notices of later rank cycles, each the same as an earlier "
                                              "rank cycle's but for its paths; a rank cycle's two inputs compared "
                                              "alone show all its notices.")


@pytest.fixture
def package_log():
    """(thread, level, message) of each record the package logger hands its handlers, at INFO and above."""
    logger = logging.getLogger("msprof-analyze")
    got: list[tuple[int | None, int, str]] = []
    handler = logging.Handler()
    handler.emit = lambda record: got.append((record.thread, record.levelno, record.getMessage()))
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield got
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def step(results, log: list, caller: str = "") -> list[tuple[int, str]]:
    """One ``next(results)``'s log lines (level, message); ``caller`` is logged after a rank, as a loop body would."""
    log.clear()
    if next(results, None) is not None and caller:
        logging.getLogger("msprof-analyze").info(caller)
    return [(level, text) for _, level, text in log]


def steps(results, log: list, caller: str = "", ranks: int = 2) -> list[list[tuple[int, str]]]:
    """``step`` for each rank, then once more (the end of the iteration)."""
    return [step(results, log, caller) for _ in range(ranks + 1)]


def test_compare_ranks_logs_as_the_cli(package_log):
    """In Python, each rank's lines are its single compare's, beginning with ``rank N: ``; rank 1's lines that are
    rank 0's but for its paths are left out, and counted once the ranks are done; the caller's own line in the loop
    body keeps its words (said after each rank, alike)."""
    single = {}
    for r in (0, 1):
        api.compare(TEXT0 / f"rank{r}_ascend_pt", TEXT1 / f"rank{r}_ascend_pt", enable_profiling_compare=True)
        single[r] = [(level, text) for _, level, text in package_log]
        package_log.clear()
    # a block's items ("  - ", the category note's: Level0 against Level1) are prefixed too, before their indent
    assert any(text.startswith("  - ") for _, text in single[0])

    def named(r: int, text: str) -> str:
        return f"rank {r}: {text}"

    assert not (TEXT0 / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "communication.json").exists()
    assert (logging.WARNING, f"{TEXT0 / 'rank1_ascend_pt'}/ASCEND_PROFILER_OUTPUT: The file communication.json does "
                             "not exist. (base side: no RDMA or SDMA Bandwidth, which the Model Profiling Time "
                             "Distribution table reads from it; a Level0 export writes none, Level1 or Level2 "
                             "writes it)") in single[1]
    repeat = [(level, text.replace("rank1_ascend_pt", "rank0_ascend_pt")) in single[0] for level, text in single[1]]
    assert sum(repeat) >= 4
    caller = (logging.INFO, "caller: a rank is done")
    count = (max(level for (level, _), r in zip(single[1], repeat, strict=True) if r),
             f"Left out {sum(repeat)} notices of later ranks, each the same as an earlier rank's but for its paths; "
             "rank_list=N compares rank N alone, with all its notices.")
    said = steps(msprof_compare.compare_ranks(TEXT0, TEXT1, enable_profiling_compare=True), package_log, caller[1])
    # each rank opens with the CLI's line naming its inputs (the user walk of session 66: a notebook's log named none)
    comparing = [(logging.INFO, f"rank {r}: comparing {TEXT0 / f'rank{r}_ascend_pt'} with "
                                f"{TEXT1 / f'rank{r}_ascend_pt'}") for r in (0, 1)]
    assert said == [[comparing[0]] + [(level, named(0, text)) for level, text in single[0]] + [caller],
                    [comparing[1]]
                    + [(level, named(1, text)) for (level, text), r in zip(single[1], repeat, strict=True) if not r]
                    + [caller], [count]]
    assert count[0] == logging.WARNING


def test_compare_ranks_interleaved_keep_their_own_states(package_log):
    """Two rank-by-rank compares advanced in turn (Ascend text ranks, Kineto ranks against themselves) each log
    what each logs alone: no state of one reaches the other."""
    def run(side: int) -> Iterator[tuple[int, api.CompareResult]]:
        if side == 0:
            return msprof_compare.compare_ranks(TEXT0, TEXT1, enable_profiling_compare=True)
        return msprof_compare.compare_ranks(KINETO, KINETO, enable_profiling_compare=True)

    alone = [steps(run(side), package_log) for side in (0, 1)]
    assert [len(s) for s in alone] == [3, 3] and all(s[2][0][1].startswith("Left out ") for s in alone)
    assert any(text.startswith("rank 0: Base and comparison are the same input") for _, text in alone[1][0])
    both = [run(0), run(1)]
    said: list[list[list[tuple[int, str]]]] = [[], []]
    for _ in range(3):
        for side in (0, 1):
            said[side].append(step(both[side], package_log))
    assert said == alone



def test_compare_ranks_in_threads_judge_their_own_lines(package_log, monkeypatch):
    """Two rank-by-rank compares whose ranks load at the same time in two threads (a new thread for each rank)
    each log what one logs alone: a rank's lines are judged by its own compare's filter, in the thread it runs in."""
    alone = steps(msprof_compare.compare_ranks(TEXT0, TEXT1, enable_profiling_compare=True), package_log)
    real = api._compare_inputs
    together = threading.Barrier(2, timeout=60)

    def met(*args):
        together.wait()  # both compares' filters are on the logger while both load
        return real(*args)

    monkeypatch.setattr(api, "_compare_inputs", met)
    both = [msprof_compare.compare_ranks(TEXT0, TEXT1, enable_profiling_compare=True) for _ in range(2)]
    for rank in (0, 1):
        package_log.clear()
        workers = [threading.Thread(target=next, args=(results,)) for results in both]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        for worker in workers:
            assert [(level, text) for thread, level, text in package_log if thread == worker.ident] == alone[rank]
    for results in both:
        assert step(results, package_log) == alone[2]


def test_compare_ranks_stopped_early_leaves_the_log_alone(package_log):
    """A loop that breaks out leaves no filter on the logger: a line logged then keeps its words, even one a rank
    said; the iterator goes on with its state (rank 1's repeats are left out), and closing it before the end logs no
    count (documented: the count comes when every rank was compared)."""
    logger = logging.getLogger("msprof-analyze")
    filters = list(logger.filters)
    results = msprof_compare.compare_ranks(TEXT0, TEXT1, enable_profiling_compare=True)
    for _rank, _result in results:
        break
    del _result
    assert logger.filters == filters
    package_log.clear()
    start = "Start to compare performance detail data, please wait."
    logger.info(start)
    assert package_log == [(threading.get_ident(), logging.INFO, start)]
    # rank 1's notices are all rank 0's (the test above), left out: only the line naming its inputs is said
    assert step(results, package_log) == [
        (logging.INFO, f"rank 1: comparing {TEXT0 / 'rank1_ascend_pt'} with {TEXT1 / 'rank1_ascend_pt'}")]
    package_log.clear()
    results.close()
    assert package_log == [] and logger.filters == filters


def test_a_log_folder_of_two_runs_against_one_trace_names_a_trace_to_pass(tmp_path):
    """tensorboard_trace_handler writes each run of a script into its folder under a new pid, so after two runs
    ``log/run`` holds two workers' traces; given as the log folder above it (what TensorBoard's --logdir takes)
    against one trace, the line said what a rank's folder holds and not what to do. It now names a trace to pass,
    and that trace, pasted back, compares (the real entry point; the bundled traces, which record no rank)."""
    run = tmp_path / "log" / "run"
    run.mkdir(parents=True)
    sample = REPO / "sample_data"
    shutil.copy(sample / "bert-small_h100.json.gz", run / "host_101.1700000000000.pt.trace.json.gz")
    shutil.copy(sample / "bert-small_mi300.json.gz", run / "host_202.1700000900000.pt.trace.json.gz")
    other = str(sample / "bert-small_mi300.json.gz")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", "log", "-d", other, "-o", "out"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    (line,) = error_lines(proc.stderr)
    assert proc.returncode == 1 and line == (
        "error: log/run: holds 2 traces: a rank's folder holds one (base side: or a profiler schedule's cycles, "
        "named as tensorboard_trace_handler names them: <worker>.<ms>.pt.trace.json, one worker's; or pass one "
        "trace per side, such as log/run/host_101.1700000000000.pt.trace.json.gz)"), proc.stderr
    assert not (tmp_path / "out").exists()
    named = line.rsplit("such as ", 1)[1].rstrip(")")
    proc = subprocess.run([sys.executable, "-c", ANALYZE, "compare", "-bp", named, "-d", other, "-o", "out",
                           "--enable_profiling_compare"], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=300)
    assert proc.returncode == 0 and "E2E time 3.908 ms -> 3.496 ms" in proc.stdout, proc.stderr


def test_kineto_rank_subfolders_hold_a_trace_under_any_name(tmp_path):
    """A rank's subfolder holds its trace as a folder input does: under the name ``export_chrome_trace`` was given
    (no ``.pt.trace``), beside a side JSON file that is no trace (an event list, an object without traceEvents)."""
    for r in (0, 1):
        sub = tmp_path / f"worker{1 - r}"  # the names' order is not the ranks'
        sub.mkdir()
        shutil.copy(KINETO / f"sampled_rank-{r}.json.gz", sub / "trace.json.gz")
        (sub / "execution_details.json").write_text('{"model": "x"}')
        (sub / "timeline.json").write_text("[]")
    assert api.ranks(tmp_path) == {0: str(tmp_path / "worker1"), 1: str(tmp_path / "worker0")}
    (tmp_path / "configs").mkdir()  # a side folder whose one JSON object is no trace: no rank of the job
    (tmp_path / "configs" / "ds_config.json").write_text('{"train_batch_size": 8}')
    assert api.ranks(tmp_path) == {0: str(tmp_path / "worker1"), 1: str(tmp_path / "worker0")}
    (tmp_path / "worker0" / "other.json").write_text('{"traceEvents": []}')  # two traces: which is the rank's?
    with pytest.raises(ProfileError, match=r"worker0: holds 2 traces: a rank's folder holds one"):
        api.ranks(tmp_path)
    (tmp_path / "worker0" / "other.json").unlink()
    (results,) = [(rank, result.verdict) for rank, result in
                  msprof_compare.compare_ranks(tmp_path, KINETO, enable_profiling_compare=True) if rank == 1]
    assert results[1] == api.compare(KINETO / "sampled_rank-1.json.gz", KINETO / "sampled_rank-1.json.gz",
                                     enable_profiling_compare=True).verdict


def test_symbolic_links_are_refused_by_discovery_as_by_the_loader(capsys, tmp_path):
    """A rank's ASCEND_PROFILER_OUTPUT linked elsewhere: rank discovery followed it and found rank 1, whose loader
    refused the link without --force once rank 0 was compared and written. Discovery now refuses it as the loader
    does (its line, before anything is compared); with --force both follow it. So too a linked rank folder, and
    a linked Kineto trace."""
    base = tmp_path / "base"
    shutil.copytree(TEXT0 / "rank0_ascend_pt", base / "rank0_ascend_pt")
    linked = base / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    linked.parent.mkdir()
    shutil.copy(TEXT0 / "rank1_ascend_pt" / "profiler_info_1.json", linked.parent)
    linked.symlink_to(TEXT0 / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT")
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(TEXT1), "-o", str(out))
    assert (code, error_lines(err)) == (1, [f"error: {linked}: is a symbolic link; refusing to follow it (base side: "
                                            "add --force to accept it)"])
    assert not out.exists()  # nothing compared
    with pytest.raises(ProfileError) as loader:  # the loader's own words for that rank's input
        api.compare(linked.parent, TEXT1 / "rank1_ascend_pt")
    with pytest.raises(ProfileError) as found:
        msprof_compare.ranks(base)
    assert str(found.value) == str(loader.value).replace("(base side: ", "(") == f"{linked}: is a symbolic link; " \
                                                                                "refusing to follow it (add " \
                                                                                "force=True to accept it)"
    assert loader.value.side == "base side"
    with pytest.raises(ProfileError, match="add force=True to accept it"):
        api.compare_ranks(base, TEXT1)
    assert msprof_compare.ranks(base, force=True) == {r: str(base / f"rank{r}_ascend_pt") for r in (0, 1)}
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(TEXT1), "-o", str(out), "--force",
                              "--enable_profiling_compare")
    assert code == 0, err
    assert sorted(m[1] for p in out.iterdir() if (m := STAMPED.match(p.name))) == ["0", "1"]
    shutil.rmtree(base / "rank1_ascend_pt")
    (base / "rank1_ascend_pt").symlink_to(TEXT0 / "rank1_ascend_pt")  # the rank's folder itself
    with pytest.raises(ProfileError, match=f"^{re.escape(str(base / 'rank1_ascend_pt'))}: is a symbolic link"):
        api.ranks(base)
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(KINETO / "sampled_rank-0.json.gz", traces)
    (traces / "sampled_rank-1.json.gz").symlink_to(KINETO / "sampled_rank-1.json.gz")
    with pytest.raises(ProfileError, match="sampled_rank-1.json.gz: is a symbolic link"):
        api.ranks(traces)
    assert list(api.ranks(traces, force=True)) == [0, 1]


def test_api_empty_or_missing_folder_is_named_as_such(tmp_path):
    """``ranks("")`` and ``compare_ranks("", ...)`` said "is not a folder" naming no path, and a missing folder "is
    not a folder" too; now an empty path is said to be empty (which side, for compare_ranks), as ``compare("")``
    says, and a missing one "no such file or directory". Found by fuzzing the API."""
    hint = "pass a folder holding rank0_ascend_pt, rank1_ascend_pt, ... or one Kineto trace per rank"
    with pytest.raises(ProfileError) as info:
        msprof_compare.ranks("")
    assert str(info.value) == "The path is empty. Please enter a valid path."
    for args, side in ((("", TEXT1), "the base folder: the first"), ((TEXT0, ""), "the comparison folder: the second")):
        with pytest.raises(ProfileError) as info:
            msprof_compare.compare_ranks(*args)
        assert str(info.value) == f"The path is empty. Please enter a valid path. ({side} argument of compare_ranks())"
    missing = tmp_path / "no_such_run"
    for call, side in ((lambda: msprof_compare.ranks(missing), ""),
                       (lambda: msprof_compare.compare_ranks(missing, TEXT1), "base side: ")):
        with pytest.raises(ProfileError) as info:
            call()
        assert str(info.value) == f"{missing}: no such file or directory ({side}{hint})"
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(ProfileError) as info:
        msprof_compare.ranks(tmp_path / "a.txt")
    assert str(info.value) == f"{tmp_path / 'a.txt'}: is not a folder ({hint})"


def test_api_ranks_force_takes_what_compare_force_takes():
    """``ranks(folder, force="no")`` followed symbolic links (any truthy value was force), where ``compare()``
    refuses such a value; it is now checked by the same rule. Found by fuzzing the API."""
    for bad in ("no", "yes", 2, [1]):
        with pytest.raises(UsageError) as info:
            msprof_compare.ranks(TEXT0, force=bad)
        assert str(info.value) == f"Invalid param, force must be True or False (got {bad!r})"
    for good in (None, False, 0, True, 1, 1.0, Fraction(1), Decimal("0")):  # numbers as compare()'s flags take them
        assert list(msprof_compare.ranks(TEXT0, force=good)) == [0, 1]


def _opens_by_caller(monkeypatch: pytest.MonkeyPatch, root: Path) -> dict[str, collections.Counter]:
    """{file under ``root`` (relative): Counter of the functions that opened it}, filled as files are opened: every
    read of a trace goes through ``open`` (strace of a run counted as many opens as this does)."""
    import builtins

    real = builtins.open
    opened: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def spy(file, *args, **kwargs):
        if isinstance(file, (str, Path)):
            path = Path(os.path.abspath(file))
            if path.is_relative_to(root):
                opened[str(path.relative_to(root))][sys._getframe(1).f_code.co_name] += 1
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    return opened


def test_a_rank_run_reads_each_trace_head_once(capsys, tmp_path, monkeypatch):
    """Every trace of a rank-by-rank run is opened three times: its head once (``head_bytes``, 64 KiB: what it is,
    its rank), its gzip trailer once (its size, for the memory budget) and whole once (the load). Traces named
    otherwise than ``*.pt.trace.json`` had their heads read 5 times (flat folder: the CLI's test for folders of
    ranks, discovery's listing, its rank) and 11 (a subfolder per rank: the subfolders' listings, the link check,
    the compares' own detection), each side's; with ``--enable_communication_compare`` a 12th (``_is_kineto``).
    The base holds one trace per rank, the comparison a subfolder per rank, both the hta samples' traces."""
    base, comparison = tmp_path / "in" / "flat", tmp_path / "in" / "sub"
    for r in (0, 1):
        (comparison / f"rank{r}").mkdir(parents=True, exist_ok=True)
        base.mkdir(exist_ok=True)
        shutil.copy(KINETO / f"sampled_rank-{r}.json.gz", base / f"sampled_rank-{r}.json.gz")
        shutil.copy(KINETO / f"sampled_rank-{r}.json.gz", comparison / f"rank{r}" / "trace.json.gz")
    each = collections.Counter({"head_bytes": 1, "gzip_trailer_size": 1, "read_bytes": 1})
    files = ["flat/sampled_rank-0.json.gz", "flat/sampled_rank-1.json.gz", "sub/rank0/trace.json.gz",
             "sub/rank1/trace.json.gz"]
    opened = _opens_by_caller(monkeypatch, tmp_path / "in")
    code, out, _ = run_inproc(capsys, "-bp", str(base), "-d", str(comparison), "-o", str(tmp_path / "out"),
                              "--enable_profiling_compare", "--enable_communication_compare")
    assert code == 0 and "Job (slowest rank per side)" in out
    assert dict(opened) == {name: each for name in files}
    opened.clear()  # the API face: discovery's heads go along to the ranks' compares too
    ranks = [rank for rank, _ in msprof_compare.compare_ranks(comparison, base, enable_communication_compare=True)]
    assert ranks == [0, 1] and dict(opened) == {name: each for name in files}
    opened.clear()  # a folder against itself: each head read once for both sides (the load reads the file once)
    code, _, _ = run_inproc(capsys, "-bp", str(comparison), "-d", str(comparison), "-o", str(tmp_path / "out"),
                            "--enable_profiling_compare")
    assert code == 0 and dict(opened) == {name: collections.Counter(head_bytes=1, gzip_trailer_size=2, read_bytes=1)
                                          for name in files[2:]}


@pytest.mark.parametrize("removed_at", [1, "overview"])
def test_output_folder_removed_during_the_run_is_not_made_again(capsys, tmp_path, monkeypatch, removed_at):
    """The -o folder removed while rank 1 loads (after rank 0's reports were written in it), or while the overview
    is made: rank 1's reports and the overview made it again, holding the later files alone, the overview naming
    and linking a rank 0 workbook that went with the folder. Now the run stops: exit 1, one line naming the folder,
    no folder made again, and no "complete and stay" line for reports that are gone. The write that finds it gone
    is the check (its private folder's creation fails): nothing between a check and the write to miss."""
    from msprof_compare.report import ranks_report

    out = tmp_path / "out"
    if removed_at == 1:
        real = api._compare_inputs

        def removing(base, comparison, *rest):
            if base.endswith("sampled_rank-1.json.gz"):
                shutil.rmtree(out)
            return real(base, comparison, *rest)

        monkeypatch.setattr(api, "_compare_inputs", removing)
    else:
        real_overview = ranks_report.overview
        monkeypatch.setattr(ranks_report, "overview",
                            lambda *a, **k: shutil.rmtree(out) or real_overview(*a, **k))
    code, out_text, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(KINETO), "-o", str(out),
                                     "--enable_profiling_compare")
    assert (code, error_lines(err)) == (1, [
        f"error: {out}: the output folder is gone: removed (or renamed) while the run wrote its reports there, with "
        "those written before; it is not made again (run again into a folder left alone until the run ends)"])
    assert not out.exists() and "complete and stay" not in err
    assert ("rank 1: E2E" in out_text) == (removed_at == "overview")  # rank 1 was written when the overview failed


def test_output_folder_made_by_the_first_reports(capsys, tmp_path):
    """A missing -o folder is made for the first rank's reports (as a single compare's), then holds the others and
    the overview."""
    out = tmp_path / "new" / "out"
    code, _, err = run_inproc(capsys, "-bp", str(KINETO), "-d", str(KINETO), "-o", str(out),
                              "--enable_profiling_compare", "--output_format", "json")
    assert code == 0, err
    assert sorted(re.sub(r"\d{14}", "T", p.name) for p in out.iterdir()) == [
        "performance_comparison_result_rank0_T.json", "performance_comparison_result_rank1_T.json",
        "performance_comparison_result_ranks_T.json"]


def _timed(computing: int, waiting: int, base: int = 100_000_000) -> dict[str, tuple[int, int]]:
    """A rank's figures (ns) whose computing and uncovered communication grew by ``computing`` and ``waiting``."""
    return {"e2e": (base, base + computing + waiting), "computing": (10_000_000, 10_000_000 + computing),
            "uncovered_communication": (50_000_000, 50_000_000 + waiting), "free": (40_000_000, 40_000_000)}


def test_straggler_is_named_only_where_the_others_waited_about_as_long():
    """The rules of ``straggler``: the rank whose computing grew most, where the others' median uncovered
    communication grew by half to one and a half times as much, their computing did not grow alike and it did not
    wait itself; the lowest rank on a tie; per cycle of a schedule's cycles."""
    from msprof_compare.report.ranks_console import straggler, straggler_lines

    def rows(*pairs, cycle=None):
        return [(r if cycle is None else RankCycle(r, cycle), _timed(*p), []) for r, p in enumerate(pairs)]

    ms = 1_000_000
    # rank 2 computes 2 ms longer; ranks 0 and 1 wait 1.9 and 2.1 ms longer (median 2.0)
    three = rows((0, 19 * ms // 10), (0, 21 * ms // 10), (2 * ms, 0))
    assert straggler(three) == (2, 2 * ms, 2 * ms, [0, 1])
    assert straggler_lines(three) == ["Likely straggler: rank 2, Computing +2.000 ms; the other 2 ranks' Uncovered "
                                      "Communication +2.000 ms (median; waiting on it)"]
    assert straggler(rows((2 * ms, 0), (0, ms))) == (0, 2 * ms, ms, [1])  # half as much: still about as much
    assert straggler(rows((2 * ms, 0), (0, ms - 1))) is None  # under half
    assert straggler(rows((2 * ms, 0), (0, 3 * ms))) == (0, 2 * ms, 3 * ms, [1])  # one and a half times
    assert straggler(rows((2 * ms, 0), (0, 3 * ms + 1))) is None  # more: they waited for something else too
    assert straggler(rows((2 * ms, 0), (0, 0))) is None  # nobody waits: a slower rank, no straggler
    assert straggler(rows((2 * ms, 2 * ms), (2 * ms, 2 * ms))) is None  # a change all ranks share names none
    assert straggler(rows((2 * ms, 2 * ms), (0, 2 * ms))) is None  # it waited as long itself
    assert straggler(rows((2 * ms, 0), (ms, 2 * ms))) is None  # the other's computing grew by half as much
    assert straggler(rows((-ms, 0), (0, ms))) is None  # computing shrank: nothing to wait for
    assert straggler(rows((ms, 0))) is None  # one rank: no other to wait
    # a tie: the lowest rank of those computing longest; here the other such rank does not wait, so none is named
    assert straggler(rows((ms, 0), (ms, 0), (0, ms))) is None
    cycles = rows((0, ms), (ms, 0), cycle=1) + rows((0, 0), (0, 0), cycle=2)
    assert straggler_lines(cycles) == ["Likely straggler of cycle 1: rank 1, Computing +1.000 ms; rank 0's Uncovered "
                                       "Communication +1.000 ms (waiting on it)"]


def test_output_with_a_tilde_is_named_as_typed_in_a_rank_run(capsys, tmp_path, monkeypatch):
    """A rank run names ``-o "~/x"`` as typed, as a single compare does (``cli._output_as_typed``): the ranks are
    compared one after another in the thread that runs the command, under its rewrite, so the folder notice and
    an error about the target name ``~/...``; the reports' "has been generated" lines stay absolute, as a single
    compare's."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "file").touch()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    code, _, err = run_inproc(capsys, "-bp", str(TEXT1), "-d", str(TEXT2), "-o", "~/file")
    assert code == 2 and error_lines(err) == ["error: output path ~/file is a file, not a directory; give a "
                                              "directory"]
    code, _, err = run_inproc(capsys, "-bp", str(TEXT1), "-d", str(TEXT2), "-o", "~/res.csv", "--rank_list", "0",
                              "--enable_api_compare")
    warned = [line.split("[WARNING] ", 1)[1] for line in err.splitlines() if "[WARNING] -o " in line]
    assert code == 0 and warned == [
        "-o ~/res.csv is taken as a folder (created) and the rank reports go into it, one per rank."]
    written = [line.split("has been generated: ", 1)[1] for line in err.splitlines() if "has been generated" in line]
    assert len(written) == 2 and all(w.startswith(f"{home / 'res.csv'}{os.sep}") for w in written)
    assert str(home) not in "\n".join(line for line in err.splitlines() if "[WARNING]" in line)


def _ranks_json(capsys: pytest.CaptureFixture, base: Path, comp: Path, out: Path, *args: str) -> tuple[dict, str]:
    """The JSON job report of a rank-by-rank CLI run that must succeed, and its stderr."""
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(out), "--output_format", "json",
                              *args)
    assert code == 0, err
    return json.loads(next(out.glob("*_ranks_*.json")).read_text()), err


def _rank_paths(doc: dict) -> list[tuple[int, str, str]]:
    """(rank, base path, comparison path) of each rank the job report lists."""
    return [(r["rank"], r["base_path"], r["comparison_path"]) for r in doc["ranks"]]


def test_folder_of_one_trace_beside_rank_subfolders_is_a_folder_of_ranks(tmp_path, capsys):
    """Rank 0's trace in the folder and rank 1's in a subfolder (and the other way round on the other side): a
    folder of ranks, each rank with its own. They were each read as the one trace in the folder, a single compare
    of rank 0 against rank 1 that left the subfolders' ranks out without a word. The pairing is what the traces'
    distributedInfo.rank says (hta's sampled_rank-0 records 0, sampled_rank-1 records 1); an NPU job folder with a
    stray trace beside its ranks is one too (here rank 1 twice, refused), where the trace alone was compared."""
    base, comp, out = tmp_path / "base", tmp_path / "comp", tmp_path / "out"
    for folder, top, sub in ((base, 0, 1), (comp, 1, 0)):
        (folder / f"r{sub}").mkdir(parents=True)
        shutil.copy(KINETO / f"sampled_rank-{top}.json.gz", folder / "t.pt.trace.json.gz")
        shutil.copy(KINETO / f"sampled_rank-{sub}.json.gz", folder / f"r{sub}" / "w.pt.trace.json.gz")
    assert api.ranks(base) == {0: str(base / "t.pt.trace.json.gz"), 1: str(base / "r1")}
    assert api.ranks(comp) == {0: str(comp / "r0"), 1: str(comp / "t.pt.trace.json.gz")}
    doc, err = _ranks_json(capsys, base, comp, out, "--enable_profiling_compare")
    assert _rank_paths(doc) == [
        (0, str(base / "t.pt.trace.json.gz"), str(comp / "r0")),
        (1, str(base / "r1"), str(comp / "t.pt.trace.json.gz"))]
    for record in doc["ranks"]:  # each rank's figures are its own traces' single compare
        single = api.compare(KINETO / f"sampled_rank-{record['rank']}.json.gz",
                             KINETO / f"sampled_rank-{record['rank']}.json.gz", enable_profiling_compare=True)
        e2e = single.frames["e2e"]
        assert (record["e2e"]["base_ns"], record["e2e"]["comparison_ns"]) == (
            int(e2e["base_ns"].iloc[0]), int(e2e["comparison_ns"].iloc[0]))
    # against one trace: a folder of ranks, refused, where its top trace was compared
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(KINETO / "sampled_rank-0.json.gz"), "-o",
                              str(tmp_path / "one"))
    assert code == 1 and len(error_lines(err)) == 1, err
    assert "folder of ranks" in err and not (tmp_path / "one").exists()
    job = tmp_path / "job"
    shutil.copytree(TEXT0, job)
    shutil.copy(KINETO / "sampled_rank-1.json.gz", job / "stray.pt.trace.json.gz")
    with pytest.raises(ProfileError, match="holds rank 1 twice"):
        api.ranks(job)


def test_rank_trace_under_another_name_beside_pt_trace_files(tmp_path, capsys):
    """Rank 1's trace named rank1.json.gz beside rank0.pt.trace.json.gz on both sides: both ranks are compared.
    A folder input reads its *.pt.trace.json alone, and so did discovery: rank 1 was left out without a word (exit 0,
    one rank compared), or said to be "only in the comparison" where the base named it so and the comparison not.
    The ranks are what hta's sampled traces record (distributedInfo.rank 0 and 1); a JSON file naming no
    traceEvents (a config) stays out."""
    base, comp, out = tmp_path / "base", tmp_path / "comp", tmp_path / "out"
    for folder in (base, comp):
        folder.mkdir()
        shutil.copy(KINETO / "sampled_rank-0.json.gz", folder / "rank0.pt.trace.json.gz")
        (folder / "ds_config.json").write_text('{"train_batch_size": 8}')
    shutil.copy(KINETO / "sampled_rank-1.json.gz", base / "rank1.json.gz")
    shutil.copy(KINETO / "sampled_rank-1.json.gz", comp / "rank1.json.gz")
    assert api.ranks(base) == {0: str(base / "rank0.pt.trace.json.gz"), 1: str(base / "rank1.json.gz")}
    doc, err = _ranks_json(capsys, base, comp, out, "--enable_profiling_compare")
    assert _rank_paths(doc) == [
        (0, str(base / "rank0.pt.trace.json.gz"), str(comp / "rank0.pt.trace.json.gz")),
        (1, str(base / "rank1.json.gz"), str(comp / "rank1.json.gz"))]
    assert doc["not_compared"] == [] and "not compared" not in err
    single = api.compare(KINETO / "sampled_rank-1.json.gz", KINETO / "sampled_rank-1.json.gz",
                         enable_profiling_compare=True).frames["e2e"]
    assert doc["ranks"][1]["e2e"]["base_ns"] == int(single["base_ns"].iloc[0])


def test_db_rank_device_map_must_agree(capsys, tmp_path):
    """torch_npu's DB exports record their rank in RANK_DEVICE_MAP (msinsight's: rank 0 (0, 0), rank 1 (1, 1)), not
    in META_DATA: ranks 0 and 1 swapped by renaming (profiler_info_N.json, its rank_id, the DB's name) compared
    base rank 0 with the comparison's real rank 1, exit 0, without a word. Refused in the words of a META_DATA
    rank, at the first rank, nothing written, its hint naming --force, which compares each as its name says; a copy
    renamed consistently with its map is compared."""
    real = PT / "db" / "level0"
    comp, out = tmp_path / "comp", tmp_path / "out"
    for rank, named in ((0, 1), (1, 0)):
        src = real / f"rank{rank}_ascend_pt"
        assert sql(src / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{rank}.db",
                   "SELECT rankId, deviceId FROM RANK_DEVICE_MAP") == [(rank, rank)]
        dest = comp / f"rank{named}_ascend_pt"
        (dest / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        info = json.loads((src / f"profiler_info_{rank}.json").read_text())
        info["rank_id"] = named
        (dest / f"profiler_info_{named}.json").write_text(json.dumps(info))
        shutil.copy(src / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{rank}.db",
                    dest / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{named}.db")
    assert api.ranks(comp) == {0: str(comp / "rank0_ascend_pt"), 1: str(comp / "rank1_ascend_pt")}  # names only
    code, _, err = run_inproc(capsys, "-bp", str(real), "-d", str(comp), "-o", str(out), "--enable_profiling_compare")
    said = (f"error: rank 0: {comp / 'rank0_ascend_pt'}: records two rank ids: rank 0 by the name of "
            "profiler_info_0.json, rank 1 by ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db's RANK_DEVICE_MAP "
            "rankId (comparison side: pass the directory the profiler wrote, unchanged, or add --force to compare it "
            "as rank 0, as "
            "profiler_info_0.json names it)")
    assert (code, error_lines(err)) == (1, [said]), err
    assert not out.exists() or not list(out.iterdir())
    single = {rank: int(api.compare(real / f"rank{rank}_ascend_pt", real / f"rank{rank}_ascend_pt",
                                    enable_profiling_compare=True).frames["e2e"]["base_ns"].iloc[0]) for rank in (0, 1)}
    assert single[0] != single[1]

    def compared(**force: bool) -> dict[int, int]:
        return {rank: int(result.frames["e2e"]["comparison_ns"].iloc[0])
                for rank, result in api.compare_ranks(real, comp, enable_profiling_compare=True, **force)}

    # --force compares each copy as the rank its name says (CANN's map could number a multi-node job otherwise)
    assert compared(force=True) == {0: single[1], 1: single[0]}
    # the map made to agree with the new names: the swapped copies compare as the ranks they now say they are
    for named in (0, 1):
        db = comp / f"rank{named}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{named}.db"
        edited_copy(db, db.with_suffix(".tmp"), f"UPDATE RANK_DEVICE_MAP SET rankId = {named}")
        db.with_suffix(".tmp").replace(db)
    assert compared() == {0: single[1], 1: single[0]}


def test_side_json_beside_npu_rank_folders_is_no_rank(tmp_path, capsys):
    """A ds_config.json beside rank0_ascend_pt, rank1_ascend_pt (msinsight's level0 text ranks) is no rank: its
    head names no traceEvents. Taken by a folder input's rule (a folder's one JSON object is its trace), the folder
    was one profile, that config ("is one profile, not a folder of ranks"; against a folder of ranks "the trace
    ds_config.json alone"). A JSON object naming traceEvents there is a rank (here rank 1 twice, refused)."""
    job, out = tmp_path / "job", tmp_path / "out"
    shutil.copytree(TEXT0, job)
    (job / "ds_config.json").write_text('{"train_batch_size": 8, "zero_optimization": {"stage": 2}}')
    assert api.ranks(job) == {0: str(job / "rank0_ascend_pt"), 1: str(job / "rank1_ascend_pt")}
    doc, _ = _ranks_json(capsys, TEXT0, job, out, "--rank_list", "1")
    assert _rank_paths(doc) == [
        (1, str(TEXT0 / "rank1_ascend_pt"), str(job / "rank1_ascend_pt"))]
    shutil.copy(KINETO / "sampled_rank-1.json.gz", job / "trace.json.gz")
    with pytest.raises(ProfileError, match="holds rank 1 twice"):
        api.ranks(job)


def test_db_rank_check_reads_the_map_only_where_it_names_one_rank_and_meta_data_no_other():
    """``check_db_rank`` on msinsight's level0 DB rank 0 (RANK_DEVICE_MAP (0, 0), no META_DATA distributed_args), its
    recorded ranks set in copies of the loaded profile (mutation testing, session 63: each case below passed with
    its condition dropped). A META_DATA rank that agrees leaves the map to check (rank 1 there is refused); a map of
    two ranks names none (passes); a META_DATA rank that differs is the one said, with the plain hint, though the
    map differs too; --force passes the map's rank, never META_DATA's."""
    import copy

    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank
    from msprof_compare.options import build_options

    folder = PT / "db" / "level0" / "rank0_ascend_pt"
    loaded = load_profile(str(folder), build_options()[0])
    assert (loaded.source, loaded.extra["device_ranks"], loaded.metadata.get("distributed_args")) == (
        "ascend_db", (0,), None)

    def recorded(meta: int | None, devices: tuple[int, ...]):
        p = copy.copy(loaded)
        p.metadata = {**loaded.metadata, **({} if meta is None else {"distributed_args": {"rank": meta}})}
        p.extra = {**loaded.extra, "device_ranks": devices}
        return p

    check_db_rank(0, loaded)  # as written: its map agrees
    db = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    with pytest.raises(ProfileError) as err:
        check_db_rank(0, recorded(0, (1,)))
    assert str(err.value) == (f"{folder}: records two rank ids: rank 0 by the name of profiler_info_0.json, rank 1 by "
                              f"{db}'s RANK_DEVICE_MAP rankId (pass the directory the profiler wrote, unchanged, or "
                              "add --force to compare it as rank 0, as profiler_info_0.json names it)")
    check_db_rank(0, recorded(0, (1,)), force=True)
    check_db_rank(0, recorded(None, (0, 1)))
    check_db_rank(0, recorded(None, (1, 2)))
    with pytest.raises(ProfileError) as err:
        check_db_rank(0, recorded(2, (3,)))
    assert str(err.value) == (f"{folder}: records two rank ids: rank 0 by the name of profiler_info_0.json, rank 2 by "
                              f"{db}'s META_DATA distributed_args (pass the directory the profiler wrote, unchanged)")
    with pytest.raises(ProfileError, match="rank 2 by .*META_DATA distributed_args"):
        check_db_rank(0, recorded(2, (0,)), force=True)


@pytest.mark.parametrize(("statements", "want"), [
    # rank 0 on two devices: one rank, named once
    (("INSERT INTO RANK_DEVICE_MAP VALUES (0, 1)",), (0,)),
    # cells that are no rank id (a fraction, a negative, text, NULL) are passed over, a rank id beside them read
    (("UPDATE RANK_DEVICE_MAP SET rankId = 1.5", "INSERT INTO RANK_DEVICE_MAP VALUES (-1, 1)",
      "INSERT INTO RANK_DEVICE_MAP VALUES ('x', 2)", "INSERT INTO RANK_DEVICE_MAP VALUES (NULL, 3)",
      "INSERT INTO RANK_DEVICE_MAP VALUES (3, 4)"), (3,)),
    # no rankId column: no rank recorded, and the export loads
    (("ALTER TABLE RANK_DEVICE_MAP RENAME COLUMN rankId TO rank",), ()),
])
def test_db_device_ranks_are_the_distinct_rank_ids_of_the_map(tmp_path, statements, want):
    """The ranks a DB export's RANK_DEVICE_MAP records (``ascend_db._device_ranks``, which ``check_db_rank`` reads):
    msinsight's level0 DB rank 0, whose map is one row (0, 0), edited in a copy (mutation testing, session 63: the
    DISTINCT, the integer test and the column test could each be dropped with every test passing)."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.options import build_options

    src = PT / "db" / "level0" / "rank0_ascend_pt"
    dest = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("ascend_pytorch_profiler_0.db"))
    name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    edited_copy(src / name, dest / name, *statements)
    assert load_profile(str(dest), build_options()[0]).extra["device_ranks"] == want


@pytest.mark.parametrize(("statements", "named", "odd"), [
    (("UPDATE RANK_DEVICE_MAP SET rankId = 'x'",), "no rank id", "1 rankId value(s) are no rank id (an integer from "
     "0 to {top}; the first: 'x')"),
    (("UPDATE RANK_DEVICE_MAP SET rankId = NULL",), "no rank id", "1 rankId value(s) are no rank id (an integer from "
     "0 to {top}; the first: None)"),
    (("UPDATE RANK_DEVICE_MAP SET rankId = -1", "INSERT INTO RANK_DEVICE_MAP VALUES (-2, 1)"), "no rank id",
     "2 rankId value(s) are no rank id (an integer from 0 to {top}; the first: -1)"),
    (("INSERT INTO RANK_DEVICE_MAP VALUES (1, 1)",), "ranks 0, 1", ""),
])
def test_db_rank_map_naming_no_one_rank_is_said(tmp_path, statements, named, odd):
    """msinsight's level0 DB rank 0 (META_DATA without distributed_args, RANK_DEVICE_MAP one row (0, 0)) with its map
    edited in a copy: a rankId that is text, NULL or negative, or a row written again with another rank, left the
    rank check nothing to go by, and a copy of another rank renamed passed without a word. The check still passes
    (no rank to refuse), and one warning says why it was not made; the map as written (one rank) says nothing."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank
    from msprof_compare.options import build_options
    from msprof_compare.units import MAX_RANK

    src = PT / "db" / "level0" / "rank0_ascend_pt"
    dest = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("ascend_pytorch_profiler_0.db"))
    name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    db = edited_copy(src / name, dest / name, *statements)
    p = load_profile(str(dest), build_options()[0])
    before = list(p.warnings)
    check_db_rank(0, p)
    bad = f"; {odd.format(top=MAX_RANK)}" if odd else ""
    assert p.warnings[len(before):] == [
        f"{db}: RANK_DEVICE_MAP names {named}{bad}, and META_DATA no distributed_args rank, so its rank is not checked "
        "against rank 0, which its folder's profiler_info_N.json names"]
    written = load_profile(str(src), build_options()[0])
    n = len(written.warnings)
    check_db_rank(0, written)
    assert len(written.warnings) == n


@pytest.mark.parametrize(("statements", "why"), [
    (("DROP TABLE RANK_DEVICE_MAP",), "no RANK_DEVICE_MAP table"),
    (("DELETE FROM RANK_DEVICE_MAP",), "an empty RANK_DEVICE_MAP"),
    (("ALTER TABLE RANK_DEVICE_MAP RENAME COLUMN rankId TO rank",), "a RANK_DEVICE_MAP without a rankId column"),
])
def test_db_recording_no_rank_is_said_at_info_where_ranks_are_checked(tmp_path, caplog, statements, why):
    """msinsight's level0 DB rank 0 (META_DATA without distributed_args, RANK_DEVICE_MAP one row (0, 0)) with its map
    dropped, emptied or without its column in a copy: the rank check had nothing the DB holds to go by and passed
    without a word. Exports that never write the map are usual (the msinsight server's msprof_0.db has none), so the
    check says it at INFO, not as a warning, and only where a rank is checked; the map as written says nothing."""
    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank
    from msprof_compare.options import build_options

    assert ("RANK_DEVICE_MAP",) not in sql(PT.parents[2] / "server" / "src" / "test" / "test_data" / "full_db" /
                                          "msprof_0.db", "SELECT name FROM sqlite_master")
    src = PT / "db" / "level0" / "rank0_ascend_pt"
    dest = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("ascend_pytorch_profiler_0.db"))
    name = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    edited_copy(src / name, dest / name, *statements)
    assert sql(dest / name, "SELECT count(*) FROM META_DATA WHERE name = 'distributed_args'") == [(0,)]
    for path, said in ((dest, [f"{dest}: its DB export records no rank ({why}, and META_DATA no distributed_args "
                                "rank), so its rank is the one its profiler_info_N.json's name gives, checked against "
                                "nothing the DB holds"]),
                       (src, [])):
        p = load_profile(str(path), build_options()[0])
        warnings = list(p.warnings)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="msprof-analyze"):
            check_db_rank(0, p)
        assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO] == said
        assert p.warnings == warnings and not [r for r in caplog.records if r.levelno > logging.INFO]


def test_db_without_a_rank_map_is_said_once_for_the_ranks_of_a_job(tmp_path, capsys):
    """Two ranks (msinsight's level0 DB exports) whose maps are dropped, against the samples: the INFO line names no
    rank, so the comparison's rank 1 repeats rank 0's, left out as a repeat; the base side says nothing."""
    real = PT / "db" / "level0"
    comp, out = tmp_path / "comp", tmp_path / "out"
    for rank in (0, 1):
        src, dest = real / f"rank{rank}_ascend_pt", comp / f"rank{rank}_ascend_pt"
        name = f"ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(f"ascend_pytorch_profiler_{rank}.db"))
        edited_copy(src / name, dest / name, "DROP TABLE RANK_DEVICE_MAP")
    code, _, err = run_inproc(capsys, "-bp", str(real), "-d", str(comp), "-o", str(out), "--enable_profiling_compare")
    assert code == 0, err
    said = [line for line in err.splitlines() if "records no rank" in line]
    assert [line.split("] ", 1)[1] for line in said] == [
        f"rank 0: {comp / 'rank0_ascend_pt'}: its DB export records no rank (no RANK_DEVICE_MAP table, and META_DATA "
        "no distributed_args rank), so its rank is the one its profiler_info_N.json's name gives, checked against "
        "nothing the DB holds"]
    assert said[0].split("] ", 1)[0].endswith("[INFO")


def test_force_passing_a_rank_map_that_differs_is_said_at_info(caplog):
    """--force compares a DB whose RANK_DEVICE_MAP names another rank as its folder's name says (the refusal's
    hint), but --force also lifts other checks (links, size caps): passing it is said at INFO, naming both ranks."""
    import copy

    from msprof_compare.loaders import load_profile
    from msprof_compare.loaders.ranks import check_db_rank
    from msprof_compare.options import build_options

    folder = PT / "db" / "level0" / "rank1_ascend_pt"
    db = folder / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db"
    assert sql(db, "SELECT rankId FROM RANK_DEVICE_MAP") == [(1,)]
    p = load_profile(str(folder), build_options()[0])
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        check_db_rank(0, copy.copy(p), force=True)
        check_db_rank(1, copy.copy(p), force=True)  # agrees: nothing said
    assert [r.getMessage() for r in caplog.records] == [
        f"{db}: RANK_DEVICE_MAP names rank 1; compared as rank 0, as its folder's profiler_info_N.json names it "
        "(--force)"]


def test_a_json_list_naming_trace_events_beside_one_trace_is_no_rank(tmp_path):
    """Beside hta's sampled rank 0 trace, a JSON list whose text names "traceEvents" (a manifest of the traces, say)
    is no rank's trace: only a JSON object's head is read for the key (``ranks._rank_traces``), so the folder stays
    the one trace's input (mutation testing, session 63: the object test could be dropped with every test passing,
    and the list then made the folder one of two ranks)."""
    from msprof_compare.loaders.ranks import rank_inputs

    shutil.copy(KINETO / "sampled_rank-0.json.gz", tmp_path / "rank0.pt.trace.json.gz")
    (tmp_path / "manifest.json").write_text('[{"file": "rank0.pt.trace.json.gz", "traceEvents": 2}]')
    assert rank_inputs(str(tmp_path)) is None
