"""``--transparent_op`` (``transparent_op=`` of ``compare()``): top-level ops of the named names are opened for the
operator pairing, as if their events were removed from the trace. Reference pair 4's GPU side (hta's PARAM
AlexNet) holds every op under PARAM's ``[param|cuda]`` annotation and paired nothing; the one-sided wrapper note
said to edit that event out of a 100 MB JSON. Each run with the option is set against a run on a copy of the
trace with the events removed by a short JSON edit here, and the operator figures against sums over the raw JSON
(kernels by correlation id), never against our sheets."""

from __future__ import annotations

import ast
import gzip
import json
import logging
import shlex
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from cliutil import run_inproc

from msprof_compare import cli
from msprof_compare.api import compare
from msprof_compare.errors import ProfileError, UsageError

GPU = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
NPU = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
WRAPPER = "[param|cuda]"
#: the AlexNet trace recorded for the project (tests/data/kineto/README.md): ProfilerStep#50 holds the
#: ``DistributedDataParallel.forward`` annotation around the forward ops, with modules and memory recorded
H200 = Path(__file__).parent / "data" / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
DDP = "DistributedDataParallel.forward"
#: the sheets that pair top-level ops; ApiCompare times every host call by name, the opened op too
PAIRED = ("OperatorCompareStatistic", "OperatorCompare", "MemoryCompareStatistic", "MemoryCompare")
MODULES = ("ModuleCompareStatistic", "ModuleCompare", "MemoryCompareStatistic", "MemoryCompare")
OP_CATS = ("cpu_op", "user_annotation", "cuda_runtime")  # the host events these traces have as ops
#: the calls that launch a kernel: CUDA's runtime, and its driver (cuLaunchKernel, which the op around it owns)
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")


def _ns(v: Decimal) -> int:
    return int(v * 1000)


def _load(path: Path) -> dict:
    return json.loads(gzip.open(path).read(), parse_float=Decimal)


def _without(doc: dict, name: str, tmp_path: Path, stem: str) -> Path:
    """A copy of the trace without the host op events named ``name`` (its GPU-side annotation of the same name, a
    ``gpu_user_annotation``, is no op and stays)."""
    ev = doc["traceEvents"]
    kept = [e for e in ev if not (e.get("ph") == "X" and e.get("name") == name and e.get("cat") in OP_CATS)]
    assert len(kept) == len(ev) - 1  # one event of that name in either trace
    out = tmp_path / f"{stem}.pt.trace.json"
    out.write_text(json.dumps({**doc, "traceEvents": kept}, default=str), encoding="utf-8")
    return out


def _top_ops(events: list[dict], skip: str, within: str | None = None) -> list[dict]:
    """The op events no other op event of their thread holds once those named ``skip`` are taken out (of the whole
    trace, or of those inside the one event named ``within``), nesting by start and end by hand: the ops the
    pairing compares in the trace without ``skip``'s events."""
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in OP_CATS and e["name"] != skip]
    if within is not None:
        (outer,) = [e for e in ops if e["name"] == within]
        lo, hi = _ns(outer["ts"]), _ns(outer["ts"]) + _ns(outer["dur"])
        ops = [e for e in ops if e is not outer and lo <= _ns(e["ts"]) <= hi]
    top, end = [], {}
    for e in sorted(ops, key=lambda e: (_ns(e["ts"]), -_ns(e["dur"]))):
        if _ns(e["ts"]) > end.get(e["tid"], -1):  # an op starting as the open one ends is its child (ref-2 §2.2)
            top.append(e)
            end[e["tid"]] = _ns(e["ts"]) + _ns(e["dur"])
    return top


def _device_ns_by_name(events: list[dict], ops: list[dict]) -> dict[str, tuple[int, int]]:
    """{name: (ops, ns of the kernels and copies launched inside them)}: a kernel's runtime or driver call (same
    correlation id) starting inside the op, on its thread."""
    calls = {e["args"]["correlation"]: (e["tid"], _ns(e["ts"])) for e in events
             if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})}
    launched = [(*calls[e["args"]["correlation"]], _ns(e["dur"])) for e in events
                if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")
                and e["args"].get("correlation") in calls]
    out: dict[str, tuple[int, int]] = {}
    for op in ops:
        lo, hi = _ns(op["ts"]), _ns(op["ts"]) + _ns(op["dur"])
        n, ns = out.get(op["name"], (0, 0))
        out[op["name"]] = (n + 1, ns + sum(d for tid, t, d in launched if tid == op["tid"] and lo <= t <= hi))
    return out


def test_pair4_transparent_wrapper_equals_the_trace_without_it(samples, tmp_path, caplog):
    doc = _load(samples / GPU)
    edited = _without(doc, WRAPPER, tmp_path, "alexnet_without_param_cuda")
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        opened = compare(str(samples / GPU), str(samples / NPU), transparent_op=WRAPPER)
    matched = [m for m in caplog.messages if m.startswith("Top-level operators matched:")]
    removed = compare(str(edited), str(samples / NPU))
    for name in PAIRED:
        assert opened.sheet(name).equals(removed.sheet(name)), name
    # ApiCompare keeps the annotation: a host call that took its time, which the option does not hide
    api = opened.sheet("ApiCompare")
    assert WRAPPER in api.iloc[:, 1].tolist() and WRAPPER not in removed.sheet("ApiCompare").iloc[:, 1].tolist()
    assert "one_sided_wrapper" not in opened.frames["contributors"].attrs  # the note is gone with the wrapper
    # the base figures of the operator statistic against the raw trace: the annotation's children, by name
    ev = doc["traceEvents"]
    want = _device_ns_by_name(ev, _top_ops(ev, WRAPPER))
    assert want["aten::to"][1] == 55_503_000  # the batch's host-to-device copies (tests/test_one_sided_wrapper.py)
    stat = opened.sheet("OperatorCompareStatistic").set_index("Operator Name")
    got = stat[stat["Base Operator Number"] > 0]
    assert WRAPPER not in stat.index
    assert sorted(got.index) == sorted(want)
    for name, (n, ns) in want.items():
        assert got.loc[name, "Base Operator Number"] == n, name
        assert got.loc[name, "Base Device Duration(ms)"] == pytest.approx(ns / 1e6, abs=1e-9), name
    # 4 aten::to of each side paired, where the run without the option paired none of the 2 base ops
    assert matched == [f"Top-level operators matched: 4/{sum(n for n, _ in want.values())} base, 4/115 comparison"]


def test_pair4_advice_is_the_command_that_pairs_the_ops(samples, tmp_path, capsys):
    """The match-rate check's advice, pasted as the shell splits it, on both command-line faces: the workbook then
    holds the annotation's ops (aten::to: 55.503 ms, the copies launched inside it, from the raw trace)."""
    res = compare(str(samples / GPU), str(samples / NPU), enable_operator_compare=True)
    detail = res.guards.set_index("Check").loc["operator match rate", "Detail"]
    advice = detail.rpartition("run again with the transparent_op option: ")[2]
    assert advice == "--transparent_op '[param|cuda]'"
    flags = shlex.split(advice)
    code, _, err = run_inproc(capsys, "-bp", str(samples / GPU), "-d", str(samples / NPU), "--enable_operator_compare",
                              *flags, "-o", str(tmp_path / "cli"))
    assert code == 0, err
    # the script face, the flag given twice (repeatable: no "given 2 times" warning)
    code = cli.script_main([str(samples / GPU), str(samples / NPU), "--enable_operator_compare", *flags, *flags,
                            "-o", str(tmp_path / "script")])
    _, err2 = capsys.readouterr()
    assert code == 0 and "given 2 times" not in err2, err2
    from xlsxutil import read_xlsx

    for face in ("cli", "script"):
        (book,) = (tmp_path / face).glob("*.xlsx")
        stat = read_xlsx(book, sheet_name="OperatorCompareStatistic", header=2).set_index("Operator Name")
        assert stat.loc["aten::to", "Base Device Duration(ms)"] == pytest.approx(55.503, abs=1e-9)
        assert WRAPPER not in stat.index


def test_excerpt_transparent_annotation_in_a_step_equals_the_trace_without_it(tmp_path):
    """The project's AlexNet trace (66 KB): ``DistributedDataParallel.forward`` lies inside ProfilerStep#50, under
    nn.Module events and with memory records. The option opens it in the step, for the module, operator and memory
    sheets; the comparison side is the trace without it, so both sides then pair every op."""
    doc = _load(H200)
    edited = _without(doc, DDP, tmp_path, "alexnet_h200_without_ddp_forward")
    for kw, sheets in (({}, MODULES), ({"disable_module": True}, PAIRED)):
        opened = compare(str(H200), str(edited), transparent_op=DDP, **kw)
        removed = compare(str(edited), str(edited), **kw)
        plain = compare(str(H200), str(edited), **kw)
        for name in sheets:
            assert opened.sheet(name).equals(removed.sheet(name)), name
            assert not opened.sheet(name).equals(plain.sheet(name)), name  # the option changed it
    stat = opened.sheet("OperatorCompareStatistic").set_index("Operator Name")
    ev = doc["traceEvents"]
    want = _device_ns_by_name(ev, _top_ops(ev, DDP, "ProfilerStep#50"))
    assert DDP not in stat.index
    for name, (n, ns) in want.items():  # the forward's top-level ops, paired one for one with the copy's
        row = stat.loc[name]
        assert row["Base Operator Number"] == row["Comparison Operator Number"] == n, name
        assert row["Base Device Duration(ms)"] == pytest.approx(ns / 1e6, abs=1e-9), name
        assert row["Comparison Device Duration(ms)"] == row["Base Device Duration(ms)"], name


def test_name_that_opens_nothing_is_one_error_line_and_nothing_written(samples, tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run_inproc(capsys, "-bp", str(samples / GPU), "-d", str(samples / NPU),
                              "--transparent_op", "[param|cud]", "-o", str(out))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and len(errors) == 1, err
    assert errors[0].startswith("error: --transparent_op '[param|cud]' names no operator of either side (")
    assert errors[0].endswith("so it opens nothing (the op's whole name, case-sensitive, as the OperatorCompare "
                              "sheet's Operator Name gives it; close names: '[param|cuda]', '[param|clear_cache]')")
    assert not out.exists() or not any(out.iterdir())
    # compare() names its keyword
    with pytest.raises(ProfileError, match=r"^transparent_op='aten::nothing' names no operator of either side"):
        compare(str(samples / GPU), str(samples / NPU), transparent_op=["aten::nothing"], enable_operator_compare=True)
    # two names that open nothing are said together, in the plural; a name that opens an op beside them is not
    with pytest.raises(ProfileError) as two:
        compare(str(samples / GPU), str(samples / NPU), transparent_op=["aten::nothing", WRAPPER, "[param|cud]"],
                enable_operator_compare=True)
    said = str(two.value)
    assert said.startswith("transparent_op='aten::nothing' and transparent_op='[param|cud]' name no operator "
                           "of either side (")
    assert ", so they open nothing (the op's whole name" in said


@pytest.mark.parametrize(("kw", "sheet"), [
    ({}, "ModuleCompare"),
    ({"disable_details": True}, "ModuleCompareStatistic"),
    ({"disable_module": True}, "OperatorCompare"),
    ({"disable_module": True, "disable_details": True}, "OperatorCompareStatistic"),
    ({"enable_memory_compare": True}, "MemoryCompare"),
])
def test_refusal_hint_names_the_sheet_the_run_writes(kw, sheet):
    """The refusal's hint said "as the OperatorCompare sheet's Operator Name gives it" also where the run makes no
    OperatorCompare: the AlexNet H200 excerpt (modules recorded) gets the module sheets in a default run, the
    statistic sheets alone under ``--disable_details``, the memory sheets alone from a memory comparison. The run
    without the misspelt name shows the sheet the hint now names is one it writes (and OperatorCompare is not)."""
    plain = compare(str(H200), str(H200), **kw)
    assert sheet in plain.sheet_names and ("OperatorCompare" in plain.sheet_names) == (sheet == "OperatorCompare")
    with pytest.raises(ProfileError) as refused:
        compare(str(H200), str(H200), transparent_op="DistributedDataParallel.forwrd", **kw)
    assert (f"so it opens nothing (the op's whole name, case-sensitive, as the {sheet} sheet's Operator Name gives "
            "it; close names: 'DistributedDataParallel.forward'") in str(refused.value)


@pytest.mark.parametrize(("value", "said"), [
    ("", "Invalid param, transparent_op is empty (got ''); leave it out or give the whole name of an op"),
    (["[param|cuda]", " "], "Invalid param, transparent_op is blank (got ' ')"),
    (3, "Invalid param, transparent_op must be an op name or a list of op names (got 3)"),
    ("x" * 201, "Invalid param, the length of transparent_op exceeded the maximum value 200"),
])
def test_bad_values_are_usage_errors(value, said):
    with pytest.raises(UsageError) as info:
        compare("a", "b", transparent_op=value)
    assert str(info.value).startswith(said)


def test_option_unread_without_the_comparisons_that_pair_ops(samples, caplog):
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(samples / GPU), str(samples / NPU), enable_profiling_compare=True, transparent_op=WRAPPER)
    assert ("The transparent_op parameter is ignored: it only takes effect when enable_operator_compare or "
            "enable_memory_compare is enabled.") in caplog.messages


#: ops of the H200 excerpt that lie only nested inside the compared ones: the backward wrapper around
#: ``aten::convolution_backward`` (inside its ``autograd::engine::evaluate_function`` op), and ``aten::linear``
#: around ``aten::t`` and ``aten::addmm`` (inside ``DistributedDataParallel.forward``)
NESTED = ("ConvolutionBackward0", "aten::linear")


def _events_named(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e.get("ph") == "X" and e.get("name") == name and e.get("cat") in OP_CATS]


@pytest.mark.parametrize("name", NESTED)
def test_excerpt_nested_op_is_opened_by_the_drill_down(tmp_path, name):
    """A name found only nested is taken, and the ``--max_kernel_num`` drill-down opens it where it reaches it:
    each pair-holding sheet equals the run on the copy of the trace without that op's events, where the run without
    the option keeps the op whole against its children on the other side."""
    doc = _load(H200)
    ev = doc["traceEvents"]
    wrappers = _events_named(ev, name)
    assert wrappers and not any(e is t for t in _top_ops(ev, "", "ProfilerStep#50") for e in wrappers)  # nested
    edited = _without_all(doc, name, tmp_path)
    kw = {"max_kernel_num": 4, "disable_module": True}
    opened = compare(str(H200), str(edited), transparent_op=name, **kw)
    removed = compare(str(edited), str(edited), **kw)
    plain = compare(str(H200), str(edited), **kw)
    for sheet in PAIRED:
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    detail = opened.sheet("OperatorCompare")
    assert detail.iloc[:, 1].notna().all() and detail.iloc[:, 6].notna().all()  # every row a pair, as in the copy
    assert name not in detail.iloc[:, 1].tolist()
    # without the option the drill-down meets each event whole, unpaired, against its children in the copy: the
    # rows and their figures from the raw JSON (the kernels launched inside each event; its children nested by hand)
    rows = plain.sheet("OperatorCompare")
    base_only = rows[rows.iloc[:, 6].isna()]
    comparison_only = rows[rows.iloc[:, 1].isna()]
    assert base_only.iloc[:, 1].tolist() == [name] * len(wrappers)
    want_us = [_device_ns_by_name(ev, [e])[name][1] / 1000 for e in wrappers]
    assert base_only.iloc[:, 5].tolist() == pytest.approx(want_us, abs=1e-9)
    children = [c["name"] for e in wrappers for c in _children(ev, e)]
    assert comparison_only.iloc[:, 6].tolist() == children
    assert sum(want_us) == pytest.approx({"ConvolutionBackward0": 976.8, "aten::linear": 341.759}[name], abs=1e-9)


def _own_memory_events(events: list[dict], name: str) -> list[dict]:
    """The device ``[memory]`` allocations inside an op called ``name`` and inside none of the ops it holds (same
    thread, nested by start and end by hand)."""
    mem = [e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Id", -1) >= 0
           and e["args"].get("Bytes", 0) > 0]
    out = []
    for op in _events_named(events, name):
        lo, hi = _ns(op["ts"]), _ns(op["ts"]) + _ns(op["dur"])
        kids = [(_ns(c["ts"]), _ns(c["ts"]) + _ns(c["dur"])) for c in _children(events, op)]
        out += [m for m in mem if m["tid"] == op["tid"] and lo <= _ns(m["ts"]) <= hi
                and not any(a <= _ns(m["ts"]) <= b for a, b in kids)]
    return out


@pytest.mark.parametrize("kw", [{"max_kernel_num": 4}, {}], ids=["drilled", "whole"])
def test_excerpt_opened_op_own_memory_is_its_parents_as_in_the_copy(tmp_path, kw):
    """``aten::cudnn_convolution`` (nested in ``aten::conv2d``) allocates its output and workspace itself: in the
    copy without its events those records are ``aten::_convolution``'s, which MemoryCompare's Allocated Details
    name; the option named the opened op there, the one sheet that differed from the copy."""
    name = "aten::cudnn_convolution"
    doc = _load(H200)
    ev = doc["traceEvents"]
    own = _own_memory_events(ev, name)
    assert len(own) == 9  # the five outputs and four workspaces (the first convolution takes none)
    edited = _without_all(doc, name, tmp_path)
    opened = compare(str(H200), str(edited), transparent_op=name, disable_module=True, **kw)
    removed = compare(str(edited), str(edited), disable_module=True, **kw)
    for sheet in PAIRED:
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    details = "".join(opened.sheet("MemoryCompare").iloc[:, 4].fillna("").astype(str).tolist())
    assert f"{name}, " not in details
    if not kw:  # drilled, the records leave the rows with the aten::_convolution the drill-down opens, as in the copy
        assert details.count("aten::_convolution, ") == len(own)


def test_excerpt_backward_modules_stay_found_at_an_opened_autograd_node(tmp_path):
    """What the option leaves as the trace has it: a ``fwdbwd`` flow ends at an autograd node, where the module
    sheets find the backward pseudo-module of the forward module it came from; the copy without
    ``ConvolutionBackward0``'s events loses the five Conv2d ones (one flow end a node, counted in the raw JSON)."""
    name = "ConvolutionBackward0"
    doc = _load(H200)
    ev = doc["traceEvents"]
    starts = {(e["tid"], e["ts"]) for e in _events_named(ev, name)}
    ends = [e for e in ev if e.get("cat") == "fwdbwd" and e.get("ph") == "f" and (e["tid"], e["ts"]) in starts]
    assert len(ends) == len(starts) == 5
    edited = _without_all(doc, name, tmp_path)

    def backward_convs(res) -> list[str]:
        rows = res.sheet("ModuleCompare")
        names = rows["Module Name"].fillna("").astype(str)
        return names[names.str.startswith("/[ BACKWARD ]") & names.str.contains("Conv2d_")].unique().tolist()

    opened = backward_convs(compare(str(H200), str(edited), transparent_op=name, max_kernel_num=4))
    assert sorted(opened) == [f"/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_0/ Conv2d_{i}"
                              for i in range(5)]
    assert backward_convs(compare(str(edited), str(edited), max_kernel_num=4)) == []


def _children(events: list[dict], outer: dict) -> list[dict]:
    """The op events directly inside ``outer`` (same thread), in start order, nested by start and end by hand."""
    lo, hi = _ns(outer["ts"]), _ns(outer["ts"]) + _ns(outer["dur"])
    inside = [e for e in events if e.get("ph") == "X" and e.get("cat") in OP_CATS and e is not outer
              and e["tid"] == outer["tid"] and lo <= _ns(e["ts"]) <= hi]
    out, end = [], -1
    for e in sorted(inside, key=lambda e: (_ns(e["ts"]), -_ns(e["dur"]))):
        if _ns(e["ts"]) > end:
            out.append(e)
            end = _ns(e["ts"]) + _ns(e["dur"])
    return out


def _without_all(doc: dict, name: str, tmp_path: Path) -> Path:
    """``_without`` for a name of several events."""
    ev = doc["traceEvents"]
    kept = [e for e in ev if not (e.get("ph") == "X" and e.get("name") == name and e.get("cat") in OP_CATS)]
    out = tmp_path / f"alexnet_h200_without_{name.replace(':', '_')}.pt.trace.json"
    out.write_text(json.dumps({**doc, "traceEvents": kept}, default=str), encoding="utf-8")
    return out


def test_nested_name_without_the_drill_down_is_said_and_details_list_as_the_copy(tmp_path, caplog):
    """Without ``--max_kernel_num`` a nested name changes no figure: a warning says so, with the number of ops
    (from the raw JSON), and the details of the op holding it list its kernels and memory records breadth-first as
    the copy without its events nests them (a level earlier), where the trace's order was kept."""
    name = "aten::linear"
    doc = _load(H200)
    edited = _without_all(doc, name, tmp_path)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        opened = compare(str(H200), str(edited), transparent_op=name, disable_module=True)
    said = [m for m in caplog.messages if "transparent_op" in m]
    removed = compare(str(edited), str(edited), disable_module=True)
    plain = compare(str(H200), str(edited), disable_module=True)
    for sheet in PAIRED:
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    assert not plain.sheet("OperatorCompare").equals(removed.sheet("OperatorCompare"))
    assert opened.sheet("OperatorCompareStatistic").equals(plain.sheet("OperatorCompareStatistic"))
    n = len(_events_named(doc["traceEvents"], name))
    assert n == 3
    assert said == [f"The transparent_op name 'aten::linear' names only operators nested inside top-level ones ({n} "
                    "of the base side): the operator comparison compares the top-level operator holding one whole, "
                    "its figures as without the option; the max_kernel_num option opens them where it drills into a "
                    "pair holding one"]


def test_nested_name_under_disable_details_is_not_sent_to_an_ignored_option(caplog):
    """Under ``--disable_details`` the max_kernel_num option is ignored (its own warning says so): the nested name's
    warning sent the user to it all the same; it now says that option drills only where operators are matched. The
    count is the raw JSON's, on each side (the excerpt against itself). Also kills mut72's ct_nowarn_dd (the warning
    given only without max_kernel_num)."""
    name = "aten::linear"
    n = len(_events_named(_load(H200)["traceEvents"], name))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200), str(H200), transparent_op=name, max_kernel_num=4, disable_details=True,
                enable_operator_compare=True)
    said = [m for m in caplog.messages if "transparent_op" in m]
    assert said == [f"The transparent_op name 'aten::linear' names only operators nested inside top-level ones ({n} "
                    f"of the base side and {n} of the comparison side): the operator comparison compares the "
                    "top-level operator holding one whole, its figures as without the option; the max_kernel_num "
                    "option opens them where it drills into a pair holding one, which it does only where operators "
                    "are matched (not under disable_details)"]
    assert any("max_kernel_num parameter is ignored" in m for m in caplog.messages)


def test_advice_for_a_name_the_shell_reads_bare_pastes_on_both_faces(samples, tmp_path, caplog):
    """Pair 4's GPU trace with its wrapper renamed ``ParamWrapper.run`` (a record_function label needs no shell
    quoting): the advice was ``--transparent_op ParamWrapper.run``, which compare()'s log line worded
    ``transparent_op ParamWrapper.run``, no Python. Each face's advice, taken as its face reads it (the shell's
    split, a Python literal), names the op, and the run with it pairs the ops inside as the raw trace counts them."""
    name = "ParamWrapper.run"
    doc = _load(samples / GPU)
    renamed = [e for e in doc["traceEvents"] if e.get("name") == WRAPPER]
    assert renamed
    for e in renamed:
        e["name"] = name
    gpu = tmp_path / "renamed.pt.trace.json"
    gpu.write_text(json.dumps(doc, default=str), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(str(gpu), str(samples / NPU), enable_operator_compare=True)
    lead = "run again with the transparent_op option: "
    detail = res.guards.set_index("Check").loc["operator match rate", "Detail"]
    assert shlex.split(detail.rpartition(lead)[2]) == ["--transparent_op", name]  # the workbook's: the CLI flag
    (line,) = [m for m in caplog.messages if m.startswith("  - operator match rate")]
    keyword, _, value = line.rpartition(lead)[2].partition("=")
    assert keyword == "transparent_op" and ast.literal_eval(value) == name
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        compare(str(gpu), str(samples / NPU), enable_operator_compare=True, transparent_op=ast.literal_eval(value))
    ev = doc["traceEvents"]
    base_ops = sum(n for n, _ in _device_ns_by_name(ev, _top_ops(ev, name)).values())
    assert [m for m in caplog.messages if m.startswith("Top-level operators matched:")] == [
        f"Top-level operators matched: 4/{base_ops} base, 4/115 comparison"]


def test_refusal_quotes_names_for_the_shell_on_the_cli_and_as_python_in_compare(tmp_path, capsys):
    """The refusal's names were quoted as Python does (``'DDP\\'s ...'``): a name with a quote mark of each kind or a
    backslash gave a close name that bash, pasted, read as another name or an unterminated quote. The H200
    excerpt's ``DistributedDataParallel.forward`` renamed with both quote marks, a backslash and a ``$``: bash
    runs the command the CLI's hint gives, and it opens the op; compare()'s names stay Python literals."""
    name = 'DDP\'s "forward" \\ $HOME'
    doc = _load(H200)
    renamed = _events_named(doc["traceEvents"], DDP)
    assert len(renamed) == 1
    renamed[0]["name"] = name
    trace = tmp_path / "renamed.pt.trace.json"
    trace.write_text(json.dumps(doc, default=str), encoding="utf-8")
    code, _, err = run_inproc(capsys, "-bp", str(trace), "-d", str(trace), "--transparent_op", name[:-1],
                              "-o", str(tmp_path / "refused"))
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert code == 1
    flag, _, rest = line.removeprefix("error: ").partition(" names no operator of either side (")
    assert shlex.split(flag) == ["--transparent_op", name[:-1]]
    close = rest.rpartition("close names: ")[2].removesuffix(")")
    shown = subprocess.run(["bash", "-c", f"printf '%s\\n' {close}"], capture_output=True, text=True, check=True)
    assert shown.stdout == f"{name}\n"
    out = tmp_path / "opened"
    ran = subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} -m msprof_compare compare -bp "
                          f"{shlex.quote(str(trace))} -d {shlex.quote(str(trace))} --enable_operator_compare "
                          f"--disable_module --transparent_op {close} -o {shlex.quote(str(out))}"],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert any(out.glob("*.xlsx"))
    with pytest.raises(ProfileError) as refused:
        compare(str(trace), str(trace), transparent_op=name[:-1])
    said = str(refused.value)
    keyword, _, rest = said.partition(" names no operator of either side (")
    assert keyword.startswith("transparent_op=") and ast.literal_eval(keyword.partition("=")[2]) == name[:-1]
    assert ast.literal_eval(rest.rpartition("close names: ")[2].removesuffix(")")) == name


def _two_ranks(tmp_path: Path) -> Path:
    """A folder of ranks: the H200 excerpt as rank 0, and as rank 1 without its ``DistributedDataParallel.forward``
    event (a job whose ranks run other ops, as a pipeline's stages do)."""
    doc = _load(H200)
    job = tmp_path / "job"
    job.mkdir()
    (job / "r0.pt.trace.json").write_text(json.dumps(doc, default=str), encoding="utf-8")
    kept = [e for e in doc["traceEvents"] if e not in _events_named(doc["traceEvents"], DDP)]
    assert len(kept) == len(doc["traceEvents"]) - 1
    other = {**doc, "traceEvents": kept, "distributedInfo": {**doc["distributedInfo"], "rank": 1}}
    (job / "r1.pt.trace.json").write_text(json.dumps(other, default=str), encoding="utf-8")
    return job


def test_rank_by_rank_name_found_in_some_ranks_notes_the_others(tmp_path, capsys):
    """A name one rank's ops lack failed the whole rank-by-rank run at that rank; it is refused only where no rank
    has it. Rank 0 opens DDP's forward (its statistic rows lose the op), rank 1, without it, is warned of and
    compared as without the option; a misspelt name, in no rank, is refused once every rank is compared."""
    from msprof_compare.api import compare_ranks

    job = _two_ranks(tmp_path)
    args = ["-bp", str(job), "-d", str(job), "--enable_operator_compare", "--disable_module"]
    code, _, err = run_inproc(capsys, *args, "--transparent_op", DDP, "-o", str(tmp_path / "out"))
    assert code == 0, err
    said = [line.split("] ", 1)[1] for line in err.splitlines() if "in this rank" in line]
    assert said == [f"rank 1: --transparent_op '{DDP}' names no operator of either side ({job / 'r1.pt.trace.json'}, "
                    f"{job / 'r1.pt.trace.json'}), so it opens nothing in this rank, which is compared without it "
                    "(the op's whole name, case-sensitive, as the OperatorCompare sheet's Operator Name gives it)"]
    assert [len(list((tmp_path / "out").glob(f"*rank{r}_*.xlsx"))) for r in (0, 1)] == [1, 1]
    results = dict(compare_ranks(str(job), str(job), transparent_op=DDP, enable_operator_compare=True,
                                 disable_module=True))
    plain = compare(str(job / "r0.pt.trace.json"), str(job / "r0.pt.trace.json"), enable_operator_compare=True,
                    disable_module=True)
    assert DDP in plain.sheet("OperatorCompareStatistic")["Operator Name"].tolist()
    assert DDP not in results[0].sheet("OperatorCompareStatistic")["Operator Name"].tolist()
    one = compare(str(job / "r1.pt.trace.json"), str(job / "r1.pt.trace.json"), enable_operator_compare=True,
                  disable_module=True)
    assert results[1].sheet("OperatorCompare").equals(one.sheet("OperatorCompare"))
    code, _, err = run_inproc(capsys, *args, "--transparent_op", DDP[:-1], "-o", str(tmp_path / "typo"))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and errors == [
        f"error: --transparent_op '{DDP[:-1]}' names no operator of either side in any rank compared (2), so it "
        "opens nothing (the op's whole name, case-sensitive, as a rank report's Operator Name gives it)"], err
    assert sum("in this rank, which is compared without it" in line for line in err.splitlines()) == 2
    with pytest.raises(ProfileError, match=rf"^transparent_op='{DDP[:-1]}' names no operator of either side in any "
                                           r"rank compared \(2\)"):
        list(compare_ranks(str(job), str(job), transparent_op=DDP[:-1], enable_operator_compare=True))


def test_rank_by_rank_warning_of_two_names_a_rank_lacks_says_them(tmp_path, capsys):
    """Rank 1 of ``_two_ranks`` lacks both DDP's forward (cut from it) and a misspelt name: its one line names the
    two, "they open nothing", and said the rank "is compared without it"; rank 0, which lacks the misspelt name
    alone, keeps "it"."""
    job = _two_ranks(tmp_path)
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "--enable_operator_compare",
                              "--disable_module", "--transparent_op", DDP, "--transparent_op", "nope",
                              "-o", str(tmp_path / "out"))
    assert code == 1, err  # 'nope' is in no rank: refused once both are compared
    said = [line.split("] ", 1)[1].partition(" (")[0] + " ..." + line.rpartition(", so ")[2].partition(" (")[0]
            for line in err.splitlines() if "in this rank" in line]
    assert said == ["rank 0: --transparent_op 'nope' names no operator of either side ...it opens nothing in this "
                    "rank, which is compared without it",
                    f"rank 1: --transparent_op '{DDP}' and --transparent_op 'nope' name no operator of either side "
                    "...they open nothing in this rank, which is compared without them"], err

def _enclosing(events: list[dict], inner: dict, skip: str) -> list[dict]:
    """The op events of ``inner``'s thread that hold it (outermost first), those named ``skip`` left out."""
    lo, hi = _ns(inner["ts"]), _ns(inner["ts"]) + _ns(inner["dur"])
    return sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in OP_CATS and e is not inner
                   and e["name"] != skip and e["tid"] == inner["tid"]
                   and _ns(e["ts"]) <= lo and hi <= _ns(e["ts"]) + _ns(e["dur"])), key=lambda e: -_ns(e["dur"]))


@pytest.mark.parametrize("kw", [{"max_kernel_num": 4}, {}], ids=["drilled", "whole"])
def test_excerpt_opened_op_own_kernels_list_as_its_parents_in_the_copy(tmp_path, kw):
    """``aten::mm`` two levels below the backward's ``autograd::engine::evaluate_function: AddmmBackward0`` launches a
    cutlass kernel itself, by cuLaunchKernel (a driver call, which the op around it owns). In the copy without its
    events that kernel is ``AddmmBackward0``'s own, so the breadth-first Kernel Details of the op holding it list it
    first, a level before the kernels of the runtime calls; the option listed it at aten::mm's own level, after
    them (the listed depth counted the named op's ancestors out, not the op itself; mut72's surviving st_self)."""
    name = "aten::mm"
    doc = _load(H200)
    ev = doc["traceEvents"]
    driven = {}  # kernel name -> the op chain holding its cuLaunchKernel, in the copy
    kernels = {e["args"]["correlation"]: e["name"] for e in ev
               if e.get("ph") == "X" and e.get("cat") == "kernel" and "correlation" in e.get("args", {})}
    launches = [e for e in ev if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATS]
    for call in launches:
        if call["cat"] != "cuda_driver":
            continue
        held = _enclosing(ev, call, "")
        assert [e["name"] for e in held][-2:] == ["AddmmBackward0", name]  # the op around the call: aten::mm
        chain = _enclosing(ev, call, name)
        assert [e["name"] for e in chain] == ["autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0"]
        # every other kernel launched inside the top op: by a runtime call, itself a node, deeper in the copy
        top = chain[0]
        lo, hi = _ns(top["ts"]), _ns(top["ts"]) + _ns(top["dur"])
        others = [c for c in launches if c is not call and c["tid"] == top["tid"] and lo <= _ns(c["ts"]) <= hi
                  and c["args"].get("correlation") in kernels]
        assert others and all(c["cat"] == "cuda_runtime" and len(_enclosing(ev, c, name)) >= 2 for c in others)
        driven[kernels[call["args"]["correlation"]]] = top
    assert len(driven) == 2
    # each of the six aten::mm allocates its output itself: MemoryCompare, against the copy too, lists those
    # records as the op around it's (listed_owner), at that op's level; the kernels were the sheets that differed
    assert len(_events_named(ev, name)) == len(_own_memory_events(ev, name)) == 6
    edited = _without_all(doc, name, tmp_path)
    opened = compare(str(H200), str(edited), transparent_op=name, disable_module=True, **kw)
    removed = compare(str(edited), str(edited), disable_module=True, **kw)
    for sheet in PAIRED:
        assert opened.sheet(sheet).equals(removed.sheet(sheet)), sheet
    details = opened.sheet("OperatorCompare")["Kernel Details"].fillna("").astype(str).tolist()
    for kernel in driven:
        (cell,) = [d for d in details if f"{kernel} [duration: " in d]
        assert cell.startswith(f"{kernel} [duration: ") and cell.count("\n") > 1


def test_rank_warning_quotes_the_name_for_the_shell_on_the_cli_and_as_python_in_compare_ranks(tmp_path, capsys,
                                                                                                 caplog):
    """The warning of a rank whose ops lack a --transparent_op name quoted it as Python on the CLI too
    (``'DDP\\'s ...'``), which bash, pasted, reads as another name: it quotes as the refusal does, for the shell on
    the CLI, as Python for compare_ranks(). Rank 0 is the H200 excerpt with DistributedDataParallel.forward renamed
    to a name with both quote marks and a backslash, rank 1 the excerpt without that op (expected text by hand)."""
    from msprof_compare.api import compare_ranks

    name = 'DDP\'s "fwd" \\ x'
    doc = _load(H200)
    job = tmp_path / "job"
    job.mkdir()
    (ddp,) = _events_named(doc["traceEvents"], DDP)
    kept = [e for e in doc["traceEvents"] if e is not ddp]
    ddp["name"] = name
    (job / "r0.pt.trace.json").write_text(json.dumps(doc, default=str), encoding="utf-8")
    other = {**doc, "traceEvents": kept, "distributedInfo": {**doc["distributedInfo"], "rank": 1}}
    (job / "r1.pt.trace.json").write_text(json.dumps(other, default=str), encoding="utf-8")
    r1 = job / "r1.pt.trace.json"
    rest = (f" names no operator of either side ({r1}, {r1}), so it opens nothing in this rank, which is compared "
            "without it (the op's whole name, case-sensitive, as the OperatorCompare sheet's Operator Name gives it)")
    code, _, err = run_inproc(capsys, "-bp", str(job), "-d", str(job), "--enable_operator_compare",
                              "--disable_module", "--transparent_op", name, "-o", str(tmp_path / "out"))
    assert code == 0, err
    said = [line.split("] ", 1)[1] for line in err.splitlines() if "in this rank" in line]
    assert said == ["rank 1: --transparent_op 'DDP'\"'\"'s \"fwd\" \\ x'" + rest]
    shown = subprocess.run(["bash", "-c", "printf '%s\\n' " + said[0].split(" names no operator")[0].split(" ", 3)[3]],
                           capture_output=True, text=True, check=True)
    assert shown.stdout == f"{name}\n"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        list(compare_ranks(str(job), str(job), transparent_op=name, enable_operator_compare=True,
                           disable_module=True))
    assert [m for m in caplog.messages if "in this rank" in m] == [
        "rank 1: transparent_op='DDP\\'s \"fwd\" \\\\ x'" + rest]


def test_nested_name_warning_quotes_the_name_for_the_shell_on_the_cli_and_as_python_in_compare(tmp_path, capsys,
                                                                                                caplog):
    """The warning on a name found only nested quoted it as Python on the CLI too: it quotes it as the refusal does.
    The H200 excerpt with its aten::linear events (nested ones, counted from the raw JSON) renamed to a name with a
    quote mark and a backslash, against itself (expected text by hand)."""
    name = "lin's \\ x"
    doc = _load(H200)
    renamed = _events_named(doc["traceEvents"], "aten::linear")
    for e in renamed:
        e["name"] = name
    n = len(renamed)
    assert n == 3
    trace = tmp_path / "renamed.pt.trace.json"
    trace.write_text(json.dumps(doc, default=str), encoding="utf-8")
    line = (f"The transparent_op name {{}} names only operators nested inside top-level ones ({n} of the base side "
            f"and {n} of the comparison side): the operator comparison compares the top-level operator holding one "
            "whole, its figures as without the option; the max_kernel_num option opens them where it drills into a "
            "pair holding one")
    code, _, err = run_inproc(capsys, "-bp", str(trace), "-d", str(trace), "--enable_operator_compare",
                              "--transparent_op", name, "-o", str(tmp_path / "out"))
    assert code == 0, err
    said = [x.split("] ", 1)[1] for x in err.splitlines() if "names only operators nested" in x]
    assert said == [line.format("'lin'\"'\"'s \\ x'")]
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(trace), str(trace), transparent_op=name, enable_operator_compare=True)
    assert [m for m in caplog.messages if "names only operators nested" in m] == [line.format("\"lin's \\\\ x\"")]
