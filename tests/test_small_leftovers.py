"""Session 69's small leftovers (session 70): the zero Wait Time note given a step, ... Each figure here is read
from the raw files, not from the code's output."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

from test_injected_regressions import _text_steps_split

from msprof_compare import compare

LEVEL1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def _wait_note(side: str, ms: str, step: int) -> str:
    shown = "0.000s" if side == "Comparison" else "' / ' (0 s)"
    return (f"{side} row: its Wait Time {shown} is that of the HCCL plane that waits least in each communication "
            "group, as the original measures a text export, here a plane with no Notify_Wait; its planes hold "
            f"{ms} ms of Notify_Wait over the whole profile, which its Wait Time covers too (CommunicationCompare's "
            f"Notify_Wait rows hold step {step}'s alone).")


def test_zero_wait_time_note_given_a_step_says_its_figure_is_the_whole_profiles(samples: Path,
                                                                                  tmp_path: Path) -> None:
    """The level-1 export's one step cut in two at the optimizer's zero_grad (as a run of two steps writes it):
    its 112 Notify_Wait tasks (112.541 ms, summed here from the raw trace) all lie in step 51, after the cut.
    Given step 50, the text export's Wait Time still covers the whole profile (reference-1 §1.4), so the note
    keeps that figure, but CommunicationCompare has no row at all (the step holds no communication op): the note
    named "CommunicationCompare's Notify_Wait rows" as where its 112.541 ms were; it now says the figure is the
    whole profile's and the sheet's rows the step's."""
    export = tmp_path / "split" / "rank0_ascend_pt"
    shutil.copytree(samples / LEVEL1, export)
    cut = _text_steps_split(export)
    raw = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    waits = [e for e in raw if e.get("ph") == "X" and e.get("name") == "Notify_Wait"]
    assert len(waits) == 112 and all(Decimal(str(e["ts"])) > cut for e in waits)
    total = f"{sum(Decimal(str(e['dur'])) for e in waits) / 1000:,.3f}"
    assert total == "112.541"
    res = compare(str(export), str(export), base_step=50, comparison_step=50, enable_profiling_compare=True,
                  enable_communication_compare=True)
    assert "CommunicationCompare" not in res.sheet_names
    said = [n for n in res.summary["notes"] if "its Wait Time" in n]
    assert said == [_wait_note(side, total, 50) for side in ("Base", "Comparison")]
    # step 51 holds them all: the sheet's rows give the same figure, and the note names that step
    res = compare(str(export), str(export), base_step=51, comparison_step=51, enable_profiling_compare=True,
                  enable_communication_compare=True)
    sheet = res.sheet("CommunicationCompare")
    rows = sheet[sheet["Task Name"].astype(str).str.strip() == "Notify_Wait"]
    assert f"{rows['Total Duration(us)'].sum() / 1000:,.3f}" == total
    assert [n for n in res.summary["notes"] if "its Wait Time" in n] == [_wait_note(side, total, 51)
                                                                         for side in ("Base", "Comparison")]
