"""Operator, module and API sheet rules that a mutation audit found untested: match-rate totals of
each side, the row order of one-sided modules, the with_stack warning of DB inputs, and ApiCompare
with a step on two sides without torch ops; then cases no sample holds, each on an edited copy of the level1
text sample: a ProfilerStep nested in the step asked for (ApiCompare), an op starting as its module's previous
op ends, two ops at a fwdbwd flow-end instant, fwdbwd flows ending in two processes, a comparison-only module
starting with a paired one, a kernel without Task Id, two flows of one launch instant out of kernel order, a
frame starting with a module, sides without ops; and the match rate after drill-down, on unedited data."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from msprof_compare import compare

EXCERPT = Path(__file__).parent / "data" / "ops" / "alexnet_excerpt.pt.trace.json"
NPU = Path(__file__).parent / "data" / "npu"
TEXT_L1 = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
DB_L1 = "msinsight/test/data/pytorch/db/level1/rank0_ascend_pt"
DB_L2 = "msinsight/test/data/pytorch/db/level2/rank0_ascend_pt"
WITH_STACK = "If you want to see the operator's call stack, you must enable with_stack switch."


def _top_level(events: list[dict]) -> list[dict]:
    """Top-level host ops by the cursor rule: an op starting at or before the end of the open one nests in it."""
    ops = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime",
                                                                               "user_annotation")),
                 key=lambda e: e["ts"])
    out, open_end = [], -1.0
    for o in ops:
        if o["ts"] > open_end:
            out.append(o)
            open_end = o["ts"] + o["dur"]
    return out


def test_operator_match_rate_counts_each_sides_own_operators(tmp_path: Path, caplog) -> None:
    """The match-rate line counts the base side's operators on the base side: the comparison is the AlexNet
    excerpt without its last top-level op (aten::flatten and what it holds), so 9 base ops, 8 comparison
    ops, 8 matched (top-level ops counted from the raw JSON below)."""
    events = json.loads(EXCERPT.read_text())["traceEvents"]
    top = _top_level(events)
    last = top[-1]
    assert (last["name"], len(top)) == ("aten::flatten", 9)
    kept = [e for e in events if not (e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime")
                                      and e["ts"] >= last["ts"])]
    comp = tmp_path / "cut.pt.trace.json"
    comp.write_text(json.dumps({"traceEvents": kept}))
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(EXCERPT), str(comp), enable_operator_compare=True)
    assert "Top-level operators matched: 8/9 base, 8/8 comparison" in caplog.messages
    rate = res.frames["match_rate"].iloc[0]
    assert rate[["what", "matched", "base_total", "comparison_total"]].tolist() == ["operators", 8, 9, 8]


@pytest.fixture(scope="module")
def l1_edited(tmp_path_factory) -> tuple[Path, Path]:
    """The level1 text sample (base) against a copy (synthetic edit) whose ``nn.Module: ReLU_5`` is renamed
    ``nn.Module: GELU_0`` and whose ``nn.Module: Dropout_1`` event is removed."""
    from conftest import SAMPLES

    src = SAMPLES / TEXT_L1
    if not src.is_dir():
        pytest.skip(f"sample data not found at {src}")
    comp = tmp_path_factory.mktemp("l1") / "rank0_ascend_pt"
    shutil.copytree(src, comp)
    trace = comp / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text(encoding="utf-8"))
    for e in events:
        if e.get("name") == "nn.Module: ReLU_5":
            e["name"] = "nn.Module: GELU_0"
    events = [e for e in events if e.get("name") != "nn.Module: Dropout_1"]
    trace.write_text(json.dumps(events), encoding="utf-8")
    return src, comp


def test_module_match_rate_counts_each_sides_own_modules(l1_edited, caplog) -> None:
    """Module totals per side, from the raw trace: 26 nn.Module events + 2 optimizer ops + 27 fwdbwd flows
    (one backward module each) = 55 base modules; the comparison lacks Dropout_1 (its backward module becomes
    Sequential_1's), 54. Unmatched: base ReLU_5, Dropout_1 and their backward modules (55 - 4 = 51 matched);
    comparison GELU_0, its backward module and the backward Sequential_1 (54 - 3 = 51)."""
    src, comp = l1_edited
    events = json.loads((src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text(encoding="utf-8"))
    n_mod = sum(1 for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("nn.Module:"))
    n_opt = sum(1 for e in events if e.get("ph") == "X" and str(e.get("name", "")).lower().startswith("optimizer"))
    n_bwd = sum(1 for e in events if e.get("ph") == "s" and str(e.get("cat", "")).lower() == "fwdbwd")
    assert (n_mod, n_opt, n_bwd) == (26, 2, 27)
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(src), str(comp), enable_operator_compare=True)
    assert "Modules matched: 51/55 base, 51/54 comparison" in caplog.messages
    rate = res.frames["match_rate"].iloc[0]
    assert rate[["what", "matched", "base_total", "comparison_total"]].tolist() == ["modules", 51, 55, 54]


def test_comparison_only_modules_keep_their_place(l1_edited) -> None:
    """reference-2 §3.6: ModuleCompare lists module pairs in base start order, a comparison-only module going
    before the first pair whose comparison module starts after it: GELU_0 (where ReLU_5 was) comes after the
    base-only ReLU_5 and Dropout_1 and before Linear_1. ModuleCompareStatistic (§3.7) lists the base side's
    module names first, then the comparison-only ones (GELU_0, the backward Sequential_1, the backward GELU_0)."""
    src, comp = l1_edited
    res = compare(str(src), str(comp), enable_operator_compare=True)
    seq = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1"
    detail = res.sheet("ModuleCompare")
    names = detail.loc[detail["Operator Name"] == "TOTAL", "Module Name"].tolist()
    i = names.index(f"{seq}/ Linear_0")
    assert names[i:i + 5] == [f"{seq}/ Linear_0", f"{seq}/ ReLU_5", f"{seq}/ Dropout_1", f"{seq}/ GELU_0",
                              f"{seq}/ Linear_1"]
    stat = res.sheet("ModuleCompareStatistic")
    names = stat.loc[stat["Operator Name"] == "[ TOTAL ]", "Module Name"].tolist()
    assert names[-4:] == ["/Optimizer.step#SGD.step", f"{seq}/ GELU_0", f"/[ BACKWARD ]{seq}",
                          f"/[ BACKWARD ]{seq}/ GELU_0"]


def test_db_inputs_get_no_with_stack_warning(samples: Path, caplog) -> None:
    """A DB export stores no op call stack at all, so the with_stack hint would be noise (reference pair 3:
    db/level1 vs db/level2, whose module sheets are written)."""
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(samples / DB_L1), str(samples / DB_L2), enable_operator_compare=True)
    assert "ModuleCompare" in res.sheet_names
    assert WITH_STACK not in caplog.messages


def test_kernel_launched_in_a_module_before_its_op_starts_is_the_modules_only(samples: Path, tmp_path: Path) -> None:
    """A kernel launched inside a module but before its top-layer op starts belongs to no op of it (the original's
    cursor hands a launch only to an op that has started): the module's TOTAL keeps the kernel, its op row does
    not. Synthetic edit of the level1 sample: the launch (async_npu flow start) of ReLU_0's one kernel moved from
    inside aten::relu_ (which starts at ...703037.730) to ...703020.000, inside nn.Module: ReLU_0 (from
    ...703004.720). Expected from the raw JSON: that kernel's duration, 15.5003125 us, on both TOTAL rows and on
    the unedited side's op row; 0 and no kernel line on the edited side's op row."""
    src = samples / TEXT_L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(src.read_text(encoding="utf-8"))
    module = next(e for e in events if e.get("name") == "nn.Module: ReLU_0")
    op = next(e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::relu_" and e["tid"] == module["tid"]
              and module["ts"] <= e["ts"] <= "1736408883703422")
    starts = [e for e in events if e.get("ph") == "s" and e.get("cat") == "async_npu"
              and op["ts"] <= e["ts"] <= f"{float(op['ts']) + op['dur']:.3f}"]
    assert (module["ts"], op["ts"], len(starts)) == ("1736408883703004.720", "1736408883703037.730", 1)
    (end,) = [e for e in events if e.get("ph") == "f" and e.get("id") == starts[0]["id"]]
    (kernel,) = [e for e in events if e.get("ph") == "X" and e["pid"] == end["pid"] and e["ts"] == end["ts"]]
    assert kernel["dur"] == 15.5003125
    starts[0]["ts"] = "1736408883703020.000"
    edited = tmp_path / "trace_view.json"
    edited.write_text(json.dumps(events), encoding="utf-8")
    sheet = compare(str(edited), str(src), enable_operator_compare=True).sheet("ModuleCompare")
    rows = sheet[sheet["Module Name"] == "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ ReLU_0"]
    total, relu = (rows[rows["Operator Name"] == n].iloc[0] for n in ("TOTAL", "aten::relu_"))
    assert [total["Device Total Time(us)"], total["Device Total Time(us).1"]] == pytest.approx([15.5003125] * 2,
                                                                                              abs=5e-4)
    assert relu["Device Self Time(us)"] == 0 and relu["Kernel Details"] in ("", None)
    assert relu["Device Self Time(us).1"] == pytest.approx(15.5003125, abs=5e-4)
    assert relu["Kernel Details.1"] == "aclnnInplaceRelu_Relu_Relu, 11055, AI_CORE [duration: 15.5]\n"


@pytest.fixture(scope="module")
def l1_events() -> list[dict]:
    """The level1 text sample's trace events, read once for the edits below."""
    from conftest import SAMPLES

    src = SAMPLES / TEXT_L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    if not src.is_file():
        pytest.skip(f"sample data not found at {src}")
    return json.loads(src.read_text(encoding="utf-8"))


def _write_trace(events: list[dict], tmp_path: Path) -> Path:
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    return path


def test_api_compare_of_a_step_holding_a_nested_profiler_step(samples: Path, l1_events, tmp_path: Path) -> None:
    """reference-2 §7: with a step, the APIs are the step's top-layer ops and all their descendants, ProfilerStep
    nodes excepted, also one nested inside the step. Synthetic edit of the level1 sample (its only step is
    ProfilerStep#50; no sample holds two): a ProfilerStep#51 added from Optimizer.zero_grad's start (a top-level
    child of step 50: every earlier child ended before it) to step 50's end, placed just before zero_grad in the
    file so it opens first. It nests inside step 50 (§2.2), so step 50's APIs are still every op of the trace but
    the two steps, and the new step itself is no API. Expected from the raw JSON: per op name, the count of
    cpu_op events and round(sum of durations / 1000, 2) ms, the same on the unedited comparison."""
    from collections import Counter
    from decimal import Decimal

    events = [dict(e) for e in l1_events]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    (step,) = [e for e in ops if e["name"].startswith("ProfilerStep#")]
    (zero,) = [e for e in ops if e["name"] == "Optimizer.zero_grad#SGD.zero_grad"]
    step_end = Decimal(step["ts"]) + Decimal(str(step["dur"]))
    assert (step["name"], zero["ts"], step_end) == ("ProfilerStep#50", "1736408883729569.750",
                                                    Decimal("1736408883842726.510"))
    nested = dict(step, name="ProfilerStep#51", ts=zero["ts"], dur=113156.76)  # 842726.510 - 729569.750
    events.insert(events.index(zero), nested)
    edited = _write_trace(events, tmp_path)
    calls = Counter(e["name"] for e in ops if e is not step)
    total_ms = {n: round(sum(Decimal(str(e["dur"])) for e in ops if e["name"] == n and e is not step) / 1000, 2)
                for n in calls}
    res = compare(str(edited), str(samples / TEXT_L1), enable_api_compare=True, base_step=50, comparison_step=50)
    sheet = res.sheet("ApiCompare")
    assert sorted(sheet["api name"]) == sorted(calls)  # neither ProfilerStep#50 nor ProfilerStep#51
    got = {r["api name"]: (r["Calls"], r["Calls.1"], r["Total Duration(ms)"], r["Total Duration(ms).1"])
           for _, r in sheet.iterrows()}
    assert got == {n: (calls[n], calls[n], float(total_ms[n]), float(total_ms[n])) for n in calls}
    assert (sheet["Self Time(ms)"] == sheet["Self Time(ms).1"]).all()


def test_operators_of_a_step_holding_a_nested_profiler_step(samples: Path, l1_events, tmp_path: Path) -> None:
    """The edit above (a ProfilerStep#51 nested in step 50 from Optimizer.zero_grad's start to step 50's end), both
    sides bare trace_view.json files: with step 50 asked for, the nested marker was one top-layer operator,
    ``ProfilerStep#51``, holding zero_grad and the optimizer step, which read as gone from the unedited side. It is
    replaced by its children, which stay step 50's (a step is chosen by its top-level marker, reference-2 §2.3):
    the operator sheets are the unedited trace's against itself; step 51, held by no top-level marker, still has
    no operator."""
    events = [dict(e) for e in l1_events]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    (step,) = [e for e in ops if e["name"].startswith("ProfilerStep#")]
    (zero,) = [e for e in ops if e["name"] == "Optimizer.zero_grad#SGD.zero_grad"]
    events.insert(events.index(zero), dict(step, name="ProfilerStep#51", ts=zero["ts"], dur=113156.76))
    edited = _write_trace(events, tmp_path)
    (tmp_path / "intact").mkdir()
    bare = _write_trace(l1_events, tmp_path / "intact")  # a bare trace as the edit is (no kernel shapes)
    flags = {"enable_operator_compare": True, "disable_module": True, "base_step": 50, "comparison_step": 50}
    got = compare(str(edited), str(bare), **flags)
    intact = compare(str(bare), str(bare), **flags)
    for name in ("OperatorCompareStatistic", "OperatorCompare"):
        assert got.sheet(name).equals(intact.sheet(name)), name
    stats = got.sheet("OperatorCompareStatistic")
    assert "Optimizer.zero_grad#SGD.zero_grad" in set(stats["Operator Name"])
    assert not stats["Operator Name"].str.contains("ProfilerStep#").any()
    none = compare(str(edited), str(bare), **{**flags, "base_step": 51, "comparison_step": 50})
    assert none.sheet("OperatorCompareStatistic")["Base Operator Number"].sum() == 0


ADDMM_BWD_TS = "1736408883730796.290"  # AddmmBackward0: the fwdbwd flow end of the forward nn.Module: Linear_2
LINEAR_2_BWD = "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_2"


def _addmm_backward(events: list[dict]) -> tuple[list[dict], dict[str, float]]:
    """AddmmBackward0's ops (start order) and the durations (us) of the kernels launched at each flow-start ts in
    its span, from the raw events (flow start -> flow end by id -> the kernel at the end's pid/tid/ts)."""
    from decimal import Decimal

    (op,) = [e for e in events if e.get("cat") == "cpu_op" and e["ts"] == ADDMM_BWD_TS]
    lo, hi = Decimal(op["ts"]), Decimal(op["ts"]) + Decimal(str(op["dur"]))
    inside = sorted((e for e in events if e.get("cat") == "cpu_op" and e["tid"] == op["tid"]
                     and lo <= Decimal(e["ts"]) <= hi), key=lambda e: Decimal(e["ts"]))
    ends = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e.get("ph") == "f"}
    kernels = {(e["pid"], e["tid"], e["ts"]): e["dur"] for e in events if e.get("ph") == "X" and e.get("cat") is None}
    out: dict[str, float] = {}
    for s in events:
        if s.get("cat") == "async_npu" and s.get("ph") == "s" and lo <= Decimal(s["ts"]) <= hi:
            f = ends[s["id"]]
            out[s["ts"]] = out.get(s["ts"], 0) + kernels[(f["pid"], f["tid"], f["ts"])]
    return inside, out


def _stat_rows(res, module: str):
    stat = res.sheet("ModuleCompareStatistic")
    rows = stat[stat["Module Name"] == module]
    return {r["Operator Name"]: r for _, r in rows.iterrows()}


def test_an_op_starting_as_the_previous_one_ends_is_no_top_layer_op_of_its_module(l1_events, tmp_path) -> None:
    """reference-2 §3.2 step 8: a module's ops nest by the §2.2 cursor rule, where an op starting exactly at the
    open op's end is still its child, so it is no top-layer op of the module; and (step 9) the kernels launched
    inside it go to no op, since the next top-layer op has not started by then. Synthetic edit of the level1
    sample (no sample has the tie): in AddmmBackward0 (the backward module of Linear_2) the first aten::t is
    lengthened from 33.48 to 36.21 us so it ends at 730842.190, the start of the first aten::mm. Expected from the
    raw events: the module's aten::mm row keeps only the second mm's two kernels (flows at 730952.480) and its
    count drops from 2 to 1; the [ TOTAL ] self time (both mm's four kernels) is unchanged."""
    events = [dict(e) for e in l1_events]
    inside, launched = _addmm_backward(events)
    names = [(e["name"], e["ts"]) for e in inside if e["name"] in ("aten::t", "aten::mm")]
    assert names == [("aten::t", "1736408883730805.980"), ("aten::mm", "1736408883730842.190"),
                     ("aten::t", "1736408883730903.540"), ("aten::mm", "1736408883730928.870"),
                     ("aten::t", "1736408883730964.130")]
    assert sorted(launched) == ["1736408883730885.000", "1736408883730952.480"]
    first_t = next(e for e in inside if e["name"] == "aten::t")
    assert first_t["dur"] == 33.48
    first_t["dur"] = 36.21  # 730805.980 + 36.210 = 730842.190
    edited = _write_trace(events, tmp_path)
    from conftest import SAMPLES

    res = compare(str(edited), str(SAMPLES / TEXT_L1), enable_operator_compare=True)
    rows = _stat_rows(res, LINEAR_2_BWD)
    both = sum(launched.values()) / 1000
    second = launched["1736408883730952.480"] / 1000
    mm, total = rows["aten::mm"], rows["[ TOTAL ]"]
    assert (mm["Number"], mm["Number.1"]) == (1, 2)
    # 1e-5 ms: the loader keeps whole ns of the sub-ns kernel durations
    assert [mm["Device Self Time(ms)"], mm["Device Self Time(ms).1"]] == pytest.approx([second, both], abs=1e-5)
    assert [total["Device Self Time(ms)"], total["Device Self Time(ms).1"]] == pytest.approx([both, both], abs=1e-5)


def test_backward_module_takes_the_later_op_at_the_flow_end_instant(l1_events, tmp_path) -> None:
    """reference-2 §3.2 steps 3 and 7: the op at a fwdbwd flow's end is looked up by ts, a later op (in file order)
    at the same ts overwriting an earlier one; it gives the backward module its span. Synthetic edit of the level1
    sample (no sample has two ops at a flow-end instant; GPU traces at 1 us often do): AddmmBackward0's first
    aten::t, which precedes it in the file (the export writes a child before its parent), is moved to start with
    it, at 730796.290, keeping its end (dur 33.48 + 9.69 = 43.17 us). AddmmBackward0 still wins, so the backward
    module of Linear_2 keeps its span and the four kernels launched in it (raw events); aten::t's span would hold
    none of them."""
    events = [dict(e) for e in l1_events]
    inside, launched = _addmm_backward(events)
    addmm, first_t = inside[0], inside[1]
    assert (addmm["name"], first_t["name"], first_t["ts"], first_t["dur"]) == (
        "AddmmBackward0", "aten::t", "1736408883730805.980", 33.48)
    assert events.index(first_t) < events.index(addmm)
    first_t["ts"], first_t["dur"] = ADDMM_BWD_TS, 43.17
    edited = _write_trace(events, tmp_path)
    from conftest import SAMPLES

    res = compare(str(edited), str(SAMPLES / TEXT_L1), enable_operator_compare=True)
    total = _stat_rows(res, LINEAR_2_BWD)["[ TOTAL ]"]
    both = sum(launched.values()) / 1000  # ms; 1e-5: the loader keeps whole ns of the sub-ns kernel durations
    assert [total["Device Self Time(ms)"], total["Device Self Time(ms).1"]] == pytest.approx([both, both], abs=1e-5)


def test_comparison_only_module_starting_with_a_paired_one_comes_after_it(l1_events, tmp_path) -> None:
    """reference-2 §3.6: before a pair, only the comparison-only modules starting strictly before its comparison
    module are emitted, so one starting at the same instant comes after the pair. Synthetic edit of the
    comparison (no sample has two modules starting together): nn.Module: ReLU_5 renamed GELU_0, moved to start
    with Dropout_1 (716605.220) and placed after it in the file, so it opens inside Dropout_1 (§3.2 cursor rule)
    as the comparison-only Dropout_1/GELU_0. By the rule: Linear_0, ReLU_5 (base-only, emitted at its place),
    Dropout_1, then Dropout_1/GELU_0 (its start is not before Dropout_1's), then Linear_1."""
    from conftest import SAMPLES

    events = [dict(e) for e in l1_events]
    relu = next(e for e in events if e.get("name") == "nn.Module: ReLU_5")
    drop = next(e for e in events if e.get("name") == "nn.Module: Dropout_1")
    assert (relu["ts"], drop["ts"]) == ("1736408883716203.490", "1736408883716605.220")
    events.remove(relu)
    events.insert(events.index(drop) + 1, dict(relu, name="nn.Module: GELU_0", ts=drop["ts"]))
    comp = _write_trace(events, tmp_path)
    res = compare(str(SAMPLES / TEXT_L1), str(comp), enable_operator_compare=True)
    detail = res.sheet("ModuleCompare")
    names = detail.loc[detail["Operator Name"] == "TOTAL", "Module Name"].tolist()
    seq = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1"
    i = names.index(f"{seq}/ Linear_0")
    assert names[i:i + 5] == [f"{seq}/ Linear_0", f"{seq}/ ReLU_5", f"{seq}/ Dropout_1", f"{seq}/ Dropout_1/ GELU_0",
                              f"{seq}/ Linear_1"]


def test_kernel_without_a_task_id_prints_none(l1_events, tmp_path) -> None:
    """reference-2 §2.1: an NPU kernel line is ``name, Task Id, Task Type [duration: us]`` with the original's
    ``args.get("Task Id")``, so a kernel without that arg prints None. Synthetic edit of the level1 trace (every
    sample kernel has a Task Id): ReLU_0's one kernel (aclnnInplaceRelu_Relu_Relu, Task Id 11055, AI_CORE,
    15.5003125 us as the test above reads it from the raw JSON) loses its "Task Id" arg."""
    events = [dict(e) for e in l1_events]
    (kernel,) = [e for e in events if e.get("ph") == "X" and e.get("name") == "aclnnInplaceRelu_Relu_Relu"
                 and e.get("args", {}).get("Task Id") == 11055]
    assert (kernel["dur"], kernel["args"]["Task Type"]) == (15.5003125, "AI_CORE")
    kernel["args"] = {k: v for k, v in kernel["args"].items() if k != "Task Id"}
    edited = _write_trace(events, tmp_path)
    from conftest import SAMPLES

    src = SAMPLES / TEXT_L1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    sheet = compare(str(edited), str(src), enable_operator_compare=True).sheet("ModuleCompare")
    rows = sheet[sheet["Module Name"] == "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ ReLU_0"]
    relu = rows[rows["Operator Name"] == "aten::relu_"].iloc[0]
    assert relu["Kernel Details"] == "aclnnInplaceRelu_Relu_Relu, None, AI_CORE [duration: 15.5]\n"
    assert relu["Kernel Details.1"] == "aclnnInplaceRelu_Relu_Relu, 11055, AI_CORE [duration: 15.5]\n"


def test_operator_match_rate_counts_the_pairs_left_after_drill_down(caplog) -> None:
    """The match-rate totals count each side's operators in the final pair list, the one the sheets show: after
    the --max_kernel_num drill-down (reference-2 §2.5) a drilled op is replaced by its children, so the totals are
    not the top-layer counts, or a self-compare would match more ops than it has. The AlexNet H200 trace against
    itself with --max_kernel_num 9 (its ConvolutionBackward0 ops launch 10 kernels, test_align_rules): every op
    matches itself, so matched = base total = comparison total = the OperatorCompare rows."""
    alexnet = Path(__file__).parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        res = compare(str(alexnet), str(alexnet), enable_operator_compare=True, disable_module=True,
                      max_kernel_num=9)
    n = len(res.sheet("OperatorCompare"))
    rate = res.frames["match_rate"].iloc[0]
    assert rate[["matched", "base_total", "comparison_total"]].tolist() == [n, n, n]
    drilled = ("a pair with more than 9 kernels on a side counted as the operators inside it, as max_kernel_num "
               "asks; an unpaired operator stays whole")
    # one input on both sides: its rate said once (it read "{n}/{n} base, {n}/{n} comparison")
    assert f"Top-level operators matched: {n}/{n} both sides ({drilled})" in caplog.messages
    detail = res.guards.set_index("Check").loc["operator match rate", "Detail"]
    assert detail.startswith(f"matched / compared top-level operators per side (operator comparison; {drilled})")


def test_backward_pid_is_the_first_fwdbwd_flow_ends(l1_events, tmp_path) -> None:
    """reference-2 §3.2 step 2: the backward ops are looked up in the process of the FIRST fwdbwd flow's end only.
    Synthetic edit of the level1 trace (every sample's fwdbwd flows end in one process): the end of the first
    fwdbwd flow in the file (id 1350) is moved to a process without ops, so no flow end finds its backward op and
    the edited side has no [ BACKWARD ] module; the unedited side keeps its 27 (one per flow: 27 "f" events)."""
    events = [dict(e) for e in l1_events]
    flows = [e for e in events if e.get("cat") == "fwdbwd"]
    assert [(e["ph"], e["id"]) for e in flows[:2]] == [("s", 1350), ("f", 1350)]
    assert sum(e["ph"] == "f" for e in flows) == 27 and len({e["pid"] for e in flows}) == 1
    flows[1]["pid"] += 1
    assert not any(e.get("ph") == "X" and e["pid"] == flows[1]["pid"] for e in events)
    edited = _write_trace(events, tmp_path)
    from conftest import SAMPLES

    res = compare(str(edited), str(SAMPLES / TEXT_L1), enable_operator_compare=True)
    stat = res.sheet("ModuleCompareStatistic")
    bwd = stat[(stat["Operator Name"] == "[ TOTAL ]") & stat["Module Name"].str.startswith("/[ BACKWARD ]")]
    assert (bwd["Number"].sum(), bwd["Number.1"].sum()) == (0, 27)


def test_kernels_of_one_launch_instant_keep_the_flow_order(l1_events, tmp_path) -> None:
    """reference-2 §2.1 / §3.2 step 4: the kernels of one flow-start instant are listed in flow-dictionary order
    (the order in which the file first names each flow id), not in the kernels' own order. Synthetic edit of the
    level1 trace (in the sample the two orders agree): the two async_npu flows starting at 730885.000 (the first
    aten::mm of AddmmBackward0) swap places in the file, so the MatMulV2 kernel's flow (ending at 731113.701)
    comes before the MemSet kernel's (ending at 731013.819). The module op row lists them in that order."""
    events = [dict(e) for e in l1_events]
    memset, matmul = 1736408883731013819, 1736408883731113701  # the two flow ids
    pos = [i for i, e in enumerate(events) if e.get("cat") == "async_npu" and e.get("id") in (memset, matmul)]
    assert [(events[i]["id"], events[i]["ph"]) for i in pos] == [(memset, "s"), (memset, "f"), (matmul, "s"),
                                                                  (matmul, "f")]
    assert pos == list(range(pos[0], pos[0] + 4))
    a, b = events[pos[0]:pos[0] + 2], events[pos[0] + 2:pos[0] + 4]
    events[pos[0]:pos[0] + 4] = b + a
    edited = _write_trace(events, tmp_path)
    from conftest import SAMPLES

    res = compare(str(edited), str(SAMPLES / TEXT_L1), enable_operator_compare=True)
    detail = res.sheet("ModuleCompare")
    rows = detail[(detail["Module Name"] == LINEAR_2_BWD) & (detail["Operator Name"] == "aten::mm")]
    first = rows.iloc[0]

    def names(text):
        return [line.split(",")[0] for line in text.splitlines()]

    assert names(first["Kernel Details"]) == ["aclnnMm_MatMulCommon_MatMulV2", "aclnnMm_MatMulCommon_MemSet"]
    assert names(first["Kernel Details.1"]) == ["aclnnMm_MatMulCommon_MemSet", "aclnnMm_MatMulCommon_MatMulV2"]


RELU_0 = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ ReLU_0"


def _frames_around(events: list[dict], tid: int, ts: str) -> list[str]:
    """Names of the call functions (python functions other than nn.Module ones) of thread ``tid`` strictly
    containing ``ts``, outermost first: the chain reference-2 §3.4 makes a module's call stack."""
    from decimal import Decimal

    t = Decimal(ts)
    inside = [e for e in events if e.get("cat") == "python_function" and e["tid"] == tid
              and not e["name"].lower().startswith("nn.module:")
              and Decimal(e["ts"]) < t < Decimal(e["ts"]) + Decimal(str(e["dur"]))]
    return [e["name"] for e in sorted(inside, key=lambda e: Decimal(e["ts"]))]


def _module_stack(res, module: str) -> str:
    stat = res.sheet("ModuleCompareStatistic")
    return stat[(stat["Module Name"] == module) & (stat["Operator Name"] == "[ TOTAL ]")].iloc[0]["Base Call Stack"]


def test_a_frame_starting_with_a_module_is_not_its_call_stack(l1_events, tmp_path) -> None:
    """reference-2 §3.4: a module's call stack is the chain of the deepest call function STRICTLY containing its
    start, so a frame starting at the same instant is not in it. Synthetic edit of the level1 trace (no sample
    frame starts with a module; GPU traces at 1 us can): the innermost frame around nn.Module: ReLU_0,
    container.py(213): forward, is made to start with ReLU_0 (703004.720), keeping its end. Expected from the raw
    events: the chain of frames around that instant, the 14 outer ones of before (<string>(1): <module> ..
    the module.py(1520): _call_impl that alexnet.py(47): forward calls), without container.py(213): forward."""
    events = [dict(e) for e in l1_events]
    module = next(e for e in events if e.get("name") == "nn.Module: ReLU_0")
    before = _frames_around(events, module["tid"], module["ts"])
    assert (len(before), before[-1]) == (15, "torch/nn/modules/container.py(213): forward")
    frame = next(e for e in events if e.get("cat") == "python_function" and e["name"] == before[-1]
                 and e["tid"] == module["tid"] and e["ts"] == "1736408883701933.550")
    assert (module["ts"], frame["dur"]) == ("1736408883703004.720", 10281.53)
    frame["ts"], frame["dur"] = module["ts"], 9210.36  # 701933.550 + 10281.530 - 703004.720
    after = _frames_around(events, module["tid"], module["ts"])
    assert after == before[:-1]
    edited = _write_trace(events, tmp_path)
    res = compare(str(edited), str(edited), enable_operator_compare=True)
    assert _module_stack(res, RELU_0) == ";\n".join(after)


def test_sides_without_ops_get_no_with_stack_warning(l1_events, tmp_path, caplog) -> None:
    """Module sheets of two sides without any torch op hold TOTAL rows only: no op cell could show a call stack,
    and "Can't find any torch op" was already logged for each, so the with_stack hint is not added. Synthetic
    edit of the level1 trace (a capture of the python functions without the CPU ops; no sample lacks them on
    both sides): every cpu_op event removed, the same edited file on both sides."""
    events = [e for e in l1_events if e.get("cat") != "cpu_op"]
    edited = _write_trace(events, tmp_path)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(edited), str(edited), enable_operator_compare=True)
    detail = res.sheet("ModuleCompare")
    assert len(detail) and set(detail["Operator Name"]) == {"TOTAL"}
    assert f"Can't find any torch op in the file: {edited} (both sides)" in caplog.messages
    assert WITH_STACK not in caplog.messages
