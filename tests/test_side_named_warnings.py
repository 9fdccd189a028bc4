"""The comparators' warnings about one side's data, and rank discovery's line of a trace whose name says another
rank, end with their side (session 70, left70a), as the loaders' notes do since session 69: "(base side)",
"(comparison side)", or "(both sides)" for one input on both, said once. They named the file alone, so two
inputs whose paths differ by a digit (rank 0 against rank 1 of one job) gave lines that did not say which of -bp /
-d they were about. Pinned whole, on real samples edited in one cell."""

from __future__ import annotations

import logging
import shutil

from cliutil import run_inproc
from test_ranks import misnamed_ranks

from msprof_compare import api
from msprof_compare.options import CLI_FACE

LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank{}_ascend_pt"
HTA_RANKS = "hta/tests/data/trace_filter"


def _said(err: str, words: str) -> list[str]:
    """The log lines of ``err`` (after ``[time][LEVEL] ``) holding ``words``."""
    return [line.split("] ", 1)[1] for line in err.splitlines() if words in line and "] " in line]


def test_a_kernel_without_duration_names_its_side(capsys, samples, tmp_path):
    """Ranks 0 and 1 of the msinsight level1 text job, row 1 of the comparison's kernel_details.csv (a TransData,
    a valid Type; no quote before that field) given "abc" for its Duration(us): KernelCompare's line counts 1
    kernel without a duration, said with "(comparison side)"; the same folder on both sides, once, "(both
    sides)"; the sides swapped, "(base side)"."""
    base, comp = tmp_path / "b" / "rank0_ascend_pt", tmp_path / "c" / "rank1_ascend_pt"
    shutil.copytree(samples / LEVEL1.format(0), base)
    shutil.copytree(samples / LEVEL1.format(1), comp)
    kd = comp / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = kd.read_bytes().split(b"\n")
    cells = lines[1].split(b",")
    assert lines[0].split(b",")[9] == b"Duration(us)" and cells[5] == b"TransData" and b'"' not in b",".join(cells[:10])
    cells[9] = b"abc"
    lines[1] = b",".join(cells)
    kd.write_bytes(b"\n".join(lines))
    line = (f"{comp}: 1 kernel(s) of a valid Type have no Duration(us) in kernel_details.csv; KernelCompare counts "
            "each as a call of 0 us.")
    for (b, c), side in (((base, comp), "comparison side"), ((comp, comp), "both sides"),
                         ((comp, base), "base side")):
        code, _, err = run_inproc(capsys, "-bp", str(b), "-d", str(c), "-o", str(tmp_path / side[:4]))
        assert code == 0 and _said(err, "have no Duration(us)") == [f"{line} ({side})"], err


def test_a_trace_named_for_another_rank_names_its_side(samples, tmp_path, caplog):
    """hta's two-rank job against a copy whose rank 0 trace is named sampled_rank-7 and rank 1's sampled_rank-0
    (the names lie): the discovery's line ends with the side of the folder it is about; one folder on both sides
    says it once, "(both sides)"."""
    job = samples / HTA_RANKS
    odd = tmp_path / "odd"
    line = misnamed_ranks(odd)
    for (b, c), side in (((job, odd), "comparison side"), ((odd, job), "base side"), ((odd, odd), "both sides")):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            pairs, _ = api.rank_pairs(str(b), str(c), {}, CLI_FACE)
        assert list(pairs) == [0, 1]
        assert [m for m in caplog.messages if "another rank" in m] == [f"{line} ({side})"]
