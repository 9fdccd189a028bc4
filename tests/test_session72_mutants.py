"""Session 72's hand mutants of session 71's source changes that the suite let live (mut72).

Each test names the mutants it kills; each fails under them and passes on the real code. Figures are by hand or
by the raw sample files (``test_gpu_alexnet``'s own reading of them), never read back from this package."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
import test_op_name_map_idle as idle
import test_transparent_op as tt
from logutil import split_idle
from test_gpu_alexnet import GPU, NPU, _net_of_communication_by_raw_files
from test_overall_npu import BASE_ZERO

from msprof_compare.api import compare
from msprof_compare.compare.breakdown import Breakdown
from msprof_compare.compare.overall import summary_table, table_notes
from msprof_compare.compare.summary import net_changes
from msprof_compare.compare.summary_notes import net_of_communication


def _rows(*rows: tuple[str, float, float]) -> pd.DataFrame:
    """OperatorCompareStatistic-shaped rows (Name, Base(ms), Comparison(ms)), as ``net_changes`` reads them."""
    return pd.DataFrame(rows, columns=["Name", "Base(ms)", "Comparison(ms)"])


def test_net_of_communication_of_a_base_side_holding_it(tmp_path: Path) -> None:
    """Kills n_held0 (the base side's communication not taken out of its time): test_gpu_alexnet's pair with the
    sides swapped, the NPU text export (AccumulateGrad's all-reduce) as the base. The ranking is the raw files'
    with every change's sign turned: the same names, in the same order, net of the base's HCCL ops."""
    if not NPU.is_dir():
        pytest.skip("shared samples not found")
    want = [(n, -d) for n, d in _net_of_communication_by_raw_files()]
    res = compare(str(NPU), str(GPU))
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text())
    got = doc["summary"]["contributors_net_of_communication"]
    assert got is not None
    assert [(r["name"], round(r["diff_ms"] * 10**6)) for r in got] == want
    shown = ", ".join(f"{n} {Decimal(d) / 10**6:+.3f} ms" for n, d in want)
    assert shown.startswith("Optimizer.step#SGD.step -1.572 ms, DistributedDataParallel.forward -1.307 ms")
    # before the note on Free: Other, which shrank by 17.902 ms (test_gpu_to_npu_user.py)
    note, idle = split_idle(doc["summary"]["contributors_note"])
    assert note.endswith(shown) and idle.startswith("Free: Other -17.902 ms")


def test_net_ranking_names_five_where_the_cut_takes_more() -> None:
    """Kills n_top6 (NET_TOP 6): ten operators 1 ms slower each, no communication: the 80% cut takes eight, of
    which the first five in the sheet's order (equal changes keep it) are named."""
    rows = _rows(*((f"op{i}", 1.0, 2.0) for i in range(10)))
    assert net_changes(rows, [None, None]) == [(f"op{i}", 1.0) for i in range(5)]


def test_net_ranking_leaves_out_a_change_that_reads_0_000_ms() -> None:
    """Kills n_500 (the 0.001 ms mask dropped): +1000 ns and +400 ns; the 80% cut of their 1400 ns needs both,
    but +400 ns reads +0.000 ms, so one name is said."""
    rows = _rows(("a", 1.0, 1.001), ("b", 2.0, 2.0004))
    assert net_changes(rows, [None, None]) == [("a", 0.001)]


def test_net_ranking_reads_whole_ns_rounded() -> None:
    """Kills n_rint (ms * 1e6 cut down, not rounded, to ns): 1.001 ms is 1000999.9999999999 in floating point,
    1,001,000 ns; the communication inside (200,000 ns on the comparison side) is taken out: +0.801 ms."""
    rows = _rows(("a", 0.0, 1.001))
    assert net_changes(rows, [None, {"a": 200_000}]) == [("a", 0.801)]


def _communication(net: list[tuple[str, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A contributors' table whose one row, AccumulateGrad, changed by +106 ms of which +100 ms is its HCCL ops
    (COMM_SHARE met), and the "contributor_communication" frame holding that and the ranking ``net``."""
    acc = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    contrib = pd.DataFrame({"Name": [acc], "Diff(ms)": [106.0]})
    comm = pd.DataFrame({"Name": [acc], "Base(ms)": [0.0], "Comparison(ms)": [100.0]})
    comm.attrs.update(kinds=("GPU", "NPU"), held=(True, True), net=net)
    return contrib, comm


def test_net_ranking_said_only_where_it_names_an_operator_the_table_does_not() -> None:
    """Kills n_listed (the ranking said though every name in it is listed) and n_all (said only where none of its
    names is listed): the table's AccumulateGrad alone ranked says nothing; beside an unlisted op it is said."""
    acc = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    assert net_of_communication(*_communication([(acc, 6.0)])) == []
    both = [(acc, 6.0), ("Optimizer.step#SGD.step", 1.572)]
    assert net_of_communication(*_communication(both)) == both


def test_gate_names_both_sides_of_one_input_without_e2e_time(samples, tmp_path: Path) -> None:
    """Kills g_one (the gate's no-E2E refusal naming the base side where one input is on both): heatMap's
    trace_view.json (6 events, no Overlap Analysis lane: test_gate_json's input) given twice."""
    from test_gate_json import HEATMAP

    heatmap = samples / HEATMAP
    res = compare(str(heatmap), str(heatmap), enable_profiling_compare=True, fail_on_regression=5)
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text(encoding="utf-8"))
    assert (doc["gate"]["exit_code"], doc["gate"]["regressed"]) == (1, None)
    assert doc["gate"]["lines"] == [f"error: {heatmap}: no E2E time (no device activity or Overlap Analysis data), "
                                    "so fail_on_regression cannot judge the run (both sides)"]


def test_one_sided_memory_note_under_max_kernel_num_without_details(samples) -> None:
    """Kills ms_dd_or (the one-sided memory note withheld wherever --max_kernel_num is given): with
    --disable_details no drill-down runs, the memory sheets compare SGLang's capture_32_DECODE whole against the
    BERT trace's ops, and the note is test_one_sided_wrapper's (189.77 MB and 104 ops, by that test's raw reading)."""
    from test_one_sided_wrapper import BERT, CAPTURE, CAPTURE_NOTE, SGLANG

    from msprof_compare.compare.memory_summary import contributors_note

    res = compare(str(samples / SGLANG), str(samples / BERT), max_kernel_num=10, disable_details=True)
    contrib = res.frames["memory_contributors"]
    assert contrib["Name"].tolist() == [CAPTURE]
    assert contributors_note(contrib) == CAPTURE_NOTE


@pytest.fixture(scope="module")
def gpu_without_memory(tmp_path_factory) -> Path:
    """The H200 AlexNet excerpt without its [memory] events: a GPU trace recorded without profile_memory."""
    import gzip

    from test_drill_memory import _gpu

    doc = json.loads(gzip.open(_gpu()).read())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") != "[memory]"]
    path = tmp_path_factory.mktemp("nomem") / "alexnet_h200_nomem.pt.trace.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_drill_down_words_need_both_sides_recorded(gpu_without_memory: Path) -> None:
    """Kills ms_rec (the drill-down's left-out MB reckoned with a side that recorded nothing): the H200 excerpt
    against its copy without memory, --max_kernel_num 4. The comparison is "not recorded"; the mutant's line went
    on "(base 318.04 MB, comparison 0.00 MB): 1018.51 MB -> 0.00 MB (-1018.51 MB) without the option"."""
    from test_drill_memory import _gpu

    from msprof_compare.report.summary_console import render_memory

    res = compare(str(_gpu()), str(gpu_without_memory), max_kernel_num=4)
    assert res.memory_totals["comparison_recorded"] is False
    assert res.memory_totals["drill_left_out"] is None
    (line,) = [x for x in render_memory(res.frames).splitlines() if x.startswith("Memory allocated")]
    assert "comparison not recorded" in line and "drill-down" not in line


def test_app_words_need_the_gpu_side_peak(gpu_without_memory: Path) -> None:
    """Kills ms_app_none (peak_app given beside a GPU side without a peak): NPU pair 1's level-1 text export, whose
    peak counts APP (test_gpu_to_npu_user), against the H200 excerpt without memory: no peak to set it beside, so
    no APP words in the JSON, nor in the checks (as test_gpu_to_npu_user's own case holds them)."""
    from conftest import SAMPLES
    from test_drill_memory import NPU as NPU_L1

    if not (SAMPLES / NPU_L1).is_dir():
        pytest.skip("samples not present")
    res = compare(str(SAMPLES / NPU_L1), str(gpu_without_memory))
    assert res.memory_totals["comparison_peak_gb"] is None
    assert res.memory_totals["peak_app"] is None
    assert not [d for d in res.guards["Detail"].astype(str) if "APP" in d]


def test_one_sided_wrapper_not_said_beside_a_two_sided_finding() -> None:
    """Kills ow_two (``operator_wrappers`` handing the one-sided rule no two-sided answer, so it looked for a
    one-sided wrapper where the two-sided note applies): hand-made OperatorCompareStatistic rows (index, name,
    base ms, base ops, comparison ms, comparison ops) where each side's 9.5 of 10 ms lies under an annotation the
    other has no op of (WRAPPER_SHARE 0.9), and the comparison also has 10 aten:: ops (ONE_SIDED_MIN_OPS): the
    two-sided finding alone, as the rule's docstring says."""
    from msprof_compare.compare.summary_notes import operator_wrappers

    rows = [[1, "[A]", 9.5, 1, 0.0, 0], [2, "[B]", 0.0, 0, 9.5, 1], [3, "aten::mm", 0.5, 1, 0.5, 10]]
    assert operator_wrappers(rows, []) == (("[A]", 9.5, "[B]", 9.5), None)


# --- gap72: hand mutants of session 72's own code -------------------------------------------------------------------

def _map_said(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path, **kw: object) -> list[str]:
    """The ``--op_name_map`` idle-entry lines of one run of test_op_name_map_idle's pairs."""
    return idle._said(caplog, base, comparison, **kw)


def _map_pairs() -> tuple[Path, Path, Path]:
    root = Path(__file__).resolve().parents[2] / "shared" / "samples"
    if not (root / idle.NPU).is_dir():
        pytest.skip("shared samples not found")
    return root / idle.GPU, root / idle.NPU, root / idle.V100


def test_idle_map_says_nothing_of_an_identity_a_chained_or_an_unheld_entry(caplog: pytest.LogCaptureFixture) -> None:
    """Kills i_kv (an entry naming its own name said "renamed alike"), i_again (an entry whose new name is renamed
    again, the renames-once warning's, said too) and i_total (an entry renaming no op said "the  operator named ...
    lie outside"). The raw traces: the V100 and NPU traces hold one plain SGD step each, the A100 trace none and no
    fused step; no trace holds an op named 'aten::nosuchop'."""
    FUSED, SGD, _events = idle.FUSED, idle.SGD, idle._events
    gpu, npu, v100 = _map_pairs()
    ga, na, va = _events(gpu), _events(npu), _events(v100)
    assert va[SGD] == na[SGD] == 1 and ga[SGD] == ga[FUSED] == na[FUSED] == 0
    assert ga["aten::nosuchop"] == na["aten::nosuchop"] == 0
    assert _map_said(caplog, v100, npu, op_name_map={SGD: SGD}) == []
    assert _map_said(caplog, gpu, npu, op_name_map={SGD: FUSED, FUSED: "x"}) == []
    assert _map_said(caplog, gpu, npu, op_name_map={"aten::nosuchop": "aten::mm"}) == []


def test_idle_map_counts_the_other_sides_ops_another_entry_renames_alike(caplog: pytest.LogCaptureFixture) -> None:
    """Kills i_tgt (the other side's ops under another key of the same new name not counted: "no comparison operator
    is named 'CONV'"). test_op_name_map_idle's conv2d pair with both names mapped onto one new name 'CONV': the
    pairing sees the same names as there (the A100's 5 cudaDeviceSynchronize and 10 conv2d, two forwards, against
    the NPU's 5 conv2d), so none of the 5 renamed pairs; the NPU's 5 conv2d are the compared ops now named CONV."""
    WRAPPERS, _events = idle.WRAPPERS, idle._events
    gpu, npu, _ = _map_pairs()
    ga, na = _events(gpu), _events(npu)
    assert ga["cudaDeviceSynchronize"] == 5 and ga["aten::conv2d"] == 10 and na["aten::conv2d"] == 5
    assert ga["CONV"] == na["CONV"] == 0
    assert _map_said(caplog, gpu, npu, transparent_op=WRAPPERS,
                     op_name_map={"cudaDeviceSynchronize": "CONV", "aten::conv2d": "CONV"}) == [
        "op_name_map: the entry 'cudaDeviceSynchronize': 'CONV' renames 5 base operators named "
        "'cudaDeviceSynchronize', but none pairs with the comparison side's 5 compared operators named 'CONV' (each "
        "pairs with another base operator); the entry 'aten::conv2d': 'CONV' renames the 10 base and 5 comparison "
        "operators named 'aten::conv2d' alike, so they pair as by that name without it (an entry pairs a name of one "
        "side with another name of the other)."]


def test_idle_map_counts_the_new_names_ops_inside_the_other_sides_compared_ones(
        caplog: pytest.LogCaptureFixture) -> None:
    """The branch where the new name lies only inside the other side's compared ops: the A100's 5
    cudaDeviceSynchronize (compared with the wrappers opened) onto 'aten::mm', whose 6 NPU events all lie inside an
    AddmmBackward0 inside an 'autograd::engine::evaluate_function: AddmmBackward0' (by the raw events' spans), no
    wrapper opened."""
    WRAPPERS, _events = idle.WRAPPERS, idle._events
    gpu, npu, _ = _map_pairs()
    assert _events(gpu)["cudaDeviceSynchronize"] == 5 and _events(npu)["aten::mm"] == 6
    assert _map_said(caplog, gpu, npu, transparent_op=WRAPPERS, op_name_map={"cudaDeviceSynchronize": "aten::mm"}) == [
        "op_name_map: the entry 'cudaDeviceSynchronize': 'aten::mm' renames 5 base operators named "
        "'cudaDeviceSynchronize', and no comparison operator compared is named 'aten::mm': its 6 ops of that name lie "
        "inside compared operators, and the pairing compares the top-level ones (the max_kernel_num option pairs the "
        "ops inside a pair of two)."]


def _gpu_beside_groups(kind: str, groups: int) -> tuple[Breakdown, Breakdown]:
    """Hand-made breakdowns (no sample holds several HCCL groups beside a trace_view.json, as test_overall_gpu's):
    a ``kind`` side of 2 ms uncovered communication and no group, beside an NPU side of ``groups`` groups of
    0.1 ms of transmit each."""
    gpu, npu = Breakdown(kind), Breakdown("NPU")
    for bd in (gpu, npu):
        bd.e2e_ns, bd.computing_ns = 10_000_000, 4_000_000
    gpu.uncovered_comm_ns = 2_000_000
    npu.groups = {f"Group {i} Communication": {"wait": 0, "transmit": 100_000} for i in range(1, groups + 1)}
    return gpu, npu


def test_groupless_note_names_three_groups_without_a_count_of_0_more() -> None:
    """Kills g_gt (``len(shown) >= _GROUPS_NAMED``: "... Group 2 Communication, Group 3 Communication and 0 more"):
    three groups, the cut's number, are all named; 2 ms of uncovered communication reads 0.002s."""
    gpu, npu = _gpu_beside_groups("GPU", 3)
    assert [n for n in summary_table(gpu, npu)["notes"] if "HCCL" in n] == [
        "Base row: a GPU trace's collective kernels belong to no HCCL communication group, so OverallMetrics' rows of "
        "the other side's 3 communication groups (Group 1 Communication, Group 2 Communication and Group 3 "
        "Communication), with the rows under them, read 0 on its side, which is not a measurement: its 0.002s of "
        "uncovered communication is in Uncovered Communication Time alone."]


def test_groupless_note_is_no_npu_sides() -> None:
    """Kills g_kind (the GPU test dropped): an NPU side without a group of its own is no GPU trace, and its
    collectives are no GPU kernels: no line says so of it."""
    npu0, npu = _gpu_beside_groups("NPU", 2)
    assert not [n for n in summary_table(npu0, npu)["notes"] if "HCCL" in n]


def test_the_zero_wait_note_given_a_step_says_the_run_writes_no_communication_sheet() -> None:
    """Kills p_step2 (the step form of the plane-rule Wait Time note without "this run writes no
    CommunicationCompare"): session 70's hand-made sides (2.5 ms of Notify_Wait on planes the least-waiting pick
    left out), the base given step 0, in a run without the communication comparison."""
    def side() -> Breakdown:
        bd = Breakdown("NPU")
        bd.e2e_ns, bd.notify_wait_ns = 10_000_000, 2_500_000
        bd.groups = {"Group 1 Communication": {"wait": 0, "transmit": 1_000_000}}
        return bd

    absent = "; this run writes no CommunicationCompare: the enable_communication_compare option adds it)."
    notes = [n for n in table_notes(side(), side(), [""], (0, -1), communication_sheet=False) if "Wait Time" in n]
    assert notes == [
        f"Base row: its Wait Time {BASE_ZERO} is that of the HCCL plane that waits least in each communication group, "
        "as the original measures a text export, here a plane with no Notify_Wait; its planes hold 2.500 ms of "
        "Notify_Wait over the whole profile, which its Wait Time covers too (CommunicationCompare's Notify_Wait rows "
        "hold step 0's alone" + absent,
        "Comparison row: its Wait Time 0.000s is that of the HCCL plane that waits least in each communication "
        "group, as the original measures a text export, here a plane with no Notify_Wait; its planes hold 2.500 ms "
        "of Notify_Wait in all (CommunicationCompare's Notify_Wait rows" + absent]


def test_rank_by_rank_refusal_of_two_names_quotes_each_for_the_shell(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """Kills t_q (the rank-by-rank refusal quoting as Python does: "DDP's fwd" in double quotes, which the
    single-compare refusal and the rank's own warning no longer do), t_pl / t_open ("names" / "it opens" of two
    names) and t_and: test_transparent_op's two ranks, two names no rank has. bash reads each quoted name back
    as the name given; sorted, the capital D comes first."""
    from cliutil import run_inproc

    job = tt._two_ranks(tmp_path)
    names = ["aten::nope", "DDP's fwd"]
    args = ["-bp", str(job), "-d", str(job), "--enable_operator_compare", "--disable_module"]
    code, _, err = run_inproc(capsys, *args, *(a for n in names for a in ("--transparent_op", n)),
                              "-o", str(tmp_path / "out"))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and errors == [
        "error: --transparent_op 'DDP'\"'\"'s fwd' and --transparent_op 'aten::nope' name no operator of either side "
        "in any rank compared (2), so they open nothing (the op's whole name, case-sensitive, as a rank report's "
        "Operator Name gives it)"], err
    quoted = errors[0].removeprefix("error: --transparent_op ").partition(" and ")[0]
    shown = subprocess.run(["bash", "-c", f"printf '%s\\n' {quoted}"], capture_output=True, text=True, check=True)
    assert shown.stdout == "DDP's fwd\n"


def _matching_lines(caplog: pytest.LogCaptureFixture, base: Path, comparison: Path, **kw: object) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(base), str(comparison), **kw)
    return [m for m in caplog.messages if "parameter is ignored" in m]


def test_matching_options_against_two_bare_sides_of_two_kinds_name_each_sides_reason(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Kills a_one (two sides without torch ops of different kinds given the first side's reason alone):
    test_operators' pair of two bare sides, the NPU fixture with its 208 cpu_op events cut out (a torch_npu
    export) against the MindSpore fixture cut from the same window."""
    from test_mindspore_user_leftovers import MS_FIXTURE, MS_NONE
    base = tmp_path / "rank0_ascend_pt"
    shutil.copytree(Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt", base)
    trace = base / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text(encoding="utf-8"))
    kept = [e for e in events if e.get("cat") != "cpu_op"]
    assert len(events) - len(kept) == 208
    trace.write_text(json.dumps(kept), encoding="utf-8")
    assert _matching_lines(caplog, base, MS_FIXTURE, enable_operator_compare=True, use_input_shape=True) == [
        "The use_input_shape parameter is ignored: it only takes effect when operators are matched, and neither side "
        "has a torch op (base: a torch_npu export without cpu_op events has none; comparison: "
        f"{MS_NONE})."]


def test_matching_options_against_a_bare_side_under_disable_details_are_said_once(
        caplog: pytest.LogCaptureFixture) -> None:
    """Kills a_dd (the side-without-ops line given under --disable_details too): --disable_details already says
    each matching option is ignored; a MindSpore side's line beside it said the same option twice."""
    from test_mindspore_user_leftovers import H200_ALEXNET, MS_FIXTURE
    said = _matching_lines(caplog, H200_ALEXNET, MS_FIXTURE, disable_details=True, enable_operator_compare=True,
                           op_name_map={"aten::conv2d": "Conv2D"})
    assert len([m for m in said if "op_name_map" in m]) == 1, said
    assert not [m for m in said if "torch op" in m], said


def test_a_chained_map_against_a_bare_side_gets_no_renames_once_advice(caplog: pytest.LogCaptureFixture) -> None:
    """Kills a_crossed (the renames-once advice given where the map is said to be ignored): against the MindSpore
    fixture, which has no torch op, a chained map {'aten::conv2d': 'Conv2D', 'Conv2D': 'X'} renames nothing, so
    advice on how to write its entries is beside the point; the one line is that it is ignored."""
    from test_mindspore_user_leftovers import H200_ALEXNET, MS_FIXTURE, MS_NONE
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(H200_ALEXNET), str(MS_FIXTURE), enable_operator_compare=True,
                op_name_map={"aten::conv2d": "Conv2D", "Conv2D": "X"})
    said = [m for m in caplog.messages if "op_name_map" in m]
    assert said == ["The op_name_map parameter is ignored: it only takes effect when operators are matched, and the "
                    f"comparison side has no torch op ({MS_NONE})."]


def test_rank_by_rank_takes_a_name_nested_in_every_rank(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Kills o_r2 (a name found only nested inside compared ops not recorded as found in a rank): in the single
    compare such a name is taken, with a warning that it opens nothing without max_kernel_num; rank by rank it was
    refused at the end as a name no rank has. test_transparent_op's two ranks: every aten::convolution of the H200
    excerpt lies inside an aten::conv2d (by the raw events' spans, same thread), on both ranks (rank 1 lacks the
    DDP forward alone)."""
    from cliutil import run_inproc

    job = tt._two_ranks(tmp_path)
    events = [e for e in tt._load(tt.H200)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    convs = [e for e in events if e["name"] == "aten::convolution"]
    assert convs and all(any(p["name"] == "aten::conv2d" and p["tid"] == c["tid"] and p["ts"] <= c["ts"]
                             and p["ts"] + p["dur"] >= c["ts"] + c["dur"] for p in events) for c in convs)
    args = ["-bp", str(job), "-d", str(job), "--enable_operator_compare", "--disable_module"]
    code, _, err = run_inproc(capsys, *args, "--transparent_op", "aten::convolution", "-o", str(tmp_path / "out"))
    assert code == 0 and not [line for line in err.splitlines() if line.startswith("error:")], err


def test_a_bare_trace_view_of_no_named_export_without_ops_is_called_a_torch_npu_one(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Kills o_fw (a trace_view.json of an unknown profiler called a MindSpore export): the NPU fixture's
    trace_view.json (a torch_npu export: no MindSpore process lane) without its 208 cpu_op events, in a folder
    named as no profiling directory and given as the file, against the H200 AlexNet trace."""
    from test_mindspore_user_leftovers import H200_ALEXNET
    source = Path(__file__).parent / "data" / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(source.read_text(encoding="utf-8"))
    assert not [e for e in events if e.get("ph") == "M" and (e.get("args") or {}).get("name") == "MindSpore"]
    kept = [e for e in events if e.get("cat") != "cpu_op"]
    assert len(events) - len(kept) == 208
    trace = tmp_path / "run1" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    trace.parent.mkdir(parents=True)
    trace.write_text(json.dumps(kept), encoding="utf-8")
    assert _matching_lines(caplog, trace, H200_ALEXNET, enable_operator_compare=True, use_input_shape=True) == [
        "The use_input_shape parameter is ignored: it only takes effect when operators are matched, and the base side "
        "has no torch op (a torch_npu export without cpu_op events has none)."]
