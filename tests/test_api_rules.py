"""Rules of ``msprof_compare.api`` that no other test pinned: what is refused before loading and in which
order, which comparisons check a step, which sheets a result holds, and the gate's answer when a side has no
E2E time."""

from __future__ import annotations

import json
import logging
import os
import pickle
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.compare.steps import GPU_STEP_MESSAGE
from msprof_compare.errors import ProfileError, UsageError

DATA = Path(__file__).resolve().parent / "data"
KINETO = DATA / "kineto" / "h100_timesformer_excerpt.pt.trace.json"   # a Kineto trace: starts with "{"
NPU_DIR = DATA / "npu" / "rank0_ascend_pt"


def _bad_keyword_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bad = tmp_path / "bad.ini"
    bad.write_text("[OP_MASK]\n")   # the section without any of its six mandatory keys
    monkeypatch.setenv("MSPROF_COMPARE_CONFIG", str(bad))
    return bad


@pytest.mark.parametrize("options", [
    {"enable_communication_compare": True},                       # a Kineto side's collectives read the lists
    {"enable_api_compare": True, "fail_on_regression": 5},        # the gate's breakdown reads them
])
def test_bad_keyword_file_is_named_before_loading(tmp_path, monkeypatch, options):
    """The keyword lists are read before loading when a comparison will need them: a broken
    MSPROF_COMPARE_CONFIG is the error, not the missing comparison path the loader would reach later. Only one
    side (the base) needs to be a Kineto trace for CommunicationCompare to read them."""
    bad = _bad_keyword_file(tmp_path, monkeypatch)
    with pytest.raises(ProfileError) as info:
        compare(str(KINETO), str(tmp_path / "absent"), **options)
    assert info.value.path == str(bad)
    assert info.value.message == "Missing required key 'FA_MASK' in section 'OP_MASK'."


def test_a_compare_and_a_jobs_ranks_ask_one_predicate_whether_the_keyword_lists_are_read(samples, tmp_path,
                                                                                         monkeypatch, caplog):
    """A single compare and a rank-by-rank job decided whether to read the keyword lists by two copies of one
    condition (the time breakdown, or CommunicationCompare with a Kineto side), which could drift apart: both now
    ask ``api._reads_keywords``. Told False, neither reads the broken MSPROF_COMPARE_CONFIG before loading: the
    single compare reaches the missing comparison path; the job (two Kineto ranks) reaches rank 0's compare, whose
    error is the job's all the same (a ``ConfigError``, named without a rank)."""
    import msprof_compare
    from msprof_compare import api

    bad = _bad_keyword_file(tmp_path, monkeypatch)
    asked: list[bool] = []
    real = api._reads_keywords
    monkeypatch.setattr(api, "_reads_keywords", lambda *a: asked.append(real(*a)) or False)
    with pytest.raises(ProfileError) as info:
        compare(str(KINETO), str(tmp_path / "absent"), enable_communication_compare=True)
    assert info.value.path == str(tmp_path / "absent") and asked == [True]
    job = samples / "hta/tests/data/trace_filter"  # Kineto ranks 0 and 1
    asked.clear()
    with caplog.at_level(logging.INFO, logger="msprof-analyze"), pytest.raises(ProfileError) as info:
        list(msprof_compare.compare_ranks(str(job), str(job), enable_communication_compare=True))
    assert info.value.path == str(bad) and info.value.rank is None and asked[:2] == [True, True]
    assert not str(info.value).startswith("rank ") and any(m.startswith("rank 0: comparing") for m in caplog.messages)

def test_step_refusal_waits_for_a_refused_base_path(tmp_path):
    """A step on GPU data is refused before loading, looking at the sides in loading order: a base the loader
    refuses (a missing path) ends the look, so its error comes first even when the comparison is Kineto."""
    absent = tmp_path / "absent"
    with pytest.raises(ProfileError) as info:
        compare(str(absent), str(KINETO), enable_api_compare=True, base_step=1, comparison_step=1)
    assert info.value.path == str(absent)


def test_step_refusal_before_a_missing_comparison_path(tmp_path):
    """The one exception of the refusal order (api._refuse_gpu_step): a Kineto base with a step is refused
    before the missing comparison path is looked at."""
    with pytest.raises(UsageError) as info:
        compare(str(KINETO), str(tmp_path / "absent"), enable_api_compare=True, base_step=1, comparison_step=1)
    assert str(info.value).startswith(f"{KINETO}: {GPU_STEP_MESSAGE} (")


def test_one_gpu_side_with_a_step_is_refused_after_loading(tmp_path):
    """A Kineto comparison whose JSON starts after 4 KiB of blanks is known as GPU data only once loaded; a
    step is refused then even though the base is NPU data (either side being GPU data is enough)."""
    padded = tmp_path / "padded.pt.trace.json"
    padded.write_bytes(b" " * 5000 + KINETO.read_bytes())
    with pytest.raises(UsageError) as info:
        compare(str(NPU_DIR), str(padded), enable_api_compare=True, base_step=1, comparison_step=1)
    assert str(info.value).startswith(f"{padded}: {GPU_STEP_MESSAGE} (")  # the GPU side is named


@pytest.mark.parametrize("flag", ["enable_api_compare", "enable_profiling_compare"])
def test_absent_step_refused_whichever_of_these_comparisons_runs(flag, caplog):
    """A step the NPU data does not hold is refused before any comparator runs (no "Start to compare" line),
    whether the run asks for the API statistics alone or the time breakdown alone (reference-1 §1.4). The
    excerpt's trace_view.json holds no ProfilerStep# event (grep finds none); its kernel_details.csv gives its 20
    kernels Step Id 50 (cut -d, -f1 | uniq), which the refusal names (left69c)."""
    with caplog.at_level(logging.INFO, logger="msprof-analyze"), pytest.raises(UsageError) as info:
        compare(str(NPU_DIR), str(NPU_DIR), **{flag: True}, base_step=999, comparison_step=999)
    # named by the file the steps are read from (tests/test_steps.py::test_step_errors_name_the_file_the_steps_...)
    assert str(info.value) == (f"{NPU_DIR / 'ASCEND_PROFILER_OUTPUT' / 'trace_view.json'}: Invalid step id: 999: "
                               "the profile has no ProfilerStep# markers, so no step can be chosen; its "
                               "kernel_details.csv numbers kernels by step (50), but a step's range is that of its "
                               "ProfilerStep# marker, so the step options do not apply to it (both sides: run "
                               "without base_step / comparison_step)")
    assert not [m for m in caplog.messages if m.startswith("Start to compare")]


def test_comparisons_without_rows_leave_no_sheet(tmp_path):
    """KernelCompare on GPU data has no row (the kernel table is Ascend's kernel_details.csv): the result holds
    no sheet at all, not an empty KernelCompare nor an empty Summary, and to_excel writes nothing."""
    res = compare(str(KINETO), str(KINETO), enable_kernel_compare=True)
    assert res.sheet_names == []
    assert res.to_excel(str(tmp_path)) == "" and list(tmp_path.iterdir()) == []


def test_kernel_compare_reads_off_in_the_options_where_a_side_is_no_npu_data(tmp_path, caplog):
    """The result's options are those the run applied: KernelCompare reads Ascend's kernel tables, so with a GPU
    side the kernel comparison never runs (its notice says so) and ``enable_kernel_compare`` and
    ``use_kernel_type`` read false in ``result.options`` and the JSON report's ``options``; they read true there,
    the default run's included, as if it had run and found no kernel. The flag is still accepted, with its
    warning; the options that drive the run (its notices' levels) are the given ones, and an NPU pair keeps it."""
    from msprof_compare.compare.kernels import GPU_MESSAGE

    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        by_default = compare(str(KINETO), str(KINETO))
    said = f"{GPU_MESSAGE} (both sides are GPU traces)"
    assert [r.levelname for r in caplog.records if r.getMessage() == said] == ["INFO"]  # as not asked for
    on = ("enable_profiling_compare", "enable_operator_compare", "enable_memory_compare",
          "enable_communication_compare", "enable_api_compare")
    assert all(getattr(by_default.options, k) for k in on)
    assert (by_default.options.enable_kernel_compare, by_default.options.use_kernel_type) == (False, False)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="msprof-analyze"):
        asked = compare(str(KINETO), str(NPU_DIR), enable_kernel_compare=True, use_kernel_type=True)
    # the API's words for the flags, as every hint of a compare() call gives them
    said = (f"{GPU_MESSAGE} (the base side is a GPU trace; enable_profiling_compare=True, "
            "enable_operator_compare=True, enable_memory_compare=True, enable_communication_compare=True, "
            "enable_api_compare=True take GPU traces)")
    assert [r.levelname for r in caplog.records if r.getMessage() == said] == ["WARNING"]
    assert (asked.options.enable_kernel_compare, asked.options.use_kernel_type) == (False, False)
    assert asked.slim().options == asked.options
    doc = json.loads(asked.to_json(str(tmp_path / "r.json")) and (tmp_path / "r.json").read_text())
    assert (doc["options"]["enable_kernel_compare"], doc["options"]["use_kernel_type"]) == (False, False)
    npu = compare(str(NPU_DIR), str(NPU_DIR), enable_kernel_compare=True)
    assert npu.options.enable_kernel_compare and npu.sheet_names == ["KernelCompare"]


def test_gate_without_a_kernel_answers_1(tmp_path):
    """A trace whose device work is memsets only loads (it has device activity) but has no E2E time: the gate of
    a run made without the breakdown answers 1 ("cannot judge"), not 3, with the breakdown's error, and so does its
    slim copy, made without the tables that error came from. Synthetic
    edit of the Timesformer excerpt: its 62 kernels dropped, its 13 gpu_memset events kept."""
    doc = json.loads(KINETO.read_text())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "kernel"]
    assert sum(e.get("cat") == "gpu_memset" for e in doc["traceEvents"]) == 13
    trace = tmp_path / "memsets.pt.trace.json"
    trace.write_text(json.dumps(doc))
    res = compare(str(trace), str(trace), enable_api_compare=True)
    code, message = res.regression_gate(5)
    assert code == 1
    assert message.startswith(f"error: {trace}: no GPU kernels found in the trace")
    assert pickle.loads(pickle.dumps(res.slim())).regression_gate(5) == (code, message)  # the error slim() kept


@pytest.mark.skipif(os.name == "nt", reason="file names of undecodable bytes are a POSIX matter")
def test_undecodable_path_is_shown_escaped(tmp_path, caplog):
    """A path whose bytes are not UTF-8 is shown with ``\\xNN`` escapes in the result's profiles (the sheets'
    headers and the JSON read them), as a report can hold it."""
    raw = os.path.join(os.fsencode(tmp_path), b"tr\xffce.pt.trace.json")
    with open(raw, "wb") as fh:
        fh.write(KINETO.read_bytes())
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        res = compare(raw, raw, enable_api_compare=True)
    want = f"{tmp_path}/tr\\xffce.pt.trace.json"   # the byte 0xff written as the four characters \xff
    assert res.base.path == res.comparison.path == want
    assert f"same input ({want})" in caplog.text


def test_a_path_of_a_str_subclass_is_kept_as_plain_text():
    """A path read from a DataFrame is NumPy's ``np.str_``: it was kept as one, so the result's ``repr`` showed
    ``Profile(path=np.str_('...'))`` for that side alone. Found by fuzzing the API's paths."""
    import numpy as np
    res = compare(np.str_(KINETO), str(KINETO), enable_api_compare=True)
    assert type(res.base.path) is str and res.base.path == res.comparison.path == str(KINETO)
    assert "np.str_" not in repr(res)


def test_load_warnings_are_logged(tmp_path, caplog):
    """What the loader notes about an input reaches the log, once, before the comparison. Synthetic edit of the
    Timesformer excerpt: its first kernel's args.stream (7) written as the text "abc". (The excerpt's window also
    leaves 54 kernels without their launch flow: a validity check beside the operator sheets, which this API-only
    run does not build, says that, no log line of the op tree.)"""
    doc = json.loads(KINETO.read_text())
    first = next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")
    assert first["args"]["stream"] == 7
    first["args"]["stream"] = "abc"
    trace = tmp_path / "odd_stream.pt.trace.json"
    trace.write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(trace), str(KINETO), enable_api_compare=True)
    assert caplog.messages == [f"{trace}: 1 kernel stream id(s) are not integers within int64 (the first: 'abc'); "
                               "those kernels read as on no stream (base side)"]


def test_sheet_names_are_exact():
    """result.sheet() takes a sheet's name as the workbook writes it: another case is no sheet of the result."""
    res = compare(str(KINETO), str(NPU_DIR), enable_api_compare=True)
    assert res.sheet_names == ["ApiCompare"]
    assert len(res.sheet("ApiCompare"))
    with pytest.raises(KeyError):
        res.sheet("apicompare")


def test_compares_in_threads_each_log_their_notices(caplog: pytest.LogCaptureFixture) -> None:
    """Each compare says a warning once (a self-compare would say each side's twice) through a filter on the
    shared logger. That filter judged the records of every thread: a compare running in one thread dropped the
    notices another thread's compare logged in the same words, so in a thread pool over ranks only the first
    pair got its warnings. Here the main thread stands for a compare that has said them; the worker's compare
    of the same input must still log every one of its own."""
    import threading

    from msprof_compare.logs import LOGGER_NAME, said_once

    def notices() -> list[str]:
        return [r.getMessage() for r in caplog.records
                if r.levelno >= logging.WARNING and r.thread == threading.get_ident()]

    with caplog.at_level(logging.WARNING, logger=LOGGER_NAME):
        compare(str(NPU_DIR), str(NPU_DIR))
        alone = notices()
        assert any("are the same input" in m for m in alone), alone
        caplog.clear()
        got: list[str] = []
        with said_once():
            for message in alone:
                logging.getLogger(LOGGER_NAME).warning(message)
            worker = threading.Thread(target=lambda: (compare(str(NPU_DIR), str(NPU_DIR)), got.extend(notices())))
            worker.start()
            worker.join()
    assert got == alone


def test_operator_run_of_a_trace_without_kernels_warns_once_per_side(tmp_path, caplog):
    """An operator-only run (no time breakdown, whose error would say it) of a trace whose kernels were lost,
    its memcpys kept, wrote operator device times of 0 ms on that side without a word (session-41 audit). Now
    one warning per side, with the breakdown's hint. Synthetic edit of the AlexNet H200 excerpt: its kernel
    events dropped, its 21 gpu_memcpy (487.907 us, from the raw file) and 7 gpu_memset kept; the operator rows'
    base device time is then the memcpys' time exactly."""
    import gzip
    from decimal import Decimal

    alexnet = DATA / "kineto" / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
    doc = json.loads(gzip.decompress(alexnet.read_bytes()), parse_float=Decimal)
    copies = [e for e in doc["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    assert (len(copies), sum(e["dur"] for e in copies)) == (21, Decimal("487.907"))
    launches = sum(1 for e in doc["traceEvents"]
                   if e.get("cat") in ("cuda_runtime", "cuda_driver") and "Launch" in e["name"])
    assert launches == 162  # 134 cudaLaunchKernel, 26 cudaLaunchKernelExC, 2 cuLaunchKernel
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "kernel"]
    trace = tmp_path / "no_kernels.pt.trace.json"
    trace.write_text(json.dumps(doc, default=str))
    want = (f"{trace}: no GPU kernels found in the trace, so its operators' device times in the operator and module "
            "sheets hold its memcpys at most (0 ms for every other operator): it holds "
            f"{launches} kernel launch call(s) and 28 memcpy / memset event(s): the CUDA activity was recorded, "
            "but its kernel events were lost or cut from the file; record it again")
    for sides, count in (((trace, alexnet), 1), ((alexnet, trace), 1), ((trace, trace), 1), ((alexnet, alexnet), 0)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
            res = compare(str(sides[0]), str(sides[1]), enable_operator_compare=True, disable_module=True)
        assert caplog.messages.count(want) == count, sides
    stat = compare(str(trace), str(alexnet), enable_operator_compare=True, disable_module=True).sheet(
        "OperatorCompareStatistic")
    assert round(float(stat.iloc[:, 2].sum()) * 1e6) == 487_907  # ms to ns
    assert res.sheet_names  # the full pair still compares


def test_the_package_namespace_shows_the_api():
    """``dir(msprof_compare)`` (and a shell's completion) names what the API offers, not the package's imports
    (``os``, ``sys``, ``Iterable``, ``TYPE_CHECKING`` were listed): its public names are the API the README names
    as ``msprof_compare.NAME`` (its sub-modules aside) with the classes its functions return and raise, each one
    reachable, and a star import gives the same."""
    import pydoc
    import re

    import msprof_compare

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"msprof_compare\.([A-Za-z_]+)", readme)) - {"api", "errors", "report"}
    expected = named | {"CompareResult", "ProfileError", "UsageError"}
    public = {n for n in dir(msprof_compare) if not n.startswith("_")}
    assert public == expected == set(msprof_compare.__all__)
    assert "__version__" in dir(msprof_compare) and {"os", "sys", "Iterable", "TYPE_CHECKING"}.isdisjoint(
        dir(msprof_compare))
    assert all(getattr(msprof_compare, n) is not None for n in public)
    star: dict = {}
    exec("from msprof_compare import *", star)
    assert set(star) - {"__builtins__"} == expected
    # help() documents the result class too (it was left out while the API was not loaded yet)
    assert "class CompareResult" in pydoc.render_doc(msprof_compare, renderer=pydoc.plaintext)
    # hidden from dir(), not removed: a script that reached an import through the package still runs
    assert msprof_compare.os is os
