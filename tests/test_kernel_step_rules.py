"""KernelCompare / KernelTypeCompare and step-selection rules that a mutation audit found unchecked.

Each test states its expected figures or messages as literals derived by hand (or with the csv / sqlite3
modules) from the real samples and excerpts, never from the functions under test.
"""

from __future__ import annotations

import copy
import csv
import logging
import math
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from dbutil import sql
from frameutil import cells, kernel_groups
from logutil import messages_logged

from msprof_compare.api import RunContext, compare
from msprof_compare.compare import kernels, steps
from msprof_compare.errors import StepError
from msprof_compare.model import Profile, frame, step_number
from msprof_compare.options import Options

DATA = Path(__file__).parent / "data"
HEAD40 = DATA / "sheets" / "kernel_details_l1_head40.csv"
DB_L1 = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
TEXT = "msinsight/test/data/pytorch/text/level{}/rank0_ascend_pt"
INVALID = ("", "N/A")


def npu(path: str = "npu", **side) -> Profile:
    p = Profile(path=path, kind="NPU", source="ascend_text")
    for k, v in side.items():
        setattr(p, k, v)
    return p


def marker_profile(names: list[str]) -> Profile:
    """A text side whose torch ops are only the given ProfilerStep# markers, 100 ns apart, 50 ns long."""
    p = Profile(path="npu", kind="NPU", source="ascend_text")
    p.ops = frame("ops", {"name": names, "cat": ["cpu_op"] * len(names),
                          "ts": [100 * i for i in range(len(names))], "dur": [50] * len(names)})
    return p


def _valid_rows(path: Path, also_invalid: tuple[str, ...] = ()) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["Type"].strip() not in INVALID + also_invalid]


# ------------------------------------------------------------------ KernelTypeCompare


def test_kernel_type_compare_ties_keep_base_order_and_avg_ratio_uses_avgs(samples):
    """reference-2 §6.2: the sort by Diff Total Ratio is stable, so rows of equal ratio keep the base file's
    order; Diff Avg Ratio is the ratio of the two Avg Time(us) cells, not of the totals.

    Pair 1 (level1 vs level2 op_statistic.csv, read with the csv module):
    ForeachAddList 1954.719 / 1959.079 = 0.99777 -> 0.9978 and Conv2D 721.854 / 723.434 = 0.99782 -> 0.9978
    tie, ForeachAddList first in the base file (line 2, Conv2D line 5); Relu's totals give
    63.621 / 64.081 = 0.99282 -> 0.9928 but its averages 9.089 / 9.154 = 0.99290 -> 0.9929."""
    sheet = compare(str(samples / TEXT.format(1)), str(samples / TEXT.format(2)), enable_kernel_compare=True,
                    use_kernel_type=True).sheet("KernelTypeCompare")
    names = sheet["Kernel Type"].tolist()
    tied = sheet[sheet["Kernel Type"].isin(["ForeachAddList", "Conv2D"])]
    assert tied["Diff Total Ratio"].tolist() == [0.9978, 0.9978]
    assert tied["Kernel Type"].tolist() == ["ForeachAddList", "Conv2D"]
    assert names.index("Conv2D") == names.index("ForeachAddList") + 1
    relu = sheet[sheet["Kernel Type"] == "Relu"].iloc[0]
    assert (relu["Diff Total Ratio"], relu["Diff Avg Ratio"]) == (0.9928, 0.9929)

    # the whole order: a stable sort of the base keys (then comparison-only ones) by the hand-made ratio
    def table(n: int) -> dict[str, tuple[float, float]]:
        with open(samples / TEXT.format(n) / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv", newline="") as fh:
            return {f"{r['OP Type'].strip()}-{r['Core Type'].strip()}": (float(r["Total Time(us)"]),
                                                                         float(r["Avg Time(us)"]))
                    for r in csv.DictReader(fh)}

    base, comp = table(1), table(2)
    keys = list(base) + [k for k in comp if k not in base]
    ratio = {k: round(comp[k][0] / base[k][0], 4) if k in base and k in comp else None for k in keys}
    assert None not in ratio.values()  # both files hold the same 33 types
    expected = sorted(keys, key=lambda k: -ratio[k])  # list.sort is stable
    assert [f"{t}-{c}" for t, c in zip(sheet["Kernel Type"], sheet["Core Type"], strict=True)] == expected
    assert sheet["Diff Avg Ratio"].tolist() == [round(comp[k][1] / base[k][1], 4) for k in expected]
    assert sheet["Order Id"].tolist() == list(range(1, len(keys) + 1))


def test_db_kernel_type_compare_with_a_step_gives_no_whole_run_warning(caplog):
    """A DB export builds its op statistic from the step's compute tasks (reference-2 §6.2: "DB: ...
    step-filtered"), so the warning that op_statistic.csv holds no step ids is for text exports only. The l1
    DB excerpt, step 50: Calls sum to the compute tasks starting in STEP_TIME 50, counted in SQL."""
    ((n,),) = sql(DB_L1, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId), STEP_TIME s "
                         "WHERE s.id = 50 AND t.startNs BETWEEN s.startNs AND s.endNs")
    assert n == 187
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(DB_L1), str(DB_L1), enable_kernel_compare=True, use_kernel_type=True, base_step=50,
                      comparison_step=50)
    sheet = res.sheet("KernelTypeCompare")
    assert sheet["Calls"].sum() == sheet["Calls.1"].sum() == n
    assert "op_statistic.csv holds no step ids" not in caplog.text


def test_kernel_type_keys_that_join_to_one_text_are_two_rows(tmp_path):
    """reference-2 §6.2 keys rows by the text "{OP Type}-{Core Type}", so the original paired base
    ("DSAGenBitMask-DSA", "SQE") with comparison ("DSAGenBitMask", "DSA-SQE") under the base's texts; ours keys
    by the pair (docs/differences.md), as KernelCompare does, so they are a base-only and a comparison-only row.
    No export writes a "-" in these columns: tests/data/sheets/op_statistic_l1.csv with its DSAGenBitMask row
    (DSA_SQE, 2 calls, 5.52 us) split so on each side. Expected by hand (csv module): the file's 33 rows, one of
    them twice; the comparison-only row has ratio inf (first), the base-only row 0 (last), the others 1."""
    from msprof_compare.loaders.ascend_text import read_op_statistic

    src = DATA / "sheets" / "op_statistic_l1.csv"
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    at = next(i for i, r in enumerate(rows) if r[:2] == ["DSAGenBitMask", "DSA_SQE"])
    assert at == 27 and rows[at][2:7] == ["2", "5.52", "2.12", "2.76", "3.4"]
    tables = []
    for name, (op_type, core) in (("base", ("DSAGenBitMask-DSA", "SQE")), ("comp", ("DSAGenBitMask", "DSA-SQE"))):
        rows[at][:2] = [op_type, core]
        path = tmp_path / f"{name}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(rows)
        tables.append(kernels.kernel_type_table(npu(op_statistic=read_op_statistic(str(path), []))))
    got = kernels.kernel_type_rows(*tables)
    assert len(got) == len(rows)
    assert got[0] == [1, "DSAGenBitMask", "DSA-SQE", 0.0, 0.0, 0.0, 0.0, 0, 5.52, 2.76, 3.4, 2.12, 2,
                      math.inf, math.inf]
    assert got[-1] == [len(rows), "DSAGenBitMask-DSA", "SQE", 5.52, 2.76, 3.4, 2.12, 2, 0.0, 0.0, 0.0, 0.0, 0,
                       0.0, 0.0]
    assert all(r[-2:] == [1.0, 1.0] for r in got[1:-1])


# ------------------------------------------------------------------ KernelCompare figures


def test_kernel_avg_is_taken_from_the_rounded_total(samples):
    """reference-2 §6.1: Avg = round(rounded total / calls, 2). The four Muls kernels of shape "1,4096,1024" in
    msinsight st level2 rank_0 last 16.620, 10.680, 10.720 and 16.280 us (csv module): the decimal total is
    54.30, and 54.3 / 4 rounds (Python's round of the double nearest 13.575) to 13.57. The float sum of the
    raw cells is 54.300000000000004, whose quotient would round to 13.58. Read raw, as
    test_kernels.py::test_kernel_compare_matches_reference_pair1 feeds the sheet."""
    path = samples / "msinsight/test/st/level2/rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        durs = [r["Duration(us)"] for r in csv.DictReader(fh)
                if r["Type"] == "Muls" and r["Input Shapes"] == '"1,4096,1024"']
    assert durs == ["16.620", "10.680", "10.720", "16.280"]
    groups = kernel_groups(npu(kernel_details=pd.read_csv(path, keep_default_na=False)))
    rows = cells(kernels.kernel_frame(groups, groups))
    (row,) = [r for r in rows if r[1] == "Muls" and r[2] == '"1,4096,1024"']
    assert row[3:8] == [54.3, 13.57, 16.62, 10.68, 4]
    assert row[8:13] == row[3:8]


def test_nan_type_text_is_no_type(tmp_path):
    """reference-2 §6.1 skips kernel_details.csv rows whose Type is empty, NaN or N/A (the original's pandas
    reads a "NaN" cell as missing). The l1 excerpt (tests/data/sheets) with two rows' Type edited to "NaN" and
    "nan", read by the loader: neither is a group and neither is counted; the calls are the csv module's
    count of rows of a valid Type."""
    from msprof_compare.loaders.ascend_text import read_kernel_details

    with open(HEAD40, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    t = rows[0].index("Type")
    rows[1][t], rows[2][t] = "NaN", "nan"
    path = tmp_path / "kernel_details.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    valid = _valid_rows(path, ("NaN", "nan"))
    assert len(valid) < len(_valid_rows(path))  # the edit turned two valid rows into NaN ones
    groups = kernel_groups(npu(kernel_details=read_kernel_details(str(path))))
    assert not {"NaN", "nan"} & set(groups["type"])
    assert int(groups["calls"].sum()) == len(valid)


def test_keys_that_join_to_one_text_are_two_rows(tmp_path):
    """reference-2 §6.1 keys a group by its type text immediately followed by its shape text, so the original
    shows a base group (Type "DSAGenBitMaskN", Input Shapes "/A") with the comparison group ("DSAGenBitMask",
    "N/A") in one row under the base's names: two kernel types as one. We match by the (type, shape) pair
    (docs/differences.md): a base-only and a comparison-only row. No export writes such types: the base is the l1
    excerpt with its one DSAGenBitMask row (3.4 us, shape N/A) edited so, the comparison the excerpt as it is.
    Expected by hand (csv module): one row more than the excerpt has (type, shape) groups, the edited group where
    the base's grouping puts it (3.4 us, 1 call; no comparison kernel: ratios 0), the comparison's last."""
    from msprof_compare.loaders.ascend_text import read_kernel_details

    with open(HEAD40, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    t, sh = rows[0].index("Type"), rows[0].index("Input Shapes")
    (mask,) = [r for r in rows[1:] if r[t] == "DSAGenBitMask"]
    assert (mask[sh], mask[rows[0].index("Duration(us)")]) == ("N/A", "3.4")
    mask[t], mask[sh] = "DSAGenBitMaskN", "/A"
    base = tmp_path / "kernel_details.csv"
    with open(base, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)

    def by_hand(path: Path) -> list[tuple[str, str]]:  # (type, shape) groups in nested first-appearance order
        nested: dict[str, dict[str, None]] = {}
        for r in _valid_rows(path):
            nested.setdefault(r["Type"].strip(), {})[r["Input Shapes"].strip() or "N/A"] = None
        return [(ty, s) for ty, shapes in nested.items() for s in shapes]

    groups = [kernel_groups(npu(kernel_details=read_kernel_details(str(p)))) for p in (base, HEAD40)]
    got = cells(kernels.kernel_frame(*groups))
    n = len(by_hand(HEAD40)) + 1
    assert len(got) == n
    at = by_hand(base).index(("DSAGenBitMaskN", "/A"))
    assert got[at] == [at + 1, "DSAGenBitMaskN", "/A", 3.4, 3.4, 3.4, 3.4, 1, 0.0, 0.0, None, None, None, 0.0, 0.0]
    assert got[-1] == [n, "DSAGenBitMask", "N/A", 0.0, 0.0, None, None, None, 3.4, 3.4, 3.4, 3.4, 1,
                       float("inf"), float("inf")]


# ------------------------------------------------------------------ KernelCompare with a step


def test_raw_kernel_details_step_column_of_either_spelling():
    """kernel_groups takes the raw frame of kernel_details.csv: MindSpore spells the column "Step ID"
    (reference-2 §6.1: "Step Id (or Step ID)"), and a frame with no step column has no row of any step.
    The l1 excerpt with its first 10 rows set to step 1 (the rest stay 50); expected calls: the csv module's
    count of valid-Type rows among those 10."""
    kd = pd.read_csv(HEAD40).rename(columns={"Step Id": "Step ID"})
    kd.loc[:9, "Step ID"] = 1
    with open(HEAD40, newline="", encoding="utf-8") as fh:
        first10 = [r for r in list(csv.DictReader(fh))[:10] if r["Type"].strip() not in INVALID]
    assert len(first10) == 10 and len(_valid_rows(HEAD40)) > 10
    assert int(kernel_groups(npu(kernel_details=kd), 1)["calls"].sum()) == len(first10)
    assert kernel_groups(npu(kernel_details=kd.drop(columns="Step ID")), 50).empty


def test_step_zero_with_no_step_ids_leaves_kernel_compare_out(samples, tmp_path, caplog):
    """Step 0 is a step: a kernel_details.csv without a Step Id column cannot be limited to it, so KernelCompare
    is left out with the warning that says why, as for any other step (not the error "There is no kernel details
    information for step 0"). No sample numbers a step 0: the level1 text export with its one marker
    ProfilerStep#50 renamed ProfilerStep#0 and the Step Id column cut from kernel_details.csv."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / TEXT.format(1), side)
    out = side / "ASCEND_PROFILER_OUTPUT"
    trace = (out / "trace_view.json").read_text(encoding="utf-8")
    assert trace.count("ProfilerStep#50") == 1
    (out / "trace_view.json").write_text(trace.replace("ProfilerStep#50", "ProfilerStep#0"), encoding="utf-8")
    with open(out / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("Step Id")
    with open(out / "kernel_details.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([r[:col] + r[col + 1:] for r in rows])
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(side), str(side), base_step=0, comparison_step=0, enable_kernel_compare=True)
    assert "KernelCompare" not in res.sheet_names
    assert [m for m in caplog.messages if "gives no kernel a Step Id" in m] == [
        f"{side}: kernel_details.csv gives no kernel a Step Id, so its kernels cannot be limited to step 0 (the "
        "profiler writes them only for a run with a schedule; MindSpore not in O2 graph mode either); KernelCompare "
        "is left out. (both sides)"]


def test_missing_step_error_names_the_steps_kernel_details_holds(samples):
    """The "no kernel details information for step N" error names kernel_details.csv (the file without the
    step; it named the folder given, which holds no such step list) and ends with the steps it does hold:
    one step in the singular (the level1 sample: every row is step 50, csv module), and for many in ascending
    order, a run of consecutive ones as a range (``textsafe.id_ranges``). For the latter the l1 excerpt's 40 rows
    are numbered step i % 12 (row i from 0), so steps 0..11: "0-11"."""
    l1 = samples / TEXT.format(1)
    with open(l1 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        assert {r["Step Id"] for r in csv.DictReader(fh)} == {"50"}
    with pytest.raises(StepError) as one:
        compare(str(l1), str(l1), base_step=7, comparison_step=7, enable_kernel_compare=True)
    assert str(one.value) == (f"{l1 / 'ASCEND_PROFILER_OUTPUT' / 'kernel_details.csv'}: There is no kernel details "
                              "information for step 7, please check whether the data contains this step. "
                              "(both sides: it holds step 50)")
    kd = pd.read_csv(HEAD40)
    kd["Step Id"] = [i % 12 for i in range(len(kd))]
    p = npu(kernel_details=kd)
    with pytest.raises(StepError) as many:
        kernels.build(RunContext(p, p, Options(enable_kernel_compare=True, base_step=99, comparison_step=99)))
    assert str(many.value).endswith("(both sides: it holds steps 0-11)")


def test_step_ids_beyond_two_to_the_53_are_told_apart(samples, tmp_path):
    """Step ids are compared as integers, exactly (docs/differences.md, "A step without data stops the run"):
    kernel_details.csv's Step Id was read through a float64, which holds 2**53 + 1 as 2**53, so the kernels of
    steps 2**53 and 2**53 + 1 all went into the KernelCompare of either. No sample numbers such steps: the level1
    text export with its one marker ProfilerStep#50 renamed ProfilerStep#9007199254740993 (2**53 + 1), and its
    kernel_details.csv's first 10 data rows numbered 9007199254740992 (2**53), the rest 9007199254740993.
    Expected calls: the csv module's count of the valid-Type rows numbered 2**53 + 1 in the edited file."""
    side = tmp_path / "rank0_ascend_pt"
    shutil.copytree(samples / TEXT.format(1), side)
    out = side / "ASCEND_PROFILER_OUTPUT"
    trace = (out / "trace_view.json").read_text(encoding="utf-8")
    assert trace.count("ProfilerStep#50") == 1
    (out / "trace_view.json").write_text(trace.replace("ProfilerStep#50", f"ProfilerStep#{2**53 + 1}"),
                                         encoding="utf-8")
    with open(out / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("Step Id")
    for i, r in enumerate(rows[1:]):
        r[col] = str(2**53 if i < 10 else 2**53 + 1)
    with open(out / "kernel_details.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    later = [r for r in _valid_rows(out / "kernel_details.csv") if r["Step Id"] == "9007199254740993"]
    assert 0 < len(later) < len(_valid_rows(out / "kernel_details.csv")) - 9
    res = compare(str(side), str(side), base_step=2**53 + 1, comparison_step=2**53 + 1, enable_kernel_compare=True)
    sheet = res.sheet("KernelCompare")
    assert (int(sheet["Calls"].sum()), int(sheet["Calls.1"].sum())) == (len(later), len(later))


# ------------------------------------------------------------------ ProfilerStep# markers


def test_step_with_kernel_details_absent_is_no_missing_step(samples, caplog):
    """The mstt advisor's ``timeline_advice`` folder holds only a trace_view.json, whose one ProfilerStep#
    marker is step 1 (read from the JSON below). With step 1 on both sides, KernelCompare has no
    kernel_details.csv to read: it is left out, its warning names the missing file, and every other sheet is
    written, as for a bare trace_view.json; the run used to stop with "There is no kernel details information
    for step 1, please check whether the data contains this step", which the data does."""
    import json

    folder = samples / "mstt/profiler/msprof_analyze/test/ut/advisor/timeline_advice"
    assert sorted(p.name for p in folder.iterdir()) == ["trace_view.json"]
    events = json.loads((folder / "trace_view.json").read_text(encoding="utf-8"))
    assert sorted({e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")}) == [
        "ProfilerStep#1"]
    with caplog.at_level(logging.WARNING):
        res = compare(str(folder), str(folder), base_step=1, comparison_step=1, enable_kernel_compare=True,
                      enable_operator_compare=True)
    assert "KernelCompare" not in res.sheet_names and "OperatorCompareStatistic" in res.sheet_names
    assert f"Can't find any valid kernels in the file: {folder} (both sides: no kernel_details.csv)." in caplog.messages


def test_negative_marker_id_is_a_number_and_non_numbers_are_logged_once(caplog):
    """reference-1 §3.5: the step id is the marker's suffix as an integer; only a suffix that is no integer logs
    "Can not convert x to int". "-3" is an integer (Python's int() takes it), so it is not logged; a label seen
    twice before the match is logged once. No sample has such markers: a hand-made marker list."""
    assert step_number("-3") == -3
    p = marker_profile(["ProfilerStep#x", "ProfilerStep#-3", "ProfilerStep#x", "ProfilerStep#5"])
    with caplog.at_level(logging.ERROR, logger="msprof-analyze"):
        assert steps.step_range(p, 5) == (300, 350)
    assert caplog.messages == ["Can not convert x to int"]


def test_step_id_is_the_text_after_the_last_hash():
    """reference-1 §3.5: "step id = text after the last #": ProfilerStep#a#5 is step 5. A hand-made marker."""
    p = marker_profile(["ProfilerStep#4", "ProfilerStep#a#5"])
    assert steps.step_range(p, 5) == (100, 150)


def test_unknown_step_lists_each_valid_step_once():
    """The valid steps of the "Invalid step id" error are named once each, blanks around an id dropped (an id
    " 5 " is step 5): markers 4, "5 " and 4 again (hand-made) list "4, 5"."""
    p = marker_profile(["ProfilerStep#4", "ProfilerStep#5 ", "ProfilerStep#4"])
    assert steps.step_range(p, 5) == (100, 150)
    with pytest.raises(StepError) as info:
        steps.step_range(p, 7)
    assert str(info.value) == "npu: Invalid step id: 7, please choose from the valid steps: 4, 5"


def test_db_step_without_compute_tasks_is_said_not_refused(tmp_path, caplog):
    """A DB export's step is checked against its STEP_TIME table when it is loaded; a step that is there but
    whose compute tasks are gone (the l1 DB excerpt with COMPUTE_TASK_INFO emptied, a synthetic edit) holds no
    kernel to compare. It was refused as "There is no kernel details information for step 50, please check
    whether the data contains this step", which is false for a step the data holds."""
    db = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copy(DB_L1, db)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM COMPUTE_TASK_INFO")
    con.commit()
    (steps_held,) = con.execute("SELECT count(*) FROM STEP_TIME WHERE id = 50").fetchone()
    con.close()
    assert steps_held == 1
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(db), str(DB_L1), enable_kernel_compare=True, base_step=50, comparison_step=50)
    assert "KernelCompare" not in [s.name for s in res.sheets]
    assert f"Can't find any valid kernels in the file: {db} (base side: no compute task in step 50" in caplog.text


def test_bare_trace_view_with_a_step_has_no_kernel_sheet_and_no_step_error(samples, caplog):
    """docs/differences.md ("A step without data stops the run"): a bare trace_view.json has no
    kernel_details.csv, so with a step kernel compare writes no sheet and says why, as the original (which reads
    no kernel details at that level), instead of refusing the step as missing. The level1 text sample's
    trace_view.json given alone, with step 50 (its one marker is ProfilerStep#50)."""
    trace = samples / TEXT.format(1) / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    assert trace.read_text(encoding="utf-8").count('"ProfilerStep#50"') == 1
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(trace), str(trace), base_step=50, comparison_step=50, enable_kernel_compare=True)
    assert "KernelCompare" not in res.sheet_names
    assert (f"Can't find any valid kernels in the file: {trace} (both sides: a trace file given without its profiling "
            "directory has no kernel_details.csv)") in caplog.text
    assert "There is no kernel details information" not in caplog.text


TWO_STEPS = DATA / "npu" / "two_steps_ascend_pt"


def test_kernels_without_a_step_id_inside_the_step_are_counted(caplog):
    """KernelCompare keeps a text export's kernels by their Step Id (reference-2 §6.1: no time rule), so a kernel of
    a valid Type whose Step Id is empty though it starts inside the step's ProfilerStep# span leaves the step
    unsaid: one warning per side counts them. torch_npu leaves the id empty for kernels outside every step: those
    are not counted. ``two_steps_ascend_pt`` (tests/data/npu/make_two_steps.py): two steps, three kernels inside
    them without a Step Id, two after the last step. Expected: the csv and json modules' count, per step, of the
    rows with an empty Step Id whose start lies in the marker's [ts, ts + dur] (Decimal us), and the
    KernelCompare calls the rows whose Step Id is the step."""
    import json
    from decimal import Decimal

    out = TWO_STEPS / "ASCEND_PROFILER_OUTPUT"
    marks = {e["name"]: (Decimal(e["ts"]), Decimal(e["ts"]) + Decimal(str(e["dur"])))
             for e in json.loads((out / "trace_view.json").read_text())
             if e.get("name", "").startswith("ProfilerStep#")}
    rows = _valid_rows(out / "kernel_details.csv")
    blank = [Decimal(r["Start Time(us)"].strip()) for r in rows if r["Step Id"] == ""]
    assert len(blank) == 5  # three inside a step, two after the last
    for step, lo_hi in ((50, marks["ProfilerStep#50"]), (51, marks["ProfilerStep#51"])):
        inside = sum(1 for t in blank if lo_hi[0] <= t <= lo_hi[1])
        assert inside == (2 if step == 50 else 1)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(TWO_STEPS), str(TWO_STEPS), base_step=step, comparison_step=step,
                          enable_kernel_compare=True)
        said = [m for m in caplog.messages if "have no Step Id" in m]
        assert said == [f"{out / 'kernel_details.csv'}: {inside} kernel(s) of a valid Type have no Step Id yet start "
                        f"inside step {step} (the span of its ProfilerStep#{step} in {out / 'trace_view.json'}); "
                        "KernelCompare keeps a text export's kernels by their Step Id, as the original does, so it "
                        f"leaves them out of step {step} (a damaged export, or kernels the profiler placed in no "
                        "step). (both sides)"]
        calls = sum(1 for r in rows if r["Step Id"] == str(step))
        sheet = res.sheet("KernelCompare")
        assert (int(sheet["Calls"].sum()), int(sheet["Calls.1"].sum())) == (calls, calls)
    # without a step, nothing to say; on the sample (every kernel step 50) neither
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(TWO_STEPS), str(TWO_STEPS), enable_kernel_compare=True)
    assert not [m for m in caplog.messages if "have no Step Id" in m]


def test_kernel_counts_of_a_step_span_use_separators(caplog):
    """The count of kernels without a Step Id inside the step is written with separators: the l1 excerpt's 40 rows
    repeated to 2,400, the first 1,200 without a Step Id, the rest step 7, all starting inside the one marker's
    span [0, 10,000] ns but for the last 100 of the first 1,200 (after it): 1,100 counted."""
    kd = pd.read_csv(HEAD40).iloc[[i % 40 for i in range(2400)]].reset_index(drop=True)
    assert not kd["Type"].astype(str).str.strip().isin(INVALID).any()
    kd["Step Id"] = [-1] * 1200 + [7] * 1200
    kd["ts"] = [i if i < 1100 else 20_000 + i for i in range(1200)] + [5000] * 1200
    kd["start_read"] = True
    p = marker_profile(["ProfilerStep#7"])
    p.ops.loc[0, "dur"] = 10_000
    p.kernel_details = kd
    q = copy.deepcopy(p)
    q.path = "npu2"  # another input of the same rows: each side's line names its own path and side
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        kernels.build(RunContext(p, q, Options(enable_kernel_compare=True, base_step=7, comparison_step=7)))
    assert [m for m in caplog.messages if "have no Step Id" in m] == [
        f"{path}: 1,100 kernel(s) of a valid Type have no Step Id yet start inside step 7 (the span of its "
        f"ProfilerStep#7 in {path}); KernelCompare keeps a text export's kernels by their Step Id, as the original "
        "does, so it leaves them out of step 7 (a damaged export, or kernels the profiler placed in no step). "
        f"({side})" for path, side in (("npu", "base side"), ("npu2", "comparison side"))]


def _span_edge_case(step: int, source: str = "ascend_text") -> tuple[list[str], int]:
    """The l1 excerpt's 40 rows without a Step Id plus the same 40 as ``step``'s, against one ProfilerStep#``step``
    marker spanning [0, 10,000] ns: rows 0 and 1 start on the span's two ends (ts 0 and 10,000: counted, the span is
    inclusive), row 2 one ns after it and row 3 one before (not), row 4 inside but with a start that was not read
    and row 5 inside with Type N/A (neither counted: no start, no valid Type), the rest at 20,000 ns (after)."""
    kd = pd.concat([pd.read_csv(HEAD40)] * 2, ignore_index=True)
    assert not kd["Type"].astype(str).str.strip().isin(INVALID).any()
    kd["Step Id"] = [-1] * 40 + [step] * 40
    kd["ts"] = [0, 10_000, 10_001, -1, 5000, 5000] + [20_000] * 34 + [5000] * 40
    kd["start_read"] = [True] * 4 + [False] + [True] * 75
    kd.loc[5, "Type"] = "N/A"
    p = marker_profile([f"ProfilerStep#{step}"])
    p.source = source
    p.ops.loc[0, "dur"] = 10_000
    if source == "ascend_db":  # its STEP_TIME range, as the DB loader records it
        p.extra["step_range"] = (0, 10_000)
    p.kernel_details = kd
    return [m.split(" of a valid")[0] for m in _kernel_warnings(p, step)], 2


def _kernel_warnings(p: Profile, step: int) -> list[str]:
    with messages_logged() as seen:
        kernels.build(RunContext(p, p, Options(enable_kernel_compare=True, base_step=step, comparison_step=step)))
    return [m for m in seen if "have no Step Id" in m]


@pytest.mark.parametrize("step", [7, 0])
def test_kernels_without_a_step_id_on_the_span_ends_count_and_unread_or_typeless_ones_do_not(step):
    """The span is inclusive at both ends, a kernel whose start was not read or whose Type is no valid one is not
    counted, and step 0 is a step like any other (``_span_edge_case``: 2 of the 6 rows near the span)."""
    said, expected = _span_edge_case(step)
    assert said == [f"npu: {expected} kernel(s)"] * 2


def test_db_kernels_without_a_step_id_are_not_counted_by_the_text_rule():
    """A DB export's kernels are the step's by time (the loader cut every table to the STEP_TIME range), so the
    text export's Step Id rule says nothing of them, the same rows and range as the text case's 2."""
    said, _ = _span_edge_case(7, source="ascend_db")
    assert said == []
