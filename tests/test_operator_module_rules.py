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
