"""Three messages earlier sessions left rough (session 67, left67a), each pinned on real sample data: the "does not
exist" lines of memory_record.csv / operator_memory.csv name their side, the rank-by-rank line that counts the
notices it left out says how to see them, and the "kernels without a launch flow" note opens in the words of the
device families it counts."""

from __future__ import annotations

import shutil

from cliutil import run_inproc

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
        f"{out}: The file memory_record.csv does not exist. (comparison side)",
        f"{out}: The file operator_memory.csv does not exist. (comparison side)"]
    code, _, err = run_inproc(capsys, "-bp", str(comp), "-d", str(comp), "-o", str(tmp_path / "self"), *flags)
    assert code == 0 and _said(err, *names) == [
        f"{out}: The file memory_record.csv does not exist. (both sides)",
        f"{out}: The file operator_memory.csv does not exist. (both sides)"]
    (tmp_path / "kept.csv").write_bytes((base / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv").read_bytes())
    (tmp_path / "kept.csv").rename(out / "OPERATOR_MEMORY.CSV")
    code, _, err = run_inproc(capsys, "-bp", str(comp), "-d", str(base), "-o", str(tmp_path / "case"), *flags)
    assert code == 0 and _said(err, *names) == [
        f"{out}: The file memory_record.csv does not exist. (base side)",
        f"{out}: The file operator_memory.csv does not exist. (base side: OPERATOR_MEMORY.CSV is there: the name is "
        "case-sensitive; rename it to operator_memory.csv)"]
    (out / "OPERATOR_MEMORY.CSV").unlink()
    code, _, err = run_inproc(capsys, "-bp", str(job["base"]), "-d", str(job["comparison"]),
                              "-o", str(tmp_path / "ranks"), *flags)
    rank0 = job["comparison"] / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    assert code == 0 and _said(err, *names) == [
        f"rank 0: {rank0}: The file memory_record.csv does not exist. (comparison side)",
        f"rank 0: {rank0}: The file operator_memory.csv does not exist. (comparison side)"]
