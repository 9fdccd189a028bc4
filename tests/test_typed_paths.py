"""Messages name an input's files as the user typed the input (joined with the file's path inside a typed folder),
never by the absolute path the loaders read: the user copies the path from the line back into a command."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from msprof_compare import cli, compare
from msprof_compare.errors import ProfileError
from msprof_compare.loaders.paths import TypedPaths

DATA = Path(__file__).parent / "data"
NPU = DATA / "npu" / "rank0_ascend_pt"  # a real torch_npu text export excerpt (tests/data/npu/README.md)
L1_DB = DATA / "db" / "l1" / "ascend_pytorch_profiler_0.db"


def _analyze(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", *args])
    err = capsys.readouterr().err
    kept = [line for line in err.splitlines(keepends=True) if "Do not run this tool as root" not in line]
    return info.value.code, "".join(kept)


def test_typed_paths_rewrite_inputs_and_their_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    typed = TypedPaths("run/", "=other", "../up/b.json")
    here = str(tmp_path)
    assert typed.text(f"{here}/run") == "run/"
    assert typed.text(f"{here}/run/ASCEND_PROFILER_OUTPUT/trace_view.json: bad") == \
        "run/ASCEND_PROFILER_OUTPUT/trace_view.json: bad"
    assert typed.text(f"No E2E time in {here}/other/x.csv, so") == "No E2E time in other/x.csv, so"
    assert typed.text(f"{os.path.dirname(here)}/up/b.json") == "../up/b.json"
    # a sibling whose name starts like an input's is no file of it
    assert typed.text(f"{here}/run2/x.json: bad") == f"{here}/run2/x.json: bad"
    assert typed.text(f"{here}/run.json") == f"{here}/run.json"
    assert typed.text("=other") == "other"  # `-d=other` gives click "=other", read as `other`


def test_a_longer_path_ending_like_an_input_is_not_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-d run` in /data: /mnt/data/run/x.json (another mount of the same tree, a path recorded in a profile) was
    rewritten to "/mntrun/x.json", a path that names nothing; only a path that starts where the input's does is."""
    monkeypatch.chdir(tmp_path)
    typed = TypedPaths("run", "other")
    longer = f"/mnt{tmp_path}/run/x.json"
    assert typed.text(f"{longer}: bad") == f"{longer}: bad"
    assert typed.text(f"in ({tmp_path}/run/x.json), see '{tmp_path}/run'") == "in (run/x.json), see 'run'"


def test_a_name_that_is_not_utf8_is_named_as_typed_in_its_escapes(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A message shows a name that is not UTF-8 with \\xNN escapes (``textsafe.display``): its absolute path in
    those escapes is named as typed, in them too, as the raw name is (the same-input warning named the absolute
    path). No file is made: only the text is rewritten."""
    monkeypatch.chdir(tmp_path)
    typed = TypedPaths(os.fsdecode(b"bad\xff/run"), "other")
    shown = f"{tmp_path}/bad\\xff/run"  # the absolute path as shown
    assert typed.text(f"same input ({shown}): x") == "same input (bad\\xff/run): x"
    assert typed.text(f"{shown}/trace_view.json: bad") == "bad\\xff/run/trace_view.json: bad"
    raw = os.fsdecode(os.fsencode(tmp_path) + b"/bad\xff/run")
    # the raw name, as before (compared as bytes: a failure's report holding lone surrogates breaks pytest-xdist)
    assert os.fsencode(typed.text(f"{raw}: x")) == b"bad\xff/run: x"


def test_a_leading_equals_is_not_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare("=missing") reads ``missing`` (as the CLI's ``-d =missing``) but said "=missing: no such file"."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProfileError) as err:
        compare("=missing", str(NPU))
    assert str(err.value) == "missing: no such file or directory (base side)"


def test_not_collected_error_names_the_folder_as_typed(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """It named the absolute path, where "directory holds 2 traces" named the typed one."""
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    code, err = _analyze(capsys, "-d", "empty/", "-bp", str(NPU), "-o", "out")
    assert code == 1
    assert err == ("error: empty/: The data is not collected by PyTorch or Mindspore mode or the data is not parsed: "
                   "no trace_view.json, profiler *.db or *.pt.trace.json found (comparison side)\n")


def test_a_broken_file_inside_a_typed_folder_is_named_under_it(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    shutil.copytree(NPU, run)
    (run / "ASCEND_PROFILER_OUTPUT" / "communication.json").write_text("{", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, err = _analyze(capsys, "-d", "run", "-bp", str(NPU), "-o", "out")
    assert code == 1
    assert err.startswith("error: run/ASCEND_PROFILER_OUTPUT/communication.json: "), err
    assert str(tmp_path) not in err and err.count("\n") == 1


def test_a_warning_names_a_file_inside_a_typed_folder_under_it(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    shutil.copytree(NPU, run)
    kd = run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = kd.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace(",11.26,", ",abc,", 1)  # one Duration(us) that is no number
    kd.write_text("".join(lines), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, err = _analyze(capsys, "-d", "./run/", "-bp", str(NPU), "-o", "out", "--enable_profiling_compare")
    assert code == 0
    assert "[WARNING] ./run/ASCEND_PROFILER_OUTPUT/kernel_details.csv: 1 Duration(us) value(s) are not numbers" in err
    assert str(tmp_path) not in err.replace(f"{tmp_path}/out", "")  # the written workbook's line stays absolute


def test_a_step_error_names_the_database_under_the_typed_folder(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "db").mkdir()
    shutil.copy(L1_DB, tmp_path / "db" / L1_DB.name)
    monkeypatch.chdir(tmp_path)
    code, err = _analyze(capsys, "-d", "db/", "-bp", "db", "--base_step", "99", "--comparison_step", "99")
    assert code == 2
    assert err.startswith("error: db/ascend_pytorch_profiler_0.db: Invalid Step Id: 99"), err


KINETO = DATA / "kineto" / "mi300_rccl_generic_excerpt.pt.trace.json"  # real trace excerpt (tests/data/kineto)


def _parsed_only(folder: Path) -> None:
    (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copy(NPU / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", folder / "ASCEND_PROFILER_OUTPUT")


def _two_dbs(folder: Path) -> None:
    (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    for rank in (0, 1):
        shutil.copy(L1_DB, folder / "ASCEND_PROFILER_OUTPUT" / f"ascend_pytorch_profiler_{rank}.db")


def _lower_case_output(folder: Path) -> None:
    shutil.copytree(NPU / "ASCEND_PROFILER_OUTPUT", folder / "ascend_profiler_output")


def _broken_trace_link(folder: Path) -> None:
    shutil.copytree(NPU, folder)
    (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").symlink_to(folder / "nowhere.json")


def _one_truncated_trace(folder: Path) -> None:
    folder.mkdir()
    (folder / "x.pt.trace.json").write_bytes(KINETO.read_bytes()[:3000])


@pytest.mark.parametrize(("make", "typed", "named"), [
    (_parsed_only, "run", "run/ASCEND_PROFILER_OUTPUT: holds the parsed kernel_details.csv"),
    (_two_dbs, "run/", "run/ASCEND_PROFILER_OUTPUT: holds 2 profiler databases"),
    (_lower_case_output, "./run", "./run: holds ascend_profiler_output, not ASCEND_PROFILER_OUTPUT"),
    (_broken_trace_link, "run/", "run/ASCEND_PROFILER_OUTPUT/trace_view.json: is a broken symbolic link"),
    (_one_truncated_trace, "run", "run/x.pt.trace.json: truncated JSON"),
])
def test_detection_errors_name_the_typed_folder(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, make, typed: str, named: str) -> None:
    """Each of these named the absolute path (found by a user walk: 11 of 12 refusals did, only "directory holds 2
    traces" named the folder as typed)."""
    make(tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    code, err = _analyze(capsys, "-d", typed, "-bp", str(NPU), "-o", "out")
    assert code == 1 and err.startswith(f"error: {named}") and err.count("\n") == 1, err


def test_out_of_memory_names_the_input_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The out-of-memory line names the input being loaded: a loader's OutOfMemory carries the file it read."""
    from msprof_compare import api
    from msprof_compare.errors import OutOfMemory

    monkeypatch.chdir(tmp_path)
    err = OutOfMemory(str(tmp_path / "run" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"), "loading it")
    api._retype(err, TypedPaths("run/", "other").text)
    assert (err.path, str(err)) == ("run/ASCEND_PROFILER_OUTPUT/trace_view.json",
                                    "run/ASCEND_PROFILER_OUTPUT/trace_view.json: out of memory while loading it")


def test_a_compare_ending_in_another_thread_skips_no_filter_of_this_one() -> None:
    """Compares in threads share the logger's filter list: one whose compare ended while this thread's record was
    being filtered removed its filter from the list being walked, which shifted this compare's filter past the walk,
    so that the record kept its absolute path. Deterministic here: a filter between them ends the other compare."""
    import logging

    from msprof_compare.logs import LOGGER_NAME, paths_as_typed, said_once

    logger = logging.getLogger(LOGGER_NAME)
    other = said_once()  # the other thread's compare, begun first
    other.__enter__()

    class EndsTheOther(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            other.__exit__(None, None, None)
            return True

    ends = EndsTheOther()
    logger.addFilter(ends)
    try:
        with paths_as_typed(lambda text: text.replace("/abs/run/", "run/")):
            record = logger.makeRecord(LOGGER_NAME, logging.WARNING, __file__, 1, "/abs/run/x.csv: bad", (), None)
            logger.filter(record)
    finally:
        logger.removeFilter(ends)
    assert record.getMessage() == "run/x.csv: bad"


def test_another_threads_compare_names_none_of_this_ones_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compares run in threads (a pool over ranks) share the logger: a compare that typed `./run` renames the records
    of its own thread only, not those of a compare beside it that typed the same folder by its absolute path."""
    import logging
    import threading

    from msprof_compare.logs import LOGGER_NAME, paths_as_typed

    monkeypatch.chdir(tmp_path)
    entered, done = threading.Event(), threading.Event()

    def other() -> None:
        with paths_as_typed(TypedPaths("./run").text):
            entered.set()
            done.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert entered.wait(10)
        logger = logging.getLogger(LOGGER_NAME)
        text = f"{tmp_path}/run/ASCEND_PROFILER_OUTPUT/kernel_details.csv: bad"
        with paths_as_typed(TypedPaths(f"{tmp_path}/run").text):
            record = logger.makeRecord(LOGGER_NAME, logging.WARNING, __file__, 1, text, (), None)
            logger.filter(record)
    finally:
        done.set()
        thread.join()
    assert record.getMessage() == text


def test_a_compare_that_fails_leaves_no_renaming_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compare that raises (an empty folder) removes its filters: one left on the shared logger would go on
    renaming this thread's later records by that compare's inputs, and each failed compare would add one more."""
    import logging

    from msprof_compare.logs import LOGGER_NAME

    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path)
    logger = logging.getLogger(LOGGER_NAME)
    before = list(logger.filters)
    with pytest.raises(ProfileError, match="^run: The data is not collected"):
        compare("run", str(NPU))
    assert logger.filters == before
    text = f"{tmp_path}/run/x.csv: bad"
    record = logger.makeRecord(LOGGER_NAME, logging.WARNING, __file__, 1, text, (), None)
    logger.filter(record)
    assert record.getMessage() == text


def test_a_path_after_an_equals_and_an_error_hint_are_named_as_typed(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A path right after "=" (``--path=/abs/run/x.json`` in a log line) starts a path, and an error's hint is
    renamed as its message is (``api._retype``): mutations dropping either passed every test."""
    from msprof_compare.api import _retype

    monkeypatch.chdir(tmp_path)
    typed = TypedPaths("run")
    assert typed.text(f"--path={tmp_path}/run/x.json") == "--path=run/x.json"
    exc = ProfileError(f"{tmp_path}/run", "no trace", hint=f"pass {tmp_path}/run/inner instead")
    _retype(exc, typed.text)
    assert (exc.path, exc.hint) == ("run", "pass run/inner instead")
    assert str(exc).startswith("run: no trace")


@pytest.mark.parametrize("name", ["ASCEND_PROFILER_OUTPUT/kernel_details.csv",  # refused by its suffix
                                  "ASCEND_PROFILER_OUTPUT/communication.json",  # decoded: a JSON without traceEvents
                                  "profiler_info_0.json"])  # in the export's own folder
def test_a_file_of_an_export_names_its_profiling_directory_as_typed(name: str, capsys: pytest.CaptureFixture,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of the NPU excerpt passed by mistake, typed relative to the current directory: the hint names the
    profiling directory to pass the way the file was typed, as every other path of the line. It named that
    directory's absolute path, the one path of the line the user had not typed (README: only the written reports
    are named by their absolute paths)."""
    shutil.copytree(NPU, tmp_path / "runs" / "rank0_ascend_pt")
    monkeypatch.chdir(tmp_path)
    given = f"runs/rank0_ascend_pt/{name}"
    code, err = _analyze(capsys, "-d", given, "-bp", str(NPU), "-o", "out")
    assert code == 1
    assert err.endswith("(comparison side: a file of an NPU profiling export: pass the profiling directory it "
                        "belongs to, "
                        "runs/rank0_ascend_pt)\n"), err
    assert err.startswith(f"error: {given}: ") and str(tmp_path) not in err
    with pytest.raises(ProfileError) as info:
        compare(str(NPU), given)
    assert str(info.value).endswith("pass the profiling directory it belongs to, runs/rank0_ascend_pt)")
    assert not (tmp_path / "out").exists()


def test_a_file_typed_inside_its_export_keeps_the_absolute_directory(capsys: pytest.CaptureFixture, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Typed from inside the profiling directory, the file's path holds no name of that directory ("." would name
    it): the hint keeps the absolute path, which names it whatever the current directory."""
    export = tmp_path / "rank0_ascend_pt"
    shutil.copytree(NPU, export)
    monkeypatch.chdir(export)
    code, err = _analyze(capsys, "-d", "ASCEND_PROFILER_OUTPUT/kernel_details.csv", "-bp", str(NPU), "-o", "out")
    assert code == 1
    assert err.endswith(f"pass the profiling directory it belongs to, {export})\n"), err


def test_a_file_of_an_export_typed_oddly_names_its_directory_as_typed_or_absolute(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch
                                                                                   ) -> None:
    """The export directory named by the hint for a file passed by mistake (``_typed_export_dir``) is the typed
    path's leading part only where the typed path ends in the file's path inside the export; otherwise (a doubled
    separator, typed from inside the export) it keeps the absolute path, which names the right directory where the
    leading part would name ASCEND_PROFILER_OUTPUT or ".". A leading "=" is no part of the typed name, and an
    input typed as the export folder itself keeps its own name. NPU excerpt copied under ``runs``."""
    export = tmp_path / "runs" / "rank0_ascend_pt"
    shutil.copytree(NPU, export)
    monkeypatch.chdir(tmp_path)
    csv = "ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    hint = f"pass the profiling directory it belongs to, {export})"
    cases = {
        (f"=runs/rank0_ascend_pt/{csv}",): "runs/rank0_ascend_pt",
        ("runs/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT//kernel_details.csv",): str(export),
        ("runs/rank0_ascend_pt", f"./runs/rank0_ascend_pt/{csv}"): "runs/rank0_ascend_pt",
        (f"./runs/rank0_ascend_pt/{csv}", "runs/rank0_ascend_pt"): "runs/rank0_ascend_pt",
        (str(NPU), str(Path(f"./runs/rank0_ascend_pt/{csv}"))): "runs/rank0_ascend_pt",
    }
    for given, named in cases.items():
        assert TypedPaths(*given).text(hint) == hint.replace(str(export), named), given
    monkeypatch.chdir(export)
    assert TypedPaths(f"./{csv}").text(hint) == hint
    # the API with a pathlib.Path: typed relative from another directory
    monkeypatch.chdir(tmp_path / "runs")
    with pytest.raises(ProfileError) as info:
        compare(NPU, Path(f"../runs/rank0_ascend_pt/{csv}"))
    assert str(info.value).endswith("pass the profiling directory it belongs to, ../runs/rank0_ascend_pt)")


@pytest.mark.parametrize(("typed", "said"), [
    ("b.db/", "b.db/: is a file, not a directory: a path ending in '/' names a folder (base side: pass the file "
              "without the "
              "'/': b.db)"),
    ("b.db//", "b.db//: is a file, not a directory: a path ending in '/' names a folder (base side: pass the file "
               "without the "
               "'/': b.db)"),
    ("b.db/.", "b.db/.: not a directory: the path goes on past a file, as through a folder (base side)"),
    ("b.db/..", "b.db/..: not a directory: the path goes on past a file, as through a folder (base side)"),
    ("b.db/x", "b.db/x: not a directory: the path goes on past a file, as through a folder (base side)"),
])
def test_a_path_going_on_past_a_file_is_refused(typed: str, said: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """``-bp run.json.gz/`` read the file: the absolute path the loaders read drops a trailing '/' (and folds "." and
    "..": ``b.db/..`` read the folder holding it), where the system refuses such a path (ENOTDIR: ``cat b.db/``
    fails) and a trailing '/' means a folder was meant. Refused as the system does, naming the path as typed (it
    was "b.db//" for "b.db/": the typed input was taken for a folder holding the file), on every face; a folder
    with a trailing '/' reads as before. Found by fuzzing the command line."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(L1_DB, tmp_path / "b.db")  # refused before its name is read: any file
    code, err = _analyze(capsys, "-bp", typed, "-d", str(NPU))
    assert code == 1
    assert [line for line in err.splitlines() if line.startswith("error:")] == [f"error: {said}"]
    with pytest.raises(ProfileError) as info:
        compare(typed, str(NPU))
    assert str(info.value) == said
    with pytest.raises(ProfileError) as info:
        compare(f"={typed}", str(NPU))  # `-bp=b.db/`: named without the "=", as any input
    assert str(info.value) == said
    assert cli.script_main([typed, str(NPU)]) == 1
    assert f"error: {said}" in capsys.readouterr().err


def test_a_folder_with_a_trailing_slash_reads_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a file is refused so: a folder named with its '/' (as a shell completes it) is the folder."""
    monkeypatch.chdir(NPU.parent)
    assert compare(f"{NPU.name}/", f"{NPU.name}//", enable_profiling_compare=True).sheet_names
