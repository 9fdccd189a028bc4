"""Step ranges: ProfilerStep lookup, the GPU refusal and the unknown-step error."""

from __future__ import annotations

import json
import logging
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from dbutil import edited_copy, sql

from msprof_compare.api import RunContext, compare
from msprof_compare.compare import steps, table
from msprof_compare.errors import StepError, UsageError
from msprof_compare.loaders import load_profile
from msprof_compare.model import Profile, frame, marker_step, step_number
from msprof_compare.options import Options, build_options

TWO_STEPS = Path(__file__).parent / "data" / "npu" / "two_steps_ascend_pt"


def npu(names_ts_dur) -> Profile:
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    p.ops = frame("ops", {"name": [n for n, _, _ in names_ts_dur], "cat": ["cpu_op"] * len(names_ts_dur),
                          "ts": [t for _, t, _ in names_ts_dur], "dur": [d for _, _, d in names_ts_dur]})
    return p


def test_step_range_found():
    p = npu([("ProfilerStep#4", 0, 100), ("aten::add", 5, 1), ("ProfilerStep#5", 200, 50)])
    assert steps.step_range(p, 5) == (200, 250)
    assert steps.step_range(p, 4) == (0, 100)
    assert steps.step_range(p, -1) is None


def test_repeated_step_id_uses_the_first_marker():
    """reference-1 §3.5: of several ProfilerStep# markers with the requested id, the first one gives the range."""
    p = npu([("ProfilerStep#5", 0, 100), ("ProfilerStep#6", 150, 10), ("ProfilerStep#5", 200, 50)])
    assert steps.step_range(p, 5) == (0, 100)


def test_unknown_step_lists_valid_ids():
    p = npu([("ProfilerStep#4", 0, 100), ("ProfilerStep#5", 200, 50), ("ProfilerStep#x", 300, 1)])
    with pytest.raises(StepError) as info:
        steps.step_range(p, 7)
    assert str(info.value) == f"{p.path}: Invalid step id: 7, please choose from the valid steps: 4, 5, x"
    assert info.value.exit_code == 2


def test_step_ids_beyond_int64_are_compared_exactly():
    big = 99999999999999999999999  # a float would round it (and its neighbour) to the same value
    p = npu([(f"ProfilerStep#{big}", 0, 100), (f"ProfilerStep#{big - 1}", 200, 50)])
    assert steps.step_range(p, big) == (0, 100)
    assert steps.step_range(p, big - 1) == (200, 250)


def test_step_number_of_more_than_4300_digits_is_no_number():
    """Python refuses int() of over 4300 digits: such a marker is no step (it was an internal error)."""
    assert step_number("5" * 4300) == int("5" * 4300)
    assert step_number("5" * 4301) == -1
    assert step_number(" +7 ") == 7 and step_number("7a") == -1


def test_a_marker_step_is_the_number_after_its_last_hash():
    """reference-1 §3.5 reads the text after the marker's last '#': a range named "ProfilerStep#train#50" (a user's
    record_function holding the marker's words) is step 50 for every reader (``model.marker_step``), and one whose
    last part is no number is none, whatever comes before it (mut65b's survivor M6: the first '#' read "train#50")."""
    assert marker_step("ProfilerStep#train#50") == 50
    assert marker_step("ProfilerStep#50#x") == -1
    assert marker_step("ProfilerStep#") == -1 and marker_step("ProfilerStep#050") == 50


def test_non_integer_step_markers_are_logged_as_the_original_does(caplog):
    """reference-1 §3.5: a marker whose id is no integer logs "Can not convert x to int" at ERROR while
    the markers are scanned for the requested step (up to the match) and counts as no step."""
    p = npu([("ProfilerStep#x", 0, 10), ("ProfilerStep#5", 20, 10), ("ProfilerStep#y", 40, 10)])
    with caplog.at_level(logging.ERROR, logger="msprof-analyze"):
        assert steps.step_range(p, 5) == (20, 30)
    assert [r.getMessage() for r in caplog.records] == ["Can not convert x to int"]


def test_non_integer_step_marker_line_names_its_side(tmp_path: Path, caplog) -> None:
    """The original's "Can not convert x to int" keeps its words and ends with its side, as its other notices do
    since session 71 (docs/differences.md): two ranks of one job, or a marker edited on one side alone, gave a
    line that did not say which input holds the marker. tests/data/npu/two_steps_ascend_pt (ProfilerStep#50 and
    #51) on both sides, the comparison's ProfilerStep#50 renamed ProfilerStep#x: step 51 is found on each side,
    and only the comparison's scan passes the renamed marker; the edited folder on both sides says it once, as
    its other lines of one input on both."""
    base, comp = tmp_path / "base_ascend_pt", tmp_path / "comp_ascend_pt"
    shutil.copytree(TWO_STEPS, base)
    shutil.copytree(TWO_STEPS, comp)
    trace = comp / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = trace.read_text()
    assert text.count('"ProfilerStep#50"') == 1
    trace.write_text(text.replace('"ProfilerStep#50"', '"ProfilerStep#x"'))
    with caplog.at_level(logging.ERROR, logger="msprof-analyze"):
        compare(str(base), str(comp), base_step=51, comparison_step=51, enable_profiling_compare=True)
    assert [r.getMessage() for r in caplog.records if "convert" in r.getMessage()] == \
        ["Can not convert x to int (comparison side)"]
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="msprof-analyze"):
        compare(str(comp), str(comp), base_step=51, comparison_step=51, enable_profiling_compare=True)
    assert [r.getMessage() for r in caplog.records if "convert" in r.getMessage()] == \
        ["Can not convert x to int (both sides)"]


def test_step_without_any_profiler_step_says_so():
    p = npu([("aten::add", 0, 10)])
    with pytest.raises(StepError, match=r"^npu: Invalid step id: 3: the profile has no ProfilerStep# markers"):
        steps.step_range(p, 3)


def test_gpu_step_refused():
    g = Profile(path="g.json", kind="GPU", source="kineto")
    with pytest.raises(UsageError, match="step id is invalid in GPU data, please use this when comparing "
                                         "between NPU datas."):
        steps.step_range(g, 1)
    assert steps.step_range(g, -1) is None


def test_side_range_cached_per_side():
    p = npu([("ProfilerStep#4", 0, 100), ("ProfilerStep#5", 200, 50)])
    opts, _ = build_options(base_step="4", comparison_step="5")
    ctx = RunContext(p, p, opts)
    assert steps.side_range(ctx, "base") == (0, 100)
    assert steps.side_range(ctx, "comparison") == (200, 250)
    assert ctx.cache["steps.range.base"] == (0, 100)
    steps.check_steps(ctx)


def test_in_range_inclusive():
    assert steps.in_range([0, 10, 20, 21], (10, 20)).tolist() == [False, True, True, False]
    assert steps.in_range([1, 2], None).tolist() == [True, True]


def test_frame_from_rows_keeps_none():
    f = table.frame_from_rows([[1, None, 2.5], [2, 3, 1.0]], 3)
    assert f[1].tolist() == [None, 3]
    assert f[0].dtype.kind == "i" and f[2].dtype.kind == "f"
    assert len(table.frame_from_rows([], 4).columns) == 4


def test_options_default_no_step():
    assert Options().base_step == -1


# ------------------------------------------------------------------ whole runs (real samples)

TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
DB_L1 = Path(__file__).resolve().parent / "data" / "db" / "l1" / "ascend_pytorch_profiler_0.db"
SAMPLE_GPU = Path(__file__).resolve().parents[1] / "sample_data" / "bert-small_h100.json.gz"
STEP_CHECKED_BY = ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
                   "enable_api_compare", "enable_communication_compare")


@pytest.mark.parametrize("flag", STEP_CHECKED_BY)
def test_unknown_text_step_refused_whichever_comparison_is_on(flag: str, samples: Path) -> None:
    """The original validates the step while reading communication data, i.e. for every comparison
    but kernel compare; the error names the file the side's steps were read from. Before, a profiling-only run
    ignored it."""
    base, comp = (str(samples / TEXT.format(n)) for n in (1, 2))
    with pytest.raises(StepError, match=r"level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view\.json: Invalid step "
                                        r"id: 7, please choose from the valid steps: 50 \(comparison side\)$"):
        compare(base, comp, base_step="50", comparison_step="7", **{flag: True})


@pytest.mark.parametrize("flag", [*STEP_CHECKED_BY, "enable_kernel_compare"])
def test_gpu_step_refused_whichever_comparison_is_on(flag: str) -> None:
    with pytest.raises(UsageError, match="step id is invalid in GPU data"):
        compare(str(SAMPLE_GPU), str(SAMPLE_GPU), base_step="1", comparison_step="1", **{flag: True})


def test_step_on_bare_trace_views_compares_without_kernel_sheet(samples: Path) -> None:
    """A bare trace_view.json has no kernel_details.csv, which the original does not read at that level:
    a valid step compares the rest, not "There is no kernel details information for step 50"."""
    base, comp = (str(samples / TEXT.format(n) / "ASCEND_PROFILER_OUTPUT" / "trace_view.json") for n in (1, 2))
    res = compare(base, comp, base_step="50", comparison_step="50")
    names = res.sheet_names
    assert "KernelCompare" not in names and {"OverallMetrics", "ApiCompare"} <= set(names)
    with pytest.raises(StepError, match="trace_view.json: Invalid step id: 7"):
        compare(base, comp, base_step="50", comparison_step="7")


def test_step_errors_name_the_file_the_steps_were_read_from(samples: Path, tmp_path: Path) -> None:
    """A step the data does not hold is refused, naming the file its steps were read from for either kind of
    NPU export: the DB's ``.db`` (STEP_TIME) as before, and now a text export's trace_view.json (its
    ProfilerStep# markers), which named the folder given instead. One line ``error: <file>: <problem>``, exit 2
    (a usage error: the step option), through the CLI. The valid steps are 50 in both (the markers' and
    STEP_TIME's, read from the raw files)."""
    from test_bad_corpus import run_cli

    text = samples / TEXT.format(1)
    trace = text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    marks = {e["name"] for e in json.loads(trace.read_text()) if str(e.get("name", "")).startswith("ProfilerStep#")}
    assert marks == {"ProfilerStep#50"}
    db_dir = samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
    db = db_dir / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    assert [r[0] for r in sql(db, "SELECT id FROM STEP_TIME")] == [50]
    for given, file in ((text, trace), (db_dir, db)):
        code, _, err = run_cli(["-bp", str(given), "-d", str(given), "--base_step", "50", "--comparison_step", "7",
                                "-o", str(tmp_path)])
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 2 and len(lines) == 1, err
        assert lines[0].startswith(f"error: {file}: Invalid ") and "please choose from the valid steps: 50" in lines[0]


def test_step_without_ops_names_the_file_the_ops_were_read_from(samples: Path, tmp_path: Path) -> None:
    """A step that exists but holds no op ("There is no operator event data for step N") names the file the ops
    were read from, as the step errors above do: a text export's trace_view.json, a DB export's .db, where it
    named the folder given. Copies of level 1 with a step 51 after every op: a ProfilerStep#51 marker past the
    trace's last event end (read from the raw JSON), a STEP_TIME row past PYTORCH_API's last start."""
    import sqlite3

    from test_bad_corpus import run_cli

    text = tmp_path / "t_ascend_pt"
    shutil.copytree(samples / TEXT.format(1), text)
    trace = text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
    (mark,) = [e for e in events if e.get("name") == "ProfilerStep#50"]
    end = max(Decimal(str(e["ts"])) + Decimal(str(e.get("dur", 0))) for e in events if "ts" in e)
    events.append({**mark, "name": "ProfilerStep#51", "ts": str(end + 1000), "dur": 500})
    trace.write_text(json.dumps(events))
    db_dir = tmp_path / "d_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt", db_dir)
    db = db_dir / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    con = sqlite3.connect(db)
    last = int(con.execute("SELECT max(CAST(startNs AS INTEGER)) FROM PYTORCH_API").fetchone()[0])
    con.execute("INSERT INTO STEP_TIME VALUES (51, ?, ?)", (last + 1_000, last + 9_000_000))
    con.commit()
    con.close()
    for given, file in ((text, trace), (db_dir, db)):
        code, _, err = run_cli(["-bp", str(given), "-d", str(given), "--base_step", "50", "--comparison_step", "51",
                                "--enable_api_compare", "-o", str(tmp_path / "out")])
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 2 and len(lines) == 1, err
        assert lines[0].startswith(f"error: {file}: There is no operator event data for step 51"), lines[0]
    assert not (tmp_path / "out").exists()


def test_step_needs_ascii_digits() -> None:
    with pytest.raises(UsageError, match="must be a number"):
        build_options(base_step="²", comparison_step="1")



def _loads_seen(monkeypatch) -> list:
    """The paths the API loads from now on (``load_profile`` still does the work)."""
    import msprof_compare.api as api_module

    loaded: list = []
    real = api_module.load_profile
    monkeypatch.setattr(api_module, "load_profile", lambda path, *a, **k: loaded.append(path) or real(path, *a, **k))
    return loaded


def test_gpu_step_refused_before_loading(monkeypatch, tmp_path: Path) -> None:
    """A Kineto input with a step is refused from its first bytes: loading two 170 MB traces only to say
    the options are wrong took 4 s (30 s on 500 MB traces). A base the loader refuses still comes first."""
    from msprof_compare.errors import ProfileError

    loaded = _loads_seen(monkeypatch)
    with pytest.raises(UsageError, match="step id is invalid in GPU data"):
        compare(str(SAMPLE_GPU), str(SAMPLE_GPU), base_step="1", comparison_step="1")
    assert loaded == []
    missing = str(tmp_path / "missing.json")
    with pytest.raises(ProfileError, match="missing.json: no such file or directory"):
        compare(missing, str(SAMPLE_GPU), base_step="1", comparison_step="1")


def test_gpu_step_refused_before_loading_whichever_side_is_kineto(monkeypatch, tmp_path: Path) -> None:
    """An NPU base (tests/data/npu) with a Kineto comparison and a step: the comparison's first bytes refuse it,
    before either side is loaded. An NPU directory whose trace_view.json is no event list (a JSON object, as a
    Kineto trace is) is no Kineto file: the loader's own error comes, not the GPU step refusal."""
    import json
    import shutil

    from msprof_compare.errors import ProfileError

    npu = Path(__file__).resolve().parent / "data" / "npu" / "rank0_ascend_pt"
    loaded = _loads_seen(monkeypatch)
    with pytest.raises(UsageError, match="step id is invalid in GPU data"):
        compare(str(npu), str(SAMPLE_GPU), base_step="1", comparison_step="1")
    assert loaded == []
    odd = tmp_path / "rank0_ascend_pt"
    shutil.copytree(npu, odd)
    trace = odd / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.write_text(json.dumps({"traceEvents": json.loads(trace.read_text())}))
    with pytest.raises(ProfileError, match="not an Ascend trace_view.json \\(top level is an object"):
        compare(str(odd), str(odd), base_step="1", comparison_step="1")


def test_summary_and_gate_say_a_text_export_ignores_the_step(samples: Path) -> None:
    """On text exports the time breakdown covers the whole profile with a step too (reference-1 §1.4, as the
    original's OverallMetrics); the Summary, which is built from it, and the CI gate say so; a DB export
    limits it to the step, and the check says that as well."""
    from msprof_compare.compare import checks

    base, comp = (str(samples / TEXT.format(n)) for n in (1, 2))
    res = compare(base, comp, base_step="50", comparison_step="50", enable_profiling_compare=True)
    g = res.frames["guards"].set_index("Check")
    row = g.loc[checks.STEP_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("note", "whole profile", "whole profile")
    # the gate named bare: the result's caller wrote fail_on_regression=, a CLI user --fail_on_regression
    assert row["Detail"].startswith("OverallMetrics and the waterfall of a text export cover the whole profile")
    # the gate named bare where one is asked: the result's caller wrote fail_on_regression=, a CLI user
    # --fail_on_regression (the log line names the flag: test_user_walk_wording.py)
    gated = compare(base, comp, base_step="50", comparison_step="50", enable_profiling_compare=True,
                    fail_on_regression=1000).guards.set_index("Check").loc[checks.STEP_CHECK, "Detail"]
    assert gated.startswith("OverallMetrics, the waterfall and the fail_on_regression gate of a text export cover "
                            "the whole profile") and "--" not in gated
    plain = compare(base, comp, enable_profiling_compare=True)
    assert checks.STEP_CHECK not in set(plain.frames["guards"]["Check"])
    assert res.frames["e2e"].equals(plain.frames["e2e"])  # the figures are those of the run without a step
    _code, message = res.regression_gate(1000)
    assert message.startswith("No regression: E2E time (whole profile on both sides: a text export's E2E ignores "
                              "the step)")
    assert "whole profile" not in plain.regression_gate(1000)[1]
    db = "msinsight/test/data/pytorch/db/level{}/rank0_ascend_pt"
    dres = compare(str(samples / db.format(1)), str(samples / db.format(2)), base_step="50", comparison_step="50",
                   enable_profiling_compare=True)
    row = dres.frames["guards"].set_index("Check").loc[checks.STEP_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("ok", "step 50", "step 50")
    assert "whole profile" not in dres.regression_gate(1000)[1]
    mixed = compare(str(samples / db.format(1)), comp, base_step="50", comparison_step="50",
                    enable_profiling_compare=True)
    row = mixed.frames["guards"].set_index("Check").loc[checks.STEP_CHECK]
    assert (row["Status"], row["Base"], row["Comparison"]) == ("note", "step 50", "whole profile")
    assert "E2E time (whole profile on the comparison side: a text" in mixed.regression_gate(1000)[1]
    kernels_only = compare(base, comp, base_step="50", comparison_step="50", enable_kernel_compare=True)
    assert checks.STEP_CHECK not in set(kernels_only.frames["guards"]["Check"])  # no breakdown, nothing to say


def _mindspore_25(src: Path, dst: Path, level: str = "Level1") -> Path:
    """A copy of a torch_npu text export laid out as MindSpore 2.5+ writes it: its framework ops (and the
    ProfilerStep# markers among them) with category "", so no torch op (their process lane is left as it was);
    the profiler_info of MindSpore's ProfilerParameters (profiler_parameters: profiler_level, aic_metrics)."""
    shutil.copytree(src, dst)
    tv = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    for e in events:
        if e.get("cat") == "cpu_op":
            e["cat"] = ""
    tv.write_text(json.dumps(events))
    for info in dst.glob("profiler_info*.json"):
        info.write_text(json.dumps({"profiler_parameters": {"profiler_level": level, "aic_metrics": "PipeUtilization"},
                                    "ms_version": "2.5.0"}))
    return dst


def test_mindspore_25_step_markers_outside_torch_ops(samples: Path, tmp_path: Path, caplog) -> None:
    """reference-1 §3.5: with no torch op collected, the step is looked for among all events. MindSpore 2.5+
    writes ProfilerStep# with category "", so a step run of two such exports failed with "the profile has no
    ProfilerStep# markers" (exit 2). The step's range is the marker's, read from the raw file; the sheets
    that need no torch op equal those of the same data as torch_npu wrote it."""
    dirs = [_mindspore_25(samples / TEXT.format(n), tmp_path / f"host{n}_1_2025030112000000{n}_ascend_ms")
            for n in (1, 2)]
    raw = json.loads((samples / TEXT.format(1) / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
    mark = [e for e in raw if e.get("ph") == "X" and "ProfilerStep#" in str(e.get("name"))]
    assert [(e["name"], e["cat"]) for e in mark] == [("ProfilerStep#50", "cpu_op")]
    lo = int(Decimal(mark[0]["ts"]) * 1000)
    hi = lo + int(Decimal(str(mark[0]["dur"])) * 1000)
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(*map(str, dirs), base_step="50", comparison_step="50")
        opts = Options(base_step=50, comparison_step=50)
        ctx = RunContext(*(load_profile(str(d), opts) for d in dirs), opts)
    assert not len(ctx.base.ops) and steps.side_range(ctx, "base") == (lo, hi)
    assert "Can't find any torch op in the file: " + str(dirs[0]) in caplog.text
    assert "There is no operator" not in caplog.text  # no operator to find in the step: not a wrong step
    torch = compare(*(str(samples / TEXT.format(n)) for n in (1, 2)), base_step="50", comparison_step="50")
    for name in ("KernelCompare", "CommunicationCompare"):
        assert res.sheet(name).equals(torch.sheet(name)), name
    # OverallMetrics: the same E2E time; its categories differ (no torch op tells forward from backward)
    e2e = [s.sheet("OverallMetrics").set_index("Index").loc["E2E Time"].tolist() for s in (res, torch)]
    assert e2e[0] == e2e[1]
    assert "ApiCompare" not in res.sheet_names and "ApiCompare" in torch.sheet_names
    with pytest.raises(StepError, match=r"ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view\.json: Invalid step id: 7, "
                                        r"please choose from the valid steps: 50 \(comparison side\)$"):
        compare(*map(str, dirs), base_step="50", comparison_step="7")
    # without a step nothing extra is read: the markers stay out of the tables
    assert "step_marks" not in load_profile(str(dirs[0]), Options()).extra


def test_mindspore_25_step_count_reads_the_markers_outside_torch_ops(samples: Path, tmp_path: Path) -> None:
    """The step count check read the torch ops alone: of two MindSpore 2.5 layout copies (no torch op, the markers
    with category "") it read "blank: neither side has a ProfilerStep#N op" beside step 50, which the step options
    find. It counts the markers the loader read for a step asked (the distinct ids of the raw trace's
    ProfilerStep# events, by hand: 1 a side) and, without one, their names alone (left66a: the blank said they were
    read only with a step, since a pandas test of every unread name took 12% of such a default load)."""
    dirs = [_mindspore_25(samples / TEXT.format(n), tmp_path / f"host{n}_1_2025030112000000{n}_ascend_ms")
            for n in (1, 2)]
    ids = [{e["name"].rsplit("#", 1)[1] for e in json.loads((d / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
            if "ProfilerStep#" in str(e.get("name")) and e.get("ph") == "X"} for d in dirs]
    assert ids == [{"50"}, {"50"}]
    ok = ("ok", len(ids[0]), len(ids[1]), "distinct ProfilerStep#N ids in the trace")
    for kw in ({"base_step": "50", "comparison_step": "50"}, {"enable_profiling_compare": True}, {}):
        row = compare(*map(str, dirs), **kw).guards.set_index("Check").loc["step count"]
        assert (row["Status"], row["Base"], row["Comparison"], row["Detail"]) == ok, kw
    # beside a torch_npu export of the same data: its own markers are its torch ops
    row = compare(str(dirs[0]), str(samples / TEXT.format(2)), enable_profiling_compare=True
                  ).guards.set_index("Check").loc["step count"]
    assert (row["Status"], row["Base"], row["Comparison"], row["Detail"]) == ok
    assert load_profile(str(dirs[0]), Options()).extra["other_step_marks"] == {"ProfilerStep#50"}
    assert "other_step_marks" not in load_profile(str(samples / TEXT.format(1)), Options()).extra


def test_mindspore_25_step_count_without_a_step_counts_as_a_step_run(samples: Path, tmp_path: Path) -> None:
    """Without a step the markers of a trace without torch ops are counted as a step run's scan reads them: events
    of any phase but metadata and flows (an instant marker too), of any lane (a device task so named, read for its
    own table, too), ids as --base_step reads them. The level-1 MindSpore 2.5 layout copy with an instant
    ProfilerStep#51, a ProfilerStep#050 op, an Ascend Hardware task renamed ProfilerStep#52, a flow start named
    ProfilerStep#53, an async_npu flow end (read with the profiling comparison) ProfilerStep#55, a metadata event
    named ProfilerStep#54 and a ProfilerStep#x op added: by hand from the raw events, ids {50, 51, 52} (#050 is 50,
    the flows and the metadata no marker, #x no id), 3 with and without a step; the id-less one named alike."""
    d = _mindspore_25(samples / TEXT.format(1), tmp_path / "x_1_20250301120000001_ascend_ms")
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    (mark,) = [e for e in events if "ProfilerStep#" in str(e.get("name"))]
    hw = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
          and e["args"]["name"] == "Ascend Hardware"}
    task = next(e for e in events if e.get("ph") == "X" and e["pid"] in hw)
    task["name"] = "ProfilerStep#52"
    flow = next(e for e in events if e.get("ph") == "s" and e.get("cat") == "HostToDevice")
    flow["name"] = "ProfilerStep#53"
    read = next(e for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu")  # a flow the loader reads
    read["name"] = "ProfilerStep#55"
    events += [{"ph": "i", "cat": "", "name": "ProfilerStep#51", "pid": mark["pid"], "tid": mark["tid"],
                "ts": mark["ts"], "s": "t"},
               dict(mark, name="ProfilerStep#050"), dict(mark, name="ProfilerStep#x"),
               {"ph": "M", "name": "ProfilerStep#54", "pid": mark["pid"], "tid": mark["tid"], "args": {"name": "x"}}]
    tv.write_text(json.dumps(events))
    raw = {e["name"].rsplit("#", 1)[1] for e in events
           if "ProfilerStep#" in str(e.get("name")) and e.get("ph") not in ("M", "s", "f", "t")}
    assert raw == {"50", "51", "52", "050", "x"}
    want = len({int(i) for i in raw if i.isdigit()})
    assert want == 3
    clean = _mindspore_25(samples / TEXT.format(2), tmp_path / "y_1_20250301120000002_ascend_ms")
    for kw in ({"base_step": "50", "comparison_step": "50"}, {"enable_profiling_compare": True}):
        row = compare(str(d), str(clean), **kw).guards.set_index("Check").loc["step count"]
        assert (row["Base"], row["Comparison"], row["Detail"]) == (
            want, 1, "distinct ProfilerStep#N ids in the trace; not counted, no step id after '#': base side "
            "'ProfilerStep#x'"), kw
    assert load_profile(str(d), Options()).extra["other_step_marks"] == {
        "ProfilerStep#50", "ProfilerStep#51", "ProfilerStep#52", "ProfilerStep#050", "ProfilerStep#x"}


def test_a_trace_without_torch_ops_or_markers_reads_a_plain_blank_step_count() -> None:
    """The MindSpore-layout fixture (tests/data/npu/profiler: no torch op, and no event named ProfilerStep#, read
    from the raw file) had its blank step count followed by "markers among other events ... are read only where a
    step is asked for"; its events are now looked at without a step too, so the blank says no more than that of the
    markers, then what its kernel_details.csv's Step ID column holds (step 50 on every row, read from the file), which
    the step options do not read (left69c)."""
    d = Path(__file__).resolve().parent / "data" / "npu" / "profiler" / "rank-0_20250101000000000_ascend_ms"
    raw = json.loads((d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    assert not [e for e in raw if e.get("cat") == "cpu_op" or "ProfilerStep#" in str(e.get("name"))]
    assert load_profile(str(d), Options()).extra["other_step_marks"] == set()
    row = compare(str(d), str(d), enable_profiling_compare=True).guards.set_index("Check").loc["step count"]
    head, *rows = (d / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_text().splitlines()
    assert head.startswith("Step ID,") and {r.split(",", 1)[0] for r in rows} == {"50"}
    assert (row["Status"], row["Base"], row["Comparison"], row["Detail"]) == (
        "unknown", None, None, "distinct ProfilerStep#N ids in the trace; blank: neither side has a ProfilerStep#N op; "
        "both sides' kernel_details.csv number kernels by step (50), but a step's range is that of its ProfilerStep# "
        "marker, so --base_step / --comparison_step do not apply to them")


def test_mindspore_profiler_settings(samples: Path, tmp_path: Path, caplog) -> None:
    """MindSpore's profiler_info (profiler_parameters) feeds the settings note as torch_npu's does; its metric
    names are CANN's under another spelling ("PipeUtilization" = ACL_AICORE_PIPE_UTILIZATION), so a
    MindSpore run and a torch_npu run with the same settings do not differ."""
    from msprof_compare.loaders.ascend_text import profiler_settings

    assert profiler_settings({"profiler_parameters": {"profiler_level": "Level1", "aic_metrics": "None"}}) == {
        "profiler_level": "Level1", "aic_metrics": "ACL_AICORE_NONE"}
    assert profiler_settings({"profiler_parameters": {"profiler_level": 1, "aic_metrics": "Odd"}}) == {
        "aic_metrics": "Odd", "unread_settings": "profiler_level 1"}  # said in the settings row (test_summary.py)
    assert profiler_settings({"profiler_parameters": "x"}) == {}
    ms = _mindspore_25(samples / TEXT.format(1), tmp_path / "a_1_20250301120000001_ascend_ms")
    ms0 = _mindspore_25(samples / TEXT.format(1), tmp_path / "b_1_20250301120000002_ascend_ms", "Level0")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        g = compare(str(samples / TEXT.format(1)), str(ms), enable_profiling_compare=True).guards.set_index("Check")
        assert g.loc["NPU profiler settings", ["Status", "Comparison"]].tolist() == [
            "ok", "Level1 / ACL_AICORE_PIPE_UTILIZATION"]
        g = compare(str(ms), str(ms0), enable_profiling_compare=True).guards.set_index("Check")
    assert g.loc["NPU profiler settings", ["Status", "Base", "Comparison"]].tolist() == [
        "note", "Level1 / ACL_AICORE_PIPE_UTILIZATION", "Level0 / ACL_AICORE_PIPE_UTILIZATION"]


def test_instant_step_marker_of_a_trace_without_torch_ops(samples: Path, tmp_path: Path) -> None:
    """The original's scan takes any event named ProfilerStep#, whatever its phase: an instant marker (no dur)
    gives the range [ts, ts]."""
    d = _mindspore_25(samples / TEXT.format(1), tmp_path / "i_1_20250301120000001_ascend_ms")
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    (mark,) = [e for e in events if str(e.get("name")).startswith("ProfilerStep#")]
    mark["ph"] = "i"
    del mark["dur"]
    tv.write_text(json.dumps(events))
    opts = Options(base_step=50, comparison_step=50)
    ctx = RunContext(load_profile(str(d), opts), load_profile(str(d), opts), opts)
    ts = int(Decimal(mark["ts"]) * 1000)
    assert steps.side_range(ctx, "base") == (ts, ts)


def test_db_step_without_ops_is_still_a_step_error(tmp_path: Path, caplog) -> None:
    """A DB export's ops are cut to the step when loaded: a PyTorch DB whose step 51 holds no op (a STEP_TIME
    row after every PYTORCH_API row) is "no operator event data for step 51", not a side without torch ops."""
    import sqlite3

    db = tmp_path / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    db.parent.mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "data/db/l1/ascend_pytorch_profiler_0.db", db)
    con = sqlite3.connect(db)
    last = int(con.execute("SELECT max(CAST(startNs AS INTEGER)) FROM PYTORCH_API").fetchone()[0])
    con.execute("INSERT INTO STEP_TIME VALUES (51, ?, ?)", (last + 1_000, last + 9_000_000))
    con.commit()
    con.close()
    with caplog.at_level(logging.INFO, logger="msprof-analyze"), pytest.raises(StepError) as err:
        compare(str(db), str(db), base_step="50", comparison_step="51", enable_api_compare=True)
    # the error names the .db holding the ops (the DB step errors' file), as given here
    assert str(err.value).startswith(f"{db}: There is no operator event data for step 51, please check whether")
    # the side holds ops, only not in the step: not "Can't find any torch op in the file"
    assert "Can't find any torch op" not in caplog.text
    assert f"No torch op of {db} lies in the step asked for (comparison side)" in caplog.messages  # step 51's
    assert load_profile(str(db), Options(base_step=51, comparison_step=51)).has_ops
    # op rows the loader leaves out (no start time) are no ops: the side has none, with or without a step
    con = sqlite3.connect(db)
    con.execute("UPDATE PYTORCH_API SET startNs = NULL")
    con.commit()
    con.close()
    assert not load_profile(str(db), Options(base_step=51, comparison_step=51)).has_ops
    assert "ApiCompare" not in compare(str(db), str(db), base_step="50", comparison_step="51",
                                       enable_api_compare=True).sheet_names


def test_flow_events_named_as_steps_are_no_step_markers(samples: Path, tmp_path: Path) -> None:
    """docs/differences.md: without torch ops a step marker is any event so named except counters, flow events
    and metadata. A MindSpore 2.5 layout copy whose first async_task_queue flow (start and end, id 8226, read by
    no table) is renamed "ProfilerStep#51" (synthetic) still has the one marker ProfilerStep#50: step 51 is no
    valid step."""
    d = _mindspore_25(samples / TEXT.format(1), tmp_path / "f_1_20250301120000001_ascend_ms")
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    pair = [e for e in events if e.get("cat") == "async_task_queue" and e.get("id") == 8226]
    assert sorted(e["ph"] for e in pair) == ["f", "s"]
    for e in pair:
        e["name"] = "ProfilerStep#51"
    tv.write_text(json.dumps(events))
    marks = load_profile(str(d), Options(base_step=50, comparison_step=50)).extra["step_marks"]
    assert marks["name"].tolist() == ["ProfilerStep#50"]
    with pytest.raises(StepError, match=r"Invalid step id: 51, please choose from the valid steps: 50 \(both sides\)$"):
        compare(str(d), str(d), base_step="51", comparison_step="51")


def test_torch_npu_step_run_reads_no_other_marker(samples: Path, tmp_path: Path) -> None:
    """With torch ops the step comes from them alone (reference-1 §3.5): a stray ProfilerStep#50 event of
    another category, even one without a time, is not read (the marker scan of traces without torch ops made
    such a trace fail to load with a step)."""
    d = tmp_path / "x_ascend_pt"
    shutil.copytree(samples / TEXT.format(1), d)
    tv = d / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(tv.read_text())
    events.append({"ph": "i", "name": "ProfilerStep#50", "pid": 1, "tid": 1, "cat": "user"})
    tv.write_text(json.dumps(events))
    res = compare(str(d), str(samples / TEXT.format(1)), base_step="50", comparison_step="50",
                  enable_communication_compare=True)
    assert res.sheet_names == ["CommunicationCompare"]
    assert "step_marks" not in load_profile(str(d), Options(base_step=50, comparison_step=50)).extra


def _split_step(samples: Path, dst: Path) -> tuple[Decimal, Decimal, Decimal]:
    """The level-1 text export with ProfilerStep#50 cut in two at the start of its second top-level module
    (CrossEntropyLoss, after the DistributedDataParallel forward): #50 ends 10 us before it, #51 runs from it to
    the old end. Returns (start of #50, end of #50, start of #51) in us."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    shutil.copytree(src, dst)
    path = dst / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(path.read_text())
    step = next(e for e in events if e.get("name") == "ProfilerStep#50")
    loss = next(e for e in events if e.get("name") == "nn.Module: CrossEntropyLoss_0")
    start, end, cut = Decimal(step["ts"]), Decimal(step["ts"]) + Decimal(str(step["dur"])), Decimal(loss["ts"])
    step["dur"] = float(cut - Decimal(10) - start)
    events.append({**step, "name": "ProfilerStep#51", "ts": str(cut), "dur": float(end - cut)})
    path.write_text(json.dumps(events))
    return start, cut - Decimal(10), cut


def _forward_modules(sheet) -> dict[str, list]:
    rows = sheet[~sheet["Module Name"].astype(str).str.contains("BACKWARD", regex=False)]
    rows = rows.astype(object).where(rows.notna(), None)  # a blank (NaN in a number column) as None: NaN != NaN
    return {f"{r['Module Name']}|{r['Operator Name']}": r.tolist()[5:] for _, r in rows.iterrows()}


def test_text_module_sheets_follow_the_step(samples: Path, tmp_path: Path) -> None:
    """The original builds a text export's module sheets from the whole profile whatever the step (reference-2
    §9: "text: NOT filtered"), so two steps of one run showed the same modules; ours keeps the modules (and
    ops) that start in the step, as for a DB export. On the level-1 export split in two steps, each step's
    forward module rows are exactly those under the top-level modules (and optimizer pseudo-modules) that
    start in it (plain json), with the figures and call stacks the whole-profile run gives them (a kernel
    follows its launching op; a call stack's outer frames began before the step)."""
    split = tmp_path / "split_ascend_pt"
    s50, e50, s51 = _split_step(samples, split)
    events = json.loads((split / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    mods = [e for e in events if str(e.get("name", "")).startswith("nn.Module:")]

    def inside(e: dict, o: dict) -> bool:
        return (o is not e and o["tid"] == e["tid"] and Decimal(o["ts"]) <= Decimal(e["ts"])
                and Decimal(e["ts"]) + Decimal(str(e["dur"])) <= Decimal(o["ts"]) + Decimal(str(o["dur"])))

    tops = [("/ " + e["name"].split(": ", 1)[1], Decimal(e["ts"])) for e in mods
            if not any(inside(e, o) for o in mods)]
    # optimizer ops are pseudo-modules
    tops += [("/" + e["name"], Decimal(e["ts"])) for e in events
             if e.get("cat") == "cpu_op" and str(e.get("name", "")).lower().startswith("optimizer")]
    assert sorted(p for p, _ in tops) == ["/ CrossEntropyLoss_0", "/ DistributedDataParallel_0",
                                          "/Optimizer.step#SGD.step", "/Optimizer.zero_grad#SGD.zero_grad"]
    whole = _forward_modules(compare(str(split), str(split), enable_operator_compare=True)
                             .sheet("ModuleCompareStatistic"))
    assert {k.split("|")[0] for k in whole} >= {p for p, _ in tops}
    for step, lo, hi in ((50, s50, e50), (51, s51, None)):
        mine = tuple(p for p, t in tops if lo <= t and (hi is None or t <= hi))
        got = _forward_modules(compare(str(split), str(split), base_step=step, comparison_step=step,
                                       enable_operator_compare=True).sheet("ModuleCompareStatistic"))
        assert got == {k: v for k, v in whole.items() if k.split("|")[0].startswith(mine)}, (step, mine, sorted(got))
        assert got and len(got) < len(whole)


def test_a_step_column_named_in_another_case_is_named(samples: Path, tmp_path: Path, caplog) -> None:
    """kernel_details.csv's Step Id written "step id" (a file edited, or rewritten by a tool that changes case) read
    as a column without ids, and with a step the warning blamed the profiler ("writes them only for a run with a
    schedule") with the column in plain view; fuzz65, session 65. The level1 text export (one marker,
    ProfilerStep#50, and its header's "Step Id") with that header renamed: the column is named as written, as a
    required column in another case is; without a step no figure reads it, and nothing is said."""
    import csv

    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0].count("Step Id") == 1 and not [h for h in rows[0] if h.casefold() == "step id" and h != "Step Id"]
    said = (f"{kd}: column 'step id' read as no column: column names are matched with their case (rename it to "
            "Step Id or Step ID)")
    for written in ("step id", "STEP ID"):
        rows[0][rows[0].index("Step Id" if written == "step id" else "step id")] = written
        with open(kd, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(rows)
        want = said.replace("'step id'", repr(written))
        assert want in load_profile(str(side), Options(base_step=50, comparison_step=50)).warnings
        assert not [w for w in load_profile(str(side), Options()).warnings if "read as no column" in w]
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            r = compare(str(side), str(side), base_step=50, comparison_step=50)
        assert want in caplog.text and "KernelCompare" not in r.sheet_names
    rows[0][rows[0].index("STEP ID")] = "Step ID"  # the other spelling the export writes: read, nothing said
    with open(kd, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    assert not [w for w in load_profile(str(side), Options(base_step=50, comparison_step=50)).warnings
                if "read as no column" in w]
    assert "KernelCompare" in compare(str(side), str(side), base_step=50, comparison_step=50).sheet_names


def test_kernel_details_without_a_step_column(samples: Path, tmp_path: Path, caplog) -> None:
    """MindSpore writes kernel_details.csv's Step ID only for a run with a schedule, and not in O2 graph mode,
    though its trace holds the ProfilerStep# markers. With a step, KernelCompare cannot tell the step's kernels:
    it is left out with a warning saying why, and the run goes on (it stopped with "There is no kernel details
    information for step 50, please check whether the data contains this step", which the data does)."""
    import csv

    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt", side)
    kd = side / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("Step Id")
    with open(kd, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([r[:col] + r[col + 1:] for r in rows])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        r = compare(str(side), str(side), base_step=50, comparison_step=50)
    assert "KernelCompare" not in r.sheet_names and "OverallMetrics" in r.sheet_names
    assert f"{side}: kernel_details.csv gives no kernel a Step Id, so its kernels cannot be limited to step 50" in \
        caplog.text
    # a step the trace does not hold is still refused, with kernel compare alone too, on either side
    with pytest.raises(StepError, match="Invalid step id: 999, please choose from the valid steps: 50"):
        compare(str(side), str(side), base_step=999, comparison_step=999, enable_kernel_compare=True)
    plain = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    with pytest.raises(StepError, match="There is no kernel details information for step 999"):
        compare(str(side), str(plain), base_step=50, comparison_step=999, enable_kernel_compare=True)


def test_db_step_zero_counts_the_step_time_ids(tmp_path: Path) -> None:
    """Step ids start at 0 in a run profiled from its first iteration. A DB export cut to step 0 holds that
    step's ProfilerStep#0 marker alone, so the "step count" check counts its STEP_TIME ids, as for any other
    step (counting markers said 1). No sample numbers a step 0: the l1 DB excerpt with its step renamed 0
    (STEP_TIME id and ProfilerStep#50 -> #0) and a later step 1 row added, as a run of two active steps writes
    them. Expected: the distinct STEP_TIME ids, counted in SQL."""
    db = edited_copy(DB_L1, tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE STEP_TIME SET id = 0",
                     "UPDATE STRING_IDS SET value = 'ProfilerStep#0' WHERE value = 'ProfilerStep#50'",
                     "INSERT INTO STEP_TIME SELECT 1, endNs + 1000, endNs + 1000000 FROM STEP_TIME")
    ids = sql(db, "SELECT count(DISTINCT id) FROM STEP_TIME")[0][0]
    assert ids == 2
    guards = compare(str(db), str(db), base_step="0", comparison_step="0").guards.set_index("Check")
    assert guards.loc["step count", ["Status", "Base", "Comparison"]].tolist() == ["ok", ids, ids]
