"""Messages earlier sessions left rough (session 67, left67a), pinned on real sample data: the "does not exist"
lines of memory_record.csv / operator_memory.csv name their side, and the rank-by-rank line that counts the notices
it left out says how to see them. (The "kernels without a launch flow" note's opening in the words of each device
family is tests/test_launchless_kernels.py's.)"""

from __future__ import annotations

import shutil

from cliutil import run_inproc
from test_memory_record_reads import LOST

#: What a missing operator_memory.csv's line says after its side, where profile_memory was on (the samples')
OM_LOST = LOST.replace("no peak reserved memory to compare",
                       "no memory allocated inside operators to compare (MemoryCompare)", 1)

PYTORCH = "msinsight/test/data/pytorch"
LEVEL1 = PYTORCH + "/text/level1/rank{}_ascend_pt"


def _said(err: str, *names: str) -> list[str]:
    """The log lines of ``err`` (after ``[time][LEVEL] ``) that say one of ``names`` does not exist."""
    return [line.split("] ", 1)[1] for line in err.splitlines()
            if any(f"The file {n} does not exist." in line for n in names)]


def test_missing_memory_files_name_their_side(capsys, samples, tmp_path):
    """Ranks 0 and 1 of the msinsight level1 text job, copied, the comparison's memory_record.csv and
    operator_memory.csv taken away: the original's "The file ... does not exist." after each folder named no
    side, and the two folders' paths differ by one digit, so the user could not tell which side lacks them. Each
    line now names its side as communication.json's does ("(comparison side)"; "(both sides)" for one input on
    both; a file there in another case after the side). A rank-by-rank run says it for rank 0 and counts rank
    1's, the same but for its paths."""
    names = ("memory_record.csv", "operator_memory.csv")
    job = {side: tmp_path / side for side in ("base", "comparison")}
    for r in (0, 1):
        for side, folder in job.items():
            shutil.copytree(samples / LEVEL1.format(r), folder / f"rank{r}_ascend_pt")
            for name in names:
                assert (folder / f"rank{r}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / name).is_file()
                if side == "comparison":
                    (folder / f"rank{r}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / name).unlink()
    base, comp = job["base"] / "rank0_ascend_pt", job["comparison"] / "rank1_ascend_pt"
    out = comp / "ASCEND_PROFILER_OUTPUT"
    flags = ("--enable_profiling_compare", "--enable_memory_compare")
    code, _, err = run_inproc(capsys, "-bp", str(base), "-d", str(comp), "-o", str(tmp_path / "one"), *flags)
    assert code == 0 and _said(err, *names) == [
        f"{out}: The file memory_record.csv does not exist. (comparison side: {LOST})",
        f"{out}: The file operator_memory.csv does not exist. (comparison side: {OM_LOST})"]
    code, _, err = run_inproc(capsys, "-bp", str(comp), "-d", str(comp), "-o", str(tmp_path / "self"), *flags)
    assert code == 0 and _said(err, *names) == [
        f"{out}: The file memory_record.csv does not exist. (both sides: {LOST})",
        f"{out}: The file operator_memory.csv does not exist. (both sides: {OM_LOST})"]
    (tmp_path / "kept.csv").write_bytes((base / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").read_bytes())
    (tmp_path / "kept.csv").rename(out / "OPERATOR_MEMORY.CSV")
    code, _, err = run_inproc(capsys, "-bp", str(comp), "-d", str(base), "-o", str(tmp_path / "case"), *flags)
    assert code == 0 and _said(err, *names) == [
        f"{out}: The file memory_record.csv does not exist. (base side: {LOST})",
        f"{out}: The file operator_memory.csv does not exist. (base side: OPERATOR_MEMORY.CSV is there: the name is "
        "case-sensitive; rename it to operator_memory.csv)"]
    (out / "OPERATOR_MEMORY.CSV").unlink()
    code, _, err = run_inproc(capsys, "-bp", str(job["base"]), "-d", str(job["comparison"]),
                              "-o", str(tmp_path / "ranks"), *flags)
    rank0 = job["comparison"] / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    assert code == 0 and _said(err, *names) == [
        f"rank 0: {rank0}: The file memory_record.csv does not exist. (comparison side: {LOST})",
        f"rank 0: {rank0}: The file operator_memory.csv does not exist. (comparison side: {OM_LOST})"]


def _lines(err: str, prefix: str) -> list[str]:
    """The log lines of ``err`` (after ``[time]``) whose text begins with ``prefix``, without it."""
    said = [line.split("][", 1)[1] for line in err.splitlines() if line.startswith("[")]
    return [f"[{level}] {text[len(prefix):]}" for level, _, text in (s.partition("] ") for s in said)
            if text.startswith(prefix)]


def test_left_out_notices_say_how_to_see_them(capsys, caplog, samples, tmp_path):
    """msinsight's text job, Level0 ranks against Level1 ranks: rank 1 repeats rank 0's five notices but for its
    paths (communication.json missing, the settings, the split block), which the log leaves out with a count and,
    until now, no word on where they are: no report holds a loader's line. The line now says that --rank_list 1
    compares rank 1 alone, with all its notices, and so it does: that run logs exactly the notices left out, rank
    0's with rank 1's paths, and counts none; compare_ranks() names its keyword."""
    import logging

    import msprof_compare

    job = [samples / PYTORCH / "text" / level for level in ("level0", "level1")]
    code, _, err = run_inproc(capsys, "-bp", str(job[0]), "-d", str(job[1]), "-o", str(tmp_path / "all"),
                              "--enable_profiling_compare")
    (left,) = [line for line in _lines(err, "") if "Left out" in line]
    n = int(left.split()[3])
    assert code == 0 and left == (f"[WARNING] Left out {n} notices of later ranks, each the same as an earlier "
                                  "rank's but for its paths; --rank_list N compares rank N alone, with all its "
                                  "notices.")
    code, _, alone = run_inproc(capsys, "-bp", str(job[0]), "-d", str(job[1]), "-o", str(tmp_path / "one"),
                                "--enable_profiling_compare", "--rank_list", "1")
    assert code == 0 and "Left out" not in alone
    shown = [line for line in _lines(alone, "rank 1: ")
             if line not in _lines(err, "rank 1: ") and "has been generated" not in line]
    assert len(shown) == n == 5
    assert shown == [line.replace("rank0_ascend_pt", "rank1_ascend_pt") for line in _lines(err, "rank 0: ")
                     if "comparing" not in line and "has been generated" not in line]
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        for _rank, result in msprof_compare.compare_ranks(job[0], job[1], enable_profiling_compare=True):
            del result
    assert [m for m in caplog.messages if "Left out" in m] == [
        f"Left out {n} notices of later ranks, each the same as an earlier rank's but for its paths; rank_list=N "
        "compares rank N alone, with all its notices."]


def test_side_file_directory_names_its_side(capsys, samples, tmp_path):
    """msinsight level1 ranks 0 and 1, copied, the comparison's memory_record.csv replaced by a folder of that
    name: "NAME is a directory, not a file; not read." named no side, where the "does not exist" line beside it
    does, and the two folders differ by one digit. It now names its side, "(both sides)" for one input on both."""
    base, comp = tmp_path / "rank0_ascend_pt", tmp_path / "rank1_ascend_pt"
    shutil.copytree(samples / LEVEL1.format(0), base)
    shutil.copytree(samples / LEVEL1.format(1), comp)
    out = comp / "ASCEND_PROFILER_OUTPUT"
    (out / "memory_record.csv").unlink()
    (out / "memory_record.csv").mkdir()
    flags = ("--enable_profiling_compare", "--enable_memory_compare")
    said = f"{out}: memory_record.csv is a directory, not a file; not read."
    for b, d, side in ((base, comp, "comparison side"), (comp, base, "base side"), (comp, comp, "both sides")):
        code, _, err = run_inproc(capsys, "-bp", str(b), "-d", str(d), "-o", str(tmp_path / side), *flags)
        lines = [line.split("] ", 1)[1] for line in err.splitlines() if "is a directory" in line]
        assert code == 0 and lines == [f"{said} ({side})"]
