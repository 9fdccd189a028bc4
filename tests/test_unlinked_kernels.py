"""Device kernels no flow links to an operator: the "kernels linked to no operator" validity check (session 49).

The operator and module sheets (and the Summary's top contributors) hold the kernels the launch flows (NPU text:
async_npu; DB: CANN connection ids; Kineto: ac2g) link to an op; the time breakdown counts every kernel. A kernel
left unlinked vanished from those sheets without a word; a log line per side then said it, which a reader of the
workbook or the JSON never saw. It is now a note of the validity checks (console note line, Summary sheet, JSON),
said once. Each test cuts the links of a few kernels of a real excerpt and checks the count and time the row gives
against figures computed here from the file itself (JSON / SQL, not the loaders), and that the unmodified excerpt
has no row where it links every kernel.
"""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from dbutil import edited_copy, sql
from logutil import blocks
from noteutil import Note

from msprof_compare.api import compare

DATA = Path(__file__).parent / "data"
NPU = DATA / "npu" / "rank0_ascend_pt"
DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
KINETO = DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
#: the Ascend Hardware task types of operator kernels, as the CANN docs list the compute ones
COMPUTE = {"AI_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "AI_VECTOR_CORE", "FFTS_PLUS"}
CHECK = "kernels linked to no operator"
#: the note's line on the console (log), before its figures
NOTE = "The operator and module sheets and their top contributors leave out kernels no flow links to an operator"
LEAD = ("device kernels (NPU: compute tasks) no flow links to an operator, which the operator and module sheets and "
        "their top contributors leave out: ")
TAIL = ("; the overall time breakdown (OverallMetrics, the waterfall) counts them, so the operator rows miss that much "
        "of the side's device time: read the operator and module figures with this in mind, or profile a window that "
        "holds their launches")

#: ``TAIL`` of a run without the time breakdown (--enable_operator_compare alone), which names no sheet it lacks
OPERATORS_ONLY_TAIL = "; " + TAIL.split(", so ", 1)[1]


def _ms(ns: int) -> str:
    """ns as ms to 3 decimals, a half away from zero (as every ms of the Summary)."""
    return str((Decimal(ns) / 1_000_000).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


_NOTE = Note(CHECK, NOTE, LEAD, TAIL, lambda m: "no flow links to an operator" in m or "to an operator:" in m)
#: ``_NOTE`` of a run without the time breakdown
_NOTE_OPERATORS_ONLY = Note(CHECK, NOTE, LEAD, OPERATORS_ONLY_TAIL, _NOTE.speaks)


def _row(base: Path, comparison: Path, out: Path, caplog: pytest.LogCaptureFixture,
         **options: Any) -> dict[str, Any] | None:
    """The "kernels linked to no operator" row of a compare with the operator (module) sheets on, once its faces
    are seen to agree (``noteutil.Note.row``: the guards frame, the JSON, the Summary sheet where the run has a
    time breakdown, the console's block); None where there is no row (and nothing said of unlinked kernels)."""
    options = {"enable_operator_compare": True, "enable_profiling_compare": True, **options}
    note = _NOTE if options["enable_profiling_compare"] else _NOTE_OPERATORS_ONLY
    return note.row(base, comparison, out, caplog, **options)


def _only_the_operator_sheet_lost(cut: Path, whole: Path, ns: int) -> None:
    """What the row says, with ``cut`` the base and ``whole`` the comparison: the operator sheet lost exactly
    ``ns`` of device time, the breakdown's computing time nothing."""
    res = compare(str(cut), str(whole), enable_operator_compare=True, enable_profiling_compare=True,
                  disable_module=True)
    ops = res.sheet("OperatorCompareStatistic")
    lost = ops["Comparison Device Duration(ms)"].sum() - ops["Base Device Duration(ms)"].sum()
    assert lost == pytest.approx(ns / 1e6, abs=1e-9)
    computing = res.sheet("OverallMetrics").iloc[0]
    assert computing["Index"] == "Computing Time" and computing["Duration(ms)"] == computing["Duration(ms).1"]


def _ns(us: object) -> int:
    """A trace time in us (number or text) as integer ns, rounded to nearest."""
    return int((Decimal(str(us)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _npu_unlinked(events: list, kinds: set | None = COMPUTE) -> tuple[int, int]:
    """(count, ns) of Ascend Hardware tasks of types ``kinds`` (None: all) no async_npu flow from a cpu_op's
    start ends at."""
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    op_starts = {_ns(e["ts"]) for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"}
    starts = {e["id"]: _ns(e["ts"]) for e in events if e.get("ph") == "s" and e.get("cat") == "async_npu"}
    ends = {(e["pid"], e["tid"], _ns(e["ts"])) for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu"
            and starts.get(e["id"]) in op_starts}
    tasks = [e for e in events if e.get("ph") == "X" and procs.get(e["pid"]) == "Ascend Hardware"
             and (kinds is None or e["args"].get("Task Type") in kinds)
             and (e["pid"], e["tid"], _ns(e["ts"])) not in ends]
    return len(tasks), sum(_ns(e["dur"]) for e in tasks)


def test_npu_text_tasks_without_a_flow_are_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Three async_npu flows (both ends) taken out of the NPU text excerpt: their AI_CORE tasks join the 4 the
    3 ms window already left without a flow (their ops started before it), which the unmodified pair shows too."""
    events = json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    before = _npu_unlinked(events)
    assert before[0] == 4
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    at = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events
          if e.get("ph") == "X" and procs.get(e["pid"]) == "Ascend Hardware"}
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "async_npu"}
    cut = [e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu" and e["id"] in starts
           and at.get((e["pid"], e["tid"], _ns(e["ts"])), {}).get("args", {}).get("Task Type") == "AI_CORE"][:3]
    assert len(cut) == 3
    kept = [e for e in events if not (e.get("ph") in ("s", "f") and e.get("id") in cut)]
    assert len(events) - len(kept) == 6
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU, run)
    (run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(kept))
    n, ns = _npu_unlinked(kept)
    assert n == 7 and ns > before[1]
    row = _row(NPU, run, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (4, 7)
    assert row["Detail"] == (f"{LEAD}base 4 compute tasks, {_ms(before[1])} ms, no async_npu flow; comparison 7 "
                             f"compute tasks, {_ms(ns)} ms, no async_npu flow{TAIL}")
    _only_the_operator_sheet_lost(run, NPU, ns - before[1])


def test_one_input_on_both_sides_says_its_count_once(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                     capsys: pytest.CaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The NPU text excerpt given as both inputs (one path, or ``run`` and ``./run`` on the CLI): its 4 tasks without
    a flow (the test above counts them from the file) read "base 4 ...; comparison 4 ..." under "(base 4,
    comparison 4)", two profiles' figures, where the run's other notices say one input once, "(both sides)"."""
    from cliutil import run_inproc

    n, ns = _npu_unlinked(json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text()))
    assert n == 4
    part = f"both sides 4 compute tasks, {_ms(ns)} ms, no async_npu flow"
    row = _row(NPU, NPU, tmp_path / "out", caplog, both=True)
    assert (row["Base"], row["Comparison"]) == (4, 4)  # the JSON's and the Summary's columns keep each side's
    assert row["Detail"] == f"{LEAD}{part}{TAIL}"
    monkeypatch.chdir(NPU.parent)
    code, _, err = run_inproc(capsys, "-bp", NPU.name, "-d", f"./{NPU.name}", "-o", str(tmp_path / "cli"),
                              "--enable_operator_compare")
    assert code == 0
    lines = [line.split("] ", 1)[-1] for line in err.splitlines()]
    at = lines.index(f"{NOTE} (both sides 4):")
    # an operator-only run writes no OverallMetrics nor waterfall: the reading does not send the user to them
    assert lines[at + 1:at + 3] == [f"  - {part}", f"  - {OPERATORS_ONLY_TAIL[2:]}"]
    assert "OverallMetrics" not in err


def test_a_gate_run_names_the_waterfall_it_writes_not_overall_metrics(tmp_path: Path) -> None:
    """--enable_operator_compare with --fail_on_regression makes the time breakdown for the gate's waterfall (the
    Summary's, the console's E2E line) but writes no OverallMetrics: the reading names the waterfall alone, where
    it sent the user to an OverallMetrics the workbook lacked. The excerpt's 4 tasks without a flow, as above."""
    n, ns = _npu_unlinked(json.loads((NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text()))
    res = compare(str(NPU), str(NPU), enable_operator_compare=True, fail_on_regression=50)
    assert "Summary" in res.sheet_names and "OverallMetrics" not in res.sheet_names
    detail = res.guards.set_index("Check").loc[CHECK, "Detail"]
    reading = TAIL.replace("(OverallMetrics, the waterfall)", "(the waterfall)")
    assert detail == f"{LEAD}both sides {n} compute tasks, {_ms(ns)} ms, no async_npu flow{reading}"
    assert "OverallMetrics" not in detail


def test_db_tasks_without_a_connection_id_are_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Three AI_VECTOR_CORE tasks of the DB excerpt given a connection id no op holds; the excerpt links all, so
    the unmodified pair has no row."""
    rows = sql(DB, "SELECT t.globalTaskId, t.endNs - t.startNs FROM TASK t JOIN COMPUTE_TASK_INFO c "
                   "ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS s ON s.id = c.taskType "
                   "WHERE s.value = 'AI_VECTOR_CORE' AND t.connectionId IN (SELECT connectionId FROM CONNECTION_IDS) "
                   "ORDER BY t.startNs LIMIT 3")
    assert len(rows) == 3
    free = sql(DB, "SELECT max(connectionId) + 1000 FROM (SELECT connectionId FROM CONNECTION_IDS "
                   "UNION SELECT connectionId FROM TASK)")[0][0]
    ids = ", ".join(str(r[0]) for r in rows)
    db = edited_copy(DB, tmp_path / "ascend_pytorch_profiler_0.db",
                     f"UPDATE TASK SET connectionId = {free} WHERE globalTaskId IN ({ids})")
    ns = sum(r[1] for r in rows)
    assert _row(DB, DB, tmp_path / "same", caplog) is None
    row = _row(DB, db, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (0, 3)
    assert row["Detail"] == f"{LEAD}comparison 3 compute tasks, {_ms(ns)} ms, no CANN connection id{TAIL}"
    _only_the_operator_sheet_lost(db, DB, ns)


def test_kineto_kernels_without_a_launch_flow_are_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The ac2g flows of two kernels of the H200 excerpt taken out (both ends); the excerpt links every kernel, so
    the unmodified pair has no row."""
    doc = json.loads(KINETO.read_text())
    events = doc["traceEvents"]
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
            and (e["pid"], e["tid"], _ns(e["ts"])) in kernels]
    assert len(ends) == len(kernels)  # every kernel and memcpy has its flow
    cut = {e["id"] for e in ends[1:3]}
    ns = sum(_ns(kernels[(e["pid"], e["tid"], _ns(e["ts"]))]["dur"]) for e in ends[1:3])
    doc["traceEvents"] = [e for e in events if not (e.get("ph") in ("s", "f") and e.get("id") in cut)]
    assert len(events) - len(doc["traceEvents"]) == 4
    trace = tmp_path / KINETO.name
    trace.write_text(json.dumps(doc))
    assert _row(KINETO, KINETO, tmp_path / "same", caplog) is None
    row = _row(trace, KINETO, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (2, 0)
    assert row["Detail"] == f"{LEAD}base 2 kernels, {_ms(ns)} ms, no launch flow{TAIL}"
    _only_the_operator_sheet_lost(trace, KINETO, ns)
    # without the operator (module) sheets there is nothing left out: an API-only run, which builds the op trees
    # too, has no row and says nothing (the log line said "the operator and module sheets leave them out" there)
    assert _row(trace, KINETO, tmp_path / "api", caplog, enable_operator_compare=False,
                enable_api_compare=True) is None


ALEXNET = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"


@pytest.mark.parametrize(("cats", "words"), [(("kernel", "gpu_memcpy"), "2 kernels (1 of them a memory copy)"),
                                             (("gpu_memcpy", "gpu_memcpy"), "2 memory copies"),
                                             (("gpu_memcpy",), "1 memory copy")])
def test_kineto_memcpys_without_a_launch_flow_are_named_as_copies(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                                  cats: tuple[str, ...], words: str) -> None:
    """The AlexNet H200 trace links its 21 memcpys by ac2g flows as it does its kernels; with the flows of a kernel
    and a memcpy (or of two memcpys, or of one) taken out, the row called them all kernels ("2 kernels"), as it
    called hta's negative_queue sample's 140 unlinked memcpys among 845 "kernels"."""
    doc = json.loads(gzip.decompress(ALEXNET.read_bytes()))
    events = doc["traceEvents"]
    device = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events
              if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")}
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
            and (e["pid"], e["tid"], _ns(e["ts"])) in device]
    assert len(ends) == len(device) and sum(d["cat"] == "gpu_memcpy" for d in device.values()) == 21
    picked: list[dict] = []
    for cat in cats:  # the last flow ends of each kind asked for (the first ones run before any linked kernel)
        picked.append(next(e for e in reversed(ends) if device[(e["pid"], e["tid"], _ns(e["ts"]))]["cat"] == cat
                           and e not in picked))
    cut = {e["id"] for e in picked}
    ns = sum(_ns(device[(e["pid"], e["tid"], _ns(e["ts"]))]["dur"]) for e in picked)
    doc["traceEvents"] = [e for e in events if not (e.get("ph") in ("s", "f") and e.get("cat") == "ac2g"
                                                    and e.get("id") in cut)]
    assert len(events) - len(doc["traceEvents"]) == 2 * len(cats)
    trace = tmp_path / "alexnet_cut.pt.trace.json"
    trace.write_text(json.dumps(doc))
    row = _row(trace, ALEXNET, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (len(cats), 0)
    assert row["Detail"] == f"{LEAD}base {words}, {_ms(ns)} ms, no launch flow{TAIL}"


def test_npu_tasks_no_op_launches_are_not_counted(samples: Path, tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The level-1 / level-2 text exports link every compute task; their unlinked hardware tasks (HCCL-stream
    Notify Wait / SDMA / Write Value, which the HCCL op holds, EVENT_WAIT, PLACE_HOLDER...) no op launched, so
    there is no row."""
    text = samples / "msinsight/test/data/pytorch/text"
    for level in ("level1", "level2"):
        events = json.loads((text / level / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
        assert _npu_unlinked(events) == (0, 0)
        assert _npu_unlinked(events, None)[0] > 300
    assert _row(text / "level1/rank0_ascend_pt", text / "level2/rank0_ascend_pt", tmp_path, caplog) is None


def _kineto_unlinked(events: list, calls: bool = False) -> tuple[list, int]:
    """(kernels / memcpys no whole ac2g flow ends at, the first ns of a kernel one ends at); ``calls``: a flow end
    whose id a runtime call carries as its correlation counts as whole too."""
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    if calls:
        starts |= {e["args"]["correlation"] for e in events if e.get("cat") == "cuda_runtime"}
    ends = {(e["pid"], e["tid"], _ns(e["ts"])) for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
            and e["id"] in starts}
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")]
    free = [e for e in kernels if (e["pid"], e["tid"], _ns(e["ts"])) not in ends]
    return free, min(_ns(e["ts"]) for e in kernels if (e["pid"], e["tid"], _ns(e["ts"])) in ends)


def test_kineto_kernels_before_the_first_launch_are_said_to_be_the_previous_steps_tail(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The MI300X RCCL excerpt holds one kernel whose ac2g flow end has no start (its launch is not in the trace;
    no host call carries its correlation id either), starting before every kernel a whole flow ends at: the row
    says so. The excerpt has no computing kernel, so no time breakdown, and no "kernels launched before the
    profile" row to point at, nor OverallMetrics or a waterfall for the reading to name (a run without them)."""
    trace = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
    free, first = _kineto_unlinked(json.loads(trace.read_text())["traceEvents"], calls=True)
    assert len(free) == 1 and _ns(free[0]["ts"]) < first
    row = _row(trace, KINETO, tmp_path, caplog, enable_profiling_compare=False)
    assert (row["Base"], row["Comparison"]) == (1, 0)
    assert row["Detail"] == (f"{LEAD}base 1 kernel, {_ms(_ns(free[0]['dur']))} ms, no launch flow (it runs before "
                             f"the first kernel the trace holds a launch of: the previous step's tail)"
                             f"{OPERATORS_ONLY_TAIL}")


QWEN = "tracelens/tests/traces/{}/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
#: The clause the "kernels launched before the profile" note adds where its kernels are also linked to no operator
EARLY_SHEETS = ("; with no launch in the trace, no flow links them to an operator either, so the operator and module "
                "sheets and their top contributors leave them out")


def _early(res: Any) -> dict[str, Any]:
    """The "kernels launched before the profile" row of a result's guards."""
    (row,) = res.guards[res.guards["Check"] == "kernels launched before the profile"].to_dict("records")
    return row


def test_previous_steps_tail_is_said_once(samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """tracelens' Qwen1.5 H100 / MI300X traces open with the previous step's tail: 436 / 463 kernels no whole flow
    ends at, all before the first kernel one ends at (13.673 / 13.319 ms, one after the other: their sum is the
    busy time the early note gives). Two notes said them: "kernels launched before the profile" (their share of
    E2E) and "kernels linked to no operator" (the same 436 / 463 kernels). The early note now says both, once;
    no unlinked row remains, as no other kernel lacks a flow."""
    traces = [samples / QWEN.format(gpu) for gpu in ("h100", "mi300")]
    figures = []
    for path in traces:
        free, first = _kineto_unlinked(json.loads(gzip.decompress(path.read_bytes()))["traceEvents"])
        assert all(_ns(e["ts"]) < first for e in free) and all(e["cat"] == "kernel" for e in free)
        figures.append((len(free), _ms(sum(_ns(e["dur"]) for e in free))))
    assert figures == [(436, "13.673"), (463, "13.319")]
    assert _row(*traces, tmp_path, caplog) is None  # nor any line on "kernels no flow links to an operator"
    said = [m for m in caplog.messages if "436" in m]
    (block,) = blocks(caplog.messages, "Part of a side's E2E time runs kernels launched before")
    assert said == ["  - " + block[1]] and block[1].startswith("base: the first ")  # a line of the note's block
    res = compare(str(traces[0]), str(traces[1]), enable_operator_compare=True, enable_profiling_compare=True)
    row = _early(res)
    assert row["Status"] == "note"
    assert (f"where {figures[0][0]} computing kernels run ({figures[0][1]} ms busy); comparison: " in row["Detail"]
            and f"where {figures[1][0]} computing kernels run ({figures[1][1]} ms busy); they count" in row["Detail"])
    assert (f"{EARLY_SHEETS}, while the overall time breakdown counts them; a note from 10%: read E2E, the "
            "categories and the operator figures with this in mind") in row["Detail"]


def test_other_unlinked_kernels_are_counted_apart_from_the_previous_steps_tail(
        samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The H100 Qwen1.5 trace with the ac2g flows (both ends) of its 3 last launched kernels taken out: those 3
    run after the first launched kernel, so they are not the previous step's tail. The early note states the
    436 of the tail for the operator sheets too; the unlinked row counts the 3 others alone, each kernel said
    once, and names the early note for the 436 (figures from the JSON, not the loaders)."""
    src = samples / QWEN.format("h100")
    doc = json.loads(gzip.decompress(src.read_bytes()))
    events = doc["traceEvents"]
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])) for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
    ends = sorted((e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
                   and (e["pid"], e["tid"], _ns(e["ts"])) in kernels), key=lambda e: _ns(e["ts"]))
    cut = {e["id"] for e in ends[-3:]}
    doc["traceEvents"] = [e for e in events if not (e.get("ph") in ("s", "f") and e.get("id") in cut)]
    trace = tmp_path / "qwen_cut.pt.trace.json"
    trace.write_text(json.dumps(doc))
    free, first = _kineto_unlinked(doc["traceEvents"])
    late = [e for e in free if _ns(e["ts"]) >= first]
    assert (len(free), len(late)) == (439, 3)
    row = _row(trace, src, tmp_path / "out", caplog)
    assert (row["Base"], row["Comparison"]) == (3, 0)
    assert row["Detail"] == (f"{LEAD}base 3 kernels, {_ms(sum(_ns(e['dur']) for e in late))} ms, no launch flow "
                             '(besides the 436 before the first kernel the trace holds a launch of, which "kernels '
                             f'launched before the profile" states){TAIL}')
    res = compare(str(trace), str(src), enable_operator_compare=True, enable_profiling_compare=True)
    assert f"{EARLY_SHEETS}, while" in _early(res)["Detail"]  # both sides' 436
    checks = res.guards["Check"].tolist()
    assert checks.index(CHECK) == checks.index("kernels launched before the profile") + 1  # beside it


def _text_without_two_flows(src: Path, tmp_path: Path) -> tuple[Path, int]:
    """A copy of the text export ``src`` without the async_npu flows (both ends) of its first two AI_CORE tasks,
    which links every task: (the copy, those two tasks' ns, from the file)."""
    events = json.loads((src / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    assert _npu_unlinked(events) == (0, 0)
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    at = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events
          if e.get("ph") == "X" and procs.get(e["pid"]) == "Ascend Hardware"}
    cut = [e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "async_npu"
           and at.get((e["pid"], e["tid"], _ns(e["ts"])), {}).get("args", {}).get("Task Type") == "AI_CORE"][:2]
    kept = [e for e in events if not (e.get("ph") in ("s", "f") and e.get("id") in cut)]
    assert len(events) - len(kept) == 4
    run = tmp_path / "rank0_ascend_pt"
    shutil.copytree(src, run)
    (run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").chmod(0o644)
    (run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(kept))
    n, ns = _npu_unlinked(kept)
    assert n == 2
    return run, ns


def test_a_text_side_given_a_step_is_counted_over_the_whole_profile(samples: Path, tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A text export's op tree spans every step (its operator rows hold the step asked for, its time breakdown the
    whole profile): two async_npu flows (both ends) to AI_CORE tasks taken out of the level-1 text sample, compared
    on its step 50, give a row whose figures are the whole profile's and which says so."""
    src = samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"
    run, ns = _text_without_two_flows(src, tmp_path)
    part = f"base 2 compute tasks, {_ms(ns)} ms, no async_npu flow"
    assert _row(run, src, tmp_path / "all", caplog)["Detail"] == f"{LEAD}{part}{TAIL}"
    row = _row(run, src, tmp_path / "step", caplog, base_step=50, comparison_step=50)
    assert (row["Base"], row["Comparison"]) == (2, 0)
    assert row["Detail"] == f"{LEAD}{part} (counted over the whole profile, not only the step asked for){TAIL}"


def test_only_the_text_side_given_a_step_is_said_to_be_counted_over_the_whole_profile(
        samples: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The level-1 text sample without two task flows (as above) against the DB excerpt with three tasks given a
    connection id no op holds (as ``test_db_tasks_without_a_connection_id_are_said``), both on step 50: the text
    side's part says it is counted over the whole profile, the DB side's (cut to the step) does not."""
    run, text_ns = _text_without_two_flows(samples / "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
                                           tmp_path)
    rows = sql(DB, "SELECT t.globalTaskId, t.endNs - t.startNs FROM TASK t JOIN COMPUTE_TASK_INFO c "
                   "ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS s ON s.id = c.taskType "
                   "WHERE s.value = 'AI_VECTOR_CORE' AND t.connectionId IN (SELECT connectionId FROM CONNECTION_IDS) "
                   "ORDER BY t.startNs LIMIT 3")
    free = sql(DB, "SELECT max(connectionId) + 1000 FROM (SELECT connectionId FROM CONNECTION_IDS "
                   "UNION SELECT connectionId FROM TASK)")[0][0]
    db = edited_copy(DB, tmp_path / "ascend_pytorch_profiler_0.db", "UPDATE TASK SET connectionId = "
                     f"{free} WHERE globalTaskId IN ({', '.join(str(r[0]) for r in rows)})")
    row = _row(run, db, tmp_path / "out", caplog, base_step=50, comparison_step=50)
    assert (row["Base"], row["Comparison"]) == (2, 3)
    assert row["Detail"] == (f"{LEAD}base 2 compute tasks, {_ms(text_ns)} ms, no async_npu flow (counted over the "
                             "whole profile, not only the step asked for); comparison 3 compute tasks, "
                             f"{_ms(sum(r[1] for r in rows))} ms, no CANN connection id{TAIL}")


def test_a_side_without_any_launch_flow_is_left_to_its_own_warning(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """The H200 excerpt without any ac2g flow against a copy that lost the flows of two kernels: the flowless side
    links no kernel at all, which its "Can't find any flow event" warning says, so the row counts only the other
    side's two (Base null), not every kernel of the flowless one."""
    doc = json.loads(KINETO.read_text())
    events = doc["traceEvents"]
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
    ends = [e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
            and (e["pid"], e["tid"], _ns(e["ts"])) in kernels]
    cut = {e["id"] for e in ends[1:3]}
    ns = sum(_ns(kernels[(e["pid"], e["tid"], _ns(e["ts"]))]["dur"]) for e in ends[1:3])
    flowless, two = tmp_path / "flowless" / KINETO.name, tmp_path / "two" / KINETO.name
    for path, keep in ((flowless, lambda e: e.get("cat") != "ac2g"),
                       (two, lambda e: not (e.get("ph") in ("s", "f") and e.get("id") in cut))):
        path.parent.mkdir()
        path.write_text(json.dumps({**doc, "traceEvents": [e for e in events if keep(e)]}))
    assert len(kernels) > 2 and not any(e.get("cat") == "ac2g" for e in json.loads(flowless.read_text())["traceEvents"])
    row = _row(flowless, two, tmp_path / "out", caplog)
    assert any("Can't find any flow event" in m and str(flowless) in m for m in caplog.messages)
    assert (row["Base"], row["Comparison"]) == (None, 2)
    assert row["Detail"] == f"{LEAD}comparison 2 kernels, {_ms(ns)} ms, no launch flow{TAIL}"


@pytest.mark.parametrize(("cut_at", "who"), [((0, 4), "1 of them runs"), ((0, 1, 5), "2 of them run")])
def test_some_unlinked_kernels_before_the_first_launch_are_counted_apart(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, cut_at: tuple[int, ...], who: str) -> None:
    """The H200 excerpt with the ac2g flows of its first kernel (first two) and of a later one taken out: one (two)
    of them run before every kernel a flow still ends at (it reads as the previous step's tail), the other after,
    so the part says "1 of them runs" ("2 of them run"), not "all run" ("1 of them run" before session 49's
    review)."""
    doc = json.loads(KINETO.read_text())
    events = doc["traceEvents"]
    kernels = {(e["pid"], e["tid"], _ns(e["ts"])): e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")}
    ends = sorted((e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
                   and (e["pid"], e["tid"], _ns(e["ts"])) in kernels), key=lambda e: _ns(e["ts"]))
    cut = {ends[i]["id"] for i in cut_at}
    doc["traceEvents"] = [e for e in events if not (e.get("ph") in ("s", "f") and e.get("id") in cut)]
    trace = tmp_path / KINETO.name
    trace.write_text(json.dumps(doc))
    free, first = _kineto_unlinked(doc["traceEvents"])
    assert len(free) == len(cut_at) and sum(_ns(e["ts"]) < first for e in free) == len(cut_at) - 1
    row = _row(trace, KINETO, tmp_path / "out", caplog)
    res = compare(str(trace), str(KINETO), enable_operator_compare=True, enable_profiling_compare=True)
    measured = "kernels launched before the profile" in res.guards["Check"].tolist()
    assert (row["Base"], row["Comparison"]) == (len(cut_at), 0)
    assert row["Detail"] == (f"{LEAD}base {len(cut_at)} kernels, {_ms(sum(_ns(e['dur']) for e in free))} ms, no launch "
                             f"flow ({who} before the first kernel the trace holds a launch of: the previous "
                             "step's tail"
                             + (', which "kernels launched before the profile" measures' if measured else "")
                             + f"){TAIL}")


def test_the_early_note_says_one_sides_tail_where_the_other_replays_graphs(samples: Path) -> None:
    """tracelens' H100 Qwen1.5 trace (436 kernels before its first launched one) against SGLang's decode, which
    replays CUDA graphs and links every kernel: the "kernels linked to no operator" row, which named only the
    base's 436 (and came after "graph replays" before session 49's review), is gone; the early note says the
    operator sheets leave them out, for the base side."""
    traces = samples / "tracelens/tests/traces"
    res = compare(str(samples / QWEN.format("h100")),
                  str(traces / "inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz"),
                  enable_operator_compare=True, enable_profiling_compare=True)
    checks = res.guards["Check"].tolist()
    assert "graph replays" in checks and CHECK not in checks
    row = _early(res)
    assert (row["Status"], row["Comparison"]) == ("note", 0.0)
    assert "where 436 computing kernels run (13.673 ms busy)" in row["Detail"]
    assert f"{EARLY_SHEETS} (on the base side), while" in row["Detail"]


def test_a_tail_with_copies_gives_its_own_count_in_the_early_note(samples: Path, tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """tracelens' MI300X resnet_act_checkpoint opens with a tail (34.7 % of E2E) of 752 computing kernels, and
    memory copies and collectives beside them, none linked: the early note counts its computing kernels for E2E
    and gives the count and time the operator sheets leave out, every kernel and copy of that stretch, as the JSON
    holds them (computed here); no unlinked row remains."""
    path = samples / "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
    free, first = _kineto_unlinked(json.loads(gzip.decompress(path.read_bytes()))["traceEvents"])
    assert all(_ns(e["ts"]) < first for e in free)
    n, copies, ms = len(free), sum(e["cat"] == "gpu_memcpy" for e in free), _ms(sum(_ns(e["dur"]) for e in free))
    assert (n, copies, ms) == (941, 184, "31.727")
    assert _row(path, path, tmp_path, caplog) is None
    row = _early(compare(str(path), str(path), enable_operator_compare=True, enable_profiling_compare=True))
    assert "where 752 computing kernels run" in row["Detail"]
    side = f"{n} kernels ({copies} of them memory copies), {ms} ms"
    assert ("; with no launch in the trace, no flow links the kernels of that stretch, computing or not, to an "
            "operator either, so the operator and module sheets and their top contributors leave them out "
            f"(both sides {side}), while the overall time breakdown counts them") in row["Detail"]
    # one input on both sides: its figures once, "both sides" (they read "base ...; comparison ..." as two profiles)
    assert row["Detail"].startswith(
        "share of E2E before the first kernel the trace holds a launch of, run by kernels launched before the "
        "profile began (the previous step's tail): both sides: the first ")
    assert "comparison" not in row["Detail"]


def test_a_copy_after_the_tail_is_counted_apart_from_the_tails_copies(samples: Path, tmp_path: Path) -> None:
    """The early note's copies are those of the tail alone, and the unlinked row's those after it: tracelens'
    MI300X resnet_act_checkpoint (its 941 unlinked kernels, 184 of them memory copies, all in the tail) with its
    first tail copy written once more 1 us after the start of the first kernel a flow ends at, where no flow ends at
    it. The note keeps 184 copies of 941, and the "kernels linked to no operator" row counts the one copy as a
    memory copy (counted here from the JSON)."""
    path = samples / "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
    top = json.loads(gzip.decompress(path.read_bytes()))
    free, first = _kineto_unlinked(top["traceEvents"])
    late = copy.deepcopy(next(e for e in free if e["cat"] == "gpu_memcpy"))
    late["ts"] = first / 1000 + 1
    top["traceEvents"].append(late)
    edited = tmp_path / "late_copy.json"
    edited.write_text(json.dumps(top))
    free2, first2 = _kineto_unlinked(top["traceEvents"])
    assert first2 == first and len(free2) == 942 and [e for e in free2 if _ns(e["ts"]) >= first] == [late]
    res = compare(str(edited), str(edited), enable_operator_compare=True, enable_profiling_compare=True)
    side = f"941 kernels (184 of them memory copies), {_ms(sum(_ns(e['dur']) for e in free))} ms"
    assert f"(both sides {side})" in _early(res)["Detail"]  # one input: its figures once
    (row,) = res.guards[res.guards["Check"] == CHECK].to_dict("records")
    assert f"both sides 1 memory copy, {_ms(_ns(late['dur']))} ms, no launch flow" in row["Detail"]
