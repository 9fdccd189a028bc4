"""Known regressions injected into copies of real profiles, second part: the faces test_injected_regressions.py
does not cover.

Each test edits one thing of a real input (in ``tmp_path``), in every file that records it, as the profiler would
have written it, and compares the untouched input with the edited copy, both ways round:

* a host-side torch API (cpu_op) longer, into the idle host time of its caller (NPU text export, AlexNet GPU
  trace, NPU DB export): only its ApiCompare row and its caller's self time move;
* a kernel longer (text and DB exports): its KernelCompare row (total, average, max, min, calls), its
  KernelTypeCompare row and that sheet's order, the contributors at kernel and kernel-type level; a step asked
  of a text export with ``--use_kernel_type`` (op_statistic.csv holds no step ids);
* a collective's Memcpy task longer: the op and task rows of CommunicationCompare, KernelCompare's HCCL row and
  the communication rows of OverallMetrics agree;
* an operator allocating more, the peak reserved memory higher: the memory sheets, the memory line (and, with a
  step asked of a text export, that line saying its peak is the whole profile's);
* an invalid-PMU kernel (DSA, the AI CPU rule: "Other") and a TensorMove (SDMA) longer;
* the MindSpore layout of the export (no torch op), against itself and against the GPU trace (user story 3), and
  a legacy MindSpore / CANN timeline.

The expected figures are read from the raw files (Decimal, not our code): the injected delta must appear where
it was put, and every other figure must stay as it is.
"""

from __future__ import annotations

import csv
import gzip
import json
import logging
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from dbutil import edited_copy, sql  # tests/ is on sys.path (rootdir import mode)
from test_injected_regressions import (
    ALEXNET,
    NPU_DB,
    NPU_TEXT,
    _cell,
    _changed,
    _edit_csv,
    _first_kernel,
    _objects,
    _rows,
    _summary_lines,
    _text_kernel_lengthened,
    _text_steps_split,
    _waterfall,
)
from test_steps import _mindspore_25

from msprof_compare.api import compare
from msprof_compare.compare.summary_notes import unexplained_note
from msprof_compare.report.summary_console import memory_line

_OPS = {"cpu_op", "user_annotation", "cuda_runtime", "operator", "runtime"}


def _unchanged_but(res, same, *skip: str) -> None:
    """Every sheet of ``res`` but ``skip`` equals the one of ``same`` (the untouched input against itself)."""
    assert res.sheet_names == same.sheet_names
    for name in res.sheet_names:
        if name not in ("Summary", *skip):
            assert res.sheet(name).equals(same.sheet(name)), name


# --------------------------------------------------------------------------- host API longer

def _api_table(events: list[dict]) -> dict[str, tuple[Decimal, Decimal, int]]:
    """Per op name (ProfilerStep# markers left out): total µs, self µs (its duration less its direct callees', the
    ops of its own thread directly inside it) and calls, from the raw events."""
    ops = [e for e in events if e.get("ph") == "X" and str(e.get("cat", "")).lower() in _OPS]
    span = {id(e): (Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"]))) for e in ops}
    inner = {id(e): Decimal(0) for e in ops}
    threads: dict = {}
    for e in ops:
        threads.setdefault((e["pid"], e["tid"]), []).append(e)
    for run in threads.values():
        run.sort(key=lambda e: (span[id(e)][0], -span[id(e)][1]))
        open_: list[dict] = []
        for e in run:
            start, end = span[id(e)]
            while open_ and not start < span[id(open_[-1])][1]:
                open_.pop()
            if open_ and end <= span[id(open_[-1])][1]:
                inner[id(open_[-1])] += end - start
            open_.append(e)
    out: dict[str, tuple[Decimal, Decimal, int]] = {}
    for e in ops:
        if "ProfilerStep#" in e["name"]:
            continue
        total, own, n = out.get(e["name"], (Decimal(0), Decimal(0), 0))
        d = span[id(e)][1] - span[id(e)][0]
        out[e["name"]] = (total + d, own + d - inner[id(e)], n + 1)
    return out


def _api_rows(res, names: tuple[str, ...]) -> dict[str, list]:
    api = res.sheet("ApiCompare")
    return {r[1]: list(r[2:10]) for r in api.itertuples(index=False) if r[1] in names}


def _expected_api(before: dict, after: dict, names: tuple[str, ...]) -> dict[str, list]:
    """ApiCompare's side cells (total, self, average ms to 0.01; calls) of ``names``: base raw, comparison edited."""
    def side(t: tuple[Decimal, Decimal, int]) -> list:
        total, own = round(float(t[0]) / 1000, 2), round(float(t[1]) / 1000, 2)
        return [total, own, round(total / t[2], 2), t[2]]
    return {n: side(before[n]) + side(after[n]) for n in names}


def _callee_longer(events: list[dict], name: str, caller: str, us: Decimal) -> tuple[dict, dict]:
    """The first ``name`` op inside a ``caller`` op of its thread with more than ``us`` of idle time after it (no
    event but GPU device ones starts there, so the op tree and the memory placement are unchanged), and that
    caller."""
    ops = [e for e in events if e.get("ph") == "X" and str(e.get("cat", "")).lower() in _OPS]
    starts = sorted(Decimal(str(e["ts"])) for e in events if e.get("ph") == "X"
                    and str(e.get("cat", "")).lower() not in ("kernel", "gpu_memcpy", "gpu_memset"))
    for e in ops:
        if e["name"] != name:
            continue
        start, end = Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"]))
        outer = [c for c in ops if c["name"] == caller and c["tid"] == e["tid"]
                 and Decimal(str(c["ts"])) <= start and end + us < Decimal(str(c["ts"])) + Decimal(str(c["dur"]))]
        if outer and not any(end < t <= end + us for t in starts):
            return e, outer[0]
    raise AssertionError(f"no {name} with idle time after it")


def test_host_api_longer_moves_its_api_row_and_its_callers_self_time_only(samples, tmp_path):
    """A torch API 20 us longer into the idle host time of its caller: on the NPU text export aclnnInplaceRelu
    (inside aten::relu_; total 1.12 -> 1.14 ms, aten::relu_'s self 1.40 -> 1.38 ms), on the AlexNet GPU trace
    aten::empty (inside aten::_adaptive_avg_pool2d, whose self time has its cudaLaunchKernel and resize_ taken out:
    0.06 -> 0.04 ms). Each figure from the raw events; calls and averages unchanged, the caller's total unchanged,
    and every other sheet (device time, kernels, memory, the Summary's waterfall) equal to the untouched pair's.
    Swapped, the two sides trade places. The DB export alike (``_db_api_longer``)."""
    us = Decimal(20)
    # NPU text export: edit the op's duration in trace_view.json's text
    src = samples / NPU_TEXT
    slow = tmp_path / "npu" / "rank0_ascend_pt"
    shutil.copytree(src, slow)
    tv = slow / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = tv.read_bytes().decode()
    events = json.loads(text, parse_float=Decimal)
    op, caller = _callee_longer(events, "aclnnInplaceRelu", "aten::relu_", us)
    (s, e), = [(s, e) for s, e, o in _objects(text) if o.get("ph") == "X" and o.get("cat") == "cpu_op"
               and o["name"] == op["name"] and o["ts"] == op["ts"]]
    new = re.sub(r'("dur": )([\d.]+)', lambda m: m.group(1) + f"{Decimal(m.group(2)) + us:f}", text[s:e], count=1)
    tv.write_bytes((text[:s] + new + text[e:]).encode())
    # GPU trace: the same in the gzip-compressed Kineto JSON
    raw = gzip.decompress(ALEXNET.read_bytes()).decode()
    gpu_events = json.loads(raw, parse_float=Decimal)["traceEvents"]
    gop, _ = _callee_longer(gpu_events, "aten::empty", "aten::_adaptive_avg_pool2d", us)
    old = f'"ts": {gop["ts"]}, "dur": {gop["dur"]},'
    assert raw.count(old) == 1
    gslow = tmp_path / "alexnet_empty_slower.pt.trace.json"
    gslow.write_text(raw.replace(old, f'"ts": {gop["ts"]}, "dur": {gop["dur"] + us},'))

    for base, edited, names, before, after in (
            (src, slow, (op["name"], caller["name"]), events, json.loads(tv.read_bytes(), parse_float=Decimal)),
            (ALEXNET, gslow, ("aten::empty", "aten::_adaptive_avg_pool2d"), gpu_events,
             json.loads(gslow.read_bytes(), parse_float=Decimal)["traceEvents"])):
        t0, t1 = _api_table(before), _api_table(after)
        assert {n for n in t0 if t0[n] != t1[n]} == set(names)  # the raw files: the op and its caller only
        assert t1[names[0]][0] - t0[names[0]][0] == us and t1[names[1]][1] - t0[names[1]][1] == -us
        same = compare(str(base), str(base))
        res = compare(str(base), str(edited))
        assert _api_rows(res, names) == _expected_api(t0, t1, names)
        api0, api1 = same.sheet("ApiCompare"), res.sheet("ApiCompare")
        moved = {r0[1] for r0, r1 in zip(api0.itertuples(index=False), api1.itertuples(index=False), strict=True)
                 if list(r0) != list(r1)}
        assert moved == set(names)
        _unchanged_but(res, same, "ApiCompare")
        assert _waterfall(res) == {} and res.contributors.equals(same.contributors)
        back = compare(str(edited), str(base))
        assert _api_rows(back, names) == {n: v[4:] + v[:4] for n, v in _expected_api(t0, t1, names).items()}
    npu = _api_rows(compare(str(src), str(slow)), (op["name"], caller["name"]))
    assert (npu["aclnnInplaceRelu"][4], npu["aten::relu_"][1], npu["aten::relu_"][5]) == (1.14, 1.40, 1.38)
    _db_api_longer(samples, tmp_path / "db")


def _db_api_longer(samples: Path, tmp_path: Path) -> None:
    """The DB export of the same run: the first aclnnInplaceRelu PYTORCH_API row 15 us longer (endNs, a TEXT
    column), nothing starting in the 15 us after it. ApiCompare: its total 1.121580 -> 1.136580 ms (1.12 ->
    1.14), aten::relu_'s self 1.426790 -> 1.411790 ms (1.43 -> 1.41), from the table's rows; nothing else."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    name = "SELECT id FROM STRING_IDS WHERE value = '{}'"  # two ids of one name: one for CANN_API's rows
    ((start, end),) = sql(src, f"SELECT startNs, CAST(endNs AS INTEGER) FROM PYTORCH_API WHERE name IN "
                               f"({name.format('aclnnInplaceRelu')}) ORDER BY CAST(startNs AS INTEGER) LIMIT 1")
    ns = 15_000
    assert sql(src, "SELECT COUNT(*) FROM PYTORCH_API WHERE CAST(startNs AS INTEGER) BETWEEN ? AND ?",
               (end + 1, end + ns)) == [(0,)]
    assert sql(src, "SELECT COUNT(*) FROM OP_MEMORY WHERE allocationTime BETWEEN ? AND ?", (end + 1, end + ns)) == [
        (0,)]
    slow = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    slow.mkdir(parents=True)
    edited_copy(src, slow / src.name, f"UPDATE PYTORCH_API SET endNs = CAST({end + ns} AS TEXT) WHERE startNs = "
                                      f"'{start}'")
    totals = "SELECT SUM(CAST(endNs AS INTEGER) - CAST(startNs AS INTEGER)) FROM PYTORCH_API WHERE name IN ({})"
    ((relu,),) = sql(src, totals.format(name.format("aclnnInplaceRelu")))
    ((outer,),) = sql(src, totals.format(name.format("aten::relu_")))
    assert (relu, outer) == (1_121_580, 2_548_370)
    own = outer - relu  # each aten::relu_ holds one aclnnInplaceRelu and nothing else
    res = compare(str(samples / NPU_DB), str(slow.parent))
    same = compare(str(samples / NPU_DB), str(samples / NPU_DB))
    rows = _api_rows(res, ("aclnnInplaceRelu", "aten::relu_"))
    assert rows["aclnnInplaceRelu"][4:6] == [round((relu + ns) / 1e6, 2)] * 2 == [1.14, 1.14]
    assert rows["aten::relu_"][1::4] == [round(own / 1e6, 2), round((own - ns) / 1e6, 2)] == [1.43, 1.41]
    _unchanged_but(res, same, "ApiCompare")


# --------------------------------------------------------------------------- a kernel longer: the kernel sheets

def _kernel_groups(path: Path) -> dict[tuple[str, str], list[Decimal]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Type"] not in ("", "N/A")]
    out: dict[tuple[str, str], list[Decimal]] = {}
    for r in rows:
        out.setdefault((r["Type"], r["Input Shapes"] or "N/A"), []).append(Decimal(r["Duration(us)"]))
    return out


def _kernel_cells(d: list[Decimal]) -> list:
    """KernelCompare's side cells from raw durations: total, average of the rounded total, max, min, calls."""
    total = round(float(sum(d)), 2)
    return [total, round(total / len(d), 2), round(float(max(d)), 2), round(float(min(d)), 2), len(d)]


def _statistic_row(path: Path, op_type: str) -> dict[str, str]:
    with open(path, newline="", encoding="utf-8") as fh:
        (row,) = [r for r in csv.DictReader(fh) if r["OP Type"] == op_type]
    return row


def test_kernel_longer_on_the_kernel_sheets_and_their_contributors(samples, tmp_path):
    """The first MaxPoolWithArgmaxV1 kernel (input "32,4,55,55,16", the only one of that shape) 50 us longer in
    the text export (kernel_details.csv, trace_view.json, op_statistic.csv, as the profiler writes them):
    KernelCompare's row 172.76 -> 222.76 us in total, average, max and min, one call, every other row unchanged;
    KernelTypeCompare's MaxPoolWithArgmaxV1-AI_VECTOR_CORE row 409.728 -> 459.728 us (average 136.576 -> 153.243,
    max 172.763 -> 222.763, min and calls as they were, from op_statistic.csv), the first row (the only ratio
    above 1), and swapped the last; the contributors name the kernel with its shape and the kernel type. The DB
    export alike, its statistic built from its tasks (``_db_kernel_longer``)."""
    src = samples / NPU_TEXT
    slow = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, slow)
    start, _ = _first_kernel(slow, "MaxPoolWithArgmaxV1")
    _text_kernel_lengthened(slow, start, Decimal(50))
    out0, out1 = (p / "ASCEND_PROFILER_OUTPUT" for p in (src, slow))
    g0, g1 = _kernel_groups(out0 / "kernel_details.csv"), _kernel_groups(out1 / "kernel_details.csv")
    key = ("MaxPoolWithArgmaxV1", '"32,4,55,55,16"')
    assert {k for k in g0 if g0[k] != g1[k]} == {key} and len(g0[key]) == 1

    res = compare(str(src), str(slow), enable_kernel_compare=True)
    kc = res.sheet("KernelCompare")
    rows = {(r[1], r[2]): list(r[3:13]) for r in kc.itertuples(index=False)}
    assert rows[key] == _kernel_cells(g0[key]) + _kernel_cells(g1[key])
    assert rows[key][:5] == [172.76, 172.76, 172.76, 172.76, 1] and rows[key][5] == 222.76
    assert [k for k, r in rows.items() if r[:5] != r[5:]] == [key]
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
        ["kernel", 'MaxPoolWithArgmaxV1 "32,4,55,55,16"', 0.05]]

    s0 = _statistic_row(out0 / "op_statistic.csv", "MaxPoolWithArgmaxV1")
    s1 = _statistic_row(out1 / "op_statistic.csv", "MaxPoolWithArgmaxV1")
    fields = ("Total Time(us)", "Avg Time(us)", "Max Time(us)", "Min Time(us)")
    expected = [float(s0[f]) for f in fields] + [int(s0["Count"])] + [float(s1[f]) for f in fields] + [
        int(s1["Count"])]
    assert expected == [409.728, 136.576, 172.763, 80.782, 3, 459.728, 153.243, 222.763, 80.782, 3]
    for sign, (a, b) in ((1, (src, slow)), (-1, (slow, src))):
        kt = compare(str(a), str(b), enable_kernel_compare=True, use_kernel_type=True)
        sheet = kt.sheet("KernelTypeCompare")
        at = 0 if sign > 0 else len(sheet) - 1  # sorted by Diff Total Ratio, descending
        row = sheet.iloc[at].tolist()
        assert row[1:3] == ["MaxPoolWithArgmaxV1", "AI_VECTOR_CORE"] and row[0] == at + 1
        assert row[3:13] == (expected if sign > 0 else expected[5:] + expected[:5])
        assert (sheet["Diff Total Ratio"] == 1).sum() == len(sheet) - 1
        assert kt.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
            ["kernel type", "MaxPoolWithArgmaxV1-AI_VECTOR_CORE", sign * 0.05]]
    _db_kernel_longer(samples, tmp_path / "db")


def _db_kernel_longer(samples: Path, tmp_path: Path) -> None:
    """The DB export's first MaxPoolWithArgmaxV1 task (KERNEL_AIVEC) 50 us longer into the idle time after it
    (TASK; OVERLAP_ANALYSIS computing and free windows): KernelTypeCompare, built from the tasks, 407.969 ->
    457.969 us, max 171.603 -> 221.603 us, min 80.002 us and 3 calls unchanged (the TASK rows' own figures);
    KernelCompare's row of its shape 171.60 -> 221.60 us; no other row of either sheet moves."""
    src = samples / NPU_DB / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    of_type = ("FROM TASK t JOIN COMPUTE_TASK_INFO c USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.opType "
               "WHERE s.value = 'MaxPoolWithArgmaxV1'")
    ((start, end),) = sql(src, f"SELECT t.startNs, t.endNs {of_type} ORDER BY t.startNs LIMIT 1")
    ((free,),) = sql(src, "SELECT endNs - startNs FROM OVERLAP_ANALYSIS WHERE type = 3 AND startNs = ?", (end,))
    ns = 50_000
    assert free > ns
    slow = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    slow.mkdir(parents=True)
    edited_copy(src, slow / src.name, f"UPDATE TASK SET endNs = endNs + {ns} WHERE startNs = {start}",
                f"UPDATE OVERLAP_ANALYSIS SET endNs = endNs + {ns} WHERE type = 0 AND endNs = {end}",
                f"UPDATE OVERLAP_ANALYSIS SET startNs = startNs + {ns} WHERE type = 3 AND startNs = {end}")
    figures = f"SELECT SUM(t.endNs - t.startNs), MAX(t.endNs - t.startNs), MIN(t.endNs - t.startNs), COUNT(*) {of_type}"
    (b,), (c,) = sql(src, figures), sql(slow / src.name, figures)
    assert (b, c) == ((407_969, 171_603, 80_002, 3), (457_969, 221_603, 80_002, 3))
    kt = compare(str(samples / NPU_DB), str(slow.parent), enable_kernel_compare=True, use_kernel_type=True)
    rows = {(r[1], r[2]): r for r in kt.sheet("KernelTypeCompare").itertuples(index=False)}
    row = rows[("MaxPoolWithArgmaxV1", "AI_VECTOR_CORE")]
    assert [row[3], row[5], row[6], row[7], row[8], row[10], row[11], row[12]] == [
        b[0] / 1000, b[1] / 1000, b[2] / 1000, b[3], c[0] / 1000, c[1] / 1000, c[2] / 1000, c[3]]
    assert [k for k, r in rows.items() if r[3] != r[8]] == [("MaxPoolWithArgmaxV1", "AI_VECTOR_CORE")]
    kc = compare(str(samples / NPU_DB), str(slow.parent), enable_kernel_compare=True).sheet("KernelCompare")
    assert _changed(kc, "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {"MaxPoolWithArgmaxV1": 50.0}
    (moved,) = kc[kc["Total Duration(us)"] != kc["Total Duration(us).1"]].itertuples(index=False)
    assert list(moved[3:13]) == [171.6, 171.6, 171.6, 171.6, 1, 221.6, 221.6, 221.6, 221.6, 1]


def test_kernel_type_contributors_of_a_step_say_they_are_the_whole_profiles(samples, tmp_path, caplog):
    """``--use_kernel_type`` with a step on text exports: op_statistic.csv holds no step ids, so KernelTypeCompare
    covers every step. The export cut in two steps, its first MaxPool kernel (step 50) 50 us longer, compared at
    step 51: KernelTypeCompare still holds the +50 us, and the contributors named MaxPoolWithArgmaxV1 as step 51's
    kernel type with no word under them (the only one a warning on stderr), while the "time breakdown of the
    steps" check said the step limits the kernel sheets. The note under the contributors (console, JSON, Summary
    sheet) now says they are the whole profile's, and the check names KernelCompare alone."""
    base, slow = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, base)
    shutil.copytree(samples / NPU_TEXT, slow)
    start, dur = _first_kernel(base, "MaxPoolWithArgmaxV1")
    _text_kernel_lengthened(slow, start, Decimal(50))
    cut = _text_steps_split(base)
    assert _text_steps_split(slow) == cut and Decimal(start) + dur < cut  # the kernel runs in step 50
    res = compare(str(base), str(slow), base_step=51, comparison_step=51, enable_kernel_compare=True,
                  use_kernel_type=True, enable_profiling_compare=True)
    assert res.contributors[["Level", "Name", "Diff(ms)"]].values.tolist() == [
        ["kernel type", "MaxPoolWithArgmaxV1-AI_VECTOR_CORE", 0.05]]
    note = ("these kernel types are the whole profile's, not the step's (base step 51, comparison step 51): a text "
            "export's KernelTypeCompare reads op_statistic.csv, which holds no step ids")
    assert note in unexplained_note(res.contributors, res.waterfall)
    doc = json.loads(Path(res.to_json(tmp_path / "out.json")).read_text())
    assert note in doc["summary"]["contributors_note"]
    assert f"Note: {note}." in _summary_lines(res, tmp_path, "steps")
    (check,) = [g for g in doc["summary"]["guards"] if g["Check"] == "time breakdown of the steps"]
    assert "API, KernelCompare and communication sheets; KernelTypeCompare reads a text export's op_statistic.csv" \
        in check["Detail"]
    # a DB export builds the statistic from the step's tasks, and without a step there is nothing to say
    assert "all_steps" not in compare(str(base), str(slow), enable_kernel_compare=True,
                                      use_kernel_type=True).contributors.attrs
    # two steps: the one warning (one for both sides) names each side's
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(base), str(slow), base_step=50, comparison_step=51, enable_kernel_compare=True,
                use_kernel_type=True)
    assert [m for m in caplog.messages if "op_statistic.csv" in m] == [
        f"base {base} and comparison {slow}: op_statistic.csv holds no step ids, so KernelTypeCompare covers every "
        "step, not base step 50 and comparison step 51 only."]


def test_kernel_type_contributors_of_a_text_step_against_a_db_step_name_the_whole_profile_side(samples, tmp_path):
    """``--use_kernel_type`` with a step on a text export against a DB export: the text side's KernelTypeCompare
    figures are its whole profile's (op_statistic.csv), the DB side's its step's tasks'. The note said "these
    kernel types are the whole profile's, not the step's (base step 51)", as if both columns were; it now names the
    side whose times are the whole profile's and the other side's step, both ways round. The text export cut in two
    steps: its MaxPoolWithArgmaxV1 row holds op_statistic.csv's Total Time (steps 50 and 51), not kernel_details.csv's
    step-51 kernels of that type (read here)."""
    text = tmp_path / "text" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, text)
    _text_steps_split(text)
    out = text / "ASCEND_PROFILER_OUTPUT"
    with open(out / "op_statistic.csv", newline="", encoding="utf-8") as fh:
        (whole,) = [Decimal(r["Total Time(us)"]) for r in csv.DictReader(fh)
                    if (r["OP Type"], r["Core Type"]) == ("MaxPoolWithArgmaxV1", "AI_VECTOR_CORE")]
    with open(out / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        step51 = sum(Decimal(r["Duration(us)"]) for r in csv.DictReader(fh)
                     if r["Type"] == "MaxPoolWithArgmaxV1" and r["Step Id"] == "51")
    assert whole != step51
    why = "a text export's KernelTypeCompare reads op_statistic.csv, which holds no step ids"
    for b, c, steps, side, other in ((text, samples / NPU_DB, (51, 50), "base", "comparison"),
                                     (samples / NPU_DB, text, (50, 51), "comparison", "base")):
        res = compare(str(b), str(c), base_step=steps[0], comparison_step=steps[1], enable_kernel_compare=True,
                      use_kernel_type=True, enable_profiling_compare=True)
        kt = {(r[1], r[2]): r for r in res.sheet("KernelTypeCompare").itertuples(index=False)}
        assert kt[("MaxPoolWithArgmaxV1", "AI_VECTOR_CORE")][3 if side == "base" else 8] == float(whole)
        assert str(res.contributors["Level"].iloc[0]) == "kernel type"
        mine, theirs = steps if side == "base" else steps[::-1]
        note = (f"the {side} side's kernel-type times are its whole profile's, not step {mine}'s, set against the "
                f"{other}'s step {theirs} alone (a DB export builds them from the step's tasks): {why}")
        assert note in unexplained_note(res.contributors, res.waterfall)
        doc = json.loads(Path(res.to_json(tmp_path / f"{side}.json")).read_text())
        assert note in doc["summary"]["contributors_note"]
        # the Summary sheet's note row (the other notes follow it after "; ")
        assert [v for v in _summary_lines(res, tmp_path, f"kt_{side}") if note in v][0].startswith(f"Note: {note}")


# --------------------------------------------------------------------------- a collective's task longer

def test_collective_task_longer_on_the_op_and_task_rows_and_overall_metrics(samples, tmp_path):
    """The longest Memcpy of the shortest all-reduce (hcom_allReduce__586_1_1, 2281.106 us) of the text export
    500 us longer, the rest of the device's timeline 500 us later: CommunicationCompare's allreduce row +500 us
    in total (105991.878 -> 106491.878), average +125 us, its Min now the next shortest op's (2402.388 us, from the
    raw trace), Max and calls unchanged; the Memcpy task row +500 us (its Max 948.879 -> 1074.271 us: the injected
    task, 574.271 + 500); KernelCompare's hcom_allReduce_ row the same; OverallMetrics' uncovered communication, its
    group and Transmit +0.5 ms, E2E +0.5 ms; the communication line names the Memcpy task. Swapped, the signs."""
    from test_injected_regressions import _device_time_inserted, _hccl_events

    src = samples / NPU_TEXT
    lane, hccl = _hccl_events(src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json")
    ops = sorted((e["dur"], Decimal(e["ts"])) for e in hccl if "Communication" in lane[(e["pid"], e["tid"])])
    (short, at), second = ops[0], ops[1][0]
    memcpy = [e for e in hccl if e["name"] == "Memcpy"]
    (task,) = [max((e for e in memcpy if at <= Decimal(e["ts"]) < at + short), key=lambda e: e["dur"])]
    us = Decimal(500)
    slow = tmp_path / "rank0_ascend_pt"
    grown = _device_time_inserted(src, slow, Decimal(task["ts"]) + task["dur"], us)
    assert "HCCL: Memcpy" in grown and not [g for g in grown if g.startswith("Overlap Analysis: Computing")]

    def cell(v: Decimal) -> float:
        return float(round(v, 3))
    # times are read to the ns (reference-1: int64 ns), so each duration counts as rounded to 0.001 us
    total = sum((round(d, 3) for d, _ in ops), Decimal(0))
    memcpy_total = sum((round(e["dur"], 3) for e in memcpy), Decimal(0))
    for sign, (a, b) in ((1, (src, slow)), (-1, (slow, src))):
        res = compare(str(a), str(b))
        comm = res.sheet("CommunicationCompare")
        rows = {(_cell(r[1]), _cell(r[2])): r for r in comm.itertuples(index=False)}
        op, mc = rows[("allreduce", None)], rows[("|", "Memcpy")]
        grown_op = [4, cell(total + us), float(round((total + us) / 4, 4)), cell(ops[-1][0]), cell(second)]
        plain_op = [4, cell(total), float(round(total / 4, 4)), cell(ops[-1][0]), cell(short)]
        assert [op[3], op[4], round(op[5], 4), op[6], op[7]] == (plain_op if sign > 0 else grown_op)
        assert [op[10], op[11], round(op[12], 4), op[13], op[14]] == (grown_op if sign > 0 else plain_op)
        assert op[15] == sign * 500
        assert (mc[4], mc[11]) == ((cell(memcpy_total), cell(memcpy_total + us)) if sign > 0 else
                                   (cell(memcpy_total + us), cell(memcpy_total)))
        assert max(mc[6], mc[13]) == cell(task["dur"] + us) == 1074.271
        assert {k: round(r[11] - r[4], 3) for k, r in rows.items() if round(r[11] - r[4], 3)} == {
            ("allreduce", None): sign * 500.0, ("|", "Memcpy"): sign * 500.0}
        assert _changed(res.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
            "hcom_allReduce_": sign * 500.0}
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == {k: sign * 0.5 for k in (
            "Uncovered Communication Time", "Group 0 Communication", "Transmit", "E2E Time")}
        totals = res.communication_totals
        assert (totals["task"], totals["task_op"], totals["diff_ms"], totals["task_diff_ms"]) == (
            "Memcpy", "allreduce", sign * 0.5, sign * 0.5)


# --------------------------------------------------------------------------- NPU memory

def test_npu_operator_memory_and_peak_reserved_memory(samples, tmp_path):
    """Two edits of the text export: the first aten::max_pool2d_with_indices allocation of operator_memory.csv
    10 MB larger (5979.5 -> 16219.5 KB), and memory_record.csv's peak Total Reserved (2113.73 MB, 6 rows) 512 MB
    higher. MemoryCompare / MemoryCompareStatistic: DistributedDataParallel.forward (the top-layer op the
    allocation is made in) 369514 -> 379754 KB, 360.85 -> 370.85 MB, from the raw rows placed in its time
    (cann:: rows at the enqueue of their dequeue); no other row. The memory line: operators' memory +10.00 MB,
    peak (Mem Usage) 2.06 GB -> 2.56 GB; the console's Mem Usage cell alike. Swapped, the signs."""
    src = samples / NPU_TEXT
    slow = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, slow)
    out = slow / "ASCEND_PROFILER_OUTPUT"
    with open(out / "operator_memory.csv", newline="", encoding="utf-8") as fh:
        first = next(r for r in csv.DictReader(fh) if r["Name"] == "aten::max_pool2d_with_indices")
    alloc = first["Allocation Time(us)"].strip()

    def bigger(head: list[str], row: list[str]) -> bool:
        if row[head.index("Allocation Time(us)")].strip() != alloc:
            return False
        row[head.index("Size(KB)")] = f"{Decimal(row[head.index('Size(KB)')]) + 10240:f}"
        return True
    assert _edit_csv(out / "operator_memory.csv", bigger) == 1
    with open(out / "memory_record.csv", newline="", encoding="utf-8") as fh:
        peak = max(Decimal(r["Total Reserved(MB)"]) for r in csv.DictReader(fh) if r["Total Reserved(MB)"])

    def higher(head: list[str], row: list[str]) -> bool:
        cell = row[head.index("Total Reserved(MB)")]
        if not cell or Decimal(cell) != peak:
            return False
        row[head.index("Total Reserved(MB)")] = f"{peak + 512:f}"
        return True
    assert _edit_csv(out / "memory_record.csv", higher) == 6

    # the allocations placed inside DistributedDataParallel.forward, from the raw files (reference-2 §5.1)
    def inside_forward(export: Path) -> Decimal:
        events = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_bytes(), parse_float=Decimal)
        deq = sorted((Decimal(e["ts"]), Decimal(e["ts"]) + e["dur"], e["args"].get("correlation_id"))
                     for e in events if e.get("cat") == "dequeue" and e.get("ph") == "X")
        enq = {e["args"].get("correlation_id"): Decimal(e["ts"]) for e in events
               if e.get("cat") == "enqueue" and e.get("ph") == "X"}
        (fwd,) = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "DistributedDataParallel.forward"]
        lo, hi = Decimal(fwd["ts"]), Decimal(fwd["ts"]) + fwd["dur"]
        kb = Decimal(0)
        with open(export / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv", newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                t = Decimal(r["Allocation Time(us)"].strip() or 0)
                if "cann::" in r["Name"]:
                    d = [x for x in deq if x[0] <= t]
                    if not d or t > d[-1][1]:
                        continue
                    t = enq.get(d[-1][2], Decimal(0))
                if lo <= t <= hi:
                    kb += Decimal(r["Size(KB)"])
        return kb
    kb0, kb1 = inside_forward(src), inside_forward(slow)
    assert (kb0, kb1) == (369514, 379754)
    gb0, gb1 = float(peak / 1024), float((peak + 512) / 1024)
    for sign, (a, b) in ((1, (src, slow)), (-1, (slow, src))):
        res = compare(str(a), str(b))
        mem = res.sheet("MemoryCompare")
        assert _changed(mem, "Operator Name", ("Size(KB)", "Size(KB).1")) == {
            "DistributedDataParallel.forward": sign * 10240.0}
        (row,) = mem[mem["Size(KB)"] != mem["Size(KB).1"]].itertuples(index=False)
        assert (row[5], row[10]) == ((float(kb0), float(kb1)) if sign > 0 else (float(kb1), float(kb0)))
        # Diff Ratio (reference-2 §0.1) by hand: 379754 / 369514 = 1.027712 -> 1.0277, 369514 / 379754 = 0.973035 ->
        # 0.973, on both sheets (the statistic's MB of the one op are its KB / 1024); every other row 1.0
        ratio = 1.0277 if sign > 0 else 0.973
        assert (row[11], row[12]) == (sign * 10240.0, ratio)
        assert set(mem.loc[mem["Size(KB)"] == mem["Size(KB).1"], "Diff Ratio"]) == {1.0}
        stat = _rows(res.sheet("MemoryCompareStatistic"), "Operator Name")
        assert {k: r[8] for k, r in stat.items() if r[8]} == {"DistributedDataParallel.forward": sign * 10.0}
        assert {k: r[9] for k, r in stat.items() if r[9] != 1.0} == {"DistributedDataParallel.forward": ratio}
        assert res.memory_contributors[["Name", "Diff(MB)"]].values.tolist() == [
            ["DistributedDataParallel.forward", sign * 10.0]]
        t = res.memory_totals
        assert (t["diff_mb"], t["base_peak_gb"], t["comparison_peak_gb"]) == (
            sign * 10.0, *((gb0, gb1) if sign > 0 else (gb1, gb0)))
        line = memory_line(res.frames["memory"])
        assert line.startswith("Peak reserved memory (Mem Usage) 2.06 GB -> 2.56 GB (+0.50 GB, +24.22%).\n"
                               if sign > 0 else
                               "Peak reserved memory (Mem Usage) 2.56 GB -> 2.06 GB (-0.50 GB, -19.50%).\n")
        cells = [r[res.console_table().splitlines()[3].split("|").index(" Mem Usage ")].strip()
                 for r in (ln.split("|") for ln in res.console_table().splitlines()[5:7])]
        assert cells == (["2.06G", "2.56G"] if sign > 0 else ["2.56G", "2.06G"])
        assert not _waterfall(res)


def test_peak_memory_beside_a_steps_operators_says_it_is_the_whole_profiles(samples, tmp_path):
    """A step asked of text exports: the memory line puts the step's operator memory beside the peak reserved
    memory, which a text export reads from memory_record.csv over the whole profile. The export cut in two steps,
    the last APP row of memory_record.csv before the cut (in step 50) raised 512 MB above the peak (2113.73 ->
    2625.73 MB), compared at step 51: the peak 2.06 GB -> 2.56 GB came from step 50, yet the line read "peak
    reserved memory (Mem Usage) 2.06 GB -> 2.56 GB" beside step 51's 1046.64 MB of operators, as if step 51 had
    grown. It now says the peak is the whole profile's. A DB export's peak is the step's (MEMORY_RECORD in its
    range): no such words."""
    base, slow = tmp_path / "base" / "rank0_ascend_pt", tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, base)
    shutil.copytree(samples / NPU_TEXT, slow)
    cut = _text_steps_split(base)
    assert _text_steps_split(slow) == cut
    record = slow / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    with open(record, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    peak = max(Decimal(r["Total Reserved(MB)"]) for r in rows if r["Total Reserved(MB)"])
    at = [r["Timestamp(us)"].strip() for r in rows if r["Component"] == "APP" and Decimal(r["Timestamp(us)"]) < cut][-1]

    def higher(head: list[str], row: list[str]) -> bool:
        if row[head.index("Timestamp(us)")].strip() != at or row[head.index("Component")] != "APP":
            return False
        row[head.index("Total Reserved(MB)")] = f"{peak + 512:f}"
        return True
    assert _edit_csv(record, higher) == 1
    res = compare(str(base), str(slow), base_step=51, comparison_step=51, enable_memory_compare=True)
    t = res.memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"]) == (float(peak / 1024), float((peak + 512) / 1024))
    assert t["diff_mb"] == 0 and t["base_mb"] == t["comparison_mb"]  # step 51's operators: unchanged
    assert t["peak_whole_profile"] == ["base", "comparison"]  # the JSON's summary.memory says it too
    assert memory_line(res.frames["memory"]).startswith(
        "Peak reserved memory (Mem Usage, whole profile on both sides: a text export's memory_record.csv ignores "
        "the step) 2.06 GB -> 2.56 GB (+0.50 GB, +24.22%).\n")
    db = compare(str(samples / NPU_DB), str(samples / NPU_DB), base_step=50, comparison_step=50,
                 enable_memory_compare=True)
    assert memory_line(db.frames["memory"]).startswith("Peak reserved memory (Mem Usage) 1.49 GB on both sides.\n")
    assert db.memory_totals["peak_whole_profile"] == []


def test_a_side_without_a_peak_is_not_said_to_have_the_whole_profiles(samples, tmp_path):
    """A step asked of text exports, the base one without memory_record.csv (a run without its Mem Usage record;
    operator_memory.csv kept): the base has no peak, yet the line read "peak reserved memory (Mem Usage, whole
    profile on both sides: ...): base not recorded, comparison 2.06 GB" and the JSON's peak_whole_profile named
    both sides. Only the comparison's peak is the whole profile's; where neither side has one, no side is named.
    The comparison's 2.06 GB: memory_record.csv's largest Total Reserved(MB), 2113.73 MB / 1024, read here."""
    bare, full = tmp_path / "bare" / "rank0_ascend_pt", tmp_path / "full" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, bare)
    shutil.copytree(samples / NPU_TEXT, full)
    (bare / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").unlink()
    with open(full / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv", newline="", encoding="utf-8") as fh:
        peak = max(Decimal(r["Total Reserved(MB)"]) for r in csv.DictReader(fh) if r["Total Reserved(MB)"])
    assert f"{peak / 1024:.2f}" == "2.06"
    res = compare(str(bare), str(full), base_step=50, comparison_step=50, enable_memory_compare=True)
    t = res.memory_totals
    assert (t["base_peak_gb"], t["comparison_peak_gb"]) == (None, float(peak / 1024))
    assert t["peak_whole_profile"] == ["comparison"]
    assert memory_line(res.frames["memory"]).startswith(
        "Peak reserved memory (Mem Usage, whole profile on the comparison side: a text export's memory_record.csv "
        "ignores the step): base not recorded, comparison 2.06 GB.\n")
    doc = json.loads(Path(res.to_json(tmp_path / "out.json")).read_text())
    assert doc["summary"]["memory"]["peak_whole_profile"] == ["comparison"]
    neither = compare(str(bare), str(bare), base_step=50, comparison_step=50, enable_memory_compare=True)
    assert neither.memory_totals["peak_whole_profile"] == []
    assert "Mem Usage" not in memory_line(neither.frames["memory"])


# --------------------------------------------------------------------------- categories: Other, SDMA (Tensor Move)

def _kernel_with_room(export: Path, op_type: str, us: Decimal) -> str:
    """The start of the first ``op_type`` kernel whose Overlap Analysis Computing window is followed by a Free
    window longer than ``us`` (idle time to grow into)."""
    events = json.loads((export / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_bytes(), parse_float=Decimal)
    process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    overlap = [e for e in events if e.get("ph") == "X" and process.get(e["pid"]) == "Overlap Analysis"]
    computing = {Decimal(e["ts"]): Decimal(e["ts"]) + e["dur"] for e in overlap if e["name"] == "Computing"}
    free = {Decimal(e["ts"]): e["dur"] for e in overlap if e["name"] == "Free"}
    with open(export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        starts = [r["Start Time(us)"].strip() for r in csv.DictReader(fh) if r["Type"] == op_type]
    return next(s for s in starts if Decimal(s) in computing and free.get(computing[Decimal(s)], 0) > us)


def test_invalid_pmu_kernel_is_other_and_a_tensor_move_is_sdma(samples, tmp_path):
    """The first DSAGenBitMask task (DSA_SQE: aiv_vec_time N/A, so not categorised, the AI CPU rule: reference-1
    §5.3) 30 us longer and a TensorMove run by aclnnInplaceCopy (SDMA (Tensor Move), §3.7 2) 40 us longer, each
    into idle time: OverallMetrics' Other 0.005539 -> 0.035539 ms, SDMA (Tensor Move) +0.04 ms (its count 11
    unchanged), Computing +0.07 ms, Free -0.07 ms, E2E unchanged; the waterfall's Other Computing +30 us, SDMA
    (Tensor Move) +40 us, Free: Other -70 us; KernelCompare the two rows. Swapped, the signs."""
    src = samples / NPU_TEXT
    slow = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, slow)
    dsa, move = _kernel_with_room(slow, "DSAGenBitMask", Decimal(30)), _kernel_with_room(slow, "TensorMove",
                                                                                         Decimal(40))
    _text_kernel_lengthened(slow, dsa, Decimal(30))
    _text_kernel_lengthened(slow, move, Decimal(40))
    with open(src / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        kinds = {r["Start Time(us)"].strip(): (r["Accelerator Core"], r["aiv_vec_time(us)"], r["Name"])
                 for r in csv.DictReader(fh)}
    assert kinds[dsa][:2] == ("DSA_SQE", "N/A")
    assert kinds[move][2].lower().startswith("aclnninplacecopy") and "tensormove" in kinds[move][2].lower()
    for sign, (a, b) in ((1, (src, slow)), (-1, (slow, src))):
        res = compare(str(a), str(b))
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == {k: sign * v for k, v in {
            "Computing Time": 0.07, "Other": 0.03, "SDMA (Tensor Move)": 0.04, "Free Time": -0.07,
            "Free": -0.07}.items()}
        assert sorted((om["Other"][1], om["Other"][4])) == [0.005539, 0.035539]
        assert om["SDMA (Tensor Move)"][3] == om["SDMA (Tensor Move)"][6] == 11
        assert _waterfall(res) == {k: sign * v for k, v in {
            "Other Computing": 30_000, "SDMA (Tensor Move)": 40_000, "Free: Other": -70_000}.items()}
        assert _changed(res.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
            "DSAGenBitMask": sign * 30.0, "TensorMove": sign * 40.0}


# --------------------------------------------------------------------------- MindSpore

LEGACY = ("mindinsight/tests/utils/resource/profiler/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/"
          "timeline/msprof_0_2_1.json")


def test_mindspore_layout_kernel_longer_against_itself_and_against_the_gpu_run(samples, tmp_path):
    """The level-1 export laid out as MindSpore 2.5 writes it (no torch op: framework ops with category ""), its
    first MaxPool kernel 50 us longer. Against the untouched layout copy: Vector (No Trans) and Computing +0.05 ms,
    Free -0.05 ms (without torch ops the kernels are categorised by their type, so Vector is 5.488572 ms, not the
    torch_npu export's 4.145534); KernelCompare's MaxPool row +50 us, and the contributor that kernel. User story
    3, the AlexNet GPU trace as base against each copy: only the NPU side's figures move, by the same amounts,
    and the GPU side's stay."""
    tmp = tmp_path / "tmp" / "rank0_ascend_pt"
    shutil.copytree(samples / NPU_TEXT, tmp)
    start, _ = _first_kernel(tmp, "MaxPoolWithArgmaxV1")
    _text_kernel_lengthened(tmp, start, Decimal(50))
    base = _mindspore_25(samples / NPU_TEXT, tmp_path / "b" / "host_1_20250301120000001_ascend_ms")
    slow = _mindspore_25(tmp, tmp_path / "s" / "host_1_20250301120000002_ascend_ms")
    moved = {"Computing Time": 0.05, "Vector": 0.05, "Vector (No Trans)": 0.05, "Free Time": -0.05, "Free": -0.05}
    for sign, (a, b) in ((1, (base, slow)), (-1, (slow, base))):
        res = compare(str(a), str(b))
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == {k: sign * v for k, v in moved.items()}
        assert sorted((om["Vector"][1], om["Vector"][4])) == [5.488572, 5.538572]
        assert _changed(res.sheet("KernelCompare"), "Kernel", ("Total Duration(us)", "Total Duration(us).1")) == {
            "MaxPoolWithArgmaxV1": sign * 50.0}
        assert not {"OperatorCompare", "ApiCompare", "MemoryCompare"} & set(res.sheet_names)
    before, after = compare(str(ALEXNET), str(base)), compare(str(ALEXNET), str(slow))
    om0, om1 = _rows(before.sheet("OverallMetrics")), _rows(after.sheet("OverallMetrics"))
    assert all(om0[k][1:4] == om1[k][1:4] for k in om0)  # the GPU side
    assert {k: round(om1[k][4] - om0[k][4], 6) for k in om0 if om1[k][4] != om0[k][4]} == moved
    wf0, wf1 = _waterfall(before), _waterfall(after)
    assert {k: wf1.get(k, 0) - wf0.get(k, 0) for k in wf0.keys() | wf1.keys() if wf1.get(k) != wf0.get(k)} == {
        "Vector": 50_000, "Free: Other": -50_000}


def test_legacy_mindspore_timeline_kernel_longer_is_other_computing(samples, tmp_path):
    """A legacy MindSpore / CANN timeline (msprof_0_2_1.json: Ascend Hardware and Overlap Analysis lanes, no
    kernel_details.csv to categorise by): the first AI Core task whose Computing window is followed by idle time
    (AssignAdd-op105, 1.56 us) 20 us longer. OverallMetrics: Computing and its Other +0.02 ms, Free -0.02 ms;
    the waterfall: Other Computing +20 us, Free: Other -20 us; E2E unchanged."""
    src = samples / LEGACY
    text = src.read_text()
    objects = list(_objects(text))
    process = {o["pid"]: o["args"]["name"] for _, _, o in objects
               if o.get("ph") == "M" and o.get("name") == "process_name"}
    lane = {"Ascend Hardware": [], "Overlap Analysis": []}
    for s, e, o in objects:
        if o.get("ph") == "X" and process.get(o["pid"]) in lane:
            lane[process[o["pid"]]].append((s, e, o))
    us = 20.0
    edits = None
    for s, e, o in lane["Overlap Analysis"]:
        if o["name"] != "Computing":
            continue
        tasks = [t for t in lane["Ascend Hardware"] if t[2]["ts"] == o["ts"] and t[2]["dur"] == o["dur"]
                 and t[2]["args"].get("Task Type") == "AI_CORE"]
        after = [f for f in lane["Overlap Analysis"] if f[2]["name"] == "Free"
                 and abs(f[2]["ts"] - (o["ts"] + o["dur"])) < 0.01 and f[2]["dur"] > 2 * us]
        if len(tasks) == 1 and len(after) == 1:
            edits = (tasks[0], (s, e, o), after[0])
            break
    assert edits is not None and edits[0][2]["name"].endswith("AssignAdd-op105")

    def bump(seg: str, key: str, delta: float) -> str:
        return re.sub(rf'("{key}": )([-\d.e]+)', lambda m: m.group(1) + repr(float(m.group(2)) + delta), seg,
                      count=1)
    (ks, ke, _), (cs, ce, _), (fs, fe, _) = edits
    new = {ks: (ke, bump(text[ks:ke], "dur", us)), cs: (ce, bump(text[cs:ce], "dur", us)),
           fs: (fe, bump(bump(text[fs:fe], "ts", us), "dur", -us))}
    parts, last = [], 0
    for s in sorted(new):
        parts += [text[last:s], new[s][1]]
        last = new[s][0]
    slow = tmp_path / "msprof_0_2_1.json"
    slow.write_text("".join(parts + [text[last:]]))
    for sign, (a, b) in ((1, (src, slow)), (-1, (slow, src))):
        res = compare(str(a), str(b))
        om = _rows(res.sheet("OverallMetrics"))
        assert {k: r[7] for k, r in om.items() if r[7]} == {k: sign * v for k, v in {
            "Computing Time": 0.02, "Other": 0.02, "Free Time": -0.02, "Free": -0.02}.items()}
        assert _waterfall(res) == {"Other Computing": sign * 20_000, "Free: Other": sign * -20_000}
        assert pytest.approx(om["E2E Time"][1]) == om["E2E Time"][4]


# --------------------------------------------------------------------------- --op_name_map pairs in the contributors

def _dropout_backward_renamed(samples: Path, tmp_path: Path) -> tuple[str, str, Path, Path]:
    """(the NPU's name, the GPU's name, the base, its copy): level-1 text rank 0 with the dropout backward op under
    the GPU's name (trace_view.json, both occurrences) and its backward DropOutDoMask kernel 50 us longer."""
    old, new = (f"autograd::engine::evaluate_function: {n}DropoutBackward0" for n in ("Npu", "Native"))
    base, slow = samples / NPU_TEXT, tmp_path / "slow" / "rank0_ascend_pt"
    shutil.copytree(base, slow)
    with open(slow / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        masks = [r for r in csv.DictReader(fh) if r["Type"] == "DropOutDoMask"]
    assert len(masks) == 4  # two forward, two backward (the last two)
    _text_kernel_lengthened(slow, masks[2]["Start Time(us)"].strip(), Decimal(50),
                            after="Communication(Not Overlapped)")
    trace = slow / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    raw = trace.read_bytes()
    assert raw.count(f'"{old}"'.encode()) == 2
    trace.write_bytes(raw.replace(f'"{old}"'.encode(), f'"{new}"'.encode()))
    return old, new, base, slow


def test_op_name_map_pair_of_contributors_is_given_together(samples, tmp_path):
    """The comparison side records the dropout backward op under the GPU's name (``...: NativeDropoutBackward0``
    for the NPU's ``...: NpuDropoutBackward0``, as a run on the other stack names it; trace_view.json, both
    occurrences) and its backward DropOutDoMask kernel 50 us longer. OperatorCompareStatistic and
    MemoryCompareStatistic keep a row per name (reference-2 §2.7, §5), so the time contributors are the two names
    with opposite signs (+0.07432 / -0.02432 ms) and the memory contributors the same 2.48 MB moved from one name to
    the other; with ``--op_name_map`` pairing the names, the note under each table gives the pair together: +0.050
    ms, the injected amount, and +0.00 MB. Without the map, or with one that pairs no listed row, no such note."""
    old, new, base, slow = _dropout_backward_renamed(samples, tmp_path)
    both = {"enable_operator_compare": True, "enable_memory_compare": True}
    plain = compare(str(base), str(slow), **both)
    rows = plain.contributors.set_index("Name")[["Base(ms)", "Comparison(ms)"]]
    assert sorted(rows.index) == [new, old]
    (b_old, c_old), (b_new, c_new) = rows.loc[old].tolist(), rows.loc[new].tolist()
    assert c_old == 0 and b_new == 0 and round(c_new - b_old, 6) == 0.05  # one op, two names
    mem = plain.memory_contributors.set_index("Name")[["Base(MB)", "Comparison(MB)"]]
    assert sorted(mem.index) == [new, old] and mem.loc[old].tolist() == mem.loc[new].tolist()[::-1]
    from msprof_compare.compare.memory_summary import contributors_note
    assert "--op_name_map" not in unexplained_note(plain.contributors, plain.waterfall)
    assert not contributors_note(plain.memory_contributors)

    paired = compare(str(base), str(slow), **both, op_name_map={new: old})
    assert paired.contributors["Name"].tolist() == plain.contributors["Name"].tolist()  # the sheets' rows, as before
    note = unexplained_note(paired.contributors, paired.waterfall)
    assert (f"the op_name_map option pairs names that the statistic sheets, and so these rows, keep apart: {old} "
            f"with {new} {b_old:.3f} ms -> {c_new:.3f} ms together (+0.050 ms)") in note
    mb = mem.loc[old].iloc[0]
    assert contributors_note(paired.memory_contributors) == (
        f"the op_name_map option pairs names that the statistic sheets, and so these rows, keep apart: {old} with "
        f"{new} {mb:.2f} MB -> {mb:.2f} MB together (+0.00 MB)")
    # the same notes in the JSON and on the console
    from msprof_compare.report.json_report import to_document
    from msprof_compare.report.summary_console import render_explain, render_memory
    summary = to_document(paired)["summary"]
    assert summary["contributors_note"] == note and summary["memory_contributors_note"] == contributors_note(
        paired.memory_contributors)
    assert f"Note: {note}." in render_explain(paired.frames, paired.verdict)
    assert f"Note: {summary['memory_contributors_note']}." in render_memory(paired.frames)
    # a map whose names are no listed row's: no note
    other = compare(str(base), str(slow), **both, op_name_map={"aten::add_": "aten::mul_"})
    assert "--op_name_map" not in unexplained_note(other.contributors, other.waterfall)
    # a row without device time on either side (aten::view, 0 -> 0 ms on the sheet) adds nothing to a pair: mapped
    # with the pair it is left out of the note, mapped alone onto a listed row it makes no note (which only repeated
    # that row's own figures)
    stat = compare(str(base), str(slow), enable_operator_compare=True, disable_module=True).sheet(
        "OperatorCompareStatistic")
    assert stat[stat["Operator Name"] == "aten::view"].iloc[:, [2, 4]].values.tolist() == [[0, 0]]
    three = compare(str(base), str(slow), **both, op_name_map={new: old, "aten::view": old})
    assert unexplained_note(three.contributors, three.waterfall) == note
    alone = compare(str(base), str(slow), **both, op_name_map={"aten::view": old})
    assert "--op_name_map" not in unexplained_note(alone.contributors, alone.waterfall)


def test_op_name_map_pair_note_is_not_given_under_disable_details(samples, tmp_path):
    """Under --disable_details no operator is matched (reference-1 §1.5) and the run warns "The op_name_map
    parameter is ignored", yet the note under the contributors said "--op_name_map pairs names that the statistic
    sheets, and so these rows, keep apart: ... 0.024 ms -> 0.074 ms together", and the memory note the same: a map
    the run says it ignores was said to pair names. No such note there; the rows are as without the map. The
    rows' figures, by hand from the raw kernel_details.csv: the two backward DropOutDoMask kernels, 11.52 + 12.80 us
    on the base under the NPU name, the same plus the injected 50 us on the copy under the GPU name."""
    from msprof_compare.compare.memory_summary import contributors_note
    from msprof_compare.options import build_options

    old, new, base, slow = _dropout_backward_renamed(samples, tmp_path)
    with open(base / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", newline="", encoding="utf-8") as fh:
        back = [Decimal(r["Duration(us)"]) for r in csv.DictReader(fh) if r["Type"] == "DropOutDoMask"][2:]
    assert back == [Decimal("11.52"), Decimal("12.80")]
    _, said = build_options(disable_details=True, op_name_map=str({new: old}))
    assert said == ["The op_name_map parameter is ignored: it only takes effect when operators are matched, which "
                    "disable_details turns off."]
    for module_off in (False, True):  # the contributors from the module run's pairing, or from the sheet itself
        run = compare(str(base), str(slow), enable_operator_compare=True, enable_memory_compare=True,
                      disable_details=True, disable_module=module_off, op_name_map={new: old})
        rows = run.contributors.set_index("Name")[["Base(ms)", "Comparison(ms)"]]
        assert rows.to_dict("index") == {new: {"Base(ms)": 0.0, "Comparison(ms)": float(sum(back) + 50) / 1000},
                                         old: {"Base(ms)": float(sum(back)) / 1000, "Comparison(ms)": 0.0}}
        assert "--op_name_map" not in unexplained_note(run.contributors, run.waterfall)
        assert len(run.memory_contributors) == 2 and not contributors_note(run.memory_contributors)


def test_op_name_map_pairs_are_given_largest_contributor_first(samples):
    """DB export level 1 against level 2 (rank 0), seven operator contributors, with four entries that each pair a
    listed contributor with another row of OperatorCompareStatistic. The note shows three groups: they came in the
    order of each group's first sheet row, so AddmmBackward0's (rank 4) was left off for copy_bucket_to_grad's (rank
    5, through aten::topk's row), and ConvolutionBackward0 (rank 1) came third, with " (4 in all)" glued to it. Now
    by their first contributor's rank, ending "; ... (4 in all)" as the other notes' lists. A many-to-one map whose
    group changed by
    -22 ns read "(-0.000 ms)"; it reads "+0.000" as the console's tables. Figures from the sheet's cells, by hand:
    2.008052 + 0.026160 = 2.034212 -> 1.996702 + 0.023680 = 2.020382 ms; 2.341748 + 0.053020 = 2.394768 ->
    2.350247 + 0.052921 = 2.403168; 0.612633 + 0.009621 = 0.622254 -> 0.605671 + 0.010260 = 0.615931."""
    pre = "autograd::engine::evaluate_function: "
    conv, addmm, ddp = pre + "ConvolutionBackward0", pre + "AddmmBackward0", "DistributedDataParallel.forward"
    l1, l2 = (str(samples / f"msinsight/test/data/pytorch/db/level{n}/rank0_ascend_pt") for n in (1, 2))
    four = {"aten::cross_entropy_loss": ddp, "aten::eq": conv, "aten::sum": addmm,
            "aten::topk": "torch.distributed.ddp.reducer::copy_bucket_to_grad"}
    res = compare(l1, l2, disable_module=True, op_name_map=four)
    assert res.contributors["Name"].iloc[0] == conv and len(res.contributors) == 7
    cells = res.sheet("OperatorCompareStatistic").set_index("Operator Name").iloc[:, [1, 3]]
    assert cells.loc[[conv, "aten::eq"]].to_numpy().tolist() == [[2.008052, 1.996702], [0.02616, 0.02368]]
    assert cells.loc[[ddp, "aten::cross_entropy_loss"]].to_numpy().tolist() == [[2.341748, 2.350247],
                                                                                   [0.05302, 0.052921]]
    assert cells.loc[[addmm, "aten::sum"]].to_numpy().tolist() == [[0.612633, 0.605671], [0.009621, 0.01026]]
    assert unexplained_note(res.contributors, res.waterfall).startswith(
        f"the op_name_map option pairs names that the statistic sheets, and so these rows, keep apart: aten::eq with "
        f"{conv} 2.034 ms -> 2.020 ms together (-0.014 ms); {ddp} with aten::cross_entropy_loss 2.395 ms -> 2.403 ms "
        f"together (+0.008 ms); aten::sum with {addmm} 0.622 ms -> 0.616 ms together (-0.006 ms); ... (4 in all)")
    # many names onto one: six rows, -0.000022 ms together (2.995042 -> 2.995020 from the cells)
    many = {n: ddp for n in (addmm, pre + "NpuDropoutBackward0", pre + "LogSoftmaxBackward0", "aten::mul",
                             "aten::mul_")}
    res = compare(l1, l2, disable_module=True, op_name_map=many)
    rows = cells.loc[[ddp, *many]]
    assert [round(float(x), 6) for x in rows.sum()] == [2.995042, 2.99502]
    note = unexplained_note(res.contributors, res.waterfall)
    assert note.startswith("the op_name_map option pairs names that the statistic sheets, and so these rows, keep "
                           f"apart: {ddp} with aten::mul_, aten::mul, {pre}LogSoftmaxBackward0, "
                           f"{pre}NpuDropoutBackward0 and {addmm} 2.995 ms -> 2.995 ms together (+0.000 ms)")
