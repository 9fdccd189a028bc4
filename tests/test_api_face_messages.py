"""Messages of ``compare()`` and of its result name the keyword arguments the caller passed (``force=True``,
``base_step``), not the CLI's flags (``--force``), which a notebook user never typed; the CLI keeps its texts."""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from cliutil import error_lines, run_inproc

from msprof_compare import api
from msprof_compare.api import compare, judge_regression
from msprof_compare.errors import ProfileError, UsageError
from msprof_compare.options import API_FACE, CLI_FACE, Options

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]
SMALL = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"
BERT_H100, BERT_MI300 = (REPO / "sample_data" / f"bert-small_{gpu}.json.gz" for gpu in ("h100", "mi300"))
L1_TEXT = "msinsight/test/data/pytorch/text/level1/rank0_ascend_pt"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize(("cli", "api_text"), [
    ("add --force to accept it", "add force=True to accept it"),
    ("leave out --base_step and --comparison_step to compare", "leave out base_step and comparison_step to compare"),
    ("(run without --base_step / --comparison_step)", "(run without base_step / comparison_step)"),
    ("give a percentage, e.g. --fail_on_regression 5.", "give a percentage, e.g. fail_on_regression=5."),
    ("--gpu_flow_cat 'a c' is ignored", "gpu_flow_cat='a c' is ignored"),
    ("pass --max_kernel_num 10 without --disable_details", "pass max_kernel_num=10 without disable_details=True"),
    ("or --force)", "or force=True)"),
    # not a flag: a quoted name, a path, a longer word, an environment variable, a percent the API takes as text
    ("--op_name_map: '--force' names", "op_name_map: '--force' names"),
    ("/runs/a--force/trace.json", "/runs/a--force/trace.json"),
    ("--forced --base_steps", "--forced --base_steps"),
    ("raise MSPROF_COMPARE_MAX_TRACE_BYTES", "raise MSPROF_COMPARE_MAX_TRACE_BYTES"),
    # after a parenthesis; a number that is no whole value (a percent, a version) is not consumed; an on/off
    # flag keeps the text after it
    ("(--force)", "(force=True)"),
    ("--fail_on_regression 5%", "fail_on_regression 5%"),
    ("--max_kernel_num 1.2.3", "max_kernel_num 1.2.3"),
    ("--debug 2 lines", "debug=True 2 lines"),
])
def test_api_face_rewrites_flags_only(cli: str, api_text: str) -> None:
    assert API_FACE.words(cli) == api_text
    assert CLI_FACE.words(cli) == cli


def test_symbolic_link_refusal_names_force_as_typed_by_each_face(capsys: pytest.CaptureFixture,
                                                                  tmp_path: Path) -> None:
    """A symbolic link to the MI300 excerpt: the API's refusal says ``force=True``, which then reads it; the
    CLI's still says --force."""
    link = tmp_path / "link.pt.trace.json"
    link.symlink_to(SMALL)
    with pytest.raises(ProfileError) as err:
        compare(str(link), str(SMALL), enable_api_compare=True)
    assert str(err.value) == (f"{link}: is a symbolic link; refusing to follow it (base side: add force=True to "
                              "accept it)")
    assert compare(str(link), str(SMALL), enable_api_compare=True, force=True).sheet_names
    code, _, err_text = run_inproc(capsys, "-d", str(SMALL), "-bp", str(link), "-o", str(tmp_path / "never"))
    assert code == 1 and error_lines(err_text) == [
        f"error: {link}: is a symbolic link; refusing to follow it (base side: add --force to accept it)"]


def test_size_cap_hint_names_force_as_typed_by_each_face(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace over MSPROF_COMPARE_MAX_TRACE_BYTES (set below the excerpt's size): the variable keeps its name,
    --force becomes ``force=True`` for the API alone."""
    monkeypatch.setenv("MSPROF_COMPARE_MAX_TRACE_BYTES", str(SMALL.stat().st_size - 1))
    with pytest.raises(ProfileError) as err:
        compare(str(SMALL), str(SMALL), enable_api_compare=True)
    assert err.value.hint == "add force=True to read it anyway, or raise the limit with MSPROF_COMPARE_MAX_TRACE_BYTES"
    code, _, err_text = run_inproc(capsys, "-d", str(SMALL), "-bp", str(SMALL), "-o", str(tmp_path / "never"))
    assert code == 1 and error_lines(err_text)[0].endswith(
        "(both sides: add --force to read it anyway, or raise the limit with MSPROF_COMPARE_MAX_TRACE_BYTES)")


def test_gpu_step_refusal_names_the_keyword_arguments(samples: Path) -> None:
    """A GPU trace (AlexNet on H200) against an NPU text export with steps: the refusal tells the API's caller to
    leave out base_step and comparison_step (the CLI's text: test_messages.py)."""
    gpu = str(next((DATA / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")))
    with pytest.raises(UsageError) as err:
        compare(gpu, str(samples / L1_TEXT), base_step=50, comparison_step=50)
    assert str(err.value) == (
        f"{gpu}: step id is invalid in GPU data, please use this when comparing between NPU datas. (base side: a "
        "GPU trace, where the step options do not apply: leave out base_step and comparison_step to compare the "
        "whole profiles)")


def test_op_name_map_warnings_name_the_keyword_argument(caplog: pytest.LogCaptureFixture, samples: Path) -> None:
    """The bundled BERT pair with a key no op or module has ('aten::lineer'), and AlexNet against the NPU export
    with a swap of the two dropout backward ops: both warnings name ``op_name_map``, as the caller wrote it."""
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(BERT_H100, BERT_MI300, enable_operator_compare=True,
                op_name_map={"cudaDeviceSynchronize": "hipDeviceSynchronize", "aten::lineer": "aten::mm"})
    assert [w for w in _warnings(caplog) if "op_name_map" in w] == [
        "op_name_map: 'aten::lineer' names no operator of either side and appears in no module name, so it renames "
        "nothing (names are case-sensitive: copy them from the OperatorCompare or ModuleCompare sheet)."]
    caplog.clear()
    gpu = str(next((DATA / "kineto").glob("alexnet_h200_rank0.*.pt.trace.json.gz")))
    a, b = (f"autograd::engine::evaluate_function: {n}DropoutBackward0" for n in ("Native", "Npu"))
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(gpu, str(samples / L1_TEXT), op_name_map={a: b, b: a}, enable_operator_compare=True)
    assert [w for w in _warnings(caplog) if "renames once" in w] == [
        f"op_name_map renames once, on both sides: {a!r} becomes {b!r} and {b!r} becomes {a!r}, so an op named "
        f"{a!r} on one side and {b!r} on the other still differ; give one entry per pair of names."]


def test_gpu_flow_cat_warning_names_the_keyword_argument(caplog: pytest.LogCaptureFixture, samples: Path) -> None:
    """gpu_flow_cat given for two NPU inputs: the warning names the keyword. (fail_on_regression="", whose warning
    this test read too, is refused now: ``test_cli_option_rules.py::test_an_empty_value_is_refused_on_every_face``.)"""
    npu = str(samples / L1_TEXT)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(npu, npu, gpu_flow_cat="ac2g", enable_api_compare=True)
    said = _warnings(caplog)
    assert [w for w in said if "gpu_flow_cat" in w] == [
        "gpu_flow_cat='ac2g' is ignored: it names the flow category of GPU traces, and both inputs are NPU data "
        "(their ops and kernels are linked by the profiler's own flows)."]
    assert not [w for w in said if "--" in w]


def test_regression_gate_without_e2e_names_the_method() -> None:
    """A result whose breakdown made no E2E row: the API's message names regression_gate(), which the caller
    called; the CLI's gate keeps --fail_on_regression."""
    import pandas as pd

    side = SimpleNamespace(path="x")
    result = SimpleNamespace(frames={"e2e": pd.DataFrame({"base_ns": [], "comparison_ns": []})}, base=side,
                             comparison=side, options=Options(), _verdicts={})  # a CompareResult's verdict cache
    assert judge_regression(result, 5.0, API_FACE) == (
        1, "error: regression_gate(): no E2E time to compare (the time breakdown produced no data)")
    assert judge_regression(result, 5.0, CLI_FACE) == (
        1, "error: --fail_on_regression: no E2E time to compare (the time breakdown produced no data)")


def test_empty_path_hint_names_the_argument() -> None:
    with pytest.raises(ProfileError) as err:
        compare(str(SMALL), "")
    assert err.value.hint == "the comparison path: the second argument of compare()"


@pytest.mark.parametrize(("method", "folder"), [("to_excel", "shared"), ("to_json", "out --max_kernel_num 10")])
def test_a_shared_output_folder_names_force_as_a_keyword(tmp_path: Path, method: str, folder: str) -> None:
    """An output folder every user may write, without the sticky bit: the result's refusal offers ``force=True``
    (the option compare() took), not --force, and names the folder as given, a flag-like name included."""
    shared = tmp_path / folder
    shared.mkdir()
    shared.chmod(0o777)
    result = compare(str(SMALL), str(SMALL), enable_api_compare=True)
    with pytest.raises(UsageError) as err:
        getattr(result, method)(shared)
    assert str(shared) in str(err.value) and str(err.value).endswith("(use a directory of your own, or force=True)")
    assert list(shared.iterdir()) == []


def test_the_rewrite_is_for_the_compares_thread_alone(caplog: pytest.LogCaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """While compare() runs, a line logged on another thread (a CLI run beside a notebook's compare, say) keeps
    its --force; the compare's own line names force=True."""
    log = logging.getLogger("msprof-analyze")
    real = api._same_input

    def same_input(*args: object) -> str:
        log.warning("own: add --force to accept it")
        other = threading.Thread(target=log.warning, args=("other: add --force to accept it",))
        other.start()
        other.join()
        return real(*args)

    monkeypatch.setattr(api, "_same_input", same_input)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"):
        compare(str(SMALL), str(BERT_H100), enable_api_compare=True)
    said = _warnings(caplog)
    assert "own: add force=True to accept it" in said and "other: add --force to accept it" in said


def test_a_path_holding_a_flag_keeps_its_name(tmp_path: Path) -> None:
    """An input in a folder named ``runs --force`` (a run labelled by its command line): the API's refusal read
    ``runs force=True/link.pt.trace.json``, no such path; the path keeps its name, the hint names force=True."""
    folder = tmp_path / "runs --force"
    folder.mkdir()
    link = folder / "link.pt.trace.json"
    link.symlink_to(SMALL)
    with pytest.raises(ProfileError) as err:
        compare(str(link), str(SMALL), enable_api_compare=True)
    assert str(err.value) == (f"{link}: is a symbolic link; refusing to follow it (base side: add force=True to "
                              "accept it)")


def test_a_file_beside_a_path_holding_a_flag_keeps_its_name(tmp_path: Path) -> None:
    """kernel_details.csv of the NPU excerpt, under ``runs --force``, given to compare(): the hint names the
    export's profiling directory, a path above the input, which keeps its name too."""
    export = tmp_path / "runs --force" / "rank0_ascend_pt"
    (export / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    given = export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    shutil.copyfile(DATA / "npu" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", given)
    with pytest.raises(ProfileError) as err:
        compare(str(given), str(SMALL))
    assert str(err.value) == (f"{given}: Invalid profiling path suffix: kernel_details.csv (base side: a file of an "
                              f"NPU profiling "
                              f"export: pass the profiling directory it belongs to, {export})")
