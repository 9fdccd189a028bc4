"""Session 74's hand mutants of session 74's source changes that the suite let live (mut74).

Each test names the mutants it kills; each fails under them and passes on the real code. Expected figures come
from the original's reference workbooks or the raw sample files, never read back from this package."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

from test_gate_result import NPU_L1, NPU_L2, _reference
from test_mindspore_user_leftovers import FLAGS, H200_ALEXNET

import msprof_compare
from msprof_compare import compare


def test_the_gates_repr_states_its_verdict_change_and_counts(samples: Path) -> None:
    """Kills a_repr_counts (the repr's contributors count read from waterfall_steps) and a_repr_ns (its diff_ms
    given in ns): level 2 -> level 1 with the kernel comparison at 1 % lists one kernel (hcom_allReduce_, the only
    KernelCompare row that grew) and three waterfall steps, and the E2E change is the reference workbook's level-1
    E2E Time less level 2's, in ms."""
    overall, _ = _reference(samples)
    base, comp = (round(overall["E2E Time"][i] * 1e6) for i in (1, 0))  # ms to whole ns: level 2 is the base
    gate = compare(str(samples / NPU_L2), str(samples / NPU_L1), enable_kernel_compare=True,
                   fail_on_regression=1).regression_gate()
    assert repr(gate) == (f"RegressionGate(code=3, regressed=True, threshold='1', diff_ms={(comp - base) / 1e6}, "
                          f"contributors=1, waterfall_steps=3, message={gate.message!r})")


def test_a_star_import_and_dir_give_the_gate_types() -> None:
    """Kills i_all (RegressionGate left out of ``__all__``, where ``from msprof_compare import RegressionGate``
    still resolves through the module's ``__getattr__``): ``from msprof_compare import *`` and ``dir()`` give the
    package's public names, the gate's three types among them, each the API's class."""
    from msprof_compare import api

    names: dict[str, object] = {}
    exec("from msprof_compare import *", names)  # noqa: S102 - the star import a script or notebook does
    for name in ("RegressionGate", "GateContributor", "GateStep", "CompareResult"):
        assert names.get(name) is getattr(api, name), name
        assert name in dir(msprof_compare), name


def test_a_gate_without_an_e2e_pair_has_no_e2e_times() -> None:
    """Kills a_e2e_zero (a verdict without E2E times read as 0 ns each): a result whose breakdown made no E2E row
    (the state test_api_face_messages sets up) is not judged, and the gate's ``base_ns`` / ``comparison_ns`` are
    None, as its docstring says ("None without them"), not 0 ns, which is a reading of no device time."""
    from types import SimpleNamespace

    import pandas as pd

    from msprof_compare.api import judge_regression
    from msprof_compare.options import API_FACE, Options

    side = SimpleNamespace(path="x")
    result = SimpleNamespace(frames={"e2e": pd.DataFrame({"base_ns": [], "comparison_ns": []})}, base=side,
                             comparison=side, options=Options(), _verdicts={})
    gate = judge_regression(result, 5.0, API_FACE)
    assert (gate.code, gate.regressed, gate.diff_ns, gate.diff_ms) == (1, None, None, None)
    assert (gate.base_ns, gate.comparison_ns) == (None, None)


def test_kernel_compare_alone_between_two_opless_gpu_traces_gives_their_one_reason_once(tmp_path: Path,
                                                                                        caplog) -> None:
    """Kills k_reasons (the sides' one reason given twice, each side's: ``optree.neither_reason`` without its
    equal case, or the notice's own list of reasons without dropping a repeat): two copies of the H200 AlexNet step
    cut to its device events (kernels, memcpy / memset, metadata: the raw file's host events removed here, so
    neither side has a torch op, nor a runtime call to stand for one) compared with --enable_kernel_compare alone.
    Both sides lack ops for one reason, said once; the flags named after it are those that, run alone on this
    pair, write a sheet."""
    kept = ("kernel", "gpu_memcpy", "gpu_memset", None, "Trace")
    with gzip.open(H200_ALEXNET, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("cat") in kept]
    assert any(e.get("cat") == "kernel" for e in data["traceEvents"])
    paths = []
    for name in ("base", "comparison"):
        path = tmp_path / f"{name}.pt.trace.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(str(path))
    writes = [f for f in FLAGS if compare(*paths, **{f: True}).sheet_names]
    names = {"enable_profiling_compare": "overall", "enable_communication_compare": "communication"}
    assert writes and set(writes) <= set(names)  # no op on either side: only these can apply
    flags = " and ".join(f"{f}=True" for f in writes)
    said = " and ".join(names[f] for f in writes)
    tail = f": {flags} would add the {said} comparison{'s' if len(writes) > 1 else ''})"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(*paths, enable_kernel_compare=True)
    assert not res.sheet_names
    assert [m for m in caplog.messages if m.startswith("kernel compare only")] == [
        "kernel compare only support between NPU data and NPU data. (both sides are GPU traces; neither side has a "
        "torch op (a GPU trace without cpu_op or runtime events has none), so the operator, module, memory and API "
        "comparisons have nothing to pair" + tail]


def test_module_operator_contributors_of_the_gate_fit_the_schema(samples: Path, reference_outputs: Path,
                                                                  tmp_path: Path) -> None:
    """Kills s_level ("module operator" left out of the schema's gate contributor levels, where only "kernel type"
    is tested) and a_first (``to_dict`` keeping only the first contributor, where the JSON gates tested list one
    or check none): the module-operator-level input of test_module_contributors_db (pair 1's text exports with a
    step 51 nested in step 50, whose operator sheet is then empty), compared level 2 -> level 1 at 1 %: a
    regression whose listed contributors are module operators, and the JSON to_json writes validates. They are
    the reference workbook's ModuleCompareStatistic rows ranked by hand (|level 1 - level 2| largest first, until
    80 % of the summed |change|), those that grew going to level 1, the first five."""
    import pandas as pd
    from test_json_report import SCHEMA, validate
    from test_module_contributors_db import _overlap_step

    text = samples / "msinsight/test/data/pytorch/text"
    base = _overlap_step(text / "level2/rank0_ascend_pt", tmp_path / "l2" / "rank0_ascend_pt")
    comp = _overlap_step(text / "level1/rank0_ascend_pt", tmp_path / "l1" / "rank0_ascend_pt")
    res = compare(str(base), str(comp), base_step=51, comparison_step=51, enable_operator_compare=True,
                  enable_profiling_compare=True, fail_on_regression=1)
    ref = pd.read_excel(reference_outputs / "1-npu-text-l1-vs-l2/performance_comparison_result.xlsx",
                        sheet_name="ModuleCompareStatistic", header=None, skiprows=3)
    ref = ref[ref[4].astype(str) != "[ TOTAL ]"]
    # level 1 (the comparison here) less level 2, per module operator row, to the ns
    grew = [(f"{str(m).strip()} > {o}", round(float(l1) - float(l2), 6))
            for m, o, l1, l2 in zip(ref[3], ref[4], ref[6], ref[10], strict=True)]
    gross = sum(abs(d) for _, d in grew)
    ranked, cum = [], 0.0
    for name, d in sorted(grew, key=lambda r: -abs(r[1])):
        ranked.append((name, d))
        cum += abs(d)
        if cum >= 0.8 * gross:
            break
    want = [name for name, d in ranked if d > 0][:5]
    assert len(want) == 5
    gate = res.regression_gate()
    assert gate.code == 3
    assert [(c.name, c.level) for c in gate.contributors] == [(name, "module operator") for name in want]
    doc = json.loads(Path(res.to_json(tmp_path / "r.json")).read_text(encoding="utf-8"))
    assert [c["level"] for c in doc["gate"]["contributors"]] == ["module operator"] * 5
    assert validate(doc, json.loads(SCHEMA.read_text(encoding="utf-8"))) == []


def test_match_rate_line_of_two_opless_sides_of_two_kinds_gives_each_sides_reason(tmp_path: Path,
                                                                                 samples: Path) -> None:
    """The Summary's operator match-rate row between two sides without torch ops of two kinds (the H200 AlexNet
    step cut to its device events against a CANN timeline of the MindInsight samples, ``test_summary.MS_TIMELINE``)
    gives each side's reason, base first, in the words of the no-op warnings (``optree.neither_reason``, which the
    row now shares). Kills a swap of the two sides and a row that gives one reason for both."""
    from test_summary import MS_TIMELINE

    kept = ("kernel", "gpu_memcpy", "gpu_memset", None, "Trace")
    with gzip.open(H200_ALEXNET, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    data["traceEvents"] = [e for e in data["traceEvents"] if e.get("cat") in kept]
    gpu = tmp_path / "kernels.pt.trace.json"
    gpu.write_text(json.dumps(data), encoding="utf-8")
    res = compare(str(gpu), str(samples / MS_TIMELINE))
    row = res.guards.iloc[0]
    assert row["Status"] == "unknown"
    assert row["Detail"].startswith(
        "no operators on either side (base: a GPU trace without cpu_op or runtime events has none; comparison: "
        "MindSpore and CANN timelines have none): nothing to match")
