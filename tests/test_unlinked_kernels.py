"""Device kernels no flow links to an operator are said once per side (session 49).

The operator and module sheets (and the Summary's top contributors) hold the kernels the launch flows (NPU text:
async_npu; DB: CANN connection ids; Kineto: ac2g) link to an op; the time breakdown counts every kernel. A kernel
left unlinked vanished from those sheets without a word. Each test cuts the links of a few kernels of a real
excerpt and checks the count and time the warning gives against figures computed here from the file itself
(JSON / SQL, not the loaders), and that the unmodified excerpt says nothing where it links every kernel.
"""

from __future__ import annotations

import json
import shutil
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest
from dbutil import edited_copy, sql

from msprof_compare import cli
from msprof_compare.api import compare

DATA = Path(__file__).parent / "data"
NPU = DATA / "npu" / "rank0_ascend_pt"
DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"
KINETO = DATA / "kineto" / "h200_gpt_bf16_cudnn_sdpa_excerpt.pt.trace.json"
#: the Ascend Hardware task types of operator kernels, as the CANN docs list the compute ones
COMPUTE = {"AI_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "AI_VECTOR_CORE", "FFTS_PLUS"}
TAIL = "to an operator: the operator and module sheets and their top contributors leave them out; the overall " \
       "time breakdown counts them"


def _said(capsys: pytest.CaptureFixture, base: Path, comparison: Path, out: Path) -> list[str]:
    """The unlinked-kernel lines of a compare with the operator and module sheets on (level tags cut)."""
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-d", str(comparison), "-bp", str(base), "--enable_operator_compare",
                          "--enable_api_compare", "-o", str(out)])
    err = capsys.readouterr().err
    assert info.value.code == 0, err
    return [line.split("][WARNING] ", 1)[1] for line in err.splitlines()
            if "the overall time breakdown counts them" in line]


def _only_the_operator_sheet_lost(cut: Path, whole: Path, ns: int) -> None:
    """What the line says, with ``cut`` the base and ``whole`` the comparison: the operator sheet lost exactly
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


def test_npu_text_tasks_without_a_flow_are_said(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Three async_npu flows (both ends) taken out of the NPU text excerpt: their AI_CORE tasks join the 4 the
    3 ms window already left without a flow (their ops started before it)."""
    trace = NPU / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(trace.read_text())
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
    said = _said(capsys, NPU, run, tmp_path / "out")
    assert said == [f"{trace}: no async_npu flow links 4 compute tasks ({before[1] / 1e6:.3f} ms of device time) "
                    f"{TAIL}",
                    f"{run / 'ASCEND_PROFILER_OUTPUT' / 'trace_view.json'}: no async_npu flow links 7 compute tasks "
                    f"({ns / 1e6:.3f} ms of device time) {TAIL}"]
    _only_the_operator_sheet_lost(run, NPU, ns - before[1])


def test_db_tasks_without_a_connection_id_are_said(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Three AI_VECTOR_CORE tasks of the DB excerpt given a connection id no op holds; the excerpt links all."""
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
    assert _said(capsys, DB, DB, tmp_path / "same") == []
    assert _said(capsys, DB, db, tmp_path / "out") == [
        f"{db}: no CANN connection id links 3 compute tasks ({ns / 1e6:.3f} ms of device time) {TAIL}"]
    _only_the_operator_sheet_lost(db, DB, ns)


def test_kineto_kernels_without_a_launch_flow_are_said(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The ac2g flows of two kernels of the H200 excerpt taken out (both ends); the excerpt links every kernel."""
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
    assert _said(capsys, KINETO, KINETO, tmp_path / "same") == []
    assert _said(capsys, trace, KINETO, tmp_path / "out") == [
        f"{trace}: no launch flow links 2 kernels ({ns / 1e6:.3f} ms of device time) {TAIL}"]
    _only_the_operator_sheet_lost(trace, KINETO, ns)


def test_npu_tasks_no_op_launches_are_not_counted(samples: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    """The level-1 / level-2 text exports link every compute task; their unlinked hardware tasks (HCCL-stream
    Notify Wait / SDMA / Write Value, which the HCCL op holds, EVENT_WAIT, PLACE_HOLDER...) no op launched, so
    nothing is said."""
    text = samples / "msinsight/test/data/pytorch/text"
    for level in ("level1", "level2"):
        events = json.loads((text / level / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json").read_text())
        assert _npu_unlinked(events) == (0, 0)
        assert _npu_unlinked(events, None)[0] > 300
    assert _said(capsys, text / "level1/rank0_ascend_pt", text / "level2/rank0_ascend_pt", tmp_path) == []


def test_kineto_kernels_before_the_first_launch_are_said_to_be_the_previous_steps_tail(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The MI300X RCCL excerpt holds one kernel whose ac2g flow end has no start (its launch is not in the trace;
    no host call carries its correlation id either), starting before every kernel a whole flow ends at: the line
    says so, as the "kernels launched before the profile" check measures such kernels."""
    trace = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
    events = json.loads(trace.read_text())["traceEvents"]
    starts = {e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    calls = {e["args"]["correlation"] for e in events if e.get("cat") == "cuda_runtime"}
    ends = {(e["pid"], e["tid"], _ns(e["ts"])) for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"
            and (e["id"] in starts or e["id"] in calls)}
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")]
    free = [e for e in kernels if (e["pid"], e["tid"], _ns(e["ts"])) not in ends]
    first = min(_ns(e["ts"]) for e in kernels if (e["pid"], e["tid"], _ns(e["ts"])) in ends)
    assert len(free) == 1 and _ns(free[0]["ts"]) < first
    ns = _ns(free[0]["dur"])
    assert _said(capsys, trace, KINETO, tmp_path) == [
        f"{trace}: no launch flow links 1 kernel ({ns / 1e6:.3f} ms of device time) to an operator (it runs before "
        f"the first kernel the trace holds a launch of: the previous step's tail): {TAIL.split(': ', 1)[1]}"]
