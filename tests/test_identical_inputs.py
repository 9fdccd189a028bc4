"""Two inputs that hold one profile's events under other names (a copy of the base, its gzip copy, a copied NPU
export or DB) compared at zero without a word: only the same path was warned about. Each is now said once on the
console, and as the first check of the Summary sheet and of the JSON's ``summary.guards``, worded as what is known
(equal events, not equal bytes). A copy with one kernel's duration changed is two profiles: no word."""

from __future__ import annotations

import gzip
import json
import logging
import re
import shutil
from pathlib import Path

import openpyxl
import pytest

from msprof_compare.api import compare

DATA = Path(__file__).resolve().parent / "data"
TRACE = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"  # tests/data/kineto/README.md
NPU = DATA / "npu" / "rank0_ascend_pt"
DB = DATA / "db" / "l1"
COPIES = "Base and comparison hold the same events (copies of one profile?): every difference will be zero."
CHECK = "one profile on both sides"


def _said(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path) -> tuple[list[str], object]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(base), str(comparison), enable_profiling_compare=True)
    return [m for m in caplog.messages if "same" in m or "one profile" in m], res


def _first_check(res) -> tuple:
    guards = res.guards
    return tuple(guards.iloc[0][["Check", "Status", "Base", "Comparison", "Detail"]])


def test_copies_of_one_profile_are_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    copy = tmp_path / "copy.pt.trace.json"
    shutil.copyfile(TRACE, copy)
    packed = tmp_path / "packed.pt.trace.json.gz"
    packed.write_bytes(gzip.compress(TRACE.read_bytes()))
    shutil.copytree(NPU, tmp_path / "copy_ascend_pt")
    shutil.copytree(DB, tmp_path / "db")
    for base, comparison in ((TRACE, copy), (packed, TRACE), (NPU, tmp_path / "copy_ascend_pt"),
                             (DB, tmp_path / "db")):
        said, res = _said(caplog, base, comparison)
        assert said == [COPIES], (base, comparison)
        assert _first_check(res) == (CHECK, "note", None, None, COPIES.removesuffix("."))


def test_same_path_is_a_check_too(caplog: pytest.LogCaptureFixture) -> None:
    """The same path keeps its own words (it is known to be one input), now in the Summary and the JSON too."""
    said, res = _said(caplog, TRACE, TRACE)
    want = f"Base and comparison are the same input ({TRACE}): every difference will be zero."
    assert said == [want]
    assert _first_check(res) == (CHECK, "note", None, None, want.removesuffix("."))


def test_a_changed_copy_is_two_profiles(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Every table as long as the base's, one kernel's duration 1 us longer: the values are compared, not only
    the tables' lengths. No word, no row; two different runs neither."""
    doc = json.loads(TRACE.read_text())
    kernel = next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")
    kernel["dur"] += 1
    changed = tmp_path / "changed.pt.trace.json"
    changed.write_text(json.dumps(doc))
    for base, comparison in ((TRACE, changed), (DB, DB.parent / "l2")):
        said, res = _said(caplog, base, comparison)
        assert said == [] and CHECK not in res.guards["Check"].tolist(), (base, comparison)


def test_workbook_and_json_say_it(tmp_path: Path) -> None:
    """The console line, the Summary sheet's check row and the JSON's first guard hold one text."""
    copy = tmp_path / "copy.pt.trace.json"
    shutil.copyfile(TRACE, copy)
    res = compare(str(TRACE), str(copy), enable_profiling_compare=True)
    res.to_excel(str(tmp_path / "r.xlsx"))
    res.to_json(str(tmp_path / "r.json"))
    ws = openpyxl.load_workbook(tmp_path / "r.xlsx")["Summary"]
    rows = [r for r in ws.iter_rows(values_only=True) if r and r[0] == CHECK]
    assert [r[:5] for r in rows] == [(CHECK, "note", None, None, COPIES.removesuffix("."))]
    guards = json.loads((tmp_path / "r.json").read_text())["summary"]["guards"]
    assert guards[0] == {"Check": CHECK, "Status": "note", "Base": None, "Comparison": None,
                         "Detail": COPIES.removesuffix(".")}


def test_every_table_a_loader_fills_is_compared() -> None:
    """The check compares ``model.PROFILE_FRAMES``, read off ``Profile``'s fields: every frame a loaded profile
    holds (a Kineto trace's, an NPU text export's with its side files, a DB export's) is among them, so no table a
    loader fills can differ unseen, and none of them is anything but a frame or an absent side file."""
    import pandas as pd

    from msprof_compare.loaders import load_profile
    from msprof_compare.model import PROFILE_FRAMES
    from msprof_compare.options import build_options

    for path in (TRACE, NPU, DB):
        profile = load_profile(str(path), build_options()[0])
        held = {name for name, value in vars(profile).items() if isinstance(value, pd.DataFrame)}
        assert held <= set(PROFILE_FRAMES), (path, held - set(PROFILE_FRAMES))
        assert all(getattr(profile, name) is None or name in held for name in PROFILE_FRAMES), path
    assert {"ops", "kernels", "kernel_details", "operator_memory"} <= set(PROFILE_FRAMES)


REORDERED = ("Base and comparison hold the same events in another order (copies of one profile, written again?): "
             "every difference will be zero but where file order counts (ops that start together nest in it, Kernel "
             "Details cells list kernels in it).")


def _respelled(doc: object) -> str:
    """``doc`` written again: each event's keys in reverse order, every number with a fraction given one more digit
    (``1.5`` -> ``1.50``), one blank of indent; the loaders read it into the same tables."""
    def keys(x):
        if isinstance(x, dict):
            return {k: keys(x[k]) for k in reversed(list(x))}
        return [keys(v) for v in x] if isinstance(x, list) else x

    text = json.dumps(keys(doc), indent=1)
    return re.sub(r'(?<=: )(-?\d+\.\d+)(?=,?\n)', r"\g<1>0", text)


def test_a_copy_written_again_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A copy re-serialised (keys in another order, other blanks, ``1.50`` for ``1.5``) loads into equal tables:
    the same events. Its events in reverse order as well, every table holds the same rows elsewhere, which the
    check compared row by row (no word): the note says so and why a figure could still differ. The Kineto excerpt
    (h100_timesformer: 1,052 events) and the NPU fixture's trace_view.json (events reversed) and kernel_details.csv
    (rows reversed, header kept)."""
    doc = json.loads(TRACE.read_text())
    same = tmp_path / "respelled.pt.trace.json"
    same.write_text(_respelled(doc))
    assert same.read_text() != TRACE.read_text() and '0,\n' in same.read_text()
    doc["traceEvents"].reverse()
    moved = tmp_path / "reordered.pt.trace.json"
    moved.write_text(_respelled(doc))
    npu = tmp_path / "reordered_ascend_pt"
    shutil.copytree(NPU, npu)
    out = npu / "ASCEND_PROFILER_OUTPUT"
    events = json.loads((out / "trace_view.json").read_text())
    (out / "trace_view.json").write_text(_respelled(events[::-1]))
    head, *rows = (out / "kernel_details.csv").read_text().splitlines(keepends=True)
    (out / "kernel_details.csv").write_text("".join([head, *rows[::-1]]))
    for base, comparison, said in ((TRACE, same, COPIES), (TRACE, moved, REORDERED), (NPU, npu, REORDERED)):
        got, res = _said(caplog, base, comparison)
        assert got == [said], comparison
        assert _first_check(res) == (CHECK, "note", None, None, said.removesuffix("."))


def test_other_values_in_another_order_are_two_profiles(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The reversed copy with one kernel 1 us longer differs in a sum; with two kernels' durations swapped (the
    first two of different length), every sum is equal and the rows differ: no word for either."""
    doc = json.loads(TRACE.read_text())
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    longer = json.loads(json.dumps(doc))
    next(e for e in longer["traceEvents"] if e.get("cat") == "kernel")["dur"] += 1
    a, b = kernels[0], next(k for k in kernels if k["dur"] != kernels[0]["dur"])
    a["dur"], b["dur"] = b["dur"], a["dur"]
    for name, changed in (("longer", longer), ("swapped", doc)):
        changed["traceEvents"].reverse()
        path = tmp_path / f"{name}.pt.trace.json"
        path.write_text(json.dumps(changed))
        said, res = _said(caplog, TRACE, path)
        assert said == [] and CHECK not in res.guards["Check"].tolist(), name


def test_rows_tied_in_every_number_are_matched_by_their_text() -> None:
    """Two rows with every number equal and other names, in the other order on each side: the sort by the numbers
    keeps each side's order, so the rows are matched by a hash of each; other names are other rows."""
    import pandas as pd

    from msprof_compare.api import _same_rows

    b = pd.DataFrame({"name": ["aten::add", "aten::mul", "aten::mm"], "ts": [5, 5, 9], "dur": [2, 2, 1]})
    c = b.iloc[[1, 0, 2]].reset_index(drop=True)
    assert _same_rows(b, c) and _same_rows(b, b)
    assert not _same_rows(b, c.assign(name=["aten::add", "aten::add", "aten::mm"]))


def test_two_files_that_load_no_row_are_not_one_profile(samples: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Reference pair 9c: MindSpore 1.x's timeline_display_1.json (6,359 events) against run 2's
    ascend_timeline_display_1.json (112 events), two different files; neither has a process_name record, so each
    loads empty, and empty tables are equal. Two profiles of nothing to compare are not copies of one."""
    from refpairs import PAIRS

    base, comparison = (samples / p for p in PAIRS["9c-mindspore-legacy-timeline-display-files"])
    assert len(json.loads(base.read_text())) != len(json.loads(comparison.read_text()))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(base), str(comparison), enable_profiling_compare=True)
    assert not [m for m in caplog.messages if "same events" in m]


def test_two_ranks_of_one_job_are_told_apart_by_their_timestamps(samples: Path, monkeypatch) -> None:
    """Ranks 0 and 1 of msinsight's level-1 job (text and DB exports) hold tables of equal lengths, every one, so
    the length check let every rank-by-rank compare through to comparing whole tables (their names object by
    object). Their timestamps, compared first as integers, tell them apart: no table is compared whole."""
    import pandas as pd

    from msprof_compare.api import _same_events
    from msprof_compare.loaders import load_profile
    from msprof_compare.model import PROFILE_FRAMES
    from msprof_compare.options import build_options

    job = samples / "msinsight" / "test" / "data" / "pytorch"
    for kind in ("text", "db"):
        base, comparison = (load_profile(str(job / kind / "level1" / f"rank{r}_ascend_pt"), build_options()[0])
                            for r in (0, 1))
        shapes = [(getattr(base, n).shape, getattr(comparison, n).shape) for n in PROFILE_FRAMES
                  if getattr(base, n) is not None]
        assert all(b == c for b, c in shapes), kind  # what let them through to the whole tables

        def whole(*_args, **_kwargs):
            raise AssertionError("a table compared whole")

        with monkeypatch.context() as m:
            m.setattr(pd.DataFrame, "equals", whole)
            assert _same_events(base, comparison) == "", kind


def test_a_copy_with_another_communication_json_is_two_profiles(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """communication.json is no table (``Profile.communication``, the bandwidths the time breakdown reads): a copy
    of the NPU export whose first collective's HCCS transit size is edited, every table equal, is two profiles, so
    no word and no row (kills api_se_comm, which compared the tables alone)."""
    copy = tmp_path / "copy_ascend_pt"
    shutil.copytree(NPU, copy)
    comm = copy / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    doc = json.loads(comm.read_text())
    first = next(iter(doc["step50"]["collective"].values()))
    first["Communication Bandwidth Info"]["HCCS"]["Transit Size(MB)"] *= 2
    comm.write_text(json.dumps(doc))
    said, res = _said(caplog, NPU, copy)
    assert said == [] and CHECK not in res.guards["Check"].tolist()


def test_one_export_at_two_steps_is_no_copy(caplog: pytest.LogCaptureFixture) -> None:
    """One input compared step against step (--base_step 50 --comparison_step 51) compares two stretches of a run,
    not one profile with itself: no same-input warning, no check row (kills api_se_step, which warned whatever the
    steps). Input: tests/data/npu/two_steps_ascend_pt (its README), the two steps' markers ProfilerStep#50 and #51."""
    two = DATA / "npu" / "two_steps_ascend_pt"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(two), str(two), enable_profiling_compare=True, base_step=50, comparison_step=51)
    assert [m for m in caplog.messages if "same" in m or "one profile" in m] == []
    assert CHECK not in res.guards["Check"].tolist()


def test_a_base_without_a_side_file_the_comparison_has_is_two_profiles(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """A copy of the NPU export without memory_record.csv, as the base, against the export: the base has no such
    table where the comparison has one, so the pair is two profiles, whatever their other tables hold: no word,
    no row (kills api_se_none, which compared the tables both sides have and skipped one absent on the base)."""
    copy = tmp_path / "copy_ascend_pt"
    shutil.copytree(NPU, copy)
    (copy / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").unlink()
    said, res = _said(caplog, copy, NPU)
    assert said == [] and CHECK not in res.guards["Check"].tolist()


def test_copies_holding_nan_are_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """torch_npu writes its JSON side files with Python's json, NaN allowed: two copies of the NPU export whose
    communication.json holds ``"Wait Time Ratio": NaN`` (its first collective's) and whose profiler_metadata.json
    holds a user's NaN value are one profile, said so. (Python's json reader, which reads a file holding NaN, gives
    every NaN as one float object, so the dicts' identity shortcut held here before; ``_same_value`` no longer
    relies on it: ``test_values_read_beside_the_tables_compare_nan_alike``.) profiler_metadata.json is compared
    now, and a NaN in it must not lose the note."""
    copies = [tmp_path / name / "rank0_ascend_pt" for name in ("a", "b")]
    for copy in copies:
        shutil.copytree(NPU, copy)
        comm = copy / "ASCEND_PROFILER_OUTPUT" / "communication.json"
        doc = json.loads(comm.read_text())
        next(iter(doc["step50"]["collective"].values()))["Communication Time Info"]["Wait Time Ratio"] = float("nan")
        comm.write_text(json.dumps(doc))
        meta = copy / "profiler_metadata.json"
        doc = json.loads(meta.read_text())
        doc["user_ratio"] = float("nan")
        meta.write_text(json.dumps(doc))
        assert "NaN" in comm.read_text() and "NaN" in meta.read_text()
    said, res = _said(caplog, *copies)
    assert said == [COPIES]
    assert _first_check(res) == (CHECK, "note", None, None, COPIES.removesuffix("."))


def test_a_db_copy_with_other_pmu_figures_is_two_profiles(samples: Path, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """The level-1 DB export and a copy whose TASK_PMU_INFO gives one vector kernel (globalTaskId 3, a Conv forward
    kernel with aic_total_time 0 and aiv_total_time 49,912.99) an aic_total_time of 1000: every table is equal, the
    PMU figures (``Profile.extra``, not compared) are not, and that kernel counts as Cube, so Conv (Forward) (Cube)
    grows by one kernel and its duration (TASK's end - start, read here) while the note said every difference is
    zero. No word now."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from dbutil import edited_copy, sql

    src = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    db = src / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    ids = dict(sql(db, "SELECT value, id FROM STRING_IDS WHERE value IN ('aic_total_time', 'aiv_total_time')"))
    pmu = dict(sql(db, "SELECT name, value FROM TASK_PMU_INFO WHERE globalTaskId = 3"))
    assert pmu[ids["aic_total_time"]] == 0 and pmu[ids["aiv_total_time"]] > 0
    ((start, end),) = sql(db, "SELECT startNs, endNs FROM TASK WHERE globalTaskId = 3")
    copies = [tmp_path / name / "rank0_ascend_pt" for name in ("same", "cube")]
    for copy in copies:
        shutil.copytree(src, copy)
    edited_copy(db, copies[1] / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                f"UPDATE TASK_PMU_INFO SET value = 1000 WHERE globalTaskId = 3 AND name = {ids['aic_total_time']}")
    said, _ = _said(caplog, src, copies[0])
    assert said == [COPIES]
    said, res = _said(caplog, src, copies[1])
    assert said == [] and CHECK not in res.guards["Check"].tolist()
    sheet = res.sheet("OverallMetrics").set_index("Index")
    row = sheet.loc["\t\tConv (Forward) (Cube)"]
    assert int(row["Number.1"]) == int(row["Number"]) + 1
    assert round((row["Duration(ms).1"] - row["Duration(ms)"]) * 1e6) == end - start


def test_values_read_beside_the_tables_compare_nan_alike() -> None:
    """``_same_value``: two NaN floats (distinct objects, as a reader that makes one per literal gives) are alike,
    in a dict, list or table; another number, another key, another table are not; names in another order are
    alike only where the tables were found in another order (``any_order``)."""
    import numpy as np
    import pandas as pd

    from msprof_compare.api import _same_value

    nan_a, nan_b = float("nan"), float("nan")
    assert nan_a is not nan_b and nan_a != nan_b
    assert _same_value({"r": [nan_a, 1]}, {"r": [nan_b, 1]})
    assert not _same_value({"r": [nan_a, 1]}, {"r": [nan_b, 2]}) and not _same_value({"r": 1}, {"s": 1})
    frame = pd.DataFrame({"t": [1.5, np.nan], "n": ["a", "b"]})
    assert _same_value({"k": frame}, {"k": frame.copy()})
    assert not _same_value({"k": frame}, {"k": frame.assign(t=[1.5, 2.0])})
    assert _same_value(np.array([nan_a, 2.0]), np.array([nan_b, 2.0]))
    assert not _same_value(["x", "y"], ["y", "x"]) and _same_value(["x", "y"], ["y", "x"], any_order=True)
    assert _same_value(frame, frame.iloc[::-1].reset_index(drop=True), any_order=True)
    assert not _same_value(frame, frame.iloc[::-1].reset_index(drop=True))
    assert not _same_value(1, 1.0)  # another type: two values (a copy reads the same types)
