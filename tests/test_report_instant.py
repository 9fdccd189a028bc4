"""One moment per run: a JSON report's ``generated_at`` is the instant its file name holds. The clock here moves a
minute at every read, so a second read shows as another minute: a rank's JSON said the minute it was written
while its name (and the job overview's) held the job's start. Inputs: msinsight's level-0 text export of two
ranks (rank0_ascend_pt, rank1_ascend_pt), compared with itself; the bundled BERT pair for a single compare."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re
import sys
from pathlib import Path

import pytest

from msprof_compare import cli

RANKS = "msinsight/test/data/pytorch/text/level0"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every module's ``utc_now`` a clock one minute later at each read."""
    import msprof_compare.report.deliver  # noqa: F401 - loaded, so that its bound name is patched too
    import msprof_compare.report.ranks_report  # noqa: F401

    start = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    reads = itertools.count()

    def utc_now() -> dt.datetime:
        return start + dt.timedelta(minutes=next(reads))

    for name, module in list(sys.modules.items()):
        if name.startswith("msprof_compare") and hasattr(module, "utc_now"):
            monkeypatch.setattr(module, "utc_now", utc_now)


def _stamp_and_generated_at(path: Path) -> tuple[str, str]:
    """The name's timestamp and the document's ``generated_at``, in the name's form."""
    stamp = re.search(r"_(\d{14})\.json$", path.name)[1]
    generated = json.loads(path.read_text(encoding="utf-8"))["generated_at"]
    return stamp, re.sub(r"\D", "", generated)


def test_a_rank_by_rank_job_states_one_moment(samples: Path, tmp_path: Path, ticking: None,
                                              capsys: pytest.CaptureFixture) -> None:
    ranks = str(samples / RANKS)
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", ranks, "-d", ranks, "-o", str(tmp_path), "--enable_profiling_compare",
                          "--output_format", "xlsx,json"])
    assert info.value.code == 0, capsys.readouterr().err
    found = sorted(tmp_path.glob("*.json"))
    assert [re.sub(r"_\d{14}\.json$", "", p.name) for p in found] == [
        "performance_comparison_result_rank0", "performance_comparison_result_rank1",
        "performance_comparison_result_ranks"]
    stated = {_stamp_and_generated_at(p) for p in found}
    assert len(stated) == 1 and len(set(stated.pop())) == 1  # one stamp, and each document says it
    # the workbooks carry the job's stamp too
    assert {re.search(r"_(\d{14})\.xlsx$", p.name)[1] for p in tmp_path.glob("*.xlsx")} == {
        _stamp_and_generated_at(found[0])[0]}


def test_a_single_compare_states_one_moment(tmp_path: Path, ticking: None, capsys: pytest.CaptureFixture) -> None:
    trace = str(REPO / "sample_data" / "bert-small_h100.json.gz")
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", trace, "-d", trace, "-o", str(tmp_path), "--enable_api_compare",
                          "--output_format", "xlsx,json"])
    assert info.value.code == 0, capsys.readouterr().err
    (found,) = tmp_path.glob("*.json")
    stamp, generated = _stamp_and_generated_at(found)
    assert stamp == generated
    assert [p.name for p in tmp_path.glob("*.xlsx")] == [found.name.replace(".json", ".xlsx")]
