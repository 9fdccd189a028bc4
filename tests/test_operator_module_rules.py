"""Operator, module and API sheet rules that a mutation audit found untested: match-rate totals of
each side, the row order of one-sided modules, the with_stack warning of DB inputs, and ApiCompare
with a step on two sides without torch ops."""

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
    assert "operators matched: 8/9 base, 8/8 comparison" in caplog.messages
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
    assert "modules matched: 51/55 base, 51/54 comparison" in caplog.messages
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
